/*
 * traces/kvops.h - the key/value operation trace (issue #17 item 1;
 * docs/KVCACHE.md section 10.3): a text file of set / get / del operations
 * that `dmreplay kv run` replays against the key/value store, checking
 * every get byte for byte against a reference model; and its generator
 * (`dmreplay kv gen --kvops`: YCSB-like key popularity, value sizes from a
 * distribution, GSL draws from one seed).
 *
 *   # dmreplay-kvops v1
 *   # keys 1000            (informational: the key space of the generator)
 *   # value_max 67108864   (required: the largest value of the file, bytes)
 *   # seed 1               (informational)
 *   op,key,bytes
 *   set,user17,4096
 *   get,user17 user3
 *   del,user17
 *   # end 3
 *
 * Rows: op is set, get or del; key is one key (set, del) or 1..
 * DMR_KVOPS_MAX_GET keys separated by single spaces (get); a key is 1..
 * DMR_KV_KEY_MAX (250) bytes of printable ASCII without space or comma;
 * bytes is the value's size for set (0..value_max), empty otherwise. The
 * content of the value of the set on data row r (0-based) is
 * dmr_kvops_fill(r, ...): so a reader needs no value bytes in the file and a
 * get's bytes are checked against the set that wrote them. The trailer
 * "# end OPS" (the row count) marks the file complete; nothing may follow.
 * Errors name FILE:LINE and the field (DMR_ERR_PARSE).
 */
#ifndef DMR_KVOPS_H
#define DMR_KVOPS_H

#include <stdint.h>
#include <stdio.h>

#include "../core/base/status.h"

#define DMR_KVOPS_MAX_GET 16u		 /* keys of one get row */
#define DMR_KVOPS_KEY_MAX 250u		 /* = DMR_KV_KEY_MAX (core/kv/store.h) */
#define DMR_KVOPS_VALUE_MAX (1ull << 30) /* the format's own bound on value_max */

typedef enum dmr_kvops_op {
	DMR_KVOPS_SET = 1,
	DMR_KVOPS_GET = 2,
	DMR_KVOPS_DEL = 3,
} dmr_kvops_op_t;

typedef struct dmr_kvops_row {
	uint64_t index; /* data row, 0-based (the set's content seed) */
	uint64_t line;	/* in the file */
	int op;		/* dmr_kvops_op_t */
	uint32_t nkeys;
	const char *key[DMR_KVOPS_MAX_GET]; /* into the reader's line buffer (NUL-ended) */
	uint32_t klen[DMR_KVOPS_MAX_GET];
	uint64_t bytes; /* set */
} dmr_kvops_row_t;

typedef struct dmr_kvops_reader dmr_kvops_reader_t;

/* 1 when path's first line is "# dmreplay-kvops v1" (kv run's dispatch). */
int dmr_kvops_is(const char *path);
/* Open and read the header. Errors: DMR_ERR_IO (the path), DMR_ERR_PARSE. */
dmr_status_t dmr_kvops_open(const char *path, dmr_kvops_reader_t **rd_p, dmr_err_t *err);
/* The next row (valid until the next call): DMR_OK, DMR_EOF after the
 * trailer, DMR_ERR_PARSE (FILE:LINE: field 'NAME': ...). */
dmr_status_t dmr_kvops_next(dmr_kvops_reader_t *rd, dmr_kvops_row_t *row, dmr_err_t *err);
uint64_t dmr_kvops_value_max(const dmr_kvops_reader_t *rd);
void dmr_kvops_close(dmr_kvops_reader_t *rd);

/* The value of the set on row `index`: len bytes, word w (8 bytes, the
 * last partial) = mix64(index x 0x9E3779B97F4A7C15 + w) (core/base/hash.h). */
void dmr_kvops_fill(uint64_t index, uint8_t *buf, uint64_t len);
/* 1 when buf (len bytes) is that value; else 0 with *bad_p = the first
 * byte that differs. */
int dmr_kvops_check(uint64_t index, const uint8_t *buf, uint64_t len, uint64_t *bad_p);

/* The generator's options (docs/KVCACHE.md 10.3). */
typedef struct dmr_kvops_gen {
	uint64_t ops, keys;
	double theta; /* Zipf exponent of key popularity (0: uniform; YCSB 0.99) */
	double p_set; /* fractions of set, get, del (sum 1) */
	double p_get, p_del;
	uint32_t get_max; /* keys per get: uniform 1..get_max */
	int size_kind;	  /* 0 fixed a, 1 uniform [a, b], 2 lognormal median a, sigma s */
	uint64_t size_a, size_b;
	double size_sigma;
	uint64_t value_max; /* sizes above are clipped to it */
	uint64_t seed;
} dmr_kvops_gen_t;

/* Parse "fixed:N", "uniform:A:B" or "lognormal:MEDIAN:SIGMA" (sizes with
 * K/M/G suffixes) into g. DMR_ERR_PARSE naming --sizes. */
dmr_status_t dmr_kvops_parse_sizes(const char *s, dmr_kvops_gen_t *g, dmr_err_t *err);
/* Write the trace to `path` atomically (temp file + rename), or to
 * standard output when path is "-" (DMR_ERR_IO on a write error). SIGINT
 * or SIGTERM (core/base/sig.h, installed for the call) stops it:
 * DMR_ERR_INTERRUPTED ("... PATH not written"), the temp file removed and
 * an earlier file at path left as it was (on standard output, what went
 * out stays, without its "# end" line). Keys are
 * "user" + rank (rank 0 the most popular), drawn with dmr_zipf_ri_t
 * (traces/zipf.h) from a GSL mt19937 seeded with g->seed; sizes from GSL
 * (gsl_rng_uniform_int, gsl_ran_lognormal). Deterministic. */
dmr_status_t dmr_kvops_generate(const dmr_kvops_gen_t *g, const char *path, dmr_err_t *err);

#endif /* DMR_KVOPS_H */
