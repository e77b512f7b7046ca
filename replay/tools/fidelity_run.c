/*
 * replay/tools/fidelity_run.c - the runs of `dmreplay fidelity`
 * (fidelity.h): the generated trace set, each trace replayed on the device
 * (measured) and on the sim (predicted) through dmr_replay_run, and the
 * table, complete or partial.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../../traces/workload.h"
#include "../replay.h"
#include "fidelity_impl.h"
#include "hostload.h"

#define FID_YCSB_A DMR_SOURCE_DIR "/traces/ycsb/workloada"

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

static int gen_trace(int which, const char *path, uint64_t txns, uint64_t seed)
{
	char t[32], s[32];
	snprintf(t, sizeof(t), "%llu", (unsigned long long)txns);
	snprintf(s, sizeof(s), "%llu", (unsigned long long)seed);
	switch (which) {
	case 0:
	case 1: {
		char *argv[] = {"tpcc",
				"--warehouses",
				"2",
				"--regime",
				which ? "extreme" : "uniform",
				"--txns",
				t,
				"--seed",
				s,
				"--quiet",
				"-o",
				(char *)path,
				NULL};
		return dmr_gen_tpcc_main(12, argv);
	}
	case 2: {
		char *argv[] = {"smallbank", "--accounts", "10000", "--txns",	  t,   "--seed",
				s,	     "--quiet",	   "-o",    (char *)path, NULL};
		return dmr_gen_smallbank_main(10, argv);
	}
	default: {
		char *argv[] = {"ycsb", "--workload", FID_YCSB_A, "--txns",	t,   "--seed",
				s,	"--quiet",    "-o",	  (char *)path, NULL};
		return dmr_gen_ycsb_main(10, argv);
	}
	}
}

/* The median of v[0..n) (reordered), and *spread_p (may be NULL) = (max -
 * min) / median (0 for one value; NAN when the median is not > 0). */
static double fid_median(double *v, unsigned n, double *spread_p)
{
	for (unsigned a = 1; a < n; a++)
		for (unsigned b = a; b > 0 && v[b - 1] > v[b]; b--) {
			double t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (spread_p)
		*spread_p = m > 0 ? (v[n - 1] - v[0]) / m : NAN;
	return m;
}

/* fid_side: numbers (OK; VERIFY: numbers, but the run's check failed), none */
enum { FID_SIDE_OK, FID_SIDE_VERIFY, FID_SIDE_FAILED, FID_SIDE_USAGE, FID_SIDE_INTR };

/* One replay of trace `path` for row r: k 0 the device (measured; round
 * `round` of R; hl: the host's load around it, NULL: not sampled), k 1
 * the sim (predicted). *res is set on FID_SIDE_OK; a failure's message
 * goes to stderr and the row's note. */
static int fid_side(const dmr_fid_cfg_t *cfg, const char *path, dmr_fid_row_t *r, int k,
		    unsigned round, unsigned R, dmr_hostload_t *hl, dmr_replay_result_t *res)
{
	const char *be = k ? "sim" : cfg->meas_be;
	char odir[1200];
	if (k || R == 1)
		snprintf(odir, sizeof(odir), "%s/runs/%s-%s", cfg->out, r->trace,
			 k ? "sim" : "verbs");
	else
		snprintf(odir, sizeof(odir), "%s/runs/%s-verbs-r%u", cfg->out, r->trace, round + 1);
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.trace = path;
	o.backend = be;
	o.profile = cfg->profile;
	o.device = strcmp(cfg->meas_be, "verbs") ? NULL : cfg->device;
	o.port = cfg->port;
	o.gid_index = cfg->gid;
	o.out_dir = odir;
	o.cns = (uint32_t)cfg->cns;
	o.threads = (uint32_t)cfg->threads;
	o.coros = (uint32_t)cfg->coros;
	o.seed = cfg->seed;
	o.quiet = 1;
	memset(res, 0, sizeof(*res));
	dmr_err_t err = {{0}};
	if (dmr_sig_caught()) { /* caught between runs: start no other */
		fid_note(r, be, "interrupted");
		return FID_SIDE_INTR;
	}
	if (!cfg->quiet) {
		char rb[48] = "";
		if (!k && R > 1)
			snprintf(rb, sizeof(rb), " (round %u of %u)", round + 1, R);
		fprintf(stderr, "dmreplay fidelity: %s on %s ...%s\n", r->trace, be, rb);
	}
	dmr_hostload_snap_t snap;
	if (hl)
		dmr_hostload_begin(hl, &snap);
	dmr_status_t st = dmr_replay_run(&o, res, &err);
	if (hl)
		dmr_hostload_end(hl, &snap);
	if (st == DMR_ERR_INTERRUPTED || dmr_sig_caught()) {
		/* replay's own handler caught it (or ours, between runs) */
		fprintf(stderr, "dmreplay fidelity: %s on %s: %s; stopping\n", r->trace, be,
			st == DMR_ERR_INTERRUPTED ? err.msg : "interrupted by signal");
		fid_note(r, be, "interrupted");
		return FID_SIDE_INTR;
	}
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay fidelity: %s on %s: error: %s\n", r->trace, be, err.msg);
		if (!r->note[0])
			fid_note(r, be, err.msg);
		if (st == DMR_ERR_IO || st == DMR_ERR_PARSE)
			return FID_SIDE_USAGE;
		if (st != DMR_ERR_VERIFY)
			return FID_SIDE_FAILED;
	}
	if (!cfg->quiet) {
		char hb[96] = "";
		if (hl)
			dmr_hostload_format(hl, hb, sizeof(hb));
		fprintf(stderr,
			"dmreplay fidelity: %s on %s: committed %.1f txn/s, p50 %.1f us, p99 %.1f "
			"us, aborts %.1f %%, %s%s%s\n",
			r->trace, be, res->committed_tps, res->p50_us, res->p99_us,
			100 * res->abort_rate, res->sim_time_s > 0 ? "done" : "empty",
			hl ? "; host " : "", hb);
	}
	return st == DMR_OK ? FID_SIDE_OK : FID_SIDE_VERIFY;
}

int dmr_fid_run(const dmr_fid_cfg_t *cfg)
{
	const char *profile = cfg->profile, *device = cfg->device, *meas_be = cfg->meas_be;
	const char *out = cfg->out;
	char **tlist = cfg->traces;
	size_t ntr = cfg->ntraces;
	uint64_t txns = cfg->txns, cns = cfg->cns, threads = cfg->threads, coros = cfg->coros;
	uint64_t seed = cfg->seed;
	int quiet = cfg->quiet;
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/traces", out);
	dmr_err_t derr;
	if (dmr_mkdir_p(dir, 0, &derr) != DMR_OK) {
		fprintf(stderr, "dmreplay fidelity: error: cannot create %s: %s\n", dir, derr.msg);
		return DMR_FID_EXIT_USAGE;
	}
	static const char *gen_names[] = {"tpcc-uniform", "tpcc-extreme", "smallbank", "ycsb-a"};
	static char genpaths[4][1200];
	char *gl[4];
	if (ntr == 0) {
		for (int i = 0; i < 4; i++) {
			snprintf(genpaths[i], sizeof(genpaths[i]), "%s/%s.csv", dir, gen_names[i]);
			if (!quiet)
				fprintf(stderr,
					"dmreplay fidelity: generating %s (%llu txns, seed %llu)\n",
					genpaths[i], (unsigned long long)txns,
					(unsigned long long)seed);
			if (gen_trace(i, genpaths[i], txns, seed) != 0) {
				fprintf(stderr, "dmreplay fidelity: error: generating %s failed\n",
					genpaths[i]);
				return dmr_sig_caught() ? DMR_FID_EXIT_INTR : DMR_FID_EXIT_USAGE;
			}
			if (dmr_sig_caught()) {
				fprintf(stderr,
					"dmreplay fidelity: interrupted by signal %d while "
					"generating traces: nothing measured, no table written\n",
					dmr_sig_caught());
				return DMR_FID_EXIT_INTR;
			}
			gl[i] = genpaths[i];
		}
		tlist = gl;
		ntr = 4;
	}

	dmr_fid_row_t rows[FID_MAX_TRACES];
	memset(rows, 0, sizeof(rows));
	static double mv[FID_MAX_TRACES][4][FID_MAX_ROUNDS]; /* tps, p50, p99, aborts */
	int any_fail = 0, run_err = 0, usage_err = 0, intr = 0;
	size_t nrows = 0;
	unsigned R = cfg->rounds ? (unsigned)cfg->rounds : 1;
	/* the sim's time is not the host's: sampled on the device only (and
	 * under the test hook, hostload.h) */
	int wall = dmr_hostload_wanted(strcmp(meas_be, "sim") == 0);
	for (unsigned round = 0; round < R && !intr && !usage_err; round++)
		for (size_t j = 0; j < ntr && !intr && !usage_err; j++) {
			/* every other round in reverse: a drift of the host's load
			 * falls on every trace alike */
			size_t i = round % 2 ? ntr - 1 - j : j;
			dmr_fid_row_t *r = &rows[i];
			if (round == 0) {
				nrows = i + 1;
				trace_name(tlist[i], r->trace, sizeof(r->trace));
			}
			for (int k = 0; k < (round == 0 ? 2 : 1); k++) {
				dmr_replay_result_t res;
				dmr_hostload_t hl = {0};
				int rc = fid_side(cfg, tlist[i], r, k, round, R,
						  k == 0 && wall ? &hl : NULL, &res);
				if (rc == FID_SIDE_INTR) {
					intr = 1;
					break;
				}
				if (rc == FID_SIDE_USAGE) {
					run_err = usage_err = 1;
					break;
				}
				if (rc == FID_SIDE_FAILED) {
					run_err = 1;
					continue;
				}
				if (rc == FID_SIDE_VERIFY)
					run_err = 1; /* the numbers stand, the table is partial */
				if (k == 1) {
					r->pred_tps = res.committed_tps;
					r->pred_p50 = res.p50_us;
					r->pred_p99 = res.p99_us;
					r->pred_abort = res.abort_rate;
					continue;
				}
				unsigned n = r->rounds++;
				mv[i][0][n] = res.committed_tps;
				mv[i][1][n] = res.p50_us;
				mv[i][2][n] = res.p99_us;
				mv[i][3][n] = res.abort_rate;
				if (hl.known) {
					r->host_other = fmax(r->host_other, hl.other);
					r->host_steal = fmax(r->host_steal, hl.steal);
					r->host_load = fmax(r->host_load, hl.loadavg1);
					r->loaded_rounds += hl.loaded;
				} else { /* not sampled (sim) or procfs not readable */
					r->host_other = r->host_steal = r->host_load = NAN;
				}
			}
		}
	for (size_t i = 0; i < nrows; i++) {
		dmr_fid_row_t *r = &rows[i];
		if (r->rounds) {
			r->meas_tps = fid_median(mv[i][0], r->rounds, &r->spread_tps);
			r->meas_p50 = fid_median(mv[i][1], r->rounds, &r->spread_p50);
			r->meas_p99 = fid_median(mv[i][2], r->rounds, NULL);
			r->meas_abort = fid_median(mv[i][3], r->rounds, NULL);
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
	printf("committed throughput in txn/s, latency in us; err = (predicted - measured) / "
	       "measured\n");
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
		 complete ? ""
		 : intr	  ? " PARTIAL: interrupted by a signal, "
			    "rows after the interrupted one are missing."
			  : " PARTIAL: a run failed (see the notes).");
	dmr_err_t werr;
	if (dmr_fid_write_table(out, csv, 0, head, rows, nrows, &werr) != DMR_OK ||
	    dmr_fid_write_table(out, md, 1, head, rows, nrows, &werr) != DMR_OK) {
		fprintf(stderr, "dmreplay fidelity: error: writing the table: %s\n", werr.msg);
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
