/*
 * replay/kv.c - the KV-cache pool workload: transfer layer (sliced,
 * pipelined block transfers on the backend's workers), the master (pool
 * metadata, placement, LRU eviction), the request replay, the transfer
 * benchmark and the `dmreplay kv` command line. See kv.h and
 * docs/KVCACHE.md.
 */
#include "kv.h"
#include "results.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../backends/sim/sim.h"
#include "../traces/kvcache.h"

#define NOIDX UINT32_MAX

/* wr_id: kind in the top 4 bits, an index below */
enum { K_SLICE = 0, K_ARRIVE = 1, K_RPC = 2 };
#define KIND_SHIFT 60
#define WRID(kind, idx) (((uint64_t)(kind) << KIND_SHIFT) | (uint64_t)(idx))
#define WRID_KIND(id) ((unsigned)((id) >> KIND_SHIFT))
#define WRID_IDX(id) ((uint32_t)((id) & 0xffffffffu))

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* ---- latencies ---------------------------------------------------------- */

typedef struct dvec {
	double *v;
	uint64_t n, cap;
} dvec_t;

static int dvec_push(dvec_t *d, double x)
{
	if (d->n == d->cap) {
		uint64_t cap = d->cap ? d->cap * 2 : 4096;
		double *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return 0;
}

/* p50/p99/p999/mean/min/max of d (sorted in place). */
static void dvec_stats(dvec_t *d, double *p50, double *p99, double *p999, double *mean,
		       double *min, double *max)
{
	*p50 = *p99 = *p999 = *mean = *min = *max = 0;
	if (!d->n)
		return;
	gsl_sort(d->v, 1, d->n);
	*p50 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.50);
	*p99 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.99);
	*p999 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.999);
	*mean = gsl_stats_mean(d->v, 1, d->n);
	*min = d->v[0];
	*max = d->v[d->n - 1];
}

/* ---- transfer layer ----------------------------------------------------- */

/*
 * An xfer moves `len` bytes between the client's local buffer and the MN
 * region at logical offset `logical`, as slices of at most `slice` bytes
 * posted in order on the client's QP, at most `depth` in flight per client.
 * Completions of one QP arrive in posting order (backend.h), so the bytes of
 * a completed slice are min(slice, len - done).
 */
typedef struct xfer {
	uint64_t logical, len, posted, done;
	uint64_t t0;         /* bench: submit time */
	uint32_t next;       /* client queue / free list / waiter list */
	uint32_t owner;      /* request slot (run) or thread (bench) */
	uint32_t entry;      /* pool entry (run) */
	uint32_t client;
	uint8_t opcode;
} xfer_t;

typedef struct client {
	uint32_t qhead, qtail; /* xfers with slices left to post */
	uint32_t inflight;     /* slices posted, not completed */
} client_t;

typedef struct xeng {
	dmr_be_t *be;
	const dmr_model_t *m; /* NULL when the backend has no model */
	xfer_t *x;
	uint32_t nx, capx, xfree, live;
	client_t *c;
	uint32_t nc;
	uint8_t *buf;         /* shared local buffer, maxwr bytes */
	uint64_t slice, maxwr;
	uint32_t depth;
	uint64_t region, fold_mod;
	int folded;
	uint64_t wire_to, wire_from, slices;
	dmr_err_t *err;
} xeng_t;

static dmr_status_t xeng_init(xeng_t *e, dmr_be_t *be, uint32_t nclients, uint64_t slice,
			      uint64_t maxwr, uint32_t depth, uint64_t region, int folded,
			      dmr_err_t *err)
{
	memset(e, 0, sizeof(*e));
	e->be = be;
	e->m = dmr_sim_model(be);
	e->err = err;
	e->slice = slice;
	e->maxwr = maxwr;
	e->depth = depth;
	e->region = region;
	e->folded = folded;
	e->fold_mod = region - maxwr + 1;
	e->xfree = NOIDX;
	e->nc = nclients;
	e->c = calloc(nclients, sizeof(*e->c));
	e->buf = malloc(maxwr);
	if (!e->c || !e->buf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (%llu-byte buffer)",
				   (unsigned long long)maxwr);
	memset(e->buf, 0x5a, maxwr);
	for (uint32_t i = 0; i < nclients; i++) {
		e->c[i].qhead = e->c[i].qtail = NOIDX;
		dmr_status_t st = dmr_be_mr_reg(be, i, e->buf, maxwr, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

static void xeng_fini(xeng_t *e)
{
	free(e->x);
	free(e->c);
	free(e->buf);
}

/* A new xfer (index; pointers into e->x may move). */
static uint32_t xeng_alloc(xeng_t *e)
{
	if (e->xfree == NOIDX) {
		uint32_t cap = e->capx ? e->capx * 2 : 1024;
		xfer_t *x = realloc(e->x, cap * sizeof(*x));
		if (!x)
			return NOIDX;
		for (uint32_t i = e->capx; i < cap; i++)
			x[i].next = i + 1 < cap ? i + 1 : NOIDX;
		e->x = x;
		e->xfree = e->capx;
		e->capx = cap;
	}
	uint32_t i = e->xfree;
	e->xfree = e->x[i].next;
	memset(&e->x[i], 0, sizeof(e->x[i]));
	e->x[i].next = NOIDX;
	e->x[i].entry = NOIDX;
	e->live++;
	return i;
}

static void xeng_free(xeng_t *e, uint32_t i)
{
	e->x[i].next = e->xfree;
	e->xfree = i;
	e->live--;
}

static void xeng_enqueue(xeng_t *e, uint32_t i)
{
	client_t *c = &e->c[e->x[i].client];
	e->x[i].next = NOIDX;
	if (c->qtail != NOIDX)
		e->x[c->qtail].next = i;
	else
		c->qhead = i;
	c->qtail = i;
}

static inline uint64_t fold(const xeng_t *e, uint64_t off)
{
	return e->folded ? (off % e->fold_mod) & ~63ull : off;
}

/* Post slices of the client's queued xfers while its QP has room. */
static dmr_status_t xeng_pump(xeng_t *e, uint32_t ci)
{
	client_t *c = &e->c[ci];
	dmr_wr_t wrs[64];
	while (c->qhead != NOIDX && c->inflight < e->depth) {
		uint32_t n = 0;
		while (c->qhead != NOIDX && c->inflight < e->depth && n < 64) {
			xfer_t *x = &e->x[c->qhead];
			uint64_t len = x->len - x->posted;
			if (e->slice && len > e->slice)
				len = e->slice;
			dmr_wr_t *w = &wrs[n++];
			memset(w, 0, sizeof(*w));
			w->wr_id = WRID(K_SLICE, c->qhead);
			w->local = e->buf;
			w->remote = fold(e, x->logical + x->posted);
			w->length = (uint32_t)len;
			w->opcode = x->opcode;
			w->flags = DMR_WR_SIGNALED;
			x->posted += len;
			c->inflight++;
			if (x->posted == x->len) {
				c->qhead = x->next;
				if (c->qhead == NOIDX)
					c->qtail = NOIDX;
			}
		}
		dmr_status_t st = dmr_be_post(e->be, ci, 0, wrs, n, e->err);
		if (st != DMR_OK)
			return st;
		e->slices += n;
	}
	return DMR_OK;
}

/* Account a slice completion; *done_p = the xfer when it is complete, else
 * NOIDX. */
static dmr_status_t xeng_on_wc(xeng_t *e, uint32_t worker, const dmr_wc_t *wc, uint32_t *done_p)
{
	uint32_t i = WRID_IDX(wc->wr_id);
	*done_p = NOIDX;
	if (i >= e->capx || worker >= e->nc)
		return dmr_err_set(e->err, DMR_ERR_INVALID, "kv: completion for unknown transfer %u",
				   i);
	xfer_t *x = &e->x[i];
	if (wc->status != DMR_WC_SUCCESS)
		return dmr_err_set(e->err, DMR_ERR_REMOTE,
				   "kv: %s slice of %llu bytes at MN offset %llu (worker %u) "
				   "completed with %s",
				   dmr_wr_opcode_string(x->opcode), (unsigned long long)x->len,
				   (unsigned long long)x->logical, worker,
				   dmr_wc_status_string(wc->status));
	uint64_t len = x->len - x->done;
	if (e->slice && len > e->slice)
		len = e->slice;
	x->done += len;
	e->c[worker].inflight--;
	if (e->m) {
		const dmr_model_t *m = e->m;
		if (x->opcode == DMR_WR_READ) {
			e->wire_to += m->pkt_overhead + m->reth_bytes;
			e->wire_from += dmr_model_msg_wire_bytes(m, len, m->aeth_bytes,
								 len > m->mtu ? m->aeth_bytes : 0);
		} else {
			e->wire_to += dmr_model_msg_wire_bytes(m, len, m->reth_bytes, 0);
			e->wire_from += m->pkt_overhead + m->aeth_bytes;
		}
	}
	if (x->done == x->len)
		*done_p = i;
	return DMR_OK;
}

/* Region and folding for a pool/benchmark of `logical` bytes. */
static void plan_region(uint64_t logical, uint64_t sim_region, uint64_t maxwr, uint64_t *region_p,
			int *folded_p)
{
	uint64_t want = sim_region < maxwr ? maxwr : sim_region;
	if (logical && logical <= want) {
		*region_p = (logical + 63) & ~63ull;
		*folded_p = 0;
	} else {
		*region_p = (want + 63) & ~63ull;
		*folded_p = 1;
	}
}

/* ---- results files (temp + rename, as replay/results.c) ----------------- */

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* ---- time series -------------------------------------------------------- */

typedef struct kv_cnt {
	uint64_t arrivals, completed, hits, puts, dropped, evictions;
	uint64_t bytes_got, bytes_put, wire_to, wire_from;
} kv_cnt_t;

typedef struct kv_ts {
	uint64_t window_ps, next_end;
	kv_cnt_t last;
	kv_cnt_t *rows;
	uint32_t n, cap;
} kv_ts_t;

static void ts_close(kv_ts_t *ts, const kv_cnt_t *c)
{
	if (ts->n == ts->cap) {
		uint32_t cap = ts->cap ? ts->cap * 2 : 256;
		kv_cnt_t *r = realloc(ts->rows, cap * sizeof(*r));
		if (!r)
			return; /* the series is shorter; the summary stays exact */
		ts->rows = r;
		ts->cap = cap;
	}
	kv_cnt_t *r = &ts->rows[ts->n++];
	const kv_cnt_t *l = &ts->last;
	r->arrivals = c->arrivals - l->arrivals;
	r->completed = c->completed - l->completed;
	r->hits = c->hits - l->hits;
	r->puts = c->puts - l->puts;
	r->dropped = c->dropped - l->dropped;
	r->evictions = c->evictions - l->evictions;
	r->bytes_got = c->bytes_got - l->bytes_got;
	r->bytes_put = c->bytes_put - l->bytes_put;
	r->wire_to = c->wire_to - l->wire_to;
	r->wire_from = c->wire_from - l->wire_from;
	ts->last = *c;
}

static void ts_advance(kv_ts_t *ts, uint64_t now, const kv_cnt_t *c)
{
	while (now >= ts->next_end) {
		ts_close(ts, c);
		ts->next_end += ts->window_ps;
	}
}

/* ---- the pool and the replay ------------------------------------------- */

enum { E_FREE = 0, E_PENDING = 1, E_READY = 2 };

typedef struct pentry {
	uint64_t id;
	uint64_t off;       /* logical offset in the MN region */
	uint64_t slot;
	uint32_t seg, pins;
	uint32_t prev, next; /* LRU list (head = least recently used); free list */
	uint32_t waiters;   /* READ xfers waiting for the put */
	uint8_t state;
} pentry_t;

typedef struct seg {
	uint64_t nslots, fresh, used;
	uint64_t *free;
	uint64_t nfree, capfree;
} seg_t;

typedef struct kreq {
	uint64_t index, t_arr;
	uint32_t client, nblocks, gets_left, puts_left, next;
	uint32_t *ent;      /* per block: entry, or NOIDX for a dropped put */
	uint8_t *put;       /* per block: 1 = this request writes it */
} kreq_t;

typedef struct kv {
	const dmr_kv_opts_t *o;
	dmr_err_t *err;
	dmr_be_t *be;
	xeng_t X;
	dmr_kv_reader_t *rd;
	dmr_kv_req_t ahead;  /* read-ahead request (open loop) */
	int have_ahead, eof;
	uint64_t nread;      /* requests read from the trace */
	/* master */
	pentry_t *e;
	uint32_t ne, cape, efree;
	uint32_t *map;
	uint64_t mapmask, mapn;
	uint32_t lru_head, lru_tail;
	seg_t *seg;
	uint32_t nseg, rr;
	uint64_t block, seg_stride, used, cap_slots, hw_slots, target_slots;
	/* requests */
	kreq_t *rq;
	uint32_t caprq, rqfree, inflight;
	uint32_t nclients;
	uint64_t rpc_ps, t_first, t_last;
	int have_first;
	kv_cnt_t cnt;
	kv_ts_t ts;
	dvec_t lat;
	uint64_t requested, waited, max_used;
} kv_t;

/* -- block map: id -> entry, linear probing, backward-shift deletion -- */

static uint32_t map_find(const kv_t *k, uint64_t id)
{
	if (!k->map)
		return NOIDX;
	uint64_t h = mix64(id) & k->mapmask;
	for (;;) {
		uint32_t i = k->map[h];
		if (i == NOIDX || k->e[i].id == id)
			return i;
		h = (h + 1) & k->mapmask;
	}
}

static int map_grow(kv_t *k)
{
	uint64_t cap = k->map ? (k->mapmask + 1) * 2 : 4096;
	uint32_t *m = malloc(cap * sizeof(*m));
	if (!m)
		return -1;
	for (uint64_t i = 0; i < cap; i++)
		m[i] = NOIDX;
	for (uint64_t i = 0; k->map && i <= k->mapmask; i++) {
		uint32_t x = k->map[i];
		if (x == NOIDX)
			continue;
		uint64_t h = mix64(k->e[x].id) & (cap - 1);
		while (m[h] != NOIDX)
			h = (h + 1) & (cap - 1);
		m[h] = x;
	}
	free(k->map);
	k->map = m;
	k->mapmask = cap - 1;
	return 0;
}

static int map_insert(kv_t *k, uint32_t idx)
{
	if (!k->map || (k->mapn + 1) * 2 > k->mapmask + 1) {
		if (map_grow(k) != 0)
			return -1;
	}
	uint64_t h = mix64(k->e[idx].id) & k->mapmask;
	while (k->map[h] != NOIDX)
		h = (h + 1) & k->mapmask;
	k->map[h] = idx;
	k->mapn++;
	return 0;
}

static void map_remove(kv_t *k, uint64_t id)
{
	uint64_t mask = k->mapmask, i = mix64(id) & mask;
	while (k->map[i] != NOIDX && k->e[k->map[i]].id != id)
		i = (i + 1) & mask;
	if (k->map[i] == NOIDX)
		return;
	uint64_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (k->map[j] == NOIDX)
			break;
		uint64_t home = mix64(k->e[k->map[j]].id) & mask;
		/* move j back to i unless its home lies cyclically in (i, j] */
		int in = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!in) {
			k->map[i] = k->map[j];
			i = j;
		}
	}
	k->map[i] = NOIDX;
	k->mapn--;
}

/* -- LRU -- */

static void lru_unlink(kv_t *k, uint32_t i)
{
	pentry_t *p = &k->e[i];
	if (p->prev != NOIDX)
		k->e[p->prev].next = p->next;
	else
		k->lru_head = p->next;
	if (p->next != NOIDX)
		k->e[p->next].prev = p->prev;
	else
		k->lru_tail = p->prev;
	p->prev = p->next = NOIDX;
}

static void lru_append(kv_t *k, uint32_t i)
{
	pentry_t *p = &k->e[i];
	p->next = NOIDX;
	p->prev = k->lru_tail;
	if (k->lru_tail != NOIDX)
		k->e[k->lru_tail].next = i;
	else
		k->lru_head = i;
	k->lru_tail = i;
}

/* -- slots and entries -- */

static void slot_free(kv_t *k, uint32_t s, uint64_t slot)
{
	seg_t *g = &k->seg[s];
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
	k->used--;
}

static int seg_has_room(const seg_t *g)
{
	return g->used < g->nslots;
}

/* Placement: the segment for the next block, or -1 when all are full. */
static int place(kv_t *k)
{
	if (k->o->placement == DMR_KV_PLACE_LEAST) {
		int best = -1;
		for (uint32_t s = 0; s < k->nseg; s++)
			if (seg_has_room(&k->seg[s]) &&
			    (best < 0 || k->seg[s].used < k->seg[best].used))
				best = (int)s;
		return best;
	}
	for (uint32_t i = 0; i < k->nseg; i++) {
		uint32_t s = (k->rr + i) % k->nseg;
		if (seg_has_room(&k->seg[s])) {
			k->rr = (s + 1) % k->nseg;
			return (int)s;
		}
	}
	return -1;
}

static void evict_one(kv_t *k, uint32_t i)
{
	pentry_t *p = &k->e[i];
	lru_unlink(k, i);
	map_remove(k, p->id);
	slot_free(k, p->seg, p->slot);
	p->state = E_FREE;
	p->next = k->efree;
	k->efree = i;
	k->cnt.evictions++;
}

/* Evict unpinned blocks in LRU order while more than `target` are used. */
static void evict_to(kv_t *k, uint64_t target)
{
	uint32_t i = k->lru_head;
	while (k->used > target && i != NOIDX) {
		uint32_t nx = k->e[i].next;
		if (k->e[i].pins == 0 && k->e[i].state == E_READY)
			evict_one(k, i);
		i = nx;
	}
}

/* Allocate an entry for a new block (PENDING, pinned once, most recent).
 * NOIDX with DMR_OK in *st_p when no room could be made (put dropped). */
static uint32_t entry_new(kv_t *k, uint64_t id, dmr_status_t *st_p)
{
	*st_p = DMR_OK;
	if (!k->o->unbounded && k->used + 1 > k->hw_slots)
		evict_to(k, k->target_slots);
	if (!k->o->unbounded && k->used + 1 > k->hw_slots)
		return NOIDX;
	int s = place(k);
	if (s < 0)
		return NOIDX;
	if (k->efree == NOIDX) {
		uint32_t cap = k->cape ? k->cape * 2 : 4096;
		pentry_t *e = realloc(k->e, cap * sizeof(*e));
		if (!e) {
			*st_p = dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (pool entries)");
			return NOIDX;
		}
		for (uint32_t i = k->cape; i < cap; i++) {
			e[i].state = E_FREE;
			e[i].next = i + 1 < cap ? i + 1 : NOIDX;
		}
		k->e = e;
		k->efree = k->cape;
		k->cape = cap;
	}
	uint32_t i = k->efree;
	pentry_t *p = &k->e[i];
	k->efree = p->next;
	seg_t *g = &k->seg[s];
	p->id = id;
	p->seg = (uint32_t)s;
	p->slot = g->nfree ? g->free[--g->nfree] : g->fresh++;
	p->off = (uint64_t)s * k->seg_stride + p->slot * k->block;
	p->pins = 1;
	p->waiters = NOIDX;
	p->state = E_PENDING;
	g->used++;
	k->used++;
	if (k->used > k->max_used)
		k->max_used = k->used;
	lru_append(k, i);
	if (map_insert(k, i) != 0) {
		*st_p = dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (block map)");
		return NOIDX;
	}
	return i;
}

/* -- requests -- */

static uint32_t rq_alloc(kv_t *k)
{
	if (k->rqfree == NOIDX) {
		uint32_t cap = k->caprq ? k->caprq * 2 : 256;
		kreq_t *r = realloc(k->rq, cap * sizeof(*r));
		if (!r)
			return NOIDX;
		for (uint32_t i = k->caprq; i < cap; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].next = i + 1 < cap ? i + 1 : NOIDX;
		}
		k->rq = r;
		k->rqfree = k->caprq;
		k->caprq = cap;
	}
	uint32_t i = k->rqfree;
	k->rqfree = k->rq[i].next;
	return i;
}

static void rq_release(kv_t *k, uint32_t i)
{
	kreq_t *r = &k->rq[i];
	free(r->ent);
	free(r->put);
	r->ent = NULL;
	r->put = NULL;
	r->next = k->rqfree;
	k->rqfree = i;
}

static dmr_status_t read_next(kv_t *k)
{
	if (k->eof || (k->o->requests && k->nread >= k->o->requests)) {
		k->eof = 1;
		k->have_ahead = 0;
		return DMR_OK;
	}
	dmr_status_t st = dmr_kv_trace_next(k->rd, &k->ahead, k->err);
	if (st == DMR_INPROGRESS) {
		k->eof = 1;
		k->have_ahead = 0;
		return DMR_OK;
	}
	if (st != DMR_OK)
		return st;
	k->have_ahead = 1;
	k->nread++;
	return DMR_OK;
}

static uint64_t arrival_ps(const kv_t *k, uint64_t t_us)
{
	double ps = (double)t_us * k->o->time_scale * 1e6;
	return ps < 9e18 ? (uint64_t)llround(ps) : (uint64_t)9e18; /* ~104 days: far enough */
}

/* Schedule the read-ahead request's arrival (open loop). */
static dmr_status_t schedule_ahead(kv_t *k)
{
	if (!k->have_ahead)
		return DMR_OK;
	uint32_t c = (uint32_t)(k->ahead.index % k->nclients);
	dmr_status_t st = dmr_be_timer(k->be, c, arrival_ps(k, k->ahead.t_us), WRID(K_ARRIVE, 0));
	if (st != DMR_OK)
		return dmr_err_set(k->err, st, "kv: timer failed");
	return DMR_OK;
}

/* Start the read-ahead request at time t: master lookup, then the RPC. */
static dmr_status_t start_request(kv_t *k, uint64_t t)
{
	const dmr_kv_req_t *q = &k->ahead;
	uint32_t ri = rq_alloc(k);
	if (ri == NOIDX)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
	kreq_t *r = &k->rq[ri];
	r->index = q->index;
	r->t_arr = t;
	r->client = (uint32_t)(q->index % k->nclients);
	r->nblocks = q->nblocks;
	r->gets_left = r->puts_left = 0;
	r->ent = malloc((q->nblocks ? q->nblocks : 1) * sizeof(uint32_t));
	r->put = malloc(q->nblocks ? q->nblocks : 1);
	if (!r->ent || !r->put)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
	k->have_ahead = 0; /* consumed (q stays valid until the next read) */
	if (!k->have_first) {
		k->have_first = 1;
		k->t_first = t;
	}
	k->inflight++;
	k->cnt.arrivals++;
	/* the master: lookups in block order */
	for (uint32_t b = 0; b < q->nblocks; b++) {
		uint32_t ei = map_find(k, q->blocks[b]);
		k->requested++;
		if (ei != NOIDX) {
			pentry_t *p = &k->e[ei];
			p->pins++;
			lru_unlink(k, ei);
			lru_append(k, ei);
			k->rq[ri].ent[b] = ei;
			k->rq[ri].put[b] = 0;
			k->cnt.hits++;
			continue;
		}
		dmr_status_t st;
		ei = entry_new(k, q->blocks[b], &st);
		if (st != DMR_OK)
			return st;
		k->rq[ri].ent[b] = ei;
		k->rq[ri].put[b] = 1;
		if (ei == NOIDX)
			k->cnt.dropped++;
		else
			k->cnt.puts++;
	}
	dmr_status_t st = dmr_be_timer(k->be, k->rq[ri].client, t + k->rpc_ps, WRID(K_RPC, ri));
	if (st != DMR_OK)
		return dmr_err_set(k->err, st, "kv: timer failed");
	return DMR_OK;
}

static dmr_status_t finish_request(kv_t *k, uint32_t ri, uint64_t now);

static dmr_status_t start_puts(kv_t *k, uint32_t ri, uint64_t now)
{
	uint32_t n = 0;
	for (uint32_t b = 0; b < k->rq[ri].nblocks; b++) {
		if (!k->rq[ri].put[b] || k->rq[ri].ent[b] == NOIDX)
			continue;
		uint32_t xi = xeng_alloc(&k->X);
		if (xi == NOIDX)
			return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
		xfer_t *x = &k->X.x[xi];
		x->entry = k->rq[ri].ent[b];
		x->logical = k->e[x->entry].off;
		x->len = k->block;
		x->opcode = DMR_WR_WRITE;
		x->owner = ri;
		x->client = k->rq[ri].client;
		xeng_enqueue(&k->X, xi);
		n++;
	}
	k->rq[ri].puts_left = n;
	if (n == 0)
		return finish_request(k, ri, now);
	return xeng_pump(&k->X, k->rq[ri].client);
}

/* The master's answer arrived: READ the hits (or wait for their put). */
static dmr_status_t on_rpc(kv_t *k, uint32_t ri, uint64_t now)
{
	if (ri >= k->caprq || !k->rq[ri].ent)
		return dmr_err_set(k->err, DMR_ERR_INVALID, "kv: RPC for unknown request %u", ri);
	uint32_t n = 0;
	for (uint32_t b = 0; b < k->rq[ri].nblocks; b++) {
		if (k->rq[ri].put[b])
			continue;
		uint32_t xi = xeng_alloc(&k->X);
		if (xi == NOIDX)
			return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
		xfer_t *x = &k->X.x[xi];
		uint32_t ei = k->rq[ri].ent[b];
		x->entry = ei;
		x->logical = k->e[ei].off;
		x->len = k->block;
		x->opcode = DMR_WR_READ;
		x->owner = ri;
		x->client = k->rq[ri].client;
		if (k->e[ei].state == E_READY) {
			xeng_enqueue(&k->X, xi);
		} else {
			x->next = k->e[ei].waiters;
			k->e[ei].waiters = xi;
			k->waited++;
		}
		n++;
	}
	k->rq[ri].gets_left = n;
	if (n == 0)
		return start_puts(k, ri, now);
	return xeng_pump(&k->X, k->rq[ri].client);
}

static dmr_status_t finish_request(kv_t *k, uint32_t ri, uint64_t now)
{
	kreq_t *r = &k->rq[ri];
	if (dvec_push(&k->lat, (now - r->t_arr) / 1e6) != 0)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (latencies)");
	k->t_last = max64(k->t_last, now);
	k->cnt.completed++;
	k->inflight--;
	rq_release(k, ri);
	if (k->o->outstanding) { /* closed loop: the next request starts now */
		dmr_status_t st = read_next(k);
		if (st == DMR_OK && k->have_ahead)
			st = start_request(k, now);
		return st;
	}
	return DMR_OK;
}

static dmr_status_t on_xfer_done(kv_t *k, uint32_t xi, uint64_t now)
{
	xfer_t x = k->X.x[xi];
	xeng_free(&k->X, xi);
	pentry_t *p = &k->e[x.entry];
	p->pins--;
	if (x.opcode == DMR_WR_READ) {
		k->cnt.bytes_got += x.len;
		if (--k->rq[x.owner].gets_left == 0)
			return start_puts(k, x.owner, now);
		return DMR_OK;
	}
	k->cnt.bytes_put += x.len;
	p->state = E_READY;
	/* wake the READs that waited for this block */
	uint32_t w = p->waiters;
	p->waiters = NOIDX;
	while (w != NOIDX) {
		uint32_t nx = k->X.x[w].next;
		uint32_t c = k->X.x[w].client;
		xeng_enqueue(&k->X, w);
		dmr_status_t st = xeng_pump(&k->X, c);
		if (st != DMR_OK)
			return st;
		w = nx;
	}
	if (--k->rq[x.owner].puts_left == 0)
		return finish_request(k, x.owner, now);
	return DMR_OK;
}

void dmr_kv_opts_default(dmr_kv_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "sim";
	o->profile = "cx6dx-100g";
	o->out_dir = "out/kv";
	o->cns = 4;
	o->clients = 1;
	o->unbounded = 1;
	o->high_water = 0.95;
	o->low_water = 0.90;
	o->placement = DMR_KV_PLACE_RR;
	o->time_scale = 1.0;
	o->slice = 64 * 1024;
	o->qp_depth = 16;
	o->rpc_us = -1;
	o->sim_region = 16ull << 20;
	o->window_ms = 1000;
}

static const char *kv_summary_header =
	"workload,trace,kv_model,block_bytes,backend,profile,cns,clients,segments,placement,"
	"capacity_bytes,high_water,low_water,mode,time_scale,outstanding,slice_bytes,qp_depth,"
	"rpc_us,requests,blocks_requested,hit_ratio,blocks_got,blocks_put,puts_dropped,"
	"waited_gets,evictions,max_blocks_used,bytes_got,bytes_put,p50_us,p99_us,p999_us,"
	"mean_us,max_us,wire_bytes_to_mn,wire_bytes_from_mn,link_gbps,link_util_to_mn,"
	"link_util_from_mn,link_util,goodput_gbps,sim_time_s,wall_s,slices,events,folded,status";

struct kv_sum_arg {
	const dmr_kv_result_t *r;
	const dmr_kv_opts_t *o;
};

static int fill_kv_summary(FILE *f, const void *a)
{
	const struct kv_sum_arg *sa = a;
	const dmr_kv_result_t *r = sa->r;
	fprintf(f, "%s\nkvcache,", kv_summary_header);
	csv_str(f, sa->o->trace);
	fputc(',', f);
	csv_str(f, r->kv_model);
	return fprintf(f,
		       ",%" PRIu64 ",%s,%s,%u,%u,%u,%s,%" PRIu64 ",%.4f,%.4f,%s,%.6g,%u,%" PRIu64
		       ",%u,%.3f,%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64
		       ",%.3f,%.6f,%.6f,%.6f,%.3f,%.9f,%.3f,%" PRIu64 ",%" PRIu64 ",%d,%s\n",
		       r->block_bytes, r->backend, r->profile, r->cns, r->clients, r->segments,
		       r->placement, r->capacity, sa->o->unbounded ? 1.0 : sa->o->high_water,
		       sa->o->unbounded ? 1.0 : sa->o->low_water, r->mode, r->time_scale,
		       r->outstanding, r->slice, r->qp_depth, r->rpc_us, r->requests,
		       r->blocks_requested, r->hit_ratio, r->blocks_got, r->blocks_put,
		       r->puts_dropped, r->waited_gets, r->evictions, r->max_blocks_used,
		       r->bytes_got, r->bytes_put, r->p50_us, r->p99_us, r->p999_us, r->mean_us,
		       r->max_us, r->wire_to_mn, r->wire_from_mn, r->link_gbps, r->util_to_mn,
		       r->util_from_mn, r->link_util, r->goodput_gbps, r->sim_time_s, r->wall_s,
		       r->slices, r->events, r->folded, r->status);
}

struct kv_ts_arg {
	const kv_ts_t *ts;
	double link_gbps;
};

static int fill_kv_ts(FILE *f, const void *a)
{
	const struct kv_ts_arg *ta = a;
	const kv_ts_t *ts = ta->ts;
	double w = ts->window_ps / 1e12;
	int rc = fprintf(f, "t_s,arrivals,completed,blocks_got,blocks_put,puts_dropped,evictions,"
			    "bytes_got,bytes_put,gbps_to_mn,gbps_from_mn,link_util\n");
	for (uint32_t i = 0; i < ts->n && rc >= 0; i++) {
		const kv_cnt_t *c = &ts->rows[i];
		double to = c->wire_to * 8 / w / 1e9, from = c->wire_from * 8 / w / 1e9;
		double u = ta->link_gbps > 0 ? (to > from ? to : from) / ta->link_gbps : 0;
		rc = fprintf(f,
			     "%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.4f\n",
			     i * w, c->arrivals, c->completed, c->hits, c->puts, c->dropped,
			     c->evictions, c->bytes_got, c->bytes_put, to, from, u);
	}
	return rc;
}

static dmr_status_t kv_setup_pool(kv_t *k, uint64_t *logical_p)
{
	const dmr_kv_opts_t *o = k->o;
	k->nseg = o->segments ? o->segments : k->nclients;
	k->seg = calloc(k->nseg, sizeof(*k->seg));
	if (!k->seg)
		return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory");
	if (o->unbounded) {
		uint64_t stride = 1ull << 50;
		k->seg_stride = stride;
		for (uint32_t s = 0; s < k->nseg; s++)
			k->seg[s].nslots = UINT64_MAX;
		k->cap_slots = k->hw_slots = k->target_slots = UINT64_MAX;
		*logical_p = 0; /* unknown: fold */
		return DMR_OK;
	}
	uint64_t per_seg = o->capacity / k->nseg;
	if (per_seg < k->block)
		return dmr_err_set(k->err, DMR_ERR_RANGE,
				   "%s: a block of %" PRIu64 " bytes (trace header block_bytes) is "
				   "larger than a segment: --capacity %" PRIu64 " / %u segments = %" PRIu64
				   " bytes",
				   o->trace, k->block, o->capacity, k->nseg, per_seg);
	uint64_t slots = per_seg / k->block;
	k->seg_stride = slots * k->block;
	for (uint32_t s = 0; s < k->nseg; s++)
		k->seg[s].nslots = slots;
	k->cap_slots = slots * k->nseg;
	k->hw_slots = (uint64_t)floor(o->high_water * (double)k->cap_slots);
	if (k->hw_slots == 0)
		k->hw_slots = 1;
	k->target_slots = (uint64_t)floor(o->low_water * (double)k->cap_slots);
	if (k->target_slots >= k->hw_slots)
		k->target_slots = k->hw_slots - 1;
	*logical_p = k->cap_slots * k->block;
	return DMR_OK;
}

static dmr_status_t kv_check_opts(const dmr_kv_opts_t *o, dmr_err_t *err)
{
	if (!o->trace)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --trace FILE is required");
	if (o->cns == 0 || o->clients == 0 || o->qp_depth == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --cns, --clients and --qp-depth must be >= 1");
	if (!o->unbounded && o->capacity == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv run: give --capacity BYTES or --unbounded-pool");
	if (!(o->high_water > 0 && o->high_water <= 1 && o->low_water >= 0 &&
	      o->low_water <= o->high_water))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv run: need 0 <= --low-water <= --high-water <= 1 and "
				   "--high-water > 0 (got %g, %g)",
				   o->low_water, o->high_water);
	if (!(o->time_scale >= 0) || !isfinite(o->time_scale))
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --time-scale must be >= 0");
	if (o->slice > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --slice above 4 GiB - 1");
	if (!(o->window_ms > 0))
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --window-ms must be > 0");
	return DMR_OK;
}

static void kv_fill_result(kv_t *k, dmr_kv_result_t *res, const dmr_model_t *m, uint64_t tend)
{
	const dmr_kv_opts_t *o = k->o;
	snprintf(res->backend, sizeof(res->backend), "%s", o->backend);
	snprintf(res->profile, sizeof(res->profile), "%s", m ? m->name : "-");
	snprintf(res->kv_model, sizeof(res->kv_model), "%s", dmr_kv_trace_header(k->rd)->kv_model);
	snprintf(res->mode, sizeof(res->mode), "%s", o->outstanding ? "closed" : "open");
	snprintf(res->placement, sizeof(res->placement), "%s",
		 o->placement == DMR_KV_PLACE_LEAST ? "least-loaded" : "round-robin");
	res->cns = o->cns;
	res->clients = o->clients;
	res->segments = k->nseg;
	res->block_bytes = k->block;
	res->capacity = o->unbounded ? 0 : k->cap_slots * k->block;
	res->slice = o->slice;
	res->qp_depth = o->qp_depth;
	res->outstanding = o->outstanding;
	res->time_scale = o->time_scale;
	res->rpc_us = k->rpc_ps / 1e6;
	res->requests = k->cnt.completed;
	res->blocks_requested = k->requested;
	res->blocks_got = k->cnt.hits;
	res->blocks_put = k->cnt.puts;
	res->puts_dropped = k->cnt.dropped;
	res->bytes_got = k->cnt.bytes_got;
	res->bytes_put = k->cnt.bytes_put;
	res->evictions = k->cnt.evictions;
	res->waited_gets = k->waited;
	res->max_blocks_used = k->max_used;
	res->hit_ratio = k->requested ? (double)k->cnt.hits / k->requested : 0;
	double dummy;
	dvec_stats(&k->lat, &res->p50_us, &res->p99_us, &res->p999_us, &res->mean_us, &dummy,
		   &res->max_us);
	res->wire_to_mn = k->X.wire_to;
	res->wire_from_mn = k->X.wire_from;
	res->link_gbps = m ? m->link_gbps : 0;
	double T = (tend > k->t_first ? tend - k->t_first : 0) / 1e12;
	res->sim_time_s = T;
	if (T > 0) {
		if (m) {
			res->util_to_mn = k->X.wire_to * 8 / T / (m->link_gbps * 1e9);
			res->util_from_mn = k->X.wire_from * 8 / T / (m->link_gbps * 1e9);
		}
		res->goodput_gbps = (k->cnt.bytes_got + k->cnt.bytes_put) * 8 / T / 1e9;
	}
	res->link_util = res->util_to_mn > res->util_from_mn ? res->util_to_mn : res->util_from_mn;
	res->slices = k->X.slices;
	res->folded = k->X.folded;
	dmr_be_stats_t bs;
	dmr_be_stats(k->be, &bs);
	res->events = bs.events;
	snprintf(res->status, sizeof(res->status), "%s", res->partial ? "partial" : "complete");
}

static dmr_status_t kv_write_results(kv_t *k, const dmr_kv_result_t *res, dmr_err_t *err)
{
	const char *dir = k->o->out_dir;
	struct kv_sum_arg sa = {res, k->o};
	struct kv_ts_arg ta = {&k->ts, res->link_gbps};
	if (dmr_results_mkdir_p(dir) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
	dmr_status_t st = dmr_results_write_file(dir, res->partial ? "timeseries.partial.csv" : "timeseries.csv",
				     fill_kv_ts, &ta, err);
	if (st == DMR_OK)
		st = dmr_results_write_file(dir, res->partial ? "summary.partial.csv" : "summary.csv",
				fill_kv_summary, &sa, err);
	return st;
}

/* The event loop: until no event is left. */
static dmr_status_t kv_loop(kv_t *k)
{
	dmr_status_t st = DMR_OK;
	dmr_wc_t wcs[64];
	int w;
	while ((w = dmr_be_progress(k->be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(k->be, (uint32_t)w, wcs, 64);
		for (int i = 0; i < n && st == DMR_OK; i++) {
			uint64_t now = dmr_be_now(k->be, (uint32_t)w);
			k->cnt.wire_to = k->X.wire_to;
			k->cnt.wire_from = k->X.wire_from;
			ts_advance(&k->ts, dmr_sim_time(k->be), &k->cnt);
			switch (WRID_KIND(wcs[i].wr_id)) {
			case K_SLICE: {
				uint32_t xi;
				st = xeng_on_wc(&k->X, (uint32_t)w, &wcs[i], &xi);
				if (st == DMR_OK && xi != NOIDX)
					st = on_xfer_done(k, xi, now);
				break;
			}
			case K_ARRIVE:
				if (!k->have_ahead) {
					st = dmr_err_set(k->err, DMR_ERR_INVALID,
							 "kv: arrival without a request");
					break;
				}
				st = start_request(k, arrival_ps(k, k->ahead.t_us));
				if (st == DMR_OK)
					st = read_next(k);
				if (st == DMR_OK)
					st = schedule_ahead(k);
				break;
			case K_RPC:
				st = on_rpc(k, WRID_IDX(wcs[i].wr_id), now);
				break;
			default:
				st = dmr_err_set(k->err, DMR_ERR_INVALID,
						 "kv: unexpected completion %#" PRIx64, wcs[i].wr_id);
			}
		}
		if (st == DMR_OK)
			st = xeng_pump(&k->X, (uint32_t)w);
		if (st != DMR_OK)
			return st;
	}
	if (k->inflight || k->X.live || k->have_ahead)
		return dmr_err_set(k->err, DMR_ERR_INVALID,
				   "kv: the run stalled with %u requests and %u transfers in flight",
				   k->inflight, k->X.live);
	/* invariants of the master */
	uint64_t pinned = 0, segused = 0;
	for (uint32_t i = 0; i < k->cape; i++)
		if (k->e[i].state != E_FREE)
			pinned += k->e[i].pins;
	for (uint32_t s = 0; s < k->nseg; s++)
		segused += k->seg[s].used;
	if (pinned || segused != k->used || k->used != k->mapn ||
	    (!k->o->unbounded && k->max_used > k->hw_slots))
		return dmr_err_set(k->err, DMR_ERR_VERIFY,
				   "kv: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
				   " slots used by segments, %" PRIu64 " used, %" PRIu64
				   " mapped, peak %" PRIu64 " (high water %" PRIu64 ")",
				   pinned, segused, k->used, k->mapn, k->max_used, k->hw_slots);
	return DMR_OK;
}

dmr_status_t dmr_kv_run(const dmr_kv_opts_t *o, dmr_kv_result_t *res, dmr_err_t *err)
{
	kv_t K, *k = &K;
	memset(k, 0, sizeof(K));
	memset(res, 0, sizeof(*res));
	k->o = o;
	k->err = err;
	k->efree = k->rqfree = NOIDX;
	k->lru_head = k->lru_tail = NOIDX;
	double w0 = wall_now();
	const dmr_model_t *m = NULL;
	uint64_t logical = 0, region = 0, maxwr;
	int folded = 0;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	st = dmr_kv_trace_open(o->trace, &k->rd, err);
	if (st != DMR_OK)
		return st;
	k->block = dmr_kv_trace_header(k->rd)->block_bytes;
	k->nclients = o->cns * o->clients;
	maxwr = o->slice && o->slice < k->block ? o->slice : k->block;
	if (maxwr > UINT32_MAX) {
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "%s: blocks of %" PRIu64 " bytes need --slice (one WR carries < 4 GiB)",
				 o->trace, k->block);
		goto cleanup;
	}
	if ((st = kv_setup_pool(k, &logical)) != DMR_OK)
		goto cleanup;
	plan_region(logical, o->sim_region, maxwr, &region, &folded);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = o->clients,
			       .mr_size = region,
			       .seed = 1,
			       .profile = o->profile};
	if ((st = dmr_be_open(&cfg, &k->be, err)) != DMR_OK)
		goto cleanup;
	if (!(k->be->ops->caps & DMR_BE_CAP_DRIVEN)) {
		st = dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				 "backend %s: the KV workload runs on DRIVEN backends (sim) only so far",
				 o->backend);
		goto cleanup;
	}
	if (o->mtu && (st = dmr_sim_set_mtu(k->be, o->mtu)) != DMR_OK) {
		dmr_err_set(err, st, "--mtu %u: not an IB MTU (256..4096)", o->mtu);
		goto cleanup;
	}
	if (folded) /* block contents are not kept: time the transfers only */
		dmr_sim_set_payload(k->be, 0);
	st = xeng_init(&k->X, k->be, k->nclients, o->slice, maxwr, o->qp_depth, region, folded, err);
	if (st != DMR_OK)
		goto cleanup;
	m = dmr_sim_model(k->be);
	double rpc_us = o->rpc_us >= 0 ? o->rpc_us : (m ? m->read_rtt_ns / 1e3 : 2.0);
	k->rpc_ps = (uint64_t)llround(rpc_us * 1e6);
	k->ts.window_ps = (uint64_t)llround(o->window_ms * 1e9);
	if (k->ts.window_ps == 0)
		k->ts.window_ps = 1;
	k->ts.next_end = k->ts.window_ps;

	/* from here on, results are written (partial when the run fails) */
	if (o->outstanding) {
		for (uint32_t i = 0; i < o->outstanding && st == DMR_OK; i++) {
			st = read_next(k);
			if (st != DMR_OK || !k->have_ahead)
				break;
			st = start_request(k, 0);
		}
	} else {
		st = read_next(k);
		if (st == DMR_OK)
			st = schedule_ahead(k);
	}
	if (st == DMR_OK)
		st = kv_loop(k);
	res->partial = st != DMR_OK;
	uint64_t tend = res->partial ? max64(k->t_last, dmr_sim_time(k->be)) : k->t_last;
	k->cnt.wire_to = k->X.wire_to;
	k->cnt.wire_from = k->X.wire_from;
	ts_advance(&k->ts, tend, &k->cnt);
	if (tend > k->ts.next_end - k->ts.window_ps || k->ts.n == 0)
		ts_close(&k->ts, &k->cnt);
	kv_fill_result(k, res, m, tend);
	res->wall_s = wall_now() - w0;
	if (o->out_dir) {
		dmr_err_t werr;
		if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_IO, "%s", werr.msg);
	}
cleanup:
	xeng_fini(&k->X);
	if (k->rq)
		for (uint32_t i = 0; i < k->caprq; i++) {
			free(k->rq[i].ent);
			free(k->rq[i].put);
		}
	free(k->rq);
	free(k->e);
	free(k->map);
	if (k->seg)
		for (uint32_t s = 0; s < k->nseg; s++)
			free(k->seg[s].free);
	free(k->seg);
	free(k->ts.rows);
	free(k->lat.v);
	dmr_be_close(k->be);
	dmr_kv_trace_close(k->rd);
	return st;
}

static void fmt_bytes(char *b, size_t n, double x)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int i = 0;
	while (x >= 1024 && i < 5) {
		x /= 1024;
		i++;
	}
	snprintf(b, n, i ? "%.2f %s" : "%.0f %s", x, u[i]);
}

void dmr_kv_print(const dmr_kv_result_t *r, void *file)
{
	FILE *f = file;
	char b1[32], b2[32], b3[32], b4[32];
	fmt_bytes(b1, sizeof(b1), (double)r->block_bytes);
	fprintf(f, "dmreplay kv: %s on %s/%s, %u CNs x %u clients, %u segments (%s)%s\n",
		r->kv_model, r->backend, r->profile, r->cns, r->clients, r->segments, r->placement,
		r->partial ? "  [PARTIAL]" : "");
	if (r->capacity)
		fmt_bytes(b2, sizeof(b2), (double)r->capacity);
	else
		snprintf(b2, sizeof(b2), "unbounded");
	fprintf(f, "  pool           blocks of %s, capacity %s, peak %" PRIu64 " blocks, %" PRIu64
		   " evictions, %" PRIu64 " puts dropped (no evictable space)\n",
		b1, b2, r->max_blocks_used, r->evictions, r->puts_dropped);
	if (r->outstanding)
		fprintf(f, "  arrivals       closed loop, %u requests outstanding\n", r->outstanding);
	else
		fprintf(f, "  arrivals       open loop at the trace's timestamps x %.6g\n",
			r->time_scale);
	fprintf(f, "  requests       %" PRIu64 ", %" PRIu64 " blocks requested\n", r->requests,
		r->blocks_requested);
	fprintf(f, "  hit ratio      %.6f (%" PRIu64 " blocks got from the pool, %" PRIu64
		   " put; %" PRIu64 " gets waited for an earlier request's put)\n",
		r->hit_ratio, r->blocks_got, r->blocks_put, r->waited_gets);
	fmt_bytes(b3, sizeof(b3), (double)r->bytes_got);
	fmt_bytes(b4, sizeof(b4), (double)r->bytes_put);
	char sl[64];
	if (r->slice && r->slice < r->block_bytes)
		snprintf(sl, sizeof(sl), "slices of %" PRIu64 " B, %u in flight per client", r->slice,
			 r->qp_depth);
	else
		snprintf(sl, sizeof(sl), "one WR per block, %u in flight per client", r->qp_depth);
	fprintf(f, "  bytes          %s got (READ), %s put (WRITE); %s; master RPC %.2f us\n", b3,
		b4, sl, r->rpc_us);
	fprintf(f, "  latency        per request (arrival to last block): p50 %.1f us, p99 %.1f us, "
		   "p99.9 %.1f us, mean %.1f us, max %.1f us\n",
		r->p50_us, r->p99_us, r->p999_us, r->mean_us, r->max_us);
	fprintf(f, "  link           MN link %.0f Gb/s: to MN %.2f %%, from MN %.2f %% over %.3f s "
		   "simulated; goodput %.2f Gb/s\n",
		r->link_gbps, 100 * r->util_to_mn, 100 * r->util_from_mn, r->sim_time_s,
		r->goodput_gbps);
	fprintf(f, "  simulator      %" PRIu64 " slices, %" PRIu64 " events, %.2f s wall%s\n",
		r->slices, r->events, r->wall_s,
		r->folded ? " (MN offsets folded into the sim's region: timing exact, contents not kept)"
			  : "");
}

/* ---- transfer benchmark ------------------------------------------------- */

void dmr_kv_bench_opts_default(dmr_kv_bench_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "sim";
	o->profile = "cx6dx-100g";
	o->size = 4ull << 20;
	o->ops = 1000;
	o->threads = 1;
	o->cns = 1;
	o->batch = 1;
	o->slice = 64 * 1024;
	o->qp_depth = 16;
	o->opcode = DMR_WR_WRITE;
	o->sim_region = 64ull << 20;
}

typedef struct bthread {
	uint64_t left;       /* ops not yet submitted */
	uint32_t pending;    /* ops of the current batch not completed */
	uint32_t worker;
} bthread_t;

static dmr_status_t bench_submit(xeng_t *X, bthread_t *t, uint32_t ti,
				 const dmr_kv_bench_opts_t *o, dmr_err_t *err)
{
	uint32_t b = o->batch;
	if (b > t->left)
		b = (uint32_t)t->left;
	uint64_t now = dmr_be_now(X->be, t->worker);
	for (uint32_t j = 0; j < b; j++) {
		uint32_t xi = xeng_alloc(X);
		if (xi == NOIDX)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv bench: out of memory");
		xfer_t *x = &X->x[xi];
		x->logical = ((uint64_t)ti * o->batch + j) * o->size;
		x->len = o->size;
		x->opcode = (uint8_t)o->opcode;
		x->owner = ti;
		x->client = t->worker;
		x->t0 = now;
		xeng_enqueue(X, xi);
	}
	t->left -= b;
	t->pending = b;
	return xeng_pump(X, t->worker);
}

dmr_status_t dmr_kv_bench(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r, dmr_err_t *err)
{
	memset(r, 0, sizeof(*r));
	if (o->size == 0 || o->ops == 0 || o->threads == 0 || o->batch == 0 || o->cns == 0 ||
	    o->qp_depth == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv bench: --size, --ops, --threads, --batch, --cns, --qp-depth "
				   "must be >= 1");
	if (o->opcode != DMR_WR_READ && o->opcode != DMR_WR_WRITE)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv bench: op must be read or write");
	uint64_t maxwr = o->slice && o->slice < o->size ? o->slice : o->size;
	if (maxwr > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv bench: one WR carries < 4 GiB: use --slice for --size %" PRIu64,
				   o->size);
	double w0 = wall_now();
	uint32_t wpc = (o->threads + o->cns - 1) / o->cns;
	uint64_t region;
	int folded;
	plan_region(o->size * o->threads * o->batch, o->sim_region, maxwr, &region, &folded);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = wpc,
			       .mr_size = region,
			       .seed = 1,
			       .profile = o->profile};
	dmr_be_t *be = NULL;
	xeng_t X;
	memset(&X, 0, sizeof(X));
	bthread_t *th = NULL;
	dvec_t lat = {0};
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (st != DMR_OK)
		return st;
	if (!(be->ops->caps & DMR_BE_CAP_DRIVEN)) {
		st = dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				 "backend %s: kv bench runs on DRIVEN backends (sim) only so far",
				 o->backend);
		goto out;
	}
	if (o->mtu && (st = dmr_sim_set_mtu(be, o->mtu)) != DMR_OK) {
		dmr_err_set(err, st, "--mtu %u: not an IB MTU (256..4096)", o->mtu);
		goto out;
	}
	if (folded)
		dmr_sim_set_payload(be, 0);
	st = xeng_init(&X, be, o->cns * wpc, o->slice, maxwr, o->qp_depth, region, folded, err);
	if (st != DMR_OK)
		goto out;
	th = calloc(o->threads, sizeof(*th));
	if (!th) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "kv bench: out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < o->threads; t++) {
		th[t].left = o->ops / o->threads + (t < o->ops % o->threads);
		th[t].worker = (t % o->cns) * wpc + t / o->cns;
	}
	for (uint32_t t = 0; t < o->threads && st == DMR_OK; t++)
		if (th[t].left)
			st = bench_submit(&X, &th[t], t, o, err);
	uint64_t tlast = 0;
	dmr_wc_t wcs[64];
	int w;
	while (st == DMR_OK && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wcs, 64);
		for (int i = 0; i < n && st == DMR_OK; i++) {
			uint32_t xi;
			st = xeng_on_wc(&X, (uint32_t)w, &wcs[i], &xi);
			if (st != DMR_OK || xi == NOIDX)
				continue;
			uint64_t now = dmr_be_now(be, (uint32_t)w);
			xfer_t x = X.x[xi];
			xeng_free(&X, xi);
			tlast = max64(tlast, now);
			if (dvec_push(&lat, (now - x.t0) / 1e6) != 0) {
				st = dmr_err_set(err, DMR_ERR_NOMEM, "kv bench: out of memory");
				break;
			}
			bthread_t *t = &th[x.owner];
			if (--t->pending == 0 && t->left)
				st = bench_submit(&X, t, x.owner, o, err);
		}
		if (st == DMR_OK)
			st = xeng_pump(&X, (uint32_t)w);
	}
	if (st == DMR_OK && lat.n != o->ops)
		st = dmr_err_set(err, DMR_ERR_INVALID, "kv bench: %" PRIu64 " of %" PRIu64
				 " ops completed", lat.n, o->ops);
	if (st != DMR_OK)
		goto out;
	const dmr_model_t *m = dmr_sim_model(be);
	r->ops = lat.n;
	r->bytes = lat.n * o->size;
	dvec_stats(&lat, &r->p50_us, &r->p99_us, &r->p999_us, &r->mean_us, &r->min_us, &r->max_us);
	r->elapsed_us = tlast / 1e6;
	r->per_op_us = r->elapsed_us / r->ops;
	if (tlast) {
		r->gbps = r->bytes * 8.0 / (tlast / 1e12) / 1e9;
		r->wire_gbps = (X.wire_to > X.wire_from ? X.wire_to : X.wire_from) * 8.0 /
			       (tlast / 1e12) / 1e9;
	}
	if (m) {
		snprintf(r->profile, sizeof(r->profile), "%s", m->name);
		r->link_gbps = m->link_gbps;
		r->mtu = m->mtu;
		r->bound_payload_us = o->size * 8.0 / (m->link_gbps * 1e3);
		r->bound_wire_us =
			dmr_model_wire_ps(m, dmr_model_msg_wire_bytes(m, o->size, m->reth_bytes, 0)) /
			1e6;
	}
	r->wall_s = wall_now() - w0;
out:
	free(th);
	free(lat.v);
	xeng_fini(&X);
	dmr_be_close(be);
	return st;
}

void dmr_kv_bench_print(const dmr_kv_bench_opts_t *o, const dmr_kv_bench_result_t *r, void *file)
{
	FILE *f = file;
	char sz[32];
	fmt_bytes(sz, sizeof(sz), (double)o->size);
	uint64_t nsl = o->slice && o->slice < o->size ? (o->size + o->slice - 1) / o->slice : 1;
	fprintf(f, "dmreplay kv bench: %" PRIu64 " x %s of %" PRIu64 " B (%s), %u thread%s x batch %u"
		   " on %u CN%s, %s/%s (%.0f Gb/s, MTU %u)\n",
		r->ops, o->opcode == DMR_WR_READ ? "READ" : "WRITE", o->size, sz, o->threads,
		o->threads == 1 ? "" : "s", o->batch, o->cns, o->cns == 1 ? "" : "s", o->backend,
		r->profile, r->link_gbps, r->mtu);
	if (nsl > 1)
		fprintf(f, "  slicing        %" PRIu64 " slices of %" PRIu64
			   " B per op, up to %u in flight per thread's QP\n",
			nsl, o->slice, o->qp_depth);
	else
		fprintf(f, "  slicing        none: one WR per op\n");
	fprintf(f, "  latency/op     p50 %.2f us, p99 %.2f us, p99.9 %.2f us (min %.2f, max %.2f, mean %.2f)\n",
		r->p50_us, r->p99_us, r->p999_us, r->min_us, r->max_us, r->mean_us);
	fprintf(f, "  throughput     %.2f Gb/s payload (%.2f Gb/s on the wire), %.2f us per op "
		   "amortised, %.3f ms simulated\n",
		r->gbps, r->wire_gbps, r->per_op_us, r->elapsed_us / 1e3);
	fprintf(f, "  lower bound    %s must cross one %.0f Gb/s link: %" PRIu64 " B x 8 / %.0f Gb/s = "
		   "%.2f us payload serialisation;\n"
		   "                 %.2f us with RoCEv2 framing at MTU %u (%" PRIu64
		   " packets, 82 B of headers each + RETH)\n",
		sz, r->link_gbps, o->size, r->link_gbps, r->bound_payload_us, r->bound_wire_us,
		r->mtu, r->mtu ? (o->size + r->mtu - 1) / r->mtu : 0);
	if (r->bound_payload_us > 0)
		fprintf(f, "                 measured p50 %.2f us = %.3f x the payload bound; amortised "
			   "%.2f us/op = %.3f x\n",
			r->p50_us, r->p50_us / r->bound_payload_us, r->per_op_us,
			r->per_op_us / r->bound_payload_us);
	if (r->link_gbps > 0) {
		double need50 = o->size * 8.0 / 50e-6 / 1e9, need80 = o->size * 8.0 / 80e-6 / 1e9;
		fprintf(f, "  reference      \"50 to 80 us per 4 MB push\" at this size would need %.0f "
			   "to %.0f Gb/s through\n"
			   "                 one %.0f Gb/s port: impossible for one push, and for the "
			   "amortised time of a stream too\n"
			   "                 (bytes per op / time per op <= link rate, so >= %.2f us per "
			   "op on one link)\n",
			need80, need50, r->link_gbps, r->bound_payload_us);
	}
	fprintf(f, "  simulator      %.3f s wall\n", r->wall_s);
}

/* ---- command line ------------------------------------------------------- */

static int parse_size(const char *cmd, const char *opt, const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	uint64_t mul = 1;
	if (*end) {
		switch (*end) {
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		case 'T': case 't': mul = 1ull << 40; break;
		default: goto bad;
		}
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end || x > UINT64_MAX / mul)
		goto bad;
	*v = x * mul;
	return 0;
bad:
	fprintf(stderr, "dmreplay kv %s: option %s: '%s' is not a non-negative integer "
			"(K/M/G/T suffixes: powers of 1024)\n",
		cmd, opt, s ? s : "");
	return -1;
}

static int parse_u32(const char *cmd, const char *opt, const char *s, uint32_t *v, uint32_t lo,
		     uint32_t hi)
{
	uint64_t x;
	if (parse_size(cmd, opt, s, &x))
		return -1;
	if (x < lo || x > hi) {
		fprintf(stderr, "dmreplay kv %s: option %s: %" PRIu64 " out of range (%u..%u)\n", cmd,
			opt, x, lo, hi);
		return -1;
	}
	*v = (uint32_t)x;
	return 0;
}

static int parse_num(const char *cmd, const char *opt, const char *s, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(x) || x < 0) {
		fprintf(stderr, "dmreplay kv %s: option %s: '%s' is not a non-negative number\n", cmd,
			opt, s);
		return -1;
	}
	*v = x;
	return 0;
}

static void kv_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv COMMAND [options]   (COMMAND --help for its options)\n\n"
		"KV-cache pool workload (docs/KVCACHE.md):\n"
		"  gen      convert a Mooncake JSONL request trace into a KV trace\n"
		"  run      replay a KV trace over a pool of KV blocks on a backend\n"
		"  bench    transfer benchmark: per-op latency and Gb/s of large READ/WRITE\n"
		"  models   list the model presets (KV bytes per token and per block)\n");
}

static void gen_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv gen --mooncake FILE -o OUT [--kv-model NAME | --block-bytes B]\n"
		"Convert a Mooncake JSONL trace (timestamp ms, input_length, output_length,\n"
		"hash_ids of 512-token blocks) into a KV trace (docs/KVCACHE.md). Malformed\n"
		"lines are refused with FILE:LINE and the field; timestamps going backwards\n"
		"are refused (never sorted).\n\n"
		"  --mooncake FILE    input JSONL\n"
		"  -o, --out FILE     output KV trace (written to FILE.tmp, then renamed)\n"
		"  --kv-model NAME    block size from a preset (default llama-3-8b): %s\n"
		"  --block-bytes B    block size in bytes instead (K/M/G suffixes)\n"
		"  --requests N       convert the first N lines only\n"
		"  --quiet\n",
		dmr_kv_model_names());
}

static int kv_gen_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mooncake", required_argument, 0, 'i'}, {"out", required_argument, 0, 'o'},
		{"kv-model", required_argument, 0, 'm'}, {"block-bytes", required_argument, 0, 'b'},
		{"requests", required_argument, 0, 'n'}, {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
	dmr_kv_gen_opts_t o = {0};
	const char *model = NULL;
	int quiet = 0, ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (ch) {
		case 'i': o.mooncake = optarg; break;
		case 'o': o.out = optarg; break;
		case 'm': model = optarg; break;
		case 'b':
			if (parse_size("gen", "--block-bytes", optarg, &o.block_bytes))
				return 2;
			if (o.block_bytes == 0) {
				fprintf(stderr, "dmreplay kv gen: --block-bytes must be > 0\n");
				return 2;
			}
			break;
		case 'n':
			if (parse_size("gen", "--requests", optarg, &o.max_requests))
				return 2;
			break;
		case 'q': quiet = 1; break;
		case 'h': gen_usage(stdout); return 0;
		default: gen_usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv gen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o.mooncake || !o.out) {
		fprintf(stderr, "dmreplay kv gen: --mooncake FILE and -o OUT are required\n");
		gen_usage(stderr);
		return 2;
	}
	if (model && o.block_bytes) {
		fprintf(stderr, "dmreplay kv gen: give --kv-model or --block-bytes, not both\n");
		return 2;
	}
	if (!o.block_bytes) {
		const dmr_kv_model_t *km = dmr_kv_model_find(model ? model : "llama-3-8b");
		if (!km) {
			fprintf(stderr, "dmreplay kv gen: --kv-model '%s': unknown (known: %s)\n",
				model, dmr_kv_model_names());
			return 2;
		}
		o.block_bytes = dmr_kv_model_block_bytes(km);
		o.kv_model = km->name;
	}
	dmr_kv_gen_stats_t s;
	dmr_err_t err;
	dmr_status_t st = dmr_kv_gen_mooncake(&o, &s, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv gen: error: %s\n", err.msg);
		return st == DMR_ERR_NOMEM ? 1 : 2;
	}
	if (!quiet) {
		char b1[32], b2[32];
		fmt_bytes(b1, sizeof(b1), (double)o.block_bytes);
		fmt_bytes(b2, sizeof(b2), (double)s.distinct * o.block_bytes);
		printf("dmreplay kv gen: %s -> %s\n", o.mooncake, o.out);
		printf("  requests       %" PRIu64 " over %.3f s of trace time\n", s.requests,
		       s.last_t_us / 1e6);
		printf("  blocks         %" PRIu64 " requested, %" PRIu64 " distinct ids, %" PRIu64
		       " reuses of an earlier request's id\n",
		       s.blocks, s.distinct, s.reused);
		printf("  prefix reuse   %.6f of requested blocks (= hit ratio of an unbounded pool, "
		       "requests in trace order)\n",
		       s.blocks ? (double)s.reused / s.blocks : 0);
		printf("  block size     %s (%s); an unbounded pool holds %s\n", b1,
		       o.kv_model ? o.kv_model : "--block-bytes", b2);
	}
	return 0;
}

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv run --trace KVTRACE [options]\n"
		"Replay a KV trace (dmreplay kv gen) over a pool of KV blocks; print a summary,\n"
		"write DIR/summary.csv and DIR/timeseries.csv.\n\n"
		"  --trace FILE        KV trace\n"
		"  --backend NAME      sim (default)\n"
		"  --profile NAME      hardware profile for sim (default cx6dx-100g)\n"
		"  --cns N             compute nodes (default 4)\n"
		"  --clients N         client workers per CN (default 1)\n"
		"  --segments N        pool segments (default: all clients)\n"
		"  --unbounded-pool    no capacity limit, no eviction (default)\n"
		"  --capacity BYTES    pool capacity over all segments (K/M/G/T suffixes)\n"
		"  --high-water X      evict when a put would exceed X of capacity (default 0.95)\n"
		"  --low-water X       ... down to X of capacity (default 0.90)\n"
		"  --placement P       round-robin (default) | least-loaded\n"
		"  --time-scale X      open loop: arrival = trace time x X (default 1; 0.5 = twice as fast)\n"
		"  --outstanding N     closed loop with N requests in flight instead\n"
		"  --slice BYTES       split transfers into slices (default 64K; 0 = one WR per block)\n"
		"  --qp-depth N        slices in flight per client (default 16)\n"
		"  --rpc-us X          master lookup RPC (default: profile's small-READ round trip)\n"
		"  --sim-region BYTES  real MN memory on sim; larger pools are folded into it (default 16M)\n"
		"  --mtu BYTES         override the profile's path MTU\n"
		"  --requests N        replay the first N requests\n"
		"  --window-ms X       time-series window (default 1000)\n"
		"  --out DIR           results directory (default out/kv)\n"
		"  --quiet\n");
}

static int kv_run_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"trace", required_argument, 0, 't'},     {"backend", required_argument, 0, 'b'},
		{"profile", required_argument, 0, 'p'},   {"cns", required_argument, 0, 'c'},
		{"clients", required_argument, 0, 'C'},   {"segments", required_argument, 0, 'S'},
		{"unbounded-pool", no_argument, 0, 'U'},  {"capacity", required_argument, 0, 'K'},
		{"high-water", required_argument, 0, 'H'}, {"low-water", required_argument, 0, 'L'},
		{"placement", required_argument, 0, 'P'}, {"time-scale", required_argument, 0, 'x'},
		{"outstanding", required_argument, 0, 'N'}, {"slice", required_argument, 0, 's'},
		{"qp-depth", required_argument, 0, 'D'},  {"rpc-us", required_argument, 0, 'r'},
		{"sim-region", required_argument, 0, 'R'}, {"mtu", required_argument, 0, 'm'},
		{"requests", required_argument, 0, 'n'},  {"window-ms", required_argument, 0, 'w'},
		{"out", required_argument, 0, 'o'},       {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
	dmr_kv_opts_t o;
	dmr_kv_opts_default(&o);
	int ch, li = -1, saw_unb = 0, saw_cap = 0;
	char name[40];
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		int bad = 0;
		switch (ch) {
		case 't': o.trace = optarg; break;
		case 'b': o.backend = optarg; break;
		case 'p': o.profile = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'h': run_usage(stdout); return 0;
		case 'c': bad = parse_u32("run", name, optarg, &o.cns, 1, 1024); break;
		case 'C': bad = parse_u32("run", name, optarg, &o.clients, 1, 1024); break;
		case 'S': bad = parse_u32("run", name, optarg, &o.segments, 1, 1u << 20); break;
		case 'D': bad = parse_u32("run", name, optarg, &o.qp_depth, 1, 4096); break;
		case 'N': bad = parse_u32("run", name, optarg, &o.outstanding, 1, 1u << 24); break;
		case 'm': bad = parse_u32("run", name, optarg, &o.mtu, 256, 4096); break;
		case 'U': saw_unb = 1; o.unbounded = 1; break;
		case 'K':
			saw_cap = 1;
			o.unbounded = 0;
			bad = parse_size("run", name, optarg, &o.capacity);
			break;
		case 'H': bad = parse_num("run", name, optarg, &o.high_water); break;
		case 'L': bad = parse_num("run", name, optarg, &o.low_water); break;
		case 'x': bad = parse_num("run", name, optarg, &o.time_scale); break;
		case 'r': bad = parse_num("run", name, optarg, &o.rpc_us); break;
		case 'w': bad = parse_num("run", name, optarg, &o.window_ms); break;
		case 's': bad = parse_size("run", name, optarg, &o.slice); break;
		case 'R': bad = parse_size("run", name, optarg, &o.sim_region); break;
		case 'n': bad = parse_size("run", name, optarg, &o.requests); break;
		case 'P':
			if (strcmp(optarg, "round-robin") == 0 || strcmp(optarg, "rr") == 0)
				o.placement = DMR_KV_PLACE_RR;
			else if (strcmp(optarg, "least-loaded") == 0 || strcmp(optarg, "ll") == 0)
				o.placement = DMR_KV_PLACE_LEAST;
			else {
				fprintf(stderr, "dmreplay kv run: --placement '%s': round-robin or "
						"least-loaded\n",
					optarg);
				bad = 1;
			}
			break;
		default: run_usage(stderr); return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv run: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (saw_unb && saw_cap) {
		fprintf(stderr, "dmreplay kv run: --unbounded-pool and --capacity exclude each other\n");
		return 2;
	}
	dmr_kv_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_run(&o, &r, &err);
	if (st == DMR_OK || r.partial) {
		if (!o.quiet || st != DMR_OK)
			if (r.requests || st == DMR_OK)
				dmr_kv_print(&r, stdout);
	}
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv run: error: %s\n", err.msg);
		return (st == DMR_ERR_PARSE || st == DMR_ERR_IO || st == DMR_ERR_RANGE ||
			st == DMR_ERR_INVALID)
			       ? 2
			       : 1;
	}
	if (!o.quiet && o.out_dir)
		printf("  results        %s/summary.csv, %s/timeseries.csv\n", o.out_dir, o.out_dir);
	return 0;
}

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv bench [--size 4M] [--ops 1000] [--threads T] [--batch B] [options]\n"
		"Transfer benchmark in the style of Mooncake's transfer_engine_bench: each thread\n"
		"submits B ops of SIZE bytes, waits for all of them, and repeats; prints per-op\n"
		"latency percentiles, throughput in Gb/s and the serialisation lower bound.\n\n"
		"  --size BYTES       bytes per op (default 4M = 4194304)\n"
		"  --ops N            ops over all threads (default 1000)\n"
		"  --threads T        client workers (default 1)\n"
		"  --batch B          ops in flight per thread (default 1)\n"
		"  --cns N            spread the threads over N CNs (default 1)\n"
		"  --op write|read    (default write)\n"
		"  --slice BYTES      slice size (default 64K; 0 = one WR per op)\n"
		"  --qp-depth N       slices in flight per thread (default 16)\n"
		"  --backend NAME     sim (default)\n"
		"  --profile NAME     (default cx6dx-100g)\n"
		"  --mtu BYTES        override the profile's path MTU\n");
}

static int kv_bench_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, 0, 'z'},    {"ops", required_argument, 0, 'n'},
		{"threads", required_argument, 0, 'T'}, {"batch", required_argument, 0, 'B'},
		{"cns", required_argument, 0, 'c'},     {"op", required_argument, 0, 'O'},
		{"slice", required_argument, 0, 's'},   {"qp-depth", required_argument, 0, 'D'},
		{"backend", required_argument, 0, 'b'}, {"profile", required_argument, 0, 'p'},
		{"mtu", required_argument, 0, 'm'},     {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	dmr_kv_bench_opts_t o;
	dmr_kv_bench_opts_default(&o);
	int ch, li = -1;
	char name[40];
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		int bad = 0;
		switch (ch) {
		case 'z': bad = parse_size("bench", name, optarg, &o.size); break;
		case 'n': bad = parse_size("bench", name, optarg, &o.ops); break;
		case 's': bad = parse_size("bench", name, optarg, &o.slice); break;
		case 'T': bad = parse_u32("bench", name, optarg, &o.threads, 1, 1024); break;
		case 'B': bad = parse_u32("bench", name, optarg, &o.batch, 1, 1u << 20); break;
		case 'c': bad = parse_u32("bench", name, optarg, &o.cns, 1, 1024); break;
		case 'D': bad = parse_u32("bench", name, optarg, &o.qp_depth, 1, 4096); break;
		case 'm': bad = parse_u32("bench", name, optarg, &o.mtu, 256, 4096); break;
		case 'b': o.backend = optarg; break;
		case 'p': o.profile = optarg; break;
		case 'O':
			if (strcmp(optarg, "write") == 0)
				o.opcode = DMR_WR_WRITE;
			else if (strcmp(optarg, "read") == 0)
				o.opcode = DMR_WR_READ;
			else {
				fprintf(stderr, "dmreplay kv bench: --op '%s': write or read\n", optarg);
				bad = 1;
			}
			break;
		case 'h': bench_usage(stdout); return 0;
		default: bench_usage(stderr); return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv bench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	dmr_kv_bench_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_bench(&o, &r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv bench: error: %s\n", err.msg);
		return st == DMR_ERR_INVALID || st == DMR_ERR_IO || st == DMR_ERR_PARSE ? 2 : 1;
	}
	dmr_kv_bench_print(&o, &r, stdout);
	return 0;
}

static int kv_models_main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: dmreplay kv models\n");
		return 2;
	}
	printf("%-12s %6s %8s %8s %5s %12s %14s  %s\n", "preset", "layers", "kv_heads", "head_dim",
	       "bytes", "bytes/token", "block_bytes", "config");
	for (const dmr_kv_model_t *m = dmr_kv_models; m->name; m++) {
		char b[32];
		fmt_bytes(b, sizeof(b), (double)dmr_kv_model_block_bytes(m));
		printf("%-12s %6u %8u %8u %5u %12" PRIu64 " %14" PRIu64 "  %s (%s)\n", m->name,
		       m->layers, m->kv_heads, m->head_dim, m->elem_bytes,
		       dmr_kv_model_bytes_per_token(m), dmr_kv_model_block_bytes(m), m->hf_id, b);
	}
	printf("block = %u tokens x 2 (K,V) x layers x kv_heads x head_dim x bytes per element\n",
	       DMR_KV_BLOCK_TOKENS);
	return 0;
}

int dmr_kv_main(int argc, char **argv)
{
	if (argc < 2) {
		kv_usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		kv_usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "gen") == 0)
		return kv_gen_main(argc - 1, argv + 1);
	if (strcmp(cmd, "run") == 0)
		return kv_run_main(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0)
		return kv_bench_main(argc - 1, argv + 1);
	if (strcmp(cmd, "models") == 0)
		return kv_models_main(argc - 1, argv + 1);
	fprintf(stderr, "dmreplay kv: unknown command '%s'\n", cmd);
	kv_usage(stderr);
	return 2;
}
