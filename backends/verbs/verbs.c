/*
 * backends/verbs/verbs.c - open and close, the start-up canary and the
 * operations table; see verbs.h for the contract and README.md for the
 * map of this folder.
 *
 * Bring-up follows rdma-core's rc_pingpong order (PD, CQ, QP, INIT, RTR,
 * RTS) with rdma_cm in place of its socket exchange: the QPs are ours (not
 * rdma_create_qp's), so rdma_init_qp_attr() gives the route's attributes and
 * we apply the clamped limits and the exchanged MTU on top before each
 * transition; rdma_establish() completes the active side.
 *
 * verbs' error conventions are converted once, where they are called:
 * ibv_post_send returns a positive errno, ibv_poll_cq a negative count,
 * ibv_create_* NULL with errno set, rdma_* -1 with errno set.
 */
#include "verbs_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define VB_CANARY_TIMEOUT_NS 10000000000ull

static uint32_t g_q_sq;
static int g_q_inline = -1;

void dmr_verbs_set_queue(uint32_t sq_depth, int inline_bytes)
{
	g_q_sq = sq_depth;
	g_q_inline = inline_bytes;
}

dmr_status_t dmr_verbs_fail(const vb_t *vb, dmr_err_t *err, dmr_status_t st, int worker, int mn,
			    const char *fmt, ...)
{
	if (!err)
		return st;
	char where[160];
	int n = snprintf(where, sizeof(where), "verbs: %s port %d", vb->dev[0] ? vb->dev : "?",
			 vb->port);
	if (mn >= 0 && n > 0 && (size_t)n < sizeof(where)) {
		char pip[INET_ADDRSTRLEN] = "?";
		unsigned pport = 0;
		if (mn < (int)DMR_BE_MAX_MNS) {
			inet_ntop(AF_INET, &vb->peer[mn].sin_addr, pip, sizeof(pip));
			pport = ntohs(vb->peer[mn].sin_port);
		}
		/* a served MN is named by its index in the cluster (MN role: slot 0) */
		int label = (uint32_t)mn < vb->nmn_srv ? (int)vb->mn[mn].idx : mn;
		n += snprintf(where + n, sizeof(where) - (size_t)n, ", MN %d (%s:%u)", label, pip,
			      pport);
	}
	if (worker >= 0 && n > 0 && (size_t)n < sizeof(where))
		snprintf(where + n, sizeof(where) - (size_t)n, ", worker %d", worker);
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dmr_err_set(err, st, "%s: %s", where, msg);
}

void dmr_verbs_close(dmr_be_t *be)
{
	vb_t *vb = to_vb(be);
	dmr_verbs_watch_stop(vb);
	dmr_verbs_rpc_stop(vb); /* the service threads read the workers' side tables */
	uint64_t fl = atomic_load(&vb->flushed);
	if (fl)
		fprintf(stderr,
			"verbs: %llu flushed completion(s) after the first failure (not listed)\n",
			(unsigned long long)fl);
	if (vb->w) {
		for (uint32_t i = 0; i < vb->nwalloc; i++) {
			vb_worker_t *wk = &vb->w[i];
			for (uint32_t m = 0; wk->qps && m < vb->be.cfg.mns; m++) {
				vb_qp_t *q = &wk->qps[m];
				if (q->qp)
					ibv_destroy_qp(q->qp);
				if (q->id)
					rdma_destroy_id(q->id);
				free(q->slots);
				free(q->rpc);
			}
			free(wk->qps);
			if (wk->rpcmr)
				ibv_dereg_mr(wk->rpcmr);
			free(wk->rpcbuf);
			if (wk->cq)
				ibv_destroy_cq(wk->cq);
			for (uint32_t k = 0; k < wk->nmr; k++)
				ibv_dereg_mr(wk->mrs[k].mr);
			free(wk->mrs);
			free(wk->tim);
			pthread_mutex_destroy(&wk->tmu);
			free(wk->wrs);
			free(wk->sges);
			free(wk->mst);
		}
		free(vb->w);
	}
	dmr_verbs_mn_stop(vb);
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++) {
		pthread_mutex_destroy(&vb->mn[m].lock);
		if (vb->shadow[m])
			munmap(vb->shadow[m], vb->shadow_len);
	}
	free(vb->cbuf);
	if (vb->pd)
		ibv_dealloc_pd(vb->pd);
	if (vb->ch)
		rdma_destroy_event_channel(vb->ch);
	if (vb->ctx)
		ibv_close_device(vb->ctx);
	free(vb);
}

/* The cluster barrier (backend.h). Loopback: every CN is this process. CN
 * role: START and END through the MN's control page (verbs_role.c); their
 * deadline is b->deadline_ps, else role->barrier_s after open() (START) /
 * role->end_s after the call (END). */
static dmr_status_t vb_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
			       dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (b->phase != DMR_BE_BARRIER_START && b->phase != DMR_BE_BARRIER_END)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1, "barrier: bad phase %u",
				      b->phase);
	if (!vb->role) {
		if (!b->failed)
			*sum_p = b->value;
		return DMR_OK;
	}
	int start = b->phase == DMR_BE_BARRIER_START;
	double dflt_s = start ? vb->role->barrier_s : vb->role->end_s;
	/* START's default deadline counts from open() (vb_now_ns 0), as the
	 * MN's barrier_s + 5 counts from its start and the connection retries
	 * from open: a CN whose set-up was slow still times out (naming the
	 * missing CNs) before the MN gives up. END's from the call. */
	uint64_t now_ns = vb_now_ns(vb);
	uint64_t deadline_ns = start ? secs_ns(dflt_s) : now_ns + secs_ns(dflt_s);
	vb->bar_t0 = start ? 0 : now_ns; /* the timeout the messages give */
	if (b->deadline_ps) {
		/* dmr_be_now() time (ps since open) as vb_now_ns time */
		uint64_t now_ps = dmr_verbs_now(be, 0);
		uint64_t left_ps = b->deadline_ps > now_ps ? b->deadline_ps - now_ps : 0;
		deadline_ns = now_ns + left_ps / 1000;
	}
	if (start ? vb->started : vb->ended)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, 0, 0,
				      "barrier: %s called twice in one run",
				      start ? "START" : "END");
	if (start)
		vb->started = 1;
	else
		vb->ended = 1;
	if (!start && b->failed) { /* tell the others, whatever happened before */
		dmr_verbs_watch_stop(vb);
		return dmr_verbs_role_end(vb, b, deadline_ns, sum_p, err);
	}
	if (vb->bar_st != DMR_OK)
		return dmr_verbs_fail(vb, err, vb->bar_st, -1, 0,
				      "barrier %s: an earlier barrier of this run failed",
				      start ? "START" : "END");
	if (!start && !vb->started)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, 0, "barrier: END before START");
	dmr_status_t st;
	if (start) {
		st = dmr_verbs_role_start(vb, deadline_ns, err);
		/* the run: every MN watched (a dead one stops the posts) */
		if (st == DMR_OK)
			st = dmr_verbs_watch_start(vb, err);
	} else {
		dmr_verbs_watch_stop(vb);
		uint32_t dead = atomic_load_explicit(&vb->dead_mn, memory_order_acquire);
		if (dead) {
			/* an MN died after the last post: this run is not verified;
			 * tell the others as a failed run would */
			dmr_be_barrier_t fb = *b;
			fb.failed = 1;
			dmr_err_t e2;
			dmr_verbs_role_end(vb, &fb, deadline_ns, sum_p, &e2);
			st = dmr_err_set(err, DMR_ERR_REMOTE, "end barrier: %s", vb->dead_msg);
		} else {
			st = dmr_verbs_role_end(vb, b, deadline_ns, sum_p, err);
		}
	}
	vb->bar_st = st;
	return st;
}

/* DMR_BE_CTL_MN_STATS: the per-MN counts summed over this handle's
 * workers (busy times 0: no model). Call when the workers are quiet. */
static void vb_mn_stats(vb_t *vb, dmr_be_mn_stats_t *out)
{
	uint32_t mns = vb->be.cfg.mns;
	memset(out, 0, mns * sizeof(*out));
	for (uint32_t i = 0; i < vb->nworkers; i++)
		for (uint32_t m = 0; vb->w[i].mst && m < mns; m++) {
			const dmr_be_mn_stats_t *s = &vb->w[i].mst[m];
			out[m].verbs += s->verbs;
			out[m].reads += s->reads;
			out[m].writes += s->writes;
			out[m].atomics += s->atomics;
			out[m].bytes_read += s->bytes_read;
			out[m].bytes_written += s->bytes_written;
			out[m].rpcs += s->rpcs;
		}
	for (uint32_t m = 0; m < vb->nmn_srv && m < mns && !vb->role; m++)
		out[m].rpc_busy_ps = atomic_load(&vb->mn[m].rpc_busy_ns) * 1000ull;
}

/* DMR_BE_CTL_ROLE: the CN role is CN role->self of the cluster's ncn, its
 * worker 0 the cluster's first_worker; loopback holds the cluster.
 * DMR_BE_CTL_MN_STATS: vb_mn_stats. */
static dmr_status_t vb_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (op == DMR_BE_CTL_MN_STATS) {
		vb_mn_stats(vb, arg);
		return DMR_OK;
	}
	if (op == DMR_BE_CTL_DM_LOCKS) /* the sim's way: refused (verbs_dm.c) */
		return dmr_verbs_dm_refuse(vb, err);
	if (op == DMR_BE_CTL_RPC_MODE) /* RPCs to the MN's CPU (verbs_rpc.c) */
		return dmr_verbs_rpc_mode(vb, arg, err);
	if (op == DMR_BE_CTL_LOCK_REGION) /* lock words apart, own MR (verbs_dm.c) */
		return dmr_verbs_lock_region(vb, arg, err);
	if (op != DMR_BE_CTL_ROLE)
		return dmr_be_ctl_unsupported(be, op, err);
	const dmr_be_config_t *c = &be->cfg;
	dmr_be_role_t *r = arg;
	if (vb->role)
		*r = (dmr_be_role_t){.cn = vb->role->self,
				     .cns = vb->role->cl->ncn,
				     .first_worker = vb->role->first_worker,
				     .workers = vb->role->cl->ncn * c->workers};
	else
		*r = (dmr_be_role_t){
		    .cn = 0, .cns = c->cns, .first_worker = 0, .workers = c->cns * c->workers};
	return DMR_OK;
}

static void *vb_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	vb_t *vb = to_vb(be);
	if (mn >= vb->be.cfg.mns || mn >= DMR_BE_MAX_MNS)
		return NULL;
	if (vb->role) { /* the shadow: see verbs.h */
		if (len_p)
			*len_p = vb->shadow_len;
		return vb->shadow[mn];
	}
	if (!vb->mn[mn].mem)
		return NULL;
	dmr_verbs_lock_sync(vb, mn); /* lock words in device memory: copied back */
	if (len_p)
		*len_p = vb->mn[mn].size;
	return vb->mn[mn].mem;
}

static void vb_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	vb_t *vb = to_vb(be);
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < vb->nworkers; i++) {
		const dmr_be_stats_t *s = &vb->w[i].st;
		st->verbs += s->verbs;
		st->reads += s->reads;
		st->writes += s->writes;
		st->cas += s->cas;
		st->faa += s->faa;
		st->bytes_read += s->bytes_read;
		st->bytes_written += s->bytes_written;
		st->doorbells += s->doorbells;
		st->errors += s->errors;
		st->rpcs += s->rpcs;
	}
	for (uint32_t m = 0; m < vb->nmn_srv && !vb->role; m++) {
		vb_mn_t *mn = &vb->mn[m];
		if (!atomic_load(&mn->rpc_served))
			continue;
		st->rpc_busy_ps += atomic_load(&mn->rpc_busy_ns) * 1000ull;
		st->rpc_cores++; /* its service thread */
	}
}

static dmr_status_t canary_op(vb_t *vb, uint32_t worker, uint32_t mn, uint8_t opcode, void *local,
			      uint64_t remote, uint64_t cmp, uint64_t swp, dmr_err_t *err)
{
	return dmr_verbs_op_wait(vb, worker, mn, opcode, local, remote, 8, cmp, swp,
				 VB_CANARY_TIMEOUT_NS, "start-up canary", err);
}

/* Canary WRITE + READ back, CAS old value (detects the byte order of the
 * returned value) at `remote` of MN `mn` via `worker`; leaves those 8 bytes
 * zero. */
static dmr_status_t canary_check(vb_t *vb, uint32_t worker, uint32_t mn, uint64_t remote,
				 dmr_err_t *err)
{
	int im = (int)mn;
	static const uint64_t pat = 0x0123456789abcdefull;
	vb_worker_t *wk = &vb->w[worker];
	uint64_t *buf = aligned_alloc(64, 64);
	if (!buf)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)worker, im, "out of memory");
	dmr_status_t st = dmr_verbs_mr_reg(&vb->be, worker, buf, 64, err);
	if (st != DMR_OK)
		goto out;
	buf[0] = pat;
	buf[1] = 0;
	if ((st = canary_op(vb, worker, mn, DMR_WR_WRITE, &buf[0], remote, 0, 0, err)) != DMR_OK ||
	    (st = canary_op(vb, worker, mn, DMR_WR_READ, &buf[1], remote, 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[1] != pat) {
		st = dmr_verbs_fail(
		    vb, err, DMR_ERR_VERIFY, (int)worker, im,
		    "start-up canary: READ returned 0x%016llx after WRITE of 0x%016llx%s",
		    (unsigned long long)buf[1], (unsigned long long)pat,
		    buf[1] == 0 ? " (all zeros: DMA/IOMMU misconfigured?)" : "");
		goto out;
	}
	buf[2] = 0;
	if ((st = canary_op(vb, worker, mn, DMR_WR_CAS, &buf[2], remote, pat, 0, err)) != DMR_OK)
		goto out;
	if (buf[2] == __builtin_bswap64(pat)) {
		vb->atomic_bswap = 1;
	} else if (buf[2] != pat) {
		st = dmr_verbs_fail(vb, err, DMR_ERR_VERIFY, (int)worker, im,
				    "start-up canary: CAS returned old value 0x%016llx, expected "
				    "0x%016llx",
				    (unsigned long long)buf[2], (unsigned long long)pat);
		goto out;
	}
	buf[3] = 1;
	if ((st = canary_op(vb, worker, mn, DMR_WR_READ, &buf[3], remote, 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[3] != 0)
		st = dmr_verbs_fail(vb, err, DMR_ERR_VERIFY, (int)worker, im,
				    "start-up canary: CAS (compare matched) left 0x%016llx, not 0",
				    (unsigned long long)buf[3]);
out:
	/* the canary is not part of the run: forget its counters and region */
	if (st == DMR_OK) {
		wk->st = (dmr_be_stats_t){0};
		memset(wk->mst, 0, vb->be.cfg.mns * sizeof(*wk->mst));
	}
	if (wk->nmr && wk->mrs[wk->nmr - 1].addr == (uintptr_t)buf) {
		ibv_dereg_mr(wk->mrs[wk->nmr - 1].mr);
		wk->nmr--;
	}
	free(buf);
	return st;
}

/* Map one shadow (the CN role's image of an MN region) into *p. */
static dmr_status_t map_shadow(vb_t *vb, uint32_t m, dmr_err_t *err)
{
	void *p =
	    mmap(NULL, vb->shadow_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, (int)m,
				      "mmap of %zu bytes (the image of this MN's region): %s",
				      vb->shadow_len, strerror(errno));
	vb->shadow[m] = p;
	return DMR_OK;
}

/* CN role: every MN of the cluster as a peer (ip, its port). */
static dmr_status_t role_peers(vb_t *vb, dmr_err_t *err)
{
	const dmr_verbs_cluster_t *cl = vb->role->cl;
	for (uint32_t m = 0; m < cl->nmn; m++) {
		vb->peer[m].sin_family = AF_INET;
		vb->peer[m].sin_port = htons(cl->mn[m].port ? cl->mn[m].port : cl->port);
		if (inet_pton(AF_INET, cl->mn[m].ip, &vb->peer[m].sin_addr) != 1)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "verbs: MN %u (index %u): ip '%s' is not IPv4",
					   cl->mn[m].id, m, cl->mn[m].ip);
	}
	return DMR_OK;
}

/* CN role, after the control worker connected to every MN: each region
 * large enough, the shadows and control buffer registered, a canary per MN
 * in this CN's slot of its control page. */
static dmr_status_t role_check_regions(vb_t *vb, dmr_err_t *err)
{
	const dmr_verbs_role_t *role = vb->role;
	const dmr_be_config_t *cfg = &vb->be.cfg;
	dmr_status_t st = DMR_OK;
	for (uint32_t m = 0; m < cfg->mns; m++) {
		vb_qp_t *q = &vb->w[vb->ctlw].qps[m];
		vb->rctl[m] = (q->rlen + 63) & ~63ull;
		if (q->rlen < role->need_bytes || q->rlen < cfg->mr_size) {
			uint64_t need =
			    role->need_bytes > cfg->mr_size ? role->need_bytes : cfg->mr_size;
			return dmr_verbs_fail(
			    vb, err, DMR_ERR_RANGE, -1, (int)m,
			    "the MN region has %llu bytes; this trace with %u workers in all "
			    "needs %llu (raise the MN's mr_size)",
			    (unsigned long long)q->rlen, role->cl->ncn * cfg->workers,
			    (unsigned long long)need);
		}
		if ((st = dmr_verbs_mr_reg(&vb->be, vb->ctlw, vb->shadow[m], vb->shadow_len,
					   err)) != DMR_OK)
			return st;
	}
	if ((st = dmr_verbs_mr_reg(&vb->be, vb->ctlw, vb->cbuf, DMR_VERBS_CTL_BYTES, err)) !=
	    DMR_OK)
		return st;
	/* canary in this CN's own slot of each control page (CNs run at once) */
	for (uint32_t m = 0; m < cfg->mns && st == DMR_OK; m++)
		st = canary_check(vb, vb->ctlw, m, vb->rctl[m] + CTL_CANARY + 64 * role->self, err);
	return st;
}

static dmr_status_t vb_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	const dmr_verbs_role_t *role = dmr_verbs_role_next();
	if (role && (!role->cl || role->self >= role->cl->ncn || role->cl->nmn < 1 ||
		     role->cl->nmn > DMR_BE_MAX_MNS))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: CN role: bad role (CN index %u of %u, %u MNs; 1..%u "
				   "are supported)",
				   role->self, role->cl ? role->cl->ncn : 0,
				   role->cl ? role->cl->nmn : 0, DMR_BE_MAX_MNS);
	if (cfg->cluster && *cfg->cluster)
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "verbs: cluster configs (%s) are taken by `dmreplay mn` / `cn` "
				   "and `run --config` (docs/ROLES.md), not by the backend",
				   cfg->cluster);
	if (cfg->mns < 1 || cfg->mns > DMR_BE_MAX_MNS)
		return dmr_err_set(err, DMR_ERR_INVALID, "verbs: %u MNs requested; legal 1..%u",
				   cfg->mns, DMR_BE_MAX_MNS);
	if (role && cfg->mns != role->cl->nmn)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: CN role: %u MNs requested (--mns) but the cluster "
				   "config lists %u",
				   cfg->mns, role->cl->nmn);
	if (cfg->cns == 0 || cfg->workers == 0 || cfg->cns > 1024 || cfg->workers > 1024)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: cns %u / workers %u out of range (1..1024)", cfg->cns,
				   cfg->workers);
	if (cfg->mr_size < 64 || (cfg->mr_size & 7))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: mr_size %llu must be a multiple of 8, at least 64",
				   (unsigned long long)cfg->mr_size);
	vb_t *vb = calloc(1, sizeof(*vb));
	if (!vb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "verbs: out of memory");
	vb->be.ops = &dmr_verbs_ops;
	vb->be.cfg = *cfg;
	vb->port = cfg->port > 0 ? cfg->port : 1;
	vb->gid_index = -1;
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++) {
		vb->mn[m].stop_fd = -1;
		pthread_mutex_init(&vb->mn[m].lock, NULL);
	}
	vb->retry_cnt = 7;
	vb->rnr_retry = 7;
	vb->timeout = -1;
	vb->role = role;
	vb->q_sq = g_q_sq;
	vb->q_inline = g_q_inline;
	atomic_flag_clear(&vb->failed_logged);
	clock_gettime(CLOCK_MONOTONIC, &vb->t0);
	dmr_verbs_clock_start(vb);
	dmr_status_t st = dmr_verbs_find_device(vb, cfg->device, err);
	if (st != DMR_OK)
		goto fail;
	if ((st = dmr_verbs_choose_gid(vb, cfg->gid_index,
				       role ? role->cl->cn[role->self].ip : NULL, err)) != DMR_OK)
		goto fail;
	dmr_verbs_clamp_limits(vb);
	if (role) {
		const dmr_verbs_cluster_t *cl = role->cl;
		vb->retry_cnt = cl->retry_cnt;
		vb->rnr_retry = cl->rnr_retry;
		vb->timeout = cl->timeout;
		if ((st = role_peers(vb, err)) != DMR_OK)
			goto fail;
		if ((st = dmr_verbs_memlock_check(vb, cfg->mns * cfg->mr_size + DMR_VERBS_CTL_BYTES,
						  "the CN's images of the MN regions", -1, err)) !=
		    DMR_OK)
			goto fail;
		vb->shadow_len = cfg->mr_size;
		for (uint32_t m = 0; m < cfg->mns; m++)
			if ((st = map_shadow(vb, m, err)) != DMR_OK)
				goto fail;
		vb->cbuf = aligned_alloc(64, DMR_VERBS_CTL_BYTES);
		if (!vb->cbuf) {
			st = dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
			goto fail;
		}
		memset(vb->cbuf, 0, DMR_VERBS_CTL_BYTES);
	} else {
		/* loopback: one MN thread, listener and region per MN */
		for (uint32_t m = 0; m < cfg->mns; m++) {
			vb->mn[m].idx = m;
			if ((st = dmr_verbs_mn_start(vb, m, err)) != DMR_OK)
				goto fail;
		}
	}
	vb->ch = rdma_create_event_channel();
	if (!vb->ch) {
		st = dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, -1, "rdma_create_event_channel: %s",
				    strerror(errno));
		goto fail;
	}
	if (set_nonblock(vb->ch->fd)) {
		st = dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, -1, "fcntl(O_NONBLOCK): %s",
				    strerror(errno));
		goto fail;
	}
	vb->pd = ibv_alloc_pd(vb->ctx);
	if (!vb->pd) {
		st = dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, -1, "ibv_alloc_pd: %s",
				    strerror(errno));
		goto fail;
	}
	vb->nworkers = cfg->cns * cfg->workers;
	vb->ctlw = vb->nworkers;
	vb->nwalloc = vb->nworkers + (role ? 1 : 0);
	vb->w = calloc(vb->nwalloc, sizeof(*vb->w));
	if (!vb->w) {
		st = dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < vb->nwalloc; i++)
		pthread_mutex_init(&vb->w[i].tmu, NULL);
	uint64_t cdeadline = vb_now_ns(vb) + secs_ns(role ? role->barrier_s : 0);
	for (uint32_t i = 0; i < vb->nwalloc; i++) {
		vb_worker_t *wk = &vb->w[i];
		wk->qps = calloc(cfg->mns, sizeof(*wk->qps));
		wk->mst = calloc(cfg->mns, sizeof(*wk->mst));
		wk->wrs = calloc(vb->sq_depth, sizeof(*wk->wrs));
		wk->sges = calloc(vb->sq_depth, sizeof(*wk->sges));
		if (!wk->qps || !wk->mst || !wk->wrs || !wk->sges) {
			st = dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)i, -1, "out of memory");
			goto fail;
		}
		wk->cq = ibv_create_cq(vb->ctx, (int)vb->cq_depth, NULL, NULL, 0);
		if (!wk->cq) {
			st = dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)i, -1,
					    "ibv_create_cq(%u CQEs): %s", vb->cq_depth,
					    strerror(errno));
			goto fail;
		}
		for (uint32_t m = 0; m < cfg->mns; m++) {
			vb_qp_t *q = &wk->qps[m];
			q->depth = vb->sq_depth;
			q->slots = calloc(q->depth, sizeof(*q->slots));
			q->rpc = calloc(VB_RPC_SLOTS, sizeof(*q->rpc));
			if (!q->slots || !q->rpc) {
				st = dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)i, (int)m,
						    "out of memory");
				goto fail;
			}
			if ((st = role ? dmr_verbs_cn_connect_retry(vb, i, m, cdeadline, err)
				       : dmr_verbs_cn_connect(vb, i, m, err)) != DMR_OK)
				goto fail;
		}
	}
	if (role) {
		if ((st = role_check_regions(vb, err)) != DMR_OK)
			goto fail;
		const dmr_verbs_cluster_t *cl = role->cl;
		char mnl[512];
		size_t off = 0;
		mnl[0] = 0;
		for (uint32_t m = 0; m < cl->nmn && off < sizeof(mnl); m++)
			off += (size_t)snprintf(mnl + off, sizeof(mnl) - off, "%s%u at %s:%u",
						m ? ", " : "", cl->mn[m].id, cl->mn[m].ip,
						ntohs(vb->peer[m].sin_port));
		fprintf(stderr,
			"cn %u: connected %u worker QPs + 1 control QP to each of %u MN%s (%s); "
			"canary WRITE/READ and CAS old value checked on each\n",
			cl->cn[role->self].id, vb->nworkers, cl->nmn, cl->nmn == 1 ? "" : "s", mnl);
	} else {
		for (uint32_t m = 0; m < cfg->mns; m++)
			if ((st = canary_check(vb, 0, m, 0, err)) != DMR_OK)
				goto fail;
	}
	dmr_verbs_log_limits_once(vb);
	dmr_verbs_clock_calibrate(vb);
	*be_p = &vb->be;
	return DMR_OK;
fail:
	dmr_verbs_close(&vb->be);
	return st;
}

const dmr_be_ops_t dmr_verbs_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "verbs",
    .caps = DMR_BE_CAP_DM_APART | DMR_BE_CAP_RPC,
    .open = vb_open,
    .close = dmr_verbs_close,
    .mr_reg = dmr_verbs_mr_reg,
    .mr_dereg = dmr_verbs_mr_dereg,
    .post = dmr_verbs_post,
    .rpc = dmr_verbs_rpc,
    .poll = dmr_verbs_poll,
    .now = dmr_verbs_now,
    .timer = dmr_verbs_timer,
    .barrier = vb_barrier,
    .mn_memory = vb_mn_memory,
    .stats = vb_stats,
    .control = vb_control,
};
