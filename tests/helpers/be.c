/*
 * tests/helpers/be.c - see be.h.
 */
#include "helpers/be.h"

#include <time.h>

uint64_t dmr_test_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int dmr_test_wait_wc(dmr_be_t *be, uint32_t w, dmr_wc_t *wc, int n, uint64_t deadline_ns)
{
	int got = 0;
	if (be->ops->caps & DMR_BE_CAP_DRIVEN) {
		while (got < n) {
			got += dmr_be_poll(be, w, wc + got, n - got);
			if (got < n && dmr_be_progress(be, UINT64_MAX) < 0)
				break;
		}
		return got;
	}
	uint64_t end = dmr_test_mono_ns() + deadline_ns;
	while (got < n && dmr_test_mono_ns() < end)
		got += dmr_be_poll(be, w, wc + got, n - got);
	return got;
}
