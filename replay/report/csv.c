/*
 * replay/report/csv.c - a CSV file with a header line into rows of fields
 * (SUMMARY.csv, a run's timeseries.csv; contract in replay/report.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "report_impl.h"

void dmr_report_csv_free(dmr_report_csv_t *csv)
{
	if (!csv)
		return;
	if (csv->rows)
		for (size_t i = 0; i < csv->nrows; i++)
			free(csv->rows[i]);
	free(csv->rows);
	free(csv->cols);
	free(csv->line);
	free(csv->buf);
	memset(csv, 0, sizeof(*csv));
}

int dmr_report_csv_col(const dmr_report_csv_t *csv, const char *name)
{
	for (size_t i = 0; i < csv->ncols; i++)
		if (strcmp(csv->cols[i], name) == 0)
			return (int)i;
	return -1;
}

dmr_status_t dmr_report_csv_load(const char *path, dmr_report_csv_t *csv_p, dmr_err_t *err)
{
	dmr_report_csv_t c;
	memset(&c, 0, sizeof(c));
	size_t len = 0;
	dmr_status_t st = dmr_file_read_all(path, (size_t)1 << 34, &c.buf, &len, err);
	if (st != DMR_OK)
		return st;
	if (len == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: empty file (no header, no rows)", path);
		goto fail;
	}
	c.buf[len] = '\0';
	/* a BOM would become part of the first column's name (the report
	 * would then group by another column): refused, not stripped, so that
	 * the file is fixed once for every reader */
	if (len >= 3 && memcmp(c.buf, "\xEF\xBB\xBF", 3) == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:1: field 1: the file starts with a UTF-8 byte-order mark "
				 "(EF BB BF, added by an editor or a spreadsheet?): remove it "
				 "(sed -i '1s/^\\xEF\\xBB\\xBF//' %s)",
				 path, path);
		goto fail;
	}
	/* count lines */
	size_t nl = 1;
	for (size_t i = 0; i < len; i++)
		nl += c.buf[i] == '\n';
	c.rows = calloc(nl, sizeof(*c.rows));
	c.line = calloc(nl, sizeof(*c.line));
	c.cols = calloc(DMR_REPORT_MAX_COLS, sizeof(*c.cols));
	if (!c.rows || !c.line || !c.cols) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto fail;
	}
	char *p = c.buf;
	size_t lineno = 0;
	while (*p) {
		char *e = strchr(p, '\n');
		char *next = e ? e + 1 : p + strlen(p);
		if (e)
			*e = '\0';
		lineno++;
		size_t ll = strlen(p);
		if (ll && p[ll - 1] == '\r')
			p[--ll] = '\0';
		if (lineno == 1) {
			int nf = dmr_report_csv_split(p, c.cols, DMR_REPORT_MAX_COLS);
			if (nf < 1 || nf > DMR_REPORT_MAX_COLS || (nf == 1 && !c.cols[0][0])) {
				st =
				    dmr_err_set(err, DMR_ERR_PARSE, "%s:1: not a CSV header", path);
				goto fail;
			}
			c.ncols = (size_t)nf;
			for (size_t i = 0; i < c.ncols; i++)
				if (!c.cols[i][0]) {
					st = dmr_err_set(err, DMR_ERR_PARSE,
							 "%s:1: column %zu has no name", path,
							 i + 1);
					goto fail;
				}
		} else if (ll == 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%zu: empty line", path, lineno);
			goto fail;
		} else {
			char **row = calloc(c.ncols > 0 ? c.ncols : 1, sizeof(char *));
			if (!row) {
				st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
				goto fail;
			}
			c.rows[c.nrows] = row;
			c.line[c.nrows] = lineno;
			c.nrows++;
			int nf = dmr_report_csv_split(p, row, (int)c.ncols);
			if (nf != (int)c.ncols) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 nf < 0 ? "%s:%zu: unterminated quote"
							: "%s:%zu: %d fields, the header has %zu%s",
						 path, lineno, nf, c.ncols,
						 e ? "" : " (last line, no newline: cut short?)");
				goto fail;
			}
		}
		p = next;
	}
	if (c.nrows == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: no data rows (only a header)", path);
		goto fail;
	}
	*csv_p = c;
	return DMR_OK;
fail:
	dmr_report_csv_free(&c);
	return st;
}
