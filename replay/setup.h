/*
 * replay/setup.h - the run's shape checked and laid out before the backend
 * opens (replay/setup.c); used by replay.c only.
 */
#ifndef DMR_REPLAY_SETUP_H
#define DMR_REPLAY_SETUP_H

#include <stdint.h>

#include "../core/layout.h"
#include "../core/loop.h"
#include "results.h" /* dmr_replay_result_t */

/* What of the run's options the shape depends on (dmr_replay_opts_t's
 * fields of the same names, replay/replay.h). */
typedef struct dmr_replay_shape {
	const char *trace;   /* named in errors */
	const char *backend; /* "sim": one driving thread, else one per worker */
	uint32_t cns, threads, coros, mns, backups;
	const dmr_layout_pin_t *pins; /* borrowed */
	uint32_t npins;
	int protocol;		     /* dmr_txn_protocol_t */
	const uint8_t *cell_words;   /* crest --crest-locks words: per table the cell
					lock words per record (dmr_layout_cells);
					NULL: none */
	uint32_t versions;	     /* motor: vcells per record (0: DMR_CVT_VCELLS) */
	int index;		     /* dmr_txn_index_t */
	const char *locks_apart;     /* tables whose lock words live apart
					(dmr_replay_setup_locks_apart); NULL: none */
	const char *locks_apart_opt; /* the option that asked it, for errors */
	int quiet;
	uint64_t index_buckets, addr_cache, mr_size;
} dmr_replay_shape_t;

/* Lay out the trace h for nworkers workers into *l (log rings of 64 KiB),
 * place it on o->mns MNs with o->backups backups (FORD's rule, then
 * o->pins), add the hash index (o->index), and check the address caches,
 * the footprint (against o->mr_size when given, and this machine's memory)
 * and the transaction contexts' memory. Fills res's cluster fields
 * (mns, backups, protocol, index, addr_cache, placement, footprint) and
 * *mr_p (the MN region size, bytes: o->mr_size or the footprint rounded up
 * to 4 KiB). Prints the placement on stderr unless o->quiet (several MNs or
 * a protocol other than occ). Errors, err naming the option or table:
 * DMR_ERR_RANGE, DMR_ERR_INVALID (dmr_layout_*), and DMR_ERR_RANGE for an
 * address cache, footprint or context memory larger than this machine. */
dmr_status_t dmr_replay_setup_layout(const dmr_replay_shape_t *o, const dmr_trace_hdr_t *h,
				     uint32_t nworkers, dmr_layout_t *l, dmr_replay_result_t *res,
				     uint64_t *mr_p, dmr_err_t *err);

/*
 * --dm-locks TABLE[,TABLE...] (issue 16): ask the backend to keep the lock
 * words of these tables in the MN NICs' device memory (DMR_BE_CTL_DM_LOCKS,
 * backends/backend.h), before the first post. The device-memory footprint
 * is 8 bytes per record of each table (one lock word), checked by the
 * backend against the profile's dm_kib. On success *lock_bytes_p is that
 * footprint. Errors: DMR_ERR_PARSE (a name that is not a table of the
 * trace, a table twice, an empty name; err lists the tables),
 * DMR_ERR_UNSUPPORTED / DMR_ERR_INVALID (the backend's reason: no device
 * memory, the lock words do not fit). be and l are borrowed.
 */
struct dmr_be;
dmr_status_t dmr_replay_setup_dm_locks(struct dmr_be *be, const dmr_layout_t *l, const char *list,
				       uint64_t *lock_bytes_p, dmr_err_t *err);

/*
 * Lock words apart from their records (issue 16 item 3; docs/MODEL.md
 * "Device memory"): the comma-separated tables of list get their lock
 * words in the layout's lock-word region (dmr_layout_locks), at the end of
 * the layout and before the backend opens (the region is part of the
 * footprint; dmr_replay_setup_layout calls it when the shape has
 * locks_apart). `opt` names the option in errors
 * (--locks-apart, or --dm-locks on a backend with DMR_BE_CAP_DM_APART).
 * Errors: DMR_ERR_INVALID for a protocol other than occ and ford (their
 * lock words stay in the records: the error names the protocol),
 * DMR_ERR_PARSE as dmr_replay_setup_dm_locks for a bad name, the layout's
 * DMR_ERR_RANGE.
 */
dmr_status_t dmr_replay_setup_locks_apart(dmr_layout_t *l, const char *list, const char *opt,
					  int protocol, dmr_err_t *err);

/* After open: tell the backend where the lock-word region is
 * (DMR_BE_CTL_LOCK_REGION, backends/backend.h), in device memory (dm 1:
 * verbs --dm-locks) or host memory (dm 0: --locks-apart; a backend that
 * does not answer keeps it in its region, DMR_OK). Announced on stdout
 * unless quiet ("dmreplay run: lock words of LIST apart from their records
 * (N bytes per MN, in host|device memory)"). Errors: the backend's
 * (verbs: no device memory, not enough of it, naming the device and both
 * sizes); DMR_ERR_INVALID when dm and the backend does not answer. */
dmr_status_t dmr_replay_setup_lock_region(struct dmr_be *be, const dmr_layout_t *l, int dm,
					  const char *list, int quiet, dmr_err_t *err);

/* --cxl-tables TABLE[,TABLE...] (issue 16): the tables (whole: records and
 * lock words) on the MN's CXL-attached memory tier (DMR_BE_CTL_CXL_TABLES),
 * before the first post; *bytes_p = their bytes per MN region. Errors as
 * dmr_replay_setup_dm_locks (DMR_ERR_INVALID: the backend or profile has
 * no CXL tier). */
dmr_status_t dmr_replay_setup_cxl(struct dmr_be *be, const dmr_layout_t *l, const char *list,
				  uint64_t *bytes_p, dmr_err_t *err);

/* Both of the above when given (NULL: not), each announced on stdout
 * unless quiet ("dmreplay run: lock words of ... in device memory (N bytes
 * per MN)", "dmreplay run: ... on the CXL tier (N bytes per MN)"); and
 * with rpc (core/txn.h dmr_txn_rpc_t: --rpc, or DMR_TXN_RPC_ALT for aura's
 * lever a1) the MN CPU the RPC path needs: DMR_ERR_INVALID (err naming the
 * backend, the profile without mn_rpc_*, or the backend's refusal of
 * DMR_BE_CTL_RPC_MODE: verbs on a device whose atomic_cap does not let
 * the MN CPU's atomics mix with RDMA atomics, asked whether RPCs run
 * beside one-sided transactions: rpc other than all, or several MNs) when
 * the backend cannot serve RPCs. */
dmr_status_t dmr_replay_setup_tiers(struct dmr_be *be, const dmr_layout_t *l, const char *dm_locks,
				    const char *cxl_tables, int rpc, int quiet, dmr_err_t *err);

/* --protocol crest before the layout (issue 12): the lock variant (locks:
 * DMR_CREST_LOCKS_*, or -1 = masked where the backend has masked CAS,
 * DMR_BE_CAP_MASKED_CAS, else words), the cells from the trace's header
 * (dmr_crest_init), and the run's crest columns in res (local: its
 * localized execution, cache: its CN record cache, each 1 = on; ttl_ps:
 * the cache's TTL in ps, 0 = DMR_CREST_CACHE_TTL_PS). DMR_ERR_INVALID:
 * masked asked of a backend without it (err names it); dmr_crest_init's
 * errors. cr is the caller's. */
struct dmr_crest;
dmr_status_t dmr_replay_setup_crest(const char *backend, int locks, int local, int cache,
				    uint64_t ttl_ps, const dmr_trace_hdr_t *h, const char *trace,
				    struct dmr_crest *cr, dmr_replay_result_t *res, dmr_err_t *err);

/* --cn-cache LIST (issue 14 lever A3; core/txn_cncache.h) for eng (its
 * protocol and layout set): list NULL or "none": nothing (DMR_OK, no
 * cache); "all": every table of the trace h; else comma-separated table
 * names. For each of the cns CNs a cache of `entries` entries (0:
 * DMR_CNCACHE_DEFAULT_ENTRIES) with slots of the layout's largest record,
 * shared by its workers' threads when `shared` (shm, verbs), in
 * eng->cncache (free with dmr_replay_cncache_free), and the mask in
 * eng->cn_cache_tables; res->cn_cache and cn_cache_entries filled. Errors,
 * err naming the option: DMR_ERR_PARSE (a name that is not a table of the
 * trace, listing them; a table twice; an empty name), DMR_ERR_INVALID
 * (protocol crest or motor, named), DMR_ERR_RANGE (entries; the caches
 * larger than this machine's memory), DMR_ERR_NOMEM. */
struct dmr_txn_engine;
dmr_status_t dmr_replay_setup_cncache(struct dmr_txn_engine *eng, const char *list,
				      uint32_t entries, uint32_t cns, int shared,
				      const dmr_trace_hdr_t *h, dmr_replay_result_t *res,
				      dmr_err_t *err);
/* Free eng->cncache's cns caches (NULL entries and array allowed), set it
 * NULL and the mask 0. */
void dmr_replay_cncache_free(struct dmr_txn_engine *eng, uint32_t cns);

/* A drift trace's header (traces/FORMAT.md "Drift": drift_s, drift_shift,
 * partitions, partitioned): every drift_ps the hot set moves by `shift`
 * partitions of the tables in part_mask (bit t: table t). A trace without
 * drift_s: all 0. DMR_ERR_PARSE naming the trace when one is missing or a
 * partitioned table is unknown or not divisible into the partitions. */
typedef struct dmr_replay_drift {
	uint64_t ps;
	uint32_t shift, parts, part_mask;
} dmr_replay_drift_t;
dmr_status_t dmr_replay_setup_drift(const dmr_trace_hdr_t *h, const char *trace,
				    dmr_replay_drift_t *d, dmr_err_t *err);

/* The run's settings besides its shape (dmr_replay_opts_t's fields of the
 * same names), for dmr_replay_result_shape. */
typedef struct dmr_replay_run_knobs {
	dmr_loop_cfg_t loop;
	uint64_t seed;
	uint32_t retries;
	double backoff_us, duration_s;
	int isolation;			   /* dmr_txn_isolation_t */
	uint32_t versions;		   /* motor's vcells (layout.vcells) */
	const char *dm_locks, *cxl_tables; /* NULL: none */
	int rpc;			   /* dmr_txn_rpc_t (--rpc) */
} dmr_replay_run_knobs_t;

/* The run's shape into res after the run: workload and regime (h), loop
 * name and settings, backend, profile (m: NULL = "-"), CNs x threads x
 * coros, seed, transactions started, MTU, retry limit, backoff, duration. */
struct dmr_model;
void dmr_replay_result_shape(dmr_replay_result_t *res, const dmr_replay_shape_t *o,
			     const dmr_replay_run_knobs_t *k, const dmr_trace_hdr_t *h,
			     const struct dmr_model *m, uint64_t started);

/* A backend's own options given to another backend that would ignore
 * them (`dmreplay run`, `kv run`): dev_opt (the --device, --port or
 * --gid-index given, named as the message names it; NULL: none) on a
 * backend other than verbs, profile (--profile given) on one other than
 * sim, each judged by the backend the wrappers wrap (fault:INNER,
 * record:INNER, nested). -1 with "dmreplay CMD: option ...: ..." printed
 * on stderr (the caller exits 2), else 0. */
int dmr_replay_backend_opts_check(const char *cmd, const char *backend, const char *dev_opt,
				  int profile);

#endif
