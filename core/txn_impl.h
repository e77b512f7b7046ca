/*
 * core/txn_impl.h - what the files of the transaction core share (not a
 * public interface: included by core/txn*.c only).
 *
 * The core is one state machine (core/txn.c: contexts, posting, execution
 * rounds, abort and retry, the completion dispatch) with its protocol steps
 * in the files below; docs/PROTOCOLS.md describes each protocol:
 *  - core/txn_commit.c: validation and the commit of occ (log, write-back,
 *    unlock), the release shared with ford;
 *  - core/txn_ford.c: FORD's undo log and commit (minghust/ford
 *    DTX::ParallelUndoLog, DTX::CoalescentCommit);
 *  - core/txn_farm.c: the steps of FORD's baselines FaRM and DrTM+H after
 *    execution (minghust/ford core/dtx/dtx_compare*.cc);
 *  - core/txn_crest.c: CREST's cell locks (adslabcuhk/crest): the per-op
 *    cells, the masked lock and unlock, the commit.
 *  - core/txn_motor.c: Motor's version selection, validation and commit
 *    (minghust/motor txn/process/).
 * Every function returns as dmr_txn_on_wc (txn.h): a status, and on DMR_OK
 * the outcome in *out; c->err says why when it is not DMR_OK.
 */
#ifndef DMR_TXN_IMPL_H
#define DMR_TXN_IMPL_H

#include <string.h>

#include "txn.h"

/* Context states (dmr_txn_ctx_t.state). */
enum {
	ST_IDLE = 0,
	ST_EXEC,
	ST_VALIDATE,
	ST_COMMIT,
	ST_ABORT,
	ST_BACKOFF,
	ST_COMMIT_WB,	 /* write-backs posted; the unlocks (release) follow */
	ST_LOG,		 /* FORD: the undo log alone, before the commit */
	ST_LOOKUP,	 /* HASH: bucket READs before an execution round */
	ST_CMP_LOCK,	 /* FARM: the lock CASes; DRTMH: CAS + version READs */
	ST_CMP_VALIDATE, /* FARM: the version READs */
	ST_CMP_BACKUP,	 /* FARM, DRTMH: redo log to the backups + flush */
	ST_CMP_PRIMARY,	 /* FARM, DRTMH: data to the primaries and backups */
	ST_CMP_UNLOCK,	 /* FARM, DRTMH: the unlocks (with the data: no backups) */
	ST_LOCAL_WAIT,	 /* CREST --crest-local: waiting for a local holder */
	ST_MV_VALIDATE,	 /* MOTOR (SR): the read-only records' CVTs re-READ */
	ST_RPC,		 /* by RPC: waiting for the MN's answer (txn_rpc.c) */
};

/* Per-op flags (dmr_txn_opst_t.flags). */
enum {
	F_ISSUED = 1,
	F_SKIPPED = 2,
	F_LOCKED = 4,
	F_ABSENT = 8,
	F_GUARDOFF = 16,
	F_FULL = 32,
	F_APPLIED = 64, /* its new image was written back (to every replica) */
	F_LOGGED = 128, /* FORD: its old image is in an undo log */
};

/* Scratch: 8 zero bytes used as the source of unlock WRITEs; FORD's lock
 * words "locked | invisible" (our tag | DMR_LOCK_INVISIBLE) and
 * "invisible"; the destination of its 1-byte flush READs. */
#define ZERO_OFF 0u
#define INVLOCK_OFF 8u
#define INVIS_OFF 16u
#define FLUSH_OFF 24u
#define BUF_BASE 64u
static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Image (record bytes) of op i. For U/I/D it follows the 8-byte CAS result. */
static inline uint8_t *image(dmr_txn_ctx_t *c, uint32_t i)
{
	uint8_t k = c->txn->ops[i].kind;
	return c->buf + c->ops[i].buf + (k == DMR_TOP_READ ? 0 : 8);
}

/* Payload word f of op i's read image (first record). */
static inline uint64_t word(dmr_txn_ctx_t *c, uint32_t i, uint32_t f)
{
	return rd64(image(c, i) + DMR_REC_HDR + 8ull * f);
}

static inline int usable(const dmr_txn_ctx_t *c, int i)
{
	return i >= 0 && (c->ops[i].flags & F_ISSUED) &&
	       !(c->ops[i].flags & (F_SKIPPED | F_ABSENT));
}

/* WR n of the doorbell under construction, to MN mn (*n advanced). */
static inline dmr_wr_t *wr_to(dmr_txn_ctx_t *c, uint32_t *n, uint32_t mn)
{
	c->wr_mn[*n] = (uint8_t)mn;
	return &c->wrs[(*n)++];
}

/* The write-back of op i's new image to MN mn: a WRITE from the version word
 * on (8 + pb bytes) of the image staged at logbuf + pos (its version word at
 * pos + 16), counted in stats->writes. */
static inline void wr_writeback(dmr_txn_ctx_t *c, uint32_t *n, uint32_t mn, uint64_t rec,
				uint32_t pos, uint32_t pb)
{
	dmr_wr_t *wb = wr_to(c, n, mn);
	wb->opcode = DMR_WR_WRITE;
	wb->local = c->logbuf + pos + 16;
	wb->remote = rec + 8;
	wb->length = 8 + pb;
	c->stats->writes++;
}

/* The redo log record (pos bytes staged at logbuf) into WRs 0..nlog-1,
 * one per replica of `table` (nlog = 1 + backups), at this worker's ring
 * offset, which wraps to 0 when the record does not fit and then advances
 * by pos rounded up to 8; rings are numbered over the cluster (txn.h
 * "Cluster-wide names"). Counted in stats->writes. */
static inline void wr_redo_log(dmr_txn_ctx_t *c, uint32_t nlog, unsigned table, uint32_t pos)
{
	const dmr_layout_t *l = c->eng->layout;
	uint64_t ring = l->log_base + ((uint64_t)c->eng->first_worker + c->worker) * l->log_bytes;
	if (c->log_off + pos > l->log_bytes)
		c->log_off = 0;
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	dmr_layout_replicas(l, table, r);
	for (uint32_t j = 0; j < nlog; j++) {
		dmr_wr_t *logwr = &c->wrs[j];
		c->wr_mn[j] = (uint8_t)r[j];
		logwr->opcode = DMR_WR_WRITE;
		logwr->local = c->logbuf;
		logwr->remote = ring + c->log_off;
		logwr->length = pos;
		c->stats->writes++;
	}
	c->log_off += (pos + 7) & ~7u;
}

/* Lock words apart (core/layout.h dmr_layout_locks; occ and ford): the
 * offset of op i's lock word, the record's own header when its table keeps
 * them there. */
static inline uint64_t lockw(const dmr_txn_ctx_t *c, uint32_t i)
{
	return dmr_layout_lock_of(c->eng->layout, c->txn->ops[i].table, c->ops[i].rec);
}

/* 1 if op i's table keeps its lock words apart. */
static inline int apart(const dmr_txn_ctx_t *c, uint32_t i)
{
	return c->eng->layout->t[c->txn->ops[i].table].lock_base != 0;
}

/* Lock words apart: where op i's lock words READ at execution land, after
 * its images (a read-only op: count words, then count more for
 * validation; a read-write op: one); begin_attempt reserves them. */
static inline uint8_t *lkbuf(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
	return c->buf + c->ops[i].buf + (op->kind == DMR_TOP_READ ? 2ull * op->count * rb : 8 + rb);
}

/* Lock words apart: the READ of the `count` lock words of op i's records
 * (consecutive slots: consecutive words) into dst, at *n, counted in
 * stats->reads. */
static inline void wr_lock_read(dmr_txn_ctx_t *c, uint32_t *n, uint32_t mn, uint32_t i,
				uint32_t count, uint8_t *dst)
{
	dmr_wr_t *wr = wr_to(c, n, mn);
	wr->opcode = DMR_WR_READ;
	wr->local = dst;
	wr->remote = lockw(c, i);
	wr->length = 8 * count;
	c->stats->reads++;
}

/* Lock words apart: the `count` words READ at src put where each record
 * header's copy would be (the first 8 bytes of each record image, stride
 * bytes apart), so the checks read them as with the words in the records. */
static inline void lock_splice(uint8_t *img, uint64_t stride, const uint8_t *src, uint32_t count)
{
	for (uint32_t r = 0; r < count; r++)
		memcpy(img + r * stride, src + 8ull * r, 8);
}

/* The MN of the primary copy of op i's table. */
static inline uint32_t prim(const dmr_txn_ctx_t *c, uint32_t i)
{
	return c->eng->layout->t[c->txn->ops[i].table].primary;
}

/* The time since the current phase began goes to `phase`. */
static inline void phase_end(dmr_txn_ctx_t *c, int phase)
{
	uint64_t now = dmr_be_now(c->eng->be, c->worker);
	c->ph[phase] += now - c->t_phase;
	c->t_phase = now;
}

/* A doorbell (or timer) was handed to the backend with status st: on
 * success the context waits for its completion. */
static inline dmr_status_t posted(dmr_status_t st, dmr_txn_outcome_t *out)
{
	if (st != DMR_OK)
		return st;
	*out = DMR_TXN_RUNNING;
	return DMR_OK;
}

/* txn.c: grow the log buffer to `need` bytes (registered; DMR_ERR_NOMEM or
 * the backend's mr_reg error); DMR_ERR_RANGE, err naming the transaction
 * and its trace line, when need exceeds a worker's log ring (layout.h
 * dmr_layout_log_bytes): the record would run past it. */
dmr_status_t dmr_txn_grow_log(dmr_txn_ctx_t *c, uint32_t need, dmr_err_t *err);
/* txn.c: resolve op i's record slot; returns 1 issue (*slot_p set), 0
 * skip, -1 insert range exhausted. */
int dmr_txn_resolve(dmr_txn_ctx_t *c, uint32_t i, uint64_t *slot_p);
/* txn_rpc.c: at dmr_txn_start, c->rpc set: c->by_rpc = 1 when the
 * transaction goes by RPC, 0 one-sided (a fallback counted when it was
 * asked to). DMR_ERR_INVALID (c->err naming it): a protocol without an RPC
 * path. */
dmr_status_t dmr_txn_rpc_choose(dmr_txn_ctx_t *c);
/* txn_rpc.c: the attempt as one RPC (buffers laid out by begin_attempt). */
dmr_status_t dmr_txn_rpc_attempt(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_rpc.c: the RPC's answer came back. */
dmr_status_t dmr_txn_rpc_on_wc(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn.c: 1 if guard g holds on the images read so far. */
int dmr_txn_guard_true(dmr_txn_ctx_t *c, const dmr_trace_guard_t *g);
/* txn.c: post the n WRs of c->wrs, one doorbell per MN (c->pending). */
dmr_status_t dmr_txn_post(dmr_txn_ctx_t *c, uint32_t n);
/* txn.c: the transaction finished with outcome (COMMITTED or GAVE_UP). */
dmr_status_t dmr_txn_finish(dmr_txn_ctx_t *c, dmr_txn_outcome_t outcome, dmr_txn_outcome_t *out);
/* txn.c: abort with cause (dmr_abort_cause_t): release the locks taken. */
dmr_status_t dmr_txn_abort(dmr_txn_ctx_t *c, int cause, dmr_txn_outcome_t *out);

/* txn_commit.c: stage op i's new image in logbuf at pos; 1 if it is to be
 * written back. */
int dmr_txn_stage(dmr_txn_ctx_t *c, uint32_t i, uint32_t pos);
/* txn_commit.c: the unlocks after the write-backs completed. */
dmr_status_t dmr_txn_release(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_commit.c: the commit (occ's; ford's through dmr_txn_commit_ford). */
dmr_status_t dmr_txn_commit(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_commit.c: validation after the last execution round (logdue: FORD's
 * undo log of that round still to be written). */
dmr_status_t dmr_txn_validate(dmr_txn_ctx_t *c, int logdue, dmr_txn_outcome_t *out);
/* txn_commit.c: the validation READs came back. */
dmr_status_t dmr_txn_check_validation(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

/* txn_ford.c: FORD's undo log added to the doorbell under construction at
 * *n (nothing when nothing is locked). */
dmr_status_t dmr_txn_undo_log(dmr_txn_ctx_t *c, uint32_t *n);
/* txn_ford.c: FORD's commit; need = bytes of the staged images. */
dmr_status_t dmr_txn_commit_ford(dmr_txn_ctx_t *c, uint32_t need, dmr_txn_outcome_t *out);

/* Op i is a read-only op whose records were READ (issued, not skipped):
 * validation re-reads and checks them. */
static inline int validated_read(const dmr_txn_ctx_t *c, const dmr_trace_op_t *op, uint32_t i)
{
	return op->kind == DMR_TOP_READ && (c->ops[i].flags & F_ISSUED) &&
	       !(c->ops[i].flags & F_SKIPPED);
}

/* 1 for FORD's baselines (FARM, DRTMH): execution READs read-write
 * records without a lock; the Compare* steps of txn_farm.c follow. */
static inline int cmp_proto(const dmr_txn_ctx_t *c)
{
	return c->eng->protocol == DMR_TXN_PROTO_FARM || c->eng->protocol == DMR_TXN_PROTO_DRTMH;
}

/* FARM, DRTMH: where op i's version READ at validation lands (after its
 * image; a read-write op's buffer has DMR_REC_HDR more bytes). */
static inline uint8_t *cmp_val(dmr_txn_ctx_t *c, uint32_t i)
{
	return image(c, i) + c->eng->layout->t[c->txn->ops[i].table].rec_bytes;
}

/* txn_farm.c: after the last execution round: FARM's lock round, DRTMH's
 * lock-and-validate round (or the commit when TxCommit skips them). */
dmr_status_t dmr_txn_cmp_lock(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_farm.c: a completion in state ST_CMP_* (the next step). */
dmr_status_t dmr_txn_cmp_on_wc(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

static inline int crest_proto(const dmr_txn_ctx_t *c)
{
	return c->eng->protocol == DMR_TXN_PROTO_CREST;
}

/* CREST: the tickers of the running transaction's type. */
static inline dmr_txn_cr_stats_t *cr_of(const dmr_txn_ctx_t *c)
{
	return &c->cr[c->txn->type < DMR_TRACE_MAX_TYPES ? c->txn->type : 0];
}

/* txn_crest.c: the cells each op of c->txn locks or reads (ops[].cells). */
void dmr_txn_crest_masks(dmr_txn_ctx_t *c);
/* txn_crest.c: op i's lock (masked CAS on its cells) and READ, at *n. */
void dmr_txn_crest_lock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n);
/* txn_crest.c: op i's unlock at *n, with the written cells' versions
 * bumped when its image was written back (F_APPLIED). */
void dmr_txn_crest_unlock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n);
/* txn_crest.c: the commit after validation; need = bytes of the staged
 * images. */
dmr_status_t dmr_txn_crest_commit(dmr_txn_ctx_t *c, uint32_t need, dmr_txn_outcome_t *out);
/* txn_crest.c: the unlocks once the write-backs to several MNs completed. */
dmr_status_t dmr_txn_crest_release(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_crest.c: 1 if every record of read-only op i is still valid at
 * validation: its cells unlocked, their versions those of execution. */
int dmr_txn_crest_valid(dmr_txn_ctx_t *c, uint32_t i);
/* txn_crest.c: 1 if a record of read-only op i has a cell it reads locked
 * in its execution (val 0) or validation (val 1) images. */
int dmr_txn_crest_read_locked(dmr_txn_ctx_t *c, uint32_t i, int val);
/* txn_crest.c, words: the READ of read-only op i's cell lock words, for
 * execution (val 0) or validation (val 1), at *n. */
void dmr_txn_crest_cell_read(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n, int val);
/* txn_crest.c, local execution: the round's n locking ops op[k] on records
 * rec[k]: 0 when their cells are free on this CN (now taken there: the
 * context goes on), else 1 with *st the result of waiting (a poll timer,
 * ST_LOCAL_WAIT) or of the lock abort after the longest wait. */
int dmr_txn_crest_local_gate(dmr_txn_ctx_t *c, uint32_t n, const uint64_t *rec, const uint32_t *op,
			     dmr_status_t *st, dmr_txn_outcome_t *out);
/* txn_crest.c, local execution: drop what the context took on its CN. */
void dmr_txn_crest_local_release(dmr_txn_ctx_t *c);
/* txn_crest.c, CN record cache: 1 if read-only op i (its record resolved
 * in ops[i].rec) is served from this CN's cache: its image (and, words,
 * its cell lock words as unlocked) filled, F_ABSENT set from it; 0: a miss
 * (its READ is to be posted). Counts xstats hits and misses. */
int dmr_txn_crest_cache_hit(dmr_txn_ctx_t *c, uint32_t i);
/* txn_crest.c, CN record cache: validation passed at t_val (ps; when its
 * READs were posted): each validated read of one record puts its image,
 * its cells read servable from t_val. */
void dmr_txn_crest_cache_put(dmr_txn_ctx_t *c, uint64_t t_val);
/* txn_crest.c, CN record cache: the cells in mask (bit c = cell c) of
 * record rec are no longer served (until a validation vouches for them). */
void dmr_txn_crest_cache_drop(dmr_txn_ctx_t *c, uint64_t rec, uint32_t mask);
/* txn_crest.c: after op i's lock came back: the cells it failed to take
 * (0: the lock is ours); *held the cells it holds. */
uint32_t dmr_txn_crest_lock_failed(dmr_txn_ctx_t *c, uint32_t i, uint32_t *held);
/* txn_cncache.c (--cn-cache): the engine's table mask for a transaction
 * starting now (0 for crest and motor, which have none). */
uint32_t dmr_txn_cnc_mask(const dmr_txn_ctx_t *c);
/* txn_cncache.c: 1 if read-only op i (its record resolved in ops[i].rec)
 * is served from its CN's record cache: its image filled, F_ABSENT from it,
 * counted in crest_hits and xstats (a miss in xstats: its READ is to be
 * posted, 0). The caller checked the op's table bit in c->cnc_tables. */
int dmr_txn_cnc_hit(dmr_txn_ctx_t *c, uint32_t i);
/* txn_cncache.c: after the validation READs (crest_hits > 0): 1 if a hit's
 * version changed (its entry dropped, counted by table): the caller aborts
 * with DMR_ABORT_CACHE_STALE. */
int dmr_txn_cnc_stale(dmr_txn_ctx_t *c);
/* txn_cncache.c: read-only op i's READ came back (execution; its table
 * bit set): its image put when it is of one record, unlocked and not a
 * hit. */
void dmr_txn_cnc_fill(dmr_txn_ctx_t *c, uint32_t i);
/* txn_cncache.c: the transaction committed: the records it wrote back
 * dropped. */
void dmr_txn_cnc_commit(dmr_txn_ctx_t *c);
/* MOTOR: op i's CVT images as READ (count records of rec_bytes): after
 * its view, the record(s) in the single-version format the rest of the
 * core reads (image(), word()). */
static inline uint8_t *mv_cvt(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	uint32_t vb = DMR_REC_HDR + c->eng->layout->t[op->table].payload_bytes;
	return image(c, i) + (uint64_t)op->count * vb;
}

/* MOTOR: the counters of the running transaction's type. */
static inline dmr_txn_mv_stats_t *mv_of(const dmr_txn_ctx_t *c)
{
	return &c->mv[c->txn->type < DMR_TRACE_MAX_TYPES ? c->txn->type : 0];
}

/* MOTOR: the vcell op i (a written record) puts its new version in,
 * kept in the word after its CVT image. */
static inline uint8_t *mv_wslot(dmr_txn_ctx_t *c, uint32_t i)
{
	return mv_cvt(c, i) + c->eng->layout->t[c->txn->ops[i].table].rec_bytes;
}

/* txn_motor.c: bytes of op i's buffer (view, CVT images, SR's re-READ). */
uint32_t dmr_txn_mv_buf_bytes(const dmr_txn_ctx_t *c, uint32_t i);
/* txn_motor.c: a new attempt: its start timestamp, each op's buffer from
 * off (flags cleared); returns the end of the last. */
uint32_t dmr_txn_mv_begin(dmr_txn_ctx_t *c, uint32_t off);
/* txn_motor.c: after a round's completion, every issued op of the round:
 * its visible version chosen by the start timestamp and copied into its
 * view, a writer's vcell chosen; returns the abort cause (-1: none), the
 * reason counted by the caller in mv_of(c)->aborts. */
int dmr_txn_mv_views(dmr_txn_ctx_t *c);
/* txn_motor.c: after the last execution round: the commit timestamp, SR's
 * validation, then the commit. */
dmr_status_t dmr_txn_mv_commit_start(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
/* txn_motor.c: SR's validation READs came back. */
dmr_status_t dmr_txn_mv_check_validation(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

#endif
