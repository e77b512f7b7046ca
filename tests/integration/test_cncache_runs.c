/*
 * tests/integration/test_cncache_runs.c - `dmreplay run --cn-cache` (issue
 * 14 lever A3, core/txn_cncache.h) end to end: TPC-C's item table cached
 * (read-only: hits, no stale abort, fewer READs per commit than without,
 * verified) on sim and shm; YCSB-B whose cached records other CNs update
 * (stale aborts, verified); every table cached under each protocol that
 * has the cache (TPC-C C1-C3 and SmallBank's sum still hold); two sim runs
 * byte-identical; bad input refused with exit 2 naming what is wrong.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

static char g_tpcc[PATH_MAX], g_ycsb[PATH_MAX], g_sb[PATH_MAX];

static void gen_traces(void)
{
	dmr_test_tmp_make();
	dmr_test_path(g_tpcc, sizeof(g_tpcc), "tpcc.csv");
	dmr_test_path(g_ycsb, sizeof(g_ycsb), "ycsbb.csv");
	dmr_test_path(g_sb, sizeof(g_sb), "sb.csv");
	char wl[PATH_MAX];
	snprintf(wl, sizeof(wl), "%s/workloadb", dmr_test_ycsb_dir());
	/* 1000 items: a NewOrder's 5-15 item reads repeat within the run */
	dmr_test_run_t g[3] = {
	    dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--items", "1000", "--txns", "3000",
			 "--seed", "5", "--quiet", "-o", g_tpcc, NULL),
	    dmr_test_dmr("gen", "ycsb", "--workload", wl, "--ops-per-txn", "4", "--txns", "3000",
			 "--seed", "5", "--quiet", "-o", g_ycsb, NULL),
	    dmr_test_dmr("gen", "smallbank", "--accounts", "1000", "--txns", "3000", "--seed", "5",
			 "--quiet", "-o", g_sb, NULL)};
	for (int k = 0; k < 3; k++) {
		dmr_test_run_ok(&g[k]);
		dmr_test_run_free(&g[k]);
	}
}

/* One run of trace on backend into a fresh DIR named name; its summary in
 * *s (free it). extra: more options, NULL-terminated (at most 8). */
static void run(const char *trace, const char *be, const char *name, dmr_test_summary_t *s,
		const char *const *extra)
{
	char dir[PATH_MAX];
	dmr_test_path(dir, sizeof(dir), name);
	const char *args[40] = {"run", "--trace",   trace, "--backend", be,  "--cns",
				"2",   "--threads", "4",   "--coros",	"2", "--retries",
				"3",   "--seed",    "3",   "--out",	dir, "--quiet"};
	int n = 18;
	for (int k = 0; extra && extra[k]; k++)
		args[n++] = extra[k];
	args[n] = NULL;
	dmr_test_run_t r = dmr_test_dmrv(args);
	ck_assert_msg(r.status == 0, "%s: exit %d: %s", name, r.status, r.err);
	dmr_test_run_free(&r);
	dmr_test_summary_load(s, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(s, "verified"), "1");
}

/* The READs DIR/types.csv counts, summed over the types. */
static unsigned long long types_reads(const char *name)
{
	char path[PATH_MAX + 32];
	dmr_test_path(path, sizeof(path), name);
	strcat(path, "/types.csv");
	char *t = dmr_test_slurp(path, NULL);
	ck_assert_ptr_nonnull(t);
	char *save = NULL, *line = strtok_r(t, "\n", &save);
	char *f[DMR_TEST_MAXCOL];
	int n = dmr_test_split(line, f, DMR_TEST_MAXCOL), col = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(f[i], "reads") == 0)
			col = i;
	ck_assert_int_ge(col, 0);
	unsigned long long sum = 0;
	while ((line = strtok_r(NULL, "\n", &save))) {
		ck_assert_int_eq(dmr_test_split(line, f, DMR_TEST_MAXCOL), n);
		sum += strtoull(f[col], NULL, 10);
	}
	free(t);
	return sum;
}

/* TPC-C's item table cached: item is never written, so hits and none of
 * them stale; on sim (deterministic) fewer READs per commit than without;
 * on shm with one context at a time (no abort) every hit is one READ less,
 * exactly; on shm with threads, verified and hits. */
START_TEST(item_cached_hits_fewer_reads)
{
	const char *no[] = {NULL};
	const char *yes[] = {"--cn-cache", "item", "--cn-cache-entries", "2K", NULL};
	dmr_test_summary_t off, on;
	run(g_tpcc, "sim", "item-off-sim", &off, no);
	run(g_tpcc, "sim", "item-on-sim", &on, yes);
	ck_assert_str_eq(dmr_test_col(&off, "cn_cache"), "-");
	ck_assert_uint_eq(dmr_test_colu(&off, "cn_cache_hits"), 0);
	ck_assert_str_eq(dmr_test_col(&on, "cn_cache"), "item");
	ck_assert_uint_gt(dmr_test_colu(&on, "cn_cache_hits"), 1000);
	ck_assert_uint_eq(dmr_test_colu(&on, "cn_cache_stale"), 0);
	double r0 = dmr_test_cold(&off, "reads_per_commit");
	double r1 = dmr_test_cold(&on, "reads_per_commit");
	ck_assert_msg(r1 < r0, "sim: READs per commit %.3f with the cache, %.3f without", r1, r0);
	dmr_test_summary_free(&off);
	dmr_test_summary_free(&on);
	run(g_tpcc, "shm", "item-on-shm", &on, yes);
	ck_assert_uint_gt(dmr_test_colu(&on, "cn_cache_hits"), 1000);
	ck_assert_uint_eq(dmr_test_colu(&on, "cn_cache_stale"), 0);
	dmr_test_summary_free(&on);
	/* one CN, one thread, one context: the same transactions in the same
	 * order with and without the cache */
	const char *no1[] = {"--cns", "1", "--threads", "1", "--coros", "1", NULL};
	const char *yes1[] = {"--cns", "1",	     "--threads", "1", "--coros",
			      "1",     "--cn-cache", "item",	  NULL};
	run(g_tpcc, "shm", "item-off-shm1", &off, no1);
	run(g_tpcc, "shm", "item-on-shm1", &on, yes1);
	ck_assert_str_eq(dmr_test_col(&off, "committed"), dmr_test_col(&on, "committed"));
	unsigned long long hits = dmr_test_colu(&on, "cn_cache_hits");
	ck_assert_uint_gt(hits, 1000);
	ck_assert_uint_eq(types_reads("item-off-shm1") - types_reads("item-on-shm1"), hits);
	dmr_test_summary_free(&off);
	dmr_test_summary_free(&on);
}
END_TEST

/* YCSB-B (5 % updates, zipfian): the hot records the CNs cache are updated
 * by the other CN: stale aborts, and the run still verifies. */
START_TEST(written_records_go_stale)
{
	const char *be[2] = {"sim", "shm"};
	for (int b = 0; b < 2; b++) {
		dmr_test_summary_t s;
		char n[64];
		snprintf(n, sizeof(n), "ycsb-%s", be[b]);
		const char *yes[] = {"--cn-cache", "usertable", NULL};
		run(g_ycsb, be[b], n, &s, yes);
		ck_assert_uint_gt(dmr_test_colu(&s, "cn_cache_hits"), 1000);
		ck_assert_uint_gt(dmr_test_colu(&s, "cn_cache_stale"), 0);
		dmr_test_summary_free(&s);
	}
}
END_TEST

/* Every table cached, each protocol that has the cache, TPC-C and
 * SmallBank: the workloads' invariants hold (run() checks verified). */
START_TEST(all_tables_every_protocol_verified)
{
	const char *proto[4] = {"occ", "ford", "farm", "drtmh"};
	const char *tr[2] = {g_tpcc, g_sb};
	for (int w = 0; w < 2; w++)
		for (int p = 0; p < 4; p++)
			for (int b = 0; b < 2; b++) {
				dmr_test_summary_t s;
				char n[64];
				snprintf(n, sizeof(n), "all-%d-%s-%d", w, proto[p], b);
				const char *x[] = {"--cn-cache", "all", "--protocol", proto[p],
						   NULL};
				run(tr[w], b ? "shm" : "sim", n, &s, x);
				ck_assert_uint_gt(dmr_test_colu(&s, "cn_cache_hits"), 0);
				dmr_test_summary_free(&s);
			}
}
END_TEST

START_TEST(sim_runs_byte_identical)
{
	dmr_test_summary_t a, b;
	const char *yes[] = {"--cn-cache", "usertable", NULL};
	run(g_ycsb, "sim", "det-a", &a, yes);
	run(g_ycsb, "sim", "det-b", &b, yes);
	ck_assert_str_eq(dmr_test_col(&a, "cn_cache_hits"), dmr_test_col(&b, "cn_cache_hits"));
	ck_assert_str_eq(dmr_test_col(&a, "cn_cache_stale"), dmr_test_col(&b, "cn_cache_stale"));
	char da[PATH_MAX], db[PATH_MAX];
	dmr_test_path(da, sizeof(da), "det-a");
	dmr_test_path(db, sizeof(db), "det-b");
	dmr_test_assert_same_file(da, db, "timeseries.csv");
	dmr_test_assert_same_file(da, db, "types.csv");
	dmr_test_summary_free(&a);
	dmr_test_summary_free(&b);
}
END_TEST

/* Refused (exit 2), naming the option and what is wrong; nothing run. */
START_TEST(bad_input_refused)
{
	struct {
		const char *a[6];
		const char *want;
	} bad[] = {
	    {{"--cn-cache", "nosuchtable"}, "'nosuchtable' is not a table of the trace"},
	    {{"--cn-cache", "item,nosuch"}, "'nosuch' is not a table"},
	    {{"--cn-cache", "item,item"}, "table item given twice"},
	    {{"--cn-cache", "item,"}, "'' is not a table"},
	    {{"--cn-cache", ""}, "option --cn-cache: empty"},
	    {{"--cn-cache", "item", "--protocol", "crest"}, "not with --protocol crest"},
	    {{"--cn-cache", "all", "--protocol", "motor"}, "not with --protocol motor"},
	    {{"--cn-cache-entries", "100"}, "--cn-cache-entries: the CN record cache is off"},
	    {{"--cn-cache", "item", "--cn-cache-entries", "0"}, "--cn-cache-entries"},
	    {{"--cn-cache", "item", "--cn-cache-entries", "100M"}, "--cn-cache-entries"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char dir[PATH_MAX];
		char n[32];
		snprintf(n, sizeof(n), "bad-%zu", k);
		dmr_test_path(dir, sizeof(dir), n);
		const char *args[24] = {"run",	 "--trace", g_tpcc,	 "--backend", "sim",
					"--cns", "1",	    "--threads", "1",	      "--txns",
					"10",	 "--out",   dir};
		int m = 13;
		for (int j = 0; j < 6 && bad[k].a[j]; j++)
			args[m++] = bad[k].a[j];
		args[m] = NULL;
		dmr_test_run_t r = dmr_test_dmrv(args);
		ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", k, r.status, r.err);
		ck_assert_msg(strstr(r.err, bad[k].want), "case %zu: %s", k, r.err);
		char sum[PATH_MAX + 16];
		snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
		ck_assert(!dmr_test_exists(sum));
		dmr_test_run_free(&r);
	}
	/* the crest refusal points at crest's own cache */
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", g_tpcc, "--protocol", "crest",
					"--cn-cache", "item", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--crest-cache"), "%s", r.err);
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("cncache-runs", 0, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("cncache_runs");
	TCase *tc = tcase_create("runs");
	tcase_add_unchecked_fixture(tc, gen_traces, dmr_test_tmp_remove);
	tcase_add_test(tc, item_cached_hits_fewer_reads);
	tcase_add_test(tc, written_records_go_stale);
	tcase_add_test(tc, all_tables_every_protocol_verified);
	tcase_add_test(tc, sim_runs_byte_identical);
	tcase_add_test(tc, bad_input_refused);
	tcase_set_timeout(tc, 600);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
