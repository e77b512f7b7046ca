/* tests/fuzz/fuzz_csv.c - the summary CSV reader of `dmreplay report`
 * (replay/report.h: dmr_report_csv_load, then every column looked up;
 * seeds: tests/golden/expected/NAME.summary.csv). */
#include "fuzz.h"
#include "replay/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = dmr_fuzz_file(data, size, "summary.csv");
	dmr_report_csv_t csv;
	dmr_err_t err;
	if (dmr_report_csv_load(path, &csv, &err) != DMR_OK)
		return 0;
	for (size_t c = 0; c < csv.ncols; c++)
		if (dmr_report_csv_col(&csv, csv.cols[c]) < 0)
			abort(); /* a header name must be found */
	dmr_report_csv_free(&csv);
	return 0;
}
