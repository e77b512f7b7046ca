/*
 * core/txn_crest.c - `--protocol crest`: cell-level locks and per-cell
 * versions after adslabcuhk/crest (txn_crest.h for the cells and the lock
 * word, docs/PROTOCOLS.md "crest" for the protocol and where it differs).
 * Execution, validation and abort are txn.c's and txn_commit.c's with the
 * hooks below; the commit and release are here.
 */
#include <pthread.h>
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
	dmr_crest_local_t **local = cr->local;
	dmr_crest_cache_t **cache = cr->cache;
	memset(cr, 0, sizeof(*cr));
	cr->locks = locks;
	cr->local = local;
	cr->cache = cache;
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

/* words: where op i's cell lock words land (txn.c begin_attempt sizes it):
 * a read-only op's after its two images (count x cell_words words for
 * execution, then as many for validation), a locking op's CAS results
 * after its image (one per cell). */
static uint8_t *cellbuf(dmr_txn_ctx_t *c, uint32_t i, int val)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	if (op->kind != DMR_TOP_READ)
		return image(c, i) + lt->rec_bytes;
	return c->buf + c->ops[i].buf + 2ull * op->count * lt->rec_bytes +
	       (val ? 8ull * op->count * lt->cell_words : 0);
}

/* The slot of op i's (first) record. */
static uint64_t slot_of(const dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_layout_table_t *lt = &c->eng->layout->t[c->txn->ops[i].table];
	return (c->ops[i].rec - lt->base) / lt->rec_bytes;
}

void dmr_txn_crest_cell_read(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n, int val)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_t *l = c->eng->layout;
	dmr_wr_t *wr = wr_to(c, n, prim(c, i));
	wr->opcode = DMR_WR_READ;
	wr->local = cellbuf(c, i, val);
	wr->remote = dmr_layout_cell_word(l, op->table, slot_of(c, i), 0);
	wr->length = 8u * op->count * l->t[op->table].cell_words;
	c->stats->reads++;
}

void dmr_txn_crest_lock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	const dmr_txn_opst_t *os = &c->ops[i];
	const dmr_layout_t *l = c->eng->layout;
	unsigned tb = c->txn->ops[i].table;
	uint32_t m = os->cells & DMR_CREST_LOCK_BITS;
	if (!l->t[tb].cell_words) {
		/* CREST's LockColumns: compare the cells' bits with 0, swap them
		 * to 1 (Txn::IOManager::AcquireLockAndRead: compare 0, swap =
		 * mask, compare_mask = swap_mask = mask) */
		dmr_wr_t *cas = wr_to(c, n, prim(c, i));
		cas->opcode = DMR_WR_MASKED_CAS;
		cas->compare_add = 0;
		cas->swap = m;
		cas->compare_mask = m;
		cas->swap_mask = m;
		cas->local = c->buf + os->buf;
		cas->remote = os->rec;
		cas->length = 8;
		c->stats->atomics++;
	} else {
		/* words: a plain CAS 0 -> tag on each cell's own lock word */
		uint64_t slot = slot_of(c, i);
		uint8_t *res = cellbuf(c, i, 0);
		for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++) {
			if (!(m & (1u << k)))
				continue;
			dmr_wr_t *cas = wr_to(c, n, prim(c, i));
			cas->opcode = DMR_WR_CAS;
			cas->compare_add = 0;
			cas->swap = c->tag;
			cas->local = res + 8 * k;
			cas->remote = dmr_layout_cell_word(l, tb, slot, k);
			cas->length = 8;
			c->stats->atomics++;
		}
	}
	dmr_wr_t *rd = wr_to(c, n, prim(c, i));
	rd->opcode = DMR_WR_READ;
	rd->local = c->buf + os->buf + 8;
	rd->remote = os->rec;
	rd->length = l->t[tb].rec_bytes;
	c->stats->reads++;
}

uint32_t dmr_txn_crest_lock_failed(dmr_txn_ctx_t *c, uint32_t i, uint32_t *held)
{
	uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS;
	if (!c->eng->layout->t[c->txn->ops[i].table].cell_words) {
		uint32_t f = (uint32_t)(rd64(c->buf + c->ops[i].buf) & m);
		*held = f ? 0 : m;
		return f;
	}
	/* words: a cell CAS returning our own tag was executed twice by the
	 * responder and its first execution took the cell for us (txn.h "Lock
	 * CAS results": nothing else writes our tag into a lock word) */
	const uint8_t *res = cellbuf(c, i, 0);
	uint32_t h = 0;
	for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++) {
		if (!(m & (1u << k)))
			continue;
		uint64_t v = rd64(res + 8 * k);
		if (v == c->tag)
			c->stats->cas_replayed++;
		if (v == 0 || v == c->tag)
			h |= 1u << k;
	}
	*held = h;
	return m & ~h;
}

int dmr_txn_crest_read_locked(dmr_txn_ctx_t *c, uint32_t i, int val)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS;
	if (lt->cell_words) {
		const uint8_t *w = cellbuf(c, i, val);
		for (uint32_t r = 0; r < op->count; r++)
			for (uint32_t k = 0; k < lt->cell_words; k++)
				if ((m & (1u << k)) && rd64(w + 8ull * (r * lt->cell_words + k)))
					return 1;
		return 0;
	}
	/* masked: the lock bits in each record's lock word (validation READs
	 * one header when count is 1, else the whole range) */
	const uint8_t *img =
	    c->buf + c->ops[i].buf + (val ? (uint64_t)op->count * lt->rec_bytes : 0);
	uint64_t stride = val && op->count == 1 ? 0 : lt->rec_bytes;
	for (uint32_t r = 0; r < op->count; r++)
		if (rd64(img + r * stride) & m)
			return 1;
	return 0;
}

int dmr_txn_crest_valid(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS;
	/* CREST's CheckROColumnsUnlocked and its consistent-snapshot check
	 * (Txn.cc): the cells read are unlocked and their versions are those
	 * execution read */
	if (dmr_txn_crest_read_locked(c, i, 1))
		return 0;
	const uint8_t *a = c->buf + c->ops[i].buf, *b = a + (uint64_t)op->count * lt->rec_bytes;
	uint64_t stride_b = op->count == 1 ? 0 : lt->rec_bytes, vb = dmr_crest_ver_bits(m);
	for (uint32_t r = 0; r < op->count; r++)
		if ((rd64(a + (uint64_t)r * lt->rec_bytes) ^ rd64(b + r * stride_b)) & vb)
			return 0;
	return 1;
}

/* ---- release ------------------------------------------------------------ */

void dmr_txn_crest_unlock(dmr_txn_ctx_t *c, uint32_t i, uint32_t *n)
{
	dmr_txn_opst_t *os = &c->ops[i];
	const dmr_layout_t *l = c->eng->layout;
	unsigned tb = c->txn->ops[i].table;
	uint32_t m = os->cells & DMR_CREST_LOCK_BITS;
	/* the cells written get their versions bumped (only when the new
	 * image was written back) */
	uint32_t bump = (os->flags & F_APPLIED) ? (uint32_t)(os->cells >> 4) : 0;
	c->stats->locks_released++;
	if (!l->t[tb].cell_words) {
		/* the lock word the lock CAS returned holds the written cells'
		 * versions, unchanged since: we held their locks */
		uint64_t lw = rd64(c->buf + os->buf);
		uint64_t nv = dmr_crest_bump(lw, bump) & dmr_crest_ver_bits(bump);
		dmr_wr_t *ul = wr_to(c, n, prim(c, i));
		/* CREST's ReleaseWriteLock: compare the cells' bits with 1,
		 * swap them to 0; ours also swaps in the written cells' new
		 * versions */
		ul->opcode = DMR_WR_MASKED_CAS;
		ul->compare_add = m;
		ul->swap = nv;
		ul->compare_mask = m;
		ul->swap_mask = m | dmr_crest_ver_bits(bump);
		ul->local = c->buf + os->buf;
		ul->remote = os->rec;
		ul->length = 8;
		c->stats->atomics++;
		return;
	}
	/* words: the versions with one FAA on the record's lock word (a
	 * version at 2^14 - 1 carries into the next cell's: that cell's readers
	 * abort once, spuriously), then each cell taken := 0; in this order
	 * on the primary's QP (RC) */
	if (bump) {
		uint64_t add = 0;
		for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++)
			if (bump & (1u << k))
				add += 1ull << (DMR_CREST_VER_SHIFT + DMR_CREST_VER_BITS * k);
		dmr_wr_t *faa = wr_to(c, n, prim(c, i));
		faa->opcode = DMR_WR_FAA;
		faa->compare_add = add;
		faa->local = c->buf + os->buf;
		faa->remote = os->rec;
		faa->length = 8;
		c->stats->atomics++;
	}
	const uint8_t *res = cellbuf(c, i, 0);
	uint64_t slot = slot_of(c, i);
	for (uint32_t k = 0; k < DMR_CREST_MAX_CELLS; k++) {
		if (!(m & (1u << k)))
			continue;
		uint64_t v = rd64(res + 8 * k);
		if (v != 0 && v != c->tag)
			continue; /* not taken */
		dmr_wr_t *ul = wr_to(c, n, prim(c, i));
		ul->opcode = DMR_WR_WRITE;
		ul->local = c->buf + ZERO_OFF;
		ul->remote = dmr_layout_cell_word(l, tb, slot, k);
		ul->length = 8;
		c->stats->writes++;
	}
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
	if (c->eng->crest->cache) /* the CN's cache: the cells written are not served */
		for (uint32_t i = 0; i < t->nops; i++)
			if (c->ops[i].flags & F_LOCKED)
				dmr_txn_crest_cache_drop(c, c->ops[i].rec,
							 (uint32_t)c->ops[i].cells >> 4);
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
		wr_redo_log(c, nlog, t->ops[first].table, pos);
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

/* ---- localized execution ------------------------------------------------ */

typedef struct lent {
	uint64_t rec1; /* record offset + 1; 0 = empty slot */
	uint8_t mask;  /* cells held by the CN's transactions (0: none) */
} lent_t;

struct dmr_crest_local {
	pthread_mutex_t mu;
	lent_t *e;
	uint32_t cap, used; /* slots (a power of two), slots with a key */
};

dmr_status_t dmr_crest_local_create(dmr_crest_local_t **lp, dmr_err_t *err)
{
	dmr_crest_local_t *l = calloc(1, sizeof(*l));
	if (l)
		l->e = calloc(1024, sizeof(*l->e));
	if (!l || !l->e) {
		free(l);
		return dmr_err_set(err, DMR_ERR_NOMEM, "crest: out of memory (local lock table)");
	}
	l->cap = 1024;
	pthread_mutex_init(&l->mu, NULL);
	*lp = l;
	return DMR_OK;
}

void dmr_crest_local_destroy(dmr_crest_local_t *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->mu);
	free(l->e);
	free(l);
}

/* The slot of rec (its own, or the empty one where it would go). */
static lent_t *lslot(dmr_crest_local_t *l, uint64_t rec)
{
	uint64_t h = (rec + 1) * 0x9E3779B97F4A7C15ull;
	for (uint32_t k = (uint32_t)(h >> 32) & (l->cap - 1);; k = (k + 1) & (l->cap - 1))
		if (l->e[k].rec1 == rec + 1 || l->e[k].rec1 == 0)
			return &l->e[k];
}

/* Room for a round's keys, the table at most half full: rehash without the
 * records no cell of which is held, doubling while that is not enough. */
static int lgrow(dmr_crest_local_t *l)
{
	if (l->used + DMR_TRACE_MAX_OPS <= l->cap / 2)
		return 0;
	uint32_t live = 0;
	for (uint32_t k = 0; k < l->cap; k++)
		live += l->e[k].mask != 0;
	uint32_t cap = l->cap;
	while (live + DMR_TRACE_MAX_OPS > cap / 4)
		cap *= 2;
	lent_t *old = l->e, *ne = calloc(cap, sizeof(*ne));
	if (!ne)
		return -1;
	uint32_t ocap = l->cap;
	l->e = ne;
	l->cap = cap;
	l->used = 0;
	for (uint32_t k = 0; k < ocap; k++)
		if (old[k].mask) {
			*lslot(l, old[k].rec1 - 1) = old[k];
			l->used++;
		}
	free(old);
	return 0;
}

int dmr_crest_local_take(dmr_crest_local_t *l, const uint64_t *rec, const uint8_t *mask, uint32_t n)
{
	pthread_mutex_lock(&l->mu);
	int ok = 1;
	for (uint32_t k = 0; k < n && ok; k++) {
		const lent_t *e = lslot(l, rec[k]);
		ok = e->rec1 == 0 || !(e->mask & mask[k]);
	}
	if (ok && lgrow(l) != 0)
		ok = -1;
	for (uint32_t k = 0; k < n && ok == 1; k++) {
		lent_t *e = lslot(l, rec[k]);
		if (e->rec1 == 0) {
			e->rec1 = rec[k] + 1;
			l->used++;
		}
		e->mask |= mask[k];
	}
	pthread_mutex_unlock(&l->mu);
	return ok;
}

void dmr_crest_local_drop(dmr_crest_local_t *l, uint64_t rec, uint8_t mask)
{
	pthread_mutex_lock(&l->mu);
	lent_t *e = lslot(l, rec);
	if (e->rec1)
		e->mask &= (uint8_t)~mask;
	pthread_mutex_unlock(&l->mu);
}

static dmr_crest_local_t *local_of(const dmr_txn_ctx_t *c)
{
	const dmr_txn_engine_t *e = c->eng;
	return e->crest->local[c->worker / (e->workers_per_cn ? e->workers_per_cn : 1)];
}

void dmr_txn_crest_local_release(dmr_txn_ctx_t *c)
{
	if (!c->eng->crest || !c->eng->crest->local)
		return;
	dmr_crest_local_t *l = local_of(c);
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if (c->ops[i].local) {
			dmr_crest_local_drop(l, c->ops[i].rec, c->ops[i].local);
			c->ops[i].local = 0;
		}
}

int dmr_txn_crest_local_gate(dmr_txn_ctx_t *c, uint32_t n, const uint64_t *rec, const uint32_t *op,
			     dmr_status_t *st, dmr_txn_outcome_t *out)
{
	uint8_t mask[DMR_TRACE_MAX_OPS];
	for (uint32_t k = 0; k < n; k++)
		mask[k] = c->ops[op[k]].cells & DMR_CREST_LOCK_BITS;
	int r = n ? dmr_crest_local_take(local_of(c), rec, mask, n) : 1;
	uint64_t now = dmr_be_now(c->eng->be, c->worker);
	if (r < 0) {
		*st = dmr_err_set(&c->err, DMR_ERR_NOMEM, "crest: out of memory (local locks)");
		return 1;
	}
	if (r == 1) {
		for (uint32_t k = 0; k < n; k++) {
			c->ops[op[k]].rec = rec[k];
			c->ops[op[k]].local = mask[k];
		}
		if (c->t_wait) { /* the local holder is done: our turn */
			cr_of(c)->wait_ps += now - c->t_wait;
			if (c->xstats)
				c->xstats->crest_wait_ps += now - c->t_wait;
			c->t_wait = 0;
		}
		return 0;
	}
	/* a transaction of this CN holds one of the cells: wait for it
	 * (CREST's wait_dependent_txn), polling, at most DMR_CREST_WAIT_MAX_PS */
	if (!c->t_wait) {
		c->t_wait = now;
		cr_of(c)->waits++;
		if (c->xstats)
			c->xstats->crest_waits++;
	} else if (now - c->t_wait >= DMR_CREST_WAIT_MAX_PS) {
		cr_of(c)->wait_ps += now - c->t_wait;
		if (c->xstats) {
			c->xstats->crest_wait_ps += now - c->t_wait;
			c->xstats->lock_by_table[c->txn->ops[op[0]].table]++;
		}
		c->t_wait = 0;
		c->lockfail_rec = rec[0] + 1;
		*st = dmr_txn_abort(c, DMR_ABORT_LOCK, out);
		return 1;
	}
	c->state = ST_LOCAL_WAIT;
	c->seq++;
	*st = posted(dmr_be_timer(c->eng->be, c->worker, now + DMR_CREST_WAIT_POLL_PS,
				  dmr_wrid(DMR_WRID_TXN, c->id, c->seq)),
		     out);
	return 1;
}

dmr_status_t dmr_crest_local_alloc(dmr_crest_t *cr, uint32_t cns, dmr_err_t *err)
{
	cr->local = calloc(cns, sizeof(*cr->local));
	if (!cr->local)
		return dmr_err_set(err, DMR_ERR_NOMEM, "crest: out of memory");
	for (uint32_t k = 0; k < cns; k++) {
		dmr_status_t st = dmr_crest_local_create(&cr->local[k], err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* ---- the CN record cache ------------------------------------------------ */

typedef struct kent {
	uint64_t rec1;			 /* record offset + 1; 0 = empty */
	uint64_t t[DMR_CREST_MAX_CELLS]; /* per cell: when a validation found it
					    current (0: not servable) */
} kent_t;

struct dmr_crest_cache {
	pthread_mutex_t mu;
	uint32_t rb; /* image bytes per slot */
	kent_t *e;
	uint8_t *img; /* DMR_CREST_CACHE_SLOTS x rb */
};

dmr_status_t dmr_crest_cache_create(dmr_crest_cache_t **kp, uint32_t rec_bytes, dmr_err_t *err)
{
	dmr_crest_cache_t *k = calloc(1, sizeof(*k));
	if (k) {
		k->rb = rec_bytes;
		k->e = calloc(DMR_CREST_CACHE_SLOTS, sizeof(*k->e));
		k->img = malloc((size_t)DMR_CREST_CACHE_SLOTS * rec_bytes);
	}
	if (!k || !k->e || !k->img) {
		if (k) {
			free(k->e);
			free(k->img);
		}
		free(k);
		return dmr_err_set(err, DMR_ERR_NOMEM, "crest: out of memory (CN record cache)");
	}
	pthread_mutex_init(&k->mu, NULL);
	*kp = k;
	return DMR_OK;
}

void dmr_crest_cache_destroy(dmr_crest_cache_t *k)
{
	if (!k)
		return;
	pthread_mutex_destroy(&k->mu);
	free(k->e);
	free(k->img);
	free(k);
}

dmr_status_t dmr_crest_cache_alloc(dmr_crest_t *cr, uint32_t cns, const dmr_layout_t *l,
				   dmr_err_t *err)
{
	uint32_t rec_bytes = 0;
	for (uint32_t t = 0; t < l->ntables; t++)
		if (l->t[t].rec_bytes > rec_bytes)
			rec_bytes = l->t[t].rec_bytes;
	cr->cache = calloc(cns, sizeof(*cr->cache));
	if (!cr->cache)
		return dmr_err_set(err, DMR_ERR_NOMEM, "crest: out of memory");
	for (uint32_t k = 0; k < cns; k++) {
		dmr_status_t st = dmr_crest_cache_create(&cr->cache[k], rec_bytes, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

void dmr_crest_free(dmr_crest_t *cr, uint32_t cns)
{
	for (uint32_t k = 0; cr->local && k < cns; k++)
		dmr_crest_local_destroy(cr->local[k]);
	for (uint32_t k = 0; cr->cache && k < cns; k++)
		dmr_crest_cache_destroy(cr->cache[k]);
	free(cr->local);
	free(cr->cache);
	cr->local = NULL;
	cr->cache = NULL;
}

static dmr_crest_cache_t *cache_of(const dmr_txn_ctx_t *c)
{
	const dmr_txn_engine_t *e = c->eng;
	return e->crest->cache[c->worker / (e->workers_per_cn ? e->workers_per_cn : 1)];
}

static uint32_t kslot(uint64_t rec)
{
	return (uint32_t)(((rec + 1) * 0x9E3779B97F4A7C15ull) >> 32) & (DMR_CREST_CACHE_SLOTS - 1);
}

int dmr_txn_crest_cache_hit(dmr_txn_ctx_t *c, uint32_t i)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	dmr_crest_cache_t *k = cache_of(c);
	if (op->count != 1 || lt->rec_bytes > k->rb)
		return 0;
	uint64_t rec = c->ops[i].rec, now = dmr_be_now(c->eng->be, c->worker);
	uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS, s = kslot(rec);
	uint8_t *img = image(c, i);
	const uint64_t ttl =
	    c->eng->crest->cache_ttl_ps ? c->eng->crest->cache_ttl_ps : DMR_CREST_CACHE_TTL_PS;
	pthread_mutex_lock(&k->mu);
	const kent_t *e = &k->e[s];
	int hit = e->rec1 == rec + 1;
	/* every cell read fresh (a clock behind the entry's: not fresh) */
	for (uint32_t b = 0; b < DMR_CREST_MAX_CELLS && hit; b++)
		if (m & (1u << b))
			hit = e->t[b] && now >= e->t[b] && now - e->t[b] < ttl;
	if (hit)
		memcpy(img, k->img + (size_t)s * k->rb, lt->rec_bytes);
	pthread_mutex_unlock(&k->mu);
	if (hit && lt->cell_words == 0)
		hit = !(rd64(img) & m); /* masked: the cells' lock bits clear */
	if (!hit) {
		cr_of(c)->misses++;
		if (c->xstats)
			c->xstats->crest_misses++;
		return 0;
	}
	if (lt->cell_words) /* words: the cells were unlocked when validated */
		memset(cellbuf(c, i, 0), 0, 8ull * lt->cell_words);
	if (!(rd64(img + 8) & DMR_VER_PRESENT))
		c->ops[i].flags |= F_ABSENT;
	c->crest_hits++;
	cr_of(c)->hits++;
	if (c->xstats)
		c->xstats->crest_hits++;
	return 1;
}

void dmr_txn_crest_cache_drop(dmr_txn_ctx_t *c, uint64_t rec, uint32_t mask)
{
	dmr_crest_cache_t *k = cache_of(c);
	uint32_t s = kslot(rec);
	pthread_mutex_lock(&k->mu);
	if (k->e[s].rec1 == rec + 1)
		for (uint32_t b = 0; b < DMR_CREST_MAX_CELLS; b++)
			if (mask & (1u << b))
				k->e[s].t[b] = 0;
	pthread_mutex_unlock(&k->mu);
}

void dmr_txn_crest_cache_put(dmr_txn_ctx_t *c, uint64_t t_val)
{
	const dmr_trace_txn_t *t = c->txn;
	dmr_crest_cache_t *k = cache_of(c);
	pthread_mutex_lock(&k->mu);
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
		if (!validated_read(c, op, i) || op->count != 1 || rb > k->rb)
			continue;
		uint64_t rec = c->ops[i].rec;
		uint32_t m = c->ops[i].cells & DMR_CREST_LOCK_BITS, s = kslot(rec);
		kent_t *e = &k->e[s];
		uint8_t *dst = k->img + (size_t)s * k->rb;
		const uint8_t *src = image(c, i);
		/* another image (or another record): only the cells this
		 * validation vouched for are servable from it */
		if (e->rec1 != rec + 1 || memcmp(dst, src, rb) != 0) {
			memcpy(dst, src, rb);
			e->rec1 = rec + 1;
			memset(e->t, 0, sizeof(e->t));
		}
		for (uint32_t b = 0; b < DMR_CREST_MAX_CELLS; b++)
			if (m & (1u << b))
				e->t[b] = t_val;
	}
	pthread_mutex_unlock(&k->mu);
}
