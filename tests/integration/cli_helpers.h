/*
 * tests/integration/cli_helpers.h - what the `dmreplay run` CLI suites
 * (test_cli.c, test_cli_out.c) share: whole-file line arrays, the base
 * trace (SmallBank, 100 accounts, 200 transactions, made once per suite's
 * temp dir), trace rows edited field by field, and assertions on a run's
 * exit status, stderr and --out. Header-only (static inline): each suite
 * is one executable (tests/CMakeLists.txt).
 */
#ifndef DMR_TEST_CLI_HELPERS_H
#define DMR_TEST_CLI_HELPERS_H

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

#define SMALL "--cns", "2", "--threads", "2", "--coros", "1"

/* ---- files: whole-file line arrays, existence ------------------------------ */

typedef struct lines {
	char *buf;
	char **l; /* without '\n' */
	int n;
} lines_t;

static inline void lines_load(lines_t *L, const char *path)
{
	size_t len;
	L->buf = dmr_test_slurp(path, &len);
	ck_assert_msg(L->buf != NULL, "%s: %s", path, strerror(errno));
	ck_assert_msg(len > 0 && L->buf[len - 1] == '\n', "%s: no final newline", path);
	int cap = 0;
	for (size_t i = 0; i < len; i++)
		cap += L->buf[i] == '\n';
	L->l = calloc((size_t)cap, sizeof(char *));
	ck_assert_ptr_nonnull(L->l);
	L->n = 0;
	for (char *p = L->buf; *p;) {
		char *nl = strchr(p, '\n');
		*nl = 0;
		L->l[L->n++] = p;
		p = nl + 1;
	}
}

static inline void lines_free(lines_t *L)
{
	free(L->l);
	free(L->buf);
}

/* Write lines [0, n) of L to path, line `repl_at` (0-based; -1 = none)
 * replaced by `repl`; the last line gets no '\n' when cut_last. */
static inline void lines_write(const lines_t *L, int n, int repl_at, const char *repl, int cut_last,
			       const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i == repl_at ? repl : L->l[i],
			cut_last && i == n - 1 ? "" : "\n");
	ck_assert_int_eq(fclose(f), 0);
}

static inline int exists(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static inline char *read_in(const char *dir, const char *name, size_t *len)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return dmr_test_slurp(p, len);
}

static inline void assert_has(const dmr_test_run_t *r, const char *what)
{
	ck_assert_msg(strstr(r->err, what) != NULL, "stderr lacks '%s':\n%s", what, r->err);
}

static inline void assert_has_out(const dmr_test_run_t *r, const char *what)
{
	ck_assert_msg(strstr(r->out, what) != NULL, "stdout lacks '%s':\n%s", what, r->out);
}

/* The common verdict on a refused run: status 2, no summary.csv; a
 * summary.partial.csv only when the run started (and then status partial). */
static inline void assert_refused(const dmr_test_run_t *r, const char *dir, int may_start)
{
	ck_assert_msg(r->status == 2, "exit status %d, want 2\nstdout:\n%s\nstderr:\n%s", r->status,
		      r->out, r->err);
	ck_assert_msg(r->err[0] != 0, "nothing on stderr");
	ck_assert_msg(!exists(dir, "summary.csv"), "%s/summary.csv written by a refused run", dir);
	ck_assert_msg(!exists(dir, "timeseries.csv"), "%s/timeseries.csv written by a refused run",
		      dir);
	if (!may_start) {
		ck_assert_msg(!exists(dir, "summary.partial.csv"),
			      "%s/summary.partial.csv written by a run that never started", dir);
	} else if (exists(dir, "summary.partial.csv")) {
		dmr_test_summary_t s;
		dmr_test_summary_load(&s, dir, "summary.partial.csv");
		ck_assert_str_eq(dmr_test_col(&s, "status"), "partial");
		ck_assert_str_eq(dmr_test_col(&s, "verified"), "0");
		dmr_test_summary_free(&s);
	}
}

/* ---- the base trace: SmallBank, 100 accounts, 200 transactions ----------- */

#define BASE_TXNS 200

static inline void base_trace(char *buf, size_t len)
{
	dmr_test_path(buf, len, "base.csv");
	if (access(buf, R_OK) == 0)
		return;
	dmr_test_run_t r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "200",
					"--seed", "4", "--quiet", "-o", buf, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* 0-based index in L of the first data row (after the column header). */
static inline int first_row(const lines_t *L)
{
	for (int i = 0; i < L->n; i++)
		if (strncmp(L->l[i], "txn,type,round,", 15) == 0)
			return i + 1;
	ck_abort_msg("no column header line");
	return -1;
}

/* Row line i with field k replaced by v (13 fields, unquoted). */
static inline void row_with(char *out, size_t len, const char *row, int k, const char *v)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", row);
	char *f[DMR_TEST_MAXCOL];
	int n = dmr_test_split(tmp, f, DMR_TEST_MAXCOL);
	ck_assert_int_eq(n, 13);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(out);
		snprintf(out + l, len - l, "%s%s", i ? "," : "", i == k ? v : f[i]);
	}
}

/* Field k of a row (copied into out). */
static inline void field_of(char *out, size_t len, const char *row, int k)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", row);
	char *f[DMR_TEST_MAXCOL];
	ck_assert_int_eq(dmr_test_split(tmp, f, DMR_TEST_MAXCOL), 13);
	snprintf(out, len, "%s", f[k]);
}

/* Run the small shape on trace into temp dir `name`. */
static inline dmr_test_run_t run_into(char *dir, size_t len, const char *name, const char *trace,
				      const char *x0, const char *x1, const char *x2,
				      const char *x3)
{
	dmr_test_path(dir, len, name);
	return dmr_test_dmr("run", "--trace", trace, SMALL, "--quiet", "--out", dir, x0, x1, x2, x3,
			    NULL);
}

/* Edit line `at` of the base trace into `name`; run; check the refusal. */
static inline dmr_test_run_t bad_row(const char *name, int at_mid, int k, const char *v,
				     char *trace, size_t tlen, int *line_p, char *orig_field,
				     size_t oflen)
{
	char base[PATH_MAX], row[1200];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	int i = first_row(&L);
	if (at_mid)
		i += (L.n - i) / 2;
	ck_assert_int_lt(i, L.n);
	if (orig_field)
		field_of(orig_field, oflen, L.l[i], k);
	if (k >= 0) {
		row_with(row, sizeof(row), L.l[i], k, v);
	} else { /* drop the last field */
		snprintf(row, sizeof(row), "%s", L.l[i]);
		*strrchr(row, ',') = 0;
	}
	dmr_test_path(trace, tlen, name);
	lines_write(&L, L.n, i, row, 0, trace);
	lines_free(&L);
	*line_p = i + 1;
	char dir[PATH_MAX], dname[64];
	snprintf(dname, sizeof(dname), "out-%s", name);
	dmr_test_run_t r = run_into(dir, sizeof(dir), dname, trace, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 1);
	return r;
}

static inline void assert_at(const dmr_test_run_t *r, const char *trace, int line)
{
	char where[PATH_MAX + 32];
	snprintf(where, sizeof(where), "%s:%d:", trace, line);
	assert_has(r, where);
}

/* Copy the shipped profile to `name`, editing the "poll_ns" line: drop it
 * (negate = 0) or negate its value (negate = 1). */
static inline void profile_variant(char *out, size_t len, const char *name, int negate)
{
	char src[PATH_MAX + 64];
	snprintf(src, sizeof(src), "%s/models/cx6dx-100g.json", dmr_test_src);
	lines_t L;
	lines_load(&L, src);
	dmr_test_path(out, len, name);
	FILE *f = fopen(out, "w");
	ck_assert_ptr_nonnull(f);
	int seen = 0;
	for (int i = 0; i < L.n; i++) {
		char *l = L.l[i];
		if (!strstr(l, "\"poll_ns\"")) {
			fprintf(f, "%s\n", l);
			continue;
		}
		seen = 1;
		ck_assert_msg(l[strlen(l) - 1] == ',', "poll_ns is the last parameter: %s", l);
		if (!negate)
			continue;
		char *v = strstr(l, "\"value\":");
		ck_assert_ptr_nonnull(v);
		v += 8;
		while (*v == ' ')
			v++;
		ck_assert_msg(*v >= '1' && *v <= '9', "poll_ns value: %s", v);
		fprintf(f, "%.*s-%s\n", (int)(v - l), l, v);
	}
	ck_assert_int_eq(fclose(f), 0);
	lines_free(&L);
	ck_assert(seen);
}

#endif
