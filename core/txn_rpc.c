/*
 * core/txn_rpc.c - a transaction as one RPC executed by the MN's CPU
 * (issue 14 lever A1; txn.h dmr_txn_rpc_t, docs/AURA.md "A1").
 *
 * The CN side: choose the path at dmr_txn_start, lay out the attempt as
 * one-sided execution would (begin_attempt: the same image buffers), send
 * one dmr_be_rpc whose handler (rpc_handler below) executes the attempt at
 * the MN, and turn its answer into a commit or an abort. The MN side, the
 * handler, keeps FORD's record and lock format (core/layout.h: lock word,
 * version word, payload), so that one-sided transactions running beside it
 * stay serializable with it:
 *  - it takes the write set's lock words with a CAS 0 -> the context's tag,
 *    as a one-sided lock does (a one-sided CAS finding it aborts);
 *  - it reads the read set and finds each record unlocked, then, once every
 *    lock is taken, validates the read set again (unlocked, same version),
 *    as one-sided validation does: OCC at the MN;
 *  - it writes the new images with version + 1 (dmr_txn_stage, the
 *    one-sided commit's staging: a one-sided reader of the old version
 *    then fails its validation), under "locked | invisible" with FORD
 *    (its readers read a locked record unless it is invisible);
 *  - it writes the redo log record to the worker's ring, as occ's commit;
 *  - it releases the locks (store 0).
 * A lock held by another transaction (one-sided or RPC) makes it release
 * what it took and answer "locked". On shm the handler runs concurrently
 * with one-sided CN threads: lock words are taken with real atomics.
 * Not done at the MN: FORD's undo log (its backups are refused here) and
 * the hash index's bucket reads (the MN knows the addresses; --index hash
 * adds one record access per record to the cost instead).
 */
#include "txn_impl.h"

/* The answer: the first 8 bytes of the response, at RPC_ANS_OFF of the
 * context's buffer (scratch below BUF_BASE, txn_impl.h). */
#define RPC_ANS_OFF 32u
enum {
	ANS_COMMITTED = 0,
	ANS_LOCKED = 1,	   /* a lock held: DMR_ABORT_RPC_LOCKED */
	ANS_CHANGED = 2,   /* a read record's version changed: validation */
	ANS_DUPLICATE = 3, /* an insert found the slot present */
	ANS_FULL = 4,	   /* an insert's range is exhausted */
	ANS_TWICE = 5,	   /* a trace error: a record locked twice */
};

/* Request message bytes: what a packed encoding of the transaction takes
 * (its id, type and op count in 16 bytes; per op table, kind, round,
 * count, dependency and guard in 16 bytes and its key in 8; per action
 * 16): the handler reads the trace's ops through its argument instead
 * (backend.h dmr_be_rpc: sim and shm run in one process). */
#define RPC_REQ_HDR 16u
#define RPC_REQ_OP 24u
#define RPC_REQ_ACT 16u

const char *dmr_txn_rpc_name(int rpc)
{
	static const char *const n[] = {"none", "all", "half"};
	return rpc >= 0 && rpc <= DMR_TXN_RPC_ALT ? n[rpc] : "?";
}

dmr_status_t dmr_txn_rpc_parse(const char *s, int protocol, int *rpc, dmr_err_t *err)
{
	int v = -1;
	for (int i = 0; s && i <= DMR_TXN_RPC_ALT; i++)
		if (strcmp(s, dmr_txn_rpc_name(i)) == 0)
			v = i;
	if (v < 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option --rpc: '%s': one of none, all, half (default none)",
				   s ? s : "");
	if (v != DMR_TXN_RPC_OFF && protocol != DMR_TXN_PROTO_OCC && protocol != DMR_TXN_PROTO_FORD)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --rpc %s: protocol %s has no RPC path (occ and ford "
				   "have one)",
				   s, dmr_txn_protocol_name(protocol));
	*rpc = v;
	return DMR_OK;
}

int dmr_txn_rpc_mn(const dmr_layout_t *l, const dmr_trace_txn_t *t)
{
	if (l->backups)
		return -1;
	int mn = t->nops ? l->t[t->ops[0].table].primary : 0;
	for (uint32_t i = 1; i < t->nops; i++)
		if (l->t[t->ops[i].table].primary != mn)
			return -1;
	return mn;
}

static int target_mn(const dmr_txn_ctx_t *c)
{
	return dmr_txn_rpc_mn(c->eng->layout, c->txn);
}

dmr_status_t dmr_txn_rpc_choose(dmr_txn_ctx_t *c)
{
	int p = c->eng->protocol;
	if (p != DMR_TXN_PROTO_OCC && p != DMR_TXN_PROTO_FORD)
		return dmr_err_set(&c->err, DMR_ERR_INVALID,
				   "txn: protocol %s has no RPC path (occ and ford have one)",
				   dmr_txn_protocol_name(p));
	int want = c->rpc == DMR_TXN_RPC_ON || (c->rpc == DMR_TXN_RPC_ALT && (c->txn->id & 1));
	c->by_rpc = want && target_mn(c) >= 0;
	if (want && !c->by_rpc)
		c->stats->rpc_fallbacks++;
	return DMR_OK;
}

static inline uint64_t *word_at(uint8_t *mem, uint64_t off)
{
	return (uint64_t *)(void *)(mem + off);
}

/* Release the locks the handler took (store 0: the holder's release). */
static void release(dmr_txn_ctx_t *c, uint8_t *mem)
{
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if (c->ops[i].flags & F_LOCKED) {
			__atomic_store_n(word_at(mem, c->ops[i].rec), 0, __ATOMIC_RELEASE);
			c->ops[i].flags &= (uint8_t)~F_LOCKED;
			c->stats->locks_released++;
		}
}

/* Execution at the MN: each op in trace order (a round's keys depend only
 * on earlier rounds' images, so trace order is round order); returns the
 * answer, the locks taken marked F_LOCKED. */
static int execute(dmr_txn_ctx_t *c, uint8_t *mem)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		dmr_txn_opst_t *os = &c->ops[i];
		uint64_t slot;
		int r = dmr_txn_resolve(c, i, &slot);
		if (r < 0) {
			os->flags = F_FULL;
			return ANS_FULL;
		}
		if (r == 0) {
			os->flags = F_SKIPPED;
			c->stats->skipped_ops++;
			continue;
		}
		os->flags = F_ISSUED;
		os->rec = dmr_layout_rec(l, op->table, slot);
		uint32_t rb = l->t[op->table].rec_bytes;
		if (op->kind == DMR_TOP_READ) {
			uint8_t *img = image(c, i);
			memcpy(img, mem + os->rec, (size_t)op->count * rb);
			for (uint32_t k = 0; k < op->count; k++)
				if (__atomic_load_n(word_at(mem, os->rec + (uint64_t)k * rb),
						    __ATOMIC_ACQUIRE) != 0)
					return ANS_LOCKED;
			if (!(rd64(img + 8) & DMR_VER_PRESENT))
				os->flags |= F_ABSENT;
			continue;
		}
		for (uint32_t j = 0; j < i; j++)
			if ((c->ops[j].flags & F_ISSUED) && t->ops[j].kind != DMR_TOP_READ &&
			    c->ops[j].rec == os->rec) {
				dmr_err_set(&c->err, DMR_ERR_INVALID,
					    "%s:%u: txn %llu op %u: locks a record it already "
					    "locked (op %u, line %u, locks it too: the same record "
					    "twice in one transaction)",
					    c->eng->source ? c->eng->source : "trace", t->line + i,
					    (unsigned long long)t->id, i, j, t->line + j);
				return ANS_TWICE;
			}
		uint64_t expect = 0;
		if (!__atomic_compare_exchange_n(word_at(mem, os->rec), &expect, c->tag, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			c->lockfail_rec = os->rec + 1;
			return ANS_LOCKED;
		}
		os->flags |= F_LOCKED;
		c->stats->locks_taken++;
		wr64(c->buf + os->buf, 0); /* the "CAS result" a one-sided lock leaves */
		memcpy(image(c, i), mem + os->rec, rb);
		int present = (rd64(image(c, i) + 8) & DMR_VER_PRESENT) != 0;
		if (op->kind == DMR_TOP_INSERT && present)
			return ANS_DUPLICATE;
		if (!present)
			os->flags |= F_ABSENT;
	}
	return ANS_COMMITTED;
}

/* Validation at the MN, every lock taken: each record read is still
 * unlocked and at the version it was read. */
static int validate(dmr_txn_ctx_t *c, uint8_t *mem)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		if (!validated_read(c, op, i))
			continue;
		uint32_t rb = l->t[op->table].rec_bytes;
		for (uint32_t k = 0; k < op->count; k++) {
			uint64_t rec = c->ops[i].rec + (uint64_t)k * rb;
			if (__atomic_load_n(word_at(mem, rec), __ATOMIC_ACQUIRE) != 0)
				return ANS_LOCKED;
			uint64_t ver = __atomic_load_n(word_at(mem, rec + 8), __ATOMIC_ACQUIRE);
			if (ver != rd64(image(c, i) + (uint64_t)k * rb + 8))
				return ANS_CHANGED;
		}
	}
	return ANS_COMMITTED;
}

/* The commit at the MN: the new images staged (dmr_txn_stage, as the
 * one-sided commit stages them: version + 1) and written from the version
 * word on, FORD under "locked | invisible"; the redo log record to the
 * worker's ring (wr_redo_log's offsets). The log buffer was grown on the
 * CN before the RPC was sent. */
static void commit(dmr_txn_ctx_t *c, uint8_t *mem)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	int ford = c->eng->protocol == DMR_TXN_PROTO_FORD;
	uint32_t pos = 0;
	for (uint32_t i = 0; i < t->nops; i++) {
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_LOCKED))
			continue;
		uint32_t pb = l->t[t->ops[i].table].payload_bytes;
		if (!dmr_txn_stage(c, i, pos))
			continue;
		if (ford)
			__atomic_store_n(word_at(mem, os->rec), c->tag | DMR_LOCK_INVISIBLE,
					 __ATOMIC_RELEASE);
		memcpy(mem + os->rec + 8, c->logbuf + pos + 16, 8 + (size_t)pb);
		pos += 24 + pb;
	}
	if (pos == 0)
		return;
	uint64_t ring = l->log_base + ((uint64_t)c->eng->first_worker + c->worker) * l->log_bytes;
	if (c->log_off + pos > l->log_bytes)
		c->log_off = 0;
	memcpy(mem + ring + c->log_off, c->logbuf, pos);
	c->log_off += (pos + 7) & ~7u;
	/* no fence: release()'s unlocks are release stores, which order these
	 * writes before them (and gcc's TSan refuses atomic_thread_fence) */
}

/* The handler (backend.h dmr_be_rpc_fn), at the MN: the whole attempt on
 * the MN's region mem; the answer at RPC_ANS_OFF, the read set's images
 * where one-sided execution puts them. Returns the response's bytes. */
static uint32_t rpc_handler(void *arg, uint8_t *mem, uint64_t mem_len)
{
	dmr_txn_ctx_t *c = arg;
	(void)mem_len; /* the layout fits the region: checked at load */
	int ans = execute(c, mem);
	if (ans == ANS_COMMITTED)
		ans = validate(c, mem);
	if (ans == ANS_COMMITTED)
		commit(c, mem);
	release(c, mem);
	wr64(c->buf + RPC_ANS_OFF, (uint64_t)ans);
	uint32_t bytes = 8;
	for (uint32_t i = 0; i < c->txn->nops; i++)
		if (c->txn->ops[i].kind == DMR_TOP_READ)
			bytes += c->txn->ops[i].count *
				 c->eng->layout->t[c->txn->ops[i].table].rec_bytes;
	return bytes;
}

dmr_status_t dmr_txn_rpc_attempt(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	uint32_t req = RPC_REQ_HDR, resp = 8, acc = 0, need = 16;
	for (uint32_t i = 0; i < t->nops; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		req += RPC_REQ_OP + RPC_REQ_ACT * op->nacts;
		acc += op->count * (c->eng->index == DMR_TXN_INDEX_HASH ? 2 : 1);
		if (op->kind == DMR_TOP_READ)
			resp += op->count * l->t[op->table].rec_bytes;
		else
			need += 24 + l->t[op->table].payload_bytes;
	}
	/* the handler stages into logbuf and must not call the backend */
	dmr_status_t st = dmr_txn_grow_log(c, need, &c->err);
	if (st != DMR_OK)
		return st;
	c->state = ST_RPC;
	c->seq++;
	c->stats->rpcs++;
	dmr_be_rpc_t rpc = {.wr_id = dmr_wrid(DMR_WRID_TXN, c->id, c->seq),
			    .handler = rpc_handler,
			    .arg = c,
			    .req_bytes = req,
			    .resp_cap = resp,
			    .accesses = acc};
	return posted(dmr_be_rpc(c->eng->be, c->worker, (uint32_t)target_mn(c), &rpc, &c->err),
		      out);
}

dmr_status_t dmr_txn_rpc_on_wc(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	phase_end(c, DMR_TXN_PHASE_EXEC); /* the round trip: execution */
	switch (rd64(c->buf + RPC_ANS_OFF)) {
	case ANS_COMMITTED:
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out);
	case ANS_LOCKED:
		return dmr_txn_abort(c, DMR_ABORT_RPC_LOCKED, out);
	case ANS_CHANGED:
		return dmr_txn_abort(c, DMR_ABORT_VALIDATION, out);
	case ANS_DUPLICATE:
		return dmr_txn_abort(c, DMR_ABORT_DUPLICATE, out);
	case ANS_FULL:
		return dmr_txn_abort(c, DMR_ABORT_FULL, out);
	default: /* ANS_TWICE: c->err says which ops */
		return DMR_ERR_INVALID;
	}
}
