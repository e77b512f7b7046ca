/*
 * replay/cli.c - `dmreplay run`: its options (getopt_long; values through
 * core/base/opt.h), then a replay (replay.h) or the MN and CN processes
 * (roles.h); the human summary and exit status come from results.h.
 * The run holds its --out (dmr_sweepdir_lock, sweepdir.h) from before it
 * starts until it exits, and never writes over finished results
 * (dmr_roles_earlier_refused, roles.h: refused up front, or moved with
 * --force by dmr_roles_clear_earlier once the run is set up and sure to
 * start: dmr_replay_opts_t.on_start).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/base/fs.h"
#include "../core/base/opt.h"
#include "../core/base/timeps.h"
#include "../core/txn.h"
#include "breakdown.h"
#include "replay.h"
#include "results.h"
#include "roles.h"
#include "setup.h"
#include "sweepdir.h"

#define DEFAULT_TRACE DMR_SOURCE_DIR "/traces/samples/tpcc-extreme.csv"

static void run_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay run [--trace FILE] [options]\n"
	    "Replay a trace on a backend; print a summary, write DIR/summary.csv and\n"
	    "DIR/timeseries.csv.\n\n"
	    "  --trace FILE      trace to replay (default: the shipped sample\n"
	    "                    %s)\n"
	    "  --no-trace-cache  read the CSV itself (default: through its binary cache\n"
	    "                    FILE.dmrc, built on first use, rebuilt when FILE\n"
	    "                    changes; traces/FORMAT.md \"Binary cache\")\n"
	    "  --trace-cache-dir DIR  keep the binary cache in DIR instead\n"
	    "  --backend NAME    sim (default); verbs (rdma-core: MN and CNs in this\n"
	    "                    process over loopback RDMA); shm (loopback: verbs executed\n"
	    "                    by the CPU, one thread per worker; for testing);\n"
	    "                    fault:INNER (INNER with the faults of --fault);\n"
	    "                    record:INNER (INNER, every post and completion logged\n"
	    "                    to $DMR_RECORD, default dmreplay.rec; docs/RECORD.md)\n"
	    "  --fault SPEC      with --backend fault:INNER: faults to inject, e.g.\n"
	    "                    unreachable:mn=0@2ms, fail:op=100:status=REM_ACCESS_ERR,\n"
	    "                    delay:mn=0:us=50, drop:after=1000 (comma-separated;\n"
	    "                    default $DMR_FAULT; docs/FAULTS.md)\n"
	    "  --profile NAME    hardware profile for sim (default cx6dx-100g)\n"
	    "  --device DEV      verbs: RDMA device name or index (e.g. rxe0, mlx5_2)\n"
	    "  --port N          verbs: port (default 1)\n"
	    "  --gid-index N     verbs: GID index (default: the RoCEv2 GID whose IPv4\n"
	    "                    address is this node's own)\n"
	    "  --cns N           compute nodes (1..1024, default 4)\n"
	    "  --threads N       workers per CN (1..1024, default 28)\n"
	    "  --coros N         transaction contexts per worker (1..100000, default 3;\n"
	    "                    cns x threads x coros must fit in memory)\n"
	    "  --coro_num N      Motor's and FORD's spelling: N coroutines per thread,\n"
	    "                    one of them their poller, so --coros N-1 (N >= 2;\n"
	    "                    docs/PROTOCOLS.md \"Coroutines\")\n"
	    "  --seed S          seed (default 1)\n"
	    "  --txns N          replay the first N transactions (default: all)\n"
	    "  --duration T      start no transaction after T of run time (0.5, 200ms,\n"
	    "                    50us); the running ones finish\n"
	    "  --retries N       retries per aborted transaction (default 0: an aborted\n"
	    "                    transaction is counted and the context moves on, as in\n"
	    "                    the published DM benchmarks; tried = attempts)\n"
	    "  --backoff-us X    wait X us before a retry (default 0)\n"
	    "  --mr-size BYTES   MN region size (default, or 0: the footprint; K/M/G/T\n"
	    "                    suffixes)\n"
	    "  --mtu BYTES       override the profile's path MTU (256, 512, 1024, 2048\n"
	    "                    or 4096: the IBTA path MTUs)\n"
	    "  --window-ms X     time-series window (0.001..3600000, default 100; at most\n"
	    "                    1,000,000 rows: a run that needs more stops, partial)\n"
	    "  --out DIR         results directory (default out)\n"
	    "  --loop L          admission control: none (default), aimd (Loop A:\n"
	    "                    transaction slots per CN, 1..threads x coros), perkey\n"
	    "                    (per hot key), aimd-worker (Loop A per worker, 1..coros),\n"
	    "                    doorbell (Loop C: WRs per doorbell per CN, 1..doorbell-max,\n"
	    "                    on MN link/PCIe and doorbell MMIO utilisation), aura\n"
	    "                    (levers A1..A4 by a self-tuned cost model; docs/AURA.md),\n"
	    "                    or several joined by + (aimd+perkey, aimd+aura; core/loop.h)\n"
	    "  --ai-step N       aimd additive increase, slots per window (default 4)\n"
	    "  --md-factor X     aimd multiplicative decrease divisor (default 2)\n"
	    "  --loop-window-ms X  reaction window of the loops (default 5)\n"
	    "  --loop-threshold X  aimd: aborts per attempt above which it decreases\n"
	    "                    (default 0.5)\n"
	    "  --doorbell-max N  doorbell: the most WRs per doorbell, 1..4096 (default 32)\n"
	    "  --aura-levers L   aura: none, all (default) or a1..a4 joined by , or +\n"
	    "                    (a1 RPC path, a2 ownership, a3 CN cache, a4 balance)\n"
	    "  --aura-tuner T    aura: fixed, rule or sgd (default; docs/AURA.md)\n"
	    "  --aura-weights W  aura: start weights, e.g. atomic=0.5,rpc=1,move=2.5,\n"
	    "                    load=0.18 (the defaults; numbers >= 0); or one each:\n"
	    "                    --aura-w-atomic X, --aura-w-rpc, --aura-w-move, --aura-w-load\n"
	    "  --aura-lr X       aura sgd: step in (0, 1] (default 0.1)\n"
	    "  --aura-groups N   aura: record groups, 1..4096 (default: the trace's\n"
	    "                    warehouses, else 64)\n"
	    "  --doorbell-util X doorbell: utilisation in (0, 1] at or above which the\n"
	    "                    batch doubles; below X / 2 it halves (default 0.2)\n"
	    "  --loop_a[=BOOL]   the published flag: true (or no value) adds aimd to\n"
	    "                    --loop, false removes it\n"
	    "  --loop_a_ai_step N  the published name of --ai-step\n"
	    "  --loop_a_nf X     the published name of --md-factor\n"
	    "  --procs           verbs: one MN and --cns CN processes on this host\n"
	    "                    (dmreplay mn / cn, fork + exec; docs/ROLES.md): writes\n"
	    "                    DIR/cluster.json, logs DIR/mn.log and DIR/cnK.log, results\n"
	    "                    DIR/cnK/ and the combined DIR/summary.csv\n"
	    "  --config FILE     verbs: as --procs with this cluster config (its CNs)\n"
	    "  --deadline S      --procs: stop the processes after S seconds (default 3600)\n"
	    "  --force           when DIR holds the finished results of an earlier run\n"
	    "                    (summary.csv), move them to DIR/earlier-N/ first (else\n"
	    "                    refused); a run into DIR that another run holds is\n"
	    "                    always refused\n"
	    "  --published-log F also print the per-type and per-CN figures as the\n"
	    "                    published benchmarks' logs do: crest (Tried Throughput,\n"
	    "                    per-type tickers), ford (abort_rate and result lines) or\n"
	    "                    all (docs/RESULTS.md); printed with --quiet too\n"
	    "  --quiet           nothing on stdout; only errors and notes (note:) on stderr\n"
	    "  --progress        a progress line on stderr (started/total transactions,\n"
	    "                    ETA) also when stderr is not a terminal (on a terminal\n"
	    "                    it is shown anyway; never with --quiet)\n"
	    "  --mns M           memory nodes (1..16, default 1; verbs --procs: one MN\n"
	    "                    process each, on ports P..P+M-1); tables placed as\n"
	    "                    FORD does: primary of table t on MN t %% M\n"
	    "  --backups R       backups per table (0..2, default 0; R < M): backup i on\n"
	    "                    MN (t %% M + i) %% M; write-backs go to every replica\n"
	    "  --protocol P      occ (default: docs/PROTOCOLS.md), ford (FORD's\n"
	    "                    public code: undo log to every MN, invisible-then-\n"
	    "                    release commit, selective flush), farm or drtmh\n"
	    "                    (FORD's baselines: lock after execution, redo log\n"
	    "                    to the backups, primary, then backups in place),\n"
	    "                    crest (CREST's cell-level locks and per-cell versions),\n"
	    "                    motor (Motor's multi-version records, timestamps,\n"
	    "                    commit to primary and backups; needs --backups >= 1)\n"
	    "  --crest-locks L   crest: masked (one masked CAS per record; sim, shm) or\n"
	    "                    words (the portable variant for verbs); default masked\n"
	    "                    where the backend has masked CAS, else words\n"
	    "  --crest-local X   crest: on (default, CREST's localized execution: a\n"
	    "                    transaction waits for its CN's holder of a cell) or off\n"
	    "  --crest-cache X   crest: on (default, CREST's CN record cache: a read of a\n"
	    "                    record validated recently on the CN posts no READ; it is\n"
	    "                    validated at commit as any read) or off\n"
	    "  --crest-cache-ttl US  crest: how long a validated record is served from\n"
	    "                    the CN record cache, in us, up to 10 s (default 100,\n"
	    "                    within which a cell's 14-bit version cannot wrap; on\n"
	    "                    shm and verbs the clock is the wall clock)\n"
	    "  --isolation L     motor: sr (default, Motor's) or si (snapshot isolation:\n"
	    "                    read-only records not validated); the other protocols\n"
	    "                    are serializable: sr only\n"
	    "  --rpc P           none (default: one-sided), all (every transaction as\n"
	    "                    one RPC executed by the MN's CPU; occ, ford; sim, shm,\n"
	    "                    verbs) or half (odd trace ids by RPC; verbs: a device\n"
	    "                    with atomic_cap GLOB): docs/AURA.md \"A1\". A transaction\n"
	    "                    whose records span MNs, or any with backups, runs\n"
	    "                    one-sided (the summary counts them)\n"
	    "  --versions V      motor: versions per record (2..8, default 4: Motor's\n"
	    "                    MAX_VCELL_NUM for TPC-C; 3 SmallBank, 2 TATP)\n"
	    "  --index I         direct (default: addresses computed) or hash (an MN\n"
	    "                    hash index: a bucket READ finds a record not cached)\n"
	    "  --index-buckets N hash: buckets of 8 slots per table (default: rows / 4);\n"
	    "                    a table with more rows than slots is refused\n"
	    "  --addr-cache N    hash: address-cache entries per CN, LRU (default 0:\n"
	    "                    none, every first access READs the bucket)\n"
	    "  --dm-locks T,...  the lock words of tables T in the MN NICs' device\n"
	    "                    memory (sim: profile's dm_* atomic rates; refused\n"
	    "                    where the profile or device has none)\n"
	    "                    (verbs: lock words apart from their records, in\n"
	    "                    device memory; occ and ford)\n"
	    "  --locks-apart T,... the lock words of tables T apart from their records,\n"
	    "                    in a lock-word region in host memory (--dm-locks's\n"
	    "                    layout on verbs; any backend; occ and ford)\n"
	    "  --cn-cache T,...  occ, ford, farm, drtmh: read-only ops of tables T (or\n"
	    "                    all; default none) served from a per-CN record cache\n"
	    "                    (no READ; the version validated at commit, a changed\n"
	    "                    one aborts as cache_stale); crest: --crest-cache\n"
	    "  --cn-cache-entries N  its records per CN (default 16384, up to 16M)\n"
	    "  --cxl-tables T,...  tables T on the MN's CXL memory tier (sim, a\n"
	    "                    profile with cxl_*: e.g. cx7-400g)\n"
	    "  --help\n",
	    DEFAULT_TRACE);
}

/* Long-only options (no short letter). */
enum {
	OPT_MNS = 1000,
	OPT_BACKUPS,
	OPT_PROTOCOL,
	OPT_INDEX,
	OPT_INDEX_BUCKETS,
	OPT_ADDR_CACHE,
	OPT_DM_LOCKS,
	OPT_LOCKS_APART,
	OPT_CXL_TABLES,
	OPT_CN_CACHE,
	OPT_CN_CACHE_ENTRIES,
	OPT_CREST_LOCKS,
	OPT_CREST_LOCAL,
	OPT_CREST_CACHE,
	OPT_CREST_CACHE_TTL,
	OPT_ISOLATION,
	OPT_CORO_NUM,
	OPT_VERSIONS,
	OPT_RPC
};
/* Long options without a letter (getopt_long values above any char). */
enum {
	OPT_PUBLOG = 1101,
	OPT_LOOP_A,
	OPT_DB_MAX,
	OPT_DB_UTIL,
	OPT_AURA_LEVERS,
	OPT_AURA_TUNER,
	OPT_AURA_WEIGHTS,
	OPT_AURA_LR,
	OPT_AURA_GROUPS,
	OPT_AURA_W0, /* --aura-w-atomic .. --aura-w-load: OPT_AURA_W0 + DMR_AURA_W_* */
	OPT_AURA_W1,
	OPT_AURA_W2,
	OPT_AURA_W3,
};

/* What the options give besides the replay's own settings. */
typedef struct run_args {
	dmr_replay_opts_t o;
	int loop_a; /* --loop_a: 1 add aimd, -1 remove it, 0 not given */
	/* given on the command line: checked against each other after parsing
	 * (a value never silently wins over another) */
	int loop_given, coros_given, coro_num_given, crest_given, db_given, aura_given;
	int levers_given;    /* --aura-levers */
	unsigned w_given;    /* bit k: aura weight k set (--aura-weights or --aura-w-NAME) */
	const char *dev_opt; /* the last of --device, --port, --gid-index given (verbs' own) */
	int profile_given;   /* --profile (the sim's own) */
	int procs, cns_given, force;
	const char *config;
	char out_trim[PATH_MAX]; /* --out without its trailing slashes */
	const char *isolation;	 /* --isolation, parsed once --protocol is known */
	const char *rpc;	 /* --rpc, likewise */
	double deadline;	 /* s */
	int deadline_given;
	int cnc_entries_given; /* --cn-cache-entries */
} run_args_t;

/* Aura's start weight k (DMR_AURA_W_*) set by option `name`: once only,
 * by either form (--aura-weights NAME=V or --aura-w-NAME V), so that a
 * weight given twice is refused instead of the last silently winning. */
static dmr_status_t aura_weight_once(run_args_t *a, int k, const char *name, dmr_err_t *err)
{
	static const char *const wn[DMR_AURA_NW] = {"atomic", "rpc", "move", "load"};
	if (a->w_given & (1u << k))
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option %s: aura weight %s given twice (by --aura-weights or "
				   "--aura-w-%s): give it once",
				   name, wn[k], wn[k]);
	a->w_given |= 1u << k;
	return DMR_OK;
}

/* One option (ch as in the table, name "--NAME") into a; DMR_ERR_PARSE with
 * the option, its value and what is allowed named in err. */
static dmr_status_t run_opt(int ch, const char *name, const char *arg, run_args_t *a,
			    dmr_err_t *err)
{
	dmr_replay_opts_t *o = &a->o;
	dmr_status_t st = DMR_OK;
	uint32_t v;
	double ms;
	switch (ch) {
	case 't':
		if (!*arg) /* else "error: : No such file or directory" */
			st = dmr_err_set(err, DMR_ERR_PARSE, "option --trace: empty file name");
		o->trace = arg;
		break;
	case 'b':
		o->backend = arg;
		break;
	case 'j':
		if (!*arg) /* else a run with no fault, as if --fault were not given */
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --fault: empty (give faults, e.g. "
					 "unreachable:mn=0@2ms; docs/FAULTS.md)");
		o->fault = arg;
		break;
	case 'p':
		o->profile = arg;
		a->profile_given = 1;
		break;
	case 'o': {
		/* "results/" is "results": the files are printed and made as
		 * DIR/NAME, not DIR//NAME ("/" stays "/") */
		size_t n = strlen(arg);
		while (n > 1 && arg[n - 1] == '/')
			n--;
		if (n < strlen(arg) && n < sizeof(a->out_trim)) {
			memcpy(a->out_trim, arg, n);
			a->out_trim[n] = 0;
			arg = a->out_trim;
		}
		o->out_dir = arg;
		break;
	}
	case 'v':
		o->device = arg;
		a->dev_opt = "--device";
		break;
	case 'q':
		o->quiet = 1;
		break;
	case 'g':
		o->progress = 1;
		break;
	case 'X':
		a->procs = 1;
		break;
	case OPT_MNS:
		st = dmr_opt_u32(name, arg, 1, DMR_LAYOUT_MAX_MNS, 0, &o->mns, err);
		break;
	case OPT_BACKUPS:
		st = dmr_opt_u32(name, arg, 0, DMR_LAYOUT_MAX_BACKUPS, 0, &o->backups, err);
		break;
	case OPT_PROTOCOL:
		st = dmr_txn_protocol_parse(arg, &o->protocol, err);
		break;
	case OPT_CREST_LOCKS:
		a->crest_given = 1;
		if (strcmp(arg, "masked") == 0 || strcmp(arg, "words") == 0)
			o->crest_locks =
			    arg[0] == 'm' ? DMR_CREST_LOCKS_MASKED : DMR_CREST_LOCKS_WORDS;
		else
			st = dmr_err_set(err, DMR_ERR_INVALID,
					 "option --crest-locks: '%s': one of masked, words", arg);
		break;
	case OPT_CREST_LOCAL:
		a->crest_given = 1;
		if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0)
			o->crest_local = arg[1] == 'n';
		else
			st = dmr_err_set(err, DMR_ERR_INVALID,
					 "option --crest-local: '%s': one of on, off", arg);
		break;
	case OPT_CREST_CACHE_TTL:
		a->crest_given = 1;
		st = dmr_opt_double(name, arg, 0, 10e6, DMR_OPT_LO_OPEN, &ms, err);
		if (st == DMR_OK)
			o->crest_cache_ttl_ps = dmr_ps_from_us(ms);
		break;
	case OPT_CREST_CACHE:
		a->crest_given = 1;
		if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0)
			o->crest_cache = arg[1] == 'n';
		else
			st = dmr_err_set(err, DMR_ERR_INVALID,
					 "option --crest-cache: '%s': one of on, off", arg);
		break;
	case OPT_ISOLATION:
		a->isolation = arg;
		break;
	case OPT_RPC:
		a->rpc = arg;
		break;
	case OPT_VERSIONS:
		/* Motor's MAX_VCELL_NUM (txn/flags.h: 4 TPC-C and micro, 3
		 * SmallBank, 2 TATP); 1 would leave a writer no older vcell */
		st = dmr_opt_u32(name, arg, 2, DMR_CVT_MAX_VCELLS, 0, &o->versions, err);
		break;
	case OPT_CORO_NUM:
		/* Motor's and FORD's coroutine_num counts their poller
		 * (POLL_ROUTINE_ID 0, compute_node/handler/worker.cc and
		 * compute_pool/worker/worker.cc): N - 1 run transactions */
		st = dmr_opt_u32(name, arg, 2, 100001, 0, &v, err);
		if (st == DMR_OK)
			o->coros = v - 1, a->coro_num_given = 1;
		break;
	case OPT_INDEX:
		if (strcmp(arg, "direct") == 0 || strcmp(arg, "hash") == 0)
			o->index = arg[0] == 'h' ? DMR_TXN_INDEX_HASH : DMR_TXN_INDEX_DIRECT;
		else
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --index: '%s': one of direct, hash", arg);
		break;
	case OPT_INDEX_BUCKETS:
		st = dmr_opt_u64(name, arg, 1, 1ull << 40, DMR_OPT_SIZE, &o->index_buckets, err);
		break;
	case OPT_ADDR_CACHE:
		st = dmr_opt_u64(name, arg, 0, UINT64_MAX, DMR_OPT_SIZE, &o->addr_cache, err);
		break;
	case OPT_DM_LOCKS:
		o->dm_locks = arg;
		break;
	case OPT_LOCKS_APART:
		o->locks_apart = arg;
		break;
	case OPT_CN_CACHE:
		o->cn_cache = arg;
		if (!arg[0])
			st =
			    dmr_err_set(err, DMR_ERR_PARSE,
					"option --cn-cache: empty (TABLE[,TABLE...], all or none)");
		break;
	case OPT_CN_CACHE_ENTRIES:
		a->cnc_entries_given = 1;
		st = dmr_opt_u32(name, arg, 1, DMR_CNCACHE_MAX_ENTRIES, DMR_OPT_SIZE,
				 &o->cn_cache_entries, err);
		break;
	case OPT_CXL_TABLES:
		o->cxl_tables = arg;
		break;
	case 'N':
		o->trace_cache.off = 1;
		break;
	case 'Y': {
		/* a directory that exists: '' had read as "beside the CSV", and a
		 * missing one was named only through a temporary file (a trial) */
		struct stat sb;
		int bad = arg[0] ? stat(arg, &sb) : 0;
		if (!arg[0])
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --trace-cache-dir: empty (give a directory)");
		else if (bad != 0 || !S_ISDIR(sb.st_mode))
			st = dmr_err_set(err, DMR_ERR_PARSE, "option --trace-cache-dir %s: %s", arg,
					 bad != 0 ? strerror(errno) : "not a directory");
		o->trace_cache.dir = arg;
		break;
	}
	case 'F':
		a->force = 1;
		break;
	case 'K':
		a->config = arg;
		a->procs = 1;
		break;
	case 'E':
		a->deadline_given = 1;
		st = dmr_opt_double(name, arg, 0, HUGE_VAL, DMR_OPT_SECONDS | DMR_OPT_LO_OPEN,
				    &a->deadline, err);
		break;
	case 'c':
	case 'T':
	case 'C':
	case 'r':
	case 'm':
		/* counts and sizes take K/M/G/T (core/base/opt.h DMR_OPT_SIZE);
		 * --cns and --threads up to the backends' limit, refused here
		 * naming the option (the sim's "cns 1 / workers 2000 out of
		 * range" had named neither) */
		st = dmr_opt_u32(name, arg, ch == 'r' || ch == 'm' ? 0 : 1,
				 ch == 'c'   ? DMR_BE_MAX_CNS
				 : ch == 'T' ? DMR_BE_MAX_WORKERS
					     : 100000,
				 DMR_OPT_SIZE, &v, err);
		if (st != DMR_OK)
			break;
		if (ch == 'c')
			o->cns = v, a->cns_given = 1;
		if (ch == 'T')
			o->threads = v;
		if (ch == 'C')
			o->coros = v, a->coros_given = 1;
		if (ch == 'r')
			o->retries = v;
		if (ch == 'm' && (v < 256 || v > 4096 || (v & (v - 1)))) /* 0 too */
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --mtu: %s: not an IB MTU (256, 512, 1024, 2048 or "
					 "4096)",
					 arg);
		if (ch == 'm')
			o->mtu = v;
		break;
	case 's':
		st = dmr_opt_u64(name, arg, 0, UINT64_MAX, 0, &o->seed, err);
		break;
	case 'n':
		st = dmr_opt_u64(name, arg, 0, UINT64_MAX, DMR_OPT_SIZE, &o->txns, err);
		if (st == DMR_OK && o->txns == 0)
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --txns: must be >= 1 (omit it "
					 "for the whole trace)");
		break;
	case 'M':
		st = dmr_opt_u64(name, arg, 0, UINT64_MAX, DMR_OPT_SIZE, &o->mr_size, err);
		break;
	case 'd':
		st = dmr_opt_double(name, arg, -HUGE_VAL, HUGE_VAL, DMR_OPT_SECONDS, &o->duration_s,
				    err);
		if (st == DMR_OK && !(o->duration_s > 0))
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "option --duration: %s: must be > 0 "
					 "(omit it for no limit)",
					 arg);
		break;
	case 'B':
		st = dmr_opt_double(name, arg, 0, HUGE_VAL, 0, &o->backoff_us, err);
		break;
	case 'P':
		st = dmr_opt_u32(name, arg, 1, 255, 0, &v, err);
		if (st == DMR_OK)
			o->port = (int)v;
		a->dev_opt = "--port";
		break;
	case 'G':
		st = dmr_opt_u32(name, arg, 0, 255, 0, &v, err);
		if (st == DMR_OK)
			o->gid_index = (int)v;
		a->dev_opt = "--gid-index";
		break;
	case 'L':
		st = dmr_loop_parse_for(arg, DMR_LOOP_TXN, &o->loop.loops, err);
		if (st == DMR_OK && (o->loop.loops & ~DMR_LOOP_TXN))
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "--loop '%s': prefetch is the KV pool's loop (dmreplay kv "
					 "run --loop prefetch), not a transaction loop",
					 arg);
		a->loop_given = 1;
		break;
	case 'A':
		st = dmr_opt_u32(name, arg, 1, 1000000, DMR_OPT_SIZE, &o->loop.ai_step, err);
		break;
	case 'D':
		st = dmr_opt_double(name, arg, 1, HUGE_VAL, DMR_OPT_LO_OPEN, &o->loop.md_factor,
				    err);
		break;
	case 'W':
		/* at most an hour, as --window-ms: beyond, the window in ps
		 * overflows (a fresh-user trial hung at 1e300) */
		st = dmr_opt_double(name, arg, 0, 3600000, DMR_OPT_LO_OPEN, &ms, err);
		if (st == DMR_OK)
			o->loop.window_ps = dmr_ps_from_ms(ms);
		break;
	case 'H':
		st = dmr_opt_double(name, arg, 0, 1, 0, &o->loop.threshold, err);
		break;
	case OPT_DB_MAX:
		a->db_given = 1;
		/* dmr_be_post's largest doorbell (backends/backend.h) */
		st = dmr_opt_u32(name, arg, 1, 4096, 0, &o->loop.doorbell_max, err);
		break;
	case OPT_DB_UTIL:
		a->db_given = 1;
		st = dmr_opt_double(name, arg, 0, 1, DMR_OPT_LO_OPEN, &o->loop.doorbell_util, err);
		break;
	case OPT_AURA_LEVERS:
		a->aura_given = 1;
		a->levers_given = 1;
		o->aura_levers_given = 1;
		st = dmr_aura_parse_levers(arg, &o->loop.aura.levers, err);
		break;
	case OPT_AURA_TUNER:
		a->aura_given = 1;
		st = dmr_aura_parse_tuner(arg, &o->loop.aura.tuner, err);
		break;
	case OPT_AURA_WEIGHTS: {
		a->aura_given = 1;
		double w[DMR_AURA_NW];
		unsigned seen = 0;
		memcpy(w, o->loop.aura.w, sizeof(w));
		st = dmr_aura_parse_weights(arg, w, &seen, err);
		for (int k = 0; st == DMR_OK && k < DMR_AURA_NW; k++)
			if (seen & (1u << k))
				st = aura_weight_once(a, k, name, err);
		if (st == DMR_OK)
			memcpy(o->loop.aura.w, w, sizeof(w));
		break;
	}
	case OPT_AURA_LR:
		a->aura_given = 1;
		st = dmr_opt_double(name, arg, 0, 1, DMR_OPT_LO_OPEN, &o->loop.aura.lr, err);
		break;
	case OPT_AURA_GROUPS:
		a->aura_given = 1;
		st = dmr_opt_u32(name, arg, 1, DMR_AURA_MAX_GROUPS, 0, &o->loop.aura.groups, err);
		break;
	case OPT_AURA_W0:
	case OPT_AURA_W1:
	case OPT_AURA_W2:
	case OPT_AURA_W3:
		a->aura_given = 1;
		st = aura_weight_once(a, ch - OPT_AURA_W0, name, err);
		if (st == DMR_OK)
			st = dmr_opt_double(name, arg, 0, DMR_AURA_W_MAX, 0,
					    &o->loop.aura.w[ch - OPT_AURA_W0], err);
		break;
	case OPT_PUBLOG:
		st = dmr_breakdown_publog_parse(arg, &o->published_log, err);
		break;
	case OPT_LOOP_A:
		/* the published benchmark's gflags boolean */
		if (!arg || !strcmp(arg, "true") || !strcmp(arg, "1"))
			a->loop_a = 1;
		else if (!strcmp(arg, "false") || !strcmp(arg, "0"))
			a->loop_a = -1;
		else
			st =
			    dmr_err_set(err, DMR_ERR_PARSE,
					"option --loop_a: '%s': expected true, false, 1 or 0", arg);
		break;
	case 'w':
		/* the bounds of kv run's --window-ms (replay/kv.h): 1 us to 1 h */
		st = dmr_opt_double(name, arg, DMR_REPLAY_WINDOW_MS_MIN, DMR_REPLAY_WINDOW_MS_MAX,
				    0, &o->window_ms, err);
		break;
	}
	return st;
}

/* aura's levers against the run (docs/AURA.md "Options"): A1 needs the
 * RPC path (occ or ford; sim, shm or verbs in one process; verbs also a
 * device whose atomics mix with the CPU's, checked at set-up), A3 the CN record
 * cache (not crest, motor). Given with --aura-levers, a lever the run
 * cannot have is refused; by default (all) it is left out with a note.
 * --rpc and --cn-cache are A1's and A3's own switches: not beside them.
 * Returns 0, or -1 after printing why (exit 2). */
static int aura_levers_check(const run_args_t *a, dmr_replay_opts_t *o)
{
	unsigned *lv = &o->loop.aura.levers;
	const char *why1 = NULL, *why3 = NULL;
	if (a->procs || a->config) {
		fprintf(stderr, "dmreplay run: --loop aura: not with --procs or --config (aura "
				"routes transactions between the CNs of one process)\n");
		return -1;
	}
	if (o->protocol != DMR_TXN_PROTO_OCC && o->protocol != DMR_TXN_PROTO_FORD)
		why1 = "the RPC path is occ's and ford's";
	else if (!(dmr_be_caps_of(o->backend) & DMR_BE_CAP_RPC))
		why1 = "the backend has no RPC path to the MN's CPU (sim, shm and verbs have one)";
	else if (o->backups)
		why1 = "with backups every transaction runs one-sided (the RPC path writes the "
		       "primary only)";
	else if (o->locks_apart)
		why1 = "the MN's handler takes the lock words in the records, not apart from "
		       "them (--locks-apart)";
	if (o->protocol == DMR_TXN_PROTO_CREST || o->protocol == DMR_TXN_PROTO_MOTOR)
		why3 = "the CN record cache is not crest's (--crest-cache) nor motor's";
	struct {
		unsigned bit;
		const char *name, *why;
	} l[2] = {{DMR_AURA_A1, "a1", why1}, {DMR_AURA_A3, "a3", why3}};
	for (int i = 0; i < 2; i++) {
		if (!(*lv & l[i].bit) || !l[i].why)
			continue;
		if (a->levers_given) {
			fprintf(stderr,
				"dmreplay run: option --aura-levers: lever %s on --protocol %s, "
				"--backend %s: %s\n",
				l[i].name, dmr_txn_protocol_name(o->protocol), o->backend,
				l[i].why);
			return -1;
		}
		*lv &= ~l[i].bit;
		fprintf(stderr, "dmreplay run: note: aura: lever %s left out: %s\n", l[i].name,
			l[i].why);
	}
	if ((*lv & DMR_AURA_A4) && !(*lv & DMR_AURA_A2)) {
		fprintf(stderr, "dmreplay run: option --aura-levers: lever a4 balances the owners "
				"a2 makes: give a2 with it\n");
		return -1;
	}
	if ((*lv & DMR_AURA_A1) && o->rpc) {
		fprintf(stderr, "dmreplay run: option --rpc: aura's lever a1 picks the path per "
				"record group: give one of them\n");
		return -1;
	}
	if ((*lv & DMR_AURA_A3) && o->cn_cache && strcmp(o->cn_cache, "none") != 0) {
		fprintf(stderr, "dmreplay run: option --cn-cache: aura's lever a3 picks the cached "
				"tables: give one of them\n");
		return -1;
	}
	return 0;
}

static int run_locked(run_args_t *ap);
static int trace_refused(const char *path, const dmr_trace_cache_opts_t *co);

int dmr_replay_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"trace", required_argument, 0, 't'},
	    {"backend", required_argument, 0, 'b'},
	    {"fault", required_argument, 0, 'j'},
	    {"profile", required_argument, 0, 'p'},
	    {"cns", required_argument, 0, 'c'},
	    {"threads", required_argument, 0, 'T'},
	    {"coros", required_argument, 0, 'C'},
	    {"seed", required_argument, 0, 's'},
	    {"txns", required_argument, 0, 'n'},
	    {"duration", required_argument, 0, 'd'},
	    {"retries", required_argument, 0, 'r'},
	    {"backoff-us", required_argument, 0, 'B'},
	    {"mr-size", required_argument, 0, 'M'},
	    {"mtu", required_argument, 0, 'm'},
	    {"window-ms", required_argument, 0, 'w'},
	    {"out", required_argument, 0, 'o'},
	    {"quiet", no_argument, 0, 'q'},
	    {"progress", no_argument, 0, 'g'},
	    {"device", required_argument, 0, 'v'},
	    {"port", required_argument, 0, 'P'},
	    {"gid-index", required_argument, 0, 'G'},
	    {"loop", required_argument, 0, 'L'},
	    {"ai-step", required_argument, 0, 'A'},
	    {"md-factor", required_argument, 0, 'D'},
	    {"loop-window-ms", required_argument, 0, 'W'},
	    {"loop-threshold", required_argument, 0, 'H'},
	    {"loop_a", optional_argument, 0, OPT_LOOP_A},
	    {"doorbell-max", required_argument, 0, OPT_DB_MAX},
	    {"doorbell-util", required_argument, 0, OPT_DB_UTIL},
	    {"aura-levers", required_argument, 0, OPT_AURA_LEVERS},
	    {"aura-tuner", required_argument, 0, OPT_AURA_TUNER},
	    {"aura-weights", required_argument, 0, OPT_AURA_WEIGHTS},
	    {"aura-lr", required_argument, 0, OPT_AURA_LR},
	    {"aura-groups", required_argument, 0, OPT_AURA_GROUPS},
	    {"aura-w-atomic", required_argument, 0, OPT_AURA_W0},
	    {"aura-w-rpc", required_argument, 0, OPT_AURA_W1},
	    {"aura-w-move", required_argument, 0, OPT_AURA_W2},
	    {"aura-w-load", required_argument, 0, OPT_AURA_W3},
	    {"loop_a_ai_step", required_argument, 0, 'A'},
	    {"loop_a_nf", required_argument, 0, 'D'},
	    {"procs", no_argument, 0, 'X'},
	    {"config", required_argument, 0, 'K'},
	    {"deadline", required_argument, 0, 'E'},
	    {"force", no_argument, 0, 'F'},
	    {"no-trace-cache", no_argument, 0, 'N'},
	    {"trace-cache-dir", required_argument, 0, 'Y'},
	    {"mns", required_argument, 0, OPT_MNS},
	    {"backups", required_argument, 0, OPT_BACKUPS},
	    {"protocol", required_argument, 0, OPT_PROTOCOL},
	    {"isolation", required_argument, 0, OPT_ISOLATION},
	    {"rpc", required_argument, 0, OPT_RPC},
	    {"versions", required_argument, 0, OPT_VERSIONS},
	    {"coro_num", required_argument, 0, OPT_CORO_NUM},
	    {"index", required_argument, 0, OPT_INDEX},
	    {"crest-locks", required_argument, 0, OPT_CREST_LOCKS},
	    {"crest-local", required_argument, 0, OPT_CREST_LOCAL},
	    {"crest-cache", required_argument, 0, OPT_CREST_CACHE},
	    {"crest-cache-ttl", required_argument, 0, OPT_CREST_CACHE_TTL},
	    {"index-buckets", required_argument, 0, OPT_INDEX_BUCKETS},
	    {"addr-cache", required_argument, 0, OPT_ADDR_CACHE},
	    {"dm-locks", required_argument, 0, OPT_DM_LOCKS},
	    {"locks-apart", required_argument, 0, OPT_LOCKS_APART},
	    {"cxl-tables", required_argument, 0, OPT_CXL_TABLES},
	    {"cn-cache", required_argument, 0, OPT_CN_CACHE},
	    {"cn-cache-entries", required_argument, 0, OPT_CN_CACHE_ENTRIES},
	    {"published-log", required_argument, 0, OPT_PUBLOG},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	run_args_t a = {.deadline = 3600};
	dmr_replay_opts_t *o = &a.o;
	dmr_replay_opts_default(o);
	o->trace = DEFAULT_TRACE;
	int ch, li = -1;
	optind = 1;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	char name[40];
	while ((ch = getopt_long(argc, argv, "h", opts, &li)) != -1) {
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		if (ch == 'h') {
			run_usage(stdout);
			return 0;
		}
		dmr_err_t oerr;
		if (ch == '?') {
			dmr_opt_refused("run", ch, argv, opts, &oerr);
			fprintf(stderr, "dmreplay run: %s\n", oerr.msg);
			return 2;
		}
		if (run_opt(ch, name, optarg, &a, &oerr) != DMR_OK) {
			fprintf(stderr, "dmreplay run: %s\n", oerr.msg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay run: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (a.coros_given && a.coro_num_given) {
		fprintf(stderr, "dmreplay run: options --coros and --coro_num: one count given "
				"twice (--coro_num N is --coros N-1), give one\n");
		return 2;
	}
	if (a.crest_given && o->protocol != DMR_TXN_PROTO_CREST) {
		fprintf(stderr, "dmreplay run: options --crest-locks, --crest-local, "
				"--crest-cache and --crest-cache-ttl: only with "
				"--protocol crest\n");
		return 2;
	}
	int cnc_on = o->cn_cache && strcmp(o->cn_cache, "none") != 0;
	if (cnc_on && (o->protocol == DMR_TXN_PROTO_CREST || o->protocol == DMR_TXN_PROTO_MOTOR)) {
		fprintf(stderr, "dmreplay run: option --cn-cache: not with --protocol %s (%s)\n",
			dmr_txn_protocol_name(o->protocol),
			o->protocol == DMR_TXN_PROTO_CREST
			    ? "it has its own CN record cache: --crest-cache"
			    : "its reads pick a version by timestamp");
		return 2;
	}
	if (a.cnc_entries_given && !cnc_on &&
	    !((o->loop.loops & DMR_LOOP_AURA) && (o->loop.aura.levers & DMR_AURA_A3))) {
		fprintf(stderr, "dmreplay run: option --cn-cache-entries: the CN record cache "
				"is off (--cn-cache none): give --cn-cache TABLES\n");
		return 2;
	}
	if (o->crest_cache_ttl_ps && !o->crest_cache) {
		fprintf(stderr,
			"dmreplay run: option --crest-cache-ttl: the CN record cache is off "
			"(--crest-cache off): give one\n");
		return 2;
	}
	if (a.deadline_given && !a.procs) {
		fprintf(stderr,
			"dmreplay run: option --deadline: only with --procs or --config (it "
			"stops the MN and CN processes)\n");
		return 2;
	}
	if (a.db_given && !(o->loop.loops & DMR_LOOP_DOORBELL)) {
		fprintf(stderr,
			"dmreplay run: options --doorbell-max and --doorbell-util: only with "
			"--loop doorbell (Loop C)\n");
		return 2;
	}
	if (a.aura_given && !(o->loop.loops & DMR_LOOP_AURA)) {
		fprintf(stderr, "dmreplay run: options --aura-*: only with --loop aura "
				"(docs/AURA.md)\n");
		return 2;
	}
	if (a.loop_given && a.loop_a && (a.loop_a > 0) != ((o->loop.loops & DMR_LOOP_AIMD) != 0)) {
		char ln[64];
		dmr_loop_name(o->loop.loops, ln, sizeof(ln));
		fprintf(stderr,
			"dmreplay run: options --loop_a=%s and --loop %s disagree about aimd: give "
			"one\n",
			a.loop_a > 0 ? "true" : "false", ln);
		return 2;
	}
	if (a.loop_a > 0 && (o->loop.loops & DMR_LOOP_AIMD_WORKER)) {
		fprintf(stderr, "dmreplay run: option --loop_a: aimd (per CN) with --loop "
				"aimd-worker: one loop at two granularities, pick one\n");
		return 2;
	}
	if (a.loop_a > 0)
		o->loop.loops |= DMR_LOOP_AIMD;
	else if (a.loop_a < 0)
		o->loop.loops &= ~DMR_LOOP_AIMD;
	dmr_err_t ierr;
	if (a.isolation &&
	    dmr_txn_isolation_parse(a.isolation, o->protocol, &o->isolation, &ierr) != DMR_OK) {
		fprintf(stderr, "dmreplay run: %s\n", ierr.msg);
		return 2;
	}
	if (a.rpc && dmr_txn_rpc_parse(a.rpc, o->protocol, &o->rpc, &ierr) != DMR_OK) {
		fprintf(stderr, "dmreplay run: %s\n", ierr.msg);
		return 2;
	}
	if (o->rpc && o->locks_apart) {
		fprintf(
		    stderr,
		    "dmreplay run: option --rpc %s: not with %s (the MN's handler takes the lock "
		    "words in the records; one-sided transactions would lock the words apart "
		    "from them)\n",
		    a.rpc, "--locks-apart");
		return 2;
	}
	if (o->rpc && (a.procs || a.config)) {
		fprintf(stderr,
			"dmreplay run: option --rpc %s: a run of several processes has no "
			"RPC path to the MN's CPU (the MN process would need the core's "
			"handler and the CNs' contexts: sim, shm and verbs run it in one "
			"process)\n",
			a.rpc);
		return 2;
	}
	if (o->rpc && !(dmr_be_caps_of(o->backend) & DMR_BE_CAP_RPC)) {
		fprintf(stderr,
			"dmreplay run: option --rpc %s: %s has no RPC path to the MN's CPU (sim, "
			"shm and verbs have one; not ucx, nor the fault and record wrappers)\n",
			a.rpc, o->backend);
		return 2;
	}
	if ((o->loop.loops & DMR_LOOP_AURA) && aura_levers_check(&a, o) != 0)
		return 2;
	if (o->versions && o->protocol != DMR_TXN_PROTO_MOTOR) {
		fprintf(stderr, "dmreplay run: option --versions: only with --protocol motor (the "
				"other protocols keep one version per record)\n");
		return 2;
	}
	if (o->protocol == DMR_TXN_PROTO_MOTOR && (a.procs || a.config)) {
		/* the MN processes lay out single-version records and the
		 * timestamps are one process's counter (Motor's tx_id_generator) */
		fprintf(stderr, "dmreplay run: option --protocol motor: not with --procs or "
				"--config (one process: its timestamp counter is the process's, "
				"docs/PROTOCOLS.md \"motor\")\n");
		return 2;
	}
	/* with --config the MNs are the config's: the CN processes check
	 * --backups against them */
	if (!a.config && o->backups >= o->mns) {
		fprintf(stderr,
			"dmreplay run: option --backups %u with --mns %u: a table and its "
			"backups need %u distinct MNs (backups < mns)\n",
			o->backups, o->mns, o->backups + 1);
		return 2;
	}
	/* options of one backend, given to another that would ignore them */
	if (dmr_replay_backend_opts_check("run", o->backend, a.dev_opt, a.profile_given) != 0)
		return 2;
	if (o->fault && strncmp(o->backend, "fault:", 6) != 0) {
		fprintf(stderr,
			"dmreplay run: option --fault: only with --backend fault:INNER (got "
			"--backend %s)\n",
			o->backend);
		return 2;
	}
	if (o->published_log && (a.procs || a.config)) {
		fprintf(stderr,
			"dmreplay run: option --published-log: not with --procs or --config "
			"(each CN process writes its types.csv and cns.csv in DIR/cnK/, "
			"combined in DIR/; docs/RESULTS.md)\n");
		return 2;
	}
	if ((o->index != DMR_TXN_INDEX_DIRECT || o->addr_cache) && (a.procs || a.config)) {
		/* the CN processes take the cluster's shape (MNs, backups,
		 * protocol, placement) but not an index: refused, not dropped */
		fprintf(stderr, "dmreplay run: options --index hash and --addr-cache: not with "
				"--procs or --config (the CN processes run direct addressing; "
				"docs/ROLES.md)\n");
		return 2;
	}
	/* the trace before --out: a refused trace leaves no directory behind
	 * (issue #15 D23); the replay opens it again (cheap: through a fresh
	 * cache nothing is scanned; else one pass of memchr over the CSV,
	 * which is then in the page cache) */
	if (!a.procs && trace_refused(o->trace, &o->trace_cache))
		return 2;
	/* DIR is this run's until it exits: a second run into it is refused */
	dmr_err_t derr = {{0}};
	unsigned made = dmr_dirs_missing(o->out_dir); /* what this run makes of the path */
	if (dmr_mkdir_p(o->out_dir, DMR_FS_PROBE, &derr) != DMR_OK) {
		fprintf(stderr, "dmreplay run: error: --out %s\n", derr.msg);
		return 2;
	}
	char lmsg[1400];
	int lockfd = dmr_sweepdir_lock(o->out_dir, lmsg, sizeof(lmsg), NULL);
	if (lockfd < 0) {
		fprintf(stderr, "dmreplay run: error: --out %s\n", lmsg);
		return 2;
	}
	int rc = run_locked(&a);
	close(lockfd);
	if (rc == 2 && made) {
		/* refused (bad input) before anything was written: the
		 * directories this run made go again, the parents of --out too
		 * (rmdir fails, harmlessly, when the run left partial results) */
		char lk[PATH_MAX + 16];
		snprintf(lk, sizeof(lk), "%s/.dmr-lock", o->out_dir);
		unlink(lk);
		if (dmr_rmdir_made(o->out_dir, made) != 0) {
			int fd = open(lk, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		}
	}
	return rc;
}

/* The trace's header and end (dmr_trace_scan) and that it has
 * transactions: 1 with the reason on stderr when refused. Through a fresh
 * trace cache when there is one (its head holds the count: no pass over
 * the CSV), else the CSV (the replay builds the cache). */
static int trace_refused(const char *path, const dmr_trace_cache_opts_t *co)
{
	dmr_trace_reader_t *rd = NULL;
	dmr_err_t terr = {{0}};
	dmr_trace_cache_opts_t tco = *co;
	tco.quiet = 1;
	tco.nobuild = 1;
	dmr_status_t st = dmr_trace_open_cached(path, &tco, &rd, &terr);
	if (st == DMR_OK)
		st = dmr_trace_scan(rd, &terr);
	if (st == DMR_OK && dmr_trace_file_txns(rd) == 0)
		st = dmr_err_set(&terr, DMR_ERR_PARSE,
				 "%s: the trace has no transactions: nothing to replay", path);
	dmr_trace_close(rd);
	if (st == DMR_OK)
		return 0;
	fprintf(stderr, "dmreplay run: error: %s\n", terr.msg);
	return 1;
}

/* Issue 11's figures when the run used them: protocol and placement, the
 * hash index and address cache, the replica checks. */
static void print_cluster(const dmr_replay_result_t *r, int isolation, uint32_t versions)
{
	const dmr_txn_stats_t *s = &r->st;
	if (r->mns > 1 || strcmp(r->protocol, "occ") != 0)
		printf("  cluster        protocol %s, %s\n", r->protocol, r->placement);
	if (strcmp(r->index, "hash") == 0) {
		uint64_t look = s->cache_hits + s->cache_misses;
		if (r->addr_cache)
			printf(
			    "  index          hash: %llu bucket READs (%.2f per commit); address "
			    "cache %llu entries per CN: %llu hits, %llu misses (hit ratio "
			    "%.3f)\n",
			    (unsigned long long)s->index_reads,
			    s->committed ? (double)s->index_reads / s->committed : 0.0,
			    (unsigned long long)r->addr_cache, (unsigned long long)s->cache_hits,
			    (unsigned long long)s->cache_misses,
			    look ? (double)s->cache_hits / look : 0.0);
		else
			printf("  index          hash: %llu bucket READs (%.2f per commit); no "
			       "address "
			       "cache (--addr-cache 0: every first access READs its bucket)\n",
			       (unsigned long long)s->index_reads,
			       s->committed ? (double)s->index_reads / s->committed : 0.0);
	}
	/* aborts by the table of the record found locked (the cause issue 12
	 * names: read_locked on warehouse rows) */
	const dmr_txn_xstats_t *x = &r->xst;
	for (int k = 0; k < 2; k++) {
		const uint64_t *v = k ? x->lock_by_table : x->read_locked_by_table;
		char line[1024];
		int len = 0;
		for (uint32_t t = 0; t < r->ntables && len < (int)sizeof(line) - 64; t++)
			if (v[t])
				len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s %llu",
						len ? ", " : "", r->table_names[t],
						(unsigned long long)v[t]);
		if (len)
			printf("  %-14s %s\n", k ? "lock by table" : "read_locked by", line);
	}
	if (r->cn_cache[0]) {
		uint64_t look = x->cn_cache_hits + x->cn_cache_misses;
		printf("  cn cache       %s, %u entries per CN: %llu hits, %llu misses (hit ratio "
		       "%.3f), %llu stale aborts, %.2f READs per commit\n",
		       r->cn_cache, r->cn_cache_entries, (unsigned long long)x->cn_cache_hits,
		       (unsigned long long)x->cn_cache_misses,
		       look ? (double)x->cn_cache_hits / look : 0.0,
		       (unsigned long long)s->aborts[DMR_ABORT_CACHE_STALE],
		       s->committed ? (double)s->reads / s->committed : 0.0);
	}
	if (r->crest_locks[0])
		printf("  crest          cell locks %s, local execution %s; read_column_locked "
		       "%llu, wait_dependent_txn %llu (%.1f us waited), %.2f atomics per commit; "
		       "cache %s, %llu hits, %llu misses\n",
		       r->crest_locks, r->crest_local ? "on" : "off",
		       (unsigned long long)s->aborts[DMR_ABORT_READ_LOCKED],
		       (unsigned long long)x->crest_waits, x->crest_wait_ps / 1e6,
		       s->committed ? (double)s->atomics / s->committed : 0.0,
		       r->crest_cache ? "on" : "off", (unsigned long long)x->crest_hits,
		       (unsigned long long)x->crest_misses);
	if ((r->backups > 0 || r->crest_locks[0]) && r->replicas.checks)
		printf("  replicas       %s (%llu records and lock words checked on %u MNs)\n",
		       r->replicas.ok ? "identical, locks idle" : r->replicas.first_failure,
		       (unsigned long long)r->replicas.checks, r->mns);
	else if (r->replicas.checks) /* several MNs, no backup: the lock words */
		printf("  locks          %s (%llu lock words checked on %u MNs)\n",
		       r->replicas.ok ? "idle" : r->replicas.first_failure,
		       (unsigned long long)r->replicas.checks, r->mns);
	if (strcmp(r->protocol, "motor") == 0) {
		/* core/txn.h DMR_MV_*: Motor's abort events, its versions read */
		printf("  motor          isolation %s, %u versions per record; validation "
		       "aborts: newer %llu, no visible %llu, no slot %llu, changed %llu; "
		       "%.2f versions read per commit, %.2f of them older than the newest\n",
		       isolation == DMR_TXN_ISO_SI ? "si" : "sr",
		       versions ? versions : DMR_CVT_VCELLS,
		       (unsigned long long)r->mv.aborts[DMR_MV_NEWER],
		       (unsigned long long)r->mv.aborts[DMR_MV_NOVIS],
		       (unsigned long long)r->mv.aborts[DMR_MV_NOSLOT],
		       (unsigned long long)r->mv.aborts[DMR_MV_CHANGED],
		       s->committed ? (double)r->mv.versions_read / s->committed : 0.0,
		       s->committed ? (double)r->mv.old_reads / s->committed : 0.0);
		if (r->replicas.chains)
			printf("  versions       %llu version chains %s\n",
			       (unsigned long long)r->replicas.chains,
			       r->replicas.ok ? "idle, totally ordered, each version built from "
						"the one before (no lost update)"
					      : "checked: see replicas");
	}
}

/* dmr_replay_opts_t.on_start of a run: --out's earlier files moved aside
 * (dmr_roles_clear_earlier) now that the run is sure to start. */
static dmr_status_t run_on_start(void *arg, dmr_err_t *err)
{
	const run_args_t *a = arg;
	if (dmr_roles_clear_earlier(a->o.out_dir, "dmreplay run", a->force, NULL, 0) != 0)
		return dmr_err_set(err, DMR_ERR_IO,
				   "--out %s: the files of an earlier run could not be moved "
				   "aside (above): nothing was run",
				   a->o.out_dir);
	return DMR_OK;
}

/* The run, with its --out locked (dmr_replay_main). */
static int run_locked(run_args_t *ap)
{
	run_args_t a = *ap;
	dmr_replay_opts_t *o = &a.o;
	if (a.procs) {
		if (!a.cns_given && !a.config)
			o->cns = 2;
		return dmr_roles_launch(o, a.config, a.cns_given, a.deadline, a.force);
	}
	/* finished results are never overwritten: refused now without
	 * --force; they and other leftovers are moved aside only once the
	 * run is sure to start (run_on_start): a refused run leaves --out
	 * as it was */
	int erc = dmr_roles_earlier_refused(o->out_dir, "dmreplay run", a.force);
	if (erc)
		return erc;
	o->on_start = run_on_start;
	o->on_start_arg = &a;
	dmr_replay_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_replay_run(o, &r, &err);
	/* --quiet: nothing on stdout, only the error line(s) and notes on
	 * stderr */
	if ((st == DMR_OK || st == DMR_ERR_VERIFY || r.partial) && !o->quiet) {
		dmr_replay_print(&r, stdout);
		print_cluster(&r, o->isolation, o->versions);
	}
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay run: error: %s\n", err.msg);
		return dmr_results_exit_status(st);
	}
	/* --txns beyond the trace: said, not silently shortened */
	if (o->txns && r.txns < o->txns && !r.partial && !(o->duration_s > 0))
		fprintf(stderr,
			"dmreplay run: note: --txns %llu: the trace holds %llu transactions; all "
			"of them were replayed\n",
			(unsigned long long)o->txns, (unsigned long long)r.txns);
	/* --duration shorter than the first start: an empty run, said */
	if (o->duration_s > 0 && !r.st.tried && !r.partial)
		fprintf(stderr,
			"dmreplay run: note: --duration %g s: no transaction was started within "
			"it (the results count none)\n",
			o->duration_s);
	if (!o->quiet)
		printf("  results        %s/summary.csv, %s/timeseries.csv; per type, CN, MN: "
		       "types.csv, cns.csv, mns.csv\n",
		       o->out_dir, o->out_dir);
	return 0;
}
