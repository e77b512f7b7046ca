/*
 * replay/replay.h - feed a trace's transactions to workers, run them on a
 * backend, measure, verify and write results.
 *
 * Transaction i of the trace (0-based, in file order) goes to worker
 * i mod (cns * threads); each worker starts its transactions in trace order
 * on whichever of its `coros` contexts is free. So the same trace gives the
 * same transactions in the same order per worker on every backend; only
 * timing, and so interleaving, differs.
 */
#ifndef DMR_REPLAY_H
#define DMR_REPLAY_H

#include <stdint.h>

#include "../core/loop.h"
#include "../core/txn.h"
#include "../traces/trace.h" /* dmr_trace_cache_opts_t */
#include "../traces/workload.h"
#include "results.h" /* dmr_replay_result_t */

/* --window-ms bounds (ms): those of kv run (replay/kv.h DMR_KV_WINDOW_MS_*),
 * 1 us to 1 h. A run keeps at most DMR_REPLAY_TS_MAX_ROWS time-series rows
 * in memory (11 x 8 bytes each: 88 MB at the cap, the kv run cap
 * DMR_KV_TS_MAX_ROWS): a --duration that needs more is refused before the
 * run; a run that reaches it stops, partial, naming --window-ms. */
#define DMR_REPLAY_WINDOW_MS_MIN 0.001
#define DMR_REPLAY_WINDOW_MS_MAX 3600000.0
#define DMR_REPLAY_TS_MAX_ROWS 1000000u

/* See dmr_replay_opts_t.on_start. */
typedef dmr_status_t (*dmr_replay_start_func_t)(void *arg, dmr_err_t *err);

typedef struct dmr_replay_opts {
	const char *trace; /* trace file */
	/* its binary cache (traces/trace.h): default (zero) beside the CSV;
	 * .off = 1 reads the CSV; .dir puts it elsewhere */
	dmr_trace_cache_opts_t trace_cache;
	const char *backend; /* "sim", "shm", "verbs", "fault:INNER" */
	const char *fault;   /* fault:INNER: the fault spec (docs/FAULTS.md);
				NULL: $DMR_FAULT */
	const char *profile; /* sim profile name or path */
	const char *device;  /* verbs: RDMA device name or index */
	int port;	     /* verbs: port (default 1) */
	int gid_index;	     /* verbs: GID index, -1 = the RoCEv2 GID of this node's IPv4 */
	const char *out_dir; /* results directory (created) */
	uint32_t cns, threads, coros;
	uint64_t seed;
	uint64_t txns;	     /* 0 = whole trace */
	double duration_s;   /* > 0: stop at this simulated/wall time */
	uint32_t retries;    /* retry limit per transaction */
	double backoff_us;   /* wait before retrying, us (0 = none) */
	uint64_t mr_size;    /* bytes; 0 = the footprint */
	uint32_t mtu;	     /* 0 = profile's */
	double window_ms;    /* time-series window, ms of run time */
	dmr_loop_cfg_t loop; /* admission control loops (core/loop.h) */
	int quiet;
	int progress; /* 1: the progress line also off a terminal (--progress);
			 never with quiet (core/base/progress.h) */
	/* The cluster barrier (dmr_be_barrier): the engine calls START before
	 * the first transaction and END after the last completion, and verifies
	 * the final state against the committed delta END sums over the CNs.
	 * barrier_s / end_s > 0: their deadlines, s from the call; 0: the
	 * backend's default (verbs CN role: its --barrier-timeout /
	 * --end-timeout). */
	double barrier_s, end_s;
	/* issue 11: the cluster's MNs (1..16), backups per table (0..2, <
	 * mns; placement core/layout.h), the protocol (core/txn.h) */
	uint32_t mns, backups;
	/* explicit placements (a cluster config's "placement"), applied after
	 * FORD's rule (dmr_layout_pin); borrowed for the run */
	const dmr_layout_pin_t *pins;
	uint32_t npins;
	int protocol; /* dmr_txn_protocol_t */
	/* crest: how its cell locks are taken (--crest-locks; core/txn_crest.h
	 * dmr_crest_locks_t), -1 = masked when the backend has masked CAS
	 * (DMR_BE_CAP_MASKED_CAS), else words */
	int crest_locks;
	/* crest: CREST's localized execution (--crest-local on|off, default
	 * on as CREST's TxnConfig.h ENABLE_LOCAL_EXECUTION; core/txn_crest.h) */
	int crest_local;
	/* crest: CREST's CN record cache (--crest-cache on|off, default on as
	 * CREST's TxnConfig.h ENABLE_CN_CACHE; core/txn_crest.h) */
	int crest_cache;
	/* crest: the cache's TTL (--crest-cache-ttl, ps; 0: the default,
	 * DMR_CREST_CACHE_TTL_PS in core/txn_crest.h) */
	uint64_t crest_cache_ttl_ps;
	int isolation;	   /* dmr_txn_isolation_t (--isolation; motor only) */
	int rpc;	   /* dmr_txn_rpc_t (--rpc; occ, ford; sim, shm) */
	uint32_t versions; /* motor: vcells per record (--versions; 0: Motor's
			      TPC-C default, DMR_CVT_VCELLS) */
	/* how records are found (core/txn.h dmr_txn_index_t), index buckets
	 * per table (0: sized to the table, core/layout.h), address-cache
	 * entries per CN (0: none) */
	int index;
	uint64_t index_buckets, addr_cache;
	/* --published-log: also print the per-type and per-CN figures as the
	 * published benchmarks' logs do (DMR_PUBLOG_* bits of breakdown.h;
	 * docs/RESULTS.md); 0 = no */
	uint32_t published_log;
	/* --dm-locks: comma-separated tables whose lock words live in the MN
	 * NICs' device memory (issue 16; dmr_replay_setup_dm_locks); NULL =
	 * all in host memory */
	const char *dm_locks;
	/* --locks-apart: comma-separated tables whose lock words live apart
	 * from their records, in a lock-word region in host memory (issue 16
	 * item 3; verbs --dm-locks's layout, testable without device memory:
	 * dmr_replay_setup_locks_apart); NULL = in the records */
	const char *locks_apart;
	/* --cxl-tables: comma-separated tables on the MN's CXL tier
	 * (dmr_replay_setup_cxl); NULL = all in host DRAM */
	const char *cxl_tables;
	/* --cn-cache TABLES|all|none (issue 14 lever A3, core/txn_cncache.h;
	 * occ, ford, farm, drtmh): the tables whose read-only ops are served
	 * from a per-CN record cache; NULL = none. --cn-cache-entries: its
	 * entries per CN (0: DMR_CNCACHE_DEFAULT_ENTRIES) */
	const char *cn_cache;
	uint32_t cn_cache_entries;
	/* --aura-levers given: a lever the backend refuses at set-up fails the
	 * run; 0 (the default levers): that lever is left out with a note
	 * (a1 on a verbs device whose atomic_cap is not GLOB) */
	int aura_levers_given;
	/* bytes / number of read-ahead copies beyond which transactions read
	 * ahead are packed (replay/engine.h DMR_READAHEAD_COPY_MAX and
	 * DMR_READAHEAD_COPY_TXNS, used when 0); no option sets them: tests
	 * make them small to exercise packing (results are the same) */
	uint64_t readahead_copy_max, readahead_copy_txns;
	/* 1: queue decoded copies (and packed ones past the bounds above)
	 * even when the trace is read through its binary cache, whose records
	 * are otherwise queued as they are (replay/engine.h "records"); no
	 * option sets it: tests compare both (results are the same) */
	int readahead_decoded;
	/* 1: verification reads every MN range through the backend, also
	 * those no WR wrote (replay/mnread.c computes their records from the
	 * layout otherwise); no option sets it: tests compare both */
	int verify_read_all;
	/* Called once, with on_start_arg, when every check and the set-up have
	 * passed: the run is sure to start and nothing is in out_dir yet (NULL:
	 * none). Anything else than DMR_OK ends the run there with that
	 * status (err filled by the hook), nothing written. `run` moves an
	 * earlier run's files aside in it (replay/cli.c), so that a refused
	 * run leaves --out as it was. */
	dmr_replay_start_func_t on_start;
	void *on_start_arg;
} dmr_replay_opts_t;

void dmr_replay_opts_default(dmr_replay_opts_t *o);

/*
 * Run the replay. Writes out_dir/summary.csv and out_dir/timeseries.csv
 * (each via a temp file renamed into place) only when the run completes and
 * verification passes; a run that fails after starting writes
 * summary.partial.csv / timeseries.partial.csv instead (status column says
 * partial or failed), never touching finished results.
 * Errors: DMR_ERR_IO / DMR_ERR_PARSE (trace, profile; message names file,
 * line, field), DMR_ERR_RANGE (footprint larger than --mr-size or memory),
 * DMR_ERR_VERIFY (an invariant failed; res filled), DMR_ERR_REMOTE.
 */
dmr_status_t dmr_replay_run(const dmr_replay_opts_t *o, dmr_replay_result_t *res, dmr_err_t *err);

/* CLI entry: `dmreplay run ...`; returns exit status. */
int dmr_replay_main(int argc, char **argv);

#endif
