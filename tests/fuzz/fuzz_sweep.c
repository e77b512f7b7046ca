/* tests/fuzz/fuzz_sweep.c - the sweep spec parser (replay/sweep.h:
 * dmr_sweep_spec_parse; seeds: scripts/sweeps/NAME.json). */
#include "fuzz.h"
#include "replay/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = dmr_fuzz_str(data, size);
	dmr_sweep_spec_t spec;
	dmr_err_t err;
	if (dmr_sweep_spec_parse(text, "spec.json", &spec, &err) == DMR_OK)
		dmr_sweep_spec_free(&spec);
	free(text);
	return 0;
}
