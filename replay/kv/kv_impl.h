/*
 * replay/kv/kv_impl.h - private to replay/kv/: the state of a KV run and
 * the functions the runner files share (replay/kv/README.md has the map).
 * The public API is replay/kv.h; the protocol pieces are core/kv/.
 */
#ifndef DMR_KV_IMPL_H
#define DMR_KV_IMPL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "../../core/base/fs.h"
#include "../../core/base/progress.h"
#include "../../core/base/timeps.h"
#include "../../core/base/wrid.h"
#include "../../core/kv/master.h"
#include "../../core/kv/pool.h"
#include "../../core/kv/rpc.h"
#include "../../core/kv/xfer.h"
#include "../../core/loop.h"
#include "../../traces/kvcache.h"
#include "../kv.h"
#include "../timeseries.h"

#define NOIDX DMR_KV_NOIDX

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- latencies (results.c) ---------------------------------------------- */

typedef struct kv_lat {
	double *v; /* us */
	uint64_t n, cap;
} kv_lat_t;

/* Append x; -1 when out of memory. */
int kv_lat_push(kv_lat_t *d, double x);
/* p50/p99/p999/mean/min/max of d (sorted in place); zeros when empty. */
void kv_lat_stats(kv_lat_t *d, double *p50, double *p99, double *p999, double *mean, double *min,
		  double *max);

/* "1.50 MiB" (binary units; bytes below 1 KiB as "512 B"). */
void kv_fmt_bytes(char *b, size_t n, double x);

/* ---- a run ---------------------------------------------------------------- */

/* The run's counters: the time series' columns and the summary's totals. */
enum {
	KV_ARRIVALS,
	KV_COMPLETED,
	KV_HITS,
	KV_PUTS,
	KV_DROPPED,
	KV_EVICTIONS,
	KV_BYTES_GOT,
	KV_BYTES_PUT,
	KV_WIRE_TO,
	KV_WIRE_FROM,
	KV_PF_ISSUED, /* Loop X (written only with --loop prefetch) */
	KV_PF_USED,
	KV_PF_WASTED,
	KV_PF_BYTES,
	KV_NCNT
};
enum { KV_G_PF_SIGNAL, KV_G_PF_DEPTH, KV_NGAUGE }; /* Loop X's gauges */

typedef struct kv {
	dmr_progress_t prog; /* requests completed of the run's */
	const dmr_kv_opts_t *o;
	dmr_err_t *err;
	dmr_be_t *be; /* NULL in the MN process */
	dmr_kv_reader_t *rd;
	uint64_t block;	    /* the trace's block bytes */
	uint32_t nclients;  /* client workers in all */
	dmr_kv_pool_t pool; /* the master's metadata (unused in a CN process) */
	dmr_kv_xeng_t X;    /* sim: the transfers; threaded: the clients' sums */
	/* the trace */
	dmr_kv_req_t ahead; /* sim: the read-ahead request */
	int have_ahead, eof;
	uint64_t nread; /* requests read */
	/* the sim runner */
	uint32_t inflight;
	dmr_time_ps_t rpc_ps; /* sim: the modelled RPC; threaded: the mean LOOKUP */
	dmr_time_ps_t t_first, t_last;
	int have_first;
	/* results */
	uint64_t cnt[KV_NCNT];
	uint64_t requested, max_used, waited;
	dmr_tseries_t ts; /* KV_NCNT counters per row (+ KV_NGAUGE with pf) */
	/* Loop X (sim; NULL: off): kv/prefetch.c */
	dmr_kv_pf_t *pf;
	dmr_time_ps_t pf_window, pf_wend;
	uint64_t pf_bytes;
	double pf_signal; /* the signal of the windows closed since the last row */
	uint64_t pf_sig_n;
	double pf_sig_sum;
	kv_lat_t lat; /* per request, us */
} kv_t;

/* run.c */
void kv_begin(kv_t *k, const dmr_kv_opts_t *o, dmr_err_t *err);
dmr_status_t kv_check_opts(const dmr_kv_opts_t *o, dmr_err_t *err);
/* The pool of o's options for k->nclients clients and k->block bytes. */
dmr_status_t kv_pool_setup(kv_t *k, uint64_t *logical_p);
/* The pool's counters into k->cnt, k->requested and k->max_used. */
void kv_take_pool(kv_t *k);
/* The read-ahead request (sim): k->have_ahead, or k->eof. */
dmr_status_t kv_read_next(kv_t *k);
/* Open-loop arrival of a request at trace time t_us, ps. */
dmr_time_ps_t kv_arrival_ps(const kv_t *k, uint64_t t_us);
/* The largest slice (one WR), checked below 4 GiB. */
dmr_status_t kv_maxwr(const kv_t *k, uint64_t *maxwr_p);
void kv_free(kv_t *k);

/* run.c: the slices the run would take on (the trace's trailer x
 * ceil(block / --slice)) above DMR_KV_MAX_SLICES: DMR_ERR_RANGE naming
 * --slice; DMR_OK when below or unknown. */
dmr_status_t kv_check_work(const dmr_kv_opts_t *o, const dmr_kv_trace_hdr_t *h, dmr_err_t *err);

/* results.c */
void kv_ts_init(kv_t *k, dmr_time_ps_t window_ps);
dmr_status_t kv_ts_overflow(const kv_t *k);
void kv_fill_result(kv_t *k, dmr_kv_result_t *res, const dmr_model_t *m, dmr_time_ps_t tend);
dmr_status_t kv_write_results(const kv_t *k, const dmr_kv_result_t *res, dmr_err_t *err);
/* Open dir/name for an atomic write (core/base/fs.h); commit with
 * dmr_afile_commit. */
dmr_status_t kv_afile_open(dmr_afile_t *a, const char *dir, const char *name, dmr_err_t *err);

/* prefetch.c (Loop X on the sim runner) */
/* Create k->pf when o->loop has prefetch (windows of o->loop_window_ms). */
dmr_status_t kv_pf_setup(kv_t *k);
/* A request of client c whose last block is `last` got its answer (its
 * gets queued): issue the prefetches `last` predicts (present and READY in
 * the pool, not buffered by c), queued after those gets. */
dmr_status_t kv_pf_after_rpc(kv_t *k, uint32_t c, uint64_t last);
/* Request ri's get of block b: 1 when the client's buffer has it (no READ:
 * the pin is released here), else 0. */
int kv_pf_serve(kv_t *k, uint32_t ri, uint32_t b);
/* A transfer owned by Loop X completed (its pin released, the buffer told). */
void kv_pf_done(kv_t *k, const dmr_kv_xfer_t *x);
/* The loop's windows ended at or before t: decide. */
void kv_pf_tick(kv_t *k, dmr_time_ps_t t);
/* The counters and gauges of the time series. */
void kv_pf_sample(kv_t *k, double *g);
#define KV_PF_OWNER 0xFFFFFFFEu /* dmr_kv_xfer_t.owner of a prefetch */

/* sim.c */
dmr_status_t kv_run_sim(kv_t *k, dmr_kv_result_t *res, double w0);
/* After the event loop ran out of events: DMR_OK when no request, transfer
 * or read-ahead arrival is left, else DMR_ERR_REMOTE ("the run stalled":
 * completions lost, a failed run, exit 1; issue #15) with the counts in
 * k->err. */
dmr_status_t kv_check_drained(const kv_t *k);
/*
 * Open a DRIVEN backend (sim) for a KV run or the bench: refuse another
 * ("backend B: WHAT runs on DRIVEN backends (sim) only so far"), apply
 * --mtu (mtu > 0), keep no payload when folded; *m_p = the sim's model.
 * *be_p is set (the caller closes it) whenever the open succeeded.
 */
dmr_status_t kv_sim_open(const dmr_be_config_t *cfg, uint32_t mtu, int folded, const char *what,
			 dmr_be_t **be_p, const dmr_model_t **m_p, dmr_err_t *err);

/* ---- threaded backends (threaded.c, client.c) ---------------------------- */

#define CREQ_MAX 256u /* requests in flight per client */
#define LK_MAX 4u     /* LOOKUPs in flight per client (a chunked one goes alone) */

enum { KVM_ONE = 0, KVM_CN = 1, KVM_MN = 2 }; /* one process; client or master process */

/* A client or master process (NULL: one process with both). */
typedef struct kv_proc {
	int mode;	/* KVM_CN or KVM_MN */
	const void *cl; /* the cluster (dmr_verbs_cluster_t) */
	uint32_t self;	/* this node's index in it */
	double barrier_s, end_s;
} kv_proc_t;

/* a request read from the trace, queued for its client */
typedef struct tq {
	struct tq *next;
	uint64_t index, t_us;
	uint64_t local; /* ordinal among this process's requests (closed loop) */
	uint32_t nblocks;
	uint64_t ids[];
} tq_t;

/* a request in flight at a client */
typedef struct creq {
	uint64_t index, t_arr, rid;
	uint32_t nblocks, answered, gets_left, puts_left, wait_b;
	uint64_t *ids, *off;
	uint32_t *gslot;
	uint8_t *kind;
	uint8_t state, polling;
} creq_t;
enum { CR_FREE = 0, CR_LOOKUP, CR_XFER, CR_FINISH, CR_FINWAIT };

/* a mailbox slot of a client */
typedef struct rslot {
	uint64_t seq, t_post;
	uint32_t rq, n;
	uint8_t op, busy, reading;
} rslot_t;

struct kvt;

typedef struct kvc {
	struct kvt *T;
	uint32_t w; /* worker = client index in this process */
	uint32_t g; /* global client index: its mailboxes */
	dmr_kv_xeng_t X;
	uint8_t *lbuf; /* registered: MB_SLOTS x (request + response) + ready words */
	rslot_t sl[DMR_KV_MB_SLOTS];
	creq_t rq[CREQ_MAX];
	uint32_t lkq[CREQ_MAX], lkh, lkn; /* FIFO of requests not yet looked up */
	uint32_t lk_inflight;		  /* LOOKUPs in flight (<= LK_MAX) */
	uint32_t lk_multi;		  /* request looked up in chunks, alone; NOIDX = none */
	uint32_t active;
	tq_t *next; /* the next request of this client, read ahead */
	int eof;
	uint64_t seq;
	/* counters (one writer: this thread; relaxed atomic stores) */
	uint64_t arrivals, completed, bytes_got, bytes_put, waited, rpcs, lookups;
	uint64_t b_req, b_hit, b_put, b_drop; /* blocks by the master's answer (CN mode) */
	uint64_t rpc_ps_sum;
	dmr_time_ps_t t_first, t_last;
	int have_first;
	kv_lat_t lat;
	dmr_status_t st;
	dmr_err_t err;
	pthread_t tid;
} kvc_t;

typedef struct kvt {
	kv_t *k;
	dmr_be_t *be;
	uint8_t *mem;	 /* the MN region, when local (one process, MN process) */
	uint32_t nc;	 /* clients in all = mailboxes */
	uint32_t nl, g0; /* client threads of this process; global index of the first */
	int mode;	 /* KVM_* */
	uint64_t nlocal; /* requests taken by this process's clients (under mu) */
	double w0;	 /* dmr_wall_s() at the start */
	int ended;	 /* CN mode: the END barrier was called */
	dmr_kv_layout_t lay;
	dmr_time_ps_t deadline_ps, t0;
	tq_t **qh, **qt; /* per-client queues (under mu) */
	pthread_mutex_t mu;
	uint64_t completed_all; /* closed loop: requests finished, all clients */
	volatile int stop;	/* kv_stop / kv_stopped only: read by every client and
				   the master (core/kv/master.c) while set */
	uint32_t running;
	kvc_t *c;
	dmr_kv_master_t M; /* one process and MN process */
} kvt_t;

/* The stop word: relaxed atomic stores and loads (ThreadSanitizer, issue
 * #15); volatile stays for the master's `volatile int *stop`. */
static inline void kv_stop(kvt_t *T)
{
	__atomic_store_n(&T->stop, 1, __ATOMIC_RELAXED);
}

static inline int kv_stopped(kvt_t *T)
{
	return __atomic_load_n(&T->stop, __ATOMIC_RELAXED);
}

/* threaded.c */
dmr_status_t kv_run_threaded(kv_t *k, dmr_kv_result_t *res, double w0, const kv_proc_t *P);
/* Size the threaded pool for T->nc clients in all and lay the region out
 * (T->lay); g (may be NULL) gets the geometry, with the trace's fingerprint. */
dmr_status_t kv_plan(kv_t *k, kvt_t *T, dmr_kv_geom_t *g);
/* Bytes of physical memory (UINT64_MAX when unknown). */
uint64_t kv_phys_bytes(void);

/* client.c: the thread of client C (pthread entry). */
void *kv_client_main(void *arg);

/* ---- verbs: the MN and CN processes and the launcher (roles.c) ------------ */

/* CN mode: open the verbs backend as CN P->self of the cluster (its role
 * outlives the backend). */
dmr_status_t kv_cn_open(kvt_t *T, dmr_be_config_t *cfg, const kv_proc_t *P, dmr_err_t *err);
/* CN mode: READ the geometry header the master wrote (after the START
 * barrier) and compare it with ours. */
dmr_status_t kv_cn_check_geom(kvt_t *T, const dmr_kv_geom_t *mine, double secs, dmr_err_t *err);
/* CN mode: one phase of the cluster barrier (dmr_be_barrier on T->k->be,
 * the deadline the role's --barrier-timeout / --end-timeout; no value: the
 * KV pool has no committed delta). END with `failed` tells the other CNs
 * and the MN that this CN failed. Errors: dmr_be_barrier's. */
dmr_status_t kv_cn_barrier(kvt_t *T, dmr_be_barrier_phase_t phase, int failed, dmr_err_t *err);
/* verbs: the profile's RoCEv2 framing with the path's MTU and the port's
 * link rate (0 when unknown), and the device's name into dev (may be NULL);
 * 0 when the backend is not verbs or the profile does not load. */
int kv_verbs_model(dmr_be_t *be, const char *backend, const char *profile, dmr_model_t *wm,
		   char *dev, size_t devlen, dmr_err_t *err);

/* The options of kv run / mn / cn that are not pool or replay options. */
typedef struct kv_proc_args {
	int mode;	    /* KVM_* */
	const char *cmd;    /* "kv run", "kv mn", "kv cn" */
	const char *config; /* --config */
	long long id;	    /* --id, -1 = none */
	double barrier_s, end_s, deadline_s;
	int procs, saw_cns, saw_be, saw_dev;
	char out_trim[4096]; /* --out without its trailing slashes */
} kv_proc_args_t;

/* kv run --procs / --config: kv mn + kv cn as child processes; the exit
 * status. */
int kv_launch(int argc, char **argv, const dmr_kv_opts_t *o, const kv_proc_args_t *a);
/* kv mn / kv cn: check the options against the cluster config, then serve
 * (MN) or replay (CN). Returns an exit status >= 0 when it printed an error
 * of the command line (2), else -1 with *st_p and *r set. */
int kv_proc_run(dmr_kv_opts_t *o, const kv_proc_args_t *a, dmr_kv_result_t *r, dmr_err_t *err,
		dmr_status_t *st_p);
/* run.c: the replay of kv run and kv cn (P NULL: one process). */
dmr_status_t kv_run_common(const dmr_kv_opts_t *o, const kv_proc_t *P, dmr_kv_result_t *res,
			   dmr_err_t *err);

#endif /* DMR_KV_IMPL_H */
