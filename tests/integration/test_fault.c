/*
 * tests/integration/test_fault.c - the fault-injection backend
 * (backends/fault, docs/FAULTS.md) and the replay's handling of every fault
 * kind on sim, as scripts/rxe-roles-check tests it on rxe.
 *
 *  - the spec: every bad spec refused at open naming the fault and the
 *    field (spec_refused), and on the command line with exit 2
 *    (cli_refuses_bad_spec);
 *  - the backend: fail op k (the k-th WR is not executed, completes with
 *    its status, the rest of the endpoint is flushed: fail_op_k), an MN
 *    unreachable from T (before T: success; after: RETRY_EXC_ERR then
 *    FLUSH_ERR: unreachable_from_t), a delayed link (every completion D
 *    later in simulated time: delay_link), a dropped completion
 *    (drop_kth), no fault = the inner backend (no_fault_is_inner);
 *  - the replay (issue #15 item 1): a YCSB read-only run and a TPC-C run
 *    whose completions are dropped after the N-th fail (exit 1, status
 *    partial, summary.partial.csv and no summary.csv, the count in flight
 *    and the first's trace line and worker named) instead of reporting
 *    complete / failed verification (lost_completions_ycsb_c,
 *    lost_completions_tpcc);
 *  - the replay's handling of each fault kind (run_fails_once_*): the first
 *    error named (operation, status, worker, trace line, MN), flushed
 *    completions counted not listed, one error line, exit 1, partial
 *    results, within a deadline; the policy of docs/FAULTS.md (B22: a
 *    failed completion ends the run, no reconnect, no retry);
 *  - a delayed link: the run completes, verified, latency up by D
 *    (run_delay_completes); the same fault twice, the same message
 *    (fault_runs_are_deterministic);
 *  - the threaded path (fault:shm): a failed op ends the run the same way
 *    (run_fails_once_threaded);
 *  - kv run on fault:sim through DMR_FAULT: drop, unreachable and fail end
 *    the run with exit 1 and summary.partial.csv; no fault and a delay
 *    complete (kv_run_faults).
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "helpers/be.h"
#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

#define DEADLINE_NS (30ull * 1000000000ull) /* a failing run ends within this */

static dmr_status_t open_fault(const char *inner, const char *spec, uint32_t workers,
			       dmr_be_t **be_p, dmr_err_t *err)
{
	char name[64];
	snprintf(name, sizeof(name), "fault:%s", inner);
	dmr_be_config_t cfg = {.backend = name,
			       .fault = spec,
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = 1u << 20,
			       .profile = "cx6dx-100g",
			       .gid_index = -1,
			       .port = 1};
	return dmr_be_open(&cfg, be_p, err);
}

static dmr_be_t *open_ok(const char *spec, uint32_t workers)
{
	dmr_be_t *be = NULL;
	dmr_err_t err;
	ck_assert_msg(open_fault("sim", spec, workers, &be, &err) == DMR_OK, "%s: %s", spec,
		      err.msg);
	return be;
}

START_TEST(spec_refused)
{
	static const struct {
		const char *spec, *want;
	} bad[] = {
	    {"nope:mn=0", "kind 'nope' unknown"},
	    {"fail", "field op missing"},
	    {"fail:op=0", "fault 'fail:op=0' field op: 0 out of range"},
	    {"fail:op=x", "field op"},
	    {"fail:op=5:status=BOGUS", "field status: 'BOGUS' unknown"},
	    {"fail:op=5:mn=0", "field 'mn' unknown"},
	    {"unreachable", "field mn missing"},
	    {"unreachable:mn=1@1ms",
	     "fault 'unreachable:mn=1@1ms': field mn: 1, the cluster has 1 MN"},
	    {"unreachable:mn=0@soon", "field at"},
	    {"delay:mn=0", "field us, ns, ms or ps (> 0) missing"},
	    {"delay:us=5", "field mn or worker"},
	    {"delay:mn=0:worker=0:us=5", "field mn or worker"},
	    {"delay:worker=9:us=5", "field worker: 9, the run has 2 workers"},
	    {"drop", "field k or after missing"},
	    {"drop:k=1@2ms", "'@TIME' is for unreachable only"},
	    {"drop:after", "not NAME=VALUE"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dmr_be_t *be = NULL;
		dmr_err_t err = {{0}};
		dmr_status_t st = open_fault("sim", bad[i].spec, 2, &be, &err);
		ck_assert_msg(st == DMR_ERR_INVALID, "%s: accepted (%d)", bad[i].spec, st);
		ck_assert_msg(strstr(err.msg, bad[i].want) != NULL, "%s: '%s' does not say '%s'",
			      bad[i].spec, err.msg, bad[i].want);
	}
	/* a wrapper of a wrapper, and a wrapper of nothing */
	dmr_be_t *be = NULL;
	dmr_err_t err;
	ck_assert_int_eq(open_fault("fault:sim", NULL, 1, &be, &err), DMR_ERR_INVALID);
	ck_assert_int_eq(open_fault("", NULL, 1, &be, &err), DMR_ERR_NODEV);
	ck_assert_int_eq(open_fault("nosuch", NULL, 1, &be, &err), DMR_ERR_NODEV);
	/* several faults, comma-separated */
	be = open_ok("unreachable:mn=0@2ms,fail:op=100:status=REM_ACCESS_ERR,delay:mn=0:us=50,"
		     "drop:after=1000",
		     1);
	dmr_be_close(be);
}
END_TEST

/* Post n signaled WRITEs (wr_id base + i) of worker w in one doorbell. */
static void post_writes(dmr_be_t *be, uint32_t w, uint64_t base, uint32_t n, void *src,
			uint64_t remote)
{
	dmr_wr_t wrs[8];
	ck_assert_uint_le(n, 8);
	for (uint32_t i = 0; i < n; i++)
		wrs[i] = (dmr_wr_t){.wr_id = base + i,
				    .local = src,
				    .remote = remote + 64 * i,
				    .length = 8,
				    .opcode = DMR_WR_WRITE,
				    .flags = DMR_WR_SIGNALED};
	dmr_err_t err;
	ck_assert_msg(dmr_be_post(be, w, 0, wrs, n, &err) == DMR_OK, "%s", err.msg);
}

START_TEST(fail_op_k)
{
	dmr_be_t *be = open_ok("fail:op=2:status=GENERAL_ERR", 1);
	uint64_t v = 0x1122334455667788ull;
	post_writes(be, 0, 10, 3, &v, 0);
	dmr_wc_t wc[4];
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	ck_assert_uint_eq(wc[0].wr_id, 10);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(wc[1].wr_id, 11);
	ck_assert_int_eq(wc[1].status, DMR_WC_GENERAL_ERR);
	ck_assert_uint_eq(wc[2].wr_id, 12);
	ck_assert_int_eq(wc[2].status, DMR_WC_FLUSH_ERR);
	/* the endpoint is in error: a later post is flushed */
	post_writes(be, 0, 20, 1, &v, 512);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 1, DEADLINE_NS), 1);
	ck_assert_uint_eq(wc[0].wr_id, 20);
	ck_assert_int_eq(wc[0].status, DMR_WC_FLUSH_ERR);
	/* only the first WR was executed */
	const uint8_t *mem = dmr_be_mn_memory(be, 0, NULL);
	uint64_t got[3];
	for (int i = 0; i < 3; i++)
		memcpy(&got[i], mem + 64 * i, 8);
	ck_assert_uint_eq(got[0], v);
	ck_assert_uint_eq(got[1], 0);
	ck_assert_uint_eq(got[2], 0);
	dmr_be_stats_t st;
	dmr_be_stats(be, &st);
	ck_assert_uint_eq(st.errors, 3); /* the failed one and two flushed */
	/* what is left: at most the wrapper's own wake-ups, which return
	 * nothing to the caller */
	int w;
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0)
		ck_assert_int_eq(dmr_be_poll(be, (uint32_t)w, wc, 4), 0);
	dmr_be_close(be);
}
END_TEST

/* A failure behind a delayed completion of the same endpoint comes after
 * it (RC order), D later. */
START_TEST(fail_after_delayed_keeps_order)
{
	dmr_be_t *be = open_ok("delay:mn=0:us=20,fail:op=2", 1);
	uint64_t v = 3;
	post_writes(be, 0, 1, 3, &v, 0);
	dmr_wc_t wc[4];
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	ck_assert_uint_eq(wc[0].wr_id, 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(wc[1].wr_id, 2);
	ck_assert_int_eq(wc[1].status, DMR_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc[2].wr_id, 3);
	ck_assert_int_eq(wc[2].status, DMR_WC_FLUSH_ERR);
	ck_assert_uint_ge(dmr_be_now(be, 0), 20000000ull);
	dmr_be_close(be);
}
END_TEST

START_TEST(fail_op_k_per_worker)
{
	/* worker=1: the 2nd WR of worker 1, whatever worker 0 posted */
	dmr_be_t *be = open_ok("fail:op=2:worker=1", 2);
	uint64_t v = 7;
	post_writes(be, 0, 1, 3, &v, 0);
	post_writes(be, 1, 100, 2, &v, 1024);
	dmr_wc_t wc[4];
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(wc[i].status, DMR_WC_SUCCESS);
	ck_assert_int_eq(dmr_test_wait_wc(be, 1, wc, 2, DEADLINE_NS), 2);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(wc[1].wr_id, 101);
	ck_assert_int_eq(wc[1].status, DMR_WC_REM_ACCESS_ERR); /* the default status */
	dmr_be_close(be);
}
END_TEST

START_TEST(unreachable_from_t)
{
	dmr_be_t *be = open_ok("unreachable:mn=0@10us", 1);
	uint64_t v = 5;
	dmr_wc_t wc[4];
	post_writes(be, 0, 1, 2, &v, 0); /* at t = 0: reaches the MN */
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 2, DEADLINE_NS), 2);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_int_eq(wc[1].status, DMR_WC_SUCCESS);
	ck_assert_uint_lt(dmr_be_now(be, 0), 10000000ull);
	dmr_be_charge(be, 0, 10000000ull); /* past T */
	ck_assert_uint_ge(dmr_be_now(be, 0), 10000000ull);
	post_writes(be, 0, 3, 3, &v, 256);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	ck_assert_uint_eq(wc[0].wr_id, 3);
	ck_assert_int_eq(wc[0].status, DMR_WC_RETRY_EXC_ERR);
	ck_assert_int_eq(wc[1].status, DMR_WC_FLUSH_ERR);
	ck_assert_int_eq(wc[2].status, DMR_WC_FLUSH_ERR);
	post_writes(be, 0, 6, 1, &v, 256);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 1, DEADLINE_NS), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_FLUSH_ERR);
	const uint8_t *mem = dmr_be_mn_memory(be, 0, NULL);
	uint64_t got;
	memcpy(&got, mem + 256, 8);
	ck_assert_uint_eq(got, 0); /* nothing reached the dead MN */
	dmr_be_close(be);
}
END_TEST

/* Simulated time at which worker 0 sees the completion of one READ. */
static uint64_t read_done_at(const char *spec)
{
	dmr_be_t *be = open_ok(spec, 1);
	uint64_t v;
	dmr_err_t err;
	ck_assert_msg(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 1, &v, 0, 8, 0, 0, &err) == DMR_OK,
		      "%s", err.msg);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, &wc, 1, DEADLINE_NS), 1);
	ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 1);
	uint64_t t = dmr_be_now(be, 0);
	int w;
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0) /* wake-ups: nothing returned */
		ck_assert_int_eq(dmr_be_poll(be, (uint32_t)w, &wc, 1), 0);
	dmr_be_close(be);
	return t;
}

START_TEST(delay_link)
{
	uint64_t t0 = read_done_at(NULL);
	uint64_t t1 = read_done_at("delay:mn=0:us=50");
	uint64_t t2 = read_done_at("delay:worker=0:ns=700");
	ck_assert_uint_gt(t0, 0);
	/* D later, give or take the poll's own CPU time (models/model.h
	 * poll_ps: the released completion's poll is charged, the held one's
	 * was not) */
	ck_assert_msg(t1 + 1000000ull >= t0 + 50000000ull && t1 <= t0 + 50000000ull + 1000000ull,
		      "t0 %llu, t1 %llu", (unsigned long long)t0, (unsigned long long)t1);
	ck_assert_msg(t2 + 1000000ull >= t0 + 700000ull && t2 <= t0 + 700000ull + 1000000ull,
		      "t0 %llu, t2 %llu", (unsigned long long)t0, (unsigned long long)t2);
}
END_TEST

START_TEST(drop_kth)
{
	dmr_be_t *be = open_ok("drop:k=2", 1);
	uint64_t v = 1;
	post_writes(be, 0, 1, 3, &v, 0);
	dmr_wc_t wc[4];
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 2);
	ck_assert_uint_eq(wc[0].wr_id, 1);
	ck_assert_uint_eq(wc[1].wr_id, 3);
	dmr_be_close(be);
	be = open_ok("drop:after=1", 1);
	post_writes(be, 0, 1, 3, &v, 0);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 1);
	ck_assert_uint_eq(wc[0].wr_id, 1);
	dmr_be_close(be);
}
END_TEST

START_TEST(no_fault_is_inner)
{
	unsetenv("DMR_FAULT");
	dmr_be_t *be = open_ok(NULL, 1);
	ck_assert((be->ops->caps & DMR_BE_CAP_DRIVEN) != 0); /* sim's caps */
	dmr_be_t *sh = NULL;
	dmr_err_t err;
	ck_assert_int_eq(open_fault("shm", "", 1, &sh, &err), DMR_OK);
	ck_assert((sh->ops->caps & DMR_BE_CAP_DRIVEN) == 0); /* shm's */
	dmr_be_close(sh);
	uint64_t t;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SIM_TIME, &t, NULL), DMR_OK);
	ck_assert_str_eq(dmr_be_base_name("fault:sim"), "sim");
	ck_assert_str_eq(dmr_be_base_name("shm"), "shm");
	dmr_be_close(be);
	/* DMR_FAULT when the config has none */
	setenv("DMR_FAULT", "fail:op=x", 1);
	ck_assert_int_eq(open_fault("sim", NULL, 1, &be, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "field op"));
	unsetenv("DMR_FAULT");
}
END_TEST

/* ---- the replay ---- */

static char g_ycsb[512], g_tpcc[512], g_kv[512];

static void gen_traces(void)
{
	dmr_test_tmp_make();
	char wl[600];
	snprintf(wl, sizeof(wl), "%s/workloadc", dmr_test_ycsb_dir());
	dmr_test_path(g_ycsb, sizeof(g_ycsb), "ycsbc.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "ycsb", "--workload", wl, "--txns", "2000",
					"--quiet", "-o", g_ycsb, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(g_tpcc, sizeof(g_tpcc), "tpcc.csv");
	r = dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--txns", "2000", "--quiet", "-o",
			 g_tpcc, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	char mc[600];
	snprintf(mc, sizeof(mc), "%s/tests/data/mooncake-200.jsonl", dmr_test_src);
	dmr_test_path(g_kv, sizeof(g_kv), "kv.trace");
	r = dmr_test_dmr("kv", "gen", "--mooncake", mc, "--kv-model", "llama-3-8b", "--quiet", "-o",
			 g_kv, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* run TRACE on fault:sim with --fault SPEC (NULL: none) into OUTNAME. */
static dmr_test_run_t run_fault(char *dir, size_t len, const char *outname, const char *trace,
				const char *spec, uint64_t *wall_ns)
{
	dmr_test_path(dir, len, outname);
	uint64_t t0 = dmr_test_mono_ns();
	dmr_test_run_t r =
	    spec ? dmr_test_dmr("run", "--trace", trace, "--out", dir, "--backend", "fault:sim",
				"--fault", spec, "--cns", "1", "--threads", "4", "--coros", "2",
				"--quiet", NULL)
		 : dmr_test_dmr("run", "--trace", trace, "--out", dir, "--backend", "fault:sim",
				"--cns", "1", "--threads", "4", "--coros", "2", "--quiet", NULL);
	if (wall_ns)
		*wall_ns = dmr_test_mono_ns() - t0;
	return r;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A failed run: exit 1, one error line containing each of want[] (NULL-
 * terminated), summary.partial.csv with status partial and not verified,
 * no summary.csv, within the deadline. */
static void assert_failed_run(const dmr_test_run_t *r, const char *dir, uint64_t wall_ns,
			      const char *const *want)
{
	ck_assert_msg(r->status == 1, "exit %d, stderr: %s", r->status, r->err);
	ck_assert_msg(count(r->err, "error:") == 1, "not one error line: %s", r->err);
	for (int i = 0; want[i]; i++)
		ck_assert_msg(strstr(r->err, want[i]) != NULL, "stderr does not say '%s': %s",
			      want[i], r->err);
	ck_assert_msg(wall_ns < DEADLINE_NS, "took %.1f s", wall_ns / 1e9);
	char p[700];
	snprintf(p, sizeof(p), "%s/summary.csv", dir);
	ck_assert_msg(!dmr_test_exists(p), "%s written by a failed run", p);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.partial.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "partial");
	ck_assert_str_eq(dmr_test_col(&s, "backend"), "fault:sim");
	ck_assert_uint_eq(dmr_test_colu(&s, "verified"), 0);
	dmr_test_summary_free(&s);
}

START_TEST(lost_completions_ycsb_c)
{
	char dir[600];
	uint64_t ns;
	dmr_test_run_t r = run_fault(dir, sizeof(dir), "ycsb-drop", g_ycsb, "drop:after=1000", &ns);
	const char *want[] = {"transactions in flight", "first trace line", "worker",
			      "results are partial", NULL};
	assert_failed_run(&r, dir, ns, want);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.partial.csv");
	ck_assert_uint_eq(dmr_test_colu(&s, "committed"), 1000); /* one READ each */
	ck_assert_uint_lt(dmr_test_colu(&s, "txns"), 2000);
	dmr_test_summary_free(&s);
	dmr_test_run_free(&r);
	/* the same trace without the fault completes, verified */
	r = run_fault(dir, sizeof(dir), "ycsb-ok", g_ycsb, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "complete");
	ck_assert_uint_eq(dmr_test_colu(&s, "committed"), 2000);
	dmr_test_summary_free(&s);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(lost_completions_tpcc)
{
	char dir[600];
	uint64_t ns;
	/* partial (not "failed verification"), exit 1 */
	dmr_test_run_t r = run_fault(dir, sizeof(dir), "tpcc-drop", g_tpcc, "drop:after=1000", &ns);
	const char *want[] = {"transactions in flight", "first trace line", NULL};
	assert_failed_run(&r, dir, ns, want);
	ck_assert_ptr_null(strstr(r.err, "verification failed"));
	dmr_test_run_free(&r);
	r = run_fault(dir, sizeof(dir), "tpcc-drop1", g_tpcc, "drop:k=500", &ns);
	const char *want1[] = {"no event left with 1 transactions in flight", NULL};
	assert_failed_run(&r, dir, ns, want1);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(run_fails_once_unreachable)
{
	char dir[600];
	uint64_t ns;
	dmr_test_run_t r =
	    run_fault(dir, sizeof(dir), "unreach", g_tpcc, "unreachable:mn=0@20us", &ns);
	const char *want[] = {"completion failed: transport retry counter exceeded",
			      "trace line",
			      "worker",
			      "MN 0",
			      "flushed (counted, not listed)",
			      NULL};
	assert_failed_run(&r, dir, ns, want);
	/* one error, no retry storm: the message names one failed completion */
	ck_assert_int_eq(count(r.err, "completion failed"), 1);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(run_fails_once_fail_op)
{
	char dir[600];
	uint64_t ns;
	dmr_test_run_t r =
	    run_fault(dir, sizeof(dir), "failop", g_tpcc, "fail:op=100:status=REM_ACCESS_ERR", &ns);
	const char *want[] = {"completion failed: remote access error", "trace line", "MN 0",
			      "flushed (counted, not listed)", NULL};
	assert_failed_run(&r, dir, ns, want);
	ck_assert_int_eq(count(r.err, "completion failed"), 1);
	dmr_test_run_free(&r);
	/* on the read-only YCSB too: a READ */
	r = run_fault(dir, sizeof(dir), "failop-y", g_ycsb, "fail:op=50:status=GENERAL_ERR", &ns);
	const char *want2[] = {"READ completion failed: general error", "trace line", NULL};
	assert_failed_run(&r, dir, ns, want2);
	dmr_test_run_free(&r);
}
END_TEST

/* The threaded path (fault:shm): a failed op ends the run the same way. */
START_TEST(run_fails_once_threaded)
{
	char dir[600];
	dmr_test_path(dir, sizeof(dir), "shm-fail");
	uint64_t t0 = dmr_test_mono_ns();
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", g_ycsb, "--out", dir, "--backend",
					"fault:shm", "--fault", "fail:op=100:worker=1", "--cns",
					"1", "--threads", "2", "--coros", "2", "--quiet", NULL);
	const char *want[] = {"READ completion failed: remote access error", "worker 1",
			      "trace line", NULL};
	dmr_test_summary_t s;
	ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
	for (int i = 0; want[i]; i++)
		ck_assert_msg(strstr(r.err, want[i]), "'%s' missing: %s", want[i], r.err);
	ck_assert_int_eq(count(r.err, "error:"), 1);
	ck_assert_uint_lt(dmr_test_mono_ns() - t0, DEADLINE_NS);
	dmr_test_summary_load(&s, dir, "summary.partial.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "partial");
	dmr_test_summary_free(&s);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(run_delay_completes)
{
	char dir[600];
	dmr_test_run_t r = run_fault(dir, sizeof(dir), "d0", g_ycsb, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.csv");
	double p50 = dmr_test_cold(&s, "p50_us");
	dmr_test_summary_free(&s);
	dmr_test_run_free(&r);
	r = run_fault(dir, sizeof(dir), "d50", g_ycsb, "delay:mn=0:us=50", NULL);
	dmr_test_run_ok(&r);
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "complete");
	ck_assert_uint_eq(dmr_test_colu(&s, "verified"), 1);
	double p50d = dmr_test_cold(&s, "p50_us");
	/* one READ per transaction: its completion 50 us later */
	ck_assert_msg(p50d > p50 + 49.9 && p50d < p50 + 50.5, "p50 %.3f -> %.3f", p50, p50d);
	dmr_test_summary_free(&s);
	dmr_test_run_free(&r);
	r = run_fault(dir, sizeof(dir), "dt", g_tpcc, "delay:worker=1:us=5", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(fault_runs_are_deterministic)
{
	char d1[600], d2[600];
	dmr_test_run_t a = run_fault(d1, sizeof(d1), "det1", g_tpcc, "unreachable:mn=0@30us", NULL);
	dmr_test_run_t b = run_fault(d2, sizeof(d2), "det2", g_tpcc, "unreachable:mn=0@30us", NULL);
	ck_assert_int_eq(a.status, 1);
	ck_assert_int_eq(b.status, 1);
	ck_assert_str_eq(a.err, b.err);
	dmr_test_run_free(&a);
	dmr_test_run_free(&b);
}
END_TEST

START_TEST(cli_refuses_bad_spec)
{
	char dir[600];
	dmr_test_run_t r = run_fault(dir, sizeof(dir), "bad", g_ycsb, "drop:k=abc", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "field k"));
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", g_ycsb, "--out", dir, "--fault", "drop:k=1", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--fault: only with --backend fault:INNER"));
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(kv_run_faults)
{
	static const struct {
		const char *spec, *want;
	} k[] = {
	    {"drop:after=500", "the run stalled"},
	    {"unreachable:mn=0@1ms", "transport retry counter exceeded"},
	    {"fail:op=100", "remote access error"},
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char dir[600], name[32];
		snprintf(name, sizeof(name), "kv%zu", i);
		dmr_test_path(dir, sizeof(dir), name);
		setenv("DMR_FAULT", k[i].spec, 1);
		uint64_t t0 = dmr_test_mono_ns();
		dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", g_kv, "--backend",
						"fault:sim", "--out", dir, "--quiet", NULL);
		uint64_t ns = dmr_test_mono_ns() - t0;
		unsetenv("DMR_FAULT");
		ck_assert_msg(r.status == 1, "%s: exit %d: %s", k[i].spec, r.status, r.err);
		ck_assert_msg(strstr(r.err, k[i].want) != NULL, "%s: %s", k[i].spec, r.err);
		ck_assert_msg(count(r.err, "error:") == 1, "%s", r.err);
		ck_assert_msg(ns < DEADLINE_NS, "took %.1f s", ns / 1e9);
		char p[700];
		snprintf(p, sizeof(p), "%s/summary.partial.csv", dir);
		ck_assert_msg(dmr_test_exists(p), "%s: no %s", k[i].spec, p);
		snprintf(p, sizeof(p), "%s/summary.csv", dir);
		ck_assert_msg(!dmr_test_exists(p), "%s: %s written", k[i].spec, p);
		dmr_test_run_free(&r);
	}
	/* no fault, and a delayed link: completes as on sim */
	const char *ok[] = {"", "delay:mn=0:us=5"};
	for (int i = 0; i < 2; i++) {
		char dir[600], p[700];
		dmr_test_path(dir, sizeof(dir), i ? "kvdelay" : "kvok");
		setenv("DMR_FAULT", ok[i], 1);
		dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", g_kv, "--backend",
						"fault:sim", "--out", dir, "--quiet", NULL);
		unsetenv("DMR_FAULT");
		dmr_test_run_ok(&r);
		snprintf(p, sizeof(p), "%s/summary.csv", dir);
		ck_assert_msg(dmr_test_exists(p), "%s: no %s", ok[i], p);
		dmr_test_run_free(&r);
	}
}
END_TEST

static Suite *fault_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tb = tcase_create("backend");
	tcase_add_test(tb, spec_refused);
	tcase_add_test(tb, fail_op_k);
	tcase_add_test(tb, fail_op_k_per_worker);
	tcase_add_test(tb, fail_after_delayed_keeps_order);
	tcase_add_test(tb, unreachable_from_t);
	tcase_add_test(tb, delay_link);
	tcase_add_test(tb, drop_kth);
	tcase_add_test(tb, no_fault_is_inner);
	suite_add_tcase(s, tb);
	TCase *tr = tcase_create("replay");
	tcase_set_timeout(tr, 300);
	tcase_add_unchecked_fixture(tr, gen_traces, dmr_test_tmp_remove);
	tcase_add_test(tr, lost_completions_ycsb_c);
	tcase_add_test(tr, lost_completions_tpcc);
	tcase_add_test(tr, run_fails_once_unreachable);
	tcase_add_test(tr, run_fails_once_fail_op);
	tcase_add_test(tr, run_fails_once_threaded);
	tcase_add_test(tr, run_delay_completes);
	tcase_add_test(tr, fault_runs_are_deterministic);
	tcase_add_test(tr, cli_refuses_bad_spec);
	tcase_add_test(tr, kv_run_faults);
	suite_add_tcase(s, tr);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("fault", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(fault_suite());
	dmr_test_env_fini();
	return rc;
}
