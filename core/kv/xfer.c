/* core/kv/xfer.c - sliced, pipelined block transfers (xfer.h). */
#include "xfer.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../base/wrid.h"

#define NOIDX DMR_KV_NOIDX

/* Content pattern of KV block `id`: 8-byte word w of the block is
 * mix64(id x golden + w), so a READ can check that it got the bytes that the
 * put of that very block wrote, at that very offset. */
static inline uint64_t pat_word(uint64_t id, uint64_t w)
{
	return dmr_kv_mix64(id * 0x9E3779B97F4A7C15ull + w);
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

/* The fields both set-ups share; buffers of `bytes` for `nc` clients. */
static dmr_status_t xeng_setup(dmr_kv_xeng_t *e, dmr_be_t *be, uint32_t nc, uint64_t slice,
			       uint64_t maxwr, uint32_t depth, size_t bytes, const char *what,
			       dmr_err_t *err)
{
	memset(e, 0, sizeof(*e));
	e->be = be;
	e->err = err;
	e->slice = slice;
	e->maxwr = maxwr;
	e->depth = depth;
	e->xfree = NOIDX;
	e->nc = nc;
	e->c = calloc(nc, sizeof(*e->c));
	e->buf = malloc(bytes);
	if (!e->c || !e->buf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (%llu-byte %s)",
				   (unsigned long long)bytes, what);
	memset(e->buf, 0x5a, bytes);
	for (uint32_t i = 0; i < nc; i++)
		e->c[i].qhead = e->c[i].qtail = NOIDX;
	return DMR_OK;
}

/* Wire bytes (RoCEv2 framing) of a slice of len bytes of opcode opc: to
 * the MN (a READ's request, a WRITE's data) and from it (a READ's data, a
 * WRITE's acknowledgement). */
static uint64_t wire_to(const dmr_model_t *m, uint8_t opc, uint64_t len)
{
	if (opc == DMR_WR_READ)
		return m->pkt_overhead + m->reth_bytes;
	return dmr_model_msg_wire_bytes(m, len, m->reth_bytes, 0);
}

static uint64_t wire_from(const dmr_model_t *m, uint8_t opc, uint64_t len)
{
	if (opc == DMR_WR_READ)
		return dmr_model_msg_wire_bytes(m, len, m->aeth_bytes,
						len > m->mtu ? m->aeth_bytes : 0);
	return m->pkt_overhead + m->aeth_bytes;
}

dmr_status_t dmr_kv_xeng_init(dmr_kv_xeng_t *e, dmr_be_t *be, const dmr_model_t *m,
			      uint32_t nclients, uint64_t slice, uint64_t maxwr, uint32_t depth,
			      uint64_t region, int folded, dmr_err_t *err)
{
	dmr_status_t st = xeng_setup(e, be, nclients, slice, maxwr, depth, maxwr, "buffer", err);
	if (st != DMR_OK)
		return st;
	e->m = m;
	e->region = region;
	e->folded = folded;
	e->fold_mod = region - maxwr + 1;
	if (m && slice) {
		e->wire_slice[0][0] = wire_to(m, DMR_WR_READ, slice);
		e->wire_slice[0][1] = wire_from(m, DMR_WR_READ, slice);
		e->wire_slice[1][0] = wire_to(m, DMR_WR_WRITE, slice);
		e->wire_slice[1][1] = wire_from(m, DMR_WR_WRITE, slice);
	}
	for (uint32_t i = 0; i < nclients; i++)
		if ((st = dmr_be_mr_reg(be, i, e->buf, maxwr, err)) != DMR_OK)
			return st;
	return DMR_OK;
}

dmr_status_t dmr_kv_xeng_init_thread(dmr_kv_xeng_t *e, dmr_be_t *be, uint32_t w0, uint64_t slice,
				     uint64_t maxwr, uint32_t depth, uint64_t base, int ring,
				     dmr_err_t *err)
{
	size_t bytes = ring ? (size_t)maxwr * depth : maxwr;
	dmr_status_t st = xeng_setup(e, be, 1, slice, maxwr, depth, bytes, "buffers", err);
	if (st != DMR_OK)
		return st;
	e->w0 = w0;
	e->base = base;
	if (ring)
		e->ring = e->buf;
	return dmr_be_mr_reg(be, w0, e->buf, bytes, err);
}

dmr_status_t dmr_kv_xeng_streams(dmr_kv_xeng_t *e, uint64_t until_ps)
{
	if (e->ring || !e->slice || e->slice > UINT32_MAX)
		return DMR_OK; /* threaded, content-checked; one WR per block */
	e->st = calloc(e->nc, sizeof(*e->st));
	e->dirty = calloc(e->nc, sizeof(*e->dirty));
	if (!e->st || !e->dirty) {
		free(e->st);
		free(e->dirty);
		e->st = NULL;
		e->dirty = NULL;
		return dmr_err_set(e->err, DMR_ERR_NOMEM, "kv: out of memory (%u streams)", e->nc);
	}
	e->sx = (dmr_be_streams_t){
	    .s = e->st, .w0 = e->w0, .n = e->nc, .until_ps = until_ps, .dirty = e->dirty};
	dmr_err_t ignored = {0};
	dmr_status_t st = dmr_be_control(e->be, DMR_BE_CTL_STREAMS, &e->sx, &ignored);
	if (st == DMR_OK)
		return DMR_OK;
	free(e->st);
	free(e->dirty);
	e->st = NULL;
	e->dirty = NULL;
	memset(&e->sx, 0, sizeof(e->sx));
	if (st == DMR_ERR_UNSUPPORTED)
		return DMR_OK;
	return dmr_err_set(e->err, st, "kv: %s", ignored.msg);
}

void dmr_kv_xeng_sync(dmr_kv_xeng_t *e)
{
	for (uint32_t i = 0; i < e->sx.ndirty; i++) {
		uint32_t ci = e->dirty[i];
		dmr_be_stream_t *st = &e->st[ci];
		dmr_kv_xq_t *c = &e->c[ci];
		dmr_kv_xfer_t *x = &e->x[dmr_wrid_get_n(st->wr_id)];
		x->posted = st->posted;
		x->done = st->done;
		x->rpos = st->rpos;
		c->inflight = st->inflight;
		c->npost += st->sposted;
		c->ndone += st->handled;
		e->slices += st->sposted;
		e->streamed += st->handled;
		if (e->m) { /* every completion the backend took was a whole slice */
			e->wire_to += st->handled * e->wire_slice[x->opcode == DMR_WR_WRITE][0];
			e->wire_from += st->handled * e->wire_slice[x->opcode == DMR_WR_WRITE][1];
		}
		st->handled = st->sposted = 0;
		st->dirty = 0;
	}
	e->sx.ndirty = 0;
}

void dmr_kv_xeng_streams_off(dmr_kv_xeng_t *e)
{
	if (!e->st)
		return;
	dmr_kv_xeng_sync(e);
	dmr_be_streams_t none = {0};
	(void)dmr_be_control(e->be, DMR_BE_CTL_STREAMS, &none, NULL);
	free(e->st);
	free(e->dirty);
	e->st = NULL;
	e->dirty = NULL;
	memset(&e->sx, 0, sizeof(e->sx));
}

/* Client ci's stream: its head transfer once its first slice is posted
 * (the folded position is set then) and while more than one slice of it
 * is left to post (the sim posts none of the last), none otherwise. After
 * a pump, so the engine's copy is current (synced). The same transfer
 * again (most pumps): only what moves. */
static void stream_set(dmr_kv_xeng_t *e, uint32_t ci)
{
	dmr_be_stream_t *st = &e->st[ci];
	const dmr_kv_xq_t *c = &e->c[ci];
	const dmr_kv_xfer_t *x = c->qhead != NOIDX ? &e->x[c->qhead] : NULL;
	if (!x || !x->posted || x->len - x->posted <= e->slice) {
		st->wr_id = 0;
		return;
	}
	const uint64_t wr_id = dmr_wrid_n(DMR_WRID_KV_SLICE, c->qhead);
	if (st->wr_id != wr_id)
		*st = (dmr_be_stream_t){.wr_id = wr_id,
					.local = e->buf,
					.base = e->folded ? e->base : e->base + x->logical,
					.fold_mod = e->folded ? e->fold_mod : 0,
					.len = x->len,
					.slice = (uint32_t)e->slice,
					.depth = e->depth,
					.opcode = x->opcode,
					.mn = 0};
	st->posted = x->posted;
	st->done = x->done;
	st->rpos = x->rpos;
	st->inflight = c->inflight;
}

void dmr_kv_xeng_fini(dmr_kv_xeng_t *e)
{
	dmr_kv_xeng_streams_off(e);
	free(e->x);
	free(e->c);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

uint32_t dmr_kv_xeng_alloc(dmr_kv_xeng_t *e)
{
	uint32_t i;
	dmr_kv_xfer_t *x = dmr_kv_list_take(e->x, &e->capx, &e->xfree, sizeof(*x),
					    offsetof(dmr_kv_xfer_t, next), 1024, &i);
	if (!x)
		return NOIDX;
	e->x = x;
	x[i].next = NOIDX;
	x[i].entry = NOIDX;
	e->live++;
	return i;
}

void dmr_kv_xeng_free(dmr_kv_xeng_t *e, uint32_t i)
{
	e->x[i].next = e->xfree;
	e->xfree = i;
	e->live--;
}

void dmr_kv_xeng_enqueue(dmr_kv_xeng_t *e, uint32_t i)
{
	dmr_kv_xq_t *c = &e->c[e->x[i].client];
	e->x[i].next = NOIDX;
	if (c->qtail != NOIDX)
		e->x[c->qtail].next = i;
	else
		c->qhead = i;
	c->qtail = i;
}

/* Remote offset of the slice at x->posted, without base: logical +
 * posted, or folded into the real region ((logical + posted) mod fold_mod,
 * 64-byte aligned). x->rpos keeps the unaligned residue from slice to
 * slice, ((a mod M) + b) mod M = (a + b) mod M, so that a division is paid
 * at a transfer's first slice and when the residue wraps, not per slice. */
static inline uint64_t remote_at(const dmr_kv_xeng_t *e, dmr_kv_xfer_t *x)
{
	if (!e->folded)
		return x->logical + x->posted;
	if (!x->posted)
		x->rpos = x->logical % e->fold_mod;
	return x->rpos & ~63ull;
}

/* x->posted grew by len: move the folded residue along. */
static inline void remote_advance(const dmr_kv_xeng_t *e, dmr_kv_xfer_t *x, uint64_t len)
{
	if (e->folded && (x->rpos += len) >= e->fold_mod)
		x->rpos %= e->fold_mod;
}

dmr_status_t dmr_kv_xeng_pump(dmr_kv_xeng_t *e, uint32_t ci)
{
	dmr_kv_xq_t *c = &e->c[ci];
	dmr_wr_t wrs[64];
	while (c->qhead != NOIDX && c->inflight < e->depth) {
		uint32_t n = 0;
		while (c->qhead != NOIDX && c->inflight < e->depth && n < 64) {
			dmr_kv_xfer_t *x = &e->x[c->qhead];
			uint64_t len = x->len - x->posted;
			if (e->slice && len > e->slice)
				len = e->slice;
			uint64_t remote = e->base + remote_at(e, x);
			dmr_wr_t *w = &wrs[n++];
			*w = (dmr_wr_t){.wr_id = dmr_wrid_n(DMR_WRID_KV_SLICE, c->qhead),
					.local = e->buf,
					.remote = remote,
					.length = (uint32_t)len,
					.opcode = x->opcode,
					.flags = DMR_WR_SIGNALED};
			if (e->ring) {
				w->local =
				    e->ring +
				    ((uint64_t)ci * e->depth + c->npost % e->depth) * e->maxwr;
				if (x->opcode == DMR_WR_WRITE) {
					pat_fill(w->local, x->tag, x->posted, len);
					if (e->corrupt && e->corrupt == x->tag + 1 && !x->posted)
						((uint8_t *)w->local)[0] ^=
						    0xff; /* fault injection */
				}
			}
			c->npost++;
			remote_advance(e, x, len);
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
	if (e->st)
		stream_set(e, ci);
	return DMR_OK;
}

dmr_status_t dmr_kv_xeng_on_wc(dmr_kv_xeng_t *e, uint32_t worker, const dmr_wc_t *wc,
			       uint32_t *done_p)
{
	uint64_t n = dmr_wrid_get_n(wc->wr_id);
	uint32_t i = n < NOIDX ? (uint32_t)n : NOIDX;
	*done_p = NOIDX;
	worker -= e->w0;
	if (i >= e->capx || worker >= e->nc)
		return dmr_err_set(e->err, DMR_ERR_INVALID,
				   "kv: completion for unknown transfer %u", i);
	dmr_kv_xfer_t *x = &e->x[i];
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
	dmr_kv_xq_t *c = &e->c[worker];
	if (e->ring && x->opcode == DMR_WR_READ) {
		const uint8_t *b =
		    e->ring + ((uint64_t)worker * e->depth + c->ndone % e->depth) * e->maxwr;
		uint64_t bad = pat_check(b, x->tag, x->done, len);
		if (bad < len)
			return dmr_err_set(e->err, DMR_ERR_VERIFY,
					   "kv: content check: block %" PRIu64 " byte %" PRIu64
					   " read from MN offset %" PRIu64
					   " (worker %u) is not what "
					   "the block's put wrote",
					   x->tag, x->done + bad,
					   e->base + x->logical + x->done + bad, e->w0 + worker);
	}
	c->ndone++;
	x->done += len;
	c->inflight--;
	if (e->m) {
		if (len == e->slice) { /* a whole slice: the sums of init */
			e->wire_to += e->wire_slice[x->opcode == DMR_WR_WRITE][0];
			e->wire_from += e->wire_slice[x->opcode == DMR_WR_WRITE][1];
		} else {
			e->wire_to += wire_to(e->m, x->opcode, len);
			e->wire_from += wire_from(e->m, x->opcode, len);
		}
	}
	if (x->done == x->len)
		*done_p = i;
	return DMR_OK;
}

void dmr_kv_plan_region(uint64_t logical, uint64_t sim_region, uint64_t maxwr, uint64_t *region_p,
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
