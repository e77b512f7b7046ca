/*
 * traces/workload.h - trace generators and post-run verifiers.
 *
 * Each workload (TPC-C, SmallBank, YCSB) provides a generator that writes a
 * trace (traces/trace.h) and a verifier that checks the workload's
 * invariants on the final MN state. The verifier reads MN records through a
 * callback so that it runs the same on the sim backend (memory in process)
 * and on verbs (memory fetched from the MN).
 *
 * Regimes (dmr_regime_t) select hot records: uniform; extreme = hot:1/0.95;
 * alt-extreme = hot:2/0.92; hot:K/P = K hot warehouses (TPC-C) or a K-record
 * hot set (SmallBank, YCSB) take fraction P of the transactions.
 * Random draws come from GSL (gsl_rng_mt19937 seeded with --seed).
 */
#ifndef DMR_WORKLOAD_H
#define DMR_WORKLOAD_H

#include <stdint.h>

#include "trace.h"

typedef struct dmr_regime {
	char name[64];	/* canonical text, e.g. "extreme", "hot:3/0.9" */
	int uniform;	/* 1: no hot set */
	uint32_t hot_k; /* K hot warehouses / records */
	double hot_p;	/* fraction of transactions aimed at the hot set */
	double drift_s; /* >0: hot set moves every drift_s seconds (issue 4) */
} dmr_regime_t;

/* Parse "uniform", "extreme", "alt-extreme", "hot:K/P" (K >= 1, 0 < P <= 1).
 * DMR_ERR_PARSE with the offending text named. */
dmr_status_t dmr_regime_parse(const char *s, dmr_regime_t *r_p, dmr_err_t *err);

/* Read-only access to one record of the final MN state.
 * Returns 1 and sets *payload_p (payload_bytes long, 8-aligned) when the
 * record is present, 0 when absent, <0 on error. version_p may be NULL. */
typedef int (*dmr_wl_read_func_t)(void *arg, int table, uint64_t slot, const uint64_t **payload_p,
				  uint64_t *version_p);

/* Optional, to skip records known absent without reading them: how many
 * consecutive slots of `table` starting at `slot` (dir > 0: slot, slot + 1,
 * ...; dir < 0: slot, slot - 1, ...) are absent for certain; 0 when that
 * is not known (the records are then read). Never more than are absent;
 * may run past the table's last (or first) slot: the caller clamps. */
typedef uint64_t (*dmr_wl_absent_func_t)(void *arg, int table, uint64_t slot, int dir);

/* Result of a verification: ok, a one-line description per failed check,
 * and a short summary line for the run output ("tpcc C1 C2 C3 ok"). */
typedef struct dmr_verify_result {
	int ok;
	uint64_t checks; /* individual checks made */
	uint64_t failures;
	char summary[256];
	char first_failure[256];
} dmr_verify_result_t;

/*
 * Verify the invariants of the trace's workload (chosen by hdr->workload).
 * committed_xv = sum of dmr_trace_txn_t.xv over committed transactions.
 *  - tpcc: clause 3.3.2.1 C1 (W_YTD = sum D_YTD), C2 (D_NEXT_O_ID - 1 =
 *    max O_ID = max NO_O_ID), C3 (max NO_O_ID - min NO_O_ID + 1 = rows in
 *    NEW-ORDER), per warehouse / district.
 *  - smallbank: sum of all balances = initial total + committed_xv.
 *  - ycsb: sum of the per-record RMW counters = committed_xv.
 *  - tatp: sum of the subscribers' update counters = committed_xv; every
 *    loaded subscriber, sec_subscriber, access_info and special_facility
 *    record present; with cf_check, per special facility, present
 *    call_forwarding rows = 1 + its counter (tatp.h).
 * absent (may be NULL) lets a scan skip runs of absent records (TPC-C's
 * order and new_order capacity past the last insert: 4.8 M of the 4.9 M
 * reads of a 40-warehouse run); results are the same with or without it.
 * Returns DMR_OK (check res->ok) or an error from read().
 */
dmr_status_t dmr_wl_verify(const dmr_trace_hdr_t *hdr, dmr_wl_read_func_t read,
			   dmr_wl_absent_func_t absent, void *arg, int64_t committed_xv,
			   dmr_verify_result_t *res, dmr_err_t *err);

/* Generator CLI entry points: argv[0] is the subcommand name ("tpcc"...).
 * Options per FORMAT.md / --help. Return process exit status (0 ok, 2 bad
 * usage or input, 1 other failure); errors printed to stderr. */
int dmr_gen_tpcc_main(int argc, char **argv);
int dmr_gen_smallbank_main(int argc, char **argv);
int dmr_gen_ycsb_main(int argc, char **argv);
int dmr_gen_tatp_main(int argc, char **argv);

#endif /* DMR_WORKLOAD_H */
