/*
 * replay/report.h - `dmreplay report SUMMARY.csv`: per cell the median of
 * each metric over its repetitions with a 95 % percentile-bootstrap interval,
 * the ratio to a baseline cell with its interval, as Markdown, CSV and
 * gnuplot plots.
 *
 * Cells: rows with the same `cell` column (a sweep's summary.csv, see
 * replay/sweep.h) form one cell; its axes are the "key=value" pairs of the
 * cell name. Without a `cell` column a cell is the set of rows with the same
 * workload, regime, backend, profile, cns, threads, coros (and loop when
 * present). A key named by --by or --baseline that is not one of the cell's
 * axes is read from the column of that name.
 *
 * Bootstrap: B resamples (default 1000) of the cell's n values with
 * replacement, the statistic is the median of each resample; the interval is
 * the 2.5 and 97.5 % quantiles of the B statistics
 * (gsl_stats_quantile_from_sorted_data). The ratio resamples the cell and
 * the baseline independently and takes median(cell*) / median(baseline*).
 * The generator is gsl_rng_mt19937 seeded with --seed mixed with a hash of
 * the cell and metric names, so a cell's interval does not depend on which
 * other cells are in the file. With n = 3 the interval of a median is at
 * best the range of the three values: read it as such.
 *
 * The baseline ("loop=none"; several pairs separated by ',') names, for a
 * cell C, the cell with C's axes but the baseline's values for the
 * baseline's keys. Default: loop=none when the cells have a loop key, else
 * no ratios.
 */
#ifndef DMR_REPORT_H
#define DMR_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/base/status.h"
#include "sweepdir.h"

/* ---- CSV ---------------------------------------------------------------- */

/* dmr_report_csv_split (one line into fields): replay/sweepdir.h. */

typedef struct dmr_report_csv {
	size_t ncols, nrows;
	char **cols;  /* header names */
	char ***rows; /* nrows x ncols */
	size_t *line; /* 1-based file line of each row */
	char *buf;    /* storage */
} dmr_report_csv_t;

/* Load a CSV file with a header line. Refused (DMR_ERR_PARSE, "FILE:N:"
 * named): an empty file, a header without columns, a line whose field count
 * differs from the header's, no data rows. DMR_ERR_IO: unreadable. */
dmr_status_t dmr_report_csv_load(const char *path, dmr_report_csv_t *csv_p, dmr_err_t *err);
void dmr_report_csv_free(dmr_report_csv_t *csv);
/* Index of column name, or -1. */
int dmr_report_csv_col(const dmr_report_csv_t *csv, const char *name);

/* ---- statistics --------------------------------------------------------- */

typedef struct dmr_report_ci {
	double est;    /* median (or ratio of medians) */
	double lo, hi; /* 95 % percentile-bootstrap interval */
} dmr_report_ci_t;

/* Median of x[0..n) (n >= 1; x is not modified). */
double dmr_report_median(const double *x, size_t n);
/* Bootstrap interval of the median. DMR_ERR_INVALID for n == 0 or
 * resamples == 0. */
dmr_status_t dmr_report_boot_median(const double *x, size_t n, unsigned resamples, uint64_t seed,
				    dmr_report_ci_t *ci_p);
/* Ratio median(x) / median(b) with both resampled independently; est is the
 * ratio of the medians (inf or nan when median(b) is 0). */
dmr_status_t dmr_report_boot_ratio(const double *x, size_t nx, const double *b, size_t nb,
				   unsigned resamples, uint64_t seed, dmr_report_ci_t *ci_p);

/*
 * Recovery after phase changes, from a time series: t (window start, s),
 * tps (committed per second in the window) and phase (value per window), n
 * windows. For every phase change at window i, the pre-shift level is the
 * mean of tps over the last max(1, min(10, half the previous phase))
 * windows before i; the recovery time is the end of the first window at or
 * after i whose tps >= frac * level, minus t[i]. A shift that does not
 * recover before the next shift or the end is reported as -1.
 * Writes up to max recovery times to out; returns the number of shifts.
 */
size_t dmr_report_recovery(const double *t, const double *tps, const double *phase, size_t n,
			   double frac, double *out, size_t max);

/* ---- the report --------------------------------------------------------- */

typedef struct dmr_report_cfg {
	const char *summary;  /* SUMMARY.csv */
	const char *baseline; /* "loop=none", NULL = default */
	const char *by;	      /* default "regime" */
	const char *metrics;  /* default "committed_tps,abort_rate,atomics_per_commit" */
	const char *out_dir;  /* default: SUMMARY's directory + "/report" */
	unsigned resamples;   /* default 1000 */
	uint64_t seed;	      /* default 1 */
	int plots;	      /* 1: run gnuplot (default) */
	int quiet;
} dmr_report_cfg_t;

void dmr_report_cfg_default(dmr_report_cfg_t *cfg);

typedef struct dmr_report dmr_report_t;

/* Load SUMMARY, group cells, check metrics (a non-numeric value is refused
 * naming line and column), resolve the baseline (one that matches no cell
 * is refused), compute every interval. */
dmr_status_t dmr_report_compute(const dmr_report_cfg_t *cfg, dmr_report_t **rep_p, dmr_err_t *err);
/* Write report.md, report.csv (and plots/ when cfg->plots) into out_dir. */
dmr_status_t dmr_report_write(dmr_report_t *rep, dmr_err_t *err);
void dmr_report_free(dmr_report_t *rep);

/* Accessors (tests): number of cells; cell i's name, and metric m's
 * interval and ratio (has_ratio 0 when the cell has no baseline). */
size_t dmr_report_ncells(const dmr_report_t *rep);
const char *dmr_report_cell_name(const dmr_report_t *rep, size_t i);
int dmr_report_cell_stat(const dmr_report_t *rep, size_t i, const char *metric,
			 dmr_report_ci_t *ci_p, dmr_report_ci_t *ratio_p, int *has_ratio_p);

/* CLI entry: `dmreplay report ...` (argv[0] = "report"); 0 ok, 2 bad
 * input or usage, 1 other failure. */
int dmr_report_main(int argc, char **argv);

#endif /* DMR_REPORT_H */
