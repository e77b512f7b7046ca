/*
 * tests/test_iface.c - the backend interface as the core and the engine use
 * it (issue #10 items 5 and 6): registration fills unset operations with
 * the shared stubs, the control op (sim, shm), the barrier of a single
 * process, mr_dereg paired with mr_reg over a run, the transaction outcome
 * as a channel of its own, the wr_id encoding through a real transaction
 * run, and lock tags / log rings named over the cluster from
 * DMR_BE_CTL_ROLE.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/sim/sim.h"
#include "core/base/wrid.h"
#include "core/txn.h"
#include "helpers/be.h"
#include "helpers/suite.h"

/* ---- a backend with nothing but open and close ------------------------ */

typedef struct bare {
	dmr_be_t be;
} bare_t;

static int bare_opens, bare_closes;
static const dmr_be_ops_t bare_ops;

static dmr_status_t bare_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	bare_t *b = calloc(1, sizeof(*b));
	if (!b)
		return dmr_err_set(err, DMR_ERR_NOMEM, "bare: out of memory");
	b->be.ops = &bare_ops;
	b->be.cfg = *cfg;
	bare_opens++;
	*be_p = &b->be;
	return DMR_OK;
}

static void bare_close(dmr_be_t *be)
{
	bare_closes++;
	free(be);
}

static const dmr_be_ops_t bare_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "bare",
    .open = bare_open,
    .close = bare_close,
};

static const dmr_be_config_t bare_cfg = {
    .backend = "bare", .mns = 1, .cns = 1, .workers = 2, .mr_size = 4096};

START_TEST(registry_fills_unset_ops_with_stubs)
{
	dmr_be_t *be = NULL;
	dmr_err_t err = {{0}};
	bare_closes = 0;
	ck_assert_int_eq(dmr_be_open_ops(&bare_ops, &bare_cfg, &be, &err), DMR_OK);
	ck_assert_ptr_nonnull(be);
	ck_assert_ptr_ne(be->ops, &bare_ops); /* the filled copy */
	ck_assert_str_eq(be->ops->name, "bare");
	ck_assert(be->ops->open == bare_open && be->ops->close == bare_close);
	ck_assert(be->ops->mr_reg && be->ops->mr_dereg && be->ops->post && be->ops->poll &&
		  be->ops->now && be->ops->timer && be->ops->barrier && be->ops->progress &&
		  be->ops->mn_memory && be->ops->stats && be->ops->charge && be->ops->control);

	uint64_t buf[8];
	/* nothing to register / deregister */
	ck_assert_int_eq(dmr_be_mr_reg(be, 0, buf, sizeof(buf), &err), DMR_OK);
	ck_assert_int_eq(dmr_be_mr_dereg(be, 0, buf, &err), DMR_OK);
	/* unsupported, err naming the backend */
	ck_assert_int_eq(dmr_be_post_one(be, 1, 0, DMR_WR_READ, 7, buf, 0, 8, 0, 0, &err),
			 DMR_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(err.msg, "bare") && strstr(err.msg, "post"), "%s", err.msg);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_poll(be, 0, &wc, 1), DMR_ERR_UNSUPPORTED);
	ck_assert_int_eq(dmr_be_timer(be, 0, 10, 1), DMR_ERR_UNSUPPORTED);
	const struct dmr_model *m = (const void *)buf;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_MODEL, &m, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_ptr_eq(m, (const void *)buf); /* output untouched */
	ck_assert_msg(strstr(err.msg, "bare") && strstr(err.msg, "model"), "%s", err.msg);
	/* 0 / NULL / no-op where the contract says so */
	ck_assert_uint_eq(dmr_be_now(be, 1), 0);
	ck_assert_int_eq(dmr_be_progress(be, UINT64_MAX), -1);
	uint64_t len = 99;
	ck_assert_ptr_null(dmr_be_mn_memory(be, 0, &len));
	dmr_be_charge(be, 0, 1000);
	dmr_be_stats_t st;
	memset(&st, 0xff, sizeof(st));
	dmr_be_stats(be, &st);
	ck_assert_uint_eq(st.verbs + st.reads + st.writes + st.cas + st.faa + st.bytes_read +
			      st.bytes_written + st.doorbells + st.events + st.errors,
			  0);
	ck_assert_uint_eq(st.mr_regs, 1);
	ck_assert_uint_eq(st.mr_deregs, 1);
	/* the barrier of a single process */
	int64_t sum = 0;
	dmr_be_barrier_t b = {.phase = DMR_BE_BARRIER_START};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	b = (dmr_be_barrier_t){.phase = DMR_BE_BARRIER_END, .value = -17};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	ck_assert_int_eq(sum, -17);
	b.phase = 9;
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_ERR_INVALID);
	/* the core on a backend that does not answer ROLE: the whole cluster */
	dmr_txn_engine_t eng;
	dmr_layout_t l;
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(dmr_txn_engine_init(&eng, be, &l, 2, 0, &err), DMR_OK);
	ck_assert_uint_eq(eng.cn, 0);
	ck_assert_uint_eq(eng.first_worker, 0);
	ck_assert_uint_eq(eng.retries, 2);
	dmr_be_close(be);
	ck_assert_int_eq(bare_closes, 1);
}
END_TEST

START_TEST(registration_refuses_bad_tables)
{
	dmr_be_t *be = NULL;
	dmr_err_t err;
	int opens = bare_opens;
	dmr_be_ops_t t = bare_ops;
	t.size = sizeof(dmr_be_ops_t) - sizeof(void *);
	ck_assert_int_eq(dmr_be_open_ops(&t, &bare_cfg, &be, &err), DMR_ERR_NODEV);
	ck_assert_msg(strstr(err.msg, "ops table size"), "%s", err.msg);
	t = bare_ops;
	t.close = NULL;
	ck_assert_int_eq(dmr_be_open_ops(&t, &bare_cfg, &be, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "bare") && strstr(err.msg, "close"), "%s", err.msg);
	t = bare_ops;
	t.open = NULL;
	ck_assert_int_eq(dmr_be_open_ops(&t, &bare_cfg, &be, &err), DMR_ERR_INVALID);
	ck_assert_int_eq(bare_opens, opens); /* refused before open */
	ck_assert_ptr_null(be);
	dmr_be_config_t cfg = bare_cfg; /* "bare" is not in the registry */
	ck_assert_int_eq(dmr_be_open(&cfg, &be, &err), DMR_ERR_NODEV);
	ck_assert_msg(strstr(err.msg, "unknown backend 'bare'") && strstr(err.msg, "sim"), "%s",
		      err.msg);
}
END_TEST

/* ---- control -------------------------------------------------------- */

static dmr_be_t *open_be(const char *name, uint32_t cns, uint32_t workers, uint64_t mr)
{
	dmr_be_config_t cfg = {.backend = name,
			       .mns = 1,
			       .cns = cns,
			       .workers = workers,
			       .mr_size = mr,
			       .profile = "cx6dx-100g"};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "%s: %s", name, err.msg);
	return be;
}

START_TEST(control_on_sim)
{
	dmr_be_t *be = open_be("sim", 2, 3, 1 << 16);
	dmr_err_t err;
	const struct dmr_model *m = NULL;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_MODEL, &m, &err), DMR_OK);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_eq(m, dmr_test_model(be)); /* the same model on every call */
	ck_assert_str_eq(m->name, "cx6dx-100g");
	uint64_t t = 77;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SIM_TIME, &t, &err), DMR_OK);
	ck_assert_uint_eq(t, 0);
	/* MTU: an IB MTU is taken, anything else refused and left as it was */
	uint32_t mtu = 1024;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_MTU, &mtu, &err), DMR_OK);
	ck_assert_uint_eq(m->mtu, 1024);
	mtu = 1000;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_MTU, &mtu, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "1000"), "%s", err.msg);
	ck_assert_uint_eq(m->mtu, 1024);
	/* payload off: a WRITE moves no bytes (timing unchanged); on: it does */
	uint8_t *mem = dmr_be_mn_memory(be, 0, NULL);
	uint64_t v = 0x1122334455667788ull;
	int on = 0;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_PAYLOAD, &on, &err), DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, &v, 64, 8, 0, 0, &err), DMR_OK);
	dmr_wc_t wc;
	int w;
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0)
		dmr_be_poll(be, (uint32_t)w, &wc, 1);
	uint64_t got;
	memcpy(&got, mem + 64, 8);
	ck_assert_uint_eq(got, 0);
	on = 1;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_PAYLOAD, &on, &err), DMR_OK);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 2, &v, 64, 8, 0, 0, &err), DMR_OK);
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0)
		dmr_be_poll(be, (uint32_t)w, &wc, 1);
	memcpy(&got, mem + 64, 8);
	ck_assert_uint_eq(got, v);
	/* simulated time moved */
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SIM_TIME, &t, &err), DMR_OK);
	ck_assert_uint_gt(t, 0);
	dmr_be_role_t r;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_ROLE, &r, &err), DMR_OK);
	ck_assert_uint_eq(r.cn, 0);
	ck_assert_uint_eq(r.cns, 2);
	ck_assert_uint_eq(r.first_worker, 0);
	ck_assert_uint_eq(r.workers, 6);
	int x = 5;
	ck_assert_int_eq(dmr_be_control(be, 999, &x, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(err.msg, "sim") && strstr(err.msg, "999"), "%s", err.msg);
	ck_assert_int_eq(x, 5);
	dmr_be_close(be);
}
END_TEST

START_TEST(control_on_shm)
{
	dmr_be_t *be = open_be("shm", 2, 3, 1 << 16);
	dmr_err_t err;
	dmr_be_role_t r;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_ROLE, &r, &err), DMR_OK);
	ck_assert_uint_eq(r.cn, 0);
	ck_assert_uint_eq(r.cns, 2);
	ck_assert_uint_eq(r.first_worker, 0);
	ck_assert_uint_eq(r.workers, 6);
	const struct dmr_model *m = NULL;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_MODEL, &m, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err.msg, "shm") && strstr(err.msg, "model"), "%s", err.msg);
	uint64_t t = 77;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SIM_TIME, &t, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_uint_eq(t, 77);
	uint32_t mtu = 1024;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_MTU, &mtu, &err), DMR_ERR_UNSUPPORTED);
	int on = 0;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_SET_PAYLOAD, &on, &err),
			 DMR_ERR_UNSUPPORTED);
	ck_assert_int_eq(dmr_be_control(be, 999, &on, &err), DMR_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(err.msg, "999"), "%s", err.msg);
	dmr_be_close(be);
}
END_TEST

/* ---- barrier -------------------------------------------------------- */

static const char *const single[] = {"sim", "shm"};

START_TEST(barrier_of_a_single_process)
{
	dmr_be_t *be = open_be(single[_i], 2, 2, 1 << 16);
	dmr_err_t err;
	int64_t sum = 12345;
	dmr_be_barrier_t b = {.phase = DMR_BE_BARRIER_START, .deadline_ps = 1};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	b = (dmr_be_barrier_t){.phase = DMR_BE_BARRIER_END, .value = 42};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	ck_assert_int_eq(sum, 42);
	b.value = INT64_MIN + 1;
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	ck_assert_int_eq(sum, INT64_MIN + 1);
	/* a failed run: returns at once, no sum */
	sum = 7;
	b = (dmr_be_barrier_t){.phase = DMR_BE_BARRIER_END, .failed = 1, .value = 3};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_OK);
	ck_assert_int_eq(sum, 7);
	b = (dmr_be_barrier_t){.phase = 0};
	ck_assert_int_eq(dmr_be_barrier(be, &b, &sum, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, single[_i]), "%s", err.msg);
	dmr_be_close(be);
}
END_TEST

/* ---- transaction runs ----------------------------------------------- */

typedef struct fixture {
	dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_be_t *be;
	dmr_txn_engine_t eng;
	dmr_txn_stats_t st;
	dmr_txn_ctx_t ctx[4];
	uint32_t nctx;
	uint8_t *mem;
	/* completions seen by drive() */
	uint64_t wcs, timers, bad_kind, bad_index, bad_seq;
} fixture_t;

/* One table of 16 rows x 16 payload bytes (slots 8..15 absent); log rings
 * for `rings` workers of 4096 bytes. Open by name, or through `ops`. */
static void fx_open(fixture_t *f, const char *name, const dmr_be_ops_t *ops, uint32_t workers,
		    uint32_t rings)
{
	memset(f, 0, sizeof(*f));
	f->h.version = 1;
	f->h.ntables = 1;
	snprintf(f->h.tables[0].name, sizeof(f->h.tables[0].name), "t");
	f->h.tables[0].rows = 16;
	f->h.tables[0].payload_bytes = 16;
	f->h.tables[0].loaded = 8;
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, rings, 4096, &err), DMR_OK);
	dmr_be_config_t cfg = {.backend = name,
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = (f->l.total + 4095) & ~4095ull,
			       .profile = "cx6dx-100g"};
	dmr_status_t st =
	    ops ? dmr_be_open_ops(ops, &cfg, &f->be, &err) : dmr_be_open(&cfg, &f->be, &err);
	ck_assert_msg(st == DMR_OK, "%s", err.msg);
	f->mem = dmr_be_mn_memory(f->be, 0, NULL);
	dmr_layout_load(&f->l, f->mem);
}

static void fx_engine(fixture_t *f, uint32_t retries, uint64_t backoff_ps)
{
	dmr_err_t err;
	ck_assert_int_eq(dmr_txn_engine_init(&f->eng, f->be, &f->l, retries, backoff_ps, &err),
			 DMR_OK);
}

/* Context i on worker `worker` with id `id`. */
static void fx_ctx(fixture_t *f, uint32_t i, uint32_t worker, uint32_t id)
{
	dmr_err_t err;
	ck_assert_int_eq(dmr_txn_ctx_init(&f->ctx[i], &f->eng, &f->st, worker, id, &err), DMR_OK);
	if (i + 1 > f->nctx)
		f->nctx = i + 1;
}

static void fx_close(fixture_t *f)
{
	for (uint32_t i = 0; i < f->nctx; i++)
		dmr_txn_ctx_fini(&f->ctx[i]);
	dmr_be_close(f->be);
}

static int ctx_of(fixture_t *f, uint64_t wr_id)
{
	for (uint32_t i = 0; i < f->nctx; i++)
		if (f->ctx[i].id == dmr_wrid_index(wr_id))
			return (int)i;
	return -1;
}

/* Hand one completion to its context, checking its wr_id. */
static void handle(fixture_t *f, const dmr_wc_t *wc, int *out)
{
	f->wcs++;
	f->timers += wc->opcode == DMR_WR_TIMER;
	f->bad_kind += dmr_wrid_kind(wc->wr_id) != DMR_WRID_TXN;
	int i = ctx_of(f, wc->wr_id);
	ck_assert_int_ge(i, 0);
	dmr_txn_ctx_t *c = &f->ctx[i];
	f->bad_index += dmr_wrid_index(wc->wr_id) != c->id;
	f->bad_seq += dmr_wrid_seq(wc->wr_id) != c->seq;
	/* numerically the core's historic encoding */
	ck_assert_uint_eq(wc->wr_id, (uint64_t)c->id << 32 | c->seq);
	dmr_txn_outcome_t o;
	dmr_status_t st = dmr_txn_on_wc(c, wc, &o);
	ck_assert_msg(st == DMR_OK, "%s", c->err.msg);
	if (o != DMR_TXN_RUNNING)
		out[i] = (int)o;
}

/* Drive until every started context finished (out[i] set, -1 = running). */
static void drive(fixture_t *f, int *out)
{
	dmr_wc_t wc[16];
	if (f->be->ops->caps & DMR_BE_CAP_DRIVEN) {
		int w;
		while ((w = dmr_be_progress(f->be, UINT64_MAX)) >= 0) {
			int k = dmr_be_poll(f->be, (uint32_t)w, wc, 16);
			for (int j = 0; j < k; j++)
				handle(f, &wc[j], out);
		}
		return;
	}
	for (long spin = 0; spin < 10000000; spin++) {
		int busy = 0;
		for (uint32_t i = 0; i < f->nctx; i++)
			busy |= out[i] == -1;
		if (!busy)
			return;
		for (uint32_t w = 0; w < f->be->cfg.cns * f->be->cfg.workers; w++) {
			int k = dmr_be_poll(f->be, w, wc, 16);
			ck_assert_int_ge(k, 0);
			for (int j = 0; j < k; j++)
				handle(f, &wc[j], out);
		}
	}
	ck_abort_msg("contexts did not finish");
}

static void update_txn(dmr_trace_txn_t *t, uint64_t slot, int64_t add)
{
	memset(t, 0, sizeof(*t));
	int i = dmr_trace_txn_op(t, 'U', 0, 0, (int64_t)slot);
	dmr_trace_op_act(&t->ops[i], DMR_TACT_ADD, 0, add);
}

static uint64_t mem64(fixture_t *f, uint64_t off)
{
	uint64_t v;
	memcpy(&v, f->mem + off, 8);
	return v;
}

/* Every mr_reg of a run has its mr_dereg once the contexts are finished:
 * two buffers per context, and a buffer that grew is deregistered before
 * it is freed. */
START_TEST(mr_dereg_pairs_mr_reg_over_a_run)
{
	fixture_t f;
	fx_open(&f, single[_i], NULL, 2, 2);
	fx_engine(&f, 3, 0);
	for (uint32_t i = 0; i < 4; i++)
		fx_ctx(&f, i, i % 2, i);
	dmr_be_stats_t st;
	dmr_be_stats(f.be, &st);
	ck_assert_uint_eq(st.mr_regs, 8);
	ck_assert_uint_eq(st.mr_deregs, 0);
	static dmr_trace_txn_t t[4];
	int out[4];
	for (int round = 0; round < 5; round++) {
		for (uint32_t i = 0; i < 4; i++) {
			update_txn(&t[i], (i + round) % 3, 1);
			out[i] = -1;
		}
		/* context 0's first transaction reads 8 rows twice over: its
		 * image buffer (4096 bytes) grows */
		if (round == 0) {
			memset(&t[0], 0, sizeof(t[0]));
			int r = dmr_trace_txn_op(&t[0], 'R', 0, 0, 0);
			t[0].ops[r].count = 8;
			for (int k = 0; k < 60; k++)
				dmr_trace_txn_op(&t[0], 'R', 0, 0, k % 8);
			int u = dmr_trace_txn_op(&t[0], 'U', 0, 1, 9);
			dmr_trace_op_act(&t[0].ops[u], DMR_TACT_SET, 0, 1);
		}
		for (uint32_t i = 0; i < 4; i++) {
			dmr_txn_outcome_t o;
			ck_assert_int_eq(dmr_txn_start(&f.ctx[i], &t[i], &o), DMR_OK);
			out[i] = o == DMR_TXN_RUNNING ? -1 : (int)o;
		}
		drive(&f, out);
	}
	ck_assert_uint_eq(f.st.locks_taken, f.st.locks_released);
	dmr_be_stats(f.be, &st);
	ck_assert_uint_gt(st.mr_regs, 8); /* the buffer grew */
	ck_assert_uint_eq(st.mr_regs - st.mr_deregs, 8);
	for (uint32_t i = 0; i < f.nctx; i++)
		dmr_txn_ctx_fini(&f.ctx[i]);
	f.nctx = 0;
	dmr_be_stats(f.be, &st);
	ck_assert_uint_eq(st.mr_regs, st.mr_deregs);
	fx_close(&f);
}
END_TEST

/* Outcomes and statuses are two channels: DMR_OK (0) with the outcome
 * beside it, or an error with the outcome left alone. */
START_TEST(outcome_is_a_channel_of_its_own)
{
	ck_assert_int_ne(DMR_TXN_RUNNING, DMR_TXN_COMMITTED);
	ck_assert_int_ne(DMR_TXN_COMMITTED, DMR_TXN_GAVE_UP);
	ck_assert_int_ne(DMR_TXN_RUNNING, DMR_TXN_GAVE_UP);
	fixture_t f;
	fx_open(&f, "sim", NULL, 1, 1);
	fx_engine(&f, 0, 0);
	fx_ctx(&f, 0, 0, 0);
	static dmr_trace_txn_t t;
	/* every op skipped (slot beyond the table): finished without a verb */
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'R', 0, 0, 100);
	dmr_txn_outcome_t o = DMR_TXN_GAVE_UP;
	ck_assert_int_eq(dmr_txn_start(&f.ctx[0], &t, &o), DMR_OK);
	ck_assert_int_eq(o, DMR_TXN_COMMITTED);
	ck_assert_int_eq(dmr_be_progress(f.be, UINT64_MAX), -1); /* nothing posted */
	/* running, then committed through on_wc */
	update_txn(&t, 3, 5);
	ck_assert_int_eq(dmr_txn_start(&f.ctx[0], &t, &o), DMR_OK);
	ck_assert_int_eq(o, DMR_TXN_RUNNING);
	int out[1] = {-1};
	drive(&f, out);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	/* an error: a status, the outcome untouched */
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'U', 0, 0, 3);
	dmr_trace_txn_op(&t, 'U', 0, 0, 3);
	o = (dmr_txn_outcome_t)77;
	ck_assert_int_eq(dmr_txn_start(&f.ctx[0], &t, &o), DMR_ERR_INVALID);
	ck_assert_int_eq(o, 77);
	/* a completion that is not this context's (another kind, another id) */
	dmr_wc_t wc = {.wr_id = dmr_wrid(DMR_WRID_WAKE, 0, f.ctx[0].seq)};
	ck_assert_int_eq(dmr_txn_on_wc(&f.ctx[0], &wc, &o), DMR_ERR_INVALID);
	ck_assert_int_eq(o, 77);
	ck_assert_msg(strstr(f.ctx[0].err.msg, "not this context's"), "%s", f.ctx[0].err.msg);
	wc.wr_id = dmr_wrid(DMR_WRID_TXN, 1, f.ctx[0].seq);
	ck_assert_int_eq(dmr_txn_on_wc(&f.ctx[0], &wc, &o), DMR_ERR_INVALID);
	ck_assert_int_eq(o, 77);
	fx_close(&f);
}
END_TEST

/* The wr_ids of a real run: kind TXN, the context id as index, the
 * doorbell sequence; the backoff timer before a retry too. */
START_TEST(wrid_encoding_through_a_txn_run)
{
	fixture_t f;
	fx_open(&f, single[_i], NULL, 2, 2);
	fx_engine(&f, 3, 2000000); /* 2 us backoff */
	fx_ctx(&f, 0, 0, 5);
	fx_ctx(&f, 1, 1, 9);
	static dmr_trace_txn_t a, b;
	update_txn(&a, 3, 1);
	update_txn(&b, 3, 1);
	int out[2] = {-1, -1};
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_start(&f.ctx[0], &a, &o), DMR_OK);
	ck_assert_int_eq(dmr_txn_start(&f.ctx[1], &b, &o), DMR_OK);
	drive(&f, out);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_int_eq(out[1], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(mem64(&f, dmr_layout_rec(&f.l, 0, 3) + 16), 2);
	ck_assert_uint_eq(f.bad_kind, 0);
	ck_assert_uint_eq(f.bad_index, 0);
	ck_assert_uint_eq(f.bad_seq, 0);
	/* a conflict: every retry came after its backoff timer */
	ck_assert_uint_ge(f.st.retries, 1);
	ck_assert_uint_eq(f.timers, f.st.retries);
	/* exec and commit doorbells of both, the retry's timer */
	ck_assert_uint_ge(f.wcs, 5);
	fx_close(&f);
}
END_TEST

/* ---- cluster-wide lock tags and log rings --------------------------- */

static dmr_be_role_t test_role;

static dmr_status_t role_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	if (op == DMR_BE_CTL_ROLE) {
		*(dmr_be_role_t *)arg = test_role;
		return DMR_OK;
	}
	return dmr_sim_ops.control(be, op, arg, err);
}

/* The sim, answering ROLE as CN `cn` whose worker 0 is cluster worker fw. */
static dmr_be_ops_t sim_as_cn(uint32_t cn, uint32_t fw)
{
	test_role = (dmr_be_role_t){.cn = cn, .cns = cn + 1, .first_worker = fw, .workers = fw + 2};
	dmr_be_ops_t t = dmr_sim_ops;
	t.name = "sim-as-cn";
	t.control = role_control;
	return t;
}

/* Run one update of slot 3 on context 0 (worker 1, id 1): the lock word
 * holds the tag after the exec round; returns the tag seen. */
static uint64_t run_update(fixture_t *f)
{
	static dmr_trace_txn_t t;
	update_txn(&t, 3, 5);
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_start(&f->ctx[0], &t, &o), DMR_OK);
	ck_assert_int_eq(o, DMR_TXN_RUNNING);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_progress(f->be, UINT64_MAX), 1);
	ck_assert_int_eq(dmr_be_poll(f->be, 1, &wc, 1), 1);
	uint64_t held = mem64(f, dmr_layout_rec(&f->l, 0, 3)); /* CAS done */
	int out[1] = {-1};
	handle(f, &wc, out);
	drive(f, out);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(mem64(f, dmr_layout_rec(&f->l, 0, 3)), 0); /* released */
	return held;
}

START_TEST(single_process_tags_and_rings_unchanged)
{
	fixture_t f;
	fx_open(&f, "sim", NULL, 2, 2);
	fx_engine(&f, 0, 0);
	ck_assert_uint_eq(f.eng.cn, 0);
	ck_assert_uint_eq(f.eng.first_worker, 0);
	fx_ctx(&f, 0, 1, 1);
	ck_assert_uint_eq(f.ctx[0].tag, 5); /* (1 + 1) << 1 | 1 */
	ck_assert_uint_eq(run_update(&f), 5);
	/* the log record (first word: the record's offset) in worker 1's ring */
	ck_assert_uint_eq(mem64(&f, f.l.log_base + 1 * f.l.log_bytes), dmr_layout_rec(&f.l, 0, 3));
	fx_close(&f);
}
END_TEST

START_TEST(role_names_tags_and_rings_over_the_cluster)
{
	fixture_t f;
	dmr_be_ops_t ops = sim_as_cn(3, 6);
	fx_open(&f, "sim", &ops, 2, 8); /* rings of the cluster's 8 workers */
	fx_engine(&f, 0, 0);
	ck_assert_uint_eq(f.eng.cn, 3);
	ck_assert_uint_eq(f.eng.first_worker, 6);
	fx_ctx(&f, 0, 1, 1);
	uint64_t tag = 5 + (3ull << DMR_TXN_TAG_CN_SHIFT);
	ck_assert_uint_eq(f.ctx[0].tag, tag);
	ck_assert_uint_eq(run_update(&f), tag);
	ck_assert_uint_eq(mem64(&f, dmr_layout_rec(&f.l, 0, 3) + 16), 5); /* applied */
	/* the log record is in cluster worker 7's ring, not in ring 1 */
	ck_assert_uint_eq(mem64(&f, f.l.log_base + 7 * f.l.log_bytes), dmr_layout_rec(&f.l, 0, 3));
	ck_assert_uint_eq(mem64(&f, f.l.log_base + 1 * f.l.log_bytes), 0);
	fx_close(&f);

	/* a CN index that does not fit the tag is refused */
	ops = sim_as_cn(1u << (63 - DMR_TXN_TAG_CN_SHIFT), 0);
	fx_open(&f, "sim", &ops, 2, 2);
	dmr_err_t err;
	ck_assert_int_eq(dmr_txn_engine_init(&f.eng, f.be, &f.l, 0, 0, &err), DMR_ERR_RANGE);
	ck_assert_msg(strstr(err.msg, "CN index"), "%s", err.msg);
	fx_close(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iface");
	TCase *tc = tcase_create("registry");
	tcase_add_test(tc, registry_fills_unset_ops_with_stubs);
	tcase_add_test(tc, registration_refuses_bad_tables);
	suite_add_tcase(s, tc);
	tc = tcase_create("control");
	tcase_add_test(tc, control_on_sim);
	tcase_add_test(tc, control_on_shm);
	tcase_add_loop_test(tc, barrier_of_a_single_process, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("txn");
	tcase_add_loop_test(tc, mr_dereg_pairs_mr_reg_over_a_run, 0, 2);
	tcase_add_test(tc, outcome_is_a_channel_of_its_own);
	tcase_add_loop_test(tc, wrid_encoding_through_a_txn_run, 0, 2);
	tcase_add_test(tc, single_process_tags_and_rings_unchanged);
	tcase_add_test(tc, role_names_tags_and_rings_over_the_cluster);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
