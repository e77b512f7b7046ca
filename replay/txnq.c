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
 * be added to enc_txn and dec_txn (and this check updated). */
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

/* The largest record: its length, then nops, id, tag, type, xv, line, and
 * per op 15 fields and 5 per action, each at most 10 bytes. */
#define TXNQ_REC_MAX (10u * (7u + DMR_TRACE_MAX_OPS * (15u + 5u * DMR_TRACE_MAX_ACTS)))

/* ---- varints into and out of a contiguous buffer ---- */

static inline unsigned char *enc_u(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* zigzag: small magnitudes of either sign in few bytes */
static inline unsigned char *enc_s(unsigned char *p, int64_t v)
{
	return enc_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline uint64_t dec_u(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint64_t v = *p++;
	if (v >= 0x80) {
		v &= 0x7f;
		unsigned sh = 7;
		uint64_t b;
		do {
			b = *p++;
			v |= (b & 0x7f) << sh;
			sh += 7;
		} while (b & 0x80);
	}
	*pp = p;
	return v;
}

static inline int64_t dec_s(const unsigned char **pp)
{
	uint64_t u = dec_u(pp);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* The fields after the length: nops (shifted left by one; bit 0 clear, set
 * on a cache record: dmr_txnq_push_rec) and id first (dmr_txnq_head). */
static unsigned char *enc_txn(unsigned char *p, const dmr_trace_txn_t *t, uint64_t tag)
{
	p = enc_u(p, (uint64_t)t->nops << 1); /* bit 0: 0, the fields follow */
	p = enc_u(p, t->id);
	p = enc_u(p, tag);
	p = enc_u(p, t->type);
	p = enc_s(p, t->xv);
	p = enc_u(p, t->line);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *o = &t->ops[i];
		p = enc_u(p, o->kind);
		p = enc_u(p, o->table);
		p = enc_u(p, o->round);
		p = enc_u(p, o->count);
		p = enc_s(p, o->key);
		p = enc_s(p, o->dep.lit);
		p = enc_s(p, o->dep.op);
		p = enc_u(p, o->dep.field);
		p = enc_s(p, o->lo);
		p = enc_s(p, o->hi);
		p = enc_u(p, o->guard.kind);
		p = enc_s(p, o->guard.op);
		p = enc_u(p, o->guard.f);
		p = enc_u(p, o->guard.f2);
		p = enc_u(p, o->nacts);
		for (uint32_t a = 0; a < o->nacts && a < DMR_TRACE_MAX_ACTS; a++) {
			const dmr_trace_act_t *x = &o->acts[a];
			p = enc_u(p, x->kind);
			p = enc_u(p, x->field);
			p = enc_s(p, x->val.lit);
			p = enc_s(p, x->val.op);
			p = enc_u(p, x->val.field);
		}
	}
	return p;
}

/* Decode the record body of n bytes at p (either kind) into *t and *tag_p:
 * 0, or -1 when a binary record does not decode (dmr_trace_rec_decode). */
static int dec_txn(const unsigned char *p, size_t n, dmr_trace_txn_t *t, uint64_t *tag_p)
{
	const unsigned char *p0 = p;
	uint64_t nops = dec_u(&p);
	t->nops = (uint32_t)(nops >> 1);
	t->id = dec_u(&p);
	*tag_p = dec_u(&p);
	if (nops & 1) /* the trace cache's record (dmr_txnq_push_rec) */
		return dmr_trace_rec_decode(p, n - (size_t)(p - p0), t) == DMR_OK ? 0 : -1;
	t->type = (uint16_t)dec_u(&p);
	t->xv = dec_s(&p);
	t->line = (uint32_t)dec_u(&p);
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_trace_op_t *o = &t->ops[i];
		o->kind = (uint8_t)dec_u(&p);
		o->table = (uint8_t)dec_u(&p);
		o->round = (uint16_t)dec_u(&p);
		o->count = (uint32_t)dec_u(&p);
		o->key = dec_s(&p);
		o->dep.lit = dec_s(&p);
		o->dep.op = (int16_t)dec_s(&p);
		o->dep.field = (uint16_t)dec_u(&p);
		o->lo = dec_s(&p);
		o->hi = dec_s(&p);
		o->guard.kind = (uint8_t)dec_u(&p);
		o->guard.op = (int16_t)dec_s(&p);
		o->guard.f = (uint16_t)dec_u(&p);
		o->guard.f2 = (uint16_t)dec_u(&p);
		uint32_t na = (uint32_t)dec_u(&p);
		o->nacts = (uint8_t)na;
		uint32_t a = 0;
		for (; a < na && a < DMR_TRACE_MAX_ACTS; a++) {
			dmr_trace_act_t *x = &o->acts[a];
			x->kind = (uint8_t)dec_u(&p);
			x->field = (uint16_t)dec_u(&p);
			x->val.lit = dec_s(&p);
			x->val.op = (int16_t)dec_s(&p);
			x->val.field = (uint16_t)dec_u(&p);
		}
	}
	return 0;
}

/* ---- writing ---- */

/* Append one record, n bytes at rec then n2 at rec2, to q's chunks: 0, or
 * -1 out of memory (q unchanged). */
static int append(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const unsigned char *rec, size_t n,
		  const unsigned char *rec2, size_t n2)
{
	int fresh = !q->tail;
	if (fresh) {
		dmr_txnq_chunk_t *c = chunk_get(pool);
		if (!c)
			return -1;
		q->head = q->tail = c;
		q->rd = 0;
	}
	dmr_txnq_chunk_t *old = q->tail, *c = old;
	uint32_t old_wr = old->wr;
	while (n) {
		if (c->wr == TXNQ_CHUNK) {
			dmr_txnq_chunk_t *nc = chunk_get(pool);
			if (!nc) { /* give back what this push took */
				for (dmr_txnq_chunk_t *x = old->next, *y; x; x = y) {
					y = x->next;
					chunk_put(pool, x);
				}
				old->next = NULL;
				old->wr = old_wr;
				if (fresh) {
					chunk_put(pool, old);
					q->head = q->tail = NULL;
				}
				return -1;
			}
			c->next = nc;
			c = nc;
		}
		size_t k = TXNQ_CHUNK - c->wr < n ? TXNQ_CHUNK - c->wr : n;
		memcpy(c->b + c->wr, rec, k);
		c->wr += (uint32_t)k;
		rec += k;
		n -= k;
		if (!n && n2) { /* the second part */
			rec = rec2;
			n = n2;
			n2 = 0;
		}
	}
	q->tail = c;
	q->n++;
	return 0;
}

int dmr_txnq_push(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const dmr_trace_txn_t *t, uint64_t tag)
{
	if (!pool->buf && !(pool->buf = malloc(TXNQ_REC_MAX)))
		return -1;
	/* the fields after 10 bytes of room, then the length before them */
	unsigned char *body = pool->buf + 10;
	size_t blen = (size_t)(enc_txn(body, t, tag) - body);
	unsigned char len[10];
	size_t llen = (size_t)(enc_u(len, blen) - len);
	unsigned char *rec = body - llen;
	memcpy(rec, len, llen);
	return append(q, pool, rec, llen + blen, NULL, 0);
}

int dmr_txnq_push_rec(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const void *rec, size_t len,
		      uint32_t nops, uint64_t id, uint64_t tag)
{
	/* gathered into pool->buf when it spans chunks (dmr_txnq_pop) */
	if (len > TXNQ_REC_MAX - 40 || (!pool->buf && !(pool->buf = malloc(TXNQ_REC_MAX))))
		return -1;
	unsigned char h[40], *p = h + 10, *b = p;
	p = enc_u(p, (uint64_t)nops << 1 | 1); /* bit 0: a record follows */
	p = enc_u(p, id);
	p = enc_u(p, tag);
	size_t blen = (size_t)(p - b) + len;
	unsigned char len_b[10];
	size_t llen = (size_t)(enc_u(len_b, blen) - len_b);
	memcpy(b - llen, len_b, llen);
	return append(q, pool, b - llen, llen + (size_t)(p - b), rec, len);
}

/* ---- reading ---- */

typedef struct rcur {
	const dmr_txnq_chunk_t *ch;
	uint32_t pos;
} rcur_t;

/* one varint byte by byte, across chunks (a record's length, the head) */
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

void dmr_txnq_head(const dmr_txnq_t *q, uint32_t *nops_p, uint64_t *id_p)
{
	rcur_t r = {q->head, q->rd};
	(void)get_u(&r); /* the length */
	*nops_p = (uint32_t)(get_u(&r) >> 1);
	*id_p = get_u(&r);
}

int dmr_txnq_pop(dmr_txnq_t *q, dmr_txnq_pool_t *pool, dmr_trace_txn_t *t, uint64_t *tag_p)
{
	if (!q->n)
		return 0;
	rcur_t r = {q->head, q->rd};
	size_t n = (size_t)get_u(&r);
	while (r.pos == r.ch->wr) { /* the fields start in the next chunk */
		r.ch = r.ch->next;
		r.pos = 0;
	}
	int bad;
	if (r.pos + n <= r.ch->wr) { /* in one chunk: in place */
		bad = dec_txn(r.ch->b + r.pos, n, t, tag_p);
		r.pos += (uint32_t)n;
	} else { /* across chunks: gathered into pool->buf (push made it) */
		unsigned char *p = pool->buf;
		while (n) {
			if (r.pos == r.ch->wr) {
				r.ch = r.ch->next;
				r.pos = 0;
			}
			size_t k = r.ch->wr - r.pos < n ? r.ch->wr - r.pos : n;
			memcpy(p, r.ch->b + r.pos, k);
			p += k;
			r.pos += (uint32_t)k;
			n -= k;
		}
		bad = dec_txn(pool->buf, (size_t)(p - pool->buf), t, tag_p);
	}
	q->n--;
	if (!q->n) { /* empty: every chunk back */
		dmr_txnq_fini(q, pool);
		return bad ? -1 : 1;
	}
	while (q->head != r.ch) {
		dmr_txnq_chunk_t *nx = q->head->next;
		chunk_put(pool, q->head);
		q->head = nx;
	}
	q->rd = r.pos;
	return bad ? -1 : 1;
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
	free(pool->buf);
	pool->buf = NULL;
}
