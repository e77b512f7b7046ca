/*
 * traces/trace_parse.h - the CSV reader's fast path (trace_read.c): the
 * split of a plain line in place (rd_fast_split) and the scanners of its
 * fields (names, integers, K.F references, the act column), inline. Each
 * gives exactly what the general path (libcsv, parse_u64/parse_i64,
 * parse_ref, parse_act) gives for what it accepts, and sends anything else
 * there, so that messages do not change. Private to traces/.
 */
#ifndef DMR_TRACE_PARSE_H
#define DMR_TRACE_PARSE_H

#include "trace_impl.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Bytes after the read buffer (and rowbuf) that rd_fast_split and name_eq
 * may read (not use). */
#define TRACE_SLACK 64

/* The first c in s[0, n), or NULL: memchr inline, for the short fields of a
 * row (a libc call per field was 10 % of a row's cycles). */
static inline const char *find_ch(const char *s, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == c)
			return s + i;
	return NULL;
}

/* 1 when the name (a header name: DMR_TRACE_NAME_MAX bytes, NUL-padded)
 * equals the field s[0, n), n < DMR_TRACE_NAME_MAX, s[n] its NUL: the n + 1
 * bytes compared 8 at a time (s may be read up to 7 bytes further: buf and
 * rowbuf have TRACE_SLACK more). */
static inline int name_eq(const char *name, const char *s, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t k = n + 1;
	for (size_t i = 0; i < k; i += 8) {
		uint64_t a, b;
		memcpy(&a, name + i, 8);
		memcpy(&b, s + i, 8);
		a ^= b;
		if (k - i < 8)
			a &= (1ull << (8 * (k - i))) - 1;
		if (a)
			return 0;
	}
	return 1;
#else
	for (size_t i = 0; i < n; i++)
		if (name[i] != s[i])
			return 0;
	return name[n] == '\0';
#endif
}

/* The digits at *p_p before e (1 to 18 of them: no overflow) into *v_p,
 * *p_p moved past them; -1 when there are none or more (the callers then
 * take the general path, whose messages name the field). */
static inline int scan_digits(const char **p_p, const char *e, uint64_t *v_p)
{
	const char *p = *p_p, *s = p;
	uint64_t v = 0;
	unsigned d;

	while (p < e && (d = (unsigned)(unsigned char)*p - '0') <= 9) {
		v = v * 10 + d;
		p++;
	}
	if (p == s || p - s > 18)
		return -1;
	*p_p = p;
	*v_p = v;
	return 0;
}

/* "K.F" at *p_p before e (K <= INT16_MAX, F <= UINT16_MAX): 0 with *p_p past
 * it, or -1. */
static inline int scan_ref(const char **p_p, const char *e, dmr_trace_val_t *v)
{
	uint64_t k, f;

	if (scan_digits(p_p, e, &k) || k > INT16_MAX || *p_p == e || **p_p != '.')
		return -1;
	++*p_p;
	if (scan_digits(p_p, e, &f) || f > UINT16_MAX)
		return -1;
	v->op = (int16_t)k;
	v->field = (uint16_t)f;
	v->lit = 0;
	return 0;
}

/*
 * The act column in one pass: 1 to DMR_TRACE_MAX_ACTS actions "set:F:V" /
 * "add:F:V" separated by ';', V an i64 of at most 18 digits or "@K.F", into
 * o->acts, o->nacts. 0, or -1 when the text is anything else: the caller
 * then parses it action by action (parse_act), which gives the same fields
 * for whatever this accepts and names what is wrong in the rest. (Finding
 * each ';' and ':' first and then parsing was 15 % of a row's cycles.)
 */
static inline int scan_acts(const char *s, const char *e, dmr_trace_op_t *o)
{
	uint32_t na = 0;
	uint64_t u;

	for (;;) {
		dmr_trace_act_t *a = &o->acts[na];
		if (na == DMR_TRACE_MAX_ACTS || e - s < 7)
			return -1;
		if (memcmp(s, "set:", 4) == 0)
			a->kind = DMR_TACT_SET;
		else if (memcmp(s, "add:", 4) == 0)
			a->kind = DMR_TACT_ADD;
		else
			return -1;
		s += 4;
		if (scan_digits(&s, e, &u) || u > UINT16_MAX || s == e || *s != ':')
			return -1;
		a->field = (uint16_t)u;
		s++;
		if (s < e && *s == '@') {
			s++;
			if (scan_ref(&s, e, &a->val))
				return -1;
		} else {
			int neg = s < e && *s == '-';
			s += neg;
			if (scan_digits(&s, e, &u))
				return -1;
			a->val.lit = neg ? -(int64_t)u : (int64_t)u;
			a->val.op = -1;
			a->val.field = 0;
		}
		na++;
		if (s == e)
			break;
		if (*s != ';')
			return -1;
		s++;
	}
	o->nacts = (uint8_t)na;
	return 0;
}

/* parse_u64 of a row's field f[0, n), f[n] its NUL: up to 19 digits in a
 * loop that the NUL ends (no bounds test per digit); same returns. */
static inline int field_u64(const char *f, size_t n, uint64_t max, uint64_t *v_p)
{
	if (n == 0 || n > 19)
		return parse_u64(f, n, max, v_p);
	const char *p = f;
	uint64_t v = 0;
	unsigned d;
	while ((d = (unsigned)(unsigned char)*p - '0') <= 9) {
		v = v * 10 + d;
		p++;
	}
	if ((size_t)(p - f) != n)
		return -1;
	if (v > max)
		return -2;
	*v_p = v;
	return 0;
}

/* parse_i64 of a row's field (as field_u64). */
static inline int field_i64(const char *f, size_t n, int64_t *v_p)
{
	if (n == 0 || n > 18 || f[0] == '-')
		return parse_i64(f, n, v_p);
	uint64_t u;
	int rc = field_u64(f, n, INT64_MAX, &u);
	if (rc == 0)
		*v_p = (int64_t)u;
	return rc;
}

/*
 * The common row, split without libcsv: a line without '"' or '\r' and with
 * exactly TRACE_NCOLS - 1 commas. libcsv (csv_parse, CSV_STRICT, default
 * space function) would give the same fields: unquoted, each trimmed of
 * spaces and tabs at both ends. Any other line (quotes, CR, a wrong field
 * count) goes to libcsv, so that its error messages are unchanged.
 * Returns 1 when the row was split in place (s[0, n] is the line in the
 * read buffer, s[n] its '\n': a NUL is written after each field;
 * fptr, flen, nfields set), 0 when libcsv must parse the line (s
 * untouched). One pass over the bytes (SSE2: masks of 16 at a time).
 * Profile (bench_trace, TPC-C 200 k): libcsv's byte-at-a-time
 * state machine and its per-field callbacks were 60 % of a row's cycles;
 * then the memchr calls per field of the first fast split, 30 %.
 */
static inline int rd_fast_split(dmr_trace_reader_t *r, char *s, size_t n)
{
	uint32_t comma[TRACE_NCOLS];
	uint32_t k = 0;
	int spaces = 0;

#define SPLIT_BYTE(i)                                                                              \
	do {                                                                                       \
		unsigned char c_ = (unsigned char)s[i];                                            \
		if (c_ == ',') {                                                                   \
			if (k == TRACE_NCOLS - 1)                                                  \
				return 0;                                                          \
			comma[k++] = (uint32_t)(i);                                                \
		} else if (c_ == '"' || c_ == '\r') {                                              \
			return 0;                                                                  \
		} else if (c_ == ' ' || c_ == '\t') {                                              \
			spaces = 1;                                                                \
		}                                                                                  \
	} while (0)
#ifdef __SSE2__
	/* 16 bytes at a time: masks of the commas, of the bytes that send the
	 * line to libcsv and of the spaces, then one step per comma. May read
	 * up to 15 bytes past the line: buf has TRACE_SLACK more. */
	const __m128i vcomma = _mm_set1_epi8(','), vquote = _mm_set1_epi8('"');
	const __m128i vcr = _mm_set1_epi8('\r'), vsp = _mm_set1_epi8(' '),
		      vtab = _mm_set1_epi8('\t');
	for (size_t i = 0; i < n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned keep = n - i < 16 ? (1u << (n - i)) - 1 : 0xFFFFu;
		unsigned mc = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vcomma)) & keep;
		unsigned mx = (unsigned)_mm_movemask_epi8(
				  _mm_or_si128(_mm_cmpeq_epi8(v, vquote), _mm_cmpeq_epi8(v, vcr))) &
			      keep;
		unsigned ms = (unsigned)_mm_movemask_epi8(
				  _mm_or_si128(_mm_cmpeq_epi8(v, vsp), _mm_cmpeq_epi8(v, vtab))) &
			      keep;
		if (mx)
			return 0;
		spaces |= ms != 0;
		while (mc) {
			if (k == TRACE_NCOLS - 1)
				return 0;
			comma[k++] = (uint32_t)(i + (size_t)__builtin_ctz(mc));
			mc &= mc - 1;
		}
	}
#else
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ',')
			SPLIT_BYTE(i);
#endif
#undef SPLIT_BYTE
	if (k != TRACE_NCOLS - 1)
		return 0;
	comma[k] = (uint32_t)n;
	uint32_t fs = 0;
	for (k = 0; k < TRACE_NCOLS; k++) {
		uint32_t fe = comma[k], next = fe + 1;
		if (spaces) {
			while (fs < fe && (s[fs] == ' ' || s[fs] == '\t'))
				fs++;
			while (fe > fs && (s[fe - 1] == ' ' || s[fe - 1] == '\t'))
				fe--;
		}
		r->fptr[k] = s + fs;
		r->flen[k] = fe - fs;
		s[fe] = '\0';
		fs = next;
	}
	r->nfields = TRACE_NCOLS;
	return 1;
}

#endif /* DMR_TRACE_PARSE_H */
