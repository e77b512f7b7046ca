/*
 * traces/trace_cache.c - the binary trace cache (trace.h: dmr_trace_open_cached,
 * dmr_trace_cache_build, dmr_trace_cache_path; FORMAT.md "Binary cache").
 *
 * A CSV trace is compiled once, by the CSV reader (so every static check
 * has passed), into compact op records (trace_impl.h "An op record (v2)");
 * later runs map the cache and decode records (trace_bin_next) instead of
 * parsing text. The pattern
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
		snprintf(why, whysz, "truncated: %zu byte%s, shorter than its header", len,
			 len == 1 ? "" : "s");
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
		snprintf(why, whysz, "layout v%u (this build reads v%u) or built on another host",
			 hd.version, TRACE_BIN_VERSION);
		return -2;
	}
	if (hd.checks != TRACE_BIN_CHECKS) {
		snprintf(why, whysz,
			 "built by a reader with checks revision %u (this build's is %u: a "
			 "check was added since)",
			 hd.checks, TRACE_BIN_CHECKS);
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
	    hd.table_off + 8 * hd.nslices + TRACE_BIN_TAIL != len) {
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

/* Map path read-only, for the checks of its header, its slice table and
 * its first slices (trace_bin_check); the records are then read with pread
 * (trace_bin_next). 0, or -1 with err set (DMR_ERR_IO). *fd_p: the file,
 * open (the caller closes it; -1 when the file is empty). */
static int map_file(const char *path, int *fd_p, void **map_p, size_t *len_p, dmr_err_t *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*fd_p = -1;
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
	if (m == MAP_FAILED) {
		dmr_err_set(err, DMR_ERR_IO, "%s: mmap: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*fd_p = fd;
	*map_p = m;
	*len_p = (size_t)st.st_size;
	return 0;
}

/* Undo map_file. */
static void unmap_file(int fd, void *map, size_t len)
{
	if (map)
		munmap(map, len);
	if (fd >= 0)
		close(fd);
}

dmr_status_t dmr_trace_open_cache_file(const char *path, dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	void *map;
	size_t len;
	char why[200];
	int fd;

	if (map_file(path, &fd, &map, &len, err))
		return DMR_ERR_IO;
	if (trace_bin_check(map, len, why, sizeof(why)) != 0) {
		unmap_file(fd, map, len);
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: trace cache %s", path, why);
	}
	return dmr_trace_open_bin(path, NULL, fd, map, len, r_p, err);
}

/* ---- op records (trace_impl.h "An op record (v2)") --------------------- */

static int fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

#define PUT(p, v)                                                                                  \
	do {                                                                                       \
		__typeof__(v) v_ = (v);                                                            \
		memcpy((p), &v_, sizeof(v_));                                                      \
		(p) += sizeof(v_);                                                                 \
	} while (0)
#define GET(p, v)                                                                                  \
	do {                                                                                       \
		memcpy(&(v), (p), sizeof(v));                                                      \
		(p) += sizeof(v);                                                                  \
	} while (0)

/* 1 when o holds only what the compact record stores (the rest at its
 * defaults, as every op the CSV reader returns). */
static int op_compact(const dmr_trace_op_t *o)
{
	if (o->dep.op == -1 ? o->dep.field != 0 || o->dep.lit != 0
			    : o->dep.op < 0 || o->dep.op > UINT8_MAX || o->dep.lit != 0)
		return 0;
	switch (o->guard.kind) {
	case DMR_TGUARD_NONE:
		if (o->guard.op != -1 || o->guard.f || o->guard.f2)
			return 0;
		break;
	case DMR_TGUARD_PRESENT:
		if (o->guard.f || o->guard.f2)
			return 0;
		/* fall through */
	case DMR_TGUARD_LESS:
		if (o->guard.op < 0 || o->guard.op > UINT8_MAX)
			return 0;
		break;
	default:
		return 0;
	}
	for (uint32_t a = 0; a < o->nacts; a++) {
		const dmr_trace_val_t *v = &o->acts[a].val;
		if (v->op == -1 ? v->field != 0 : v->op < 0 || v->lit != 0)
			return 0;
	}
	return 1;
}

size_t trace_bin_put_op(unsigned char *out, const dmr_trace_op_t *o)
{
	unsigned char *p = out + TRACE_BIN_OP_HEAD;
	uint8_t f = 0;

	if (o->nacts > DMR_TRACE_MAX_ACTS)
		return 0;
	out[0] = o->kind;
	out[1] = o->table;
	memcpy(out + 2, &o->round, 2);
	out[5] = o->nacts;
	if (!op_compact(o)) {
		out[4] = BIN_F_RAW;
		memcpy(p, o, TRACE_BIN_OP_BYTES);
		p += TRACE_BIN_OP_BYTES;
		memcpy(p, o->acts, o->nacts * sizeof(dmr_trace_act_t));
		return (size_t)(p - out) + o->nacts * sizeof(dmr_trace_act_t);
	}
	if (fits32(o->key)) {
		PUT(p, (int32_t)o->key);
	} else {
		f |= BIN_F_KEY64;
		PUT(p, o->key);
	}
	if (o->count != 1) {
		f |= BIN_F_COUNT;
		PUT(p, o->count);
	}
	if (o->dep.op >= 0) {
		f |= BIN_F_DEP;
		*p++ = (uint8_t)o->dep.op;
		PUT(p, o->dep.field);
	}
	if (o->lo || o->hi) {
		f |= BIN_F_RANGE;
		if (fits32(o->lo) && fits32(o->hi)) {
			PUT(p, (int32_t)o->lo);
			PUT(p, (int32_t)o->hi);
		} else {
			f |= BIN_F_RANGE64;
			PUT(p, o->lo);
			PUT(p, o->hi);
		}
	}
	if (o->guard.kind == DMR_TGUARD_PRESENT) {
		f |= BIN_F_GPRESENT;
		*p++ = (uint8_t)o->guard.op;
	} else if (o->guard.kind == DMR_TGUARD_LESS) {
		f |= BIN_F_GLESS;
		*p++ = (uint8_t)o->guard.op;
		PUT(p, o->guard.f);
		PUT(p, o->guard.f2);
	}
	for (uint32_t a = 0; a < o->nacts; a++) {
		const dmr_trace_act_t *ac = &o->acts[a];
		*p++ = ac->kind;
		if (ac->val.op >= 0) {
			*p++ = BIN_A_REF;
			PUT(p, ac->field);
			PUT(p, ac->val.op);
			PUT(p, ac->val.field);
		} else if (fits32(ac->val.lit)) {
			*p++ = BIN_A_LIT32;
			PUT(p, ac->field);
			PUT(p, (int32_t)ac->val.lit);
		} else {
			*p++ = BIN_A_LIT64;
			PUT(p, ac->field);
			PUT(p, ac->val.lit);
		}
	}
	out[4] = f;
	return (size_t)(p - out);
}

static const dmr_trace_act_t act_zero;

/* trace_bin_get_op; zero_unused 0 leaves the actions past nacts as they
 * were (dmr_trace_rec_decode). */
static inline __attribute__((always_inline)) const unsigned char *
bin_get_op(const unsigned char *p, dmr_trace_op_t *o, int zero_unused)
{
	uint8_t f = p[4], na = p[5];

	if (na > DMR_TRACE_MAX_ACTS)
		return NULL;
	/* field by field, and the actions one by one: a struct copy of the
	 * defaults or a memset of the actions becomes `rep stos`, 40 % of the
	 * reader's cycles (perf, TPC-C 200 k) */
	o->count = 1;
	o->dep.lit = 0;
	o->dep.op = -1;
	o->dep.field = 0;
	o->lo = o->hi = 0;
	o->guard.kind = DMR_TGUARD_NONE;
	o->guard.op = -1;
	o->guard.f = o->guard.f2 = 0;
	/* the unused actions, by a jump into straight stores: the loop was
	 * 19 of this call's 104 instructions per op (callgrind, TPC-C 200 k) */
	_Static_assert(DMR_TRACE_MAX_ACTS == 4, "trace_bin_get_op: one case per action");
	switch (zero_unused ? na : DMR_TRACE_MAX_ACTS) {
	case 0:
		memcpy(&o->acts[0], &act_zero, sizeof(act_zero));
		/* fall through */
	case 1:
		memcpy(&o->acts[1], &act_zero, sizeof(act_zero));
		/* fall through */
	case 2:
		memcpy(&o->acts[2], &act_zero, sizeof(act_zero));
		/* fall through */
	case 3:
		memcpy(&o->acts[3], &act_zero, sizeof(act_zero));
		break;
	default:
		break;
	}
	if (f & BIN_F_RAW) {
		memcpy(o, p + TRACE_BIN_OP_HEAD, TRACE_BIN_OP_BYTES);
		p += TRACE_BIN_OP_HEAD + TRACE_BIN_OP_BYTES;
		if (o->nacts != na)
			return NULL;
		memcpy(o->acts, p, na * sizeof(dmr_trace_act_t));
		return p + na * sizeof(dmr_trace_act_t);
	}
	o->kind = p[0];
	o->table = p[1];
	memcpy(&o->round, p + 2, 2);
	o->nacts = na;
	p += TRACE_BIN_OP_HEAD;
	if (f & BIN_F_KEY64) {
		GET(p, o->key);
	} else {
		int32_t k;
		GET(p, k);
		o->key = k;
	}
	if (f & (BIN_F_COUNT | BIN_F_DEP | BIN_F_RANGE | BIN_F_GPRESENT | BIN_F_GLESS)) {
		if (f & BIN_F_COUNT)
			GET(p, o->count);
		if (f & BIN_F_DEP) {
			o->dep.op = *p++;
			GET(p, o->dep.field);
		}
		if (f & BIN_F_RANGE) {
			if (f & BIN_F_RANGE64) {
				GET(p, o->lo);
				GET(p, o->hi);
			} else {
				int32_t lo, hi;
				GET(p, lo);
				GET(p, hi);
				o->lo = lo;
				o->hi = hi;
			}
		}
		if (f & (BIN_F_GPRESENT | BIN_F_GLESS)) {
			o->guard.kind = f & BIN_F_GLESS ? DMR_TGUARD_LESS : DMR_TGUARD_PRESENT;
			o->guard.op = *p++;
			if (f & BIN_F_GLESS) {
				GET(p, o->guard.f);
				GET(p, o->guard.f2);
			}
		}
	}
	for (uint32_t a = 0; a < na; a++) {
		dmr_trace_act_t *ac = &o->acts[a];
		uint8_t mode = p[1];
		ac->kind = p[0];
		memcpy(&ac->field, p + 2, 2);
		p += 4;
		if (mode == BIN_A_LIT32) {
			int32_t v;
			GET(p, v);
			ac->val.lit = v;
			ac->val.op = -1;
			ac->val.field = 0;
		} else if (mode == BIN_A_REF) {
			ac->val.lit = 0;
			GET(p, ac->val.op);
			GET(p, ac->val.field);
		} else if (mode == BIN_A_LIT64) {
			GET(p, ac->val.lit);
			ac->val.op = -1;
			ac->val.field = 0;
		} else {
			return NULL;
		}
	}
	return p;
}

const unsigned char *trace_bin_get_op(const unsigned char *p, dmr_trace_op_t *o)
{
	return bin_get_op(p, o, 1);
}

/* Bytes of a compact op record's head, key and the fields its flags
 * announce (not its actions), by flags (BIN_F_RAW clear): trace_bin_get_op's
 * reads, counted once at load time (trace_bin_op_len's table). */
static uint8_t bin_fixed_len[128];

static __attribute__((constructor)) void bin_fixed_len_init(void)
{
	for (unsigned f = 0; f < 128; f++) {
		size_t n = TRACE_BIN_OP_HEAD + (f & BIN_F_KEY64 ? 8 : 4);
		if (f & BIN_F_COUNT)
			n += sizeof(uint32_t);
		if (f & BIN_F_DEP)
			n += 1 + sizeof(uint16_t);
		if (f & BIN_F_RANGE)
			n += f & BIN_F_RANGE64 ? 2 * sizeof(int64_t) : 2 * sizeof(int32_t);
		if (f & BIN_F_GLESS)
			n += 1 + 2 * sizeof(uint16_t);
		else if (f & BIN_F_GPRESENT)
			n += 1;
		bin_fixed_len[f] = (uint8_t)n;
	}
}

size_t trace_bin_op_len(const unsigned char *p)
{
	uint8_t f = p[4], na = p[5];

	if (na > DMR_TRACE_MAX_ACTS)
		return 0;
	if (f & BIN_F_RAW) /* the whole op, then its actions (trace_bin_get_op) */
		return p[TRACE_BIN_OP_HEAD + offsetof(dmr_trace_op_t, nacts)] != na
			   ? 0
			   : TRACE_BIN_OP_HEAD + TRACE_BIN_OP_BYTES + na * sizeof(dmr_trace_act_t);
	size_t n = bin_fixed_len[f];
	for (uint32_t a = 0; a < na; a++) {
		uint8_t mode = p[n + 1];
		if (mode > BIN_A_LIT64)
			return 0;
		n += mode == BIN_A_LIT64 ? 12 : 8;
	}
	return n;
}

/* ---- reading a cache --------------------------------------------------- */

/* The records are read with pread into a window of whole slices, not
 * through the mapping: on this project's test hosts (PVM guests) the first
 * user-space touch of each mapped page of the page cache traps, and
 * reading 156 MiB through mmap took 0.10-0.12 CPU-s against 0.04 with
 * read(2) (docs/PERFORMANCE.md "Trace reader, third round"); elsewhere the
 * copy from the page cache costs about what the mapping's page faults did.
 * The window holds at most BIN_WIN_READ bytes of new slices after the
 * unread rest of the previous ones (under TRACE_BIN_TXN_MAX), then
 * TRACE_BIN_TXN_MAX zero bytes, so that decoding a damaged record cannot
 * read past it. Each slice is verified against the slice table as it
 * arrives, while it is in cache. RSS stays the window's size whatever the
 * trace's length. */
#define BIN_WIN_READ (2u * TRACE_BIN_SLICE)
#define BIN_WIN_BYTES (BIN_WIN_READ + 2 * TRACE_BIN_TXN_MAX)

/* What to do about a damaged cache (one given as the trace has no CSV
 * beside it to be rebuilt from). */
static const char *bin_advice(const dmr_trace_reader_t *r)
{
	return r->bin_direct ? "it was given as the trace: rebuild it by running the CSV it was "
			       "compiled from"
			     : "remove it (it is rebuilt) or run with --no-trace-cache";
}

/* The message of a damage found while reading: the trace as given
 * (r->path), the cache file, what is wrong, and what to do. */
#define BIN_DAMAGE(r, fmt, ...)                                                                    \
	dmr_err_set(&(r)->err, DMR_ERR_PARSE, "%s: trace cache %s " fmt "; %s", (r)->path,         \
		    (r)->bin_cache, __VA_ARGS__, bin_advice(r))

static dmr_status_t bin_bad(dmr_trace_reader_t *r, dmr_err_t *err)
{
	r->status = BIN_DAMAGE(r, "corrupt: bad record at byte %zu", r->bin_pos);
	return trace_rd_report(r, err);
}

/* Read n bytes at file offset off into b: 0, or -1 with r->status set. */
static int bin_pread(dmr_trace_reader_t *r, unsigned char *b, size_t n, size_t off)
{
	while (n) {
		ssize_t k = pread(r->bin_fd, b, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r->status = k < 0 ? dmr_err_set(&r->err, DMR_ERR_IO,
							"%s: trace cache %s: read at byte %zu: %s",
							r->path, r->bin_cache, off, strerror(errno))
					  : BIN_DAMAGE(r, "truncated at byte %zu", off);
			return -1;
		}
		b += k;
		n -= (size_t)k;
		off += (size_t)k;
	}
	return 0;
}

/* Make the window hold the file's bytes [bin_pos, bin_pos +
 * TRACE_BIN_TXN_MAX), or up to the records' end: keep the unread rest,
 * read whole slices after it, verify each. 0, or -1 with r->status set. */
static int bin_fill(dmr_trace_reader_t *r)
{
	const size_t base = sizeof(trace_bin_head_t);
	size_t wend = r->bin_woff + r->bin_wlen;
	size_t want = r->bin_pos + TRACE_BIN_TXN_MAX;

	if (want > r->bin_end)
		want = r->bin_end;
	if (r->bin_pos >= r->bin_woff && want <= wend)
		return 0;
	if (r->bin_pos >= r->bin_woff && r->bin_pos <= wend) {
		/* the rest of the window (under TRACE_BIN_TXN_MAX bytes) to its
		 * start; wend is where a slice starts (or the records end) */
		size_t keep = wend - r->bin_pos;
		memmove(r->bin, r->bin + (r->bin_pos - r->bin_woff), keep);
		r->bin_woff = r->bin_pos;
		r->bin_wlen = keep;
	} else { /* after a rewind: from the start of bin_pos's slice */
		r->bin_woff = base + (r->bin_pos - base) / TRACE_BIN_SLICE * TRACE_BIN_SLICE;
		r->bin_wlen = 0;
	}
	for (size_t got = 0; got < BIN_WIN_READ;) {
		size_t a = r->bin_woff + r->bin_wlen;
		if (a >= r->bin_end)
			break;
		uint64_t k = (a - base) / TRACE_BIN_SLICE;
		size_t n = r->bin_end - a < TRACE_BIN_SLICE ? r->bin_end - a : TRACE_BIN_SLICE;
		unsigned char *b = r->bin + r->bin_wlen;
		if (bin_pread(r, b, n, a))
			return -1;
		if (sum_bytes(b, n) != r->bin_sums[k]) {
			r->status =
			    BIN_DAMAGE(r, "corrupt: checksum mismatch in bytes %zu..%zu", a, a + n);
			return -1;
		}
		r->bin_wlen += n;
		got += n;
	}
	memset(r->bin + r->bin_wlen, 0, TRACE_BIN_TXN_MAX);
	return 0;
}

/* The next transaction from the binary cache (records written by
 * dmr_trace_cache_build from transactions that passed every check). The
 * lengths are re-checked against the window (once per op), so a damaged
 * file cannot make the reader overrun it. */
dmr_status_t trace_bin_next(dmr_trace_reader_t *r, dmr_trace_txn_t *txn, dmr_err_t *err)
{
	trace_bin_txn_t bt;

	/* the window holds every byte this transaction can span, verified */
	if (bin_fill(r))
		return trace_rd_report(r, err);
	const unsigned char *p = r->bin + (r->bin_pos - r->bin_woff);
	size_t data_end =
	    r->bin_woff + r->bin_wlen < r->bin_end ? r->bin_woff + r->bin_wlen : r->bin_end;
	const unsigned char *end = r->bin + (data_end - r->bin_woff);
	const unsigned char *safe = r->bin + r->bin_wlen + TRACE_BIN_TXN_MAX - TRACE_BIN_OP_WORST;

	if ((size_t)(end - p) < sizeof(bt)) {
		if (r->ntxns < r->bin_ntxns || p != end) {
			r->status = BIN_DAMAGE(r, "truncated at byte %zu", r->bin_pos);
			return trace_rd_report(r, err);
		}
		return DMR_EOF;
	}
	memcpy(&bt, p, sizeof(bt));
	p += sizeof(bt);
	if (bt.nops == 0 || bt.nops > DMR_TRACE_MAX_OPS)
		return bin_bad(r, err);
	txn->id = bt.id;
	txn->xv = bt.xv;
	txn->type = bt.type;
	txn->line = bt.line;
	txn->nops = bt.nops;
	for (uint32_t i = 0; i < bt.nops; i++) {
		if (p > safe || !(p = trace_bin_get_op(p, &txn->ops[i])))
			return bin_bad(r, err);
	}
	size_t pos = r->bin_woff + (size_t)(p - r->bin);
	pos = (pos + 7) & ~(size_t)7;
	if (pos > r->bin_end)
		return bin_bad(r, err);
	r->bin_pos = pos;
	r->ntxns++;
	r->rows += bt.nops;
	return DMR_OK;
}

dmr_status_t trace_bin_next_rec(dmr_trace_reader_t *r, dmr_trace_rec_t *rec, dmr_err_t *err)
{
	trace_bin_txn_t bt;

	if (bin_fill(r))
		return trace_rd_report(r, err);
	const unsigned char *p0 = r->bin + (r->bin_pos - r->bin_woff), *p = p0;
	size_t data_end =
	    r->bin_woff + r->bin_wlen < r->bin_end ? r->bin_woff + r->bin_wlen : r->bin_end;
	const unsigned char *end = r->bin + (data_end - r->bin_woff);
	const unsigned char *safe = r->bin + r->bin_wlen + TRACE_BIN_TXN_MAX - TRACE_BIN_OP_WORST;

	if ((size_t)(end - p) < sizeof(bt)) {
		if (r->ntxns < r->bin_ntxns || p != end) {
			r->status = BIN_DAMAGE(r, "truncated at byte %zu", r->bin_pos);
			return trace_rd_report(r, err);
		}
		return DMR_EOF;
	}
	memcpy(&bt, p, sizeof(bt));
	p += sizeof(bt);
	if (bt.nops == 0 || bt.nops > DMR_TRACE_MAX_OPS)
		return bin_bad(r, err);
	for (uint32_t i = 0; i < bt.nops; i++) {
		size_t n;
		if (p > safe || !(n = trace_bin_op_len(p)))
			return bin_bad(r, err);
		p += n;
	}
	size_t pos = r->bin_woff + (size_t)(p - r->bin);
	pos = (pos + 7) & ~(size_t)7;
	if (pos > r->bin_end)
		return bin_bad(r, err);
	rec->bytes = p0;
	rec->len = (size_t)(p - p0);
	rec->nops = bt.nops;
	rec->id = bt.id;
	r->bin_pos = pos;
	r->ntxns++;
	r->rows += bt.nops;
	return DMR_OK;
}

/* Start reading the records from their first one (open, rewind). */
void trace_bin_rewind(dmr_trace_reader_t *r)
{
	r->bin_pos = r->bin_data;
	r->bin_woff = r->bin_wlen = 0; /* read (and verified) again */
}

void trace_bin_close(dmr_trace_reader_t *r)
{
	if (r->bin_fd >= 0)
		close(r->bin_fd);
	free(r->bin);
	free(r->bin_sums);
	free(r->bin_cache);
}

dmr_status_t dmr_trace_open_bin(const char *name, const char *cache, int fd, void *map, size_t len,
				dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	dmr_trace_reader_t *r = calloc(1, sizeof(*r));
	trace_bin_head_t hd;

	memcpy(&hd, map, sizeof(hd));
	if (r) {
		r->bin_fd = fd;
		r->path = strdup(name);
		r->bin_cache = strdup(cache ? cache : name);
		r->bin_direct = cache == NULL;
		r->bin = malloc(BIN_WIN_BYTES);
		r->bin_sums = malloc(hd.nslices ? 8 * hd.nslices : 8);
	}
	if (!r || !r->path || !r->bin_cache || !r->bin || !r->bin_sums) {
		if (r) {
			free(r->path);
			free(r->bin_cache);
			free(r->bin);
			free(r->bin_sums);
		}
		free(r);
		unmap_file(fd, map, len);
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", name);
	}
	memcpy(&r->hdr, (const unsigned char *)map + sizeof(hd), sizeof(r->hdr));
	memcpy(r->bin_sums, (const unsigned char *)map + hd.table_off, 8 * hd.nslices);
	munmap(map, len); /* checked (trace_bin_check): the rest is read with pread */
	r->bin_data = sizeof(hd) + sizeof(r->hdr);
	r->bin_ntxns = hd.ntxns;
	r->file_txns = hd.ntxns; /* counted when it was compiled */
	r->bin_end = hd.table_off;
	trace_bin_rewind(r);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	*r_p = r;
	return DMR_OK;
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
	unsigned char *rec = malloc(TRACE_BIN_TXN_MAX);
	char *tmp = malloc(strlen(cache) + 16);
	bin_out_t o = {0};
	dmr_status_t st;
	int fd = -1;

	if (!t || !tmp || !rec) {
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
		/* the directory named, not the temp file's random name */
		const char *slash = strrchr(cache, '/');
		int dn = slash ? (int)(slash - cache) : 1;
		st = dmr_err_set(err, DMR_ERR_IO, "cannot create the trace cache %s in %.*s: %s",
				 cache, dn ? dn : 1, slash ? cache : ".", strerror(errno));
		goto out;
	}
	/* mkstemp's 0600: the mode the CSV's own would get (0666 less the
	 * umask), so that whoever may read the trace may read its cache */
	mode_t um = umask(0);
	umask(um);
	(void)fchmod(fd, 0666 & ~um);
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
		bt.nops = (uint16_t)t->nops;
		bt.line = t->line;
		bt.type = (uint8_t)t->type;
		if (t->nops == 0 || t->nops > DMR_TRACE_MAX_OPS || t->type > UINT8_MAX) {
			st = dmr_err_set(err, DMR_ERR_INVALID, "%s: txn %llu cannot be cached", csv,
					 (unsigned long long)t->id);
			goto out_close;
		}
		memcpy(rec, &bt, sizeof(bt));
		size_t n = sizeof(bt);
		for (uint32_t i = 0; i < t->nops; i++) {
			size_t k = trace_bin_put_op(rec + n, &t->ops[i]);
			if (k == 0) {
				st = dmr_err_set(err, DMR_ERR_INVALID,
						 "%s: txn %llu op %u cannot be cached", csv,
						 (unsigned long long)t->id, i);
				goto out_close;
			}
			n += k;
		}
		while (n % 8)
			rec[n++] = 0;
		bad |= bout(&o, rec, n);
		hd.ntxns++;
		hd.nrows += t->nops;
	}
	if (st != DMR_EOF && !bad)
		goto out_close; /* parse error: err says where */
	memcpy(hd.magic, TRACE_BIN_MAGIC, 8);
	hd.version = TRACE_BIN_VERSION;
	hd.checks = TRACE_BIN_CHECKS;
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
	{
		static const unsigned char zero[TRACE_BIN_TAIL];
		bad |= fwrite(zero, 1, sizeof(zero), o.fp) != sizeof(zero);
	}
	hd.file_bytes = hd.table_off + 8 * o.nsums + TRACE_BIN_TAIL;
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
	free(rec);
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
		/* named after the file itself, symlinks resolved: a trace given
		 * through a link and by its own name shares one cache (the
		 * link's name had given a second cache: a trial) */
		char *abs = realpath(csv, NULL);
		uint64_t h = 0x243F6A8885A308D3ull;
		if (!abs)
			return dmr_err_set(err, DMR_ERR_IO, "%s: %s", csv, strerror(errno));
		for (const char *p = abs; *p; p++)
			h = dmr_mix64(h ^ (unsigned char)*p);
		n = snprintf(out, outsz, "%s/%s-%016llx.dmrc", dir, strrchr(abs, '/') + 1,
			     (unsigned long long)h);
		free(abs);
	}
	if (n < 0 || (size_t)n >= outsz)
		return dmr_err_set(err, DMR_ERR_RANGE, "%s: cache path too long", csv);
	return DMR_OK;
}

/* Open cache if it is valid and matches the key; 1 = stale or absent
 * (rebuild), 0 = opened, -1 = refused (err and *st_p set). A directory,
 * FIFO or device in the cache's place is refused, named as the cache (a
 * trial got "mmap: No such device" for a directory; a FIFO would block). */
static int try_cache(const char *csv, const char *cache, uint64_t size, int64_t mtime,
		     uint64_t hash, dmr_trace_reader_t **r_p, dmr_status_t *st_p, dmr_err_t *err)
{
	void *map;
	size_t len;
	char why[200];
	trace_bin_head_t hd;
	struct stat sb;
	int fd;

	if (stat(cache, &sb) != 0)
		return 1;
	if (!S_ISREG(sb.st_mode)) {
		const char *what = S_ISDIR(sb.st_mode)				? "a directory"
				   : S_ISFIFO(sb.st_mode)			? "a pipe"
				   : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
										: "a socket";
		*st_p = dmr_err_set(err, DMR_ERR_INVALID,
				    "trace cache %s of %s is not a regular file (%s); remove it or "
				    "run with --no-trace-cache",
				    cache, csv, what);
		return -1;
	}
	*st_p = DMR_ERR_IO;
	if (map_file(cache, &fd, &map, &len, err))
		return -1;
	if (len >= sizeof(hd)) {
		memcpy(&hd, map, sizeof(hd));
		if (memcmp(hd.magic, TRACE_BIN_MAGIC, 8) == 0 && head_sum(&hd) == hd.head_sum &&
		    hd.version == TRACE_BIN_VERSION &&
		    (hd.src_size != size || hd.src_mtime_ns != mtime || hd.src_hash != hash)) {
			unmap_file(fd, map, len);
			return 1; /* stale: built from another version of the CSV */
		}
	}
	int rc = trace_bin_check(map, len, why, sizeof(why));
	if (rc == -2) {
		unmap_file(fd, map, len);
		return 1;
	}
	if (rc) {
		unmap_file(fd, map, len);
		*st_p = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: trace cache of %s is %s; remove it (it is rebuilt) or run with "
		    "--no-trace-cache",
		    cache, csv, why);
		return -1;
	}
	*st_p = dmr_trace_open_bin(csv, cache, fd, map, len, r_p, err);
	return *st_p == DMR_OK ? 0 : -1;
}

dmr_status_t dmr_trace_open_cached(const char *path, const dmr_trace_cache_opts_t *co,
				   dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	char cache[4096];
	uint64_t size, hash;
	int64_t mtime;
	dmr_status_t st;

	if (!co || co->off) {
		/* a cache given as the trace is read as it is: say so, as
		 * --no-trace-cache asked for the CSV (a trial took the silence
		 * for the option having no effect) */
		if (co && !co->quiet && dmr_trace_check_file(path, err) == DMR_OK &&
		    is_cache_file(path))
			fprintf(stderr,
				"note: %s is a trace cache, given as the trace: read as it is "
				"(--no-trace-cache concerns the cache of a CSV)\n",
				path);
		return dmr_trace_open(path, r_p, err);
	}
	if ((st = dmr_trace_check_file(path, err)) != DMR_OK)
		return st;
	/* a path in /dev or /proc (/dev/stdin redirected from a file): read as
	 * it is; its cache would go into /dev, named after the alias, not the
	 * file (a trial found /dev/stdin.dmrc) */
	if (strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0)
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
		if (co->nobuild)
			return dmr_trace_open(path, r_p, err);
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
			/* a bad CSV: compiling it met the bad row (file, line,
			 * field), so the run is refused now, before anything is
			 * run or --out touched (a trial of session 13: streamed,
			 * the same row stopped the run mid-way, after --force had
			 * moved the earlier results aside). Without the cache
			 * (--no-trace-cache) the CSV is streamed and the row is
			 * met mid-run. */
			return dmr_err_set(err, st, "%s", berr.msg);
		if (st == DMR_ERR_INTERRUPTED)
			/* a stop request while compiling: nothing has run, nothing
			 * is written (the half-built cache is removed) */
			return dmr_err_set(err, st, "%s: nothing run", berr.msg);
		if (st == DMR_ERR_IO && co->dir)
			/* a directory given by --trace-cache-dir that cannot
			 * take the cache: the option named, not its temp file */
			return dmr_err_set(err, st, "option --trace-cache-dir %s: %s", co->dir,
					   berr.msg);
		if (st != DMR_OK)
			return dmr_err_set(err, st, "%s", berr.msg);
	}
	return dmr_err_set(err, DMR_ERR_IO, "%s: changed while its trace cache %s was built", path,
			   cache);
}

dmr_status_t dmr_trace_rec_decode(const void *rec, size_t len, dmr_trace_txn_t *txn)
{
	const unsigned char *p = rec, *end = p + len;
	trace_bin_txn_t bt;

	if (len < sizeof(bt))
		return DMR_ERR_PARSE;
	memcpy(&bt, p, sizeof(bt));
	p += sizeof(bt);
	if (bt.nops == 0 || bt.nops > DMR_TRACE_MAX_OPS)
		return DMR_ERR_PARSE;
	txn->id = bt.id;
	txn->xv = bt.xv;
	txn->type = bt.type;
	txn->line = bt.line;
	txn->nops = bt.nops;
	/* bytes that dmr_trace_next_rec checked: each op's record lies within
	 * len, so trace_bin_get_op reads nothing past it */
	for (uint32_t i = 0; i < bt.nops; i++)
		if (p >= end || !(p = bin_get_op(p, &txn->ops[i], 0)))
			return DMR_ERR_PARSE;
	return p == end ? DMR_OK : DMR_ERR_PARSE;
}
