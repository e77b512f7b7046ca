/*
 * replay/lathist.h - a fixed-size log-linear latency histogram (HDR style,
 * after Gil Tene's HdrHistogram: every power-of-two range [2^e, 2^(e+1))
 * split into 2^DMR_LATHIST_SUB_BITS equal sub-buckets), so that a run's
 * latency memory does not grow with its length.
 *
 * Values are picoseconds (uint64). Values below 2^(DMR_LATHIST_SUB_BITS+1)
 * = 256 ps get one bucket each (exact); a larger value v in [2^e, 2^(e+1))
 * falls in a bucket of width 2^(e - DMR_LATHIST_SUB_BITS), whose lower
 * bound is >= 2^e, and is represented by the bucket's midpoint. The
 * relative error of a represented value is therefore at most
 * 2^-(DMR_LATHIST_SUB_BITS+1) = 1/256 = 0.39 %, for every value up to
 * UINT64_MAX ps (docs/PERFORMANCE.md "Latency histogram").
 *
 * Size: DMR_LATHIST_NBUCKETS (7,424) uint64 counters = 58 KiB, fixed.
 */
#ifndef DMR_LATHIST_H
#define DMR_LATHIST_H

#include <stdint.h>

#define DMR_LATHIST_SUB_BITS 7				     /* 128 sub-buckets per power of two */
#define DMR_LATHIST_EXACT (1u << (DMR_LATHIST_SUB_BITS + 1)) /* 256: exact below */
#define DMR_LATHIST_NBUCKETS                                                                       \
	(DMR_LATHIST_EXACT + (64 - (DMR_LATHIST_SUB_BITS + 1)) * (1u << DMR_LATHIST_SUB_BITS))

typedef struct dmr_lathist {
	uint64_t n; /* values recorded */
	uint64_t count[DMR_LATHIST_NBUCKETS];
} dmr_lathist_t;

/* Bucket index of v (0 .. DMR_LATHIST_NBUCKETS-1). */
static inline uint32_t dmr_lathist_bucket(uint64_t v)
{
	if (v < DMR_LATHIST_EXACT)
		return (uint32_t)v;
	uint32_t e = 63u - (uint32_t)__builtin_clzll(v); /* >= SUB_BITS + 1 */
	uint32_t mant =
	    (uint32_t)(v >> (e - DMR_LATHIST_SUB_BITS)) & ((1u << DMR_LATHIST_SUB_BITS) - 1u);
	return DMR_LATHIST_EXACT + (e - (DMR_LATHIST_SUB_BITS + 1)) * (1u << DMR_LATHIST_SUB_BITS) +
	       mant;
}

/* Record one value (ps). O(1), no allocation. */
static inline void dmr_lathist_add(dmr_lathist_t *h, uint64_t ps)
{
	h->count[dmr_lathist_bucket(ps)]++;
	h->n++;
}

/* Zero *h. */
void dmr_lathist_init(dmr_lathist_t *h);
/* dst += src (counts summed bucket by bucket). */
void dmr_lathist_merge(dmr_lathist_t *dst, const dmr_lathist_t *src);
/* The value (ps, as a double) representing bucket b: the value itself for
 * an exact bucket, else the bucket's midpoint. */
double dmr_lathist_value(uint32_t b);
/*
 * Quantile f (0 <= f <= 1) in ps, with the interpolation of GSL's
 * gsl_stats_quantile_from_sorted_data (index f*(n-1), linear between the
 * two neighbouring order statistics), each order statistic replaced by its
 * bucket's representative value: the result is within the relative error
 * above of the exact quantile of the recorded values. 0 when h->n == 0.
 */
double dmr_lathist_quantile(const dmr_lathist_t *h, double f);
/* Mean of the recorded values in ps, each replaced by its bucket's
 * representative value (within the relative error above of the exact
 * mean); 0 when h->n == 0. O(DMR_LATHIST_NBUCKETS). */
double dmr_lathist_mean(const dmr_lathist_t *h);

#endif /* DMR_LATHIST_H */
