/*
 * replay/roles/combine.c - the results of `dmreplay run --procs` from its
 * CNs' own: each CN's summary row read back, and the combined
 * OUT/summary.csv (the standard columns, one row for the whole run) and
 * OUT/processes.csv (docs/ROLES.md), and OUT/types.csv, cns.csv, mns.csv
 * from the CNs' own (replay/breakdown.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../breakdown.h"
#include "../results.h"
#include "../sweepdir.h"
#include "roles_impl.h"

/* One summary line into at most max fields (its line end dropped; the
 * splitter of replay/sweepdir.h); 0 for a line that is not CSV. */
static int split_line(char *line, char **f, int max)
{
	line[strcspn(line, "\r\n")] = 0;
	int n = dmr_report_csv_split(line, f, max);
	return n < 0 ? 0 : n > max ? max : n;
}

/* Value of column `name` in a CN's summary row, or NULL. */
static const char *cn_col(const dmr_roles_cnsum_t *s, const char *name)
{
	for (int i = 0; s->have && i < s->nf; i++)
		if (strcmp(s->hf[i], name) == 0)
			return s->rf[i];
	return NULL;
}

void dmr_roles_read_cn_summary(const char *dir, dmr_roles_cnsum_t *s)
{
	memset(s, 0, sizeof(*s));
	s->verified = 0;
	char p[1200];
	for (int fin = 1; fin >= 0 && !s->have; fin--) {
		snprintf(p, sizeof(p), "%s/%s", dir, fin ? "summary.csv" : "summary.partial.csv");
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		char *h = s->hbuf, *r = s->rbuf;
		if (fgets(h, sizeof(s->hbuf), f) && fgets(r, sizeof(s->rbuf), f)) {
			char **hf = s->hf, **rf = s->rf;
			int nh = split_line(h, hf, DMR_ROLES_MAXCOL),
			    nr = split_line(r, rf, DMR_ROLES_MAXCOL);
			s->nf = nh < nr ? nh : nr;
			for (int i = 0; i < nh && i < nr; i++) {
				const char *k = hf[i], *v = rf[i];
				if (!strcmp(k, "status"))
					snprintf(s->status, sizeof(s->status), "%s", v);
				else if (!strcmp(k, "workload"))
					snprintf(s->workload, sizeof(s->workload), "%s", v);
				else if (!strcmp(k, "regime"))
					snprintf(s->regime, sizeof(s->regime), "%s", v);
				else if (!strcmp(k, "tried"))
					s->tried = atoll(v);
				else if (!strcmp(k, "committed"))
					s->committed = atoll(v);
				else if (!strcmp(k, "verified"))
					s->verified = atoll(v);
				else if (!strcmp(k, "abort_rate"))
					s->abort_rate = atof(v);
				else if (!strcmp(k, "sim_time_s"))
					s->secs = atof(v);
				else if (!strcmp(k, "tried_tps"))
					s->tried_tps = atof(v);
				else if (!strcmp(k, "committed_tps"))
					s->committed_tps = atof(v);
			}
			s->have = 1;
			s->final = fin;
		}
		fclose(f);
	}
}

/*
 * OUT/summary.csv (or .partial.csv): the standard summary.csv header (as a
 * single-process run writes it, so `dmreplay report` reads it) and one row
 * for the whole run: counts (txns, tried, committed, gave_up, retries,
 * aborts by cause, verbs, skipped_ops) summed over the CNs; tried_tps and
 * committed_tps = those sums / the slowest CN's sim_time_s; abort_rate
 * weighted by the CNs' tried, atomics/reads per commit by their committed;
 * latency percentiles, times and footprint = the largest over the CNs (an
 * upper bound, not a merged distribution); cns = CN processes, threads =
 * per CN; verified 1 only when complete; status complete / partial; trace =
 * the launcher's --trace; other columns from the first CN with a summary.
 */
int dmr_roles_fill_standard(FILE *f, const void *a)
{
	const dmr_roles_combo_t *c = a;
	static const char *const sums[] = {"txns",
					   "tried",
					   "committed",
					   "gave_up",
					   "retries",
					   "abort_lock",
					   "abort_read_locked",
					   "abort_validation",
					   "abort_duplicate",
					   "abort_full",
					   "verbs",
					   "skipped_ops",
					   "cn_cache_hits",
					   "cn_cache_stale",
					   NULL};
	static const char *const maxes[] = {
	    "sim_time_s",      "wall_s",	  "loop_wall_s",      "trace_wall_s",
	    "p50_us",	       "p99_us",	  "p999_us",	      "footprint_bytes",
	    "p50_dispatch_us", "p99_dispatch_us", "p999_dispatch_us", NULL};
	char hb[4096];
	snprintf(hb, sizeof(hb), "%s", dmr_results_header());
	char *cols[DMR_ROLES_MAXCOL];
	int nc = split_line(hb, cols, DMR_ROLES_MAXCOL);
	uint32_t ncn = c->cl->ncn;
	double tried = 0, committed = 0, secs = 0;
	for (uint32_t k = 0; k < ncn; k++) {
		tried += (double)c->cs[k].tried;
		committed += (double)c->cs[k].committed;
		if (c->cs[k].secs > secs)
			secs = c->cs[k].secs;
	}
	fprintf(f, "%s\n", dmr_results_header());
	for (int i = 0; i < nc; i++) {
		const char *n = cols[i];
		char v[1200] = "-";
		if (dmr_roles_known(n, sums)) {
			long long x = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				x += s ? atoll(s) : 0;
			}
			snprintf(v, sizeof(v), "%lld", x);
		} else if (dmr_roles_known(n, maxes)) {
			double x = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				if (s && atof(s) > x)
					x = atof(s);
			}
			if (strcmp(n, "footprint_bytes") == 0)
				snprintf(v, sizeof(v), "%.0f", x);
			else
				snprintf(v, sizeof(v),
					 strcmp(n, "sim_time_s") == 0 ? "%.9f" : "%.3f", x);
		} else if (strcmp(n, "tried_tps") == 0 || strcmp(n, "committed_tps") == 0) {
			snprintf(v, sizeof(v), "%.3f",
				 secs > 0 ? (n[0] == 't' ? tried : committed) / secs : 0);
		} else if (strcmp(n, "abort_rate") == 0 || strcmp(n, "atomics_per_commit") == 0 ||
			   strcmp(n, "reads_per_commit") == 0) {
			int ar = n[1] == 'b';
			double num = 0, den = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				double w = ar ? (double)c->cs[k].tried : (double)c->cs[k].committed;
				num += (s ? atof(s) : 0) * w;
				den += w;
			}
			snprintf(v, sizeof(v), ar ? "%.6f" : "%.4f", den > 0 ? num / den : 0);
		} else if (strcmp(n, "verified") == 0) {
			snprintf(v, sizeof(v), "%d", c->complete ? 1 : 0);
		} else if (strcmp(n, "status") == 0) {
			snprintf(v, sizeof(v), "%s", c->complete ? "complete" : "partial");
		} else if (strcmp(n, "cns") == 0) {
			snprintf(v, sizeof(v), "%u", ncn);
		} else if (strcmp(n, "threads") == 0) {
			snprintf(v, sizeof(v), "%u", c->o->threads);
		} else if (strcmp(n, "coros") == 0) {
			snprintf(v, sizeof(v), "%u", c->o->coros);
		} else if (strcmp(n, "seed") == 0) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)c->o->seed);
		} else if (strcmp(n, "backend") == 0) {
			snprintf(v, sizeof(v), "verbs");
		} else if (strcmp(n, "trace") == 0) {
			snprintf(v, sizeof(v), "%s", c->o->trace);
		} else if (strcmp(n, "workload") == 0 && c->workload) {
			snprintf(v, sizeof(v), "%s", c->workload);
			for (uint32_t k = 0; k < ncn; k++)
				if (cn_col(&c->cs[k], n)) {
					snprintf(v, sizeof(v), "%s", cn_col(&c->cs[k], n));
					break;
				}
		} else {
			for (uint32_t k = 0; k < ncn; k++)
				if (cn_col(&c->cs[k], n)) {
					snprintf(v, sizeof(v), "%s", cn_col(&c->cs[k], n));
					break;
				}
		}
		if (fprintf(f, "%s%s", v, i + 1 < nc ? "," : "\n") < 0)
			return -1;
	}
	return 0;
}

/* OUT/processes.csv: one row per scope (all, mn, cnK) with its exit status. */
int dmr_roles_fill_processes(FILE *f, const void *a)
{
	const dmr_roles_combo_t *c = a;
	long long tried = 0, committed = 0;
	double aborts = 0, secs = 0;
	const char *wl = "-", *rg = "-";
	for (uint32_t k = 0; k < c->cl->ncn; k++) {
		const dmr_roles_cnsum_t *s = &c->cs[k];
		tried += s->tried;
		committed += s->committed;
		aborts += s->abort_rate * s->tried;
		if (s->secs > secs)
			secs = s->secs;
		if (s->have) {
			wl = s->workload;
			rg = s->regime;
		}
	}
	fprintf(f, "scope,status,verified,exit,workload,regime,backend,cns,threads,coros,seed,"
		   "tried,committed,tried_tps,committed_tps,abort_rate,sim_time_s\n");
	fprintf(f, "all,%s,%d,%d,%s,%s,verbs,%u,%u,%u,%llu,%lld,%lld,%.3f,%.3f,%.6f,%.9f\n",
		c->complete ? "complete" : "partial", c->complete ? 1 : 0, c->complete ? 0 : 1, wl,
		rg, c->cl->ncn, c->o->threads, c->o->coros, (unsigned long long)c->o->seed, tried,
		committed, secs > 0 ? tried / secs : 0, secs > 0 ? committed / secs : 0,
		tried ? aborts / tried : 0, secs);
	/* one row per MN: "mn" (one MN, as before) or "mnK" */
	int rc = 0;
	for (uint32_t m = 0; m < c->nmn && rc >= 0; m++) {
		char scope[16];
		if (c->nmn == 1)
			snprintf(scope, sizeof(scope), "mn");
		else
			snprintf(scope, sizeof(scope), "mn%u", c->cl->mn[m].id);
		rc = fprintf(f, "%s,%s,-,%d,%s,%s,verbs,0,0,0,%llu,0,0,0,0,0,0\n", scope,
			     c->ch[m].status == 0 ? "complete" : "failed", c->ch[m].status, wl, rg,
			     (unsigned long long)c->o->seed);
	}
	for (uint32_t k = 0; k < c->cl->ncn && rc >= 0; k++) {
		const dmr_roles_cnsum_t *s = &c->cs[k];
		rc = fprintf(
		    f, "cn%u,%s,%lld,%d,%s,%s,verbs,1,%u,%u,%llu,%lld,%lld,%.3f,%.3f,%.6f,%.9f\n",
		    c->cl->cn[k].id, s->have ? s->status : "missing", s->verified,
		    c->ch[c->nmn + k].status, s->have ? s->workload : wl, s->have ? s->regime : rg,
		    c->o->threads, c->o->coros, (unsigned long long)c->o->seed, s->tried,
		    s->committed, s->tried_tps, s->committed_tps, s->abort_rate, s->secs);
	}
	return rc;
}

dmr_status_t dmr_roles_combine_breakdown(const char *out, int final, const char (*outs)[1100],
					 const dmr_roles_cnsum_t *cs, uint32_t ncn, dmr_err_t *err)
{
	const char **dirs = calloc(ncn ? ncn : 1, sizeof(*dirs));
	if (!dirs)
		return dmr_err_set(err, DMR_ERR_NOMEM, "combined results: out of memory");
	double secs = 0;
	for (uint32_t k = 0; k < ncn; k++) {
		dirs[k] = outs[k];
		if (cs[k].secs > secs)
			secs = cs[k].secs;
	}
	dmr_status_t st = dmr_breakdown_combine(out, final, dirs, ncn, secs, err);
	free(dirs);
	return st;
}
