/*
 * core/kv/kv.h - the KV-cache pool as a protocol, beside the transaction
 * core (docs/KVCACHE.md). What every piece below shares.
 *
 * Pieces, each with its header:
 *  - pool.h   the master's metadata: block id -> (segment, slot, offset,
 *             state, pins), placement over segments, an LRU list and
 *             high/low-water eviction, the records of requests in flight.
 *             Pure bookkeeping: no I/O, no threads, no clock.
 *  - xfer.h   the sliced, pipelined block transfer engine: a transfer of
 *             `len` bytes becomes slices posted in order on one worker's QP,
 *             at most `depth` in flight (backends/backend.h post/poll).
 *  - rpc.h    the master reached over one-sided WRITE and READ only: the
 *             region layout (geometry header, mailboxes, ready words, pool),
 *             the wire layout of a mailbox slot and its checksum, and the
 *             geometry header that a client compares with its own.
 *  - master.h the master as a thread serving the mailboxes in local memory
 *             against a pool (LOOKUP in trace order, FINISH).
 * The runners (sim, threaded, MN/CN processes), the benchmark and the
 * command line that use these are in replay/kv/.
 *
 * Conventions: indices are uint32_t with DMR_KV_NOIDX for "none"; offsets
 * and sizes are bytes; times are picoseconds (dmr_time_ps_t); functions
 * return dmr_status_t and fill the caller's dmr_err_t; nothing here prints.
 * Dependencies: core/base, backends/backend.h, models/model.h (wire bytes).
 */
#ifndef DMR_CORE_KV_H
#define DMR_CORE_KV_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hash.h"

#define DMR_KV_NOIDX UINT32_MAX /* no entry / transfer / request */

/* The 64-bit finaliser of MurmurHash3: the hash of the block map, the
 * content pattern, the RPC checksum and the trace fingerprint. */
static inline uint64_t dmr_kv_mix64(uint64_t x)
{
	return dmr_mix64(x);
}

/*
 * Take an element of an array that keeps its free elements in a list (the
 * pool's entries and request records, the transfers), chained through the
 * uint32_t at byte next_off of each element and ending in DMR_KV_NOIDX;
 * *free_p is the list's head, *cap_p the elements allocated. When the list
 * is empty the array grows to twice its size (`first` elements when empty;
 * the new ones, zeroed, go on the list). The element taken is zeroed; *i_p = its
 * index. Returns the array (it may have moved), or NULL when out of memory
 * (arr and the counts unchanged).
 */
static inline void *dmr_kv_list_take(void *arr, uint32_t *cap_p, uint32_t *free_p, size_t size,
				     size_t next_off, uint32_t first, uint32_t *i_p)
{
	uint8_t *a = (uint8_t *)arr;
	if (*free_p == DMR_KV_NOIDX) {
		uint32_t old = *cap_p, cap = old ? old * 2 : first;
		if (!(a = (uint8_t *)realloc(arr, (size_t)cap * size)))
			return NULL;
		memset(a + (size_t)old * size, 0, (size_t)(cap - old) * size);
		for (uint32_t i = old; i < cap; i++) {
			uint32_t nx = i + 1 < cap ? i + 1 : DMR_KV_NOIDX;
			memcpy(a + (size_t)i * size + next_off, &nx, sizeof(nx));
		}
		*free_p = old;
		*cap_p = cap;
	}
	uint32_t i = *free_p;
	memcpy(free_p, a + (size_t)i * size + next_off, sizeof(*free_p));
	memset(a + (size_t)i * size, 0, size);
	*i_p = i;
	return a;
}

#endif /* DMR_CORE_KV_H */
