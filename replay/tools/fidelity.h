/*
 * replay/tools/fidelity.h - `dmreplay fidelity`: how well the sim, run with a
 * profile measured on a device, predicts what that device does on the same
 * traces (issue 6 item 3; docs/fidelity.md).
 *
 * For each trace the same replay (shape, seed) runs on the verbs backend on
 * the device (measured) and on the sim with the profile (predicted), both
 * through dmr_replay_run in this process. The measured side runs --rounds
 * times (default 3), round by round over the traces (every other round in
 * reverse order, so a drift of the host's load falls on every trace), each
 * run after a quiet window that samples the host's load (hostload.h); the
 * row has the medians, their spread, and how many rounds ran on a loaded
 * host (marked "loaded": a verdict then says more about the host than the
 * model). The sim is deterministic: it runs once per trace. One table row per trace: committed
 * throughput, p50 and p99 latency measured and predicted, the relative error
 * (predicted - measured) / measured, and PASS/FAIL against the tolerances.
 * DIR/fidelity.{csv,md} are only (atomically) replaced by a complete table;
 * a failed or interrupted run writes DIR/fidelity.partial.{csv,md}.
 * Test hook: DMR_FIDELITY_TEST_MEASURE_SIM set in the environment makes the
 * "measured" side the sim too (no device needed; tests/test_fidelity.c).
 */
#ifndef DMR_FIDELITY_H
#define DMR_FIDELITY_H

#include <stddef.h>
#include <stdio.h>

#define DMR_FID_TOL_TPS 0.15 /* committed throughput: |rel err| <= 15 % */
#define DMR_FID_TOL_P50 0.20 /* p50 latency: |rel err| <= 20 % */

/* Exit statuses of `dmreplay fidelity`. */
enum {
	DMR_FID_EXIT_PASS = 0,	 /* table written, every row PASS */
	DMR_FID_EXIT_FAIL = 1,	 /* table written, some row FAIL (or a run failed) */
	DMR_FID_EXIT_USAGE = 2,	 /* bad options, unreadable profile or trace, I/O */
	DMR_FID_EXIT_NODEV = 3,	 /* no device to measure (none given, none found) */
	DMR_FID_EXIT_INTR = 130, /* SIGINT/SIGTERM: stopped after the current replay,
				  * table in DIR/fidelity.partial.{csv,md} */
};

typedef struct dmr_fid_row {
	char trace[64]; /* row name: trace file's base name without .csv */
	char note[128]; /* "" or why the row has no numbers (a run failed) */
	/* inputs: measured on the device, predicted by the sim */
	double meas_tps, pred_tps;     /* committed transactions per second */
	double meas_p50, pred_p50;     /* us */
	double meas_p99, pred_p99;     /* us */
	double meas_abort, pred_abort; /* aborts per attempt, 0..1 */
	/* the measured side over its rounds (meas_* above are their medians) */
	unsigned rounds;	       /* measured runs that gave numbers */
	double spread_tps, spread_p50; /* (max - min) / median over them */
	double host_other, host_steal; /* largest over them (replay/tools/hostload.h) */
	double host_load;	       /* largest 1-minute load average */
	unsigned loaded_rounds;	       /* rounds measured on a loaded host */
	/* outputs of dmr_fid_row_compute */
	double err_tps, err_p50, err_p99; /* (pred - meas) / meas; NAN when meas <= 0 */
	int pass_tps, pass_p50;		  /* 1 within tolerance, 0 not (NAN fails) */
	int pass;			  /* pass_tps && pass_p50 && no note */
} dmr_fid_row_t;

/* (pred - meas) / meas; NAN when meas is not > 0 or either is not finite. */
double dmr_fid_rel_err(double pred, double meas);

/* Fill err_*, pass_* and pass from the inputs and DMR_FID_TOL_*. */
void dmr_fid_row_compute(dmr_fid_row_t *r);

/* The table: aligned text (print), CSV (header + one line per row) and a
 * Markdown table. Return 0, or -1 when writing failed. */
int dmr_fid_print(const dmr_fid_row_t *rows, size_t n, FILE *f);
int dmr_fid_write_csv(const dmr_fid_row_t *rows, size_t n, FILE *f);
int dmr_fid_write_md(const dmr_fid_row_t *rows, size_t n, FILE *f);

/* CLI entry: `dmreplay fidelity ...`; returns an exit status above. */
int dmr_fidelity_main(int argc, char **argv);

#endif
