/*
 * replay/kv/results.c - the results of a KV run: latencies, the summary
 * (dmr_kv_result_t, summary.csv, the printed summary) and the time series
 * (timeseries.csv), written atomically (core/base/fs.h). See replay/kv.h.
 */
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "kv_impl.h"

/* ---- latencies ---------------------------------------------------------- */

int kv_lat_push(kv_lat_t *d, double x)
{
	if (d->n == d->cap) {
		uint64_t cap = d->cap ? d->cap * 2 : 4096;
		double *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return 0;
}

void kv_lat_stats(kv_lat_t *d, double *p50, double *p99, double *p999, double *mean, double *min,
		  double *max)
{
	*p50 = *p99 = *p999 = *mean = *min = *max = 0;
	if (!d->n)
		return;
	gsl_sort(d->v, 1, d->n);
	*p50 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.50);
	*p99 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.99);
	*p999 = gsl_stats_quantile_from_sorted_data(d->v, 1, d->n, 0.999);
	*mean = gsl_stats_mean(d->v, 1, d->n);
	*min = d->v[0];
	*max = d->v[d->n - 1];
}

void kv_fmt_bytes(char *b, size_t n, double x)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int i = 0;
	while (x >= 1024 && i < 5) {
		x /= 1024;
		i++;
	}
	snprintf(b, n, i ? "%.2f %s" : "%.0f %s", x, u[i]);
}

/* ---- the time series ---------------------------------------------------- */

void kv_ts_init(kv_t *k, dmr_time_ps_t window_ps)
{
	dmr_tseries_init(&k->ts, window_ps, KV_NCNT, k->pf ? KV_NGAUGE : 0, DMR_KV_TS_MAX_ROWS);
}

dmr_status_t kv_ts_overflow(const kv_t *k)
{
	return dmr_err_set(k->err, DMR_ERR_RANGE,
			   "--window-ms %g: the time series reached %u rows (%.3f s of "
			   "run): give a larger --window-ms (results so far are partial)",
			   k->o->window_ms, (unsigned)DMR_KV_TS_MAX_ROWS,
			   (double)k->ts.n * dmr_ps_to_s(k->ts.window_ps));
}

struct kv_ts_arg {
	double link_gbps;
	uint64_t block; /* blocks = bytes / block (both at completion); 0: counted blocks */
	int pf;		/* Loop X's columns */
};

static int ts_blocks(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a, int bytes,
		     int count)
{
	const struct kv_ts_arg *ta = a;
	uint64_t v =
	    ta->block ? dmr_tseries_cnt(ts, i, bytes) / ta->block : dmr_tseries_cnt(ts, i, count);
	return fprintf(f, "%" PRIu64, v);
}

static int ts_got(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a)
{
	return ts_blocks(f, ts, i, a, KV_BYTES_GOT, KV_HITS);
}

static int ts_put(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a)
{
	return ts_blocks(f, ts, i, a, KV_BYTES_PUT, KV_PUTS);
}

/* Gb/s over the window of row i of counter c */
static double ts_gbps(const dmr_tseries_t *ts, uint32_t i, int c)
{
	return dmr_tseries_cnt(ts, i, c) * 8 / dmr_ps_to_s(ts->window_ps) / 1e9;
}

static int ts_to(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a)
{
	(void)a;
	return fprintf(f, "%.3f", ts_gbps(ts, i, KV_WIRE_TO));
}

static int ts_from(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a)
{
	(void)a;
	return fprintf(f, "%.3f", ts_gbps(ts, i, KV_WIRE_FROM));
}

static int ts_util(FILE *f, const dmr_tseries_t *ts, uint32_t i, const void *a)
{
	const struct kv_ts_arg *ta = a;
	double to = ts_gbps(ts, i, KV_WIRE_TO), from = ts_gbps(ts, i, KV_WIRE_FROM);
	return fprintf(f, "%.4f", ta->link_gbps > 0 ? (to > from ? to : from) / ta->link_gbps : 0);
}

static int write_ts(FILE *f, const dmr_tseries_t *ts, const struct kv_ts_arg *ta)
{
	static const dmr_tseries_col_t cols[] = {
	    {"t_s", DMR_TSERIES_T, 0, "%.3f", NULL},
	    {"arrivals", DMR_TSERIES_CNT, KV_ARRIVALS, NULL, NULL},
	    {"completed", DMR_TSERIES_CNT, KV_COMPLETED, NULL, NULL},
	    {"blocks_got", DMR_TSERIES_FN, 0, NULL, ts_got},
	    {"blocks_put", DMR_TSERIES_FN, 0, NULL, ts_put},
	    {"puts_dropped", DMR_TSERIES_CNT, KV_DROPPED, NULL, NULL},
	    {"evictions", DMR_TSERIES_CNT, KV_EVICTIONS, NULL, NULL},
	    {"bytes_got", DMR_TSERIES_CNT, KV_BYTES_GOT, NULL, NULL},
	    {"bytes_put", DMR_TSERIES_CNT, KV_BYTES_PUT, NULL, NULL},
	    {"gbps_to_mn", DMR_TSERIES_FN, 0, NULL, ts_to},
	    {"gbps_from_mn", DMR_TSERIES_FN, 0, NULL, ts_from},
	    {"link_util", DMR_TSERIES_FN, 0, NULL, ts_util},
	    /* Loop X (--loop prefetch) only */
	    {"prefetch_signal", DMR_TSERIES_GAUGE, KV_G_PF_SIGNAL, "%.6f", NULL},
	    {"prefetch_depth", DMR_TSERIES_GAUGE, KV_G_PF_DEPTH, "%.0f", NULL},
	    {"prefetch_issued", DMR_TSERIES_CNT, KV_PF_ISSUED, NULL, NULL},
	    {"prefetch_used", DMR_TSERIES_CNT, KV_PF_USED, NULL, NULL},
	    {"prefetch_wasted", DMR_TSERIES_CNT, KV_PF_WASTED, NULL, NULL},
	    {"prefetch_bytes", DMR_TSERIES_CNT, KV_PF_BYTES, NULL, NULL},
	};
	uint32_t n = sizeof(cols) / sizeof(cols[0]);
	return dmr_tseries_write_csv(ts, f, cols, ta->pf ? n : n - 6, ta);
}

/* ---- the summary -------------------------------------------------------- */

static const char *kv_summary_header =
    "workload,trace,kv_model,block_bytes,backend,profile,cns,clients,segments,placement,"
    "capacity_bytes,high_water,low_water,mode,time_scale,outstanding,slice_bytes,qp_depth,"
    "rpc_us,requests,blocks_requested,hit_ratio,blocks_got,blocks_put,puts_dropped,"
    "waited_gets,evictions,max_blocks_used,bytes_got,bytes_put,p50_us,p99_us,p999_us,"
    "mean_us,max_us,wire_bytes_to_mn,wire_bytes_from_mn,link_gbps,link_util_to_mn,"
    "link_util_from_mn,link_util,goodput_gbps,sim_time_s,wall_s,slices,events,folded,status,"
    "segment_blocks_min,segment_blocks_max,segment_peak_min,segment_peak_max,loop,"
    "prefetch_max,prefetch_issued,prefetch_used,prefetch_wasted,prefetch_bytes";

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_summary(FILE *f, const dmr_kv_result_t *r, const dmr_kv_opts_t *o)
{
	fprintf(f, "%s\nkvcache,", kv_summary_header);
	csv_str(f, o->trace);
	fputc(',', f);
	csv_str(f, r->kv_model);
	fprintf(f,
		",%" PRIu64 ",%s,%s,%u,%u,%u,%s,%" PRIu64 ",%.4f,%.4f,%s,%.6g,%u,%" PRIu64
		",%u,%.3f,%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64
		",%" PRIu64 ",%.3f,%.6f,%.6f,%.6f,%.3f,%.9f,%.3f,%" PRIu64 ",%" PRIu64 ",%d,%s"
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
		r->block_bytes, r->backend, r->profile, r->cns, r->clients, r->segments,
		r->placement, r->capacity, o->unbounded ? 1.0 : o->high_water,
		o->unbounded ? 1.0 : o->low_water, r->mode, r->time_scale, r->outstanding, r->slice,
		r->qp_depth, r->rpc_us, r->requests, r->blocks_requested, r->hit_ratio,
		r->blocks_got, r->blocks_put, r->puts_dropped, r->waited_gets, r->evictions,
		r->max_blocks_used, r->bytes_got, r->bytes_put, r->p50_us, r->p99_us, r->p999_us,
		r->mean_us, r->max_us, r->wire_to_mn, r->wire_from_mn, r->link_gbps, r->util_to_mn,
		r->util_from_mn, r->link_util, r->goodput_gbps, r->sim_time_s, r->wall_s, r->slices,
		r->events, r->folded, r->status, r->seg_blocks_min, r->seg_blocks_max,
		r->seg_peak_min, r->seg_peak_max);
	/* Loop X (--loop prefetch): its bound and counters, so that report
	 * tells runs with and without it apart; "none" and "-" without it */
	if (!r->prefetch) {
		fprintf(f, ",none,-,-,-,-,-\n");
		return;
	}
	fprintf(f, ",prefetch,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", r->pf_cap,
		r->pf.issued, r->pf.used, r->pf.wasted, r->pf_bytes);
}

void kv_fill_result(kv_t *k, dmr_kv_result_t *res, const dmr_model_t *m, dmr_time_ps_t tend)
{
	const dmr_kv_opts_t *o = k->o;
	const uint64_t *c = k->cnt;
	snprintf(res->backend, sizeof(res->backend), "%s", o->backend);
	snprintf(res->profile, sizeof(res->profile), "%s", m ? m->name : "-");
	snprintf(res->kv_model, sizeof(res->kv_model), "%s", dmr_kv_trace_header(k->rd)->kv_model);
	snprintf(res->mode, sizeof(res->mode), "%s", o->outstanding ? "closed" : "open");
	snprintf(res->placement, sizeof(res->placement), "%s",
		 o->placement == DMR_KV_PLACE_LEAST ? "least-loaded" : "round-robin");
	res->cns = o->cns;
	res->clients = o->clients;
	res->segments = k->pool.nseg;
	res->block_bytes = k->block;
	res->capacity = o->unbounded ? 0 : k->pool.cap_slots * k->block;
	res->slice = o->slice;
	res->qp_depth = o->qp_depth;
	res->outstanding = o->outstanding;
	res->time_scale = o->time_scale;
	res->rpc_us = dmr_ps_to_us(k->rpc_ps);
	res->requests = c[KV_COMPLETED];
	res->blocks_requested = k->requested;
	res->blocks_got = c[KV_HITS];
	res->blocks_put = c[KV_PUTS];
	res->puts_dropped = c[KV_DROPPED];
	res->bytes_got = c[KV_BYTES_GOT];
	res->bytes_put = c[KV_BYTES_PUT];
	res->evictions = c[KV_EVICTIONS];
	res->waited_gets = k->waited;
	res->max_blocks_used = k->max_used;
	dmr_kv_pool_seg_stats(&k->pool, &res->seg_blocks_min, &res->seg_blocks_max,
			      &res->seg_peak_min, &res->seg_peak_max);
	res->hit_ratio = k->requested ? (double)c[KV_HITS] / k->requested : 0;
	if (k->pf) {
		res->prefetch = 1;
		dmr_kv_pf_stats(k->pf, 1, &res->pf);
		res->pf_bytes = k->pf_bytes;
		res->pf_cap = o->pf.max_depth;
	}
	double dummy;
	kv_lat_stats(&k->lat, &res->p50_us, &res->p99_us, &res->p999_us, &res->mean_us, &dummy,
		     &res->max_us);
	res->wire_to_mn = k->X.wire_to;
	res->wire_from_mn = k->X.wire_from;
	res->link_gbps = m ? m->link_gbps : 0;
	double T = dmr_ps_to_s(tend > k->t_first ? tend - k->t_first : 0);
	res->sim_time_s = T;
	if (T > 0) {
		if (m && m->link_gbps > 0) { /* verbs without a port rate: none */
			res->util_to_mn = k->X.wire_to * 8 / T / (m->link_gbps * 1e9);
			res->util_from_mn = k->X.wire_from * 8 / T / (m->link_gbps * 1e9);
		}
		res->goodput_gbps = (c[KV_BYTES_GOT] + c[KV_BYTES_PUT]) * 8 / T / 1e9;
	}
	res->link_util = res->util_to_mn > res->util_from_mn ? res->util_to_mn : res->util_from_mn;
	res->slices = k->X.slices;
	res->slices_streamed = k->X.streamed;
	res->folded = k->X.folded;
	dmr_be_stats_t bs;
	memset(&bs, 0, sizeof(bs));
	if (k->be) /* none in the KV MN process */
		dmr_be_stats(k->be, &bs);
	res->events = bs.events;
	snprintf(res->status, sizeof(res->status), "%s", res->partial ? "partial" : "complete");
}

/* ---- files -------------------------------------------------------------- */

dmr_status_t kv_afile_open(dmr_afile_t *a, const char *dir, const char *name, dmr_err_t *err)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return dmr_err_set(err, DMR_ERR_IO, "%.64s...: path too long", dir);
	return dmr_afile_open(a, path, err);
}

dmr_status_t kv_write_results(const kv_t *k, const dmr_kv_result_t *res, dmr_err_t *err)
{
	const char *dir = k->o->out_dir;
	struct kv_ts_arg ta = {res->link_gbps, k->be ? k->block : 0, k->pf != NULL};
	dmr_afile_t a;
	dmr_status_t st = dmr_mkdir_p(dir, 0, err);
	if (st == DMR_OK &&
	    (st = kv_afile_open(&a, dir, res->partial ? "timeseries.partial.csv" : "timeseries.csv",
				err)) == DMR_OK) {
		write_ts(a.f, &k->ts, &ta);
		st = dmr_afile_commit(&a, err);
	}
	if (st == DMR_OK &&
	    (st = kv_afile_open(&a, dir, res->partial ? "summary.partial.csv" : "summary.csv",
				err)) == DMR_OK) {
		write_summary(a.f, res, k->o);
		st = dmr_afile_commit(&a, err);
	}
	if (st == DMR_OK && !res->partial) {
		/* complete results are in place (renamed): a failed earlier run's
		 * partial files are stale now */
		char p[PATH_MAX + 32];
		snprintf(p, sizeof(p), "%s/summary.partial.csv", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/timeseries.partial.csv", dir);
		unlink(p);
	}
	return st;
}

dmr_status_t dmr_kv_out_check(const char *dir, dmr_err_t *err)
{
	if (!dir)
		return DMR_OK;
	dmr_err_t e;
	if (dmr_mkdir_p(dir, DMR_FS_PROBE, &e) != DMR_OK) /* also probes writability */
		return dmr_err_set(err, DMR_ERR_IO,
				   "--out %s: cannot create or not writable (%s): nothing was run",
				   dir, e.msg);
	return DMR_OK;
}

/* ---- the printed summary ------------------------------------------------ */

void dmr_kv_print(const dmr_kv_result_t *r, void *file)
{
	FILE *f = file;
	char b1[32], b2[32], b3[32], b4[32];
	kv_fmt_bytes(b1, sizeof(b1), (double)r->block_bytes);
	fprintf(f, "dmreplay kv: %s on %s/%s, %u CNs x %u clients, %u segments (%s)%s\n",
		r->kv_model, r->backend, r->profile, r->cns, r->clients, r->segments, r->placement,
		r->partial ? "  [PARTIAL]" : "");
	if (r->capacity)
		kv_fmt_bytes(b2, sizeof(b2), (double)r->capacity);
	else
		snprintf(b2, sizeof(b2), "unbounded");
	fprintf(f,
		"  pool           blocks of %s, capacity %s, peak %" PRIu64 " blocks, %" PRIu64
		" evictions, %" PRIu64 " puts dropped (no evictable space)\n",
		b1, b2, r->max_blocks_used, r->evictions, r->puts_dropped);
	if (r->outstanding)
		fprintf(f, "  arrivals       closed loop, %u requests outstanding\n",
			r->outstanding);
	else
		fprintf(f, "  arrivals       open loop at the trace's timestamps x %.6g\n",
			r->time_scale);
	fprintf(f, "  requests       %" PRIu64 ", %" PRIu64 " blocks requested\n", r->requests,
		r->blocks_requested);
	fprintf(f,
		"  hit ratio      %.6f (%" PRIu64 " blocks got from the pool, %" PRIu64
		" put; %" PRIu64 " gets waited for an earlier request's put)\n",
		r->hit_ratio, r->blocks_got, r->blocks_put, r->waited_gets);
	kv_fmt_bytes(b3, sizeof(b3), (double)r->bytes_got);
	kv_fmt_bytes(b4, sizeof(b4), (double)r->bytes_put);
	char sl[64];
	if (r->slice && r->slice < r->block_bytes)
		snprintf(sl, sizeof(sl), "slices of %" PRIu64 " B, %u in flight per client",
			 r->slice, r->qp_depth);
	else
		snprintf(sl, sizeof(sl), "one WR per block, %u in flight per client", r->qp_depth);
	int sim = strcmp(dmr_be_base_name(r->backend), "sim") == 0;
	fprintf(f, "  bytes          %s got (READ), %s put (WRITE); %s; master RPC %.2f us%s\n", b3,
		b4, sl, r->rpc_us,
		sim ? ""
		    : " (measured mean LOOKUP round trip over WRITE/READ; "
		      "content of every get checked)");
	if (r->prefetch) {
		const dmr_kv_pf_stats_t *p = &r->pf;
		char pb[32];
		kv_fmt_bytes(pb, sizeof(pb), (double)r->pf_bytes);
		fprintf(f,
			"  loop           prefetch: depth 0..%u (bound %u), %" PRIu64
			" moves (%" PRIu64 " up, %" PRIu64 " down) in %" PRIu64 " windows; %" PRIu64
			" prefetches issued, %" PRIu64 " used, %" PRIu64
			" wasted (%s read ahead)\n",
			p->max_seen, r->pf_cap, p->up + p->down, p->up, p->down, p->windows,
			p->issued, p->used, p->wasted, pb);
	}
	if (!r->requests) /* a partial run stopped before its first: no 0.0 us */
		fprintf(f, "  latency        none: no request completed\n");
	else
		fprintf(f,
			"  latency        per request (arrival to last block): p50 %.1f us, p99 "
			"%.1f us, p99.9 %.1f us, mean %.1f us, max %.1f us\n",
			r->p50_us, r->p99_us, r->p999_us, r->mean_us, r->max_us);
	if (r->link_gbps > 0)
		fprintf(
		    f,
		    "  link           MN link %g Gb/s: to MN %.2f %%, from MN %.2f %% over %.3f s "
		    "%s; goodput %.2f Gb/s\n",
		    r->link_gbps, 100 * r->util_to_mn, 100 * r->util_from_mn, r->sim_time_s,
		    sim ? "simulated" : "measured", r->goodput_gbps);
	else /* no rate, no utilisation: not "MN link 0 Gb/s: ... 0.00 %" */
		fprintf(f, "  link           %s; goodput %.2f Gb/s over %.3f s measured\n",
			strcmp(dmr_be_base_name(r->backend), "shm") == 0
			    ? "no link (shm: loopback through memory, no wire modelled)"
			    : "MN link rate unknown (no port rate read): no utilisation",
			r->goodput_gbps, r->sim_time_s);
	fprintf(f, "  %s %" PRIu64 " slices, %" PRIu64 " events, %.2f s wall%s\n",
		sim ? "simulator     " : "run           ", r->slices, r->events, r->wall_s,
		r->folded
		    ? " (MN offsets folded into the sim's region: timing exact, contents not kept)"
		    : "");
}
