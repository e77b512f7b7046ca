/*
 * tests/unit/test_gen.c - trace generators (traces/tpcc.c, smallbank.c, ycsb.c):
 * transaction mixes, regimes, NURand, TPC-C remote / by-name fractions,
 * determinism, YCSB property files and key skew, command lines.
 *
 * Statistical checks use 100,000 transactions and tolerances several
 * standard deviations wide (e.g. a 45% share has sd 0.16% at n = 1e5, the
 * tolerance is 1%); every run is seeded, so they are deterministic anyway.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traces/smallbank.h"
#include "traces/tatp.h"
#include "traces/tpcc.h"
#include "traces/ycsb.h"
#include "traces/zipf.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

#define N_STAT 100000

/* ---- helpers ------------------------------------------------------------ */

static dmr_regime_t regime(const char *s)
{
	dmr_regime_t r;
	dmr_err_t err;

	ck_assert_msg(dmr_regime_parse(s, &r, &err) == DMR_OK, "regime %s: %s", s, err.msg);
	return r;
}

static int near(double got, double want, double tol)
{
	return fabs(got - want) <= tol;
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* Hash of every field of a transaction (no struct padding). */
static uint64_t txn_hash(uint64_t h, const dmr_trace_txn_t *t)
{
	h = fnv(h, t->id);
	h = fnv(h, t->type);
	h = fnv(h, (uint64_t)t->xv);
	h = fnv(h, t->nops);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *o = &t->ops[i];

		h = fnv(h, o->kind | (uint64_t)o->table << 8 | (uint64_t)o->round << 16 |
			       (uint64_t)o->count << 32);
		h = fnv(h, (uint64_t)o->key);
		h = fnv(h, (uint64_t)(int64_t)o->dep.op << 16 | o->dep.field);
		h = fnv(h, (uint64_t)o->lo);
		h = fnv(h, (uint64_t)o->hi);
		h = fnv(h, o->guard.kind | (uint64_t)(uint16_t)o->guard.op << 8 |
			       (uint64_t)o->guard.f << 24 | (uint64_t)o->guard.f2 << 40);
		h = fnv(h, o->nacts);
		for (int a = 0; a < o->nacts; a++) {
			h = fnv(h, o->acts[a].kind | (uint64_t)o->acts[a].field << 8);
			h = fnv(h, (uint64_t)o->acts[a].val.lit);
			h = fnv(h,
				(uint64_t)(int64_t)o->acts[a].val.op << 16 | o->acts[a].val.field);
		}
	}
	return h;
}

/* Collector for the statistics of a run. */
typedef struct coll {
	uint64_t n, by_type[16], hash;
	uint64_t hot_k, hot; /* home (or first key) < hot_k */
	uint64_t *hist;	     /* per home warehouse / per key (optional) */
	uint64_t hist_n;
	/* tpcc */
	uint64_t lines, remote_lines, payments, remote_payments;
	uint64_t bad_shape; /* first failing txn id + 1 */
	/* ycsb latest */
	uint64_t last_insert, reads, reads_latest;
	int64_t xv;
} coll_t;

static void coll_init(coll_t *c, uint64_t hist_n)
{
	memset(c, 0, sizeof(*c));
	c->hash = UINT64_C(0xCBF29CE484222325);
	if (hist_n) {
		c->hist = calloc(hist_n, sizeof(uint64_t));
		ck_assert_ptr_nonnull(c->hist);
		c->hist_n = hist_n;
	}
}

static void coll_free(coll_t *c)
{
	free(c->hist);
}

static uint64_t hist_max(const coll_t *c, uint64_t *arg_p)
{
	uint64_t m = 0;

	for (uint64_t i = 0; i < c->hist_n; i++)
		if (c->hist[i] > m) {
			m = c->hist[i];
			if (arg_p)
				*arg_p = i;
		}
	return m;
}

/* ---- TPC-C -------------------------------------------------------------- */

static uint64_t tpcc_home(const dmr_trace_txn_t *t)
{
	switch (t->type) {
	case DMR_TPCC_T_NEW_ORDER:
	case DMR_TPCC_T_PAYMENT:
		return (uint64_t)t->ops[0].key; /* warehouse */
	case DMR_TPCC_T_ORDER_STATUS:
		return (uint64_t)t->ops[0].key / (DMR_TPCC_DISTRICTS * DMR_TPCC_CUSTOMERS);
	default:
		return (uint64_t)t->ops[0].key / DMR_TPCC_DISTRICTS; /* district */
	}
}

/* Shape checks of one TPC-C txn: 0 ok. */
static int tpcc_shape_bad(const dmr_trace_txn_t *t)
{
	/* no record twice among the ops with a literal key */
	for (uint32_t i = 0; i < t->nops; i++)
		for (uint32_t j = i + 1; j < t->nops; j++)
			if (t->ops[i].dep.op < 0 && t->ops[j].dep.op < 0 &&
			    t->ops[i].table == t->ops[j].table && t->ops[i].key == t->ops[j].key)
				return 1;
	switch (t->type) {
	case DMR_TPCC_T_NEW_ORDER: {
		uint32_t items = 0, stock = 0, lines = 0;

		for (uint32_t i = 0; i < t->nops; i++) {
			items += t->ops[i].table == DMR_TPCC_ITEM;
			stock += t->ops[i].table == DMR_TPCC_STOCK;
			lines += t->ops[i].table == DMR_TPCC_ORDER_LINE;
		}
		return !(items >= 5 && items <= 15 && stock == items && lines == items &&
			 t->nops == 5 + 3 * items);
	}
	case DMR_TPCC_T_PAYMENT:
		return t->nops != 4 || t->ops[3].table != DMR_TPCC_HISTORY || t->ops[3].dep.op != 2;
	case DMR_TPCC_T_ORDER_STATUS:
		return t->nops != 3 || t->ops[2].count != 15;
	case DMR_TPCC_T_DELIVERY:
		return t->nops != 10 * 19;
	case DMR_TPCC_T_STOCK_LEVEL:
		return t->nops != 2 || t->ops[1].count != 300;
	}
	return 1;
}

static dmr_status_t tpcc_collect(void *arg, const dmr_trace_txn_t *t, dmr_err_t *err)
{
	coll_t *c = arg;
	uint64_t w = tpcc_home(t);

	(void)err;
	c->n++;
	c->by_type[t->type]++;
	c->hash = txn_hash(c->hash, t);
	c->hot += w < c->hot_k;
	if (c->hist && w < c->hist_n)
		c->hist[w]++;
	if (!c->bad_shape && tpcc_shape_bad(t))
		c->bad_shape = t->id + 1;
	if (t->type == DMR_TPCC_T_NEW_ORDER) {
		for (uint32_t i = 0; i < t->nops; i++)
			if (t->ops[i].table == DMR_TPCC_STOCK) {
				c->lines++;
				c->remote_lines += (uint64_t)t->ops[i].key / DMR_TPCC_ITEMS != w;
			}
	} else if (t->type == DMR_TPCC_T_PAYMENT) {
		c->payments++;
		c->remote_payments +=
		    (uint64_t)t->ops[2].key / (DMR_TPCC_DISTRICTS * DMR_TPCC_CUSTOMERS) != w;
	}
	return DMR_OK;
}

static void tpcc_run(dmr_tpcc_cfg_t *cfg, coll_t *c, dmr_tpcc_stats_t *st)
{
	dmr_err_t err;

	cfg->quiet = 1;
	ck_assert_msg(dmr_tpcc_generate(cfg, tpcc_collect, c, st, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(c->n, cfg->txns);
	ck_assert_msg(c->bad_shape == 0, "txn %llu has a bad shape",
		      (unsigned long long)c->bad_shape - 1);
}

static void check_mix(int mix, const double want[5])
{
	dmr_tpcc_cfg_t cfg;
	dmr_tpcc_stats_t st;
	coll_t c;

	dmr_tpcc_cfg_default(&cfg);
	cfg.txns = N_STAT;
	cfg.mix = mix;
	coll_init(&c, 0);
	tpcc_run(&cfg, &c, &st);
	for (int i = 0; i < DMR_TPCC_NTYPES; i++) {
		double got = (double)c.by_type[i] / (double)c.n;

		ck_assert_msg(near(got, want[i], 0.01), "mix %d type %s: %.4f, want %.2f", mix,
			      dmr_tpcc_type_names[i], got, want[i]);
		ck_assert_uint_eq(st.by_type[i], c.by_type[i]);
	}
	coll_free(&c);
}

START_TEST(test_tpcc_mix_spec)
{
	static const double want[5] = {0.45, 0.43, 0.04, 0.04, 0.04};
	check_mix(DMR_TPCC_MIX_SPEC, want);
}
END_TEST

START_TEST(test_tpcc_mix_dm)
{
	static const double want[5] = {0.50, 0.46, 0.04, 0.0, 0.0};
	check_mix(DMR_TPCC_MIX_DM, want);
}
END_TEST

/* Home-warehouse fraction in the hot set, for each regime of the paper. */
START_TEST(test_tpcc_regimes)
{
	static const struct {
		const char *name;
		uint64_t k;
		double p;
	} cases[] = {
	    {"extreme", 1, 0.95},
	    {"alt-extreme", 2, 0.92},
	    {"hot:3/0.5", 3, 0.5},
	    {"uniform", 1, 1.0 / 40}, /* share of warehouse 0 */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dmr_tpcc_cfg_t cfg;
		dmr_tpcc_stats_t st;
		coll_t c;
		double frac;

		dmr_tpcc_cfg_default(&cfg);
		cfg.txns = N_STAT;
		cfg.regime = regime(cases[i].name);
		coll_init(&c, 40);
		c.hot_k = cases[i].k;
		tpcc_run(&cfg, &c, &st);
		frac = (double)c.hot / (double)c.n;
		ck_assert_msg(near(frac, cases[i].p, 0.01), "%s: hot fraction %.4f, want %.3f",
			      cases[i].name, frac, cases[i].p);
		if (!cfg.regime.uniform)
			ck_assert_uint_eq(st.hot_home, c.hot);
		/* inside and outside the hot set: uniform */
		for (uint64_t w = 0; w < 40; w++) {
			double want = w < cases[i].k ? cases[i].p / (double)cases[i].k
						     : (1 - cases[i].p) / (double)(40 - cases[i].k);

			if (cfg.regime.uniform)
				want = 1.0 / 40;
			ck_assert_msg(near((double)c.hist[w] / (double)c.n, want, 0.01),
				      "%s: warehouse %llu share %.4f, want %.4f", cases[i].name,
				      (unsigned long long)w, (double)c.hist[w] / (double)c.n, want);
		}
		coll_free(&c);
	}
}
END_TEST

START_TEST(test_tpcc_nurand)
{
	static const struct {
		uint64_t A, x, y;
	} cases[] = {{1023, 1, 3000}, {8191, 1, 100000}, {255, 0, 999}};
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

	gsl_rng_set(r, 7);
	for (size_t i = 0; i < 3; i++) {
		uint64_t n = cases[i].y - cases[i].x + 1, *h = calloc(n, sizeof(uint64_t));
		uint64_t lo = UINT64_MAX, hi = 0, mx = 0, draws = 20 * n;

		ck_assert_ptr_nonnull(h);
		for (uint64_t C = 0; C <= cases[i].A; C += cases[i].A / 3) {
			for (uint64_t k = 0; k < draws / 4; k++) {
				uint64_t v =
				    dmr_tpcc_nurand(r, cases[i].A, cases[i].x, cases[i].y, C);

				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
				h[v - cases[i].x]++;
			}
		}
		ck_assert_msg(lo >= cases[i].x && hi <= cases[i].y,
			      "NURand(%llu,%llu,%llu) out of range: [%llu, %llu]",
			      (unsigned long long)cases[i].A, (unsigned long long)cases[i].x,
			      (unsigned long long)cases[i].y, (unsigned long long)lo,
			      (unsigned long long)hi);
		ck_assert_uint_eq(lo, cases[i].x);
		ck_assert_uint_eq(hi, cases[i].y);
		for (uint64_t v = 0; v < n; v++)
			mx = h[v] > mx ? h[v] : mx;
		/* non-uniform: the OR with random(0, A) favours some values */
		ck_assert_msg((double)mx > 2.0 * (double)draws / (double)n,
			      "NURand(%llu) looks uniform", (unsigned long long)cases[i].A);
		free(h);
	}
	gsl_rng_free(r);
}
END_TEST

/* Names (clause 4.3.2.3) and the middle customer by name (2.5.2.2). */
START_TEST(test_tpcc_names)
{
	dmr_tpcc_names_t n;
	dmr_err_t err;
	char buf[16];

	ck_assert_str_eq(dmr_tpcc_last_name(371, buf), "PRICALLYOUGHT");
	ck_assert_str_eq(dmr_tpcc_last_name(0, buf), "BARBARBAR");
	ck_assert_str_eq(dmr_tpcc_last_name(999, buf), "EINGEINGEING");
	ck_assert_int_eq(dmr_tpcc_names_init(&n, DMR_TPCC_CUSTOMERS, &err), DMR_OK);
	for (unsigned c = 0; c < 1000; c++)
		ck_assert_uint_eq(n.name[c], c);
	for (unsigned num = 0; num < 1000; num++) {
		unsigned pos = 0, m = n.middle[num];

		ck_assert_uint_ge(n.count[num], 1);
		ck_assert_uint_eq(n.name[m], num);
		for (unsigned c = 0; c <= m; c++)
			pos += n.name[c] == num;
		ck_assert_uint_eq(pos, (n.count[num] + 1u) / 2u);
	}
}
END_TEST

START_TEST(test_tpcc_remote)
{
	dmr_tpcc_cfg_t cfg;
	dmr_tpcc_stats_t st;
	coll_t c;
	double f;

	dmr_tpcc_cfg_default(&cfg);
	cfg.txns = N_STAT;
	coll_init(&c, 0);
	tpcc_run(&cfg, &c, &st);
	f = (double)c.remote_lines / (double)c.lines;
	ck_assert_msg(near(f, 0.01, 0.001), "remote order lines %.5f, want 0.01", f);
	ck_assert_uint_eq(c.remote_lines, st.remote_order_lines);
	ck_assert_uint_eq(c.lines, st.order_lines);
	f = (double)c.lines / (double)c.by_type[DMR_TPCC_T_NEW_ORDER];
	ck_assert_msg(near(f, 10.0, 0.1), "lines per NewOrder %.3f, want 10", f);
	f = (double)c.remote_payments / (double)c.payments;
	ck_assert_msg(near(f, 0.15, 0.01), "remote payments %.4f, want 0.15", f);
	ck_assert_uint_eq(c.remote_payments, st.payment_remote);
	f = (double)st.payment_by_name / (double)c.payments;
	ck_assert_msg(near(f, 0.60, 0.01), "payments by name %.4f, want 0.60", f);
	f = (double)st.order_status_by_name / (double)c.by_type[DMR_TPCC_T_ORDER_STATUS];
	ck_assert_msg(near(f, 0.60, 0.03), "order status by name %.4f, want 0.60", f);
	coll_free(&c);

	/* one warehouse: nothing remote */
	dmr_tpcc_cfg_default(&cfg);
	cfg.txns = 20000;
	cfg.warehouses = 1;
	coll_init(&c, 0);
	tpcc_run(&cfg, &c, &st);
	ck_assert_uint_eq(c.remote_lines, 0);
	ck_assert_uint_eq(c.remote_payments, 0);
	coll_free(&c);
}
END_TEST

START_TEST(test_tpcc_header)
{
	dmr_tpcc_cfg_t cfg;
	dmr_trace_hdr_t h;
	dmr_err_t err;
	const char *fp;
	uint64_t total = 0;

	dmr_tpcc_cfg_default(&cfg);
	cfg.quiet = 1;
	cfg.regime = regime("extreme");
	ck_assert_int_eq(dmr_tpcc_header(&cfg, &h, &err), DMR_OK);
	ck_assert_str_eq(h.workload, "tpcc");
	ck_assert_str_eq(h.regime, "extreme");
	ck_assert_uint_eq(h.ntables, DMR_TPCC_NTABLES);
	ck_assert_uint_eq(h.ntypes, DMR_TPCC_NTYPES);
	for (int i = 0; i < DMR_TPCC_NTABLES; i++) {
		ck_assert_int_eq(dmr_trace_hdr_table(&h, dmr_tpcc_table_names[i]), i);
		ck_assert_uint_eq(h.tables[i].payload_bytes % 8, 0);
		total += h.tables[i].rows * (16 + h.tables[i].payload_bytes);
	}
	ck_assert_uint_eq(h.tables[DMR_TPCC_ORDER_LINE].rows, 40ull * 10 * 3000 * 15);
	ck_assert_uint_eq(h.tables[DMR_TPCC_HISTORY].rows, 40ull * 30000 * 100);
	ck_assert_uint_eq(h.tables[DMR_TPCC_ORDER].loaded, 0);
	ck_assert_uint_eq(h.tables[DMR_TPCC_STOCK].loaded, 40ull * 100000);
	fp = dmr_trace_hdr_param(&h, "footprint_bytes");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(strtoull(fp, NULL, 10), total);
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "warehouses"), "40");
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "mix"), "spec");
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "order_cap"), "3000");
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "payment_cap"), "100");
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "seed"), "1");

	cfg.warehouses = 0;
	ck_assert_int_eq(dmr_tpcc_header(&cfg, &h, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "warehouses"));
}
END_TEST

/* Same cfg, same txns; another seed, other txns. */
static uint64_t tpcc_hash(uint64_t seed)
{
	dmr_tpcc_cfg_t cfg;
	coll_t c;

	dmr_tpcc_cfg_default(&cfg);
	cfg.txns = 5000;
	cfg.seed = seed;
	cfg.regime = regime("alt-extreme");
	coll_init(&c, 0);
	tpcc_run(&cfg, &c, NULL);
	return c.hash;
}

static dmr_status_t plain_collect(void *arg, const dmr_trace_txn_t *t, dmr_err_t *err)
{
	coll_t *c = arg;

	(void)err;
	c->n++;
	c->by_type[t->type]++;
	c->hash = txn_hash(c->hash, t);
	c->xv += t->xv;
	if (t->nops > 0) {
		uint64_t k = (uint64_t)t->ops[0].key;

		c->hot += k < c->hot_k;
		if (c->hist && k < c->hist_n)
			c->hist[k]++;
	}
	return DMR_OK;
}

static uint64_t smallbank_hash(uint64_t seed)
{
	dmr_smallbank_cfg_t cfg;
	dmr_err_t err;
	coll_t c;

	dmr_smallbank_cfg_default(&cfg);
	cfg.txns = 5000;
	cfg.seed = seed;
	coll_init(&c, 0);
	ck_assert_int_eq(dmr_smallbank_generate(&cfg, plain_collect, &c, NULL, &err), DMR_OK);
	return c.hash;
}

static void ycsb_cfg(dmr_ycsb_cfg_t *cfg, char w, uint64_t txns, uint64_t seed)
{
	char path[600];
	dmr_err_t err;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(path, sizeof(path), "%s/workload%c", dmr_test_ycsb_dir(), w);
	ck_assert_msg(dmr_ycsb_props_load(path, &cfg->props, &err) == DMR_OK, "%s", err.msg);
	cfg->txns = txns;
	cfg->seed = seed;
	cfg->quiet = 1;
	dmr_gen_regime_uniform(&cfg->regime);
}

static uint64_t ycsb_hash(uint64_t seed)
{
	dmr_ycsb_cfg_t cfg;
	dmr_err_t err;
	coll_t c;

	ycsb_cfg(&cfg, 'a', 5000, seed);
	coll_init(&c, 0);
	ck_assert_int_eq(dmr_ycsb_generate(&cfg, plain_collect, &c, NULL, &err), DMR_OK);
	return c.hash;
}

START_TEST(test_determinism)
{
	ck_assert_uint_eq(tpcc_hash(42), tpcc_hash(42));
	ck_assert_uint_ne(tpcc_hash(42), tpcc_hash(43));
	ck_assert_uint_eq(smallbank_hash(42), smallbank_hash(42));
	ck_assert_uint_ne(smallbank_hash(42), smallbank_hash(43));
	ck_assert_uint_eq(ycsb_hash(42), ycsb_hash(42));
	ck_assert_uint_ne(ycsb_hash(42), ycsb_hash(43));
}
END_TEST

/* ---- SmallBank ---------------------------------------------------------- */

static dmr_status_t sb_collect(void *arg, const dmr_trace_txn_t *t, dmr_err_t *err)
{
	coll_t *c = arg;
	int64_t xv = 0;

	plain_collect(arg, t, err);
	/* xv = literal money in/out */
	switch (t->type) {
	case DMR_SB_T_DEPOSIT_CHECKING:
	case DMR_SB_T_TRANSACT_SAVINGS:
		xv = t->ops[0].acts[0].val.lit;
		break;
	case DMR_SB_T_WRITE_CHECK:
		xv = t->ops[1].acts[0].val.lit;
		break;
	case DMR_SB_T_AMALGAMATE:
	case DMR_SB_T_SEND_PAYMENT:
		if (t->ops[0].key == t->ops[t->nops - 1].key)
			c->bad_shape = t->id + 1; /* same account twice */
		break;
	}
	if (xv != t->xv && !c->bad_shape)
		c->bad_shape = t->id + 1;
	return DMR_OK;
}

START_TEST(test_smallbank_mix)
{
	dmr_smallbank_cfg_t cfg;
	uint64_t by_type[DMR_SB_NTYPES];
	dmr_err_t err;
	coll_t c;

	dmr_smallbank_cfg_default(&cfg);
	cfg.txns = N_STAT;
	cfg.regime = regime("hot:100/0.9");
	coll_init(&c, 0);
	c.hot_k = 100;
	ck_assert_int_eq(dmr_smallbank_generate(&cfg, sb_collect, &c, by_type, &err), DMR_OK);
	ck_assert_msg(c.bad_shape == 0, "txn %llu bad", (unsigned long long)c.bad_shape - 1);
	for (int i = 0; i < DMR_SB_NTYPES; i++) {
		double got = (double)c.by_type[i] / (double)c.n;

		ck_assert_uint_eq(by_type[i], c.by_type[i]);
		ck_assert_msg(near(got, dmr_smallbank_mix_pct[i] / 100.0, 0.01), "%s: %.4f",
			      dmr_smallbank_type_names[i], got);
	}
	ck_assert_msg(near((double)c.hot / (double)c.n, 0.9, 0.01), "hot %.4f",
		      (double)c.hot / (double)c.n);
	coll_free(&c);

	/* Zipf(0.99) over 100000 accounts: account 0 takes 1/zeta(1e5) ~ 8% */
	dmr_smallbank_cfg_default(&cfg);
	cfg.txns = N_STAT;
	cfg.zipf_theta = 0.99;
	coll_init(&c, cfg.accounts);
	ck_assert_int_eq(dmr_smallbank_generate(&cfg, sb_collect, &c, NULL, &err), DMR_OK);
	{
		uint64_t arg = 99, mx = hist_max(&c, &arg);
		double want = 1.0 / dmr_zipf_zeta(0, cfg.accounts, 0.99, 0.0);

		ck_assert_uint_eq(arg, 0);
		ck_assert_msg(near((double)mx / (double)c.n, want, 0.01), "zipf top %.4f want %.4f",
			      (double)mx / (double)c.n, want);
	}
	coll_free(&c);

	cfg.zipf_theta = 1.0;
	ck_assert_int_eq(dmr_smallbank_generate(&cfg, sb_collect, &c, NULL, &err), DMR_ERR_INVALID);
}
END_TEST

/* ---- YCSB --------------------------------------------------------------- */

static dmr_status_t ycsb_collect(void *arg, const dmr_trace_txn_t *t, dmr_err_t *err)
{
	coll_t *c = arg;
	uint64_t k = (uint64_t)t->ops[0].key;

	plain_collect(arg, t, err);
	if (t->type == DMR_YCSB_T_INSERT) {
		if (k != c->last_insert + 1 && !c->bad_shape)
			c->bad_shape = t->id + 1;
		c->last_insert = k;
	} else if (t->type == DMR_YCSB_T_READ) {
		c->reads++;
		c->reads_latest += k == c->last_insert;
	}
	if (t->type != DMR_YCSB_T_INSERT && k > c->last_insert && !c->bad_shape)
		c->bad_shape = t->id + 1; /* a key not inserted yet */
	if ((t->type == DMR_YCSB_T_RMW) != (t->xv == 1) && !c->bad_shape)
		c->bad_shape = t->id + 1;
	return DMR_OK;
}

START_TEST(test_ycsb_workloads)
{
	for (char w = 'a'; w <= 'f'; w++) {
		dmr_ycsb_cfg_t cfg;
		dmr_trace_hdr_t h;
		dmr_err_t err;
		coll_t c;
		uint64_t mx;
		double psum = 0, top;

		ycsb_cfg(&cfg, w, N_STAT, 1);
		ck_assert_uint_eq(cfg.props.recordcount, 1000);
		ck_assert_uint_eq(cfg.props.operationcount, 1000);
		ck_assert_int_eq(dmr_ycsb_header(&cfg, &h, &err), DMR_OK);
		coll_init(&c, h.tables[0].rows);
		c.last_insert = cfg.props.recordcount - 1;
		ck_assert_int_eq(dmr_ycsb_generate(&cfg, ycsb_collect, &c, NULL, &err), DMR_OK);
		ck_assert_msg(c.bad_shape == 0, "workload%c: txn %llu bad", w,
			      (unsigned long long)c.bad_shape - 1);
		/* rows = recordcount + inserts, exactly */
		ck_assert_uint_eq(h.tables[0].rows, 1000 + c.by_type[DMR_YCSB_T_INSERT]);
		ck_assert_uint_eq(h.tables[0].payload_bytes, 8 + 1000);
		for (int i = 0; i < DMR_YCSB_NTYPES; i++)
			psum += cfg.props.prop[i];
		for (int i = 0; i < DMR_YCSB_NTYPES; i++) {
			double got = (double)c.by_type[i] / (double)c.n;

			ck_assert_msg(near(got, cfg.props.prop[i] / psum, 0.01),
				      "workload%c %s: %.4f want %.3f", w, dmr_ycsb_type_names[i],
				      got, cfg.props.prop[i] / psum);
		}
		ck_assert_int_eq(c.xv, (int64_t)c.by_type[DMR_YCSB_T_RMW]);
		mx = hist_max(&c, NULL);
		top = (double)mx / (double)c.n;
		if (cfg.props.requestdistribution == DMR_YCSB_ZIPFIAN) {
			/* ScrambledZipfian: item 0 of 1e10 has 1/zetan = 3.8%. With inserts
			 * the keyspace includes keys not inserted yet (redrawn), so the
			 * hottest key may only become reachable later in the run. */
			double lo = cfg.props.prop[DMR_YCSB_T_INSERT] > 0 ? 0.01 : 0.03;

			ck_assert_msg(top > lo && top < 0.06, "workload%c top key %.4f", w, top);
		} else {
			/* latest: the newest key gets 1/zeta(n) ~ 10-13% of the reads */
			double f = (double)c.reads_latest / (double)c.reads;

			ck_assert_int_eq(cfg.props.requestdistribution, DMR_YCSB_LATEST);
			ck_assert_msg(f > 0.08 && f < 0.16, "workload%c latest-key reads %.4f", w,
				      f);
		}
		coll_free(&c);
	}
}
END_TEST

START_TEST(test_ycsb_regime_override)
{
	dmr_ycsb_cfg_t cfg;
	dmr_err_t err;
	coll_t c;
	double top;

	ycsb_cfg(&cfg, 'a', N_STAT, 3);
	cfg.regime_override = 1;
	cfg.regime = regime("hot:10/0.9");
	coll_init(&c, 1000);
	c.hot_k = 10;
	c.last_insert = 999;
	ck_assert_int_eq(dmr_ycsb_generate(&cfg, ycsb_collect, &c, NULL, &err), DMR_OK);
	ck_assert_msg(near((double)c.hot / (double)c.n, 0.9, 0.01), "hot %.4f",
		      (double)c.hot / (double)c.n);
	coll_free(&c);

	cfg.regime = regime("uniform");
	coll_init(&c, 1000);
	c.last_insert = 999;
	ck_assert_int_eq(dmr_ycsb_generate(&cfg, ycsb_collect, &c, NULL, &err), DMR_OK);
	top = (double)hist_max(&c, NULL) / (double)c.n;
	ck_assert_msg(top < 0.002, "uniform top key %.4f", top);
	coll_free(&c);
}
END_TEST

/* Write text to a temp file; returns its path (static buffer). */
static const char *tmpfile_with(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/dmr_test_gen_XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

START_TEST(test_ycsb_props)
{
	dmr_ycsb_props_t p;
	dmr_err_t err;
	const char *f;
	char want[128];

	f = tmpfile_with("# comment\n\n  recordcount = 500 \nfoo.bar=anything\n"
			 "operationcount=10\nreadproportion=0.2\nupdateproportion=0\n"
			 "scanproportion=0.8\nrequestdistribution=uniform\nfieldcount=3\n"
			 "fieldlength=20\n! also a comment\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.recordcount, 500);
	ck_assert_uint_eq(p.operationcount, 10);
	ck_assert(p.prop[DMR_YCSB_T_SCAN] == 0.8);
	ck_assert_uint_eq(p.fieldcount, 3);
	ck_assert_uint_eq(p.maxscanlength, 1000);
	unlink(f);

	f = tmpfile_with("recordcount=500\nreadproportion 0.5\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	snprintf(want, sizeof(want), "%s:2:", f);
	ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
	unlink(f);

	f = tmpfile_with("recordcount=500\n\n# x\nreadproportion=1.5\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	snprintf(want, sizeof(want), "%s:4: readproportion", f);
	ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
	unlink(f);

	f = tmpfile_with("recordcount=500\nrequestdistribution=hotspot\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, ":2: requestdistribution"));
	unlink(f);

	f = tmpfile_with("recordcount=12x\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	unlink(f);

	f = tmpfile_with("=5\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	unlink(f);

	f = tmpfile_with("readproportion=1\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "recordcount"));
	unlink(f);

	ck_assert_int_eq(dmr_ycsb_props_load("/nonexistent/workloadz", &p, &err), DMR_ERR_IO);
}
END_TEST

/* issue #15 D15, D16: a key given twice (it was: the last kept silently),
 * proportions that do not sum to 1 (YCSB normalises them; it was silent),
 * a byte-order mark (it was: "recordcount missing") */
START_TEST(test_ycsb_props_refused)
{
	dmr_ycsb_props_t p;
	dmr_err_t err;
	const char *f;
	char want[160];

	f = tmpfile_with("recordcount=500\nreadproportion=0.5\nupdateproportion=0.5\n"
			 "# later\nrecordcount=1000\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	snprintf(want, sizeof(want), "%s:5: recordcount: duplicate key (first given at line 1)", f);
	ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
	unlink(f);

	f = tmpfile_with("recordcount=500\nreadproportion=0.5\nupdateproportion=0.6\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "sum to 1.1, not 1") != NULL, "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "updateproportion=0.6 (line 3)") != NULL, "%s", err.msg);
	unlink(f);

	/* only readproportion=1: YCSB's default updateproportion 0.05 is still there */
	f = tmpfile_with("recordcount=500\nreadproportion=1\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "updateproportion=0.05 (default)") != NULL, "%s", err.msg);
	unlink(f);

	f = tmpfile_with("\xEF\xBB\xBFrecordcount=500\nreadproportion=1\nupdateproportion=0\n");
	ck_assert_int_eq(dmr_ycsb_props_load(f, &p, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":1: the file starts with a UTF-8 byte-order mark") != NULL,
		      "%s", err.msg);
	unlink(f);

	/* the shipped workloads all sum to 1 */
	static const char *const wl[] = {"workloada", "workloadb", "workloadc",
					 "workloadd", "workloade", "workloadf"};
	for (size_t i = 0; i < sizeof(wl) / sizeof(wl[0]); i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dmr_test_ycsb_dir(), wl[i]);
		ck_assert_msg(dmr_ycsb_props_load(path, &p, &err) == DMR_OK, "%s: %s", wl[i],
			      err.msg);
	}
}
END_TEST

/* ---- command lines ------------------------------------------------------ */

static int run_main(int (*fn)(int, char **), const char *a0, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	const char *s;

	argv[argc++] = (char *)a0;
	va_start(ap, a0);
	while ((s = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	return fn(argc, argv);
}

static uint64_t count_txns(const char *path)
{
	dmr_trace_reader_t *r;
	dmr_trace_txn_t *t = malloc(sizeof(*t));
	dmr_err_t err;
	dmr_status_t st;
	uint64_t n = 0;

	ck_assert_ptr_nonnull(t);
	ck_assert_msg(dmr_trace_open(path, &r, &err) == DMR_OK, "%s", err.msg);
	while ((st = dmr_trace_next(r, t, &err)) == DMR_OK)
		n++;
	ck_assert_msg(st == DMR_EOF, "%s", err.msg);
	dmr_trace_close(r);
	free(t);
	return n;
}

START_TEST(test_cli)
{
	char out[64], wl[600];
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);

	/* --help text to /dev/null; restored at the end (CK_FORK=no runs) */
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(null, 0);
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	close(null);
	snprintf(out, sizeof(out), "/tmp/dmr_test_gen_cli_%d.csv", (int)getpid());
	snprintf(wl, sizeof(wl), "%s/workloadf", dmr_test_ycsb_dir());

	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--help", NULL), 0);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--warehouses", "0", "-o", out, NULL),
			 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--warehouses", "x", "-o", out, NULL),
			 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--mix", "foo", "-o", out, NULL), 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--regime", "hot", "-o", out, NULL),
			 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--txns", "-5", "-o", out, NULL), 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--bogus", "-o", out, NULL), 2);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--txns", "10", NULL), 2);
	ck_assert_int_eq(access(out, F_OK), -1);

	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--quiet", "--txns", "3000",
				  "--warehouses", "4", "--regime", "extreme", "--seed", "9", "-o",
				  out, NULL),
			 0);
	ck_assert_uint_eq(count_txns(out), 3000);
	ck_assert_int_eq(run_main(dmr_gen_tpcc_main, "tpcc", "--quiet", "--txns", "2000", "--mix",
				  "dm", "--order-cap", "10", "--payment-cap", "2", "-o", out, NULL),
			 0);
	ck_assert_uint_eq(count_txns(out), 2000);

	ck_assert_int_eq(run_main(dmr_gen_smallbank_main, "smallbank", "--help", NULL), 0);
	ck_assert_int_eq(
	    run_main(dmr_gen_smallbank_main, "smallbank", "--zipf", "1.5", "-o", out, NULL), 2);
	ck_assert_int_eq(run_main(dmr_gen_smallbank_main, "smallbank", "--zipf", "0.5", "--regime",
				  "extreme", "-o", out, NULL),
			 2);
	ck_assert_int_eq(
	    run_main(dmr_gen_smallbank_main, "smallbank", "--accounts", "1", "-o", out, NULL), 2);
	ck_assert_int_eq(run_main(dmr_gen_smallbank_main, "smallbank", "--quiet", "--txns", "1000",
				  "--zipf", "0.9", "-o", out, NULL),
			 0);
	ck_assert_uint_eq(count_txns(out), 1000);
	/* counts take K/M/G/T suffixes as every count option does (README);
	 * the seed takes plain digits */
	ck_assert_int_eq(run_main(dmr_gen_smallbank_main, "smallbank", "--quiet", "--txns", "10",
				  "--accounts", "2K", "-o", out, NULL),
			 0);
	{
		char *text = dmr_test_read_text(out);
		ck_assert_msg(strstr(text, "# table savings 2048 "), "%.200s", text);
		free(text);
	}
	ck_assert_int_eq(run_main(dmr_gen_smallbank_main, "smallbank", "--quiet", "--txns", "10",
				  "--seed", "1K", "-o", out, NULL),
			 2);

	ck_assert_int_eq(run_main(dmr_gen_ycsb_main, "ycsb", "--help", NULL), 0);
	ck_assert_int_eq(run_main(dmr_gen_ycsb_main, "ycsb", "-o", out, NULL), 2);
	ck_assert_int_eq(
	    run_main(dmr_gen_ycsb_main, "ycsb", "--workload", "/nonexistent", "-o", out, NULL), 2);
	ck_assert_int_eq(
	    run_main(dmr_gen_ycsb_main, "ycsb", "--quiet", "--workload", wl, "-o", out, NULL), 0);
	ck_assert_uint_eq(count_txns(out), 1000); /* operationcount */
	unlink(out);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
}
END_TEST

/* -o naming the --workload file (by another name too: ./, a hard link, a
 * symbolic link) is refused, exit 2, the file left as it was (the trace
 * was renamed over it, exit 0: a trial), as kv gen refuses it */
START_TEST(test_cli_out_is_input)
{
	char wl[600], dir[64], same[640], hard[640], soft[640];
	snprintf(dir, sizeof(dir), "/tmp/dmr_test_gen_in_%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(wl, sizeof(wl), "%s/workloada", dmr_test_ycsb_dir());
	char *orig = dmr_test_read_text(wl);
	char in[640];
	snprintf(in, sizeof(in), "%s/wa", dir);
	dmr_test_write_file(in, orig);
	snprintf(same, sizeof(same), "%s/./wa", dir);
	snprintf(hard, sizeof(hard), "%s/wa-hard", dir);
	snprintf(soft, sizeof(soft), "%s/wa-soft", dir);
	ck_assert_int_eq(link(in, hard), 0);
	ck_assert_int_eq(symlink(in, soft), 0);
	const char *outs[] = {in, same, hard, soft};
	for (int i = 0; i < 4; i++) {
		dmr_test_run_t r =
		    dmr_test_call_main(dmr_gen_ycsb_main, "ycsb", "--workload", in, "--txns", "10",
				       "--quiet", "-o", outs[i], NULL);
		ck_assert_msg(r.status == 2, "-o %s: exit %d\n%s", outs[i], r.status, r.err);
		char want[1600];
		snprintf(want, sizeof(want),
			 "ycsb: -o %s is the input file (--workload %s): give another output "
			 "path\n",
			 outs[i], in);
		ck_assert_str_eq(r.err, want);
		dmr_test_run_free(&r);
		char *now = dmr_test_read_text(in);
		ck_assert_str_eq(now, orig);
		free(now);
	}
	/* another file is written as before */
	char out[640];
	snprintf(out, sizeof(out), "%s/t.csv", dir);
	dmr_test_run_t r = dmr_test_call_main(dmr_gen_ycsb_main, "ycsb", "--workload", in, "--txns",
					      "10", "--quiet", "-o", out, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	ck_assert_uint_eq(count_txns(out), 10);
	free(orig);
	ck_assert_int_eq(dmr_test_rmtree(dir), 0);
}
END_TEST

/* -o into a directory that does not exist (or is a file): refused before
 * anything is printed or generated, naming -o as given and why, exit 2, in
 * every generator (it said "tpcc: nodir/a.csv.tmp: No such file or
 * directory", after the footprint table: a trial) */
START_TEST(test_cli_out_dir)
{
	char wl[600], nodir[64], file[64], out[2][96], want[400];
	snprintf(wl, sizeof(wl), "%s/workloada", dmr_test_ycsb_dir());
	snprintf(nodir, sizeof(nodir), "/tmp/dmr_test_gen_nodir_%d", (int)getpid());
	snprintf(file, sizeof(file), "/tmp/dmr_test_gen_file_%d", (int)getpid());
	dmr_test_write_file(file, "a file\n");
	snprintf(out[0], sizeof(out[0]), "%s/a.csv", nodir);
	snprintf(out[1], sizeof(out[1]), "%s/a.csv", file);
	static const char *progs[] = {"tpcc", "smallbank", "tatp", "ycsb"};
	int (*mains[])(int, char **) = {dmr_gen_tpcc_main, dmr_gen_smallbank_main,
					dmr_gen_tatp_main, dmr_gen_ycsb_main};
	for (int g = 0; g < 4; g++)
		for (int k = 0; k < 2; k++) {
			dmr_test_run_t r =
			    g == 3 ? dmr_test_call_main(mains[g], progs[g], "--workload", wl,
							"--txns", "10", "-o", out[k], NULL)
				   : dmr_test_call_main(mains[g], progs[g], "--txns", "10", "-o",
							out[k], NULL);
			if (k == 0)
				snprintf(want, sizeof(want), "%s: -o %s: no such directory '%s'\n",
					 progs[g], out[k], nodir);
			else
				snprintf(want, sizeof(want), "%s: -o %s: '%s' is not a directory\n",
					 progs[g], out[k], file);
			ck_assert_msg(r.status == 2, "%s -o %s: exit %d\n%s", progs[g], out[k],
				      r.status, r.err);
			ck_assert_str_eq(r.err, want); /* no footprint, no .tmp */
			ck_assert_str_eq(r.out, "");
			dmr_test_run_free(&r);
		}
	ck_assert(!dmr_test_exists(nodir));
	unlink(file);
}
END_TEST

/* A write that fails midway (file size limit) leaves no partial file and
 * does not touch an existing trace. */
START_TEST(test_cli_write_failure)
{
	char out[64], tmp[80], buf[16] = {0};
	struct rlimit lim = {1 << 20, 1 << 20}, old;
	FILE *f;
	int rc;

	snprintf(out, sizeof(out), "/tmp/dmr_test_gen_fail_%d.csv", (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(out, "w");
	ck_assert_ptr_nonnull(f);
	fputs("old", f);
	fclose(f);

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_max)
		lim.rlim_cur = lim.rlim_max = old.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = run_main(dmr_gen_tpcc_main, "tpcc", "--quiet", "--txns", "20000", "-o", out, NULL);
	lim = old;
	setrlimit(RLIMIT_FSIZE, &lim);
	signal(SIGXFSZ, SIG_DFL);

	ck_assert_int_eq(rc, 1);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "old");
	unlink(out);
}
END_TEST

/* SIGINT and SIGTERM mid-generation: exit 130, the .tmp removed, an
 * earlier file of that name untouched (the fresh-user trial of session 6
 * found gen killed by the signal, a 376 MB .tmp left behind). */
START_TEST(test_cli_signal)
{
	int sigs[2] = {SIGINT, SIGTERM};
	for (int k = 0; k < 2; k++) {
		char out[64], tmp[80], buf[16] = {0};
		snprintf(out, sizeof(out), "/tmp/dmr_test_gen_sig_%d.csv", (int)getpid());
		snprintf(tmp, sizeof(tmp), "%s.tmp", out);
		FILE *f = fopen(out, "w");
		ck_assert_ptr_nonnull(f);
		fputs("old", f);
		fclose(f);
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(run_main(dmr_gen_tpcc_main, "tpcc", "--quiet", "--txns", "50000000",
				       "-o", out, NULL));
		/* until the generator has written some of the .tmp (at most 60 s) */
		for (int i = 0; i < 600 && access(tmp, F_OK) != 0; i++)
			usleep(100000);
		usleep(200000);
		ck_assert_int_eq(kill(pid, sigs[k]), 0);
		int ws;
		ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
		ck_assert_msg(WIFEXITED(ws), "killed by signal %d",
			      WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
		ck_assert_int_eq(WEXITSTATUS(ws), 130);
		ck_assert_int_eq(access(tmp, F_OK), -1);
		f = fopen(out, "r");
		ck_assert_ptr_nonnull(f);
		ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
		fclose(f);
		ck_assert_str_eq(buf, "old");
		unlink(out);
	}
}
END_TEST

static Suite *gen_suite(void)
{
	Suite *s = suite_create("gen");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_tpcc_mix_spec);
	tcase_add_test(tc, test_tpcc_mix_dm);
	tcase_add_test(tc, test_tpcc_regimes);
	tcase_add_test(tc, test_tpcc_nurand);
	tcase_add_test(tc, test_tpcc_names);
	tcase_add_test(tc, test_tpcc_remote);
	tcase_add_test(tc, test_tpcc_header);
	tcase_add_test(tc, test_determinism);
	tcase_add_test(tc, test_smallbank_mix);
	tcase_add_test(tc, test_ycsb_workloads);
	tcase_add_test(tc, test_ycsb_regime_override);
	tcase_add_test(tc, test_ycsb_props);
	tcase_add_test(tc, test_ycsb_props_refused);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_cli_out_is_input);
	tcase_add_test(tc, test_cli_out_dir);
	tcase_add_test(tc, test_cli_write_failure);
	tcase_add_test(tc, test_cli_signal);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dmr_test_run(gen_suite());
}
