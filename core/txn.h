/*
 * core/txn.h - the OCC transaction core over one-sided verbs.
 *
 * Protocol (ARCHITECTURE.md "The transaction core"; as in FORD, Zhang et
 * al., FAST'22, and Motor, Zhang et al., OSDI'24):
 *  1. execution, round by round, one doorbell per round: read-only records
 *     are READ; records to update, insert or delete are locked with CAS on
 *     their lock word (0 -> context tag) and READ in the same doorbell. A
 *     failed CAS or a READ that finds the record locked aborts (no wait, so
 *     no deadlock). Keys that depend on bytes read in an earlier round are
 *     resolved here.
 *  2. validation: the headers of read-only records are READ again; a
 *     changed version or a held lock aborts.
 *  3. commit, one doorbell: the log record is WRITten to the worker's log
 *     ring, each written record gets its new payload with version + 1
 *     (WRITE from the version word on), then its lock word is cleared
 *     (WRITE 0). RC ordering on the QP keeps log < write-back < unlock.
 *  4. abort: the locks taken are cleared (WRITE 0), the attempt is counted
 *     with its cause, and the transaction is retried up to `retries` times
 *     (then it gives up). Inserts that find their range exhausted
 *     ("table full") and inserts that find the slot present give up at once.
 *
 * Lock CAS results. A transaction that names the same record twice among
 * its U/I/D ops is refused before its CAS is posted (a trace error). So a
 * lock CAS that returns this context's own tag cannot be a lock of this
 * transaction: it is the CAS itself, executed a second time by the
 * responder (a retransmitted atomic re-executed instead of answered from
 * its saved result; SoftRoCE does this, docs/SOFTROCE-VM.md "Replayed
 * atomics"). The first execution took the lock for us: when the READ that
 * follows the CAS in the same doorbell (so executes after it) finds the lock
 * word holding our tag (as the backend writes it: dmr_be_lock_word), the
 * lock is ours, counted in cas_replayed, and the transaction goes on as if
 * the CAS had returned 0. Otherwise the lock is not ours whatever the CAS
 * said: a failed lock (abort, nothing to release).
 *
 * A context is a state machine advanced by completions: dmr_txn_start()
 * posts the first doorbell, dmr_txn_on_wc() consumes a completion and posts
 * the next; neither blocks. One signaled WR per doorbell (selective
 * signalling): the last WR's completion implies the others' (RC order).
 * wr_id = context id << 32 | doorbell sequence.
 */
#ifndef DMR_TXN_H
#define DMR_TXN_H

#include <stdint.h>

#include "../backends/backend.h"
#include "../traces/trace.h"
#include "layout.h"

typedef enum dmr_abort_cause {
	DMR_ABORT_LOCK = 0,       /* lock CAS failed */
	DMR_ABORT_READ_LOCKED,    /* read-only record found locked */
	DMR_ABORT_VALIDATION,     /* version changed / locked at validation */
	DMR_ABORT_DUPLICATE,      /* insert found the slot present (gives up) */
	DMR_ABORT_FULL,           /* insert range exhausted (gives up) */
	DMR_ABORT_NCAUSES
} dmr_abort_cause_t;

const char *dmr_abort_cause_name(int cause);

/* Counters of one worker (summed by the replay). */
typedef struct dmr_txn_stats {
	uint64_t tried;      /* attempts started */
	uint64_t committed;
	uint64_t retries;    /* attempts after the first */
	uint64_t gave_up;    /* transactions abandoned (retry limit, full, dup) */
	uint64_t aborts[DMR_ABORT_NCAUSES];
	uint64_t atomics;    /* CAS + FAA posted */
	uint64_t reads, writes;
	uint64_t locks_taken, locks_released;
	uint64_t skipped_ops;
	uint64_t cas_replayed; /* lock CASes that returned this context's own tag
	                          for a record it had not locked, the READ behind
	                          them finding the lock ours: an atomic executed
	                          twice by the responder ("Lock CAS results") */
	int64_t committed_xv;
} dmr_txn_stats_t;

/* Shared by all contexts of a run. */
typedef struct dmr_txn_engine {
	dmr_be_t *be;
	const dmr_layout_t *layout;
	uint32_t retries;     /* retry limit per transaction */
	uint64_t backoff_ps;  /* wait before a retry (0: none) */
	uint32_t cn_of_worker_div; /* workers per CN, for the lock tag */
} dmr_txn_engine_t;

enum { DMR_TXN_RUNNING = 0, DMR_TXN_COMMITTED = 1, DMR_TXN_GAVE_UP = 2 };

typedef struct dmr_txn_opst {
	uint64_t rec;     /* resolved record offset */
	uint32_t buf;     /* offset of this op's image in ctx->buf */
	uint8_t flags;
} dmr_txn_opst_t;

typedef struct dmr_txn_ctx {
	const dmr_txn_engine_t *eng;
	dmr_txn_stats_t *stats;
	uint32_t id, worker;
	uint64_t tag;           /* lock tag (CAS swap value) */
	uint64_t tag_mem;       /* the lock word in MN memory when we hold it
	                           (dmr_be_lock_word: verbs adds the CN index) */
	const dmr_trace_txn_t *txn;
	uint8_t state;
	uint16_t round;
	uint32_t seq;           /* doorbell sequence */
	uint32_t attempts;
	uint64_t t_start;       /* first attempt start, ps */
	uint64_t log_off;       /* next write position in the log ring */
	int last_cause;
	uint64_t lockfail_rec;  /* record offset of the last failed lock CAS
	                           (+1; 0 = none): the contention signal of the
	                           per-key loop; cleared by whoever reads it */
	uint8_t *buf;           /* images: per op, count * rec_bytes (+8 CAS old) */
	uint32_t buf_cap;
	dmr_wr_t *wrs;          /* doorbell under construction */
	uint32_t wrs_cap;
	dmr_txn_opst_t ops[DMR_TRACE_MAX_OPS];
	uint8_t *logbuf;
	uint32_t logbuf_cap;
	dmr_err_t err;          /* why on_wc returned an error */
} dmr_txn_ctx_t;

/* Initialise a context (allocates its buffers and registers them with the
 * backend for `worker`). DMR_ERR_NOMEM, or the backend's mr_reg error. */
dmr_status_t dmr_txn_ctx_init(dmr_txn_ctx_t *c, const dmr_txn_engine_t *eng,
			      dmr_txn_stats_t *stats, uint32_t worker, uint32_t id, dmr_err_t *err);
void dmr_txn_ctx_fini(dmr_txn_ctx_t *c);

/* Begin `txn` (borrowed until the context reports it finished). Returns
 * DMR_TXN_RUNNING, or DMR_TXN_COMMITTED/GAVE_UP when it finished without
 * a verb (e.g. every op skipped), or a negative dmr_status_t (post failed;
 * c->err says why). */
int dmr_txn_start(dmr_txn_ctx_t *c, const dmr_trace_txn_t *txn);

/* Consume a completion addressed to this context. Returns as
 * dmr_txn_start. A completion with an error status returns DMR_ERR_REMOTE
 * with c->err naming the operation, trace line, worker and status. */
int dmr_txn_on_wc(dmr_txn_ctx_t *c, const dmr_wc_t *wc);

/* Latency of the finished transaction: first start to finish, ps. */
uint64_t dmr_txn_latency_ps(const dmr_txn_ctx_t *c);

#endif
