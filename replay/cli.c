/*
 * replay/cli.c - `dmreplay run` options (getopt_long) and the human summary.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "roles.h"

#define DEFAULT_TRACE DMR_SOURCE_DIR "/traces/samples/tpcc-extreme.csv"

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay run [--trace FILE] [options]\n"
		"Replay a trace on a backend; print a summary, write DIR/summary.csv and\n"
		"DIR/timeseries.csv.\n\n"
		"  --trace FILE      trace to replay (default: the shipped sample\n"
		"                    %s)\n"
		"  --backend NAME    sim (default); verbs (rdma-core: MN and CNs in this\n"
		"                    process over loopback RDMA); shm (loopback: verbs executed\n"
		"                    by the CPU, one thread per worker; for testing)\n"
		"  --profile NAME    hardware profile for sim (default cx6dx-100g)\n"
		"  --device DEV      verbs: RDMA device name or index (e.g. rxe0, mlx5_2)\n"
		"  --port N          verbs: port (default 1)\n"
		"  --gid-index N     verbs: GID index (default: the RoCEv2 GID whose IPv4\n"
		"                    address is this node's own)\n"
		"  --cns N           compute nodes (default 4)\n"
		"  --threads N       workers per CN (default 28)\n"
		"  --coros N         transaction contexts per worker (default 3)\n"
		"  --seed S          seed (default 1)\n"
		"  --txns N          replay the first N transactions (default: all)\n"
		"  --duration T      start no transaction after T of run time (0.5, 200ms,\n"
		"                    50us); the running ones finish\n"
		"  --retries N       retries per aborted transaction (default 0: an aborted\n"
		"                    transaction is counted and the context moves on, as in\n"
		"                    the published DM benchmarks; tried = attempts)\n"
		"  --backoff-us X    wait X us before a retry (default 0)\n"
		"  --mr-size BYTES   MN region size (default: the footprint; K/M/G suffixes)\n"
		"  --mtu BYTES       override the profile's path MTU (256..4096)\n"
		"  --window-ms X     time-series window (default 100)\n"
		"  --out DIR         results directory (default out)\n"
		"  --loop L          admission control: none (default), aimd, perkey,\n"
		"                    aimd+perkey (core/loop.h)\n"
		"  --ai-step N       aimd additive increase, contexts (default 4)\n"
		"  --md-factor X     aimd multiplicative decrease divisor (default 2)\n"
		"  --loop-window-ms X  reaction window of the loops (default 5)\n"
		"  --loop-threshold X  aimd: aborts per attempt above which it decreases\n"
		"                    (default 0.5)\n"
		"  --procs           verbs: one MN and --cns CN processes on this host\n"
		"                    (dmreplay mn / cn, fork + exec; docs/ROLES.md): writes\n"
		"                    DIR/cluster.json, logs DIR/mn.log and DIR/cnK.log, results\n"
		"                    DIR/cnK/ and the combined DIR/summary.csv\n"
		"  --config FILE     verbs: as --procs with this cluster config (its CNs)\n"
		"  --deadline S      --procs: stop the processes after S seconds (default 3600)\n"
		"  --force           --procs: when DIR holds the finished results of an\n"
		"                    earlier run, move them to DIR/earlier-N/ (else refused)\n"
		"  --quiet           nothing on stdout; errors only, on stderr\n"
		"  --help\n",
		DEFAULT_TRACE);
}

static int parse_u64(const char *opt, const char *s, uint64_t *v, int suffixes)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		goto bad;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	if (suffixes && *end) {
		uint64_t mul = 1;
		switch (*end) {
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		default: goto bad;
		}
		end++;
		if (x > UINT64_MAX / mul)
			goto bad;
		x *= mul;
	}
	if (*end)
		goto bad;
	*v = x;
	return 0;
bad:
	fprintf(stderr, "dmreplay run: option %s: '%s' is not a valid non-negative integer\n", opt,
		s ? s : "");
	return -1;
}

static int parse_dbl(const char *opt, const char *s, double *v)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || errno || !isfinite(x) || x < 0) {
		fprintf(stderr, "dmreplay run: option %s: '%s' is not a valid non-negative number\n",
			opt, s);
		return -1;
	}
	if (strcmp(end, "ms") == 0)
		x /= 1000;
	else if (strcmp(end, "us") == 0)
		x /= 1e6;
	else if (*end && strcmp(end, "s") != 0) {
		fprintf(stderr, "dmreplay run: option %s: '%s': unknown unit '%s'\n", opt, s, end);
		return -1;
	}
	*v = x;
	return 0;
}

void dmr_replay_print(const dmr_replay_result_t *r, void *file)
{
	FILE *f = file;
	uint64_t aborts = 0;
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		aborts += r->st.aborts[i];
	fprintf(f, "dmreplay: %s %s, loop %s, on %s/%s, %u CNs x %u threads x %u coros, seed %llu%s\n",
		r->workload, r->regime, r->loop, r->backend, r->profile, r->cns, r->threads, r->coros,
		(unsigned long long)r->seed, r->partial ? "  [PARTIAL]" : "");
	fprintf(f, "  transactions   %llu dispatched, %llu tried, %llu committed, %llu gave up, %llu retries\n",
		(unsigned long long)r->txns, (unsigned long long)r->st.tried,
		(unsigned long long)r->st.committed, (unsigned long long)r->st.gave_up,
		(unsigned long long)r->st.retries);
	int sim = strcmp(r->backend, "sim") == 0;
	fprintf(f, "  throughput     tried %.1f K txn/s, committed %.1f K txn/s (over %.6f s %s)\n",
		r->tried_tps / 1e3, r->committed_tps / 1e3, r->sim_time_s,
		sim ? "simulated" : "of wall time");
	fprintf(f, "  aborts         %.2f %% of attempts:", 100 * r->abort_rate);
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		fprintf(f, " %s %llu", dmr_abort_cause_name(i), (unsigned long long)r->st.aborts[i]);
	fprintf(f, "\n");
	if (r->loop_cfg.loops && r->sim_time_s * 1e12 < (double)r->loop_cfg.window_ps)
		fprintf(f, "  note           the run lasted %.3f ms, less than one loop window (%.3f ms): "
			   "loop %s never acted (--loop-window-ms)\n",
			r->sim_time_s * 1e3, r->loop_cfg.window_ps / 1e9, r->loop);
	fprintf(f, "  per commit     %.2f atomics, %.2f READs\n", r->atomics_per_commit,
		r->reads_per_commit);
	fprintf(f, "  latency        p50 %.2f us, p99 %.2f us, p99.9 %.2f us\n", r->p50_us, r->p99_us,
		r->p999_us);
	if (r->partial)
		fprintf(f, "  verification   not run (the run did not complete)\n");
	else if (r->verified < 0)
		fprintf(f, "  verification   n/a (%s)\n", r->verify.summary);
	else
		fprintf(f, "  verification   %s (%s)%s%s\n", r->verified ? "PASSED" : "FAILED",
			r->verify.summary[0] ? r->verify.summary : "-", r->verified ? "" : ": ",
			r->verified ? "" : r->verify.first_failure);
	double simw = r->loop_wall_s - r->trace_wall_s;
	if (!sim) {
		fprintf(f, "  backend        %llu verbs (%llu READ, %llu WRITE, %llu CAS, %llu FAA), %llu doorbells\n",
			(unsigned long long)r->be.verbs, (unsigned long long)r->be.reads,
			(unsigned long long)r->be.writes, (unsigned long long)r->be.cas,
			(unsigned long long)r->be.faa, (unsigned long long)r->be.doorbells);
		if (r->st.cas_replayed)
			fprintf(f, "  replayed CAS   %llu lock CASes came back with their own tag (executed "
				"twice by the responder; the lock was ours: docs/SOFTROCE-VM.md)\n",
				(unsigned long long)r->st.cas_replayed);
		return;
	}
	fprintf(f, "  simulator      %llu verbs, %llu events in %.2f s wall (+ %.2f s reading the trace, %.2f s total)\n",
		(unsigned long long)r->be.verbs, (unsigned long long)r->be.events, simw,
		r->trace_wall_s, r->wall_s);
	fprintf(f, "                 %.2f M simulated verbs per wall-second (%.2f M with trace reading), %.2f wall-s per simulated s\n",
		simw > 0 ? r->be.verbs / simw / 1e6 : 0,
		r->loop_wall_s > 0 ? r->be.verbs / r->loop_wall_s / 1e6 : 0,
		r->sim_time_s > 0 ? r->loop_wall_s / r->sim_time_s : 0);
}

int dmr_replay_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"trace", required_argument, 0, 't'},   {"backend", required_argument, 0, 'b'},
		{"profile", required_argument, 0, 'p'}, {"cns", required_argument, 0, 'c'},
		{"threads", required_argument, 0, 'T'}, {"coros", required_argument, 0, 'C'},
		{"seed", required_argument, 0, 's'},    {"txns", required_argument, 0, 'n'},
		{"duration", required_argument, 0, 'd'}, {"retries", required_argument, 0, 'r'},
		{"backoff-us", required_argument, 0, 'B'}, {"mr-size", required_argument, 0, 'M'},
		{"mtu", required_argument, 0, 'm'},     {"window-ms", required_argument, 0, 'w'},
		{"out", required_argument, 0, 'o'},     {"quiet", no_argument, 0, 'q'},
		{"device", required_argument, 0, 'v'},  {"port", required_argument, 0, 'P'},
		{"gid-index", required_argument, 0, 'G'},
		{"loop", required_argument, 0, 'L'},    {"ai-step", required_argument, 0, 'A'},
		{"md-factor", required_argument, 0, 'D'}, {"loop-window-ms", required_argument, 0, 'W'},
		{"loop-threshold", required_argument, 0, 'H'},
		{"procs", no_argument, 0, 'X'},         {"config", required_argument, 0, 'K'},
		{"deadline", required_argument, 0, 'E'}, {"force", no_argument, 0, 'F'},
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.trace = DEFAULT_TRACE;
	uint64_t v;
	int ch, li = -1, procs = 0, cns_given = 0, force = 0;
	const char *config = NULL;
	double deadline = 3600;
	optind = 1;
	char name[40];
	while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
		snprintf(name, sizeof(name), "--%s", li >= 0 ? opts[li].name : "?");
		li = -1;
		switch (ch) {
		case 't': o.trace = optarg; break;
		case 'b': o.backend = optarg; break;
		case 'p': o.profile = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'h': run_usage(stdout); return 0;
		case 'X': procs = 1; break;
		case 'F': force = 1; break;
		case 'K': config = optarg; procs = 1; break;
		case 'E':
			if (parse_dbl(name, optarg, &deadline))
				return 2;
			if (!(deadline > 0)) {
				fprintf(stderr, "dmreplay run: option --deadline: seconds > 0\n");
				return 2;
			}
			break;
		case 'c': case 'T': case 'C': case 'r': case 'm':
			if (parse_u64(name, optarg, &v, 0))
				return 2;
			if ((v == 0 && ch != 'r') || v > 100000) {
				fprintf(stderr, "dmreplay run: option %s: %llu out of range (%s..100000)\n",
					name, (unsigned long long)v, ch == 'r' ? "0" : "1");
				return 2;
			}
			if (ch == 'c') o.cns = (uint32_t)v, cns_given = 1;
			if (ch == 'T') o.threads = (uint32_t)v;
			if (ch == 'C') o.coros = (uint32_t)v;
			if (ch == 'r') o.retries = (uint32_t)v;
			if (ch == 'm') o.mtu = (uint32_t)v;
			break;
		case 's':
			if (parse_u64(name, optarg, &o.seed, 0)) return 2;
			break;
		case 'n':
			if (parse_u64(name, optarg, &o.txns, 0)) return 2;
			if (o.txns == 0) {
				fprintf(stderr, "dmreplay run: option --txns: must be >= 1 (omit it for "
						"the whole trace)\n");
				return 2;
			}
			break;
		case 'M':
			if (parse_u64(name, optarg, &o.mr_size, 1)) return 2;
			break;
		case 'd':
			if (parse_dbl(name, optarg, &o.duration_s)) return 2;
			if (!(o.duration_s > 0)) {
				fprintf(stderr, "dmreplay run: option --duration: must be > 0 (omit it "
						"for no limit)\n");
				return 2;
			}
			break;
		case 'B':
			if (parse_dbl(name, optarg, &o.backoff_us)) return 2;
			break;
		case 'v': o.device = optarg; break;
		case 'P':
			if (parse_u64(name, optarg, &v, 0))
				return 2;
			if (v == 0 || v > 255) {
				fprintf(stderr, "dmreplay run: option --port: %llu out of range (1..255)\n",
					(unsigned long long)v);
				return 2;
			}
			o.port = (int)v;
			break;
		case 'G':
			if (parse_u64(name, optarg, &v, 0))
				return 2;
			if (v > 255) {
				fprintf(stderr, "dmreplay run: option --gid-index: %llu out of range (0..255)\n",
					(unsigned long long)v);
				return 2;
			}
			o.gid_index = (int)v;
			break;
		case 'L': {
			dmr_err_t lerr;
			if (dmr_loop_parse(optarg, &o.loop.loops, &lerr) != DMR_OK) {
				fprintf(stderr, "dmreplay run: %s\n", lerr.msg);
				return 2;
			}
			break;
		}
		case 'A':
			if (parse_u64(name, optarg, &v, 0))
				return 2;
			if (v == 0 || v > 1000000) {
				fprintf(stderr, "dmreplay run: option --ai-step: must be 1..1000000\n");
				return 2;
			}
			o.loop.ai_step = (uint32_t)v;
			break;
		case 'D':
			if (parse_dbl(name, optarg, &o.loop.md_factor) || !(o.loop.md_factor > 1)) {
				fprintf(stderr, "dmreplay run: option --md-factor: must be > 1\n");
				return 2;
			}
			break;
		case 'W': {
			double ms;
			if (parse_dbl(name, optarg, &ms) || !(ms > 0)) {
				fprintf(stderr, "dmreplay run: option --loop-window-ms: must be > 0\n");
				return 2;
			}
			o.loop.window_ps = (uint64_t)(ms * 1e9);
			break;
		}
		case 'H':
			if (parse_dbl(name, optarg, &o.loop.threshold) || o.loop.threshold > 1) {
				fprintf(stderr, "dmreplay run: option --loop-threshold: must be in [0, 1]\n");
				return 2;
			}
			break;
		case 'w':
			if (parse_dbl(name, optarg, &o.window_ms) || o.window_ms <= 0) {
				fprintf(stderr, "dmreplay run: --window-ms must be > 0\n");
				return 2;
			}
			break;
		default:
			run_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay run: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (force && !procs) {
		fprintf(stderr, "dmreplay run: option --force: only with --procs or --config (a "
				"single-process run never overwrites finished results: a failed "
				"one writes summary.partial.csv)\n");
		return 2;
	}
	if (procs) {
		if (!cns_given && !config)
			o.cns = 2;
		return dmr_roles_launch(&o, config, cns_given, deadline, force);
	}
	dmr_replay_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_replay_run(&o, &r, &err);
	/* --quiet: nothing on stdout, only the error line(s) on stderr */
	if ((st == DMR_OK || st == DMR_ERR_VERIFY || r.partial) && !o.quiet)
		dmr_replay_print(&r, stdout);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay run: error: %s\n", err.msg);
		if (st == DMR_ERR_PARSE || st == DMR_ERR_IO || st == DMR_ERR_RANGE ||
		    st == DMR_ERR_INVALID || st == DMR_ERR_NODEV)
			return 2;
		if (st == DMR_ERR_INTERRUPTED)
			return 130;
		return 1;
	}
	if (!o.quiet)
		printf("  results        %s/summary.csv, %s/timeseries.csv\n", o.out_dir, o.out_dir);
	return 0;
}
