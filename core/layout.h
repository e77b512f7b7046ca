/*
 * core/layout.h - where tables and logs live in the MN region.
 *
 * A record is {lock u64, version u64, payload} at
 * base(table) + slot * (16 + payload_bytes). The version word holds the
 * version in bits 0..62 and the "present" flag in bit 63 (a slot never
 * inserted, or deleted, is absent). Lock word 0 = free; a holder writes its
 * context tag (never 0). After the tables, each worker has a log ring of
 * log_bytes for commit log records.
 *
 * Several memory nodes (issue 11). A cluster has `mns` MNs (1..16) and each
 * table a primary MN and `backups` backup MNs (0..2, fewer than mns). Every
 * MN region has the same layout: a record sits at the same offset on its
 * primary and on its backups (and the log rings at the same offsets on
 * every MN), so an address names a record on any of its replicas. The
 * placement follows FORD (minghust/ford, workload/<wl>/<wl>_db.cc
 * LoadTable: the primary of table t is MN t % num_server; MN n holds a
 * backup of t when t % num_server == (n - i + num_server) % num_server for
 * i = 1..BACKUP_DEGREE), i.e. primary(t) = t % mns and backup i (1..R) of t
 * is MN (t % mns + i) % mns: distinct MNs, since R < mns.
 */
#ifndef DMR_LAYOUT_H
#define DMR_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "../traces/trace.h"

#define DMR_REC_HDR 16u
#define DMR_VER_PRESENT (1ull << 63)
#define DMR_VER_MASK (DMR_VER_PRESENT - 1)
#define DMR_LAYOUT_MAX_MNS 16u	  /* = DMR_BE_MAX_MNS (backends/backend.h) */
#define DMR_LAYOUT_MAX_BACKUPS 2u /* FORD's BACKUP_DEGREE (core/base/common.h) */

/* The MN hash index (issue 11 item 3; --index hash). Per table, buckets of
 * DMR_IDX_SLOTS slots {key u64, record address u64}, after the log rings;
 * key k lives in bucket k % buckets (CREST src/db/PoolHashIndex.h kDirect:
 * "key % bucket_num"), in the first free slot; an empty slot has key
 * DMR_IDX_EMPTY. A bucket is DMR_IDX_BUCKET_BYTES: one READ fetches it
 * (FORD and CREST READ a whole bucket, hash_store.h HashNode, to find a
 * key). 8 slots x 16 bytes = 128 bytes, two cache lines. Keys are a table's
 * slots, all indexed at load (a slot's address never changes; inserts set
 * its present bit). The index is placed with its table (primary and
 * backups, at the same offsets). */
#define DMR_IDX_SLOTS 8u
#define DMR_IDX_BUCKET_BYTES (16u * DMR_IDX_SLOTS)
#define DMR_IDX_EMPTY UINT64_MAX

typedef struct dmr_layout_table {
	uint64_t base; /* byte offset in the MN region */
	uint64_t rows;
	uint32_t rec_bytes; /* 16 + payload_bytes */
	uint32_t payload_bytes;
	uint64_t loaded;
	uint64_t idx_base;    /* hash index: first bucket (0 buckets: none) */
	uint64_t idx_buckets; /* buckets of DMR_IDX_SLOTS slots */
	uint64_t cell_base;   /* crest --crest-locks words: the cell lock words,
				 cell_words per record (0 words: none) */
	uint32_t cell_words;
	uint64_t lock_base;			/* lock words apart (dmr_layout_locks):
						   record s's at lock_base + 8 s;
						   0: in the record header */
	uint8_t primary;			/* MN holding the primary copy */
	uint8_t backup[DMR_LAYOUT_MAX_BACKUPS]; /* MNs of backups 1..R */
} dmr_layout_table_t;

typedef struct dmr_layout {
	uint32_t ntables;
	dmr_layout_table_t t[DMR_TRACE_MAX_TABLES];
	uint64_t log_base;  /* first log ring */
	uint64_t log_bytes; /* per worker */
	uint32_t nworkers;
	uint64_t total;	    /* bytes needed in each MN region */
	uint32_t mns;	    /* memory nodes (1 after dmr_layout_init) */
	uint32_t backups;   /* backups per table (0 after dmr_layout_init) */
	uint64_t lock_busy; /* the bits of a lock word that mean held (~0 after
			       dmr_layout_init; crest: its cell lock bits,
			       core/txn_crest.h): core/replica.h's idle check */
	uint64_t lk_base;   /* lock words apart: the lock-word region */
	uint64_t lk_bytes;  /* [lk_base, lk_base + lk_bytes) (0: none) */
	uint32_t vcells;    /* versions per record (0: the single-version record
			       above; V > 0: consecutive version tuples, below) */
	uint8_t indexed;    /* some table has a hash index (dmr_layout_index) */
	char names[DMR_TRACE_MAX_TABLES][DMR_TRACE_NAME_MAX]; /* table names */
} dmr_layout_t;

/* Consecutive version tuples (--protocol motor; minghust/motor
 * txn/memstore/cvt.h CVT: a Header with the lock, then MAX_VCELL_NUM
 * VCells, 4 in its default TPC-C build, txn/flags.h). With l->vcells = V a
 * record is {lock u64, 0 u64, V vcells}, a vcell {word u64, base u64,
 * payload, anchor u64}: word = DMR_VER_PRESENT (the row exists in this
 * version) | DMR_CVT_VALID (the vcell holds a committed version) | commit
 * timestamp (bits 0..61); base = the timestamp of the version the writer
 * read and built this one from (0: none, an insert into an absent row);
 * anchor = word once the whole vcell is written (Motor's sa/ea anchors: a
 * reader finding them different read a vcell being written). Loaded rows:
 * vcell 0 = PRESENT | VALID | 1 (Motor's tx_id_generator starts at 1),
 * base 0, the others 0 (invalid). Unlike Motor, the payload sits in its
 * vcell (Motor keeps one full value and per-version attribute deltas
 * elsewhere, cvt.h remote_full_value_offset), and base is ours (Motor's
 * VCell has none): it lets core/replica.c check that every version of a
 * chain was built from the one before it (no lost update). */
#define DMR_CVT_VALID (1ull << 62)
#define DMR_CVT_TS_MASK (DMR_CVT_VALID - 1)
#define DMR_CVT_VCELLS 4u     /* Motor's MAX_VCELL_NUM for TPC-C (txn/flags.h) */
#define DMR_CVT_MAX_VCELLS 8u /* the most dmr_layout_cvt accepts */

/* Bytes of one vcell of table t: word, base, payload, anchor. */
static inline uint32_t dmr_cvt_vcell_bytes(uint32_t payload_bytes)
{
	return 24u + payload_bytes;
}

/* Offset of vcell k in a record (from its lock word). */
static inline uint32_t dmr_cvt_vcell_off(uint32_t payload_bytes, uint32_t k)
{
	return DMR_REC_HDR + k * dmr_cvt_vcell_bytes(payload_bytes);
}

/* The vcell of rec (a record's bytes, V vcells) holding its newest
 * committed version: its index, or -1 when no vcell is valid (the row is
 * absent). */
static inline int dmr_cvt_newest(const uint8_t *rec, uint32_t payload_bytes, uint32_t vcells)
{
	int best = -1;
	uint64_t bts = 0;
	for (uint32_t k = 0; k < vcells; k++) {
		uint64_t w;
		__builtin_memcpy(&w, rec + dmr_cvt_vcell_off(payload_bytes, k), 8);
		if ((w & DMR_CVT_VALID) && (best < 0 || (w & DMR_CVT_TS_MASK) > bts)) {
			best = (int)k;
			bts = w & DMR_CVT_TS_MASK;
		}
	}
	return best;
}

/* The newest committed version of record `slot` of table t in mem (an MN
 * region holding t) for a reader of the final state (the workload
 * verifiers): *payload_p its payload, *version_p (may be NULL) its
 * timestamp; returns 1 present, 0 absent (no valid vcell, or a delete).
 * Defined at the end of this file (it uses dmr_layout_rec). */
static inline int dmr_cvt_read(const dmr_layout_t *l, const uint8_t *mem, unsigned t, uint64_t slot,
			       const uint64_t **payload_p, uint64_t *version_p);

/* The bytes of a worker's log ring for the trace's tables: 64 KiB, or 16
 * log records of the largest table's (24 + payload bytes each: core's
 * redo record) and 64 bytes when that is more (payloads over 4,068 B),
 * rounded up to 64 bytes. Every caller
 * of dmr_layout_init for a trace's replay (the run, the MN and CN roles)
 * takes it from here, so that their layouts agree. A transaction whose
 * log record is larger fails with its trace line (dmr_txn_grow_log);
 * before, a record of more than 64 KiB was written past its ring: into
 * the next worker's ring, the hash index after the rings, or past the
 * region (a trial on 2026-12-05: payloads of 64 KiB and more). */
uint64_t dmr_layout_log_bytes(const dmr_trace_hdr_t *h);

/* Compute the layout of the trace's tables plus nworkers log rings of
 * log_bytes each (tables 64-byte aligned), placed on one MN (mns 1,
 * backups 0, every primary MN 0). DMR_ERR_RANGE on overflow. */
dmr_status_t dmr_layout_init(dmr_layout_t *l, const dmr_trace_hdr_t *h, uint32_t nworkers,
			     uint64_t log_bytes, dmr_err_t *err);

/* Re-lay a layout fresh from dmr_layout_init with `vcells` versions per
 * record (consecutive version tuples, above): rec_bytes = 16 + vcells x
 * (24 + payload), table bases, log rings and total recomputed. Call before
 * dmr_layout_place and dmr_layout_index. Errors (l unchanged, err naming
 * the value): DMR_ERR_RANGE for vcells outside 1..DMR_CVT_MAX_VCELLS or an
 * overflow. */
dmr_status_t dmr_layout_cvt(dmr_layout_t *l, uint32_t vcells, dmr_err_t *err);

/* Place the tables on `mns` MNs with `backups` backups each, by FORD's rule
 * (above). Errors (l unchanged, err naming the values): DMR_ERR_RANGE for
 * mns outside 1..DMR_LAYOUT_MAX_MNS or backups above
 * DMR_LAYOUT_MAX_BACKUPS; DMR_ERR_INVALID for backups >= mns (a backup on
 * its own primary's MN). */
dmr_status_t dmr_layout_place(dmr_layout_t *l, uint32_t mns, uint32_t backups, dmr_err_t *err);

/* An explicit placement of one table (a cluster config's "placement"
 * entry): mn[0] its primary, mn[1..n) its backups. */
typedef struct dmr_layout_pin {
	char table[DMR_TRACE_NAME_MAX];
	uint32_t n; /* 1 + backups */
	uint32_t mn[1 + DMR_LAYOUT_MAX_BACKUPS];
} dmr_layout_pin_t;

/* After dmr_layout_place: put table pin->table on pin->mn[] instead of
 * FORD's rule. Errors (l unchanged, err naming the table and the field):
 * DMR_ERR_INVALID for a table the trace does not have, a count other than
 * 1 + l->backups, an MN >= l->mns, or an MN listed twice. */
dmr_status_t dmr_layout_pin(dmr_layout_t *l, const dmr_layout_pin_t *pin, dmr_err_t *err);

/* The placement as text into buf (size bytes, always terminated):
 * "mns=M backups=R name:P/B1,B2 name:P ..." (P the primary MN, Bi the
 * backups). Returns the length it needed (as snprintf: >= size means cut). */
int dmr_layout_placement(const dmr_layout_t *l, char *buf, size_t size);

/* Add the hash index: buckets buckets per table (0: ceil(rows / 4), a load
 * of at most 1/2), after the log rings; total grows. Errors (l unchanged):
 * DMR_ERR_RANGE when a table has more keys (rows) than buckets x
 * DMR_IDX_SLOTS slots, err naming the table and the buckets it needs;
 * DMR_ERR_RANGE on overflow. */
dmr_status_t dmr_layout_index(dmr_layout_t *l, uint64_t buckets, dmr_err_t *err);

/* crest's portable variant (core/txn_crest.h, --crest-locks words): per
 * table t, words[t] 8-byte cell lock words per record (0: none), after
 * everything laid out so far (64-byte aligned); record s of t has its
 * words at cell_base + s * 8 * cell_words, zero at load (free). Placed with
 * the table (the same offsets on every MN; only the primary's are used).
 * Errors (l unchanged): DMR_ERR_RANGE on overflow, err naming the table. */
dmr_status_t dmr_layout_cells(dmr_layout_t *l, const uint8_t *words, dmr_err_t *err);

/* Lock words apart from their records (issue 16 item 3; --locks-apart,
 * verbs --dm-locks; docs/MODEL.md "Device memory"): for each table t with
 * apart[t] != 0, its lock words -- 8 bytes per record, record s's at
 * lock_base + 8 s -- move out of the record headers into one lock-word
 * region laid out after everything so far (64-byte aligned; every table's
 * words 64-byte aligned), [lk_base, lk_base + lk_bytes), at the same
 * offsets on every MN (only the MNs holding a table use its words). The
 * record keeps its 16-byte header; its lock word stays 0 (never written):
 * the core reads the lock word apart and puts it where the header's copy
 * would be (core/txn.c). The region is what a backend may serve from
 * memory of its own (DMR_BE_CTL_LOCK_REGION: device memory). Call after
 * dmr_layout_index and dmr_layout_cells, at most once. Errors (l
 * unchanged): DMR_ERR_RANGE on overflow, err naming the table;
 * DMR_ERR_INVALID when no table is chosen. */
dmr_status_t dmr_layout_locks(dmr_layout_t *l, const uint8_t *apart, dmr_err_t *err);

/* Offset of the lock word of the record at offset rec of table t: rec
 * itself, or its word in the lock-word region (dmr_layout_locks). */
static inline uint64_t dmr_layout_lock_of(const dmr_layout_t *l, unsigned t, uint64_t rec)
{
	const dmr_layout_table_t *lt = &l->t[t];
	return lt->lock_base ? lt->lock_base + (rec - lt->base) / lt->rec_bytes * 8 : rec;
}

/* Offset of cell lock word k of record slot of table t (dmr_layout_cells). */
static inline uint64_t dmr_layout_cell_word(const dmr_layout_t *l, unsigned t, uint64_t slot,
					    uint32_t k)
{
	return l->t[t].cell_base + (slot * l->t[t].cell_words + k) * 8;
}

/* Offset of the bucket holding key slot of table t in the MN region. */
static inline uint64_t dmr_layout_bucket(const dmr_layout_t *l, unsigned table, uint64_t slot)
{
	return l->t[table].idx_base + (slot % l->t[table].idx_buckets) * DMR_IDX_BUCKET_BYTES;
}

/* The MNs holding table t: out[0] the primary, out[1..R] the backups;
 * returns 1 + R. */
static inline uint32_t dmr_layout_replicas(const dmr_layout_t *l, unsigned table,
					   uint32_t out[1 + DMR_LAYOUT_MAX_BACKUPS])
{
	out[0] = l->t[table].primary;
	for (uint32_t i = 0; i < l->backups; i++)
		out[1 + i] = l->t[table].backup[i];
	return 1 + l->backups;
}

static inline uint64_t dmr_layout_rec(const dmr_layout_t *l, unsigned table, uint64_t slot)
{
	return l->t[table].base + slot * l->t[table].rec_bytes;
}

/* Write the initial MN state into mem (the region, zeroed): the version word
 * of loaded rows gets DMR_VER_PRESENT | 1, for every table (one MN). */
void dmr_layout_load(const dmr_layout_t *l, uint8_t *mem);

/* The same for MN `mn` of a placed layout: only the tables whose primary or
 * backup is `mn` are loaded (the others stay zero there, never addressed),
 * with their hash index when there is one (every key's slot filled). */
void dmr_layout_load_mn(const dmr_layout_t *l, uint32_t mn, uint8_t *mem);

/*
 * The bytes [off, off + len) of what dmr_layout_load_mn writes into MN
 * `mn`'s region, written into dst (dst[0] is byte off; the caller zeroed
 * dst[0..len)): the bytes in the range of the version words of the loaded
 * rows of the tables `mn` holds (any range: a word it cuts is cut). For a
 * backend that writes the initial region lazily, piece by piece
 * (DMR_BE_CTL_LAZY_INIT, backends/backend.h). Returns 0, or -1 when the
 * layout has a hash index or version tuples (not done lazily:
 * dmr_layout_load_mn writes them whole), nothing written; len 0 asks
 * which, writing nothing.
 */
int dmr_layout_load_range(const dmr_layout_t *l, uint32_t mn, uint64_t off, uint64_t len,
			  uint8_t *dst);

/* 1 if MN `mn` holds a copy (primary or backup) of table t. */
int dmr_layout_holds(const dmr_layout_t *l, unsigned table, uint32_t mn);

static inline int dmr_cvt_read(const dmr_layout_t *l, const uint8_t *mem, unsigned t, uint64_t slot,
			       const uint64_t **payload_p, uint64_t *version_p)
{
	const uint8_t *rec = mem + dmr_layout_rec(l, t, slot);
	uint32_t pb = l->t[t].payload_bytes;
	int k = dmr_cvt_newest(rec, pb, l->vcells);
	if (k < 0)
		return 0;
	const uint8_t *vc = rec + dmr_cvt_vcell_off(pb, (uint32_t)k);
	uint64_t w;
	__builtin_memcpy(&w, vc, 8);
	if (version_p)
		*version_p = w & DMR_CVT_TS_MASK;
	*payload_p = (const uint64_t *)(const void *)(vc + 16);
	return (w & DMR_VER_PRESENT) ? 1 : 0;
}

#endif
