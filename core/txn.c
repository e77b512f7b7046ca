/*
 * core/txn.c - OCC transaction contexts as completion-driven state machines.
 * See txn.h for the protocol.
 */
#include "txn.h"

#include <stdlib.h>
#include <string.h>

enum {
	ST_IDLE = 0,
	ST_EXEC,
	ST_VALIDATE,
	ST_COMMIT,
	ST_ABORT,
	ST_BACKOFF,
	ST_COMMIT_WB, /* write-backs posted; the unlocks (release) follow */
	ST_LOG,	      /* FORD: the undo log alone, before the commit */
	ST_LOOKUP,    /* HASH: bucket READs before an execution round */
};

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

static const char *cause_names[DMR_ABORT_NCAUSES] = {
    "lock", "read_locked", "validation", "duplicate", "full",
};

const char *dmr_txn_phase_name(int phase)
{
	static const char *const n[DMR_TXN_NPHASES] = {"execution", "validation", "log", "commit"};
	return phase >= 0 && phase < DMR_TXN_NPHASES ? n[phase] : "?";
}

const char *dmr_txn_protocol_name(int protocol)
{
	static const char *const n[DMR_TXN_NPROTOS] = {"occ", "ford"};
	return protocol >= 0 && protocol < DMR_TXN_NPROTOS ? n[protocol] : "?";
}

dmr_status_t dmr_txn_protocol_parse(const char *s, int *p, dmr_err_t *err)
{
	for (int i = 0; i < DMR_TXN_NPROTOS; i++)
		if (s && strcmp(s, dmr_txn_protocol_name(i)) == 0) {
			*p = i;
			return DMR_OK;
		}
	return dmr_err_set(err, DMR_ERR_PARSE, "option --protocol: '%s': one of occ, ford",
			   s ? s : "");
}

const char *dmr_abort_cause_name(int cause)
{
	return cause >= 0 && cause < DMR_ABORT_NCAUSES ? cause_names[cause] : "?";
}

/* Scratch: 8 zero bytes used as the source of unlock WRITEs; FORD's lock
 * words "locked | invisible" (our tag | DMR_LOCK_INVISIBLE) and
 * "invisible"; the destination of its 1-byte flush READs. */
#define ZERO_OFF 0u
#define INVLOCK_OFF 8u
#define INVIS_OFF 16u
#define FLUSH_OFF 24u
#define BUF_BASE 64u

/* Grow a registered buffer of the context to at least `need` bytes (powers
 * of two from 4 KiB, 64-byte aligned, zeroed when `zero`): the old one is
 * deregistered and freed (no WR of this context is in flight when it
 * grows), the new one registered with the backend for c->worker. */
static dmr_status_t grow_reg(dmr_txn_ctx_t *c, uint8_t **buf, uint32_t *cap_p, uint8_t *reg,
			     uint32_t need, int zero, dmr_err_t *err)
{
	if (need <= *cap_p)
		return DMR_OK;
	uint32_t cap = *cap_p ? *cap_p : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *b = aligned_alloc(64, cap);
	if (!b)
		return dmr_err_set(err, DMR_ERR_NOMEM, "txn: out of memory (%u bytes)", cap);
	if (zero)
		memset(b, 0, cap);
	if (*reg)
		(void)dmr_be_mr_dereg(c->eng->be, c->worker, *buf, NULL);
	*reg = 0;
	free(*buf);
	*buf = b;
	*cap_p = cap;
	dmr_status_t st = dmr_be_mr_reg(c->eng->be, c->worker, b, cap, err);
	*reg = st == DMR_OK;
	return st;
}

static void wr64_init(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static dmr_status_t grow(dmr_txn_ctx_t *c, uint32_t need, dmr_err_t *err)
{
	uint32_t cap = c->buf_cap;
	dmr_status_t st = grow_reg(c, &c->buf, &c->buf_cap, &c->buf_reg, need, 1, err);
	if (c->buf && c->buf_cap != cap) { /* a new buffer: its scratch words */
		wr64_init(c->buf + INVLOCK_OFF, c->tag | DMR_LOCK_INVISIBLE);
		wr64_init(c->buf + INVIS_OFF, DMR_LOCK_INVISIBLE);
	}
	return st;
}

static dmr_status_t grow_log(dmr_txn_ctx_t *c, uint32_t need, dmr_err_t *err)
{
	return grow_reg(c, &c->logbuf, &c->logbuf_cap, &c->logbuf_reg, need, 0, err);
}

dmr_status_t dmr_txn_engine_init(dmr_txn_engine_t *eng, dmr_be_t *be, const dmr_layout_t *layout,
				 uint32_t retries, uint64_t backoff_ps, dmr_err_t *err)
{
	memset(eng, 0, sizeof(*eng));
	eng->be = be;
	eng->layout = layout;
	eng->retries = retries;
	eng->backoff_ps = backoff_ps;
	dmr_be_role_t role;
	dmr_status_t st = dmr_be_control(be, DMR_BE_CTL_ROLE, &role, err);
	if (st == DMR_ERR_UNSUPPORTED)
		return DMR_OK; /* the whole cluster: cn 0, first worker 0 */
	if (st != DMR_OK)
		return st;
	if (role.cn >= 1u << (63 - DMR_TXN_TAG_CN_SHIFT))
		return dmr_err_set(err, DMR_ERR_RANGE, "txn: CN index %u does not fit a lock tag",
				   role.cn);
	eng->cn = role.cn;
	eng->first_worker = role.first_worker;
	return DMR_OK;
}

dmr_status_t dmr_txn_ctx_init(dmr_txn_ctx_t *c, const dmr_txn_engine_t *eng, dmr_txn_stats_t *stats,
			      uint32_t worker, uint32_t id, dmr_err_t *err)
{
	memset(c, 0, sizeof(*c));
	c->eng = eng;
	c->stats = stats;
	c->worker = worker;
	c->id = id;
	if (id > DMR_WRID_INDEX_MAX)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "txn: context id %u does not fit a wr_id (at most %u contexts)",
				   id, DMR_WRID_INDEX_MAX + 1);
	/* odd, never 0; unique over the cluster (txn.h "Cluster-wide names") */
	c->tag = (((uint64_t)id + 1) << 1 | 1) + ((uint64_t)eng->cn << DMR_TXN_TAG_CN_SHIFT);
	/* the largest doorbell: per op 2 WRs per replica (FORD's commit) + 1,
	 * the undo log to every MN, a flush READ per backup */
	const dmr_layout_t *l = eng->layout;
	uint32_t per = 2 * (1 + l->backups) + 1;
	c->wrs_cap = (per > 2 ? per : 2) * DMR_TRACE_MAX_OPS + l->mns + l->backups + 2;
	c->wrs = calloc(c->wrs_cap, sizeof(*c->wrs));
	c->wrs2 = l->mns > 1 ? calloc(c->wrs_cap, sizeof(*c->wrs2)) : NULL;
	c->wr_mn = calloc(c->wrs_cap, 1);
	if (!c->wrs || !c->wr_mn || (l->mns > 1 && !c->wrs2))
		return dmr_err_set(err, DMR_ERR_NOMEM, "txn: out of memory");
	dmr_status_t st = grow(c, 4096, err);
	if (st == DMR_OK)
		st = grow_log(c, 4096, err);
	if (st == DMR_OK) {
		wr64_init(c->buf + INVLOCK_OFF, c->tag | DMR_LOCK_INVISIBLE);
		wr64_init(c->buf + INVIS_OFF, DMR_LOCK_INVISIBLE);
	}
	return st;
}

void dmr_txn_ctx_fini(dmr_txn_ctx_t *c)
{
	if (c->buf_reg)
		(void)dmr_be_mr_dereg(c->eng->be, c->worker, c->buf, NULL);
	if (c->logbuf_reg)
		(void)dmr_be_mr_dereg(c->eng->be, c->worker, c->logbuf, NULL);
	c->buf_reg = c->logbuf_reg = 0;
	free(c->buf);
	free(c->wrs);
	free(c->wrs2);
	free(c->wr_mn);
	free(c->logbuf);
	c->buf = c->logbuf = NULL;
	c->wrs = c->wrs2 = NULL;
	c->wr_mn = NULL;
}

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

static int guard_true(dmr_txn_ctx_t *c, const dmr_trace_guard_t *g)
{
	switch (g->kind) {
	case DMR_TGUARD_PRESENT:
		return usable(c, g->op);
	case DMR_TGUARD_LESS:
		return usable(c, g->op) && word(c, g->op, g->f) < word(c, g->op, g->f2);
	default:
		return 1;
	}
}

/* WR n of the doorbell under construction, to MN mn (*n advanced). */
static inline dmr_wr_t *wr_to(dmr_txn_ctx_t *c, uint32_t *n, uint32_t mn)
{
	c->wr_mn[*n] = (uint8_t)mn;
	return &c->wrs[(*n)++];
}

/* The MN of the primary copy of op i's table. */
static inline uint32_t prim(const dmr_txn_ctx_t *c, uint32_t i)
{
	return c->eng->layout->t[c->txn->ops[i].table].primary;
}

/* Post the n WRs of c->wrs: one doorbell per MN they name (in their order,
 * its last WR signaled); the context waits for all of them (c->pending). */
static dmr_status_t post(dmr_txn_ctx_t *c, uint32_t n)
{
	c->seq++;
	uint64_t id = dmr_wrid(DMR_WRID_TXN, c->id, c->seq);
	uint32_t mns = c->eng->layout->mns;
	if (mns == 1) {
		for (uint32_t i = 0; i < n; i++) {
			c->wrs[i].wr_id = id;
			c->wrs[i].flags = i + 1 == n ? DMR_WR_SIGNALED : 0;
		}
		c->pending = 1;
		return dmr_be_post(c->eng->be, c->worker, 0, c->wrs, n, &c->err);
	}
	c->pending = 0;
	for (uint32_t mn = 0; mn < mns; mn++) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < n; i++)
			if (c->wr_mn[i] == mn) {
				c->wrs2[k] = c->wrs[i];
				c->wrs2[k].wr_id = id;
				c->wrs2[k++].flags = 0;
			}
		if (k == 0)
			continue;
		c->wrs2[k - 1].flags = DMR_WR_SIGNALED;
		dmr_status_t st = dmr_be_post(c->eng->be, c->worker, mn, c->wrs2, k, &c->err);
		if (st != DMR_OK)
			return st;
		c->pending++;
	}
	return DMR_OK;
}

/* The time since the current phase began goes to `phase`. */
static inline void phase_end(dmr_txn_ctx_t *c, int phase)
{
	uint64_t now = dmr_be_now(c->eng->be, c->worker);
	c->ph[phase] += now - c->t_phase;
	c->t_phase = now;
}

/* FORD (DTX::ParallelUndoLog, after each execution round of a read-write
 * transaction): the undo log record -- 16 bytes of tx and thread id and the
 * old image of each record locked since the last one -- WRITten to the same
 * ring offset on every MN, added to the doorbell under construction at
 * *n. A transaction with nothing locked writes none. */
static dmr_status_t undo_log(dmr_txn_ctx_t *c, uint32_t *n)
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
	dmr_status_t st = grow_log(c, need, &c->err);
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

/* The transaction finished with `outcome` (COMMITTED or GAVE_UP). */
static dmr_status_t finish(dmr_txn_ctx_t *c, dmr_txn_outcome_t outcome, dmr_txn_outcome_t *out)
{
	c->state = ST_IDLE;
	if (outcome == DMR_TXN_COMMITTED) {
		phase_end(c, DMR_TXN_PHASE_COMMIT);
		for (int p = 0; p < DMR_TXN_NPHASES; p++)
			c->stats->phase_ps[p] += c->ph[p];
		c->stats->committed++;
		c->stats->committed_xv += c->txn->xv;
	} else {
		c->stats->gave_up++;
	}
	*out = outcome;
	return DMR_OK;
}

/* A doorbell (or timer) was handed to the backend with status st: on
 * success the context waits for its completion. */
static dmr_status_t posted(dmr_status_t st, dmr_txn_outcome_t *out)
{
	if (st != DMR_OK)
		return st;
	*out = DMR_TXN_RUNNING;
	return DMR_OK;
}

static dmr_status_t begin_attempt(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
static dmr_status_t exec_round(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

/* Release the locks taken (abort). */
static dmr_status_t do_abort(dmr_txn_ctx_t *c, int cause, dmr_txn_outcome_t *out)
{
	c->stats->aborts[cause]++;
	c->last_cause = cause;
	uint32_t n = 0;
	if (c->eng->protocol == DMR_TXN_PROTO_FORD && c->state == ST_EXEC) {
		/* DTX::ExeRW writes the undo log before TxExe aborts */
		dmr_status_t st = undo_log(c, &n);
		if (st != DMR_OK)
			return st;
	}
	for (uint32_t i = 0; i < c->txn->nops; i++) {
		if (!(c->ops[i].flags & F_LOCKED))
			continue;
		dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
		wr->opcode = DMR_WR_WRITE;
		wr->local = c->buf + ZERO_OFF;
		wr->remote = c->ops[i].rec;
		wr->length = 8;
		c->stats->writes++;
		c->stats->locks_released++;
	}
	c->state = ST_ABORT;
	if (n == 0) {
		dmr_wc_t wc = {.wr_id = dmr_wrid(DMR_WRID_TXN, c->id, c->seq)};
		return dmr_txn_on_wc(c, &wc, out);
	}
	return posted(post(c, n), out);
}

static dmr_status_t after_abort(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	int cause = c->last_cause;
	if (cause == DMR_ABORT_DUPLICATE || cause == DMR_ABORT_FULL ||
	    c->attempts > c->eng->retries)
		return finish(c, DMR_TXN_GAVE_UP, out);
	c->stats->retries++;
	if (c->eng->backoff_ps) {
		c->state = ST_BACKOFF;
		c->seq++;
		uint64_t at = dmr_be_now(c->eng->be, c->worker) + c->eng->backoff_ps;
		return posted(
		    dmr_be_timer(c->eng->be, c->worker, at, dmr_wrid(DMR_WRID_TXN, c->id, c->seq)),
		    out);
	}
	return begin_attempt(c, out);
}

/* Stage op i's new image in logbuf at pos: [rec u64][len u64][version u64]
 * [payload]; returns 1 (and sets F_APPLIED) when it is to be written back,
 * 0 when not (absent and not an insert, or its guard is off). */
static int stage(dmr_txn_ctx_t *c, uint32_t i, uint32_t pos)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_txn_opst_t *os = &c->ops[i];
	const dmr_trace_op_t *op = &t->ops[i];
	uint32_t pb = l->t[op->table].payload_bytes;
	const uint8_t *img = image(c, i);
	int apply = !(os->flags & F_ABSENT) || op->kind == DMR_TOP_INSERT;
	if (apply && op->guard.kind != DMR_TGUARD_NONE && op->guard.op == (int16_t)i)
		apply = guard_true(c, &op->guard) || (os->flags |= F_GUARDOFF, 0);
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
static dmr_status_t release(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int ford = c->eng->protocol == DMR_TXN_PROTO_FORD;
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
			ul->remote = os->rec;
			ul->length = 8;
			c->stats->writes++;
		}
		c->stats->locks_released++;
	}
	c->state = ST_COMMIT;
	return posted(post(c, n), out);
}

/* FORD's commit (DTX::CoalescentCommit, IssueCommitAllSelectFlush): per
 * record written, on its primary WRITE lock word := tag | invisible and
 * WRITE the data; on each backup lock word := invisible and the data; one
 * 1-byte READ per backup after the last record's writes (selective flush).
 * The release follows their completion. */
static dmr_status_t commit_ford(dmr_txn_ctx_t *c, uint32_t need, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_status_t st = grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	uint32_t n = 0, pos = 0;
	int last = -1;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED) || !stage(c, i, pos))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
		uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
		for (uint32_t j = 0; j < nr; j++) {
			dmr_wr_t *lk = wr_to(c, &n, r[j]);
			lk->opcode = DMR_WR_WRITE;
			lk->local = c->buf + (j == 0 ? INVLOCK_OFF : INVIS_OFF);
			lk->remote = os->rec;
			lk->length = 8;
			dmr_wr_t *wb = wr_to(c, &n, r[j]);
			wb->opcode = DMR_WR_WRITE;
			wb->local = c->logbuf + pos + 16;
			wb->remote = os->rec + 8;
			wb->length = 8 + pb;
			c->stats->writes += 2;
		}
		pos += 24 + pb;
		last = (int)i;
	}
	if (last < 0) /* locked but nothing to write: release only */
		return release(c, out);
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
	return posted(post(c, n), out);
}

static dmr_status_t commit(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
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
		return finish(c, DMR_TXN_COMMITTED, out);
	if (c->eng->protocol == DMR_TXN_PROTO_FORD)
		return commit_ford(c, need, out);
	dmr_status_t st = grow_log(c, need, &c->err);
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
		if (stage(c, i, pos)) {
			uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
			uint32_t nr = dmr_layout_replicas(l, t->ops[i].table, r);
			for (uint32_t j = 0; j < nr; j++) {
				dmr_wr_t *wb = wr_to(c, &n, r[j]);
				wb->opcode = DMR_WR_WRITE;
				wb->local = c->logbuf + pos + 16;
				wb->remote = os->rec + 8;
				wb->length = 8 + pb;
				c->stats->writes++;
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
		ul->remote = os->rec;
		ul->length = 8;
	}
	if (nw == 0) {
		/* only unlocks: no log record needed */
		memmove(&c->wrs[0], &c->wrs[nlog], sizeof(dmr_wr_t) * (n - nlog));
		memmove(&c->wr_mn[0], &c->wr_mn[nlog], n - nlog);
		n -= nlog;
	} else {
		/* log record to this worker's ring (wraps) on each replica; rings
		 * are numbered over the cluster (txn.h "Cluster-wide names") */
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
		return posted(post(c, n), out);
	}
	/* several MNs: the write-backs now, the unlocks when they completed */
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!(c->wr_mn[i] & 0x80u)) {
			c->wrs[k] = c->wrs[i];
			c->wr_mn[k++] = c->wr_mn[i];
		}
	if (k == 0)
		return release(c, out);
	c->state = ST_COMMIT_WB;
	return posted(post(c, k), out);
}

/* Op i is a read-only op whose records were READ (issued, not skipped):
 * validation re-reads and checks them. */
static inline int validated_read(const dmr_txn_ctx_t *c, const dmr_trace_op_t *op, uint32_t i)
{
	return op->kind == DMR_TOP_READ && (c->ops[i].flags & F_ISSUED) &&
	       !(c->ops[i].flags & F_SKIPPED);
}

/* logdue (FORD): the undo log of the last execution round is still to be
 * written; it goes with the validation READs (DTX::ExeRW logs, then
 * DTX::Validate), or alone before the commit when there is nothing to
 * validate (CoalescentCommit waits for the log's acknowledgements). */
static dmr_status_t validate(dmr_txn_ctx_t *c, int logdue, dmr_txn_outcome_t *out)
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
	if (nread == 0 || (nread == 1 && nlocked == 0)) {
		if (logdue && (st = undo_log(c, &n)) != DMR_OK)
			return st;
		if (n == 0)
			return commit(c, out);
		c->state = ST_LOG;
		return posted(post(c, n), out);
	}
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
		wr->opcode = DMR_WR_READ;
		wr->local = c->buf + c->ops[i].buf + op->count * rb;
		wr->remote = c->ops[i].rec;
		wr->length = op->count == 1 ? DMR_REC_HDR : op->count * rb;
		c->stats->reads++;
	}
	if (logdue && (st = undo_log(c, &n)) != DMR_OK)
		return st;
	c->state = ST_VALIDATE;
	return posted(post(c, n), out);
}

static dmr_status_t check_validation(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int ford = c->eng->protocol == DMR_TXN_PROTO_FORD;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		const uint8_t *a = c->buf + c->ops[i].buf;
		const uint8_t *b = a + op->count * rb;
		uint32_t stride_b = op->count == 1 ? 0 : rb;
		for (uint32_t r = 0; r < op->count; r++) {
			const uint8_t *ra = a + (uint64_t)r * rb, *rbp = b + (uint64_t)r * stride_b;
			/* FORD compares the version only (CheckValidate) */
			if ((rd64(rbp) != 0 && !ford) || rd64(rbp + 8) != rd64(ra + 8))
				return do_abort(c, DMR_ABORT_VALIDATION, out);
		}
	}
	return commit(c, out);
}

/* Resolve op i's record; returns 1 issue, 0 skip, -1 insert range exhausted. */
static int resolve(dmr_txn_ctx_t *c, uint32_t i, uint64_t *slot_p)
{
	const dmr_trace_op_t *op = &c->txn->ops[i];
	const dmr_layout_table_t *lt = &c->eng->layout->t[op->table];
	int64_t slot = op->key;
	if (op->dep.op >= 0) {
		if (!usable(c, op->dep.op))
			return 0;
		int64_t v = (int64_t)word(c, op->dep.op, op->dep.field);
		if (op->lo < op->hi && (v < op->lo || v >= op->hi))
			return op->kind == DMR_TOP_INSERT ? -1 : 0;
		if (__builtin_add_overflow(slot, v, &slot))
			return op->kind == DMR_TOP_INSERT ? -1 : 0;
	}
	if (slot < 0 || (uint64_t)slot + op->count > lt->rows)
		return op->kind == DMR_TOP_INSERT ? -1 : 0;
	if (op->guard.kind != DMR_TGUARD_NONE && op->guard.op != (int16_t)i &&
	    !guard_true(c, &op->guard))
		return 0;
	*slot_p = (uint64_t)slot;
	return 1;
}

static inline dmr_acache_t *acache(const dmr_txn_ctx_t *c)
{
	const dmr_txn_engine_t *e = c->eng;
	return e->acache ? e->acache[c->worker / (e->workers_per_cn ? e->workers_per_cn : 1)]
			 : NULL;
}

/* HASH: the records of the round starting at op i0 that will be issued:
 * a cached address is a hit; else a bucket READ on the table's primary
 * (added at *n). */
static dmr_status_t lookup(dmr_txn_ctx_t *c, uint32_t i0, uint32_t *n)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_acache_t *ac = acache(c);
	for (uint32_t i = i0; i < t->nops && t->ops[i].round == c->round; i++) {
		uint64_t slot, addr;
		if (resolve(c, i, &slot) != 1)
			continue;
		unsigned tb = t->ops[i].table;
		if (ac && dmr_acache_get(ac, dmr_acache_key(tb, slot), &addr)) {
			c->stats->cache_hits++;
			continue;
		}
		if (ac)
			c->stats->cache_misses++;
		c->ops[i].lookup = 1;
		c->ops[i].rec = slot; /* the key, until the bucket says where */
		dmr_wr_t *wr = wr_to(c, n, prim(c, i));
		wr->opcode = DMR_WR_READ;
		wr->local = c->buf + c->lookup_off + i * DMR_IDX_BUCKET_BYTES;
		wr->remote = dmr_layout_bucket(l, tb, slot);
		wr->length = DMR_IDX_BUCKET_BYTES;
		c->stats->reads++;
		c->stats->index_reads++;
	}
	return DMR_OK;
}

/* HASH: the buckets came back: each looked-up key's address, checked
 * against the layout, into the cache. */
static dmr_status_t check_lookup(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	dmr_acache_t *ac = acache(c);
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!os->lookup)
			continue;
		os->lookup = 0;
		unsigned tb = t->ops[i].table;
		uint64_t key = os->rec, addr = UINT64_MAX;
		const uint8_t *b = c->buf + c->lookup_off + i * DMR_IDX_BUCKET_BYTES;
		for (uint32_t s = 0; s < DMR_IDX_SLOTS; s++)
			if (rd64(b + 16 * s) == key) {
				addr = rd64(b + 16 * s + 8);
				break;
			}
		if (addr != dmr_layout_rec(l, tb, key))
			return dmr_err_set(&c->err, DMR_ERR_INVALID,
					   "index: table %s key %llu: its bucket (MN %u offset "
					   "%llu) gives address %llu, the layout %llu",
					   l->names[tb], (unsigned long long)key, prim(c, i),
					   (unsigned long long)dmr_layout_bucket(l, tb, key),
					   (unsigned long long)addr,
					   (unsigned long long)dmr_layout_rec(l, tb, key));
		if (ac)
			dmr_acache_put(ac, dmr_acache_key(tb, key), addr);
	}
	return exec_round(c, out);
}

static dmr_status_t exec_round(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	/* FORD: a round was checked, its undo log goes with the next doorbell */
	int logdue = c->eng->protocol == DMR_TXN_PROTO_FORD && c->state == ST_EXEC;
	for (;;) {
		/* first op of this round */
		uint32_t i0 = 0;
		while (i0 < t->nops && t->ops[i0].round < c->round)
			i0++;
		if (i0 == t->nops)
			return validate(c, logdue, out);
		if (c->eng->index == DMR_TXN_INDEX_HASH && c->looked_round != c->round + 1) {
			c->looked_round = (uint16_t)(c->round + 1);
			uint32_t nb = 0;
			dmr_status_t st = lookup(c, i0, &nb);
			if (st != DMR_OK)
				return st;
			if (nb) {
				if (logdue && (st = undo_log(c, &nb)) != DMR_OK)
					return st;
				c->state = ST_LOOKUP;
				return posted(post(c, nb), out);
			}
		}
		uint32_t n = 0;
		uint32_t i = i0;
		for (; i < t->nops && t->ops[i].round == c->round; i++) {
			const dmr_trace_op_t *op = &t->ops[i];
			dmr_txn_opst_t *os = &c->ops[i];
			uint64_t slot;
			int r = resolve(c, i, &slot);
			if (r < 0) {
				os->flags = F_FULL;
				return do_abort(c, DMR_ABORT_FULL, out);
			}
			if (r == 0) {
				os->flags = F_SKIPPED;
				c->stats->skipped_ops++;
				continue;
			}
			os->flags = F_ISSUED;
			os->rec = dmr_layout_rec(l, op->table, slot);
			if (op->kind != DMR_TOP_READ) {
				/* the same record locked twice: refused before its
				 * CAS is posted (an own tag coming back from a CAS
				 * then only means a replayed atomic, see txn.h) */
				for (uint32_t j = 0; j < i; j++)
					if ((c->ops[j].flags & F_ISSUED) &&
					    t->ops[j].kind != DMR_TOP_READ &&
					    c->ops[j].rec == os->rec)
						return dmr_err_set(
						    &c->err, DMR_ERR_INVALID,
						    "%s:%u: txn %llu op %u: locks a record it "
						    "already locked (op %u, line %u, locks it too: "
						    "the same record twice in one transaction)",
						    c->eng->source ? c->eng->source : "trace",
						    t->line + i, (unsigned long long)t->id, i, j,
						    t->line + j);
			}
			uint32_t rb = l->t[op->table].rec_bytes;
			if (op->kind == DMR_TOP_READ) {
				dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
				wr->opcode = DMR_WR_READ;
				wr->local = c->buf + os->buf;
				wr->remote = os->rec;
				wr->length = op->count * rb;
				c->stats->reads++;
			} else {
				dmr_wr_t *cas = wr_to(c, &n, prim(c, i));
				cas->opcode = DMR_WR_CAS;
				cas->local = c->buf + os->buf;
				cas->remote = os->rec;
				cas->compare_add = 0;
				cas->swap = c->tag;
				cas->length = 8;
				dmr_wr_t *rd = wr_to(c, &n, prim(c, i));
				rd->opcode = DMR_WR_READ;
				rd->local = c->buf + os->buf + 8;
				rd->remote = os->rec;
				rd->length = rb;
				c->stats->atomics++;
				c->stats->reads++;
			}
		}
		if (n == 0) {
			c->round++;
			continue;
		}
		if (logdue) {
			dmr_status_t st = undo_log(c, &n);
			if (st != DMR_OK)
				return st;
		}
		c->state = ST_EXEC;
		return posted(post(c, n), out);
	}
}

static dmr_status_t check_round(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	int cause = -1;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (op->round != c->round)
			continue;
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_ISSUED))
			continue;
		if (op->kind == DMR_TOP_READ) {
			uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
			const uint8_t *img = c->buf + os->buf;
			/* FORD reads a locked record unless it is invisible
			 * (LOCK_REFUSE_READ_RO 0, INV_ABORT 1: CheckReadRO) */
			uint64_t refuse =
			    c->eng->protocol == DMR_TXN_PROTO_FORD ? DMR_LOCK_INVISIBLE : ~0ull;
			for (uint32_t r = 0; r < op->count; r++)
				if ((rd64(img + (uint64_t)r * rb) & refuse) != 0 && cause < 0)
					cause = DMR_ABORT_READ_LOCKED;
			if (!(rd64(img + 8) & DMR_VER_PRESENT))
				os->flags |= F_ABSENT;
			continue;
		}
		uint64_t old = rd64(c->buf + os->buf);
		if (old == c->tag) {
			/* our own tag, on a record this transaction does not hold
			 * (exec_round refuses a record locked twice): this CAS was
			 * executed twice by the responder and its first execution
			 * took the lock for us, if the READ behind it in the same
			 * doorbell (executed after it) found the lock word ours
			 * (txn.h "Lock CAS results"); if not, the lock is not ours:
			 * a failed lock, nothing to release */
			if (rd64(image(c, i)) == c->tag) {
				c->stats->cas_replayed++;
				old = 0;
			}
		}
		if (old != 0) {
			c->lockfail_rec = os->rec + 1;
			if (cause < 0 || cause == DMR_ABORT_READ_LOCKED)
				cause = DMR_ABORT_LOCK;
			continue;
		}
		os->flags |= F_LOCKED;
		c->stats->locks_taken++;
		int present = (rd64(image(c, i) + 8) & DMR_VER_PRESENT) != 0;
		if (op->kind == DMR_TOP_INSERT) {
			if (present)
				cause = DMR_ABORT_DUPLICATE;
		} else if (!present) {
			os->flags |= F_ABSENT;
		}
	}
	if (cause >= 0)
		return do_abort(c, cause, out);
	c->round++;
	return exec_round(c, out);
}

static dmr_status_t begin_attempt(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	c->attempts++;
	c->stats->tried++;
	c->round = 0;
	c->looked_round = 0;
	memset(c->ph, 0, sizeof(c->ph));
	c->t_phase = dmr_be_now(c->eng->be, c->worker);
	uint32_t off = BUF_BASE;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		uint32_t rb = l->t[op->table].rec_bytes;
		c->ops[i].flags = 0;
		c->ops[i].buf = off;
		if (op->kind == DMR_TOP_READ)
			off += op->count * rb * 2;
		else
			off += 8 + rb;
		off = (off + 7) & ~7u;
	}
	if (c->eng->index == DMR_TXN_INDEX_HASH) {
		c->lookup_off = off;
		off += t->nops * DMR_IDX_BUCKET_BYTES;
	}
	dmr_status_t st = grow(c, off, &c->err);
	if (st != DMR_OK)
		return st;
	return exec_round(c, out);
}

dmr_status_t dmr_txn_start(dmr_txn_ctx_t *c, const dmr_trace_txn_t *txn, dmr_txn_outcome_t *out_p)
{
	c->txn = txn;
	c->attempts = 0;
	c->t_start = dmr_be_now(c->eng->be, c->worker);
	return begin_attempt(c, out_p);
}

dmr_status_t dmr_txn_on_wc(dmr_txn_ctx_t *c, const dmr_wc_t *wc, dmr_txn_outcome_t *out_p)
{
	if (wc->status != DMR_WC_SUCCESS) {
		return dmr_err_set(
		    &c->err, DMR_ERR_REMOTE,
		    "%s completion failed: %s (worker %u, context %u, trace line %u, "
		    "txn %llu, MN %u)",
		    dmr_wr_opcode_string(wc->opcode), dmr_wc_status_string(wc->status), c->worker,
		    c->id, c->txn ? c->txn->line : 0,
		    c->txn ? (unsigned long long)c->txn->id : 0ull, wc->mn);
	}
	if (dmr_wrid_kind(wc->wr_id) != DMR_WRID_TXN || dmr_wrid_index(wc->wr_id) != c->id)
		return dmr_err_set(&c->err, DMR_ERR_INVALID,
				   "context %u: completion of wr_id 0x%llx (kind %u, index %u) is "
				   "not this context's",
				   c->id, (unsigned long long)wc->wr_id, dmr_wrid_kind(wc->wr_id),
				   dmr_wrid_index(wc->wr_id));
	if (dmr_wrid_seq(wc->wr_id) != c->seq) {
		*out_p = DMR_TXN_RUNNING; /* stale (cannot happen with in-order CQs) */
		return DMR_OK;
	}
	if (c->pending > 1) { /* the round's doorbells to other MNs are due */
		c->pending--;
		*out_p = DMR_TXN_RUNNING;
		return DMR_OK;
	}
	c->pending = 0;
	switch (c->state) {
	case ST_EXEC:
		return check_round(c, out_p);
	case ST_VALIDATE:
		return check_validation(c, out_p);
	case ST_COMMIT:
		return finish(c, DMR_TXN_COMMITTED, out_p);
	case ST_COMMIT_WB:
		return release(c, out_p);
	case ST_LOG:
		return commit(c, out_p);
	case ST_LOOKUP:
		return check_lookup(c, out_p);
	case ST_ABORT:
		return after_abort(c, out_p);
	case ST_BACKOFF:
		c->state = ST_IDLE; /* no round of this attempt checked yet */
		return begin_attempt(c, out_p);
	default:
		return dmr_err_set(&c->err, DMR_ERR_INVALID, "context %u: completion in state %u",
				   c->id, c->state);
	}
}

uint64_t dmr_txn_latency_ps(const dmr_txn_ctx_t *c)
{
	return dmr_be_now(c->eng->be, c->worker) - c->t_start;
}
