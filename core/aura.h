/*
 * core/aura.h - AURA: adaptive physical design by four levers and a
 * self-tuning cost model (issue 14 item 2 and 3; docs/AURA.md).
 *
 * No public AURA code exists; the design is ours, after the reference
 * material's description (REFERENCE.md section 3: four levers A1..A4 chosen
 * by a cost model with four weights atomic, rpc, move, load, start values
 * 0.5, 1.0, 2.5, 0.18, self-tuned online by SGD, logged every 100 ms).
 *
 * Record groups. A transaction belongs to the group of its anchor: its
 * first operation whose key needs no read (dep.op < 0); group =
 * key x groups / rows(table) (a range partition of every table into
 * `groups` parts: for TPC-C with groups = warehouses every table's rows of
 * warehouse w fall in group w, since the generator lays rows out by
 * warehouse; FORMAT.md "Drift" uses the same partition).
 *
 * Levers, per window of `window_ps`, per group (the cost model below picks
 * the option of least predicted cost; a lever not enabled is not offered):
 *   A1 access path: one-sided (the core's CAS locks, READ, WRITE) or an RPC
 *      executed by the MN's CPU (the whole transaction in one request).
 *   A2 ownership: the group's transactions routed to one owner CN and
 *      executed there with localized execution (a transaction of an owned
 *      group waits behind the owner's admitted transaction that locks one of
 *      its records, instead of aborting on the remote lock: CREST's
 *      localized execution, adslabcuhk/crest, at the admission gate).
 *   A3 CN caching of read-mostly tables (a rule, not the cost model: C has
 *      no read term): a table whose writes are below 1 % of its reads in
 *      the window has its read-only operations served from the CN cache,
 *      validated at commit.
 *   A4 load balance: the owner of a group is the CN of least predicted load
 *      (without A4: group mod CNs, a static placement as FORD's tables on
 *      MNs), and a transaction routed to an owner whose inbox is full (its
 *      transaction slots) runs where it was read (a spill, counted).
 *      Without A4 routing is strict: the reader waits (backpressure: the
 *      replay parks the reading context until the owner takes from its
 *      inbox).
 *
 * Cost model, per commit: C = w_atomic x atomics + w_rpc x RPCs + w_move x
 *   moves + w_load x imbalance, imbalance = (max over CNs of transactions
 *   finished - mean) / mean. Predicted per group and option from the window
 *   that closed: one-sided = the group's atomics per commit when it last ran
 *   one-sided and unowned; owned = its locks per transaction (U/I/D ops in
 *   the trace); RPC = its RPCs per commit when last by RPC (1 before); a
 *   move costs w_move over the group's commits; the imbalance is that of
 *   the predicted placement.
 *
 * Tuners (how the weights move; written to timeseries.csv every row):
 *   fixed: the weights as given.
 *   rule:  threshold rules, each weight x 1.25 up or x 0.8 down per window,
 *          kept within [start / 16, start x 16]: abort rate above threshold
 *          -> atomic up, below threshold / 2 -> down; RPC transactions
 *          slower than one-sided ones (mean latency) -> rpc up, faster ->
 *          down; a group's owner moved twice within 2 windows -> move up,
 *          no move for 10 windows -> down; imbalance above 0.5 -> load up,
 *          below 0.1 -> down.
 *   sgd:   normalised least mean squares (Widrow-Hoff; Haykin, Adaptive
 *          Filter Theory, 4th ed., section 6.1) on the error between the
 *          predicted cost per commit w . x (x = atomics, RPCs, moves per
 *          commit and the imbalance) and the observed one, the context time
 *          per commit in us (window x CNs x slots / commits: by Little's
 *          law what one commit costs the cluster's contexts, busy, waiting
 *          or aborting alike, so its inverse is committed throughput):
 *          w += lr x (y - w . x) x / (1 + x . x), then w = max(w, 0).
 *   The weights' unit is then us of context time per atomic (per RPC,
 *   move, unit of imbalance) per commit; the published start values have
 *   no published unit.
 *
 * Threading: none inside; the replay calls it under its engine lock
 * (core/loop.h's rule).
 */
#ifndef DMR_AURA_H
#define DMR_AURA_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "layout.h"

#define DMR_AURA_A1 0x1u
#define DMR_AURA_A2 0x2u
#define DMR_AURA_A3 0x4u
#define DMR_AURA_A4 0x8u
#define DMR_AURA_ALL 0xfu
#define DMR_AURA_MAX_GROUPS 4096u
#define DMR_AURA_W_MAX 1e6 /* the largest weight taken (larger ones overflow the cost) */

typedef enum dmr_aura_tuner {
	DMR_AURA_FIXED = 0,
	DMR_AURA_RULE = 1,
	DMR_AURA_SGD = 2,
} dmr_aura_tuner_t;

enum { DMR_AURA_W_ATOMIC, DMR_AURA_W_RPC, DMR_AURA_W_MOVE, DMR_AURA_W_LOAD, DMR_AURA_NW };

typedef struct dmr_aura_cfg {
	unsigned levers;	 /* DMR_AURA_A* bits (default all) */
	dmr_aura_tuner_t tuner;	 /* default sgd */
	double w[DMR_AURA_NW];	 /* start weights (0.5, 1.0, 2.5, 0.18: REFERENCE.md s. 3) */
	double lr;		 /* sgd step, (0, 1] (0.1; ours) */
	uint32_t groups;	 /* record groups, 1..DMR_AURA_MAX_GROUPS (0: the trace's
				    warehouses, else 64) */
	double threshold;	 /* rule: abort rate threshold (the loop's, 0.5) */
	double cache_write_frac; /* A3: writes / reads below which a table is cached (0.01) */
} dmr_aura_cfg_t;

void dmr_aura_cfg_default(dmr_aura_cfg_t *c);

/* Parsers (DMR_ERR_PARSE naming the option and the bad part):
 * levers: "none", "all" or names a1..a4 joined by ',' or '+' (each once);
 * tuner: fixed | rule | sgd;
 * weights: name=value pairs joined by ',' (names atomic, rpc, move, load;
 * values numbers in [0, DMR_AURA_W_MAX], parsed as dmr_opt_double does;
 * pairs not given keep their value in w; *seen_p, when not NULL, gets bit k
 * set for each weight k named, DMR_AURA_W_*). */
dmr_status_t dmr_aura_parse_levers(const char *s, unsigned *levers_p, dmr_err_t *err);
dmr_status_t dmr_aura_parse_tuner(const char *s, dmr_aura_tuner_t *t_p, dmr_err_t *err);
dmr_status_t dmr_aura_parse_weights(const char *s, double w[DMR_AURA_NW], unsigned *seen_p,
				    dmr_err_t *err);
/* "a1+a2+a3+a4", "none": canonical lever names into buf (len >= 16). */
const char *dmr_aura_levers_name(unsigned levers, char *buf, size_t len);
const char *dmr_aura_tuner_name(dmr_aura_tuner_t t);

typedef struct dmr_aura dmr_aura_t;

/* A controller for ncn CNs of `slots` transaction slots each, over the
 * layout's tables (their rows) with `groups`
 * resolved (cfg->groups, or 64 when 0). window_ps > 0: the decision
 * window. DMR_ERR_NOMEM, DMR_ERR_RANGE (groups). */
dmr_status_t dmr_aura_create(const dmr_aura_cfg_t *cfg, uint32_t ncn, uint32_t slots,
			     const dmr_layout_t *l, uint64_t window_ps, dmr_aura_t **a_p,
			     dmr_err_t *err);
void dmr_aura_destroy(dmr_aura_t *a);

/* The group of txn (see above); 0 for a transaction without a static op. */
uint32_t dmr_aura_group(const dmr_aura_t *a, const dmr_trace_txn_t *txn);

/* Routing (A2/A4): the CN txn of group g read by `reader_cn` should run on;
 * inbox_len = transactions now waiting in that owner's inbox. Returns
 * reader_cn for an unowned group or, with A4, a spill (counted: the
 * owner's inbox holds dmr_aura_inbox_bound() or more); without A4 the
 * owner whatever its inbox holds (the caller applies backpressure at the
 * bound). */
uint32_t dmr_aura_route(dmr_aura_t *a, uint32_t g, uint32_t reader_cn, uint32_t owner_inbox_len);
/* Transactions an owner's inbox holds before A4 spills or the reader waits:
 * a CN's transaction slots. */
uint32_t dmr_aura_inbox_bound(const dmr_aura_t *a);
/* The group's owner CN, or UINT32_MAX when unowned. */
uint32_t dmr_aura_owner(const dmr_aura_t *a, uint32_t g);
/* A1: 1 when group g's transactions go by RPC now. */
int dmr_aura_rpc(const dmr_aura_t *a, uint32_t g);
/* A3: bit t set when table t's read-only ops use the CN cache now. */
uint32_t dmr_aura_cache_mask(const dmr_aura_t *a);

/* A finished transaction of group g on CN cn: committed (0: gave up),
 * attempts, atomics and RPCs posted over its attempts, by RPC (1) or
 * one-sided, latency from first start to commit (ps). A transaction that
 * committed at its first attempt gives the group's conflict-free atomics
 * per commit (the owned option's prediction). */
typedef struct dmr_aura_done {
	uint32_t cn, group;
	int committed, rpc;
	int rpc_asked; /* A1 sent it by RPC but it ran one-sided (records on several
			  MNs: the group is not offered A1 again) */
	uint32_t attempts;
	uint64_t atomics, rpcs, latency_ps;
} dmr_aura_done_t;
void dmr_aura_txn_done(dmr_aura_t *a, const dmr_aura_done_t *d);
/* The transaction's reads and writes of each table (A3's signal): called
 * with the trace transaction when it finishes. */
void dmr_aura_txn_tables(dmr_aura_t *a, const dmr_trace_txn_t *txn);

/* Close every window that ended by now_ps: tune the weights on what it
 * measured, then decide the levers for the next. Returns the windows
 * closed. */
uint32_t dmr_aura_tick(dmr_aura_t *a, uint64_t now_ps);

/* For the time series: weights now, groups by RPC / owned, tables cached,
 * ownership moves, spills and windows since the last call, the last
 * window's predicted and observed cost per commit (us). */
typedef struct dmr_aura_sample {
	double w[DMR_AURA_NW];
	uint32_t rpc_groups, owned_groups, cached_tables;
	uint64_t moves, spills, windows;
	double cost_pred, cost_obs;
} dmr_aura_sample_t;
void dmr_aura_sample(dmr_aura_t *a, dmr_aura_sample_t *s);

/* The run so far: lever activity (group-windows by RPC, owned; table-
 * windows cached; moves; spills), windows, final weights. */
typedef struct dmr_aura_summary {
	uint64_t windows, rpc_gw, owned_gw, cached_tw, moves, spills;
	double w[DMR_AURA_NW];
} dmr_aura_summary_t;
void dmr_aura_summary(const dmr_aura_t *a, dmr_aura_summary_t *s);

#endif
