/* replay/txnq.c - packed FIFO of read-ahead transactions (txnq.h). */
#include "txnq.h"

#include <stdlib.h>
#include <string.h>

/* 4 KiB per chunk with its header: one page. */
#define TXNQ_CHUNK (4096u - 2 * sizeof(void *))

struct dmr_txnq_chunk {
	dmr_txnq_chunk_t *next;
	uint32_t wr; /* bytes written */
	unsigned char b[TXNQ_CHUNK];
};

/* Every field pushed and popped below; a field added to these structs must
 * be added to put_txn and get_txn (and this check updated). */
_Static_assert(sizeof(dmr_trace_op_t) == 160 && sizeof(dmr_trace_act_t) == 24 &&
		   sizeof(dmr_trace_val_t) == 16 && sizeof(dmr_trace_guard_t) == 8,
	       "dmr_trace_op_t changed: update replay/txnq.c");

static dmr_txnq_chunk_t *chunk_get(dmr_txnq_pool_t *pool)
{
	dmr_txnq_chunk_t *c = pool->free;
	if (c)
		pool->free = c->next;
	else if ((c = malloc(sizeof(*c))) != NULL)
		pool->chunks++;
	if (c) {
		c->next = NULL;
		c->wr = 0;
	}
	return c;
}

static void chunk_put(dmr_txnq_pool_t *pool, dmr_txnq_chunk_t *c)
{
	c->next = pool->free;
	pool->free = c;
}

/* ---- writing ---- */

typedef struct wcur {
	dmr_txnq_chunk_t *ch;
	dmr_txnq_pool_t *pool;
	int failed;
} wcur_t;

static void put_u(wcur_t *w, uint64_t v)
{
	do {
		if (w->ch->wr == TXNQ_CHUNK) {
			dmr_txnq_chunk_t *n = chunk_get(w->pool);
			if (!n) {
				w->failed = 1;
				return;
			}
			w->ch->next = n;
			w->ch = n;
		}
		unsigned char b = v & 0x7f;
		v >>= 7;
		w->ch->b[w->ch->wr++] = (unsigned char)(b | (v ? 0x80 : 0));
	} while (v);
}

/* zigzag: small magnitudes of either sign in few bytes */
static void put_s(wcur_t *w, int64_t v)
{
	put_u(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_val(wcur_t *w, const dmr_trace_val_t *v)
{
	put_s(w, v->lit);
	put_s(w, v->op);
	put_u(w, v->field);
}

static void put_txn(wcur_t *w, const dmr_trace_txn_t *t, uint64_t tag)
{
	put_u(w, t->nops);
	put_u(w, t->id);
	put_u(w, tag);
	put_u(w, t->type);
	put_s(w, t->xv);
	put_u(w, t->line);
	for (uint32_t i = 0; i < t->nops && !w->failed; i++) {
		const dmr_trace_op_t *o = &t->ops[i];
		put_u(w, o->kind);
		put_u(w, o->table);
		put_u(w, o->round);
		put_u(w, o->count);
		put_s(w, o->key);
		put_val(w, &o->dep);
		put_s(w, o->lo);
		put_s(w, o->hi);
		put_u(w, o->guard.kind);
		put_s(w, o->guard.op);
		put_u(w, o->guard.f);
		put_u(w, o->guard.f2);
		put_u(w, o->nacts);
		for (uint32_t a = 0; a < o->nacts && a < DMR_TRACE_MAX_ACTS; a++) {
			put_u(w, o->acts[a].kind);
			put_u(w, o->acts[a].field);
			put_val(w, &o->acts[a].val);
		}
	}
}

int dmr_txnq_push(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const dmr_trace_txn_t *t, uint64_t tag)
{
	int fresh = !q->tail;
	if (fresh) {
		dmr_txnq_chunk_t *c = chunk_get(pool);
		if (!c)
			return -1;
		q->head = q->tail = c;
		q->rd = 0;
	}
	dmr_txnq_chunk_t *old = q->tail;
	uint32_t old_wr = old->wr;
	wcur_t w = {old, pool, 0};
	put_txn(&w, t, tag);
	if (w.failed) { /* give back what this push took */
		for (dmr_txnq_chunk_t *c = old->next, *n; c; c = n) {
			n = c->next;
			chunk_put(pool, c);
		}
		old->next = NULL;
		old->wr = old_wr;
		if (fresh) {
			chunk_put(pool, old);
			q->head = q->tail = NULL;
		}
		return -1;
	}
	q->tail = w.ch;
	q->n++;
	return 0;
}

/* ---- reading ---- */

typedef struct rcur {
	const dmr_txnq_chunk_t *ch;
	uint32_t pos;
} rcur_t;

static uint64_t get_u(rcur_t *r)
{
	uint64_t v = 0;
	unsigned sh = 0;
	unsigned char b;
	do {
		while (r->pos == r->ch->wr) {
			r->ch = r->ch->next;
			r->pos = 0;
		}
		b = r->ch->b[r->pos++];
		v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
	} while (b & 0x80);
	return v;
}

static int64_t get_s(rcur_t *r)
{
	uint64_t u = get_u(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static void get_val(rcur_t *r, dmr_trace_val_t *v)
{
	v->lit = get_s(r);
	v->op = (int16_t)get_s(r);
	v->field = (uint16_t)get_u(r);
}

void dmr_txnq_head(const dmr_txnq_t *q, uint32_t *nops_p, uint64_t *id_p)
{
	rcur_t r = {q->head, q->rd};
	*nops_p = (uint32_t)get_u(&r);
	*id_p = get_u(&r);
}

int dmr_txnq_pop(dmr_txnq_t *q, dmr_txnq_pool_t *pool, dmr_trace_txn_t *t, uint64_t *tag_p)
{
	if (!q->n)
		return 0;
	rcur_t r = {q->head, q->rd};
	t->nops = (uint32_t)get_u(&r);
	t->id = get_u(&r);
	*tag_p = get_u(&r);
	t->type = (uint16_t)get_u(&r);
	t->xv = get_s(&r);
	t->line = (uint32_t)get_u(&r);
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_trace_op_t *o = &t->ops[i];
		memset(o, 0, sizeof(*o));
		o->kind = (uint8_t)get_u(&r);
		o->table = (uint8_t)get_u(&r);
		o->round = (uint16_t)get_u(&r);
		o->count = (uint32_t)get_u(&r);
		o->key = get_s(&r);
		get_val(&r, &o->dep);
		o->lo = get_s(&r);
		o->hi = get_s(&r);
		o->guard.kind = (uint8_t)get_u(&r);
		o->guard.op = (int16_t)get_s(&r);
		o->guard.f = (uint16_t)get_u(&r);
		o->guard.f2 = (uint16_t)get_u(&r);
		o->nacts = (uint8_t)get_u(&r);
		for (uint32_t a = 0; a < o->nacts && a < DMR_TRACE_MAX_ACTS; a++) {
			o->acts[a].kind = (uint8_t)get_u(&r);
			o->acts[a].field = (uint16_t)get_u(&r);
			get_val(&r, &o->acts[a].val);
		}
	}
	q->n--;
	if (!q->n) { /* empty: every chunk back */
		dmr_txnq_fini(q, pool);
		return 1;
	}
	while (q->head != r.ch) {
		dmr_txnq_chunk_t *n = q->head->next;
		chunk_put(pool, q->head);
		q->head = n;
	}
	q->rd = r.pos;
	return 1;
}

void dmr_txnq_fini(dmr_txnq_t *q, dmr_txnq_pool_t *pool)
{
	for (dmr_txnq_chunk_t *c = q->head, *n; c; c = n) {
		n = c->next;
		chunk_put(pool, c);
	}
	q->head = q->tail = NULL;
	q->rd = 0;
	q->n = 0;
}

void dmr_txnq_pool_fini(dmr_txnq_pool_t *pool)
{
	for (dmr_txnq_chunk_t *c = pool->free, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	pool->free = NULL;
	pool->chunks = 0;
}
