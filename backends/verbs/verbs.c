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
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define VB_HAVE_TSC 1
#endif

/* What we ask for; clamped to the device (logged once). */
#define VB_ASK_SQ 4096u
#define VB_ASK_RD_ATOMIC 16u
#define VB_ASK_INLINE 256u
#define VB_CM_TIMEOUT_MS 20000
#define VB_CANARY_TIMEOUT_NS 10000000000ull
#define VB_MAGIC 0x444d5256u /* "DMRV" */
#define VB_VERSION 2u
#define VB_POLL_CHUNK 32
/* control page (roles), offsets from its start */
#define CTL_LOADED 0u
#define CTL_ARRIVE 64u	/* + 8 * cn index */
#define CTL_DONE 640u	/* + 8 * cn index: 1 done, CTL_DONE_FAILED its run failed */
#define CTL_DONE_FAILED 2u
#define CTL_CANARY 1216u /* + 64 * cn index */
#define CTL_XV 5312u	  /* + 8 * cn index: committed delta (int64) */
#define VB_CHUNK (1u << 20) /* load / read-back WR size */

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
	pthread_mutex_t lock; /* guards conns, st, err, ndisc */
	vb_conn_t *conns;
	uint32_t nconn, conncap, ndisc;
	uint64_t ctl;  /* offset of the control page in mem (MN role) */
	uint64_t regsz; /* bytes mapped and registered */
	int verbose;   /* MN role: log connections */
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
	uint32_t sq_ask, sq_depth, cq_depth, rd_atomic, dest_rd_atomic, inline_ask, inline_used;
	uint32_t q_sq; /* dmr_verbs_set_queue at open (0: VB_ASK_SQ) */
	int q_inline;  /* (-1: VB_ASK_INLINE) */
	enum ibv_mtu path_mtu, peer_mtu;
	int atomic_bswap;
	struct timespec t0;
	/* data-path clock (vb_clock_calibrate): TSC ticks converted with a rate
	 * measured against CLOCK_MONOTONIC over open(); 0 = CLOCK_MONOTONIC */
	int clk_tsc;
	uint64_t clk_tsc0, clk_tsc1, clk_ns1;
	double clk_ns_per_tick;
	/* peer MN address (loopback: our own address, the MN thread's port) */
	struct sockaddr_in peer;
	int retry_cnt, rnr_retry, timeout; /* timeout < 0: the route's */
	uint32_t nwalloc;	 /* workers allocated: nworkers (+1 control in CN mode) */
	_Atomic uint64_t flushed; /* flushed completions after the first failure */
	atomic_flag failed_logged;
	/* CN role */
	const dmr_verbs_role_t *role;
	uint32_t ctlw;	       /* the control worker (= nworkers) */
	uint64_t rctl;	       /* control page offset in the MN region */
	uint8_t *shadow;       /* local image of the MN region */
	size_t shadow_len;
	uint64_t *cbuf;	       /* control scratch, DMR_VERBS_CTL_BYTES */
	pthread_mutex_t start_mu;
	int start_mu_init;
	int started, ended;    /* start / end barrier passed or failed */
	dmr_status_t start_st;
	dmr_err_t start_err;
} vb_t;

static const dmr_verbs_role_t *g_role;
static uint32_t g_q_sq;
static int g_q_inline = -1;

void dmr_verbs_set_queue(uint32_t sq_depth, int inline_bytes)
{
	g_q_sq = sq_depth;
	g_q_inline = inline_bytes;
}
static dmr_status_t g_role_st;
static dmr_err_t g_role_err;

void dmr_verbs_set_role(const dmr_verbs_role_t *role)
{
	g_role = role;
	g_role_st = DMR_OK;
	g_role_err.msg[0] = 0;
}

dmr_status_t dmr_verbs_role_status(dmr_err_t *err)
{
	if (g_role_st != DMR_OK && err)
		dmr_err_set(err, g_role_st, "%s", g_role_err.msg);
	return g_role_st;
}

/* Connection private data, network byte order. CN -> MN (REQ). */
typedef struct vb_req_pd {
	uint32_t magic;
	uint16_t version;
	uint8_t mtu;	   /* enum ibv_mtu: the CN port's active MTU */
	uint8_t rd_atomic; /* initiator depth the CN will use */
	uint32_t worker, mn;
	uint32_t cn; /* CN index in the cluster config (loopback: 0) */
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
	if (mn >= 0 && n > 0 && (size_t)n < sizeof(where)) {
		char pip[INET_ADDRSTRLEN] = "?";
		inet_ntop(AF_INET, &vb->peer.sin_addr, pip, sizeof(pip));
		n += snprintf(where + n, sizeof(where) - (size_t)n, ", MN %d (%s:%u)", mn, pip,
			      ntohs(vb->peer.sin_port));
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

static uint64_t vb_now_ns(const vb_t *vb)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)(ts.tv_sec - vb->t0.tv_sec) * 1000000000ull + (uint64_t)ts.tv_nsec -
	       (uint64_t)vb->t0.tv_nsec;
}

/*
 * The data-path clock (now(), timers). CLOCK_MONOTONIC costs a system call
 * and an emulated device access where the kernel's clocksource is not the
 * TSC: under qemu TCG the guest runs on hpet, 0.74 us per call, about 4 % of
 * an 8-byte READ on rxe, paid once per post by a benchmark loop. perftest
 * reads the TSC (get_cycles) instead; so do we, with a rate measured against
 * CLOCK_MONOTONIC over the whole open() (at least VB_CLK_MIN_NS; open()
 * takes far longer on rxe), anchored at the end of open(), so both clocks
 * agree there. DMR_VERBS_CLOCK=monotonic, a non-x86 machine or an
 * implausible rate (outside 50 MHz..20 GHz) keep CLOCK_MONOTONIC.
 */
#define VB_CLK_MIN_NS 20000000ull

static inline uint64_t vb_tsc(void)
{
#ifdef VB_HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

static void vb_clock_start(vb_t *vb)
{
	vb->clk_tsc0 = vb_tsc();
}

static void vb_clock_calibrate(vb_t *vb)
{
	const char *env = getenv("DMR_VERBS_CLOCK");
	vb->clk_tsc = 0;
#ifdef VB_HAVE_TSC
	if (env && strcmp(env, "monotonic") == 0)
		return;
	uint64_t ns = vb_now_ns(vb);
	if (ns < VB_CLK_MIN_NS) {
		struct timespec ts = {0, (long)(VB_CLK_MIN_NS - ns)};
		nanosleep(&ts, NULL);
	}
	uint64_t a = vb_now_ns(vb), tsc = vb_tsc(), b = vb_now_ns(vb);
	if (tsc <= vb->clk_tsc0)
		return;
	double npt = (double)(a / 2 + b / 2) / (double)(tsc - vb->clk_tsc0);
	if (!(npt >= 0.05 && npt <= 20))
		return;
	vb->clk_ns_per_tick = npt;
	vb->clk_tsc1 = tsc;
	vb->clk_ns1 = a / 2 + b / 2;
	vb->clk_tsc = 1;
#else
	(void)env;
#endif
}

/* ns since open() on the data-path clock. */
static inline uint64_t vb_clock_ns(const vb_t *vb)
{
	if (!vb->clk_tsc)
		return vb_now_ns(vb);
	uint64_t t = vb_tsc();
	if (t <= vb->clk_tsc1) /* another core's TSC a little behind */
		return vb->clk_ns1;
	return vb->clk_ns1 + (uint64_t)((double)(t - vb->clk_tsc1) * vb->clk_ns_per_tick);
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

static dmr_status_t vb_choose_gid(vb_t *vb, int want, const char *want_ip, dmr_err_t *err)
{
	struct in_addr wip = {0};
	if (want_ip && *want_ip && inet_pton(AF_INET, want_ip, &wip) != 1)
		return vb_fail(vb, err, DMR_ERR_INVALID, -1, -1, "ip '%s' is not a dotted IPv4 address",
			       want_ip);
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
		if (!r && wip.s_addr && a.s_addr != wip.s_addr)
			r = "not the configured ip";
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
			       "no RoCEv2 GID with %s%s (%s)",
			       wip.s_addr ? "the configured ip " : "an IPv4 address of this node",
			       wip.s_addr ? want_ip : "", why[0] ? why : "GID table empty");
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
				     .retry_count = (uint8_t)vb->retry_cnt,
				     .rnr_retry_count = (uint8_t)vb->rnr_retry,
				     .qp_num = qp->qp_num};
	if (vb->mn.verbose)
		fprintf(stderr, "mn: CN index %u worker %u connected (QP %u)\n", ntohl(req.cn),
			worker, qp->qp_num);
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
				pthread_mutex_lock(&vb->mn.lock);
				vb->mn.ndisc++;
				pthread_mutex_unlock(&vb->mn.lock);
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

/* CAP_IPC_LOCK in the effective set: the memlock limit does not apply. */
static int has_cap_ipc_lock(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long cap = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			break;
	fclose(f);
	return (cap >> 14) & 1; /* CAP_IPC_LOCK = 14 */
}

/* Start-up safety: refuse before ibv_reg_mr when `bytes` cannot be locked. */
static dmr_status_t memlock_check(const vb_t *vb, uint64_t bytes, const char *what, int mn,
				  dmr_err_t *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    bytes <= (uint64_t)rl.rlim_cur || has_cap_ipc_lock())
		return DMR_OK;
	return vb_fail(vb, err, DMR_ERR_RANGE, -1, mn,
		       "%s needs %llu bytes of locked memory (%.1f MiB) but RLIMIT_MEMLOCK is "
		       "%llu bytes (%.1f MiB) and the process lacks CAP_IPC_LOCK: raise it "
		       "(`ulimit -l unlimited` in the shell that starts dmreplay, memlock in "
		       "/etc/security/limits.conf, LimitMEMLOCK=infinity for a systemd unit, "
		       "--ulimit memlock=-1 for docker) or use a smaller mr_size",
		       what, (unsigned long long)bytes, bytes / 1048576.0,
		       (unsigned long long)rl.rlim_cur, rl.rlim_cur / 1048576.0);
}

static dmr_status_t mn_start(vb_t *vb, dmr_err_t *err)
{
	vb_mn_t *mn = &vb->mn;
	const dmr_be_config_t *cfg = &vb->be.cfg;
	mn->ctl = (cfg->mr_size + 63) & ~63ull;
	/* the control page only in the MN role: loopback registers exactly mr_size,
	 * so an access past it fails (conformance) */
	uint64_t regsz = mn->verbose ? mn->ctl + DMR_VERBS_CTL_BYTES : cfg->mr_size;
	mn->regsz = regsz;
	if (regsz > vb->dattr.max_mr_size)
		return vb_fail(vb, err, DMR_ERR_RANGE, -1, 0,
			       "mr_size %llu (+ %u bytes control page) exceeds the device's "
			       "max_mr_size %llu",
			       (unsigned long long)cfg->mr_size,
			       (unsigned)(regsz - cfg->mr_size),
			       (unsigned long long)vb->dattr.max_mr_size);
	dmr_status_t mst = memlock_check(vb, regsz, "the MN region (mr_size + control page)", 0, err);
	if (mst != DMR_OK)
		return mst;
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
	sa.sin_port = htons(mn->port); /* 0 (loopback): any */
	if (rdma_bind_addr(mn->listen, (struct sockaddr *)&sa))
		return vb_fail(vb, err, DMR_ERR_IO, -1, 0, "rdma_bind_addr(%s:%u): %s", vb->ip,
			       mn->port, strerror(errno));
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
	void *mem = mmap(NULL, regsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return vb_fail(vb, err, DMR_ERR_NOMEM, -1, 0, "mmap of %llu bytes: %s",
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
		return vb_fail(vb, err, DMR_ERR_NOMEM, -1, 0,
			       "ibv_reg_mr of %llu bytes (remote READ/WRITE/ATOMIC): %s "
			       "(RLIMIT_MEMLOCK %s bytes)",
			       (unsigned long long)regsz, strerror(e), lim);
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
		munmap(mn->mem, mn->regsz);
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
	struct sockaddr_in src = vb->addr, dst = vb->peer;
	src.sin_port = 0;
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
	a.retry_cnt = (uint8_t)vb->retry_cnt;
	a.rnr_retry = (uint8_t)vb->rnr_retry;
	mask |= IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	if (vb->timeout >= 0) {
		a.timeout = (uint8_t)vb->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	if ((errno = ibv_modify_qp(q->qp, &a, mask)))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "ibv_modify_qp(RTS): %s",
			       strerror(errno));
	if (rdma_establish(q->id))
		return vb_fail(vb, err, DMR_ERR_IO, iw, im, "rdma_establish: %s", strerror(errno));
	return DMR_OK;
}

static void vb_close(dmr_be_t *be)
{
	vb_t *vb = to_vb(be);
	uint64_t fl = atomic_load(&vb->flushed);
	if (fl)
		fprintf(stderr, "verbs: %llu flushed completion(s) after the first failure (not listed)\n",
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
	if (vb->shadow)
		munmap(vb->shadow, vb->shadow_len);
	free(vb->cbuf);
	if (vb->start_mu_init)
		pthread_mutex_destroy(&vb->start_mu);
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
	if (worker >= vb->nwalloc)
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

static dmr_status_t role_start(vb_t *vb);
static uint64_t tag_out(const vb_t *vb, uint32_t worker, uint64_t v);

static dmr_status_t vb_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			    uint32_t n, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	uint64_t remap_from = UINT64_MAX, remap_by = 0;
	if (vb->role && worker < vb->nworkers) {
		/* CN role: the start barrier before the first transaction's WR */
		if (!__atomic_load_n(&vb->started, __ATOMIC_ACQUIRE)) {
			pthread_mutex_lock(&vb->start_mu);
			if (!vb->started) {
				vb->start_st = role_start(vb);
				__atomic_store_n(&vb->started, 1, __ATOMIC_RELEASE);
			}
			pthread_mutex_unlock(&vb->start_mu);
		}
		if (vb->start_st != DMR_OK)
			return dmr_err_set(err, vb->start_st, "%s", vb->start_err.msg);
		if (vb->role->log_bytes) {
			remap_from = vb->role->log_base;
			remap_by = (uint64_t)vb->role->first_worker * vb->role->log_bytes;
		}
	}
	vb_worker_t *wk = &vb->w[worker];
	vb_qp_t *q = &wk->qps[mn];
	if (n > q->depth - q->outstanding)
		return vb_fail(vb, err, DMR_ERR_AGAIN, (int)worker, (int)mn,
			       "send queue full: %u WRs in flight of %u, batch of %u (poll first)",
			       q->outstanding, q->depth, n);
	uint32_t run = q->unsig_run, half = q->depth / 2, slot = q->head;
	for (uint32_t i = 0; i < n; i++, slot = slot + 1 == q->depth ? 0 : slot + 1) {
		const dmr_wr_t *d = &wrs[i];
		struct ibv_send_wr *s = &wk->wrs[i];
		struct ibv_sge *g = &wk->sges[i];
		int user_sig = (d->flags & DMR_WR_SIGNALED) != 0;
		int sig = user_sig;
		if (!sig && ++run >= half)
			sig = 1; /* reclaim send queue slots */
		if (sig)
			run = 0;
		/* no memset: every member the provider reads for these opcodes is
		 * set below (wr_id, next, sg_list, num_sge, opcode, send_flags,
		 * wr.rdma / wr.atomic); the rest stay zero from calloc */
		s->wr_id = (uint64_t)mn << 32 | slot;
		s->next = i + 1 < n ? &wk->wrs[i + 1] : NULL;
		s->sg_list = g;
		s->send_flags = sig ? IBV_SEND_SIGNALED : 0;
		uint64_t raddr = q->raddr + d->remote + (d->remote >= remap_from ? remap_by : 0);
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
			s->wr.atomic.compare_add = tag_out(vb, worker, d->compare_add);
			s->wr.atomic.swap = tag_out(vb, worker, d->swap);
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

/*
 * CN role: lock tags. The core's lock word is ((context id + 1) << 1 | 1),
 * unique within one process only; CNs of one cluster have the same local
 * context ids. Tags leave this CN with its index in bits 41..62 and come back
 * (CAS old values) without it; another CN's tag that would equal one of ours
 * comes back with bit 63 set (non-zero, never ours). Only odd values are tags
 * (unlock writes 0; the core's CAS only locks).
 */
#define TAG_SHIFT 41
static uint64_t tag_out(const vb_t *vb, uint32_t worker, uint64_t v)
{
	if (!vb->role || worker >= vb->nworkers || !(v & 1))
		return v;
	return v + ((uint64_t)vb->role->self << TAG_SHIFT);
}

static uint64_t tag_in(const vb_t *vb, uint64_t v)
{
	if (!(v & 1))
		return v;
	uint64_t cn = (v >> TAG_SHIFT) & ((1ull << (63 - TAG_SHIFT)) - 1);
	if (cn == vb->role->self)
		return v & ((1ull << TAG_SHIFT) - 1);
	if (cn == 0 && !(v >> 63))
		return v | (1ull << 63);
	return v;
}

static uint64_t vb_lock_word(dmr_be_t *be, uint32_t worker, uint64_t tag)
{
	return tag_out(to_vb(be), worker, tag);
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
		if (s->opcode == DMR_WR_CAS && vb->role && wk != &vb->w[vb->ctlw]) {
			uint64_t v;
			memcpy(&v, s->local, 8);
			v = tag_in(vb, v);
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

/* The first failed completion of the process is printed with operation, QP
 * number, peer and status; the flushed ones after it are counted (printed
 * at close). */
static void log_failure(vb_t *vb, uint32_t worker, uint32_t m, const vb_qp_t *q,
			const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_WR_FLUSH_ERR && atomic_flag_test_and_set(&vb->failed_logged)) {
		atomic_fetch_add(&vb->flushed, 1);
		return;
	}
	if (wc->status != IBV_WC_WR_FLUSH_ERR && atomic_flag_test_and_set(&vb->failed_logged))
		return;
	char pip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &vb->peer.sin_addr, pip, sizeof(pip));
	const vb_slot_t *s = &q->slots[q->tail];
	fprintf(stderr,
		"verbs: %s port %d: %s%s failed on QP %u (%s %u) -> MN %u (%s:%u): %s "
		"(ibv_wc_status %d, vendor_err 0x%x); later flushed completions are counted, "
		"not listed\n",
		vb->dev, vb->port, worker == vb->ctlw && vb->role ? "control " : "",
		dmr_wr_opcode_string(s->opcode), q->qp ? q->qp->qp_num : 0,
		worker == vb->ctlw && vb->role ? "control worker" : "worker", worker, m, pip,
		ntohs(vb->peer.sin_port), ibv_wc_status_str(wc->status), (int)wc->status,
		wc->vendor_err);
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
			if (status != DMR_WC_SUCCESS)
				log_failure(vb, worker, m, q, &iwc[k]);
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
		uint64_t now = vb_clock_ns(vb) * 1000ull;
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
	return vb_clock_ns(to_vb(be)) * 1000ull;
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

static dmr_status_t vb_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
			       dmr_err_t *err)
{
	(void)be;
	(void)err;
	/* loopback: every CN is this process. The CN role still runs its
	 * barriers inside the first post() and stats() (and sums the committed
	 * deltas there, into role->xv_total) until they move here. */
	if (!b->failed)
		*sum_p = b->value;
	return DMR_OK;
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
	if (vb->role && mn == 0) { /* the shadow: see verbs.h */
		if (len_p)
			*len_p = vb->shadow_len;
		return vb->shadow;
	}
	if (mn != 0 || !vb->mn.mem)
		return NULL;
	if (len_p)
		*len_p = vb->mn.size;
	return vb->mn.mem;
}

static void role_end(vb_t *vb);

static void vb_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	vb_t *vb = to_vb(be);
	if (vb->role && !vb->ended) { /* the replay's workers have stopped */
		vb->ended = 1;
		role_end(vb);
	}
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

dmr_status_t dmr_verbs_probe(const char *device, int port, int gid_index,
			     dmr_verbs_info_t *info_p, dmr_err_t *err)
{
	vb_t *vb = calloc(1, sizeof(*vb));
	if (!vb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "verbs: out of memory");
	vb->port = port > 0 ? port : 1;
	vb->gid_index = -1;
	dmr_status_t st = vb_find_device(vb, device, err);
	if (st == DMR_OK)
		st = vb_choose_gid(vb, gid_index, NULL, err);
	if (st == DMR_OK) {
		dmr_verbs_info_t in = {.port = vb->port, .gid_index = vb->gid_index};
		snprintf(in.device, sizeof(in.device), "%s", vb->dev);
		snprintf(in.ip, sizeof(in.ip), "%s", vb->ip);
		*info_p = in;
	}
	if (vb->ctx)
		ibv_close_device(vb->ctx);
	free(vb);
	return st;
}

/* ---- open: limits, connections, canary --------------------------------- */

static void clamp_limits(vb_t *vb)
{
	const struct ibv_device_attr *d = &vb->dattr;
	uint32_t mns = vb->be.cfg.mns;
	vb->sq_ask = vb->q_sq ? vb->q_sq : VB_ASK_SQ;
	vb->sq_depth = min32(vb->sq_ask, (uint32_t)d->max_qp_wr);
	vb->cq_depth = min32(mns * vb->sq_depth, (uint32_t)d->max_cqe);
	if (vb->cq_depth < mns * vb->sq_depth)
		vb->sq_depth = vb->cq_depth / mns;
	vb->rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_init_rd_atom, 255));
	vb->dest_rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_rd_atom, 255));
	vb->inline_ask = vb->q_inline >= 0 ? (uint32_t)vb->q_inline : VB_ASK_INLINE;
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
		vb->dev, vb->port, vb->gid_index, vb->ip, vb->sq_ask, vb->sq_depth,
		vb->sq_ask * vb->be.cfg.mns, vb->cq_depth, VB_ASK_RD_ATOMIC, vb->rd_atomic,
		VB_ASK_RD_ATOMIC, vb->dest_rd_atomic, vb->inline_ask, vb->inline_used,
		mtu_bytes(vb->path_mtu), mtu_bytes(vb->pattr.active_mtu), mtu_bytes(vb->peer_mtu));
}

/* One WR on `worker` / MN 0, waited for with a deadline. */
static dmr_status_t op_wait(vb_t *vb, uint32_t worker, uint8_t opcode, void *local, uint64_t remote,
			    uint32_t len, uint64_t cmp, uint64_t swp, uint64_t timeout_ns,
			    const char *what, dmr_err_t *err)
{
	dmr_wr_t wr = {.wr_id = 0xCA11A7,
		       .local = local,
		       .remote = remote,
		       .compare_add = cmp,
		       .swap = swp,
		       .length = len,
		       .opcode = opcode,
		       .flags = DMR_WR_SIGNALED};
	dmr_status_t st = vb_post(&vb->be, worker, 0, &wr, 1, err);
	if (st != DMR_OK)
		return st;
	uint64_t deadline = vb_now_ns(vb) + timeout_ns;
	dmr_wc_t wc;
	while (vb_poll(&vb->be, worker, &wc, 1) == 0)
		if (vb_now_ns(vb) > deadline)
			return vb_fail(vb, err, DMR_ERR_TIMEOUT, (int)worker, 0,
				       "%s %s: no completion within %.1f s", what,
				       dmr_wr_opcode_string(opcode), timeout_ns / 1e9);
	if (wc.status != DMR_WC_SUCCESS)
		return vb_fail(vb, err, DMR_ERR_REMOTE, (int)worker, 0, "%s %s failed: %s", what,
			       dmr_wr_opcode_string(opcode), dmr_wc_status_string(wc.status));
	return DMR_OK;
}

static dmr_status_t canary_op(vb_t *vb, uint32_t worker, uint8_t opcode, void *local,
			      uint64_t remote, uint64_t cmp, uint64_t swp, dmr_err_t *err)
{
	return op_wait(vb, worker, opcode, local, remote, 8, cmp, swp, VB_CANARY_TIMEOUT_NS,
		       "start-up canary", err);
}

/* Canary WRITE + READ back, CAS old value (detects the byte order of the
 * returned value) at `remote` via `worker`; leaves those 8 bytes zero. */
static dmr_status_t canary_check(vb_t *vb, uint32_t worker, uint64_t remote, dmr_err_t *err)
{
	static const uint64_t pat = 0x0123456789abcdefull;
	vb_worker_t *wk = &vb->w[worker];
	uint64_t *buf = aligned_alloc(64, 64);
	if (!buf)
		return vb_fail(vb, err, DMR_ERR_NOMEM, (int)worker, 0, "out of memory");
	dmr_status_t st = vb_mr_reg(&vb->be, worker, buf, 64, err);
	if (st != DMR_OK)
		goto out;
	buf[0] = pat;
	buf[1] = 0;
	if ((st = canary_op(vb, worker, DMR_WR_WRITE, &buf[0], remote, 0, 0, err)) != DMR_OK ||
	    (st = canary_op(vb, worker, DMR_WR_READ, &buf[1], remote, 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[1] != pat) {
		st = vb_fail(vb, err, DMR_ERR_VERIFY, (int)worker, 0,
			     "start-up canary: READ returned 0x%016llx after WRITE of 0x%016llx%s",
			     (unsigned long long)buf[1], (unsigned long long)pat,
			     buf[1] == 0 ? " (all zeros: DMA/IOMMU misconfigured?)" : "");
		goto out;
	}
	buf[2] = 0;
	if ((st = canary_op(vb, worker, DMR_WR_CAS, &buf[2], remote, pat, 0, err)) != DMR_OK)
		goto out;
	if (buf[2] == __builtin_bswap64(pat)) {
		vb->atomic_bswap = 1;
	} else if (buf[2] != pat) {
		st = vb_fail(vb, err, DMR_ERR_VERIFY, (int)worker, 0,
			     "start-up canary: CAS returned old value 0x%016llx, expected "
			     "0x%016llx",
			     (unsigned long long)buf[2], (unsigned long long)pat);
		goto out;
	}
	buf[3] = 1;
	if ((st = canary_op(vb, worker, DMR_WR_READ, &buf[3], remote, 0, 0, err)) != DMR_OK)
		goto out;
	if (buf[3] != 0)
		st = vb_fail(vb, err, DMR_ERR_VERIFY, (int)worker, 0,
			     "start-up canary: CAS (compare matched) left 0x%016llx, not 0",
			     (unsigned long long)buf[3]);
out:
	/* the canary is not part of the run: forget its counters and region */
	if (st == DMR_OK)
		wk->st = (dmr_be_stats_t){0};
	if (wk->nmr && wk->mrs[wk->nmr - 1].addr == (uintptr_t)buf) {
		ibv_dereg_mr(wk->mrs[wk->nmr - 1].mr);
		wk->nmr--;
	}
	free(buf);
	return st;
}

/* ---- CN role: start and end barriers through the control page ----------- */

static uint64_t secs_ns(double s)
{
	return s > 0 ? (uint64_t)(s * 1e9) : 0;
}

/* WRITE or READ [off, off+len) of the region between the shadow and the MN. */
static dmr_status_t role_copy(vb_t *vb, uint8_t opcode, uint64_t len, const char *what,
			      dmr_err_t *err)
{
	for (uint64_t off = 0; off < len; off += VB_CHUNK) {
		uint32_t n = (uint32_t)(len - off < VB_CHUNK ? len - off : VB_CHUNK);
		dmr_status_t st = op_wait(vb, vb->ctlw, opcode, vb->shadow + off, off, n, 0, 0,
					  30000000000ull, what, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

static dmr_status_t ctl_write(vb_t *vb, uint32_t off, uint64_t v, const char *what,
			      dmr_err_t *err)
{
	vb->cbuf[0] = v;
	return op_wait(vb, vb->ctlw, DMR_WR_WRITE, &vb->cbuf[0], vb->rctl + off, 8, 0, 0,
		       10000000000ull, what, err);
}

/* READ the control page into cbuf. */
static dmr_status_t ctl_read(vb_t *vb, const char *what, dmr_err_t *err)
{
	return op_wait(vb, vb->ctlw, DMR_WR_READ, vb->cbuf, vb->rctl, CTL_CANARY, 0, 0,
		       10000000000ull, what, err);
}

static uint64_t region_len(const vb_t *vb)
{
	uint64_t n = vb->shadow_len;
	if (vb->role->log_bytes && vb->role->log_base < n)
		n = vb->role->log_base; /* the tables; log rings are not state */
	return n;
}

/* Wait until every CN's word at `base` is non-zero (and, with `loaded`, the
 * region is loaded), or the deadline; names the CNs missing. */
static dmr_status_t ctl_wait_all(vb_t *vb, uint32_t base, int loaded, double secs,
				 const char *what, dmr_err_t *err)
{
	const dmr_verbs_cluster_t *cl = vb->role->cl;
	uint64_t deadline = vb_now_ns(vb) + secs_ns(secs);
	for (;;) {
		dmr_status_t st = ctl_read(vb, what, err);
		if (st != DMR_OK)
			return st;
		char miss[512] = "";
		size_t off = 0;
		uint32_t nmiss = 0;
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!vb->cbuf[(base + 8 * k) / 8]) {
				nmiss++;
				if (off < sizeof(miss))
					off += (size_t)snprintf(miss + off, sizeof(miss) - off,
								"%sCN %u (%s)", nmiss > 1 ? ", " : "",
								cl->cn[k].id,
								cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
			}
		for (uint32_t k = 0; base == CTL_ARRIVE && k < cl->ncn; k++) {
			uint64_t t = vb->cbuf[(base + 8 * k) / 8];
			if (t && t != vb->nworkers)
				return vb_fail(vb, err, DMR_ERR_INVALID, -1, 0,
					       "%s: CN %u (%s) runs %llu threads, CN %u (%s, this "
					       "one) %u: every CN must use the same --threads (the "
					       "trace is split by CNs x threads; refused)",
					       what, cl->cn[k].id, cl->cn[k].ip[0] ? cl->cn[k].ip : "?",
					       (unsigned long long)t, cl->cn[vb->role->self].id,
					       cl->cn[vb->role->self].ip[0] ? cl->cn[vb->role->self].ip
									     : "?",
					       vb->nworkers);
		}
		int need_load = loaded && !vb->cbuf[CTL_LOADED / 8];
		char failed[512] = "";
		size_t foff = 0;
		for (uint32_t k = 0; base == CTL_DONE && k < cl->ncn; k++)
			if (vb->cbuf[(base + 8 * k) / 8] == CTL_DONE_FAILED && foff < sizeof(failed))
				foff += (size_t)snprintf(failed + foff, sizeof(failed) - foff,
							 "%sCN %u (%s)", foff ? ", " : "",
							 cl->cn[k].id,
							 cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
		if (failed[0])
			return vb_fail(vb, err, DMR_ERR_REMOTE, -1, 0,
				       "%s: %s reported a failed run: the final state holds its "
				       "unfinished transactions and is not verified",
				       what, failed);
		if (!nmiss && !need_load)
			return DMR_OK;
		if (vb_now_ns(vb) >= deadline) {
			if (nmiss)
				return vb_fail(vb, err, DMR_ERR_TIMEOUT, -1, 0,
					       "%s: %u of %u CNs did not arrive within %.1f s: %s",
					       what, nmiss, cl->ncn, secs, miss);
			return vb_fail(vb, err, DMR_ERR_TIMEOUT, -1, 0,
				       "%s: every CN arrived but CN %u (index 0) did not load the "
				       "initial state within %.1f s",
				       what, cl->cn[0].id, secs);
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

/* Arrive; CN index 0 loads the region; wait for all (under start_mu). */
static dmr_status_t role_start(vb_t *vb)
{
	dmr_err_t *err = &vb->start_err;
	const dmr_verbs_role_t *r = vb->role;
	/* the arrival word is this CN's thread count: every CN checks them
	 * (the trace is split by CNs x threads) */
	dmr_status_t st = ctl_write(vb, CTL_ARRIVE + 8 * r->self, vb->nworkers,
				    "start barrier: arrival", err);
	if (st == DMR_OK && r->self == 0 && r->keep_region) {
		/* the region is the MN process's own: nothing to load */
		st = ctl_write(vb, CTL_LOADED, 1, "start barrier: loaded", err);
	} else if (st == DMR_OK && r->self == 0) {
		double t0 = vb_now_ns(vb) / 1e9;
		uint64_t n = region_len(vb);
		st = role_copy(vb, DMR_WR_WRITE, n, "loading the initial state", err);
		if (st == DMR_OK)
			st = ctl_write(vb, CTL_LOADED, 1, "start barrier: loaded", err);
		if (st == DMR_OK)
			fprintf(stderr, "cn %u: loaded the initial state (%llu bytes) into the MN in %.2f s\n",
				r->cl->cn[r->self].id, (unsigned long long)n, vb_now_ns(vb) / 1e9 - t0);
	}
	if (st == DMR_OK)
		st = ctl_wait_all(vb, CTL_ARRIVE, 1, r->barrier_s, "start barrier", err);
	if (st == DMR_OK)
		fprintf(stderr, "cn %u: start barrier passed: all %u CNs arrived\n",
			r->cl->cn[r->self].id, r->cl->ncn);
	return st;
}

/* After the run: done; wait for all; read the final state into the shadow. */
static void role_end(vb_t *vb)
{
	dmr_err_t *err = &g_role_err;
	const dmr_verbs_role_t *r = vb->role;
	dmr_status_t st = DMR_OK;
	if (!vb->started) { /* this CN posted nothing: it still takes part */
		vb->start_st = role_start(vb);
		vb->started = 1;
	}
	if (vb->start_st != DMR_OK)
		st = dmr_err_set(err, vb->start_st, "%s", vb->start_err.msg);
	if (st == DMR_OK && r->run_failed && *r->run_failed) {
		/* tell the others at once (they stop waiting and name this CN);
		 * this CN verifies nothing: the engine does not after a failure */
		dmr_err_t e2;
		dmr_status_t ws = ctl_write(vb, CTL_DONE + 8 * r->self, CTL_DONE_FAILED,
					    "end barrier: failed run", &e2);
		memset(vb->shadow, 0, vb->shadow_len);
		fprintf(stderr, "cn %u: the run failed: %s\n", r->cl->cn[r->self].id,
			ws == DMR_OK ? "told the other CNs through the control page"
				     : "could not tell the other CNs (the MN is unreachable)");
		return;
	}
	if (st == DMR_OK && r->xv_local)
		st = ctl_write(vb, CTL_XV + 8 * r->self, (uint64_t)*r->xv_local,
			       "end barrier: committed delta", err);
	if (st == DMR_OK)
		st = ctl_write(vb, CTL_DONE + 8 * r->self, 1, "end barrier: done", err);
	if (st == DMR_OK)
		st = ctl_wait_all(vb, CTL_DONE, 0, r->end_s, "end barrier", err);
	if (st == DMR_OK && r->xv_local && r->xv_total && r->xv_summed) {
		/* RC order: a CN's delta landed before its "done" word */
		uint32_t n = r->cl->ncn;
		st = op_wait(vb, vb->ctlw, DMR_WR_READ, vb->cbuf, vb->rctl + CTL_XV, 8 * n, 0, 0,
			     10000000000ull, "end barrier: committed deltas", err);
		if (st == DMR_OK) {
			uint64_t sum = 0; /* two's complement, as the verifier sums */
			for (uint32_t k = 0; k < n; k++)
				sum += vb->cbuf[k];
			*r->xv_total = (int64_t)sum;
			*r->xv_summed = n;
			fprintf(stderr, "cn %u: committed delta %lld here, %lld over all %u CNs\n",
				r->cl->cn[r->self].id, (long long)*r->xv_local, (long long)sum, n);
		}
	}
	if (st == DMR_OK && !r->keep_region)
		st = role_copy(vb, DMR_WR_READ, region_len(vb), "reading the final state", err);
	if (st != DMR_OK) {
		/* never verify a stale image */
		memset(vb->shadow, 0, vb->shadow_len);
		g_role_st = st;
		fprintf(stderr, "cn %u: error: %s (final state not read; not verified)\n",
			r->cl->cn[r->self].id, err->msg);
	}
}

/* CN role: connect one QP with retries while the MN is not (yet) listening. */
static dmr_status_t cn_connect_retry(vb_t *vb, uint32_t w, uint64_t deadline, dmr_err_t *err)
{
	uint64_t t0 = vb_now_ns(vb);
	for (;;) {
		dmr_status_t st = cn_connect(vb, w, 0, err);
		if (st == DMR_OK || !vb->role || st != DMR_ERR_REMOTE)
			return st;
		if (vb->role->stop && *vb->role->stop)
			return dmr_err_set(err, DMR_ERR_INTERRUPTED,
					   "verbs: interrupted by signal %d while connecting to the "
					   "MN at %s:%u",
					   (int)*vb->role->stop, vb->role->cl->mn[0].ip,
					   vb->role->cl->port);
		if (vb_now_ns(vb) >= deadline) {
			/* rdma_cm's REJECTED here is the MN's port not listening */
			char last[sizeof(err->msg)];
			snprintf(last, sizeof(last), "%s", err->msg);
			return dmr_err_set(err, DMR_ERR_REMOTE,
					   "verbs: no MN listening at %s:%u: every connection "
					   "attempt was refused for %.1f s, until the start barrier "
					   "deadline (--barrier-timeout %.0f s); is `dmreplay mn` "
					   "running with this config? (last attempt: %.200s)",
					   vb->role->cl->mn[0].ip, vb->role->cl->port,
					   (vb_now_ns(vb) - t0) / 1e9, vb->role->barrier_s, last);
		}
		vb_qp_t *q = &vb->w[w].qps[0];
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

static dmr_status_t vb_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	const dmr_verbs_role_t *role = g_role;
	if (role && (!role->cl || role->self >= role->cl->ncn || role->cl->nmn != 1))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: CN role: bad role (CN index %u of %u, %u MNs; one MN is "
				   "supported)",
				   role->self, role->cl ? role->cl->ncn : 0, role->cl ? role->cl->nmn : 0);
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
	vb->retry_cnt = 7;
	vb->rnr_retry = 7;
	vb->timeout = -1;
	vb->role = role;
	vb->q_sq = g_q_sq;
	vb->q_inline = g_q_inline;
	atomic_flag_clear(&vb->failed_logged);
	pthread_mutex_init(&vb->mn.lock, NULL);
	pthread_mutex_init(&vb->start_mu, NULL);
	vb->start_mu_init = 1;
	clock_gettime(CLOCK_MONOTONIC, &vb->t0);
	vb_clock_start(vb);
	dmr_status_t st = vb_find_device(vb, cfg->device, err);
	if (st != DMR_OK)
		goto fail;
	if ((st = vb_choose_gid(vb, cfg->gid_index, role ? role->cl->cn[role->self].ip : NULL,
				err)) != DMR_OK)
		goto fail;
	clamp_limits(vb);
	if (role) {
		const dmr_verbs_cluster_t *cl = role->cl;
		vb->retry_cnt = cl->retry_cnt;
		vb->rnr_retry = cl->rnr_retry;
		vb->timeout = cl->timeout;
		vb->peer.sin_family = AF_INET;
		vb->peer.sin_port = htons(cl->port);
		if (inet_pton(AF_INET, cl->mn[0].ip, &vb->peer.sin_addr) != 1) {
			st = dmr_err_set(err, DMR_ERR_INVALID, "verbs: MN ip '%s' is not IPv4",
					 cl->mn[0].ip);
			goto fail;
		}
		if ((st = memlock_check(vb, cfg->mr_size + DMR_VERBS_CTL_BYTES,
					"the CN's image of the MN region", -1, err)) != DMR_OK)
			goto fail;
		vb->shadow_len = cfg->mr_size;
		void *m = mmap(NULL, vb->shadow_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			st = vb_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "mmap of %zu bytes: %s",
				     vb->shadow_len, strerror(errno));
			goto fail;
		}
		vb->shadow = m;
		vb->cbuf = aligned_alloc(64, DMR_VERBS_CTL_BYTES);
		if (!vb->cbuf) {
			st = vb_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
			goto fail;
		}
		memset(vb->cbuf, 0, DMR_VERBS_CTL_BYTES);
	} else {
		if ((st = mn_start(vb, err)) != DMR_OK)
			goto fail;
		vb->peer = vb->addr;
		vb->peer.sin_port = htons(vb->mn.port);
	}
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
	vb->ctlw = vb->nworkers;
	vb->nwalloc = vb->nworkers + (role ? 1 : 0);
	vb->w = calloc(vb->nwalloc, sizeof(*vb->w));
	if (!vb->w) {
		st = vb_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < vb->nwalloc; i++)
		pthread_mutex_init(&vb->w[i].tmu, NULL);
	uint64_t cdeadline = vb_now_ns(vb) + secs_ns(role ? role->barrier_s : 0);
	for (uint32_t i = 0; i < vb->nwalloc; i++) {
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
			if ((st = role ? cn_connect_retry(vb, i, cdeadline, err)
				       : cn_connect(vb, i, m, err)) != DMR_OK)
				goto fail;
		}
	}
	if (role) {
		vb_qp_t *q = &vb->w[vb->ctlw].qps[0];
		vb->rctl = (q->rlen + 63) & ~63ull;
		if (q->rlen < role->need_bytes || q->rlen < cfg->mr_size) {
			uint64_t need = role->need_bytes > cfg->mr_size ? role->need_bytes : cfg->mr_size;
			st = vb_fail(vb, err, DMR_ERR_RANGE, -1, 0,
				     "the MN region has %llu bytes; this trace with %u workers in all "
				     "needs %llu (raise the MN's mr_size)",
				     (unsigned long long)q->rlen,
				     role->cl->ncn * cfg->workers, (unsigned long long)need);
			goto fail;
		}
		if ((st = vb_mr_reg(&vb->be, vb->ctlw, vb->shadow, vb->shadow_len, err)) != DMR_OK ||
		    (st = vb_mr_reg(&vb->be, vb->ctlw, vb->cbuf, DMR_VERBS_CTL_BYTES, err)) != DMR_OK)
			goto fail;
		/* canary in this CN's own slot of the control page (CNs run at once) */
		if ((st = canary_check(vb, vb->ctlw, vb->rctl + CTL_CANARY + 64 * role->self,
				       err)) != DMR_OK)
			goto fail;
		fprintf(stderr,
			"cn %u: connected %u worker QPs + 1 control QP to MN %u at %s:%u; canary "
			"WRITE/READ and CAS old value checked\n",
			role->cl->cn[role->self].id, vb->nworkers, role->cl->mn[0].id,
			role->cl->mn[0].ip, role->cl->port);
	} else if ((st = canary_check(vb, 0, 0, err)) != DMR_OK) {
		goto fail;
	}
	log_limits_once(vb);
	vb_clock_calibrate(vb);
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
    .lock_word = vb_lock_word,
};

/* ---- MN role: a process that serves its region -------------------------- */

static void names_of(const dmr_verbs_cluster_t *cl, const volatile uint64_t *ctl, uint32_t base,
		     char *buf, size_t len, uint32_t *n_p)
{
	size_t off = 0;
	uint32_t n = 0;
	buf[0] = 0;
	for (uint32_t k = 0; k < cl->ncn; k++)
		if (!__atomic_load_n(&ctl[(base + 8 * k) / 8], __ATOMIC_ACQUIRE)) {
			if (off < len)
				off += (size_t)snprintf(buf + off, len - off, "%sCN %u (%s)",
							n ? ", " : "", cl->cn[k].id,
							cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
			n++;
		}
	*n_p = n;
}

dmr_status_t dmr_verbs_mn_main(const dmr_verbs_role_t *role, dmr_err_t *err)
{
	if (!role || !role->cl || role->self >= role->cl->nmn || role->cl->ncn == 0 ||
	    role->cl->ncn > DMR_VERBS_MAX_NODES)
		return dmr_err_set(err, DMR_ERR_INVALID, "verbs: MN role: bad role");
	const dmr_verbs_cluster_t *cl = role->cl;
	const dmr_verbs_node_t *me = &cl->mn[role->self];
	if (me->mr_size < 64 || (me->mr_size & 7))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: MN %u: mr_size %llu must be a multiple of 8, at least 64",
				   me->id, (unsigned long long)me->mr_size);
	int region_cb = 0;
	vb_t *vb = calloc(1, sizeof(*vb));
	if (!vb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "verbs: out of memory");
	vb->be.ops = &dmr_verbs_ops;
	vb->be.cfg = (dmr_be_config_t){.backend = "verbs", .mns = 1, .cns = cl->ncn, .workers = 1,
				       .mr_size = me->mr_size, .device = me->devname,
				       .port = me->ibport, .gid_index = me->gid};
	vb->port = me->ibport > 0 ? me->ibport : 1;
	vb->gid_index = -1;
	vb->mn.stop_fd = -1;
	vb->retry_cnt = cl->retry_cnt;
	vb->rnr_retry = cl->rnr_retry;
	vb->timeout = cl->timeout;
	atomic_flag_clear(&vb->failed_logged);
	pthread_mutex_init(&vb->mn.lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &vb->t0);
	dmr_status_t st = vb_find_device(vb, me->devname, err);
	if (st == DMR_OK)
		st = vb_choose_gid(vb, me->gid, me->ip, err);
	if (st != DMR_OK)
		goto out;
	clamp_limits(vb);
	vb->mn.port = cl->port;
	vb->mn.verbose = 1;
	vb->peer = vb->addr;
	vb->peer.sin_port = htons(cl->port);
	if ((st = mn_start(vb, err)) != DMR_OK)
		goto out;
	fprintf(stderr,
		"mn %u: listening on %s:%u (rdma_cm; %s port %d, GID %d, active MTU %u, link "
		"width/speed %u/%u); region %llu bytes + %u control bytes registered (max_mr_size "
		"%llu); waiting for %u CNs (start barrier %.0f s)\n",
		me->id, vb->ip, vb->mn.port, vb->dev, vb->port, vb->gid_index,
		mtu_bytes(vb->pattr.active_mtu), vb->pattr.active_width, vb->pattr.active_speed,
		(unsigned long long)me->mr_size, DMR_VERBS_CTL_BYTES,
		(unsigned long long)vb->dattr.max_mr_size, cl->ncn, role->barrier_s);
	if (role->mn_region) {
		region_cb = 1;
		if ((st = role->mn_region(role->mn_arg, vb->mn.mem, me->mr_size, err)) != DMR_OK)
			goto out;
	}
	const volatile uint64_t *ctl = (const uint64_t *)(void *)((uint8_t *)vb->mn.mem + vb->mn.ctl);
	uint64_t bdeadline = vb_now_ns(vb) + secs_ns(role->barrier_s + 5);
	uint8_t seen[DMR_VERBS_MAX_NODES] = {0}, failed[DMR_VERBS_MAX_NODES] = {0};
	uint32_t nfailed = 0;
	uint32_t narrived = 0;
	int all_arrived = 0, loaded = 0, all_done = 0, mn_err_shown = 0;
	uint64_t done_at = 0;
	for (;;) {
		if (role->stop && *role->stop) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED, "mn %u: interrupted by a signal",
					 me->id);
			break;
		}
		pthread_mutex_lock(&vb->mn.lock);
		uint32_t nconn = vb->mn.nconn, ndisc = vb->mn.ndisc;
		if (vb->mn.st != DMR_OK && !mn_err_shown) {
			mn_err_shown = 1;
			fprintf(stderr, "mn %u: warning: %s\n", me->id, vb->mn.err.msg);
		}
		pthread_mutex_unlock(&vb->mn.lock);
		uint64_t now = vb_now_ns(vb);
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!seen[k] && __atomic_load_n(&ctl[(CTL_ARRIVE + 8 * k) / 8], __ATOMIC_ACQUIRE)) {
				seen[k] = 1;
				narrived++;
				fprintf(stderr, "mn %u: CN %u arrived (%u/%u), %llu threads\n", me->id,
					cl->cn[k].id, narrived, cl->ncn,
					(unsigned long long)ctl[(CTL_ARRIVE + 8 * k) / 8]);
			}
		if (!loaded && ctl[CTL_LOADED / 8]) {
			loaded = 1;
			fprintf(stderr, "mn %u: CN %u loaded the initial state\n", me->id, cl->cn[0].id);
		}
		char miss[512];
		uint32_t nmiss;
		if (!all_arrived) {
			if (narrived == cl->ncn) {
				all_arrived = 1;
				fprintf(stderr, "mn %u: start barrier: all %u CNs arrived\n", me->id,
					cl->ncn);
			} else if (now >= bdeadline) {
				names_of(cl, ctl, CTL_ARRIVE, miss, sizeof(miss), &nmiss);
				st = dmr_err_set(err, DMR_ERR_TIMEOUT,
						 "mn %u: start barrier: %u of %u CNs did not arrive "
						 "within %.0f s: %s",
						 me->id, nmiss, cl->ncn, role->barrier_s + 5, miss);
				break;
			}
		}
		names_of(cl, ctl, CTL_DONE, miss, sizeof(miss), &nmiss);
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!failed[k] && __atomic_load_n(&ctl[(CTL_DONE + 8 * k) / 8],
							  __ATOMIC_ACQUIRE) == CTL_DONE_FAILED) {
				failed[k] = 1;
				nfailed++;
				fprintf(stderr, "mn %u: CN %u reported a failed run\n", me->id,
					cl->cn[k].id);
			}
		if (!all_done && nmiss == 0) {
			all_done = 1;
			done_at = now;
			fprintf(stderr, "mn %u: every CN is done; waiting for them to read the final "
					"state and disconnect\n",
				me->id);
		}
		if (all_done && ndisc >= nconn) {
			fprintf(stderr, "mn %u: all %u connections closed; exiting\n", me->id, nconn);
			st = nfailed ? dmr_err_set(err, DMR_ERR_REMOTE,
						   "mn %u: %u of %u CNs reported a failed run", me->id,
						   nfailed, cl->ncn)
				     : DMR_OK;
			break;
		}
		if (all_done && now - done_at > secs_ns(role->end_s)) {
			fprintf(stderr, "mn %u: warning: %u of %u connections still open %.0f s after "
					"the end; exiting\n",
				me->id, nconn - ndisc, nconn, role->end_s);
			st = DMR_OK;
			break;
		}
		if (all_arrived && !all_done && nconn > 0 && ndisc >= nconn) {
			st = dmr_err_set(err, DMR_ERR_REMOTE,
					 "mn %u: every CN connection closed before the run ended; not "
					 "done: %s",
					 me->id, miss);
			break;
		}
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
out:
	if (region_cb && role->mn_region_end)
		role->mn_region_end(role->mn_arg);
	vb_close(&vb->be);
	return st;
}
