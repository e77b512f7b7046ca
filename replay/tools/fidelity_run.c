/*
 * replay/tools/fidelity_run.c - the runs of `dmreplay fidelity`
 * (fidelity.h): the generated trace set, each trace replayed on the device
 * (measured) and on the sim (predicted) through dmr_replay_run, and the
 * table, complete or partial.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../../traces/workload.h"
#include "../replay.h"
#include "fidelity_impl.h"

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
	int any_fail = 0, run_err = 0, usage_err = 0, intr = 0;
	size_t nrows = 0;
	for (size_t i = 0; i < ntr && !intr && !usage_err; i++) {
		dmr_fid_row_t *r = &rows[i];
		nrows = i + 1;
		trace_name(tlist[i], r->trace, sizeof(r->trace));
		for (int k = 0; k < 2; k++) { /* 0 device (measured), 1 sim (predicted) */
			const char *be = k ? "sim" : meas_be;
			char odir[1200];
			snprintf(odir, sizeof(odir), "%s/runs/%s-%s", out, r->trace,
				 k ? "sim" : "verbs");
			dmr_replay_opts_t o;
			dmr_replay_opts_default(&o);
			o.trace = tlist[i];
			o.backend = be;
			o.profile = profile;
			o.device = strcmp(meas_be, "verbs") ? NULL : device;
			o.port = cfg->port;
			o.gid_index = cfg->gid;
			o.out_dir = odir;
			o.cns = (uint32_t)cns;
			o.threads = (uint32_t)threads;
			o.coros = (uint32_t)coros;
			o.seed = seed;
			o.quiet = 1;
			dmr_replay_result_t res;
			memset(&res, 0, sizeof(res));
			dmr_err_t err = {{0}};
			if (dmr_sig_caught()) { /* caught between runs: start no other */
				fid_note(r, be, "interrupted");
				intr = 1;
				break;
			}
			if (!quiet)
				fprintf(stderr, "dmreplay fidelity: %s on %s ...\n", r->trace, be);
			dmr_status_t st = dmr_replay_run(&o, &res, &err);
			if (st == DMR_ERR_INTERRUPTED || dmr_sig_caught()) {
				/* replay's own handler caught it (or ours, between runs) */
				fprintf(stderr, "dmreplay fidelity: %s on %s: %s; stopping\n",
					r->trace, be,
					st == DMR_ERR_INTERRUPTED ? err.msg
								  : "interrupted by signal");
				fid_note(r, be, "interrupted");
				intr = 1;
				break;
			}
			if (st != DMR_OK) {
				fprintf(stderr, "dmreplay fidelity: %s on %s: error: %s\n",
					r->trace, be, err.msg);
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
				fprintf(stderr,
					"dmreplay fidelity: %s on %s: committed %.1f txn/s, p50 "
					"%.1f us, "
					"p99 %.1f us, aborts %.1f %%, %s\n",
					r->trace, be, res.committed_tps, res.p50_us, res.p99_us,
					100 * res.abort_rate,
					res.sim_time_s > 0 ? "done" : "empty");
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
