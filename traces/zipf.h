/*
 * traces/zipf.h - Zipfian draws as YCSB makes them (header-only).
 *
 * Source: J. Gray, P. Sundaresan, S. Englert, K. Baclawski, P. Weinberger,
 * "Quickly Generating Billion-Record Synthetic Databases", SIGMOD 1994
 * (the closed-form approximation of a Zipf draw), in the form of YCSB's
 * core/.../generator/ZipfianGenerator.java, ScrambledZipfianGenerator.java
 * and SkewedLatestGenerator.java. The uniform variate comes from a GSL
 * generator passed in, so draws are reproducible from the seed.
 *
 * dmr_zipf_t: item min is the most popular, min+1 the next, ... (theta in
 * [0, 1) only: the closed form divides by 1 - theta, and is an
 * approximation whose error grows as theta nears 1; YCSB's constant is
 * 0.99). Initialisation sums zeta over all items (O(items)) unless zetan is
 * given. For any theta >= 0, 1 and above included, use dmr_zipf_ri_t below.
 *
 * dmr_zipf_scrambled_t: YCSB's ScrambledZipfian: a Zipf(0.99) draw over
 * 10^10 items with the precomputed zeta (26.46902820178302), hashed with
 * 64-bit FNV-1a onto [min, max], so popular items are scattered. (Recent
 * YCSB raised ITEM_COUNT to 10^16 but kept the zeta of 10^10; we keep the
 * consistent original pair.)
 */
#ifndef DMR_ZIPF_H
#define DMR_ZIPF_H

#include <math.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#define DMR_ZIPF_YCSB_THETA 0.99
#define DMR_ZIPF_SCRAMBLED_ITEMS UINT64_C(10000000000)
#define DMR_ZIPF_SCRAMBLED_ZETAN 26.46902820178302

typedef struct dmr_zipf {
	uint64_t base;	       /* smallest item */
	uint64_t items;	       /* item count given at init (YCSB keeps it for eta) */
	uint64_t countforzeta; /* item count zetan was summed over */
	double theta, alpha, zetan, eta, zeta2theta;
} dmr_zipf_t;

/* sum_{i=st}^{n-1} 1/(i+1)^theta + initial (YCSB zetastatic). */
static inline double dmr_zipf_zeta(uint64_t st, uint64_t n, double theta, double initial)
{
	double sum = initial;

	for (uint64_t i = st; i < n; i++)
		sum += 1.0 / pow((double)(i + 1), theta);
	return sum;
}

/* Zipf over [min, max] with constant theta and a known zeta(max-min+1). */
static inline void dmr_zipf_init_zetan(dmr_zipf_t *z, uint64_t min, uint64_t max, double theta,
				       double zetan)
{
	z->base = min;
	z->items = max - min + 1;
	z->countforzeta = z->items;
	z->theta = theta;
	z->zeta2theta = dmr_zipf_zeta(0, 2, theta, 0.0);
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = zetan;
	z->eta = (1.0 - pow(2.0 / (double)z->items, 1.0 - theta)) / (1.0 - z->zeta2theta / zetan);
}

/* Zipf over [min, max] (max > min), summing zeta: O(max - min). */
static inline void dmr_zipf_init(dmr_zipf_t *z, uint64_t min, uint64_t max, double theta)
{
	dmr_zipf_init_zetan(z, min, max, theta, dmr_zipf_zeta(0, max - min + 1, theta, 0.0));
}

/*
 * Next item in [base, base + itemcount) (YCSB nextLong(itemcount)): when
 * itemcount grew since the last call, zeta is extended incrementally
 * (never shrunk, as YCSB with allowitemcountdecrease=false).
 */
static inline uint64_t dmr_zipf_next_n(dmr_zipf_t *z, gsl_rng *r, uint64_t itemcount)
{
	double u, uz;

	if (itemcount > z->countforzeta) {
		z->zetan = dmr_zipf_zeta(z->countforzeta, itemcount, z->theta, z->zetan);
		z->countforzeta = itemcount;
		z->eta = (1.0 - pow(2.0 / (double)z->items, 1.0 - z->theta)) /
			 (1.0 - z->zeta2theta / z->zetan);
	}
	u = gsl_rng_uniform(r);
	uz = u * z->zetan;
	if (uz < 1.0)
		return z->base;
	if (uz < 1.0 + pow(0.5, z->theta))
		return z->base + 1;
	return z->base + (uint64_t)((double)itemcount * pow(z->eta * u - z->eta + 1.0, z->alpha));
}

/* Next item in [base, base + items). */
static inline uint64_t dmr_zipf_next(dmr_zipf_t *z, gsl_rng *r)
{
	return dmr_zipf_next_n(z, r, z->items);
}

/* YCSB Utils.fnvhash64: FNV-1a over the 8 little-endian bytes, then |x|. */
static inline uint64_t dmr_zipf_fnv64(uint64_t val)
{
	uint64_t h = UINT64_C(0xCBF29CE484222325);

	for (int i = 0; i < 8; i++) {
		h ^= val & 0xff;
		val >>= 8;
		h *= UINT64_C(1099511628211);
	}
	/* Java Math.abs on the signed value */
	return (h >> 63) ? (uint64_t)0 - h : h;
}

typedef struct dmr_zipf_scrambled {
	dmr_zipf_t gen;
	uint64_t min, itemcount;
} dmr_zipf_scrambled_t;

/* ScrambledZipfian over [min, max] (YCSB constant 0.99). O(1). */
static inline void dmr_zipf_scrambled_init(dmr_zipf_scrambled_t *s, uint64_t min, uint64_t max)
{
	dmr_zipf_init_zetan(&s->gen, 0, DMR_ZIPF_SCRAMBLED_ITEMS, DMR_ZIPF_YCSB_THETA,
			    DMR_ZIPF_SCRAMBLED_ZETAN);
	s->min = min;
	s->itemcount = max - min + 1;
}

static inline uint64_t dmr_zipf_scrambled_next(dmr_zipf_scrambled_t *s, gsl_rng *r)
{
	return s->min + dmr_zipf_fnv64(dmr_zipf_next(&s->gen, r)) % s->itemcount;
}

/*
 * Exact Zipf(theta) over n items, any theta >= 0 (theta = 1 and above
 * included): P(item k) = (k+1)^-theta / zeta(n, theta), k in [0, n), item 0
 * the most popular. Method: rejection-inversion, W. Hormann and G.
 * Derflinger, "Rejection-inversion to generate variates from monotone
 * discrete distributions", ACM TOMACS 6(3), 1996 (the formulation of
 * Apache Commons RNG's RejectionInversionZipfSampler): invert the integral
 * H of the hat x^-theta over [0.5, n + 0.5], round, and accept with a
 * squeeze; the expected number of uniforms per draw is below 1.1 for every
 * theta and n. O(1) initialisation and memory, so n may be 10^10. The
 * uniforms come from the gsl_rng passed in. tests/unit/test_gen_wl.c
 * compares the measured frequency of the top items with the exact
 * probabilities for theta 0.99, 1.0 and 1.22.
 */
typedef struct dmr_zipf_ri {
	uint64_t n;
	double theta;
	double hx1; /* H(1.5) - 1 */
	double hn;  /* H(n + 0.5) */
	double s;   /* squeeze: 2 - Hinv(H(2.5) - h(2)) */
} dmr_zipf_ri_t;

/* log1p(x) / x and expm1(x) / x, continuous at 0 (the theta = 1 limit). */
static inline double dmr_zipf_ri_h1(double x)
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x / 3.0);
}
static inline double dmr_zipf_ri_h2(double x)
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0);
}

/* H(x) = integral of t^-theta: (x^(1-theta) - 1) / (1 - theta), ln x at 1. */
static inline double dmr_zipf_ri_H(const dmr_zipf_ri_t *z, double x)
{
	double lx = log(x);
	return dmr_zipf_ri_h2((1.0 - z->theta) * lx) * lx;
}
static inline double dmr_zipf_ri_Hinv(const dmr_zipf_ri_t *z, double y)
{
	double t = y * (1.0 - z->theta);
	if (t < -1.0)
		t = -1.0; /* rounding at the far end for theta > 1 */
	return exp(dmr_zipf_ri_h1(t) * y);
}
static inline double dmr_zipf_ri_hat(const dmr_zipf_ri_t *z, double x)
{
	return exp(-z->theta * log(x));
}

/* n >= 1 items, theta >= 0. */
static inline void dmr_zipf_ri_init(dmr_zipf_ri_t *z, uint64_t n, double theta)
{
	z->n = n;
	z->theta = theta;
	z->hx1 = dmr_zipf_ri_H(z, 1.5) - 1.0;
	z->hn = dmr_zipf_ri_H(z, (double)n + 0.5);
	z->s = 2.0 - dmr_zipf_ri_Hinv(z, dmr_zipf_ri_H(z, 2.5) - dmr_zipf_ri_hat(z, 2.0));
}

/* Next item in [0, n). */
static inline uint64_t dmr_zipf_ri_next(const dmr_zipf_ri_t *z, gsl_rng *r)
{
	for (;;) {
		double u = z->hn + gsl_rng_uniform(r) * (z->hx1 - z->hn);
		double x = dmr_zipf_ri_Hinv(z, u);
		double kd = floor(x + 0.5);
		uint64_t k;

		if (kd < 1.0)
			kd = 1.0;
		else if (kd > (double)z->n)
			kd = (double)z->n;
		k = (uint64_t)kd;
		if (kd - x <= z->s || u >= dmr_zipf_ri_H(z, kd + 0.5) - dmr_zipf_ri_hat(z, kd))
			return k - 1;
	}
}

#endif /* DMR_ZIPF_H */
