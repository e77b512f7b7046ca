/*
 * replay/kv/store_cli.c - the key/value store's command lines
 * (replay/kvstore.h; docs/KVCACHE.md section 10): `kv set|get|del` as a CN
 * process of a cluster config that reaches a running `kv mn` store over
 * verbs, `kv mn` without --trace (the store as the MN process), `kv run`
 * of a kvops trace on one process's backend, `kv gen --kvops`. Like
 * roles.c, this file reaches the verbs backend's own API (the roles).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../backends/verbs/verbs.h"
#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "../../traces/kvops.h"
#include "../kv.h"
#include "../kvstore.h"
#include "../roles.h"
#include "../setup.h"

/* ---- reading a value: FILE or - (stdin), bounded ----------------------- */

static dmr_status_t read_value(const char *path, uint8_t **buf_p, uint64_t *len_p, dmr_err_t *err)
{
	int in = strcmp(path, "-") == 0;
	FILE *f = in ? stdin : fopen(path, "rb");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (!in && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (uint64_t)sb.st_size > DMR_KV_VALUE_LIMIT) {
		fclose(f);
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "%s: %" PRIu64 " bytes: above the limit of %llu bytes for one "
				   "value (DMR_KV_VALUE_LIMIT); nothing was written",
				   path, (uint64_t)sb.st_size,
				   (unsigned long long)DMR_KV_VALUE_LIMIT);
	}
	uint64_t cap = 1 << 20, n = 0;
	uint8_t *b = malloc(cap);
	for (;;) {
		if (!b) {
			if (!in)
				fclose(f);
			return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
		}
		size_t got = fread(b + n, 1, (size_t)(cap - n), f);
		n += got;
		if (n > DMR_KV_VALUE_LIMIT) {
			free(b);
			if (!in)
				fclose(f);
			return dmr_err_set(
			    err, DMR_ERR_RANGE,
			    "%s: more than %llu bytes: above the limit for one value "
			    "(DMR_KV_VALUE_LIMIT); nothing was written",
			    path, (unsigned long long)DMR_KV_VALUE_LIMIT);
		}
		if (got == 0)
			break;
		if (n == cap) {
			cap *= 2;
			uint8_t *nb = realloc(b, cap);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int bad = ferror(f);
	if (!in)
		fclose(f);
	if (bad) {
		free(b);
		return dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
	}
	*buf_p = b;
	*len_p = n;
	return DMR_OK;
}

/* ---- the CN process: a client of the store over verbs ------------------ */

typedef struct cli_args {
	const char *config, *out;
	long long id;
	double timeout_s;
	uint64_t chunk;
	uint32_t depth;
} cli_args_t;

#ifdef DMR_HAVE_VERBS
static dmr_verbs_role_t cli_role;
static dmr_verbs_cluster_t cli_cl;
#endif

/* Open the verbs backend as CN `self` of the config (no barriers: the
 * store is a service) and the client on mailbox self. */
static dmr_status_t cli_connect(const cli_args_t *a, uint32_t self, dmr_be_t **be_p,
				dmr_kv_cli_t *c, dmr_err_t *err)
{
#ifdef DMR_HAVE_VERBS
	memset(&cli_role, 0, sizeof(cli_role));
	cli_role.cl = &cli_cl;
	cli_role.self = self;
	cli_role.first_worker = self;
	cli_role.need_bytes = DMR_KV_HDR;
	cli_role.barrier_s = a->timeout_s;
	cli_role.end_s = a->timeout_s;
	cli_role.keep_region = 1;
	cli_role.service = 1;
	dmr_be_config_t cfg = {.backend = "verbs",
			       .mns = cli_cl.nmn,
			       .cns = 1,
			       .workers = 1,
			       .mr_size = 64,
			       .seed = 1,
			       .device = cli_cl.cn[self].devname,
			       .port = cli_cl.cn[self].ibport,
			       .gid_index = cli_cl.cn[self].gid};
	dmr_verbs_set_role(&cli_role);
	dmr_status_t st = dmr_be_open(&cfg, be_p, err);
	dmr_verbs_set_role(NULL);
	if (st != DMR_OK)
		return st;
	dmr_kv_cli_cfg_t cc = {.be = *be_p,
			       .worker = 0,
			       .client = self,
			       .chunk = a->chunk,
			       .depth = a->depth,
			       .timeout_s = a->timeout_s};
	return dmr_kv_cli_open(c, &cc, err);
#else
	(void)a;
	(void)self;
	(void)be_p;
	(void)c;
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED, "built without verbs (rdma-core)");
#endif
}

static void cli_usage(FILE *f)
{
	fprintf(f, "usage: dmreplay kv set KEY FILE|- --config C --id K [options]\n"
		   "       dmreplay kv get KEY... --config C --id K [-o FILE] [options]\n"
		   "       dmreplay kv del KEY --config C --id K [options]\n"
		   "  a client (CN K of the cluster config C) of the key/value store that\n"
		   "  `dmreplay kv mn --config C` serves over verbs (docs/KVCACHE.md 10)\n"
		   "  -o FILE           get: the values (concatenated, key order) to FILE, not "
		   "stdout\n"
		   "  --timeout-s S     longest wait for an answer or a completion (30)\n"
		   "  --chunk BYTES     bytes per WRITE/READ (1M; at most the store's block)\n"
		   "  --depth N         WRs in flight (8)\n"
		   "exit: 0, 1 not found or a failed operation, 2 bad input (nothing written)\n");
}

int dmr_kv_store_cli_main(int argc, char **argv)
{
	const char *cmd = argv[0];
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"id", required_argument, NULL, 'i'},
					     {"timeout-s", required_argument, NULL, 't'},
					     {"chunk", required_argument, NULL, 'k'},
					     {"depth", required_argument, NULL, 'd'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	cli_args_t a = {.id = -1, .timeout_s = 30};
	dmr_err_t err = {{0}};
	char kvcmd[16]; /* "kv set" for dmr_opt_refused */
	snprintf(kvcmd, sizeof(kvcmd), "kv %s", cmd);
	int ch;
	optind = 1;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		dmr_status_t st = DMR_OK;
		int64_t id;
		switch (ch) {
		case 'c':
			a.config = optarg;
			break;
		case 'o':
			a.out = optarg;
			break;
		case 'i':
			st = dmr_opt_i64("--id", optarg, 0, UINT32_MAX, &id, &err);
			a.id = id;
			break;
		case 't':
			st = dmr_opt_double("--timeout-s", optarg, 0, 3600, DMR_OPT_LO_OPEN,
					    &a.timeout_s, &err);
			break;
		case 'k':
			st = dmr_opt_u64("--chunk", optarg, 8, 1ull << 30, DMR_OPT_SIZE, &a.chunk,
					 &err);
			break;
		case 'd':
			st = dmr_opt_u32("--depth", optarg, 1, 64, 0, &a.depth, &err);
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		default:
			st = dmr_opt_refused(kvcmd, ch, argv, opts, &err);
			break;
		}
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay kv %s: %s\n", cmd, err.msg);
			return 2;
		}
	}
	int nargs = argc - optind, is_set = !strcmp(cmd, "set"), is_get = !strcmp(cmd, "get");
	if ((is_set && nargs != 2) || (is_get && nargs < 1) || (!is_set && !is_get && nargs < 1)) {
		fprintf(stderr, "dmreplay kv %s: ", cmd);
		cli_usage(stderr);
		return 2;
	}
	if (!is_set && !is_get && nargs != 1) {
		fprintf(stderr, "dmreplay kv del: one KEY, %d given\n", nargs);
		return 2;
	}
	if (a.out && !is_get) {
		fprintf(stderr, "dmreplay kv %s: -o is an option of kv get\n", cmd);
		return 2;
	}
	if (nargs > (int)DMR_KVOPS_MAX_GET) {
		fprintf(stderr, "dmreplay kv get: %d keys: at most %u in one get\n", nargs,
			DMR_KVOPS_MAX_GET);
		return 2;
	}
	/* bad input first, before anything connects: keys, the value */
	int nkeys = is_set ? 1 : nargs;
	for (int i = 0; i < nkeys; i++)
		if (dmr_kv_key_check(argv[optind + i], strlen(argv[optind + i]), &err) != DMR_OK) {
			fprintf(stderr, "dmreplay kv %s: error: %s\n", cmd, err.msg);
			return 2;
		}
	if (!a.config) {
		fprintf(stderr,
			"dmreplay kv %s: --config CLUSTER.json is required (the cluster "
			"of the `kv mn` store)\n",
			cmd);
		return 2;
	}
	if (a.id < 0) {
		fprintf(stderr, "dmreplay kv %s: --id K is required (a CN id of %s: its mailbox)\n",
			cmd, a.config);
		return 2;
	}
	uint8_t *val = NULL;
	uint64_t vlen = 0;
	if (is_set && read_value(argv[optind + 1], &val, &vlen, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay kv set: error: %s\n", err.msg);
		return 2;
	}
	int rc = 2;
	dmr_be_t *be = NULL;
	dmr_kv_cli_t c;
	memset(&c, 0, sizeof(c));
#ifdef DMR_HAVE_VERBS
	char note[512];
	uint32_t self = 0;
	if (dmr_cluster_load(a.config, &cli_cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "dmreplay kv %s: error: %s\n", cmd, err.msg);
		goto out;
	}
	while (self < cli_cl.ncn && cli_cl.cn[self].id != (uint64_t)a.id)
		self++;
	if (self == cli_cl.ncn) {
		fprintf(stderr, "dmreplay kv %s: error: %s: no CN with id %lld\n", cmd, a.config,
			a.id);
		goto out;
	}
#else
	uint32_t self = 0;
	{
		dmr_verbs_cluster_t cl;
		char note[512];
		if (dmr_cluster_load(a.config, &cl, note, sizeof(note), &err) != DMR_OK) {
			fprintf(stderr, "dmreplay kv %s: error: %s\n", cmd, err.msg);
			goto out;
		}
		while (self < cl.ncn && cl.cn[self].id != (uint64_t)a.id)
			self++;
		if (self == cl.ncn) {
			fprintf(stderr, "dmreplay kv %s: error: %s: no CN with id %lld\n", cmd,
				a.config, a.id);
			goto out;
		}
	}
#endif
	dmr_status_t st = cli_connect(&a, self, &be, &c, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv %s: error: %s\n", cmd, err.msg);
		rc = dmr_exit_status(st);
		goto out;
	}
	const char *key = argv[optind];
	uint64_t t0 = dmr_be_now(be, 0), bytes = 0, dt = 0;
	if (is_set) {
		st = dmr_kv_set(&c, key, strlen(key), val, vlen, &err);
		bytes = vlen;
	} else if (is_get) {
		const void *keys[DMR_KVOPS_MAX_GET];
		uint64_t kl[DMR_KVOPS_MAX_GET];
		dmr_kv_value_t out[DMR_KVOPS_MAX_GET];
		for (int i = 0; i < nkeys; i++) {
			keys[i] = argv[optind + i];
			kl[i] = strlen(argv[optind + i]);
		}
		st = dmr_kv_get(&c, (uint32_t)nkeys, keys, kl, out, &err);
		dt = dmr_be_now(be, 0) - t0; /* the get itself, not the output */
		if (st == DMR_OK) {
			uint64_t total = 0, off = 0;
			for (int i = 0; i < nkeys; i++)
				total += out[i].len;
			uint8_t *all = malloc(total ? total : 1);
			if (!all)
				st = dmr_err_set(&err, DMR_ERR_NOMEM, "out of memory");
			for (int i = 0; all && i < nkeys; i++) {
				memcpy(all + off, out[i].data, out[i].len);
				off += out[i].len;
			}
			if (all && a.out)
				st = dmr_file_write_atomic(a.out, all, total, &err);
			else if (all && fwrite(all, 1, total, stdout) != total)
				st = dmr_err_set(&err, DMR_ERR_WRITE, "stdout: write failed");
			free(all);
			bytes = total;
		}
		dmr_kv_values_free(out, (uint32_t)nkeys);
	} else {
		st = dmr_kv_del(&c, key, strlen(key), &err);
	}
	if (!is_get)
		dt = dmr_be_now(be, 0) - t0;
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv %s: error: %s\n", cmd, err.msg);
		rc = dmr_exit_status(st); /* not found: 1; too big, bad key: 2 */
		goto out;
	}
	double s = dmr_ps_to_s(dt);
	fprintf(stderr,
		"dmreplay kv %s %s%s: %" PRIu64 " bytes in %.3f ms (%.1f MB/s), CN %lld, %" PRIu64
		" RPCs\n",
		cmd, key, nkeys > 1 ? " ..." : "", bytes, s * 1e3,
		s > 0 ? (double)bytes / s / 1e6 : 0.0, a.id, c.st.rpcs);
	rc = 0;
out:
	if (c.cfg.be)
		dmr_kv_cli_close(&c);
	dmr_be_close(be);
	free(val);
	return rc;
}

/* ---- kv mn without --trace: the store as the MN process ------------------ */

#ifdef DMR_HAVE_VERBS
static volatile int mn_stop;

typedef struct mn_ctx {
	dmr_kv_local_t *L; /* pool, store, master, layout, header (no backend) */
} mn_ctx_t;

static dmr_status_t mn_region(void *arg, void *base, uint64_t len, dmr_err_t *err)
{
	dmr_kv_local_t *L = ((mn_ctx_t *)arg)->L;
	if (len < L->lay.region)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv mn: the MN region has %" PRIu64
				   " bytes, the store needs %" PRIu64,
				   len, L->lay.region);
	L->m.mem = base;
	dmr_kv_master_region_store(&L->m, &L->g);
	dmr_status_t st = dmr_kv_master_start(&L->m, "kv mn", err);
	if (st == DMR_OK)
		fprintf(stderr,
			"kv mn: key/value store: %" PRIu64 " blocks of %" PRIu64
			" bytes, values up to %" PRIu64 " bytes, %" PRIu64
			" mailboxes (CN index = mailbox); region %" PRIu64 " bytes; until "
			"SIGINT/SIGTERM\n",
			L->g.slots, L->g.block_bytes, L->g.val_max, L->g.clients, L->g.region);
	return st;
}

static void mn_region_end(void *arg)
{
	dmr_kv_local_t *L = ((mn_ctx_t *)arg)->L;
	__atomic_store_n(&L->stop, 1, __ATOMIC_RELAXED);
	dmr_kv_master_join(&L->m);
}
#endif

int dmr_kv_store_mn_main(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"id", required_argument, NULL, 'i'},
					     {"capacity", required_argument, NULL, 'C'},
					     {"block-bytes", required_argument, NULL, 'b'},
					     {"max-value", required_argument, NULL, 'm'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *config = NULL;
	int64_t id = -1;
	uint64_t cap = DMR_KV_STORE_CAPACITY, block = DMR_KV_STORE_BLOCK, vmax = 0;
	dmr_err_t err = {{0}};
	int ch;
	optind = 1;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		dmr_status_t st = DMR_OK;
		switch (ch) {
		case 'c':
			config = optarg;
			break;
		case 'i':
			st = dmr_opt_i64("--id", optarg, 0, UINT32_MAX, &id, &err);
			break;
		case 'C':
			st = dmr_opt_u64("--capacity", optarg, 1, 1ull << 40, DMR_OPT_SIZE, &cap,
					 &err);
			break;
		case 'b':
			st = dmr_opt_u64("--block-bytes", optarg, 64, 1ull << 30, DMR_OPT_SIZE,
					 &block, &err);
			break;
		case 'm':
			st = dmr_opt_u64("--max-value", optarg, 1, DMR_KV_VALUE_LIMIT, DMR_OPT_SIZE,
					 &vmax, &err);
			break;
		case 'h':
			printf(
			    "usage: dmreplay kv mn --config C [--id M] [--capacity BYTES (256M)] "
			    "[--block-bytes B (1M)] [--max-value B]\n"
			    "  without --trace: the key/value store as the MN process, until "
			    "SIGINT/SIGTERM (exit 130); clients: kv set|get|del\n");
			return 0;
		default:
			st = dmr_opt_refused("kv mn", ch, argv, opts, &err);
			break;
		}
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay kv mn: %s\n", err.msg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv mn: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!config) {
		fprintf(stderr, "dmreplay kv mn: --config CLUSTER.json is required\n");
		return 2;
	}
#ifdef DMR_HAVE_VERBS
	static dmr_verbs_cluster_t cl;
	char note[512];
	if (dmr_cluster_load(config, &cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "dmreplay kv mn: error: %s\n", err.msg);
		return 2;
	}
	uint32_t self = 0;
	while (id >= 0 && self < cl.nmn && cl.mn[self].id != (uint64_t)id)
		self++;
	if (self == cl.nmn) {
		fprintf(stderr, "dmreplay kv mn: error: %s: no MN with id %lld\n", config,
			(long long)id);
		return 2;
	}
	/* the store's state without a backend: the region is the MN role's */
	dmr_kv_local_t L;
	memset(&L, 0, sizeof(L));
	L.nc = cl.ncn;
	dmr_kv_pool_cfg_t pc = {.segments = 1,
				.block = block,
				.capacity = cap,
				.high_water = 1.0,
				.low_water = 1.0,
				.name = "kv mn",
				.block_from = "--block-bytes, default 1M"};
	uint64_t logical, nslots;
	dmr_status_t st = dmr_kv_pool_init(&L.pool, &pc, &logical, &err);
	if (st == DMR_OK &&
	    dmr_kv_layout(L.nc, 1, L.pool.seg[0].nslots, L.pool.seg_stride, &L.lay, &nslots) != 0)
		st = dmr_err_set(&err, DMR_ERR_RANGE, "kv mn: --capacity overflows the layout");
	uint64_t vm = st == DMR_OK ? dmr_kv_store_val_max(&L.pool, vmax) : 0;
	if (st == DMR_OK && vmax && vmax > vm)
		st = dmr_err_set(&err, DMR_ERR_RANGE,
				 "kv mn: --max-value %" PRIu64
				 " is above what the pool holds in one "
				 "value: %" PRIu64 " bytes",
				 vmax, vm);
	if (st == DMR_OK)
		st = dmr_kv_store_init(&L.store, &L.pool, L.lay.pool_base, vm, &err);
	if (st == DMR_OK)
		st = dmr_kv_master_init(&L.m, &L.pool, L.nc, "kv mn", &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv mn: error: %s\n", err.msg);
		dmr_kv_local_close(&L);
		return dmr_exit_status(st);
	}
	L.m.store = &L.store;
	L.m.lay = L.lay;
	L.m.deadline_ps = dmr_ps_from_s(30);
	L.m.w0 = dmr_wall_s();
	L.m.stop = &L.stop;
	L.m.stop_ext = &mn_stop;
	L.g = (dmr_kv_store_geom_t){.version = 1,
				    .clients = L.nc,
				    .block_bytes = block,
				    .slots = L.pool.cap_slots,
				    .val_max = vm,
				    .pool_base = L.lay.pool_base,
				    .region = L.lay.region};
	uint64_t need = (L.lay.region + 7) & ~7ull;
	if (cl.mn[self].mr_size < need) {
		fprintf(stderr,
			"kv mn: note: mr_size %" PRIu64 " raised to the store's %" PRIu64
			" bytes\n",
			cl.mn[self].mr_size, need);
		cl.mn[self].mr_size = need;
	}
	mn_ctx_t x = {.L = &L};
	mn_stop = 0;
	dmr_verbs_role_t role = {.cl = &cl,
				 .self = self,
				 .barrier_s = 60,
				 .end_s = 60,
				 .stop = &mn_stop,
				 .service = 1,
				 .mn_region = mn_region,
				 .mn_region_end = mn_region_end,
				 .mn_arg = &x};
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	st = dmr_verbs_mn_main(&role, &err);
	mn_region_end(&x);
	dmr_sig_restore(&saved);
	if (L.m.st != DMR_OK)
		st = dmr_err_set(&err, L.m.st, "%s", L.m.err.msg);
	fprintf(stderr,
		"kv mn: store: %" PRIu64 " keys; %" PRIu64 " sets (%" PRIu64 " committed, %" PRIu64
		" aborted, %" PRIu64 " refused full), %" PRIu64 " gets (%" PRIu64 " hits), %" PRIu64
		" dels\n",
		L.store.keys, L.store.sets, L.store.commits, L.store.aborts, L.store.full,
		L.store.gets, L.store.hits, L.store.dels);
	if (st != DMR_OK)
		fprintf(stderr, "dmreplay kv mn: %s\n", err.msg);
	dmr_kv_local_close(&L);
	return dmr_exit_status(st);
#else
	(void)id;
	(void)cap;
	(void)block;
	(void)vmax;
	fprintf(stderr, "dmreplay kv mn: built without verbs (rdma-core)\n");
	return 2;
#endif
}

/* ---- kv run of a kvops trace; kv gen --kvops ----------------------------- */

/* dmr_kv_local_opts_t.on_start of kv run on a kvops trace: --out's
 * earlier files moved aside now that the run is sure to start. */
static dmr_status_t kvops_on_start(void *arg, dmr_err_t *err)
{
	const char *out = arg;
	if (dmr_kv_out_claim(out, NULL, 0) != 0)
		return dmr_err_set(err, DMR_ERR_IO,
				   "--out %s: the files of an earlier run could not be moved "
				   "aside (above): nothing was run",
				   out);
	return DMR_OK;
}

int dmr_kv_ops_run_main(int argc, char **argv)
{
	static const struct option opts[] = {{"trace", required_argument, NULL, 'T'},
					     {"backend", required_argument, NULL, 'B'},
					     {"profile", required_argument, NULL, 'P'},
					     {"device", required_argument, NULL, 'D'},
					     {"port", required_argument, NULL, 'p'},
					     {"gid-index", required_argument, NULL, 'g'},
					     {"capacity", required_argument, NULL, 'C'},
					     {"block-bytes", required_argument, NULL, 'b'},
					     {"max-value", required_argument, NULL, 'm'},
					     {"chunk", required_argument, NULL, 'k'},
					     {"depth", required_argument, NULL, 'd'},
					     {"timeout-s", required_argument, NULL, 't'},
					     {"seed", required_argument, NULL, 's'},
					     {"out", required_argument, NULL, 'o'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	dmr_kv_local_opts_t o = {.backend = "sim", .gid_index = -1, .timeout_s = 30};
	const char *trace = NULL, *out = NULL;
	int quiet = 0, ch, saw_dev = 0, saw_prof = 0;
	dmr_err_t err = {{0}};
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		dmr_status_t st = DMR_OK;
		int64_t v;
		switch (ch) {
		case 'T':
			trace = optarg;
			break;
		case 'B':
			o.backend = optarg;
			break;
		case 'P':
			o.profile = optarg;
			saw_prof = 1;
			break;
		case 'D':
			o.device = optarg;
			saw_dev = 1;
			break;
		case 'p':
			st = dmr_opt_i64("--port", optarg, 1, 255, &v, &err);
			o.port = (int)v;
			saw_dev = 1;
			break;
		case 'g':
			st = dmr_opt_i64("--gid-index", optarg, -1, 255, &v, &err);
			o.gid_index = (int)v;
			saw_dev = 1;
			break;
		case 'C':
			st = dmr_opt_u64("--capacity", optarg, 1, 1ull << 40, DMR_OPT_SIZE,
					 &o.capacity, &err);
			break;
		case 'b':
			st = dmr_opt_u64("--block-bytes", optarg, 64, 1ull << 30, DMR_OPT_SIZE,
					 &o.block, &err);
			break;
		case 'm':
			st = dmr_opt_u64("--max-value", optarg, 1, DMR_KV_VALUE_LIMIT, DMR_OPT_SIZE,
					 &o.val_max, &err);
			break;
		case 'k':
			st = dmr_opt_u64("--chunk", optarg, 8, 1ull << 30, DMR_OPT_SIZE, &o.chunk,
					 &err);
			break;
		case 'd':
			st = dmr_opt_u32("--depth", optarg, 1, 64, 0, &o.depth, &err);
			break;
		case 't':
			st = dmr_opt_double("--timeout-s", optarg, 0, 3600, DMR_OPT_LO_OPEN,
					    &o.timeout_s, &err);
			break;
		case 's':
			st = dmr_opt_u64("--seed", optarg, 0, UINT64_MAX, 0, &o.seed, &err);
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			printf(
			    "usage: dmreplay kv run --trace OPS.kvops [--backend sim|shm|verbs] "
			    "[--profile P] [--device D] [--capacity 256M] [--block-bytes 1M] "
			    "[--max-value B] [--chunk 1M] [--depth 8] [--out DIR [--force]] "
			    "[--quiet]\n"
			    "  replay a set/get/del trace against the key/value store, every get "
			    "checked byte for byte (docs/KVCACHE.md 10.3)\n");
			opterr = 1;
			return 0;
		default:
			/* getopt's own message (opterr 0 above) would be
			 * prefixed "run:", not "dmreplay kv run:" */
			opterr = 1;
			if (optopt != 0) { /* one of ours without its value, or "-x" */
				dmr_opt_refused("kv run", ch, argv, opts, &err);
				fprintf(stderr, "dmreplay kv run: %s\n", err.msg);
				return 2;
			}
			fprintf(stderr,
				"dmreplay kv run: option %s: a kvops trace takes --trace, "
				"--backend, --profile, --device, --port, --gid-index, --capacity, "
				"--block-bytes, --max-value, --chunk, --depth, --timeout-s, "
				"--seed, --out, --force, --quiet\n",
				optind > 0 && optind <= argc ? argv[optind - 1] : "?");
			return 2;
		}
		if (st != DMR_OK) {
			opterr = 1;
			fprintf(stderr, "dmreplay kv run: %s\n", err.msg);
			return 2;
		}
	}
	opterr = 1;
	if (!trace || optind < argc) {
		fprintf(stderr, "dmreplay kv run: --trace OPS.kvops is required%s%s\n",
			optind < argc ? "; unexpected argument " : "",
			optind < argc ? argv[optind] : "");
		return 2;
	}
	if (dmr_replay_backend_opts_check("kv run", o.backend,
					  saw_dev ? "--device, --port or --gid-index" : NULL,
					  saw_prof) != 0)
		return 2;
	/* --out made and held (DIR/.dmr-lock) for as long as the run runs, as
	 * kv run's on a KV trace: a second run into it is refused at once (a
	 * trial of session 13 found two kvops runs into one --out both
	 * finishing, one's summary.csv over the other's). A refused run
	 * removes the lock file and the directories it made. */
	char trimmed[PATH_MAX];
	dmr_kv_out_hold_t hold;
	int rc = 0;
	if (out) {
		out = dmr_kv_out_trim(out, trimmed, sizeof(trimmed));
		if ((rc = dmr_kv_out_hold(&hold, out, "kv run")) != 0)
			return rc;
	}
	/* a finished run is never overwritten: refused now without --force;
	 * its files move aside only once the run is set up (kvops_on_start) */
	if ((rc = dmr_kv_out_refused(out)) == 0) {
		o.on_start = kvops_on_start;
		o.on_start_arg = (void *)out;
		dmr_kv_ops_result_t r;
		dmr_status_t st = dmr_kv_ops_run(trace, &o, out, &r, &err);
		/* a failed run shows what it did, if it did anything (a refused
		 * header printed a block of zeros before its error) */
		if (st == DMR_OK ? !quiet : r.ops > 0)
			dmr_kv_ops_print(trace, &o, &r, st == DMR_OK ? stdout : stderr);
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay kv run: error: %s\n", err.msg);
			rc = dmr_exit_status(st);
		}
	}
	if (out)
		dmr_kv_out_release(&hold, rc);
	return rc;
}

int dmr_kv_ops_gen_main(int argc, char **argv)
{
	static const struct option opts[] = {{"kvops", no_argument, NULL, 'K'},
					     {"ops", required_argument, NULL, 'n'},
					     {"keys", required_argument, NULL, 'k'},
					     {"theta", required_argument, NULL, 't'},
					     {"sizes", required_argument, NULL, 'z'},
					     {"value-max", required_argument, NULL, 'v'},
					     {"mix", required_argument, NULL, 'x'},
					     {"get-keys", required_argument, NULL, 'g'},
					     {"seed", required_argument, NULL, 's'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	dmr_kvops_gen_t g = {.ops = 10000,
			     .keys = 1000,
			     .theta = 0.99,
			     .p_set = 0.5,
			     .p_get = 0.45,
			     .p_del = 0.05,
			     .get_max = 1,
			     .size_kind = 0,
			     .size_a = 4096,
			     .value_max = 1 << 20,
			     .seed = 1};
	const char *outp = NULL;
	dmr_err_t err = {{0}};
	int ch;
	optind = 1;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		dmr_status_t st = DMR_OK;
		switch (ch) {
		case 'K':
		case 'q': /* it prints nothing on success; taken as --mooncake takes it */
			break;
		case 'n':
			st =
			    dmr_opt_u64("--ops", optarg, 1, 1ull << 32, DMR_OPT_SIZE, &g.ops, &err);
			break;
		case 'k':
			st = dmr_opt_u64("--keys", optarg, 1, 1ull << 32, DMR_OPT_SIZE, &g.keys,
					 &err);
			break;
		case 't':
			st = dmr_opt_double("--theta", optarg, 0, 5, 0, &g.theta, &err);
			break;
		case 'z':
			st = dmr_kvops_parse_sizes(optarg, &g, &err);
			break;
		case 'v':
			st = dmr_opt_u64("--value-max", optarg, 1, DMR_KVOPS_VALUE_MAX,
					 DMR_OPT_SIZE, &g.value_max, &err);
			break;
		case 'x': {
			double f[3];
			char tail;
			if (sscanf(optarg, "%lf,%lf,%lf%c", &f[0], &f[1], &f[2], &tail) != 3 ||
			    f[0] < 0 || f[1] < 0 || f[2] < 0 || fabs(f[0] + f[1] + f[2] - 1) > 1e-9)
				st = dmr_err_set(&err, DMR_ERR_PARSE,
						 "option --mix: '%s' is not SET,GET,DEL fractions "
						 "(>= 0, summing to 1)",
						 optarg);
			g.p_set = f[0];
			g.p_get = f[1];
			g.p_del = f[2];
			break;
		}
		case 'g':
			st = dmr_opt_u32("--get-keys", optarg, 1, DMR_KVOPS_MAX_GET, 0, &g.get_max,
					 &err);
			break;
		case 's':
			st = dmr_opt_u64("--seed", optarg, 0, UINT64_MAX, 0, &g.seed, &err);
			break;
		case 'o':
			outp = optarg;
			break;
		case 'h':
			printf(
			    "usage: dmreplay kv gen --kvops -o OUT|- [--ops 10000] [--keys 1000] "
			    "[--theta 0.99] [--sizes fixed:4K|uniform:A:B|lognormal:MEDIAN:SIGMA] "
			    "[--value-max 1M] [--mix 0.5,0.45,0.05] [--get-keys 1] [--seed 1] "
			    "[--quiet]\n"
			    "  a set/get/del trace: keys user<rank> Zipf(theta), sizes from the "
			    "distribution (docs/KVCACHE.md 10.3)\n");
			return 0;
		default:
			st = dmr_opt_refused("kv gen --kvops", ch, argv, opts, &err);
			break;
		}
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay kv gen: %s\n", err.msg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv gen --kvops: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!outp) {
		fprintf(stderr, "dmreplay kv gen --kvops: -o OUT is required\n");
		return 2;
	}
	dmr_status_t st = dmr_kvops_generate(&g, outp, &err);
	if (st != DMR_OK) {
		/* an interruption is no error of the options or the run */
		fprintf(stderr, "dmreplay kv gen: %s%s\n",
			st == DMR_ERR_INTERRUPTED ? "" : "error: ", err.msg);
		return dmr_exit_status(st);
	}
	return 0;
}
