/*
 * replay/dispatch.c - the trace into the workers' queues (engine.h): read
 * ahead, aura's routing to an owner CN's inbox with its backpressure, and
 * drift.
 */
#include "engine.h"
#include "replay.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../core/base/sig.h"
#include "../core/base/timeps.h"

/* Bytes of a qtxn_t holding nops ops. */
static inline size_t qtxn_size(uint32_t nops)
{
	return offsetof(qtxn_t, t) + offsetof(dmr_trace_txn_t, ops) + sizeof(dmr_trace_op_t) * nops;
}

qtxn_t *dmr_eng_qtxn_alloc(engine_t *e, uint32_t nops)
{
	qtxn_t *q = e->threaded || nops > DMR_TRACE_MAX_OPS ? NULL : e->qfree[nops];
	if (q) {
		e->qfree[nops] = q->next;
		return q;
	}
	return malloc(qtxn_size(nops));
}

void dmr_eng_qtxn_free(engine_t *e, qtxn_t *q)
{
	if (!q)
		return;
	if (e->threaded) {
		free(q);
		return;
	}
	q->next = e->qfree[q->t.nops];
	e->qfree[q->t.nops] = q;
}

void dmr_eng_qtxn_fini(engine_t *e)
{
	for (uint32_t c = 0; c <= DMR_TRACE_MAX_OPS; c++)
		while (e->qfree[c]) {
			qtxn_t *q = e->qfree[c];
			e->qfree[c] = q->next;
			free(q);
		}
}

/* Append t (group, remapped: its qtxn_t fields) to wq: a copy while the
 * copies queued stay within e->qcopy_max_txns and e->qcopy_max bytes and
 * wq holds no packed one, else packed (engine.h DMR_READAHEAD_COPY_*).
 * 0, or -1 out of memory (wq unchanged). */
static int wq_push(engine_t *e, wqueue_t *wq, const dmr_trace_txn_t *t, uint32_t group,
		   uint8_t remapped)
{
	size_t sz = qtxn_size(t->nops);
	if (!wq->pk.n && e->qcopy_n < e->qcopy_max_txns && e->qcopy_bytes + sz <= e->qcopy_max) {
		qtxn_t *q = dmr_eng_qtxn_alloc(e, t->nops);
		if (!q)
			return -1;
		q->next = NULL;
		q->remapped = remapped;
		q->group = group;
		memcpy(&q->t, t, offsetof(dmr_trace_txn_t, ops) + sizeof(dmr_trace_op_t) * t->nops);
		if (wq->tail)
			wq->tail->next = q;
		else
			wq->head = q;
		wq->tail = q;
		e->qcopy_bytes += sz;
		e->qcopy_n++;
	} else {
		if (dmr_txnq_push(&wq->pk, &e->qpool, t, (uint64_t)group << 1 | remapped))
			return -1;
		e->qpacked++;
	}
	wq->n++;
	return 0;
}

/* Trace id of wq's head (wq not empty). */
static uint64_t wq_head_id(const wqueue_t *wq)
{
	if (wq->head)
		return wq->head->t.id;
	uint32_t nops;
	uint64_t id;
	dmr_txnq_head(&wq->pk, &nops, &id);
	return id;
}

dmr_status_t dmr_eng_wq_pop(engine_t *e, wqueue_t *wq, qtxn_t **q_p)
{
	qtxn_t *q = wq->head;
	if (q) {
		wq->head = q->next;
		if (!q->next)
			wq->tail = NULL;
		e->qcopy_bytes -= qtxn_size(q->t.nops);
		e->qcopy_n--;
	} else {
		uint32_t nops;
		uint64_t id, tag;
		dmr_txnq_head(&wq->pk, &nops, &id);
		if (!(q = dmr_eng_qtxn_alloc(e, nops)))
			return dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
		q->t.nops = nops; /* its size, for dmr_eng_qtxn_free */
		if (dmr_txnq_pop(&wq->pk, &e->qpool, &q->t, &tag) < 0) {
			wq->n--;
			q->t.nops = nops;
			dmr_eng_qtxn_free(e, q);
			return dmr_err_set(e->err, DMR_ERR_PARSE,
					   "replay: transaction %" PRIu64
					   " read ahead does not decode (internal error)",
					   id);
		}
		q->next = NULL;
		q->group = (uint32_t)(tag >> 1);
		q->remapped = (uint8_t)(tag & 1);
	}
	wq->n--;
	*q_p = q;
	return DMR_OK;
}

void dmr_eng_wq_fini(engine_t *e, wqueue_t *wq)
{
	while (wq->head) {
		qtxn_t *q = wq->head;
		wq->head = q->next;
		e->qcopy_bytes -= qtxn_size(q->t.nops);
		e->qcopy_n--;
		dmr_eng_qtxn_free(e, q);
	}
	wq->tail = NULL;
	dmr_txnq_fini(&wq->pk, &e->qpool);
	wq->n = 0;
}

/* Next transaction for context ci of worker w (NULL: none left, or with
 * aura's backpressure ci parked until an owner takes from its inbox).
 * Reads ahead into the other workers' queues as needed. */
static dmr_status_t next_for_locked(engine_t *e, uint32_t w, uint32_t ci, qtxn_t **q_p);

/* Read one transaction of the trace into its worker's queue (worker =
 * trace index mod workers), or with aura into the inbox of the CN its
 * group is routed to (core/aura.h: A2 ownership, A4 balance; drift is then
 * applied here, at now_ps, so that the group is the one it runs in);
 * *bytes_p += its queued size. Sets e->eof at the end of the trace (DMR_OK,
 * nothing queued). */
static dmr_status_t read_one_locked(engine_t *e, size_t *bytes_p, uint64_t now_ps)
{
	if (e->qrec) { /* the cache's record, queued as it is (engine.h) */
		dmr_trace_rec_t rec;
		double t0 = dmr_wall_s();
		dmr_status_t st = dmr_trace_next_rec(e->rd, &rec, e->err);
		e->trace_wall += dmr_wall_s() - t0;
		if (st == DMR_OK) {
			uint32_t dw = (uint32_t)(e->next_index % e->nworkers);
			e->next_index++;
			wqueue_t *wq = &e->q[dw];
			if (dmr_txnq_push_rec(&wq->pk, &e->qpool, rec.bytes, rec.len, rec.nops,
					      rec.id, 0))
				st = dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
			else {
				wq->n++;
				e->qrecs++;
				*bytes_p += rec.len;
			}
		}
		if (st == DMR_EOF) {
			e->eof = 1;
			return DMR_OK;
		}
		return st;
	}
	double t0 = dmr_wall_s();
	dmr_status_t st = dmr_trace_next(e->rd, e->scratch, e->err);
	e->trace_wall += dmr_wall_s() - t0;
	if (st == DMR_EOF) {
		e->eof = 1;
		return DMR_OK;
	}
	if (st != DMR_OK)
		return st;
	dmr_trace_txn_t *t = e->scratch;
	*bytes_p += qtxn_size(t->nops); /* as a copy, packed or not */
	uint32_t dw = (uint32_t)(e->next_index % e->nworkers);
	e->next_index++;
	wqueue_t *wq = &e->q[dw];
	uint32_t group = 0;
	uint8_t remapped = 0;
	if (e->inbox) {
		int a4 = (e->loop.aura.levers & DMR_AURA_A4) != 0;
		if (e->drift_ps) {
			dmr_eng_drift_remap(e, t, now_ps);
			remapped = 1;
		}
		group = dmr_aura_group(e->aura, t);
		uint32_t rc = dw / e->o->threads, o = dmr_aura_owner(e->aura, group);
		if (o != UINT32_MAX && o != rc) {
			uint32_t to = dmr_aura_route(e->aura, group, rc, e->inbox_len[o]);
			if (to != rc) {
				wq = &e->inbox[to];
				e->inbox_len[to]++;
				if (!a4 && e->inbox_len[to] >= dmr_aura_inbox_bound(e->aura))
					e->bp = 1; /* strict routing: the reader waits */
			}
		}
	}
	if (wq_push(e, wq, t, group, remapped))
		return dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
	return DMR_OK;
}

/* Threaded backends: parse up to DMR_PRELOAD_BYTES of the trace into the
 * workers' queues before the timed loop, so that the device's throughput
 * and latency do not include CSV parsing (which was 73-87 % of the
 * engine's CPU per short transaction under qemu: docs/fidelity.md). The
 * rest, if any, streams as before. Returns the number preloaded in *n_p.
 * Preloaded transactions are copies whatever DMR_READAHEAD_COPY_MAX says
 * (unpacking would cost CPU in the timed loop); what streams after them
 * is packed until the copies drain below it. */
#define DMR_PRELOAD_BYTES (256ull << 20)
dmr_status_t dmr_eng_preload(engine_t *e, uint64_t *n_p)
{
	size_t bytes = 0;
	uint64_t n0 = e->next_index, max = e->qcopy_max, maxn = e->qcopy_max_txns;
	dmr_status_t st = DMR_OK;
	e->qcopy_max = e->qcopy_max_txns =
	    UINT64_MAX; /* copies: nothing to unpack in the timed loop */
	while (st == DMR_OK && !e->eof && e->next_index < e->limit && bytes < DMR_PRELOAD_BYTES &&
	       !dmr_sig_caught())
		st = read_one_locked(e, &bytes, 0);
	e->qcopy_max = max;
	e->qcopy_max_txns = maxn;
	*n_p = e->next_index - n0;
	return st;
}

/* Worker w's next transaction: its own queue's head, or with aura its CN's
 * inbox's when that is older in the trace (both in trace order). */
static dmr_status_t next_for_locked(engine_t *e, uint32_t w, uint32_t ci, qtxn_t **q_p)
{
	size_t bytes = 0;
	wqueue_t *ib = e->inbox ? &e->inbox[w / e->o->threads] : NULL;
	e->bp = 0;
	while (!e->q[w].n && !(ib && ib->n)) {
		if (e->eof || e->next_index >= e->limit) {
			*q_p = NULL;
			return DMR_OK;
		}
		dmr_status_t st = read_one_locked(e, &bytes, dmr_be_now(e->be, w));
		if (st != DMR_OK)
			return st;
		if (e->bp && !e->q[w].n && !(ib && ib->n)) {
			/* an owner's inbox is full and nothing is ours: wait */
			if (!e->is_parked[ci]) {
				e->is_parked[ci] = 1;
				e->parked[e->nparked++] = ci;
			}
			*q_p = NULL;
			return DMR_OK;
		}
	}
	if (ib && ib->n && (!e->q[w].n || wq_head_id(ib) < wq_head_id(&e->q[w]))) {
		e->inbox_len[w / e->o->threads]--;
		dmr_status_t st = dmr_eng_wq_pop(e, ib, q_p);
		if (st != DMR_OK)
			return st;
		/* room in an inbox: every parked reader tries again */
		for (uint32_t k = 0; k < e->nparked; k++) {
			e->is_parked[e->parked[k]] = 0;
			e->unparked[e->nunparked++] = e->parked[k];
		}
		e->nparked = 0;
	} else {
		dmr_status_t st = dmr_eng_wq_pop(e, &e->q[w], q_p);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

dmr_status_t dmr_eng_next_for(engine_t *e, struct thr *th, uint32_t w, uint32_t ci, qtxn_t **q_p)
{
	lock(e);
	dmr_status_t st = next_for_locked(e, w, ci, q_p);
	uint32_t n = e->nunparked;
	if (n)
		memcpy(th->wakep, e->unparked, sizeof(*th->wakep) * n);
	e->nunparked = 0;
	unlock(e);
	/* a woken reader resumes by a timer completion (on its own thread) */
	for (uint32_t k = 0; k < n && st == DMR_OK; k++)
		st = dmr_be_timer(e->be, e->ctx[th->wakep[k]].worker, 0,
				  dmr_wrid(DMR_WRID_WAKE, th->wakep[k], 0));
	return st;
}

/* Drift: move the transaction's partitioned operations to the hot set's
 * current place (FORMAT.md "Drift"). */
void dmr_eng_drift_remap(engine_t *e, dmr_trace_txn_t *t, uint64_t now)
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
