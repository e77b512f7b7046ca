#include "eventq.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define SHIFT (DMR_SIM_EVQ_ARG_BITS + DMR_SIM_EVQ_TYPE_BITS)
#define NS DMR_SIM_EVQ_SLOTS
#define NW (NS / 64) /* bitmap words */

static void nodes_link_free(dmr_sim_eventq_t *q, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++)
		q->node[i].next = i + 1 < to ? i + 1 : NIL;
	q->nfree = from < to ? from : NIL;
}

dmr_status_t dmr_sim_eventq_init(dmr_sim_eventq_t *q, uint32_t cap)
{
	memset(q, 0, sizeof(*q));
	cap = cap < 16 ? 16 : cap;
	q->slot = malloc(sizeof(*q->slot) * NS);
	q->node = malloc(sizeof(*q->node) * cap);
	q->heap = aligned_alloc(64, sizeof(*q->heap) * 16);
	if (!q->slot || !q->node || !q->heap) {
		dmr_sim_eventq_fini(q);
		return DMR_ERR_NOMEM;
	}
	memset(q->slot, 0xff, sizeof(*q->slot) * NS);
	q->ncap = cap;
	nodes_link_free(q, 0, cap);
	q->cap = 16;
	q->wt = q->ht = UINT64_MAX;
	return DMR_OK;
}

void dmr_sim_eventq_fini(dmr_sim_eventq_t *q)
{
	free(q->slot);
	free(q->node);
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

static inline int before(uint64_t ta, uint64_t ka, uint64_t tb, uint64_t kb)
{
	return ta < tb || (ta == tb && ka < kb);
}

static dmr_status_t heap_push(dmr_sim_eventq_t *q, dmr_sim_qent_t ev)
{
	if (q->n == q->cap) {
		dmr_sim_qent_t *h = aligned_alloc(64, sizeof(*h) * q->cap * 2);
		if (!h)
			return DMR_ERR_NOMEM;
		memcpy(h, q->heap, sizeof(*h) * q->n);
		free(q->heap);
		q->heap = h;
		q->cap *= 2;
	}
	uint32_t i = q->n++;
	dmr_sim_qent_t *h = q->heap;
	while (i > 0) {
		uint32_t p = (i - 1) >> 2;
		if (!before(ev.t, ev.key, h[p].t, h[p].key))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = ev;
	q->ht = h[0].t;
	return DMR_OK;
}

static void heap_pop(dmr_sim_eventq_t *q)
{
	dmr_sim_qent_t *h = q->heap;
	dmr_sim_qent_t last = h[--q->n];
	uint32_t n = q->n, i = 0;
	for (;;) {
		uint32_t c = 4 * i + 1;
		if (c >= n)
			break;
		uint32_t best = c;
		uint32_t end = c + 4 < n ? c + 4 : n;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(h[k].t, h[k].key, h[best].t, h[best].key))
				best = k;
		if (!before(h[best].t, h[best].key, last.t, last.key))
			break;
		h[i] = h[best];
		i = best;
	}
	if (n)
		h[i] = last;
	q->ht = n ? h[0].t : UINT64_MAX;
}

/* The slow paths of dmr_sim_eventq_push: a far event (heap), or a full
 * node pool. */
dmr_status_t dmr_sim_eventq_push_slow(dmr_sim_eventq_t *q, uint64_t t, uint64_t key)
{
	uint64_t a = t >> DMR_SIM_EVQ_SLOT_SHIFT;
	if (a - q->cur >= NS) { /* beyond one turn of the wheel */
		dmr_status_t st = heap_push(q, (dmr_sim_qent_t){.t = t, .key = key});
		if (st == DMR_OK)
			q->next_seq++;
		return st;
	}
	uint32_t n = q->ncap * 2;
	dmr_sim_qnode_t *nn = realloc(q->node, sizeof(*nn) * n);
	if (!nn)
		return DMR_ERR_NOMEM;
	q->node = nn;
	nodes_link_free(q, q->ncap, n);
	q->ncap = n;
	return dmr_sim_eventq_push(q, t, (uint32_t)(key >> DMR_SIM_EVQ_ARG_BITS) & 7,
				   (uint32_t)key & DMR_SIM_EVQ_MAX_ARG);
}

void dmr_sim_eventq_slot_insert(dmr_sim_eventq_t *q, dmr_sim_qslot_t *sl, uint32_t i)
{
	uint64_t t = q->node[i].t;
	uint32_t prev = NIL, p = sl->head;
	while (q->node[p].t <= t) {
		prev = p;
		p = q->node[p].next;
	}
	q->node[i].next = p;
	if (prev == NIL)
		sl->head = i;
	else
		q->node[prev].next = i;
}

dmr_sim_qent_t dmr_sim_eventq_pop_heap(dmr_sim_eventq_t *q)
{
	dmr_sim_qent_t e = q->heap[0];
	heap_pop(q);
	q->last_t = e.t;
	q->cur = e.t >> DMR_SIM_EVQ_SLOT_SHIFT;
	return e;
}
