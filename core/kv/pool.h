/*
 * core/kv/pool.h - the KV pool's metadata (the master's state).
 *
 * The pool is cut into `segments` equal segments (the registered regions
 * of the workers), each of `nslots` whole blocks of `block` bytes. A block
 * id maps to an entry: segment, slot, logical offset (segment x seg_stride
 * + slot x block, from the pool's start), state and pins. A lookup of an id
 * that is present pins it and makes it the most recently used; of one that
 * is not, allocates a slot (placement round-robin or least-loaded) as
 * PENDING (being written), pinned once. When a new block would take the
 * pool above the high-water mark, unpinned READY blocks are evicted in LRU
 * order down to the low-water mark; when no room can be made the put is
 * dropped (not stored). An unbounded pool never evicts.
 *
 * Request records (dmr_kv_preq_t) hold a request's entries between its
 * lookup and its end (the pins it holds).
 *
 * Counters (hits, puts, dropped, evictions) are stored with relaxed atomic
 * stores by the one thread that owns the pool and may be read by others
 * with dmr_kv_pool_count(); everything else belongs to the owning thread.
 * Part of core/kv (kv.h); no I/O, no clock.
 */
#ifndef DMR_CORE_KV_POOL_H
#define DMR_CORE_KV_POOL_H

#include <stdint.h>

#include "../base/status.h"
#include "kv.h"

typedef enum dmr_kv_place {
	DMR_KV_PLACE_RR = 0,	/* round-robin over segments with a free slot */
	DMR_KV_PLACE_LEAST = 1, /* the segment with the most free slots */
} dmr_kv_place_t;

typedef enum dmr_kv_estate {
	DMR_KV_E_FREE = 0,
	DMR_KV_E_PENDING = 1, /* allocated, its put not finished */
	DMR_KV_E_READY = 2,   /* its bytes are in the pool */
} dmr_kv_estate_t;

typedef struct dmr_kv_pentry {
	uint64_t id;
	uint64_t off;  /* logical offset from the pool's start, bytes */
	uint64_t slot; /* in its segment */
	uint32_t seg, pins;
	uint32_t prev, next; /* LRU list (head = least recently used); free list */
	uint32_t waiters;    /* the caller's: a list head, DMR_KV_NOIDX when new */
	uint8_t state;	     /* dmr_kv_estate_t */
} dmr_kv_pentry_t;

typedef struct dmr_kv_seg {
	uint64_t nslots, fresh, used; /* slots; never used so far: fresh.. */
	uint64_t stored, peak;	      /* blocks placed here over the run; most held at once */
	uint64_t *free;		      /* slots freed by eviction */
	uint64_t nfree, capfree;
} dmr_kv_seg_t;

/* A request's record: its blocks' entries, pinned until it ends. */
typedef struct dmr_kv_preq {
	uint64_t index; /* the trace's request index */
	uint32_t client, nblocks;
	uint32_t looked; /* blocks looked up so far (the master: chunked LOOKUPs) */
	uint32_t next;	 /* free list */
	uint32_t *ent;	 /* nblocks: entry, or DMR_KV_NOIDX for a dropped put */
	uint8_t *put;	 /* nblocks: 1 = this request writes the block */
	/* the caller's (the sim runner's), untouched by the pool */
	uint64_t t_arr;
	uint32_t gets_left, puts_left;
} dmr_kv_preq_t;

typedef struct dmr_kv_pool_cfg {
	uint32_t segments; /* >= 1 */
	uint64_t block;	   /* bytes per block, >= 1 */
	int unbounded;	   /* no capacity, no eviction */
	uint64_t capacity; /* bounded: bytes over all segments */
	double high_water; /* bounded: evict when a put would exceed this fraction */
	double low_water;  /* ... down to this fraction */
	dmr_kv_place_t placement;
	const char *name; /* the trace, named in messages */
	/* where the block size came from, named in messages (NULL: "trace
	 * header block_bytes"; the key/value store: its --block-bytes) */
	const char *block_from;
} dmr_kv_pool_cfg_t;

typedef struct dmr_kv_pool {
	dmr_kv_pool_cfg_t cfg;
	dmr_kv_pentry_t *e;
	uint32_t cape, efree;
	uint32_t *map; /* id -> entry: open addressing */
	uint64_t mapmask, mapn;
	uint32_t lru_head, lru_tail;
	dmr_kv_seg_t *seg;
	uint32_t nseg, rr;
	uint64_t block, seg_stride;				    /* bytes */
	uint64_t used, cap_slots, hw_slots, target_slots, max_used; /* slots */
	dmr_kv_preq_t *rq;
	uint32_t caprq, rqfree;
	/* counters: relaxed atomic stores (read them with dmr_kv_pool_count) */
	uint64_t requested, hits, puts, dropped, evictions;
} dmr_kv_pool_t;

typedef enum dmr_kv_hit {
	DMR_KV_HIT = 0,	 /* present: pinned, most recent (state READY or PENDING) */
	DMR_KV_PUT = 1,	 /* absent: a new PENDING entry, pinned once; the caller writes it */
	DMR_KV_DROP = 2, /* absent and no room: not stored (*ei_p = DMR_KV_NOIDX) */
} dmr_kv_hit_t;

/*
 * Size the pool. Bounded: capacity / segments per segment, in whole blocks;
 * high-water slots = floor(high_water x slots) (at least 1), target = floor(
 * low_water x slots) (below high water); *logical_p = slots x block bytes.
 * Unbounded: no limit, segments 2^50 bytes apart (*logical_p = 0: unknown;
 * dmr_kv_pool_size_unbounded gives them real sizes). Errors: DMR_ERR_RANGE
 * (a block larger than a segment, named with cfg->name), DMR_ERR_NOMEM.
 * The pool is usable only on DMR_OK; dmr_kv_pool_fini frees it either way.
 * cfg->name is borrowed (must outlive the pool).
 */
dmr_status_t dmr_kv_pool_init(dmr_kv_pool_t *p, const dmr_kv_pool_cfg_t *cfg, uint64_t *logical_p,
			      dmr_err_t *err);
/* An unbounded pool in real memory: `distinct` blocks spread evenly over
 * the segments (no eviction is needed). DMR_ERR_RANGE when a segment's bytes
 * overflow 64 bits. */
dmr_status_t dmr_kv_pool_size_unbounded(dmr_kv_pool_t *p, uint64_t distinct, dmr_err_t *err);
/* Free everything (also after a failed init; p zeroed or initialised). */
void dmr_kv_pool_fini(dmr_kv_pool_t *p);

/*
 * Look block `id` up for a request (counts it in requested, and in hits,
 * puts or dropped by the result): *kind_p and *ei_p (the entry; DMR_KV_NOIDX
 * for DMR_KV_DROP). A HIT is pinned once more; a PUT may evict first.
 * Errors: DMR_ERR_NOMEM (err says which table).
 */
dmr_status_t dmr_kv_pool_lookup(dmr_kv_pool_t *p, uint64_t id, dmr_kv_hit_t *kind_p, uint32_t *ei_p,
				dmr_err_t *err);
/* A prefetch (core/kv/prefetch.h) of block id: when it is present and
 * READY, pinned once and made the most recently used, *ei_p its entry,
 * returns 1; else 0, nothing changed. Counts nothing (not a request). */
int dmr_kv_pool_touch(dmr_kv_pool_t *p, uint64_t id, uint32_t *ei_p);
/* A request is done with entry ei: one pin less; put_done: its put has
 * finished (the block becomes READY: evictable once unpinned). */
void dmr_kv_pool_release(dmr_kv_pool_t *p, uint32_t ei, int put_done);

/* Free entry ei now, pinned or not (its slot back to its segment, its id
 * out of the map; not counted as an eviction): the key/value store
 * (store.h) frees a value's blocks this way when nothing refers to them. */
void dmr_kv_pool_remove(dmr_kv_pool_t *p, uint32_t ei);

/* A new request record for nblocks blocks (ent and put allocated, other
 * fields zero); DMR_KV_NOIDX when out of memory. Pointers into p->rq move
 * on the next call. */
uint32_t dmr_kv_pool_rq_new(dmr_kv_pool_t *p, uint32_t nblocks);
/* Free request record ri (its pins are the caller's to release first). */
void dmr_kv_pool_rq_free(dmr_kv_pool_t *p, uint32_t ri);

/* 1 when the pool's invariants hold at the end of a run: no pins left, the
 * segments' used slots add up to used, every used slot is mapped, and a
 * bounded pool never went above high water; else 0. *pinned_p and
 * *segused_p (either may be NULL) get the pins and the segments' sum. */
int dmr_kv_pool_consistent(const dmr_kv_pool_t *p, uint64_t *pinned_p, uint64_t *segused_p);
/* Blocks placed per segment over the run (fewest, most) and most held at
 * once (fewest, most over the segments); 0 with no segments. */
void dmr_kv_pool_seg_stats(const dmr_kv_pool_t *p, uint64_t *blocks_min, uint64_t *blocks_max,
			   uint64_t *peak_min, uint64_t *peak_max);

/* Read a counter of p (requested, hits, ...) from any thread. */
static inline uint64_t dmr_kv_pool_count(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif /* DMR_CORE_KV_POOL_H */
