/*
 * tests/integration/test_backend.c - the backend conformance suite: the same checks run
 * over every backend named in DMR_TEST_BACKENDS (default "sim,shm"), as UCX's
 * UCT_INSTANTIATE_TEST_CASE does. A backend that cannot open (no device)
 * is reported SKIPPED with the reason, and the process exits 77 if nothing
 * ran.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

static const char *g_backend = "sim";
#define MR_SIZE (4u << 20)

static dmr_be_t *open_be(uint32_t workers)
{
	dmr_be_config_t cfg = {.backend = g_backend, .mns = 1, .cns = 1, .workers = workers,
			       .mr_size = MR_SIZE, .profile = "cx6dx-100g", .gid_index = -1,
			       .port = 1, .device = getenv("DMR_TEST_DEVICE")};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "open %s: %s", g_backend, err.msg);
	return be;
}

/* Wait for `n` completions of worker w (driven or threaded backends). */
static int wait_wc(dmr_be_t *be, uint32_t w, dmr_wc_t *wc, int n)
{
	int got = 0;
	for (long spins = 0; got < n && spins < 200000000L; spins++) {
		if (be->ops->caps & DMR_BE_CAP_DRIVEN) {
			if (dmr_be_progress(be, UINT64_MAX) < 0)
				break;
		}
		got += dmr_be_poll(be, w, wc + got, n - got);
	}
	return got;
}

static void rw_roundtrip(uint32_t len)
{
	dmr_be_t *be = open_be(1);
	uint8_t *src = malloc(len + 1), *dst = malloc(len + 1);
	for (uint32_t i = 0; i <= len; i++) {
		src[i] = (uint8_t)(i * 7 + 3);
		dst[i] = 0xEE;
	}
	ck_assert_int_eq(dmr_be_mr_reg(be, 0, src, len + 1, NULL), DMR_OK);
	ck_assert_int_eq(dmr_be_mr_reg(be, 0, dst, len + 1, NULL), DMR_OK);
	dmr_wc_t wc[2];
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, src, 64, len, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, wc, 1), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, DMR_WR_WRITE);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 2, dst, 64, len, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, wc, 1), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 2);
	ck_assert_uint_eq(wc[0].byte_len, len);
	ck_assert_int_eq(memcmp(src, dst, len), 0);
	ck_assert_uint_eq(dst[len], 0xEE); /* nothing beyond len */
	free(src);
	free(dst);
	dmr_be_close(be);
}

/* 0 B policy: a zero-length READ/WRITE is legal (IBTA allows it), completes
 * successfully and moves no byte. */
START_TEST(rw_0_bytes) { rw_roundtrip(0); }
END_TEST
START_TEST(rw_1_byte) { rw_roundtrip(1); }
END_TEST
START_TEST(rw_4_kib) { rw_roundtrip(4096); }
END_TEST
START_TEST(rw_1_mib) { rw_roundtrip(1u << 20); }
END_TEST

START_TEST(cas_returns_old_value)
{
	dmr_be_t *be = open_be(1);
	static uint64_t v, old;
	dmr_be_mr_reg(be, 0, &v, 8, NULL);
	dmr_be_mr_reg(be, 0, &old, 8, NULL);
	dmr_wc_t wc;
	v = 41;
	dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, &v, 128, 8, 0, 0, NULL);
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
	/* success: compare matches */
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_CAS, 2, &old, 128, 8, 41, 99, NULL), DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
	ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
	ck_assert_uint_eq(old, 41);
	/* failure: compare does not match, memory unchanged, old value returned */
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_CAS, 3, &old, 128, 8, 41, 7, NULL), DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
	ck_assert_uint_eq(old, 99);
	dmr_be_post_one(be, 0, 0, DMR_WR_READ, 4, &v, 128, 8, 0, 0, NULL);
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
	ck_assert_uint_eq(v, 99);
	dmr_be_close(be);
}
END_TEST

START_TEST(faa_returns_old_value)
{
	dmr_be_t *be = open_be(1);
	static uint64_t old, v;
	dmr_be_mr_reg(be, 0, &old, 8, NULL);
	dmr_be_mr_reg(be, 0, &v, 8, NULL);
	dmr_wc_t wc;
	for (uint64_t i = 0; i < 5; i++) {
		dmr_be_post_one(be, 0, 0, DMR_WR_FAA, i, &old, 256, 8, 10, 0, NULL);
		ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
		ck_assert_uint_eq(old, 10 * i);
	}
	dmr_be_post_one(be, 0, 0, DMR_WR_READ, 9, &v, 256, 8, 0, 0, NULL);
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 1);
	ck_assert_uint_eq(v, 50);
	dmr_be_close(be);
}
END_TEST

START_TEST(unaligned_atomic_refused)
{
	dmr_be_t *be = open_be(1);
	static uint64_t old;
	dmr_err_t err;
	for (uint64_t off = 1; off < 8; off++) {
		ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_CAS, 1, &old, 64 + off, 8, 0, 1, &err),
				 DMR_ERR_INVALID);
		ck_assert_ptr_nonnull(strstr(err.msg, "aligned"));
		ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_FAA, 1, &old, 64 + off, 8, 1, 0, &err),
				 DMR_ERR_INVALID);
	}
	/* a batch with one bad WR posts nothing */
	dmr_wr_t wrs[2] = {{.wr_id = 1, .local = &old, .remote = 0, .length = 8, .opcode = DMR_WR_READ,
			    .flags = DMR_WR_SIGNALED},
			   {.wr_id = 2, .local = &old, .remote = 4, .opcode = DMR_WR_CAS,
			    .flags = DMR_WR_SIGNALED}};
	ck_assert_int_eq(dmr_be_post(be, 0, 0, wrs, 2, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "WR 1"));
	dmr_wc_t wc;
	ck_assert_int_eq(wait_wc(be, 0, &wc, 1), 0);
	dmr_be_close(be);
}
END_TEST

START_TEST(thousand_posts_thousand_completions)
{
	dmr_be_t *be = open_be(2);
	static uint64_t buf[2][64];
	dmr_be_mr_reg(be, 0, buf[0], sizeof(buf[0]), NULL);
	dmr_be_mr_reg(be, 1, buf[1], sizeof(buf[1]), NULL);
	uint8_t *seen = calloc(2000, 1);
	uint32_t got = 0;
	dmr_wc_t wc[64];
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t w = i & 1;
		ck_assert_int_eq(dmr_be_post_one(be, w, 0, i % 3 ? DMR_WR_READ : DMR_WR_FAA,
						 1000 * w + i, &buf[w][i % 64], 8 * (i % 512), 8, 1, 0,
						 NULL),
				 DMR_OK);
	}
	for (long spins = 0; got < 1000 && spins < 100000000L; spins++) {
		int w = 0;
		if (be->ops->caps & DMR_BE_CAP_DRIVEN) {
			w = dmr_be_progress(be, UINT64_MAX);
			if (w < 0)
				break;
		} else {
			w = spins & 1;
		}
		int n = dmr_be_poll(be, (uint32_t)w, wc, 64);
		for (int k = 0; k < n; k++) {
			ck_assert_int_eq(wc[k].status, DMR_WC_SUCCESS);
			ck_assert_uint_lt(wc[k].wr_id, 2000);
			ck_assert_msg(!seen[wc[k].wr_id], "wr_id %llu twice",
				      (unsigned long long)wc[k].wr_id);
			seen[wc[k].wr_id] = 1;
			got++;
		}
	}
	ck_assert_uint_eq(got, 1000);
	free(seen);
	dmr_be_close(be);
}
END_TEST

START_TEST(access_outside_mr_fails_and_flushes)
{
	dmr_be_t *be = open_be(1);
	static uint64_t buf[4];
	dmr_be_mr_reg(be, 0, buf, sizeof(buf), NULL);
	dmr_wc_t wc[2];
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 5, buf, MR_SIZE - 4, 8, 0, 0, NULL),
			 DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, wc, 1), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_REM_ACCESS_ERR);
	ck_assert_uint_eq(wc[0].wr_id, 5);
	ck_assert_str_eq(dmr_wc_status_string(wc[0].status), "remote access error");
	/* the endpoint is in error: a later WR is flushed, not executed */
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 6, buf, 0, 8, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(wait_wc(be, 0, wc, 1), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_FLUSH_ERR);
	dmr_be_close(be);
}
END_TEST


int main(void)
{
	const char *list = getenv("DMR_TEST_BACKENDS");
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list && *list ? list : "sim,shm");
	int failed = 0, ran = 0;
	for (char *save = NULL, *name = strtok_r(buf, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		g_backend = name;
		dmr_be_t *be = NULL;
		dmr_err_t err;
		dmr_be_config_t cfg = {.backend = name, .mns = 1, .cns = 1, .workers = 1,
				       .mr_size = MR_SIZE, .profile = "cx6dx-100g", .gid_index = -1,
				       .port = 1, .device = getenv("DMR_TEST_DEVICE")};
		if (dmr_be_open(&cfg, &be, &err) != DMR_OK) {
			printf("SKIPPED: backend %s: %s\n", name, err.msg);
			continue;
		}
		int driven = (be->ops->caps & DMR_BE_CAP_DRIVEN) != 0;
		dmr_be_close(be);
		Suite *s = suite_create(name);
		TCase *tc = tcase_create("conformance");
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, rw_0_bytes);
		tcase_add_test(tc, rw_1_byte);
		tcase_add_test(tc, rw_4_kib);
		tcase_add_test(tc, rw_1_mib);
		tcase_add_test(tc, cas_returns_old_value);
		tcase_add_test(tc, faa_returns_old_value);
		tcase_add_test(tc, unaligned_atomic_refused);
		tcase_add_test(tc, thousand_posts_thousand_completions);
		tcase_add_test(tc, access_outside_mr_fails_and_flushes);
		/* mn_killed_mid_run needs an MN process: verbs only (issue #3) */
		if (driven || strcmp(name, "shm") == 0)
			printf("SKIPPED: mn_killed_mid_run on %s: no separate MN process to "
			       "kill (the MN region lives in this process)\n", name);
		else
			printf("SKIPPED: mn_killed_mid_run on %s: needs an MN process; see "
			       "test_verbs (mn_killed_mid_run) and scripts/rxe-roles-check\n",
			       name);
		suite_add_tcase(s, tc);
		SRunner *sr = srunner_create(s);
		srunner_run_all(sr, CK_NORMAL);
		failed += srunner_ntests_failed(sr);
		srunner_free(sr);
		ran++;
	}
	if (!ran)
		return 77;
	return failed ? 1 : 0;
}
