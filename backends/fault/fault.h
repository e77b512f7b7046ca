/*
 * backends/fault/fault.h - the fault-injection backend: a wrapper around
 * any other backend (libfabric's prov/hook: a provider that sits on top of
 * another and forwards every call; SQLite's src/test6.c: a VFS that wraps
 * the real one and fails or loses writes on command). Opened as
 * `fault:INNER` (e.g. "fault:sim"); with no fault it forwards every call
 * unchanged and passes the conformance suite as INNER does.
 *
 * The faults (the spec, docs/FAULTS.md): several separated by commas, each
 * KIND:FIELD=VALUE[:FIELD=VALUE...]:
 *   unreachable:mn=M[@T]   MN M is dead from time T (dmr_be_now of the
 *                          posting worker; T with a unit s, ms, us or ns;
 *                          default 0): every WR posted to M at or after T
 *                          completes with RETRY_EXC_ERR (the first of the
 *                          endpoint) then FLUSH_ERR (the rest of that
 *                          endpoint); WRs posted before T complete as INNER
 *                          completes them. "at=T" is the same as "@T".
 *   fail:op=K[:status=S][:worker=W]
 *                          the K-th WR posted (1-based; counted over all
 *                          workers in posting order, or over worker W's
 *                          WRs with worker=W) is not executed: it completes
 *                          with status S (REM_ACCESS_ERR, the default;
 *                          FLUSH_ERR, RETRY_EXC_ERR, GENERAL_ERR) and its
 *                          endpoint is in error: later WRs there are
 *                          flushed (FLUSH_ERR), as on an RC QP.
 *   delay:mn=M|worker=W:us=D (or ns=, ms=, ps=)
 *                          every completion of a WR to MN M (or of worker
 *                          W) reaches the caller D later than INNER
 *                          delivered it: held back and handed out by poll()
 *                          once dmr_be_now(worker) >= delivery + D; on a
 *                          DRIVEN inner (sim) a DMR_WR_TIMER of kind
 *                          DMR_WRID_BACKEND wakes the worker then (never
 *                          returned to the caller).
 *   drop:k=K | drop:after=N
 *                          the K-th WR completion (1-based, counted over
 *                          all workers in the order poll() returns them;
 *                          timers not counted), or every one after the
 *                          N-th, is never returned: the doorbell's answer
 *                          is lost.
 * Errors and flushes made by the wrapper are counted in stats().errors.
 * The counts "posted" and "returned" are global over workers: on a DRIVEN
 * backend (sim) they are deterministic; on a threaded one (shm, verbs) the
 * interleaving of workers decides which WR is the K-th (use worker=W).
 * Where the spec comes from: dmr_be_config_t.fault, else the environment
 * variable DMR_FAULT, else no fault. A bad spec is refused at open with
 * DMR_ERR_INVALID naming the fault and the field.
 */
#ifndef DMR_FAULT_H
#define DMR_FAULT_H

#include "../backend.h"

extern const dmr_be_ops_t dmr_fault_ops;

/* The prefix that selects the wrapper in a backend name ("fault:"). */
#define DMR_FAULT_PREFIX "fault:"

#endif /* DMR_FAULT_H */
