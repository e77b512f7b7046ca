/*
 * replay/report/cells.c - a report computed: SUMMARY's rows grouped into
 * cells, the metrics read, the baseline resolved, the cells ordered, every
 * interval bootstrapped (contract in replay/report.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "report_impl.h"

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

const char *dmr_report_cell_get(const dmr_report_t *r, const rcell_t *c, const char *key)
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
		if (!eq || eq == p || n >= DMR_REPORT_MAX_KV)
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

/* The cell name of a row without a cell column: the run's shape, then
 * every cluster and protocol setting whose value differs between the rows
 * (a file with occ and crest rows, or one and three MNs, is never pooled
 * into one cell; a file where they are equal keeps its short names).
 * varies[i]: extra[i] differs between rows (group_cells). */
static const char *const shape_keys[] = {"workload", "regime",	"backend", "profile",
					 "cns",	     "threads", "coros",   "loop"};
static const char *const extra_keys[] = {
    "protocol",	  "mns",	  "backups",	   "index",	  "addr_cache",		"isolation",
    "versions",	  "crest_locks",  "crest_local",   "crest_cache", "crest_cache_ttl_us", "dm_locks",
    "cxl_tables", "doorbell_max", "doorbell_util", "aura_levers", "aura_tuner",		"rpc",
    "cn_cache",	  "aura_groups",  "aura_lr",	   "aura_weights"};
#define NEXTRA (sizeof(extra_keys) / sizeof(extra_keys[0]))

static void synth_cell(const dmr_report_t *r, size_t row, const int *varies, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(shape_keys) / sizeof(shape_keys[0]) + NEXTRA; i++) {
		int extra = i >= sizeof(shape_keys) / sizeof(shape_keys[0]);
		size_t x = extra ? i - sizeof(shape_keys) / sizeof(shape_keys[0]) : 0;
		if (extra && !varies[x])
			continue;
		const char *key = extra ? extra_keys[x] : shape_keys[i];
		int col = dmr_report_csv_col(&r->csv, key);
		if (col < 0)
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%s=%s", o ? ";" : "", key,
				      r->csv.rows[row][col]);
		if (o >= len)
			return;
	}
	if (!out[0])
		snprintf(out, len, "all");
}

/* qsort of a cell's row indexes by rep (ties: file order). */
static const dmr_report_t *rep_sort_r;

static int by_rep(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const char *rx = rep_sort_r->csv.rows[x][rep_sort_r->rep_col];
	const char *ry = rep_sort_r->csv.rows[y][rep_sort_r->rep_col];
	int c = strcmp(rx, ry);
	return c ? c : (x > y) - (x < y);
}

/* Two rows of one cell with the same rep are one repetition counted twice
 * (a summary concatenated with itself, a row re-appended): refused, naming
 * both lines. O(n log n). */
static dmr_status_t check_dup_reps(dmr_report_t *r, dmr_err_t *err)
{
	if (r->rep_col < 0)
		return DMR_OK;
	for (size_t c = 0; c < r->ncells; c++) {
		rcell_t *cell = &r->cells[c];
		size_t *ix = malloc((cell->nrows ? cell->nrows : 1) * sizeof(*ix));
		if (!ix)
			return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		memcpy(ix, cell->rows, cell->nrows * sizeof(*ix));
		rep_sort_r = r;
		qsort(ix, cell->nrows, sizeof(*ix), by_rep);
		for (size_t k = 1; k < cell->nrows; k++) {
			const char *a = r->csv.rows[ix[k - 1]][r->rep_col];
			const char *b = r->csv.rows[ix[k]][r->rep_col];
			if (strcmp(a, b) == 0) {
				dmr_status_t st =
				    dmr_err_set(err, DMR_ERR_PARSE,
						"%s:%zu: fields 'cell', 'rep': cell '%s' rep %s "
						"again (first on "
						"line %zu): a repetition counted twice",
						r->cfg.summary, r->csv.line[ix[k]], cell->name, b,
						r->csv.line[ix[k - 1]]);
				free(ix);
				return st;
			}
		}
		free(ix);
	}
	return DMR_OK;
}

static dmr_status_t group_cells(dmr_report_t *r, dmr_err_t *err)
{
	const dmr_report_csv_t *csv = &r->csv;
	r->cells = calloc(csv->nrows, sizeof(*r->cells));
	if (!r->cells)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	int varies[NEXTRA] = {0};
	for (size_t x = 0; x < NEXTRA && r->cell_col < 0; x++) {
		int col = dmr_report_csv_col(csv, extra_keys[x]);
		for (size_t i = 1; col >= 0 && i < csv->nrows && !varies[x]; i++)
			varies[x] = strcmp(csv->rows[i][col], csv->rows[0][col]) != 0;
	}
	for (size_t i = 0; i < csv->nrows; i++) {
		char nm[1024];
		if (r->cell_col >= 0)
			snprintf(nm, sizeof(nm), "%s", csv->rows[i][r->cell_col]);
		else
			synth_cell(r, i, varies, nm, sizeof(nm));
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
			/* an axis twice would make a false baseline */
			for (size_t a = 0; a < cell->nkv; a++)
				for (size_t b = a + 1; b < cell->nkv; b++)
					if (strcmp(cell->k[a], cell->k[b]) == 0)
						return dmr_err_set(
						    err, DMR_ERR_PARSE,
						    "%s:%zu: field 'cell': axis '%s' appears "
						    "twice in '%s'",
						    r->cfg.summary, csv->line[i], cell->k[a], nm);
		}
		cell->rows[cell->nrows++] = i;
	}
	return check_dup_reps(r, err);
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
		const char *v = dmr_report_cell_get(r, c, r->bk[i]);
		if (!v || strcmp(v, r->bv[i]) != 0)
			return 0;
	}
	return 1;
}

static int strcmp_p(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *base_value(const dmr_report_t *r, const char *key)
{
	for (size_t i = 0; i < r->nbase; i++)
		if (strcmp(r->bk[i], key) == 0)
			return r->bv[i];
	return NULL;
}

/* Does baseline cell b have c's axes with the baseline's values? An axis
 * other than the baseline's that is "-" (not applicable: crest_local of an
 * occ run) on either side matches any value, so that --baseline
 * protocol=occ pairs occ with crest (session 6's trial: it could not). */
static int base_matches(const dmr_report_t *r, const rcell_t *c, const rcell_t *b)
{
	const rcell_t *two[2] = {c, b};
	for (int w = 0; w < 2; w++)
		for (size_t i = 0; i < two[w]->nkv; i++) {
			const char *key = two[w]->k[i];
			const char *want = base_value(r, key);
			int axis = !want;
			if (!want)
				want = dmr_report_cell_get(r, c, key);
			const char *got = dmr_report_cell_get(r, b, key);
			if (axis && want && got && (!strcmp(want, "-") || !strcmp(got, "-")))
				continue;
			if (!want || !got || strcmp(want, got) != 0)
				return 0;
		}
	return 1;
}

static const char *spec_axis(const char *spec, const char *key, char *out, size_t len);

/* Named cells (a sweep's "cells": an axis "cell" in the cell names): the
 * default baseline is the first of them, in the spec's order
 * (DIR/sweep.spec's axes.cell line) or, without it, the named cell of the
 * first row. "cell=NAME" into out, or 0 when there are no named cells. */
static int first_named_cell(const dmr_report_t *r, char *out, size_t len)
{
	const char *first = NULL;
	/* the cell of the first row (a cell's rows are in file order) */
	for (size_t c = 0; c < r->ncells && !first; c++)
		if (r->cells[c].nrows && r->cells[c].rows[0] == 0)
			for (size_t k = 0; k < r->cells[c].nkv; k++)
				if (strcmp(r->cells[c].k[k], "cell") == 0)
					first = r->cells[c].v[k];
	if (!first)
		return 0;
	char specp[PATH_MAX + 16], ax[8192];
	snprintf(specp, sizeof(specp), "%s/sweep.spec", r->sum_dir);
	char *spec = NULL;
	size_t slen;
	dmr_err_t serr;
	if (dmr_file_read_all(specp, 1 << 24, &spec, &slen, &serr) != DMR_OK)
		spec = NULL;
	const char *order = spec_axis(spec, "cell", ax, sizeof(ax));
	if (order && *order)
		snprintf(out, len, "cell=%.*s", (int)strcspn(order, ","), order);
	else
		snprintf(out, len, "cell=%s", first);
	free(spec);
	return 1;
}

static dmr_status_t resolve_baseline(dmr_report_t *r, dmr_err_t *err)
{
	const char *spec = r->cfg.baseline;
	int given = spec != NULL;
	char named[256];
	if (!spec && first_named_cell(r, named, sizeof(named)))
		spec = named;
	if (!spec) {
		int any = 0;
		for (size_t c = 0; c < r->ncells && !any; c++)
			any = dmr_report_cell_get(r, &r->cells[c], "loop") != NULL;
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
			const char *v = dmr_report_cell_get(r, &r->cells[c], r->bk[0]);
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

/* ---- the order of cells (D22): never the order rows finished in ------- */

#define ORD_MAX_KEYS 64
#define ORD_MAX_VALS 4096

/* What the cell order is computed from (qsort has no context argument;
 * one report is computed at a time). */
typedef struct ordctx {
	size_t nkeys;
	const char *keys[ORD_MAX_KEYS];
	size_t *rank; /* ncells x nkeys: the rank of the cell's value, SIZE_MAX none */
	const dmr_report_t *r;
	/* ranking one key's values */
	const char *spec;  /* "v1,v2,..." from DIR/sweep.spec, or NULL */
	const char *basev; /* the baseline's value of this key, or NULL */
	int numeric;
} ordctx_t;

static ordctx_t oc;

static int is_num(const char *s)
{
	char *end;
	if (!*s)
		return 0;
	strtod(s, &end);
	return *end == '\0';
}

/* Position of v in the comma list spec, or SIZE_MAX. */
static size_t spec_pos(const char *spec, const char *v)
{
	size_t vl = strlen(v), i = 0;
	for (const char *p = spec; p && *p; i++) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == vl && strncmp(p, v, l) == 0)
			return i;
		p = e ? e + 1 : NULL;
	}
	return SIZE_MAX;
}

/* Values of one key: the baseline's first, then the spec's order, then
 * numeric (all numbers) or byte order. */
static int val_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	if (oc.basev) {
		int bx = strcmp(x, oc.basev) == 0, by = strcmp(y, oc.basev) == 0;
		if (bx != by)
			return by - bx;
	}
	if (oc.spec) {
		size_t px = spec_pos(oc.spec, x), py = spec_pos(oc.spec, y);
		if (px != py)
			return px < py ? -1 : 1;
	}
	if (oc.numeric) {
		double dx = strtod(x, NULL), dy = strtod(y, NULL);
		if (dx != dy)
			return dx < dy ? -1 : 1;
	}
	return strcmp(x, y);
}

static int cell_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	for (size_t k = 0; k < oc.nkeys; k++) {
		size_t rx = oc.rank[x * oc.nkeys + k], ry = oc.rank[y * oc.nkeys + k];
		if (rx != ry)
			return rx < ry ? -1 : 1;
	}
	return strcmp(oc.r->cells[x].name, oc.r->cells[y].name);
}

/* The "axes.KEY=" line of DIR/sweep.spec (the sweep's value order), or
 * NULL; spec is the file's text. */
static const char *spec_axis(const char *spec, const char *key, char *out, size_t len)
{
	if (!spec)
		return NULL;
	char pat[128];
	snprintf(pat, sizeof(pat), "\naxes.%s=", key);
	const char *p = strstr(spec, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	size_t l = strcspn(p, "\n");
	snprintf(out, len, "%.*s", (int)l, p);
	return out;
}

/*
 * The output order of the cells, the same whatever order the rows of
 * SUMMARY are in: by the --by value, then by each axis in the order the
 * axes appear in the cell names; an axis's values in the baseline-first,
 * spec (DIR/sweep.spec, when SUMMARY is a sweep's), numeric, byte order;
 * the cell name last.
 */
static void order_cells(dmr_report_t *r)
{
	r->ord = calloc(r->ncells ? r->ncells : 1, sizeof(size_t));
	if (!r->ord)
		return;
	memset(&oc, 0, sizeof(oc));
	oc.r = r;
	if (r->by[0])
		oc.keys[oc.nkeys++] = r->by;
	/* keys by their first position in a cell name, then by name */
	for (size_t pos = 0; pos < DMR_REPORT_MAX_KV; pos++) {
		const char *at[ORD_MAX_KEYS];
		size_t nat = 0;
		for (size_t c = 0; c < r->ncells; c++) {
			if (pos >= r->cells[c].nkv)
				continue;
			const char *k = r->cells[c].k[pos];
			int have = 0;
			for (size_t i = 0; i < oc.nkeys && !have; i++)
				have = strcmp(oc.keys[i], k) == 0;
			for (size_t i = 0; i < nat && !have; i++)
				have = strcmp(at[i], k) == 0;
			if (!have && nat < ORD_MAX_KEYS)
				at[nat++] = k;
		}
		qsort(at, nat, sizeof(*at), strcmp_p);
		for (size_t i = 0; i < nat && oc.nkeys < ORD_MAX_KEYS; i++)
			oc.keys[oc.nkeys++] = at[i];
	}
	oc.rank = malloc((r->ncells ? r->ncells : 1) * (oc.nkeys ? oc.nkeys : 1) * sizeof(size_t));
	const char **vals = malloc(ORD_MAX_VALS * sizeof(*vals));
	char specp[PATH_MAX + 16], axbuf[8192];
	snprintf(specp, sizeof(specp), "%s/sweep.spec", r->sum_dir);
	char *spec = NULL;
	size_t slen;
	dmr_err_t serr;
	if (dmr_file_read_all(specp, 1 << 24, &spec, &slen, &serr) != DMR_OK)
		spec = NULL;
	if (!oc.rank || !vals) {
		free(oc.rank);
		free(vals);
		free(spec);
		free(r->ord);
		r->ord = NULL;
		return;
	}
	for (size_t k = 0; k < oc.nkeys; k++) {
		size_t nv = 0;
		oc.numeric = 1;
		for (size_t c = 0; c < r->ncells; c++) {
			const char *v = dmr_report_cell_get(r, &r->cells[c], oc.keys[k]);
			if (!v)
				continue;
			size_t i;
			for (i = 0; i < nv; i++)
				if (strcmp(vals[i], v) == 0)
					break;
			if (i == nv && nv < ORD_MAX_VALS) {
				vals[nv++] = v;
				oc.numeric &= is_num(v);
			}
		}
		oc.basev = base_value(r, oc.keys[k]);
		oc.spec = spec_axis(spec, oc.keys[k], axbuf, sizeof(axbuf));
		qsort(vals, nv, sizeof(*vals), val_cmp);
		for (size_t c = 0; c < r->ncells; c++) {
			const char *v = dmr_report_cell_get(r, &r->cells[c], oc.keys[k]);
			size_t rk = SIZE_MAX;
			for (size_t i = 0; v && i < nv; i++)
				if (strcmp(vals[i], v) == 0)
					rk = i;
			oc.rank[c * oc.nkeys + k] = rk;
		}
	}
	for (size_t c = 0; c < r->ncells; c++)
		r->ord[c] = c;
	qsort(r->ord, r->ncells, sizeof(size_t), cell_cmp);
	for (size_t o = 0; o < r->ncells; o++)
		r->cells[r->ord[o]].order = o + 1;
	free(oc.rank);
	oc.rank = NULL;
	free(vals);
	free(spec);
}

static void add_axis(dmr_report_t *r, char *key)
{
	for (size_t i = 0; i < r->naxes; i++)
		if (strcmp(r->axes[i], key) == 0)
			return;
	if (r->naxes < DMR_REPORT_MAX_KV + 4)
		r->axes[r->naxes++] = key;
}

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
		found = dmr_report_cell_get(r, &r->cells[c], by) != NULL;
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
	for (size_t o = 0; o < r->ncells; o++)
		for (size_t i = 0; i < r->cells[r->ord[o]].nkv; i++)
			add_axis(r, r->cells[r->ord[o]].k[i]);
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
	dmr_report_ts_recovery(r);
	*rep_p = r;
	return DMR_OK;
fail:
	dmr_report_free(r);
	return st;
}

const char *dmr_report_axis_val(const dmr_report_t *r, const rcell_t *c, const char *key)
{
	const char *v = dmr_report_cell_get(r, c, key);
	return v ? v : "";
}

/* distinct values of key over the ordered cells */
size_t dmr_report_distinct(const dmr_report_t *r, const char *key, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t o = 0; o < r->ncells; o++) {
		const char *v = dmr_report_axis_val(r, &r->cells[r->ord[o]], key);
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
void dmr_report_other_axes(const dmr_report_t *r, const rcell_t *c, const char *skip1,
			   const char *skip2, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t a = 0; a < r->naxes && o < len; a++) {
		if ((skip1 && strcmp(r->axes[a], skip1) == 0) ||
		    (skip2 && strcmp(r->axes[a], skip2) == 0))
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%s=%s", o ? " " : "", r->axes[a],
				      dmr_report_axis_val(r, c, r->axes[a]));
	}
}
