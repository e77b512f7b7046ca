/*
 * replay/kv/run.c - kv run's options and the start of a run: checks, the
 * pool of the options, the trace, and the choice of runner (sim.c or
 * threaded.c). See replay/kv.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kv_impl.h"

void dmr_kv_opts_default(dmr_kv_opts_t *o)
{
	*o = (dmr_kv_opts_t){.backend = "sim",
			     .profile = "cx6dx-100g",
			     .out_dir = "out/kv",
			     .cns = 4,
			     .clients = 1,
			     .unbounded = 1,
			     .high_water = 0.95,
			     .low_water = 0.90,
			     .placement = DMR_KV_PLACE_RR,
			     .time_scale = 1.0,
			     .slice = 64 * 1024,
			     .qp_depth = 16,
			     .rpc_us = -1,
			     .sim_region = 16ull << 20,
			     .window_ms = 1000,
			     .loop_window_ms = 1000,
			     .port = 1,
			     .gid_index = -1,
			     .timeout_s = 60};
	dmr_kv_pf_cfg_default(&o->pf);
}

/* s seconds as "1022.025 s", "28.4 h" or "41.7 days" */
static void kv_fmt_span(char *b, size_t n, double s)
{
	if (s < 3600)
		snprintf(b, n, "%.3f s", s);
	else if (s < 2 * 86400)
		snprintf(b, n, "%.1f h", s / 3600);
	else
		snprintf(b, n, "%.1f days", s / 86400);
}

/* What the largest --time-scale makes of `trace` (its last request's t_us,
 * read with its trailer): ": T's last request is at ..., at ... with
 * --time-scale 100"; "" when the trace cannot be read or its last row was
 * not found. */
static void kv_scale_span(const char *trace, char *b, size_t n)
{
	dmr_kv_reader_t *rd = NULL;
	dmr_err_t e;
	b[0] = 0;
	if (!trace || dmr_kv_trace_open(trace, &rd, &e) != DMR_OK)
		return;
	const dmr_kv_trace_hdr_t *h = dmr_kv_trace_header(rd);
	if (h->has_end_t && h->end_t_us == 0) {
		snprintf(b, n, ": every request of %s has t_us 0 (all at once whatever the scale)",
			 trace);
	} else if (h->has_end_t) {
		char t1[32], t2[32];
		double s = (double)h->end_t_us / 1e6;
		kv_fmt_span(t1, sizeof(t1), s);
		kv_fmt_span(t2, sizeof(t2), s * DMR_KV_TIME_SCALE_MAX);
		snprintf(b, n,
			 ": %s's last request is at %s of trace time, at %s with --time-scale %g",
			 trace, t1, t2, (double)DMR_KV_TIME_SCALE_MAX);
	}
	dmr_kv_trace_close(rd);
}

dmr_status_t kv_check_opts(const dmr_kv_opts_t *o, dmr_err_t *err)
{
	const char *base = dmr_be_base_name(o->backend); /* fault:INNER runs on INNER */
	if (!base ||
	    (strcmp(base, "sim") != 0 && strcmp(base, "shm") != 0 && strcmp(base, "verbs") != 0))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--backend %s: unknown (sim, shm, verbs or fault:one of "
				   "them)",
				   o->backend ? o->backend : "(none)");
	if (!o->trace)
		return dmr_err_set(err, DMR_ERR_INVALID, "--trace FILE is required");
	if (o->loop && strcmp(base, "sim") != 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--loop prefetch: runs on sim only so far (--backend %s)",
				   o->backend);
	if (o->cns == 0 || o->clients == 0 || o->qp_depth == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--cns, --clients and --qp-depth must be >= 1");
	if (!o->unbounded && o->capacity == 0) /* only --capacity 0 makes it */
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --capacity 0: must be > 0 (the pool's bytes over all "
				   "segments, K/M/G/T suffixes; omit it, or give --unbounded-pool, "
				   "for a pool without a limit)");
	if (!(o->high_water > 0 && o->high_water <= 1 && o->low_water >= 0 &&
	      o->low_water <= o->high_water))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "need 0 <= --low-water <= --high-water <= 1 and "
				   "--high-water > 0 (got %g, %g)",
				   o->low_water, o->high_water);
	if (!(o->time_scale >= 0 && o->time_scale <= DMR_KV_TIME_SCALE_MAX)) {
		char span[400];
		kv_scale_span(o->trace, span, sizeof(span));
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "option --time-scale %g: outside 0..%g (arrival = the trace's "
		    "t_us x X: 0 = all at once, 1 = the trace's pace, 0.5 = twice as "
		    "fast, %g = %g times slower)%s",
		    o->time_scale, (double)DMR_KV_TIME_SCALE_MAX, (double)DMR_KV_TIME_SCALE_MAX,
		    (double)DMR_KV_TIME_SCALE_MAX, span);
	}
	if (o->slice > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID, "--slice above 4 GiB - 1");
	if (!(o->window_ms >= DMR_KV_WINDOW_MS_MIN && o->window_ms <= DMR_KV_WINDOW_MS_MAX))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--window-ms %g: outside %g..%g (1 us to 1 h)", o->window_ms,
				   DMR_KV_WINDOW_MS_MIN, DMR_KV_WINDOW_MS_MAX);
	return DMR_OK;
}

dmr_status_t kv_check_work(const dmr_kv_opts_t *o, const dmr_kv_trace_hdr_t *h, dmr_err_t *err)
{
	if (!h->end_blocks || !h->block_bytes)
		return DMR_OK; /* unknown (no trailer): the run meets it */
	double blocks = (double)h->end_blocks;
	if (o->requests && h->end_requests && o->requests < h->end_requests)
		blocks *= (double)o->requests / (double)h->end_requests;
	uint64_t per =
	    o->slice && o->slice < h->block_bytes ? (h->block_bytes + o->slice - 1) / o->slice : 1;
	double slices = blocks * (double)per;
	if (slices > (double)DMR_KV_MAX_SLICES)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "option --slice %" PRIu64 ": %.0f blocks of %" PRIu64
				   " bytes are %.3g slices, above the bound of %.0e a run takes "
				   "on (about 10 minutes of simulation per 1e9): give a larger "
				   "--slice (or 0: one WR per block) or fewer --requests",
				   o->slice, blocks, h->block_bytes, slices,
				   (double)DMR_KV_MAX_SLICES);
	return DMR_OK;
}

void kv_begin(kv_t *k, const dmr_kv_opts_t *o, dmr_err_t *err)
{
	memset(k, 0, sizeof(*k));
	k->o = o;
	k->err = err;
}

dmr_status_t kv_pool_setup(kv_t *k, uint64_t *logical_p)
{
	const dmr_kv_opts_t *o = k->o;
	dmr_kv_pool_cfg_t cfg = {.segments = o->segments ? o->segments : k->nclients,
				 .block = k->block,
				 .unbounded = o->unbounded,
				 .capacity = o->capacity,
				 .high_water = o->high_water,
				 .low_water = o->low_water,
				 .placement = (dmr_kv_place_t)o->placement,
				 .name = o->trace};
	return dmr_kv_pool_init(&k->pool, &cfg, logical_p, k->err);
}

void kv_take_pool(kv_t *k)
{
	const dmr_kv_pool_t *p = &k->pool;
	k->cnt[KV_HITS] = dmr_kv_pool_count(&p->hits);
	k->cnt[KV_PUTS] = dmr_kv_pool_count(&p->puts);
	k->cnt[KV_DROPPED] = dmr_kv_pool_count(&p->dropped);
	k->cnt[KV_EVICTIONS] = dmr_kv_pool_count(&p->evictions);
	k->requested = p->requested;
	k->max_used = p->max_used;
}

dmr_status_t kv_read_next(kv_t *k)
{
	if (k->eof || (k->o->requests && k->nread >= k->o->requests)) {
		k->eof = 1;
		k->have_ahead = 0;
		return DMR_OK;
	}
	dmr_status_t st = dmr_kv_trace_next(k->rd, &k->ahead, k->err);
	if (st == DMR_EOF) {
		k->eof = 1;
		k->have_ahead = 0;
		return DMR_OK;
	}
	if (st != DMR_OK)
		return st;
	k->have_ahead = 1;
	k->nread++;
	return DMR_OK;
}

dmr_time_ps_t kv_arrival_ps(const kv_t *k, uint64_t t_us)
{
	double us = (double)t_us * k->o->time_scale;
	/* above ~104 days: far enough (and within llround's range) */
	return us < 9e12 ? dmr_ps_from_us_round(us) : 9000000000000000000ull;
}

dmr_status_t kv_maxwr(const kv_t *k, uint64_t *maxwr_p)
{
	const dmr_kv_opts_t *o = k->o;
	uint64_t maxwr = o->slice && o->slice < k->block ? o->slice : k->block;
	if (maxwr > UINT32_MAX)
		return dmr_err_set(k->err, DMR_ERR_INVALID,
				   "%s: blocks of %" PRIu64
				   " bytes need --slice (one WR carries < 4 GiB)",
				   o->trace, k->block);
	*maxwr_p = maxwr;
	return DMR_OK;
}

void kv_free(kv_t *k)
{
	dmr_kv_pool_fini(&k->pool);
	dmr_tseries_fini(&k->ts);
	dmr_kv_pf_destroy(k->pf);
	k->pf = NULL;
	free(k->lat.v);
	k->lat.v = NULL;
}

dmr_status_t kv_run_common(const dmr_kv_opts_t *o, const kv_proc_t *P, dmr_kv_result_t *res,
			   dmr_err_t *err)
{
	kv_t K, *k = &K;
	kv_begin(k, o, err);
	memset(res, 0, sizeof(*res));
	double w0 = dmr_wall_s();
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	/* the trace and the work first: a refused trace leaves no --out
	 * behind (an empty directory where none was) */
	if ((st = dmr_kv_trace_open(o->trace, &k->rd, err)) != DMR_OK)
		return st;
	if ((st = kv_check_work(o, dmr_kv_trace_header(k->rd), err)) != DMR_OK ||
	    (st = dmr_kv_out_check(o->out_dir, err)) != DMR_OK) {
		dmr_kv_trace_close(k->rd);
		return st;
	}
	{
		const dmr_kv_trace_hdr_t *h = dmr_kv_trace_header(k->rd);
		uint64_t total = h->end_requests;
		if (o->requests && (o->requests < total || !total))
			total = o->requests;
		dmr_progress_init(&k->prog,
				  o->quiet	? DMR_PROGRESS_OFF
				  : o->progress ? DMR_PROGRESS_ON
						: DMR_PROGRESS_AUTO,
				  "kv run", "requests", total);
	}
	if (strcmp(dmr_be_base_name(o->backend), "sim") != 0 || P) /* threaded: shm, verbs */
		st = kv_run_threaded(k, res, w0, P);
	else
		st = kv_run_sim(k, res, w0);
	dmr_progress_end(&k->prog, k->cnt[KV_COMPLETED]);
	dmr_kv_xeng_fini(&k->X);
	kv_free(k);
	dmr_be_close(k->be);
	dmr_kv_trace_close(k->rd);
	return st;
}

dmr_status_t dmr_kv_check(const dmr_kv_opts_t *o, dmr_err_t *err)
{
	dmr_kv_reader_t *rd = NULL;
	dmr_status_t st = kv_check_opts(o, err);
	if (st == DMR_OK && (st = dmr_kv_trace_open(o->trace, &rd, err)) == DMR_OK) {
		st = kv_check_work(o, dmr_kv_trace_header(rd), err);
		dmr_kv_trace_close(rd);
	}
	return st;
}

dmr_status_t dmr_kv_run(const dmr_kv_opts_t *o, dmr_kv_result_t *res, dmr_err_t *err)
{
	return kv_run_common(o, NULL, res, err);
}
