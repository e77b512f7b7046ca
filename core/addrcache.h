/*
 * core/addrcache.h - a CN's address cache for the MN hash index (issue 11
 * item 3): key (table, slot) -> record address, at most `cap` entries,
 * least recently used evicted first. FORD keeps such a cache on the CN
 * (minghust/ford core/cache/addr_cache.h, AddrCache: table and key to the
 * remote offset, unbounded); ours is bounded (--addr-cache N entries per
 * CN) so that its hit ratio depends on the working set, as a CN's memory
 * bounds it. A hit skips the index bucket READ (core/txn.c).
 *
 * Thread-safe: the workers of one CN share it (a mutex; the sim drives all
 * workers from one thread).
 */
#ifndef DMR_ADDRCACHE_H
#define DMR_ADDRCACHE_H

#include <stdint.h>

#include "base/status.h"

typedef struct dmr_acache dmr_acache_t;

/* Bytes a cache of cap entries takes (entries and their hash table): what
 * the replay checks against the CN's memory before the run. */
uint64_t dmr_acache_bytes(uint64_t cap);

/* A cache of cap >= 1 entries. DMR_ERR_NOMEM, DMR_ERR_RANGE (cap above
 * 2^31). */
dmr_status_t dmr_acache_create(uint64_t cap, dmr_acache_t **c_p, dmr_err_t *err);
void dmr_acache_destroy(dmr_acache_t *c);

/* The key of (table, slot): table < 2^16, slot < 2^48. */
static inline uint64_t dmr_acache_key(unsigned table, uint64_t slot)
{
	return (uint64_t)table << 48 | slot;
}

/* 1 and *addr_p on a hit (the entry becomes the most recent), 0 on a miss. */
int dmr_acache_get(dmr_acache_t *c, uint64_t key, uint64_t *addr_p);
/* Insert or update key (the most recent); the least recent entry is evicted
 * when the cache is full. */
void dmr_acache_put(dmr_acache_t *c, uint64_t key, uint64_t addr);
/* Entries held. */
uint64_t dmr_acache_size(dmr_acache_t *c);

#endif
