/*
 * replay/breakdown_combine.c - the per-type, per-CN and per-MN files of
 * several CN processes (`dmreplay run --procs`: DIR/cnK/) combined into
 * DIR/types.csv, cns.csv, mns.csv (breakdown.h dmr_breakdown_combine;
 * docs/RESULTS.md "Several CN processes").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/base/fs.h"
#include "breakdown.h"
#include "sweepdir.h"

#define MAXF 64

/* One CSV file of a CN's directory: NAME.csv, else NAME.partial.csv. */
typedef struct csvf {
	char *buf;
	int nh;
	char *h[MAXF];
	char *line; /* the next data line */
} csvf_t;

static int csv_open(csvf_t *c, const char *dir, const char *name)
{
	memset(c, 0, sizeof(*c));
	for (int fin = 1; fin >= 0 && !c->buf; fin--) {
		char p[1200];
		snprintf(p, sizeof(p), "%s/%s%s.csv", dir, name, fin ? "" : ".partial");
		dmr_err_t e;
		size_t len;
		if (dmr_file_read_all(p, 64u << 20, &c->buf, &len, &e) != DMR_OK)
			c->buf = NULL;
	}
	if (!c->buf)
		return -1;
	char *nl = strchr(c->buf, '\n');
	if (!nl) {
		free(c->buf);
		c->buf = NULL;
		return -1;
	}
	*nl = 0;
	int n = dmr_report_csv_split(c->buf, c->h, MAXF);
	c->nh = n < 0 ? 0 : n > MAXF ? MAXF : n;
	c->line = nl + 1;
	return 0;
}

/* The next row into f (by the header's columns); 0 at the end. */
static int csv_row(csvf_t *c, char **f)
{
	while (c->line && *c->line) {
		char *l = c->line, *nl = strchr(l, '\n');
		c->line = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		int n = dmr_report_csv_split(l, f, MAXF);
		if (n == c->nh)
			return 1;
	}
	return 0;
}

static const char *col(const csvf_t *c, char **f, const char *name)
{
	for (int i = 0; i < c->nh; i++)
		if (!strcmp(c->h[i], name))
			return f[i];
	return NULL;
}

static uint64_t colu(const csvf_t *c, char **f, const char *name)
{
	const char *s = col(c, f, name);
	return s ? strtoull(s, NULL, 10) : 0;
}

static double cold(const csvf_t *c, char **f, const char *name)
{
	const char *s = col(c, f, name);
	return s ? strtod(s, NULL) : 0;
}

static void maxd(double *d, double v)
{
	if (v > *d)
		*d = v;
}

/* One types.csv row added into t (counts summed; latencies: the largest,
 * an upper bound; phases: weighted by committed). */
static void add_type(dmr_bd_type_t *t, const csvf_t *c, char **f)
{
	static const char *const ab[DMR_ABORT_NCAUSES] = {
	    "abort_lock", "abort_read_locked", "abort_validation", "abort_duplicate",
	    "abort_full", "abort_rpc_locked",  "abort_cache_stale"};
	static const char *const ph[DMR_TXN_NPHASES] = {"exec_us", "validation_us", "log_us",
							"commit_us"};
	dmr_txn_stats_t *s = &t->st;
	uint64_t committed = colu(c, f, "committed");
	s->tried += colu(c, f, "tried");
	s->committed += committed;
	s->gave_up += colu(c, f, "gave_up");
	s->retries += colu(c, f, "retries");
	for (int k = 0; k < DMR_ABORT_NCAUSES; k++)
		s->aborts[k] += colu(c, f, ab[k]);
	s->reads += colu(c, f, "reads");
	s->writes += colu(c, f, "writes");
	s->atomics += colu(c, f, "atomics");
	s->index_reads += colu(c, f, "index_reads");
	s->cache_hits += colu(c, f, "cache_hits");
	s->cache_misses += colu(c, f, "cache_misses");
	s->locks_taken += colu(c, f, "locks_taken");
	s->skipped_ops += colu(c, f, "skipped_ops");
	for (int p = 0; p < DMR_TXN_NPHASES; p++)
		s->phase_ps[p] += (uint64_t)(cold(c, f, ph[p]) * 1e6 * (double)committed + 0.5);
	/* first-attempt commits: means back to sums */
	uint64_t n1 = colu(c, f, "first_commits");
	t->first.commits += n1;
	t->first.reads += (uint64_t)(cold(c, f, "first_reads") * (double)n1 + 0.5);
	t->first.writes += (uint64_t)(cold(c, f, "first_writes") * (double)n1 + 0.5);
	t->first.atomics += (uint64_t)(cold(c, f, "first_atomics") * (double)n1 + 0.5);
	t->first.index_reads += (uint64_t)(cold(c, f, "first_index_reads") * (double)n1 + 0.5);
	maxd(&t->p50_us, cold(c, f, "p50_us"));
	maxd(&t->p90_us, cold(c, f, "p90_us"));
	maxd(&t->p99_us, cold(c, f, "p99_us"));
	maxd(&t->p999_us, cold(c, f, "p999_us"));
	maxd(&t->mean_us, cold(c, f, "mean_us"));
}

static void read_types(dmr_breakdown_t *bd, const char *dir)
{
	csvf_t c;
	char *f[MAXF];
	if (csv_open(&c, dir, "types") != 0)
		return;
	while (csv_row(&c, f)) {
		const char *name = col(&c, f, "type");
		if (!name)
			break;
		uint32_t t = 0;
		while (t < bd->ntypes && strcmp(bd->type[t].name, name))
			t++;
		if (t == bd->ntypes) {
			if (bd->ntypes == DMR_TRACE_MAX_TYPES)
				continue;
			snprintf(bd->type[t].name, sizeof(bd->type[t].name), "%s", name);
			bd->ntypes++;
		}
		add_type(&bd->type[t], &c, f);
	}
	free(c.buf);
}

static dmr_status_t read_cns(dmr_breakdown_t *bd, const char *dir, dmr_err_t *err)
{
	csvf_t c;
	char *f[MAXF];
	if (csv_open(&c, dir, "cns") != 0)
		return DMR_OK;
	while (csv_row(&c, f)) {
		dmr_bd_cn_t *n = realloc(bd->cn, (bd->ncns + 1) * sizeof(*n));
		if (!n) {
			free(c.buf);
			return dmr_err_set(err, DMR_ERR_NOMEM, "combined cns.csv: out of memory");
		}
		bd->cn = n;
		dmr_bd_cn_t *x = &bd->cn[bd->ncns++];
		memset(x, 0, sizeof(*x));
		x->cn = (uint32_t)colu(&c, f, "cn");
		x->workers = (uint32_t)colu(&c, f, "workers");
		x->st.tried = colu(&c, f, "tried");
		x->st.committed = colu(&c, f, "committed");
		x->st.gave_up = colu(&c, f, "gave_up");
		x->st.retries = colu(&c, f, "retries");
		x->st.aborts[0] = colu(&c, f, "aborts"); /* the total: only summed */
	}
	free(c.buf);
	return DMR_OK;
}

/* One CN's mns.csv: its counts added (each CN reports the WRs of its own
 * workers); *seen_p: a file was read; reported stays 1 only while every
 * CN's rows are reported. */
static void read_mns(dmr_breakdown_t *bd, const char *dir, int *seen_p)
{
	csvf_t c;
	char *f[MAXF];
	if (csv_open(&c, dir, "mns") != 0) {
		bd->mn_reported = 0;
		snprintf(bd->mn_note, sizeof(bd->mn_note), "not reported: %.100s/mns.csv missing",
			 dir);
		return;
	}
	*seen_p = 1;
	while (csv_row(&c, f)) {
		uint64_t m = colu(&c, f, "mn");
		const char *rep = col(&c, f, "reported");
		if (m >= DMR_BE_MAX_MNS)
			continue;
		if (m + 1 > bd->nmns)
			bd->nmns = (uint32_t)m + 1;
		if (!rep || strcmp(rep, "yes")) {
			bd->mn_reported = 0;
			const char *note = col(&c, f, "note");
			snprintf(bd->mn_note, sizeof(bd->mn_note), "%.150s", note ? note : "");
			continue;
		}
		dmr_be_mn_stats_t *s = &bd->mn[m];
		s->verbs += colu(&c, f, "verbs");
		s->reads += colu(&c, f, "reads");
		s->writes += colu(&c, f, "writes");
		s->atomics += colu(&c, f, "atomics");
		s->bytes_read += colu(&c, f, "bytes_read");
		s->bytes_written += colu(&c, f, "bytes_written");
	}
	free(c.buf);
}

dmr_status_t dmr_breakdown_combine(const char *out, int final, const char *const *dirs, uint32_t n,
				   double secs, dmr_err_t *err)
{
	dmr_breakdown_t *bd = calloc(1, sizeof(*bd));
	if (!bd)
		return dmr_err_set(err, DMR_ERR_NOMEM, "combined results: out of memory");
	bd->run_s = secs;
	bd->mn_reported = 1;
	int seen = 0;
	dmr_status_t st = DMR_OK;
	for (uint32_t k = 0; k < n && st == DMR_OK; k++) {
		read_types(bd, dirs[k]);
		st = read_cns(bd, dirs[k], err);
		read_mns(bd, dirs[k], &seen);
	}
	if (!seen)
		bd->nmns = bd->nmns ? bd->nmns : 1;
	if (!bd->mn_reported)
		memset(bd->mn, 0, sizeof(bd->mn));
	else
		snprintf(bd->mn_note, sizeof(bd->mn_note),
			 "counts summed over the CN processes; no model of busy time");
	bd->mn_modelled = 0; /* --procs: verbs, counts only */
	if (st == DMR_OK)
		st = dmr_breakdown_write(out, final, bd, err);
	dmr_breakdown_fini(bd);
	free(bd);
	return st;
}
