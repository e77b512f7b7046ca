/*
 * replay/tools/bench.h - `dmreplay bench`: perftest-style micro-benchmarks
 * (ib_read_bw / ib_read_lat and friends) through the backend interface only,
 * and the engine `dmreplay calibrate` (replay/tools/calibrate.h) runs its
 * measurements on.
 *
 * Shape: one CN; QP q is worker q's endpoint to the one MN. Each QP keeps
 * `depth` WRs outstanding, one signaled WR per post (one doorbell each), and
 * posts a new WR for every completion it polls, as perftest's run_iter_bw
 * does; latency mode is the same loop at depth 1 (perftest's run_iter_lat).
 *
 * Time: dmr_be_now() of the QP's worker: simulated picoseconds on DRIVEN
 * backends (sim: advanced with dmr_be_progress()), wall time on the
 * threaded ones (shm: CLOCK_MONOTONIC; verbs: the TSC at a rate measured
 * against CLOCK_MONOTONIC, as perftest's get_cycles, see verbs.h; polled with
 * dmr_be_poll() in a spin loop, one thread per QP when there are several,
 * each wait with a deadline). `dmreplay bench` on verbs sizes its QP as
 * perftest does (dmr_verbs_set_queue: 2 x depth WRs, inline data for WRITE
 * only) and prints a clock check (the run by dmr_be_now and by
 * CLOCK_MONOTONIC).
 * tposted[i] is read just before WR i is posted, tcompleted[i] just after
 * the poll that returned its completion.
 *
 * Figures, as perftest computes them (perftest_parameters.c,
 * print_report_bw / print_report_lat):
 *  - BW average = bytes x iterations / (tcompleted[last] - tposted[0]);
 *    MsgRate = iterations / the same time; Gb/s are 10^9 bit/s.
 *  - BW peak = bytes / min over i <= j of
 *    (tcompleted[j] - tposted[i]) / (j - i + 1); perftest searches all
 *    pairs (O(n^2)), here the same minimum is found exactly by Dinkelbach's
 *    iteration in O(n) per step. Only for one QP (NAN otherwise).
 *  - Latency: delta[i] = tposted[i+1] - tposted[i] (iterations - 1 values:
 *    one round trip from post to completion polled plus the next post's
 *    start), sorted; the 2 largest are dropped (LAT_MEASURE_TAIL); t_typical
 *    is the median, t_avg / t_stdev over the rest, t_max = delta[m] (m =
 *    the count kept), 99 % = delta[ceil(0.99 m)], 99.9 % = delta[ceil(0.999 m)].
 *    Unlike ib_write_lat (a ping-pong that reports half its round trip),
 *    WRITE latency here is post to completion of one WRITE, like READ.
 *
 * Remote layout: QP q uses [q x region, (q+1) x region) of the MN region,
 * region = depth x size rounded up to 4 KiB; READ/WRITE i goes to slot
 * (i mod depth); atomics go to 8-byte word (i mod 512) of the QP's 4 KiB
 * (perftest's cycle buffer), or all to offset 0 with same_addr. With
 * spec.cycle_buffer, perftest's own pattern instead (see the field).
 */
#ifndef DMR_BENCH_H
#define DMR_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "../../backends/backend.h"
#include "../../core/base/status.h"

/* Where to run: a backend and what it needs. */
typedef struct dmr_bench_target {
	const char *backend; /* "sim" | "shm" | "verbs" */
	const char *profile; /* sim: model name or path (NULL: cx6dx-100g) */
	const char *device;  /* verbs: name or index (NULL: index 0) */
	int port;	     /* verbs: 1-based, 0 = 1 */
	int gid_index;	     /* verbs: -1 = automatic */
	uint32_t mtu;	     /* sim: path MTU override, 0 = the profile's */
} dmr_bench_target_t;

/* An open backend with one registered local buffer per worker. */
typedef struct dmr_bench_session {
	dmr_be_t *be;
	int driven;	  /* DMR_BE_CAP_DRIVEN */
	uint32_t workers; /* QPs available (workers of the one CN) */
	uint64_t mr_size; /* bytes of the MN region */
	size_t local_len; /* bytes of each local buffer */
	uint8_t **local;  /* [workers], 64-byte aligned, registered */
	uint32_t mtu;	  /* path MTU in use (sim: model; verbs: connection), 0 = none */
	/* the backend's performance model (DMR_BE_CTL_MODEL, with the MTU
	 * override applied), owned by the backend; NULL: it has none */
	const struct dmr_model *model;
	char desc[160]; /* "sim (profile cx6dx-100g, MTU 4096)" */
} dmr_bench_session_t;

/*
 * Open target with `workers` workers on one CN, an MN region of mr_size
 * bytes and a local buffer of local_len bytes per worker, registered with
 * dmr_be_mr_reg. Errors: those of dmr_be_open (DMR_ERR_NODEV for an unknown
 * backend: err lists the known ones), DMR_ERR_INVALID (mtu on a backend
 * other than sim, or not an IB MTU), DMR_ERR_NOMEM. *s is filled only on
 * success.
 */
dmr_status_t dmr_bench_session_open(dmr_bench_session_t *s, const dmr_bench_target_t *t,
				    uint32_t workers, uint64_t mr_size, size_t local_len,
				    dmr_err_t *err);
void dmr_bench_session_close(dmr_bench_session_t *s);

/* One measurement. */
typedef struct dmr_bench_spec {
	uint8_t opcode;	       /* DMR_WR_READ, WRITE, CAS or FAA */
	uint32_t size;	       /* READ/WRITE bytes (>= 1); atomics: 8 */
	uint32_t depth;	       /* outstanding WRs per QP (latency: 1) */
	uint64_t iters;	       /* WRs per QP (>= 2; latency: >= 4) */
	uint32_t qps;	       /* QPs = workers 0..qps-1 of the session */
	int latency;	       /* 1: perftest _lat statistics (needs depth 1, qps 1) */
	int same_addr;	       /* atomics: every WR of every QP on offset 0 */
	uint32_t cycle_buffer; /* 0: the layout below; else perftest's: WR i at offset
				  (i mod (B / inc)) x inc of a B-byte buffer, local and
				  remote, inc = size rounded up to 64 bytes; one buffer
				  (offset 0) when size > B / 2 (perftest's default B is
				  the page size, 4096) */
	double timeout_s;      /* threaded: no completion for this long is an error (0: 10 s) */
	double max_s;	       /* threaded: stop posting max_s seconds after a QP's first post
				  (once it has posted 16 WRs) and finish with the WRs posted;
				  0 = run all iters. Ignored on DRIVEN backends (simulated
				  time costs little). res->iters says how many completed. */
	double duration_s;     /* perftest -D: stop posting duration_s seconds after a QP's
				  first post (once it has posted 16 WRs), on every backend
				  (DRIVEN: simulated seconds), or after iters WRs, whichever
				  comes first; 0 = off. res->iters says how many completed. */
} dmr_bench_spec_t;

typedef struct dmr_bench_result {
	uint64_t iters;	     /* completed WRs over all QPs (< qps x iters if max_s cut it) */
	double seconds;	     /* first post to last completion, s */
	double bw_peak_gbps; /* perftest's peak (one QP; NAN with several) */
	double bw_avg_gbps;
	double msg_rate_mpps; /* completed WRs per microsecond */
	double mono_seconds;  /* threaded: the whole run by CLOCK_MONOTONIC, s (a check of
				 dmr_be_now's clock; NAN on DRIVEN backends) */
	/* latency mode only (us) */
	double t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us, t_p99_us, t_p999_us;
} dmr_bench_result_t;

/* Bytes of MN region and of local buffer per worker that spec needs. */
uint64_t dmr_bench_mr_need(const dmr_bench_spec_t *spec);
size_t dmr_bench_local_need(const dmr_bench_spec_t *spec);

/*
 * Run spec on the session. Errors: DMR_ERR_INVALID (spec out of range or
 * larger than the session's region / buffers), DMR_ERR_REMOTE (a completion
 * with an error status: opcode, QP, wr_id and status named), DMR_ERR_TIMEOUT
 * (no completion within the deadline; sim: no event left with WRs
 * outstanding), a post's own error. *res_p is set only on success.
 */
dmr_status_t dmr_bench_run(dmr_bench_session_t *s, const dmr_bench_spec_t *spec,
			   dmr_bench_result_t *res_p, dmr_err_t *err);

/* Print the result as perftest's table (rule, column line in Gb/sec as
 * perftest --report_gbits, row, rule) to file. */
void dmr_bench_print(const dmr_bench_spec_t *spec, const dmr_bench_result_t *r, void *file);

/* 1 if name is a registered backend (dmr_be_names()), else 0. */
int dmr_bench_known_backend(const char *name);

/* `dmreplay bench read|write|cas|faa [options]`: argv[0] is "bench".
 * Exit status: 0 done, 1 the run failed, 2 bad options (named on stderr). */
int dmr_bench_main(int argc, char **argv);

#endif /* DMR_BENCH_H */
