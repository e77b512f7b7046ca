/*
 * core/loop_doorbell.h - Loop C (`--loop doorbell`): PCIe / MN-link
 * utilisation -> WRs per doorbell (docs/LOOPS.md "Loop C").
 *
 * The stager: with the loop on, the core's posts (dmr_txn_post) do not ring
 * a doorbell each; they are staged per (worker, MN) and rung together when
 * the engine flushes the worker (dmr_doorbell_flush: after it handled a
 * poll's batch of completions, before it waits again), so the posts of the
 * contexts that one batch of completions advanced share doorbells, as
 * FaSST batches the requests of one thread's coroutines (Kalia et al.,
 * OSDI'16) and as "Design guidelines for high performance RDMA systems"
 * (Kalia et al., ATC'16, its doorbell batching guideline) recommends: one
 * MMIO for several WQEs instead of one per post. A post is never split; the doorbell of (worker,
 * MN) is rung as soon as adding a post would take it beyond the CN's batch (the actuator, in WRs),
 * and a post of at least that many WRs rings alone. Batch 1 = one doorbell per post, as without the
 * loop.
 *
 * The loop (one row of core/loop.c's table): per compute node. Signal =
 * the utilisation of the I/O path over the CN's window: the largest of
 * each MN's link (down, up) and PCIe/DMA engines' busy time over the
 * window (DMR_BE_CTL_MN_STATS; sim only, 0 on backends without a model)
 * and the CN's own PCIe doorbell share, its doorbells x the model's
 * post_doorbell_ns (one MMIO over PCIe, Kalia ATC'16) over the window x
 * its workers (the sim charges a doorbell's MMIO to the posting CPU: there
 * is no CN PCIe server with a busy time of its own). Actuator = the WRs the
 * CN rings per doorbell at most, in [1, doorbell_max], starting at 1. Rule
 * at the end of each window: signal >= doorbell_util: double the batch
 * (at most doorbell_max: the path is loaded, amortise the MMIO); signal <
 * doorbell_util / 2: halve it (at least 1: the path is idle, do not hold
 * WRs for a batch); in between keep it (hysteresis). The thresholds are
 * ours (no published value); doubling and halving are the usual
 * multiplicative steps of a batch size (none published for this loop).
 *
 * Threads: a worker's stage belongs to the thread that drives it; the
 * per-CN window is closed under a mutex; counters are relaxed atomics (the
 * sampler may read them from another thread).
 */
#ifndef DMR_LOOP_DOORBELL_H
#define DMR_LOOP_DOORBELL_H

#include <stdint.h>

#include "../backends/backend.h"
#include "loop.h"

/* Threads: with driven, one thread makes every call; otherwise each worker's
 * post and flush come from that worker's thread only (its stages are its
 * own), window closes take the handle's mutex, and the counters, batches
 * and window ends read without it are atomics (checked under TSan by
 * test_loopc on shm). */
typedef struct dmr_doorbell dmr_doorbell_t;

/* A stager and controller for nworkers workers (workers_per_cn per CN)
 * posting to `mns` MNs of be (borrowed). mmio_ps: the CPU/PCIe cost of one
 * doorbell (models/model.h post_doorbell_ps; 0 without a model: the CN part
 * of the signal is then 0). driven: one thread drives every worker (sim):
 * a flush rings every worker's stage (a loop may have woken a context of
 * another worker, which staged there); else each thread flushes its own.
 * DMR_ERR_NOMEM. */
dmr_status_t dmr_doorbell_create(const dmr_loop_cfg_t *cfg, dmr_be_t *be, uint32_t nworkers,
				 uint32_t workers_per_cn, uint32_t mns, uint64_t mmio_ps,
				 int driven, dmr_doorbell_t **db_p, dmr_err_t *err);
void dmr_doorbell_destroy(dmr_doorbell_t *db);

/* Stage the n WRs of one post of `worker` to `mn` (copied; the caller may
 * reuse wrs at once). Rings the stage first when they do not fit the CN's
 * batch, and rings them alone when n >= the batch. Errors: dmr_be_post's
 * (err as it sets it); then nothing of this post was staged. */
dmr_status_t dmr_doorbell_post(dmr_doorbell_t *db, uint32_t worker, uint32_t mn,
			       const dmr_wr_t *wrs, uint32_t n, dmr_err_t *err);

/* Ring every staged doorbell of `worker` (MNs in order; driven: then those
 * of every other worker that staged since the last flush), then, when the
 * window of worker's CN has ended at now_ps (the backend's time), close
 * it: signal, decision. Errors: dmr_be_post's or DMR_BE_CTL_MN_STATS's. */
dmr_status_t dmr_doorbell_flush(dmr_doorbell_t *db, uint32_t worker, uint64_t now_ps,
				dmr_err_t *err);

/* The rule on its own (tests): the batch after a window with `signal`, from
 * `batch`, under cfg's doorbell_util and doorbell_max. */
uint32_t dmr_doorbell_decide(const dmr_loop_cfg_t *cfg, uint32_t batch, double signal);

/* The signal of a window of len_ps (tests): the largest of the busy times
 * over len_ps (busy[0..nbusy-1]) and doorbells x mmio_ps over (len_ps x
 * workers); 0 when len_ps is 0. */
double dmr_doorbell_signal(const uint64_t *busy, uint32_t nbusy, uint64_t doorbells,
			   uint64_t mmio_ps, uint32_t workers, uint64_t len_ps);

/* For the time series: the mean signal over the CN windows closed since the
 * last call (0: none), the batch (mean over the CNs), and the running
 * totals of posts staged, doorbells rung and WRs rung. */
typedef struct dmr_doorbell_sample {
	double signal, batch;
	uint64_t posts, rings, wrs;
} dmr_doorbell_sample_t;
void dmr_doorbell_sample(dmr_doorbell_t *db, dmr_doorbell_sample_t *s);

/* The run: the least and largest batch any CN had (the start, 1,
 * included), the bound, moves up and down, CN windows that decided, and the
 * totals of posts, doorbells and WRs. */
typedef struct dmr_doorbell_summary {
	uint32_t min, max, cap;
	uint64_t up, down, windows;
	uint64_t posts, rings, wrs;
} dmr_doorbell_summary_t;
void dmr_doorbell_summary(const dmr_doorbell_t *db, dmr_doorbell_summary_t *s);

/* CN cn's batch now (1..doorbell_max). */
uint32_t dmr_doorbell_batch(const dmr_doorbell_t *db, uint32_t cn);

#endif
