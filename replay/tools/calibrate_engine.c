/*
 * replay/tools/calibrate_engine.c - `dmreplay calibrate`'s measurement of
 * the CN CPU the replay engine itself costs (txn_begin, txn_op,
 * txn_logic): the real engine on the shm backend over four generated
 * traces, fitted by least squares (information only; see below).
 */
#include <errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/base/timeps.h"
#include "../../traces/trace.h"
#include "../../traces/workload.h"
#include "../replay.h"
#include "calibrate_impl.h"

/*
 * CN CPU of the replay engine and the transaction core (trace fetch and
 * parse, dispatch, rounds, bookkeeping), which the model charges as
 * txn_begin_ns + txn_op_ns x ops per transaction started and txn_logic_ns
 * per completion handled. Measured by running the real engine on the shm
 * backend (verbs executed by the calling CPU: no NIC, no waiting), one
 * worker, one context, over short generated traces of four shapes
 * (SmallBank, YCSB-A, YCSB-C, TPC-C uniform; 1 to ~40 operations and 1 to
 * ~3.5 doorbells per transaction), and fitting the loop's wall time per
 * attempt as b0 + b1 x ops + b2 x doorbells (GSL least squares, negative
 * coefficients dropped and the rest refitted; the run's end is seen up to
 * 2 ms late, 1 ms is subtracted). shm's own per-completion
 * clock reads (two CLOCK_MONOTONIC per poll, which the verbs backend does
 * not make) are subtracted; the rest of shm's verb execution (memcpy and
 * a mutex per post) is left in (small beside the engine under qemu; an
 * overestimate of at most that much). Not for the sim backend: the model
 * has no engine CPU of its own to measure. The fit is recorded in the
 * profile's "measured" section only (information): charged by the sim it
 * makes TPC-C 40 % too slow (docs/fidelity.md), so the profile does not
 * set txn_begin_ns / txn_op_ns and txn_logic_ns stays the base's.
 * Errors: DMR_ERR_IO (temporary directory or traces), the replay's.
 */
dmr_status_t dmr_cal_measure_engine(cal_t *c, dmr_err_t *err)
{
	char dir[] = "/tmp/dmr-cal-engine-XXXXXX";
	if (!mkdtemp(dir))
		return dmr_err_set(err, DMR_ERR_IO,
				   "engine: cannot create a temporary directory: %s",
				   strerror(errno));
	static const char *const names[CAL_ENG_NTRACES] = {"smallbank", "ycsb-a", "ycsb-c", "tpcc"};
	/* long enough that drive_threaded's 2 ms poll of its workers (the run
	 * ends up to 2 ms after the last transaction; 1 ms subtracted) is a few
	 * per cent: ~50 ms per run under qemu TCG */
	const char *txns[CAL_ENG_NTRACES] = {"2000", "2000", "2000", "150"};
	if (c->o.quick) {
		txns[0] = txns[1] = txns[2] = "1000";
		txns[3] = "75";
	}
	uint32_t reps = c->o.quick ? 2 : 3;
	/* shm's clock read (CLOCK_MONOTONIC in integer ps, as dmr_mono_ps),
	 * median of 1000 */
	{
		double d[1000];
		for (int i = 0; i < 1000; i++) {
			dmr_time_ps_t a = dmr_mono_ps(), b = dmr_mono_ps();
			d[i] = dmr_ps_to_ns(b - a);
		}
		gsl_sort(d, 1, 1000);
		c->eng_clock_ns = gsl_stats_median_from_sorted_data(d, 1, 1000);
	}
	dmr_status_t st = DMR_OK;
	char path[CAL_ENG_NTRACES][300];
	double X[CAL_ENG_NTRACES][3], y[CAL_ENG_NTRACES];
	dmr_trace_txn_t *scratch = malloc(sizeof(*scratch));
	if (!scratch) {
		rmdir(dir);
		return dmr_err_set(err, DMR_ERR_NOMEM, "engine: out of memory");
	}
	uint32_t n = 0;
	for (int k = 0; k < CAL_ENG_NTRACES && st == DMR_OK; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/%s.csv", dir, names[k]);
		int grc;
		if (k == 0) {
			char *argv[] = {
			    "smallbank", "--accounts", "10000",	  "--txns", (char *)txns[k],
			    "--seed",	 "1",	       "--quiet", "-o",	    path[k],
			    NULL};
			grc = dmr_gen_smallbank_main(10, argv);
		} else if (k < 3) {
			char *argv[] = {"ycsb",
					"--workload",
					k == 1 ? DMR_SOURCE_DIR "/traces/ycsb/workloada"
					       : DMR_SOURCE_DIR "/traces/ycsb/workloadc",
					"--txns",
					(char *)txns[k],
					"--seed",
					"1",
					"--quiet",
					"-o",
					path[k],
					NULL};
			grc = dmr_gen_ycsb_main(10, argv);
		} else {
			char *argv[] = {"tpcc",	  "--warehouses",  "2",	     "--regime", "uniform",
					"--txns", (char *)txns[k], "--seed", "1",	 "--quiet",
					"-o",	  path[k],	   NULL};
			grc = dmr_gen_tpcc_main(12, argv);
		}
		if (grc != 0) {
			st = dmr_err_set(err, DMR_ERR_IO, "engine: generating the %s trace failed",
					 names[k]);
			break;
		}
		/* operations per transaction of the trace */
		dmr_trace_reader_t *rd = NULL;
		uint64_t nt = 0, nops = 0;
		st = dmr_trace_open(path[k], &rd, err);
		while (st == DMR_OK && (st = dmr_trace_next(rd, scratch, err)) == DMR_OK) {
			nt++;
			nops += scratch->nops;
		}
		dmr_trace_close(rd);
		if (st != DMR_EOF)
			break;
		st = DMR_OK;
		double t[8], db = 0;
		for (uint32_t r = 0; r < reps && st == DMR_OK; r++) {
			char odir[340];
			snprintf(odir, sizeof(odir), "%s/run-%s", dir, names[k]);
			dmr_replay_opts_t o;
			dmr_replay_opts_default(&o);
			o.trace = path[k];
			o.backend = "shm";
			o.out_dir = odir;
			o.cns = o.threads = o.coros = 1;
			o.seed = 1;
			o.quiet = 1;
			dmr_replay_result_t res;
			memset(&res, 0, sizeof(res));
			st = dmr_replay_run(&o, &res, err);
			if (st == DMR_OK && res.st.tried == 0)
				st = dmr_err_set(err, DMR_ERR_INVALID,
						 "engine: %s run tried nothing", names[k]);
			if (st != DMR_OK)
				break;
			double run_ns = res.sim_time_s * 1e9 - 1e6; /* s to ns, less 1 ms */
			t[r] = (run_ns > 0 ? run_ns : 0) / res.st.tried;
			db = (double)res.be.doorbells / res.st.tried;
			char f[400];
			snprintf(f, sizeof(f), "%s/summary.csv", odir);
			unlink(f);
			snprintf(f, sizeof(f), "%s/timeseries.csv", odir);
			unlink(f);
			rmdir(odir);
		}
		if (st != DMR_OK)
			break;
		gsl_sort(t, 1, reps);
		double tm = gsl_stats_median_from_sorted_data(t, 1, reps);
		/* shm reads the clock twice per completion (its poll and the
		 * worker loop's dmr_be_now); verbs reads the TSC, cost clock_ns */
		double tsub = tm - db * (2 * c->eng_clock_ns - c->clock_ns);
		snprintf(c->eng_trace[n], sizeof(c->eng_trace[n]), "%s", names[k]);
		c->eng_t[n] = tm;
		c->eng_ops[n] = (double)nops / (double)(nt ? nt : 1);
		c->eng_db[n] = db;
		X[n][0] = 1;
		X[n][1] = c->eng_ops[n];
		X[n][2] = db;
		y[n] = tsub;
		n++;
		unlink(path[k]);
	}
	free(scratch);
	for (int k = 0; k < CAL_ENG_NTRACES; k++)
		unlink(path[k]);
	rmdir(dir);
	if (st != DMR_OK)
		return st;
	/* least squares over the columns still in; drop a negative one, refit */
	int in[3] = {1, 1, 1};
	double b[3] = {0, 0, 0};
	for (int pass = 0; pass < 3; pass++) {
		int p = in[0] + in[1] + in[2];
		gsl_matrix *A = gsl_matrix_alloc(n, (size_t)p);
		gsl_vector *Y = gsl_vector_alloc(n), *B = gsl_vector_alloc((size_t)p);
		gsl_matrix *cov = gsl_matrix_alloc((size_t)p, (size_t)p);
		gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, (size_t)p);
		if (!A || !Y || !B || !cov || !ws) {
			gsl_matrix_free(A);
			gsl_vector_free(Y);
			gsl_vector_free(B);
			gsl_matrix_free(cov);
			gsl_multifit_linear_free(ws);
			return dmr_err_set(err, DMR_ERR_NOMEM, "engine: out of memory");
		}
		for (uint32_t i = 0; i < n; i++) {
			int j = 0;
			for (int q = 0; q < 3; q++)
				if (in[q])
					gsl_matrix_set(A, i, (size_t)j++, X[i][q]);
			gsl_vector_set(Y, i, y[i]);
		}
		double chisq;
		gsl_multifit_linear(A, Y, B, cov, &chisq, ws);
		int j = 0, neg = -1;
		for (int q = 0; q < 3; q++) {
			b[q] = in[q] ? gsl_vector_get(B, (size_t)j++) : 0;
			if (in[q] && b[q] < 0 && (neg < 0 || b[q] < b[neg]))
				neg = q;
		}
		gsl_matrix_free(A);
		gsl_vector_free(Y);
		gsl_vector_free(B);
		gsl_matrix_free(cov);
		gsl_multifit_linear_free(ws);
		if (neg < 0 || p == 1)
			break;
		in[neg] = 0;
		b[neg] = 0;
	}
	for (int q = 0; q < 3; q++)
		b[q] = b[q] > 0 ? b[q] : 0;
	c->eng_begin = b[0];
	c->eng_op = b[1];
	c->eng_logic = b[2];
	c->eng_n = n;
	for (uint32_t i = 0; i < n; i++) {
		double f = b[0] + b[1] * X[i][1] + b[2] * X[i][2];
		c->eng_resid[i] = y[i] > 0 ? (f - y[i]) / y[i] : 0;
	}
	c->eng_have = 1;
	return DMR_OK;
}
