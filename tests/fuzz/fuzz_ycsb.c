/* tests/fuzz/fuzz_ycsb.c - the YCSB property file reader (traces/ycsb.h:
 * dmr_ycsb_props_load; seeds: traces/ycsb/workload[a-f]). */
#include "fuzz.h"
#include "traces/ycsb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = dmr_fuzz_file(data, size, "workload");
	dmr_ycsb_props_t p;
	dmr_err_t err;
	(void)dmr_ycsb_props_load(path, &p, &err);
	return 0;
}
