/*
 * tests/integration/test_rpc.c - the RPC access path (issue 14 lever A1;
 * backend.h dmr_be_rpc, core/txn_rpc.c, docs/AURA.md "A1").
 *
 * Backend level: on sim an RPC's handler runs on the MN's region and its
 * completion carries the response bytes; two RPCs to one MN core are
 * served one after the other (their completions exactly one service time
 * apart: mn_rpc_req_ns + accesses x mn_rpc_op_ns), to two cores together;
 * shm runs the handler inline; the wrappers, a profile without an MN CPU
 * and bad requests are refused. Through `dmreplay run`: --rpc all and
 * --rpc half (both paths mixed) verify on sim and shm, occ and ford; the
 * sim run is deterministic; 1 MN core against 4 (TPC-C, CPU-bound): 4x
 * the throughput, the 1-core MN CPU saturated; bad input is refused.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

/* A copy of cx6dx-100g with the MN CPU fields replaced (cores, ns per
 * request, ns per record access; cores 0: the three fields removed). */
static void profile(char *buf, size_t len, const char *name, int cores, int req_ns, int op_ns)
{
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/models/cx6dx-100g.json", dmr_test_src);
	char *t = dmr_test_read_text(src);
	ck_assert_ptr_nonnull(t);
	char *p = strstr(t, ",\n    \"mn_rpc_cores\"");
	ck_assert_ptr_nonnull(p);
	*p = 0; /* the three fields are the last of "params" */
	char *out = malloc(strlen(t) + 1024);
	ck_assert_ptr_nonnull(out);
	if (cores)
		sprintf(
		    out,
		    "%s,\n    \"mn_rpc_cores\": {\"value\": %d, \"unit\": \"cores\", \"source\": "
		    "\"test\"},\n    \"mn_rpc_req_ns\": {\"value\": %d, \"unit\": \"ns\", "
		    "\"source\": \"test\"},\n    \"mn_rpc_op_ns\": {\"value\": %d, \"unit\": "
		    "\"ns\", \"source\": \"test\"}\n  }\n}\n",
		    t, cores, req_ns, op_ns);
	else
		sprintf(out, "%s\n  }\n}\n", t);
	dmr_test_path(buf, len, name);
	dmr_test_write_file(buf, out);
	free(out);
	free(t);
}

static dmr_be_t *open_be(const char *backend, const char *prof, uint32_t cns)
{
	dmr_be_config_t cfg = {.backend = backend,
			       .mns = 1,
			       .cns = cns,
			       .workers = 1,
			       .mr_size = 1 << 20,
			       .profile = prof};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "open %s: %s", backend, err.msg);
	return be;
}

/* The test handler: adds 1 to the MN's word 0 and notes the value it saw
 * in *arg; answers 16 bytes. */
static uint32_t count_handler(void *arg, uint8_t *mem, uint64_t mem_len)
{
	ck_assert_uint_eq(mem_len, 1u << 20);
	uint64_t v;
	memcpy(&v, mem, 8);
	*(uint64_t *)arg = v;
	v++;
	memcpy(mem, &v, 8);
	return 16;
}

/* One RPC from each of the `cns` workers (one per CN) to MN 0 at time 0,
 * 2 record accesses each; the completion times into t[w], ps. */
static void two_rpcs(dmr_be_t *be, uint32_t cns, uint64_t *seen, uint64_t *t)
{
	dmr_err_t err;
	for (uint32_t w = 0; w < cns; w++) {
		dmr_be_rpc_t r = {.wr_id = 100 + w,
				  .handler = count_handler,
				  .arg = &seen[w],
				  .req_bytes = 64,
				  .resp_cap = 16,
				  .accesses = 2};
		ck_assert_msg(dmr_be_rpc(be, w, 0, &r, &err) == DMR_OK, "%s", err.msg);
	}
	uint32_t got = 0;
	int w;
	while (got < cns && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		dmr_wc_t wc;
		while (dmr_be_poll(be, (uint32_t)w, &wc, 1) == 1) {
			ck_assert_uint_eq(wc.wr_id, 100u + (uint32_t)w);
			ck_assert_uint_eq(wc.opcode, DMR_WR_RPC);
			ck_assert_uint_eq(wc.status, DMR_WC_SUCCESS);
			ck_assert_uint_eq(wc.byte_len, 16);
			ck_assert_uint_eq(wc.mn, 0);
			t[w] = dmr_be_now(be, (uint32_t)w);
			got++;
		}
	}
	ck_assert_uint_eq(got, cns);
}

START_TEST(test_sim_cores_queue)
{
	char p1[PATH_MAX], p2[PATH_MAX];
	/* 1000 ns + 2 x 500 ns = 2000 ns per request */
	profile(p1, sizeof(p1), "one-core.json", 1, 1000, 500);
	profile(p2, sizeof(p2), "two-cores.json", 2, 1000, 500);
	uint64_t seen[2], t[2];
	dmr_be_t *be = open_be("sim", p1, 2);
	two_rpcs(be, 2, seen, t);
	/* one core: the second request waits for the first, then takes as
	 * long; the answers' paths are alike: exactly one service apart */
	uint64_t d = t[0] > t[1] ? t[0] - t[1] : t[1] - t[0];
	ck_assert_uint_eq(d, 2000000u);
	ck_assert((seen[0] == 0 && seen[1] == 1) || (seen[0] == 1 && seen[1] == 0));
	ck_assert_uint_eq(*(uint64_t *)dmr_be_mn_memory(be, 0, NULL), 2);
	dmr_be_stats_t st;
	dmr_be_stats(be, &st);
	ck_assert_uint_eq(st.rpcs, 2);
	ck_assert_uint_eq(st.rpc_busy_ps, 4000000u);
	ck_assert_uint_eq(st.rpc_cores, 1);
	ck_assert_uint_eq(st.verbs, 0); /* RPCs are not one-sided operations */
	dmr_be_mn_stats_t ms;
	dmr_err_t err;
	ck_assert(dmr_be_control(be, DMR_BE_CTL_MN_STATS, &ms, &err) == DMR_OK);
	ck_assert_uint_eq(ms.rpcs, 2);
	ck_assert_uint_eq(ms.rpc_busy_ps, 4000000u);
	uint64_t one_first = t[0] < t[1] ? t[0] : t[1];
	dmr_be_close(be);
	be = open_be("sim", p2, 2);
	two_rpcs(be, 2, seen, t);
	/* two cores: served together, apart by what the MN link and NIC
	 * take to pass the second request behind the first (< 100 ns) */
	d = t[0] > t[1] ? t[0] - t[1] : t[1] - t[0];
	ck_assert_uint_lt(d, 100000u);
	ck_assert_uint_eq(t[0] < t[1] ? t[0] : t[1], one_first);
	dmr_be_close(be);
}
END_TEST

START_TEST(test_shm_inline_and_refusals)
{
	uint64_t seen = 7;
	dmr_err_t err;
	dmr_be_t *be = open_be("shm", NULL, 1);
	dmr_be_rpc_t r = {.wr_id = 5,
			  .handler = count_handler,
			  .arg = &seen,
			  .req_bytes = 8,
			  .resp_cap = 16,
			  .accesses = 1};
	ck_assert_msg(dmr_be_rpc(be, 0, 0, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(seen, 0); /* ran inline, before the call returned */
	ck_assert_uint_eq(*(uint64_t *)dmr_be_mn_memory(be, 0, NULL), 1);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_poll(be, 0, &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 5);
	ck_assert_uint_eq(wc.opcode, DMR_WR_RPC);
	ck_assert_uint_eq(wc.byte_len, 16);
	/* bad requests: before the backend */
	dmr_be_rpc_t bad = r;
	bad.handler = NULL;
	ck_assert_int_eq(dmr_be_rpc(be, 0, 0, &bad, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "no handler"));
	bad = r;
	bad.req_bytes = 0;
	ck_assert_int_eq(dmr_be_rpc(be, 0, 0, &bad, &err), DMR_ERR_INVALID);
	ck_assert_int_eq(dmr_be_rpc(be, 0, 1, &r, &err), DMR_ERR_RANGE);
	/* DMR_WR_RPC is a completion opcode, never a WR's */
	uint8_t b[8];
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_RPC, 1, b, 0, 8, 0, 0, &err),
			 DMR_ERR_INVALID);
	dmr_be_close(be);
	/* the wrappers do not wrap it */
	ck_assert(!(dmr_be_caps_of("fault:sim") & DMR_BE_CAP_RPC));
	ck_assert(dmr_be_caps_of("sim") & DMR_BE_CAP_RPC);
	be = open_be("fault:sim", NULL, 1);
	ck_assert_int_eq(dmr_be_rpc(be, 0, 0, &r, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "fault"));
	dmr_be_close(be);
	/* a profile without an MN CPU */
	char p0[PATH_MAX];
	profile(p0, sizeof(p0), "no-cpu.json", 0, 0, 0);
	be = open_be("sim", p0, 1);
	ck_assert_int_eq(dmr_be_rpc(be, 0, 0, &r, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "mn_rpc_cores"));
	dmr_be_close(be);
}
END_TEST

static void gen_tpcc(char *buf, size_t len)
{
	dmr_test_path(buf, len, "tpcc.csv");
	if (dmr_test_exists(buf))
		return;
	dmr_test_run_t r =
	    dmr_test_dmr("gen", "tpcc", "--warehouses", "40", "--regime", "extreme", "--txns",
			 "3000", "--seed", "1", "--quiet", "-o", buf, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* dmreplay run on the TPC-C trace at 2 x 4 x 2 with --rpc mode, backend,
 * protocol and a profile (NULL: the default) into dir; must verify. */
static void run(const char *dir, const char *mode, const char *backend, const char *proto,
		const char *prof)
{
	char tr[PATH_MAX];
	gen_tpcc(tr, sizeof(tr));
	const char *args[40] = {"run", "--trace", tr,	"--backend", backend, "--protocol",
				proto, "--rpc",	  mode, "--cns",     "2",     "--threads",
				"4",   "--coros", "2",	"--seed",    "3",     "--retries",
				"3",   "--out",	  dir};
	int n = 21;
	if (prof) {
		args[n++] = "--profile";
		args[n++] = prof;
	}
	args[n] = NULL;
	dmr_test_run_t r = dmr_test_dmrv(args);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "%s %s %s: stdout:\n%s", mode,
		      backend, proto, r.out);
	dmr_test_run_free(&r);
}

/* Every path mix verifies: all by RPC, half (odd ids by RPC, the others
 * one-sided, both on the same lock words), on sim and shm, occ and ford. */
START_TEST(test_runs_verify)
{
	static const char *const be[] = {"sim", "shm"};
	static const char *const pr[] = {"occ", "ford"};
	static const char *const md[] = {"all", "half"};
	for (int b = 0; b < 2; b++)
		for (int p = 0; p < 2; p++)
			for (int m = 0; m < 2; m++) {
				char name[64], d[PATH_MAX];
				snprintf(name, sizeof(name), "v-%s-%s-%s", be[b], pr[p], md[m]);
				dmr_test_path(d, sizeof(d), name);
				run(d, md[m], be[b], pr[p], NULL);
				dmr_test_summary_t s;
				dmr_test_summary_load(&s, d, "summary.csv");
				unsigned long long tried = dmr_test_colu(&s, "tried");
				unsigned long long rpcs = dmr_test_colu(&s, "rpcs");
				ck_assert_uint_eq(dmr_test_colu(&s, "rpc_fallbacks"), 0);
				if (m == 0) {
					/* every attempt one RPC: no one-sided verb */
					ck_assert_uint_eq(rpcs, tried);
					ck_assert_uint_eq(dmr_test_colu(&s, "verbs"), 0);
				} else {
					/* both paths ran, and got in each other's way */
					ck_assert_uint_gt(rpcs, 0);
					ck_assert_uint_lt(rpcs, tried);
					ck_assert_uint_gt(dmr_test_colu(&s, "verbs"), 0);
					ck_assert_uint_gt(dmr_test_colu(&s, "abort_rpc_locked"), 0);
				}
				if (b == 0 && m == 0) /* sim, all: the MN executes them one
							 at a time, so nothing conflicts */
					ck_assert_uint_eq(dmr_test_colu(&s, "committed"), tried);
				dmr_test_summary_free(&s);
			}
}
END_TEST

/* Several MNs: YCSB's one table sits on MN 0 of 2, so every transaction
 * goes there by RPC (and verifies); TPC-C's tables are spread over both
 * MNs, and with a backup nothing goes by RPC: every transaction runs
 * one-sided, counted as a fallback, and verifies. */
START_TEST(test_several_mns)
{
	char wl[PATH_MAX], y[PATH_MAX], tr[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX];
	snprintf(wl, sizeof(wl), "%s/workloada", dmr_test_ycsb_dir());
	dmr_test_path(y, sizeof(y), "ycsba.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "ycsb", "--workload", wl, "--txns", "3000", "--seed",
					"2", "--quiet", "-o", y, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	gen_tpcc(tr, sizeof(tr));
	dmr_test_path(d0, sizeof(d0), "m-ycsb");
	dmr_test_path(d1, sizeof(d1), "m-tpcc");
	r = dmr_test_dmr("run", "--trace", y, "--mns", "2", "--rpc", "all", "--cns", "2",
			 "--threads", "4", "--coros", "2", "--out", d0, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", tr, "--mns", "2", "--backups", "1", "--rpc", "all",
			 "--cns", "2", "--threads", "4", "--coros", "2", "--out", d1, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_summary_t s0, s1;
	dmr_test_summary_load(&s0, d0, "summary.csv");
	dmr_test_summary_load(&s1, d1, "summary.csv");
	ck_assert_uint_eq(dmr_test_colu(&s0, "rpcs"), dmr_test_colu(&s0, "tried"));
	ck_assert_uint_eq(dmr_test_colu(&s0, "rpc_fallbacks"), 0);
	ck_assert_uint_eq(dmr_test_colu(&s0, "verbs"), 0);
	ck_assert_uint_eq(dmr_test_colu(&s1, "rpcs"), 0);
	ck_assert_uint_eq(dmr_test_colu(&s1, "rpc_fallbacks"), dmr_test_colu(&s1, "txns"));
	ck_assert_str_eq(dmr_test_col(&s1, "rpc"), "all");
	dmr_test_summary_free(&s0);
	dmr_test_summary_free(&s1);
}
END_TEST

START_TEST(test_sim_deterministic)
{
	char d0[PATH_MAX], d1[PATH_MAX];
	dmr_test_path(d0, sizeof(d0), "det-0");
	dmr_test_path(d1, sizeof(d1), "det-1");
	run(d0, "half", "sim", "occ", NULL);
	run(d1, "half", "sim", "occ", NULL);
	dmr_test_assert_same_file(d0, d1, "timeseries.csv");
	dmr_test_assert_same_file(d0, d1, "types.csv");
	dmr_test_summary_t s0, s1;
	dmr_test_summary_load(&s0, d0, "summary.csv");
	dmr_test_summary_load(&s1, d1, "summary.csv");
	static const char *const cols[] = {"tried", "committed",  "rpcs",	 "abort_rpc_locked",
					   "verbs", "sim_time_s", "mn_cpu_util", "p99_us"};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		ck_assert_str_eq(dmr_test_col(&s0, cols[i]), dmr_test_col(&s1, cols[i]));
	dmr_test_summary_free(&s0);
	dmr_test_summary_free(&s1);
}
END_TEST

/* TPC-C by RPC on an MN of 1 core and of 4 (100 ns per request and per
 * record access): the MN CPU is the bottleneck, so 4 cores carry 4x the
 * transactions (3.5x at least) at lower latency. */
START_TEST(test_cores_bound_throughput)
{
	char p1[PATH_MAX], p4[PATH_MAX], d1[PATH_MAX], d4[PATH_MAX];
	profile(p1, sizeof(p1), "c1.json", 1, 100, 100);
	profile(p4, sizeof(p4), "c4.json", 4, 100, 100);
	dmr_test_path(d1, sizeof(d1), "q-1");
	dmr_test_path(d4, sizeof(d4), "q-4");
	run(d1, "all", "sim", "occ", p1);
	run(d4, "all", "sim", "occ", p4);
	dmr_test_summary_t s1, s4;
	dmr_test_summary_load(&s1, d1, "summary.csv");
	dmr_test_summary_load(&s4, d4, "summary.csv");
	double t1 = dmr_test_cold(&s1, "committed_tps"), t4 = dmr_test_cold(&s4, "committed_tps");
	ck_assert_double_gt(dmr_test_cold(&s1, "mn_cpu_util"), 0.99);
	ck_assert_double_gt(t4, 3.5 * t1);
	ck_assert_double_le(t4, 4.05 * t1);
	ck_assert_double_gt(dmr_test_cold(&s1, "p50_us"), 2 * dmr_test_cold(&s4, "p50_us"));
	/* the 1-core MN's throughput is its service rate: busy time / requests
	 * is the mean service, its inverse the rate */
	double svc_s = dmr_test_cold(&s1, "mn_cpu_util") * dmr_test_cold(&s1, "sim_time_s") /
		       (double)dmr_test_colu(&s1, "rpcs");
	ck_assert_double_gt(t1 * svc_s, 0.97);
	ck_assert_double_le(t1 * svc_s, 1.0001);
	/* mns.csv: the MN's RPCs and its busy cores (4 cores: nearly 4) */
	char p[PATH_MAX + 16], want[64];
	snprintf(p, sizeof(p), "%s/mns.csv", d4);
	char *mns = dmr_test_read_text(p);
	snprintf(want, sizeof(want), "rpcs %llu MN CPU 3.9", dmr_test_colu(&s4, "rpcs"));
	ck_assert_msg(strstr(mns, want), "mns.csv:\n%s", mns);
	free(mns);
	dmr_test_summary_free(&s1);
	dmr_test_summary_free(&s4);
}
END_TEST

START_TEST(test_bad_input)
{
	char tr[PATH_MAX], d[PATH_MAX], p0[PATH_MAX], ph[PATH_MAX];
	gen_tpcc(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "bad");
	profile(p0, sizeof(p0), "none.json", 0, 0, 0);
	/* half a group: mn_rpc_cores alone */
	char *t = dmr_test_read_text(p0);
	char *e = strrchr(t, '}');
	*e = 0;
	e = strrchr(t, '}');
	*e = 0;
	char *half = malloc(strlen(t) + 256);
	sprintf(half, "%s,\n    \"mn_rpc_cores\": {\"value\": 2, \"unit\": \"cores\"}\n  }\n}\n",
		t);
	dmr_test_path(ph, sizeof(ph), "half.json");
	dmr_test_write_file(ph, half);
	free(half);
	free(t);
	const char *bad[][6] = {
	    {"--rpc", "bogus", "--rpc", "sim", "occ", "one of none, all, half"},
	    {"--rpc", "all", "--protocol", "farm", "x", "protocol farm has no RPC path"},
	    {"--rpc", "half", "--protocol", "crest", "x", "protocol crest has no RPC path"},
	    {"--rpc", "all", "--protocol", "motor", "x", "protocol motor has no RPC path"},
	    {"--rpc", "all", "--backend", "fault:sim", "x", "fault:sim has no RPC path"},
	    {"--rpc", "all", "--procs", "--quiet", "x",
	     "a run of several processes has no RPC path"},
	    {"--rpc", "half", "--backend", "ucx", "x", "ucx has no RPC path"},
	    {"--rpc", "all", "--profile", "rxe-qemu", "x", "has no MN CPU model"},
	    {"--rpc", "all", "--profile", p0, "x", "mn_rpc_cores, mn_rpc_req_ns and mn_rpc_op_ns"},
	    {"--rpc", "all", "--profile", ph, "x", "parameter mn_rpc_req_ns: missing"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dmr_test_run_t r =
		    i == 0 ? dmr_test_dmr("run", "--trace", tr, "--rpc", "bogus", "--out", d, NULL)
			   : dmr_test_dmr("run", "--trace", tr, bad[i][0], bad[i][1], bad[i][2],
					  bad[i][3], "--out", d, NULL);
		ck_assert_msg(r.status == 2, "%s %s %s %s: exit %d, stderr:\n%s", bad[i][0],
			      bad[i][1], bad[i][2], bad[i][3], r.status, r.err);
		ck_assert_msg(strstr(r.err, bad[i][5]), "%s %s %s %s: stderr:\n%s", bad[i][0],
			      bad[i][1], bad[i][2], bad[i][3], r.err);
		dmr_test_run_free(&r);
		char s[PATH_MAX + 16];
		snprintf(s, sizeof(s), "%s/summary.csv", d);
		ck_assert(!dmr_test_exists(s));
	}
	dmr_test_run_t r = dmr_test_dmr("run", "--help", NULL);
	ck_assert(strstr(r.out, "--rpc P"));
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("rpc", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("rpc");
	TCase *tc = tcase_create("rpc");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_sim_cores_queue);
	tcase_add_test(tc, test_shm_inline_and_refusals);
	tcase_add_test(tc, test_runs_verify);
	tcase_add_test(tc, test_several_mns);
	tcase_add_test(tc, test_sim_deterministic);
	tcase_add_test(tc, test_cores_bound_throughput);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
