/* core/kv/rpc.c - the mailbox RPC's wire layout, checksum, region layout
 * and geometry header (rpc.h). */
#include "rpc.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

uint64_t dmr_kv_mb_csum(uint64_t seq, const uint8_t *body, uint32_t len)
{
	uint64_t h = dmr_kv_mix64(seq ^ 0x6b76727063ull); /* "kvrpc" */
	for (uint32_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v;
		memcpy(&v, body + i, 8);
		h = dmr_kv_mix64(h ^ v) + i;
	}
	return h;
}

int dmr_kv_layout(uint32_t clients, uint32_t segments, uint64_t slots_per_seg, uint64_t seg_stride,
		  dmr_kv_layout_t *l, uint64_t *nslots_p)
{
	/* region = header + mailboxes + ready words + segments x stride, every
	 * step checked: a wrapped size would place blocks outside the pool */
	uint64_t nslots, rdy, seg_bytes;
	l->slots_per_seg = slots_per_seg;
	l->ready_base = DMR_KV_HDR + (uint64_t)clients * DMR_KV_MB_SLOTS * DMR_KV_MB_SLOT;
	if (__builtin_mul_overflow(slots_per_seg, (uint64_t)segments, &nslots) ||
	    __builtin_mul_overflow(nslots, 8ull, &rdy) ||
	    __builtin_add_overflow(l->ready_base, rdy + 4095, &l->pool_base) ||
	    __builtin_mul_overflow((uint64_t)segments, seg_stride, &seg_bytes) ||
	    __builtin_add_overflow(l->pool_base & ~4095ull, seg_bytes, &l->region))
		return -1;
	l->pool_base &= ~4095ull;
	*nslots_p = nslots;
	return 0;
}

/* the header checksum of a request (fields at 8..32) and its n ids */
static uint64_t req_csum(const uint8_t *slot, uint64_t seq, uint32_t n)
{
	return dmr_kv_mb_csum(seq, slot + 8, 24) ^
	       dmr_kv_mb_csum(seq, slot + DMR_KV_MB_REQ_HDR, 8 * n);
}

/* the header checksum of a response (fields at 8..24) and its n entries */
static uint64_t resp_csum(const uint8_t *resp, uint64_t seq, uint32_t n)
{
	return dmr_kv_mb_csum(seq, resp + 8, 16) ^
	       dmr_kv_mb_csum(seq, resp + DMR_KV_MB_RESP_HDR, n * 16);
}

dmr_status_t dmr_kv_rpc_send(dmr_be_t *be, uint32_t worker, uint8_t *slot, uint64_t remote,
			     uint64_t seq, const dmr_kv_rpc_req_t *rq, const uint64_t *ids,
			     uint64_t wr_id, dmr_err_t *err)
{
	uint32_t n = rq->n;
	dmr_kv_st_u32(slot + 8, rq->op);
	dmr_kv_st_u32(slot + 12, n);
	dmr_kv_st_u64(slot + 16, rq->a);
	dmr_kv_st_u32(slot + 24, rq->b0);
	dmr_kv_st_u32(slot + 28, rq->total);
	if (n)
		memcpy(slot + DMR_KV_MB_REQ_HDR, ids, (size_t)n * 8);
	dmr_kv_st_u64(slot + 32, req_csum(slot, seq, n));
	dmr_kv_st_u64(slot, seq);
	dmr_wr_t wr[2] = {{.wr_id = wr_id,
			   .local = slot + 8,
			   .remote = remote + 8,
			   .length = DMR_KV_MB_REQ_HDR - 8 + 8 * n,
			   .opcode = DMR_WR_WRITE,
			   .flags = DMR_WR_SIGNALED},
			  {.wr_id = wr_id,
			   .local = slot,
			   .remote = remote,
			   .length = 8,
			   .opcode = DMR_WR_WRITE,
			   .flags = DMR_WR_SIGNALED}};
	return dmr_be_post(be, worker, 0, wr, 2, err);
}

int dmr_kv_rpc_req_read(const uint8_t *slot, uint64_t seq, dmr_kv_rpc_req_t *rq)
{
	uint32_t n = dmr_kv_ld_u32(slot + 12);
	if (n > DMR_KV_MB_MAXB || dmr_kv_ld_u64(slot + 32) != req_csum(slot, seq, n))
		return 0;
	rq->op = dmr_kv_ld_u32(slot + 8);
	rq->n = n;
	rq->a = dmr_kv_ld_u64(slot + 16);
	rq->b0 = dmr_kv_ld_u32(slot + 24);
	rq->total = dmr_kv_ld_u32(slot + 28);
	return 1;
}

void dmr_kv_rpc_respond(uint8_t *resp, uint64_t seq, uint32_t status, uint32_t n, uint64_t rid)
{
	dmr_kv_st_u32(resp + 8, status);
	dmr_kv_st_u32(resp + 12, n);
	dmr_kv_st_u64(resp + 16, rid);
	dmr_kv_st_u64(resp + 24, resp_csum(resp, seq, n));
	__atomic_store_n((uint64_t *)(void *)resp, seq, __ATOMIC_RELEASE);
}

dmr_status_t dmr_kv_rpc_fetch(dmr_be_t *be, uint32_t worker, uint8_t *resp, uint64_t remote,
			      uint32_t n, uint64_t wr_id, dmr_err_t *err)
{
	dmr_wr_t wr = {.wr_id = wr_id,
		       .local = resp,
		       .remote = remote + DMR_KV_MB_RESP,
		       .length = DMR_KV_MB_RESP_HDR + 16 * n,
		       .opcode = DMR_WR_READ,
		       .flags = DMR_WR_SIGNALED};
	return dmr_be_post(be, worker, 0, &wr, 1, err);
}

int dmr_kv_rpc_resp_ok(const uint8_t *resp, uint64_t seq, uint32_t n)
{
	return dmr_kv_ld_u64(resp) == seq && dmr_kv_ld_u32(resp + 12) == n &&
	       dmr_kv_ld_u64(resp + 24) == resp_csum(resp, seq, n);
}

dmr_status_t dmr_kv_geom_compare(const dmr_kv_geom_t *mn, const dmr_kv_geom_t *cn, dmr_err_t *err)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
#define GF(x) {#x, offsetof(dmr_kv_geom_t, x)}
	    GF(version),     GF(clients),	 GF(segments),	     GF(slots_per_seg),
	    GF(block_bytes), GF(ready_base),	 GF(pool_base),	     GF(region),
	    GF(unbounded),   GF(placement),	 GF(high_water_ppm), GF(low_water_ppm),
	    GF(requests),    GF(trace_requests), GF(trace_blocks),   GF(trace_distinct),
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
	return dmr_err_set(
	    err, DMR_ERR_INVALID,
	    "kv cn: the MN's pool geometry differs from this CN's: %s: give both the "
	    "same --trace, --requests, --clients, pool options (--segments, "
	    "--capacity/--unbounded-pool, --high-water, --low-water, --placement) "
	    "and cluster config",
	    msg);
}
