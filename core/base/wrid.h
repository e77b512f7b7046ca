/*
 * core/base/wrid.h - the one encoding of a work request's 64-bit wr_id.
 *
 *   bits 63..60  kind (dmr_wrid_kind_t): who posted the WR and so who
 *                consumes its completion
 *   bits 59..32  index (28 bits): the posting object (transaction context,
 *                MN, ...), per kind below
 *   bits 31..0   sequence (32 bits): per kind below
 *
 * A kind may instead use the 60 bits below it as one number (dmr_wrid_n:
 * KV slices and mailbox slots, benchmark sequence numbers).
 *
 * kinds and their fields
 *   TXN       index = context id, seq = the context's doorbell sequence
 *             (core/txn.c); kind 0, so these wr_ids are ctx << 32 | seq
 *   WAKE      index = context id, seq unused: a DMR_WR_TIMER the replay
 *             engine sets to resume a parked context (replay/)
 *   KV_SLICE, KV_ARRIVE, KV_RPC, KV_RPCW, KV_RPCR, KV_RDY
 *             n = slice / request / mailbox index (core/kv, replay/kv)
 *   BENCH     n = the WR's sequence number in its QP (replay/tools bench,
 *             calibrate)
 *   BACKEND   index = MN, seq = slot: a backend's own wr_id on the
 *             provider's queue (verbs); never returned to a caller
 * Part of core/base (nothing of ours below).
 */
#ifndef DMR_BASE_WRID_H
#define DMR_BASE_WRID_H

#include <stdint.h>

typedef enum dmr_wrid_kind {
	DMR_WRID_TXN = 0,
	DMR_WRID_WAKE = 1,
	DMR_WRID_KV_SLICE = 2,
	DMR_WRID_KV_ARRIVE = 3,
	DMR_WRID_KV_RPC = 4,
	DMR_WRID_KV_RPCW = 5,
	DMR_WRID_KV_RPCR = 6,
	DMR_WRID_KV_RDY = 7,
	DMR_WRID_BENCH = 8,
	DMR_WRID_BACKEND = 15,
} dmr_wrid_kind_t;

#define DMR_WRID_KIND_SHIFT 60
#define DMR_WRID_INDEX_MAX ((1u << 28) - 1)
#define DMR_WRID_N_MAX ((1ull << 60) - 1)

/* kind | index (< 2^28) | seq */
static inline uint64_t dmr_wrid(dmr_wrid_kind_t kind, uint32_t index, uint32_t seq)
{
	return (uint64_t)kind << DMR_WRID_KIND_SHIFT |
	       (uint64_t)(index & DMR_WRID_INDEX_MAX) << 32 | seq;
}

/* kind | n (< 2^60) */
static inline uint64_t dmr_wrid_n(dmr_wrid_kind_t kind, uint64_t n)
{
	return (uint64_t)kind << DMR_WRID_KIND_SHIFT | (n & DMR_WRID_N_MAX);
}

static inline dmr_wrid_kind_t dmr_wrid_kind(uint64_t wr_id)
{
	return (dmr_wrid_kind_t)(wr_id >> DMR_WRID_KIND_SHIFT);
}

static inline uint32_t dmr_wrid_index(uint64_t wr_id)
{
	return (uint32_t)(wr_id >> 32) & DMR_WRID_INDEX_MAX;
}

static inline uint32_t dmr_wrid_seq(uint64_t wr_id)
{
	return (uint32_t)wr_id;
}

static inline uint64_t dmr_wrid_get_n(uint64_t wr_id)
{
	return wr_id & DMR_WRID_N_MAX;
}

#endif /* DMR_BASE_WRID_H */
