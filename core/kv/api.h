/*
 * core/kv/api.h - the key/value API over the KV pool (issue #17 item 1;
 * docs/KVCACHE.md section 10): dmr_kv_set, dmr_kv_get (several keys at
 * once), dmr_kv_del, from a client that reaches the store's master
 * (store.h) only by one-sided WRITE and READ (the mailbox RPC of rpc.h).
 *
 * A client is one worker of an open backend (its QP to MN 0) and one
 * mailbox of the store's region (`client`, below the store's clients);
 * it belongs to one thread. The MN region must hold a store laid out by
 * the master (dmr_kv_master_region_store: magic DMR_KV_STORE_MAGIC and a
 * dmr_kv_store_geom_t at offset 8): dmr_kv_cli_open READs that header.
 *
 * Keys: 1..DMR_KV_KEY_MAX (250) bytes, no NUL byte (klen counts the bytes;
 * the key need not be NUL-terminated). Values: 0..geom.val_max bytes, any
 * content; the bytes are copied (the API never keeps the caller's
 * pointers).
 *
 * A set is: SET (the master allocates the value's blocks), the WRITEs of
 * every block, COMMIT (the master switches the key to the new value). Only
 * COMMIT makes the value visible, so a set that fails at any step (refused,
 * no room, a WRITE error, a timeout) leaves the key's old value readable,
 * whole; on a failure after SET the client sends ABORT (best effort: a
 * client that dies keeps its blocks allocated until the MN ends). A get
 * READs the blocks the master answered and RELEASEs them: a concurrent set
 * or del cannot free them meanwhile, so a get returns one whole value, the
 * old or the new.
 *
 * Errors (all with err naming the key, its length and the limit, or the
 * MN's answer): DMR_ERR_INVALID (a bad key: empty, too long, a NUL byte;
 * nothing sent), DMR_ERR_RANGE (a value above val_max; nothing sent),
 * DMR_ERR_NOTFOUND (get, del: no value under the key), DMR_ERR_FULL (set:
 * the pool has no room; the old value kept), DMR_ERR_TIMEOUT (no answer or
 * completion within timeout_s), DMR_ERR_REMOTE (a failed completion or
 * mailbox), DMR_ERR_NODEV (no store at the MN: the header's magic word is
 * not DMR_KV_STORE_MAGIC), DMR_ERR_NOMEM.
 */
#ifndef DMR_CORE_KV_API_H
#define DMR_CORE_KV_API_H

#include <stdint.h>

#include "../../backends/backend.h"
#include "../base/status.h"
#include "store.h"

typedef struct dmr_kv_cli_cfg {
	dmr_be_t *be;
	uint32_t worker;  /* the backend worker whose QP the client posts on */
	uint32_t client;  /* its mailbox index in the store's region */
	uint64_t chunk;	  /* bytes per WRITE / READ of a block (0: 1 MiB; at most the block) */
	uint32_t depth;	  /* WRs in flight (0: 8) */
	double timeout_s; /* longest wait for an RPC answer or a completion (0: 30 s) */
	/* the master run inline (sim: no thread may touch the simulated
	 * region): called while the client waits for an answer; NULL when
	 * the master is a thread or another process */
	dmr_status_t (*serve)(void *arg, dmr_err_t *err);
	void *serve_arg;
} dmr_kv_cli_cfg_t;

/* Per-client counters (since open). */
typedef struct dmr_kv_cli_stats {
	uint64_t rpcs, sets, gets, dels, hits, misses;
	uint64_t bytes_set, bytes_got; /* value bytes WRITTEN, READ */
} dmr_kv_cli_stats_t;

typedef struct dmr_kv_cli {
	dmr_kv_cli_cfg_t cfg;
	dmr_kv_store_geom_t g; /* the store's header, READ at open */
	uint8_t *mb;	       /* registered: the mailbox slot's image (DMR_KV_MB_SLOT) */
	uint8_t *ring;	       /* registered: depth x chunk transfer buffers */
	uint64_t seq;	       /* the last sequence number sent on slot 0 */
	uint64_t ps_timeout;
	dmr_kv_cli_stats_t st;
	/* tests: > 0: the next set stops after WRITING this many blocks (of
	 * the new value, which has more) and fails with DMR_ERR_REMOTE as a
	 * lost connection would (ABORT sent); reset by that set */
	uint32_t test_fail_after;
	int test_no_abort; /* tests: with test_fail_after, send no ABORT (a dead client) */
} dmr_kv_cli_t;

/* One value of a get: data (malloc'd, len bytes; the caller's, freed with
 * dmr_kv_values_free) when st is DMR_OK; data NULL, len 0 and st
 * DMR_ERR_NOTFOUND when the key has no value. */
typedef struct dmr_kv_value {
	void *data;
	uint64_t len;
	dmr_status_t st;
} dmr_kv_value_t;

/* Open a client (registers 8 KiB + depth x chunk bytes for cfg->worker;
 * READs the store's header and its mailbox's sequence word, so a client
 * process that reuses a mailbox continues its numbering). Errors: as
 * above; DMR_ERR_RANGE when cfg->client is not below the store's clients.
 * dmr_kv_cli_close frees it either way. */
dmr_status_t dmr_kv_cli_open(dmr_kv_cli_t *c, const dmr_kv_cli_cfg_t *cfg, dmr_err_t *err);
void dmr_kv_cli_close(dmr_kv_cli_t *c);

/* Check a key as the store does: DMR_OK, else DMR_ERR_INVALID with err
 * saying why ("kv: key of 251 bytes: longer than the limit of 250 bytes",
 * "kv: key has a NUL byte at offset 3", "kv: empty key"). */
dmr_status_t dmr_kv_key_check(const void *key, uint64_t klen, dmr_err_t *err);

/* Store len bytes of val under key (replacing its value at COMMIT). */
dmr_status_t dmr_kv_set(dmr_kv_cli_t *c, const void *key, uint64_t klen, const void *val,
			uint64_t len, dmr_err_t *err);
/* Get n keys (keys[i] of klens[i] bytes) into out[0..n): every key is
 * looked up first (one RPC each), then the found values' blocks are READ
 * (pipelined, depth WRs in flight), then released. DMR_OK when every key
 * had a value; DMR_ERR_NOTFOUND when at least one had none (out[i].st
 * says which; the others are filled); any other error: out[] holds no
 * data (all freed). A bad key fails the whole call before any RPC. */
dmr_status_t dmr_kv_get(dmr_kv_cli_t *c, uint32_t n, const void *const *keys, const uint64_t *klens,
			dmr_kv_value_t *out, dmr_err_t *err);
/* Remove key's value: DMR_OK, DMR_ERR_NOTFOUND. */
dmr_status_t dmr_kv_del(dmr_kv_cli_t *c, const void *key, uint64_t klen, dmr_err_t *err);
/* Free the data of out[0..n) (NULL-safe). */
void dmr_kv_values_free(dmr_kv_value_t *out, uint32_t n);

#endif /* DMR_CORE_KV_API_H */
