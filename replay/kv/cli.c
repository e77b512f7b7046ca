/*
 * replay/kv/cli.c - `dmreplay kv SUBCOMMAND`: gen, run, bench, models, mn,
 * cn (dmr_kv_main, dispatched from replay/main.c). Numeric options go
 * through core/base/opt.h; a bad value is "dmreplay kv CMD: <message>",
 * exit 2. See replay/kv.h and docs/KVCACHE.md.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "../../traces/kvops.h"
#include "../roles.h"
#include "../setup.h"
#include "../sweepdir.h"
#include "../kvstore.h"
#include "../../core/loop.h"
#include "kv_impl.h"

/* ---- option values ------------------------------------------------------ */

/* 1 (printed "dmreplay CMD: MSG") when st is not DMR_OK, else 0. */
static int opt_bad(const char *cmd, dmr_status_t st, const dmr_err_t *e)
{
	if (st == DMR_OK)
		return 0;
	fprintf(stderr, "dmreplay %s: %s\n", cmd, e->msg);
	return 1;
}

/* bytes or counts, K/M/G/T suffixes */
static int opt_size(const char *cmd, const char *name, const char *s, uint64_t *v)
{
	dmr_err_t e;
	return opt_bad(cmd, dmr_opt_u64(name, s, 0, UINT64_MAX, DMR_OPT_SIZE, v, &e), &e);
}

static int opt_u32(const char *cmd, const char *name, const char *s, uint32_t *v, uint32_t lo,
		   uint32_t hi)
{
	dmr_err_t e;
	return opt_bad(cmd, dmr_opt_u32(name, s, lo, hi, DMR_OPT_SIZE, v, &e), &e);
}

static int opt_int(const char *cmd, const char *name, const char *s, int *v, uint32_t lo,
		   uint32_t hi)
{
	uint32_t x;
	if (opt_u32(cmd, name, s, &x, lo, hi))
		return 1;
	*v = (int)x;
	return 0;
}

/* a non-negative number */
static int opt_num(const char *cmd, const char *name, const char *s, double *v)
{
	dmr_err_t e;
	return opt_bad(cmd, dmr_opt_double(name, s, 0, INFINITY, 0, v, &e), &e);
}

/* a positive number: "dmreplay CMD: NAME must be > 0" for 0 */
static int opt_pos(const char *cmd, const char *name, const char *s, double *v)
{
	if (opt_num(cmd, name, s, v))
		return 1;
	if (*v > 0)
		return 0;
	fprintf(stderr, "dmreplay %s: %s must be > 0\n", cmd, name);
	return 1;
}

/* getopt_long values of the options (kv run / mn / cn and kv bench) */
enum {
	O_BACKEND = 256,
	O_PROFILE,
	O_DEVICE,
	O_PORT,
	O_GID,
	O_TIMEOUT,
	O_SLICE,
	O_QP_DEPTH,
	O_MTU,
	O_CNS, /* the options kv run and kv bench share (kv_common_opt) */
	O_TRACE,
	O_CLIENTS,
	O_SEGMENTS,
	O_UNBOUNDED,
	O_CAPACITY,
	O_HIGH,
	O_LOW,
	O_PLACEMENT,
	O_TIME_SCALE,
	O_OUTSTANDING,
	O_RPC_US,
	O_SIM_REGION,
	O_REQUESTS,
	O_WINDOW,
	O_OUT,
	O_QUIET,
	O_PROGRESS,
	O_HELP,
	O_CONFIG,
	O_ID,
	O_BARRIER,
	O_END,
	O_PROCS,
	O_DEADLINE, /* kv run */
	O_LOOP,	    /* kv run: Loop X */
	O_PF_MAX,
	O_PF_BUF,
	O_LOOP_WIN,
	O_NO_STREAMS, /* kv run: sim */
	O_SIZE,
	O_OPS,
	O_THREADS,
	O_BATCH,
	O_OP, /* kv bench */
};

/* Where the shared options go; saw (may be NULL): [0] --backend, [1] a
 * device option, [2] --cns given. */
typedef struct kv_common {
	const char **backend, **profile, **device;
	int *port, *gid_index;
	double *timeout_s;
	uint64_t *slice;
	uint32_t *qp_depth, *mtu, *cns;
	int *saw;
} kv_common_t;

/* One of the shared options: 1 when ch is one (*bad set), else 0. */
static int kv_common_opt(const char *cmd, int ch, const char *name, const char *arg,
			 const kv_common_t *c, int *bad)
{
	int saw = -1;
	switch (ch) {
	case O_BACKEND:
		*c->backend = arg;
		saw = 0;
		break;
	case O_PROFILE:
		*c->profile = arg;
		saw = 3;
		break;
	case O_DEVICE:
		*c->device = arg;
		saw = 1;
		break;
	case O_PORT:
		*bad = opt_int(cmd, name, arg, c->port, 1, 255);
		saw = 1;
		break;
	case O_GID:
		*bad = opt_int(cmd, name, arg, c->gid_index, 0, 255);
		saw = 1;
		break;
	case O_TIMEOUT:
		*bad = opt_pos(cmd, name, arg, c->timeout_s);
		break;
	case O_SLICE:
		*bad = opt_size(cmd, name, arg, c->slice);
		break;
	case O_QP_DEPTH:
		*bad = opt_u32(cmd, name, arg, c->qp_depth, 1, 4096);
		break;
	case O_MTU:
		*bad = opt_u32(cmd, name, arg, c->mtu, 0, UINT32_MAX);
		if (!*bad && (*c->mtu < 256 || *c->mtu > 4096 || (*c->mtu & (*c->mtu - 1)))) {
			/* as run says it: a range would hold 1500 (the trial of
			 * session 15: 1500 and 9000 were refused in two ways) */
			fprintf(stderr,
				"dmreplay %s: option --mtu: %u is not an IB MTU (256, 512, 1024, "
				"2048 or 4096)\n",
				cmd, *c->mtu);
			*bad = 1;
		}
		break;
	case O_CNS:
		*bad = opt_u32(cmd, name, arg, c->cns, 1, 1024);
		saw = 2;
		break;
	default:
		return 0;
	}
	if (saw >= 0 && c->saw)
		c->saw[saw] = 1;
	return 1;
}

/* getopt_long refused an option (ch '?' or ':', opterr 0): say which, in
 * the words of every command (core/base/opt.h); the exit status */
static int kv_refused(const char *cmd, int ch, char **argv, const struct option *opts)
{
	dmr_err_t err;
	dmr_opt_refused(cmd, ch, argv, opts, &err);
	fprintf(stderr, "dmreplay %s: %s\n", cmd, err.msg);
	return 2;
}

/* ---- usage -------------------------------------------------------------- */

static void kv_usage(FILE *f)
{
	fprintf(f, "usage: dmreplay kv COMMAND [options]   (COMMAND --help for its options)\n\n"
		   "KV-cache pool workload (docs/KVCACHE.md):\n"
		   "  gen      convert a Mooncake JSONL request trace into a KV trace\n"
		   "  run      replay a KV trace over a pool of KV blocks on a backend\n"
		   "  bench    transfer benchmark: per-op latency and Gb/s of large READ/WRITE\n"
		   "  models   list the model presets (KV bytes per token and per block)\n"
		   "  mn       verbs: the MN process hosting the pool and its master (without\n"
		   "           --trace: the key/value store, until SIGINT/SIGTERM)\n"
		   "  cn       verbs: a client process (CN) replaying its share of the trace\n\n"
		   "Key/value store over the pool (docs/KVCACHE.md section 10):\n"
		   "  set KEY FILE|-, get KEY... [-o FILE], del KEY   clients of `kv mn`\n"
		   "  gen --kvops   a set/get/del trace (YCSB-like zipf keys, value sizes)\n"
		   "  run --trace OPS.kvops   replay it on sim, shm or verbs, every get checked\n");
}

static void gen_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay kv gen --mooncake FILE -o OUT [--kv-model NAME | --block-bytes B]\n"
	    "Convert a Mooncake JSONL trace (timestamp ms, input_length, output_length,\n"
	    "hash_ids of 512-token blocks) into a KV trace (docs/KVCACHE.md). Malformed\n"
	    "lines are refused with FILE:LINE and the field; timestamps going backwards\n"
	    "are refused (never sorted).\n\n"
	    "  --mooncake FILE    input JSONL\n"
	    "  -o, --out FILE     output KV trace (written to FILE.tmp, then renamed);\n"
	    "                     - writes it to standard output (this summary to stderr)\n"
	    "  --kv-model NAME    block size from a preset (default llama-3-8b): %s\n"
	    "  --block-bytes B    block size in bytes instead (K/M/G/T suffixes; at most 1G)\n"
	    "  --requests N       convert the first N lines only\n"
	    "  --quiet\n"
	    "A set/get/del trace for the key/value store instead: dmreplay kv gen --kvops\n"
	    "-o OUT [options] (dmreplay kv gen --kvops --help).\n",
	    dmr_kv_model_names());
}

static void run_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay kv run --trace KVTRACE [options]\n"
	    "Replay a KV trace (dmreplay kv gen) over a pool of KV blocks; print a summary,\n"
	    "write DIR/summary.csv and DIR/timeseries.csv.\n\n"
	    "  --trace FILE        KV trace\n"
	    "  --backend NAME      sim (default), shm or verbs (threaded: the master is a thread\n"
	    "                      next to the MN, reached by an RPC over RDMA WRITE/READ);\n"
	    "                      fault:INNER: INNER with the faults of $DMR_FAULT\n"
	    "                      (docs/FAULTS.md)\n"
	    "  --device DEV        verbs: RDMA device name or index (default index 0)\n"
	    "  --port N            verbs: port (default 1)\n"
	    "  --gid-index N       verbs: GID index (default automatic)\n"
	    "  --timeout-s X       threaded: longest wait for an RPC answer or a completion (60)\n"
	    "  --profile NAME      hardware profile for sim (default cx6dx-100g); on verbs only\n"
	    "                      its RoCEv2 framing constants are used (wire bytes)\n"
	    "  --cns N             compute nodes (default 4)\n"
	    "  --clients N         client workers per CN (default 1)\n"
	    "  --segments N        pool segments (default: all clients)\n"
	    "  --unbounded-pool    no capacity limit, no eviction (default)\n"
	    "  --capacity BYTES    pool capacity over all segments (K/M/G/T suffixes)\n"
	    "  --high-water X      evict when a put would exceed X of capacity (default 0.95)\n"
	    "  --low-water X       ... down to X of capacity (default 0.90)\n"
	    "  --placement P       round-robin (default) | least-loaded\n"
	    "  --time-scale X      open loop: arrival = trace time x X (0..100, default 1; 0.5 = "
	    "twice as fast)\n"
	    "  --outstanding N     closed loop with N requests in flight instead\n"
	    "  --slice BYTES       split transfers into slices (default 64K; 0 = one WR per "
	    "block)\n"
	    "  --qp-depth N        slices in flight per client (default 16); threaded backends\n"
	    "                      hold a buffer of N x slice per client (N blocks with --slice "
	    "0)\n"
	    "  --rpc-us X          master lookup RPC (default: profile's small-READ round trip)\n"
	    "  --sim-region BYTES  real MN memory on sim; larger pools are folded into it (default "
	    "16M)\n"
	    "  --mtu BYTES         override the profile's path MTU\n"
	    "  --requests N        replay the first N requests (>= 1; default: all)\n"
	    "  --progress          a progress line on stderr (requests done of the\n"
	    "                      trace's, ETA) also off a terminal; never with --quiet\n"
	    "  --window-ms X       time-series window (0.001..3600000, default 1000)\n"
	    "  --loop L            none (default) or prefetch (Loop X, sim: the pool's hit\n"
	    "                      ratio per window -> prefetch depth of the blocks the\n"
	    "                      chains predict next; docs/KVCACHE.md)\n"
	    "  --prefetch-max N    prefetch: the deepest, 0..64 (default 8)\n"
	    "  --prefetch-buffer N prefetch: blocks a client buffers, 1..65536 (default 64)\n"
	    "  --loop-window-ms X  prefetch: the loop's window (0.001..3600000, default 1000)\n"
	    "  --no-streams        sim: hand every slice's completion to the KV engine instead\n"
	    "                      of letting the sim refill a transfer's slices (the same\n"
	    "                      results, slower: a check of the faster path)\n"
	    "  --out DIR           results directory (default out/kv; a .kvops trace writes\n"
	    "                      files only with --out); one that holds a finished run is\n"
	    "                      refused unless --force (moves it to DIR/earlier-N/)\n"
	    "  --quiet\n"
	    "  --procs             verbs: run `kv mn` (the master) and --cns `kv cn` processes\n"
	    "                      (default 2) on this host (docs/KVCACHE.md 9.7); "
	    "OUT/cluster.json,\n"
	    "                      OUT/mn/, OUT/cnK/, logs OUT/mn.log, OUT/cnK.log, "
	    "OUT/summary.csv\n"
	    "  --config FILE       verbs: the same with the MN and CNs of a cluster config\n"
	    "  --deadline S        --procs: stop the children after S s (default 3600; 0 = "
	    "none)\n");
}

/* kv mn and kv cn share the text below their usage lines; each leads with
 * its own (kv cn --help began with kv mn's line) */
#define KV_MN_USAGE "dmreplay kv mn --config CLUSTER.json --trace KVTRACE [--id K] [pool options]\n"
#define KV_CN_USAGE                                                                                \
	"dmreplay kv cn --config CLUSTER.json --id K --trace KVTRACE [pool and replay options]\n"

static void proc_usage(FILE *f, int mode)
{
	if (mode == KVM_CN) {
		fputs("usage: " KV_CN_USAGE "       " KV_MN_USAGE, f);
	} else {
		fputs("usage: " KV_MN_USAGE, f);
		fputs("       dmreplay kv mn --config CLUSTER.json [--id M] [--capacity BYTES "
		      "(256M)]\n"
		      "                      [--block-bytes B (1M)] [--max-value B]\n"
		      "         without --trace: the key/value store, until SIGINT/SIGTERM (exit\n"
		      "         130); its clients: kv set|get|del\n",
		      f);
		fputs("       " KV_CN_USAGE, f);
	}
	fprintf(
	    f,
	    "The pool as processes on verbs (docs/KVCACHE.md 9.7). `kv mn` is the MN process: it\n"
	    "registers the pool region (mr_size of the config, raised to the pool's size), runs\n"
	    "the master on it and exits when every CN is done (0) or a CN failed or is missing\n"
	    "at the start barrier's deadline (1, naming it). `kv cn --id K` runs --clients\n"
	    "client threads replaying requests i with i mod (CNs x clients) in\n"
	    "[K x clients, K x clients + clients) (K = the CN's index in the config), reaching "
	    "the\n"
	    "master only by RDMA WRITE/READ. Give both the same --trace, --requests, --clients\n"
	    "and pool options (--segments, --capacity/--unbounded-pool, --high-water,\n"
	    "--low-water, --placement): each CN compares the geometry the master wrote into the\n"
	    "region with its own and refuses a mismatch. Replay options (--time-scale,\n"
	    "--outstanding (per CN), --slice, --qp-depth, --timeout-s) matter to CNs only; the MN\n"
	    "accepts and ignores them. `kv run` options otherwise, plus:\n"
	    "  --config FILE          cluster config (docs/ROLES.md); --cns, if given, must match "
	    "it\n"
	    "  --id K                 the CN's (required) or MN's (default the first) id\n"
	    "  --barrier-timeout S    start barrier deadline (default 60)\n"
	    "  --end-timeout S        end barrier deadline (default 300)\n"
	    "  --out DIR              results of this process (summary.csv, or *.partial.csv)\n");
}

static void bench_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay kv bench [--size 4M] [--ops 1000] [--threads T] [--batch B] "
		"[options]\n"
		"Transfer benchmark in the style of Mooncake's transfer_engine_bench: each thread\n"
		"submits B ops of SIZE bytes, waits for all of them, and repeats; prints per-op\n"
		"latency percentiles, throughput in Gb/s and the serialisation lower bound.\n\n"
		"  --size BYTES       bytes per op (default 4M = 4194304)\n"
		"  --ops N            ops over all threads (default 1000)\n"
		"  --threads T        client workers (default 1)\n"
		"  --batch B          ops in flight per thread (default 1)\n"
		"  --cns N            spread the threads over N CNs (default 1)\n"
		"  --op write|read    (default write)\n"
		"  --slice BYTES      slice size (default 64K; 0 = one WR per op)\n"
		"  --qp-depth N       slices in flight per thread (default 16)\n"
		"  --backend NAME     sim (default), shm or verbs (one thread and QP per thread;\n"
		"                     latency and Gb/s measured on the wall clock)\n"
		"  --device DEV       verbs: RDMA device name or index (default index 0)\n"
		"  --port N           verbs: port (default 1)\n"
		"  --gid-index N      verbs: GID index (default automatic)\n"
		"  --timeout-s X      threaded: longest wait for a completion (default 60)\n"
		"  --profile NAME     (default cx6dx-100g; verbs: RoCEv2 framing constants only)\n"
		"  --mtu BYTES        override the profile's path MTU (sim)\n");
}

/* ---- kv gen ------------------------------------------------------------- */

static int kv_gen_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--kvops") == 0) /* a set/get/del trace */
			return dmr_kv_ops_gen_main(argc, argv);
	static const struct option opts[] = {
	    {"mooncake", required_argument, 0, 'i'}, {"out", required_argument, 0, 'o'},
	    {"kv-model", required_argument, 0, 'm'}, {"block-bytes", required_argument, 0, 'b'},
	    {"requests", required_argument, 0, 'n'}, {"quiet", no_argument, 0, 'q'},
	    {"help", no_argument, 0, 'h'},	     {0, 0, 0, 0}};
	const char *cmd = "kv gen";
	dmr_kv_gen_opts_t o = {0};
	const char *model = NULL;
	int quiet = 0, ch;
	optind = 1;
	opterr = 0; /* kv_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'i':
			o.mooncake = optarg;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'm':
			model = optarg;
			break;
		case 'b':
			if (opt_size(cmd, "--block-bytes", optarg, &o.block_bytes))
				return 2;
			if (o.block_bytes == 0) {
				fprintf(stderr, "dmreplay kv gen: --block-bytes must be > 0\n");
				return 2;
			}
			break;
		case 'n':
			if (opt_size(cmd, "--requests", optarg, &o.max_requests))
				return 2;
			if (o.max_requests == 0) {
				fprintf(stderr, "dmreplay kv gen: option --requests: must be >= 1 "
						"(omit it for the whole file)\n");
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			gen_usage(stdout);
			return 0;
		default:
			return kv_refused(cmd, ch, argv, opts);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv gen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o.mooncake || !o.out) {
		fprintf(stderr, "dmreplay kv gen: --mooncake FILE and -o OUT are required\n");
		gen_usage(stderr);
		return 2;
	}
	if (model && o.block_bytes) {
		fprintf(stderr, "dmreplay kv gen: give --kv-model or --block-bytes, not both\n");
		return 2;
	}
	if (!o.block_bytes) {
		const dmr_kv_model_t *km = dmr_kv_model_find(model ? model : "llama-3-8b");
		if (!km) {
			fprintf(stderr, "dmreplay kv gen: --kv-model '%s': unknown (known: %s)\n",
				model, dmr_kv_model_names());
			return 2;
		}
		o.block_bytes = dmr_kv_model_block_bytes(km);
		o.kv_model = km->name;
	}
	dmr_kv_gen_stats_t s;
	dmr_err_t err;
	dmr_status_t st = dmr_kv_gen_mooncake(&o, &s, &err);
	if (st != DMR_OK) {
		/* an interruption is no error of the input or the run */
		fprintf(stderr, "dmreplay kv gen: %s%s\n",
			st == DMR_ERR_INTERRUPTED ? "" : "error: ", err.msg);
		return dmr_exit_status(st);
	}
	if (!quiet) {
		/* -o -: the trace is on standard output, this summary on stderr */
		int stream = strcmp(o.out, "-") == 0;
		FILE *f = stream ? stderr : stdout;
		char b1[32], b2[32];
		kv_fmt_bytes(b1, sizeof(b1), (double)o.block_bytes);
		kv_fmt_bytes(b2, sizeof(b2), (double)s.distinct * o.block_bytes);
		fprintf(f, "dmreplay kv gen: %s -> %s\n", o.mooncake,
			stream ? "standard output" : o.out);
		fprintf(f, "  requests       %" PRIu64 " over %.3f s of trace time\n", s.requests,
			s.last_t_us / 1e6);
		fprintf(f,
			"  blocks         %" PRIu64 " requested, %" PRIu64 " distinct ids, %" PRIu64
			" reuses of an earlier request's id\n",
			s.blocks, s.distinct, s.reused);
		fprintf(
		    f,
		    "  prefix reuse   %.6f of requested blocks (= hit ratio of an unbounded pool, "
		    "requests in trace order)\n",
		    s.blocks ? (double)s.reused / s.blocks : 0);
		fprintf(f, "  block size     %s (%s); an unbounded pool holds %s\n", b1,
			o.kv_model ? o.kv_model : "--block-bytes", b2);
	}
	return 0;
}

/* ---- kv run / mn / cn --------------------------------------------------- */

/* One option of kv run / mn / cn that is not shared with kv bench: 0, 1
 * (bad value, printed), or 3 + exit status to return now. */
static int kv_run_opt(int ch, const char *name, const char *arg, dmr_kv_opts_t *o,
		      kv_proc_args_t *a, int *saw_unb, int *saw_cap)
{
	const char *cmd = a->cmd;
	int m = a->mode;
	if (m == KVM_ONE && (ch == O_ID || ch == O_BARRIER || ch == O_END)) {
		fprintf(stderr, "dmreplay kv run: %s is an option of kv mn / kv cn\n", name);
		return 3 + 2;
	}
	/* --no-streams is the sim's: kv mn / kv cn run on verbs */
	if (m != KVM_ONE && (ch == O_PROCS || ch == O_DEADLINE || ch == O_NO_STREAMS)) {
		fprintf(stderr, "dmreplay %s: %s is an option of kv run\n", cmd, name);
		return 3 + 2;
	}
	switch (ch) {
	case O_TRACE:
		o->trace = arg;
		return 0;
	case O_CONFIG:
		a->config = arg;
		return 0;
	case O_PROCS:
		a->procs = 1;
		return 0;
	case O_DEADLINE:
		return opt_num(cmd, name, arg, &a->deadline_s);
	case O_ID: {
		uint32_t v;
		int bad = opt_u32(cmd, name, arg, &v, 0, INT32_MAX);
		a->id = v;
		return bad;
	}
	case O_BARRIER:
		return opt_pos(cmd, name, arg, &a->barrier_s);
	case O_END:
		return opt_pos(cmd, name, arg, &a->end_s);
	case O_OUT:
		o->out_dir = dmr_kv_out_trim(arg, a->out_trim, sizeof(a->out_trim));
		return 0;
	case O_QUIET:
		o->quiet = 1;
		return 0;
	case O_NO_STREAMS:
		o->no_streams = 1;
		return 0;
	case O_HELP:
		if (m == KVM_ONE)
			run_usage(stdout);
		else
			proc_usage(stdout, m);
		return 3 + 0;
	case O_CLIENTS:
		return opt_u32(cmd, name, arg, &o->clients, 1, 1024);
	case O_SEGMENTS:
		return opt_u32(cmd, name, arg, &o->segments, 1, 1u << 20);
	case O_OUTSTANDING:
		return opt_u32(cmd, name, arg, &o->outstanding, 1, 1u << 24);
	case O_UNBOUNDED:
		*saw_unb = 1;
		o->unbounded = 1;
		return 0;
	case O_CAPACITY:
		*saw_cap = 1;
		o->unbounded = 0;
		return opt_size(cmd, name, arg, &o->capacity);
	case O_HIGH:
		return opt_num(cmd, name, arg, &o->high_water);
	case O_LOW:
		return opt_num(cmd, name, arg, &o->low_water);
	case O_TIME_SCALE:
		return opt_num(cmd, name, arg, &o->time_scale);
	case O_RPC_US:
		return opt_num(cmd, name, arg, &o->rpc_us);
	case O_WINDOW:
		return opt_num(cmd, name, arg, &o->window_ms);
	case O_SIM_REGION:
		return opt_size(cmd, name, arg, &o->sim_region);
	case O_REQUESTS:
		if (opt_size(cmd, name, arg, &o->requests))
			return 1;
		if (o->requests == 0) { /* as run --txns 0 (issue #15 D18) */
			fprintf(stderr,
				"dmreplay %s: option --requests: must be >= 1 (omit it for the "
				"whole trace)\n",
				cmd);
			return 1;
		}
		return 0;
	case O_PROGRESS:
		o->progress = 1;
		return 0;
	case O_LOOP: {
		dmr_err_t e;
		unsigned l = 0;
		if (opt_bad(cmd, dmr_loop_parse_for(arg, DMR_LOOP_PREFETCH, &l, &e), &e))
			return 1;
		if (l & ~DMR_LOOP_PREFETCH) {
			fprintf(stderr,
				"dmreplay %s: --loop '%s': kv run takes none or prefetch (Loop X); "
				"the others are transaction loops (dmreplay run --loop)\n",
				cmd, arg);
			return 1;
		}
		o->loop = l;
		return 0;
	}
	case O_PF_MAX:
		return opt_u32(cmd, name, arg, &o->pf.max_depth, 0, DMR_KV_PF_MAX_DEPTH);
	case O_PF_BUF:
		return opt_u32(cmd, name, arg, &o->pf.buffer, 1, 1u << 16);
	case O_LOOP_WIN: {
		dmr_err_t e;
		return opt_bad(cmd,
			       dmr_opt_double(name, arg, DMR_KV_WINDOW_MS_MIN, DMR_KV_WINDOW_MS_MAX,
					      0, &o->loop_window_ms, &e),
			       &e);
	}
	case O_PLACEMENT:
		if (strcmp(arg, "round-robin") == 0 || strcmp(arg, "rr") == 0)
			o->placement = DMR_KV_PLACE_RR;
		else if (strcmp(arg, "least-loaded") == 0 || strcmp(arg, "ll") == 0)
			o->placement = DMR_KV_PLACE_LEAST;
		else {
			fprintf(stderr,
				"dmreplay kv run: --placement '%s': round-robin or "
				"least-loaded\n",
				arg);
			return 1;
		}
		return 0;
	default:
		if (m == KVM_ONE)
			run_usage(stderr);
		else
			proc_usage(stderr, m);
		return 3 + 2;
	}
}

/* The summary of a run (kv run, kv mn, kv cn), its error: the exit status. */
static int kv_run_report(const dmr_kv_opts_t *o, const kv_proc_args_t *a, const dmr_kv_result_t *r,
			 const dmr_err_t *err, dmr_status_t st)
{
	/* a run that started prints its summary, [PARTIAL] when it failed or
	 * was interrupted (also before its first request completed: a sim run
	 * of large blocks or --time-scale 0 takes seconds to its first), as
	 * `run` does and as its summary.partial.csv says; --quiet: nothing on
	 * stdout, a partial run's summary neither (its files say PARTIAL; the
	 * error line says why), as `run --quiet` */
	if ((st == DMR_OK || r->partial) && !o->quiet)
		dmr_kv_print(r, stdout);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay %s: error: %s\n", a->cmd, err->msg);
		return dmr_exit_status(st);
	}
	if (!o->quiet && o->out_dir)
		printf("  results        %s/summary.csv, %s/timeseries.csv\n", o->out_dir,
		       o->out_dir);
	return 0;
}

/* --force of `kv run` (taken out of argv by kv_run_one, read by
 * dmr_kv_out_claim and kv_on_start). */
static int kv_force;

/* dmr_kv_opts_t.on_start of kv run: --out's earlier files moved aside
 * (dmr_roles_clear_earlier) now that the run is sure to start. */
static dmr_status_t kv_on_start(void *arg, dmr_err_t *err)
{
	const char *out = arg;
	if (dmr_roles_clear_earlier(out, "dmreplay kv run", kv_force, NULL, 0) != 0)
		return dmr_err_set(err, DMR_ERR_IO,
				   "--out %s: the files of an earlier run could not be moved "
				   "aside (above): nothing was run",
				   out);
	return DMR_OK;
}

/* kv run (one process, or the --procs launcher): the trace and the options
 * checked before --out is made; --out made and held (DIR/.dmr-lock, as
 * `run`: a second run into it is refused at once) for as long as the run
 * runs; finished results in it refused without --force, and moved aside
 * (with --force; an unfinished run's files without) only once the run is
 * set up and sure to start. A refused run (exit 2) leaves --out as it was:
 * the directories it made and the lock file it made go again. */
static int kv_run_one_locked(int argc, char **argv, dmr_kv_opts_t *o, kv_proc_args_t *a)
{
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_check(o, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay %s: error: %s\n", a->cmd, err.msg);
		return dmr_exit_status(st);
	}
	dmr_kv_out_hold_t hold;
	int rc = dmr_kv_out_hold(&hold, o->out_dir, a->cmd);
	if (rc)
		return rc;
	if (a->procs || a->config) {
		/* the launcher: its children write into --out; the earlier
		 * files move (dmr_kv_out_claim) only once its own checks
		 * passed, just before the children start */
		rc = dmr_kv_out_refused(o->out_dir);
		if (rc == 0)
			rc = kv_launch(argc, argv, o, a);
	} else if ((rc = dmr_roles_earlier_refused(o->out_dir, "dmreplay kv run", kv_force)) == 0) {
		o->on_start = kv_on_start;
		o->on_start_arg = (void *)o->out_dir;
		dmr_kv_result_t r;
		st = dmr_kv_run(o, &r, &err);
		rc = kv_run_report(o, a, &r, &err, st);
	}
	dmr_kv_out_release(&hold, rc);
	return rc;
}

static int kv_run_main(int argc, char **argv, int mode)
{
	static const struct option opts[] = {{"trace", required_argument, 0, O_TRACE},
					     {"backend", required_argument, 0, O_BACKEND},
					     {"profile", required_argument, 0, O_PROFILE},
					     {"cns", required_argument, 0, O_CNS},
					     {"clients", required_argument, 0, O_CLIENTS},
					     {"segments", required_argument, 0, O_SEGMENTS},
					     {"unbounded-pool", no_argument, 0, O_UNBOUNDED},
					     {"capacity", required_argument, 0, O_CAPACITY},
					     {"high-water", required_argument, 0, O_HIGH},
					     {"low-water", required_argument, 0, O_LOW},
					     {"placement", required_argument, 0, O_PLACEMENT},
					     {"time-scale", required_argument, 0, O_TIME_SCALE},
					     {"outstanding", required_argument, 0, O_OUTSTANDING},
					     {"slice", required_argument, 0, O_SLICE},
					     {"qp-depth", required_argument, 0, O_QP_DEPTH},
					     {"rpc-us", required_argument, 0, O_RPC_US},
					     {"sim-region", required_argument, 0, O_SIM_REGION},
					     {"mtu", required_argument, 0, O_MTU},
					     {"requests", required_argument, 0, O_REQUESTS},
					     {"window-ms", required_argument, 0, O_WINDOW},
					     {"out", required_argument, 0, O_OUT},
					     {"quiet", no_argument, 0, O_QUIET},
					     {"progress", no_argument, 0, O_PROGRESS},
					     {"device", required_argument, 0, O_DEVICE},
					     {"port", required_argument, 0, O_PORT},
					     {"gid-index", required_argument, 0, O_GID},
					     {"timeout-s", required_argument, 0, O_TIMEOUT},
					     {"help", no_argument, 0, O_HELP},
					     {"config", required_argument, 0, O_CONFIG},
					     {"id", required_argument, 0, O_ID},
					     {"barrier-timeout", required_argument, 0, O_BARRIER},
					     {"end-timeout", required_argument, 0, O_END},
					     {"procs", no_argument, 0, O_PROCS},
					     {"deadline", required_argument, 0, O_DEADLINE},
					     {"loop", required_argument, 0, O_LOOP},
					     {"prefetch-max", required_argument, 0, O_PF_MAX},
					     {"prefetch-buffer", required_argument, 0, O_PF_BUF},
					     {"loop-window-ms", required_argument, 0, O_LOOP_WIN},
					     {"no-streams", no_argument, 0, O_NO_STREAMS},
					     {0, 0, 0, 0}};
	kv_proc_args_t a = {.mode = mode,
			    .id = -1,
			    .barrier_s = 60,
			    .end_s = 300,
			    .deadline_s = 3600,
			    .cmd = mode == KVM_MN   ? "kv mn"
				   : mode == KVM_CN ? "kv cn"
						    : "kv run"};
	dmr_kv_opts_t o;
	dmr_kv_opts_default(&o);
	int ch, li = -1, saw_unb = 0, saw_cap = 0, saw[4] = {0, 0, 0, 0};
	kv_common_t com = {&o.backend, &o.profile,  &o.device, &o.port, &o.gid_index, &o.timeout_s,
			   &o.slice,   &o.qp_depth, &o.mtu,    &o.cns,	saw};
	char name[40];
	optind = 1;
	opterr = 0; /* kv_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		if (ch == 'h')
			ch = O_HELP;
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		if (ch == '?')
			return kv_refused(a.cmd, ch, argv, opts);
		int bad = 0;
		if (!kv_common_opt(a.cmd, ch, name, optarg, &com, &bad))
			bad = kv_run_opt(ch, name, optarg, &o, &a, &saw_unb, &saw_cap);
		if (bad >= 3)
			return bad - 3;
		if (bad)
			return 2;
	}
	a.saw_be = saw[0];
	a.saw_dev = saw[1];
	a.saw_cns = saw[2];
	if (optind < argc) {
		fprintf(stderr, "dmreplay %s: unexpected argument '%s'\n", a.cmd, argv[optind]);
		return 2;
	}
	if (saw_unb && saw_cap) {
		fprintf(stderr, "dmreplay %s: --unbounded-pool and --capacity exclude each other\n",
			a.cmd);
		return 2;
	}
	/* kv run only: kv mn / kv cn are verbs processes whatever --backend says */
	if (mode == KVM_ONE &&
	    dmr_replay_backend_opts_check(
		a.cmd, o.backend, saw[1] ? "--device, --port or --gid-index" : NULL, saw[3]) != 0)
		return 2;
	/* as --profile: an option of the sim alone is refused elsewhere */
	if (mode == KVM_ONE && o.no_streams && o.backend &&
	    strcmp(dmr_be_base_name(o.backend), "sim") != 0) {
		fprintf(stderr,
			"dmreplay %s: option --no-streams: only the sim backend streams a block's "
			"slices (--backend %s)\n",
			a.cmd, o.backend);
		return 2;
	}
	if (mode == KVM_ONE)
		return kv_run_one_locked(argc, argv, &o, &a);
	dmr_kv_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st;
	int rc = kv_proc_run(&o, &a, &r, &err, &st);
	return rc >= 0 ? rc : kv_run_report(&o, &a, &r, &err, st);
}

/* ---- kv bench ----------------------------------------------------------- */

static int kv_bench_main(int argc, char **argv)
{
	static const struct option opts[] = {{"size", required_argument, 0, O_SIZE},
					     {"ops", required_argument, 0, O_OPS},
					     {"threads", required_argument, 0, O_THREADS},
					     {"batch", required_argument, 0, O_BATCH},
					     {"cns", required_argument, 0, O_CNS},
					     {"op", required_argument, 0, O_OP},
					     {"slice", required_argument, 0, O_SLICE},
					     {"qp-depth", required_argument, 0, O_QP_DEPTH},
					     {"backend", required_argument, 0, O_BACKEND},
					     {"profile", required_argument, 0, O_PROFILE},
					     {"mtu", required_argument, 0, O_MTU},
					     {"help", no_argument, 0, O_HELP},
					     {"device", required_argument, 0, O_DEVICE},
					     {"port", required_argument, 0, O_PORT},
					     {"gid-index", required_argument, 0, O_GID},
					     {"timeout-s", required_argument, 0, O_TIMEOUT},
					     {0, 0, 0, 0}};
	const char *cmd = "kv bench";
	dmr_kv_bench_opts_t o;
	dmr_kv_bench_opts_default(&o);
	kv_common_t com = {&o.backend, &o.profile,  &o.device, &o.port, &o.gid_index, &o.timeout_s,
			   &o.slice,   &o.qp_depth, &o.mtu,    &o.cns,	NULL};
	int ch, li = -1;
	char name[40];
	optind = 1;
	opterr = 0; /* kv_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		if (ch == 'h')
			ch = O_HELP;
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		int bad = 0;
		if (kv_common_opt(cmd, ch, name, optarg, &com, &bad)) {
			if (bad)
				return 2;
			continue;
		}
		switch (ch) {
		case O_SIZE:
			bad = opt_size(cmd, name, optarg, &o.size);
			break;
		case O_OPS:
			bad = opt_size(cmd, name, optarg, &o.ops);
			break;
		case O_THREADS:
			bad = opt_u32(cmd, name, optarg, &o.threads, 1, 1024);
			break;
		case O_BATCH:
			bad = opt_u32(cmd, name, optarg, &o.batch, 1, 1u << 20);
			break;
		case O_OP:
			if (strcmp(optarg, "write") == 0)
				o.opcode = DMR_WR_WRITE;
			else if (strcmp(optarg, "read") == 0)
				o.opcode = DMR_WR_READ;
			else {
				fprintf(stderr, "dmreplay kv bench: --op '%s': write or read\n",
					optarg);
				bad = 1;
			}
			break;
		case O_HELP:
			bench_usage(stdout);
			return 0;
		default:
			return kv_refused(cmd, ch, argv, opts);
		}
		if (bad)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay kv bench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	dmr_kv_bench_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_bench(&o, &r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay kv bench: error: %s\n", err.msg);
		return dmr_exit_status(st);
	}
	dmr_kv_bench_print(&o, &r, stdout);
	return 0;
}

/* ---- kv models, dispatch ------------------------------------------------ */

static int kv_models_main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: dmreplay kv models\n"
		       "List the KV model presets of kv gen --kv-model: layers, KV heads, head\n"
		       "dimension, bytes per element, bytes per token and per block "
		       "(docs/KVCACHE.md).\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr,
			"dmreplay kv models: unexpected argument '%s'\n"
			"usage: dmreplay kv models (no options; --help)\n",
			argv[1]);
		return 2;
	}
	printf("%-12s %6s %8s %8s %5s %12s %14s  %s\n", "preset", "layers", "kv_heads", "head_dim",
	       "bytes", "bytes/token", "block_bytes", "config");
	for (const dmr_kv_model_t *m = dmr_kv_models; m->name; m++) {
		char b[32];
		kv_fmt_bytes(b, sizeof(b), (double)dmr_kv_model_block_bytes(m));
		printf("%-12s %6u %8u %8u %5u %12" PRIu64 " %14" PRIu64 "  %s (%s)\n", m->name,
		       m->layers, m->kv_heads, m->head_dim, m->elem_bytes,
		       dmr_kv_model_bytes_per_token(m), dmr_kv_model_block_bytes(m), m->hf_id, b);
	}
	printf("block = %u tokens x 2 (K,V) x layers x kv_heads x head_dim x bytes per element\n",
	       DMR_KV_BLOCK_TOKENS);
	return 0;
}

/* The value of option `name` ("--name V" or "--name=V"), NULL when absent;
 * has_flag: 1 when a bare `name` is present. */
static const char *arg_of(int argc, char **argv, const char *name, int *has_flag)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], name) == 0) {
			if (has_flag)
				*has_flag = 1;
			return i + 1 < argc ? argv[i + 1] : NULL;
		}
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return NULL;
}

/* An --out that is not there yet holds nothing; one that is not a
 * directory is left to the run's own message. */
static int kv_out_is_dir(const char *out)
{
	struct stat sb;
	return out && *out && stat(out, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int dmr_kv_out_hold(dmr_kv_out_hold_t *h, const char *dir, const char *cmd)
{
	dmr_err_t err = {{0}};
	char msg[1400];
	struct stat sb;
	h->dir = dir;
	h->fd = -1;
	h->made = dmr_dirs_missing(dir);
	dmr_status_t st = dmr_kv_out_check(dir, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay %s: error: %s\n", cmd, err.msg);
		dmr_rmdir_made(dir, h->made);
		return dmr_exit_status(st);
	}
	snprintf(h->lk, sizeof(h->lk), "%s/.dmr-lock", dir);
	h->had_lock = lstat(h->lk, &sb) == 0;
	if ((h->fd = dmr_sweepdir_lock(dir, msg, sizeof(msg), NULL)) < 0) {
		fprintf(stderr, "dmreplay %s: error: --out %s\n", cmd, msg);
		return 2; /* another run's directory: nothing of it touched */
	}
	return 0;
}

void dmr_kv_out_release(dmr_kv_out_hold_t *h, int rc)
{
	if (rc == 2 && !h->had_lock) /* refused: the lock file this run made goes */
		unlink(h->lk);
	close(h->fd);
	if (rc == 2 && h->made) /* refused: the directories it made (kept when not empty) */
		dmr_rmdir_made(h->dir, h->made);
}

const char *dmr_kv_out_trim(const char *out, char *buf, size_t len)
{
	size_t n = out ? strlen(out) : 0, k = n;
	while (k > 1 && out[k - 1] == '/')
		k--;
	if (k == n || k >= len)
		return out;
	memcpy(buf, out, k);
	buf[k] = 0;
	return buf;
}

int dmr_kv_out_claim(const char *out, char *moved, size_t movedlen)
{
	if (moved && movedlen)
		moved[0] = 0;
	if (!kv_out_is_dir(out))
		return 0;
	return dmr_roles_clear_earlier(out, "dmreplay kv run", kv_force, moved, movedlen);
}

int dmr_kv_out_refused(const char *out)
{
	if (!kv_out_is_dir(out))
		return 0;
	return dmr_roles_earlier_refused(out, "dmreplay kv run", kv_force);
}

/* `kv run`: --force taken out of argv (dmr_kv_out_claim reads it), then
 * the KV-cache replay or, for a kvops trace, the key/value store's. */
static int kv_run_one(int argc, char **argv)
{
	int n = 0;
	char **av = calloc((size_t)argc + 1, sizeof(*av));
	if (!av) {
		fprintf(stderr, "dmreplay kv run: out of memory\n");
		return 1;
	}
	kv_force = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 && i > 0) {
			kv_force = 1;
			continue;
		}
		av[n++] = argv[i];
	}
	const char *t = arg_of(n, av, "--trace", NULL);
	int rc = t && dmr_kvops_is(t) ? dmr_kv_ops_run_main(n, av) /* the key/value store */
				      : kv_run_main(n, av, KVM_ONE);
	free(av);
	return rc;
}

static int kv_mn_main(int argc, char **argv)
{
	int help = 0, h = 0;
	arg_of(argc, argv, "--help", &help);
	arg_of(argc, argv, "-h", &h);
	if (!help && !h && !arg_of(argc, argv, "--trace", NULL)) /* no trace: the store */
		return dmr_kv_store_mn_main(argc, argv);
	return kv_run_main(argc, argv, KVM_MN);
}

static int kv_store_main(int argc, char **argv)
{
	return dmr_kv_store_cli_main(argc, argv);
}

static int kv_cn_main(int argc, char **argv)
{
	return kv_run_main(argc, argv, KVM_CN);
}

static int kv_help_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	kv_usage(stdout);
	return 0;
}

int dmr_kv_main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*main)(int, char **);
	} cmds[] = {{"--help", kv_help_main}, {"-h", kv_help_main},   {"help", kv_help_main},
		    {"gen", kv_gen_main},     {"run", kv_run_one},    {"bench", kv_bench_main},
		    {"mn", kv_mn_main},	      {"cn", kv_cn_main},     {"models", kv_models_main},
		    {"set", kv_store_main},   {"get", kv_store_main}, {"del", kv_store_main}};
	const char *cmd = argc < 2 ? NULL : argv[1];
	for (size_t i = 0; cmd && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmd, cmds[i].name) == 0)
			return cmds[i].main(argc - 1, argv + 1);
	if (cmd)
		fprintf(stderr, "dmreplay kv: unknown command '%s'\n", cmd);
	kv_usage(stderr);
	return 2;
}
