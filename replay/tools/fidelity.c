/*
 * replay/tools/fidelity.c - `dmreplay fidelity` (replay/tools/fidelity.h, docs/fidelity.md).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../backends/backend.h"
#include "../../models/model.h"
#include "../../traces/trace.h"
#include "../../traces/workload.h"
#include "fidelity.h"
#include "../replay.h"

#define FID_MAX_TRACES 32
#define FID_YCSB_A DMR_SOURCE_DIR "/traces/ycsb/workloada"

double dmr_fid_rel_err(double pred, double meas)
{
	if (!isfinite(pred) || !isfinite(meas) || !(meas > 0))
		return NAN;
	return (pred - meas) / meas;
}

void dmr_fid_row_compute(dmr_fid_row_t *r)
{
	r->err_tps = dmr_fid_rel_err(r->pred_tps, r->meas_tps);
	r->err_p50 = dmr_fid_rel_err(r->pred_p50, r->meas_p50);
	r->err_p99 = dmr_fid_rel_err(r->pred_p99, r->meas_p99);
	/* NAN compares false: a row without numbers fails */
	r->pass_tps = fabs(r->err_tps) <= DMR_FID_TOL_TPS;
	r->pass_p50 = fabs(r->err_p50) <= DMR_FID_TOL_P50;
	r->pass = r->pass_tps && r->pass_p50 && !r->note[0];
}

static const char *pf(int pass)
{
	return pass ? "PASS" : "FAIL";
}

/* "+12.3 %", or "n/a" for NAN */
static const char *pct(double e, char *buf, size_t len)
{
	if (isnan(e))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.1f %%", 100 * e);
	return buf;
}

int dmr_fid_print(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	char a[32], b[32], c[32];
	fprintf(f, "%-16s %11s %11s %8s %9s %9s %8s %9s %9s %8s %7s %7s  %-4s %-4s\n", "trace",
		"meas tps", "pred tps", "err", "meas p50", "pred p50", "err", "meas p99", "pred p99",
		"err", "m abrt", "p abrt", "tps", "p50");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f, "%-16s %11.1f %11.1f %8s %9.1f %9.1f %8s %9.1f %9.1f %8s %6.1f%% %6.1f%%  %-4s %-4s%s%s\n",
			r->trace, r->meas_tps, r->pred_tps, pct(r->err_tps, a, sizeof(a)), r->meas_p50,
			r->pred_p50, pct(r->err_p50, b, sizeof(b)), r->meas_p99, r->pred_p99,
			pct(r->err_p99, c, sizeof(c)), 100 * r->meas_abort, 100 * r->pred_abort,
			pf(r->pass_tps), pf(r->pass_p50), r->note[0] ? "  " : "", r->note);
	}
	return ferror(f) ? -1 : 0;
}

static void csv_num(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, ",");
	else
		fprintf(f, ",%.6g", v);
}

int dmr_fid_write_csv(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	fprintf(f, "trace,meas_tps,pred_tps,err_tps,meas_p50_us,pred_p50_us,err_p50,"
		   "meas_p99_us,pred_p99_us,err_p99,meas_abort_rate,pred_abort_rate,"
		   "tps_result,p50_result,result,tol_tps,tol_p50,note\n");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f, "%s", r->trace);
		csv_num(f, r->meas_tps);
		csv_num(f, r->pred_tps);
		csv_num(f, r->err_tps);
		csv_num(f, r->meas_p50);
		csv_num(f, r->pred_p50);
		csv_num(f, r->err_p50);
		csv_num(f, r->meas_p99);
		csv_num(f, r->pred_p99);
		csv_num(f, r->err_p99);
		csv_num(f, r->meas_abort);
		csv_num(f, r->pred_abort);
		/* the note never holds a comma or quote (fid_note strips them) */
		fprintf(f, ",%s,%s,%s,%.2f,%.2f,%s\n", pf(r->pass_tps), pf(r->pass_p50), pf(r->pass),
			DMR_FID_TOL_TPS, DMR_FID_TOL_P50, r->note);
	}
	return ferror(f) ? -1 : 0;
}

int dmr_fid_write_md(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	char a[32], b[32], c[32];
	fprintf(f, "| trace | measured K txn/s | predicted K txn/s | error | measured p50 us | "
		   "predicted p50 us | error | measured p99 us | predicted p99 us | error | "
		   "aborts measured / predicted | throughput (15 %%) | p50 (20 %%) |\n"
		   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f, "| %s%s%s%s | %.2f | %.2f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | "
			   "%.1f %% / %.1f %% | %s | %s |\n",
			r->trace, r->note[0] ? " (" : "", r->note[0] ? r->note : "",
			r->note[0] ? ")" : "", r->meas_tps / 1e3, r->pred_tps / 1e3, pct(r->err_tps, a, sizeof(a)),
			r->meas_p50, r->pred_p50, pct(r->err_p50, b, sizeof(b)), r->meas_p99,
			r->pred_p99, pct(r->err_p99, c, sizeof(c)), 100 * r->meas_abort,
			100 * r->pred_abort, pf(r->pass_tps), pf(r->pass_p50));
	}
	return ferror(f) ? -1 : 0;
}

/* ---- the command ---------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay fidelity --profile P --device D [options]\n"
		"Replay a set of traces on the verbs backend on device D (measured) and on\n"
		"the sim with profile P (predicted; P should be measured on D), same shape\n"
		"and seed, and print measured vs predicted committed throughput and p50/p99\n"
		"latency with the relative error, PASS/FAIL against %.0f %% (throughput) and\n"
		"%.0f %% (p50). Writes DIR/fidelity.csv and DIR/fidelity.md.\n\n"
		"  --profile P       hardware profile (name or path), e.g. models/rxe-qemu.json\n"
		"  --device D        RDMA device name or index (e.g. rxe0)\n"
		"  --port N          port (default 1)\n"
		"  --gid-index N     GID index (default: the RoCEv2 GID of this node's IPv4)\n"
		"  --out DIR         results (default out/fidelity): traces/, runs/, the table\n"
		"  --traces F[,F..]  replay these traces instead of the generated set\n"
		"                    (repeatable); default: TPC-C uniform and extreme\n"
		"                    (2 warehouses), SmallBank (10000 accounts), YCSB-A\n"
		"                    (traces/ycsb/workloada), --txns each, generated in DIR/traces\n"
		"  --txns N          transactions per generated trace (default 2000)\n"
		"  --cns N --threads N --coros N   shape (default 1 x 2 x 2)\n"
		"  --seed S          generator and replay seed (default 1)\n"
		"  --quiet           only the table\n"
		"  --help\n\n"
		"The table goes to DIR/fidelity.{csv,md} only when every replay ran to the\n"
		"end; otherwise (a run failed, or SIGINT/SIGTERM, which stops after the\n"
		"current replay with exit 130) to DIR/fidelity.partial.{csv,md}, leaving a\n"
		"finished table of an earlier run as it was. --traces files are checked\n"
		"(readable trace files) before anything is opened.\n\n"
		"Exit status: 0 every row PASS, 1 some row FAIL or a run failed, 2 bad\n"
		"options or input, 3 no device (none given, or it cannot be opened),\n"
		"130 interrupted (SIGINT/SIGTERM).\n",
		100 * DMR_FID_TOL_TPS, 100 * DMR_FID_TOL_P50);
}

static int mkdir_p(const char *path)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s", path);
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Row name: base name without a .csv suffix. */
static void trace_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	snprintf(out, len, "%s", b);
	size_t l = strlen(out);
	if (l > 4 && strcmp(out + l - 4, ".csv") == 0)
		out[l - 4] = 0;
}

/* Copy an error message into a row note without commas, quotes or pipes. */
static void fid_note(dmr_fid_row_t *r, const char *what, const char *msg)
{
	snprintf(r->note, sizeof(r->note), "%s: %.100s", what, msg);
	for (char *p = r->note; *p; p++)
		if (*p == ',' || *p == '"' || *p == '|' || *p == '\n')
			*p = ';';
}

/* Open and close the verbs backend on the device: DMR_OK when it can run. */
static dmr_status_t probe_device(const char *dev, int port, int gid, dmr_err_t *err)
{
	dmr_be_config_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = "verbs";
	cfg.mns = 1;
	cfg.cns = 1;
	cfg.workers = 1;
	cfg.mr_size = 1u << 20;
	cfg.seed = 1;
	cfg.device = dev;
	cfg.port = port;
	cfg.gid_index = gid;
	dmr_be_t *be = NULL;
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (st == DMR_OK)
		dmr_be_close(be);
	return st;
}

/* SIGINT/SIGTERM while fidelity runs (outside dmr_replay_run, which has its
 * own handler and reports DMR_ERR_INTERRUPTED). */
static volatile sig_atomic_t fid_sig;

static void fid_on_signal(int sig)
{
	fid_sig = sig;
}

/* A --traces file: a readable regular file that starts with a trace header.
 * 0, or -1 with the reason on stderr. Nothing is left open. */
static int check_trace(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: not a regular file\n", path);
		return -1;
	}
	dmr_trace_reader_t *tr = NULL;
	dmr_err_t err = {{0}};
	if (dmr_trace_open(path, &tr, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: not a trace: %s\n", path,
			err.msg);
		return -1;
	}
	dmr_trace_close(tr);
	return 0;
}

/* Write the table to DIR/NAME.tmp, then rename it to DIR/NAME. 0 or -1. */
static int write_table(const char *out, const char *name, int md, const char *head,
		       const dmr_fid_row_t *rows, size_t n)
{
	char tmp[1200], path[1200];
	snprintf(path, sizeof(path), "%s/%s", out, name);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", out, name);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	int bad = 0;
	if (md)
		fprintf(f, "%s\n\n", head);
	if ((md ? dmr_fid_write_md : dmr_fid_write_csv)(rows, n, f) < 0)
		bad = 1;
	if (fclose(f) != 0)
		bad = 1;
	if (bad || rename(tmp, path) < 0) {
		int e = errno;
		remove(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

static int gen_trace(int which, const char *path, uint64_t txns, uint64_t seed)
{
	char t[32], s[32];
	snprintf(t, sizeof(t), "%llu", (unsigned long long)txns);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)seed);
	switch (which) {
	case 0: case 1: {
		char *argv[] = {"tpcc", "--warehouses", "2", "--regime", which ? "extreme" : "uniform",
				"--txns", t, "--seed", s, "--quiet", "-o", (char *)path, NULL};
		return dmr_gen_tpcc_main(12, argv);
	}
	case 2: {
		char *argv[] = {"smallbank", "--accounts", "10000", "--txns", t, "--seed", s,
				"--quiet", "-o", (char *)path, NULL};
		return dmr_gen_smallbank_main(10, argv);
	}
	default: {
		char *argv[] = {"ycsb", "--workload", FID_YCSB_A, "--txns", t, "--seed", s,
				"--quiet", "-o", (char *)path, NULL};
		return dmr_gen_ycsb_main(10, argv);
	}
	}
}

/* The runs and the table (signal handlers are dmr_fidelity_main's). */
static int fid_run(const char *profile, const char *device, const char *meas_be, int port,
		   int gid, const char *out, char **tlist, size_t ntr, uint64_t txns, uint64_t cns,
		   uint64_t threads, uint64_t coros, uint64_t seed, int quiet)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/traces", out);
	if (mkdir_p(dir) < 0) {
		fprintf(stderr, "dmreplay fidelity: error: cannot create %s: %s\n", dir, strerror(errno));
		return DMR_FID_EXIT_USAGE;
	}
	static const char *gen_names[] = {"tpcc-uniform", "tpcc-extreme", "smallbank", "ycsb-a"};
	static char genpaths[4][1200];
	char *gl[4];
	if (ntr == 0) {
		for (int i = 0; i < 4; i++) {
			snprintf(genpaths[i], sizeof(genpaths[i]), "%s/%s.csv", dir, gen_names[i]);
			if (!quiet)
				fprintf(stderr, "dmreplay fidelity: generating %s (%llu txns, seed %llu)\n",
					genpaths[i], (unsigned long long)txns, (unsigned long long)seed);
			if (gen_trace(i, genpaths[i], txns, seed) != 0) {
				fprintf(stderr, "dmreplay fidelity: error: generating %s failed\n", genpaths[i]);
				return fid_sig ? DMR_FID_EXIT_INTR : DMR_FID_EXIT_USAGE;
			}
			if (fid_sig) {
				fprintf(stderr, "dmreplay fidelity: interrupted by signal %d while "
						"generating traces: nothing measured, no table written\n",
					(int)fid_sig);
				return DMR_FID_EXIT_INTR;
			}
			gl[i] = genpaths[i];
		}
		tlist = gl;
		ntr = 4;
	}

	dmr_fid_row_t rows[FID_MAX_TRACES];
	memset(rows, 0, sizeof(rows));
	int any_fail = 0, run_err = 0, usage_err = 0, intr = 0;
	size_t nrows = 0;
	for (size_t i = 0; i < ntr && !intr && !usage_err; i++) {
		dmr_fid_row_t *r = &rows[i];
		nrows = i + 1;
		trace_name(tlist[i], r->trace, sizeof(r->trace));
		for (int k = 0; k < 2; k++) { /* 0 device (measured), 1 sim (predicted) */
			const char *be = k ? "sim" : meas_be;
			char odir[1200];
			snprintf(odir, sizeof(odir), "%s/runs/%s-%s", out, r->trace, k ? "sim" : "verbs");
			dmr_replay_opts_t o;
			dmr_replay_opts_default(&o);
			o.trace = tlist[i];
			o.backend = be;
			o.profile = profile;
			o.device = strcmp(meas_be, "verbs") ? NULL : device;
			o.port = port;
			o.gid_index = gid;
			o.out_dir = odir;
			o.cns = (uint32_t)cns;
			o.threads = (uint32_t)threads;
			o.coros = (uint32_t)coros;
			o.seed = seed;
			o.quiet = 1;
			dmr_replay_result_t res;
			memset(&res, 0, sizeof(res));
			dmr_err_t err = {{0}};
			if (fid_sig) { /* caught between runs: start no other */
				fid_note(r, be, "interrupted");
				intr = 1;
				break;
			}
			if (!quiet)
				fprintf(stderr, "dmreplay fidelity: %s on %s ...\n", r->trace, be);
			dmr_status_t st = dmr_replay_run(&o, &res, &err);
			if (st == DMR_ERR_INTERRUPTED || fid_sig) {
				/* replay's own handler caught it (or ours, between runs) */
				fprintf(stderr, "dmreplay fidelity: %s on %s: %s; stopping\n", r->trace, be,
					st == DMR_ERR_INTERRUPTED ? err.msg : "interrupted by signal");
				fid_note(r, be, "interrupted");
				intr = 1;
				break;
			}
			if (st != DMR_OK) {
				fprintf(stderr, "dmreplay fidelity: %s on %s: error: %s\n", r->trace, be,
					err.msg);
				if (!r->note[0])
					fid_note(r, be, err.msg);
				run_err = 1;
				if (st == DMR_ERR_IO || st == DMR_ERR_PARSE) {
					usage_err = 1;
					break;
				}
				if (st != DMR_ERR_VERIFY)
					continue;
			}
			if (!quiet)
				fprintf(stderr, "dmreplay fidelity: %s on %s: committed %.1f txn/s, p50 %.1f us, "
						"p99 %.1f us, aborts %.1f %%, %s\n",
					r->trace, be, res.committed_tps, res.p50_us, res.p99_us,
					100 * res.abort_rate, res.sim_time_s > 0 ? "done" : "empty");
			if (k == 0) {
				r->meas_tps = res.committed_tps;
				r->meas_p50 = res.p50_us;
				r->meas_p99 = res.p99_us;
				r->meas_abort = res.abort_rate;
			} else {
				r->pred_tps = res.committed_tps;
				r->pred_p50 = res.p50_us;
				r->pred_p99 = res.p99_us;
				r->pred_abort = res.abort_rate;
			}
		}
		dmr_fid_row_compute(r);
		any_fail |= !r->pass;
	}
	int complete = !intr && !run_err && nrows == ntr;

	time_t now = time(NULL);
	char date[32];
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("dmreplay fidelity: profile %s vs device %s, %llu CN x %llu threads x %llu coros, "
	       "seed %llu, %s%s\n",
	       profile, device, (unsigned long long)cns, (unsigned long long)threads,
	       (unsigned long long)coros, (unsigned long long)seed, date,
	       complete ? "" : ", PARTIAL");
	printf("committed throughput in txn/s, latency in us; err = (predicted - measured) / measured\n");
	dmr_fid_print(rows, nrows, stdout);

	/* a finished table only replaces a finished table: anything less goes
	 * to fidelity.partial.{csv,md} */
	const char *csv = complete ? "fidelity.csv" : "fidelity.partial.csv";
	const char *md = complete ? "fidelity.md" : "fidelity.partial.md";
	char head[1024];
	snprintf(head, sizeof(head),
		 "Profile `%s` (sim, predicted) vs device `%s` (verbs, measured); "
		 "%llu CN x %llu threads x %llu coros, seed %llu; %s.%s",
		 profile, device, (unsigned long long)cns, (unsigned long long)threads,
		 (unsigned long long)coros, (unsigned long long)seed, date,
		 complete ? "" : intr ? " PARTIAL: interrupted by a signal, "
					"rows after the interrupted one are missing."
				      : " PARTIAL: a run failed (see the notes).");
	if (write_table(out, csv, 0, head, rows, nrows) < 0 ||
	    write_table(out, md, 1, head, rows, nrows) < 0) {
		fprintf(stderr, "dmreplay fidelity: error: writing %s/%s, %s: %s\n", out, csv, md,
			strerror(errno));
		return intr ? DMR_FID_EXIT_INTR : DMR_FID_EXIT_USAGE;
	}
	if (complete) { /* an older partial table is superseded */
		char stale[1200];
		snprintf(stale, sizeof(stale), "%s/fidelity.partial.csv", out);
		remove(stale);
		snprintf(stale, sizeof(stale), "%s/fidelity.partial.md", out);
		remove(stale);
	}
	if (!quiet || !complete)
		fprintf(complete ? stdout : stderr, "table%s: %s/%s, %s/%s\n",
			complete ? "" : " (partial)", out, csv, out, md);
	if (intr)
		return DMR_FID_EXIT_INTR;
	if (usage_err)
		return DMR_FID_EXIT_USAGE;
	return any_fail || run_err ? DMR_FID_EXIT_FAIL : DMR_FID_EXIT_PASS;
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = (s && *s && *s != '-') ? strtoull(s, &end, 10) : 0;
	if (!s || !*s || *s == '-' || errno || *end || x < lo || x > hi) {
		fprintf(stderr, "dmreplay fidelity: option %s: '%s' is not an integer in %llu..%llu\n",
			opt, s ? s : "", (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*v = x;
	return 0;
}

int dmr_fidelity_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"profile", required_argument, 0, 'p'}, {"device", required_argument, 0, 'v'},
		{"port", required_argument, 0, 'P'},    {"gid-index", required_argument, 0, 'G'},
		{"out", required_argument, 0, 'o'},     {"traces", required_argument, 0, 't'},
		{"txns", required_argument, 0, 'n'},    {"cns", required_argument, 0, 'c'},
		{"threads", required_argument, 0, 'T'}, {"coros", required_argument, 0, 'C'},
		{"seed", required_argument, 0, 's'},    {"quiet", no_argument, 0, 'q'},
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	const char *profile = NULL, *device = NULL, *out = "out/fidelity";
	int port = 1, gid = -1, quiet = 0;
	uint64_t txns = 2000, cns = 1, threads = 2, coros = 2, seed = 1, v;
	char *tlist[FID_MAX_TRACES];
	size_t ntr = 0;
	char *tdup[FID_MAX_TRACES];
	size_t ndup = 0;
	int ch, rc = DMR_FID_EXIT_USAGE;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': profile = optarg; break;
		case 'v': device = optarg; break;
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); rc = 0; goto done;
		case 'P':
			if (parse_u64("--port", optarg, 1, 255, &v)) goto done;
			port = (int)v;
			break;
		case 'G':
			if (parse_u64("--gid-index", optarg, 0, 255, &v)) goto done;
			gid = (int)v;
			break;
		case 'n': if (parse_u64("--txns", optarg, 1, 100000000, &txns)) goto done; break;
		case 'c': if (parse_u64("--cns", optarg, 1, 1024, &cns)) goto done; break;
		case 'T': if (parse_u64("--threads", optarg, 1, 1024, &threads)) goto done; break;
		case 'C': if (parse_u64("--coros", optarg, 1, 1024, &coros)) goto done; break;
		case 's': if (parse_u64("--seed", optarg, 0, UINT64_MAX, &seed)) goto done; break;
		case 't': {
			if (ndup == FID_MAX_TRACES) {
				fprintf(stderr, "dmreplay fidelity: too many --traces options\n");
				goto done;
			}
			char *d = strdup(optarg), *save = NULL;
			if (!d) goto done;
			tdup[ndup++] = d;
			size_t n0 = ntr;
			for (char *tok = strtok_r(d, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (ntr == FID_MAX_TRACES) {
					fprintf(stderr, "dmreplay fidelity: at most %d traces\n", FID_MAX_TRACES);
					goto done;
				}
				tlist[ntr++] = tok;
			}
			if (ntr == n0 || !*optarg) {
				fprintf(stderr, "dmreplay fidelity: error: --traces '%s' names no trace\n",
					optarg);
				goto done;
			}
			break;
		}
		default: usage(stderr); goto done;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay fidelity: unexpected argument '%s'\n", argv[optind]);
		goto done;
	}
	if (!profile) {
		fprintf(stderr, "dmreplay fidelity: --profile P is required (the profile measured "
				"on the device, e.g. models/rxe-qemu.json)\n");
		goto done;
	}
	/* every named trace must be a trace before anything is opened or made */
	for (size_t i = 0; i < ntr; i++)
		if (check_trace(tlist[i]) < 0)
			goto done;
	/* test hook (tests/test_fidelity.c, no RDMA): "measure" on the sim too */
	const char *meas_be = getenv("DMR_FIDELITY_TEST_MEASURE_SIM") ? "sim" : "verbs";
	if (!strcmp(meas_be, "sim") && (!device || !*device))
		device = "sim";
	if (!device || !*device) {
		fprintf(stderr, "dmreplay fidelity: error: no device: fidelity compares the sim with "
				"a real device, give it with --device D (e.g. rxe0; on a machine without "
				"RDMA run it in the SoftRoCE VM: scripts/rxe-vm run -- scripts/fidelity-rxe "
				"build)\n");
		rc = DMR_FID_EXIT_NODEV;
		goto done;
	}
	/* the profile must load before anything is measured */
	{
		dmr_model_t m;
		dmr_err_t merr = {{0}};
		if (dmr_model_load(profile, &m, &merr) != DMR_OK) {
			fprintf(stderr, "dmreplay fidelity: error: %s\n", merr.msg);
			goto done;
		}
	}
	if (!strcmp(meas_be, "verbs")) {
		dmr_err_t derr = {{0}};
		dmr_status_t st = probe_device(device, port, gid, &derr);
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay fidelity: error: device '%s' cannot be used: %s\n",
				device, derr.msg);
			rc = st == DMR_ERR_NODEV ? DMR_FID_EXIT_NODEV : DMR_FID_EXIT_FAIL;
			goto done;
		}
	}
	/* SIGINT/SIGTERM from here on: stop after the current replay (or trace
	 * generation), write what was gathered as partial, exit 130 */
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fid_on_signal;
	sigemptyset(&sa.sa_mask);
	fid_sig = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = fid_run(profile, device, meas_be, port, gid, out, tlist, ntr, txns, cns, threads,
		     coros, seed, quiet);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
done:
	for (size_t i = 0; i < ndup; i++)
		free(tdup[i]);
	return rc;
}
