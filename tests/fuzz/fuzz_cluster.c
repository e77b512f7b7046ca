/* tests/fuzz/fuzz_cluster.c - the cluster config parser (replay/roles.h:
 * dmr_cluster_parse; seeds: tests/data/doctor/NAME.json). */
#include "fuzz.h"
#include "replay/roles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = dmr_fuzz_str(data, size);
	static dmr_verbs_cluster_t cl;
	char note[256];
	dmr_err_t err;
	(void)dmr_cluster_parse(text, "cluster.json", &cl, note, sizeof(note), &err);
	free(text);
	return 0;
}
