/*
 * traces/gen.h - plumbing shared by the trace generators (tpcc.c,
 * smallbank.c, ycsb.c): the per-transaction emit callback, the common
 * command-line options (--txns --seed -o --regime --help), regime draws,
 * transaction-building shorthands and the file sink.
 *
 * Header-only (static inline) so that it needs no build-system change; it is
 * private to the generators and their tests. Nothing here prints except the
 * option parsers and dmr_gen_write_file(), which are command-line helpers.
 *
 * Determinism: every random draw goes through the gsl_rng handed in (the
 * generators use gsl_rng_mt19937 seeded with --seed); nothing reads the
 * clock or libc's rand().
 */
#ifndef DMR_GEN_H
#define DMR_GEN_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "trace.h"
#include "workload.h"

/*
 * Receives each generated transaction, in order. txn is owned by the
 * generator and reused after the call returns (copy what you keep). A
 * non-OK return stops the generator, which returns that status unchanged;
 * the callback fills err.
 */
typedef dmr_status_t (*dmr_gen_emit_func_t)(void *arg, const dmr_trace_txn_t *txn, dmr_err_t *err);

/* A generator run bound to its configuration (for dmr_gen_write_file). */
typedef dmr_status_t (*dmr_gen_run_func_t)(void *ctx, dmr_gen_emit_func_t emit, void *emit_arg,
					   dmr_err_t *err);

/* Options every generator accepts. */
typedef struct dmr_gen_common {
	uint64_t txns; /* --txns; valid when txns_set */
	int txns_set;
	uint64_t seed;	     /* --seed, default 1 */
	const char *out;     /* -o FILE (argv storage, not copied) */
	dmr_regime_t regime; /* --regime, default uniform */
	int regime_set;
} dmr_gen_common_t;

/* getopt_long table entries for the common options; short codes 'n' 's'
 * 'o' 'r' 'h'. Generator-specific options use codes >= 256. */
#define DMR_GEN_COMMON_LONGOPTS                                                                    \
	{"txns", required_argument, NULL, 'n'}, {"seed", required_argument, NULL, 's'},            \
	    {"output", required_argument, NULL, 'o'}, {"regime", required_argument, NULL, 'r'},    \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}
#define DMR_GEN_COMMON_SHORTOPTS "o:h"

/* The uniform regime (no hot set). */
static inline void dmr_gen_regime_uniform(dmr_regime_t *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "uniform");
	r->uniform = 1;
}

static inline void dmr_gen_common_init(dmr_gen_common_t *cm)
{
	memset(cm, 0, sizeof(*cm));
	cm->seed = 1;
	dmr_gen_regime_uniform(&cm->regime);
}

/*
 * Parse an unsigned decimal integer option value in [min, max].
 * Prints "PROG: --OPT: 'S' is not an integer in [min, max]" and returns -1
 * on a bad value; 0 and *v_p set on success.
 */
static inline int dmr_gen_parse_u64(const char *prog, const char *opt, const char *s, uint64_t min,
				    uint64_t max, uint64_t *v_p)
{
	char *end = NULL;
	unsigned long long v;

	errno = 0;
	if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		goto bad;
	*v_p = v;
	return 0;
bad:
	fprintf(stderr, "%s: --%s: '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]\n", prog,
		opt, s ? s : "", min, max);
	return -1;
}

/* As dmr_gen_parse_u64 for a real value in [min, max]. */
static inline int dmr_gen_parse_double(const char *prog, const char *opt, const char *s, double min,
				       double max, double *v_p)
{
	char *end = NULL;
	double v;

	errno = 0;
	if (s == NULL || *s == '\0')
		goto bad;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= min && v <= max))
		goto bad;
	*v_p = v;
	return 0;
bad:
	fprintf(stderr, "%s: --%s: '%s' is not a number in [%g, %g]\n", prog, opt, s ? s : "", min,
		max);
	return -1;
}

/*
 * Handle one common option (c as returned by getopt_long). Returns 1 when
 * handled, 0 when c is not a common option, -1 on a bad value (message
 * printed; the caller exits 2). 'h' is not handled here.
 */
static inline int dmr_gen_common_opt(const char *prog, int c, const char *arg, dmr_gen_common_t *cm)
{
	dmr_err_t err;

	switch (c) {
	case 'n':
		if (dmr_gen_parse_u64(prog, "txns", arg, 1, UINT64_C(1) << 40, &cm->txns) != 0)
			return -1;
		cm->txns_set = 1;
		return 1;
	case 's':
		return dmr_gen_parse_u64(prog, "seed", arg, 0, UINT32_MAX, &cm->seed) != 0 ? -1 : 1;
	case 'o':
		cm->out = arg;
		return 1;
	case 'r':
		if (dmr_regime_parse(arg, &cm->regime, &err) != DMR_OK) {
			fprintf(stderr, "%s: --regime: %s\n", prog, err.msg);
			return -1;
		}
		cm->regime_set = 1;
		return 1;
	default:
		return 0;
	}
}

/* Help text of the common options (appended to each generator's --help). */
static inline void dmr_gen_common_help(FILE *f)
{
	fputs("  --txns N        transactions to generate\n"
	      "  --seed S        GSL mt19937 seed (default 1); same seed, same trace\n"
	      "  -o, --output F  trace file to write (required; written to F.tmp, renamed)\n"
	      "  --regime R      uniform | extreme | alt-extreme | hot:K/P [drift...]\n"
	      "  -h, --help      this text\n",
	      f);
}

/* 64 random bits from a 32-bit generator (mt19937 yields 32 bits). */
static inline uint64_t dmr_gen_u64(gsl_rng *r)
{
	uint64_t hi = gsl_rng_get(r), lo = gsl_rng_get(r);
	return (hi << 32) ^ lo;
}

/* Uniform integer in [lo, hi] (inclusive; hi - lo < 2^32). */
static inline uint64_t dmr_gen_range(gsl_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

/* Uniform integer in [0, n) for any n >= 1 (n may exceed 2^32). */
static inline uint64_t dmr_gen_below(gsl_rng *r, uint64_t n)
{
	if (n <= UINT32_MAX)
		return gsl_rng_uniform_int(r, (unsigned long)n);
	/* rejection on 64 random bits */
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;
	do
		v = dmr_gen_u64(r);
	while (v >= lim);
	return v % n;
}

/* Number of hot items of regime reg over n items (0 when uniform or when
 * the hot set would cover everything). */
static inline uint64_t dmr_gen_regime_hot(const dmr_regime_t *reg, uint64_t n)
{
	if (reg->uniform || reg->hot_k == 0 || reg->hot_k >= n)
		return 0;
	return reg->hot_k;
}

/*
 * Draw an item in [0, n) under regime reg: with probability hot_p uniform
 * among the hot items 0 .. K-1, otherwise uniform among K .. n-1; uniform
 * regime (or K >= n): uniform among all. n >= 1.
 */
static inline uint64_t dmr_gen_regime_draw(gsl_rng *r, const dmr_regime_t *reg, uint64_t n)
{
	uint64_t k = dmr_gen_regime_hot(reg, n);

	if (k == 0)
		return dmr_gen_below(r, n);
	if (gsl_rng_uniform(r) < reg->hot_p)
		return dmr_gen_below(r, k);
	return k + dmr_gen_below(r, n - k);
}

/* Largest probability that dmr_gen_regime_draw gives a single item. */
static inline double dmr_gen_regime_pmax(const dmr_regime_t *reg, uint64_t n)
{
	uint64_t k = dmr_gen_regime_hot(reg, n);
	double hot, cold;

	if (k == 0)
		return 1.0 / (double)n;
	hot = reg->hot_p / (double)k;
	cold = (1.0 - reg->hot_p) / (double)(n - k);
	return hot > cold ? hot : cold;
}

/* Item uniformly among [0, n) without `not` (n >= 2). */
static inline uint64_t dmr_gen_other(gsl_rng *r, uint64_t n, uint64_t not )
{
	uint64_t v = dmr_gen_below(r, n - 1);
	return v >= not ? v + 1 : v;
}

/* printf into a header parameter. Errors (err set): DMR_ERR_RANGE (value
 * too long, parameter table full), DMR_ERR_INVALID (bad key or value). */
static inline dmr_status_t dmr_gen_hdr_setf(dmr_trace_hdr_t *h, dmr_err_t *err, const char *key,
					    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline dmr_status_t dmr_gen_hdr_setf(dmr_trace_hdr_t *h, dmr_err_t *err, const char *key,
					    const char *fmt, ...)
{
	char val[sizeof(h->params[0].val)];
	va_list ap;
	dmr_status_t st;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	st = dmr_trace_hdr_set(h, key, val);
	if (st != DMR_OK)
		return dmr_err_set(err, st, "header parameter %s = '%s': %s", key, val,
				   st == DMR_ERR_RANGE ? "too long or parameter table full"
						       : "not a valid name / value (FORMAT.md)");
	return DMR_OK;
}

/* Start a header: version, workload name, regime, and the common params
 * (seed, txns, regime, regime_drift_s). */
static inline dmr_status_t dmr_gen_hdr_begin(dmr_trace_hdr_t *h, const char *workload,
					     uint64_t txns, uint64_t seed, const dmr_regime_t *reg,
					     dmr_err_t *err)
{
	dmr_status_t st;

	memset(h, 0, sizeof(*h));
	h->version = DMR_TRACE_VERSION;
	snprintf(h->workload, sizeof(h->workload), "%s", workload);
	snprintf(h->regime, sizeof(h->regime), "%s", reg->name);
	h->txns = txns;
	if ((st = dmr_gen_hdr_setf(h, err, "seed", "%" PRIu64, seed)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "txns", "%" PRIu64, txns)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "regime", "%s", reg->name)) != DMR_OK)
		return st;
	if (reg->drift_s > 0)
		return dmr_gen_hdr_setf(h, err, "regime_drift_s", "%g", reg->drift_s);
	return DMR_OK;
}

/* Append table i to the header. */
static inline void dmr_gen_hdr_table(dmr_trace_hdr_t *h, const char *name, uint64_t rows,
				     uint32_t payload_bytes, uint64_t loaded)
{
	dmr_trace_table_t *t = &h->tables[h->ntables++];

	snprintf(t->name, sizeof(t->name), "%s", name);
	t->rows = rows;
	t->payload_bytes = payload_bytes;
	t->loaded = loaded;
}

/* Bytes of MN memory of a header's tables: rows * (16 + payload) each. */
static inline uint64_t dmr_gen_footprint(const dmr_trace_hdr_t *h, FILE *print)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < h->ntables; i++) {
		const dmr_trace_table_t *t = &h->tables[i];
		uint64_t b = t->rows * (16 + (uint64_t)t->payload_bytes);

		total += b;
		if (print)
			fprintf(print, "  %-12s %12" PRIu64 " rows x %4u B = %10.1f MiB\n", t->name,
				t->rows, 16 + t->payload_bytes, (double)b / 1048576.0);
	}
	if (print)
		fprintf(print, "  %-12s %38s %10.1f MiB\n", "total", "", (double)total / 1048576.0);
	return total;
}

/* ---- transaction building ---------------------------------------------- */

/* Reset txn for a new transaction. */
static inline void dmr_gen_txn_begin(dmr_trace_txn_t *t, uint64_t id, int type)
{
	t->id = id;
	t->type = (uint16_t)type;
	t->xv = 0;
	t->nops = 0;
	t->line = 0;
}

/* Append an op (see dmr_trace_txn_op); NULL when the txn is full. *idx_p
 * (may be NULL) receives its index. */
static inline dmr_trace_op_t *dmr_gen_op(dmr_trace_txn_t *t, char kind, int table, int round,
					 int64_t key, int *idx_p)
{
	int i = dmr_trace_txn_op(t, kind, table, round, key);

	if (i < 0)
		return NULL;
	if (idx_p)
		*idx_p = i;
	return &t->ops[i];
}

/* Make op's key depend on word `field` of op dep_op: slot = key + value,
 * value in [lo, hi). */
static inline void dmr_gen_dep(dmr_trace_op_t *op, int dep_op, int field, int64_t lo, int64_t hi)
{
	op->dep.op = (int16_t)dep_op;
	op->dep.field = (uint16_t)field;
	op->dep.lit = 0;
	op->lo = lo;
	op->hi = hi;
}

/* Guard op: kind PRESENT (f, f2 unused) or LESS (word f < word f2 of gop). */
static inline void dmr_gen_guard(dmr_trace_op_t *op, int kind, int gop, int f, int f2)
{
	op->guard.kind = (uint8_t)kind;
	op->guard.op = (int16_t)gop;
	op->guard.f = (uint16_t)f;
	op->guard.f2 = (uint16_t)f2;
}

/* ---- file sink --------------------------------------------------------- */

static inline dmr_status_t dmr_gen_emit_writer(void *arg, const dmr_trace_txn_t *txn,
					       dmr_err_t *err)
{
	return dmr_trace_write((dmr_trace_writer_t *)arg, txn, err);
}

/*
 * Write hdr and the transactions of run(ctx) to path. On any failure the
 * partial file is removed (dmr_trace_abandon) and an existing file at path
 * is left untouched. Prints errors prefixed by prog; returns the process
 * exit status: 0 ok, 2 bad input (DMR_ERR_PARSE/INVALID/RANGE), 1 otherwise.
 */
static inline int dmr_gen_write_file(const char *prog, const char *path, const dmr_trace_hdr_t *hdr,
				     dmr_gen_run_func_t run, void *ctx)
{
	dmr_trace_writer_t *w = NULL;
	dmr_err_t err = {{0}};
	dmr_status_t st;

	st = dmr_trace_create(path, hdr, &w, &err);
	if (st != DMR_OK)
		goto fail;
	st = run(ctx, dmr_gen_emit_writer, w, &err);
	if (st != DMR_OK)
		goto fail_abandon;
	st = dmr_trace_finish(w, &err);
	if (st != DMR_OK)
		goto fail;
	return 0;

fail_abandon:
	dmr_trace_abandon(w);
fail:
	if (err.msg[0])
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, path, dmr_status_string(st));
	return (st == DMR_ERR_PARSE || st == DMR_ERR_INVALID || st == DMR_ERR_RANGE) ? 2 : 1;
}

#endif /* DMR_GEN_H */
