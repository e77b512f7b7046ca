/*
 * backends/ucx/ucx_impl.h - private to the ucx backend (backends/ucx/ucx.h
 * says what it does): the handle, its endpoints and their WR rings.
 */
#ifndef DMR_UCX_IMPL_H
#define DMR_UCX_IMPL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>

#include "../backend.h"

/* WRs one endpoint holds between post and poll: a post that does not fit is
 * refused with DMR_ERR_AGAIN, nothing posted (as verbs at its send queue
 * depth). 8192 = twice the largest batch dmr_be_post accepts (4096). */
#define DMR_UCX_DEPTH 8192u

/* The unit in which the remote mode's barrier moves a region and tracks
 * what changed: 1 MiB. */
#define DMR_UCX_CHUNK (1u << 20)

/* A WR's place in its endpoint's ring. */
typedef enum ucx_slot_state {
	UCX_SLOT_QUEUED = 0, /* posted, not yet handed to UCP */
	UCX_SLOT_ISSUED = 1, /* handed to UCP, its completion not yet seen */
	UCX_SLOT_DONE = 2,   /* status known; delivered (or dropped) in order */
} ucx_slot_state_t;

typedef struct ucx_slot {
	dmr_wr_t wr;
	uint64_t operand; /* atomic operand: CAS compare value, FAA addend */
	uint64_t reply;	  /* atomic reply buffer: CAS swap value in, old value out */
	uint8_t state;	  /* ucx_slot_state_t */
	uint8_t status;	  /* dmr_wc_status_t, when DONE */
	struct ucx_ep *ep;
} ucx_slot_t;

/* One (worker, MN) endpoint: a UCP endpoint, the MN's unpacked rkey and the
 * ring of WRs in posting order. head: oldest undelivered; issue: next to
 * hand to UCP; tail: next free (all indices modulo DMR_UCX_DEPTH, counts
 * kept as uint64_t sequence numbers). */
typedef struct ucx_ep {
	ucp_ep_h ep;
	ucp_rkey_h rkey;
	uint64_t base; /* the MN region's address in the MN's process */
	uint64_t size; /* its length, bytes */
	uint32_t mn;
	ucx_slot_t *ring;
	uint64_t head, issue, tail;
	uint32_t inflight;	   /* ISSUED slots */
	uint8_t inflight_nonread;  /* one of them is not a READ */
	uint8_t error;		   /* endpoint in error: later WRs flushed */
	uint8_t no_peer_errors;	   /* created without peer error handling (sm) */
	ucs_status_t ucp_error;	   /* the UCP status that put it in error */
	struct ucx_worker *worker; /* owner */
} ucx_ep_t;

typedef struct ucx_timer {
	uint64_t at, wr_id;
} ucx_timer_t;

typedef struct ucx_mr {
	void *addr;
	size_t len;
} ucx_mr_t;

/* One dmreplay worker: its UCP worker, an endpoint per MN, its timers (any
 * thread may set one: under mu) and its registrations. */
typedef struct ucx_worker {
	ucp_worker_h w;
	ucx_ep_t *eps; /* [mns] */
	pthread_mutex_t mu;
	ucx_timer_t *tm; /* sorted by at; equal times in the order set */
	uint32_t ntm, captm;
	ucx_mr_t *mr;
	uint32_t nmr, capmr;
	dmr_be_stats_t st;     /* updated with relaxed atomics */
	dmr_be_mn_stats_t *ms; /* [mns], likewise */
	uint32_t id;
} ucx_worker_t;

/* The memory node side of loopback mode: a UCP worker per MN in a context
 * of its own, each MN's region mapped with ucp_mem_map, and one thread that
 * progresses them (sleeping on their event fds when idle). */
typedef struct ucx_mn {
	uint64_t base;	 /* the region's address in the MN's process */
	int remote;	 /* 1: an MN process (DMR_UCX_MN); mem is the shadow */
	int sock;	 /* remote: the control connection, else -1 */
	uint64_t *dirty; /* remote: a bit per DMR_UCX_CHUNK of the region that a
			    WRITE, CAS or FAA of this process may have changed */
	ucp_worker_h w;
	ucp_mem_h memh;
	uint8_t *mem;
	uint64_t size;
	void *rkey_buf; /* ucp_rkey_pack output, what a CN unpacks */
	size_t rkey_len;
	ucp_address_t *addr; /* the MN worker's address, what a CN connects to */
	size_t addr_len;
	int efd;
	/* the sockaddr connection mode (ucx_cm.c): the MN worker's listener,
	 * the address it listens on (the port UCX picked) and the endpoints it
	 * accepted (created on the MN thread, closed by mn_close) */
	ucp_listener_h listener;
	struct sockaddr_storage listen_at;
	socklen_t listen_len;
	ucp_ep_h *sep;
	uint32_t nsep, capsep;
} ucx_mn_t;

typedef struct ucx {
	dmr_be_t be;
	ucp_context_h cn_ctx, mn_ctx;
	uint32_t nworkers, mns;
	ucx_worker_t *wk; /* [nworkers] */
	ucx_mn_t *mn;	  /* [mns] */
	pthread_t mn_thread;
	int mn_thread_on;
	int stop; /* atomic: the MN thread stops */
	uint64_t t0;
	uint64_t probe[2]; /* open()'s first READ and FAA land here */
	/* open()'s probe did not complete (wireup unfinished): close() leaves
	 * every UCP object to the process's exit, since UCX 1.13 asserts while
	 * purging an endpoint's pending wireup request (ucp_request.c
	 * ucp_request_send_state_ff "got REQ message"; the assertion was
	 * relaxed upstream by openucx/ucx PR #8175). Seen with UCX_TLS=rc on
	 * rxe in the VM, whose UD wireup datagrams were never acknowledged
	 * (docs/UCX.md "rc on rxe"). */
	int unwired;
	/* 1: the sockaddr connection mode (ucx.h "Connection modes"): the MNs
	 * listen on listen_at (DMR_UCX_LISTEN, port 0), the CNs' endpoints are
	 * UCP clients of them */
	int sockaddr;
	/* UCX_TLS names an RDMA transport: the MN thread keeps progressing
	 * after its last event (ucx.c MN_SPIN_PS); on tcp and sm it sleeps on
	 * the event fds at once, in either mode (a spinning thread on a loaded
	 * 2-core host starved the CNs: 10 s without a completion) */
	int spin;
	struct sockaddr_storage listen_at;
	socklen_t listen_len;
} ucx_t;

/* ucx.c: a UCP context with features (mt_workers_shared = shared), a
 * worker (UCS_THREAD_MODE_SERIALIZED); an MN's worker, region, memh, rkey,
 * address and event fd in ctx (n zeroed first; mn_close undoes any part). */
ucs_status_t dmr_ucx_make_ctx(uint64_t features, int shared, ucp_context_h *ctx_p);
ucs_status_t dmr_ucx_make_worker(ucp_context_h ctx, ucp_worker_h *w_p);
dmr_status_t dmr_ucx_mn_open(ucp_context_h ctx, ucx_mn_t *n, uint32_t m, uint64_t size,
			     dmr_err_t *err);
void dmr_ucx_mn_close(ucp_context_h ctx, ucx_mn_t *n);
/* UCX_TLS as messages quote it. */
const char *dmr_ucx_tls(void);

/* ucx_remote.c: MN m of u from the MN process at "host:port" (DMR_UCX_MN):
 * region of size bytes there, its address, rkey and worker address here,
 * a local shadow of it in n->mem. */
dmr_status_t dmr_ucx_mn_connect(ucx_t *u, uint32_t m, const char *hostport, uint64_t size,
				dmr_err_t *err);
/* The barrier of remote mode: START writes each MN's shadow into its
 * region, END reads it back (backend.h's barrier contract, one CN
 * process). Loopback: the single-process barrier. */
dmr_status_t dmr_ucx_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
			     dmr_err_t *err);

/* ucx_cm.c: the connection mode of u from DMR_UCX_CONNECT (auto, address,
 * sockaddr; auto = sockaddr when UCX_TLS names an RDMA transport) and, for
 * sockaddr, the address of DMR_UCX_LISTEN into u->listen_at. remote: the MNs
 * are MN processes (DMR_UCX_MN), where sockaddr is refused. Errors:
 * DMR_ERR_INVALID naming the variable. */
dmr_status_t dmr_ucx_cm_mode(ucx_t *u, int remote, dmr_err_t *err);
/* MN m's listener on u->listen_at (UCX picks the port: n->listen_at);
 * accepted endpoints go to n->sep. DMR_ERR_NODEV when UCX cannot listen
 * there. */
dmr_status_t dmr_ucx_mn_listen(ucx_t *u, ucx_mn_t *n, uint32_t m, dmr_err_t *err);
/* Destroy n's listener and close its accepted endpoints (MN thread
 * stopped: progresses n->w itself). */
void dmr_ucx_mn_unlisten(ucx_mn_t *n);
/* Wait until ep's wireup is done (a flush of the empty endpoint completes),
 * progressing w, ps picoseconds at most. DMR_OK, or DMR_ERR_NODEV (the
 * flush failed, or *timed_out = 1: its request is left to UCP). */
dmr_status_t dmr_ucx_wait_wired(ucp_worker_h w, ucp_ep_h ep, uint64_t ps, int *timed_out);

/* ucx_post.c: the data path. */
dmr_status_t dmr_ucx_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			  uint32_t n, dmr_err_t *err);
int dmr_ucx_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max);
/* Hand every slot of ep that may go now to UCP (the ordering rule of
 * ucx.h). */
void dmr_ucx_issue(ucx_ep_t *e);
/* Hand on what may go and move up to max completions at the head of e's
 * ring into wcs (posting order); no progress, no timers. Returns the
 * count. */
int dmr_ucx_reap(ucx_ep_t *e, dmr_wc_t *wcs, int max);
/* The dmr_wc_status_t of a failed UCP request. */
uint8_t dmr_ucx_wc_status(ucs_status_t st);

#endif /* DMR_UCX_IMPL_H */
