/*
 * tests/unit/test_kv_prefetch.c - Loop X's predictor, buffers and rule
 * (core/kv/prefetch.h) and the pool's prefetch lookup (dmr_kv_pool_touch).
 */
#include <check.h>
#include <string.h>

#include "core/kv/pool.h"
#include "core/kv/prefetch.h"
#include "core/loop.h"
#include "helpers/suite.h"

START_TEST(rule_moves_both_ways)
{
	dmr_kv_pf_cfg_t c;
	dmr_kv_pf_cfg_default(&c);
	ck_assert_uint_eq(c.max_depth, 8);
	ck_assert_uint_eq(c.buffer, 64);
	/* the first window has nothing to compare with: kept */
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 0, 0.5, -1, 0, 0), 0);
	/* the hit ratio fell: one deeper, at most 8 */
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 0, 0.4, 0.5, 0, 0), 1);
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 7, 0.1, 0.2, 10, 0), 8);
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 8, 0.1, 0.2, 0, 0), 8);
	/* not fallen, prefetches mostly wasted: one shallower, at least 0 */
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 3, 0.5, 0.5, 10, 4), 2);
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 0, 0.6, 0.5, 10, 0), 0);
	/* not fallen, used at least half: kept */
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 3, 0.6, 0.5, 10, 5), 3);
	ck_assert_uint_eq(dmr_kv_pf_decide(&c, 3, 0.6, 0.5, 0, 0), 3);
	/* a constructed signal through dmr_kv_pf_window: the hit ratio falls
	 * three windows in a row (0.9, 0.8, 0.7, 0.6), then holds with no
	 * prefetch issued (kept) */
	dmr_kv_pf_t *pf;
	ck_assert_int_eq(dmr_kv_pf_create(&c, 1, &pf, NULL), DMR_OK);
	uint64_t req = 0, hit = 0;
	const double h[6] = {0.9, 0.8, 0.7, 0.6, 0.6, 0.6};
	const uint32_t want[6] = {0, 1, 2, 3, 3, 3};
	for (int i = 0; i < 6; i++) {
		req += 1000;
		hit += (uint64_t)(h[i] * 1000 + 0.5);
		ck_assert_uint_eq(dmr_kv_pf_window(pf, req, hit), want[i]);
	}
	/* a window without requests decides nothing */
	ck_assert_uint_eq(dmr_kv_pf_window(pf, req, hit), 3);
	/* 4 prefetches issued, none used, the ratio steady: down to 2, 1 */
	for (uint64_t id = 100; id < 104; id++)
		dmr_kv_pf_issue(pf, 0, id);
	req += 1000;
	hit += 600;
	ck_assert_uint_eq(dmr_kv_pf_window(pf, req, hit), 2);
	dmr_kv_pf_issue(pf, 0, 104);
	req += 1000;
	hit += 700;
	ck_assert_uint_eq(dmr_kv_pf_window(pf, req, hit), 1);
	dmr_kv_pf_stats_t s;
	dmr_kv_pf_stats(pf, 0, &s);
	ck_assert_uint_eq(s.up, 3);
	ck_assert_uint_eq(s.down, 2);
	ck_assert_uint_eq(s.windows, 8);
	ck_assert_uint_eq(s.max_seen, 3);
	ck_assert(s.signal == 0.7);
	dmr_kv_pf_destroy(pf);
}
END_TEST

START_TEST(predict_follows_the_latest_chain)
{
	dmr_kv_pf_cfg_t c;
	dmr_kv_pf_cfg_default(&c);
	dmr_kv_pf_t *pf;
	ck_assert_int_eq(dmr_kv_pf_create(&c, 2, &pf, NULL), DMR_OK);
	const uint64_t a[5] = {1, 2, 3, 4, 5};
	ck_assert_int_eq(dmr_kv_pf_learn(pf, a, 5), 0);
	uint64_t out[8];
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 2, 2, out), 2);
	ck_assert_uint_eq(out[0], 3);
	ck_assert_uint_eq(out[1], 4);
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 2, 8, out), 3); /* 3, 4, 5: the chain ends */
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 5, 8, out), 0);
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 99, 8, out), 0);
	/* a later chain through 2 goes elsewhere: the latest wins */
	const uint64_t b[3] = {2, 7, 8};
	ck_assert_int_eq(dmr_kv_pf_learn(pf, b, 3), 0);
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 1, 8, out), 3);
	ck_assert_uint_eq(out[0], 2);
	ck_assert_uint_eq(out[1], 7);
	ck_assert_uint_eq(out[2], 8);
	/* a cycle stops the prediction */
	const uint64_t cyc[3] = {20, 21, 20};
	ck_assert_int_eq(dmr_kv_pf_learn(pf, cyc, 3), 0);
	ck_assert_uint_eq(dmr_kv_pf_predict(pf, 20, 8, out), 1);
	/* many chains: the map grows, every successor kept */
	for (uint64_t i = 1000; i < 50000; i++) {
		uint64_t ch[2] = {i, i + 1000000};
		ck_assert_int_eq(dmr_kv_pf_learn(pf, ch, 2), 0);
	}
	for (uint64_t i = 1000; i < 50000; i += 997) {
		ck_assert_uint_eq(dmr_kv_pf_predict(pf, i, 1, out), 1);
		ck_assert_uint_eq(out[0], i + 1000000);
	}
	dmr_kv_pf_destroy(pf);
}
END_TEST

START_TEST(buffer_counts_used_and_wasted)
{
	dmr_kv_pf_cfg_t c;
	dmr_kv_pf_cfg_default(&c);
	c.buffer = 3;
	dmr_kv_pf_t *pf;
	ck_assert_int_eq(dmr_kv_pf_create(&c, 2, &pf, NULL), DMR_OK);
	dmr_kv_pf_issue(pf, 0, 10);
	ck_assert(dmr_kv_pf_holds(pf, 0, 10));
	ck_assert(!dmr_kv_pf_holds(pf, 1, 10));		/* per client */
	ck_assert_int_eq(dmr_kv_pf_take(pf, 0, 10), 0); /* issued, not ready */
	dmr_kv_pf_ready(pf, 0, 10);
	ck_assert_int_eq(dmr_kv_pf_take(pf, 0, 10), 1);
	ck_assert_int_eq(dmr_kv_pf_take(pf, 0, 10), 1); /* served again, counted once */
	ck_assert_int_eq(dmr_kv_pf_take(pf, 1, 10), 0);
	dmr_kv_pf_issue(pf, 0, 11);
	dmr_kv_pf_issue(pf, 0, 12);
	dmr_kv_pf_issue(pf, 0, 13); /* pushes 10 out: it was used */
	ck_assert(!dmr_kv_pf_holds(pf, 0, 10));
	dmr_kv_pf_issue(pf, 0, 14); /* pushes 11 out: wasted */
	dmr_kv_pf_stats_t s;
	dmr_kv_pf_stats(pf, 0, &s);
	ck_assert_uint_eq(s.issued, 5);
	ck_assert_uint_eq(s.used, 1);
	ck_assert_uint_eq(s.wasted, 1);
	dmr_kv_pf_stats(pf, 1, &s); /* + 12, 13, 14 unused in the buffer */
	ck_assert_uint_eq(s.wasted, 4);
	ck_assert_uint_eq(s.issued, s.used + s.wasted);
	dmr_kv_pf_destroy(pf);
}
END_TEST

START_TEST(pool_touch_is_not_a_request)
{
	dmr_kv_pool_t p;
	memset(&p, 0, sizeof(p));
	dmr_kv_pool_cfg_t cfg = {.segments = 1,
				 .block = 4096,
				 .capacity = 4 * 4096,
				 .high_water = 1.0,
				 .low_water = 0.5,
				 .name = "t"};
	uint64_t logical;
	ck_assert_int_eq(dmr_kv_pool_init(&p, &cfg, &logical, NULL), DMR_OK);
	dmr_kv_hit_t k;
	uint32_t e1, e2, ei;
	ck_assert_int_eq(dmr_kv_pool_lookup(&p, 1, &k, &e1, NULL), DMR_OK);
	ck_assert_int_eq(k, DMR_KV_PUT);
	/* PENDING: not prefetchable */
	ck_assert_int_eq(dmr_kv_pool_touch(&p, 1, &ei), 0);
	dmr_kv_pool_release(&p, e1, 1);
	ck_assert_int_eq(dmr_kv_pool_lookup(&p, 2, &k, &e2, NULL), DMR_OK);
	dmr_kv_pool_release(&p, e2, 1);
	uint64_t req = p.requested, hits = p.hits;
	ck_assert_int_eq(dmr_kv_pool_touch(&p, 1, &ei), 1);
	ck_assert_uint_eq(ei, e1);
	ck_assert_uint_eq(p.e[e1].pins, 1);
	ck_assert_int_eq(dmr_kv_pool_touch(&p, 77, &ei), 0); /* absent: nothing allocated */
	ck_assert_uint_eq(p.requested, req);
	ck_assert_uint_eq(p.hits, hits);
	/* block 1 is now the most recent: 2 is evicted first */
	ck_assert_uint_eq(p.lru_tail, e1);
	dmr_kv_pool_release(&p, e1, 0);
	uint64_t pinned;
	ck_assert(dmr_kv_pool_consistent(&p, &pinned, NULL));
	ck_assert_uint_eq(pinned, 0);
	dmr_kv_pool_fini(&p);
}
END_TEST

START_TEST(parse_prefetch)
{
	unsigned v;
	dmr_err_t err;
	char nb[DMR_LOOP_NAME_MAX];
	ck_assert_int_eq(dmr_loop_parse("prefetch", &v, &err), DMR_OK);
	ck_assert_uint_eq(v, DMR_LOOP_PREFETCH);
	ck_assert_str_eq(dmr_loop_name(v, nb, sizeof(nb)), "prefetch");
	ck_assert_uint_eq(v & DMR_LOOP_TXN, 0);
	ck_assert_int_eq(dmr_loop_parse("prefech", &v, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "prefetch")); /* listed among the known */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kv_prefetch");
	TCase *tc = tcase_create("prefetch");
	tcase_add_test(tc, rule_moves_both_ways);
	tcase_add_test(tc, predict_follows_the_latest_chain);
	tcase_add_test(tc, buffer_counts_used_and_wasted);
	tcase_add_test(tc, pool_touch_is_not_a_request);
	tcase_add_test(tc, parse_prefetch);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
