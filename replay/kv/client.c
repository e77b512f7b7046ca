/*
 * replay/kv/client.c - a client thread of the threaded KV replay: it takes
 * its requests from the trace (request i belongs to client i mod clients),
 * looks each up at the master over the mailbox RPC (core/kv/rpc.h), READs
 * the hits (after polling the ready word of a block still being written),
 * WRITEs the new blocks (core/kv/xfer.h, content patterns checked) and
 * FINISHes the request at the master. Every wait has a deadline.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/sig.h"
#include "kv_impl.h"

static inline void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED); /* one writer; read by the sampler */
}

/* Next queued request of client c (NULL at the end); reads ahead into the
 * other clients' queues. Request i belongs to client i mod clients. */
static dmr_status_t tq_take(kvt_t *T, uint32_t c, tq_t **q_p, dmr_err_t *err)
{
	kv_t *k = T->k;
	dmr_status_t st = DMR_OK;
	pthread_mutex_lock(&T->mu);
	while (!T->qh[c]) {
		if (k->eof || (k->o->requests && k->nread >= k->o->requests)) {
			k->eof = 1;
			break;
		}
		dmr_kv_req_t r;
		st = dmr_kv_trace_next(k->rd, &r, err);
		if (st == DMR_EOF) {
			st = DMR_OK;
			k->eof = 1;
			break;
		}
		if (st != DMR_OK)
			break;
		k->nread++;
		tq_t *q = malloc(sizeof(*q) + (size_t)r.nblocks * 8);
		if (!q) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
			break;
		}
		q->next = NULL;
		q->index = r.index;
		q->t_us = r.t_us;
		q->nblocks = r.nblocks;
		memcpy(q->ids, r.blocks, (size_t)r.nblocks * 8);
		uint32_t d = (uint32_t)(r.index % T->nc);
		if (d < T->g0 || d - T->g0 >= T->nl) {
			free(q); /* another process's client (CN mode) */
			continue;
		}
		d -= T->g0;
		q->local = T->nlocal++;
		if (T->qt[d])
			T->qt[d]->next = q;
		else
			T->qh[d] = q;
		T->qt[d] = q;
	}
	tq_t *q = T->qh[c];
	if (q) {
		T->qh[c] = q->next;
		if (!q->next)
			T->qt[c] = NULL;
	}
	pthread_mutex_unlock(&T->mu);
	*q_p = st == DMR_OK ? q : NULL;
	if (st != DMR_OK)
		free(q);
	return st;
}

static dmr_status_t cl_post_rpc(kvc_t *C, uint32_t s, uint32_t op, uint64_t a, uint32_t b0,
				uint32_t total, const uint64_t *ids, uint32_t n, uint32_t ri)
{
	kvt_t *T = C->T;
	uint64_t seq = ++C->seq;
	dmr_kv_rpc_req_t rq = {.op = op, .n = n, .a = a, .b0 = b0, .total = total};
	dmr_status_t st = dmr_kv_rpc_send(T->be, C->w, C->lbuf + (uint64_t)s * DMR_KV_MB_SLOT,
					  dmr_kv_mb_off(C->g, s), seq, &rq, ids,
					  dmr_wrid_n(DMR_WRID_KV_RPCW, s), &C->err);
	if (st != DMR_OK)
		return st;
	rslot_t *r = &C->sl[s];
	r->seq = seq;
	r->t_post = dmr_be_now(T->be, C->w);
	r->rq = ri;
	r->n = n;
	r->op = (uint8_t)op;
	r->busy = 1;
	r->reading = 0;
	C->rpcs++;
	return DMR_OK;
}

static int cl_free_slot(const kvc_t *C)
{
	for (uint32_t s = 0; s < DMR_KV_MB_SLOTS; s++)
		if (!C->sl[s].busy)
			return (int)s;
	return -1;
}

static dmr_status_t cl_post_lookup(kvc_t *C, uint32_t s, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	uint32_t n = r->nblocks - r->answered;
	if (n > DMR_KV_MB_MAXB)
		n = DMR_KV_MB_MAXB;
	C->lk_inflight++;
	return cl_post_rpc(C, s, DMR_KV_OP_LOOKUP, r->index, r->answered, r->nblocks,
			   r->ids + r->answered, n, ri);
}

static dmr_status_t cl_enqueue(kvc_t *C, uint32_t ri, uint32_t b, uint8_t opcode)
{
	creq_t *r = &C->rq[ri];
	uint32_t xi = dmr_kv_xeng_alloc(&C->X);
	if (xi == NOIDX)
		return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
	dmr_kv_xfer_t *x = &C->X.x[xi];
	x->logical = r->off[b] - C->T->lay.pool_base;
	x->len = C->T->k->block;
	x->opcode = opcode;
	x->owner = ri;
	x->entry = b;
	x->tag = r->ids[b];
	x->client = 0;
	dmr_kv_xeng_enqueue(&C->X, xi);
	return DMR_OK;
}

/* the local copy of request ri's ready word */
static uint8_t *cl_ready_buf(kvc_t *C, uint32_t ri)
{
	return C->lbuf + (uint64_t)DMR_KV_MB_SLOTS * DMR_KV_MB_SLOT + 8ull * ri;
}

/* Post the READ of the ready word of the request's next waiting block. */
static dmr_status_t cl_poll_ready(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	dmr_wr_t wr = {.wr_id = dmr_wrid_n(DMR_WRID_KV_RDY, ri),
		       .local = cl_ready_buf(C, ri),
		       .remote = C->T->lay.ready_base + 8ull * r->gslot[r->wait_b],
		       .length = 8,
		       .opcode = DMR_WR_READ,
		       .flags = DMR_WR_SIGNALED};
	r->polling = 1;
	return dmr_be_post(C->T->be, C->w, 0, &wr, 1, &C->err);
}

static dmr_status_t cl_next_wait(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	while (r->wait_b < r->nblocks && r->kind[r->wait_b] != DMR_KV_KIND_WAIT)
		r->wait_b++;
	return r->wait_b < r->nblocks ? cl_poll_ready(C, ri) : DMR_OK;
}

/* All of request ri's blocks have arrived: its latency ends now. */
static dmr_status_t cl_arrived(kvc_t *C, creq_t *r, dmr_time_ps_t now)
{
	if (kv_lat_push(&C->lat, dmr_ps_to_us(now - r->t_arr)) != 0)
		return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (latencies)");
	C->t_last = max64(C->t_last, now);
	r->state = CR_FINISH;
	return DMR_OK;
}

static dmr_status_t cl_start_puts(kvc_t *C, uint32_t ri, dmr_time_ps_t now)
{
	creq_t *r = &C->rq[ri];
	uint32_t n = 0;
	for (uint32_t b = 0; b < r->nblocks; b++)
		if (r->kind[b] == DMR_KV_KIND_PUT) {
			dmr_status_t st = cl_enqueue(C, ri, b, DMR_WR_WRITE);
			if (st != DMR_OK)
				return st;
			n++;
		}
	r->puts_left = n;
	return n ? DMR_OK : cl_arrived(C, r, now);
}

static dmr_status_t cl_on_lookup(kvc_t *C, rslot_t *sl, const uint8_t *resp, dmr_time_ps_t now)
{
	creq_t *r = &C->rq[sl->rq];
	uint32_t ri = sl->rq;
	const kv_t *k = C->T->k;
	uint64_t pool_base = C->T->lay.pool_base;
	C->lk_inflight--;
	C->rpc_ps_sum += now - sl->t_post;
	C->lookups++;
	r->rid = dmr_kv_rpc_resp_rid(resp);
	for (uint32_t j = 0; j < sl->n; j++) {
		uint32_t b = r->answered + j, kind;
		dmr_kv_rpc_resp_get(resp, j, &r->off[b], &r->gslot[b], &kind);
		r->kind[b] = (uint8_t)kind;
		if ((kind == DMR_KV_KIND_GET || kind == DMR_KV_KIND_WAIT ||
		     kind == DMR_KV_KIND_PUT) &&
		    (r->off[b] < pool_base ||
		     r->off[b] - pool_base + k->block > k->pool.nseg * k->pool.seg_stride))
			return dmr_err_set(&C->err, DMR_ERR_REMOTE,
					   "kv client %u: master answered block %" PRIu64
					   " at offset %" PRIu64 ", outside the pool",
					   C->w, r->ids[b], r->off[b]);
		if (kind < DMR_KV_KIND_GET || kind > DMR_KV_KIND_DROP)
			return dmr_err_set(&C->err, DMR_ERR_REMOTE,
					   "kv client %u: master answered kind %u", C->w, kind);
		cnt_add(&C->b_req, 1);
		cnt_add(&C->b_hit, kind == DMR_KV_KIND_GET || kind == DMR_KV_KIND_WAIT);
		cnt_add(&C->b_put, kind == DMR_KV_KIND_PUT);
		cnt_add(&C->b_drop, kind == DMR_KV_KIND_DROP);
	}
	r->answered += sl->n;
	if (r->answered < r->nblocks)
		return DMR_OK; /* lk_multi: its next chunk goes next, alone */
	if (C->lk_multi == ri)
		C->lk_multi = NOIDX;
	r->state = CR_XFER;
	uint32_t gets = 0;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		if (r->kind[b] == DMR_KV_KIND_GET) {
			dmr_status_t st = cl_enqueue(C, ri, b, DMR_WR_READ);
			if (st != DMR_OK)
				return st;
			gets++;
		} else if (r->kind[b] == DMR_KV_KIND_WAIT) {
			gets++;
			C->waited++;
		}
	}
	r->gets_left = gets;
	r->wait_b = 0;
	dmr_status_t st = cl_next_wait(C, ri);
	if (st == DMR_OK && gets == 0)
		st = cl_start_puts(C, ri, now);
	return st;
}

static void cl_release(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	free(r->ids);
	free(r->off);
	free(r->gslot);
	free(r->kind);
	memset(r, 0, sizeof(*r));
	C->active--;
}

static dmr_status_t cl_on_resp(kvc_t *C, uint32_t s, dmr_time_ps_t now)
{
	rslot_t *sl = &C->sl[s];
	const uint8_t *resp = C->lbuf + (uint64_t)s * DMR_KV_MB_SLOT + DMR_KV_MB_RESP;
	sl->reading = 0;
	if (!dmr_kv_rpc_resp_ok(resp, sl->seq, sl->n)) {
		if (now - sl->t_post > C->T->deadline_ps)
			return dmr_err_set(&C->err, DMR_ERR_TIMEOUT,
					   "kv client %u: the master did not answer %s RPC %" PRIu64
					   " (mailbox slot %u) within %.0f s",
					   C->w, sl->op == DMR_KV_OP_LOOKUP ? "LOOKUP" : "FINISH",
					   sl->seq, s, dmr_ps_to_s(C->T->deadline_ps));
		return DMR_OK; /* not yet: READ again */
	}
	sl->busy = 0;
	if (sl->op == DMR_KV_OP_LOOKUP)
		return cl_on_lookup(C, sl, resp, now);
	/* FINISH acknowledged: the request is done */
	cl_release(C, sl->rq);
	cnt_add(&C->completed, 1);
	__atomic_add_fetch(&C->T->completed_all, 1, __ATOMIC_RELAXED);
	return DMR_OK;
}

static dmr_status_t cl_on_xfer(kvc_t *C, uint32_t xi, dmr_time_ps_t now)
{
	dmr_kv_xfer_t x = C->X.x[xi];
	dmr_kv_xeng_free(&C->X, xi);
	creq_t *r = &C->rq[x.owner];
	if (x.opcode == DMR_WR_READ) {
		cnt_add(&C->bytes_got, x.len);
		if (--r->gets_left == 0)
			return cl_start_puts(C, x.owner, now);
		return DMR_OK;
	}
	cnt_add(&C->bytes_put, x.len);
	return --r->puts_left == 0 ? cl_arrived(C, r, now) : DMR_OK;
}

static dmr_status_t cl_on_ready(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	r->polling = 0;
	if (dmr_kv_ld_u64(cl_ready_buf(C, ri)) != dmr_kv_ready_tag(r->ids[r->wait_b]))
		return cl_poll_ready(C, ri); /* still being written: READ again */
	dmr_status_t st = cl_enqueue(C, ri, r->wait_b, DMR_WR_READ);
	r->wait_b++;
	if (st == DMR_OK)
		st = cl_next_wait(C, ri);
	return st;
}

/* Start this client's next request when it is due. */
static dmr_status_t cl_start(kvc_t *C, dmr_time_ps_t now)
{
	kvt_t *T = C->T;
	kv_t *k = T->k;
	while (!kv_stopped(T) && C->active < CREQ_MAX) {
		if (!C->next && !C->eof) {
			dmr_status_t st = tq_take(T, C->w, &C->next, &C->err);
			if (st != DMR_OK)
				return st;
			if (!C->next)
				C->eof = 1;
		}
		if (!C->next)
			return DMR_OK;
		tq_t *q = C->next;
		dmr_time_ps_t t_arr;
		if (k->o->outstanding) {
			if (q->local >= __atomic_load_n(&T->completed_all, __ATOMIC_RELAXED) +
					    k->o->outstanding)
				return DMR_OK;
			t_arr = now;
		} else {
			t_arr = T->t0 + kv_arrival_ps(k, q->t_us);
			if (now < t_arr)
				return DMR_OK;
		}
		uint32_t ri = 0;
		while (C->rq[ri].state != CR_FREE)
			ri++;
		creq_t *r = &C->rq[ri];
		r->index = q->index;
		r->t_arr = t_arr;
		r->nblocks = q->nblocks;
		uint32_t nb = q->nblocks ? q->nblocks : 1;
		r->ids = malloc(nb * sizeof(uint64_t));
		r->off = malloc(nb * sizeof(uint64_t));
		r->gslot = malloc(nb * sizeof(uint32_t));
		r->kind = malloc(nb);
		if (!r->ids || !r->off || !r->gslot || !r->kind)
			return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
		memcpy(r->ids, q->ids, (size_t)q->nblocks * 8);
		r->state = CR_LOOKUP;
		C->active++;
		C->lkq[(C->lkh + C->lkn) % CREQ_MAX] = ri;
		C->lkn++;
		C->next = q->next = NULL;
		free(q);
		if (!C->have_first) {
			C->have_first = 1;
			C->t_first = t_arr;
		}
		cnt_add(&C->arrivals, 1);
	}
	return DMR_OK;
}

/* LOOKUPs in trace order, up to LK_MAX in flight; a request of more than
 * MB_MAXB blocks is looked up in chunks with no other LOOKUP of this client
 * in flight, so the master (which serves LOOKUPs in trace order and nothing
 * between the chunks of one request) always finds the next chunk in a
 * mailbox slot and never waits for a slot held by a later request's LOOKUP */
static dmr_status_t cl_lookups(kvc_t *C)
{
	dmr_status_t st;
	int s;
	if (C->lk_multi != NOIDX) {
		if (!C->lk_inflight && (s = cl_free_slot(C)) >= 0 &&
		    (st = cl_post_lookup(C, (uint32_t)s, C->lk_multi)) != DMR_OK)
			return st;
		return DMR_OK;
	}
	while (C->lkn && C->lk_inflight < LK_MAX) {
		uint32_t ri = C->lkq[C->lkh];
		int multi = C->rq[ri].nblocks > DMR_KV_MB_MAXB;
		if ((multi && C->lk_inflight) || (s = cl_free_slot(C)) < 0)
			break;
		C->lkh = (C->lkh + 1) % CREQ_MAX;
		C->lkn--;
		if (multi)
			C->lk_multi = ri;
		if ((st = cl_post_lookup(C, (uint32_t)s, ri)) != DMR_OK)
			return st;
		if (multi)
			break;
	}
	return DMR_OK;
}

static dmr_status_t cl_step(kvc_t *C, dmr_time_ps_t now)
{
	dmr_status_t st = cl_start(C, now);
	if (st == DMR_OK)
		st = cl_lookups(C);
	if (st != DMR_OK)
		return st;
	int s;
	for (uint32_t ri = 0; ri < CREQ_MAX && C->active; ri++) {
		creq_t *r = &C->rq[ri];
		if (r->state != CR_FINISH)
			continue;
		if ((s = cl_free_slot(C)) < 0)
			break;
		st = cl_post_rpc(C, (uint32_t)s, DMR_KV_OP_FINISH, r->rid, 0, 0, NULL, 0, ri);
		if (st != DMR_OK)
			return st;
		r->state = CR_FINWAIT;
	}
	for (uint32_t s2 = 0; s2 < DMR_KV_MB_SLOTS; s2++) {
		rslot_t *sl = &C->sl[s2];
		if (!sl->busy || sl->reading)
			continue;
		st = dmr_kv_rpc_fetch(
		    C->T->be, C->w, C->lbuf + (uint64_t)s2 * DMR_KV_MB_SLOT + DMR_KV_MB_RESP,
		    dmr_kv_mb_off(C->g, s2), sl->n, dmr_wrid_n(DMR_WRID_KV_RPCR, s2), &C->err);
		if (st != DMR_OK)
			return st;
		sl->reading = 1;
	}
	return dmr_kv_xeng_pump(&C->X, 0);
}

/* One completion of the client's QP at `now`. */
static dmr_status_t cl_on_wc(kvc_t *C, const dmr_wc_t *wc, dmr_time_ps_t now)
{
	dmr_wrid_kind_t kind = dmr_wrid_kind(wc->wr_id);
	uint64_t idx = dmr_wrid_get_n(wc->wr_id);
	if (kind != DMR_WRID_KV_SLICE && wc->status != DMR_WC_SUCCESS)
		return dmr_err_set(&C->err, DMR_ERR_REMOTE, "kv client %u: %s %s completed with %s",
				   C->w, kind == DMR_WRID_KV_RDY ? "ready-word" : "mailbox",
				   dmr_wr_opcode_string(wc->opcode),
				   dmr_wc_status_string(wc->status));
	switch (kind) {
	case DMR_WRID_KV_SLICE: {
		uint32_t xi;
		dmr_status_t st = dmr_kv_xeng_on_wc(&C->X, C->w, wc, &xi);
		if (st == DMR_OK && xi != NOIDX)
			st = cl_on_xfer(C, xi, now);
		return st;
	}
	case DMR_WRID_KV_RPCW:
		return DMR_OK;
	case DMR_WRID_KV_RPCR:
		return idx < DMR_KV_MB_SLOTS ? cl_on_resp(C, (uint32_t)idx, now) : DMR_ERR_INVALID;
	case DMR_WRID_KV_RDY:
		return idx < CREQ_MAX ? cl_on_ready(C, (uint32_t)idx) : DMR_ERR_INVALID;
	default:
		return dmr_err_set(&C->err, DMR_ERR_INVALID,
				   "kv client %u: unexpected completion %#" PRIx64, C->w,
				   wc->wr_id);
	}
}

void *kv_client_main(void *arg)
{
	kvc_t *C = arg;
	kvt_t *T = C->T;
	dmr_wc_t wcs[64];
	dmr_status_t st = DMR_OK;
	dmr_time_ps_t last = dmr_be_now(T->be, C->w);
	uint32_t idle = 0;
	while (st == DMR_OK && !kv_stopped(T)) {
		if (dmr_sig_caught()) {
			st = dmr_err_set(&C->err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d: results so far are partial",
					 dmr_sig_caught());
			break;
		}
		dmr_time_ps_t now = dmr_be_now(T->be, C->w);
		st = cl_step(C, now);
		if (st != DMR_OK)
			break;
		int n = dmr_be_poll(T->be, C->w, wcs, 64);
		if (n < 0) {
			st =
			    dmr_err_set(&C->err, DMR_ERR_REMOTE, "kv client %u: poll failed", C->w);
			break;
		}
		now = dmr_be_now(T->be, C->w);
		for (int i = 0; i < n && st == DMR_OK; i++)
			st = cl_on_wc(C, &wcs[i], now);
		if (n > 0) {
			last = now;
			idle = 0;
			continue;
		}
		if (C->eof && !C->next && C->active == 0)
			break;
		if (C->active && now - last > T->deadline_ps) {
			st = dmr_err_set(
			    &C->err, DMR_ERR_TIMEOUT,
			    "kv client %u: no completion for %.1f s with %u requests in "
			    "flight (MN or master gone?)",
			    C->w, dmr_ps_to_s(now - last), C->active);
			break;
		}
		if (!C->active)
			last = now;
		if (++idle > 64)
			sched_yield();
	}
	C->st = st;
	if (st != DMR_OK)
		kv_stop(T);
	__atomic_sub_fetch(&T->running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}
