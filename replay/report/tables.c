/*
 * replay/report/tables.c - the report's files: report.csv (one row per cell
 * and metric), report.md (ratio pivots, all cells, recovery, plots), each
 * written atomically, and dmr_report_write, which also draws the plots
 * (contract in replay/report.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "report_impl.h"

static void fmt_val(const char *metric, double x, char *out, size_t len)
{
	size_t ml = strlen(metric);
	if (!isfinite(x))
		snprintf(out, len, "n/a");
	else if (ml > 4 && strcmp(metric + ml - 4, "_tps") == 0)
		snprintf(out, len, "%.1f K", x / 1e3);
	else if (fabs(x) >= 1000)
		snprintf(out, len, "%.0f", x);
	else
		snprintf(out, len, "%.4g", x);
}

static void fmt_ci(const char *metric, const dmr_report_ci_t *ci, char *out, size_t len)
{
	char a[48], b[48], c[48];
	fmt_val(metric, ci->est, a, sizeof(a));
	fmt_val(metric, ci->lo, b, sizeof(b));
	fmt_val(metric, ci->hi, c, sizeof(c));
	size_t ml = strlen(metric);
	if (ml > 4 && strcmp(metric + ml - 4, "_tps") == 0) { /* drop the repeated unit */
		char *k;
		if ((k = strstr(b, " K")))
			*k = '\0';
		if ((k = strstr(c, " K")))
			*k = '\0';
	}
	if (snprintf(out, len, "%s [%s, %s]", a, b, c) >= (int)len)
		out[len - 1] = '\0';
}

static void fmt_ratio(const dmr_report_ci_t *ci, char *out, size_t len)
{
	if (!isfinite(ci->est))
		snprintf(out, len, "n/a");
	else
		snprintf(out, len, "%.2fx [%.2f, %.2f]", ci->est, ci->lo, ci->hi);
}

/* report.csv: one row per cell and metric. 0, or -1 on a write error. */
static int write_csv(const dmr_report_t *r, FILE *f)
{
	fprintf(f, "cell");
	for (size_t a = 0; a < r->naxes; a++)
		fprintf(f, ",%s", r->axes[a]);
	fprintf(f, ",metric,n,median,lo,hi,baseline,ratio,ratio_lo,ratio_hi,recovery_shifts,"
		   "recovered,recovery_median_s,recovery_max_s\n");
	for (size_t o = 0; o < r->ncells; o++) {
		const rcell_t *c = &r->cells[r->ord[o]];
		for (size_t m = 0; m < r->nmetrics; m++) {
			fprintf(f, "%s", c->name);
			for (size_t a = 0; a < r->naxes; a++)
				fprintf(f, ",%s", dmr_report_axis_val(r, c, r->axes[a]));
			fprintf(f, ",%s,%zu,%.9g,%.9g,%.9g,", r->metrics[m], c->nrows, c->ci[m].est,
				c->ci[m].lo, c->ci[m].hi);
			if (c->base >= 0)
				fprintf(f, "%s,%.6g,%.6g,%.6g", r->cells[c->base].name,
					c->ratio[m].est, c->ratio[m].lo, c->ratio[m].hi);
			else
				fprintf(f, ",,,");
			if (c->rec_shifts)
				fprintf(f, ",%zu,%zu,%.6g,%.6g\n", c->rec_shifts, c->rec_ok,
					c->rec_ok ? c->rec_med_s : NAN,
					c->rec_ok ? c->rec_max_s : NAN);
			else
				fprintf(f, ",0,0,,\n");
		}
	}
	return ferror(f) ? -1 : 0;
}

/* report.md: the pivot of ratios per metric, all cells, recovery, plots.
 * 0, or -1 on a write error. */
static int write_md(const dmr_report_t *r, FILE *f, int plots_ok, const unsigned char *metric_ok,
		    size_t nts)
{
	char base[256] = "";
	for (size_t i = 0, o = 0; i < r->nbase; i++)
		o += (size_t)snprintf(base + o, sizeof(base) - o, "%s%s=%s", i ? "," : "", r->bk[i],
				      r->bv[i]);
	fprintf(f, "# Report: %s\n\n", r->cfg.summary);
	fprintf(f,
		"%zu rows in %zu cells. Each figure is the median over a cell's repetitions with a "
		"95 %% percentile-bootstrap interval [lo, hi] (%u resamples, gsl mt19937, seed "
		"%" PRIu64 "). With few repetitions the interval of a median cannot be wider "
		"than the range of the values.\n",
		r->csv.nrows, r->ncells, r->cfg.resamples, r->cfg.seed);
	if (r->have_ratio)
		fprintf(f,
			"Ratios are to the baseline cell `%s` with the same other axes; cell and "
			"baseline are resampled independently.\n",
			base);
	fprintf(f, "\n");
	/* pivot of ratios: rows = other axes, columns = the baseline key's values */
	if (r->have_ratio && r->nbase == 1) {
		const char *cols[64];
		size_t nc = dmr_report_distinct(r, r->bk[0], cols, 64);
		for (size_t m = 0; m < r->nmetrics; m++) {
			fprintf(f, "## %s vs %s\n\n| cell |", r->metrics[m], base);
			for (size_t j = 0; j < nc; j++)
				fprintf(f, " %s=%s |", r->bk[0], cols[j]);
			fprintf(f, "\n| --- |");
			for (size_t j = 0; j < nc; j++)
				fprintf(f, " --- |");
			fprintf(f, "\n");
			/* one table row per distinct other-axes label */
			char seen[64][256];
			size_t ns = 0;
			for (size_t o = 0; o < r->ncells; o++) {
				const rcell_t *c = &r->cells[r->ord[o]];
				char lab[256];
				dmr_report_other_axes(r, c, r->bk[0], NULL, lab, sizeof(lab));
				size_t s;
				for (s = 0; s < ns; s++)
					if (strcmp(seen[s], lab) == 0)
						break;
				if (s < ns || ns == 64)
					continue;
				snprintf(seen[ns++], sizeof(seen[0]), "%s", lab);
				fprintf(f, "| %s |", lab[0] ? lab : "-");
				for (size_t j = 0; j < nc; j++) {
					const rcell_t *hit = NULL;
					for (size_t q = 0; q < r->ncells; q++) {
						const rcell_t *d = &r->cells[q];
						char l2[256];
						dmr_report_other_axes(r, d, r->bk[0], NULL, l2,
								      sizeof(l2));
						if (strcmp(l2, lab) == 0 &&
						    strcmp(dmr_report_axis_val(r, d, r->bk[0]),
							   cols[j]) == 0)
							hit = d;
					}
					char buf[96];
					if (!hit)
						snprintf(buf, sizeof(buf), "-");
					else if (hit->is_base)
						fmt_ci(r->metrics[m], &hit->ci[m], buf,
						       sizeof(buf));
					else
						fmt_ratio(&hit->ratio[m], buf, sizeof(buf));
					fprintf(f, " %s |", buf);
				}
				fprintf(f, "\n");
			}
			fprintf(
			    f,
			    "\nThe baseline column gives the median [95 %% interval]; the others "
			    "the ratio to it [95 %% interval].\n\n");
		}
	}
	/* full table */
	fprintf(f, "## All cells\n\n|");
	for (size_t a = 0; a < r->naxes; a++)
		fprintf(f, " %s |", r->axes[a]);
	fprintf(f, " n |");
	for (size_t m = 0; m < r->nmetrics; m++) {
		fprintf(f, " %s |", r->metrics[m]);
		if (r->have_ratio)
			fprintf(f, " %s vs baseline |", r->metrics[m]);
	}
	fprintf(f, "\n|");
	for (size_t a = 0; a < r->naxes + 1 + r->nmetrics * (r->have_ratio ? 2 : 1); a++)
		fprintf(f, " --- |");
	fprintf(f, "\n");
	for (size_t o = 0; o < r->ncells; o++) {
		const rcell_t *c = &r->cells[r->ord[o]];
		fprintf(f, "|");
		for (size_t a = 0; a < r->naxes; a++)
			fprintf(f, " %s |", dmr_report_axis_val(r, c, r->axes[a]));
		fprintf(f, " %zu |", c->nrows);
		for (size_t m = 0; m < r->nmetrics; m++) {
			char buf[96];
			fmt_ci(r->metrics[m], &c->ci[m], buf, sizeof(buf));
			fprintf(f, " %s |", buf);
			if (r->have_ratio) {
				if (c->is_base)
					snprintf(buf, sizeof(buf), "baseline");
				else if (c->base < 0)
					snprintf(buf, sizeof(buf), "no baseline cell");
				else
					fmt_ratio(&c->ratio[m], buf, sizeof(buf));
				fprintf(f, " %s |", buf);
			}
		}
		fprintf(f, "\n");
	}
	int anyrec = 0;
	for (size_t c = 0; c < r->ncells; c++)
		anyrec |= r->cells[c].rec_shifts > 0;
	if (anyrec) {
		fprintf(f,
			"\n## Recovery after phase changes\n\n"
			"Time from a phase change (the hot set moved) to the end of the first "
			"time-series window whose committed throughput is at least 90 %% of the "
			"mean over the windows before the change (up to 10, at most half the "
			"previous phase); resolution: one window, and one window means the "
			"throughput never fell below 90 %%. Median and maximum over all "
			"changes of all repetitions; 'recovered' counts the changes that reached "
			"90 %% before the next one.\n\n| cell | changes | recovered | median ms | "
			"max ms |\n| --- | --- | --- | --- | --- |\n");
		for (size_t o = 0; o < r->ncells; o++) {
			const rcell_t *c = &r->cells[r->ord[o]];
			if (!c->rec_shifts)
				continue;
			char lab[256];
			dmr_report_other_axes(r, c, NULL, NULL, lab, sizeof(lab));
			if (c->rec_ok)
				fprintf(f, "| %s | %zu | %zu | %.1f | %.1f |\n", lab, c->rec_shifts,
					c->rec_ok, c->rec_med_s * 1e3, c->rec_max_s * 1e3);
			else
				fprintf(f, "| %s | %zu | 0 | - | - |\n", lab, c->rec_shifts);
		}
	}
	if (plots_ok) {
		fprintf(f, "\n## Plots\n\n");
		for (size_t m = 0; m < r->nmetrics; m++)
			if (metric_ok[m])
				fprintf(f, "![%s](plots/%s.png) ([SVG](plots/%s.svg))\n\n",
					r->metrics[m], r->metrics[m], r->metrics[m]);
			else
				fprintf(f,
					"%s: no plot (gnuplot failed; see plots/gnuplot.log)\n\n",
					r->metrics[m]);
		if (nts)
			fprintf(f,
				"Time series of %zu cell(s) (committed throughput and the loop's "
				"actuator; dotted lines: phase changes): `plots/ts-*.png`.\n",
				nts);
		else
			fprintf(f, "No time series plots: no cell has a readable "
				   "`timeseries.csv` under the sweep's cells/ directory.\n");
	}
	return ferror(f) ? -1 : 0;
}

/* Commit a (fill_rc 0) or drop it (a write error): a->path is replaced
 * whole or not at all. */
static dmr_status_t afile_end(dmr_afile_t *a, int fill_rc, dmr_err_t *err)
{
	if (fill_rc != 0) {
		dmr_afile_abort(a);
		return dmr_err_set(err, DMR_ERR_IO, "%s: write failed", a->path);
	}
	return dmr_afile_commit(a, err);
}

dmr_status_t dmr_report_write(dmr_report_t *r, dmr_err_t *err)
{
	char path[PATH_MAX + 32], pdir[PATH_MAX + 16], log[PATH_MAX + 48];
	dmr_status_t st = dmr_mkdir_p(r->out_dir, 0, err);
	if (st != DMR_OK)
		return st;
	int plots_ok = 0;
	size_t nts = 0;
	unsigned char *metric_ok = calloc(r->nmetrics ? r->nmetrics : 1, 1);
	if (!metric_ok)
		return dmr_err_set(err, DMR_ERR_NOMEM, "report: out of memory");
	if (r->cfg.plots) {
		snprintf(pdir, sizeof(pdir), "%s/plots", r->out_dir);
		snprintf(log, sizeof(log), "%s/gnuplot.log", pdir);
		if ((st = dmr_mkdir_p(pdir, 0, err)) != DMR_OK) {
			free(metric_ok);
			return st;
		}
		remove(log);
		int bad = 0;
		for (size_t m = 0; m < r->nmetrics && !bad; m++) {
			int rc = dmr_report_plot_metric(r, m, pdir, log);
			metric_ok[m] = rc == 0;
			if (rc == 127) {
				fprintf(stderr, "dmreplay report: warning: gnuplot not found "
						"(scripts/deps installs gnuplot-nox): no plots\n");
				bad = 1;
			} else if (rc != 0) {
				fprintf(
				    stderr,
				    "dmreplay report: warning: gnuplot failed for %s (see %s)\n",
				    r->metrics[m], log);
			}
		}
		plots_ok = !bad;
		for (size_t c = 0; c < r->ncells && plots_ok; c++) {
			int rc = dmr_report_plot_timeseries(r, &r->cells[c], pdir, log);
			nts += rc == 0;
			if (rc != 0 && rc != 1)
				fprintf(stderr,
					"dmreplay report: warning: gnuplot failed for the time "
					"series of %s (see %s)\n",
					r->cells[c].name, log);
		}
	}
	dmr_afile_t a;
	snprintf(path, sizeof(path), "%s/report.csv", r->out_dir);
	if ((st = dmr_afile_open(&a, path, err)) == DMR_OK)
		st = afile_end(&a, write_csv(r, a.f), err);
	snprintf(path, sizeof(path), "%s/report.md", r->out_dir);
	if (st == DMR_OK && (st = dmr_afile_open(&a, path, err)) == DMR_OK)
		st = afile_end(&a, write_md(r, a.f, plots_ok, metric_ok, nts), err);
	free(metric_ok);
	return st;
}
