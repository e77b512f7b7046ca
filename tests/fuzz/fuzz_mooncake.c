/* tests/fuzz/fuzz_mooncake.c - the Mooncake JSONL converter (traces/kvcache.h:
 * dmr_kv_gen_mooncake, at most 1000 lines) and the KV trace it writes read
 * back (dmr_kv_trace_open/next); seeds: tests/data/mooncake-200.jsonl. */
#include "fuzz.h"
#include "traces/kvcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = dmr_fuzz_file(data, size, "mooncake.jsonl");
	char out[4200];
	snprintf(out, sizeof(out), "%s.kv.csv", in);
	dmr_kv_gen_opts_t o = {
	    .mooncake = in, .out = out, .block_bytes = 4096, .max_requests = 1000};
	dmr_err_t err;
	if (dmr_kv_gen_mooncake(&o, NULL, &err) == DMR_OK) {
		dmr_kv_reader_t *r = NULL;
		if (dmr_kv_trace_open(out, &r, &err) == DMR_OK) {
			dmr_kv_req_t req;
			for (int i = 0; i < 2000 && dmr_kv_trace_next(r, &req, &err) == DMR_OK; i++)
				;
			dmr_kv_trace_close(r);
		}
		unlink(out);
	}
	return 0;
}
