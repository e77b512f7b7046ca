/*
 * replay/txnq.h - a worker's queue of read-ahead transactions, packed.
 *
 * Transaction i of a trace goes to worker i mod W (replay.h), so a worker
 * whose queue is empty reads ahead into the other workers' queues. How far
 * they fall behind is a random walk of their progress: measured on SmallBank
 * (4 CNs x 28 threads x 3 contexts, W = 112), at most 19,758 transactions
 * were queued at once over 1 M transactions and 57,291 over 10 M
 * (docs/PERFORMANCE.md, "Read-ahead"). As malloc'd dmr_trace_txn_t copies
 * (160 B per op) that was 13.5 MiB of the 10 M run's max RSS. Here a
 * transaction queued past the engine's bounds (below) is packed into bytes
 * instead: every field of the transaction
 * and of its ops as an LEB128 varint (signed ones zigzag-coded), so a field
 * at 0 takes one byte; a SmallBank transaction takes about 50 B instead of
 * about 380 B. The bytes go into 4 KiB chunks shared by all queues through
 * a free list (no malloc per transaction once the queues are warm). A
 * record is its length and then its fields, so that one lying in a single
 * chunk (most) is decoded in place, without a check per byte.
 *
 * Packing costs CPU (callgrind, per TPC-C extreme transaction packed and
 * unpacked: about 12,600 instructions; 32,000 when every varint was written
 * and read byte by byte across chunks): the engine packs only what it reads
 * ahead past DMR_READAHEAD_COPY_TXNS copies or DMR_READAHEAD_COPY_MAX bytes
 * of them (engine.h), so a run whose queues stay short never packs.
 *
 * What dmr_txnq_pop returns equals, field by field, what dmr_txnq_push was
 * given (tests/unit/test_txnq.c), except acts[] beyond nacts, which it does
 * not write (every reader stops at nacts): a TPC-C read op is then its
 * first 64 bytes, not all 160 (docs/PERFORMANCE.md, session 17).
 * Not thread-safe: the replay engine calls it under its lock.
 */
#ifndef DMR_REPLAY_TXNQ_H
#define DMR_REPLAY_TXNQ_H

#include <stdint.h>

#include "../traces/trace.h"

typedef struct dmr_txnq_chunk dmr_txnq_chunk_t;

/* Chunks no queue uses, shared by the queues of one engine. Zero it to
 * start; dmr_txnq_pool_fini frees it. */
typedef struct dmr_txnq_pool {
	dmr_txnq_chunk_t *free;
	uint64_t chunks;    /* allocated so far (held by queues or free) */
	unsigned char *buf; /* one record being packed or gathered (txnq.c) */
} dmr_txnq_pool_t;

/* One FIFO. Zero it to start (empty); dmr_txnq_fini returns its chunks. */
typedef struct dmr_txnq {
	dmr_txnq_chunk_t *head, *tail;
	uint32_t rd; /* read offset in head */
	uint64_t n;  /* transactions queued */
} dmr_txnq_t;

/* Append t (its nops ops, each with its nacts actions) and tag (the
 * caller's word kept with it; the engine's aura group and drift flag) to
 * q. 0, or -1 when a chunk or the pool's record buffer (TXNQ_REC_MAX,
 * ~88 KiB, allocated by the first push) cannot be allocated (q unchanged). */
int dmr_txnq_push(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const dmr_trace_txn_t *t, uint64_t tag);

/* Append a transaction as the trace cache's record: len bytes at rec, as
 * dmr_trace_next_rec returned them (nops ops, trace id id), and tag; kept
 * as they are (about 32 B per TPC-C op: a fifth of a decoded op, and no
 * encoding), decoded by dmr_txnq_pop (dmr_trace_rec_decode). The replay
 * engine queues every transaction so when it reads a binary cache (engine.h
 * "Read-ahead"). 0, or -1 out of memory or len over ~88 KiB (q unchanged). */
int dmr_txnq_push_rec(dmr_txnq_t *q, dmr_txnq_pool_t *pool, const void *rec, size_t len,
		      uint32_t nops, uint64_t id, uint64_t tag);
/* Number of ops (*nops_p) and trace id (*id_p) of the transaction at q's
 * head (q not empty): to size the dmr_trace_txn_t that dmr_txnq_pop fills,
 * and to order it against another queue's head. */
void dmr_txnq_head(const dmr_txnq_t *q, uint32_t *nops_p, uint64_t *id_p);

/* Remove the transaction at q's head into *t, whose ops[] must hold its
 * nops (dmr_txnq_head), and its tag into *tag_p. 1, 0 when q is empty
 * (*t untouched), or -1 when a record pushed by dmr_txnq_push_rec does not
 * decode (bytes that were not dmr_trace_next_rec's; removed all the same).
 * Chunks emptied go back to pool. */
int dmr_txnq_pop(dmr_txnq_t *q, dmr_txnq_pool_t *pool, dmr_trace_txn_t *t, uint64_t *tag_p);

/* Drop what q holds (its chunks back to pool); q is empty after. */
void dmr_txnq_fini(dmr_txnq_t *q, dmr_txnq_pool_t *pool);

/* Free the pool's chunks (every queue finished first). */
void dmr_txnq_pool_fini(dmr_txnq_pool_t *pool);

#endif
