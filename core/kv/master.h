/*
 * core/kv/master.h - the KV master as a thread: it serves the mailboxes of
 * rpc.h in the MN region's local memory against a pool (pool.h).
 *
 *  - LOOKUP: served in trace order (request index next_expected first; a
 *    LOOKUP of a later request waits in its slot), in chunks of at most
 *    DMR_KV_MB_MAXB blocks that must follow each other. Each block is looked
 *    up in the pool and answered GET, WAIT (present, its put not finished),
 *    PUT (its ready word set to 0 first) or DROP, with its offset in the
 *    region and its ready word's index.
 *  - FINISH: the request's entries are released; its puts become READY and
 *    their ready words get dmr_kv_ready_tag(id) (release stores).
 *  - with m->store: the key/value store's ops (store.h) instead.
 * A request body whose checksum does not match its sequence word for longer
 * than deadline_ps is an error (DMR_ERR_REMOTE). A protocol error
 * (DMR_ERR_INVALID) or out of memory ends the thread with m->st / m->err
 * set, *m->stop = 1 and *m->stop_ext = 1.
 *
 * While it runs the thread owns the pool and the region's mailboxes and
 * ready words. Part of core/kv (kv.h).
 */
#ifndef DMR_CORE_KV_MASTER_H
#define DMR_CORE_KV_MASTER_H

#include <pthread.h>
#include <stdint.h>

#include "../../backends/backend.h"
#include "../base/status.h"
#include "../base/timeps.h"
#include "pool.h"
#include "rpc.h"
#include "store.h"

typedef struct dmr_kv_master {
	dmr_kv_pool_t *pool;   /* borrowed */
	dmr_kv_store_t *store; /* borrowed; set: a key/value store (ops SET .. DEL
				  only; LOOKUP and FINISH refused), else a
				  trace replay's master (LOOKUP, FINISH only) */
	uint8_t *mem;	       /* the MN region (local memory), laid out as lay */
	dmr_kv_layout_t lay;
	uint32_t nc;		   /* clients = mailboxes served */
	dmr_time_ps_t deadline_ps; /* longest a request body may stay inconsistent */
	dmr_be_t *be;		   /* the clock: dmr_be_now(be, 0); NULL = wall clock */
	double w0;		   /* ... since dmr_wall_s() = w0 */
	volatile int *stop;	   /* non-zero ends the thread; set to 1 on a failure */
	volatile int *stop_ext;	   /* NULL, or the MN loop's stop word (kv mn): set to 1
				      on a failure, and to the signal's number when
				      dmr_sig_caught() (core/base/sig.h) reports one */
	uint64_t next_expected;	   /* the request index whose LOOKUP is served next */
	uint64_t finished;	   /* FINISHes served */
	uint64_t *seen;		   /* per mailbox slot: the last sequence served */
	uint64_t *bad_since;	   /* per mailbox slot: first seen inconsistent, ps */
	uint32_t *lk_rid;	   /* per client: the record of its chunked LOOKUP */
	dmr_status_t st;	   /* the thread's result */
	dmr_err_t err;
	pthread_t tid;
	int running;
} dmr_kv_master_t;

/*
 * Set m up for nc clients' mailboxes (who prefixes messages: "kv", "kv
 * mn"); the caller then sets mem, lay, deadline_ps, be / w0, stop and
 * stop_ext. Errors: DMR_ERR_NOMEM. dmr_kv_master_fini frees it either way.
 */
dmr_status_t dmr_kv_master_init(dmr_kv_master_t *m, dmr_kv_pool_t *pool, uint32_t nc,
				const char *who, dmr_err_t *err);
/* Write the region's start: zero the header, mailboxes and ready words
 * (everything below lay.pool_base); with g, the geometry header, then the
 * magic word (release store) so a reader sees the header whole. */
void dmr_kv_master_region(dmr_kv_master_t *m, const dmr_kv_geom_t *g);
/* The same for a key/value store: the store's header g, then
 * DMR_KV_STORE_MAGIC (release store). */
void dmr_kv_master_region_store(dmr_kv_master_t *m, const dmr_kv_store_geom_t *g);
/* One pass over every mailbox slot, serving what is new (the thread's loop
 * body; the sim runs the master inline by calling it while a client
 * waits: no thread touches the simulated region). *progress_p (may be
 * NULL) = 1 when a request was served. Errors: the thread's (m->err). */
dmr_status_t dmr_kv_master_serve(dmr_kv_master_t *m, int *progress_p);
/* Start the thread. Errors: DMR_ERR_NOMEM ("WHO: cannot start the master
 * thread"). */
dmr_status_t dmr_kv_master_start(dmr_kv_master_t *m, const char *who, dmr_err_t *err);
/* Wait for the thread (after *m->stop was set); no-op when not running. */
void dmr_kv_master_join(dmr_kv_master_t *m);
void dmr_kv_master_fini(dmr_kv_master_t *m);

#endif /* DMR_CORE_KV_MASTER_H */
