/*
 * replay/roles/nodes.c - `dmreplay mn` and `dmreplay cn`: the memory node
 * and a compute node as processes of their own on a cluster config (the
 * MN serves its region; a CN replays its share of the trace on it and
 * verifies the MN's final state); contract in replay/roles.h, docs/ROLES.md.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "../../core/layout.h"
#include "../../core/txn.h"
#include "../../traces/trace.h"
#include "../results.h"
#include "etcd.h"
#include "roles_impl.h"

#define MNP "dmreplay mn"
#define CNP "dmreplay cn"

/* Option values (core/base/opt.h): 0, or "PFX: MESSAGE" printed and 2. */
static int opt_u64(const char *pfx, const char *opt, const char *s, uint64_t lo, uint64_t hi,
		   uint64_t *v)
{
	dmr_err_t err;
	if (dmr_opt_u64(opt, s, lo, hi, 0, v, &err) == DMR_OK)
		return 0;
	fprintf(stderr, "%s: %s\n", pfx, err.msg);
	return 2;
}

/* Seconds in (0, 86400], a unit allowed (s, ms, us, ns). */
static int opt_secs(const char *pfx, const char *opt, const char *s, double *v)
{
	dmr_err_t err;
	if (dmr_opt_double(opt, s, 0, 86400, DMR_OPT_LO_OPEN | DMR_OPT_SECONDS, v, &err) == DMR_OK)
		return 0;
	fprintf(stderr, "%s: %s\n", pfx, err.msg);
	return 2;
}

/* The options mn and cn share: --config, --id, --barrier-timeout,
 * --end-timeout, and membership in etcd (etcd.h): --etcd, --cluster,
 * --etcd-wait. */
#define ROLE_OPTIONS                                                                               \
	{"config", required_argument, 0, 'c'}, {"id", required_argument, 0, 'i'},                  \
	    {"barrier-timeout", required_argument, 0, 'b'},                                        \
	    {"end-timeout", required_argument, 0, 'e'}, {"etcd", required_argument, 0, 'E'},       \
	    {"cluster", required_argument, 0, 'N'},                                                \
	{                                                                                          \
		"etcd-wait", required_argument, 0, 'W'                                             \
	}

typedef struct role_args {
	const char *config;
	long long id; /* -1: none given */
	double barrier_s, end_s;
	const char *etcd, *cluster; /* --etcd HOST:PORT, --cluster NAME (NULL: none) */
	double etcd_wait_s;	    /* --etcd-wait */
} role_args_t;

#define ROLE_ARGS_DEFAULT                                                                          \
	{                                                                                          \
		.id = -1, .barrier_s = 60, .end_s = 300, .etcd_wait_s = DMR_ETCD_DEFAULT_WAIT      \
	}

/* One of the shared options into a: 1, 0 when c is not one of them, -1
 * when its value is refused (the reason printed). */
static int role_opt(const char *pfx, int c, const char *arg, role_args_t *a)
{
	uint64_t u;
	switch (c) {
	case 'c':
		a->config = arg;
		return 1;
	case 'i':
		if (opt_u64(pfx, "--id", arg, 0, INT32_MAX, &u))
			return -1;
		a->id = (long long)u;
		return 1;
	case 'b':
		return opt_secs(pfx, "--barrier-timeout", arg, &a->barrier_s) ? -1 : 1;
	case 'e':
		return opt_secs(pfx, "--end-timeout", arg, &a->end_s) ? -1 : 1;
	case 'E':
		a->etcd = arg;
		return 1;
	case 'N':
		a->cluster = arg;
		return 1;
	case 'W':
		return opt_secs(pfx, "--etcd-wait", arg, &a->etcd_wait_s) ? -1 : 1;
	}
	return 0;
}

/* --etcd and --cluster: both or neither; the endpoint and the name checked.
 * 0 (*on = 1 when given, e filled), or the reason printed and 2. */
static int role_etcd(const char *pfx, const role_args_t *a, dmr_etcd_t *e, int *on)
{
	dmr_err_t err;
	*on = 0;
	if (!a->etcd && !a->cluster)
		return 0;
	if (!a->etcd || !a->cluster) {
		fprintf(stderr, "%s: %s needs %s too (membership in etcd: docs/ROLES.md)\n", pfx,
			a->etcd ? "--etcd" : "--cluster",
			a->etcd ? "--cluster NAME" : "--etcd HOST:PORT");
		return 2;
	}
	if (dmr_etcd_open(e, a->etcd, &err) != DMR_OK ||
	    dmr_etcd_check_name(a->cluster, &err) != DMR_OK) {
		fprintf(stderr, "%s: %s\n", pfx, err.msg);
		return 2;
	}
	*on = 1;
	return 0;
}

#ifdef DMR_HAVE_VERBS
/* The MN's registration in etcd, made once rdma_cm listens and the region
 * exists (the verbs role's mn_region hook), revoked when the MN ends. */
typedef struct mn_etcd {
	dmr_etcd_t e;
	const char *cluster;
	dmr_etcd_mn_t me;
	double ttl_s, wait_s;
	dmr_etcd_reg_t *reg;
} mn_etcd_t;

static dmr_status_t mn_etcd_up(void *arg, void *base, uint64_t len, dmr_err_t *err)
{
	mn_etcd_t *m = arg;
	(void)base;
	(void)len;
	int64_t ttl = 0;
	dmr_status_t st = dmr_etcd_register(&m->e, m->cluster, &m->me, m->ttl_s, m->wait_s, MNP,
					    &m->reg, &ttl, err);
	if (st == DMR_OK) {
		char prefix[128];
		dmr_etcd_mn_prefix(m->cluster, prefix, sizeof(prefix));
		fprintf(stderr,
			MNP ": registered in etcd at %s: %s%u = %s:%u (mr_size %llu) under a "
			    "lease of %lld s\n",
			m->e.endpoint, prefix, m->me.id, m->me.ip, m->me.port,
			(unsigned long long)m->me.mr_size, (long long)ttl);
	}
	return st;
}

static void mn_etcd_down(void *arg)
{
	mn_etcd_t *m = arg;
	dmr_err_t err;
	if (!m->reg)
		return;
	if (dmr_etcd_unregister(m->reg, 1, &err) != DMR_OK)
		fprintf(stderr,
			MNP ": warning: could not revoke the etcd lease (%s): the key expires "
			    "with it (%.0f s)\n",
			err.msg, m->ttl_s);
	else
		fprintf(stderr, MNP ": etcd lease revoked: MN %u unregistered\n", m->me.id);
	m->reg = NULL;
}
#endif

/* getopt_long refused an option (opterr 0): which and why, as every
 * command says it (core/base/opt.h); the exit status */
static int bad_option(const char *cmd, int c, char **argv, const struct option *lo)
{
	dmr_err_t err;
	dmr_opt_refused(cmd, c, argv, lo, &err);
	fprintf(stderr, "dmreplay %s: %s\n", cmd, err.msg);
	return 2;
}

/* A memory node file of FORD or Motor: one MN's settings. */
static int one_mn_file(const char *shape)
{
	return strcmp(shape, "ford-mn") == 0 || strcmp(shape, "motor-mn") == 0;
}

/* Load config and find the MN (cn 0) or CN (cn 1) with this id (-1: the
 * first): 0 with *idx_p set, or the reason printed ("PFX: error: ...") and
 * 2. The parser's note goes to stderr, also with --quiet (README: --quiet
 * keeps the notes). */
static int load_node(const char *pfx, const char *config, int cn, long long id,
		     dmr_verbs_cluster_t *cl, uint32_t *idx_p)
{
	char note[512];
	dmr_err_t err = {{0}};
	if (dmr_cluster_load(config, cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
		return 2;
	}
	if (note[0])
		fprintf(stderr, "%s: note: %s\n", pfx, note);
	/* FORD's memory_node_config.json is one MN's file: that MN by default */
	if (id < 0 && !cn && one_mn_file(cl->shape))
		id = cl->ford_machine_id;
	if (cn && one_mn_file(cl->shape)) {
		fprintf(stderr,
			"%s: error: %s is FORD's memory_node_config.json or Motor's "
			"mn_config.json (one MN's settings, not every MN's address); a CN "
			"takes their compute node file (compute_node_config.json, "
			"cn_config.json)\n",
			pfx, config);
		return 2;
	}
	const dmr_verbs_node_t *nodes = cn ? cl->cn : cl->mn;
	uint32_t n = cn ? cl->ncn : cl->nmn;
	for (uint32_t i = 0; i < n; i++)
		if (id < 0 || nodes[i].id == (uint32_t)id) {
			*idx_p = i;
			return 0;
		}
	char ids[256];
	size_t off = 0;
	ids[0] = 0;
	for (uint32_t i = 0; i < n && off < sizeof(ids); i++)
		off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%u", i ? ", " : "",
					nodes[i].id);
	const char *role = cn ? "CN" : "MN";
	fprintf(stderr, "%s: error: %s: no %s with id %lld (%s ids: %s)\n", pfx, config, role, id,
		role, ids);
	return 2;
}

int dmr_roles_mn_main(int argc, char **argv)
{
	static const struct option lo[] = {ROLE_OPTIONS,
					   {"mr-size", required_argument, 0, 'M'},
					   {"etcd-ttl", required_argument, 0, 'L'},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	role_args_t a = ROLE_ARGS_DEFAULT;
	uint64_t mr_size = 0; /* --mr-size: 0 = the config's */
	double ttl_s = DMR_ETCD_DEFAULT_TTL;
	int c, ro;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if ((ro = role_opt(MNP, c, optarg, &a)) != 0) {
			if (ro < 0)
				return 2;
			continue;
		}
		switch (c) {
		case 'M': {
			dmr_err_t oerr;
			if (dmr_opt_u64("--mr-size", optarg, 64, 1ull << 48, DMR_OPT_SIZE, &mr_size,
					&oerr) != DMR_OK ||
			    (mr_size & 7)) {
				fprintf(stderr, MNP ": %s\n",
					mr_size & 7 ? "--mr-size: must be a multiple of 8 bytes"
						    : oerr.msg);
				return 2;
			}
			break;
		}
		case 'L':
			if (opt_secs(MNP, "--etcd-ttl", optarg, &ttl_s))
				return 2;
			if (ttl_s < 1) {
				fprintf(stderr, MNP ": --etcd-ttl %g s: legal 1..86400 s\n", ttl_s);
				return 2;
			}
			break;
		case 'h':
			printf(
			    "usage: dmreplay mn --config CLUSTER.json [--id K] "
			    "[--barrier-timeout S]"
			    " [--end-timeout S] [--mr-size BYTES]\n"
			    "       [--etcd HOST:PORT --cluster NAME [--etcd-ttl S] "
			    "[--etcd-wait S]]\n"
			    "  The memory node as a process (docs/ROLES.md): registers mr_size "
			    "bytes\n"
			    "  (RLIMIT_MEMLOCK and max_mr_size checked first), listens with "
			    "rdma_cm\n"
			    "  on the MN entry's ip:port, serves the CNs, and exits when all "
			    "are done\n"
			    "  (0), when the start barrier (default 60 s + 5) passes with CNs "
			    "missing\n"
			    "  (1, naming them), or when every CN disconnected before the end "
			    "(1).\n"
			    "  --id: the MN entry's id (default the first MN; with FORD's\n"
			    "  memory_node_config.json its machine_id). Several MNs on one "
			    "host:\n"
			    "  one process each, on the ports of their entries.\n"
			    "  --mr-size: the region's bytes (K/M/G), over the config's (FORD's\n"
			    "  compute_node_config.json gives none).\n"
			    "  --etcd, --cluster: also register this MN's address in etcd as\n"
			    "  /dmreplay/NAME/mn/K under a lease of --etcd-ttl (default 5 s)\n"
			    "  kept alive by a thread and revoked at exit; etcd unreachable for\n"
			    "  --etcd-wait (default 30 s): exit 1.\n");
			return 0;
		default:
			return bad_option("mn", c, argv, lo);
		}
	}
	if (!a.config || optind < argc) {
		fprintf(stderr, "dmreplay mn: %s (dmreplay mn --help)\n",
			a.config ? "unexpected argument" : "--config is required");
		return 2;
	}
	static dmr_verbs_cluster_t cl;
	uint32_t idx;
	if (load_node(MNP, a.config, 0, a.id, &cl, &idx))
		return 2;
	if (mr_size)
		cl.mn[idx].mr_size = mr_size;
	if (one_mn_file(cl.shape) && (int)idx != cl.ford_machine_id) {
		fprintf(stderr,
			MNP ": error: %s: FORD's memory_node_config.json describes MN %d "
			    "(local_memory_node.machine_id), not MN %u\n",
			a.config, cl.ford_machine_id, cl.mn[idx].id);
		return 2;
	}
	if (!cl.mn[idx].mr_size) {
		fprintf(stderr,
			MNP ": error: %s: MN %u has no region size (%s): give --mr-size BYTES\n",
			a.config, cl.mn[idx].id,
			strstr(cl.shape, "-cn") != NULL
			    ? "FORD's / Motor's compute node file lists the MNs' addresses "
			      "only; their size is in each MN's own file"
			    : "mr_size");
		return 2;
	}
	dmr_etcd_t etcd;
	int use_etcd = 0;
	if (role_etcd(MNP, &a, &etcd, &use_etcd))
		return 2;
	if (use_etcd && !cl.mn[idx].ip[0]) {
		fprintf(stderr,
			MNP ": error: %s: MN %u has no \"ip\": --etcd registers the address the "
			    "MN listens on; give it in the config\n",
			a.config, cl.mn[idx].id);
		return 2;
	}
#ifdef DMR_HAVE_VERBS
	dmr_verbs_role_t role = {
	    .cl = &cl, .self = idx, .barrier_s = a.barrier_s, .end_s = a.end_s};
	static mn_etcd_t me;
	if (use_etcd) {
		me = (mn_etcd_t){.e = etcd,
				 .cluster = a.cluster,
				 .ttl_s = ttl_s,
				 .wait_s = a.etcd_wait_s,
				 .me = {.id = cl.mn[idx].id,
					.port = cl.mn[idx].port ? cl.mn[idx].port : cl.port,
					.mr_size = cl.mn[idx].mr_size,
					.pid = (long long)getpid()}};
		snprintf(me.me.ip, sizeof(me.me.ip), "%s", cl.mn[idx].ip);
		snprintf(me.me.devname, sizeof(me.me.devname), "%s", cl.mn[idx].devname);
		role.mn_region = mn_etcd_up;
		role.mn_region_end = mn_etcd_down;
		role.mn_arg = &me;
	}
	dmr_err_t err = {{0}};
	dmr_sig_install(NULL); /* the verbs role reads dmr_sig_caught() */
	dmr_status_t st = dmr_verbs_mn_main(&role, &err);
	if (st != DMR_OK)
		fprintf(stderr, "dmreplay mn: error: %s\n", err.msg);
	else
		fprintf(stderr, "dmreplay mn: done\n");
	return dmr_results_exit_status(st);
#else
	fprintf(stderr, "dmreplay mn: error: built without the verbs backend (libibverbs-dev, "
			"librdmacm-dev; -DDMR_VERBS=ON)\n");
	return 2;
#endif
}

/* Write this CN's share of the trace: transactions i (i < txns, 0 = all)
 * with i mod total in [first, first + n). */
static dmr_status_t write_share(const char *in, const char *out, uint32_t total, uint32_t first,
				uint32_t n, uint64_t txns, uint64_t *kept_p, dmr_err_t *err)
{
	dmr_trace_reader_t *rd = NULL;
	dmr_trace_writer_t *w = NULL;
	dmr_trace_txn_t *t = malloc(sizeof(*t));
	if (!t)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	dmr_trace_hdr_t *h = malloc(sizeof(*h));
	if (!h) {
		free(t);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	dmr_status_t st = dmr_trace_open(in, &rd, err);
	if (st == DMR_OK) {
		*h = *dmr_trace_header(rd);
		h->txns = 0; /* a share: the count is not declared */
		dmr_status_t ps = dmr_trace_hdr_set(h, "share", "cn");
		(void)ps;
		st = dmr_trace_create(out, h, &w, err);
	}
	uint64_t i = 0, kept = 0;
	while (st == DMR_OK && (!txns || i < txns)) {
		st = dmr_trace_next(rd, t, err);
		if (st == DMR_EOF) {
			st = DMR_OK;
			break;
		}
		if (st != DMR_OK)
			break;
		if (dmr_sig_caught()) {
			st =
			    dmr_err_set(err, DMR_ERR_INTERRUPTED,
					"interrupted by signal %d while writing this CN's share of "
					"the trace (%s; removed)",
					dmr_sig_caught(), out);
			break;
		}
		uint32_t wk = (uint32_t)(i++ % total);
		if (wk >= first && wk < first + n) {
			st = dmr_trace_write(w, t, err);
			kept++;
		}
	}
	if (w) {
		if (st == DMR_OK)
			st = dmr_trace_finish(w, err);
		else
			dmr_trace_abandon(w);
	}
	dmr_trace_close(rd);
	free(t);
	free(h);
	*kept_p = kept;
	return st;
}

/* The addresses of cl's MNs (their ids) from etcd, into cl (ip, port,
 * mr_size); a line naming them unless quiet. */
static dmr_status_t cn_etcd_mns(long long id, const dmr_etcd_t *e, const char *cluster,
				double wait_s, int quiet, dmr_verbs_cluster_t *cl, dmr_err_t *err)
{
	uint32_t ids[DMR_BE_MAX_MNS], extra = 0;
	static dmr_etcd_mn_t got[DMR_BE_MAX_MNS];
	for (uint32_t m = 0; m < cl->nmn; m++)
		ids[m] = cl->mn[m].id;
	double t0 = dmr_wall_s();
	dmr_status_t st = dmr_etcd_find_mns(e, cluster, ids, cl->nmn, wait_s, got, &extra, err);
	if (st != DMR_OK)
		return st;
	char list[DMR_BE_MAX_MNS * 48];
	size_t off = 0;
	list[0] = 0;
	for (uint32_t m = 0; m < cl->nmn; m++) {
		snprintf(cl->mn[m].ip, sizeof(cl->mn[m].ip), "%s", got[m].ip);
		cl->mn[m].port = got[m].port;
		cl->mn[m].mr_size = got[m].mr_size;
		if (off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%sMN %u at %s:%u",
						m ? ", " : "", got[m].id, got[m].ip, got[m].port);
	}
	if (!quiet)
		fprintf(stderr, "cn %lld: from etcd at %s, cluster '%s' (%.1f s): %s%s\n", id,
			e->endpoint, cluster, dmr_wall_s() - t0, list,
			extra ? " (other MN ids registered there: ignored)" : "");
	return DMR_OK;
}

int dmr_roles_cn_main(int argc, char **argv)
{
	static const struct option lo[] = {ROLE_OPTIONS,
					   {"trace", required_argument, 0, 't'},
					   {"threads", required_argument, 0, 'T'},
					   {"coros", required_argument, 0, 'C'},
					   {"seed", required_argument, 0, 's'},
					   {"txns", required_argument, 0, 'n'},
					   {"retries", required_argument, 0, 'r'},
					   {"backups", required_argument, 0, 'B'},
					   {"protocol", required_argument, 0, 'P'},
					   {"cn-cache", required_argument, 0, 1201},
					   {"cn-cache-entries", required_argument, 0, 1202},
					   {"out", required_argument, 0, 'o'},
					   {"quiet", no_argument, 0, 'q'},
					   {"force", no_argument, 0, 'f'},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	const char *trace = NULL, *out = NULL;
	int force = 0;
	long long backups = -1; /* --backups; -1: the config's "backups", else 0 */
	role_args_t a = ROLE_ARGS_DEFAULT;
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.threads = 2;
	o.coros = 2;
	int c, ro;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		uint64_t u;
		if ((ro = role_opt(CNP, c, optarg, &a)) != 0) {
			if (ro < 0)
				return 2;
			continue;
		}
		switch (c) {
		case 't':
			trace = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'f':
			force = 1;
			break;
		case 'T':
			if (opt_u64(CNP, "--threads", optarg, 1, 1024, &u))
				return 2;
			o.threads = (uint32_t)u;
			break;
		case 'C':
			if (opt_u64(CNP, "--coros", optarg, 1, 64, &u))
				return 2;
			o.coros = (uint32_t)u;
			break;
		case 's':
			if (opt_u64(CNP, "--seed", optarg, 0, UINT64_MAX, &u))
				return 2;
			o.seed = u;
			break;
		case 'n':
			if (opt_u64(CNP, "--txns", optarg, 0, UINT64_MAX, &u))
				return 2;
			o.txns = u;
			break;
		case 'r':
			if (opt_u64(CNP, "--retries", optarg, 0, 1000000, &u))
				return 2;
			o.retries = (uint32_t)u;
			break;
		case 'B':
			if (opt_u64(CNP, "--backups", optarg, 0, DMR_LAYOUT_MAX_BACKUPS, &u))
				return 2;
			backups = (long long)u;
			break;
		case 'P': {
			dmr_err_t perr;
			if (dmr_txn_protocol_parse(optarg, &o.protocol, &perr) != DMR_OK) {
				fprintf(stderr, CNP ": %s\n", perr.msg);
				return 2;
			}
			if (o.protocol == DMR_TXN_PROTO_MOTOR) {
				/* the MN processes lay out single-version records */
				fprintf(stderr, CNP ": option --protocol motor: one process "
						    "only (dmreplay run; docs/PROTOCOLS.md)\n");
				return 2;
			}
			break;
		}
		case 1201: /* --cn-cache: checked against the trace by the run */
			o.cn_cache = optarg;
			break;
		case 1202:
			if (opt_u64(CNP, "--cn-cache-entries", optarg, 1, DMR_CNCACHE_MAX_ENTRIES,
				    &u))
				return 2;
			o.cn_cache_entries = (uint32_t)u;
			break;
		case 'h':
			printf(
			    "usage: dmreplay cn --config CLUSTER.json --id K --trace FILE "
			    "[--threads T]\n"
			    "       [--coros C] [--seed S] [--txns N] [--retries N] [--out DIR]\n"
			    "       [--backups R] [--protocol occ|ford]\n"
			    "       [--cn-cache TABLES [--cn-cache-entries N]]\n"
			    "       [--barrier-timeout S] [--end-timeout S] [--quiet] [--force]\n"
			    "       [--etcd HOST:PORT --cluster NAME [--etcd-wait S]]\n"
			    "  A compute node as a process (docs/ROLES.md): T workers (every CN "
			    "must\n"
			    "  use the same T), each an RC QP to the MN, run transactions i of "
			    "FILE\n"
			    "  with i mod (CNs x T) in this CN's range; CN index 0 loads the "
			    "initial\n"
			    "  state into the MN; after the run every CN reads the final state "
			    "back\n"
			    "  and verifies it. Results: DIR (default out/cnK)/summary.csv, or\n"
			    "  summary.partial.csv on any failure. Defaults: T=2, C=2, barrier 60 "
			    "s,\n"
			    "  end 300 s. A DIR holding a finished summary.csv is refused unless\n"
			    "  --force (that run's files are then moved to DIR/earlier-N/).\n"
			    "  --backups: backups per table (default the config's \"backups\", "
			    "else 0;\n"
			    "  below the config's MNs); --protocol as dmreplay run's. Every CN "
			    "must\n"
			    "  use the same two (the launcher passes its own).\n"
			    "  --etcd, --cluster: the MNs' addresses (ip, port, mr_size) from "
			    "etcd\n"
			    "  (/dmreplay/NAME/mn/K, registered by `dmreplay mn --etcd`) instead\n"
			    "  of the config, for the config's MN ids; waits up to --etcd-wait\n"
			    "  (default 30 s) for all of them (exit 1 naming the missing ones,\n"
			    "  or etcd unreachable; a malformed entry: exit 2).\n"
			    "  Exit: 0, 1 failed run, 2 bad input (options, config, trace, "
			    "device,\n"
			    "  port, GID), 130 SIGINT/SIGTERM (also during set-up).\n");
			return 0;
		default:
			return bad_option("cn", c, argv, lo);
		}
	}
	if (!a.config || !trace || a.id < 0 || optind < argc) {
		fprintf(stderr, "dmreplay cn: --config, --id and --trace are required (dmreplay cn "
				"--help)\n");
		return 2;
	}
	static dmr_verbs_cluster_t cl;
	uint32_t idx;
	if (load_node(CNP, a.config, 1, a.id, &cl, &idx))
		return 2;
	dmr_etcd_t etcd;
	int use_etcd = 0;
	if (role_etcd(CNP, &a, &etcd, &use_etcd))
		return 2;
	dmr_err_t err = {{0}};
	char outbuf[512], share[1024];
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "out/cn%lld", a.id);
		out = outbuf;
	}
	o.out_dir = out;
	o.backend = "verbs";
	o.device = cl.cn[idx].devname[0] ? cl.cn[idx].devname : NULL;
	o.port = cl.cn[idx].ibport;
	o.gid_index = cl.cn[idx].gid;
	o.cns = 1;
	o.mns = cl.nmn; /* one RC QP per (worker, MN) to every MN of the config */
	if (backups < 0)
		backups = cl.backups > 0 ? cl.backups : 0;
	if ((uint32_t)backups >= cl.nmn) {
		fprintf(stderr,
			CNP ": error: --backups %lld with the %u MN%s of %s: a table and its "
			    "backups need %lld distinct MNs (backups < MNs)\n",
			backups, cl.nmn, cl.nmn == 1 ? "" : "s", a.config, backups + 1);
		return 2;
	}
	o.backups = (uint32_t)backups;
	/* the config's "placement": each table pinned where it says (the run
	 * refuses a table the trace lacks or a count that is not 1 + R) */
	static dmr_layout_pin_t pins[DMR_VERBS_MAX_PLACE];
	for (uint32_t i = 0; i < cl.nplace; i++) {
		snprintf(pins[i].table, sizeof(pins[i].table), "%s", cl.place[i].table);
		pins[i].n = cl.place[i].n;
		for (uint32_t k = 0; k < cl.place[i].n && k < 1 + DMR_LAYOUT_MAX_BACKUPS; k++)
			pins[i].mn[k] = cl.place[i].mn[k];
	}
	o.pins = pins;
	o.npins = cl.nplace;
	uint32_t total = cl.ncn * o.threads, first = idx * o.threads;
	/* the output directory first (created, writable): the share, and
	 * results on every path */
	if (dmr_mkdir_p(out, DMR_FS_PROBE, &err) != DMR_OK) {
		fprintf(stderr, CNP ": error: --out %s: %s\n", out, err.msg);
		return 2;
	}
	/* an earlier run's files: refused when finished (unless --force),
	 * nothing moved yet */
	int erc = dmr_roles_earlier_refused(out, CNP, force);
	if (erc)
		return erc;
	/* the whole cluster's layout: log rings of all workers, global
	 * footprint; the trace (readable, its header) checked before anything
	 * in --out moves */
	dmr_layout_t L;
	dmr_status_t st;
	{
		dmr_trace_reader_t *rd = NULL;
		st = dmr_trace_open(trace, &rd, &err);
		if (st == DMR_OK)
			st = dmr_layout_init(&L, dmr_trace_header(rd), total,
					     dmr_layout_log_bytes(dmr_trace_header(rd)), &err);
		dmr_trace_close(rd);
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay cn: error: %s\n", err.msg);
			return dmr_results_exit_status(st);
		}
	}
	/* the earlier run's files move to OUT/earlier-N/ now, before this run
	 * writes its share (and, on any failure from here, a partial summary):
	 * never overwritten, never read as this run's. A refusal by the
	 * replay's own checks (dmr_replay_run) comes after this (its trace is
	 * the share): see docs/ROLES.md */
	erc = dmr_roles_clear_earlier(out, CNP, force, NULL, 0);
	if (erc)
		return erc;
	snprintf(share, sizeof(share), "%s/trace.cn%lld.csv", out, a.id);
	/* SIGINT/SIGTERM during set-up (the share takes seconds, connecting
	 * waits for the MN): stop cleanly with partial results; the replay
	 * installs its own handler for the run and restores this one */
	dmr_sig_install(NULL); /* the verbs role reads dmr_sig_caught() */
	uint64_t kept = 0;
	dmr_replay_result_t r;
	memset(&r, 0, sizeof(r));
	st = DMR_OK;
	if (use_etcd &&
	    (st = cn_etcd_mns(a.id, &etcd, a.cluster, a.etcd_wait_s, o.quiet, &cl, &err)) != DMR_OK)
		goto setup_failed; /* a partial summary, the error, its exit status */
	st = write_share(trace, share, total, first, o.threads, o.txns, &kept, &err);
	if (st == DMR_ERR_INTERRUPTED)
		goto setup_failed;
	if (st != DMR_OK) {
		fprintf(stderr, CNP ": error: %s\n", err.msg);
		return dmr_results_exit_status(st);
	}
	o.trace = share;
	o.txns = 0;
	if (!o.quiet)
		fprintf(
		    stderr,
		    "cn %lld: index %u of %u CNs, workers %u..%u of %u: %llu transactions of %s "
		    "(written to %s); %u MN%s, MN %u at %s:%u; footprint %llu bytes\n",
		    a.id, idx, cl.ncn, first, first + o.threads - 1, total,
		    (unsigned long long)kept, trace, share, cl.nmn, cl.nmn == 1 ? "" : "s",
		    cl.mn[0].id, cl.mn[0].ip, cl.mn[0].port ? cl.mn[0].port : cl.port,
		    (unsigned long long)L.total);
#ifdef DMR_HAVE_VERBS
	dmr_verbs_role_t role = {.cl = &cl,
				 .self = idx,
				 .first_worker = first,
				 .log_base = L.log_base,
				 .need_bytes = L.total,
				 .barrier_s = a.barrier_s,
				 .end_s = a.end_s};
	dmr_verbs_set_role(&role);
	/* the barriers are the engine's (dmr_be_barrier): their errors are
	 * the run's */
	st = dmr_replay_run(&o, &r, &err);
	dmr_verbs_set_role(NULL);
#else
	st = dmr_err_set(&err, DMR_ERR_UNSUPPORTED,
			 "built without the verbs backend (libibverbs-dev, librdmacm-dev)");
#endif
	if (st == DMR_OK && dmr_sig_caught())
		fprintf(stderr,
			CNP " %lld: note: signal %d came after the run had ended: the run "
			    "was not stopped\n",
			a.id, dmr_sig_caught());
setup_failed:
	if (!r.status[0]) { /* the engine wrote nothing (it sets status last) */
		/* failed before the replay wrote anything: a partial summary anyway */
		dmr_trace_reader_t *rd = NULL;
		dmr_err_t e2;
		if (dmr_trace_open(trace, &rd, &e2) == DMR_OK) {
			snprintf(r.workload, sizeof(r.workload), "%s",
				 dmr_trace_header(rd)->workload);
			snprintf(r.regime, sizeof(r.regime), "%s", dmr_trace_header(rd)->regime);
			dmr_trace_close(rd);
		}
		snprintf(r.backend, sizeof(r.backend), "verbs");
		snprintf(r.profile, sizeof(r.profile), "-");
		snprintf(r.profile_path, sizeof(r.profile_path), "-");
		snprintf(r.loop, sizeof(r.loop), "none");
		snprintf(r.status, sizeof(r.status), "partial");
		r.cns = 1;
		r.threads = o.threads;
		r.coros = o.coros;
		r.seed = o.seed;
		r.partial = 1;
		dmr_ts_t ts;
		dmr_ts_init(&ts, 100 * DMR_PS_PER_MS);
		if (dmr_results_write(out, 0, &r, share, &ts, &e2) != DMR_OK)
			fprintf(stderr, "dmreplay cn: error: %s\n", e2.msg);
		dmr_ts_fini(&ts);
	}
	if ((st == DMR_OK || st == DMR_ERR_VERIFY || r.partial) && !o.quiet)
		dmr_replay_print(&r, stdout);
	/* the replica check (core/replica.h) on the MNs' final state this CN
	 * read back: printed also with --quiet, as the verification is */
	if (r.backups > 0 && r.replicas.checks)
		fprintf(stderr,
			"cn %lld: protocol %s, %s; replicas %s (%llu records and lock words "
			"checked on %u MNs)\n",
			a.id, r.protocol, r.placement,
			r.replicas.ok ? "identical, locks idle" : r.replicas.first_failure,
			(unsigned long long)r.replicas.checks, r.mns);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay cn %lld: error: %s (results: %s/summary.partial.csv)\n",
			a.id, err.msg, out);
		/* as run: a bad device (NODEV), port (RANGE) or GID, a refusal
		 * such as CNs with different --threads (INVALID), a bad trace row:
		 * bad input (2), also when the replay had started */
		return dmr_results_exit_status(st);
	}
	if (!o.quiet)
		printf("  results        %s/summary.csv\n", out);
	return 0;
}
