/*
 * tests/unit/test_cncache.c - the CN record cache of occ, ford, farm and
 * drtmh (issue 14 lever A3, core/txn_cncache.[ch]): the cache itself (hit,
 * miss, LRU within a set, a newer version kept, drop, clear, the bounds),
 * and the protocol on shm with contexts driven by hand: a hit posts no
 * READ in execution and is validated (also a single read), a hit a writer
 * of another CN changed aborts as cache_stale and is dropped, a commit of
 * the CN drops what it wrote, the table mask read when a transaction
 * starts, every lock idle after.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/replica.h"
#include "core/txn.h"
#include "helpers/suite.h"
#include "traces/trace.h"

static void img_of(uint8_t *b, uint64_t ver, uint64_t w0)
{
	memset(b, 0, 24);
	ver |= DMR_VER_PRESENT;
	memcpy(b + 8, &ver, 8);
	memcpy(b + 16, &w0, 8);
}

static uint64_t w0_of(const uint8_t *b)
{
	uint64_t v;
	memcpy(&v, b + 16, 8);
	return v;
}

START_TEST(cache_lru_versions_bounds)
{
	dmr_cncache_t *k;
	dmr_err_t err;
	uint8_t a[24], out[24];
	/* bounds: 0 and above the maximum refused naming the option */
	ck_assert_int_eq(dmr_cncache_create(0, 24, 0, &k, &err), DMR_ERR_RANGE);
	ck_assert_msg(strstr(err.msg, "--cn-cache-entries"), "%s", err.msg);
	ck_assert_int_eq(dmr_cncache_create(DMR_CNCACHE_MAX_ENTRIES + 1, 24, 0, &k, &err),
			 DMR_ERR_RANGE);
	ck_assert_int_eq(dmr_cncache_create(8, 8, 0, &k, &err), DMR_ERR_RANGE);
	/* one set of 4 ways (5 entries: 2 sets, capacity rounded up to 8) */
	ck_assert_int_eq(dmr_cncache_create(5, 24, 1, &k, &err), DMR_OK);
	ck_assert_uint_eq(dmr_cncache_capacity(k), 8);
	dmr_cncache_destroy(k);
	ck_assert_int_eq(dmr_cncache_create(4, 24, 0, &k, &err), DMR_OK);
	ck_assert_uint_eq(dmr_cncache_capacity(k), 4);
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 0);
	for (uint64_t r = 0; r < 4; r++) {
		img_of(a, 1, 100 + r);
		dmr_cncache_put(k, 64 * (r + 1), a, 24);
	}
	ck_assert_uint_eq(dmr_cncache_size(k), 4);
	for (uint64_t r = 0; r < 4; r++) {
		ck_assert_int_eq(dmr_cncache_get(k, 64 * (r + 1), out, 24), 1);
		ck_assert_uint_eq(w0_of(out), 100 + r);
	}
	/* record 64 used again: the least recent is now 128; a fifth evicts it */
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 1);
	img_of(a, 1, 555);
	dmr_cncache_put(k, 64 * 5, a, 24);
	ck_assert_uint_eq(dmr_cncache_size(k), 4);
	ck_assert_int_eq(dmr_cncache_get(k, 128, out, 24), 0);
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 1);
	ck_assert_int_eq(dmr_cncache_get(k, 320, out, 24), 1);
	ck_assert_uint_eq(w0_of(out), 555);
	/* an older image does not replace a newer one; a newer does */
	img_of(a, 7, 7);
	dmr_cncache_put(k, 64, a, 24);
	img_of(a, 3, 3);
	dmr_cncache_put(k, 64, a, 24);
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 1);
	ck_assert_uint_eq(w0_of(out), 7);
	img_of(a, 8, 8);
	dmr_cncache_put(k, 64, a, 24);
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 1);
	ck_assert_uint_eq(w0_of(out), 8);
	dmr_cncache_drop(k, 64);
	ck_assert_int_eq(dmr_cncache_get(k, 64, out, 24), 0);
	ck_assert_uint_eq(dmr_cncache_size(k), 3);
	dmr_cncache_clear(k);
	ck_assert_uint_eq(dmr_cncache_size(k), 0);
	dmr_cncache_destroy(k);
	/* many records in a large cache: every one found (no false hit) */
	ck_assert_int_eq(dmr_cncache_create(4096, 24, 0, &k, &err), DMR_OK);
	for (uint64_t r = 0; r < 1000; r++) {
		img_of(a, 1, r);
		dmr_cncache_put(k, 4096 + 24 * r, a, 24);
	}
	uint32_t found = 0;
	for (uint64_t r = 0; r < 1000; r++)
		if (dmr_cncache_get(k, 4096 + 24 * r, out, 24)) {
			ck_assert_uint_eq(w0_of(out), r);
			found++;
		}
	ck_assert_uint_ge(found, 990); /* 1000 in 1024 sets of 4: a few conflicts at most */
	ck_assert_int_eq(dmr_cncache_get(k, 4096 + 24 * 1000, out, 24), 0);
	dmr_cncache_destroy(k);
}
END_TEST

/* Tables t0 (2 words), t1 (1 word), 16 rows each, loaded; two workers of
 * one CN on shm (WRs execute at post), one cache; `other`: a context of
 * another CN (its own engine, no cache). */
typedef struct fx {
	dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_be_t *be;
	dmr_txn_engine_t eng, eng2;
	dmr_txn_stats_t st[3];
	dmr_txn_xstats_t xs[3];
	dmr_txn_ctx_t ctx[3];
	dmr_cncache_t *tab[1];
} fx_t;

static void fx_open(fx_t *f, int proto)
{
	memset(f, 0, sizeof(*f));
	f->h.version = 1;
	f->h.ntables = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(f->h.tables[i].name, sizeof(f->h.tables[i].name), "t%d", i);
		f->h.tables[i].rows = 16;
		f->h.tables[i].payload_bytes = 8 * (2 - i);
		f->h.tables[i].loaded = 16;
	}
	f->h.ntypes = 1;
	snprintf(f->h.types[0], sizeof(f->h.types[0]), "T");
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, 3, 64 * 1024, &err), DMR_OK);
	dmr_be_config_t cfg = {.backend = "shm",
			       .mns = 1,
			       .cns = 1,
			       .workers = 3,
			       .mr_size = (f->l.total + 4095) & ~4095ull};
	ck_assert_int_eq(dmr_be_open(&cfg, &f->be, &err), DMR_OK);
	dmr_layout_load(&f->l, dmr_be_mn_memory(f->be, 0, NULL));
	ck_assert_int_eq(dmr_txn_engine_init(&f->eng, f->be, &f->l, 1, 0, &err), DMR_OK);
	f->eng.protocol = proto;
	f->eng.workers_per_cn = 2;
	ck_assert_int_eq(dmr_cncache_create(64, 32, 1, &f->tab[0], &err), DMR_OK);
	f->eng2 = f->eng; /* the other CN: no cache */
	f->eng.cncache = f->tab;
	dmr_txn_cncache_set_tables(&f->eng, 0x3);
	ck_assert_uint_eq(dmr_txn_cncache_tables(&f->eng), 0x3);
	for (uint32_t w = 0; w < 3; w++) {
		ck_assert_int_eq(
		    dmr_txn_ctx_init(&f->ctx[w], w < 2 ? &f->eng : &f->eng2, &f->st[w], w, w, &err),
		    DMR_OK);
		f->ctx[w].xstats = &f->xs[w];
	}
}

static void fx_close(fx_t *f)
{
	dmr_replica_result_t rr;
	dmr_err_t err;
	ck_assert_int_eq(dmr_replica_verify_be(&f->l, f->be, &rr, &err), DMR_OK);
	ck_assert_msg(rr.ok, "%s", rr.first_failure);
	for (int w = 0; w < 3; w++)
		dmr_txn_ctx_fini(&f->ctx[w]);
	dmr_be_close(f->be);
	dmr_cncache_destroy(f->tab[0]);
}

/* Run txn t on context w to its end (shm: each doorbell executed at post). */
static dmr_txn_outcome_t run(fx_t *f, uint32_t w, const dmr_trace_txn_t *t)
{
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_start(&f->ctx[w], t, &o), DMR_OK);
	while (o == DMR_TXN_RUNNING) {
		dmr_wc_t wc;
		if (dmr_be_poll(f->be, w, &wc, 1) == 1)
			ck_assert_int_eq(dmr_txn_on_wc(&f->ctx[w], &wc, &o), DMR_OK);
	}
	return o;
}

static uint64_t w0_read(fx_t *f, uint32_t w)
{
	return w0_of(f->ctx[w].buf + f->ctx[w].ops[0].buf);
}

/* B (ctx 1): R t0[3], R t1[0]; A: U t0[3] word 0 += v. */
static void protocol_body(int proto)
{
	static fx_t f;
	static dmr_trace_txn_t a, b, one;
	fx_open(&f, proto);
	memset(&b, 0, sizeof(b));
	b.id = 2;
	dmr_trace_txn_op(&b, 'R', 0, 0, 3);
	dmr_trace_txn_op(&b, 'R', 1, 0, 0);
	memset(&a, 0, sizeof(a));
	a.id = 1;
	dmr_trace_op_act(&a.ops[dmr_trace_txn_op(&a, 'U', 0, 0, 3)], DMR_TACT_ADD, 0, 5);
	dmr_be_stats_t b0, b1;
	const dmr_txn_xstats_t *x = &f.xs[1];
	/* 1: both miss: 2 READs in execution, 2 at validation; both put */
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st[1].reads, 4);
	ck_assert_uint_eq(x->cn_cache_misses, 2);
	ck_assert_uint_eq(x->cn_cache_hits, 0);
	ck_assert_uint_eq(dmr_cncache_size(f.tab[0]), 2);
	/* 2: both hit; validation still re-READs both headers */
	dmr_be_stats(f.be, &b0);
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	dmr_be_stats(f.be, &b1);
	ck_assert_uint_eq(x->cn_cache_hits, 2);
	ck_assert_uint_eq(x->cn_cache_hits_by_table[0], 1);
	ck_assert_uint_eq(x->cn_cache_hits_by_table[1], 1);
	ck_assert_uint_eq(f.st[1].reads, 6);
	ck_assert_uint_eq(b1.reads - b0.reads, 2);
	ck_assert_uint_eq(b1.bytes_read - b0.bytes_read, 2 * DMR_REC_HDR);
	/* 3: a writer on another CN: B's t0 hit is stale, aborts as cache_stale
	 * (dropped); the retry misses t0, hits t1, reads 5 */
	ck_assert_int_eq(run(&f, 2, &a), DMR_TXN_COMMITTED);
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st[1].aborts[DMR_ABORT_CACHE_STALE], 1);
	ck_assert_uint_eq(f.st[1].aborts[DMR_ABORT_VALIDATION], 0);
	ck_assert_uint_eq(x->cn_cache_stale_by_table[0], 1);
	ck_assert_uint_eq(x->cn_cache_hits, 2 + 2 + 1);
	ck_assert_uint_eq(x->cn_cache_misses, 3);
	ck_assert_uint_eq(w0_read(&f, 1), 5);
	/* 4: a writer on B's CN (ctx 0): its commit drops t0; B misses, reads
	 * 6, no abort */
	a.ops[0].acts[0].val.lit = 1;
	ck_assert_int_eq(run(&f, 0, &a), DMR_TXN_COMMITTED);
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st[1].aborts[DMR_ABORT_CACHE_STALE], 1);
	ck_assert_uint_eq(x->cn_cache_misses, 4);
	ck_assert_uint_eq(x->cn_cache_hits, 6);
	ck_assert_uint_eq(w0_read(&f, 1), 6);
	/* 5: a single read that hits is validated (its header READ posted) */
	memset(&one, 0, sizeof(one));
	one.id = 3;
	dmr_trace_txn_op(&one, 'R', 1, 0, 0);
	uint64_t r0 = f.st[1].reads;
	ck_assert_int_eq(run(&f, 1, &one), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(x->cn_cache_hits, 7);
	ck_assert_uint_eq(f.st[1].reads - r0, 1);
	/* ... and one of another CN changed since is stale, retried */
	memset(&a, 0, sizeof(a));
	a.id = 4;
	dmr_trace_op_act(&a.ops[dmr_trace_txn_op(&a, 'U', 1, 0, 0)], DMR_TACT_ADD, 0, 9);
	ck_assert_int_eq(run(&f, 2, &a), DMR_TXN_COMMITTED);
	ck_assert_int_eq(run(&f, 1, &one), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st[1].aborts[DMR_ABORT_CACHE_STALE], 2);
	ck_assert_uint_eq(x->cn_cache_hits, 8);
	ck_assert_uint_eq(w0_read(&f, 1), 9);
	/* 6: the mask, read when a transaction starts: t1 off, its reads READ
	 * (not counted), t0 still served */
	dmr_txn_cncache_set_tables(&f.eng, 0x1);
	uint64_t h0 = x->cn_cache_hits, m0 = x->cn_cache_misses;
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(x->cn_cache_hits, h0 + 1);
	ck_assert_uint_eq(x->cn_cache_misses, m0);
	ck_assert_uint_eq(x->cn_cache_hits_by_table[1], 6); /* t1: steps 2, 3 (twice), 4, 5, 5b */
	dmr_txn_cncache_set_tables(&f.eng, 0);
	r0 = f.st[1].reads;
	ck_assert_int_eq(run(&f, 1, &b), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(x->cn_cache_hits, h0 + 1);
	ck_assert_uint_eq(f.st[1].reads - r0, 4);
	ck_assert_uint_eq(f.st[1].locks_taken, f.st[1].locks_released);
	ck_assert_uint_eq(f.st[0].locks_taken, f.st[0].locks_released);
	fx_close(&f);
}

START_TEST(hits_validated_stale_aborts_occ)
{
	protocol_body(DMR_TXN_PROTO_OCC);
}
END_TEST

START_TEST(hits_validated_stale_aborts_ford)
{
	protocol_body(DMR_TXN_PROTO_FORD);
}
END_TEST

START_TEST(hits_validated_stale_aborts_farm_drtmh)
{
	protocol_body(DMR_TXN_PROTO_FARM);
	protocol_body(DMR_TXN_PROTO_DRTMH);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("cncache", 1, 0) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("cncache");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, cache_lru_versions_bounds);
	tcase_add_test(tc, hits_validated_stale_aborts_occ);
	tcase_add_test(tc, hits_validated_stale_aborts_ford);
	tcase_add_test(tc, hits_validated_stale_aborts_farm_drtmh);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
