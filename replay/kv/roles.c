/*
 * replay/kv/roles.c - the KV pool as processes on verbs (docs/KVCACHE.md
 * 9.7): `kv mn` (the region and the master in the MN process), `kv cn` (a
 * CN's client threads, reaching the master by RDMA only), and `kv run
 * --procs` / `--config` (one MN and the CNs as child processes). Every use
 * of the verbs backend's own API (roles, device info) is in this file.
 */
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../backends/verbs/verbs.h"
#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../kvstore.h"
#include "../roles.h"
#include "kv_impl.h"

/* ---- verbs: device figures and the CN role ---------------------------- */

#ifdef DMR_HAVE_VERBS
/* Link rate of an RDMA port from sysfs ("100 Gb/sec (4X EDR)"), 0 if unknown. */
static double port_gbps(const char *dev, int port)
{
	char p[256];
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", dev, port > 0 ? port : 1);
	FILE *f = fopen(p, "r");
	double g = 0;
	if (f) {
		if (fscanf(f, "%lf", &g) != 1)
			g = 0;
		fclose(f);
	}
	return g;
}

static dmr_verbs_role_t kv_role; /* the CN role of this process (outlives the backend) */
#endif

int kv_verbs_model(dmr_be_t *be, const char *backend, const char *profile, dmr_model_t *wm,
		   char *dev, size_t devlen, dmr_err_t *err)
{
	if (strcmp(backend, "verbs") != 0 || dmr_model_load(profile, wm, err) != DMR_OK)
		return 0;
#ifdef DMR_HAVE_VERBS
	dmr_verbs_info_t vi;
	dmr_verbs_info(be, &vi);
	wm->mtu = vi.path_mtu;
	wm->link_gbps = port_gbps(vi.device, vi.port);
	if (dev)
		snprintf(dev, devlen, "%s", vi.device);
#else
	(void)be;
	(void)dev;
	(void)devlen;
	wm->link_gbps = 0;
#endif
	return 1;
}

dmr_status_t kv_cn_open(kvt_t *T, dmr_be_config_t *cfg, const kv_proc_t *P, dmr_err_t *err)
{
#ifdef DMR_HAVE_VERBS
	const dmr_verbs_cluster_t *cl = P->cl;
	memset(&kv_role, 0, sizeof(kv_role));
	kv_role.cl = cl;
	kv_role.self = P->self;
	kv_role.first_worker = T->g0;
	kv_role.need_bytes = DMR_KV_HDR;
	kv_role.barrier_s = P->barrier_s;
	kv_role.end_s = P->end_s;
	kv_role.keep_region = 1;
	cfg->cns = 1;
	cfg->mr_size = 64; /* the CN's image of the region: unused (keep_region) */
	cfg->device = cl->cn[P->self].devname;
	cfg->port = cl->cn[P->self].ibport;
	cfg->gid_index = cl->cn[P->self].gid;
	dmr_verbs_set_role(&kv_role);
	dmr_status_t st = dmr_be_open(cfg, &T->k->be, err);
	dmr_verbs_set_role(NULL);
	return st;
#else
	(void)T;
	(void)cfg;
	(void)P;
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED, "kv cn: built without verbs");
#endif
}

dmr_status_t kv_cn_barrier(kvt_t *T, dmr_be_barrier_phase_t phase, int failed, dmr_err_t *err)
{
	dmr_be_barrier_t b = {.phase = phase, .failed = failed != 0};
	int64_t sum;
	if (phase == DMR_BE_BARRIER_END)
		T->ended = 1;
	return dmr_be_barrier(T->k->be, &b, &sum, err);
}

/* One READ of the region's start into buf, waited for. */
static dmr_status_t cn_read_header(kvt_t *T, uint8_t *buf, uint32_t len, dmr_err_t *err)
{
	memset(buf, 0, len);
	dmr_wr_t wr = {.wr_id = dmr_wrid_n(DMR_WRID_KV_RPCR, DMR_KV_MB_SLOTS),
		       .local = buf,
		       .remote = 0,
		       .length = len,
		       .opcode = DMR_WR_READ,
		       .flags = DMR_WR_SIGNALED};
	dmr_status_t st = dmr_be_post(T->be, 0, 0, &wr, 1, err);
	if (st != DMR_OK)
		return st;
	dmr_wc_t wc;
	int n;
	dmr_time_ps_t tp = dmr_be_now(T->be, 0);
	while ((n = dmr_be_poll(T->be, 0, &wc, 1)) == 0) {
		if (dmr_be_now(T->be, 0) - tp > T->deadline_ps)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "kv cn: no completion of the READ of the pool header "
					   "within %.0f s (MN gone?)",
					   dmr_ps_to_s(T->deadline_ps));
		sched_yield();
	}
	if (n < 0 || wc.status != DMR_WC_SUCCESS)
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "kv cn: the READ of the pool header completed with %s",
				   n < 0 ? "a poll error" : dmr_wc_status_string(wc.status));
	return DMR_OK;
}

dmr_status_t kv_cn_check_geom(kvt_t *T, const dmr_kv_geom_t *mine, double secs, dmr_err_t *err)
{
	uint8_t *buf = T->c[0].lbuf;
	dmr_time_ps_t t0 = dmr_be_now(T->be, 0), wait_ps = dmr_ps_from_s(secs + 5);
	for (;;) {
		dmr_status_t st = cn_read_header(T, buf, 8 + (uint32_t)sizeof(dmr_kv_geom_t), err);
		if (st != DMR_OK)
			return st;
		uint64_t magic = dmr_kv_ld_u64(buf);
		if (magic == DMR_KV_MAGIC)
			break;
		if (magic != 0)
			return dmr_err_set(
			    err, DMR_ERR_INVALID,
			    "kv cn: the MN region does not start with a KV pool header "
			    "(word %#" PRIx64 "): is the MN `dmreplay kv mn`?",
			    magic);
		if (dmr_be_now(T->be, 0) - t0 > wait_ps)
			return dmr_err_set(
			    err, DMR_ERR_TIMEOUT,
			    "kv cn: no KV pool header in the MN region after %.0f s: "
			    "start the MN with `dmreplay kv mn` (a plain `dmreplay mn` "
			    "runs no master)",
			    secs + 5);
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	dmr_kv_geom_t mn;
	memcpy(&mn, buf + 8, sizeof(mn));
	return dmr_kv_geom_compare(&mn, mine, err);
}

/* ---- the master as the MN process (`dmreplay kv mn`) ------------------ */

#ifdef DMR_HAVE_VERBS
/* the MN loop's stop word: the master sets it on a failure, and forwards
 * SIGINT/SIGTERM (dmr_sig) into it (core/kv/master.h) */
static volatile int kv_mn_stop;

typedef struct kv_mn_ctx {
	kvt_t *T;
	const dmr_kv_geom_t *g;
} kv_mn_ctx_t;

/* dmr_verbs_role_t.mn_region: the region exists; header, then the master */
static dmr_status_t kv_mn_region(void *arg, void *base, uint64_t len, dmr_err_t *err)
{
	kv_mn_ctx_t *x = arg;
	kvt_t *T = x->T;
	if (len < T->lay.region)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv mn: the MN region has %" PRIu64
				   " bytes, the pool needs %" PRIu64,
				   len, T->lay.region);
	T->M.mem = base;
	dmr_kv_master_region(&T->M, x->g);
	dmr_status_t st = dmr_kv_master_start(&T->M, "kv mn", err);
	if (st != DMR_OK)
		return st;
	fprintf(stderr,
		"kv mn: master serving %u clients' mailboxes; pool of %" PRIu64
		" segments x %" PRIu64 " slots of %" PRIu64 " bytes at offset %" PRIu64
		" (region %" PRIu64 " bytes)\n",
		T->nc, x->g->segments, x->g->slots_per_seg, x->g->block_bytes, T->lay.pool_base,
		T->lay.region);
	return DMR_OK;
}

/* dmr_verbs_role_t.mn_region_end: stop the master before the region goes */
static void kv_mn_region_end(void *arg)
{
	kv_mn_ctx_t *x = arg;
	kv_stop(x->T);
	dmr_kv_master_join(&x->T->M);
}

/* The master's invariants, and every request of the trace looked up and
 * finished. */
static dmr_status_t kv_mn_check(const kvt_t *T, const dmr_kv_geom_t *g, dmr_err_t *err)
{
	const dmr_kv_pool_t *p = &T->k->pool;
	const dmr_kv_master_t *M = &T->M;
	uint64_t pinned, segused;
	if (dmr_kv_pool_consistent(p, &pinned, &segused) && M->finished == M->next_expected &&
	    M->next_expected == g->trace_requests)
		return DMR_OK;
	return dmr_err_set(err, DMR_ERR_VERIFY,
			   "kv mn: pool invariants broken: %" PRIu64 " pins left, %" PRIu64
			   " slots used by segments, %" PRIu64 " used, %" PRIu64 " mapped; %" PRIu64
			   " requests looked up, %" PRIu64 " finished, %" PRIu64 " in the trace",
			   pinned, segused, p->used, p->mapn, M->next_expected, M->finished,
			   g->trace_requests);
}

static dmr_status_t kv_mn_serve(const dmr_kv_opts_t *o, dmr_verbs_cluster_t *cl, uint32_t self,
				double barrier_s, double end_s, dmr_kv_result_t *res,
				dmr_err_t *err)
{
	kv_t K, *k = &K;
	kvt_t TT, *T = &TT;
	kv_begin(k, o, err);
	memset(T, 0, sizeof(TT));
	memset(res, 0, sizeof(*res));
	T->k = k;
	T->w0 = dmr_wall_s();
	T->mode = KVM_MN;
	T->nc = cl->ncn * o->clients;
	dmr_status_t st = kv_check_opts(o, err);
	if (st != DMR_OK)
		return st;
	if ((st = dmr_kv_trace_open(o->trace, &k->rd, err)) != DMR_OK)
		return st;
	dmr_kv_geom_t g;
	if ((st = kv_plan(k, T, &g)) != DMR_OK ||
	    (st = dmr_kv_master_init(&T->M, &k->pool, T->nc, "kv mn", err)) != DMR_OK)
		goto out;
	T->M.lay = T->lay;
	T->M.deadline_ps = dmr_ps_from_s(o->timeout_s);
	T->M.w0 = T->w0;
	T->M.stop = &T->stop;
	T->M.stop_ext = &kv_mn_stop;
	uint64_t need = (T->lay.region + 7) & ~7ull;
	if (cl->mn[self].mr_size < need) {
		fprintf(stderr,
			"kv mn: note: mr_size %" PRIu64
			" of the config raised to the pool's %" PRIu64 " bytes\n",
			cl->mn[self].mr_size, need);
		cl->mn[self].mr_size = need;
	}
	kv_mn_ctx_t x = {.T = T, .g = &g};
	kv_mn_stop = 0;
	dmr_verbs_role_t role = {.cl = cl,
				 .self = self,
				 .barrier_s = barrier_s,
				 .end_s = end_s,
				 .stop = &kv_mn_stop,
				 .mn_region = kv_mn_region,
				 .mn_region_end = kv_mn_region_end,
				 .mn_arg = &x};
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	st = dmr_verbs_mn_main(&role, err);
	kv_mn_region_end(&x); /* (already, unless the region never existed) */
	dmr_sig_restore(&saved);
	if (T->M.st != DMR_OK) /* the MN loop only saw "stop" */
		st = dmr_err_set(err, T->M.st, "%s", T->M.err.msg);
	if (st == DMR_OK)
		st = kv_mn_check(T, &g, err);
	kv_take_pool(k);
	k->cnt[KV_COMPLETED] = T->M.finished;
	k->cnt[KV_ARRIVALS] = T->M.next_expected;
	res->partial = st != DMR_OK;
	/* one time-series row: the whole run */
	kv_ts_init(k, dmr_ps_from_s(dmr_wall_s() - T->w0) + 1);
	dmr_tseries_close(&k->ts, k->cnt, NULL);
	kv_fill_result(k, res, NULL, 0);
	snprintf(res->backend, sizeof(res->backend), "verbs");
	snprintf(res->profile, sizeof(res->profile), "%s",
		 cl->mn[self].devname[0] ? cl->mn[self].devname : "-");
	res->wall_s = dmr_wall_s() - T->w0;
	if (o->out_dir) {
		dmr_err_t werr;
		if (kv_write_results(k, res, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_WRITE, "%s", werr.msg);
	}
out:
	dmr_kv_master_fini(&T->M);
	kv_free(k);
	dmr_kv_trace_close(k->rd);
	return st;
}
#endif

/* ---- `kv mn` / `kv cn` ------------------------------------------------- */

/* The index of node a->id (-1: the first) among the config's MNs or CNs;
 * -1 (printed) when there is none. */
static int kv_proc_node(const dmr_verbs_cluster_t *cl, const kv_proc_args_t *a, uint32_t *idx_p)
{
	const dmr_verbs_node_t *nodes = a->mode == KVM_CN ? cl->cn : cl->mn;
	const char *what = a->mode == KVM_CN ? "CN" : "MN";
	uint32_t nn = a->mode == KVM_CN ? cl->ncn : cl->nmn, i;
	for (i = 0; i < nn; i++)
		if (a->id < 0 || nodes[i].id == (uint64_t)a->id)
			break;
	if (i < nn) {
		*idx_p = i;
		return 0;
	}
	char ids[256] = "";
	size_t off = 0;
	for (uint32_t j = 0; j < nn && off < sizeof(ids); j++)
		off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%u", j ? ", " : "",
					nodes[j].id);
	fprintf(stderr, "dmreplay %s: error: %s: no %s with id %lld (%s ids: %s)\n", a->cmd,
		a->config, what, a->id, what, ids);
	return -1;
}

int kv_proc_run(dmr_kv_opts_t *o, const kv_proc_args_t *a, dmr_kv_result_t *r, dmr_err_t *err,
		dmr_status_t *st_p)
{
	static dmr_verbs_cluster_t cl; /* outlives the backend (the CN role) */
	const char *cmd = a->cmd;
	char note[256] = "";
	uint32_t idx = 0;
	if (!a->config) {
		fprintf(stderr,
			"dmreplay %s: --config CLUSTER.json is required (dmreplay %s --help)\n",
			cmd, cmd);
		return 2;
	}
	if (!o->trace) {
		fprintf(stderr, "dmreplay %s: --trace KVTRACE is required\n", cmd);
		return 2;
	}
	if (a->saw_be && strcmp(o->backend, "verbs") != 0) {
		fprintf(stderr,
			"dmreplay %s: --backend %s: the pool as processes runs on verbs only\n",
			cmd, o->backend);
		return 2;
	}
	if (a->saw_dev) {
		fprintf(stderr,
			"dmreplay %s: --device, --port and --gid-index come from the "
			"cluster config (devname, ibport, gid)\n",
			cmd);
		return 2;
	}
	if (a->mode == KVM_CN && a->id < 0) {
		fprintf(stderr, "dmreplay kv cn: --id K is required (a CN id of %s)\n", a->config);
		return 2;
	}
	if (dmr_cluster_load(a->config, &cl, note, sizeof(note), err) != DMR_OK) {
		fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err->msg);
		return 2;
	}
	if (note[0])
		fprintf(stderr, "dmreplay %s: note: %s\n", cmd, note);
	if (kv_proc_node(&cl, a, &idx) != 0)
		return 2;
	if (a->saw_cns && o->cns != cl.ncn) {
		fprintf(stderr, "dmreplay %s: --cns %u but %s lists %u CNs\n", cmd, o->cns,
			a->config, cl.ncn);
		return 2;
	}
	o->cns = cl.ncn;
	o->backend = "verbs";
#ifdef DMR_HAVE_VERBS
	if (a->mode == KVM_MN) {
		if (dmr_kv_out_check(o->out_dir, err) != DMR_OK) {
			fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err->msg);
			return 2;
		}
		*st_p = kv_mn_serve(o, &cl, idx, a->barrier_s, a->end_s, r, err);
	} else {
		kv_proc_t P = {.mode = KVM_CN,
			       .cl = &cl,
			       .self = idx,
			       .barrier_s = a->barrier_s,
			       .end_s = a->end_s};
		*st_p = kv_run_common(o, &P, r, err);
	}
	return -1;
#else
	(void)r;
	(void)st_p;
	fprintf(stderr,
		"dmreplay %s: error: built without the verbs backend (libibverbs-dev, "
		"librdmacm-dev; -DDMR_VERBS=ON)\n",
		cmd);
	return 2;
#endif
}

/* ---- `kv run --backend verbs --procs`: kv mn + kv cn as child processes -- */

#define PFX "dmreplay kv run --procs"

/* The first data row of a summary CSV: values of `keys` into vals ("-" when
 * missing); 0 when the file was read. */
static int kv_csv_row(const char *path, const char *const keys[], int nk, char vals[][64])
{
	for (int i = 0; i < nk; i++)
		snprintf(vals[i], 64, "-");
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char hdr[4096], row[4096];
	int ok = fgets(hdr, sizeof(hdr), f) && fgets(row, sizeof(row), f);
	fclose(f);
	if (!ok)
		return -1;
	hdr[strcspn(hdr, "\r\n")] = 0;
	row[strcspn(row, "\r\n")] = 0;
	char *hs, *rs, *h = strtok_r(hdr, ",", &hs);
	char *r = strtok_r(row, ",", &rs);
	for (; h && r; h = strtok_r(NULL, ",", &hs), r = strtok_r(NULL, ",", &rs))
		for (int i = 0; i < nk; i++)
			if (strcmp(h, keys[i]) == 0)
				snprintf(vals[i], 64, "%s", r);
	return 0;
}

static const char *const kv_launch_keys[] = {"status",	   "requests",	 "blocks_requested",
					     "blocks_got", "blocks_put", "hit_ratio",
					     "p50_us",	   "p99_us",	 "rpc_us"};
#define KV_NKEYS 9

/* A child process of the launcher. */
typedef struct kv_child {
	char name[16], log[1100], out[1100], id[16];
	char vals[KV_NKEYS][64]; /* of its summary */
} kv_child_t;

_Static_assert(sizeof(kv_child_t) % sizeof(int) == 0, "the status ints follow the children");

/* The launcher's state: the MN, then the CNs; one allocation (mem). */
typedef struct kv_launch {
	uint32_t n;
	kv_child_t *ch;
	char ***argvs; /* n argv vectors, in av */
	const char **names, **logs;
	int *status;
	char **av;
	void *mem;
} kv_launch_t;

/* Write OUT/NAME (summary.csv or summary.partial.csv): a row per child. */
static dmr_status_t kv_launch_summary(const kv_launch_t *L, const char *dir, const char *name,
				      dmr_err_t *err)
{
	dmr_afile_t a;
	dmr_status_t st = kv_afile_open(&a, dir, name, err);
	if (st != DMR_OK)
		return st;
	fprintf(a.f, "scope,exit");
	for (int i = 0; i < KV_NKEYS; i++)
		fprintf(a.f, ",%s", kv_launch_keys[i]);
	fprintf(a.f, "\n");
	for (uint32_t i = 0; i < L->n; i++) {
		fprintf(a.f, "%s,%d", L->ch[i].name, L->status[i]);
		for (int j = 0; j < KV_NKEYS; j++)
			fprintf(a.f, ",%s", L->ch[i].vals[j]);
		fprintf(a.f, "\n");
	}
	return dmr_afile_commit(&a, err);
}

/* Options of kv run that the launcher consumes (not passed to the children);
 * 1 = takes a value */
static int kv_launch_own(const char *a, int *takes_value)
{
	static const struct {
		const char *name;
		int arg;
	} own[] = {{"--procs", 0}, {"--backend", 1},   {"--device", 1},
		   {"--port", 1},  {"--gid-index", 1}, {"--cns", 1},
		   {"--out", 1},   {"--deadline", 1},  {"--config", 1}};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		size_t l = strlen(own[i].name);
		if (strncmp(a, own[i].name, l) == 0 && (a[l] == 0 || a[l] == '=')) {
			*takes_value = own[i].arg && a[l] == 0;
			return 1;
		}
	}
	return 0;
}

/* The cluster: the given config (--cns, if given, must match it), or
 * OUT/cluster.json for --cns (2) CNs on this host's device. Once every
 * check passed, an earlier run's files in OUT are moved aside
 * (dmr_kv_out_claim): before OUT/cluster.json is written, after the given
 * config was read (one inside OUT is then read from where it moved).
 * Errors are printed; 0 or 2. */
static int kv_launch_cluster(const dmr_kv_opts_t *o, const kv_proc_args_t *a,
			     dmr_verbs_cluster_t *cl, char *cfgpath, size_t cfglen)
{
	char note[256] = "", moved[PATH_MAX] = "";
	dmr_err_t err = {{0}};
	if (a->config) {
		if (dmr_cluster_load(a->config, cl, note, sizeof(note), &err) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", PFX, err.msg);
			return 2;
		}
		if (a->saw_cns && o->cns != cl->ncn) {
			fprintf(stderr, "%s: error: --cns %u but %s lists %u CNs\n", PFX, o->cns,
				a->config, cl->ncn);
			return 2;
		}
		/* OUT/cluster.json given as the config? (it moves with the
		 * earlier run's files) */
		char inout[PATH_MAX + 16];
		struct stat sa, sb;
		snprintf(inout, sizeof(inout), "%s/cluster.json", o->out_dir);
		int cfg_in_out = stat(a->config, &sa) == 0 && stat(inout, &sb) == 0 &&
				 sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
		int rc = dmr_kv_out_claim(o->out_dir, moved, sizeof(moved));
		if (rc)
			return rc;
		if (cfg_in_out && moved[0])
			snprintf(cfgpath, cfglen, "%s/cluster.json", moved);
		else
			snprintf(cfgpath, cfglen, "%s", a->config);
		return 0;
	}
#ifdef DMR_HAVE_VERBS
	uint32_t ncn = a->saw_cns ? o->cns : 2;
	if (ncn > DMR_VERBS_MAX_NODES) {
		fprintf(stderr, "%s: error: --cns %u: 1..%d processes\n", PFX, ncn,
			DMR_VERBS_MAX_NODES);
		return 2;
	}
	dmr_verbs_info_t vi;
	if (dmr_verbs_probe(o->device, o->port, o->gid_index, &vi, &err) != DMR_OK) {
		fprintf(stderr, "%s: error: %s\n", PFX, err.msg);
		return 2;
	}
	int rc = dmr_kv_out_claim(o->out_dir, moved, sizeof(moved));
	if (rc)
		return rc;
	snprintf(cfgpath, cfglen, "%s/cluster.json", o->out_dir);
	/* mr_size: kv mn raises it to the pool's region; an rdma_cm port of
	 * this run's own */
	if (dmr_cluster_write_host(cfgpath, &vi, 1, ncn, 4096, (uint16_t)(20000 + getpid() % 20000),
				   &err) != DMR_OK ||
	    dmr_cluster_load(cfgpath, cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "%s: error: %s\n", PFX, err.msg);
		return 2;
	}
	return 0;
#else
	(void)cl;
	(void)cfgpath;
	(void)cfglen;
	fprintf(stderr, "%s: error: built without the verbs backend\n", PFX);
	return 2;
#endif
}

/* The children's argv: their own options, then kv run's other options.
 * -1 when out of memory. */
static int kv_launch_argv(kv_launch_t *L, int argc, char **argv, const dmr_kv_opts_t *o,
			  const dmr_verbs_cluster_t *cl, char *cfgpath)
{
	uint32_t n = L->n;
	size_t per = (size_t)argc + 12;
	size_t ptrs = n * (per + 3); /* av, argvs, names, logs */
	L->mem = calloc(1, ptrs * sizeof(char *) + n * (sizeof(kv_child_t) + sizeof(int)));
	if (!L->mem)
		return -1;
	L->av = L->mem;
	L->argvs = (char ***)(L->av + n * per);
	L->names = (const char **)(L->argvs + n);
	L->logs = L->names + n;
	L->ch = (kv_child_t *)(void *)(L->logs + n);
	L->status = (int *)(void *)(L->ch + n);
	for (uint32_t i = 0; i < n; i++) {
		kv_child_t *c = &L->ch[i];
		char **a = L->av + i * per;
		int ac = 0;
		L->argvs[i] = a;
		a[ac++] = "dmreplay";
		a[ac++] = "kv";
		a[ac++] = i ? "cn" : "mn";
		a[ac++] = "--config";
		a[ac++] = cfgpath;
		a[ac++] = "--id";
		snprintf(c->id, sizeof(c->id), "%u", i ? cl->cn[i - 1].id : cl->mn[0].id);
		a[ac++] = c->id;
		if (i)
			snprintf(c->name, sizeof(c->name), "cn%u", cl->cn[i - 1].id);
		else
			snprintf(c->name, sizeof(c->name), "mn");
		snprintf(c->out, sizeof(c->out), "%s/%s", o->out_dir, c->name);
		snprintf(c->log, sizeof(c->log), "%s/%s.log", o->out_dir, c->name);
		a[ac++] = "--out";
		a[ac++] = c->out;
		for (int j = 1; j < argc; j++) {
			int tv = 0;
			if (kv_launch_own(argv[j], &tv)) {
				j += tv;
				continue;
			}
			a[ac++] = argv[j];
		}
		a[ac] = NULL;
		L->names[i] = c->name;
		L->logs[i] = c->log;
	}
	return 0;
}

/* Read the children's summaries; 1 when every child's run is complete. */
static int kv_launch_read(kv_launch_t *L, int started, int *any2_p)
{
	int complete = 1;
	*any2_p = 0;
	for (uint32_t i = 0; i < L->n; i++) {
		kv_child_t *c = &L->ch[i];
		char sp[1200];
		if (!started) { /* exit -1, status not-started: nothing ran */
			L->status[i] = -1;
			snprintf(c->vals[0], sizeof(c->vals[0]), "not-started");
			complete = 0;
			continue;
		}
		snprintf(sp, sizeof(sp), "%s/summary.csv", c->out);
		if (L->status[i] != 0 || kv_csv_row(sp, kv_launch_keys, KV_NKEYS, c->vals) != 0) {
			complete = 0;
			snprintf(sp, sizeof(sp), "%s/summary.partial.csv", c->out);
			kv_csv_row(sp, kv_launch_keys, KV_NKEYS, c->vals);
		}
		*any2_p |= L->status[i] == 2;
		if (strcmp(c->vals[0], "complete") != 0)
			complete = 0;
	}
	return complete;
}

static int kv_launch_body(int argc, char **argv, const dmr_kv_opts_t *o, const kv_proc_args_t *pa)
{
	static dmr_verbs_cluster_t cl;
	char cfgpath[1100];
	dmr_err_t err = {{0}};
	if (strcmp(o->backend, "verbs") != 0) {
		fprintf(stderr, "%s: error: --procs/--config need --backend verbs (have %s)\n", PFX,
			o->backend);
		return 2;
	}
	if (!o->trace) {
		fprintf(stderr, "%s: error: --trace KVTRACE is required\n", PFX);
		return 2;
	}
	if (!o->out_dir) {
		fprintf(stderr, "%s: error: --out DIR is required\n", PFX);
		return 2;
	}
	if (dmr_kv_out_check(o->out_dir, &err) != DMR_OK) {
		fprintf(stderr, "%s: error: %s\n", PFX, err.msg);
		return 2;
	}
	int rc = kv_launch_cluster(o, pa, &cl, cfgpath, sizeof(cfgpath));
	if (rc)
		return rc;
	kv_launch_t L = {.n = 1 + cl.ncn};
	if (kv_launch_argv(&L, argc, argv, o, &cl, cfgpath) != 0) {
		fprintf(stderr, "%s: error: out of memory\n", PFX);
		return 1;
	}
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/summary.partial.csv", o->out_dir);
	unlink(p); /* a stale partial goes; a finished summary.csv stays until this run finished */
	fprintf(stderr,
		"%s: MN %u (the master) at %s:%u and %u CN processes x %u clients; config %s; "
		"logs %s/mn.log, %s/cnK.log\n",
		PFX, cl.mn[0].id, cl.mn[0].ip, cl.port, cl.ncn, o->clients, cfgpath, o->out_dir,
		o->out_dir);
	int wrc, started = !dmr_sig_caught();
	if (started) {
		wrc = dmr_roles_spawn_wait(PFX, L.n, (char **const *)L.argvs, L.names, L.logs,
					   pa->deadline_s, L.status);
		if (dmr_sig_caught()) /* after spawn_wait restored our handler */
			wrc = 130;
	} else { /* interrupted before the children were started */
		fprintf(stderr, "%s: interrupted by signal %d before the processes were started\n",
			PFX, dmr_sig_caught());
		wrc = 130;
	}
	int any2, complete = kv_launch_read(&L, started, &any2) && wrc == 0;
	dmr_status_t st = kv_launch_summary(&L, o->out_dir,
					    complete ? "summary.csv" : "summary.partial.csv", &err);
	if (st != DMR_OK)
		fprintf(stderr, "%s: error: %s\n", PFX, err.msg);
	if (st == DMR_OK && complete)
		unlink(p);
	for (uint32_t i = 0; i < L.n; i++) {
		char(*v)[64] = L.ch[i].vals;
		printf("  %-5s %-9s exit %d, requests %s, blocks requested %s, got %s, put %s, hit "
		       "ratio %s%s\n",
		       L.ch[i].name, v[0], L.status[i], v[1], v[2], v[3], v[4], v[5],
		       i ? "" : " (the master: the whole trace)");
	}
	printf("dmreplay kv: %s on verbs (%s), MN + %u CN processes x %u clients: hit ratio %s%s\n",
	       o->trace, cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0", cl.ncn, o->clients,
	       L.ch[0].vals[5], complete ? "" : "  [PARTIAL]");
	printf("  results        %s/%s, %s/mn/, %s/cnK/\n", o->out_dir,
	       complete ? "summary.csv" : "summary.partial.csv", o->out_dir, o->out_dir);
	if (!complete && started)
		for (uint32_t i = 0; i < L.n; i++)
			if (L.status[i] != 0)
				fprintf(stderr, "%s: %s exited %d: see %s\n", PFX, L.ch[i].name,
					L.status[i], L.ch[i].log);
	free(L.mem);
	return wrc == 130 ? 130 : complete && st == DMR_OK ? 0 : any2 && wrc == 0 ? 2 : 1;
}

/* kv run --procs / --config: the signal handling goes in first of all, so a
 * SIGINT/SIGTERM before the children run still gives a partial summary and
 * exit 130 (dmr_roles_spawn_wait installs its own handlers while it waits,
 * forwarding to the children, and restores these). */
int kv_launch(int argc, char **argv, const dmr_kv_opts_t *o, const kv_proc_args_t *a)
{
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	int rc = kv_launch_body(argc, argv, o, a);
	dmr_sig_restore(&saved);
	return rc;
}
