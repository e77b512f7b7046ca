/* tests/fuzz/fuzz_profile.c - the hardware profile loader (models/model.h:
 * dmr_model_load by path; seeds: models/NAME.json). */
#include "fuzz.h"
#include "models/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = dmr_fuzz_file(data, size, "profile.json");
	dmr_model_t m;
	dmr_err_t err;
	(void)dmr_model_load(path, &m, &err);
	return 0;
}
