/*
 * backends/verbs/verbs_rpc.c - RPCs to the MN's CPU over RDMA (issue 14
 * lever A1; backend.h dmr_be_rpc; docs/AURA.md "A1 alone"). Loopback only.
 *
 * Wire: SEND/RECV on the worker's RC QP to the MN (the QP the one-sided
 * WRs use, so a request is one more WR in its send-queue ring). The
 * request is a SEND with immediate, imm = worker << 8 | RPC slot, of
 * min(req_bytes, VB_RPC_MSG) bytes; the MN's service thread (one per MN,
 * started with its first QP, stopped and joined at close) takes it from its
 * receive CQ (blocking on a completion channel when idle), runs the
 * handler on the MN's registered region and answers with a SEND with the
 * same immediate of min(response, VB_RPC_MSG) bytes, which completes as a
 * receive on the worker's CQ: that is the DMR_WR_RPC completion.
 *
 * The handler, its argument and its return value travel in a side table
 * (vb_qp_t.rpc, indexed by the RPC slot of the immediate): the MN is this
 * process, the handler is the core's code and its argument a CN context
 * (why the CN and MN roles across processes have no RPC path). The bytes
 * on the wire are the modelled sizes (their content is not read: every
 * receive of a worker, and of an MN, lands in one buffer). Ordering in
 * memory: the CN release-stores the slot's tag before the SEND and the MN
 * acquire-loads it; the MN release-stores done = tag after the handler and
 * the CN acquire-loads it when the answer arrives.
 *
 * Flow control: at most VB_RPC_SLOTS RPCs in flight per (worker, MN), and
 * the MN keeps VB_RPC_SLOTS receives posted on each QP (reposted before it
 * answers), so a request always finds one. The handler's lock words are
 * taken with CPU atomics: dmr_verbs_rpc_mode refuses a mixed run unless the
 * device's atomic_cap is IBV_ATOMIC_GLOB.
 */
#include "verbs_impl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *atomic_cap_name(enum ibv_atomic_cap c)
{
	switch (c) {
	case IBV_ATOMIC_NONE:
		return "IBV_ATOMIC_NONE";
	case IBV_ATOMIC_HCA:
		return "IBV_ATOMIC_HCA";
	case IBV_ATOMIC_GLOB:
		return "IBV_ATOMIC_GLOB";
	}
	return "unknown";
}

dmr_status_t dmr_verbs_rpc_mode(vb_t *vb, const dmr_be_rpc_mode_t *md, dmr_err_t *err)
{
	if (vb->role)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "no RPC path in the CN role (the MN process would need the "
				      "core's handler and the CN's context: RPCs run in loopback)");
	if (vb->lk_len)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "RPCs with the lock words apart (--locks-apart, --dm-locks): "
				      "the MN's CPU reads them in the region");
	if (md && md->mixed && vb->dattr.atomic_cap != IBV_ATOMIC_GLOB)
		return dmr_verbs_fail(
		    vb, err, DMR_ERR_INVALID, -1, -1,
		    "atomic_cap %s: the MN CPU's atomics (RPC handlers) are not guaranteed "
		    "atomic with the NIC's RDMA atomics on the same lock words, so RPCs "
		    "cannot run beside one-sided transactions here (IBV_ATOMIC_GLOB needed); "
		    "every transaction by RPC on one MN (--rpc all, --mns 1) has no mixing",
		    atomic_cap_name(vb->dattr.atomic_cap));
	vb->rpc_mode = 1;
	return DMR_OK;
}

/* ---- CN side ---- */

static dmr_status_t arm(vb_t *vb, uint32_t worker, uint32_t mn, dmr_err_t *err)
{
	vb_worker_t *wk = &vb->w[worker];
	vb_qp_t *q = &wk->qps[mn];
	if (!wk->rpcmr) {
		if (!wk->rpcbuf)
			wk->rpcbuf = calloc(1, VB_RPC_MSG);
		if (!wk->rpcbuf)
			return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)worker, (int)mn,
					      "out of memory");
		wk->rpcmr = ibv_reg_mr(vb->pd, wk->rpcbuf, VB_RPC_MSG, IBV_ACCESS_LOCAL_WRITE);
		if (!wk->rpcmr)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)worker, (int)mn,
					      "ibv_reg_mr of the RPC buffer: %s", strerror(errno));
	}
	for (uint32_t k = 0; k < VB_RPC_SLOTS; k++) {
		struct ibv_sge g = {
		    .addr = (uintptr_t)wk->rpcbuf, .length = VB_RPC_MSG, .lkey = wk->rpcmr->lkey};
		struct ibv_recv_wr r = {.wr_id = VB_RPC_RECV | (uint64_t)mn << 32 | k,
					.sg_list = &g,
					.num_sge = 1},
				   *bad;
		int rc = ibv_post_recv(q->qp, &r, &bad);
		if (rc)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)worker, (int)mn,
					      "ibv_post_recv (RPC answers, %u of %u): %s", k,
					      VB_RPC_SLOTS, strerror(rc));
	}
	q->rpc_armed = 1;
	return DMR_OK;
}

dmr_status_t dmr_verbs_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			   dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (vb->role)
		return dmr_verbs_fail(vb, err, DMR_ERR_UNSUPPORTED, (int)worker, (int)mn,
				      "no RPC path in the CN role (RPCs run in loopback)");
	vb_worker_t *wk = &vb->w[worker];
	vb_qp_t *q = &wk->qps[mn];
	dmr_status_t st;
	if (!q->rpc_armed && (st = arm(vb, worker, mn, err)) != DMR_OK)
		return st;
	if (q->rpc_inflight + q->rpc_failed >= VB_RPC_SLOTS || q->outstanding >= q->depth)
		return dmr_verbs_fail(vb, err, DMR_ERR_AGAIN, (int)worker, (int)mn,
				      "%u RPCs in flight (at most %u), %u of %u send-queue slots "
				      "used (poll first)",
				      q->rpc_inflight, VB_RPC_SLOTS, q->outstanding, q->depth);
	uint32_t idx = q->rpc_next;
	while (q->rpc[idx].busy)
		idx = (idx + 1) % VB_RPC_SLOTS;
	q->rpc_next = (idx + 1) % VB_RPC_SLOTS;
	vb_rpc_ent_t *e = &q->rpc[idx];
	if (++e->seq == 0)
		e->seq = 1;
	e->wr_id = rpc->wr_id;
	e->handler = rpc->handler;
	e->arg = rpc->arg;
	e->resp_cap = rpc->resp_cap;
	e->resp = 0;
	atomic_store_explicit(&e->tag, e->seq, memory_order_release);

	uint32_t run = q->unsig_run, slot = q->head;
	int sig = 0;
	if (++run >= q->depth / 2)
		sig = 1, run = 0; /* reclaim send queue slots */
	uint32_t len = rpc->req_bytes < VB_RPC_MSG ? rpc->req_bytes : VB_RPC_MSG;
	struct ibv_sge g = {.addr = (uintptr_t)wk->rpcbuf, .length = len, .lkey = wk->rpcmr->lkey};
	struct ibv_send_wr s = {.wr_id = (uint64_t)mn << 32 | slot,
				.sg_list = &g,
				.num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = (sig ? IBV_SEND_SIGNALED : 0) |
					      (len <= vb->inline_used ? IBV_SEND_INLINE : 0),
				.imm_data = htonl(worker << 8 | idx)},
			   *bad;
	q->slots[slot] = (vb_slot_t){
	    .wr_id = rpc->wr_id, .length = idx, .opcode = DMR_WR_RPC, .rseq = (uint16_t)e->seq};
	int rc = ibv_post_send(q->qp, &s, &bad);
	if (rc)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)worker, (int)mn,
				      "ibv_post_send (RPC request): %s", strerror(rc));
	e->busy = 1;
	q->rpc_inflight++;
	q->head = (q->head + 1) % q->depth;
	q->outstanding++;
	q->unsig_run = run;
	wk->st.doorbells++;
	return DMR_OK;
}

int dmr_verbs_rpc_send_failed(vb_qp_t *q, const vb_slot_t *s)
{
	vb_rpc_ent_t *e = &q->rpc[s->length % VB_RPC_SLOTS];
	if (e->busy != 1 || (uint16_t)e->seq != s->rseq)
		return 0;
	e->busy = 0;
	q->rpc_inflight--;
	return 1;
}

int dmr_verbs_rpc_answer(vb_t *vb, uint32_t worker, const struct ibv_wc *wc, dmr_wc_t *out)
{
	vb_worker_t *wk = &vb->w[worker];
	uint32_t m = (uint32_t)(wc->wr_id >> 32) & 0xffffu;
	if (m >= vb->be.cfg.mns)
		return 0;
	vb_qp_t *q = &wk->qps[m];
	if (wc->status != IBV_WC_SUCCESS) {
		/* the QP is gone: every RPC in flight on it fails (a flushed
		 * receive per posted one: only the first finds any) */
		for (uint32_t k = 0; k < VB_RPC_SLOTS; k++)
			if (q->rpc[k].busy == 1) {
				q->rpc[k].busy = 2;
				q->rpc_inflight--;
				q->rpc_failed++;
			}
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			wk->st.errors++;
		return 0;
	}
	/* the receive goes back before anything else (the MN answers only
	 * requests the CN sent, one per free RPC slot) */
	struct ibv_sge g = {
	    .addr = (uintptr_t)wk->rpcbuf, .length = VB_RPC_MSG, .lkey = wk->rpcmr->lkey};
	struct ibv_recv_wr r = {.wr_id = wc->wr_id, .sg_list = &g, .num_sge = 1}, *bad;
	uint8_t status = DMR_WC_SUCCESS;
	if (ibv_post_recv(q->qp, &r, &bad))
		status = DMR_WC_GENERAL_ERR;
	uint32_t imm = ntohl(wc->imm_data);
	vb_rpc_ent_t *e = &q->rpc[imm & 0xffu];
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || (imm >> 8) != worker ||
	    (imm & 0xffu) >= VB_RPC_SLOTS || e->busy != 1) {
		wk->st.errors++; /* an answer to no RPC of ours: cannot happen */
		return 0;
	}
	uint32_t tag = atomic_load_explicit(&e->tag, memory_order_relaxed);
	if (atomic_load_explicit(&e->done, memory_order_acquire) != tag)
		status = DMR_WC_GENERAL_ERR;
	uint32_t resp = e->resp;
	if (resp > e->resp_cap) /* the handler broke its contract */
		status = DMR_WC_GENERAL_ERR;
	e->busy = 0;
	q->rpc_inflight--;
	if (status == DMR_WC_SUCCESS) {
		wk->st.rpcs++;
		wk->mst[m].rpcs++;
	} else {
		wk->st.errors++;
	}
	*out = (dmr_wc_t){.wr_id = e->wr_id,
			  .opcode = DMR_WR_RPC,
			  .status = status,
			  .mn = (uint16_t)m,
			  .byte_len = status == DMR_WC_SUCCESS ? resp : 0};
	return 1;
}

int dmr_verbs_rpc_failed(vb_t *vb, uint32_t worker, dmr_wc_t *wcs, int max)
{
	vb_worker_t *wk = &vb->w[worker];
	int n = 0;
	for (uint32_t m = 0; m < vb->be.cfg.mns && n < max; m++) {
		vb_qp_t *q = &wk->qps[m];
		for (uint32_t k = 0; k < VB_RPC_SLOTS && q->rpc_failed && n < max; k++)
			if (q->rpc[k].busy == 2) {
				q->rpc[k].busy = 0;
				q->rpc_failed--;
				wk->st.errors++;
				wcs[n++] = (dmr_wc_t){.wr_id = q->rpc[k].wr_id,
						      .opcode = DMR_WR_RPC,
						      .status = DMR_WC_FLUSH_ERR,
						      .mn = (uint16_t)m};
			}
	}
	return n;
}

/* ---- MN side ---- */

dmr_status_t dmr_verbs_rpc_mn_init(vb_t *vb, uint32_t m, dmr_err_t *err)
{
	vb_mn_t *mn = &vb->mn[m];
	const dmr_be_config_t *cfg = &vb->be.cfg;
	int im = (int)m;
	mn->rpc_nw = cfg->cns * cfg->workers;
	uint64_t cqe = (uint64_t)mn->rpc_nw * VB_RPC_SLOTS;
	if (cqe > (uint64_t)vb->dattr.max_cqe)
		return dmr_verbs_fail(vb, err, DMR_ERR_RANGE, -1, im,
				      "RPCs: %u workers x %u in flight need %llu CQEs, the device "
				      "has %d",
				      mn->rpc_nw, VB_RPC_SLOTS, (unsigned long long)cqe,
				      vb->dattr.max_cqe);
	mn->rpc_qp = calloc(mn->rpc_nw, sizeof(*mn->rpc_qp));
	mn->rpc_sq = calloc(mn->rpc_nw, sizeof(*mn->rpc_sq));
	mn->rpc_buf = calloc(1, VB_RPC_MSG);
	if (!mn->rpc_qp || !mn->rpc_sq || !mn->rpc_buf)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, im, "out of memory");
	mn->rpc_ch = ibv_create_comp_channel(vb->ctx);
	if (!mn->rpc_ch)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "ibv_create_comp_channel: %s",
				      strerror(errno));
	if (set_nonblock(mn->rpc_ch->fd))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "fcntl(O_NONBLOCK): %s",
				      strerror(errno));
	mn->rpc_rcq = ibv_create_cq(vb->ctx, (int)cqe, NULL, mn->rpc_ch, 0);
	mn->rpc_scq = mn->rpc_rcq ? ibv_create_cq(vb->ctx, (int)cqe, NULL, NULL, 0) : NULL;
	if (!mn->rpc_rcq || !mn->rpc_scq)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "ibv_create_cq (RPC, %llu): %s",
				      (unsigned long long)cqe, strerror(errno));
	mn->rpc_mr = ibv_reg_mr(mn->pd, mn->rpc_buf, VB_RPC_MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!mn->rpc_mr)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "ibv_reg_mr (RPC buffer): %s",
				      strerror(errno));
	return DMR_OK;
}

static int mn_post_recv(vb_mn_t *mn, struct ibv_qp *qp, uint32_t worker)
{
	struct ibv_sge g = {
	    .addr = (uintptr_t)mn->rpc_buf, .length = VB_RPC_MSG, .lkey = mn->rpc_mr->lkey};
	struct ibv_recv_wr r = {.wr_id = worker, .sg_list = &g, .num_sge = 1}, *bad;
	return ibv_post_recv(qp, &r, &bad);
}

static void rpc_error(vb_mn_t *mn, const char *what, int e)
{
	vb_t *vb = mn->vb;
	int first = 0;
	pthread_mutex_lock(&mn->lock);
	if (mn->st == DMR_OK) {
		first = 1;
		mn->st = DMR_ERR_IO;
		dmr_err_set(&mn->err, DMR_ERR_IO,
			    "verbs: %s port %d, MN %u (%s:%u): RPC service: %s%s%s", vb->dev,
			    vb->port, mn->idx, vb->ip, mn->port, what, e ? ": " : "",
			    e ? strerror(e) : "");
	}
	pthread_mutex_unlock(&mn->lock);
	if (first) /* the first only: the CN's completions say the rest */
		fprintf(stderr, "%s\n", mn->err.msg);
}

/* The answers' send completions: free their send-queue entries. */
static void drain_sends(vb_mn_t *mn)
{
	struct ibv_wc wc[16];
	int n;
	while ((n = ibv_poll_cq(mn->rpc_scq, 16, wc)) > 0)
		for (int k = 0; k < n; k++) {
			if (wc[k].wr_id < mn->rpc_nw && mn->rpc_sq[wc[k].wr_id])
				mn->rpc_sq[wc[k].wr_id]--;
			if (wc[k].status != IBV_WC_SUCCESS && wc[k].status != IBV_WC_WR_FLUSH_ERR)
				rpc_error(mn, ibv_wc_status_str(wc[k].status), 0);
		}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One request: run its handler, repost the receive, answer. */
static void serve(vb_mn_t *mn, const struct ibv_wc *wc)
{
	vb_t *vb = mn->vb;
	uint32_t m = (uint32_t)(mn - vb->mn);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR) /* flushed: a QP torn down */
			rpc_error(mn, ibv_wc_status_str(wc->status), 0);
		return;
	}
	uint32_t imm = ntohl(wc->imm_data), w = imm >> 8, idx = imm & 0xffu;
	pthread_mutex_lock(&mn->lock);
	struct ibv_qp *qp = w < mn->rpc_nw ? mn->rpc_qp[w] : NULL;
	pthread_mutex_unlock(&mn->lock);
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || !qp || qp->qp_num != wc->qp_num ||
	    idx >= VB_RPC_SLOTS) {
		rpc_error(mn, "a request naming no RPC slot of its QP", 0);
		return;
	}
	int rc = mn_post_recv(mn, qp, w);
	if (rc) {
		rpc_error(mn, "ibv_post_recv", rc);
		return;
	}
	vb_rpc_ent_t *e = &vb->w[w].qps[m].rpc[idx];
	uint32_t tag = atomic_load_explicit(&e->tag, memory_order_acquire);
	uint64_t t0 = mono_ns();
	uint32_t resp = e->handler(e->arg, (uint8_t *)mn->mem, mn->size);
	atomic_fetch_add_explicit(&mn->rpc_busy_ns, mono_ns() - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&mn->rpc_served, 1, memory_order_relaxed);
	e->resp = resp;
	atomic_store_explicit(&e->done, tag, memory_order_release);
	while (mn->rpc_sq[w] >= VB_RPC_SLOTS)
		drain_sends(mn);
	uint32_t len = resp < VB_RPC_MSG ? resp : VB_RPC_MSG;
	struct ibv_sge g = {
	    .addr = (uintptr_t)mn->rpc_buf, .length = len, .lkey = mn->rpc_mr->lkey};
	struct ibv_send_wr s = {.wr_id = w,
				.sg_list = &g,
				.num_sge = len ? 1 : 0,
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = wc->imm_data},
			   *bad;
	if ((rc = ibv_post_send(qp, &s, &bad)) != 0) {
		rpc_error(mn, "ibv_post_send (answer)", rc);
		return;
	}
	mn->rpc_sq[w]++;
}

static void *rpc_thread(void *arg)
{
	vb_mn_t *mn = arg;
	struct pollfd pfd[2] = {{.fd = mn->rpc_ch->fd, .events = POLLIN},
				{.fd = mn->stop_fd, .events = POLLIN}};
	struct ibv_wc wc[16];
	int armed = 0;
	for (;;) {
		drain_sends(mn);
		int n = ibv_poll_cq(mn->rpc_rcq, 16, wc);
		if (n < 0) {
			rpc_error(mn, "ibv_poll_cq", 0);
			break;
		}
		for (int k = 0; k < n; k++)
			serve(mn, &wc[k]);
		if (n > 0)
			continue;
		if (!armed) { /* arm, then look again: no CQE slips between */
			if (ibv_req_notify_cq(mn->rpc_rcq, 0)) {
				rpc_error(mn, "ibv_req_notify_cq", errno);
				break;
			}
			armed = 1;
			continue;
		}
		if (poll(pfd, 2, 100) < 0 && errno != EINTR) {
			rpc_error(mn, "poll", errno);
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[0].revents) {
			struct ibv_cq *cq;
			void *ctx;
			while (ibv_get_cq_event(mn->rpc_ch, &cq, &ctx) == 0)
				ibv_ack_cq_events(cq, 1);
			armed = 0;
		}
	}
	return NULL;
}

const char *dmr_verbs_rpc_mn_qp(vb_mn_t *mn, uint32_t worker, struct ibv_qp *qp)
{
	if (worker >= mn->rpc_nw) {
		errno = ERANGE;
		return "RPC set-up (worker index)";
	}
	for (uint32_t k = 0; k < VB_RPC_SLOTS; k++) {
		int rc = mn_post_recv(mn, qp, worker);
		if (rc) {
			errno = rc;
			return "ibv_post_recv (RPC requests)";
		}
	}
	pthread_mutex_lock(&mn->lock);
	mn->rpc_qp[worker] = qp;
	int start = !mn->rpc_running;
	if (start)
		mn->rpc_running = 1;
	pthread_mutex_unlock(&mn->lock);
	if (start) {
		int e = pthread_create(&mn->rpc_thread, NULL, rpc_thread, mn);
		if (e) {
			pthread_mutex_lock(&mn->lock);
			mn->rpc_running = 0;
			pthread_mutex_unlock(&mn->lock);
			errno = e;
			return "pthread_create (RPC service)";
		}
	}
	return NULL;
}

void dmr_verbs_rpc_stop(vb_t *vb)
{
	for (uint32_t m = 0; m < vb->nmn_srv; m++) {
		vb_mn_t *mn = &vb->mn[m];
		pthread_mutex_lock(&mn->lock);
		int run = mn->rpc_running;
		pthread_mutex_unlock(&mn->lock);
		if (!run)
			continue;
		uint64_t one = 1;
		if (write(mn->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(mn->rpc_thread);
		pthread_join(mn->rpc_thread, NULL);
		mn->rpc_running = 0;
	}
}

void dmr_verbs_rpc_mn_free(vb_mn_t *mn)
{
	if (mn->rpc_mr)
		ibv_dereg_mr(mn->rpc_mr);
	mn->rpc_mr = NULL;
	if (mn->rpc_scq)
		ibv_destroy_cq(mn->rpc_scq);
	mn->rpc_scq = NULL;
	if (mn->rpc_rcq)
		ibv_destroy_cq(mn->rpc_rcq);
	mn->rpc_rcq = NULL;
	if (mn->rpc_ch)
		ibv_destroy_comp_channel(mn->rpc_ch);
	mn->rpc_ch = NULL;
	free(mn->rpc_buf);
	free(mn->rpc_qp);
	free(mn->rpc_sq);
	mn->rpc_buf = NULL;
	mn->rpc_qp = NULL;
	mn->rpc_sq = NULL;
}
