/*
 * core/kv/prefetch.h - Loop X (`kv run --loop prefetch`, issue 14 item 5):
 * KV pool hit ratio -> prefetch depth of the blocks the trace predicts next
 * (docs/KVCACHE.md "Loop X", docs/LOOPS.md).
 *
 * Prediction. A block id's successor is the block that followed it in the
 * latest request whose chain held it (Mooncake's hash ids are prefix
 * hashes: a chain is a request's ordered ids; dmr_kv_pf_learn records
 * them). After a request's lookup, the blocks predicted next are the
 * successors of its last block, then theirs, `depth` deep: the part of an
 * earlier chain this request stopped short of (a later request on the same
 * prefix is expected to go on there), as a prefix cache prefetches the
 * continuation of a matched prefix.
 *
 * The prefetch buffer. Each client keeps the blocks it prefetched, at most
 * `buffer` of them (oldest out first): a prefetch is issued (READ from the
 * pool into the client, off the request's path), then ready; a later
 * request of that client that finds the block ready there takes it from the
 * buffer instead of READing it (the prefetch is used, counted once); a
 * prefetch pushed out, or still in the buffer at the end, unused, is
 * wasted. Issued = used + wasted + in the buffer.
 *
 * The loop (one row of core/loop.c's table, DMR_LOOP_PREFETCH). Signal = the
 * pool's hit ratio in the window (hits / blocks requested; prefetch lookups
 * are not requests). Actuator = the depth, 0..max_depth, starting at 0 (no
 * prefetch). Rule, at each window's end that had requests: the hit ratio
 * fell below the previous window's: one deeper (at most max_depth); else,
 * when the window's prefetches were mostly wasted (used < use_min x issued,
 * some issued): one shallower (at least 0); else keep. Additive steps
 * because the depth is small; use_min (0.5) is ours, no published value.
 *
 * One thread owns it (the sim KV runner). No I/O, no clock. Part of core/kv.
 */
#ifndef DMR_CORE_KV_PREFETCH_H
#define DMR_CORE_KV_PREFETCH_H

#include <stdint.h>

#include "../base/status.h"

typedef struct dmr_kv_pf_cfg {
	uint32_t max_depth; /* 0..DMR_KV_PF_MAX_DEPTH */
	uint32_t buffer;    /* blocks per client's buffer, >= 1 */
	double use_min;	    /* used / issued below which the depth shrinks, [0, 1] */
} dmr_kv_pf_cfg_t;

#define DMR_KV_PF_MAX_DEPTH 64u

/* Defaults: max_depth 8, buffer 64 blocks, use_min 0.5. */
void dmr_kv_pf_cfg_default(dmr_kv_pf_cfg_t *c);

typedef struct dmr_kv_pf dmr_kv_pf_t;

/* A predictor and nclients buffers. DMR_ERR_NOMEM. */
dmr_status_t dmr_kv_pf_create(const dmr_kv_pf_cfg_t *cfg, uint32_t nclients, dmr_kv_pf_t **pf_p,
			      dmr_err_t *err);
void dmr_kv_pf_destroy(dmr_kv_pf_t *pf);

/* Record the chain ids[0..n) (each id's successor := the next). -1 when
 * out of memory (that successor is not recorded), else 0. */
int dmr_kv_pf_learn(dmr_kv_pf_t *pf, const uint64_t *ids, uint32_t n);
/* Up to depth ids predicted after `last` (successor chain, stopping at an
 * id without one or one already listed) into out; returns the count. */
uint32_t dmr_kv_pf_predict(const dmr_kv_pf_t *pf, uint64_t last, uint32_t depth, uint64_t *out);

/* Client c's buffer holds id (issued or ready). */
int dmr_kv_pf_holds(const dmr_kv_pf_t *pf, uint32_t c, uint64_t id);
/* Client c issues a prefetch of id (not held): it enters the buffer, the
 * oldest leaves when full (counted wasted when unused). */
void dmr_kv_pf_issue(dmr_kv_pf_t *pf, uint32_t c, uint64_t id);
/* The prefetch of id by client c completed: ready (if still held). */
void dmr_kv_pf_ready(dmr_kv_pf_t *pf, uint32_t c, uint64_t id);
/* A request of client c wants id: 1 when it is ready in c's buffer (a use,
 * counted the first time), else 0. */
int dmr_kv_pf_take(dmr_kv_pf_t *pf, uint32_t c, uint64_t id);

/* The rule alone: the depth after a window with hit ratio `hit` (previous
 * window: prev; prev < 0: none yet), `issued` prefetches and `used` uses. */
uint32_t dmr_kv_pf_decide(const dmr_kv_pf_cfg_t *cfg, uint32_t depth, double hit, double prev,
			  uint64_t issued, uint64_t used);

/* Close a window: the pool's requested and hits counters now (cumulative);
 * a window without requests decides nothing. Returns the depth. */
uint32_t dmr_kv_pf_window(dmr_kv_pf_t *pf, uint64_t requested, uint64_t hits);
/* The depth now. */
uint32_t dmr_kv_pf_depth(const dmr_kv_pf_t *pf);

/* Counters: prefetches issued, used, wasted (pushed out unused; with
 * at_end, also those unused in the buffers now), the signal of the last
 * decided window, windows decided, moves up and down, the largest depth. */
typedef struct dmr_kv_pf_stats {
	uint64_t issued, used, wasted;
	double signal;
	uint64_t windows, up, down;
	uint32_t depth, max_seen;
} dmr_kv_pf_stats_t;
void dmr_kv_pf_stats(const dmr_kv_pf_t *pf, int at_end, dmr_kv_pf_stats_t *s);

#endif /* DMR_CORE_KV_PREFETCH_H */
