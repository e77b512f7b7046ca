/*
 * replay/replay.c - the replay engine (sim: single-threaded, driven by the
 * backend's progress()).
 */
#include "replay.h"

#include <errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/sim/sim.h"
#include "../core/loop.h"
#include "results.h"

void dmr_replay_opts_default(dmr_replay_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "sim";
	o->profile = "cx6dx-100g";
	o->out_dir = "out";
	o->cns = 4;
	o->threads = 28;
	o->coros = 3;
	o->seed = 1;
	o->retries = 0;
	o->window_ms = 100;
	dmr_loop_cfg_default(&o->loop);
}

/* A transaction copied out of the reader: only nops ops are stored. */
typedef struct qtxn {
	struct qtxn *next;
	dmr_trace_txn_t t; /* ops[] truncated to nops */
} qtxn_t;

typedef struct wqueue {
	qtxn_t *head, *tail;
} wqueue_t;

typedef struct engine {
	const dmr_replay_opts_t *o;
	dmr_trace_reader_t *rd;
	dmr_trace_txn_t *scratch;
	uint64_t next_index;  /* trace transactions read so far */
	uint64_t limit;       /* max transactions to dispatch */
	int eof;
	uint32_t nworkers;
	wqueue_t *q;
	dmr_txn_ctx_t *ctx;
	qtxn_t **cur;         /* per context: the transaction it runs */
	uint32_t nctx;
	dmr_be_t *be;
	dmr_txn_engine_t teng;
	dmr_layout_t layout;
	dmr_txn_stats_t *wst;  /* per worker */
	dmr_adm_t *adm;        /* admission loops, NULL = none */
	uint64_t drift_ps;     /* > 0: hot set moves every drift_ps */
	uint32_t drift_shift, parts;
	uint32_t part_mask;    /* bit t: table t is partitioned */
	uint32_t *wake;        /* scratch: contexts to resume */
	uint32_t *wake2;       /* scratch: contexts woken by a window tick */
	uint32_t *stack;       /* scratch: contexts pending start */
	double *lat;
	uint64_t nlat, caplat;
	dmr_ts_t ts;
	dmr_err_t *err;
	double trace_wall;    /* wall time spent reading the trace */
} engine_t;

static double wall_now(void);

static qtxn_t *qtxn_copy(const dmr_trace_txn_t *t)
{
	size_t sz = offsetof(qtxn_t, t) + offsetof(dmr_trace_txn_t, ops) +
		    sizeof(dmr_trace_op_t) * t->nops;
	qtxn_t *q = malloc(sz < sizeof(qtxn_t) ? sz : sz);
	if (!q)
		return NULL;
	q->next = NULL;
	memcpy(&q->t, t, offsetof(dmr_trace_txn_t, ops) + sizeof(dmr_trace_op_t) * t->nops);
	return q;
}

/* Next transaction for worker w (NULL: none left). Reads ahead into the
 * other workers' queues as needed. */
static dmr_status_t next_for(engine_t *e, uint32_t w, qtxn_t **q_p)
{
	while (!e->q[w].head) {
		if (e->eof || e->next_index >= e->limit) {
			*q_p = NULL;
			return DMR_OK;
		}
		double t0 = wall_now();
		dmr_status_t st = dmr_trace_next(e->rd, e->scratch, e->err);
		e->trace_wall += wall_now() - t0;
		if (st == DMR_INPROGRESS) {
			e->eof = 1;
			continue;
		}
		if (st != DMR_OK)
			return st;
		qtxn_t *q = qtxn_copy(e->scratch);
		if (!q)
			return dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
		uint32_t dw = (uint32_t)(e->next_index % e->nworkers);
		e->next_index++;
		wqueue_t *wq = &e->q[dw];
		if (wq->tail)
			wq->tail->next = q;
		else
			wq->head = q;
		wq->tail = q;
	}
	qtxn_t *q = e->q[w].head;
	e->q[w].head = q->next;
	if (!q->next)
		e->q[w].tail = NULL;
	*q_p = q;
	return DMR_OK;
}

static dmr_status_t record_latency(engine_t *e, uint64_t ps)
{
	if (e->nlat == e->caplat) {
		uint64_t cap = e->caplat ? e->caplat * 2 : 65536;
		double *l = realloc(e->lat, cap * sizeof(double));
		if (!l)
			return dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
		e->lat = l;
		e->caplat = cap;
	}
	e->lat[e->nlat++] = ps / 1e6; /* us */
	return DMR_OK;
}

static void sum_stats(const engine_t *e, dmr_txn_stats_t *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t w = 0; w < e->nworkers; w++) {
		const dmr_txn_stats_t *s = &e->wst[w];
		t->tried += s->tried;
		t->committed += s->committed;
		t->retries += s->retries;
		t->gave_up += s->gave_up;
		for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
			t->aborts[i] += s->aborts[i];
		t->atomics += s->atomics;
		t->reads += s->reads;
		t->writes += s->writes;
		t->locks_taken += s->locks_taken;
		t->locks_released += s->locks_released;
		t->skipped_ops += s->skipped_ops;
		t->committed_xv += s->committed_xv;
	}
}

/* Drift: move the transaction's partitioned operations to the hot set's
 * current place (FORMAT.md "Drift"). */
static void drift_remap(engine_t *e, dmr_trace_txn_t *t, uint64_t now)
{
	uint64_t phase = now / e->drift_ps;
	uint32_t shift = (uint32_t)((phase * e->drift_shift) % e->parts);
	if (!shift)
		return;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_trace_op_t *op = &t->ops[i];
		if (!(e->part_mask & (1u << op->table)))
			continue;
		int64_t rpp = (int64_t)(e->layout.t[op->table].rows / e->parts);
		int64_t base = op->key + (op->dep.op >= 0 && op->lo < op->hi ? op->lo : 0);
		int64_t part = base / rpp;
		int64_t np = (part + shift) % e->parts;
		op->key += (np - part) * rpp;
	}
}

/* Fetch the next transaction for context ci if it has none, pass the
 * admission loops, start it; repeat while transactions finish at once.
 * Contexts woken by loops are started in turn (work stack). */
static dmr_status_t run_ctx(engine_t *e, uint32_t ci, int r);
#define RESUME 100 /* run_ctx: a parked context may retry admission */

static dmr_status_t finish_ctx(engine_t *e, uint32_t ci, int r, uint32_t *nstack)
{
	dmr_txn_ctx_t *c = &e->ctx[ci];
	if (r == DMR_TXN_COMMITTED) {
		dmr_status_t st = record_latency(e, dmr_txn_latency_ps(c));
		if (st != DMR_OK)
			return st;
	}
	if (e->adm && e->cur[ci]) {
		uint32_t n = dmr_adm_finish(e->adm, c->worker, ci, e->wake, e->nctx);
		for (uint32_t k = 0; k < n; k++)
			e->stack[(*nstack)++] = e->wake[k];
	}
	free(e->cur[ci]);
	e->cur[ci] = NULL;
	return DMR_OK;
}

static dmr_status_t run_ctx(engine_t *e, uint32_t ci0, int r0)
{
	uint32_t nstack = 0;
	uint32_t ci = ci0;
	int r = r0;
	for (;;) {
		dmr_txn_ctx_t *c = &e->ctx[ci];
		if (e->adm && c->lockfail_rec) {
			dmr_adm_lock_failed(e->adm, c->worker, c->lockfail_rec - 1,
					    dmr_be_now(e->be, c->worker));
			c->lockfail_rec = 0;
		}
		if (r < 0) {
			dmr_err_set(e->err, (dmr_status_t)r, "%s", c->err.msg);
			return (dmr_status_t)r;
		}
		if (r != DMR_TXN_RUNNING) {
			dmr_status_t st = DMR_OK;
			if (r != RESUME)
				st = finish_ctx(e, ci, r, &nstack);
			if (st != DMR_OK)
				return st;
			if (!e->cur[ci]) {
				qtxn_t *q;
				st = next_for(e, c->worker, &q);
				if (st != DMR_OK)
					return st;
				if (q) {
					e->cur[ci] = q;
					if (e->drift_ps)
						drift_remap(e, &q->t, dmr_be_now(e->be, c->worker));
				}
			}
			if (e->cur[ci] &&
			    (!e->adm || dmr_adm_admit(e->adm, c->worker, ci, &e->cur[ci]->t,
						      dmr_be_now(e->be, c->worker)))) {
				r = dmr_txn_start(c, &e->cur[ci]->t);
				continue;
			}
		}
		/* this context is running, parked or idle: next pending one */
		if (!nstack)
			return DMR_OK;
		ci = e->stack[--nstack];
		r = RESUME;
	}
}

static int mkdir_p(const char *dir)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int mn_read(void *arg, int table, uint64_t slot, const uint64_t **payload_p,
		   uint64_t *version_p)
{
	engine_t *e = arg;
	if (table < 0 || (uint32_t)table >= e->layout.ntables || slot >= e->layout.t[table].rows)
		return -1;
	uint8_t *mem = dmr_be_mn_memory(e->be, 0, NULL);
	uint8_t *rec = mem + dmr_layout_rec(&e->layout, (unsigned)table, slot);
	uint64_t ver;
	memcpy(&ver, rec + 8, 8);
	if (version_p)
		*version_p = ver & DMR_VER_MASK;
	*payload_p = (const uint64_t *)(void *)(rec + DMR_REC_HDR);
	return (ver & DMR_VER_PRESENT) ? 1 : 0;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
}

dmr_status_t dmr_replay_run(const dmr_replay_opts_t *o, dmr_replay_result_t *res, dmr_err_t *err)
{
	engine_t E, *e = &E;
	memset(e, 0, sizeof(E));
	memset(res, 0, sizeof(*res));
	e->o = o;
	e->err = err;
	double w0 = wall_now();
	dmr_status_t st;
	gsl_rng *rng = NULL;

	if (o->cns == 0 || o->threads == 0 || o->coros == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "--cns, --threads and --coros must be >= 1");
	st = dmr_trace_open(o->trace, &e->rd, err);
	if (st != DMR_OK)
		return st;
	const dmr_trace_hdr_t *h = dmr_trace_header(e->rd);
	e->nworkers = o->cns * o->threads;
	st = dmr_layout_init(&e->layout, h, e->nworkers, 64 * 1024, err);
	if (st != DMR_OK)
		goto out_trace;
	uint64_t mr = o->mr_size ? o->mr_size : (e->layout.total + 4095) & ~4095ull;
	if (e->layout.total > mr) {
		st = dmr_err_set(err, DMR_ERR_RANGE,
				 "%s: footprint %llu bytes (%.1f MiB: tables + %u log rings) is "
				 "larger than --mr-size %llu bytes",
				 o->trace, (unsigned long long)e->layout.total,
				 e->layout.total / 1048576.0, e->nworkers, (unsigned long long)mr);
		goto out_trace;
	}
	if (e->layout.total > phys_mem()) {
		st = dmr_err_set(err, DMR_ERR_RANGE,
				 "%s: footprint %llu bytes is larger than this machine's memory "
				 "(%llu bytes)",
				 o->trace, (unsigned long long)e->layout.total,
				 (unsigned long long)phys_mem());
		goto out_trace;
	}
	res->footprint = e->layout.total;

	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = o->threads,
			       .mr_size = mr,
			       .seed = o->seed,
			       .profile = o->profile};
	st = dmr_be_open(&cfg, &e->be, err);
	if (st != DMR_OK)
		goto out_trace;
	if (!(e->be->ops->caps & DMR_BE_CAP_DRIVEN)) {
		st = dmr_err_set(err, DMR_ERR_UNSUPPORTED, "backend %s: threaded replay not built yet",
				 o->backend);
		goto out_be;
	}
	if (o->mtu) {
		st = dmr_sim_set_mtu(e->be, o->mtu);
		if (st != DMR_OK) {
			dmr_err_set(err, st, "--mtu %u: not an IB MTU (256..4096)", o->mtu);
			goto out_be;
		}
	}
	uint8_t *mem = dmr_be_mn_memory(e->be, 0, NULL);
	dmr_layout_load(&e->layout, mem);

	e->teng.be = e->be;
	e->teng.layout = &e->layout;
	e->teng.retries = o->retries;
	e->teng.backoff_ps = (uint64_t)(o->backoff_us * 1e6);
	e->nctx = e->nworkers * o->coros;
	e->ctx = calloc(e->nctx, sizeof(*e->ctx));
	e->cur = calloc(e->nctx, sizeof(*e->cur));
	e->q = calloc(e->nworkers, sizeof(*e->q));
	e->scratch = malloc(sizeof(*e->scratch));
	e->wst = calloc(e->nworkers, sizeof(*e->wst));
	e->wake = calloc(e->nctx, sizeof(*e->wake));
	e->wake2 = calloc(e->nctx, sizeof(*e->wake2));
	e->stack = calloc(2 * (size_t)e->nctx + 1, sizeof(*e->stack));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!e->ctx || !e->cur || !e->q || !e->scratch || !e->wst || !e->wake || !e->wake2 || !e->stack || !rng) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
		goto out_ctx;
	}
	gsl_rng_set(rng, o->seed);
	for (uint32_t i = 0; i < e->nctx; i++) {
		st = dmr_txn_ctx_init(&e->ctx[i], &e->teng, &e->wst[i / o->coros], i / o->coros, i, err);
		if (st != DMR_OK)
			goto out_ctx;
	}
	if (o->loop.loops) {
		st = dmr_adm_create(&o->loop, &e->layout, e->nworkers, o->threads, o->coros, &e->adm,
				    err);
		if (st != DMR_OK)
			goto out_ctx;
	}
	{
		const char *ds = dmr_trace_hdr_param(h, "drift_s");
		if (ds) {
			const char *sh = dmr_trace_hdr_param(h, "drift_shift");
			const char *pa = dmr_trace_hdr_param(h, "partitions");
			const char *pt = dmr_trace_hdr_param(h, "partitioned");
			double d = atof(ds);
			e->drift_shift = sh ? (uint32_t)atoi(sh) : 0;
			e->parts = pa ? (uint32_t)atoi(pa) : 0;
			if (!(d > 0) || !e->drift_shift || !e->parts || !pt) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s: header: drift_s needs drift_shift, partitions "
						 "and partitioned (FORMAT.md \"Drift\")",
						 o->trace);
				goto out_ctx;
			}
			char buf[128];
			snprintf(buf, sizeof(buf), "%s", pt);
			for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
			     t = strtok_r(NULL, ",", &sv)) {
				int ti = dmr_trace_hdr_table(h, t);
				if (ti < 0 || h->tables[ti].rows % e->parts) {
					st = dmr_err_set(err, DMR_ERR_PARSE,
							 "%s: header: partitioned table '%s' unknown "
							 "or not divisible into %u partitions",
							 o->trace, t, e->parts);
					goto out_ctx;
				}
				e->part_mask |= 1u << ti;
			}
			e->drift_ps = (uint64_t)(d * 1e12);
		}
	}
	e->limit = o->txns ? o->txns : UINT64_MAX;
	uint64_t window_ps = (uint64_t)(o->window_ms * 1e9);
	dmr_ts_init(&e->ts, window_ps ? window_ps : 100000000000ull);
	e->ts.drift_ps = e->drift_ps;

	/* start: each context wakes at a seeded random offset within 1 us
	 * (threads never start on the same picosecond) */
	for (uint32_t i = 0; i < e->nctx; i++) {
		uint64_t at = gsl_rng_uniform_int(rng, 1000000);
		st = dmr_be_timer(e->be, e->ctx[i].worker, at, (uint64_t)i << 32);
		if (st != DMR_OK) {
			dmr_err_set(err, st, "replay: timer failed");
			goto out_ctx;
		}
	}
	uint64_t until = o->duration_s > 0 ? (uint64_t)(o->duration_s * 1e12) : UINT64_MAX;
	dmr_wc_t wcs[64];
	const dmr_model_t *m = dmr_sim_model(e->be);
	int w;
	double loop0 = wall_now();
	while ((w = dmr_be_progress(e->be, until)) >= 0) {
		int n = dmr_be_poll(e->be, (uint32_t)w, wcs, 64);
		for (int k = 0; k < n; k++) {
			uint32_t ci = (uint32_t)(wcs[k].wr_id >> 32);
			if (ci >= e->nctx) {
				st = dmr_err_set(err, DMR_ERR_INVALID, "replay: completion for unknown context %u", ci);
				goto out_run;
			}
			dmr_txn_ctx_t *c = &e->ctx[ci];
			if (m)
				dmr_be_charge(e->be, c->worker, m->txn_logic_ps);
			uint64_t now = dmr_sim_time(e->be);
			if (dmr_ts_due(&e->ts, now)) {
				dmr_txn_stats_t tot;
				sum_stats(e, &tot);
				if (e->adm) {
					dmr_adm_sample_t smp;
					dmr_adm_sample(e->adm, now, &smp);
					e->ts.signal = smp.signal;
					e->ts.actuator = smp.actuator;
				}
				e->ts.phase = e->drift_ps ? now / e->drift_ps : 0;
				dmr_ts_advance(&e->ts, now, &tot);
			}
			if (e->adm) {
				uint32_t nw = dmr_adm_tick(e->adm, c->worker, now, &e->wst[c->worker],
							   e->wake2, e->nctx);
				for (uint32_t x = 0; x < nw; x++) {
					st = run_ctx(e, e->wake2[x], RESUME);
					if (st != DMR_OK)
						goto out_run;
				}
			}
			if (wcs[k].opcode == DMR_WR_TIMER && !e->cur[ci])
				st = run_ctx(e, ci, RESUME); /* start: idle context */
			else
				st = run_ctx(e, ci, dmr_txn_on_wc(c, &wcs[k]));
			if (st != DMR_OK)
				goto out_run;
		}
	}
	st = DMR_OK;
out_run:
	res->loop_wall_s = wall_now() - loop0;
	res->trace_wall_s = e->trace_wall;
	res->partial = st != DMR_OK;
	{
		uint64_t tend = dmr_sim_time(e->be);
		if (o->duration_s > 0 && tend < until && st == DMR_OK && !e->eof && e->next_index < e->limit)
			tend = until;
		if (o->duration_s > 0 && tend > until)
			tend = until;
		sum_stats(e, &res->st);
		e->ts.phase = e->drift_ps ? tend / e->drift_ps : 0;
		dmr_ts_finish(&e->ts, tend, &res->st);
		res->sim_time_s = tend / 1e12;
	}
	dmr_txn_stats_t tot = res->st;
	dmr_be_stats(e->be, &res->be);
	snprintf(res->workload, sizeof(res->workload), "%s", h->workload);
	snprintf(res->regime, sizeof(res->regime), "%s", h->regime);
	snprintf(res->loop, sizeof(res->loop), "%s", dmr_loop_name(o->loop.loops));
	snprintf(res->backend, sizeof(res->backend), "%s", o->backend);
	snprintf(res->profile, sizeof(res->profile), "%s", m ? m->name : "-");
	res->cns = o->cns;
	res->threads = o->threads;
	res->coros = o->coros;
	res->seed = o->seed;
	res->txns = e->next_index;
	if (res->sim_time_s > 0) {
		res->tried_tps = tot.tried / res->sim_time_s;
		res->committed_tps = tot.committed / res->sim_time_s;
	}
	uint64_t aborts = 0;
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		aborts += tot.aborts[i];
	res->abort_rate = tot.tried ? (double)aborts / tot.tried : 0;
	if (tot.committed) {
		res->atomics_per_commit = (double)tot.atomics / tot.committed;
		res->reads_per_commit = (double)tot.reads / tot.committed;
	}
	if (e->nlat) {
		gsl_sort(e->lat, 1, e->nlat);
		res->p50_us = gsl_stats_quantile_from_sorted_data(e->lat, 1, e->nlat, 0.50);
		res->p99_us = gsl_stats_quantile_from_sorted_data(e->lat, 1, e->nlat, 0.99);
		res->p999_us = gsl_stats_quantile_from_sorted_data(e->lat, 1, e->nlat, 0.999);
	}
	if (st == DMR_OK) {
		/* every lock taken was released: counted, and in flight none */
		dmr_status_t vst = dmr_wl_verify(h, mn_read, e, tot.committed_xv, &res->verify, err);
		if (vst != DMR_OK) {
			st = vst;
			res->partial = 1;
		} else {
			res->verified = res->verify.ok && tot.locks_taken == tot.locks_released;
			if (tot.locks_taken != tot.locks_released)
				snprintf(res->verify.first_failure, sizeof(res->verify.first_failure),
					 "locks taken %llu != released %llu",
					 (unsigned long long)tot.locks_taken,
					 (unsigned long long)tot.locks_released);
		}
	}
	res->wall_s = wall_now() - w0;
	snprintf(res->status, sizeof(res->status), "%s",
		 res->partial ? "partial" : (res->verified ? "complete" : "failed"));
	if (mkdir_p(o->out_dir) != 0) {
		if (st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_IO, "%s: cannot create: %s", o->out_dir,
					 strerror(errno));
	} else {
		dmr_err_t werr;
		int final = !res->partial && res->verified;
		if (dmr_results_write(o->out_dir, final, res, o->trace, &e->ts, &werr) != DMR_OK &&
		    st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_IO, "%s", werr.msg);
	}
	if (st == DMR_OK && !res->verified)
		st = dmr_err_set(err, DMR_ERR_VERIFY, "verification failed: %s",
				 res->verify.first_failure);
out_ctx:
	if (e->ctx)
		for (uint32_t i = 0; i < e->nctx; i++)
			dmr_txn_ctx_fini(&e->ctx[i]);
	if (e->cur)
		for (uint32_t i = 0; i < e->nctx; i++)
			free(e->cur[i]);
	if (e->q)
		for (uint32_t w2 = 0; w2 < e->nworkers; w2++)
			while (e->q[w2].head) {
				qtxn_t *q = e->q[w2].head;
				e->q[w2].head = q->next;
				free(q);
			}
	free(e->ctx);
	free(e->cur);
	free(e->q);
	free(e->scratch);
	free(e->wst);
	free(e->wake);
	free(e->wake2);
	free(e->stack);
	dmr_adm_destroy(e->adm);
	free(e->lat);
	dmr_ts_fini(&e->ts);
	if (rng)
		gsl_rng_free(rng);
out_be:
	dmr_be_close(e->be);
out_trace:
	dmr_trace_close(e->rd);
	return st;
}
