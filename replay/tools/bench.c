/*
 * replay/tools/bench.c - perftest-style micro-benchmarks through the backend
 * interface; see bench.h for the contract and the figures' definitions.
 */
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../backends/sim/sim.h"
#ifdef DMR_HAVE_VERBS
#include "../../backends/verbs/verbs.h"
#endif

#define BENCH_ATOMIC_WORDS 512u /* perftest's 4 KiB cycle buffer of 8-byte words */
#define BENCH_POLL_MAX 64
#define BENCH_MAX_SIZE (1u << 30)
#define BENCH_MAX_DEPTH 1024u
#define BENCH_MAX_ITERS 10000000ull
#define BENCH_LAT_TAIL 2    /* perftest LAT_MEASURE_TAIL */
#define BENCH_MIN_CAPPED 16 /* WRs per QP posted before max_s may stop a run */
#define BENCH_MAX_POST_LIST BENCH_MAX_DEPTH

static uint64_t round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static int is_atomic(uint8_t opc)
{
	return opc == DMR_WR_CAS || opc == DMR_WR_FAA;
}

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
	int sim = strcmp(t->backend, "sim") == 0;
	if (t->mtu && !sim)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "mtu: only the sim's path MTU can be set (backend %s uses its "
				   "ports' active MTU)",
				   t->backend);
	if (t->mtu && t->mtu != 256 && t->mtu != 512 && t->mtu != 1024 && t->mtu != 2048 &&
	    t->mtu != 4096)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "mtu: %u is not an IB MTU (256, 512, 1024, 2048, 4096)", t->mtu);
	dmr_bench_session_t s;
	memset(&s, 0, sizeof(s));
	dmr_be_config_t cfg = {.backend = t->backend,
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = round_up(mr_size ? mr_size : 4096, 4096),
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
	s.local_len = round_up(local_len ? local_len : 64, 64);
	if (sim && t->mtu && dmr_sim_set_mtu(s.be, t->mtu) != DMR_OK) {
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
	const dmr_model_t *m = dmr_sim_model(s.be);
	if (m) {
		s.mtu = m->mtu;
		snprintf(s.desc, sizeof(s.desc), "sim (profile %s, MTU %u)", m->name, m->mtu);
	} else {
#ifdef DMR_HAVE_VERBS
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
static uint64_t cycle_slots(const dmr_bench_spec_t *sp, uint64_t *inc_p)
{
	if (!sp->cycle_buffer)
		return 0;
	uint64_t size = is_atomic(sp->opcode) ? 8 : sp->size;
	uint64_t inc = round_up(size ? size : 1, 64);
	*inc_p = inc;
	return size <= sp->cycle_buffer / 2 ? sp->cycle_buffer / inc : 1;
}

uint64_t dmr_bench_mr_need(const dmr_bench_spec_t *sp)
{
	uint64_t region = is_atomic(sp->opcode)
			      ? 4096
			      : round_up((uint64_t)sp->depth * (sp->size ? sp->size : 1), 4096);
	uint64_t inc = 0, n = cycle_slots(sp, &inc);
	if (n)
		region = round_up(n * inc, 4096);
	return (uint64_t)(sp->qps ? sp->qps : 1) * region;
}

size_t dmr_bench_local_need(const dmr_bench_spec_t *sp)
{
	uint64_t slot = round_up(is_atomic(sp->opcode) || sp->size < 8 ? 8 : sp->size, 8);
	uint64_t need = slot * sp->depth, inc = 0, n = cycle_slots(sp, &inc);
	if (n)
		need = n * inc;
	return (size_t)round_up(need, 64);
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
	uint64_t max_ps; /* threaded: stop posting this long after the first post (0: never) */
	atomic_int stop; /* a QP failed: the others give up */
	atomic_int go;	 /* threads start together */
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
		*wr = (dmr_wr_t){.wr_id = i,
				 .local = q->local + off,
				 .remote = sp->same_addr ? 0 : q->rbase + off,
				 .length = is_atomic(sp->opcode) ? 8 : sp->size,
				 .opcode = sp->opcode,
				 .compare_add = sp->opcode == DMR_WR_FAA ? 1 : 0,
				 .swap = i + 1};
		return;
	}
	uint64_t k = i % sp->depth;
	*wr = (dmr_wr_t){.wr_id = i, .local = q->local + k * r->slot, .opcode = sp->opcode};
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
	    q->target > q->posted + 1)
		q->target = q->posted + 1; /* time is up: this WR is the last (signaled) */
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
static dmr_status_t bq_complete(brun_t *r, bq_t *q, const dmr_wc_t *wc, uint64_t t,
				dmr_err_t *err)
{
	if (wc->status != DMR_WC_SUCCESS)
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "bench: %s WR %" PRIu64 " on QP %u completed with status %s",
				   dmr_wr_opcode_string(wc->opcode), wc->wr_id, q->w,
				   dmr_wc_status_string(wc->status));
	if (wc->wr_id < q->done || wc->wr_id >= q->posted || !bq_signaled(r, q, wc->wr_id))
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "bench: QP %u: completion for wr_id %" PRIu64
				   ", expected the next signaled WR after %" PRIu64
				   " (RC completions come in posting order)",
				   q->w, wc->wr_id, q->done);
	while (q->done <= wc->wr_id)
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
	uint64_t total = sp->iters * sp->qps, done = 0;
	dmr_wc_t wc[BENCH_POLL_MAX];
	while (done < total) {
		int w = dmr_be_progress(be, UINT64_MAX);
		if (w < 0)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "bench: %s: no event left with %" PRIu64 " of %" PRIu64
					   " WRs not completed",
					   be->ops->name, total - done, total);
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
		done += q->done - before;
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
					    be->ops->name, q->w, r->timeout_ps / 1e12,
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

/* min over i <= j of (tc[j] - tp[i]) / (j - i + 1), exactly, by Dinkelbach's
 * iteration: g(t) = min (tc[j] - tp[i] - t (j - i + 1)) is found in one pass
 * for a given t (best i for each j = argmax of tp[i] - t i); the pair that
 * attains it gives a smaller ratio until g(t) = 0. */
static double min_per_wr_ps(const uint64_t *tp, const uint64_t *tc, uint64_t n)
{
	double t = (double)(tc[n - 1] - tp[0]) / (double)n;
	for (int it = 0; it < 200; it++) {
		double best = 0, maxa = -INFINITY;
		uint64_t ai = 0, bi = 0, bj = 0;
		int found = 0;
		for (uint64_t j = 0; j < n; j++) {
			double a = (double)tp[j] - t * (double)j;
			if (a > maxa) {
				maxa = a;
				ai = j;
			}
			double g = (double)tc[j] - t * (double)(j + 1) - maxa;
			if (g < best) {
				best = g;
				bi = ai;
				bj = j;
				found = 1;
			}
		}
		if (!found)
			break;
		double nt = (double)(tc[bj] - tp[bi]) / (double)(bj - bi + 1);
		if (!(nt < t))
			break;
		t = nt;
	}
	return t;
}

/* perftest print_report_lat over tposted deltas. */
static void lat_stats(const uint64_t *tp, uint64_t iters, dmr_bench_result_t *r)
{
	size_t m = (size_t)iters - 1;
	double *d = malloc(m * sizeof(*d));
	if (!d) {
		r->t_min_us = r->t_max_us = r->t_typical_us = r->t_avg_us = r->t_stdev_us =
		    r->t_p99_us = r->t_p999_us = NAN;
		return;
	}
	for (size_t i = 0; i < m; i++)
		d[i] = (double)(tp[i + 1] - tp[i]) / 1e6;
	gsl_sort(d, 1, m);
	size_t keep = m > BENCH_LAT_TAIL + 1 ? m - BENCH_LAT_TAIL : m;
	double median = (keep - 1) % 2 ? (d[keep / 2] + d[keep / 2 - 1]) / 2 : d[keep / 2];
	double avg = gsl_stats_mean(d, 1, keep);
	size_t i99 = (size_t)ceil(keep * 0.99), i999 = (size_t)ceil(keep * 0.999);
	r->t_min_us = d[0];
	r->t_max_us = d[keep < m ? keep : m - 1];
	r->t_typical_us = median;
	r->t_avg_us = avg;
	r->t_stdev_us = gsl_stats_sd_with_fixed_mean(d, 1, keep, avg); /* population, as perftest */
	r->t_p99_us = d[i99 < m ? i99 : m - 1];
	r->t_p999_us = d[i999 < m ? i999 : m - 1];
	free(d);
}

/* dmr_bench_run with perftest's selective signalling (one WR in cq_mod, and
 * the last) and post lists (post_list WRs per doorbell, fewer when the queue
 * has less room); a completion completes its WR and the unsignaled ones
 * before it, which get its time as tcompleted. dmr_bench_run is cq_mod 1,
 * post_list 1. */
static dmr_status_t bench_run_sel(dmr_bench_session_t *s, const dmr_bench_spec_t *sp,
				  uint32_t cq_mod, uint32_t post_list, dmr_bench_result_t *res_p,
				  dmr_err_t *err)
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
	if (!is_atomic(sp->opcode) && (sp->size == 0 || sp->size > BENCH_MAX_SIZE))
		return dmr_err_set(err, DMR_ERR_INVALID, "bench: size %u out of range (1..%u)",
				   sp->size, BENCH_MAX_SIZE);
	if (cq_mod == 0 || post_list == 0 || cq_mod > sp->depth || post_list > sp->depth)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "bench: cq_mod %u and post_list %u must be 1..depth (%u)", cq_mod,
				   post_list, sp->depth);
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
	r.slot = round_up(is_atomic(sp->opcode) || sp->size < 8 ? 8 : sp->size, 8);
	r.cycle_slots = cycle_slots(sp, &r.cycle_inc);
	r.region = dmr_bench_mr_need(sp) / sp->qps;
	r.timeout_ps = (uint64_t)((sp->timeout_s > 0 ? sp->timeout_s : 10.0) * 1e12);
	r.max_ps = !s->driven && sp->max_s > 0 ? (uint64_t)(sp->max_s * 1e12) : 0;
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
	struct timespec m0, m1;
	clock_gettime(CLOCK_MONOTONIC, &m0);
	st = s->driven ? run_driven(&r, err) : run_threaded(&r, err);
	clock_gettime(CLOCK_MONOTONIC, &m1);
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
	double bytes = is_atomic(sp->opcode) ? 8 : sp->size;
	uint64_t span = t1 > t0 ? t1 - t0 : 1;
	res.iters = total;
	res.seconds = span / 1e12;
	res.bw_avg_gbps = bytes * 8 * (double)res.iters / res.seconds / 1e9;
	res.msg_rate_mpps = (double)res.iters / res.seconds / 1e6;
	res.mono_seconds = s->driven ? NAN
				     : (double)(m1.tv_sec - m0.tv_sec) + (m1.tv_nsec - m0.tv_nsec) / 1e9;
	if (sp->qps == 1) {
		double per = min_per_wr_ps(r.q[0].tp, r.q[0].tc, r.q[0].done);
		res.bw_peak_gbps = per > 0 ? bytes * 8 * 1e3 / per : NAN;
	} else {
		res.bw_peak_gbps = NAN;
	}
	if (sp->latency)
		lat_stats(r.q[0].tp, r.q[0].done, &res);
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
	return bench_run_sel(s, sp, 1, 1, res_p, err);
}

#define RULE                                                                                       \
	"---------------------------------------------------------------------------------------"  \
	"\n"

void dmr_bench_print(const dmr_bench_spec_t *sp, const dmr_bench_result_t *r, void *file)
{
	FILE *f = file;
	unsigned long bytes = is_atomic(sp->opcode) ? 8ul : sp->size;
	fputs(RULE, f);
	if (sp->latency) {
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
			   "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
			   "percentile[usec] \n");
		fprintf(f,
			" %-7lu %-10" PRIu64
			"  %-7.2f        %-7.2f      %-7.2f          %-7.2f        "
			"%-7.2f         %-7.2f                %-7.2f\n",
			bytes, r->iters, r->t_min_us, r->t_max_us, r->t_typical_us, r->t_avg_us,
			r->t_stdev_us, r->t_p99_us, r->t_p999_us);
	} else {
		fprintf(f, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
			   "MsgRate[Mpps]\n");
		fprintf(f,
			" %-7lu    %-10" PRIu64
			"     %-7.2f            %-7.2f              %-7.6f\n",
			bytes, r->iters, r->bw_peak_gbps, r->bw_avg_gbps, r->msg_rate_mpps);
	}
	fputs(RULE, f);
}

/* ---- command line ------------------------------------------------------- */

static void bench_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay bench read|write|cas|faa [options]\n\n"
	    "perftest-style micro-benchmark through the backend interface: one worker,\n"
	    "one QP to the MN, `depth` WRs outstanding, one WR in `cq-mod` signaled,\n"
	    "`post-list` WRs per post (one doorbell).\n\n"
	    "  --backend B     sim (default), shm, verbs\n"
	    "  --profile P     sim: hardware profile (default cx6dx-100g)\n"
	    "  --mtu M         sim: path MTU (256, 512, 1024, 2048, 4096; default the profile's)\n"
	    "  --device D      verbs: device name or index (default index 0)\n"
	    "  --port N        verbs: port (default 1)\n"
	    "  --gid-index G   verbs: GID index (default: automatic RoCEv2 IPv4 GID)\n"
	    "  --size B        bytes per READ/WRITE (1..1073741824; default 65536, latency 2);\n"
	    "                  cas/faa are 8 bytes\n"
	    "  --depth D       outstanding WRs (1..1024; default 16; latency mode: 1)\n"
	    "  --iters N       WRs (5..10000000; default 5000, latency 1000)\n"
	    "  --latency       latency mode (perftest *_lat columns), depth 1\n"
	    "  --cq-mod N      signal one WR in N (and the last), as perftest --cq-mod\n"
	    "                  (1..1024; default 100, clamped to depth; latency mode: 1)\n"
	    "  --post-list N   WRs per post, one doorbell each (1..1024, clamped to depth;\n"
	    "                  default 1; latency mode: 1)\n"
	    "  --same-addr     cas/faa: every WR on one 8-byte word (default: 512 words)\n"	    "  --cycle-buffer B  perftest's address pattern: WR i at (i mod (B / inc)) x inc,\n"
	    "                  local and remote, inc = size rounded up to 64; one buffer when\n"
	    "                  size > B / 2 (perftest: B = the page size, 4096); default:\n"
	    "                  depth slots of size bytes, atomics on 512 words\n"
	    "  --timeout S     threaded backends: seconds without a completion before giving\n"
	    "                  up (default 10)\n\n"
	    "Times: dmr_be_now: simulated on sim; CLOCK_MONOTONIC on shm; on verbs the TSC\n"
	    "at a rate measured against CLOCK_MONOTONIC (as perftest's get_cycles).\n"
	    "Exit status: 0 done, 1 the run failed, 2 bad options.\n");
}

static int bench_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	uint64_t mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30, end++;
	if (*end || x > UINT64_MAX / mul)
		goto bad;
	x *= mul;
	if (x < lo || x > hi) {
		fprintf(stderr,
			"dmreplay bench: option %s: %llu out of range (%" PRIu64 "..%" PRIu64 ")\n",
			opt, x, lo, hi);
		return -1;
	}
	*v = x;
	return 0;
bad:
	fprintf(stderr, "dmreplay bench: option %s: '%s' is not a non-negative integer\n", opt,
		s ? s : "");
	return -1;
}

int dmr_bench_known_backend(const char *name)
{
	const char *p = dmr_be_names();
	size_t n = strlen(name);
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t k = strcspn(p, ", ");
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

int dmr_bench_main(int argc, char **argv)
{
	enum {
		O_BACKEND = 256,
		O_PROFILE,
		O_DEVICE,
		O_PORT,
		O_GID,
		O_SIZE,
		O_DEPTH,
		O_ITERS,
		O_LATENCY,
		O_MTU,
		O_SAME,
		O_TIMEOUT,
		O_CQ_MOD,
		O_POST_LIST,
		O_CYCLE,
		O_HELP
	};
	static const struct option opts[] = {
	    {"backend", required_argument, NULL, O_BACKEND},
	    {"profile", required_argument, NULL, O_PROFILE},
	    {"device", required_argument, NULL, O_DEVICE},
	    {"port", required_argument, NULL, O_PORT},
	    {"gid-index", required_argument, NULL, O_GID},
	    {"size", required_argument, NULL, O_SIZE},
	    {"depth", required_argument, NULL, O_DEPTH},
	    {"iters", required_argument, NULL, O_ITERS},
	    {"latency", no_argument, NULL, O_LATENCY},
	    {"mtu", required_argument, NULL, O_MTU},
	    {"same-addr", no_argument, NULL, O_SAME},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"cq-mod", required_argument, NULL, O_CQ_MOD},
	    {"post-list", required_argument, NULL, O_POST_LIST},
	    {"cycle-buffer", required_argument, NULL, O_CYCLE},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	dmr_bench_target_t t = {.backend = "sim", .gid_index = -1};
	int have_size = 0, have_depth = 0, have_iters = 0, latency = 0, same = 0;
	int have_profile = 0, have_device = 0, have_port = 0, have_gid = 0;
	uint64_t size = 0, depth = 0, iters = 0, v, cq_mod = 100, post_list = 1, cycle = 0;
	int have_cq_mod = 0, have_post_list = 0;
	double timeout = 10;
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_BACKEND:
			t.backend = optarg;
			break;
		case O_PROFILE:
			t.profile = optarg;
			have_profile = 1;
			break;
		case O_DEVICE:
			t.device = optarg;
			have_device = 1;
			break;
		case O_PORT:
			if (bench_u64("--port", optarg, 1, 255, &v))
				return 2;
			t.port = (int)v;
			have_port = 1;
			break;
		case O_GID:
			if (bench_u64("--gid-index", optarg, 0, 255, &v))
				return 2;
			t.gid_index = (int)v;
			have_gid = 1;
			break;
		case O_SIZE:
			if (bench_u64("--size", optarg, 1, BENCH_MAX_SIZE, &size))
				return 2;
			have_size = 1;
			break;
		case O_DEPTH:
			if (bench_u64("--depth", optarg, 1, BENCH_MAX_DEPTH, &depth))
				return 2;
			have_depth = 1;
			break;
		case O_ITERS:
			if (bench_u64("--iters", optarg, 5, BENCH_MAX_ITERS, &iters))
				return 2;
			have_iters = 1;
			break;
		case O_LATENCY:
			latency = 1;
			break;
		case O_SAME:
			same = 1;
			break;
		case O_MTU:
			if (bench_u64("--mtu", optarg, 256, 4096, &v))
				return 2;
			if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096) {
				fprintf(stderr,
					"dmreplay bench: option --mtu: %" PRIu64
					" is not an IB MTU (256, 512, 1024, 2048, 4096)\n",
					v);
				return 2;
			}
			t.mtu = (uint32_t)v;
			break;
		case O_TIMEOUT: {
			char *end;
			errno = 0;
			timeout = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(timeout > 0) || timeout > 86400) {
				fprintf(stderr,
					"dmreplay bench: option --timeout: '%s' is not a number "
					"of seconds in (0, 86400]\n",
					optarg);
				return 2;
			}
			break;
		}
		case O_CQ_MOD:
			if (bench_u64("--cq-mod", optarg, 1, BENCH_MAX_DEPTH, &cq_mod))
				return 2;
			have_cq_mod = 1;
			break;
		case O_CYCLE:
			if (bench_u64("--cycle-buffer", optarg, 64, 1u << 30, &cycle))
				return 2;
			break;
		case O_POST_LIST:
			if (bench_u64("--post-list", optarg, 1, BENCH_MAX_DEPTH, &post_list))
				return 2;
			have_post_list = 1;
			break;
		case 'h':
		case O_HELP:
			bench_usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "dmreplay bench: option %s needs a value\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr,
				"dmreplay bench: unknown option '%s' (see dmreplay bench --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "dmreplay bench: missing operation (read, write, cas, faa)\n");
		bench_usage(stderr);
		return 2;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "dmreplay bench: unexpected argument '%s'\n", argv[optind + 1]);
		return 2;
	}
	const char *opname = argv[optind];
	dmr_bench_spec_t sp = {.qps = 1, .timeout_s = timeout};
	if (strcmp(opname, "read") == 0)
		sp.opcode = DMR_WR_READ;
	else if (strcmp(opname, "write") == 0)
		sp.opcode = DMR_WR_WRITE;
	else if (strcmp(opname, "cas") == 0)
		sp.opcode = DMR_WR_CAS;
	else if (strcmp(opname, "faa") == 0)
		sp.opcode = DMR_WR_FAA;
	else {
		fprintf(stderr, "dmreplay bench: unknown operation '%s' (read, write, cas, faa)\n",
			opname);
		return 2;
	}
	if (!dmr_bench_known_backend(t.backend)) {
		fprintf(stderr,
			"dmreplay bench: option --backend: unknown backend '%s' (known: %s)\n",
			t.backend, dmr_be_names());
		return 2;
	}
	int sim = strcmp(t.backend, "sim") == 0, verbs = strcmp(t.backend, "verbs") == 0;
	if (have_profile && !sim) {
		fprintf(stderr,
			"dmreplay bench: option --profile: only the sim backend runs a "
			"profile (backend %s)\n",
			t.backend);
		return 2;
	}
	if (t.mtu && !sim) {
		fprintf(stderr,
			"dmreplay bench: option --mtu: only the sim's path MTU can be set "
			"(backend %s uses its ports' active MTU)\n",
			t.backend);
		return 2;
	}
	if ((have_device || have_port || have_gid) && !verbs) {
		fprintf(stderr,
			"dmreplay bench: option %s: only the verbs backend has devices "
			"(backend %s)\n",
			have_device ? "--device"
			: have_port ? "--port"
				    : "--gid-index",
			t.backend);
		return 2;
	}
	if (is_atomic(sp.opcode)) {
		if (have_size && size != 8) {
			fprintf(stderr,
				"dmreplay bench: option --size: %s operates on 8 bytes "
				"(asked %" PRIu64 ")\n",
				opname, size);
			return 2;
		}
		size = 8;
	} else {
		if (same) {
			fprintf(stderr,
				"dmreplay bench: option --same-addr: only for cas and faa\n");
			return 2;
		}
		if (!have_size)
			size = latency ? 2 : 65536;
	}
	if (latency) {
		if (have_depth && depth != 1) {
			fprintf(stderr,
				"dmreplay bench: option --depth: latency mode runs one WR at "
				"a time (depth 1; asked %" PRIu64 ")\n",
				depth);
			return 2;
		}
		if ((have_cq_mod && cq_mod != 1) || (have_post_list && post_list != 1)) {
			fprintf(stderr,
				"dmreplay bench: option %s: latency mode signals and posts one "
				"WR at a time\n",
				have_cq_mod && cq_mod != 1 ? "--cq-mod" : "--post-list");
			return 2;
		}
		depth = 1;
		cq_mod = post_list = 1;
		if (!have_iters)
			iters = 1000;
	} else {
		if (!have_depth)
			depth = 16;
		if (!have_iters)
			iters = 5000;
	}
	sp.size = (uint32_t)size;
	sp.depth = (uint32_t)depth;
	sp.iters = iters;
	sp.latency = latency;
	sp.same_addr = same;
	sp.cycle_buffer = (uint32_t)cycle;
	cq_mod = cq_mod < depth ? cq_mod : depth; /* perftest: at most tx_depth */
	post_list = post_list < depth ? post_list : depth;

	dmr_bench_session_t s;
	dmr_err_t err;
#ifdef DMR_HAVE_VERBS
	/* perftest's QP: tx_depth WRs, inline data only for WRITE (verbs.h) */
	if (verbs)
		dmr_verbs_set_queue(2 * (uint32_t)depth < 64 ? 64 : 2 * (uint32_t)depth,
				    sp.opcode == DMR_WR_WRITE ? -1 : 0);
#endif
	dmr_status_t st = dmr_bench_session_open(&s, &t, 1, dmr_bench_mr_need(&sp),
						 dmr_bench_local_need(&sp), &err);
#ifdef DMR_HAVE_VERBS
	if (verbs)
		dmr_verbs_set_queue(0, -1);
#endif
	if (st != DMR_OK) {
		/* a bad profile, or no such device / port / GID: bad input (2) */
		int bad_input = (sim && (st == DMR_ERR_IO || st == DMR_ERR_PARSE)) ||
				st == DMR_ERR_NODEV || st == DMR_ERR_RANGE;
		fprintf(stderr, "dmreplay bench: %s%s\n", bad_input ? "option --profile: " : "",
			err.msg);
		return bad_input ? 2 : 1;
	}
#ifdef DMR_HAVE_VERBS
	if (verbs) {
		dmr_verbs_info_t vi;
		dmr_verbs_info(s.be, &vi);
		if (sp.depth > vi.sq_depth) {
			fprintf(stderr,
				"dmreplay bench: option --depth: %u exceeds the send queue "
				"depth %u of %s\n",
				sp.depth, vi.sq_depth, vi.device);
			dmr_bench_session_close(&s);
			return 2;
		}
	}
#endif
	static const char *const names[] = {"RDMA_Read", "RDMA_Write", "Atomic CAS", "Atomic FAA"};
	printf("%s", RULE);
	printf("                    %s %s Test (dmreplay bench)\n", names[sp.opcode],
	       latency ? "Latency" : "BW");
	printf(" Backend         : %s\n", s.desc);
	printf(" Number of qps   : 1\n");
	printf(" Outstanding     : %u WR%s, one signaled WR in %u, %u WR%s per post%s\n",
	       sp.depth, sp.depth == 1 ? "" : "s", (unsigned)cq_mod, (unsigned)post_list,
	       post_list == 1 ? "" : "s",
	       is_atomic(sp.opcode) && !sp.cycle_buffer
		   ? (same ? "; one 8-byte word" : "; 512 distinct 8-byte words")
		   : "");
	if (sp.cycle_buffer) {
		uint64_t inc = 0, n = cycle_slots(&sp, &inc);
		printf(" Addresses       : perftest's cycle buffer of %u bytes: %llu slot%s of %llu "
		       "bytes%s\n",
		       sp.cycle_buffer, (unsigned long long)n, n == 1 ? "" : "s",
		       (unsigned long long)inc, same ? " (remote: one 8-byte word)" : "");
	}
	printf(" Time            : %s\n",
	       s.driven ? "simulated (dmr_be_now of the worker)"
			: "dmr_be_now (verbs: the TSC, rate measured against CLOCK_MONOTONIC)");
	dmr_bench_result_t r;
	st = bench_run_sel(&s, &sp, (uint32_t)cq_mod, (uint32_t)post_list, &r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay bench: %s\n", err.msg);
		dmr_bench_session_close(&s);
		return 1;
	}
	dmr_bench_print(&sp, &r, stdout);
	if (!s.driven)
		printf(" Clock check     : first post to last completion %.6f s by dmr_be_now; the "
		       "whole loop %.6f s by CLOCK_MONOTONIC\n",
		       r.seconds, r.mono_seconds);
	dmr_bench_session_close(&s);
	return 0;
}
