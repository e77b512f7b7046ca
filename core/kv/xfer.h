/*
 * core/kv/xfer.h - the sliced, pipelined block transfer engine.
 *
 * A transfer (dmr_kv_xfer_t) moves `len` bytes between a local buffer and
 * the MN region at logical offset `logical`, as slices of at most `slice`
 * bytes (0: one WR) posted in order on its client's QP, at most `depth`
 * slices in flight per client. Completions of one QP arrive in posting
 * order (backends/backend.h), so the bytes of a completed slice are
 * min(slice, len - done). wr_id = dmr_wrid_n(DMR_WRID_KV_SLICE, transfer).
 *
 * Two set-ups:
 *  - dmr_kv_xeng_init: one engine for `nclients` workers of a DRIVEN backend
 *    (sim), all slices from one shared buffer; remote offsets may be folded
 *    into a smaller real region (timing only, contents not kept).
 *  - dmr_kv_xeng_init_thread: the engine of one thread whose only client is
 *    worker w0 of a threaded backend; with `ring`, each slice in flight has
 *    its own buffer: a WRITE carries the block's content pattern (its id
 *    and offset), a READ is checked against it (DMR_ERR_VERIFY).
 * Wire bytes (RoCEv2 framing, both directions) are counted when a model is
 * set (e->m). An engine belongs to one thread. Part of core/kv (kv.h).
 */
#ifndef DMR_CORE_KV_XFER_H
#define DMR_CORE_KV_XFER_H

#include <stdint.h>

#include "../../backends/backend.h"
#include "../../models/model.h"
#include "../base/status.h"
#include "kv.h"

typedef struct dmr_kv_xfer {
	uint64_t logical, len, posted, done; /* bytes */
	uint64_t t0;			     /* the caller's (bench: submit time, ps) */
	uint32_t next;	 /* client queue / free list / the caller's waiter list */
	uint32_t owner;	 /* the caller's: request slot (run) or thread (bench) */
	uint32_t entry;	 /* the caller's: pool entry or block index; NOIDX when new */
	uint32_t client; /* index into e->c (0 with init_thread) */
	uint8_t opcode;	 /* DMR_WR_READ or DMR_WR_WRITE */
	uint64_t tag;	 /* ring mode: the block id (content pattern) */
	uint64_t rpos;	 /* the engine's: remote offset of the next slice (folded,
			    without base), set by pump at the first slice */
} dmr_kv_xfer_t;

typedef struct dmr_kv_xq {
	uint32_t qhead, qtail; /* transfers with slices left to post */
	uint32_t inflight;     /* slices posted, not completed */
	uint64_t npost, ndone; /* slices posted / completed (ring buffer index) */
} dmr_kv_xq_t;

typedef struct dmr_kv_xeng {
	dmr_be_t *be;
	const dmr_model_t *m; /* wire bytes counted when set; borrowed */
	dmr_kv_xfer_t *x;
	uint32_t capx, xfree, live; /* live: transfers allocated */
	dmr_kv_xq_t *c;
	uint32_t nc;
	uint8_t *buf; /* registered local buffer(s) */
	uint64_t slice, maxwr;
	uint32_t depth;
	uint64_t region, fold_mod;
	int folded;
	uint64_t wire_to, wire_from, slices; /* bytes to / from the MN; slices posted */
	dmr_err_t *err;			     /* where data-path errors go (the owning thread's) */
	uint32_t w0;			     /* worker of client 0 */
	uint8_t *ring;	  /* ring mode: depth buffers of maxwr bytes per client */
	uint64_t base;	  /* added to every remote offset (the pool's base) */
	uint64_t corrupt; /* tests: id + 1 of a block whose put is corrupted */
	/* wire bytes of a whole slice (len == slice), to / from the MN, by
	 * [0] READ, [1] WRITE: computed once at init when m is set, so that a
	 * completion adds two numbers instead of counting packets */
	uint64_t wire_slice[2][2];
	/* DMR_BE_CTL_STREAMS (dmr_kv_xeng_streams): the backend refills the
	 * clients' slices itself; st[ci] mirrors client ci's head transfer */
	dmr_be_streams_t sx;
	dmr_be_stream_t *st; /* nc; NULL: streams off */
	uint32_t *dirty;     /* nc */
	uint64_t streamed;   /* completions the backend took (summed by sync) */
} dmr_kv_xeng_t;

/*
 * DRIVEN set-up: nclients clients = workers 0..nclients-1, one shared
 * buffer of maxwr bytes (the largest slice) registered for each; m (may be
 * NULL) counts wire bytes; region = the real MN bytes, folded = fold remote
 * offsets into it (64-byte aligned). Errors: DMR_ERR_NOMEM, mr_reg's.
 * dmr_kv_xeng_fini frees it either way. err is kept for data-path errors.
 */
dmr_status_t dmr_kv_xeng_init(dmr_kv_xeng_t *e, dmr_be_t *be, const dmr_model_t *m,
			      uint32_t nclients, uint64_t slice, uint64_t maxwr, uint32_t depth,
			      uint64_t region, int folded, dmr_err_t *err);
/* Threaded set-up: one client, worker w0; remote offsets + base; ring: per-
 * slice buffers with content patterns. Registers its buffers for w0 (call
 * before the worker's thread starts). Errors as dmr_kv_xeng_init. */
dmr_status_t dmr_kv_xeng_init_thread(dmr_kv_xeng_t *e, dmr_be_t *be, uint32_t w0, uint64_t slice,
				     uint64_t maxwr, uint32_t depth, uint64_t base, int ring,
				     dmr_err_t *err);
void dmr_kv_xeng_fini(dmr_kv_xeng_t *e);

/* A new transfer (zeroed; next and entry NOIDX), its index; DMR_KV_NOIDX when
 * out of memory. Pointers into e->x may move. */
uint32_t dmr_kv_xeng_alloc(dmr_kv_xeng_t *e);
void dmr_kv_xeng_free(dmr_kv_xeng_t *e, uint32_t i);
/* Queue transfer i (fields set) on its client; dmr_kv_xeng_pump posts it. */
void dmr_kv_xeng_enqueue(dmr_kv_xeng_t *e, uint32_t i);
/* Post slices of client ci's queued transfers while its QP has room.
 * Errors: the backend's post errors. */
dmr_status_t dmr_kv_xeng_pump(dmr_kv_xeng_t *e, uint32_t ci);
/*
 * Let a DRIVEN backend refill the clients' slices itself (backend.h
 * DMR_BE_CTL_STREAMS; sim), with the same results: every pump then sets
 * client ci's stream to its head transfer, and the caller must call
 * dmr_kv_xeng_sync whenever dmr_be_progress returns (a worker or -1),
 * before anything reads the engine's state. until_ps: the global time at
 * which the caller must see completions again (its time series' next
 * window end; dmr_kv_xeng_until moves it). A backend that does not take
 * streams (DMR_ERR_UNSUPPORTED: fault and record wrappers, threaded
 * backends) leaves them off: DMR_OK. Errors: DMR_ERR_NOMEM, the backend's.
 * The engine's prefetch (Loop X, replay/kv) does not use them: it must see
 * every completion's time.
 */
dmr_status_t dmr_kv_xeng_streams(dmr_kv_xeng_t *e, uint64_t until_ps);
/* Turn the streams off (the backend hands every completion to the caller
 * again); sync first. */
void dmr_kv_xeng_streams_off(dmr_kv_xeng_t *e);
/* Read back what the backend did on the streams since the last sync. */
void dmr_kv_xeng_sync(dmr_kv_xeng_t *e);
static inline void dmr_kv_xeng_until(dmr_kv_xeng_t *e, uint64_t until_ps)
{
	e->sx.until_ps = until_ps;
}

/*
 * Account the completion wc of a slice on `worker`; *done_p = the transfer
 * when its last slice completed, else DMR_KV_NOIDX (the caller frees it).
 * Errors: DMR_ERR_INVALID (unknown transfer), DMR_ERR_REMOTE (a failed
 * completion, named), DMR_ERR_VERIFY (ring mode: READ bytes that are not
 * the block's pattern, named with the MN offset).
 */
dmr_status_t dmr_kv_xeng_on_wc(dmr_kv_xeng_t *e, uint32_t worker, const dmr_wc_t *wc,
			       uint32_t *done_p);

/* The real MN region for `logical` bytes of pool or benchmark on sim: the
 * logical size (64-byte aligned) when it fits in max(sim_region, maxwr),
 * else that size with *folded_p = 1. */
void dmr_kv_plan_region(uint64_t logical, uint64_t sim_region, uint64_t maxwr, uint64_t *region_p,
			int *folded_p);

#endif /* DMR_CORE_KV_XFER_H */
