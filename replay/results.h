/*
 * replay/results.h - what a run leaves behind: its time series and result
 * files, the human summary on stdout, its exit status.
 *
 * summary.csv: a header line and one row per run (columns in
 * dmr_results_header). Latency: p50_us, p99_us, p999_us cover the committed
 * transactions only, from their first start (after a loop admitted them;
 * retries included) to commit; p50_dispatch_us, p99_dispatch_us,
 * p999_dispatch_us (the last columns) the same transactions from dispatch
 * (a context took the transaction, before admission) to commit, so that a
 * loop that defers transactions is compared fairly with none (without a
 * loop the two are equal). timeseries.csv: one row per window of run time:
 * window start (s), tried, committed, aborts, gave_up in that window.
 * Files are written to a temp file with a per-process name and renamed into
 * place (core/base/fs.h), so a reader never sees half a file and a failed
 * run never overwrites a finished one: a partial or failed run writes
 * summary.partial.csv instead.
 *
 * Below the command lines that use it (replay/cli.c, replay/roles/,
 * replay/kv.c): it depends on replay.h's result type and core/ only.
 */
#ifndef DMR_RESULTS_H
#define DMR_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "../core/loop.h"
#include "../core/loop_doorbell.h"
#include "../core/replica.h"
#include "../core/txn.h"
#include "../traces/workload.h"
#include "timeseries.h"

/*
 * The transaction replay's time series, on the generic windowed series of
 * timeseries.h: per window the change of tried, committed, aborts (all
 * causes) and gave_up, the loop decisions of the window (increases,
 * decreases, deferred: the values the replay set, consumed by the first
 * window that closes), and the drift phase, loop signal and actuator when
 * the window closed. With a slot gate (core/loop.h DMR_LOOP_SLOTS, after
 * dmr_ts_cn_slots) also the moves of the window (decisions that changed a
 * limit) and each CN's admitted-slot limit when the window closed.
 */
typedef struct dmr_ts {
	dmr_tseries_t s; /* the rows (timeseries.h) */
	/* set by the replay before a window closes */
	uint64_t phase; /* unused when drift_ps is set */
	uint64_t increases, decreases, deferred;
	uint64_t drift_ps; /* > 0: phase of a row = its start / drift_ps */
	double signal, actuator;
	uint64_t moves;	  /* like increases */
	uint32_t ncn;	  /* per-CN columns (0: none) */
	double *cn_slots; /* ncn: set by the replay before a window closes */
	char (*cn_names)[32];
	uint64_t done[4]; /* increases, decreases, deferred, moves consumed so far */
	/* Loop C (doorbell, set by the replay): its columns doorbell_signal,
	 * doorbell_batch, doorbell_posts, doorbell_rings, doorbell_wrs */
	int doorbell;			     /* 1: the columns are written */
	double db_signal, db_batch;	     /* the gauges when the window closed */
	uint64_t db_posts, db_rings, db_wrs; /* running totals (the rows: their change) */
	/* aura (core/aura.h): its columns aura_w_atomic, aura_w_rpc,
	 * aura_w_move, aura_w_load (the weights when the window closed),
	 * aura_rpc_groups, aura_owned_groups, aura_cached_tables (levers in
	 * force), aura_moves, aura_spills (the window's), aura_cost_pred_us,
	 * aura_cost_obs_us (the last decision window's cost per commit) */
	int aura;
	double a_w[4], a_rpc_groups, a_owned_groups, a_cached_tables, a_cost_pred, a_cost_obs;
	uint64_t a_moves, a_spills; /* running totals */
} dmr_ts_t;

static inline int dmr_ts_due(const dmr_ts_t *ts, uint64_t now_ps)
{
	return dmr_tseries_due(&ts->s, now_ps);
}

/* An empty series of windows of window_ps (cannot fail). */
void dmr_ts_init(dmr_ts_t *ts, uint64_t window_ps);
void dmr_ts_fini(dmr_ts_t *ts);
/* Add the slot-gate columns for ncn CNs (before the first row; window and
 * max_rows kept): loop_moves and loop_actuator_cn0..cnN-1, each CN's slot
 * limit (cn_slots[], initially 0). DMR_ERR_NOMEM (the series unchanged). */
dmr_status_t dmr_ts_cn_slots(dmr_ts_t *ts, uint32_t ncn);
/* Close every window that ended at or before now_ps, attributing the
 * counters' change since the last window to it. */
void dmr_ts_advance(dmr_ts_t *ts, uint64_t now_ps, const dmr_txn_stats_t *st);
/* Close the last (possibly short) window at end_ps. */
void dmr_ts_finish(dmr_ts_t *ts, uint64_t end_ps, const dmr_txn_stats_t *st);
/* The loops' state into ts before a window closes: adm's signal, actuator,
 * each CN's slots (dmr_ts_cn_slots) and its decisions since the last sample
 * added to what the series has not consumed yet; with db (Loop C, NULL:
 * none) its signal, batch and totals. Caller holds the replay's lock
 * (threaded). */
void dmr_ts_loop_sample(dmr_ts_t *ts, dmr_adm_t *adm, dmr_doorbell_t *db, uint64_t now_ps);
/* Write the series as timeseries.csv's text to f (t_s, tried, committed,
 * aborts, gave_up, phase, loop_signal, loop_actuator, loop_increases,
 * loop_decreases, loop_deferred; with dmr_ts_cn_slots also loop_moves and
 * loop_actuator_cnK per CN; with ts->doorbell at the end doorbell_signal,
 * doorbell_batch (mean WRs per doorbell bound over the CNs), and the
 * window's doorbell_posts, doorbell_rings, doorbell_wrs; with ts->aura
 * after them the aura columns above). Returns 0, or -1
 * when a write failed. */
int dmr_ts_write_csv(const dmr_ts_t *ts, FILE *f);

/* The header line of summary.csv (column names, comma-separated, no
 * newline; static storage). */
const char *dmr_results_header(void);

/* Create dir and its parents and check that a file can be created in it
 * (dmr_mkdir_p with DMR_FS_PROBE, core/base/fs.h); -1 with errno set on
 * failure (ENOTDIR when the path exists and is not a directory; EACCES,
 * EROFS, ... when it is not writable). For callers that print
 * strerror(errno); new code calls dmr_mkdir_p and prints its message. */
int dmr_results_mkdir_p(const char *dir);

/* Write dir/name atomically (dmr_afile_*, core/base/fs.h): fill() writes to
 * a temp file in dir (returns < 0 on a write error), which is renamed into
 * place only when every write, the flush and the close succeeded; else the
 * temp file is removed, dir/name is left as it was and DMR_ERR_IO names the
 * path. */
dmr_status_t dmr_results_write_file(const char *dir, const char *name,
				    int (*fill)(FILE *, const void *), const void *arg,
				    dmr_err_t *err);

/* One run's figures: what summary.csv holds (dmr_results_columns) and
 * dmr_replay_print prints. Filled by the engine (replay.c). */
typedef struct dmr_replay_result {
	char workload[32], regime[64], loop[DMR_LOOP_NAME_MAX], backend[16], profile[64],
	    status[16];
	char profile_path[256];
	uint32_t cns, threads, coros;
	uint64_t seed, txns;
	dmr_txn_stats_t st;
	dmr_txn_xstats_t xst;	     /* core/txn.h: aborts by table, crest's counters */
	char crest_locks[8];	     /* crest: "masked" | "words" ("" otherwise) */
	char isolation[4];	     /* "sr" | "si" (motor's --isolation; the others sr) */
	char rpc[8];		     /* --rpc: "none" | "all" | "half" ("": none) */
	uint32_t versions;	     /* motor: vcells per record (0 otherwise) */
	char dm_locks[96];	     /* --dm-locks tables ("" none) */
	char cxl_tables[96];	     /* --cxl-tables tables ("" none) */
	int crest_local;	     /* crest: localized execution on (1) or off */
	int crest_cache;	     /* crest: CN record cache on (1) or off */
	uint64_t crest_cache_ttl_ps; /* crest: the cache's TTL (ps) */
	uint32_t ntables;	     /* the trace's tables, named in table_names */
	char table_names[DMR_TRACE_MAX_TABLES][DMR_TRACE_NAME_MAX];
	dmr_txn_mv_stats_t mv; /* --protocol motor: its counters (zero otherwise) */
	dmr_be_stats_t be;
	double tried_tps, committed_tps, abort_rate;
	double atomics_per_commit, reads_per_commit;
	double p50_us, p99_us, p999_us; /* committed transactions, from their first
					 * start (after admission) to commit */
	double p50_dispatch_us, p99_dispatch_us,
	    p999_dispatch_us; /* the same
			       * transactions from dispatch (a context took
			       * it; incl. the admission wait) to commit */
	double sim_time_s, wall_s;
	double trace_wall_s;	    /* part of loop_wall_s spent reading the trace
				     * (through the cache on the sim: reading and
				     * checking records, whose decoding when a
				     * context takes one is not counted) */
	uint64_t preloaded;	    /* threaded: transactions parsed before the timed
				     * loop (up to 256 MiB of them; the rest stream) */
	uint64_t readahead_packed;  /* transactions packed while read ahead
				     * (replay/txnq.h; not written to files) */
	uint64_t readahead_records; /* transactions queued as the trace cache's
				     * records (replay/engine.h; not in files) */
	double loop_wall_s; /* wall time of the event loop only (incl. streaming the trace) */
	uint64_t footprint;
	dmr_verify_result_t verify;
	uint32_t mtu; /* sim: path MTU used; 0 = the device's */
	uint32_t retries_limit;
	double backoff_us, duration_s;
	dmr_loop_cfg_t loop_cfg;
	dmr_adm_summary_t slots;	 /* the slot gate over the run (core/loop.h; 0s: none) */
	dmr_doorbell_summary_t doorbell; /* Loop C over the run (0s: off) */
	dmr_aura_summary_t aura;	 /* aura over the run (0s: off; core/aura.h) */
	double cn_imbalance;		 /* (max - mean) / mean of the CNs' commits */
	int verified;			 /* 1 passed, 0 failed, -1 n/a (no invariants known) */
	int partial;
	/* issue 11 (core): the cluster and protocol of the run */
	uint32_t mns, backups;
	char protocol[16];	       /* dmr_txn_protocol_name */
	char placement[512];	       /* dmr_layout_placement: "mns=3 backups=2 t:0/1,2 ..." */
	dmr_replica_result_t replicas; /* core/replica.h; checks 0: not run */
	char index[8];		       /* "direct" | "hash" */
	uint64_t addr_cache;	       /* entries per CN (0: none) */
	/* --cn-cache (core/txn_cncache.h): the tables cached at the start
	 * ("" none; "a,b"), entries per CN; counts in xst, stale aborts in
	 * st.aborts[DMR_ABORT_CACHE_STALE] */
	char cn_cache[160];
	uint32_t cn_cache_entries;
} dmr_replay_result_t;

/* Write summary and time series into dir (final: summary.csv, else
 * summary.partial.csv). DMR_ERR_IO with the path named. */
dmr_status_t dmr_results_write(const char *dir, int final, const struct dmr_replay_result *r,
			       const char *trace, const dmr_ts_t *ts, dmr_err_t *err);

/* Print the human summary of a run (`dmreplay run`, `dmreplay cn`) to file
 * (a FILE *): the shape, counts, throughput, aborts by cause, latency,
 * verification, and the backend's or simulator's figures. */
void dmr_replay_print(const struct dmr_replay_result *r, void *file);

/* The exit status of a command whose run ended with st: 0 (DMR_OK); 2 for
 * bad input (DMR_ERR_PARSE, _IO, _RANGE, _INVALID, _NODEV: a file, option,
 * device, port or GID); 130 (DMR_ERR_INTERRUPTED: SIGINT/SIGTERM); else 1
 * (a failed run, including DMR_ERR_VERIFY). */
int dmr_results_exit_status(dmr_status_t st);

#endif
