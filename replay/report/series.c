/*
 * replay/report/series.c - the time series of a report's cells: a run's
 * timeseries.csv under the sweep's cells/ directory, and the recovery after
 * phase changes over a cell's repetitions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_statistics_double.h>

#include "../sweepdir.h"
#include "report_impl.h"

void dmr_report_ts_free(tseries_t *ts)
{
	free(ts->t);
	free(ts->tps);
	free(ts->act);
	free(ts->phase);
	for (int k = 0; k < 4; k++)
		free(ts->w[k]);
	memset(ts, 0, sizeof(*ts));
}

static double num_or_nan(const char *s)
{
	char *end;
	double x = strtod(s, &end);
	return end == s ? NAN : x;
}

/* Load DIR/timeseries.csv; 0 ok, -1 missing or unusable. */
int dmr_report_ts_load(const char *path, tseries_t *ts)
{
	dmr_report_csv_t csv;
	dmr_err_t err;
	memset(ts, 0, sizeof(*ts));
	if (access(path, R_OK) != 0 || dmr_report_csv_load(path, &csv, &err) != DMR_OK)
		return -1;
	int ct = dmr_report_csv_col(&csv, "t_s"), cc = dmr_report_csv_col(&csv, "committed");
	int ca = dmr_report_csv_col(&csv, "loop_actuator"), cp = dmr_report_csv_col(&csv, "phase");
	if (ct < 0 || cc < 0 || csv.nrows < 2) {
		dmr_report_csv_free(&csv);
		return -1;
	}
	size_t n = csv.nrows;
	ts->t = calloc(n, sizeof(double));
	ts->tps = calloc(n, sizeof(double));
	ts->act = calloc(n, sizeof(double));
	ts->phase = calloc(n, sizeof(double));
	if (!ts->t || !ts->tps || !ts->act || !ts->phase) {
		dmr_report_ts_free(ts);
		dmr_report_csv_free(&csv);
		return -1;
	}
	static const char *const wcol[4] = {"aura_w_atomic", "aura_w_rpc", "aura_w_move",
					    "aura_w_load"};
	int cw[4];
	ts->has_w = 1;
	for (int k = 0; k < 4; k++) {
		cw[k] = dmr_report_csv_col(&csv, wcol[k]);
		ts->has_w &= cw[k] >= 0;
	}
	for (int k = 0; k < 4 && ts->has_w; k++)
		if (!(ts->w[k] = calloc(n, sizeof(double)))) {
			dmr_report_ts_free(ts);
			dmr_report_csv_free(&csv);
			return -1;
		}
	for (size_t i = 0; i < n && ts->has_w; i++)
		for (int k = 0; k < 4; k++)
			ts->w[k][i] = num_or_nan(csv.rows[i][cw[k]]);
	ts->n = n;
	ts->has_act = 0;
	ts->has_phase = cp >= 0;
	for (size_t i = 0; i < n; i++) {
		ts->t[i] = num_or_nan(csv.rows[i][ct]);
		ts->act[i] = ca >= 0 ? num_or_nan(csv.rows[i][ca]) : NAN;
		ts->phase[i] = cp >= 0 ? num_or_nan(csv.rows[i][cp]) : 0;
		/* an actuator only where a loop moved one: aura's levers are no
		 * actuator (its column stays 0; its weights have their own plot) */
		ts->has_act |= ca >= 0 && ts->act[i] != 0 && !isnan(ts->act[i]);
	}
	for (size_t i = 0; i < n; i++) {
		double dt = i + 1 < n ? ts->t[i + 1] - ts->t[i] : ts->t[i] - ts->t[i - 1];
		double c = num_or_nan(csv.rows[i][cc]);
		ts->tps[i] = dt > 0 ? c / dt : NAN;
	}
	/* the last window may be short: drop it from rates */
	if (n > 2)
		ts->tps[n - 1] = NAN;
	dmr_report_csv_free(&csv);
	return 0;
}

void dmr_report_cell_ts_path(const dmr_report_t *r, const rcell_t *c, size_t k, char *out,
			     size_t len, unsigned *rep_p)
{
	char d[600];
	dmr_sweep_cell_dirname(c->name, d, sizeof(d));
	unsigned rep = 0;
	if (r->rep_col >= 0)
		rep = (unsigned)strtoul(r->csv.rows[c->rows[k]][r->rep_col], NULL, 10);
	*rep_p = rep;
	snprintf(out, len, "%s/cells/%s-r%u/timeseries.csv", r->sum_dir, d, rep);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void dmr_report_ts_recovery(dmr_report_t *r)
{
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		double rec[4096];
		size_t nrec = 0, nok = 0;
		for (size_t k = 0; k < cell->nrows && r->cell_col >= 0; k++) {
			char path[PATH_MAX + 700];
			unsigned rep;
			tseries_t ts;
			dmr_report_cell_ts_path(r, cell, k, path, sizeof(path), &rep);
			if (dmr_report_ts_load(path, &ts) != 0)
				continue;
			if (ts.has_phase) {
				/* windows with a NaN rate end the usable series */
				size_t n = ts.n;
				while (n && isnan(ts.tps[n - 1]))
					n--;
				double tmp[4096];
				size_t ns =
				    dmr_report_recovery(ts.t, ts.tps, ts.phase, n, 0.9, tmp, 4096);
				for (size_t i = 0; i < ns && i < 4096 && cell->rec_shifts < 4096;
				     i++) {
					cell->rec_shifts++;
					if (tmp[i] >= 0) {
						rec[nrec++] = tmp[i];
						nok++;
					}
				}
			}
			dmr_report_ts_free(&ts);
		}
		cell->rec_ok = nok;
		if (nrec) {
			qsort(rec, nrec, sizeof(double), dbl_cmp);
			cell->rec_med_s = gsl_stats_median_from_sorted_data(rec, 1, nrec);
			cell->rec_max_s = rec[nrec - 1];
		}
	}
}
