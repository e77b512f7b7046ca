/*
 * core/txn_motor.c - Motor's steps (minghust/motor, Zhang et al., OSDI'24;
 * docs/PROTOCOLS.md "motor"): timestamps, the choice of the visible
 * version in a consecutive version tuple (core/layout.h), SR's validation
 * and the commit of a new version to the primary and every backup.
 *
 * Execution is the core's (txn.c exec_round: READ for a read-only record,
 * CAS + READ for a written one, on the primary), with the CVT READ after
 * the op's view (txn_impl.h mv_cvt); dmr_txn_mv_views then copies the
 * version each op sees into its view in the single-version format, so
 * guards, keys read from records and the new images (dmr_txn_stage) work
 * on it unchanged.
 */
#include "txn_impl.h"

uint32_t dmr_txn_mv_buf_bytes(const dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	uint32_t vb = DMR_REC_HDR + lt->payload_bytes;
	if (op->kind == DMR_TOP_READ) /* view, CVTs, SR's re-READ of the CVTs */
		return op->count * (vb + 2 * lt->rec_bytes);
	return 8 + vb + lt->rec_bytes + 8; /* CAS result, view, CVT, write vcell */
}

/* Motor: start_time = tx_id = ++tx_id_generator (worker.cc, TXN::Begin),
 * a counter of the CN process: no verb. A retried attempt takes a new
 * one (Motor's loop starts a new transaction instead). */
uint32_t dmr_txn_mv_begin(dmr_txn_ctx_t *c, uint32_t off)
{
	uint64_t *clk = (uint64_t *)(uintptr_t)&c->eng->ts_clock;
	c->start_ts = __atomic_add_fetch(clk, 1, __ATOMIC_SEQ_CST);
	c->commit_ts = 0;
	c->mv_reads = c->mv_old = 0;
	for (uint32_t i = 0; i < c->txn->nops; i++) {
		c->ops[i].flags = 0;
		c->ops[i].buf = off;
		off = (off + dmr_txn_mv_buf_bytes(c, i) + 7) & ~7u;
	}
	return off;
}

/* The vcell of the CVT image rec visible at ts: the valid one with the
 * largest timestamp <= ts (Motor's FindReadPos / ReReadPos), -1 if none.
 * *newest: the valid vcell with the largest timestamp (-1: none valid);
 * *newer: 1 if a valid vcell's timestamp is above ts. */
static int visible(const uint8_t *rec, uint32_t pb, uint32_t vcells, uint64_t ts, int *newest,
		   int *newer)
{
	int sel = -1, top = -1;
	uint64_t sts = 0, tts = 0;
	*newer = 0;
	for (uint32_t k = 0; k < vcells; k++) {
		uint64_t w = rd64(rec + dmr_cvt_vcell_off(pb, k));
		if (!(w & DMR_CVT_VALID))
			continue;
		uint64_t v = w & DMR_CVT_TS_MASK;
		if (top < 0 || v > tts) {
			top = (int)k;
			tts = v;
		}
		if (v > ts)
			*newer = 1;
		else if (sel < 0 || v > sts) {
			sel = (int)k;
			sts = v;
		}
	}
	*newest = top;
	return sel;
}

/* Motor's FindWritePos: the first invalid vcell, else the oldest one when
 * the start timestamp is not below its timestamp (coordinator-active GC);
 * -1 when there is none. */
static int write_slot(const uint8_t *rec, uint32_t pb, uint32_t vcells, uint64_t start_ts)
{
	int min = 0;
	uint64_t mts = UINT64_MAX;
	for (uint32_t k = 0; k < vcells; k++) {
		uint64_t w = rd64(rec + dmr_cvt_vcell_off(pb, k));
		if (!(w & DMR_CVT_VALID))
			return (int)k;
		if ((w & DMR_CVT_TS_MASK) < mts) {
			mts = w & DMR_CVT_TS_MASK;
			min = (int)k;
		}
	}
	return start_ts >= mts ? min : -1;
}

int dmr_txn_mv_views(dmr_txn_ctx_t *c)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int sr = c->eng->isolation == DMR_TXN_ISO_SR;
	int rw_txn = 0;
	for (uint32_t i = 0; i < t->nops && !rw_txn; i++)
		rw_txn = t->ops[i].kind != DMR_TOP_READ;
	int reason = -1;
#define MV_REASON(r)                                                                               \
	do {                                                                                       \
		if (reason < 0)                                                                    \
			reason = (r);                                                              \
	} while (0)
	for (uint32_t i = c->round_op; i < t->nops && t->ops[i].round == c->round; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_ISSUED))
			continue;
		const dmr_layout_table_t *lt = &l->t[op->table];
		uint32_t pb = lt->payload_bytes, vb = DMR_REC_HDR + pb;
		int writer = op->kind != DMR_TOP_READ;
		const uint8_t *cvt = mv_cvt(c, i);
		uint8_t *view = image(c, i);
		for (uint32_t r = 0; r < op->count; r++) {
			const uint8_t *rec = cvt + (uint64_t)r * lt->rec_bytes;
			uint8_t *v = view + (uint64_t)r * vb;
			int newest, newer;
			int sel = visible(rec, pb, l->vcells, c->start_ts, &newest, &newer);
			wr64(v, rd64(rec)); /* the lock word, as READ */
			/* SR: a read-write transaction seeing a newer version must
			 * abort at validation (Motor's EARLY_ABORT); SI: a writer
			 * whose record has a version newer than its snapshot loses
			 * (first committer wins) */
			if (newer && (writer || (sr && rw_txn)))
				MV_REASON(DMR_MV_NEWER);
			uint64_t ts = 0;
			if (sel < 0) {
				if (newest >= 0)
					MV_REASON(DMR_MV_NOVIS);
				wr64(v + 8, 0); /* absent */
				memset(v + DMR_REC_HDR, 0, pb);
			} else {
				const uint8_t *vc = rec + dmr_cvt_vcell_off(pb, (uint32_t)sel);
				uint64_t w = rd64(vc);
				if (rd64(vc + 16 + pb) != w)
					MV_REASON(DMR_MV_CHANGED); /* being written */
				ts = w & DMR_CVT_TS_MASK;
				wr64(v + 8, (w & DMR_VER_PRESENT) | ts);
				memcpy(v + DMR_REC_HDR, vc + 16, pb);
				c->mv_reads++;
				c->mv_old += sel != newest;
			}
		}
		if (writer) {
			int ws = write_slot(cvt, pb, l->vcells, c->start_ts);
			if (ws < 0)
				MV_REASON(DMR_MV_NOSLOT);
			*mv_wslot(c, i) = (uint8_t)(ws < 0 ? 0 : ws);
		}
	}
#undef MV_REASON
	return reason;
}

/* Motor's CommitAll (txn/process/commit.cc): per written record, its new
 * vcell WRITten to the primary and to each backup (not locked there); the
 * unlocks on the primaries once every WRITE completed (dmr_txn_release).
 * Motor puts the unlock in the primary's doorbell (WriteReplica:
 * SetVCellReq ... UnlockReq): a backup WRITE still in flight after the
 * unlock can then be overtaken on its vcell by a later writer's (the V-th
 * next version of the record lands in the same vcell), found on shm with 2
 * versions by the replica check; so the unlocks are a round later, as
 * occ's across MNs. */
static dmr_status_t mv_commit(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	uint32_t need = 16;
	for (uint32_t i = 0; i < t->nops; i++)
		if (c->ops[i].flags & F_LOCKED)
			need += 48 + l->t[t->ops[i].table].payload_bytes;
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	uint32_t n = 0, pos = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		if (dmr_txn_stage(c, i, pos + 8)) {
			/* stage wrote [rec][len][version][payload] at pos + 8; the
			 * vcell [word][base][payload][anchor] starts at pos + 16 */
			uint8_t *e = c->logbuf + pos;
			uint64_t w = (rd64(e + 24) & DMR_VER_PRESENT) | DMR_CVT_VALID |
				     (c->commit_ts & DMR_CVT_TS_MASK);
			wr64(e + 16, w);
			/* base: the version read (the view's, txn_impl.h) */
			wr64(e + 24, rd64(image(c, i) + 8) & DMR_CVT_TS_MASK);
			wr64(e + 32 + pb, w);
			uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
			uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
			for (uint32_t j = 0; j < nr; j++) {
				dmr_wr_t *wr = wr_to(c, &n, r[j]);
				wr->opcode = DMR_WR_WRITE;
				wr->local = e + 16;
				wr->remote = os->rec + dmr_cvt_vcell_off(pb, *mv_wslot(c, i));
				wr->length = dmr_cvt_vcell_bytes(pb);
				c->stats->writes++;
			}
			pos += (40 + pb + 7) & ~7u;
		}
	}
	if (n == 0) /* locked, nothing to write: the unlocks only */
		return dmr_txn_release(c, out);
	c->state = ST_COMMIT_WB;
	return posted(dmr_txn_post(c, n), out);
}

/* Motor's TXN::Commit: a read-only transaction commits at once; else the
 * commit timestamp (commit_time = ++tx_id_generator, after every lock is
 * held), SR's validation (TXN::Validate: the read-only records' CVTs
 * READ again; SI validates nothing, CheckValidate returns true), then
 * CommitAll. */
dmr_status_t dmr_txn_mv_commit_start(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, DMR_TXN_PHASE_EXEC);
	uint32_t nlocked = 0;
	for (uint32_t i = 0; i < t->nops; i++)
		nlocked += (c->ops[i].flags & F_LOCKED) != 0;
	if (nlocked == 0)
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out);
	uint64_t *clk = (uint64_t *)(uintptr_t)&c->eng->ts_clock;
	c->commit_ts = __atomic_add_fetch(clk, 1, __ATOMIC_SEQ_CST);
	uint32_t n = 0;
	if (c->eng->isolation == DMR_TXN_ISO_SR)
		for (uint32_t i = 0; i < t->nops; i++) {
			const dmr_trace_op_t *op = &t->ops[i];
			if (!validated_read(c, op, i))
				continue;
			uint32_t rb = l->t[op->table].rec_bytes;
			dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
			wr->opcode = DMR_WR_READ;
			wr->local = mv_cvt(c, i) + (uint64_t)op->count * rb;
			wr->remote = c->ops[i].rec;
			wr->length = op->count * rb;
			c->stats->reads++;
		}
	if (n == 0) {
		phase_end(c, DMR_TXN_PHASE_VALIDATE);
		return mv_commit(c, out);
	}
	c->state = ST_MV_VALIDATE;
	return posted(dmr_txn_post(c, n), out);
}

/* Motor's CheckValidate (SR): a read-only record locked (by another
 * transaction), or whose version visible at the commit timestamp is not
 * the one read, aborts. */
dmr_status_t dmr_txn_mv_check_validation(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, DMR_TXN_PHASE_VALIDATE);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		const dmr_layout_table_t *lt = &l->t[op->table];
		uint32_t pb = lt->payload_bytes, vb = DMR_REC_HDR + pb;
		const uint8_t *re = mv_cvt(c, i) + (uint64_t)op->count * lt->rec_bytes;
		for (uint32_t r = 0; r < op->count; r++) {
			const uint8_t *rec = re + (uint64_t)r * lt->rec_bytes;
			uint64_t lock = rd64(rec);
			int newest, newer;
			int sel = visible(rec, pb, l->vcells, c->commit_ts, &newest, &newer);
			uint64_t now = sel < 0 ? 0
					       : rd64(rec + dmr_cvt_vcell_off(pb, (uint32_t)sel)) &
						     DMR_CVT_TS_MASK;
			uint64_t was = rd64(image(c, i) + (uint64_t)r * vb + 8) & DMR_CVT_TS_MASK;
			if ((lock != 0 && lock != c->tag) || now != was) {
				mv_of(c)->aborts[DMR_MV_CHANGED]++;
				return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
			}
		}
	}
	return mv_commit(c, out);
}
