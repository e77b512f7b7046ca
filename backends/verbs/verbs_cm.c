/*
 * backends/verbs/verbs_cm.c - connection management, CN side: waiting for
 * rdma_cm events (the MN thread's error is appended to an unexpected one),
 * the route's QP attributes, the CN's RC QP (inline size backed off until the
 * device takes it) and its bring-up INIT -> RTR -> RTS in rc_pingpong's order
 * with rdma_cm in place of its socket exchange (the private data carry MTU,
 * rd_atomic, rkey and the region), and, in the CN role, the connect retried
 * while the MN process is not yet listening.
 */
#include "verbs_impl.h"

#include "verbs_addr.h"

#include "../../core/base/sig.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>

#define VB_CM_TIMEOUT_MS 20000

/* Wait for event `want` on id (events of other ids are acknowledged and
 * dropped). On success *ev_p is the event, to be acked by the caller. */
static dmr_status_t cm_wait(vb_t *vb, struct rdma_cm_id *id, enum rdma_cm_event_type want,
			    int worker, int mn, const char *after, struct rdma_cm_event **ev_p,
			    dmr_err_t *err)
{
	uint64_t deadline = vb_now_ns(vb) + (uint64_t)VB_CM_TIMEOUT_MS * 1000000ull;
	for (;;) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(vb->ch, &ev) == 0) {
			if (ev->id != id) {
				rdma_ack_cm_event(ev);
				continue;
			}
			if (ev->event == want) {
				*ev_p = ev;
				return DMR_OK;
			}
			enum rdma_cm_event_type got = ev->event;
			int status = ev->status;
			rdma_ack_cm_event(ev);
			dmr_status_t st =
			    (got == RDMA_CM_EVENT_REJECTED || got == RDMA_CM_EVENT_UNREACHABLE)
				? DMR_ERR_REMOTE
				: DMR_ERR_IO;
			/* a loopback MN's own error (none in the CN role) */
			int mn_failed = 0;
			char mn_msg[sizeof(vb->mn[0].err.msg)] = "";
			if (mn >= 0 && (uint32_t)mn < vb->nmn_srv) {
				vb_mn_t *srv = &vb->mn[mn];
				pthread_mutex_lock(&srv->lock);
				mn_failed = srv->st != DMR_OK;
				snprintf(mn_msg, sizeof(mn_msg), "%s", srv->err.msg);
				pthread_mutex_unlock(&srv->lock);
			}
			return dmr_verbs_fail(
			    vb, err, st, worker, mn, "after %s: %s (status %d), expected %s%s%s",
			    after, rdma_event_str(got), status, rdma_event_str(want),
			    mn_failed ? "; the MN said: " : "", mn_failed ? mn_msg : "");
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, worker, mn,
					      "rdma_get_cm_event: %s", strerror(errno));
		uint64_t now = vb_now_ns(vb);
		if (now >= deadline)
			return dmr_verbs_fail(vb, err, DMR_ERR_TIMEOUT, worker, mn,
					      "after %s: no %s within %d ms", after,
					      rdma_event_str(want), VB_CM_TIMEOUT_MS);
		struct pollfd pfd = {.fd = vb->ch->fd, .events = POLLIN};
		int ms = (int)((deadline - now) / 1000000ull) + 1;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, worker, mn,
					      "poll on rdma_cm channel: %s", strerror(errno));
	}
}

/* The route's attributes for a transition to `state` (rdma_cm computes them). */
int dmr_verbs_qp_attr_for(struct rdma_cm_id *id, struct ibv_qp_attr *attr, enum ibv_qp_state state,
			  int *mask_p)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = state;
	int mask = 0;
	if (rdma_init_qp_attr(id, attr, &mask))
		return -1;
	*mask_p = mask;
	return 0;
}

static struct ibv_qp *create_cn_qp(vb_t *vb, struct ibv_cq *cq, uint32_t *inline_p)
{
	uint32_t inl = vb->inline_used ? vb->inline_used : vb->inline_ask;
	for (;;) {
		struct ibv_qp_init_attr ia = {.send_cq = cq,
					      .recv_cq = cq,
					      .cap = {.max_send_wr = vb->sq_depth,
						      .max_recv_wr = VB_RPC_SLOTS, /* RPC answers */
						      .max_send_sge = 1,
						      .max_recv_sge = 1,
						      .max_inline_data = inl},
					      .qp_type = IBV_QPT_RC,
					      .sq_sig_all = 0};
		struct ibv_qp *qp = ibv_create_qp(vb->pd, &ia);
		if (qp) {
			*inline_p = inl;
			return qp;
		}
		if (errno != EINVAL || inl == 0)
			return NULL;
		inl = inl > 32 ? inl / 2 : 0; /* the device's inline limit is not queryable */
	}
}

dmr_status_t dmr_verbs_cn_connect(vb_t *vb, uint32_t w, uint32_t m, dmr_err_t *err)
{
	vb_worker_t *wk = &vb->w[w];
	vb_qp_t *q = &wk->qps[m];
	struct rdma_cm_event *ev;
	dmr_status_t st;
	int iw = (int)w, im = (int)m;
	if (rdma_create_id(vb->ch, &q->id, NULL, RDMA_PS_TCP))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_create_id: %s",
				      strerror(errno));
	struct sockaddr_in src = vb->addr, dst = vb->peer[m];
	src.sin_port = 0;
	if (rdma_resolve_addr(q->id, (struct sockaddr *)&src, (struct sockaddr *)&dst,
			      VB_CM_TIMEOUT_MS / 2))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_resolve_addr: %s",
				      strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_ADDR_RESOLVED, iw, im, "rdma_resolve_addr", &ev, err);
	if (st != DMR_OK)
		return st;
	rdma_ack_cm_event(ev);
	if (!same_device(vb, q->id->verbs))
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, iw, im,
				      "rdma_resolve_addr: the address resolves to device %s",
				      q->id->verbs ? ibv_get_device_name(q->id->verbs->device)
						   : "(none)");
	if (rdma_resolve_route(q->id, VB_CM_TIMEOUT_MS / 2))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_resolve_route: %s",
				      strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_ROUTE_RESOLVED, iw, im, "rdma_resolve_route", &ev,
		     err);
	if (st != DMR_OK)
		return st;
	rdma_ack_cm_event(ev);

	uint32_t inl = 0;
	q->qp = create_cn_qp(vb, wk->cq, &inl);
	if (!q->qp)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im,
				      "ibv_create_qp (max_send_wr %u, max_inline_data %u): %s",
				      vb->sq_depth, vb->inline_ask, strerror(errno));
	vb->inline_used = inl;
	struct ibv_qp_attr a;
	int mask;
	if (dmr_verbs_qp_attr_for(q->id, &a, IBV_QPS_INIT, &mask))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(INIT): %s",
				      strerror(errno));
	if ((errno = ibv_modify_qp(q->qp, &a, mask)))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(INIT): %s",
				      strerror(errno));
	vb_req_pd_t req = {.magic = htonl(VB_MAGIC),
			   .version = htons(VB_VERSION),
			   .mtu = (uint8_t)vb->pattr.active_mtu,
			   .rd_atomic = (uint8_t)vb->rd_atomic,
			   .worker = htonl(w),
			   .mn = htonl(m),
			   .cn = htonl(vb->role ? vb->role->self : 0)};
	struct rdma_conn_param cp = {.private_data = &req,
				     .private_data_len = sizeof(req),
				     .responder_resources = 0,
				     .initiator_depth = (uint8_t)vb->rd_atomic,
				     .flow_control = 1,
				     .retry_count = (uint8_t)vb->retry_cnt,
				     .rnr_retry_count = (uint8_t)vb->rnr_retry,
				     .qp_num = q->qp->qp_num};
	if (rdma_connect(q->id, &cp))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_connect: %s",
				      strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_CONNECT_RESPONSE, iw, im, "rdma_connect", &ev, err);
	if (st != DMR_OK)
		return st;
	vb_rep_pd_t rep;
	int ok = ev->param.conn.private_data_len >= sizeof(rep) && ev->param.conn.private_data;
	if (ok)
		memcpy(&rep, ev->param.conn.private_data, sizeof(rep));
	rdma_ack_cm_event(ev);
	if (!ok || ntohl(rep.magic) != VB_MAGIC || ntohs(rep.version) != VB_VERSION)
		return dmr_verbs_fail(vb, err, DMR_ERR_PARSE, iw, im,
				      "connection response without dmreplay private data (v%u)",
				      VB_VERSION);
	q->raddr = be64toh(rep.addr);
	q->rlen = be64toh(rep.len);
	q->rkey = ntohl(rep.rkey);
	vb->peer_mtu = (enum ibv_mtu)rep.mtu;

	if (dmr_verbs_qp_attr_for(q->id, &a, IBV_QPS_RTR, &mask))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(RTR): %s",
				      strerror(errno));
	char ahwhy[160];
	if (dmr_verbs_ah_refusal(vb->pattr.link_layer, &a.ah_attr, vb->gid_index, ahwhy,
				 sizeof(ahwhy)))
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, iw, im, "%s (device %s)", ahwhy,
				      vb->dev);
	a.path_mtu = mtu_min(mtu_min(a.path_mtu, vb->pattr.active_mtu), vb->peer_mtu);
	vb->path_mtu = a.path_mtu;
	if ((errno = ibv_modify_qp(q->qp, &a, mask | IBV_QP_PATH_MTU)))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(RTR): %s",
				      strerror(errno));
	if (dmr_verbs_qp_attr_for(q->id, &a, IBV_QPS_RTS, &mask))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(RTS): %s",
				      strerror(errno));
	a.max_rd_atomic = (uint8_t)min32(vb->rd_atomic, rep.dest_rd_atomic);
	a.retry_cnt = (uint8_t)vb->retry_cnt;
	a.rnr_retry = (uint8_t)vb->rnr_retry;
	mask |= IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	if (vb->timeout >= 0) {
		a.timeout = (uint8_t)vb->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	if ((errno = ibv_modify_qp(q->qp, &a, mask)))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(RTS): %s",
				      strerror(errno));
	if (rdma_establish(q->id))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_establish: %s",
				      strerror(errno));
	return DMR_OK;
}

/* CN role: connect one QP with retries while the MN is not (yet) listening. */
dmr_status_t dmr_verbs_cn_connect_retry(vb_t *vb, uint32_t w, uint32_t m, uint64_t deadline,
					dmr_err_t *err)
{
	uint64_t t0 = vb_now_ns(vb);
	char pip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &vb->peer[m].sin_addr, pip, sizeof(pip));
	unsigned pport = ntohs(vb->peer[m].sin_port);
	for (;;) {
		dmr_status_t st = dmr_verbs_cn_connect(vb, w, m, err);
		if (st == DMR_OK || !vb->role || st != DMR_ERR_REMOTE)
			return st;
		if (dmr_sig_caught())
			return dmr_err_set(err, DMR_ERR_INTERRUPTED,
					   "verbs: interrupted by signal %d while connecting to "
					   "MN %u at %s:%u",
					   dmr_sig_caught(), m, pip, pport);
		if (vb_now_ns(vb) >= deadline) {
			/* rdma_cm's REJECTED here is the MN's port not listening */
			char last[sizeof(err->msg)];
			snprintf(last, sizeof(last), "%s", err->msg);
			return dmr_err_set(
			    err, DMR_ERR_REMOTE,
			    "verbs: no MN listening at %s:%u: every connection attempt was "
			    "refused for %.1f s, until the start barrier deadline "
			    "(--barrier-timeout %.0f s); is `dmreplay mn` running with this "
			    "config (MN index %u of %u)? (last attempt: %.200s)",
			    pip, pport, (vb_now_ns(vb) - t0) / 1e9, vb->role->barrier_s, m,
			    vb->role->cl->nmn, last);
		}
		vb_qp_t *q = &vb->w[w].qps[m];
		if (q->qp)
			ibv_destroy_qp(q->qp);
		if (q->id)
			rdma_destroy_id(q->id);
		q->qp = NULL;
		q->id = NULL;
		struct timespec ts = {0, 250000000};
		nanosleep(&ts, NULL);
	}
}
