/*
 * traces/regime.c - parsing of hot-spot regimes (traces/workload.h).
 *
 *   uniform            no hot set
 *   extreme            = hot:1/0.95
 *   alt-extreme        = hot:2/0.92
 *   hot:K/P            K >= 1 hot warehouses / records take fraction P of
 *                      the transactions, 0 < P <= 1
 *   drift:REGIME@Ts    REGIME (not uniform, not drift) whose hot set moves
 *                      every T seconds, T > 0 (e.g. drift:hot:1/0.95@5s)
 *
 * The text is matched exactly (no spaces, case-sensitive); name keeps it as
 * given.
 */
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REGIME_FORMS "uniform, extreme, alt-extreme, hot:K/P or drift:REGIME@Ts"

/* Parse a decimal number: digits with at most one '.', at least one digit
 * (no sign, exponent, hex, inf or nan). 0 on success. */
static int regime_number(const char *s, size_t n, double *v_p)
{
	char tmp[64];
	int digits = 0, dots = 0;
	char *end;

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			digits++;
		else if (s[i] == '.' && !dots)
			dots++;
		else
			return -1;
	}
	if (!digits)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	*v_p = strtod(tmp, &end);
	return *end == '\0' && isfinite(*v_p) ? 0 : -1;
}

/* Parse a regime other than drift from s[0..n). */
static dmr_status_t regime_base(const char *text, const char *s, size_t n, dmr_regime_t *r,
				dmr_err_t *err)
{
#define IS(str) (n == sizeof(str) - 1 && memcmp(s, str, n) == 0)
	if (IS("uniform")) {
		r->uniform = 1;
		r->hot_k = 0;
		r->hot_p = 0.0;
	} else if (IS("extreme")) {
		r->hot_k = 1;
		r->hot_p = 0.95;
	} else if (IS("alt-extreme")) {
		r->hot_k = 2;
		r->hot_p = 0.92;
	} else if (n >= 4 && memcmp(s, "hot:", 4) == 0) {
		const char *k = s + 4, *slash = memchr(k, '/', n - 4);
		size_t kn = slash ? (size_t)(slash - k) : n - 4;
		uint64_t kv = 0;
		double p;

		if (kn == 0 || kn > 10)
			goto err_k;
		for (size_t i = 0; i < kn; i++) {
			if (k[i] < '0' || k[i] > '9')
				goto err_k;
			kv = kv * 10 + (uint64_t)(k[i] - '0');
		}
		if (kv < 1 || kv > UINT32_MAX)
			goto err_k;
		if (!slash)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': missing '/P' in hot:K/P", text);
		if (regime_number(slash + 1, n - 4 - kn - 1, &p))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': P in hot:K/P must be a decimal number",
					   text);
		if (!(p > 0.0 && p <= 1.0))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': P in hot:K/P must be in (0, 1]", text);
		r->hot_k = (uint32_t)kv;
		r->hot_p = p;
	} else {
		return dmr_err_set(err, DMR_ERR_PARSE, "regime '%s': unknown (expected %s)", text,
				   REGIME_FORMS);
	}
#undef IS
	return DMR_OK;

err_k:
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "regime '%s': K in hot:K/P must be an integer in 1 .. %u", text,
			   UINT32_MAX);
}

dmr_status_t dmr_regime_parse(const char *s, dmr_regime_t *r_p, dmr_err_t *err)
{
	dmr_regime_t r;
	size_t n = strlen(s);
	dmr_status_t st;

	memset(&r, 0, sizeof(r));
	if (n == 0)
		return dmr_err_set(err, DMR_ERR_PARSE, "regime '': empty (expected %s)",
				   REGIME_FORMS);
	if (n >= sizeof(r.name))
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "regime '%.40s...': longer than %zu characters", s,
				   sizeof(r.name) - 1);
	memcpy(r.name, s, n + 1);

	if (n >= 6 && memcmp(s, "drift:", 6) == 0) {
		const char *inner = s + 6, *at = strrchr(inner, '@');
		size_t in;

		if (!at)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': missing '@Ts' in drift:REGIME@Ts", s);
		in = (size_t)(at - inner);
		if (in >= 6 && memcmp(inner, "drift:", 6) == 0)
			return dmr_err_set(err, DMR_ERR_PARSE, "regime '%s': nested drift", s);
		st = regime_base(s, inner, in, &r, err);
		if (st)
			return st;
		if (r.uniform)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': uniform has no hot set to drift", s);
		if (n - (size_t)(at + 1 - s) < 2 || s[n - 1] != 's' ||
		    regime_number(at + 1, n - (size_t)(at + 1 - s) - 1, &r.drift_s))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': drift period must be seconds like @5s", s);
		if (!(r.drift_s > 0.0))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "regime '%s': drift period must be > 0 s", s);
	} else {
		st = regime_base(s, s, n, &r, err);
		if (st)
			return st;
	}
	*r_p = r;
	return DMR_OK;
}
