/*
 * core/txn_crest.h - the cell layout of `--protocol crest` (issue 12 item 2,
 * after adslabcuhk/crest; docs/PROTOCOLS.md "crest").
 *
 * Cells. Each table's payload words are split into cells (CREST's column
 * groups): a table of W payload words has G = min(W, DMR_CREST_MAX_CELLS)
 * cells, word f in cell f * G / W (integer division: contiguous ranges of
 * words, cell c = words [ceil(c W / G), ceil((c + 1) W / G))). TPC-C's
 * warehouse (W_YTD, W_TAX) has two cells, one per word; its district (six
 * words) four: {D_YTD, D_TAX}, {D_NEXT_O_ID}, {D_NEXT_DELIV_O_ID,
 * D_NEXT_OL}, {D_NEXT_DELIV_OL}.
 *
 * The lock word of a record (layout.h: its first 8 bytes) holds, for crest:
 *   bits 0..3   the lock of cell c in bit c (CREST's lock bitmap,
 *               src/db/Format.h RecordHeader::lock: one bit per column);
 *   bits 8+14c .. 21+14c   the version of cell c (14 bits, wrapping;
 *               CREST's per-column versions, RecordHeader::sub_versions).
 * Idle = no lock bit set (the versions stay); the replica check
 * (core/replica.h) takes layout.lock_busy = DMR_CREST_LOCK_BITS for it.
 * A 14-bit version wraps after 16,384 commits to one cell: a reader whose
 * execution and validation READs were 16,384 commits to its cell apart
 * would miss them (documented limit; a run's transactions last
 * microseconds, a commit to one cell takes a lock round trip).
 *
 * Which cells an op touches:
 *  - U: the cells of the words its actions write (set:F, add:F), plus the
 *    cells of any of its words a later op reads (dep K.F, guard K.F<K.G,
 *    act @K.F) or its own guard reads; an update without actions, every
 *    cell. Locked (masked CAS on the bits), written back cell by cell.
 *  - I, D: every cell (the version word's present bit changes).
 *  - R: the cells the trace's annotation says ops of its type read on its
 *    table, plus the cells of its words a later op reads; without an
 *    annotation every cell (conservative). The annotation is the optional
 *    header parameter `# param reads.TYPE.TABLE F[,F...]` (payload words
 *    read; traces/FORMAT.md "Cell annotation"): an old trace without it is
 *    replayed with every cell.
 */
#ifndef DMR_TXN_CREST_H
#define DMR_TXN_CREST_H

#include <stdint.h>

#include "../traces/trace.h"
#include "base/status.h"

#define DMR_CREST_MAX_CELLS 4u
#define DMR_CREST_LOCK_BITS 0xFull
#define DMR_CREST_VER_SHIFT 8u
#define DMR_CREST_VER_BITS 14u
#define DMR_CREST_VER_MASK ((1ull << DMR_CREST_VER_BITS) - 1)

/* How crest takes a cell lock (--crest-locks). MASKED: one masked CAS on the
 * record's lock word for all its cells (CREST's Doorbell.h LockColumns);
 * WORDS: the portable variant, see docs/PROTOCOLS.md "crest". */
typedef enum dmr_crest_locks {
	DMR_CREST_LOCKS_MASKED = 0,
	DMR_CREST_LOCKS_WORDS = 1,
} dmr_crest_locks_t;

/* CREST's localized execution (TxnConfig.h ENABLE_LOCAL_EXECUTION;
 * --crest-local on): per CN, the cells of each record that its
 * transactions hold or are taking. A transaction about to lock cells of a
 * record that another transaction of its CN holds waits for it (polls the
 * table every DMR_CREST_WAIT_POLL_PS) instead of posting a CAS that would
 * fail on the MN; after DMR_CREST_WAIT_MAX_PS it aborts (lock), which
 * breaks a wait cycle among the CN's transactions. Thread-safe (a mutex:
 * the CN's workers are threads on shm and verbs). */
typedef struct dmr_crest_local dmr_crest_local_t;

/* A table for one CN (*lp; free with dmr_crest_local_destroy).
 * DMR_ERR_NOMEM. */
dmr_status_t dmr_crest_local_create(dmr_crest_local_t **lp, dmr_err_t *err);
void dmr_crest_local_destroy(dmr_crest_local_t *l);
/* If none of the n records rec[k] has a cell of mask[k] in the table, add
 * them all and return 1; else add nothing and return 0; -1: out of memory
 * (table growth). */
int dmr_crest_local_take(dmr_crest_local_t *l, const uint64_t *rec, const uint8_t *mask,
			 uint32_t n);
/* Remove cells mask of record rec (taken before). */
void dmr_crest_local_drop(dmr_crest_local_t *l, uint64_t rec, uint8_t mask);

#define DMR_CREST_WAIT_POLL_PS                                                                     \
	1000000ull			    /* 1 us: about half an RDMA round trip                 \
					       (the profiles' idle READ, ~2 us;                    \
					       CREST's coroutines yield a                          \
					       scheduler round) */
#define DMR_CREST_WAIT_MAX_PS 1000000000ull /* 1 ms, then a lock abort */

/* CREST's CN record cache (--crest-cache on, the default as CREST's
 * TxnConfig.h ENABLE_CN_CACHE; docs/PROTOCOLS.md "crest"): per CN, the
 * images of records read by read-only ops (one record per op), each cell
 * with the time a validation last found it unlocked at the image's
 * version. A read-only op whose cells are all fresh in the cache (found
 * within DMR_CREST_CACHE_TTL_PS, its image's lock bits clear) copies the
 * image instead of posting its READ; validation still re-READs the
 * record's header (a transaction with such a hit always validates) and
 * aborts on a changed version or a locked cell, dropping the entry's
 * cells. The CN's own commits drop the cells they write (a reader of the
 * record's other cells still hits). Direct-mapped,
 * DMR_CREST_CACHE_SLOTS entries; thread-safe (a mutex). */
typedef struct dmr_crest_cache dmr_crest_cache_t;

#define DMR_CREST_CACHE_SLOTS                                                                      \
	8192u /* entries per CN (CREST's HandleCache reserves                                      \
		 100,000 record handles, src/db/AddressCache.h;                                    \
		 ours holds images: slots x rec_bytes bytes) */
/* A cell served from the cache was validated at most this long ago: the
 * cell's 14-bit version cannot wrap within it (16,384 commits to one cell
 * in 100 us would be one per 6 ns; each takes a lock CAS and, after its
 * result came back, the unlock: at least one round trip). */
#define DMR_CREST_CACHE_TTL_PS 100000000ull /* 100 us */

/* A cache for one CN holding records of up to rec_bytes bytes (*kp; free
 * with dmr_crest_cache_destroy). DMR_ERR_NOMEM. */
dmr_status_t dmr_crest_cache_create(dmr_crest_cache_t **kp, uint32_t rec_bytes, dmr_err_t *err);
void dmr_crest_cache_destroy(dmr_crest_cache_t *k);

typedef struct dmr_crest {
	dmr_crest_local_t **local;	      /* per CN of this process (NULL: no local
						 execution); owned by the caller */
	dmr_crest_cache_t **cache;	      /* per CN of this process (NULL: no CN
						 record cache); owned by the caller */
	uint64_t cache_ttl_ps;		      /* how long a validated cell may be served from the
						 cache, ps of dmr_be_now; 0: DMR_CREST_CACHE_TTL_PS
						 (a test on a wall-clock backend under a slow
						 sanitizer sets it longer) */
	int locks;			      /* dmr_crest_locks_t */
	uint8_t cells[DMR_TRACE_MAX_TABLES];  /* G per table, 1..DMR_CREST_MAX_CELLS */
	uint32_t words[DMR_TRACE_MAX_TABLES]; /* payload words per table */
	uint8_t all[DMR_TRACE_MAX_TABLES];    /* the mask of every cell: (1 << G) - 1 */
	uint8_t reads[DMR_TRACE_MAX_TYPES][DMR_TRACE_MAX_TABLES]; /* R ops' cells per
								     type and table */
	uint32_t annotated; /* reads.TYPE.TABLE parameters found */
} dmr_crest_t;

/* Fill *cr from trace header h (borrowed during the call): cells per table
 * and the R ops' cells from its reads.TYPE.TABLE parameters. Errors
 * (DMR_ERR_PARSE, err naming `source` (the trace file; NULL: "trace"), the
 * parameter and the field): an unknown type or table, a word that is not a
 * decimal below the table's payload words, an empty list. */
dmr_status_t dmr_crest_init(dmr_crest_t *cr, const dmr_trace_hdr_t *h, const char *source,
			    dmr_err_t *err);

/* CREST's localized execution for cns CNs: cr->local, an array of cns
 * tables (dmr_crest_local_create), owned by the caller (each table freed
 * with dmr_crest_local_destroy, the array with free()). DMR_ERR_NOMEM;
 * tables made before the failure stay in cr->local for the caller to free. */
dmr_status_t dmr_crest_local_alloc(dmr_crest_t *cr, uint32_t cns, dmr_err_t *err);

/* The CN record caches of cns CNs (dmr_crest_cache_create, for the largest
 * record of layout l, borrowed during the call) in cr->cache, owned by the
 * caller (dmr_crest_free). DMR_ERR_NOMEM. */
struct dmr_layout;
dmr_status_t dmr_crest_cache_alloc(dmr_crest_t *cr, uint32_t cns, const struct dmr_layout *l,
				   dmr_err_t *err);
/* Free cr's per-CN tables of cns CNs (local execution and cache; NULL
 * entries and arrays allowed) and set both to NULL. */
void dmr_crest_free(dmr_crest_t *cr, uint32_t cns);

/* The cell of payload word f of table t. */
static inline uint32_t dmr_crest_cell(const dmr_crest_t *cr, unsigned t, uint32_t f)
{
	return (uint32_t)((uint64_t)f * cr->cells[t] / cr->words[t]);
}

/* The first payload word of cell c of table t (c = G: the word count). */
static inline uint32_t dmr_crest_cell_lo(const dmr_crest_t *cr, unsigned t, uint32_t c)
{
	return (uint32_t)(((uint64_t)c * cr->words[t] + cr->cells[t] - 1) / cr->cells[t]);
}

/* The version bits of the cells in mask (bit c = cell c) in a lock word. */
static inline uint64_t dmr_crest_ver_bits(uint32_t mask)
{
	uint64_t b = 0;
	for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++)
		if (mask & (1u << k))
			b |= DMR_CREST_VER_MASK << (DMR_CREST_VER_SHIFT + DMR_CREST_VER_BITS * k);
	return b;
}

/* Lock word lw with the version of every cell in mask incremented (wrapping
 * in its 14 bits) and the other bits unchanged. */
static inline uint64_t dmr_crest_bump(uint64_t lw, uint32_t mask)
{
	for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++)
		if (mask & (1u << k)) {
			uint32_t sh = DMR_CREST_VER_SHIFT + DMR_CREST_VER_BITS * k;
			uint64_t v = ((lw >> sh) + 1) & DMR_CREST_VER_MASK;
			lw = (lw & ~(DMR_CREST_VER_MASK << sh)) | v << sh;
		}
	return lw;
}

#endif
