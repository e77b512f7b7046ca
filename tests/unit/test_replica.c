/*
 * tests/unit/test_replica.c - several MNs (issue 11): the placement rule of
 * core/layout.c, the multi-MN doorbells and commit of core/txn.c for both
 * protocols on shm with 3 MNs and 2 backups (counted verbs against the
 * counts derived in docs/PROTOCOLS.md), and the replica and lock-word
 * verifier of core/replica.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/addrcache.h"
#include "core/replica.h"
#include "core/txn.h"
#include "helpers/be.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "traces/trace.h"

/* 3 tables t0..t2 of 16 rows x 16 payload bytes, 8 loaded. */
static void hdr3(dmr_trace_hdr_t *h)
{
	memset(h, 0, sizeof(*h));
	h->version = 1;
	h->ntables = 3;
	for (int i = 0; i < 3; i++) {
		snprintf(h->tables[i].name, sizeof(h->tables[i].name), "t%d", i);
		h->tables[i].rows = 16;
		h->tables[i].payload_bytes = 16;
		h->tables[i].loaded = 8;
	}
}

START_TEST(placement_follows_ford)
{
	static dmr_trace_hdr_t h;
	static dmr_layout_t l;
	hdr3(&h);
	h.ntables = 9;
	for (int i = 3; i < 9; i++)
		h.tables[i] = h.tables[0], snprintf(h.tables[i].name, 8, "t%d", i);
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 2, 4096, &err), DMR_OK);
	ck_assert_uint_eq(l.mns, 1);
	ck_assert_uint_eq(l.t[5].primary, 0);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 2, &err), DMR_OK);
	/* FORD LoadTable: primary t % 3; MN n backs t when t % 3 == (n - i) % 3 */
	for (uint32_t t = 0; t < 9; t++) {
		ck_assert_uint_eq(l.t[t].primary, t % 3);
		for (uint32_t n = 0; n < 3; n++)
			for (uint32_t i = 1; i <= 2; i++)
				if (t % 3 == (n - i + 3) % 3)
					ck_assert_uint_eq(l.t[t].backup[i - 1], n);
	}
	char buf[512];
	dmr_layout_placement(&l, buf, sizeof(buf));
	ck_assert_str_eq(buf, "mns=3 backups=2 t0:0/1,2 t1:1/2,0 t2:2/0,1 t3:0/1,2 t4:1/2,0 "
			      "t5:2/0,1 t6:0/1,2 t7:1/2,0 t8:2/0,1");
	ck_assert_int_eq(dmr_layout_place(&l, 4, 1, &err), DMR_OK);
	ck_assert_uint_eq(l.t[7].primary, 3);
	ck_assert_uint_eq(l.t[7].backup[0], 0);
	ck_assert(dmr_layout_holds(&l, 7, 0) && dmr_layout_holds(&l, 7, 3));
	ck_assert(!dmr_layout_holds(&l, 7, 1));
	/* refused, naming the values, layout unchanged */
	ck_assert_int_eq(dmr_layout_place(&l, 2, 2, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "--backups 2 with --mns 2"));
	ck_assert_uint_eq(l.mns, 4);
	ck_assert_int_eq(dmr_layout_place(&l, 1, 1, &err), DMR_ERR_INVALID);
	ck_assert_int_eq(dmr_layout_place(&l, 0, 0, &err), DMR_ERR_RANGE);
	ck_assert_int_eq(dmr_layout_place(&l, 17, 0, &err), DMR_ERR_RANGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--mns 17"));
	ck_assert_int_eq(dmr_layout_place(&l, 16, 3, &err), DMR_ERR_RANGE);
	ck_assert_int_eq(dmr_layout_place(&l, 16, 2, &err), DMR_OK);
	/* a short buffer is cut and terminated, the length needed returned */
	char small[16];
	int need = dmr_layout_placement(&l, small, sizeof(small));
	ck_assert_int_gt(need, 15);
	ck_assert_uint_eq(strlen(small), 15);
}
END_TEST

typedef struct fx {
	dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_be_t *be;
	dmr_txn_engine_t eng;
	dmr_txn_stats_t st;
	dmr_txn_ctx_t ctx;
} fx_t;

static void fx_open(fx_t *f, const dmr_trace_hdr_t *h, uint32_t mns, uint32_t backups, int proto)
{
	memset(f, 0, sizeof(*f));
	f->h = *h;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, 1, 64 * 1024, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&f->l, mns, backups, &err), DMR_OK);
	dmr_be_config_t cfg = {.backend = "shm",
			       .mns = mns,
			       .cns = 1,
			       .workers = 1,
			       .mr_size = (f->l.total + 4095) & ~4095ull};
	ck_assert_int_eq(dmr_be_open(&cfg, &f->be, &err), DMR_OK);
	for (uint32_t m = 0; m < mns; m++)
		dmr_layout_load_mn(&f->l, m, dmr_be_mn_memory(f->be, m, NULL));
	ck_assert_int_eq(dmr_txn_engine_init(&f->eng, f->be, &f->l, 0, 0, &err), DMR_OK);
	f->eng.protocol = proto;
	ck_assert_int_eq(dmr_txn_ctx_init(&f->ctx, &f->eng, &f->st, 0, 0, &err), DMR_OK);
}

static void fx_close(fx_t *f)
{
	dmr_txn_ctx_fini(&f->ctx);
	dmr_be_close(f->be);
}

/* Run t to its end on the single context (shm executes at post). */
static int run1(fx_t *f, const dmr_trace_txn_t *t)
{
	dmr_txn_outcome_t out;
	ck_assert_int_eq(dmr_txn_start(&f->ctx, t, &out), DMR_OK);
	while (out == DMR_TXN_RUNNING) {
		dmr_wc_t wc[8];
		int k = dmr_be_poll(f->be, 0, wc, 8);
		ck_assert_int_gt(k, 0); /* shm: every posted doorbell has completed */
		for (int i = 0; i < k && out == DMR_TXN_RUNNING; i++)
			ck_assert_int_eq(dmr_txn_on_wc(&f->ctx, &wc[i], &out), DMR_OK);
	}
	return (int)out;
}

static uint64_t rec_word(fx_t *f, uint32_t mn, unsigned table, uint64_t slot, int w)
{
	uint64_t v;
	memcpy(&v,
	       (uint8_t *)dmr_be_mn_memory(f->be, mn, NULL) + dmr_layout_rec(&f->l, table, slot) +
		   8 * w,
	       8);
	return v;
}

/* R t0[1], R t1[2], U t2[3] += 5: one round, on 3 MNs with 2 backups
 * (t0 0/1,2, t1 1/2,0, t2 2/0,1). Counts (docs/PROTOCOLS.md):
 *  occ:  READs 2 + 1 (exec) + 2 (validation) = 5; CAS 1; WRITEs 3 log
 *        (the replicas of t2) + 3 write-backs + 1 unlock = 7; doorbells
 *        3 exec + 2 validation + 3 write-back + 1 unlock = 9.
 *  ford: READs 5 + 2 flush (the backups of t2) = 7; CAS 1; WRITEs 3 undo
 *        log (every MN) + 2 x 3 commit + 3 release = 12; doorbells 3 exec
 *        + 3 validation/log + 3 commit + 3 release = 12.
 *  farm: READs 3 (exec, t2 unlocked) + 3 (validation: t0, t1 and t2's
 *        version) + 2 flush = 8; CAS 1 (its own round); WRITEs 2 redo log
 *        (t2's backups) + 3 data (primary, backups) + 1 unlock = 6;
 *        doorbells 3 exec + 1 lock + 3 validation + 2 log + 3 data + 1
 *        unlock = 13.
 *  drtmh: as farm with lock and validation in one round (CAS + version
 *        READ on MN 2, the version READs on MN 0, 1): doorbells 12.
 * READs per MN: occ 2, 2, 1 (MN 2: the READ behind the CAS); ford and
 * farm/drtmh add the flush READ on the backups MN 0, 1: 3, 3, 1 and 3, 3, 2
 * (farm/drtmh: t2's execution READ and its version READ). */
static void txn_rru(dmr_trace_txn_t *t)
{
	memset(t, 0, sizeof(*t));
	t->id = 1;
	dmr_trace_txn_op(t, 'R', 0, 0, 1);
	dmr_trace_txn_op(t, 'R', 1, 0, 2);
	int u = dmr_trace_txn_op(t, 'U', 2, 0, 3);
	dmr_trace_op_act(&t->ops[u], DMR_TACT_ADD, 0, 5);
}

static void check_counts(int proto, uint64_t reads, uint64_t writes, uint64_t doorbells,
			 const uint64_t mn_writes[3], const uint64_t mn_reads[3])
{
	static dmr_trace_hdr_t h;
	static fx_t f;
	static dmr_trace_txn_t t;
	hdr3(&h);
	fx_open(&f, &h, 3, 2, proto);
	txn_rru(&t);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.reads, reads);
	ck_assert_uint_eq(f.st.writes, writes);
	ck_assert_uint_eq(f.st.atomics, 1);
	ck_assert_uint_eq(f.st.locks_taken, 1);
	ck_assert_uint_eq(f.st.locks_released, 1);
	dmr_be_stats_t bs;
	dmr_be_stats(f.be, &bs);
	ck_assert_uint_eq(bs.reads, reads);
	ck_assert_uint_eq(bs.writes, writes);
	ck_assert_uint_eq(bs.cas, 1);
	ck_assert_uint_eq(bs.doorbells, doorbells);
	dmr_be_mn_stats_t ms[3];
	dmr_err_t err;
	ck_assert_int_eq(dmr_be_control(f.be, DMR_BE_CTL_MN_STATS, ms, &err), DMR_OK);
	for (int m = 0; m < 3; m++) {
		ck_assert_uint_eq(ms[m].writes, mn_writes[m]);
		ck_assert_uint_eq(ms[m].reads, mn_reads[m]);
	}
	ck_assert_uint_eq(ms[2].atomics, 1);
	ck_assert_uint_eq(ms[0].atomics + ms[1].atomics, 0);
	/* the new image on the primary (MN 2) and both backups (MN 0, 1) */
	for (uint32_t m = 0; m < 3; m++) {
		ck_assert_uint_eq(rec_word(&f, m, 2, 3, 2), 5);
		ck_assert_uint_eq(rec_word(&f, m, 2, 3, 1), DMR_VER_PRESENT | 2);
		ck_assert_uint_eq(rec_word(&f, m, 2, 3, 0), 0);
	}
	ck_assert_uint_eq(f.st.phase_ps[DMR_TXN_PHASE_EXEC] > 0, 1);
	dmr_replica_result_t rr;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &rr, &err), DMR_OK);
	ck_assert_msg(rr.ok, "%s", rr.first_failure);
	/* 3 tables x 16 rows: a lock word on each of 3 replicas, 2 compares */
	ck_assert_uint_eq(rr.checks, 3 * 16 * 5);
	fx_close(&f);
}

START_TEST(occ_counts_on_three_mns)
{
	/* MN 0: log + write-back (backup of t2); MN 1 the same; MN 2: log,
	 * write-back, unlock */
	const uint64_t w[3] = {2, 2, 3}, r[3] = {2, 2, 1};
	check_counts(DMR_TXN_PROTO_OCC, 5, 7, 9, w, r);
}
END_TEST

START_TEST(ford_counts_on_three_mns)
{
	/* every MN: undo log 1, lock word + data 2, release 1 */
	const uint64_t w[3] = {4, 4, 4}, r[3] = {3, 3, 1};
	check_counts(DMR_TXN_PROTO_FORD, 7, 12, 12, w, r);
}
END_TEST

START_TEST(farm_counts_on_three_mns)
{
	/* MN 0, 1: redo log + data (backups of t2); MN 2: data + unlock */
	const uint64_t w[3] = {2, 2, 2}, r[3] = {3, 3, 2};
	check_counts(DMR_TXN_PROTO_FARM, 8, 6, 13, w, r);
}
END_TEST

START_TEST(drtmh_counts_on_three_mns)
{
	const uint64_t w[3] = {2, 2, 2}, r[3] = {3, 3, 2};
	check_counts(DMR_TXN_PROTO_DRTMH, 8, 6, 12, w, r);
}
END_TEST

START_TEST(replica_verify_names_corrupted_backup_and_held_lock)
{
	static dmr_trace_hdr_t h;
	static fx_t f;
	static dmr_trace_txn_t t;
	hdr3(&h);
	fx_open(&f, &h, 3, 2, DMR_TXN_PROTO_OCC);
	txn_rru(&t);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	dmr_replica_result_t rr;
	dmr_err_t err;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &rr, &err), DMR_OK);
	ck_assert(rr.ok);
	/* one payload byte of t2 slot 3 on its backup MN 1 */
	uint8_t *m1 = dmr_be_mn_memory(f.be, 1, NULL);
	m1[dmr_layout_rec(&f.l, 2, 3) + DMR_REC_HDR + 1] ^= 0x40;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &rr, &err), DMR_OK);
	ck_assert(!rr.ok);
	ck_assert_uint_eq(rr.failures, 1);
	ck_assert_str_eq(rr.first_failure, "table t2 slot 3: backup on MN 1 differs from its "
					   "primary on MN 2 (record byte 17: 0x40 != 0x00)");
	m1[dmr_layout_rec(&f.l, 2, 3) + DMR_REC_HDR + 1] ^= 0x40;
	/* a lock word left on a backup (MN 2 backs t0 as its second backup) */
	uint8_t *m2 = dmr_be_mn_memory(f.be, 2, NULL);
	uint64_t held = 0x8000000000000000ull;
	memcpy(m2 + dmr_layout_rec(&f.l, 0, 7), &held, 8);
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &rr, &err), DMR_OK);
	ck_assert(!rr.ok);
	ck_assert_str_eq(rr.first_failure, "table t0 slot 7 on MN 2 (backup): lock word "
					   "0x8000000000000000 is held after the run");
	fx_close(&f);
}
END_TEST

/* The lazy image's writer for the test below: the layout's initial image
 * (core/layout.h dmr_layout_load_range). */
static void lazy_layout(void *arg, uint32_t mn, uint64_t off, uint64_t len, uint8_t *dst)
{
	dmr_layout_load_range(arg, mn, off, len, dst);
}

/* One WRITE of len bytes at off on MN mn, waited for. */
static void write_mn(dmr_be_t *be, uint32_t mn, uint64_t off, const void *p, uint32_t len)
{
	dmr_wc_t wc[1];
	ck_assert_int_eq(
	    dmr_be_post_one(be, 0, mn, DMR_WR_WRITE, 1, (void *)p, off, len, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 1, 0), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
}

/* dmr_replica_verify_lazy on a sim that writes the initial image lazily:
 * the same result, counts and first failure as dmr_replica_verify_be on
 * the regions mn_memory() then writes whole, for a clean state, a backup
 * byte changed by a WRITE, and a lock word left on a backup; the sim
 * reports written only for the ranges WRs reached. */
START_TEST(replica_verify_lazy_matches_raw)
{
	static dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_err_t err;
	hdr3(&h);
	for (int i = 0; i < 3; i++) { /* several blocks of ~1 MiB per table */
		h.tables[i].rows = 40000;
		h.tables[i].payload_bytes = 48;
		h.tables[i].loaded = 30000;
	}
	ck_assert_int_eq(dmr_layout_init(&l, &h, 1, 64 * 1024, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 2, &err), DMR_OK);
	/* t0 slot 7 and t2 slot 35000 (an unloaded row, a later block) */
	const uint64_t o7 = dmr_layout_rec(&l, 0, 7), o35 = dmr_layout_rec(&l, 2, 35000);
	const uint32_t b7 = l.t[0].primary == 2 ? 1 : 2; /* a backup of t0 */
	dmr_replica_result_t rl[3], rr[3];
	for (int pass = 0; pass < 2; pass++) {
		dmr_be_config_t cfg = {.backend = "sim",
				       .mns = 3,
				       .cns = 1,
				       .workers = 1,
				       .mr_size = (l.total + 4095) & ~4095ull,
				       .profile = "cx6dx-100g"};
		dmr_be_t *be;
		ck_assert_int_eq(dmr_be_open(&cfg, &be, &err), DMR_OK);
		dmr_be_lazy_init_t li = {lazy_layout, &l};
		ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_LAZY_INIT, &li, &err), DMR_OK);
		dmr_be_mn_read_t probe = {0, o7, 8, NULL, 1};
		ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_MN_READ, &probe, &err), DMR_OK);
		ck_assert_int_eq(probe.written, 0);
		dmr_replica_result_t *r = pass ? rr : rl;
		/* 0: clean; 1: a payload byte of t2 slot 35000 on one backup */
		for (int step = 0; step < 3; step++) {
			if (step == 1) {
				uint8_t pb[8] = {0, 0x40};
				uint32_t bk = l.t[2].primary == 0 ? 1 : 0;
				write_mn(be, bk, o35 + DMR_REC_HDR, pb, 8);
			} else if (step == 2) { /* restored; a held lock word on a backup */
				uint8_t pb[8] = {0};
				for (uint32_t mn = 0; mn < 3; mn++)
					if (mn != l.t[2].primary)
						write_mn(be, mn, o35 + DMR_REC_HDR, pb, 8);
				uint64_t held = 0x8000000000000000ull;
				write_mn(be, b7, o7, &held, 8);
				probe.mn = b7;
				ck_assert_int_eq(
				    dmr_be_control(be, DMR_BE_CTL_MN_READ, &probe, &err), DMR_OK);
				ck_assert_int_eq(probe.written, 1);
			}
			if (pass == 0)
				ck_assert_int_eq(dmr_replica_verify_lazy(&l, be, &r[step], &err),
						 DMR_OK);
			else /* mn_memory(): the whole image written, read raw */
				ck_assert_int_eq(dmr_replica_verify_be(&l, be, &r[step], &err),
						 DMR_OK);
		}
		dmr_be_close(be);
	}
	for (int step = 0; step < 3; step++) {
		ck_assert_int_eq(rl[step].ok, rr[step].ok);
		ck_assert_uint_eq(rl[step].checks, rr[step].checks);
		ck_assert_uint_eq(rl[step].failures, rr[step].failures);
		ck_assert_str_eq(rl[step].first_failure, rr[step].first_failure);
	}
	ck_assert(rl[0].ok);
	ck_assert_uint_eq(rl[0].checks, 3ull * 40000 * 5); /* per slot: 3 locks, 2 backups */
	ck_assert(!rl[1].ok);
	ck_assert_msg(strstr(rl[1].first_failure, "table t2 slot 35000: backup on MN") &&
			  strstr(rl[1].first_failure, "(record byte 17: 0x40 != 0x00)"),
		      "%s", rl[1].first_failure);
	ck_assert(!rl[2].ok);
	char want[160];
	snprintf(want, sizeof(want),
		 "table t0 slot 7 on MN %u (backup): lock word 0x8000000000000000 is held after "
		 "the run",
		 b7);
	ck_assert_str_eq(rl[2].first_failure, want);
}
END_TEST

/* The shipped TPC-C sample, each transaction alone on one context (no
 * contention), on 3 MNs with 2 backups: every committed transaction's
 * READs, WRITEs and atomics equal the counts derived from its ops
 * (docs/PROTOCOLS.md "Derivation"): with o RO ops reading r records, L
 * records locked, W of them written, k rounds from the first one that
 * locks, M = 3, R = 2, V = o if validation runs (r > 1 or L > 0, r > 0):
 *  occ:  READs o + L + V, atomics L, WRITEs (W ? 1 + R : 0) + W (1 + R) + L
 *  ford: READs o + L + V + (W ? R : 0), atomics L,
 *        WRITEs M k + 2 W (1 + R) + W (1 + R) + (L - W)
 *  farm, drtmh: V' = o + L unless L = 0 and r <= 1 (then 0);
 *        READs o + L + V' + (W ? R : 0), atomics L,
 *        WRITEs W R (redo log) + W (1 + R) (data) + L (unlock)
 * Only transactions whose every op was issued and applied are compared
 * (W = L); the test fails if fewer than 100 of them committed. */
static void sample_counts(int proto)
{
	/* 2 warehouses: the shipped 40-warehouse sample's 5.2 GB on 3 MNs
	 * would make this test a memory benchmark */
	char path[DMR_TEST_TMP_MAX + 32];
	dmr_test_path(path, sizeof(path), "tpcc2.csv");
	if (access(path, R_OK) != 0) {
		dmr_test_run_t g =
		    dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--txns", "2500", "--regime",
				 "uniform", "--seed", "3", "--quiet", "-o", path, NULL);
		dmr_test_run_ok(&g);
		dmr_test_run_free(&g);
	}
	dmr_trace_reader_t *rd;
	dmr_err_t err;
	ck_assert_int_eq(dmr_trace_open(path, &rd, &err), DMR_OK);
	static fx_t f;
	fx_open(&f, dmr_trace_header(rd), 3, 2, proto);
	static dmr_trace_txn_t t;
	uint64_t compared = 0, types = 0;
	uint64_t tn[DMR_TRACE_MAX_TYPES] = {0}, tr[DMR_TRACE_MAX_TYPES] = {0},
		 tw[DMR_TRACE_MAX_TYPES] = {0}, ta[DMR_TRACE_MAX_TYPES] = {0};
	for (int n = 0; n < 2500 && dmr_trace_next(rd, &t, &err) == DMR_OK; n++) {
		dmr_txn_stats_t s0 = f.st;
		int out = run1(&f, &t);
		if (out == DMR_TXN_COMMITTED) { /* per type, for docs/PROTOCOLS.md */
			tn[t.type]++;
			tr[t.type] += f.st.reads - s0.reads;
			tw[t.type] += f.st.writes - s0.writes;
			ta[t.type] += f.st.atomics - s0.atomics;
		}
		if (out != DMR_TXN_COMMITTED || f.st.skipped_ops != s0.skipped_ops)
			continue;
		uint64_t o = 0, r = 0, L = 0, k = 0;
		int first = -1;
		for (uint32_t i = 0; i < t.nops; i++) {
			if (t.ops[i].kind == DMR_TOP_READ) {
				o++;
				r += t.ops[i].count;
			} else {
				L++;
				if (first < 0)
					first = t.ops[i].round;
			}
		}
		for (uint32_t i = 0; first >= 0 && i < t.nops; i++)
			if (t.ops[i].round >= first &&
			    (i == 0 || t.ops[i].round != t.ops[i - 1].round))
				k++; /* the rounds from the first that locks: one undo log each */
		uint64_t W = L;	     /* all applied: checked through the writes below */
		uint64_t V = (r == 0 || (r == 1 && L == 0)) ? 0 : o;
		uint64_t reads = o + L + V, writes, atomics = L;
		if (proto == DMR_TXN_PROTO_OCC)
			writes = (W ? 3 : 0) + 3 * W + L;
		else if (proto == DMR_TXN_PROTO_FORD)
			reads += W ? 2 : 0, writes = 3 * k + 6 * W + 3 * W + (L - W);
		else /* farm, drtmh: every read-write record's version validated */
			reads = o + L + ((L == 0 && r <= 1) ? 0 : o + L) + (W ? 2 : 0),
			writes = 2 * W + 3 * W + L;
		ck_assert_uint_eq(f.st.atomics - s0.atomics, atomics);
		ck_assert_uint_eq(f.st.reads - s0.reads, reads);
		if (f.st.writes - s0.writes != writes)
			continue; /* an absent record or a guard: W < L, not compared */
		compared++;
		types |= 1u << t.type;
	}
	const dmr_trace_hdr_t *hd = dmr_trace_header(rd);
	for (uint32_t y = 0; y < hd->ntypes; y++)
		if (tn[y])
			fprintf(stderr,
				"%s %s: %llu committed, per commit %.2f READs %.2f WRITEs %.2f "
				"atomics\n",
				dmr_txn_protocol_name(proto), hd->types[y],
				(unsigned long long)tn[y], (double)tr[y] / tn[y],
				(double)tw[y] / tn[y], (double)ta[y] / tn[y]);
	dmr_trace_close(rd);
	fprintf(stderr, "%s: %llu committed transactions compared (types 0x%llx)\n",
		dmr_txn_protocol_name(proto), (unsigned long long)compared,
		(unsigned long long)types);
	ck_assert_uint_ge(compared, 100);
	ck_assert_uint_ge(__builtin_popcountll(types), 3);
	dmr_replica_result_t rr;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &rr, &err), DMR_OK);
	ck_assert_msg(rr.ok, "%s", rr.first_failure);
	fx_close(&f);
}

START_TEST(occ_sample_counts_match_derivation)
{
	sample_counts(DMR_TXN_PROTO_OCC);
}
END_TEST

START_TEST(ford_sample_counts_match_derivation)
{
	sample_counts(DMR_TXN_PROTO_FORD);
}
END_TEST

START_TEST(farm_sample_counts_match_derivation)
{
	sample_counts(DMR_TXN_PROTO_FARM);
}
END_TEST

START_TEST(drtmh_sample_counts_match_derivation)
{
	sample_counts(DMR_TXN_PROTO_DRTMH);
}
END_TEST

START_TEST(protocol_names)
{
	int p = -1;
	dmr_err_t err;
	ck_assert_int_eq(dmr_txn_protocol_parse("ford", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_FORD);
	ck_assert_int_eq(dmr_txn_protocol_parse("occ", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_OCC);
	ck_assert_int_eq(dmr_txn_protocol_parse("farm", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_FARM);
	ck_assert_int_eq(dmr_txn_protocol_parse("drtmh", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_DRTMH);
	ck_assert_int_eq(dmr_txn_protocol_parse("motor", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_MOTOR);
	ck_assert_int_eq(dmr_txn_protocol_parse("nosuch", &p, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "--protocol"));
	ck_assert_str_eq(dmr_txn_protocol_name(DMR_TXN_PROTO_FORD), "ford");
}
END_TEST

START_TEST(ford_reads_locked_but_not_invisible)
{
	static dmr_trace_hdr_t h;
	static fx_t f;
	static dmr_trace_txn_t t;
	hdr3(&h);
	/* t0[1] (read-only in txn_rru) held by another context's tag: occ
	 * aborts (read_locked), FORD reads it and validates its version only;
	 * with the invisible bit FORD aborts too (CheckReadRO, INV_ABORT 1) */
	const struct {
		int proto;
		uint64_t lock;
		int out;
	} cases[] = {
	    {DMR_TXN_PROTO_OCC, 0x1001, DMR_TXN_GAVE_UP},
	    {DMR_TXN_PROTO_FORD, 0x1001, DMR_TXN_COMMITTED},
	    {DMR_TXN_PROTO_FORD, 0x1001 | DMR_LOCK_INVISIBLE, DMR_TXN_GAVE_UP},
	};
	for (int i = 0; i < 3; i++) {
		fx_open(&f, &h, 3, 2, cases[i].proto);
		txn_rru(&t);
		uint8_t *m0 = dmr_be_mn_memory(f.be, 0, NULL);
		memcpy(m0 + dmr_layout_rec(&f.l, 0, 1), &cases[i].lock, 8);
		ck_assert_int_eq(run1(&f, &t), cases[i].out);
		ck_assert_uint_eq(f.st.aborts[DMR_ABORT_READ_LOCKED],
				  cases[i].out == DMR_TXN_GAVE_UP);
		ck_assert_uint_eq(f.st.locks_taken, f.st.locks_released);
		fx_close(&f);
	}
}
END_TEST

/* farm and drtmh READ t2[3] (read-write in txn_rru) without a lock, so
 * another context's lock on it does not stop execution; their lock round
 * finds it held and aborts (CompareCheckLocking, CheckValidate: LOCK_WAIT
 * 0) without touching that lock word. A version changed between execution
 * and validation (here: t0[1]'s, by the test, before the first doorbell of
 * the lock round) aborts at validation, the lock taken released. */
START_TEST(farm_drtmh_lock_and_validation_aborts)
{
	static dmr_trace_hdr_t h;
	static fx_t f;
	static dmr_trace_txn_t t;
	hdr3(&h);
	const int protos[2] = {DMR_TXN_PROTO_FARM, DMR_TXN_PROTO_DRTMH};
	for (int i = 0; i < 2; i++) {
		fx_open(&f, &h, 3, 2, protos[i]);
		txn_rru(&t);
		uint8_t *m2 = dmr_be_mn_memory(f.be, 2, NULL);
		uint64_t held = 0x1001;
		memcpy(m2 + dmr_layout_rec(&f.l, 2, 3), &held, 8);
		ck_assert_int_eq(run1(&f, &t), DMR_TXN_GAVE_UP);
		ck_assert_uint_eq(f.st.aborts[DMR_ABORT_LOCK], 1);
		ck_assert_uint_eq(f.st.locks_taken, 0);
		ck_assert_uint_eq(rec_word(&f, 2, 2, 3, 0), held);
		/* the execution READs, then farm's CAS alone, drtmh's CAS with
		 * the version READs of t2[3], t0[1] and t1[2] */
		ck_assert_uint_eq(f.st.reads, i == 0 ? 3 : 6);
		ck_assert_uint_eq(f.st.atomics, 1);
		fx_close(&f);

		/* validation: t0[1]'s version moves after execution READ it */
		fx_open(&f, &h, 3, 2, protos[i]);
		txn_rru(&t);
		dmr_txn_outcome_t out;
		ck_assert_int_eq(dmr_txn_start(&f.ctx, &t, &out), DMR_OK);
		ck_assert_int_eq(out, DMR_TXN_RUNNING);
		uint8_t *m0 = dmr_be_mn_memory(f.be, 0, NULL);
		uint64_t ver = DMR_VER_PRESENT | 7;
		memcpy(m0 + dmr_layout_rec(&f.l, 0, 1) + 8, &ver, 8);
		while (out == DMR_TXN_RUNNING) {
			dmr_wc_t wc[8];
			int k = dmr_be_poll(f.be, 0, wc, 8);
			ck_assert_int_gt(k, 0);
			for (int j = 0; j < k && out == DMR_TXN_RUNNING; j++)
				ck_assert_int_eq(dmr_txn_on_wc(&f.ctx, &wc[j], &out), DMR_OK);
		}
		ck_assert_int_eq(out, DMR_TXN_GAVE_UP);
		ck_assert_uint_eq(f.st.aborts[DMR_ABORT_VALIDATION], 1);
		ck_assert_uint_eq(f.st.locks_taken, 1);
		ck_assert_uint_eq(f.st.locks_released, 1);
		ck_assert_uint_eq(rec_word(&f, 2, 2, 3, 0), 0);
		ck_assert_uint_eq(rec_word(&f, 2, 2, 3, 2), 0); /* nothing written */
		fx_close(&f);
	}
}
END_TEST

/* The reference walk core/replica.c makes fast: every record of every
 * replica, one by one (the verifier's order: table, slot, replica). */
static void replica_ref(const dmr_layout_t *l, uint8_t *const *m, uint64_t *checks,
			uint64_t *failures, char *first, size_t size)
{
	*checks = *failures = 0;
	first[0] = 0;
	for (uint32_t t = 0; t < l->ntables; t++) {
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t, r);
		for (uint64_t s = 0; s < l->t[t].rows; s++) {
			uint64_t off = dmr_layout_rec(l, t, s);
			for (uint32_t j = 0; j < nr; j++) {
				uint64_t lock;
				memcpy(&lock, m[r[j]] + off, 8);
				++*checks;
				if (lock != 0 && (*failures)++ == 0)
					snprintf(first, size, "lock %s %llu %u", l->names[t],
						 (unsigned long long)s, r[j]);
				if (j == 0)
					continue;
				++*checks;
				if (memcmp(m[r[0]] + off + 8, m[r[j]] + off + 8,
					   l->t[t].rec_bytes - 8) != 0 &&
				    (*failures)++ == 0)
					snprintf(first, size, "rec %s %llu %u", l->names[t],
						 (unsigned long long)s, r[j]);
			}
		}
	}
}

static const uint8_t *regions_mem(void *arg, uint32_t mn, uint64_t *len_p)
{
	uint8_t **m = arg;
	*len_p = UINT64_MAX;
	return m[mn];
}

/* core/replica.c compares blocks of about 1 MiB and walks a block record
 * by record only when it is not clean: on tables of 200,000 rows (half
 * loaded, the rest all zero) on 3 MNs with 2 backups, each fault planted
 * (a backup byte in a block's middle, in the zero part, the last record;
 * a lock word on a primary, on a backup; two faults in different blocks)
 * gives the reference walk's count of checks and failures, and its first
 * failure is the one the reference names first. */
START_TEST(replica_verify_blocks_match_record_walk)
{
	static dmr_trace_hdr_t h;
	hdr3(&h);
	for (int i = 0; i < 3; i++) {
		h.tables[i].rows = 200000;
		h.tables[i].payload_bytes = 24 + 8 * i; /* records of 40, 48, 56 bytes */
		h.tables[i].loaded = 100000;
	}
	static dmr_layout_t l;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 1, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 2, &err), DMR_OK);
	uint8_t *m[3];
	for (int i = 0; i < 3; i++) {
		m[i] = calloc(1, l.total);
		ck_assert_ptr_nonnull(m[i]);
		dmr_layout_load_mn(&l, i, m[i]);
	}
	const struct {
		int mn, table, word; /* word -1: lock word; else payload byte */
		uint64_t slot;
	} faults[][2] = {
	    {{-1, 0, 0, 0}, {-1, 0, 0, 0}},	    /* none */
	    {{1, 2, 3, 54321}, {-1, 0, 0, 0}},	    /* t2 backup, a block's middle */
	    {{0, 1, 0, 150000}, {-1, 0, 0, 0}},	    /* t1 backup, the zero part */
	    {{2, 0, 5, 199999}, {-1, 0, 0, 0}},	    /* t0 backup, the last record */
	    {{0, 0, -1, 77777}, {-1, 0, 0, 0}},	    /* t0 primary lock */
	    {{0, 2, -1, 190000}, {-1, 0, 0, 0}},    /* t2 backup lock, zero part */
	    {{2, 1, 7, 30000}, {1, 1, -1, 170000}}, /* t1: two blocks */
	    {{2, 2, -1, 12}, {1, 0, 2, 99999}},	    /* t2 primary lock, t0 backup */
	};
	for (size_t c = 0; c < sizeof(faults) / sizeof(faults[0]); c++) {
		for (int k = 0; k < 2; k++) {
			if (faults[c][k].mn < 0)
				continue;
			uint8_t *rec = m[faults[c][k].mn] +
				       dmr_layout_rec(&l, faults[c][k].table, faults[c][k].slot);
			if (faults[c][k].word < 0)
				rec[3] ^= 0x11;
			else
				rec[DMR_REC_HDR + faults[c][k].word] ^= 0x22;
		}
		/* the verifier first: untouched pages are still untouched (its
		 * mincore path) in the first case */
		dmr_replica_result_t rr;
		ck_assert_int_eq(dmr_replica_verify(&l, regions_mem, m, &rr, &err), DMR_OK);
		uint64_t checks, failures;
		char first[128];
		replica_ref(&l, m, &checks, &failures, first, sizeof(first));
		ck_assert_uint_eq(rr.checks, checks);
		ck_assert_uint_eq(rr.checks, 3ull * 200000 * 5);
		ck_assert_uint_eq(rr.failures, failures);
		ck_assert_int_eq(rr.ok, failures == 0);
		ck_assert_uint_eq(failures, c == 0 ? 0 : (c < 6 ? 1 : 2));
		if (failures) { /* the same record named first */
			char tbl[16];
			unsigned long long slot;
			unsigned mn;
			ck_assert_int_eq(sscanf(first, "%*s %15s %llu %u", tbl, &slot, &mn), 3);
			char want[64];
			snprintf(want, sizeof(want), "table %s slot %llu", tbl, slot);
			ck_assert_msg(strstr(rr.first_failure, want) != NULL, "%s: want %s",
				      rr.first_failure, want);
			snprintf(want, sizeof(want), "MN %u", mn);
			ck_assert_msg(strstr(rr.first_failure, want) != NULL, "%s: want %s",
				      rr.first_failure, want);
		}
		for (int k = 0; k < 2; k++) { /* undo */
			if (faults[c][k].mn < 0)
				continue;
			uint8_t *rec = m[faults[c][k].mn] +
				       dmr_layout_rec(&l, faults[c][k].table, faults[c][k].slot);
			if (faults[c][k].word < 0)
				rec[3] ^= 0x11;
			else
				rec[DMR_REC_HDR + faults[c][k].word] ^= 0x22;
		}
	}
	for (int i = 0; i < 3; i++)
		free(m[i]);
}
END_TEST

/* A lock word that begins on a page never touched and ends on the next
 * one (records of 36 bytes: not 8-byte aligned) is read all the same
 * (no backups: no backup's bytes to differ from, only the lock word
 * itself tells). */
START_TEST(replica_verify_lock_across_pages)
{
	static dmr_trace_hdr_t h;
	hdr3(&h);
	for (int i = 0; i < 3; i++) {
		h.tables[i].rows = 200000;
		h.tables[i].payload_bytes = 20;
		h.tables[i].loaded = 100000;
	}
	static dmr_layout_t l;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 1, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 0, &err), DMR_OK);
	ck_assert_uint_eq(l.t[0].rec_bytes, 36);
	uint8_t *m[3];
	for (int i = 0; i < 3; i++) {
		m[i] = calloc(1, l.total);
		ck_assert_ptr_nonnull(m[i]);
		dmr_layout_load_mn(&l, i, m[i]);
	}
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t s = 150000;
	while ((uintptr_t)(m[0] + dmr_layout_rec(&l, 0, s)) % (uintptr_t)pg <= (uintptr_t)pg - 8)
		s++;
	uint8_t *lock = m[0] + dmr_layout_rec(&l, 0, s); /* t0's primary: MN 0 */
	lock[7] = 0x80;					 /* on the second page */
	dmr_replica_result_t rr;
	ck_assert_int_eq(dmr_replica_verify(&l, regions_mem, m, &rr, &err), DMR_OK);
	ck_assert_uint_eq(rr.failures, 1);
	char want[96];
	snprintf(want, sizeof(want), "table t0 slot %llu on MN 0 (primary): lock word",
		 (unsigned long long)s);
	ck_assert_msg(strstr(rr.first_failure, want) != NULL, "%s", rr.first_failure);
	for (int i = 0; i < 3; i++)
		free(m[i]);
}
END_TEST

START_TEST(addr_cache_is_lru)
{
	dmr_acache_t *c;
	dmr_err_t err;
	ck_assert_int_eq(dmr_acache_create(0, &c, &err), DMR_ERR_RANGE);
	ck_assert_int_eq(dmr_acache_create(3, &c, &err), DMR_OK);
	uint64_t a = 0;
	ck_assert_int_eq(dmr_acache_get(c, 1, &a), 0);
	dmr_acache_put(c, 1, 100);
	dmr_acache_put(c, 2, 200);
	dmr_acache_put(c, 3, 300);
	ck_assert_int_eq(dmr_acache_get(c, 1, &a), 1); /* 1 is now the most recent */
	ck_assert_uint_eq(a, 100);
	dmr_acache_put(c, 4, 400); /* evicts 2, the least recent */
	ck_assert_int_eq(dmr_acache_get(c, 2, &a), 0);
	ck_assert_int_eq(dmr_acache_get(c, 3, &a), 1);
	ck_assert_int_eq(dmr_acache_get(c, 4, &a), 1);
	ck_assert_uint_eq(a, 400);
	dmr_acache_put(c, 4, 401); /* update: no eviction */
	ck_assert_uint_eq(dmr_acache_size(c), 3);
	ck_assert_int_eq(dmr_acache_get(c, 1, &a), 1);
	ck_assert_int_eq(dmr_acache_get(c, 4, &a), 1);
	ck_assert_uint_eq(a, 401);
	dmr_acache_destroy(c);
	/* against a model: 64 entries, 20000 random keys out of 200 */
	ck_assert_int_eq(dmr_acache_create(64, &c, &err), DMR_OK);
	uint64_t model[64], age[64], n = 0, now = 0, x = 88172645463325252ull;
	for (int it = 0; it < 20000; it++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t k = dmr_acache_key(x % 3, (x >> 8) % 67);
		int in = -1;
		for (uint64_t j = 0; j < n; j++)
			if (model[j] == k)
				in = (int)j;
		int hit = dmr_acache_get(c, k, &a);
		ck_assert_int_eq(hit, in >= 0);
		if (hit) {
			ck_assert_uint_eq(a, k * 7);
			age[in] = ++now;
			continue;
		}
		dmr_acache_put(c, k, k * 7);
		if (n < 64) {
			model[n] = k, age[n++] = ++now;
		} else {
			uint64_t old = 0;
			for (uint64_t j = 1; j < n; j++)
				if (age[j] < age[old])
					old = j;
			model[old] = k, age[old] = ++now;
		}
	}
	dmr_acache_destroy(c);
}
END_TEST

START_TEST(hash_index_layout_and_refusal)
{
	static dmr_trace_hdr_t h;
	static dmr_layout_t l;
	hdr3(&h);
	h.tables[1].rows = 100;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 1, 4096, &err), DMR_OK);
	uint64_t total = l.total;
	ck_assert_int_eq(dmr_layout_index(&l, 10, &err), DMR_ERR_RANGE);
	ck_assert_str_eq(err.msg, "--index-buckets 10: table t1 has 100 keys, more than its 80 "
				  "slots (8 per bucket); it needs at least 13 buckets");
	ck_assert_uint_eq(l.total, total);
	ck_assert_int_eq(dmr_layout_index(&l, 0, &err), DMR_OK);
	ck_assert_uint_eq(l.t[0].idx_buckets, 4);
	ck_assert_uint_eq(l.t[1].idx_buckets, 25);
	ck_assert_uint_ge(l.t[0].idx_base, total);
	ck_assert_uint_eq(l.total, l.t[2].idx_base + 4 * DMR_IDX_BUCKET_BYTES);
	uint8_t *mem = calloc(1, l.total);
	dmr_layout_load_mn(&l, 0, mem);
	for (uint64_t k = 0; k < 100; k++) { /* every key in its bucket */
		const uint8_t *b = mem + dmr_layout_bucket(&l, 1, k);
		int found = 0;
		for (uint32_t s = 0; s < DMR_IDX_SLOTS; s++) {
			uint64_t key, addr;
			memcpy(&key, b + 16 * s, 8);
			memcpy(&addr, b + 16 * s + 8, 8);
			if (key == k) {
				found++;
				ck_assert_uint_eq(addr, dmr_layout_rec(&l, 1, k));
			}
		}
		ck_assert_int_eq(found, 1);
	}
	free(mem);
}
END_TEST

static void fx_index(fx_t *f, uint64_t cache)
{
	static dmr_trace_hdr_t h;
	hdr3(&h);
	memset(f, 0, sizeof(*f));
	f->h = h;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, 1, 64 * 1024, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&f->l, 3, 2, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_index(&f->l, 0, &err), DMR_OK);
	dmr_be_config_t cfg = {.backend = "shm",
			       .mns = 3,
			       .cns = 1,
			       .workers = 1,
			       .mr_size = (f->l.total + 4095) & ~4095ull};
	ck_assert_int_eq(dmr_be_open(&cfg, &f->be, &err), DMR_OK);
	for (uint32_t m = 0; m < 3; m++)
		dmr_layout_load_mn(&f->l, m, dmr_be_mn_memory(f->be, m, NULL));
	ck_assert_int_eq(dmr_txn_engine_init(&f->eng, f->be, &f->l, 0, 0, &err), DMR_OK);
	f->eng.index = DMR_TXN_INDEX_HASH;
	f->eng.workers_per_cn = 1;
	static dmr_acache_t *ac[1];
	ac[0] = NULL;
	if (cache) {
		ck_assert_int_eq(dmr_acache_create(cache, &ac[0], &err), DMR_OK);
		f->eng.acache = ac;
	}
	ck_assert_int_eq(dmr_txn_ctx_init(&f->ctx, &f->eng, &f->st, 0, 0, &err), DMR_OK);
}

START_TEST(hash_index_reads_and_cache_hits)
{
	static fx_t f;
	static dmr_trace_txn_t t;
	txn_rru(&t);
	/* no cache: each of the 3 records' buckets READ first, on its primary */
	fx_index(&f, 0);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.index_reads, 3);
	ck_assert_uint_eq(f.st.reads, 5 + 3);
	ck_assert_uint_eq(f.st.cache_hits + f.st.cache_misses, 0);
	dmr_be_stats_t bs;
	dmr_be_stats(f.be, &bs);
	ck_assert_uint_eq(bs.doorbells, 9 + 3);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.index_reads, 6);
	ck_assert_uint_eq(rec_word(&f, 0, 2, 3, 2), 10);
	fx_close(&f);
	/* a cache of 2 entries: 3 misses, then the 2 most recent hit */
	fx_index(&f, 2);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.cache_misses, 3);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	/* keys put in op order t0, t1, t2 once the buckets came back: t1 and
	 * t2 stay; the next round looks all three up before it puts: t0
	 * misses, t1 and t2 hit */
	ck_assert_uint_eq(f.st.cache_hits, 2);
	ck_assert_uint_eq(f.st.cache_misses, 4);
	ck_assert_uint_eq(f.st.index_reads, 4);
	dmr_acache_destroy(f.eng.acache[0]);
	fx_close(&f);
	fx_index(&f, 16);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_int_eq(run1(&f, &t), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.cache_misses, 3);
	ck_assert_uint_eq(f.st.cache_hits, 3);
	ck_assert_uint_eq(f.st.index_reads, 3);
	ck_assert_uint_eq(f.st.reads, 2 * 5 + 3);
	/* a bucket that lost its key: the lookup fails naming table and key */
	uint8_t *m0 = dmr_be_mn_memory(f.be, 0, NULL);
	memset(m0 + dmr_layout_bucket(&f.l, 0, 5), 0xff, DMR_IDX_BUCKET_BYTES);
	t.ops[0].key = 5;
	dmr_txn_outcome_t out;
	ck_assert_int_eq(dmr_txn_start(&f.ctx, &t, &out), DMR_OK);
	dmr_wc_t wc[8];
	int k = dmr_be_poll(f.be, 0, wc, 8);
	dmr_status_t st = DMR_OK;
	for (int i = 0; i < k && st == DMR_OK; i++)
		st = dmr_txn_on_wc(&f.ctx, &wc[i], &out);
	ck_assert_int_eq(st, DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(f.ctx.err.msg, "index: table t0 key 5"));
	dmr_acache_destroy(f.eng.acache[0]);
	fx_close(&f);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("replica", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("replica");
	TCase *tc = tcase_create("mns");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, placement_follows_ford);
	tcase_add_test(tc, occ_counts_on_three_mns);
	tcase_add_test(tc, ford_counts_on_three_mns);
	tcase_add_test(tc, replica_verify_names_corrupted_backup_and_held_lock);
	tcase_add_test(tc, replica_verify_lazy_matches_raw);
	tcase_add_test(tc, occ_sample_counts_match_derivation);
	tcase_add_test(tc, ford_sample_counts_match_derivation);
	tcase_add_test(tc, farm_counts_on_three_mns);
	tcase_add_test(tc, drtmh_counts_on_three_mns);
	tcase_add_test(tc, farm_sample_counts_match_derivation);
	tcase_add_test(tc, drtmh_sample_counts_match_derivation);
	tcase_add_test(tc, protocol_names);
	tcase_add_test(tc, ford_reads_locked_but_not_invisible);
	tcase_add_test(tc, farm_drtmh_lock_and_validation_aborts);
	tcase_add_test(tc, replica_verify_blocks_match_record_walk);
	tcase_add_test(tc, replica_verify_lock_across_pages);
	tcase_add_test(tc, addr_cache_is_lru);
	tcase_add_test(tc, hash_index_layout_and_refusal);
	tcase_add_test(tc, hash_index_reads_and_cache_hits);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
