/*
 * core/kv/prefetch.c - Loop X's predictor, prefetch buffers and rule (see
 * prefetch.h).
 */
#include "prefetch.h"

#include <stdlib.h>
#include <string.h>

/* successor map: open addressing, key id + 1 (0 = empty) */
typedef struct sent {
	uint64_t key, next;
} sent_t;

/* a buffered prefetch */
typedef struct bent {
	uint64_t id;
	uint8_t ready, used;
} bent_t;

typedef struct pbuf {
	bent_t *e; /* ring of cfg.buffer */
	uint32_t head, n;
} pbuf_t;

struct dmr_kv_pf {
	dmr_kv_pf_cfg_t cfg;
	sent_t *m;
	uint64_t mask, mn;
	pbuf_t *b;
	uint32_t nc;
	uint32_t depth, max_seen;
	double prev, signal;
	uint64_t last_req, last_hit;
	uint64_t issued, used, wasted;
	uint64_t w_issued0, w_used0; /* at the window's start */
	uint64_t windows, up, down;
};

void dmr_kv_pf_cfg_default(dmr_kv_pf_cfg_t *c)
{
	c->max_depth = 8;
	c->buffer = 64;
	c->use_min = 0.5;
}

dmr_status_t dmr_kv_pf_create(const dmr_kv_pf_cfg_t *cfg, uint32_t nclients, dmr_kv_pf_t **pf_p,
			      dmr_err_t *err)
{
	dmr_kv_pf_t *p = calloc(1, sizeof(*p));
	if (!p)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv prefetch: out of memory");
	p->cfg = *cfg;
	if (p->cfg.buffer == 0)
		p->cfg.buffer = 1;
	p->nc = nclients;
	p->prev = -1;
	p->mask = 1023;
	p->m = calloc(p->mask + 1, sizeof(*p->m));
	p->b = calloc(nclients ? nclients : 1, sizeof(*p->b));
	if (!p->m || !p->b)
		goto nomem;
	for (uint32_t c = 0; c < nclients; c++)
		if (!(p->b[c].e = calloc(p->cfg.buffer, sizeof(bent_t))))
			goto nomem;
	*pf_p = p;
	return DMR_OK;
nomem:
	dmr_kv_pf_destroy(p);
	return dmr_err_set(err, DMR_ERR_NOMEM, "kv prefetch: out of memory");
}

void dmr_kv_pf_destroy(dmr_kv_pf_t *p)
{
	if (!p)
		return;
	if (p->b)
		for (uint32_t c = 0; c < p->nc; c++)
			free(p->b[c].e);
	free(p->b);
	free(p->m);
	free(p);
}

static inline uint64_t hash(uint64_t k)
{
	return k * 0x9E3779B97F4A7C15ull;
}

static sent_t *slot(const dmr_kv_pf_t *p, uint64_t id)
{
	uint64_t k = id + 1;
	for (uint64_t i = hash(k) >> 20 & p->mask;; i = (i + 1) & p->mask)
		if (p->m[i].key == k || p->m[i].key == 0)
			return &p->m[i];
}

static int grow(dmr_kv_pf_t *p)
{
	uint64_t om = p->mask;
	sent_t *old = p->m;
	sent_t *n = calloc((om + 1) * 2, sizeof(*n));
	if (!n)
		return -1;
	p->m = n;
	p->mask = om * 2 + 1;
	for (uint64_t i = 0; i <= om; i++)
		if (old[i].key)
			*slot(p, old[i].key - 1) = old[i];
	free(old);
	return 0;
}

int dmr_kv_pf_learn(dmr_kv_pf_t *p, const uint64_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i + 1 < n; i++) {
		if ((p->mn + 1) * 2 > p->mask + 1 && grow(p) != 0)
			return -1;
		sent_t *s = slot(p, ids[i]);
		if (!s->key) {
			s->key = ids[i] + 1;
			p->mn++;
		}
		s->next = ids[i + 1];
	}
	return 0;
}

uint32_t dmr_kv_pf_predict(const dmr_kv_pf_t *p, uint64_t last, uint32_t depth, uint64_t *out)
{
	uint32_t n = 0;
	uint64_t id = last;
	while (n < depth) {
		const sent_t *s = slot(p, id);
		if (!s->key)
			break;
		id = s->next;
		for (uint32_t i = 0; i < n; i++)
			if (out[i] == id) /* a cycle: stop */
				return n;
		if (id == last)
			return n;
		out[n++] = id;
	}
	return n;
}

static bent_t *find(const dmr_kv_pf_t *p, uint32_t c, uint64_t id)
{
	const pbuf_t *b = &p->b[c];
	for (uint32_t i = 0; i < b->n; i++) {
		bent_t *e = &b->e[(b->head + i) % p->cfg.buffer];
		if (e->id == id)
			return e;
	}
	return NULL;
}

int dmr_kv_pf_holds(const dmr_kv_pf_t *p, uint32_t c, uint64_t id)
{
	return c < p->nc && find(p, c, id) != NULL;
}

void dmr_kv_pf_issue(dmr_kv_pf_t *p, uint32_t c, uint64_t id)
{
	if (c >= p->nc)
		return;
	pbuf_t *b = &p->b[c];
	if (b->n == p->cfg.buffer) {
		bent_t *o = &b->e[b->head];
		if (!o->used)
			p->wasted++;
		b->head = (b->head + 1) % p->cfg.buffer;
		b->n--;
	}
	b->e[(b->head + b->n) % p->cfg.buffer] = (bent_t){.id = id};
	b->n++;
	p->issued++;
}

void dmr_kv_pf_ready(dmr_kv_pf_t *p, uint32_t c, uint64_t id)
{
	bent_t *e = c < p->nc ? find(p, c, id) : NULL;
	if (e)
		e->ready = 1;
}

int dmr_kv_pf_take(dmr_kv_pf_t *p, uint32_t c, uint64_t id)
{
	bent_t *e = c < p->nc ? find(p, c, id) : NULL;
	if (!e || !e->ready)
		return 0;
	if (!e->used) {
		e->used = 1;
		p->used++;
	}
	return 1;
}

uint32_t dmr_kv_pf_decide(const dmr_kv_pf_cfg_t *cfg, uint32_t depth, double hit, double prev,
			  uint64_t issued, uint64_t used)
{
	if (prev >= 0 && hit < prev)
		return depth < cfg->max_depth ? depth + 1 : cfg->max_depth;
	if (issued && (double)used < cfg->use_min * (double)issued)
		return depth ? depth - 1 : 0;
	return depth;
}

uint32_t dmr_kv_pf_window(dmr_kv_pf_t *p, uint64_t requested, uint64_t hits)
{
	uint64_t dr = requested - p->last_req, dh = hits - p->last_hit;
	if (dr == 0)
		return p->depth;
	p->last_req = requested;
	p->last_hit = hits;
	double h = (double)dh / (double)dr;
	uint64_t wi = p->issued - p->w_issued0, wu = p->used - p->w_used0;
	p->w_issued0 = p->issued;
	p->w_used0 = p->used;
	uint32_t old = p->depth;
	p->depth = dmr_kv_pf_decide(&p->cfg, old, h, p->prev, wi, wu);
	p->prev = h;
	p->signal = h;
	p->windows++;
	if (p->depth > old)
		p->up++;
	else if (p->depth < old)
		p->down++;
	if (p->depth > p->max_seen)
		p->max_seen = p->depth;
	return p->depth;
}

uint32_t dmr_kv_pf_depth(const dmr_kv_pf_t *p)
{
	return p->depth;
}

void dmr_kv_pf_stats(const dmr_kv_pf_t *p, int at_end, dmr_kv_pf_stats_t *s)
{
	memset(s, 0, sizeof(*s));
	s->issued = p->issued;
	s->used = p->used;
	s->wasted = p->wasted;
	if (at_end)
		for (uint32_t c = 0; c < p->nc; c++)
			for (uint32_t i = 0; i < p->b[c].n; i++)
				s->wasted += !p->b[c].e[(p->b[c].head + i) % p->cfg.buffer].used;
	s->signal = p->signal;
	s->windows = p->windows;
	s->up = p->up;
	s->down = p->down;
	s->depth = p->depth;
	s->max_seen = p->max_seen;
}
