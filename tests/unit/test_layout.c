/*
 * tests/unit/test_layout.c - explicit placements (core/layout.h
 * dmr_layout_pin): a cluster config's "placement" entry overrides FORD's
 * rule for its table; a table the trace lacks, a wrong count, an MN that
 * does not exist and an MN listed twice are refused, naming the table, and
 * leave the layout as it was.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "helpers/suite.h"

static void hdr(dmr_trace_hdr_t *h)
{
	memset(h, 0, sizeof(*h));
	h->version = 1;
	h->ntables = 3;
	static const char *const n[] = {"warehouse", "district", "stock"};
	for (int i = 0; i < 3; i++) {
		snprintf(h->tables[i].name, sizeof(h->tables[i].name), "%s", n[i]);
		h->tables[i].rows = 16;
		h->tables[i].payload_bytes = 16;
		h->tables[i].loaded = 8;
	}
}

START_TEST(pin_overrides_ford_rule)
{
	static dmr_trace_hdr_t h;
	static dmr_layout_t l;
	hdr(&h);
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 2, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 4, 1, &err), DMR_OK);
	/* FORD: district (t 1) on 1 with a backup on 2 */
	ck_assert_uint_eq(l.t[1].primary, 1);
	ck_assert_uint_eq(l.t[1].backup[0], 2);
	dmr_layout_pin_t p = {.table = "district", .n = 2, .mn = {3, 0}};
	ck_assert_int_eq(dmr_layout_pin(&l, &p, &err), DMR_OK);
	ck_assert_uint_eq(l.t[1].primary, 3);
	ck_assert_uint_eq(l.t[1].backup[0], 0);
	ck_assert(dmr_layout_holds(&l, 1, 3) && dmr_layout_holds(&l, 1, 0));
	ck_assert(!dmr_layout_holds(&l, 1, 1));
	/* the other tables keep FORD's rule */
	ck_assert_uint_eq(l.t[2].primary, 2);
	ck_assert_uint_eq(l.t[2].backup[0], 3);
	char buf[256];
	dmr_layout_placement(&l, buf, sizeof(buf));
	ck_assert_str_eq(buf, "mns=4 backups=1 warehouse:0/1 district:3/0 stock:2/3");
}
END_TEST

START_TEST(pin_refusals_name_the_table)
{
	static dmr_trace_hdr_t h;
	static dmr_layout_t l;
	hdr(&h);
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 2, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 1, &err), DMR_OK);
	static const struct {
		dmr_layout_pin_t p;
		const char *msg;
	} bad[] = {
	    {{.table = "orders", .n = 2, .mn = {0, 1}}, "table 'orders' is not a table"},
	    {{.table = "stock", .n = 1, .mn = {0}}, "placement.stock: 1 MNs listed"},
	    {{.table = "stock", .n = 3, .mn = {0, 1, 2}}, "placement.stock: 3 MNs listed"},
	    {{.table = "stock", .n = 2, .mn = {0, 3}}, "placement.stock: MN 3 does not exist"},
	    {{.table = "district", .n = 2, .mn = {1, 1}}, "placement.district: MN 1 listed twice"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(dmr_layout_pin(&l, &bad[i].p, &err), DMR_ERR_INVALID);
		ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "case %zu: %s", i, err.msg);
	}
	/* nothing changed */
	for (uint32_t t = 0; t < 3; t++) {
		ck_assert_uint_eq(l.t[t].primary, t % 3);
		ck_assert_uint_eq(l.t[t].backup[0], (t + 1) % 3);
	}
}
END_TEST

/* dmr_layout_load_range over every window of assorted sizes and starts
 * (whole pages, cut words, one byte) gives the bytes dmr_layout_load_mn
 * writes, on each MN of a placed layout (tables of odd record sizes: 16 +
 * 24 B, so version words fall at every offset mod 64), and again with the
 * middle table empty (it starts where the next one does); refused (-1)
 * with a hash index. */
START_TEST(load_range_matches_load_mn)
{
	static dmr_trace_hdr_t h;
	static dmr_layout_t l;
	hdr(&h);
	for (int i = 0; i < 3; i++) {
		h.tables[i].rows = 700 + 100 * (uint64_t)i;
		h.tables[i].payload_bytes = 24;
		h.tables[i].loaded = 500 + 150 * (uint64_t)i;
	}
	if (_i == 1) /* an empty table: two tables start at one offset */
		h.tables[1].rows = h.tables[1].loaded = 0;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 2, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 3, 1, &err), DMR_OK);
	uint64_t n = l.total;
	uint8_t *img = calloc(n, 1), *win = malloc(n);
	ck_assert(img && win);
	static const uint64_t sizes[] = {1, 5, 8, 13, 64, 4096, 10000};
	for (uint32_t mn = 0; mn < 3; mn++) {
		memset(img, 0, n);
		dmr_layout_load_mn(&l, mn, img);
		uint64_t words = 0;
		for (uint64_t i = 0; i < n; i++)
			words += img[i] != 0;
		if (_i == 0)
			ck_assert_uint_gt(words, 0); /* every MN holds loaded rows */
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			for (uint64_t off = 0; off < n; off += sizes[k] * 3 + 1) {
				uint64_t len = off + sizes[k] <= n ? sizes[k] : n - off;
				memset(win, 0, len);
				ck_assert_int_eq(dmr_layout_load_range(&l, mn, off, len, win), 0);
				ck_assert_msg(memcmp(win, img + off, len) == 0,
					      "MN %u bytes [%llu, +%llu) differ", mn,
					      (unsigned long long)off, (unsigned long long)len);
			}
	}
	ck_assert_int_eq(dmr_layout_index(&l, 0, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_load_range(&l, 0, 0, 8, win), -1);
	free(img);
	free(win);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	tcase_add_test(tc, pin_overrides_ford_rule);
	tcase_add_test(tc, pin_refusals_name_the_table);
	tcase_add_loop_test(tc, load_range_matches_load_mn, 0, 2);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
