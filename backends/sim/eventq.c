#include "eventq.h"

#include <stdlib.h>

dmr_status_t dmr_sim_eventq_init(dmr_sim_eventq_t *q, uint32_t cap)
{
	q->heap = malloc(sizeof(*q->heap) * (cap ? cap : 16));
	if (!q->heap)
		return DMR_ERR_NOMEM;
	q->n = 0;
	q->cap = cap ? cap : 16;
	q->next_seq = 0;
	return DMR_OK;
}

void dmr_sim_eventq_fini(dmr_sim_eventq_t *q)
{
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

static inline int before(const dmr_sim_event_t *a, const dmr_sim_event_t *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

dmr_status_t dmr_sim_eventq_push(dmr_sim_eventq_t *q, uint64_t t, uint32_t type, uint32_t arg)
{
	if (q->n == q->cap) {
		dmr_sim_event_t *h = realloc(q->heap, sizeof(*h) * q->cap * 2);
		if (!h)
			return DMR_ERR_NOMEM;
		q->heap = h;
		q->cap *= 2;
	}
	dmr_sim_event_t ev = {.t = t, .seq = q->next_seq++, .type = type, .arg = arg};
	uint32_t i = q->n++;
	dmr_sim_event_t *h = q->heap;
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
	dmr_sim_event_t *h = q->heap;
	*out = h[0];
	dmr_sim_event_t last = h[--q->n];
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
