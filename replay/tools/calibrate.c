/*
 * replay/tools/calibrate.c - `dmreplay calibrate`; see calibrate.h and
 * docs/CALIBRATION.md.
 */
#include "calibrate.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../../backends/sim/sim.h"
#include "../../models/model.h"
#include "../../traces/trace.h"
#include "../../traces/workload.h"
#include "bench_impl.h"
#include "../replay.h"
#ifdef DMR_HAVE_VERBS
#include "../../backends/verbs/verbs.h"
#endif

#define CAL_NSIZES 14 /* 8 B .. 64 KiB, powers of two */
#define CAL_NDEPTHS 5
#define CAL_BW_SIZE 65536u
#define CAL_BW_DEPTH 16u
#define CAL_ATOMIC_DEPTH 16u

static const uint32_t cal_depths[CAL_NDEPTHS] = {1, 2, 4, 8, 16};

typedef struct cal_opts {
	dmr_bench_target_t t;
	const char *base;
	const char *out;
	const char *name;
	int quick;
	uint32_t reps;
	uint64_t lat_iters, bw_iters, rate_iters, atomic_iters;
	double max_s; /* threaded backends: wall-time cap of one run */
	uint32_t poll_reps, db_reps;
	uint32_t qps;
	uint32_t batch;
	double tol_pct;
	int host_cpus; /* --host-cpus: -1 = detect (software NIC: online CPUs) */
} cal_opts_t;

/* A value measured `n` times. */
typedef struct summ {
	double value; /* median */
	double mean, stdev, min, max;
	uint32_t n;
	double *reps;	/* n values, in measurement order */
	uint64_t *done; /* WRs completed in each repetition (bench runs), or NULL */
} summ_t;

typedef struct cal {
	cal_opts_t o;
	dmr_bench_session_t s;
	char profile_name[64]; /* sim: the running model's name */
	uint32_t profile_mtu;  /* sim: the profile file's own MTU */
	double clock_ns;       /* median cost of one dmr_be_now() */
	uint32_t sizes[CAL_NSIZES];
	summ_t lat[2][CAL_NSIZES]; /* [READ, WRITE][size] t_typical, ns */
	summ_t lat_avg[2][CAL_NSIZES], lat_p99[2][CAL_NSIZES];
	double fit_c[2], fit_m[2], fit_cov00[2], fit_cov11[2], fit_sumsq[2];
	summ_t bw[2], bw_peak[2];			 /* [READ, WRITE] 64 KiB, Gb/s */
	summ_t rate[CAL_NDEPTHS];			 /* 8 B READ, Mpps */
	summ_t atom[2][2];				 /* [CAS, FAA][distinct, same] Mops/s */
	summ_t rate_w, rate_cas;			 /* 8 B WRITE, CAS at depth 16, one QP, Mpps */
	summ_t db_batch, db_single, db_doorbell, db_wqe; /* ns */
	summ_t poll_one, poll_empty;			 /* ns */
	uint32_t poll_late; /* threaded: completion not there yet when polled */
	double wall_s;
	/* software NIC (docs/CALIBRATION.md "Software NIC"): host_cpus 0 = none */
	uint32_t host_cpus;
	char host_cpus_src[200];
	double h_read, h_write, h_atomic, h_byte; /* fitted, ns and ns/B */
	double h_switch; /* ns per READ that finds its CPU busy */
	summ_t rd_batch, rd_single; /* 16 READs in one doorbell / 16 single posts, ns */
	double h_read_post; /* ns per doorbell carrying READs (of h_read) */
	double h_read_fit;			  /* as fitted (= h_read) */
	double cpu_bound_mops; /* min(host_cpus, qps) x one-QP CAS rate, Mops/s */
	/* CN CPU of the replay engine (measure_engine): per transaction
	 * attempt, per trace operation, per completion handled, ns */
	int eng_have;
	double eng_begin, eng_op, eng_logic;
	double eng_clock_ns; /* CLOCK_MONOTONIC read subtracted per completion */
	uint32_t eng_n;      /* engine runs (traces) fitted */
	char eng_trace[4][16];
	double eng_t[4], eng_ops[4], eng_db[4]; /* per attempt: ns, ops, doorbells */
	double eng_resid[4];                    /* fit - measured, relative */
	int refining; /* write_profile: nic_proc_ns 0 (the fit's sim runs) */
	int warned_cpu_bound; /* the "host CPUs' rate" warnings: printed once */
	int refine_iters;
	double refine_resid[4]; /* last sim stream vs measured, relative */
} cal_t;

static void summ_free(summ_t *s)
{
	free(s->reps);
	free(s->done);
	s->reps = NULL;
	s->done = NULL;
}

/* Keep how many WRs each repetition completed (max_s may cut a run short). */
static void summ_done(summ_t *s, const dmr_bench_result_t *res)
{
	s->done = malloc(s->n * sizeof(uint64_t));
	if (s->done)
		for (uint32_t i = 0; i < s->n; i++)
			s->done[i] = res[i].iters;
}

static int summ_make(summ_t *s, const double *v, uint32_t n)
{
	memset(s, 0, sizeof(*s));
	s->reps = malloc(n * sizeof(double));
	double *tmp = malloc(n * sizeof(double));
	if (!s->reps || !tmp) {
		free(s->reps);
		free(tmp);
		s->reps = NULL;
		return -1;
	}
	memcpy(s->reps, v, n * sizeof(double));
	memcpy(tmp, v, n * sizeof(double));
	gsl_sort(tmp, 1, n);
	s->n = n;
	s->value = gsl_stats_median_from_sorted_data(tmp, 1, n);
	s->mean = gsl_stats_mean(tmp, 1, n);
	s->stdev = n > 1 ? gsl_stats_sd_m(tmp, 1, n, s->mean) : 0;
	s->min = tmp[0];
	s->max = tmp[n - 1];
	free(tmp);
	return 0;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- running the measurements ------------------------------------------ */

/* Run spec `reps` times; out[i] = pick(result i). */
static dmr_status_t run_reps(cal_t *c, const dmr_bench_spec_t *sp, dmr_bench_result_t *res,
			     uint32_t reps, dmr_err_t *err)
{
	for (uint32_t i = 0; i < reps; i++) {
		dmr_status_t st = dmr_bench_run(&c->s, sp, &res[i], err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

#define PICK(dst, res, n, field)                                                                   \
	do {                                                                                       \
		for (uint32_t i_ = 0; i_ < (n); i_++)                                              \
			(dst)[i_] = (res)[i_].field;                                               \
	} while (0)

/* Wait for n completions of worker w (all must succeed). */
static dmr_status_t wait_wcs(dmr_bench_session_t *s, uint32_t w, uint32_t n, dmr_err_t *err)
{
	dmr_wc_t wc[64];
	uint32_t got = 0, spins = 0;
	uint64_t start = dmr_be_now(s->be, w);
	while (got < n) {
		if (s->driven) {
			int x = dmr_be_progress(s->be, UINT64_MAX);
			if (x < 0)
				return dmr_err_set(
				    err, DMR_ERR_TIMEOUT,
				    "calibrate: no event left with %u completions due", n - got);
			if ((uint32_t)x != w)
				return dmr_err_set(
				    err, DMR_ERR_REMOTE,
				    "calibrate: completion for worker %d, expected %u", x, w);
		}
		int want = n - got < 64 ? (int)(n - got) : 64;
		int k = dmr_be_poll(s->be, w, wc, want);
		for (int i = 0; i < k; i++)
			if (wc[i].status != DMR_WC_SUCCESS)
				return dmr_err_set(err, DMR_ERR_REMOTE,
						   "calibrate: %s WR %" PRIu64
						   " completed with status %s",
						   dmr_wr_opcode_string(wc[i].opcode), wc[i].wr_id,
						   dmr_wc_status_string(wc[i].status));
		got += k > 0 ? (uint32_t)k : 0;
		if (!s->driven && k <= 0 && (++spins & 1023) == 0 &&
		    dmr_be_now(s->be, w) - start > 10 * DMR_PS_PER_S)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "calibrate: %s: no completion for 10 s with %u due",
					   s->be->ops->name, n - got);
	}
	return DMR_OK;
}

static dmr_status_t measure_clock(cal_t *c)
{
	double d[1000];
	for (int i = 0; i < 1000; i++) {
		uint64_t a = dmr_be_now(c->s.be, 0);
		uint64_t b = dmr_be_now(c->s.be, 0);
		d[i] = (double)(b - a) / 1e3;
	}
	gsl_sort(d, 1, 1000);
	c->clock_ns = gsl_stats_median_from_sorted_data(d, 1, 1000);
	return DMR_OK;
}

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
#define ENG_NTRACES 4
static dmr_status_t measure_engine(cal_t *c, dmr_err_t *err)
{
	char dir[] = "/tmp/dmr-cal-engine-XXXXXX";
	if (!mkdtemp(dir))
		return dmr_err_set(err, DMR_ERR_IO, "engine: cannot create a temporary directory: %s",
				   strerror(errno));
	static const char *const names[ENG_NTRACES] = {"smallbank", "ycsb-a", "ycsb-c", "tpcc"};
	/* long enough that drive_threaded's 2 ms poll of its workers (the run
	 * ends up to 2 ms after the last transaction; 1 ms subtracted) is a few
	 * per cent: ~50 ms per run under qemu TCG */
	const char *txns[ENG_NTRACES] = {"2000", "2000", "2000", "150"};
	if (c->o.quick) {
		txns[0] = txns[1] = txns[2] = "1000";
		txns[3] = "75";
	}
	uint32_t reps = c->o.quick ? 2 : 3;
	/* shm's clock read (CLOCK_MONOTONIC), median of 1000 */
	{
		double d[1000];
		for (int i = 0; i < 1000; i++) {
			double a = wall_now(), b = wall_now();
			d[i] = (b - a) * 1e9;
		}
		gsl_sort(d, 1, 1000);
		c->eng_clock_ns = gsl_stats_median_from_sorted_data(d, 1, 1000);
	}
	dmr_status_t st = DMR_OK;
	char path[ENG_NTRACES][300];
	double X[ENG_NTRACES][3], y[ENG_NTRACES];
	dmr_trace_txn_t *scratch = malloc(sizeof(*scratch));
	if (!scratch) {
		rmdir(dir);
		return dmr_err_set(err, DMR_ERR_NOMEM, "engine: out of memory");
	}
	uint32_t n = 0;
	for (int k = 0; k < ENG_NTRACES && st == DMR_OK; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/%s.csv", dir, names[k]);
		int grc;
		if (k == 0) {
			char *argv[] = {"smallbank", "--accounts", "10000", "--txns", (char *)txns[k],
					"--seed", "1", "--quiet", "-o", path[k], NULL};
			grc = dmr_gen_smallbank_main(10, argv);
		} else if (k < 3) {
			char *argv[] = {"ycsb", "--workload",
					k == 1 ? DMR_SOURCE_DIR "/traces/ycsb/workloada"
					       : DMR_SOURCE_DIR "/traces/ycsb/workloadc",
					"--txns", (char *)txns[k], "--seed", "1", "--quiet", "-o", path[k],
					NULL};
			grc = dmr_gen_ycsb_main(10, argv);
		} else {
			char *argv[] = {"tpcc", "--warehouses", "2", "--regime", "uniform", "--txns",
					(char *)txns[k], "--seed", "1", "--quiet", "-o", path[k], NULL};
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
				st = dmr_err_set(err, DMR_ERR_INVALID, "engine: %s run tried nothing",
						 names[k]);
			if (st != DMR_OK)
				break;
			double run_ns = res.sim_time_s * 1e9 - 1e6;
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
	for (int k = 0; k < ENG_NTRACES; k++)
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

static dmr_status_t measure_latency(cal_t *c, double *buf, dmr_bench_result_t *res, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_READ, DMR_WR_WRITE};
	for (int o = 0; o < 2; o++) {
		double x[CAL_NSIZES], y[CAL_NSIZES];
		for (int k = 0; k < CAL_NSIZES; k++) {
			dmr_bench_spec_t sp = {.opcode = ops[o],
					       .size = c->sizes[k],
					       .depth = 1,
					       .iters = c->o.lat_iters,
					       .qps = 1,
					       .latency = 1,
					       .max_s = c->o.max_s};
			dmr_status_t st = run_reps(c, &sp, res, c->o.reps, err);
			if (st != DMR_OK)
				return st;
			for (uint32_t i = 0; i < c->o.reps; i++)
				buf[i] = res[i].t_typical_us * 1e3;
			summ_make(&c->lat[o][k], buf, c->o.reps);
			summ_done(&c->lat[o][k], res);
			for (uint32_t i = 0; i < c->o.reps; i++)
				buf[i] = res[i].t_avg_us * 1e3;
			summ_make(&c->lat_avg[o][k], buf, c->o.reps);
			for (uint32_t i = 0; i < c->o.reps; i++)
				buf[i] = res[i].t_p99_us * 1e3;
			summ_make(&c->lat_p99[o][k], buf, c->o.reps);
			x[k] = c->sizes[k];
			y[k] = c->lat[o][k].value;
		}
		gsl_fit_linear(x, 1, y, 1, CAL_NSIZES, &c->fit_c[o], &c->fit_m[o], &c->fit_cov00[o],
			       &(double){0}, &c->fit_cov11[o], &c->fit_sumsq[o]);
	}
	return DMR_OK;
}

static dmr_status_t measure_bw(cal_t *c, double *buf, dmr_bench_result_t *res, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_READ, DMR_WR_WRITE};
	for (int o = 0; o < 2; o++) {
		dmr_bench_spec_t sp = {.opcode = ops[o],
				       .size = CAL_BW_SIZE,
				       .depth = CAL_BW_DEPTH,
				       .iters = c->o.bw_iters,
				       .qps = 1,
				       .max_s = c->o.max_s};
		dmr_status_t st = run_reps(c, &sp, res, c->o.reps, err);
		if (st != DMR_OK)
			return st;
		PICK(buf, res, c->o.reps, bw_avg_gbps);
		summ_make(&c->bw[o], buf, c->o.reps);
		summ_done(&c->bw[o], res);
		PICK(buf, res, c->o.reps, bw_peak_gbps);
		summ_make(&c->bw_peak[o], buf, c->o.reps);
	}
	return DMR_OK;
}

static dmr_status_t measure_rate(cal_t *c, double *buf, dmr_bench_result_t *res, dmr_err_t *err)
{
	for (int k = 0; k < CAL_NDEPTHS; k++) {
		dmr_bench_spec_t sp = {.opcode = DMR_WR_READ,
				       .size = 8,
				       .depth = cal_depths[k],
				       .iters = c->o.rate_iters,
				       .qps = 1,
				       .max_s = c->o.max_s};
		dmr_status_t st = run_reps(c, &sp, res, c->o.reps, err);
		if (st != DMR_OK)
			return st;
		PICK(buf, res, c->o.reps, msg_rate_mpps);
		summ_make(&c->rate[k], buf, c->o.reps);
		summ_done(&c->rate[k], res);
	}
	return DMR_OK;
}

/* 8 B WRITE and CAS (distinct addresses) at depth 16 on one QP: with the
 * 8 B READ rate, the per-WR CPU cost of a software NIC by opcode. */
static dmr_status_t measure_rate_ops(cal_t *c, double *buf, dmr_bench_result_t *res,
				     dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_WRITE, DMR_WR_CAS};
	summ_t *dst[2] = {&c->rate_w, &c->rate_cas};
	for (int o = 0; o < 2; o++) {
		dmr_bench_spec_t sp = {.opcode = ops[o],
				       .size = 8,
				       .depth = cal_depths[CAL_NDEPTHS - 1],
				       .iters = c->o.rate_iters,
				       .qps = 1,
				       .max_s = c->o.max_s};
		dmr_status_t st = run_reps(c, &sp, res, c->o.reps, err);
		if (st != DMR_OK)
			return st;
		PICK(buf, res, c->o.reps, msg_rate_mpps);
		summ_make(dst[o], buf, c->o.reps);
		summ_done(dst[o], res);
	}
	return DMR_OK;
}

static dmr_status_t measure_atomics(cal_t *c, double *buf, dmr_bench_result_t *res, dmr_err_t *err)
{
	static const uint8_t ops[2] = {DMR_WR_CAS, DMR_WR_FAA};
	for (int o = 0; o < 2; o++)
		for (int same = 0; same < 2; same++) {
			dmr_bench_spec_t sp = {.opcode = ops[o],
					       .size = 8,
					       .depth = CAL_ATOMIC_DEPTH,
					       .iters = c->o.atomic_iters,
					       .qps = c->o.qps,
					       .same_addr = same,
					       .max_s = c->o.max_s};
			dmr_status_t st = run_reps(c, &sp, res, c->o.reps, err);
			if (st != DMR_OK)
				return st;
			PICK(buf, res, c->o.reps, msg_rate_mpps);
			summ_make(&c->atom[o][same], buf, c->o.reps);
			summ_done(&c->atom[o][same], res);
		}
	return DMR_OK;
}

/* k 8-byte WRITEs, signaled, to words 0..k-1 of worker 0's region. */
static void db_wrs(cal_t *c, dmr_wr_t *wrs, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++)
		wrs[i] = (dmr_wr_t){.wr_id = i,
				    .local = c->s.local[0] + 8 * i,
				    .remote = 8 * i,
				    .length = 8,
				    .opcode = DMR_WR_WRITE,
				    .flags = DMR_WR_SIGNALED};
}

static dmr_status_t measure_doorbell(cal_t *c, dmr_err_t *err)
{
	uint32_t k = c->o.batch, n = c->o.db_reps;
	dmr_wr_t *wrs = malloc(k * sizeof(*wrs));
	double *b = malloc(n * sizeof(double)), *si = malloc(n * sizeof(double));
	double *d = malloc(n * sizeof(double)), *w = malloc(n * sizeof(double));
	dmr_status_t st = DMR_OK;
	if (!wrs || !b || !si || !d || !w) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
		goto out;
	}
	db_wrs(c, wrs, k);
	dmr_be_t *be = c->s.be;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t t0 = dmr_be_now(be, 0);
		st = dmr_be_post(be, 0, 0, wrs, k, err);
		uint64_t t1 = dmr_be_now(be, 0);
		if (st != DMR_OK || (st = wait_wcs(&c->s, 0, k, err)) != DMR_OK)
			goto out;
		uint64_t t2 = dmr_be_now(be, 0);
		for (uint32_t i = 0; i < k && st == DMR_OK; i++)
			st = dmr_be_post(be, 0, 0, &wrs[i], 1, err);
		uint64_t t3 = dmr_be_now(be, 0);
		if (st != DMR_OK || (st = wait_wcs(&c->s, 0, k, err)) != DMR_OK)
			goto out;
		b[r] = (double)(t1 - t0) / 1e3 - c->clock_ns;
		si[r] = (double)(t3 - t2) / 1e3 - c->clock_ns;
		/* batch = D + k W, singles = k (D + W) */
		d[r] = (si[r] - b[r]) / (k - 1);
		w[r] = (b[r] - d[r]) / k;
	}
	summ_make(&c->db_batch, b, n);
	summ_make(&c->db_single, si, n);
	summ_make(&c->db_doorbell, d, n);
	summ_make(&c->db_wqe, w, n);
out:
	free(wrs);
	free(b);
	free(si);
	free(d);
	free(w);
	return st;
}

/*
 * Software NIC: 16 8 B READs (the last signaled) in one doorbell against
 * 16 single posts, from the first post to the completion, median of
 * db_reps. On rxe a READ's responder is deferred and runs once for the
 * requests queued together, so a batch saves more than the doorbells:
 * (singles - batch) / 15 - post_doorbell is the CPU per doorbell that
 * carries READs (host_read_post_ns, a part of host_read_ns).
 */
static dmr_status_t measure_read_batch(cal_t *c, dmr_err_t *err)
{
	enum { K = 16 };
	uint32_t n = c->o.db_reps / 2 ? c->o.db_reps / 2 : 1;
	dmr_wr_t wrs[K];
	double *b = malloc(n * sizeof(double)), *si = malloc(n * sizeof(double));
	dmr_status_t st = DMR_OK;
	if (!b || !si) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < K; i++)
		wrs[i] = (dmr_wr_t){.wr_id = i,
				    .local = c->s.local[0] + 64 * i,
				    .remote = 64 * i,
				    .length = 8,
				    .opcode = DMR_WR_READ,
				    .flags = i + 1 == K ? DMR_WR_SIGNALED : 0};
	dmr_be_t *be = c->s.be;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t t0 = dmr_be_now(be, 0);
		st = dmr_be_post(be, 0, 0, wrs, K, err);
		if (st != DMR_OK || (st = wait_wcs(&c->s, 0, 1, err)) != DMR_OK)
			goto out;
		uint64_t t1 = dmr_be_now(be, 0);
		for (uint32_t i = 0; i < K && st == DMR_OK; i++)
			st = dmr_be_post(be, 0, 0, &wrs[i], 1, err);
		if (st != DMR_OK || (st = wait_wcs(&c->s, 0, 1, err)) != DMR_OK)
			goto out;
		uint64_t t2 = dmr_be_now(be, 0);
		b[r] = (double)(t1 - t0) / 1e3 - c->clock_ns;
		si[r] = (double)(t2 - t1) / 1e3 - c->clock_ns;
	}
	summ_make(&c->rd_batch, b, n);
	summ_make(&c->rd_single, si, n);
out:
	free(b);
	free(si);
	return st;
}

static dmr_status_t measure_poll(cal_t *c, dmr_err_t *err)
{
	uint32_t n = c->o.poll_reps, got = 0;
	double *one = malloc(n * sizeof(double)), *empty = malloc(n * sizeof(double));
	dmr_status_t st = DMR_OK;
	if (!one || !empty) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "calibrate: out of memory");
		goto out;
	}
	dmr_be_t *be = c->s.be;
	dmr_wr_t wr;
	db_wrs(c, &wr, 1);
	/* threaded: wait ten 8 B WRITE round trips (at least 20 us) before the
	 * timed poll, so that the completion is there */
	uint64_t settle = (uint64_t)(10 * c->lat[1][0].value * 1e3);
	if (settle < 20 * DMR_PS_PER_US)
		settle = 20 * DMR_PS_PER_US;
	dmr_wc_t wc;
	c->poll_late = 0;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t t0 = dmr_be_now(be, 0);
		int k = dmr_be_poll(be, 0, &wc, 1);
		uint64_t t1 = dmr_be_now(be, 0);
		if (k != 0) {
			st = dmr_err_set(err, DMR_ERR_REMOTE,
					 "calibrate: unexpected completion "
					 "(wr_id %" PRIu64 ") on an idle QP",
					 wc.wr_id);
			goto out;
		}
		empty[r] = (double)(t1 - t0) / 1e3 - c->clock_ns;
		if ((st = dmr_be_post(be, 0, 0, &wr, 1, err)) != DMR_OK)
			goto out;
		if (c->s.driven) {
			int x = dmr_be_progress(be, UINT64_MAX);
			if (x != 0) {
				st = dmr_err_set(err, DMR_ERR_TIMEOUT,
						 "calibrate: poll test: progress returned %d", x);
				goto out;
			}
		} else {
			uint64_t tp = dmr_be_now(be, 0);
			while (dmr_be_now(be, 0) - tp < settle)
				;
		}
		t0 = dmr_be_now(be, 0);
		k = dmr_be_poll(be, 0, &wc, 1);
		t1 = dmr_be_now(be, 0);
		if (k == 1) {
			if (wc.status != DMR_WC_SUCCESS) {
				st = dmr_err_set(err, DMR_ERR_REMOTE,
						 "calibrate: WRITE completed with status %s",
						 dmr_wc_status_string(wc.status));
				goto out;
			}
			one[got++] = (double)(t1 - t0) / 1e3 - c->clock_ns;
		} else {
			c->poll_late++;
			if ((st = wait_wcs(&c->s, 0, 1, err)) != DMR_OK)
				goto out;
		}
	}
	if (got == 0) {
		st = dmr_err_set(err, DMR_ERR_TIMEOUT,
				 "calibrate: poll test: no completion had arrived after %.1f us in "
				 "%u tries",
				 settle / 1e6, n);
		goto out;
	}
	summ_make(&c->poll_one, one, got);
	summ_make(&c->poll_empty, empty, n);
out:
	free(one);
	free(empty);
	return st;
}

/* ---- software NIC: host CPU per WR ----------------------------------------- */

static void read_line(const char *path, char *buf, size_t len);

/* CPU time per WR, ns, of a one-QP run at rate Mpps (one thread, so with
 * a software NIC everything of the WR runs on that thread's CPU). */
static double ns_per_wr(double mpps)
{
	return mpps > 0 ? 1e3 / mpps : NAN;
}

static double nonneg(double x)
{
	return isfinite(x) && x > 0 ? x : 0;
}

/*
 * Fit the software NIC's CPU costs (docs/CALIBRATION.md "Software NIC"):
 * with one worker thread at depth 16 the CPU of that thread does all the
 * work of every WR (rxe: requester in the post, responder and completer as
 * tasklets on the same CPU), so 1 / rate = post (D + W) + poll P + the NIC's
 * work. Per byte from the 64 KiB and the 8 B READ stream; per WR by opcode
 * from the 8 B READ, WRITE and CAS streams. D, W, P are the values the
 * profile gets (copied from the base when the measurement was not
 * positive). refine_host then splits off host_switch_ns.
 */
static void fit_host(cal_t *c, double D, double W, double P)
{
	double t8 = ns_per_wr(c->rate[CAL_NDEPTHS - 1].value);
	double t64 = c->bw[0].value > 0 ? CAL_BW_SIZE * 8.0 / c->bw[0].value : NAN;
	c->h_byte = nonneg((t64 - t8) / (CAL_BW_SIZE - 8));
	c->h_read_fit = nonneg(t8 - (D + W) - P - 8 * c->h_byte);
	c->h_read = c->h_read_fit;
	c->h_write = nonneg(ns_per_wr(c->rate_w.value) - (D + W) - P - 8 * c->h_byte);
	c->h_atomic = nonneg(ns_per_wr(c->rate_cas.value) - (D + W) - P);
	uint32_t par = c->host_cpus < c->o.qps ? c->host_cpus : c->o.qps;
	c->cpu_bound_mops = par * c->rate_cas.value;
}

/* Software NIC: is a multi-QP atomic rate the host CPUs' bound rather than
 * the atomic unit's? (within 20 % of min(host_cpus, qps) x the one-QP CAS
 * rate, or above it: on rxe in the VM 4 QPs on 2 CPUs ran CAS at 80-82 %
 * of twice the one-QP rate, on one address and on distinct ones alike; a
 * unit rate that close to the CPUs' cannot be reproduced by the model,
 * whose CPU and address servers together stay ~3 % below the smaller of
 * the two bounds) */
static int atomic_cpu_bound(const cal_t *c, double mops)
{
	return c->host_cpus && c->cpu_bound_mops > 0 && mops >= 0.80 * c->cpu_bound_mops;
}

/* host_cpus for a backend: sim, the running profile's; verbs, the online
 * CPUs when the device is a software NIC (sysfs `parent`: rxe and siw name
 * the netdev they run on; a hardware HCA has none), else 0; shm 0;
 * --host-cpus N overrides. */
static void detect_host_cpus(cal_t *c)
{
	c->host_cpus = 0;
	snprintf(c->host_cpus_src, sizeof(c->host_cpus_src), "hardware NIC");
	if (c->o.host_cpus >= 0) {
		c->host_cpus = (uint32_t)c->o.host_cpus;
		snprintf(c->host_cpus_src, sizeof(c->host_cpus_src), "--host-cpus %d",
			 c->o.host_cpus);
		return;
	}
	const dmr_model_t *sm = c->s.driven ? dmr_sim_model(c->s.be) : NULL;
	if (sm) {
		c->host_cpus = sm->host_cpus;
		snprintf(c->host_cpus_src, sizeof(c->host_cpus_src),
			 "host_cpus of the sim run (profile %s)", sm->name);
		return;
	}
#ifdef DMR_HAVE_VERBS
	if (strcmp(c->o.t.backend, "verbs") == 0) {
		dmr_verbs_info_t vi;
		dmr_verbs_info(c->s.be, &vi);
		char p[300], parent[64];
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/parent", vi.device);
		read_line(p, parent, sizeof(parent));
		int sw = parent[0] || strncmp(vi.device, "rxe", 3) == 0 ||
			 strncmp(vi.device, "siw", 3) == 0;
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		if (sw && n > 0) {
			c->host_cpus = (uint32_t)n;
			snprintf(c->host_cpus_src, sizeof(c->host_cpus_src),
				 "software NIC %.40s on %.40s (sysfs parent): its work is CPU time "
				 "of this host; online CPUs (sysconf _SC_NPROCESSORS_ONLN)",
				 vi.device, parent[0] ? parent : "?");
		}
	}
#endif
}

/* ---- printing ------------------------------------------------------------ */

static void print_summ(const cal_t *c, const char *label, const summ_t *s, const char *unit,
		       int prec)
{
	char cut[64] = "";
	if (s->done && !c->s.driven && c->o.max_s > 0) {
		uint64_t lo = UINT64_MAX;
		for (uint32_t i = 0; i < s->n; i++)
			lo = s->done[i] < lo ? s->done[i] : lo;
		snprintf(cut, sizeof(cut), ", >= %" PRIu64 " WRs", lo);
	}
	printf("  %-34s %10.*f %-7s (stdev %.*f, min %.*f, max %.*f, %u reps%s)\n", label, prec,
	       s->value, unit, prec, s->stdev, prec, s->min, prec, s->max, s->n, cut);
}

static void print_results(const cal_t *c)
{
	if (!c->s.driven && c->o.max_s > 0)
		printf("(each run stops posting %.2f s after its first post, --max-run-s; the WRs "
		       "completed are given per line and in the profile's iterations_done)\n",
		       c->o.max_s);
	static const char *const opn[2] = {"READ", "WRITE"};
	for (int o = 0; o < 2; o++) {
		printf("%s latency vs size (depth 1; t_typical, median of %u x %" PRIu64
		       " iterations):\n",
		       opn[o], c->o.reps, c->o.lat_iters);
		printf("     bytes  t_typical[ns]     stdev       min       max   t_avg[ns]  "
		       "99%%[ns]   fit[ns]\n");
		for (int k = 0; k < CAL_NSIZES; k++) {
			const summ_t *s = &c->lat[o][k];
			printf("  %8u  %13.1f %9.1f %9.1f %9.1f %11.1f %9.1f %9.1f\n", c->sizes[k],
			       s->value, s->stdev, s->min, s->max, c->lat_avg[o][k].value,
			       c->lat_p99[o][k].value, c->fit_c[o] + c->fit_m[o] * c->sizes[k]);
		}
		printf("  fit: latency = %.1f ns + %.5f ns/B x bytes (std. errors %.1f, %.5f; "
		       "residual rms %.1f ns)\n",
		       c->fit_c[o], c->fit_m[o], sqrt(c->fit_cov00[o]), sqrt(c->fit_cov11[o]),
		       sqrt(c->fit_sumsq[o] / CAL_NSIZES));
	}
	printf("Bandwidth, 64 KiB, %u outstanding, %" PRIu64 " iterations:\n", CAL_BW_DEPTH,
	       c->o.bw_iters);
	print_summ(c, "READ  BW average", &c->bw[0], "Gb/s", 2);
	print_summ(c, "READ  BW peak", &c->bw_peak[0], "Gb/s", 2);
	print_summ(c, "WRITE BW average", &c->bw[1], "Gb/s", 2);
	print_summ(c, "WRITE BW peak", &c->bw_peak[1], "Gb/s", 2);
	printf("8 B READ message rate vs outstanding depth (%" PRIu64 " iterations):\n",
	       c->o.rate_iters);
	for (int k = 0; k < CAL_NDEPTHS; k++) {
		char l[40];
		snprintf(l, sizeof(l), "depth %2u", cal_depths[k]);
		print_summ(c, l, &c->rate[k], "Mpps", 3);
	}
	printf("8 B WRITE and CAS message rate at depth %u, one QP:\n", cal_depths[CAL_NDEPTHS - 1]);
	print_summ(c, "WRITE", &c->rate_w, "Mpps", 3);
	print_summ(c, "CAS distinct addresses", &c->rate_cas, "Mpps", 3);
	printf("Atomics, %u QPs x %u outstanding, %" PRIu64 " per QP:\n", c->o.qps,
	       CAL_ATOMIC_DEPTH, c->o.atomic_iters);
	print_summ(c, "CAS distinct addresses", &c->atom[0][0], "Mops/s", 3);
	print_summ(c, "CAS one address", &c->atom[0][1], "Mops/s", 3);
	print_summ(c, "FAA distinct addresses", &c->atom[1][0], "Mops/s", 3);
	print_summ(c, "FAA one address", &c->atom[1][1], "Mops/s", 3);
	printf("Doorbell: one post of %u 8 B WRITEs vs %u single posts (CPU time of the posts, "
	       "clock cost %.1f ns subtracted):\n",
	       c->o.batch, c->o.batch, c->clock_ns);
	print_summ(c, "batch of k", &c->db_batch, "ns", 1);
	print_summ(c, "k single posts", &c->db_single, "ns", 1);
	print_summ(c, "per doorbell", &c->db_doorbell, "ns", 1);
	print_summ(c, "per WQE", &c->db_wqe, "ns", 1);
	printf("Poll:\n");
	print_summ(c, "poll returning one completion", &c->poll_one, "ns", 1);
	print_summ(c, "empty poll", &c->poll_empty, "ns", 1);
	if (c->poll_late)
		printf("  (%u of %u polls found no completion yet: left out)\n", c->poll_late,
		       c->o.poll_reps);
	if (c->host_cpus) {
		printf("Software NIC: %u host CPUs (%s); CPU per WR beyond post and poll,\n"
		       "from the one-QP depth-%u streams:\n",
		       c->host_cpus, c->host_cpus_src, cal_depths[CAL_NDEPTHS - 1]);
		printf("  %-34s %10.1f ns\n", "READ", c->h_read);
		printf("  %-34s %10.1f ns\n", "READ finding its CPU busy", c->h_switch);
		printf("  %-34s %10.1f ns  (16 READs: %.1f ns in one doorbell, %.1f ns single)\n",
		       "of READ: per doorbell", c->h_read_post, c->rd_batch.value,
		       c->rd_single.value);
		printf("  %-34s %10.1f ns\n", "WRITE", c->h_write);
		printf("  %-34s %10.1f ns\n", "CAS/FAA", c->h_atomic);
		printf("  %-34s %10.3f ns/B\n", "per payload byte", c->h_byte);
	}
	if (c->eng_have) {
		printf("Replay engine CPU on shm (1 x 1; per attempt: ns, operations, completions, "
		       "fit error; %.1f ns per clock read):\n",
		       c->eng_clock_ns);
		for (uint32_t i = 0; i < c->eng_n; i++)
			printf("  %-12s %10.1f ns %7.1f ops %5.2f completions  %+6.1f %%\n",
			       c->eng_trace[i], c->eng_t[i], c->eng_ops[i], c->eng_db[i],
			       100 * c->eng_resid[i]);
		printf("  %-34s %10.1f ns\n", "per transaction (txn_begin)", c->eng_begin);
		printf("  %-34s %10.1f ns\n", "per operation (txn_op)", c->eng_op);
		printf("  %-34s %10.1f ns\n", "per completion (txn_logic)", c->eng_logic);
	}
}

/* ---- the profile ---------------------------------------------------------- */

static json_t *jreal(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *summ_json(const summ_t *s)
{
	json_t *reps = json_array();
	for (uint32_t i = 0; i < s->n; i++)
		json_array_append_new(reps, jreal(s->reps[i]));
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:i, s:o}", "value", jreal(s->value),
			      "mean", jreal(s->mean), "stdev", jreal(s->stdev), "min",
			      jreal(s->min), "max", jreal(s->max), "n", (int)s->n, "reps", reps);
	if (j && s->done) {
		json_t *d = json_array();
		for (uint32_t i = 0; i < s->n; i++)
			json_array_append_new(d, json_integer((json_int_t)s->done[i]));
		json_object_set_new(j, "iterations_done", d);
	}
	return j;
}

static json_t *spread_json(const summ_t *s)
{
	return json_pack("{s:o, s:o, s:o, s:i}", "stdev", jreal(s->stdev), "min", jreal(s->min),
			 "max", jreal(s->max), "reps", (int)s->n);
}

/* The parameters of models/model.c, in profile order; `unit` for copies of
 * bare numbers. nic_proc_ns and dma_gbps are derived by the loader. */
static const struct {
	const char *name, *unit;
	int integer;
} cal_params[] = {
    {"link_gbps", "Gb/s", 0},
    {"mtu", "bytes", 1},
    {"prop_ns", "ns", 0},
    {"switch_ns", "ns", 0},
    {"post_doorbell_ns", "ns", 0},
    {"post_wqe_ns", "ns", 0},
    {"poll_ns", "ns", 0},
    {"txn_logic_ns", "ns", 0},
    {"txn_begin_ns", "ns", 0}, /* optional: absent in hardware profiles */
    {"txn_op_ns", "ns", 0},
    {"nic_msg_mops", "Mmsg/s", 0},
    {"qp_max_rd_atomic", "WRs", 1},
    {"dma_read_ns", "ns", 0},
    {"dma_write_ns", "ns", 0},
    {"atomic_addr_mops", "Mops/s", 0},
    {"atomic_global_mops", "Mops/s", 0},
    {"read_rtt_ns", "ns", 0},
    {"read_bw_64k_gbps", "Gb/s", 0},
    /* software NIC only (host_cpus > 0); left out for a hardware NIC */
    {"host_cpus", "CPUs", 1},
    {"host_read_ns", "ns", 0},
    {"host_write_ns", "ns", 0},
    {"host_atomic_ns", "ns", 0},
    {"host_byte_ns", "ns/B", 0},
    {"host_switch_ns", "ns", 0},
    {"host_read_post_ns", "ns", 0},
};

static int is_host_param(const char *nm)
{
	return strncmp(nm, "host_", 5) == 0;
}

/* On a software NIC over loopback (the calibration's MN is in this process,
 * on the same device) there is no cable, switch or PCIe DMA: the copies are
 * host CPU time (host_byte_ns). */
static int is_loopback_latency(const char *nm)
{
	return strcmp(nm, "prop_ns") == 0 || strcmp(nm, "switch_ns") == 0 ||
	       strcmp(nm, "dma_read_ns") == 0 || strcmp(nm, "dma_write_ns") == 0;
}

typedef struct meas {
	int have;
	double value;
	const summ_t *spread; /* NULL: not a repeated measurement */
	char source[600];
} meas_t;

static json_t *param_json(double value, int integer, const char *unit, int estimate,
			  const char *source)
{
	json_t *p = json_object();
	json_object_set_new(p, "value",
			    integer ? json_integer((json_int_t)llround(value)) : json_real(value));
	json_object_set_new(p, "unit", json_string(unit));
	json_object_set_new(p, "estimate", json_boolean(estimate));
	json_object_set_new(p, "source", json_string(source));
	return p;
}

static void read_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static json_t *measured_json(const cal_t *c)
{
	static const char *const opn[2] = {"read", "write"};
	json_t *m = json_object();
	char key[64];
	for (int o = 0; o < 2; o++) {
		json_t *sz = json_array(), *pts = json_array();
		for (int k = 0; k < CAL_NSIZES; k++) {
			json_array_append_new(sz, json_integer(c->sizes[k]));
			json_array_append_new(
			    pts, json_pack("{s:i, s:o, s:o, s:o}", "bytes", (int)c->sizes[k],
					   "t_typical_ns", summ_json(&c->lat[o][k]), "t_avg_ns",
					   summ_json(&c->lat_avg[o][k]), "t_p99_ns",
					   summ_json(&c->lat_p99[o][k])));
		}
		json_t *fit = json_pack(
		    "{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "model",
		    "latency_ns = c_ns + m_ns_per_byte x bytes (gsl_fit_linear over the t_typical "
		    "medians)",
		    "c_ns", jreal(c->fit_c[o]), "m_ns_per_byte", jreal(c->fit_m[o]), "c_stderr_ns",
		    jreal(sqrt(c->fit_cov00[o])), "m_stderr_ns_per_byte",
		    jreal(sqrt(c->fit_cov11[o])), "residual_sumsq_ns2", jreal(c->fit_sumsq[o]),
		    "residual_rms_ns", jreal(sqrt(c->fit_sumsq[o] / CAL_NSIZES)));
		snprintf(key, sizeof(key), "%s_latency_vs_size", opn[o]);
		json_object_set_new(m, key,
				    json_pack("{s:s, s:i, s:i, s:i, s:o, s:o, s:o}", "method",
					      "perftest _lat statistics, depth 1, one QP",
					      "iterations", (int)c->o.lat_iters, "repetitions",
					      (int)c->o.reps, "depth", 1, "sizes", sz, "points",
					      pts, "fit", fit));
		snprintf(key, sizeof(key), "%s_bw_64k", opn[o]);
		json_object_set_new(m, key,
				    json_pack("{s:i, s:i, s:i, s:i, s:s, s:o, s:o}", "bytes",
					      (int)CAL_BW_SIZE, "depth", (int)CAL_BW_DEPTH,
					      "iterations", (int)c->o.bw_iters, "qps", 1, "unit",
					      "Gb/s", "bw_average", summ_json(&c->bw[o]), "bw_peak",
					      summ_json(&c->bw_peak[o])));
	}
	json_t *dep = json_array(), *rates = json_array();
	for (int k = 0; k < CAL_NDEPTHS; k++) {
		json_array_append_new(dep, json_integer(cal_depths[k]));
		json_array_append_new(rates, summ_json(&c->rate[k]));
	}
	json_object_set_new(m, "read_8b_rate_vs_depth",
			    json_pack("{s:i, s:i, s:s, s:o, s:o}", "bytes", 8, "iterations",
				      (int)c->o.rate_iters, "unit", "Mpps", "depths", dep,
				      "msg_rate", rates));
	json_object_set_new(
	    m, "atomics",
	    json_pack("{s:i, s:i, s:i, s:s, s:s, s:o, s:o, s:o, s:o}", "qps", (int)c->o.qps,
		      "depth", (int)CAL_ATOMIC_DEPTH, "iterations_per_qp", (int)c->o.atomic_iters,
		      "unit", "Mops/s", "addresses",
		      "distinct: 512 8-byte words per QP, cycled; same: one word for all QPs",
		      "cas_distinct", summ_json(&c->atom[0][0]), "cas_same",
		      summ_json(&c->atom[0][1]), "faa_distinct", summ_json(&c->atom[1][0]),
		      "faa_same", summ_json(&c->atom[1][1])));
	json_object_set_new(
	    m, "doorbell",
	    json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "k", (int)c->o.batch, "unit",
		      "ns", "method",
		      "CPU time (dmr_be_now around the posts) of one post of k "
		      "8 B WRITEs and of k single posts; batch = D + k W, singles = "
		      "k (D + W)",
		      "clock_cost_ns", jreal(c->clock_ns), "batch_of_k", summ_json(&c->db_batch),
		      "k_singles", summ_json(&c->db_single), "per_doorbell",
		      summ_json(&c->db_doorbell), "per_wqe", summ_json(&c->db_wqe)));
	json_object_set_new(
	    m, "rate_8b_depth16",
	    json_pack("{s:s, s:i, s:i, s:i, s:s, s:o, s:o}", "method",
		      "bench 8 B WRITE and CAS (distinct addresses) streams, one QP, signaled, "
		      "one WR per post",
		      "bytes", 8, "depth", (int)cal_depths[CAL_NDEPTHS - 1], "iterations",
		      (int)c->o.rate_iters, "unit", "Mpps", "write", summ_json(&c->rate_w), "cas",
		      summ_json(&c->rate_cas)));
	json_object_set_new(
	    m, "software_nic",
	    json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "host_cpus",
		      (int)c->host_cpus, "host_cpus_source", c->host_cpus_src, "method",
		      "one QP at depth 16: 1 / rate = post_doorbell + post_wqe + poll + NIC CPU "
		      "per WR (+ bytes x host_byte); host_byte from the 64 KiB against the 8 B "
		      "READ stream; refined by running the same streams on the sim with the "
		      "profile; what of the READ stream's CPU time does not fit in the idle "
		      "READ (read_rtt_ns) is host_switch_ns, paid by READs that find "
		      "their CPU busy",
		      "host_read_ns_fit", jreal(c->h_read_fit), "host_read_ns", jreal(c->h_read),
		      "host_write_ns", jreal(c->h_write), "host_atomic_ns", jreal(c->h_atomic),
		      "host_byte_ns", jreal(c->h_byte), "host_switch_ns", jreal(c->h_switch),
		      "applied",
		      json_boolean(c->host_cpus > 0)));
	if (c->eng_have) {
		json_t *runs = json_array();
		for (uint32_t i = 0; i < c->eng_n; i++)
			json_array_append_new(
			    runs, json_pack("{s:s, s:o, s:o, s:o, s:o}", "trace", c->eng_trace[i],
					    "ns_per_attempt", jreal(c->eng_t[i]), "ops_per_txn",
					    jreal(c->eng_ops[i]), "completions_per_attempt",
					    jreal(c->eng_db[i]), "fit_rel_error", jreal(c->eng_resid[i])));
		json_object_set_new(
		    m, "engine",
		    json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "applied",
			      "no: information (docs/fidelity.md, Reading: charged, it takes TPC-C "
			      "to -40 % while SmallBank and YCSB-A meet; the profile's txn_begin_ns "
			      "and txn_op_ns stay absent)",
			      "method",
			      "the replay engine on the shm backend, 1 worker x 1 context, "
			      "generated traces; loop wall time per attempt minus shm's clock reads "
			      "(2 per completion, clock_ns each, less the verbs clock) = txn_begin + "
			      "txn_op x operations + txn_logic x completions, least squares",
			      "clock_ns", jreal(c->eng_clock_ns), "runs", runs, "txn_begin_ns",
			      jreal(c->eng_begin), "txn_op_ns", jreal(c->eng_op), "txn_logic_ns",
			      jreal(c->eng_logic)));
	}
	json_object_set_new(
	    m, "poll",
	    json_pack("{s:s, s:s, s:o, s:o, s:i}", "unit", "ns", "method",
		      "dmr_be_now around a poll that returns one completion already "
		      "delivered (sim: progress() returned the worker; threaded: after "
		      "ten WRITE round trips), and around an empty poll",
		      "one_completion", summ_json(&c->poll_one), "empty", summ_json(&c->poll_empty),
		      "not_arrived", (int)c->poll_late));
	return m;
}

typedef struct check {
	const char *param;
	double profile, measured;
	int skip;
} check_t;

static int print_checks(const check_t *ck, int n, double tol, const char *against, int verdict)
{
	int fails = 0;
	printf("%-34s %12s %12s %10s %s\n", "parameter", against, "measured", "diff",
	       verdict ? "result" : "");
	for (int i = 0; i < n; i++) {
		double rel = (ck[i].measured - ck[i].profile) / ck[i].profile * 100;
		const char *res = "";
		if (verdict) {
			res = ck[i].skip	 ? "SKIP (MTU overridden)"
			      : fabs(rel) <= tol ? "PASS"
						 : "FAIL";
			fails += !ck[i].skip && !(fabs(rel) <= tol);
		}
		printf("%-34s %12.3f %12.3f %+9.2f %% %s\n", ck[i].param, ck[i].profile,
		       ck[i].measured, rel, res);
	}
	return fails;
}

static dmr_status_t write_profile(cal_t *c, const dmr_model_t *bm, json_t *base_params,
				  const char *path, json_t *checks, dmr_err_t *err)
{
	char src[512], sess[200];
	snprintf(sess, sizeof(sess), "dmreplay calibrate on %s", c->s.desc);
	meas_t me[sizeof(cal_params) / sizeof(cal_params[0])];
	memset(me, 0, sizeof(me));
	const int sim = c->s.driven && dmr_sim_model(c->s.be) != NULL;
	int verbs = strcmp(c->o.t.backend, "verbs") == 0;
	for (size_t i = 0; i < sizeof(cal_params) / sizeof(cal_params[0]); i++) {
		const char *nm = cal_params[i].name;
		meas_t *x = &me[i];
		if (strcmp(nm, "read_rtt_ns") == 0) {
			x->value = c->lat[0][3].value; /* 64 B */
			x->spread = &c->lat[0][3];
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): 64 B READ latency, perftest t_typical, median of "
				 "%u repetitions x %" PRIu64 " iterations at depth 1",
				 sess, c->o.reps, c->o.lat_iters);
		} else if (strcmp(nm, "read_bw_64k_gbps") == 0) {
			x->value = c->bw[0].value;
			x->spread = &c->bw[0];
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): 64 KiB READ BW average, %u outstanding, one QP, "
				 "median of %u repetitions x %" PRIu64 " iterations",
				 sess, CAL_BW_DEPTH, c->o.reps, c->o.bw_iters);
		} else if (strcmp(nm, "atomic_addr_mops") == 0 &&
			   atomic_cpu_bound(c, c->atom[0][1].value)) {
			if (!c->refining && !(c->warned_cpu_bound & 1))
				fprintf(stderr,
					"dmreplay calibrate: CAS on one address %.4f Mops/s is the "
					"host CPUs' rate (%.4f); atomic_addr_mops copied from %s\n",
					c->atom[0][1].value, c->cpu_bound_mops, bm->name);
			if (!c->refining)
				c->warned_cpu_bound |= 1;
			continue;
		} else if (strcmp(nm, "atomic_global_mops") == 0 &&
			   atomic_cpu_bound(c, c->atom[0][0].value)) {
			if (!c->refining && !(c->warned_cpu_bound & 2))
				fprintf(stderr,
					"dmreplay calibrate: CAS on distinct addresses %.4f Mops/s is "
					"the host CPUs' rate (%.4f); atomic_global_mops copied from %s\n",
					c->atom[0][0].value, c->cpu_bound_mops, bm->name);
			if (!c->refining)
				c->warned_cpu_bound |= 2;
			continue;
		} else if (strcmp(nm, "atomic_addr_mops") == 0) {
			x->value = c->atom[0][1].value;
			x->spread = &c->atom[0][1];
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): CAS on one address, %u QPs x %u outstanding, "
				 "median of %u repetitions",
				 sess, c->o.qps, CAL_ATOMIC_DEPTH, c->o.reps);
		} else if (strcmp(nm, "atomic_global_mops") == 0) {
			x->value = c->atom[0][0].value;
			x->spread = &c->atom[0][0];
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): CAS on distinct addresses, %u QPs x %u "
				 "outstanding, median of %u repetitions",
				 sess, c->o.qps, CAL_ATOMIC_DEPTH, c->o.reps);
		} else if (strcmp(nm, "post_doorbell_ns") == 0) {
			x->value = c->db_doorbell.value;
			x->spread = &c->db_doorbell;
			snprintf(
			    x->source, sizeof(x->source),
			    "measured (%s): (k single posts - one post of k) / (k - 1), k = %u, "
			    "median of %u repetitions",
			    sess, c->o.batch, c->o.db_reps);
		} else if (strcmp(nm, "post_wqe_ns") == 0) {
			x->value = c->db_wqe.value;
			x->spread = &c->db_wqe;
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): (one post of k - doorbell) / k, k = %u, median of "
				 "%u repetitions",
				 sess, c->o.batch, c->o.db_reps);
		} else if (strcmp(nm, "poll_ns") == 0) {
			x->value = c->poll_one.value;
			x->spread = &c->poll_one;
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): one poll returning one completion, median of %u",
				 sess, c->poll_one.n);
		} else if (strcmp(nm, "mtu") == 0 && c->s.mtu && (sim || verbs)) {
			x->value = c->s.mtu;
			snprintf(x->source, sizeof(x->source), "%s",
				 sim ? "path MTU of the sim run"
				     : "path MTU of the connection (the smaller active MTU of the "
				       "two ports)");
		} else if (is_host_param(nm)) {
			if (!c->host_cpus)
				continue; /* hardware NIC: left out (= 0) */
			const char *what = "";
			if (strcmp(nm, "host_cpus") == 0) {
				x->value = c->host_cpus;
				snprintf(x->source, sizeof(x->source), "%s", c->host_cpus_src);
				x->have = 1;
				continue;
			} else if (strcmp(nm, "host_read_ns") == 0) {
				/* less the per-doorbell part (not while refining:
				 * the fit runs single-READ streams, which pay both) */
				x->value = c->h_read - (c->refining ? 0 : c->h_read_post);
				x->spread = &c->rate[CAL_NDEPTHS - 1];
				what = "8 B READ stream, less host_read_post_ns";
			} else if (strcmp(nm, "host_read_post_ns") == 0) {
				if (c->refining)
					continue;
				x->value = c->h_read_post;
				x->spread = &c->rd_single;
				snprintf(x->source, sizeof(x->source),
					 "measured (%s): 16 8 B READs in one doorbell against 16 "
					 "single posts (first post to completion, median of %u): "
					 "(singles - batch) / 15 - post_doorbell_ns, a part of the "
					 "READ stream's CPU per READ (spread: of the singles, ns)",
					 sess, c->rd_single.n);
				x->have = 1;
				continue;
			} else if (strcmp(nm, "host_write_ns") == 0) {
				x->value = c->h_write;
				x->spread = &c->rate_w;
				what = "8 B WRITE stream";
			} else if (strcmp(nm, "host_atomic_ns") == 0) {
				x->value = c->h_atomic;
				x->spread = &c->rate_cas;
				what = "8 B CAS stream (distinct addresses)";
			} else if (strcmp(nm, "host_switch_ns") == 0) {
				x->value = c->h_switch;
				x->spread = &c->rate[CAL_NDEPTHS - 1];
				what = "8 B READ stream: the CPU time per READ under load beyond "
				       "what the idle 64 B READ (read_rtt_ns) leaves for host_read_ns";
			} else {
				x->value = c->h_byte;
				x->spread = &c->bw[0];
				what = "64 KiB against 8 B READ stream: (t64k - t8) / (65536 - 8)";
			}
			snprintf(x->source, sizeof(x->source),
				 "fitted (%s): %s, one QP at depth %u, median of %u repetitions; "
				 "1 / rate - post_doorbell - post_wqe - poll, refined on the sim "
				 "(spread: of the rate)",
				 sess, what, cal_depths[CAL_NDEPTHS - 1], c->o.reps);
			x->have = 1; /* 0 is a legal value here */
			continue;
		} else if (c->host_cpus && is_loopback_latency(nm) && !sim) {
			x->value = 0;
			snprintf(x->source, sizeof(x->source),
				 "0: software NIC over loopback (%s; the MN is in the calibrating "
				 "process on the same device): no cable, switch or PCIe DMA, the "
				 "copies are host CPU time (host_byte_ns)",
				 c->host_cpus_src);
			x->have = 1;
			continue;
		} else if (strcmp(nm, "qp_max_rd_atomic") == 0 && sim) {
			x->value = dmr_sim_model(c->s.be)->qp_max_rd_atomic;
			snprintf(x->source, sizeof(x->source),
				 "qp_max_rd_atomic of the sim run (profile %s)", c->profile_name);
		} else {
#ifdef DMR_HAVE_VERBS
			if (strcmp(nm, "qp_max_rd_atomic") == 0 && verbs) {
				dmr_verbs_info_t vi;
				dmr_verbs_info(c->s.be, &vi);
				x->value = vi.max_rd_atomic;
				snprintf(x->source, sizeof(x->source),
					 "max_rd_atomic used by the verbs backend on %s "
					 "(device limit, ibv_query_device)",
					 vi.device);
				x->have = x->value > 0;
			}
			if (strcmp(nm, "link_gbps") == 0 && verbs) {
				/* the port's rate as the device reports it; used only when
				 * the measured READ bandwidth fits under it (rxe reports
				 * its netdev's nominal speed, which it does not enforce) */
				dmr_verbs_info_t vi;
				dmr_verbs_info(c->s.be, &vi);
				char p[300], line[128];
				snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate",
					 vi.device, vi.port);
				read_line(p, line, sizeof(line));
				double g = line[0] ? strtod(line, NULL) : 0;
				if (g > 0 && g >= c->bw[0].value) {
					x->value = g;
					snprintf(x->source, sizeof(x->source),
						 "port rate of %.63s port %d (sysfs ports/%d/rate: "
						 "\"%.100s\")",
						 vi.device, vi.port, vi.port, line);
					x->have = 1;
				}
			}
#endif
			continue;
		}
		x->have = isfinite(x->value) && x->value > 0;
		if (!x->have && x->spread)
			fprintf(stderr,
				"dmreplay calibrate: %s measured %.3f (not positive: below "
				"the clock's resolution?); copied from %s instead\n",
				nm, x->value, bm->name);
	}

	json_t *root = json_object(), *params = json_object();
	char name[96], date[32], desc[1024];
	if (c->o.name)
		snprintf(name, sizeof(name), "%s", c->o.name);
	else if (sim)
		snprintf(name, sizeof(name), "calibrated-sim-%s", c->profile_name);
	else if (c->o.t.device)
		snprintf(name, sizeof(name), "calibrated-%s-%s", c->o.t.backend, c->o.t.device);
	else
		snprintf(name, sizeof(name), "calibrated-%s", c->o.t.backend);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(desc, sizeof(desc),
		 "Measured by `dmreplay calibrate` on %s, %s. Values with estimate=false were "
		 "measured (or read from the device); estimate=true values were copied from "
		 "the base profile %s because they cannot be measured from a compute node. "
		 "nic_proc_ns and dma_gbps are derived by the loader from read_rtt_ns and "
		 "read_bw_64k_gbps. docs/CALIBRATION.md explains every field.",
		 c->s.desc, date, bm->name);
	json_object_set_new(root, "name", json_string(name));
	json_object_set_new(root, "description", json_string(desc));
	json_object_set_new(root, "date", json_string(date));

	/* device and link */
	json_t *dev = json_object(), *link = json_object();
	json_object_set_new(dev, "backend", json_string(c->o.t.backend));
	json_object_set_new(dev, "description", json_string(c->s.desc));
	json_object_set_new(link, "mtu", c->s.mtu ? json_integer(c->s.mtu) : json_null());
	if (sim) {
		const dmr_model_t *sm = dmr_sim_model(c->s.be);
		json_object_set_new(dev, "name", json_string("sim"));
		json_object_set_new(dev, "profile", json_string(sm->name));
		json_object_set_new(dev, "profile_path", json_string(sm->path));
		json_object_set_new(dev, "firmware", json_null());
		json_object_set_new(link, "rate_gbps", jreal(sm->link_gbps));
	} else {
		json_object_set_new(dev, "name", json_string(c->o.t.backend));
		json_object_set_new(dev, "firmware", json_null());
		json_object_set_new(link, "rate", json_null());
#ifdef DMR_HAVE_VERBS
		if (verbs) {
			dmr_verbs_info_t vi;
			dmr_verbs_info(c->s.be, &vi);
			char p[300], line[128];
			json_object_set_new(dev, "name", json_string(vi.device));
			json_object_set_new(dev, "port", json_integer(vi.port));
			json_object_set_new(dev, "gid_index", json_integer(vi.gid_index));
			json_object_set_new(dev, "ip", json_string(vi.ip));
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/fw_ver", vi.device);
			read_line(p, line, sizeof(line));
			json_object_set_new(dev, "firmware",
					    line[0] ? json_string(line) : json_null());
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/hca_type", vi.device);
			read_line(p, line, sizeof(line));
			if (line[0])
				json_object_set_new(dev, "hca_type", json_string(line));
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", vi.device,
				 vi.port);
			read_line(p, line, sizeof(line));
			json_object_set_new(link, "rate",
					    line[0] ? json_string(line) : json_null());
			json_object_set_new(link, "max_rd_atomic", json_integer(vi.max_rd_atomic));
			json_object_set_new(link, "sq_depth", json_integer(vi.sq_depth));
		}
#endif
	}
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct utsname un;
	json_object_set_new(dev, "host", json_string(host));
	if (uname(&un) == 0)
		json_object_set_new(dev, "kernel", json_string(un.release));
	json_object_set_new(dev, "link", link);
	json_object_set_new(root, "device", dev);
	json_t *meas = measured_json(c), *copied = json_object();
	json_object_set_new(meas, "base", json_string(bm->name));
	json_object_set_new(meas, "base_path", json_string(bm->path));

	for (size_t i = 0; i < sizeof(cal_params) / sizeof(cal_params[0]); i++) {
		const char *nm = cal_params[i].name;
		if (me[i].have) {
			int est = c->host_cpus && is_loopback_latency(nm) && !sim;
			json_t *p = param_json(me[i].value, cal_params[i].integer,
					       cal_params[i].unit, est, me[i].source);
			if (me[i].spread)
				json_object_set_new(p, "spread", spread_json(me[i].spread));
			json_object_set_new(params, nm, p);
			continue;
		}
		if (is_host_param(nm))
			continue;
		json_t *bp = json_object_get(base_params, nm);
		if (!bp && (strcmp(nm, "txn_begin_ns") == 0 || strcmp(nm, "txn_op_ns") == 0))
			continue; /* optional, absent in the base: not modelled */
		json_t *bv = json_is_object(bp) ? json_object_get(bp, "value") : bp;
		if (!json_is_number(bv)) {
			json_decref(root);
			json_decref(params);
			json_decref(meas);
			json_decref(copied);
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "base profile %s: parameter %s has no value to copy",
					   bm->path, nm);
		}
		const char *unit = json_string_value(json_object_get(bp, "unit"));
		snprintf(src, sizeof(src), "copied from %s: not measurable from the CN", bm->name);
		json_t *p = param_json(json_number_value(bv), cal_params[i].integer,
				       unit ? unit : cal_params[i].unit, 1, src);
		/* the base's own provenance, kept beside (the loader allows only
		 * value, unit, source, estimate, spread in a parameter) */
		json_t *prov = json_object();
		json_t *bs = json_object_get(bp, "source"), *be = json_object_get(bp, "estimate");
		json_object_set_new(prov, "from", json_string(bm->name));
		json_object_set(prov, "source", json_is_string(bs) ? bs : json_null());
		json_object_set(prov, "estimate", json_is_boolean(be) ? be : json_null());
		json_object_set_new(copied, nm, prov);
		json_object_set_new(params, nm, p);
	}
	if (c->refining) /* fit runs: the idle latency does not matter */
		json_object_set_new(params, "nic_proc_ns",
				    param_json(0, 0, "ns", 1, "0 while host_* are fitted"));
	json_object_set_new(root, "params", params);
	json_object_set_new(meas, "copied", copied);
	if (checks)
		json_object_set(meas, "sim_check", checks);
	json_object_set_new(
	    meas, "settings",
	    json_pack("{s:s, s:s?, s:s?, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f}",
		      "backend", c->o.t.backend, "profile", c->o.t.profile, "device", c->o.t.device,
		      "quick", c->o.quick, "repetitions", (int)c->o.reps, "lat_iters",
		      (int)c->o.lat_iters, "bw_iters", (int)c->o.bw_iters, "rate_iters",
		      (int)c->o.rate_iters, "atomic_iters", (int)c->o.atomic_iters, "qps",
		      (int)c->o.qps, "doorbell_k", (int)c->o.batch, "poll_reps",
		      (int)c->o.poll_reps, "max_run_s", c->o.max_s, "wall_s", c->wall_s));
	json_object_set_new(root, "measured", meas);
	int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc != 0)
		return dmr_err_set(err, DMR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	return DMR_OK;
}

/*
 * Software NIC: refine the closed-form fit (fit_host) by running the model.
 * The closed form assumes one poll per WR; under load a poll returns
 * several completions, on the device as in the model. So: write the
 * profile, run the same four one-QP streams on the sim with it (8 B READ,
 * WRITE, CAS and 64 KiB READ at depth 16), and move each host_* by what
 * the sim's time per WR is off from the measured one; a few rounds (the
 * map is close to a shift). The result is the value for which the model
 * runs the streams at the measured rates (refine_resid says how close).
 */
static dmr_status_t refine_host(cal_t *c, const dmr_model_t *bm, json_t *bparams, dmr_err_t *err)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "/tmp/dmr-calibrate-fit-XXXXXX.json");
	int fd = mkstemps(tmp, 5);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "calibrate: temporary file: %s", strerror(errno));
	close(fd);
	double meas[4] = {ns_per_wr(c->rate[CAL_NDEPTHS - 1].value), ns_per_wr(c->rate_w.value),
			  ns_per_wr(c->rate_cas.value),
			  c->bw[0].value > 0 ? CAL_BW_SIZE * 8.0 / c->bw[0].value : NAN};
	static const uint8_t ops[4] = {DMR_WR_READ, DMR_WR_WRITE, DMR_WR_CAS, DMR_WR_READ};
	dmr_status_t st = DMR_OK;
	c->refining = 1;
	for (int it = 0; it < 8 && st == DMR_OK; it++) {
		if ((st = write_profile(c, bm, bparams, tmp, NULL, err)) != DMR_OK)
			break;
		/* the idle READ must fit in read_rtt_ns: what of host_read_ns does
		 * not is CPU time the READ stream spends only under load, on
		 * switches (host_switch_ns, paid by a READ finding its CPU busy) */
		dmr_model_t m0;
		if ((st = dmr_model_load(tmp, &m0, err)) != DMR_OK)
			break;
		int64_t room = (int64_t)llround(m0.read_rtt_ns * 1e3) -
			       (int64_t)dmr_model_read_rtt_rest_ps(&m0, 64);
		if (room < 1) {
			double ex = (double)(1 - room) / 1e3;
			if (ex > c->h_read)
				ex = c->h_read;
			c->h_read -= ex;
			c->h_switch += ex;
			if ((st = write_profile(c, bm, bparams, tmp, NULL, err)) != DMR_OK)
				break;
		}
		dmr_bench_session_t s2;
		dmr_bench_target_t t = {.backend = "sim", .profile = tmp, .gid_index = -1};
		if ((st = dmr_bench_session_open(&s2, &t, 1, c->s.mr_size, c->s.local_len, err)) !=
		    DMR_OK)
			break;
		double sim_t[4];
		for (int k = 0; k < 4 && st == DMR_OK; k++) {
			dmr_bench_spec_t sp = {.opcode = ops[k],
					       .size = k == 3 ? CAL_BW_SIZE : 8,
					       .depth = cal_depths[CAL_NDEPTHS - 1],
					       .iters = k == 3 ? 500 : 2000,
					       .qps = 1};
			dmr_bench_result_t r;
			if ((st = dmr_bench_run(&s2, &sp, &r, err)) == DMR_OK)
				sim_t[k] = ns_per_wr(r.msg_rate_mpps);
		}
		dmr_bench_session_close(&s2);
		if (st != DMR_OK)
			break;
		for (int k = 0; k < 4; k++)
			c->refine_resid[k] = (sim_t[k] - meas[k]) / meas[k];
		c->refine_iters = it + 1;
		double d8 = meas[0] - sim_t[0];
		c->h_read = nonneg(c->h_read + d8);
		c->h_write = nonneg(c->h_write + meas[1] - sim_t[1]);
		c->h_atomic = nonneg(c->h_atomic + meas[2] - sim_t[2]);
		c->h_byte = nonneg(c->h_byte + ((meas[3] - sim_t[3]) - d8) / (CAL_BW_SIZE - 8));
	}
	c->refining = 0;
	/* the last step may have pushed h_read over the idle READ again */
	if (st == DMR_OK && (st = write_profile(c, bm, bparams, tmp, NULL, err)) == DMR_OK) {
		dmr_model_t m0;
		if ((st = dmr_model_load(tmp, &m0, err)) == DMR_OK) {
			int64_t room = (int64_t)llround(m0.read_rtt_ns * 1e3) -
				       (int64_t)dmr_model_read_rtt_rest_ps(&m0, 64);
			if (room < 1) {
				double ex = (double)(1 - room) / 1e3;
				ex = ex > c->h_read ? c->h_read : ex;
				c->h_read -= ex;
				c->h_switch += ex;
			}
		}
	}
	c->h_read_fit = c->h_read;
	unlink(tmp);
	return st;
}

/* ---- command line ------------------------------------------------------- */

static void cal_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay calibrate --backend B [--profile P | --device D] [-o PROFILE.json]\n\n"
	    "Measures latency vs size, 64 KiB bandwidth, 8 B message rate vs depth, atomic\n"
	    "rates, doorbell and poll costs through the backend interface, and writes a\n"
	    "profile that dmr_model_load accepts (docs/CALIBRATION.md). On sim, prints the\n"
	    "measurements beside the profile's values and fails beyond the tolerance.\n\n"
	    "  --backend B       sim (default), verbs (shm is refused: no link to calibrate)\n"
	    "  --profile P       sim: profile to run (default cx6dx-100g)\n"
	    "  --mtu M           sim: path MTU override\n"
	    "  --device D        verbs: device name or index; --port N, --gid-index G\n"
	    "  --base P          profile the unmeasurable parameters are copied from\n"
	    "                    (default: --profile on sim, cx6dx-100g otherwise)\n"
	    "  -o, --output F    write the profile to F (always checked with dmr_model_load)\n"
	    "  --name NAME       profile name (default calibrated-BACKEND-PROFILE|DEVICE)\n"
	    "  --quick           fewer iterations and repetitions (rxe: well under 2 min)\n"
	    "  --reps R          repetitions of every measurement (default 5, quick 3)\n"
	    "  --lat-iters N     iterations per latency point (default 1000, quick 200)\n"
	    "  --bw-iters N      iterations per bandwidth run (default 5000, quick 1000)\n"
	    "  --rate-iters N    iterations per 8 B rate run (default 20000, quick 4000)\n"
	    "  --atomic-iters N  atomics per QP per run (default 20000, quick 4000)\n"
	    "  --qps Q           QPs of the atomic runs (1..64, default 4)\n"
	    "  --batch K         WRs of the doorbell batch (2..64, default 16)\n"
	    "  --max-run-s S     shm/verbs: stop posting S s after a run's first post and\n"
	    "                    finish with what is posted (default 1, quick 0.5; 0 = off)\n"
	    "  --tolerance PCT   sim: allowed relative difference (default 2)\n"
	    "  --host-cpus N     verbs, software NIC: CPUs its work shares with the workers\n"
	    "                    (default: the online CPUs when the device is a software\n"
	    "                    NIC such as rxe, else 0; the sim uses its profile's)\n\n"
	    "-o FILE is written beside FILE and renamed over it only when the profile\n"
	    "loads and the sim's self-check passes; otherwise FILE is left as it was and\n"
	    "the new profile kept as FILE.partial.\n\n"
	    "Exit status: 0 done, 1 a run or a check failed or the profile does not load,\n"
	    "2 bad options (checked, -o included, before anything is measured).\n");
}

static int cal_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+') {
		fprintf(stderr,
			"dmreplay calibrate: option %s: '%s' is not a non-negative integer\n", opt,
			s ? s : "");
		return -1;
	}
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr,
			"dmreplay calibrate: option %s: '%s' is not a non-negative integer\n", opt,
			s);
		return -1;
	}
	if (x < lo || x > hi) {
		fprintf(stderr,
			"dmreplay calibrate: option %s: %llu out of range (%" PRIu64 "..%" PRIu64
			")\n",
			opt, x, lo, hi);
		return -1;
	}
	*v = x;
	return 0;
}

int dmr_calibrate_main(int argc, char **argv)
{
	enum {
		O_BACKEND = 256,
		O_PROFILE,
		O_DEVICE,
		O_PORT,
		O_GID,
		O_MTU,
		O_BASE,
		O_NAME,
		O_QUICK,
		O_REPS,
		O_LAT,
		O_BW,
		O_RATE,
		O_ATOM,
		O_QPS,
		O_BATCH,
		O_TOL,
		O_MAXRUN,
		O_HOSTCPUS,
		O_HELP
	};
	static const struct option opts[] = {
	    {"backend", required_argument, NULL, O_BACKEND},
	    {"profile", required_argument, NULL, O_PROFILE},
	    {"device", required_argument, NULL, O_DEVICE},
	    {"port", required_argument, NULL, O_PORT},
	    {"gid-index", required_argument, NULL, O_GID},
	    {"mtu", required_argument, NULL, O_MTU},
	    {"base", required_argument, NULL, O_BASE},
	    {"output", required_argument, NULL, 'o'},
	    {"name", required_argument, NULL, O_NAME},
	    {"quick", no_argument, NULL, O_QUICK},
	    {"reps", required_argument, NULL, O_REPS},
	    {"lat-iters", required_argument, NULL, O_LAT},
	    {"bw-iters", required_argument, NULL, O_BW},
	    {"rate-iters", required_argument, NULL, O_RATE},
	    {"atomic-iters", required_argument, NULL, O_ATOM},
	    {"qps", required_argument, NULL, O_QPS},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"tolerance", required_argument, NULL, O_TOL},
	    {"max-run-s", required_argument, NULL, O_MAXRUN},
	    {"host-cpus", required_argument, NULL, O_HOSTCPUS},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	cal_t *c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "dmreplay calibrate: out of memory\n");
		return 1;
	}
	cal_opts_t *o = &c->o;
	o->t = (dmr_bench_target_t){.backend = "sim", .gid_index = -1};
	o->qps = 4;
	o->batch = 16;
	o->tol_pct = 2;
	o->host_cpus = -1;
	uint64_t reps = 0, lat = 0, bw = 0, rate = 0, atom = 0, v;
	double max_s = -1;
	int have_profile = 0, have_dev = 0, rc = 2, ch;
	dmr_err_t err;
	json_t *base_root = NULL, *checks_json = NULL;
	char tmp_path[4200] = "";
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (ch) {
		case O_BACKEND:
			o->t.backend = optarg;
			break;
		case O_PROFILE:
			o->t.profile = optarg;
			have_profile = 1;
			break;
		case O_DEVICE:
			o->t.device = optarg;
			have_dev = 1;
			break;
		case O_PORT:
			if (cal_u64("--port", optarg, 1, 255, &v))
				goto out;
			o->t.port = (int)v;
			have_dev = 1;
			break;
		case O_GID:
			if (cal_u64("--gid-index", optarg, 0, 255, &v))
				goto out;
			o->t.gid_index = (int)v;
			have_dev = 1;
			break;
		case O_MTU:
			if (cal_u64("--mtu", optarg, 256, 4096, &v))
				goto out;
			if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096) {
				fprintf(stderr,
					"dmreplay calibrate: option --mtu: %" PRIu64
					" is not an IB MTU (256, 512, 1024, 2048, 4096)\n",
					v);
				goto out;
			}
			o->t.mtu = (uint32_t)v;
			break;
		case O_BASE:
			o->base = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_NAME:
			if (!*optarg || strlen(optarg) >= 64) {
				fprintf(stderr,
					"dmreplay calibrate: option --name: 1..63 characters\n");
				goto out;
			}
			o->name = optarg;
			break;
		case O_QUICK:
			o->quick = 1;
			break;
		case O_REPS:
			if (cal_u64("--reps", optarg, 1, 100, &reps))
				goto out;
			break;
		case O_LAT:
			if (cal_u64("--lat-iters", optarg, 5, 1000000, &lat))
				goto out;
			break;
		case O_BW:
			if (cal_u64("--bw-iters", optarg, 20, 1000000, &bw))
				goto out;
			break;
		case O_RATE:
			if (cal_u64("--rate-iters", optarg, 100, 10000000, &rate))
				goto out;
			break;
		case O_ATOM:
			if (cal_u64("--atomic-iters", optarg, 100, 10000000, &atom))
				goto out;
			break;
		case O_QPS:
			if (cal_u64("--qps", optarg, 1, 64, &v))
				goto out;
			o->qps = (uint32_t)v;
			break;
		case O_BATCH:
			if (cal_u64("--batch", optarg, 2, 64, &v))
				goto out;
			o->batch = (uint32_t)v;
			break;
		case O_HOSTCPUS:
			if (cal_u64("--host-cpus", optarg, 0, 1024, &v))
				goto out;
			o->host_cpus = (int)v;
			break;
		case O_MAXRUN: {
			char *end;
			errno = 0;
			max_s = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(max_s >= 0) || max_s > 3600) {
				fprintf(stderr,
					"dmreplay calibrate: option --max-run-s: '%s' is not a "
					"number of seconds in [0, 3600]\n",
					optarg);
				goto out;
			}
			break;
		}
		case O_TOL: {
			char *end;
			errno = 0;
			o->tol_pct = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(o->tol_pct > 0) ||
			    o->tol_pct > 100) {
				fprintf(stderr,
					"dmreplay calibrate: option --tolerance: '%s' is not a "
					"percentage in (0, 100]\n",
					optarg);
				goto out;
			}
			break;
		}
		case 'h':
		case O_HELP:
			cal_usage(stdout);
			rc = 0;
			goto out;
		case ':':
			fprintf(stderr, "dmreplay calibrate: option %s needs a value\n",
				argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr,
				"dmreplay calibrate: unknown option '%s' (see dmreplay calibrate "
				"--help)\n",
				argv[optind - 1]);
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay calibrate: unexpected argument '%s'\n", argv[optind]);
		goto out;
	}
	if (!dmr_bench_known_backend(o->t.backend)) {
		fprintf(stderr,
			"dmreplay calibrate: option --backend: unknown backend '%s' (known: %s)\n",
			o->t.backend, dmr_be_names());
		goto out;
	}
	int sim = strcmp(o->t.backend, "sim") == 0;
	if (have_profile && !sim) {
		fprintf(stderr,
			"dmreplay calibrate: option --profile: only the sim backend runs a "
			"profile (backend %s; use --base to choose the profile copied from)\n",
			o->t.backend);
		goto out;
	}
	if (have_dev && strcmp(o->t.backend, "verbs") != 0) {
		fprintf(stderr,
			"dmreplay calibrate: option --device/--port/--gid-index: only the "
			"verbs backend has devices (backend %s)\n",
			o->t.backend);
		goto out;
	}
	if (o->t.mtu && !sim) {
		fprintf(stderr,
			"dmreplay calibrate: option --mtu: only the sim's path MTU can be "
			"set (backend %s uses its ports' active MTU)\n",
			o->t.backend);
		goto out;
	}
	if (strcmp(o->t.backend, "shm") == 0) {
		/* shm is the CPU copying memory: no link, wire or NIC; its rates
		 * (hundreds of Gb/s) exceed any copied link and the profile
		 * would not load (docs/CALIBRATION.md) */
		fprintf(stderr,
			"dmreplay calibrate: option --backend: shm has no link or NIC to "
			"calibrate (it is the CPU copying memory); use --backend verbs on an "
			"RDMA device (a software NIC: scripts/rxe-vm), or --backend sim to "
			"check a profile\n");
		goto out;
	}
	if (sim && o->host_cpus >= 0) {
		fprintf(stderr,
			"dmreplay calibrate: option --host-cpus: the sim runs its profile's "
			"host_cpus; to calibrate with another, copy the profile and set "
			"host_cpus in it\n");
		goto out;
	}
	if (o->out) {
		/* checked before measuring: a path, not a directory, in a
		 * directory where a file can be created (a probe file is created
		 * and removed); the profile is written beside it and renamed */
		struct stat sb;
		const char *why = NULL;
		char dir[4096];
		if (!o->out[0])
			why = "empty path";
		else if (strlen(o->out) >= sizeof(dir) - 32)
			why = "path too long";
		else if (o->out[strlen(o->out) - 1] == '/' ||
			 (stat(o->out, &sb) == 0 && S_ISDIR(sb.st_mode)))
			why = "is a directory";
		else if (stat(o->out, &sb) == 0 && !S_ISREG(sb.st_mode))
			why = "exists and is not a regular file";
		if (why) {
			fprintf(stderr, "dmreplay calibrate: option -o: cannot write '%s': %s\n",
				o->out, why);
			goto out;
		}
		snprintf(dir, sizeof(dir), "%s", o->out);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = 0;
		char probe[4200];
		snprintf(probe, sizeof(probe), "%s/.dmr-calibrate-probe-XXXXXX",
			 slash ? dir : ".");
		int fd = mkstemp(probe);
		if (fd < 0) {
			fprintf(stderr,
				"dmreplay calibrate: option -o: cannot write %s: cannot create a "
				"file in %s: %s\n",
				o->out, slash ? dir : ".", strerror(errno));
			goto out;
		}
		close(fd);
		unlink(probe);
	}
	if (sim && !o->t.profile)
		o->t.profile = "cx6dx-100g";
	if (!o->base)
		o->base = sim ? o->t.profile : "cx6dx-100g";
	o->reps = reps ? (uint32_t)reps : o->quick ? 3 : 5;
	o->lat_iters = lat ? lat : o->quick ? 200 : 1000;
	o->bw_iters = bw ? bw : o->quick ? 1000 : 5000;
	o->rate_iters = rate ? rate : o->quick ? 4000 : 20000;
	o->atomic_iters = atom ? atom : o->quick ? 4000 : 20000;
	o->poll_reps = o->quick ? 200 : 1000;
	o->max_s = max_s >= 0 ? max_s : o->quick ? 0.5 : 1.0;
	o->db_reps = o->quick ? 50 : 200;

	dmr_model_t pm;
	if (sim) {
		if (dmr_model_load(o->t.profile, &pm, &err) != DMR_OK) {
			fprintf(stderr, "dmreplay calibrate: option --profile: %s\n", err.msg);
			goto out;
		}
		snprintf(c->profile_name, sizeof(c->profile_name), "%s", pm.name);
		c->profile_mtu = pm.mtu;
	}
	dmr_model_t bm;
	if (dmr_model_load(o->base, &bm, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: option --base: %s\n", err.msg);
		goto out;
	}
	json_error_t jerr;
	base_root = json_load_file(bm.path, 0, &jerr);
	if (!base_root) {
		fprintf(stderr, "dmreplay calibrate: option --base: %s:%d: %s\n", bm.path,
			jerr.line, jerr.text);
		goto out;
	}
	rc = 1;
	for (int k = 0; k < CAL_NSIZES; k++)
		c->sizes[k] = 8u << k;
	uint64_t mr = (uint64_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	if ((uint64_t)o->qps * 4096 > mr)
		mr = (uint64_t)o->qps * 4096;
	size_t local = (size_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	dmr_status_t st = dmr_bench_session_open(&c->s, &o->t, o->qps, mr, local, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	time_t now = time(NULL);
	char date[32];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("dmreplay calibrate: %s, %u repetitions%s, base profile %s, %s\n", c->s.desc,
	       o->reps, o->quick ? " (quick)" : "", bm.name, date);
	fflush(stdout);

	double w0 = wall_now();
	uint32_t nres = o->reps;
	double *buf = malloc(nres * sizeof(double));
	dmr_bench_result_t *res = malloc(nres * sizeof(*res));
	if (!buf || !res) {
		free(buf);
		free(res);
		fprintf(stderr, "dmreplay calibrate: out of memory\n");
		goto out;
	}
	static const char *const phase[] = {
	    "latency vs size", "64 KiB bandwidth", "8 B READ rate vs depth",
	    "atomics",	       "doorbell",	   "poll",
	    "8 B WRITE, CAS rate", "16 READs per doorbell", "engine CPU (shm)"};
	st = measure_clock(c);
	/* the engine's CPU is measured beside a device, not on the model */
	int nph = sim ? 8 : 9;
	for (int ph = 0; ph < nph && st == DMR_OK; ph++) {
		double tp = wall_now();
		switch (ph) {
		case 0:
			st = measure_latency(c, buf, res, &err);
			break;
		case 1:
			st = measure_bw(c, buf, res, &err);
			break;
		case 2:
			st = measure_rate(c, buf, res, &err);
			break;
		case 3:
			st = measure_atomics(c, buf, res, &err);
			break;
		case 4:
			st = measure_doorbell(c, &err);
			break;
		case 5:
			st = measure_poll(c, &err);
			break;
		case 6:
			st = measure_rate_ops(c, buf, res, &err);
			break;
		case 7:
			st = measure_read_batch(c, &err);
			break;
		case 8:
			st = measure_engine(c, &err);
			break;
		}
		if (!c->s.driven)
			fprintf(stderr, "dmreplay calibrate: %-24s %6.1f s wall\n", phase[ph],
				wall_now() - tp);
	}
	free(buf);
	free(res);
	c->wall_s = wall_now() - w0;
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	detect_host_cpus(c);
	{
		/* the values the profile gets: measured, or the base's when not
		 * positive (write_profile) */
		double D = c->db_doorbell.value > 0 ? c->db_doorbell.value : bm.post_doorbell_ps / 1e3;
		double W = c->db_wqe.value > 0 ? c->db_wqe.value : bm.post_wqe_ps / 1e3;
		double P = c->poll_one.value > 0 ? c->poll_one.value : bm.poll_ps / 1e3;
		if (sim) {
			const dmr_model_t *sm = dmr_sim_model(c->s.be);
			D = sm->post_doorbell_ps / 1e3;
			W = sm->post_wqe_ps / 1e3;
			P = sm->poll_ps / 1e3;
		}
		fit_host(c, D, W, P);
	}
	if (c->host_cpus &&
	    (st = refine_host(c, &bm, json_object_get(base_root, "params"), &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: fitting host_*: %s\n", err.msg);
		goto out;
	}
	if (c->host_cpus) {
		/* the READ batch: CPU per doorbell with READs beyond the doorbell,
		 * a part of the per-READ CPU fitted above */
		double D = sim ? dmr_sim_model(c->s.be)->post_doorbell_ps / 1e3
			       : c->db_doorbell.value > 0 ? c->db_doorbell.value
							  : bm.post_doorbell_ps / 1e3;
		double x = (c->rd_single.value - c->rd_batch.value) / 15 - D;
		c->h_read_post = x < 0 ? 0 : x > c->h_read ? c->h_read : x;
	}
	print_results(c);
	printf("Measurements took %.1f s wall.\n", c->wall_s);

	/* beside the profile (sim: verdict) or the base (other backends: information) */
	const dmr_model_t *cm = sim ? dmr_sim_model(c->s.be) : &bm;
	int mtu_changed = sim && c->s.mtu != c->profile_mtu;
	/* software NIC: the multi-QP atomic rates are bounded by the host CPUs
	 * as well as by the unit: expected min(unit, min(K, qps) x the one-QP
	 * CAS rate measured in this run) */
	double au = cm->atomic_addr_mops, ag = cm->atomic_global_mops;
	/* every atomic passes the global unit too (ev_mn_arrive): one address
	 * runs at no more than either unit */
	au = au < ag ? au : ag;
	if (sim && cm->host_cpus && c->cpu_bound_mops > 0) {
		au = au < c->cpu_bound_mops ? au : c->cpu_bound_mops;
		ag = ag < c->cpu_bound_mops ? ag : c->cpu_bound_mops;
	}
	check_t ck[] = {
	    {"read_rtt_ns", cm->read_rtt_ns, c->lat[0][3].value, 0},
	    {"read_bw_64k_gbps", cm->read_bw_64k_gbps, c->bw[0].value, mtu_changed},
	    {"atomic_addr_mops (CAS one address)", au, c->atom[0][1].value, 0},
	    {"atomic_addr_mops (FAA one address)", au, c->atom[1][1].value, 0},
	    {"atomic_global_mops (CAS distinct)", ag, c->atom[0][0].value, 0},
	    {"atomic_global_mops (FAA distinct)", ag, c->atom[1][0].value, 0},
	    {"post_doorbell_ns", cm->post_doorbell_ps / 1e3, c->db_doorbell.value, 0},
	    {"post_wqe_ns", cm->post_wqe_ps / 1e3, c->db_wqe.value, 0},
	    {"poll_ns", cm->poll_ps / 1e3, c->poll_one.value, 0},
	    /* software NIC only (nck below leaves them out otherwise) */
	    {"host_read_ns (8 B READ stream)", (cm->host_read_ps + cm->host_read_post_ps) / 1e3,
	     c->h_read_fit, 0},
	    {"host_read_ns + host_switch_ns",
	     (cm->host_read_ps + cm->host_read_post_ps + cm->host_switch_ps) / 1e3,
	     c->h_read_fit + c->h_switch, 0},
	    {"host_write_ns (8 B WRITE stream)", cm->host_write_ps / 1e3, c->h_write, 0},
	    {"host_atomic_ns (8 B CAS stream)", cm->host_atomic_ps / 1e3, c->h_atomic, 0},
	    {"host_byte_ns (64 KiB vs 8 B READ)", cm->host_ps_per_byte_x1000 / 1e6, c->h_byte,
	     mtu_changed},
	    /* only when the profile has it (skipped: 0 against 0) */
	    {"host_read_post_ns (16 READs/doorbell)", cm->host_read_post_ps / 1e3, c->h_read_post,
	     0},
	};
	int nck = (int)(sizeof(ck) / sizeof(ck[0]));
	if (!(sim && cm->host_cpus && c->host_cpus && cm->host_read_post_ps))
		nck -= 1;
	if (!(sim && cm->host_cpus && c->host_cpus))
		nck -= 5;
	int fails = 0;
	if (sim) {
		printf("Sim against its own profile %s (tolerance %g %%):\n", cm->name,
		       o->tol_pct);
		fails = print_checks(ck, nck, o->tol_pct, "profile", 1);
		checks_json = json_array();
		for (int i = 0; i < nck; i++) {
			double rel = (ck[i].measured - ck[i].profile) / ck[i].profile;
			json_array_append_new(
			    checks_json,
			    json_pack("{s:s, s:o, s:o, s:o, s:s}", "param", ck[i].param, "profile",
				      jreal(ck[i].profile), "measured", jreal(ck[i].measured),
				      "rel_diff", jreal(rel), "result",
				      ck[i].skip		      ? "SKIP"
				      : fabs(rel) * 100 <= o->tol_pct ? "PASS"
								      : "FAIL"));
		}
		int nskip = 0;
		for (int i = 0; i < nck; i++)
			nskip += ck[i].skip;
		printf("%s: %d of %d values within %g %%\n", fails ? "FAIL" : "PASS",
		       nck - fails - nskip, nck - nskip, o->tol_pct);
	} else {
		printf("Measured beside the base profile %s (information, no verdict):\n", bm.name);
		print_checks(ck, nck, o->tol_pct, bm.name, 0);
	}

	/* the profile: written to -o, or to a temporary file, and loaded back */
	/* -o FILE: written to FILE.tmp-XXXXXX beside it, loaded back, and
	 * renamed over FILE only when the run passed; otherwise FILE is left
	 * as it was and the new output kept as FILE.partial */
	const char *path = tmp_path;
	{
		if (o->out)
			snprintf(tmp_path, sizeof(tmp_path), "%s.tmp-XXXXXX", o->out);
		else
			snprintf(tmp_path, sizeof(tmp_path), "/tmp/dmr-calibrate-XXXXXX.json");
		int fd = o->out ? mkstemp(tmp_path) : mkstemps(tmp_path, 5);
		if (fd >= 0) {
			/* mkstemp's 0600: the profile gets a new file's usual mode */
			mode_t um = umask(0);
			umask(um);
			fchmod(fd, 0666 & ~um);
		}
		if (fd < 0) {
			fprintf(stderr, "dmreplay calibrate: cannot create a temporary file: %s\n",
				strerror(errno));
			tmp_path[0] = 0;
			goto out;
		}
		close(fd);
	}
	json_t *bparams = json_object_get(base_root, "params");

	if ((st = write_profile(c, &bm, bparams, path, checks_json, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	dmr_model_t wm;
	int loads = dmr_model_load(path, &wm, &err) == DMR_OK;
	if (!loads)
		fprintf(stderr, "dmreplay calibrate: the profile written does not load: %s\n",
			err.msg);
	if (o->out && (!loads || fails)) {
		char part[sizeof(tmp_path)];
		snprintf(part, sizeof(part), "%s.partial", o->out);
		if (rename(path, part) == 0) {
			tmp_path[0] = 0;
			fprintf(stderr,
				"dmreplay calibrate: %s left as it was (%s); the new profile is in "
				"%s\n",
				o->out, loads ? "self-check FAIL" : "it does not load", part);
		} else {
			fprintf(stderr,
				"dmreplay calibrate: %s left as it was; cannot keep the new profile "
				"as %s: %s\n",
				o->out, part, strerror(errno));
		}
		goto out;
	}
	if (!loads)
		goto out;
	if (o->out) {
		if (rename(path, o->out) != 0) {
			fprintf(stderr, "dmreplay calibrate: cannot rename %s to %s: %s\n", path,
				o->out, strerror(errno));
			goto out;
		}
		tmp_path[0] = 0;
	}
	if (o->out)
		printf(
		    "wrote %s (profile %s; loads: modelled idle 64 B READ %.1f ns, measured %.1f "
		    "ns)\n",
		    o->out, wm.name, dmr_model_read_rtt_ps(&wm, 64) / 1e3, c->lat[0][3].value);
	else
		printf("profile not written (no -o); it loads: modelled idle 64 B READ %.1f ns\n",
		       dmr_model_read_rtt_ps(&wm, 64) / 1e3);
	rc = fails ? 1 : 0;
out:
	if (tmp_path[0])
		unlink(tmp_path);
	json_decref(base_root);
	json_decref(checks_json);
	dmr_bench_session_close(&c->s);
	for (int o2 = 0; o2 < 2; o2++) {
		for (int k = 0; k < CAL_NSIZES; k++) {
			summ_free(&c->lat[o2][k]);
			summ_free(&c->lat_avg[o2][k]);
			summ_free(&c->lat_p99[o2][k]);
		}
		summ_free(&c->bw[o2]);
		summ_free(&c->bw_peak[o2]);
		summ_free(&c->atom[o2][0]);
		summ_free(&c->atom[o2][1]);
	}
	for (int k = 0; k < CAL_NDEPTHS; k++)
		summ_free(&c->rate[k]);
	summ_free(&c->db_batch);
	summ_free(&c->db_single);
	summ_free(&c->db_doorbell);
	summ_free(&c->db_wqe);
	summ_free(&c->poll_one);
	summ_free(&c->rd_batch);
	summ_free(&c->rd_single);
	summ_free(&c->poll_empty);
	summ_free(&c->rate_w);
	summ_free(&c->rate_cas);
	free(c);
	return rc;
}
