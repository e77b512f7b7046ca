/*
 * backends/verbs/verbs.h - the RDMA verbs backend (issue #3, phase 1) on
 * upstream libibverbs and librdmacm only.
 *
 * Device: cfg->device is a device name ("rxe0", "mlx5_0") or an index into
 * ibv_get_device_list(); NULL or "" means index 0. cfg->port is 1-based
 * (0 means 1). cfg->gid_index >= 0 names the GID; -1 chooses the RoCEv2 GID
 * whose IPv4 address is one of this node's own; a link-local (169.254/16),
 * IPv6, RoCEv1 or foreign (not an address of this node) GID is refused and
 * the reason is given in the error. rdma_cm connects to that IPv4 address
 * (no side service), so the GID must carry one.
 *
 * Loopback mode (cfg->cluster == NULL, the only mode of phase 1): open()
 * starts the memory node in the same process: a thread runs an rdma_cm
 * listener on the chosen address and registers an MR of cfg->mr_size bytes
 * (remote READ/WRITE/ATOMIC); then cfg->cns * cfg->workers RC QPs connect to
 * it, one per (worker, MN), each worker with its own CQ. mn_memory() returns
 * that region. Before returning, open() writes a canary, reads it back and
 * checks a CAS's returned old value (host order; a byte-swapped old value is
 * detected here and converted from then on).
 *
 * Threading (caps = 0): each worker is driven by one thread that alone calls
 * post/poll/mr_reg for it; different workers may run at once. timer() may be
 * called from any thread (the threaded replay wakes another worker's context
 * with one): timers are kept per worker under a mutex and delivered by that
 * worker's poll() once CLOCK_MONOTONIC passes them. now() is CLOCK_MONOTONIC
 * since open(), any thread. stats() sums per-worker counters: call it when
 * the workers are quiet. progress() returns -1 (not a DRIVEN backend).
 *
 * Fork: the backend opens its own device context in open(), so a process
 * forked after another instance was opened and closed (Check's fork mode)
 * works; an instance itself must not be used across fork().
 *
 * Queue limits (send queue depth, CQ depth, max_rd_atomic, max_inline_data,
 * path MTU = the smaller of the two ports' active MTUs, exchanged in the
 * connection's private data) are clamped to the device's; what was asked and
 * what is used are printed to stderr once per process, the only thing this
 * backend prints. A batch that does not fit in the send queue is refused with
 * DMR_ERR_AGAIN (nothing posted). Completions of unsignaled WRs are
 * suppressed; the backend signals one WR in every half send queue itself to
 * reclaim slots. After an error completion the QP is in error: later WRs
 * complete with DMR_WC_FLUSH_ERR.
 *
 * Every error names the device, port, peer (MN and address) and worker where
 * they apply, and the failing call with its errno text.
 */
#ifndef DMR_VERBS_H
#define DMR_VERBS_H

#include "../backend.h"

extern const dmr_be_ops_t dmr_verbs_ops;

/* What open() chose and what the queues got; for tests and reports. */
typedef struct dmr_verbs_info {
	char device[64];
	int port;
	int gid_index;
	char ip[16];		/* dotted IPv4 of the chosen GID */
	uint32_t path_mtu;	/* bytes */
	uint32_t sq_depth;	/* max_send_wr used */
	uint32_t cq_depth;	/* CQEs per worker CQ */
	uint32_t max_rd_atomic; /* initiator depth used */
	uint32_t max_inline;	/* max_inline_data used */
	int atomic_swapped;	/* 1: the device returns atomics' old value byte-swapped */
} dmr_verbs_info_t;

/* Fill *info_p from an open verbs backend (be must be a verbs backend). */
void dmr_verbs_info(dmr_be_t *be, dmr_verbs_info_t *info_p);

#endif /* DMR_VERBS_H */
