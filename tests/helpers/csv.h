/*
 * tests/helpers/csv.h - the CSV files a run writes (summary.csv: a header
 * row and one data row), columns found by name (dmr_test_helpers library).
 * Fields are unquoted: split at every ','.
 */
#ifndef DMR_TEST_CSV_H
#define DMR_TEST_CSV_H

#define DMR_TEST_MAXCOL 128

/* Split line in place at every ',' into f[0..max); returns the count;
 * more than max fields fail the test. */
int dmr_test_split(char *line, char **f, int max);

/* A summary file: columns name[i] = val[i], i < n; all point into buf. */
typedef struct dmr_test_summary {
	char *buf;
	int n;
	char *name[DMR_TEST_MAXCOL], *val[DMR_TEST_MAXCOL];
} dmr_test_summary_t;

/* Load DIR/NAME: asserts it exists, has a header line and exactly one data
 * row with as many values as columns. Free with dmr_test_summary_free. */
void dmr_test_summary_load(dmr_test_summary_t *s, const char *dir, const char *name);

/* The value of column name (into s->buf); a missing column fails the test. */
const char *dmr_test_col(const dmr_test_summary_t *s, const char *name);

/* DIR/timeseries.csv's column name over every row: returns the sum, *rows_p
 * the rows, *lo_p / *hi_p (each may be NULL) the least and largest value
 * (0 without rows). A missing column: *found_p = 0 and -1 returned when
 * found_p is given, else the test fails. Rows with another field count
 * than the header fail the test. */
double dmr_test_ts_col(const char *dir, const char *name, int *rows_p, double *lo_p, double *hi_p,
		       int *found_p);

/* Column name as an unsigned integer / a number; anything else fails. */
unsigned long long dmr_test_colu(const dmr_test_summary_t *s, const char *name);
double dmr_test_cold(const dmr_test_summary_t *s, const char *name);

void dmr_test_summary_free(dmr_test_summary_t *s);

#endif
