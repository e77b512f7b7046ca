/*
 * tests/helpers/be.h - waiting for completions through backends/backend.h,
 * on driven (sim) and threaded (shm, verbs) backends alike
 * (dmr_test_helpers library).
 */
#ifndef DMR_TEST_BE_H
#define DMR_TEST_BE_H

#include <stdint.h>

#include "backends/backend.h"

/* CLOCK_MONOTONIC, ns. */
uint64_t dmr_test_mono_ns(void);

/* Up to n completions of worker w into wc[0..n). A DMR_BE_CAP_DRIVEN
 * backend is advanced with dmr_be_progress until w has n or no event is
 * left (simulated time, no deadline); a threaded one is polled until n or
 * until deadline_ns of wall time have passed. Returns the count (0..n). */
int dmr_test_wait_wc(dmr_be_t *be, uint32_t w, dmr_wc_t *wc, int n, uint64_t deadline_ns);

/* The backend's performance model (DMR_BE_CTL_MODEL), NULL when it has
 * none; owned by the backend. */
static inline const struct dmr_model *dmr_test_model(dmr_be_t *be)
{
	const struct dmr_model *m = NULL;
	return dmr_be_control(be, DMR_BE_CTL_MODEL, &m, NULL) == DMR_OK ? m : NULL;
}

/* Global simulated time, ps (DMR_BE_CTL_SIM_TIME), 0 when not answered. */
static inline uint64_t dmr_test_sim_time(dmr_be_t *be)
{
	uint64_t t = 0;
	(void)dmr_be_control(be, DMR_BE_CTL_SIM_TIME, &t, NULL);
	return t;
}

/* DMR_BE_CTL_SET_MTU: the control op's status. */
static inline dmr_status_t dmr_test_set_mtu(dmr_be_t *be, uint32_t mtu)
{
	return dmr_be_control(be, DMR_BE_CTL_SET_MTU, &mtu, NULL);
}

#endif
