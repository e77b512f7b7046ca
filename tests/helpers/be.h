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

#endif
