/*
 * tests/helpers/sim_probe.h - measurements of the sim backend's model shared by the
 * model tests (tests/unit/test_sim.c) and the benchmark that prints the figures
 * (tests/bench/bench_model.c, scripts/bench-model). Each returns -1 if the
 * backend misbehaves (a failed post or completion).
 */
#ifndef DMR_SIM_PROBE_H
#define DMR_SIM_PROBE_H

#include <stdlib.h>

#include "helpers/be.h"
#include "models/model.h"

static inline dmr_be_t *dmr_probe_open(uint32_t cns, uint32_t workers, const char *profile)
{
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = 1,
			       .cns = cns,
			       .workers = workers,
			       .mr_size = 64 << 20,
			       .profile = profile ? profile : "cx6dx-100g"};
	dmr_be_t *be = NULL;
	return dmr_be_open(&cfg, &be, NULL) == DMR_OK ? be : NULL;
}

/* Idle READ of `bytes`: post to completion handled, ps. */
static inline double dmr_probe_idle_read_ps(uint32_t bytes)
{
	dmr_be_t *be = dmr_probe_open(1, 1, NULL);
	static uint8_t buf[4096];
	if (!be || bytes > sizeof(buf))
		return -1;
	uint64_t t0 = dmr_be_now(be, 0);
	dmr_wc_t wc;
	double r = -1;
	if (dmr_be_post_one(be, 0, 0, DMR_WR_READ, 7, buf, 4096, bytes, 0, 0, NULL) == DMR_OK &&
	    dmr_be_progress(be, UINT64_MAX) == 0 && dmr_be_poll(be, 0, &wc, 1) == 1 &&
	    wc.status == DMR_WC_SUCCESS)
		r = (double)(dmr_be_now(be, 0) - t0);
	dmr_be_close(be);
	return r;
}

/* Stream of `size` READs with `depth` outstanding on one QP at path MTU
 * `mtu`: Gb/s of payload between the depth-th and the last completion. */
static inline double dmr_probe_read_stream_gbps(uint32_t mtu, uint32_t size, uint32_t depth,
						uint32_t total)
{
	dmr_be_t *be = dmr_probe_open(1, 1, NULL);
	if (!be || dmr_test_set_mtu(be, mtu) != DMR_OK)
		return -1;
	uint8_t *buf = malloc(size);
	uint32_t posted = 0, done = 0;
	uint64_t t_first = 0, t_last = 0;
	dmr_wc_t wc[32];
	int bad = 0;
	for (; posted < depth; posted++)
		bad |= dmr_be_post_one(be, 0, 0, DMR_WR_READ, posted, buf, 0, size, 0, 0, NULL);
	while (!bad && done < total && dmr_be_progress(be, UINT64_MAX) == 0) {
		int n = dmr_be_poll(be, 0, wc, 32);
		for (int i = 0; i < n; i++) {
			bad |= wc[i].status != DMR_WC_SUCCESS;
			done++;
			if (done == depth)
				t_first = dmr_test_sim_time(be);
			t_last = dmr_test_sim_time(be);
			if (posted < total) {
				bad |= dmr_be_post_one(be, 0, 0, DMR_WR_READ, posted, buf, 0, size,
						       0, 0, NULL);
				posted++;
			}
		}
	}
	free(buf);
	dmr_be_close(be);
	if (bad || done != total)
		return -1;
	return (double)(total - depth) * size * 8 / ((t_last - t_first) / 1e12) / 1e9;
}

/* CAS stream on one address from `workers` QPs with `depth` outstanding
 * each; Mops/s after the first 1000; *profile_mops_p = the profile's
 * per-address rate. */
static inline double dmr_probe_same_addr_cas_mops(uint32_t workers, uint32_t depth, uint32_t total,
						  double *profile_mops_p)
{
	dmr_be_t *be = dmr_probe_open(1, workers, NULL);
	*profile_mops_p = 0;
	if (!be)
		return -1;
	*profile_mops_p = dmr_test_model(be)->atomic_addr_mops;
	uint64_t *old = calloc((size_t)workers * depth, sizeof(uint64_t));
	uint32_t posted = 0, done = 0;
	int bad = 0;
	for (uint32_t w = 0; w < workers; w++)
		for (uint32_t d = 0; d < depth; d++, posted++)
			bad |= dmr_be_post_one(be, w, 0, DMR_WR_CAS, w * depth + d,
					       &old[w * depth + d], 64, 8, 0, 1, NULL);
	uint64_t t_first = 0, t_last = 0;
	dmr_wc_t wc[32];
	int w;
	while (!bad && done < total && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wc, 32);
		for (int i = 0; i < n; i++) {
			done++;
			if (done == 1000)
				t_first = dmr_test_sim_time(be);
			t_last = dmr_test_sim_time(be);
			if (posted < total) {
				bad |= dmr_be_post_one(be, (uint32_t)w, 0, DMR_WR_CAS, wc[i].wr_id,
						       &old[wc[i].wr_id], 64, 8, 0, 1, NULL);
				posted++;
			}
		}
	}
	free(old);
	dmr_be_close(be);
	if (bad || done < total)
		return -1;
	return (done - 1000) / ((t_last - t_first) / 1e12) / 1e6;
}

/* One WRITE of `bytes`: post to completion handled, ps. */
static inline double dmr_probe_write_ps(uint32_t bytes)
{
	dmr_be_t *be = dmr_probe_open(1, 1, NULL);
	uint8_t *buf = calloc(1, bytes ? bytes : 1);
	double r = -1;
	uint64_t t0 = be ? dmr_be_now(be, 0) : 0;
	dmr_wc_t wc;
	if (be && dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, buf, 0, bytes, 0, 0, NULL) == DMR_OK &&
	    dmr_be_progress(be, UINT64_MAX) == 0 && dmr_be_poll(be, 0, &wc, 1) == 1)
		r = (double)(dmr_be_now(be, 0) - t0);
	free(buf);
	dmr_be_close(be);
	return r;
}

#endif
