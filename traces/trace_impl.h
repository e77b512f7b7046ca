/*
 * traces/trace_impl.h - what the trace reader (trace_read.c), the writer
 * (trace_write.c) and the builders (trace.c) share: the format's constants,
 * the column table, the integer parsers and formatters, the name checks and
 * the static checks of one op (dmr_trace_check_op). Private to traces/.
 */
#ifndef DMR_TRACE_IMPL_H
#define DMR_TRACE_IMPL_H

#include "trace.h"

#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACE_CHUNK (256u * 1024u)   /* read / write buffer */
#define TRACE_LINE_MAX (64u * 1024u) /* longest accepted line, '\n' excluded */
#define TRACE_NCOLS 13
#define TRACE_PARAM_VAL_MAX 128 /* sizeof(dmr_trace_param_t.val) */
#define TRACE_REGIME_MAX 64	/* sizeof(dmr_trace_hdr_t.regime) */
#define TRACE_ACT_POISON 0xFF	/* dmr_trace_act_t.kind after misuse */
#define TRACE_ROW_MAX 1024	/* longest row the writer can produce */

static const char trace_magic[] = "# dmreplay-trace v";
static const char trace_columns[] = "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv";

enum {
	COL_TXN,
	COL_TYPE,
	COL_ROUND,
	COL_OP,
	COL_TABLE,
	COL_KEY,
	COL_DEP,
	COL_LO,
	COL_HI,
	COL_COUNT,
	COL_GUARD,
	COL_ACT,
	COL_XV,
};

static const char *const trace_colname[TRACE_NCOLS] = {
    "txn", "type", "round", "op", "table", "key", "dep", "lo", "hi", "count", "guard", "act", "xv",
};

/* ---- small helpers shared by reader and writer ------------------------ */

/* Parse an unsigned decimal (digits only, at least one) not above max.
 * Returns 0, -1 (not a number) or -2 (out of range). */
static inline int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *v_p)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
			/* still reject "123x" as garbage, not as overflow */
			for (i++; i < n; i++)
				if ((unsigned)(unsigned char)s[i] - '0' > 9)
					return -1;
			return -2;
		}
	}
	if (v > max)
		return -2;
	*v_p = v;
	return 0;
}

/* Parse a signed decimal: optional '-', digits. Same returns as parse_u64. */
static inline int parse_i64(const char *s, size_t n, int64_t *v_p)
{
	int neg = n > 0 && s[0] == '-';
	uint64_t u;
	int rc = parse_u64(s + neg, n - (size_t)neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u);

	if (rc)
		return rc;
	if (!neg)
		*v_p = (int64_t)u;
	else if (u == 0)
		*v_p = 0;
	else
		*v_p = -(int64_t)(u - 1) - 1;
	return 0;
}

static inline char *fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static inline char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, 0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

/* NULL when s[0..n) is a valid name (FORMAT.md "Names"), else the reason. */
static inline const char *name_problem(const char *s, size_t n)
{
	if (n == 0)
		return "empty name";
	if (n >= DMR_TRACE_NAME_MAX)
		return "name longer than 31 characters";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c >= 0x7f || c == ',' || c == '"' || c == ';' || c == '#')
			return "name contains a space, control or non-ASCII character, or one of , "
			       "\" ; #";
	}
	return NULL;
}

/* NULL when s is valid free text (regime, param value), else the reason. */
static inline const char *text_problem(const char *s, size_t n, size_t max)
{
	if (n >= max)
		return "text too long";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < ' ' || c == 0x7f)
			return "text contains a control character";
	}
	return NULL;
}

static inline int lookup_name(const char (*names)[DMR_TRACE_NAME_MAX], uint32_t n, const char *s,
			      size_t len)
{
	if (len >= DMR_TRACE_NAME_MAX)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(names[i], s, len) == 0 && names[i][len] == '\0')
			return (int)i;
	return -1;
}

static inline uint32_t table_words(const dmr_trace_hdr_t *h, int table)
{
	return h->tables[table].payload_bytes / 8;
}

/*
 * Static checks of op i of t against h and ops 0..i-1 (FORMAT.md "Checks"),
 * shared by reader and writer. Returns 0, or -1 with *field_p the column
 * name and the reason in why.
 */
int dmr_trace_check_op(const dmr_trace_hdr_t *h, const dmr_trace_txn_t *t, uint32_t i,
		       const char **field_p, char *why, size_t whysz);

#endif /* DMR_TRACE_IMPL_H */
