/*
 * replay/kv/sim.c - the KV replay on a DRIVEN backend (sim): one event
 * loop over the backend's workers, simulated picoseconds.
 *
 * A request goes to client (index mod clients): arrival -> master lookup in
 * the pool (core/kv/pool.h; its answer is a timer of rpc_ps on the client)
 * -> READ every block already in the pool (a block still being written by
 * an earlier request is read when that put completes) -> WRITE the new
 * blocks -> done. Transfers: core/kv/xfer.h. Arrivals open loop (timers at
 * the trace's times x time_scale) or closed loop (`outstanding` in
 * flight). This file and roles.c are the only ones that reach below
 * backend.h (the sim's model, MTU, payload and clock).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/model.h"
#include "../../core/base/sig.h"
#include "kv_impl.h"

dmr_status_t kv_sim_open(const dmr_be_config_t *cfg, uint32_t mtu, int folded, const char *what,
			 dmr_be_t **be_p, const dmr_model_t **m_p, dmr_err_t *err)
{
	dmr_status_t st = dmr_be_open(cfg, be_p, err);
	if (st != DMR_OK)
		return st;
	dmr_be_t *be = *be_p;
	if (!(be->ops->caps & DMR_BE_CAP_DRIVEN))
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "backend %s: %s runs on DRIVEN backends (sim) only so far",
				   cfg->backend, what);
	if (mtu && (st = dmr_be_control(be, DMR_BE_CTL_SET_MTU, &mtu, NULL)) != DMR_OK) {
		if (st == DMR_ERR_UNSUPPORTED)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--mtu: backend %s does not model an MTU", cfg->backend);
		return dmr_err_set(err, st,
				   "--mtu %u: not an IB MTU (256, 512, 1024, 2048 or 4096)", mtu);
	}
	int payload = 0;
	/* block contents are not kept: time the transfers only (a backend
	 * that always moves bytes, UNSUPPORTED, times them the same) */
	if (folded && (st = dmr_be_control(be, DMR_BE_CTL_SET_PAYLOAD, &payload, err)) != DMR_OK &&
	    st != DMR_ERR_UNSUPPORTED)
		return st;
	const dmr_model_t *m = NULL; /* set only on DMR_OK (UNSUPPORTED: no model) */
	(void)dmr_be_control(be, DMR_BE_CTL_MODEL, &m, NULL);
	*m_p = m;
	return DMR_OK;
}

/* Global simulated time, ps (DRIVEN backends answer DMR_BE_CTL_SIM_TIME;
 * 0 from one that does not). */
static dmr_time_ps_t sim_time(const kv_t *k)
{
	uint64_t t = 0;
	(void)dmr_be_control(k->be, DMR_BE_CTL_SIM_TIME, &t, NULL);
	return t;
}

/* The counters (and, with Loop X, gauges g) of the time series now. */
static void sim_sample(kv_t *k, double *g)
{
	kv_take_pool(k);
	k->cnt[KV_WIRE_TO] = k->X.wire_to;
	k->cnt[KV_WIRE_FROM] = k->X.wire_from;
	kv_pf_sample(k, g);
}

/* Schedule the read-ahead request's arrival (open loop). */
static dmr_status_t schedule_ahead(kv_t *k)
{
	if (!k->have_ahead)
		return DMR_OK;
	uint32_t c = (uint32_t)(k->ahead.index % k->nclients);
	dmr_status_t st = dmr_be_timer(k->be, c, kv_arrival_ps(k, k->ahead.t_us),
				       dmr_wrid_n(DMR_WRID_KV_ARRIVE, 0));
	if (st != DMR_OK)
		return dmr_err_set(k->err, st, "kv: timer failed");
	return DMR_OK;
}

/* Start the read-ahead request at time t: master lookup, then the RPC. */
static dmr_status_t start_request(kv_t *k, dmr_time_ps_t t)
{
	const dmr_kv_req_t *q = &k->ahead;
	uint32_t ri = dmr_kv_pool_rq_new(&k->pool, q->nblocks);
	if (ri == NOIDX)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
	dmr_kv_preq_t *r = &k->pool.rq[ri];
	r->index = q->index;
	r->t_arr = t;
	r->client = (uint32_t)(q->index % k->nclients);
	k->have_ahead = 0; /* consumed (q stays valid until the next read) */
	if (!k->have_first) {
		k->have_first = 1;
		k->t_first = t;
	}
	k->inflight++;
	k->cnt[KV_ARRIVALS]++;
	/* the master: lookups in block order */
	for (uint32_t b = 0; b < q->nblocks; b++) {
		dmr_kv_hit_t hk;
		dmr_status_t st =
		    dmr_kv_pool_lookup(&k->pool, q->blocks[b], &hk, &r->ent[b], k->err);
		if (st != DMR_OK)
			return st;
		r->put[b] = hk != DMR_KV_HIT;
	}
	if (k->pf && dmr_kv_pf_learn(k->pf, q->blocks, q->nblocks) != 0)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (prefetch chains)");
	dmr_status_t st =
	    dmr_be_timer(k->be, r->client, t + k->rpc_ps, dmr_wrid_n(DMR_WRID_KV_RPC, ri));
	if (st != DMR_OK)
		return dmr_err_set(k->err, st, "kv: timer failed");
	return DMR_OK;
}

/* Queue the transfers of request ri: its puts (WRITE; dropped ones have no
 * entry) or its hits (READ; a hit whose put has not finished waits for it
 * on the entry's waiter list); *n_p = how many. */
static dmr_status_t queue_blocks(kv_t *k, uint32_t ri, int puts, uint32_t *n_p)
{
	uint32_t n = 0;
	for (uint32_t b = 0; b < k->pool.rq[ri].nblocks; b++) {
		const dmr_kv_preq_t *r = &k->pool.rq[ri];
		if (r->put[b] != puts || (puts && r->ent[b] == NOIDX))
			continue;
		if (!puts && kv_pf_serve(k, ri, b))
			continue; /* Loop X: this client prefetched it */
		uint32_t xi = dmr_kv_xeng_alloc(&k->X);
		if (xi == NOIDX)
			return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
		dmr_kv_xfer_t *x = &k->X.x[xi];
		dmr_kv_pentry_t *e = &k->pool.e[r->ent[b]];
		x->entry = r->ent[b];
		x->logical = e->off;
		x->len = k->block;
		x->opcode = puts ? DMR_WR_WRITE : DMR_WR_READ;
		x->owner = ri;
		x->client = r->client;
		if (puts || e->state == DMR_KV_E_READY) {
			dmr_kv_xeng_enqueue(&k->X, xi);
		} else {
			x->next = e->waiters;
			e->waiters = xi;
			k->waited++;
		}
		n++;
	}
	*n_p = n;
	return DMR_OK;
}

static dmr_status_t finish_request(kv_t *k, uint32_t ri, dmr_time_ps_t now);

/* Start request ri's gets (puts 0: after the master's answer) or puts (1:
 * after the gets); with none, go on at once. */
static dmr_status_t start_xfers(kv_t *k, uint32_t ri, int puts, dmr_time_ps_t now)
{
	uint32_t n = 0; /* gcc -fsanitize=thread: maybe-uninitialized */
	dmr_status_t st = queue_blocks(k, ri, puts, &n);
	if (st != DMR_OK)
		return st;
	*(puts ? &k->pool.rq[ri].puts_left : &k->pool.rq[ri].gets_left) = n;
	if (n == 0)
		return puts ? finish_request(k, ri, now) : start_xfers(k, ri, 1, now);
	return dmr_kv_xeng_pump(&k->X, k->pool.rq[ri].client);
}

/* The master's answer arrived: READ the hits (or wait for their put);
 * Loop X: then the prefetches it predicts (queued behind the gets). */
static dmr_status_t on_rpc(kv_t *k, uint32_t ri, dmr_time_ps_t now)
{
	if (ri >= k->pool.caprq || !k->pool.rq[ri].ent)
		return dmr_err_set(k->err, DMR_ERR_INVALID, "kv: RPC for unknown request %u", ri);
	uint64_t last = 0;
	const dmr_kv_preq_t *r = &k->pool.rq[ri];
	uint32_t c = r->client;
	int pf = k->pf && r->nblocks && r->ent[r->nblocks - 1] != NOIDX; /* stored last block */
	if (pf)
		last = k->pool.e[r->ent[r->nblocks - 1]].id;
	dmr_status_t st = start_xfers(k, ri, 0, now); /* may finish and free ri */
	if (st == DMR_OK && pf)
		st = kv_pf_after_rpc(k, c, last);
	return st;
}

static dmr_status_t finish_request(kv_t *k, uint32_t ri, dmr_time_ps_t now)
{
	if (kv_lat_push(&k->lat, dmr_ps_to_us(now - k->pool.rq[ri].t_arr)) != 0)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (latencies)");
	k->t_last = max64(k->t_last, now);
	k->cnt[KV_COMPLETED]++;
	k->inflight--;
	dmr_kv_pool_rq_free(&k->pool, ri);
	if (k->o->outstanding) { /* closed loop: the next request starts now */
		dmr_status_t st = kv_read_next(k);
		if (st == DMR_OK && k->have_ahead)
			st = start_request(k, now);
		return st;
	}
	return DMR_OK;
}

static dmr_status_t on_xfer_done(kv_t *k, uint32_t xi, dmr_time_ps_t now)
{
	dmr_kv_xfer_t x = k->X.x[xi];
	dmr_kv_xeng_free(&k->X, xi);
	if (x.owner == KV_PF_OWNER) {
		kv_pf_done(k, &x);
		return DMR_OK;
	}
	dmr_kv_pool_release(&k->pool, x.entry, x.opcode == DMR_WR_WRITE);
	dmr_kv_preq_t *r = &k->pool.rq[x.owner];
	if (x.opcode == DMR_WR_READ) {
		k->cnt[KV_BYTES_GOT] += x.len;
		if (--r->gets_left == 0)
			return start_xfers(k, x.owner, 1, now);
		return DMR_OK;
	}
	k->cnt[KV_BYTES_PUT] += x.len;
	/* wake the READs that waited for this block */
	dmr_kv_pentry_t *e = &k->pool.e[x.entry];
	uint32_t w = e->waiters;
	e->waiters = NOIDX;
	while (w != NOIDX) {
		uint32_t nx = k->X.x[w].next;
		uint32_t c = k->X.x[w].client;
		dmr_kv_xeng_enqueue(&k->X, w);
		dmr_status_t st = dmr_kv_xeng_pump(&k->X, c);
		if (st != DMR_OK)
			return st;
		w = nx;
	}
	if (--r->puts_left == 0)
		return finish_request(k, x.owner, now);
	return DMR_OK;
}

/* One completion of worker w at `now`. */
static dmr_status_t on_wc(kv_t *k, uint32_t w, const dmr_wc_t *wc, dmr_time_ps_t now)
{
	switch (dmr_wrid_kind(wc->wr_id)) {
	case DMR_WRID_KV_SLICE: {
		uint32_t xi;
		dmr_status_t st = dmr_kv_xeng_on_wc(&k->X, w, wc, &xi);
		if (st == DMR_OK && xi != NOIDX)
			st = on_xfer_done(k, xi, now);
		return st;
	}
	case DMR_WRID_KV_ARRIVE: {
		if (!k->have_ahead)
			return dmr_err_set(k->err, DMR_ERR_INVALID,
					   "kv: arrival without a request");
		dmr_status_t st = start_request(k, kv_arrival_ps(k, k->ahead.t_us));
		if (st == DMR_OK)
			st = kv_read_next(k);
		if (st == DMR_OK)
			st = schedule_ahead(k);
		return st;
	}
	case DMR_WRID_KV_RPC:
		return on_rpc(k, (uint32_t)dmr_wrid_get_n(wc->wr_id), now);
	default:
		return dmr_err_set(k->err, DMR_ERR_INVALID, "kv: unexpected completion %#" PRIx64,
				   wc->wr_id);
	}
}

/* After a failed completion: the completions still due are taken, not
 * handled, and counted (failed, flushed), not listed; bounded (nothing is
 * posted any more). Called after the results are written: they keep the
 * time of the failure. */
static void kv_drain_failed(kv_t *k)
{
	dmr_wc_t wcs[64];
	uint64_t taken = 0, failed = 0, flushed = 0;
	int w;
	while (taken < 10000000u && (w = dmr_be_progress(k->be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(k->be, (uint32_t)w, wcs, 64);
		for (int i = 0; i < n; i++) {
			failed += wcs[i].status != DMR_WC_SUCCESS;
			flushed += wcs[i].status == DMR_WC_FLUSH_ERR;
		}
		taken += n > 0 ? (uint64_t)n : 1;
	}
	size_t l = strlen(k->err->msg);
	if (failed)
		snprintf(k->err->msg + l, sizeof(k->err->msg) - l,
			 "; after it %llu more completions failed, %llu of them flushed (counted, "
			 "not listed)",
			 (unsigned long long)failed, (unsigned long long)flushed);
}

dmr_status_t kv_check_drained(const kv_t *k)
{
	if (k->inflight || k->X.live || k->have_ahead)
		return dmr_err_set(k->err, DMR_ERR_REMOTE,
				   "kv: the run stalled with %u requests and %u transfers in "
				   "flight and no event left (completions lost): the run failed",
				   k->inflight, k->X.live);
	return DMR_OK;
}

/* The event loop: until no event is left. */
static dmr_status_t kv_loop(kv_t *k)
{
	dmr_status_t st = DMR_OK;
	dmr_wc_t wcs[64];
	int w;
	while ((w = dmr_be_progress(k->be, UINT64_MAX)) >= 0) {
		dmr_kv_xeng_sync(&k->X); /* what the backend refilled (streams) */
		if (dmr_sig_caught())
			return dmr_err_set(k->err, DMR_ERR_INTERRUPTED,
					   "interrupted by signal %d: results so far are partial",
					   dmr_sig_caught());
		if (k->ts.overflow)
			return kv_ts_overflow(k);
		int n = dmr_be_poll(k->be, (uint32_t)w, wcs, 64);
		dmr_progress_update(&k->prog, k->cnt[KV_COMPLETED]);
		/* global time stands still while the completions are handled
		 * (posts advance the worker's clock only): read it once */
		const dmr_time_ps_t t = n > 0 ? sim_time(k) : 0;
		for (int i = 0; i < n && st == DMR_OK; i++) {
			dmr_time_ps_t now = dmr_be_now(k->be, (uint32_t)w);
			if (k->pf) /* Loop X's windows; a call per completion without */
				kv_pf_tick(k, t);
			if (dmr_tseries_due(&k->ts, t)) {
				double g[KV_NGAUGE];
				sim_sample(k, g);
				dmr_tseries_advance(&k->ts, t, k->cnt, k->pf ? g : NULL);
				dmr_kv_xeng_until(&k->X, k->ts.next_end);
			}
			st = on_wc(k, (uint32_t)w, &wcs[i], now);
		}
		if (st == DMR_OK)
			st = dmr_kv_xeng_pump(&k->X, (uint32_t)w);
		if (st != DMR_OK)
			return st;
	}
	dmr_kv_xeng_sync(&k->X);
	if ((st = kv_check_drained(k)) != DMR_OK)
		return st;
	uint64_t pinned, segused;
	const dmr_kv_pool_t *p = &k->pool;
	if (!dmr_kv_pool_consistent(p, &pinned, &segused))
		return dmr_err_set(k->err, DMR_ERR_VERIFY,
				   "kv: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
				   " slots used by segments, %" PRIu64 " used, %" PRIu64
				   " mapped, peak %" PRIu64 " (high water %" PRIu64 ")",
				   pinned, segused, p->used, p->mapn, p->max_used, p->hw_slots);
	return DMR_OK;
}

/* Set the run up: the pool, the backend, the transfers; *m_p the model. */
static dmr_status_t sim_setup(kv_t *k, const dmr_model_t **m_p)
{
	const dmr_kv_opts_t *o = k->o;
	uint64_t logical = 0, region = 0, maxwr;
	int folded = 0;
	k->block = dmr_kv_trace_header(k->rd)->block_bytes;
	k->nclients = o->cns * o->clients;
	dmr_status_t st = kv_maxwr(k, &maxwr);
	if (st == DMR_OK)
		st = kv_pool_setup(k, &logical);
	if (st != DMR_OK)
		return st;
	dmr_kv_plan_region(logical, o->sim_region, maxwr, &region, &folded);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = o->clients,
			       .mr_size = region,
			       .seed = 1,
			       .profile = o->profile};
	if ((st = kv_sim_open(&cfg, o->mtu, folded, "the KV workload", &k->be, m_p, k->err)) !=
	    DMR_OK)
		return st;
	st = dmr_kv_xeng_init(&k->X, k->be, *m_p, k->nclients, o->slice, maxwr, o->qp_depth, region,
			      folded, k->err);
	if (st != DMR_OK)
		return st;
	double rpc_us = o->rpc_us >= 0 ? o->rpc_us : (*m_p ? (*m_p)->read_rtt_ns / 1e3 : 2.0);
	k->rpc_ps = dmr_ps_from_us_round(rpc_us);
	if ((st = kv_pf_setup(k)) != DMR_OK)
		return st;
	kv_ts_init(k, dmr_ps_from_ms_round(o->window_ms));
	/* the backend refills the slices itself (not with Loop X, which
	 * sees every completion's time), when a block has more slices than
	 * fit in flight and one more: a smaller one is posted whole before
	 * its first completion, so the sim would never take one and every
	 * pump would set a stream for nothing (+13 % CPU with 1 MiB blocks,
	 * 16 x 64 KiB in flight: the trial of session 15) */
	uint64_t per_block = o->slice ? (k->block + o->slice - 1) / o->slice : 1;
	if (!k->pf && !o->no_streams && per_block > (uint64_t)o->qp_depth + 1)
		st = dmr_kv_xeng_streams(&k->X, k->ts.next_end);
	return st;
}

dmr_status_t kv_run_sim(kv_t *k, dmr_kv_result_t *res, double w0)
{
	const dmr_kv_opts_t *o = k->o;
	const dmr_model_t *m = NULL;
	/* the event loop polls the stop flag (partial results, exit 130) */
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	dmr_status_t st = sim_setup(k, &m);
	/* set up: the caller's last word before the run (kv run: an earlier
	 * run's files are moved aside now, not before a refusal) */
	if (st == DMR_OK && o->on_start)
		st = o->on_start(o->on_start_arg, k->err);
	if (st != DMR_OK)
		goto out;
	/* from here on, results are written (partial when the run fails) */
	if (o->outstanding) {
		for (uint32_t i = 0; i < o->outstanding && st == DMR_OK; i++) {
			st = kv_read_next(k);
			if (st != DMR_OK || !k->have_ahead)
				break;
			st = start_request(k, 0);
		}
	} else {
		st = kv_read_next(k);
		if (st == DMR_OK)
			st = schedule_ahead(k);
	}
	if (st == DMR_OK)
		st = kv_loop(k);
	res->partial = st != DMR_OK;
	dmr_time_ps_t tend = res->partial ? max64(k->t_last, sim_time(k)) : k->t_last;
	double g[KV_NGAUGE];
	sim_sample(k, g);
	dmr_tseries_finish(&k->ts, tend, k->cnt, k->pf ? g : NULL);
	kv_fill_result(k, res, m, tend);
	res->wall_s = dmr_wall_s() - w0;
	if (o->out_dir) {
		dmr_err_t werr;
		if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(k->err, DMR_ERR_WRITE, "%s", werr.msg);
	}
	if (st == DMR_ERR_REMOTE && k->be) {
		dmr_kv_xeng_streams_off(&k->X); /* the drain posts nothing */
		kv_drain_failed(k);
	}
out:
	dmr_sig_restore(&saved);
	return st;
}
