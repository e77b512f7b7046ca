/*
 * replay/tools/calibrate_measure.c - the measurement streams of `dmreplay
 * calibrate` (calibrate.h, docs/CALIBRATION.md): latency against size,
 * 64 KiB bandwidth, 8 B READ rate against depth, 8 B WRITE and CAS rate,
 * atomics, doorbell cost, poll cost and the READ batch, each repeated
 * o.reps (or db_reps / poll_reps) times and kept as a summary (median,
 * spread, the raw series). The bench streams run in rounds: round k runs
 * every stream once, so the repetitions of a figure are spread over the
 * whole calibration and a drift of the host's load falls on all figures
 * alike; the host's load is sampled around each round (hostload.h). Runs go through
 * replay/tools/bench.h; the timed posts and polls here carry DMR_WRID_BENCH wr_ids
 * (core/base/wrid.h).
 */
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/progress.h"
#include "../../core/base/timeps.h"
#include "../../core/base/wrid.h"
#include "calibrate_impl.h"

const uint32_t dmr_cal_depths[CAL_NDEPTHS] = {1, 2, 4, 8, 16};

/* ---- summaries ---------------------------------------------------------------- */

static void summ_free(summ_t *s)
{
	free(s->reps);
	free(s->done);
	s->reps = NULL;
	s->done = NULL;
}

int dmr_cal_summ_make(summ_t *s, const double *v, uint32_t n)
{
	memset(s, 0, sizeof(*s));
	s->reps = malloc(n * sizeof(double));
	double *tmp = malloc(n * sizeof(double));
	if (!s->reps || !tmp) {
		free(s->reps);
		free(tmp);
		s->reps = NULL;
		return -1;
	}
	memcpy(s->reps, v, n * sizeof(double));
	memcpy(tmp, v, n * sizeof(double));
	gsl_sort(tmp, 1, n);
	s->n = n;
	s->value = gsl_stats_median_from_sorted_data(tmp, 1, n);
	s->mean = gsl_stats_mean(tmp, 1, n);
	s->stdev = n > 1 ? gsl_stats_sd_m(tmp, 1, n, s->mean) : 0;
	s->min = tmp[0];
	s->max = tmp[n - 1];
	free(tmp);
	return 0;
}

void dmr_cal_free(cal_t *c)
{
	for (int o = 0; o < 2; o++) {
		for (int k = 0; k < CAL_NSIZES; k++) {
			summ_free(&c->lat[o][k]);
			summ_free(&c->lat_avg[o][k]);
			summ_free(&c->lat_p99[o][k]);
		}
		summ_free(&c->bw[o]);
		summ_free(&c->bw_peak[o]);
		summ_free(&c->atom[o][0]);
		summ_free(&c->atom[o][1]);
	}
	for (int k = 0; k < CAL_NDEPTHS; k++)
		summ_free(&c->rate[k]);
	summ_t *one[] = {&c->db_batch, &c->db_single, &c->db_doorbell, &c->db_wqe, &c->poll_one,
			 &c->rd_batch, &c->rd_single, &c->poll_empty,  &c->rate_w, &c->rate_cas};
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		summ_free(one[i]);
	free(c);
}

/* ---- streams of bench runs ------------------------------------------------------ */

/* Scratch of a phase: one value and one result per repetition. */
typedef struct cal_buf {
	double *v;
	dmr_bench_result_t *res;
} cal_buf_t;

/* Run sp (one QP unless it says more; capped at o.max_s) once, this
 * round's repetition, into b->res[0]: the rounds alternate over every
 * stream (dmr_cal_measure), so a drift of the host's load falls on all. */
static dmr_status_t run_reps(cal_t *c, dmr_bench_spec_t sp, cal_buf_t *b, dmr_err_t *err)
{
	sp.qps = sp.qps ? sp.qps : 1;
	sp.max_s = c->o.max_s;
	return dmr_bench_run(&c->s, &sp, &b->res[0], err);
}

#define RES_FIELD(f) offsetof(dmr_bench_result_t, f)

/* Append this round's value (the result's double at offset off, times
 * scale) to *dst and recompute its summary over the rounds so far; with
 * done, also how many WRs the run completed (max_s may cut a run short). */
static void summ_pick(cal_t *c, cal_buf_t *b, size_t off, double scale, int done, summ_t *dst)
{
	(void)c;
	uint32_t n = dst->n;
	double *v = malloc((n + 1) * sizeof(double));
	uint64_t *d = done ? malloc((n + 1) * sizeof(uint64_t)) : NULL;
	if (!v || (done && !d)) {
		free(v);
		free(d);
		return; /* out of memory: the summary keeps the rounds it has */
	}
	if (n)
		memcpy(v, dst->reps, n * sizeof(double));
	if (d && n && dst->done)
		memcpy(d, dst->done, n * sizeof(uint64_t));
	v[n] = *(const double *)((const char *)&b->res[0] + off) * scale;
	if (d)
		d[n] = b->res[0].iters;
	free(dst->reps);
	free(dst->done);
	if (dmr_cal_summ_make(dst, v, n + 1) != 0) {
		free(d);
		d = NULL;
	}
	dst->done = d;
	free(v);
}

/* Wait for n completions of worker w (all must succeed). */
static dmr_status_t wait_wcs(dmr_bench_session_t *s, uint32_t w, uint32_t n, dmr_err_t *err)
{
	dmr_wc_t wc[64];
	uint32_t got = 0, spins = 0;
	uint64_t start = dmr_be_now(s->be, w);
	while (got < n) {
		if (s->driven) {
			int x = dmr_be_progress(s->be, UINT64_MAX);
			if (x < 0)
				return dmr_err_set(
				    err, DMR_ERR_TIMEOUT,
				    "calibrate: no event left with %u completions due", n - got);
			if ((uint32_t)x != w)
				return dmr_err_set(
				    err, DMR_ERR_REMOTE,
				    "calibrate: completion for worker %d, expected %u", x, w);
		}
		int want = n - got < 64 ? (int)(n - got) : 64;
		int k = dmr_be_poll(s->be, w, wc, want);
		for (int i = 0; i < k; i++)
			if (wc[i].status != DMR_WC_SUCCESS)
				return dmr_err_set(
				    err, DMR_ERR_REMOTE,
				    "calibrate: %s WR %" PRIu64 " completed with status %s",
				    dmr_wr_opcode_string(wc[i].opcode), dmr_wrid_get_n(wc[i].wr_id),
				    dmr_wc_status_string(wc[i].status));
		got += k > 0 ? (uint32_t)k : 0;
		if (!s->driven && k <= 0 && (++spins & 1023) == 0 &&
		    dmr_be_now(s->be, w) - start > 10 * DMR_PS_PER_S)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "calibrate: %s: no completion for 10 s with %u due",
					   s->be->ops->name, n - got);
	}
	return DMR_OK;
}

static dmr_status_t measure_clock(cal_t *c)
{
	double d[1000];
	for (int i = 0; i < 1000; i++) {
		uint64_t a = dmr_be_now(c->s.be, 0);
		uint64_t b = dmr_be_now(c->s.be, 0);
		d[i] = dmr_ps_to_ns(b - a);
	}
	gsl_sort(d, 1, 1000);
	c->clock_ns = gsl_stats_median_from_sorted_data(d, 1, 1000);
	return DMR_OK;
}

static dmr_status_t measure_latency(cal_t *c, cal_buf_t *b, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_READ, DMR_WR_WRITE};
	for (int o = 0; o < 2; o++) {
		double x[CAL_NSIZES], y[CAL_NSIZES];
		for (int k = 0; k < CAL_NSIZES; k++) {
			dmr_status_t st = run_reps(c,
						   (dmr_bench_spec_t){.opcode = ops[o],
								      .size = c->sizes[k],
								      .depth = 1,
								      .iters = c->o.lat_iters,
								      .latency = 1},
						   b, err);
			if (st != DMR_OK)
				return st;
			/* us to ns */
			summ_pick(c, b, RES_FIELD(t_typical_us), 1e3, 1, &c->lat[o][k]);
			summ_pick(c, b, RES_FIELD(t_avg_us), 1e3, 0, &c->lat_avg[o][k]);
			summ_pick(c, b, RES_FIELD(t_p99_us), 1e3, 0, &c->lat_p99[o][k]);
			x[k] = c->sizes[k];
			y[k] = c->lat[o][k].value;
		}
		gsl_fit_linear(x, 1, y, 1, CAL_NSIZES, &c->fit_c[o], &c->fit_m[o], &c->fit_cov00[o],
			       &(double){0}, &c->fit_cov11[o], &c->fit_sumsq[o]);
	}
	return DMR_OK;
}

static dmr_status_t measure_bw(cal_t *c, cal_buf_t *b, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_READ, DMR_WR_WRITE};
	for (int o = 0; o < 2; o++) {
		dmr_status_t st = run_reps(c,
					   (dmr_bench_spec_t){.opcode = ops[o],
							      .size = CAL_BW_SIZE,
							      .depth = CAL_BW_DEPTH,
							      .iters = c->o.bw_iters},
					   b, err);
		if (st != DMR_OK)
			return st;
		summ_pick(c, b, RES_FIELD(bw_avg_gbps), 1, 1, &c->bw[o]);
		summ_pick(c, b, RES_FIELD(bw_peak_gbps), 1, 0, &c->bw_peak[o]);
	}
	return DMR_OK;
}

/* 8 B READ at each depth; then 8 B WRITE and CAS (distinct addresses) at
 * depth 16 on one QP: with the 8 B READ rate, the per-WR CPU cost of a
 * software NIC by opcode (phase "8 B WRITE, CAS rate"). */
static dmr_status_t rate_stream(cal_t *c, cal_buf_t *b, uint8_t opcode, uint32_t depth, summ_t *dst,
				dmr_err_t *err)
{
	dmr_bench_spec_t sp = {
	    .opcode = opcode, .size = 8, .depth = depth, .iters = c->o.rate_iters};
	dmr_status_t st = run_reps(c, sp, b, err);
	if (st == DMR_OK)
		summ_pick(c, b, RES_FIELD(msg_rate_mpps), 1, 1, dst);
	return st;
}

static dmr_status_t measure_rate(cal_t *c, cal_buf_t *b, dmr_err_t *err)
{
	dmr_status_t st = DMR_OK;
	for (int k = 0; k < CAL_NDEPTHS && st == DMR_OK; k++)
		st = rate_stream(c, b, DMR_WR_READ, dmr_cal_depths[k], &c->rate[k], err);
	return st;
}

static dmr_status_t measure_rate_ops(cal_t *c, cal_buf_t *b, dmr_err_t *err)
{
	uint32_t depth = dmr_cal_depths[CAL_NDEPTHS - 1];
	dmr_status_t st = rate_stream(c, b, DMR_WR_WRITE, depth, &c->rate_w, err);
	return st == DMR_OK ? rate_stream(c, b, DMR_WR_CAS, depth, &c->rate_cas, err) : st;
}

static dmr_status_t measure_atomics(cal_t *c, cal_buf_t *b, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_CAS, DMR_WR_FAA};
	for (int o = 0; o < 2; o++)
		for (int same = 0; same < 2; same++) {
			dmr_status_t st = run_reps(c,
						   (dmr_bench_spec_t){.opcode = ops[o],
								      .size = 8,
								      .depth = CAL_ATOMIC_DEPTH,
								      .iters = c->o.atomic_iters,
								      .qps = c->o.qps,
								      .same_addr = same},
						   b, err);
			if (st != DMR_OK)
				return st;
			summ_pick(c, b, RES_FIELD(msg_rate_mpps), 1, 1, &c->atom[o][same]);
		}
	return DMR_OK;
}

/* k 8-byte WRs of opcode at offsets 0, stride, 2 stride, ... of worker 0's
 * buffer and region; every one signaled, or only the last. */
static void wrs_8b(cal_t *c, dmr_wr_t *wrs, uint32_t k, uint8_t opcode, uint32_t stride,
		   int all_signaled)
{
	for (uint32_t i = 0; i < k; i++)
		wrs[i] = (dmr_wr_t){.wr_id = dmr_wrid_n(DMR_WRID_BENCH, i),
				    .local = c->s.local[0] + stride * i,
				    .remote = stride * i,
				    .length = 8,
				    .opcode = opcode,
				    .flags = all_signaled || i + 1 == k ? DMR_WR_SIGNALED : 0};
}

/* k 8-byte WRITEs, signaled, to words 0..k-1 of worker 0's region. */
static void db_wrs(cal_t *c, dmr_wr_t *wrs, uint32_t k)
{
	wrs_8b(c, wrs, k, DMR_WR_WRITE, 8, 1);
}

/*
 * One repetition of k WRs in one post against k single posts on worker 0:
 * the CPU time of each, ns, the clock's cost subtracted. to_completion 0:
 * the posts alone (each followed by waiting for the k completions); 1:
 * from the first post to the one completion (the last WR signaled).
 */
static dmr_status_t batch_vs_singles(cal_t *c, dmr_wr_t *wrs, uint32_t k, int to_completion,
				     double *batch_ns, double *singles_ns, dmr_err_t *err)
{
	dmr_be_t *be = c->s.be;
	uint32_t due = to_completion ? 1 : k;
	uint64_t t[4]; /* batch from, to; singles from, to */
	for (int single = 0; single < 2; single++) {
		uint64_t *tt = &t[2 * single];
		tt[0] = single && to_completion ? t[1] : dmr_be_now(be, 0);
		dmr_status_t st = DMR_OK;
		if (!single)
			st = dmr_be_post(be, 0, 0, wrs, k, err);
		for (uint32_t i = 0; single && i < k && st == DMR_OK; i++)
			st = dmr_be_post(be, 0, 0, &wrs[i], 1, err);
		if (!to_completion)
			tt[1] = dmr_be_now(be, 0);
		if (st != DMR_OK || (st = wait_wcs(&c->s, 0, due, err)) != DMR_OK)
			return st;
		if (to_completion)
			tt[1] = dmr_be_now(be, 0);
	}
	*batch_ns = dmr_ps_to_ns(t[1] - t[0]) - c->clock_ns;
	*singles_ns = dmr_ps_to_ns(t[3] - t[2]) - c->clock_ns;
	return DMR_OK;
}

/* o.batch 8 B WRITEs: batch = D + k W, singles = k (D + W). */
static dmr_status_t measure_doorbell(cal_t *c, dmr_err_t *err)
{
	uint32_t k = c->o.batch, n = c->o.db_reps;
	dmr_wr_t *wrs = malloc(k * sizeof(*wrs));
	double *v = malloc(4 * (size_t)n * sizeof(double));
	double *b = v, *si = v + n, *d = v + 2 * n, *w = v + 3 * n;
	dmr_status_t st = DMR_OK;
	if (!wrs || !v)
		st = dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
	else
		db_wrs(c, wrs, k);
	for (uint32_t r = 0; r < n && st == DMR_OK; r++) {
		if ((st = batch_vs_singles(c, wrs, k, 0, &b[r], &si[r], err)) != DMR_OK)
			break;
		d[r] = (si[r] - b[r]) / (k - 1);
		w[r] = (b[r] - d[r]) / k;
	}
	if (st == DMR_OK) {
		dmr_cal_summ_make(&c->db_batch, b, n);
		dmr_cal_summ_make(&c->db_single, si, n);
		dmr_cal_summ_make(&c->db_doorbell, d, n);
		dmr_cal_summ_make(&c->db_wqe, w, n);
	}
	free(wrs);
	free(v);
	return st;
}

/*
 * Software NIC: 16 8 B READs (the last signaled) in one doorbell against
 * 16 single posts, from the first post to the completion, median of
 * db_reps. On rxe a READ's responder is deferred and runs once for the
 * requests queued together, so a batch saves more than the doorbells:
 * (singles - batch) / 15 - post_doorbell is the CPU per doorbell that
 * carries READs (host_read_post_ns, a part of host_read_ns).
 */
static dmr_status_t measure_read_batch(cal_t *c, dmr_err_t *err)
{
	enum { K = 16 };
	uint32_t n = c->o.db_reps / 2 ? c->o.db_reps / 2 : 1;
	dmr_wr_t wrs[K];
	double *v = malloc(2 * (size_t)n * sizeof(double));
	if (!v)
		return dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
	wrs_8b(c, wrs, K, DMR_WR_READ, 64, 0); /* one cache line apart, the last signaled */
	dmr_status_t st = DMR_OK;
	for (uint32_t r = 0; r < n && st == DMR_OK; r++)
		st = batch_vs_singles(c, wrs, K, 1, &v[r], &v[n + r], err);
	if (st == DMR_OK) {
		dmr_cal_summ_make(&c->rd_batch, v, n);
		dmr_cal_summ_make(&c->rd_single, v + n, n);
	}
	free(v);
	return st;
}

static dmr_status_t measure_poll(cal_t *c, dmr_err_t *err)
{
	uint32_t n = c->o.poll_reps, got = 0;
	double *one = malloc(n * sizeof(double)), *empty = malloc(n * sizeof(double));
	dmr_status_t st = DMR_OK;
	if (!one || !empty) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
		goto out;
	}
	dmr_be_t *be = c->s.be;
	dmr_wr_t wr;
	db_wrs(c, &wr, 1);
	/* threaded: wait ten 8 B WRITE round trips (at least 20 us) before the
	 * timed poll, so that the completion is there */
	uint64_t settle = dmr_ps_from_ns(10 * c->lat[1][0].value);
	if (settle < 20 * DMR_PS_PER_US)
		settle = 20 * DMR_PS_PER_US;
	dmr_wc_t wc;
	c->poll_late = 0;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t t0 = dmr_be_now(be, 0);
		int k = dmr_be_poll(be, 0, &wc, 1);
		uint64_t t1 = dmr_be_now(be, 0);
		if (k != 0) {
			st = dmr_err_set(err, DMR_ERR_REMOTE,
					 "calibrate: unexpected completion "
					 "(wr_id %" PRIu64 ") on an idle QP",
					 dmr_wrid_get_n(wc.wr_id));
			goto out;
		}
		empty[r] = dmr_ps_to_ns(t1 - t0) - c->clock_ns;
		if ((st = dmr_be_post(be, 0, 0, &wr, 1, err)) != DMR_OK)
			goto out;
		if (c->s.driven) {
			int x = dmr_be_progress(be, UINT64_MAX);
			if (x != 0) {
				st = dmr_err_set(err, DMR_ERR_TIMEOUT,
						 "calibrate: poll test: progress returned %d", x);
				goto out;
			}
		} else {
			uint64_t tp = dmr_be_now(be, 0);
			while (dmr_be_now(be, 0) - tp < settle)
				;
		}
		t0 = dmr_be_now(be, 0);
		k = dmr_be_poll(be, 0, &wc, 1);
		t1 = dmr_be_now(be, 0);
		if (k == 1) {
			if (wc.status != DMR_WC_SUCCESS) {
				st = dmr_err_set(err, DMR_ERR_REMOTE,
						 "calibrate: WRITE completed with status %s",
						 dmr_wc_status_string(wc.status));
				goto out;
			}
			one[got++] = dmr_ps_to_ns(t1 - t0) - c->clock_ns;
		} else {
			c->poll_late++;
			if ((st = wait_wcs(&c->s, 0, 1, err)) != DMR_OK)
				goto out;
		}
	}
	if (got == 0) {
		st = dmr_err_set(err, DMR_ERR_TIMEOUT,
				 "calibrate: poll test: no completion had arrived after %.1f us in "
				 "%u tries",
				 dmr_ps_to_us(settle), n);
		goto out;
	}
	dmr_cal_summ_make(&c->poll_one, one, got);
	dmr_cal_summ_make(&c->poll_empty, empty, n);
out:
	free(one);
	free(empty);
	return st;
}

/* ---- the phases ----------------------------------------------------------------- */

dmr_status_t dmr_cal_measure(cal_t *c, int sim, dmr_err_t *err)
{
	/* a phase runs bench streams (with scratch; once per round) or times
	 * posts and polls (its own repetitions, in round 1) */
	static const struct {
		const char *name;
		dmr_status_t (*streams)(cal_t *c, cal_buf_t *b, dmr_err_t *err);
		dmr_status_t (*timed)(cal_t *c, dmr_err_t *err);
	} phase[] = {
	    {"latency vs size", measure_latency, NULL},
	    {"64 KiB bandwidth", measure_bw, NULL},
	    {"8 B READ rate vs depth", measure_rate, NULL},
	    {"atomics", measure_atomics, NULL},
	    {"doorbell", NULL, measure_doorbell},
	    {"poll", NULL, measure_poll},
	    {"8 B WRITE, CAS rate", measure_rate_ops, NULL},
	    {"16 READs per doorbell", NULL, measure_read_batch},
	    {"engine CPU (shm)", NULL, dmr_cal_measure_engine},
	};
	double w0 = dmr_wall_s();
	cal_buf_t b = {malloc(sizeof(double)), malloc(sizeof(dmr_bench_result_t))};
	dmr_status_t st = DMR_OK;
	if (!b.v || !b.res)
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	else
		st = measure_clock(c);
	/* the engine's CPU is measured beside a device, not on the model */
	int nph = sim ? 8 : 9, nstream = 5;
	uint32_t R = c->o.reps ? c->o.reps : 1;
	if (R > CAL_MAX_ROUNDS)
		R = CAL_MAX_ROUNDS;
	uint64_t total = (uint64_t)nph + (uint64_t)(R - 1) * nstream, ticks = 0;
	dmr_progress_t prog; /* phases done (issue #15 D20) */
	dmr_progress_init(&prog, c->o.progress ? DMR_PROGRESS_ON : DMR_PROGRESS_AUTO, "calibrate",
			  "phases", total);
	c->rounds = 0;
	for (uint32_t round = 0; round < R && st == DMR_OK; round++) {
		/* the host's load around the round (hostload.h): wall-clock
		 * figures only, the sim's time is its own */
		dmr_hostload_snap_t snap;
		dmr_hostload_t *hl = &c->hl[round];
		memset(hl, 0, sizeof(*hl));
		c->hl_sampled = dmr_hostload_wanted(c->s.driven);
		if (c->hl_sampled)
			dmr_hostload_begin(hl, &snap);
		for (int ph = 0; ph < nph && st == DMR_OK; ph++) {
			if (round > 0 && !phase[ph].streams)
				continue;
			dmr_progress_tick(&prog, ticks++);
			double tp = dmr_wall_s();
			st = phase[ph].streams ? phase[ph].streams(c, &b, err)
					       : phase[ph].timed(c, err);
			if (!c->s.driven)
				fprintf(stderr,
					"%sdmreplay calibrate: round %u %-24s %6.1f s wall\n",
					prog.on && prog.tty && prog.shown ? "\r\033[K" : "",
					round + 1, phase[ph].name, dmr_wall_s() - tp);
		}
		if (c->hl_sampled) {
			dmr_hostload_end(hl, &snap);
			char hb[96];
			dmr_hostload_format(hl, hb, sizeof(hb));
			fprintf(stderr, "dmreplay calibrate: round %u of %u: host %s\n", round + 1,
				R, hb);
		}
		if (st == DMR_OK)
			c->rounds = round + 1;
	}
	dmr_progress_end(&prog, st == DMR_OK ? total : 0);
	free(b.v);
	free(b.res);
	c->wall_s = dmr_wall_s() - w0;
	return st;
}
