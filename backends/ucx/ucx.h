/*
 * backends/ucx/ucx.h - the UCX backend (issue 17 item 3) on the UCP API of
 * libucx (Debian 12: 1.13): `--backend ucx`. docs/UCX.md.
 *
 * Loopback mode (DMR_UCX_MN unset): open() starts the memory nodes in
 * the same process, reached through UCX endpoints as a remote MN would be:
 * a UCP context of their own (features RMA, AMO64, WAKEUP), a UCP worker
 * per MN, each MN region (cfg->mr_size bytes, mmap'd) mapped with
 * ucp_mem_map and its rkey packed with ucp_rkey_pack; one thread progresses
 * the MN workers (software RMA and atomics, as on UCX's tcp transport, need
 * the target to progress), sleeping on their event fds when idle. The CNs'
 * context (RMA, AMO64; workers shared between threads) has one UCP worker
 * per dmreplay worker and one endpoint per (worker, MN), created from the
 * MN worker's address with peer error handling (UCP_ERR_HANDLING_MODE_PEER;
 * when no transport allowed can detect a peer's failure, as UCX's shared
 * memory ones (sm: posix, sysv, cma) cannot, without it: the MN lives in
 * this process); each endpoint unpacks the MN's rkey (ucp_ep_rkey_unpack)
 * at connect. Before returning, open() waits (10 s at most) for a READ and
 * an FAA of 0 on every endpoint: wireup done, both lanes proven; the
 * counters then start from zero. mn_memory() returns the region.
 *
 * Two processes (DMR_UCX_MN=HOST:PORT[,HOST:PORT...], one per MN): each MN
 * is a dmreplay-ucx-mn process (dmr_ucx_mn_serve below); open() connects
 * to its control socket, sends the region size, and receives the region's
 * address, its packed rkey and the MN worker's address, then reaches the
 * region over UCX only. This process is the cluster's only CN process
 * (ROLE: the whole cluster). mn_memory() is a local shadow of each region:
 * barrier START writes the shadow to the MN (chunks of DMR_UCX_CHUNK that
 * are all zero skipped: the MN's region starts zeroed), barrier END (not
 * failed) reads back every chunk that a WRITE, CAS or FAA of this process
 * touched, so mn_memory() then holds the final state. The barrier's own
 * WRs are not counted in stats. Errors at open: DMR_ERR_INVALID (a list
 * that does not name one host:port per MN), DMR_ERR_REMOTE (no MN process
 * there, a failed exchange, the MN's refusal with its message). A peer
 * failure (the MN process gone: UCX reports it on the endpoint) makes the
 * endpoint's next WR complete with DMR_WC_RETRY_EXC_ERR and later ones
 * with DMR_WC_FLUSH_ERR.
 *
 * Connection modes (DMR_UCX_CONNECT=auto|address|sockaddr; ucx_cm.c):
 * address (the default) creates each endpoint from the MN worker's address
 * as above; UCX then does its wireup over an auxiliary transport (UD for
 * rc). sockaddr (auto picks it when UCX_TLS names an RDMA transport: rc,
 * rc_verbs, rc_mlx5, rc_x, dc*, ud*, ib, mlx5) makes each loopback MN's
 * worker listen (ucp_listener_create) on DMR_UCX_LISTEN (a numeric IPv4 or
 * IPv6 address, the RDMA device's netdev address; UCX picks the port) and
 * accept each connection request into an endpoint of its own (closed at
 * close()); each CN endpoint is a client of that socket address
 * (UCP_EP_PARAMS_FLAGS_CLIENT_SERVER), its wireup carried by UCX's CM
 * component (rdmacm on an RDMA device), so rc_verbs needs no UD lane. A
 * client endpoint learns the MN's transports during its wireup: open()
 * waits for it (a flush of the empty endpoint, 10 s at most) before it
 * unpacks the rkey. In this mode the MN thread keeps progressing, yielding
 * the CPU, for 200 ms after its last event before it sleeps (software
 * atomics on the MN's CPU, whose requests did not wake its event fd on
 * rc_verbs). Errors at open: DMR_ERR_INVALID for a DMR_UCX_CONNECT that is
 * no mode, sockaddr without DMR_UCX_LISTEN or with one that is not a
 * numeric address, sockaddr with DMR_UCX_MN (the MN processes use the
 * address mode only); DMR_ERR_NODEV when UCX cannot listen there or the
 * wireup fails or does not complete in 10 s.
 *
 * Transports: UCX reads UCX_TLS (and every other UCX_* variable) itself;
 * unset, UCX chooses. A UCX_TLS under which no transport can carry RMA and
 * 64-bit atomics from a CN worker to an MN (ucp_init or ucp_ep_create
 * fails) is refused at open with DMR_ERR_NODEV, the message naming UCX_TLS
 * and UCP's error (UCX prints its own reasons through its log, UCX_LOG_LEVEL).
 * With DMR_UCX_INFO=1 open() prints to stderr, once per
 * open, the lanes UCP selected for worker 0's endpoint to MN 0
 * (ucp_ep_print_info): the only thing this backend prints.
 *
 * Data path: dmr_be_post copies each WR into its endpoint's ring
 * (DMR_UCX_DEPTH WRs; a batch that does not fit is refused with
 * DMR_ERR_AGAIN, nothing posted) and hands to UCP what may go now:
 * READ = ucp_get_nbx, WRITE = ucp_put_nbx followed by ucp_ep_flush_nbx (the
 * WRITE completes when the flush does: remote completion, as an RC ACK;
 * ucp_put_nbx's own completion only frees the local buffer), CAS =
 * ucp_atomic_op_nbx(UCP_ATOMIC_OP_CSWAP), FAA = ucp_atomic_op_nbx(
 * UCP_ATOMIC_OP_ADD) with a reply buffer (fetching); a 0-byte READ/WRITE
 * completes without UCP. Ordering: UCP orders nothing between operations
 * on an endpoint (ucp.h: ucp_worker_fence only orders what one transport
 * lane carries; RMA and software atomics may use different lanes), while
 * the core relies on RC order (a READ sees the WRITEs posted before it, an
 * unlock lands after the data). So an endpoint hands UCP either a run of
 * consecutive READs or a single other WR, and the next one only when those
 * have completed: RC's order at one round trip per non-READ WR. poll()
 * progresses the worker (ucp_worker_progress), hands on what may go and
 * returns the completions at the heads of its endpoints' rings in posting
 * order: one per signaled WR and per failed WR. A WR outside the MN region
 * completes with DMR_WC_REM_ACCESS_ERR without reaching UCP (the rkey
 * bounds checked here: UCP's software RMA would touch the target out of
 * bounds); a request that fails maps its ucs_status_t (endpoint timeout,
 * connection reset, unreachable: RETRY_EXC_ERR; else GENERAL_ERR); either
 * puts the endpoint in error and its later WRs complete with
 * DMR_WC_FLUSH_ERR.
 *
 * Threading (caps = 0, as verbs): one thread per worker alone posts and
 * polls it (its UCP worker is UCS_THREAD_MODE_SERIALIZED); timer() may be
 * called from any thread (kept per worker under a mutex, delivered by its
 * poll once now() passes them, in time order). now() is CLOCK_MONOTONIC
 * since open. stats() sums per-worker counters kept with relaxed atomics.
 * control() answers DMR_BE_CTL_ROLE (the whole cluster) and
 * DMR_BE_CTL_MN_STATS (the counts; busy times 0). mr_reg() records the
 * buffer (UCP registers local buffers itself, in its registration cache),
 * mr_dereg() removes it (DMR_ERR_INVALID for an address not registered for
 * that worker). barrier: one process in loopback mode, the region's moves
 * in two-process mode; progress, charge: the registry's stubs.
 */
#ifndef DMR_UCX_H
#define DMR_UCX_H

#include <stddef.h>
#include <stdio.h>

#include "../backend.h"

extern const dmr_be_ops_t dmr_ucx_ops;

/* Into buf (len bytes, NUL-terminated, truncated to fit) the transports UCP
 * selected for worker `worker`'s endpoint to MN `mn` of an open ucx backend
 * (be must be one): the text of ucp_ep_print_info. Returns DMR_OK, or
 * DMR_ERR_RANGE for a worker or MN out of range, DMR_ERR_IO if the text
 * cannot be captured. */
dmr_status_t dmr_ucx_transports(dmr_be_t *be, uint32_t worker, uint32_t mn, char *buf, size_t len,
				dmr_err_t *err);

/* The MN process (dmreplay-ucx-mn, docs/UCX.md "Two processes"): listen on
 * hostport ("127.0.0.1:0" = an ephemeral port), print "ucx-mn: listening on
 * IP:PORT" on stdout once bound, then serve one CN process at a time: its
 * hello names the region size, the MN maps a region of it (ucp_mem_map),
 * answers with its address, length, packed rkey and UCP worker address, and
 * progresses its UCP worker until the CN closes the control connection;
 * the region is unmapped then. once: return after the first session.
 * Session messages go to log (NULL: none). Errors: DMR_ERR_INVALID (bad
 * hostport), DMR_ERR_IO (bind, listen, accept), DMR_ERR_NODEV (ucp_init:
 * UCX_TLS names no usable transport). */
dmr_status_t dmr_ucx_mn_serve(const char *hostport, int once, FILE *log, dmr_err_t *err);

#endif /* DMR_UCX_H */
