/*
 * core/txn_ford.c - FORD's own steps (minghust/ford, docs/PROTOCOLS.md
 * "ford"): the undo log to every MN and the commit with invisible lock
 * words and a selective flush.
 */
#include "txn_impl.h"

/* FORD (DTX::ParallelUndoLog, after each execution round of a read-write
 * transaction): the undo log record -- 16 bytes of tx and thread id and the
 * old image of each record locked since the last one -- WRITten to the same
 * ring offset on every MN, added to the doorbell under construction at
 * *n. A transaction with nothing locked writes none. */
dmr_status_t dmr_txn_undo_log(dmr_txn_ctx_t *c, uint32_t *n)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int rw = 0;
	uint32_t need = 16;
	for (uint32_t i = 0; i < t->nops; i++)
		if (c->ops[i].flags & F_LOCKED) {
			rw = 1;
			if (!(c->ops[i].flags & F_LOGGED) && t->ops[i].kind != DMR_TOP_INSERT)
				need += l->t[t->ops[i].table].rec_bytes;
		}
	if (!rw)
		return DMR_OK;
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	wr64(c->logbuf, t->id);
	wr64(c->logbuf + 8, (uint64_t)c->eng->first_worker + c->worker);
	uint32_t pos = 16;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED) || (os->flags & F_LOGGED))
			continue;
		os->flags |= F_LOGGED;
		if (t->ops[i].kind == DMR_TOP_INSERT)
			continue;
		uint32_t rb = l->t[t->ops[i].table].rec_bytes;
		memcpy(c->logbuf + pos, image(c, i), rb);
		pos += rb;
	}
	uint64_t ring = l->log_base + ((uint64_t)c->eng->first_worker + c->worker) * l->log_bytes;
	if (c->log_off + pos > l->log_bytes)
		c->log_off = 0;
	for (uint32_t mn = 0; mn < l->mns; mn++) {
		dmr_wr_t *wr = wr_to(c, n, mn);
		wr->opcode = DMR_WR_WRITE;
		wr->local = c->logbuf;
		wr->remote = ring + c->log_off;
		wr->length = pos;
		c->stats->writes++;
	}
	c->log_off += (pos + 7) & ~7u;
	return DMR_OK;
}

/* FORD's commit (DTX::CoalescentCommit, IssueCommitAllSelectFlush): per
 * record written, on its primary WRITE lock word := tag | invisible and
 * WRITE the data; on each backup lock word := invisible and the data; one
 * 1-byte READ per backup after the last record's writes (selective flush).
 * The release follows their completion. */
dmr_status_t dmr_txn_commit_ford(dmr_txn_ctx_t *c, uint32_t need, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	uint32_t n = 0, pos = 0;
	int last = -1;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED) || !dmr_txn_stage(c, i, pos))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
		for (uint32_t j = 0; j < nr; j++) {
			dmr_wr_t *lk = wr_to(c, &n, r[j]);
			lk->opcode = DMR_WR_WRITE;
			lk->local = c->buf + (j == 0 ? INVLOCK_OFF : INVIS_OFF);
			lk->remote = lockw(c, i);
			lk->length = 8;
			c->stats->writes++;
			wr_writeback(c, &n, r[j], os->rec, pos, pb);
		}
		pos += 24 + pb;
		last = (int)i;
	}
	if (last < 0) /* locked but nothing to write: release only */
		return dmr_txn_release(c, out);
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	uint32_t nr = dmr_layout_replicas(l, t->ops[last].table, r);
	for (uint32_t j = 1; j < nr; j++) {
		dmr_wr_t *fl = wr_to(c, &n, r[j]);
		fl->opcode = DMR_WR_READ;
		fl->local = c->buf + FLUSH_OFF;
		fl->remote = c->ops[last].rec;
		fl->length = 1;
		c->stats->reads++;
	}
	c->state = ST_COMMIT_WB;
	return posted(dmr_txn_post(c, n), out);
}
