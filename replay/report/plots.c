/*
 * replay/report/plots.c - the report's plots: per metric a bar chart with
 * whiskers, per cell its time series; gnuplot scripts and data written
 * beside the images, gnuplot run on them (PNG and SVG).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sweepdir.h"
#include "report_impl.h"

static int run_gnuplot(const char *script, const char *log)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* in the plots directory: the scripts name their files relative to
		 * it, so they still work after it is renamed into place */
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", script);
		char *sl = strrchr(dir, '/');
		if (sl) {
			*sl = '\0';
			if (chdir(dir) != 0)
				_exit(126);
		}
		execlp("gnuplot", "gnuplot", sl ? sl + 1 : script, (char *)NULL);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* gnuplot string of s followed by suffix (may be ""): single quotes are
 * escaped by doubling. */
static void gq2(FILE *f, const char *s, const char *suffix)
{
	fputc('\'', f);
	for (int part = 0; part < 2; part++)
		for (const char *p = part ? suffix : s; *p; p++) {
			if (*p == '\'')
				fputc('\'', f);
			fputc(*p, f);
		}
	fputc('\'', f);
}

static void gq(FILE *f, const char *s)
{
	gq2(f, s, "");
}

/* The file name of a path (what the scripts refer to: see run_gnuplot). */
static const char *base(const char *path)
{
	const char *sl = strrchr(path, '/');
	return sl ? sl + 1 : path;
}

static void term_lines(FILE *f, const char *stem, int svg)
{
	if (svg)
		fprintf(f, "set terminal svg size 960,540 dynamic enhanced font 'sans,11'\n");
	else
		fprintf(f, "set terminal pngcairo size 960,540 enhanced font 'sans,10'\n");
	fprintf(f, "set output ");
	gq2(f, base(stem), svg ? ".svg" : ".png");
	fprintf(f, "\n");
}

/* A bar chart with whiskers: x = --by values, one series per other-axes
 * combination. Returns 0 when gnuplot produced it. */
int dmr_report_plot_metric(const dmr_report_t *r, size_t m, const char *pdir, const char *log)
{
	char stem[PATH_MAX + 64], dat[PATH_MAX + 64], gp[PATH_MAX + 64];
	snprintf(stem, sizeof(stem), "%s/%s", pdir, r->metrics[m]);
	if (snprintf(dat, sizeof(dat), "%s.dat", stem) >= (int)sizeof(dat) ||
	    snprintf(gp, sizeof(gp), "%s.gp", stem) >= (int)sizeof(gp))
		return -1;
	const char *xs[64];
	size_t nx = r->by[0] ? dmr_report_distinct(r, r->by, xs, 64) : 0;
	char series[32][256];
	size_t nser = 0;
	for (size_t o = 0; o < r->ncells; o++) {
		char lab[256];
		dmr_report_other_axes(r, &r->cells[r->ord[o]], r->by[0] ? r->by : NULL, NULL, lab,
				      sizeof(lab));
		if (!r->by[0])
			snprintf(lab, sizeof(lab), "all");
		size_t s;
		for (s = 0; s < nser; s++)
			if (strcmp(series[s], lab) == 0)
				break;
		if (s == nser && nser < 32)
			snprintf(series[nser++], sizeof(series[0]), "%s", lab);
	}
	FILE *f = fopen(dat, "w");
	if (!f)
		return -1;
	size_t nrowsx = r->by[0] ? nx : r->ncells;
	int tps = strlen(r->metrics[m]) > 4 &&
		  strcmp(r->metrics[m] + strlen(r->metrics[m]) - 4, "_tps") == 0;
	double scale = tps ? 1e-3 : 1;
	for (size_t x = 0; x < nrowsx; x++) {
		const char *xl = r->by[0] ? xs[x] : r->cells[r->ord[x]].name;
		fprintf(f, "\"%s\"", xl);
		for (size_t s = 0; s < nser; s++) {
			const rcell_t *hit = NULL;
			if (!r->by[0]) {
				hit = s == 0 ? &r->cells[r->ord[x]] : NULL;
			} else {
				for (size_t q = 0; q < r->ncells; q++) {
					const rcell_t *d = &r->cells[q];
					char lab[256];
					dmr_report_other_axes(r, d, r->by, NULL, lab, sizeof(lab));
					if (strcmp(lab, series[s]) == 0 &&
					    strcmp(dmr_report_axis_val(r, d, r->by), xl) == 0)
						hit = d;
				}
			}
			if (hit)
				fprintf(f, " %.9g %.9g %.9g", hit->ci[m].est * scale,
					hit->ci[m].lo * scale, hit->ci[m].hi * scale);
			else
				fprintf(f, " NaN NaN NaN");
		}
		fprintf(f, "\n");
	}
	fclose(f);
	f = fopen(gp, "w");
	if (!f)
		return -1;
	for (int svg = 0; svg < 2; svg++) {
		term_lines(f, stem, svg);
		fprintf(f, "set title ");
		char t[400];
		snprintf(t, sizeof(t), "%s%s: median and 95%% bootstrap interval", r->metrics[m],
			 tps ? " (K txn/s)" : "");
		gq(f, t);
		fprintf(f, " noenhanced\nset style data histogram\n"
			   "set style histogram errorbars gap 2 lw 1\n"
			   "set style fill solid 0.6 border -1\nset boxwidth 0.9\n"
			   "set key outside right top vertical noenhanced\nset grid ytics\n"
			   "set yrange [0:*]\nset xtics noenhanced\n");
		if (r->by[0]) {
			fprintf(f, "set xlabel ");
			gq(f, r->by);
			fprintf(f, " noenhanced\n");
		}
		fprintf(f, "plot ");
		for (size_t s = 0; s < nser; s++) {
			if (s)
				fprintf(f, ", ");
			gq(f, base(dat));
			fprintf(f, " using %zu:%zu:%zu%s title ", 2 + 3 * s, 3 + 3 * s, 4 + 3 * s,
				s == 0 ? ":xtic(1)" : "");
			gq(f, series[s]);
		}
		fprintf(f, "\nunset output\n");
	}
	fclose(f);
	return run_gnuplot(gp, log);
}

/* The data files of cell c's rows (at most 8) for one plot: STEM-rR.dat
 * each, the committed rate, actuator and phase (weights 0) or aura's four
 * weights and phase (weights 1: rows without them are skipped); their
 * names in dats, repetitions in reps, the first file's phase changes in
 * shifts (*nshift, at most 512), *has_act whether a row had an actuator.
 * Returns the files written. */
#define PLOT_MAX_ROWS 8
#define PLOT_MAX_SHIFTS 512
static size_t write_series(const dmr_report_t *r, const rcell_t *c, const char *stem, int weights,
			   char (*dats)[PATH_MAX + 720], unsigned *reps, double *shifts,
			   size_t *nshift, int *has_act)
{
	size_t nd = 0;
	*nshift = 0;
	*has_act = 0;
	for (size_t k = 0; k < c->nrows && nd < PLOT_MAX_ROWS; k++) {
		char path[PATH_MAX + 700];
		tseries_t ts;
		dmr_report_cell_ts_path(r, c, k, path, sizeof(path), &reps[nd]);
		if (dmr_report_ts_load(path, &ts) != 0)
			continue;
		if (weights && !ts.has_w) {
			dmr_report_ts_free(&ts);
			continue;
		}
		snprintf(dats[nd], sizeof(dats[nd]), "%s-r%u.dat", stem, reps[nd]);
		FILE *f = fopen(dats[nd], "w");
		if (!f) {
			dmr_report_ts_free(&ts);
			continue;
		}
		if (weights) {
			fprintf(f, "# t_s w_atomic w_rpc w_move w_load phase\n");
			for (size_t i = 0; i < ts.n; i++)
				fprintf(f, "%.9g %.9g %.9g %.9g %.9g %.9g\n", ts.t[i], ts.w[0][i],
					ts.w[1][i], ts.w[2][i], ts.w[3][i], ts.phase[i]);
		} else {
			fprintf(f, "# t_s committed_ktps loop_actuator phase\n");
			for (size_t i = 0; i < ts.n; i++)
				fprintf(f, "%.9g %.9g %.9g %.9g\n", ts.t[i], ts.tps[i] / 1e3,
					ts.act[i], ts.phase[i]);
		}
		fclose(f);
		*has_act |= ts.has_act;
		if (nd == 0 && ts.has_phase)
			for (size_t i = 1; i < ts.n && *nshift < PLOT_MAX_SHIFTS; i++)
				if (ts.phase[i] != ts.phase[i - 1])
					shifts[(*nshift)++] = ts.t[i];
		nd++;
		dmr_report_ts_free(&ts);
	}
	return nd;
}

/* A cell's plot: its stem ("PDIR/PREFIX-CELLDIR") and gnuplot script, the
 * data files write_series wrote for it, their repetitions and the phase
 * changes of the first. */
typedef struct plotset {
	char stem[PATH_MAX + 700], gp[PATH_MAX + 720];
	char dats[PLOT_MAX_ROWS][PATH_MAX + 720];
	unsigned reps[PLOT_MAX_ROWS];
	double shifts[PLOT_MAX_SHIFTS];
	size_t nd, nshift;
	int has_act;
} plotset_t;

/* Fill p for cell c (weights as write_series takes it) and open its
 * script: the FILE, or NULL with *rc = 1 (nothing to plot) or -1. */
static FILE *plotset_open(plotset_t *p, const dmr_report_t *r, const rcell_t *c, const char *pdir,
			  const char *prefix, int weights, int *rc)
{
	char d[600];
	dmr_sweep_cell_dirname(c->name, d, sizeof(d));
	snprintf(p->stem, sizeof(p->stem), "%s/%s-%s", pdir, prefix, d);
	*rc = -1;
	if (snprintf(p->gp, sizeof(p->gp), "%s.gp", p->stem) >= (int)sizeof(p->gp))
		return NULL;
	p->nd = write_series(r, c, p->stem, weights, p->dats, p->reps, p->shifts, &p->nshift,
			     &p->has_act);
	if (!p->nd) {
		*rc = 1; /* nothing to plot */
		return NULL;
	}
	return fopen(p->gp, "w");
}

/* The phase changes as dotted vertical lines. */
static void phase_arrows(FILE *f, const plotset_t *p)
{
	for (size_t i = 0; i < p->nshift; i++)
		fprintf(
		    f,
		    "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 3 lc rgb 'gray40'\n",
		    p->shifts[i], p->shifts[i]);
}

int dmr_report_plot_timeseries(const dmr_report_t *r, const rcell_t *c, const char *pdir,
			       const char *log)
{
	plotset_t p;
	int rc;
	FILE *f = plotset_open(&p, r, c, pdir, "ts", 0, &rc);
	if (!f)
		return rc;
	for (int svg = 0; svg < 2; svg++) {
		term_lines(f, p.stem, svg);
		fprintf(f, "set title ");
		gq(f, c->name);
		fprintf(f, " noenhanced\nset xlabel 'run time (s)'\n"
			   "set ylabel 'committed (K txn/s)'\nset grid\nset key outside bottom "
			   "center horizontal noenhanced\nset yrange [0:*]\nunset arrow\n");
		if (p.has_act)
			fprintf(f, "set y2label 'loop actuator'\nset y2tics\nset y2range [0:*]\n");
		phase_arrows(f, &p);
		fprintf(f, "plot ");
		for (size_t i = 0; i < p.nd; i++) {
			fprintf(f, "%s", i ? ", " : "");
			gq(f, base(p.dats[i]));
			fprintf(f, " using 1:2 with lines lw 1.5 lc %zu title 'committed r%u'",
				i + 1, p.reps[i]);
			if (p.has_act) {
				fprintf(f, ", ");
				gq(f, base(p.dats[i]));
				fprintf(f,
					" using 1:3 axes x1y2 with steps dt 2 lc %zu title "
					"'actuator r%u'",
					i + 1, p.reps[i]);
			}
		}
		fprintf(f, "\nunset output\n");
	}
	fclose(f);
	return run_gnuplot(p.gp, log);
}

int dmr_report_plot_weights(const dmr_report_t *r, const rcell_t *c, const char *pdir,
			    const char *log)
{
	static const char *const wname[4] = {"atomic", "rpc", "move", "load"};
	plotset_t p;
	int rc;
	FILE *f = plotset_open(&p, r, c, pdir, "weights", 1, &rc);
	if (!f)
		return rc; /* 1: no aura weights */
	for (int svg = 0; svg < 2; svg++) {
		term_lines(f, p.stem, svg);
		fprintf(f, "set title ");
		gq2(f, c->name, ": aura weights");
		fprintf(f, " noenhanced\nset xlabel 'run time (s)'\n"
			   "set ylabel 'weight'\nset logscale y\nset grid\nset key outside bottom "
			   "center horizontal noenhanced\nunset arrow\n");
		phase_arrows(f, &p);
		fprintf(f, "plot ");
		for (size_t i = 0; i < p.nd; i++)
			for (int k = 0; k < 4; k++) {
				fprintf(f, "%s", i || k ? ", " : "");
				gq(f, base(p.dats[i]));
				/* a weight at 0 has no place on a log axis: drawn at
				 * 1e-6 (the table of the final weights has them) */
				fprintf(
				    f,
				    " using 1:($%d > 0 ? $%d : 1e-6) with steps lw 1.5 lc %d dt "
				    "%zu title '%s r%u'",
				    k + 2, k + 2, k + 1, i + 1, wname[k], p.reps[i]);
			}
		fprintf(f, "\nunset output\n");
	}
	fclose(f);
	return run_gnuplot(p.gp, log);
}
