/*
 * replay/dispatch.c - the trace into the workers' queues (engine.h): read
 * ahead, aura's routing to an owner CN's inbox with its backpressure, and
 * drift.
 */
#include "engine.h"
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "../core/base/sig.h"
#include "../core/base/timeps.h"

static qtxn_t *qtxn_copy(const dmr_trace_txn_t *t)
{
	size_t sz =
	    offsetof(qtxn_t, t) + offsetof(dmr_trace_txn_t, ops) + sizeof(dmr_trace_op_t) * t->nops;
	qtxn_t *q = malloc(sz < sizeof(qtxn_t) ? sz : sz);
	if (!q)
		return NULL;
	q->next = NULL;
	q->remapped = 0;
	q->group = 0;
	memcpy(&q->t, t, offsetof(dmr_trace_txn_t, ops) + sizeof(dmr_trace_op_t) * t->nops);
	return q;
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
	double t0 = dmr_wall_s();
	dmr_status_t st = dmr_trace_next(e->rd, e->scratch, e->err);
	e->trace_wall += dmr_wall_s() - t0;
	if (st == DMR_EOF) {
		e->eof = 1;
		return DMR_OK;
	}
	if (st != DMR_OK)
		return st;
	qtxn_t *q = qtxn_copy(e->scratch);
	if (!q)
		return dmr_err_set(e->err, DMR_ERR_NOMEM, "replay: out of memory");
	*bytes_p += offsetof(qtxn_t, t) + offsetof(dmr_trace_txn_t, ops) +
		    sizeof(dmr_trace_op_t) * e->scratch->nops;
	uint32_t dw = (uint32_t)(e->next_index % e->nworkers);
	e->next_index++;
	wqueue_t *wq = &e->q[dw];
	if (e->inbox) {
		int a4 = (e->loop.aura.levers & DMR_AURA_A4) != 0;
		if (e->drift_ps) {
			dmr_eng_drift_remap(e, &q->t, now_ps);
			q->remapped = 1;
		}
		q->group = dmr_aura_group(e->aura, &q->t);
		uint32_t rc = dw / e->o->threads, o = dmr_aura_owner(e->aura, q->group);
		if (o != UINT32_MAX && o != rc) {
			uint32_t to = dmr_aura_route(e->aura, q->group, rc, e->inbox_len[o]);
			if (to != rc) {
				wq = &e->inbox[to];
				e->inbox_len[to]++;
				if (!a4 && e->inbox_len[to] >= dmr_aura_inbox_bound(e->aura))
					e->bp = 1; /* strict routing: the reader waits */
			}
		}
	}
	if (wq->tail)
		wq->tail->next = q;
	else
		wq->head = q;
	wq->tail = q;
	return DMR_OK;
}

/* Threaded backends: parse up to DMR_PRELOAD_BYTES of the trace into the
 * workers' queues before the timed loop, so that the device's throughput
 * and latency do not include CSV parsing (which was 73-87 % of the
 * engine's CPU per short transaction under qemu: docs/fidelity.md). The
 * rest, if any, streams as before. Returns the number preloaded in *n_p. */
#define DMR_PRELOAD_BYTES (256ull << 20)
dmr_status_t dmr_eng_preload(engine_t *e, uint64_t *n_p)
{
	size_t bytes = 0;
	uint64_t n0 = e->next_index;
	dmr_status_t st = DMR_OK;
	while (st == DMR_OK && !e->eof && e->next_index < e->limit && bytes < DMR_PRELOAD_BYTES &&
	       !dmr_sig_caught())
		st = read_one_locked(e, &bytes, 0);
	*n_p = e->next_index - n0;
	return st;
}

qtxn_t *dmr_eng_wq_pop(wqueue_t *wq)
{
	qtxn_t *q = wq->head;
	wq->head = q->next;
	if (!q->next)
		wq->tail = NULL;
	return q;
}

/* Worker w's next transaction: its own queue's head, or with aura its CN's
 * inbox's when that is older in the trace (both in trace order). */
static dmr_status_t next_for_locked(engine_t *e, uint32_t w, uint32_t ci, qtxn_t **q_p)
{
	size_t bytes = 0;
	wqueue_t *ib = e->inbox ? &e->inbox[w / e->o->threads] : NULL;
	e->bp = 0;
	while (!e->q[w].head && !(ib && ib->head)) {
		if (e->eof || e->next_index >= e->limit) {
			*q_p = NULL;
			return DMR_OK;
		}
		dmr_status_t st = read_one_locked(e, &bytes, dmr_be_now(e->be, w));
		if (st != DMR_OK)
			return st;
		if (e->bp && !e->q[w].head && !(ib && ib->head)) {
			/* an owner's inbox is full and nothing is ours: wait */
			if (!e->is_parked[ci]) {
				e->is_parked[ci] = 1;
				e->parked[e->nparked++] = ci;
			}
			*q_p = NULL;
			return DMR_OK;
		}
	}
	if (ib && ib->head && (!e->q[w].head || ib->head->t.id < e->q[w].head->t.id)) {
		e->inbox_len[w / e->o->threads]--;
		*q_p = dmr_eng_wq_pop(ib);
		/* room in an inbox: every parked reader tries again */
		for (uint32_t k = 0; k < e->nparked; k++) {
			e->is_parked[e->parked[k]] = 0;
			e->unparked[e->nunparked++] = e->parked[k];
		}
		e->nparked = 0;
	} else {
		*q_p = dmr_eng_wq_pop(&e->q[w]);
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
