/* tests/unit/test_lathist.c - replay/lathist: bucket bounds, the documented
 * relative error (<= 1/256), quantiles against GSL's on sorted data. */
#include <check.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

#include "helpers/suite.h"
#include "replay/lathist.h"

START_TEST(exact_below_256_and_monotone_buckets)
{
	for (uint64_t v = 0; v < 256; v++) {
		ck_assert_uint_eq(dmr_lathist_bucket(v), v);
		ck_assert(dmr_lathist_value((uint32_t)v) == (double)v);
	}
	ck_assert_uint_eq(dmr_lathist_bucket(256), 256);
	ck_assert_uint_eq(dmr_lathist_bucket(257), 256); /* width 2 at [256, 512) */
	ck_assert_uint_eq(dmr_lathist_bucket(258), 257);
	ck_assert_uint_eq(dmr_lathist_bucket(UINT64_MAX), DMR_LATHIST_NBUCKETS - 1);
	uint32_t prev = 0;
	for (uint64_t v = 1; v < (1ull << 40); v += v / 97 + 1) {
		uint32_t b = dmr_lathist_bucket(v);
		ck_assert_uint_ge(b, prev);
		prev = b;
	}
}
END_TEST

START_TEST(relative_error_at_most_1_in_256)
{
	double worst = 0;
	uint64_t s = 88172645463325252ull;
	for (int i = 0; i < 2000000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint64_t v = s >> (s % 60); /* every magnitude */
		double rep = dmr_lathist_value(dmr_lathist_bucket(v));
		double rel = v ? fabs(rep - (double)v) / (double)v : rep;
		if (rel > worst)
			worst = rel;
	}
	ck_assert_msg(worst <= 1.0 / 256 + 1e-12, "worst relative error %g", worst);
	ck_assert_msg(worst > 1.0 / 512, "worst %g: the bound is not tight, test is weak", worst);
}
END_TEST

START_TEST(quantiles_match_gsl_within_bound)
{
	enum { N = 200001 };
	double *x = malloc(N * sizeof(double));
	dmr_lathist_t *h = malloc(sizeof(*h));
	ck_assert(x && h);
	dmr_lathist_init(h);
	uint64_t s = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < N; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		/* latencies 2 .. ~2000 us with a long tail, in ps */
		uint64_t ps =
		    2000000 + (s % 50000000) * (1 + (s >> 60) % 7) * ((s >> 50) % 50 ? 1 : 5);
		x[i] = (double)ps;
		dmr_lathist_add(h, ps);
	}
	ck_assert_uint_eq(h->n, N);
	gsl_sort(x, 1, N);
	const double fs[] = {0, 0.5, 0.9, 0.99, 0.999, 1};
	for (unsigned k = 0; k < sizeof(fs) / sizeof(fs[0]); k++) {
		double ex = gsl_stats_quantile_from_sorted_data(x, 1, N, fs[k]);
		double got = dmr_lathist_quantile(h, fs[k]);
		ck_assert_msg(fabs(got - ex) <= ex / 256, "f %g: hist %f exact %f", fs[k], got, ex);
	}
	/* merge doubles every count; quantiles stay within the bound */
	dmr_lathist_t *h2 = calloc(1, sizeof(*h2));
	ck_assert(h2);
	dmr_lathist_merge(h2, h);
	dmr_lathist_merge(h2, h);
	ck_assert_uint_eq(h2->n, 2 * (uint64_t)N);
	double ex = gsl_stats_quantile_from_sorted_data(x, 1, N, 0.99);
	ck_assert(fabs(dmr_lathist_quantile(h2, 0.99) - ex) <= ex / 256);
	dmr_lathist_t z;
	dmr_lathist_init(&z);
	ck_assert(dmr_lathist_quantile(&z, 0.5) == 0);
	/* the mean: within the bound of gsl_stats_mean; exact below 256 ps */
	double mex = gsl_stats_mean(x, 1, N);
	ck_assert_msg(fabs(dmr_lathist_mean(h) - mex) <= mex / 256, "mean %f exact %f",
		      dmr_lathist_mean(h), mex);
	ck_assert(dmr_lathist_mean(&z) == 0);
	dmr_lathist_add(&z, 10);
	dmr_lathist_add(&z, 20);
	dmr_lathist_add(&z, 36);
	ck_assert(dmr_lathist_mean(&z) == 22.0);
	free(h2);
	free(h);
	free(x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lathist");
	TCase *tc = tcase_create("lathist");
	tcase_add_test(tc, exact_below_256_and_monotone_buckets);
	tcase_add_test(tc, relative_error_at_most_1_in_256);
	tcase_add_test(tc, quantiles_match_gsl_within_bound);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
