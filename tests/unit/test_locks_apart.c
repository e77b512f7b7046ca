/*
 * tests/unit/test_locks_apart.c - lock words apart from their records
 * (issue 16 item 3; core/layout.h dmr_layout_locks, --locks-apart, verbs
 * --dm-locks): the layout, the occ protocol driven by hand on the sim with
 * every lock word in the lock-word region (the lock CAS, the READ of a
 * locked record, validation's check of a read record's lock, a replayed
 * CAS, the release), the replica check of the region's words, and the
 * verbs backend's device-memory refusals as functions (no device with
 * device memory is needed for them).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/replica.h"
#include "core/txn.h"
#include "helpers/suite.h"
#ifdef DMR_HAVE_VERBS
#include "backends/verbs/verbs.h"
#endif

typedef struct fixture {
	dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_be_t *be;
	dmr_txn_engine_t eng;
	dmr_txn_stats_t st;
	dmr_txn_ctx_t ctx[2];
	uint8_t *mem;
} fixture_t;

/* One table t of 16 records of 16 payload bytes (8 loaded), its lock
 * words apart; `workers` contexts. */
static void fx_init(fixture_t *f, uint32_t workers)
{
	memset(f, 0, sizeof(*f));
	f->h.version = 1;
	f->h.ntables = 1;
	snprintf(f->h.tables[0].name, sizeof(f->h.tables[0].name), "t");
	f->h.tables[0].rows = 16;
	f->h.tables[0].payload_bytes = 16;
	f->h.tables[0].loaded = 8;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, workers, 4096, &err), DMR_OK);
	const uint8_t apart[DMR_TRACE_MAX_TABLES] = {1};
	ck_assert_int_eq(dmr_layout_locks(&f->l, apart, &err), DMR_OK);
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = (f->l.total + 4095) & ~4095ull,
			       .profile = "cx6dx-100g"};
	ck_assert_int_eq(dmr_be_open(&cfg, &f->be, &err), DMR_OK);
	f->mem = dmr_be_mn_memory(f->be, 0, NULL);
	dmr_layout_load(&f->l, f->mem);
	f->eng.be = f->be;
	f->eng.layout = &f->l;
	for (uint32_t i = 0; i < workers; i++)
		ck_assert_int_eq(dmr_txn_ctx_init(&f->ctx[i], &f->eng, &f->st, i, i, &err), DMR_OK);
}

static void fx_fini(fixture_t *f, uint32_t workers)
{
	for (uint32_t i = 0; i < workers; i++)
		dmr_txn_ctx_fini(&f->ctx[i]);
	dmr_be_close(f->be);
}

/* Word w of record slot (0: the header's lock word, 1: version, 2..:
 * payload). */
static uint64_t word(fixture_t *f, uint64_t slot, int w)
{
	uint64_t v;
	memcpy(&v, f->mem + dmr_layout_rec(&f->l, 0, slot) + 8 * w, 8);
	return v;
}

/* The lock word of record slot in the lock-word region. */
static uint8_t *lockp(fixture_t *f, uint64_t slot)
{
	return f->mem + dmr_layout_lock_of(&f->l, 0, dmr_layout_rec(&f->l, 0, slot));
}

static uint64_t lockv(fixture_t *f, uint64_t slot)
{
	uint64_t v;
	memcpy(&v, lockp(f, slot), 8);
	return v;
}

static int start(dmr_txn_ctx_t *c, const dmr_trace_txn_t *t)
{
	dmr_txn_outcome_t out = DMR_TXN_RUNNING;
	ck_assert_int_eq(dmr_txn_start(c, t, &out), DMR_OK);
	return (int)out;
}

static void drive(fixture_t *f, int *out, uint32_t n)
{
	dmr_wc_t wc[16];
	int w;
	while ((w = dmr_be_progress(f->be, UINT64_MAX)) >= 0) {
		int k = dmr_be_poll(f->be, (uint32_t)w, wc, 16);
		for (int i = 0; i < k; i++) {
			uint32_t ci = dmr_wrid_index(wc[i].wr_id);
			ck_assert_uint_lt(ci, n);
			dmr_txn_outcome_t o = DMR_TXN_RUNNING;
			ck_assert_int_eq(dmr_txn_on_wc(&f->ctx[ci], &wc[i], &o), DMR_OK);
			if (o != DMR_TXN_RUNNING)
				out[ci] = (int)o;
		}
	}
}

static void update_txn(dmr_trace_txn_t *t, uint64_t slot, int64_t add)
{
	memset(t, 0, sizeof(*t));
	int i = dmr_trace_txn_op(t, 'U', 0, 0, (int64_t)slot);
	dmr_trace_op_act(&t->ops[i], DMR_TACT_ADD, 0, add);
}

/* The region after everything else, 64-byte aligned, 8 bytes a record;
 * tables not chosen keep their words in the records. */
START_TEST(layout_places_the_region_after_everything)
{
	static dmr_trace_hdr_t h;
	memset(&h, 0, sizeof(h));
	h.ntables = 3;
	for (int i = 0; i < 3; i++) {
		snprintf(h.tables[i].name, sizeof(h.tables[i].name), "t%d", i);
		h.tables[i].rows = 10 + i;
		h.tables[i].payload_bytes = 8;
	}
	static dmr_layout_t l;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 2, 4096, &err), DMR_OK);
	uint64_t total = l.total;
	uint8_t none[DMR_TRACE_MAX_TABLES] = {0};
	ck_assert_int_eq(dmr_layout_locks(&l, none, &err), DMR_ERR_INVALID);
	ck_assert_uint_eq(l.total, total); /* unchanged */
	ck_assert_uint_eq(l.lk_bytes, 0);
	uint8_t sel[DMR_TRACE_MAX_TABLES] = {1, 0, 1};
	ck_assert_int_eq(dmr_layout_locks(&l, sel, &err), DMR_OK);
	ck_assert_uint_eq(l.lk_base, (total + 63) & ~63ull);
	ck_assert_uint_eq(l.t[0].lock_base, l.lk_base);
	ck_assert_uint_eq(l.t[1].lock_base, 0);
	ck_assert_uint_eq(l.t[2].lock_base, l.lk_base + 128); /* 80 bytes, aligned */
	ck_assert_uint_eq(l.lk_bytes, 128 + 128);	      /* 96 bytes, aligned */
	ck_assert_uint_eq(l.total, l.lk_base + l.lk_bytes);
	/* record 7 of t2 -> its word; t1's words stay in the record */
	ck_assert_uint_eq(dmr_layout_lock_of(&l, 2, dmr_layout_rec(&l, 2, 7)),
			  l.t[2].lock_base + 56);
	ck_assert_uint_eq(dmr_layout_lock_of(&l, 1, dmr_layout_rec(&l, 1, 7)),
			  dmr_layout_rec(&l, 1, 7));
}
END_TEST

/* An update takes the lock in the region (the header's word is never
 * written), writes back once, releases it. */
START_TEST(update_locks_and_releases_the_word_apart)
{
	fixture_t f;
	fx_init(&f, 1);
	static dmr_trace_txn_t t;
	update_txn(&t, 3, 5);
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	/* after the execution doorbell: the word apart holds the tag */
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_progress(f.be, UINT64_MAX), 0);
	ck_assert_int_eq(dmr_be_poll(f.be, 0, &wc, 1), 1);
	ck_assert_uint_eq(lockv(&f, 3), f.ctx[0].tag);
	ck_assert_uint_eq(word(&f, 3, 0), 0);
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_on_wc(&f.ctx[0], &wc, &o), DMR_OK);
	int out[1] = {-1};
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(lockv(&f, 3), 0);
	ck_assert_uint_eq(word(&f, 3, 0), 0);
	ck_assert_uint_eq(word(&f, 3, 1), DMR_VER_PRESENT | 2);
	ck_assert_uint_eq(word(&f, 3, 2), 5);
	ck_assert_uint_eq(f.st.locks_taken, 1);
	ck_assert_uint_eq(f.st.locks_released, 1);
	ck_assert_uint_eq(f.st.atomics, 1);
	ck_assert_uint_eq(f.st.reads, 2); /* the record and its word */
	fx_fini(&f, 1);
}
END_TEST

/* Another context's tag in the word apart: the lock fails, the word is
 * left alone, nothing written. */
START_TEST(held_word_apart_is_a_lock_abort)
{
	fixture_t f;
	fx_init(&f, 2);
	static dmr_trace_txn_t t;
	update_txn(&t, 3, 5);
	uint64_t tag = f.ctx[1].tag;
	memcpy(lockp(&f, 3), &tag, 8);
	int out[2] = {-1, -1};
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_LOCK], 1);
	ck_assert_uint_eq(lockv(&f, 3), tag);
	ck_assert_uint_eq(word(&f, 3, 1), DMR_VER_PRESENT | 1);
	fx_fini(&f, 2);
}
END_TEST

/* A replayed CAS (our own tag already in the word apart, confirmed by the
 * word READ behind it) is ours: committed, counted, released. */
START_TEST(replayed_cas_on_the_word_apart_is_ours)
{
	fixture_t f;
	fx_init(&f, 1);
	static dmr_trace_txn_t t;
	update_txn(&t, 3, 5);
	memcpy(lockp(&f, 3), &f.ctx[0].tag, 8);
	int out[1] = {-1};
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.cas_replayed, 1);
	ck_assert_uint_eq(lockv(&f, 3), 0);
	ck_assert_uint_eq(word(&f, 3, 1), DMR_VER_PRESENT | 2);
	fx_fini(&f, 1);
}
END_TEST

/* A read record whose word apart is held at execution: read_locked. */
START_TEST(read_of_a_record_locked_apart_aborts)
{
	fixture_t f;
	fx_init(&f, 2);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'R', 0, 0, 1);
	int u = dmr_trace_txn_op(&t, 'U', 0, 1, 2);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_SET, 0, 99);
	memcpy(lockp(&f, 1), &f.ctx[1].tag, 8);
	int out[2] = {-1, -1};
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_READ_LOCKED], 1);
	ck_assert_uint_eq(word(&f, 2, 2), 0);
	fx_fini(&f, 2);
}
END_TEST

/* Validation: a read record locked apart after its execution READ (its
 * version unchanged) fails validation; the one READ of its header alone
 * would not see it (the header's word stays 0). */
START_TEST(validation_reads_the_word_apart)
{
	fixture_t f;
	fx_init(&f, 2);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'R', 0, 0, 1);
	int u = dmr_trace_txn_op(&t, 'U', 0, 1, 2);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_SET, 0, 99);
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_progress(f.be, UINT64_MAX), 0);
	ck_assert_int_eq(dmr_be_poll(f.be, 0, &wc, 1), 1);
	memcpy(lockp(&f, 1), &f.ctx[1].tag, 8); /* a writer locks slot 1 */
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_on_wc(&f.ctx[0], &wc, &o), DMR_OK);
	ck_assert_int_eq(o, DMR_TXN_RUNNING);
	int out[2] = {-1, -1};
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_VALIDATION], 1);
	ck_assert_uint_eq(word(&f, 2, 2), 0); /* not applied */
	ck_assert_uint_eq(lockv(&f, 2), 0);   /* its lock released, apart */
	ck_assert_uint_eq(f.st.locks_taken, f.st.locks_released);
	fx_fini(&f, 2);
}
END_TEST

/* The same transaction, nobody interfering: committed (the checks above
 * are not aborting everything). */
START_TEST(validation_passes_when_the_word_apart_is_free)
{
	fixture_t f;
	fx_init(&f, 1);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'R', 0, 0, 1);
	int u = dmr_trace_txn_op(&t, 'U', 0, 1, 2);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_SET, 0, 99);
	int out[1] = {-1};
	ck_assert_int_eq(start(&f.ctx[0], &t), DMR_TXN_RUNNING);
	drive(&f, out, 1);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(word(&f, 2, 2), 99);
	/* execution: the word + record of slot 1, CAS + record + word of slot
	 * 2; validation: the word + header of slot 1 */
	ck_assert_uint_eq(f.st.reads, 6);
	fx_fini(&f, 1);
}
END_TEST

static const uint8_t *regions_mem(void *arg, uint32_t mn, uint64_t *len_p)
{
	uint8_t *const *m = arg;
	*len_p = UINT64_MAX;
	return m[mn];
}

/* The replica check reads the region's words on every MN holding the
 * table: a backup's word left "invisible" is found, named. */
START_TEST(replica_check_reads_the_words_apart)
{
	static dmr_trace_hdr_t h;
	memset(&h, 0, sizeof(h));
	h.ntables = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(h.tables[i].name, sizeof(h.tables[i].name), "t%d", i);
		h.tables[i].rows = 100;
		h.tables[i].payload_bytes = 8;
		h.tables[i].loaded = 100;
	}
	static dmr_layout_t l;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&l, &h, 1, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&l, 2, 1, &err), DMR_OK);
	uint8_t sel[DMR_TRACE_MAX_TABLES] = {0, 1};
	ck_assert_int_eq(dmr_layout_locks(&l, sel, &err), DMR_OK);
	uint8_t *m[2];
	for (int i = 0; i < 2; i++) {
		m[i] = calloc(1, l.total);
		ck_assert_ptr_nonnull(m[i]);
		dmr_layout_load_mn(&l, (uint32_t)i, m[i]);
	}
	dmr_replica_result_t rr;
	ck_assert_int_eq(dmr_replica_verify(&l, regions_mem, m, &rr, &err), DMR_OK);
	ck_assert(rr.ok);
	uint64_t clean = rr.checks;
	ck_assert_uint_eq(clean, 2ull * 100 * 3 + 2ull * 100); /* + t1's words, 2 MNs */
	uint32_t backup = l.t[1].backup[0];
	uint64_t inv = DMR_LOCK_INVISIBLE;
	memcpy(m[backup] + l.t[1].lock_base + 8 * 42, &inv, 8);
	ck_assert_int_eq(dmr_replica_verify(&l, regions_mem, m, &rr, &err), DMR_OK);
	ck_assert(!rr.ok);
	ck_assert_uint_eq(rr.failures, 1);
	ck_assert_msg(strstr(rr.first_failure, "table t1 slot 42") &&
			  strstr(rr.first_failure, "(backup)") && strstr(rr.first_failure, "apart"),
		      "%s", rr.first_failure);
	for (int i = 0; i < 2; i++)
		free(m[i]);
}
END_TEST

#ifdef DMR_HAVE_VERBS
/* The verbs backend's device-memory refusals, as functions: a device
 * without device memory (rxe: max_dm_size 0), a request larger than the
 * device offers (one MN, and several MNs on one device), one that fits. */
START_TEST(verbs_dm_check_messages)
{
	dmr_err_t err;
	ck_assert_int_eq(dmr_verbs_dm_check("rxe0", 0, 4096, 1, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "device rxe0 offers no device memory") &&
			  strstr(err.msg, "max_dm_size 0"),
		      "%s", err.msg);
	ck_assert_int_eq(dmr_verbs_dm_check("mlx5_0", 131072, 320000, 1, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "device mlx5_0: lock words need 320000 bytes of device "
				      "memory, the device offers 131072"),
		      "%s", err.msg);
	ck_assert_int_eq(dmr_verbs_dm_check("mlx5_0", 131072, 3 * 65536, 3, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "need 196608 bytes of device memory (3 MNs on this "
				      "device x 65536 bytes), the device offers 131072"),
		      "%s", err.msg);
	ck_assert_int_eq(dmr_verbs_dm_check("mlx5_0", 131072, 131072, 1, &err), DMR_OK);
	ck_assert_int_eq(dmr_verbs_dm_check("mlx5_0", 131072, 64, 2, NULL), DMR_OK);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("locks_apart");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, layout_places_the_region_after_everything);
	tcase_add_test(tc, update_locks_and_releases_the_word_apart);
	tcase_add_test(tc, held_word_apart_is_a_lock_abort);
	tcase_add_test(tc, replayed_cas_on_the_word_apart_is_ours);
	tcase_add_test(tc, read_of_a_record_locked_apart_aborts);
	tcase_add_test(tc, validation_reads_the_word_apart);
	tcase_add_test(tc, validation_passes_when_the_word_apart_is_free);
	tcase_add_test(tc, replica_check_reads_the_words_apart);
#ifdef DMR_HAVE_VERBS
	tcase_add_test(tc, verbs_dm_check_messages);
#endif
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
