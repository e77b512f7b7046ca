/*
 * replay/report.c - `dmreplay report`: medians, bootstrap intervals, ratios
 * to a baseline, Markdown / CSV output and gnuplot plots. Contract in
 * report.h; user documentation in docs/SWEEPS.md.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sweep.h"

#define MAX_COLS 256
#define MAX_KV 32

/* ---- CSV ---------------------------------------------------------------- */

int dmr_report_csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		char *start = p;
		if (*p == '"') {
			char *w = p;
			start = w;
			p++;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"') {
					if (p[1] == '"') {
						*w++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*w++ = *p++;
			}
			if (*p != ',' && *p != '\0')
				return -1;
			char *sep = p;
			*w = '\0';
			p = sep;
		} else {
			while (*p && *p != ',')
				p++;
		}
		int last = *p == '\0';
		*p = '\0';
		if (n < max)
			fields[n] = start;
		n++;
		if (last)
			break;
		p++;
	}
	return n;
}

void dmr_report_csv_free(dmr_report_csv_t *csv)
{
	if (!csv)
		return;
	if (csv->rows)
		for (size_t i = 0; i < csv->nrows; i++)
			free(csv->rows[i]);
	free(csv->rows);
	free(csv->cols);
	free(csv->line);
	free(csv->buf);
	memset(csv, 0, sizeof(*csv));
}

int dmr_report_csv_col(const dmr_report_csv_t *csv, const char *name)
{
	for (size_t i = 0; i < csv->ncols; i++)
		if (strcmp(csv->cols[i], name) == 0)
			return (int)i;
	return -1;
}

dmr_status_t dmr_report_csv_load(const char *path, dmr_report_csv_t *csv_p, dmr_err_t *err)
{
	dmr_report_csv_t c;
	memset(&c, 0, sizeof(c));
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	size_t len = 0, cap = 0;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (len + n + 2 > cap) {
			cap = (len + n + 2) * 2;
			char *nb = realloc(c.buf, cap);
			if (!nb) {
				fclose(f);
				dmr_report_csv_free(&c);
				return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			}
			c.buf = nb;
		}
		memcpy(c.buf + len, chunk, n);
		len += n;
	}
	int bad = ferror(f);
	fclose(f);
	dmr_status_t st = DMR_OK;
	if (bad) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
		goto fail;
	}
	if (len == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: empty file (no header, no rows)", path);
		goto fail;
	}
	c.buf[len] = '\0';
	/* count lines */
	size_t nl = 1;
	for (size_t i = 0; i < len; i++)
		nl += c.buf[i] == '\n';
	c.rows = calloc(nl, sizeof(*c.rows));
	c.line = calloc(nl, sizeof(*c.line));
	c.cols = calloc(MAX_COLS, sizeof(*c.cols));
	if (!c.rows || !c.line || !c.cols) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto fail;
	}
	char *p = c.buf;
	size_t lineno = 0;
	while (*p) {
		char *e = strchr(p, '\n');
		char *next = e ? e + 1 : p + strlen(p);
		if (e)
			*e = '\0';
		lineno++;
		size_t ll = strlen(p);
		if (ll && p[ll - 1] == '\r')
			p[--ll] = '\0';
		if (lineno == 1) {
			int nf = dmr_report_csv_split(p, c.cols, MAX_COLS);
			if (nf < 1 || nf > MAX_COLS || (nf == 1 && !c.cols[0][0])) {
				st =
				    dmr_err_set(err, DMR_ERR_PARSE, "%s:1: not a CSV header", path);
				goto fail;
			}
			c.ncols = (size_t)nf;
			for (size_t i = 0; i < c.ncols; i++)
				if (!c.cols[i][0]) {
					st = dmr_err_set(err, DMR_ERR_PARSE,
							 "%s:1: column %zu has no name", path,
							 i + 1);
					goto fail;
				}
		} else if (ll == 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%zu: empty line", path, lineno);
			goto fail;
		} else {
			char **row = calloc(c.ncols > 0 ? c.ncols : 1, sizeof(char *));
			if (!row) {
				st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
				goto fail;
			}
			c.rows[c.nrows] = row;
			c.line[c.nrows] = lineno;
			c.nrows++;
			int nf = dmr_report_csv_split(p, row, (int)c.ncols);
			if (nf != (int)c.ncols) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 nf < 0 ? "%s:%zu: unterminated quote"
							: "%s:%zu: %d fields, the header has %zu%s",
						 path, lineno, nf, c.ncols,
						 e ? "" : " (last line, no newline: cut short?)");
				goto fail;
			}
		}
		p = next;
	}
	if (c.nrows == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: no data rows (only a header)", path);
		goto fail;
	}
	*csv_p = c;
	return DMR_OK;
fail:
	dmr_report_csv_free(&c);
	return st;
}

/* ---- statistics --------------------------------------------------------- */

double dmr_report_median(const double *x, size_t n)
{
	double small[64];
	double *s = n <= 64 ? small : malloc(n * sizeof(double));
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof(double));
	gsl_sort(s, 1, n);
	double m = gsl_stats_median_from_sorted_data(s, 1, n);
	if (s != small)
		free(s);
	return m;
}

/* median of a resample of x (n values) drawn with r; tmp holds n */
static double resample_median(gsl_rng *r, const double *x, size_t n, double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = x[gsl_rng_uniform_int(r, n)];
	gsl_sort(tmp, 1, n);
	return gsl_stats_median_from_sorted_data(tmp, 1, n);
}

static dmr_status_t boot(const double *x, size_t nx, const double *b, size_t nb, unsigned resamples,
			 uint64_t seed, dmr_report_ci_t *ci_p)
{
	if (nx == 0 || resamples == 0 || (b && nb == 0))
		return DMR_ERR_INVALID;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double *stat = malloc(resamples * sizeof(double));
	double *tmp = malloc((nx > nb ? nx : nb) * sizeof(double));
	if (!r || !stat || !tmp) {
		gsl_rng_free(r);
		free(stat);
		free(tmp);
		return DMR_ERR_NOMEM;
	}
	gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
	for (unsigned i = 0; i < resamples; i++) {
		double m = resample_median(r, x, nx, tmp);
		if (b)
			m /= resample_median(r, b, nb, tmp);
		stat[i] = m;
	}
	gsl_sort(stat, 1, resamples);
	dmr_report_ci_t ci;
	ci.est = dmr_report_median(x, nx);
	if (b)
		ci.est /= dmr_report_median(b, nb);
	ci.lo = gsl_stats_quantile_from_sorted_data(stat, 1, resamples, 0.025);
	ci.hi = gsl_stats_quantile_from_sorted_data(stat, 1, resamples, 0.975);
	gsl_rng_free(r);
	free(stat);
	free(tmp);
	*ci_p = ci;
	return DMR_OK;
}

dmr_status_t dmr_report_boot_median(const double *x, size_t n, unsigned resamples, uint64_t seed,
				    dmr_report_ci_t *ci_p)
{
	return boot(x, n, NULL, 0, resamples, seed, ci_p);
}

dmr_status_t dmr_report_boot_ratio(const double *x, size_t nx, const double *b, size_t nb,
				   unsigned resamples, uint64_t seed, dmr_report_ci_t *ci_p)
{
	if (!b)
		return DMR_ERR_INVALID;
	return boot(x, nx, b, nb, resamples, seed, ci_p);
}

size_t dmr_report_recovery(const double *t, const double *tps, const double *phase, size_t n,
			   double frac, double *out, size_t max)
{
	size_t nshift = 0, pstart = 0;
	for (size_t i = 1; i < n; i++) {
		if (phase[i] == phase[i - 1])
			continue;
		size_t plen = i - pstart;
		size_t w = plen / 2;
		if (w > 10)
			w = 10;
		if (w < 1)
			w = 1;
		double level = 0;
		for (size_t k = i - w; k < i; k++)
			level += tps[k];
		level /= (double)w;
		size_t next = i + 1;
		while (next < n && phase[next] == phase[i])
			next++;
		double rec = -1;
		for (size_t k = i; k < next; k++)
			if (tps[k] >= frac * level) {
				double end =
				    k + 1 < n ? t[k + 1] : t[k] + (k ? t[k] - t[k - 1] : 0);
				rec = end - t[i];
				break;
			}
		if (nshift < max)
			out[nshift] = rec;
		nshift++;
		pstart = i;
	}
	return nshift;
}

/* ---- the report --------------------------------------------------------- */

typedef struct rcell {
	char *name;
	size_t nkv;
	char *k[MAX_KV], *v[MAX_KV];
	char *kvbuf;
	size_t nrows, *rows;
	double **vals; /* per metric */
	dmr_report_ci_t *ci, *ratio;
	long base; /* baseline cell, -1 none */
	int is_base;
	size_t order; /* output order */
	/* recovery after phase changes (from time series) */
	size_t rec_shifts, rec_ok;
	double rec_med_s, rec_max_s;
} rcell_t;

struct dmr_report {
	dmr_report_cfg_t cfg;
	dmr_report_csv_t csv;
	char sum_dir[PATH_MAX];
	char out_dir[PATH_MAX];
	size_t nmetrics;
	char *metrics[32];
	int mcol[32];
	char *mbuf;
	size_t ncells;
	rcell_t *cells;
	size_t *ord; /* cells in output order */
	int cell_col, rep_col;
	char by[64];
	size_t nbase;
	char *bk[MAX_KV], *bv[MAX_KV];
	char *bbuf;
	int have_ratio;
	size_t naxes; /* keys shown as columns */
	char *axes[MAX_KV + 4];
};

void dmr_report_cfg_default(dmr_report_cfg_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->resamples = 1000;
	cfg->seed = 1;
	cfg->plots = 1;
}

static uint64_t fnv64(uint64_t h, const char *s)
{
	if (!h)
		h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static const char *cell_get(const dmr_report_t *r, const rcell_t *c, const char *key)
{
	for (size_t i = 0; i < c->nkv; i++)
		if (strcmp(c->k[i], key) == 0)
			return c->v[i];
	int col = dmr_report_csv_col(&r->csv, key);
	if (col >= 0 && c->nrows)
		return r->csv.rows[c->rows[0]][col];
	return NULL;
}

/* split "k=v;k=v" (sep ';') or "k=v,k=v" (sep ',') into pairs in buf */
static int parse_kv(char *buf, char sep, char **k, char **v, size_t *n_p)
{
	size_t n = 0;
	char *p = buf;
	while (p && *p) {
		char *next = strchr(p, sep);
		if (next)
			*next++ = '\0';
		char *eq = strchr(p, '=');
		if (!eq || eq == p || n >= MAX_KV)
			return -1;
		*eq = '\0';
		k[n] = p;
		v[n] = eq + 1;
		n++;
		p = next;
	}
	*n_p = n;
	return 0;
}

void dmr_report_free(dmr_report_t *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ncells; i++) {
		rcell_t *c = &r->cells[i];
		free(c->name);
		free(c->kvbuf);
		free(c->rows);
		if (c->vals)
			for (size_t m = 0; m < r->nmetrics; m++)
				free(c->vals[m]);
		free(c->vals);
		free(c->ci);
		free(c->ratio);
	}
	free(r->cells);
	free(r->ord);
	free(r->mbuf);
	free(r->bbuf);
	dmr_report_csv_free(&r->csv);
	free(r);
}

size_t dmr_report_ncells(const dmr_report_t *r)
{
	return r->ncells;
}

const char *dmr_report_cell_name(const dmr_report_t *r, size_t i)
{
	return i < r->ncells ? r->cells[i].name : NULL;
}

int dmr_report_cell_stat(const dmr_report_t *r, size_t i, const char *metric, dmr_report_ci_t *ci_p,
			 dmr_report_ci_t *ratio_p, int *has_ratio_p)
{
	if (i >= r->ncells)
		return -1;
	for (size_t m = 0; m < r->nmetrics; m++)
		if (strcmp(r->metrics[m], metric) == 0) {
			if (ci_p)
				*ci_p = r->cells[i].ci[m];
			if (ratio_p)
				*ratio_p = r->cells[i].ratio[m];
			if (has_ratio_p)
				*has_ratio_p = r->cells[i].base >= 0;
			return 0;
		}
	return -1;
}

/* The cell name of a row without a cell column. */
static void synth_cell(const dmr_report_t *r, size_t row, char *out, size_t len)
{
	static const char *keys[] = {"workload", "regime",  "backend", "profile",
				     "cns",	 "threads", "coros",   "loop"};
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int col = dmr_report_csv_col(&r->csv, keys[i]);
		if (col < 0)
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%s=%s", o ? ";" : "", keys[i],
				      r->csv.rows[row][col]);
		if (o >= len)
			return;
	}
	if (!out[0])
		snprintf(out, len, "all");
}

static dmr_status_t group_cells(dmr_report_t *r, dmr_err_t *err)
{
	const dmr_report_csv_t *csv = &r->csv;
	r->cells = calloc(csv->nrows, sizeof(*r->cells));
	if (!r->cells)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < csv->nrows; i++) {
		char nm[1024];
		if (r->cell_col >= 0)
			snprintf(nm, sizeof(nm), "%s", csv->rows[i][r->cell_col]);
		else
			synth_cell(r, i, nm, sizeof(nm));
		size_t c;
		for (c = 0; c < r->ncells; c++)
			if (strcmp(r->cells[c].name, nm) == 0)
				break;
		rcell_t *cell = &r->cells[c];
		if (c == r->ncells) {
			r->ncells++;
			cell->name = strdup(nm);
			cell->kvbuf = strdup(nm);
			cell->rows = calloc(csv->nrows, sizeof(size_t));
			cell->base = -1;
			if (!cell->name || !cell->kvbuf || !cell->rows)
				return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			if (strchr(nm, '=') &&
			    parse_kv(cell->kvbuf, ';', cell->k, cell->v, &cell->nkv))
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s:%zu: field 'cell': '%s' is not "
						   "'axis=value;axis=value'",
						   r->cfg.summary, csv->line[i], nm);
		}
		cell->rows[cell->nrows++] = i;
	}
	return DMR_OK;
}

static dmr_status_t load_metrics(dmr_report_t *r, dmr_err_t *err)
{
	r->mbuf = strdup(r->cfg.metrics);
	if (!r->mbuf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	for (char *p = strtok(r->mbuf, ","); p; p = strtok(NULL, ",")) {
		if (r->nmetrics >= 32)
			return dmr_err_set(err, DMR_ERR_PARSE, "--metrics: more than 32");
		int col = dmr_report_csv_col(&r->csv, p);
		if (col < 0)
			return dmr_err_set(err, DMR_ERR_PARSE, "--metrics: %s has no column '%s'",
					   r->cfg.summary, p);
		r->metrics[r->nmetrics] = p;
		r->mcol[r->nmetrics++] = col;
	}
	if (!r->nmetrics)
		return dmr_err_set(err, DMR_ERR_PARSE, "--metrics: empty");
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		cell->vals = calloc(r->nmetrics, sizeof(double *));
		cell->ci = calloc(r->nmetrics, sizeof(*cell->ci));
		cell->ratio = calloc(r->nmetrics, sizeof(*cell->ratio));
		if (!cell->vals || !cell->ci || !cell->ratio)
			return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		for (size_t m = 0; m < r->nmetrics; m++) {
			cell->vals[m] = calloc(cell->nrows, sizeof(double));
			if (!cell->vals[m])
				return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			for (size_t i = 0; i < cell->nrows; i++) {
				size_t row = cell->rows[i];
				const char *s = r->csv.rows[row][r->mcol[m]];
				char *end;
				errno = 0;
				double x = strtod(s, &end);
				if (!*s || *end || errno || !isfinite(x))
					return dmr_err_set(
					    err, DMR_ERR_PARSE,
					    "%s:%zu: field '%s': '%s' is not a number",
					    r->cfg.summary, r->csv.line[row], r->metrics[m], s);
				cell->vals[m][i] = x;
			}
		}
	}
	return DMR_OK;
}

static int cell_is_base(const dmr_report_t *r, const rcell_t *c)
{
	for (size_t i = 0; i < r->nbase; i++) {
		const char *v = cell_get(r, c, r->bk[i]);
		if (!v || strcmp(v, r->bv[i]) != 0)
			return 0;
	}
	return 1;
}

static const char *base_value(const dmr_report_t *r, const char *key)
{
	for (size_t i = 0; i < r->nbase; i++)
		if (strcmp(r->bk[i], key) == 0)
			return r->bv[i];
	return NULL;
}

/* Does baseline cell b have c's axes with the baseline's values? */
static int base_matches(const dmr_report_t *r, const rcell_t *c, const rcell_t *b)
{
	const rcell_t *two[2] = {c, b};
	for (int w = 0; w < 2; w++)
		for (size_t i = 0; i < two[w]->nkv; i++) {
			const char *key = two[w]->k[i];
			const char *want = base_value(r, key);
			if (!want)
				want = cell_get(r, c, key);
			const char *got = cell_get(r, b, key);
			if (!want || !got || strcmp(want, got) != 0)
				return 0;
		}
	return 1;
}

static dmr_status_t resolve_baseline(dmr_report_t *r, dmr_err_t *err)
{
	const char *spec = r->cfg.baseline;
	int given = spec != NULL;
	if (!spec) {
		int any = 0;
		for (size_t c = 0; c < r->ncells && !any; c++)
			any = cell_get(r, &r->cells[c], "loop") != NULL;
		if (!any)
			return DMR_OK;
		spec = "loop=none";
	}
	if (!*spec || strcmp(spec, "none") == 0 || strcmp(spec, "-") == 0)
		return DMR_OK; /* --baseline '' : no ratios */
	r->bbuf = strdup(spec);
	if (!r->bbuf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	if (parse_kv(r->bbuf, ',', r->bk, r->bv, &r->nbase) || r->nbase == 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "--baseline '%s': expected axis=value[,axis=value...]", spec);
	size_t nb = 0;
	for (size_t c = 0; c < r->ncells; c++)
		nb += r->cells[c].is_base = cell_is_base(r, &r->cells[c]);
	if (nb == 0) {
		char vals[512] = "";
		size_t o = 0;
		for (size_t c = 0; c < r->ncells && o < sizeof(vals); c++) {
			const char *v = cell_get(r, &r->cells[c], r->bk[0]);
			if (v && !strstr(vals, v))
				o += (size_t)snprintf(vals + o, sizeof(vals) - o, "%s%s",
						      o ? ", " : "", v);
		}
		if (!given) {
			fprintf(stderr,
				"dmreplay report: note: no cell has loop=none: no ratios\n");
			r->nbase = 0;
			return DMR_OK;
		}
		return dmr_err_set(
		    err, DMR_ERR_PARSE, "--baseline '%s': matches no cell of %s (%s values: %s)",
		    spec, r->cfg.summary, r->bk[0], o ? vals : "none: no such axis or column");
	}
	r->have_ratio = 1;
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		for (size_t b = 0; b < r->ncells; b++)
			if (r->cells[b].is_base && base_matches(r, cell, &r->cells[b])) {
				cell->base = (long)b;
				break;
			}
	}
	return DMR_OK;
}

static void order_cells(dmr_report_t *r)
{
	/* stable: by the first appearance of the --by value, then file order */
	r->ord = calloc(r->ncells ? r->ncells : 1, sizeof(size_t));
	if (!r->ord)
		return;
	size_t o = 0;
	for (size_t c = 0; c < r->ncells; c++) {
		if (r->cells[c].order)
			continue;
		const char *bv = r->by[0] ? cell_get(r, &r->cells[c], r->by) : NULL;
		for (size_t d = c; d < r->ncells; d++) {
			const char *dv = r->by[0] ? cell_get(r, &r->cells[d], r->by) : NULL;
			if (r->cells[d].order)
				continue;
			if (d == c || (bv && dv && strcmp(bv, dv) == 0)) {
				r->cells[d].order = ++o;
				r->ord[o - 1] = d;
			}
		}
	}
}

static void add_axis(dmr_report_t *r, char *key)
{
	for (size_t i = 0; i < r->naxes; i++)
		if (strcmp(r->axes[i], key) == 0)
			return;
	if (r->naxes < MAX_KV + 4)
		r->axes[r->naxes++] = key;
}

static dmr_status_t timeseries_recovery(dmr_report_t *r);

dmr_status_t dmr_report_compute(const dmr_report_cfg_t *cfg, dmr_report_t **rep_p, dmr_err_t *err)
{
	dmr_report_t *r = calloc(1, sizeof(*r));
	if (!r)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	r->cfg = *cfg;
	if (!r->cfg.metrics)
		r->cfg.metrics = "committed_tps,abort_rate,atomics_per_commit";
	if (!r->cfg.resamples)
		r->cfg.resamples = 1000;
	dmr_status_t st = dmr_report_csv_load(cfg->summary, &r->csv, err);
	if (st != DMR_OK)
		goto fail;
	snprintf(r->sum_dir, sizeof(r->sum_dir), "%s", cfg->summary);
	char *slash = strrchr(r->sum_dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(r->sum_dir, sizeof(r->sum_dir), ".");
	if (cfg->out_dir)
		snprintf(r->out_dir, sizeof(r->out_dir), "%s", cfg->out_dir);
	else if (snprintf(r->out_dir, sizeof(r->out_dir), "%s/report", r->sum_dir) >=
		 (int)sizeof(r->out_dir)) {
		st = dmr_err_set(err, DMR_ERR_RANGE, "%s: path too long", cfg->summary);
		goto fail;
	}
	r->cell_col = dmr_report_csv_col(&r->csv, "cell");
	r->rep_col = dmr_report_csv_col(&r->csv, "rep");
	if ((st = group_cells(r, err)) != DMR_OK || (st = load_metrics(r, err)) != DMR_OK)
		goto fail;
	const char *by = cfg->by ? cfg->by : "regime";
	int found = 0;
	for (size_t c = 0; c < r->ncells && !found; c++)
		found = cell_get(r, &r->cells[c], by) != NULL;
	if (!found && cfg->by && *cfg->by) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "--by '%s': no such axis or column in %s",
				 cfg->by, cfg->summary);
		goto fail;
	}
	if (found)
		snprintf(r->by, sizeof(r->by), "%s", by);
	if ((st = resolve_baseline(r, err)) != DMR_OK)
		goto fail;
	order_cells(r);
	if (!r->ord) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto fail;
	}
	/* columns: --by, then every cell axis, then baseline keys */
	if (r->by[0])
		add_axis(r, r->by);
	for (size_t c = 0; c < r->ncells; c++)
		for (size_t i = 0; i < r->cells[c].nkv; i++)
			add_axis(r, r->cells[c].k[i]);
	for (size_t i = 0; i < r->nbase; i++)
		add_axis(r, r->bk[i]);
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		for (size_t m = 0; m < r->nmetrics; m++) {
			uint64_t h = fnv64(fnv64(0, cell->name), r->metrics[m]) ^ r->cfg.seed;
			st = dmr_report_boot_median(cell->vals[m], cell->nrows, r->cfg.resamples, h,
						    &cell->ci[m]);
			if (st != DMR_OK) {
				dmr_err_set(err, st, "bootstrap failed");
				goto fail;
			}
			cell->ratio[m].est = cell->ratio[m].lo = cell->ratio[m].hi = NAN;
			if (cell->base < 0)
				continue;
			const rcell_t *b = &r->cells[cell->base];
			h = fnv64(fnv64(fnv64(h, "/ratio/"), b->name), r->metrics[m]);
			st = dmr_report_boot_ratio(cell->vals[m], cell->nrows, b->vals[m], b->nrows,
						   r->cfg.resamples, h, &cell->ratio[m]);
			if (st != DMR_OK) {
				dmr_err_set(err, st, "bootstrap failed");
				goto fail;
			}
		}
	}
	timeseries_recovery(r);
	*rep_p = r;
	return DMR_OK;
fail:
	dmr_report_free(r);
	return st;
}

/* ---- time series -------------------------------------------------------- */

typedef struct tseries {
	size_t n;
	double *t, *tps, *act, *phase;
	int has_act, has_phase;
} tseries_t;

static void ts_free(tseries_t *ts)
{
	free(ts->t);
	free(ts->tps);
	free(ts->act);
	free(ts->phase);
	memset(ts, 0, sizeof(*ts));
}

static double num_or_nan(const char *s)
{
	char *end;
	double x = strtod(s, &end);
	return end == s ? NAN : x;
}

/* Load DIR/timeseries.csv; 0 ok, -1 missing or unusable. */
static int ts_load(const char *path, tseries_t *ts)
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
		ts_free(ts);
		dmr_report_csv_free(&csv);
		return -1;
	}
	ts->n = n;
	ts->has_act = ca >= 0;
	ts->has_phase = cp >= 0;
	for (size_t i = 0; i < n; i++) {
		ts->t[i] = num_or_nan(csv.rows[i][ct]);
		ts->act[i] = ca >= 0 ? num_or_nan(csv.rows[i][ca]) : NAN;
		ts->phase[i] = cp >= 0 ? num_or_nan(csv.rows[i][cp]) : 0;
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

static void cell_ts_path(const dmr_report_t *r, const rcell_t *c, size_t k, char *out, size_t len,
			 unsigned *rep_p)
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

static dmr_status_t timeseries_recovery(dmr_report_t *r)
{
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		double rec[4096];
		size_t nrec = 0, nok = 0;
		for (size_t k = 0; k < cell->nrows && r->cell_col >= 0; k++) {
			char path[PATH_MAX + 700];
			unsigned rep;
			tseries_t ts;
			cell_ts_path(r, cell, k, path, sizeof(path), &rep);
			if (ts_load(path, &ts) != 0)
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
			ts_free(&ts);
		}
		cell->rec_ok = nok;
		if (nrec) {
			qsort(rec, nrec, sizeof(double), dbl_cmp);
			cell->rec_med_s = gsl_stats_median_from_sorted_data(rec, 1, nrec);
			cell->rec_max_s = rec[nrec - 1];
		}
	}
	return DMR_OK;
}

/* ---- output ------------------------------------------------------------- */

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

static const char *axis_val(const dmr_report_t *r, const rcell_t *c, const char *key)
{
	const char *v = cell_get(r, c, key);
	return v ? v : "";
}

static int write_csv(const dmr_report_t *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
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
				fprintf(f, ",%s", axis_val(r, c, r->axes[a]));
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
	return fclose(f);
}

/* distinct values of key over the ordered cells */
static size_t distinct(const dmr_report_t *r, const char *key, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t o = 0; o < r->ncells; o++) {
		const char *v = axis_val(r, &r->cells[r->ord[o]], key);
		size_t i;
		for (i = 0; i < n; i++)
			if (strcmp(out[i], v) == 0)
				break;
		if (i == n && n < max)
			out[n++] = v;
	}
	return n;
}

/* the cell's axes other than skip1/skip2 as "k=v k=v" */
static void other_axes(const dmr_report_t *r, const rcell_t *c, const char *skip1,
		       const char *skip2, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t a = 0; a < r->naxes && o < len; a++) {
		if ((skip1 && strcmp(r->axes[a], skip1) == 0) ||
		    (skip2 && strcmp(r->axes[a], skip2) == 0))
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%s=%s", o ? " " : "", r->axes[a],
				      axis_val(r, c, r->axes[a]));
	}
}

static int write_md(const dmr_report_t *r, const char *path, int plots_ok, const unsigned char *metric_ok,
		    size_t nts)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
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
		size_t nc = distinct(r, r->bk[0], cols, 64);
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
				other_axes(r, c, r->bk[0], NULL, lab, sizeof(lab));
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
						other_axes(r, d, r->bk[0], NULL, l2, sizeof(l2));
						if (strcmp(l2, lab) == 0 &&
						    strcmp(axis_val(r, d, r->bk[0]), cols[j]) == 0)
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
			fprintf(f, " %s |", axis_val(r, c, r->axes[a]));
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
			other_axes(r, c, NULL, NULL, lab, sizeof(lab));
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
				fprintf(f, "%s: no plot (gnuplot failed; see plots/gnuplot.log)\n\n",
					r->metrics[m]);
		if (nts)
			fprintf(f, "Time series of %zu cell(s) (committed throughput and the loop's "
				   "actuator; dotted lines: phase changes): `plots/ts-*.png`.\n",
				nts);
		else
			fprintf(f, "No time series plots: no cell has a readable "
				   "`timeseries.csv` under the sweep's cells/ directory.\n");
	}
	return fclose(f);
}

/* ---- plots -------------------------------------------------------------- */

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
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
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

static void term_lines(FILE *f, const char *stem, int svg)
{
	if (svg)
		fprintf(f, "set terminal svg size 960,540 dynamic enhanced font 'sans,11'\n");
	else
		fprintf(f, "set terminal pngcairo size 960,540 enhanced font 'sans,10'\n");
	fprintf(f, "set output ");
	gq2(f, stem, svg ? ".svg" : ".png");
	fprintf(f, "\n");
}

/* A bar chart with whiskers: x = --by values, one series per other-axes
 * combination. Returns 0 when gnuplot produced it. */
static int plot_metric(const dmr_report_t *r, size_t m, const char *pdir, const char *log)
{
	char stem[PATH_MAX + 64], dat[PATH_MAX + 64], gp[PATH_MAX + 64];
	snprintf(stem, sizeof(stem), "%s/%s", pdir, r->metrics[m]);
	if (snprintf(dat, sizeof(dat), "%s.dat", stem) >= (int)sizeof(dat) ||
	    snprintf(gp, sizeof(gp), "%s.gp", stem) >= (int)sizeof(gp))
		return -1;
	const char *xs[64];
	size_t nx = r->by[0] ? distinct(r, r->by, xs, 64) : 0;
	char series[32][256];
	size_t nser = 0;
	for (size_t o = 0; o < r->ncells; o++) {
		char lab[256];
		other_axes(r, &r->cells[r->ord[o]], r->by[0] ? r->by : NULL, NULL, lab,
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
					other_axes(r, d, r->by, NULL, lab, sizeof(lab));
					if (strcmp(lab, series[s]) == 0 &&
					    strcmp(axis_val(r, d, r->by), xl) == 0)
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
			gq(f, dat);
			fprintf(f, " using %zu:%zu:%zu%s title ", 2 + 3 * s, 3 + 3 * s, 4 + 3 * s,
				s == 0 ? ":xtic(1)" : "");
			gq(f, series[s]);
		}
		fprintf(f, "\nunset output\n");
	}
	fclose(f);
	return run_gnuplot(gp, log);
}

static int plot_timeseries(const dmr_report_t *r, const rcell_t *c, const char *pdir,
			   const char *log)
{
	char d[600], stem[PATH_MAX + 700], gp[PATH_MAX + 720];
	dmr_sweep_cell_dirname(c->name, d, sizeof(d));
	snprintf(stem, sizeof(stem), "%s/ts-%s", pdir, d);
	if (snprintf(gp, sizeof(gp), "%s.gp", stem) >= (int)sizeof(gp))
		return -1;
	char dats[8][PATH_MAX + 720];
	unsigned reps[8];
	size_t nd = 0;
	int has_act = 0;
	double shifts[512];
	size_t nshift = 0;
	for (size_t k = 0; k < c->nrows && nd < 8; k++) {
		char path[PATH_MAX + 700];
		tseries_t ts;
		cell_ts_path(r, c, k, path, sizeof(path), &reps[nd]);
		if (ts_load(path, &ts) != 0)
			continue;
		snprintf(dats[nd], sizeof(dats[nd]), "%s-r%u.dat", stem, reps[nd]);
		FILE *f = fopen(dats[nd], "w");
		if (!f) {
			ts_free(&ts);
			continue;
		}
		fprintf(f, "# t_s committed_ktps loop_actuator phase\n");
		for (size_t i = 0; i < ts.n; i++)
			fprintf(f, "%.9g %.9g %.9g %.9g\n", ts.t[i], ts.tps[i] / 1e3, ts.act[i],
				ts.phase[i]);
		fclose(f);
		has_act |= ts.has_act;
		if (nd == 0 && ts.has_phase)
			for (size_t i = 1; i < ts.n && nshift < 512; i++)
				if (ts.phase[i] != ts.phase[i - 1])
					shifts[nshift++] = ts.t[i];
		nd++;
		ts_free(&ts);
	}
	if (!nd)
		return 1; /* nothing to plot */
	FILE *f = fopen(gp, "w");
	if (!f)
		return -1;
	for (int svg = 0; svg < 2; svg++) {
		term_lines(f, stem, svg);
		fprintf(f, "set title ");
		gq(f, c->name);
		fprintf(f, " noenhanced\nset xlabel 'run time (s)'\n"
			   "set ylabel 'committed (K txn/s)'\nset grid\nset key outside bottom "
			   "center horizontal noenhanced\nset yrange [0:*]\nunset arrow\n");
		if (has_act)
			fprintf(f, "set y2label 'loop actuator'\nset y2tics\nset y2range [0:*]\n");
		for (size_t i = 0; i < nshift; i++)
			fprintf(f,
				"set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 3 lc "
				"rgb 'gray40'\n",
				shifts[i], shifts[i]);
		fprintf(f, "plot ");
		for (size_t i = 0; i < nd; i++) {
			fprintf(f, "%s", i ? ", " : "");
			gq(f, dats[i]);
			fprintf(f, " using 1:2 with lines lw 1.5 lc %zu title 'committed r%u'",
				i + 1, reps[i]);
			if (has_act) {
				fprintf(f, ", ");
				gq(f, dats[i]);
				fprintf(f,
					" using 1:3 axes x1y2 with steps dt 2 lc %zu title "
					"'actuator r%u'",
					i + 1, reps[i]);
			}
		}
		fprintf(f, "\nunset output\n");
	}
	fclose(f);
	return run_gnuplot(gp, log);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

dmr_status_t dmr_report_write(dmr_report_t *r, dmr_err_t *err)
{
	char path[PATH_MAX + 32], pdir[PATH_MAX + 16], log[PATH_MAX + 48];
	if (mkdir_p(r->out_dir) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", r->out_dir, strerror(errno));
	int plots_ok = 0;
	size_t nts = 0;
	unsigned char *metric_ok = calloc(r->nmetrics ? r->nmetrics : 1, 1);
	if (!metric_ok)
		return dmr_err_set(err, DMR_ERR_NOMEM, "report: out of memory");
	if (r->cfg.plots) {
		snprintf(pdir, sizeof(pdir), "%s/plots", r->out_dir);
		snprintf(log, sizeof(log), "%s/gnuplot.log", pdir);
		if (mkdir_p(pdir) != 0) {
			free(metric_ok);
			return dmr_err_set(err, DMR_ERR_IO, "%s: %s", pdir, strerror(errno));
		}
		remove(log);
		int bad = 0;
		for (size_t m = 0; m < r->nmetrics && !bad; m++) {
			int rc = plot_metric(r, m, pdir, log);
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
			int rc = plot_timeseries(r, &r->cells[c], pdir, log);
			nts += rc == 0;
			if (rc != 0 && rc != 1)
				fprintf(stderr,
					"dmreplay report: warning: gnuplot failed for the time "
					"series of %s (see %s)\n",
					r->cells[c].name, log);
		}
	}
	dmr_status_t st = DMR_OK;
	snprintf(path, sizeof(path), "%s/report.csv", r->out_dir);
	if (write_csv(r, path) != 0)
		st = dmr_err_set(err, DMR_ERR_IO, "%s: write failed", path);
	snprintf(path, sizeof(path), "%s/report.md", r->out_dir);
	if (st == DMR_OK && write_md(r, path, plots_ok, metric_ok, nts) != 0)
		st = dmr_err_set(err, DMR_ERR_IO, "%s: write failed", path);
	free(metric_ok);
	return st;
}

/* ---- command line ------------------------------------------------------- */

static void report_usage(FILE *f)
{
	fputs("usage: dmreplay report SUMMARY.csv [options]\n"
	      "Per cell the median of each metric over its repetitions with a 95 %\n"
	      "percentile-bootstrap interval, the ratio to a baseline cell with its interval;\n"
	      "writes DIR/report.md, DIR/report.csv and DIR/plots/*.png|svg (gnuplot).\n\n"
	      "  --baseline K=V[,K=V]  baseline cell (default loop=none when there is a loop\n"
	      "                        axis; '' for no ratios)\n"
	      "  --by KEY              group and plot by this axis (default regime)\n"
	      "  --metrics A,B,...     columns (default committed_tps,abort_rate,\n"
	      "                        atomics_per_commit)\n"
	      "  --out DIR             output directory (default SUMMARY's directory/report)\n"
	      "  --resamples N         bootstrap resamples (default 1000)\n"
	      "  --seed S              bootstrap seed (default 1)\n"
	      "  --no-plots            skip gnuplot\n"
	      "  --quiet               do not print the report\n"
	      "  --help\n"
	      "Exit status: 0 ok, 2 bad input (empty or corrupt SUMMARY, a non-numeric\n"
	      "metric, a baseline that matches no cell), 1 other failure.\n",
	      f);
}

int dmr_report_main(int argc, char **argv)
{
	enum { O_BASE = 256, O_BY, O_MET, O_OUT, O_RES, O_SEED, O_NOPL, O_QUIET, O_HELP };
	static const struct option opts[] = {
	    {"baseline", required_argument, 0, O_BASE}, {"by", required_argument, 0, O_BY},
	    {"metrics", required_argument, 0, O_MET},	{"out", required_argument, 0, O_OUT},
	    {"resamples", required_argument, 0, O_RES}, {"seed", required_argument, 0, O_SEED},
	    {"no-plots", no_argument, 0, O_NOPL},	{"quiet", no_argument, 0, O_QUIET},
	    {"help", no_argument, 0, O_HELP},		{0, 0, 0, 0}};
	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	int ch;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		unsigned long long v;
		switch (ch) {
		case O_BASE:
			cfg.baseline = optarg;
			break;
		case O_BY:
			cfg.by = optarg;
			break;
		case O_MET:
			cfg.metrics = optarg;
			break;
		case O_OUT:
			cfg.out_dir = optarg;
			break;
		case O_NOPL:
			cfg.plots = 0;
			break;
		case O_QUIET:
			cfg.quiet = 1;
			break;
		case O_HELP:
			report_usage(stdout);
			return 0;
		case O_RES:
		case O_SEED:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || *optarg == '-' ||
			    (ch == O_RES && (v < 1 || v > 10000000))) {
				fprintf(stderr, "dmreplay report: --%s: '%s' is not a valid %s\n",
					ch == O_RES ? "resamples" : "seed", optarg,
					ch == O_RES ? "count (1..10000000)" : "integer");
				return 2;
			}
			if (ch == O_RES)
				cfg.resamples = (unsigned)v;
			else
				cfg.seed = v;
			break;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dmreplay report: %s\n",
			optind >= argc ? "missing SUMMARY.csv" : "more than one SUMMARY given");
		report_usage(stderr);
		return 2;
	}
	cfg.summary = argv[optind];
	dmr_report_t *r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_report_compute(&cfg, &r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay report: error: %s\n", err.msg);
		return st == DMR_ERR_NOMEM ? 1 : 2;
	}
	st = dmr_report_write(r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay report: error: %s\n", err.msg);
		dmr_report_free(r);
		return 1;
	}
	if (!cfg.quiet) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/report.md", r->out_dir);
		FILE *f = fopen(path, "r");
		char buf[4096];
		size_t n;
		while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		if (f)
			fclose(f);
		printf("\nreport: %s/report.md, %s/report.csv%s%s%s\n", r->out_dir, r->out_dir,
		       cfg.plots ? ", " : "", cfg.plots ? r->out_dir : "",
		       cfg.plots ? "/plots/" : "");
	}
	dmr_report_free(r);
	return 0;
}
