/*
 * replay/kv.h - the KV-cache pool workload (issue #5; phase 1: the sim
 * backend; phase 2: the threaded backends shm and verbs): its runs, the
 * transfer benchmark and `dmreplay kv`. The pool as a protocol (metadata,
 * transfers, mailbox RPC, master) is core/kv/ (core/kv/kv.h); the runners,
 * bench and command line are in replay/kv/ (replay/kv/README.md).
 *
 * Pieces (docs/KVCACHE.md has the full description and its limitations):
 *
 *  - The pool: the MN region is cut into `segments` equal segments (the
 *    "registered regions of the workers": the sim models one MN, so the
 *    workers' regions are slices of it), each with its own capacity in
 *    whole blocks. Blocks are fixed-size slots.
 *  - The master (in-process metadata): block id -> (segment, offset,
 *    length, state, pins); allocation with placement round-robin or
 *    least-loaded; an LRU list; when a put would take the pool above the
 *    high-water mark, unpinned blocks are evicted in LRU order down to the
 *    low-water mark. A lookup costs one modelled RPC (a timer of rpc_us on
 *    the client, by default the profile's small-READ round trip).
 *  - Clients: the backend's compute-node workers (cns x clients). A request
 *    goes to client (index mod clients); it is
 *      arrival -> master lookup (RPC) -> READ every block already in the
 *      pool (a block still being written by an earlier request is read
 *      when that put completes) -> WRITE the new blocks -> done.
 *    Latency = done - arrival (so it includes the RPC and any queueing).
 *    Each block transfer is cut into slices of `slice` bytes; a client
 *    keeps up to qp_depth slices in flight on its QP (pipelining).
 *  - Arrivals: open loop at t_us x time_scale, or closed loop with
 *    `outstanding` requests in flight. Requests start in trace order in
 *    both, so with an unbounded pool the hit ratio equals the one computed
 *    from the trace's hash ids alone.
 *
 * On sim, remote offsets are folded into a small real MN region
 * (sim_region bytes) when the pool is larger: the sim's READ/WRITE timing
 * does not depend on the address, so results are unchanged, but the block
 * contents are not preserved (nothing here reads them).
 *
 * On threaded backends (shm, verbs: one thread per client worker, each with
 * its own QP; time is CLOCK_MONOTONIC) the pool is real memory in the MN's
 * registered region, and the master is a thread next to the MN (kv run) or
 * in the MN process (kv mn, with kv cn client processes) that the
 * clients reach only through one-sided WRITE and READ: an RPC over mailbox
 * slots in the MN region (docs/KVCACHE.md section 9 gives the layout, sizes
 * and ordering). Every put writes a pattern derived from the block id and
 * offset; every get checks the bytes it READ against it. An unbounded pool
 * is sized from the trace's distinct block ids (a first pass over the
 * trace). The master serves LOOKUPs in trace order; a hit on a block whose
 * put is not finished waits for the block's ready word (READ polling).
 */
#ifndef DMR_KV_H
#define DMR_KV_H

#include <stdint.h>

#include "../backends/backend.h"
#include "../core/base/status.h"
#include "../core/kv/pool.h"	 /* dmr_kv_place_t */
#include "../core/kv/prefetch.h" /* Loop X */
#include "../core/kv/rpc.h"	 /* dmr_kv_geom_t, dmr_kv_geom_compare */

/* Option ranges of kv run (docs/KVCACHE.md section 5):
 * --time-scale 0..100 (x the trace's pace; the synthetic trace's 1,022 s
 * become at most 28 h of simulated time); --window-ms 1 us .. 1 h; the time
 * series stops the run (DMR_ERR_RANGE, partial results) at 1,000,000 rows
 * (about 60 MB of CSV): the run is longer than --window-ms can describe. */
#define DMR_KV_TIME_SCALE_MAX 100.0
#define DMR_KV_WINDOW_MS_MIN 0.001
#define DMR_KV_WINDOW_MS_MAX 3600000.0
#define DMR_KV_TS_MAX_ROWS 1000000u
/* The most slices a kv run takes on (issue #15: --slice 1 meant ~2e11
 * slices, hours of simulation): the trace's '# end' trailer gives its
 * blocks, x ceil(block_bytes / --slice) (x --requests / requests); above
 * this the run is refused before it starts, naming --slice. 1e9 slices is
 * about 10 minutes of sim wall time: measured on the shipped fixture
 * (tests/data/mooncake-200.jsonl, 5,330 blocks of 64 MiB) 5.46 M slices in
 * 2.8 s (default --slice 64K) and 87 M in 64 s (--slice 4K), 1.4-1.9 M
 * slices per wall-second on a shared 2-core VM. */
#define DMR_KV_MAX_SLICES 1000000000ull

typedef struct dmr_kv_opts {
	const char *trace;     /* KV trace (dmreplay kv gen) */
	const char *backend;   /* "sim" */
	const char *profile;   /* sim profile */
	const char *out_dir;   /* results directory (created); NULL = no files */
	uint32_t cns;	       /* compute nodes */
	uint32_t clients;      /* client workers per CN */
	uint32_t segments;     /* pool segments; 0 = cns x clients */
	int unbounded;	       /* no capacity limit, no eviction */
	uint64_t capacity;     /* pool bytes over all segments (bounded) */
	double high_water;     /* fraction of capacity that triggers eviction */
	double low_water;      /* eviction stops at this fraction */
	int placement;	       /* dmr_kv_place_t */
	double time_scale;     /* open loop: arrival = t_us x time_scale */
	uint32_t outstanding;  /* > 0: closed loop with this many in flight */
	uint64_t slice;	       /* slice bytes; 0 = one WR per block */
	uint32_t qp_depth;     /* slices in flight per client */
	double rpc_us;	       /* master RPC; < 0 = profile's read_rtt_ns */
	uint64_t sim_region;   /* bytes of real MN memory on sim */
	uint32_t mtu;	       /* 0 = profile's */
	uint64_t requests;     /* 0 = whole trace (the CLI refuses --requests 0) */
	double window_ms;      /* time-series window */
	unsigned loop;	       /* DMR_LOOP_PREFETCH (core/loop.h) or 0 (--loop) */
	dmr_kv_pf_cfg_t pf;    /* Loop X: --prefetch-max, --prefetch-buffer */
	double loop_window_ms; /* Loop X's window (default 1000) */
	int quiet;
	int progress;	/* 1: the progress line also off a terminal (--progress) */
	int no_streams; /* sim: hand every slice's completion to the engine
			   (--no-streams: the same results, slower; to check
			   DMR_BE_CTL_STREAMS, backends/backend.h) */
	/* threaded backends (shm, verbs) */
	const char *device;    /* verbs: device name or index (NULL = index 0) */
	int port;	       /* verbs: 1-based port */
	int gid_index;	       /* verbs: -1 = automatic */
	double timeout_s;      /* longest wait for an RPC answer or a completion */
	uint64_t test_corrupt; /* tests: id + 1 of a block whose put flips its first
				  byte (threaded; the next get of it must fail) */
	/* Called once, with on_start_arg, when the checks and the set-up
	 * (pool, backend, transfers) have passed: the run is sure to start
	 * and nothing is in out_dir yet (NULL: none). Anything else than
	 * DMR_OK ends the run there with that status (err filled by the
	 * hook), nothing written. `kv run` moves an earlier run's files aside
	 * in it (replay/kv/cli.c): a refused run leaves --out as it was. */
	dmr_status_t (*on_start)(void *arg, dmr_err_t *err);
	void *on_start_arg;
} dmr_kv_opts_t;

void dmr_kv_opts_default(dmr_kv_opts_t *o);

typedef struct dmr_kv_result {
	char backend[16], profile[64], status[16], kv_model[64], mode[16], placement[16];
	uint32_t cns, clients, segments;
	uint64_t block_bytes, capacity, slice;
	uint32_t qp_depth, outstanding;
	double time_scale, rpc_us;
	uint64_t requests;	   /* completed */
	uint64_t blocks_requested; /* sum of the requests' blocks */
	uint64_t blocks_got;	   /* hits: READ from the pool */
	uint64_t blocks_put;	   /* misses stored: WRITE to the pool */
	uint64_t puts_dropped;	   /* misses not stored: no evictable space */
	uint64_t bytes_got, bytes_put;
	uint64_t evictions;
	uint64_t waited_gets;	  /* hits on a block still being written */
	uint64_t max_blocks_used; /* peak blocks in the pool */
	double hit_ratio;	  /* blocks_got / blocks_requested */
	double p50_us, p99_us, p999_us, mean_us, max_us;
	uint64_t wire_to_mn, wire_from_mn; /* bytes on the MN link, both ways */
	double link_gbps;
	double util_to_mn, util_from_mn, link_util; /* link_util = the busier way */
	double goodput_gbps;			    /* (bytes_got + bytes_put) x 8 / time */
	double sim_time_s;			    /* first arrival to last completion */
	double wall_s;
	uint64_t slices, events;
	uint64_t slices_streamed; /* sim: slice completions the backend refilled
				     itself (DMR_BE_CTL_STREAMS); not in the files */
	int folded;		  /* MN offsets folded into sim_region */
	int partial;
	/* placement per segment (0 where this process has no master, kv cn):
	 * blocks placed in a segment over the run (bytes = x block_bytes), the
	 * fewest and most over the segments; most blocks a segment held at once */
	uint64_t seg_blocks_min, seg_blocks_max, seg_peak_min, seg_peak_max;
	/* Loop X (prefetch = 0: off; printed, in the time series and in
	 * summary.csv's last six columns): its counters over the run (wasted includes the
	 * prefetches unused at the end), bytes its READs moved, the bound */
	int prefetch;
	dmr_kv_pf_stats_t pf;
	uint64_t pf_bytes;
	uint32_t pf_cap;
} dmr_kv_result_t;

/*
 * Replay a KV trace on o->backend: "sim" (DRIVEN, simulated ps) or a
 * threaded backend ("shm", "verbs": wall-clock ps, measured). Writes
 * out_dir/summary.csv and out_dir/timeseries.csv (temp file + rename) when
 * the run completes; summary.partial.csv / timeseries.partial.csv when it
 * fails after starting (including SIGINT/SIGTERM, on every backend:
 * DMR_ERR_INTERRUPTED; the handler is installed for the run and the old
 * one restored). A complete run removes stale *.partial.csv files of an
 * earlier failed run in out_dir. *res is filled in both cases (res->partial).
 * Errors: DMR_ERR_IO / DMR_ERR_PARSE (trace: FILE:LINE named),
 * DMR_ERR_INVALID (options), DMR_ERR_RANGE (a block larger than a segment;
 * threaded: a pool region above half the machine's memory),
 * DMR_ERR_UNSUPPORTED (threaded: a backend whose MN region is not local),
 * DMR_ERR_VERIFY (a get READ bytes its put did not write, or the master's
 * invariants broke), DMR_ERR_TIMEOUT (threaded: no RPC answer or completion
 * within o->timeout_s), DMR_ERR_REMOTE (a failed completion),
 * DMR_ERR_INTERRUPTED, DMR_ERR_NOMEM. The backend's own open errors.
 */
dmr_status_t dmr_kv_run(const dmr_kv_opts_t *o, dmr_kv_result_t *res, dmr_err_t *err);

/*
 * The checks dmr_kv_run makes before it creates out_dir, alone: the
 * options, the trace's header and trailer (dmr_kv_trace_open: a cut trace,
 * one without requests or without blocks is refused) and the work (--slice
 * against DMR_KV_MAX_SLICES). No file is created. `kv run` calls it before
 * it creates and locks --out. Errors as dmr_kv_run's before its run.
 */
dmr_status_t dmr_kv_check(const dmr_kv_opts_t *o, dmr_err_t *err);

/*
 * Up-front check of an output directory (dir NULL: nothing to check):
 * create it (with parents), then create and remove a probe file in it
 * (core/base/fs.h dmr_mkdir_p with DMR_FS_PROBE), so that a run whose results could not be written
 * is refused before it starts. dmr_kv_run calls it before replaying. Errors: DMR_ERR_IO naming
 * --out and the reason (exit status 2 on the command line).
 */
dmr_status_t dmr_kv_out_check(const char *dir, dmr_err_t *err);
void dmr_kv_print(const dmr_kv_result_t *r, void *file);

/* ---- the pool as processes (docs/KVCACHE.md 9.2, 9.7) ------------------
 *
 * `dmreplay kv mn --config C --trace T [pool options]` hosts the region in
 * the MN process and runs the master on it; `dmreplay kv cn --config C --id
 * K --trace T [same pool options] [replay options]` runs client threads
 * that reach it over RDMA only. Both compute the region's geometry from the
 * same options; the master writes it into a header at the region's start
 * (magic word last) and each CN READs it after the start barrier and
 * refuses a mismatch (dmr_kv_geom_compare's message). The geometry header
 * (dmr_kv_geom_t) and dmr_kv_geom_compare are in core/kv/rpc.h.
 */

/*
 * The geometry of a threaded run of o's trace and pool options with
 * `clients` client workers in all (a first pass over the trace: requests,
 * blocks, distinct ids, hash). Errors: those of the trace (DMR_ERR_IO,
 * DMR_ERR_PARSE with FILE:LINE), DMR_ERR_INVALID / DMR_ERR_RANGE (options,
 * a region above half the machine's memory), DMR_ERR_NOMEM. *g_p set on
 * success only.
 */
dmr_status_t dmr_kv_geometry(const dmr_kv_opts_t *o, uint32_t clients, dmr_kv_geom_t *g_p,
			     dmr_err_t *err);

/* ---- transfer benchmark (Mooncake transfer_engine_bench style) --------- */

typedef struct dmr_kv_bench_opts {
	const char *backend, *profile;
	uint64_t size;	  /* bytes per op */
	uint64_t ops;	  /* total ops over all threads */
	uint32_t threads; /* workers (on one CN unless cns > 1) */
	uint32_t cns;
	uint32_t batch;	   /* ops submitted together per thread, then waited for */
	uint64_t slice;	   /* 0 = one WR per op */
	uint32_t qp_depth; /* slices in flight per thread */
	int opcode;	   /* DMR_WR_WRITE or DMR_WR_READ */
	uint32_t mtu;
	uint64_t sim_region;
	const char *device;  /* verbs: device name or index */
	int port, gid_index; /* verbs: 1-based port; GID index, -1 = automatic */
	double timeout_s;    /* threaded: longest wait for a completion */
} dmr_kv_bench_opts_t;

void dmr_kv_bench_opts_default(dmr_kv_bench_opts_t *o);

typedef struct dmr_kv_bench_result {
	char profile[64];
	uint64_t ops, bytes;
	double p50_us, p99_us, p999_us, min_us, max_us, mean_us;
	double gbps;	   /* payload x 8 / elapsed */
	double wire_gbps;  /* bytes on the wire (busier direction) x 8 / elapsed */
	double elapsed_us; /* simulated, first submit to last completion */
	double per_op_us;  /* elapsed / ops: amortised time per op */
	double link_gbps;
	uint32_t mtu;
	double bound_payload_us; /* size x 8 / link rate */
	double bound_wire_us;	 /* with RoCEv2 framing at the MTU */
	double wall_s;
} dmr_kv_bench_result_t;

/*
 * Run the benchmark: o->threads threads (workers; on sim simulated, on shm
 * and verbs one OS thread and QP each) submit o->batch ops of o->size bytes,
 * wait for all of them and repeat until o->ops ops are done. Latencies in
 * us (per op: submit to its last slice's completion), gbps = payload bits /
 * (first submit to last completion). On sim the link rate and MTU are the
 * profile's; on verbs the MTU is the path's and the link rate the port's
 * sysfs `rate` (0 when unknown: no bound printed); on shm there is no link.
 * Errors: DMR_ERR_INVALID (options, or not every op completed),
 * DMR_ERR_RANGE (threaded: region above half the memory), DMR_ERR_TIMEOUT,
 * DMR_ERR_REMOTE, DMR_ERR_INTERRUPTED, DMR_ERR_NOMEM, the backend's open
 * errors. *r is valid only on DMR_OK.
 */
dmr_status_t dmr_kv_bench(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r, dmr_err_t *err);
void dmr_kv_bench_print(const dmr_kv_bench_opts_t *o, const dmr_kv_bench_result_t *r, void *file);

/* `dmreplay kv SUBCOMMAND ...` (argv[0] = "kv"): gen, run, bench, models,
 * mn, cn.
 * Returns the exit status: 0, 2 bad input or usage, 1 failed run. */
int dmr_kv_main(int argc, char **argv);

#endif /* DMR_KV_H */
