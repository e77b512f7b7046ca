/*
 * tests/unit/test_verify.c - workload verifiers (traces/verify.c).
 *
 * An in-memory MN state (per table: a present flag and the payload words
 * of every slot) is built by a small serial reference executor of the trace
 * semantics (trace.h / FORMAT.md: deps with ranges, guards, actions on the
 * read image, "table full" for out-of-range inserts), fed by the
 * generators. Each invariant must hold on that state and fail, with a
 * message naming the right warehouse / district, once the state is
 * corrupted. The executor aborts the test on anything a correct generator
 * never produces (insert into a present slot, update of an absent record
 * without a guard, action reference to a skipped op). TATP's inserts and
 * deletes may meet a present / an absent row by design: with m->engine_dup
 * the executor does what the engine does (core/txn.c check_round): an insert
 * into a present slot gives the transaction up (DMR_ABORT_DUPLICATE), a
 * delete of an absent row deletes nothing, and ops guarded on it are skipped.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traces/smallbank.h"
#include "traces/tatp.h"
#include "traces/tpcc.h"
#include "traces/ycsb.h"
#include "helpers/suite.h"

/* ---- in-memory MN ------------------------------------------------------- */

typedef struct mem {
	dmr_trace_hdr_t h;
	uint8_t *present[DMR_TRACE_MAX_TABLES];
	uint64_t *words[DMR_TRACE_MAX_TABLES];
	uint32_t nw[DMR_TRACE_MAX_TABLES];
	uint32_t maxw;
	uint64_t *img, *neu; /* DMR_TRACE_MAX_OPS x maxw each */
	int fail_read;	     /* read() returns this when < 0 */
	int engine_dup;	     /* TATP: the engine's duplicate / absent-delete semantics */
	/* executor results */
	uint64_t committed, full, dup;
	int64_t xv;
} mem_t;

static mem_t *mem_new(const dmr_trace_hdr_t *h)
{
	mem_t *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->h = *h;
	for (uint32_t t = 0; t < h->ntables; t++) {
		uint64_t rows = h->tables[t].rows;

		m->nw[t] = h->tables[t].payload_bytes / 8;
		m->maxw = m->nw[t] > m->maxw ? m->nw[t] : m->maxw;
		m->present[t] = calloc(rows, 1);
		m->words[t] = calloc(rows * m->nw[t], sizeof(uint64_t));
		ck_assert_ptr_nonnull(m->present[t]);
		ck_assert_ptr_nonnull(m->words[t]);
		memset(m->present[t], 1, h->tables[t].loaded);
	}
	m->img = calloc((size_t)DMR_TRACE_MAX_OPS * m->maxw, sizeof(uint64_t));
	m->neu = calloc((size_t)DMR_TRACE_MAX_OPS * m->maxw, sizeof(uint64_t));
	ck_assert_ptr_nonnull(m->img);
	ck_assert_ptr_nonnull(m->neu);
	return m;
}

static void mem_free(mem_t *m)
{
	for (uint32_t t = 0; t < m->h.ntables; t++) {
		free(m->present[t]);
		free(m->words[t]);
	}
	free(m->img);
	free(m->neu);
	free(m);
}

static uint64_t *rec(mem_t *m, int t, uint64_t slot)
{
	return &m->words[t][slot * m->nw[t]];
}

static int mem_read(void *arg, int table, uint64_t slot, const uint64_t **p, uint64_t *ver)
{
	mem_t *m = arg;

	(void)ver;
	if (m->fail_read < 0)
		return m->fail_read;
	ck_assert_int_lt(table, (int)m->h.ntables);
	ck_assert_uint_lt(slot, m->h.tables[table].rows);
	if (!m->present[table][slot])
		return 0;
	*p = rec(m, table, slot);
	return 1;
}

/* ---- serial reference executor ------------------------------------------ */

enum { W_NONE, W_WRITE, W_DELETE };

/* Execute one txn; 1 committed, 0 failed as table full, -1 gave up as a
 * duplicate insert (engine_dup only). */
static int exec_txn(mem_t *m, const dmr_trace_txn_t *t)
{
	uint8_t skipped[DMR_TRACE_MAX_OPS], present[DMR_TRACE_MAX_OPS], wr[DMR_TRACE_MAX_OPS];
	uint64_t slot[DMR_TRACE_MAX_OPS];

	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *o = &t->ops[i];
		uint64_t *img = &m->img[(size_t)i * m->maxw], *neu = &m->neu[(size_t)i * m->maxw];
		int64_t key = o->key;
		int cond = 1;

		skipped[i] = 1;
		present[i] = 0;
		wr[i] = W_NONE;
		if (o->dep.op >= 0) {
			int64_t v;

			if (skipped[o->dep.op] || !present[o->dep.op])
				continue;
			v = (int64_t)m->img[(size_t)o->dep.op * m->maxw + o->dep.field];
			if ((o->lo || o->hi) && (v < o->lo || v >= o->hi)) {
				if (o->kind == DMR_TOP_INSERT)
					return 0; /* table full */
				continue;
			}
			key += v;
		}
		ck_assert_msg(key >= 0 && (uint64_t)key + o->count <= m->h.tables[o->table].rows,
			      "txn %llu op %u: slot %lld out of table", (unsigned long long)t->id,
			      i, (long long)key);
		slot[i] = (uint64_t)key;
		present[i] = m->present[o->table][slot[i]];
		if (present[i])
			memcpy(img, rec(m, o->table, slot[i]), m->nw[o->table] * sizeof(uint64_t));
		else
			memset(img, 0, m->nw[o->table] * sizeof(uint64_t));

		if (o->guard.kind != DMR_TGUARD_NONE) {
			int g = o->guard.op;
			const uint64_t *gi = &m->img[(size_t)g * m->maxw];
			int gp = (uint32_t)g == i ? present[i] : !skipped[g] && present[g];

			cond = gp && (o->guard.kind == DMR_TGUARD_PRESENT ||
				      gi[o->guard.f] < gi[o->guard.f2]);
		}
		if (!cond)
			continue; /* skipped: a locked record is released unchanged */
		skipped[i] = 0;

		switch (o->kind) {
		case DMR_TOP_READ:
			break;
		case DMR_TOP_INSERT:
			if (present[i] && m->engine_dup)
				return -1;
			ck_assert_msg(!present[i],
				      "txn %llu op %u: insert into present %s slot %llu",
				      (unsigned long long)t->id, i, m->h.tables[o->table].name,
				      (unsigned long long)slot[i]);
			memset(neu, 0, m->nw[o->table] * sizeof(uint64_t));
			wr[i] = W_WRITE;
			break;
		case DMR_TOP_UPDATE:
			ck_assert_msg(present[i], "txn %llu op %u: update of absent %s slot %llu",
				      (unsigned long long)t->id, i, m->h.tables[o->table].name,
				      (unsigned long long)slot[i]);
			memcpy(neu, img, m->nw[o->table] * sizeof(uint64_t));
			wr[i] = W_WRITE;
			break;
		case DMR_TOP_DELETE:
			if (!present[i] && m->engine_dup)
				break; /* nothing to delete */
			ck_assert_msg(present[i], "txn %llu op %u: delete of absent %s slot %llu",
				      (unsigned long long)t->id, i, m->h.tables[o->table].name,
				      (unsigned long long)slot[i]);
			wr[i] = W_DELETE;
			break;
		}
		for (int a = 0; a < o->nacts; a++) {
			const dmr_trace_act_t *ac = &o->acts[a];
			uint64_t v = (uint64_t)ac->val.lit;

			if (ac->val.op >= 0) {
				ck_assert_msg(!skipped[ac->val.op] && present[ac->val.op],
					      "txn %llu op %u: action reads skipped op %d",
					      (unsigned long long)t->id, i, ac->val.op);
				v = m->img[(size_t)ac->val.op * m->maxw + ac->val.field];
			}
			if (ac->kind == DMR_TACT_SET)
				neu[ac->field] = v;
			else
				neu[ac->field] += v;
		}
	}
	/* commit */
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *o = &t->ops[i];

		if (wr[i] == W_WRITE) {
			memcpy(rec(m, o->table, slot[i]), &m->neu[(size_t)i * m->maxw],
			       m->nw[o->table] * sizeof(uint64_t));
			m->present[o->table][slot[i]] = 1;
		} else if (wr[i] == W_DELETE) {
			m->present[o->table][slot[i]] = 0;
		}
	}
	return 1;
}

static dmr_status_t exec_emit(void *arg, const dmr_trace_txn_t *t, dmr_err_t *err)
{
	mem_t *m = arg;

	(void)err;
	switch (exec_txn(m, t)) {
	case 1:
		m->committed++;
		m->xv += t->xv;
		break;
	case 0:
		m->full++;
		break;
	default:
		m->dup++;
	}
	return DMR_OK;
}

static void verify(mem_t *m, int64_t xv, dmr_verify_result_t *res)
{
	dmr_err_t err;

	ck_assert_msg(dmr_wl_verify(&m->h, mem_read, NULL, m, xv, res, &err) == DMR_OK, "%s",
		      err.msg);
}

static void expect_fail(mem_t *m, int64_t xv, const char *needle1, const char *needle2)
{
	dmr_verify_result_t res;

	verify(m, xv, &res);
	ck_assert_msg(!res.ok, "corruption not detected (want %s)", needle1);
	ck_assert_uint_ge(res.failures, 1);
	ck_assert_msg(strstr(res.first_failure, needle1) != NULL, "'%s' lacks '%s'",
		      res.first_failure, needle1);
	if (needle2)
		ck_assert_msg(strstr(res.first_failure, needle2) != NULL, "'%s' lacks '%s'",
			      res.first_failure, needle2);
}

/* ---- TPC-C -------------------------------------------------------------- */

static mem_t *tpcc_state(int mix, const char *reg, uint64_t txns)
{
	dmr_tpcc_cfg_t cfg;
	dmr_trace_hdr_t h;
	dmr_err_t err;
	mem_t *m;

	dmr_tpcc_cfg_default(&cfg);
	cfg.quiet = 1;
	cfg.warehouses = 2;
	cfg.order_cap = 60;
	cfg.payment_cap = 3;
	cfg.txns = txns;
	cfg.mix = mix;
	ck_assert_int_eq(dmr_regime_parse(reg, &cfg.regime, &err), DMR_OK);
	ck_assert_msg(dmr_tpcc_header(&cfg, &h, &err) == DMR_OK, "%s", err.msg);
	m = mem_new(&h);
	ck_assert_msg(dmr_tpcc_generate(&cfg, exec_emit, m, NULL, &err) == DMR_OK, "%s", err.msg);
	return m;
}

/* Slot of the order (0-based id o) of warehouse w district d. */
static uint64_t oslot(mem_t *m, uint64_t w, uint64_t d, uint64_t o)
{
	uint64_t cap = m->h.tables[DMR_TPCC_ORDER].rows / m->h.tables[DMR_TPCC_DISTRICT].rows;

	return dmr_tpcc_order_slot(dmr_tpcc_district_slot(w, d), o, cap);
}

START_TEST(test_tpcc_empty)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "uniform", 0);
	dmr_verify_result_t res;

	verify(m, 0, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_str_eq(res.summary, "tpcc C1 C2 C3 ok");
	ck_assert_uint_eq(res.checks, 2 + 20 * 2);
	mem_free(m);
}
END_TEST

START_TEST(test_tpcc_consistent)
{
	static const char *regimes[] = {"extreme", "uniform"};

	for (int mix = 0; mix < 2; mix++)
		for (int r = 0; r < 2; r++) {
			mem_t *m = tpcc_state(mix, regimes[r], 20000);
			dmr_verify_result_t res;
			uint64_t orders = 0, news = 0, delivered = 0, hist = 0;

			verify(m, m->xv, &res);
			ck_assert_msg(res.ok, "mix %d %s: %s", mix, regimes[r], res.first_failure);
			ck_assert_str_eq(res.summary, "tpcc C1 C2 C3 ok");
			ck_assert_uint_eq(res.failures, 0);
			/* the caps (60 orders / district, 3 payments / customer) overflow */
			ck_assert_uint_gt(m->full, 0);
			for (uint64_t s = 0; s < m->h.tables[DMR_TPCC_ORDER].rows; s++) {
				orders += m->present[DMR_TPCC_ORDER][s];
				news += m->present[DMR_TPCC_NEW_ORDER][s];
				delivered += m->present[DMR_TPCC_ORDER][s] &&
					     rec(m, DMR_TPCC_ORDER, s)[DMR_TPCC_O_CARRIER_ID] != 0;
			}
			for (uint64_t s = 0; s < m->h.tables[DMR_TPCC_HISTORY].rows; s++)
				hist += m->present[DMR_TPCC_HISTORY][s];
			ck_assert_uint_gt(orders, 0);
			ck_assert_uint_gt(hist, 0);
			ck_assert_uint_eq(orders - news, delivered);
			if (mix == DMR_TPCC_MIX_SPEC)
				ck_assert_uint_gt(delivered, 0);
			else
				ck_assert_uint_eq(delivered, 0);
			mem_free(m);
		}
}
END_TEST

/* Delivered orders credit their total to the right customer; OrderStatus /
 * StockLevel keys line up with the layout: customer.last_o_id_plus1 names
 * an order of that customer whose lines are at its line block. */
START_TEST(test_tpcc_layout)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "hot:1/0.5", 20000);
	uint64_t custs = m->h.tables[DMR_TPCC_CUSTOMER].rows, checked = 0;
	uint64_t cap = m->h.tables[DMR_TPCC_ORDER].rows / m->h.tables[DMR_TPCC_DISTRICT].rows;

	for (uint64_t cs = 0; cs < custs; cs++) {
		const uint64_t *c = rec(m, DMR_TPCC_CUSTOMER, cs);
		uint64_t dist = cs / DMR_TPCC_CUSTOMERS, o, os;
		const uint64_t *ord;

		if (c[DMR_TPCC_C_LAST_O_ID_PLUS1] == 0)
			continue;
		o = c[DMR_TPCC_C_LAST_O_ID_PLUS1] - 1;
		ck_assert_uint_eq(c[DMR_TPCC_C_LAST_OL_END], (o + 1) * DMR_TPCC_MAX_OL);
		os = dmr_tpcc_order_slot(dist, o, cap);
		ck_assert(m->present[DMR_TPCC_ORDER][os]);
		ord = rec(m, DMR_TPCC_ORDER, os);
		ck_assert_uint_eq(ord[DMR_TPCC_O_C_ID], cs % DMR_TPCC_CUSTOMERS);
		for (uint64_t k = 0; k < DMR_TPCC_MAX_OL; k++)
			ck_assert_int_eq(m->present[DMR_TPCC_ORDER_LINE]
						   [dmr_tpcc_order_line_slot(dist, o, k, cap)],
					 k < ord[DMR_TPCC_O_OL_CNT]);
		checked++;
	}
	ck_assert_uint_gt(checked, 100);
	mem_free(m);
}
END_TEST

START_TEST(test_tpcc_c1_fails)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "uniform", 5000);
	dmr_verify_result_t res;

	rec(m, DMR_TPCC_WAREHOUSE, 1)[DMR_TPCC_W_YTD] += 1; /* W_YTD off by one */
	expect_fail(m, 0, "tpcc C1: warehouse 1:", "W_YTD");
	verify(m, 0, &res);
	ck_assert_uint_eq(res.failures, 1);
	ck_assert_str_eq(res.summary, "tpcc C1 FAIL(1) C2 ok C3 ok");
	mem_free(m);
}
END_TEST

/* Warehouse 0 district d with delivered orders and at least 3 undelivered
 * ones, below the cap. */
static uint64_t busy_district(mem_t *m, uint64_t *first_p, uint64_t *last_p)
{
	uint64_t cap = m->h.tables[DMR_TPCC_ORDER].rows / m->h.tables[DMR_TPCC_DISTRICT].rows;

	for (uint64_t d = 0; d < DMR_TPCC_DISTRICTS; d++) {
		const uint64_t *di = rec(m, DMR_TPCC_DISTRICT, d);
		uint64_t next = di[DMR_TPCC_D_NEXT_O_ID], first = di[DMR_TPCC_D_NEXT_DELIV_O_ID];

		if (first > 0 && next - first >= 3 && next < cap) {
			*first_p = first;
			*last_p = next - 1;
			return d;
		}
	}
	ck_abort_msg("no district with 3 undelivered orders");
	return 0;
}

START_TEST(test_tpcc_c3_fails)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "extreme", 1000);
	uint64_t first, last, d = busy_district(m, &first, &last);
	char where[64];
	dmr_verify_result_t res;

	verify(m, 0, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	/* a missing new_order row in the middle: C3 */
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, first + 1)] = 0;
	snprintf(where, sizeof(where), "warehouse 0 district %llu", (unsigned long long)d);
	expect_fail(m, 0, "tpcc C3:", where);
	verify(m, 0, &res);
	ck_assert_str_eq(res.summary, "tpcc C1 ok C2 ok C3 FAIL(1)");
	mem_free(m);
}
END_TEST

START_TEST(test_tpcc_c2_fails)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "extreme", 1000);
	uint64_t first, last, d = busy_district(m, &first, &last);
	char where[64];
	dmr_verify_result_t res;

	snprintf(where, sizeof(where), "warehouse 0 district %llu", (unsigned long long)d);
	/* the newest new_order row missing: max(NO_O_ID) != D_NEXT_O_ID - 1 */
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, last)] = 0;
	expect_fail(m, 0, "tpcc C2:", where);
	verify(m, 0, &res);
	ck_assert_str_eq(res.summary, "tpcc C1 ok C2 FAIL(1) C3 ok");
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, last)] = 1;
	verify(m, 0, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);

	/* D_NEXT_O_ID advanced without an order */
	rec(m, DMR_TPCC_DISTRICT, d)[DMR_TPCC_D_NEXT_O_ID] += 1;
	expect_fail(m, 0, "tpcc C2:", where);
	rec(m, DMR_TPCC_DISTRICT, d)[DMR_TPCC_D_NEXT_O_ID] -= 1;

	/* an order with no district counter (0-based ids: first order of an
	 * empty district of warehouse 1, which extreme leaves mostly idle) */
	for (uint64_t dd = 0; dd < DMR_TPCC_DISTRICTS; dd++) {
		uint64_t next = rec(m, DMR_TPCC_DISTRICT, 10 + dd)[DMR_TPCC_D_NEXT_O_ID];

		snprintf(where, sizeof(where), "warehouse 1 district %llu", (unsigned long long)dd);
		m->present[DMR_TPCC_ORDER][oslot(m, 1, dd, next)] = 1;
		expect_fail(m, 0, "tpcc C2:", where);
		m->present[DMR_TPCC_ORDER][oslot(m, 1, dd, next)] = 0;
		break;
	}
	mem_free(m);
}
END_TEST

/* The absent hint (workload.h dmr_wl_absent_func_t) of the in-memory MN:
 * the run of absent slots from slot on, towards dir, plus `lie` (a hint
 * that claims too much, to show the verifier trusts it); reads counted. */
typedef struct hint {
	mem_t *m;
	uint64_t reads, lie;
} hint_t;

static int hint_read(void *arg, int table, uint64_t slot, const uint64_t **p, uint64_t *ver)
{
	hint_t *h = arg;
	h->reads++;
	return mem_read(h->m, table, slot, p, ver);
}

static uint64_t hint_absent(void *arg, int table, uint64_t slot, int dir)
{
	hint_t *h = arg;
	const uint8_t *pr = h->m->present[table];
	uint64_t k = 0, rows = h->m->h.tables[table].rows;
	for (uint64_t s = slot; s < rows && !pr[s]; k++) {
		if (dir < 0 && s == 0) {
			k++;
			break;
		}
		s = dir < 0 ? s - 1 : s + 1;
	}
	return k ? k + h->lie : 0;
}

static void verify_hint(hint_t *h, dmr_verify_result_t *res)
{
	dmr_err_t err;
	h->reads = 0;
	ck_assert_msg(dmr_wl_verify(&h->m->h, hint_read, hint_absent, h, 0, res, &err) == DMR_OK,
		      "%s", err.msg);
}

/* With the hint the scans of C2 / C3 skip the absent capacity: the same
 * results, checks and failures, from far fewer reads. */
START_TEST(test_tpcc_absent_hint)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_SPEC, "extreme", 1000);
	uint64_t first, last, d = busy_district(m, &first, &last);
	hint_t h = {m, 0, 0};
	dmr_verify_result_t a, b;
	verify(m, 0, &a);
	verify_hint(&h, &b);
	ck_assert(a.ok && b.ok);
	ck_assert_uint_eq(a.checks, b.checks);
	ck_assert_str_eq(a.summary, b.summary);
	/* 20 districts x 60 slots x 2 scans without it; with it about one read
	 * per present order and new_order row and per district */
	uint64_t present = 0;
	for (uint64_t s = 0; s < m->h.tables[DMR_TPCC_ORDER].rows; s++)
		present += m->present[DMR_TPCC_ORDER][s] + m->present[DMR_TPCC_NEW_ORDER][s];
	ck_assert_uint_lt(h.reads, present + 4 * 20 + 2 + 20);
	uint64_t with = h.reads;
	dmr_err_t err;
	h.reads = 0;
	ck_assert_int_eq(dmr_wl_verify(&m->h, hint_read, NULL, &h, 0, &b, &err), DMR_OK);
	ck_assert_msg(with * 2 < h.reads, "reads with the hint %llu, without %llu",
		      (unsigned long long)with, (unsigned long long)h.reads);
	/* the corruptions of C2 and C3 are found alike */
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, first + 1)] = 0;
	verify(m, 0, &a);
	verify_hint(&h, &b);
	ck_assert_str_eq(b.summary, "tpcc C1 ok C2 ok C3 FAIL(1)");
	ck_assert_str_eq(a.first_failure, b.first_failure);
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, first + 1)] = 1;
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, last)] = 0;
	verify_hint(&h, &b);
	ck_assert_str_eq(b.summary, "tpcc C1 ok C2 FAIL(1) C3 ok");
	m->present[DMR_TPCC_NEW_ORDER][oslot(m, 0, d, last)] = 1;
	/* a hint that claims one slot too many is believed: a new_order row
	 * right after an absent run is skipped (C2 / C3 then fail) */
	h.lie = 1;
	verify_hint(&h, &b);
	ck_assert(!b.ok);
	mem_free(m);
}
END_TEST

START_TEST(test_tpcc_absent_and_errors)
{
	mem_t *m = tpcc_state(DMR_TPCC_MIX_DM, "uniform", 100);
	dmr_verify_result_t res;
	dmr_trace_hdr_t h;
	dmr_err_t err;

	m->present[DMR_TPCC_DISTRICT][13] = 0;
	expect_fail(m, 0, "warehouse 1 district 3", "absent");
	m->present[DMR_TPCC_DISTRICT][13] = 1;

	m->fail_read = DMR_ERR_IO;
	ck_assert_int_eq(dmr_wl_verify(&m->h, mem_read, NULL, m, 0, &res, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "warehouse"));
	ck_assert(!res.ok);
	m->fail_read = 0;

	h = m->h;
	snprintf(h.workload, sizeof(h.workload), "kvcache");
	ck_assert_int_eq(dmr_wl_verify(&h, mem_read, NULL, m, 0, &res, &err), DMR_ERR_UNSUPPORTED);
	ck_assert(!res.ok);

	h = m->h;
	snprintf(h.tables[DMR_TPCC_NEW_ORDER].name, DMR_TRACE_NAME_MAX, "neworder");
	ck_assert_int_eq(dmr_wl_verify(&h, mem_read, NULL, m, 0, &res, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "new_order"));
	mem_free(m);
}
END_TEST

/* ---- SmallBank ---------------------------------------------------------- */

START_TEST(test_smallbank)
{
	dmr_smallbank_cfg_t cfg;
	dmr_trace_hdr_t h;
	dmr_verify_result_t res;
	dmr_err_t err;
	mem_t *m;
	int64_t sum = 0;

	dmr_smallbank_cfg_default(&cfg);
	cfg.quiet = 1;
	cfg.accounts = 1000;
	cfg.txns = 20000;
	ck_assert_int_eq(dmr_regime_parse("hot:10/0.9", &cfg.regime, &err), DMR_OK);
	ck_assert_int_eq(dmr_smallbank_header(&cfg, &h, &err), DMR_OK);
	m = mem_new(&h);
	ck_assert_int_eq(dmr_smallbank_generate(&cfg, exec_emit, m, NULL, &err), DMR_OK);
	ck_assert_uint_eq(m->committed, 20000);
	ck_assert_int_ne(m->xv, 0);
	for (uint64_t a = 0; a < 1000; a++)
		sum += (int64_t)(rec(m, DMR_SB_SAVINGS, a)[0] + rec(m, DMR_SB_CHECKING, a)[0]);
	ck_assert_int_eq(sum, m->xv);

	verify(m, m->xv, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_str_eq(res.summary, "smallbank sum ok");

	expect_fail(m, m->xv + 1, "smallbank: sum of balances", "committed_xv");
	rec(m, DMR_SB_CHECKING, 7)[0] -= 1; /* a balance off by one */
	expect_fail(m, m->xv, "smallbank: sum of balances", NULL);
	verify(m, m->xv, &res);
	ck_assert_str_eq(res.summary, "smallbank sum FAIL");
	rec(m, DMR_SB_CHECKING, 7)[0] += 1;
	m->present[DMR_SB_SAVINGS][5] = 0;
	expect_fail(m, m->xv, "savings slot 5", "absent");
	mem_free(m);
}
END_TEST

/* ---- YCSB --------------------------------------------------------------- */

static mem_t *ycsb_state(char w, uint64_t txns)
{
	dmr_ycsb_cfg_t cfg;
	dmr_trace_hdr_t h;
	dmr_err_t err;
	char path[600];
	mem_t *m;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(path, sizeof(path), "%s/workload%c", dmr_test_ycsb_dir(), w);
	ck_assert_msg(dmr_ycsb_props_load(path, &cfg.props, &err) == DMR_OK, "%s", err.msg);
	cfg.txns = txns;
	cfg.seed = 5;
	cfg.quiet = 1;
	ck_assert_int_eq(dmr_ycsb_header(&cfg, &h, &err), DMR_OK);
	m = mem_new(&h);
	ck_assert_int_eq(dmr_ycsb_generate(&cfg, exec_emit, m, NULL, &err), DMR_OK);
	ck_assert_uint_eq(m->committed, txns);
	return m;
}

START_TEST(test_ycsb)
{
	mem_t *m = ycsb_state('f', 20000);
	dmr_verify_result_t res;

	ck_assert_int_gt(m->xv, 5000);
	verify(m, m->xv, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_str_eq(res.summary, "ycsb counters ok");
	expect_fail(m, m->xv - 1, "ycsb: sum of RMW counters", NULL);
	rec(m, DMR_YCSB_TABLE, 3)[DMR_YCSB_COUNTER] += 2;
	expect_fail(m, m->xv, "ycsb: sum of RMW counters", NULL);
	verify(m, m->xv, &res);
	ck_assert_str_eq(res.summary, "ycsb counters FAIL");
	mem_free(m);

	/* inserts (d, e) execute cleanly: every insert lands in an absent slot */
	for (char w = 'a'; w <= 'e'; w++) {
		m = ycsb_state(w, 5000);
		verify(m, 0, &res);
		ck_assert_msg(res.ok, "workload%c: %s", w, res.first_failure);
		mem_free(m);
	}
}
END_TEST

/* ---- TATP --------------------------------------------------------------- */

static mem_t *tatp_state(uint64_t S, const char *reg, uint64_t txns, int cf_check,
			 uint64_t *by_type)
{
	dmr_tatp_cfg_t cfg;
	dmr_trace_hdr_t h;
	dmr_err_t err;
	mem_t *m;

	dmr_tatp_cfg_default(&cfg);
	cfg.quiet = 1;
	cfg.subscribers = S;
	cfg.txns = txns;
	cfg.seed = 3;
	cfg.cf_check = cf_check;
	ck_assert_int_eq(dmr_regime_parse(reg, &cfg.regime, &err), DMR_OK);
	ck_assert_msg(dmr_tatp_header(&cfg, &h, &err) == DMR_OK, "%s", err.msg);
	m = mem_new(&h);
	m->engine_dup = 1;
	ck_assert_msg(dmr_tatp_generate(&cfg, exec_emit, m, by_type, &err) == DMR_OK, "%s",
		      err.msg);
	ck_assert_uint_eq(m->committed + m->dup, txns);
	ck_assert_uint_eq(m->full, 0);
	return m;
}

START_TEST(test_tatp)
{
	uint64_t n[DMR_TATP_NTYPES], S = 500, upd = 0, cf = 0;
	mem_t *m = tatp_state(S, "hot:5/0.5", 40000, 1, n);
	dmr_verify_result_t res;

	/* committed_xv = the committed subscriber updates; only inserts give up */
	ck_assert_int_eq(
	    m->xv, (int64_t)(n[DMR_TATP_T_UPDATE_SUBSCRIBER_DATA] + n[DMR_TATP_T_UPDATE_LOCATION]));
	ck_assert_uint_gt(m->dup, 0);
	ck_assert_uint_lt(m->dup, n[DMR_TATP_T_INSERT_CALL_FORWARDING]);
	for (uint64_t s = 0; s < S; s++)
		upd += rec(m, DMR_TATP_SUBSCRIBER, s)[DMR_TATP_S_UPDATES];
	ck_assert_uint_eq(upd, (uint64_t)m->xv);
	for (uint64_t r = 0; r < m->h.tables[DMR_TATP_CALL_FORWARDING].rows; r++)
		cf += m->present[DMR_TATP_CALL_FORWARDING][r];
	/* 4S loaded rows + committed inserts - deletes that found a row; the
	 * hot 5 of 500 subscribers take half the draws: both moved */
	ck_assert_uint_ne(cf, 4 * S);

	verify(m, m->xv, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_str_eq(res.summary, "tatp updates ok present ok cf_balance ok");
	/* subscriber + 3 present scans + 4S balances */
	ck_assert_uint_eq(res.checks, 1 + 3 + 4 * S);

	expect_fail(m, m->xv + 1, "tatp: sum of subscriber update counters", "committed_xv");
	rec(m, DMR_TATP_SUBSCRIBER, 2)[DMR_TATP_S_UPDATES]++; /* a lost / doubled update */
	expect_fail(m, m->xv, "subscriber update counters", NULL);
	rec(m, DMR_TATP_SUBSCRIBER, 2)[DMR_TATP_S_UPDATES]--;

	/* a call_forwarding row of subscriber 7, sf_type 3, start_time 8 flips */
	{
		uint64_t slot = dmr_tatp_cf_slot(S, 7, 3, 1);
		uint8_t *p = &m->present[DMR_TATP_CALL_FORWARDING][slot];

		*p = !*p;
		expect_fail(m, m->xv, "cf_balance: subscriber 7 sf_type 3", "inserts - deletes");
		verify(m, m->xv, &res);
		ck_assert_str_eq(res.summary, "tatp updates ok present ok cf_balance FAIL(1)");
		*p = !*p;
	}
	m->present[DMR_TATP_ACCESS_INFO][9] = 0;
	expect_fail(m, m->xv, "access_info slot 9", "absent");
	m->present[DMR_TATP_ACCESS_INFO][9] = 1;
	verify(m, m->xv, &res);
	ck_assert(res.ok);
	mem_free(m);

	/* cf_check off: the spec's shapes (INSERT only reads the special
	 * facility), no balance to check */
	m = tatp_state(S, "uniform", 5000, 0, n);
	ck_assert_str_eq(dmr_trace_hdr_param(&m->h, "cf_check"), "0");
	verify(m, m->xv, &res);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_str_eq(res.summary, "tatp updates ok present ok");
	for (uint64_t s = 0; s < 4 * S; s++)
		ck_assert_uint_eq(rec(m, DMR_TATP_SPECIAL_FACILITY, s)[DMR_TATP_SF_CF_COUNT], 0);
	mem_free(m);
}
END_TEST

static Suite *verify_suite(void)
{
	Suite *s = suite_create("verify");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_tpcc_empty);
	tcase_add_test(tc, test_tpcc_consistent);
	tcase_add_test(tc, test_tpcc_layout);
	tcase_add_test(tc, test_tpcc_c1_fails);
	tcase_add_test(tc, test_tpcc_c2_fails);
	tcase_add_test(tc, test_tpcc_c3_fails);
	tcase_add_test(tc, test_tpcc_absent_and_errors);
	tcase_add_test(tc, test_tpcc_absent_hint);
	tcase_add_test(tc, test_smallbank);
	tcase_add_test(tc, test_ycsb);
	tcase_add_test(tc, test_tatp);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dmr_test_run(verify_suite());
}
