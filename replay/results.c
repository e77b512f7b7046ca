/*
 * replay/results.c - result files, the human summary and the exit status of
 * a run (results.h).
 */
#include "results.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/base/fs.h"
#include "../core/base/timeps.h"

/* the columns of the transaction time series (timeseries.h) */
enum {
	TS_TRIED,
	TS_COMMITTED,
	TS_ABORTS,
	TS_GAVE_UP,
	TS_INC,
	TS_DEC,
	TS_DEF,
	TS_MOVES,
	TS_DB_POSTS,
	TS_DB_RINGS,
	TS_DB_WRS,
	TS_A_MOVES,
	TS_A_SPILLS,
	TS_NCNT
};
enum {
	TS_PHASE,
	TS_SIGNAL,
	TS_ACTUATOR,
	TS_DB_SIGNAL,
	TS_DB_BATCH,
	TS_AW_ATOMIC,
	TS_AW_RPC,
	TS_AW_MOVE,
	TS_AW_LOAD,
	TS_A_RPCG,
	TS_A_OWNG,
	TS_A_CACHET,
	TS_A_CPRED,
	TS_A_COBS,
	TS_NGAUGE
};

void dmr_ts_init(dmr_ts_t *ts, uint64_t window_ps)
{
	memset(ts, 0, sizeof(*ts));
	dmr_tseries_init(&ts->s, window_ps, TS_NCNT, TS_NGAUGE, 0);
}

void dmr_ts_fini(dmr_ts_t *ts)
{
	dmr_tseries_fini(&ts->s);
	free(ts->cn_slots);
	free(ts->cn_names);
	ts->cn_slots = NULL;
	ts->cn_names = NULL;
	ts->ncn = 0;
}

dmr_status_t dmr_ts_cn_slots(dmr_ts_t *ts, uint32_t ncn)
{
	double *v = calloc(ncn ? ncn : 1, sizeof(*v));
	char(*names)[32] = calloc(ncn ? ncn : 1, sizeof(*names));
	if (!v || !names) {
		free(v);
		free(names);
		return DMR_ERR_NOMEM;
	}
	for (uint32_t k = 0; k < ncn; k++)
		snprintf(names[k], sizeof(names[k]), "loop_actuator_cn%u", k);
	uint32_t max_rows = ts->s.max_rows;
	dmr_time_ps_t w = ts->s.window_ps;
	dmr_tseries_fini(&ts->s);
	dmr_tseries_init(&ts->s, w, TS_NCNT, TS_NGAUGE + ncn, max_rows);
	free(ts->cn_slots);
	free(ts->cn_names);
	ts->cn_slots = v;
	ts->cn_names = names;
	ts->ncn = ncn;
	return DMR_OK;
}

static uint64_t aborts_of(const dmr_txn_stats_t *s)
{
	uint64_t a = 0;
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		a += s->aborts[i];
	return a;
}

/* The counters and gauges now. The loop decisions the replay set are
 * consumed: done[] + the replay's value is their running total, so the
 * first window that closes gets the value and later ones none. */
static void ts_sample(dmr_ts_t *ts, const dmr_txn_stats_t *st, uint64_t c[TS_NCNT], double *g)
{
	uint64_t *set[4] = {&ts->increases, &ts->decreases, &ts->deferred, &ts->moves};
	c[TS_TRIED] = st->tried;
	c[TS_COMMITTED] = st->committed;
	c[TS_ABORTS] = aborts_of(st);
	c[TS_GAVE_UP] = st->gave_up;
	for (int k = 0; k < 4; k++) {
		ts->done[k] += *set[k];
		*set[k] = 0;
		c[TS_INC + k] = ts->done[k];
	}
	c[TS_DB_POSTS] = ts->db_posts;
	c[TS_DB_RINGS] = ts->db_rings;
	c[TS_DB_WRS] = ts->db_wrs;
	c[TS_A_MOVES] = ts->a_moves;
	c[TS_A_SPILLS] = ts->a_spills;
	for (int k = 0; k < 4; k++)
		g[TS_AW_ATOMIC + k] = ts->a_w[k];
	g[TS_A_RPCG] = ts->a_rpc_groups;
	g[TS_A_OWNG] = ts->a_owned_groups;
	g[TS_A_CACHET] = ts->a_cached_tables;
	g[TS_A_CPRED] = ts->a_cost_pred;
	g[TS_A_COBS] = ts->a_cost_obs;
	g[TS_DB_SIGNAL] = ts->db_signal;
	g[TS_DB_BATCH] = ts->db_batch;
	g[TS_PHASE] = (double)ts->phase;
	g[TS_SIGNAL] = ts->signal;
	g[TS_ACTUATOR] = ts->actuator;
	for (uint32_t k = 0; k < ts->ncn; k++)
		g[TS_NGAUGE + k] = ts->cn_slots[k];
}

/* Gauges of one sample: TS_NGAUGE + ncn, on the stack when few. */
#define TS_GAUGE_STACK 64

void dmr_ts_advance(dmr_ts_t *ts, uint64_t now_ps, const dmr_txn_stats_t *st)
{
	if (!dmr_tseries_due(&ts->s, now_ps))
		return; /* no window closes: the replay's loop decisions stay set */
	uint64_t c[TS_NCNT];
	double gs[TS_GAUGE_STACK], *g = gs;
	if (TS_NGAUGE + ts->ncn > TS_GAUGE_STACK &&
	    !(g = malloc(sizeof(*g) * (TS_NGAUGE + ts->ncn))))
		return; /* out of memory: this sample is skipped, the next one
			 * gets the counters' change */
	ts_sample(ts, st, c, g);
	dmr_tseries_advance(&ts->s, now_ps, c, g);
	if (g != gs)
		free(g);
}

void dmr_ts_finish(dmr_ts_t *ts, uint64_t end_ps, const dmr_txn_stats_t *st)
{
	uint64_t c[TS_NCNT];
	double gs[TS_GAUGE_STACK], *g = gs;
	if (TS_NGAUGE + ts->ncn > TS_GAUGE_STACK &&
	    !(g = malloc(sizeof(*g) * (TS_NGAUGE + ts->ncn))))
		g = NULL; /* out of memory: the last row's gauges are zeros */
	if (g)
		ts_sample(ts, st, c, g);
	else {
		double g0[TS_NGAUGE];
		uint32_t n = ts->ncn;
		ts->ncn = 0; /* only the fixed gauges */
		ts_sample(ts, st, c, g0);
		ts->ncn = n;
	}
	dmr_tseries_finish(&ts->s, end_ps, c, g);
	if (g != gs)
		free(g);
}

void dmr_ts_loop_sample(dmr_ts_t *ts, dmr_adm_t *adm, dmr_doorbell_t *db, uint64_t now)
{
	dmr_adm_sample_t smp;
	dmr_adm_sample(adm, now, &smp);
	ts->signal = smp.signal;
	ts->actuator = smp.actuator;
	ts->increases += smp.increases;
	ts->decreases += smp.decreases;
	ts->deferred += smp.deferred;
	ts->moves += smp.moves;
	for (uint32_t k = 0; k < ts->ncn; k++)
		ts->cn_slots[k] = dmr_adm_cn_slots(adm, k);
	dmr_aura_t *au = dmr_adm_aura(adm);
	if (au) {
		dmr_aura_sample_t x;
		dmr_aura_sample(au, &x);
		memcpy(ts->a_w, x.w, sizeof(ts->a_w));
		ts->a_rpc_groups = x.rpc_groups;
		ts->a_owned_groups = x.owned_groups;
		ts->a_cached_tables = x.cached_tables;
		ts->a_cost_pred = x.cost_pred;
		ts->a_cost_obs = x.cost_obs;
		ts->a_moves += x.moves;
		ts->a_spills += x.spills;
	}
	if (db) {
		dmr_doorbell_sample_t d;
		dmr_doorbell_sample(db, &d);
		ts->db_signal = d.signal;
		ts->db_batch = d.batch;
		ts->db_posts = d.posts;
		ts->db_rings = d.rings;
		ts->db_wrs = d.wrs;
	}
}

static int ts_phase(FILE *f, const dmr_tseries_t *s, uint32_t i, const void *arg)
{
	const dmr_ts_t *ts = arg;
	return fprintf(f, "%llu",
		       (unsigned long long)(ts->drift_ps
						? i * s->window_ps / ts->drift_ps
						: (uint64_t)dmr_tseries_gauge(s, i, TS_PHASE)));
}

int dmr_ts_write_csv(const dmr_ts_t *ts, FILE *f)
{
	static const dmr_tseries_col_t cols[] = {
	    {"t_s", DMR_TSERIES_T, 0, "%.6f", NULL},
	    {"tried", DMR_TSERIES_CNT, TS_TRIED, NULL, NULL},
	    {"committed", DMR_TSERIES_CNT, TS_COMMITTED, NULL, NULL},
	    {"aborts", DMR_TSERIES_CNT, TS_ABORTS, NULL, NULL},
	    {"gave_up", DMR_TSERIES_CNT, TS_GAVE_UP, NULL, NULL},
	    {"phase", DMR_TSERIES_FN, 0, NULL, ts_phase},
	    {"loop_signal", DMR_TSERIES_GAUGE, TS_SIGNAL, "%.4f", NULL},
	    {"loop_actuator", DMR_TSERIES_GAUGE, TS_ACTUATOR, "%.4f", NULL},
	    {"loop_increases", DMR_TSERIES_CNT, TS_INC, NULL, NULL},
	    {"loop_decreases", DMR_TSERIES_CNT, TS_DEC, NULL, NULL},
	    {"loop_deferred", DMR_TSERIES_CNT, TS_DEF, NULL, NULL},
	};
	static const dmr_tseries_col_t dbcols[] = {
	    {"doorbell_signal", DMR_TSERIES_GAUGE, TS_DB_SIGNAL, "%.4f", NULL},
	    {"doorbell_batch", DMR_TSERIES_GAUGE, TS_DB_BATCH, "%.4f", NULL},
	    {"doorbell_posts", DMR_TSERIES_CNT, TS_DB_POSTS, NULL, NULL},
	    {"doorbell_rings", DMR_TSERIES_CNT, TS_DB_RINGS, NULL, NULL},
	    {"doorbell_wrs", DMR_TSERIES_CNT, TS_DB_WRS, NULL, NULL},
	};
	static const dmr_tseries_col_t acols[] = {
	    {"aura_w_atomic", DMR_TSERIES_GAUGE, TS_AW_ATOMIC, "%.6g", NULL},
	    {"aura_w_rpc", DMR_TSERIES_GAUGE, TS_AW_RPC, "%.6g", NULL},
	    {"aura_w_move", DMR_TSERIES_GAUGE, TS_AW_MOVE, "%.6g", NULL},
	    {"aura_w_load", DMR_TSERIES_GAUGE, TS_AW_LOAD, "%.6g", NULL},
	    {"aura_rpc_groups", DMR_TSERIES_GAUGE, TS_A_RPCG, "%.0f", NULL},
	    {"aura_owned_groups", DMR_TSERIES_GAUGE, TS_A_OWNG, "%.0f", NULL},
	    {"aura_cached_tables", DMR_TSERIES_GAUGE, TS_A_CACHET, "%.0f", NULL},
	    {"aura_moves", DMR_TSERIES_CNT, TS_A_MOVES, NULL, NULL},
	    {"aura_spills", DMR_TSERIES_CNT, TS_A_SPILLS, NULL, NULL},
	    {"aura_cost_pred_us", DMR_TSERIES_GAUGE, TS_A_CPRED, "%.4f", NULL},
	    {"aura_cost_obs_us", DMR_TSERIES_GAUGE, TS_A_COBS, "%.4f", NULL},
	};
	uint32_t nbase = sizeof(cols) / sizeof(cols[0]), ndb = sizeof(dbcols) / sizeof(dbcols[0]);
	uint32_t na = sizeof(acols) / sizeof(acols[0]);
	if (!ts->ncn && !ts->doorbell && !ts->aura)
		return dmr_tseries_write_csv(&ts->s, f, cols, nbase, ts);
	uint32_t n =
	    nbase + (ts->ncn ? 1 + ts->ncn : 0) + (ts->doorbell ? ndb : 0) + (ts->aura ? na : 0);
	dmr_tseries_col_t *all = malloc(sizeof(*all) * n);
	if (!all)
		return -1;
	memcpy(all, cols, sizeof(cols));
	uint32_t o = nbase;
	if (ts->ncn)
		all[o++] = (dmr_tseries_col_t){"loop_moves", DMR_TSERIES_CNT, TS_MOVES, NULL, NULL};
	for (uint32_t k = 0; k < ts->ncn; k++)
		all[o++] = (dmr_tseries_col_t){ts->cn_names[k], DMR_TSERIES_GAUGE, TS_NGAUGE + k,
					       "%.0f", NULL};
	if (ts->doorbell) {
		memcpy(all + o, dbcols, sizeof(dbcols));
		o += ndb;
	}
	if (ts->aura)
		memcpy(all + o, acols, sizeof(acols));
	int rc = dmr_tseries_write_csv(&ts->s, f, all, n, ts);
	free(all);
	return rc;
}

static const char *summary_header =
    "workload,regime,loop,backend,profile,cns,threads,coros,seed,txns,tried,committed,gave_up,"
    "retries,tried_tps,committed_tps,abort_rate,abort_lock,abort_read_locked,"
    "abort_validation,abort_duplicate,abort_full,atomics_per_commit,reads_per_commit,verbs,"
    "p50_us,p99_us,p999_us,verified,sim_time_s,wall_s,loop_wall_s,trace_wall_s,status,footprint_"
    "bytes,"
    "skipped_ops,mtu,retries_limit,backoff_us,duration_s,ai_step,md_factor,loop_window_ms,"
    "loop_threshold,profile_path,trace,cas_replayed,p50_dispatch_us,p99_dispatch_us,"
    "p999_dispatch_us,protocol,mns,backups,placement,index,addr_cache,index_reads_per_commit,"
    "cache_hit_ratio,isolation,versions,crest_locks,crest_local,dm_locks,cxl_tables,"
    "crest_cache,crest_cache_ttl_us,doorbell_max,doorbell_util,aura_levers,aura_tuner,"
    "cn_imbalance,aura_windows,aura_rpc_groups,aura_owned_groups,aura_cached_tables,aura_moves,"
    "aura_spills,aura_local_waits,rpcs,rpc_fallbacks,abort_rpc_locked,mn_cpu_util,rpc,cn_cache,"
    "cn_cache_hits,cn_cache_stale,aura_groups,aura_lr,aura_weights";

/* The MN CPU's utilisation by RPCs over the run (sim: busy time over cores
 * x simulated time, in [0, 1]; 0 when not modelled). */
static double mn_cpu_util(const dmr_replay_result_t *r)
{
	double span = r->sim_time_s * 1e12 * r->be.rpc_cores;
	return span > 0 ? (double)r->be.rpc_busy_ps / span : 0.0;
}

const char *dmr_results_header(void)
{
	return summary_header;
}

int dmr_results_mkdir_p(const char *dir)
{
	dmr_err_t err;
	if (dmr_mkdir_p(dir, DMR_FS_PROBE, &err) == DMR_OK)
		return 0;
	/* errno is the failing call's, except where the path is not a
	 * directory (dmr_mkdir_p says so in its message only) */
	int e = errno ? errno : EIO;
	struct stat sb;
	if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
		e = ENOTDIR;
	errno = e;
	return -1;
}

dmr_status_t dmr_results_write_file(const char *dir, const char *name,
				    int (*fill)(FILE *, const void *), const void *arg,
				    dmr_err_t *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return dmr_err_set(err, DMR_ERR_IO, "%s/%s: path too long", dir, name);
	dmr_afile_t a;
	dmr_status_t st = dmr_afile_open(&a, path, err);
	if (st != DMR_OK)
		return st;
	errno = 0;
	if (fill(a.f, arg) < 0) {
		int e = errno ? errno : EIO;
		dmr_afile_abort(&a);
		return dmr_err_set(err, DMR_ERR_IO, "%s: write failed: %s", path, strerror(e));
	}
	return dmr_afile_commit(&a, err);
}

struct sum_arg {
	const dmr_replay_result_t *r;
	const char *trace;
};

/* A path as one CSV field (RFC 4180, libcsv's csv_write): as it is, or
 * quoted with its quotes doubled when it holds a comma or a quote; a CR or
 * LF becomes '?' (summary rows stay one line each for line-based tools).
 * A trace named 'a,b.csv' had given a row with one field too many, which
 * `dmreplay report` refused (a trial). Into buf[n] (truncated to fit). */
static void csv_path_field(char *buf, size_t n, const char *s)
{
	char clean[1100];
	snprintf(clean, sizeof(clean), "%s", s);
	for (char *p = clean; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = '?';
	if (!strpbrk(clean, ",\"")) {
		snprintf(buf, n, "%s", clean);
		return;
	}
	size_t len = csv_write(buf, n - 1, clean, strlen(clean));
	buf[len < n - 1 ? len : n - 1] = 0;
}

static int fill_summary(FILE *f, const void *a)
{
	const struct sum_arg *sa = a;
	const dmr_replay_result_t *r = sa->r;
	fprintf(f, "%s\n", summary_header);
	/* the placement as one CSV field: "t:0/1,2" -> "t:0/1/2" */
	char place[sizeof(r->placement)];
	snprintf(place, sizeof(place), "%s", r->placement[0] ? r->placement : "-");
	for (char *p = place; *p; p++)
		if (*p == ',' || *p == '"' || *p == '\n')
			*p = '/';
	uint64_t lookups = r->st.cache_hits + r->st.cache_misses;
	char fprof[2300], ftrace[2300];
	csv_path_field(fprof, sizeof(fprof), r->profile_path[0] ? r->profile_path : "-");
	csv_path_field(ftrace, sizeof(ftrace), sa->trace);
	int n = fprintf(
	    f,
	    "%s,%s,%s,%s,%s,%u,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu,%.3f,%.3f,%.6f,%llu,%llu,"
	    "%llu,%llu,%llu,%.4f,%.4f,%llu,%.3f,%.3f,%.3f,%d,%.9f,%.3f,%.3f,%.3f,%s,%llu,"
	    "%llu,%u,%u,%g,%g,%u,%g,%g,%g,%s,%s,%llu,%.3f,%.3f,%.3f",
	    r->workload, r->regime, r->loop, r->backend, r->profile, r->cns, r->threads, r->coros,
	    (unsigned long long)r->seed, (unsigned long long)r->txns,
	    (unsigned long long)r->st.tried, (unsigned long long)r->st.committed,
	    (unsigned long long)r->st.gave_up, (unsigned long long)r->st.retries, r->tried_tps,
	    r->committed_tps, r->abort_rate, (unsigned long long)r->st.aborts[DMR_ABORT_LOCK],
	    (unsigned long long)r->st.aborts[DMR_ABORT_READ_LOCKED],
	    (unsigned long long)r->st.aborts[DMR_ABORT_VALIDATION],
	    (unsigned long long)r->st.aborts[DMR_ABORT_DUPLICATE],
	    (unsigned long long)r->st.aborts[DMR_ABORT_FULL], r->atomics_per_commit,
	    r->reads_per_commit, (unsigned long long)r->be.verbs, r->p50_us, r->p99_us, r->p999_us,
	    r->verified, r->sim_time_s, r->wall_s, r->loop_wall_s, r->trace_wall_s, r->status,
	    (unsigned long long)r->footprint, (unsigned long long)r->st.skipped_ops, r->mtu,
	    r->retries_limit, r->backoff_us, r->duration_s, r->loop_cfg.ai_step,
	    r->loop_cfg.md_factor, dmr_ps_to_ms(r->loop_cfg.window_ps), r->loop_cfg.threshold,
	    fprof, ftrace, (unsigned long long)r->st.cas_replayed, r->p50_dispatch_us,
	    r->p99_dispatch_us, r->p999_dispatch_us);
	if (n < 0)
		return n;
	/* table lists as one CSV field: "a,b" -> "a/b" */
	char dm[sizeof(r->dm_locks)], cxl[sizeof(r->cxl_tables)];
	snprintf(dm, sizeof(dm), "%s", r->dm_locks[0] ? r->dm_locks : "-");
	snprintf(cxl, sizeof(cxl), "%s", r->cxl_tables[0] ? r->cxl_tables : "-");
	for (char *p = dm; *p; p++)
		*p = *p == ',' ? '/' : *p;
	for (char *p = cxl; *p; p++)
		*p = *p == ',' ? '/' : *p;
	char cnc[sizeof(r->cn_cache)]; /* --cn-cache's tables, '/'-separated */
	snprintf(cnc, sizeof(cnc), "%s", r->cn_cache[0] ? r->cn_cache : "-");
	for (char *p = cnc; *p; p++)
		*p = *p == ',' ? '/' : *p;
	int crest = r->crest_locks[0] != 0;
	char ttl[32] = "-";
	if (crest && r->crest_cache)
		snprintf(ttl, sizeof(ttl), "%g", dmr_ps_to_us(r->crest_cache_ttl_ps));
	char dbm[16] = "-", dbu[32] = "-", alv[32] = "-";
	if (r->loop_cfg.loops & DMR_LOOP_DOORBELL) {
		snprintf(dbm, sizeof(dbm), "%u", r->loop_cfg.doorbell_max);
		snprintf(dbu, sizeof(dbu), "%g", r->loop_cfg.doorbell_util);
	}
	int aura = (r->loop_cfg.loops & DMR_LOOP_AURA) != 0;
	if (aura)
		dmr_aura_levers_name(r->loop_cfg.aura.levers, alv, sizeof(alv));
	n = fprintf(f, ",%s,%u,%u,%s,%s,%llu,%.4f,%.6f,%s,%u,%s,%s,%s,%s,%s,%s",
		    r->protocol[0] ? r->protocol : "occ", r->mns ? r->mns : 1, r->backups, place,
		    r->index[0] ? r->index : "direct", (unsigned long long)r->addr_cache,
		    r->st.committed ? (double)r->st.index_reads / (double)r->st.committed : 0.0,
		    lookups ? (double)r->st.cache_hits / (double)lookups : 0.0,
		    r->isolation[0] ? r->isolation : "sr", r->versions,
		    crest ? r->crest_locks : "-", crest ? (r->crest_local ? "on" : "off") : "-", dm,
		    cxl, crest ? (r->crest_cache ? "on" : "off") : "-", ttl);
	if (n < 0)
		return n;
	const dmr_aura_summary_t *au = &r->aura;
	double nw = au->windows ? (double)au->windows : 1;
	n = fprintf(f, ",%s,%s,%s,%s,%.4f,%llu,%.3f,%.3f,%.3f,%llu,%llu,%llu", dbm, dbu, alv,
		    aura ? dmr_aura_tuner_name(r->loop_cfg.aura.tuner) : "-", r->cn_imbalance,
		    (unsigned long long)au->windows, (double)au->rpc_gw / nw,
		    (double)au->owned_gw / nw, (double)au->cached_tw / nw,
		    (unsigned long long)au->moves, (unsigned long long)au->spills,
		    (unsigned long long)r->slots.local_deferred);
	if (n < 0)
		return n;
	n = fprintf(f, ",%llu,%llu,%llu,%.6f,%s", (unsigned long long)r->st.rpcs,
		    (unsigned long long)r->st.rpc_fallbacks,
		    (unsigned long long)r->st.aborts[DMR_ABORT_RPC_LOCKED], mn_cpu_util(r),
		    r->rpc[0] ? r->rpc : "none");
	if (n < 0)
		return n;
	n = fprintf(f, ",%s,%llu,%llu", cnc, (unsigned long long)r->xst.cn_cache_hits,
		    (unsigned long long)r->st.aborts[DMR_ABORT_CACHE_STALE]);
	if (n < 0)
		return n;
	/* aura's settings as run (record groups resolved; start weights
	 * atomic:rpc:move:load), so that report never pools runs that differ
	 * only there */
	if (!aura)
		return fprintf(f, ",-,-,-\n");
	const double *w = r->loop_cfg.aura.w;
	return fprintf(f, ",%u,%g,%g:%g:%g:%g\n", r->loop_cfg.aura.groups, r->loop_cfg.aura.lr,
		       w[DMR_AURA_W_ATOMIC], w[DMR_AURA_W_RPC], w[DMR_AURA_W_MOVE],
		       w[DMR_AURA_W_LOAD]);
}

static int fill_ts(FILE *f, const void *a)
{
	return dmr_ts_write_csv(a, f);
}

dmr_status_t dmr_results_write(const char *dir, int final, const dmr_replay_result_t *r,
			       const char *trace, const dmr_ts_t *ts, dmr_err_t *err)
{
	struct sum_arg sa = {r, trace};
	dmr_status_t st = dmr_results_write_file(
	    dir, final ? "timeseries.csv" : "timeseries.partial.csv", fill_ts, ts, err);
	if (st == DMR_OK)
		st = dmr_results_write_file(dir, final ? "summary.csv" : "summary.partial.csv",
					    fill_summary, &sa, err);
	if (st == DMR_OK && final) {
		/* a finished run supersedes an older partial one in this directory */
		char p[1200];
		snprintf(p, sizeof(p), "%s/summary.partial.csv", dir);
		remove(p);
		snprintf(p, sizeof(p), "%s/timeseries.partial.csv", dir);
		remove(p);
	}
	return st;
}

void dmr_replay_print(const dmr_replay_result_t *r, void *file)
{
	FILE *f = file;
	/* a trace without '# regime' has none: no space before the comma */
	fprintf(f,
		"dmreplay: %s%s%s, loop %s, on %s/%s, %u CNs x %u threads x %u coros, seed "
		"%llu%s\n",
		r->workload, r->regime[0] ? " " : "", r->regime, r->loop, r->backend, r->profile,
		r->cns, r->threads, r->coros, (unsigned long long)r->seed,
		r->partial ? "  [PARTIAL]" : "");
	fprintf(f,
		"  transactions   %llu dispatched, %llu tried, %llu committed, %llu gave up, %llu "
		"retries\n",
		(unsigned long long)r->txns, (unsigned long long)r->st.tried,
		(unsigned long long)r->st.committed, (unsigned long long)r->st.gave_up,
		(unsigned long long)r->st.retries);
	int sim = strcmp(dmr_be_base_name(r->backend), "sim") == 0;
	fprintf(f, "  throughput     tried %.1f K txn/s, committed %.1f K txn/s (over %.6f s %s)\n",
		r->tried_tps / 1e3, r->committed_tps / 1e3, r->sim_time_s,
		sim ? "simulated" : "of wall time");
	fprintf(f, "  aborts         %.2f %% of attempts:", 100 * r->abort_rate);
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		fprintf(f, " %s %llu", dmr_abort_cause_name(i),
			(unsigned long long)r->st.aborts[i]);
	fprintf(f, "\n");
	if (r->st.rpcs || r->st.rpc_fallbacks)
		fprintf(f,
			"  rpc            %llu attempts by RPC to the MN's CPU (%llu transactions "
			"one-sided instead: several MNs or backups), MN CPU %.1f %% busy\n",
			(unsigned long long)r->st.rpcs, (unsigned long long)r->st.rpc_fallbacks,
			100 * mn_cpu_util(r));
	if (r->loop_cfg.loops && dmr_ps_from_s(r->sim_time_s) < r->loop_cfg.window_ps)
		fprintf(
		    f,
		    "  note           the run lasted %.3f ms, less than one loop window (%.3f ms): "
		    "loop %s never acted (--loop-window-ms)\n",
		    r->sim_time_s * 1e3, dmr_ps_to_ms(r->loop_cfg.window_ps), r->loop);
	if (r->slots.cap)
		fprintf(f,
			"  loop           %s: slots per %s %u..%u (bound %u), %llu moves (%llu up, "
			"%llu down) in %llu windows\n",
			r->loop, (r->loop_cfg.loops & DMR_LOOP_AIMD) ? "CN" : "worker",
			r->slots.min, r->slots.max, r->slots.cap,
			(unsigned long long)(r->slots.up + r->slots.down),
			(unsigned long long)r->slots.up, (unsigned long long)r->slots.down,
			(unsigned long long)r->slots.windows);
	if (r->loop_cfg.loops & DMR_LOOP_PERKEY)
		fprintf(f, "  loop           perkey: %llu deferrals behind a hot record\n",
			(unsigned long long)r->slots.key_deferred);
	if (r->loop_cfg.loops & DMR_LOOP_AURA) {
		const dmr_aura_summary_t *a = &r->aura;
		char lv[32];
		fprintf(f,
			"  loop           aura: levers %s, tuner %s, %llu windows: groups by RPC "
			"%.2f, owned %.2f, tables cached %.2f (mean per window); %llu ownership "
			"moves, %llu spills, %llu deferrals behind the owner's holder; weights "
			"atomic %.4g rpc %.4g move %.4g load %.4g\n",
			dmr_aura_levers_name(r->loop_cfg.aura.levers, lv, sizeof(lv)),
			dmr_aura_tuner_name(r->loop_cfg.aura.tuner), (unsigned long long)a->windows,
			a->windows ? (double)a->rpc_gw / a->windows : 0.0,
			a->windows ? (double)a->owned_gw / a->windows : 0.0,
			a->windows ? (double)a->cached_tw / a->windows : 0.0,
			(unsigned long long)a->moves, (unsigned long long)a->spills,
			(unsigned long long)r->slots.local_deferred, a->w[0], a->w[1], a->w[2],
			a->w[3]);
	}
	if (r->doorbell.cap) {
		const dmr_doorbell_summary_t *d = &r->doorbell;
		fprintf(f,
			"  loop           doorbell: WRs per doorbell %u..%u (bound %u), %llu moves "
			"(%llu up, %llu down) in %llu windows; %llu posts rung as %llu doorbells "
			"(%.2f WRs per doorbell)\n",
			d->min, d->max, d->cap, (unsigned long long)(d->up + d->down),
			(unsigned long long)d->up, (unsigned long long)d->down,
			(unsigned long long)d->windows, (unsigned long long)d->posts,
			(unsigned long long)d->rings, d->rings ? (double)d->wrs / d->rings : 0.0);
	}
	if (!r->st.committed) { /* no figure per commit: not 0.00 us (a trial) */
		fprintf(f, "  per commit     - (no transaction committed%s)\n",
			r->st.tried ? "" : ": none was started");
	} else {
		fprintf(f, "  per commit     %.2f atomics, %.2f READs\n", r->atomics_per_commit,
			r->reads_per_commit);
		fprintf(f,
			"  latency        p50 %.2f us, p99 %.2f us, p99.9 %.2f us (committed, "
			"from first start after admission)\n",
			r->p50_us, r->p99_us, r->p999_us);
		fprintf(f,
			"  from dispatch  p50 %.2f us, p99 %.2f us, p99.9 %.2f us (incl. the "
			"admission wait)\n",
			r->p50_dispatch_us, r->p99_dispatch_us, r->p999_dispatch_us);
	}
	if (r->partial)
		fprintf(f, "  verification   not run (the run did not complete)\n");
	else if (r->verified < 0)
		fprintf(f, "  verification   n/a (%s)\n", r->verify.summary);
	else
		fprintf(f, "  verification   %s (%s)%s%s\n", r->verified ? "PASSED" : "FAILED",
			r->verify.summary[0] ? r->verify.summary : "-", r->verified ? "" : ": ",
			r->verified ? "" : r->verify.first_failure);
	double simw = r->loop_wall_s - r->trace_wall_s;
	if (!sim) {
		fprintf(f,
			"  backend        %llu verbs (%llu READ, %llu WRITE, %llu CAS, %llu FAA), "
			"%llu doorbells\n",
			(unsigned long long)r->be.verbs, (unsigned long long)r->be.reads,
			(unsigned long long)r->be.writes, (unsigned long long)r->be.cas,
			(unsigned long long)r->be.faa, (unsigned long long)r->be.doorbells);
		if (r->st.cas_replayed)
			fprintf(f,
				"  replayed CAS   %llu lock CASes whose READ found their own tag "
				"in the lock word (the responder executed the CAS twice; the lock "
				"was ours: docs/SOFTROCE-VM.md)\n",
				(unsigned long long)r->st.cas_replayed);
		return;
	}
	fprintf(f,
		"  simulator      %llu verbs, %llu events in %.2f s wall (+ %.2f s reading the "
		"trace, %.2f s total)\n",
		(unsigned long long)r->be.verbs, (unsigned long long)r->be.events, simw,
		r->trace_wall_s, r->wall_s);
	fprintf(f,
		"                 %.2f M simulated verbs per wall-second (%.2f M with trace "
		"reading), %.2f wall-s per simulated s\n",
		simw > 0 ? r->be.verbs / simw / 1e6 : 0,
		r->loop_wall_s > 0 ? r->be.verbs / r->loop_wall_s / 1e6 : 0,
		r->sim_time_s > 0 ? r->loop_wall_s / r->sim_time_s : 0);
}

int dmr_results_exit_status(dmr_status_t st)
{
	if (st == DMR_OK)
		return 0;
	if (st == DMR_ERR_PARSE || st == DMR_ERR_IO || st == DMR_ERR_RANGE ||
	    st == DMR_ERR_INVALID || st == DMR_ERR_NODEV)
		return 2;
	if (st == DMR_ERR_INTERRUPTED)
		return 130;
	return 1;
}
