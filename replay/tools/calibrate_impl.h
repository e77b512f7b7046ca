/*
 * replay/tools/calibrate_impl.h - private to `dmreplay calibrate`
 * (replay/tools/README.md has the map of its files): the run's state
 * (options, the session, every measured summary and fitted value), and the
 * functions the files share (dmr_cal_*, not part of calibrate.h's API).
 * Units: latencies and CPU costs in ns, bandwidths in Gb/s, rates in Mpps
 * or Mops/s, as the profile's JSON has them.
 */
#ifndef DMR_CALIBRATE_IMPL_H
#define DMR_CALIBRATE_IMPL_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>

#include "../../models/model.h"
#include "bench_impl.h"
#include "calibrate.h"
#include "hostload.h"

#define CAL_NSIZES 14 /* 8 B .. 64 KiB, powers of two */
#define CAL_NDEPTHS 5
#define CAL_BW_SIZE 65536u
#define CAL_BW_DEPTH 16u
#define CAL_ATOMIC_DEPTH 16u
#define CAL_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10)) /* profiles */
#define CAL_ENG_NTRACES 4
#define CAL_MAX_ROUNDS                                                                             \
	100 /* --reps at most (calibrate_cli.c) */ /* traces of the engine CPU fit                 \
						      (calibrate_engine.c) */

extern const uint32_t dmr_cal_depths[CAL_NDEPTHS]; /* 1, 2, 4, 8, 16 */

typedef struct cal_opts {
	dmr_bench_target_t t;
	const char *base;
	const char *out;
	const char *name;
	int quick;
	int progress; /* --progress: the phase progress line also off a terminal */
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
	summ_t bw[2], bw_peak[2]; /* [READ, WRITE] 64 KiB, Gb/s */
	summ_t rate[CAL_NDEPTHS]; /* 8 B READ, Mpps */
	summ_t atom[2][2];	  /* [CAS, FAA][distinct, same] Mops/s */
	summ_t rate_w, rate_cas;  /* 8 B WRITE, CAS at depth 16, one QP, Mpps */
	summ_t db_batch, db_single, db_doorbell, db_wqe; /* ns */
	summ_t poll_one, poll_empty;			 /* ns */
	uint32_t poll_late; /* threaded: completion not there yet when polled */
	double wall_s;
	/* the rounds measured and the host's load around each (hostload.h;
	 * known 0 on DRIVEN backends: simulated time is not the host's) */
	uint32_t rounds;
	int hl_sampled; /* dmr_hostload_wanted */
	dmr_hostload_t hl[CAL_MAX_ROUNDS];
	/* software NIC (docs/CALIBRATION.md "Software NIC"): host_cpus 0 = none */
	uint32_t host_cpus;
	char host_cpus_src[200];
	double h_read, h_write, h_atomic, h_byte; /* fitted, ns and ns/B */
	double h_switch;			  /* ns per READ that finds its CPU busy */
	summ_t rd_batch, rd_single; /* 16 READs in one doorbell / 16 single posts, ns */
	double h_read_post;	    /* ns per doorbell carrying READs (of h_read) */
	double h_read_fit;	    /* as fitted (= h_read) */
	/* ns by which the parts of the idle 64 B READ other than host_read
	 * exceed read_rtt_ns even with host_read 0 (the host's load changed
	 * between the phases measuring them): 0 = none; the profile then
	 * gets nic_proc_ns 0, and the self-check fails read_rtt_ns */
	double rtt_short;
	double cpu_bound_mops; /* min(host_cpus, qps) x one-QP CAS rate, Mops/s */
	/* CN CPU of the replay engine (dmr_cal_measure_engine): per transaction
	 * attempt, per trace operation, per completion handled, ns */
	int eng_have;
	double eng_begin, eng_op, eng_logic;
	double eng_clock_ns; /* CLOCK_MONOTONIC read subtracted per completion */
	uint32_t eng_n;	     /* engine runs (traces) fitted */
	char eng_trace[CAL_ENG_NTRACES][16];
	/* per attempt: ns, operations, doorbells */
	double eng_t[CAL_ENG_NTRACES], eng_ops[CAL_ENG_NTRACES], eng_db[CAL_ENG_NTRACES];
	double eng_resid[CAL_ENG_NTRACES]; /* fit - measured, relative */
	int refining;	      /* dmr_cal_profile_json: nic_proc_ns 0 (the fit's sim runs) */
	int warned_cpu_bound; /* the "host CPUs' rate" warnings: printed once */
	int refine_iters;
	double refine_resid[4]; /* last sim stream vs measured, relative */
} cal_t;

/* One value of the sim's self-check: the profile's and the measured. */
typedef struct cal_check {
	const char *param;
	double profile, measured;
	int skip; /* not comparable (MTU overridden): SKIP, not FAIL */
	/* > 0: the difference is taken against this, ns, and not against the
	 * profile's value: a per-WR host cost is fitted from a stream's time
	 * per WR, and near 0 it is not identifiable (a stream on the sim runs
	 * the same with host_write_ns 0 or 0.1, and in CI one fitted 0 took
	 * 826 ns, 1.7 % of its WRITE stream's 47 us per WR) */
	double scale;
} cal_check_t;

/* The difference of one check, %: against ck->scale when set, else against
 * the profile's value (0 against 0 is no difference). */
static inline double dmr_cal_check_rel(const cal_check_t *ck)
{
	double d = ck->measured - ck->profile;
	if (ck->scale > 0)
		return d / ck->scale * 100;
	if (d == 0)
		return 0;
	return d / ck->profile * 100;
}

static inline json_t *jreal(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* ---- the measurements (calibrate_measure.c) ---- */

/* Summary of v[0..n) (copied) into *s: median, mean, stdev, min, max. 0 or
 * -1 (out of memory: *s empty). */
int dmr_cal_summ_make(summ_t *s, const double *v, uint32_t n);
/* Every phase in order (latency, bandwidth, READ rate, atomics, doorbell,
 * poll, WRITE/CAS rate, READ batch; the engine CPU too unless on sim),
 * c->wall_s their wall time; the phase times on stderr on threaded
 * backends. Errors: the first run's (err says which). */
dmr_status_t dmr_cal_measure(cal_t *c, int sim, dmr_err_t *err);
/* Free every summary and c itself (after closing its session). */
void dmr_cal_free(cal_t *c);

/* ---- the replay engine's CPU (calibrate_engine.c) ---- */

/* Fit txn_begin/op/logic from runs of the engine on shm (c->eng_*).
 * Errors: DMR_ERR_IO (temporary directory, traces), DMR_ERR_NOMEM, the
 * replay's. */
dmr_status_t dmr_cal_measure_engine(cal_t *c, dmr_err_t *err);

/* ---- software NIC fits (calibrate_fit.c) ---- */

/* host_cpus (detected or --host-cpus), then the closed-form host_* fit,
 * refined on the sim when host_cpus > 0, and host_read_post_ns. bm and
 * base_params (its "params" object) give what was not measured. Errors:
 * those of the sim runs of the refinement. */
dmr_status_t dmr_cal_fit(cal_t *c, const dmr_model_t *bm, json_t *base_params, int sim,
			 dmr_err_t *err);
/* 1 when an atomic rate (Mops/s) is the host CPUs' bound, not the unit's. */
int dmr_cal_atomic_cpu_bound(const cal_t *c, double mops);
int dmr_cal_atomic_below_one_qp(const cal_t *c, double mops);

/* ---- the profile (calibrate_profile.c) ---- */

/* The profile as JSON (new reference): measured values, the rest copied
 * from bm / base_params, the "measured" section with checks (borrowed,
 * may be NULL) as its sim_check. Errors: DMR_ERR_PARSE (a base parameter
 * without a value). */
dmr_status_t dmr_cal_profile_json(cal_t *c, const dmr_model_t *bm, json_t *base_params,
				  json_t *checks, json_t **root_p, dmr_err_t *err);
/* dmr_cal_profile_json written to path. Errors: its own, DMR_ERR_IO. */
dmr_status_t dmr_cal_write_profile(cal_t *c, const dmr_model_t *bm, json_t *base_params,
				   const char *path, json_t *checks, dmr_err_t *err);
/* First line of a (sysfs) file without its newline; "" when unreadable. */
void dmr_cal_read_line(const char *path, char *buf, size_t len);

/* ---- printing and the sim's self-check (calibrate_check.c) ---- */

/* Every measurement, fit and software-NIC value, to stdout. */
void dmr_cal_print_results(const cal_t *c);
/* The measurements beside the profile's values: on sim (sim = 1) a verdict
 * against o.tol_pct, returned as the number of FAILs, and *checks_p a JSON
 * array of the rows (new reference); else information beside the base bm
 * (0, *checks_p NULL). */
int dmr_cal_self_check(cal_t *c, const dmr_model_t *bm, int sim, json_t **checks_p);

#endif /* DMR_CALIBRATE_IMPL_H */
