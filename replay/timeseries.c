/* replay/timeseries.c - a windowed time series (timeseries.h). */
#include "timeseries.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void dmr_tseries_init(dmr_tseries_t *ts, dmr_time_ps_t window_ps, uint32_t ncnt, uint32_t ngauge,
		      uint32_t max_rows)
{
	memset(ts, 0, sizeof(*ts));
	ts->window_ps = window_ps ? window_ps : 1;
	ts->next_end = ts->window_ps;
	ts->ncnt = ncnt < DMR_TSERIES_MAX_CNT ? ncnt : DMR_TSERIES_MAX_CNT;
	ts->ngauge = ngauge;
	ts->max_rows = max_rows;
}

void dmr_tseries_fini(dmr_tseries_t *ts)
{
	free(ts->cnt);
	free(ts->gauge);
	ts->cnt = NULL;
	ts->gauge = NULL;
	ts->n = ts->cap = 0;
}

/* Room for one more row; 0 when it cannot be allocated. */
static int grow(dmr_tseries_t *ts)
{
	if (ts->n < ts->cap)
		return 1;
	uint32_t cap = ts->cap ? ts->cap * 2 : 256;
	uint64_t *c = realloc(ts->cnt, (size_t)cap * (ts->ncnt ? ts->ncnt : 1) * sizeof(*c));
	if (!c)
		return 0;
	ts->cnt = c;
	double *g = realloc(ts->gauge, (size_t)cap * (ts->ngauge ? ts->ngauge : 1) * sizeof(*g));
	if (!g)
		return 0;
	ts->gauge = g;
	ts->cap = cap;
	return 1;
}

void dmr_tseries_close(dmr_tseries_t *ts, const uint64_t *cnt, const double *gauge)
{
	if (!grow(ts))
		return; /* the series is shorter; the caller's totals stay exact */
	uint64_t *row = ts->cnt + (uint64_t)ts->n * ts->ncnt;
	for (uint32_t c = 0; c < ts->ncnt; c++) {
		row[c] = cnt[c] - ts->last[c];
		ts->last[c] = cnt[c];
	}
	double *g = ts->gauge + (uint64_t)ts->n * ts->ngauge;
	for (uint32_t k = 0; k < ts->ngauge; k++)
		g[k] = gauge ? gauge[k] : 0;
	ts->n++;
}

void dmr_tseries_advance(dmr_tseries_t *ts, dmr_time_ps_t now, const uint64_t *cnt,
			 const double *gauge)
{
	while (now >= ts->next_end) {
		if (ts->max_rows && ts->n >= ts->max_rows) {
			ts->overflow = 1;
			return;
		}
		dmr_tseries_close(ts, cnt, gauge);
		ts->next_end += ts->window_ps;
	}
}

void dmr_tseries_finish(dmr_tseries_t *ts, dmr_time_ps_t end, const uint64_t *cnt,
			const double *gauge)
{
	dmr_tseries_advance(ts, end, cnt, gauge);
	if (end > ts->next_end - ts->window_ps || ts->n == 0)
		dmr_tseries_close(ts, cnt, gauge);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static int write_col(FILE *f, const dmr_tseries_t *ts, uint32_t i, const dmr_tseries_col_t *col,
		     const void *arg)
{
	switch (col->src) {
	case DMR_TSERIES_T:
		return fprintf(f, col->fmt, i * dmr_ps_to_s(ts->window_ps));
	case DMR_TSERIES_CNT:
		return fprintf(f, "%" PRIu64, dmr_tseries_cnt(ts, i, col->idx));
	case DMR_TSERIES_GAUGE:
		return fprintf(f, col->fmt, dmr_tseries_gauge(ts, i, col->idx));
	case DMR_TSERIES_FN:
		return col->fn(f, ts, i, arg);
	}
	return -1;
}
#pragma GCC diagnostic pop

int dmr_tseries_write_csv(const dmr_tseries_t *ts, FILE *f, const dmr_tseries_col_t *cols,
			  uint32_t ncols, const void *arg)
{
	int bad = 0;
	for (uint32_t k = 0; k < ncols; k++)
		bad |= fprintf(f, "%s%s", k ? "," : "", cols[k].name) < 0;
	bad |= fputc('\n', f) == EOF;
	for (uint32_t i = 0; i < ts->n && !bad; i++) {
		for (uint32_t k = 0; k < ncols; k++) {
			if (k)
				bad |= fputc(',', f) == EOF;
			bad |= write_col(f, ts, i, &cols[k], arg) < 0;
		}
		bad |= fputc('\n', f) == EOF;
	}
	return bad ? -1 : 0;
}
