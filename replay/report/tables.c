/*
 * replay/report/tables.c - the report's files: report.csv (one row per cell
 * and metric), report.md (ratio pivots, all cells, recovery, plots), and
 * dmr_report_write, which also draws the plots; all of them replace the
 * previous report together or not at all (contract in replay/report.h).
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
		    size_t nts, size_t nwt)
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
				   "`timeseries.csv` of at least 2 windows under the sweep's "
				   "cells/ directory (a run shorter than two windows: give "
				   "the sweep a smaller `window_ms`).\n");
		if (nwt)
			fprintf(f,
				"\nAura's cost-model weights of %zu cell(s) (per window; dotted "
				"lines: phase changes): `plots/weights-*.png`.\n",
				nwt);
	}
	return ferror(f) ? -1 : 0;
}

/* Fill a's temp file (fill_rc: what the writer returned) and make sure
 * every byte reached the file system (flush, fsync): 0, or -1 with err set
 * (the temp file stays until dmr_afile_abort). */
static int afile_fill_done(dmr_afile_t *a, int fill_rc, dmr_err_t *err)
{
	if (fill_rc != 0 || fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0) {
		dmr_err_set(err, DMR_ERR_IO, "%s: write failed: %s", a->path,
			    strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/* rm -r of a plots directory (nftw callback). */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Draw the plots into pdir (a fresh directory); *plots_ok, metric_ok[m],
 * *nts, *nwt as write_md takes them. */
static void draw_plots(dmr_report_t *r, const char *pdir, int *plots_ok, unsigned char *metric_ok,
		       size_t *nts, size_t *nwt)
{
	char log[PATH_MAX + 128];
	snprintf(log, sizeof(log), "%.*s/gnuplot.log", PATH_MAX, pdir);
	int bad = 0;
	for (size_t m = 0; m < r->nmetrics && !bad; m++) {
		int rc = dmr_report_plot_metric(r, m, pdir, log);
		metric_ok[m] = rc == 0;
		if (rc == 127) {
			fprintf(stderr, "dmreplay report: warning: gnuplot not found "
					"(scripts/deps installs gnuplot-nox): no plots\n");
			bad = 1;
		} else if (rc != 0) {
			fprintf(stderr,
				"dmreplay report: warning: gnuplot failed for %s (see "
				"plots/gnuplot.log)\n",
				r->metrics[m]);
		}
	}
	*plots_ok = !bad;
	for (size_t c = 0; c < r->ncells && *plots_ok; c++) {
		int rc = dmr_report_plot_timeseries(r, &r->cells[c], pdir, log);
		*nts += rc == 0;
		if (rc != 0 && rc != 1)
			fprintf(stderr,
				"dmreplay report: warning: gnuplot failed for the time "
				"series of %s (see plots/gnuplot.log)\n",
				r->cells[c].name);
		rc = dmr_report_plot_weights(r, &r->cells[c], pdir, log);
		*nwt += rc == 0;
		if (rc != 0 && rc != 1)
			fprintf(stderr,
				"dmreplay report: warning: gnuplot failed for the aura "
				"weights of %s (see plots/gnuplot.log)\n",
				r->cells[c].name);
	}
}

/*
 * All or nothing: the plots go to OUT/.plots.PID/, report.csv and report.md
 * to temp files (dmr_afile_*); only when every one of them is complete
 * (flushed and fsynced) are they put in place: report.csv (its previous
 * version kept as a hard link until the end), report.md (when that fails
 * the previous report.csv is put back), then the plots directory swapped
 * with the previous one. A failure (a full disk) leaves the previous report
 * whole.
 */
dmr_status_t dmr_report_write(dmr_report_t *r, dmr_err_t *err)
{
	char csvp[PATH_MAX + 32], mdp[PATH_MAX + 32], pdir[PATH_MAX + 16], ptmp[PATH_MAX + 48],
	    pold[PATH_MAX + 48], bak[PATH_MAX + 48];
	dmr_status_t st = dmr_mkdir_p(r->out_dir, 0, err);
	if (st != DMR_OK)
		return st;
	int plots_ok = 0;
	size_t nts = 0, nwt = 0;
	unsigned char *metric_ok = calloc(r->nmetrics ? r->nmetrics : 1, 1);
	if (!metric_ok)
		return dmr_err_set(err, DMR_ERR_NOMEM, "report: out of memory");
	long pid = (long)getpid();
	snprintf(pdir, sizeof(pdir), "%s/plots", r->out_dir);
	snprintf(ptmp, sizeof(ptmp), "%s/.plots.%ld", r->out_dir, pid);
	snprintf(pold, sizeof(pold), "%s/.plots.%ld.old", r->out_dir, pid);
	snprintf(bak, sizeof(bak), "%s/.report.csv.%ld.old", r->out_dir, pid);
	snprintf(csvp, sizeof(csvp), "%s/report.csv", r->out_dir);
	snprintf(mdp, sizeof(mdp), "%s/report.md", r->out_dir);
	if (r->cfg.plots) {
		rm_tree(ptmp);
		if ((st = dmr_mkdir_p(ptmp, 0, err)) != DMR_OK) {
			free(metric_ok);
			return st;
		}
		draw_plots(r, ptmp, &plots_ok, metric_ok, &nts, &nwt);
	}
	dmr_afile_t ac, am;
	memset(&am, 0, sizeof(am));
	int have_c = 0, have_m = 0;
	if ((st = dmr_afile_open(&ac, csvp, err)) != DMR_OK)
		goto fail;
	have_c = 1;
	if ((st = dmr_afile_open(&am, mdp, err)) != DMR_OK)
		goto fail;
	have_m = 1;
	errno = 0;
	if (afile_fill_done(&ac, write_csv(r, ac.f), err) != 0 ||
	    afile_fill_done(&am, write_md(r, am.f, plots_ok, metric_ok, nts, nwt), err) != 0) {
		st = DMR_ERR_IO;
		goto fail;
	}
	/* both complete: put them in place */
	unlink(bak);
	int had_csv = link(csvp, bak) == 0;
	have_c = 0;
	if ((st = dmr_afile_commit(&ac, err)) != DMR_OK) {
		if (had_csv)
			unlink(bak);
		goto fail;
	}
	have_m = 0;
	if ((st = dmr_afile_commit(&am, err)) != DMR_OK) {
		/* the new report.csv without its report.md: the previous one back */
		if (had_csv)
			rename(bak, csvp);
		else
			unlink(csvp);
		goto fail;
	}
	if (had_csv)
		unlink(bak);
	if (r->cfg.plots) {
		rm_tree(pold);
		int had_plots = rename(pdir, pold) == 0;
		if (rename(ptmp, pdir) != 0) {
			st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", pdir, strerror(errno));
			if (had_plots)
				rename(pold, pdir);
		} else if (had_plots) {
			rm_tree(pold);
		}
	}
	rm_tree(ptmp);
	free(metric_ok);
	return st;
fail:
	if (have_c)
		dmr_afile_abort(&ac);
	if (have_m)
		dmr_afile_abort(&am);
	if (r->cfg.plots)
		rm_tree(ptmp);
	free(metric_ok);
	return st;
}
