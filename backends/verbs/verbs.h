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
 * Loopback mode (no role set, see below): open() starts cfg->mns (1..
 * DMR_BE_MAX_MNS) memory nodes in the same process: per MN a thread runs an
 * rdma_cm listener on the chosen address (a port of its own) and registers
 * an MR of cfg->mr_size bytes (remote READ/WRITE/ATOMIC); then each of the
 * cfg->cns * cfg->workers workers connects one RC QP per MN, each worker
 * with its own CQ (completions carry the MN). mn_memory(be, m) returns MN
 * m's region. Before returning, open() writes a canary to every MN, reads
 * it back and checks a CAS's returned old value (host order; a byte-swapped
 * old value is detected here and converted from then on).
 *
 * Threading (caps = 0): each worker is driven by one thread that alone calls
 * post/poll/mr_reg for it; different workers may run at once. timer() may be
 * called from any thread (the threaded replay wakes another worker's context
 * with one): timers are kept per worker under a mutex and delivered by that
 * worker's poll() once now() passes them. now() is time since open(), any
 * thread: the TSC converted with a rate measured against CLOCK_MONOTONIC over
 * open() (x86; as perftest's get_cycles, because CLOCK_MONOTONIC is a system
 * call where the clocksource is not the TSC: 0.74 us under qemu TCG), else
 * or with DMR_VERBS_CLOCK=monotonic CLOCK_MONOTONIC. stats() sums per-worker counters: call it when
 * the workers are quiet. progress() and charge() are the registry's stubs
 * (not a DRIVEN backend; the CPU is real). control() answers
 * DMR_BE_CTL_ROLE (loopback: the whole cluster, {0, cns, 0, cns *
 * workers}) and DMR_BE_CTL_MN_STATS (per MN the WRs this handle's workers
 * completed there, by opcode, and their bytes; busy times 0; call when the
 * workers are quiet). mr_dereg() removes what mr_reg() registered.
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

/* --dm-locks (issue 16 item 3; backends/verbs/verbs_dm.c): whether `need`
 * bytes of lock words (every MN of this process on device dev) fit in the
 * device memory the device offers (max_dm, ibv_query_device_ex's
 * max_dm_size, bytes). DMR_OK when they fit; DMR_ERR_INVALID with err
 * "verbs: --dm-locks: device D offers no device memory (ibv_query_device_ex:
 * max_dm_size 0); ..." when max_dm is 0 (rxe), or "... device D: lock words
 * need N bytes of device memory[ (M MNs on this device x B bytes)], the
 * device offers X ..." when need > max_dm. */
dmr_status_t dmr_verbs_dm_check(const char *dev, uint64_t max_dm, uint64_t need, uint32_t mns,
				dmr_err_t *err);

/* Fill *info_p from an open verbs backend (be must be a verbs backend). */
void dmr_verbs_info(dmr_be_t *be, dmr_verbs_info_t *info_p);

/* The send queue depth (WRs; 0 = 4096) and max_inline_data (bytes; -1 =
 * 256) the next open() of this process asks for, clamped to the device as
 * always; process-global, like dmr_verbs_set_role. `dmreplay bench` sizes
 * its QP as perftest does (no inline data for READ and atomics, a queue of
 * twice its depth so that the backend's own slot-reclaiming signal never
 * adds completions): under qemu TCG a 4096-deep queue of 256-byte-inline
 * WQEs (1.6 MB of ring) measurably slows an 8-byte READ on rxe. */
void dmr_verbs_set_queue(uint32_t sq_depth, int inline_bytes);

/* Which device, port, GID and IPv4 address an open() with these settings
 * would use (device NULL/"" = index 0, port 0 = 1, gid_index -1 =
 * automatic), without opening anything else; fills device, port,
 * gid_index and ip of *info_p (the rest zero). Errors as open()'s:
 * DMR_ERR_NODEV (no device, port not ACTIVE, no usable GID: the reason is
 * named), DMR_ERR_RANGE (no such port). Used by `dmreplay run --procs` to
 * write a cluster config for this host. */
dmr_status_t dmr_verbs_probe(const char *device, int port, int gid_index, dmr_verbs_info_t *info_p,
			     dmr_err_t *err);

/* ---- roles as processes (issue #3 item 2; docs/ROLES.md) ---------------
 *
 * A cluster config (parsed by replay/roles/cluster.c) lists memory nodes and
 * compute nodes; each MN is a process of its own (several may share a
 * host on different ports), and every CN connects to all of them. The MN process
 * (dmr_verbs_mn_main) registers mr_size bytes plus a control page after
 * them (at the region's size rounded up to 64) and serves them to CN QPs
 * connected through rdma_cm on ip:port. A CN process runs the replay on a
 * verbs backend opened after dmr_verbs_set_role(): each of its workers and
 * one control worker connect one QP to every MN of the cluster (cfg->mns
 * must be the cluster's nmn; MN m at its ip and its port, else the
 * cluster's); mn_memory(be, m) is a local shadow of MN m's region (cfg->
 * mr_size bytes; each MN region must hold need_bytes). The control words
 * below are written to every MN's control page (each MN process follows
 * the CNs through its own), MN 0 last; the barriers read MN 0's.
 * The CN answers DMR_BE_CTL_ROLE with {self, ncn, first_worker, ncn *
 * cfg.workers}: the core makes its lock tags and log-ring offsets unique
 * over the cluster from it, so this backend rewrites nothing. The barrier op
 * (backend.h) runs through the control page:
 *  - START: the CN writes its arrival (its thread count) into the control
 *    page; CN index 0 waits until every CN has arrived, then WRITEs its
 *    shadow (the loaded initial state, up to log_base) into the MN region
 *    and sets the "loaded" word (every MN from its own shadow, the tables
 *    up to log_base of each); every CN then READs the control page
 *    until all CNs have arrived and the region is loaded, or the deadline
 *    passes (deadline_ps, else barrier_s after open(), as the MN's
 *    barrier_s + 5 after its start; the error names the CNs missing);
 *  - END: with `failed`, the CN writes "failed" into its done word and
 *    returns (the others' barriers fail at once naming it; the MN exits 1).
 *    Else it writes its value (the committed delta) into its slot and
 *    "done", waits until every CN is done (deadline_ps, else end_s), sums
 *    the CNs' slots into *sum_p and READs the final region back into the
 *    shadows, which the verifier then reads. An error is returned, the
 *    shadows zeroed (verification cannot pass on stale data) and "failed"
 *    written where it can be (the CNs still waiting stop at once).
 *  - between START and END (the run) a thread READs a word of every MN
 *    over the control worker every 200 ms: when one fails (the MN was
 *    killed: "transport retry counter exceeded" after retry_cnt retries)
 *    every later post() of a worker is refused with DMR_ERR_REMOTE naming
 *    that MN's index and ip:port, and END fails with the same message, so
 *    a dead MN stops the run in bounded time even when no transaction
 *    touches it.
 * SIGINT/SIGTERM (core/base/sig.h's dmr_sig_caught; the caller installs the
 * handler) stop a CN that is connecting and the MN's loop.
 */
#define DMR_VERBS_MAX_NODES 64
#define DMR_VERBS_CTL_BYTES 8192u /* control page after the region */

typedef struct dmr_verbs_node {
	uint32_t id;
	char ip[16];	  /* dotted IPv4; "" = the address of the chosen GID */
	char devname[64]; /* "" = device index 0 */
	int ibport;	  /* 1-based */
	int gid;	  /* GID index, -1 = automatic */
	uint64_t mr_size; /* MN: bytes of the region */
	uint16_t port;	  /* MN: its rdma_cm port (0: the cluster's port) */
} dmr_verbs_node_t;

/* A table's MNs in a cluster config's "placement": mn[0] the primary,
 * mn[1..n) its backups (indices into dmr_verbs_cluster_t.mn). */
#define DMR_VERBS_MAX_PLACE 32
typedef struct dmr_verbs_place {
	char table[32];
	uint32_t n;	/* 1 + backups */
	uint32_t mn[3]; /* primary, backups: MN indices */
} dmr_verbs_place_t;

typedef struct dmr_verbs_cluster {
	uint32_t nmn, ncn; /* nmn: 1..DMR_BE_MAX_MNS */
	dmr_verbs_node_t mn[DMR_VERBS_MAX_NODES], cn[DMR_VERBS_MAX_NODES];
	int retry_cnt; /* 0..7 */
	int rnr_retry; /* 0..7 */
	int timeout;   /* 0..31: 4.096 us * 2^timeout (0 = infinite) */
	uint16_t port; /* the MNs' rdma_cm port, unless an MN gives its own */
	/* the file's shape (replay/roles.h): "dmreplay", "reference", "crest",
	 * "ford-cn" (FORD's compute_node_config.json: every MN's address, no
	 * region sizes), "ford-mn" (FORD's memory_node_config.json: one MN),
	 * "motor-cn", "motor-mn" (Motor's cn_config.json, mn_config.json) */
	char shape[16];
	int ford_machine_id; /* ford-*, motor-*: local_*_node.machine_id; else -1 */
	int backups;	     /* "backups" (R, 0..2, < nmn); -1: not given */
	uint32_t nplace;     /* "placement" entries */
	dmr_verbs_place_t place[DMR_VERBS_MAX_PLACE];
} dmr_verbs_cluster_t;

typedef struct dmr_verbs_role {
	const dmr_verbs_cluster_t *cl;
	uint32_t self;	       /* index into cl->cn (CN) or cl->mn (MN) */
	uint32_t first_worker; /* CN: global id of its worker 0 */
	uint64_t log_base;     /* CN: the tables end here (log rings after them are
				  neither loaded nor read back); 0: the whole region */
	uint64_t need_bytes;   /* CN: the MN region must hold this many bytes */
	double barrier_s;      /* START deadline when the barrier gives none, s */
	double end_s;	       /* END deadline when the barrier gives none, s */
	/* MN: NULL, or a word a service on the region (mn_region) sets
	 * non-zero to end dmr_verbs_mn_main (DMR_ERR_INTERRUPTED); signals are
	 * read from dmr_sig_caught(). */
	volatile int *stop;
	/* CN: non-zero = the region belongs to a service of the MN process (the
	 * KV master, replay/kv.c): CN index 0 does not WRITE its image into it at
	 * the start barrier and no CN READs it back at the end barrier (the
	 * barriers themselves are unchanged). The image may then be as small as
	 * 64 bytes (cfg->mr_size); need_bytes still checks the MN's region. */
	int keep_region;
	/* MN: non-zero = a service that CNs connect to and leave at any time
	 * (the key/value store, replay/kv/store_cli.c): no start barrier and no
	 * end on the CNs' control words or disconnections; only a signal or
	 * *stop ends dmr_verbs_mn_main. CNs of a service call no barrier. */
	int service;
	/* MN: called once by dmr_verbs_mn_main, with the region's base and length
	 * (mr_size bytes, zeroed, registered for remote READ/WRITE/ATOMIC; valid
	 * until dmr_verbs_mn_main returns), after rdma_cm listens and before the
	 * MN loop starts (a CN may already be connecting: a service started here
	 * must tolerate early READs). A non-OK return ends dmr_verbs_mn_main with
	 * that status (the callback sets *err). A service run on the region (a
	 * thread started here, owned by the caller) ends the MN by setting
	 * *stop (DMR_ERR_INTERRUPTED). NULL: none. */
	dmr_status_t (*mn_region)(void *arg, void *base, uint64_t len, dmr_err_t *err);
	/* MN: called once before dmr_verbs_mn_main releases the region, when
	 * mn_region was called (whatever mn_region returned): stop using the
	 * region here (join the service's thread). NULL: none. */
	void (*mn_region_end)(void *arg);
	void *mn_arg;
} dmr_verbs_role_t;

/* CN: the role the next verbs open() takes (NULL: loopback). The struct and
 * its cluster must outlive the backend. */
void dmr_verbs_set_role(const dmr_verbs_role_t *role);
/* MN: serve until every CN is done and disconnected (DMR_OK; role->service:
 * never), the start
 * barrier passes its deadline (DMR_ERR_TIMEOUT, naming the missing CNs),
 * every CN disconnected before finishing (DMR_ERR_REMOTE), a signal
 * (dmr_sig_caught) or *stop (DMR_ERR_INTERRUPTED). Progress lines go to stderr. */
dmr_status_t dmr_verbs_mn_main(const dmr_verbs_role_t *role, dmr_err_t *err);

#endif /* DMR_VERBS_H */
