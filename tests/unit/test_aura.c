/*
 * tests/unit/test_aura.c - AURA's levers, cost model and tuners
 * (core/aura.h) and its admission gate (core/loop.h, loop aura).
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "core/aura.h"
#include "core/loop.h"
#include "helpers/suite.h"

#define W 1000000ull /* decision window, ps */

/* Two tables: 400 rows (10 per group at 40 groups) and 100 rows. */
static dmr_layout_t layout(void)
{
	dmr_trace_hdr_t h;
	memset(&h, 0, sizeof(h));
	h.ntables = 2;
	h.tables[0].rows = 400;
	h.tables[0].payload_bytes = 8;
	h.tables[0].loaded = 400;
	h.tables[1].rows = 100;
	h.tables[1].payload_bytes = 8;
	h.tables[1].loaded = 100;
	dmr_layout_t l;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 8, 4096, NULL), DMR_OK);
	return l;
}

static dmr_aura_t *aura(unsigned levers, dmr_aura_tuner_t tuner, uint32_t ncn,
			const dmr_layout_t *l, dmr_aura_cfg_t *cfg)
{
	dmr_aura_cfg_default(cfg);
	cfg->levers = levers;
	cfg->tuner = tuner;
	cfg->groups = 40;
	dmr_aura_t *a;
	ck_assert_int_eq(dmr_aura_create(cfg, ncn, 4, l, W, &a, NULL), DMR_OK);
	return a;
}

/* n committed transactions of group g (of 40 over table 0's 400 rows)
 * finishing on cn: attempts each, atomics each, latency us each; each
 * locks 2 records (two updates in the group). */
static void done(dmr_aura_t *a, uint32_t g, uint32_t cn, int n, uint32_t attempts, uint64_t atomics,
		 double lat_us, int rpc)
{
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	t.nops = 2;
	for (int k = 0; k < 2; k++) {
		t.ops[k].kind = DMR_TOP_UPDATE;
		t.ops[k].table = 0;
		t.ops[k].key = (int64_t)g * 10 + k;
		t.ops[k].dep.op = -1;
	}
	ck_assert_uint_eq(dmr_aura_group(a, &t), g);
	for (int i = 0; i < n; i++) {
		dmr_aura_txn_tables(a, &t);
		dmr_aura_done_t d = {.cn = cn,
				     .group = g,
				     .committed = 1,
				     .rpc = rpc,
				     .attempts = attempts,
				     .atomics = atomics,
				     .rpcs = rpc ? 1 : 0,
				     .latency_ps = (uint64_t)(lat_us * 1e6)};
		dmr_aura_txn_done(a, &d);
	}
}

START_TEST(parsers)
{
	unsigned lv;
	dmr_err_t err;
	char nb[32];
	ck_assert_int_eq(dmr_aura_parse_levers("none", &lv, &err), DMR_OK);
	ck_assert_uint_eq(lv, 0);
	ck_assert_int_eq(dmr_aura_parse_levers("all", &lv, &err), DMR_OK);
	ck_assert_uint_eq(lv, DMR_AURA_ALL);
	ck_assert_int_eq(dmr_aura_parse_levers("a3+a1", &lv, &err), DMR_OK);
	ck_assert_uint_eq(lv, DMR_AURA_A1 | DMR_AURA_A3);
	ck_assert_str_eq(dmr_aura_levers_name(lv, nb, sizeof(nb)), "a1+a3");
	ck_assert_int_eq(dmr_aura_parse_levers("a2,a4", &lv, &err), DMR_OK);
	ck_assert_uint_eq(lv, DMR_AURA_A2 | DMR_AURA_A4);
	ck_assert_int_eq(dmr_aura_parse_levers("a1+a5", &lv, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown lever 'a5'"));
	ck_assert_int_eq(dmr_aura_parse_levers("a1+a1", &lv, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "named twice"));
	ck_assert_int_eq(dmr_aura_parse_levers("a1+", &lv, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty part"));

	dmr_aura_tuner_t t;
	ck_assert_int_eq(dmr_aura_parse_tuner("rule", &t, &err), DMR_OK);
	ck_assert_int_eq(t, DMR_AURA_RULE);
	ck_assert_int_eq(dmr_aura_parse_tuner("adam", &t, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "fixed, rule or sgd"));

	double w[4] = {0.5, 1.0, 2.5, 0.18};
	unsigned seen = 0;
	ck_assert_int_eq(dmr_aura_parse_weights("rpc=4,load=0", w, &seen, &err), DMR_OK);
	ck_assert(w[0] == 0.5 && w[1] == 4 && w[2] == 2.5 && w[3] == 0);
	ck_assert_uint_eq(seen, 1u << DMR_AURA_W_RPC | 1u << DMR_AURA_W_LOAD);
	/* 1e-400 underflows: refused as --aura-w-NAME refuses it */
	const char *bad[] = {"atomic=-1", "atomic=nan",	 "atomic=inf",	      "speed=1",
			     "atomic",	  "atomic=",	 "atomic=1,atomic=2", "atomic=1x",
			     "",	  "move=1e-400", "load=1e400"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(dmr_aura_parse_weights(bad[i], w, NULL, &err) == DMR_ERR_PARSE, "%s",
			      bad[i]);
		ck_assert_ptr_nonnull(strstr(err.msg, "--aura-weights"));
	}
	/* a refused list changes nothing */
	ck_assert(w[0] == 0.5 && w[1] == 4);
}
END_TEST

START_TEST(groups_are_range_partitions)
{
	dmr_layout_t l = layout();
	dmr_aura_cfg_t cfg;
	dmr_aura_t *a = aura(DMR_AURA_ALL, DMR_AURA_FIXED, 4, &l, &cfg);
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	t.nops = 2;
	t.ops[0].table = 0;
	t.ops[0].key = 5;
	t.ops[0].dep.op = 0; /* a dependent op is no anchor */
	t.ops[1].table = 0;
	t.ops[1].key = 395;
	t.ops[1].dep.op = -1;
	ck_assert_uint_eq(dmr_aura_group(a, &t), 39);
	t.ops[1].table = 1;
	t.ops[1].key = 50; /* 100 rows: 2.5 rows per group */
	ck_assert_uint_eq(dmr_aura_group(a, &t), 20);
	dmr_aura_destroy(a);
}
END_TEST

/* A2 and A4: a contended group (10 atomics per commit, 2 when it commits
 * at once) gets an owner; an uncontended one (2 and 2) does not, the move
 * costs more than it saves. */
START_TEST(a2_owns_the_contended_group)
{
	dmr_layout_t l = layout();
	dmr_aura_cfg_t cfg;
	for (int a4 = 0; a4 < 2; a4++) {
		dmr_aura_t *a =
		    aura(DMR_AURA_A2 | (a4 ? DMR_AURA_A4 : 0), DMR_AURA_FIXED, 4, &l, &cfg);
		done(a, 7, 0, 10, 1, 2, 10, 0);	 /* first-attempt commits: 2 atomics */
		done(a, 7, 1, 90, 5, 10, 50, 0); /* contended: 5 attempts, 10 atomics */
		done(a, 3, 2, 100, 1, 2, 10, 0);
		ck_assert_uint_eq(dmr_aura_owner(a, 7), UINT32_MAX);
		ck_assert_uint_eq(dmr_aura_tick(a, W), 1);
		/* without A4 the static owner 7 % 4; with it the least loaded
		 * CN of the prediction (group 3 spread, so CN 0 on the tie) */
		ck_assert_uint_eq(dmr_aura_owner(a, 7), a4 ? 0 : 3);
		ck_assert_uint_eq(dmr_aura_owner(a, 3), UINT32_MAX);
		ck_assert_int_eq(dmr_aura_rpc(a, 7), 0); /* A1 not enabled */
		dmr_aura_sample_t s;
		dmr_aura_sample(a, &s);
		ck_assert_uint_eq(s.owned_groups, 1);
		ck_assert_uint_eq(s.moves, 1);
		ck_assert_uint_eq(s.windows, 1);
		/* fixed weights: predicted cost per commit of the window just
		 * closed, 0.5 x (10 x 2 + 90 x 10 + 100 x 2) / 200 + 0.18 x
		 * imbalance (commits 10, 90, 100, 0 over 4 CNs: (100 - 50) / 50) */
		ck_assert_double_eq_tol(s.cost_pred, 0.5 * 1120.0 / 200 + 0.18 * 1.0, 1e-9);
		/* observed: context time per commit, 1 us x 4 CNs x 4 slots / 200 */
		ck_assert_double_eq_tol(s.cost_obs, 16.0 / 200, 1e-12);
		ck_assert(s.w[0] == 0.5 && s.w[3] == 0.18);

		/* routing: the owner; with A4 a spill when its inbox holds its
		 * 4 slots; without A4 the owner always (the reader waits) */
		uint32_t own = dmr_aura_owner(a, 7);
		ck_assert_uint_eq(dmr_aura_inbox_bound(a), 4);
		ck_assert_uint_eq(dmr_aura_route(a, 7, 1, 0), own);
		ck_assert_uint_eq(dmr_aura_route(a, 7, 1, 3), own);
		ck_assert_uint_eq(dmr_aura_route(a, 7, 1, 4), a4 ? 1 : own);
		ck_assert_uint_eq(dmr_aura_route(a, 7, 1, 1000), a4 ? 1 : own);
		ck_assert_uint_eq(dmr_aura_route(a, 3, 1, 0), 1);
		dmr_aura_summary_t sum;
		dmr_aura_summary(a, &sum);
		ck_assert_uint_eq(sum.spills, a4 ? 2 : 0);
		ck_assert_uint_eq(sum.owned_gw, 1);
		dmr_aura_destroy(a);
	}
}
END_TEST

/* A1: RPC is chosen when its weight makes one RPC cheaper than the
 * group's atomics, not otherwise. */
START_TEST(a1_by_weight)
{
	dmr_layout_t l = layout();
	dmr_aura_cfg_t cfg;
	double wrpc[2] = {1.0, 100.0};
	for (int i = 0; i < 2; i++) {
		dmr_aura_cfg_default(&cfg);
		cfg.levers = DMR_AURA_A1;
		cfg.tuner = DMR_AURA_FIXED;
		cfg.groups = 40;
		cfg.w[DMR_AURA_W_RPC] = wrpc[i];
		dmr_aura_t *a;
		ck_assert_int_eq(dmr_aura_create(&cfg, 2, 4, &l, W, &a, NULL), DMR_OK);
		done(a, 5, 0, 50, 2, 8, 20, 0); /* 8 atomics x 0.5 = 4 per commit */
		dmr_aura_tick(a, W);
		ck_assert_int_eq(dmr_aura_rpc(a, 5), i == 0);
		ck_assert_uint_eq(dmr_aura_owner(a, 5), UINT32_MAX);
		dmr_aura_destroy(a);
	}
}
END_TEST

/* A3: a table read and (almost) never written is cached; one written at
 * 1 % of its reads or more is not. */
START_TEST(a3_caches_read_mostly_tables)
{
	dmr_layout_t l = layout();
	dmr_aura_cfg_t cfg;
	dmr_aura_t *a = aura(DMR_AURA_A3, DMR_AURA_FIXED, 2, &l, &cfg);
	dmr_trace_txn_t r, wr;
	memset(&r, 0, sizeof(r));
	memset(&wr, 0, sizeof(wr));
	r.nops = 2;
	r.ops[0].kind = DMR_TOP_READ;
	r.ops[0].table = 0;
	r.ops[0].count = 1;
	r.ops[1].kind = DMR_TOP_READ;
	r.ops[1].table = 1;
	r.ops[1].count = 1;
	wr.nops = 1;
	wr.ops[0].kind = DMR_TOP_UPDATE;
	wr.ops[0].table = 1;
	for (int i = 0; i < 200; i++)
		dmr_aura_txn_tables(a, &r);
	dmr_aura_txn_tables(a, &wr); /* table 1: 1 write per 200 reads, < 1 % */
	dmr_aura_txn_tables(a, &wr);
	dmr_aura_txn_tables(a, &wr); /* now 3 / 200 = 1.5 % */
	dmr_aura_tick(a, W);
	ck_assert_uint_eq(dmr_aura_cache_mask(a), 1u);
	dmr_aura_txn_tables(a, &r);
	dmr_aura_tick(a, 2 * W);
	ck_assert_uint_eq(dmr_aura_cache_mask(a), 3u);
	dmr_aura_destroy(a);
}
END_TEST

/* sgd: with an observed cost of exactly 2 us per atomic (windows of
 * 1000 us, 1 CN of 4 slots: 4000 us of context time over n commits of
 * 4000 / n / 2 atomics each), w_atomic converges to 2 and the weights
 * without signal stay where they were;
 * fixed never moves; rule raises w_atomic while aborts are above the
 * threshold, up to 16 x its start. */
START_TEST(tuners)
{
	dmr_layout_t l = layout();
	dmr_aura_cfg_t cfg;
	dmr_aura_cfg_default(&cfg);
	cfg.levers = 0;
	cfg.tuner = DMR_AURA_SGD;
	cfg.groups = 40;
	dmr_aura_t *a;
	ck_assert_int_eq(dmr_aura_create(&cfg, 1, 4, &l, 1000 * W, &a, NULL), DMR_OK);
	static const uint64_t ats[3] = {1, 2, 4};
	for (uint64_t k = 1; k <= 300; k++) {
		uint64_t at = ats[k % 3];
		done(a, 0, 0, (int)(2000 / at), 1, at, 10, 0); /* y = 4000 / n = 2 x at */
		dmr_aura_tick(a, k * 1000 * W);
	}
	dmr_aura_sample_t s;
	dmr_aura_sample(a, &s);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_ATOMIC], 2.0, 1e-3);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_RPC], 1.0, 1e-12);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_MOVE], 2.5, 1e-12);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_LOAD], 0.18, 1e-12); /* one CN: no imbalance */
	ck_assert_uint_eq(s.windows, 300);
	dmr_aura_destroy(a);

	a = aura(0, DMR_AURA_FIXED, 1, &l, &cfg);
	done(a, 0, 0, 10, 4, 9, 30, 0);
	dmr_aura_tick(a, W);
	dmr_aura_sample(a, &s);
	ck_assert(s.w[0] == 0.5 && s.w[1] == 1.0 && s.w[2] == 2.5 && s.w[3] == 0.18);
	dmr_aura_destroy(a);

	a = aura(0, DMR_AURA_RULE, 1, &l, &cfg);
	done(a, 0, 0, 10, 4, 9, 30, 0); /* 30 of 40 attempts aborted */
	dmr_aura_tick(a, W);
	dmr_aura_sample(a, &s);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_ATOMIC], 0.5 * 1.25, 1e-12);
	for (uint64_t k = 2; k < 40; k++) {
		done(a, 0, 0, 10, 4, 9, 30, 0);
		dmr_aura_tick(a, k * W);
	}
	dmr_aura_sample(a, &s);
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_ATOMIC], 0.5 * 16, 1e-9);
	/* one CN: imbalance 0 < 0.1, so load goes down to its floor */
	ck_assert_double_eq_tol(s.w[DMR_AURA_W_LOAD], 0.18 / 16, 1e-9);
	dmr_aura_destroy(a);
}
END_TEST

/* The admission gate of A2: on the owner CN a transaction of the owned
 * group waits behind an admitted one locking the same record, and is
 * woken when it finishes; on another CN it is not held back. */
START_TEST(a2_localized_execution_at_the_gate)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_AURA;
	cfg.window_ps = W;
	cfg.aura.levers = DMR_AURA_A2;
	cfg.aura.tuner = DMR_AURA_FIXED;
	cfg.aura.groups = 40;
	dmr_adm_t *adm;
	/* 2 CNs x 1 worker x 4 contexts */
	ck_assert_int_eq(dmr_adm_create(&cfg, &l, 2, 1, 4, &adm, NULL), DMR_OK);
	dmr_aura_t *a = dmr_adm_aura(adm);
	ck_assert_ptr_nonnull(a);
	done(a, 7, 0, 10, 1, 2, 10, 0);
	done(a, 7, 1, 90, 5, 10, 50, 0);
	dmr_aura_tick(a, W);
	uint32_t own = dmr_aura_owner(a, 7);
	ck_assert_uint_eq(own, 1); /* 7 % 2 without A4 */
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	t.nops = 1;
	t.ops[0].kind = DMR_TOP_UPDATE;
	t.ops[0].table = 0;
	t.ops[0].key = 75; /* group 7 */
	t.ops[0].dep.op = -1;
	uint32_t wake[8];
	/* CN 1 (worker 1, contexts 4..7) owns group 7 */
	ck_assert_int_eq(dmr_adm_admit(adm, 1, 4, &t, W + 1), 1);
	ck_assert_int_eq(dmr_adm_admit(adm, 1, 5, &t, W + 2), 0);
	ck_assert_int_eq(dmr_adm_admit(adm, 1, 6, &t, W + 3), 0);
	/* CN 0 does not own it: no local wait */
	ck_assert_int_eq(dmr_adm_admit(adm, 0, 0, &t, W + 4), 1);
	/* the holder finishes: both waiters are woken to re-check */
	ck_assert_uint_eq(dmr_adm_finish(adm, 1, 4, wake, 8), 2);
	ck_assert_uint_eq(wake[0], 5);
	ck_assert_uint_eq(wake[1], 6);
	ck_assert_int_eq(dmr_adm_admit(adm, 1, 5, &t, W + 5), 1);
	ck_assert_int_eq(dmr_adm_admit(adm, 1, 6, &t, W + 6), 0);
	dmr_adm_summary_t s;
	dmr_adm_summary(adm, &s);
	ck_assert_uint_eq(s.local_deferred, 3);
	ck_assert_uint_eq(s.key_deferred, 0);
	dmr_adm_destroy(adm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("aura");
	TCase *tc = tcase_create("aura");
	tcase_add_test(tc, parsers);
	tcase_add_test(tc, groups_are_range_partitions);
	tcase_add_test(tc, a2_owns_the_contended_group);
	tcase_add_test(tc, a1_by_weight);
	tcase_add_test(tc, a3_caches_read_mostly_tables);
	tcase_add_test(tc, tuners);
	tcase_add_test(tc, a2_localized_execution_at_the_gate);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
