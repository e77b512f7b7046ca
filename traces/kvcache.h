/*
 * traces/kvcache.h - the KV-cache request trace (issue #5): model presets
 * for the size of a KV block, the Mooncake JSONL converter, and the
 * streaming reader of dmreplay's own KV trace format (docs/KVCACHE.md).
 *
 * A KV block holds the keys and values of DMR_KV_BLOCK_TOKENS prompt tokens
 * for every layer:
 *
 *   bytes per token = 2 (K and V) x layers x KV heads x head dim x bytes per element
 *   block bytes     = DMR_KV_BLOCK_TOKENS x bytes per token
 *
 * Mooncake JSONL input (kvcache-ai/Mooncake FAST25-release/traces): one JSON
 * object per line with "timestamp" (ms, integer or real, >= 0),
 * "input_length" and "output_length" (tokens, integers >= 0) and "hash_ids"
 * (array of integers >= 0, the ids of the prompt's 512-token blocks; equal
 * ids are a reusable prefix). Other members are ignored. A line is refused,
 * with FILE:LINE and the field named, when it is not JSON, not an object,
 * has a duplicate or missing member, a value of the wrong type or negative,
 * len(hash_ids) != ceil(input_length / 512), an id repeated inside the line
 * (ids are prefix hashes: a repeat is corrupt input), or a timestamp below
 * the previous line's (policy: refuse, never sort; the replay's request
 * order is the file order).
 *
 * dmreplay KV trace (output, "kvtrace v1"): see docs/KVCACHE.md. Header
 * lines starting with '#', a column line, one CSV row per request, and a
 * trailer line "# end REQUESTS BLOCKS" that marks the file complete.
 */
#ifndef DMR_KVCACHE_H
#define DMR_KVCACHE_H

#include <stdint.h>
#include <stdio.h>

#include "../core/base/status.h"

#define DMR_KV_BLOCK_TOKENS 512u
#define DMR_KV_TRACE_VERSION 1
#define DMR_KV_MAX_BLOCKS (1u << 20) /* blocks per request (512 M tokens) */
/* Largest KV block (bytes): 1 GiB. The largest preset is 256 MiB (llama-2-7b);
 * a block is one contiguous slot of the pool and, on sim, one transfer of at
 * most --slice-sized WRs: above 1 GiB a pool of a few thousand slots no longer
 * fits any 64-bit region arithmetic with margin and a replay moves petabytes.
 * kv gen refuses a larger --block-bytes, the reader a larger header. */
#define DMR_KV_MAX_BLOCK_BYTES (1ull << 30)

/* A model preset: the attention shape that sets the KV bytes per token. */
typedef struct dmr_kv_model {
	const char *name;    /* lower case, e.g. "llama-3-8b" */
	const char *hf_id;   /* Hugging Face repository of the config.json */
	uint32_t layers;     /* num_hidden_layers */
	uint32_t kv_heads;   /* num_key_value_heads */
	uint32_t head_dim;   /* hidden_size / num_attention_heads (or head_dim) */
	uint32_t elem_bytes; /* torch_dtype: bfloat16 -> 2 */
	const char *source;  /* where the numbers come from */
} dmr_kv_model_t;

/* The preset table, terminated by an entry with name == NULL. */
extern const dmr_kv_model_t dmr_kv_models[];

/* Case-insensitive lookup; NULL when unknown. */
const dmr_kv_model_t *dmr_kv_model_find(const char *name);
/* Comma-separated preset names (static storage). */
const char *dmr_kv_model_names(void);
uint64_t dmr_kv_model_bytes_per_token(const dmr_kv_model_t *m);
uint64_t dmr_kv_model_block_bytes(const dmr_kv_model_t *m);

/* ---- converter ---------------------------------------------------------- */

typedef struct dmr_kv_gen_opts {
	const char *mooncake;  /* input JSONL path */
	const char *out;       /* output path (written to OUT.tmp, renamed) */
	uint64_t block_bytes;  /* > 0 */
	const char *kv_model;  /* preset name recorded in the header, or NULL */
	uint64_t max_requests; /* 0 = all lines */
} dmr_kv_gen_opts_t;

typedef struct dmr_kv_gen_stats {
	uint64_t requests; /* lines converted */
	uint64_t blocks;   /* sum of len(hash_ids) */
	uint64_t distinct; /* distinct hash ids */
	uint64_t reused;   /* blocks whose id appeared in an earlier request */
	uint64_t input_tokens, output_tokens;
	uint64_t last_t_us;
} dmr_kv_gen_stats_t;

/*
 * Convert a Mooncake JSONL trace to a KV trace. Streaming: one line in
 * memory at a time (plus the set of ids seen, for the statistics).
 * Deterministic: the same input and options give the same bytes.
 * Errors: DMR_ERR_IO (files), DMR_ERR_PARSE ("FILE:LINE: field 'F': ..."),
 * DMR_ERR_INVALID (block_bytes 0 or above DMR_KV_MAX_BLOCK_BYTES; the output
 * is the input file, by path or by device and inode), DMR_ERR_PARSE also for an
 * input with no request ("no requests": an empty trace has no hit ratio),
 * DMR_ERR_NOMEM; DMR_ERR_INTERRUPTED when SIGINT or SIGTERM stops it
 * (core/base/sig.h, installed for the call: "... OUT not written"). On error
 * no output file is left behind (OUT.tmp removed, an earlier OUT left as it
 * was) and the input is untouched. *st_p is set only on success (st_p may
 * be NULL).
 */
dmr_status_t dmr_kv_gen_mooncake(const dmr_kv_gen_opts_t *o, dmr_kv_gen_stats_t *st_p,
				 dmr_err_t *err);

/* ---- KV trace reader ---------------------------------------------------- */

typedef struct dmr_kv_trace_hdr {
	uint32_t version;
	uint32_t block_tokens; /* 512 */
	uint64_t block_bytes;
	char kv_model[64]; /* "-" when given as --block-bytes */
	char source[256];  /* input file name (base name) */
	/* the '# end REQUESTS BLOCKS' trailer as read at open from the end of
	 * a regular file, for estimates before the run (kv run --slice); 0 and
	 * 0 when absent or not read (a pipe). Checked against the rows only by
	 * dmr_kv_trace_next at the end. */
	uint64_t end_requests, end_blocks;
	/* the last request's t_us, read with the trailer from the row before
	 * it (has_end_t 1), for messages about the trace's span (kv run
	 * --time-scale); has_end_t 0 when not read (no trailer, a row longer
	 * than 1 MiB). Not checked against the rows. */
	uint64_t end_t_us;
	int has_end_t;
} dmr_kv_trace_hdr_t;

/* One request. blocks[] belongs to the reader and is valid until the next
 * call of dmr_kv_trace_next. */
typedef struct dmr_kv_req {
	uint64_t index; /* 0-based, = row order */
	uint64_t t_us;	/* arrival, us since the trace's time 0 */
	uint64_t input_tokens, output_tokens;
	uint32_t nblocks;
	const uint64_t *blocks;
} dmr_kv_req_t;

typedef struct dmr_kv_reader dmr_kv_reader_t;

/* Open and read the header. DMR_ERR_IO / DMR_ERR_PARSE (FILE:LINE named). */
dmr_status_t dmr_kv_trace_open(const char *path, dmr_kv_reader_t **r_p, dmr_err_t *err);
const dmr_kv_trace_hdr_t *dmr_kv_trace_header(const dmr_kv_reader_t *r);
/* Next request: DMR_OK, DMR_EOF at the (checked) trailer, or
 * DMR_ERR_PARSE: bad row (FILE:LINE, column named), index out of sequence,
 * time going backwards, block count != ceil(input_tokens / block_tokens),
 * missing trailer (truncated file) or trailer counts that disagree. */
dmr_status_t dmr_kv_trace_next(dmr_kv_reader_t *r, dmr_kv_req_t *req, dmr_err_t *err);
void dmr_kv_trace_close(dmr_kv_reader_t *r);

#endif /* DMR_KVCACHE_H */
