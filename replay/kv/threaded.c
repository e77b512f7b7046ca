/*
 * replay/kv/threaded.c - the KV replay on threaded backends (shm, verbs):
 * one thread per client worker, each with its own QP (client.c), the
 * master as a thread next to the MN (core/kv/master.h) or in the MN process
 * (roles.c), reached only through the mailbox RPC (core/kv/rpc.h); wall-
 * clock picoseconds. This file sizes the pool and the region, starts the
 * threads, samples the time series and collects the results.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/base/sig.h"
#include "kv_impl.h"

uint64_t kv_phys_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
}

/* Count the distinct block ids of the first `limit` requests (0 = all);
 * fp (may be NULL) gets the requests, their blocks and a hash of their
 * indices, times, block counts and ids (the trace's fingerprint). */
static dmr_status_t count_distinct(const char *path, uint64_t limit, uint64_t *n_p,
				   dmr_kv_geom_t *fp, dmr_err_t *err)
{
	uint64_t fh = 0x6b7666707269ull, fblocks = 0;
	dmr_kv_reader_t *rd;
	dmr_status_t st = dmr_kv_trace_open(path, &rd, err);
	if (st != DMR_OK)
		return st;
	uint64_t mask = 4095, n = 0, *set = calloc(mask + 1, 8), reqs = 0;
	int *used = calloc(mask + 1, sizeof(int));
	dmr_kv_req_t r;
	while (set && used && (!limit || reqs < limit) &&
	       (st = dmr_kv_trace_next(rd, &r, err)) == DMR_OK) {
		reqs++;
		fblocks += r.nblocks;
		fh = dmr_kv_mix64(fh ^ r.index) + r.t_us;
		fh = dmr_kv_mix64(fh ^ r.nblocks);
		for (uint32_t b = 0; b < r.nblocks; b++)
			fh = dmr_kv_mix64(fh ^ r.blocks[b]);
		for (uint32_t b = 0; b < r.nblocks; b++) {
			if ((n + 1) * 2 > mask + 1) {
				uint64_t nm = mask * 2 + 1, *ns = calloc(nm + 1, 8);
				int *nu = calloc(nm + 1, sizeof(int));
				if (!ns || !nu) {
					free(ns);
					free(nu);
					free(set);
					set = NULL;
					break;
				}
				for (uint64_t i = 0; i <= mask; i++)
					if (used[i]) {
						uint64_t h = dmr_kv_mix64(set[i]) & nm;
						while (nu[h])
							h = (h + 1) & nm;
						nu[h] = 1;
						ns[h] = set[i];
					}
				free(set);
				free(used);
				set = ns;
				used = nu;
				mask = nm;
			}
			uint64_t h = dmr_kv_mix64(r.blocks[b]) & mask;
			while (used[h] && set[h] != r.blocks[b])
				h = (h + 1) & mask;
			if (!used[h]) {
				used[h] = 1;
				set[h] = r.blocks[b];
				n++;
			}
		}
	}
	if (st == DMR_EOF || st == DMR_OK)
		st = set && used ? DMR_OK : dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	free(set);
	free(used);
	dmr_kv_trace_close(rd);
	*n_p = n;
	if (fp) {
		fp->trace_requests = reqs;
		fp->trace_blocks = fblocks;
		fp->trace_distinct = n;
		fp->trace_hash = fh;
	}
	return st;
}

/* What makes the pool's region smaller: a bounded pool, fewer requests
 * (an unbounded pool is sized by the distinct blocks of the requests read)
 * or smaller blocks; with --capacity given, a smaller one. */
static const char *kv_pool_smaller(const dmr_kv_opts_t *o)
{
	return o->unbounded ? "give --capacity (the pool is unbounded: sized by the trace's "
			      "distinct blocks), fewer --requests or a smaller block (kv gen "
			      "--block-bytes)"
			    : "give a smaller --capacity or a smaller block (kv gen "
			      "--block-bytes)";
}

dmr_status_t kv_plan(kv_t *k, kvt_t *T, dmr_kv_geom_t *g)
{
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	dmr_kv_pool_t *p = &k->pool;
	uint64_t logical = 0, maxwr;
	k->block = dmr_kv_trace_header(k->rd)->block_bytes;
	k->nclients = T->nc;
	dmr_status_t st = kv_maxwr(k, &maxwr);
	if (st != DMR_OK || (st = kv_pool_setup(k, &logical)) != DMR_OK)
		return st;
	dmr_kv_geom_t fp;
	memset(&fp, 0, sizeof(fp));
	if (o->unbounded || g) {
		/* unbounded: real memory for every block: size the pool by the
		 * trace's distinct ids, spread evenly by either placement (no
		 * eviction) */
		uint64_t distinct;
		if ((st = count_distinct(o->trace, o->requests, &distinct, &fp, err)) != DMR_OK)
			return st;
		if (o->unbounded && (st = dmr_kv_pool_size_unbounded(p, distinct, err)) != DMR_OK)
			return st;
	}
	uint64_t nslots;
	if (dmr_kv_layout(T->nc, p->nseg, p->seg[0].nslots, p->seg_stride, &T->lay, &nslots) != 0)
		return dmr_err_set(
		    err, DMR_ERR_RANGE,
		    "%s: the pool's region (%u segments x %" PRIu64 " slots of %" PRIu64
		    " bytes, trace header block_bytes) overflows 64 bits: %s",
		    o->trace, p->nseg, T->lay.slots_per_seg, k->block, kv_pool_smaller(o));
	uint64_t half = kv_phys_bytes() / 2;
	if (T->lay.region > half)
		return dmr_err_set(
		    err, DMR_ERR_RANGE,
		    "%s: the pool needs a %" PRIu64 "-byte region (%" PRIu64 " slots of %" PRIu64
		    " bytes + mailboxes), more than half (%" PRIu64
		    " bytes) of this machine's memory: %s",
		    o->trace, T->lay.region, nslots, k->block, half, kv_pool_smaller(o));
	if (g) {
		*g = fp;
		g->version = 1;
		g->clients = T->nc;
		g->segments = p->nseg;
		g->slots_per_seg = T->lay.slots_per_seg;
		g->block_bytes = k->block;
		g->ready_base = T->lay.ready_base;
		g->pool_base = T->lay.pool_base;
		g->region = T->lay.region;
		g->unbounded = (uint64_t)o->unbounded;
		g->placement = (uint64_t)o->placement;
		g->high_water_ppm = (uint64_t)llround(o->high_water * 1e6);
		g->low_water_ppm = (uint64_t)llround(o->low_water * 1e6);
		g->requests = o->requests;
	}
	return DMR_OK;
}

dmr_status_t dmr_kv_geometry(const dmr_kv_opts_t *o, uint32_t clients, dmr_kv_geom_t *g_p,
			     dmr_err_t *err)
{
	kv_t K, *k = &K;
	kvt_t T;
	kv_begin(k, o, err);
	memset(&T, 0, sizeof(T));
	T.k = k;
	T.nc = clients;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	if (clients == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv: no clients");
	if ((st = dmr_kv_trace_open(o->trace, &k->rd, err)) != DMR_OK)
		return st;
	dmr_kv_geom_t g;
	st = kv_plan(k, &T, &g);
	if (st == DMR_OK)
		*g_p = g;
	kv_free(k);
	dmr_kv_trace_close(k->rd);
	return st;
}

/* Plan, open the backend, reach the region (one process); *m_p = the wire
 * model (verbs) or NULL. */
static dmr_status_t kvt_open(kvt_t *T, const kv_proc_t *P, dmr_kv_geom_t *gp, dmr_model_t *wm,
			     const dmr_model_t **m_p)
{
	kv_t *k = T->k;
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	dmr_status_t st = kv_plan(k, T, gp);
	if (st != DMR_OK)
		return st;
	/* the client threads' buffers (dmr_kv_xeng_init_thread: a ring of
	 * --qp-depth WRs of up to a slice each, a whole block with --slice 0)
	 * and, in one process, the pool's region: refused, before either is
	 * allocated, past half of this machine's memory, as the region alone
	 * is (kv_plan). 64 MiB blocks with --slice 0 at depth 16 are 1 GiB per
	 * client: a 1 GiB pool on shm with 4 clients peaked at 5.0 GiB. */
	uint64_t maxwr;
	kv_maxwr(k, &maxwr); /* checked by kv_plan */
	double bufs = (double)T->nl * (double)maxwr * o->qp_depth;
	double need = bufs + (T->mode == KVM_ONE ? (double)T->lay.region : 0);
	if (need > (double)(kv_phys_bytes() / 2))
		return dmr_err_set(
		    err, DMR_ERR_RANGE,
		    "%s: %u client threads x --qp-depth %u x %" PRIu64
		    "-byte WRs (%s) = %.1f GiB of client buffers%s%.1f GiB in all, more "
		    "than half of this machine's memory (%.1f GiB): give a smaller "
		    "--slice or --qp-depth, fewer --clients%s",
		    o->trace, T->nl, o->qp_depth, maxwr,
		    o->slice && o->slice < k->block ? "--slice"
						    : "a whole block: --slice 0 or >= the block",
		    bufs / 1073741824.0, T->mode == KVM_ONE ? " + the pool's region = " : ", ",
		    need / 1073741824.0, (double)kv_phys_bytes() / 1073741824.0,
		    T->mode != KVM_ONE ? ""		   /* no region in this process */
		    : o->unbounded     ? ", or --capacity" /* sized by the trace */
				       : ", or a smaller --capacity");
	T->deadline_ps = dmr_ps_from_s(o->timeout_s);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = o->cns,
			       .workers = o->clients,
			       .mr_size = T->lay.region,
			       .seed = 1,
			       .profile = o->profile,
			       .device = o->device,
			       .port = o->port,
			       .gid_index = o->gid_index};
	if (T->mode == KVM_CN)
		st = kv_cn_open(T, &cfg, P, err);
	else
		st = dmr_be_open(&cfg, &k->be, err);
	if (st != DMR_OK)
		return st;
	T->be = k->be;
	if (k->be->ops->caps & DMR_BE_CAP_DRIVEN)
		return dmr_err_set(err, DMR_ERR_INVALID, "backend %s is DRIVEN", o->backend);
	if (T->mode == KVM_ONE) {
		uint64_t memlen = 0;
		T->mem = dmr_be_mn_memory(k->be, 0, &memlen);
		if (!T->mem || memlen < T->lay.region)
			return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
					   "backend %s: the MN region is not local: run the master "
					   "in an MN process (dmreplay kv mn / kv cn)",
					   o->backend);
		memset(T->mem, 0, T->lay.pool_base); /* header, mailboxes and ready words */
	}
	/* RoCEv2 framing constants for the wire-byte count; MTU of the path */
	*m_p = kv_verbs_model(k->be, o->backend, o->profile, wm, NULL, 0, err) ? wm : NULL;
	return DMR_OK;
}

/* The client threads' state and buffers, the queues, the master (one
 * process). */
static dmr_status_t kvt_clients(kvt_t *T, const dmr_model_t *m, int *mu_p)
{
	kv_t *k = T->k;
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	T->c = calloc(T->nl, sizeof(*T->c));
	T->qh = calloc(T->nl, sizeof(*T->qh));
	T->qt = calloc(T->nl, sizeof(*T->qt));
	if (!T->c || !T->qh || !T->qt)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	dmr_status_t st = DMR_OK;
	if (T->mode == KVM_ONE) {
		dmr_kv_master_t *M = &T->M;
		if ((st = dmr_kv_master_init(M, &k->pool, T->nc, "kv", err)) != DMR_OK)
			return st;
		M->mem = T->mem;
		M->lay = T->lay;
		M->deadline_ps = T->deadline_ps;
		M->be = k->be;
		M->stop = &T->stop;
	}
	pthread_mutex_init(&T->mu, NULL);
	*mu_p = 1;
	uint64_t maxwr;
	kv_maxwr(k, &maxwr); /* checked by kv_plan */
	for (uint32_t c = 0; c < T->nl && st == DMR_OK; c++) {
		kvc_t *C = &T->c[c];
		C->T = T;
		C->w = c;
		C->g = T->g0 + c;
		C->lk_multi = NOIDX;
		size_t lb = (size_t)DMR_KV_MB_SLOTS * DMR_KV_MB_SLOT + 8 * CREQ_MAX;
		C->lbuf = calloc(1, lb);
		if (!C->lbuf)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
		if ((st = dmr_be_mr_reg(k->be, c, C->lbuf, lb, err)) != DMR_OK)
			return st;
		st = dmr_kv_xeng_init_thread(&C->X, k->be, c, o->slice, maxwr, o->qp_depth,
					     T->lay.pool_base, 1, err);
		C->X.m = m;
		C->X.corrupt = o->test_corrupt;
		C->X.err = &C->err; /* errors of the data path: the client thread's own */
	}
	return st;
}

/* The counters of the time series now, from the threads' counters. */
static void kvt_sample(kvt_t *T, uint64_t c[KV_NCNT])
{
	kv_t *k = T->k;
	memset(c, 0, KV_NCNT * sizeof(c[0]));
	for (uint32_t i = 0; i < T->nl; i++) {
		kvc_t *C = &T->c[i];
		c[KV_ARRIVALS] += dmr_kv_pool_count(&C->arrivals);
		c[KV_COMPLETED] += dmr_kv_pool_count(&C->completed);
		c[KV_BYTES_GOT] += dmr_kv_pool_count(&C->bytes_got);
		c[KV_BYTES_PUT] += dmr_kv_pool_count(&C->bytes_put);
		c[KV_WIRE_TO] += dmr_kv_pool_count(&C->X.wire_to);
		c[KV_WIRE_FROM] += dmr_kv_pool_count(&C->X.wire_from);
		c[KV_HITS] += dmr_kv_pool_count(&C->b_hit);
		c[KV_PUTS] += dmr_kv_pool_count(&C->b_put);
		c[KV_DROPPED] += dmr_kv_pool_count(&C->b_drop);
	}
	if (T->mode != KVM_CN) { /* the master's counts */
		c[KV_HITS] = dmr_kv_pool_count(&k->pool.hits);
		c[KV_PUTS] = dmr_kv_pool_count(&k->pool.puts);
		c[KV_DROPPED] = dmr_kv_pool_count(&k->pool.dropped);
	}
	c[KV_EVICTIONS] = dmr_kv_pool_count(&k->pool.evictions);
}

/* Start the master (one process) and the clients, sample the time series
 * until every client has stopped; c = the last sample. */
static dmr_status_t kvt_go(kvt_t *T, uint64_t c[KV_NCNT], uint32_t *started_p)
{
	kv_t *k = T->k;
	dmr_status_t st = DMR_OK;
	T->t0 = dmr_be_now(k->be, 0);
	if (T->mode == KVM_ONE && (st = dmr_kv_master_start(&T->M, "kv", k->err)) != DMR_OK)
		return st;
	uint32_t started = 0;
	T->running = T->nl;
	for (; started < T->nl; started++)
		if (pthread_create(&T->c[started].tid, NULL, kv_client_main, &T->c[started]) != 0) {
			st = dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: cannot start client thread %u",
					 started);
			kv_stop(T);
			__atomic_sub_fetch(&T->running, T->nl - started, __ATOMIC_SEQ_CST);
			break;
		}
	*started_p = started;
	for (;;) {
		int more = __atomic_load_n(&T->running, __ATOMIC_SEQ_CST) > 0;
		if (more) {
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
		kvt_sample(T, c);
		dmr_progress_update(&k->prog, c[KV_COMPLETED]);
		if (!more)
			break;
		dmr_tseries_advance(&k->ts, dmr_be_now(k->be, 0) - T->t0, c, NULL);
		if (k->ts.overflow && !kv_stopped(T)) {
			st = kv_ts_overflow(k);
			kv_stop(T);
		}
	}
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(T->c[i].tid, NULL);
		if (T->c[i].st != DMR_OK && st == DMR_OK)
			st = dmr_err_set(k->err, T->c[i].st, "%s", T->c[i].err.msg);
	}
	kv_stop(T);
	dmr_kv_master_join(&T->M);
	if (T->M.st != DMR_OK && st == DMR_OK)
		st = dmr_err_set(k->err, T->M.st, "%s", T->M.err.msg);
	return st;
}

/* The clients' counters into k, the last window, the checks of the end,
 * the END barrier (CN mode), the result and its files. */
static dmr_status_t kvt_collect(kvt_t *T, dmr_kv_result_t *res, const dmr_model_t *m,
				dmr_status_t st, const uint64_t c[KV_NCNT], double w0)
{
	kv_t *k = T->k;
	const dmr_kv_opts_t *o = k->o;
	dmr_err_t *err = k->err;
	uint64_t tend = 0, tfirst = UINT64_MAX, lookups = 0, rpc_ps = 0;
	kv_take_pool(k); /* the master's counts (none in a CN process) */
	for (uint32_t i = 0; i < T->nl; i++) {
		kvc_t *C = &T->c[i];
		k->X.wire_to += C->X.wire_to;
		k->X.wire_from += C->X.wire_from;
		k->X.slices += C->X.slices;
		k->cnt[KV_COMPLETED] += C->completed;
		k->waited += C->waited;
		lookups += C->lookups;
		rpc_ps += C->rpc_ps_sum;
		if (C->have_first && C->t_first < tfirst)
			tfirst = C->t_first;
		tend = max64(tend, C->t_last);
		if (T->mode == KVM_CN) { /* the master's counts are at the MN */
			k->requested += C->b_req;
			k->cnt[KV_HITS] += C->b_hit;
			k->cnt[KV_PUTS] += C->b_put;
			k->cnt[KV_DROPPED] += C->b_drop;
		}
		for (uint64_t j = 0; j < C->lat.n; j++)
			if (kv_lat_push(&k->lat, C->lat.v[j]) != 0)
				break;
	}
	/* rpc_us: the mean LOOKUP round trip, measured (post to matching response) */
	k->rpc_ps = lookups ? rpc_ps / lookups : 0;
	k->t_first = tfirst == UINT64_MAX ? T->t0 : tfirst;
	k->have_first = tfirst != UINT64_MAX;
	res->partial = st != DMR_OK;
	dmr_time_ps_t now = dmr_be_now(k->be, 0);
	if (res->partial || !tend)
		tend = max64(tend, now);
	k->t_first -= T->t0;
	tend -= T->t0;
	k->t_last = tend;
	k->cnt[KV_WIRE_TO] = k->X.wire_to;
	k->cnt[KV_WIRE_FROM] = k->X.wire_from;
	k->cnt[KV_ARRIVALS] = c[KV_ARRIVALS];
	k->cnt[KV_BYTES_GOT] = c[KV_BYTES_GOT];
	k->cnt[KV_BYTES_PUT] = c[KV_BYTES_PUT];
	dmr_tseries_finish(&k->ts, tend, k->cnt, NULL);
	uint64_t done = k->cnt[KV_COMPLETED], arrived = k->cnt[KV_ARRIVALS];
	if (st == DMR_OK && T->mode == KVM_CN && done != arrived)
		st = dmr_err_set(err, DMR_ERR_VERIFY,
				 "kv cn: %" PRIu64 " of %" PRIu64 " requests finished", done,
				 arrived);
	uint64_t pinned = 0, segused = 0;
	if (st == DMR_OK && T->mode == KVM_ONE &&
	    (!dmr_kv_pool_consistent(&k->pool, &pinned, &segused) || done != arrived))
		/* the master's invariants, as on sim */
		st = dmr_err_set(err, DMR_ERR_VERIFY,
				 "kv: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
				 " slots used by segments, %" PRIu64 " used, %" PRIu64
				 " mapped, %" PRIu64 " of %" PRIu64 " requests finished",
				 pinned, segused, k->pool.used, k->pool.mapn, done, arrived);
	/* CN mode: the END barrier: "done", or "failed" when this CN's run
	 * failed (the others are told) */
	if (T->mode == KVM_CN) {
		dmr_err_t berr;
		dmr_status_t bs = kv_cn_barrier(T, DMR_BE_BARRIER_END, st != DMR_OK, &berr);
		if (bs != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, bs, "%s", berr.msg);
	}
	res->partial = st != DMR_OK;
	kv_fill_result(k, res, m, tend);
	snprintf(res->profile, sizeof(res->profile), "%s",
		 o->device && *o->device ? o->device : "-");
	res->events = 0;
	res->wall_s = dmr_wall_s() - w0;
	if (o->out_dir) {
		dmr_err_t werr;
		if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_WRITE, "%s", werr.msg);
	}
	return st;
}

static void kvt_free(kvt_t *T, int mu)
{
	kv_t *k = T->k;
	if (T->mode == KVM_CN && !T->ended && k->be)
		/* failed before the run: tell the other CNs and the MN (END) */
		(void)kv_cn_barrier(T, DMR_BE_BARRIER_END, 1, NULL);
	for (uint32_t c = 0; T->c && c < T->nl; c++) {
		kvc_t *C = &T->c[c];
		for (uint32_t i = 0; i < CREQ_MAX; i++)
			if (C->rq[i].state != CR_FREE) {
				free(C->rq[i].ids);
				free(C->rq[i].off);
				free(C->rq[i].gslot);
				free(C->rq[i].kind);
			}
		free(C->next);
		dmr_kv_xeng_fini(&C->X);
		free(C->lbuf);
		free(C->lat.v);
	}
	if (T->qh)
		for (uint32_t c = 0; c < T->nl; c++)
			while (T->qh[c]) {
				tq_t *q = T->qh[c];
				T->qh[c] = q->next;
				free(q);
			}
	if (mu)
		pthread_mutex_destroy(&T->mu);
	dmr_kv_master_fini(&T->M);
	free(T->c);
	free(T->qh);
	free(T->qt);
}

dmr_status_t kv_run_threaded(kv_t *k, dmr_kv_result_t *res, double w0, const kv_proc_t *P)
{
	const dmr_kv_opts_t *o = k->o;
	kvt_t TT, *T = &TT;
	memset(T, 0, sizeof(*T));
	T->k = k;
	T->w0 = w0;
	T->mode = P ? P->mode : KVM_ONE;
	T->nc = o->cns * o->clients;
	T->nl = T->nc;
	dmr_kv_geom_t geom, *gp = NULL;
	if (T->mode == KVM_CN) {
		T->nl = o->clients;
		T->g0 = P->self * o->clients;
		gp = &geom;
	}
	dmr_model_t wm;
	const dmr_model_t *m = NULL;
	int mu = 0;
	uint64_t c[KV_NCNT] = {0};
	uint32_t started = 0;
	dmr_status_t st = kvt_open(T, P, gp, &wm, &m);
	if (st == DMR_OK)
		st = kvt_clients(T, m, &mu);
	if (st != DMR_OK)
		goto out;
	k->rpc_ps = 0;
	kv_ts_init(k, dmr_ps_from_ms_round(o->window_ms));
	/* CN mode: the START barrier, then the header */
	if (T->mode == KVM_CN &&
	    ((st = kv_cn_barrier(T, DMR_BE_BARRIER_START, 0, k->err)) != DMR_OK ||
	     (st = kv_cn_check_geom(T, gp, P->barrier_s, k->err)) != DMR_OK))
		goto out;
	/* set up: the caller's last word before the run (kv run: an earlier
	 * run's files are moved aside now, not before a refusal) */
	if (o->on_start && (st = o->on_start(o->on_start_arg, k->err)) != DMR_OK)
		goto out;
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	st = kvt_go(T, c, &started);
	dmr_sig_restore(&saved);
	st = kvt_collect(T, res, m, st, c, w0);
out:
	kvt_free(T, mu);
	return st;
}
