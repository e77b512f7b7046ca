/*
 * replay/report/report_impl.h - what the files of `dmreplay report` share
 * among themselves (not for other modules: their contract is
 * replay/report.h).
 *
 *   csv.c         SUMMARY.csv (or timeseries.csv) into rows of fields
 *   stats.c       medians, percentile-bootstrap intervals, recovery times
 *   cells.c       rows -> cells, metrics, the baseline, every interval
 *   series.c      a cell's time series (DIR/cells/D-rR/timeseries.csv)
 *   tables.c      report.csv and report.md, and dmr_report_write
 *   plots.c       the gnuplot scripts, their data, running gnuplot
 *   report_cli.c  `dmreplay report`: options, print the report
 *
 * The report is computed once (dmr_report_compute) and only read after:
 * every output function takes a const dmr_report_t.
 */
#ifndef DMR_REPORT_IMPL_H
#define DMR_REPORT_IMPL_H

#include <limits.h>
#include <stddef.h>

#include "../report.h"

#define DMR_REPORT_MAX_COLS 256 /* columns of a CSV file */
#define DMR_REPORT_MAX_KV 32	/* axis=value pairs of a cell or baseline */
#define DMR_REPORT_MAX_METRICS 32

/* One cell: the rows with the same cell name. */
typedef struct rcell {
	char *name;
	size_t nkv; /* its axes: k[i]=v[i], pointers into kvbuf */
	char *k[DMR_REPORT_MAX_KV], *v[DMR_REPORT_MAX_KV];
	char *kvbuf;
	size_t nrows, *rows;	     /* indexes into the CSV's rows */
	double **vals;		     /* per metric, nrows values */
	dmr_report_ci_t *ci, *ratio; /* per metric */
	long base;		     /* baseline cell, -1 none */
	int is_base;
	size_t order; /* output order, 1-based (0 = not placed yet) */
	/* recovery after phase changes (from time series) */
	size_t rec_shifts, rec_ok;
	double rec_med_s, rec_max_s;
} rcell_t;

struct dmr_report {
	dmr_report_cfg_t cfg;
	dmr_report_csv_t csv;
	char sum_dir[PATH_MAX]; /* SUMMARY's directory (the sweep's) */
	char out_dir[PATH_MAX];
	size_t nmetrics;
	char *metrics[DMR_REPORT_MAX_METRICS];
	int mcol[DMR_REPORT_MAX_METRICS];
	char *mbuf;
	size_t ncells;
	rcell_t *cells;
	size_t *ord; /* cells in output order */
	int cell_col, rep_col;
	char by[64]; /* "" = no --by axis */
	size_t nbase;
	char *bk[DMR_REPORT_MAX_KV], *bv[DMR_REPORT_MAX_KV];
	char *bbuf;
	int have_ratio;
	size_t naxes; /* keys shown as columns */
	char *axes[DMR_REPORT_MAX_KV + 4];
};

/* ---- cells (cells.c) ------------------------------------------------------ */

/* Cell c's value of key: one of its axes, else the column of that name in
 * its first row; NULL when neither. */
const char *dmr_report_cell_get(const dmr_report_t *r, const rcell_t *c, const char *key);
/* dmr_report_cell_get, "" for NULL. */
const char *dmr_report_axis_val(const dmr_report_t *r, const rcell_t *c, const char *key);
/* The distinct values of key over the cells in output order (at most max;
 * pointers into the report). Returns the count. */
size_t dmr_report_distinct(const dmr_report_t *r, const char *key, const char **out, size_t max);
/* The cell's axes other than skip1 / skip2 (may be NULL) as "k=v k=v". */
void dmr_report_other_axes(const dmr_report_t *r, const rcell_t *c, const char *skip1,
			   const char *skip2, char *out, size_t len);

/* ---- time series (series.c) ----------------------------------------------- */

/* A run's time series: per window its start t (s), committed per second
 * (tps; NaN for the last, possibly short, window and unusable rows), the
 * loop's actuator (NaN without that column) and phase (0 without it). */
typedef struct tseries {
	size_t n;
	double *t, *tps, *act, *phase;
	int has_act, has_phase; /* has_act: some window moved an actuator (non-zero) */
	double *w[4];		/* aura's weights aura_w_atomic, _rpc, _move, _load (has_w) */
	int has_w;
} tseries_t;

/* Load a timeseries.csv; 0, or -1 when it is missing or unusable (no t_s
 * or committed column, fewer than 2 windows). */
int dmr_report_ts_load(const char *path, tseries_t *ts);
void dmr_report_ts_free(tseries_t *ts);
/* The timeseries.csv of cell c's k-th row (SUMDIR/cells/D-rR/), and R. */
void dmr_report_cell_ts_path(const dmr_report_t *r, const rcell_t *c, size_t k, char *out,
			     size_t len, unsigned *rep_p);
/* Every cell's recovery after phase changes, from its rows' time series
 * (cells without readable series keep rec_shifts 0). */
void dmr_report_ts_recovery(dmr_report_t *r);

/* ---- plots (plots.c) ------------------------------------------------------ */

/* Metric m as bars with whiskers into pdir/METRIC.{png,svg} (script and
 * data beside them), gnuplot's output appended to log. Returns gnuplot's
 * exit status (0 ok, 127 not found) or -1 (a file could not be written). */
int dmr_report_plot_metric(const dmr_report_t *r, size_t m, const char *pdir, const char *log);
/* Cell c's aura weights over time (aura_w_* of its rows' series, phase
 * changes marked) into pdir/weights-CELL.{png,svg}; 1 when no row has them.
 * Returns as dmr_report_plot_timeseries. */
int dmr_report_plot_weights(const dmr_report_t *r, const rcell_t *c, const char *pdir,
			    const char *log);
/* Cell c's time series (committed, actuator, phase changes) into
 * pdir/ts-D.{png,svg}. As dmr_report_plot_metric, and 1: nothing to plot. */
int dmr_report_plot_timeseries(const dmr_report_t *r, const rcell_t *c, const char *pdir,
			       const char *log);

#endif /* DMR_REPORT_IMPL_H */
