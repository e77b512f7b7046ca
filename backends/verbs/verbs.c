/*
 * backends/verbs/verbs.c - see verbs.h for the contract.
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
#include "verbs.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* What we ask for; clamped to the device (logged once). */
#define VB_ASK_SQ 4096u
#define VB_ASK_RD_ATOMIC 16u
#define VB_ASK_INLINE 256u
#define VB_CM_TIMEOUT_MS 20000
#define VB_CANARY_TIMEOUT_NS 10000000000ull
#define VB_MAGIC 0x444d5256u /* "DMRV" */
#define VB_VERSION 1u
#define VB_POLL_CHUNK 32

enum {
	SLOT_USER_SIG = 1, /* the caller asked for a completion */
	SLOT_VOID = 2,	   /* part of a post that returned an error: never reported */
};

typedef struct vb_slot {
	uint64_t wr_id;
	void *local;
	uint32_t length;
	uint8_t opcode;
	uint8_t flags;
} vb_slot_t;

typedef struct vb_qp {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	vb_slot_t *slots;
	uint32_t depth, head, tail, outstanding, unsig_run;
	uint64_t raddr, rlen;
	uint32_t rkey;
} vb_qp_t;

typedef struct vb_timer {
	uint64_t at, seq, wr_id;
} vb_timer_t;

typedef struct vb_mr {
	uintptr_t addr;
	size_t len;
	struct ibv_mr *mr;
} vb_mr_t;

typedef struct vb_worker {
	struct ibv_cq *cq;
	vb_qp_t *qps; /* [mns] */
	vb_mr_t *mrs;
	uint32_t nmr, mrcap;
	pthread_mutex_t tmu; /* timers may be set from any thread */
	vb_timer_t *tim;     /* binary heap on (at, seq), under tmu */
	uint32_t ntim, timcap;
	uint64_t tseq;
	uint32_t ntim_hint;	 /* ntim, read without tmu by the polling thread */
	struct ibv_send_wr *wrs; /* batch scratch, [sq depth] */
	struct ibv_sge *sges;
	dmr_be_stats_t st;
} vb_worker_t;

typedef struct vb_conn {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
} vb_conn_t;

/* The memory node of loopback mode; its thread owns ch and conns until
 * close() has joined it. */
typedef struct vb_mn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *mem;
	uint64_t size;
	uint16_t port; /* listening port, host order */
	int stop_fd;
	pthread_t thread;
	int running;
	pthread_mutex_t lock; /* guards conns, st, err */
	vb_conn_t *conns;
	uint32_t nconn, conncap;
	dmr_status_t st;
	dmr_err_t err;
} vb_mn_t;

typedef struct vb {
	dmr_be_t be;
	char dev[64];
	int port;
	int gid_index;
	union ibv_gid gid;
	struct sockaddr_in addr;
	char ip[INET_ADDRSTRLEN];
	struct ibv_context *ctx; /* ours (see vb_find_device) */
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct rdma_event_channel *ch;
	struct ibv_pd *pd;
	uint32_t nworkers;
	vb_worker_t *w;
	vb_mn_t mn;
	/* limits: asked and used */
	uint32_t sq_depth, cq_depth, rd_atomic, dest_rd_atomic, inline_ask, inline_used;
	enum ibv_mtu path_mtu, peer_mtu;
	int atomic_bswap;
	struct timespec t0;
} vb_t;

/* Connection private data, network byte order. CN -> MN (REQ). */
typedef struct vb_req_pd {
	uint32_t magic;
	uint16_t version;
	uint8_t mtu;	   /* enum ibv_mtu: the CN port's active MTU */
	uint8_t rd_atomic; /* initiator depth the CN will use */
	uint32_t worker, mn;
} vb_req_pd_t;

/* MN -> CN (REP). */
typedef struct vb_rep_pd {
	uint32_t magic;
	uint16_t version;
	uint8_t mtu;		/* the MN port's active MTU */
	uint8_t dest_rd_atomic; /* responder resources of the MN QP */
	uint32_t rkey, pad;
	uint64_t addr, len;
} vb_rep_pd_t;

static inline vb_t *to_vb(dmr_be_t *be)
{
	return (vb_t *)be;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static enum ibv_mtu mtu_min(enum ibv_mtu a, enum ibv_mtu b)
{
	return a < b ? a : b;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Format "verbs: DEV port P[, MN m (ip:port)][, worker w]: " + message. */
static dmr_status_t vb_fail(const vb_t *vb, dmr_err_t *err, dmr_status_t st, int worker, int mn,
			    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static dmr_status_t vb_fail(const vb_t *vb, dmr_err_t *err, dmr_status_t st, int worker, int mn,
			    const char *fmt, ...)
{
	if (!err)
		return st;
	char where[160];
	int n = snprintf(where, sizeof(where), "verbs: %s port %d", vb->dev[0] ? vb->dev : "?",
			 vb->port);
	if (mn >= 0 && n > 0 && (size_t)n < sizeof(where))
		n += snprintf(where + n, sizeof(where) - (size_t)n, ", MN %d (%s:%u)", mn,
			      vb->ip[0] ? vb->ip : "?", vb->mn.port);
	if (worker >= 0 && n > 0 && (size_t)n < sizeof(where))
		snprintf(where + n, sizeof(where) - (size_t)n, ", worker %d", worker);
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dmr_err_set(err, st, "%s: %s", where, msg);
}

static uint64_t vb_now_ns(const vb_t *vb)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)(ts.tv_sec - vb->t0.tv_sec) * 1000000000ull + (uint64_t)ts.tv_nsec -
	       (uint64_t)vb->t0.tv_nsec;
}

/* ---- device, port and GID ---------------------------------------------- */

static dmr_status_t vb_find_device(vb_t *vb, const char *want, dmr_err_t *err)
{
	int ndev = 0;
	struct ibv_device **list = ibv_get_device_list(&ndev);
	if (!list || ndev == 0) {
		int e = errno;
		if (list)
			ibv_free_device_list(list);
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "verbs: no RDMA device (ibv_get_device_list: %s; on SoftRoCE: "
				   "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0, "
				   "or run under scripts/rxe-vm)",
				   list ? "none found" : strerror(e));
	}
	int idx = -1;
	char names[256] = "";
	size_t off = 0;
	for (int i = 0; i < ndev; i++) {
		const char *nm = ibv_get_device_name(list[i]);
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						i ? ", " : "", nm);
		if (want && *want && strcmp(nm, want) == 0)
			idx = i;
	}
	if (!want || !*want) {
		idx = 0;
	} else if (idx < 0) {
		char *end;
		long v = strtol(want, &end, 10);
		if (*end == '\0' && v >= 0 && v < ndev)
			idx = (int)v;
	}
	if (idx < 0) {
		ibv_free_device_list(list);
		return dmr_err_set(err, DMR_ERR_NODEV, "verbs: no RDMA device '%s' (have: %s)",
				   want, names);
	}
	snprintf(vb->dev, sizeof(vb->dev), "%s", ibv_get_device_name(list[idx]));
	/*
	 * Our own context, not rdma_cm's (rdma_get_devices / id->verbs):
	 * librdmacm keeps its contexts open for the life of the process, and a
	 * process forked after one was opened (Check's fork mode) cannot use
	 * it: the rxe provider rings its doorbell with write() on the
	 * inherited command fd, which the kernel refuses (EACCES) across
	 * fork. rdma_cm only needs the same device, not the same context.
	 */
	vb->ctx = ibv_open_device(list[idx]);
	int e = errno;
	ibv_free_device_list(list);
	if (!vb->ctx)
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_open_device: %s", strerror(e));
	if (ibv_query_device(vb->ctx, &vb->dattr))
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_device: %s",
			       strerror(errno));
	if (vb->port < 1 || vb->port > vb->dattr.phys_port_cnt)
		return vb_fail(vb, err, DMR_ERR_RANGE, -1, -1, "no such port (device has %u)",
			       vb->dattr.phys_port_cnt);
	if (ibv_query_port(vb->ctx, (uint8_t)vb->port, &vb->pattr))
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_port: %s",
			       strerror(errno));
	if (vb->pattr.state != IBV_PORT_ACTIVE)
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "port state is %s, not ACTIVE",
			       ibv_port_state_str(vb->pattr.state));
	if (vb->pattr.link_layer != IBV_LINK_LAYER_ETHERNET)
		return vb_fail(vb, err, DMR_ERR_UNSUPPORTED, -1, -1,
			       "link layer is not Ethernet: only RoCE is supported in this phase");
	if (vb->dattr.atomic_cap == IBV_ATOMIC_NONE)
		return vb_fail(vb, err, DMR_ERR_UNSUPPORTED, -1, -1,
			       "device has no atomics (atomic_cap NONE)");
	return DMR_OK;
}

/* Why a GID entry cannot be used, or NULL when it can (its IPv4 into *ip). */
static const char *gid_refusal(const struct ibv_gid_entry *e, const struct ifaddrs *ifs,
			       struct in_addr *ip)
{
	static const uint8_t v4pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (e->gid_type != IBV_GID_TYPE_ROCE_V2)
		return e->gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCEv1" : "not RoCE";
	if (memcmp(e->gid.raw, v4pfx, 12) != 0)
		return e->gid.raw[0] == 0xfe && (e->gid.raw[1] & 0xc0) == 0x80 ? "IPv6 link-local"
									       : "IPv6";
	memcpy(&ip->s_addr, e->gid.raw + 12, 4);
	if ((ntohl(ip->s_addr) & 0xffff0000u) == 0xa9fe0000u)
		return "IPv4 link-local (169.254/16)";
	for (const struct ifaddrs *a = ifs; a; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
			continue;
		if (((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr.s_addr !=
		    ip->s_addr)
			continue;
		if (e->ndev_ifindex == 0 || if_nametoindex(a->ifa_name) == e->ndev_ifindex)
			return NULL;
	}
	return "foreign (not an address of this node)";
}

static dmr_status_t vb_choose_gid(vb_t *vb, int want, dmr_err_t *err)
{
	size_t max = vb->pattr.gid_tbl_len ? vb->pattr.gid_tbl_len : 16;
	struct ibv_gid_entry *ent = calloc(max, sizeof(*ent));
	if (!ent)
		return vb_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
	ssize_t n = ibv_query_gid_table(vb->ctx, ent, max, 0);
	if (n < 0) {
		free(ent);
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_gid_table: %s",
			       strerror((int)-n));
	}
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs)) {
		free(ent);
		return vb_fail(vb, err, DMR_ERR_IO, -1, -1, "getifaddrs: %s", strerror(errno));
	}
	char why[320] = "";
	size_t off = 0;
	int chosen = -1;
	struct in_addr ip = {0};
	for (ssize_t i = 0; i < n && chosen < 0; i++) {
		if (ent[i].port_num != (uint32_t)vb->port)
			continue;
		if (want >= 0 && ent[i].gid_index != (uint32_t)want)
			continue;
		struct in_addr a;
		const char *r = gid_refusal(&ent[i], ifs, &a);
		if (!r) {
			chosen = (int)ent[i].gid_index;
			ip = a;
			vb->gid = ent[i].gid;
		} else if (off < sizeof(why)) {
			char g[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, ent[i].gid.raw, g, sizeof(g));
			off += (size_t)snprintf(why + off, sizeof(why) - off, "%sGID %u %s: %s",
						off ? "; " : "", ent[i].gid_index, g, r);
		}
	}
	freeifaddrs(ifs);
	free(ent);
	if (chosen < 0) {
		if (want >= 0)
			return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1, "GID index %d refused: %s",
				       want, why[0] ? why : "not populated");
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, -1,
			       "no RoCEv2 GID with an IPv4 address of this node (%s)",
			       why[0] ? why : "GID table empty");
	}
	vb->gid_index = chosen;
	vb->addr.sin_family = AF_INET;
	vb->addr.sin_addr = ip;
	inet_ntop(AF_INET, &ip, vb->ip, sizeof(vb->ip));
	return DMR_OK;
}

/* ---- rdma_cm events ---------------------------------------------------- */

/* Did rdma_cm bind an id to our device? */
static int same_device(const vb_t *vb, const struct ibv_context *c)
{
	return c && strcmp(ibv_get_device_name(c->device), vb->dev) == 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

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
			pthread_mutex_lock(&vb->mn.lock);
			int mn_failed = vb->mn.st != DMR_OK;
			char mn_msg[sizeof(vb->mn.err.msg)];
			snprintf(mn_msg, sizeof(mn_msg), "%s", vb->mn.err.msg);
			pthread_mutex_unlock(&vb->mn.lock);
			return vb_fail(vb, err, st, worker, mn,
				       "after %s: %s (status %d), expected %s%s%s", after,
				       rdma_event_str(got), status, rdma_event_str(want),
				       mn_failed ? "; the MN said: " : "", mn_failed ? mn_msg : "");
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return vb_fail(vb, err, DMR_ERR_IO, worker, mn, "rdma_get_cm_event: %s",
				       strerror(errno));
		uint64_t now = vb_now_ns(vb);
		if (now >= deadline)
			return vb_fail(vb, err, DMR_ERR_TIMEOUT, worker, mn,
				       "after %s: no %s within %d ms", after, rdma_event_str(want),
				       VB_CM_TIMEOUT_MS);
		struct pollfd pfd = {.fd = vb->ch->fd, .events = POLLIN};
		int ms = (int)((deadline - now) / 1000000ull) + 1;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			return vb_fail(vb, err, DMR_ERR_IO, worker, mn,
				       "poll on rdma_cm channel: %s", strerror(errno));
	}
}

/* ---- memory node (loopback) -------------------------------------------- */

static void mn_set_error(vb_t *vb, dmr_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mn_set_error(vb_t *vb, dmr_status_t st, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&vb->mn.lock);
	if (vb->mn.st == DMR_OK) {
		vb->mn.st = st;
		dmr_err_set(&vb->mn.err, st, "verbs: %s port %d, MN 0 (%s:%u): %s", vb->dev,
			    vb->port, vb->ip, vb->mn.port, msg);
	}
	pthread_mutex_unlock(&vb->mn.lock);
}

/* The route's attributes for a transition to `state` (rdma_cm computes them). */
static int qp_attr_for(struct rdma_cm_id *id, struct ibv_qp_attr *attr, enum ibv_qp_state state,
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

/* Accept one CN's connection request (MN thread). Returns the id to destroy
 * once the event is acknowledged (rdma_destroy_id waits for that), or NULL. */
static struct rdma_cm_id *mn_accept(vb_t *vb, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	vb_req_pd_t req;
	const char *call = NULL;
	struct ibv_qp *qp = NULL;
	if (ev->param.conn.private_data_len < sizeof(req) || !ev->param.conn.private_data) {
		mn_set_error(vb, DMR_ERR_PARSE, "connection request without dmreplay private data");
		rdma_reject(id, NULL, 0);
		return id;
	}
	memcpy(&req, ev->param.conn.private_data, sizeof(req));
	if (ntohl(req.magic) != VB_MAGIC || ntohs(req.version) != VB_VERSION) {
		mn_set_error(vb, DMR_ERR_PARSE, "connection request: bad magic/version 0x%x/%u",
			     ntohl(req.magic), ntohs(req.version));
		rdma_reject(id, NULL, 0);
		return id;
	}
	uint32_t worker = ntohl(req.worker);
	struct ibv_qp_init_attr ia = {
	    .send_cq = vb->mn.cq,
	    .recv_cq = vb->mn.cq,
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC};
	qp = ibv_create_qp(vb->mn.pd, &ia);
	if (!qp) {
		call = "ibv_create_qp";
		goto fail;
	}
	struct ibv_qp_attr a;
	int mask;
	if (qp_attr_for(id, &a, IBV_QPS_INIT, &mask)) {
		call = "rdma_init_qp_attr(INIT)";
		goto fail;
	}
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	if ((errno = ibv_modify_qp(qp, &a, mask | IBV_QP_ACCESS_FLAGS))) {
		call = "ibv_modify_qp(INIT)";
		goto fail;
	}
	if (qp_attr_for(id, &a, IBV_QPS_RTR, &mask)) {
		call = "rdma_init_qp_attr(RTR)";
		goto fail;
	}
	a.path_mtu = mtu_min(mtu_min(a.path_mtu, vb->pattr.active_mtu), (enum ibv_mtu)req.mtu);
	a.max_dest_rd_atomic = (uint8_t)vb->dest_rd_atomic;
	if ((errno = ibv_modify_qp(qp, &a, mask | IBV_QP_PATH_MTU | IBV_QP_MAX_DEST_RD_ATOMIC))) {
		call = "ibv_modify_qp(RTR)";
		goto fail;
	}
	if (qp_attr_for(id, &a, IBV_QPS_RTS, &mask)) {
		call = "rdma_init_qp_attr(RTS)";
		goto fail;
	}
	if ((errno = ibv_modify_qp(qp, &a, mask))) {
		call = "ibv_modify_qp(RTS)";
		goto fail;
	}
	vb_rep_pd_t rep = {.magic = htonl(VB_MAGIC),
			   .version = htons(VB_VERSION),
			   .mtu = (uint8_t)vb->pattr.active_mtu,
			   .dest_rd_atomic = (uint8_t)vb->dest_rd_atomic,
			   .rkey = htonl(vb->mn.mr->rkey),
			   .addr = htobe64((uint64_t)(uintptr_t)vb->mn.mem),
			   .len = htobe64(vb->mn.size)};
	struct rdma_conn_param cp = {.private_data = &rep,
				     .private_data_len = sizeof(rep),
				     .responder_resources = (uint8_t)vb->dest_rd_atomic,
				     .initiator_depth = 0,
				     .flow_control = 1,
				     .retry_count = 7,
				     .rnr_retry_count = 7,
				     .qp_num = qp->qp_num};
	pthread_mutex_lock(&vb->mn.lock);
	if (vb->mn.nconn == vb->mn.conncap) {
		uint32_t cap = vb->mn.conncap ? vb->mn.conncap * 2 : 16;
		vb_conn_t *c = realloc(vb->mn.conns, cap * sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&vb->mn.lock);
			errno = ENOMEM;
			call = "realloc";
			goto fail;
		}
		vb->mn.conns = c;
		vb->mn.conncap = cap;
	}
	vb->mn.conns[vb->mn.nconn++] = (vb_conn_t){.id = id, .qp = qp};
	pthread_mutex_unlock(&vb->mn.lock);
	if (rdma_accept(id, &cp))
		mn_set_error(vb, DMR_ERR_IO, "worker %u: rdma_accept: %s", worker, strerror(errno));
	return NULL; /* close() destroys it */
fail:
	mn_set_error(vb, DMR_ERR_IO, "worker %u: %s: %s", worker, call, strerror(errno));
	rdma_reject(id, NULL, 0);
	if (qp)
		ibv_destroy_qp(qp);
	return id;
}

static void *mn_thread(void *arg)
{
	vb_t *vb = arg;
	struct pollfd pfd[2] = {{.fd = vb->mn.ch->fd, .events = POLLIN},
				{.fd = vb->mn.stop_fd, .events = POLLIN}};
	for (;;) {
		struct rdma_cm_event *ev;
		while (rdma_get_cm_event(vb->mn.ch, &ev) == 0) {
			struct rdma_cm_id *dead = NULL;
			switch (ev->event) {
			case RDMA_CM_EVENT_CONNECT_REQUEST:
				dead = mn_accept(vb, ev);
				break;
			case RDMA_CM_EVENT_DISCONNECTED:
				rdma_disconnect(ev->id);
				break;
			default:
				break;
			}
			rdma_ack_cm_event(ev);
			if (dead)
				rdma_destroy_id(dead);
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			mn_set_error(vb, DMR_ERR_IO, "rdma_get_cm_event: %s", strerror(errno));
			break;
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			mn_set_error(vb, DMR_ERR_IO, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
	}
	return NULL;
}

static dmr_status_t mn_start(vb_t *vb, dmr_err_t *err)
{
	vb_mn_t *mn = &vb->mn;
	const dmr_be_config_t *cfg = &vb->be.cfg;
	if (cfg->mr_size > vb->dattr.max_mr_size)
		return vb_fail(vb, err, DMR_ERR_RANGE, -1, 0,
			       "mr_size %llu exceeds the device's max_mr_size %llu",
			       (unsigned long long)cfg->mr_size,
			       (unsigned long long)vb->dattr.max_mr_size);
	mn->ch = rdma_create_event_channel();
	if (!mn->ch)
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "rdma_create_event_channel: %s",
			       strerror(errno));
	if (set_nonblock(mn->ch->fd))
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "fcntl(O_NONBLOCK): %s",
			       strerror(errno));
	if (rdma_create_id(mn->ch, &mn->listen, vb, RDMA_PS_TCP))
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "rdma_create_id: %s", strerror(errno));
	struct sockaddr_in sa = vb->addr;
	sa.sin_port = 0;
	if (rdma_bind_addr(mn->listen, (struct sockaddr *)&sa))
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "rdma_bind_addr: %s", strerror(errno));
	if (!same_device(vb, mn->listen->verbs))
		return vb_fail(vb, err, DMR_ERR_NODEV, -1, 0,
			       "rdma_bind_addr bound %s to device %s, not this one", vb->ip,
			       mn->listen->verbs ? ibv_get_device_name(mn->listen->verbs->device)
						 : "(none)");
	if (rdma_listen(mn->listen, 1024))
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "rdma_listen: %s", strerror(errno));
	mn->port = ntohs(rdma_get_src_port(mn->listen));
	mn->pd = ibv_alloc_pd(vb->ctx);
	if (!mn->pd)
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "ibv_alloc_pd (MN): %s",
			       strerror(errno));
	mn->cq = ibv_create_cq(vb->ctx, 16, NULL, NULL, 0);
	if (!mn->cq)
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "ibv_create_cq (MN): %s",
			       strerror(errno));
	mn->size = cfg->mr_size;
	void *mem =
	    mmap(NULL, cfg->mr_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return vb_fail(vb, err, DMR_ERR_NOMEM, -1, 0, "mmap of %llu bytes: %s",
			       (unsigned long long)cfg->mr_size, strerror(errno));
	mn->mem = mem;
	mn->mr = ibv_reg_mr(mn->pd, mem, cfg->mr_size,
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
		return vb_fail(vb, err, DMR_ERR_NOMEM, -1, 0,
			       "ibv_reg_mr of %llu bytes (remote READ/WRITE/ATOMIC): %s "
			       "(RLIMIT_MEMLOCK %s bytes)",
			       (unsigned long long)cfg->mr_size, strerror(e), lim);
	}
	mn->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (mn->stop_fd < 0)
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "eventfd: %s", strerror(errno));
	int e = pthread_create(&mn->thread, NULL, mn_thread, vb);
	if (e)
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "pthread_create: %s", strerror(e));
	mn->running = 1;
	return DMR_OK;
}

static void mn_stop(vb_t *vb)
{
	vb_mn_t *mn = &vb->mn;
	if (mn->running) {
		uint64_t one = 1;
		if (write(mn->stop_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(mn->thread);
		pthread_join(mn->thread, NULL);
		mn->running = 0;
	}
	for (uint32_t i = 0; i < mn->nconn; i++) {
		if (mn->conns[i].qp)
			ibv_destroy_qp(mn->conns[i].qp);
		rdma_destroy_id(mn->conns[i].id);
	}
	free(mn->conns);
	mn->conns = NULL;
	mn->nconn = 0;
	if (mn->listen)
		rdma_destroy_id(mn->listen);
	if (mn->mr)
		ibv_dereg_mr(mn->mr);
	if (mn->mem)
		munmap(mn->mem, mn->size);
	if (mn->cq)
		ibv_destroy_cq(mn->cq);
	if (mn->pd)
		ibv_dealloc_pd(mn->pd);
	if (mn->ch)
		rdma_destroy_event_channel(mn->ch);
	if (mn->stop_fd >= 0)
		close(mn->stop_fd);
	pthread_mutex_destroy(&mn->lock);
}

/* ---- compute-node side ------------------------------------------------- */

static struct ibv_qp *create_cn_qp(vb_t *vb, struct ibv_cq *cq, uint32_t *inline_p)
{
	uint32_t inl = vb->inline_used ? vb->inline_used : vb->inline_ask;
	for (;;) {
		struct ibv_qp_init_attr ia = {.send_cq = cq,
					      .recv_cq = cq,
					      .cap = {.max_send_wr = vb->sq_depth,
						      .max_recv_wr = 1,
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

static dmr_status_t cn_connect(vb_t *vb, uint32_t w, uint32_t m, dmr_err_t *err)
{
	vb_worker_t *wk = &vb->w[w];
	vb_qp_t *q = &wk->qps[m];
	struct rdma_cm_event *ev;
	dmr_status_t st;
	int iw = (int)w, im = (int)m;
	if (rdma_create_id(vb->ch, &q->id, NULL, RDMA_PS_TCP))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_create_id: %s", strerror(errno));
	struct sockaddr_in src = vb->addr, dst = vb->addr;
	src.sin_port = 0;
	dst.sin_port = htons(vb->mn.port);
	if (rdma_resolve_addr(q->id, (struct sockaddr *)&src, (struct sockaddr *)&dst,
			      VB_CM_TIMEOUT_MS / 2))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_resolve_addr: %s",
			       strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_ADDR_RESOLVED, iw, im, "rdma_resolve_addr", &ev, err);
	if (st != DMR_OK)
		return st;
	rdma_ack_cm_event(ev);
	if (!same_device(vb, q->id->verbs))
		return vb_fail(vb, err, DMR_ERR_NODEV, iw, im,
			       "rdma_resolve_addr: the address resolves to device %s",
			       q->id->verbs ? ibv_get_device_name(q->id->verbs->device) : "(none)");
	if (rdma_resolve_route(q->id, VB_CM_TIMEOUT_MS / 2))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_resolve_route: %s",
			       strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_ROUTE_RESOLVED, iw, im, "rdma_resolve_route", &ev,
		     err);
	if (st != DMR_OK)
		return st;
	rdma_ack_cm_event(ev);

	uint32_t inl = 0;
	q->qp = create_cn_qp(vb, wk->cq, &inl);
	if (!q->qp)
		return vb_fail(vb, err, DMR_ERR_IO, iw, im,
			       "ibv_create_qp (max_send_wr %u, max_inline_data %u): %s",
			       vb->sq_depth, vb->inline_ask, strerror(errno));
	vb->inline_used = inl;
	struct ibv_qp_attr a;
	int mask;
	if (qp_attr_for(q->id, &a, IBV_QPS_INIT, &mask))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(INIT): %s",
			       strerror(errno));
	if ((errno = ibv_modify_qp(q->qp, &a, mask)))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(INIT): %s",
			       strerror(errno));
	vb_req_pd_t req = {.magic = htonl(VB_MAGIC),
			   .version = htons(VB_VERSION),
			   .mtu = (uint8_t)vb->pattr.active_mtu,
			   .rd_atomic = (uint8_t)vb->rd_atomic,
			   .worker = htonl(w),
			   .mn = htonl(m)};
	struct rdma_conn_param cp = {.private_data = &req,
				     .private_data_len = sizeof(req),
				     .responder_resources = 0,
				     .initiator_depth = (uint8_t)vb->rd_atomic,
				     .flow_control = 1,
				     .retry_count = 7,
				     .rnr_retry_count = 7,
				     .qp_num = q->qp->qp_num};
	if (rdma_connect(q->id, &cp))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_connect: %s", strerror(errno));
	st = cm_wait(vb, q->id, RDMA_CM_EVENT_CONNECT_RESPONSE, iw, im, "rdma_connect", &ev, err);
	if (st != DMR_OK)
		return st;
	vb_rep_pd_t rep;
	int ok = ev->param.conn.private_data_len >= sizeof(rep) && ev->param.conn.private_data;
	if (ok)
		memcpy(&rep, ev->param.conn.private_data, sizeof(rep));
	rdma_ack_cm_event(ev);
	if (!ok || ntohl(rep.magic) != VB_MAGIC || ntohs(rep.version) != VB_VERSION)
		return vb_fail(vb, err, DMR_ERR_PARSE, iw, im,
			       "connection response without dmreplay private data (v%u)",
			       VB_VERSION);
	q->raddr = be64toh(rep.addr);
	q->rlen = be64toh(rep.len);
	q->rkey = ntohl(rep.rkey);
	vb->peer_mtu = (enum ibv_mtu)rep.mtu;

	if (qp_attr_for(q->id, &a, IBV_QPS_RTR, &mask))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(RTR): %s",
			       strerror(errno));
	if (a.ah_attr.is_global && a.ah_attr.grh.sgid_index != vb->gid_index)
		return vb_fail(vb, err, DMR_ERR_NODEV, iw, im,
			       "rdma_cm chose source GID index %u, not the chosen %d (check "
			       "default_roce_mode in /sys/kernel/config/rdma_cm/%s)",
			       a.ah_attr.grh.sgid_index, vb->gid_index, vb->dev);
	a.path_mtu = mtu_min(mtu_min(a.path_mtu, vb->pattr.active_mtu), vb->peer_mtu);
	vb->path_mtu = a.path_mtu;
	if ((errno = ibv_modify_qp(q->qp, &a, mask | IBV_QP_PATH_MTU)))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(RTR): %s",
			       strerror(errno));
	if (qp_attr_for(q->id, &a, IBV_QPS_RTS, &mask))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_init_qp_attr(RTS): %s",
			       strerror(errno));
	a.max_rd_atomic = (uint8_t)min32(vb->rd_atomic, rep.dest_rd_atomic);
	if ((errno = ibv_modify_qp(q->qp, &a, mask | IBV_QP_MAX_QP_RD_ATOMIC)))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(RTS): %s",
			       strerror(errno));
	if (rdma_establish(q->id))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_establish: %s", strerror(errno));
	return DMR_OK;
}

static void vb_close(dmr_be_t *be)
{
	vb_t *vb = to_vb(be);
	if (vb->w) {
		for (uint32_t i = 0; i < vb->nworkers; i++) {
			vb_worker_t *wk = &vb->w[i];
			for (uint32_t m = 0; wk->qps && m < vb->be.cfg.mns; m++) {
				vb_qp_t *q = &wk->qps[m];
				if (q->qp)
					ibv_destroy_qp(q->qp);
				if (q->id)
					rdma_destroy_id(q->id);
				free(q->slots);
			}
			free(wk->qps);
			if (wk->cq)
				ibv_destroy_cq(wk->cq);
			for (uint32_t k = 0; k < wk->nmr; k++)
				ibv_dereg_mr(wk->mrs[k].mr);
			free(wk->mrs);
			free(wk->tim);
			pthread_mutex_destroy(&wk->tmu);
			free(wk->wrs);
			free(wk->sges);
		}
		free(vb->w);
	}
	mn_stop(vb);
	if (vb->pd)
		ibv_dealloc_pd(vb->pd);
	if (vb->ch)
		rdma_destroy_event_channel(vb->ch);
	if (vb->ctx)
		ibv_close_device(vb->ctx);
	free(vb);
}

/* ---- data path --------------------------------------------------------- */

static dmr_status_t vb_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (worker >= vb->nworkers)
		return vb_fail(vb, err, DMR_ERR_RANGE, (int)worker, -1, "mr_reg: no such worker");
	if (len == 0)
		return DMR_OK;
	vb_worker_t *wk = &vb->w[worker];
	struct ibv_mr *mr = ibv_reg_mr(vb->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return vb_fail(vb, err, DMR_ERR_NOMEM, (int)worker, -1,
			       "ibv_reg_mr(%p, %zu bytes, LOCAL_WRITE): %s", addr, len,
			       strerror(errno));
	/* an older region inside the new one belonged to a freed buffer */
	uintptr_t a = (uintptr_t)addr;
	uint32_t keep = 0;
	for (uint32_t k = 0; k < wk->nmr; k++) {
		if (wk->mrs[k].addr >= a && wk->mrs[k].addr + wk->mrs[k].len <= a + len)
			ibv_dereg_mr(wk->mrs[k].mr);
		else
			wk->mrs[keep++] = wk->mrs[k];
	}
	wk->nmr = keep;
	if (wk->nmr == wk->mrcap) {
		uint32_t cap = wk->mrcap ? wk->mrcap * 2 : 16;
		vb_mr_t *m = realloc(wk->mrs, cap * sizeof(*m));
		if (!m) {
			ibv_dereg_mr(mr);
			return vb_fail(vb, err, DMR_ERR_NOMEM, (int)worker, -1, "out of memory");
		}
		wk->mrs = m;
		wk->mrcap = cap;
	}
	wk->mrs[wk->nmr++] = (vb_mr_t){.addr = a, .len = len, .mr = mr};
	return DMR_OK;
}

/* lkey of the newest region holding [p, p+len), 0 and *found_p = 0 if none. */
static uint32_t lkey_of(const vb_worker_t *wk, const void *p, uint32_t len, int *found_p)
{
	uintptr_t a = (uintptr_t)p;
	for (uint32_t k = wk->nmr; k-- > 0;) {
		const vb_mr_t *m = &wk->mrs[k];
		if (a >= m->addr && a + len <= m->addr + m->len) {
			*found_p = 1;
			return m->mr->lkey;
		}
	}
	*found_p = 0;
	return 0;
}

static dmr_status_t vb_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			    uint32_t n, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	vb_worker_t *wk = &vb->w[worker];
	vb_qp_t *q = &wk->qps[mn];
	if (n > q->depth - q->outstanding)
		return vb_fail(vb, err, DMR_ERR_AGAIN, (int)worker, (int)mn,
			       "send queue full: %u WRs in flight of %u, batch of %u (poll first)",
			       q->outstanding, q->depth, n);
	uint32_t run = q->unsig_run;
	for (uint32_t i = 0; i < n; i++) {
		const dmr_wr_t *d = &wrs[i];
		struct ibv_send_wr *s = &wk->wrs[i];
		struct ibv_sge *g = &wk->sges[i];
		uint32_t slot = (q->head + i) % q->depth;
		int user_sig = (d->flags & DMR_WR_SIGNALED) != 0;
		int sig = user_sig;
		if (!sig && ++run >= q->depth / 2)
			sig = 1; /* reclaim send queue slots */
		if (sig)
			run = 0;
		memset(s, 0, sizeof(*s));
		s->wr_id = (uint64_t)mn << 32 | slot;
		s->next = i + 1 < n ? &wk->wrs[i + 1] : NULL;
		s->sg_list = g;
		s->send_flags = sig ? IBV_SEND_SIGNALED : 0;
		uint64_t raddr = q->raddr + d->remote;
		uint32_t len =
		    d->opcode == DMR_WR_READ || d->opcode == DMR_WR_WRITE ? d->length : 8;
		switch (d->opcode) {
		case DMR_WR_READ:
			s->opcode = IBV_WR_RDMA_READ;
			s->wr.rdma.remote_addr = raddr;
			s->wr.rdma.rkey = q->rkey;
			break;
		case DMR_WR_WRITE:
			s->opcode = IBV_WR_RDMA_WRITE;
			s->wr.rdma.remote_addr = raddr;
			s->wr.rdma.rkey = q->rkey;
			if (len && len <= vb->inline_used)
				s->send_flags |= IBV_SEND_INLINE;
			break;
		case DMR_WR_CAS:
			s->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			s->wr.atomic.remote_addr = raddr;
			s->wr.atomic.rkey = q->rkey;
			s->wr.atomic.compare_add = d->compare_add;
			s->wr.atomic.swap = d->swap;
			break;
		case DMR_WR_FAA:
			s->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			s->wr.atomic.remote_addr = raddr;
			s->wr.atomic.rkey = q->rkey;
			s->wr.atomic.compare_add = d->compare_add;
			break;
		default:
			return vb_fail(vb, err, DMR_ERR_INVALID, (int)worker, (int)mn,
				       "WR %u: unknown opcode %u", i, d->opcode);
		}
		g->addr = (uintptr_t)d->local;
		g->length = len;
		s->num_sge = len ? 1 : 0;
		if (len && !(s->send_flags & IBV_SEND_INLINE)) {
			int found;
			g->lkey = lkey_of(wk, d->local, len, &found);
			if (!found)
				return vb_fail(
				    vb, err, DMR_ERR_INVALID, (int)worker, (int)mn,
				    "%s WR %u (wr_id %llu): local buffer %p+%u is not in "
				    "a region registered with dmr_be_mr_reg",
				    dmr_wr_opcode_string(d->opcode), i,
				    (unsigned long long)d->wr_id, d->local, len);
		}
		q->slots[slot] = (vb_slot_t){.wr_id = d->wr_id,
					     .local = d->local,
					     .length = d->length,
					     .opcode = d->opcode,
					     .flags = user_sig ? SLOT_USER_SIG : 0};
	}
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(q->qp, wk->wrs, &bad);
	if (rc) {
		/* WRs before `bad` were posted: they complete, but are never reported */
		uint32_t k = bad ? (uint32_t)(bad - wk->wrs) : 0;
		if (k > n)
			k = 0;
		for (uint32_t i = 0; i < k; i++)
			q->slots[(q->head + i) % q->depth].flags = SLOT_VOID;
		q->head = (q->head + k) % q->depth;
		q->outstanding += k;
		return vb_fail(vb, err, DMR_ERR_IO, (int)worker, (int)mn,
			       "ibv_post_send of %u WRs failed at WR %u: %s", n, k, strerror(rc));
	}
	q->head = (q->head + n) % q->depth;
	q->outstanding += n;
	q->unsig_run = run;
	wk->st.doorbells++;
	return DMR_OK;
}

static uint8_t wc_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return DMR_WC_SUCCESS;
	case IBV_WC_REM_ACCESS_ERR:
		return DMR_WC_REM_ACCESS_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return DMR_WC_FLUSH_ERR;
	case IBV_WC_RETRY_EXC_ERR:
		return DMR_WC_RETRY_EXC_ERR;
	default:
		return DMR_WC_GENERAL_ERR;
	}
}

/* Retire the oldest slot of q with status `status`; count it. */
static vb_slot_t *retire(vb_t *vb, vb_worker_t *wk, vb_qp_t *q, uint8_t status)
{
	vb_slot_t *s = &q->slots[q->tail];
	q->tail = (q->tail + 1) % q->depth;
	q->outstanding--;
	if (s->flags & SLOT_VOID)
		return s;
	dmr_be_stats_t *st = &wk->st;
	st->verbs++;
	if (status != DMR_WC_SUCCESS) {
		st->errors++;
		return s;
	}
	switch (s->opcode) {
	case DMR_WR_READ:
		st->reads++;
		st->bytes_read += s->length;
		break;
	case DMR_WR_WRITE:
		st->writes++;
		st->bytes_written += s->length;
		break;
	case DMR_WR_CAS:
	case DMR_WR_FAA:
		if (s->opcode == DMR_WR_CAS)
			st->cas++;
		else
			st->faa++;
		if (vb->atomic_bswap) {
			uint64_t v;
			memcpy(&v, s->local, 8);
			v = __builtin_bswap64(v);
			memcpy(s->local, &v, 8);
		}
		break;
	}
	return s;
}

static int timer_before(const vb_timer_t *a, const vb_timer_t *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void timer_pop(vb_worker_t *wk)
{
	vb_timer_t last = wk->tim[--wk->ntim];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= wk->ntim)
			break;
		if (c + 1 < wk->ntim && timer_before(&wk->tim[c + 1], &wk->tim[c]))
			c++;
		if (!timer_before(&wk->tim[c], &last))
			break;
		wk->tim[i] = wk->tim[c];
		i = c;
	}
	if (wk->ntim)
		wk->tim[i] = last;
}

static int vb_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	vb_t *vb = to_vb(be);
	vb_worker_t *wk = &vb->w[worker];
	struct ibv_wc iwc[VB_POLL_CHUNK];
	int n = 0;
	while (n < max) {
		int want = max - n < VB_POLL_CHUNK ? max - n : VB_POLL_CHUNK;
		int got = ibv_poll_cq(wk->cq, want, iwc);
		if (got < 0) {
			wk->st.errors++; /* no way to report it here: counted */
			break;
		}
		for (int k = 0; k < got; k++) {
			uint32_t m = (uint32_t)(iwc[k].wr_id >> 32);
			uint32_t slot = (uint32_t)iwc[k].wr_id;
			if (m >= vb->be.cfg.mns)
				continue;
			vb_qp_t *q = &wk->qps[m];
			uint8_t status = wc_status(iwc[k].status);
			/* RC: the unsignaled WRs before this one completed successfully */
			while (q->tail != slot && q->outstanding)
				retire(vb, wk, q, DMR_WC_SUCCESS);
			if (!q->outstanding)
				continue; /* cannot happen: a CQE for no WR */
			vb_slot_t *s = retire(vb, wk, q, status);
			if (s->flags & SLOT_VOID)
				continue;
			if (status == DMR_WC_SUCCESS && !(s->flags & SLOT_USER_SIG))
				continue;
			wcs[n++] = (dmr_wc_t){.wr_id = s->wr_id,
					      .opcode = s->opcode,
					      .status = status,
					      .mn = (uint16_t)m,
					      .byte_len = s->opcode == DMR_WR_READ &&
								  status == DMR_WC_SUCCESS
							      ? s->length
							      : 0};
		}
		if (got < want)
			break;
	}
	if (n < max && __atomic_load_n(&wk->ntim_hint, __ATOMIC_ACQUIRE)) {
		uint64_t now = vb_now_ns(vb) * 1000ull;
		pthread_mutex_lock(&wk->tmu);
		while (wk->ntim && n < max && wk->tim[0].at <= now) {
			wcs[n++] = (dmr_wc_t){.wr_id = wk->tim[0].wr_id, .opcode = DMR_WR_TIMER};
			timer_pop(wk);
		}
		__atomic_store_n(&wk->ntim_hint, wk->ntim, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&wk->tmu);
	}
	return n;
}

static uint64_t vb_now(dmr_be_t *be, uint32_t worker)
{
	(void)worker;
	return vb_now_ns(to_vb(be)) * 1000ull;
}

static dmr_status_t vb_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	vb_t *vb = to_vb(be);
	if (worker >= vb->nworkers)
		return DMR_ERR_RANGE;
	vb_worker_t *wk = &vb->w[worker];
	pthread_mutex_lock(&wk->tmu);
	if (wk->ntim == wk->timcap) {
		uint32_t cap = wk->timcap ? wk->timcap * 2 : 64;
		vb_timer_t *t = realloc(wk->tim, cap * sizeof(*t));
		if (!t) {
			pthread_mutex_unlock(&wk->tmu);
			return DMR_ERR_NOMEM;
		}
		wk->tim = t;
		wk->timcap = cap;
	}
	vb_timer_t nt = {.at = at_ps, .seq = wk->tseq++, .wr_id = wr_id};
	uint32_t i = wk->ntim++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!timer_before(&nt, &wk->tim[p]))
			break;
		wk->tim[i] = wk->tim[p];
		i = p;
	}
	wk->tim[i] = nt;
	__atomic_store_n(&wk->ntim_hint, wk->ntim, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wk->tmu);
	return DMR_OK;
}

static dmr_status_t vb_barrier(dmr_be_t *be, uint64_t deadline_ps, dmr_err_t *err)
{
	(void)be;
	(void)deadline_ps;
	(void)err;
	return DMR_OK; /* loopback: every CN is this process */
}

static int vb_progress(dmr_be_t *be, uint64_t until_ps)
{
	(void)be;
	(void)until_ps;
	return -1; /* threaded backend: workers poll their own CQs */
}

static void *vb_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	vb_t *vb = to_vb(be);
	if (mn != 0 || !vb->mn.mem)
		return NULL;
	if (len_p)
		*len_p = vb->mn.size;
	return vb->mn.mem;
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
	}
}

static void vb_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	(void)be;
	(void)worker;
	(void)ps; /* the CPU is real */
}

void dmr_verbs_info(dmr_be_t *be, dmr_verbs_info_t *info_p)
{
	vb_t *vb = to_vb(be);
	dmr_verbs_info_t in = {.port = vb->port,
			       .gid_index = vb->gid_index,
			       .path_mtu = mtu_bytes(vb->path_mtu),
			       .sq_depth = vb->sq_depth,
			       .cq_depth = vb->cq_depth,
			       .max_rd_atomic = vb->rd_atomic,
			       .max_inline = vb->inline_used,
			       .atomic_swapped = vb->atomic_bswap};
	snprintf(in.device, sizeof(in.device), "%s", vb->dev);
	snprintf(in.ip, sizeof(in.ip), "%s", vb->ip);
	*info_p = in;
}

/* ---- open: limits, connections, canary --------------------------------- */

static void clamp_limits(vb_t *vb)
{
	const struct ibv_device_attr *d = &vb->dattr;
	uint32_t mns = vb->be.cfg.mns;
	vb->sq_depth = min32(VB_ASK_SQ, (uint32_t)d->max_qp_wr);
	vb->cq_depth = min32(mns * vb->sq_depth, (uint32_t)d->max_cqe);
	if (vb->cq_depth < mns * vb->sq_depth)
		vb->sq_depth = vb->cq_depth / mns;
	vb->rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_init_rd_atom, 255));
	vb->dest_rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_rd_atom, 255));
	vb->inline_ask = VB_ASK_INLINE;
}

static void log_limits_once(const vb_t *vb)
{
	static atomic_flag logged = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&logged))
		return;
	fprintf(stderr,
		"verbs: %s port %d GID %d (%s): asked/used max_send_wr %u/%u, CQ depth %u/%u, "
		"max_rd_atomic %u/%u, max_dest_rd_atomic %u/%u, max_inline_data %u/%u, "
		"path MTU %u (local %u, peer %u)\n",
		vb->dev, vb->port, vb->gid_index, vb->ip, VB_ASK_SQ, vb->sq_depth,
		VB_ASK_SQ * vb->be.cfg.mns, vb->cq_depth, VB_ASK_RD_ATOMIC, vb->rd_atomic,
		VB_ASK_RD_ATOMIC, vb->dest_rd_atomic, vb->inline_ask, vb->inline_used,
		mtu_bytes(vb->path_mtu), mtu_bytes(vb->pattr.active_mtu), mtu_bytes(vb->peer_mtu));
}

/* One WR on worker 0 / MN 0, waited for with a deadline. */
static dmr_status_t canary_op(vb_t *vb, uint8_t opcode, void *local, uint64_t cmp, uint64_t swp,
			      dmr_err_t *err)
{
	dmr_wr_t wr = {.wr_id = 0xCA11A7,
		       .local = local,
		       .remote = 0,
		       .compare_add = cmp,
		       .swap = swp,
		       .length = 8,
		       .opcode = opcode,
		       .flags = DMR_WR_SIGNALED};
	dmr_status_t st = vb_post(&vb->be, 0, 0, &wr, 1, err);
	if (st != DMR_OK)
		return st;
	uint64_t deadline = vb_now_ns(vb) + VB_CANARY_TIMEOUT_NS;
	dmr_wc_t wc;
	while (vb_poll(&vb->be, 0, &wc, 1) == 0)
		if (vb_now_ns(vb) > deadline)
			return vb_fail(vb, err, DMR_ERR_TIMEOUT, 0, 0,
				       "start-up canary %s: no completion within %llu s",
				       dmr_wr_opcode_string(opcode),
				       VB_CANARY_TIMEOUT_NS / 1000000000ull);
	if (wc.status != DMR_WC_SUCCESS)
		return vb_fail(vb, err, DMR_ERR_REMOTE, 0, 0, "start-up canary %s failed: %s",
			       dmr_wr_opcode_string(opcode), dmr_wc_status_string(wc.status));
	return DMR_OK;
}

/* Canary WRITE + READ back, CAS old value (detects the byte order of the
 * returned value); leaves the first 8 bytes of the MN region zero. */
static dmr_status_t canary_check(vb_t *vb, dmr_err_t *err)
{
	static const uint64_t pat = 0x0123456789abcdefull;
	uint64_t *buf = aligned_alloc(64, 64);
	if (!buf)
		return vb_fail(vb, err, DMR_ERR_NOMEM, 0, 0, "out of memory");
	dmr_status_t st = vb_mr_reg(&vb->be, 0, buf, 64, err);
	if (st != DMR_OK)
		goto out;
	buf[0] = pat;
	buf[1] = 0;
	if ((st = canary_op(vb, DMR_WR_WRITE, &buf[0], 0, 0, err)) != DMR_OK ||
	    (st = canary_op(vb, DMR_WR_READ, &buf[1], 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[1] != pat) {
		st = vb_fail(vb, err, DMR_ERR_VERIFY, 0, 0,
			     "start-up canary: READ returned 0x%016llx after WRITE of 0x%016llx%s",
			     (unsigned long long)buf[1], (unsigned long long)pat,
			     buf[1] == 0 ? " (all zeros: DMA/IOMMU misconfigured?)" : "");
		goto out;
	}
	buf[2] = 0;
	if ((st = canary_op(vb, DMR_WR_CAS, &buf[2], pat, 0, err)) != DMR_OK)
		goto out;
	if (buf[2] == __builtin_bswap64(pat)) {
		vb->atomic_bswap = 1;
	} else if (buf[2] != pat) {
		st = vb_fail(vb, err, DMR_ERR_VERIFY, 0, 0,
			     "start-up canary: CAS returned old value 0x%016llx, expected "
			     "0x%016llx",
			     (unsigned long long)buf[2], (unsigned long long)pat);
		goto out;
	}
	buf[3] = 1;
	if ((st = canary_op(vb, DMR_WR_READ, &buf[3], 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[3] != 0)
		st = vb_fail(vb, err, DMR_ERR_VERIFY, 0, 0,
			     "start-up canary: CAS (compare matched) left 0x%016llx, not 0",
			     (unsigned long long)buf[3]);
out:
	/* the canary is not part of the run: forget its counters and region */
	if (st == DMR_OK)
		vb->w[0].st = (dmr_be_stats_t){0};
	if (vb->w[0].nmr && vb->w[0].mrs[vb->w[0].nmr - 1].addr == (uintptr_t)buf) {
		ibv_dereg_mr(vb->w[0].mrs[vb->w[0].nmr - 1].mr);
		vb->w[0].nmr--;
	}
	free(buf);
	return st;
}

static dmr_status_t vb_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	if (cfg->cluster && *cfg->cluster)
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "verbs: cluster configs (%s) are not supported yet; only the "
				   "in-process loopback MN",
				   cfg->cluster);
	if (cfg->mns != 1)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: %u MNs requested; loopback mode has one MN", cfg->mns);
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
	vb->mn.stop_fd = -1;
	pthread_mutex_init(&vb->mn.lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &vb->t0);
	dmr_status_t st = vb_find_device(vb, cfg->device, err);
	if (st != DMR_OK)
		goto fail;
	if ((st = vb_choose_gid(vb, cfg->gid_index, err)) != DMR_OK)
		goto fail;
	clamp_limits(vb);
	if ((st = mn_start(vb, err)) != DMR_OK)
		goto fail;
	vb->ch = rdma_create_event_channel();
	if (!vb->ch) {
		st = vb_fail(vb, err, DMR_ERR_IO, -1, -1, "rdma_create_event_channel: %s",
			     strerror(errno));
		goto fail;
	}
	if (set_nonblock(vb->ch->fd)) {
		st = vb_fail(vb, err, DMR_ERR_IO, -1, -1, "fcntl(O_NONBLOCK): %s", strerror(errno));
		goto fail;
	}
	vb->pd = ibv_alloc_pd(vb->ctx);
	if (!vb->pd) {
		st = vb_fail(vb, err, DMR_ERR_IO, -1, -1, "ibv_alloc_pd: %s", strerror(errno));
		goto fail;
	}
	vb->nworkers = cfg->cns * cfg->workers;
	vb->w = calloc(vb->nworkers, sizeof(*vb->w));
	if (!vb->w) {
		st = vb_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < vb->nworkers; i++)
		pthread_mutex_init(&vb->w[i].tmu, NULL);
	for (uint32_t i = 0; i < vb->nworkers; i++) {
		vb_worker_t *wk = &vb->w[i];
		wk->qps = calloc(cfg->mns, sizeof(*wk->qps));
		wk->wrs = calloc(vb->sq_depth, sizeof(*wk->wrs));
		wk->sges = calloc(vb->sq_depth, sizeof(*wk->sges));
		if (!wk->qps || !wk->wrs || !wk->sges) {
			st = vb_fail(vb, err, DMR_ERR_NOMEM, (int)i, -1, "out of memory");
			goto fail;
		}
		wk->cq = ibv_create_cq(vb->ctx, (int)vb->cq_depth, NULL, NULL, 0);
		if (!wk->cq) {
			st = vb_fail(vb, err, DMR_ERR_IO, (int)i, -1, "ibv_create_cq(%u CQEs): %s",
				     vb->cq_depth, strerror(errno));
			goto fail;
		}
		for (uint32_t m = 0; m < cfg->mns; m++) {
			vb_qp_t *q = &wk->qps[m];
			q->depth = vb->sq_depth;
			q->slots = calloc(q->depth, sizeof(*q->slots));
			if (!q->slots) {
				st = vb_fail(vb, err, DMR_ERR_NOMEM, (int)i, (int)m,
					     "out of memory");
				goto fail;
			}
			if ((st = cn_connect(vb, i, m, err)) != DMR_OK)
				goto fail;
		}
	}
	if ((st = canary_check(vb, err)) != DMR_OK)
		goto fail;
	log_limits_once(vb);
	*be_p = &vb->be;
	return DMR_OK;
fail:
	vb_close(&vb->be);
	return st;
}

const dmr_be_ops_t dmr_verbs_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "verbs",
    .caps = 0,
    .open = vb_open,
    .close = vb_close,
    .mr_reg = vb_mr_reg,
    .post = vb_post,
    .poll = vb_poll,
    .now = vb_now,
    .timer = vb_timer,
    .barrier = vb_barrier,
    .progress = vb_progress,
    .mn_memory = vb_mn_memory,
    .stats = vb_stats,
    .charge = vb_charge,
};
