/*
 * traces/kvcache.c - see kvcache.h: model presets, the Mooncake JSONL
 * converter (jansson, one line at a time) and the KV trace reader.
 */
#include "kvcache.h"
#include "trace.h"

#include "../core/base/fs.h"
#include "../core/base/hash.h"
#include "../core/base/sig.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ---- presets ------------------------------------------------------------ */

/*
 * Values from each model's config.json on Hugging Face (num_hidden_layers,
 * num_key_value_heads, hidden_size / num_attention_heads, torch_dtype).
 * Block bytes = 512 x 2 x layers x kv_heads x head_dim x elem_bytes.
 */
const dmr_kv_model_t dmr_kv_models[] = {
    {"llama-3-8b", "meta-llama/Meta-Llama-3-8B", 32, 8, 128, 2,
     "config.json: num_hidden_layers 32, num_key_value_heads 8, hidden_size 4096 / "
     "num_attention_heads 32 = head_dim 128, torch_dtype bfloat16"},
    {"llama-3-70b", "meta-llama/Meta-Llama-3-70B", 80, 8, 128, 2,
     "config.json: num_hidden_layers 80, num_key_value_heads 8, hidden_size 8192 / "
     "num_attention_heads 64 = head_dim 128, torch_dtype bfloat16"},
    {"qwen2-7b", "Qwen/Qwen2-7B", 28, 4, 128, 2,
     "config.json: num_hidden_layers 28, num_key_value_heads 4, hidden_size 3584 / "
     "num_attention_heads 28 = head_dim 128, torch_dtype bfloat16"},
    {"mistral-7b", "mistralai/Mistral-7B-v0.1", 32, 8, 128, 2,
     "config.json: num_hidden_layers 32, num_key_value_heads 8, hidden_size 4096 / "
     "num_attention_heads 32 = head_dim 128, torch_dtype bfloat16"},
    {"llama-2-7b", "meta-llama/Llama-2-7b-hf", 32, 32, 128, 2,
     "config.json: num_hidden_layers 32, num_key_value_heads 32 (no GQA), hidden_size "
     "4096 / num_attention_heads 32 = head_dim 128, fp16"},
    {"qwen2-0.5b", "Qwen/Qwen2-0.5B", 24, 2, 64, 2,
     "config.json: num_hidden_layers 24, num_key_value_heads 2, hidden_size 896 / "
     "num_attention_heads 14 = head_dim 64, torch_dtype bfloat16"},
    {NULL, NULL, 0, 0, 0, 0, NULL},
};

const dmr_kv_model_t *dmr_kv_model_find(const char *name)
{
	for (const dmr_kv_model_t *m = dmr_kv_models; name && m->name; m++)
		if (strcasecmp(m->name, name) == 0)
			return m;
	return NULL;
}

const char *dmr_kv_model_names(void)
{
	static char buf[256];
	if (!buf[0]) {
		size_t n = 0;
		for (const dmr_kv_model_t *m = dmr_kv_models; m->name; m++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
					      m->name);
	}
	return buf;
}

uint64_t dmr_kv_model_bytes_per_token(const dmr_kv_model_t *m)
{
	return 2ull * m->layers * m->kv_heads * m->head_dim * m->elem_bytes;
}

uint64_t dmr_kv_model_block_bytes(const dmr_kv_model_t *m)
{
	return DMR_KV_BLOCK_TOKENS * dmr_kv_model_bytes_per_token(m);
}

/* ---- a set of uint64 (open addressing, linear probing) ------------------ */

typedef struct u64set {
	uint64_t *k; /* key + 1; 0 = empty */
	uint64_t mask, n;
} u64set_t;

#define mix64 dmr_mix64

static int u64set_grow(u64set_t *s)
{
	uint64_t cap = s->mask ? (s->mask + 1) * 2 : 4096;
	uint64_t *k = calloc(cap, sizeof(*k));
	if (!k)
		return -1;
	for (uint64_t i = 0; s->k && i <= s->mask; i++) {
		if (!s->k[i])
			continue;
		uint64_t h = mix64(s->k[i]) & (cap - 1);
		while (k[h])
			h = (h + 1) & (cap - 1);
		k[h] = s->k[i];
	}
	free(s->k);
	s->k = k;
	s->mask = cap - 1;
	return 0;
}

/* 1: inserted, 0: already there, -1: out of memory. Keys up to 2^64 - 2. */
static int u64set_add(u64set_t *s, uint64_t key)
{
	if ((s->n + 1) * 2 > s->mask + 1 && u64set_grow(s) != 0)
		return -1;
	uint64_t kk = key + 1, h = mix64(kk) & s->mask;
	while (s->k[h]) {
		if (s->k[h] == kk)
			return 0;
		h = (h + 1) & s->mask;
	}
	s->k[h] = kk;
	s->n++;
	return 1;
}

/* ---- converter ---------------------------------------------------------- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Copy for a header line: printable ASCII only. */
static void header_safe(char *dst, size_t n, const char *src)
{
	size_t i = 0;
	for (; src[i] && i + 1 < n; i++)
		dst[i] = (src[i] >= 0x21 && src[i] < 0x7f) ? src[i] : '_';
	dst[i] = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Non-negative integer member; DMR_OK with *v set, else the error. */
static dmr_status_t get_count(json_t *obj, const char *file, uint64_t line, const char *key,
			      uint64_t *v, dmr_err_t *err)
{
	json_t *x = json_object_get(obj, key);
	if (!x)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": field '%s': missing", file,
				   line, key);
	if (!json_is_integer(x))
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": field '%s': not an integer",
				   file, line, key);
	json_int_t i = json_integer_value(x);
	if (i < 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s:%" PRIu64 ": field '%s': negative (%lld)", file, line, key,
				   (long long)i);
	*v = (uint64_t)i;
	return DMR_OK;
}

static dmr_status_t get_time_us(json_t *obj, const char *file, uint64_t line, uint64_t *us,
				dmr_err_t *err)
{
	json_t *x = json_object_get(obj, "timestamp");
	if (!x)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": field 'timestamp': missing",
				   file, line);
	if (json_is_integer(x)) {
		json_int_t ms = json_integer_value(x);
		if (ms < 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": field 'timestamp': negative (%lld ms)",
					   file, line, (long long)ms);
		if ((uint64_t)ms > UINT64_MAX / 1000)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": field 'timestamp': too large", file,
					   line);
		*us = (uint64_t)ms * 1000;
		return DMR_OK;
	}
	if (json_is_real(x)) {
		double ms = json_real_value(x);
		if (!isfinite(ms) || ms < 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": field 'timestamp': negative (%g ms)",
					   file, line, ms);
		if (ms * 1000 >= 1.8e19)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": field 'timestamp': too large", file,
					   line);
		*us = (uint64_t)llround(ms * 1000);
		return DMR_OK;
	}
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "%s:%" PRIu64 ": field 'timestamp': not a number (ms)", file, line);
}

typedef struct conv {
	const dmr_kv_gen_opts_t *o;
	const char *file;
	FILE *out;
	u64set_t seen;
	uint64_t *ids, *sorted;
	size_t cap;
	dmr_kv_gen_stats_t st;
	int have_prev;
	uint64_t prev_us, prev_line;
} conv_t;

static dmr_status_t conv_line(conv_t *c, const char *buf, size_t len, uint64_t line, dmr_err_t *err)
{
	json_error_t je;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	if (len == 0)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": empty line (not JSON)",
				   c->file, line);
	if (line == 1 && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) /* issue #15 D15 */
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s:1: the file starts with a UTF-8 byte-order mark (EF BB BF): "
				   "save it without one",
				   c->file);
	json_t *obj = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!obj)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": not JSON: %s (column %d)",
				   c->file, line, je.text, je.column);
	dmr_status_t st = DMR_OK;
	if (!json_is_object(obj)) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": not a JSON object", c->file,
				 line);
		goto out;
	}
	uint64_t t_us = 0, in = 0, outl = 0;
	if ((st = get_time_us(obj, c->file, line, &t_us, err)) != DMR_OK ||
	    (st = get_count(obj, c->file, line, "input_length", &in, err)) != DMR_OK ||
	    (st = get_count(obj, c->file, line, "output_length", &outl, err)) != DMR_OK)
		goto out;
	json_t *h = json_object_get(obj, "hash_ids");
	if (!h) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": field 'hash_ids': missing",
				 c->file, line);
		goto out;
	}
	if (!json_is_array(h)) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:%" PRIu64 ": field 'hash_ids': not an array", c->file, line);
		goto out;
	}
	size_t n = json_array_size(h);
	uint64_t want = in / DMR_KV_BLOCK_TOKENS + (in % DMR_KV_BLOCK_TOKENS != 0);
	if (n != want) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:%" PRIu64 ": field 'hash_ids': %zu ids, expected "
				 "ceil(input_length %" PRIu64 " / %u) = %" PRIu64,
				 c->file, line, n, in, DMR_KV_BLOCK_TOKENS, want);
		goto out;
	}
	if (n > DMR_KV_MAX_BLOCKS) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:%" PRIu64 ": field 'hash_ids': %zu ids, more than %u", c->file,
				 line, n, DMR_KV_MAX_BLOCKS);
		goto out;
	}
	if (c->have_prev && t_us < c->prev_us) {
		st =
		    dmr_err_set(err, DMR_ERR_PARSE,
				"%s:%" PRIu64 ": field 'timestamp': %.3f ms is before line %" PRIu64
				"'s %.3f ms (timestamps must not go backwards; sort the input "
				"first if that is meant)",
				c->file, line, t_us / 1e3, c->prev_line, c->prev_us / 1e3);
		goto out;
	}
	if (n > c->cap) {
		size_t cap = c->cap ? c->cap : 512;
		while (cap < n)
			cap *= 2;
		uint64_t *a = realloc(c->ids, cap * sizeof(*a));
		if (!a) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			goto out;
		}
		c->ids = a;
		uint64_t *b = realloc(c->sorted, cap * sizeof(*b));
		if (!b) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			goto out;
		}
		c->sorted = b;
		c->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(h, i);
		if (!json_is_integer(x)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%" PRIu64
					 ": field 'hash_ids': element %zu is not an integer",
					 c->file, line, i);
			goto out;
		}
		json_int_t v = json_integer_value(x);
		if (v < 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%" PRIu64
					 ": field 'hash_ids': element %zu negative (%lld)",
					 c->file, line, i, (long long)v);
			goto out;
		}
		c->ids[i] = c->sorted[i] = (uint64_t)v;
	}
	if (n > 1) {
		qsort(c->sorted, n, sizeof(uint64_t), cmp_u64);
		for (size_t i = 1; i < n; i++)
			if (c->sorted[i] == c->sorted[i - 1]) {
				size_t a = 0, b = 0, k = 0;
				for (size_t j = 0; j < n; j++)
					if (c->ids[j] == c->sorted[i]) {
						if (k++ == 0)
							a = j;
						else {
							b = j;
							break;
						}
					}
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:%" PRIu64 ": field 'hash_ids': id %" PRIu64
						 " repeated (elements %zu and %zu)",
						 c->file, line, c->sorted[i], a, b);
				goto out;
			}
	}
	/* the row */
	FILE *f = c->out;
	fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%zu,", c->st.requests, t_us, in,
		outl, n);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, i ? " %" PRIu64 : "%" PRIu64, c->ids[i]);
		int r = u64set_add(&c->seen, c->ids[i]);
		if (r < 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			goto out;
		}
		c->st.reused += r == 0;
	}
	fputc('\n', f);
	c->st.requests++;
	c->st.blocks += n;
	c->st.input_tokens += in;
	c->st.output_tokens += outl;
	c->st.last_t_us = t_us;
	c->have_prev = 1;
	c->prev_us = t_us;
	c->prev_line = line;
out:
	json_decref(obj);
	return st;
}

/* The converter stopped by SIGINT or SIGTERM. */
static dmr_status_t interrupted(const conv_t *c, dmr_err_t *err)
{
	int stream = strcmp(c->o->out, "-") == 0;
	return dmr_err_set(err, DMR_ERR_INTERRUPTED,
			   "interrupted by signal %d after %" PRIu64 " requests: %s%s",
			   dmr_sig_caught(), c->st.requests,
			   stream ? "standard output incomplete (no '# end' line)" : c->o->out,
			   stream ? "" : " not written");
}

dmr_status_t dmr_kv_gen_mooncake(const dmr_kv_gen_opts_t *o, dmr_kv_gen_stats_t *st_p,
				 dmr_err_t *err)
{
	if (!o->mooncake || !o->out)
		return dmr_err_set(err, DMR_ERR_INVALID, "--mooncake FILE and -o OUT are required");
	if (!*o->out)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "-o '': an empty path (give a file, or - for standard "
				   "output)");
	const int stream = strcmp(o->out, "-") == 0; /* standard output: no .tmp */
	if (o->block_bytes == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "--block-bytes must be > 0");
	if (o->block_bytes > DMR_KV_MAX_BLOCK_BYTES)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--block-bytes %" PRIu64 ": above the limit of %llu bytes "
				   "(1 GiB; docs/KVCACHE.md section 3)",
				   o->block_bytes, DMR_KV_MAX_BLOCK_BYTES);
	{ /* never replace the input: same path, or the same file by another name */
		struct stat si, so;
		if (strcmp(o->mooncake, o->out) == 0 ||
		    (!stream && stat(o->mooncake, &si) == 0 && stat(o->out, &so) == 0 &&
		     si.st_dev == so.st_dev && si.st_ino == so.st_ino))
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "-o %s is the input file (--mooncake %s): give "
					   "another output path",
					   o->out, o->mooncake);
	}
	{ /* the trace is written to OUT.tmp and renamed over OUT: never over a
	   * device, a directory or a pipe (as root, -o /dev/full had the
	   * device replaced by a regular file: a trial) */
		struct stat so;
		if (!stream && stat(o->out, &so) == 0 && !S_ISREG(so.st_mode))
			return dmr_err_set(
			    err, DMR_ERR_INVALID,
			    "-o %s: not a regular file (the trace is written "
			    "beside it and renamed over it): give the path of a file",
			    o->out);
	}
	if (!stream) { /* its directory, named as given (not OUT.tmp) */
		dmr_err_t e;
		dmr_status_t cs = dmr_out_file_check(o->out, &e);
		if (cs != DMR_OK)
			return dmr_err_set(err, cs, "-o %s", e.msg);
	}
	conv_t C, *c = &C;
	memset(c, 0, sizeof(C));
	c->o = o;
	c->file = o->mooncake;
	dmr_status_t st = DMR_OK;
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o->out) >= (int)sizeof(tmp))
		return dmr_err_set(err, DMR_ERR_INVALID, "-o: output path too long");
	/* SIGINT/SIGTERM: stop, OUT.tmp removed, an earlier OUT left as it
	 * was, exit 130 (it died by the signal and left OUT.tmp: a trial) */
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	FILE *in = fopen(o->mooncake, "r"); /* a FIFO's open waits for a writer */
	if (!in) {
		int e = errno;
		if (dmr_sig_caught())
			st = interrupted(c, err);
		else
			st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", o->mooncake, strerror(e));
		dmr_sig_restore(&saved);
		return st;
	}
	if (stream)
		c->out = stdout;
	else if ((st = dmr_tmp_fopen(tmp, o->out, &c->out, err)) != DMR_OK) {
		fclose(in);
		dmr_sig_restore(&saved);
		return st;
	}
	char src[200], model[64];
	header_safe(src, sizeof(src), base_name(o->mooncake));
	header_safe(model, sizeof(model), o->kv_model && *o->kv_model ? o->kv_model : "-");
	fprintf(c->out,
		"# dmreplay-kvtrace v%d\n# source %s\n# block_tokens %u\n# block_bytes %" PRIu64
		"\n# kv_model %s\nreq,t_us,input_tokens,output_tokens,nblocks,blocks\n",
		DMR_KV_TRACE_VERSION, src, DMR_KV_BLOCK_TOKENS, o->block_bytes, model);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0;
	errno = 0;
	while (!dmr_sig_caught() && (o->max_requests == 0 || c->st.requests < o->max_requests) &&
	       (len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		if (memchr(line, 0, (size_t)len)) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%" PRIu64 ": NUL byte (not JSON)",
					 c->file, lineno);
			goto fail;
		}
		st = conv_line(c, line, (size_t)len, lineno, err);
		if (st != DMR_OK)
			goto fail;
	}
	/* also a read that the signal cut short (a pipe: EINTR), and one that
	 * came after the last line */
	if (dmr_sig_caught()) {
		st = interrupted(c, err);
		goto fail;
	}
	if (ferror(in)) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error: %s", o->mooncake,
				 strerror(errno));
		goto fail;
	}
	if (c->st.requests == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: no requests (%" PRIu64
				 " lines): an empty trace has no hit ratio",
				 o->mooncake, lineno);
		goto fail;
	}
	fprintf(c->out, "# end %" PRIu64 " %" PRIu64 "\n", c->st.requests, c->st.blocks);
	{
		int bad = ferror(c->out) != 0;
		if (stream) { /* standard output stays open; nothing to rename */
			bad |= fflush(c->out) != 0 || ferror(c->out);
			c->out = NULL;
			if (bad) {
				st = dmr_err_set(err, DMR_ERR_WRITE,
						 "standard output: write failed: %s",
						 strerror(errno));
				goto fail;
			}
		} else {
			bad |= fclose(c->out) != 0;
			c->out = NULL;
			if (bad || rename(tmp, o->out) != 0) {
				st = dmr_err_set(err, DMR_ERR_WRITE, "%s: write failed: %s", o->out,
						 strerror(errno));
				goto fail;
			}
		}
	}
	c->st.distinct = c->seen.n;
	if (st_p)
		*st_p = c->st;
	goto done;
fail:
	if (stream) { /* what went out stays: it has no "# end" line, so kv run
			 refuses it */
		if (c->out)
			fflush(c->out);
	} else {
		if (c->out)
			fclose(c->out);
		remove(tmp);
	}
done:
	dmr_sig_restore(&saved);
	fclose(in);
	free(line);
	free(c->ids);
	free(c->sorted);
	free(c->seen.k);
	return st;
}

/* ---- reader ------------------------------------------------------------- */

struct dmr_kv_reader {
	FILE *f;
	char *path;
	char *line;
	size_t cap;
	uint64_t lineno;
	dmr_kv_trace_hdr_t h;
	uint64_t *blocks, *sorted;
	uint32_t bcap;
	uint64_t next_index, nblocks_total, prev_t;
	int done;
	int trailer; /* 1: h.end_requests, h.end_blocks read at open */
};

static ssize_t rd_line(dmr_kv_reader_t *r)
{
	ssize_t n = getline(&r->line, &r->cap, r->f);
	if (n < 0)
		return n;
	r->lineno++;
	while (n && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
		r->line[--n] = 0;
	return n;
}

/* Decimal uint64 at *p (digits only, no sign, no overflow); advances *p past
 * it. 0 on success, -1 otherwise. */
static int parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -1;
	uint64_t x = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	*p = s;
	return 0;
}

/* The t_us of the row that ends just before file offset `at` (the
 * trailer's start) into r->h.end_t_us: the row's start found by reading
 * back, 4 KiB at a time, at most 1 MiB. Left unknown (has_end_t 0) when
 * there is no such row (the column line precedes the trailer) or it does not
 * begin 'REQ,T_US,'. The caller restores the read position. */
static void kv_read_end_t(dmr_kv_reader_t *r, off_t at)
{
	char buf[4096];
	off_t end = at - 1; /* the '\n' that ends the row */
	off_t start = -1, lo = end;
	while (start < 0 && lo > 0 && at - lo <= (off_t)(1 << 20)) {
		off_t from = lo > (off_t)sizeof(buf) ? lo - (off_t)sizeof(buf) : 0;
		size_t len = (size_t)(lo - from);
		if (fseeko(r->f, from, SEEK_SET) != 0 || fread(buf, 1, len, r->f) != len)
			return;
		for (size_t i = len; i > 0; i--)
			if (buf[i - 1] == '\n') {
				start = from + (off_t)i;
				break;
			}
		lo = from;
	}
	if (start < 0 && lo == 0)
		start = 0;
	if (start < 0 || start >= end)
		return;
	char head[64];
	size_t got = 0;
	if (fseeko(r->f, start, SEEK_SET) == 0)
		got = fread(head, 1, sizeof(head) - 1, r->f);
	head[got] = 0;
	const char *p = head;
	uint64_t req, t;
	if (parse_u64(&p, &req) || *p++ != ',' || parse_u64(&p, &t) || *p != ',')
		return;
	r->h.end_t_us = t;
	r->h.has_end_t = 1;
}

/* The trailer's counts from the last line of a regular file into r->h; the
 * read position is restored. -1 when a regular file's last line is not a
 * trailer (a cut file: refused at open, before a run, as `run` refuses a
 * truncated trace); 0 otherwise (a file that cannot be sized or sought is
 * checked as it is read: dmr_kv_trace_next). */
static int kv_read_trailer(dmr_kv_reader_t *r)
{
	struct stat sb;
	char tail[128];
	off_t pos = ftello(r->f);
	if (pos < 0 || fstat(fileno(r->f), &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	if (sb.st_size < 2)
		return -1;
	off_t from =
	    sb.st_size > (off_t)sizeof(tail) - 1 ? sb.st_size - (off_t)sizeof(tail) + 1 : 0;
	size_t got = 0;
	if (fseeko(r->f, from, SEEK_SET) == 0)
		got = fread(tail, 1, sizeof(tail) - 1, r->f);
	tail[got] = 0;
	if (fseeko(r->f, pos, SEEK_SET) != 0) {
		clearerr(r->f); /* the stream reports what it meets */
		return 0;
	}
	if (got < 2 || tail[got - 1] != '\n')
		return -1;
	tail[--got] = 0;
	if (tail[got - 1] == '\r') /* as rd_line: CRLF lines */
		tail[--got] = 0;
	const char *last = strrchr(tail, '\n');
	last = last ? last + 1 : tail;
	uint64_t a, b;
	char extra;
	if (sscanf(last, "# end %" SCNu64 " %" SCNu64 " %c", &a, &b, &extra) != 2)
		return -1;
	r->h.end_requests = a;
	r->h.end_blocks = b;
	r->trailer = 1;
	kv_read_end_t(r, from + (off_t)(last - tail));
	if (fseeko(r->f, pos, SEEK_SET) != 0)
		clearerr(r->f); /* the stream reports what it meets */
	return 0;
}

dmr_status_t dmr_kv_trace_open(const char *path, dmr_kv_reader_t **r_p, dmr_err_t *err)
{
	dmr_status_t st = dmr_trace_check_file(path, err);
	if (st != DMR_OK)
		return st;
	dmr_kv_reader_t *r = calloc(1, sizeof(*r));
	if (!r)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv trace: out of memory");
	r->path = strdup(path);
	r->f = fopen(path, "r");
	if (!r->path || !r->f) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", path,
				 r->f ? "out of memory" : strerror(errno));
		goto fail;
	}
	ssize_t n = rd_line(r);
	unsigned ver = 0;
	if (n >= 3 && memcmp(r->line, "\xEF\xBB\xBF", 3) == 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:1: the file starts with a UTF-8 byte-order mark (EF BB BF): "
				 "save it without one",
				 path);
		goto fail;
	}
	if (n < 0 || sscanf(r->line, "# dmreplay-kvtrace v%u", &ver) != 1) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:1: not a dmreplay KV trace (first line must be "
				 "'# dmreplay-kvtrace v1'; convert with dmreplay kv gen)",
				 path);
		goto fail;
	}
	if (ver != DMR_KV_TRACE_VERSION) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s:1: KV trace version %u not supported (1)",
				 path, ver);
		goto fail;
	}
	r->h.version = ver;
	snprintf(r->h.kv_model, sizeof(r->h.kv_model), "-");
	snprintf(r->h.source, sizeof(r->h.source), "-");
	for (;;) {
		n = rd_line(r);
		if (n < 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%" PRIu64 ": truncated: no column line", path,
					 r->lineno + 1);
			goto fail;
		}
		if (r->line[0] != '#')
			break;
		char key[32], val[256];
		if (sscanf(r->line, "# %31s %255s", key, val) != 2)
			continue; /* a comment */
		const char *p = val;
		uint64_t v;
		if (strcmp(key, "block_bytes") == 0 || strcmp(key, "block_tokens") == 0) {
			if (parse_u64(&p, &v) || *p || v == 0 ||
			    (key[6] == 't' && v > (1u << 30))) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:%" PRIu64
						 ": header '%s': '%s' is not a positive "
						 "integer",
						 path, r->lineno, key, val);
				goto fail;
			}
			if (key[6] == 'b' && v > DMR_KV_MAX_BLOCK_BYTES) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:%" PRIu64 ": header 'block_bytes': %" PRIu64
						 " is above the limit of %llu bytes (1 GiB; "
						 "docs/KVCACHE.md section 3)",
						 path, r->lineno, v, DMR_KV_MAX_BLOCK_BYTES);
				goto fail;
			}
			if (key[6] == 'b')
				r->h.block_bytes = v;
			else
				r->h.block_tokens = (uint32_t)v;
		} else if (strcmp(key, "kv_model") == 0) {
			snprintf(r->h.kv_model, sizeof(r->h.kv_model), "%.63s", val);
		} else if (strcmp(key, "source") == 0) {
			snprintf(r->h.source, sizeof(r->h.source), "%s", val);
		}
	}
	if (!r->h.block_bytes || !r->h.block_tokens) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: header '%s' missing", path,
				 r->h.block_bytes ? "block_tokens" : "block_bytes");
		goto fail;
	}
	if (strcmp(r->line, "req,t_us,input_tokens,output_tokens,nblocks,blocks") != 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s:%" PRIu64 ": expected the column line "
				 "'req,t_us,input_tokens,output_tokens,nblocks,blocks'",
				 path, r->lineno);
		goto fail;
	}
	if (kv_read_trailer(r)) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: its last line is not the trailer '# end REQUESTS BLOCKS' (no "
				 "'# end' trailer: the file was cut, or something follows its "
				 "trailer)",
				 path);
		goto fail;
	}
	/* a trace that requests no block has no hit ratio (0 / 0): refused
	 * here, before a run, when the trailer was read (a regular file; else
	 * dmr_kv_trace_next refuses it at the trailer) */
	if (r->trailer && (r->h.end_requests == 0 || r->h.end_blocks == 0)) {
		uint64_t at = r->lineno + 1; /* the trailer's line when no request precedes it */
		if (r->h.end_requests == 0 && rd_line(r) >= 0 && r->line[0] != '#')
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%" PRIu64
					 ": a request, but the trailer '# end 0 %" PRIu64
					 "' (the last line) says the file has none",
					 path, at, r->h.end_blocks);
		else if (r->h.end_requests == 0)
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%" PRIu64 ": no requests: an empty trace has no hit "
					 "ratio (refused)",
					 path, at);
		else
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: trailer '# end %" PRIu64 " 0' (the last line): its "
					 "requests request no blocks (every input_tokens is 0): a "
					 "trace without blocks has no hit ratio (refused)",
					 path, r->h.end_requests);
		goto fail;
	}
	*r_p = r;
	return DMR_OK;
fail:
	dmr_kv_trace_close(r);
	return st;
}

const dmr_kv_trace_hdr_t *dmr_kv_trace_header(const dmr_kv_reader_t *r)
{
	return &r->h;
}

static const char *const kv_cols[] = {"req",	       "t_us",	  "input_tokens",
				      "output_tokens", "nblocks", "blocks"};

dmr_status_t dmr_kv_trace_next(dmr_kv_reader_t *r, dmr_kv_req_t *req, dmr_err_t *err)
{
	if (r->done)
		return DMR_EOF;
	ssize_t n = rd_line(r);
	if (n < 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: truncated after line %" PRIu64 " (no '# end' trailer)",
				   r->path, r->lineno);
	if (r->line[0] == '#') {
		uint64_t a, b;
		char extra;
		if (sscanf(r->line, "# end %" SCNu64 " %" SCNu64 " %c", &a, &b, &extra) != 2)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64
					   ": a '#' line among the requests that is not "
					   "the trailer '# end REQUESTS BLOCKS'",
					   r->path, r->lineno);
		if (a == 0 && r->next_index == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": no requests: an empty trace has no hit "
					   "ratio (refused)",
					   r->path, r->lineno);
		if (b == 0 && a == r->next_index && r->nblocks_total == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": trailer '# end %" PRIu64
					   " 0': its requests request no blocks (every "
					   "input_tokens is 0): a trace without blocks has no hit "
					   "ratio (refused)",
					   r->path, r->lineno, a);
		if (a != r->next_index || b != r->nblocks_total)
			return dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "%s:%" PRIu64 ": trailer says %" PRIu64 " requests, %" PRIu64
			    " blocks; the file has %" PRIu64 ", %" PRIu64,
			    r->path, r->lineno, a, b, r->next_index, r->nblocks_total);
		if (rd_line(r) >= 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64 ": data after the '# end' trailer",
					   r->path, r->lineno);
		r->done = 1;
		return DMR_EOF;
	}
	const char *p = r->line;
	uint64_t v[5];
	for (int i = 0; i < 5; i++) {
		if (parse_u64(&p, &v[i]) || *p != ',')
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s:%" PRIu64
					   ": column '%s': not a non-negative integer "
					   "followed by ','",
					   r->path, r->lineno, kv_cols[i]);
		p++;
	}
	if (v[0] != r->next_index)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s:%" PRIu64 ": column 'req': %" PRIu64 ", expected %" PRIu64,
				   r->path, r->lineno, v[0], r->next_index);
	if (v[0] > 0 && v[1] < r->prev_t)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s:%" PRIu64 ": column 't_us': %" PRIu64
				   " is before the previous request's %" PRIu64,
				   r->path, r->lineno, v[1], r->prev_t);
	uint64_t want = v[2] / r->h.block_tokens + (v[2] % r->h.block_tokens != 0);
	if (v[4] != want || v[4] > DMR_KV_MAX_BLOCKS)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s:%" PRIu64 ": column 'nblocks': %" PRIu64
				   ", expected ceil(input_tokens %" PRIu64 " / %u) = %" PRIu64,
				   r->path, r->lineno, v[4], v[2], r->h.block_tokens, want);
	if (v[4] > r->bcap) {
		uint32_t cap = r->bcap ? r->bcap : 256;
		while (cap < v[4])
			cap *= 2;
		uint64_t *b = realloc(r->blocks, cap * sizeof(*b));
		if (!b)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv trace: out of memory");
		r->blocks = b;
		b = realloc(r->sorted, cap * sizeof(*b));
		if (!b)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv trace: out of memory");
		r->sorted = b;
		r->bcap = cap;
	}
	for (uint64_t i = 0; i < v[4]; i++) {
		if (i && *p++ != ' ')
			goto bad_blocks;
		if (parse_u64(&p, &r->blocks[i]) || r->blocks[i] == UINT64_MAX)
			goto bad_blocks;
	}
	if (*p)
		goto bad_blocks;
	if (v[4] > 1) { /* ids are prefix hashes: a repeat inside a request is corrupt */
		memcpy(r->sorted, r->blocks, v[4] * sizeof(uint64_t));
		qsort(r->sorted, v[4], sizeof(uint64_t), cmp_u64);
		for (uint64_t i = 1; i < v[4]; i++)
			if (r->sorted[i] == r->sorted[i - 1])
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s:%" PRIu64 ": column 'blocks': id %" PRIu64
						   " repeated in one request",
						   r->path, r->lineno, r->sorted[i]);
	}
	req->index = v[0];
	req->t_us = v[1];
	req->input_tokens = v[2];
	req->output_tokens = v[3];
	req->nblocks = (uint32_t)v[4];
	req->blocks = r->blocks;
	r->next_index++;
	r->nblocks_total += v[4];
	r->prev_t = v[1];
	return DMR_OK;
bad_blocks:
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "%s:%" PRIu64 ": column 'blocks': expected %" PRIu64
			   " space-separated block ids (integers)",
			   r->path, r->lineno, v[4]);
}

void dmr_kv_trace_close(dmr_kv_reader_t *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->path);
	free(r->line);
	free(r->blocks);
	free(r->sorted);
	free(r);
}
