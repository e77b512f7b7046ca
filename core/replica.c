/*
 * core/replica.c - replica and lock-word invariants (replica.h).
 */
#include "replica.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
 * the primary's. Every finding is a failure, named. */
static void check_slots(const dmr_layout_t *l, const uint8_t *const *m, uint32_t t, uint64_t s0,
			uint64_t s1, dmr_replica_result_t *res)
{
	const dmr_layout_table_t *lt = &l->t[t];
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	uint32_t nr = dmr_layout_replicas(l, t, r);
	for (uint64_t s = s0; s < s1; s++) {
		uint64_t off = dmr_layout_rec(l, t, s);
		for (uint32_t j = 0; j < nr; j++) {
			uint64_t lock;
			memcpy(&lock, m[r[j]] + off, 8);
			res->checks++;
			if (lock != 0)
				fail(res,
				     "table %s slot %" PRIu64 " on MN %u (%s): lock word "
				     "0x%" PRIx64 " is held after the run",
				     l->names[t], s, r[j], j ? "backup" : "primary", lock);
			if (j == 0)
				continue;
			res->checks++;
			const uint8_t *p = m[r[0]] + off + 8, *b = m[r[j]] + off + 8;
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

/* 1 if the n bytes at p are all zero. */
static int all_zero(const uint8_t *p, uint64_t n)
{
	static const uint8_t zero[4096];
	while (n >= sizeof(zero)) {
		if (memcmp(p, zero, sizeof(zero)) != 0)
			return 0;
		p += sizeof(zero);
		n -= sizeof(zero);
	}
	return memcmp(p, zero, n) == 0;
}

/* Records per block of the fast path: about 1 MiB of records. */
#define BLOCK_BYTES (1u << 20)

dmr_status_t dmr_replica_verify(const dmr_layout_t *l, dmr_replica_mem_fn mem, void *arg,
				dmr_replica_result_t *res, dmr_err_t *err)
{
	memset(res, 0, sizeof(*res));
	const uint8_t *m[DMR_LAYOUT_MAX_MNS] = {0};
	for (uint32_t mn = 0; mn < l->mns; mn++) {
		uint64_t len = 0;
		m[mn] = mem(arg, mn, &len);
		if (!m[mn] || len < l->total)
			return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
					   "replicas: the region of MN %u is not local (or smaller "
					   "than the %" PRIu64 "-byte layout)",
					   mn, l->total);
	}
	/* A block of records whose primary lock words are all 0 and whose
	 * every backup is byte-identical to the primary (lock words too) holds
	 * nothing to report: its checks are counted without looking at each
	 * record. An all-zero primary block (rows never loaded nor inserted)
	 * has its lock words 0 without reading them one by one. Any other
	 * block goes record by record (check_slots), in the same order as a
	 * whole-table walk: the same failures, counted and named alike. */
	for (uint32_t t = 0; t < l->ntables; t++) {
		const dmr_layout_table_t *lt = &l->t[t];
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t, r);
		uint64_t per = BLOCK_BYTES / lt->rec_bytes ? BLOCK_BYTES / lt->rec_bytes : 1;
		for (uint64_t s0 = 0; s0 < lt->rows; s0 += per) {
			uint64_t s1 = s0 + per < lt->rows ? s0 + per : lt->rows;
			uint64_t off = dmr_layout_rec(l, t, s0), len = (s1 - s0) * lt->rec_bytes;
			const uint8_t *p = m[r[0]] + off;
			int clean = all_zero(p, len);
			if (!clean) {
				uint64_t locks = 0;
				for (uint64_t k = 0; k < len; k += lt->rec_bytes) {
					uint64_t w;
					memcpy(&w, p + k, 8);
					locks |= w;
				}
				clean = locks == 0;
			}
			for (uint32_t j = 1; clean && j < nr; j++)
				clean = memcmp(p, m[r[j]] + off, len) == 0;
			if (clean)
				res->checks += (s1 - s0) * (2ull * nr - 1);
			else
				check_slots(l, m, t, s0, s1, res);
		}
	}
	res->ok = res->failures == 0;
	return DMR_OK;
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
