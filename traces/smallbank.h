/*
 * traces/smallbank.h - SmallBank (Alomari et al., "The Cost of
 * Serializability on Platforms That Use Snapshot Isolation", ICDE 2008, as
 * packaged by H-Store/OLTP-Bench) on dmreplay: schema and generator API.
 *
 * Two tables of `accounts` rows each, all loaded, payload one word: the
 * balance (integer, starts 0). Account a's records are slot a of savings and
 * slot a of checking. Invariant (verify.c): sum of all balances =
 * committed_xv, where each txn's xv is the money it brings in (+) or takes
 * out (-) of the bank.
 */
#ifndef DMR_SMALLBANK_H
#define DMR_SMALLBANK_H

#include <stdint.h>

#include "gen.h"
#include "trace.h"
#include "workload.h"

enum dmr_smallbank_table { DMR_SB_SAVINGS = 0, DMR_SB_CHECKING, DMR_SB_NTABLES };
enum { DMR_SB_BALANCE = 0, DMR_SB_WORDS };

/* Transaction types = order of dmr_trace_hdr_t.types. */
enum dmr_smallbank_type {
	DMR_SB_T_AMALGAMATE = 0,
	DMR_SB_T_BALANCE,
	DMR_SB_T_DEPOSIT_CHECKING,
	DMR_SB_T_SEND_PAYMENT,
	DMR_SB_T_TRANSACT_SAVINGS,
	DMR_SB_T_WRITE_CHECK,
	DMR_SB_NTYPES
};
extern const char *const dmr_smallbank_table_names[DMR_SB_NTABLES];
extern const char *const dmr_smallbank_type_names[DMR_SB_NTYPES];
/* Mix in percent: 15 15 15 25 15 15 (the usual SmallBank mix). */
extern const unsigned dmr_smallbank_mix_pct[DMR_SB_NTYPES];

#define DMR_SB_MAX_AMOUNT 100 /* amounts are uniform integers in [1, 100] */

typedef struct dmr_smallbank_cfg {
	uint64_t txns;
	uint64_t seed;
	uint64_t accounts;   /* >= 2 */
	dmr_regime_t regime; /* hot:K/P: a K-account hot set (accounts 0..K-1) */
	double zipf_theta;   /* >= 0: Zipf(theta) over accounts (account 0 hottest),
				overrides the regime; < 0: regime. Gray et al.'s
				closed form (zipf.h dmr_zipf_t), theta < 1 */
	int theta_set;	     /* 1: Zipf(theta) drawn exactly (zipf.h dmr_zipf_ri_t),
				any theta in [0, 5]; excludes zipf_theta >= 0 and a
				non-uniform regime */
	double theta;
	int quiet;
} dmr_smallbank_cfg_t;

/* Defaults: 100000 accounts, 100000 txns, seed 1, uniform, no zipf. */
void dmr_smallbank_cfg_default(dmr_smallbank_cfg_t *cfg);

/* Header: tables savings, checking; 6 types; params accounts, zipf_theta
 * (with theta_set also zipf_method rejection-inversion), footprint_bytes
 * and the common ones. Errors: DMR_ERR_INVALID naming the bad field
 * (accounts < 2, zipf_theta >= 1, theta not in [0, 5], both given). */
dmr_status_t dmr_smallbank_header(const dmr_smallbank_cfg_t *cfg, dmr_trace_hdr_t *hdr_p,
				  dmr_err_t *err);

/*
 * Generate cfg->txns transactions into emit (ids 0 .. txns-1);
 * deterministic in cfg. Account draws: first account from the regime (or
 * Zipf); the second account of Amalgamate/SendPayment from the same
 * distribution, and when it equals the first, uniformly among the others.
 * by_type_p (may be NULL) receives DMR_SB_NTYPES counts.
 * Errors: DMR_ERR_INVALID, DMR_ERR_NOMEM, or what emit returned.
 */
dmr_status_t dmr_smallbank_generate(const dmr_smallbank_cfg_t *cfg, dmr_gen_emit_func_t emit,
				    void *arg, uint64_t *by_type_p, dmr_err_t *err);

#endif /* DMR_SMALLBANK_H */
