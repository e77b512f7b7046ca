/*
 * tests/integration/test_motor_runs.c - --protocol motor through the
 * dmreplay binary (issue 12 items 1 and 4): the shipped TPC-C sample
 * (traces/samples/tpcc-extreme.csv, its first 1500 transactions, 2
 * versions per record so that its 40 warehouses fit), a hot SmallBank and
 * a skewed YCSB-F trace on sim and on shm, under SR and SI, each verified:
 * the workload's invariants on the primaries (TPC-C C1-C3, the SmallBank
 * sum, the YCSB counters: SI keeps them too, each being a sum of updates
 * each built on the latest version, docs/PROTOCOLS.md "motor"), every
 * backup identical with every lock idle, every version chain idle, ordered
 * and without a lost update (the `versions` line). Then the refusals:
 * motor without a backup, si with another protocol, --versions without
 * motor, --coro_num 1; and --coro_num N giving N - 1 contexts.
 *
 * Every file lives in the suite's mkdtemp directory, removed at the end.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

static void gen(const char *name, char *path, size_t len)
{
	dmr_test_path(path, len, name);
	if (dmr_test_exists(path))
		return;
	dmr_test_run_t r;
	if (strcmp(name, "sb.csv") == 0)
		r = dmr_test_dmr("gen", "smallbank", "--accounts", "300", "--txns", "3000",
				 "--seed", "3", "-o", path, "--quiet", NULL);
	else {
		char wl[PATH_MAX];
		snprintf(wl, sizeof(wl), "%s/workloadf", dmr_test_ycsb_dir());
		r = dmr_test_dmr("gen", "ycsb", "--workload", wl, "--txns", "3000", "--regime",
				 "extreme", "--seed", "3", "-o", path, "--quiet", NULL);
	}
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* DIR/motor.csv against DIR/summary.csv: its header, one row per type,
 * tried and committed summed over the types equal to the run's, and every
 * validation abort with exactly one reason (newer + no_visible + no_slot +
 * changed = abort_validation, per type). */
static void check_motor_csv(const char *dir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/motor.csv", dir);
	char *text = dmr_test_read_text(path);
	ck_assert_ptr_nonnull(text);
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	ck_assert_str_eq(line, "type,tried,committed,abort_rate,abort_lock,abort_validation,newer,"
			       "no_visible,no_slot,changed,versions_read_per_commit,"
			       "old_versions_per_commit,atomics_per_commit,wrs_per_commit");
	unsigned long long tried = 0, committed = 0, rows = 0;
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		char *f[DMR_TEST_MAXCOL];
		ck_assert_int_eq(dmr_test_split(line, f, DMR_TEST_MAXCOL), 14);
		tried += strtoull(f[1], NULL, 10);
		committed += strtoull(f[2], NULL, 10);
		unsigned long long why = 0;
		for (int k = 6; k < 10; k++)
			why += strtoull(f[k], NULL, 10);
		ck_assert_uint_eq(why, strtoull(f[5], NULL, 10));
		rows++;
	}
	ck_assert_uint_ge(rows, 1);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_uint_eq(tried, dmr_test_colu(&s, "tried"));
	ck_assert_uint_eq(committed, dmr_test_colu(&s, "committed"));
	ck_assert_str_eq(dmr_test_col(&s, "protocol"), "motor");
	dmr_test_summary_free(&s);
	free(text);
}

/* One motor run: exit 0, verified (`verified` in the output), replicas
 * identical, version chains clean, the isolation named. */
static void run_motor(const char *be, const char *iso, const char *trace, const char *txns,
		      const char *versions, const char *verified)
{
	char dir[PATH_MAX], name[96];
	const char *base = strrchr(trace, '/') ? strrchr(trace, '/') + 1 : trace;
	snprintf(name, sizeof(name), "out-%s-%s-%s", be, iso, base);
	dmr_test_path(dir, sizeof(dir), name);
	dmr_test_run_t r = dmr_test_dmr(
	    "run", "--trace", trace, "--backend", be, "--protocol", "motor", "--isolation", iso,
	    "--versions", versions, "--mns", "2", "--backups", "1", "--cns", "2", "--threads", "2",
	    "--retries", "3", "--txns", txns, "--seed", "3", "--out", dir, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, verified) != NULL, "%s %s %s: no '%s' in:\n%s", be, iso, base,
		      verified, r.out);
	ck_assert_msg(strstr(r.out, "replicas       identical, locks idle (") != NULL,
		      "%s %s %s:\n%s", be, iso, base, r.out);
	const char *v = strstr(r.out, "  versions       ");
	ck_assert_msg(v != NULL, "%s %s %s: no versions line:\n%s", be, iso, base, r.out);
	unsigned long long chains = strtoull(v + strlen("  versions       "), NULL, 10);
	ck_assert_uint_gt(chains, 0);
	ck_assert_ptr_nonnull(strstr(v, "version chains idle, totally ordered, each version "
					"built from the one before (no lost update)"));
	char line[64];
	snprintf(line, sizeof(line), "  motor          isolation %s, %s versions per record", iso,
		 versions);
	ck_assert_msg(strstr(r.out, line) != NULL, "no '%s' in:\n%s", line, r.out);
	dmr_test_run_free(&r);
	check_motor_csv(dir);
}

static void all(const char *be)
{
	char tpcc[PATH_MAX], sb[PATH_MAX], yf[PATH_MAX];
	snprintf(tpcc, sizeof(tpcc), "%s/traces/samples/tpcc-extreme.csv", dmr_test_src);
	gen("sb.csv", sb, sizeof(sb));
	gen("yf.csv", yf, sizeof(yf));
	const char *isos[] = {"sr", "si"};
	for (int i = 0; i < 2; i++) {
		run_motor(be, isos[i], tpcc, "1500", "2",
			  "verification   PASSED (tpcc C1 C2 C3 ok)");
		run_motor(be, isos[i], sb, "3000", "3", "verification   PASSED (smallbank sum ok)");
		run_motor(be, isos[i], yf, "3000", "4", "verification   PASSED (ycsb counters ok)");
	}
}

START_TEST(test_sim_motor_invariants)
{
	all("sim");
}
END_TEST

START_TEST(test_shm_motor_invariants)
{
	all("shm");
}
END_TEST

/* dmreplay run with args refused: exit 2, want in stderr, no --out dir. */
static void refused(const char *want, const char *a1, const char *a2, const char *a3,
		    const char *a4)
{
	char sb[PATH_MAX], dir[PATH_MAX];
	gen("sb.csv", sb, sizeof(sb));
	dmr_test_path(dir, sizeof(dir), "refused");
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--trace", sb, "--out", dir, "--mns", "2", a1, a2, a3, a4, NULL);
	ck_assert_msg(r.status == 2, "status %d:\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, want) != NULL, "no '%s' in:\n%s", want, r.err);
	ck_assert(!dmr_test_exists(dir));
	dmr_test_run_free(&r);
}

START_TEST(test_motor_refusals_and_coro_num)
{
	refused("--protocol motor needs --backups >= 1", "--protocol", "motor", "--backups", "0");
	refused("option --isolation si: only with --protocol motor (--protocol ford is "
		"serializable: --isolation sr)",
		"--protocol", "ford", "--isolation", "si");
	refused("option --isolation: 'rc': one of si, sr", "--protocol", "motor", "--isolation",
		"rc");
	refused("option --versions: only with --protocol motor", "--versions", "3", "--backups",
		"1");
	refused("--coro_num", "--coro_num", "1", "--backups", "1");
	/* one process only: its timestamp counter (Motor's tx_id_generator) */
	char sb0[PATH_MAX], d0[PATH_MAX];
	gen("sb.csv", sb0, sizeof(sb0));
	dmr_test_path(d0, sizeof(d0), "refused-procs");
	dmr_test_run_t rp =
	    dmr_test_dmr("run", "--trace", sb0, "--out", d0, "--mns", "2", "--backups", "1",
			 "--protocol", "motor", "--procs", "--backend", "verbs", NULL);
	ck_assert_msg(rp.status == 2, "status %d:\n%s", rp.status, rp.err);
	ck_assert_ptr_nonnull(
	    strstr(rp.err, "option --protocol motor: not with --procs or --config"));
	ck_assert(!dmr_test_exists(d0));
	dmr_test_run_free(&rp);
	/* Motor's and FORD's coroutine_num 4: 3 transaction coroutines */
	char sb[PATH_MAX], dir[PATH_MAX];
	gen("sb.csv", sb, sizeof(sb));
	dmr_test_path(dir, sizeof(dir), "coro-num");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", sb, "--out", dir, "--cns", "1",
					"--threads", "2", "--coro_num", "4", "--txns", "100", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "1 CNs x 2 threads x 3 coros") != NULL, "%s", r.out);
	dmr_test_run_free(&r);
}
END_TEST

/* The sim is deterministic: the same trace and seed twice, byte-identical
 * types.csv and motor.csv. */
START_TEST(test_sim_motor_deterministic)
{
	char sb[PATH_MAX], dir[2][PATH_MAX];
	gen("sb.csv", sb, sizeof(sb));
	char *text[2][2];
	for (int k = 0; k < 2; k++) {
		dmr_test_path(dir[k], sizeof(dir[k]), k ? "det-2" : "det-1");
		dmr_test_run_t r =
		    dmr_test_dmr("run", "--trace", sb, "--protocol", "motor", "--isolation", "si",
				 "--mns", "2", "--backups", "1", "--cns", "2", "--threads", "4",
				 "--retries", "2", "--seed", "5", "--out", dir[k], "--quiet", NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
		char p[PATH_MAX + 16];
		snprintf(p, sizeof(p), "%s/types.csv", dir[k]);
		text[k][0] = dmr_test_read_text(p);
		snprintf(p, sizeof(p), "%s/motor.csv", dir[k]);
		text[k][1] = dmr_test_read_text(p);
	}
	for (int f = 0; f < 2; f++) {
		ck_assert_str_eq(text[0][f], text[1][f]);
		free(text[0][f]);
		free(text[1][f]);
	}
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("motor-runs", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("motor_runs");
	TCase *tc = tcase_create("motor");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_sim_motor_invariants);
	tcase_add_test(tc, test_shm_motor_invariants);
	tcase_add_test(tc, test_motor_refusals_and_coro_num);
	tcase_add_test(tc, test_sim_motor_deterministic);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
