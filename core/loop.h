/*
 * core/loop.h - adaptive control loops: admission of transactions.
 *
 * A loop is four parts (REFERENCE.md section 3): a signal read from
 * counters the core already keeps, an actuator it moves, a reaction window,
 * and a constraint on the actuator. Loops act only through their actuator;
 * the replay asks dmr_adm_admit() before starting a transaction on a
 * context and tells dmr_adm_finish() when it ends. Loops compose (`--loop
 * aimd+perkey`): with several enabled a transaction must pass every gate.
 * Every loop is a row of one table (dmr_loop_info(): name, bit, and its
 * signal, actuator, window and constraint in words); the parser and the
 * canonical names are that table's, so a new loop is a new row.
 *
 *  - none: every transaction is admitted (baseline).
 *  - aimd ("Loop A" as AdaptX describes it, issue 14): per compute node.
 *    Signal = the CN's aborts per attempt in the window (summed over its
 *    workers; a failed lock CAS is one cause of abort). Actuator = the
 *    number of transaction slots the CN admits at once, in
 *    [1, threads x coros] (starting at threads x coros: no gate). At the
 *    end of each window of the CN: above `threshold`, multiplicative
 *    decrease (divide by md_factor, floor, at least 1); else additive
 *    increase by ai_step (at most threads x coros). A window without
 *    attempts decides nothing. Defaults ai_step 4, md_factor 2, window
 *    5 ms (loop_a_ai_step=4, loop_a_nf=2 and the ~5 ms reaction of the
 *    reference framework); threshold 0.5 (ours: no published value).
 *    Deferred contexts of a CN wait in one FIFO, whichever worker they
 *    belong to.
 *  - aimd-worker: the same loop per worker (dmreplay before issue 14):
 *    actuator in [1, coros], signal the worker's aborts per attempt. Kept
 *    because it is the same code with the worker as its group.
 *  - perkey: per compute node and per hot key. Signal = failed lock CAS on
 *    a record (the core reports it). Such a record is hot for `hot_windows`
 *    windows. Actuator = admission per hot record: a transaction whose
 *    first-round lock set holds a hot record that an admitted transaction of
 *    the same CN also locks is deferred until that one finishes; others go
 *    on. The constraint: at most one admitted transaction per hot record per
 *    CN (deferred ones wait in FIFO order).
 *  - doorbell ("Loop C"): per compute node. Signal = the utilisation of the
 *    MN links, the MN PCIe/DMA engines and the CN's doorbell MMIOs in the
 *    window; actuator = the WRs the CN rings per doorbell, 1..doorbell_max
 *    (core/loop_doorbell.h: the stager, the rule and its sources). It
 *    admits every transaction: it acts on posts, not on admission.
 *  - prefetch ("Loop X"): the KV pool's loop (`dmreplay kv run`, sim):
 *    signal = the pool's hit ratio in the window; actuator = the prefetch
 *    depth of the blocks predicted next, 0..--prefetch-max
 *    (core/kv/prefetch.h). `dmreplay run` refuses it and kv run refuses the
 *    transaction loops (DMR_LOOP_TXN).
 *  - aura (issue 14): per record group, per window: the levers A1 (RPC
 *    path), A2 (ownership with localized execution at the owner CN: a
 *    transaction of a group this CN owns is deferred while an admitted
 *    transaction of the same CN locks one of its records, as perkey does
 *    for hot records), A3 (CN cache of read-mostly tables), A4 (load
 *    balance), chosen by a cost model whose weights a tuner moves
 *    (core/aura.h). The admission gate is A2's; routing (which CN runs a
 *    transaction), the RPC switch and the cache mask are the replay's, asked
 *    of dmr_adm_aura().
 *
 * Single-threaded (sim replay); the threaded replay takes a lock around
 * these calls.
 */
#ifndef DMR_LOOP_H
#define DMR_LOOP_H

#include <stdint.h>

#include "aura.h"
#include "layout.h"
#include "txn.h"

#include <stddef.h>

#define DMR_LOOP_AIMD 0x1u				      /* Loop A, slots per CN */
#define DMR_LOOP_PERKEY 0x2u				      /* per hot key, per CN */
#define DMR_LOOP_AIMD_WORKER 0x4u			      /* Loop A, contexts per worker */
#define DMR_LOOP_SLOTS (DMR_LOOP_AIMD | DMR_LOOP_AIMD_WORKER) /* an AIMD slot gate */
#define DMR_LOOP_DOORBELL 0x10u /* Loop C, WRs per doorbell per CN (loop_doorbell.h) */
#define DMR_LOOP_PREFETCH 0x20u /* Loop X, KV prefetch depth (core/kv/prefetch.h; kv run only) */
#define DMR_LOOP_AURA 0x40u	/* AURA levers and cost model (core/aura.h) */
#define DMR_LOOP_TXN                                                                               \
	(DMR_LOOP_AIMD | DMR_LOOP_PERKEY | DMR_LOOP_AIMD_WORKER | DMR_LOOP_DOORBELL |              \
	 DMR_LOOP_AURA)	     /* dmreplay run's */
#define DMR_LOOP_NAME_MAX 64 /* dmr_loop_name's buffer */

typedef struct dmr_loop_cfg {
	unsigned loops;	       /* DMR_LOOP_* bits; 0 = none */
	uint32_t ai_step;      /* slots added per window */
	double md_factor;      /* divisor on decrease, > 1 */
	uint64_t window_ps;    /* reaction window */
	double threshold;      /* aimd: aborts per attempt above which it decreases */
	uint32_t hot_windows;  /* perkey: windows a record stays hot */
	uint32_t doorbell_max; /* doorbell: the most WRs per doorbell, 1..4096 (32) */
	double doorbell_util;  /* doorbell: utilisation at or above which the batch
				  doubles (below half of it, it halves), (0, 1] (0.2) */
	dmr_aura_cfg_t aura;   /* aura: levers, tuner, weights (core/aura.h); its
				  window is window_ps */
} dmr_loop_cfg_t;

void dmr_loop_cfg_default(dmr_loop_cfg_t *c);

/* One loop of the framework: its name, bit and four parts in words. */
typedef struct dmr_loop_info {
	const char *name;
	unsigned bit;
	const char *signal, *actuator, *window, *constraint;
} dmr_loop_info_t;
/* The loops, in canonical order; *n_p = how many. Static storage. */
const dmr_loop_info_t *dmr_loop_info(size_t *n_p);

/* Parse "none" or names of dmr_loop_info() joined by '+' ("aimd",
 * "aimd+perkey", ...). DMR_ERR_PARSE naming the option text and the part:
 * an unknown name (the known ones listed), an empty part, a loop named
 * twice, aimd with aimd-worker (one gate at two granularities). */
dmr_status_t dmr_loop_parse(const char *s, unsigned *loops_p, dmr_err_t *err);
/* The same, listing only the loops in `allowed` (DMR_LOOP_* bits) when a
 * name is unknown: the command's own loops (run: DMR_LOOP_TXN; kv run:
 * DMR_LOOP_PREFETCH). A known loop outside `allowed` is returned, for the
 * caller to refuse with its own reason. */
dmr_status_t dmr_loop_parse_for(const char *s, unsigned allowed, unsigned *loops_p, dmr_err_t *err);
/* Canonical name of a loop set into buf (len bytes, DMR_LOOP_NAME_MAX is
 * enough): "none" or the names in table order joined by '+'. Returns buf. */
const char *dmr_loop_name(unsigned loops, char *buf, size_t len);

typedef struct dmr_adm dmr_adm_t;

/* Create the controller for nworkers workers (workers_per_cn per CN;
 * worker w is on CN w / workers_per_cn), each with `coros` contexts
 * (context ci belongs to worker ci / coros). DMR_ERR_NOMEM. */
dmr_status_t dmr_adm_create(const dmr_loop_cfg_t *cfg, const dmr_layout_t *l, uint32_t nworkers,
			    uint32_t workers_per_cn, uint32_t coros, dmr_adm_t **adm_p,
			    dmr_err_t *err);
void dmr_adm_destroy(dmr_adm_t *a);

/* May context `ctx` of `worker` start `txn` now? 1: admitted (and counted);
 * 0: deferred: the controller queued ctx and will name it in a later
 * dmr_adm_finish()/dmr_adm_tick() wake list. */
int dmr_adm_admit(dmr_adm_t *a, uint32_t worker, uint32_t ctx, const dmr_trace_txn_t *txn,
		  uint64_t now_ps);

/* Transaction of ctx finished (committed or gave up). Appends contexts
 * that may now retry admission to wake[] (at most max; returns count). */
uint32_t dmr_adm_finish(dmr_adm_t *a, uint32_t worker, uint32_t ctx, uint32_t *wake, uint32_t max);

/* A lock CAS failed on record offset rec (signal of perkey). */
void dmr_adm_lock_failed(dmr_adm_t *a, uint32_t worker, uint64_t rec, uint64_t now_ps);

/* The worker's counters ws (cumulative) at now_ps: their change since the
 * worker's last tick goes to its group's window (aimd: its CN; aimd-worker:
 * itself); a group whose window has ended decides. Appends contexts to wake
 * (actuator raised; they may belong to other workers of the CN). Returns
 * count. */
uint32_t dmr_adm_tick(dmr_adm_t *a, uint32_t worker, uint64_t now_ps, const dmr_txn_stats_t *ws,
		      uint32_t *wake, uint32_t max);

/* For the time series: mean signal over the windows closed since the last
 * call; the actuator at now_ps (with a slot gate: the slot limit, mean over
 * its groups (aimd: slots per CN; aimd-worker: contexts per worker);
 * perkey alone: the number of records hot at now_ps, summed over the CNs);
 * decisions since the last call (slot-gate increases and decreases, also
 * at the bound; perkey deferrals) and moves (decisions that changed a
 * limit). The replay samples at every time-series window it closes and
 * once more at the end of the run (the last, possibly short, window). */
typedef struct dmr_adm_sample {
	double signal, actuator;
	uint64_t increases, decreases, deferred, moves;
} dmr_adm_sample_t;
void dmr_adm_sample(dmr_adm_t *a, uint64_t now_ps, dmr_adm_sample_t *s);

/* aura's controller (NULL without aura): the replay routes, switches A1
 * and A3 by it and reports what it finished (core/aura.h). Owned by a. */
dmr_aura_t *dmr_adm_aura(dmr_adm_t *a);

/* Compute nodes of the controller (the per-CN columns of the series). */
uint32_t dmr_adm_ncn(const dmr_adm_t *a);
/* Slots CN cn admits at once now: aimd its limit, aimd-worker the sum of
 * its workers' limits; without a slot gate threads x coros. */
uint32_t dmr_adm_cn_slots(const dmr_adm_t *a, uint32_t cn);

/* The run so far: the slot gate's least and largest limit any group had
 * (the start, threads x coros or coros, included), its bound, its moves up
 * and down and the group windows that decided (all 0 without a slot gate);
 * and perkey's deferrals behind a hot record (0 without perkey). */
typedef struct dmr_adm_summary {
	uint32_t min, max, cap;
	uint64_t up, down, windows;
	uint64_t key_deferred;
	uint64_t local_deferred; /* aura A2: deferrals behind the owner CN's holder */
} dmr_adm_summary_t;
void dmr_adm_summary(const dmr_adm_t *a, dmr_adm_summary_t *s);

#endif
