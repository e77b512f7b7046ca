/*
 * replay/kv/bench.c - the transfer benchmark (`dmreplay kv bench`, `bench
 * transfer`; Mooncake transfer_engine_bench style): threads submit batches
 * of large READs or WRITEs through the transfer engine (core/kv/xfer.h)
 * and wait for each batch; per-op latency, Gb/s and the serialisation
 * bound. On sim one event loop (sim.c opens the backend), on shm and verbs
 * one OS thread and QP per thread. See replay/kv.h.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/sig.h"
#include "kv_impl.h"

void dmr_kv_bench_opts_default(dmr_kv_bench_opts_t *o)
{
	*o = (dmr_kv_bench_opts_t){.backend = "sim",
				   .profile = "cx6dx-100g",
				   .size = 4ull << 20,
				   .ops = 1000,
				   .threads = 1,
				   .cns = 1,
				   .batch = 1,
				   .slice = 64 * 1024,
				   .qp_depth = 16,
				   .opcode = DMR_WR_WRITE,
				   .sim_region = 64ull << 20,
				   .port = 1,
				   .gid_index = -1,
				   .timeout_s = 60};
}

typedef struct bthread {
	uint64_t left;	  /* ops not yet submitted */
	uint32_t pending; /* ops of the current batch not completed */
	uint32_t worker;
} bthread_t;

/* Submit thread ti's next batch (its ops at their own offsets). */
static dmr_status_t bench_submit(dmr_kv_xeng_t *X, bthread_t *t, uint32_t ti,
				 const dmr_kv_bench_opts_t *o, dmr_err_t *err)
{
	uint32_t b = o->batch;
	if (b > t->left)
		b = (uint32_t)t->left;
	dmr_time_ps_t now = dmr_be_now(X->be, t->worker);
	for (uint32_t j = 0; j < b; j++) {
		uint32_t xi = dmr_kv_xeng_alloc(X);
		if (xi == NOIDX)
			return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		dmr_kv_xfer_t *x = &X->x[xi];
		x->logical = ((uint64_t)ti * o->batch + j) * o->size;
		x->len = o->size;
		x->opcode = (uint8_t)o->opcode;
		x->owner = ti;
		x->client = t->worker;
		x->t0 = now;
		dmr_kv_xeng_enqueue(X, xi);
	}
	t->left -= b;
	t->pending = b;
	return dmr_kv_xeng_pump(X, t->worker);
}

/* A completion of engine X at `now`: its op's latency, and the next batch
 * of the op's thread when this one is done (th[owner - th0]). */
static dmr_status_t bench_on_wc(dmr_kv_xeng_t *X, uint32_t worker, const dmr_wc_t *wc,
				dmr_time_ps_t now, bthread_t *th, uint32_t th0,
				const dmr_kv_bench_opts_t *o, kv_lat_t *lat, dmr_time_ps_t *tlast,
				dmr_err_t *err)
{
	uint32_t xi;
	dmr_status_t st = dmr_kv_xeng_on_wc(X, worker, wc, &xi);
	if (st != DMR_OK || xi == NOIDX)
		return st;
	dmr_kv_xfer_t x = X->x[xi];
	dmr_kv_xeng_free(X, xi);
	*tlast = max64(*tlast, now);
	if (kv_lat_push(lat, dmr_ps_to_us(now - x.t0)) != 0)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	bthread_t *t = &th[x.owner - th0];
	if (--t->pending == 0 && t->left)
		return bench_submit(X, t, x.owner, o, err);
	return DMR_OK;
}

/* The figures of lat.n ops over el ps with the busier direction's wire
 * bytes. */
static void bench_rates(dmr_kv_bench_result_t *r, const dmr_kv_bench_opts_t *o, kv_lat_t *lat,
			dmr_time_ps_t el, uint64_t wire_to, uint64_t wire_from)
{
	r->ops = lat->n;
	r->bytes = lat->n * o->size;
	kv_lat_stats(lat, &r->p50_us, &r->p99_us, &r->p999_us, &r->mean_us, &r->min_us, &r->max_us);
	r->elapsed_us = dmr_ps_to_us(el);
	r->per_op_us = r->elapsed_us / r->ops;
	if (el) {
		r->gbps = r->bytes * 8.0 / dmr_ps_to_s(el) / 1e9;
		r->wire_gbps =
		    (wire_to > wire_from ? wire_to : wire_from) * 8.0 / dmr_ps_to_s(el) / 1e9;
	}
}

/* ---- the benchmark on threaded backends: one thread per worker ---------- */

typedef struct bthr {
	const dmr_kv_bench_opts_t *o;
	dmr_be_t *be;
	dmr_kv_xeng_t X;
	uint32_t ti, worker;
	bthread_t t;
	dmr_time_ps_t t_first, t_last, deadline_ps;
	kv_lat_t lat;
	dmr_status_t st;
	dmr_err_t err;
	pthread_t tid;
} bthr_t;

static void *bench_thread(void *arg)
{
	bthr_t *B = arg;
	dmr_wc_t wcs[64];
	dmr_status_t st = DMR_OK;
	B->t_first = dmr_be_now(B->be, B->worker);
	if (B->t.left)
		st = bench_submit(&B->X, &B->t, B->ti, B->o, &B->err);
	dmr_time_ps_t last = B->t_first;
	uint32_t idle = 0;
	while (st == DMR_OK && (B->t.pending || B->t.left)) {
		if (dmr_sig_caught()) {
			st = dmr_err_set(&B->err, DMR_ERR_INTERRUPTED, "interrupted by signal %d",
					 dmr_sig_caught());
			break;
		}
		int n = dmr_be_poll(B->be, B->worker, wcs, 64);
		dmr_time_ps_t now = dmr_be_now(B->be, B->worker);
		if (n < 0) {
			st = dmr_err_set(&B->err, DMR_ERR_REMOTE, "worker %u: poll failed",
					 B->worker);
			break;
		}
		if (n == 0) {
			if (now - last > B->deadline_ps)
				st = dmr_err_set(&B->err, DMR_ERR_TIMEOUT,
						 "worker %u: no completion for %.1f s", B->worker,
						 dmr_ps_to_s(now - last));
			else if (++idle > 64)
				sched_yield(); /* let the NIC's host work (rxe) run */
			continue;
		}
		idle = 0;
		last = now;
		for (int i = 0; i < n && st == DMR_OK; i++)
			st = bench_on_wc(&B->X, B->worker, &wcs[i], now, &B->t, B->ti, B->o,
					 &B->lat, &B->t_last, &B->err);
		if (st == DMR_OK)
			st = dmr_kv_xeng_pump(&B->X, 0);
	}
	B->st = st;
	return NULL;
}

static dmr_status_t bench_threaded(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r,
				   dmr_err_t *err, double w0)
{
	uint64_t maxwr = o->slice && o->slice < o->size ? o->slice : o->size;
	uint32_t wpc = (o->threads + o->cns - 1) / o->cns;
	uint64_t region = (o->size * o->threads * o->batch + 63) & ~63ull;
	if (region > kv_phys_bytes() / 2)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%" PRIu64 " bytes of MN region (size x threads x batch) "
				   "is more than half of this machine's memory",
				   region);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = wpc,
			       .mr_size = region,
			       .seed = 1,
			       .profile = o->profile,
			       .device = o->device,
			       .port = o->port,
			       .gid_index = o->gid_index};
	dmr_be_t *be = NULL;
	bthr_t *B = NULL;
	kv_lat_t lat = {0};
	dmr_model_t wm;
	uint32_t started = 0;
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (st != DMR_OK)
		return st;
	snprintf(r->profile, sizeof(r->profile), "-");
	int have_m =
	    kv_verbs_model(be, o->backend, o->profile, &wm, r->profile, sizeof(r->profile), err);
	B = calloc(o->threads, sizeof(*B));
	if (!B) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < o->threads && st == DMR_OK; t++) {
		B[t].o = o;
		B[t].be = be;
		B[t].ti = t;
		B[t].worker = (t % o->cns) * wpc + t / o->cns;
		B[t].deadline_ps = dmr_ps_from_s(o->timeout_s);
		B[t].t.left = o->ops / o->threads + (t < o->ops % o->threads);
		B[t].t.worker = 0; /* the thread's xeng has one client */
		st = dmr_kv_xeng_init_thread(&B[t].X, be, B[t].worker, o->slice, maxwr, o->qp_depth,
					     0, 0, err);
		if (have_m)
			B[t].X.m = &wm;
		B[t].X.err = &B[t].err;
	}
	if (st != DMR_OK)
		goto out;
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	for (; started < o->threads; started++)
		if (pthread_create(&B[started].tid, NULL, bench_thread, &B[started]) != 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "cannot start thread %u", started);
			break;
		}
	dmr_time_ps_t t0 = UINT64_MAX, t1 = 0;
	uint64_t wire_to = 0, wire_from = 0;
	for (uint32_t t = 0; t < started; t++) {
		pthread_join(B[t].tid, NULL);
		if (B[t].st != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, B[t].st, "%s", B[t].err.msg);
		if (B[t].t_first < t0)
			t0 = B[t].t_first;
		t1 = max64(t1, B[t].t_last);
		wire_to += B[t].X.wire_to;
		wire_from += B[t].X.wire_from;
		for (uint64_t i = 0; i < B[t].lat.n; i++)
			if (kv_lat_push(&lat, B[t].lat.v[i]) != 0)
				break;
	}
	dmr_sig_restore(&saved);
	if (st == DMR_OK && lat.n != o->ops)
		st = dmr_err_set(err, DMR_ERR_INVALID, "%" PRIu64 " of %" PRIu64 " ops completed",
				 lat.n, o->ops);
	if (st != DMR_OK)
		goto out;
	bench_rates(r, o, &lat, t1 > t0 ? t1 - t0 : 0, wire_to, wire_from);
	if (have_m) {
		r->link_gbps = wm.link_gbps;
		r->mtu = wm.mtu;
		if (wm.link_gbps > 0) {
			r->bound_payload_us = o->size * 8.0 / (wm.link_gbps * 1e3);
			r->bound_wire_us =
			    dmr_model_msg_wire_bytes(&wm, o->size, wm.reth_bytes, 0) * 8.0 /
			    (wm.link_gbps * 1e3);
		}
	}
	r->wall_s = dmr_wall_s() - w0;
out:
	for (uint32_t t = 0; B && t < o->threads; t++) {
		dmr_kv_xeng_fini(&B[t].X);
		free(B[t].lat.v);
	}
	free(B);
	free(lat.v);
	dmr_be_close(be);
	return st;
}

/* ---- on sim: one event loop --------------------------------------------- */

static dmr_status_t bench_sim(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r,
			      dmr_err_t *err, double w0, uint64_t maxwr)
{
	uint32_t wpc = (o->threads + o->cns - 1) / o->cns;
	uint64_t region;
	int folded;
	dmr_kv_plan_region(o->size * o->threads * o->batch, o->sim_region, maxwr, &region, &folded);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = wpc,
			       .mr_size = region,
			       .seed = 1,
			       .profile = o->profile};
	dmr_be_t *be = NULL;
	const dmr_model_t *m = NULL;
	dmr_kv_xeng_t X;
	memset(&X, 0, sizeof(X));
	bthread_t *th = NULL;
	kv_lat_t lat = {0};
	dmr_status_t st = kv_sim_open(&cfg, o->mtu, folded, "kv bench", &be, &m, err);
	if (st != DMR_OK)
		goto out;
	st = dmr_kv_xeng_init(&X, be, m, o->cns * wpc, o->slice, maxwr, o->qp_depth, region, folded,
			      err);
	if (st != DMR_OK)
		goto out;
	th = calloc(o->threads, sizeof(*th));
	if (!th) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < o->threads; t++) {
		th[t].left = o->ops / o->threads + (t < o->ops % o->threads);
		th[t].worker = (t % o->cns) * wpc + t / o->cns;
	}
	for (uint32_t t = 0; t < o->threads && st == DMR_OK; t++)
		if (th[t].left)
			st = bench_submit(&X, &th[t], t, o, err);
	dmr_time_ps_t tlast = 0;
	dmr_wc_t wcs[64];
	int w;
	while (st == DMR_OK && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wcs, 64);
		for (int i = 0; i < n && st == DMR_OK; i++)
			st = bench_on_wc(&X, (uint32_t)w, &wcs[i], dmr_be_now(be, (uint32_t)w), th,
					 0, o, &lat, &tlast, err);
		if (st == DMR_OK)
			st = dmr_kv_xeng_pump(&X, (uint32_t)w);
	}
	if (st == DMR_OK && lat.n != o->ops)
		st = dmr_err_set(err, DMR_ERR_INVALID, "%" PRIu64 " of %" PRIu64 " ops completed",
				 lat.n, o->ops);
	if (st != DMR_OK)
		goto out;
	bench_rates(r, o, &lat, tlast, X.wire_to, X.wire_from);
	if (m) {
		snprintf(r->profile, sizeof(r->profile), "%s", m->name);
		r->link_gbps = m->link_gbps;
		r->mtu = m->mtu;
		r->bound_payload_us = o->size * 8.0 / (m->link_gbps * 1e3);
		r->bound_wire_us = dmr_ps_to_us(
		    dmr_model_wire_ps(m, dmr_model_msg_wire_bytes(m, o->size, m->reth_bytes, 0)));
	}
	r->wall_s = dmr_wall_s() - w0;
out:
	free(th);
	free(lat.v);
	dmr_kv_xeng_fini(&X);
	dmr_be_close(be);
	return st;
}

dmr_status_t dmr_kv_bench(const dmr_kv_bench_opts_t *o, dmr_kv_bench_result_t *r, dmr_err_t *err)
{
	memset(r, 0, sizeof(*r));
	if (o->size == 0 || o->ops == 0 || o->threads == 0 || o->batch == 0 || o->cns == 0 ||
	    o->qp_depth == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--size, --ops, --threads, --batch, --cns, --qp-depth "
				   "must be >= 1");
	if (o->opcode != DMR_WR_READ && o->opcode != DMR_WR_WRITE)
		return dmr_err_set(err, DMR_ERR_INVALID, "op must be read or write");
	uint64_t maxwr = o->slice && o->slice < o->size ? o->slice : o->size;
	if (maxwr > UINT32_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "one WR carries < 4 GiB: use --slice for --size %" PRIu64,
				   o->size);
	double w0 = dmr_wall_s();
	if (strcmp(o->backend, "sim") != 0) /* threaded: shm, verbs */
		return bench_threaded(o, r, err, w0);
	return bench_sim(o, r, err, w0, maxwr);
}

void dmr_kv_bench_print(const dmr_kv_bench_opts_t *o, const dmr_kv_bench_result_t *r, void *file)
{
	FILE *f = file;
	char sz[32];
	kv_fmt_bytes(sz, sizeof(sz), (double)o->size);
	uint64_t nsl = o->slice && o->slice < o->size ? (o->size + o->slice - 1) / o->slice : 1;
	char link[64];
	int shm = strcmp(dmr_be_base_name(o->backend), "shm") == 0;
	if (r->link_gbps > 0 || strcmp(o->backend, "sim") == 0)
		snprintf(link, sizeof(link), "%g Gb/s, MTU %u", r->link_gbps, r->mtu);
	else if (shm) /* loopback: neither a link rate nor an MTU */
		snprintf(link, sizeof(link), "no link: loopback through memory");
	else
		snprintf(link, sizeof(link), "link rate unknown, MTU %u", r->mtu);
	fprintf(f,
		"dmreplay kv bench: %" PRIu64 " x %s of %" PRIu64 " B (%s), %u thread%s x batch %u"
		" on %u CN%s, %s/%s (%s)\n",
		r->ops, o->opcode == DMR_WR_READ ? "READ" : "WRITE", o->size, sz, o->threads,
		o->threads == 1 ? "" : "s", o->batch, o->cns, o->cns == 1 ? "" : "s", o->backend,
		r->profile, link);
	if (nsl > 1)
		fprintf(f,
			"  slicing        %" PRIu64 " slices of %" PRIu64
			" B per op, up to %u in flight per thread's QP\n",
			nsl, o->slice, o->qp_depth);
	else
		fprintf(f, "  slicing        none: one WR per op\n");
	fprintf(f,
		"  latency/op     p50 %.2f us, p99 %.2f us, p99.9 %.2f us (min %.2f, max %.2f, "
		"mean %.2f)\n",
		r->p50_us, r->p99_us, r->p999_us, r->min_us, r->max_us, r->mean_us);
	int sim = strcmp(o->backend, "sim") == 0;
	char wire[48] = "";
	if (!shm) /* shm puts nothing on a wire */
		snprintf(wire, sizeof(wire), " (%.2f Gb/s on the wire)", r->wire_gbps);
	fprintf(f, "  throughput     %.2f Gb/s payload%s, %.2f us per op amortised, %.3f ms %s\n",
		r->gbps, wire, r->per_op_us, r->elapsed_us / 1e3,
		sim ? "simulated" : "measured (wall clock)");
	if (!sim && r->link_gbps <= 0) {
		fprintf(f, "  run            %.3f s wall (%s: no serialisation bound)\n", r->wall_s,
			shm ? "no link" : "no link rate known");
		return;
	}
	fprintf(f,
		"  lower bound    %s must cross one %g Gb/s link: %" PRIu64 " B x 8 / %g Gb/s = "
		"%.2f us payload serialisation;\n"
		"                 %.2f us with RoCEv2 framing at MTU %u (%" PRIu64
		" packets, 82 B of headers each + RETH)\n",
		sz, r->link_gbps, o->size, r->link_gbps, r->bound_payload_us, r->bound_wire_us,
		r->mtu, r->mtu ? (o->size + r->mtu - 1) / r->mtu : 0);
	if (r->bound_payload_us > 0)
		fprintf(
		    f,
		    "                 measured p50 %.2f us = %.3f x the payload bound; amortised "
		    "%.2f us/op = %.3f x\n",
		    r->p50_us, r->p50_us / r->bound_payload_us, r->per_op_us,
		    r->per_op_us / r->bound_payload_us);
	if (r->link_gbps > 0) {
		double need50 = o->size * 8.0 / 50e-6 / 1e9, need80 = o->size * 8.0 / 80e-6 / 1e9;
		fprintf(
		    f,
		    "  reference      \"50 to 80 us per 4 MB push\" at this size would need %.0f "
		    "to %.0f Gb/s through\n"
		    "                 one %g Gb/s port: impossible for one push, and for the "
		    "amortised time of a stream too\n"
		    "                 (bytes per op / time per op <= link rate, so >= %.2f us per "
		    "op on one link)\n",
		    need80, need50, r->link_gbps, r->bound_payload_us);
	}
	fprintf(f, "  %s %.3f s wall\n", sim ? "simulator     " : "run           ", r->wall_s);
}
