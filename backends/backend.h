/*
 * backends/backend.h - the one interface between the transaction core and a
 * transport (ARCHITECTURE.md "The backend interface").
 *
 * A backend is a table of operations (dmr_be_ops_t, filled with designated
 * initialisers, starting with its size as libfabric's fi_ops_* do) behind a
 * handle whose first member points at the table. Public calls are one-line
 * static inline dispatchers. Backends are listed in backends/registry.c.
 *
 * Registration (dmr_be_open, dmr_be_open_ops) checks the table's size and
 * that it has open and close, and gives the handle a filled copy of the
 * table: every operation the backend left NULL points at a shared typed stub
 * (rdma-core's verbs_set_ops, libfabric's ofi_enosys.h). What each stub does
 * is written at its member below ("NULL:"); most answer DMR_ERR_UNSUPPORTED.
 * So a caller never tests an operation for NULL, and a backend writes no
 * no-op functions of its own.
 *
 * Shapes: the cluster has `mns` memory nodes (MN) and `cns` compute nodes
 * (CN), each CN runs `workers` workers; worker ids are global within the
 * handle, w = cn * workers + t. Each worker has one endpoint (RC QP) per MN
 * and one completion queue (CQ). A remote address is a byte offset into the
 * MN's registered region (the backend adds base address and rkey). A process
 * may hold only some CNs of a larger cluster (the verbs CN role): it then
 * numbers its own workers from 0 and says where they sit in the cluster with
 * DMR_BE_CTL_ROLE.
 *
 * Time: dmr_be_now() is picoseconds since the run began (simulated on sim,
 * CLOCK_MONOTONIC on verbs and shm).
 *
 * Completion rule (libuv's): a post that returns an error produces no
 * completion; a post that returns DMR_OK produces exactly one completion for
 * every WR flagged DMR_WR_SIGNALED, and one for any WR that fails, whether
 * signaled or not. Completions of one endpoint arrive in posting order (RC).
 * Breaking this breaks the core: its contexts wait for completions forever.
 *
 * wr_id: the backend returns each WR's wr_id unchanged in its completion and
 * never interprets it; callers encode it with core/base/wrid.h.
 *
 * Atomics (CAS, FAA, MASKED_CAS) operate on 8 bytes at an 8-byte aligned remote offset;
 * the old value is written to the WR's local buffer (8 bytes, host order).
 * An unaligned atomic is refused by dmr_be_post() itself, on every backend,
 * with DMR_ERR_INVALID before anything is posted (InfiniBand Architecture
 * Specification vol. 1 rel. 1.4, 9.4.5: atomic operations require natural
 * 8-byte alignment).
 *
 * A run, as the replay engine drives it: open; load the MN region
 * (mn_memory); control(ROLE) for where this process sits; mr_reg of each
 * context's buffers; barrier(START); posts, polls, timers until the last
 * completion; barrier(END) with the committed delta; stats; verification of
 * the MN region (mn_memory); mr_dereg of every registration; close.
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
	/* Masked compare-and-swap (Mellanox/NVIDIA mlx5 extended atomics,
	 * MLNX_OFED's IBV_EXP_WR_EXT_MASKED_ATOMIC_CMP_AND_SWP with 8-byte
	 * operands, as CREST's src/rdma/Doorbell.h LockColumns posts it): with
	 * old the remote word, if ((old ^ compare_add) & compare_mask) == 0
	 * the word becomes (old & ~swap_mask) | (swap & swap_mask); either way
	 * old goes to local. Only the bits of compare_mask are compared, only
	 * those of swap_mask swapped. Timed as a CAS (one atomic). Only on a
	 * backend whose caps have DMR_BE_CAP_MASKED_CAS (sim, shm; upstream
	 * rdma-core and UCX have no masked CAS verb): dmr_be_post refuses it on
	 * the others with DMR_ERR_UNSUPPORTED naming the backend. */
	DMR_WR_MASKED_CAS = 5,
	/* completion-only: the answer of an RPC sent with dmr_be_rpc() (below);
	 * dmr_be_post refuses it as a WR opcode */
	DMR_WR_RPC = 6,
} dmr_wr_opcode_t;

#define DMR_WR_SIGNALED 0x1u

/* One work request. length: READ/WRITE bytes (0 allowed: completes, moves
 * nothing); atomics ignore it (8). local: READ destination, WRITE source,
 * atomic old-value destination; must stay valid until the completion. */
typedef struct dmr_wr {
	uint64_t wr_id;
	void *local;
	uint64_t remote;       /* byte offset in the MN region */
	uint64_t compare_add;  /* CAS: compare value; FAA: addend */
	uint64_t swap;	       /* CAS: swap value */
	uint64_t compare_mask; /* MASKED_CAS: bits compared (others: unused) */
	uint64_t swap_mask;    /* MASKED_CAS: bits swapped (others: unused) */
	uint32_t length;       /* bytes */
	uint8_t opcode;	       /* dmr_wr_opcode_t */
	uint8_t flags;	       /* DMR_WR_SIGNALED */
} dmr_wr_t;

typedef enum dmr_wc_status {
	DMR_WC_SUCCESS = 0,
	DMR_WC_REM_ACCESS_ERR = 1, /* outside the MR / bad rkey */
	DMR_WC_FLUSH_ERR = 2,	   /* endpoint in error, WR flushed */
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
	const char *backend; /* "sim" | "verbs" */
	uint32_t mns;	     /* memory nodes, 1..DMR_BE_MAX_MNS */
	uint32_t cns;	     /* compute nodes */
	uint32_t workers;    /* workers per CN */
	uint64_t mr_size;    /* bytes of each MN region */
	uint64_t seed;	     /* for any random model choices */
	const char *profile; /* sim: model name or path (models/model.h) */
	const char *device;  /* verbs: device name or index */
	int port;	     /* verbs: port (1-based) */
	int gid_index;	     /* verbs: -1 = automatic */
	const char *cluster; /* verbs: cluster config JSON path */
	const char *fault;   /* fault:INNER: the fault spec (backends/fault/fault.h,
				docs/FAULTS.md); NULL: $DMR_FAULT, else none */
} dmr_be_config_t;

/* Counters every backend keeps; read with dmr_be_stats(). */
typedef struct dmr_be_stats {
	uint64_t verbs; /* completed one-sided operations (all opcodes) */
	uint64_t reads, writes, cas, faa;
	uint64_t bytes_read, bytes_written;
	uint64_t doorbells;
	uint64_t events;      /* sim: discrete events processed */
	uint64_t errors;      /* completions with status != SUCCESS */
	uint64_t mr_regs;     /* successful dmr_be_mr_reg calls (counted by the */
	uint64_t mr_deregs;   /*   dispatchers, every backend); and mr_dereg */
	uint64_t rpcs;	      /* RPCs answered (dmr_be_rpc) */
	uint64_t rpc_busy_ps; /* sim: MN CPU time their handlers took, ps, summed
				 over every MN's cores (0: not modelled); verbs:
				 measured, the MN service threads' time in handlers */
	uint32_t rpc_cores;   /* sim: MN CPU cores serving RPCs (verbs: 1 thread per
				 MN that served one), summed over the
				 MNs (rpc_busy_ps / (rpc_cores x run time) is the
				 MN CPU utilisation; 0: not modelled) */
} dmr_be_stats_t;

#define DMR_BE_CAP_DRIVEN                                                                          \
	0x1u /* single-threaded, advanced by progress()                                            \
		(sim); else one thread per worker (verbs) */
#define DMR_BE_CAP_MASKED_CAS                                                                      \
	0x2u /* executes DMR_WR_MASKED_CAS (sim, shm; wrappers follow their inner backend) */
#define DMR_BE_CAP_DM_APART                                                                        \
	0x4u /* --dm-locks puts the lock-word region (lock words apart from their records,         \
		core/layout.h) in device memory (DMR_BE_CTL_LOCK_REGION; verbs); without it        \
		a backend answering DMR_BE_CTL_DM_LOCKS models device memory with the words in     \
		their records (sim) */
#define DMR_BE_CAP_RPC                                                                             \
	0x8u /* serves dmr_be_rpc (sim, shm; not the fault and record wrappers: they do not wrap   \
		it, nor verbs and ucx) */

/* 1 if be executes DMR_WR_MASKED_CAS (its caps have DMR_BE_CAP_MASKED_CAS). */
#define dmr_be_has_masked_cas(be) (((be)->ops->caps & DMR_BE_CAP_MASKED_CAS) != 0)

typedef struct dmr_be dmr_be_t;

/*
 * Control operations (SQLite's xFileControl): one entry point for what only
 * some backends know or can change. dmr_be_control(be, op, arg, err); `arg`
 * points at the type named here. A backend answers the ops it knows and
 * returns DMR_ERR_UNSUPPORTED (err naming the backend and the op) for any
 * other op code, including codes added after it was written. Output
 * arguments are written only on DMR_OK.
 */
typedef enum dmr_be_ctl {
	/* arg: const struct dmr_model ** (models/model.h). Out: the
	 * performance model the backend runs (sim: its profile, with any
	 * SET_MTU applied); owned by the backend, valid until close.
	 * sim: DMR_OK; shm, verbs: DMR_ERR_UNSUPPORTED (no model). */
	DMR_BE_CTL_MODEL = 1,
	/* arg: uint64_t *. Out: global simulated time, ps: the time of the last
	 * event processed (at the end of a run, the simulated end time), as
	 * opposed to dmr_be_now(), one worker's clock. sim: DMR_OK; threaded
	 * backends: DMR_ERR_UNSUPPORTED. */
	DMR_BE_CTL_SIM_TIME = 2,
	/* arg: const uint32_t *: the path MTU to model from now on, bytes; one
	 * of the IB MTUs 256, 512, 1024, 2048, 4096, else DMR_ERR_INVALID (err
	 * names it). Call before the first post. sim: DMR_OK; verbs and shm:
	 * DMR_ERR_UNSUPPORTED (the ports' MTU is used). */
	DMR_BE_CTL_SET_MTU = 3,
	/* arg: const int *: 1 = READ and WRITE move their bytes (the default),
	 * 0 = timing only: READ and WRITE move no bytes (atomics still do),
	 * modelled times unchanged (the KV pool folded onto a small region).
	 * sim: DMR_OK; others: DMR_ERR_UNSUPPORTED (they always move bytes). */
	DMR_BE_CTL_SET_PAYLOAD = 4,
	/* arg: dmr_be_role_t *. Out: where this handle's workers sit in the
	 * cluster. sim, shm and verbs loopback hold the whole cluster: cn 0,
	 * cns = cfg.cns, first_worker 0, workers = cfg.cns * cfg.workers. A
	 * backend that does not answer (DMR_ERR_UNSUPPORTED) is taken to hold
	 * the whole cluster too. */
	DMR_BE_CTL_ROLE = 5,
	/* arg: dmr_be_mn_stats_t * pointing at cfg.mns entries. Out: each
	 * MN's counters (dmr_be_mn_stats_t below) since open. sim: every
	 * field; shm and verbs: the counts (the *_busy_ps fields 0: no model);
	 * a backend that does not answer (DMR_ERR_UNSUPPORTED) has no per-MN
	 * figures. */
	DMR_BE_CTL_MN_STATS = 6,
	/* arg: const dmr_be_dm_locks_t * (below). Place the lock words of
	 * the given MN-region ranges in the MN NICs' device memory (issue 16;
	 * docs/MODEL.md "Device memory"), before the first post. sim: the
	 * atomics on those ranges are served by the device-memory atomic unit
	 * at the profile's dm_* rates; DMR_ERR_INVALID when the profile has no
	 * device memory or the lock words do not fit (err gives both sizes).
	 * verbs (DMR_BE_CAP_DM_APART): not the way it takes --dm-locks (the
	 * replay lays the lock words apart and sends DMR_BE_CTL_LOCK_REGION
	 * with dm 1); asked anyway: DMR_ERR_INVALID naming the device and
	 * its max_dm_size. Others: DMR_ERR_UNSUPPORTED. */
	DMR_BE_CTL_DM_LOCKS = 8,
	/* arg: const dmr_be_dm_locks_t * (its lock_bytes ignored). The given
	 * MN-region ranges (whole tables) live on the MN's CXL-attached memory
	 * tier (issue 16; docs/MODEL.md "CXL"), before the first post. sim:
	 * DMR_ERR_INVALID when the profile has no CXL tier (cxl_*). Others:
	 * DMR_ERR_UNSUPPORTED. */
	DMR_BE_CTL_CXL_TABLES = 9,
	/* arg: const dmr_be_lock_region_t * (below). The layout's lock-word
	 * region (lock words apart from their records, core/layout.h
	 * dmr_layout_locks; issue 16 item 3), the same offsets on every MN,
	 * is served from memory of its own, before the first post: every WR
	 * whose remote offset falls in it goes there (the offsets stay the
	 * region's: the core is unchanged). verbs (loopback): dm 1 = NIC
	 * device memory on each MN (ibv_alloc_dm + ibv_reg_dm_mr, zeroed;
	 * DMR_ERR_INVALID naming the device when max_dm_size is 0 or smaller
	 * than len), dm 0 = a host buffer of its own (ibv_reg_mr); both
	 * initialised from that range of the MN region, and mn_memory()
	 * shows the words (copied back into the range when WRs completed
	 * since the last copy: call it when the workers are quiet; RDMA no
	 * longer addresses the range). verbs CN
	 * role: DMR_ERR_INVALID (not done for the roles yet). Others:
	 * DMR_ERR_UNSUPPORTED (the words are in their region, host memory). */
	DMR_BE_CTL_LOCK_REGION = 10,
	/* arg: const dmr_be_rpc_mode_t * (below). The run will send RPCs
	 * (dmr_be_rpc), before the first post. verbs: DMR_ERR_INVALID when
	 * mixed and the device's atomic_cap is not IBV_ATOMIC_GLOB (the MN
	 * CPU's atomics on lock words are then not guaranteed atomic with the
	 * NIC's RDMA atomics on them: err names the device and its
	 * atomic_cap), or in the CN role (no RPC path across processes); a
	 * later DMR_BE_CTL_LOCK_REGION is refused (the handler reads lock
	 * words in the region). Others: DMR_ERR_UNSUPPORTED (nothing to
	 * check: sim models the MN CPU, shm's atomics are the CPU's). */
	DMR_BE_CTL_RPC_MODE = 11,
	/* arg: const dmr_be_lazy_init_t * (below). Instead of the caller
	 * writing the initial region through mn_memory(): the backend has
	 * init write a piece of the initial image when a WRITE or an atomic
	 * first reaches it (a READ gets it computed, nothing stored), so the
	 * memory a run never writes costs nothing (issue 13: on the
	 * project's machines first touching a 4 KiB page costs about 3 us,
	 * and TPC-C's loaded tables are ~270 MB, nearly all untouched).
	 * Before the first post, before any mn_memory(). After it,
	 * mn_memory() writes the whole image into the region (its raw
	 * pointer then shows everything, as if loaded: one call costs what
	 * loading did) and DMR_BE_CTL_MN_READ reads without storing. sim:
	 * DMR_OK, DMR_ERR_NOMEM (err names the MN); others:
	 * DMR_ERR_UNSUPPORTED (load through mn_memory()). */
	DMR_BE_CTL_LAZY_INIT = 12,
	/* arg: dmr_be_mn_read_t * (below). Copy bytes [off, off + len) of MN
	 * mn's region, as the WRs see them, into buf, without touching pages
	 * no WR has reached (their initial image is computed into buf):
	 * verification reads through it; written says whether a byte of the
	 * range may differ from the initial image (buf NULL: only that).
	 * DMR_ERR_RANGE when mn or the range is outside the regions. sim:
	 * DMR_OK; others: DMR_ERR_UNSUPPORTED (read mn_memory()). */
	DMR_BE_CTL_MN_READ = 13,
	/* arg: dmr_be_streams_t * (below), the caller's, kept by the backend
	 * until close or the next STREAMS call (n 0: none). Lets the backend
	 * refill a worker's run of slices itself (issue 13: kv run's 64 KiB
	 * slices went one by one through poll, the KV engine and post), with
	 * the same results as the caller doing it. sim: DMR_OK;
	 * DMR_ERR_INVALID when w0 + n passes the workers. Wrappers (fault,
	 * record) and the others: DMR_ERR_UNSUPPORTED (the caller polls and
	 * posts every slice itself). */
	DMR_BE_CTL_STREAMS = 14,
} dmr_be_ctl_t;

/*
 * DMR_BE_CTL_STREAMS: one stream per worker w0 .. w0 + n - 1, a transfer of
 * `len` bytes in slices of `slice` bytes (the last may be shorter), every
 * slice a signalled WR of `opcode` (READ or WRITE) with the same wr_id and
 * local buffer, on the worker's QP to MN `mn`, at most `depth` in flight.
 * Slice k goes to remote base + k x slice, or, folded (fold_mod > 0), to
 * base + (rpos & ~63) where rpos starts at the caller's value and grows by
 * the slice length modulo fold_mod (core/kv/xfer.c remote_at).
 *
 * What the caller would do with completions of a worker (it is handed the
 * worker by progress(), polls at most 64, then posts slices while fewer
 * than depth are in flight, up to 64 per doorbell) the backend does itself,
 * at the same simulated times (the poll's and the posts' CPU time), when:
 * wr_id is not 0; every completion polled is a successful slice of the
 * stream and none ends the transfer (done + polled x slice < len); every
 * slice to post is a whole slice of it and not its last (posted + slice x
 * to_post < len); global time is before until_ps; and the QP is not in
 * error. Then it moves posted, done, rpos and inflight on, counts the
 * completions in `handled` and the slices posted in `sposted`, and marks
 * the stream dirty (its index in dirty[], once until the caller clears
 * both counts). Otherwise the worker is handed to the caller as before.
 * The caller reads the dirty streams back whenever progress() returns,
 * before it uses its own copy, and sets a stream again after changing the
 * transfer (wr_id 0: none). The whole struct and the arrays are the
 * caller's; the backend writes only the fields marked "backend".
 */
typedef struct dmr_be_stream {
	uint64_t wr_id; /* 0: no stream on this worker */
	void *local;
	uint64_t base, fold_mod;
	uint64_t len;	   /* the transfer's bytes */
	uint64_t posted;   /* backend: bytes posted */
	uint64_t done;	   /* backend: bytes completed */
	uint64_t rpos;	   /* backend: folded position of the next slice */
	uint64_t handled;  /* backend: completions handled since cleared */
	uint64_t sposted;  /* backend: slices posted since cleared */
	uint32_t slice;	   /* bytes */
	uint32_t depth;	   /* slices in flight at most */
	uint32_t inflight; /* backend: the worker's slices in flight */
	uint8_t opcode;	   /* DMR_WR_READ or DMR_WR_WRITE */
	uint8_t mn;
	uint8_t dirty; /* backend: listed in dirty[] */
} dmr_be_stream_t;

typedef struct dmr_be_streams {
	dmr_be_stream_t *s; /* n, worker w0 + i's at i */
	uint32_t w0, n;
	uint64_t until_ps; /* handle nothing at or after this global time, ps */
	uint32_t *dirty;   /* n entries; backend: appends */
	uint32_t ndirty;   /* backend: grows; the caller resets */
} dmr_be_streams_t;

/* DMR_BE_CTL_LAZY_INIT: init(arg, mn, off, len, dst) writes the initial
 * image of bytes [off, off + len) of MN mn's region into dst (dst[0] is
 * byte off; dst holds zeros), any range. Called from the backend's
 * progress(), control() and mn_memory(); must not call the backend. */
typedef void (*dmr_be_init_fn)(void *arg, uint32_t mn, uint64_t off, uint64_t len, uint8_t *dst);
typedef struct dmr_be_lazy_init {
	dmr_be_init_fn init;
	void *arg;
} dmr_be_lazy_init_t;

/* DMR_BE_CTL_MN_READ: what to read and where to (buf: len bytes, the
 * caller's; NULL: nothing copied). written (out): 0 when no WR has
 * written a byte of the range since DMR_BE_CTL_LAZY_INIT (it holds the
 * initial image: sim, no 512-byte page of it stored), 1 otherwise (also
 * once the image was written whole: mn_memory(), an RPC). */
typedef struct dmr_be_mn_read {
	uint32_t mn;
	uint64_t off, len;
	void *buf;
	int written;
} dmr_be_mn_read_t;

/* DMR_BE_CTL_RPC_MODE: whether RPC handlers and one-sided transactions
 * may take the same lock words at the same time (--rpc half, aura's A1,
 * --rpc all over several MNs, where a transaction spanning MNs runs
 * one-sided) or not (--rpc all on one MN). */
typedef struct dmr_be_rpc_mode {
	int mixed;
} dmr_be_rpc_mode_t;

/* DMR_BE_CTL_LOCK_REGION: [off, off + len) of every MN region (64-byte
 * aligned, len > 0) and where it lives. */
typedef struct dmr_be_lock_region {
	uint64_t off, len; /* bytes into the MN region */
	int dm;		   /* 1: NIC device memory; 0: host memory */
} dmr_be_lock_region_t;

/* DMR_BE_CTL_DM_LOCKS: ranges of every MN region (the same offsets on each
 * MN, core/layout.h) whose atomics target lock words in device memory, and
 * the bytes of lock words they hold (8 per record: the device-memory
 * footprint, checked against the NIC's). */
#define DMR_BE_DM_MAX_RANGES 32u
typedef struct dmr_be_dm_locks {
	uint32_t n;			    /* ranges, 1..DMR_BE_DM_MAX_RANGES */
	uint64_t off[DMR_BE_DM_MAX_RANGES]; /* start, bytes into the region */
	uint64_t len[DMR_BE_DM_MAX_RANGES]; /* length, bytes */
	uint64_t lock_bytes;		    /* device memory they need per MN */
} dmr_be_dm_locks_t;

/* The most memory nodes a cluster may have (issue 11: 1..16). */
#define DMR_BE_MAX_MNS 16u

/* The most CNs and workers per CN a backend is opened with (cfg.cns,
 * cfg.workers): sim and verbs refuse more in open; run checks --cns and
 * --threads against them with its options, naming the option. */
#define DMR_BE_MAX_CNS 1024u
#define DMR_BE_MAX_WORKERS 1024u

/* DMR_BE_CTL_MN_STATS: one MN's load. Counts are of WRs this MN executed
 * (completed without error), as seen by this handle's workers. Busy times
 * are simulated time its resources were occupied, ps (sim only): divided
 * by the run's simulated time they are utilisations in [0, 1]. */
typedef struct dmr_be_mn_stats {
	uint64_t verbs; /* one-sided operations executed at this MN */
	uint64_t reads, writes, atomics;
	uint64_t bytes_read, bytes_written; /* payload bytes */
	uint64_t link_down_busy_ps;	    /* switch -> MN direction of its link */
	uint64_t link_up_busy_ps;	    /* MN -> switch */
	uint64_t nic_busy_ps;		    /* the MN NIC's message processing */
	uint64_t dma_busy_ps;		    /* PCIe/DMA engines, read + write */
	uint64_t atomic_busy_ps;	    /* the atomic unit on host memory */
	uint64_t dm_atomic_busy_ps;	    /* sim: the device-memory atomic unit
					       (--dm-locks; 0: not used) */
	uint64_t qpc_misses;		    /* sim: QP-context cache misses at
					       its NIC (0: not modelled) */
	uint64_t rpcs;			    /* RPCs its CPU answered (dmr_be_rpc) */
	uint64_t rpc_busy_ps;		    /* sim: its CPU cores' busy time
					       serving them, summed over cores */
} dmr_be_mn_stats_t;

/* DMR_BE_CTL_ROLE: this handle runs CNs [cn, cn + cfg.cns) of a cluster of
 * `cns` CNs, and its worker w is worker first_worker + w of the cluster's
 * `workers`. The transaction core makes lock tags and log-ring offsets
 * unique over the cluster from it (core/txn.h). */
typedef struct dmr_be_role {
	uint32_t cn;	       /* index of this handle's first CN */
	uint32_t cns;	       /* CNs in the cluster */
	uint32_t first_worker; /* cluster-wide index of this handle's worker 0 */
	uint32_t workers;      /* workers in the cluster (all CNs) */
} dmr_be_role_t;

/* Name of a control op ("model", "sim-time", ...; "?" if unknown). */
const char *dmr_be_ctl_string(int op);

/*
 * The cluster barrier (dmr_be_barrier). Every process that runs CNs of the
 * cluster (a participant: one backend handle) calls it twice per run:
 *  - START, after the MN region is loaded (mn_memory) and the contexts'
 *    memory registered, before the first transaction's first post: returns
 *    when every participant has arrived and the MN holds the initial state;
 *  - END, after this participant's last completion (its workers are quiet),
 *    before stats() and before the MN region is verified: returns when
 *    every participant has ended, with *sum_p = the sum over participants
 *    of their `value` (two's complement), and mn_memory() then holds the
 *    final state of the MN region.
 * deadline_ps: dmr_be_now() time by which the others must have arrived; 0 =
 * the backend's default. failed (END): this participant's run failed; the
 * backend tells the others (their END fails naming it) and returns without
 * waiting; *sum_p is not set and mn_memory() is not refreshed.
 * Errors: DMR_ERR_TIMEOUT (the deadline passed: err names the participants
 * missing), DMR_ERR_REMOTE (another participant failed, or the MN cannot be
 * reached), DMR_ERR_INVALID (bad phase; participants that disagree on the
 * run's shape, e.g. threads per CN). After an error no further barrier of
 * the run succeeds.
 * A single process (sim, shm, verbs loopback; the stub when NULL) is the
 * only participant: both phases return DMR_OK at once, *sum_p = value.
 */
typedef enum dmr_be_barrier_phase {
	DMR_BE_BARRIER_START = 1,
	DMR_BE_BARRIER_END = 2,
} dmr_be_barrier_phase_t;

typedef struct dmr_be_barrier {
	uint32_t phase;	      /* dmr_be_barrier_phase_t */
	uint32_t failed;      /* END: non-zero = this participant's run failed */
	uint64_t deadline_ps; /* dmr_be_now() time; 0 = the backend's default */
	int64_t value;	      /* this participant's contribution (END: the
				 committed delta of the run, trace "xv") */
} dmr_be_barrier_t;

/*
 * RPC to a memory node's CPU (issue 14 lever A1; docs/AURA.md "A1"). As
 * opposed to the one-sided WRs, which the MN's NIC executes, an RPC is
 * executed by the MN's CPU: `req_bytes` of request go CN -> MN as one SEND
 * message, one of the MN's RPC cores runs `handler(arg, mem, mem_len)` on
 * the MN's region (mem: the MN region as local memory, mem_len bytes), and
 * the handler's response (its return value: bytes, at most resp_cap, which
 * the handler wrote where `arg` says) goes MN -> CN as one SEND; then one
 * completion arrives on the worker's CQ: opcode DMR_WR_RPC, wr_id as given,
 * mn, byte_len = the response bytes (status SUCCESS; a backend that cannot
 * reach the MN completes it with an error status, handler not run).
 *
 * The handler runs once, on the backend's thread of control at the MN
 * (sim: at the simulated time its core finishes the request, deterministic;
 * shm: inline, in dmr_be_rpc, on the posting thread: concurrently with other
 * workers' one-sided WRs, so it must take lock words with real atomics).
 * It may read and write any byte of mem; it must not call the backend.
 * `accesses` is the number of record accesses the handler will make, given
 * by the caller before it runs (the sim charges the core
 * mn_rpc_req_ns + accesses x mn_rpc_op_ns, models/model.h).
 *
 * Ownership: rpc is read during the call only; arg (and whatever the
 * handler writes through it) must stay valid until the completion. The
 * request's bytes are modelled only (the handler reads what it needs
 * through arg: the backends that serve RPCs run the CN and the MN in one
 * process); a backend across processes would have to ship them.
 * Ordering: an RPC is not ordered with the WRs of the worker's endpoint to
 * the same MN (a SEND and the answer's SEND, not an RC response): post the
 * next WR after the RPC's completion when order matters.
 */
typedef uint32_t (*dmr_be_rpc_fn)(void *arg, uint8_t *mem, uint64_t mem_len);

typedef struct dmr_be_rpc {
	uint64_t wr_id;
	dmr_be_rpc_fn handler; /* required */
	void *arg;	       /* the handler's; valid until the completion */
	uint32_t req_bytes;    /* request message, bytes (>= 1) */
	uint32_t resp_cap;     /* most response bytes the handler may return */
	uint32_t accesses;     /* record accesses the handler makes (cost) */
} dmr_be_rpc_t;

/*
 * The operations. Members marked "NULL:" may be left unset; registration
 * points them at the shared stub described. open and close are required.
 */
typedef struct dmr_be_ops {
	size_t size; /* sizeof(dmr_be_ops_t): checked at registration */
	const char *name;
	uint32_t caps;
	dmr_status_t (*open)(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err);
	void (*close)(dmr_be_t *be);
	/* Register local memory that WRs of `worker` will use as local
	 * buffers; it stays the caller's, and registered until mr_dereg (or
	 * close). NULL: nothing to register (DMR_OK). */
	dmr_status_t (*mr_reg)(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			       dmr_err_t *err);
	/* Deregister what mr_reg(be, worker, addr, ...) registered. No WR of
	 * worker using it may be in flight (its completion, or a later one of
	 * the same endpoint, has been polled). DMR_ERR_INVALID if addr is not
	 * registered for worker. NULL: nothing to deregister (DMR_OK). */
	dmr_status_t (*mr_dereg)(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err);
	/* Post n WRs (one doorbell) on worker's endpoint to MN `mn`. Alignment
	 * is checked by dmr_be_post before this is called.
	 * NULL: DMR_ERR_UNSUPPORTED. */
	dmr_status_t (*post)(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err);
	/* Up to max completions of worker; returns their count (>= 0), or a
	 * negative dmr_status_t. NULL: DMR_ERR_UNSUPPORTED. */
	int (*poll)(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max);
	/* worker's clock, ps since the run began. NULL: 0. */
	uint64_t (*now)(dmr_be_t *be, uint32_t worker);
	/* Deliver a DMR_WR_TIMER completion with wr_id to worker at time at_ps;
	 * timers due together come in time order. worker is in range
	 * (dmr_be_timer checks it). NULL: DMR_ERR_UNSUPPORTED. */
	dmr_status_t (*timer)(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id);
	/* The cluster barrier (dmr_be_barrier_t above). NULL: a single
	 * process (DMR_OK at once, *sum_p = value). */
	dmr_status_t (*barrier)(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
				dmr_err_t *err);
	/* DRIVEN backends: advance until a worker has completions to handle and
	 * return its id (its clock is then that worker's now()); -1 when no
	 * event is left or simulated time would pass until_ps.
	 * NULL: -1 (threaded backends: workers poll their own CQs). */
	int (*progress)(dmr_be_t *be, uint64_t until_ps);
	/* The MN region as local memory (sim, shm; verbs: the loopback MN's
	 * region, or the CN role's shadow of it), NULL when not local.
	 * NULL: NULL. */
	void *(*mn_memory)(dmr_be_t *be, uint32_t mn, uint64_t *len_p);
	/* The backend's counters (mr_regs/mr_deregs are filled in by
	 * dmr_be_stats). NULL: all zero. */
	void (*stats)(dmr_be_t *be, dmr_be_stats_t *st);
	/* Charge `ps` of CPU time to worker (sim: advances its clock; others:
	 * the CPU is real). NULL: nothing. */
	void (*charge)(dmr_be_t *be, uint32_t worker, uint64_t ps);
	/* Control operations (dmr_be_ctl_t above): DMR_ERR_UNSUPPORTED for an
	 * op the backend does not know. NULL: DMR_ERR_UNSUPPORTED for all. */
	dmr_status_t (*control)(dmr_be_t *be, int op, void *arg, dmr_err_t *err);
	/* Send an RPC (dmr_be_rpc_t above) from worker to MN mn (checked by
	 * dmr_be_rpc). Only with DMR_BE_CAP_RPC in caps. NULL:
	 * DMR_ERR_UNSUPPORTED naming the backend. */
	dmr_status_t (*rpc)(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			    dmr_err_t *err);
} dmr_be_ops_t;

/* The handle. A backend embeds it first in its own state and sets ops and
 * cfg in open(); registration then replaces ops with a pointer to `filled`
 * (the table given to dmr_be_open_ops with the stubs filled in, and the
 * caps of the table open() set: a wrapping backend sets a table of its own
 * whose caps are its inner backend's). The rest is the registry's. */
struct dmr_be {
	const dmr_be_ops_t *ops;
	dmr_be_config_t cfg;
	dmr_be_ops_t filled;
	uint64_t mr_regs, mr_deregs; /* counted by the dispatchers (atomic) */
};

/* Look a backend up by name in the registry (backends/registry.c) and open
 * it (dmr_be_open_ops). "fault:INNER" opens the fault-injection wrapper
 * (backends/fault/fault.h) around INNER, "record:INNER" the recording
 * wrapper (backends/record/record.h; DMR_ERR_IO: its file). Errors: DMR_ERR_NODEV (unknown
 * name: err lists the known ones), DMR_ERR_INVALID (a bad fault spec: err
 * names the fault and the field), or dmr_be_open_ops's. */
dmr_status_t dmr_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err);
/* Open a backend through `ops`, registered or not (tests, a wrapping
 * backend): checks the table (DMR_ERR_NODEV: ops->size is not
 * sizeof(dmr_be_ops_t); DMR_ERR_INVALID: no name, open or close), calls
 * ops->open, and gives the handle the filled copy of ops. Errors: those,
 * or the backend's own open error (nothing to close then). */
dmr_status_t dmr_be_open_ops(const dmr_be_ops_t *ops, const dmr_be_config_t *cfg, dmr_be_t **be_p,
			     dmr_err_t *err);
/* The caps (DMR_BE_CAP_*) of the backend `name` would open, without
 * opening it: a wrapper's ("fault:INNER", "record:INNER") are INNER's
 * without DMR_BE_CAP_RPC; 0
 * for an unknown name. */
uint32_t dmr_be_caps_of(const char *name);
/* Comma-separated names of the registered backends (static string). */
const char *dmr_be_names(void);
/* The backend a name finally runs on: "fault:sim" -> "sim", "record:fault:shm"
 * -> "shm", "sim" -> "sim"
 * (a pointer into name; NULL for NULL). */
const char *dmr_be_base_name(const char *name);

static inline void dmr_be_close(dmr_be_t *be)
{
	if (be)
		be->ops->close(be);
}

static inline dmr_status_t dmr_be_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
					 dmr_err_t *err)
{
	dmr_status_t st = be->ops->mr_reg(be, worker, addr, len, err);
	if (st == DMR_OK)
		__atomic_add_fetch(&be->mr_regs, 1, __ATOMIC_RELAXED);
	return st;
}

static inline dmr_status_t dmr_be_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr,
					   dmr_err_t *err)
{
	dmr_status_t st = be->ops->mr_dereg(be, worker, addr, err);
	if (st == DMR_OK)
		__atomic_add_fetch(&be->mr_deregs, 1, __ATOMIC_RELAXED);
	return st;
}

/*
 * Post a doorbell batch. Refuses, before posting anything: n == 0 or
 * n > 4096 (DMR_ERR_INVALID), an unknown opcode, an atomic whose remote
 * offset is not 8-byte aligned (DMR_ERR_INVALID, naming the WR's index,
 * wr_id and offset), worker or mn out of range (DMR_ERR_RANGE), a
 * DMR_WR_MASKED_CAS on a backend without DMR_BE_CAP_MASKED_CAS
 * (DMR_ERR_UNSUPPORTED, naming the backend).
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

/* Refuses worker >= cfg.cns * cfg.workers with DMR_ERR_RANGE before the
 * backend sees it (one check for every backend). */
static inline dmr_status_t dmr_be_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps,
					uint64_t wr_id)
{
	if (worker >= be->cfg.cns * be->cfg.workers)
		return DMR_ERR_RANGE;
	return be->ops->timer(be, worker, at_ps, wr_id);
}

/* The cluster barrier: see dmr_be_barrier_t. *sum_p is set only on DMR_OK
 * (and not with b->failed). */
static inline dmr_status_t dmr_be_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
					  dmr_err_t *err)
{
	return be->ops->barrier(be, b, sum_p, err);
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
	st->mr_regs = __atomic_load_n(&be->mr_regs, __ATOMIC_RELAXED);
	st->mr_deregs = __atomic_load_n(&be->mr_deregs, __ATOMIC_RELAXED);
}

static inline void dmr_be_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	be->ops->charge(be, worker, ps);
}

/* A control operation (dmr_be_ctl_t): DMR_ERR_UNSUPPORTED when the backend
 * does not know `op`. */
static inline dmr_status_t dmr_be_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	return be->ops->control(be, op, arg, err);
}

/* For a backend's control(): the DMR_ERR_UNSUPPORTED answer, err naming the
 * backend and the op. */
dmr_status_t dmr_be_ctl_unsupported(dmr_be_t *be, int op, dmr_err_t *err);

/* Send an RPC (dmr_be_rpc_t). Refuses, before the backend sees it: worker
 * or mn out of range (DMR_ERR_RANGE), no handler, req_bytes 0 or above
 * 1 MiB, resp_cap above 1 MiB (DMR_ERR_INVALID); a backend without
 * DMR_BE_CAP_RPC (DMR_ERR_UNSUPPORTED, err naming the backend). Then as
 * dmr_be_post: an error produces no completion, DMR_OK exactly one. */
dmr_status_t dmr_be_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			dmr_err_t *err);

/* Convenience single-WR posts; all go through dmr_be_post. */
dmr_status_t dmr_be_post_one(dmr_be_t *be, uint32_t worker, uint32_t mn, uint8_t opcode,
			     uint64_t wr_id, void *local, uint64_t remote, uint32_t length,
			     uint64_t compare_add, uint64_t swap, dmr_err_t *err);

#endif /* DMR_BACKEND_H */
