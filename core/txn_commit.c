/*
 * core/txn_commit.c - validation and occ's commit (redo log, write-back to
 * every replica, unlock), and the release after a commit's write-backs
 * (txn.h, docs/PROTOCOLS.md "occ").
 */
#include "txn_impl.h"

/* Stage op i's new image in logbuf at pos: [rec u64][len u64][version u64]
 * [payload]; returns 1 (and sets F_APPLIED) when it is to be written back,
 * 0 when not (absent and not an insert, or its guard is off). */
int dmr_txn_stage(dmr_txn_ctx_t *c, uint32_t i, uint32_t pos)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_txn_opst_t *os = &c->ops[i];
	const dmr_trace_op_t *op = &t->ops[i];
	uint32_t pb = l->t[op->table].payload_bytes;
	const uint8_t *img = image(c, i);
	int apply = !(os->flags & F_ABSENT) || op->kind == DMR_TOP_INSERT;
	if (apply && op->guard.kind != DMR_TGUARD_NONE && op->guard.op == (int16_t)i)
		apply = dmr_txn_guard_true(c, &op->guard) || (os->flags |= F_GUARDOFF, 0);
	if (!apply)
		return 0;
	uint8_t *e = c->logbuf + pos;
	uint64_t ver = rd64(img + 8);
	uint64_t nver = ((ver & DMR_VER_MASK) + 1) & DMR_VER_MASK;
	if (op->kind != DMR_TOP_DELETE)
		nver |= DMR_VER_PRESENT;
	wr64(e, os->rec);
	wr64(e + 8, 8 + pb);
	wr64(e + 16, nver);
	uint8_t *pl = e + 24;
	if (op->kind == DMR_TOP_INSERT)
		memset(pl, 0, pb);
	else
		memcpy(pl, img + DMR_REC_HDR, pb);
	for (uint32_t a = 0; a < op->nacts; a++) {
		const dmr_trace_act_t *act = &op->acts[a];
		uint64_t v;
		if (act->val.op < 0) {
			v = (uint64_t)act->val.lit;
		} else {
			if (!usable(c, act->val.op))
				continue;
			v = word(c, act->val.op, act->val.field);
		}
		uint8_t *f = pl + 8ull * act->field;
		if (act->kind == DMR_TACT_ADD)
			v += rd64(f);
		wr64(f, v);
	}
	os->flags |= F_APPLIED;
	return 1;
}

/* The unlocks (release) after the write-backs completed: lock word 0 on the
 * primary; FORD (DTX::CheckCommitAll) also on every backup of a record it
 * wrote (they hold "invisible"). */
dmr_status_t dmr_txn_release(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int ford = c->eng->protocol == DMR_TXN_PROTO_FORD;
	if (crest_proto(c))
		return dmr_txn_crest_release(c, out);
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED))
			continue;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = ford && (os->flags & F_APPLIED)
				  ? dmr_layout_replicas(l, t->ops[i].table, r)
				  : (r[0] = prim(c, i), 1);
		for (uint32_t j = 0; j < nr; j++) {
			dmr_wr_t *ul = wr_to(c, &n, r[j]);
			ul->opcode = DMR_WR_WRITE;
			ul->local = c->buf + ZERO_OFF;
			ul->remote = lockw(c, i);
			ul->length = 8;
			c->stats->writes++;
		}
		c->stats->locks_released++;
	}
	c->state = ST_COMMIT;
	return posted(dmr_txn_post(c, n), out);
}

dmr_status_t dmr_txn_commit(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, c->state == ST_LOG ? DMR_TXN_PHASE_LOG : DMR_TXN_PHASE_VALIDATE);
	/* stage new images in logbuf: per written op [rec u64][len u64][version u64][payload] */
	uint32_t need = 16, nlocked = 0;
	for (uint32_t i = 0; i < t->nops; i++)
		if (c->ops[i].flags & F_LOCKED) {
			need += 24 + l->t[t->ops[i].table].payload_bytes;
			nlocked++;
		}
	if (nlocked == 0) /* read-only: nothing to write */
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out);
	if (c->eng->protocol == DMR_TXN_PROTO_FORD)
		return dmr_txn_commit_ford(c, need, out);
	if (crest_proto(c))
		return dmr_txn_crest_commit(c, need, out);
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	/* the log record's slots first (RC order: log < write-back), one per
	 * replica of the first written record's table */
	uint32_t nlog = 1 + l->backups;
	uint32_t n = nlog, pos = 0, nw = 0, first = UINT32_MAX;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		if (dmr_txn_stage(c, i, pos)) {
			uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
			uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
			for (uint32_t j = 0; j < nr; j++) {
				wr_writeback(c, &n, r[j], os->rec, pos, pb);
			}
			if (first == UINT32_MAX)
				first = i;
			pos += 24 + pb;
			nw++;
		}
		/* the unlock, in this doorbell if the commit is on one MN */
		dmr_wr_t *ul = wr_to(c, &n, prim(c, i) | 0x80u);
		ul->opcode = DMR_WR_WRITE;
		ul->local = c->buf + ZERO_OFF;
		ul->remote = lockw(c, i);
		ul->length = 8;
	}
	if (nw == 0) {
		/* only unlocks: no log record needed */
		memmove(&c->wrs[0], &c->wrs[nlog], sizeof(dmr_wr_t) * (n - nlog));
		memmove(&c->wr_mn[0], &c->wr_mn[nlog], n - nlog);
		n -= nlog;
	} else {
		/* log record to this worker's ring (wraps) on each replica */
		wr_redo_log(c, nlog, t->ops[first].table, pos);
	}
	/* one MN: one doorbell, RC order keeps log < write-back < unlock */
	uint32_t mn0 = c->wr_mn[0] & 0x7fu, one = 1;
	for (uint32_t i = 0; i < n; i++)
		one &= (c->wr_mn[i] & 0x7fu) == mn0;
	if (one) {
		for (uint32_t i = 0; i < n; i++)
			if (c->wr_mn[i] & 0x80u) {
				c->wr_mn[i] &= 0x7fu;
				c->stats->writes++;
				c->stats->locks_released++;
			}
		c->state = ST_COMMIT;
		return posted(dmr_txn_post(c, n), out);
	}
	/* several MNs: the write-backs now, the unlocks when they completed */
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!(c->wr_mn[i] & 0x80u)) {
			c->wrs[k] = c->wrs[i];
			c->wr_mn[k++] = c->wr_mn[i];
		}
	if (k == 0)
		return dmr_txn_release(c, out);
	c->state = ST_COMMIT_WB;
	return posted(dmr_txn_post(c, k), out);
}

/* logdue (FORD): the undo log of the last execution round is still to be
 * written; it goes with the validation READs (DTX::ExeRW logs, then
 * DTX::Validate), or alone before the commit when there is nothing to
 * validate (CoalescentCommit waits for the log's acknowledgements). */
dmr_status_t dmr_txn_validate(dmr_txn_ctx_t *c, int logdue, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, DMR_TXN_PHASE_EXEC);
	uint32_t nread = 0, nlocked = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		if (c->ops[i].flags & F_LOCKED)
			nlocked++;
		else if (validated_read(c, &t->ops[i], i))
			nread += t->ops[i].count;
	}
	uint32_t n = 0;
	dmr_status_t st;
	/* one read and nothing locked: no validation, unless the read came
	 * from a CN cache (CREST's or --cn-cache: a hit is always validated) */
	if (nread == 0 || (nread == 1 && nlocked == 0 && !c->crest_hits)) {
		if (logdue && (st = dmr_txn_undo_log(c, &n)) != DMR_OK)
			return st;
		if (n == 0)
			return dmr_txn_commit(c, out);
		c->state = ST_LOG;
		return posted(dmr_txn_post(c, n), out);
	}
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		if (apart(c, i)) /* the lock words first, as a header's READ */
			wr_lock_read(c, &n, prim(c, i), i, op->count, lkbuf(c, i) + 8 * op->count);
		dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
		wr->opcode = DMR_WR_READ;
		wr->local = c->buf + c->ops[i].buf + op->count * rb;
		wr->remote = c->ops[i].rec;
		wr->length = op->count == 1 ? DMR_REC_HDR : op->count * rb;
		c->stats->reads++;
		if (l->t[op->table].cell_words) /* crest words: its cell locks again */
			dmr_txn_crest_cell_read(c, i, &n, 1);
	}
	if (logdue && (st = dmr_txn_undo_log(c, &n)) != DMR_OK)
		return st;
	c->state = ST_VALIDATE;
	return posted(dmr_txn_post(c, n), out);
}

dmr_status_t dmr_txn_check_validation(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int ford = c->eng->protocol == DMR_TXN_PROTO_FORD, crest = crest_proto(c);
	if (c->crest_hits && !crest && dmr_txn_cnc_stale(c)) /* --cn-cache */
		return dmr_txn_abort(c, DMR_ABORT_CACHE_STALE, out);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		const uint8_t *a = c->buf + c->ops[i].buf;
		uint8_t *b = c->buf + c->ops[i].buf + op->count * rb;
		uint32_t stride_b = op->count == 1 ? 0 : rb;
		if (apart(c, i)) /* the lock words READ apart into the headers */
			lock_splice(b, stride_b, lkbuf(c, i) + 8 * op->count, op->count);
		if (crest) { /* the cells read: unlocked, same versions */
			if (!dmr_txn_crest_valid(c, i)) {
				if (c->eng->crest->cache) /* stale: not served again */
					dmr_txn_crest_cache_drop(c, c->ops[i].rec,
								 DMR_CREST_LOCK_BITS);
				return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
			}
			continue;
		}
		for (uint32_t r = 0; r < op->count; r++) {
			const uint8_t *ra = a + (uint64_t)r * rb, *rbp = b + (uint64_t)r * stride_b;
			/* FORD compares the version only (CheckValidate) */
			if ((rd64(rbp) != 0 && !ford) || rd64(rbp + 8) != rd64(ra + 8))
				return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
		}
	}
	if (crest && c->eng->crest->cache) /* t_phase: when validation was posted */
		dmr_txn_crest_cache_put(c, c->t_phase);
	return dmr_txn_commit(c, out);
}
