/*
 * backends/sim/eventq.h - the discrete-event queue of the sim backend.
 *
 * Events are ordered by (time, sequence): the sequence number is assigned at
 * scheduling, so events at the same picosecond pop in FIFO order and runs
 * reproduce bit for bit (ns-3 scheduler EventKey; libuv timer start_id).
 *
 * Implementation: a timing wheel (Varghese and Lauck, "Hashed and
 * hierarchical timing wheels", SOSP 1987; the one-year calendar of Brown's
 * calendar queue, CACM 31(10), 1988) in front of a 4-ary heap. The wheel
 * has DMR_SIM_EVQ_SLOTS slots of 2^DMR_SIM_EVQ_SLOT_SHIFT ps each and
 * holds every event due less than one turn (SLOTS slots) after the slot of
 * the last event popped; a slot is a list kept in (time, sequence) order,
 * found through a two-level occupancy bitmap. Events due later (long waits
 * at a hot atomic address, timers) go to the heap, whose top is compared
 * with the wheel's first event at every pop. A push or pop touches a
 * constant number of cache lines whatever the number of pending events;
 * only the far events pay the heap's log(n). Times pushed must not be
 * before the last event popped (a discrete-event simulation never
 * schedules into the past): DMR_ERR_RANGE otherwise.
 *
 * Kept behind five functions so it can be swapped after measuring (ROSS
 * tw-queue.h). Measured against the former 4-ary heap alone: docs/MODEL.md,
 * "The event queue".
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

/* Stored form: the time, then sequence (35 bits) | type (3) | arg (26). */
typedef struct dmr_sim_qent {
	uint64_t t;
	uint64_t key;
} dmr_sim_qent_t;

/* A wheel entry: the stored form and the next entry of its slot. */
typedef struct dmr_sim_qnode {
	uint64_t t;
	uint64_t key;
	uint32_t next;
} dmr_sim_qnode_t;

typedef struct dmr_sim_qslot {
	uint32_t head, tail; /* node indices, UINT32_MAX: empty */
} dmr_sim_qslot_t;

#define DMR_SIM_EVQ_ARG_BITS 26
#define DMR_SIM_EVQ_TYPE_BITS 3
#define DMR_SIM_EVQ_MAX_ARG ((1u << DMR_SIM_EVQ_ARG_BITS) - 1)
/* 65.5 ns slots, 16384 of them: one turn is 1.07 ms, the slot array 128 KiB.
 * On TPC-C extreme (cx6dx-100g, 28 threads x 3 contexts per CN) a turn of
 * 67 us left 29 % of the events to the heap at 4 CNs (waits at the hot
 * warehouse's lock addresses), 268 us none at 4 CNs but 12 % of the
 * instructions in the heap at 16 CNs (longer lock queues); 1.07 ms none.
 * The turn being fixed, 16.4 ns slots (512 KiB of them) cost a cache miss
 * per far push (callgrind with a 2 MiB last level, 16 CNs: 1.76 M misses
 * in sim_progress, 65.5 ns slots 1.55 M, 131 ns 1.51 M) and more bitmap work:
 * instructions per verb at 1 / 4 / 16 CNs 941 / 951 / 969 with 16.4 ns,
 * 926 / 939 / 959 with 65.5 ns, 936 / 950 / 966 with 131 ns (a slot's
 * sorted insert walks further). docs/MODEL.md, "The event engine". */
#define DMR_SIM_EVQ_SLOT_SHIFT 16
#define DMR_SIM_EVQ_SLOTS (1u << 14)

typedef struct dmr_sim_eventq {
	dmr_sim_qslot_t *slot;			   /* DMR_SIM_EVQ_SLOTS */
	uint64_t bits[DMR_SIM_EVQ_SLOTS / 64];	   /* slot occupied */
	uint64_t sum[DMR_SIM_EVQ_SLOTS / 64 / 64]; /* bits word non-zero */
	dmr_sim_qnode_t *node;
	uint32_t ncap, nfree; /* node pool, free list through next */
	uint32_t nwheel;      /* events in the wheel */
	uint32_t first;	      /* slot of the wheel's earliest event (nwheel > 0) */
	uint64_t cur;	      /* absolute slot of the last event popped */
	uint64_t last_t;      /* time of the last event popped */
	/* the wheel's earliest event (wt UINT64_MAX: none) and the heap's
	 * earliest time (UINT64_MAX: none), kept by push and pop so that the
	 * peeks and the pop's choice load no slot or node */
	uint64_t wt, wkey, ht;
	dmr_sim_qent_t *heap; /* far events */
	uint32_t n, cap;      /* heap entries */
	uint64_t next_seq;
} dmr_sim_eventq_t;

#define DMR_SIM_EVQ_NIL UINT32_MAX
/* The push and pop below are always inlined: gcc -O2 kept the push out of
 * line, a call per event. */
#define DMR_SIM_EVQ_INLINE static inline __attribute__((always_inline))
#define DMR_SIM_EVQ_SEQ_SHIFT (DMR_SIM_EVQ_ARG_BITS + DMR_SIM_EVQ_TYPE_BITS)

/* Initialise with an initial capacity in events (grows by doubling).
 * DMR_ERR_NOMEM. */
dmr_status_t dmr_sim_eventq_init(dmr_sim_eventq_t *q, uint32_t cap);
void dmr_sim_eventq_fini(dmr_sim_eventq_t *q);

/* Out-of-line parts of the two inline functions below (not for callers). */
dmr_status_t dmr_sim_eventq_push_slow(dmr_sim_eventq_t *q, uint64_t t, uint64_t key);
void dmr_sim_eventq_slot_insert(dmr_sim_eventq_t *q, dmr_sim_qslot_t *sl, uint32_t i);
/* The heap's earliest event, removed (returned in registers: the caller's
 * event does not escape, so its unused fields cost no store). */
dmr_sim_qent_t dmr_sim_eventq_pop_heap(dmr_sim_eventq_t *q);

/*
 * Schedule an event at time t (ps, not before the last event popped); type
 * < 8, arg <= DMR_SIM_EVQ_MAX_ARG. DMR_ERR_NOMEM if growing fails,
 * DMR_ERR_RANGE if t is in the past, type/arg do not fit or the sequence
 * space (2^35 events) is exhausted. Inline: the simulator pushed about 2.7
 * events per simulated verb (2.1 since held WRs need no wake-up event),
 * and the call overhead was a fifth of the cost.
 */
DMR_SIM_EVQ_INLINE dmr_status_t dmr_sim_eventq_push(dmr_sim_eventq_t *q, uint64_t t, uint32_t type,
						    uint32_t arg)
{
	if ((type >> DMR_SIM_EVQ_TYPE_BITS | arg >> DMR_SIM_EVQ_ARG_BITS |
	     q->next_seq >> (64 - DMR_SIM_EVQ_SEQ_SHIFT)) ||
	    t < q->last_t)
		return DMR_ERR_RANGE;
	uint64_t key =
	    q->next_seq << DMR_SIM_EVQ_SEQ_SHIFT | (uint64_t)type << DMR_SIM_EVQ_ARG_BITS | arg;
	uint64_t a = t >> DMR_SIM_EVQ_SLOT_SHIFT;
	if (a - q->cur >= DMR_SIM_EVQ_SLOTS || q->nfree == DMR_SIM_EVQ_NIL)
		return dmr_sim_eventq_push_slow(q, t, key);
	q->next_seq++;
	uint32_t i = q->nfree;
	dmr_sim_qnode_t *nd = &q->node[i];
	q->nfree = nd->next;
	nd->t = t;
	nd->key = key;
	nd->next = DMR_SIM_EVQ_NIL;
	uint32_t si = (uint32_t)a & (DMR_SIM_EVQ_SLOTS - 1);
	dmr_sim_qslot_t *sl = &q->slot[si];
	/* the wheel's new earliest event: strictly earlier (a tie pops after,
	 * its sequence being the largest yet), so in an empty slot before the
	 * first one or first in the first slot */
	if (t < q->wt) {
		q->wt = t;
		q->wkey = key;
		q->first = si;
	}
	if (sl->head == DMR_SIM_EVQ_NIL) {
		sl->head = sl->tail = i;
		q->bits[si >> 6] |= 1ull << (si & 63);
		q->sum[si >> 12] |= 1ull << ((si >> 6) & 63);
	} else if (q->node[sl->tail].t <= t) {
		/* the common case: not before anything in the slot (a tie goes
		 * after, its sequence being the largest yet) */
		q->node[sl->tail].next = i;
		sl->tail = i;
	} else {
		dmr_sim_eventq_slot_insert(q, sl, i);
	}
	q->nwheel++;
	return DMR_OK;
}

/* First occupied slot at or after pos (linear order), DMR_SIM_EVQ_SLOTS if
 * none. */
DMR_SIM_EVQ_INLINE uint32_t dmr_sim_eventq_find_from(const dmr_sim_eventq_t *q, uint32_t pos)
{
	uint32_t w = pos >> 6;
	uint64_t m = q->bits[w] & (~0ull << (pos & 63));
	if (m)
		return w * 64 + (uint32_t)__builtin_ctzll(m);
	w++;
	for (uint32_t sw = w >> 6; sw < DMR_SIM_EVQ_SLOTS / 4096; sw++) {
		uint64_t sm = q->sum[sw] & (~0ull << (w & 63));
		if (sm) {
			w = sw * 64 + (uint32_t)__builtin_ctzll(sm);
			return w * 64 + (uint32_t)__builtin_ctzll(q->bits[w]);
		}
		w = (sw + 1) * 64;
	}
	return DMR_SIM_EVQ_SLOTS;
}

/* The first occupied slot at or after slot pos in the wheel's circular
 * order (some slot is occupied): its events are due within one turn of the
 * current slot, so the first at or after pos, else the first from the
 * start. */
DMR_SIM_EVQ_INLINE uint32_t dmr_sim_eventq_next_slot(const dmr_sim_eventq_t *q, uint32_t pos)
{
	uint32_t s = dmr_sim_eventq_find_from(q, pos);
	return s < DMR_SIM_EVQ_SLOTS ? s : dmr_sim_eventq_find_from(q, 0);
}

DMR_SIM_EVQ_INLINE void dmr_sim_eventq_unpack(uint64_t t, uint64_t key, dmr_sim_event_t *out)
{
	out->t = t;
	out->seq = key >> DMR_SIM_EVQ_SEQ_SHIFT;
	out->type = (uint32_t)(key >> DMR_SIM_EVQ_ARG_BITS) & ((1u << DMR_SIM_EVQ_TYPE_BITS) - 1);
	out->arg = (uint32_t)key & DMR_SIM_EVQ_MAX_ARG;
}

/* Remove the earliest event into *ev. Returns 0 when empty, 1 otherwise. */
DMR_SIM_EVQ_INLINE int dmr_sim_eventq_pop(dmr_sim_eventq_t *q, dmr_sim_event_t *out)
{
	if (q->ht <= q->wt) { /* the heap's first, on a tie of times */
		if (!q->n) {
			if (!q->nwheel)
				return 0;
		} else if (q->ht < q->wt || !q->nwheel || q->heap[0].key < q->wkey) {
			dmr_sim_qent_t e = dmr_sim_eventq_pop_heap(q);
			dmr_sim_eventq_unpack(e.t, e.key, out);
			return 1;
		}
	}
	uint64_t t = q->wt, key = q->wkey;
	uint32_t si = q->first; /* kept by push and pop: no search here */
	dmr_sim_qslot_t *sl = &q->slot[si];
	uint32_t i = sl->head;
	dmr_sim_qnode_t *nd = &q->node[i];
	uint32_t nx = nd->next;
	sl->head = nx;
	if (nx == DMR_SIM_EVQ_NIL) {
		sl->tail = DMR_SIM_EVQ_NIL;
		q->bits[si >> 6] &= ~(1ull << (si & 63));
		if (!q->bits[si >> 6])
			q->sum[si >> 12] &= ~(1ull << ((si >> 6) & 63));
		if (q->nwheel > 1) { /* the next occupied slot (all are after si) */
			q->first = dmr_sim_eventq_next_slot(q, si);
			nx = q->slot[q->first].head;
		}
	}
	if (nx != DMR_SIM_EVQ_NIL) {
		q->wt = q->node[nx].t;
		q->wkey = q->node[nx].key;
	} else {
		q->wt = UINT64_MAX;
	}
	nd->next = q->nfree;
	q->nfree = i;
	q->nwheel--;
	q->last_t = t;
	q->cur = t >> DMR_SIM_EVQ_SLOT_SHIFT;
	dmr_sim_eventq_unpack(t, key, out);
	return 1;
}

/* Type and argument of the event that the next pop likely returns, as
 * type << DMR_SIM_EVQ_ARG_BITS | arg, or UINT32_MAX when the wheel is
 * empty: the wheel's first event (the heap is not looked at; no search).
 * To prefetch its records while the current event is handled. */
DMR_SIM_EVQ_INLINE uint32_t dmr_sim_eventq_peek_key(const dmr_sim_eventq_t *q)
{
	if (!q->nwheel)
		return DMR_SIM_EVQ_NIL;
	return (uint32_t)q->wkey & ((1u << DMR_SIM_EVQ_SEQ_SHIFT) - 1);
}

/* Time of the earliest event, UINT64_MAX when empty. Inline: the sim asks
 * it at every completion (sim.c complete_at). */
static inline uint64_t dmr_sim_eventq_peek_time(const dmr_sim_eventq_t *q)
{
	return q->wt < q->ht ? q->wt : q->ht;
}

/* Events pending. */
static inline uint32_t dmr_sim_eventq_size(const dmr_sim_eventq_t *q)
{
	return q->nwheel + q->n;
}

#endif
