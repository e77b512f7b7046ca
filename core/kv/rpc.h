/*
 * core/kv/rpc.h - the master reached over one-sided WRITE and READ: the MN
 * region's layout, the mailbox RPC's wire layout and checksum, and the
 * geometry header (docs/KVCACHE.md section 9.2 has the protocol).
 *
 * Region of the MN (dmr_kv_layout_t):
 *   [geometry header: DMR_KV_HDR bytes; word 0 = DMR_KV_MAGIC, written last,
 *    then a dmr_kv_geom_t]                                 (processes only)
 *   [mailboxes: clients x DMR_KV_MB_SLOTS slots of DMR_KV_MB_SLOT bytes]
 *   [ready words: one u64 per pool slot, segment-major]
 *   [pool: segments x slots x block bytes]     (pool_base, 4 KiB aligned)
 *
 * A mailbox slot is a request area (offset 0) and a response area (offset
 * DMR_KV_MB_RESP). Request: u64 seq | u32 op | u32 n | u64 a | u32 b0 |
 * u32 total | u64 csum | n x u64 block ids. Response: u64 seq | u32 status
 * | u32 n | u64 rid | u64 csum | n x {u64 offset, u32 ready slot, u32 kind}.
 * csum = mb_csum(seq, header fields) ^ mb_csum(seq, body): a checksum keyed
 * by the sequence number, so a stale or half-written body never matches.
 *
 * The client WRITEs the request body, then (next WR, same QP, so placed
 * after it: RC executes WRITEs in order) the 8-byte sequence word. The
 * master polls the sequence words in its local memory, checks the
 * checksum, serves the request and writes the response body, then its
 * sequence word (release store). The client READs the response until the
 * sequence word matches and the checksum agrees (a READ racing the
 * master's stores may see a mix; the checksum rejects it and the client
 * READs again).
 *
 * Ready words: 0 while a block's put is in flight, dmr_kv_ready_tag(id)
 * once its FINISH was served; a client whose block is a WAIT polls it by
 * READ before it READs the block. All integers little-endian (host order:
 * one machine type on both sides). Part of core/kv (kv.h).
 */
#ifndef DMR_CORE_KV_RPC_H
#define DMR_CORE_KV_RPC_H

#include <stdint.h>
#include <string.h>

#include "../../backends/backend.h"
#include "../base/status.h"
#include "kv.h"

#define DMR_KV_MB_SLOT 8192u		   /* bytes per mailbox slot */
#define DMR_KV_MB_RESP 4096u		   /* offset of the response area in a slot */
#define DMR_KV_MB_REQ_HDR 40u		   /* request header bytes (ids follow) */
#define DMR_KV_MB_RESP_HDR 32u		   /* response header bytes (entries follow) */
#define DMR_KV_MB_MAXB 254u		   /* block ids per RPC: (4096 - 32) / 16 */
#define DMR_KV_MB_SLOTS 8u		   /* mailbox slots per client */
#define DMR_KV_HDR 4096u		   /* geometry header at the region's start */
#define DMR_KV_MAGIC 0x31424d564b524d44ull /* "DMRKVMB1": written last by the master */

typedef enum dmr_kv_op {
	DMR_KV_OP_LOOKUP = 1, /* look up (and allocate) n blocks of request a, from b0 */
	DMR_KV_OP_FINISH = 2, /* request record a is done: unpin, mark its puts ready */
	/* the key/value store (store.h; docs/KVCACHE.md section 10): the key's
	 * bytes are the body (n words, b0 = key bytes) */
	DMR_KV_OP_SET = 3,     /* a = value bytes: allocate the value's blocks (pending) */
	DMR_KV_OP_COMMIT = 4,  /* a = the pending value: the key now maps to it */
	DMR_KV_OP_ABORT = 5,   /* a = the pending value: drop it (the key unchanged) */
	DMR_KV_OP_GET = 6,     /* the key's value: its blocks, held until RELEASE */
	DMR_KV_OP_RELEASE = 7, /* a = the value a GET held */
	DMR_KV_OP_DEL = 8,     /* the key no longer maps to a value */
} dmr_kv_op_t;

/* What the master answers per block of a LOOKUP. */
typedef enum dmr_kv_kind {
	DMR_KV_KIND_GET = 1,  /* in the pool: READ it */
	DMR_KV_KIND_WAIT = 2, /* being written by an earlier request: poll its ready word */
	DMR_KV_KIND_PUT = 3,  /* new: WRITE it */
	DMR_KV_KIND_DROP = 4, /* new, no room: not stored */
} dmr_kv_kind_t;

static inline void dmr_kv_st_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}
static inline void dmr_kv_st_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}
static inline uint32_t dmr_kv_ld_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint64_t dmr_kv_ld_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The checksum of len bytes (whole 8-byte words) keyed by seq. */
uint64_t dmr_kv_mb_csum(uint64_t seq, const uint8_t *body, uint32_t len);

/* The ready word of a block whose put has finished (never 0). */
static inline uint64_t dmr_kv_ready_tag(uint64_t id)
{
	return dmr_kv_mix64(id) | 1;
}

/* Offset of slot s of client c's mailbox in the region. */
static inline uint64_t dmr_kv_mb_off(uint32_t c, uint32_t s)
{
	return DMR_KV_HDR + ((uint64_t)c * DMR_KV_MB_SLOTS + s) * DMR_KV_MB_SLOT;
}

typedef struct dmr_kv_layout {
	uint64_t slots_per_seg;
	uint64_t ready_base; /* bytes from the region's start */
	uint64_t pool_base;  /* 4 KiB aligned */
	uint64_t region;     /* bytes in all */
} dmr_kv_layout_t;

/* The layout for `clients` mailboxes and `segments` x slots_per_seg slots,
 * segments seg_stride bytes apart; *nslots_p = all slots. 0, or -1 when a
 * size overflows 64 bits (*l then incomplete). */
int dmr_kv_layout(uint32_t clients, uint32_t segments, uint64_t slots_per_seg, uint64_t seg_stride,
		  dmr_kv_layout_t *l, uint64_t *nslots_p);

/* Index of the ready word of slot `slot` of segment `seg` (its offset is
 * ready_base + 8 x index). */
static inline uint64_t dmr_kv_ready_index(const dmr_kv_layout_t *l, uint32_t seg, uint64_t slot)
{
	return (uint64_t)seg * l->slots_per_seg + slot;
}

typedef struct dmr_kv_rpc_req {
	uint32_t op;	/* dmr_kv_op_t */
	uint32_t n;	/* block ids in the body, <= DMR_KV_MB_MAXB */
	uint64_t a;	/* LOOKUP: the request's trace index; FINISH: the master's record */
	uint32_t b0;	/* LOOKUP: the first id's index among the request's blocks */
	uint32_t total; /* LOOKUP: the request's blocks */
} dmr_kv_rpc_req_t;

/*
 * Client: write request rq with sequence seq and ids (rq->n of them) into
 * `slot`, the local copy of a mailbox slot (registered for `worker`), and
 * post it to the MN at `remote` (dmr_kv_mb_off) as two signaled WRITEs, the
 * body then the sequence word, both with wr_id. Errors: the post's.
 */
dmr_status_t dmr_kv_rpc_send(dmr_be_t *be, uint32_t worker, uint8_t *slot, uint64_t remote,
			     uint64_t seq, const dmr_kv_rpc_req_t *rq, const uint64_t *ids,
			     uint64_t wr_id, dmr_err_t *err);
/* Master: 1 when the request area `slot` holds a request consistent with
 * sequence word seq (*rq filled), 0 when its body does not (yet) match. */
int dmr_kv_rpc_req_read(const uint8_t *slot, uint64_t seq, dmr_kv_rpc_req_t *rq);
/* Master: block id j of the request in `slot`. */
static inline uint64_t dmr_kv_rpc_req_id(const uint8_t *slot, uint32_t j)
{
	return dmr_kv_ld_u64(slot + DMR_KV_MB_REQ_HDR + 8 * j);
}
/* Master: entry j of the response area `resp` (slot + DMR_KV_MB_RESP). */
static inline void dmr_kv_rpc_resp_put(uint8_t *resp, uint32_t j, uint64_t off, uint32_t rslot,
				       uint32_t kind)
{
	uint8_t *e = resp + DMR_KV_MB_RESP_HDR + 16 * j;
	dmr_kv_st_u64(e, off);
	dmr_kv_st_u32(e + 8, rslot);
	dmr_kv_st_u32(e + 12, kind);
}
/* Master: the response header and checksum over n entries, then the
 * sequence word (release store). */
void dmr_kv_rpc_respond(uint8_t *resp, uint64_t seq, uint32_t status, uint32_t n, uint64_t rid);
/* Client: post the READ of the response area of the mailbox slot at
 * `remote` (n entries) into `resp` (local, registered), wr_id. */
dmr_status_t dmr_kv_rpc_fetch(dmr_be_t *be, uint32_t worker, uint8_t *resp, uint64_t remote,
			      uint32_t n, uint64_t wr_id, dmr_err_t *err);
/* Client: 1 when `resp` (READ back) is the answer to seq with n entries. */
int dmr_kv_rpc_resp_ok(const uint8_t *resp, uint64_t seq, uint32_t n);
static inline uint64_t dmr_kv_rpc_resp_rid(const uint8_t *resp)
{
	return dmr_kv_ld_u64(resp + 16);
}
static inline void dmr_kv_rpc_resp_get(const uint8_t *resp, uint32_t j, uint64_t *off_p,
				       uint32_t *rslot_p, uint32_t *kind_p)
{
	const uint8_t *e = resp + DMR_KV_MB_RESP_HDR + 16 * j;
	*off_p = dmr_kv_ld_u64(e);
	*rslot_p = dmr_kv_ld_u32(e + 8);
	*kind_p = dmr_kv_ld_u32(e + 12);
}

/*
 * The geometry header (the MN process writes it at offset 8 of the region,
 * then DMR_KV_MAGIC at offset 0; each CN READs it after the start barrier
 * and refuses a mismatch). All fields u64; bytes from the region's start.
 */
typedef struct dmr_kv_geom {
	uint64_t version; /* 1 */
	uint64_t clients; /* client workers in all (CNs x --clients) = mailboxes */
	uint64_t segments, slots_per_seg, block_bytes;
	uint64_t ready_base, pool_base, region;
	uint64_t unbounded, placement;
	uint64_t high_water_ppm, low_water_ppm; /* --high-water, --low-water x 1e6 */
	uint64_t requests;			/* --requests (0 = all) */
	uint64_t trace_requests, trace_blocks, trace_distinct, trace_hash; /* the trace replayed */
} dmr_kv_geom_t;

/* DMR_OK when equal, else DMR_ERR_INVALID naming every field that differs
 * with both values ("kv cn: the MN's pool geometry differs from this CN's:
 * clients 4 at the MN, 2 here; ...: give both the same --trace, --requests,
 * --clients, pool options and cluster config"). */
dmr_status_t dmr_kv_geom_compare(const dmr_kv_geom_t *mn, const dmr_kv_geom_t *cn, dmr_err_t *err);

#endif /* DMR_CORE_KV_RPC_H */
