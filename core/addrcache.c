/*
 * core/addrcache.c - bounded LRU address cache (addrcache.h): entries in an
 * array with a doubly linked recency list, found through an open-addressing
 * table (linear probing, backward-shift deletion: no tombstones).
 */
#include "addrcache.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/hash.h"

#define NIL UINT32_MAX

typedef struct ent {
	uint64_t key, addr;
	uint32_t prev, next; /* recency list: head most recent */
} ent_t;

struct dmr_acache {
	pthread_mutex_t mu;
	ent_t *e;
	uint32_t *tab; /* entry index + 1; 0 empty */
	uint64_t mask; /* table size - 1 (a power of two >= 2 cap) */
	uint32_t cap, n, head, tail;
};

static uint64_t tab_size(uint64_t cap)
{
	uint64_t s = 16;
	while (s < 2 * cap)
		s <<= 1;
	return s;
}

uint64_t dmr_acache_bytes(uint64_t cap)
{
	return sizeof(struct dmr_acache) + cap * sizeof(ent_t) + tab_size(cap) * sizeof(uint32_t);
}

dmr_status_t dmr_acache_create(uint64_t cap, dmr_acache_t **c_p, dmr_err_t *err)
{
	if (cap < 1 || cap > (1ull << 31))
		return dmr_err_set(err, DMR_ERR_RANGE, "--addr-cache %llu: 1..2^31 entries",
				   (unsigned long long)cap);
	dmr_acache_t *c = calloc(1, sizeof(*c));
	uint64_t ts = tab_size(cap);
	if (c) {
		c->e = malloc(cap * sizeof(ent_t));
		c->tab = calloc(ts, sizeof(uint32_t));
	}
	if (!c || !c->e || !c->tab) {
		if (c) {
			free(c->e);
			free(c->tab);
		}
		free(c);
		return dmr_err_set(err, DMR_ERR_NOMEM, "address cache: out of memory (%llu bytes)",
				   (unsigned long long)dmr_acache_bytes(cap));
	}
	pthread_mutex_init(&c->mu, NULL);
	c->mask = ts - 1;
	c->cap = (uint32_t)cap;
	c->head = c->tail = NIL;
	*c_p = c;
	return DMR_OK;
}

void dmr_acache_destroy(dmr_acache_t *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c->e);
	free(c->tab);
	free(c);
}

static inline uint64_t slot_of(const dmr_acache_t *c, uint64_t key)
{
	return dmr_mix64(key) & c->mask;
}

/* Table position of key, or the empty position where it would go. */
static uint64_t find(const dmr_acache_t *c, uint64_t key)
{
	uint64_t p = slot_of(c, key);
	while (c->tab[p] && c->e[c->tab[p] - 1].key != key)
		p = (p + 1) & c->mask;
	return p;
}

static void unlink_e(dmr_acache_t *c, uint32_t i)
{
	ent_t *e = &c->e[i];
	if (e->prev != NIL)
		c->e[e->prev].next = e->next;
	else
		c->head = e->next;
	if (e->next != NIL)
		c->e[e->next].prev = e->prev;
	else
		c->tail = e->prev;
}

static void push_front(dmr_acache_t *c, uint32_t i)
{
	ent_t *e = &c->e[i];
	e->prev = NIL;
	e->next = c->head;
	if (c->head != NIL)
		c->e[c->head].prev = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

/* Remove the table entry at position p (backward shift). */
static void tab_del(dmr_acache_t *c, uint64_t p)
{
	uint64_t q = p;
	for (;;) {
		q = (q + 1) & c->mask;
		if (!c->tab[q])
			break;
		uint64_t h = slot_of(c, c->e[c->tab[q] - 1].key);
		/* move q back to p unless its home lies cyclically in (p, q] */
		if ((q > p && (h <= p || h > q)) || (q < p && h <= p && h > q)) {
			c->tab[p] = c->tab[q];
			p = q;
		}
	}
	c->tab[p] = 0;
}

int dmr_acache_get(dmr_acache_t *c, uint64_t key, uint64_t *addr_p)
{
	pthread_mutex_lock(&c->mu);
	uint64_t p = find(c, key);
	int hit = c->tab[p] != 0;
	if (hit) {
		uint32_t i = c->tab[p] - 1;
		*addr_p = c->e[i].addr;
		unlink_e(c, i);
		push_front(c, i);
	}
	pthread_mutex_unlock(&c->mu);
	return hit;
}

void dmr_acache_put(dmr_acache_t *c, uint64_t key, uint64_t addr)
{
	pthread_mutex_lock(&c->mu);
	uint64_t p = find(c, key);
	uint32_t i;
	if (c->tab[p]) {
		i = c->tab[p] - 1;
		unlink_e(c, i);
	} else {
		if (c->n < c->cap) {
			i = c->n++;
		} else { /* evict the least recent */
			i = c->tail;
			unlink_e(c, i);
			tab_del(c, find(c, c->e[i].key));
			p = find(c, key);
		}
		c->tab[p] = i + 1;
		c->e[i].key = key;
	}
	c->e[i].addr = addr;
	push_front(c, i);
	pthread_mutex_unlock(&c->mu);
}

uint64_t dmr_acache_size(dmr_acache_t *c)
{
	pthread_mutex_lock(&c->mu);
	uint64_t n = c->n;
	pthread_mutex_unlock(&c->mu);
	return n;
}
