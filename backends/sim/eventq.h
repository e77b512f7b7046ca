/*
 * backends/sim/eventq.h - the discrete-event queue of the sim backend.
 *
 * Events are ordered by (time, sequence): the sequence number is assigned at
 * scheduling, so events at the same picosecond pop in FIFO order and runs
 * reproduce bit for bit (ns-3 scheduler EventKey; libuv timer start_id).
 * Implementation: an implicit 4-ary min-heap in one array (fewer levels
 * than a binary heap: the sift-down of a binary heap was most of the
 * instructions of an earlier prototype). Kept behind five functions so it
 * can be swapped after measuring (ROSS tw-queue.h).
 */
#ifndef DMR_SIM_EVENTQ_H
#define DMR_SIM_EVENTQ_H

#include <stdint.h>

#include "../../core/base/status.h"

typedef struct dmr_sim_event {
	uint64_t t;    /* ps */
	uint64_t seq;  /* tie-breaker, assigned by push */
	uint32_t type; /* user event type */
	uint32_t arg;  /* user argument (pool index) */
} dmr_sim_event_t;

/* Stored form: 16 bytes, four to a cache line (so a node's four children
 * share one): the time, then sequence (35 bits) | type (3) | arg (26). */
typedef struct dmr_sim_qent {
	uint64_t t;
	uint64_t key;
} dmr_sim_qent_t;

#define DMR_SIM_EVQ_ARG_BITS 26
#define DMR_SIM_EVQ_TYPE_BITS 3
#define DMR_SIM_EVQ_MAX_ARG ((1u << DMR_SIM_EVQ_ARG_BITS) - 1)

typedef struct dmr_sim_eventq {
	dmr_sim_qent_t *heap;
	uint32_t n, cap;
	uint64_t next_seq;
} dmr_sim_eventq_t;

/* Initialise with an initial capacity (grows by doubling). DMR_ERR_NOMEM. */
dmr_status_t dmr_sim_eventq_init(dmr_sim_eventq_t *q, uint32_t cap);
void dmr_sim_eventq_fini(dmr_sim_eventq_t *q);
/* Schedule an event at time t (ps); type < 8, arg <= DMR_SIM_EVQ_MAX_ARG.
 * DMR_ERR_NOMEM if growing fails, DMR_ERR_RANGE if type/arg do not fit or
 * the sequence space (2^35 events) is exhausted. */
dmr_status_t dmr_sim_eventq_push(dmr_sim_eventq_t *q, uint64_t t, uint32_t type, uint32_t arg);
/* Remove the earliest event into *ev. Returns 0 when empty, 1 otherwise. */
int dmr_sim_eventq_pop(dmr_sim_eventq_t *q, dmr_sim_event_t *ev);
/* Time of the earliest event, UINT64_MAX when empty. */
static inline uint64_t dmr_sim_eventq_peek_time(const dmr_sim_eventq_t *q)
{
	return q->n ? q->heap[0].t : UINT64_MAX;
}

/* Sequence number of the earliest event (q->n > 0). */
static inline uint64_t dmr_sim_eventq_peek_seq(const dmr_sim_eventq_t *q)
{
	return q->heap[0].key >> (DMR_SIM_EVQ_ARG_BITS + DMR_SIM_EVQ_TYPE_BITS);
}

#endif
