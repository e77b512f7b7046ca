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
 * word holding our tag, the lock is ours, counted in cas_replayed, and the
 * transaction goes on as if the CAS had returned 0. The same holds when the
 * CAS returned another context's tag and the READ finds ours: the execution
 * whose result came back failed, a second one (after that lock's release)
 * took it, and only we can release it. Otherwise the lock is not ours
 * whatever the CAS said: a failed lock (abort, nothing to release).
 *
 * A context is a state machine advanced by completions: dmr_txn_start()
 * posts the first doorbell, dmr_txn_on_wc() consumes a completion and posts
 * the next; neither blocks. Both return a dmr_status_t (did the call work)
 * and, on DMR_OK only, a dmr_txn_outcome_t (where the transaction is): two
 * channels, never one int. One signaled WR per doorbell (selective
 * signalling): the last WR's completion implies the others' (RC order).
 * wr_id = dmr_wrid(DMR_WRID_TXN, context id, doorbell sequence)
 * (core/base/wrid.h; numerically id << 32 | seq), also for the backoff
 * timer before a retry.
 *
 * Cluster-wide names. A process may run only some CNs of a cluster (the
 * verbs CN role), numbering its workers and contexts from 0; its engine's
 * `cn` and `first_worker` (dmr_txn_engine_init: DMR_BE_CTL_ROLE) place them
 * in the cluster, so that what two processes write to one MN never
 * collides:
 *  - lock tag of context id: ((id + 1) << 1 | 1) + (cn << DMR_TXN_TAG_CN_SHIFT),
 *    odd, never 0, unique over the cluster (id < 2^28, the wr_id index;
 *    cn < 2^22);
 *  - log ring of worker w: layout log_base + (first_worker + w) * log_bytes.
 * A single-process run has cn = first_worker = 0: tags ((id + 1) << 1 | 1)
 * and rings log_base + w * log_bytes.
 */
#ifndef DMR_TXN_H
#define DMR_TXN_H

#include <stdint.h>

#include "../backends/backend.h"
#include "../traces/trace.h"
#include "addrcache.h"
#include "base/wrid.h"
#include "layout.h"
#include "txn_cncache.h"
#include "txn_crest.h"

typedef enum dmr_abort_cause {
	DMR_ABORT_LOCK = 0,    /* lock CAS failed */
	DMR_ABORT_READ_LOCKED, /* read-only record found locked */
	DMR_ABORT_VALIDATION,  /* version changed / locked at validation */
	DMR_ABORT_DUPLICATE,   /* insert found the slot present (gives up) */
	DMR_ABORT_FULL,	       /* insert range exhausted (gives up) */
	DMR_ABORT_RPC_LOCKED,  /* by RPC: the MN's CPU found a lock held (a record
				  to write or to read: core/txn_rpc.c) */
	DMR_ABORT_CACHE_STALE, /* a read served from the CN record cache found
				  changed at validation (txn_cncache.h) */
	DMR_ABORT_NCAUSES
} dmr_abort_cause_t;

const char *dmr_abort_cause_name(int cause);

/* The phases of a committed attempt, as FORD's and CREST's benchmarks
 * break a transaction down: execution (start to the last execution round's
 * completion), validation, the log write, commit (write-back and unlock).
 * A phase a protocol does not have (no validation: nothing read-only)
 * takes 0. */
typedef enum dmr_txn_phase {
	DMR_TXN_PHASE_EXEC = 0,
	DMR_TXN_PHASE_VALIDATE,
	DMR_TXN_PHASE_LOG,
	DMR_TXN_PHASE_COMMIT,
	DMR_TXN_NPHASES
} dmr_txn_phase_t;

/* "execution", "validation", "log", "commit" ("?" if unknown). */
const char *dmr_txn_phase_name(int phase);

/* Counters of one worker (summed by the replay). */
typedef struct dmr_txn_stats {
	uint64_t tried; /* attempts started */
	uint64_t committed;
	uint64_t retries; /* attempts after the first */
	uint64_t gave_up; /* transactions abandoned (retry limit, full, dup) */
	uint64_t aborts[DMR_ABORT_NCAUSES];
	uint64_t atomics; /* CAS + FAA posted */
	uint64_t reads, writes;
	uint64_t locks_taken, locks_released;
	uint64_t skipped_ops;
	uint64_t cas_replayed; /* lock CASes that returned this context's own tag
				  for a record it had not locked, the READ behind
				  them finding the lock ours: an atomic executed
				  twice by the responder ("Lock CAS results") */
	int64_t committed_xv;
	uint64_t index_reads;		    /* MN hash-index bucket READs */
	uint64_t cache_hits, cache_misses;  /* CN address-cache lookups */
	uint64_t phase_ps[DMR_TXN_NPHASES]; /* committed attempts: time per phase, ps */
	uint64_t rpcs;			    /* attempts sent as one RPC (txn_rpc.c) */
	uint64_t rpc_fallbacks;		    /* transactions asked to go by RPC that
					       ran one-sided: records on several
					       MNs, or backups (txn_rpc.c) */
} dmr_txn_stats_t;

/* Counters kept beside dmr_txn_stats_t, per worker (the replay diffs
 * dmr_txn_stats_t word by word around every call for its per-type
 * figures: these stay out of that loop), summed by the replay at the end. */
typedef struct dmr_txn_xstats {
	uint64_t read_locked_by_table[DMR_TRACE_MAX_TABLES]; /* read_locked aborts, by
								the table of the
								record found locked */
	uint64_t lock_by_table[DMR_TRACE_MAX_TABLES];	     /* lock aborts, by the
								table of the first
								lock that failed */
	uint64_t crest_waits;	/* CREST local execution: lock requests chained
				   behind a transaction of the same CN (CREST's
				   wait_dependent_txn ticker) */
	uint64_t crest_wait_ps; /* their time waiting, ps */
	uint64_t crest_hits;	/* CREST --crest-cache: read-only ops served from
				   the CN record cache (no READ posted) */
	uint64_t crest_misses;	/* read-only ops of one record that READ it */
	/* --cn-cache (core/txn_cncache.h; occ, ford, farm, drtmh): read-only
	 * ops of one record of a table whose cache is on, served from the CN
	 * record cache (no READ posted) or not found there (READ); by the
	 * op's table too; stale: hits found changed at validation (each one
	 * abort DMR_ABORT_CACHE_STALE in dmr_txn_stats_t.aborts) by table */
	uint64_t cn_cache_hits, cn_cache_misses;
	uint64_t cn_cache_hits_by_table[DMR_TRACE_MAX_TABLES];
	uint64_t cn_cache_misses_by_table[DMR_TRACE_MAX_TABLES];
	uint64_t cn_cache_stale_by_table[DMR_TRACE_MAX_TABLES];
} dmr_txn_xstats_t;
/* MOTOR's own counters, per context and transaction type (the context's
 * mv[type]; kept out of dmr_txn_stats_t, which the engine snapshots
 * around every call into the core: occ's cost stays as it was). */
typedef struct dmr_txn_mv_stats {
	uint64_t aborts[4];	/* why DMR_ABORT_VALIDATION aborts happened (DMR_MV_*) */
	uint64_t versions_read; /* vcells selected by committed attempts */
	uint64_t old_reads;	/* of them older than the record's newest version */
} dmr_txn_mv_stats_t;

/* CREST's per-type tickers (adslabcuhk/crest benchmark/TPCC/TpccBenchmark.h
 * tpcc.TYPE.wait_dependent_txn.lat, read_from_cache.cnt,
 * read_from_remote.cnt), per context and transaction type (the context's
 * cr[type]; out of dmr_txn_stats_t as motor's): read_column_locked and
 * fail_lock are dmr_txn_stats_t's aborts[]. */
typedef struct dmr_txn_cr_stats {
	uint64_t waits;	  /* --crest-local: lock requests chained behind the CN's
			     holder (wait_dependent_txn) */
	uint64_t wait_ps; /* their time waiting, ps */
	uint64_t hits;	  /* --crest-cache: read-only ops served from the CN cache */
	uint64_t misses;  /* read-only ops of one record that READ it */
} dmr_txn_cr_stats_t;

/* Add s to d, field by field. */
static inline void dmr_txn_cr_add(dmr_txn_cr_stats_t *d, const dmr_txn_cr_stats_t *s)
{
	d->waits += s->waits;
	d->wait_ps += s->wait_ps;
	d->hits += s->hits;
	d->misses += s->misses;
}

/* Add s to d, field by field. */
static inline void dmr_txn_mv_add(dmr_txn_mv_stats_t *d, const dmr_txn_mv_stats_t *s)
{
	for (int k = 0; k < 4; k++)
		d->aborts[k] += s->aborts[k];
	d->versions_read += s->versions_read;
	d->old_reads += s->old_reads;
}

/* MOTOR abort reasons (dmr_txn_mv_stats_t.aborts), as Motor's event
 * counters name them (RegEvent in txn/process/): NEWER: a version newer
 * than the start timestamp on a record a writer reads (SR: any record of
 * a read-write transaction, Motor's FindReadPos EarlyAbort; SI: a record
 * it writes, first committer wins); NOVIS: no version visible at the start
 * timestamp (NoReadPos); NOSLOT: no vcell to write (none invalid, the
 * oldest newer than the start timestamp: FindWritePos NoWritePos);
 * CHANGED: SR validation
 * found a read-only record locked or its visible version changed at the
 * commit timestamp (CheckValidate), or a vcell read while being written
 * (VcellIsWritten: anchors differ). */
enum { DMR_MV_NEWER = 0, DMR_MV_NOVIS, DMR_MV_NOSLOT, DMR_MV_CHANGED };

/* The transaction protocols (--protocol; docs/PROTOCOLS.md).
 *  OCC: the protocol above (this file's head). With replication the
 *       write-backs go to the primary and every backup; the log record to
 *       the primary of the first written record's table and its backups;
 *       when the commit touches one MN it is one doorbell (RC order keeps
 *       log < write-back < unlock), else the unlocks follow once every
 *       write-back has completed (two rounds: no order holds across QPs).
 *  FORD: minghust/ford with its defaults (core/flags.h READ_LOCK 1,
 *       COMMIT_TOGETHER 1, RFLUSH 2): execution as OCC (DTX::ExeRW,
 *       IssueReadRO, IssueReadLock) except that a read-only record found
 *       locked is read unless its lock word has DMR_LOCK_INVISIBLE
 *       (CheckReadRO) and validation compares versions only
 *       (CheckValidate); the undo log (old images of the locked
 *       records, DTX::ParallelUndoLog) WRITten to every MN after execution,
 *       together with validation (DTX::Validate, IssueRemoteValidate:
 *       re-READ of the read-only headers); commit (CoalescentCommit,
 *       IssueCommitAllSelectFlush): per written record on its primary a
 *       WRITE of the lock word "locked | invisible" and a WRITE of the data,
 *       on each backup "invisible" and the data, then one 1-byte READ per
 *       backup behind the last record (selective flush); once those
 *       completed, the release (CheckCommitAll): lock word 0 on the primary
 *       and every backup.
 *  FARM, DRTMH: FORD's baselines (its txn_system 0 and 1: DTX::TxExe runs
 *       CompareExeRO/RW, DTX::TxCommit the Compare* steps; core/txn_farm.c
 *       names each): execution READs read-only and read-write records
 *       alike, without a lock (CompareIssueReadRO/RW); then FARM locks the
 *       read-write records with CAS (CompareLocking) and re-READs the
 *       versions of every record read (CompareValidation), two rounds;
 *       DRTMH does both in one round (CompareLockingValidation: CAS +
 *       version READ per read-write record in one doorbell); both then
 *       WRITE a redo log record per written record to each of its backups
 *       with a 1-byte flush READ per backup after the last
 *       (CompareCommitBackup, RFLUSH 2), WRITE data and unlock on the
 *       primary (CompareCommitPrimary), and WRITE the data in place on the
 *       backups (CompareTruncateAsync).
 *  CREST: adslabcuhk/crest's cell-level locks (core/txn_crest.h for the
 *       cells and the lock word, core/txn_crest.c): execution as OCC with
 *       a masked CAS on the lock bits of the cells an op writes (or, with
 *       --crest-locks words, a CAS per cell lock word), a read-only
 *       record aborting only when a cell it reads is locked; validation
 *       compares the cells' versions; the commit writes back only the
 *       written cells and the unlock bumps their versions; localized
 *       execution (--crest-local) chains the CN's conflicting
 *       transactions before their CASes.
 * All retry and abort the same way (locks released on the primary). */
typedef enum dmr_txn_protocol {
	DMR_TXN_PROTO_OCC = 0,
	DMR_TXN_PROTO_FORD = 1,
	DMR_TXN_PROTO_FARM = 2,
	DMR_TXN_PROTO_DRTMH = 3,
	DMR_TXN_PROTO_CREST = 4, /* core/txn_crest.c, docs/PROTOCOLS.md "crest" */
	DMR_TXN_PROTO_MOTOR = 5,
	DMR_TXN_NPROTOS
} dmr_txn_protocol_t;

/* MOTOR (minghust/motor, OSDI'24; core/txn_motor.c, docs/PROTOCOLS.md
 * "motor"): multi-version records (consecutive version tuples,
 * core/layout.h), a start and a commit timestamp per transaction from the
 * process's counter (Motor's tx_id_generator); reads pick the newest
 * version at or before the start timestamp, writers lock the record,
 * install a new version in a free or the oldest vcell on the primary and
 * every backup, and unlock; --isolation si|sr (dmr_txn_isolation_t). */

/* "occ", "ford", "farm", "drtmh", "crest", "motor" ("?" if unknown). */
const char *dmr_txn_protocol_name(int protocol);
/* The protocol named s into *p; DMR_ERR_PARSE (err naming --protocol and
 * the names known) otherwise. */
dmr_status_t dmr_txn_protocol_parse(const char *s, int *p, dmr_err_t *err);

/* Isolation levels (--isolation; MOTOR only, the others are
 * serializable). Motor's config/cn_config.json "iso_level": 1 snapshot
 * isolation, 2 serializability (its default). */
typedef enum dmr_txn_isolation {
	DMR_TXN_ISO_SR = 0,
	DMR_TXN_ISO_SI = 1,
} dmr_txn_isolation_t;

/* The level named s ("si", "sr") into *iso for `protocol`: DMR_ERR_PARSE
 * (err naming --isolation and the values allowed) for another name, or si
 * with a protocol other than motor. */
dmr_status_t dmr_txn_isolation_parse(const char *s, int protocol, int *iso, dmr_err_t *err);

/* FORD's lock word states (minghust/ford core/base/common.h): bit 63
 * "invisible" (data being written); a locked record holds our tag. */
#define DMR_LOCK_INVISIBLE (1ull << 63)

/* How a record is found (--index). DIRECT: its address is computed from
 * table and slot (core/layout.h), no verb. HASH: through the MN hash index
 * (layout.h "The MN hash index"): the first access of an execution round
 * to a record whose address the CN's cache (core/addrcache.h) does not
 * hold READs its bucket from the table's primary first (one doorbell per
 * MN before the round's own, index_reads and cache_misses counted), finds
 * the key's slot and takes the address from it (checked against the
 * layout: DMR_ERR_INVALID naming table and key if they differ), and puts
 * it in the cache; a hit (cache_hits) goes straight to the record.
 * Validation and commit use the addresses found. */
typedef enum dmr_txn_index {
	DMR_TXN_INDEX_DIRECT = 0,
	DMR_TXN_INDEX_HASH = 1,
} dmr_txn_index_t;

/* Shared by all contexts of a run. */
typedef struct dmr_txn_engine {
	dmr_be_t *be;
	const dmr_layout_t *layout;
	uint32_t retries;	       /* retry limit per transaction */
	uint64_t backoff_ps;	       /* wait before a retry (0: none) */
	uint32_t cn;		       /* cluster index of this process's first CN (lock tags) */
	uint32_t first_worker;	       /* cluster index of this process's worker 0 (log rings) */
	const char *source;	       /* the trace file, named in trace errors as
					  FILE:LINE (NULL: "trace"); set by the caller
					  after dmr_txn_engine_init */
	int protocol;		       /* dmr_txn_protocol_t; OCC after init, set by
					  the caller before the first context */
	int index;		       /* dmr_txn_index_t; DIRECT after init (HASH needs
					  dmr_layout_index on the layout) */
	dmr_acache_t **acache;	       /* HASH: per CN of this process its address cache
					  (NULL, or a NULL entry: no cache) */
	uint32_t workers_per_cn;       /* worker w is on CN w / workers_per_cn */
	const struct dmr_crest *crest; /* CREST: cells and lock variant (txn_crest.h);
					  set by the caller with protocol */
	int isolation;		       /* MOTOR: dmr_txn_isolation_t (SR after init) */
	uint64_t ts_clock;	       /* MOTOR: the timestamp counter of this process
					  (Motor's tx_id_generator, 1 after init),
					  advanced atomically by the contexts */
	struct dmr_doorbell *doorbell; /* Loop C (core/loop_doorbell.h): posts are
					  staged and rung by it; NULL after init:
					  every post rings its own doorbell */
	int rpc;		       /* dmr_txn_rpc_t every context starts with
					  (its c->rpc, set by dmr_txn_ctx_init);
					  DMR_TXN_RPC_OFF after init */
	dmr_cncache_t **cncache;       /* --cn-cache (core/txn_cncache.h): per CN of
					  this process its record cache (NULL: none;
					  occ, ford, farm, drtmh only), owned by the
					  caller */
	uint32_t cn_cache_tables;      /* bit t: read-only ops of table t are served
					  from the CN record caches (0 after init);
					  may change while contexts run: store it
					  with dmr_txn_cncache_set_tables, each
					  transaction reads it once at dmr_txn_start */
} dmr_txn_engine_t;

/* The access path of a transaction (issue 14 lever A1; core/txn_rpc.c,
 * docs/AURA.md "A1"): the context's c->rpc, read by dmr_txn_start.
 *  OFF: one-sided (the protocol above).
 *  ON:  the whole transaction as one RPC to the MN holding its records,
 *       executed there by the MN's CPU (dmr_be_rpc, backends/backend.h):
 *       the write set's lock words taken with CAS (0 -> the context's tag),
 *       the read set's records read and found unlocked, dependent keys and
 *       guards resolved as execution does, the read set validated again
 *       (unlocked, same versions), the new images written with version + 1
 *       (FORD: under "locked | invisible"), the redo log record to the
 *       worker's ring, the locks released; on a lock held the locks taken
 *       are released and the answer is "locked": an abort of cause
 *       DMR_ABORT_RPC_LOCKED, retried as any abort. Each attempt is one
 *       RPC (stats rpcs). occ and ford only (dmr_txn_start refuses the
 *       others with DMR_ERR_INVALID naming the protocol). A transaction
 *       whose tables have their primaries on several MNs, or any run with
 *       backups, runs one-sided instead (stats rpc_fallbacks).
 *  ALT: ON for transactions of odd trace id, OFF for even ones (a fixed mix
 *       of both paths: tests, --rpc half). */
typedef enum dmr_txn_rpc {
	DMR_TXN_RPC_OFF = 0,
	DMR_TXN_RPC_ON = 1,
	DMR_TXN_RPC_ALT = 2,
} dmr_txn_rpc_t;

/* The MN a transaction goes to by RPC: the primary MN of every table t
 * names, or -1 when they are on several MNs or l has backups (then it runs
 * one-sided, counted in rpc_fallbacks). */
int dmr_txn_rpc_mn(const dmr_layout_t *l, const dmr_trace_txn_t *t);
/* "none", "all", "half" for OFF, ON, ALT ("?" if unknown). */
const char *dmr_txn_rpc_name(int rpc);
/* --rpc's value s into *rpc for `protocol`: DMR_ERR_PARSE (err naming
 * --rpc and the values known) for another name; DMR_ERR_INVALID (err naming
 * the protocol) for all or half with a protocol other than occ and ford. */
dmr_status_t dmr_txn_rpc_parse(const char *s, int protocol, int *rpc, dmr_err_t *err);

/* Fill *eng for a run on `be` with `layout` (borrowed for the run); cn and
 * first_worker come from dmr_be_control(DMR_BE_CTL_ROLE), 0 when the
 * backend does not answer it. Errors: the backend's control error other
 * than DMR_ERR_UNSUPPORTED; DMR_ERR_RANGE (a CN index of 2^22 or more). */
dmr_status_t dmr_txn_engine_init(dmr_txn_engine_t *eng, dmr_be_t *be, const dmr_layout_t *layout,
				 uint32_t retries, uint64_t backoff_ps, dmr_err_t *err);

#define DMR_TXN_TAG_CN_SHIFT 41 /* lock tag bits 41..62: the CN index */

/* Where a context's transaction is, after dmr_txn_start / dmr_txn_on_wc
 * returned DMR_OK. */
typedef enum dmr_txn_outcome {
	DMR_TXN_RUNNING = 0,   /* waiting for a completion of this context */
	DMR_TXN_COMMITTED = 1, /* finished: its writes are applied, locks released */
	DMR_TXN_GAVE_UP = 2,   /* finished without committing (retry limit, table
				  full, duplicate insert); locks released */
} dmr_txn_outcome_t;

typedef struct dmr_txn_opst {
	uint64_t rec; /* resolved record offset */
	uint32_t buf; /* offset of this op's image in ctx->buf */
	uint8_t flags;
	uint8_t lookup; /* HASH: 1 while its bucket READ is in flight */
	uint8_t cells;	/* CREST: bits 0..3 the cells locked (U/I/D) or read (R),
			   bits 4..7 those written (txn_crest.h) */
	uint8_t local;	/* CREST --crest-local: the cells taken on its CN */
} dmr_txn_opst_t;

typedef struct dmr_txn_ctx {
	const dmr_txn_engine_t *eng;
	dmr_txn_stats_t *stats;
	dmr_txn_xstats_t *xstats; /* this worker's (NULL: not counted); set by the
				     caller after dmr_txn_ctx_init */
	uint32_t id, worker;
	uint64_t tag; /* lock tag (CAS swap value), cluster-wide */
	const dmr_trace_txn_t *txn;
	uint8_t state;
	uint32_t round;	   /* the execution round; one past the last when the
			      last is done, which is 65536 after a round 65535
			      (traces/FORMAT.md): 16 bits wrapped to 0 and the
			      transaction ran round 0 again, forever */
	uint32_t round_op; /* first op of `round` (the trace's rounds do not
			      decrease: a round's ops are contiguous), or an
			      earlier op until exec_round finds it */
	uint32_t seq;	   /* doorbell sequence */
	uint32_t attempts;
	uint64_t t_start; /* first attempt start, ps */
	uint64_t log_off; /* next write position in the log ring */
	int last_cause;
	uint64_t lockfail_rec; /* record offset of the last failed lock CAS
				  (+1; 0 = none): the contention signal of the
				  per-key loop; cleared by whoever reads it */
	uint8_t *buf;	       /* images: per op, count * rec_bytes (+8 CAS old) */
	uint32_t buf_cap;
	dmr_wr_t *wrs; /* doorbell under construction */
	uint32_t wrs_cap;
	uint8_t *wr_mn;		      /* per WR of wrs: the MN it goes to */
	dmr_wr_t *wrs2;		      /* one MN's doorbell, gathered from wrs */
	uint32_t pending;	      /* doorbells of this round not yet completed */
	uint32_t lookup_off;	      /* HASH: bucket images at buf + lookup_off + i x bucket */
	uint32_t looked_round;	      /* HASH: round + 1 whose lookups are done */
	uint64_t t_wait;	      /* CREST --crest-local: waiting since, ps (0: not) */
	uint32_t crest_hits;	      /* CREST --crest-cache, or --cn-cache: this
					 attempt's cache hits */
	uint64_t start_ts, commit_ts; /* MOTOR: this attempt's timestamps */
	uint32_t mv_reads;	      /* MOTOR: vcells selected this attempt */
	uint32_t mv_old;	      /* MOTOR: of them older than the newest */
	uint64_t t_phase;	      /* when the current phase began, ps */
	uint64_t ph[DMR_TXN_NPHASES]; /* this attempt's time per phase, ps */
	dmr_txn_opst_t ops[DMR_TRACE_MAX_OPS];
	dmr_txn_mv_stats_t *mv; /* MOTOR: DMR_TRACE_MAX_TYPES entries, per
				   transaction type (allocated by ctx_init when
				   eng->protocol is MOTOR, else NULL) */
	dmr_txn_cr_stats_t *cr; /* CREST: likewise, when eng->protocol is CREST */
	uint8_t *logbuf;
	uint32_t logbuf_cap;
	uint8_t buf_reg, logbuf_reg; /* registered with the backend (mr_reg) */
	uint8_t rpc;		     /* dmr_txn_rpc_t: the access path of the next
					transactions (set before dmr_txn_start;
					eng->rpc after init) */
	uint8_t by_rpc;		     /* the running transaction goes by RPC */
	/* --cn-cache (txn_cncache.h): the engine's table mask when the
	 * transaction started, and bit i = op i of this attempt was a hit
	 * (valid while crest_hits > 0) */
	uint32_t cnc_tables;
	uint64_t cnc_hit[DMR_TRACE_MAX_OPS / 64];
	dmr_err_t err; /* why start/on_wc returned an error */
} dmr_txn_ctx_t;

/* Initialise a context (allocates its buffers and registers them with the
 * backend for `worker`). DMR_ERR_NOMEM, DMR_ERR_RANGE (id > 2^28 - 1, the
 * wr_id index), or the backend's mr_reg error; call dmr_txn_ctx_fini after
 * a failure too. */
dmr_status_t dmr_txn_ctx_init(dmr_txn_ctx_t *c, const dmr_txn_engine_t *eng, dmr_txn_stats_t *stats,
			      uint32_t worker, uint32_t id, dmr_err_t *err);
/* Deregister (mr_dereg) and free what init and the context registered and
 * allocated. No WR of the context may be in flight. */
void dmr_txn_ctx_fini(dmr_txn_ctx_t *c);

/* Begin `txn` (borrowed until the context reports it finished). DMR_OK with
 * *out_p = DMR_TXN_RUNNING, or DMR_TXN_COMMITTED/GAVE_UP when it finished
 * without a verb (e.g. every op skipped). Errors (*out_p untouched, c->err
 * says why): the backend's post error, DMR_ERR_NOMEM, DMR_ERR_INVALID (a
 * trace error: a record locked twice). */
dmr_status_t dmr_txn_start(dmr_txn_ctx_t *c, const dmr_trace_txn_t *txn, dmr_txn_outcome_t *out_p);

/* Consume a completion addressed to this context (wr_id of kind
 * DMR_WRID_TXN with this context's id). Returns as dmr_txn_start. A
 * completion with an error status returns DMR_ERR_REMOTE with c->err naming
 * the operation, trace line, worker and status; one with another kind or
 * context id, DMR_ERR_INVALID. */
dmr_status_t dmr_txn_on_wc(dmr_txn_ctx_t *c, const dmr_wc_t *wc, dmr_txn_outcome_t *out_p);

/* Latency of the finished transaction: first start to finish, ps. */
uint64_t dmr_txn_latency_ps(const dmr_txn_ctx_t *c);

#endif
