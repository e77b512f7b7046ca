/*
 * core/loop.h - adaptive control loops: admission of transactions.
 *
 * A loop is four parts (REFERENCE.md section 3): a signal read from
 * counters the core already keeps, an actuator it moves, a reaction window,
 * and a constraint on the actuator. Loops act only through their actuator;
 * the replay asks dmr_adm_admit() before starting a transaction on a
 * context and tells dmr_adm_finish() when it ends. Loops compose: with
 * several enabled a transaction must pass every gate.
 *
 *  - none: every transaction is admitted (baseline).
 *  - aimd ("Loop A"): per worker. Signal = aborts per attempt of that
 *    worker in the window (a failed lock CAS is one cause of abort).
 *    Actuator = transactions the worker may run concurrently, in
 *    [1, coros]. Above `threshold`: multiplicative decrease (divide by
 *    md_factor, floor, at least 1); else additive increase by ai_step
 *    (at most coros). Defaults ai_step 4, md_factor 2, window 5 ms
 *    (loop_a_ai_step=4, loop_a_nf=2 and the ~5 ms reaction of the reference
 *    framework).
 *  - perkey: per compute node and per hot key. Signal = failed lock CAS on
 *    a record (the core reports it). Such a record is hot for `hot_windows`
 *    windows. Actuator = admission per hot record: a transaction whose
 *    first-round lock set holds a hot record that an admitted transaction of
 *    the same CN also locks is deferred until that one finishes; others go
 *    on. The constraint: at most one admitted transaction per hot record per
 *    CN (deferred ones wait in FIFO order).
 *
 * Single-threaded (sim replay); the threaded verbs replay will take a lock
 * per CN around these calls.
 */
#ifndef DMR_LOOP_H
#define DMR_LOOP_H

#include <stdint.h>

#include "layout.h"
#include "txn.h"

#define DMR_LOOP_AIMD 0x1u
#define DMR_LOOP_PERKEY 0x2u

typedef struct dmr_loop_cfg {
	unsigned loops;	      /* DMR_LOOP_* bits; 0 = none */
	uint32_t ai_step;     /* contexts added per window */
	double md_factor;     /* divisor on decrease, > 1 */
	uint64_t window_ps;   /* reaction window */
	double threshold;     /* aimd: aborts per attempt above which it decreases */
	uint32_t hot_windows; /* perkey: windows a record stays hot */
} dmr_loop_cfg_t;

void dmr_loop_cfg_default(dmr_loop_cfg_t *c);
/* Parse "none", "aimd", "perkey", "aimd+perkey". DMR_ERR_PARSE naming the
 * unknown part. */
dmr_status_t dmr_loop_parse(const char *s, unsigned *loops_p, dmr_err_t *err);
/* Canonical name of a loop set ("none", "aimd", "perkey", "aimd+perkey"). */
const char *dmr_loop_name(unsigned loops);

typedef struct dmr_adm dmr_adm_t;

/* Create the controller for nworkers workers (workers_per_cn per CN), each
 * with `coros` contexts. DMR_ERR_NOMEM. */
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

/* Close the worker's window if it has ended: ws = that worker's counters.
 * Appends contexts to wake (actuator raised). Returns count. */
uint32_t dmr_adm_tick(dmr_adm_t *a, uint32_t worker, uint64_t now_ps, const dmr_txn_stats_t *ws,
		      uint32_t *wake, uint32_t max);

/* For the time series: mean signal over the windows closed since the last
 * call; the actuator at now_ps (aimd, and aimd+perkey: the concurrency
 * limit, mean over the workers; perkey alone: the number of records hot at
 * now_ps, summed over the CNs); decisions since the last call (aimd
 * increases and decreases, perkey deferrals). The replay samples at every
 * time-series window it closes and once more at the end of the run (the
 * last, possibly short, window). */
typedef struct dmr_adm_sample {
	double signal, actuator;
	uint64_t increases, decreases, deferred;
} dmr_adm_sample_t;
void dmr_adm_sample(dmr_adm_t *a, uint64_t now_ps, dmr_adm_sample_t *s);

#endif
