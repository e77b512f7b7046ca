/*
 * tests/integration/test_kv.c - the KV-cache workload (issue #5): model presets, the
 * Mooncake converter (fixtures, every refused input), the KV trace reader,
 * the pool on sim (hit ratio of an unbounded pool = the one computed from
 * the hash ids alone; eviction; placement; a block larger than a segment),
 * the physics of large transfers on cx6dx-100g, the pool and the bench on
 * the threaded shm backend (master reached over the RPC mailboxes; hit
 * ratio = sim's = the hash ids'; every get's content checked; a corrupted
 * put caught), and the command line.
 *
 * Fixtures: tests/data/mooncake-200.jsonl is the first 200 lines of
 * kvcache-ai/Mooncake FAST25-release/traces/synthetic_trace.jsonl (commit
 * 3b5a594133958449a1feaf1c9e0fc1b553e34a28, Apache-2.0; see
 * tests/data/mooncake-200.NOTICE). The whole trace is used when
 * $DMR_SOURCE_DIR/../shared/data/mooncake/synthetic_trace.jsonl exists
 * (the test says so when it does not). The wall time of the whole trace is
 * measured by scripts/bench-kv, not here.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backends/backend.h"
#include "core/base/timeps.h"
#include "models/model.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/kv.h"
#include "replay/kv/kv_impl.h"
#include "traces/kvcache.h"

static dmr_status_t convert(const char *in, const char *out, uint64_t block, dmr_kv_gen_stats_t *s,
			    dmr_err_t *err)
{
	dmr_kv_gen_opts_t o = {.mooncake = in, .out = out, .block_bytes = block};
	return dmr_kv_gen_mooncake(&o, s, err);
}

/* Hits and blocks computed from the hash ids alone, requests in file order:
 * a block is a hit when an earlier request had the same id. */
static void direct_hits(const char *jsonl, uint64_t limit, uint64_t *hits, uint64_t *blocks)
{
	FILE *f = fopen(jsonl, "r");
	ck_assert_ptr_nonnull(f);
	size_t cap = 1 << 16, n = 0;
	uint64_t *tab = calloc(cap, sizeof(uint64_t)); /* id + 1, open addressing */
	ck_assert_ptr_nonnull(tab);
	char *line = NULL;
	size_t lcap = 0;
	uint64_t req = 0;
	*hits = *blocks = 0;
	while ((limit == 0 || req < limit) && getline(&line, &lcap, f) > 0) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		ck_assert_msg(o != NULL, "%s: %s", jsonl, je.text);
		json_t *h = json_object_get(o, "hash_ids");
		for (size_t i = 0; i < json_array_size(h); i++) {
			uint64_t id = (uint64_t)json_integer_value(json_array_get(h, i)) + 1;
			if ((n + 1) * 2 > cap) {
				size_t nc = cap * 2;
				uint64_t *t = calloc(nc, sizeof(uint64_t));
				ck_assert_ptr_nonnull(t);
				for (size_t j = 0; j < cap; j++)
					if (tab[j]) {
						size_t p =
						    (tab[j] * 0x9E3779B97F4A7C15ull) & (nc - 1);
						while (t[p])
							p = (p + 1) & (nc - 1);
						t[p] = tab[j];
					}
				free(tab);
				tab = t;
				cap = nc;
			}
			size_t p = (id * 0x9E3779B97F4A7C15ull) & (cap - 1);
			while (tab[p] && tab[p] != id)
				p = (p + 1) & (cap - 1);
			(*blocks)++;
			if (tab[p])
				(*hits)++;
			else {
				tab[p] = id;
				n++;
			}
		}
		json_decref(o);
		req++;
	}
	free(line);
	free(tab);
	fclose(f);
}

static void fixture200(char *buf, size_t n)
{
	snprintf(buf, n, "%s/tests/data/mooncake-200.jsonl", dmr_test_src);
}

/* A small-block replay (hit ratio does not depend on the block size). */
static void opts_small(dmr_kv_opts_t *o, const char *trace, const char *out)
{
	dmr_kv_opts_default(o);
	o->trace = trace;
	o->out_dir = out;
	o->quiet = 1;
}

/* Each test's temp dir (a checked fixture) is removed after it. */
static void teardown(void)
{
	ck_assert_int_eq(dmr_test_rmtree(dmr_test_tmp), 0);
}

/* ---- presets ------------------------------------------------------------ */

START_TEST(test_presets)
{
	const dmr_kv_model_t *m = dmr_kv_model_find("llama-3-8b");
	ck_assert_ptr_nonnull(m);
	/* 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB per token */
	ck_assert_uint_eq(dmr_kv_model_bytes_per_token(m), 131072);
	ck_assert_uint_eq(dmr_kv_model_block_bytes(m), 64ull << 20);
	ck_assert_uint_eq(dmr_kv_model_bytes_per_token(dmr_kv_model_find("LLAMA-3-70B")), 327680);
	ck_assert_uint_eq(dmr_kv_model_bytes_per_token(dmr_kv_model_find("qwen2-7b")), 57344);
	ck_assert_uint_eq(dmr_kv_model_bytes_per_token(dmr_kv_model_find("mistral-7b")), 131072);
	ck_assert_uint_eq(dmr_kv_model_bytes_per_token(dmr_kv_model_find("qwen2-0.5b")), 12288);
	ck_assert_ptr_null(dmr_kv_model_find("gpt-5"));
	for (const dmr_kv_model_t *p = dmr_kv_models; p->name; p++)
		ck_assert_msg(p->source && strstr(p->source, "config.json"), "%s: no source",
			      p->name);
}
END_TEST

/* ---- converter ---------------------------------------------------------- */

START_TEST(test_gen_small_exact)
{
	char in[600], out[600];
	dmr_test_path(in, sizeof(in), "small.jsonl");
	dmr_test_path(out, sizeof(out), "small.kv");
	dmr_test_write_file(
	    in, "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 7, \"hash_ids\": "
		"[5, 6]}\n"
		"{\"timestamp\": 2.5, \"input_length\": 1025, \"output_length\": 0, \"hash_ids\": "
		"[5, 6, 9], \"extra\": 1}\n"
		"{\"hash_ids\": [], \"output_length\": 1, \"input_length\": 0, \"timestamp\": 3}");
	dmr_kv_gen_stats_t s;
	dmr_err_t err;
	ck_assert_msg(convert(in, out, 4096, &s, &err) == DMR_OK, "%s", err.msg);
	char *got = dmr_test_read_text(out);
	ck_assert_str_eq(got, "# dmreplay-kvtrace v1\n"
			      "# source small.jsonl\n"
			      "# block_tokens 512\n"
			      "# block_bytes 4096\n"
			      "# kv_model -\n"
			      "req,t_us,input_tokens,output_tokens,nblocks,blocks\n"
			      "0,0,1024,7,2,5 6\n"
			      "1,2500,1025,0,3,5 6 9\n"
			      "2,3000,0,1,0,\n"
			      "# end 3 5\n");
	free(got);
	ck_assert_uint_eq(s.requests, 3);
	ck_assert_uint_eq(s.blocks, 5);
	ck_assert_uint_eq(s.distinct, 3);
	ck_assert_uint_eq(s.reused, 2);
	/* and it reads back */
	dmr_kv_reader_t *r;
	ck_assert_msg(dmr_kv_trace_open(out, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(dmr_kv_trace_header(r)->block_bytes, 4096);
	dmr_kv_req_t q;
	ck_assert_int_eq(dmr_kv_trace_next(r, &q, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_trace_next(r, &q, &err), DMR_OK);
	ck_assert_uint_eq(q.t_us, 2500);
	ck_assert_uint_eq(q.nblocks, 3);
	ck_assert_uint_eq(q.blocks[2], 9);
	ck_assert_int_eq(dmr_kv_trace_next(r, &q, &err), DMR_OK);
	ck_assert_uint_eq(q.nblocks, 0);
	ck_assert_int_eq(dmr_kv_trace_next(r, &q, &err), DMR_EOF);
	dmr_kv_trace_close(r);
}
END_TEST

static const char *good =
    "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 1, \"hash_ids\": [1, 2]}\n";

/* Each bad line, placed as line 2 after a good one; the error must name
 * FILE:2 and the given text (the field or the cause). */
static const struct {
	const char *line, *want;
} bad_lines[] = {
    {"not json\n", "not JSON"},
    {"{\"timestamp\": 1, \"input_length\": 10\n", "not JSON"},
    {"\n", "empty line"},
    {"[1, 2]\n", "not a JSON object"},
    {"{\"input_length\": 10, \"output_length\": 1, \"hash_ids\": [3]}\n",
     "field 'timestamp': missing"},
    {"{\"timestamp\": 1, \"output_length\": 1, \"hash_ids\": [3]}\n",
     "field 'input_length': missing"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"hash_ids\": [3]}\n",
     "field 'output_length': missing"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1}\n",
     "field 'hash_ids': missing"},
    {"{\"timestamp\": 1, \"input_length\": -10, \"output_length\": 1, \"hash_ids\": []}\n",
     "field 'input_length': negative"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": -1, \"hash_ids\": [3]}\n",
     "field 'output_length': negative"},
    {"{\"timestamp\": -1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [3]}\n",
     "field 'timestamp': negative"},
    {"{\"timestamp\": \"1\", \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [3]}\n",
     "field 'timestamp': not a number"},
    {"{\"timestamp\": 1, \"input_length\": 10.5, \"output_length\": 1, \"hash_ids\": [3]}\n",
     "field 'input_length': not an integer"},
    {"{\"timestamp\": 1, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [3, 4]}\n",
     "field 'hash_ids': 2 ids, expected ceil(input_length 1025 / 512) = 3"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": 3}\n",
     "field 'hash_ids': not an array"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [\"a\"]}\n",
     "field 'hash_ids': element 0 is not an integer"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [-3]}\n",
     "field 'hash_ids': element 0 negative"},
    {"{\"timestamp\": 1, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [7, 8, 7]}\n",
     "field 'hash_ids': id 7 repeated (elements 0 and 2)"},
    {"{\"timestamp\": 1, \"timestamp\": 2, \"input_length\": 10, \"output_length\": 1, "
     "\"hash_ids\": [3]}\n",
     "not JSON"},
    {"{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [3]} x\n",
     "not JSON"},
};

START_TEST(test_gen_refuses)
{
	char in[600], out[600], tmp[700], text[1024], want[700];
	dmr_test_path(in, sizeof(in), "bad.jsonl");
	dmr_test_path(out, sizeof(out), "bad.kv");
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	snprintf(text, sizeof(text), "%s%s", good, bad_lines[_i].line);
	dmr_test_write_file(in, text);
	dmr_err_t err;
	dmr_status_t st = convert(in, out, 4096, NULL, &err);
	ck_assert_msg(st == DMR_ERR_PARSE, "case %d accepted (%s)", _i, bad_lines[_i].line);
	snprintf(want, sizeof(want), "%s:2: ", in);
	ck_assert_msg(strstr(err.msg, want) != NULL, "case %d: '%s' lacks '%s'", _i, err.msg, want);
	ck_assert_msg(strstr(err.msg, bad_lines[_i].want) != NULL, "case %d: '%s' lacks '%s'", _i,
		      err.msg, bad_lines[_i].want);
	ck_assert_msg(!dmr_test_exists(out) && !dmr_test_exists(tmp), "case %d left an output file",
		      _i);
}
END_TEST

START_TEST(test_gen_time_backwards)
{
	char in[600], out[600];
	dmr_test_path(in, sizeof(in), "back.jsonl");
	dmr_test_path(out, sizeof(out), "back.kv");
	dmr_test_write_file(
	    in,
	    "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"
	    "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [2]}\n"
	    "{\"timestamp\": 4.5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [3]}\n");
	dmr_err_t err;
	ck_assert_int_eq(convert(in, out, 4096, NULL, &err), DMR_ERR_PARSE);
	ck_assert_msg(
	    strstr(err.msg, ":3: field 'timestamp': 4.500 ms is before line 2's 5.000 ms"), "%s",
	    err.msg);
	ck_assert(!dmr_test_exists(out));
	/* issue #15 D15: a byte-order mark is named (it said "not JSON") */
	dmr_test_write_file(
	    in, "\xEF\xBB\xBF{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, "
		"\"hash_ids\": [1]}\n");
	ck_assert_int_eq(convert(in, out, 4096, NULL, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":1: the file starts with a UTF-8 byte-order mark"), "%s",
		      err.msg);
	/* a missing input and block size 0 */
	dmr_test_path(in, sizeof(in), "nope.jsonl");
	ck_assert_int_eq(convert(in, out, 4096, NULL, &err), DMR_ERR_IO);
	ck_assert(strstr(err.msg, "nope.jsonl") != NULL);
	ck_assert_int_eq(convert(in, out, 0, NULL, &err), DMR_ERR_INVALID);
}
END_TEST

START_TEST(test_gen_fixture_deterministic)
{
	char in[600], a[600], b[600];
	fixture200(in, sizeof(in));
	dmr_test_path(a, sizeof(a), "a.kv");
	dmr_test_path(b, sizeof(b), "b.kv");
	dmr_kv_gen_stats_t s;
	dmr_err_t err;
	ck_assert_msg(convert(in, a, 64ull << 20, &s, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(s.requests, 200);
	uint64_t hits, blocks;
	direct_hits(in, 0, &hits, &blocks);
	ck_assert_uint_eq(s.blocks, blocks);
	ck_assert_uint_eq(s.reused, hits);
	ck_assert_msg(convert(in, b, 64ull << 20, NULL, &err) == DMR_OK, "%s", err.msg);
	char *x = dmr_test_read_text(a), *y = dmr_test_read_text(b);
	ck_assert_str_eq(x, y);
	free(x);
	free(y);
}
END_TEST

/* ---- KV trace reader ---------------------------------------------------- */

static const char *kv_hdr = "# dmreplay-kvtrace v1\n# block_tokens 512\n# block_bytes 4096\n"
			    "req,t_us,input_tokens,output_tokens,nblocks,blocks\n";

static const struct {
	const char *body, *want;
} bad_kv[] = {
    {"0,0,512,1,1,7\n", "bad.kv: its last line is not the trailer"},
    {"0,0,512,1,1,7\n# end 1 1", "(no '# end' trailer: the file was cut"},
    {"0,0,512,1,1,7\n# end 2 1\n", "trailer says 2 requests"},
    {"0,0,513,1,1,7\n# end 1 1\n",
     ":5: column 'nblocks': 1, expected ceil(input_tokens 513 / 512) = 2"},
    {"0,9,512,1,1,7\n1,8,512,1,1,8\n# end 2 2\n", ":6: column 't_us': 8 is before"},
    {"0,0,1024,1,2,7 7\n# end 1 2\n", ":5: column 'blocks': id 7 repeated"},
    {"1,0,512,1,1,7\n# end 1 1\n", ":5: column 'req': 1, expected 0"},
    {"0,0,512,-1,1,7\n# end 1 1\n", ":5: column 'output_tokens'"},
    {"0,0,1024,1,2,7\n# end 1 2\n", ":5: column 'blocks': expected 2"},
    {"0,0,512,1,1,7\n# end 1 1\n0,0,512,1,1,7\n", "or something follows its trailer)"},
    {"# end 0 0\n", ":5: no requests: an empty trace has no hit ratio"},
    {"0,0,0,1,0,\n# end 1 0\n", "its requests request no blocks"},
    {"0,0,0,1,0,\n1,0,0,1,0,\n# end 2 0\n", "trailer '# end 2 0' (the last line)"},
    {"0,0,512,1,1,7\n# end 0 0\n", ":5: a request, but the trailer '# end 0 0'"},
};

START_TEST(test_reader_refuses)
{
	char p[600], text[2048];
	dmr_test_path(p, sizeof(p), "bad.kv");
	snprintf(text, sizeof(text), "%s%s", kv_hdr, bad_kv[_i].body);
	dmr_test_write_file(p, text);
	dmr_kv_reader_t *r;
	dmr_err_t err;
	/* a file whose last line is not the trailer (cut, or with rows after
	 * it) is refused at open, the rest as they are read */
	dmr_status_t st = dmr_kv_trace_open(p, &r, &err);
	if (st == DMR_OK) {
		dmr_kv_req_t q;
		while ((st = dmr_kv_trace_next(r, &q, &err)) == DMR_OK)
			;
		dmr_kv_trace_close(r);
	}
	ck_assert_msg(st == DMR_ERR_PARSE, "case %d accepted", _i);
	ck_assert_msg(strstr(err.msg, bad_kv[_i].want) != NULL, "case %d: '%s' lacks '%s'", _i,
		      err.msg, bad_kv[_i].want);
}
END_TEST

START_TEST(test_reader_bad_header)
{
	char p[600];
	dmr_kv_reader_t *r;
	dmr_err_t err;
	dmr_test_path(p, sizeof(p), "h.kv");
	dmr_test_write_file(p, "# dmreplay-trace v1\n");
	ck_assert_int_eq(dmr_kv_trace_open(p, &r, &err), DMR_ERR_PARSE);
	ck_assert(strstr(err.msg, "not a dmreplay KV trace") != NULL);
	/* issue #15 D15: a byte-order mark is named (it said "not a KV trace") */
	dmr_test_write_file(p, "\xEF\xBB\xBF# dmreplay-kvtrace v1\n");
	ck_assert_int_eq(dmr_kv_trace_open(p, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":1: the file starts with a UTF-8 byte-order mark"), "%s",
		      err.msg);
	dmr_test_write_file(p, "# dmreplay-kvtrace v2\n");
	ck_assert_int_eq(dmr_kv_trace_open(p, &r, &err), DMR_ERR_PARSE);
	dmr_test_write_file(
	    p, "# dmreplay-kvtrace v1\n# block_tokens 512\nreq,t_us,input_tokens,output_tokens,"
	       "nblocks,blocks\n");
	ck_assert_int_eq(dmr_kv_trace_open(p, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "'block_bytes' missing") != NULL, "%s", err.msg);
	dmr_test_write_file(p, "# dmreplay-kvtrace v1\n# block_tokens 512\n# block_bytes 0\n");
	ck_assert_int_eq(dmr_kv_trace_open(p, &r, &err), DMR_ERR_PARSE);
}
END_TEST

/* ---- the pool on sim ---------------------------------------------------- */

static void hit_ratio_equals_direct(const char *jsonl, uint64_t limit)
{
	char kv[600], out[600];
	dmr_test_path(kv, sizeof(kv), "t.kv");
	dmr_test_path(out, sizeof(out), "out");
	dmr_err_t err;
	dmr_kv_gen_opts_t g = {
	    .mooncake = jsonl, .out = kv, .block_bytes = 4096, .max_requests = limit};
	ck_assert_msg(dmr_kv_gen_mooncake(&g, NULL, &err) == DMR_OK, "%s", err.msg);
	uint64_t hits, blocks;
	direct_hits(jsonl, limit, &hits, &blocks);
	ck_assert_uint_gt(hits, 0);

	dmr_kv_opts_t o;
	dmr_kv_result_t r;
	opts_small(&o, kv, out);
	o.time_scale = 0; /* all arrive at once: hits wait for the earlier puts */
	ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.blocks_requested, blocks);
	ck_assert_uint_eq(r.blocks_got, hits);
	ck_assert_uint_eq(r.blocks_put, blocks - hits);
	ck_assert(r.hit_ratio == (double)hits / blocks);
	ck_assert_uint_eq(r.bytes_got, hits * 4096);
	ck_assert_uint_eq(r.evictions, 0);
	ck_assert_uint_gt(r.waited_gets, 0);

	/* the same in closed loop, and at trace speed */
	o.outstanding = 3;
	ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.blocks_got, hits);
	ck_assert_uint_eq(r.blocks_requested, blocks);
	o.outstanding = 0;
	o.time_scale = 1;
	o.placement = DMR_KV_PLACE_LEAST;
	ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.blocks_got, hits);
	printf("test_kv: %s: hit ratio %.6f (%llu / %llu) from the pool and from the hash ids\n",
	       jsonl, r.hit_ratio, (unsigned long long)hits, (unsigned long long)blocks);
}

START_TEST(test_hit_ratio_fixture)
{
	char in[600];
	fixture200(in, sizeof(in));
	hit_ratio_equals_direct(in, 0);
}
END_TEST

START_TEST(test_hit_ratio_whole_trace)
{
	char in[700];
	snprintf(in, sizeof(in), "%s/../shared/data/mooncake/synthetic_trace.jsonl", dmr_test_src);
	if (!dmr_test_exists(in)) {
		printf("test_kv: %s not found: whole-trace hit ratio not checked\n", in);
		return;
	}
	hit_ratio_equals_direct(in, 0);
}
END_TEST

START_TEST(test_pool_bounded)
{
	char in[600], kv[600], out[600];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "t.kv");
	dmr_test_path(out, sizeof(out), "out");
	dmr_err_t err;
	ck_assert_msg(convert(in, kv, 4096, NULL, &err) == DMR_OK, "%s", err.msg);
	dmr_kv_opts_t o;
	dmr_kv_result_t unb, r;
	opts_small(&o, kv, out);
	ck_assert_msg(dmr_kv_run(&o, &unb, &err) == DMR_OK, "%s", err.msg);
	for (int pl = 0; pl < 2; pl++) {
		o.unbounded = 0;
		o.capacity = 1000 * 4096; /* 4 segments of 250 blocks */
		o.placement = pl ? DMR_KV_PLACE_LEAST : DMR_KV_PLACE_RR;
		ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
		ck_assert_uint_gt(r.evictions, 0);
		ck_assert_uint_le(r.max_blocks_used, 950); /* high water 0.95 */
		ck_assert_uint_le(r.blocks_got, unb.blocks_got);
		ck_assert_uint_eq(r.blocks_requested, unb.blocks_requested);
		ck_assert_uint_eq(r.blocks_got + r.blocks_put + r.puts_dropped, r.blocks_requested);
		ck_assert_uint_eq(r.capacity, 1000 * 4096);
	}
	/* a block larger than a segment */
	o.capacity = 3 * 4096; /* 4 segments of 3072 bytes */
	ck_assert_int_eq(dmr_kv_run(&o, &r, &err), DMR_ERR_RANGE);
	ck_assert_msg(strstr(err.msg, "larger than a segment") != NULL, "%s", err.msg);
	/* options */
	o.capacity = 0;
	ck_assert_int_eq(dmr_kv_run(&o, &r, &err), DMR_ERR_INVALID);
	o.capacity = 1 << 20;
	o.low_water = 0.99;
	ck_assert_int_eq(dmr_kv_run(&o, &r, &err), DMR_ERR_INVALID);
}
END_TEST

START_TEST(test_results_files)
{
	char in[600], kv[600], out[600], p[700];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "t.kv");
	dmr_test_path(out, sizeof(out), "res/sub");
	dmr_err_t err;
	ck_assert_msg(convert(in, kv, 1 << 20, NULL, &err) == DMR_OK, "%s", err.msg);
	dmr_kv_opts_t o;
	dmr_kv_result_t r, r2;
	opts_small(&o, kv, out);
	o.requests = 50;
	o.window_ms = 100;
	ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.requests, 50);
	ck_assert_str_eq(r.status, "complete");
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	char *s = dmr_test_read_text(p);
	ck_assert(strncmp(s, "workload,trace,kv_model,block_bytes,", 36) == 0);
	ck_assert(strstr(s, "hit_ratio") && strstr(s, "p999_us") && strstr(s, "link_util"));
	ck_assert(strstr(s, ",complete,") != NULL);
	free(s);
	snprintf(p, sizeof(p), "%s/timeseries.csv", out);
	s = dmr_test_read_text(p);
	ck_assert(strncmp(s, "t_s,arrivals,completed,", 23) == 0);
	free(s);
	/* no temp file of the atomic writes (".NAME.PID.SEQ.tmp") is left */
	DIR *d = opendir(out);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *de; (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		ck_assert_msg(l < 4 || strcmp(de->d_name + l - 4, ".tmp") != 0, "%s", de->d_name);
	}
	closedir(d);
	snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
	ck_assert(!dmr_test_exists(p));
	/* deterministic */
	ck_assert_msg(dmr_kv_run(&o, &r2, &err) == DMR_OK, "%s", err.msg);
	ck_assert(r.p50_us == r2.p50_us && r.p999_us == r2.p999_us &&
		  r.sim_time_s == r2.sim_time_s);
	ck_assert_uint_eq(r.wire_to_mn, r2.wire_to_mn);
	/* link bytes: at least the payload, in the right direction */
	ck_assert_uint_ge(r.wire_to_mn, r.bytes_put);
	ck_assert_uint_ge(r.wire_from_mn, r.bytes_got);
	ck_assert(r.link_util > 0 && r.link_util <= 1);
	/* a truncated trace (cut at a line or within one) is refused before
	 * the run, as `run` refuses one: nothing run, no --out made (the
	 * trial of session 12 found it run to the cut, partial results) */
	char cut[600], cmd[1400], out2[600];
	dmr_test_path(cut, sizeof(cut), "cut.kv");
	dmr_test_path(out2, sizeof(out2), "out2");
	const char *how[] = {"head -n 60", "head -c 3000"};
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd), "%s '%s' > '%s'", how[k], kv, cut);
		ck_assert_int_eq(system(cmd), 0);
		o.trace = cut;
		o.out_dir = out2;
		o.requests = 0;
		ck_assert_int_eq(dmr_kv_run(&o, &r, &err), DMR_ERR_PARSE);
		ck_assert_msg(strstr(err.msg, "no '# end' trailer") != NULL, "%s", err.msg);
		ck_assert(!r.partial);
		ck_assert_uint_eq(r.requests, 0);
		ck_assert(!dmr_test_exists(out2));
	}
}
END_TEST

/* ---- the sim refilling slices itself (DMR_BE_CTL_STREAMS) ---------------- */

/* summary.csv without its wall_s column (the one that may differ). */
static char *summary_but_wall(const char *out)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	char *s = dmr_test_read_text(p);
	char *nl = strchr(s, '\n');
	ck_assert_ptr_nonnull(nl);
	/* the column's index in the header, then drop that field of row 1 */
	int col = 0, want = -1;
	for (char *f = s; f < nl; col++) {
		char *e = strpbrk(f, ",\n");
		if (e - f == 6 && strncmp(f, "wall_s", 6) == 0)
			want = col;
		f = e + 1;
	}
	ck_assert_int_ge(want, 0);
	char *f = nl + 1;
	for (int c = 0; c < want; c++)
		f = strchr(f, ',') + 1;
	char *e = strchr(f, ',');
	memmove(f, e, strlen(e) + 1);
	return s;
}

/* The sim refills a transfer's slices itself unless --no-streams: the same
 * summary (but wall_s) and time series, byte for byte, over the shapes that
 * change what a refill does (batches over 64 WRs, a short last slice,
 * windows ending often, several clients per CN, a bounded pool, a closed
 * loop, the software-NIC profile, folded and unfolded regions), with most
 * completions taken by the sim; fault:sim (a wrapper: the sim would post
 * past it) and blocks that fit in flight (replay/kv/sim.c) take none and
 * give the same results too. */
START_TEST(test_streams_same_results)
{
	char in[600], kv[600], a[600], b[600];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "s.kv");
	dmr_test_path(a, sizeof(a), "a");
	dmr_test_path(b, sizeof(b), "b");
	dmr_err_t err;
	ck_assert_msg(convert(in, kv, 4 << 20, NULL, &err) == DMR_OK, "%s", err.msg);
	for (int k = 0; k < 11; k++) {
		dmr_kv_opts_t o;
		dmr_kv_result_t ra, rb;
		opts_small(&o, kv, a);
		o.requests = 60;
		double most =
		    0.5; /* of the slices, taken by the sim (64 KiB slices: 48 of 64 per block) */
		switch (k) {
		case 1:
			o.qp_depth = 100; /* more than 64 in flight (the caller polls 64) */
			o.slice = 16384;
			break;
		case 2:
			o.slice = 100000; /* a shorter last slice per block */
			break;
		case 3:
			o.window_ms = 0.05; /* the time series' window ends often */
			most = 0.3;
			break;
		case 4:
			o.cns = 2;
			o.clients = 3;
			break;
		case 5:
			o.unbounded = 0;
			o.capacity = 200ull << 20; /* evictions */
			break;
		case 6:
			o.outstanding = 4;
			break;
		case 7:
			o.profile = "rxe-qemu"; /* software NIC: the host CPU is shared */
			break;
		case 8:
			o.unbounded = 0; /* not folded: the bytes move */
			o.capacity = 64ull << 20;
			o.sim_region = 64ull << 20;
			break;
		case 9:
			o.backend = "fault:sim";
			most = -1;
			break;
		case 10: /* 64 slices a block, 63 in flight: posted whole before
			    its first completion, so no stream is set at all */
			o.qp_depth = 63;
			most = -1;
			break;
		}
		ck_assert_msg(dmr_kv_run(&o, &ra, &err) == DMR_OK, "%d: %s", k, err.msg);
		o.out_dir = b;
		o.no_streams = 1;
		ck_assert_msg(dmr_kv_run(&o, &rb, &err) == DMR_OK, "%d: %s", k, err.msg);
		ck_assert_uint_eq(rb.slices_streamed, 0);
		if (most < 0)
			ck_assert_uint_eq(ra.slices_streamed, 0);
		else
			ck_assert_msg(ra.slices_streamed > most * ra.slices,
				      "%d: %llu of %llu slices taken by the sim", k,
				      (unsigned long long)ra.slices_streamed,
				      (unsigned long long)ra.slices);
		if (getenv("DMR_TEST_VERBOSE"))
			printf("streams %d: %llu of %llu slices\n", k,
			       (unsigned long long)ra.slices_streamed,
			       (unsigned long long)ra.slices),
			    fflush(stdout);
		ck_assert_int_eq(ra.folded, k != 8);
		ck_assert_uint_eq(ra.slices, rb.slices);
		ck_assert_uint_eq(ra.events, rb.events);
		char *sa = summary_but_wall(a), *sb = summary_but_wall(b);
		ck_assert_msg(strcmp(sa, sb) == 0, "%d:\n%s\n%s", k, sa, sb);
		free(sa);
		free(sb);
		char pa[700], pb[700];
		snprintf(pa, sizeof(pa), "%s/timeseries.csv", a);
		snprintf(pb, sizeof(pb), "%s/timeseries.csv", b);
		sa = dmr_test_read_text(pa);
		sb = dmr_test_read_text(pb);
		ck_assert_msg(strcmp(sa, sb) == 0, "%d: time series differ", k);
		free(sa);
		free(sb);
		ck_assert_int_eq(dmr_test_rmtree(a), 0);
		ck_assert_int_eq(dmr_test_rmtree(b), 0);
	}
}
END_TEST

/* ---- physics on cx6dx-100g ---------------------------------------------- */

#define BOUND_4M_US (4194304.0 * 8 / 100e3) /* 335.54 us at 100 Gb/s */

START_TEST(test_single_4m_write_raw)
{
	/* one 4 MiB WRITE as one WR, straight on the backend */
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = 1,
			       .cns = 1,
			       .workers = 1,
			       .mr_size = 8 << 20,
			       .profile = "cx6dx-100g"};
	dmr_be_t *be;
	dmr_err_t err;
	ck_assert_msg(dmr_be_open(&cfg, &be, &err) == DMR_OK, "%s", err.msg);
	uint8_t *buf = calloc(1, 4 << 20);
	ck_assert_ptr_nonnull(buf);
	uint64_t t0 = dmr_be_now(be, 0);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, buf, 0, 4 << 20, 0, 0, &err),
			 DMR_OK);
	dmr_wc_t wc;
	int w, got = 0;
	while (!got && (w = dmr_be_progress(be, UINT64_MAX)) >= 0)
		got = dmr_be_poll(be, (uint32_t)w, &wc, 1);
	ck_assert_int_eq(got, 1);
	ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
	double us = (dmr_be_now(be, 0) - t0) / 1e6;
	printf("test_kv: one 4 MiB WRITE (one WR) on cx6dx-100g: %.2f us (bound %.2f us)\n", us,
	       BOUND_4M_US);
	ck_assert_msg(us >= BOUND_4M_US, "4 MiB WRITE in %.2f us < %.2f us", us, BOUND_4M_US);
	free(buf);
	dmr_be_close(be);
}
END_TEST

START_TEST(test_single_4m_bench)
{
	dmr_kv_bench_opts_t o;
	dmr_kv_bench_result_t r;
	dmr_err_t err;
	for (int sliced = 0; sliced < 2; sliced++) {
		dmr_kv_bench_opts_default(&o);
		o.ops = 3;
		o.slice = sliced ? 64 * 1024 : 0;
		ck_assert_msg(dmr_kv_bench(&o, &r, &err) == DMR_OK, "%s", err.msg);
		ck_assert(fabs(r.bound_payload_us - BOUND_4M_US) < 1e-6);
		ck_assert(r.bound_wire_us > r.bound_payload_us);
		ck_assert_msg(r.min_us >= BOUND_4M_US, "slice %d: %.2f us", sliced, r.min_us);
		ck_assert_msg(r.min_us < 1.2 * BOUND_4M_US, "slice %d: %.2f us: pipelining lost",
			      sliced, r.min_us);
	}
}
END_TEST

START_TEST(test_stream_gbps)
{
	dmr_kv_bench_opts_t o;
	dmr_kv_bench_result_t r;
	dmr_err_t err;
	for (int op = 0; op < 2; op++) {
		dmr_kv_bench_opts_default(&o);
		o.ops = 200;
		o.batch = 4;
		o.threads = 2;
		o.opcode = op ? DMR_WR_READ : DMR_WR_WRITE;
		ck_assert_msg(dmr_kv_bench(&o, &r, &err) == DMR_OK, "%s", err.msg);
		printf("test_kv: 4 MiB %s stream on cx6dx-100g: %.2f Gb/s payload\n",
		       op ? "READ" : "WRITE", r.gbps);
		ck_assert_msg(r.gbps >= 80 && r.gbps <= 95, "%.2f Gb/s", r.gbps);
		ck_assert_uint_eq(r.ops, 200);
		ck_assert(r.per_op_us >= BOUND_4M_US);
	}
	/* bad options */
	dmr_kv_bench_opts_default(&o);
	o.size = 0;
	ck_assert_int_eq(dmr_kv_bench(&o, &r, &err), DMR_ERR_INVALID);
	/* what and where only: the command prints "dmreplay kv bench: error: " */
	ck_assert_msg(strncmp(err.msg, "--size, --ops", 13) == 0, "%s", err.msg);
	dmr_kv_bench_opts_default(&o);
	o.size = 8ull << 30;
	o.slice = 0;
	ck_assert_int_eq(dmr_kv_bench(&o, &r, &err), DMR_ERR_INVALID);
}
END_TEST

/* ---- command line ------------------------------------------------------- */

/* ---- the pool on a threaded backend (shm): master over the RPC mailboxes -- */

/* The first block id of the fixture that a later request asks for again. */
static uint64_t first_reused_id(const char *jsonl)
{
	char kv[600];
	dmr_test_path(kv, sizeof(kv), "r.kv");
	dmr_err_t err;
	ck_assert_msg(convert(jsonl, kv, 4096, NULL, &err) == DMR_OK, "%s", err.msg);
	dmr_kv_reader_t *rd;
	ck_assert_msg(dmr_kv_trace_open(kv, &rd, &err) == DMR_OK, "%s", err.msg);
	uint64_t seen[4096], n = 0, found = UINT64_MAX;
	dmr_kv_req_t r;
	while (found == UINT64_MAX && dmr_kv_trace_next(rd, &r, &err) == DMR_OK)
		for (uint32_t b = 0; b < r.nblocks && found == UINT64_MAX; b++) {
			for (uint64_t i = 0; i < n; i++)
				if (seen[i] == r.blocks[b])
					found = r.blocks[b];
			if (n < 4096)
				seen[n++] = r.blocks[b];
		}
	dmr_kv_trace_close(rd);
	ck_assert(found != UINT64_MAX);
	return found;
}

START_TEST(test_shm_pool)
{
	char in[600], kv[600], out[600], p[700];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "t.kv");
	dmr_test_path(out, sizeof(out), "shm");
	dmr_err_t err;
	ck_assert_msg(convert(in, kv, 4096, NULL, &err) == DMR_OK, "%s", err.msg);
	uint64_t hits, blocks;
	direct_hits(in, 0, &hits, &blocks);
	ck_assert_uint_gt(hits, 0);

	dmr_kv_opts_t o;
	dmr_kv_result_t sim, r;
	opts_small(&o, kv, out);
	o.time_scale = 0;
	o.cns = 2;
	o.clients = 2;
	ck_assert_msg(dmr_kv_run(&o, &sim, &err) == DMR_OK, "%s", err.msg);
	o.backend = "shm";
	/* open loop, all at once: many gets wait for an earlier request's put;
	 * closed loop; sliced transfers (the content check per slice offset) */
	for (int v = 0; v < 3; v++) {
		o.outstanding = v == 1 ? 5 : 0;
		o.slice = v == 2 ? 1000 : 64 * 1024; /* 1000: slices not 8-byte aligned */
		o.placement = v == 2 ? DMR_KV_PLACE_LEAST : DMR_KV_PLACE_RR;
		ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "variant %d: %s", v, err.msg);
		ck_assert_str_eq(r.status, "complete");
		ck_assert_str_eq(r.backend, "shm");
		ck_assert_uint_eq(r.requests, 200);
		ck_assert_uint_eq(r.blocks_requested, blocks);
		ck_assert_uint_eq(r.blocks_got, hits);
		ck_assert_uint_eq(r.blocks_put, blocks - hits);
		ck_assert(r.hit_ratio == (double)hits / blocks);
		ck_assert(r.hit_ratio == sim.hit_ratio);
		ck_assert_uint_eq(r.blocks_got, sim.blocks_got);
		/* every got block was READ whole and matched its put's pattern
		 * (a mismatch fails the run with DMR_ERR_VERIFY, tested below) */
		ck_assert_uint_eq(r.bytes_got, hits * 4096);
		ck_assert_uint_eq(r.bytes_put, (blocks - hits) * 4096);
		ck_assert_uint_eq(r.evictions, 0);
		ck_assert_uint_eq(r.max_blocks_used, blocks - hits);
		/* apart, with the values: one of them failed once in ~8 runs
		 * on a loaded host (session 19), not reproduced */
		ck_assert_msg(r.rpc_us > 0, "variant %d: rpc_us %g", v, r.rpc_us);
		ck_assert_msg(r.p50_us > 0 && r.p50_us <= r.p99_us && r.p99_us <= r.p999_us,
			      "variant %d: p50 %g p99 %g p999 %g us", v, r.p50_us, r.p99_us,
			      r.p999_us);
		if (v == 2)
			ck_assert_uint_eq(r.slices,
					  hits * 5 + (blocks - hits) * 5); /* 4096 = 4x1000 + 96 */
	}
	printf("test_kv: shm: hit ratio %.6f = sim's %.6f = %llu / %llu from the hash ids; "
	       "gets' content checked\n",
	       r.hit_ratio, sim.hit_ratio, (unsigned long long)hits, (unsigned long long)blocks);
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	char *s = dmr_test_read_text(p);
	ck_assert(strncmp(s, "workload,trace,kv_model,block_bytes,backend,", 44) == 0);
	ck_assert(strstr(s, ",shm,") != NULL && strstr(s, ",complete,") != NULL);
	free(s);
	snprintf(p, sizeof(p), "%s/timeseries.csv", out);
	s = dmr_test_read_text(p);
	ck_assert(strncmp(s, "t_s,arrivals,completed,blocks_got,", 34) == 0);
	free(s);

	/* a bounded pool on shm: evictions, the master's invariants hold */
	o.outstanding = 0;
	o.slice = 64 * 1024;
	o.unbounded = 0;
	o.capacity = 1000 * 4096;
	ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_gt(r.evictions, 0);
	ck_assert_uint_le(r.max_blocks_used, 950);
	ck_assert_uint_eq(r.blocks_got + r.blocks_put + r.puts_dropped, blocks);
	ck_assert_uint_eq(r.bytes_got, r.blocks_got * 4096);

	/* fault injection: one put writes a wrong first byte; the get of that
	 * block must notice, and the run ends partial */
	o.unbounded = 1;
	o.capacity = 0;
	o.test_corrupt = first_reused_id(in) + 1;
	dmr_test_path(out, sizeof(out), "shm-bad");
	o.out_dir = out;
	ck_assert_int_eq(dmr_kv_run(&o, &r, &err), DMR_ERR_VERIFY);
	ck_assert_msg(strstr(err.msg, "content check: block") != NULL, "%s", err.msg);
	ck_assert(r.partial);
	snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
	ck_assert(dmr_test_exists(p));
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	ck_assert(!dmr_test_exists(p));
}
END_TEST

START_TEST(test_shm_bench)
{
	dmr_kv_bench_opts_t o;
	dmr_kv_bench_result_t r;
	dmr_err_t err;
	dmr_kv_bench_opts_default(&o);
	o.backend = "shm";
	o.size = 1 << 20;
	o.ops = 40;
	o.threads = 2;
	o.batch = 3;
	ck_assert_msg(dmr_kv_bench(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.ops, 40);
	ck_assert_uint_eq(r.bytes, 40ull << 20);
	ck_assert(r.gbps > 0 && r.p50_us > 0 && r.min_us <= r.p50_us && r.p50_us <= r.p99_us &&
		  r.p99_us <= r.max_us);
	ck_assert(r.elapsed_us > 0);
	o.opcode = DMR_WR_READ;
	o.slice = 0;
	ck_assert_msg(dmr_kv_bench(&o, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(r.ops, 40);
}
END_TEST

/* Requests of more than 254 blocks (LOOKUP in chunks), an empty request,
 * and several clients: the same hits as the hash ids, on shm and sim. */
START_TEST(test_shm_chunks)
{
	char in[600], kv[600], out[600];
	dmr_test_path(in, sizeof(in), "big.jsonl");
	dmr_test_path(kv, sizeof(kv), "big.kv");
	dmr_test_path(out, sizeof(out), "big");
	FILE *f = fopen(in, "w");
	ck_assert_ptr_nonnull(f);
	for (int r = 0; r < 6; r++) {
		int nb = r == 2 ? 0 : (r == 3 ? 2 : 300 + r);
		fprintf(f,
			"{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 1, "
			"\"hash_ids\": [",
			r, nb * 512);
		for (int b = 0; b < nb; b++) {
			/* request 1 shares its first 150 ids with request 0; request 3
			 * asks for 5 and 6; 4 and 5 share 0..299 with request 0 */
			int id = r == 3 ? 5 + b : (r == 1 && b >= 150 ? 1000 + b : b);
			if (r >= 4 && b >= 300)
				id = 5000 + r * 10 + b;
			fprintf(f, "%s%d", b ? ", " : "", id);
		}
		fprintf(f, "]}\n");
	}
	ck_assert_int_eq(fclose(f), 0);
	dmr_err_t err;
	ck_assert_msg(convert(in, kv, 1024, NULL, &err) == DMR_OK, "%s", err.msg);
	uint64_t hits, blocks;
	direct_hits(in, 0, &hits, &blocks);
	ck_assert_uint_eq(blocks, 300 + 301 + 2 + 304 + 305);
	ck_assert_uint_eq(hits, 150 + 2 + 300 + 300);
	dmr_kv_opts_t o;
	dmr_kv_result_t r;
	opts_small(&o, kv, out);
	o.time_scale = 0;
	o.cns = 1;
	o.clients = 3;
	o.segments = 2;
	for (int be = 0; be < 2; be++) {
		o.backend = be ? "shm" : "sim";
		ck_assert_msg(dmr_kv_run(&o, &r, &err) == DMR_OK, "%s: %s", o.backend, err.msg);
		ck_assert_uint_eq(r.requests, 6);
		ck_assert_uint_eq(r.blocks_requested, blocks);
		ck_assert_uint_eq(r.blocks_got, hits);
		ck_assert_uint_eq(r.blocks_put, blocks - hits);
		ck_assert_uint_eq(r.bytes_got, hits * 1024);
		ck_assert_uint_eq(r.max_blocks_used, blocks - hits);
	}
}
END_TEST

static int run_cli(const char *line)
{
	char buf[4096], *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	fflush(stdout);
	return dmr_kv_main(argc, argv);
}

/* issue #15: a kv run on sim whose event queue empties with requests or
 * transfers in flight (completions lost) failed; it is not bad input: exit 1
 * (it was DMR_ERR_INVALID, exit 2) */
START_TEST(test_stall_is_a_failed_run)
{
	dmr_err_t err = {{0}};
	kv_t k;
	memset(&k, 0, sizeof(k));
	k.err = &err;
	ck_assert_int_eq(kv_check_drained(&k), DMR_OK);
	k.inflight = 3;
	k.X.live = 2;
	dmr_status_t st = kv_check_drained(&k);
	ck_assert_int_eq(dmr_exit_status(st), 1);
	ck_assert_msg(strstr(err.msg, "stalled with 3 requests and 2 transfers") != NULL, "%s",
		      err.msg);
	k.inflight = 0;
	k.X.live = 0;
	k.have_ahead = 1; /* an arrival read ahead and never scheduled */
	ck_assert_int_eq(dmr_exit_status(kv_check_drained(&k)), 1);
}
END_TEST

/* kv gen -o -: the same trace on standard output, its summary on stderr,
 * no file named "-" (a trial found one); -o '' refused. */
START_TEST(test_gen_stdout)
{
	char in[600], kv[600];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "f.kv");
	dmr_test_run_t r = dmr_test_dmr("kv", "gen", "--mooncake", in, "--requests", "50", "-o", kv,
					"--quiet", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "gen", "--mooncake", in, "--requests", "50", "-o", "-", NULL);
	dmr_test_run_ok(&r);
	char *file = dmr_test_read_text(kv);
	ck_assert_str_eq(r.out, file);
	free(file);
	ck_assert_ptr_nonnull(strstr(r.err, "-> standard output"));
	ck_assert(!dmr_test_exists("-"));
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "gen", "--mooncake", in, "-o", "", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "an empty path"));
	dmr_test_run_free(&r);
	/* kv run from a FIFO: refused, saying why (a pipe had given "not a
	 * dmreplay KV trace": its first line was read to tell the kinds apart) */
	char fifo[600], out[600];
	dmr_test_path(fifo, sizeof(fifo), "kv.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	dmr_test_path(out, sizeof(out), "fifo-out");
	r = dmr_test_dmr("kv", "run", "--trace", fifo, "--out", out, "--quiet", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "kv.fifo: a pipe: a trace is read from a regular file"), "%s",
		      r.err);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_cli)
{
	char in[600], kv[600], out[600], line[2400];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "c.kv");
	dmr_test_path(out, sizeof(out), "cout");
	ck_assert_int_eq(run_cli("kv"), 2);
	ck_assert_int_eq(run_cli("kv frobnicate"), 2);
	ck_assert_int_eq(run_cli("kv models"), 0);
	ck_assert_int_eq(run_cli("kv gen --mooncake x.jsonl"), 2);
	ck_assert_int_eq(run_cli("kv gen --mooncake /nonexistent.jsonl -o /tmp/x.kv"), 2);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --kv-model nope", in, kv);
	ck_assert_int_eq(run_cli(line), 2);
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --kv-model qwen2-7b --block-bytes 4K", in, kv);
	ck_assert_int_eq(run_cli(line), 2);
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 4K --requests 40 --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --quiet --capacity 1M "
		 "--unbounded-pool",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 2);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --placement nope",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 2);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --cns 0", kv, out);
	ck_assert_int_eq(run_cli(line), 2);
	/* a refused trace (not a KV trace; a cut one) leaves no --out behind:
	 * the trial of session 11 found an empty directory where none was */
	{
		char bad[600], nout[600];
		dmr_test_path(bad, sizeof(bad), "notkv.csv");
		dmr_test_path(nout, sizeof(nout), "never-made");
		FILE *f = fopen(bad, "w");
		ck_assert_ptr_nonnull(f);
		fputs("garbage\n", f);
		fclose(f);
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet", bad, nout);
		ck_assert_int_eq(run_cli(line), 2);
		ck_assert(!dmr_test_exists(nout));
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --requests 0", kv,
			 nout);
		ck_assert_int_eq(run_cli(line), 2);
		ck_assert(!dmr_test_exists(nout));
		/* refusals found after --out is made: it goes, with the parents
		 * the run made (the trial of session 12) */
		snprintf(line, sizeof(line),
			 "kv run --trace %s --out %s/a/b --quiet --profile nosuch", kv, nout);
		ck_assert_int_eq(run_cli(line), 2);
		ck_assert(!dmr_test_exists(nout));
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 1K", kv,
			 nout);
		ck_assert_int_eq(run_cli(line), 2);
		ck_assert(!dmr_test_exists(nout));
	}
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --quiet --capacity 64K --clients 2 "
		 "--placement least-loaded --slice 1K --qp-depth 4",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	/* the same --out again without --force: refused, the finished run kept
	 * (the fresh-user trial of session 6 found it overwritten); with
	 * --force: moved to earlier-1/ */
	{
		char sum[700], before[4096], moved[720];
		snprintf(sum, sizeof(sum), "%s/summary.csv", out);
		FILE *f = fopen(sum, "r");
		ck_assert_ptr_nonnull(f);
		size_t nb = fread(before, 1, sizeof(before) - 1, f);
		before[nb] = 0;
		fclose(f);
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 64K",
			 kv, out);
		ck_assert_int_eq(run_cli(line), 2);
		char *now = dmr_test_read_text(sum);
		ck_assert_ptr_nonnull(now);
		ck_assert_str_eq(now, before);
		free(now);
		snprintf(line, sizeof(line),
			 "kv run --trace %s --out %s --quiet --capacity 64K --force", kv, out);
		ck_assert_int_eq(run_cli(line), 0);
		snprintf(moved, sizeof(moved), "%s/earlier-1/summary.csv", out);
		now = dmr_test_read_text(moved);
		ck_assert_ptr_nonnull(now);
		ck_assert_str_eq(now, before);
		free(now);
	}
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --capacity 4K", kv,
		 out);
	ck_assert_int_eq(run_cli(line), 2); /* block larger than a segment */
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --backend nope",
		 kv, out);
	ck_assert_int_ne(run_cli(line), 0);
	ck_assert_int_eq(run_cli("kv bench --size 1M --ops 4 --threads 2 --batch 2"), 0);
	ck_assert_int_eq(run_cli("kv bench --size 1M --ops 4 --threads 2 --batch 2 --backend shm"),
			 0);
	ck_assert_int_eq(run_cli("kv bench --backend shm --timeout-s 0"), 2);
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --quiet --backend shm --clients 2", kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	ck_assert_int_eq(run_cli("kv bench --size 1X"), 2);
	ck_assert_int_eq(run_cli("kv bench --op cas"), 2);
}
END_TEST

/* run_cli with stderr captured into err (truncated to n bytes) */
static int run_cli_err(const char *line, char *err, size_t n)
{
	char path[600];
	dmr_test_path(path, sizeof(path), "stderr.txt");
	fflush(stderr);
	int saved = dup(2);
	ck_assert_int_ge(saved, 0);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(dup2(fileno(f), 2), 0);
	int rc = run_cli(line);
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, 2), 0);
	close(saved);
	fclose(f);
	char *t = dmr_test_read_text(path);
	snprintf(err, n, "%s", t);
	free(t);
	return rc;
}

/* issue #15: `kv run --slice 1` on the fixture (5,330 blocks of 64 MiB,
 * 3.6e11 slices) ran for hours: refused before the run, exit 2, naming
 * --slice and the slices; --requests cuts the estimate; --requests 0 is
 * refused as run --txns 0 is (D18); --progress prints requests done of the
 * trailer's count (D20), never with --quiet; kv gen on a full disk exits 1
 * (D14) */
START_TEST(test_cli_work_bounds)
{
	char in[600], kv[600], out[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "w.kv");
	dmr_test_path(out, sizeof(out), "wout");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --slice 1 --quiet", kv,
		 out);
	double t0 = dmr_wall_s();
	int rc = run_cli_err(line, err, sizeof(err));
	ck_assert_msg(rc == 2, "'%s' exited %d: %s", line, rc, err);
	ck_assert_msg(strstr(err, "option --slice 1: 5330 blocks of 67108864 bytes are 3.58e+11 "
				  "slices"),
		      "%s", err);
	ck_assert_msg(dmr_wall_s() - t0 < 5, "refused after %.1f s", dmr_wall_s() - t0);
	/* 20 of 200 requests: 533 blocks, 2.2e9 slices of 16 bytes: refused */
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --slice 16 --requests 20 --quiet", kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "option --slice 16: 533 blocks"), "%s", err);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --requests 0 --quiet", kv,
		 out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "option --requests: must be >= 1"), "%s", err);
	/* threaded: whole 64 MiB blocks at depth 4096 are 1 TiB of client
	 * buffers: refused before the region or any buffer is allocated */
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --backend shm --slice 0 --qp-depth 4096 "
		 "--capacity 1G --requests 5 --quiet",
		 kv, out);
	t0 = dmr_wall_s();
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "4 client threads x --qp-depth 4096 x 67108864-byte WRs (a "
				  "whole block: --slice 0 or >= the block) = 1024.0 GiB of client "
				  "buffers + the pool's region"),
		      "%s", err);
	/* --capacity given: a smaller one (not "or --capacity") */
	ck_assert_msg(strstr(err, "fewer --clients, or a smaller --capacity"), "%s", err);
	ck_assert_msg(dmr_wall_s() - t0 < 5, "refused after %.1f s", dmr_wall_s() - t0);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --requests 5 --progress",
		 kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "kv run: 5/5 requests (100.0 %)"), "%s", err);
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --requests 5 --progress --quiet", kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "requests (") == NULL, "%s", err);
	/* kv gen on a full disk (files limited to 4 KiB): a failed run, exit 1 */
	struct rlimit old, lim;
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s.full --quiet", in, kv);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = run_cli_err(line, err, sizeof(err));
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	ck_assert_msg(rc == 1, "kv gen on a full disk exited %d: %s", rc, err);
	ck_assert_msg(strstr(err, "write failed"), "%s", err);
}
END_TEST

/* `kv mn` / `kv cn`: bad input refused before anything RDMA is touched */
START_TEST(test_cli_procs)
{
	char in[600], kv[600], out[600], cfg[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "p.kv");
	dmr_test_path(out, sizeof(out), "pout");
	dmr_test_path(cfg, sizeof(cfg), "c2.json");
	dmr_test_write_file(
	    cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"rxe0\",\"mr_size\":4096}],"
		 "\"cn\":[{\"id\":0,\"ip\":\"10.0.2.15\"},{\"id\":1,\"ip\":\"10.0.2.15\"}]}\n");
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 4K --requests 40 --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	static const struct {
		const char *args, *want;
	} bad[] = {
	    {"kv cn --id 0 --trace %2$s", "--config CLUSTER.json is required"},
	    {"kv mn --trace %2$s --unbounded-pool", "--config CLUSTER.json is required"},
	    {"kv cn --config %1$s --trace %2$s", "--id K is required"},
	    {"kv cn --config %1$s --id 7 --trace %2$s", "no CN with id 7 (CN ids: 0, 1)"},
	    {"kv mn --config %1$s --id 5 --trace %2$s", "no MN with id 5 (MN ids: 0)"},
	    {"kv cn --config %1$s --id 0", "--trace KVTRACE is required"},
	    {"kv cn --config %1$s --id 0 --trace %2$s --cns 3", "--cns 3 but"},
	    {"kv cn --config %1$s --id 0 --trace %2$s --backend shm", "runs on verbs only"},
	    {"kv cn --config %1$s --id 0 --trace %2$s --device rxe0",
	     "come from the cluster config"},
	    {"kv cn --config %1$s.missing --id 0 --trace %2$s", ".missing"},
	    {"kv run --config %1$s --trace %2$s", "--procs/--config need --backend verbs"},
	    {"kv run --procs --trace %2$s --backend shm", "--procs/--config need --backend verbs"},
	    {"kv run --config %1$s --trace %2$s --backend verbs --cns 3", "--cns 3 but"},
	    {"kv run --id 0 --trace %2$s", "is an option of kv mn / kv cn"},
	    {"kv cn --config %1$s --id 0 --trace %2$s --procs", "is an option of kv run"},
	    {"kv mn --config %1$s --id 0 --trace %2$s --no-streams",
	     "--no-streams is an option of kv run"},
	    {"kv run --trace %2$s --backend shm --no-streams",
	     "option --no-streams: only the sim backend streams"},
	    {"kv cn --config %1$s --id 0 --trace %2$s --barrier-timeout 0", "must be > 0"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(line, sizeof(line), bad[i].args, cfg, kv);
#pragma GCC diagnostic pop
		int rc = run_cli_err(line, err, sizeof(err));
		ck_assert_msg(rc == 2, "'%s' exited %d", line, rc);
		ck_assert_msg(strstr(err, bad[i].want), "'%s': stderr '%s' lacks '%s'", line, err,
			      bad[i].want);
	}
	(void)out;
}
END_TEST

/* The geometry the MN writes and each CN compares: a mismatch is named */
START_TEST(test_geometry)
{
	char in[600], kv[600], kv2[600], line[2400];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "g.kv");
	dmr_test_path(kv2, sizeof(kv2), "g2.kv");
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 4K --requests 40 --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 4K --requests 41 --quiet", in, kv2);
	ck_assert_int_eq(run_cli(line), 0);
	dmr_kv_opts_t o;
	opts_small(&o, kv, NULL);
	o.clients = 2;
	dmr_kv_geom_t a, b;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_kv_geometry(&o, 4, &a, &err), DMR_OK);
	ck_assert_uint_eq(a.clients, 4);
	ck_assert_uint_eq(a.trace_requests, 40);
	ck_assert_uint_eq(a.block_bytes, 4096);
	ck_assert_uint_gt(a.region, a.pool_base);
	ck_assert_int_eq(dmr_kv_geometry(&o, 4, &b, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_geom_compare(&a, &b, &err), DMR_OK);
	/* other clients in all (--clients or the config's CNs differ) */
	ck_assert_int_eq(dmr_kv_geometry(&o, 2, &b, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_geom_compare(&a, &b, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "clients 4 at the MN, 2 here"), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "give both the same"), "%s", err.msg);
	/* another trace (one more request) */
	o.trace = kv2;
	ck_assert_int_eq(dmr_kv_geometry(&o, 4, &b, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_geom_compare(&a, &b, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "trace_requests 40 at the MN, 41 here"), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, "trace_hash"), "%s", err.msg);
	/* a bounded pool against an unbounded one */
	o.trace = kv;
	o.unbounded = 0;
	o.capacity = 1 << 20;
	ck_assert_int_eq(dmr_kv_geometry(&o, 4, &b, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_geom_compare(&a, &b, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "unbounded 1 at the MN, 0 here"), "%s", err.msg);
	/* bad options and traces are refused as by kv run */
	o.trace = "/nonexistent.kv";
	ck_assert_int_ne(dmr_kv_geometry(&o, 4, &b, &err), DMR_OK);
	o.trace = kv;
	ck_assert_int_eq(dmr_kv_geometry(&o, 0, &b, &err), DMR_ERR_INVALID);
}
END_TEST

/* ---- defects of the fresh-user review (f5w) ----------------------------- */

/* a kv trace with the given block size, one request of one block */
static void write_kv_block(const char *path, const char *block_bytes)
{
	char t[512];
	snprintf(t, sizeof(t),
		 "# dmreplay-kvtrace v1\n# block_tokens 512\n# block_bytes %s\n"
		 "req,t_us,input_tokens,output_tokens,nblocks,blocks\n0,0,512,1,1,7\n# end 1 1\n",
		 block_bytes);
	dmr_test_write_file(path, t);
}

/* 1: an unwritable --out is refused before the replay (exit 2) */
START_TEST(test_out_unwritable)
{
	char in[600], kv[600], file[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "u.kv");
	dmr_test_path(file, sizeof(file), "afile");
	dmr_test_write_file(file, "x\n");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 4K --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	/* a directory below a regular file cannot be created */
	snprintf(line, sizeof(line), "kv run --trace %s --out %s/sub --quiet", kv, file);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "--out ") && strstr(err, "cannot create"), "%s", err);
	snprintf(line, sizeof(line), "kv run --trace %s --out %s/sub --quiet --backend shm", kv,
		 file);
	ck_assert_int_eq(run_cli(line), 2);
	/* an existing directory that takes no files (sysfs refuses even root) */
	struct stat sb;
	if (stat("/sys/kernel", &sb) == 0 && access("/sys/kernel", F_OK) == 0) {
		snprintf(line, sizeof(line), "kv run --trace %s --out /sys/kernel --quiet", kv);
		ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, "--out /sys/kernel: ") && strstr(err, "writable"), "%s",
			      err);
		ck_assert_msg(strstr(err, "nothing was run"), "%s", err);
	}
	/* the library call too, and no temp file left in a good directory */
	char out[600];
	dmr_test_path(out, sizeof(out), "wout");
	dmr_err_t e;
	ck_assert_int_eq(dmr_kv_out_check(out, &e), DMR_OK);
	ck_assert_int_eq(rmdir(out), 0); /* empty: the check file was removed */
}
END_TEST

/* `kv LINE` in a child, its stdout into stdout_path, stopped by `sig` after
 * a second: its exit status (asserted: exited, not killed) */
static int kv_run_signalled(const char *line, int sig, const char *stdout_path)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(99);
		close(fd);
		int rc = run_cli(line);
		fflush(stdout);
		_exit(rc);
	}
	struct timespec ts = {1, 0};
	nanosleep(&ts, NULL);
	ck_assert_int_eq(kill(pid, sig), 0);
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws), "killed by signal %d", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	return WEXITSTATUS(ws);
}

/* 2: SIGINT stops a sim replay: partial results, exit 130; the summary on
 * stdout marked [PARTIAL], as on shm and `run` (the new-user review of
 * session 20: none on sim when no request had completed yet), none with
 * --quiet */
START_TEST(test_sim_signal)
{
	char in[600], kv[600], out[600], line[2400], p[700], so[600];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "sig.kv");
	dmr_test_path(out, sizeof(out), "sigout");
	dmr_test_path(so, sizeof(so), "sig.stdout");
	/* 64 MiB blocks in 4 KiB slices: ~90 M slices, minutes of CPU */
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --kv-model llama-3-8b --quiet", in,
		 kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --slice 4K", kv,
		 out);
	for (int sig = SIGINT; sig; sig = sig == SIGINT ? SIGTERM : 0) {
		ck_assert_int_eq(kv_run_signalled(line, sig, so), 130);
		snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
		char *s = dmr_test_read_text(p);
		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strstr(s, ",partial,") != NULL, "%s", s);
		free(s);
		snprintf(p, sizeof(p), "%s/summary.csv", out);
		ck_assert(!dmr_test_exists(p));
		s = dmr_test_read_text(so); /* --quiet: nothing */
		ck_assert_msg(s && s[0] == 0, "%s", s ? s : "(none)");
		free(s);
	}
	/* one request of 1,000 blocks of 1 GiB in 4 KiB slices (2.6e8 slices,
	 * the sim's region folded): interrupted before it completes */
	char *t = malloc(16384);
	ck_assert_ptr_nonnull(t);
	int n = snprintf(t, 16384,
			 "# dmreplay-kvtrace v1\n# block_tokens 512\n# block_bytes 1073741824\n"
			 "req,t_us,input_tokens,output_tokens,nblocks,blocks\n0,0,512000,1,1000,");
	for (int i = 0; i < 1000; i++)
		n += snprintf(t + n, 16384 - (size_t)n, "%s%d", i ? " " : "", i);
	snprintf(t + n, 16384 - (size_t)n, "\n# end 1 1000\n");
	dmr_test_write_file(kv, t);
	free(t);
	for (int quiet = 0; quiet < 2; quiet++) {
		snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --slice 4K%s", kv,
			 out, quiet ? " --quiet" : "");
		ck_assert_int_eq(kv_run_signalled(line, SIGINT, so), 130);
		snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
		char *s = dmr_test_read_text(p);
		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strstr(s, ",partial,") != NULL, "%s", s);
		free(s);
		s = dmr_test_read_text(so);
		ck_assert_ptr_nonnull(s);
		if (quiet) {
			ck_assert_msg(s[0] == 0, "--quiet printed: %s", s);
		} else {
			ck_assert_msg(strstr(s, "dmreplay kv: - on sim/cx6dx-100g, 4 CNs x 1 "
						"clients, 4 segments (round-robin)  [PARTIAL]\n"),
				      "stdout: '%s'", s);
			ck_assert_msg(strstr(s, "\n  requests       0, 1000 blocks requested\n"),
				      "%s", s);
			ck_assert_msg(strstr(s, "\n  latency        none: no request completed\n"),
				      "%s", s);
			ck_assert_msg(!strstr(s, "  results "), "%s", s); /* not summary.csv */
		}
		free(s);
	}
}
END_TEST

/* Fork a child that runs `line` (run_cli) with its stderr into errpath and
 * SIGINT and SIGTERM as in a fresh process (not Check's handlers, which
 * kill the test's process group); its pid. */
static pid_t gen_child(const char *line, const char *errpath)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		FILE *f = fopen(errpath, "w");
		if (!f || dup2(fileno(f), 2) < 0)
			_exit(99);
		_exit(run_cli(line));
	}
	return pid;
}

/* The child stopped by sig: exit 130 (not killed by it), its message names
 * the signal and says OUT was not written. */
static void gen_child_stopped(pid_t pid, int sig, const char *errpath, const char *out)
{
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	char *e = dmr_test_read_text(errpath);
	ck_assert_msg(WIFEXITED(ws), "killed by signal %d; stderr:\n%s",
		      WIFSIGNALED(ws) ? WTERMSIG(ws) : 0, e);
	ck_assert_msg(WEXITSTATUS(ws) == 130, "exit %d; stderr:\n%s", WEXITSTATUS(ws), e);
	char want[800];
	snprintf(want, sizeof(want), "dmreplay kv gen: interrupted by signal %d after ", sig);
	ck_assert_msg(strstr(e, want), "%s", e);
	snprintf(want, sizeof(want), ": %s not written\n", out);
	ck_assert_msg(strstr(e, want), "%s", e);
	free(e);
	e = dmr_test_read_text(out);
	ck_assert_str_eq(e, "old\n");
	free(e);
}

/* kv gen --kvops and --mooncake on SIGINT and SIGTERM: exit 130 with
 * "interrupted ... OUT not written", no temp file left, an earlier OUT as
 * it was (both died by the signal, leaving .OUT.PID.0.tmp and OUT.tmp: a
 * trial), as gen does (test_gen test_cli_signal) */
START_TEST(test_gen_signal)
{
	char out[600], errp[600], line[2400];
	dmr_test_path(errp, sizeof(errp), "gen-sig.err");
	/* --kvops: 50 M operations (seconds); stopped once its temp file is
	 * there */
	dmr_test_path(out, sizeof(out), "k.kvops");
	snprintf(line, sizeof(line), "kv gen --kvops --ops 50M -o %s", out);
	for (int sig = SIGINT; sig; sig = sig == SIGINT ? SIGTERM : 0) {
		dmr_test_write_file(out, "old\n");
		pid_t pid = gen_child(line, errp);
		int seen = 0;
		for (int i = 0; i < 600 && !seen; i++) {
			char *ls = dmr_test_dir_listing(dmr_test_tmp);
			seen = ls && strstr(ls, ".k.kvops.") != NULL;
			free(ls);
			if (!seen)
				usleep(100000);
		}
		ck_assert_msg(seen, "no temp file of %s", out);
		usleep(200000);
		ck_assert_int_eq(kill(pid, sig), 0);
		gen_child_stopped(pid, sig, errp, out);
		char *ls = dmr_test_dir_listing(dmr_test_tmp);
		ck_assert_msg(strstr(ls, ".tmp") == NULL, "left behind:\n%s", ls);
		free(ls);
	}
	/* --mooncake from a FIFO this test writes: SIGINT while it converts
	 * (fed without a pause), SIGTERM while it waits for input (a read the
	 * signal cuts short) */
	char in[600], fifo[600], tmp[700];
	fixture200(in, sizeof(in));
	char *fx = dmr_test_read_text(in);
	char *nl = strchr(fx, '\n');
	ck_assert_ptr_nonnull(nl);
	nl[1] = 0; /* its first line, sent again and again (same timestamp) */
	size_t len = strlen(fx);
	dmr_test_path(fifo, sizeof(fifo), "in.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	dmr_test_path(out, sizeof(out), "m.kv");
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", fifo, out);
	void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
	for (int sig = SIGINT; sig; sig = sig == SIGINT ? SIGTERM : 0) {
		dmr_test_write_file(out, "old\n");
		pid_t pid = gen_child(line, errp);
		int fd = open(fifo, O_WRONLY); /* waits for the child's open */
		ck_assert_int_ge(fd, 0);
		const long lines = sig == SIGINT ? 2000 : 50;
		long sent = 0;
		/* SIGINT: written until the signal (the pipe full: it converts);
		 * SIGTERM: 50 lines, then nothing (it waits on the FIFO) */
		for (int t = 0; t < 6000 && !(sent >= lines && dmr_test_exists(tmp)); t++) {
			if (sent < lines || sig == SIGINT) {
				ck_assert_msg(write(fd, fx, len) == (ssize_t)len,
					      "child gone after %ld lines", sent);
				sent++;
			} else {
				usleep(10000);
			}
		}
		ck_assert(dmr_test_exists(tmp));
		if (sig == SIGTERM)
			usleep(200000); /* the 50 lines converted */
		ck_assert_int_eq(kill(pid, sig), 0);
		gen_child_stopped(pid, sig, errp, out);
		close(fd);
		ck_assert_msg(!dmr_test_exists(tmp), "%s left behind", tmp);
	}
	signal(SIGPIPE, old_pipe);
	free(fx);
}
END_TEST

/* 3: block sizes above the limit refused in kv gen and kv run; the region
 * arithmetic does not wrap */
START_TEST(test_block_limit)
{
	char in[600], kv[600], out[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "big.kv");
	dmr_test_path(out, sizeof(out), "bigout");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 1025M", in, kv);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "--block-bytes 1074790400: above the limit"), "%s", err);
	ck_assert(!dmr_test_exists(kv));
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 1G --requests 2 --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	static const char *sizes[] = {"2305843009213693952", "9223372036854775807",
				      "1099511627776"};
	static const char *backends[] = {"sim", "shm"};
	for (size_t i = 0; i < 3; i++) {
		write_kv_block(kv, sizes[i]);
		for (size_t b = 0; b < 2; b++) {
			snprintf(line, sizeof(line),
				 "kv run --trace %s --force --out %s --quiet --backend %s", kv, out,
				 backends[b]);
			ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
			ck_assert_msg(strstr(err, ":3: header 'block_bytes'") &&
					  strstr(err, "above the limit"),
				      "%s", err);
		}
	}
	/* the limit itself is accepted (one 1 GiB block, timing only on sim) */
	write_kv_block(kv, "1073741824");
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --time-scale 0",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	/* a block larger than a worker's region (segment): named and refused */
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --capacity 512M",
		 kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "larger than a segment"), "%s", err);
}
END_TEST

/* 4 and 9: kv gen never replaces its input; an empty input is refused */
START_TEST(test_gen_same_file_and_empty)
{
	char in[600], copy[600], link_p[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(copy, sizeof(copy), "in.jsonl");
	dmr_test_path(link_p, sizeof(link_p), "other-name.jsonl");
	char *orig = dmr_test_read_text(in);
	dmr_test_write_file(copy, orig);
	ck_assert_int_eq(link(copy, link_p), 0); /* a hard link: same inode, other name */
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s", copy, copy);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "is the input file"), "%s", err);
	/* one prefix: it was "dmreplay kv gen: error: kv gen: -o ..." */
	char want[1400];
	snprintf(want, sizeof(want), "dmreplay kv gen: error: -o %s is the input file", copy);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s", copy, link_p);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "is the input file"), "%s", err);
	char *now = dmr_test_read_text(copy);
	ck_assert_str_eq(now, orig);
	free(now);
	free(orig);
	char empty[600], kv[600];
	dmr_test_path(empty, sizeof(empty), "empty.jsonl");
	dmr_test_path(kv, sizeof(kv), "empty.kv");
	dmr_test_write_file(empty, "");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s", empty, kv);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "no requests"), "%s", err);
	ck_assert(!dmr_test_exists(kv));
}
END_TEST

/* kv gen (Mooncake and --kvops) never renames its output over what is not
 * a regular file: a pipe or a directory at -o is refused up front with exit
 * 2 and left as it was (as root, -o /dev/full had the device replaced by a
 * regular file: a trial) */
START_TEST(test_gen_out_not_regular)
{
	char in[600], fifo[600], dir[600], line[2400], err[4096];
	fixture200(in, sizeof(in));
	dmr_test_path(fifo, sizeof(fifo), "out.fifo");
	dmr_test_path(dir, sizeof(dir), "out.dir");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	const char *outs[] = {fifo, dir};
	for (int i = 0; i < 2; i++) {
		snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", in, outs[i]);
		ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
		snprintf(line, sizeof(line), "kv gen --kvops --ops 10 -o %s", outs[i]);
		ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
	}
	struct stat st;
	ck_assert_int_eq(stat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s.tmp", fifo);
	ck_assert(!dmr_test_exists(tmp));
	/* nor written through a symbolic link at OUT.tmp (it wrote the trace
	 * over the link's target: a trial) */
	char out[600], target[600];
	dmr_test_path(out, sizeof(out), "linked.kv");
	dmr_test_path(target, sizeof(target), "precious.txt");
	dmr_test_write_file(target, "precious\n");
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	ck_assert_int_eq(symlink(target, tmp), 0);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", in, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "exists and is not a regular file"), "%s", err);
	char *text = dmr_test_read_text(target);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	ck_assert(!dmr_test_exists(out));
}
END_TEST

/* kv gen (Mooncake and --kvops) into a directory that does not exist:
 * refused up front, exit 2, naming -o as given and why (it named
 * OUT.tmp and .OUT.PID.0.tmp: "No such file or directory"), as gen */
START_TEST(test_gen_out_dir)
{
	char in[600], out[700], nodir[600], line[2400], err[4096], want[1600];
	fixture200(in, sizeof(in));
	dmr_test_path(nodir, sizeof(nodir), "nodir");
	snprintf(out, sizeof(out), "%s/a.kv", nodir);
	snprintf(want, sizeof(want), "dmreplay kv gen: error: -o %s: no such directory '%s'\n", out,
		 nodir);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s", in, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_str_eq(err, want);
	snprintf(line, sizeof(line), "kv gen --kvops --ops 10 -o %s", out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_str_eq(err, want);
	ck_assert(!dmr_test_exists(nodir));
}
END_TEST

/* 5 and 8: option ranges; the backend name is checked first */
START_TEST(test_option_ranges)
{
	char in[600], kv[600], big[600], out[600], line[2400], err[4096], p[700];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "r.kv");
	dmr_test_path(big, sizeof(big), "r64.kv");
	dmr_test_path(out, sizeof(out), "rout");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 4K --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", in, big);
	ck_assert_int_eq(run_cli(line), 0);
	static const struct {
		const char *args, *want;
	} bad[] = {
	    {"--time-scale 1e300", "--time-scale 1e+300: outside 0..100"},
	    {"--time-scale 100.5", "outside 0..100"},
	    {"--window-ms 1e-9", "--window-ms 1e-09: outside 0.001..3.6e+06"},
	    {"--window-ms 0", "outside 0.001"},
	    {"--window-ms 4e6", "outside 0.001"},
	    {"--backend nope", "--backend nope: unknown (sim, shm, verbs or fault:"},
	    /* the IB MTUs, not a range (which holds 1500) */
	    {"--mtu 1500", "--mtu: 1500 is not an IB MTU (256, 512, 1024, 2048 or 4096)"},
	    {"--mtu 9000", "--mtu: 9000 is not an IB MTU (256, 512, 1024, 2048 or 4096)"},
	    {"--mtu 128", "--mtu: 128 is not an IB MTU"},
	    /* one prefix: the library's message says what only */
	    {"--slice 5G", "dmreplay kv run: error: --slice above 4 GiB - 1\n"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet %s", kv,
			 out, bad[i].args);
		int rc = run_cli_err(line, err, sizeof(err));
		ck_assert_msg(rc == 2, "'%s' exited %d", line, rc);
		ck_assert_msg(strstr(err, bad[i].want), "'%s': '%s' lacks '%s'", line, err,
			      bad[i].want);
	}
	/* the unknown backend is named before the 64 MiB pool's region error */
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --backend nope",
		 big, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "--backend nope: unknown"), "%s", err);
	/* the bounds themselves are accepted */
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --quiet --requests 5 "
		 "--time-scale 100 --window-ms 3600000 --mtu 256",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	/* a series of more than DMR_KV_TS_MAX_ROWS rows stops the run, partial */
	snprintf(line, sizeof(line), "kv run --trace %s --force --out %s --quiet --window-ms 0.001",
		 kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "the time series reached 1000000 rows"), "%s", err);
	snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
	ck_assert(dmr_test_exists(p));
}
END_TEST

/* 7: link rates printed with their fraction */
START_TEST(test_print_link_rate)
{
	char p[600];
	dmr_test_path(p, sizeof(p), "print.txt");
	dmr_kv_result_t r;
	memset(&r, 0, sizeof(r));
	snprintf(r.backend, sizeof(r.backend), "verbs");
	snprintf(r.status, sizeof(r.status), "complete");
	r.link_gbps = 2.5;
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	dmr_kv_print(&r, f);
	dmr_kv_bench_opts_t bo;
	dmr_kv_bench_opts_default(&bo);
	bo.backend = "verbs";
	dmr_kv_bench_result_t br;
	memset(&br, 0, sizeof(br));
	br.link_gbps = 2.5;
	br.mtu = 1024;
	br.bound_payload_us = 13421.77;
	dmr_kv_bench_print(&bo, &br, f);
	fclose(f);
	char *s = dmr_test_read_text(p);
	ck_assert_msg(strstr(s, "MN link 2.5 Gb/s"), "%s", s);
	ck_assert_msg(strstr(s, "one 2.5 Gb/s link") && strstr(s, "/ 2.5 Gb/s ="), "%s", s);
	ck_assert_msg(!strstr(s, " 2 Gb/s"), "%s", s);
	free(s);
	/* verbs without a port rate: no "MN link 0 Gb/s", no utilisation */
	r.link_gbps = 0;
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	dmr_kv_print(&r, f);
	fclose(f);
	s = dmr_test_read_text(p);
	ck_assert_msg(strstr(s, "  link           MN link rate unknown (no port rate read): no "
				"utilisation; goodput 0.00 Gb/s"),
		      "%s", s);
	ck_assert_msg(!strstr(s, "0 Gb/s:"), "%s", s);
	free(s);
}
END_TEST

/* shm is a loopback: kv run and kv bench print no link figure for it (kv
 * run printed "MN link 0 Gb/s: to MN 0.00 %, from MN 0.00 %", kv bench
 * "link rate unknown, MTU 0" and "0.00 Gb/s on the wire") */
START_TEST(test_shm_no_link)
{
	char in[600], kv[600], out[600];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "shm-link.kv");
	dmr_test_path(out, sizeof(out), "shm-link-out");
	dmr_err_t err;
	ck_assert_int_eq(convert(in, kv, 4096, NULL, &err), DMR_OK);
	dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", kv, "--backend", "shm", "--out",
					out, "--requests", "20", "--time-scale", "0", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "\n  link           no link (shm: loopback through memory, no "
				    "wire modelled); goodput "),
		      "%s", r.out);
	ck_assert_msg(!strstr(r.out, "MN link") && !strstr(r.out, " 0 Gb/s"), "%s", r.out);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "bench", "--backend", "shm", "--size", "64K", "--ops", "8", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, " on 1 CN, shm/- (no link: loopback through memory)\n"), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, "(no link: no serialisation bound)"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "MTU 0") && !strstr(r.out, "on the wire"), "%s", r.out);
	dmr_test_run_free(&r);
}
END_TEST

/* 11, 12, 13: timeseries blocks x block = bytes in every row; a complete
 * run removes a stale partial; per-segment placement columns */
START_TEST(test_results_consistency)
{
	char in[600], kv[600], out[600], p[700], line[2400];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, sizeof(kv), "c.kv");
	dmr_test_path(out, sizeof(out), "cout");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 64K --quiet", in,
		 kv);
	ck_assert_int_eq(run_cli(line), 0);
	/* a failed run first (truncated trace), then a complete one */
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
	dmr_test_write_file(p, "stale\n");
	snprintf(p, sizeof(p), "%s/timeseries.partial.csv", out);
	dmr_test_write_file(p, "stale\n");
	snprintf(line, sizeof(line),
		 "kv run --trace %s --force --out %s --quiet --window-ms 10 --cns 1 "
		 "--clients 2 --slice 16K",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
	ck_assert(!dmr_test_exists(p));
	snprintf(p, sizeof(p), "%s/timeseries.partial.csv", out);
	ck_assert(!dmr_test_exists(p));
	snprintf(p, sizeof(p), "%s/timeseries.csv", out);
	char *s = dmr_test_read_text(p);
	uint32_t rows = 0, busy = 0;
	for (char *l = strchr(s, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		double t;
		unsigned long long a, c, g, pu, d, e, bg, bp;
		ck_assert_int_eq(sscanf(l + 1, "%lf,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu", &t,
					&a, &c, &g, &pu, &d, &e, &bg, &bp),
				 9);
		ck_assert_msg(g * 65536 == bg && pu * 65536 == bp,
			      "row %u: %llu x 64K != %llu or "
			      "%llu x 64K != %llu",
			      rows, g, bg, pu, bp);
		rows++;
		busy += g + pu > 0;
	}
	ck_assert_uint_gt(rows, 100);
	ck_assert_uint_gt(busy, 10);
	free(s);
	/* placement: a bounded pool of 4 segments, round-robin and least-loaded */
	dmr_kv_opts_t o;
	dmr_kv_result_t rr, ll;
	dmr_err_t err;
	opts_small(&o, kv, NULL);
	o.unbounded = 0;
	o.capacity = 4ull * 40 * 65536; /* 40 slots per segment */
	o.segments = 4;
	o.time_scale = 0;
	ck_assert_msg(dmr_kv_run(&o, &rr, &err) == DMR_OK, "%s", err.msg);
	o.placement = DMR_KV_PLACE_LEAST;
	ck_assert_msg(dmr_kv_run(&o, &ll, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_le(rr.seg_blocks_min, rr.seg_blocks_max);
	ck_assert_uint_le(rr.seg_peak_max, 40);
	ck_assert_uint_le(ll.seg_peak_max, 40);
	ck_assert_uint_eq(rr.blocks_put, ll.blocks_put);
	uint64_t sum_lo = rr.seg_blocks_min * 4, sum_hi = rr.seg_blocks_max * 4;
	ck_assert(sum_lo <= rr.blocks_put && rr.blocks_put <= sum_hi);
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	s = dmr_test_read_text(p);
	ck_assert(strstr(s, ",status,segment_blocks_min,segment_blocks_max,segment_peak_min,"
			    "segment_peak_max,loop,prefetch_max,prefetch_issued,prefetch_used,"
			    "prefetch_wasted,prefetch_bytes\n"));
	free(s);
}
END_TEST

/* ---- --out: held, and left as it was by a refused run ---------------------- */

/* The trial of session 13: `kv run` refused a trace without requests (or
 * one that requests no block: a 0 / 0 hit ratio reported as 0.000000,
 * complete) only once it met its trailer, after --out and
 * summary.partial.csv were made. Now dmr_kv_trace_open refuses both (a
 * regular file's trailer is read at open), and kv run makes no --out. */
START_TEST(test_no_blocks_refused_at_open)
{
	char e[600], z[600], jl[600], zk[600], out[600], line[2400], err[4096];
	dmr_test_path(e, sizeof(e), "e.kv");
	dmr_test_path(z, sizeof(z), "z.kv");
	char text[1024];
	snprintf(text, sizeof(text), "%s# end 0 0\n", kv_hdr);
	dmr_test_write_file(e, text);
	snprintf(text, sizeof(text), "%s0,0,0,1,0,\n1,5,0,2,0,\n# end 2 0\n", kv_hdr);
	dmr_test_write_file(z, text);
	dmr_kv_reader_t *r = NULL;
	dmr_err_t er;
	ck_assert_int_eq(dmr_kv_trace_open(e, &r, &er), DMR_ERR_PARSE);
	ck_assert_msg(strstr(er.msg, "e.kv:5: no requests"), "%s", er.msg);
	ck_assert_int_eq(dmr_kv_trace_open(z, &r, &er), DMR_ERR_PARSE);
	ck_assert_msg(strstr(er.msg, "z.kv: trailer '# end 2 0'"), "%s", er.msg);
	ck_assert_msg(strstr(er.msg, "request no blocks"), "%s", er.msg);
	dmr_test_path(out, sizeof(out), "o-empty");
	snprintf(line, sizeof(line), "kv run --trace %s --out %s", e, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "no requests"), "%s", err);
	ck_assert(!dmr_test_exists(out));
	/* a Mooncake request without input tokens: kv gen converts it (a
	 * valid trace of one request, no block), kv run refuses it */
	dmr_test_path(jl, sizeof(jl), "len0.jsonl");
	dmr_test_path(zk, sizeof(zk), "len0.kv");
	dmr_test_write_file(
	    jl,
	    "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --quiet", jl, zk);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --out %s", zk, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "len0.kv: trailer '# end 1 0'"), "%s", err);
	ck_assert_msg(!strstr(err, "hit ratio 0.000000"), "%s", err);
	ck_assert(!dmr_test_exists(out));
}
END_TEST

/* A finished kv run into out (sim, 40 requests of 4 KiB blocks): its
 * summary.csv into *sum (malloc'ed), the listing of out into *list. */
static void kv_finished_run(const char *kv, const char *out, char **sum, char **list)
{
	char in[600], line[2400], p[700];
	fixture200(in, sizeof(in));
	snprintf(line, sizeof(line),
		 "kv gen --mooncake %s -o %s --block-bytes 4K --requests 40 --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 64K", kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	*sum = dmr_test_read_text(p);
	ck_assert_ptr_nonnull(*sum);
	*list = dmr_test_dir_listing(out);
	ck_assert_ptr_nonnull(*list);
	ck_assert_msg(strstr(*list, "summary.csv\n"), "%s", *list);
}

/* `dmreplay LINE` refused (exit 2) saying why, and --out as kv_finished_run
 * left it: the same listing (before) and summary.csv (sum), nothing moved. */
static void assert_refused_kept(const char *line, const char *why, const char *out,
				const char *before, const char *sum)
{
	char err[4096], p[700];
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, why), "%s: %s", line, err);
	ck_assert_msg(!strstr(err, "earlier-1"), "%s: %s", line, err);
	char *after = dmr_test_dir_listing(out);
	ck_assert_msg(strcmp(before, after) == 0, "%s: --out changed:\n%s\nnow:\n%s", line, before,
		      after);
	free(after);
	snprintf(p, sizeof(p), "%s/summary.csv", out);
	char *now = dmr_test_read_text(p);
	ck_assert_ptr_nonnull(now);
	ck_assert_str_eq(now, sum);
	free(now);
}

/* The trial of session 13: `kv run --force` moved a finished run's files
 * to earlier-1/ before its checks, so a refused run (a cut trace, --capacity
 * 1, --profile nope, --backend nope) left --out without its summary.csv.
 * Now they move only once the run is set up and sure to start. */
START_TEST(test_force_refused_keeps_out)
{
	char kv[600], cut[600], out[600], line[2400], p[700];
	dmr_test_path(kv, sizeof(kv), "f.kv");
	dmr_test_path(cut, sizeof(cut), "f-cut.kv");
	dmr_test_path(out, sizeof(out), "fout");
	char *sum = NULL, *before = NULL;
	kv_finished_run(kv, out, &sum, &before);
	char *text = dmr_test_read_text(kv);
	text[strlen(text) * 2 / 3] = 0; /* cut mid-file */
	dmr_test_write_file(cut, text);
	free(text);
	static const struct {
		const char *opt, *why;
	} refused[] = {
	    {"--capacity 1", "larger than a segment"},
	    {"--profile nope", "profile 'nope'"},
	    {"--backend nope", "--backend nope: unknown"},
	    {NULL, "its last line is not the trailer"}, /* the cut trace */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --force %s",
			 refused[i].opt ? kv : cut, out, refused[i].opt ? refused[i].opt : "");
		assert_refused_kept(line, refused[i].why, out, before, sum);
	}
	/* a run that starts: the earlier files move now, whole */
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 64K --force",
		 kv, out);
	ck_assert_int_eq(run_cli(line), 0);
	snprintf(p, sizeof(p), "%s/earlier-1/summary.csv", out);
	char *moved = dmr_test_read_text(p);
	ck_assert_ptr_nonnull(moved);
	ck_assert_str_eq(moved, sum);
	free(moved);
	free(sum);
	free(before);
}
END_TEST

/* Trial of session 13: `kv run --procs/--config --force` moved a finished
 * run's files to earlier-1/ before the launcher's checks, so a launcher
 * refused for --backend shm or a config that cannot be read (exit 2) left
 * --out without its summary.csv. Now they move only once its checks
 * passed, just before the children start. */
START_TEST(test_procs_force_refused_keeps_out)
{
	char kv[600], out[600], cfg[600], line[2400], p[700];
	dmr_test_path(kv, sizeof(kv), "pf.kv");
	dmr_test_path(out, sizeof(out), "pfout");
	dmr_test_path(cfg, sizeof(cfg), "pf.json");
	dmr_test_write_file(
	    cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"nosuchdev\",\"mr_size\":"
		 "4096}],\"cn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"nosuchdev\"}],"
		 "\"port\":18597}\n");
	char *sum = NULL, *before = NULL;
	kv_finished_run(kv, out, &sum, &before);
	static const struct {
		const char *opt, *why;
	} refused[] = {
	    {"--procs --backend shm", "--procs/--config need --backend verbs"},
	    {"--config %s.missing --backend verbs", ".missing"},
	    {"--config %s --backend verbs --cns 3", "--cns 3 but"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char opt[800];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(opt, sizeof(opt), refused[i].opt, cfg);
#pragma GCC diagnostic pop
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --force %s", kv,
			 out, opt);
		assert_refused_kept(line, refused[i].why, out, before, sum);
	}
	/* a launcher that starts its children (they fail here: no verbs, or no
	 * device "nosuchdev"): the earlier files move now, whole. Through the
	 * dmreplay binary, not in this process: a launcher execs its own
	 * executable for the children, and this one would run the suite again
	 * in each (a fork storm) */
	dmr_test_run_t r =
	    dmr_test_dmr("kv", "run", "--trace", kv, "--out", out, "--quiet", "--force", "--config",
			 cfg, "--backend", "verbs", "--deadline", "20", NULL);
	ck_assert_int_ne(r.status, 0);
	snprintf(p, sizeof(p), "%s/earlier-1/summary.csv", out);
	char *moved = dmr_test_read_text(p);
	ck_assert_msg(moved != NULL, "%s", r.err);
	dmr_test_run_free(&r);
	ck_assert_str_eq(moved, sum);
	free(moved);
	free(sum);
	free(before);
}
END_TEST

/* The trial of session 13: two `kv run`s into one --out both ran, one
 * silently overwrote the other's summary.csv (kv run took no lock). Now
 * kv run holds --out (DIR/.dmr-lock, as run): a second is refused at once,
 * naming the directory and the lock; and a refused run into a directory
 * that had no lock file leaves none. */
START_TEST(test_out_locked)
{
	char kv[600], out[600], line[2400], err[4096], lk[700], empty[600];
	dmr_test_path(kv, sizeof(kv), "l.kv");
	dmr_test_path(out, sizeof(out), "lout");
	char *sum = NULL, *before = NULL;
	kv_finished_run(kv, out, &sum, &before);
	/* the run held its --out: the lock file is there */
	ck_assert_msg(strstr(before, ".dmr-lock\n"), "%s", before);
	/* another process holds the lock, as a running kv run does */
	snprintf(lk, sizeof(lk), "%s/.dmr-lock", out);
	int fd = open(lk, O_RDWR | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 64K --force",
		 kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "another run holds this directory"), "%s", err);
	ck_assert_msg(strstr(err, lk), "%s", err);
	char *after = dmr_test_dir_listing(out);
	ck_assert_str_eq(after, before);
	free(after);
	close(fd);
	/* a refused run into an empty directory leaves it empty (no lock) */
	dmr_test_path(empty, sizeof(empty), "lempty");
	ck_assert_int_eq(mkdir(empty, 0777), 0);
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 1", kv, empty);
	ck_assert_int_eq(run_cli(line), 2);
	after = dmr_test_dir_listing(empty);
	ck_assert_str_eq(after, "");
	free(after);
	free(sum);
	free(before);
}
END_TEST

/* ---- defects of the new-user review (kv run, session 20) ---------------- */

/* a 4 KiB-block trace of the fixture's 200 requests */
static void fixture_kv4k(char *kv, size_t n, const char *name)
{
	char in[600], line[2400];
	fixture200(in, sizeof(in));
	dmr_test_path(kv, n, name);
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 4K --quiet", in, kv);
	ck_assert_int_eq(run_cli(line), 0);
}

/* 1: --capacity 0 said "give --capacity BYTES or --unbounded-pool", not
 * that 0 is what is wrong */
START_TEST(test_capacity_zero)
{
	char kv[600], out[600], line[2400], err[4096];
	fixture_kv4k(kv, sizeof(kv), "cap0.kv");
	dmr_test_path(out, sizeof(out), "cap0out");
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --capacity 0", kv, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "option --capacity 0: must be > 0"), "%s", err);
	ck_assert_msg(!strstr(err, "give --capacity BYTES"), "%s", err);
	ck_assert(!dmr_test_exists(out));
	/* the library says the same */
	dmr_kv_opts_t o;
	dmr_kv_result_t r;
	dmr_err_t e;
	opts_small(&o, kv, out);
	o.unbounded = 0;
	o.capacity = 0;
	ck_assert_int_eq(dmr_kv_run(&o, &r, &e), DMR_ERR_INVALID);
	ck_assert_msg(strstr(e.msg, "option --capacity 0: must be > 0"), "%s", e.msg);
}
END_TEST

/* 2: a pool region above half the memory said "give --capacity" also when
 * --capacity was given (then a smaller one is what helps) */
START_TEST(test_region_too_big_says_smaller_capacity)
{
	char in[600], kv[600], big[600], out[600], line[2400], err[4096];
	fixture_kv4k(kv, sizeof(kv), "reg.kv");
	dmr_test_path(out, sizeof(out), "regout");
	uint64_t half = kv_phys_bytes() / 2;
	if (half < (16ull << 40)) { /* 16 TiB of 4 KiB slots: more than half */
		snprintf(line, sizeof(line),
			 "kv run --trace %s --out %s --quiet --backend shm --capacity 16T", kv,
			 out);
		ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, "-byte region (") && strstr(err, "more than half ("),
			      "%s", err);
		ck_assert_msg(strstr(err, "of this machine's memory: give a smaller --capacity or "
					  "a smaller block (kv gen --block-bytes)"),
			      "%s", err);
		ck_assert_msg(!strstr(err, "give --capacity"), "%s", err);
		ck_assert(!dmr_test_exists(out));
	} else {
		printf("test_kv: %llu bytes of memory: --capacity 16T not above half\n",
		       (unsigned long long)half * 2);
	}
	/* unbounded (the default): sized by the trace's 5,007 distinct blocks
	 * of 1 GiB; --capacity is then what bounds it */
	fixture200(in, sizeof(in));
	dmr_test_path(big, sizeof(big), "reg1g.kv");
	snprintf(line, sizeof(line), "kv gen --mooncake %s -o %s --block-bytes 1G --quiet", in,
		 big);
	ck_assert_int_eq(run_cli(line), 0);
	if (half < (4000ull << 30)) {
		snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --backend shm",
			 big, out);
		ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
		ck_assert_msg(strstr(err, " slots of 1073741824 bytes + mailboxes)"), "%s", err);
		ck_assert_msg(strstr(err, "give --capacity (the pool is unbounded: sized by the "
					  "trace's distinct blocks), fewer --requests or a smaller "
					  "block"),
			      "%s", err);
		ck_assert(!dmr_test_exists(out));
	}
}
END_TEST

/* 3: --time-scale 101 cited "the synthetic trace's 1,022 s": it says the
 * range, and where the given trace's last request would arrive at 100 */
START_TEST(test_time_scale_range_message)
{
	char kv[600], z[600], lng[600], out[600], line[2400], err[4096];
	fixture_kv4k(kv, sizeof(kv), "ts.kv");
	dmr_test_path(out, sizeof(out), "tsout");
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --time-scale 101", kv,
		 out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "option --time-scale 101: outside 0..100 (arrival = the trace's "
				  "t_us x X: 0 = all at once"),
		      "%s", err);
	/* the fixture's last request: t_us 58501000 */
	ck_assert_msg(strstr(err, "ts.kv's last request is at 58.501 s of trace time, at 1.6 h "
				  "with --time-scale 100"),
		      "%s", err);
	ck_assert_msg(!strstr(err, "synthetic") && !strstr(err, "1,022"), "%s", err);
	ck_assert(!dmr_test_exists(out));
	/* every request at t_us 0 */
	dmr_test_path(z, sizeof(z), "ts0.kv");
	write_kv_block(z, "4096");
	snprintf(line, sizeof(line), "kv run --trace %s --out %s --quiet --time-scale 1e9", z, out);
	ck_assert_int_eq(run_cli_err(line, err, sizeof(err)), 2);
	ck_assert_msg(strstr(err, "option --time-scale 1e+09: outside 0..100"), "%s", err);
	ck_assert_msg(strstr(err, "every request of ") && strstr(err, "has t_us 0"), "%s", err);
	/* the reader: the last row's t_us with the trailer, also past a row
	 * longer than its 4 KiB steps back (1,000 blocks: 8 KiB) */
	dmr_kv_reader_t *rd;
	dmr_err_t e;
	ck_assert_int_eq(dmr_kv_trace_open(kv, &rd, &e), DMR_OK);
	ck_assert_int_eq(dmr_kv_trace_header(rd)->has_end_t, 1);
	ck_assert_uint_eq(dmr_kv_trace_header(rd)->end_t_us, 58501000);
	dmr_kv_trace_close(rd);
	char *t = malloc(16384);
	ck_assert_ptr_nonnull(t);
	int n = snprintf(t, 16384,
			 "# dmreplay-kvtrace v1\n# block_tokens 512\n# block_bytes 4096\n"
			 "req,t_us,input_tokens,output_tokens,nblocks,blocks\n0,0,512,1,1,7\n"
			 "1,123456789,512000,1,1000,");
	for (int i = 0; i < 1000; i++)
		n += snprintf(t + n, 16384 - (size_t)n, "%s%d", i ? " " : "", 1000000 + i);
	snprintf(t + n, 16384 - (size_t)n, "\n# end 2 1001\n");
	dmr_test_path(lng, sizeof(lng), "tslong.kv");
	dmr_test_write_file(lng, t);
	free(t);
	ck_assert_int_eq(dmr_kv_trace_open(lng, &rd, &e), DMR_OK);
	ck_assert_int_eq(dmr_kv_trace_header(rd)->has_end_t, 1);
	ck_assert_uint_eq(dmr_kv_trace_header(rd)->end_t_us, 123456789);
	/* the rows are still read from the start */
	dmr_kv_req_t q;
	ck_assert_int_eq(dmr_kv_trace_next(rd, &q, &e), DMR_OK);
	ck_assert_uint_eq(q.index, 0);
	ck_assert_int_eq(dmr_kv_trace_next(rd, &q, &e), DMR_OK);
	ck_assert_uint_eq(q.nblocks, 1000);
	ck_assert_int_eq(dmr_kv_trace_next(rd, &q, &e), DMR_EOF);
	dmr_kv_trace_close(rd);
}
END_TEST

/* 5: a bad row deep in the trace (line 150, t_us) stops a run mid-way,
 * partial, the earlier run moved to earlier-1/, where the rows are read as
 * the replay goes (sim; shm with --capacity); on shm with an unbounded pool
 * the trace is read before the run (the pool's size: its distinct blocks),
 * so the row is refused before the start and --out is left as it was
 * (docs/KVCACHE.md section 5) */
START_TEST(test_bad_row_before_or_after_start)
{
	char kv[600], bad[600], out[600], p[700];
	fixture_kv4k(kv, sizeof(kv), "row.kv");
	dmr_test_path(bad, sizeof(bad), "row-bad.kv");
	char *t = dmr_test_read_text(kv);
	ck_assert_ptr_nonnull(t);
	char *l = t;
	for (int i = 1; i < 150; i++) {
		l = strchr(l, '\n');
		ck_assert_ptr_nonnull(l);
		l++;
	}
	char *c = strchr(l, ',');
	ck_assert_ptr_nonnull(c);
	ck_assert(c[1] >= '0' && c[1] <= '9');
	c[1] = 'x'; /* line 150's t_us */
	dmr_test_write_file(bad, t);
	free(t);
	static const struct {
		const char *backend, *cap; /* cap NULL: unbounded */
		int before;		   /* refused before the start */
	} cases[] = {{"sim", NULL, 0}, {"shm", "1M", 0}, {"shm", NULL, 1}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(out, sizeof(out), "%s/rowout%zu", dmr_test_tmp, i);
		const char *capo = cases[i].cap ? "--capacity" : "--time-scale";
		const char *capv = cases[i].cap ? cases[i].cap : "0";
		dmr_test_run_t r =
		    dmr_test_dmr("kv", "run", "--trace", kv, "--backend", cases[i].backend, "--out",
				 out, "--quiet", "--requests", "20", capo, capv, NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
		r = dmr_test_dmr("kv", "run", "--trace", bad, "--backend", cases[i].backend,
				 "--out", out, "--force", "--time-scale", "0", capo, capv, NULL);
		ck_assert_msg(r.status == 2, "%s: exit %d: %s", cases[i].backend, r.status, r.err);
		ck_assert_msg(strstr(r.err, "row-bad.kv:150: column 't_us'"), "%s", r.err);
		snprintf(p, sizeof(p), "%s/summary.partial.csv", out);
		ck_assert_int_eq(dmr_test_exists(p), !cases[i].before);
		snprintf(p, sizeof(p), "%s/earlier-1/summary.csv", out);
		ck_assert_int_eq(dmr_test_exists(p), !cases[i].before);
		snprintf(p, sizeof(p), "%s/summary.csv", out);
		ck_assert_int_eq(dmr_test_exists(p), cases[i].before);
		if (cases[i].before)
			ck_assert_msg(!strstr(r.err, "earlier") && r.out[0] == 0, "%s%s", r.out,
				      r.err);
		else
			ck_assert_msg(strstr(r.out, "[PARTIAL]"), "%s %s: stdout '%s'",
				      cases[i].backend, capo, r.out);
		dmr_test_run_free(&r);
	}
}
END_TEST

static Suite *kv_suite(void)
{
	Suite *s = suite_create("kv");
	TCase *tc = tcase_create("kv");
	tcase_add_checked_fixture(tc, dmr_test_tmp_make, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_presets);
	tcase_add_test(tc, test_gen_small_exact);
	tcase_add_loop_test(tc, test_gen_refuses, 0,
			    (int)(sizeof(bad_lines) / sizeof(bad_lines[0])));
	tcase_add_test(tc, test_gen_time_backwards);
	tcase_add_test(tc, test_gen_fixture_deterministic);
	tcase_add_loop_test(tc, test_reader_refuses, 0, (int)(sizeof(bad_kv) / sizeof(bad_kv[0])));
	tcase_add_test(tc, test_reader_bad_header);
	tcase_add_test(tc, test_hit_ratio_fixture);
	tcase_add_test(tc, test_hit_ratio_whole_trace);
	tcase_add_test(tc, test_pool_bounded);
	tcase_add_test(tc, test_results_files);
	tcase_add_test(tc, test_single_4m_write_raw);
	tcase_add_test(tc, test_single_4m_bench);
	tcase_add_test(tc, test_stream_gbps);
	tcase_add_test(tc, test_gen_stdout);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_cli_procs);
	tcase_add_test(tc, test_geometry);
	tcase_add_test(tc, test_shm_pool);
	tcase_add_test(tc, test_shm_bench);
	tcase_add_test(tc, test_shm_chunks);
	tcase_add_test(tc, test_out_unwritable);
	tcase_add_test(tc, test_sim_signal);
	tcase_add_test(tc, test_gen_signal);
	tcase_add_test(tc, test_block_limit);
	tcase_add_test(tc, test_gen_same_file_and_empty);
	tcase_add_test(tc, test_gen_out_not_regular);
	tcase_add_test(tc, test_gen_out_dir);
	tcase_add_test(tc, test_option_ranges);
	tcase_add_test(tc, test_print_link_rate);
	tcase_add_test(tc, test_shm_no_link);
	tcase_add_test(tc, test_results_consistency);
	tcase_add_test(tc, test_streams_same_results);
	tcase_add_test(tc, test_stall_is_a_failed_run);
	tcase_add_test(tc, test_cli_work_bounds);
	tcase_add_test(tc, test_capacity_zero);
	tcase_add_test(tc, test_region_too_big_says_smaller_capacity);
	tcase_add_test(tc, test_time_scale_range_message);
	tcase_add_test(tc, test_bad_row_before_or_after_start);
	suite_add_tcase(s, tc);
	/* --out held and kept (CK_RUN_CASE=kv-out runs these alone) */
	TCase *to = tcase_create("kv-out");
	tcase_add_checked_fixture(to, dmr_test_tmp_make, teardown);
	tcase_set_timeout(to, 120);
	tcase_add_test(to, test_no_blocks_refused_at_open);
	tcase_add_test(to, test_force_refused_keeps_out);
	tcase_add_test(to, test_out_locked);
	tcase_add_test(to, test_procs_force_refused_keeps_out);
	suite_add_tcase(s, to);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("kv", 0, 0) != 0)
		return EXIT_FAILURE;
	return dmr_test_run(kv_suite());
}
