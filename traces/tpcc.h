/*
 * traces/tpcc.h - TPC-C (v5.11) on dmreplay: the schema shared by the
 * generator (tpcc.c) and the verifier (verify.c), and the generator's C API.
 *
 * Schema (traces/GENERATORS.md has the why): tables in header order below;
 * each record's payload is a few 64-bit words (index enums below). Every id
 * stored in a record is a 0-based offset, not the spec's 1-based id:
 * warehouse w in [0, W), district d in [0, 10) of its warehouse, customer c
 * in [0, customers) of its district (3000 by default), item i in
 * [0, items) (100000 by default), order o in
 * [0, order_cap) of its district. Slot formulas are the inline functions
 * below; dist = w * 10 + d is a district's slot.
 *
 * Memory starts all zero: W_YTD = D_YTD = 0, D_NEXT_O_ID = 0, no orders, no
 * history. Tables warehouse, district, customer, item, stock are fully
 * loaded (present, zero payload); history, new_order, order, order_line
 * start absent and are filled by inserts.
 */
#ifndef DMR_TPCC_H
#define DMR_TPCC_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "gen.h"
#include "trace.h"
#include "workload.h"

/* ---- schema ------------------------------------------------------------ */

#define DMR_TPCC_DISTRICTS 10 /* per warehouse (clause 1.2) */
#define DMR_TPCC_CUSTOMERS                                                                         \
	3000		      /* per district (clause 1.2.1); the default and the                  \
				 largest --customers */
#define DMR_TPCC_ITEMS 100000 /* clause 1.2.1; the default and the largest --items */
#define DMR_TPCC_MIN_ITEMS 15 /* a NewOrder takes up to 15 distinct items */
#define DMR_TPCC_MIN_OL 5     /* order lines per order (clause 2.4.1.3) */
#define DMR_TPCC_MAX_OL 15
#define DMR_TPCC_STOCK_LEVEL_ORDERS 20 /* clause 2.8.2.2: last 20 orders */
#define DMR_TPCC_NAMES 1000	       /* C_LAST name numbers 0..999 (clause 4.3.2.3) */

/* Table indexes = order of dmr_trace_hdr_t.tables (spec clause 1.3 order). */
enum dmr_tpcc_table {
	DMR_TPCC_WAREHOUSE = 0,
	DMR_TPCC_DISTRICT,
	DMR_TPCC_CUSTOMER,
	DMR_TPCC_HISTORY,
	DMR_TPCC_NEW_ORDER,
	DMR_TPCC_ORDER,
	DMR_TPCC_ORDER_LINE,
	DMR_TPCC_ITEM,
	DMR_TPCC_STOCK,
	DMR_TPCC_NTABLES
};

/* Table names as written in the header. */
extern const char *const dmr_tpcc_table_names[DMR_TPCC_NTABLES];

/* Payload words of each table (the enum's last member is the word count). */
enum { DMR_TPCC_W_YTD, DMR_TPCC_W_TAX, DMR_TPCC_W_WORDS };
enum {
	DMR_TPCC_D_YTD,
	DMR_TPCC_D_TAX,
	DMR_TPCC_D_NEXT_O_ID,	    /* orders created so far = next o_id (0-based) */
	DMR_TPCC_D_NEXT_DELIV_O_ID, /* oldest undelivered o_id */
	DMR_TPCC_D_NEXT_OL,	    /* = 15 * D_NEXT_O_ID: order-line block of the next order */
	DMR_TPCC_D_NEXT_DELIV_OL,   /* = 15 * D_NEXT_DELIV_O_ID */
	DMR_TPCC_D_WORDS
};
enum {
	DMR_TPCC_C_BALANCE,
	DMR_TPCC_C_YTD_PAYMENT,
	DMR_TPCC_C_PAYMENT_CNT, /* also the next history slot of this customer */
	DMR_TPCC_C_DELIVERY_CNT,
	DMR_TPCC_C_LAST_O_ID_PLUS1, /* o_id + 1 of the customer's last order, 0: none */
	DMR_TPCC_C_LAST_OL_END,	    /* 15 * (o_id + 1) of that order, 0: none */
	DMR_TPCC_C_WORDS
};
enum { DMR_TPCC_H_AMOUNT, DMR_TPCC_H_D_SLOT, DMR_TPCC_H_WORDS };
enum { DMR_TPCC_NO_O_ID, DMR_TPCC_NO_WORDS };
enum {
	DMR_TPCC_O_C_ID, /* customer offset in the district, 0..2999 */
	DMR_TPCC_O_OL_CNT,
	DMR_TPCC_O_CARRIER_ID,	 /* 0 = null, 1..10 once delivered */
	DMR_TPCC_O_TOTAL_AMOUNT, /* sum of OL_AMOUNT, cents */
	DMR_TPCC_O_ENTRY_D,
	DMR_TPCC_O_WORDS
};
enum {
	DMR_TPCC_OL_I_ID, /* item offset 0..99999 */
	DMR_TPCC_OL_SUPPLY_W_ID,
	DMR_TPCC_OL_QUANTITY,
	DMR_TPCC_OL_AMOUNT,	/* cents */
	DMR_TPCC_OL_DELIVERY_D, /* 0 = null */
	DMR_TPCC_OL_WORDS
};
enum { DMR_TPCC_I_PRICE, DMR_TPCC_I_WORDS };
enum {
	DMR_TPCC_S_QUANTITY,
	DMR_TPCC_S_YTD,
	DMR_TPCC_S_ORDER_CNT,
	DMR_TPCC_S_REMOTE_CNT,
	DMR_TPCC_S_WORDS
};

/* Transaction types = order of dmr_trace_hdr_t.types. */
enum dmr_tpcc_type {
	DMR_TPCC_T_NEW_ORDER = 0,
	DMR_TPCC_T_PAYMENT,
	DMR_TPCC_T_ORDER_STATUS,
	DMR_TPCC_T_DELIVERY,
	DMR_TPCC_T_STOCK_LEVEL,
	DMR_TPCC_NTYPES
};
extern const char *const dmr_tpcc_type_names[DMR_TPCC_NTYPES];

/* Slot formulas (all arguments 0-based offsets). */
static inline uint64_t dmr_tpcc_district_slot(uint64_t w, uint64_t d)
{
	return w * DMR_TPCC_DISTRICTS + d;
}
/* customer c (< cpd, the customers per district) of district dist */
static inline uint64_t dmr_tpcc_customer_slot(uint64_t dist, uint64_t c, uint64_t cpd)
{
	return dist * cpd + c;
}
/* history: the n-th payment (n < payment_cap) of customer slot cs */
static inline uint64_t dmr_tpcc_history_slot(uint64_t cs, uint64_t n, uint64_t payment_cap)
{
	return cs * payment_cap + n;
}
/* order and new_order: order o of district dist */
static inline uint64_t dmr_tpcc_order_slot(uint64_t dist, uint64_t o, uint64_t order_cap)
{
	return dist * order_cap + o;
}
/* order_line: line ol (0..14) of order o of district dist; the lines of one
 * order are contiguous and so are the orders of a district. */
static inline uint64_t dmr_tpcc_order_line_slot(uint64_t dist, uint64_t o, uint64_t ol,
						uint64_t order_cap)
{
	return (dist * order_cap + o) * DMR_TPCC_MAX_OL + ol;
}
/* stock of item i (< items) at warehouse w */
static inline uint64_t dmr_tpcc_stock_slot(uint64_t w, uint64_t i, uint64_t items)
{
	return w * items + i;
}

/* ---- generator --------------------------------------------------------- */

enum dmr_tpcc_mix {
	DMR_TPCC_MIX_SPEC = 0,	 /* 45/43/4/4/4 NO/P/OS/D/SL (clause 5.2.3 minimums) */
	DMR_TPCC_MIX_DM = 1,	 /* 50/46/4/0/0, as run by the published DM systems */
	DMR_TPCC_MIX_CUSTOM = 2, /* dmr_tpcc_cfg_t.mix_pct */
};

typedef struct dmr_tpcc_cfg {
	uint64_t txns;
	uint64_t seed;
	uint32_t warehouses;  /* W >= 1 */
	int mix;	      /* enum dmr_tpcc_mix */
	unsigned mix_pct[5];  /* DMR_TPCC_MIX_CUSTOM: percent per type (enum
				 dmr_tpcc_type order), summing to 100 */
	uint32_t order_cap;   /* order ids per district (>= 1) */
	uint32_t payment_cap; /* history rows per customer (>= 1) */
	uint32_t customers;   /* per district, 1 .. DMR_TPCC_CUSTOMERS (default 3000) */
	uint32_t items;	      /* DMR_TPCC_MIN_ITEMS .. DMR_TPCC_ITEMS (default 100000);
				 also the stock rows per warehouse */
	const char *preset;   /* NULL, or the preset's name (header param) */
	dmr_regime_t regime;  /* home warehouse draw */
	int quiet;	      /* 1: no footprint / WARN lines on stderr */
} dmr_tpcc_cfg_t;

/*
 * The mix of cfg in percent per type (enum dmr_tpcc_type order): the spec
 * or dm rows, or cfg->mix_pct.
 */
const unsigned *dmr_tpcc_mix_pct(const dmr_tpcc_cfg_t *cfg);

/*
 * Parse a --mix value: "spec", "dm", or five percentages
 * "NO,P,OS,D,SL" (integers 0..100, summing to 100; a list equal to the
 * spec or dm row is taken as that name). Sets cfg->mix (and mix_pct).
 * Errors (DMR_ERR_INVALID, message naming --mix, the value, the sum or the
 * bad field, and the allowed values): anything else.
 */
dmr_status_t dmr_tpcc_mix_parse(const char *s, dmr_tpcc_cfg_t *cfg, dmr_err_t *err);

/*
 * Apply a named preset to cfg: "crest" = adslabcuhk/crest's TPC-C
 * (config/tpcc_config.json: num_customer_per_district 300, num_item 10000,
 * num_stock_per_warehouse 10000; benchmark/TPCC/TpccConstant.h:
 * MAX_ORDERID_PER_DISTRICT 20000, MAX_PAYMENT_CNT_PER_CUSTOMER 1000,
 * FREQUENCY_* 50/46/4/0/0 = the dm mix). Sets the fields the preset names
 * only. Errors: DMR_ERR_INVALID naming the preset and the known ones.
 */
dmr_status_t dmr_tpcc_preset(const char *name, dmr_tpcc_cfg_t *cfg, dmr_err_t *err);

/* Counters of what was generated (optional output of dmr_tpcc_generate). */
typedef struct dmr_tpcc_stats {
	uint64_t txns;
	uint64_t by_type[DMR_TPCC_NTYPES];
	uint64_t hot_home;	     /* txns whose home warehouse is in the regime's hot set */
	uint64_t order_lines;	     /* NewOrder lines */
	uint64_t remote_order_lines; /* ... with a supply warehouse != home (clause 2.4.1.5) */
	uint64_t payment_remote;     /* Payments with a customer of another warehouse */
	uint64_t payment_by_name;    /* Payments selecting the customer by C_LAST */
	uint64_t order_status_by_name;
} dmr_tpcc_stats_t;

/* Defaults: W 40, spec mix, order_cap 3000, payment_cap 100, customers
 * 3000, items 100000, txns 100000, seed 1, uniform regime. */
void dmr_tpcc_cfg_default(dmr_tpcc_cfg_t *cfg);

/*
 * Build the trace header of cfg: the 9 tables (rows, payload bytes, loaded
 * rows per the schema above), the 5 type names, and every parameter
 * (warehouses, mix, order_cap, payment_cap, seed, txns, regime, NURand C
 * constants, footprint_bytes; customers_per_district, items and preset
 * only when they differ from the defaults, so that a default trace is
 * byte-identical to one made before those knobs existed). Unless cfg->quiet, prints the footprint
 * (bytes = rows * (16 + payload) per table and total, MiB) and WARN lines
 * when the regime is expected to overflow order_cap (NewOrders per district
 * of the hottest warehouse) or payment_cap (Payments to the busiest
 * customer) to stderr. Errors: DMR_ERR_INVALID naming the bad cfg field.
 */
dmr_status_t dmr_tpcc_header(const dmr_tpcc_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err);

/*
 * Generate cfg->txns transactions and hand each to emit (in order, ids
 * 0 .. txns-1). Deterministic in cfg (same cfg, same transactions). The
 * transaction shapes are documented in traces/GENERATORS.md. stats_p may be
 * NULL. Errors: DMR_ERR_INVALID (bad cfg), DMR_ERR_NOMEM, or what emit
 * returned.
 */
dmr_status_t dmr_tpcc_generate(const dmr_tpcc_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       dmr_tpcc_stats_t *stats_p, dmr_err_t *err);

/*
 * NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
 * (clause 2.1.6), random() uniform inclusive drawn from r.
 */
uint64_t dmr_tpcc_nurand(gsl_rng *r, uint64_t A, uint64_t x, uint64_t y, uint64_t C);

/*
 * C_LAST of name number num (0..999): the syllables of its three decimal
 * digits (clause 4.3.2.3), e.g. 371 -> "PRICALLYOUGHT". buf holds >= 16
 * bytes. Returns buf.
 */
char *dmr_tpcc_last_name(unsigned num, char *buf);

/*
 * The static C_LAST assignment, the same in every district (we keep no
 * per-district names, so by-name lookups are resolved at generation time):
 * customer offset c < 1000 gets name number c (clause 4.3.3.1: C_ID 1..1000
 * take C_ID - 1), c >= 1000 gets NURand(255, 0, 999) with C =
 * DMR_TPCC_C_LAST_LOAD from an mt19937 seeded with DMR_TPCC_NAME_SEED
 * (independent of --seed). middle[num] is the customer selected by name num
 * per clause 2.5.2.2: of the customers with that C_LAST sorted (by C_ID, as
 * we keep no C_FIRST), position ceil(n / 2); count[num] >= 1 for all num <
 * nnames. With fewer than 1000 customers per district (--customers, a
 * scaled-down database as CREST's 300) only names 0 .. customers-1 exist:
 * nnames = min(customers, 1000) and the run-time draw is
 * NURand(255, 0, nnames - 1).
 */
#define DMR_TPCC_C_LAST_LOAD 157
#define DMR_TPCC_NAME_SEED 20240517UL
typedef struct dmr_tpcc_names {
	unsigned customers; /* per district */
	unsigned nnames;    /* min(customers, DMR_TPCC_NAMES) */
	uint16_t name[DMR_TPCC_CUSTOMERS];
	uint16_t middle[DMR_TPCC_NAMES];
	uint16_t count[DMR_TPCC_NAMES];
} dmr_tpcc_names_t;

/* Fill *n (caller-owned) for `customers` per district (1 ..
 * DMR_TPCC_CUSTOMERS). Errors: DMR_ERR_NOMEM (no GSL generator),
 * DMR_ERR_INVALID (customers out of range). */
dmr_status_t dmr_tpcc_names_init(dmr_tpcc_names_t *n, unsigned customers, dmr_err_t *err);

/* Command line: see --help. argv[0] = "tpcc". */
int dmr_gen_tpcc_main(int argc, char **argv);

#endif /* DMR_TPCC_H */
