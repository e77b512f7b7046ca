/*
 * replay/sweep/plan.c - a sweep's plan: cells x reps -> jobs (names,
 * directories, trace files, seeds), resume from an existing summary.csv,
 * and the argument vectors of a job's `gen` and `run` (contract in
 * replay/sweep.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../sweepdir.h"
#include "sweep_impl.h"

/* ---- plan --------------------------------------------------------------- */

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static int opt_cmp(const void *a, const void *b)
{
	return strcmp(((const dmr_sweep_opt_t *)a)->key, ((const dmr_sweep_opt_t *)b)->key);
}

/* The generator settings of a job (named set `set`, -1 none), sorted by
 * key (seed included). out holds DMR_SWEEP_MAX_OPTS x 2 +
 * DMR_SWEEP_MAX_AXES + 1. */
static size_t gen_settings(const dmr_sweep_spec_t *s, int set, const size_t *vidx,
			   uint64_t trace_seed, dmr_sweep_opt_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nwl; i++)
		if (strcmp(s->wl[i].key, "seed") != 0)
			out[n++] = s->wl[i];
	if (set >= 0)
		for (size_t i = 0; i < s->sets[set].nopts; i++)
			if (s->sets[set].gen[i])
				out[n++] = s->sets[set].opts[i];
	for (size_t a = 0; a < s->naxes; a++)
		if (s->axes[a].gen) {
			snprintf(out[n].key, sizeof(out[n].key), "%s", s->axes[a].name);
			snprintf(out[n].val, sizeof(out[n].val), "%s", s->axes[a].vals[vidx[a]]);
			n++;
		}
	snprintf(out[n].key, sizeof(out[n].key), "seed");
	snprintf(out[n].val, sizeof(out[n].val), "%" PRIu64, trace_seed);
	n++;
	qsort(out, n, sizeof(*out), opt_cmp);
	return n;
}

/* qsort of job indices (qsort has no context argument: one sort at a
 * time; planning is single-threaded). */
static const dmr_sweep_job_t *sort_jobs;

static int by_dir(const void *a, const void *b)
{
	return strcmp(sort_jobs[*(const size_t *)a].dir, sort_jobs[*(const size_t *)b].dir);
}

static int by_cell(const void *a, const void *b)
{
	return strcmp(sort_jobs[*(const size_t *)a].cell, sort_jobs[*(const size_t *)b].cell);
}

static int by_trace(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_jobs[x].trace, sort_jobs[y].trace);
	return c ? c : (x > y) - (x < y);
}

uint8_t *dmr_sweep_plan_first_traces(const dmr_sweep_plan_t *p)
{
	uint8_t *first = calloc(p->njobs ? p->njobs : 1, 1);
	size_t *ix = malloc((p->njobs ? p->njobs : 1) * sizeof(*ix));
	if (!first || !ix) {
		free(first);
		free(ix);
		return NULL;
	}
	for (size_t i = 0; i < p->njobs; i++)
		ix[i] = i;
	sort_jobs = p->jobs;
	qsort(ix, p->njobs, sizeof(*ix), by_trace);
	for (size_t k = 0; k < p->njobs; k++)
		if (k == 0 || strcmp(p->jobs[ix[k - 1]].trace, p->jobs[ix[k]].trace) != 0)
			first[ix[k]] = 1;
	free(ix);
	return first;
}

/* The cells of p (rep 0's jobs) sorted by name, or NULL (out of memory). */
static size_t *cell_index(const dmr_sweep_plan_t *p, size_t *nc_p)
{
	size_t nc = p->ncells <= p->njobs ? p->ncells : p->njobs;
	size_t *ix = malloc((nc ? nc : 1) * sizeof(*ix));
	if (!ix)
		return NULL;
	for (size_t c = 0; c < nc; c++)
		ix[c] = c;
	sort_jobs = p->jobs;
	qsort(ix, nc, sizeof(*ix), by_cell);
	*nc_p = nc;
	return ix;
}

/* The job (cell, rep) through the index of cell_index, or NULL. */
static dmr_sweep_job_t *find_job(const dmr_sweep_plan_t *p, const size_t *ix, size_t nc,
				 const char *cell, unsigned long rep)
{
	size_t lo = 0, hi = nc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->jobs[ix[mid]].cell, cell);
		if (c == 0) {
			if (rep >= p->njobs / nc)
				return NULL;
			return &p->jobs[rep * nc + ix[mid]];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

dmr_sweep_job_t *dmr_sweep_plan_find(const dmr_sweep_plan_t *p, const char *cell, unsigned long rep)
{
	size_t nc;
	size_t *ix = cell_index(p, &nc);
	dmr_sweep_job_t *j = ix ? find_job(p, ix, nc, cell, rep) : NULL;
	free(ix);
	return j;
}

void dmr_sweep_plan_free(dmr_sweep_plan_t *plan)
{
	if (!plan || !plan->jobs)
		return;
	free(plan->jobs[0].vidx);
	free(plan->jobs);
	plan->jobs = NULL;
	plan->njobs = 0;
}

dmr_status_t dmr_sweep_plan_build(const dmr_sweep_spec_t *s, dmr_sweep_plan_t *plan_p,
				  dmr_err_t *err)
{
	dmr_sweep_plan_t p;
	memset(&p, 0, sizeof(p));
	size_t ncells = s->nsets ? s->nsets : 1;
	for (size_t a = 0; a < s->naxes; a++) {
		if ((int)a == s->seed_axis)
			continue;
		if (ncells > 1000000 / s->axes[a].nvals)
			return dmr_err_set(err, DMR_ERR_RANGE, "sweep: more than 1000000 cells");
		ncells *= s->axes[a].nvals;
	}
	if ((uint64_t)ncells * s->reps > 1000000)
		return dmr_err_set(err, DMR_ERR_RANGE, "sweep: more than 1000000 runs");
	p.ncells = ncells;
	p.njobs = ncells * s->reps;
	p.jobs = calloc(p.njobs, sizeof(*p.jobs));
	size_t *vidx = calloc(p.njobs * (s->naxes ? s->naxes : 1), sizeof(size_t));
	if (!p.jobs || !vidx) {
		free(p.jobs);
		free(vidx);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	dmr_sweep_opt_t g[2 * DMR_SWEEP_MAX_OPTS + DMR_SWEEP_MAX_AXES + 1];
	size_t per_set = ncells / (s->nsets ? s->nsets : 1); /* axis cells per named set */
	for (uint32_t r = 0; r < s->reps; r++) {
		if (dmr_sig_caught()) {
			free(vidx);
			free(p.jobs);
			return dmr_err_set(err, DMR_ERR_INTERRUPTED, "interrupted while planning");
		}
		for (size_t c = 0; c < ncells; c++) {
			dmr_sweep_job_t *j = &p.jobs[r * ncells + c];
			j->vidx = vidx + (r * ncells + c) * (s->naxes ? s->naxes : 1);
			j->cell_idx = (uint32_t)c;
			j->rep = r;
			/* the named set outermost, then the axes */
			j->set = s->nsets ? (int)(c / per_set) : -1;
			size_t rem = c % per_set;
			for (size_t a = s->naxes; a-- > 0;) {
				if ((int)a == s->seed_axis) {
					j->vidx[a] = r;
					continue;
				}
				j->vidx[a] = rem % s->axes[a].nvals;
				rem /= s->axes[a].nvals;
			}
			size_t o = 0;
			if (j->set >= 0)
				o = (size_t)snprintf(j->cell, sizeof(j->cell), "cell=%s",
						     s->sets[j->set].name);
			for (size_t a = 0; a < s->naxes; a++) {
				if ((int)a == s->seed_axis)
					continue;
				o += (size_t)snprintf(j->cell + o, sizeof(j->cell) - o, "%s%s=%s",
						      o ? ";" : "", s->axes[a].name,
						      s->axes[a].vals[j->vidx[a]]);
				if (o >= sizeof(j->cell))
					goto toolong;
			}
			if (o == 0)
				snprintf(j->cell, sizeof(j->cell), "default");
			char d[sizeof(j->dir)];
			dmr_sweep_cell_dirname(j->cell, d, sizeof(d) - 16);
			if (snprintf(j->dir, sizeof(j->dir), "%s-r%u", d, r) >= (int)sizeof(j->dir))
				goto toolong;
			j->seed = s->seed_axis >= 0
				      ? strtoull(s->axes[s->seed_axis].vals[r], NULL, 10)
				      : s->seed_base + r;
			j->trace_seed = s->trace_seed_fixed ? s->trace_seed : j->seed;
			size_t ng = gen_settings(s, j->set, j->vidx, j->trace_seed, g);
			char key[1024];
			o = (size_t)snprintf(key, sizeof(key), "%s", s->workload);
			for (size_t i = 0; i < ng && o < sizeof(key); i++)
				o += (size_t)snprintf(key + o, sizeof(key) - o, ";%s=%s", g[i].key,
						      g[i].val);
			if (o >= sizeof(key))
				goto toolong;
			char san[400];
			dmr_sweep_cell_dirname(key, san, sizeof(san));
			snprintf(j->trace, sizeof(j->trace), "%s-%08x.csv", san, fnv32(key));
		}
	}
	/* two cells must not share a directory: the cells of rep 0 sorted by
	 * directory name, neighbours compared (O(n log n)) */
	p.jobs[0].vidx = vidx;
	size_t *ix = malloc(ncells * sizeof(*ix));
	if (!ix) {
		dmr_sweep_plan_free(&p);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	for (size_t c = 0; c < ncells; c++)
		ix[c] = c;
	sort_jobs = p.jobs;
	qsort(ix, ncells, sizeof(*ix), by_dir);
	for (size_t k = 1; k < ncells; k++) {
		const dmr_sweep_job_t *a = &p.jobs[ix[k - 1]], *b = &p.jobs[ix[k]];
		if (strcmp(a->dir, b->dir) == 0) {
			const dmr_sweep_job_t *lo = a < b ? a : b, *hi = a < b ? b : a;
			dmr_status_t st =
			    dmr_err_set(err, DMR_ERR_PARSE,
					"%s: cells '%s' and '%s' map to the same directory %s",
					s->nsets ? "cells" : "axes", lo->cell, hi->cell, a->dir);
			free(ix);
			dmr_sweep_plan_free(&p);
			return st;
		}
	}
	free(ix);
	if (dmr_sig_caught()) {
		dmr_sweep_plan_free(&p);
		return dmr_err_set(err, DMR_ERR_INTERRUPTED, "interrupted while planning");
	}
	*plan_p = p;
	return DMR_OK;
toolong:
	free(vidx);
	free(p.jobs);
	return dmr_err_set(err, DMR_ERR_PARSE, "axes: a cell name is longer than 500 characters");
}

/* ---- the spec's fingerprint ------------------------------------------- */

static int kv_line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append "PFX.KEY=VAL\n" for opts sorted by key. */
static size_t opts_lines(char *out, size_t len, size_t o, const char *pfx,
			 const dmr_sweep_opt_t *opts, size_t n)
{
	const dmr_sweep_opt_t *ix[DMR_SWEEP_MAX_OPTS];
	char keys[DMR_SWEEP_MAX_OPTS][40];
	char *kp[DMR_SWEEP_MAX_OPTS];
	for (size_t i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s", opts[i].key);
		kp[i] = keys[i];
	}
	qsort(kp, n, sizeof(*kp), kv_line_cmp);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++)
			if (strcmp(opts[k].key, kp[i]) == 0)
				ix[i] = &opts[k];
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s.%s=%s\n", pfx, ix[i]->key, ix[i]->val);
	return o;
}

char *dmr_sweep_spec_normalised(const dmr_sweep_spec_t *s)
{
	size_t len = 8192;
	for (size_t a = 0; a < s->naxes; a++)
		len += 64 + s->axes[a].nvals * (DMR_SWEEP_VAL_MAX + 1);
	for (size_t i = 0; i < s->nsets; i++)
		len += 160 + s->sets[i].nopts * (DMR_SWEEP_VAL_MAX + 40);
	char *out = malloc(len);
	if (!out)
		return NULL;
	size_t o = (size_t)snprintf(out, len,
				    "# dmreplay sweep: what determines the runs in this "
				    "directory (the spec, normalised); do not edit\n"
				    "workload=%s\n",
				    s->workload);
	o = opts_lines(out, len, o, "workload", s->wl, s->nwl);
	o = opts_lines(out, len, o, "run", s->run, s->nrun);
	for (size_t a = 0; a < s->naxes && o < len; a++) {
		o += (size_t)snprintf(out + o, len - o, "axes.%s=", s->axes[a].name);
		for (size_t i = 0; i < s->axes[a].nvals && o < len; i++)
			o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
					      s->axes[a].vals[i]);
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "\n");
	}
	if (s->nsets) {
		/* the named cells: their order (the report's, as an axis's) and
		 * each one's options sorted by key */
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "axes.cell=");
		for (size_t i = 0; i < s->nsets && o < len; i++)
			o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "," : "",
					      s->sets[i].name);
		if (o < len)
			o += (size_t)snprintf(out + o, len - o, "\n");
		for (size_t i = 0; i < s->nsets && o < len; i++) {
			dmr_sweep_opt_t so[DMR_SWEEP_MAX_OPTS];
			size_t n = s->sets[i].nopts;
			memcpy(so, s->sets[i].opts, n * sizeof(*so));
			qsort(so, n, sizeof(*so), opt_cmp);
			o += (size_t)snprintf(out + o, len - o, "cells.%s=", s->sets[i].name);
			for (size_t k = 0; k < n && o < len; k++)
				o += (size_t)snprintf(out + o, len - o, "%s%s=%s", k ? ";" : "",
						      so[k].key, so[k].val);
			if (o < len)
				o += (size_t)snprintf(out + o, len - o, "\n");
		}
	}
	if (o < len)
		o += (size_t)snprintf(out + o, len - o, "reps=%u\n", s->reps);
	if (o < len && s->seed_axis < 0)
		o += (size_t)snprintf(out + o, len - o, "seed=%" PRIu64 "\n", s->seed_base);
	if (o >= len) {
		free(out);
		return NULL;
	}
	return out;
}

/* The value of line "KEY=..." in text (a pointer to it, up to '\n'), or
 * NULL. */
static const char *line_val(const char *text, const char *key, size_t *vlen)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		if (ll > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			*vlen = ll - kl - 1;
			return p + kl + 1;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

/* Is key one of the ", "-separated items of list? */
static int listed(const char *list, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = list; (p = strstr(p, key)); p += kl)
		if ((p == list || p[-1] == ' ') && (p[kl] == ',' || p[kl] == '\0'))
			return 1;
	return 0;
}

/* Append to diff the keys of a's lines whose value in b differs or is
 * missing. */
static void diff_keys(const char *a, const char *b, char *diff, size_t len, size_t *o)
{
	for (const char *p = a; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		const char *eq = memchr(p, '=', ll);
		if (*p != '#' && eq) {
			char key[200];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - p), p);
			size_t vl = 0, wl = ll - (size_t)(eq - p) - 1;
			const char *v = line_val(b, key, &vl);
			if ((!v || vl != wl || strncmp(v, eq + 1, wl) != 0) && !listed(diff, key) &&
			    *o + strlen(key) + 3 < len)
				*o += (size_t)snprintf(diff + *o, len - *o, "%s%s", *o ? ", " : "",
						       key);
		}
		p = e ? e + 1 : NULL;
	}
}

dmr_status_t dmr_sweep_spec_check_dir(const dmr_sweep_spec_t *s, const char *path, int write,
				      dmr_err_t *err)
{
	char *now = dmr_sweep_spec_normalised(s);
	if (!now)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	char *old = NULL;
	size_t olen;
	dmr_err_t rerr;
	dmr_status_t st = DMR_OK;
	if (access(path, F_OK) != 0) {
		if (write)
			st = dmr_file_write_atomic(path, now, strlen(now), err);
		free(now);
		return st;
	}
	if ((st = dmr_file_read_all(path, 1 << 24, &old, &olen, &rerr)) != DMR_OK) {
		free(now);
		return dmr_err_set(err, st, "%s", rerr.msg);
	}
	if (strcmp(old, now) != 0) {
		char diff[600] = "";
		size_t o = 0;
		diff_keys(now, old, diff, sizeof(diff), &o);
		diff_keys(old, now, diff, sizeof(diff), &o);
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: the spec changed since this directory's runs were made "
				 "(%s%s): its rows are not this spec's runs; use another --out "
				 "(or put the spec back to resume)",
				 path, o ? "fields that differ: " : "", o ? diff : "spec changed");
	}
	free(old);
	free(now);
	return st;
}

/* ---- resume ------------------------------------------------------------- */

#define MAX_COLS 256

dmr_status_t dmr_sweep_plan_resume(dmr_sweep_plan_t *plan, const char *path, int repair,
				   dmr_err_t *err)
{
	plan->header[0] = '\0';
	plan->warning[0] = '\0';
	plan->dropped = 0;
	plan->foreign = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return DMR_OK;
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	size_t lineno = 0, ncols = 0;
	int ccell = -1, crep = -1;
	off_t good_end = 0; /* offset after the last complete line */
	dmr_status_t st = DMR_OK;
	char *fields[MAX_COLS];
	/* the cells (rep 0's jobs) sorted by name: a row is found by binary
	 * search, its job is rep * ncells + cell_idx (jobs are rep-major) */
	size_t nc = 0;
	size_t *ix = cell_index(plan, &nc);
	if (!ix) {
		fclose(f);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}

	for (;;) {
		errno = 0;
		n = getline(&line, &cap, f);
		if (n <= 0)
			break;
		lineno++;
		if ((lineno & 4095) == 0 && dmr_sig_caught())
			break;
		if (line[n - 1] != '\n') {
			/* a write cut short: drop it */
			plan->dropped = 1;
			snprintf(plan->warning, sizeof(plan->warning),
				 "%s:%zu: last line has no newline (a write cut short): %s", path,
				 lineno, repair ? "dropped it" : "ignored (would be dropped)");
			break;
		}
		good_end += n;
		line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (lineno == 1) {
			snprintf(plan->header, sizeof(plan->header), "%s", line);
			int nf = dmr_report_csv_split(line, fields, MAX_COLS);
			if (nf < 2 || nf > MAX_COLS) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:1: not a sweep summary header", path);
				goto out;
			}
			ncols = (size_t)nf;
			for (int i = 0; i < nf; i++) {
				if (strcmp(fields[i], "cell") == 0)
					ccell = i;
				if (strcmp(fields[i], "rep") == 0)
					crep = i;
			}
			if (ccell < 0 || crep < 0) {
				st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s:1: header has no 'cell' and 'rep' columns: not a "
				    "sweep summary (use another --out)",
				    path);
				goto out;
			}
			continue;
		}
		int nf = dmr_report_csv_split(line, fields, MAX_COLS);
		if (nf != (int)ncols) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%zu: %d fields, the header has %zu (a corrupt row: "
					 "fix or remove it; the sweep never writes one)",
					 path, lineno, nf, ncols);
			goto out;
		}
		char *end;
		errno = 0;
		unsigned long rep = strtoul(fields[crep], &end, 10);
		if (!fields[crep][0] || *end || errno || fields[crep][0] == '-') {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%zu: field 'rep': '%s' is not an integer", path,
					 lineno, fields[crep]);
			goto out;
		}
		dmr_sweep_job_t *j = find_job(plan, ix, nc, fields[ccell], rep);
		if (j) {
			if (!j->done) {
				j->done = 1;
				plan->ndone++;
			}
		} else {
			plan->foreign++;
		}
	}
	if (dmr_sig_caught())
		st =
		    dmr_err_set(err, DMR_ERR_INTERRUPTED, "%s: interrupted while reading it", path);
	else if (ferror(f))
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
	if (st == DMR_OK && plan->dropped && repair) {
		if (truncate(path, good_end) != 0)
			st = dmr_err_set(err, DMR_ERR_IO, "%s: cannot drop the cut line: %s", path,
					 strerror(errno));
		if (good_end == 0)
			plan->header[0] = '\0';
	}
out:
	free(ix);
	free(line);
	fclose(f);
	return st;
}

/* ---- argument vectors --------------------------------------------------- */

void dmr_sweep_av_add(dmr_sweep_av_t *b, const char *s)
{
	if (b->oom)
		return;
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char **nv = realloc(b->v, cap * sizeof(*nv));
		if (!nv) {
			b->oom = 1;
			return;
		}
		b->v = nv;
		b->cap = cap;
	}
	char *d = strdup(s);
	if (!d) {
		b->oom = 1;
		return;
	}
	b->v[b->n++] = d;
	b->v[b->n] = NULL;
}

void dmr_sweep_av_list(dmr_sweep_av_t *b, ...)
{
	va_list ap;
	va_start(ap, b);
	for (const char *s; (s = va_arg(ap, const char *));)
		dmr_sweep_av_add(b, s);
	va_end(ap);
}

void dmr_sweep_av_opt(dmr_sweep_av_t *b, const char *key, const char *val)
{
	char o[64];
	size_t i = 0;
	o[i++] = '-';
	o[i++] = '-';
	for (const char *k = key; *k && i + 1 < sizeof(o); k++)
		o[i++] = *k == '_' ? '-' : *k;
	o[i] = '\0';
	dmr_sweep_av_add(b, o);
	dmr_sweep_av_add(b, val);
}

void dmr_sweep_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

char **dmr_sweep_av_done(dmr_sweep_av_t *b)
{
	if (b->oom) {
		if (b->v) {
			b->v[b->n] = NULL;
			dmr_sweep_argv_free(b->v);
		}
		return NULL;
	}
	return b->v;
}

char **dmr_sweep_gen_argv(const dmr_sweep_spec_t *s, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path)
{
	dmr_sweep_av_t b = {0};
	dmr_sweep_opt_t g[2 * DMR_SWEEP_MAX_OPTS + DMR_SWEEP_MAX_AXES + 1];
	size_t ng = gen_settings(s, job->set, job->vidx, job->trace_seed, g);
	dmr_sweep_av_list(&b, exe, "gen", s->workload, (char *)NULL);
	for (size_t i = 0; i < ng; i++)
		dmr_sweep_av_opt(&b, g[i].key, g[i].val);
	dmr_sweep_av_list(&b, "-o", trace_path, (char *)NULL);
	return dmr_sweep_av_done(&b);
}

char **dmr_sweep_run_argv(const dmr_sweep_spec_t *s, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path, const char *cell_dir)
{
	dmr_sweep_av_t b = {0};
	char seed[32];
	snprintf(seed, sizeof(seed), "%" PRIu64, job->seed);
	dmr_sweep_av_list(&b, exe, "run", "--trace", trace_path, "--out", cell_dir, "--seed", seed,
			  "--quiet", (char *)NULL);
	for (size_t i = 0; i < s->nrun; i++)
		dmr_sweep_av_opt(&b, s->run[i].key, s->run[i].val);
	if (job->set >= 0)
		for (size_t i = 0; i < s->sets[job->set].nopts; i++)
			if (!s->sets[job->set].gen[i])
				dmr_sweep_av_opt(&b, s->sets[job->set].opts[i].key,
						 s->sets[job->set].opts[i].val);
	for (size_t a = 0; a < s->naxes; a++)
		if (!s->axes[a].gen && (int)a != s->seed_axis)
			dmr_sweep_av_opt(&b, s->axes[a].name, s->axes[a].vals[job->vidx[a]]);
	return dmr_sweep_av_done(&b);
}
