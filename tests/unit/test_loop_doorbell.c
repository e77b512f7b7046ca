/*
 * tests/unit/test_loop_doorbell.c - Loop C (core/loop_doorbell.h): the
 * rule, the signal, and the stager on the sim (doorbells the backend
 * counts, completions of every staged post).
 */
#include <check.h>
#include <string.h>

#include "core/loop_doorbell.h"
#include "helpers/be.h"
#include "helpers/suite.h"
#include "models/model.h"

START_TEST(rule_moves_both_ways)
{
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	ck_assert_uint_eq(cfg.doorbell_max, 32);
	ck_assert(cfg.doorbell_util == 0.2);
	/* at or above 0.2: doubles, at most 32 */
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 1, 0.2), 2);
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 2, 0.9), 4);
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 16, 1.0), 32);
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 32, 1.0), 32);
	/* in [0.1, 0.2): kept */
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 8, 0.1), 8);
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 8, 0.19), 8);
	/* below 0.1: halves, at least 1 */
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 8, 0.099), 4);
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 1, 0.0), 1);
	cfg.doorbell_max = 5;
	ck_assert_uint_eq(dmr_doorbell_decide(&cfg, 4, 0.5), 5);
	/* a constructed signal: a loaded path for 5 windows, then an idle one */
	dmr_loop_cfg_default(&cfg);
	uint32_t b = 1, seen[11];
	for (int i = 0; i < 11; i++)
		seen[i] = b = dmr_doorbell_decide(&cfg, b, i < 5 ? 0.6 : 0.01);
	const uint32_t want[11] = {2, 4, 8, 16, 32, 16, 8, 4, 2, 1, 1};
	for (int i = 0; i < 11; i++)
		ck_assert_uint_eq(seen[i], want[i]);
}
END_TEST

START_TEST(signal_is_the_busiest_part)
{
	/* MN busy 1, 5, 2 ps of 10: 0.5 */
	const uint64_t busy[3] = {1, 5, 2};
	ck_assert(dmr_doorbell_signal(busy, 3, 0, 100, 1, 10) == 0.5);
	/* doorbells alone: 6 x 100 ps over 2 workers x 1000 ps = 0.3 */
	ck_assert(dmr_doorbell_signal(busy, 0, 6, 100, 2, 1000) == 0.3);
	ck_assert(dmr_doorbell_signal(busy, 3, 6, 100, 2, 10) > 1.0);
	/* 6 doorbells over 2 workers x 1000 ps: 0.3 beats busy 1/1000 */
	const uint64_t small[1] = {1};
	ck_assert(dmr_doorbell_signal(small, 1, 6, 100, 2, 1000) == 0.3);
	ck_assert(dmr_doorbell_signal(busy, 3, 6, 100, 2, 0) == 0.0);
}
END_TEST

static dmr_be_t *open_sim(uint32_t workers)
{
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = 1 << 20,
			       .profile = "cx6dx-100g"};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "open: %s", err.msg);
	return be;
}

static uint8_t buf[64 * 64];

/* n one-WR posts of worker 0 (READ 64 B, signaled, wr_id base + i). */
static void post_reads(dmr_doorbell_t *db, uint32_t n, uint64_t base)
{
	for (uint32_t i = 0; i < n; i++) {
		dmr_wr_t wr = {.wr_id = base + i,
			       .local = buf + 64 * i,
			       .remote = 4096 + 64 * i,
			       .length = 64,
			       .opcode = DMR_WR_READ,
			       .flags = DMR_WR_SIGNALED};
		dmr_err_t err;
		ck_assert_int_eq(dmr_doorbell_post(db, 0, 0, &wr, 1, &err), DMR_OK);
	}
}

/* Flush worker 0 at the sim's time, take every completion, and flush again
 * at the time they took (nothing left to ring: it closes the window that
 * saw the doorbells, as the engine's flush after a poll's batch does). */
static int flush_and_drain(dmr_be_t *be, dmr_doorbell_t *db, uint64_t *ids)
{
	dmr_err_t err;
	ck_assert_int_eq(dmr_doorbell_flush(db, 0, dmr_test_sim_time(be), &err), DMR_OK);
	dmr_wc_t wc[64];
	int n = dmr_test_wait_wc(be, 0, wc, 64, 0);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, DMR_WC_SUCCESS);
		ids[i] = wc[i].wr_id;
	}
	ck_assert_int_eq(dmr_doorbell_flush(db, 0, dmr_test_sim_time(be), &err), DMR_OK);
	return n;
}

START_TEST(stager_rings_batches_on_sim)
{
	dmr_be_t *be = open_sim(1);
	const dmr_model_t *m = dmr_test_model(be);
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_DOORBELL;
	cfg.window_ps = 1;	  /* every flush closes a window */
	cfg.doorbell_util = 1e-9; /* any MMIO or busy time: double */
	cfg.doorbell_max = 4;
	dmr_doorbell_t *db;
	dmr_err_t err;
	ck_assert_int_eq(dmr_doorbell_create(&cfg, be, 1, 1, 1, m->post_doorbell_ps, 1, &db, &err),
			 DMR_OK);
	uint64_t ids[64];
	/* batch 1 (the start): 3 posts ring 3 doorbells at once */
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 1);
	post_reads(db, 3, 100);
	dmr_be_stats_t bs;
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 3);
	ck_assert_int_eq(flush_and_drain(be, db, ids), 3);
	/* that flush closed a window with doorbells: batch 2 */
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 2);
	/* 4 posts at batch 2: rung in twos, the second pair by the flush */
	post_reads(db, 4, 200);
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 4); /* 3 + the first pair (the 3rd post did not fit) */
	ck_assert_int_eq(flush_and_drain(be, db, ids), 4);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(ids[i], 200 + (uint64_t)i); /* one QP: in posting order */
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 5);
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 4);
	/* batch 4 = max: 6 posts ring 4 + 2 */
	post_reads(db, 6, 300);
	ck_assert_int_eq(flush_and_drain(be, db, ids), 6);
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 7);
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 4);
	dmr_doorbell_sample_t s;
	dmr_doorbell_sample(db, &s);
	ck_assert_uint_eq(s.posts, 13);
	ck_assert_uint_eq(s.rings, 7);
	ck_assert_uint_eq(s.wrs, 13);
	ck_assert(s.batch == 4.0);
	ck_assert(s.signal > 0);
	dmr_doorbell_destroy(db);
	dmr_be_close(be);
}
END_TEST

/* The batch moves down on an idle window: start high (loaded windows),
 * then windows in which nothing is posted over a long time. */
START_TEST(stager_batch_comes_down_when_idle)
{
	dmr_be_t *be = open_sim(1);
	const dmr_model_t *m = dmr_test_model(be);
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_DOORBELL;
	cfg.window_ps = 1;
	cfg.doorbell_util = 1e-9;
	dmr_doorbell_t *db;
	dmr_err_t err;
	ck_assert_int_eq(dmr_doorbell_create(&cfg, be, 1, 1, 1, m->post_doorbell_ps, 1, &db, &err),
			 DMR_OK);
	uint64_t ids[64];
	for (int k = 0; k < 3; k++) {
		post_reads(db, 1, 10);
		ck_assert_int_eq(flush_and_drain(be, db, ids), 1);
	}
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 8);
	dmr_doorbell_summary_t sm;
	dmr_doorbell_summary(db, &sm);
	ck_assert_uint_eq(sm.up, 3);
	ck_assert_uint_eq(sm.down, 0);
	/* windows without a post, 1 s later each: signal 0 < 1e-9 / 2 */
	uint64_t t = dmr_test_sim_time(be);
	for (int k = 1; k <= 4; k++)
		ck_assert_int_eq(dmr_doorbell_flush(db, 0, t + (uint64_t)k * DMR_PS_PER_S, &err),
				 DMR_OK);
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 1);
	dmr_doorbell_summary(db, &sm);
	ck_assert_uint_eq(sm.min, 1);
	ck_assert_uint_eq(sm.max, 8);
	ck_assert_uint_eq(sm.up, 3);
	ck_assert_uint_eq(sm.down, 3); /* 8 -> 4 -> 2 -> 1, then kept at 1 */
	ck_assert_uint_eq(sm.windows, 7);
	dmr_doorbell_destroy(db);
	dmr_be_close(be);
}
END_TEST

/* Driven (one thread for every worker): a flush of worker 0 rings what
 * worker 1 staged (a loop woke one of its contexts during worker 0's
 * batch), so no staged post waits for a batch of its own worker. */
START_TEST(driven_flush_rings_every_worker)
{
	dmr_be_t *be = open_sim(2);
	const dmr_model_t *m = dmr_test_model(be);
	dmr_loop_cfg_t cfg;
	dmr_loop_cfg_default(&cfg);
	cfg.loops = DMR_LOOP_DOORBELL;
	cfg.window_ps = 1;
	cfg.doorbell_util = 1e-9;
	dmr_doorbell_t *db;
	dmr_err_t err;
	ck_assert_int_eq(dmr_doorbell_create(&cfg, be, 2, 2, 1, m->post_doorbell_ps, 1, &db, &err),
			 DMR_OK);
	uint64_t ids[64];
	post_reads(db, 1, 1);
	ck_assert_int_eq(flush_and_drain(be, db, ids), 1);
	ck_assert_uint_eq(dmr_doorbell_batch(db, 0), 2); /* the CN of both workers */
	dmr_wr_t wr = {.wr_id = 77,
		       .local = buf,
		       .remote = 8192,
		       .length = 64,
		       .opcode = DMR_WR_READ,
		       .flags = DMR_WR_SIGNALED};
	ck_assert_int_eq(dmr_doorbell_post(db, 1, 0, &wr, 1, &err), DMR_OK);
	dmr_be_stats_t bs;
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 1); /* staged on worker 1 */
	ck_assert_int_eq(dmr_doorbell_flush(db, 0, dmr_test_sim_time(be), &err), DMR_OK);
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 2);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_test_wait_wc(be, 1, &wc, 1, 0), 1);
	ck_assert_uint_eq(wc.wr_id, 77);
	dmr_doorbell_destroy(db);
	/* not driven (threaded): each worker's thread rings its own */
	ck_assert_int_eq(dmr_doorbell_create(&cfg, be, 2, 2, 1, m->post_doorbell_ps, 0, &db, &err),
			 DMR_OK);
	post_reads(db, 1, 1);
	ck_assert_int_eq(flush_and_drain(be, db, ids), 1);
	ck_assert_int_eq(dmr_doorbell_post(db, 1, 0, &wr, 1, &err), DMR_OK);
	ck_assert_int_eq(dmr_doorbell_flush(db, 0, dmr_test_sim_time(be), &err), DMR_OK);
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 3); /* worker 1's post still staged */
	ck_assert_int_eq(dmr_doorbell_flush(db, 1, dmr_test_sim_time(be), &err), DMR_OK);
	dmr_be_stats(be, &bs);
	ck_assert_uint_eq(bs.doorbells, 4);
	ck_assert_int_eq(dmr_test_wait_wc(be, 1, &wc, 1, 0), 1);
	dmr_doorbell_destroy(db);
	dmr_be_close(be);
}
END_TEST

START_TEST(parse_doorbell)
{
	unsigned v;
	dmr_err_t err;
	char nb[DMR_LOOP_NAME_MAX];
	ck_assert_int_eq(dmr_loop_parse("doorbell+aimd", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_AIMD | DMR_LOOP_DOORBELL);
	ck_assert_str_eq(dmr_loop_name(v, nb, sizeof(nb)), "aimd+doorbell");
	ck_assert_int_eq(dmr_loop_parse("doorbell+doorbell", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "named twice"));
	ck_assert_int_eq(dmr_loop_parse("aimd+doorbel", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown loop 'doorbel'"));
	ck_assert_ptr_nonnull(strstr(err.msg, "doorbell")); /* listed among the known */
	size_t n;
	const dmr_loop_info_t *t = dmr_loop_info(&n);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].bit == DMR_LOOP_DOORBELL) {
			found = 1;
			ck_assert_str_eq(t[i].name, "doorbell");
			ck_assert_ptr_nonnull(strstr(t[i].actuator, "per doorbell"));
		}
	ck_assert(found);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loop_doorbell");
	TCase *tc = tcase_create("doorbell");
	tcase_add_test(tc, rule_moves_both_ways);
	tcase_add_test(tc, signal_is_the_busiest_part);
	tcase_add_test(tc, stager_rings_batches_on_sim);
	tcase_add_test(tc, stager_batch_comes_down_when_idle);
	tcase_add_test(tc, driven_flush_rings_every_worker);
	tcase_add_test(tc, parse_doorbell);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
