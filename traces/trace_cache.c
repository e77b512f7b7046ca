/*
 * traces/trace_cache.c - the binary trace cache (trace.h: dmr_trace_open_cached,
 * dmr_trace_cache_build, dmr_trace_cache_path; FORMAT.md "Binary cache").
 *
 * A CSV trace is compiled once, by the CSV reader (so every static check
 * has passed), into fixed-size records; later runs map the cache and copy
 * records out (trace_read.c bin_next) instead of parsing text. The pattern
 * is LogGOPSim's text-to-binary step (T. Hoefler, T. Schneider, A.
 * Lumsdaine, "LogGOPSim", HPDC 2010: txt2bin then the simulator reads the
 * binary schedule).
 */
#include "trace_impl.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../core/base/hash.h"
#include "../core/base/sig.h"

/* Add n bytes (n a multiple of 8). */
/* Not cloned per call site: gcc 12 -O3 makes a copy for head_sum's fixed
 * 128 bytes, then cannot bound the word loops on paths that never run and
 * refuses them (-Waggressive-loop-optimizations, a false positive). The
 * callers hash whole headers and slices, so the call costs nothing. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#endif
void trace_sum_add(trace_sum_t *s, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t left = n / 8;
	uint64_t l[4] = {s->lane[0], s->lane[1], s->lane[2], s->lane[3]}, words = s->words, w;

	for (; (words & 3) && left; left--, words++, b += 8) {
		memcpy(&w, b, 8);
		l[words & 3] = trace_sum_round(l[words & 3], w);
	}
	for (; left >= 4; left -= 4, words += 4, b += 32) {
		uint64_t w4[4];
		memcpy(w4, b, 32);
		l[0] = trace_sum_round(l[0], w4[0]);
		l[1] = trace_sum_round(l[1], w4[1]);
		l[2] = trace_sum_round(l[2], w4[2]);
		l[3] = trace_sum_round(l[3], w4[3]);
	}
	for (; left; left--, words++, b += 8) {
		memcpy(&w, b, 8);
		l[words & 3] = trace_sum_round(l[words & 3], w);
	}
	memcpy(s->lane, l, sizeof(l));
	s->words = words;
}

uint64_t trace_sum_final(const trace_sum_t *s)
{
	uint64_t h = s->words * 8;
	for (int i = 0; i < 4; i++)
		h = dmr_mix64(h ^ s->lane[i]) + TRACE_SUM_P1 * (uint64_t)(i + 1);
	return dmr_mix64(h);
}

static uint64_t head_sum(const trace_bin_head_t *hd)
{
	trace_bin_head_t c = *hd;
	trace_sum_t s;

	c.head_sum = 0;
	trace_sum_init(&s);
	trace_sum_add(&s, &c, sizeof(c));
	return trace_sum_final(&s);
}

static uint64_t sum_bytes(const void *p, size_t n)
{
	trace_sum_t s;

	trace_sum_init(&s);
	trace_sum_add(&s, p, n);
	return trace_sum_final(&s);
}

int trace_bin_check_slice(const void *map, uint64_t k)
{
	trace_bin_head_t hd;
	uint64_t sum;

	memcpy(&hd, map, sizeof(hd));
	uint64_t a = sizeof(hd) + k * TRACE_BIN_SLICE, b = a + TRACE_BIN_SLICE;
	if (k >= hd.nslices)
		return -1;
	if (b > hd.table_off)
		b = hd.table_off;
	memcpy(&sum, (const unsigned char *)map + hd.table_off + 8 * k, 8);
	return sum_bytes((const unsigned char *)map + a, b - a) == sum ? 0 : -1;
}

int trace_bin_check(const void *map, size_t len, char *why, size_t whysz)
{
	trace_bin_head_t hd;

	if (len < sizeof(hd)) {
		snprintf(why, whysz, "truncated: %zu bytes, shorter than its header", len);
		return -1;
	}
	memcpy(&hd, map, sizeof(hd));
	if (memcmp(hd.magic, TRACE_BIN_MAGIC, 8) != 0) {
		snprintf(why, whysz, "not a dmreplay trace cache (bad magic)");
		return -1;
	}
	if (head_sum(&hd) != hd.head_sum) {
		snprintf(why, whysz, "corrupt: header checksum mismatch");
		return -1;
	}
	if (hd.version != TRACE_BIN_VERSION || hd.endian != TRACE_BIN_ENDIAN ||
	    hd.op_bytes != TRACE_BIN_OP_BYTES || hd.act_bytes != sizeof(dmr_trace_act_t) ||
	    hd.hdr_bytes != sizeof(dmr_trace_hdr_t) || hd.txn_bytes != sizeof(trace_bin_txn_t)) {
		snprintf(why, whysz,
			 "cache layout v%u (this build reads v%u) or built on another host",
			 hd.version, TRACE_BIN_VERSION);
		return -2;
	}
	if (hd.file_bytes != len) {
		snprintf(why, whysz, "%s: %zu bytes, header says %llu",
			 len < hd.file_bytes ? "truncated" : "corrupt", len,
			 (unsigned long long)hd.file_bytes);
		return -1;
	}
	uint64_t data = hd.table_off - sizeof(hd);
	if (hd.table_off < sizeof(hd) + sizeof(dmr_trace_hdr_t) || hd.table_off % 8 ||
	    hd.nslices != (data + TRACE_BIN_SLICE - 1) / TRACE_BIN_SLICE ||
	    hd.table_off + 8 * hd.nslices != len) {
		snprintf(why, whysz, "corrupt: inconsistent layout");
		return -1;
	}
	if (sum_bytes((const unsigned char *)map + hd.table_off, 8 * hd.nslices) != hd.table_sum) {
		snprintf(why, whysz, "corrupt: slice table checksum mismatch");
		return -1;
	}
	for (uint64_t k = 0; k * TRACE_BIN_SLICE < sizeof(dmr_trace_hdr_t); k++)
		if (trace_bin_check_slice(map, k)) {
			snprintf(why, whysz, "corrupt: data checksum mismatch (slice %llu)",
				 (unsigned long long)k);
			return -1;
		}
	return 0;
}

/* Map path read-only. 0, or -1 with err set (DMR_ERR_IO). *fd_st_p: its stat. */
static int map_file(const char *path, void **map_p, size_t *len_p, dmr_err_t *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		close(fd);
		*map_p = NULL;
		*len_p = 0;
		return 0;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		dmr_err_set(err, DMR_ERR_IO, "%s: mmap: %s", path, strerror(errno));
		return -1;
	}
	*map_p = m;
	*len_p = (size_t)st.st_size;
	return 0;
}

dmr_status_t dmr_trace_open_cache_file(const char *path, dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	void *map;
	size_t len;
	char why[200];

	if (map_file(path, &map, &len, err))
		return DMR_ERR_IO;
	if (trace_bin_check(map, len, why, sizeof(why)) != 0) {
		if (map)
			munmap(map, len);
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: trace cache %s", path, why);
	}
	return dmr_trace_open_bin(path, map, len, r_p, err);
}

/* ---- source key ------------------------------------------------------ */

#define SRC_EDGE (1u << 20)    /* bytes hashed at each end */
#define SRC_SAMPLES 14	       /* interior samples */
#define SRC_SAMPLE (64u << 10) /* bytes per interior sample */

/* Hash of n bytes of fd at off (zero-padded to 8). 0 or -1 (errno). */
static int sum_range(int fd, uint64_t off, size_t n, unsigned char *buf, trace_sum_t *s)
{
	while (n) {
		size_t k = n < SRC_EDGE ? n : SRC_EDGE;
		ssize_t got = pread(fd, buf, k, (off_t)off);
		if (got <= 0)
			return got < 0 ? -1 : (errno = EIO, -1);
		size_t g = (size_t)got, pad = (8 - g % 8) % 8;
		memset(buf + g, 0, pad);
		trace_sum_add(s, buf, g + pad);
		off += g;
		n -= g;
	}
	return 0;
}

/* The CSV's key: size, mtime (ns) and the hash of its first and last MiB
 * and SRC_SAMPLES evenly spaced 64 KiB slices (FORMAT.md "Binary cache":
 * O(1) per run, whatever the trace length). */
static dmr_status_t src_key(const char *path, uint64_t *size_p, int64_t *mtime_p, uint64_t *hash_p,
			    dmr_err_t *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf = malloc(SRC_EDGE + 8);
	trace_sum_t s;
	int rc = 0;

	if (fd < 0 || !buf || fstat(fd, &st) != 0) {
		dmr_status_t code = !buf ? DMR_ERR_NOMEM : DMR_ERR_IO;
		dmr_err_set(err, code, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(buf);
		return code;
	}
	uint64_t size = (uint64_t)st.st_size;
	trace_sum_init(&s);
	if (size <= 2ull * SRC_EDGE + SRC_SAMPLES * SRC_SAMPLE) {
		rc = sum_range(fd, 0, size, buf, &s);
	} else {
		rc = sum_range(fd, 0, SRC_EDGE, buf, &s);
		for (int i = 1; rc == 0 && i <= SRC_SAMPLES; i++)
			rc = sum_range(fd, size / (SRC_SAMPLES + 1) * (uint64_t)i, SRC_SAMPLE, buf,
				       &s);
		if (rc == 0)
			rc = sum_range(fd, size - SRC_EDGE, SRC_EDGE, buf, &s);
	}
	close(fd);
	free(buf);
	if (rc)
		return dmr_err_set(err, DMR_ERR_IO, "%s: read: %s", path, strerror(errno));
	*size_p = size;
	*mtime_p = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	*hash_p = trace_sum_final(&s);
	return DMR_OK;
}

/* ---- building --------------------------------------------------------- */

/* 1 when path starts with the cache magic (0 also when unreadable: the
 * caller's open reports that). */
static int is_cache_file(const char *path)
{
	char magic[8] = {0};
	FILE *fp = fopen(path, "rb");
	size_t got = 0;

	if (fp) {
		got = fread(magic, 1, sizeof(magic), fp);
		fclose(fp);
	}
	return got == sizeof(magic) && memcmp(magic, TRACE_BIN_MAGIC, 8) == 0;
}

typedef struct bin_out {
	FILE *fp;
	trace_sum_t sum; /* of the current slice */
	uint64_t bytes;	 /* data bytes written (after the head) */
	uint64_t *sums;	 /* finished slices */
	uint64_t nsums, capsums;
	int nomem;
} bin_out_t;

static int bout(bin_out_t *o, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (fwrite(p, 1, n, o->fp) != n)
		return -1;
	while (n) {
		size_t room = TRACE_BIN_SLICE - (size_t)(o->bytes % TRACE_BIN_SLICE);
		size_t k = n < room ? n : room;
		trace_sum_add(&o->sum, b, k);
		o->bytes += k;
		b += k;
		n -= k;
		if (o->bytes % TRACE_BIN_SLICE == 0) {
			if (o->nsums == o->capsums) {
				uint64_t cap = o->capsums ? 2 * o->capsums : 1024;
				uint64_t *ns = realloc(o->sums, cap * sizeof(*ns));
				if (!ns) {
					o->nomem = 1;
					return -1;
				}
				o->sums = ns;
				o->capsums = cap;
			}
			o->sums[o->nsums++] = trace_sum_final(&o->sum);
			trace_sum_init(&o->sum);
		}
	}
	return 0;
}

dmr_status_t dmr_trace_cache_build(const char *csv, const char *cache, dmr_err_t *err)
{
	trace_bin_head_t hd;
	dmr_trace_reader_t *r = NULL;
	dmr_trace_txn_t *t = malloc(sizeof(*t));
	char *tmp = malloc(strlen(cache) + 16);
	bin_out_t o = {0};
	dmr_status_t st;
	int fd = -1;

	if (!t || !tmp) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", cache);
		goto out;
	}
	memset(&hd, 0, sizeof(hd));
	st = src_key(csv, &hd.src_size, &hd.src_mtime_ns, &hd.src_hash, err);
	if (st != DMR_OK)
		goto out;
	if (is_cache_file(csv)) {
		st = dmr_err_set(err, DMR_ERR_INVALID, "%s: already a binary trace cache", csv);
		goto out;
	}
	st = dmr_trace_open(csv, &r, err);
	if (st != DMR_OK)
		goto out;
	sprintf(tmp, "%s.tmp.XXXXXX", cache);
	fd = mkstemp(tmp);
	if (fd < 0) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	o.fp = fdopen(fd, "wb");
	if (!o.fp) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto out_unlink;
	}
	setvbuf(o.fp, NULL, _IOFBF, 1u << 20);
	trace_sum_init(&o.sum);
	/* the head is written last; its place first */
	int bad = fwrite(&hd, 1, sizeof(hd), o.fp) != sizeof(hd);
	{
		dmr_trace_hdr_t h;
		memset(&h, 0, sizeof(h));
		h = *dmr_trace_header(r);
		bad |= bout(&o, &h, sizeof(h));
	}
	while (!bad && (st = dmr_trace_next(r, t, err)) == DMR_OK) {
		if ((hd.ntxns & 4095) == 0 && dmr_sig_caught()) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED,
					 "%s: interrupted while building its trace cache", csv);
			goto out_close;
		}
		trace_bin_txn_t bt;
		memset(&bt, 0, sizeof(bt));
		bt.id = t->id;
		bt.xv = t->xv;
		bt.nops = t->nops;
		bt.line = t->line;
		bt.type = t->type;
		bad |= bout(&o, &bt, sizeof(bt));
		for (uint32_t i = 0; i < t->nops; i++) {
			const dmr_trace_op_t *op = &t->ops[i];
			bad |= bout(&o, op, TRACE_BIN_OP_BYTES);
			bad |= bout(&o, op->acts, op->nacts * sizeof(dmr_trace_act_t));
		}
		hd.ntxns++;
		hd.nrows += t->nops;
	}
	if (st != DMR_EOF && !bad)
		goto out_close; /* parse error: err says where */
	memcpy(hd.magic, TRACE_BIN_MAGIC, 8);
	hd.version = TRACE_BIN_VERSION;
	hd.endian = TRACE_BIN_ENDIAN;
	hd.op_bytes = TRACE_BIN_OP_BYTES;
	hd.act_bytes = sizeof(dmr_trace_act_t);
	hd.hdr_bytes = sizeof(dmr_trace_hdr_t);
	hd.txn_bytes = sizeof(trace_bin_txn_t);
	if (!bad && o.bytes % TRACE_BIN_SLICE) { /* the last, short slice */
		uint64_t last = trace_sum_final(&o.sum);
		if (o.nsums == o.capsums) {
			uint64_t *ns = realloc(o.sums, (o.capsums + 1) * sizeof(*ns));
			if (!ns)
				bad = o.nomem = 1;
			else
				o.sums = ns, o.capsums++;
		}
		if (!bad)
			o.sums[o.nsums++] = last;
	}
	hd.table_off = sizeof(hd) + o.bytes;
	hd.nslices = o.nsums;
	hd.table_sum = o.nsums ? sum_bytes(o.sums, 8 * o.nsums) : sum_bytes(&hd, 0);
	if (!bad && o.nsums)
		bad |= fwrite(o.sums, 8, o.nsums, o.fp) != o.nsums;
	hd.file_bytes = hd.table_off + 8 * o.nsums;
	hd.head_sum = head_sum(&hd);
	bad |= fflush(o.fp) != 0 || fseeko(o.fp, 0, SEEK_SET) != 0 ||
	       fwrite(&hd, 1, sizeof(hd), o.fp) != sizeof(hd) || fflush(o.fp) != 0 ||
	       fsync(fileno(o.fp)) != 0;
	if (bad) {
		st = o.nomem ? dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", tmp)
			     : dmr_err_set(err, DMR_ERR_IO, "%s: write: %s", tmp, strerror(errno));
		goto out_close;
	}
	if (fclose(o.fp) != 0) {
		o.fp = NULL;
		st = dmr_err_set(err, DMR_ERR_IO, "%s: close: %s", tmp, strerror(errno));
		goto out_unlink;
	}
	o.fp = NULL;
	/* atomic: concurrent builders each rename a complete file */
	if (rename(tmp, cache) != 0) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: rename: %s", cache, strerror(errno));
		goto out_unlink;
	}
	st = DMR_OK;
	goto out;
out_close:
	fclose(o.fp);
out_unlink:
	unlink(tmp);
out:
	dmr_trace_close(r);
	free(o.sums);
	free(t);
	free(tmp);
	return st;
}

dmr_status_t dmr_trace_cache_path(const char *csv, const char *dir, char *out, size_t outsz,
				  dmr_err_t *err)
{
	int n;

	if (!dir || !*dir) {
		n = snprintf(out, outsz, "%s.dmrc", csv);
	} else {
		char *abs = realpath(csv, NULL);
		const char *base = strrchr(csv, '/');
		uint64_t h = 0x243F6A8885A308D3ull;
		if (!abs)
			return dmr_err_set(err, DMR_ERR_IO, "%s: %s", csv, strerror(errno));
		for (const char *p = abs; *p; p++)
			h = dmr_mix64(h ^ (unsigned char)*p);
		free(abs);
		n = snprintf(out, outsz, "%s/%s-%016llx.dmrc", dir, base ? base + 1 : csv,
			     (unsigned long long)h);
	}
	if (n < 0 || (size_t)n >= outsz)
		return dmr_err_set(err, DMR_ERR_RANGE, "%s: cache path too long", csv);
	return DMR_OK;
}

/* Open cache if it is valid and matches the key; 1 = stale or absent
 * (rebuild), 0 = opened, -1 = refused (err and *st_p set). */
static int try_cache(const char *csv, const char *cache, uint64_t size, int64_t mtime,
		     uint64_t hash, dmr_trace_reader_t **r_p, dmr_status_t *st_p, dmr_err_t *err)
{
	void *map;
	size_t len;
	char why[200];
	trace_bin_head_t hd;

	if (access(cache, F_OK) != 0)
		return 1;
	*st_p = DMR_ERR_IO;
	if (map_file(cache, &map, &len, err))
		return -1;
	if (len >= sizeof(hd)) {
		memcpy(&hd, map, sizeof(hd));
		if (memcmp(hd.magic, TRACE_BIN_MAGIC, 8) == 0 && head_sum(&hd) == hd.head_sum &&
		    hd.version == TRACE_BIN_VERSION &&
		    (hd.src_size != size || hd.src_mtime_ns != mtime || hd.src_hash != hash)) {
			munmap(map, len);
			return 1; /* stale: built from another version of the CSV */
		}
	}
	int rc = trace_bin_check(map, len, why, sizeof(why));
	if (rc == -2) {
		munmap(map, len);
		return 1;
	}
	if (rc) {
		if (map)
			munmap(map, len);
		*st_p = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: trace cache of %s is %s; remove it (it is rebuilt) or run with "
		    "--no-trace-cache",
		    cache, csv, why);
		return -1;
	}
	*st_p = dmr_trace_open_bin(csv, map, len, r_p, err);
	return *st_p == DMR_OK ? 0 : -1;
}

dmr_status_t dmr_trace_open_cached(const char *path, const dmr_trace_cache_opts_t *co,
				   dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	char cache[4096];
	uint64_t size, hash;
	int64_t mtime;
	dmr_status_t st;

	if (!co || co->off)
		return dmr_trace_open(path, r_p, err);
	if (is_cache_file(path)) /* a cache file given as the trace: read it as it is */
		return dmr_trace_open_cache_file(path, r_p, err);
	if ((st = dmr_trace_cache_path(path, co->dir, cache, sizeof(cache), err)) != DMR_OK)
		return st;
	for (int attempt = 0; attempt < 2; attempt++) {
		if ((st = src_key(path, &size, &mtime, &hash, err)) != DMR_OK)
			return st;
		int rc = try_cache(path, cache, size, mtime, hash, r_p, &st, err);
		if (rc == 0)
			return DMR_OK;
		if (rc < 0)
			return st;
		if (attempt)
			break;
		dmr_err_t berr;
		/* a large CSV takes a while to compile (seconds per GiB):
		 * say so, so that a long silence is not taken for a hang */
		if (!co->quiet && size >= (64ull << 20))
			fprintf(stderr, "note: compiling %s (%.0f MiB) into its trace cache %s\n",
				path, (double)size / (1 << 20), cache);
		st = dmr_trace_cache_build(path, cache, &berr);
		if (st == DMR_ERR_IO && !co->dir) {
			/* beside the CSV is not writable: read the CSV */
			if (!co->quiet)
				fprintf(stderr, "note: no trace cache (%s); reading the CSV\n",
					berr.msg);
			return dmr_trace_open(path, r_p, err);
		}
		if (st == DMR_ERR_PARSE)
			/* a bad CSV: stream it, so that its error comes where it
			 * would without a cache (mid-run, partial results kept) */
			return dmr_trace_open(path, r_p, err);
		if (st == DMR_ERR_INTERRUPTED)
			/* a stop request while compiling: nothing has run, nothing
			 * is written (the half-built cache is removed) */
			return dmr_err_set(err, st, "%s: nothing run", berr.msg);
		if (st != DMR_OK)
			return dmr_err_set(err, st, "%s", berr.msg);
	}
	return dmr_err_set(err, DMR_ERR_IO, "%s: changed while its trace cache %s was built", path,
			   cache);
}
