/*
 * replay/tools/bench_run.c - the benchmark's runner (bench.h): the session
 * (a backend with one registered buffer per worker), the WR pattern, and
 * the loop that keeps `depth` WRs outstanding per QP, driven (sim) or
 * polled in a spin loop with one thread per QP (shm, verbs). wr_ids are
 * DMR_WRID_BENCH with the WR's sequence number in its QP (core/base/wrid.h).
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/model.h"
#include "../../core/base/timeps.h"
#include "../../core/base/wrid.h"
#include "bench_impl.h"
#ifdef DMR_HAVE_VERBS
#include "../../backends/verbs/verbs.h"
#endif

/* ---- session ------------------------------------------------------------- */

void dmr_bench_session_close(dmr_bench_session_t *s)
{
	if (!s)
		return;
	dmr_be_close(s->be);
	if (s->local)
		for (uint32_t i = 0; i < s->workers; i++)
			free(s->local[i]);
	free(s->local);
	memset(s, 0, sizeof(*s));
}

dmr_status_t dmr_bench_session_open(dmr_bench_session_t *s_p, const dmr_bench_target_t *t,
				    uint32_t workers, uint64_t mr_size, size_t local_len,
				    dmr_err_t *err)
{
	int sim = strcmp(dmr_be_base_name(t->backend), "sim") == 0;
	if (t->mtu && !sim)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "mtu: only the sim's path MTU can be set (backend %s uses its "
				   "ports' active MTU)",
				   t->backend);
	if (t->mtu && !bench_is_ib_mtu(t->mtu))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "mtu: %u is not an IB MTU (256, 512, 1024, 2048, 4096)", t->mtu);
	dmr_bench_session_t s;
	memset(&s, 0, sizeof(s));
	dmr_be_config_t cfg = {.backend = t->backend,
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = bench_round_up(mr_size ? mr_size : 4096, 4096),
			       .seed = 1,
			       .profile = t->profile,
			       .device = t->device,
			       .port = t->port,
			       .gid_index = t->gid_index};
	dmr_status_t st = dmr_be_open(&cfg, &s.be, err);
	if (st != DMR_OK)
		return st;
	s.driven = (s.be->ops->caps & DMR_BE_CAP_DRIVEN) != 0;
	s.workers = workers;
	s.mr_size = cfg.mr_size;
	s.local_len = bench_round_up(local_len ? local_len : 64, 64);
	uint32_t mtu = t->mtu;
	if (sim && mtu && dmr_be_control(s.be, DMR_BE_CTL_SET_MTU, &mtu, NULL) != DMR_OK) {
		st = dmr_err_set(err, DMR_ERR_INVALID, "mtu: %u rejected by the sim", t->mtu);
		goto fail;
	}
	s.local = calloc(workers, sizeof(*s.local));
	if (!s.local) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "bench: out of memory");
		goto fail;
	}
	for (uint32_t w = 0; w < workers; w++) {
		void *p = NULL;
		if (posix_memalign(&p, 64, s.local_len) != 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "bench: cannot allocate %zu bytes",
					 s.local_len);
			goto fail;
		}
		memset(p, 0x5a, s.local_len);
		s.local[w] = p;
		if ((st = dmr_be_mr_reg(s.be, w, p, s.local_len, err)) != DMR_OK)
			goto fail;
	}
	const dmr_model_t *m = NULL; /* set only on DMR_OK (UNSUPPORTED: no model) */
	(void)dmr_be_control(s.be, DMR_BE_CTL_MODEL, &m, NULL);
	s.model = m;
	if (m) {
		s.mtu = m->mtu;
		snprintf(s.desc, sizeof(s.desc), "sim (profile %s, MTU %u)", m->name, m->mtu);
	} else {
#ifdef DMR_HAVE_VERBS
		/* the bare handle only: a wrapper's (fault:, record:) is not
		 * the verbs backend's own */
		if (strcmp(t->backend, "verbs") == 0) {
			dmr_verbs_info_t vi;
			dmr_verbs_info(s.be, &vi);
			s.mtu = vi.path_mtu;
			snprintf(s.desc, sizeof(s.desc),
				 "verbs (%s port %d, GID %d %s, path MTU %u)", vi.device, vi.port,
				 vi.gid_index, vi.ip, vi.path_mtu);
		}
#endif
		if (!s.desc[0])
			snprintf(s.desc, sizeof(s.desc), "%s", t->backend);
	}
	*s_p = s;
	return DMR_OK;
fail:
	dmr_bench_session_close(&s);
	return st;
}

/* ---- one run --------------------------------------------------------------- */

/* perftest's cycle buffer: addresses advance by the size rounded up to the
 * 64-byte cache line and wrap every cycle_buffer bytes; a size above half
 * of it uses one buffer (perftest_resources.c increase_rem_addr / _loc_addr,
 * applied only when size <= cycle_buffer / 2). Slots in the cycle; 0 = off. */
uint64_t dmr_bench_cycle_slots(const dmr_bench_spec_t *sp, uint64_t *inc_p)
{
	if (!sp->cycle_buffer)
		return 0;
	uint64_t size = bench_is_atomic(sp->opcode) ? 8 : sp->size;
	uint64_t inc = bench_round_up(size ? size : 1, 64);
	*inc_p = inc;
	return size <= sp->cycle_buffer / 2 ? sp->cycle_buffer / inc : 1;
}

/* Local bytes per outstanding WR: the size (atomics 8) rounded up to 8. */
static uint64_t bench_slot(const dmr_bench_spec_t *sp)
{
	return bench_round_up(bench_is_atomic(sp->opcode) || sp->size < 8 ? 8 : sp->size, 8);
}

uint64_t dmr_bench_mr_need(const dmr_bench_spec_t *sp)
{
	uint64_t bytes = (uint64_t)sp->depth * (sp->size ? sp->size : 1);
	uint64_t region = bench_is_atomic(sp->opcode) ? 4096 : bench_round_up(bytes, 4096);
	uint64_t inc = 0, n = dmr_bench_cycle_slots(sp, &inc);
	if (n)
		region = bench_round_up(n * inc, 4096);
	return (uint64_t)(sp->qps ? sp->qps : 1) * region;
}

size_t dmr_bench_local_need(const dmr_bench_spec_t *sp)
{
	uint64_t slot = bench_slot(sp);
	uint64_t need = slot * sp->depth, inc = 0, n = dmr_bench_cycle_slots(sp, &inc);
	if (n)
		need = n * inc;
	return (size_t)bench_round_up(need, 64);
}

typedef struct bq {
	uint32_t w;
	uint64_t target; /* WRs to complete: iters, or fewer once max_s passed */
	uint64_t posted, done;
	uint64_t *tp, *tc; /* tposted, tcompleted, ps */
	uint8_t *local;
	uint64_t rbase;
	dmr_status_t st;
	dmr_err_t err;
} bq_t;

typedef struct brun {
	dmr_bench_session_t *s;
	const dmr_bench_spec_t *sp;
	bq_t *q;
	uint64_t slot;	 /* local bytes per outstanding WR */
	uint64_t region; /* remote bytes per QP */
	uint64_t timeout_ps;
	uint64_t max_ps;    /* stop posting this long after the first post (0: never) */
	uint64_t left;	    /* DRIVEN: WRs still to complete over all QPs */
	atomic_int stop;    /* a QP failed: the others give up */
	atomic_int go;	    /* threads start together */
	uint32_t cq_mod;    /* signal one WR in cq_mod, and the last (perftest --cq-mod) */
	uint32_t post_list; /* WRs per post, one doorbell (perftest --post_list) */
	uint64_t cycle_slots, cycle_inc; /* spec cycle_buffer: slots and stride (0: off) */
} brun_t;

/* WR i is signaled: the last of every cq_mod, and the run's last. */
static int bq_signaled(const brun_t *r, const bq_t *q, uint64_t i)
{
	uint32_t c = r->cq_mod;
	return i % c == c - 1 || i + 1 == q->target;
}

static void bq_fill_wr(brun_t *r, bq_t *q, uint64_t i, dmr_wr_t *wr)
{
	const dmr_bench_spec_t *sp = r->sp;
	if (r->cycle_slots) { /* perftest's address pattern (cycle_slots) */
		uint64_t off = (i % r->cycle_slots) * r->cycle_inc;
		*wr = (dmr_wr_t){.wr_id = dmr_wrid_n(DMR_WRID_BENCH, i),
				 .local = q->local + off,
				 .remote = sp->same_addr ? 0 : q->rbase + off,
				 .length = bench_is_atomic(sp->opcode) ? 8 : sp->size,
				 .opcode = sp->opcode,
				 .compare_add = sp->opcode == DMR_WR_FAA ? 1 : 0,
				 .swap = i + 1};
		return;
	}
	uint64_t k = i % sp->depth;
	*wr = (dmr_wr_t){.wr_id = dmr_wrid_n(DMR_WRID_BENCH, i),
			 .local = q->local + k * r->slot,
			 .opcode = sp->opcode};
	switch (sp->opcode) {
	case DMR_WR_READ:
	case DMR_WR_WRITE:
		wr->length = sp->size;
		wr->remote = q->rbase + k * sp->size;
		break;
	case DMR_WR_CAS:
		wr->length = 8;
		wr->remote = sp->same_addr ? 0 : q->rbase + (i % BENCH_ATOMIC_WORDS) * 8;
		wr->compare_add = 0;
		wr->swap = i + 1;
		break;
	default:
		wr->length = 8;
		wr->remote = sp->same_addr ? 0 : q->rbase + (i % BENCH_ATOMIC_WORDS) * 8;
		wr->compare_add = 1;
		break;
	}
}

/* Post up to `room` WRs (at most post_list) with one doorbell. */
static dmr_status_t bq_post(brun_t *r, bq_t *q, uint64_t room, dmr_err_t *err)
{
	uint64_t now = dmr_be_now(r->s->be, q->w);
	if (r->max_ps && q->posted >= BENCH_MIN_CAPPED && now - q->tp[0] > r->max_ps &&
	    q->target > q->posted + 1) {
		if (r->s->driven) /* one thread: the DRIVEN loop's count */
			r->left -= q->target - (q->posted + 1);
		q->target = q->posted + 1; /* time is up: this WR is the last (signaled) */
	}
	uint64_t n = r->post_list;
	if (n > room)
		n = room;
	if (n > q->target - q->posted)
		n = q->target - q->posted;
	dmr_wr_t wrs[BENCH_MAX_POST_LIST];
	for (uint64_t j = 0; j < n; j++) {
		uint64_t i = q->posted + j;
		bq_fill_wr(r, q, i, &wrs[j]);
		wrs[j].flags = bq_signaled(r, q, i) ? DMR_WR_SIGNALED : 0;
		q->tp[i] = now;
	}
	dmr_status_t st = dmr_be_post(r->s->be, q->w, 0, wrs, (uint32_t)n, err);
	if (st != DMR_OK)
		return st;
	q->posted += n;
	return DMR_OK;
}

static dmr_status_t bq_refill(brun_t *r, bq_t *q, dmr_err_t *err)
{
	while (q->posted < q->target && q->posted - q->done < r->sp->depth) {
		dmr_status_t st = bq_post(r, q, r->sp->depth - (q->posted - q->done), err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* A signaled WR's completion completes it and the unsignaled WRs before it. */
static dmr_status_t bq_complete(brun_t *r, bq_t *q, const dmr_wc_t *wc, uint64_t t, dmr_err_t *err)
{
	uint64_t i = dmr_wrid_get_n(wc->wr_id); /* the WR's sequence number */
	if (wc->status != DMR_WC_SUCCESS)
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "bench: %s WR %" PRIu64 " on QP %u completed with status %s",
				   dmr_wr_opcode_string(wc->opcode), i, q->w,
				   dmr_wc_status_string(wc->status));
	if (dmr_wrid_kind(wc->wr_id) != DMR_WRID_BENCH || i < q->done || i >= q->posted ||
	    !bq_signaled(r, q, i))
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "bench: QP %u: completion for wr_id %" PRIu64
				   ", expected the next signaled WR after %" PRIu64
				   " (RC completions come in posting order)",
				   q->w, i, q->done);
	while (q->done <= i)
		q->tc[q->done++] = t;
	return DMR_OK;
}

/* DRIVEN backends: one loop over all QPs, advanced by progress(). */
static dmr_status_t run_driven(brun_t *r, dmr_err_t *err)
{
	const dmr_bench_spec_t *sp = r->sp;
	dmr_be_t *be = r->s->be;
	dmr_status_t st;
	for (uint32_t k = 0; k < sp->qps; k++)
		if ((st = bq_refill(r, &r->q[k], err)) != DMR_OK)
			return st;
	uint64_t total = sp->iters * sp->qps;
	dmr_wc_t wc[BENCH_POLL_MAX];
	while (r->left > 0) {
		int w = dmr_be_progress(be, UINT64_MAX);
		if (w < 0)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "bench: %s: no event left with %" PRIu64 " of %" PRIu64
					   " WRs not completed",
					   be->ops->name, r->left, total);
		int n = dmr_be_poll(be, (uint32_t)w, wc, BENCH_POLL_MAX);
		if ((uint32_t)w >= sp->qps) {
			if (n > 0)
				return dmr_err_set(
				    err, DMR_ERR_REMOTE,
				    "bench: completion for worker %d, not in the run", w);
			continue;
		}
		bq_t *q = &r->q[w];
		uint64_t t = dmr_be_now(be, (uint32_t)w), before = q->done;
		for (int i = 0; i < n; i++)
			if ((st = bq_complete(r, q, &wc[i], t, err)) != DMR_OK)
				return st;
		r->left -= q->done - before;
		if ((st = bq_refill(r, q, err)) != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* Threaded backends: one QP polled in a spin loop, with a deadline. */
static dmr_status_t run_qp_spin(brun_t *r, bq_t *q, dmr_err_t *err)
{
	dmr_be_t *be = r->s->be;
	dmr_status_t st = bq_refill(r, q, err);
	if (st != DMR_OK)
		return st;
	dmr_wc_t wc[BENCH_POLL_MAX];
	uint64_t last = dmr_be_now(be, q->w);
	uint32_t spins = 0;
	while (q->done < q->target) {
		int n = dmr_be_poll(be, q->w, wc, BENCH_POLL_MAX);
		if (n <= 0) {
			if ((++spins & 1023) == 0) {
				if (atomic_load_explicit(&r->stop, memory_order_relaxed))
					return dmr_err_set(
					    err, DMR_ERR_TIMEOUT,
					    "bench: QP %u stopped: another QP failed", q->w);
				uint64_t now = dmr_be_now(be, q->w);
				if (now - last > r->timeout_ps)
					return dmr_err_set(
					    err, DMR_ERR_TIMEOUT,
					    "bench: %s: no completion on QP %u for %.1f s with "
					    "%" PRIu64 " %s WRs outstanding",
					    be->ops->name, q->w, dmr_ps_to_s(r->timeout_ps),
					    q->posted - q->done,
					    dmr_wr_opcode_string(r->sp->opcode));
			}
			continue;
		}
		uint64_t t = dmr_be_now(be, q->w);
		last = t;
		spins = 0;
		for (int i = 0; i < n; i++)
			if ((st = bq_complete(r, q, &wc[i], t, err)) != DMR_OK)
				return st;
		if ((st = bq_refill(r, q, err)) != DMR_OK)
			return st;
	}
	return DMR_OK;
}

typedef struct thr_arg {
	brun_t *r;
	bq_t *q;
} thr_arg_t;

static void *qp_thread_main(void *arg)
{
	thr_arg_t *a = arg;
	while (!atomic_load(&a->r->go))
		sched_yield();
	if (atomic_load(&a->r->stop)) {
		a->q->st = dmr_err_set(&a->q->err, DMR_ERR_TIMEOUT,
				       "bench: QP %u stopped: another QP failed", a->q->w);
		return NULL;
	}
	a->q->st = run_qp_spin(a->r, a->q, &a->q->err);
	if (a->q->st != DMR_OK)
		atomic_store(&a->r->stop, 1);
	return NULL;
}

static dmr_status_t run_threaded(brun_t *r, dmr_err_t *err)
{
	uint32_t n = r->sp->qps;
	if (n == 1)
		return run_qp_spin(r, &r->q[0], err);
	pthread_t *th = calloc(n, sizeof(*th));
	thr_arg_t *ta = calloc(n, sizeof(*ta));
	if (!th || !ta) {
		free(th);
		free(ta);
		return dmr_err_set(err, DMR_ERR_NOMEM, "bench: out of memory");
	}
	uint32_t started = 0;
	dmr_status_t st = DMR_OK;
	for (; started < n; started++) {
		ta[started] = (thr_arg_t){.r = r, .q = &r->q[started]};
		if (pthread_create(&th[started], NULL, qp_thread_main, &ta[started]) != 0)
			break;
	}
	if (started < n) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "bench: cannot start thread %u of %u", started,
				 n);
		atomic_store(&r->stop, 1);
	}
	atomic_store(&r->go, 1);
	for (uint32_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (st == DMR_OK) {
		/* report the first failure that is not a mere stop */
		for (uint32_t i = 0; i < n && st == DMR_OK; i++)
			if (r->q[i].st != DMR_OK && !strstr(r->q[i].err.msg, "another QP failed")) {
				st = r->q[i].st;
				if (err)
					*err = r->q[i].err;
			}
		for (uint32_t i = 0; i < n && st == DMR_OK; i++)
			if (r->q[i].st != DMR_OK) {
				st = r->q[i].st;
				if (err)
					*err = r->q[i].err;
			}
	}
	free(th);
	free(ta);
	return st;
}

/* dmr_bench_run with perftest's selective signalling (one WR in cq_mod, and
 * the last) and post lists (post_list WRs per doorbell, fewer when the queue
 * has less room); a completion completes its WR and the unsignaled ones
 * before it, which get its time as tcompleted. dmr_bench_run is cq_mod 1,
 * post_list 1. */
dmr_status_t dmr_bench_run_sel(dmr_bench_session_t *s, const dmr_bench_spec_t *sp, uint32_t cq_mod,
			       uint32_t post_list, dmr_bench_result_t *res_p, dmr_err_t *err)
{
	if (sp->opcode > DMR_WR_FAA)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "bench: opcode %u is not READ/WRITE/CAS/FAA", sp->opcode);
	if (sp->qps == 0 || sp->qps > s->workers)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "bench: %u QPs; the session has %u workers", sp->qps,
				   s->workers);
	if (sp->depth == 0 || sp->depth > BENCH_MAX_DEPTH)
		return dmr_err_set(err, DMR_ERR_INVALID, "bench: depth %u out of range (1..%u)",
				   sp->depth, BENCH_MAX_DEPTH);
	if (sp->iters < (sp->latency ? 4u : 2u) || sp->iters > BENCH_MAX_ITERS)
		return dmr_err_set(err, DMR_ERR_INVALID, "bench: %" PRIu64 " iterations (%u..%llu)",
				   sp->iters, sp->latency ? 4u : 2u, BENCH_MAX_ITERS);
	if (!bench_is_atomic(sp->opcode) && (sp->size == 0 || sp->size > BENCH_MAX_SIZE))
		return dmr_err_set(err, DMR_ERR_INVALID, "bench: size %u out of range (1..%u)",
				   sp->size, BENCH_MAX_SIZE);
	if (cq_mod == 0 || post_list == 0 || cq_mod > sp->depth || post_list > sp->depth)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "bench: cq_mod %u and post_list %u must be 1..depth (%u)",
				   cq_mod, post_list, sp->depth);
	if (sp->latency && (sp->depth != 1 || sp->qps != 1))
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "bench: latency mode runs one QP at depth 1 (asked %u QPs, depth %u)", sp->qps,
		    sp->depth);
	if (dmr_bench_mr_need(sp) > s->mr_size || dmr_bench_local_need(sp) > s->local_len)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "bench: needs %" PRIu64 " bytes of MN region and %zu of local "
				   "buffer per QP; the session has %" PRIu64 " and %zu",
				   dmr_bench_mr_need(sp), dmr_bench_local_need(sp), s->mr_size,
				   s->local_len);
	brun_t r;
	memset(&r, 0, sizeof(r));
	r.s = s;
	r.sp = sp;
	r.cq_mod = cq_mod;
	r.post_list = post_list;
	r.slot = bench_slot(sp);
	r.cycle_slots = dmr_bench_cycle_slots(sp, &r.cycle_inc);
	r.region = dmr_bench_mr_need(sp) / sp->qps;
	r.timeout_ps = dmr_ps_from_s(sp->timeout_s > 0 ? sp->timeout_s : 10.0);
	r.max_ps = !s->driven && sp->max_s > 0 ? dmr_ps_from_s(sp->max_s) : 0;
	if (sp->duration_s > 0) /* perftest -D: on every backend */
		r.max_ps = dmr_ps_from_s(sp->duration_s);
	r.left = sp->iters * sp->qps;
	atomic_init(&r.stop, 0);
	atomic_init(&r.go, 0);
	r.q = calloc(sp->qps, sizeof(*r.q));
	dmr_status_t st = DMR_OK;
	if (!r.q) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "bench: out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < sp->qps; k++) {
		bq_t *q = &r.q[k];
		q->w = k;
		q->target = sp->iters;
		q->local = s->local[k];
		q->rbase = k * r.region;
		q->tp = malloc(sp->iters * sizeof(uint64_t));
		q->tc = malloc(sp->iters * sizeof(uint64_t));
		if (!q->tp || !q->tc) {
			st = dmr_err_set(err, DMR_ERR_NOMEM,
					 "bench: out of memory for %" PRIu64 " timestamps",
					 sp->iters);
			goto out;
		}
	}
	double m0 = dmr_wall_s();
	st = s->driven ? run_driven(&r, err) : run_threaded(&r, err);
	double m1 = dmr_wall_s();
	if (st != DMR_OK)
		goto out;

	dmr_bench_result_t res;
	memset(&res, 0, sizeof(res));
	uint64_t t0 = UINT64_MAX, t1 = 0, total = 0;
	for (uint32_t k = 0; k < sp->qps; k++) {
		const bq_t *q = &r.q[k];
		if (q->tp[0] < t0)
			t0 = q->tp[0];
		if (q->tc[q->done - 1] > t1)
			t1 = q->tc[q->done - 1];
		total += q->done;
	}
	double bytes = bench_is_atomic(sp->opcode) ? 8 : sp->size;
	uint64_t span = t1 > t0 ? t1 - t0 : 1;
	res.iters = total;
	res.seconds = dmr_ps_to_s(span);
	res.bw_avg_gbps = bytes * 8 * (double)res.iters / res.seconds / 1e9;
	res.msg_rate_mpps = (double)res.iters / res.seconds / 1e6;
	res.mono_seconds = s->driven ? NAN : m1 - m0;
	if (sp->qps == 1) {
		double per = dmr_bench_min_per_wr_ps(r.q[0].tp, r.q[0].tc, r.q[0].done);
		res.bw_peak_gbps = per > 0 ? bytes * 8 * 1e3 / per : NAN;
	} else {
		res.bw_peak_gbps = NAN;
	}
	if (sp->latency)
		dmr_bench_lat_stats(r.q[0].tp, r.q[0].done, &res);
	else
		res.t_min_us = res.t_max_us = res.t_typical_us = res.t_avg_us = res.t_stdev_us =
		    res.t_p99_us = res.t_p999_us = NAN;
	*res_p = res;
out:
	if (r.q)
		for (uint32_t k = 0; k < sp->qps; k++) {
			free(r.q[k].tp);
			free(r.q[k].tc);
		}
	free(r.q);
	return st;
}

dmr_status_t dmr_bench_run(dmr_bench_session_t *s, const dmr_bench_spec_t *sp,
			   dmr_bench_result_t *res_p, dmr_err_t *err)
{
	return dmr_bench_run_sel(s, sp, 1, 1, res_p, err);
}
