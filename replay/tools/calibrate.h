/*
 * replay/tools/calibrate.h - `dmreplay calibrate`: measure a backend with the
 * micro-benchmarks of replay/tools/bench.h and write a hardware profile
 * (models/model.h format) from the results; docs/CALIBRATION.md describes
 * every measurement and field.
 *
 *   dmreplay calibrate --backend verbs --device D -o PROFILE.json
 *   dmreplay calibrate --backend sim --profile P [-o PROFILE.json]
 *
 * Measured, through the backend interface only (one CN; QP q = worker q):
 * READ and WRITE latency against size (8 B .. 64 KiB, depth 1, fitted as
 * c + m x bytes with gsl_fit_linear), READ and WRITE bandwidth at 64 KiB
 * with 16 outstanding, 8 B READ message rate at depth 1, 2, 4, 8, 16, CAS
 * and FAA rate on distinct addresses and on one address (`qps` QPs x 16
 * outstanding), doorbell batch cost (k WRs in one post against k single
 * posts: per-doorbell and per-WQE CPU cost), poll cost (a poll returning one
 * completion that has already arrived; an empty poll). Each value is the
 * median over `reps` repetitions and is written with its spread (stdev,
 * min, max) and the raw per-repetition series.
 *
 * The profile written loads with dmr_model_load: read_rtt_ns = the 64 B
 * READ latency, read_bw_64k_gbps = the 64 KiB READ bandwidth,
 * atomic_addr_mops = the same-address CAS rate, atomic_global_mops = the
 * distinct-address CAS rate, post_doorbell_ns / post_wqe_ns / poll_ns = the
 * doorbell and poll costs, mtu = the path MTU (sim, verbs), qp_max_rd_atomic
 * = the QP's limit (sim, verbs); every other parameter is copied from a base
 * profile and marked estimate. nic_proc_ns and dma_gbps are left out so that
 * the loader derives them from the measured read_rtt_ns / read_bw_64k_gbps.
 *
 * On sim the same measurements are printed beside the profile's own values
 * with the relative difference and PASS/FAIL against a tolerance (2 %).
 *
 * Exit status: 0 done (and on sim every check passed), 1 a run failed, a
 * check failed, or the written profile does not load, 2 bad options.
 */
#ifndef DMR_CALIBRATE_H
#define DMR_CALIBRATE_H

/* argv[0] is "calibrate". */
int dmr_calibrate_main(int argc, char **argv);

#endif /* DMR_CALIBRATE_H */
