/*
 * replay/breakdown.c - types.csv, cns.csv, mns.csv and the published
 * benchmarks' log lines (breakdown.h; docs/RESULTS.md).
 */
#include "breakdown.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dmr_breakdown_fini(dmr_breakdown_t *bd)
{
	free(bd->cn);
	bd->cn = NULL;
	bd->ncns = 0;
}

static uint64_t aborts_of(const dmr_txn_stats_t *s)
{
	uint64_t a = 0;
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		a += s->aborts[i];
	return a;
}

static double per(uint64_t n, uint64_t d)
{
	return d ? (double)n / (double)d : 0;
}

static double rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

static void stats_add(dmr_txn_stats_t *d, const dmr_txn_stats_t *s)
{
	/* every field is a 64-bit word (replay.c checks it) */
	uint64_t *dw = (uint64_t *)(void *)d;
	const uint64_t *sw = (const uint64_t *)(const void *)s;
	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		dw[i] += sw[i];
}

dmr_status_t dmr_breakdown_collect(dmr_breakdown_t *bd, const dmr_trace_hdr_t *h,
				   const dmr_txn_stats_t *tst, const dmr_bd_first_t *first,
				   uint32_t nworkers, uint32_t threads, uint32_t cn0,
				   dmr_lathist_t *const *tlat, uint32_t nth, double run_s, int sim,
				   dmr_err_t *err)
{
	uint32_t nt = h->ntypes ? h->ntypes : 1;
	snprintf(bd->workload, sizeof(bd->workload), "%s", h->workload);
	bd->run_s = run_s;
	bd->sim = sim;
	bd->ntypes = nt;
	for (uint32_t t = 0; t < nt; t++) {
		snprintf(bd->type[t].name, sizeof(bd->type[t].name), "%s",
			 h->ntypes ? h->types[t] : "-");
		memset(&bd->type[t].st, 0, sizeof(bd->type[t].st));
		memset(&bd->type[t].first, 0, sizeof(bd->type[t].first));
	}
	bd->ncns = threads ? (nworkers + threads - 1) / threads : 0;
	bd->cn = calloc(bd->ncns ? bd->ncns : 1, sizeof(*bd->cn));
	dmr_lathist_t *m = malloc(sizeof(*m));
	if (!bd->cn || !m) {
		free(m);
		return dmr_err_set(err, DMR_ERR_NOMEM, "results per type: out of memory");
	}
	for (uint32_t c = 0; c < bd->ncns; c++) {
		bd->cn[c].cn = cn0 + c;
		bd->cn[c].workers = threads;
	}
	for (uint32_t w = 0; w < nworkers; w++)
		for (uint32_t t = 0; t < nt; t++) {
			stats_add(&bd->type[t].st, &tst[(size_t)w * nt + t]);
			stats_add(&bd->cn[w / threads].st, &tst[(size_t)w * nt + t]);
			const dmr_bd_first_t *x = &first[(size_t)w * nt + t];
			dmr_bd_first_t *y = &bd->type[t].first;
			y->commits += x->commits;
			y->reads += x->reads;
			y->writes += x->writes;
			y->atomics += x->atomics;
			y->index_reads += x->index_reads;
		}
	for (uint32_t t = 0; t < nt; t++) {
		dmr_lathist_init(m);
		for (uint32_t i = 0; i < nth; i++)
			if (tlat[i])
				dmr_lathist_merge(m, &tlat[i][t]);
		dmr_bd_type_t *ty = &bd->type[t];
		ty->p50_us = dmr_lathist_quantile(m, 0.50) / 1e6;
		ty->p90_us = dmr_lathist_quantile(m, 0.90) / 1e6;
		ty->p99_us = dmr_lathist_quantile(m, 0.99) / 1e6;
		ty->p999_us = dmr_lathist_quantile(m, 0.999) / 1e6;
		ty->mean_us = dmr_lathist_mean(m) / 1e6;
	}
	free(m);
	return DMR_OK;
}

void dmr_breakdown_mns(dmr_breakdown_t *bd, dmr_be_t *be, uint64_t run_ps, int modelled)
{
	uint32_t n = be->cfg.mns;
	bd->nmns = n < 1 ? 1 : n > DMR_BE_MAX_MNS ? DMR_BE_MAX_MNS : n;
	bd->run_ps = run_ps;
	memset(bd->mn, 0, sizeof(bd->mn));
	dmr_err_t e;
	dmr_status_t st = dmr_be_control(be, DMR_BE_CTL_MN_STATS, bd->mn, &e);
	bd->mn_reported = st == DMR_OK;
	bd->mn_modelled = bd->mn_reported && modelled;
	bd->mn_note[0] = 0;
	if (!bd->mn_reported)
		snprintf(bd->mn_note, sizeof(bd->mn_note), "not reported: %.140s", e.msg);
	else if (!modelled)
		snprintf(bd->mn_note, sizeof(bd->mn_note),
			 "counts only: backend %s has no model of busy time", be->ops->name);
}

static const char *types_header =
    "type,tried,committed,gave_up,retries,abort_lock,abort_read_locked,abort_validation,"
    "abort_duplicate,abort_full,abort_rpc_locked,abort_cache_stale,abort_rate,tried_tps,committed_"
    "tps,reads,writes,"
    "atomics,"
    "index_reads,cache_hits,cache_misses,reads_per_commit,writes_per_commit,atomics_per_commit,"
    "index_reads_per_commit,p50_us,p90_us,p99_us,p999_us,mean_us,exec_us,validation_us,log_us,"
    "commit_us,locks_taken,skipped_ops,first_commits,first_reads,first_writes,first_atomics,"
    "first_index_reads";

static int fill_types(FILE *f, const void *a)
{
	const dmr_breakdown_t *bd = a;
	int r = fprintf(f, "%s\n", types_header);
	for (uint32_t i = 0; r >= 0 && i < bd->ntypes; i++) {
		const dmr_bd_type_t *t = &bd->type[i];
		const dmr_txn_stats_t *s = &t->st;
		fprintf(f, "%s,%llu,%llu,%llu,%llu", t->name, (unsigned long long)s->tried,
			(unsigned long long)s->committed, (unsigned long long)s->gave_up,
			(unsigned long long)s->retries);
		for (int c = 0; c < DMR_ABORT_NCAUSES; c++)
			fprintf(f, ",%llu", (unsigned long long)s->aborts[c]);
		fprintf(f, ",%.6f,%.3f,%.3f", per(aborts_of(s), s->tried),
			rate(s->tried, bd->run_s), rate(s->committed, bd->run_s));
		fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu", (unsigned long long)s->reads,
			(unsigned long long)s->writes, (unsigned long long)s->atomics,
			(unsigned long long)s->index_reads, (unsigned long long)s->cache_hits,
			(unsigned long long)s->cache_misses);
		fprintf(f, ",%.4f,%.4f,%.4f,%.4f", per(s->reads, s->committed),
			per(s->writes, s->committed), per(s->atomics, s->committed),
			per(s->index_reads, s->committed));
		fprintf(f, ",%.3f,%.3f,%.3f,%.3f,%.3f", t->p50_us, t->p90_us, t->p99_us, t->p999_us,
			t->mean_us);
		/* phases: mean per committed transaction, us (phase_ps: ps) */
		for (int p = 0; p < DMR_TXN_NPHASES; p++)
			fprintf(f, ",%.3f", per(s->phase_ps[p], s->committed) / 1e6);
		const dmr_bd_first_t *x = &t->first;
		r = fprintf(f, ",%llu,%llu,%llu,%.4f,%.4f,%.4f,%.4f\n",
			    (unsigned long long)s->locks_taken, (unsigned long long)s->skipped_ops,
			    (unsigned long long)x->commits, per(x->reads, x->commits),
			    per(x->writes, x->commits), per(x->atomics, x->commits),
			    per(x->index_reads, x->commits));
	}
	return r;
}

static const char *cns_header = "cn,workers,tried,committed,gave_up,retries,aborts,abort_rate,"
				"tried_tps,committed_tps,committed_share";

static int fill_cns(FILE *f, const void *a)
{
	const dmr_breakdown_t *bd = a;
	uint64_t all = 0;
	for (uint32_t i = 0; i < bd->ncns; i++)
		all += bd->cn[i].st.committed;
	int r = fprintf(f, "%s\n", cns_header);
	for (uint32_t i = 0; r >= 0 && i < bd->ncns; i++) {
		const dmr_bd_cn_t *c = &bd->cn[i];
		const dmr_txn_stats_t *s = &c->st;
		r = fprintf(f, "%u,%u,%llu,%llu,%llu,%llu,%llu,%.6f,%.3f,%.3f,%.6f\n", c->cn,
			    c->workers, (unsigned long long)s->tried,
			    (unsigned long long)s->committed, (unsigned long long)s->gave_up,
			    (unsigned long long)s->retries, (unsigned long long)aborts_of(s),
			    per(aborts_of(s), s->tried), rate(s->tried, bd->run_s),
			    rate(s->committed, bd->run_s), per(s->committed, all));
	}
	return r;
}

static const char *mns_header =
    "mn,reported,verbs,reads,writes,atomics,bytes_read,bytes_written,link_down_util,"
    "link_up_util,nic_util,dma_util,atomic_util,note";

/* A note for a CSV field: commas and quotes become ';' and '\''. */
static void put_note(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ',' ? ';' : *s == '"' ? '\'' : *s, f);
}

static int fill_mns(FILE *f, const void *a)
{
	const dmr_breakdown_t *bd = a;
	int r = fprintf(f, "%s\n", mns_header);
	for (uint32_t i = 0; r >= 0 && i < bd->nmns; i++) {
		const dmr_be_mn_stats_t *m = &bd->mn[i];
		if (!bd->mn_reported) {
			/* no made-up values: the counts are unknown */
			fprintf(f, "%u,no,,,,,,,,,,,,", i);
		} else {
			fprintf(f, "%u,yes,%llu,%llu,%llu,%llu,%llu,%llu", i,
				(unsigned long long)m->verbs, (unsigned long long)m->reads,
				(unsigned long long)m->writes, (unsigned long long)m->atomics,
				(unsigned long long)m->bytes_read,
				(unsigned long long)m->bytes_written);
			const uint64_t busy[5] = {m->link_down_busy_ps, m->link_up_busy_ps,
						  m->nic_busy_ps, m->dma_busy_ps,
						  m->atomic_busy_ps};
			for (int k = 0; k < 5; k++) {
				if (bd->mn_modelled && bd->run_ps)
					fprintf(f, ",%.6f", (double)busy[k] / (double)bd->run_ps);
				else
					fputc(',', f); /* not modelled: unknown, not 0 */
			}
			fputc(',', f);
		}
		int dm = bd->mn_reported && bd->mn_modelled && bd->run_ps && m->dm_atomic_busy_ps;
		if (dm) {
			/* --dm-locks: the device-memory unit's own utilisation */
			fprintf(f, "device-memory atomic_util %.6f%s",
				(double)m->dm_atomic_busy_ps / (double)bd->run_ps,
				bd->mn_note[0] || (bd->mn_reported && m->rpcs) ? "; " : "");
		}
		if (bd->mn_reported && m->rpcs) {
			/* --rpc (docs/AURA.md "A1"): the RPCs its CPU answered and
			 * (modelled) how many of its cores they kept busy on average */
			fprintf(f, "rpcs %llu", (unsigned long long)m->rpcs);
			if (bd->mn_modelled && bd->run_ps)
				fprintf(f, " MN CPU %.6f cores busy",
					(double)m->rpc_busy_ps / (double)bd->run_ps);
			fprintf(f, "%s", bd->mn_note[0] ? "; " : "");
		}
		put_note(f, bd->mn_note);
		r = fputc('\n', f) == EOF ? -1 : 0;
	}
	return r;
}

/* motor.csv: per type, as Motor's abort_rate.txt (compute_node/handler/
 * gen_output.cc: "tx_type try_num commit_num abort_rate") with the reasons
 * of its validation aborts (core/txn.h DMR_MV_*), the versions read and the
 * verbs per committed transaction. */
static const char *motor_header =
    "type,tried,committed,abort_rate,abort_lock,abort_validation,newer,no_visible,no_slot,"
    "changed,versions_read_per_commit,old_versions_per_commit,atomics_per_commit,"
    "wrs_per_commit";

static int fill_motor(FILE *f, const void *a)
{
	const dmr_breakdown_t *bd = a;
	int r = fprintf(f, "%s\n", motor_header);
	for (uint32_t i = 0; r >= 0 && i < bd->ntypes; i++) {
		const dmr_txn_stats_t *s = &bd->type[i].st;
		const dmr_txn_mv_stats_t *m = &bd->type[i].mv;
		uint64_t wrs = s->reads + s->writes + s->atomics;
		r = fprintf(f,
			    "%s,%llu,%llu,%.6f,%llu,%llu,%llu,%llu,%llu,%llu,%.4f,%.4f,%.4f,%.4f\n",
			    bd->type[i].name, (unsigned long long)s->tried,
			    (unsigned long long)s->committed, per(aborts_of(s), s->tried),
			    (unsigned long long)s->aborts[DMR_ABORT_LOCK],
			    (unsigned long long)s->aborts[DMR_ABORT_VALIDATION],
			    (unsigned long long)m->aborts[DMR_MV_NEWER],
			    (unsigned long long)m->aborts[DMR_MV_NOVIS],
			    (unsigned long long)m->aborts[DMR_MV_NOSLOT],
			    (unsigned long long)m->aborts[DMR_MV_CHANGED],
			    per(m->versions_read, s->committed), per(m->old_reads, s->committed),
			    per(s->atomics, s->committed), per(wrs, s->committed));
	}
	return r;
}

void dmr_breakdown_protocol(dmr_breakdown_t *bd, int protocol, const dmr_txn_ctx_t *ctx, uint32_t n)
{
	bd->motor = protocol == DMR_TXN_PROTO_MOTOR;
	bd->crest = protocol == DMR_TXN_PROTO_CREST;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t t = 0; t < DMR_TRACE_MAX_TYPES; t++) {
			dmr_bd_type_t *bt = &bd->type[t < bd->ntypes ? t : 0];
			if (ctx[i].mv)
				dmr_txn_mv_add(&bt->mv, &ctx[i].mv[t]);
			if (ctx[i].cr)
				dmr_txn_cr_add(&bt->cr, &ctx[i].cr[t]);
		}
}

/* crest.csv: per type, CREST's tickers (adslabcuhk/crest
 * benchmark/TPCC/TpccBenchmark.h: tpcc.TYPE.abort, fail_lock,
 * read_column_locked, wait_dependent_txn.lat, read_from_cache.cnt,
 * read_from_remote.cnt) beside tried and committed. */
static const char *crest_header =
    "type,tried,committed,abort_rate,read_column_locked,fail_lock,abort_validation,"
    "wait_dependent_txn,wait_dependent_txn_us,read_from_cache,read_from_remote,"
    "atomics_per_commit,reads_per_commit";

static int fill_crest(FILE *f, const void *a)
{
	const dmr_breakdown_t *bd = a;
	int r = fprintf(f, "%s\n", crest_header);
	for (uint32_t i = 0; r >= 0 && i < bd->ntypes; i++) {
		const dmr_txn_stats_t *s = &bd->type[i].st;
		const dmr_txn_cr_stats_t *k = &bd->type[i].cr;
		r = fprintf(f, "%s,%llu,%llu,%.6f,%llu,%llu,%llu,%llu,%.3f,%llu,%llu,%.4f,%.4f\n",
			    bd->type[i].name, (unsigned long long)s->tried,
			    (unsigned long long)s->committed, per(aborts_of(s), s->tried),
			    (unsigned long long)s->aborts[DMR_ABORT_READ_LOCKED],
			    (unsigned long long)s->aborts[DMR_ABORT_LOCK],
			    (unsigned long long)s->aborts[DMR_ABORT_VALIDATION],
			    (unsigned long long)k->waits, k->wait_ps / 1e6,
			    (unsigned long long)k->hits, (unsigned long long)k->misses,
			    per(s->atomics, s->committed), per(s->reads, s->committed));
	}
	return r;
}

dmr_status_t dmr_breakdown_write(const char *dir, int final, const dmr_breakdown_t *bd,
				 dmr_err_t *err)
{
	/* the protocol's own file last: motor.csv or crest.csv */
	const char *names[4] = {"types", "cns", "mns", bd->crest ? "crest" : "motor"};
	int (*const fill[4])(FILE *, const void *) = {fill_types, fill_cns, fill_mns,
						      bd->crest ? fill_crest : fill_motor};
	int nf = bd->motor || bd->crest ? 4 : 3;
	for (int i = 0; i < nf; i++) {
		char n[64];
		snprintf(n, sizeof(n), "%s%s.csv", names[i], final ? "" : ".partial");
		dmr_status_t st = dmr_results_write_file(dir, n, fill[i], bd, err);
		if (st != DMR_OK)
			return st;
	}
	if (final)
		for (int i = 0; i < nf; i++) {
			/* a finished run supersedes an older partial one */
			char p[1200];
			snprintf(p, sizeof(p), "%s/%s.partial.csv", dir, names[i]);
			remove(p);
		}
	return DMR_OK;
}

dmr_status_t dmr_breakdown_publog_parse(const char *s, uint32_t *fmt_p, dmr_err_t *err)
{
	if (!strcmp(s, "crest"))
		*fmt_p = DMR_PUBLOG_CREST;
	else if (!strcmp(s, "ford"))
		*fmt_p = DMR_PUBLOG_FORD;
	else if (!strcmp(s, "all"))
		*fmt_p = DMR_PUBLOG_CREST | DMR_PUBLOG_FORD;
	else
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "option --published-log: '%s' is not a format (crest, ford or all)", s);
	return DMR_OK;
}

/* Names the published code gives the types our generators write, where
 * they differ from a mechanical rule (traces/tpcc.c, smallbank.c, ycsb.c
 * against CREST's benchmark/TPCC/TpccBenchmark.h TPCC_TRANSACTION_NAMES,
 * SmallBank/SmallBankBenchmark.h, YCSB/YCSBBenchmark.h, and FORD's
 * workload/smallbank/smallbank_db.h SmallBank_TX_NAME). */
static const struct {
	const char *wl, *ours, *crest, *ford;
} type_names[] = {
    {"tpcc", "NewOrder", "NEWORDER", NULL},
    {"tpcc", "Delivery", "DELIVER", NULL},
    {"smallbank", "TransactSavings", NULL, "TransactSaving"},
    /* CREST benchmark/TATP/TATPBenchmark.h TATP_TRANSACTION_NAMES; FORD
     * workload/tatp/tatp_db.h TATP_TX_NAME (its spelling) */
    {"tatp", "GetSubscriberData", "GET_SUBSCRIBER", "GetSubsciberData"},
};

const char *dmr_breakdown_crest_name(const char *wl, const char *type, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(wl, type_names[i].wl) && !strcmp(type, type_names[i].ours) &&
		    type_names[i].crest) {
			snprintf(buf, n, "%s", type_names[i].crest);
			return buf;
		}
	/* CamelCase -> CAMEL_CASE (StockLevel -> STOCK_LEVEL, as CREST's) */
	size_t o = 0;
	for (size_t i = 0; type[i]; i++) {
		unsigned char ch = (unsigned char)type[i];
		int us = i && isupper(ch) && islower((unsigned char)type[i - 1]);
		if (o + (size_t)us + 1 >= n)
			break;
		if (us)
			buf[o++] = '_';
		buf[o++] = (char)toupper(ch);
	}
	if (n)
		buf[o] = 0;
	return buf;
}

static const char *ford_name(const char *wl, const char *type)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(wl, type_names[i].wl) && !strcmp(type, type_names[i].ours) &&
		    type_names[i].ford)
			return type_names[i].ford;
	return type;
}

/* CREST's per-type tickers we count (benchmark/TPCC/TpccBenchmark.h
 * tpcc_bench_ticker, in its order), with what each holds here. */
enum { TK_ABORT, TK_FAIL_LOCK, TK_FAIL_INSERT, TK_READ_LOCKED, TK_RELEASE, TK_LOCK, TK_N };
static const char *const tk_name[TK_N] = {
    "abort", "fail_lock", "fail_insert", "read_column_locked", "release_lock", "lock"};

static uint64_t tk_value(const dmr_txn_stats_t *s, int k)
{
	switch (k) {
	case TK_ABORT:
		return aborts_of(s); /* aborted attempts */
	case TK_FAIL_LOCK:
		return s->aborts[DMR_ABORT_LOCK];
	case TK_FAIL_INSERT:
		return s->aborts[DMR_ABORT_DUPLICATE] + s->aborts[DMR_ABORT_FULL];
	case TK_READ_LOCKED:
		return s->aborts[DMR_ABORT_READ_LOCKED];
	case TK_RELEASE:
		return s->locks_released;
	default:
		return s->locks_taken;
	}
}

/* CREST: Statistics::ToString (src/util/Statistic.h) of the per-type
 * tickers and the .lat histograms, then per CN the lines of
 * Benchmark::ReportMergedThreadResults (benchmark/Base/Benchmark.cc). */
static void print_crest(const dmr_breakdown_t *bd, const dmr_replay_result_t *r, FILE *f)
{
	char nm[DMR_TRACE_MAX_TYPES][64];
	int wt = 0, wh = 0;
	for (uint32_t i = 0; i < bd->ntypes; i++) {
		char cn[40];
		snprintf(nm[i], sizeof(nm[i]), "%s.%s", bd->workload,
			 dmr_breakdown_crest_name(bd->workload, bd->type[i].name, cn, sizeof(cn)));
		/* setw(MAX name length), markers included */
		int l = (int)strlen(nm[i]);
		int lt = l + (int)strlen(".read_column_locked"), lh = l + (int)strlen(".marker");
		wt = lt > wt ? lt : wt;
		wt = lh > wt ? lh : wt;
		wh = lh > wh ? lh : wh;
	}
	fprintf(f, "[Statistics]\n[Ticker]\n");
	for (uint32_t i = 0; i < bd->ntypes; i++) {
		fprintf(f, "\n\n[ %s ]\n\n", nm[i]);
		for (int k = 0; k < TK_N; k++) {
			char n[96];
			snprintf(n, sizeof(n), "%.63s.%s", nm[i], tk_name[k]);
			fprintf(f, "%*s:%10llu\n", wt, n,
				(unsigned long long)tk_value(&bd->type[i].st, k));
		}
	}
	fprintf(f, "[History]\n");
	for (uint32_t i = 0; i < bd->ntypes; i++) {
		const dmr_bd_type_t *t = &bd->type[i];
		char n[96];
		snprintf(n, sizeof(n), "%.63s.lat", nm[i]);
		fprintf(f, "\n\n[ %s ]\n\n", nm[i]);
		fprintf(f, "%*s:   average: %6.2f   p50: %6.2f   p99: %6.2f   p999: %6.2f\n", wh, n,
			t->mean_us, t->p50_us, t->p99_us, t->p999_us);
	}
	fprintf(f, "\n");
	for (uint32_t i = 0; i < bd->ncns; i++) {
		const dmr_txn_stats_t *s = &bd->cn[i].st;
		fprintf(f,
			"# dmreplay: CN %u of this run (CREST prints these lines per CN process)\n",
			bd->cn[i].cn);
		fprintf(f, "Tried: %llu Committed: %llu\n", (unsigned long long)s->tried,
			(unsigned long long)s->committed);
		fprintf(f, "Tried Throughput: %g KOPS, Commit Troughput: %g KOPS \n",
			rate(s->tried, bd->run_s) / 1e3, rate(s->committed, bd->run_s) / 1e3);
	}
	fprintf(f,
		"Average latency: %d us, P50 latency: %d us, P90 latency: %d us, P99 latency: %d "
		"us\n",
		(int)bd->run_mean_us, (int)r->p50_us, (int)bd->run_p90_us, (int)r->p99_us);
}

/* FORD: Handler::OutputResult (compute_pool/worker/handler.cc): the
 * abort_rate.txt block with the totals line of CREST's FORD port
 * (Comparisons/myford/compute_pool/worker/handler.cc), then per CN the
 * result.txt line. */
static void print_ford(const dmr_breakdown_t *bd, const dmr_replay_result_t *r, FILE *f)
{
	uint64_t tried = 0, committed = 0;
	fprintf(f, "dmreplay tx_type try_num commit_num abort_rate\n");
	for (uint32_t i = 0; i < bd->ntypes; i++) {
		const dmr_txn_stats_t *s = &bd->type[i].st;
		fprintf(f, "%s %llu %llu %g\n", ford_name(bd->workload, bd->type[i].name),
			(unsigned long long)s->tried, (unsigned long long)s->committed,
			per(s->tried - s->committed, s->tried));
		tried += s->tried;
		committed += s->committed;
	}
	fprintf(f, "All Tried: %llu, All Committed: %llu, Abort Rate: %g\n",
		(unsigned long long)tried, (unsigned long long)committed,
		per(tried - committed, tried));
	for (uint32_t i = 0; i < bd->ncns; i++) {
		const dmr_txn_stats_t *s = &bd->cn[i].st;
		fprintf(f, "dmreplay %g %g %g %g\n", rate(s->tried, bd->run_s) / 1e3,
			rate(s->committed, bd->run_s) / 1e3, r->p50_us, r->p99_us);
	}
}

void dmr_breakdown_print_published(const dmr_breakdown_t *bd, const dmr_replay_result_t *r,
				   uint32_t fmt, FILE *f)
{
	if (fmt & DMR_PUBLOG_CREST)
		print_crest(bd, r, f);
	if (fmt & DMR_PUBLOG_FORD)
		print_ford(bd, r, f);
}
