/*
 * backends/backend.h - the one interface between the transaction core and a
 * transport (ARCHITECTURE.md "The backend interface").
 *
 * A backend is a table of operations (dmr_be_ops_t, filled with designated
 * initialisers, starting with its size as libfabric's fi_ops_* do) behind a
 * handle whose first member points at the table. Public calls are one-line
 * static inline dispatchers. Backends are listed in backends/registry.c.
 *
 * Shapes: the cluster has `mns` memory nodes (MN) and `cns` compute nodes
 * (CN), each CN runs `workers` workers; worker ids are global,
 * w = cn * workers + t. Each worker has one endpoint (RC QP) per MN and one
 * completion queue (CQ). A remote address is a byte offset into the MN's
 * registered region (the backend adds base address and rkey).
 *
 * Time: dmr_be_now() is picoseconds since the run began (simulated on sim,
 * CLOCK_MONOTONIC on verbs).
 *
 * Completion rule (libuv's): a post that returns an error produces no
 * completion; a post that returns DMR_OK produces exactly one completion for
 * every WR flagged DMR_WR_SIGNALED, and one for any WR that fails, whether
 * signaled or not. Completions of one endpoint arrive in posting order (RC).
 * Breaking this breaks the core: its contexts wait for completions forever.
 *
 * Atomics (CAS, FAA) operate on 8 bytes at an 8-byte aligned remote offset;
 * the old value is written to the WR's local buffer (8 bytes, host order).
 * An unaligned atomic is refused by dmr_be_post() itself, on every backend,
 * with DMR_ERR_INVALID before anything is posted (InfiniBand Architecture
 * Specification vol. 1 rel. 1.4, 9.4.5: atomic operations require natural
 * 8-byte alignment).
 */
#ifndef DMR_BACKEND_H
#define DMR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../core/base/status.h"

typedef enum dmr_wr_opcode {
	DMR_WR_READ = 0,
	DMR_WR_WRITE = 1,
	DMR_WR_CAS = 2,
	DMR_WR_FAA = 3,
	DMR_WR_TIMER = 4, /* completion-only: produced by dmr_be_timer() */
} dmr_wr_opcode_t;

#define DMR_WR_SIGNALED 0x1u

/* One work request. length: READ/WRITE bytes (0 allowed: completes, moves
 * nothing); atomics ignore it (8). local: READ destination, WRITE source,
 * atomic old-value destination; must stay valid until the completion. */
typedef struct dmr_wr {
	uint64_t wr_id;
	void *local;
	uint64_t remote;      /* byte offset in the MN region */
	uint64_t compare_add; /* CAS: compare value; FAA: addend */
	uint64_t swap;        /* CAS: swap value */
	uint32_t length;      /* bytes */
	uint8_t opcode;       /* dmr_wr_opcode_t */
	uint8_t flags;        /* DMR_WR_SIGNALED */
} dmr_wr_t;

typedef enum dmr_wc_status {
	DMR_WC_SUCCESS = 0,
	DMR_WC_REM_ACCESS_ERR = 1, /* outside the MR / bad rkey */
	DMR_WC_FLUSH_ERR = 2,      /* endpoint in error, WR flushed */
	DMR_WC_RETRY_EXC_ERR = 3,  /* transport retries exhausted (peer gone) */
	DMR_WC_GENERAL_ERR = 4,
} dmr_wc_status_t;

typedef struct dmr_wc {
	uint64_t wr_id;
	uint8_t opcode; /* dmr_wr_opcode_t */
	uint8_t status; /* dmr_wc_status_t */
	uint16_t mn;
	uint32_t byte_len;
} dmr_wc_t;

const char *dmr_wc_status_string(int status);
const char *dmr_wr_opcode_string(int opcode);

typedef struct dmr_be_config {
	const char *backend;   /* "sim" | "verbs" */
	uint32_t mns;          /* memory nodes (sim: 1) */
	uint32_t cns;          /* compute nodes */
	uint32_t workers;      /* workers per CN */
	uint64_t mr_size;      /* bytes of each MN region */
	uint64_t seed;         /* for any random model choices */
	const char *profile;   /* sim: model name or path (models/model.h) */
	const char *device;    /* verbs: device name or index */
	int port;              /* verbs: port (1-based) */
	int gid_index;         /* verbs: -1 = automatic */
	const char *cluster;   /* verbs: cluster config JSON path */
} dmr_be_config_t;

/* Counters every backend keeps; read with dmr_be_stats(). */
typedef struct dmr_be_stats {
	uint64_t verbs;        /* completed one-sided operations (all opcodes) */
	uint64_t reads, writes, cas, faa;
	uint64_t bytes_read, bytes_written;
	uint64_t doorbells;
	uint64_t events;       /* sim: discrete events processed */
	uint64_t errors;       /* completions with status != SUCCESS */
} dmr_be_stats_t;

#define DMR_BE_CAP_DRIVEN 0x1u /* single-threaded, advanced by progress()
                                  (sim); else one thread per worker (verbs) */

typedef struct dmr_be dmr_be_t;

typedef struct dmr_be_ops {
	size_t size; /* sizeof(dmr_be_ops_t): checked at registration */
	const char *name;
	uint32_t caps;
	dmr_status_t (*open)(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err);
	void (*close)(dmr_be_t *be);
	/* Register local memory that WRs of `worker` will use as local buffers. */
	dmr_status_t (*mr_reg)(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			       dmr_err_t *err);
	/* Post n WRs (one doorbell) on worker's endpoint to MN `mn`. Alignment
	 * is checked by dmr_be_post before this is called. */
	dmr_status_t (*post)(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err);
	/* Up to max completions of worker; returns count (>= 0). */
	int (*poll)(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max);
	uint64_t (*now)(dmr_be_t *be, uint32_t worker);
	/* Deliver a DMR_WR_TIMER completion with wr_id to worker at time at_ps. */
	dmr_status_t (*timer)(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id);
	dmr_status_t (*barrier)(dmr_be_t *be, uint64_t deadline_ps, dmr_err_t *err);
	/* DRIVEN backends: advance until a worker has completions to handle and
	 * return its id (its clock is then that worker's now()); -1 when no
	 * event is left or simulated time would pass until_ps. */
	int (*progress)(dmr_be_t *be, uint64_t until_ps);
	/* The MN region as local memory (sim; verbs: the MN role's own region),
	 * NULL when not local. */
	void *(*mn_memory)(dmr_be_t *be, uint32_t mn, uint64_t *len_p);
	void (*stats)(dmr_be_t *be, dmr_be_stats_t *st);
	/* Charge `ps` of CPU time to worker (sim: advances its clock; verbs:
	 * nothing, the CPU is real). */
	void (*charge)(dmr_be_t *be, uint32_t worker, uint64_t ps);
	/* Optional (NULL: the tag itself): the value a lock CAS of `worker`
	 * with swap value `tag` leaves in MN memory, as a READ of the lock word
	 * returns it (verbs CN role: the tag with the CN index added). */
	uint64_t (*lock_word)(dmr_be_t *be, uint32_t worker, uint64_t tag);
} dmr_be_ops_t;

struct dmr_be {
	const dmr_be_ops_t *ops;
	dmr_be_config_t cfg;
};

/* Look a backend up by name in the registry (backends/registry.c) and open
 * it. Errors: DMR_ERR_NODEV (unknown name: err lists the known ones), or
 * the backend's own open error. */
dmr_status_t dmr_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err);
/* Comma-separated names of the registered backends (static string). */
const char *dmr_be_names(void);

/* Shared stub for unsupported operations (rdma-core dummy_ops.c style). */
dmr_status_t dmr_be_unsupported(void);

static inline void dmr_be_close(dmr_be_t *be)
{
	if (be)
		be->ops->close(be);
}

static inline dmr_status_t dmr_be_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
					 dmr_err_t *err)
{
	return be->ops->mr_reg(be, worker, addr, len, err);
}

/*
 * Post a doorbell batch. Refuses, before posting anything: n == 0 or
 * n > 4096 (DMR_ERR_INVALID), an unknown opcode, an atomic whose remote
 * offset is not 8-byte aligned (DMR_ERR_INVALID, naming the WR's index,
 * wr_id and offset), worker or mn out of range (DMR_ERR_RANGE).
 */
dmr_status_t dmr_be_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			 uint32_t n, dmr_err_t *err);

static inline int dmr_be_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	return be->ops->poll(be, worker, wcs, max);
}

static inline uint64_t dmr_be_now(dmr_be_t *be, uint32_t worker)
{
	return be->ops->now(be, worker);
}

static inline dmr_status_t dmr_be_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps,
					uint64_t wr_id)
{
	return be->ops->timer(be, worker, at_ps, wr_id);
}

static inline dmr_status_t dmr_be_barrier(dmr_be_t *be, uint64_t deadline_ps, dmr_err_t *err)
{
	return be->ops->barrier(be, deadline_ps, err);
}

static inline int dmr_be_progress(dmr_be_t *be, uint64_t until_ps)
{
	return be->ops->progress(be, until_ps);
}

static inline void *dmr_be_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	return be->ops->mn_memory(be, mn, len_p);
}

static inline void dmr_be_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	be->ops->stats(be, st);
}

static inline void dmr_be_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	be->ops->charge(be, worker, ps);
}

static inline uint64_t dmr_be_lock_word(dmr_be_t *be, uint32_t worker, uint64_t tag)
{
	return be->ops->lock_word ? be->ops->lock_word(be, worker, tag) : tag;
}

/* Convenience single-WR posts; all go through dmr_be_post. */
dmr_status_t dmr_be_post_one(dmr_be_t *be, uint32_t worker, uint32_t mn, uint8_t opcode,
			     uint64_t wr_id, void *local, uint64_t remote, uint32_t length,
			     uint64_t compare_add, uint64_t swap, dmr_err_t *err);

#endif /* DMR_BACKEND_H */
