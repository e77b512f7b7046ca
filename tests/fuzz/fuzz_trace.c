/* tests/fuzz/fuzz_trace.c - the transaction trace reader (traces/trace.h:
 * dmr_trace_open, then every transaction; seeds: traces/samples). */
#include "fuzz.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = dmr_fuzz_file(data, size, "trace.csv");
	dmr_trace_reader_t *r = NULL;
	dmr_err_t err;
	if (dmr_trace_open(path, &r, &err) != DMR_OK)
		return 0;
	static dmr_trace_txn_t t;
	for (int i = 0; i < 100000 && dmr_trace_next(r, &t, &err) == DMR_OK; i++)
		;
	dmr_trace_close(r);
	return 0;
}
