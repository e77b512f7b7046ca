/* replay/lathist.c - the log-linear latency histogram (lathist.h). */
#include "lathist.h"

#include <string.h>

void dmr_lathist_init(dmr_lathist_t *h)
{
	memset(h, 0, sizeof(*h));
}

void dmr_lathist_merge(dmr_lathist_t *dst, const dmr_lathist_t *src)
{
	for (uint32_t b = 0; b < DMR_LATHIST_NBUCKETS; b++)
		dst->count[b] += src->count[b];
	dst->n += src->n;
}

double dmr_lathist_value(uint32_t b)
{
	if (b < DMR_LATHIST_EXACT)
		return (double)b;
	uint32_t k = b - DMR_LATHIST_EXACT;
	uint32_t e = k / (1u << DMR_LATHIST_SUB_BITS) + DMR_LATHIST_SUB_BITS + 1;
	uint32_t mant = k % (1u << DMR_LATHIST_SUB_BITS);
	double width = (double)(1ull << (e - DMR_LATHIST_SUB_BITS));
	double lo = (double)(1ull << e) + (double)mant * width;
	return lo + width / 2;
}

/* Representative value of order statistic i (0-based) of the recorded
 * values; *b_p, *below_p: a cursor (bucket, values in buckets before it)
 * that only moves forward, so two nearby statistics cost one scan. */
static double order_stat(const dmr_lathist_t *h, uint64_t i, uint32_t *b_p, uint64_t *below_p)
{
	uint32_t b = *b_p;
	uint64_t below = *below_p;

	while (b < DMR_LATHIST_NBUCKETS - 1 && below + h->count[b] <= i) {
		below += h->count[b];
		b++;
	}
	*b_p = b;
	*below_p = below;
	return dmr_lathist_value(b);
}

double dmr_lathist_quantile(const dmr_lathist_t *h, double f)
{
	if (h->n == 0)
		return 0;
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	/* as gsl_stats_quantile_from_sorted_data (GSL statistics/quantiles_source.c) */
	double index = f * (double)(h->n - 1);
	uint64_t lhs = (uint64_t)index;
	double delta = index - (double)lhs;
	uint32_t b = 0;
	uint64_t below = 0;
	double lo = order_stat(h, lhs, &b, &below);
	if (lhs == h->n - 1 || delta == 0)
		return lo;
	double hi = order_stat(h, lhs + 1, &b, &below);
	return (1 - delta) * lo + delta * hi;
}

double dmr_lathist_mean(const dmr_lathist_t *h)
{
	if (h->n == 0)
		return 0;
	double s = 0;
	for (uint32_t b = 0; b < DMR_LATHIST_NBUCKETS; b++)
		if (h->count[b])
			s += (double)h->count[b] * dmr_lathist_value(b);
	return s / (double)h->n;
}
