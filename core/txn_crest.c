/*
 * core/txn_crest.c - `--protocol crest`: cell-level locks and per-cell
 * versions after adslabcuhk/crest (txn_crest.h for the cells and the lock
 * word, docs/PROTOCOLS.md "crest" for the protocol and where it differs).
 * Execution, validation and abort are txn.c's and txn_commit.c's with the
 * hooks below; the commit and release are here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "txn_impl.h"

/* ---- the cell layout from the trace header ------------------------------ */

static const char *src_name(const char *s)
{
	return s ? s : "trace";
}

dmr_status_t dmr_crest_init(dmr_crest_t *cr, const dmr_trace_hdr_t *h, const char *source,
			    dmr_err_t *err)
{
	int locks = cr->locks;
	memset(cr, 0, sizeof(*cr));
	cr->locks = locks;
	for (uint32_t t = 0; t < h->ntables; t++) {
		uint32_t w = h->tables[t].payload_bytes / 8;
		cr->words[t] = w ? w : 1;
		cr->cells[t] = (uint8_t)(cr->words[t] < DMR_CREST_MAX_CELLS ? cr->words[t]
									    : DMR_CREST_MAX_CELLS);
		cr->all[t] = (uint8_t)((1u << cr->cells[t]) - 1);
		for (uint32_t y = 0; y < DMR_TRACE_MAX_TYPES; y++)
			cr->reads[y][t] = cr->all[t];
	}
	static const char pre[] = "reads.";
	for (uint32_t p = 0; p < h->nparams; p++) {
		const char *key = h->params[p].key, *val = h->params[p].val;
		if (strncmp(key, pre, sizeof(pre) - 1) != 0)
			continue;
		const char *ty = key + sizeof(pre) - 1, *dot = strchr(ty, '.');
		char tyname[DMR_TRACE_NAME_MAX];
		int yi = -1, ti = -1;
		if (dot && (size_t)(dot - ty) < sizeof(tyname)) {
			memcpy(tyname, ty, (size_t)(dot - ty));
			tyname[dot - ty] = 0;
			yi = dmr_trace_hdr_type(h, tyname);
			ti = dmr_trace_hdr_table(h, dot + 1);
		}
		if (yi < 0 || ti < 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s: header param %s: field key: not reads.TYPE.TABLE "
					   "with a declared type and table",
					   src_name(source), key);
		uint32_t mask = 0;
		const char *s = val;
		for (;;) {
			char *end;
			if (*s < '0' || *s > '9')
				goto bad;
			unsigned long long f = strtoull(s, &end, 10);
			if (f >= h->tables[ti].payload_bytes / 8)
				goto bad;
			mask |= 1u << dmr_crest_cell(cr, (unsigned)ti, (uint32_t)f);
			s = end;
			if (*s != ',')
				break;
			s++;
		}
		if (*s)
			goto bad;
		cr->reads[yi][ti] = (uint8_t)mask;
		cr->annotated++;
		continue;
	bad:
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: header param %s: field value: '%s' is not a list of "
				   "payload words F[,F...] below %u (table %s)",
				   src_name(source), key, val, h->tables[ti].payload_bytes / 8,
				   h->tables[ti].name);
	}
	return DMR_OK;
}

/* ---- per-op cells ------------------------------------------------------- */

/* Mark word f of op k as read by another op (k >= 0). */
static void ref(dmr_txn_ctx_t *c, int k, uint32_t f, uint8_t *refs)
{
	if (k >= 0)
		refs[k] |= (uint8_t)(1u << dmr_crest_cell(c->eng->crest, c->txn->ops[k].table, f));
}

void dmr_txn_crest_masks(dmr_txn_ctx_t *c)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_crest_t *cr = c->eng->crest;
	uint8_t refs[DMR_TRACE_MAX_OPS];
	memset(refs, 0, t->nops);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (op->dep.op >= 0)
			ref(c, op->dep.op, op->dep.field, refs);
		if (op->guard.kind == DMR_TGUARD_LESS) {
			ref(c, op->guard.op, op->guard.f, refs);
			ref(c, op->guard.op, op->guard.f2, refs);
		}
		for (uint32_t a = 0; a < op->nacts; a++)
			ref(c, op->acts[a].val.op, op->acts[a].val.field, refs);
	}
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		uint32_t all = cr->all[op->table], m, w = 0;
		switch (op->kind) {
		case DMR_TOP_READ:
			m = cr->reads[t->type][op->table] | refs[i];
			break;
		case DMR_TOP_UPDATE:
			for (uint32_t a = 0; a < op->nacts; a++)
				w |= 1u << dmr_crest_cell(cr, op->table, op->acts[a].field);
			if (op->nacts == 0)
				w = all;
			m = w | refs[i];
			break;
		default: /* insert, delete: the whole record */
			m = w = all;
			break;
		}
		c->ops[i].cells = (uint8_t)(m | w << 4);
	}
}

/* ---- execution ---------------------------------------------------------- */

void dmr_txn_crest_lock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	const dmr_txn_opst_t *os = &c->ops[i];
	uint32_t m = os->cells & DMR_CREST_LOCK_BITS;
	dmr_wr_t *cas = wr_to(c, n, prim(c, i));
	if (c->eng->crest->locks == DMR_CREST_LOCKS_MASKED) {
		/* CREST's LockColumns: compare the cells' bits with 0, swap them
		 * to 1 (Txn::IOManager::AcquireLockAndRead: compare 0, swap =
		 * mask, compare_mask = swap_mask = mask) */
		cas->opcode = DMR_WR_MASKED_CAS;
		cas->compare_add = 0;
		cas->swap = m;
		cas->compare_mask = m;
		cas->swap_mask = m;
	} else {
		/* the portable variant on verbs: lock bits taken with a plain
		 * CAS of the whole word, expecting no cell locked
		 * (docs/PROTOCOLS.md "crest", --crest-locks words) */
		cas->opcode = DMR_WR_CAS;
		cas->compare_add = 0;
		cas->swap = m;
	}
	cas->local = c->buf + os->buf;
	cas->remote = os->rec;
	cas->length = 8;
	dmr_wr_t *rd = wr_to(c, n, prim(c, i));
	rd->opcode = DMR_WR_READ;
	rd->local = c->buf + os->buf + 8;
	rd->remote = os->rec;
	rd->length = c->eng->layout->t[c->txn->ops[i].table].rec_bytes;
	c->stats->atomics++;
	c->stats->reads++;
}

/* ---- release ------------------------------------------------------------ */

void dmr_txn_crest_unlock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	dmr_txn_opst_t *os = &c->ops[i];
	uint32_t m = os->cells & DMR_CREST_LOCK_BITS;
	/* the cells written get their versions bumped (only when the new
	 * image was written back); the lock word the lock CAS returned holds
	 * their versions, unchanged since: we held their locks */
	uint32_t bump = (os->flags & F_APPLIED) ? (uint32_t)(os->cells >> 4) : 0;
	uint64_t lw = rd64(c->buf + os->buf);
	uint64_t nv = dmr_crest_bump(lw, bump) & dmr_crest_ver_bits(bump);
	dmr_wr_t *ul = wr_to(c, n, prim(c, i));
	/* CREST's ReleaseWriteLock: compare the cells' bits with 1, swap them
	 * to 0; ours also swaps in the written cells' new versions */
	ul->opcode =
	    c->eng->crest->locks == DMR_CREST_LOCKS_MASKED ? DMR_WR_MASKED_CAS : DMR_WR_CAS;
	ul->compare_add = m;
	ul->swap = nv;
	ul->compare_mask = m;
	ul->swap_mask = m | dmr_crest_ver_bits(bump);
	ul->local = c->buf + os->buf;
	ul->remote = os->rec;
	ul->length = 8;
	c->stats->atomics++;
	c->stats->locks_released++;
}

dmr_status_t dmr_txn_crest_release(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if (c->ops[i].flags & F_LOCKED)
			dmr_txn_crest_unlock(c, i, &n);
	c->state = ST_COMMIT;
	return posted(dmr_txn_post(c, n), out);
}

/* ---- commit ------------------------------------------------------------- */

/* The write-back of op i's cells to MN mn: insert and delete the whole
 * record from its version word on (the present bit changes), an update
 * one WRITE per run of consecutive written cells (the other cells may be
 * another transaction's). */
static void writeback(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n, uint32_t mn, uint32_t pos)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_crest_t *cr = c->eng->crest;
	uint32_t pb = c->eng->layout->t[op->table].payload_bytes;
	uint64_t rec = c->ops[i].rec;
	if (op->kind != DMR_TOP_UPDATE) {
		wr_writeback(c, n, mn, rec, pos, pb);
		return;
	}
	uint32_t w = c->ops[i].cells >> 4, g = cr->cells[op->table];
	for (uint32_t k = 0; k < g;) {
		if (!(w & (1u << k))) {
			k++;
			continue;
		}
		uint32_t k1 = k;
		while (k1 < g && (w & (1u << k1)))
			k1++;
		uint32_t lo = dmr_crest_cell_lo(cr, op->table, k);
		uint32_t hi = dmr_crest_cell_lo(cr, op->table, k1);
		dmr_wr_t *wb = wr_to(c, n, mn);
		wb->opcode = DMR_WR_WRITE;
		wb->local = c->logbuf + pos + 24 + 8u * lo;
		wb->remote = rec + DMR_REC_HDR + 8u * lo;
		wb->length = 8u * (hi - lo);
		c->stats->writes++;
		k = k1;
	}
}

dmr_status_t dmr_txn_crest_commit(dmr_txn_ctx_t *c, uint32_t need, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	/* as occ (txn_commit.c): the log record's slots first, one per
	 * replica of the first written record's table */
	uint32_t nlog = 1 + l->backups;
	uint32_t n = nlog, pos = 0, first = UINT32_MAX;
	for (uint32_t i = 0; i < t->nops; i++) {
		if (!(c->ops[i].flags & F_LOCKED))
			continue;
		if (!dmr_txn_stage(c, i, pos))
			continue;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
		for (uint32_t j = 0; j < nr; j++)
			writeback(c, i, &n, r[j], pos);
		if (first == UINT32_MAX)
			first = i;
		pos += 24 + l->t[t->ops[i].table].payload_bytes;
	}
	if (first == UINT32_MAX) {
		n = 0; /* nothing written back: no log record, the unlocks only */
	} else {
		uint64_t ring =
		    l->log_base + ((uint64_t)c->eng->first_worker + c->worker) * l->log_bytes;
		if (c->log_off + pos > l->log_bytes)
			c->log_off = 0;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		dmr_layout_replicas(l, t->ops[first].table, r);
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
	/* one MN: the unlocks in the same doorbell (RC order: log <
	 * write-back < unlock); several: once the write-backs completed */
	uint32_t one = 1, mn0 = n ? c->wr_mn[0] : UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		one &= c->wr_mn[i] == mn0;
	for (uint32_t i = 0; i < t->nops && one; i++)
		if ((c->ops[i].flags & F_LOCKED) && n && prim(c, i) != mn0)
			one = 0;
	if (n == 0 || one) {
		for (uint32_t i = 0; i < t->nops; i++)
			if (c->ops[i].flags & F_LOCKED)
				dmr_txn_crest_unlock(c, i, &n);
		c->state = ST_COMMIT;
		return posted(dmr_txn_post(c, n), out);
	}
	c->state = ST_COMMIT_WB;
	return posted(dmr_txn_post(c, n), out);
}

/* ---- checks ------------------------------------------------------------- */

int dmr_txn_crest_valid(const dmr_txn_ctx_t *c, uint32_t i, uint64_t exec_lw, uint64_t now_lw)
{
	uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS;
	/* CREST's CheckROColumnsUnlocked and its consistent-snapshot check
	 * (Txn.cc): the cells read are unlocked and their versions are those
	 * execution read */
	return (now_lw & m) == 0 && ((now_lw ^ exec_lw) & dmr_crest_ver_bits(m)) == 0;
}
