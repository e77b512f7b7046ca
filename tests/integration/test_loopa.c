/*
 * tests/integration/test_loopa.c - Loop A as published (issue 14): the
 * actuator is the transaction slots of each CN, in [1, threads x coros],
 * and it moves both ways on a trace whose aborts rise and fall.
 *
 * The trace: three SmallBank phases glued into one (uniform, hot:4/0.95,
 * uniform; transaction ids renumbered, the first header kept), replayed on
 * sim with 2 CNs x 8 threads x 3 coros (24 slots per CN) and windows of
 * 0.1 ms (SmallBank at this shape runs for about 2 simulated ms). Checked
 * from timeseries.csv (loop_actuator_cn0/1 per window) and the printed
 * summary (range and moves), with the values the run produced.
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

#define PH_TXNS 3000

static void gen_sb(char *buf, size_t len, const char *name, const char *regime, const char *seed)
{
	dmr_test_path(buf, len, name);
	char n[16];
	snprintf(n, sizeof(n), "%d", PH_TXNS);
	dmr_test_run_t r =
	    dmr_test_dmr("gen", "smallbank", "--accounts", "100000", "--regime", regime, "--txns",
			 n, "--seed", seed, "--quiet", "-o", buf, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* Append the transaction lines of trace text t to f, ids shifted by base. */
static void append_body(FILE *f, char *t, unsigned base)
{
	char *line = t;
	int body = 0;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (line[0] == '#') {
			/* header */
		} else if (!body) {
			body = 1; /* the column line */
		} else {
			char *comma = strchr(line, ',');
			ck_assert_ptr_nonnull(comma);
			fprintf(f, "%lu%s\n", strtoul(line, NULL, 10) + base, comma);
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* uniform, hot, uniform -> path */
static void phases_trace(char *path, size_t len)
{
	char u[PATH_MAX], h[PATH_MAX];
	gen_sb(u, sizeof(u), "sb-u.csv", "uniform", "3");
	gen_sb(h, sizeof(h), "sb-h.csv", "hot:4/0.95", "4");
	char *tu = dmr_test_slurp(u, NULL), *th = dmr_test_slurp(h, NULL);
	ck_assert(tu && th);
	dmr_test_path(path, len, "phases.csv");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	/* the header of the uniform trace with 3 x the transactions */
	char *body = strstr(tu, "\ntxn,");
	ck_assert_ptr_nonnull(body);
	char n[16];
	snprintf(n, sizeof(n), "%d", PH_TXNS);
	for (char *line = tu; line <= body; line = strchr(line, '\n') + 1) {
		char *nl = strchr(line, '\n');
		int l = (int)(nl - line);
		if (!strncmp(line, "# txns ", 7))
			fprintf(f, "# txns %d\n", 3 * PH_TXNS);
		else if (!strncmp(line, "# param txns ", 13))
			fprintf(f, "# param txns %d\n", 3 * PH_TXNS);
		else
			fprintf(f, "%.*s\n", l, line);
		if (nl == body)
			break;
	}
	fprintf(f, "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n");
	char *tu2 = strdup(tu);
	ck_assert_ptr_nonnull(tu2);
	append_body(f, tu, 0);
	append_body(f, th, PH_TXNS);
	append_body(f, tu2, 2 * PH_TXNS);
	ck_assert_int_eq(fclose(f), 0);
	free(tu);
	free(tu2);
	free(th);
}

START_TEST(test_slots_move_both_ways)
{
	char tr[PATH_MAX], d[PATH_MAX];
	phases_trace(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "run-ph");
	/* the published flag names: --loop_a, --loop_a_ai_step, --loop_a_nf */
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--trace", tr, "--cns", "2", "--threads", "8", "--coros", "3",
			 "--seed", "7", "--loop_a", "--loop_a_ai_step", "4", "--loop_a_nf", "2",
			 "--window-ms", "0.1", "--loop-window-ms", "0.1", "--out", d, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	const char *lp = strstr(r.out, "loop           aimd: slots per CN ");
	ck_assert_msg(lp != NULL, "stdout:\n%s", r.out);
	unsigned mn, mx, cap;
	unsigned long long moves, up, down, wins;
	ck_assert_int_eq(sscanf(lp,
				"loop           aimd: slots per CN %u..%u (bound %u), %llu "
				"moves (%llu up, %llu down) in %llu windows",
				&mn, &mx, &cap, &moves, &up, &down, &wins),
			 7);
	dmr_test_run_free(&r);
	ck_assert_uint_eq(cap, 24); /* 8 threads x 3 coros */
	ck_assert_uint_eq(mx, 24);
	ck_assert_uint_ge(mn, 1);
	ck_assert_uint_le(mn, 6); /* the hot phase halved it at least twice */
	ck_assert_uint_gt(up, 0);
	ck_assert_uint_gt(down, 0);
	ck_assert_uint_eq(moves, up + down);

	/* the time series: per CN per window */
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/timeseries.csv", d);
	char *ts = dmr_test_slurp(p, NULL);
	ck_assert_ptr_nonnull(ts);
	char *line = ts, *nl = strchr(line, '\n');
	*nl = 0;
	char *hdr[DMR_TEST_MAXCOL], *f[DMR_TEST_MAXCOL];
	int nh = dmr_test_split(line, hdr, DMR_TEST_MAXCOL);
	int ia = -1, im = -1, ic[2] = {-1, -1};
	for (int i = 0; i < nh; i++) {
		if (!strcmp(hdr[i], "aborts"))
			ia = i;
		if (!strcmp(hdr[i], "loop_moves"))
			im = i;
		if (!strcmp(hdr[i], "loop_actuator_cn0"))
			ic[0] = i;
		if (!strcmp(hdr[i], "loop_actuator_cn1"))
			ic[1] = i;
		ck_assert_msg(strcmp(hdr[i], "loop_actuator_cn2"), "2 CNs, 3 columns");
	}
	ck_assert(ia >= 0 && im >= 0 && ic[0] >= 0 && ic[1] >= 0);
	unsigned long long msum = 0;
	int rows = 0, first_abort = -1, lowest_row = -1, back_row = -1;
	unsigned lowest = 24; /* rows below the bound only */
	for (line = nl + 1; *line; line = nl + 1, rows++) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = 0;
		ck_assert_int_eq(dmr_test_split(line, f, DMR_TEST_MAXCOL), nh);
		unsigned long long ab = strtoull(f[ia], NULL, 10);
		msum += strtoull(f[im], NULL, 10);
		for (int k = 0; k < 2; k++) {
			unsigned v = (unsigned)strtoul(f[ic[k]], NULL, 10);
			ck_assert_uint_ge(v, 1);
			ck_assert_uint_le(v, 24);
			/* the gate opens wide until the aborts come */
			if (first_abort < 0)
				ck_assert_uint_eq(v, 24);
			if (v < lowest) {
				lowest = v;
				lowest_row = rows;
			}
			if (lowest_row >= 0 && rows > lowest_row && v == 24 && back_row < 0 &&
			    k == 1)
				back_row = rows;
		}
		if (ab > 0 && first_abort < 0)
			first_abort = rows;
	}
	free(ts);
	ck_assert_int_ge(first_abort, 1); /* the uniform phase: no aborts at first */
	ck_assert_uint_eq(lowest, mn);
	ck_assert_int_gt(lowest_row, first_abort);
	/* the last uniform phase brings both CNs back to the bound */
	ck_assert_msg(back_row > lowest_row, "back to 24 at row %d, lowest at %d", back_row,
		      lowest_row);
	ck_assert_uint_eq(msum, moves);
}
END_TEST

/* aimd-worker is the per-worker loop of before: its bound is coros. */
START_TEST(test_worker_variant_and_bad_names)
{
	char tr[PATH_MAX], d[PATH_MAX];
	gen_sb(tr, sizeof(tr), "sb-h2.csv", "hot:4/0.95", "4");
	dmr_test_path(d, sizeof(d), "run-w");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, "--cns", "2", "--threads", "8",
					"--coros", "3", "--loop", "aimd-worker+perkey",
					"--loop-window-ms", "0.1", "--out", d, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "loop           perkey+aimd-worker: slots per worker "),
		      "stdout:\n%s", r.out);
	ck_assert_msg(strstr(r.out, "(bound 3)"), "stdout:\n%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, d, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "loop"), "perkey+aimd-worker");
	dmr_test_summary_free(&s);
	/* unknown parts are named; exit 2 */
	r = dmr_test_dmr("run", "--trace", tr, "--loop", "aimd+perkey+aurora", "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "unknown loop 'aurora'"), "stderr:\n%s", r.err);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", tr, "--loop_a=maybe", "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--loop_a"), "stderr:\n%s", r.err);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "--loop_a_ai_step") && strstr(r.out, "--loop_a_nf"));
	dmr_test_run_free(&r);
}
END_TEST

/* aimd+perkey (given as perkey+aimd) on the same trace: both gates act in
 * one run: the slots move, perkey defers, the name is canonical. */
START_TEST(test_composed_with_perkey)
{
	char tr[PATH_MAX], d[PATH_MAX];
	phases_trace(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "run-comp");
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--trace", tr, "--cns", "2", "--threads", "8", "--coros", "3",
			 "--seed", "7", "--loop", "perkey+aimd", "--window-ms", "0.1",
			 "--loop-window-ms", "0.1", "--out", d, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	const char *lp = strstr(r.out, "loop           aimd+perkey: slots per CN ");
	ck_assert_msg(lp != NULL, "stdout:\n%s", r.out);
	unsigned mn, mx, cap;
	unsigned long long moves;
	ck_assert_int_eq(sscanf(lp,
				"loop           aimd+perkey: slots per CN %u..%u (bound %u), "
				"%llu moves",
				&mn, &mx, &cap, &moves),
			 4);
	lp = strstr(r.out, "loop           perkey: ");
	ck_assert_msg(lp != NULL, "stdout:\n%s", r.out);
	unsigned long long keyed = 0;
	ck_assert_int_eq(sscanf(lp, "loop           perkey: %llu deferrals", &keyed), 1);
	ck_assert_uint_gt(keyed, 0); /* perkey acted too */
	dmr_test_run_free(&r);
	ck_assert_uint_eq(cap, 24);
	ck_assert_uint_lt(mn, 24);
	ck_assert_uint_gt(moves, 0);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, d, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "loop"), "aimd+perkey");
	dmr_test_summary_free(&s);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/timeseries.csv", d);
	char *ts = dmr_test_slurp(p, NULL);
	ck_assert_ptr_nonnull(ts);
	char *line = ts, *nl = strchr(line, '\n');
	*nl = 0;
	char *hdr[DMR_TEST_MAXCOL], *f[DMR_TEST_MAXCOL];
	int nh = dmr_test_split(line, hdr, DMR_TEST_MAXCOL), idef = -1;
	for (int i = 0; i < nh; i++)
		if (!strcmp(hdr[i], "loop_deferred"))
			idef = i;
	ck_assert_int_ge(idef, 0);
	unsigned long long deferred = 0;
	for (line = nl + 1; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = 0;
		ck_assert_int_eq(dmr_test_split(line, f, DMR_TEST_MAXCOL), nh);
		deferred += strtoull(f[idef], NULL, 10);
	}
	free(ts);
	/* the series' deferrals are both gates': at least perkey's */
	ck_assert_uint_ge(deferred, keyed);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("loopa", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("loopa");
	TCase *tc = tcase_create("loopa");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_slots_move_both_ways);
	tcase_add_test(tc, test_worker_variant_and_bad_names);
	tcase_add_test(tc, test_composed_with_perkey);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
