#include "eventq.h"

#include <stdlib.h>
#include <string.h>

dmr_status_t dmr_sim_eventq_init(dmr_sim_eventq_t *q, uint32_t cap)
{
	cap = cap < 16 ? 16 : cap;
	q->heap = aligned_alloc(64, sizeof(*q->heap) * cap);
	if (!q->heap)
		return DMR_ERR_NOMEM;
	q->n = 0;
	q->cap = cap;
	q->next_seq = 0;
	return DMR_OK;
}

void dmr_sim_eventq_fini(dmr_sim_eventq_t *q)
{
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

#define SHIFT (DMR_SIM_EVQ_ARG_BITS + DMR_SIM_EVQ_TYPE_BITS)

static inline int before(const dmr_sim_qent_t *a, const dmr_sim_qent_t *b)
{
	return a->t < b->t || (a->t == b->t && a->key < b->key);
}

dmr_status_t dmr_sim_eventq_push(dmr_sim_eventq_t *q, uint64_t t, uint32_t type, uint32_t arg)
{
	if (q->n == q->cap) {
		dmr_sim_qent_t *h = aligned_alloc(64, sizeof(*h) * q->cap * 2);
		if (h) {
			memcpy(h, q->heap, sizeof(*h) * q->n);
			free(q->heap);
		}
		if (!h)
			return DMR_ERR_NOMEM;
		q->heap = h;
		q->cap *= 2;
	}
	if (type >= (1u << DMR_SIM_EVQ_TYPE_BITS) || arg > DMR_SIM_EVQ_MAX_ARG ||
	    q->next_seq >> (64 - SHIFT))
		return DMR_ERR_RANGE;
	dmr_sim_qent_t ev = {
	    .t = t, .key = q->next_seq++ << SHIFT | (uint64_t)type << DMR_SIM_EVQ_ARG_BITS | arg};
	uint32_t i = q->n++;
	dmr_sim_qent_t *h = q->heap;
	while (i > 0) {
		uint32_t p = (i - 1) >> 2;
		if (!before(&ev, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = ev;
	return DMR_OK;
}

int dmr_sim_eventq_pop(dmr_sim_eventq_t *q, dmr_sim_event_t *out)
{
	if (q->n == 0)
		return 0;
	dmr_sim_qent_t *h = q->heap;
	out->t = h[0].t;
	out->seq = h[0].key >> SHIFT;
	out->type =
	    (uint32_t)(h[0].key >> DMR_SIM_EVQ_ARG_BITS) & ((1u << DMR_SIM_EVQ_TYPE_BITS) - 1);
	out->arg = (uint32_t)h[0].key & DMR_SIM_EVQ_MAX_ARG;
	dmr_sim_qent_t last = h[--q->n];
	uint32_t n = q->n, i = 0;
	for (;;) {
		uint32_t c = 4 * i + 1;
		if (c >= n)
			break;
		uint32_t best = c;
		uint32_t end = c + 4 < n ? c + 4 : n;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(&h[k], &h[best]))
				best = k;
		if (!before(&h[best], &last))
			break;
		h[i] = h[best];
		i = best;
	}
	if (n)
		h[i] = last;
	return 1;
}
