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
	for (uint32_t t = 0; t < l->ntables; t++) {
		const dmr_layout_table_t *lt = &l->t[t];
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t, r);
		for (uint64_t s = 0; s < lt->rows; s++) {
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
					     "table %s slot %" PRIu64
					     ": backup on MN %u differs from "
					     "its primary on MN %u (record byte %u: 0x%02x != "
					     "0x%02x)",
					     l->names[t], s, r[j], r[0], 8 + k, b[k], p[k]);
				}
			}
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
