/*
 * traces/gen.h - plumbing shared by the trace generators (tpcc.c,
 * smallbank.c, ycsb.c): the per-transaction emit callback, the common
 * command-line options (--txns --seed -o --regime --help), regime draws,
 * transaction-building shorthands and the file sink.
 *
 * Mostly static inline, private to the generators and their tests; the
 * command-line helpers (option values, dmr_gen_write_file, the shared
 * dmr_gen_cli_main driver) are in gencli.c. Nothing here prints except those.
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
	int progress; /* --progress: the progress line also off a terminal */
	int quiet;    /* --quiet given (the generator's own option): no progress */
} dmr_gen_common_t;

/* getopt_long table entries for the common options; short codes 'n' 's'
 * 'o' 'r' 'h'. Generator-specific options use codes >= 256. */
#define DMR_GEN_COMMON_LONGOPTS                                                                    \
	{"txns", required_argument, NULL, 'n'}, {"seed", required_argument, NULL, 's'},            \
	    {"output", required_argument, NULL, 'o'}, {"regime", required_argument, NULL, 'r'},    \
	    {"progress", no_argument, NULL, 'P'},                                                  \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}
#define DMR_GEN_COMMON_SHORTOPTS ":o:h" /* the ":": a missing value told apart */

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
 * Numeric option values of the generators, through core/base/opt.h: prints
 * "PROG: option --OPT: ..." (the value and the allowed range) and returns -1
 * on a bad value; 0 and *v_p set on success. `opt` is the name without
 * dashes.
 */
int dmr_gen_parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		      uint64_t *v_p);
/* The same for a count (warehouses, accounts, capacities, ...): K/M/G/T
 * suffixes allowed (DMR_OPT_SIZE: powers of 1024), as every count option
 * of every command (README); dmr_gen_parse_u64 takes plain digits (the
 * seed). */
int dmr_gen_parse_count(const char *prog, const char *opt, const char *s, uint64_t min,
			uint64_t max, uint64_t *v_p);
int dmr_gen_parse_double(const char *prog, const char *opt, const char *s, double min, double max,
			 double *v_p);

/*
 * Handle one common option (c as returned by getopt_long). Returns 1 when
 * handled, 0 when c is not a common option, -1 on a bad value (message
 * printed; the caller exits 2). 'h' is not handled here.
 */
int dmr_gen_common_opt(const char *prog, int c, const char *arg, dmr_gen_common_t *cm);

/* Help text of the common options (appended to each generator's --help). */
/* How the summary line names the output: "standard output" for -o -. */
static inline const char *dmr_gen_out_name(const char *out)
{
	return out[0] == '-' && out[1] == 0 ? "standard output" : out;
}

static inline void dmr_gen_common_help(FILE *f)
{
	fputs("  --txns N        transactions to generate\n"
	      "  --seed S        GSL mt19937 seed (default 1); same seed, same trace\n"
	      "  -o, --output F  trace file to write (required; written to F.tmp, renamed);\n"
	      "                  - writes it to standard output\n"
	      "  --regime R      uniform | extreme | alt-extreme | hot:K/P [drift...]\n"
	      "  --progress      a progress line on stderr (transactions written of --txns,\n"
	      "                  ETA) also when stderr is not a terminal (never with --quiet)\n"
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

/* A hot:K/P regime whose K hot items are not fewer than the n items of the
 * table (all hot = no hot set: it was taken as uniform silently; issue #15
 * D17): DMR_ERR_INVALID naming the regime, K, n and `what` ("accounts",
 * "warehouses", "records (recordcount)"). DMR_OK otherwise. */
static inline dmr_status_t dmr_gen_regime_check(const dmr_regime_t *reg, uint64_t n,
						const char *what, dmr_err_t *err)
{
	if (reg->uniform || reg->hot_k == 0 || reg->hot_k < n)
		return DMR_OK;
	return dmr_err_set(err, DMR_ERR_INVALID,
			   "--regime %s: K = %u hot items is not fewer than the %" PRIu64
			   " %s: give K < %" PRIu64 " (or uniform)",
			   reg->name, reg->hot_k, n, what, n);
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
			fprintf(print, "  %-16s %12" PRIu64 " rows x %4u B = %10.1f MiB\n", t->name,
				t->rows, 16 + t->payload_bytes, (double)b / 1048576.0);
	}
	if (print)
		fprintf(print, "  %-16s %38s %10.1f MiB\n", "total", "", (double)total / 1048576.0);
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
 * exit status (dmr_exit_status: 0 ok, 2 bad input, 1 a failed write).
 * cm (may be NULL): --progress / --quiet and --txns for the progress line
 * (core/base/progress.h).
 */
int dmr_gen_write_file(const char *prog, const char *path, const dmr_trace_hdr_t *hdr,
		       dmr_gen_run_func_t run, void *ctx, const dmr_gen_common_t *cm);

/*
 * A generator that reads a file (ycsb's --workload) calls this before it
 * reads it: when out (-o, not "-") is that file, by device and inode (so
 * also ./FILE, a hard link or a symbolic link to it), it prints
 * "PROG: -o OUT is the input file (OPT IN): give another output path" and
 * returns 2 (the exit status: nothing is written, the input is left as it
 * was; the trace renamed over it replaced it: a trial); else 0. As kv gen
 * refuses -o naming its --mooncake file.
 */
int dmr_gen_out_is_input(const char *prog, const char *out, const char *opt, const char *in);

/*
 * The command line of one generator (`dmreplay gen NAME`), shared by all:
 * getopt_long over the common options and the generator's own, then the
 * checks every generator makes (no stray argument, -o given), then
 * prepare() (cross-option rules and the header), then the file written by
 * dmr_gen_write_file, then done() (a summary line). Returns the process exit
 * status: 0, 1 (failed: out of memory, I/O), 2 (bad input).
 */
typedef struct dmr_gen_cli {
	const char *prog;	   /* "tpcc", "smallbank", "ycsb" */
	const struct option *opts; /* DMR_GEN_COMMON_LONGOPTS + the generator's, NULL-ended */
	void (*usage)(FILE *f);	   /* --help text (stdout) */
	/* One generator-specific option c (>= 256) with its argument: 0, or
	 * -1 with the message printed (exit 2). */
	int (*opt)(void *cfg, int c, const char *arg);
	/* After parsing: apply the common options, check cross-option rules,
	 * fill hdr. 0 to go on, else the exit status (message printed). */
	int (*prepare)(void *cfg, const dmr_gen_common_t *cm, dmr_trace_hdr_t *hdr);
	/* Generate into emit (cfg is passed as ctx). */
	dmr_gen_run_func_t run;
	/* Optional: after a successful write. */
	void (*done)(void *cfg, const dmr_gen_common_t *cm);
} dmr_gen_cli_t;

int dmr_gen_cli_main(const dmr_gen_cli_t *cli, void *cfg, int argc, char **argv);

#endif /* DMR_GEN_H */
