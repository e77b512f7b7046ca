/*
 * replay/report/stats.c - the statistics of a report: medians, percentile-
 * bootstrap intervals of a median and of a ratio of medians (gsl), and the
 * recovery times after phase changes (contract in replay/report.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "report_impl.h"

double dmr_report_median(const double *x, size_t n)
{
	double small[64];
	double *s = n <= 64 ? small : malloc(n * sizeof(double));
	if (!s)
		return NAN;
	memcpy(s, x, n * sizeof(double));
	gsl_sort(s, 1, n);
	double m = gsl_stats_median_from_sorted_data(s, 1, n);
	if (s != small)
		free(s);
	return m;
}

/* median of a resample of x (n values) drawn with r; tmp holds n */
static double resample_median(gsl_rng *r, const double *x, size_t n, double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = x[gsl_rng_uniform_int(r, n)];
	gsl_sort(tmp, 1, n);
	return gsl_stats_median_from_sorted_data(tmp, 1, n);
}

static dmr_status_t boot(const double *x, size_t nx, const double *b, size_t nb, unsigned resamples,
			 uint64_t seed, dmr_report_ci_t *ci_p)
{
	if (nx == 0 || resamples == 0 || (b && nb == 0))
		return DMR_ERR_INVALID;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double *stat = malloc(resamples * sizeof(double));
	double *tmp = malloc((nx > nb ? nx : nb) * sizeof(double));
	if (!r || !stat || !tmp) {
		gsl_rng_free(r);
		free(stat);
		free(tmp);
		return DMR_ERR_NOMEM;
	}
	gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
	for (unsigned i = 0; i < resamples; i++) {
		double m = resample_median(r, x, nx, tmp);
		if (b)
			m /= resample_median(r, b, nb, tmp);
		stat[i] = m;
	}
	gsl_sort(stat, 1, resamples);
	dmr_report_ci_t ci;
	ci.est = dmr_report_median(x, nx);
	if (b)
		ci.est /= dmr_report_median(b, nb);
	ci.lo = gsl_stats_quantile_from_sorted_data(stat, 1, resamples, 0.025);
	ci.hi = gsl_stats_quantile_from_sorted_data(stat, 1, resamples, 0.975);
	gsl_rng_free(r);
	free(stat);
	free(tmp);
	*ci_p = ci;
	return DMR_OK;
}

dmr_status_t dmr_report_boot_median(const double *x, size_t n, unsigned resamples, uint64_t seed,
				    dmr_report_ci_t *ci_p)
{
	return boot(x, n, NULL, 0, resamples, seed, ci_p);
}

dmr_status_t dmr_report_boot_ratio(const double *x, size_t nx, const double *b, size_t nb,
				   unsigned resamples, uint64_t seed, dmr_report_ci_t *ci_p)
{
	if (!b)
		return DMR_ERR_INVALID;
	return boot(x, nx, b, nb, resamples, seed, ci_p);
}

size_t dmr_report_recovery(const double *t, const double *tps, const double *phase, size_t n,
			   double frac, double *out, size_t max)
{
	size_t nshift = 0, pstart = 0;
	for (size_t i = 1; i < n; i++) {
		if (phase[i] == phase[i - 1])
			continue;
		size_t plen = i - pstart;
		size_t w = plen / 2;
		if (w > 10)
			w = 10;
		if (w < 1)
			w = 1;
		double level = 0;
		for (size_t k = i - w; k < i; k++)
			level += tps[k];
		level /= (double)w;
		size_t next = i + 1;
		while (next < n && phase[next] == phase[i])
			next++;
		double rec = -1;
		for (size_t k = i; k < next; k++)
			if (tps[k] >= frac * level) {
				double end =
				    k + 1 < n ? t[k + 1] : t[k] + (k ? t[k] - t[k - 1] : 0);
				rec = end - t[i];
				break;
			}
		if (nshift < max)
			out[nshift] = rec;
		nshift++;
		pstart = i;
	}
	return nshift;
}
