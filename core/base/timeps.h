/*
 * core/base/timeps.h - the picosecond time type and its conversions.
 *
 * Simulated and measured time is an unsigned 64-bit count of picoseconds
 * (STYLE.md "Simulation time": one byte at 400 Gb/s is 20 ps, so
 * nanoseconds would drift; 2^64 ps is 213 days). Model parameters and
 * reported figures may be doubles; they are converted here and nowhere else,
 * so every place converts the same way:
 *  - to a double: ps / 1e12 (s), / 1e9 (ms), / 1e6 (us), / 1e3 (ns);
 *  - from a double: truncating ((uint64_t)(x * 1e12) and so on), or
 *    rounding to nearest with the _round variants (llround); a negative or
 *    NaN input gives 0.
 * Part of core/base: depends on nothing of ours.
 */
#ifndef DMR_BASE_TIMEPS_H
#define DMR_BASE_TIMEPS_H

#include <math.h>
#include <stdint.h>

typedef uint64_t dmr_time_ps_t; /* picoseconds */

#define DMR_PS_PER_NS 1000ull
#define DMR_PS_PER_US 1000000ull
#define DMR_PS_PER_MS 1000000000ull
#define DMR_PS_PER_S 1000000000000ull
#define DMR_TIME_NEVER UINT64_MAX /* a deadline that never comes */

static inline double dmr_ps_to_s(dmr_time_ps_t ps)
{
	return (double)ps / 1e12;
}

static inline double dmr_ps_to_ms(dmr_time_ps_t ps)
{
	return (double)ps / 1e9;
}

static inline double dmr_ps_to_us(dmr_time_ps_t ps)
{
	return (double)ps / 1e6;
}

static inline double dmr_ps_to_ns(dmr_time_ps_t ps)
{
	return (double)ps / 1e3;
}

/* Truncating conversions of a non-negative double (seconds, ms, us, ns). */
static inline dmr_time_ps_t dmr_ps_from_s(double s)
{
	return s > 0 ? (dmr_time_ps_t)(s * 1e12) : 0;
}

static inline dmr_time_ps_t dmr_ps_from_ms(double ms)
{
	return ms > 0 ? (dmr_time_ps_t)(ms * 1e9) : 0;
}

static inline dmr_time_ps_t dmr_ps_from_us(double us)
{
	return us > 0 ? (dmr_time_ps_t)(us * 1e6) : 0;
}

static inline dmr_time_ps_t dmr_ps_from_ns(double ns)
{
	return ns > 0 ? (dmr_time_ps_t)(ns * 1e3) : 0;
}

/* Rounding (to nearest) conversions. */
static inline dmr_time_ps_t dmr_ps_from_s_round(double s)
{
	return s > 0 ? (dmr_time_ps_t)llround(s * 1e12) : 0;
}

static inline dmr_time_ps_t dmr_ps_from_ms_round(double ms)
{
	return ms > 0 ? (dmr_time_ps_t)llround(ms * 1e9) : 0;
}

static inline dmr_time_ps_t dmr_ps_from_us_round(double us)
{
	return us > 0 ? (dmr_time_ps_t)llround(us * 1e6) : 0;
}

/* Wall clock: CLOCK_MONOTONIC in seconds (tv_sec + tv_nsec / 1e9) and in
 * picoseconds (tv_sec * 1e12 + tv_nsec * 1e3, integer). Not for backends/sim
 * or models (no wall clock there). */
double dmr_wall_s(void);
dmr_time_ps_t dmr_mono_ps(void);

#endif /* DMR_BASE_TIMEPS_H */
