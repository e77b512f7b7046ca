/*
 * core/txn_cncache.h - the CN record cache of occ, ford, farm and drtmh
 * (issue 14 lever A3, "CN-side caching of read-mostly records with version
 * validation"; docs/AURA.md "A3"). crest keeps its own (--crest-cache,
 * core/txn_crest.h), motor has none (its multi-version reads pick a version
 * by timestamp, not the newest: refused).
 *
 * Per CN, a bounded cache of record images {lock word 0, version, payload}
 * as a committed transaction of that CN last READ them. With the cache on
 * for a table (bit t of dmr_txn_engine_t.cn_cache_tables, read when a
 * transaction starts), a read-only op of one record of the table that finds
 * the record in its CN's cache posts no READ: the transaction uses the
 * cached image (a hit). Validation then re-READs the record's header as
 * the protocol validates any read (a transaction with a hit always
 * validates, also a single read that would otherwise skip it): a hit whose
 * version changed aborts with its own cause, DMR_ABORT_CACHE_STALE, and
 * drops the entry (the next read misses and READs the record again); a
 * held lock with the version unchanged is the protocol's validation abort,
 * as without the cache. Serializability is the protocol's: versions only
 * grow (each commit of a record adds 1), so a version unchanged at
 * validation means the record still holds the cached bytes then, as it
 * would after a READ in execution.
 *
 * Filled in execution, dropped at commit: every read-only op of one record
 * of a table whose cache is on that READ its record (not a hit) and found
 * it unlocked puts the image when the READ came back, whether its attempt
 * then commits or not (the image is what the record held; an entry with a
 * newer version is kept); every record a committed transaction wrote back
 * is dropped, whatever the mask (the next read READs the new image).
 * Entries of a table whose bit is cleared stay until evicted; when the bit
 * is set again they are served and validated as any (a stale one aborts
 * once): dmr_cncache_clear empties a cache.
 *
 * What an image is worth: the protocol's READ. On sim a READ takes effect
 * at once, and on shm it never sees part of a write-back (backends/shm/
 * shm.c "READs whole"); on verbs a READ racing a write-back may see the
 * new version with part of the old payload, which validation does not see
 * (the version READ again after the writer unlocked): a window every READ
 * of these protocols has (FORD's code checks versions, not each cache
 * line); a cached image is served until its version changes.
 *
 * Structure: WAYS-way set associative (DMR_CNCACHE_WAYS), ceil(entries /
 * WAYS) sets, a set by the record offset's dmr_mix64 (core/base/hash.h),
 * least recently used way evicted; images in slots of the largest record
 * of the layout (any table may be switched on at run time). Keys are the
 * record offsets in an MN region, unique over tables (core/layout.h: the
 * same layout on every MN).
 *
 * Threads (shm, verbs: one thread per worker, the workers of a CN sharing
 * its cache): a cache created `shared` takes one of DMR_CNCACHE_STRIPES
 * mutexes per operation (set index mod stripes), so threads on different
 * sets do not wait for each other; the sim drives every worker from one
 * thread: its caches are created unshared (no lock). The mask is a relaxed
 * atomic word: the replay or the AURA controller may change it while
 * workers run (dmr_txn_cncache_set_tables); a transaction reads it once,
 * when it starts (dmr_txn_start).
 */
#ifndef DMR_TXN_CNCACHE_H
#define DMR_TXN_CNCACHE_H

#include <stdint.h>

#include "base/status.h"

typedef struct dmr_cncache dmr_cncache_t;

#define DMR_CNCACHE_WAYS 4u
#define DMR_CNCACHE_STRIPES 64u
/* --cn-cache-entries default: 16,384 records per CN (16 MiB of 1 KiB YCSB
 * records; TPC-C's item table is 100,000 rows of 24 bytes: 2.3 MiB whole).
 * A choice of ours, as CREST's DMR_CREST_CACHE_SLOTS (8,192); CREST's
 * HandleCache reserves 100,000 handles (src/db/AddressCache.h). */
#define DMR_CNCACHE_DEFAULT_ENTRIES 16384u
#define DMR_CNCACHE_MAX_ENTRIES (1u << 24)

/* Bytes a cache of `entries` entries with slots of slot_bytes takes (sets,
 * images): what the replay checks against memory before the run. */
uint64_t dmr_cncache_bytes(uint32_t entries, uint32_t slot_bytes);

/* A cache of 1..DMR_CNCACHE_MAX_ENTRIES entries (rounded up to a multiple
 * of DMR_CNCACHE_WAYS) holding images of up to slot_bytes (>= 16) bytes;
 * shared: several threads use it (striped mutexes), else none. *kp owned
 * by the caller (dmr_cncache_destroy). DMR_ERR_RANGE (entries, slot_bytes
 * out of range, err naming --cn-cache-entries), DMR_ERR_NOMEM. */
dmr_status_t dmr_cncache_create(uint32_t entries, uint32_t slot_bytes, int shared,
				dmr_cncache_t **kp, dmr_err_t *err);
void dmr_cncache_destroy(dmr_cncache_t *k);
/* Entries the cache holds at most (entries rounded up to the ways). */
uint32_t dmr_cncache_capacity(const dmr_cncache_t *k);
/* Entries held now. */
uint32_t dmr_cncache_size(dmr_cncache_t *k);
/* Empty it (e.g. when a table's bit is set again after a long time off). */
void dmr_cncache_clear(dmr_cncache_t *k);

/* 1 and the `bytes` (<= slot) bytes of record rec's image into dst when
 * cached (the entry becomes the most recent of its set); 0 when not. */
int dmr_cncache_get(dmr_cncache_t *k, uint64_t rec, uint8_t *dst, uint32_t bytes);
/* Record rec's image (bytes <= slot: lock word, version, payload) cached,
 * evicting the least recent entry of its set when full; an entry of rec
 * with a newer version (word 1, DMR_VER_MASK bits) is kept. */
void dmr_cncache_put(dmr_cncache_t *k, uint64_t rec, const uint8_t *img, uint32_t bytes);
/* Record rec no longer cached. */
void dmr_cncache_drop(dmr_cncache_t *k, uint64_t rec);

/* The engine's table mask (dmr_txn_engine_t.cn_cache_tables: bit t =
 * table t's read-only ops served from the CN caches), stored atomically
 * (relaxed): transactions that start afterwards use it; those running keep
 * the mask they started with. Without caches (eng->cncache NULL) or with
 * protocol crest or motor the mask is ignored. */
struct dmr_txn_engine;
void dmr_txn_cncache_set_tables(struct dmr_txn_engine *eng, uint32_t mask);
uint32_t dmr_txn_cncache_tables(const struct dmr_txn_engine *eng);

#endif
