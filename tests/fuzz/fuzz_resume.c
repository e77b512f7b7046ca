/* tests/fuzz/fuzz_resume.c - the summary CSV reader of a sweep's resume
 * (replay/sweep.h: dmr_sweep_plan_resume, without repair, against the plan
 * of scripts/sweeps/regimes.json; seeds: tests/golden/expected/NAME.summary.csv). */
#include "fuzz.h"
#include "replay/sweep.h"

static dmr_sweep_spec_t g_spec;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	dmr_err_t err;
	if (dmr_sweep_spec_load(DMR_SOURCE_DIR "/scripts/sweeps/regimes.json", &g_spec, &err) !=
	    DMR_OK) {
		fprintf(stderr, "fuzz_resume: %s\n", err.msg);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = dmr_fuzz_file(data, size, "summary.csv");
	dmr_sweep_plan_t plan;
	dmr_err_t err;
	if (dmr_sweep_plan_build(&g_spec, &plan, &err) != DMR_OK)
		abort();
	(void)dmr_sweep_plan_resume(&plan, path, 0, &err);
	dmr_sweep_plan_free(&plan);
	return 0;
}
