/*
 * tests/unit/test_timeseries.c - the windowed time series (replay/timeseries.h)
 * and the transaction replay's series on it (replay/results.h dmr_ts_*):
 * per-window deltas, empty windows, gauges, the short last window, the row
 * cap, the CSV writer's columns, and the loop decisions consumed by the
 * first window that closes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/results.h"
#include "replay/timeseries.h"
#include "helpers/suite.h"

/* The CSV text of a series (caller frees). */
static char *csv_of(const dmr_tseries_t *ts, const dmr_tseries_col_t *cols, uint32_t n,
		    const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(dmr_tseries_write_csv(ts, f, cols, n, arg), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(windows_and_deltas)
{
	dmr_tseries_t ts;
	dmr_tseries_init(&ts, 10, 2, 1, 0);
	uint64_t c[2] = {0, 0};
	double g = 0.5;
	ck_assert(!dmr_tseries_due(&ts, 9));
	dmr_tseries_advance(&ts, 5, c, &g);
	ck_assert_uint_eq(ts.n, 0);
	c[0] = 3, c[1] = 1;
	ck_assert(dmr_tseries_due(&ts, 10));
	dmr_tseries_advance(&ts, 10, c, &g);
	ck_assert_uint_eq(ts.n, 1);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 0, 0), 3);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 0, 1), 1);
	ck_assert(dmr_tseries_gauge(&ts, 0, 0) == 0.5);
	ck_assert_uint_eq(ts.next_end, 20);
	/* three windows end by 45: the change goes to the first, none to the others */
	c[0] = 7;
	g = 0.25;
	dmr_tseries_advance(&ts, 45, c, &g);
	ck_assert_uint_eq(ts.n, 4);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 1, 0), 4);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 1, 1), 0);
	for (uint32_t i = 2; i < 4; i++) {
		ck_assert_uint_eq(dmr_tseries_cnt(&ts, i, 0), 0);
		ck_assert(dmr_tseries_gauge(&ts, i, 0) == 0.25);
	}
	ck_assert_uint_eq(ts.next_end, 50);
	/* the short last window */
	c[0] = 9, c[1] = 2;
	dmr_tseries_finish(&ts, 47, c, &g);
	ck_assert_uint_eq(ts.n, 5);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 4, 0), 2);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 4, 1), 1);
	ck_assert(!ts.overflow);
	dmr_tseries_fini(&ts);
	/* a run that ends on a window's end adds no empty row */
	dmr_tseries_init(&ts, 10, 1, 0, 0);
	uint64_t one = 1;
	dmr_tseries_advance(&ts, 10, &one, NULL);
	dmr_tseries_finish(&ts, 10, &one, NULL);
	ck_assert_uint_eq(ts.n, 1);
	dmr_tseries_fini(&ts);
	/* a run shorter than a window still has its row */
	dmr_tseries_init(&ts, 10, 1, 0, 0);
	dmr_tseries_finish(&ts, 0, &one, NULL);
	ck_assert_uint_eq(ts.n, 1);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 0, 0), 1);
	dmr_tseries_fini(&ts);
}
END_TEST

START_TEST(row_cap_and_close)
{
	dmr_tseries_t ts;
	dmr_tseries_init(&ts, 10, 1, 0, 2);
	uint64_t c = 5;
	dmr_tseries_advance(&ts, 100, &c, NULL);
	ck_assert_uint_eq(ts.n, 2);
	ck_assert_int_eq(ts.overflow, 1);
	ck_assert_uint_eq(ts.next_end, 30);
	/* the last row is written even at the cap */
	c = 8;
	dmr_tseries_finish(&ts, 100, &c, NULL);
	ck_assert_uint_eq(ts.n, 3);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 2, 0), 3);
	dmr_tseries_fini(&ts);
	/* window 0 is taken as 1; close() writes a row now and keeps the window */
	dmr_tseries_init(&ts, 0, 1, 1, 0);
	ck_assert_uint_eq(ts.window_ps, 1);
	double g = 2;
	dmr_tseries_close(&ts, &c, &g);
	dmr_tseries_close(&ts, &c, NULL);
	ck_assert_uint_eq(ts.n, 2);
	ck_assert_uint_eq(ts.next_end, 1);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 0, 0), 8);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 1, 0), 0);
	ck_assert(dmr_tseries_gauge(&ts, 1, 0) == 0);
	dmr_tseries_fini(&ts);
	/* many rows: the array grows */
	dmr_tseries_init(&ts, 1, 1, 0, 0);
	for (uint64_t t = 1; t <= 5000; t++)
		dmr_tseries_advance(&ts, t, &t, NULL);
	ck_assert_uint_eq(ts.n, 5000);
	ck_assert_uint_eq(dmr_tseries_cnt(&ts, 4999, 0), 1);
	dmr_tseries_fini(&ts);
}
END_TEST

static int twice(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *arg)
{
	return fprintf(f, "%s%llu", (const char *)arg,
		       (unsigned long long)(2 * dmr_tseries_cnt(ts, i, 1)));
}

START_TEST(csv_columns)
{
	dmr_tseries_t ts;
	dmr_tseries_init(&ts, 500000000000ull, 2, 1, 0); /* 0.5 s */
	uint64_t c[2] = {4, 10};
	double g = 0.125;
	dmr_tseries_advance(&ts, 500000000000ull, c, &g);
	c[0] = 6;
	c[1] = 11;
	g = 1;
	dmr_tseries_finish(&ts, 700000000000ull, c, &g);
	static const dmr_tseries_col_t cols[] = {
	    {"t_s", DMR_TSERIES_T, 0, "%.3f", NULL},
	    {"a", DMR_TSERIES_CNT, 0, NULL, NULL},
	    {"level", DMR_TSERIES_GAUGE, 0, "%.2f", NULL},
	    {"b2", DMR_TSERIES_FN, 0, NULL, twice},
	};
	char *s = csv_of(&ts, cols, 4, "x");
	ck_assert_str_eq(s, "t_s,a,level,b2\n0.000,4,0.12,x20\n0.500,2,1.00,x2\n");
	free(s);
	dmr_tseries_fini(&ts);
	/* no rows: the header only */
	dmr_tseries_init(&ts, 1, 2, 1, 0);
	s = csv_of(&ts, cols, 2, NULL);
	ck_assert_str_eq(s, "t_s,a\n");
	free(s);
	dmr_tseries_fini(&ts);
}
END_TEST

static char *ts_csv(const dmr_ts_t *ts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(dmr_ts_write_csv(ts, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* the replay's series: counters, loop decisions, gauges, phases */
START_TEST(txn_series)
{
	dmr_ts_t ts;
	dmr_txn_stats_t st;
	memset(&st, 0, sizeof(st));
	dmr_ts_init(&ts, 1000000000ull); /* 1 ms */
	st.tried = 10;
	st.committed = 8;
	st.aborts[DMR_ABORT_LOCK] = 1;
	st.aborts[DMR_ABORT_VALIDATION] = 1;
	ts.increases = 3;
	ts.decreases = 1;
	ts.signal = 0.5;
	ts.actuator = 12;
	ck_assert(!dmr_ts_due(&ts, 999999999ull));
	dmr_ts_advance(&ts, 999999999ull, &st); /* no window closes: decisions stay set */
	ck_assert_uint_eq(ts.increases, 3);
	ck_assert(dmr_ts_due(&ts, 2000000000ull));
	dmr_ts_advance(&ts, 2000000000ull, &st); /* two windows: the first takes them */
	ts.deferred = 2;
	st.tried = 15;
	st.committed = 12;
	st.gave_up = 1;
	ts.signal = 0.25;
	dmr_ts_finish(&ts, 2500000000ull, &st);
	char *s = ts_csv(&ts);
	ck_assert_str_eq(s, "t_s,tried,committed,aborts,gave_up,phase,loop_signal,loop_actuator,"
			    "loop_increases,loop_decreases,loop_deferred\n"
			    "0.000000,10,8,2,0,0,0.5000,12.0000,3,1,0\n"
			    "0.001000,0,0,0,0,0,0.5000,12.0000,0,0,0\n"
			    "0.002000,5,4,0,1,0,0.2500,12.0000,0,0,2\n");
	free(s);
	/* drift: the phase of a row is its start / drift_ps */
	ts.drift_ps = 2000000000ull;
	s = ts_csv(&ts);
	ck_assert_ptr_nonnull(strstr(s, "\n0.002000,5,4,0,1,1,"));
	ck_assert_ptr_nonnull(strstr(s, "\n0.001000,0,0,0,0,0,"));
	free(s);
	dmr_ts_fini(&ts);
	/* an empty series (dmreplay cn's partial results): the header */
	dmr_ts_init(&ts, 100000000000ull);
	s = ts_csv(&ts);
	ck_assert_str_eq(s, "t_s,tried,committed,aborts,gave_up,phase,loop_signal,loop_actuator,"
			    "loop_increases,loop_decreases,loop_deferred\n");
	free(s);
	dmr_ts_fini(&ts);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timeseries");
	TCase *tc = tcase_create("timeseries");
	tcase_add_test(tc, windows_and_deltas);
	tcase_add_test(tc, row_cap_and_close);
	tcase_add_test(tc, csv_columns);
	tcase_add_test(tc, txn_series);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
