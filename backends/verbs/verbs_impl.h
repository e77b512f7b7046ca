/*
 * backends/verbs/verbs_impl.h - private to backends/verbs/ (README.md there
 * has the map of files): the backend's objects (vb_t; per worker a CQ, one
 * RC QP per MN with its ring of send-queue slots, a timer heap and its
 * registered regions; the loopback MN), the connection private data and the
 * control page layout, the small helpers every file uses (static inline,
 * including the per-WR lkey lookup), and the
 * functions the files share (dmr_verbs_*, not part of verbs.h's API).
 *
 * Threading is verbs.h's: a worker (its vb_worker_t and QPs) belongs to the
 * one thread that drives it; timers are under the worker's tmu; the MN
 * thread's state under vb_mn_t.lock.
 */
#ifndef DMR_VERBS_IMPL_H
#define DMR_VERBS_IMPL_H

#include "verbs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define VB_MAGIC 0x444d5256u /* "DMRV" */
#define VB_VERSION 2u
/* control page (roles), offsets from its start */
#define CTL_LOADED 0u
#define CTL_ARRIVE 64u /* + 8 * cn index */
#define CTL_DONE 640u  /* + 8 * cn index: 1 done, CTL_DONE_FAILED its run failed */
#define CTL_DONE_FAILED 2u
#define CTL_CANARY 1216u /* + 64 * cn index */
#define CTL_XV 5312u	 /* + 8 * cn index: committed delta (int64) */

enum {
	SLOT_USER_SIG = 1, /* the caller asked for a completion */
	SLOT_VOID = 2,	   /* part of a post that returned an error: never reported */
};

/* A send-queue slot. An RPC's request SEND (opcode DMR_WR_RPC) keeps its
 * RPC slot's index in length and that slot's use count in rseq. */
typedef struct vb_slot {
	uint64_t wr_id;
	void *local;
	uint32_t length;
	uint8_t opcode;
	uint8_t flags;
	uint16_t rseq;
} vb_slot_t;

/* RPCs (verbs_rpc.c, docs/AURA.md "A1 alone"): in flight per (worker, MN)
 * (one per transaction context is what the core sends: --coros up to
 * this), and the most bytes a request or an answer carries on the wire
 * (the modelled req_bytes / response bytes, capped here). */
#define VB_RPC_SLOTS 32u
#define VB_RPC_MSG 4096u
/* bit 63 of an ibv wr_id: a receive (an RPC's answer), MN << 32 | slot below */
#define VB_RPC_RECV (1ull << 63)

/* One RPC in flight, the side table the MN's service thread reads: the CN
 * fills it and release-stores tag (its use count, never 0) before the
 * SEND; the MN thread acquire-loads tag, runs handler(arg), stores resp and
 * release-stores done = tag before its answer. busy and the rest: the
 * worker's thread only. */
typedef struct vb_rpc_ent {
	uint64_t wr_id;
	dmr_be_rpc_fn handler;
	void *arg;
	uint32_t resp_cap;
	uint32_t resp; /* the handler's return value (MN thread) */
	_Atomic uint32_t tag, done;
	uint32_t seq;
	uint8_t busy; /* 0 free, 1 in flight, 2 failed (reported by the next poll) */
} vb_rpc_ent_t;

typedef struct vb_qp {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	vb_slot_t *slots;
	uint32_t depth, head, tail, outstanding, unsig_run;
	uint64_t raddr, rlen;
	uint32_t rkey;
	/* the lock-word region's own MR (verbs_dm.c; lk_len 0: none): a WR
	 * whose remote offset is in [lk_off, lk_off + lk_len) goes to lk_raddr
	 * + (offset - lk_off) with lk_rkey */
	uint32_t lk_rkey;
	uint64_t lk_off, lk_len, lk_raddr;
	/* RPCs to this MN (verbs_rpc.c): the side table, [VB_RPC_SLOTS] */
	vb_rpc_ent_t *rpc;
	uint32_t rpc_inflight, rpc_next, rpc_failed;
	int rpc_armed; /* the answers' receives are posted */
} vb_qp_t;

typedef struct dmr_verbs_timer {
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
	dmr_be_mn_stats_t *mst; /* [mns]: what each MN executed for this worker */
	void *rpcbuf;		/* RPCs: VB_RPC_MSG bytes the SENDs and receives use */
	struct ibv_mr *rpcmr;	/* (their content is not read: verbs_rpc.c) */
} vb_worker_t;

typedef struct vb_conn {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
} vb_conn_t;

/* A memory node served by this process (loopback: cfg.mns of them, each
 * with its own listener, region and thread; MN role: one). Its thread owns
 * ch and conns until close() has joined it. */
typedef struct vb_mn {
	struct vb *vb; /* back pointer, for the thread */
	uint32_t idx;  /* MN index in the cluster */
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
	uint64_t ctl;	      /* offset of the control page in mem (MN role) */
	uint64_t regsz;	      /* bytes mapped and registered */
	struct ibv_mr *lk_mr; /* the lock-word region's MR (verbs_dm.c), NULL: none */
	struct ibv_dm *lk_dm; /* its device memory (--dm-locks), NULL: host */
	void *lk_host;	      /* its host buffer (--locks-apart), NULL: device */
	uint64_t lk_done;     /* WRs completed when the words were last copied back */
	int lk_synced;	      /* copied back at least once */
	int verbose;	      /* MN role: log connections */
	/* RPCs (loopback; verbs_rpc.c): the service thread, started with the
	 * first QP; its receive CQ (with rpc_ch) and send CQ; the QP of each
	 * worker (by worker index); what the SENDs carry; counters */
	struct ibv_comp_channel *rpc_ch;
	struct ibv_cq *rpc_rcq, *rpc_scq;
	struct ibv_qp **rpc_qp; /* [rpc_nw], under lock until the thread is stopped */
	uint32_t *rpc_sq;	/* [rpc_nw]: answers in flight per worker QP (thread) */
	uint32_t rpc_nw;
	void *rpc_buf;
	struct ibv_mr *rpc_mr;
	pthread_t rpc_thread;
	int rpc_running;
	_Atomic uint64_t rpc_served, rpc_busy_ns;
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
	struct ibv_context *ctx; /* ours (see dmr_verbs_find_device) */
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct rdma_event_channel *ch;
	struct ibv_pd *pd;
	uint32_t nworkers;
	vb_worker_t *w;
	vb_mn_t mn[DMR_BE_MAX_MNS]; /* loopback: [0, cfg.mns); MN role: [0] */
	uint32_t nmn_srv;	    /* MNs this process serves (mn[] started) */
	uint64_t lk_off, lk_len;    /* the lock-word region (verbs_dm.c; 0: none) */
	int rpc_mode;		    /* DMR_BE_CTL_RPC_MODE given (verbs_rpc.c) */
	/* limits: asked and used */
	uint32_t sq_ask, sq_depth, cq_depth, rd_atomic, dest_rd_atomic, inline_ask, inline_used;
	uint32_t q_sq; /* dmr_verbs_set_queue at open (0: VB_ASK_SQ) */
	int q_inline;  /* (-1: VB_ASK_INLINE) */
	enum ibv_mtu path_mtu, peer_mtu;
	int atomic_bswap;
	struct timespec t0;
	/* data-path clock (dmr_verbs_clock_calibrate): TSC ticks converted with
	 * a rate measured against CLOCK_MONOTONIC over open(); 0 = CLOCK_MONOTONIC */
	int clk_tsc;
	uint64_t clk_tsc0, clk_tsc1, clk_ns1;
	double clk_ns_per_tick;
	/* each MN's address (loopback: our own address, its thread's port) */
	struct sockaddr_in peer[DMR_BE_MAX_MNS];
	int retry_cnt, rnr_retry, timeout; /* timeout < 0: the route's */
	uint32_t nwalloc;		   /* workers allocated: nworkers (+1 control in CN mode) */
	_Atomic uint64_t flushed;	   /* flushed completions after the first failure */
	atomic_flag failed_logged;
	/* CN role */
	const dmr_verbs_role_t *role;
	uint32_t ctlw;			 /* the control worker (= nworkers) */
	uint64_t rctl[DMR_BE_MAX_MNS];	 /* control page offset in each MN's region */
	uint8_t *shadow[DMR_BE_MAX_MNS]; /* local image of each MN's region */
	size_t shadow_len;		 /* bytes of each image (cfg.mr_size) */
	uint64_t *cbuf;			 /* control scratch, DMR_VERBS_CTL_BYTES */
	int started, ended;		 /* barrier START / END called */
	dmr_status_t bar_st;		 /* the first barrier error (none passes after it) */
	uint64_t bar_t0;		 /* vb_now_ns when the current barrier was called */
	/* CN role, between START and END: the MN watch (verbs_role.c) READs a
	 * word of every MN over the control worker every VB_WATCH_NS; the
	 * first that fails sets dead_mn (index + 1, release) after dead_msg,
	 * and every later post() is refused with that message */
	pthread_t watch;
	int watching;
	_Atomic int watch_stop;
	_Atomic uint32_t dead_mn;
	char dead_msg[sizeof(((dmr_err_t *)0)->msg)];
} vb_t;

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

static inline uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static inline enum ibv_mtu mtu_min(enum ibv_mtu a, enum ibv_mtu b)
{
	return a < b ? a : b;
}

static inline uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline uint64_t vb_now_ns(const vb_t *vb)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)(ts.tv_sec - vb->t0.tv_sec) * 1000000000ull + (uint64_t)ts.tv_nsec -
	       (uint64_t)vb->t0.tv_nsec;
}

static inline uint64_t secs_ns(double s)
{
	return s > 0 ? (uint64_t)(s * 1e9) : 0;
}

/* Did rdma_cm bind an id to our device? */
static inline int same_device(const vb_t *vb, const struct ibv_context *c)
{
	return c && strcmp(ibv_get_device_name(c->device), vb->dev) == 0;
}

static inline int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* lkey of the newest region holding [p, p+len), 0 and *found_p = 0 if none. */
static inline uint32_t lkey_of(const vb_worker_t *wk, const void *p, uint32_t len, int *found_p)
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

/* ---- shared between the files (each group: the file that defines it) ---
 *
 * Every function that takes an err names the device, port and, where they
 * apply, MN and worker in it (dmr_verbs_fail) and returns the status; err
 * may be NULL. Workers are indices into vb->w (0..nwalloc-1), MNs into a
 * worker's qps (0..cfg.mns-1).
 */

/* verbs.c: open, close, errors */

/* Set *err to "verbs: DEV port P[, MN mn (ip:port)][, worker w]: " + the
 * message (worker or mn < 0: left out; the MN's address is vb->peer[mn]) and
 * return st; err NULL: just return st. */
dmr_status_t dmr_verbs_fail(const vb_t *vb, dmr_err_t *err, dmr_status_t st, int worker, int mn,
			    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The table's close(): prints the count of flushed completions (if any),
 * destroys the workers' QPs, CQs and regions, stops the MN (dmr_verbs_mn_stop)
 * and frees the shadow, the PD, the channel, the context and vb. Also
 * undoes a half-done open() or MN role: any member may still be unset. */
void dmr_verbs_close(dmr_be_t *be);

/* verbs_device.c: device, port, GID, limits */

/* Open device `want` (a name, or an index into ibv_get_device_list; NULL
 * or "" = 0) as vb->ctx (vb->dev its name) and query it (vb->dattr) and
 * port vb->port (vb->pattr). DMR_ERR_NODEV: no device, no such name, port
 * not ACTIVE; DMR_ERR_RANGE: no such port; DMR_ERR_UNSUPPORTED: not
 * Ethernet (RoCE), no atomics. vb->ctx is vb's (closed by close). */
dmr_status_t dmr_verbs_find_device(vb_t *vb, const char *want, dmr_err_t *err);
/* Choose GID `want` (-1: the first RoCEv2 GID of vb->port whose IPv4
 * address is one of this node's; want_ip non-NULL and non-empty: the one
 * carrying that dotted IPv4 address) into vb->gid, gid_index, addr and ip.
 * DMR_ERR_NODEV lists each refused GID with its reason; DMR_ERR_INVALID:
 * want_ip is not IPv4; DMR_ERR_IO, DMR_ERR_NOMEM. */
dmr_status_t dmr_verbs_choose_gid(vb_t *vb, int want, const char *want_ip, dmr_err_t *err);
/* The asked queue limits (vb->q_sq, q_inline or the defaults) clamped to
 * vb->dattr: sq_ask, sq_depth, cq_depth, rd_atomic, dest_rd_atomic,
 * inline_ask. */
void dmr_verbs_clamp_limits(vb_t *vb);
/* Print asked vs used limits and path MTU to stderr, once per process. */
void dmr_verbs_log_limits_once(const vb_t *vb);

/* verbs_cm.c: rdma_cm, CN connections, QP attributes */

/* The route's attributes (rdma_init_qp_attr) for a transition of id's QP
 * to `state` into *attr and *mask_p: 0, or -1 with errno set. */
int dmr_verbs_qp_attr_for(struct rdma_cm_id *id, struct ibv_qp_attr *attr, enum ibv_qp_state state,
			  int *mask_p);
/* Connect the QP of (worker w, MN m) to vb->peer through rdma_cm and bring
 * it to RTS; fills its id, qp, raddr, rlen and rkey, and vb->inline_used,
 * peer_mtu and path_mtu. An unexpected rdma_cm event: DMR_ERR_REMOTE when
 * rejected or unreachable, else DMR_ERR_IO (the loopback MN thread's error
 * appended); DMR_ERR_TIMEOUT: no event within 20 s; DMR_ERR_PARSE: not a
 * dmreplay MN; DMR_ERR_NODEV: rdma_cm chose another device or GID;
 * DMR_ERR_IO: a failed call. On error the id and QP made
 * so far stay in the worker's vb_qp_t for close to destroy. */
dmr_status_t dmr_verbs_cn_connect(vb_t *vb, uint32_t w, uint32_t m, dmr_err_t *err);
/* dmr_verbs_cn_connect(vb, w, m); in the CN role retried every 250 ms while
 * MN m refuses (DMR_ERR_REMOTE), until `deadline` (vb_now_ns: then
 * DMR_ERR_REMOTE naming the MN's index and address) or SIGINT/SIGTERM
 * (core/base/sig.h's dmr_sig_caught: DMR_ERR_INTERRUPTED). */
dmr_status_t dmr_verbs_cn_connect_retry(vb_t *vb, uint32_t w, uint32_t m, uint64_t deadline,
					dmr_err_t *err);

/* verbs_mn.c: the MN's listener, region and thread */

/* Map and register MN m's region (cfg.mr_size bytes, plus the control page
 * when vb->mn[m].verbose, the MN role), listen on vb->addr port
 * vb->mn[m].port (0: any; the port chosen is written back) and start its
 * thread. DMR_ERR_RANGE: larger than max_mr_size or the memlock limit;
 * DMR_ERR_NOMEM, DMR_ERR_NODEV, DMR_ERR_IO. What was made stays in
 * vb->mn[m] for dmr_verbs_mn_stop. */
dmr_status_t dmr_verbs_mn_start(vb_t *vb, uint32_t m, dmr_err_t *err);
/* Stop and join every MN thread this process started, destroy their
 * connections, listeners, regions, CQs, PDs and channels (after any stage
 * of mn_start); the locks are destroyed by close. */
void dmr_verbs_mn_stop(vb_t *vb);

/* verbs_rpc.c: RPCs to the MN's CPU (docs/AURA.md "A1 alone") */

/* The table's rpc() (backend.h dmr_be_rpc): the request as a SEND with
 * immediate (worker << 8 | RPC slot) on the worker's QP to MN mn, the
 * handler and arg in the QP's side table. Loopback only (the CN role:
 * DMR_ERR_UNSUPPORTED). DMR_ERR_AGAIN: VB_RPC_SLOTS in flight to that MN
 * or the send queue full; DMR_ERR_NOMEM / DMR_ERR_IO: the worker's buffer
 * or the receives for the answers could not be set up. */
dmr_status_t dmr_verbs_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			   dmr_err_t *err);
/* poll(): a receive completion (wr_id with VB_RPC_RECV) on worker's CQ:
 * the answer's completion into *out (1), or 0 when none is reported (a
 * flushed receive marks every RPC in flight on that QP failed: they come
 * out of dmr_verbs_rpc_failed). */
int dmr_verbs_rpc_answer(vb_t *vb, uint32_t worker, const struct ibv_wc *wc, dmr_wc_t *out);
/* poll(): the request SEND in slot s failed; 1 if its RPC is to be
 * reported (and its slot is freed), 0 if it was reported already. */
int dmr_verbs_rpc_send_failed(vb_qp_t *q, const vb_slot_t *s);
/* poll(): the failed RPCs of worker's QPs not yet reported, up to max into
 * wcs; returns how many. */
int dmr_verbs_rpc_failed(vb_t *vb, uint32_t worker, dmr_wc_t *wcs, int max);
/* MN side (loopback), at mn_start: the completion channel, CQs and buffer
 * (DMR_ERR_IO, DMR_ERR_NOMEM; what was made stays for rpc_mn_free). */
dmr_status_t dmr_verbs_rpc_mn_init(vb_t *vb, uint32_t m, dmr_err_t *err);
/* MN thread, a CN QP accepted (RTS, before rdma_accept): VB_RPC_SLOTS
 * receives posted on it and the service thread started if it is not.
 * Returns the failing call's name (errno set), or NULL. */
const char *dmr_verbs_rpc_mn_qp(vb_mn_t *mn, uint32_t worker, struct ibv_qp *qp);
/* Stop and join every MN's service thread (close: before the workers go). */
void dmr_verbs_rpc_stop(vb_t *vb);
/* Free MN mn's RPC resources (after its QPs are destroyed). */
void dmr_verbs_rpc_mn_free(vb_mn_t *mn);
/* DMR_BE_CTL_RPC_MODE (backend.h). */
dmr_status_t dmr_verbs_rpc_mode(vb_t *vb, const dmr_be_rpc_mode_t *md, dmr_err_t *err);

/* verbs_mr.c: memory registration */

/* The table's mr_reg(): register [addr, addr+len) for local access on
 * `worker` (len 0: nothing); regions inside it are deregistered.
 * DMR_ERR_RANGE: no such worker; DMR_ERR_NOMEM. Deregistered at close. */
dmr_status_t dmr_verbs_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			      dmr_err_t *err);
/* The table's mr_dereg(): ibv_dereg_mr of the region mr_reg registered at
 * addr for `worker`, removed from its lkey table. DMR_ERR_RANGE: no such
 * worker; DMR_ERR_INVALID: addr is not the start of one of its regions
 * (never registered, already deregistered, or dropped by a larger mr_reg
 * around it); DMR_ERR_IO: ibv_dereg_mr failed (the region stays). */
dmr_status_t dmr_verbs_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err);
/* DMR_OK when `bytes` can be locked (RLIMIT_MEMLOCK or CAP_IPC_LOCK), else
 * DMR_ERR_RANGE saying how to raise the limit; `what` names the region and
 * mn (-1: none) the peer in the message. */
dmr_status_t dmr_verbs_memlock_check(const vb_t *vb, uint64_t bytes, const char *what, int mn,
				     dmr_err_t *err);

/* verbs_dm.c: the lock-word region in memory of its own */

/* DMR_BE_CTL_LOCK_REGION (backend.h): per MN of this process a second MR
 * over [r->off, r->off + r->len) -- device memory (r->dm: ibv_alloc_dm,
 * ibv_memcpy_to_dm of the words, ibv_reg_dm_mr zero-based) or host memory
 * (ibv_reg_mr of a buffer of its own, initialised from that range) -- and
 * every worker's QP to
 * it pointed there. Call after open, before the first post. Errors:
 * DMR_ERR_INVALID (a range outside the region, placed twice,
 * dmr_verbs_dm_check's refusals, the CN role: not done yet), DMR_ERR_IO (a failed call, named).
 * What was made is freed by dmr_verbs_lock_region_free (dmr_verbs_mn_stop). */
dmr_status_t dmr_verbs_lock_region(vb_t *vb, const dmr_be_lock_region_t *r, dmr_err_t *err);
/* DMR_BE_CTL_DM_LOCKS (the sim's way, the words in their records): always
 * DMR_ERR_INVALID, naming the device and its max_dm_size. */
dmr_status_t dmr_verbs_dm_refuse(vb_t *vb, dmr_err_t *err);
/* Copy MN m's lock words back from their own MR (device or host memory)
 * into its region's range (none placed: nothing), when WRs completed
 * since the last copy (the workers' retired counts changed). Workers
 * quiet. */
void dmr_verbs_lock_sync(vb_t *vb, uint32_t m);
/* Deregister and free MN mn's lock-word MR and device memory (any stage). */
void dmr_verbs_lock_region_free(vb_mn_t *mn);

/* verbs_post.c: the post path */

/* The table's post() (contract in backend.h and verbs.h). */
dmr_status_t dmr_verbs_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			    uint32_t n, dmr_err_t *err);
/* Post one signaled WR (`len` bytes; cmp/swp for atomics) on `worker` to
 * MN `mn` and poll that worker until it completes or timeout_ns pass. Errors:
 * the post's, DMR_ERR_TIMEOUT, DMR_ERR_REMOTE (failed completion); `what`
 * begins the message. For a worker with nothing else in flight (the first
 * completion polled is taken as this WR's). */
dmr_status_t dmr_verbs_op_wait(vb_t *vb, uint32_t worker, uint32_t mn, uint8_t opcode, void *local,
			       uint64_t remote, uint32_t len, uint64_t cmp, uint64_t swp,
			       uint64_t timeout_ns, const char *what, dmr_err_t *err);

/* verbs_cq.c: completions, timers, the data-path clock */

/* The table's poll(), now() (ps since open) and timer(). */
int dmr_verbs_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max);
uint64_t dmr_verbs_now(dmr_be_t *be, uint32_t worker);
dmr_status_t dmr_verbs_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id);
/* At the start of open(): the TSC reading the clock's rate is measured from. */
void dmr_verbs_clock_start(vb_t *vb);
/* At the end of open(): measure the TSC rate (or keep CLOCK_MONOTONIC, see
 * verbs_cq.c); now() uses it from then on. */
void dmr_verbs_clock_calibrate(vb_t *vb);

/* verbs_role.c: roles as processes */

/* The role set by dmr_verbs_set_role, which the next open() takes (NULL:
 * loopback); not owned. */
const dmr_verbs_role_t *dmr_verbs_role_next(void);
/* CN role: start the MN watch (after START) / stop and join it (before
 * END and at close; idempotent). Start: DMR_ERR_IO if the thread cannot be
 * created. */
dmr_status_t dmr_verbs_watch_start(vb_t *vb, dmr_err_t *err);
void dmr_verbs_watch_stop(vb_t *vb);
/* CN role, barrier START (once): arrive, CN index 0 loads the region (unless
 * keep_region), wait until every CN arrived and the region is loaded, by
 * deadline_ns (vb_now_ns time). Errors: backend.h's barrier errors, err
 * naming the CNs missing or failed. */
dmr_status_t dmr_verbs_role_start(vb_t *vb, uint64_t deadline_ns, dmr_err_t *err);
/* CN role, barrier END (once, after START): b->failed: write "failed" into
 * this CN's done word (the others' barriers fail naming it), zero the shadow
 * and return (DMR_OK, or the WRITE's error). Else write b->value into this
 * CN's CTL_XV slot, then "done"; wait until every CN is done by deadline_ns;
 * *sum_p = the sum of the CNs' slots (two's complement); READ the final
 * region into the shadow (not with keep_region). Any error zeroes the shadow
 * (never verified stale) and is returned. */
dmr_status_t dmr_verbs_role_end(vb_t *vb, const dmr_be_barrier_t *b, uint64_t deadline_ns,
				int64_t *sum_p, dmr_err_t *err);

#endif /* DMR_VERBS_IMPL_H */
