/*
 * replay/engine.h - the replay engine's state, shared by replay.c (the
 * contexts, completions, drivers and results) and dispatch.c (reading the
 * trace into the workers' queues, aura's routing, drift). Internal to
 * replay/: not an interface.
 */
#ifndef DMR_REPLAY_ENGINE_H
#define DMR_REPLAY_ENGINE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/aura.h"
#include "../core/base/progress.h"
#include "../core/loop_doorbell.h"
#include "../core/loop.h"
#include "../core/txn.h"
#include "../models/model.h"
#include "../traces/workload.h"
#include "breakdown.h"
#include "lathist.h"
#include "results.h"
#include "txnq.h"

struct dmr_replay_opts; /* replay.h (not included: replay.c includes this file) */

/* A transaction copied out of the reader: only nops ops are stored. */
typedef struct qtxn {
	struct qtxn *next;
	uint64_t dispatch_ps; /* when a context took it (before admission), run time */
	uint32_t group;	      /* aura: its record group (core/aura.h) */
	uint8_t remapped;     /* drift already applied (aura routes after it) */
	dmr_trace_txn_t t;    /* ops[] truncated to nops */
} qtxn_t;

/* How many read-ahead copies (qtxn_t, in all the workers' queues and
 * aura's inboxes together) may be queued: past DMR_READAHEAD_COPY_TXNS
 * copies or DMR_READAHEAD_COPY_MAX bytes of them, a transaction read ahead
 * is packed (txnq.h) instead of copied. dmr_replay_opts_t's
 * readahead_copy_txns / readahead_copy_max override them (tests).
 *
 * The queues grow with the trace's length because the workers drift apart
 * as a random walk (transaction i goes to worker i mod W). Measured at
 * 4 x 28 x 3 (W = 112), most copies queued at once: SmallBank 19,758
 * (6.6 MiB) over 1 M transactions, 57,291 (~20 MiB) over 10 M; TPC-C
 * extreme 1,402 (5.5 MiB) over 5,000, 4,936 (19 MiB) over 50 k, 10,597
 * (42 MiB) over 200 k. Packing costs CPU (callgrind: +63 M instructions,
 * +8.4 %, on the 5,000-transaction TPC-C run when every queued
 * transaction is packed), so it is kept for the memory that grows:
 * - 16,384 transactions: issue #13 item 3 wants SmallBank's max RSS at
 *   10 M transactions within 10 % of that at 1 M; as copies are ~350 B and
 *   packed ones ~50 B, any bound up to ~24,000 meets it, and the largest
 *   round one below packs least;
 * - 64 MiB: the memory of the copies stops growing there (TPC-C's are
 *   ~4 KiB each), yet the project's benchmark runs, TPC-C up to 200 k
 *   transactions (scripts/bench-sim), pack nothing.
 * docs/PERFORMANCE.md "Read-ahead" has the figures.
 *
 * Records: when the trace is read through its binary cache (the default)
 * on the sim, without aura's inboxes, neither copies nor packed ones are
 * made: each transaction read ahead is queued as the cache's record of it,
 * ~32 B per TPC-C op against 160 B decoded (dmr_trace_next_rec,
 * dmr_txnq_push_rec), and decoded when a context takes it, into a copy
 * recycled through qfree (most recently freed first, so in cache). At 16
 * CNs x 28 x 3 on TPC-C extreme 200 k the copies had passed the bounds
 * (the rest packed, then unpacked into fresh copies); docs/PERFORMANCE.md
 * "Session 12" has the figures. */
#define DMR_READAHEAD_COPY_MAX (64ull << 20)
#define DMR_READAHEAD_COPY_TXNS 16384

/* A worker's (or an inbox's) FIFO: copies first, then packed ones (once
 * one is packed the later ones are too, until the packed part drains, so
 * trace order holds). */
typedef struct wqueue {
	qtxn_t *head, *tail; /* copies, oldest first */
	dmr_txnq_t pk;	     /* packed, younger than every copy */
	uint64_t n;	     /* both */
} wqueue_t;

typedef struct engine {
	const struct dmr_replay_opts *o;
	/* the loops as run: o->loop with aura's record groups resolved and a
	 * lever the backend refused at set-up left out (the results report
	 * these) */
	dmr_loop_cfg_t loop;
	dmr_trace_reader_t *rd;
	dmr_trace_txn_t *scratch;
	uint64_t next_index; /* trace transactions read so far */
	uint64_t limit;	     /* max transactions to dispatch */
	int eof;
	uint32_t nworkers, coros;
	wqueue_t *q;
	dmr_txnq_pool_t qpool; /* the packed queues' chunks */
	uint64_t qcopy_bytes;  /* bytes of copies in q and inbox */
	uint64_t qcopy_max;    /* DMR_READAHEAD_COPY_MAX or the option */
	uint64_t qcopy_n;      /* copies in q and inbox */
	/* copies given back, by nops, for the next copy of as many ops (sim
	 * only: one thread; threaded backends malloc and free each): a
	 * malloc and a free per transaction were 4 % of a TPC-C run's CPU
	 * (perf, docs/PERFORMANCE.md "MN memory"); by exact size, so that
	 * the copies take the bytes the read-ahead bound counts (size
	 * classes of 8 ops took SmallBank's max RSS from 49 to 65 MB) */
	qtxn_t *qfree[DMR_TRACE_MAX_OPS + 1];
	uint64_t qcopy_max_txns; /* DMR_READAHEAD_COPY_TXNS or the option */
	uint64_t qpacked;	 /* transactions packed so far */
	/* 1: every transaction read ahead is queued as its record in the
	 * binary trace cache (dmr_trace_next_rec, dmr_txnq_push_rec) and
	 * decoded when a context takes it, into a copy recycled by qfree: no
	 * decoded copy per queued transaction, nor a copy of it. Set when the
	 * trace is read through its cache, the backend is the driven sim (one
	 * thread) and aura routes nothing to inboxes (its routing needs the
	 * decoded transaction as it is read); see "Read-ahead" above. */
	int qrec;
	uint64_t qrecs; /* transactions so queued */
	dmr_txn_ctx_t *ctx;
	qtxn_t **cur;	/* per context: the transaction it runs */
	uint8_t *ctype; /* per context: its type index (type_of; 0 with none), kept
			   here so that a completion does not read the cold
			   queued copy for it */
	uint32_t nctx;
	dmr_be_t *be;
	const dmr_model_t *model; /* DMR_BE_CTL_MODEL; NULL: the backend has none */
	dmr_txn_engine_t teng;
	dmr_layout_t layout;
	dmr_crest_t crest;     /* --protocol crest: its cells (core/txn_crest.h) */
	dmr_txn_stats_t *wst;  /* per worker (written by its own thread only) */
	dmr_txn_xstats_t *xst; /* per worker, likewise (core/txn.h) */
	dmr_txn_stats_t *pub;  /* threaded: per worker, the copy the sampler reads
				  (relaxed atomic words: publish_stats) */
	dmr_adm_t *adm;	       /* admission loops, NULL = none */
	dmr_aura_t *aura;      /* aura: adm's controller, NULL = none (core/aura.h) */
	wqueue_t *inbox;       /* aura: per CN, transactions routed to it */
	uint32_t *inbox_len;   /* aura: per CN, transactions in its inbox */
	uint32_t *parked;      /* aura A2 without A4: contexts waiting for room
				  in an owner's inbox (backpressure) */
	uint8_t *is_parked;    /* per context */
	uint32_t nparked;
	uint32_t *unparked; /* contexts an inbox pop freed, to wake (nunparked) */
	uint32_t nunparked;
	int bp;		       /* read_one_locked filled an inbox to its bound (no A4) */
	dmr_acache_t **acache; /* --addr-cache: per CN, NULL = none */
	uint64_t drift_ps;     /* > 0: hot set moves every drift_ps */
	uint32_t drift_shift, parts;
	uint32_t part_mask; /* bit t: table t is partitioned */
	int threaded;	    /* one thread per worker (verbs, shm) */
	struct thr *th;	    /* driving threads */
	uint32_t nth;
	uint64_t until;	      /* run-time limit, ps (threaded: absolute be time) */
	uint64_t t0;	      /* threaded: be time at which the run started */
	int stop;	      /* threaded: a thread failed, all stop (relaxed atomic:
				 set_stop, stopped) */
	int no_invariants;    /* the verifier knows no invariants of this workload */
	int lazy;	      /* the backend writes the initial region lazily
				 (DMR_BE_CTL_LAZY_INIT): records are read
				 through DMR_BE_CTL_MN_READ into vread */
	struct vread *vread;  /* lazy: per table, what mn_read read (replay.c) */
	uint64_t *vzero;      /* lazy: a zero payload (mnread.c) */
	int vread_all;	      /* dmr_replay_opts_t.verify_read_all */
	int dm_apart;	      /* --dm-locks on a DMR_BE_CAP_DM_APART backend (verbs) */
	char dm_knob[128];    /* the results' dm_locks ("apart:T,..." for --locks-apart) */
	uint64_t started;     /* transactions started (first attempt) */
	uint32_t running;     /* threaded: threads still driving */
	uint64_t deadline_ps; /* threaded: longest wait for a completion */
	pthread_mutex_t mu;   /* threaded: trace reader, loops */
	dmr_ts_t ts;
	dmr_err_t *err;
	double trace_wall;   /* wall time spent reading the trace */
	uint64_t t_fail;     /* sim: time of the failed completion (0: none) */
	dmr_progress_t prog; /* transactions started of the total */

	/* results per type (breakdown.h; typed_begin/end) */
	uint32_t ntypes;       /* the trace's transaction types (>= 1) */
	dmr_txn_stats_t *tst;  /* per (worker, type), [w * ntypes + type]: what the
				  core counted into wst[w] while running a
				  transaction of that type */
	dmr_bd_first_t *first; /* per (worker, type): verbs of the transactions
				  that committed on their first attempt */
	dmr_bd_first_t *acc;   /* per context: verbs of its transaction so far */
} engine_t;

/* Per driving thread (sim: one for all workers; threaded: one per worker):
 * scratch lists and latencies of the transactions it finished. */
typedef struct thr {
	struct engine *e;
	uint32_t *wake, *wake2, *stack;
	uint32_t *wakep;     /* next_for: parked contexts to wake */
	dmr_lathist_t *lat;  /* from the first start (after admission) to commit */
	dmr_lathist_t *dlat; /* from dispatch (incl. the admission wait) to commit */
	dmr_lathist_t *tlat; /* per type (ntypes): as lat */
	uint32_t worker;     /* threaded: the worker it drives */
	dmr_status_t st;
	dmr_err_t err;
	pthread_t tid;
} thr_t;

/* The engine lock (threaded backends: the trace reader, queues, loops). */
static inline void lock(engine_t *e)
{
	if (e->threaded)
		pthread_mutex_lock(&e->mu);
}

static inline void unlock(engine_t *e)
{
	if (e->threaded)
		pthread_mutex_unlock(&e->mu);
}

/* Threaded backends: parse up to DMR_PRELOAD_BYTES of the trace into the
 * workers' queues before the timed loop (dispatch.c); *n_p = how many. */
dmr_status_t dmr_eng_preload(engine_t *e, uint64_t *n_p);
/* Next transaction for context ci of worker w (th: its driving thread):
 * *q_p NULL when none is left, or with aura's backpressure when ci was
 * parked until an owner takes from its inbox (woken by a timer completion
 * of kind DMR_WRID_WAKE). Reads ahead into the other workers' queues and
 * routes by aura (dispatch.c). Takes the engine lock. Errors: the trace
 * reader's (e->err says why), dmr_be_timer's. */
dmr_status_t dmr_eng_next_for(engine_t *e, struct thr *th, uint32_t w, uint32_t ci, qtxn_t **q_p);
/* A copy of room for nops ops (uninitialised), a recycled one of as many
 * ops when there is one; NULL: out of memory. Give it back with
 * dmr_eng_qtxn_free (its t.nops then names its size: unchanged since it
 * was taken); dmr_eng_qtxn_fini frees the recycled ones. */
qtxn_t *dmr_eng_qtxn_alloc(engine_t *e, uint32_t nops);
void dmr_eng_qtxn_free(engine_t *e, qtxn_t *q);
void dmr_eng_qtxn_fini(engine_t *e);
/* Pop a queue's head (not empty) into *q_p: a copy, or a packed one or a
 * cache record decoded into a dmr_eng_qtxn_alloc'd qtxn_t; the caller gives
 * it back (dmr_eng_qtxn_free). DMR_ERR_NOMEM, or DMR_ERR_PARSE (a record
 * that does not decode: a bug, the queue's head is dropped), with e->err
 * set. */
dmr_status_t dmr_eng_wq_pop(engine_t *e, wqueue_t *wq, qtxn_t **q_p);
/* Free what a queue holds (its copies, its packed chunks to e->qpool). */
void dmr_eng_wq_fini(engine_t *e, wqueue_t *wq);
/* Drift: move t's partitioned operations to the hot set's place at now
 * (FORMAT.md "Drift"). */
void dmr_eng_drift_remap(engine_t *e, dmr_trace_txn_t *t, uint64_t now);

/* mnread.c. Hand the backend the layout's initial image to write lazily
 * (DMR_BE_CTL_LAZY_INIT with dmr_layout_load_range) when both can; sets
 * and returns e->lazy (0: the caller loads the regions through
 * mn_memory()). */
int dmr_eng_lazy_init(engine_t *e);
/* The workload's invariants on the MN state now (traces/workload.h
 * dmr_wl_verify, committed_xv as there), read through DMR_BE_CTL_MN_READ
 * when e->lazy (a scan reads ahead per table, up to 64 KiB), else raw
 * from mn_memory(); version tuples (--protocol motor) read their newest
 * committed version. dmr_wl_verify's returns. */
dmr_status_t dmr_eng_verify(engine_t *e, const dmr_trace_hdr_t *h, int64_t committed_xv,
			    dmr_verify_result_t *res, dmr_err_t *err);
/* Free what dmr_eng_lazy_init allocated (any time after it). */
void dmr_eng_mnread_fini(engine_t *e);

#endif
