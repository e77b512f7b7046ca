/*
 * traces/tpcc.c - TPC-C trace generator (TPC-C v5.11 clause 2, mapped onto
 * dmreplay's round/dep/guard operations; see traces/GENERATORS.md).
 */
#include "tpcc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const dmr_tpcc_table_names[DMR_TPCC_NTABLES] = {
    "warehouse", "district",   "customer", "history", "new_order",
    "order",	 "order_line", "item",	   "stock",
};

const char *const dmr_tpcc_type_names[DMR_TPCC_NTYPES] = {
    "NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel",
};

/* Mix in percent per type (NO, P, OS, D, SL). */
static const unsigned tpcc_mix_pct[2][DMR_TPCC_NTYPES] = {
    [DMR_TPCC_MIX_SPEC] = {45, 43, 4, 4, 4},
    [DMR_TPCC_MIX_DM] = {50, 46, 4, 0, 0},
};
static const char *const tpcc_mix_names[2] = {"spec", "dm"};

const unsigned *dmr_tpcc_mix_pct(const dmr_tpcc_cfg_t *cfg)
{
	return cfg->mix == DMR_TPCC_MIX_CUSTOM ? cfg->mix_pct : tpcc_mix_pct[cfg->mix];
}

dmr_status_t dmr_tpcc_mix_parse(const char *s, dmr_tpcc_cfg_t *cfg, dmr_err_t *err)
{
	static const char *const what[DMR_TPCC_NTYPES] = {"NewOrder", "Payment", "OrderStatus",
							  "Delivery", "StockLevel"};
	unsigned pct[DMR_TPCC_NTYPES], sum = 0;
	const char *p = s;

	for (int m = 0; m < 2; m++)
		if (strcmp(s, tpcc_mix_names[m]) == 0) {
			cfg->mix = m;
			return DMR_OK;
		}
	for (int i = 0; i < DMR_TPCC_NTYPES; i++) {
		char *end;
		unsigned long v;

		if (*p < '0' || *p > '9')
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--mix: '%s': %s%sexpected spec, dm, or five "
					   "percentages NO,P,OS,D,SL (integers 0..100 summing to "
					   "100, e.g. 45,43,4,4,4)",
					   s, i ? what[i] : "", i ? ": " : "");
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v > 100)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--mix: '%s': %s percentage not in 0..100", s, what[i]);
		pct[i] = (unsigned)v;
		sum += pct[i];
		p = end;
		if (i + 1 < DMR_TPCC_NTYPES) {
			if (*p != ',' && *p != ':')
				return dmr_err_set(
				    err, DMR_ERR_INVALID,
				    "--mix: '%s': expected five comma- (or colon-) separated "
				    "percentages NO,P,OS,D,SL (or spec, dm)",
				    s);
			p++;
		}
	}
	if (*p != '\0')
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "--mix: '%s': expected five comma- (or colon-) separated percentages "
		    "NO,P,OS,D,SL (or spec, dm), got more",
		    s);
	if (sum != 100)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--mix: '%s': the percentages sum to %u, not 100", s, sum);
	for (int m = 0; m < 2; m++)
		if (memcmp(pct, tpcc_mix_pct[m], sizeof(pct)) == 0) {
			cfg->mix = m;
			return DMR_OK;
		}
	cfg->mix = DMR_TPCC_MIX_CUSTOM;
	memcpy(cfg->mix_pct, pct, sizeof(pct));
	return DMR_OK;
}

dmr_status_t dmr_tpcc_preset(const char *name, dmr_tpcc_cfg_t *cfg, dmr_err_t *err)
{
	if (strcmp(name, "crest") != 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "--preset: '%s' unknown (known: crest)",
				   name);
	/* adslabcuhk/crest config/tpcc_config.json and
	 * benchmark/TPCC/TpccConstant.h (tpcc.h) */
	cfg->customers = 300;
	cfg->items = 10000;
	cfg->order_cap = 20000;
	cfg->payment_cap = 1000;
	cfg->mix = DMR_TPCC_MIX_DM;
	cfg->preset = "crest";
	return DMR_OK;
}

/* Clause 2.4.1.5 (1% remote supply), 2.5.1.2 (15% remote customer, 60% by
 * C_LAST), 2.6.1.2 (60% by C_LAST). */
#define TPCC_REMOTE_OL 0.01
#define TPCC_REMOTE_PAYMENT 0.15
#define TPCC_BY_NAME 0.60

/* NURand C constants (clause 2.1.6), drawn first from the seeded generator. */
typedef struct tpcc_consts {
	uint64_t c_id;	  /* A = 1023 */
	uint64_t ol_i_id; /* A = 8191 */
	uint64_t c_last;  /* A = 255, run-time C; |C_run - C_load| in 65..119, not 96/112 */
} tpcc_consts_t;

typedef struct tpcc_gen {
	const dmr_tpcc_cfg_t *cfg;
	gsl_rng *r;
	dmr_trace_txn_t *t;
	dmr_tpcc_names_t names;
	tpcc_consts_t c;
	uint64_t hot; /* hot warehouses 0 .. hot-1 (0: none) */
	dmr_tpcc_stats_t st;
} tpcc_gen_t;

/* ---- helpers ------------------------------------------------------------ */

uint64_t dmr_tpcc_nurand(gsl_rng *r, uint64_t A, uint64_t x, uint64_t y, uint64_t C)
{
	uint64_t a = dmr_gen_range(r, 0, A), b = dmr_gen_range(r, x, y);

	return (((a | b) + C) % (y - x + 1)) + x;
}

char *dmr_tpcc_last_name(unsigned num, char *buf)
{
	static const char *const syl[10] = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
					    "ESE", "ANTI",  "CALLY", "ATION", "EING"};

	num %= DMR_TPCC_NAMES;
	snprintf(buf, 16, "%s%s%s", syl[num / 100], syl[(num / 10) % 10], syl[num % 10]);
	return buf;
}

dmr_status_t dmr_tpcc_names_init(dmr_tpcc_names_t *n, unsigned customers, dmr_err_t *err)
{
	gsl_rng *r;
	unsigned seen[DMR_TPCC_NAMES] = {0};

	if (customers < 1 || customers > DMR_TPCC_CUSTOMERS)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: customers %u not in [1, %d]",
				   customers, DMR_TPCC_CUSTOMERS);
	if ((r = gsl_rng_alloc(gsl_rng_mt19937)) == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "tpcc: gsl_rng_alloc failed");
	gsl_rng_set(r, DMR_TPCC_NAME_SEED);
	memset(n, 0, sizeof(*n));
	n->customers = customers;
	n->nnames = customers < DMR_TPCC_NAMES ? customers : DMR_TPCC_NAMES;
	for (unsigned c = 0; c < customers; c++) {
		n->name[c] = (uint16_t)(c < DMR_TPCC_NAMES ? c
							   : dmr_tpcc_nurand(r, 255, 0, 999,
									     DMR_TPCC_C_LAST_LOAD));
		n->count[n->name[c]]++;
	}
	gsl_rng_free(r);
	/* clause 2.5.2.2: position ceil(count / 2) in C_ID order */
	for (unsigned c = 0; c < customers; c++) {
		unsigned num = n->name[c];

		if (++seen[num] == (n->count[num] + 1u) / 2u)
			n->middle[num] = (uint16_t)c;
	}
	return DMR_OK;
}

static void tpcc_draw_consts(gsl_rng *r, tpcc_consts_t *c)
{
	uint64_t delta;

	c->c_id = dmr_gen_range(r, 0, 1023);
	c->ol_i_id = dmr_gen_range(r, 0, 8191);
	do
		delta = dmr_gen_range(r, 65, 119);
	while (delta == 96 || delta == 112);
	c->c_last = DMR_TPCC_C_LAST_LOAD - delta; /* 38 .. 92 */
}

/* I_PRICE of item offset i in cents, 100 .. 10000 (clause 4.3.3.1: random
 * within [1.00 .. 100.00]); static, from a hash of i (memory holds zeros,
 * so the generator computes amounts from this table). */
static int64_t tpcc_price(uint64_t i)
{
	uint64_t z = i + UINT64_C(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	z ^= z >> 31;
	return (int64_t)(100 + z % 9901);
}

static dmr_status_t tpcc_check(const dmr_tpcc_cfg_t *cfg, dmr_err_t *err)
{
	if (cfg->warehouses < 1 || cfg->warehouses > 100000)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: warehouses %u not in [1, 100000]",
				   cfg->warehouses);
	if (cfg->mix != DMR_TPCC_MIX_SPEC && cfg->mix != DMR_TPCC_MIX_DM &&
	    cfg->mix != DMR_TPCC_MIX_CUSTOM)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: mix %d unknown", cfg->mix);
	if (cfg->mix == DMR_TPCC_MIX_CUSTOM) {
		unsigned sum = 0;

		for (int i = 0; i < DMR_TPCC_NTYPES; i++)
			sum += cfg->mix_pct[i];
		if (sum != 100)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "tpcc: mix percentages sum to %u, not 100", sum);
	}
	if (cfg->customers < 1 || cfg->customers > DMR_TPCC_CUSTOMERS)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "tpcc: customers per district %u not in [1, %d]", cfg->customers,
				   DMR_TPCC_CUSTOMERS);
	if (cfg->items < DMR_TPCC_MIN_ITEMS || cfg->items > DMR_TPCC_ITEMS)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: items %u not in [%d, %d]",
				   cfg->items, DMR_TPCC_MIN_ITEMS, DMR_TPCC_ITEMS);
	if (cfg->order_cap < 1 || cfg->order_cap > 10000000)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: order_cap %u not in [1, 10000000]",
				   cfg->order_cap);
	if (cfg->payment_cap < 1 || cfg->payment_cap > 1000000)
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: payment_cap %u not in [1, 1000000]",
				   cfg->payment_cap);
	if (!cfg->regime.uniform && !(cfg->regime.hot_p >= 0.0 && cfg->regime.hot_p <= 1.0))
		return dmr_err_set(err, DMR_ERR_INVALID, "tpcc: regime %s: P not in [0, 1]",
				   cfg->regime.name);
	return DMR_OK;
}

void dmr_tpcc_cfg_default(dmr_tpcc_cfg_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->txns = 100000;
	cfg->seed = 1;
	cfg->warehouses = 40;
	cfg->mix = DMR_TPCC_MIX_SPEC;
	cfg->order_cap = 3000;
	cfg->payment_cap = 100;
	cfg->customers = DMR_TPCC_CUSTOMERS;
	cfg->items = DMR_TPCC_ITEMS;
	dmr_gen_regime_uniform(&cfg->regime);
}

/* ---- header ------------------------------------------------------------- */

/*
 * Expected load on the caps (approximate, for the WARN lines):
 *  - NewOrders per district of the hottest warehouse:
 *    txns * p(NewOrder) * pmax(warehouse) / 10;
 *  - Payments to the busiest customer: txns * p(Payment) * share of the
 *    hottest warehouse on the customer side (85% home + 15% remote from the
 *    others) / 10 * max_c p(c), p(c) = 0.4 NURand(1023,1,3000) mass of c +
 *    0.6 mass of the names whose middle customer is c (exact, by
 *    enumeration of the NURand inputs).
 */
static void tpcc_warn(const dmr_tpcc_cfg_t *cfg, const tpcc_consts_t *k,
		      const dmr_tpcc_names_t *names)
{
	const unsigned *pct = dmr_tpcc_mix_pct(cfg);
	const uint64_t C = cfg->customers, nn = names->nnames;
	double W = cfg->warehouses, pw = dmr_gen_regime_pmax(&cfg->regime, cfg->warehouses);
	double no = (double)cfg->txns * pct[DMR_TPCC_T_NEW_ORDER] / 100.0 * pw;
	double *pc = calloc(C, sizeof(*pc));
	double pmax = 0, cw, pay;

	if (no / DMR_TPCC_DISTRICTS > cfg->order_cap)
		fprintf(stderr,
			"tpcc: WARN: regime %s: ~%.0f NewOrders expected at the hottest warehouse "
			"(%.0f per district) vs %u x %u = %.0f order slots: the excess fail as "
			"table full\n",
			cfg->regime.name, no, no / DMR_TPCC_DISTRICTS, DMR_TPCC_DISTRICTS,
			cfg->order_cap, (double)DMR_TPCC_DISTRICTS * cfg->order_cap);
	if (pc == NULL)
		return;
	for (uint64_t a = 0; a <= 1023; a++)
		for (uint64_t b = 1; b <= C; b++)
			pc[((a | b) + k->c_id) % C] += (1.0 - TPCC_BY_NAME) / (1024.0 * (double)C);
	for (uint64_t a = 0; a <= 255; a++)
		for (uint64_t b = 0; b < nn; b++)
			pc[names->middle[((a | b) + k->c_last) % nn]] +=
			    TPCC_BY_NAME / (256.0 * (double)nn);
	for (unsigned c = 0; c < C; c++)
		if (pc[c] > pmax)
			pmax = pc[c];
	free(pc);
	cw = W > 1 ? (1 - TPCC_REMOTE_PAYMENT) * pw + TPCC_REMOTE_PAYMENT * (1 - pw) / (W - 1) : 1;
	pay = (double)cfg->txns * pct[DMR_TPCC_T_PAYMENT] / 100.0 * cw / DMR_TPCC_DISTRICTS * pmax;
	if (pay > cfg->payment_cap)
		fprintf(stderr,
			"tpcc: WARN: regime %s: ~%.0f Payments expected to the busiest customer "
			"(hottest warehouse) vs payment_cap %u: the excess fail as table full\n",
			cfg->regime.name, pay, cfg->payment_cap);
}

/* Header param mix: the row's name, or the five percentages. */
static dmr_status_t tpcc_hdr_mix(const dmr_tpcc_cfg_t *cfg, dmr_trace_hdr_t *h, dmr_err_t *err)
{
	const unsigned *p = cfg->mix_pct;

	if (cfg->mix != DMR_TPCC_MIX_CUSTOM)
		return dmr_gen_hdr_setf(h, err, "mix", "%s", tpcc_mix_names[cfg->mix]);
	return dmr_gen_hdr_setf(h, err, "mix", "%u,%u,%u,%u,%u", p[0], p[1], p[2], p[3], p[4]);
}

static void tpcc_tables(const dmr_tpcc_cfg_t *cfg, dmr_trace_hdr_t *h)
{
	uint64_t W = cfg->warehouses, dists = W * DMR_TPCC_DISTRICTS;
	uint64_t custs = dists * cfg->customers, orders = dists * cfg->order_cap;
	static const uint32_t words[DMR_TPCC_NTABLES] = {
	    DMR_TPCC_W_WORDS,  DMR_TPCC_D_WORDS,  DMR_TPCC_C_WORDS,
	    DMR_TPCC_H_WORDS,  DMR_TPCC_NO_WORDS, DMR_TPCC_O_WORDS,
	    DMR_TPCC_OL_WORDS, DMR_TPCC_I_WORDS,  DMR_TPCC_S_WORDS,
	};
	const uint64_t rows[DMR_TPCC_NTABLES] = {
	    W,
	    dists,
	    custs,
	    custs * cfg->payment_cap,
	    orders,
	    orders,
	    orders * DMR_TPCC_MAX_OL,
	    cfg->items,
	    W * cfg->items,
	};

	for (int i = 0; i < DMR_TPCC_NTABLES; i++) {
		int empty = i == DMR_TPCC_HISTORY || i == DMR_TPCC_NEW_ORDER ||
			    i == DMR_TPCC_ORDER || i == DMR_TPCC_ORDER_LINE;

		dmr_gen_hdr_table(h, dmr_tpcc_table_names[i], rows[i], words[i] * 8,
				  empty ? 0 : rows[i]);
	}
	for (int i = 0; i < DMR_TPCC_NTYPES; i++)
		snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "%s", dmr_tpcc_type_names[i]);
}

dmr_status_t dmr_tpcc_header(const dmr_tpcc_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err)
{
	dmr_trace_hdr_t *h;
	tpcc_consts_t k;
	dmr_tpcc_names_t *names = NULL;
	gsl_rng *r;
	uint64_t fp;
	dmr_status_t st;

	if ((st = tpcc_check(cfg, err)) != DMR_OK ||
	    (st = dmr_gen_regime_check(&cfg->regime, cfg->warehouses, "warehouses", err)) != DMR_OK)
		return st;
	h = malloc(sizeof(*h));
	r = gsl_rng_alloc(gsl_rng_mt19937);
	names = malloc(sizeof(*names));
	if (h == NULL || r == NULL || names == NULL) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "tpcc: out of memory");
		goto out;
	}
	gsl_rng_set(r, (unsigned long)cfg->seed);
	tpcc_draw_consts(r, &k);
	if ((st = dmr_tpcc_names_init(names, cfg->customers, err)) != DMR_OK)
		goto out;
	if ((st = dmr_gen_hdr_begin(h, "tpcc", cfg->txns, cfg->seed, &cfg->regime, err)) != DMR_OK)
		goto out;
	tpcc_tables(cfg, h);
	if (!cfg->quiet)
		fprintf(stderr, "tpcc: MN footprint (rows x (16 + payload)):\n");
	fp = dmr_gen_footprint(h, cfg->quiet ? NULL : stderr);
	if ((st = dmr_gen_hdr_setf(h, err, "warehouses", "%u", cfg->warehouses)) != DMR_OK ||
	    (st = tpcc_hdr_mix(cfg, h, err)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "order_cap", "%u", cfg->order_cap)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "payment_cap", "%u", cfg->payment_cap)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "remote_ol_pct", "%g", TPCC_REMOTE_OL * 100)) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "remote_payment_pct", "%g",
				   TPCC_REMOTE_PAYMENT * 100)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "by_name_pct", "%g", TPCC_BY_NAME * 100)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "nurand_c_id", "%" PRIu64, k.c_id)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "nurand_ol_i_id", "%" PRIu64, k.ol_i_id)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "nurand_c_last_run", "%" PRIu64, k.c_last)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "nurand_c_last_load", "%d", DMR_TPCC_C_LAST_LOAD)) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "name_seed", "%lu", DMR_TPCC_NAME_SEED)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "footprint_bytes", "%" PRIu64, fp)) != DMR_OK ||
	    /* the cell annotation (FORMAT.md "Cell annotation"): NewOrder
	     * reads W_TAX of its warehouse row (clause 2.4.2.2), not W_YTD,
	     * which Payment updates; --protocol crest locks cells by it */
	    (st = dmr_gen_hdr_setf(h, err, "reads.NewOrder.warehouse", "%d", DMR_TPCC_W_TAX)) !=
		DMR_OK)
		goto out;
	/* the knobs added after the first shipped traces: written only when
	 * not the default, so that a default trace stays byte-identical */
	if ((cfg->customers != DMR_TPCC_CUSTOMERS &&
	     (st = dmr_gen_hdr_setf(h, err, "customers_per_district", "%u", cfg->customers)) !=
		 DMR_OK) ||
	    (cfg->items != DMR_TPCC_ITEMS &&
	     (st = dmr_gen_hdr_setf(h, err, "items", "%u", cfg->items)) != DMR_OK) ||
	    (cfg->preset && (st = dmr_gen_hdr_setf(h, err, "preset", "%s", cfg->preset)) != DMR_OK))
		goto out;
	/* drift (issue #4): the hot warehouses are 0..K-1 in the trace; the
	 * replay rotates warehouse partitions by K every drift_s seconds of run
	 * time (FORMAT.md "Drift"). Every table but item is warehouse-major. */
	if (cfg->regime.drift_s > 0 &&
	    ((st = dmr_gen_hdr_setf(h, err, "drift_s", "%g", cfg->regime.drift_s)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "drift_shift", "%u", cfg->regime.hot_k)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "partitions", "%u", cfg->warehouses)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "partitioned",
				    "warehouse,district,customer,history,new_order,order,"
				    "order_line,stock")) != DMR_OK))
		goto out;
	if (!cfg->quiet)
		tpcc_warn(cfg, &k, names);
	*hdr_p = *h;
out:
	free(names);
	gsl_rng_free(r);
	free(h);
	return st;
}

/* ---- transactions ------------------------------------------------------- */

#define TPCC_OP(g, kind, table, round, key, idx_p)                                                 \
	dmr_gen_op((g)->t, (kind), (table), (round), (int64_t)(key), (idx_p))

/* Customer offset for Payment / OrderStatus: 60% by C_LAST (resolved to the
 * middle customer of that name), else NURand(1023, 1, 3000). */
static unsigned tpcc_pick_customer(tpcc_gen_t *g, int *by_name_p)
{
	*by_name_p = gsl_rng_uniform(g->r) < TPCC_BY_NAME;
	if (*by_name_p)
		return g->names
		    .middle[dmr_tpcc_nurand(g->r, 255, 0, g->names.nnames - 1, g->c.c_last)];
	return (unsigned)dmr_tpcc_nurand(g->r, 1023, 1, g->cfg->customers, g->c.c_id) - 1;
}

/*
 * NewOrder (clause 2.4). Round 0: warehouse R, district U (next o_id += 1,
 * next line block += 15), customer U (last order := next o_id), items R,
 * stock U. Round 1: order I, new_order I, order_line I x ol_cnt, all at the
 * slot given by the district's pre-update counters.
 */
static int tpcc_new_order(tpcc_gen_t *g, uint64_t w)
{
	const uint64_t cap = g->cfg->order_cap, W = g->cfg->warehouses;
	uint64_t d = dmr_gen_below(g->r, DMR_TPCC_DISTRICTS), dist = dmr_tpcc_district_slot(w, d);
	const uint64_t C = g->cfg->customers, I = g->cfg->items;
	uint64_t c = dmr_tpcc_nurand(g->r, 1023, 1, C, g->c.c_id) - 1;
	uint64_t n = dmr_gen_range(g->r, DMR_TPCC_MIN_OL, DMR_TPCC_MAX_OL);
	uint64_t item[DMR_TPCC_MAX_OL], supply[DMR_TPCC_MAX_OL], qty[DMR_TPCC_MAX_OL];
	int64_t amount[DMR_TPCC_MAX_OL], total = 0;
	dmr_trace_op_t *op;
	int di;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t j;

		do { /* distinct items: one record per txn */
			item[k] = dmr_tpcc_nurand(g->r, 8191, 1, I, g->c.ol_i_id) - 1;
			for (j = 0; j < k && item[j] != item[k]; j++)
				;
		} while (j < k);
		supply[k] = w;
		if (W > 1 && gsl_rng_uniform(g->r) < TPCC_REMOTE_OL) {
			supply[k] = dmr_gen_other(g->r, W, w);
			g->st.remote_order_lines++;
		}
		qty[k] = dmr_gen_range(g->r, 1, 10);
		amount[k] = (int64_t)qty[k] * tpcc_price(item[k]);
		total += amount[k];
	}
	g->st.order_lines += n;

	if (!TPCC_OP(g, 'R', DMR_TPCC_WAREHOUSE, 0, w, NULL) ||
	    !(op = TPCC_OP(g, 'U', DMR_TPCC_DISTRICT, 0, dist, &di)))
		return -1;
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_D_NEXT_O_ID, 1);
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_D_NEXT_OL, DMR_TPCC_MAX_OL);
	if (!(op = TPCC_OP(g, 'U', DMR_TPCC_CUSTOMER, 0, dmr_tpcc_customer_slot(dist, c, C), NULL)))
		return -1;
	dmr_trace_op_act_ref(op, DMR_TACT_SET, DMR_TPCC_C_LAST_O_ID_PLUS1, di,
			     DMR_TPCC_D_NEXT_O_ID);
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_LAST_O_ID_PLUS1, 1);
	dmr_trace_op_act_ref(op, DMR_TACT_SET, DMR_TPCC_C_LAST_OL_END, di, DMR_TPCC_D_NEXT_OL);
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_LAST_OL_END, DMR_TPCC_MAX_OL);
	for (uint64_t k = 0; k < n; k++)
		if (!TPCC_OP(g, 'R', DMR_TPCC_ITEM, 0, item[k], NULL))
			return -1;
	for (uint64_t k = 0; k < n; k++) {
		/* S_QUANTITY -= qty (no +91 refill: conditional on the read value) */
		if (!(op = TPCC_OP(g, 'U', DMR_TPCC_STOCK, 0,
				   dmr_tpcc_stock_slot(supply[k], item[k], I), NULL)))
			return -1;
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_S_QUANTITY, -(int64_t)qty[k]);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_S_YTD, (int64_t)qty[k]);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_S_ORDER_CNT, 1);
		if (supply[k] != w)
			dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_S_REMOTE_CNT, 1);
	}

	if (!(op = TPCC_OP(g, 'I', DMR_TPCC_ORDER, 1, dmr_tpcc_order_slot(dist, 0, cap), NULL)))
		return -1;
	dmr_gen_dep(op, di, DMR_TPCC_D_NEXT_O_ID, 0, (int64_t)cap);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_O_C_ID, (int64_t)c);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_O_OL_CNT, (int64_t)n);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_O_TOTAL_AMOUNT, total);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_O_ENTRY_D, (int64_t)g->t->id + 1);
	if (!(op = TPCC_OP(g, 'I', DMR_TPCC_NEW_ORDER, 1, dmr_tpcc_order_slot(dist, 0, cap), NULL)))
		return -1;
	dmr_gen_dep(op, di, DMR_TPCC_D_NEXT_O_ID, 0, (int64_t)cap);
	dmr_trace_op_act_ref(op, DMR_TACT_SET, DMR_TPCC_NO_O_ID, di, DMR_TPCC_D_NEXT_O_ID);
	for (uint64_t k = 0; k < n; k++) {
		if (!(op = TPCC_OP(g, 'I', DMR_TPCC_ORDER_LINE, 1,
				   dmr_tpcc_order_line_slot(dist, 0, k, cap), NULL)))
			return -1;
		/* next_ol = 15 * next_o_id: range [0, 15 * (cap - 1) + 1), so that
		 * next_o_id = cap is "table full" as for the order insert */
		dmr_gen_dep(op, di, DMR_TPCC_D_NEXT_OL, 0,
			    (int64_t)(cap - 1) * DMR_TPCC_MAX_OL + 1);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_OL_I_ID, (int64_t)item[k]);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_OL_SUPPLY_W_ID, (int64_t)supply[k]);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_OL_QUANTITY, (int64_t)qty[k]);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_OL_AMOUNT, amount[k]);
	}
	return 0;
}

/*
 * Payment (clause 2.5). Round 0: warehouse U (W_YTD += h), district U
 * (D_YTD += h), customer U (balance -= h, ytd_payment += h, payment_cnt
 * += 1). Round 1: history I at cust_slot * payment_cap + payment_cnt.
 */
static int tpcc_payment(tpcc_gen_t *g, uint64_t w)
{
	const uint64_t W = g->cfg->warehouses, pcap = g->cfg->payment_cap;
	uint64_t d = dmr_gen_below(g->r, DMR_TPCC_DISTRICTS), dist = dmr_tpcc_district_slot(w, d);
	int64_t h = (int64_t)dmr_gen_range(g->r, 100, 500000); /* [1.00, 5000.00] in cents */
	uint64_t cw = w, cd = d, c, cs;
	dmr_trace_op_t *op;
	int by_name, ci;

	if (W > 1 && gsl_rng_uniform(g->r) < TPCC_REMOTE_PAYMENT) {
		cw = dmr_gen_other(g->r, W, w);
		cd = dmr_gen_below(g->r, DMR_TPCC_DISTRICTS);
		g->st.payment_remote++;
	}
	c = tpcc_pick_customer(g, &by_name);
	g->st.payment_by_name += (uint64_t)by_name;
	cs = dmr_tpcc_customer_slot(dmr_tpcc_district_slot(cw, cd), c, g->cfg->customers);

	if (!(op = TPCC_OP(g, 'U', DMR_TPCC_WAREHOUSE, 0, w, NULL)))
		return -1;
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_W_YTD, h);
	if (!(op = TPCC_OP(g, 'U', DMR_TPCC_DISTRICT, 0, dist, NULL)))
		return -1;
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_D_YTD, h);
	if (!(op = TPCC_OP(g, 'U', DMR_TPCC_CUSTOMER, 0, cs, &ci)))
		return -1;
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_BALANCE, -h);
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_YTD_PAYMENT, h);
	dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_PAYMENT_CNT, 1);
	if (!(op = TPCC_OP(g, 'I', DMR_TPCC_HISTORY, 1, dmr_tpcc_history_slot(cs, 0, pcap), NULL)))
		return -1;
	dmr_gen_dep(op, ci, DMR_TPCC_C_PAYMENT_CNT, 0, (int64_t)pcap);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_H_AMOUNT, h);
	dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_H_D_SLOT, (int64_t)dist);
	return 0;
}

/*
 * OrderStatus (clause 2.6). Round 0: customer R. Round 1: the customer's
 * last order R (slot = dist * cap - 1 + last_o_id_plus1, skipped when the
 * customer has no order) and its 15 line slots as one range R (count 15;
 * slots beyond ol_cnt are absent).
 */
static int tpcc_order_status(tpcc_gen_t *g, uint64_t w)
{
	const int64_t cap = g->cfg->order_cap, ol = DMR_TPCC_MAX_OL;
	uint64_t d = dmr_gen_below(g->r, DMR_TPCC_DISTRICTS), dist = dmr_tpcc_district_slot(w, d);
	dmr_trace_op_t *op;
	int by_name, ci;
	uint64_t c = tpcc_pick_customer(g, &by_name);

	g->st.order_status_by_name += (uint64_t)by_name;
	if (!TPCC_OP(g, 'R', DMR_TPCC_CUSTOMER, 0,
		     dmr_tpcc_customer_slot(dist, c, g->cfg->customers), &ci))
		return -1;
	if (!(op = TPCC_OP(g, 'R', DMR_TPCC_ORDER, 1, (int64_t)dist * cap - 1, NULL)))
		return -1;
	dmr_gen_dep(op, ci, DMR_TPCC_C_LAST_O_ID_PLUS1, 1, cap + 1);
	if (!(op = TPCC_OP(g, 'R', DMR_TPCC_ORDER_LINE, 1, (int64_t)dist * cap * ol - ol, NULL)))
		return -1;
	op->count = (uint32_t)ol;
	dmr_gen_dep(op, ci, DMR_TPCC_C_LAST_OL_END, ol, cap * ol + 1);
	return 0;
}

/*
 * Delivery (clause 2.7), all 10 districts in one txn. Round 0: district U,
 * self-guard next_deliv < next_o_id, next_deliv += 1, next_deliv_ol += 15.
 * Round 1 (dep next_deliv / next_deliv_ol, guard on the district): new_order
 * D, order U (carrier), order_line U x 15 (delivery date; self-guard PRESENT
 * skips slots beyond ol_cnt). Round 2: customer U (dep on the order's c_id)
 * balance += order total, delivery_cnt += 1.
 */
static int tpcc_delivery(tpcc_gen_t *g, uint64_t w)
{
	const int64_t cap = g->cfg->order_cap, ol = DMR_TPCC_MAX_OL;
	int64_t carrier = (int64_t)dmr_gen_range(g->r, 1, 10), date = (int64_t)g->t->id + 1;
	int di[DMR_TPCC_DISTRICTS], oi[DMR_TPCC_DISTRICTS];
	dmr_trace_op_t *op;

	for (int d = 0; d < DMR_TPCC_DISTRICTS; d++) {
		if (!(op = TPCC_OP(g, 'U', DMR_TPCC_DISTRICT, 0, dmr_tpcc_district_slot(w, d),
				   &di[d])))
			return -1;
		dmr_gen_guard(op, DMR_TGUARD_LESS, di[d], DMR_TPCC_D_NEXT_DELIV_O_ID,
			      DMR_TPCC_D_NEXT_O_ID);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_D_NEXT_DELIV_O_ID, 1);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_D_NEXT_DELIV_OL, ol);
	}
	for (int d = 0; d < DMR_TPCC_DISTRICTS; d++) {
		int64_t dist = (int64_t)dmr_tpcc_district_slot(w, d);

		if (!(op = TPCC_OP(g, 'D', DMR_TPCC_NEW_ORDER, 1, dist * cap, NULL)))
			return -1;
		dmr_gen_dep(op, di[d], DMR_TPCC_D_NEXT_DELIV_O_ID, 0, cap);
		dmr_gen_guard(op, DMR_TGUARD_LESS, di[d], DMR_TPCC_D_NEXT_DELIV_O_ID,
			      DMR_TPCC_D_NEXT_O_ID);
		if (!(op = TPCC_OP(g, 'U', DMR_TPCC_ORDER, 1, dist * cap, &oi[d])))
			return -1;
		dmr_gen_dep(op, di[d], DMR_TPCC_D_NEXT_DELIV_O_ID, 0, cap);
		dmr_gen_guard(op, DMR_TGUARD_LESS, di[d], DMR_TPCC_D_NEXT_DELIV_O_ID,
			      DMR_TPCC_D_NEXT_O_ID);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_O_CARRIER_ID, carrier);
		for (int k = 0; k < ol; k++) {
			int self;

			if (!(op = TPCC_OP(g, 'U', DMR_TPCC_ORDER_LINE, 1, dist * cap * ol + k,
					   &self)))
				return -1;
			dmr_gen_dep(op, di[d], DMR_TPCC_D_NEXT_DELIV_OL, 0, (cap - 1) * ol + 1);
			dmr_gen_guard(op, DMR_TGUARD_PRESENT, self, 0, 0);
			dmr_trace_op_act(op, DMR_TACT_SET, DMR_TPCC_OL_DELIVERY_D, date);
		}
	}
	for (int d = 0; d < DMR_TPCC_DISTRICTS; d++) {
		uint64_t dist = dmr_tpcc_district_slot(w, d);

		if (!(op = TPCC_OP(g, 'U', DMR_TPCC_CUSTOMER, 2,
				   dmr_tpcc_customer_slot(dist, 0, g->cfg->customers), NULL)))
			return -1;
		dmr_gen_dep(op, oi[d], DMR_TPCC_O_C_ID, 0, (int64_t)g->cfg->customers);
		dmr_gen_guard(op, DMR_TGUARD_PRESENT, oi[d], 0, 0);
		dmr_trace_op_act_ref(op, DMR_TACT_ADD, DMR_TPCC_C_BALANCE, oi[d],
				     DMR_TPCC_O_TOTAL_AMOUNT);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TPCC_C_DELIVERY_CNT, 1);
	}
	return 0;
}

/*
 * StockLevel (clause 2.8). Round 0: district R. Round 1: the line slots of
 * the last 20 orders, contiguous: one range R of count 300 ending at the
 * district's next line block (skipped while the district has < 20 orders).
 * The stock reads (a third level, keyed by each line's item) are left out.
 */
static int tpcc_stock_level(tpcc_gen_t *g, uint64_t w)
{
	const int64_t cap = g->cfg->order_cap, ol = DMR_TPCC_MAX_OL;
	int64_t norders = cap < DMR_TPCC_STOCK_LEVEL_ORDERS ? cap : DMR_TPCC_STOCK_LEVEL_ORDERS;
	int64_t count = norders * ol;
	uint64_t d = dmr_gen_below(g->r, DMR_TPCC_DISTRICTS), dist = dmr_tpcc_district_slot(w, d);
	dmr_trace_op_t *op;
	int di;

	(void)dmr_gen_range(g->r, 10, 20); /* threshold (clause 2.8.1.2), unused */
	if (!TPCC_OP(g, 'R', DMR_TPCC_DISTRICT, 0, dist, &di))
		return -1;
	if (!(op = TPCC_OP(g, 'R', DMR_TPCC_ORDER_LINE, 1, (int64_t)dist * cap * ol - count, NULL)))
		return -1;
	op->count = (uint32_t)count;
	dmr_gen_dep(op, di, DMR_TPCC_D_NEXT_OL, count, cap * ol + 1);
	return 0;
}

static int tpcc_draw_type(tpcc_gen_t *g)
{
	const unsigned *pct = dmr_tpcc_mix_pct(g->cfg);
	uint64_t u = dmr_gen_below(g->r, 100), acc = 0;

	for (int i = 0; i < DMR_TPCC_NTYPES; i++) {
		acc += pct[i];
		if (u < acc)
			return i;
	}
	return DMR_TPCC_T_NEW_ORDER; /* not reached: rows sum to 100 */
}

dmr_status_t dmr_tpcc_generate(const dmr_tpcc_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       dmr_tpcc_stats_t *stats_p, dmr_err_t *err)
{
	static int (*const gen[DMR_TPCC_NTYPES])(tpcc_gen_t *, uint64_t) = {
	    tpcc_new_order, tpcc_payment, tpcc_order_status, tpcc_delivery, tpcc_stock_level,
	};
	tpcc_gen_t *g;
	dmr_status_t st;

	if ((st = tpcc_check(cfg, err)) != DMR_OK)
		return st;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "tpcc: out of memory");
	g->cfg = cfg;
	g->r = gsl_rng_alloc(gsl_rng_mt19937);
	g->t = malloc(sizeof(*g->t));
	if (g->r == NULL || g->t == NULL) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "tpcc: out of memory");
		goto out;
	}
	if ((st = dmr_tpcc_names_init(&g->names, cfg->customers, err)) != DMR_OK)
		goto out;
	gsl_rng_set(g->r, (unsigned long)cfg->seed);
	tpcc_draw_consts(g->r, &g->c);
	g->hot = dmr_gen_regime_hot(&cfg->regime, cfg->warehouses);

	for (uint64_t id = 0; id < cfg->txns; id++) {
		int type = tpcc_draw_type(g);
		uint64_t w = dmr_gen_regime_draw(g->r, &cfg->regime, cfg->warehouses);

		dmr_gen_txn_begin(g->t, id, type);
		if (gen[type](g, w) != 0) {
			st = dmr_err_set(err, DMR_ERR_RANGE,
					 "tpcc: txn %" PRIu64 " (%s): more than %d ops", id,
					 dmr_tpcc_type_names[type], DMR_TRACE_MAX_OPS);
			goto out;
		}
		g->st.txns++;
		g->st.by_type[type]++;
		g->st.hot_home += (uint64_t)(w < g->hot);
		if ((st = emit(arg, g->t, err)) != DMR_OK)
			goto out;
	}
	if (stats_p)
		*stats_p = g->st;
out:
	free(g->t);
	gsl_rng_free(g->r);
	free(g);
	return st;
}

/* ---- command line ------------------------------------------------------- */

enum {
	OPT_WAREHOUSES = 256,
	OPT_MIX,
	OPT_ORDER_CAP,
	OPT_PAYMENT_CAP,
	OPT_QUIET,
	OPT_CUSTOMERS,
	OPT_ITEMS,
	OPT_PRESET
};

/* Options given explicitly (a --preset sets only the others). */
enum { SET_MIX = 1, SET_ORDER_CAP = 2, SET_PAYMENT_CAP = 4, SET_CUSTOMERS = 8, SET_ITEMS = 16 };

static void tpcc_usage(FILE *f)
{
	fputs("usage: dmreplay gen tpcc -o FILE [options]\n"
	      "TPC-C v5.11 transactions (NewOrder, Payment, OrderStatus, Delivery,\n"
	      "StockLevel) as a dmreplay trace; see traces/GENERATORS.md.\n"
	      "  --warehouses W    warehouses (default 40)\n"
	      "  --mix M           spec = 45/43/4/4/4 NO/P/OS/D/SL (default),\n"
	      "                    dm = 50/46/4/0/0 as in the published DM systems,\n"
	      "                    or five percentages NO,P,OS,D,SL summing to 100\n"
	      "  --order-cap N     order ids per district (default 3000)\n"
	      "  --payment-cap N   history rows per customer (default 100)\n"
	      "  --customers N     customers per district, 1..3000 (default 3000)\n"
	      "  --items N         items (and stock rows per warehouse), 15..100000\n"
	      "                    (default 100000)\n"
	      "  --preset P        crest = adslabcuhk/crest's TPC-C: --customers 300\n"
	      "                    --items 10000 --order-cap 20000 --payment-cap 1000\n"
	      "                    --mix dm (options given explicitly win)\n"
	      "  --quiet           no footprint / WARN lines\n",
	      f);
	dmr_gen_common_help(f);
	fputs("The regime draws each transaction's home warehouse: hot:K/P sends\n"
	      "fraction P to warehouses 0..K-1 (uniform among them), the rest\n"
	      "uniformly to the others. Default --txns 100000.\n",
	      f);
}

typedef struct tpcc_cli {
	dmr_tpcc_cfg_t cfg;
	dmr_tpcc_stats_t stats;
	const char *preset; /* --preset (argv storage) */
	unsigned set;	    /* SET_* of the options given */
} tpcc_cli_t;

static dmr_status_t tpcc_run(void *ctx, dmr_gen_emit_func_t emit, void *emit_arg, dmr_err_t *err)
{
	tpcc_cli_t *t = ctx;

	return dmr_tpcc_generate(&t->cfg, emit, emit_arg, &t->stats, err);
}

static int tpcc_opt(void *ctx, int c, const char *arg)
{
	tpcc_cli_t *t = ctx;
	dmr_tpcc_cfg_t *cfg = &t->cfg;
	dmr_err_t err;
	uint64_t v;

	switch (c) {
	case OPT_WAREHOUSES:
		if (dmr_gen_parse_count("tpcc", "warehouses", arg, 1, 100000, &v) != 0)
			return -1;
		cfg->warehouses = (uint32_t)v;
		return 0;
	case OPT_MIX:
		if (dmr_tpcc_mix_parse(arg, cfg, &err) != DMR_OK) {
			fprintf(stderr, "tpcc: %s\n", err.msg);
			return -1;
		}
		t->set |= SET_MIX;
		return 0;
	case OPT_ORDER_CAP:
		if (dmr_gen_parse_count("tpcc", "order-cap", arg, 1, 10000000, &v) != 0)
			return -1;
		cfg->order_cap = (uint32_t)v;
		t->set |= SET_ORDER_CAP;
		return 0;
	case OPT_PAYMENT_CAP:
		if (dmr_gen_parse_count("tpcc", "payment-cap", arg, 1, 1000000, &v) != 0)
			return -1;
		cfg->payment_cap = (uint32_t)v;
		t->set |= SET_PAYMENT_CAP;
		return 0;
	case OPT_CUSTOMERS:
		if (dmr_gen_parse_count("tpcc", "customers", arg, 1, DMR_TPCC_CUSTOMERS, &v) != 0)
			return -1;
		cfg->customers = (uint32_t)v;
		t->set |= SET_CUSTOMERS;
		return 0;
	case OPT_ITEMS:
		if (dmr_gen_parse_count("tpcc", "items", arg, DMR_TPCC_MIN_ITEMS, DMR_TPCC_ITEMS,
					&v) != 0)
			return -1;
		cfg->items = (uint32_t)v;
		t->set |= SET_ITEMS;
		return 0;
	case OPT_PRESET: {
		dmr_tpcc_cfg_t probe;

		dmr_tpcc_cfg_default(&probe);
		if (dmr_tpcc_preset(arg, &probe, &err) != DMR_OK) {
			fprintf(stderr, "tpcc: %s\n", err.msg);
			return -1;
		}
		t->preset = arg;
		return 0;
	}
	case OPT_QUIET:
		cfg->quiet = 1;
		return 0;
	}
	return -1;
}

static int tpcc_prepare(void *ctx, const dmr_gen_common_t *cm, dmr_trace_hdr_t *hdr)
{
	tpcc_cli_t *t = ctx;
	dmr_tpcc_cfg_t *cfg = &t->cfg;
	dmr_err_t err = {{0}};

	if (t->preset) {
		/* the preset's values for the options not given explicitly */
		dmr_tpcc_cfg_t p = *cfg;

		if (dmr_tpcc_preset(t->preset, &p, &err) != DMR_OK) {
			fprintf(stderr, "tpcc: %s\n", err.msg);
			return 2;
		}
		if (!(t->set & SET_MIX)) {
			cfg->mix = p.mix;
			memcpy(cfg->mix_pct, p.mix_pct, sizeof(p.mix_pct));
		}
		if (!(t->set & SET_ORDER_CAP))
			cfg->order_cap = p.order_cap;
		if (!(t->set & SET_PAYMENT_CAP))
			cfg->payment_cap = p.payment_cap;
		if (!(t->set & SET_CUSTOMERS))
			cfg->customers = p.customers;
		if (!(t->set & SET_ITEMS))
			cfg->items = p.items;
		cfg->preset = p.preset;
	}
	if (cm->txns_set)
		cfg->txns = cm->txns;
	cfg->seed = cm->seed;
	cfg->regime = cm->regime;
	if (dmr_tpcc_header(cfg, hdr, &err) != DMR_OK) {
		fprintf(stderr, "tpcc: %s\n", err.msg);
		return 2;
	}
	return 0;
}

static void tpcc_done(void *ctx, const dmr_gen_common_t *cm)
{
	const tpcc_cli_t *t = ctx;

	if (!t->cfg.quiet)
		fprintf(stderr,
			"tpcc: wrote %" PRIu64 " txns to %s (NO %" PRIu64 " P %" PRIu64
			" OS %" PRIu64 " D %" PRIu64 " SL %" PRIu64 ")\n",
			t->stats.txns, dmr_gen_out_name(cm->out), t->stats.by_type[0],
			t->stats.by_type[1], t->stats.by_type[2], t->stats.by_type[3],
			t->stats.by_type[4]);
}

int dmr_gen_tpcc_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    DMR_GEN_COMMON_LONGOPTS,
	    {"warehouses", required_argument, NULL, OPT_WAREHOUSES},
	    {"mix", required_argument, NULL, OPT_MIX},
	    {"order-cap", required_argument, NULL, OPT_ORDER_CAP},
	    {"payment-cap", required_argument, NULL, OPT_PAYMENT_CAP},
	    {"quiet", no_argument, NULL, OPT_QUIET},
	    {"customers", required_argument, NULL, OPT_CUSTOMERS},
	    {"items", required_argument, NULL, OPT_ITEMS},
	    {"preset", required_argument, NULL, OPT_PRESET},
	    {NULL, 0, NULL, 0},
	};
	static const dmr_gen_cli_t cli = {.prog = "tpcc",
					  .opts = opts,
					  .usage = tpcc_usage,
					  .opt = tpcc_opt,
					  .prepare = tpcc_prepare,
					  .run = tpcc_run,
					  .done = tpcc_done};
	tpcc_cli_t t;

	memset(&t, 0, sizeof(t));
	dmr_tpcc_cfg_default(&t.cfg);
	return dmr_gen_cli_main(&cli, &t, argc, argv);
}
