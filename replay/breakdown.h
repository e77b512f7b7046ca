/*
 * replay/breakdown.h - a run's figures broken down: per transaction type
 * (OUT/types.csv), per CN (OUT/cns.csv) and per MN (OUT/mns.csv), and the
 * published benchmarks' log lines (`dmreplay run --published-log`).
 * Columns, units and the exact log formats with their sources:
 * docs/RESULTS.md.
 *
 * The engine (replay.c) fills a dmr_breakdown_t at the end of a run: the
 * per-type counters are the per-(worker, type) sums of what the core
 * counted while running a transaction of that type, so that summed over
 * the types they equal the run's totals (summary.csv) field by field.
 * Files follow summary.csv's rule (results.h): written via a temp file and
 * renamed into place, NAME.partial.csv when the run did not finish.
 *
 * Below the engine; depends on results.h (dmr_results_write_file), the
 * core's counters and backend.h's per-MN counters only.
 */
#ifndef DMR_BREAKDOWN_H
#define DMR_BREAKDOWN_H

#include <stdint.h>
#include <stdio.h>

#include "../backends/backend.h"
#include "../core/txn.h"
#include "../traces/trace.h"
#include "lathist.h"
#include "results.h"

/* Verbs of the transactions that committed on their first attempt (the
 * cost of one committed attempt, aborted attempts' verbs excluded), summed;
 * per (worker, type) in the engine, per type in dmr_bd_type_t. */
typedef struct dmr_bd_first {
	uint64_t commits; /* transactions committed on their first attempt */
	uint64_t reads, writes, atomics, index_reads;
} dmr_bd_first_t;

/* One transaction type over the run. Latencies: committed transactions of
 * the type, from their first start (after admission) to commit, us, within
 * 1/256 of the exact quantile (lathist.h); 0 when none committed. */
typedef struct dmr_bd_type {
	char name[DMR_TRACE_NAME_MAX]; /* the trace header's `# type NAME` */
	dmr_txn_stats_t st;	       /* summed over the workers */
	dmr_txn_mv_stats_t mv;	       /* motor: summed over the contexts */
	dmr_txn_cr_stats_t cr;	       /* crest: summed over the contexts */
	double p50_us, p90_us, p99_us, p999_us;
	double mean_us; /* from the histogram's bucket values (same bound) */
	dmr_bd_first_t first;
} dmr_bd_type_t;

/* One CN of this process (cluster index cn). */
typedef struct dmr_bd_cn {
	uint32_t cn;	  /* cluster index (DMR_BE_CTL_ROLE's cn + local index) */
	uint32_t workers; /* its workers (--threads) */
	dmr_txn_stats_t st;
} dmr_bd_cn_t;

typedef struct dmr_breakdown {
	char workload[DMR_TRACE_NAME_MAX];
	char backend[16];
	double run_s;	 /* the run's time, s: simulated (sim) or wall */
	int sim;	 /* run_s is simulated time */
	uint32_t ntypes; /* 0..DMR_TRACE_MAX_TYPES */
	dmr_bd_type_t type[DMR_TRACE_MAX_TYPES];
	uint32_t ncns;	    /* this process's CNs */
	dmr_bd_cn_t *cn;    /* ncns entries, owned (dmr_breakdown_fini) */
	uint32_t nmns;	    /* the backend's cfg.mns (1..DMR_BE_MAX_MNS) */
	int mn_reported;    /* 1: the backend answered DMR_BE_CTL_MN_STATS */
	int mn_modelled;    /* 1: its *_busy_ps are modelled (sim) */
	char mn_note[160];  /* why not reported / not modelled ("" if both) */
	uint64_t run_ps;    /* utilisation denominator (simulated run time) */
	double run_p90_us;  /* the whole run's p90 and mean latency, us (the */
	double run_mean_us; /*   others are in dmr_replay_result_t) */
	dmr_be_mn_stats_t mn[DMR_BE_MAX_MNS];
	int motor; /* 1: --protocol motor, motor.csv is written too */
	int crest; /* 1: --protocol crest, crest.csv is written too */
} dmr_breakdown_t;

/*
 * Fill bd's per-type and per-CN parts from the engine's counters: tst and
 * first have nworkers * ntypes entries (worker w, type t at w * ntypes + t; ntypes =
 * h->ntypes, at least 1), worker w belongs to local CN w / threads
 * (cluster CN cn0 + w / threads); tlat[i] (i < nth, NULL entries skipped)
 * is driving thread i's array of ntypes latency histograms (ps). run_s:
 * the run's time (sim: simulated). DMR_ERR_NOMEM (bd left valid to fini).
 */
dmr_status_t dmr_breakdown_collect(dmr_breakdown_t *bd, const dmr_trace_hdr_t *h,
				   const dmr_txn_stats_t *tst, const dmr_bd_first_t *first,
				   uint32_t nworkers, uint32_t threads, uint32_t cn0,
				   dmr_lathist_t *const *tlat, uint32_t nth, double run_s, int sim,
				   dmr_err_t *err);

/* Fill bd's per-MN part: be's DMR_BE_CTL_MN_STATS for be->cfg.mns MNs
 * (utilisations over run_ps when `modelled`, i.e. the backend is the
 * simulator); a backend that does not answer leaves mn_reported 0 and
 * says why in mn_note. */
void dmr_breakdown_mns(dmr_breakdown_t *bd, dmr_be_t *be, uint64_t run_ps, int modelled);

/*
 * The files of n CN processes' directories dirs[k] (each NAME.csv, else
 * NAME.partial.csv; a missing file is skipped) combined into out (final:
 * NAME.csv, else NAME.partial.csv): types.csv with the counts summed per
 * type name, rates over secs (the slowest CN's run time), latencies the
 * largest over the CNs (an upper bound, not a merged distribution, as the
 * combined summary.csv), phase means weighted by committed; cns.csv the
 * CNs' rows in order; mns.csv the counts summed per MN (each CN reports
 * its own workers' WRs), not reported when a CN's is not. DMR_ERR_NOMEM,
 * DMR_ERR_IO (a write, naming the path).
 */
dmr_status_t dmr_breakdown_combine(const char *out, int final, const char *const *dirs, uint32_t n,
				   double secs, dmr_err_t *err);

/* Free what *bd owns (the CN rows); *bd may be zeroed or half filled. */
void dmr_breakdown_fini(dmr_breakdown_t *bd);

/* The protocol's own per-type counters into bd (after
 * dmr_breakdown_collect): bd->motor and bd->crest from protocol
 * (dmr_txn_protocol_t), and motor's (ctx[i].mv) or crest's (ctx[i].cr)
 * counters of the n contexts ctx summed per type (a type >= bd->ntypes
 * counted as type 0). */
void dmr_breakdown_protocol(dmr_breakdown_t *bd, int protocol, const dmr_txn_ctx_t *ctx,
			    uint32_t n);

/* Write dir/types.csv, dir/cns.csv and dir/mns.csv, and with bd->motor
 * dir/motor.csv (per type: Motor's abort reasons, versions read, atomics
 * and WRs per commit), with bd->crest dir/crest.csv (per type: CREST's
 * tickers; docs/RESULTS.md) (final = 0: the .partial.csv names;
 * final = 1 also removes older .partial files).
 * DMR_ERR_IO naming the path; a file already written stays. */
dmr_status_t dmr_breakdown_write(const char *dir, int final, const dmr_breakdown_t *bd,
				 dmr_err_t *err);

/* The log formats of --published-log (bits). */
#define DMR_PUBLOG_CREST 0x1u /* adslabcuhk/crest benchmark/Base/Benchmark.cc */
#define DMR_PUBLOG_FORD 0x2u  /* minghust/ford compute_pool/worker/handler.cc */

/* Parse --published-log's value: "crest", "ford" or "all" (both) into
 * *fmt_p. DMR_ERR_INVALID naming the option and the accepted values. */
dmr_status_t dmr_breakdown_publog_parse(const char *s, uint32_t *fmt_p, dmr_err_t *err);

/* Print the per-type and per-CN figures of bd (and the run's latency from
 * r) in the formats fmt (DMR_PUBLOG_* bits) to f, as the published
 * benchmarks print them (formats and their sources: docs/RESULTS.md
 * "Published log lines"). */
void dmr_breakdown_print_published(const dmr_breakdown_t *bd, const dmr_replay_result_t *r,
				   uint32_t fmt, FILE *f);

/* CREST's name of a type of workload wl (tpcc NewOrder -> NEWORDER, as in
 * benchmark/TPCC/TpccBenchmark.h; unknown names: CamelCase -> CAMEL_CASE)
 * into buf (n bytes). Returns buf. */
const char *dmr_breakdown_crest_name(const char *wl, const char *type, char *buf, size_t n);

#endif
