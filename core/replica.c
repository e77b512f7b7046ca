/*
 * core/replica.c - replica and lock-word invariants (replica.h).
 */
#include "replica.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static void fail(dmr_replica_result_t *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(dmr_replica_result_t *res, const char *fmt, ...)
{
	if (res->failures++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(res->first_failure, sizeof(res->first_failure), fmt, ap);
		va_end(ap);
	}
}

/* Records [s0, s1) of table t, record by record: per slot and replica
 * (primary first) its lock word, then for a backup its bytes 8.. against
 * the primary's. Every finding is a failure, named. bk[j]: replica j's
 * (dmr_layout_replicas order) record s0. */
static void check_slots(const dmr_layout_t *l, const uint8_t *const *bk, uint32_t t, uint64_t s0,
			uint64_t s1, dmr_replica_result_t *res)
{
	const dmr_layout_table_t *lt = &l->t[t];
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	uint32_t nr = dmr_layout_replicas(l, t, r);
	for (uint64_t s = s0; s < s1; s++) {
		uint64_t off = (s - s0) * lt->rec_bytes;
		for (uint32_t j = 0; j < nr; j++) {
			uint64_t lock;
			memcpy(&lock, bk[j] + off, 8);
			res->checks++;
			if (lock & l->lock_busy)
				fail(res,
				     "table %s slot %" PRIu64 " on MN %u (%s): lock word "
				     "0x%" PRIx64 " is held after the run",
				     l->names[t], s, r[j], j ? "backup" : "primary", lock);
			if (j == 0)
				continue;
			res->checks++;
			const uint8_t *p = bk[0] + off + 8, *b = bk[j] + off + 8;
			if (memcmp(p, b, lt->rec_bytes - 8) != 0) {
				uint32_t k = 0;
				while (p[k] == b[k])
					k++;
				fail(res,
				     "table %s slot %" PRIu64 ": backup on MN %u differs from "
				     "its primary on MN %u (record byte %u: 0x%02x != "
				     "0x%02x)",
				     l->names[t], s, r[j], r[0], 8 + k, b[k], p[k]);
			}
		}
	}
}

/* Which pages of [p, p + n) were ever touched: bit 0 of vec[i] for the
 * i-th page from the one holding p, by mincore(2). Asked only when the
 * system has no swap (sysinfo totalswap 0): a page of a private anonymous
 * mapping (the shm and sim MN regions) that is not resident then was never
 * written and reads as zero; with swap a written page can be out of memory.
 * Returns 0 when it cannot tell (a range not mapped that way, or more
 * pages than cap): then every page counts as touched. */
static int touched_pages(const uint8_t *p, uint64_t n, long pg, unsigned char *vec, size_t cap)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	uintptr_t end = ((uintptr_t)p + n + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
	size_t pages = (end - a) / (uintptr_t)pg;
	return pages <= cap && mincore((void *)a, pages * (size_t)pg, vec) == 0;
}

/* 1 if a page holding a byte of [p + x0, p + x1) was touched (vec as
 * touched_pages(p, ...) filled it). */
static inline int touched(const uint8_t *p, const unsigned char *vec, long pg, uint64_t x0,
			  uint64_t x1)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	size_t i0 = ((uintptr_t)p + x0 - a) / (uintptr_t)pg;
	size_t i1 = ((uintptr_t)p + x1 - 1 - a) / (uintptr_t)pg;
	for (size_t i = i0; i <= i1; i++)
		if (vec[i] & 1)
			return 1;
	return 0;
}

/* Records per block of the fast path: about 1 MiB of records. */
#define BLOCK_BYTES (1u << 20)
#define VEC_PAGES (BLOCK_BYTES / 4096 + 2)

/* 1 if records [s0, s1) of table t hold nothing to report: every lock
 * word 0 on the primary and every backup byte-identical to the primary
 * (lock words included, so theirs are 0 too). Compared a primary page at
 * a time; a page untouched on the primary and on the backup (zero on both)
 * is equal without reading it, a lock word on an untouched primary page is
 * 0 without reading it (reading would map every page of the region).
 * b[j]: replica j's record s0; hint: b[] point into raw regions. */
static int block_clean(const dmr_layout_t *l, const uint8_t *const *b, uint32_t t, uint64_t s0,
		       uint64_t s1, long pg, int hint)
{
	const dmr_layout_table_t *lt = &l->t[t];
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	uint32_t nr = dmr_layout_replicas(l, t, r);
	uint64_t len = (s1 - s0) * lt->rec_bytes;
	if (len > BLOCK_BYTES) /* one record over a block: no page walk */
		hint = 0;
	unsigned char vec[1 + DMR_LAYOUT_MAX_BACKUPS][VEC_PAGES];
	for (uint32_t j = 0; j < nr; j++)
		hint = hint && touched_pages(b[j], len, pg, vec[j], VEC_PAGES);
	uint64_t step = hint ? (uint64_t)pg : len;
	uint64_t x = hint ? (uint64_t)pg - ((uintptr_t)b[0] & (uintptr_t)(pg - 1)) : len;
	if (x > len)
		x = len;
	uint64_t locks = 0, k = 0; /* k: the next record whose lock word is due */
	for (uint64_t x0 = 0; x0 < len; x0 = x, x = x + step < len ? x + step : len) {
		int pt = !hint || touched(b[0], vec[0], pg, x0, x);
		uint64_t k1 =
		    (x + lt->rec_bytes - 1) / lt->rec_bytes; /* records starting before x */
		if (pt) {
			for (; k < k1; k++) {
				uint64_t w;
				memcpy(&w, b[0] + k * lt->rec_bytes, 8);
				locks |= w & l->lock_busy;
			}
		} else if (k < k1 && (k1 - 1) * lt->rec_bytes + 8 > x) {
			/* a lock word running on into the next page */
			uint64_t w;
			memcpy(&w, b[0] + (k1 - 1) * lt->rec_bytes, 8);
			locks |= w & l->lock_busy;
		}
		k = k1;
		for (uint32_t j = 1; j < nr; j++)
			if ((pt || !hint || touched(b[j], vec[j], pg, x0, x)) &&
			    memcmp(b[0] + x0, b[j] + x0, x - x0) != 0)
				return 0;
	}
	return locks == 0;
}

/* Version tuples (l->vcells > 0; layout.h): the chain of the record at
 * rec (table t, slot s, on its primary) is idle and totally ordered: every
 * valid vcell's anchor equals its word (none half-written), no two valid
 * vcells share a timestamp, and each version's base is the timestamp of
 * the version before it in timestamp order (the writer read the latest
 * committed version: no lost update; the oldest one kept is not checked,
 * its predecessor was overwritten). */
static void check_chain(const dmr_layout_t *l, uint32_t t, uint64_t s, const uint8_t *rec,
			dmr_replica_result_t *res)
{
	uint32_t pb = l->t[t].payload_bytes, nv = 0;
	uint64_t ts[DMR_CVT_MAX_VCELLS], base[DMR_CVT_MAX_VCELLS];
	res->chains++;
	for (uint32_t k = 0; k < l->vcells; k++) {
		const uint8_t *vc = rec + dmr_cvt_vcell_off(pb, k);
		uint64_t w, b, a;
		memcpy(&w, vc, 8);
		if (!(w & DMR_CVT_VALID))
			continue;
		memcpy(&b, vc + 8, 8);
		memcpy(&a, vc + 16 + pb, 8);
		if (a != w)
			fail(res,
			     "table %s slot %" PRIu64 " vcell %u: anchor 0x%" PRIx64
			     " != word 0x%" PRIx64 " (a version half-written after the run)",
			     l->names[t], s, k, a, w);
		/* insertion by timestamp */
		uint32_t j = nv++;
		while (j > 0 && ts[j - 1] > (w & DMR_CVT_TS_MASK)) {
			ts[j] = ts[j - 1];
			base[j] = base[j - 1];
			j--;
		}
		ts[j] = w & DMR_CVT_TS_MASK;
		base[j] = b;
	}
	for (uint32_t j = 1; j < nv; j++) {
		if (ts[j] == ts[j - 1])
			fail(res,
			     "table %s slot %" PRIu64 ": two versions with timestamp %" PRIu64
			     " (the version chain is not totally ordered)",
			     l->names[t], s, ts[j]);
		else if (base[j] != ts[j - 1])
			fail(res,
			     "table %s slot %" PRIu64 ": version %" PRIu64
			     " was built from version %" PRIu64
			     ", not from the latest committed before it, %" PRIu64
			     " (a lost update)",
			     l->names[t], s, ts[j], base[j], ts[j - 1]);
	}
}

/* check_chain for records [s0, s1) of table t on its primary (b: its
 * record s0), skipping the pages never touched (zero: no valid vcell) when
 * hint. */
static void check_chains(const dmr_layout_t *l, const uint8_t *b, uint32_t t, uint64_t s0,
			 uint64_t s1, long pg, int hint, dmr_replica_result_t *res)
{
	const dmr_layout_table_t *lt = &l->t[t];
	uint64_t len = (s1 - s0) * lt->rec_bytes;
	unsigned char vec[VEC_PAGES];
	hint = hint && len <= BLOCK_BYTES && touched_pages(b, len, pg, vec, VEC_PAGES);
	for (uint64_t s = s0; s < s1; s++) {
		uint64_t x0 = (s - s0) * lt->rec_bytes;
		if (hint && !touched(b, vec, pg, x0, x0 + lt->rec_bytes)) {
			res->chains++;
			continue;
		}
		check_chain(l, t, s, b + x0, res);
	}
}

/* Where the checks read the MN regions: raw (m[], mapped in this
 * process) or, with a backend that writes its initial image lazily,
 * through DMR_BE_CTL_MN_READ, a block at a time into buf[], skipping the
 * ranges no WR has written (they hold the initial image, the same on every
 * replica: dmr_layout_load_mn loads a table alike on its primary and its
 * backups). */
typedef struct rsrc {
	const uint8_t *m[DMR_LAYOUT_MAX_MNS]; /* raw; NULL with be */
	dmr_be_t *be;
	uint8_t *buf[1 + DMR_LAYOUT_MAX_BACKUPS]; /* be: cap bytes each */
	uint64_t cap;
	dmr_err_t *err;
} rsrc_t;

/* 1 when a byte of MN mn's [off, off + len) may differ from the initial
 * image (always, raw), 0 when none can; -1 on a backend error (err set). */
static int rs_written(rsrc_t *rs, uint32_t mn, uint64_t off, uint64_t len)
{
	if (!rs->be)
		return 1;
	dmr_be_mn_read_t rd = {.mn = mn, .off = off, .len = len, .buf = NULL};
	if (dmr_be_control(rs->be, DMR_BE_CTL_MN_READ, &rd, rs->err) != DMR_OK)
		return -1;
	return rd.written;
}

/* MN mn's bytes [off, off + len) (len <= rs->cap with a backend): into
 * the raw region, or read into buf[j]. NULL on a backend error. */
static const uint8_t *rs_get(rsrc_t *rs, uint32_t j, uint32_t mn, uint64_t off, uint64_t len)
{
	if (!rs->be)
		return rs->m[mn] + off;
	dmr_be_mn_read_t rd = {.mn = mn, .off = off, .len = len, .buf = rs->buf[j]};
	if (dmr_be_control(rs->be, DMR_BE_CTL_MN_READ, &rd, rs->err) != DMR_OK)
		return NULL;
	return rs->buf[j];
}

/* The n 8-byte words at byte offset base of MN mn (table t's lock words
 * apart, per = 1 and apart set, or its cell lock words, per = cells per
 * record): fails each one with a bit of busy set, named as the whole-table
 * walk named it; a range never written is all 0 (no word was ever taken)
 * and only counted. DMR_ERR_IO on a backend read error (rs->err set). */
static dmr_status_t check_words(rsrc_t *rs, const dmr_layout_t *l, uint32_t t, uint32_t mn,
				int backup, uint64_t base, uint64_t n, uint64_t busy, uint32_t per,
				int apart, dmr_replica_result_t *res)
{
	const uint64_t chunk = rs->be ? rs->cap / 8 : n;
	for (uint64_t k0 = 0; k0 < n; k0 += chunk) {
		uint64_t k1 = k0 + chunk < n ? k0 + chunk : n;
		int w = rs_written(rs, mn, base + 8 * k0, 8 * (k1 - k0));
		if (w < 0)
			return DMR_ERR_IO;
		res->checks += k1 - k0;
		if (!w)
			continue;
		const uint8_t *b = rs_get(rs, 0, mn, base + 8 * k0, 8 * (k1 - k0));
		if (!b)
			return DMR_ERR_IO;
		for (uint64_t k = k0; k < k1; k++) {
			uint64_t v;
			memcpy(&v, b + 8 * (k - k0), 8);
			if (!(v & busy))
				continue;
			if (apart)
				fail(res,
				     "table %s slot %" PRIu64 " on MN %u (%s): lock word "
				     "0x%" PRIx64 " (apart, offset %" PRIu64
				     ") is held after the run",
				     l->names[t], k, mn, backup ? "backup" : "primary", v,
				     base + 8 * k);
			else
				fail(res,
				     "table %s slot %" PRIu64 " on MN %u: cell %" PRIu64
				     " lock word 0x%" PRIx64 " is held after the run",
				     l->names[t], k / per, mn, k % per, v);
		}
	}
	return DMR_OK;
}

static dmr_status_t verify(const dmr_layout_t *l, rsrc_t *rs, dmr_replica_result_t *res)
{
	/* Blocks of about 1 MiB of records: a clean one (block_clean) has
	 * its checks counted without a walk; any other goes record by record
	 * (check_slots), in the same order as a whole-table walk: the same
	 * failures, counted and named alike. */
	struct sysinfo si;
	long pg = sysconf(_SC_PAGESIZE);
	int hint =
	    !rs->be && sysinfo(&si) == 0 && si.totalswap == 0 && pg > 0 && (pg & (pg - 1)) == 0;
	for (uint32_t t = 0; t < l->ntables; t++) {
		const dmr_layout_table_t *lt = &l->t[t];
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t, r);
		uint64_t per = BLOCK_BYTES / lt->rec_bytes ? BLOCK_BYTES / lt->rec_bytes : 1;
		for (uint64_t s0 = 0; s0 < lt->rows; s0 += per) {
			uint64_t s1 = s0 + per < lt->rows ? s0 + per : lt->rows;
			uint64_t off = dmr_layout_rec(l, t, s0), len = (s1 - s0) * lt->rec_bytes;
			const uint8_t *b[1 + DMR_LAYOUT_MAX_BACKUPS];
			int written = 0;
			for (uint32_t j = 0; j < nr && !written; j++) {
				int w = rs_written(rs, r[j], off, len);
				if (w < 0)
					return DMR_ERR_IO;
				written = w;
			}
			if (!written) {
				/* the initial image on every replica: identical,
				 * its lock words 0, its chains one version each */
				res->checks += (s1 - s0) * (2ull * nr - 1);
				if (l->vcells)
					res->chains += s1 - s0;
				continue;
			}
			for (uint32_t j = 0; j < nr; j++)
				if (!(b[j] = rs_get(rs, j, r[j], off, len)))
					return DMR_ERR_IO;
			if (block_clean(l, b, t, s0, s1, pg, hint))
				res->checks += (s1 - s0) * (2ull * nr - 1);
			else
				check_slots(l, b, t, s0, s1, res);
			if (l->vcells)
				check_chains(l, b[0], t, s0, s1, pg, hint, res);
		}
	}
	/* crest --crest-locks words: every cell lock word free (0) on the
	 * primary (core/layout.h dmr_layout_cells) */
	for (uint32_t t = 0; t < l->ntables; t++) {
		const dmr_layout_table_t *lt = &l->t[t];
		if (lt->cell_words &&
		    check_words(rs, l, t, lt->primary, 0, lt->cell_base, lt->rows * lt->cell_words,
				~0ull, lt->cell_words, 0, res) != DMR_OK)
			return DMR_ERR_IO;
	}
	/* lock words apart (core/layout.h dmr_layout_locks): every word idle
	 * on every MN holding the table (FORD writes "invisible" to the
	 * backups' words too); the headers' copies were checked above (0) */
	for (uint32_t t = 0; t < l->ntables; t++) {
		const dmr_layout_table_t *lt = &l->t[t];
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = lt->lock_base ? dmr_layout_replicas(l, t, r) : 0;
		for (uint32_t j = 0; j < nr; j++)
			if (check_words(rs, l, t, r[j], j > 0, lt->lock_base, lt->rows,
					l->lock_busy, 1, 1, res) != DMR_OK)
				return DMR_ERR_IO;
	}
	res->ok = res->failures == 0;
	return DMR_OK;
}

dmr_status_t dmr_replica_verify(const dmr_layout_t *l, dmr_replica_mem_fn mem, void *arg,
				dmr_replica_result_t *res, dmr_err_t *err)
{
	rsrc_t rs = {.err = err};
	memset(res, 0, sizeof(*res));
	for (uint32_t mn = 0; mn < l->mns; mn++) {
		uint64_t len = 0;
		rs.m[mn] = mem(arg, mn, &len);
		if (!rs.m[mn] || len < l->total)
			return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
					   "replicas: the region of MN %u is not local (or smaller "
					   "than the %" PRIu64 "-byte layout)",
					   mn, l->total);
	}
	return verify(l, &rs, res);
}

static const uint8_t *be_mem(void *arg, uint32_t mn, uint64_t *len_p)
{
	return dmr_be_mn_memory(arg, mn, len_p);
}

dmr_status_t dmr_replica_verify_be(const dmr_layout_t *l, dmr_be_t *be, dmr_replica_result_t *res,
				   dmr_err_t *err)
{
	return dmr_replica_verify(l, be_mem, be, res, err);
}

dmr_status_t dmr_replica_verify_lazy(const dmr_layout_t *l, dmr_be_t *be, dmr_replica_result_t *res,
				     dmr_err_t *err)
{
	rsrc_t rs = {.be = be, .cap = BLOCK_BYTES, .err = err};
	for (uint32_t t = 0; t < l->ntables; t++)
		rs.cap = l->t[t].rec_bytes > rs.cap ? l->t[t].rec_bytes : rs.cap;
	rs.cap = (rs.cap + 7) & ~7ull;
	memset(res, 0, sizeof(*res));
	dmr_status_t st = DMR_OK;
	for (uint32_t j = 0; j < 1 + DMR_LAYOUT_MAX_BACKUPS && st == DMR_OK; j++)
		if (!(rs.buf[j] = malloc(rs.cap)))
			st = dmr_err_set(err, DMR_ERR_NOMEM, "replicas: out of memory");
	if (st == DMR_OK)
		st = verify(l, &rs, res);
	for (uint32_t j = 0; j < 1 + DMR_LAYOUT_MAX_BACKUPS; j++)
		free(rs.buf[j]);
	return st;
}
