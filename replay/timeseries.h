/*
 * replay/timeseries.h - a windowed time series: one row per window of run
 * time, of the change of the caller's counters over that window and the
 * values of its gauges when the window closed.
 *
 * The caller samples its cumulative counters (ncnt of them, uint64_t, never
 * decreasing) and gauges (ngauge doubles: loop signals, phases; integers
 * below 2^53 are exact) and hands them to dmr_tseries_advance(now): every
 * window that ended at or before `now` is closed into a row, the first with
 * the counters' change since the last close and the later ones (windows
 * in which nothing was sampled) with zero change. dmr_tseries_finish(end)
 * closes the last, possibly short, window. Rows are kept in memory (grown
 * by doubling; a row that cannot be allocated is skipped and its change
 * goes to the next); with max_rows > 0, advance stops at that many rows and
 * sets `overflow` (the caller decides what that means: kv run stops).
 *
 * dmr_tseries_write_csv writes the rows as CSV: a header line of the
 * caller's column names, then per row the columns the caller lists, each
 * the window's start, a counter, a gauge (printf formats of the caller) or
 * a value the caller formats itself. One thread owns a series. Used by the
 * transaction replay (replay/results.h dmr_ts_*) and the KV runners
 * (replay/kv/).
 */
#ifndef DMR_TIMESERIES_H
#define DMR_TIMESERIES_H

#include <stdint.h>
#include <stdio.h>

#include "../core/base/timeps.h"

#define DMR_TSERIES_MAX_CNT 16 /* counters per row */

typedef struct dmr_tseries {
	dmr_time_ps_t window_ps;	    /* window length, > 0 */
	dmr_time_ps_t next_end;		    /* end of the open window */
	uint32_t ncnt, ngauge;		    /* per row */
	uint32_t max_rows;		    /* 0 = no cap */
	uint32_t n, cap;		    /* rows closed; rows allocated */
	int overflow;			    /* advance reached max_rows */
	uint64_t last[DMR_TSERIES_MAX_CNT]; /* the counters when the open window began */
	uint64_t *cnt;			    /* n x ncnt: each window's change of the counters */
	double *gauge;			    /* n x ngauge: the gauges when each window closed */
} dmr_tseries_t;

/* An empty series (nothing allocated yet; cannot fail): windows of
 * window_ps (0 is taken as 1), ncnt <= DMR_TSERIES_MAX_CNT counters and
 * ngauge gauges per row, at most max_rows rows (0 = no cap). */
void dmr_tseries_init(dmr_tseries_t *ts, dmr_time_ps_t window_ps, uint32_t ncnt, uint32_t ngauge,
		      uint32_t max_rows);
void dmr_tseries_fini(dmr_tseries_t *ts);

/* 1 when `now` closes at least one window (advance would add a row). */
static inline int dmr_tseries_due(const dmr_tseries_t *ts, dmr_time_ps_t now)
{
	return now >= ts->next_end;
}

/* Close one row now, whatever the time (the window end is not moved): the
 * counters' change since the last row, the gauges (NULL: zeros). Ignores
 * max_rows. */
void dmr_tseries_close(dmr_tseries_t *ts, const uint64_t *cnt, const double *gauge);
/* Close every window that ended at or before now (see above); stops at
 * max_rows with ts->overflow = 1. */
void dmr_tseries_advance(dmr_tseries_t *ts, dmr_time_ps_t now, const uint64_t *cnt,
			 const double *gauge);
/* The end of the run at `end`: advance, then close the open window if it
 * had begun before end, or if no row was written at all (the final row is
 * written even at max_rows). */
void dmr_tseries_finish(dmr_tseries_t *ts, dmr_time_ps_t end, const uint64_t *cnt,
			const double *gauge);

/* Row i's counter c / gauge g. */
static inline uint64_t dmr_tseries_cnt(const dmr_tseries_t *ts, uint32_t i, uint32_t c)
{
	return ts->cnt[(uint64_t)i * ts->ncnt + c];
}

static inline double dmr_tseries_gauge(const dmr_tseries_t *ts, uint32_t i, uint32_t g)
{
	return ts->gauge[(uint64_t)i * ts->ngauge + g];
}

/* A CSV column. */
typedef enum dmr_tseries_src {
	DMR_TSERIES_T,	   /* the window's start, s: i x window (fmt, e.g. "%.6f") */
	DMR_TSERIES_CNT,   /* counter idx, decimal */
	DMR_TSERIES_GAUGE, /* gauge idx (fmt, e.g. "%.4f") */
	DMR_TSERIES_FN,	   /* fn prints it */
} dmr_tseries_src_t;

typedef struct dmr_tseries_col {
	const char *name; /* header */
	dmr_tseries_src_t src;
	uint32_t idx;	 /* CNT, GAUGE */
	const char *fmt; /* T, GAUGE: printf format of one double */
	/* FN: print row i's value to f (no separator); arg is write_csv's;
	 * returns what fprintf returns */
	int (*fn)(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *arg);
} dmr_tseries_col_t;

/* Write the header line (the ncols names, comma-separated) and a line per
 * row to f. Returns 0, or -1 when a write failed. */
int dmr_tseries_write_csv(const dmr_tseries_t *ts, FILE *f, const dmr_tseries_col_t *cols,
			  uint32_t ncols, const void *arg);

#endif /* DMR_TIMESERIES_H */
