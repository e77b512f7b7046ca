/* core/kv/pool.c - the KV pool's metadata: block map, LRU, placement,
 * eviction, request records (pool.h). */
#include "pool.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NOIDX DMR_KV_NOIDX

/* one writer (the pool's thread); other threads read with dmr_kv_pool_count */
static inline void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

dmr_status_t dmr_kv_pool_init(dmr_kv_pool_t *p, const dmr_kv_pool_cfg_t *cfg, uint64_t *logical_p,
			      dmr_err_t *err)
{
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->efree = p->rqfree = NOIDX;
	p->lru_head = p->lru_tail = NOIDX;
	p->block = cfg->block;
	p->nseg = cfg->segments;
	p->seg = calloc(p->nseg, sizeof(*p->seg));
	if (!p->seg)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	if (cfg->unbounded) {
		p->seg_stride = 1ull << 50;
		for (uint32_t s = 0; s < p->nseg; s++)
			p->seg[s].nslots = UINT64_MAX;
		p->cap_slots = p->hw_slots = p->target_slots = UINT64_MAX;
		*logical_p = 0; /* unknown: fold */
		return DMR_OK;
	}
	uint64_t per_seg = cfg->capacity / p->nseg;
	if (per_seg < p->block)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%s: a block of %" PRIu64 " bytes (%s) is "
				   "larger than a segment: --capacity %" PRIu64
				   " / %u segments = %" PRIu64 " bytes",
				   cfg->name, p->block,
				   cfg->block_from ? cfg->block_from : "trace header block_bytes",
				   cfg->capacity, p->nseg, per_seg);
	uint64_t slots = per_seg / p->block;
	p->seg_stride = slots * p->block;
	for (uint32_t s = 0; s < p->nseg; s++)
		p->seg[s].nslots = slots;
	p->cap_slots = slots * p->nseg;
	p->hw_slots = (uint64_t)floor(cfg->high_water * (double)p->cap_slots);
	if (p->hw_slots == 0)
		p->hw_slots = 1;
	p->target_slots = (uint64_t)floor(cfg->low_water * (double)p->cap_slots);
	if (p->target_slots >= p->hw_slots)
		p->target_slots = p->hw_slots - 1;
	*logical_p = p->cap_slots * p->block;
	return DMR_OK;
}

dmr_status_t dmr_kv_pool_size_unbounded(dmr_kv_pool_t *p, uint64_t distinct, dmr_err_t *err)
{
	uint64_t per = (distinct + p->nseg - 1) / p->nseg;
	if (per == 0)
		per = 1;
	for (uint32_t s = 0; s < p->nseg; s++)
		p->seg[s].nslots = per;
	if (__builtin_mul_overflow(per, p->block, &p->seg_stride))
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%s: a segment of %" PRIu64 " blocks of %" PRIu64
				   " bytes (trace header block_bytes) overflows 64 bits",
				   p->cfg.name, per, p->block);
	return DMR_OK;
}

void dmr_kv_pool_fini(dmr_kv_pool_t *p)
{
	for (uint32_t i = 0; i < p->caprq; i++) {
		free(p->rq[i].ent);
		free(p->rq[i].put);
	}
	for (uint32_t s = 0; p->seg && s < p->nseg; s++)
		free(p->seg[s].free);
	free(p->rq);
	free(p->e);
	free(p->map);
	free(p->seg);
	memset(p, 0, sizeof(*p));
}

/* -- block map: id -> entry, linear probing, backward-shift deletion -- */

static uint32_t map_find(const dmr_kv_pool_t *p, uint64_t id)
{
	if (!p->map)
		return NOIDX;
	uint64_t h = dmr_kv_mix64(id) & p->mapmask;
	for (;;) {
		uint32_t i = p->map[h];
		if (i == NOIDX || p->e[i].id == id)
			return i;
		h = (h + 1) & p->mapmask;
	}
}

static int map_grow(dmr_kv_pool_t *p)
{
	uint64_t cap = p->map ? (p->mapmask + 1) * 2 : 4096;
	uint32_t *m = malloc(cap * sizeof(*m));
	if (!m)
		return -1;
	for (uint64_t i = 0; i < cap; i++)
		m[i] = NOIDX;
	for (uint64_t i = 0; p->map && i <= p->mapmask; i++) {
		uint32_t x = p->map[i];
		if (x == NOIDX)
			continue;
		uint64_t h = dmr_kv_mix64(p->e[x].id) & (cap - 1);
		while (m[h] != NOIDX)
			h = (h + 1) & (cap - 1);
		m[h] = x;
	}
	free(p->map);
	p->map = m;
	p->mapmask = cap - 1;
	return 0;
}

static int map_insert(dmr_kv_pool_t *p, uint32_t idx)
{
	if (!p->map || (p->mapn + 1) * 2 > p->mapmask + 1) {
		if (map_grow(p) != 0)
			return -1;
	}
	uint64_t h = dmr_kv_mix64(p->e[idx].id) & p->mapmask;
	while (p->map[h] != NOIDX)
		h = (h + 1) & p->mapmask;
	p->map[h] = idx;
	p->mapn++;
	return 0;
}

static void map_remove(dmr_kv_pool_t *p, uint64_t id)
{
	uint64_t mask = p->mapmask, i = dmr_kv_mix64(id) & mask;
	while (p->map[i] != NOIDX && p->e[p->map[i]].id != id)
		i = (i + 1) & mask;
	if (p->map[i] == NOIDX)
		return;
	uint64_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (p->map[j] == NOIDX)
			break;
		uint64_t home = dmr_kv_mix64(p->e[p->map[j]].id) & mask;
		/* move j back to i unless its home lies cyclically in (i, j] */
		int in = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!in) {
			p->map[i] = p->map[j];
			i = j;
		}
	}
	p->map[i] = NOIDX;
	p->mapn--;
}

/* -- LRU -- */

static void lru_unlink(dmr_kv_pool_t *p, uint32_t i)
{
	dmr_kv_pentry_t *e = &p->e[i];
	if (e->prev != NOIDX)
		p->e[e->prev].next = e->next;
	else
		p->lru_head = e->next;
	if (e->next != NOIDX)
		p->e[e->next].prev = e->prev;
	else
		p->lru_tail = e->prev;
	e->prev = e->next = NOIDX;
}

static void lru_append(dmr_kv_pool_t *p, uint32_t i)
{
	dmr_kv_pentry_t *e = &p->e[i];
	e->next = NOIDX;
	e->prev = p->lru_tail;
	if (p->lru_tail != NOIDX)
		p->e[p->lru_tail].next = i;
	else
		p->lru_head = i;
	p->lru_tail = i;
}

/* -- slots and entries -- */

static void slot_free(dmr_kv_pool_t *p, uint32_t s, uint64_t slot)
{
	dmr_kv_seg_t *g = &p->seg[s];
	if (g->nfree == g->capfree) {
		uint64_t cap = g->capfree ? g->capfree * 2 : 256;
		uint64_t *f = realloc(g->free, cap * sizeof(*f));
		if (!f)
			return; /* the slot is lost to the pool: only less capacity */
		g->free = f;
		g->capfree = cap;
	}
	g->free[g->nfree++] = slot;
	g->used--;
	p->used--;
}

static int seg_has_room(const dmr_kv_seg_t *g)
{
	return g->used < g->nslots;
}

/* Placement: the segment for the next block, or -1 when all are full. */
static int place(dmr_kv_pool_t *p)
{
	if (p->cfg.placement == DMR_KV_PLACE_LEAST) {
		int best = -1;
		for (uint32_t s = 0; s < p->nseg; s++)
			if (seg_has_room(&p->seg[s]) &&
			    (best < 0 || p->seg[s].used < p->seg[best].used))
				best = (int)s;
		return best;
	}
	for (uint32_t i = 0; i < p->nseg; i++) {
		uint32_t s = (p->rr + i) % p->nseg;
		if (seg_has_room(&p->seg[s])) {
			p->rr = (s + 1) % p->nseg;
			return (int)s;
		}
	}
	return -1;
}

static void evict_one(dmr_kv_pool_t *p, uint32_t i)
{
	dmr_kv_pentry_t *e = &p->e[i];
	lru_unlink(p, i);
	map_remove(p, e->id);
	slot_free(p, e->seg, e->slot);
	e->state = DMR_KV_E_FREE;
	e->next = p->efree;
	p->efree = i;
	cnt_add(&p->evictions, 1);
}

/* Evict unpinned blocks in LRU order while more than `target` are used. */
static void evict_to(dmr_kv_pool_t *p, uint64_t target)
{
	uint32_t i = p->lru_head;
	while (p->used > target && i != NOIDX) {
		uint32_t nx = p->e[i].next;
		if (p->e[i].pins == 0 && p->e[i].state == DMR_KV_E_READY)
			evict_one(p, i);
		i = nx;
	}
}

/* Allocate an entry for a new block (PENDING, pinned once, most recent).
 * NOIDX with DMR_OK in *st_p when no room could be made (put dropped). */
static uint32_t entry_new(dmr_kv_pool_t *p, uint64_t id, dmr_status_t *st_p, dmr_err_t *err)
{
	*st_p = DMR_OK;
	if (!p->cfg.unbounded && p->used + 1 > p->hw_slots)
		evict_to(p, p->target_slots);
	if (!p->cfg.unbounded && p->used + 1 > p->hw_slots)
		return NOIDX;
	int s = place(p);
	if (s < 0)
		return NOIDX;
	uint32_t i;
	dmr_kv_pentry_t *e = dmr_kv_list_take(p->e, &p->cape, &p->efree, sizeof(*e),
					      offsetof(dmr_kv_pentry_t, next), 4096, &i);
	if (!e) {
		*st_p = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (pool entries)");
		return NOIDX;
	}
	p->e = e;
	e = &p->e[i];
	dmr_kv_seg_t *g = &p->seg[s];
	e->id = id;
	e->seg = (uint32_t)s;
	e->slot = g->nfree ? g->free[--g->nfree] : g->fresh++;
	e->off = (uint64_t)s * p->seg_stride + e->slot * p->block;
	e->pins = 1;
	e->waiters = NOIDX;
	e->state = DMR_KV_E_PENDING;
	g->used++;
	g->stored++;
	if (g->used > g->peak)
		g->peak = g->used;
	p->used++;
	if (p->used > p->max_used)
		p->max_used = p->used;
	lru_append(p, i);
	if (map_insert(p, i) != 0) {
		*st_p = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (block map)");
		return NOIDX;
	}
	return i;
}

dmr_status_t dmr_kv_pool_lookup(dmr_kv_pool_t *p, uint64_t id, dmr_kv_hit_t *kind_p, uint32_t *ei_p,
				dmr_err_t *err)
{
	uint32_t ei = map_find(p, id);
	p->requested++;
	if (ei != NOIDX) {
		p->e[ei].pins++;
		lru_unlink(p, ei);
		lru_append(p, ei);
		cnt_add(&p->hits, 1);
		*kind_p = DMR_KV_HIT;
		*ei_p = ei;
		return DMR_OK;
	}
	dmr_status_t st;
	ei = entry_new(p, id, &st, err);
	if (st != DMR_OK)
		return st;
	if (ei == NOIDX) {
		cnt_add(&p->dropped, 1);
		*kind_p = DMR_KV_DROP;
	} else {
		cnt_add(&p->puts, 1);
		*kind_p = DMR_KV_PUT;
	}
	*ei_p = ei;
	return DMR_OK;
}

int dmr_kv_pool_touch(dmr_kv_pool_t *p, uint64_t id, uint32_t *ei_p)
{
	uint32_t ei = map_find(p, id);
	if (ei == NOIDX || p->e[ei].state != DMR_KV_E_READY)
		return 0;
	p->e[ei].pins++;
	lru_unlink(p, ei);
	lru_append(p, ei);
	*ei_p = ei;
	return 1;
}

void dmr_kv_pool_release(dmr_kv_pool_t *p, uint32_t ei, int put_done)
{
	p->e[ei].pins--;
	if (put_done)
		p->e[ei].state = DMR_KV_E_READY;
}

void dmr_kv_pool_remove(dmr_kv_pool_t *p, uint32_t ei)
{
	dmr_kv_pentry_t *e = &p->e[ei];
	lru_unlink(p, ei);
	map_remove(p, e->id);
	slot_free(p, e->seg, e->slot);
	e->state = DMR_KV_E_FREE;
	e->pins = 0;
	e->next = p->efree;
	p->efree = ei;
}

/* -- request records -- */

uint32_t dmr_kv_pool_rq_new(dmr_kv_pool_t *p, uint32_t nblocks)
{
	uint32_t *ent = malloc((nblocks ? nblocks : 1) * sizeof(uint32_t)), i;
	uint8_t *put = malloc(nblocks ? nblocks : 1);
	dmr_kv_preq_t *r = NULL;
	if (ent && put)
		r = dmr_kv_list_take(p->rq, &p->caprq, &p->rqfree, sizeof(*r),
				     offsetof(dmr_kv_preq_t, next), 256, &i);
	if (!r) {
		free(ent);
		free(put);
		return NOIDX;
	}
	p->rq = r;
	r[i].nblocks = nblocks;
	r[i].next = NOIDX;
	r[i].ent = ent;
	r[i].put = put;
	return i;
}

void dmr_kv_pool_rq_free(dmr_kv_pool_t *p, uint32_t i)
{
	dmr_kv_preq_t *r = &p->rq[i];
	free(r->ent);
	free(r->put);
	r->ent = NULL;
	r->put = NULL;
	r->next = p->rqfree;
	p->rqfree = i;
}

int dmr_kv_pool_consistent(const dmr_kv_pool_t *p, uint64_t *pinned_p, uint64_t *segused_p)
{
	uint64_t pinned = 0, segused = 0;
	for (uint32_t i = 0; i < p->cape; i++)
		if (p->e[i].state != DMR_KV_E_FREE)
			pinned += p->e[i].pins;
	for (uint32_t s = 0; p->seg && s < p->nseg; s++)
		segused += p->seg[s].used;
	if (pinned_p)
		*pinned_p = pinned;
	if (segused_p)
		*segused_p = segused;
	return !(pinned || segused != p->used || p->used != p->mapn ||
		 (!p->cfg.unbounded && p->max_used > p->hw_slots));
}

void dmr_kv_pool_seg_stats(const dmr_kv_pool_t *p, uint64_t *blocks_min, uint64_t *blocks_max,
			   uint64_t *peak_min, uint64_t *peak_max)
{
	*blocks_min = *blocks_max = *peak_min = *peak_max = 0;
	for (uint32_t s = 0; p->seg && s < p->nseg; s++) {
		const dmr_kv_seg_t *g = &p->seg[s];
		if (s == 0 || g->stored < *blocks_min)
			*blocks_min = g->stored;
		if (g->stored > *blocks_max)
			*blocks_max = g->stored;
		if (s == 0 || g->peak < *peak_min)
			*peak_min = g->peak;
		if (g->peak > *peak_max)
			*peak_max = g->peak;
	}
}
