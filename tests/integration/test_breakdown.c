/*
 * tests/integration/test_breakdown.c - results per transaction type, per CN
 * and per MN (replay/breakdown.h, docs/RESULTS.md) through the dmreplay
 * binary, and the writers and name mapping in-process:
 *  - types.csv: one row per trace type, in the header's order; summed over
 *    the rows, every counter equals summary.csv's total (TPC-C with
 *    --retries 2 on sim, SmallBank on sim, TPC-C on shm: the threaded
 *    engine); the read-only types (OrderStatus, StockLevel, Balance) take
 *    no lock, WRITE or atomic; percentiles ordered p50 <= p90 <= p99 <=
 *    p999 for every type that committed;
 *  - cns.csv: one row per CN, committed and tried summing to the totals;
 *  - mns.csv: one row per MN; when the backend answers MN_STATS its verbs
 *    equal summary.csv's (one MN), else every figure is empty and the note
 *    says "not reported" (no made-up values); utilisation = busy / run time
 *    from a written breakdown;
 *  - several CN directories combined (dmr_breakdown_combine, as --procs):
 *    counts summed, CN rows concatenated, latency the larger;
 *  - --published-log all: each line format of docs/RESULTS.md matched by
 *    the regex documented there, and its values equal the files' values;
 *    a bad format exits 2 naming the option.
 */
#include <check.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../replay/breakdown.h"
#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

#define SMALL "--cns", "2", "--threads", "4", "--coros", "2"

/* ---- a multi-row CSV ----------------------------------------------------- */

#define MAXROWS 32
typedef struct table {
	char *buf;
	int ncol, nrow;
	char *name[DMR_TEST_MAXCOL];
	char *val[MAXROWS][DMR_TEST_MAXCOL];
} table_t;

static void table_load(table_t *t, const char *dir, const char *file)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	memset(t, 0, sizeof(*t));
	t->buf = dmr_test_read_text(p);
	ck_assert_msg(t->buf != NULL, "%s: not written", p);
	char *line = t->buf, *nl = strchr(line, '\n');
	ck_assert_msg(nl != NULL, "%s: no header line", p);
	*nl = 0;
	t->ncol = dmr_test_split(line, t->name, DMR_TEST_MAXCOL);
	for (line = nl + 1; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_msg(nl != NULL, "%s: last line without a newline", p);
		*nl = 0;
		ck_assert_int_lt(t->nrow, MAXROWS);
		int n = dmr_test_split(line, t->val[t->nrow], DMR_TEST_MAXCOL);
		ck_assert_msg(n == t->ncol, "%s: row %d has %d fields, header %d", p, t->nrow + 1,
			      n, t->ncol);
		t->nrow++;
	}
}

static const char *cell(const table_t *t, int row, const char *col)
{
	for (int i = 0; i < t->ncol; i++)
		if (!strcmp(t->name[i], col))
			return t->val[row][i];
	ck_abort_msg("no column '%s'", col);
	return NULL;
}

static unsigned long long cellu(const table_t *t, int row, const char *col)
{
	return strtoull(cell(t, row, col), NULL, 10);
}

static double celld(const table_t *t, int row, const char *col)
{
	return strtod(cell(t, row, col), NULL);
}

static int row_of(const table_t *t, const char *col, const char *value)
{
	for (int r = 0; r < t->nrow; r++)
		if (!strcmp(cell(t, r, col), value))
			return r;
	ck_abort_msg("no row with %s = %s", col, value);
	return -1;
}

static unsigned long long colsum(const table_t *t, const char *col)
{
	unsigned long long s = 0;
	for (int r = 0; r < t->nrow; r++)
		s += cellu(t, r, col);
	return s;
}

/* ---- runs ---------------------------------------------------------------- */

static void gen(char *buf, size_t len, const char *name, const char *a0, ...)
{
	dmr_test_path(buf, len, name);
	const char *args[32];
	int n = 0;
	args[n++] = "gen";
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a; a = va_arg(ap, const char *))
		args[n++] = a;
	va_end(ap);
	args[n++] = "--quiet";
	args[n++] = "-o";
	args[n++] = buf;
	args[n] = NULL;
	dmr_test_run_t r = dmr_test_dmrv(args);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* Check the per-type rows of dir against its summary.csv: names in order,
 * every counter summed equal to the total; percentiles ordered. */
static void check_types(const char *dir, const char *const *names, int ntypes)
{
	table_t t;
	dmr_test_summary_t s;
	table_load(&t, dir, "types.csv");
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_int_eq(t.nrow, ntypes);
	for (int i = 0; i < ntypes; i++)
		ck_assert_str_eq(cell(&t, i, "type"), names[i]);
	static const char *const sums[] = {
	    "tried",	  "committed",	       "gave_up",	   "retries",
	    "abort_lock", "abort_read_locked", "abort_validation", "abort_duplicate",
	    "abort_full", "skipped_ops"};
	for (size_t k = 0; k < sizeof(sums) / sizeof(sums[0]); k++)
		ck_assert_msg(colsum(&t, sums[k]) == dmr_test_colu(&s, sums[k]),
			      "%s: types.csv %s sums to %llu, summary.csv says %llu", dir, sums[k],
			      colsum(&t, sums[k]), dmr_test_colu(&s, sums[k]));
	/* READs and atomics: summary.csv gives them per commit (4 decimals) */
	double c = (double)dmr_test_colu(&s, "committed");
	ck_assert_double_eq_tol((double)colsum(&t, "reads"),
				dmr_test_cold(&s, "reads_per_commit") * c, 1e-4 * c + 1);
	ck_assert_double_eq_tol((double)colsum(&t, "atomics"),
				dmr_test_cold(&s, "atomics_per_commit") * c, 1e-4 * c + 1);
	for (int i = 0; i < t.nrow; i++) {
		if (!cellu(&t, i, "committed"))
			continue;
		double p50 = celld(&t, i, "p50_us"), p90 = celld(&t, i, "p90_us");
		double p99 = celld(&t, i, "p99_us"), p999 = celld(&t, i, "p999_us");
		ck_assert_msg(p50 > 0 && p50 <= p90 && p90 <= p99 && p99 <= p999,
			      "%s %s: p50 %g p90 %g p99 %g p999 %g", dir, names[i], p50, p90, p99,
			      p999);
		ck_assert_double_gt(celld(&t, i, "mean_us"), 0);
		ck_assert_double_le(celld(&t, i, "mean_us"), p999 * 1.004);
		/* tried = committed + gave_up + retries per type too */
		ck_assert_uint_eq(cellu(&t, i, "tried"), cellu(&t, i, "committed") +
							     cellu(&t, i, "gave_up") +
							     cellu(&t, i, "retries"));
	}
	dmr_test_summary_free(&s);
	free(t.buf);
}

/* cns.csv: one row per CN of `cns`, sums equal to the totals. */
static void check_cns(const char *dir, unsigned cns, unsigned threads)
{
	table_t t;
	dmr_test_summary_t s;
	table_load(&t, dir, "cns.csv");
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_int_eq(t.nrow, (int)cns);
	double share = 0;
	for (int i = 0; i < t.nrow; i++) {
		ck_assert_uint_eq(cellu(&t, i, "cn"), (unsigned)i);
		ck_assert_uint_eq(cellu(&t, i, "workers"), threads);
		ck_assert_uint_gt(cellu(&t, i, "committed"), 0);
		share += celld(&t, i, "committed_share");
	}
	ck_assert_uint_eq(colsum(&t, "committed"), dmr_test_colu(&s, "committed"));
	ck_assert_uint_eq(colsum(&t, "tried"), dmr_test_colu(&s, "tried"));
	ck_assert_double_eq_tol(share, 1.0, 1e-5);
	dmr_test_summary_free(&s);
	free(t.buf);
}

/* mns.csv of a 1-MN run: real counts when reported, else empty fields. */
static void check_mns(const char *dir)
{
	table_t t;
	dmr_test_summary_t s;
	table_load(&t, dir, "mns.csv");
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_int_eq(t.nrow, 1);
	ck_assert_str_eq(cell(&t, 0, "mn"), "0");
	if (!strcmp(cell(&t, 0, "reported"), "yes")) {
		ck_assert_uint_eq(cellu(&t, 0, "verbs"), dmr_test_colu(&s, "verbs"));
	} else {
		ck_assert_str_eq(cell(&t, 0, "reported"), "no");
		static const char *const cols[] = {"verbs",	 "reads",	   "atomics",
						   "bytes_read", "link_down_util", "nic_util",
						   "atomic_util"};
		for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
			ck_assert_str_eq(cell(&t, 0, cols[k]), "");
		ck_assert_msg(!strncmp(cell(&t, 0, "note"), "not reported", 12), "note: %s",
			      cell(&t, 0, "note"));
	}
	dmr_test_summary_free(&s);
	free(t.buf);
}

static void check_readonly(const char *dir, const char *type)
{
	table_t t;
	table_load(&t, dir, "types.csv");
	int r = row_of(&t, "type", type);
	ck_assert_uint_gt(cellu(&t, r, "committed"), 0);
	ck_assert_uint_eq(cellu(&t, r, "writes"), 0);
	ck_assert_uint_eq(cellu(&t, r, "atomics"), 0);
	ck_assert_uint_eq(cellu(&t, r, "locks_taken"), 0);
	ck_assert_uint_gt(cellu(&t, r, "reads"), 0);
	free(t.buf);
}

static const char *const tpcc_types[] = {"NewOrder", "Payment", "OrderStatus", "Delivery",
					 "StockLevel"};

/* ---- the published-log lines -------------------------------------------- */

/* Lines of text matching re (docs/RESULTS.md), each line's subexpressions
 * 1..4 into v[line][k] (strtod); returns the count. */
static int match_lines(const char *text, const char *re, double v[][4], int max)
{
	regex_t rx;
	ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE), 0);
	int n = 0;
	regmatch_t m[5];
	for (const char *p = text; *p && !regexec(&rx, p, 5, m, 0); p += m[0].rm_eo) {
		if (m[0].rm_eo == m[0].rm_so) {
			if (!p[m[0].rm_eo])
				break;
			p++;
			continue;
		}
		if (n < max)
			for (int k = 0; k < 4; k++)
				v[n][k] =
				    m[k + 1].rm_so >= 0 ? strtod(p + m[k + 1].rm_so, NULL) : 0;
		n++;
	}
	regfree(&rx);
	return n;
}

#define NUM "([0-9.e+-]+)"
#define INT "([0-9]+)"

START_TEST(test_tpcc_sim)
{
	char tr[PATH_MAX], d[PATH_MAX];
	gen(tr, sizeof(tr), "tpcc.csv", "tpcc", "--warehouses", "4", "--regime", "extreme",
	    "--txns", "3000", "--seed", "3", NULL);
	dmr_test_path(d, sizeof(d), "tpcc-sim");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, SMALL, "--retries", "2", "--out", d,
					"--published-log", "all", NULL);
	dmr_test_run_ok(&r);
	check_types(d, tpcc_types, 5);
	check_cns(d, 2, 4);
	check_mns(d);
	check_readonly(d, "OrderStatus");
	check_readonly(d, "StockLevel");
	{
		/* a read-write type locks with CAS */
		table_t t;
		table_load(&t, d, "types.csv");
		ck_assert_uint_gt(cellu(&t, row_of(&t, "type", "NewOrder"), "atomics"), 0);
		ck_assert_uint_gt(colsum(&t, "retries"), 0); /* --retries 2 on extreme */
		for (int i = 0; i < t.nrow; i++)
			ck_assert_uint_le(cellu(&t, i, "first_commits"), cellu(&t, i, "committed"));
		/* a first-attempt Payment locks warehouse, district, customer and
		 * inserts history: 4 CAS, 4 x 2 + 1 WRITEs (core/txn.h) */
		int pa = row_of(&t, "type", "Payment");
		ck_assert_uint_gt(cellu(&t, pa, "first_commits"), 0);
		ck_assert_double_eq(celld(&t, pa, "first_atomics"), 4);
		ck_assert_double_eq(celld(&t, pa, "first_writes"), 9);
		free(t.buf);
	}

	table_t t, c;
	dmr_test_summary_t s;
	table_load(&t, d, "types.csv");
	table_load(&c, d, "cns.csv");
	dmr_test_summary_load(&s, d, "summary.csv");
	double v[8][4];
	/* CREST, benchmark/Base/Benchmark.cc: one block per CN */
	ck_assert_int_eq(match_lines(r.out, "^Tried: " INT " Committed: " INT "$", v, 8), 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq((unsigned long long)v[i][0], cellu(&c, i, "tried"));
		ck_assert_uint_eq((unsigned long long)v[i][1], cellu(&c, i, "committed"));
	}
	ck_assert_int_eq(
	    match_lines(r.out, "^Tried Throughput: " NUM " KOPS, Commit Troughput: " NUM " KOPS $",
			v, 8),
	    2);
	ck_assert_double_eq_tol(v[0][0] + v[1][0], dmr_test_cold(&s, "tried_tps") / 1e3,
				1e-4 * dmr_test_cold(&s, "tried_tps") / 1e3);
	ck_assert_double_eq_tol(v[0][1] + v[1][1], dmr_test_cold(&s, "committed_tps") / 1e3,
				1e-4 * dmr_test_cold(&s, "committed_tps") / 1e3);
	ck_assert_int_eq(match_lines(r.out,
				     "^Average latency: " INT " us, P50 latency: " INT
				     " us, P90 latency: " INT " us, P99 latency: " INT " us$",
				     v, 8),
			 1);
	ck_assert_double_eq(v[0][1], (double)(int)dmr_test_cold(&s, "p50_us"));
	ck_assert_double_eq(v[0][3], (double)(int)dmr_test_cold(&s, "p99_us"));
	ck_assert(v[0][1] <= v[0][2] && v[0][2] <= v[0][3]);
	/* CREST, src/util/Statistic.h Statistics::ToString: tickers and .lat */
	int no = row_of(&t, "type", "NewOrder");
	unsigned long long no_abort =
	    cellu(&t, no, "abort_lock") + cellu(&t, no, "abort_read_locked") +
	    cellu(&t, no, "abort_validation") + cellu(&t, no, "abort_duplicate") +
	    cellu(&t, no, "abort_full");
	ck_assert_int_eq(match_lines(r.out, "^ *tpcc\\.NEWORDER\\.abort: *" INT "$", v, 8), 1);
	ck_assert_uint_eq((unsigned long long)v[0][0], no_abort);
	ck_assert_int_eq(match_lines(r.out, "^ *tpcc\\.NEWORDER\\.fail_lock: *" INT "$", v, 8), 1);
	ck_assert_uint_eq((unsigned long long)v[0][0], cellu(&t, no, "abort_lock"));
	ck_assert_int_eq(match_lines(r.out, "^ *tpcc\\.[A-Z_]+\\.abort: *" INT "$", v, 8), 5);
	ck_assert_int_eq(match_lines(r.out,
				     "^ *tpcc\\.STOCK_LEVEL\\.lat:   average: +" NUM "   p50: +" NUM
				     "   p99: +" NUM "   p999: +" NUM "$",
				     v, 8),
			 1);
	int sl = row_of(&t, "type", "StockLevel");
	ck_assert_double_eq_tol(v[0][1], celld(&t, sl, "p50_us"), 0.006);
	ck_assert_double_eq_tol(v[0][3], celld(&t, sl, "p999_us"), 0.006);
	ck_assert_int_eq(match_lines(r.out, "^ *tpcc\\.[A-Z_]+\\.lat:   average: ", v, 8), 5);
	/* FORD, compute_pool/worker/handler.cc OutputResult */
	ck_assert_int_eq(
	    match_lines(r.out, "^dmreplay tx_type try_num commit_num abort_rate$", v, 8), 1);
	ck_assert_int_eq(match_lines(r.out, "^NewOrder " INT " " INT " " NUM "$", v, 8), 1);
	ck_assert_uint_eq((unsigned long long)v[0][0], cellu(&t, no, "tried"));
	ck_assert_uint_eq((unsigned long long)v[0][1], cellu(&t, no, "committed"));
	ck_assert_double_eq_tol(v[0][2], celld(&t, no, "abort_rate"), 1e-5);
	ck_assert_int_eq(
	    match_lines(r.out, "^All Tried: " INT ", All Committed: " INT ", Abort Rate: " NUM "$",
			v, 8),
	    1);
	ck_assert_uint_eq((unsigned long long)v[0][0], dmr_test_colu(&s, "tried"));
	ck_assert_uint_eq((unsigned long long)v[0][1], dmr_test_colu(&s, "committed"));
	ck_assert_int_eq(match_lines(r.out, "^dmreplay " NUM " " NUM " " NUM " " NUM "$", v, 8), 2);
	ck_assert_double_eq_tol(v[1][1], celld(&c, 1, "committed_tps") / 1e3,
				1e-4 * celld(&c, 1, "committed_tps") / 1e3);
	ck_assert_double_eq_tol(v[1][2], dmr_test_cold(&s, "p50_us"), 1e-3);
	dmr_test_summary_free(&s);
	free(t.buf);
	free(c.buf);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_smallbank_sim)
{
	static const char *const sb[] = {"Amalgamate",	"Balance",	   "DepositChecking",
					 "SendPayment", "TransactSavings", "WriteCheck"};
	char tr[PATH_MAX], d[PATH_MAX];
	gen(tr, sizeof(tr), "sb.csv", "smallbank", "--accounts", "1000", "--regime", "hot:10/0.9",
	    "--txns", "3000", "--seed", "5", NULL);
	dmr_test_path(d, sizeof(d), "sb-sim");
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--trace", tr, SMALL, "--out", d, "--published-log", "ford", NULL);
	dmr_test_run_ok(&r);
	check_types(d, sb, 6);
	check_cns(d, 2, 4);
	check_mns(d);
	check_readonly(d, "Balance");
	{
		/* one committed attempt's verbs (core/txn.h: a locked record costs a
		 * CAS + READ in execution, a write-back WRITE and an unlock WRITE
		 * at commit, plus one log WRITE; a read-only record a READ and a
		 * validation re-READ; traces/GENERATORS.md for each type's ops) */
		table_t t;
		table_load(&t, d, "types.csv");
		for (int i = 0; i < t.nrow; i++) /* --retries 0: every commit is a first */
			ck_assert_uint_eq(cellu(&t, i, "first_commits"), cellu(&t, i, "committed"));
		int sp = row_of(&t, "type", "SendPayment"); /* U checking A, U checking B */
		ck_assert_double_eq(celld(&t, sp, "first_atomics"), 2);
		ck_assert_double_eq(celld(&t, sp, "first_reads"), 2);
		ck_assert_double_eq(celld(&t, sp, "first_writes"), 5);
		int am = row_of(&t, "type", "Amalgamate"); /* 3 U */
		ck_assert_double_eq(celld(&t, am, "first_atomics"), 3);
		ck_assert_double_eq(celld(&t, am, "first_writes"), 7);
		int ba = row_of(&t, "type", "Balance"); /* R savings, R checking */
		ck_assert_double_eq(celld(&t, ba, "first_reads"), 4);
		ck_assert_double_eq(celld(&t, ba, "first_writes"), 0);
		free(t.buf);
	}
	/* FORD's name of TransactSavings (workload/smallbank/smallbank_db.h) */
	double v[8][4];
	ck_assert_int_eq(match_lines(r.out, "^TransactSaving " INT " " INT " " NUM "$", v, 8), 1);
	ck_assert_ptr_null(strstr(r.out, "Tried Throughput")); /* ford only */
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_tpcc_shm)
{
	char tr[PATH_MAX], d[PATH_MAX];
	gen(tr, sizeof(tr), "tpcc-shm.csv", "tpcc", "--warehouses", "4", "--regime", "uniform",
	    "--txns", "2000", "--seed", "4", NULL);
	dmr_test_path(d, sizeof(d), "tpcc-shm");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, SMALL, "--backend", "shm", "--out", d,
					"--quiet", NULL);
	dmr_test_run_ok(&r);
	ck_assert_str_eq(r.out, ""); /* --quiet without --published-log: nothing */
	check_types(d, tpcc_types, 5);
	check_cns(d, 2, 4);
	check_mns(d);
	check_readonly(d, "OrderStatus");
	table_t t;
	table_load(&t, d, "mns.csv");
	if (!strcmp(cell(&t, 0, "reported"), "yes")) /* shm: counts only, no model */
		ck_assert_str_eq(cell(&t, 0, "nic_util"), "");
	free(t.buf);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_bad_format)
{
	dmr_test_run_t r = dmr_test_dmr("run", "--published-log", "crestt", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--published-log") && strstr(r.err, "crestt"), "stderr: %s",
		      r.err);
	dmr_test_run_free(&r);
	/* the CN processes of --procs do not print it: refused, not ignored */
	r = dmr_test_dmr("run", "--procs", "--published-log", "crest", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--published-log") && strstr(r.err, "--procs"), "stderr: %s",
		      r.err);
	dmr_test_run_free(&r);
}
END_TEST

/* In-process: utilisation = busy ps / run ps; not modelled: empty. */
START_TEST(test_mns_writer)
{
	dmr_breakdown_t bd;
	memset(&bd, 0, sizeof(bd));
	bd.nmns = 2;
	bd.mn_reported = 1;
	bd.mn_modelled = 1;
	bd.run_ps = 1000000;
	bd.mn[0].verbs = 7;
	bd.mn[0].nic_busy_ps = 250000;
	bd.mn[1].atomic_busy_ps = 1000000;
	bd.mn[1].bytes_written = 4096;
	char d[PATH_MAX];
	dmr_test_path(d, sizeof(d), "writer");
	ck_assert_int_eq(mkdir(d, 0700), 0);
	dmr_err_t err;
	ck_assert_int_eq(dmr_breakdown_write(d, 1, &bd, &err), DMR_OK);
	table_t t;
	table_load(&t, d, "mns.csv");
	ck_assert_int_eq(t.nrow, 2);
	ck_assert_uint_eq(cellu(&t, 0, "verbs"), 7);
	ck_assert_str_eq(cell(&t, 0, "nic_util"), "0.250000");
	ck_assert_str_eq(cell(&t, 1, "atomic_util"), "1.000000");
	ck_assert_uint_eq(cellu(&t, 1, "bytes_written"), 4096);
	free(t.buf);
	bd.mn_modelled = 0;
	ck_assert_int_eq(dmr_breakdown_write(d, 0, &bd, &err), DMR_OK);
	table_load(&t, d, "mns.partial.csv");
	ck_assert_str_eq(cell(&t, 0, "nic_util"), "");
	ck_assert_uint_eq(cellu(&t, 0, "verbs"), 7);
	free(t.buf);
	/* types.csv and cns.csv of an empty breakdown: header only */
	table_load(&t, d, "types.csv");
	ck_assert_int_eq(t.nrow, 0);
	ck_assert_str_eq(t.name[0], "type");
	free(t.buf);
}
END_TEST

START_TEST(test_crest_names)
{
	char b[40];
	ck_assert_str_eq(dmr_breakdown_crest_name("tpcc", "NewOrder", b, sizeof(b)), "NEWORDER");
	ck_assert_str_eq(dmr_breakdown_crest_name("tpcc", "Delivery", b, sizeof(b)), "DELIVER");
	ck_assert_str_eq(dmr_breakdown_crest_name("tpcc", "StockLevel", b, sizeof(b)),
			 "STOCK_LEVEL");
	ck_assert_str_eq(dmr_breakdown_crest_name("smallbank", "TransactSavings", b, sizeof(b)),
			 "TRANSACT_SAVINGS");
	ck_assert_str_eq(dmr_breakdown_crest_name("ycsb", "ReadModifyWrite", b, sizeof(b)),
			 "READ_MODIFY_WRITE");
	ck_assert_str_eq(dmr_breakdown_crest_name("x", "abc", b, 3), "AB");
	/* TATP: CREST's TATP_TRANSACTION_NAMES */
	ck_assert_str_eq(dmr_breakdown_crest_name("tatp", "GetSubscriberData", b, sizeof(b)),
			 "GET_SUBSCRIBER");
	ck_assert_str_eq(dmr_breakdown_crest_name("tatp", "InsertCallForwarding", b, sizeof(b)),
			 "INSERT_CALL_FORWARDING");
	uint32_t f = 0;
	dmr_err_t err;
	ck_assert_int_eq(dmr_breakdown_publog_parse("all", &f, &err), DMR_OK);
	ck_assert_uint_eq(f, DMR_PUBLOG_CREST | DMR_PUBLOG_FORD);
	ck_assert_int_eq(dmr_breakdown_publog_parse("FORD", &f, &err), DMR_ERR_INVALID);
}
END_TEST

/* Two CN directories combined (dmreplay run --procs does this with its
 * cnK/): counts summed per type, CN rows concatenated, latency the larger,
 * MN counts summed or not reported. */
START_TEST(test_combine)
{
	char tr[PATH_MAX], a[PATH_MAX], b[PATH_MAX], out[PATH_MAX];
	gen(tr, sizeof(tr), "tpcc-c.csv", "tpcc", "--warehouses", "4", "--regime", "uniform",
	    "--txns", "1500", "--seed", "6", NULL);
	dmr_test_path(a, sizeof(a), "comb-a");
	dmr_test_path(b, sizeof(b), "comb-b");
	dmr_test_path(out, sizeof(out), "comb-out");
	const char *seeds[2] = {"1", "2"};
	char *dirs[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, SMALL, "--seed", seeds[k],
						"--out", dirs[k], "--quiet", NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
	}
	ck_assert_int_eq(mkdir(out, 0700), 0);
	dmr_err_t err;
	const char *const cd[2] = {a, b};
	ck_assert_int_eq(dmr_breakdown_combine(out, 1, cd, 2, 0.5, &err), DMR_OK);
	table_t ta, tb, tc;
	table_load(&ta, a, "types.csv");
	table_load(&tb, b, "types.csv");
	table_load(&tc, out, "types.csv");
	ck_assert_int_eq(tc.nrow, 5);
	for (int i = 0; i < 5; i++) {
		ck_assert_str_eq(cell(&tc, i, "type"), tpcc_types[i]);
		static const char *const cols[] = {"tried",	   "committed",	 "reads",
						   "atomics",	   "abort_lock", "locks_taken",
						   "first_commits"};
		for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
			ck_assert_uint_eq(cellu(&tc, i, cols[k]),
					  cellu(&ta, i, cols[k]) + cellu(&tb, i, cols[k]));
		double pa = celld(&ta, i, "p99_us"), pb = celld(&tb, i, "p99_us");
		ck_assert_double_eq_tol(celld(&tc, i, "p99_us"), pa > pb ? pa : pb, 1e-9);
		ck_assert_double_eq_tol(celld(&tc, i, "committed_tps"),
					(double)cellu(&tc, i, "committed") / 0.5, 1e-3);
	}
	free(ta.buf);
	free(tb.buf);
	free(tc.buf);
	table_load(&tc, out, "cns.csv");
	ck_assert_int_eq(tc.nrow, 4);
	table_load(&ta, a, "cns.csv");
	ck_assert_uint_eq(cellu(&tc, 1, "committed"), cellu(&ta, 1, "committed"));
	free(ta.buf);
	free(tc.buf);
	table_load(&tc, out, "mns.csv");
	table_load(&ta, a, "mns.csv");
	table_load(&tb, b, "mns.csv");
	ck_assert_int_eq(tc.nrow, 1);
	ck_assert_str_eq(cell(&tc, 0, "reported"), cell(&ta, 0, "reported"));
	if (!strcmp(cell(&ta, 0, "reported"), "yes"))
		ck_assert_uint_eq(cellu(&tc, 0, "verbs"),
				  cellu(&ta, 0, "verbs") + cellu(&tb, 0, "verbs"));
	else
		ck_assert_str_eq(cell(&tc, 0, "verbs"), "");
	free(ta.buf);
	free(tb.buf);
	free(tc.buf);
}
END_TEST

/* --force moves an earlier run's per-type files with its summary: a
 * finished types.csv is never overwritten. */
START_TEST(test_force_moves)
{
	char tr[PATH_MAX], d[PATH_MAX], p[PATH_MAX + 32];
	gen(tr, sizeof(tr), "tpcc-f.csv", "tpcc", "--warehouses", "2", "--txns", "500", NULL);
	dmr_test_path(d, sizeof(d), "force");
	for (int k = 0; k < 2; k++) {
		dmr_test_run_t r = dmr_test_dmr("run", "--trace", tr, SMALL, "--out", d, "--quiet",
						k ? "--force" : NULL, NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
	}
	static const char *const f[] = {"types.csv", "cns.csv", "mns.csv"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/earlier-1/%s", d, f[i]);
		ck_assert_msg(dmr_test_exists(p), "%s: not moved", p);
		snprintf(p, sizeof(p), "%s/%s", d, f[i]);
		ck_assert_msg(dmr_test_exists(p), "%s: not written", p);
	}
}
END_TEST

static Suite *breakdown_suite(void)
{
	Suite *s = suite_create("breakdown");
	TCase *tc = tcase_create("breakdown");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_tpcc_sim);
	tcase_add_test(tc, test_smallbank_sim);
	tcase_add_test(tc, test_tpcc_shm);
	tcase_add_test(tc, test_bad_format);
	tcase_add_test(tc, test_mns_writer);
	tcase_add_test(tc, test_crest_names);
	tcase_add_test(tc, test_combine);
	tcase_add_test(tc, test_force_moves);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("breakdown", 1, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(breakdown_suite());
	dmr_test_env_fini();
	return rc;
}
