/*
 * tests/integration/test_loopc.c - Loop C (`--loop doorbell`, issue 14
 * item 5) through `dmreplay run`: on a CN whose CPU rings a doorbell per
 * post (TATP, 1 CN x 2 threads x 32 coros on sim: the doorbell MMIOs take
 * about a third of the worker time) the batch rises, fewer doorbells ring
 * the same posts, and the run verifies; batch 1 is the run without the loop
 * (same time series); the run is deterministic; it composes with aimd; the
 * threaded path (shm) rings every staged post; bad options are refused.
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

static void gen_tatp(char *buf, size_t len)
{
	dmr_test_path(buf, len, "tatp.csv");
	if (dmr_test_exists(buf))
		return;
	dmr_test_run_t r = dmr_test_dmr("gen", "tatp", "--subscribers", "100000", "--txns", "20000",
					"--seed", "1", "--quiet", "-o", buf, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* Run the trace on sim at 1 x 2 x 32 with loop l and extra options (NULL
 * terminated, at most 4); stdout in *r (caller frees). */
static void run_sim(dmr_test_run_t *r, const char *tr, const char *d, const char *l, const char *x0,
		    const char *x1)
{
	const char *args[32] = {"run", "--trace",     tr,  "--backend",	       "sim", "--cns",
				"1",   "--threads",   "2", "--coros",	       "32",  "--seed",
				"1",   "--window-ms", "1", "--loop-window-ms", "0.5", "--loop",
				l,     "--out",	      d};
	int n = 21;
	if (x0)
		args[n++] = x0;
	if (x1)
		args[n++] = x1;
	args[n] = NULL;
	*r = dmr_test_dmrv(args);
	dmr_test_run_ok(r);
	ck_assert_msg(strstr(r->out, "verification   PASSED"), "stdout:\n%s", r->out);
}

typedef struct dbline {
	unsigned mn, mx, cap;
	unsigned long long moves, up, down, wins, posts, rings;
	double per;
} dbline_t;

static void parse_db(const char *out, dbline_t *b)
{
	const char *lp = strstr(out, "loop           doorbell: WRs per doorbell ");
	ck_assert_msg(lp != NULL, "stdout:\n%s", out);
	ck_assert_int_eq(
	    sscanf(lp,
		   "loop           doorbell: WRs per doorbell %u..%u (bound %u), %llu "
		   "moves (%llu up, %llu down) in %llu windows; %llu posts rung as %llu "
		   "doorbells (%lf WRs per doorbell)",
		   &b->mn, &b->mx, &b->cap, &b->moves, &b->up, &b->down, &b->wins, &b->posts,
		   &b->rings, &b->per),
	    10);
}

/* Sum of column name over the rows of dir/timeseries.csv; *rows_p rows;
 * *lo_p / *hi_p its least and largest value. */
static double ts_col(const char *dir, const char *name, int *rows_p, double *lo_p, double *hi_p)
{
	return dmr_test_ts_col(dir, name, rows_p, lo_p, hi_p, NULL);
}

START_TEST(test_batches_on_a_cpu_bound_cn)
{
	char tr[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX], d2[PATH_MAX];
	gen_tatp(tr, sizeof(tr));
	dmr_test_path(d0, sizeof(d0), "c-none");
	dmr_test_path(d1, sizeof(d1), "c-db");
	dmr_test_path(d2, sizeof(d2), "c-db-again");
	dmr_test_run_t r0, r1, r2;
	run_sim(&r0, tr, d0, "none", NULL, NULL);
	run_sim(&r1, tr, d1, "doorbell", NULL, NULL);
	ck_assert_ptr_null(strstr(r0.out, "loop           doorbell"));
	dbline_t b;
	parse_db(r1.out, &b);
	ck_assert_uint_eq(b.cap, 32);
	ck_assert_uint_eq(b.mn, 1);
	ck_assert_uint_gt(b.mx, 1); /* the MMIO share is above 0.2: it batched */
	ck_assert_uint_gt(b.up, 0);
	ck_assert_uint_eq(b.moves, b.up + b.down);
	ck_assert_uint_lt(b.rings, b.posts); /* fewer doorbells for the same posts */
	ck_assert_uint_gt(b.wins, 0);
	/* the time series: its columns add up to the printed totals */
	int rows;
	double lo, hi;
	ck_assert_uint_eq((unsigned long long)ts_col(d1, "doorbell_rings", &rows, NULL, NULL),
			  b.rings);
	ck_assert_int_gt(rows, 2);
	ck_assert_uint_eq((unsigned long long)ts_col(d1, "doorbell_posts", &rows, NULL, NULL),
			  b.posts);
	ts_col(d1, "doorbell_batch", &rows, &lo, &hi);
	ck_assert(lo >= 1 && hi <= 32 && hi > 1);
	ts_col(d1, "doorbell_signal", &rows, &lo, &hi);
	ck_assert(lo >= 0 && hi >= 0.2);
	/* the same posts: tried and committed as without the loop, faster */
	dmr_test_summary_t s0, s1;
	dmr_test_summary_load(&s0, d0, "summary.csv");
	dmr_test_summary_load(&s1, d1, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s1, "loop"), "doorbell");
	ck_assert_uint_eq(dmr_test_colu(&s1, "tried"), dmr_test_colu(&s0, "tried"));
	ck_assert_double_gt(dmr_test_cold(&s1, "committed_tps"),
			    dmr_test_cold(&s0, "committed_tps"));
	dmr_test_summary_free(&s0);
	dmr_test_summary_free(&s1);
	/* deterministic: the same run twice, the same time series */
	run_sim(&r2, tr, d2, "doorbell", NULL, NULL);
	dmr_test_assert_same_file(d1, d2, "timeseries.csv");
	dmr_test_run_free(&r0);
	dmr_test_run_free(&r1);
	dmr_test_run_free(&r2);
}
END_TEST

/* Batch 1 (a threshold the signal never reaches) is the run without the
 * loop: every base column of the time series equal. */
START_TEST(test_batch_one_is_no_loop)
{
	char tr[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX];
	gen_tatp(tr, sizeof(tr));
	dmr_test_path(d0, sizeof(d0), "c1-none");
	dmr_test_path(d1, sizeof(d1), "c1-db");
	dmr_test_run_t r0, r1;
	run_sim(&r0, tr, d0, "none", NULL, NULL);
	run_sim(&r1, tr, d1, "doorbell", "--doorbell-util", "1");
	dbline_t b;
	parse_db(r1.out, &b);
	ck_assert_uint_eq(b.mx, 1);
	ck_assert_uint_eq(b.rings, b.posts);
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/timeseries.csv", d0);
	char *t0 = dmr_test_slurp(p, NULL);
	snprintf(p, sizeof(p), "%s/timeseries.csv", d1);
	char *t1 = dmr_test_slurp(p, NULL);
	ck_assert(t0 && t1);
	/* t1's rows = t0's rows + ",doorbell_..." */
	char *a = t0, *c = t1;
	while (*a) {
		size_t la = strcspn(a, "\n"), lc = strcspn(c, "\n");
		ck_assert_msg(lc > la && !strncmp(a, c, la) && c[la] == ',', "row %.*s vs %.*s",
			      (int)la, a, (int)lc, c);
		a += la + (a[la] != 0);
		c += lc + (c[lc] != 0);
	}
	ck_assert_int_eq(*c, 0);
	free(t0);
	free(t1);
	dmr_test_run_free(&r0);
	dmr_test_run_free(&r1);
}
END_TEST

START_TEST(test_composes_with_aimd)
{
	char tr[PATH_MAX], d[PATH_MAX];
	gen_tatp(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "c-comp");
	dmr_test_run_t r;
	run_sim(&r, tr, d, "doorbell+aimd", NULL, NULL);
	ck_assert_msg(strstr(r.out, "loop           aimd+doorbell: slots per CN "), "stdout:\n%s",
		      r.out);
	dbline_t b;
	parse_db(r.out, &b);
	ck_assert_uint_gt(b.mx, 1);
	dmr_test_run_free(&r);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, d, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "loop"), "aimd+doorbell");
	dmr_test_summary_free(&s);
	int rows;
	ts_col(d, "loop_actuator_cn0", &rows, NULL, NULL);
	ts_col(d, "doorbell_batch", &rows, NULL, NULL);
}
END_TEST

/* aimd+doorbell where aimd's gate closes and wakes contexts of other
 * workers of the CN (SmallBank, 4 hot accounts): their posts are staged on
 * their own workers and rung by the flush of the batch that woke them; the
 * run neither stalls nor fails verification. */
START_TEST(test_gate_wakes_and_batches)
{
	char tr[PATH_MAX], d[PATH_MAX];
	dmr_test_path(tr, sizeof(tr), "sb-hot.csv");
	dmr_test_run_t r =
	    dmr_test_dmr("gen", "smallbank", "--accounts", "100000", "--regime", "hot:4/0.95",
			 "--txns", "6000", "--seed", "4", "--quiet", "-o", tr, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(d, sizeof(d), "c-gate");
	r = dmr_test_dmr("run", "--trace", tr, "--cns", "2", "--threads", "8", "--coros", "3",
			 "--seed", "7", "--loop", "aimd+doorbell", "--doorbell-util", "0.01",
			 "--loop-window-ms", "0.05", "--out", d, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	const char *lp = strstr(r.out, "loop           aimd+doorbell: slots per CN ");
	ck_assert_msg(lp != NULL, "stdout:\n%s", r.out);
	unsigned mn, mx, cap;
	ck_assert_int_eq(sscanf(lp, "loop           aimd+doorbell: slots per CN %u..%u (bound %u)",
				&mn, &mx, &cap),
			 3);
	ck_assert_uint_lt(mn, cap); /* the gate closed */
	dbline_t b;
	parse_db(r.out, &b);
	ck_assert_uint_gt(b.mx, 1);
	ck_assert_uint_lt(b.rings, b.posts);
	dmr_test_run_free(&r);
}
END_TEST

/* shm (threaded: the flush before each poll): no model and no busy times,
 * so the signal is 0 and the batch stays 1; every post is rung (the
 * backend counts as many doorbells) and the run verifies. */
START_TEST(test_threaded_rings_every_post)
{
	char tr[PATH_MAX], d[PATH_MAX];
	dmr_test_path(tr, sizeof(tr), "sb.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "smallbank", "--txns", "2000", "--seed", "2",
					"--quiet", "-o", tr, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(d, sizeof(d), "c-shm");
	r = dmr_test_dmr("run", "--trace", tr, "--backend", "shm", "--threads", "2", "--coros", "4",
			 "--loop", "doorbell", "--loop-window-ms", "0.01", "--out", d, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED"), "stdout:\n%s", r.out);
	dbline_t b;
	parse_db(r.out, &b);
	ck_assert_uint_eq(b.mx, 1);
	ck_assert_uint_eq(b.rings, b.posts);
	const char *bl = strstr(r.out, "  backend        ");
	ck_assert_ptr_nonnull(bl);
	const char *db = strstr(bl, " doorbells\n");
	ck_assert_ptr_nonnull(db);
	while (db > bl && db[-1] >= '0' && db[-1] <= '9')
		db--;
	ck_assert_uint_eq(strtoull(db, NULL, 10), b.rings);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_bad_options)
{
	char tr[PATH_MAX], d[PATH_MAX];
	gen_tatp(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "c-bad");
	static const char *bad[][3] = {
	    {"--doorbell-max", "0", "--doorbell-max"},
	    {"--doorbell-max", "4097", "--doorbell-max"},
	    {"--doorbell-max", "x", "--doorbell-max"},
	    {"--doorbell-util", "0", "--doorbell-util"},
	    {"--doorbell-util", "1.5", "--doorbell-util"},
	    {"--doorbell-util", "nan", "--doorbell-util"},
	    {"--loop", "doorbel", "unknown loop 'doorbel'"},
	    {"--loop", "doorbell+doorbell", "named twice"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, "--loop", "doorbell",
						bad[i][0], bad[i][1], "--out", d, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, bad[i][2]), "%s %s: stderr:\n%s", bad[i][0], bad[i][1],
			      r.err);
		dmr_test_run_free(&r);
	}
	ck_assert(!dmr_test_exists(d));
	dmr_test_run_t r = dmr_test_dmr("run", "--help", NULL);
	ck_assert(strstr(r.out, "--doorbell-max") && strstr(r.out, "--doorbell-util") &&
		  strstr(r.out, "doorbell (Loop C"));
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("loopc", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("loopc");
	TCase *tc = tcase_create("doorbell");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_batches_on_a_cpu_bound_cn);
	tcase_add_test(tc, test_batch_one_is_no_loop);
	tcase_add_test(tc, test_composes_with_aimd);
	tcase_add_test(tc, test_gate_wakes_and_batches);
	tcase_add_test(tc, test_threaded_rings_every_post);
	tcase_add_test(tc, test_bad_options);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
