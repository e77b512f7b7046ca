/*
 * tests/unit/test_sim_mns.c - the sim backend with several memory nodes
 * (issue 11): each MN's own link, NIC, DMA engines, atomic unit and region;
 * per-MN counters (DMR_BE_CTL_MN_STATS) against the global ones; the fault
 * wrapper's unreachable MN other than MN 0; determinism; bad MN counts.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "models/model.h"
#include "helpers/be.h"
#include "helpers/suite.h"

static dmr_be_t *open_mns(const char *backend, const char *fault, uint32_t mns, uint32_t cns,
			  uint32_t workers)
{
	dmr_be_config_t cfg = {.backend = backend,
			       .fault = fault,
			       .mns = mns,
			       .cns = cns,
			       .workers = workers,
			       .mr_size = 16 << 20,
			       .profile = "cx6dx-100g"};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "open %s with %u MNs: %s", backend, mns, err.msg);
	return be;
}

static void mn_stats(dmr_be_t *be, dmr_be_mn_stats_t *out)
{
	dmr_err_t err;
	dmr_status_t st = dmr_be_control(be, DMR_BE_CTL_MN_STATS, out, &err);
	ck_assert_msg(st == DMR_OK, "MN_STATS: %s", err.msg);
}

/* A closed loop: worker w keeps `depth` WRs of `opcode` (`len` bytes;
 * atomics 8) in flight to MN target[w] at offsets of its own until it has
 * posted quota[w] (0: idle). Returns completed WRs per simulated second
 * between the (total / 10)-th completion and the last; every completion
 * must succeed and name its MN. times (NULL: none) gets worker 0's
 * completion times, ps, in order (quota[0] of them). */
static double closed_loop(dmr_be_t *be, uint32_t nworkers, const uint32_t *target,
			  const uint32_t *quota, uint8_t opcode, uint32_t len, uint32_t depth,
			  uint64_t *times)
{
	uint8_t *buf = calloc((size_t)nworkers * depth, 4096);
	uint32_t *posted = calloc(nworkers, sizeof(uint32_t));
	ck_assert(buf && posted);
	uint64_t total = 0, done = 0, n0 = 0;
	for (uint32_t w = 0; w < nworkers; w++)
		total += quota[w];
	uint64_t warm = total / 10, t_warm = 0, t_last = 0;
	for (uint32_t w = 0; w < nworkers; w++)
		for (uint32_t d = 0; d < depth && posted[w] < quota[w]; d++, posted[w]++) {
			uint32_t slot = w * depth + d;
			ck_assert_int_eq(dmr_be_post_one(be, w, target[w], opcode, slot,
							 buf + (size_t)slot * 4096,
							 (uint64_t)slot * 4096, len, 0, 1, NULL),
					 DMR_OK);
		}
	dmr_wc_t wc[64];
	int w;
	while (done < total && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wc, 64);
		for (int i = 0; i < n; i++) {
			ck_assert_int_eq(wc[i].status, DMR_WC_SUCCESS);
			ck_assert_uint_eq(wc[i].mn, target[w]);
			if (++done == warm)
				t_warm = dmr_test_sim_time(be);
			t_last = dmr_test_sim_time(be);
			if (times && w == 0)
				times[n0++] = dmr_be_now(be, 0);
			if (posted[w] < quota[w]) {
				uint32_t slot = (uint32_t)wc[i].wr_id;
				ck_assert_int_eq(dmr_be_post_one(be, (uint32_t)w, target[w], opcode,
								 slot, buf + (size_t)slot * 4096,
								 (uint64_t)slot * 4096, len, 0, 1,
								 NULL),
						 DMR_OK);
				posted[w]++;
			}
		}
	}
	free(buf);
	free(posted);
	ck_assert_uint_eq(done, total);
	return (double)(done - warm) / ((double)(t_last - t_warm) / 1e12);
}

/* 4 CNs x 16 workers, 64 B READs, 16 in flight per QP: all to MN 0, then
 * CNs 0 and 2 to MN 0 and CNs 1 and 3 to MN 1. The CN side (each CN's NIC
 * and links) stays below saturation in both runs, so the second run has
 * twice the MN resources and about twice the throughput. */
START_TEST(two_mns_saturated_separately_double_throughput)
{
	enum { CNS = 4, WK = 16, N = CNS * WK, PER = 4000, TOTAL = N * PER };
	uint32_t one[N], two[N], quota[N];
	for (uint32_t w = 0; w < N; w++) {
		one[w] = 0;
		two[w] = (w / WK) % 2;
		quota[w] = PER;
	}
	double r[2];
	dmr_be_mn_stats_t st[2][2];
	uint64_t sim_t[2];
	for (int k = 0; k < 2; k++) {
		dmr_be_t *be = open_mns("sim", NULL, 2, CNS, WK);
		r[k] = closed_loop(be, N, k ? two : one, quota, DMR_WR_READ, 64, 16, NULL);
		mn_stats(be, st[k]);
		sim_t[k] = dmr_test_sim_time(be);
		dmr_be_close(be);
	}
	double ratio = r[1] / r[0];
	ck_assert_msg(ratio > 1.8 && ratio < 2.2, "1 MN %.2f Mops/s, 2 MNs %.2f Mops/s: x%.3f",
		      r[0] / 1e6, r[1] / 1e6, ratio);
	/* one MN: MN 0's uplink (the READ responses) is the saturated
	 * resource, MN 1 idle */
	double u0 = (double)st[0][0].link_up_busy_ps / (double)sim_t[0];
	ck_assert_msg(u0 > 0.95 && u0 <= 1.0, "MN 0 uplink utilisation %.3f", u0);
	ck_assert_uint_eq(st[0][0].verbs, TOTAL);
	ck_assert_uint_eq(st[0][1].verbs, 0);
	ck_assert_uint_eq(st[0][1].nic_busy_ps, 0);
	ck_assert_uint_eq(st[0][1].link_up_busy_ps, 0);
	/* two MNs: both uplinks saturated, half the WRs each */
	for (int i = 0; i < 2; i++) {
		double u = (double)st[1][i].link_up_busy_ps / (double)sim_t[1];
		ck_assert_msg(u > 0.95 && u <= 1.0, "2 MNs: MN %d uplink utilisation %.3f", i, u);
		ck_assert_uint_eq(st[1][i].verbs, TOTAL / 2);
		ck_assert_uint_eq(st[1][i].reads, TOTAL / 2);
		ck_assert_uint_eq(st[1][i].bytes_read, TOTAL / 2 * 64ull);
	}
}
END_TEST

/* Worker 0 (CN 0) runs CAS on MN 0, two in flight (below the atomic
 * unit's rate); CNs 1 and 2 run CAS floods that saturate an atomic unit.
 * A flood on MN 1 leaves every completion time of worker 0 unchanged (MN
 * 0's atomic unit, NIC and link are its own, CN 0's links are not shared
 * with CNs 1 and 2); the same flood on MN 0 delays it (the test can
 * fail). */
START_TEST(mn1_traffic_does_not_delay_mn0_atomic_unit)
{
	enum { WK = 8, N = 3 * WK, PROBE = 2000, FLOOD = 6000 };
	static uint64_t t_alone[PROBE], t_mn1[PROBE], t_mn0[PROBE];
	uint64_t *times[3] = {t_alone, t_mn1, t_mn0};
	dmr_be_mn_stats_t st[3][2];
	uint64_t sim_t[3];
	for (int k = 0; k < 3; k++) {
		uint32_t target[N], quota[N];
		for (uint32_t w = 0; w < N; w++) {
			target[w] = w >= WK && k == 1 ? 1 : 0;
			quota[w] = w == 0 ? PROBE : w >= WK && k > 0 ? FLOOD : 0;
		}
		dmr_be_t *be = open_mns("sim", NULL, 2, 3, WK);
		closed_loop(be, N, target, quota, DMR_WR_CAS, 8, 2, times[k]);
		mn_stats(be, st[k]);
		sim_t[k] = dmr_test_sim_time(be);
		dmr_be_close(be);
	}
	for (uint32_t i = 0; i < PROBE; i++)
		ck_assert_msg(t_mn1[i] == t_alone[i],
			      "completion %u: %llu ps alone, %llu ps with MN 1 flooded", i,
			      (unsigned long long)t_alone[i], (unsigned long long)t_mn1[i]);
	/* the counters say where the atomics ran */
	ck_assert_uint_eq(st[0][0].atomics, PROBE);
	ck_assert_uint_eq(st[0][1].atomic_busy_ps, 0);
	ck_assert_uint_eq(st[1][0].atomics, PROBE);
	ck_assert_uint_eq(st[1][0].atomic_busy_ps, st[0][0].atomic_busy_ps);
	ck_assert_uint_eq(st[1][1].atomics, (uint64_t)FLOOD * (N - WK));
	double u1 = (double)st[1][1].atomic_busy_ps / (double)sim_t[1];
	ck_assert_msg(u1 > 0.9, "MN 1's atomic unit %.3f busy under the flood", u1);
	ck_assert_uint_eq(st[2][0].atomics, PROBE + (uint64_t)FLOOD * (N - WK));
	ck_assert_uint_eq(st[2][1].verbs, 0);
	/* the same flood on MN 0: worker 0 finishes later */
	ck_assert_msg(t_mn0[PROBE - 1] > t_alone[PROBE - 1] * 3 / 2,
		      "flood on MN 0: last probe CAS at %llu ps, alone %llu ps",
		      (unsigned long long)t_mn0[PROBE - 1], (unsigned long long)t_alone[PROBE - 1]);
}
END_TEST

/* A seeded mix over the MNs of be (READ, WRITE, CAS, FAA; sizes 0..4 KiB;
 * doorbells of 1..4 WRs to one MN), `rounds` doorbells per worker, with an
 * out-of-bounds READ on MN `bad_mn` (-1: none) at round 5 of worker 1,
 * which fails and flushes that QP's later WRs. log (NULL: none) gets one
 * record per completion: worker, wr_id, mn, status, opcode, byte_len and
 * the worker's clock; returns the number of completions. */
typedef struct rec {
	uint64_t t, wr_id;
	uint32_t worker, byte_len;
	uint16_t mn;
	uint8_t status, opcode;
} rec_t;

static uint32_t mixed_run(dmr_be_t *be, uint32_t mns, uint32_t nworkers, uint32_t rounds,
			  int bad_mn, rec_t *log, uint32_t log_cap)
{
	static uint8_t buf[64][4][4096];
	uint64_t x = 0x2545F4914F6CDD1Dull;
	uint32_t n = 0, expect = 0;
	for (uint32_t r = 0; r < rounds; r++) {
		for (uint32_t w = 0; w < nworkers && w < 64; w++) {
			dmr_wr_t wrs[4];
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t k = 1 + (uint32_t)(x >> 60) % 4, mn = (uint32_t)(x >> 40) % mns;
			for (uint32_t i = 0; i < k; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				uint8_t opc = (uint8_t)((x >> 33) % 4);
				uint32_t len = (uint32_t)(x >> 20) % 4097;
				uint64_t off = ((x >> 8) % 2048) * 64;
				memset(buf[w][i], (int)(r + w + i), sizeof(buf[w][i]));
				wrs[i] = (dmr_wr_t){.wr_id = ((uint64_t)r << 8) | (w << 2) | i,
						    .local = buf[w][i],
						    .remote = off,
						    .compare_add = x & 3,
						    .swap = r,
						    .length = len,
						    .opcode = opc,
						    .flags = DMR_WR_SIGNALED};
			}
			if (bad_mn >= 0 && w == 1 && r == 5) {
				mn = (uint32_t)bad_mn;
				wrs[0].opcode = DMR_WR_READ;
				wrs[0].remote = (16u << 20) - 8;
				wrs[0].length = 64;
			}
			ck_assert_int_eq(dmr_be_post(be, w, mn, wrs, k, NULL), DMR_OK);
			expect += k;
		}
		dmr_wc_t wc[16];
		int w;
		while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
			int got;
			while ((got = dmr_be_poll(be, (uint32_t)w, wc, 16)) > 0)
				for (int i = 0; i < got; i++, n++)
					if (log && n < log_cap)
						log[n] = (rec_t){.t = dmr_be_now(be, (uint32_t)w),
								 .wr_id = wc[i].wr_id,
								 .worker = (uint32_t)w,
								 .byte_len = wc[i].byte_len,
								 .mn = wc[i].mn,
								 .status = wc[i].status,
								 .opcode = wc[i].opcode};
		}
	}
	ck_assert_uint_eq(n, expect);
	return n;
}

/* Per-MN counters against the global ones, with errors (an out-of-bounds
 * READ and the WRs it flushes) and an unused MN; the same through the
 * fault wrapper (it forwards the control op). */
START_TEST(mn_stats_sum_to_global_stats)
{
	const char *names[2] = {"sim", "fault:sim"};
	for (int b = 0; b < 2; b++) {
		dmr_be_t *be = open_mns(names[b], NULL, 4, 2, 4);
		mixed_run(be, 3, 8, 200, 2, NULL, 0); /* MN 3: never used */
		dmr_be_stats_t g;
		dmr_be_stats(be, &g);
		dmr_be_mn_stats_t st[4];
		mn_stats(be, st);
		uint64_t t = dmr_test_sim_time(be);
		dmr_be_mn_stats_t sum = {0};
		for (int i = 0; i < 4; i++) {
			sum.verbs += st[i].verbs;
			sum.reads += st[i].reads;
			sum.writes += st[i].writes;
			sum.atomics += st[i].atomics;
			sum.bytes_read += st[i].bytes_read;
			sum.bytes_written += st[i].bytes_written;
			ck_assert_uint_eq(st[i].verbs, st[i].reads + st[i].writes + st[i].atomics);
			/* one FIFO server each: never busier than the run was long */
			ck_assert_uint_le(st[i].link_down_busy_ps, t);
			ck_assert_uint_le(st[i].link_up_busy_ps, t);
			ck_assert_uint_le(st[i].nic_busy_ps, t);
			ck_assert_uint_le(st[i].atomic_busy_ps, t);
			ck_assert_uint_le(st[i].dma_busy_ps, 2 * t); /* read + write engine */
			if (i < 3) {
				ck_assert_uint_gt(st[i].reads, 0);
				ck_assert_uint_gt(st[i].writes, 0);
				ck_assert_uint_gt(st[i].atomics, 0);
				ck_assert_uint_gt(st[i].link_down_busy_ps, 0);
				ck_assert_uint_gt(st[i].link_up_busy_ps, 0);
				ck_assert_uint_gt(st[i].nic_busy_ps, 0);
				ck_assert_uint_gt(st[i].dma_busy_ps, 0);
				ck_assert_uint_gt(st[i].atomic_busy_ps, 0);
			}
		}
		const dmr_be_mn_stats_t zero = {0};
		ck_assert_int_eq(memcmp(&st[3], &zero, sizeof(zero)), 0);
		ck_assert_uint_gt(g.errors, 1); /* the bad READ and at least one flushed */
		ck_assert_uint_eq(sum.verbs, g.verbs - g.errors);
		ck_assert_uint_eq(sum.reads, g.reads);
		ck_assert_uint_eq(sum.writes, g.writes);
		ck_assert_uint_eq(sum.atomics, g.cas + g.faa);
		ck_assert_uint_eq(sum.bytes_read, g.bytes_read);
		ck_assert_uint_eq(sum.bytes_written, g.bytes_written);
		dmr_be_close(be);
	}
}
END_TEST

/* The same seeded mix on 4 MNs twice: the same completions at the same
 * picoseconds, the same bytes in every MN's region. */
START_TEST(four_mns_deterministic)
{
	enum { CAP = 20000 };
	rec_t *log[2];
	uint32_t n[2];
	uint8_t *mem[2][4];
	for (int k = 0; k < 2; k++) {
		log[k] = calloc(CAP, sizeof(rec_t));
		ck_assert_ptr_nonnull(log[k]);
		dmr_be_t *be = open_mns("sim", NULL, 4, 2, 4);
		n[k] = mixed_run(be, 4, 8, 300, 3, log[k], CAP);
		for (uint32_t i = 0; i < 4; i++) {
			uint64_t len = 0;
			uint8_t *p = dmr_be_mn_memory(be, i, &len);
			ck_assert_ptr_nonnull(p);
			ck_assert_uint_eq(len, 16 << 20);
			mem[k][i] = malloc(len);
			memcpy(mem[k][i], p, len);
		}
		ck_assert_ptr_null(dmr_be_mn_memory(be, 4, NULL));
		dmr_be_close(be);
	}
	ck_assert_uint_eq(n[0], n[1]);
	ck_assert_uint_le(n[0], CAP);
	ck_assert_int_eq(memcmp(log[0], log[1], sizeof(rec_t) * n[0]), 0);
	uint32_t per_mn[4] = {0};
	for (uint32_t i = 0; i < n[0]; i++) {
		ck_assert_uint_lt(log[0][i].mn, 4);
		per_mn[log[0][i].mn]++;
	}
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_gt(per_mn[i], 100); /* every MN took part */
		ck_assert_int_eq(memcmp(mem[0][i], mem[1][i], 16 << 20), 0);
		if (i)
			ck_assert_int_ne(memcmp(mem[0][i], mem[0][0], 16 << 20), 0);
	}
	for (int k = 0; k < 2; k++) {
		free(log[k]);
		for (int i = 0; i < 4; i++)
			free(mem[k][i]);
	}
}
END_TEST

/* Each MN's region is its own: the same offset on MN 0 and MN 1 holds
 * different bytes; atomics act on the MN they were posted to. */
START_TEST(regions_are_separate)
{
	dmr_be_t *be = open_mns("sim", NULL, 2, 1, 1);
	uint64_t a = 0x1111, b = 0x2222, old = 0, r[2];
	dmr_wc_t wc[2];
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, &a, 64, 8, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 1, DMR_WR_WRITE, 2, &b, 64, 8, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 2, 0), 2);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 1, DMR_WR_FAA, 3, &old, 64, 8, 5, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 1, 0), 1);
	ck_assert_uint_eq(old, 0x2222);
	ck_assert_uint_eq(wc[0].mn, 1);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 4, &r[0], 64, 8, 0, 0, NULL),
			 DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 1, DMR_WR_READ, 5, &r[1], 64, 8, 0, 0, NULL),
			 DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 2, 0), 2);
	ck_assert_uint_eq(r[0], 0x1111);
	ck_assert_uint_eq(r[1], 0x2227);
	uint64_t v0, v1;
	memcpy(&v0, (uint8_t *)dmr_be_mn_memory(be, 0, NULL) + 64, 8);
	memcpy(&v1, (uint8_t *)dmr_be_mn_memory(be, 1, NULL) + 64, 8);
	ck_assert_uint_eq(v0, 0x1111);
	ck_assert_uint_eq(v1, 0x2227);
	dmr_be_close(be);
}
END_TEST

/* The lazy initial image (DMR_BE_CTL_LAZY_INIT): a pattern on every third
 * 4 KiB page of each MN, zeros elsewhere; any range. */
static uint8_t pat(uint32_t mn, uint64_t o)
{
	return (o >> 12) % 3 == 0 ? (uint8_t)(o * 131 + mn * 7 + 1) : 0;
}

static unsigned lazy_calls;

static void pat_init(void *arg, uint32_t mn, uint64_t off, uint64_t len, uint8_t *dst)
{
	(void)arg;
	uint8_t nz = 0;
	lazy_calls++;
	for (uint64_t i = 0; i < len; i++) {
		nz |= dst[i];
		dst[i] = pat(mn, off + i);
	}
	ck_assert_msg(!nz, "MN %u [%llu, +%llu): not handed zeros", mn, (unsigned long long)off,
		      (unsigned long long)len);
}

/* The same WRs on a sim whose region was written eagerly (lazy 0) or that
 * writes it lazily (lazy 1): READs across page edges, a WRITE across one,
 * an FAA on a pattern page and a CAS on a zero page, on two MNs. Fills
 * got[] with what the READs returned and *t_p with the simulated end. */
static void lazy_script(int lazy, uint8_t got[3][64], uint64_t *t_p, dmr_be_t **be_p)
{
	const uint64_t size = 16 << 20;
	dmr_be_t *be = open_mns("sim", NULL, 2, 1, 1);
	dmr_err_t err;
	if (lazy) {
		dmr_be_lazy_init_t li = {pat_init, NULL};
		ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_LAZY_INIT, &li, &err), DMR_OK);
	} else {
		for (uint32_t mn = 0; mn < 2; mn++) {
			uint8_t *m = dmr_be_mn_memory(be, mn, NULL);
			for (uint64_t o = 0; o < size; o++)
				m[o] = pat(mn, o);
		}
	}
	dmr_wc_t wc[4];
	uint8_t w[16];
	for (int i = 0; i < 16; i++)
		w[i] = (uint8_t)(0xa0 + i);
	uint64_t old1 = 0, old2 = 0;
	/* a READ across the edge of pages 0 (pattern) and 1 (zeros) of MN 1 */
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 1, DMR_WR_READ, 1, got[0], 4096 - 32, 64, 0, 0, NULL), DMR_OK);
	/* a WRITE across pages 2 and 3 of MN 0, FAA on page 6, CAS on page 7 */
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 2, w, 3 * 4096 - 8, 16, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 0, DMR_WR_FAA, 3, &old1, 6 * 4096 + 16, 8, 5, 0, NULL), DMR_OK);
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 0, DMR_WR_CAS, 4, &old2, 7 * 4096 + 8, 8, 0, 0x77, NULL),
	    DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 4, 0), 4);
	ck_assert_uint_eq(old2, 0); /* a zero page: the CAS swapped */
	uint64_t p1;
	uint8_t pb[8];
	for (int i = 0; i < 8; i++)
		pb[i] = pat(0, 6 * 4096 + 16 + (uint64_t)i);
	memcpy(&p1, pb, 8);
	ck_assert_uint_eq(old1, p1);
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 0, DMR_WR_READ, 5, got[1], 3 * 4096 - 24, 64, 0, 0, NULL),
	    DMR_OK);
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, 0, DMR_WR_READ, 6, got[2], 6 * 4096 + 8, 64, 0, 0, NULL),
	    DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 2, 0), 2);
	*t_p = dmr_test_sim_time(be);
	*be_p = be;
}

/* Lazily or eagerly written, the sim returns the same bytes at the same
 * simulated times; DMR_BE_CTL_MN_READ reads through the image without
 * writing pages; mn_memory() then shows the whole region as the eager one
 * has it, after which WRs reach the region raw. */
START_TEST(lazy_image_matches_eager)
{
	uint8_t ge[3][64], gl[3][64], buf[8192], buf2[8192];
	uint64_t te, tl;
	dmr_be_t *eb, *lb;
	lazy_calls = 0;
	lazy_script(0, ge, &te, &eb);
	ck_assert_uint_eq(lazy_calls, 0);
	lazy_script(1, gl, &tl, &lb);
	/* pages stored: two by the WRITE across a page edge, one by the FAA,
	 * one by the CAS; and computed for the first READ across a page edge:
	 * one call for its run of pages never stored (any page size from 16 B
	 * to 4 KiB) */
	ck_assert_uint_eq(lazy_calls, 5);
	ck_assert_uint_eq(te, tl);
	ck_assert(memcmp(ge, gl, sizeof(ge)) == 0);
	for (int i = 0; i < 32; i++) /* MN 1 page 0's pattern, then page 1's zeros */
		ck_assert_uint_eq(gl[0][i], pat(1, 4096 - 32 + (uint64_t)i));
	for (int i = 32; i < 64; i++)
		ck_assert_uint_eq(gl[0][i], 0);
	for (int i = 0; i < 16; i++) /* the WRITE across pages 2 and 3 */
		ck_assert_uint_eq(gl[1][16 + i], 0xa0 + i);
	/* MN_READ: the same bytes as the eager region, no page written */
	dmr_err_t err;
	const uint64_t offs[] = {0,	   4096 - 100,	 3 * 4096 - 4000,
				 6 * 4096, 7 * 4096 - 1, 16777216 - 8192};
	for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++)
		for (uint32_t mn = 0; mn < 2; mn++) {
			dmr_be_mn_read_t rd = {mn, offs[k], sizeof(buf), buf, 0};
			unsigned calls = lazy_calls;
			ck_assert_int_eq(dmr_be_control(lb, DMR_BE_CTL_MN_READ, &rd, &err), DMR_OK);
			rd.buf = buf2;
			ck_assert_int_eq(dmr_be_control(eb, DMR_BE_CTL_MN_READ, &rd, &err), DMR_OK);
			ck_assert_msg(memcmp(buf, buf2, sizeof(buf)) == 0, "MN %u at %llu", mn,
				      (unsigned long long)offs[k]);
			if (mn == 1 && k == 0) { /* never written: computed each time */
				unsigned once = lazy_calls - calls;
				rd.buf = buf2;
				ck_assert_int_eq(dmr_be_control(lb, DMR_BE_CTL_MN_READ, &rd, &err),
						 DMR_OK);
				ck_assert_uint_gt(once, 0);
				ck_assert_uint_eq(lazy_calls - calls, 2 * once);
				ck_assert(memcmp(buf, buf2, sizeof(buf)) == 0);
			}
		}
	dmr_be_mn_read_t bad = {0, (16 << 20) - 4, 8, buf, 0};
	ck_assert_int_eq(dmr_be_control(lb, DMR_BE_CTL_MN_READ, &bad, &err), DMR_ERR_RANGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "MN 0"));
	bad.mn = 2;
	bad.off = 0;
	ck_assert_int_eq(dmr_be_control(lb, DMR_BE_CTL_MN_READ, &bad, &err), DMR_ERR_RANGE);
	/* the raw region: whole and equal */
	for (uint32_t mn = 0; mn < 2; mn++) {
		uint64_t le = 0, ll = 0;
		const uint8_t *me = dmr_be_mn_memory(eb, mn, &le),
			      *ml = dmr_be_mn_memory(lb, mn, &ll);
		ck_assert_uint_eq(le, ll);
		ck_assert_msg(memcmp(me, ml, le) == 0, "MN %u's raw region differs", mn);
	}
	/* then WRs reach the raw region */
	uint64_t v = 0x55aa, r = 0;
	dmr_wc_t wc[2];
	ck_assert_int_eq(dmr_be_post_one(lb, 0, 1, DMR_WR_WRITE, 7, &v, 40960, 8, 0, 0, NULL),
			 DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(lb, 0, 1, DMR_WR_READ, 8, &r, 40960, 8, 0, 0, NULL),
			 DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(lb, 0, wc, 2, 0), 2);
	ck_assert_uint_eq(r, 0x55aa);
	uint64_t raw;
	memcpy(&raw, (uint8_t *)dmr_be_mn_memory(lb, 1, NULL) + 40960, 8);
	ck_assert_uint_eq(raw, 0x55aa);
	dmr_be_close(eb);
	dmr_be_close(lb);
}
END_TEST

/* mns 0 and 17 refused naming the value (sim, and through the wrapper);
 * 16 accepted; an MN index >= mns refused by dmr_be_post. */
START_TEST(bad_mn_count_refused)
{
	const char *names[2] = {"sim", "fault:sim"};
	const uint32_t bad[2] = {0, DMR_BE_MAX_MNS + 1};
	for (int b = 0; b < 2; b++)
		for (int i = 0; i < 2; i++) {
			dmr_be_config_t cfg = {.backend = names[b],
					       .mns = bad[i],
					       .cns = 1,
					       .workers = 1,
					       .mr_size = 1 << 20,
					       .profile = "cx6dx-100g"};
			dmr_be_t *be = NULL;
			dmr_err_t err = {{0}};
			ck_assert_int_eq(dmr_be_open(&cfg, &be, &err), DMR_ERR_INVALID);
			char want[32];
			snprintf(want, sizeof(want), "mns %u out of range (1..16)", bad[i]);
			ck_assert_msg(strstr(err.msg, want), "%s: '%s' does not say '%s'", names[b],
				      err.msg, want);
		}
	dmr_be_t *be = open_mns("sim", NULL, DMR_BE_MAX_MNS, 1, 2);
	uint64_t v = 0;
	dmr_err_t err;
	ck_assert_int_eq(dmr_be_post_one(be, 1, 15, DMR_WR_READ, 1, &v, 0, 8, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(be, 1, 16, DMR_WR_READ, 2, &v, 0, 8, 0, 0, &err),
			 DMR_ERR_RANGE);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_test_wait_wc(be, 1, &wc, 1, 0), 1);
	ck_assert_uint_eq(wc.mn, 15);
	ck_assert_uint_eq(wc.wr_id, 1);
	dmr_be_close(be);
}
END_TEST

/* fault:sim with unreachable:mn=1@50us on 2 MNs: worker 0 alternates READs
 * to MN 0 and MN 1. From 50 us, MN 1's WR fails with RETRY_EXC_ERR naming
 * MN 1 within a bounded time (the first post after 50 us, plus one round
 * trip), later ones to MN 1 are flushed, MN 0 keeps serving. */
START_TEST(unreachable_mn1_named_in_bounded_time)
{
	const uint64_t at = 50000000ull; /* 50 us, ps */
	dmr_be_t *be = open_mns("fault:sim", "unreachable:mn=1@50us", 2, 1, 1);
	uint64_t v[2];
	uint64_t t_fail = 0, ok0_after = 0, flushed = 0;
	for (uint32_t i = 0; i < 400; i++) {
		uint32_t mn = i % 2;
		uint64_t t_post = dmr_be_now(be, 0);
		ck_assert_int_eq(
		    dmr_be_post_one(be, 0, mn, DMR_WR_READ, i, &v[mn], 64, 8, 0, 0, NULL), DMR_OK);
		dmr_wc_t wc;
		ck_assert_int_eq(dmr_test_wait_wc(be, 0, &wc, 1, 0), 1);
		ck_assert_uint_eq(wc.wr_id, i);
		ck_assert_uint_eq(wc.mn, mn);
		if (mn == 0 || t_post < at) {
			ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
			ok0_after += mn == 0 && t_post >= at;
		} else if (!t_fail) {
			ck_assert_int_eq(wc.status, DMR_WC_RETRY_EXC_ERR);
			t_fail = dmr_be_now(be, 0);
			/* bounded: the first post to MN 1 after `at` is at most
			 * two round trips (~2 us each) late */
			ck_assert_uint_ge(t_fail, at);
			ck_assert_uint_lt(t_fail, at + 10000000ull);
		} else {
			ck_assert_int_eq(wc.status, DMR_WC_FLUSH_ERR);
			flushed++;
		}
	}
	ck_assert_uint_gt(t_fail, 0);
	ck_assert_uint_gt(ok0_after, 50);
	ck_assert_uint_gt(flushed, 50);
	/* the failed WRs were never executed at MN 1 */
	dmr_be_mn_stats_t st[2];
	mn_stats(be, st);
	ck_assert_uint_eq(st[0].reads, 200);
	ck_assert_uint_lt(st[1].reads, 200 - flushed);
	dmr_be_close(be);
}
END_TEST

/* The CN downlink serves responses of several MNs in the order they reach
 * it: CN 1 keeps MN 0's uplink full of 64 KiB READ responses; CN 0's
 * worker 0 then WRITEs 8 B to MN 0 (effect at once, its ACK queued behind
 * the READ data being sent) and worker 1 READs 64 B from the idle MN 1. The READ
 * reaches CN 0 first and completes in the idle round trip; it does not
 * wait for the WRITE's ACK, which the MN's effects come first for. */
START_TEST(cn_downlink_serves_mns_in_arrival_order)
{
	enum { DEPTH = 16, BIG = 65536 };
	/* the idle READ on MN 1 alone */
	dmr_be_t *be = open_mns("sim", NULL, 2, 2, 2);
	static uint8_t rd[64];
	uint64_t w8 = 7;
	dmr_wc_t wc[32];
	uint64_t t0 = dmr_be_now(be, 1);
	ck_assert_int_eq(dmr_be_post_one(be, 1, 1, DMR_WR_READ, 1, rd, 0, 64, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 1, wc, 1, 0), 1);
	uint64_t idle = dmr_be_now(be, 1) - t0;
	dmr_be_close(be);

	be = open_mns("sim", NULL, 2, 2, 2);
	uint8_t *big = malloc((size_t)2 * DEPTH * BIG);
	ck_assert_ptr_nonnull(big);
	for (uint32_t w = 2; w < 4; w++)
		for (uint32_t d = 0; d < DEPTH; d++)
			ck_assert_int_eq(dmr_be_post_one(be, w, 0, DMR_WR_READ, d,
							 big + ((w - 2) * DEPTH + d) * (size_t)BIG,
							 0, BIG, 0, 0, NULL),
					 DMR_OK);
	int w;
	uint64_t t_probe = 0, t_read = 0, t_write = 0;
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wc, 32);
		for (int i = 0; i < n; i++) {
			ck_assert_int_eq(wc[i].status, DMR_WC_SUCCESS);
			if (w >= 2 && !t_write) /* the flood goes on until the probes are in */
				ck_assert_int_eq(
				    dmr_be_post_one(be, (uint32_t)w, 0, DMR_WR_READ, wc[i].wr_id,
						    big + ((w - 2) * DEPTH + wc[i].wr_id) *
							      (size_t)BIG,
						    0, BIG, 0, 0, NULL),
				    DMR_OK);
			else if (w == 0)
				t_write = dmr_be_now(be, 0);
			else if (w == 1)
				t_read = dmr_be_now(be, 1);
		}
		if (!t_probe && dmr_test_sim_time(be) > 100000000ull) { /* 100 us in */
			t_probe = dmr_be_now(be, 0);
			ck_assert_uint_eq(dmr_be_now(be, 1), t_probe);
			ck_assert_int_eq(
			    dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 10, &w8, 0, 8, 0, 0, NULL),
			    DMR_OK);
			ck_assert_int_eq(
			    dmr_be_post_one(be, 1, 1, DMR_WR_READ, 11, rd, 0, 64, 0, 0, NULL),
			    DMR_OK);
		}
	}
	ck_assert(t_probe && t_read && t_write);
	/* the READ: the idle round trip, plus at most the CN NIC's service of
	 * the WRITE posted just before it */
	ck_assert_msg(t_read - t_probe >= idle && t_read - t_probe <= idle + 50000,
		      "READ from idle MN 1 took %llu ps, idle %llu ps",
		      (unsigned long long)(t_read - t_probe), (unsigned long long)idle);
	/* the WRITE's ACK waited behind MN 0's READ data */
	ck_assert_msg(t_write - t_probe > 2 * idle, "WRITE to busy MN 0 took %llu ps",
		      (unsigned long long)(t_write - t_probe));
	free(big);
	dmr_be_close(be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim_mns");
	TCase *tc = tcase_create("mns");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, two_mns_saturated_separately_double_throughput);
	tcase_add_test(tc, mn1_traffic_does_not_delay_mn0_atomic_unit);
	tcase_add_test(tc, mn_stats_sum_to_global_stats);
	tcase_add_test(tc, four_mns_deterministic);
	tcase_add_test(tc, regions_are_separate);
	tcase_add_test(tc, lazy_image_matches_eager);
	tcase_add_test(tc, bad_mn_count_refused);
	tcase_add_test(tc, unreachable_mn1_named_in_bounded_time);
	tcase_add_test(tc, cn_downlink_serves_mns_in_arrival_order);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
