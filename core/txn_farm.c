/*
 * core/txn_farm.c - FORD's baselines FaRM and DrTM+H (minghust/ford, its
 * txn_system 0 and 1; docs/PROTOCOLS.md "farm and drtmh"): the steps after
 * execution, each named after the FORD function it follows
 * (core/dtx/dtx_exe_commit.cc DTX::TxCommit; dtx_compare.cc,
 * dtx_compare_issue.cc, dtx_compare_check.cc). Execution is txn.c's
 * exec_round with the read-write records READ unlocked (DTX::CompareExeRW,
 * CompareIssueReadRW); FORD's flags as built (core/flags.h): RFLUSH 2
 * (selective flush), LOCK_WAIT 0 (a held lock aborts), USE_LOCAL_ADDR_CACHE
 * 0 (txn.c's --index and --addr-cache apply as for the other protocols).
 *
 * Version READs. FORD READs the 8-byte version (sizeof(version_t)); ours
 * READ the 16-byte header (lock word and version): one READ either way,
 * and DrTM+H's lock word, READ behind the CAS in the same doorbell, tells a
 * replayed CAS from a failed one as in occ (txn.h "Lock CAS results").
 * FaRM's lock CAS has no READ behind it: a CAS returning this context's own
 * tag is taken as replayed and the lock as ours (no other WR writes our tag,
 * and every lock of an earlier attempt was released, its release completed,
 * before this attempt began).
 */
#include "txn_impl.h"

/* Op i is a read-write op that was issued (READ in execution, to lock). */
static inline int rw_issued(const dmr_txn_ctx_t *c, uint32_t i)
{
	return c->txn->ops[i].kind != DMR_TOP_READ && (c->ops[i].flags & F_ISSUED) &&
	       !(c->ops[i].flags & F_SKIPPED);
}

static inline int drtmh(const dmr_txn_ctx_t *c)
{
	return c->eng->protocol == DMR_TXN_PROTO_DRTMH;
}

/* The lock CAS of op i on its primary (0 -> tag), added at *n. */
static void add_cas(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	dmr_wr_t *cas = wr_to(c, n, prim(c, i));
	cas->opcode = DMR_WR_CAS;
	cas->local = c->buf + c->ops[i].buf;
	cas->remote = c->ops[i].rec;
	cas->compare_add = 0;
	cas->swap = c->tag;
	cas->length = 8;
	c->stats->atomics++;
}

/* The version READ of op i on its primary, added at *n: a read-write op's
 * header into cmp_val; a read-only op's as occ's validation READs it
 * (the header of a single record, the whole range otherwise). */
static void add_version_read(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
	dmr_wr_t *wr = wr_to(c, n, prim(c, i));
	wr->opcode = DMR_WR_READ;
	wr->remote = c->ops[i].rec;
	if (op->kind != DMR_TOP_READ) {
		wr->local = cmp_val(c, i);
		wr->length = DMR_REC_HDR;
	} else {
		wr->local = c->buf + c->ops[i].buf + op->count * rb;
		wr->length = op->count == 1 ? DMR_REC_HDR : op->count * rb;
	}
	c->stats->reads++;
}

/* 1 if every read-only record's version is the one execution read (the
 * version only, not the lock word: CompareCheckValidation, and CheckValidate
 * for an item without has_lock_in_validate). */
static int ro_versions_same(dmr_txn_ctx_t *c)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		const uint8_t *a = c->buf + c->ops[i].buf;
		const uint8_t *b = a + op->count * rb;
		uint32_t stride_b = op->count == 1 ? 0 : rb;
		for (uint32_t r = 0; r < op->count; r++)
			if (rd64(b + (uint64_t)r * stride_b + 8) != rd64(a + (uint64_t)r * rb + 8))
				return 0;
	}
	return 1;
}

/* 1 if op i's version READ at validation equals the one execution read. */
static inline int rw_version_same(dmr_txn_ctx_t *c, uint32_t i)
{
	return rd64(cmp_val(c, i) + 8) == rd64(image(c, i) + 8);
}

static dmr_status_t cmp_backup(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

/* FaRM: DTX::CompareValidation (CompareIssueValidation): the version of
 * every read-write record (locked now) and every read-only record READ
 * again, one round. */
static dmr_status_t cmp_validate(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if ((c->ops[i].flags & F_LOCKED) || validated_read(c, &c->txn->ops[i], i))
			add_version_read(c, i, &n);
	if (n == 0)
		return cmp_backup(c, out);
	c->state = ST_CMP_VALIDATE;
	return posted(dmr_txn_post(c, n), out);
}

/* FaRM: CompareCheckValidation: every version as execution read it. */
static dmr_status_t cmp_check_validate(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	if (c->crest_hits && dmr_txn_cnc_stale(c)) /* --cn-cache: a hit changed */
		return dmr_txn_abort(c, DMR_ABORT_CACHE_STALE, out);
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if ((c->ops[i].flags & F_LOCKED) && !rw_version_same(c, i))
			return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
	if (!ro_versions_same(c))
		return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
	return cmp_backup(c, out);
}

/* After the last execution round. DTX::TxCommit returns at once for a
 * transaction with nothing read-write and at most one read-only item ("Only
 * read one item"). Else FaRM: DTX::CompareLocking (CompareIssueLocking: a
 * CAS per read-write record on its primary), one round, then
 * cmp_validate; DrTM+H: DTX::CompareLockingValidation
 * (CompareIssueLockValidation: per read-write record CAS + version READ in
 * one doorbell, LockReadBatch; per read-only record a version READ), one
 * round. */
dmr_status_t dmr_txn_cmp_lock(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	phase_end(c, DMR_TXN_PHASE_EXEC);
	uint32_t nrw = 0, nread = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		if (rw_issued(c, i))
			nrw++;
		else if (validated_read(c, &t->ops[i], i))
			nread += t->ops[i].count;
	}
	if (nrw == 0 && nread <= 1 && !c->crest_hits) /* a --cn-cache hit validates */
		return cmp_backup(c, out);
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->nops; i++)
		if (rw_issued(c, i)) {
			add_cas(c, i, &n);
			if (drtmh(c))
				add_version_read(c, i, &n);
		}
	for (uint32_t i = 0; drtmh(c) && i < t->nops; i++)
		if (validated_read(c, &t->ops[i], i))
			add_version_read(c, i, &n);
	if (n == 0)
		return cmp_validate(c, out);
	c->state = ST_CMP_LOCK;
	return posted(dmr_txn_post(c, n), out);
}

/* The lock round came back. FaRM: CompareCheckLocking (a CAS that did not
 * find the lock clean aborts); DrTM+H: CheckValidate (the same, and a
 * version other than execution's aborts). Only the locks taken are
 * released on abort (FORD's DTX::Abort clears every lock it tried, one
 * whose CAS failed too: a lock word of another transaction). */
static dmr_status_t cmp_check_lock(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	int cause = -1;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!rw_issued(c, i))
			continue;
		uint64_t old = rd64(c->buf + os->buf);
		if (old == c->tag && (!drtmh(c) || rd64(cmp_val(c, i)) == c->tag)) {
			c->stats->cas_replayed++; /* a replayed CAS (file head) */
			old = 0;
		}
		if (old != 0) {
			c->lockfail_rec = os->rec + 1;
			cause = DMR_ABORT_LOCK;
			continue;
		}
		os->flags |= F_LOCKED;
		c->stats->locks_taken++;
		if (drtmh(c) && !rw_version_same(c, i) && cause < 0)
			cause = DMR_ABORT_VALIDATION;
	}
	if (cause < 0 && drtmh(c) && c->crest_hits && dmr_txn_cnc_stale(c))
		cause = DMR_ABORT_CACHE_STALE; /* --cn-cache: a hit changed */
	if (cause < 0 && drtmh(c) && !ro_versions_same(c))
		cause = DMR_ABORT_VALIDATION;
	if (cause >= 0)
		return dmr_txn_abort(c, cause, out);
	return drtmh(c) ? cmp_backup(c, out) : cmp_validate(c, out);
}

/* DTX::CompareCommitBackup with RFLUSH 2
 * (CompareIssueCommitBackupSelectiveFlush): per written record, per backup
 * of its table, a redo log record WRITten to the worker's ring there (ours:
 * the staged entry [rec][len][version][payload], FORD's: tx id, thread id
 * and the data item); after the last record's, one 1-byte READ per backup
 * (selective remote flush). One round; none when there is no backup. A
 * transaction that locked nothing has committed. */
static dmr_status_t cmp_backup(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, DMR_TXN_PHASE_VALIDATE);
	uint32_t need = 16, nlocked = 0;
	for (uint32_t i = 0; i < t->nops; i++)
		if (c->ops[i].flags & F_LOCKED) {
			need += 24 + l->t[t->ops[i].table].payload_bytes;
			nlocked++;
		}
	if (nlocked == 0) /* read-only: nothing to write */
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out);
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	uint32_t pos = 0;
	int last = -1;
	for (uint32_t i = 0; i < t->nops; i++)
		if ((c->ops[i].flags & F_LOCKED) && dmr_txn_stage(c, i, pos)) {
			pos += 24 + l->t[t->ops[i].table].payload_bytes;
			last = (int)i;
		}
	uint64_t ring = l->log_base + ((uint64_t)c->eng->first_worker + c->worker) * l->log_bytes;
	if (c->log_off + pos > l->log_bytes)
		c->log_off = 0;
	uint32_t n = 0, p = 0, plast = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		if (!(c->ops[i].flags & F_APPLIED))
			continue;
		uint32_t len = 24 + l->t[t->ops[i].table].payload_bytes;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
		for (uint32_t j = 1; j < nr; j++) {
			dmr_wr_t *wr = wr_to(c, &n, r[j]);
			wr->opcode = DMR_WR_WRITE;
			wr->local = c->logbuf + p;
			wr->remote = ring + c->log_off + p;
			wr->length = len;
			c->stats->writes++;
		}
		plast = p;
		p += len;
	}
	if (last >= 0) {
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[last].table, r);
		for (uint32_t j = 1; j < nr; j++) {
			dmr_wr_t *fl = wr_to(c, &n, r[j]);
			fl->opcode = DMR_WR_READ;
			fl->local = c->buf + FLUSH_OFF;
			fl->remote = ring + c->log_off + plast;
			fl->length = 1;
			c->stats->reads++;
		}
	}
	c->state = ST_CMP_BACKUP;
	if (n == 0) /* no backups, or nothing written: the primaries next */
		return dmr_txn_cmp_on_wc(c, out);
	c->log_off += (pos + 7) & ~7u;
	return posted(dmr_txn_post(c, n), out);
}

/* The unlocks of the locked records on their primaries (WRITE 0), added
 * at *n. */
static void add_unlocks(dmr_txn_ctx_t *c, uint32_t *n)
{
	for (uint32_t i = 0; i < c->txn->nops; i++) {
		if (!(c->ops[i].flags & F_LOCKED))
			continue;
		dmr_wr_t *ul = wr_to(c, n, prim(c, i));
		ul->opcode = DMR_WR_WRITE;
		ul->local = c->buf + ZERO_OFF;
		ul->remote = c->ops[i].rec;
		ul->length = 8;
		c->stats->writes++;
		c->stats->locks_released++;
	}
}

/* DTX::CompareCommitPrimary (CompareIssueCommitPrimary) and
 * DTX::CompareTruncateAsync (CompareIssueTruncate): per written record
 * its data (from the version word on) WRITten to its primary and in place
 * to each backup; every locked record unlocked on its primary (a locked
 * record not written, absent or guard off, only unlocked).
 * FORD unlocks the primary in the doorbell of its data (WriteUnlockBatch,
 * RC order: data < unlock) and then posts the backups' in-place WRITEs
 * without waiting ("No yield, not waiting for ack"). With backups ours
 * WRITEs the data to the primary and to the backups in one round and
 * unlocks in the next, once all of it completed: a backup WRITE landing
 * after the unlock can be overtaken by the next writer's (on shm with
 * several worker threads it was: a backup left a version behind its
 * primary), and a context's WRs all complete before it reports the
 * commit. The same verbs as FORD's, the unlock a round later. Without
 * backups it is FORD's one round: data and unlock per record, one
 * doorbell per MN. Both rounds' time goes to the commit phase. */
static dmr_status_t cmp_primary(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	phase_end(c, DMR_TXN_PHASE_LOG);
	uint32_t n = 0, p = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_APPLIED))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
		for (uint32_t j = 0; j < nr; j++) {
			wr_writeback(c, &n, r[j], os->rec, p, pb);
		}
		p += 24 + pb;
	}
	if (l->backups == 0 || n == 0) { /* FORD's WriteUnlockBatch */
		add_unlocks(c, &n);
		c->state = ST_CMP_UNLOCK;
	} else {
		c->state = ST_CMP_PRIMARY;
	}
	return posted(dmr_txn_post(c, n), out);
}

/* With backups: the unlocks, after every data WRITE completed. */
static dmr_status_t cmp_unlock(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	uint32_t n = 0;
	add_unlocks(c, &n);
	c->state = ST_CMP_UNLOCK;
	return posted(dmr_txn_post(c, n), out);
}

dmr_status_t dmr_txn_cmp_on_wc(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	switch (c->state) {
	case ST_CMP_LOCK:
		return cmp_check_lock(c, out);
	case ST_CMP_VALIDATE:
		return cmp_check_validate(c, out);
	case ST_CMP_BACKUP:
		return cmp_primary(c, out);
	case ST_CMP_PRIMARY:
		return cmp_unlock(c, out);
	case ST_CMP_UNLOCK:
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out);
	default:
		return dmr_err_set(&c->err, DMR_ERR_INVALID, "context %u: completion in state %u",
				   c->id, c->state);
	}
}
