/* core/base/timeps.c - the wall clock of timeps.h. */
#include "timeps.h"

#include <time.h>

double dmr_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

dmr_time_ps_t dmr_mono_ps(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * DMR_PS_PER_S + (uint64_t)ts.tv_nsec * DMR_PS_PER_NS;
}
