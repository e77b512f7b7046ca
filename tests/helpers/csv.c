/*
 * tests/helpers/csv.c - see csv.h.
 */
#include "helpers/csv.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/files.h"

int dmr_test_split(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line;;) {
		ck_assert_int_lt(n, max);
		f[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

void dmr_test_summary_load(dmr_test_summary_t *s, const char *dir, const char *name)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	s->buf = dmr_test_slurp(path, NULL);
	ck_assert_msg(s->buf != NULL, "%s: %s", path, strerror(errno));
	char *nl1 = strchr(s->buf, '\n');
	ck_assert_msg(nl1 != NULL, "%s: no header line", path);
	*nl1 = 0;
	char *row = nl1 + 1;
	char *nl2 = strchr(row, '\n');
	ck_assert_msg(nl2 != NULL, "%s: no data row", path);
	*nl2 = 0;
	ck_assert_msg(nl2[1] == 0, "%s: more than one data row", path);
	s->n = dmr_test_split(s->buf, s->name, DMR_TEST_MAXCOL);
	int nv = dmr_test_split(row, s->val, DMR_TEST_MAXCOL);
	ck_assert_msg(nv == s->n, "%s: %d header columns, %d values", path, s->n, nv);
}

const char *dmr_test_col(const dmr_test_summary_t *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return s->val[i];
	ck_abort_msg("summary.csv: no column '%s'", name);
	return NULL;
}

unsigned long long dmr_test_colu(const dmr_test_summary_t *s, const char *name)
{
	const char *v = dmr_test_col(s, name);
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	ck_assert_msg(*v && !*end && !errno && *v != '-', "column %s: '%s' not an integer", name,
		      v);
	return x;
}

double dmr_test_cold(const dmr_test_summary_t *s, const char *name)
{
	const char *v = dmr_test_col(s, name);
	char *end;
	double x = strtod(v, &end);
	ck_assert_msg(*v && !*end, "column %s: '%s' not a number", name, v);
	return x;
}

void dmr_test_summary_free(dmr_test_summary_t *s)
{
	free(s->buf);
}

double dmr_test_ts_col(const char *dir, const char *name, int *rows_p, double *lo_p, double *hi_p,
		       int *found_p)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/timeseries.csv", dir);
	char *ts = dmr_test_slurp(p, NULL);
	ck_assert_ptr_nonnull(ts);
	char *line = ts, *nl = strchr(line, '\n');
	ck_assert_msg(nl != NULL, "%s: no header line", p);
	*nl = 0;
	char *hdr[DMR_TEST_MAXCOL], *f[DMR_TEST_MAXCOL];
	int nh = dmr_test_split(line, hdr, DMR_TEST_MAXCOL), ic = -1, rows = 0;
	for (int i = 0; i < nh; i++)
		if (!strcmp(hdr[i], name))
			ic = i;
	if (found_p)
		*found_p = ic >= 0;
	ck_assert_msg(ic >= 0 || found_p, "%s: no column %s", p, name);
	double sum = ic < 0 ? -1 : 0, lo = 0, hi = 0;
	for (line = nl + 1; ic >= 0 && *line; line = nl + 1, rows++) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = 0;
		ck_assert_int_eq(dmr_test_split(line, f, DMR_TEST_MAXCOL), nh);
		double v = strtod(f[ic], NULL);
		sum += v;
		if (!rows || v < lo)
			lo = v;
		if (!rows || v > hi)
			hi = v;
	}
	free(ts);
	if (rows_p)
		*rows_p = rows;
	if (lo_p)
		*lo_p = lo;
	if (hi_p)
		*hi_p = hi;
	return sum;
}
