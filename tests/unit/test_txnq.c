/*
 * tests/unit/test_txnq.c - the packed read-ahead queues (replay/txnq.h):
 * every field of a transaction, its ops and their actions comes back as it
 * was pushed (extremes of every signed field, 256 ops, 4 actions, records
 * across chunk boundaries; packed, or as the binary cache's record) with its
 * tag, FIFO order over interleaved
 * queues, an empty queue, and chunks reused rather than allocated again;
 * and the replay engine's use of it (replay/dispatch.c): within the
 * default bounds a short run packs nothing, with small ones
 * (dmr_replay_opts_t's readahead_copy_max, readahead_copy_txns) all or
 * some transactions are packed, and every output file is the same
 * (summary.csv but its wall-clock columns), with and without aura.
 */
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/aura.h"
#include "replay/replay.h"
#include "replay/txnq.h"
#include "traces/trace_impl.h"
#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/suite.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A value of every magnitude: 0, small, extremes, or random bits. */
static int64_t any64(void)
{
	static const int64_t edge[] = {0, 1, -1, 127, -64, 128, INT64_MAX, INT64_MIN};
	uint64_t k = rnd() % 4;
	if (k == 0)
		return edge[rnd() % 8];
	if (k == 1)
		return (int64_t)(rnd() % 2000) - 1000;
	return (int64_t)rnd();
}

static void fill_val(dmr_trace_val_t *v)
{
	v->lit = any64();
	v->op = (int16_t)any64();
	v->field = (uint16_t)rnd();
}

static void fill_txn(dmr_trace_txn_t *t, uint32_t nops)
{
	memset(t, 0, sizeof(*t));
	t->id = (uint64_t)any64();
	t->type = (uint16_t)rnd();
	t->xv = any64();
	t->line = (uint32_t)rnd();
	t->nops = nops;
	for (uint32_t i = 0; i < nops; i++) {
		dmr_trace_op_t *o = &t->ops[i];
		o->kind = (uint8_t)rnd();
		o->table = (uint8_t)rnd();
		o->round = (uint16_t)rnd();
		o->count = (uint32_t)rnd();
		o->key = any64();
		fill_val(&o->dep);
		o->lo = any64();
		o->hi = any64();
		o->guard.kind = (uint8_t)rnd();
		o->guard.op = (int16_t)any64();
		o->guard.f = (uint16_t)rnd();
		o->guard.f2 = (uint16_t)rnd();
		o->nacts = (uint8_t)(rnd() % (DMR_TRACE_MAX_ACTS + 1));
		for (uint32_t a = 0; a < o->nacts; a++) {
			o->acts[a].kind = (uint8_t)rnd();
			o->acts[a].field = (uint16_t)rnd();
			fill_val(&o->acts[a].val);
		}
	}
}

/* The first field where b differs from a (popped: acts beyond nacts zero),
 * or NULL. Plain comparisons, one ck_assert per transaction: Check's
 * asserts each write to a pipe. */
#define DIFF(x, name)                                                                              \
	do {                                                                                       \
		if (!(x))                                                                          \
			return name;                                                               \
	} while (0)

static const char *diff_val(const dmr_trace_val_t *a, const dmr_trace_val_t *b)
{
	DIFF(a->lit == b->lit, "val.lit");
	DIFF(a->op == b->op, "val.op");
	DIFF(a->field == b->field, "val.field");
	return NULL;
}

static const char *diff_txn(const dmr_trace_txn_t *a, const dmr_trace_txn_t *b)
{
	const char *d;
	DIFF(a->id == b->id, "id");
	DIFF(a->type == b->type, "type");
	DIFF(a->xv == b->xv, "xv");
	DIFF(a->line == b->line, "line");
	DIFF(a->nops == b->nops, "nops");
	for (uint32_t i = 0; i < a->nops; i++) {
		const dmr_trace_op_t *x = &a->ops[i], *y = &b->ops[i];
		DIFF(x->kind == y->kind, "kind");
		DIFF(x->table == y->table, "table");
		DIFF(x->round == y->round, "round");
		DIFF(x->count == y->count, "count");
		DIFF(x->key == y->key, "key");
		if ((d = diff_val(&x->dep, &y->dep)) != NULL)
			return d;
		DIFF(x->lo == y->lo, "lo");
		DIFF(x->hi == y->hi, "hi");
		DIFF(x->guard.kind == y->guard.kind, "guard.kind");
		DIFF(x->guard.op == y->guard.op, "guard.op");
		DIFF(x->guard.f == y->guard.f, "guard.f");
		DIFF(x->guard.f2 == y->guard.f2, "guard.f2");
		DIFF(x->nacts == y->nacts, "nacts");
		for (uint32_t k = 0; k < DMR_TRACE_MAX_ACTS; k++) {
			const dmr_trace_act_t *p = &x->acts[k], *q = &y->acts[k];
			if (k >= x->nacts) /* not written by pop (txnq.h) */
				continue;
			DIFF(p->kind == q->kind, "act.kind");
			DIFF(p->field == q->field, "act.field");
			if ((d = diff_val(&p->val, &q->val)) != NULL)
				return d;
		}
	}
	return NULL;
}

/* t as the binary trace cache stores it (dmr_trace_next_rec's bytes): its
 * transaction record and op records, without the padding. Its length. */
static size_t to_rec(const dmr_trace_txn_t *t, unsigned char *buf)
{
	trace_bin_txn_t bt = {.id = t->id,
			      .xv = t->xv,
			      .line = t->line,
			      .nops = (uint16_t)t->nops,
			      .type = (uint8_t)t->type};
	memcpy(buf, &bt, sizeof(bt));
	size_t n = sizeof(bt);
	for (uint32_t i = 0; i < t->nops; i++) {
		size_t k = trace_bin_put_op(buf + n, &t->ops[i]);
		ck_assert_uint_gt(k, 0);
		n += k;
	}
	return n;
}

static void same_txn(const dmr_trace_txn_t *a, const dmr_trace_txn_t *b)
{
	const char *d = diff_txn(a, b);
	if (d)
		ck_abort_msg("txn %llu: %s differs", (unsigned long long)a->id, d);
}

/* the engine's tag: aura group << 1 | drift flag; extremes included */
static uint64_t tag_of(uint32_t i)
{
	return i % 7 == 0 ? UINT64_MAX - i : (uint64_t)i * 2654435761u;
}

/* a == b, asserted without a Check call when it holds (each ck_assert
 * writes to a pipe: thousands of them took seconds) */
#define QEQ(a, b)                                                                                  \
	do {                                                                                       \
		unsigned long long qa_ = (unsigned long long)(a), qb_ = (unsigned long long)(b);   \
		if (qa_ != qb_)                                                                    \
			ck_abort_msg("%s == %llu, want %s == %llu", #a, qa_, #b, qb_);             \
	} while (0)

START_TEST(round_trip_fifo)
{
	enum { NQ = 3, NT = 600 };
	static dmr_trace_txn_t in[NT], out;
	dmr_txnq_pool_t pool = {0};
	dmr_txnq_t q[NQ] = {{0}};
	uint32_t pushed[NQ] = {0}, popped[NQ] = {0};

	static unsigned char rec[TRACE_BIN_TXN_MAX];
	for (uint32_t i = 0; i < NT; i++) { /* 1..256 ops, some at the maximum */
		fill_txn(&in[i], i % 50 == 0 || i % 50 == 1 ? DMR_TRACE_MAX_OPS
							    : 1 + (uint32_t)(rnd() % 8));
		if (i % 2) /* pushed as a cache record: its type is a byte */
			in[i].type %= 256;
	}
	uint64_t tag = 7;
	ck_assert_int_eq(dmr_txnq_pop(&q[0], &pool, &out, &tag), 0); /* empty */
	ck_assert_uint_eq(tag, 7);
	/* transaction i to queue i mod NQ; pops interleaved with pushes */
	uint32_t next = 0;
	while (next < NT || popped[0] + popped[1] + popped[2] < NT) {
		if (next < NT && rnd() % 3) {
			uint32_t k = next % NQ;
			if (next % 2) /* the replay engine's records of a binary cache */
				QEQ(dmr_txnq_push_rec(&q[k], &pool, rec, to_rec(&in[next], rec),
						      in[next].nops, in[next].id, tag_of(next)),
				    0);
			else
				QEQ(dmr_txnq_push(&q[k], &pool, &in[next], tag_of(next)), 0);
			pushed[k]++;
			next++;
			continue;
		}
		uint32_t k = (uint32_t)(rnd() % NQ);
		QEQ(q[k].n, pushed[k] - popped[k]);
		if (!q[k].n) {
			QEQ(dmr_txnq_pop(&q[k], &pool, &out, &tag), 0);
			continue;
		}
		const dmr_trace_txn_t *want = &in[popped[k] * NQ + k];
		uint32_t hn;
		uint64_t hid;
		dmr_txnq_head(&q[k], &hn, &hid);
		QEQ(hn, want->nops);
		QEQ(hid, want->id);
		memset(&out, 0x5a, sizeof(out));
		QEQ(dmr_txnq_pop(&q[k], &pool, &out, &tag), 1);
		QEQ(tag, tag_of(popped[k] * NQ + k));
		same_txn(want, &out);
		popped[k]++;
	}
	for (uint32_t k = 0; k < NQ; k++) {
		ck_assert_uint_eq(q[k].n, 0);
		ck_assert_ptr_null(q[k].head);
	}
	/* the maximal transactions span several 4 KiB chunks */
	ck_assert_uint_gt(pool.chunks, 3);
	dmr_txnq_pool_fini(&pool);
}
END_TEST

START_TEST(chunks_reused)
{
	static dmr_trace_txn_t t, out;
	dmr_txnq_pool_t pool = {0};
	dmr_txnq_t q = {0};
	uint64_t tag;
	memset(&t, 0, sizeof(t)); /* a SmallBank-like transaction: small values */
	t.id = 1234567;
	t.line = 2469135;
	t.nops = 4;
	for (uint32_t i = 0; i < t.nops; i++) {
		t.ops[i].kind = DMR_TOP_UPDATE;
		t.ops[i].table = (uint8_t)(i % 2);
		t.ops[i].count = 1;
		t.ops[i].key = 99720 + i;
		t.ops[i].dep.op = -1;
		t.ops[i].nacts = 1;
		t.ops[i].acts[0].val.op = -1;
		t.ops[i].acts[0].val.lit = -13;
	}
	/* a steady depth of 1,000: the chunks of the first round are reused */
	for (int i = 0; i < 1000; i++)
		QEQ(dmr_txnq_push(&q, &pool, &t, 0), 0);
	uint64_t warm = 0;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 1000; i++) {
			QEQ(dmr_txnq_push(&q, &pool, &t, 3), 0);
			QEQ(dmr_txnq_pop(&q, &pool, &out, &tag), 1);
			same_txn(&t, &out);
			QEQ(tag, (uint64_t)(round ? 3 : 0));
		}
		if (round == 0)
			warm = pool.chunks;
		/* spanning one more chunk at another alignment at most */
		ck_assert_uint_le(pool.chunks, warm + 1);
	}
	ck_assert_uint_eq(q.n, 1000);
	/* packed: far fewer bytes than 1,000 unpacked copies (4 ops x 160 B) */
	ck_assert_uint_lt(warm * 4096, 1000 * 4 * sizeof(dmr_trace_op_t) / 2);
	dmr_txnq_fini(&q, &pool);
	ck_assert_uint_eq(q.n, 0);
	ck_assert_int_eq(dmr_txnq_pop(&q, &pool, &out, &tag), 0);
	dmr_txnq_pool_fini(&pool);
}
END_TEST

/* A TPC-C trace whose hot set moves every 0.2 ms (drift; written once by
 * `dmreplay gen` into the suite's temp dir). */
static const char *drift_trace(void)
{
	static char path[PATH_MAX];
	if (!path[0]) {
		char cmd[3 * PATH_MAX];
		snprintf(path, sizeof(path), "%s/drift.csv", dmr_test_tmp);
		snprintf(
		    cmd, sizeof(cmd),
		    "'%s' gen tpcc --regime drift:extreme@0.0002s --txns 1000 --seed 1 -o '%s' "
		    ">/dev/null 2>&1",
		    dmr_test_bin, path);
		ck_assert_int_eq(system(cmd), 0);
	}
	return path;
}

/* 4 CNs x 4 threads x 3 contexts over 1,000 TPC-C transactions into out:
 * aura 0: the sample trace; 1: the same with --loop aura (its A2 inboxes
 * too); 2: aura over the drift trace (drift applied as aura routes, the
 * flag kept with a packed transaction). */
static void run_tpcc_cache(const char *out, uint64_t copy_max, uint64_t copy_txns, int aura,
			   int cache, dmr_replay_result_t *res)
{
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.trace = aura == 2 ? drift_trace() : DMR_SOURCE_DIR "/traces/samples/tpcc-extreme.csv";
	o.trace_cache.off = !cache;	  /* none written into the source tree: */
	o.trace_cache.dir = dmr_test_tmp; /* in the test's directory */
	o.readahead_decoded = cache == 2;
	o.backend = "sim";
	o.out_dir = out;
	o.cns = 4;
	o.threads = 4;
	o.coros = 3;
	o.txns = 1000;
	o.quiet = 1;
	o.readahead_copy_max = copy_max;
	o.readahead_copy_txns = copy_txns;
	if (aura) {
		o.loop.loops = DMR_LOOP_AURA; /* every lever */
		/* 50 us windows: the run (~1 ms simulated) sees aura route
		 * groups to owners (A2, the inboxes) and act on them */
		o.loop.window_ps = 50000000;
	}
	dmr_err_t err;
	memset(res, 0, sizeof(*res));
	ck_assert_msg(dmr_replay_run(&o, res, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(res->st.tried, 1000);
}

static void run_tpcc(const char *out, uint64_t copy_max, uint64_t copy_txns, int aura,
		     dmr_replay_result_t *res)
{
	run_tpcc_cache(out, copy_max, copy_txns, aura, 0, res);
}

/* a's and b's output files are the same; summary.csv but wall clocks */
static void same_outputs(const char *a, const char *b)
{
	static const char *files[] = {"cns.csv", "mns.csv", "types.csv", "timeseries.csv"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		dmr_test_assert_same_file(a, b, files[i]);
	dmr_test_summary_t x, y;
	dmr_test_summary_load(&x, a, "summary.csv");
	dmr_test_summary_load(&y, b, "summary.csv");
	ck_assert_int_eq(x.n, y.n);
	int compared = 0;
	for (int i = 0; i < x.n; i++) {
		ck_assert_str_eq(x.name[i], y.name[i]);
		if (strstr(x.name[i], "wall_s"))
			continue;
		ck_assert_msg(!strcmp(x.val[i], y.val[i]), "summary.csv %s: %s vs %s", x.name[i],
			      x.val[i], y.val[i]);
		compared++;
	}
	ck_assert_int_gt(compared, 40);
	dmr_test_summary_free(&x);
	dmr_test_summary_free(&y);
}

START_TEST(engine_packs_beyond_bound_same_results)
{
	const char *dir = dmr_test_tmp; /* removed by dmr_test_env_fini */
	char out[3][PATH_MAX];
	for (int aura = 0; aura < 3; aura++) {
		/* default bounds; 1 byte: everything packed; 8 copies: some */
		static const uint64_t bound[] = {0, 1, 0}, nbound[] = {0, 0, 8};
		dmr_replay_result_t r[3];
		for (int k = 0; k < 3; k++) {
			snprintf(out[k], sizeof(out[k]), "%s/a%d-%d", dir, aura, k);
			run_tpcc(out[k], bound[k], nbound[k], aura, &r[k]);
		}
		ck_assert_uint_eq(r[0].readahead_packed, 0);	/* a short run: the fast path */
		ck_assert_uint_eq(r[1].readahead_packed, 1000); /* every one read */
		ck_assert_uint_gt(r[2].readahead_packed, 0);
		ck_assert_uint_lt(r[2].readahead_packed, r[1].readahead_packed);
		ck_assert_uint_gt(r[0].st.committed, 0);
		if (aura) /* it acted: owners, so inboxes */
			ck_assert_uint_gt(r[0].aura.moves, 0);
		same_outputs(out[0], out[1]);
		same_outputs(out[0], out[2]);
	}
}
END_TEST

/* Through the binary cache the engine queues the cache's records (no
 * decoded copy per queued transaction: engine.h qrec), unless aura routes
 * to inboxes; every output file is the same as with decoded copies (and
 * packed ones past a small bound) and as from the CSV. */
START_TEST(engine_queues_cache_records_same_results)
{
	const char *dir = dmr_test_tmp;
	char out[4][PATH_MAX];
	for (int aura = 0; aura < 3; aura++) {
		dmr_replay_result_t r[4];
		for (int k = 0; k < 4; k++)
			snprintf(out[k], sizeof(out[k]), "%s/c%d-%d", dir, aura, k);
		run_tpcc_cache(out[0], 0, 0, aura, 1, &r[0]); /* records */
		run_tpcc_cache(out[1], 0, 0, aura, 2, &r[1]); /* decoded copies */
		run_tpcc_cache(out[2], 1, 0, aura, 2, &r[2]); /* every one packed */
		run_tpcc_cache(out[3], 0, 0, aura, 0, &r[3]); /* the CSV */
		/* aura 1 and 2 (--loop aura: A2 routes to inboxes) read decoded */
		ck_assert_uint_eq(r[0].readahead_records, aura ? 0 : 1000);
		ck_assert_uint_eq(r[0].readahead_packed, 0);
		ck_assert_uint_eq(r[1].readahead_records, 0);
		ck_assert_uint_eq(r[2].readahead_records, 0);
		ck_assert_uint_eq(r[2].readahead_packed, 1000);
		ck_assert_uint_eq(r[3].readahead_records, 0);
		ck_assert_uint_gt(r[0].st.committed, 0);
		for (int k = 1; k < 4; k++)
			same_outputs(out[0], out[k]);
	}
}
END_TEST

/* Verification on the lazy sim: a range no WR wrote is answered from the
 * layout (replay/mnread.c), not read; the same checks, failures and
 * summary as reading every range (dmr_replay_opts_t.verify_read_all), on
 * TPC-C (C1-C3 scan the order tables mostly past their last insert) and
 * SmallBank (every loaded account's balance summed). */
START_TEST(engine_verify_initial_windows_same)
{
	char sb[PATH_MAX], cmd[3 * PATH_MAX];
	snprintf(sb, sizeof(sb), "%s/sb.csv", dmr_test_tmp);
	snprintf(cmd, sizeof(cmd),
		 "'%s' gen smallbank --txns 2000 --seed 2 -o '%s' >/dev/null 2>&1", dmr_test_bin,
		 sb);
	ck_assert_int_eq(system(cmd), 0);
	const char *traces[] = {DMR_SOURCE_DIR "/traces/samples/tpcc-extreme.csv", sb};
	for (int w = 0; w < 2; w++) {
		dmr_replay_result_t r[2];
		char out[2][PATH_MAX];
		for (int all = 0; all < 2; all++) {
			dmr_replay_opts_t o;
			dmr_replay_opts_default(&o);
			o.trace = traces[w];
			o.trace_cache.off = 1;
			o.backend = "sim";
			snprintf(out[all], sizeof(out[all]), "%s/v%d-%d", dmr_test_tmp, w, all);
			o.out_dir = out[all];
			o.cns = 2;
			o.threads = 4;
			o.coros = 2;
			o.txns = 1000;
			o.quiet = 1;
			o.verify_read_all = all;
			dmr_err_t err;
			memset(&r[all], 0, sizeof(r[all]));
			ck_assert_msg(dmr_replay_run(&o, &r[all], &err) == DMR_OK, "%s", err.msg);
		}
		ck_assert_int_eq(r[0].verify.ok, 1);
		if (w == 0) /* C1 per warehouse, C2 and C3 per district: 40 + 2 x 400 */
			ck_assert_uint_eq(r[0].verify.checks, 840);
		ck_assert_uint_gt(r[0].verify.checks, 0);
		ck_assert_uint_eq(r[0].verify.checks, r[1].verify.checks);
		ck_assert_uint_eq(r[0].verify.failures, r[1].verify.failures);
		ck_assert_str_eq(r[0].verify.summary, r[1].verify.summary);
		ck_assert_str_eq(r[0].verify.first_failure, r[1].verify.first_failure);
		same_outputs(out[0], out[1]);
	}
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("txnq", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("txnq");
	TCase *tc = tcase_create("txnq");
	tcase_add_test(tc, round_trip_fifo);
	tcase_add_test(tc, chunks_reused);
	suite_add_tcase(s, tc);
	/* 21 sim runs writing their files: seconds of wall on a loaded host
	 * (~2 s of CPU), past Check's 4 s default outside ctest */
	TCase *te = tcase_create("engine");
	tcase_set_timeout(te, 120);
	tcase_add_test(te, engine_packs_beyond_bound_same_results);
	tcase_add_test(te, engine_queues_cache_records_same_results);
	tcase_add_test(te, engine_verify_initial_windows_same);
	suite_add_tcase(s, te);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
