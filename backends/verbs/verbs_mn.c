/*
 * backends/verbs/verbs_mn.c - the memory node's side of the connections.
 * dmr_verbs_mn_start registers the region (remote READ/WRITE/ATOMIC; in the
 * MN role with the control page after it), listens with rdma_cm and starts
 * the MN thread, which accepts each CN QP (a responder QP brought to RTS;
 * the region's address, length and rkey in the reply) and counts
 * disconnections; dmr_verbs_mn_stop tears it all down. Loopback mode runs
 * this inside the process that open()s the backend; the MN role
 * (dmr_verbs_mn_main, verbs_role.c) is a process around it. The thread
 * reports its first error in its vb_mn_t's st / err, under its lock. A
 * loopback backend with cfg.mns MNs runs one of each per MN (its own
 * listener port, region and thread).
 */
#include "verbs_impl.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static void mn_set_error(vb_mn_t *mn, dmr_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mn_set_error(vb_mn_t *mn, dmr_status_t st, const char *fmt, ...)
{
	vb_t *vb = mn->vb;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&mn->lock);
	if (mn->st == DMR_OK) {
		mn->st = st;
		dmr_err_set(&mn->err, st, "verbs: %s port %d, MN %u (%s:%u): %s", vb->dev, vb->port,
			    mn->idx, vb->ip, mn->port, msg);
	}
	pthread_mutex_unlock(&mn->lock);
}

/* Accept one CN's connection request (MN thread). Returns the id to destroy
 * once the event is acknowledged (rdma_destroy_id waits for that), or NULL. */
static struct rdma_cm_id *mn_accept(vb_mn_t *mn, struct rdma_cm_event *ev)
{
	vb_t *vb = mn->vb;
	struct rdma_cm_id *id = ev->id;
	vb_req_pd_t req;
	const char *call = NULL;
	struct ibv_qp *qp = NULL;
	if (ev->param.conn.private_data_len < sizeof(req) || !ev->param.conn.private_data) {
		mn_set_error(mn, DMR_ERR_PARSE, "connection request without dmreplay private data");
		rdma_reject(id, NULL, 0);
		return id;
	}
	memcpy(&req, ev->param.conn.private_data, sizeof(req));
	if (ntohl(req.magic) != VB_MAGIC || ntohs(req.version) != VB_VERSION) {
		mn_set_error(mn, DMR_ERR_PARSE, "connection request: bad magic/version 0x%x/%u",
			     ntohl(req.magic), ntohs(req.version));
		rdma_reject(id, NULL, 0);
		return id;
	}
	uint32_t worker = ntohl(req.worker);
	struct ibv_qp_init_attr ia = {
	    .send_cq = mn->cq,
	    .recv_cq = mn->cq,
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC};
	if (mn->rpc_rcq) { /* loopback: the QP serves RPCs (verbs_rpc.c) */
		ia.send_cq = mn->rpc_scq;
		ia.recv_cq = mn->rpc_rcq;
		ia.cap.max_send_wr = VB_RPC_SLOTS;
		ia.cap.max_recv_wr = VB_RPC_SLOTS;
	}
	qp = ibv_create_qp(mn->pd, &ia);
	if (!qp) {
		call = "ibv_create_qp";
		goto fail;
	}
	struct ibv_qp_attr a;
	int mask;
	if (dmr_verbs_qp_attr_for(id, &a, IBV_QPS_INIT, &mask)) {
		call = "rdma_init_qp_attr(INIT)";
		goto fail;
	}
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	if ((errno = ibv_modify_qp(qp, &a, mask | IBV_QP_ACCESS_FLAGS))) {
		call = "ibv_modify_qp(INIT)";
		goto fail;
	}
	if (dmr_verbs_qp_attr_for(id, &a, IBV_QPS_RTR, &mask)) {
		call = "rdma_init_qp_attr(RTR)";
		goto fail;
	}
	a.path_mtu = mtu_min(mtu_min(a.path_mtu, vb->pattr.active_mtu), (enum ibv_mtu)req.mtu);
	a.max_dest_rd_atomic = (uint8_t)vb->dest_rd_atomic;
	if ((errno = ibv_modify_qp(qp, &a, mask | IBV_QP_PATH_MTU | IBV_QP_MAX_DEST_RD_ATOMIC))) {
		call = "ibv_modify_qp(RTR)";
		goto fail;
	}
	if (dmr_verbs_qp_attr_for(id, &a, IBV_QPS_RTS, &mask)) {
		call = "rdma_init_qp_attr(RTS)";
		goto fail;
	}
	if ((errno = ibv_modify_qp(qp, &a, mask))) {
		call = "ibv_modify_qp(RTS)";
		goto fail;
	}
	if (mn->rpc_rcq && (call = dmr_verbs_rpc_mn_qp(mn, worker, qp)) != NULL)
		goto fail;
	vb_rep_pd_t rep = {.magic = htonl(VB_MAGIC),
			   .version = htons(VB_VERSION),
			   .mtu = (uint8_t)vb->pattr.active_mtu,
			   .dest_rd_atomic = (uint8_t)vb->dest_rd_atomic,
			   .rkey = htonl(mn->mr->rkey),
			   .addr = htobe64((uint64_t)(uintptr_t)mn->mem),
			   .len = htobe64(mn->size)};
	struct rdma_conn_param cp = {.private_data = &rep,
				     .private_data_len = sizeof(rep),
				     .responder_resources = (uint8_t)vb->dest_rd_atomic,
				     .initiator_depth = 0,
				     .flow_control = 1,
				     .retry_count = (uint8_t)vb->retry_cnt,
				     .rnr_retry_count = (uint8_t)vb->rnr_retry,
				     .qp_num = qp->qp_num};
	if (mn->verbose)
		fprintf(stderr, "mn: CN index %u worker %u connected (QP %u)\n", ntohl(req.cn),
			worker, qp->qp_num);
	pthread_mutex_lock(&mn->lock);
	if (mn->nconn == mn->conncap) {
		uint32_t cap = mn->conncap ? mn->conncap * 2 : 16;
		vb_conn_t *c = realloc(mn->conns, cap * sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&mn->lock);
			errno = ENOMEM;
			call = "realloc";
			goto fail;
		}
		mn->conns = c;
		mn->conncap = cap;
	}
	mn->conns[mn->nconn++] = (vb_conn_t){.id = id, .qp = qp};
	pthread_mutex_unlock(&mn->lock);
	if (rdma_accept(id, &cp))
		mn_set_error(mn, DMR_ERR_IO, "worker %u: rdma_accept: %s", worker, strerror(errno));
	return NULL; /* close() destroys it */
fail:
	mn_set_error(mn, DMR_ERR_IO, "worker %u: %s: %s", worker, call, strerror(errno));
	rdma_reject(id, NULL, 0);
	if (qp)
		ibv_destroy_qp(qp);
	return id;
}

static void *mn_thread(void *arg)
{
	vb_mn_t *mn = arg;
	struct pollfd pfd[2] = {{.fd = mn->ch->fd, .events = POLLIN},
				{.fd = mn->stop_fd, .events = POLLIN}};
	for (;;) {
		struct rdma_cm_event *ev;
		while (rdma_get_cm_event(mn->ch, &ev) == 0) {
			struct rdma_cm_id *dead = NULL;
			switch (ev->event) {
			case RDMA_CM_EVENT_CONNECT_REQUEST:
				dead = mn_accept(mn, ev);
				break;
			case RDMA_CM_EVENT_DISCONNECTED:
				rdma_disconnect(ev->id);
				pthread_mutex_lock(&mn->lock);
				mn->ndisc++;
				pthread_mutex_unlock(&mn->lock);
				break;
			default:
				break;
			}
			rdma_ack_cm_event(ev);
			if (dead)
				rdma_destroy_id(dead);
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			mn_set_error(mn, DMR_ERR_IO, "rdma_get_cm_event: %s", strerror(errno));
			break;
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			mn_set_error(mn, DMR_ERR_IO, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
	}
	return NULL;
}

dmr_status_t dmr_verbs_mn_start(vb_t *vb, uint32_t m, dmr_err_t *err)
{
	vb_mn_t *mn = &vb->mn[m];
	int im = (int)m;
	mn->vb = vb; /* mn->idx: set by the caller (its index in the cluster) */
	if (vb->nmn_srv < m + 1)
		vb->nmn_srv = m + 1;
	vb->peer[m] = vb->addr; /* for the messages until it listens */
	vb->peer[m].sin_port = htons(mn->port);
	const dmr_be_config_t *cfg = &vb->be.cfg;
	mn->ctl = (cfg->mr_size + 63) & ~63ull;
	/* the control page only in the MN role: loopback registers exactly mr_size,
	 * so an access past it fails (conformance) */
	uint64_t regsz = mn->verbose ? mn->ctl + DMR_VERBS_CTL_BYTES : cfg->mr_size;
	mn->regsz = regsz;
	if (regsz > vb->dattr.max_mr_size)
		return dmr_verbs_fail(vb, err, DMR_ERR_RANGE, -1, im,
				      "mr_size %llu (+ %u bytes control page) exceeds the device's "
				      "max_mr_size %llu",
				      (unsigned long long)cfg->mr_size,
				      (unsigned)(regsz - cfg->mr_size),
				      (unsigned long long)vb->dattr.max_mr_size);
	dmr_status_t mst =
	    dmr_verbs_memlock_check(vb, regsz * (m + 1),
				    m ? "the MN regions of this process (mr_size each)"
				      : "the MN region (mr_size + control page)",
				    im, err);
	if (mst != DMR_OK)
		return mst;
	mn->ch = rdma_create_event_channel();
	if (!mn->ch)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "rdma_create_event_channel: %s",
				      strerror(errno));
	if (set_nonblock(mn->ch->fd))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "fcntl(O_NONBLOCK): %s",
				      strerror(errno));
	if (rdma_create_id(mn->ch, &mn->listen, vb, RDMA_PS_TCP))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "rdma_create_id: %s",
				      strerror(errno));
	struct sockaddr_in sa = vb->addr;
	sa.sin_port = htons(mn->port); /* 0 (loopback): any */
	if (rdma_bind_addr(mn->listen, (struct sockaddr *)&sa))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "rdma_bind_addr(%s:%u): %s",
				      vb->ip, mn->port, strerror(errno));
	if (!same_device(vb, mn->listen->verbs))
		return dmr_verbs_fail(
		    vb, err, DMR_ERR_NODEV, -1, 0,
		    "rdma_bind_addr bound %s to device %s, not this one", vb->ip,
		    mn->listen->verbs ? ibv_get_device_name(mn->listen->verbs->device) : "(none)");
	if (rdma_listen(mn->listen, 1024))
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "rdma_listen: %s",
				      strerror(errno));
	mn->port = ntohs(rdma_get_src_port(mn->listen));
	vb->peer[m].sin_port = htons(mn->port);
	mn->pd = ibv_alloc_pd(vb->ctx);
	if (!mn->pd)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "ibv_alloc_pd (MN): %s",
				      strerror(errno));
	mn->cq = ibv_create_cq(vb->ctx, 16, NULL, NULL, 0);
	if (!mn->cq)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "ibv_create_cq (MN): %s",
				      strerror(errno));
	mn->size = cfg->mr_size;
	void *mem = mmap(NULL, regsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, im, "mmap of %llu bytes: %s",
				      (unsigned long long)regsz, strerror(errno));
	mn->mem = mem;
	mn->mr = ibv_reg_mr(mn->pd, mem, regsz,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mn->mr) {
		int e = errno;
		struct rlimit rl = {0};
		getrlimit(RLIMIT_MEMLOCK, &rl);
		char lim[32];
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu", (unsigned long long)rl.rlim_cur);
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, im,
				      "ibv_reg_mr of %llu bytes (remote READ/WRITE/ATOMIC): %s "
				      "(RLIMIT_MEMLOCK %s bytes)",
				      (unsigned long long)regsz, strerror(e), lim);
	}
	if (!mn->verbose) { /* loopback: RPCs (verbs_rpc.c) */
		dmr_status_t rst = dmr_verbs_rpc_mn_init(vb, m, err);
		if (rst != DMR_OK)
			return rst;
	}
	mn->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (mn->stop_fd < 0)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "eventfd: %s", strerror(errno));
	int e = pthread_create(&mn->thread, NULL, mn_thread, mn);
	if (e)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, im, "pthread_create: %s",
				      strerror(e));
	mn->running = 1;
	return DMR_OK;
}

static void mn_stop_one(vb_mn_t *mn)
{
	if (mn->running) {
		uint64_t one = 1;
		if (write(mn->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(mn->thread);
		pthread_join(mn->thread, NULL);
		mn->running = 0;
	}
	if (mn->rpc_running) { /* close() stops it first; a failed open() here */
		uint64_t one = 1;
		if (write(mn->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(mn->rpc_thread);
		pthread_join(mn->rpc_thread, NULL);
		mn->rpc_running = 0;
	}
	for (uint32_t i = 0; i < mn->nconn; i++) {
		if (mn->conns[i].qp)
			ibv_destroy_qp(mn->conns[i].qp);
		rdma_destroy_id(mn->conns[i].id);
	}
	dmr_verbs_rpc_mn_free(mn); /* after its QPs, before the PD */
	free(mn->conns);
	mn->conns = NULL;
	mn->nconn = 0;
	if (mn->listen)
		rdma_destroy_id(mn->listen);
	mn->listen = NULL;
	dmr_verbs_lock_region_free(mn); /* before the PD */
	if (mn->mr)
		ibv_dereg_mr(mn->mr);
	mn->mr = NULL;
	if (mn->mem)
		munmap(mn->mem, mn->regsz);
	mn->mem = NULL;
	if (mn->cq)
		ibv_destroy_cq(mn->cq);
	mn->cq = NULL;
	if (mn->pd)
		ibv_dealloc_pd(mn->pd);
	mn->pd = NULL;
	if (mn->ch)
		rdma_destroy_event_channel(mn->ch);
	mn->ch = NULL;
	if (mn->stop_fd >= 0)
		close(mn->stop_fd);
	mn->stop_fd = -1;
}

void dmr_verbs_mn_stop(vb_t *vb)
{
	for (uint32_t m = 0; m < vb->nmn_srv; m++)
		mn_stop_one(&vb->mn[m]);
	vb->nmn_srv = 0;
}
