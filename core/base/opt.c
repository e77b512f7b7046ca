/* core/base/opt.c - numeric option values (opt.h). */
#include "opt.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Digits then an optional size suffix; 0, -1 (not a number) or -2 (a
 * number above 2^64 - 1). */
static int scan_u64(const char *s, unsigned flags, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	int big = errno == ERANGE;
	uint64_t mul = 1;
	if ((flags & DMR_OPT_SIZE) && *end) {
		switch (*end) {
		case 'K':
		case 'k':
			mul = 1ull << 10;
			break;
		case 'M':
		case 'm':
			mul = 1ull << 20;
			break;
		case 'G':
		case 'g':
			mul = 1ull << 30;
			break;
		case 'T':
		case 't':
			mul = 1ull << 40;
			break;
		default:
			return -1;
		}
		end++;
		if (end[0] == 'i' && end[1] == 'B')
			end += 2;
		else if (end[0] == 'B')
			end++;
	}
	if (*end)
		return -1;
	if (big || x > UINT64_MAX / mul)
		return -2;
	*v = x * mul;
	return 0;
}

dmr_status_t dmr_opt_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, unsigned flags,
			 uint64_t *v_p, dmr_err_t *err)
{
	uint64_t x;
	int sc = scan_u64(s, flags, &x);
	if (sc == -2)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option %s: %s out of range (%" PRIu64 "..%" PRIu64 ")", opt, s,
				   lo, hi);
	if (sc != 0)
		return dmr_err_set(
		    err, DMR_ERR_PARSE, "option %s: '%s' is not a non-negative integer%s", opt,
		    s ? s : "", flags & DMR_OPT_SIZE ? " (K/M/G/T suffixes: powers of 1024)" : "");
	if (x < lo || x > hi) {
		/* a suffix is a power of 1024: say what it made (100K = 102400) */
		char made[48] = "";
		if (s[strspn(s, "0123456789")])
			snprintf(made, sizeof(made), " = %" PRIu64, x);
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option %s: %s%s out of range (%" PRIu64 "..%" PRIu64 ")", opt,
				   s, made, lo, hi);
	}
	*v_p = x;
	return DMR_OK;
}

dmr_status_t dmr_opt_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, unsigned flags,
			 uint32_t *v_p, dmr_err_t *err)
{
	uint64_t x = 0; /* set on DMR_OK; gcc -O3 cannot see it */
	dmr_status_t st = dmr_opt_u64(opt, s, lo, hi, flags, &x, err);
	if (st == DMR_OK)
		*v_p = (uint32_t)x;
	return st;
}

dmr_status_t dmr_opt_i64(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *v_p,
			 dmr_err_t *err)
{
	char *end;
	if (!s || !*s || *s == ' ' || *s == '+')
		goto bad;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		goto bad;
	if (x < lo || x > hi)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option %s: %s out of range (%" PRId64 "..%" PRId64 ")", opt, s,
				   lo, hi);
	*v_p = x;
	return DMR_OK;
bad:
	return dmr_err_set(err, DMR_ERR_PARSE, "option %s: '%s' is not an integer", opt,
			   s ? s : "");
}

dmr_status_t dmr_opt_double(const char *opt, const char *s, double lo, double hi, unsigned flags,
			    double *v_p, dmr_err_t *err)
{
	char *end;
	if (!s || !*s || *s == ' ')
		goto bad;
	errno = 0;
	double x = strtod(s, &end);
	if (end != s && errno == ERANGE)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option %s: '%s' is beyond a double's range (overflow or "
				   "underflow)",
				   opt, s);
	if (end == s || errno || !isfinite(x))
		goto bad;
	if (flags & DMR_OPT_SECONDS) {
		if (strcmp(end, "ms") == 0)
			x /= 1e3;
		else if (strcmp(end, "us") == 0)
			x /= 1e6;
		else if (strcmp(end, "ns") == 0)
			x /= 1e9;
		else if (*end && strcmp(end, "s") != 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "option %s: '%s': unknown unit '%s' (s, ms, us, ns)",
					   opt, s, end);
	} else if (*end) {
		goto bad;
	}
	int below = (flags & DMR_OPT_LO_OPEN) ? !(x > lo) : !(x >= lo);
	if (below || !(x <= hi))
		return dmr_err_set(err, DMR_ERR_PARSE, "option %s: %s out of range %c%g, %g]", opt,
				   s, (flags & DMR_OPT_LO_OPEN) ? '(' : '[', lo, hi);
	*v_p = x;
	return DMR_OK;
bad:
	return dmr_err_set(err, DMR_ERR_PARSE, "option %s: '%s' is not a number", opt, s ? s : "");
}

uint64_t dmr_phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
}

dmr_status_t dmr_opt_fits_memory(const char *opts, uint64_t need_bytes, const char *what,
				 dmr_err_t *err)
{
	uint64_t have = dmr_phys_mem();
	if (need_bytes <= have)
		return DMR_OK;
	return dmr_err_set(err, DMR_ERR_RANGE,
			   "option %s: needs %" PRIu64 " bytes (%.1f GiB: %s), more than this "
			   "machine's memory (%" PRIu64 " bytes)",
			   opts, need_bytes, (double)need_bytes / 1073741824.0, what, have);
}

dmr_status_t dmr_opt_refused(const char *cmd, int ch, char *const *argv, const struct option *opts,
			     dmr_err_t *err)
{
	const char *a = optind > 0 && argv ? argv[optind - 1] : NULL;
	if (a && a[0] == '-' && a[1] == '-' && a[2]) { /* a long option */
		int n = (int)strcspn(a, "=");
		/* optopt is the option's value when it was known, 0 when not */
		if (ch == ':' || (optopt != 0 && a[n] == '\0'))
			return dmr_err_set(err, DMR_ERR_PARSE, "option %.*s needs a value", n, a);
		if (optopt != 0)
			return dmr_err_set(err, DMR_ERR_PARSE, "option %.*s takes no value", n, a);
		/* an abbreviation of several: getopt_long returns the same '?' */
		char names[200] = "";
		size_t len = 0;
		int k = 0;
		for (size_t i = 0; opts && opts[i].name; i++) {
			if (strncmp(opts[i].name, a + 2, (size_t)n - 2) != 0)
				continue;
			k++;
			if (len < sizeof(names))
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s--%s",
							k > 1 ? ", " : "", opts[i].name);
		}
		if (k > 1)
			return dmr_err_set(err, DMR_ERR_PARSE, "option %.*s is ambiguous (%s)", n,
					   a, names);
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "unknown option '%.*s' (see dmreplay %s --help)", n, a, cmd);
	}
	if (optopt > 0 && optopt < 128 && isgraph(optopt)) { /* a short one, maybe in -abc */
		if (ch == ':')
			return dmr_err_set(err, DMR_ERR_PARSE, "option -%c needs a value", optopt);
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "unknown option '-%c' (see dmreplay %s --help)", optopt, cmd);
	}
	return dmr_err_set(err, DMR_ERR_PARSE, "unknown option '%s' (see dmreplay %s --help)",
			   a ? a : "?", cmd);
}
