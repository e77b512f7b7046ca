/*
 * replay/replay.c - the replay engine (sim: single-threaded, driven by the
 * backend's progress(); verbs, shm: one thread per worker). It reaches the
 * backend only through backends/backend.h: the model's figures and the
 * simulated time by dmr_be_control, the cluster barrier by dmr_be_barrier
 * (START before the first transaction, END after the last completion).
 */
#include "replay.h"

#include <pthread.h>
#include <gsl/gsl_rng.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/base/fs.h"
#include "../core/base/opt.h"
#include "../core/base/progress.h"
#include "../core/base/sig.h"
#include "../core/base/timeps.h"
#include "../core/loop.h"
#include "../core/loop_doorbell.h"
#include "../models/model.h"
#include "breakdown.h"
#include "lathist.h"
#include "results.h"
#include "setup.h"

void dmr_replay_opts_default(dmr_replay_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "sim";
	o->profile = "cx6dx-100g";
	o->out_dir = "out";
	o->port = 1;
	o->gid_index = -1;
	o->cns = 4;
	o->threads = 28;
	o->coros = 3;
	o->seed = 1;
	o->retries = 0;
	o->window_ms = 100;
	o->mns = 1;
	o->protocol = DMR_TXN_PROTO_OCC;
	o->crest_locks = -1;
	o->crest_local = 1;
	o->crest_cache = 1;
	dmr_loop_cfg_default(&o->loop);
}

#include "engine.h"

#include "../core/txn_cncache.h"

/* aura with lever `bit` (core/aura.h DMR_AURA_A*) in this run. */
static int aura_on(const engine_t *e, unsigned bit)
{
	return (e->loop.loops & DMR_LOOP_AURA) && (e->loop.aura.levers & bit);
}

/* A committed transaction's latency: ps from its first start, dps from its
 * dispatch. */
static dmr_status_t record_latency(thr_t *th, unsigned type, uint64_t ps, uint64_t dps)
{
	dmr_lathist_add(&th->tlat[type], ps);
	dmr_lathist_add(th->lat, ps);
	dmr_lathist_add(th->dlat, dps);
	return DMR_OK;
}

static void set_stop(engine_t *e)
{
	__atomic_store_n(&e->stop, 1, __ATOMIC_RELAXED);
}

static int stopped(engine_t *e)
{
	return __atomic_load_n(&e->stop, __ATOMIC_RELAXED);
}

/*
 * The threaded time series (issue #15, found by ThreadSanitizer): the
 * sampler thread must not read a worker's counters while that worker's
 * thread increments them (core/txn.c, plain ++). Each worker copies its
 * counters into pub[w] word by word with relaxed atomic stores after every
 * batch of completions and when it stops; the sampler loads them the same
 * way. Each word is then a value the counter really had (no torn reads);
 * words of one worker may be one batch apart, as before. Plain stores on
 * x86-64 and arm64: no cost on the sim path, which never publishes.
 */
_Static_assert(sizeof(dmr_txn_stats_t) % sizeof(uint64_t) == 0,
	       "dmr_txn_stats_t: 64-bit words only (publish_stats)");
#define STAT_WORDS (sizeof(dmr_txn_stats_t) / sizeof(uint64_t))

static void publish_stats(engine_t *e, uint32_t w)
{
	const uint64_t *src = (const uint64_t *)(const void *)&e->wst[w];
	uint64_t *dst = (uint64_t *)(void *)&e->pub[w];
	for (size_t i = 0; i < STAT_WORDS; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

static void load_published(const engine_t *e, uint32_t w, dmr_txn_stats_t *out)
{
	const uint64_t *src = (const uint64_t *)(const void *)&e->pub[w];
	uint64_t *dst = (uint64_t *)(void *)out;
	for (size_t i = 0; i < STAT_WORDS; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* Per-type counters (results per type, breakdown.h): the core counts
 * into wst[w]; around each call that runs a transaction of type t on
 * worker w (dmr_txn_start, dmr_txn_on_wc: the worker's own thread, no other
 * writer meanwhile) the change of wst[w] is added to tst[w][t], word by
 * word. So the per-type sums equal the totals, field by field, whatever
 * the core counts. */
typedef union typed {
	dmr_txn_stats_t s;
	uint64_t w[STAT_WORDS];
} typed_t;

/* The type index of q (the reader refuses unknown types: < ntypes, at most
 * DMR_TRACE_MAX_TYPES: a uint8_t, engine_t.ctype). */
static inline unsigned type_of(const engine_t *e, const qtxn_t *q)
{
	return q->t.type < e->ntypes ? q->t.type : 0;
}

static inline void typed_begin(const engine_t *e, uint32_t w, typed_t *snap)
{
	memcpy(snap->w, &e->wst[w], sizeof(snap->w));
}

/* ... and the verbs of context ci's transaction so far (acc). */
static inline void typed_end(engine_t *e, uint32_t w, uint32_t ci, unsigned type,
			     const typed_t *snap)
{
	const dmr_txn_stats_t *ns = &e->wst[w];
	const uint64_t *now = (const uint64_t *)(const void *)ns;
	uint64_t *d = (uint64_t *)(void *)&e->tst[(size_t)w * e->ntypes + type];
	for (size_t i = 0; i < STAT_WORDS; i++)
		d[i] += now[i] - snap->w[i];
	dmr_bd_first_t *a = &e->acc[ci];
	a->reads += ns->reads - snap->s.reads;
	a->writes += ns->writes - snap->s.writes;
	a->atomics += ns->atomics - snap->s.atomics;
	a->index_reads += ns->index_reads - snap->s.index_reads;
}

/* The run's totals: from the workers' own counters (sim, or threaded
 * after the join), or (published) from the copies the threads publish. */
static void sum_stats_from(const engine_t *e, int published, dmr_txn_stats_t *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t w = 0; w < e->nworkers; w++) {
		dmr_txn_stats_t copy;
		const dmr_txn_stats_t *s = &e->wst[w];
		if (published) {
			load_published(e, w, &copy);
			s = &copy;
		}
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
		t->cas_replayed += s->cas_replayed;
		t->committed_xv += s->committed_xv;
		t->index_reads += s->index_reads; /* issue 11: index, cache, phases */
		t->cache_hits += s->cache_hits;
		t->cache_misses += s->cache_misses;
		t->rpcs += s->rpcs;
		t->rpc_fallbacks += s->rpc_fallbacks;
		for (int p = 0; p < DMR_TXN_NPHASES; p++)
			t->phase_ps[p] += s->phase_ps[p];
	}
}

static void sum_stats(const engine_t *e, dmr_txn_stats_t *t)
{
	sum_stats_from(e, 0, t);
}

/* Why run_ctx looks at a context: a separate channel from the core's
 * outcome (dmr_txn_outcome_t) and from statuses (the core's errors are
 * returned by ctx_failed before run_ctx is reached). */
typedef enum ctx_why {
	CTX_RESUME,   /* started, woken by a loop, or parked: it may fetch a
			 transaction and (re)try admission */
	CTX_ANSWERED, /* the core answered start/on_wc: DMR_OK and an outcome */
} ctx_why_t;

/* Fetch the next transaction for context ci if it has none, pass the
 * admission loops, start it; repeat while transactions finish at once.
 * Contexts woken by loops are started in turn (work stack). `out` is the
 * core's outcome with CTX_ANSWERED (unused with CTX_RESUME). */
static dmr_status_t run_ctx(thr_t *th, uint32_t ci, ctx_why_t why, dmr_txn_outcome_t out);

static dmr_status_t resume_ctx(thr_t *th, uint32_t ci)
{
	return run_ctx(th, ci, CTX_RESUME, DMR_TXN_RUNNING);
}

/* Pass a failed lock CAS the core reported to the per-key loop. */
static void report_lockfail(engine_t *e, dmr_txn_ctx_t *c)
{
	if (e->adm && c->lockfail_rec) {
		lock(e);
		dmr_adm_lock_failed(e->adm, c->worker, c->lockfail_rec - 1,
				    dmr_be_now(e->be, c->worker));
		unlock(e);
		c->lockfail_rec = 0;
	}
}

/* The core returned error st for context c (c->err says why). */
static dmr_status_t ctx_failed(thr_t *th, dmr_txn_ctx_t *c, dmr_status_t st)
{
	report_lockfail(th->e, c);
	return dmr_err_set(&th->err, st, "%s", c->err.msg);
}

/* Queue a woken context: ours go on the stack; another thread's worker gets
 * a timer completion (wr_id kind DMR_WRID_WAKE) that makes it resume the
 * context itself. */
static dmr_status_t wake_ctx(thr_t *th, uint32_t x, uint32_t *nstack)
{
	engine_t *e = th->e;
	uint32_t w = e->ctx[x].worker;
	if (!e->threaded || w == th->worker) {
		th->stack[(*nstack)++] = x;
		return DMR_OK;
	}
	return dmr_be_timer(e->be, w, 0, dmr_wrid(DMR_WRID_WAKE, x, 0));
}

/* ci's transaction finished with outcome `out` (COMMITTED or GAVE_UP). */
static dmr_status_t finish_ctx(thr_t *th, uint32_t ci, dmr_txn_outcome_t out, uint32_t *nstack)
{
	engine_t *e = th->e;
	dmr_txn_ctx_t *c = &e->ctx[ci];
	if (out == DMR_TXN_COMMITTED) {
		uint64_t now = dmr_be_now(e->be, c->worker), lps = dmr_txn_latency_ps(c);
		uint64_t dps = now - e->cur[ci]->dispatch_ps;
		unsigned type = e->ctype[ci];
		dmr_status_t st = record_latency(th, type, lps, dps > lps ? dps : lps);
		if (c->attempts == 1) {
			/* committed on its first attempt: one attempt's verbs */
			dmr_bd_first_t *x = &e->first[(size_t)c->worker * e->ntypes + type];
			const dmr_bd_first_t *a = &e->acc[ci];
			x->commits++;
			x->reads += a->reads;
			x->writes += a->writes;
			x->atomics += a->atomics;
			x->index_reads += a->index_reads;
		}
		if (st != DMR_OK)
			return st;
	}
	if (e->aura && e->cur[ci]) {
		dmr_aura_done_t d = {
		    .cn = c->worker / e->o->threads,
		    .group = e->cur[ci]->group,
		    .committed = out == DMR_TXN_COMMITTED,
		    .rpc = c->by_rpc,
		    .rpc_asked = c->rpc == DMR_TXN_RPC_ON,
		    .attempts = c->attempts,
		    .atomics = e->acc[ci].atomics,
		    .rpcs = c->by_rpc ? c->attempts : 0,
		    .latency_ps = out == DMR_TXN_COMMITTED ? dmr_txn_latency_ps(c) : 0,
		};
		lock(e);
		dmr_aura_txn_done(e->aura, &d);
		dmr_aura_txn_tables(e->aura, &e->cur[ci]->t);
		unlock(e);
	}
	if (e->adm && e->cur[ci]) {
		lock(e);
		uint32_t n = dmr_adm_finish(e->adm, c->worker, ci, th->wake, e->nctx);
		unlock(e);
		for (uint32_t k = 0; k < n; k++) {
			dmr_status_t st = wake_ctx(th, th->wake[k], nstack);
			if (st != DMR_OK)
				return dmr_err_set(
				    &th->err, st, "replay: wake of context %u failed", th->wake[k]);
		}
	}
	dmr_eng_qtxn_free(e, e->cur[ci]);
	e->cur[ci] = NULL;
	e->ctype[ci] = 0;
	return DMR_OK;
}

static dmr_status_t run_ctx(thr_t *th, uint32_t ci0, ctx_why_t why0, dmr_txn_outcome_t out0)
{
	engine_t *e = th->e;
	uint32_t nstack = 0;
	uint32_t ci = ci0;
	ctx_why_t why = why0;
	dmr_txn_outcome_t out = out0;
	for (;;) {
		dmr_txn_ctx_t *c = &e->ctx[ci];
		report_lockfail(e, c);
		if (why == CTX_RESUME || out != DMR_TXN_RUNNING) {
			dmr_status_t st = DMR_OK;
			if (why == CTX_ANSWERED)
				st = finish_ctx(th, ci, out, &nstack);
			if (st != DMR_OK)
				return st;
			if (!e->cur[ci] && dmr_be_now(e->be, c->worker) < e->until) {
				/* past --duration no transaction starts: the running
				 * ones finish, so every lock is released */
				qtxn_t *q = NULL;
				st = dmr_eng_next_for(e, th, c->worker, ci, &q);
				if (st != DMR_OK) {
					lock(e);
					dmr_err_set(&th->err, st, "%s", e->err->msg);
					unlock(e);
					return st;
				}
				if (q) {
					__atomic_add_fetch(&e->started, 1, __ATOMIC_RELAXED);
					e->cur[ci] = q;
					e->ctype[ci] = (uint8_t)type_of(e, q);
					q->dispatch_ps = dmr_be_now(e->be, c->worker);
					if (e->drift_ps && !q->remapped)
						dmr_eng_drift_remap(e, &q->t,
								    dmr_be_now(e->be, c->worker));
					if (e->aura && !e->inbox)
						q->group = dmr_aura_group(e->aura, &q->t);
				}
			}
			int admitted = 0;
			if (e->cur[ci]) {
				if (!e->adm) {
					admitted = 1;
				} else {
					lock(e);
					admitted =
					    dmr_adm_admit(e->adm, c->worker, ci, &e->cur[ci]->t,
							  dmr_be_now(e->be, c->worker));
					unlock(e);
				}
			}
			if (admitted) {
				/* sim: the CN CPU the engine spends on a transaction
				 * before its first post (models/model.h txn_begin_ps) */
				const dmr_model_t *m = e->threaded ? NULL : e->model;
				if (m && (m->txn_begin_ps || m->txn_op_ps))
					dmr_be_charge(e->be, c->worker,
						      m->txn_begin_ps +
							  m->txn_op_ps * e->cur[ci]->t.nops);
				if (e->aura && (e->loop.aura.levers & DMR_AURA_A1)) {
					lock(e); /* A1: its group's path (decided under the lock) */
					c->rpc = dmr_aura_rpc(e->aura, e->cur[ci]->group)
						     ? DMR_TXN_RPC_ON
						     : DMR_TXN_RPC_OFF;
					unlock(e);
				}
				typed_t snap;
				memset(&e->acc[ci], 0, sizeof(e->acc[ci]));
				typed_begin(e, c->worker, &snap);
				st = dmr_txn_start(c, &e->cur[ci]->t, &out);
				typed_end(e, c->worker, ci, e->ctype[ci], &snap);
				if (st != DMR_OK)
					return ctx_failed(th, c, st);
				why = CTX_ANSWERED;
				continue;
			}
		}
		/* this context is running, parked or idle: next pending one */
		if (!nstack)
			return DMR_OK;
		ci = th->stack[--nstack];
		why = CTX_RESUME;
	}
}

/* Handle one completion on thread th. Its wr_id (core/base/wrid.h) names
 * the context: kind WAKE, a timer of this engine (the start of a context,
 * or a loop waking it on another thread); kind TXN, the core's WRs and
 * backoff timers. */
static dmr_status_t on_wc(thr_t *th, const dmr_wc_t *wc)
{
	engine_t *e = th->e;
	uint32_t ci = dmr_wrid_index(wc->wr_id);
	dmr_wrid_kind_t kind = dmr_wrid_kind(wc->wr_id);
	if (ci >= e->nctx || (kind != DMR_WRID_TXN && kind != DMR_WRID_WAKE))
		return dmr_err_set(&th->err, DMR_ERR_INVALID,
				   "replay: completion for unknown context %u (wr_id 0x%llx)", ci,
				   (unsigned long long)wc->wr_id);
	dmr_txn_ctx_t *c = &e->ctx[ci];
	if (kind == DMR_WRID_WAKE)
		return resume_ctx(th, ci); /* start, or resume a parked context */
	dmr_txn_outcome_t out;
	typed_t snap;
	unsigned type = e->ctype[ci];
	typed_begin(e, c->worker, &snap);
	dmr_status_t st = dmr_txn_on_wc(c, wc, &out);
	typed_end(e, c->worker, ci, type, &snap);
	if (st != DMR_OK)
		return ctx_failed(th, c, st);
	return run_ctx(th, ci, CTX_ANSWERED, out);
}

static dmr_status_t thr_init(thr_t *th, engine_t *e, uint32_t worker)
{
	memset(th, 0, sizeof(*th));
	th->e = e;
	th->worker = worker;
	th->wake = calloc(e->nctx, sizeof(*th->wake));
	th->wake2 = calloc(e->nctx, sizeof(*th->wake2));
	th->wakep = calloc(e->nctx, sizeof(*th->wakep));
	th->stack = calloc(2 * (size_t)e->nctx + 1, sizeof(*th->stack));
	th->lat = calloc(1, sizeof(*th->lat));
	th->dlat = calloc(1, sizeof(*th->dlat));
	th->tlat = calloc(e->ntypes, sizeof(*th->tlat));
	return th->wake && th->wake2 && th->wakep && th->stack && th->lat && th->dlat && th->tlat
		   ? DMR_OK
		   : DMR_ERR_NOMEM;
}

static void thr_fini(thr_t *th)
{
	free(th->wake);
	free(th->wake2);
	free(th->wakep);
	free(th->stack);
	free(th->lat);
	free(th->dlat);
	free(th->tlat);
}

/* Window bookkeeping: time series and the loops' windows of worker w. */
static dmr_status_t tick(thr_t *th, uint32_t w, uint64_t now)
{
	engine_t *e = th->e;
	if (e->threaded)
		publish_stats(e, w);
	else if (dmr_ts_due(&e->ts, now)) {
		dmr_txn_stats_t tot;
		sum_stats(e, &tot);
		if (e->adm)
			dmr_ts_loop_sample(&e->ts, e->adm, e->teng.doorbell, now);
		dmr_ts_advance(&e->ts, now, &tot);
	}
	if (!e->adm)
		return DMR_OK;
	lock(e);
	uint32_t nw = dmr_adm_tick(e->adm, w, now, &e->wst[w], th->wake2, e->nctx);
	if (e->aura && (e->loop.aura.levers & DMR_AURA_A3))
		dmr_txn_cncache_set_tables(&e->teng, dmr_aura_cache_mask(e->aura)); /* A3 */
	unlock(e);
	for (uint32_t x = 0; x < nw; x++) {
		dmr_status_t st = resume_ctx(th, th->wake2[x]);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* Global simulated time, ps (DRIVEN backends answer DMR_BE_CTL_SIM_TIME:
 * checked before the run). */
static uint64_t sim_time(engine_t *e)
{
	uint64_t t = 0;
	(void)dmr_be_control(e->be, DMR_BE_CTL_SIM_TIME, &t, NULL);
	return t;
}

/* One phase of the cluster barrier; timeout_s > 0: the deadline from now,
 * else the backend's default. */
static dmr_status_t engine_barrier(engine_t *e, dmr_be_barrier_phase_t phase, double timeout_s,
				   int failed, int64_t value, int64_t *sum_p, dmr_err_t *err)
{
	dmr_be_barrier_t b = {.phase = phase, .failed = failed != 0, .value = value};
	if (timeout_s > 0)
		b.deadline_ps = dmr_be_now(e->be, 0) + dmr_ps_from_s(timeout_s);
	return dmr_be_barrier(e->be, &b, sum_p, err);
}

/* After the run failed on a completion: the rest of its poll's batch and
 * the completions still due (the other contexts' WRs in flight) are taken
 * without being handled and counted, not listed: how many failed, how many
 * of those were flushed. Bounded: no WR is posted any more, and at most
 * DRAIN_MAX are taken. The run's end time stays that of the failure. */
#define DRAIN_MAX 10000000u
static void drain_failed(engine_t *e, thr_t *th, const dmr_wc_t *rest, int nrest)
{
	dmr_wc_t wcs[64];
	uint64_t taken = 0, failed = 0, flushed = 0;
	for (int k = 0; k < nrest; k++) {
		failed += rest[k].status != DMR_WC_SUCCESS;
		flushed += rest[k].status == DMR_WC_FLUSH_ERR;
	}
	e->t_fail = sim_time(e);
	int w;
	while (taken < DRAIN_MAX && (w = dmr_be_progress(e->be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(e->be, (uint32_t)w, wcs, 64);
		for (int k = 0; k < n; k++) {
			failed += wcs[k].status != DMR_WC_SUCCESS;
			flushed += wcs[k].status == DMR_WC_FLUSH_ERR;
		}
		taken += n > 0 ? (uint64_t)n : 1;
	}
	if (failed) {
		size_t l = strlen(th->err.msg);
		snprintf(th->err.msg + l, sizeof(th->err.msg) - l,
			 "; after it %llu more completions failed, %llu of them flushed (counted, "
			 "not listed)",
			 (unsigned long long)failed, (unsigned long long)flushed);
	}
}

/* The event queue is empty: every context must be idle and the trace
 * dispatched (up to --txns, or until --duration stopped new starts);
 * else completions were lost (a backend broke the completion rule of
 * backend.h, or a fault dropped them) and the run failed. */
static dmr_status_t check_quiet(engine_t *e, thr_t *th)
{
	uint32_t busy = 0, first = 0;
	for (uint32_t ci = e->nctx; ci-- > 0;)
		if (e->cur[ci]) {
			busy++;
			first = ci;
		}
	uint64_t queued = 0;
	for (uint32_t w = 0; w < e->nworkers; w++)
		queued += e->q[w].n;
	if (e->inbox)
		for (uint32_t k = 0; k * e->o->threads < e->nworkers; k++)
			queued += e->inbox_len[k];
	int more = !e->eof && e->next_index < e->limit;
	if (sim_time(e) >= e->until)
		queued = 0, more = 0; /* --duration: no transaction starts after it */
	if (!busy && !queued && !more)
		return DMR_OK;
	if (!busy)
		return dmr_err_set(&th->err, DMR_ERR_REMOTE,
				   "replay: no event left with no transaction in flight but %llu "
				   "queued%s not dispatched: a context was never woken; results "
				   "are partial",
				   (unsigned long long)queued,
				   more ? " and the rest of the trace" : "");
	const dmr_txn_ctx_t *c = &e->ctx[first];
	const dmr_trace_txn_t *t = &e->cur[first]->t;
	return dmr_err_set(&th->err, DMR_ERR_REMOTE,
			   "replay: no event left with %u transactions in flight (their "
			   "completions never came: lost?), first trace line %u (txn %llu, worker "
			   "%u, context %u); %llu queued%s not dispatched; results are partial",
			   busy, t->line, (unsigned long long)t->id, c->worker, first,
			   (unsigned long long)queued, more ? " and the rest of the trace" : "");
}

/* The time series reached DMR_REPLAY_TS_MAX_ROWS: the run stops. */
static dmr_status_t ts_overflow(const engine_t *e, dmr_err_t *err)
{
	return dmr_err_set(err, DMR_ERR_RANGE,
			   "option --window-ms %g: the time series reached %u rows (%.3f s of "
			   "run): give a larger --window-ms (results so far are partial)",
			   e->o->window_ms, e->ts.s.n,
			   (double)e->ts.s.n * dmr_ps_to_s(e->ts.s.window_ps));
}

static dmr_status_t drive_sim(engine_t *e, thr_t *th)
{
	dmr_wc_t wcs[64];
	const dmr_model_t *m = e->model;
	int w;
	while ((w = dmr_be_progress(e->be, UINT64_MAX)) >= 0) {
		if (dmr_sig_caught())
			return dmr_err_set(&th->err, DMR_ERR_INTERRUPTED,
					   "interrupted by signal %d: results so far are partial",
					   dmr_sig_caught());
		int n = dmr_be_poll(e->be, (uint32_t)w, wcs, 64);
		dmr_progress_update(&e->prog, e->started);
		for (int k = 0; k < n; k++) {
			if (m)
				dmr_be_charge(e->be, (uint32_t)w, m->txn_logic_ps);
			dmr_status_t st = tick(th, (uint32_t)w, sim_time(e));
			if (st == DMR_OK)
				st = on_wc(th, &wcs[k]);
			if (st != DMR_OK) {
				if (st == DMR_ERR_REMOTE) /* the rest of this batch, then */
					drain_failed(e, th, wcs + k + 1, n - k - 1);
				return st;
			}
		}
		dmr_status_t fst =
		    e->teng.doorbell
			? dmr_doorbell_flush(e->teng.doorbell, (uint32_t)w, sim_time(e), &th->err)
			: DMR_OK;
		if (fst != DMR_OK || e->ts.s.overflow)
			return fst != DMR_OK ? fst : ts_overflow(e, &th->err);
	}
	return check_quiet(e, th);
}

/* One worker's thread: start its contexts, then poll its CQ until none of
 * its contexts has work, the run time is over, or another thread failed.
 * Every wait has a deadline. */
static void *worker_main(void *arg)
{
	thr_t *th = arg;
	engine_t *e = th->e;
	uint32_t w = th->worker, c0 = w * e->coros, c1 = c0 + e->coros;
	dmr_wc_t wcs[32];
	dmr_status_t st = DMR_OK;
	for (uint32_t ci = c0; ci < c1 && st == DMR_OK; ci++)
		st = resume_ctx(th, ci);
	uint64_t last = dmr_be_now(e->be, w);
	while (st == DMR_OK && !stopped(e)) {
		if (dmr_sig_caught()) {
			st = dmr_err_set(&th->err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d: results so far are partial",
					 dmr_sig_caught());
			break;
		}
		if (e->teng.doorbell && /* ring what the last batch posted */
		    (st = dmr_doorbell_flush(e->teng.doorbell, w, dmr_be_now(e->be, w), &th->err)))
			break;
		int n = dmr_be_poll(e->be, w, wcs, 32);
		uint64_t now = dmr_be_now(e->be, w);
		if (n < 0) {
			st = dmr_err_set(&th->err, DMR_ERR_REMOTE, "worker %u: poll failed", w);
			break;
		}
		if (n > 0) {
			last = now;
			for (int k = 0; k < n && st == DMR_OK; k++)
				st = on_wc(th, &wcs[k]);
			if (st == DMR_OK)
				st = tick(th, w, now);
			continue;
		}
		uint32_t busy = 0;
		for (uint32_t ci = c0; ci < c1; ci++)
			busy += e->cur[ci] != NULL;
		if (!busy)
			break;
		if (now - last > e->deadline_ps) {
			st = dmr_err_set(&th->err, DMR_ERR_TIMEOUT,
					 "worker %u: no completion for %.1f s with %u transactions "
					 "in flight (peer gone?)",
					 w, dmr_ps_to_s(now - last), busy);
			break;
		}
	}
	th->st = st;
	if (st != DMR_OK)
		set_stop(e);
	publish_stats(e, w);
	__atomic_sub_fetch(&e->running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static dmr_status_t drive_threaded(engine_t *e)
{
	e->running = e->nth;
	uint32_t started = 0;
	dmr_status_t st = DMR_OK;
	for (; started < e->nth; started++)
		if (pthread_create(&e->th[started].tid, NULL, worker_main, &e->th[started]) != 0) {
			st = dmr_err_set(&e->th[0].err, DMR_ERR_NOMEM,
					 "replay: cannot start thread %u", started);
			set_stop(e);
			__atomic_sub_fetch(&e->running, e->nth - started, __ATOMIC_SEQ_CST);
			break;
		}
	/* time series from this thread (counters read while they move) */
	while (__atomic_load_n(&e->running, __ATOMIC_SEQ_CST) > 0) {
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
		dmr_progress_update(&e->prog, __atomic_load_n(&e->started, __ATOMIC_RELAXED));
		uint64_t now = dmr_be_now(e->be, 0) - e->t0;
		if (dmr_ts_due(&e->ts, now)) {
			dmr_txn_stats_t tot;
			sum_stats_from(e, 1, &tot);
			if (e->adm) {
				lock(e);
				dmr_ts_loop_sample(&e->ts, e->adm, e->teng.doorbell, now);
				unlock(e);
			}
			dmr_ts_advance(&e->ts, now, &tot);
			if (e->ts.s.overflow && !e->stop) {
				st = ts_overflow(e, &e->th[0].err);
				e->stop = 1;
			}
		}
	}
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(e->th[i].tid, NULL);
		if (e->th[i].st != DMR_OK && st == DMR_OK)
			st = e->th[i].st;
	}
	return st;
}

/* types.csv, cns.csv, mns.csv into --out (final when summary.csv is), and
 * the published-log lines on stdout with --published-log. DMR_ERR_NOMEM;
 * DMR_ERR_WRITE (a failed write: the run's, not its input's). */
static dmr_status_t write_breakdown(engine_t *e, const dmr_replay_result_t *res,
				    const dmr_lathist_t *lat, uint64_t tend, dmr_err_t *err)
{
	const dmr_replay_opts_t *o = e->o;
	dmr_breakdown_t *bd = calloc(1, sizeof(*bd));
	dmr_lathist_t **tl = calloc(e->nth ? e->nth : 1, sizeof(*tl));
	dmr_status_t st =
	    bd && tl ? DMR_OK : dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
	for (uint32_t i = 0; st == DMR_OK && i < e->nth; i++)
		tl[i] = e->th[i].tlat;
	if (st == DMR_OK)
		st = dmr_breakdown_collect(bd, dmr_trace_header(e->rd), e->tst, e->first,
					   e->nworkers, o->threads, e->teng.cn, tl, e->nth,
					   res->sim_time_s, !e->threaded, err);
	if (st == DMR_OK) {
		snprintf(bd->backend, sizeof(bd->backend), "%s", o->backend);
		dmr_breakdown_protocol(bd, o->protocol, e->ctx, e->nctx);
		bd->run_p90_us = lat ? dmr_lathist_quantile(lat, 0.90) / 1e6 : 0;
		bd->run_mean_us = lat ? dmr_lathist_mean(lat) / 1e6 : 0;
		/* utilisation over the simulated time of the last event: a run cut
		 * by a failed completion (tend = its time) still served what was
		 * queued before the cut */
		uint64_t tu = !e->threaded && sim_time(e) > tend ? sim_time(e) : tend;
		dmr_breakdown_mns(bd, e->be, tu, !e->threaded);
		dmr_err_t werr;
		if (dmr_breakdown_write(o->out_dir, !res->partial && res->verified, bd, &werr) !=
		    DMR_OK)
			st = dmr_err_set(err, DMR_ERR_WRITE, "%s", werr.msg);
		if (o->published_log) {
			dmr_breakdown_print_published(bd, res, o->published_log, stdout);
			fflush(stdout);
		}
	}
	if (bd)
		dmr_breakdown_fini(bd);
	free(bd);
	free(tl);
	return st;
}

dmr_status_t dmr_replay_run(const dmr_replay_opts_t *o, dmr_replay_result_t *res, dmr_err_t *err)
{
	dmr_lathist_t *lat = NULL, *dlat = NULL;
	engine_t E, *e = &E;
	memset(e, 0, sizeof(E));
	memset(res, 0, sizeof(*res));
	e->o = o;
	e->loop = o->loop;
	e->err = err;
	double w0 = dmr_wall_s();
	dmr_status_t st;
	gsl_rng *rng = NULL;

	if (o->cns == 0 || o->threads == 0 || o->coros == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--cns, --threads and --coros must be >= 1");
	if (o->window_ms != 0 &&
	    !(o->window_ms >= DMR_REPLAY_WINDOW_MS_MIN && o->window_ms <= DMR_REPLAY_WINDOW_MS_MAX))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --window-ms: %g out of range [%g, %g] (1 us to 1 h)",
				   o->window_ms, DMR_REPLAY_WINDOW_MS_MIN,
				   DMR_REPLAY_WINDOW_MS_MAX);
	if (o->duration_s > 0 && o->window_ms > 0 &&
	    o->duration_s * 1e3 / o->window_ms > DMR_REPLAY_TS_MAX_ROWS)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --window-ms %g: --duration %g s needs %.0f time-series "
				   "rows, more than the %u a run keeps: give a larger --window-ms",
				   o->window_ms, o->duration_s,
				   ceil(o->duration_s * 1e3 / o->window_ms),
				   DMR_REPLAY_TS_MAX_ROWS);
	/* SIGINT/SIGTERM from here to the end: caught, and the run ends
	 * partial with exit 130 wherever it arrives (the loop stops; set-up,
	 * loading, verification and the replica check are followed by a look
	 * at the flag). A stop request an outer handler (fidelity, sweep)
	 * caught before this replay began is kept: installing clears the flag */
	dmr_sig_saved_t saved_sig;
	int pending_sig = dmr_sig_caught();
	dmr_sig_install(&saved_sig);
	if (pending_sig)
		dmr_sig_raise_flag(pending_sig);
	dmr_err_t ferr;
	/* the trace first: a refused trace leaves no --out behind (issue #15) */
	st = dmr_trace_open_cached(o->trace, &o->trace_cache, &e->rd, err);
	if (st != DMR_OK)
		return st;
	/* what the trace's end shows, before the run (issue #15 D19) */
	if ((st = dmr_trace_scan(e->rd, err)) != DMR_OK)
		goto out_trace;
	if (dmr_trace_file_txns(e->rd) == 0) {
		/* an empty trace is refused, not reported as a complete run */
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: the trace has no transactions: nothing to replay", o->trace);
		goto out_trace;
	}
	if (dmr_mkdir_p(o->out_dir, DMR_FS_PROBE, &ferr) != DMR_OK) { /* before the run */
		st = dmr_err_set(err, DMR_ERR_IO,
				 "--out %s: cannot create or write in the directory (%s)",
				 o->out_dir, ferr.msg);
		goto out_trace;
	}
	const dmr_trace_hdr_t *h = dmr_trace_header(e->rd);
	e->nworkers = o->cns * o->threads;
	e->coros = o->coros;
	e->deadline_ps = 10 * DMR_PS_PER_S;
	uint64_t mr;
	if (o->protocol == DMR_TXN_PROTO_CREST &&
	    (st = dmr_replay_setup_crest(o->backend, o->crest_locks, o->crest_local, o->crest_cache,
					 o->crest_cache_ttl_ps, h, o->trace, &e->crest, res,
					 err)) != DMR_OK)
		goto out_trace;
	if (o->dm_locks && o->locks_apart) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "options --dm-locks and --locks-apart: give one (--locks-apart "
				 "is --dm-locks's separate layout with the lock words in host "
				 "memory)");
		goto out_trace;
	}
	/* lock words apart: --locks-apart, or --dm-locks where the backend puts
	 * the lock-word region in device memory (verbs); the sim models
	 * --dm-locks with the words in their records */
	e->dm_apart = o->dm_locks && (dmr_be_caps_of(o->backend) & DMR_BE_CAP_DM_APART);
	const char *apart = o->locks_apart ? o->locks_apart : e->dm_apart ? o->dm_locks : NULL;
	dmr_replay_shape_t shape = {.trace = o->trace,
				    .locks_apart = apart,
				    .locks_apart_opt =
					o->locks_apart ? "--locks-apart" : "--dm-locks",
				    .backend = o->backend,
				    .cns = o->cns,
				    .threads = o->threads,
				    .coros = o->coros,
				    .mns = o->mns,
				    .backups = o->backups,
				    .pins = o->pins,
				    .npins = o->npins,
				    .protocol = o->protocol,
				    .cell_words = o->protocol == DMR_TXN_PROTO_CREST &&
							  e->crest.locks == DMR_CREST_LOCKS_WORDS
						      ? e->crest.cells
						      : NULL,
				    .index = o->index,
				    .quiet = o->quiet,
				    .index_buckets = o->index_buckets,
				    .versions = o->versions,
				    .addr_cache = o->addr_cache,
				    .mr_size = o->mr_size};
	st = dmr_replay_setup_layout(&shape, h, e->nworkers, &e->layout, res, &mr, err);
	if (st != DMR_OK)
		goto out_trace;

	dmr_be_config_t cfg = {.backend = o->backend,
			       .fault = o->fault,
			       .mns = e->layout.mns,
			       .cns = o->cns,
			       .workers = o->threads,
			       .mr_size = mr,
			       .seed = o->seed,
			       .profile = o->profile,
			       .device = o->device,
			       .port = o->port,
			       .gid_index = o->gid_index};
	st = dmr_be_open(&cfg, &e->be, err);
	if (st != DMR_OK)
		goto out_trace;
	if (o->mtu) {
		uint32_t mtu = o->mtu;
		st = dmr_be_control(e->be, DMR_BE_CTL_SET_MTU, &mtu, NULL);
		if (st == DMR_ERR_UNSUPPORTED) {
			st = dmr_err_set(err, DMR_ERR_INVALID,
					 "--mtu: only the sim backend takes it (%s "
					 "uses the ports' MTU)",
					 o->backend);
			goto out_be;
		}
		if (st != DMR_OK) {
			dmr_err_set(err, st,
				    "--mtu %u: not an IB MTU (256, 512, 1024, 2048 or 4096)",
				    o->mtu);
			goto out_be;
		}
	}
	if (aura_on(e, DMR_AURA_A1) && !o->aura_levers_given) {
		/* the default levers: a1 where the backend lets the MN CPU's
		 * handlers run beside one-sided transactions, else left out
		 * (verbs on a device whose atomic_cap is not GLOB: rxe) */
		dmr_be_rpc_mode_t md = {.mixed = 1};
		dmr_err_t e2;
		dmr_status_t s2 = dmr_be_control(e->be, DMR_BE_CTL_RPC_MODE, &md, &e2);
		if (s2 != DMR_OK && s2 != DMR_ERR_UNSUPPORTED) {
			e->loop.aura.levers &= ~DMR_AURA_A1;
			fprintf(stderr, "dmreplay run: note: aura: lever a1 left out: %s\n",
				e2.msg);
		}
	}
	if ((st = dmr_replay_setup_tiers(
		 e->be, &e->layout, e->dm_apart ? NULL : o->dm_locks, o->cxl_tables,
		 aura_on(e, DMR_AURA_A1) ? DMR_TXN_RPC_ALT : o->rpc, o->quiet, err)) != DMR_OK)
		goto out_be;
	if (apart && (st = dmr_replay_setup_lock_region(e->be, &e->layout, e->dm_apart, apart,
							o->quiet, err)) != DMR_OK)
		goto out_be;
	/* the model's figures (sim: the CPU charges below, the results' profile
	 * and MTU); a backend without one answers UNSUPPORTED */
	if (dmr_be_control(e->be, DMR_BE_CTL_MODEL, &e->model, NULL) != DMR_OK)
		e->model = NULL;
	e->threaded = !(e->be->ops->caps & DMR_BE_CAP_DRIVEN);
	if (!e->threaded) {
		uint64_t t;
		st = dmr_be_control(e->be, DMR_BE_CTL_SIM_TIME, &t, err);
		if (st != DMR_OK) {
			dmr_err_set(err, st,
				    "backend %s is driven by progress() but does not tell "
				    "its simulated time (%s)",
				    o->backend, dmr_be_ctl_string(DMR_BE_CTL_SIM_TIME));
			goto out_be;
		}
	}
	/* the initial region: written piece by piece as the run reaches it
	 * where the layout and the backend can (sim: the pages a run never
	 * writes cost nothing; docs/MODEL.md "The MN's bytes"), else
	 * written whole now */
	dmr_eng_lazy_init(e);
	e->vread_all = o->verify_read_all;
	for (uint32_t mn = 0; !e->lazy && mn < e->layout.mns; mn++) {
		uint8_t *mem = dmr_be_mn_memory(e->be, mn, NULL);
		if (!mem) {
			st = dmr_err_set(err, DMR_ERR_UNSUPPORTED,
					 "backend %s: the region of MN %u is not local; load it "
					 "with the MN role",
					 o->backend, mn);
			goto out_be;
		}
		dmr_layout_load_mn(&e->layout, mn, mem); /* its tables (layout.h) */
	}
	/* the workload's invariants on the initial state, before the run: a
	 * trace whose tables do not fit its workload is refused now, not after
	 * the run; an unknown workload runs with its locks checked only */
	{
		dmr_verify_result_t v0;
		dmr_err_t verr;
		dmr_status_t vst = dmr_eng_verify(e, h, 0, &v0, &verr);
		if (vst == DMR_ERR_UNSUPPORTED) {
			e->no_invariants = 1;
			fprintf(stderr,
				"dmreplay run: note: %s: %s; only lock release is checked\n",
				o->trace, verr.msg);
		} else if (vst != DMR_OK) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", o->trace, verr.msg);
			goto out_be;
		} else if (!v0.ok) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: the initial state already breaks the workload's "
					 "invariants: %s",
					 o->trace, v0.first_failure);
			goto out_be;
		}
	}
	/* the core's engine: where this process sits in the cluster
	 * (DMR_BE_CTL_ROLE) names its lock tags and log rings */
	st = dmr_txn_engine_init(&e->teng, e->be, &e->layout, o->retries,
				 dmr_ps_from_us(o->backoff_us), err);
	if (st != DMR_OK)
		goto out_be;
	e->teng.source = o->trace; /* trace errors name FILE:LINE of the op */
	e->teng.protocol = o->protocol;
	if (o->protocol == DMR_TXN_PROTO_CREST) {
		e->teng.crest = &e->crest;
		e->layout.lock_busy = DMR_CREST_LOCK_BITS;
		/* CREST's localized execution: a table per CN */
		if ((o->crest_local &&
		     (st = dmr_crest_local_alloc(&e->crest, o->cns, err)) != DMR_OK) ||
		    (o->crest_cache &&
		     (st = dmr_crest_cache_alloc(&e->crest, o->cns, &e->layout, err)) != DMR_OK))
			goto out_be;
	}
	res->ntables = h->ntables;
	for (uint32_t t = 0; t < h->ntables; t++)
		snprintf(res->table_names[t], DMR_TRACE_NAME_MAX, "%s", h->tables[t].name);
	e->teng.isolation = o->isolation;
	e->teng.rpc = o->rpc;
	e->teng.index = o->index;
	e->teng.workers_per_cn = o->threads;
	/* --cn-cache (issue 14 A3); aura's A3: every table may be switched on,
	 * none is at the start */
	if ((st = dmr_replay_setup_cncache(&e->teng, aura_on(e, DMR_AURA_A3) ? "all" : o->cn_cache,
					   o->cn_cache_entries, o->cns, e->threaded, h, res,
					   err)) != DMR_OK)
		goto out_be;
	if (aura_on(e, DMR_AURA_A3)) {
		dmr_txn_cncache_set_tables(&e->teng, 0);
		snprintf(res->cn_cache, sizeof(res->cn_cache), "aura");
	}
	if (o->addr_cache) {
		e->acache = calloc(o->cns, sizeof(*e->acache));
		if (!e->acache) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
			goto out_be;
		}
		for (uint32_t k = 0; k < o->cns; k++)
			if ((st = dmr_acache_create(o->addr_cache, &e->acache[k], err)) != DMR_OK)
				goto out_be;
		e->teng.acache = e->acache;
	}
	e->nctx = e->nworkers * o->coros;
	e->acc = calloc(e->nctx, sizeof(*e->acc));
	e->ctx = calloc(e->nctx, sizeof(*e->ctx));
	e->cur = calloc(e->nctx, sizeof(*e->cur));
	e->ctype = calloc(e->nctx, sizeof(*e->ctype));
	e->q = calloc(e->nworkers, sizeof(*e->q));
	e->qcopy_max = o->readahead_copy_max ? o->readahead_copy_max : DMR_READAHEAD_COPY_MAX;
	e->qcopy_max_txns =
	    o->readahead_copy_txns ? o->readahead_copy_txns : DMR_READAHEAD_COPY_TXNS;
	e->scratch = malloc(sizeof(*e->scratch));
	e->wst = calloc(e->nworkers, sizeof(*e->wst));
	e->xst = calloc(e->nworkers, sizeof(*e->xst));
	e->pub = calloc(e->nworkers, sizeof(*e->pub));
	e->ntypes = h->ntypes ? h->ntypes : 1;
	e->tst = calloc((size_t)e->nworkers * e->ntypes, sizeof(*e->tst));
	e->first = calloc((size_t)e->nworkers * e->ntypes, sizeof(*e->first));
	if (e->threaded)
		pthread_mutex_init(&e->mu, NULL);
	e->nth = e->threaded ? e->nworkers : 1;
	e->th = calloc(e->nth, sizeof(*e->th));
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	for (uint32_t i = 0; e->th && i < e->nth; i++)
		if (thr_init(&e->th[i], e, i) != DMR_OK)
			e->nth = i; /* partial: caught below */
	if (!e->ctx || !e->cur || !e->ctype || !e->q || !e->scratch || !e->wst || !e->xst ||
	    !e->pub || !e->tst || !e->first || !e->acc || !e->th ||
	    e->nth != (e->threaded ? e->nworkers : 1) || !rng) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
		goto out_ctx;
	}
	gsl_rng_set(rng, o->seed);
	for (uint32_t i = 0; i < e->nctx; i++) {
		st = dmr_txn_ctx_init(&e->ctx[i], &e->teng, &e->wst[i / o->coros], i / o->coros, i,
				      err);
		if (st != DMR_OK)
			goto out_ctx;
		e->ctx[i].xstats = &e->xst[i / o->coros];
	}
	if (o->loop.loops) {
		dmr_loop_cfg_t lc = e->loop;
		if ((lc.loops & DMR_LOOP_AURA) && !lc.aura.groups) {
			/* record groups: the trace's warehouses (TPC-C), else 64 */
			const char *wh = dmr_trace_hdr_param(h, "warehouses");
			char *end = NULL;
			long v = wh ? strtol(wh, &end, 10) : 0;
			int ok =
			    wh && end != wh && !*end && v > 0 && v <= (long)DMR_AURA_MAX_GROUPS;
			lc.aura.groups = ok ? (uint32_t)v : 64;
			if (wh && !ok)
				fprintf(
				    stderr,
				    "dmreplay run: note: aura: the trace's warehouses parameter "
				    "'%s' is not 1..%u: 64 record groups (--aura-groups N sets "
				    "them)\n",
				    wh, DMR_AURA_MAX_GROUPS);
			e->loop.aura.groups = lc.aura.groups;
		}
		st = dmr_adm_create(&lc, &e->layout, e->nworkers, o->threads, o->coros, &e->adm,
				    err);
		if (st == DMR_OK && (e->aura = dmr_adm_aura(e->adm)) &&
		    (lc.aura.levers & DMR_AURA_A2)) {
			uint32_t ncn = (e->nworkers + o->threads - 1) / o->threads;
			e->inbox = calloc(ncn, sizeof(*e->inbox));
			e->inbox_len = calloc(ncn, sizeof(*e->inbox_len));
			e->parked = calloc(e->nctx, sizeof(*e->parked));
			e->unparked = calloc(e->nctx, sizeof(*e->unparked));
			e->is_parked = calloc(e->nctx, sizeof(*e->is_parked));
			if (!e->inbox || !e->inbox_len || !e->parked || !e->unparked ||
			    !e->is_parked)
				st = dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
		}
		if (st == DMR_OK && (o->loop.loops & DMR_LOOP_DOORBELL))
			st = dmr_doorbell_create(&o->loop, e->be, e->nworkers, o->threads,
						 e->layout.mns,
						 e->model ? e->model->post_doorbell_ps : 0,
						 !e->threaded, &e->teng.doorbell, err);
		if (st != DMR_OK)
			goto out_ctx;
	}
	{
		dmr_replay_drift_t dr;
		if ((st = dmr_replay_setup_drift(h, o->trace, &dr, err)) != DMR_OK)
			goto out_ctx;
		e->drift_ps = dr.ps;
		e->drift_shift = dr.shift;
		e->parts = dr.parts;
		e->part_mask = dr.part_mask;
	}
	e->limit = o->txns ? o->txns : UINT64_MAX;
	/* the cache's records queued as they are (engine.h qrec) */
	e->qrec = !e->threaded && !e->inbox && !o->readahead_decoded && dmr_trace_is_bin(e->rd);
	uint64_t window_ps = dmr_ps_from_ms(o->window_ms);
	dmr_ts_init(&e->ts, window_ps ? window_ps : 100 * DMR_PS_PER_MS);
	e->ts.s.max_rows = DMR_REPLAY_TS_MAX_ROWS;
	e->ts.drift_ps = e->drift_ps;
	e->ts.doorbell = e->teng.doorbell != NULL;
	e->ts.aura = e->aura != NULL;
	if (e->adm && (o->loop.loops & DMR_LOOP_SLOTS)) {
		st = dmr_ts_cn_slots(&e->ts, dmr_adm_ncn(e->adm));
		if (st != DMR_OK) {
			dmr_err_set(err, st, "replay: out of memory (time series)");
			goto out_ctx;
		}
		for (uint32_t k = 0; k < e->ts.ncn; k++)
			e->ts.cn_slots[k] = dmr_adm_cn_slots(e->adm, k);
	}

	/* --duration: no transaction starts after it (run time, ps) */
	e->until = o->duration_s > 0 ? dmr_ps_from_s(o->duration_s) : UINT64_MAX;
	{
		/* the progress line: transactions started of those the run will
		 * start (unknown with --duration) */
		uint64_t total = dmr_trace_file_txns(e->rd);
		if (total == UINT64_MAX || o->duration_s > 0)
			total = 0;
		if (total > e->limit)
			total = e->limit;
		dmr_progress_init(&e->prog,
				  o->quiet	? DMR_PROGRESS_OFF
				  : o->progress ? DMR_PROGRESS_ON
						: DMR_PROGRESS_AUTO,
				  "run", "txns", total);
	}
	/* set up: from here on the run writes its results (partial when it
	 * fails); the caller's last word before that (run: an earlier run's
	 * files are moved aside now, not before a refusal) */
	if (o->on_start && (st = o->on_start(o->on_start_arg, err)) != DMR_OK)
		goto out_ctx;
	double loop0 = dmr_wall_s();
	uint64_t tend;
	int64_t start_sum; /* START carries no value */
	if (!e->threaded) {
		st = engine_barrier(e, DMR_BE_BARRIER_START, o->barrier_s, 0, 0, &start_sum, err);
		/* each context wakes at a seeded random offset within 1 us
		 * (threads never start on the same picosecond) */
		for (uint32_t i = 0; i < e->nctx && st == DMR_OK; i++)
			st =
			    dmr_be_timer(e->be, e->ctx[i].worker, gsl_rng_uniform_int(rng, 1000000),
					 dmr_wrid(DMR_WRID_WAKE, i, 0));
		if (st == DMR_OK)
			st = drive_sim(e, &e->th[0]);
		tend = e->t_fail ? e->t_fail : sim_time(e);
	} else {
		/* run time starts now, not at backend open: loading the MN
		 * region, checking its initial state, parsing the trace (up to
		 * DMR_PRELOAD_BYTES of it) and waiting for the other CNs at the
		 * START barrier are not the run */
		uint64_t npre = 0;
		st = dmr_eng_preload(e, &npre);
		res->preloaded = npre;
		if (st == DMR_OK)
			st = engine_barrier(e, DMR_BE_BARRIER_START, o->barrier_s, 0, 0, &start_sum,
					    err);
		e->t0 = dmr_be_now(e->be, 0);
		if (e->until != UINT64_MAX)
			e->until += e->t0;
		if (st == DMR_OK)
			st = drive_threaded(e);
		tend = dmr_be_now(e->be, 0) - e->t0;
	}
	if (st != DMR_OK) {
		for (uint32_t i = 0; i < e->nth; i++)
			if (e->th[i].err.msg[0]) {
				dmr_err_set(err, st, "%s", e->th[i].err.msg);
				break;
			}
	}
	dmr_progress_end(&e->prog, e->started);
	res->loop_wall_s = dmr_wall_s() - loop0;
	res->trace_wall_s = e->trace_wall;
	res->partial = st != DMR_OK;
	{
		sum_stats(e, &res->st);
		for (uint32_t w = 0; w < e->nworkers; w++) {
			const uint64_t *a = (const uint64_t *)(const void *)&e->xst[w];
			uint64_t *b = (uint64_t *)(void *)&res->xst;
			for (size_t k = 0; k < sizeof(res->xst) / 8; k++)
				b[k] += a[k];
		}
		memset(&res->mv, 0, sizeof(res->mv));
		for (uint32_t i = 0; i < e->nctx; i++) /* motor's, per context and type */
			for (uint32_t t = 0; e->ctx[i].mv && t < DMR_TRACE_MAX_TYPES; t++)
				dmr_txn_mv_add(&res->mv, &e->ctx[i].mv[t]);
		e->ts.phase = e->drift_ps ? tend / e->drift_ps : 0;
		if (e->adm && !e->threaded)
			/* the last window's own loop signal and actuator, not the
			 * previous window's (D9) */
			dmr_ts_loop_sample(&e->ts, e->adm, e->teng.doorbell, tend);
		dmr_ts_finish(&e->ts, tend, &res->st);
		res->sim_time_s = dmr_ps_to_s(tend);
		res->readahead_packed = e->qpacked;
		res->readahead_records = e->qrecs;
	}
	/* latencies of all driving threads, merged into one histogram */
	lat = malloc(sizeof(*lat));
	dlat = malloc(sizeof(*dlat));
	if (!lat || !dlat) {
		free(lat);
		free(dlat);
		lat = dlat = NULL;
		if (st == DMR_OK) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
			res->partial = 1;
		}
	}
	if (lat) {
		dmr_lathist_init(lat);
		dmr_lathist_init(dlat);
		for (uint32_t i = 0; i < e->nth; i++) {
			if (e->th[i].lat)
				dmr_lathist_merge(lat, e->th[i].lat);
			if (e->th[i].dlat)
				dmr_lathist_merge(dlat, e->th[i].dlat);
		}
	}
	dmr_txn_stats_t tot = res->st;
	/* END barrier: every participant has ended (a failed run tells the
	 * others and waits for nobody); the committed delta the verifier checks
	 * is the sum over them (single process: its own), and the MN region is
	 * then the final state */
	{
		int64_t xv_sum = 0;
		dmr_err_t berr;
		dmr_status_t bst = engine_barrier(e, DMR_BE_BARRIER_END, o->end_s, st != DMR_OK,
						  tot.committed_xv, &xv_sum, &berr);
		if (bst != DMR_OK && st == DMR_OK) {
			st = dmr_err_set(err, bst, "%s", berr.msg);
			res->partial = 1;
		}
		if (st == DMR_OK)
			tot.committed_xv = xv_sum;
	}
	dmr_be_stats(e->be, &res->be);
	if (e->adm)
		dmr_adm_summary(e->adm, &res->slots);
	if (e->aura)
		dmr_aura_summary(e->aura, &res->aura);
	{
		/* CN balance: (max - mean) / mean of the commits per CN */
		uint32_t ncn = (e->nworkers + o->threads - 1) / o->threads;
		double mx = 0, sum = 0;
		for (uint32_t k = 0; k < ncn; k++) {
			double c = 0;
			for (uint32_t w = k * o->threads;
			     w < (k + 1) * o->threads && w < e->nworkers; w++)
				c += (double)e->wst[w].committed;
			sum += c;
			mx = c > mx ? c : mx;
		}
		res->cn_imbalance = sum > 0 ? (mx - sum / ncn) / (sum / ncn) : 0;
	}
	if (e->teng.doorbell)
		dmr_doorbell_summary(e->teng.doorbell, &res->doorbell);
	const dmr_model_t *m = e->model;
	if (o->locks_apart)
		snprintf(e->dm_knob, sizeof(e->dm_knob), "apart:%s", o->locks_apart);
	dmr_replay_run_knobs_t kn = {e->loop,	       o->seed,
				     o->retries,       o->backoff_us,
				     o->duration_s,    o->isolation,
				     e->layout.vcells, o->locks_apart ? e->dm_knob : o->dm_locks,
				     o->cxl_tables,    o->rpc};
	dmr_replay_result_shape(res, &shape, &kn, h, m, e->started);
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
	if (lat && lat->n) {
		/* within 1/256 of the exact quantiles (lathist.h) */
		res->p50_us = dmr_lathist_quantile(lat, 0.50) / 1e6;
		res->p99_us = dmr_lathist_quantile(lat, 0.99) / 1e6;
		res->p999_us = dmr_lathist_quantile(lat, 0.999) / 1e6;
		res->p50_dispatch_us = dmr_lathist_quantile(dlat, 0.50) / 1e6;
		res->p99_dispatch_us = dmr_lathist_quantile(dlat, 0.99) / 1e6;
		res->p999_dispatch_us = dmr_lathist_quantile(dlat, 0.999) / 1e6;
	}
	if (st == DMR_OK) {
		/* every lock taken was released: counted, and in flight none */
		dmr_status_t vst = DMR_OK;
		if (e->no_invariants) {
			res->verify.ok = 1;
			snprintf(res->verify.summary, sizeof(res->verify.summary),
				 "no invariants known for workload '%s': locks only", h->workload);
		} else {
			vst = dmr_eng_verify(e, h, tot.committed_xv, &res->verify, err);
		}
		if (vst != DMR_OK) {
			st = vst;
			res->partial = 1;
		} else {
			res->verified = res->verify.ok && tot.locks_taken == tot.locks_released;
			if (res->verified && e->no_invariants)
				res->verified = -1; /* n/a: nothing but the locks was checked */
			if (tot.locks_taken != tot.locks_released)
				snprintf(res->verify.first_failure,
					 sizeof(res->verify.first_failure),
					 "locks taken %llu != released %llu",
					 (unsigned long long)tot.locks_taken,
					 (unsigned long long)tot.locks_released);
		}
		/* replicas byte-identical, every lock word idle on every MN
		 * (core/replica.h); regions that are not local: not checked */
		dmr_err_t rerr;
		if (vst == DMR_OK &&
		    (e->layout.mns > 1 || e->layout.backups > 0 || e->layout.lk_bytes ||
		     o->protocol == DMR_TXN_PROTO_CREST) &&
		    (e->lazy ? dmr_replica_verify_lazy(&e->layout, e->be, &res->replicas, &rerr)
			     : dmr_replica_verify_be(&e->layout, e->be, &res->replicas, &rerr)) ==
			DMR_OK &&
		    !res->replicas.ok) {
			if (res->verified)
				snprintf(res->verify.first_failure,
					 sizeof(res->verify.first_failure), "%s",
					 res->replicas.first_failure);
			res->verified = 0;
		}
	}
	if (st == DMR_OK && dmr_sig_caught()) {
		/* a stop after the loop (verification, the replica check):
		 * nothing is reported as complete */
		st = dmr_err_set(
		    err, DMR_ERR_INTERRUPTED,
		    "interrupted by signal %d outside the replay loop (set-up, loading or "
		    "verification): "
		    "results partial",
		    dmr_sig_caught());
		res->partial = 1;
	}
	res->wall_s = dmr_wall_s() - w0;
	snprintf(res->status, sizeof(res->status), "%s",
		 res->partial ? "partial" : (res->verified ? "complete" : "failed"));
	if (dmr_mkdir_p(o->out_dir, DMR_FS_PROBE, &ferr) != DMR_OK) {
		if (st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_IO, "%s: cannot create: %s", o->out_dir,
					 ferr.msg);
	} else {
		dmr_err_t werr;
		int final = !res->partial && res->verified;
		if (dmr_results_write(o->out_dir, final, res, o->trace, &e->ts, &werr) != DMR_OK &&
		    st == DMR_OK) /* the run failed (disk full), not its input: exit 1 */
			st = dmr_err_set(err, DMR_ERR_WRITE, "%s", werr.msg);
	}
	{
		/* per type, per CN, per MN (breakdown.h): beside summary.csv,
		 * final or partial as it is */
		dmr_err_t berr;
		dmr_status_t bst = write_breakdown(e, res, lat, tend, &berr);
		if (bst != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, bst, "%s", berr.msg);
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
			dmr_eng_wq_fini(e, &e->q[w2]);
	if (e->inbox)
		for (uint32_t k = 0; k * e->o->threads < e->nworkers; k++)
			dmr_eng_wq_fini(e, &e->inbox[k]);
	dmr_eng_qtxn_fini(e);
	dmr_txnq_pool_fini(&e->qpool);
	free(e->inbox);
	free(e->inbox_len);
	free(e->parked);
	free(e->unparked);
	free(e->is_parked);
	free(e->ctx);
	free(e->cur);
	free(e->ctype);
	free(e->q);
	free(e->scratch);
	free(e->wst);
	free(e->xst);
	free(e->pub);
	free(e->tst);
	free(e->first);
	free(e->acc);
	if (e->th)
		for (uint32_t i = 0; i < e->nth; i++)
			thr_fini(&e->th[i]);
	free(e->th);
	free(lat);
	free(dlat);
	if (e->threaded)
		pthread_mutex_destroy(&e->mu);
	dmr_adm_destroy(e->adm);
	dmr_doorbell_destroy(e->teng.doorbell);
	dmr_ts_fini(&e->ts);
	if (rng)
		gsl_rng_free(rng);
out_be:
	for (uint32_t k = 0; e->acache && k < o->cns; k++)
		dmr_acache_destroy(e->acache[k]);
	dmr_crest_free(&e->crest, o->cns);
	dmr_replay_cncache_free(&e->teng, o->cns);
	free(e->acache);
	dmr_eng_mnread_fini(e);
	dmr_be_close(e->be);
out_trace:
	dmr_trace_close(e->rd);
	dmr_sig_restore(&saved_sig);
	return st;
}
