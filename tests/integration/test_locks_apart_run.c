/*
 * tests/integration/test_locks_apart_run.c - `dmreplay run --locks-apart`
 * end to end (issue 16 item 3; docs/MODEL.md "Device memory"): the lock
 * words of the named tables apart from their records, in a lock-word
 * region in host memory (verbs --dm-locks's layout). On the sim: verified
 * (the workload's invariants and every lock word idle, core/replica.h),
 * deterministic (two runs byte-identical), the summary naming it; with
 * FORD on two MNs and a backup; on shm (real atomics, threads): verified.
 * The refusals: a protocol whose lock words stay in its records, both
 * --dm-locks and --locks-apart, a table that is not the trace's. The sim's
 * own --dm-locks (modelled, words in their records) is test_whatif's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

static char trace[DMR_TEST_DIR_MAX];

static void gen_trace(void)
{
	dmr_test_tmp_make();
	dmr_test_path(trace, sizeof(trace), "tpcc.csv");
	dmr_test_run_t r =
	    dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--regime", "extreme", "--txns",
			 "3000", "--seed", "3", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* One run of the trace with the given extra arguments (NULL-ended) into
 * dmr_test_tmp/name; returns its result (the caller frees it). */
static dmr_test_run_t run(const char *name, const char *const *extra)
{
	static char out[DMR_TEST_DIR_MAX];
	dmr_test_path(out, sizeof(out), name);
	const char *a[40] = {"run", "--trace", trace, "--out",	out, "--cns",	  "2", "--threads",
			     "4",   "--coros", "2",   "--seed", "7", "--retries", "2"};
	int n = 15;
	for (int i = 0; extra[i]; i++)
		a[n++] = extra[i];
	a[n] = NULL;
	return dmr_test_dmrv(a);
}

static void assert_verified(const char *name)
{
	char dir[DMR_TEST_DIR_MAX];
	dmr_test_path(dir, sizeof(dir), name);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "verified"), "1");
	ck_assert_uint_gt(dmr_test_colu(&s, "committed"), 100);
	dmr_test_summary_free(&s);
}

START_TEST(sim_verified_and_deterministic)
{
	const char *x[] = {"--backend", "sim", "--locks-apart", "warehouse,district,stock", NULL};
	dmr_test_run_t r = run("a", x);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "lock words of warehouse,district,stock apart from their "
				    "records (") &&
			  strstr(r.out, "bytes per MN, in host memory)"),
		      "%s", r.out);
	dmr_test_run_free(&r);
	r = run("b", x);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	assert_verified("a");
	char a[DMR_TEST_DIR_MAX], b[DMR_TEST_DIR_MAX];
	dmr_test_path(a, sizeof(a), "a");
	dmr_test_path(b, sizeof(b), "b");
	/* the simulated figures (the *_dispatch_us columns are the host's
	 * wall clock: not compared) */
	dmr_test_assert_same_file(a, b, "timeseries.csv");
	dmr_test_summary_t s, s2;
	dmr_test_summary_load(&s, a, "summary.csv");
	dmr_test_summary_load(&s2, b, "summary.csv");
	static const char *const cols[] = {
	    "tried",  "committed", "abort_lock", "abort_read_locked", "abort_validation",  "verbs",
	    "p50_us", "p99_us",	   "sim_time_s", "reads_per_commit",  "atomics_per_commit"};
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		ck_assert_str_eq(dmr_test_col(&s, cols[i]), dmr_test_col(&s2, cols[i]));
	dmr_test_summary_free(&s2);
	ck_assert_str_eq(dmr_test_col(&s, "dm_locks"), "apart:warehouse/district/stock");
	/* a lock CAS, the record READ and the word's READ behind it: more
	 * READs per commit than the same run with the words in the records */
	double apart_reads = dmr_test_cold(&s, "reads_per_commit");
	dmr_test_summary_free(&s);
	const char *y[] = {"--backend", "sim", NULL};
	r = run("inline", y);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(b, sizeof(b), "inline");
	dmr_test_summary_load(&s, b, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "dm_locks"), "-");
	ck_assert_msg(apart_reads > dmr_test_cold(&s, "reads_per_commit"), "%g vs %s", apart_reads,
		      dmr_test_col(&s, "reads_per_commit"));
	dmr_test_summary_free(&s);
}
END_TEST

/* FORD on 2 MNs with a backup: its backups' words ("invisible" during the
 * commit) are apart too, and idle after (the replica check reads them). */
START_TEST(sim_ford_with_backups_verified)
{
	const char *x[] = {"--backend",
			   "sim",
			   "--protocol",
			   "ford",
			   "--mns",
			   "2",
			   "--backups",
			   "1",
			   "--quiet",
			   "--locks-apart",
			   "warehouse,district,customer,stock",
			   NULL};
	dmr_test_run_t r = run("ford", x);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	assert_verified("ford");
}
END_TEST

START_TEST(shm_verified)
{
	const char *x[] = {"--backend",		 "shm", "--quiet", "--locks-apart",
			   "warehouse,district", NULL};
	dmr_test_run_t r = run("shm", x);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	assert_verified("shm");
}
END_TEST

/* Each refusal: exit 2, the reason named, no summary written. */
static void refused(const char *name, const char *const *x, const char *want)
{
	dmr_test_run_t r = run(name, x);
	ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, want) != NULL, "want '%s' in: %s", want, r.err);
	dmr_test_run_free(&r);
	char p[DMR_TEST_DIR_MAX];
	dmr_test_path(p, sizeof(p), name);
	strncat(p, "/summary.csv", sizeof(p) - strlen(p) - 1);
	ck_assert(!dmr_test_exists(p));
}

START_TEST(refusals)
{
	const char *farm[] = {"--protocol", "farm", "--locks-apart", "warehouse", NULL};
	refused("r1", farm,
		"option --locks-apart: --protocol farm keeps its lock words in its "
		"records (lock words apart from their records: occ and ford only)");
	const char *both[] = {"--dm-locks", "warehouse", "--locks-apart", "warehouse", NULL};
	refused("r2", both, "options --dm-locks and --locks-apart: give one");
	const char *bad[] = {"--locks-apart", "warehouse,nosuch", NULL};
	refused("r3", bad, "option --locks-apart: 'nosuch' is not a table of the trace");
	const char *twice[] = {"--locks-apart", "district,district", NULL};
	refused("r4", twice, "option --locks-apart: table district given twice");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("locks_apart_run");
	TCase *tc = tcase_create("run");
	tcase_add_checked_fixture(tc, gen_trace, dmr_test_tmp_remove);
	tcase_add_test(tc, sim_verified_and_deterministic);
	tcase_add_test(tc, sim_ford_with_backups_verified);
	tcase_add_test(tc, shm_verified);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	if (dmr_test_env_init("locks_apart_run", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
