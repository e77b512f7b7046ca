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
#include <fcntl.h>
#include <getopt.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/sim/sim.h"
#ifdef DMR_HAVE_VERBS
#include "../backends/verbs/verbs.h"
#endif
#include "../traces/kvcache.h"
#include "roles.h"

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
	uint64_t tag;        /* threaded run: block id (content pattern) */
} xfer_t;

typedef struct client {
	uint32_t qhead, qtail; /* xfers with slices left to post */
	uint32_t inflight;     /* slices posted, not completed */
	uint64_t npost, ndone; /* slices posted / completed (ring buffer index) */
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
	uint32_t w0;          /* worker of client 0 (threaded: one xeng per thread) */
	uint8_t *ring;        /* content mode: depth buffers of maxwr bytes per client;
				 WRITE slices carry pat_fill(tag), READ slices are checked */
	uint64_t base;        /* added to every remote offset (threaded pool base) */
	uint64_t corrupt;     /* tests: id + 1 of a block whose put is corrupted */
} xeng_t;

/* Content pattern of KV block `id`: 8-byte word w of the block is
 * mix64(id x golden + w), so a READ can check that it got the bytes that the
 * put of that very block wrote, at that very offset. */
static inline uint64_t pat_word(uint64_t id, uint64_t w)
{
	return mix64(id * 0x9E3779B97F4A7C15ull + w);
}

static void pat_fill(uint8_t *buf, uint64_t id, uint64_t off, uint64_t len)
{
	uint64_t i = 0;
	for (; i < len && ((off + i) & 7); i++)
		buf[i] = (uint8_t)(pat_word(id, (off + i) >> 3) >> (8 * ((off + i) & 7)));
	for (; i + 8 <= len; i += 8) {
		uint64_t v = pat_word(id, (off + i) >> 3);
		memcpy(buf + i, &v, 8);
	}
	for (; i < len; i++)
		buf[i] = (uint8_t)(pat_word(id, (off + i) >> 3) >> (8 * ((off + i) & 7)));
}

/* Index of the first byte of buf that differs from the pattern, or len. */
static uint64_t pat_check(const uint8_t *buf, uint64_t id, uint64_t off, uint64_t len)
{
	uint64_t i = 0;
	for (; i < len && ((off + i) & 7); i++)
		if (buf[i] != (uint8_t)(pat_word(id, (off + i) >> 3) >> (8 * ((off + i) & 7))))
			return i;
	for (; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, buf + i, 8);
		if (v != pat_word(id, (off + i) >> 3))
			break;
	}
	for (; i < len; i++)
		if (buf[i] != (uint8_t)(pat_word(id, (off + i) >> 3) >> (8 * ((off + i) & 7))))
			return i;
	return len;
}

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

/* Threaded backends: the xeng of one thread, whose only client is worker
 * w0; ring: per-slice buffers with content patterns (kv run). Registers its
 * buffers for w0 (call before the worker's thread starts). */
static dmr_status_t xeng_init_thread(xeng_t *e, dmr_be_t *be, uint32_t w0, uint64_t slice,
				     uint64_t maxwr, uint32_t depth, uint64_t base, int ring,
				     dmr_err_t *err)
{
	memset(e, 0, sizeof(*e));
	e->be = be;
	e->err = err;
	e->slice = slice;
	e->maxwr = maxwr;
	e->depth = depth;
	e->w0 = w0;
	e->base = base;
	e->xfree = NOIDX;
	e->nc = 1;
	e->c = calloc(1, sizeof(*e->c));
	e->buf = malloc(ring ? (size_t)maxwr * depth : maxwr);
	if (!e->c || !e->buf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (%llu-byte buffers)",
				   (unsigned long long)(ring ? maxwr * depth : maxwr));
	memset(e->buf, 0x5a, ring ? (size_t)maxwr * depth : maxwr);
	if (ring)
		e->ring = e->buf;
	e->c[0].qhead = e->c[0].qtail = NOIDX;
	return dmr_be_mr_reg(be, w0, e->buf, ring ? (size_t)maxwr * depth : maxwr, err);
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
			if (e->ring) {
				w->local = e->ring +
					   ((uint64_t)ci * e->depth + c->npost % e->depth) * e->maxwr;
				if (x->opcode == DMR_WR_WRITE) {
					pat_fill(w->local, x->tag, x->posted, len);
					if (e->corrupt && e->corrupt == x->tag + 1 && !x->posted)
						((uint8_t *)w->local)[0] ^= 0xff; /* fault injection */
				}
			}
			c->npost++;
			w->remote = e->base + fold(e, x->logical + x->posted);
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
		dmr_status_t st = dmr_be_post(e->be, e->w0 + ci, 0, wrs, n, e->err);
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
	worker -= e->w0;
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
	client_t *c = &e->c[worker];
	if (e->ring && x->opcode == DMR_WR_READ) {
		const uint8_t *b =
		    e->ring + ((uint64_t)worker * e->depth + c->ndone % e->depth) * e->maxwr;
		uint64_t bad = pat_check(b, x->tag, x->done, len);
		if (bad < len)
			return dmr_err_set(e->err, DMR_ERR_VERIFY,
					   "kv: content check: block %" PRIu64 " byte %" PRIu64
					   " read from MN offset %" PRIu64 " (worker %u) is not what "
					   "the block's put wrote",
					   x->tag, x->done + bad, e->base + x->logical + x->done + bad,
					   e->w0 + worker);
	}
	c->ndone++;
	x->done += len;
	c->inflight--;
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

/* ---- stop flag: SIGINT/SIGTERM ----------------------------------------- */

/* Set by the handler; the sim's event loop, the threaded clients and the
 * launcher poll it (sigaction without SA_RESTART: a blocking call returns
 * EINTR and the poll follows). */
static volatile sig_atomic_t kv_interrupted;

static void kv_on_signal(int sig)
{
	kv_interrupted = sig;
}

/* Install kv_on_signal for SIGINT and SIGTERM, clearing the flag; the old
 * handlers go to old[0..1] for kv_sig_restore. */
static void kv_sig_install(struct sigaction old[2])
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kv_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	kv_interrupted = 0;
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
}

static void kv_sig_restore(const struct sigaction old[2])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
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
	int overflow;       /* DMR_KV_TS_MAX_ROWS reached: the run is stopped */
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
		if (ts->n >= DMR_KV_TS_MAX_ROWS) {
			ts->overflow = 1;
			return;
		}
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
	uint64_t stored, peak; /* blocks placed here over the run; most held at once */
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
	g->stored++;
	if (g->used > g->peak)
		g->peak = g->used;
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
	if (st == DMR_EOF) {
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
	o->port = 1;
	o->gid_index = -1;
	o->timeout_s = 60;
}

static const char *kv_summary_header =
	"workload,trace,kv_model,block_bytes,backend,profile,cns,clients,segments,placement,"
	"capacity_bytes,high_water,low_water,mode,time_scale,outstanding,slice_bytes,qp_depth,"
	"rpc_us,requests,blocks_requested,hit_ratio,blocks_got,blocks_put,puts_dropped,"
	"waited_gets,evictions,max_blocks_used,bytes_got,bytes_put,p50_us,p99_us,p999_us,"
	"mean_us,max_us,wire_bytes_to_mn,wire_bytes_from_mn,link_gbps,link_util_to_mn,"
	"link_util_from_mn,link_util,goodput_gbps,sim_time_s,wall_s,slices,events,folded,status,"
	"segment_blocks_min,segment_blocks_max,segment_peak_min,segment_peak_max";

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
		       ",%.3f,%.6f,%.6f,%.6f,%.3f,%.9f,%.3f,%" PRIu64 ",%" PRIu64 ",%d,%s"
		       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		       r->block_bytes, r->backend, r->profile, r->cns, r->clients, r->segments,
		       r->placement, r->capacity, sa->o->unbounded ? 1.0 : sa->o->high_water,
		       sa->o->unbounded ? 1.0 : sa->o->low_water, r->mode, r->time_scale,
		       r->outstanding, r->slice, r->qp_depth, r->rpc_us, r->requests,
		       r->blocks_requested, r->hit_ratio, r->blocks_got, r->blocks_put,
		       r->puts_dropped, r->waited_gets, r->evictions, r->max_blocks_used,
		       r->bytes_got, r->bytes_put, r->p50_us, r->p99_us, r->p999_us, r->mean_us,
		       r->max_us, r->wire_to_mn, r->wire_from_mn, r->link_gbps, r->util_to_mn,
		       r->util_from_mn, r->link_util, r->goodput_gbps, r->sim_time_s, r->wall_s,
		       r->slices, r->events, r->folded, r->status, r->seg_blocks_min,
		       r->seg_blocks_max, r->seg_peak_min, r->seg_peak_max);
}

struct kv_ts_arg {
	const kv_ts_t *ts;
	double link_gbps;
	uint64_t block; /* blocks = bytes / block (both at completion); 0: counted blocks */
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
		uint64_t got = ta->block ? c->bytes_got / ta->block : c->hits;
		uint64_t put = ta->block ? c->bytes_put / ta->block : c->puts;
		double to = c->wire_to * 8 / w / 1e9, from = c->wire_from * 8 / w / 1e9;
		double u = ta->link_gbps > 0 ? (to > from ? to : from) / ta->link_gbps : 0;
		rc = fprintf(f,
			     "%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.4f\n",
			     i * w, c->arrivals, c->completed, got, put, c->dropped,
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
	if (!o->backend || (strcmp(o->backend, "sim") != 0 && strcmp(o->backend, "shm") != 0 &&
			    strcmp(o->backend, "verbs") != 0))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv run: --backend %s: unknown (sim, shm or verbs)",
				   o->backend ? o->backend : "(none)");
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
	if (!(o->time_scale >= 0 && o->time_scale <= DMR_KV_TIME_SCALE_MAX))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv run: --time-scale %g: outside 0..%g (0 = all at once, 1 = the "
				   "trace's pace; %g x stretches the synthetic trace's 1,022 s to 28 h "
				   "of simulated time)",
				   o->time_scale, (double)DMR_KV_TIME_SCALE_MAX,
				   (double)DMR_KV_TIME_SCALE_MAX);
	if (o->slice > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv run: --slice above 4 GiB - 1");
	if (!(o->window_ms >= DMR_KV_WINDOW_MS_MIN && o->window_ms <= DMR_KV_WINDOW_MS_MAX))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv run: --window-ms %g: outside %g..%g (1 us to 1 h)", o->window_ms,
				   DMR_KV_WINDOW_MS_MIN, DMR_KV_WINDOW_MS_MAX);
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
	for (uint32_t s = 0; k->seg && s < k->nseg; s++) {
		const seg_t *g = &k->seg[s];
		if (s == 0 || g->stored < res->seg_blocks_min)
			res->seg_blocks_min = g->stored;
		if (g->stored > res->seg_blocks_max)
			res->seg_blocks_max = g->stored;
		if (s == 0 || g->peak < res->seg_peak_min)
			res->seg_peak_min = g->peak;
		if (g->peak > res->seg_peak_max)
			res->seg_peak_max = g->peak;
	}
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
	memset(&bs, 0, sizeof(bs));
	if (k->be) /* none in the KV MN process */
		dmr_be_stats(k->be, &bs);
	res->events = bs.events;
	snprintf(res->status, sizeof(res->status), "%s", res->partial ? "partial" : "complete");
}

static dmr_status_t kv_write_results(kv_t *k, const dmr_kv_result_t *res, dmr_err_t *err)
{
	const char *dir = k->o->out_dir;
	struct kv_sum_arg sa = {res, k->o};
	struct kv_ts_arg ta = {&k->ts, res->link_gbps, k->be ? k->block : 0};
	if (dmr_results_mkdir_p(dir) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
	dmr_status_t st = dmr_results_write_file(dir, res->partial ? "timeseries.partial.csv" : "timeseries.csv",
				     fill_kv_ts, &ta, err);
	if (st == DMR_OK)
		st = dmr_results_write_file(dir, res->partial ? "summary.partial.csv" : "summary.csv",
				fill_kv_summary, &sa, err);
	if (st == DMR_OK && !res->partial) {
		/* complete results are in place (renamed): a failed earlier run's
		 * partial files are stale now */
		char p[4200];
		snprintf(p, sizeof(p), "%s/summary.partial.csv", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/timeseries.partial.csv", dir);
		unlink(p);
	}
	return st;
}

static dmr_status_t kv_ts_overflow(kv_t *k)
{
	return dmr_err_set(k->err, DMR_ERR_RANGE,
			   "kv run: --window-ms %g: the time series reached %u rows (%.3f s of "
			   "run): give a larger --window-ms (results so far are partial)",
			   k->o->window_ms, (unsigned)DMR_KV_TS_MAX_ROWS,
			   (double)k->ts.n * (double)k->ts.window_ps / 1e12);
}

/* The event loop: until no event is left. */
static dmr_status_t kv_loop(kv_t *k)
{
	dmr_status_t st = DMR_OK;
	dmr_wc_t wcs[64];
	int w;
	while ((w = dmr_be_progress(k->be, UINT64_MAX)) >= 0) {
		if (kv_interrupted)
			return dmr_err_set(k->err, DMR_ERR_INTERRUPTED,
					   "interrupted by signal %d: results so far are partial",
					   (int)kv_interrupted);
		if (k->ts.overflow)
			return kv_ts_overflow(k);
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

/* ---- threaded backends (shm, verbs): the master behind an RPC over WRITE --
 *
 * Region of the MN (docs/KVCACHE.md section 9 has the full protocol):
 *   [mailboxes: clients x MB_SLOTS slots of MB_SLOT bytes]
 *   [ready words: one u64 per pool slot]
 *   [pool: segments x slots x block bytes]   (pool_base, 4 KiB aligned)
 * A mailbox slot is a request area (offset 0) and a response area (offset
 * MB_RESP). The client WRITEs the request body, then (next WR, same QP, so
 * placed after it: RC executes WRITEs in order) the 8-byte sequence word at
 * offset 0. The master thread polls the sequence words in its local memory,
 * checks the body's checksum, runs the lookup/allocation/LRU code above and
 * writes the response body, then its sequence word (release store). The
 * client READs the response until the sequence word matches and the
 * checksum over the body agrees (a READ racing the master's stores may see
 * a mix; the checksum rejects it and the client READs again). Every wait
 * has a deadline (--timeout-s).
 */
#define MB_SLOT 8192u
#define MB_RESP 4096u
#define MB_REQ_HDR 40u
#define MB_RESP_HDR 32u
#define MB_MAXB 254u /* block ids per RPC: (4096 - 32) / 16 */
#define MB_SLOTS 8u  /* mailbox slots per client */
#define CREQ_MAX 256u /* requests in flight per client */
#define LK_MAX 4u     /* LOOKUPs in flight per client (a chunked one goes alone) */
#define KV_HDR 4096u  /* geometry header at the region's start (mailboxes after it) */
#define KV_MAGIC 0x31424d564b524d44ull /* "DMRKVMB1": written last by the master */
enum { OP_LOOKUP = 1, OP_FINISH = 2 };
enum { KIND_GET = 1, KIND_WAIT = 2, KIND_PUT = 3, KIND_DROP = 4 };
enum { K_RPCW = 3, K_RPCR = 4, K_RDY = 5 };

static uint64_t mb_csum(uint64_t seq, const uint8_t *body, uint32_t len)
{
	uint64_t h = mix64(seq ^ 0x6b76727063ull); /* "kvrpc" */
	for (uint32_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, body + i, 8);
		h = mix64(h ^ v) + i;
	}
	return h;
}

static inline uint64_t ready_tag(uint64_t id)
{
	return mix64(id) | 1;
}

static inline void st_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void st_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t ld_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t ld_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static inline void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED); /* one writer; read by the sampler */
}

static inline uint64_t cnt_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}


/* a request read from the trace, queued for its client */
typedef struct tq {
	struct tq *next;
	uint64_t index, t_us;
	uint64_t local;         /* ordinal among this process's requests (closed loop) */
	uint32_t nblocks;
	uint64_t ids[];
} tq_t;

typedef struct creq {
	uint64_t index, t_arr, rid;
	uint32_t nblocks, answered, gets_left, puts_left, wait_b;
	uint64_t *ids, *off;
	uint32_t *gslot;
	uint8_t *kind;
	uint8_t state, polling, done_xfers;
} creq_t;
enum { CR_FREE = 0, CR_LOOKUP, CR_XFER, CR_FINISH, CR_FINWAIT };

typedef struct rslot {
	uint64_t seq, t_post;
	uint32_t rq, n;
	uint8_t op, busy, reading;
} rslot_t;

struct kvt;

typedef struct kvc {
	struct kvt *T;
	uint32_t w;             /* worker = client index */
	xeng_t X;
	uint8_t *lbuf;          /* registered: MB_SLOTS x (request + response) + ready words */
	rslot_t sl[MB_SLOTS];
	creq_t rq[CREQ_MAX];
	uint32_t lkq[CREQ_MAX], lkh, lkn; /* FIFO of requests not yet looked up */
	uint32_t lk_inflight;   /* LOOKUPs in flight (<= LK_MAX) */
	uint32_t lk_multi;      /* request looked up in chunks, alone; NOIDX = none */
	uint32_t active;
	tq_t *next;             /* the next request of this client, read ahead */
	int eof;
	uint64_t seq;
	/* counters (one writer: this thread) */
	uint64_t arrivals, completed, bytes_got, bytes_put, waited, rpcs, lookups;
	uint64_t b_req, b_hit, b_put, b_drop; /* blocks by the master's answer (CN mode) */
	uint32_t g;             /* global client index: its mailboxes (g0 + w) */
	uint64_t rpc_ps_sum;
	uint64_t t_first, t_last;
	int have_first;
	dvec_t lat;
	dmr_status_t st;
	dmr_err_t err;
	pthread_t tid;
} kvc_t;

enum { KVM_ONE = 0, KVM_CN = 1, KVM_MN = 2 }; /* one process; client or master process */

typedef struct kvt {
	kv_t *k;
	dmr_be_t *be;
	uint8_t *mem;
	uint32_t nc;            /* clients in all = mailboxes (the master serves them) */
	uint32_t nl, g0;        /* client threads of this process; global index of the first */
	int mode;               /* KVM_* */
	uint64_t nlocal;        /* requests taken by this process's clients (under mu) */
	uint64_t finished;      /* master: FINISHes served */
	double w0;              /* wall time at the start (clock of a process without backend) */
	volatile int *stop_ext; /* MN mode: set on a master failure (ends the MN loop) */
	int failed, stats_done; /* CN mode: run_failed for the end barrier; stats() called */
	uint64_t ready_base, pool_base, slots_per_seg, deadline_ps, t0, maxwr;
	tq_t **qh, **qt;        /* per-client queues (under mu) */
	pthread_mutex_t mu;
	uint64_t completed_all; /* closed loop: requests finished, all clients */
	volatile int stop;
	uint32_t running;
	kvc_t *c;
	/* master */
	uint64_t *seen;         /* last handled sequence per mailbox slot */
	uint64_t next_expected; /* LOOKUPs are served in trace order */
	uint32_t *lk_rid;       /* per client: its request being looked up */
	uint64_t *bad_since;
	dmr_status_t mst;
	dmr_err_t merr;
	pthread_t mtid;
} kvt_t;

static inline uint64_t mb_off(uint32_t c, uint32_t s)
{
	return KV_HDR + ((uint64_t)c * MB_SLOTS + s) * MB_SLOT;
}

/* ps since the start: the backend's clock, or the wall clock in the MN
 * process (no backend there: the master only touches local memory) */
static uint64_t kvt_now(const kvt_t *T)
{
	if (T->be)
		return dmr_be_now(T->be, 0);
	return (uint64_t)((wall_now() - T->w0) * 1e12);
}

/* Next queued request of client c (NULL at the end); reads ahead into the
 * other clients' queues. Request i belongs to client i mod clients. */
static dmr_status_t tq_take(kvt_t *T, uint32_t c, tq_t **q_p, dmr_err_t *err)
{
	kv_t *k = T->k;
	dmr_status_t st = DMR_OK;
	pthread_mutex_lock(&T->mu);
	while (!T->qh[c]) {
		if (k->eof || (k->o->requests && k->nread >= k->o->requests)) {
			k->eof = 1;
			break;
		}
		dmr_kv_req_t r;
		st = dmr_kv_trace_next(k->rd, &r, err);
		if (st == DMR_EOF) {
			st = DMR_OK;
			k->eof = 1;
			break;
		}
		if (st != DMR_OK)
			break;
		k->nread++;
		tq_t *q = malloc(sizeof(*q) + (size_t)r.nblocks * 8);
		if (!q) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
			break;
		}
		q->next = NULL;
		q->index = r.index;
		q->t_us = r.t_us;
		q->nblocks = r.nblocks;
		memcpy(q->ids, r.blocks, (size_t)r.nblocks * 8);
		uint32_t d = (uint32_t)(r.index % T->nc);
		if (d < T->g0 || d - T->g0 >= T->nl) {
			free(q); /* another process's client (CN mode) */
			continue;
		}
		d -= T->g0;
		q->local = T->nlocal++;
		if (T->qt[d])
			T->qt[d]->next = q;
		else
			T->qh[d] = q;
		T->qt[d] = q;
	}
	tq_t *q = T->qh[c];
	if (q) {
		T->qh[c] = q->next;
		if (!q->next)
			T->qt[c] = NULL;
	}
	pthread_mutex_unlock(&T->mu);
	*q_p = st == DMR_OK ? q : NULL;
	if (st != DMR_OK)
		free(q);
	return st;
}

/* ---- the master thread -- */

/* Write the response body of a mailbox slot, then its seq (release). */
static void master_respond(uint8_t *slot, uint64_t seq, uint32_t status, uint32_t n, uint64_t rid)
{
	uint8_t *r = slot + MB_RESP;
	st_u32(r + 8, status);
	st_u32(r + 12, n);
	st_u64(r + 16, rid);
	st_u64(r + 24, mb_csum(seq, r + 8, 16) ^ mb_csum(seq, r + MB_RESP_HDR, n * 16));
	__atomic_store_n((uint64_t *)(void *)r, seq, __ATOMIC_RELEASE);
}

static dmr_status_t master_lookup(kvt_t *T, uint32_t c, uint8_t *slot, uint64_t seq, int *done_p)
{
	kv_t *k = T->k;
	const uint8_t *q = slot;
	uint32_t n = ld_u32(q + 12), b0 = ld_u32(q + 24), total = ld_u32(q + 28);
	uint64_t index = ld_u64(q + 16);
	*done_p = 0;
	if (index != T->next_expected)
		return DMR_OK; /* served in trace order: an earlier request first */
	uint32_t ri;
	if (b0 == 0) {
		ri = rq_alloc(k);
		if (ri == NOIDX)
			return dmr_err_set(&T->merr, DMR_ERR_NOMEM, "kv master: out of memory");
		kreq_t *r = &k->rq[ri];
		r->index = index;
		r->client = c;
		r->nblocks = total;
		r->gets_left = 0; /* blocks looked up so far */
		r->ent = malloc((total ? total : 1) * sizeof(uint32_t));
		r->put = malloc(total ? total : 1);
		if (!r->ent || !r->put)
			return dmr_err_set(&T->merr, DMR_ERR_NOMEM, "kv master: out of memory");
		T->lk_rid[c] = ri;
	} else {
		ri = T->lk_rid[c];
		if (ri == NOIDX || ri >= k->caprq || k->rq[ri].index != index ||
		    k->rq[ri].gets_left != b0)
			return dmr_err_set(&T->merr, DMR_ERR_INVALID,
					   "kv master: client %u: LOOKUP of request %" PRIu64
					   " from block %u does not continue its previous one",
					   c, index, b0);
	}
	kreq_t *r = &k->rq[ri];
	if (b0 + n > r->nblocks || n > MB_MAXB)
		return dmr_err_set(&T->merr, DMR_ERR_INVALID,
				   "kv master: client %u: LOOKUP of blocks %u..%u of a %u-block request",
				   c, b0, b0 + n, r->nblocks);
	uint8_t *out = slot + MB_RESP + MB_RESP_HDR;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t id = ld_u64(q + MB_REQ_HDR + 8 * j);
		uint32_t b = b0 + j, kind;
		uint32_t ei = map_find(k, id);
		k->requested++;
		if (ei != NOIDX) {
			pentry_t *p = &k->e[ei];
			p->pins++;
			lru_unlink(k, ei);
			lru_append(k, ei);
			r->ent[b] = ei;
			r->put[b] = 0;
			cnt_add(&k->cnt.hits, 1);
			kind = p->state == E_READY ? KIND_GET : KIND_WAIT;
		} else {
			dmr_status_t st;
			ei = entry_new(k, id, &st);
			if (st != DMR_OK)
				return dmr_err_set(&T->merr, st, "%s", k->err->msg);
			r->ent[b] = ei;
			r->put[b] = 1;
			if (ei == NOIDX) {
				cnt_add(&k->cnt.dropped, 1);
				kind = KIND_DROP;
			} else {
				cnt_add(&k->cnt.puts, 1);
				kind = KIND_PUT;
			}
		}
		uint64_t off = 0, gs = 0;
		if (ei != NOIDX) {
			pentry_t *p = &k->e[ei];
			gs = (uint64_t)p->seg * T->slots_per_seg + p->slot;
			off = T->pool_base + p->off;
			if (kind == KIND_PUT)
				__atomic_store_n((uint64_t *)(void *)(T->mem + T->ready_base + 8 * gs), 0,
						 __ATOMIC_RELEASE);
		}
		st_u64(out + 16 * j, off);
		st_u32(out + 16 * j + 8, (uint32_t)gs);
		st_u32(out + 16 * j + 12, kind);
	}
	r->gets_left = b0 + n;
	if (b0 + n == r->nblocks) {
		T->next_expected++;
		T->lk_rid[c] = NOIDX;
	}
	master_respond(slot, seq, 0, n, ri);
	*done_p = 1;
	return DMR_OK;
}

static dmr_status_t master_finish(kvt_t *T, uint32_t c, uint8_t *slot, uint64_t seq)
{
	kv_t *k = T->k;
	uint64_t ri = ld_u64(slot + 16);
	if (ri >= k->caprq || !k->rq[ri].ent || k->rq[ri].client != c ||
	    k->rq[ri].gets_left != k->rq[ri].nblocks)
		return dmr_err_set(&T->merr, DMR_ERR_INVALID,
				   "kv master: client %u: FINISH of unknown request record %" PRIu64, c,
				   ri);
	kreq_t *r = &k->rq[ri];
	for (uint32_t b = 0; b < r->nblocks; b++) {
		uint32_t ei = r->ent[b];
		if (ei == NOIDX)
			continue;
		pentry_t *p = &k->e[ei];
		p->pins--;
		if (r->put[b]) {
			p->state = E_READY;
			uint64_t gs = (uint64_t)p->seg * T->slots_per_seg + p->slot;
			__atomic_store_n((uint64_t *)(void *)(T->mem + T->ready_base + 8 * gs),
					 ready_tag(p->id), __ATOMIC_RELEASE);
		}
	}
	rq_release(k, (uint32_t)ri);
	T->finished++;
	master_respond(slot, seq, 0, 0, ri);
	return DMR_OK;
}

static void *master_main(void *arg)
{
	kvt_t *T = arg;
	dmr_status_t st = DMR_OK;
	uint32_t idle = 0;
	while (st == DMR_OK && !T->stop) {
		int progress = 0;
		for (uint32_t c = 0; c < T->nc && st == DMR_OK; c++)
			for (uint32_t s = 0; s < MB_SLOTS && st == DMR_OK; s++) {
				uint32_t i = c * MB_SLOTS + s;
				uint8_t *slot = T->mem + mb_off(c, s);
				uint64_t seq = __atomic_load_n((uint64_t *)(void *)slot,
							       __ATOMIC_ACQUIRE);
				if (seq == T->seen[i])
					continue;
				uint32_t n = ld_u32(slot + 12), op = ld_u32(slot + 8);
				if (n > MB_MAXB ||
				    ld_u64(slot + 32) != (mb_csum(seq, slot + 8, 24) ^
							  mb_csum(seq, slot + MB_REQ_HDR, 8 * n))) {
					/* body not (yet) consistent with the sequence word */
					uint64_t now = kvt_now(T);
					if (!T->bad_since[i])
						T->bad_since[i] = now;
					else if (now - T->bad_since[i] > T->deadline_ps)
						st = dmr_err_set(&T->merr, DMR_ERR_REMOTE,
								 "kv master: mailbox of client %u slot %u: "
								 "sequence %" PRIu64 " with a body whose "
								 "checksum never matched",
								 c, s, seq);
					continue;
				}
				T->bad_since[i] = 0;
				int done = 1;
				if (op == OP_LOOKUP)
					st = master_lookup(T, c, slot, seq, &done);
				else if (op == OP_FINISH)
					st = master_finish(T, c, slot, seq);
				else
					st = dmr_err_set(&T->merr, DMR_ERR_INVALID,
							 "kv master: client %u slot %u: unknown op %u", c,
							 s, op);
				if (done) {
					T->seen[i] = seq;
					progress = 1;
				}
			}
		if (progress)
			idle = 0;
		else if (++idle > 64)
			sched_yield();
	}
	T->mst = st;
	if (st != DMR_OK) {
		T->stop = 1;
		if (T->stop_ext)
			*T->stop_ext = 1;
	}
	return NULL;
}

/* ---- a client thread -- */

static dmr_status_t cl_post_rpc(kvc_t *C, uint32_t s, uint32_t op, uint64_t a, uint32_t b0,
				uint32_t total, const uint64_t *ids, uint32_t n, uint32_t ri)
{
	kvt_t *T = C->T;
	uint8_t *q = C->lbuf + (uint64_t)s * MB_SLOT;
	uint64_t seq = ++C->seq;
	st_u32(q + 8, op);
	st_u32(q + 12, n);
	st_u64(q + 16, a);
	st_u32(q + 24, b0);
	st_u32(q + 28, total);
	if (n)
		memcpy(q + MB_REQ_HDR, ids, (size_t)n * 8);
	st_u64(q + 32, mb_csum(seq, q + 8, 24) ^ mb_csum(seq, q + MB_REQ_HDR, 8 * n));
	st_u64(q, seq);
	uint64_t remote = mb_off(C->g, s);
	dmr_wr_t wr[2] = {
	    {.wr_id = WRID(K_RPCW, s), .local = q + 8, .remote = remote + 8,
	     .length = MB_REQ_HDR - 8 + 8 * n, .opcode = DMR_WR_WRITE, .flags = DMR_WR_SIGNALED},
	    {.wr_id = WRID(K_RPCW, s), .local = q, .remote = remote, .length = 8,
	     .opcode = DMR_WR_WRITE, .flags = DMR_WR_SIGNALED}};
	dmr_status_t st = dmr_be_post(T->be, C->w, 0, wr, 2, &C->err);
	if (st != DMR_OK)
		return st;
	rslot_t *r = &C->sl[s];
	r->seq = seq;
	r->t_post = dmr_be_now(T->be, C->w);
	r->rq = ri;
	r->n = n;
	r->op = (uint8_t)op;
	r->busy = 1;
	r->reading = 0;
	C->rpcs++;
	return DMR_OK;
}

static int cl_free_slot(const kvc_t *C)
{
	for (uint32_t s = 0; s < MB_SLOTS; s++)
		if (!C->sl[s].busy)
			return (int)s;
	return -1;
}

static dmr_status_t cl_post_lookup(kvc_t *C, uint32_t s, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	uint32_t n = r->nblocks - r->answered;
	if (n > MB_MAXB)
		n = MB_MAXB;
	C->lk_inflight++;
	return cl_post_rpc(C, s, OP_LOOKUP, r->index, r->answered, r->nblocks, r->ids + r->answered,
			   n, ri);
}

static dmr_status_t cl_enqueue(kvc_t *C, uint32_t ri, uint32_t b, uint8_t opcode)
{
	creq_t *r = &C->rq[ri];
	uint32_t xi = xeng_alloc(&C->X);
	if (xi == NOIDX)
		return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
	xfer_t *x = &C->X.x[xi];
	x->logical = r->off[b] - C->T->pool_base;
	x->len = C->T->k->block;
	x->opcode = opcode;
	x->owner = ri;
	x->entry = b;
	x->tag = r->ids[b];
	x->client = 0;
	xeng_enqueue(&C->X, xi);
	return DMR_OK;
}

/* Post the READ of the ready word of the request's next waiting block. */
static dmr_status_t cl_poll_ready(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	uint8_t *buf = C->lbuf + (uint64_t)MB_SLOTS * MB_SLOT + 8ull * ri;
	dmr_wr_t wr = {.wr_id = WRID(K_RDY, ri), .local = buf,
		       .remote = C->T->ready_base + 8ull * r->gslot[r->wait_b], .length = 8,
		       .opcode = DMR_WR_READ, .flags = DMR_WR_SIGNALED};
	r->polling = 1;
	return dmr_be_post(C->T->be, C->w, 0, &wr, 1, &C->err);
}

static dmr_status_t cl_next_wait(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	while (r->wait_b < r->nblocks && r->kind[r->wait_b] != KIND_WAIT)
		r->wait_b++;
	return r->wait_b < r->nblocks ? cl_poll_ready(C, ri) : DMR_OK;
}

static dmr_status_t cl_start_puts(kvc_t *C, uint32_t ri, uint64_t now)
{
	creq_t *r = &C->rq[ri];
	uint32_t n = 0;
	for (uint32_t b = 0; b < r->nblocks; b++)
		if (r->kind[b] == KIND_PUT) {
			dmr_status_t st = cl_enqueue(C, ri, b, DMR_WR_WRITE);
			if (st != DMR_OK)
				return st;
			n++;
		}
	r->puts_left = n;
	if (n)
		return DMR_OK;
	/* all blocks arrived: the request's latency ends here */
	if (dvec_push(&C->lat, (now - r->t_arr) / 1e6) != 0)
		return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (latencies)");
	C->t_last = max64(C->t_last, now);
	r->state = CR_FINISH;
	return DMR_OK;
}

static dmr_status_t cl_on_lookup(kvc_t *C, rslot_t *sl, const uint8_t *resp, uint64_t now)
{
	creq_t *r = &C->rq[sl->rq];
	uint32_t ri = sl->rq;
	C->lk_inflight--;
	C->rpc_ps_sum += now - sl->t_post;
	C->lookups++;
	r->rid = ld_u64(resp + 16);
	for (uint32_t j = 0; j < sl->n; j++) {
		const uint8_t *e = resp + MB_RESP_HDR + 16 * j;
		uint32_t b = r->answered + j, kind = ld_u32(e + 12);
		r->off[b] = ld_u64(e);
		r->gslot[b] = ld_u32(e + 8);
		r->kind[b] = (uint8_t)kind;
		if ((kind == KIND_GET || kind == KIND_WAIT || kind == KIND_PUT) &&
		    (r->off[b] < C->T->pool_base ||
		     r->off[b] - C->T->pool_base + C->T->k->block >
			 C->T->k->nseg * C->T->k->seg_stride))
			return dmr_err_set(&C->err, DMR_ERR_REMOTE,
					   "kv client %u: master answered block %" PRIu64
					   " at offset %" PRIu64 ", outside the pool",
					   C->w, r->ids[b], r->off[b]);
		if (kind < KIND_GET || kind > KIND_DROP)
			return dmr_err_set(&C->err, DMR_ERR_REMOTE,
					   "kv client %u: master answered kind %u", C->w, kind);
		cnt_add(&C->b_req, 1);
		cnt_add(&C->b_hit, kind == KIND_GET || kind == KIND_WAIT);
		cnt_add(&C->b_put, kind == KIND_PUT);
		cnt_add(&C->b_drop, kind == KIND_DROP);
	}
	r->answered += sl->n;
	if (r->answered < r->nblocks)
		return DMR_OK; /* lk_multi: its next chunk goes next, alone */
	if (C->lk_multi == ri)
		C->lk_multi = NOIDX;
	r->state = CR_XFER;
	uint32_t gets = 0;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		if (r->kind[b] == KIND_GET) {
			dmr_status_t st = cl_enqueue(C, ri, b, DMR_WR_READ);
			if (st != DMR_OK)
				return st;
			gets++;
		} else if (r->kind[b] == KIND_WAIT) {
			gets++;
			C->waited++;
		}
	}
	r->gets_left = gets;
	r->wait_b = 0;
	dmr_status_t st = cl_next_wait(C, ri);
	if (st == DMR_OK && gets == 0)
		st = cl_start_puts(C, ri, now);
	return st;
}

static void cl_release(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	free(r->ids);
	free(r->off);
	free(r->gslot);
	free(r->kind);
	memset(r, 0, sizeof(*r));
	C->active--;
}

static dmr_status_t cl_on_resp(kvc_t *C, uint32_t s, uint64_t now)
{
	rslot_t *sl = &C->sl[s];
	const uint8_t *resp = C->lbuf + (uint64_t)s * MB_SLOT + MB_RESP;
	sl->reading = 0;
	uint64_t seq = ld_u64(resp);
	uint32_t n = ld_u32(resp + 12);
	if (seq != sl->seq || n != sl->n ||
	    ld_u64(resp + 24) != (mb_csum(seq, resp + 8, 16) ^ mb_csum(seq, resp + MB_RESP_HDR, n * 16))) {
		if (now - sl->t_post > C->T->deadline_ps)
			return dmr_err_set(&C->err, DMR_ERR_TIMEOUT,
					   "kv client %u: the master did not answer %s RPC %" PRIu64
					   " (mailbox slot %u) within %.0f s",
					   C->w, sl->op == OP_LOOKUP ? "LOOKUP" : "FINISH", sl->seq, s,
					   C->T->deadline_ps / 1e12);
		return DMR_OK; /* not yet: READ again */
	}
	sl->busy = 0;
	if (sl->op == OP_LOOKUP)
		return cl_on_lookup(C, sl, resp, now);
	/* FINISH acknowledged: the request is done */
	cl_release(C, sl->rq);
	cnt_add(&C->completed, 1);
	__atomic_add_fetch(&C->T->completed_all, 1, __ATOMIC_RELAXED);
	return DMR_OK;
}

static dmr_status_t cl_on_xfer(kvc_t *C, uint32_t xi, uint64_t now)
{
	xfer_t x = C->X.x[xi];
	xeng_free(&C->X, xi);
	creq_t *r = &C->rq[x.owner];
	if (x.opcode == DMR_WR_READ) {
		cnt_add(&C->bytes_got, x.len);
		if (--r->gets_left == 0)
			return cl_start_puts(C, x.owner, now);
		return DMR_OK;
	}
	cnt_add(&C->bytes_put, x.len);
	if (--r->puts_left == 0) {
		if (dvec_push(&C->lat, (now - r->t_arr) / 1e6) != 0)
			return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (latencies)");
		C->t_last = max64(C->t_last, now);
		r->state = CR_FINISH;
	}
	return DMR_OK;
}

static dmr_status_t cl_on_ready(kvc_t *C, uint32_t ri)
{
	creq_t *r = &C->rq[ri];
	const uint8_t *buf = C->lbuf + (uint64_t)MB_SLOTS * MB_SLOT + 8ull * ri;
	r->polling = 0;
	if (ld_u64(buf) != ready_tag(r->ids[r->wait_b]))
		return cl_poll_ready(C, ri); /* still being written: READ again */
	dmr_status_t st = cl_enqueue(C, ri, r->wait_b, DMR_WR_READ);
	r->wait_b++;
	if (st == DMR_OK)
		st = cl_next_wait(C, ri);
	return st;
}

/* Start this client's next request when it is due. */
static dmr_status_t cl_start(kvc_t *C, uint64_t now)
{
	kvt_t *T = C->T;
	kv_t *k = T->k;
	while (!T->stop && C->active < CREQ_MAX) {
		if (!C->next && !C->eof) {
			dmr_status_t st = tq_take(T, C->w, &C->next, &C->err);
			if (st != DMR_OK)
				return st;
			if (!C->next)
				C->eof = 1;
		}
		if (!C->next)
			return DMR_OK;
		tq_t *q = C->next;
		uint64_t t_arr;
		if (k->o->outstanding) {
			if (q->local >= __atomic_load_n(&T->completed_all, __ATOMIC_RELAXED) +
					    k->o->outstanding)
				return DMR_OK;
			t_arr = now;
		} else {
			t_arr = T->t0 + arrival_ps(k, q->t_us);
			if (now < t_arr)
				return DMR_OK;
		}
		uint32_t ri = 0;
		while (C->rq[ri].state != CR_FREE)
			ri++;
		creq_t *r = &C->rq[ri];
		r->index = q->index;
		r->t_arr = t_arr;
		r->nblocks = q->nblocks;
		uint32_t nb = q->nblocks ? q->nblocks : 1;
		r->ids = malloc(nb * sizeof(uint64_t));
		r->off = malloc(nb * sizeof(uint64_t));
		r->gslot = malloc(nb * sizeof(uint32_t));
		r->kind = malloc(nb);
		if (!r->ids || !r->off || !r->gslot || !r->kind)
			return dmr_err_set(&C->err, DMR_ERR_NOMEM, "kv: out of memory (requests)");
		memcpy(r->ids, q->ids, (size_t)q->nblocks * 8);
		r->state = CR_LOOKUP;
		C->active++;
		C->lkq[(C->lkh + C->lkn) % CREQ_MAX] = ri;
		C->lkn++;
		C->next = q->next = NULL;
		free(q);
		if (!C->have_first) {
			C->have_first = 1;
			C->t_first = t_arr;
		}
		cnt_add(&C->arrivals, 1);
	}
	return DMR_OK;
}

static dmr_status_t cl_step(kvc_t *C, uint64_t now)
{
	dmr_status_t st = cl_start(C, now);
	if (st != DMR_OK)
		return st;
	/* LOOKUPs in trace order, up to LK_MAX in flight; a request of more than
	 * MB_MAXB blocks is looked up in chunks with no other LOOKUP of this
	 * client in flight, so the master (which serves LOOKUPs in trace order
	 * and nothing between the chunks of one request) always finds the next
	 * chunk in a mailbox slot and never waits for a slot held by a later
	 * request's LOOKUP */
	int s;
	if (C->lk_multi != NOIDX) {
		if (!C->lk_inflight && (s = cl_free_slot(C)) >= 0 &&
		    (st = cl_post_lookup(C, (uint32_t)s, C->lk_multi)) != DMR_OK)
			return st;
	} else {
		while (C->lkn && C->lk_inflight < LK_MAX) {
			uint32_t ri = C->lkq[C->lkh];
			int multi = C->rq[ri].nblocks > MB_MAXB;
			if ((multi && C->lk_inflight) || (s = cl_free_slot(C)) < 0)
				break;
			C->lkh = (C->lkh + 1) % CREQ_MAX;
			C->lkn--;
			if (multi)
				C->lk_multi = ri;
			if ((st = cl_post_lookup(C, (uint32_t)s, ri)) != DMR_OK)
				return st;
			if (multi)
				break;
		}
	}
	for (uint32_t ri = 0; ri < CREQ_MAX && C->active; ri++) {
		creq_t *r = &C->rq[ri];
		if (r->state != CR_FINISH)
			continue;
		if ((s = cl_free_slot(C)) < 0)
			break;
		st = cl_post_rpc(C, (uint32_t)s, OP_FINISH, r->rid, 0, 0, NULL, 0, ri);
		if (st != DMR_OK)
			return st;
		r->state = CR_FINWAIT;
	}
	for (uint32_t s2 = 0; s2 < MB_SLOTS; s2++) {
		rslot_t *sl = &C->sl[s2];
		if (!sl->busy || sl->reading)
			continue;
		dmr_wr_t wr = {.wr_id = WRID(K_RPCR, s2),
			       .local = C->lbuf + (uint64_t)s2 * MB_SLOT + MB_RESP,
			       .remote = mb_off(C->g, s2) + MB_RESP,
			       .length = MB_RESP_HDR + 16 * sl->n,
			       .opcode = DMR_WR_READ,
			       .flags = DMR_WR_SIGNALED};
		st = dmr_be_post(C->T->be, C->w, 0, &wr, 1, &C->err);
		if (st != DMR_OK)
			return st;
		sl->reading = 1;
	}
	return xeng_pump(&C->X, 0);
}

static void *client_main(void *arg)
{
	kvc_t *C = arg;
	kvt_t *T = C->T;
	dmr_wc_t wcs[64];
	dmr_status_t st = DMR_OK;
	uint64_t last = dmr_be_now(T->be, C->w);
	uint32_t idle = 0;
	while (st == DMR_OK && !T->stop) {
		if (kv_interrupted) {
			st = dmr_err_set(&C->err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d: results so far are partial",
					 (int)kv_interrupted);
			break;
		}
		uint64_t now = dmr_be_now(T->be, C->w);
		st = cl_step(C, now);
		if (st != DMR_OK)
			break;
		int n = dmr_be_poll(T->be, C->w, wcs, 64);
		if (n < 0) {
			st = dmr_err_set(&C->err, DMR_ERR_REMOTE, "kv client %u: poll failed", C->w);
			break;
		}
		now = dmr_be_now(T->be, C->w);
		for (int i = 0; i < n && st == DMR_OK; i++) {
			const dmr_wc_t *wc = &wcs[i];
			unsigned kind = WRID_KIND(wc->wr_id);
			uint32_t idx = WRID_IDX(wc->wr_id);
			if (kind != K_SLICE && wc->status != DMR_WC_SUCCESS) {
				st = dmr_err_set(&C->err, DMR_ERR_REMOTE,
						 "kv client %u: %s %s completed with %s", C->w,
						 kind == K_RDY ? "ready-word" : "mailbox",
						 dmr_wr_opcode_string(wc->opcode),
						 dmr_wc_status_string(wc->status));
				break;
			}
			switch (kind) {
			case K_SLICE: {
				uint32_t xi;
				st = xeng_on_wc(&C->X, C->w, wc, &xi);
				if (st == DMR_OK && xi != NOIDX)
					st = cl_on_xfer(C, xi, now);
				break;
			}
			case K_RPCW: break;
			case K_RPCR: st = idx < MB_SLOTS ? cl_on_resp(C, idx, now) : DMR_ERR_INVALID; break;
			case K_RDY: st = idx < CREQ_MAX ? cl_on_ready(C, idx) : DMR_ERR_INVALID; break;
			default: st = dmr_err_set(&C->err, DMR_ERR_INVALID,
						  "kv client %u: unexpected completion %#" PRIx64, C->w,
						  wc->wr_id);
			}
		}
		if (n > 0) {
			last = now;
			idle = 0;
			continue;
		}
		if (C->eof && !C->next && C->active == 0)
			break;
		if (C->active && now - last > T->deadline_ps) {
			st = dmr_err_set(&C->err, DMR_ERR_TIMEOUT,
					 "kv client %u: no completion for %.1f s with %u requests in "
					 "flight (MN or master gone?)",
					 C->w, (now - last) / 1e12, C->active);
			break;
		}
		if (!C->active)
			last = now;
		if (++idle > 64)
			sched_yield();
	}
	C->st = st;
	if (st != DMR_OK)
		T->stop = 1;
	__atomic_sub_fetch(&T->running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Count the distinct block ids of the first `limit` requests (0 = all);
 * fp (may be NULL) gets the requests, their blocks and a hash of their
 * indices, times, block counts and ids (the trace's fingerprint). */
static dmr_status_t count_distinct(const char *path, uint64_t limit, uint64_t *n_p,
				   dmr_kv_geom_t *fp, dmr_err_t *err)
{
	uint64_t fh = 0x6b7666707269ull, fblocks = 0;
	dmr_kv_reader_t *rd;
	dmr_status_t st = dmr_kv_trace_open(path, &rd, err);
	if (st != DMR_OK)
		return st;
	uint64_t mask = 4095, n = 0, *set = calloc(mask + 1, 8), reqs = 0;
	int *used = calloc(mask + 1, sizeof(int));
	dmr_kv_req_t r;
	while (set && used && (!limit || reqs < limit) &&
	       (st = dmr_kv_trace_next(rd, &r, err)) == DMR_OK) {
		reqs++;
		fblocks += r.nblocks;
		fh = mix64(fh ^ r.index) + r.t_us;
		fh = mix64(fh ^ r.nblocks);
		for (uint32_t b = 0; b < r.nblocks; b++)
			fh = mix64(fh ^ r.blocks[b]);
		for (uint32_t b = 0; b < r.nblocks; b++) {
			if ((n + 1) * 2 > mask + 1) {
				uint64_t nm = mask * 2 + 1, *ns = calloc(nm + 1, 8);
				int *nu = calloc(nm + 1, sizeof(int));
				if (!ns || !nu) {
					free(ns);
					free(nu);
					free(set);
					set = NULL;
					break;
				}
				for (uint64_t i = 0; i <= mask; i++)
					if (used[i]) {
						uint64_t h = mix64(set[i]) & nm;
						while (nu[h])
							h = (h + 1) & nm;
						nu[h] = 1;
						ns[h] = set[i];
					}
				free(set);
				free(used);
				set = ns;
				used = nu;
				mask = nm;
			}
			uint64_t h = mix64(r.blocks[b]) & mask;
			while (used[h] && set[h] != r.blocks[b])
				h = (h + 1) & mask;
			if (!used[h]) {
				used[h] = 1;
				set[h] = r.blocks[b];
				n++;
			}
		}
	}
	if (st == DMR_EOF || st == DMR_OK)
		st = set && used ? DMR_OK : dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	free(set);
	free(used);
	dmr_kv_trace_close(rd);
	*n_p = n;
	if (fp) {
		fp->trace_requests = reqs;
		fp->trace_blocks = fblocks;
		fp->trace_distinct = n;
		fp->trace_hash = fh;
	}
	return st;
}

/* Link rate of an RDMA port from sysfs ("100 Gb/sec (4X EDR)"), 0 if unknown. */
static double port_gbps(const char *dev, int port)
{
	char p[256];
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", dev, port > 0 ? port : 1);
	FILE *f = fopen(p, "r");
	double g = 0;
	if (f) {
		if (fscanf(f, "%lf", &g) != 1)
			g = 0;
		fclose(f);
	}
	return g;
}

static uint64_t phys_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
}

/* A client or master process (NULL: one process with both). */
typedef struct kv_proc {
	int mode;               /* KVM_CN or KVM_MN */
	const void *cl;         /* the cluster (dmr_verbs_cluster_t) */
	uint32_t self;          /* this node's index in it */
	double barrier_s, end_s;
} kv_proc_t;

/* Size the threaded pool for T->nc clients in all: segments, slots, the
 * region's layout (T->ready_base, T->pool_base) and its size (*region_p);
 * g (may be NULL) gets the geometry, with the trace's fingerprint. */
static dmr_status_t kv_plan(kv_t *k, kvt_t *T, uint64_t *region_p, dmr_kv_geom_t *g)
{
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	uint64_t logical = 0;
	dmr_status_t st;
	k->block = dmr_kv_trace_header(k->rd)->block_bytes;
	k->nclients = T->nc;
	uint64_t maxwr = o->slice && o->slice < k->block ? o->slice : k->block;
	if (maxwr > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: blocks of %" PRIu64 " bytes need --slice (one WR carries < 4 GiB)",
				   o->trace, k->block);
	if ((st = kv_setup_pool(k, &logical)) != DMR_OK)
		return st;
	dmr_kv_geom_t fp;
	memset(&fp, 0, sizeof(fp));
	if (o->unbounded || g) {
		/* unbounded: real memory for every block: size the pool by the
		 * trace's distinct ids, spread evenly by either placement (no
		 * eviction) */
		uint64_t distinct;
		if ((st = count_distinct(o->trace, o->requests, &distinct, &fp, err)) != DMR_OK)
			return st;
		if (o->unbounded) {
			uint64_t per = (distinct + k->nseg - 1) / k->nseg;
			if (per == 0)
				per = 1;
			for (uint32_t s = 0; s < k->nseg; s++)
				k->seg[s].nslots = per;
			if (__builtin_mul_overflow(per, k->block, &k->seg_stride))
				return dmr_err_set(err, DMR_ERR_RANGE,
						   "%s: a segment of %" PRIu64 " blocks of %" PRIu64
						   " bytes (trace header block_bytes) overflows 64 bits",
						   o->trace, per, k->block);
		}
	}
	T->slots_per_seg = k->seg[0].nslots;
	/* region = header + mailboxes + ready words + segments x stride, every
	 * step checked: a wrapped size would place blocks outside the pool */
	uint64_t nslots, rdy, seg_bytes, region;
	T->ready_base = KV_HDR + (uint64_t)T->nc * MB_SLOTS * MB_SLOT;
	if (__builtin_mul_overflow(T->slots_per_seg, (uint64_t)k->nseg, &nslots) ||
	    __builtin_mul_overflow(nslots, 8ull, &rdy) ||
	    __builtin_add_overflow(T->ready_base, rdy + 4095, &T->pool_base) ||
	    __builtin_mul_overflow((uint64_t)k->nseg, k->seg_stride, &seg_bytes) ||
	    __builtin_add_overflow(T->pool_base & ~4095ull, seg_bytes, &region))
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%s: the pool's region (%u segments x %" PRIu64 " slots of %" PRIu64
				   " bytes, trace header block_bytes) overflows 64 bits: give "
				   "--capacity, --requests or a smaller block (kv gen --block-bytes)",
				   o->trace, k->nseg, T->slots_per_seg, k->block);
	T->pool_base &= ~4095ull;
	if (region > phys_bytes() / 2)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%s: the pool needs a %" PRIu64 "-byte region (%" PRIu64
				   " slots of %" PRIu64 " bytes + mailboxes), more than half of this "
				   "machine's memory: give --capacity, --requests or a smaller block "
				   "(kv gen --block-bytes)",
				   o->trace, region, nslots, k->block);
	*region_p = region;
	if (g) {
		*g = fp;
		g->version = 1;
		g->clients = T->nc;
		g->segments = k->nseg;
		g->slots_per_seg = T->slots_per_seg;
		g->block_bytes = k->block;
		g->ready_base = T->ready_base;
		g->pool_base = T->pool_base;
		g->region = region;
		g->unbounded = (uint64_t)o->unbounded;
		g->placement = (uint64_t)o->placement;
		g->high_water_ppm = (uint64_t)llround(o->high_water * 1e6);
		g->low_water_ppm = (uint64_t)llround(o->low_water * 1e6);
		g->requests = o->requests;
	}
	return DMR_OK;
}

dmr_status_t dmr_kv_geom_compare(const dmr_kv_geom_t *mn, const dmr_kv_geom_t *cn,
				 dmr_err_t *err)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define GF(x) {#x, offsetof(dmr_kv_geom_t, x)}
	    GF(version),       GF(clients),        GF(segments),      GF(slots_per_seg),
	    GF(block_bytes),   GF(ready_base),     GF(pool_base),     GF(region),
	    GF(unbounded),     GF(placement),      GF(high_water_ppm), GF(low_water_ppm),
	    GF(requests),      GF(trace_requests), GF(trace_blocks),  GF(trace_distinct),
	    GF(trace_hash),
#undef GF
	};
	char msg[640];
	size_t off = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint64_t a, b;
		memcpy(&a, (const char *)mn + f[i].off, 8);
		memcpy(&b, (const char *)cn + f[i].off, 8);
		if (a != b && off < sizeof(msg))
			off += (size_t)snprintf(msg + off, sizeof(msg) - off,
						"%s%s %" PRIu64 " at the MN, %" PRIu64 " here",
						off ? "; " : "", f[i].name, a, b);
	}
	if (!off)
		return DMR_OK;
	return dmr_err_set(err, DMR_ERR_INVALID,
			   "kv cn: the MN's pool geometry differs from this CN's: %s: give both the "
			   "same --trace, --requests, --clients, pool options (--segments, "
			   "--capacity/--unbounded-pool, --high-water, --low-water, --placement) "
			   "and cluster config",
			   msg);
}

dmr_status_t dmr_kv_geometry(const dmr_kv_opts_t *o, uint32_t clients, dmr_kv_geom_t *g_p,
			     dmr_err_t *err)
{
	kv_t K, *k = &K;
	kvt_t T;
	memset(k, 0, sizeof(K));
	memset(&T, 0, sizeof(T));
	k->o = o;
	k->err = err;
	T.k = k;
	T.nc = clients;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	if (clients == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv: no clients");
	if ((st = dmr_kv_trace_open(o->trace, &k->rd, err)) != DMR_OK)
		return st;
	uint64_t region;
	dmr_kv_geom_t g;
	st = kv_plan(k, &T, &region, &g);
	if (st == DMR_OK)
		*g_p = g;
	if (k->seg)
		for (uint32_t s = 0; s < k->nseg; s++)
			free(k->seg[s].free);
	free(k->seg);
	dmr_kv_trace_close(k->rd);
	return st;
}

#ifdef DMR_HAVE_VERBS
static dmr_verbs_role_t kv_role; /* the CN role of this process (outlives the backend) */

/* CN mode: READ the geometry header the master wrote (after the start
 * barrier, which the first post passes) and compare it with ours. */
static dmr_status_t kv_cn_check_geom(kvt_t *T, const dmr_kv_geom_t *mine, double secs,
				     dmr_err_t *err)
{
	kvc_t *C = &T->c[0];
	uint8_t *buf = C->lbuf;
	uint64_t t0 = dmr_be_now(T->be, 0), wait_ps = (uint64_t)((secs + 5) * 1e12);
	for (;;) {
		memset(buf, 0, 8 + sizeof(dmr_kv_geom_t));
		dmr_wr_t wr = {.wr_id = WRID(K_RPCR, MB_SLOTS), .local = buf, .remote = 0,
			       .length = 8 + (uint32_t)sizeof(dmr_kv_geom_t), .opcode = DMR_WR_READ,
			       .flags = DMR_WR_SIGNALED};
		dmr_status_t st = dmr_be_post(T->be, 0, 0, &wr, 1, err);
		if (st != DMR_OK)
			return st;
		dmr_wc_t wc;
		int n;
		uint64_t tp = dmr_be_now(T->be, 0);
		while ((n = dmr_be_poll(T->be, 0, &wc, 1)) == 0) {
			if (dmr_be_now(T->be, 0) - tp > T->deadline_ps)
				return dmr_err_set(err, DMR_ERR_TIMEOUT,
						   "kv cn: no completion of the READ of the pool header "
						   "within %.0f s (MN gone?)",
						   T->deadline_ps / 1e12);
			sched_yield();
		}
		if (n < 0 || wc.status != DMR_WC_SUCCESS)
			return dmr_err_set(err, DMR_ERR_REMOTE,
					   "kv cn: the READ of the pool header completed with %s",
					   n < 0 ? "a poll error" : dmr_wc_status_string(wc.status));
		if (ld_u64(buf) == KV_MAGIC)
			break;
		if (ld_u64(buf) != 0)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "kv cn: the MN region does not start with a KV pool header "
					   "(word %#" PRIx64 "): is the MN `dmreplay kv mn`?",
					   ld_u64(buf));
		if (dmr_be_now(T->be, 0) - t0 > wait_ps)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "kv cn: no KV pool header in the MN region after %.0f s: "
					   "start the MN with `dmreplay kv mn` (a plain `dmreplay mn` "
					   "runs no master)",
					   secs + 5);
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	dmr_kv_geom_t mn;
	memcpy(&mn, buf + 8, sizeof(mn));
	return dmr_kv_geom_compare(&mn, mine, err);
}
#endif

static dmr_status_t kv_run_threaded(kv_t *k, dmr_kv_result_t *res, double w0, const kv_proc_t *P)
{
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	kvt_t TT, *T = &TT;
	memset(T, 0, sizeof(*T));
	T->k = k;
	T->w0 = w0;
	dmr_model_t wm, *m = NULL;
	dmr_status_t st;
	T->mode = P ? P->mode : KVM_ONE;
	T->nc = o->cns * o->clients;
	T->nl = T->nc;
	dmr_kv_geom_t geom, *gp = NULL;
	if (T->mode == KVM_CN) {
		T->nl = o->clients;
		T->g0 = P->self * o->clients;
		gp = &geom;
	}
	uint64_t region;
	if ((st = kv_plan(k, T, &region, gp)) != DMR_OK)
		return st;
	uint64_t maxwr = o->slice && o->slice < k->block ? o->slice : k->block;
	T->deadline_ps = (uint64_t)(o->timeout_s * 1e12);
	dmr_be_config_t cfg = {.backend = o->backend, .mns = 1, .cns = o->cns, .workers = o->clients,
			       .mr_size = region, .seed = 1, .profile = o->profile,
			       .device = o->device, .port = o->port, .gid_index = o->gid_index};
	if (T->mode == KVM_CN) {
#ifdef DMR_HAVE_VERBS
		const dmr_verbs_cluster_t *cl = P->cl;
		memset(&kv_role, 0, sizeof(kv_role));
		kv_role.cl = cl;
		kv_role.self = P->self;
		kv_role.first_worker = T->g0;
		kv_role.need_bytes = KV_HDR;
		kv_role.barrier_s = P->barrier_s;
		kv_role.end_s = P->end_s;
		kv_role.run_failed = &T->failed;
		kv_role.keep_region = 1;
		cfg.cns = 1;
		cfg.mr_size = 64; /* the CN's image of the region: unused (keep_region) */
		cfg.device = cl->cn[P->self].devname;
		cfg.port = cl->cn[P->self].ibport;
		cfg.gid_index = cl->cn[P->self].gid;
		dmr_verbs_set_role(&kv_role);
		st = dmr_be_open(&cfg, &k->be, err);
		dmr_verbs_set_role(NULL);
		if (st != DMR_OK)
			return st;
#else
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED, "kv cn: built without verbs");
#endif
	} else if ((st = dmr_be_open(&cfg, &k->be, err)) != DMR_OK) {
		return st;
	}
	T->be = k->be;
	if (k->be->ops->caps & DMR_BE_CAP_DRIVEN) {
		st = dmr_err_set(err, DMR_ERR_INVALID, "backend %s is DRIVEN", o->backend);
		goto out;
	}
	if (T->mode == KVM_ONE) {
		uint64_t memlen = 0;
		T->mem = dmr_be_mn_memory(k->be, 0, &memlen);
		if (!T->mem || memlen < region) {
			st = dmr_err_set(err, DMR_ERR_UNSUPPORTED,
					 "backend %s: the MN region is not local: run the master "
					 "in an MN process (dmreplay kv mn / kv cn)",
					 o->backend);
			goto out;
		}
		memset(T->mem, 0, T->pool_base); /* header, mailboxes and ready words */
	}
	if (strcmp(o->backend, "verbs") == 0 && dmr_model_load(o->profile, &wm, err) == DMR_OK) {
		/* RoCEv2 framing constants for the wire-byte count; MTU of the path */
#ifdef DMR_HAVE_VERBS
		dmr_verbs_info_t vi;
		dmr_verbs_info(k->be, &vi);
		wm.mtu = vi.path_mtu;
		wm.link_gbps = port_gbps(vi.device, vi.port);
#else
		wm.link_gbps = 0;
#endif
		m = &wm;
	}
	T->c = calloc(T->nl, sizeof(*T->c));
	T->qh = calloc(T->nl, sizeof(*T->qh));
	T->qt = calloc(T->nl, sizeof(*T->qt));
	T->seen = calloc((size_t)T->nc * MB_SLOTS, 8);
	T->bad_since = calloc((size_t)T->nc * MB_SLOTS, 8);
	T->lk_rid = malloc(T->nc * sizeof(uint32_t));
	if (!T->c || !T->qh || !T->qt || !T->seen || !T->bad_since || !T->lk_rid) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
		goto out;
	}
	pthread_mutex_init(&T->mu, NULL);
	for (uint32_t c = 0; c < T->nc; c++)
		T->lk_rid[c] = NOIDX;
	for (uint32_t c = 0; c < T->nl; c++) {
		kvc_t *C = &T->c[c];
		C->T = T;
		C->w = c;
		C->g = T->g0 + c;
		C->lk_multi = NOIDX;
		size_t lb = (size_t)MB_SLOTS * MB_SLOT + 8 * CREQ_MAX;
		C->lbuf = calloc(1, lb);
		if (!C->lbuf) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
			goto out_c;
		}
		if ((st = dmr_be_mr_reg(k->be, c, C->lbuf, lb, err)) != DMR_OK)
			goto out_c;
		st = xeng_init_thread(&C->X, k->be, c, o->slice, maxwr, o->qp_depth, T->pool_base, 1,
				      err);
		if (st != DMR_OK)
			goto out_c;
		C->X.m = m;
		C->X.corrupt = o->test_corrupt;
		C->X.err = &C->err; /* errors of the data path: the client thread's own */
	}
	k->rpc_ps = 0;
	k->ts.window_ps = (uint64_t)llround(o->window_ms * 1e9);
	if (k->ts.window_ps == 0)
		k->ts.window_ps = 1;
	k->ts.next_end = k->ts.window_ps;
#ifdef DMR_HAVE_VERBS
	/* CN mode: the first post passes the start barrier; then the header */
	if (T->mode == KVM_CN && (st = kv_cn_check_geom(T, gp, P->barrier_s, err)) != DMR_OK)
		goto out_c;
#endif

	kv_cnt_t cnt;
	memset(&cnt, 0, sizeof(cnt));
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kv_on_signal;
	sigemptyset(&sa.sa_mask);
	kv_interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	T->t0 = dmr_be_now(k->be, 0);
	int have_master = T->mode == KVM_ONE;
	if (have_master && pthread_create(&T->mtid, NULL, master_main, T) != 0) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: cannot start the master thread");
		goto out_sig;
	}
	uint32_t started = 0;
	T->running = T->nl;
	for (; started < T->nl; started++)
		if (pthread_create(&T->c[started].tid, NULL, client_main, &T->c[started]) != 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "kv: cannot start client thread %u",
					 started);
			T->stop = 1;
			__atomic_sub_fetch(&T->running, T->nl - started, __ATOMIC_SEQ_CST);
			break;
		}
	for (;;) {
		int more = __atomic_load_n(&T->running, __ATOMIC_SEQ_CST) > 0;
		if (more) {
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
		memset(&cnt, 0, sizeof(cnt));
		for (uint32_t c = 0; c < T->nl; c++) {
			kvc_t *C = &T->c[c];
			cnt.arrivals += cnt_get(&C->arrivals);
			cnt.completed += cnt_get(&C->completed);
			cnt.bytes_got += cnt_get(&C->bytes_got);
			cnt.bytes_put += cnt_get(&C->bytes_put);
			cnt.wire_to += cnt_get(&C->X.wire_to);
			cnt.wire_from += cnt_get(&C->X.wire_from);
			cnt.hits += cnt_get(&C->b_hit);
			cnt.puts += cnt_get(&C->b_put);
			cnt.dropped += cnt_get(&C->b_drop);
		}
		if (T->mode != KVM_CN) { /* the master's counts */
			cnt.hits = cnt_get(&k->cnt.hits);
			cnt.puts = cnt_get(&k->cnt.puts);
			cnt.dropped = cnt_get(&k->cnt.dropped);
		}
		cnt.evictions = cnt_get(&k->cnt.evictions);
		if (!more)
			break;
		ts_advance(&k->ts, dmr_be_now(k->be, 0) - T->t0, &cnt);
		if (k->ts.overflow && !T->stop) {
			st = kv_ts_overflow(k);
			T->stop = 1;
		}
	}
	for (uint32_t c = 0; c < started; c++) {
		pthread_join(T->c[c].tid, NULL);
		if (T->c[c].st != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, T->c[c].st, "%s", T->c[c].err.msg);
	}
	T->stop = 1;
	if (have_master)
		pthread_join(T->mtid, NULL);
	if (T->mst != DMR_OK && st == DMR_OK)
		st = dmr_err_set(err, T->mst, "%s", T->merr.msg);
out_sig:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* results: the clients' counters into the shared fields */
	{
		uint64_t tend = 0, tfirst = UINT64_MAX, lookups = 0, rpc_ps = 0;
		for (uint32_t c = 0; c < T->nl; c++) {
			kvc_t *C = &T->c[c];
			k->X.wire_to += C->X.wire_to;
			k->X.wire_from += C->X.wire_from;
			k->X.slices += C->X.slices;
			k->cnt.completed += C->completed;
			k->waited += C->waited;
			lookups += C->lookups;
			rpc_ps += C->rpc_ps_sum;
			if (C->have_first && C->t_first < tfirst)
				tfirst = C->t_first;
			tend = max64(tend, C->t_last);
			if (T->mode == KVM_CN) { /* the master's counts are at the MN */
				k->requested += C->b_req;
				k->cnt.hits += C->b_hit;
				k->cnt.puts += C->b_put;
				k->cnt.dropped += C->b_drop;
			}
			for (uint64_t i = 0; i < C->lat.n; i++)
				if (dvec_push(&k->lat, C->lat.v[i]) != 0)
					break;
		}
		/* rpc_us: the mean LOOKUP round trip, measured (post to matching response) */
		k->rpc_ps = lookups ? rpc_ps / lookups : 0;
		k->t_first = tfirst == UINT64_MAX ? T->t0 : tfirst;
		k->have_first = tfirst != UINT64_MAX;
		res->partial = st != DMR_OK;
		uint64_t now = dmr_be_now(k->be, 0);
		if (res->partial || !tend)
			tend = max64(tend, now);
		k->t_first -= T->t0;
		tend -= T->t0;
		k->t_last = tend;
		k->cnt.wire_to = k->X.wire_to;
		k->cnt.wire_from = k->X.wire_from;
		k->cnt.arrivals = cnt.arrivals;
		k->cnt.bytes_got = cnt.bytes_got;
		k->cnt.bytes_put = cnt.bytes_put;
		ts_advance(&k->ts, tend, &k->cnt);
		if (tend > k->ts.next_end - k->ts.window_ps || k->ts.n == 0)
			ts_close(&k->ts, &k->cnt);
		if (st == DMR_OK && T->mode == KVM_CN && k->cnt.completed != k->cnt.arrivals)
			st = dmr_err_set(err, DMR_ERR_VERIFY,
					 "kv cn: %" PRIu64 " of %" PRIu64 " requests finished",
					 k->cnt.completed, k->cnt.arrivals);
		if (st == DMR_OK && T->mode == KVM_ONE) {
			/* the master's invariants, as on sim */
			uint64_t pinned = 0, segused = 0;
			for (uint32_t i = 0; i < k->cape; i++)
				if (k->e[i].state != E_FREE)
					pinned += k->e[i].pins;
			for (uint32_t s = 0; s < k->nseg; s++)
				segused += k->seg[s].used;
			if (pinned || segused != k->used || k->used != k->mapn ||
			    (!o->unbounded && k->max_used > k->hw_slots) ||
			    k->cnt.completed != k->cnt.arrivals)
				st = dmr_err_set(err, DMR_ERR_VERIFY,
						 "kv: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
						 " slots used by segments, %" PRIu64 " used, %" PRIu64
						 " mapped, %" PRIu64 " of %" PRIu64 " requests finished",
						 pinned, segused, k->used, k->mapn, k->cnt.completed,
						 k->cnt.arrivals);
			res->partial = st != DMR_OK;
		}
		/* CN mode: stats() (in kv_fill_result) is the end barrier: "done",
		 * or "failed" when this CN's run failed (the others are told) */
		T->failed = st != DMR_OK;
		T->stats_done = 1;
		res->partial = st != DMR_OK;
		kv_fill_result(k, res, m, tend);
#ifdef DMR_HAVE_VERBS
		dmr_err_t rerr;
		if (T->mode == KVM_CN && st == DMR_OK && dmr_verbs_role_status(&rerr) != DMR_OK) {
			st = dmr_err_set(err, dmr_verbs_role_status(NULL), "%s", rerr.msg);
			res->partial = 1;
			snprintf(res->status, sizeof(res->status), "partial");
		}
#endif
		snprintf(res->profile, sizeof(res->profile), "%s",
			 o->device && *o->device ? o->device : "-");
		res->events = 0;
		res->wall_s = wall_now() - w0;
		if (o->out_dir) {
			dmr_err_t werr;
			if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
				st = dmr_err_set(err, DMR_ERR_IO, "%s", werr.msg);
		}
	}
out_c:
	if (T->mode == KVM_CN && !T->stats_done) {
		/* failed before the run: tell the other CNs and the MN (end barrier) */
		dmr_be_stats_t bs;
		T->failed = 1;
		T->stats_done = 1;
		dmr_be_stats(k->be, &bs);
	}
	for (uint32_t c = 0; T->c && c < T->nl; c++) {
		kvc_t *C = &T->c[c];
		for (uint32_t i = 0; i < CREQ_MAX; i++)
			if (C->rq[i].state != CR_FREE) {
				free(C->rq[i].ids);
				free(C->rq[i].off);
				free(C->rq[i].gslot);
				free(C->rq[i].kind);
			}
		free(C->next);
		xeng_fini(&C->X);
		free(C->lbuf);
		free(C->lat.v);
	}
	if (T->qh)
		for (uint32_t c = 0; c < T->nl; c++)
			while (T->qh[c]) {
				tq_t *q = T->qh[c];
				T->qh[c] = q->next;
				free(q);
			}
	if (T->c)
		pthread_mutex_destroy(&T->mu);
out:
	if (T->mode == KVM_CN && !T->stats_done && k->be) {
		dmr_be_stats_t bs;
		T->failed = 1;
		T->stats_done = 1;
		dmr_be_stats(k->be, &bs);
	}
	free(T->c);
	free(T->qh);
	free(T->qt);
	free(T->seen);
	free(T->bad_since);
	free(T->lk_rid);
	return st;
}

static void kv_free(kv_t *k)
{
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
}

#ifdef DMR_HAVE_VERBS
/* ---- the master as the MN process (`dmreplay kv mn`) -- */

static volatile int kv_mn_stop;

static void kv_mn_on_signal(int sig)
{
	kv_mn_stop = sig;
}

typedef struct kv_mn_ctx {
	kvt_t *T;
	uint64_t region;
	const dmr_kv_geom_t *g;
	int started;
} kv_mn_ctx_t;

/* dmr_verbs_role_t.mn_region: the region exists; header, then the master */
static dmr_status_t kv_mn_region(void *arg, void *base, uint64_t len, dmr_err_t *err)
{
	kv_mn_ctx_t *x = arg;
	kvt_t *T = x->T;
	if (len < x->region)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv mn: the MN region has %" PRIu64 " bytes, the pool needs %" PRIu64,
				   len, x->region);
	T->mem = base;
	memset(T->mem, 0, T->pool_base); /* header, mailboxes and ready words */
	memcpy(T->mem + 8, x->g, sizeof(*x->g));
	__atomic_store_n((uint64_t *)(void *)T->mem, KV_MAGIC, __ATOMIC_RELEASE);
	if (pthread_create(&T->mtid, NULL, master_main, T) != 0)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv mn: cannot start the master thread");
	x->started = 1;
	fprintf(stderr,
		"kv mn: master serving %u clients' mailboxes; pool of %" PRIu64 " segments x %" PRIu64
		" slots of %" PRIu64 " bytes at offset %" PRIu64 " (region %" PRIu64 " bytes)\n",
		T->nc, x->g->segments, x->g->slots_per_seg, x->g->block_bytes, T->pool_base,
		x->region);
	return DMR_OK;
}

/* dmr_verbs_role_t.mn_region_end: stop the master before the region goes */
static void kv_mn_region_end(void *arg)
{
	kv_mn_ctx_t *x = arg;
	x->T->stop = 1;
	if (x->started)
		pthread_join(x->T->mtid, NULL);
	x->started = 0;
}

static dmr_status_t kv_mn_serve(const dmr_kv_opts_t *o, dmr_verbs_cluster_t *cl, uint32_t self,
				double barrier_s, double end_s, dmr_kv_result_t *res, dmr_err_t *err)
{
	kv_t K, *k = &K;
	kvt_t TT, *T = &TT;
	memset(k, 0, sizeof(K));
	memset(T, 0, sizeof(TT));
	memset(res, 0, sizeof(*res));
	k->o = o;
	k->err = err;
	k->efree = k->rqfree = NOIDX;
	k->lru_head = k->lru_tail = NOIDX;
	T->k = k;
	T->w0 = wall_now();
	T->mode = KVM_MN;
	T->nc = cl->ncn * o->clients;
	T->deadline_ps = (uint64_t)(o->timeout_s * 1e12);
	T->next_expected = 0;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	if ((st = dmr_kv_trace_open(o->trace, &k->rd, err)) != DMR_OK)
		return st;
	dmr_kv_geom_t g;
	uint64_t region = 0;
	if ((st = kv_plan(k, T, &region, &g)) != DMR_OK)
		goto out;
	T->seen = calloc((size_t)T->nc * MB_SLOTS, 8);
	T->bad_since = calloc((size_t)T->nc * MB_SLOTS, 8);
	T->lk_rid = malloc(T->nc * sizeof(uint32_t));
	if (!T->seen || !T->bad_since || !T->lk_rid) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "kv mn: out of memory");
		goto out;
	}
	for (uint32_t c = 0; c < T->nc; c++)
		T->lk_rid[c] = NOIDX;
	uint64_t need = (region + 7) & ~7ull;
	if (cl->mn[self].mr_size < need) {
		fprintf(stderr, "kv mn: note: mr_size %" PRIu64 " of the config raised to the pool's %" PRIu64 " bytes\n",
			cl->mn[self].mr_size, need);
		cl->mn[self].mr_size = need;
	}
	kv_mn_ctx_t x = {.T = T, .region = region, .g = &g};
	kv_mn_stop = 0;
	T->stop_ext = &kv_mn_stop;
	dmr_verbs_role_t role = {.cl = cl, .self = self, .barrier_s = barrier_s, .end_s = end_s,
				 .stop = &kv_mn_stop, .mn_region = kv_mn_region,
				 .mn_region_end = kv_mn_region_end, .mn_arg = &x};
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kv_mn_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	st = dmr_verbs_mn_main(&role, err);
	kv_mn_region_end(&x); /* (already, unless the region never existed) */
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (T->mst != DMR_OK) /* the MN loop only saw "stop" */
		st = dmr_err_set(err, T->mst, "%s", T->merr.msg);
	if (st == DMR_OK) {
		/* the master's invariants, and every request of the trace looked
		 * up and finished */
		uint64_t pinned = 0, segused = 0;
		for (uint32_t i = 0; i < k->cape; i++)
			if (k->e[i].state != E_FREE)
				pinned += k->e[i].pins;
		for (uint32_t s = 0; s < k->nseg; s++)
			segused += k->seg[s].used;
		if (pinned || segused != k->used || k->used != k->mapn ||
		    (!o->unbounded && k->max_used > k->hw_slots) ||
		    T->finished != T->next_expected || T->next_expected != g.trace_requests)
			st = dmr_err_set(err, DMR_ERR_VERIFY,
					 "kv mn: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
					 " slots used by segments, %" PRIu64 " used, %" PRIu64
					 " mapped; %" PRIu64 " requests looked up, %" PRIu64
					 " finished, %" PRIu64 " in the trace",
					 pinned, segused, k->used, k->mapn, T->next_expected, T->finished,
					 g.trace_requests);
	}
	k->cnt.completed = T->finished;
	k->cnt.arrivals = T->next_expected;
	res->partial = st != DMR_OK;
	/* one time-series row: the whole run */
	k->ts.window_ps = (uint64_t)((wall_now() - T->w0) * 1e12) + 1;
	ts_close(&k->ts, &k->cnt);
	kv_fill_result(k, res, NULL, 0);
	snprintf(res->backend, sizeof(res->backend), "verbs");
	snprintf(res->profile, sizeof(res->profile), "%s",
		 cl->mn[self].devname[0] ? cl->mn[self].devname : "-");
	res->wall_s = wall_now() - T->w0;
	if (o->out_dir) {
		dmr_err_t werr;
		if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_IO, "%s", werr.msg);
	}
out:
	free(T->seen);
	free(T->bad_since);
	free(T->lk_rid);
	kv_free(k);
	dmr_kv_trace_close(k->rd);
	return st;
}
#endif

dmr_status_t dmr_kv_out_check(const char *dir, dmr_err_t *err)
{
	if (!dir)
		return DMR_OK;
	if (dmr_results_mkdir_p(dir) != 0) /* also probes writability */
		return dmr_err_set(err, DMR_ERR_IO,
				   "--out %s: cannot create or not writable (%s): nothing was run",
				   dir, strerror(errno));
	char p[4200];
	snprintf(p, sizeof(p), "%s/.dmr-write-check.%ld", dir, (long)getpid());
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "--out %s: not writable (%s): no results "
				   "could be written; nothing was run", dir, strerror(errno));
	close(fd);
	unlink(p);
	return DMR_OK;
}

static dmr_status_t kv_run_common(const dmr_kv_opts_t *o, const kv_proc_t *P,
				  dmr_kv_result_t *res, dmr_err_t *err)
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
	struct sigaction oldsig[2];
	int sig_on = 0;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	if ((st = dmr_kv_out_check(o->out_dir, err)) != DMR_OK)
		return st;
	st = dmr_kv_trace_open(o->trace, &k->rd, err);
	if (st != DMR_OK)
		return st;
	if (strcmp(o->backend, "sim") != 0 || P) { /* threaded: shm, verbs */
		st = kv_run_threaded(k, res, w0, P);
		goto cleanup;
	}
	/* sim: the event loop polls the stop flag (partial results, exit 130) */
	kv_sig_install(oldsig);
	sig_on = 1;
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
	if (sig_on)
		kv_sig_restore(oldsig);
	xeng_fini(&k->X);
	kv_free(k);
	dmr_be_close(k->be);
	dmr_kv_trace_close(k->rd);
	return st;
}

dmr_status_t dmr_kv_run(const dmr_kv_opts_t *o, dmr_kv_result_t *res, dmr_err_t *err)
{
	return kv_run_common(o, NULL, res, err);
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
	fprintf(f, "  bytes          %s got (READ), %s put (WRITE); %s; master RPC %.2f us%s\n",
		b3, b4, sl, r->rpc_us,
		strcmp(r->backend, "sim") == 0 ? ""
					       : " (measured mean LOOKUP round trip over WRITE/READ; "
						 "content of every get checked)");
	fprintf(f, "  latency        per request (arrival to last block): p50 %.1f us, p99 %.1f us, "
		   "p99.9 %.1f us, mean %.1f us, max %.1f us\n",
		r->p50_us, r->p99_us, r->p999_us, r->mean_us, r->max_us);
	int sim = strcmp(r->backend, "sim") == 0;
	fprintf(f, "  link           MN link %g Gb/s: to MN %.2f %%, from MN %.2f %% over %.3f s "
		   "%s; goodput %.2f Gb/s\n",
		r->link_gbps, 100 * r->util_to_mn, 100 * r->util_from_mn, r->sim_time_s,
		sim ? "simulated" : "measured", r->goodput_gbps);
	fprintf(f, "  %s %" PRIu64 " slices, %" PRIu64 " events, %.2f s wall%s\n",
		sim ? "simulator     " : "run           ", r->slices, r->events, r->wall_s,
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
	o->port = 1;
	o->gid_index = -1;
	o->timeout_s = 60;
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

/* ---- the benchmark on threaded backends: one thread per worker ---------- */

typedef struct bthr {
	const dmr_kv_bench_opts_t *o;
	dmr_be_t *be;
	xeng_t X;
	uint32_t ti, worker;
	bthread_t t;
	uint64_t t_first, t_last, deadline_ps;
	dvec_t lat;
	dmr_status_t st;
	dmr_err_t err;
	pthread_t tid;
} bthr_t;

static void *bench_thread(void *arg)
{
	bthr_t *B = arg;
	dmr_wc_t wcs[64];
	dmr_status_t st = DMR_OK;
	B->t_first = dmr_be_now(B->be, B->worker);
	if (B->t.left)
		st = bench_submit(&B->X, &B->t, B->ti, B->o, &B->err);
	uint64_t last = B->t_first;
	uint32_t idle = 0;
	while (st == DMR_OK && (B->t.pending || B->t.left)) {
		if (kv_interrupted) {
			st = dmr_err_set(&B->err, DMR_ERR_INTERRUPTED, "interrupted by signal %d",
					 (int)kv_interrupted);
			break;
		}
		int n = dmr_be_poll(B->be, B->worker, wcs, 64);
		uint64_t now = dmr_be_now(B->be, B->worker);
		if (n < 0) {
			st = dmr_err_set(&B->err, DMR_ERR_REMOTE, "kv bench: worker %u: poll failed",
					 B->worker);
			break;
		}
		if (n == 0) {
			if (now - last > B->deadline_ps)
				st = dmr_err_set(&B->err, DMR_ERR_TIMEOUT,
						 "kv bench: worker %u: no completion for %.1f s",
						 B->worker, (now - last) / 1e12);
			else if (++idle > 64)
				sched_yield(); /* let the NIC's host work (rxe) run */
			continue;
		}
		idle = 0;
		last = now;
		for (int i = 0; i < n && st == DMR_OK; i++) {
			uint32_t xi;
			st = xeng_on_wc(&B->X, B->worker, &wcs[i], &xi);
			if (st != DMR_OK || xi == NOIDX)
				continue;
			xfer_t x = B->X.x[xi];
			xeng_free(&B->X, xi);
			B->t_last = max64(B->t_last, now);
			if (dvec_push(&B->lat, (now - x.t0) / 1e6) != 0) {
				st = dmr_err_set(&B->err, DMR_ERR_NOMEM, "kv bench: out of memory");
				break;
			}
			if (--B->t.pending == 0 && B->t.left)
				st = bench_submit(&B->X, &B->t, B->ti, B->o, &B->err);
		}
		if (st == DMR_OK)
			st = xeng_pump(&B->X, 0);
	}
	B->st = st;
	return NULL;
}

static dmr_status_t bench_threaded(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r,
				   dmr_err_t *err, double w0)
{
	uint64_t maxwr = o->slice && o->slice < o->size ? o->slice : o->size;
	uint32_t wpc = (o->threads + o->cns - 1) / o->cns;
	uint64_t region = (o->size * o->threads * o->batch + 63) & ~63ull;
	if (region > phys_bytes() / 2)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv bench: %" PRIu64 " bytes of MN region (size x threads x batch) "
				   "is more than half of this machine's memory",
				   region);
	dmr_be_config_t cfg = {.backend = o->backend, .mns = 1, .cns = o->cns, .workers = wpc,
			       .mr_size = region, .seed = 1, .profile = o->profile,
			       .device = o->device, .port = o->port, .gid_index = o->gid_index};
	dmr_be_t *be = NULL;
	bthr_t *B = NULL;
	dvec_t lat = {0};
	dmr_model_t wm;
	int have_m = 0;
	uint32_t started = 0;
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (st != DMR_OK)
		return st;
	if (strcmp(o->backend, "verbs") == 0 && dmr_model_load(o->profile, &wm, err) == DMR_OK) {
#ifdef DMR_HAVE_VERBS
		dmr_verbs_info_t vi;
		dmr_verbs_info(be, &vi);
		wm.mtu = vi.path_mtu;
		wm.link_gbps = port_gbps(vi.device, vi.port);
		snprintf(r->profile, sizeof(r->profile), "%s", vi.device);
#endif
		have_m = 1;
	} else {
		snprintf(r->profile, sizeof(r->profile), "-");
	}
	B = calloc(o->threads, sizeof(*B));
	if (!B) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "kv bench: out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < o->threads && st == DMR_OK; t++) {
		B[t].o = o;
		B[t].be = be;
		B[t].ti = t;
		B[t].worker = (t % o->cns) * wpc + t / o->cns;
		B[t].deadline_ps = (uint64_t)(o->timeout_s * 1e12);
		B[t].t.left = o->ops / o->threads + (t < o->ops % o->threads);
		B[t].t.worker = 0; /* the thread's xeng has one client */
		st = xeng_init_thread(&B[t].X, be, B[t].worker, o->slice, maxwr, o->qp_depth, 0, 0, err);
		if (have_m)
			B[t].X.m = &wm;
		B[t].X.err = &B[t].err;
	}
	if (st != DMR_OK)
		goto out;
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kv_on_signal;
	sigemptyset(&sa.sa_mask);
	kv_interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (; started < o->threads; started++)
		if (pthread_create(&B[started].tid, NULL, bench_thread, &B[started]) != 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "kv bench: cannot start thread %u", started);
			break;
		}
	uint64_t t0 = UINT64_MAX, t1 = 0, wire_to = 0, wire_from = 0;
	for (uint32_t t = 0; t < started; t++) {
		pthread_join(B[t].tid, NULL);
		if (B[t].st != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, B[t].st, "%s", B[t].err.msg);
		if (B[t].t_first < t0)
			t0 = B[t].t_first;
		t1 = max64(t1, B[t].t_last);
		wire_to += B[t].X.wire_to;
		wire_from += B[t].X.wire_from;
		for (uint64_t i = 0; i < B[t].lat.n; i++)
			if (dvec_push(&lat, B[t].lat.v[i]) != 0)
				break;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (st == DMR_OK && lat.n != o->ops)
		st = dmr_err_set(err, DMR_ERR_INVALID, "kv bench: %" PRIu64 " of %" PRIu64
				 " ops completed", lat.n, o->ops);
	if (st != DMR_OK)
		goto out;
	r->ops = lat.n;
	r->bytes = lat.n * o->size;
	dvec_stats(&lat, &r->p50_us, &r->p99_us, &r->p999_us, &r->mean_us, &r->min_us, &r->max_us);
	uint64_t el = t1 > t0 ? t1 - t0 : 0;
	r->elapsed_us = el / 1e6;
	r->per_op_us = r->elapsed_us / r->ops;
	if (el) {
		r->gbps = r->bytes * 8.0 / (el / 1e12) / 1e9;
		r->wire_gbps = (wire_to > wire_from ? wire_to : wire_from) * 8.0 / (el / 1e12) / 1e9;
	}
	if (have_m) {
		r->link_gbps = wm.link_gbps;
		r->mtu = wm.mtu;
		if (wm.link_gbps > 0) {
			r->bound_payload_us = o->size * 8.0 / (wm.link_gbps * 1e3);
			r->bound_wire_us = dmr_model_msg_wire_bytes(&wm, o->size, wm.reth_bytes, 0) *
					   8.0 / (wm.link_gbps * 1e3);
		}
	}
	r->wall_s = wall_now() - w0;
out:
	for (uint32_t t = 0; B && t < o->threads; t++) {
		xeng_fini(&B[t].X);
		free(B[t].lat.v);
	}
	free(B);
	free(lat.v);
	dmr_be_close(be);
	return st;
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
	if (strcmp(o->backend, "sim") != 0) /* threaded: shm, verbs */
		return bench_threaded(o, r, err, w0);
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
	char link[64];
	if (r->link_gbps > 0 || strcmp(o->backend, "sim") == 0)
		snprintf(link, sizeof(link), "%g Gb/s, MTU %u", r->link_gbps, r->mtu);
	else
		snprintf(link, sizeof(link), "link rate unknown, MTU %u", r->mtu);
	fprintf(f, "dmreplay kv bench: %" PRIu64 " x %s of %" PRIu64 " B (%s), %u thread%s x batch %u"
		   " on %u CN%s, %s/%s (%s)\n",
		r->ops, o->opcode == DMR_WR_READ ? "READ" : "WRITE", o->size, sz, o->threads,
		o->threads == 1 ? "" : "s", o->batch, o->cns, o->cns == 1 ? "" : "s", o->backend,
		r->profile, link);
	if (nsl > 1)
		fprintf(f, "  slicing        %" PRIu64 " slices of %" PRIu64
			   " B per op, up to %u in flight per thread's QP\n",
			nsl, o->slice, o->qp_depth);
	else
		fprintf(f, "  slicing        none: one WR per op\n");
	fprintf(f, "  latency/op     p50 %.2f us, p99 %.2f us, p99.9 %.2f us (min %.2f, max %.2f, mean %.2f)\n",
		r->p50_us, r->p99_us, r->p999_us, r->min_us, r->max_us, r->mean_us);
	int sim = strcmp(o->backend, "sim") == 0;
	fprintf(f, "  throughput     %.2f Gb/s payload (%.2f Gb/s on the wire), %.2f us per op "
		   "amortised, %.3f ms %s\n",
		r->gbps, r->wire_gbps, r->per_op_us, r->elapsed_us / 1e3,
		sim ? "simulated" : "measured (wall clock)");
	if (!sim && r->link_gbps <= 0) {
		fprintf(f, "  run            %.3f s wall (no link rate known: no serialisation bound)\n",
			r->wall_s);
		return;
	}
	fprintf(f, "  lower bound    %s must cross one %g Gb/s link: %" PRIu64 " B x 8 / %g Gb/s = "
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
			   "                 one %g Gb/s port: impossible for one push, and for the "
			   "amortised time of a stream too\n"
			   "                 (bytes per op / time per op <= link rate, so >= %.2f us per "
			   "op on one link)\n",
			need80, need50, r->link_gbps, r->bound_payload_us);
	}
	fprintf(f, "  %s %.3f s wall\n", sim ? "simulator     " : "run           ", r->wall_s);
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
		"  models   list the model presets (KV bytes per token and per block)\n"
		"  mn       verbs: the MN process hosting the pool and its master\n"
		"  cn       verbs: a client process (CN) replaying its share of the trace\n");
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
		"  --block-bytes B    block size in bytes instead (K/M/G suffixes; at most 1G)\n"
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
		"  --backend NAME      sim (default), shm or verbs (threaded: the master is a thread\n"
		"                      next to the MN, reached by an RPC over RDMA WRITE/READ)\n"
		"  --device DEV        verbs: RDMA device name or index (default index 0)\n"
		"  --port N            verbs: port (default 1)\n"
		"  --gid-index N       verbs: GID index (default automatic)\n"
		"  --timeout-s X       threaded: longest wait for an RPC answer or a completion (60)\n"
		"  --profile NAME      hardware profile for sim (default cx6dx-100g); on verbs only\n"
		"                      its RoCEv2 framing constants are used (wire bytes)\n"
		"  --cns N             compute nodes (default 4)\n"
		"  --clients N         client workers per CN (default 1)\n"
		"  --segments N        pool segments (default: all clients)\n"
		"  --unbounded-pool    no capacity limit, no eviction (default)\n"
		"  --capacity BYTES    pool capacity over all segments (K/M/G/T suffixes)\n"
		"  --high-water X      evict when a put would exceed X of capacity (default 0.95)\n"
		"  --low-water X       ... down to X of capacity (default 0.90)\n"
		"  --placement P       round-robin (default) | least-loaded\n"
		"  --time-scale X      open loop: arrival = trace time x X (0..100, default 1; 0.5 = twice as fast)\n"
		"  --outstanding N     closed loop with N requests in flight instead\n"
		"  --slice BYTES       split transfers into slices (default 64K; 0 = one WR per block)\n"
		"  --qp-depth N        slices in flight per client (default 16)\n"
		"  --rpc-us X          master lookup RPC (default: profile's small-READ round trip)\n"
		"  --sim-region BYTES  real MN memory on sim; larger pools are folded into it (default 16M)\n"
		"  --mtu BYTES         override the profile's path MTU\n"
		"  --requests N        replay the first N requests\n"
		"  --window-ms X       time-series window (0.001..3600000, default 1000)\n"
		"  --out DIR           results directory (default out/kv)\n"
		"  --quiet\n"
		"  --procs             verbs: run `kv mn` (the master) and --cns `kv cn` processes\n"
		"                      (default 2) on this host (docs/KVCACHE.md 9.7); OUT/cluster.json,\n"
		"                      OUT/mn/, OUT/cnK/, logs OUT/mn.log, OUT/cnK.log, OUT/summary.csv\n"
		"  --config FILE       verbs: the same with the MN and CNs of a cluster config\n"
		"  --deadline S        --procs: stop the children after S s (default 3600; 0 = none)\n");
}

static void proc_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv mn --config CLUSTER.json --trace KVTRACE [--id K] [pool options]\n"
		"       dmreplay kv cn --config CLUSTER.json --id K --trace KVTRACE [pool and replay options]\n"
		"The pool as processes on verbs (docs/KVCACHE.md 9.7). `kv mn` is the MN process: it\n"
		"registers the pool region (mr_size of the config, raised to the pool's size), runs\n"
		"the master on it and exits when every CN is done (0) or a CN failed or is missing\n"
		"at the start barrier's deadline (1, naming it). `kv cn --id K` runs --clients\n"
		"client threads replaying requests i with i mod (CNs x clients) in\n"
		"[K x clients, K x clients + clients) (K = the CN's index in the config), reaching the\n"
		"master only by RDMA WRITE/READ. Give both the same --trace, --requests, --clients\n"
		"and pool options (--segments, --capacity/--unbounded-pool, --high-water,\n"
		"--low-water, --placement): each CN compares the geometry the master wrote into the\n"
		"region with its own and refuses a mismatch. Replay options (--time-scale,\n"
		"--outstanding (per CN), --slice, --qp-depth, --timeout-s) matter to CNs only; the MN\n"
		"accepts and ignores them. `kv run` options otherwise, plus:\n"
		"  --config FILE          cluster config (docs/ROLES.md); --cns, if given, must match it\n"
		"  --id K                 the CN's (required) or MN's (default the first) id\n"
		"  --barrier-timeout S    start barrier deadline (default 60)\n"
		"  --end-timeout S        end barrier deadline (default 300)\n"
		"  --out DIR              results of this process (summary.csv, or *.partial.csv)\n");
}

static int kv_run_main_mode(int argc, char **argv, int mode);

/* ---- `kv run --backend verbs --procs`: kv mn + kv cn as child processes -- */

/* The first data row of a summary CSV: values of `keys` into vals ("-" when
 * missing); 0 when the file was read. */
static int kv_csv_row(const char *path, const char *const keys[], int nk, char vals[][64])
{
	for (int i = 0; i < nk; i++)
		snprintf(vals[i], 64, "-");
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char hdr[4096], row[4096];
	int ok = fgets(hdr, sizeof(hdr), f) && fgets(row, sizeof(row), f);
	fclose(f);
	if (!ok)
		return -1;
	hdr[strcspn(hdr, "\r\n")] = 0;
	row[strcspn(row, "\r\n")] = 0;
	char *hs, *rs, *h = strtok_r(hdr, ",", &hs);
	char *r = strtok_r(row, ",", &rs);
	for (; h && r; h = strtok_r(NULL, ",", &hs), r = strtok_r(NULL, ",", &rs))
		for (int i = 0; i < nk; i++)
			if (strcmp(h, keys[i]) == 0)
				snprintf(vals[i], 64, "%s", r);
	return 0;
}

static const char *const kv_launch_keys[] = {"status", "requests", "blocks_requested",
					     "blocks_got", "blocks_put", "hit_ratio",
					     "p50_us", "p99_us", "rpc_us"};
#define KV_NKEYS 9

struct kv_launch_arg {
	uint32_t n;
	char (*names)[16];
	int *status;
	char (*vals)[KV_NKEYS][64];
};

static int fill_kv_launch(FILE *f, const void *a)
{
	const struct kv_launch_arg *x = a;
	fprintf(f, "scope,exit");
	for (int i = 0; i < KV_NKEYS; i++)
		fprintf(f, ",%s", kv_launch_keys[i]);
	fprintf(f, "\n");
	for (uint32_t i = 0; i < x->n; i++) {
		fprintf(f, "%s,%d", x->names[i], x->status[i]);
		for (int j = 0; j < KV_NKEYS; j++)
			fprintf(f, ",%s", x->vals[i][j]);
		fprintf(f, "\n");
	}
	return 0;
}

/* Options of kv run that the launcher consumes (not passed to the children);
 * 1 = takes a value */
static int kv_launch_own(const char *a, int *takes_value)
{
	static const struct {
		const char *name;
		int arg;
	} own[] = {{"--procs", 0},     {"--backend", 1}, {"--device", 1}, {"--port", 1},
		   {"--gid-index", 1}, {"--cns", 1},     {"--out", 1},    {"--deadline", 1},
		   {"--config", 1}};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t l = strlen(own[i].name);
		if (strncmp(a, own[i].name, l) == 0 && (a[l] == 0 || a[l] == '=')) {
			*takes_value = own[i].arg && a[l] == 0;
			return 1;
		}
	}
	return 0;
}

static int kv_launch_body(int argc, char **argv, const dmr_kv_opts_t *o, const char *config,
			  int cns_given, double deadline_s)
{
	const char *pfx = "dmreplay kv run --procs";
	static dmr_verbs_cluster_t cl;
	char cfgpath[1100], note[256] = "";
	dmr_err_t err = {{0}};
	if (strcmp(o->backend, "verbs") != 0) {
		fprintf(stderr, "%s: error: --procs/--config need --backend verbs (have %s)\n", pfx,
			o->backend);
		return 2;
	}
	if (!o->trace) {
		fprintf(stderr, "%s: error: --trace KVTRACE is required\n", pfx);
		return 2;
	}
	if (!o->out_dir) {
		fprintf(stderr, "%s: error: --out DIR is required\n", pfx);
		return 2;
	}
	if (dmr_kv_out_check(o->out_dir, &err) != DMR_OK) {
		fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
		return 2;
	}
	if (config) {
		if (dmr_cluster_load(config, &cl, note, sizeof(note), &err) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		if (cns_given && o->cns != cl.ncn) {
			fprintf(stderr, "%s: error: --cns %u but %s lists %u CNs\n", pfx, o->cns, config,
				cl.ncn);
			return 2;
		}
		snprintf(cfgpath, sizeof(cfgpath), "%s", config);
	} else {
#ifdef DMR_HAVE_VERBS
		uint32_t ncn = cns_given ? o->cns : 2;
		if (ncn > DMR_VERBS_MAX_NODES) {
			fprintf(stderr, "%s: error: --cns %u: 1..%d processes\n", pfx, ncn,
				DMR_VERBS_MAX_NODES);
			return 2;
		}
		dmr_verbs_info_t vi;
		if (dmr_verbs_probe(o->device, o->port, o->gid_index, &vi, &err) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		snprintf(cfgpath, sizeof(cfgpath), "%s/cluster.json", o->out_dir);
		FILE *f = fopen(cfgpath, "w");
		if (!f) {
			fprintf(stderr, "%s: error: %s: %s\n", pfx, cfgpath, strerror(errno));
			return 2;
		}
		/* mr_size: kv mn raises it to the pool's region */
		fprintf(f, "{\"mn\":[{\"id\":0,\"ip\":\"%s\",\"devname\":\"%s\",\"ibport\":%d,"
			   "\"gid\":%d,\"mr_size\":4096}],\"cn\":[",
			vi.ip, vi.device, vi.port, vi.gid_index);
		for (uint32_t k = 0; k < ncn; k++)
			fprintf(f, "%s{\"id\":%u,\"ip\":\"%s\",\"devname\":\"%s\",\"ibport\":%d,\"gid\":%d}",
				k ? "," : "", k, vi.ip, vi.device, vi.port, vi.gid_index);
		fprintf(f, "],\"retry_cnt\":6,\"rnr_retry\":7,\"timeout\":14,\"port\":%d}\n",
			20000 + (int)(getpid() % 20000));
		if (fclose(f) != 0 || dmr_cluster_load(cfgpath, &cl, note, sizeof(note), &err) != DMR_OK) {
			fprintf(stderr, "%s: error: %s: %s\n", pfx, cfgpath, err.msg[0] ? err.msg : strerror(errno));
			return 2;
		}
#else
		fprintf(stderr, "%s: error: built without the verbs backend\n", pfx);
		return 2;
#endif
	}
	uint32_t n = 1 + cl.ncn;
	/* the children's argv: their own options, then kv run's other options */
	size_t per = (size_t)argc + 12;
	char **av = calloc(n * per, sizeof(char *));
	char (*names)[16] = calloc(n, sizeof(*names));
	char (*logs)[1100] = calloc(n, sizeof(*logs));
	char (*outs)[1100] = calloc(n, sizeof(*outs));
	char (*ids)[16] = calloc(n, sizeof(*ids));
	char (*vals)[KV_NKEYS][64] = calloc(n, sizeof(*vals));
	char ***argvs = calloc(n, sizeof(char **));
	const char **cnames = calloc(n, sizeof(char *)), **clogs = calloc(n, sizeof(char *));
	int *status = calloc(n, sizeof(int));
	int rc = 1;
	if (!av || !names || !logs || !outs || !ids || !vals || !argvs || !cnames || !clogs ||
	    !status) {
		fprintf(stderr, "%s: error: out of memory\n", pfx);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		char **a = av + i * per;
		int ac = 0;
		argvs[i] = a;
		a[ac++] = "dmreplay";
		a[ac++] = "kv";
		a[ac++] = i ? "cn" : "mn";
		a[ac++] = "--config";
		a[ac++] = cfgpath;
		a[ac++] = "--id";
		snprintf(ids[i], sizeof(ids[i]), "%u", i ? cl.cn[i - 1].id : cl.mn[0].id);
		a[ac++] = ids[i];
		if (i)
			snprintf(names[i], sizeof(names[i]), "cn%u", cl.cn[i - 1].id);
		else
			snprintf(names[i], sizeof(names[i]), "mn");
		snprintf(outs[i], sizeof(outs[i]), "%s/%s", o->out_dir, names[i]);
		snprintf(logs[i], sizeof(logs[i]), "%s/%s.log", o->out_dir, names[i]);
		a[ac++] = "--out";
		a[ac++] = outs[i];
		for (int j = 1; j < argc; j++) {
			int tv = 0;
			if (kv_launch_own(argv[j], &tv)) {
				j += tv;
				continue;
			}
			a[ac++] = argv[j];
		}
		a[ac] = NULL;
		cnames[i] = names[i];
		clogs[i] = logs[i];
	}
	char p[1200];
	snprintf(p, sizeof(p), "%s/summary.partial.csv", o->out_dir);
	unlink(p); /* a stale partial goes; a finished summary.csv stays until this run finished */
	fprintf(stderr, "%s: MN %u (the master) at %s:%u and %u CN processes x %u clients; config %s; "
			"logs %s/mn.log, %s/cnK.log\n",
		pfx, cl.mn[0].id, cl.mn[0].ip, cl.port, cl.ncn, o->clients, cfgpath, o->out_dir,
		o->out_dir);
	int wrc, started = !kv_interrupted;
	if (started) {
		wrc = dmr_roles_spawn_wait(pfx, n, (char **const *)argvs, cnames, clogs, deadline_s,
					   status);
		if (kv_interrupted) /* after spawn_wait restored our handler */
			wrc = 130;
	} else { /* interrupted before the children were started */
		fprintf(stderr, "%s: interrupted by signal %d before the processes were started\n",
			pfx, (int)kv_interrupted);
		wrc = 130;
	}
	int complete = wrc == 0, any2 = 0;
	for (uint32_t i = 0; i < n; i++) {
		char sp[1200];
		if (!started) { /* exit -1, status not-started: nothing ran */
			status[i] = -1;
			snprintf(vals[i][0], sizeof(vals[i][0]), "not-started");
			complete = 0;
			continue;
		}
		snprintf(sp, sizeof(sp), "%s/summary.csv", outs[i]);
		if (status[i] != 0 || kv_csv_row(sp, kv_launch_keys, KV_NKEYS, vals[i]) != 0) {
			complete = 0;
			snprintf(sp, sizeof(sp), "%s/summary.partial.csv", outs[i]);
			kv_csv_row(sp, kv_launch_keys, KV_NKEYS, vals[i]);
		}
		any2 |= status[i] == 2;
		if (strcmp(vals[i][0], "complete") != 0)
			complete = 0;
	}
	struct kv_launch_arg la = {n, names, status, vals};
	dmr_status_t st = dmr_results_write_file(o->out_dir,
						 complete ? "summary.csv" : "summary.partial.csv",
						 fill_kv_launch, &la, &err);
	if (st != DMR_OK)
		fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
	if (st == DMR_OK && complete)
		unlink(p);
	for (uint32_t i = 0; i < n; i++)
		printf("  %-5s %-9s exit %d, requests %s, blocks requested %s, got %s, put %s, hit ratio %s%s\n",
		       names[i], vals[i][0], status[i], vals[i][1], vals[i][2], vals[i][3], vals[i][4],
		       vals[i][5], i ? "" : " (the master: the whole trace)");
	printf("dmreplay kv: %s on verbs (%s), MN + %u CN processes x %u clients: hit ratio %s%s\n",
	       o->trace, cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0", cl.ncn, o->clients,
	       vals[0][5], complete ? "" : "  [PARTIAL]");
	printf("  results        %s/%s, %s/mn/, %s/cnK/\n", o->out_dir,
	       complete ? "summary.csv" : "summary.partial.csv", o->out_dir, o->out_dir);
	if (!complete && started)
		for (uint32_t i = 0; i < n; i++)
			if (status[i] != 0)
				fprintf(stderr, "%s: %s exited %d: see %s\n", pfx, names[i], status[i],
					logs[i]);
	rc = wrc == 130 ? 130 : complete && st == DMR_OK ? 0 : any2 && wrc == 0 ? 2 : 1;
out:
	free(av);
	free(names);
	free(logs);
	free(outs);
	free(ids);
	free(vals);
	free(argvs);
	free(cnames);
	free(clogs);
	free(status);
	return rc;
}

/* kv run --procs / --config: the signal handling goes in first of all, so a
 * SIGINT/SIGTERM before the children run still gives a partial summary and
 * exit 130 (dmr_roles_spawn_wait installs its own handlers while it waits,
 * forwarding to the children, and restores these). */
static int kv_launch(int argc, char **argv, const dmr_kv_opts_t *o, const char *config,
		     int cns_given, double deadline_s)
{
	struct sigaction oldsig[2];
	kv_sig_install(oldsig);
	int rc = kv_launch_body(argc, argv, o, config, cns_given, deadline_s);
	kv_sig_restore(oldsig);
	return rc;
}

static int kv_run_main(int argc, char **argv)
{
	return kv_run_main_mode(argc, argv, KVM_ONE);
}

static int kv_run_main_mode(int argc, char **argv, int mode)
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
		{"device", required_argument, 0, 'd'},    {"port", required_argument, 0, 'O'},
		{"gid-index", required_argument, 0, 'G'}, {"timeout-s", required_argument, 0, 'T'},
		{"help", no_argument, 0, 'h'},            {"config", required_argument, 0, 'F'},
		{"id", required_argument, 0, 'I'},        {"barrier-timeout", required_argument, 0, 'B'},
		{"end-timeout", required_argument, 0, 'E'}, {"procs", no_argument, 0, 'Q'},
		{"deadline", required_argument, 0, 'X'},  {0, 0, 0, 0}};
	const char *cmd = mode == KVM_MN ? "kv mn" : mode == KVM_CN ? "kv cn" : "kv run";
	dmr_kv_opts_t o;
	dmr_kv_opts_default(&o);
	int ch, li = -1, saw_unb = 0, saw_cap = 0, saw_cns = 0, saw_be = 0, saw_dev = 0;
	const char *config = NULL;
	long long id = -1;
	double barrier_s = 60, end_s = 300, deadline_s = 3600;
	int procs = 0;
	char name[40];
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		int bad = 0;
		if (mode == KVM_ONE && (ch == 'I' || ch == 'B' || ch == 'E')) {
			fprintf(stderr, "dmreplay kv run: %s is an option of kv mn / kv cn\n", name);
			return 2;
		}
		if (mode != KVM_ONE && (ch == 'Q' || ch == 'X')) {
			fprintf(stderr, "dmreplay %s: %s is an option of kv run\n", cmd, name);
			return 2;
		}
		switch (ch) {
		case 't': o.trace = optarg; break;
		case 'b': o.backend = optarg; saw_be = 1; break;
		case 'F': config = optarg; break;
		case 'Q': procs = 1; break;
		case 'X':
			bad = parse_num("run", name, optarg, &deadline_s);
			if (!bad && !(deadline_s >= 0)) {
				fprintf(stderr, "dmreplay kv run: --deadline must be >= 0\n");
				bad = 1;
			}
			break;
		case 'I': {
			uint32_t v;
			bad = parse_u32("run", name, optarg, &v, 0, INT32_MAX);
			id = v;
			break;
		}
		case 'B':
		case 'E':
			bad = parse_num("run", name, optarg, ch == 'B' ? &barrier_s : &end_s);
			if (!bad && !((ch == 'B' ? barrier_s : end_s) > 0)) {
				fprintf(stderr, "dmreplay %s: %s must be > 0\n", cmd, name);
				bad = 1;
			}
			break;
		case 'p': o.profile = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'd': o.device = optarg; saw_dev = 1; break;
		case 'O': {
			saw_dev = 1;
			uint32_t v;
			bad = parse_u32("run", name, optarg, &v, 1, 255);
			o.port = (int)v;
			break;
		}
		case 'G': {
			saw_dev = 1;
			uint32_t v;
			bad = parse_u32("run", name, optarg, &v, 0, 255);
			o.gid_index = (int)v;
			break;
		}
		case 'T':
			bad = parse_num("run", name, optarg, &o.timeout_s);
			if (!bad && !(o.timeout_s > 0)) {
				fprintf(stderr, "dmreplay kv run: --timeout-s must be > 0\n");
				bad = 1;
			}
			break;
		case 'h':
			if (mode == KVM_ONE)
				run_usage(stdout);
			else
				proc_usage(stdout);
			return 0;
		case 'c': saw_cns = 1; bad = parse_u32("run", name, optarg, &o.cns, 1, 1024); break;
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
		default:
			if (mode == KVM_ONE)
				run_usage(stderr);
			else
				proc_usage(stderr);
			return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return 2;
	}
	if (saw_unb && saw_cap) {
		fprintf(stderr, "dmreplay %s: --unbounded-pool and --capacity exclude each other\n", cmd);
		return 2;
	}
	if (mode == KVM_ONE && (procs || config))
		return kv_launch(argc, argv, &o, config, saw_cns, deadline_s);
	dmr_kv_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st;
	if (mode != KVM_ONE) {
		static dmr_verbs_cluster_t cl; /* outlives the backend (the CN role) */
		char note[256] = "";
		uint32_t idx = 0;
		if (!config) {
			fprintf(stderr, "dmreplay %s: --config CLUSTER.json is required (dmreplay %s --help)\n",
				cmd, cmd);
			return 2;
		}
		if (!o.trace) {
			fprintf(stderr, "dmreplay %s: --trace KVTRACE is required\n", cmd);
			return 2;
		}
		if (saw_be && strcmp(o.backend, "verbs") != 0) {
			fprintf(stderr, "dmreplay %s: --backend %s: the pool as processes runs on verbs only\n",
				cmd, o.backend);
			return 2;
		}
		if (saw_dev) {
			fprintf(stderr, "dmreplay %s: --device, --port and --gid-index come from the "
					"cluster config (devname, ibport, gid)\n",
				cmd);
			return 2;
		}
		if (mode == KVM_CN && id < 0) {
			fprintf(stderr, "dmreplay kv cn: --id K is required (a CN id of %s)\n", config);
			return 2;
		}
		if (dmr_cluster_load(config, &cl, note, sizeof(note), &err) != DMR_OK) {
			fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err.msg);
			return 2;
		}
		if (note[0])
			fprintf(stderr, "dmreplay %s: note: %s\n", cmd, note);
		const dmr_verbs_node_t *nodes = mode == KVM_CN ? cl.cn : cl.mn;
		uint32_t nn = mode == KVM_CN ? cl.ncn : cl.nmn, i;
		for (i = 0; i < nn; i++)
			if (id < 0 || nodes[i].id == (uint64_t)id)
				break;
		if (i == nn) {
			char ids[256] = "";
			size_t off = 0;
			for (uint32_t j = 0; j < nn && off < sizeof(ids); j++)
				off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%u", j ? ", " : "",
							nodes[j].id);
			fprintf(stderr, "dmreplay %s: error: %s: no %s with id %lld (%s ids: %s)\n", cmd,
				config, mode == KVM_CN ? "CN" : "MN", id, mode == KVM_CN ? "CN" : "MN",
				ids);
			return 2;
		}
		idx = i;
		if (saw_cns && o.cns != cl.ncn) {
			fprintf(stderr, "dmreplay %s: --cns %u but %s lists %u CNs\n", cmd, o.cns, config,
				cl.ncn);
			return 2;
		}
		o.cns = cl.ncn;
		o.backend = "verbs";
#ifdef DMR_HAVE_VERBS
		if (mode == KVM_MN) {
			if (dmr_kv_out_check(o.out_dir, &err) != DMR_OK) {
				fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err.msg);
				return 2;
			}
			st = kv_mn_serve(&o, &cl, idx, barrier_s, end_s, &r, &err);
		} else {
			kv_proc_t P = {.mode = KVM_CN, .cl = &cl, .self = idx, .barrier_s = barrier_s,
				       .end_s = end_s};
			st = kv_run_common(&o, &P, &r, &err);
		}
#else
		(void)idx;
		(void)barrier_s;
		(void)end_s;
		fprintf(stderr, "dmreplay %s: error: built without the verbs backend (libibverbs-dev, "
				"librdmacm-dev; -DDMR_VERBS=ON)\n",
			cmd);
		return 2;
#endif
	} else {
		st = dmr_kv_run(&o, &r, &err);
	}
	if (st == DMR_OK || r.partial) {
		if (!o.quiet || st != DMR_OK)
			if (r.requests || st == DMR_OK)
				dmr_kv_print(&r, stdout);
	}
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err.msg);
		if (st == DMR_ERR_INTERRUPTED)
			return 130;
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
		"  --backend NAME     sim (default), shm or verbs (one thread and QP per thread;\n"
		"                     latency and Gb/s measured on the wall clock)\n"
		"  --device DEV       verbs: RDMA device name or index (default index 0)\n"
		"  --port N           verbs: port (default 1)\n"
		"  --gid-index N      verbs: GID index (default automatic)\n"
		"  --timeout-s X      threaded: longest wait for a completion (default 60)\n"
		"  --profile NAME     (default cx6dx-100g; verbs: RoCEv2 framing constants only)\n"
		"  --mtu BYTES        override the profile's path MTU (sim)\n");
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
		{"device", required_argument, 0, 'd'},  {"port", required_argument, 0, 'P'},
		{"gid-index", required_argument, 0, 'G'}, {"timeout-s", required_argument, 0, 't'},
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
		case 'd': o.device = optarg; break;
		case 'P': {
			uint32_t v;
			bad = parse_u32("bench", name, optarg, &v, 1, 255);
			o.port = (int)v;
			break;
		}
		case 'G': {
			uint32_t v;
			bad = parse_u32("bench", name, optarg, &v, 0, 255);
			o.gid_index = (int)v;
			break;
		}
		case 't':
			bad = parse_num("bench", name, optarg, &o.timeout_s);
			if (!bad && !(o.timeout_s > 0)) {
				fprintf(stderr, "dmreplay kv bench: --timeout-s must be > 0\n");
				bad = 1;
			}
			break;
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
	if (strcmp(cmd, "mn") == 0)
		return kv_run_main_mode(argc - 1, argv + 1, KVM_MN);
	if (strcmp(cmd, "cn") == 0)
		return kv_run_main_mode(argc - 1, argv + 1, KVM_CN);
	if (strcmp(cmd, "models") == 0)
		return kv_models_main(argc - 1, argv + 1);
	fprintf(stderr, "dmreplay kv: unknown command '%s'\n", cmd);
	kv_usage(stderr);
	return 2;
}
