/*
 * core/txn_cncache.c - the CN record cache of occ, ford, farm and drtmh
 * (core/txn_cncache.h; issue 14 lever A3): the cache itself (sets of
 * DMR_CNCACHE_WAYS ways, LRU, striped mutexes when shared) and the
 * context's steps: a hit in execution, the stale check at validation, the
 * puts and drops of a commit.
 */
#include "txn_cncache.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/hash.h"
#include "txn_impl.h"

typedef struct cset {
	uint64_t key[DMR_CNCACHE_WAYS];	  /* record offset + 1; 0 = empty */
	uint32_t stamp[DMR_CNCACHE_WAYS]; /* the set's clock at the way's last use */
	uint32_t clock;
} cset_t;

struct dmr_cncache {
	uint32_t nsets, slot;
	int shared;
	cset_t *set;
	uint8_t *img; /* nsets x WAYS x slot bytes */
	pthread_mutex_t mu[DMR_CNCACHE_STRIPES];
};

static uint32_t nsets_of(uint32_t entries)
{
	return (entries + DMR_CNCACHE_WAYS - 1) / DMR_CNCACHE_WAYS;
}

uint64_t dmr_cncache_bytes(uint32_t entries, uint32_t slot_bytes)
{
	uint64_t s = nsets_of(entries);
	return sizeof(dmr_cncache_t) + s * sizeof(cset_t) + s * DMR_CNCACHE_WAYS * slot_bytes;
}

dmr_status_t dmr_cncache_create(uint32_t entries, uint32_t slot_bytes, int shared,
				dmr_cncache_t **kp, dmr_err_t *err)
{
	if (entries < 1 || entries > DMR_CNCACHE_MAX_ENTRIES)
		return dmr_err_set(err, DMR_ERR_RANGE, "--cn-cache-entries %u: 1..%u", entries,
				   DMR_CNCACHE_MAX_ENTRIES);
	if (slot_bytes < DMR_REC_HDR || slot_bytes > (1u << 20))
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "CN record cache: records of %u bytes (16 .. 1 MiB)",
				   slot_bytes);
	dmr_cncache_t *k = calloc(1, sizeof(*k));
	if (k) {
		k->nsets = nsets_of(entries);
		k->slot = slot_bytes;
		k->shared = shared;
		k->set = calloc(k->nsets, sizeof(*k->set));
		k->img = malloc((size_t)k->nsets * DMR_CNCACHE_WAYS * slot_bytes);
	}
	if (!k || !k->set || !k->img) {
		if (k) {
			free(k->set);
			free(k->img);
		}
		free(k);
		return dmr_err_set(err, DMR_ERR_NOMEM,
				   "CN record cache: out of memory (%llu bytes)",
				   (unsigned long long)dmr_cncache_bytes(entries, slot_bytes));
	}
	for (uint32_t m = 0; m < DMR_CNCACHE_STRIPES; m++)
		pthread_mutex_init(&k->mu[m], NULL);
	*kp = k;
	return DMR_OK;
}

void dmr_cncache_destroy(dmr_cncache_t *k)
{
	if (!k)
		return;
	for (uint32_t m = 0; m < DMR_CNCACHE_STRIPES; m++)
		pthread_mutex_destroy(&k->mu[m]);
	free(k->set);
	free(k->img);
	free(k);
}

uint32_t dmr_cncache_capacity(const dmr_cncache_t *k)
{
	return k->nsets * DMR_CNCACHE_WAYS;
}

/* The set of rec: the high half of its mix scaled to nsets (Lemire's
 * multiply-shift range reduction: no division, any nsets). */
static inline uint32_t set_of(const dmr_cncache_t *k, uint64_t rec)
{
	return (uint32_t)(((dmr_mix64(rec) >> 32) * k->nsets) >> 32);
}

static inline void lock_set(dmr_cncache_t *k, uint32_t s)
{
	if (k->shared)
		pthread_mutex_lock(&k->mu[s % DMR_CNCACHE_STRIPES]);
}

static inline void unlock_set(dmr_cncache_t *k, uint32_t s)
{
	if (k->shared)
		pthread_mutex_unlock(&k->mu[s % DMR_CNCACHE_STRIPES]);
}

static inline uint8_t *slot_img(const dmr_cncache_t *k, uint32_t s, uint32_t w)
{
	return k->img + ((size_t)s * DMR_CNCACHE_WAYS + w) * k->slot;
}

uint32_t dmr_cncache_size(dmr_cncache_t *k)
{
	uint32_t n = 0;
	for (uint32_t s = 0; s < k->nsets; s++) {
		lock_set(k, s);
		for (uint32_t w = 0; w < DMR_CNCACHE_WAYS; w++)
			n += k->set[s].key[w] != 0;
		unlock_set(k, s);
	}
	return n;
}

void dmr_cncache_clear(dmr_cncache_t *k)
{
	for (uint32_t s = 0; s < k->nsets; s++) {
		lock_set(k, s);
		memset(&k->set[s], 0, sizeof(k->set[s]));
		unlock_set(k, s);
	}
}

int dmr_cncache_get(dmr_cncache_t *k, uint64_t rec, uint8_t *dst, uint32_t bytes)
{
	uint32_t s = set_of(k, rec);
	cset_t *e = &k->set[s];
	int hit = 0;
	lock_set(k, s);
	for (uint32_t w = 0; w < DMR_CNCACHE_WAYS; w++)
		if (e->key[w] == rec + 1) {
			memcpy(dst, slot_img(k, s, w), bytes);
			e->stamp[w] = ++e->clock;
			hit = 1;
			break;
		}
	unlock_set(k, s);
	return hit;
}

void dmr_cncache_put(dmr_cncache_t *k, uint64_t rec, const uint8_t *img, uint32_t bytes)
{
	uint32_t s = set_of(k, rec);
	cset_t *e = &k->set[s];
	lock_set(k, s);
	uint32_t v = DMR_CNCACHE_WAYS, old = 0;
	for (uint32_t w = 0; w < DMR_CNCACHE_WAYS; w++)
		if (e->key[w] == rec + 1) {
			v = w;
			break;
		}
	if (v < DMR_CNCACHE_WAYS) {
		/* versions only grow: a newer image stays */
		if ((rd64(slot_img(k, s, v) + 8) & DMR_VER_MASK) > (rd64(img + 8) & DMR_VER_MASK))
			goto out;
	} else {
		/* an empty way, else the least recently used (stamps are
		 * compared relative to the clock: wraps at 2^32 uses) */
		v = 0;
		for (uint32_t w = 0; w < DMR_CNCACHE_WAYS; w++) {
			if (!e->key[w]) {
				v = w;
				break;
			}
			uint32_t age = e->clock - e->stamp[w];
			if (age > old) {
				old = age;
				v = w;
			}
		}
	}
	e->key[v] = rec + 1;
	e->stamp[v] = ++e->clock;
	memcpy(slot_img(k, s, v), img, bytes);
out:
	unlock_set(k, s);
}

void dmr_cncache_drop(dmr_cncache_t *k, uint64_t rec)
{
	uint32_t s = set_of(k, rec);
	cset_t *e = &k->set[s];
	lock_set(k, s);
	for (uint32_t w = 0; w < DMR_CNCACHE_WAYS; w++)
		if (e->key[w] == rec + 1)
			e->key[w] = 0;
	unlock_set(k, s);
}

void dmr_txn_cncache_set_tables(dmr_txn_engine_t *eng, uint32_t mask)
{
	__atomic_store_n(&eng->cn_cache_tables, mask, __ATOMIC_RELAXED);
}

uint32_t dmr_txn_cncache_tables(const dmr_txn_engine_t *eng)
{
	return __atomic_load_n(&eng->cn_cache_tables, __ATOMIC_RELAXED);
}

/* ---- the context's steps (txn_impl.h) ----------------------------------- */

static inline dmr_cncache_t *cache_of(const dmr_txn_ctx_t *c)
{
	const dmr_txn_engine_t *e = c->eng;
	return e->cncache[c->worker / (e->workers_per_cn ? e->workers_per_cn : 1)];
}

uint32_t dmr_txn_cnc_mask(const dmr_txn_ctx_t *c)
{
	const dmr_txn_engine_t *e = c->eng;
	if (e->protocol == DMR_TXN_PROTO_CREST || e->protocol == DMR_TXN_PROTO_MOTOR)
		return 0;
	return dmr_txn_cncache_tables(e);
}

int dmr_txn_cnc_hit(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
	dmr_cncache_t *k = cache_of(c);
	if (op->count != 1 || !k || rb > k->slot)
		return 0;
	uint8_t *img = image(c, i);
	if (!dmr_cncache_get(k, c->ops[i].rec, img, rb)) {
		if (c->xstats) {
			c->xstats->cn_cache_misses++;
			c->xstats->cn_cache_misses_by_table[op->table]++;
		}
		return 0;
	}
	if (c->crest_hits == 0) /* the attempt's first hit */
		memset(c->cnc_hit, 0, sizeof(c->cnc_hit));
	c->cnc_hit[i >> 6] |= 1ull << (i & 63);
	c->crest_hits++;
	if (!(rd64(img + 8) & DMR_VER_PRESENT))
		c->ops[i].flags |= F_ABSENT;
	if (c->xstats) {
		c->xstats->cn_cache_hits++;
		c->xstats->cn_cache_hits_by_table[op->table]++;
	}
	return 1;
}

static inline int was_hit(const dmr_txn_ctx_t *c, uint32_t i)
{
	return c->crest_hits && (c->cnc_hit[i >> 6] >> (i & 63) & 1);
}

int dmr_txn_cnc_stale(dmr_txn_ctx_t *c)
{
	const dmr_trace_txn_t *t = c->txn;
	for (uint32_t i = 0; i < t->nops; i++) {
		if (!was_hit(c, i) || !validated_read(c, &t->ops[i], i))
			continue;
		uint32_t rb = c->eng->layout->t[t->ops[i].table].rec_bytes;
		const uint8_t *img = c->buf + c->ops[i].buf;
		/* the version word READ at validation (one record: its header
		 * lands after the image) against the cached one */
		if (rd64(img + rb + 8) != rd64(img + 8)) {
			dmr_cncache_drop(cache_of(c), c->ops[i].rec);
			if (c->xstats)
				c->xstats->cn_cache_stale_by_table[t->ops[i].table]++;
			return 1;
		}
	}
	return 0;
}

void dmr_txn_cnc_fill(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
	dmr_cncache_t *k = cache_of(c);
	const uint8_t *img = c->buf + c->ops[i].buf;
	/* unlocked: FORD reads a record locked but visible, whose image is
	 * not put (its writer may be about to change it) */
	if (!k || op->count != 1 || rb > k->slot || was_hit(c, i) || rd64(img) != 0)
		return;
	dmr_cncache_put(k, c->ops[i].rec, img, rb);
}

void dmr_txn_cnc_commit(dmr_txn_ctx_t *c)
{
	const dmr_trace_txn_t *t = c->txn;
	dmr_cncache_t *k = cache_of(c);
	if (!k)
		return;
	/* written back: the old image is gone */
	for (uint32_t i = 0; i < t->nops; i++)
		if (c->ops[i].flags & F_APPLIED)
			dmr_cncache_drop(k, c->ops[i].rec);
}
