/*
 * core/kv/store.h - the key/value store's master side (issue #17 item 1;
 * docs/KVCACHE.md section 10): a directory of named values over the KV pool
 * (pool.h), served through the mailbox RPC (rpc.h ops SET .. DEL) by the
 * master (master.h). The client side is api.h.
 *
 * A value of `len` bytes is split into ceil(len / block) blocks of the
 * pool (the last partly filled; a value of 0 bytes has none), each a pool
 * entry with a fresh block id (never reused, so a value's blocks are never
 * mistaken for another's). A value is a record with a reference count:
 *  - SET allocates the blocks (PENDING, pinned: never evicted) and a
 *    pending record held by the setter; nothing is visible under the key.
 *    When the pool has no room for every block, the blocks taken so far are
 *    freed and the answer is FULL: nothing changed.
 *  - the setter WRITEs the blocks, then COMMIT switches the key's directory
 *    entry to the new record (one step at the master); the old record loses
 *    the directory's reference. ABORT (or a setter that never commits)
 *    leaves the key's old value untouched: a failed set is never half
 *    visible.
 *  - GET answers the key's current record (its blocks' offsets) and takes a
 *    reference until RELEASE, so a DEL or an overwrite during the READs
 *    cannot free the slots being read.
 *  - a record whose count drops to 0 frees its blocks (dmr_kv_pool_remove).
 * Values stay pinned while referenced: the store never evicts; a full pool
 * refuses the SET (FULL). A setter that dies between SET and COMMIT leaves
 * its pending blocks allocated until the MN ends (docs: limits).
 *
 * Limits (checked at the master; api.h checks them before any RPC too):
 * keys of 1..DMR_KV_KEY_MAX bytes without a NUL byte; values of at most
 * val_max bytes (<= DMR_KV_VAL_BLOCKS_MAX blocks: one RPC response holds
 * every block of a value).
 *
 * Wire: request op (rpc.h), n = key words, b0 = key bytes, a = value bytes
 * (SET) or the record (COMMIT, ABORT, RELEASE), body = the key (zero
 * padded). Response status (dmr_kv_sstatus_t), rid = the record, entries:
 * entry 0 = {value bytes, 0, 0}, entries 1..nblocks = {region offset of
 * block j, 0, DMR_KV_KIND_PUT (SET) or DMR_KV_KIND_GET (GET)}; other ops
 * answer no entries. Part of core/kv (kv.h); the store belongs to the
 * master's thread.
 */
#ifndef DMR_CORE_KV_STORE_H
#define DMR_CORE_KV_STORE_H

#include <stdint.h>

#include "../base/status.h"
#include "pool.h"
#include "rpc.h"

/* Longest key, bytes: memcached's KEY_MAX_LENGTH (memcached.h, 250). */
#define DMR_KV_KEY_MAX 250u
/* Most blocks of one value: a response holds (4096 - 32) / 16 = 254
 * entries, one of which carries the value's length. */
#define DMR_KV_VAL_BLOCKS_MAX (DMR_KV_MB_MAXB - 1u)
/* Largest value, bytes, whatever the block: 1 GiB (= DMR_KVOPS_VALUE_MAX,
 * traces/kvops.h): the command line refuses a larger file before it
 * connects; a value is also at most DMR_KV_VAL_BLOCKS_MAX blocks and the
 * pool's slots (dmr_kv_store_val_max). */
#define DMR_KV_VALUE_LIMIT (1ull << 30)
/* The store's region header: this magic word (written last) at offset 0,
 * then a dmr_kv_store_geom_t at offset 8 ("DMRKVST1"; the trace master's
 * is DMR_KV_MAGIC, so a client of the one refuses the other). */
#define DMR_KV_STORE_MAGIC 0x315453564b524d44ull

/* What the master answers a store request (response status). */
typedef enum dmr_kv_sstatus {
	DMR_KV_S_OK = 0,
	DMR_KV_S_NOTFOUND = 1, /* GET, DEL: no value under the key */
	DMR_KV_S_FULL = 2,     /* SET: the pool has no room for the value's blocks */
	DMR_KV_S_TOOBIG = 3,   /* SET: above val_max */
	DMR_KV_S_BADKEY = 4,   /* empty, longer than DMR_KV_KEY_MAX, or with a NUL byte */
	DMR_KV_S_BADREC = 5,   /* COMMIT, ABORT, RELEASE of a record that is not this
				  client's pending / held one */
} dmr_kv_sstatus_t;

/* What a client needs to know of the store (the header the master
 * writes; all u64). */
typedef struct dmr_kv_store_geom {
	uint64_t version; /* 1 */
	uint64_t clients; /* mailboxes */
	uint64_t block_bytes, slots, val_max, pool_base, region;
} dmr_kv_store_geom_t;

typedef struct dmr_kv_sval {
	uint8_t key[DMR_KV_KEY_MAX];
	uint32_t klen, nblocks, refs;
	uint32_t client; /* pending: its setter */
	uint32_t next;	 /* free list */
	uint8_t state;	 /* 0 free, 1 pending, 2 the key's value, 3 dropped but held by a GET */
	uint64_t len;
	uint32_t *ent; /* nblocks pool entries */
} dmr_kv_sval_t;

typedef struct dmr_kv_skey {
	uint8_t key[DMR_KV_KEY_MAX];
	uint32_t klen, val; /* the committed record */
	uint32_t next;	    /* hash chain / free list */
	uint64_t hash;
} dmr_kv_skey_t;

typedef struct dmr_kv_store {
	dmr_kv_pool_t *pool; /* borrowed; bounded, one segment or more */
	uint64_t pool_base;  /* region offset of the pool (responses give region offsets) */
	uint64_t val_max;    /* bytes */
	uint64_t next_id;    /* the next fresh block id */
	dmr_kv_sval_t *v;
	uint32_t capv, vfree;
	dmr_kv_skey_t *k;
	uint32_t capk, kfree;
	uint32_t *bucket; /* key hash chains */
	uint32_t nbucket; /* power of two */
	uint64_t keys;	  /* keys mapped */
	/* counters (the master's thread only) */
	uint64_t sets, commits, aborts, gets, hits, misses, dels, full;
} dmr_kv_store_t;

/* The value limit a store of this pool allows: min(want, DMR_KV_VALUE_LIMIT,
 * DMR_KV_VAL_BLOCKS_MAX x block, the pool's slots x block); want 0 = the
 * largest. */
uint64_t dmr_kv_store_val_max(const dmr_kv_pool_t *pool, uint64_t want);

/* A store over `pool` (bounded; the caller keeps it), its blocks answered
 * at pool_base + their pool offset; val_max from dmr_kv_store_val_max.
 * Errors: DMR_ERR_NOMEM. dmr_kv_store_fini frees it either way (not the
 * pool). */
dmr_status_t dmr_kv_store_init(dmr_kv_store_t *s, dmr_kv_pool_t *pool, uint64_t pool_base,
			       uint64_t val_max, dmr_err_t *err);
void dmr_kv_store_fini(dmr_kv_store_t *s);

/* A key's check: DMR_KV_S_OK or DMR_KV_S_BADKEY (0 or more than
 * DMR_KV_KEY_MAX bytes, or a NUL byte inside). */
dmr_kv_sstatus_t dmr_kv_store_key_check(const void *key, uint64_t klen);

/*
 * Serve store request q (op SET .. DEL) of client c found in mailbox `slot`
 * (request area; the response goes to slot + DMR_KV_MB_RESP, sequence word
 * last). A refusal (NOTFOUND, FULL, ...) is an answer, DMR_OK. Errors:
 * DMR_ERR_NOMEM, DMR_ERR_INVALID (a body that does not hold b0 key bytes),
 * in err.
 */
dmr_status_t dmr_kv_store_serve(dmr_kv_store_t *s, uint32_t c, uint8_t *slot, uint64_t seq,
				const dmr_kv_rpc_req_t *q, dmr_err_t *err);

/* Bytes of the pool held by values (committed and pending), blocks x block. */
uint64_t dmr_kv_store_bytes_held(const dmr_kv_store_t *s);

#endif /* DMR_CORE_KV_STORE_H */
