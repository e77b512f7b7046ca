/*
 * tests/unit/test_loop.c - admission control loops (core/loop.h).
 */
#include <check.h>
#include <string.h>

#include "core/loop.h"
#include "helpers/suite.h"

static dmr_layout_t layout(void)
{
	dmr_trace_hdr_t h;
	memset(&h, 0, sizeof(h));
	h.ntables = 1;
	h.tables[0].rows = 100;
	h.tables[0].payload_bytes = 8;
	h.tables[0].loaded = 100;
	dmr_layout_t l;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 4, 4096, NULL), DMR_OK);
	return l;
}

/* An AIMD loop (additive step 1) over one CN with one worker and `coros`
 * contexts; cfg is filled with its configuration. */
static dmr_adm_t *aimd(dmr_loop_cfg_t *cfg, const dmr_layout_t *l, uint32_t coros)
{
	dmr_loop_cfg_default(cfg);
	cfg->loops = DMR_LOOP_AIMD;
	cfg->ai_step = 1;
	dmr_adm_t *a;
	ck_assert_int_eq(dmr_adm_create(cfg, l, 1, 1, coros, &a, NULL), DMR_OK);
	return a;
}

START_TEST(parse_loops)
{
	unsigned v;
	dmr_err_t err;
	ck_assert_int_eq(dmr_loop_parse("none", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(dmr_loop_parse("aimd+perkey", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_AIMD | DMR_LOOP_PERKEY);
	char nb[DMR_LOOP_NAME_MAX];
	ck_assert_str_eq(dmr_loop_name(v, nb, sizeof(nb)), "aimd+perkey");
	/* any order in, the table's order out */
	ck_assert_int_eq(dmr_loop_parse("perkey+aimd", &v, &err), DMR_OK);
	ck_assert_str_eq(dmr_loop_name(v, nb, sizeof(nb)), "aimd+perkey");
	ck_assert_int_eq(dmr_loop_parse("aimd-worker", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_AIMD_WORKER);
	ck_assert_str_eq(dmr_loop_name(0, nb, sizeof(nb)), "none");
	ck_assert_int_eq(dmr_loop_parse("aimd+bogus", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "'bogus'"));
	ck_assert_ptr_nonnull(strstr(err.msg, "aimd-worker")); /* the known ones listed */
	ck_assert_int_eq(dmr_loop_parse("aimd+perkey+aurora", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown loop 'aurora'"));
	/* issue 14 item 6: the loops compose */
	ck_assert_int_eq(dmr_loop_parse("aura+perkey+aimd", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_AIMD | DMR_LOOP_PERKEY | DMR_LOOP_AURA);
	ck_assert_str_eq(dmr_loop_name(v, nb, sizeof(nb)), "aimd+perkey+aura");
	ck_assert_int_eq(dmr_loop_parse("aimd++perkey", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty part"));
	ck_assert_int_eq(dmr_loop_parse("aimd+", &v, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_loop_parse("perkey+perkey", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "named twice"));
	ck_assert_int_eq(dmr_loop_parse("aimd+aimd-worker", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "pick one"));
	/* a command lists its own loops: run's without prefetch, kv run's
	 * prefetch alone; a known loop outside them is the caller's to refuse */
	ck_assert_int_eq(dmr_loop_parse_for("bogus", DMR_LOOP_TXN, &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "aura"));
	ck_assert_ptr_null(strstr(err.msg, "prefetch"));
	ck_assert_int_eq(dmr_loop_parse_for("bogus", DMR_LOOP_PREFETCH, &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "(none or prefetch)"));
	ck_assert_ptr_null(strstr(err.msg, "aimd"));
	ck_assert_int_eq(dmr_loop_parse("none+aimd", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "none stands alone"));
	ck_assert_int_eq(dmr_loop_parse_for("prefetch", DMR_LOOP_TXN, &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_PREFETCH);
	/* every loop of the table has its four parts */
	size_t n;
	const dmr_loop_info_t *li = dmr_loop_info(&n);
	ck_assert_uint_ge(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(dmr_loop_parse(li[i].name, &v, &err), DMR_OK);
		ck_assert_uint_eq(v, li[i].bit);
		ck_assert(li[i].signal && li[i].actuator && li[i].window && li[i].constraint);
	}
}
END_TEST

START_TEST(aimd_decreases_on_aborts_and_increases_after)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_adm_t *a = aimd(&cfg, &l, 8);
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_txn_stats_t ws;
	memset(&ws, 0, sizeof(ws));
	uint32_t wake[8];
	/* 8 contexts admitted at the start (limit = coros) */
	for (uint32_t c = 0; c < 8; c++)
		ck_assert_int_eq(dmr_adm_admit(a, 0, c, &t, 0), 1);
	/* a window with 90 % aborts: 8 -> 4 */
	ws.tried = 100;
	ws.aborts[DMR_ABORT_LOCK] = 90;
	ck_assert_uint_eq(dmr_adm_tick(a, 0, cfg.window_ps, &ws, wake, 8), 0);
	dmr_adm_sample_t s;
	dmr_adm_sample(a, 0, &s);
	ck_assert_double_eq_tol(s.signal, 0.9, 1e-9);
	ck_assert_double_eq(s.actuator, 4);
	ck_assert_uint_eq(s.decreases, 1);
	/* 8 running > limit 4: the first finishes free no slot */
	ck_assert_uint_eq(dmr_adm_finish(a, 0, 0, wake, 8), 0);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &t, 0), 0); /* 7 active >= 4 */
	for (uint32_t c = 1; c < 5; c++)
		dmr_adm_finish(a, 0, c, wake, 8);
	/* 3 active (5, 6, 7) < 4: ctx 0 was queued and is admitted on retry */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &t, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 1, &t, 0), 0);
	dmr_adm_destroy(a);
}
END_TEST

START_TEST(aimd_limits_concurrency)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_adm_t *a = aimd(&cfg, &l, 4);
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_txn_stats_t ws;
	memset(&ws, 0, sizeof(ws));
	uint32_t wake[8];
	ws.tried = 10;
	ws.aborts[DMR_ABORT_LOCK] = 10;
	dmr_adm_tick(a, 0, cfg.window_ps, &ws, wake, 8); /* 4 -> 2 */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &t, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 1, &t, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 2, &t, 0), 0); /* deferred */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 3, &t, 0), 0);
	uint32_t n = dmr_adm_finish(a, 0, 0, wake, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(wake[0], 2); /* FIFO */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 2, &t, 0), 1);
	/* a clean window: additive increase 2 -> 3 wakes ctx 3 */
	ws.tried = 20;
	n = dmr_adm_tick(a, 0, 2 * cfg.window_ps, &ws, wake, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(wake[0], 3);
	dmr_adm_destroy(a);
}
END_TEST

START_TEST(perkey_defers_only_hot_conflicts)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_PERKEY;
	dmr_adm_t *a;
	ck_assert_int_eq(dmr_adm_create(&cfg, &l, 2, 2, 2, &a, NULL), DMR_OK);
	static dmr_trace_txn_t hot, other;
	memset(&hot, 0, sizeof(hot));
	memset(&other, 0, sizeof(other));
	dmr_trace_txn_op(&hot, 'U', 0, 0, 7);
	dmr_trace_txn_op(&other, 'U', 0, 0, 8);
	uint32_t wake[8];
	/* not hot yet: two holders of record 7 are admitted */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &hot, 10), 1);
	dmr_adm_lock_failed(a, 0, dmr_layout_rec(&l, 0, 7), 10);
	/* now hot and held on this CN: a third is deferred, others go on */
	ck_assert_int_eq(dmr_adm_admit(a, 1, 2, &hot, 20), 0);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 1, &other, 20), 1);
	ck_assert_uint_eq(dmr_adm_finish(a, 0, 1, wake, 8), 0);
	/* the holder finishes: the deferred one is woken */
	ck_assert_uint_eq(dmr_adm_finish(a, 0, 0, wake, 8), 1);
	ck_assert_uint_eq(wake[0], 2);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 2, &hot, 30), 1);
	/* after the hot period, no deferral */
	ck_assert_int_eq(dmr_adm_admit(a, 1, 3, &hot, 30 + 3 * cfg.window_ps), 1);
	dmr_adm_destroy(a);
}
END_TEST

/* D9: perkey's actuator in the time series is what loop.h documents: the
 * records hot now (not the deferrals since the last sample). */
START_TEST(perkey_actuator_is_hot_records)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_PERKEY;
	dmr_adm_t *a;
	ck_assert_int_eq(dmr_adm_create(&cfg, &l, 2, 2, 4, &a, NULL), DMR_OK);
	static dmr_trace_txn_t hot;
	memset(&hot, 0, sizeof(hot));
	dmr_trace_txn_op(&hot, 'U', 0, 0, 7);
	dmr_adm_sample_t s;
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &hot, 10), 1);
	dmr_adm_sample(a, 10, &s);
	ck_assert_double_eq(s.actuator, 0); /* nothing hot yet */
	dmr_adm_lock_failed(a, 0, dmr_layout_rec(&l, 0, 7), 10);
	dmr_adm_sample(a, 11, &s);
	ck_assert_double_eq(s.actuator, 1); /* record 7 hot, nothing deferred */
	ck_assert_uint_eq(s.deferred, 0);
	/* two deferred on that one record: still one hot record */
	ck_assert_int_eq(dmr_adm_admit(a, 1, 4, &hot, 20), 0);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 5, &hot, 20), 0);
	dmr_adm_sample(a, 21, &s);
	ck_assert_double_eq(s.actuator, 1);
	ck_assert_uint_eq(s.deferred, 2);
	/* after the hot period: none */
	dmr_adm_sample(a, 10 + cfg.hot_windows * cfg.window_ps, &s);
	ck_assert_double_eq(s.actuator, 0);
	dmr_adm_destroy(a);
}
END_TEST

/* Loop A per CN: 2 CNs x 2 workers x 2 contexts; the slots of a CN are
 * shared by its workers (a slot freed on worker 0 wakes a context of worker
 * 1), the signal is the sum over the CN's workers, the other CN is apart. */
START_TEST(aimd_slots_are_per_cn)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_AIMD;
	dmr_adm_t *a;
	ck_assert_int_eq(dmr_adm_create(&cfg, &l, 4, 2, 2, &a, NULL), DMR_OK);
	ck_assert_uint_eq(dmr_adm_ncn(a), 2);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 4);
	dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_txn_stats_t w0, w1;
	memset(&w0, 0, sizeof(w0));
	memset(&w1, 0, sizeof(w1));
	uint32_t wake[8];
	/* CN 0: worker 0 60 % aborts, worker 1 40 %: together 50 % is not above
	 * the threshold 0.5 ... */
	w0.tried = 10;
	w0.aborts[DMR_ABORT_LOCK] = 6;
	w1.tried = 10;
	w1.aborts[DMR_ABORT_LOCK] = 4;
	ck_assert_uint_eq(dmr_adm_tick(a, 0, 10, &w0, wake, 8), 0); /* window open */
	ck_assert_uint_eq(dmr_adm_tick(a, 1, cfg.window_ps, &w1, wake, 8), 0);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 4); /* AI at the bound: no move */
	/* ... 12 of 20 more in the next window is: 4 -> 2 */
	w0.tried += 10;
	w0.aborts[DMR_ABORT_LOCK] += 9;
	w1.tried += 10;
	w1.aborts[DMR_ABORT_LOCK] += 3;
	dmr_adm_tick(a, 0, cfg.window_ps + 1, &w0, wake, 8);
	dmr_adm_tick(a, 1, 2 * cfg.window_ps, &w1, wake, 8);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 2);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 1), 4); /* CN 1 saw nothing */
	/* two slots on CN 0: contexts of workers 0 and 1 share them */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &t, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 2, &t, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 3, &t, 0), 0);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 1, &t, 0), 0);
	/* CN 1 is not gated by CN 0's limit */
	for (uint32_t c = 4; c < 8; c++)
		ck_assert_int_eq(dmr_adm_admit(a, 2 + (c - 4) / 2, c, &t, 0), 1);
	/* worker 0 finishes: the first waiter of the CN, worker 1's ctx 3 */
	ck_assert_uint_eq(dmr_adm_finish(a, 0, 0, wake, 8), 1);
	ck_assert_uint_eq(wake[0], 3);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 3, &t, 0), 1);
	/* a window without attempts decides nothing; then a clean one on
	 * CN 0: 2 -> 4 wakes ctx 1 (two slots free, one waiter) */
	dmr_adm_tick(a, 0, 3 * cfg.window_ps, &w0, wake, 8);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 2);
	ck_assert_uint_eq(dmr_adm_tick(a, 1, 3 * cfg.window_ps, &w1, wake, 8), 0);
	w0.tried += 5;
	ck_assert_uint_eq(dmr_adm_tick(a, 0, 4 * cfg.window_ps, &w0, wake, 8), 1);
	ck_assert_uint_eq(wake[0], 1);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 4);
	dmr_adm_summary_t sm;
	dmr_adm_summary(a, &sm);
	ck_assert_uint_eq(sm.min, 2);
	ck_assert_uint_eq(sm.max, 4);
	ck_assert_uint_eq(sm.cap, 4);
	ck_assert_uint_eq(sm.down, 1);
	ck_assert_uint_eq(sm.up, 1);
	dmr_adm_destroy(a);
}
END_TEST

/* aimd+perkey: a transaction perkey defers gives its CN slot back. */
START_TEST(aimd_perkey_compose)
{
	dmr_layout_t l = layout();
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	ck_assert_int_eq(dmr_loop_parse("perkey+aimd", &cfg.loops, NULL), DMR_OK);
	dmr_adm_t *a;
	ck_assert_int_eq(dmr_adm_create(&cfg, &l, 2, 2, 1, &a, NULL), DMR_OK);
	static dmr_trace_txn_t hot;
	memset(&hot, 0, sizeof(hot));
	dmr_trace_txn_op(&hot, 'U', 0, 0, 7);
	dmr_txn_stats_t ws;
	memset(&ws, 0, sizeof(ws));
	uint32_t wake[4];
	/* MD to 1 slot on the CN */
	ws.tried = 10;
	ws.aborts[DMR_ABORT_LOCK] = 10;
	dmr_adm_tick(a, 0, cfg.window_ps, &ws, wake, 4);
	ck_assert_uint_eq(dmr_adm_cn_slots(a, 0), 1);
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &hot, 10), 1);
	dmr_adm_lock_failed(a, 0, dmr_layout_rec(&l, 0, 7), 10);
	/* worker 1's ctx waits for the slot */
	ck_assert_int_eq(dmr_adm_admit(a, 1, 1, &hot, 20), 0);
	/* the holder finishes: ctx 1 woken (the slot), then admitted since
	 * the hot record is free */
	ck_assert_uint_eq(dmr_adm_finish(a, 0, 0, wake, 4), 1);
	ck_assert_uint_eq(wake[0], 1);
	ck_assert_int_eq(dmr_adm_admit(a, 1, 1, &hot, 30), 1);
	/* ctx 0 again: no slot */
	ck_assert_int_eq(dmr_adm_admit(a, 0, 0, &hot, 40), 0);
	dmr_adm_destroy(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("admission");
	tcase_add_test(tc, parse_loops);
	tcase_add_test(tc, aimd_decreases_on_aborts_and_increases_after);
	tcase_add_test(tc, aimd_limits_concurrency);
	tcase_add_test(tc, perkey_defers_only_hot_conflicts);
	tcase_add_test(tc, perkey_actuator_is_hot_records);
	tcase_add_test(tc, aimd_slots_are_per_cn);
	tcase_add_test(tc, aimd_perkey_compose);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
