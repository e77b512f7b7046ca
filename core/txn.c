/*
 * core/txn.c - transaction contexts as completion-driven state machines:
 * buffers, posting, execution rounds, abort and retry, the completion
 * dispatch. The protocols' own steps are in txn_commit.c and txn_ford.c
 * (txn_impl.h); txn.h and docs/PROTOCOLS.md describe them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "loop_doorbell.h"
#include "txn_impl.h"

static const char *cause_names[DMR_ABORT_NCAUSES] = {
    "lock", "read_locked", "validation", "duplicate", "full", "rpc_locked", "cache_stale",
};

const char *dmr_txn_phase_name(int phase)
{
	static const char *const n[DMR_TXN_NPHASES] = {"execution", "validation", "log", "commit"};
	return phase >= 0 && phase < DMR_TXN_NPHASES ? n[phase] : "?";
}

const char *dmr_txn_protocol_name(int protocol)
{
	static const char *const n[DMR_TXN_NPROTOS] = {"occ",	"ford",	 "farm",
						       "drtmh", "crest", "motor"};
	return protocol >= 0 && protocol < DMR_TXN_NPROTOS ? n[protocol] : "?";
}

dmr_status_t dmr_txn_protocol_parse(const char *s, int *p, dmr_err_t *err)
{
	for (int i = 0; i < DMR_TXN_NPROTOS; i++)
		if (s && strcmp(s, dmr_txn_protocol_name(i)) == 0) {
			*p = i;
			return DMR_OK;
		}
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "option --protocol: '%s': one of occ, ford, farm, drtmh, crest, motor",
			   s ? s : "");
}

dmr_status_t dmr_txn_isolation_parse(const char *s, int protocol, int *iso, dmr_err_t *err)
{
	int v;
	if (s && strcmp(s, "sr") == 0)
		v = DMR_TXN_ISO_SR;
	else if (s && strcmp(s, "si") == 0)
		v = DMR_TXN_ISO_SI;
	else
		return dmr_err_set(err, DMR_ERR_PARSE, "option --isolation: '%s': one of si, sr",
				   s ? s : "");
	if (v == DMR_TXN_ISO_SI && protocol != DMR_TXN_PROTO_MOTOR)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "option --isolation si: only with --protocol motor (--protocol "
				   "%s is serializable: --isolation sr)",
				   dmr_txn_protocol_name(protocol));
	*iso = v;
	return DMR_OK;
}

const char *dmr_abort_cause_name(int cause)
{
	return cause >= 0 && cause < DMR_ABORT_NCAUSES ? cause_names[cause] : "?";
}

/* A zeroed buffer of cap bytes (whole pages): mapped, so that it
 * is zero without a memset and the pages a context never uses are never
 * touched (TPC-C's StockLevel sizes a context's buffer to 64 KiB, most of
 * which no attempt writes: at 16 CNs x 28 x 3, aligned_alloc + memset
 * touched 85 MB more and cost 0.3-0.9 CPU-s of a 4 s run, and calloc,
 * recycling freed buffers, zeroed them again; docs/PERFORMANCE.md "MN
 * memory"). NULL when out of memory. Under AddressSanitizer: calloc. */
#if defined(__SANITIZE_ADDRESS__)
#define ZBUF_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZBUF_HEAP 1
#endif
#endif
#ifdef ZBUF_HEAP /* AddressSanitizer: the heap's redzones guard the buffer */
static uint8_t *zbuf_alloc(uint32_t cap)
{
	return calloc(1, cap);
}

static void zbuf_free(uint8_t *b, uint32_t cap)
{
	(void)cap;
	free(b);
}
#else
static uint8_t *zbuf_alloc(uint32_t cap)
{
	void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void zbuf_free(uint8_t *b, uint32_t cap)
{
	if (b)
		munmap(b, cap);
}
#endif

/* Grow a registered buffer of the context to at least `need` bytes (powers
 * of two from 4 KiB; zeroed when `zero`: zbuf_alloc, page-aligned; else
 * 64-byte aligned): the old one is deregistered and freed (no WR of this
 * context is in flight when it grows), the new one registered with the
 * backend for c->worker. */
static dmr_status_t grow_reg(dmr_txn_ctx_t *c, uint8_t **buf, uint32_t *cap_p, uint8_t *reg,
			     uint32_t need, int zero, dmr_err_t *err)
{
	if (need <= *cap_p)
		return DMR_OK;
	uint32_t cap = *cap_p ? *cap_p : 4096;
	while (cap < need)
		cap *= 2;
	uint8_t *b = zero ? zbuf_alloc(cap) : aligned_alloc(64, cap);
	if (!b)
		return dmr_err_set(err, DMR_ERR_NOMEM, "txn: out of memory (%u bytes)", cap);
	if (*reg)
		(void)dmr_be_mr_dereg(c->eng->be, c->worker, *buf, NULL);
	*reg = 0;
	if (zero)
		zbuf_free(*buf, *cap_p);
	else
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

dmr_status_t dmr_txn_grow_log(dmr_txn_ctx_t *c, uint32_t need, dmr_err_t *err)
{
	const dmr_layout_t *l = c->eng->layout;
	if (need > l->log_bytes)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "txn %llu (trace line %u): its log record needs %u bytes, more "
				   "than a worker's log ring of %llu (16 records of the largest "
				   "table, core/layout.h dmr_layout_log_bytes)",
				   c->txn ? (unsigned long long)c->txn->id : 0ull,
				   c->txn ? c->txn->line : 0, need,
				   (unsigned long long)l->log_bytes);
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
	eng->ts_clock = 1; /* Motor: tx_id_generator = 1 (gen_output.cc) */
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
	c->rpc = (uint8_t)eng->rpc;
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
	if (eng->protocol == DMR_TXN_PROTO_CREST) /* crest words: a CAS per cell;
						     release: FAA + a WRITE per cell */
		per += DMR_CREST_MAX_CELLS;
	c->wrs_cap = (per > 2 ? per : 2) * DMR_TRACE_MAX_OPS + l->mns + l->backups + 2;
	/* mapped like the buffer (zbuf_alloc): sized for the largest doorbell
	 * (49 KiB on one MN), of which a transaction touches a few lines; at 16
	 * CNs x 28 x 3 calloc zeroed 71 MB of them at set-up (callgrind: 1.1 M
	 * of the run's 2.4 M last-level write misses) */
	c->wrs = (dmr_wr_t *)zbuf_alloc(c->wrs_cap * (uint32_t)sizeof(*c->wrs));
	c->wrs2 =
	    l->mns > 1 ? (dmr_wr_t *)zbuf_alloc(c->wrs_cap * (uint32_t)sizeof(*c->wrs2)) : NULL;
	c->wr_mn = calloc(c->wrs_cap, 1);
	int motor = eng->protocol == DMR_TXN_PROTO_MOTOR;
	c->mv = motor ? calloc(DMR_TRACE_MAX_TYPES, sizeof(*c->mv)) : NULL;
	int crest = eng->protocol == DMR_TXN_PROTO_CREST;
	c->cr = crest ? calloc(DMR_TRACE_MAX_TYPES, sizeof(*c->cr)) : NULL;
	if (!c->wrs || !c->wr_mn || (l->mns > 1 && !c->wrs2) || (motor && !c->mv) ||
	    (crest && !c->cr))
		return dmr_err_set(err, DMR_ERR_NOMEM, "txn: out of memory");
	dmr_status_t st = grow(c, 4096, err);
	if (st == DMR_OK)
		st = dmr_txn_grow_log(c, 4096, err);
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
	zbuf_free(c->buf, c->buf_cap);
	c->buf_cap = 0;
	zbuf_free((uint8_t *)c->wrs, c->wrs_cap * (uint32_t)sizeof(*c->wrs));
	zbuf_free((uint8_t *)c->wrs2, c->wrs_cap * (uint32_t)sizeof(*c->wrs2));
	free(c->wr_mn);
	free(c->mv);
	c->mv = NULL;
	free(c->cr);
	c->cr = NULL;
	free(c->logbuf);
	c->buf = c->logbuf = NULL;
	c->wrs = c->wrs2 = NULL;
	c->wr_mn = NULL;
}

int dmr_txn_guard_true(dmr_txn_ctx_t *c, const dmr_trace_guard_t *g)
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

/* One post of worker to mn: its own doorbell, or staged by Loop C. */
static dmr_status_t post_one(dmr_txn_ctx_t *c, uint32_t mn, const dmr_wr_t *wrs, uint32_t n)
{
	if (c->eng->doorbell)
		return dmr_doorbell_post(c->eng->doorbell, c->worker, mn, wrs, n, &c->err);
	return dmr_be_post(c->eng->be, c->worker, mn, wrs, n, &c->err);
}

/* Post the n WRs of c->wrs: one post per MN they name (in their order, its
 * last WR signaled; a doorbell each, or staged by Loop C); the context
 * waits for all of them (c->pending). */
dmr_status_t dmr_txn_post(dmr_txn_ctx_t *c, uint32_t n)
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
		return post_one(c, 0, c->wrs, n);
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
		dmr_status_t st = post_one(c, mn, c->wrs2, k);
		if (st != DMR_OK)
			return st;
		c->pending++;
	}
	return DMR_OK;
}

/* The transaction finished with `outcome` (COMMITTED or GAVE_UP). */
dmr_status_t dmr_txn_finish(dmr_txn_ctx_t *c, dmr_txn_outcome_t outcome, dmr_txn_outcome_t *out)
{
	c->state = ST_IDLE;
	if (crest_proto(c))
		dmr_txn_crest_local_release(c);
	if (outcome == DMR_TXN_COMMITTED) {
		phase_end(c, DMR_TXN_PHASE_COMMIT);
		for (int p = 0; p < DMR_TXN_NPHASES; p++)
			c->stats->phase_ps[p] += c->ph[p];
		c->stats->committed++;
		c->stats->committed_xv += c->txn->xv;
		if (c->eng->cncache) /* --cn-cache: what it wrote is dropped */
			dmr_txn_cnc_commit(c);
		if (c->mv) {
			mv_of(c)->versions_read += c->mv_reads;
			mv_of(c)->old_reads += c->mv_old;
		}
	} else {
		c->stats->gave_up++;
	}
	*out = outcome;
	return DMR_OK;
}

static dmr_status_t begin_attempt(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);
static dmr_status_t exec_round(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out);

/* Release the locks taken (abort). */
dmr_status_t dmr_txn_abort(dmr_txn_ctx_t *c, int cause, dmr_txn_outcome_t *out)
{
	c->stats->aborts[cause]++;
	c->last_cause = cause;
	uint32_t n = 0;
	if (c->eng->protocol == DMR_TXN_PROTO_FORD && c->state == ST_EXEC) {
		/* DTX::ExeRW writes the undo log before TxExe aborts */
		dmr_status_t st = dmr_txn_undo_log(c, &n);
		if (st != DMR_OK)
			return st;
	}
	for (uint32_t i = 0; i < c->txn->nops; i++) {
		if (!(c->ops[i].flags & F_LOCKED))
			continue;
		if (crest_proto(c)) { /* the cells' bits only */
			dmr_txn_crest_unlock(c, i, &n);
			continue;
		}
		dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
		wr->opcode = DMR_WR_WRITE;
		wr->local = c->buf + ZERO_OFF;
		wr->remote = lockw(c, i);
		wr->length = 8;
		c->stats->writes++;
		c->stats->locks_released++;
	}
	c->state = ST_ABORT;
	if (n == 0) {
		dmr_wc_t wc = {.wr_id = dmr_wrid(DMR_WRID_TXN, c->id, c->seq)};
		return dmr_txn_on_wc(c, &wc, out);
	}
	return posted(dmr_txn_post(c, n), out);
}

static dmr_status_t after_abort(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	int cause = c->last_cause;
	if (crest_proto(c)) /* the unlocks completed: the CN's waiters may go */
		dmr_txn_crest_local_release(c);
	if (cause == DMR_ABORT_DUPLICATE || cause == DMR_ABORT_FULL ||
	    c->attempts > c->eng->retries)
		return dmr_txn_finish(c, DMR_TXN_GAVE_UP, out);
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

/* Resolve op i's record; returns 1 issue, 0 skip, -1 insert range exhausted
 * (static, inlined into the execution round; dmr_txn_resolve below for
 * txn_rpc.c). */
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
	    !dmr_txn_guard_true(c, &op->guard))
		return 0;
	*slot_p = (uint64_t)slot;
	return 1;
}

int dmr_txn_resolve(dmr_txn_ctx_t *c, uint32_t i, uint64_t *slot_p)
{
	return resolve(c, i, slot_p);
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

/* The execution round; motor (a constant where it is inlined, below):
 * --protocol motor, whose CVT READs land after the views (mv_cvt). */
static inline __attribute__((always_inline)) dmr_status_t exec_round_as(dmr_txn_ctx_t *c, int motor,
									dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	const dmr_layout_t *l = c->eng->layout;
	/* FORD: a round was checked, its undo log goes with the next doorbell */
	int logdue = c->eng->protocol == DMR_TXN_PROTO_FORD && c->state == ST_EXEC;
	const int crest = crest_proto(c);
	for (;;) {
		/* first op of this round: from that of an earlier round (the
		 * rounds of a transaction's ops do not decrease), so that a
		 * transaction's rounds walk its ops once */
		uint32_t i0 = c->round_op;
		while (i0 < t->nops && t->ops[i0].round < c->round)
			i0++;
		c->round_op = i0;
		if (i0 == t->nops) {
			if (c->eng->protocol == DMR_TXN_PROTO_MOTOR)
				return dmr_txn_mv_commit_start(c, out);
			return cmp_proto(c) ? dmr_txn_cmp_lock(c, out)
					    : dmr_txn_validate(c, logdue, out);
		}
		if (c->eng->index == DMR_TXN_INDEX_HASH && c->looked_round != c->round + 1) {
			c->looked_round = c->round + 1;
			uint32_t nb = 0;
			dmr_status_t st = lookup(c, i0, &nb);
			if (st != DMR_OK)
				return st;
			if (nb) {
				if (logdue && (st = dmr_txn_undo_log(c, &nb)) != DMR_OK)
					return st;
				c->state = ST_LOOKUP;
				return posted(dmr_txn_post(c, nb), out);
			}
		}
		if (crest && c->eng->crest->local) {
			/* CREST's local execution: wait for this CN's holders
			 * of the round's cells before posting the CASes */
			uint64_t rec[DMR_TRACE_MAX_OPS];
			uint32_t opi[DMR_TRACE_MAX_OPS], nl = 0;
			for (uint32_t k = i0; k < t->nops && t->ops[k].round == c->round; k++) {
				uint64_t slot;
				if (t->ops[k].kind != DMR_TOP_READ && resolve(c, k, &slot) == 1) {
					rec[nl] = dmr_layout_rec(l, t->ops[k].table, slot);
					opi[nl++] = k;
				}
			}
			dmr_status_t st;
			if (dmr_txn_crest_local_gate(c, nl, rec, opi, &st, out))
				return st;
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
				return dmr_txn_abort(c, DMR_ABORT_FULL, out);
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
				 * then only means a replayed atomic, see txn.h).
				 * The record first: it is in the dense op states,
				 * where the kind is in the trace's 160-byte ops
				 * (this loop was 2 % of a TPC-C run's instructions
				 * when it read the flags and kind first) */
				for (uint32_t j = 0; j < i; j++)
					if (c->ops[j].rec == os->rec &&
					    (c->ops[j].flags & F_ISSUED) &&
					    t->ops[j].kind != DMR_TOP_READ)
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
			if (crest && op->kind == DMR_TOP_READ && c->eng->crest->cache &&
			    dmr_txn_crest_cache_hit(c, i))
				continue; /* CREST's CN cache: no READ */
			if (op->kind == DMR_TOP_READ && (c->cnc_tables >> op->table & 1) &&
			    dmr_txn_cnc_hit(c, i))
				continue; /* --cn-cache: no READ (txn_cncache.h) */
			if (op->kind == DMR_TOP_READ || cmp_proto(c)) {
				/* FARM, DRTMH: read-write records READ without a
				 * lock too (CompareIssueReadRW), into their image */
				/* lock words apart: the words first, then the
				 * records (as one READ of a header reads them) */
				if (op->kind == DMR_TOP_READ && apart(c, i))
					wr_lock_read(c, &n, prim(c, i), i, op->count, lkbuf(c, i));
				dmr_wr_t *wr = wr_to(c, &n, prim(c, i));
				wr->opcode = DMR_WR_READ;
				/* MOTOR (c->mv set): the CVT lands after the view
				 * (txn_impl.h mv_cvt) */
				wr->local = motor ? mv_cvt(c, i) : image(c, i);
				wr->remote = os->rec;
				wr->length = op->count * rb;
				c->stats->reads++;
				if (crest && l->t[op->table].cell_words) /* crest words */
					dmr_txn_crest_cell_read(c, i, &n, 0);
			} else if (crest) {
				dmr_txn_crest_lock(c, i, &n);
			} else {
				dmr_wr_t *cas = wr_to(c, &n, prim(c, i));
				cas->opcode = DMR_WR_CAS;
				cas->local = c->buf + os->buf;
				cas->remote = lockw(c, i);
				cas->compare_add = 0;
				cas->swap = c->tag;
				cas->length = 8;
				dmr_wr_t *rd = wr_to(c, &n, prim(c, i));
				rd->opcode = DMR_WR_READ;
				rd->local = motor ? mv_cvt(c, i) : c->buf + os->buf + 8;
				rd->remote = os->rec;
				rd->length = rb;
				c->stats->atomics++;
				c->stats->reads++;
				/* lock words apart: the word after the CAS, as the
				 * header the READ above would have carried */
				if (apart(c, i))
					wr_lock_read(c, &n, prim(c, i), i, 1, lkbuf(c, i));
			}
		}
		if (n == 0) {
			c->round++;
			continue;
		}
		if (logdue) {
			dmr_status_t st = dmr_txn_undo_log(c, &n);
			if (st != DMR_OK)
				return st;
		}
		c->state = ST_EXEC;
		return posted(dmr_txn_post(c, n), out);
	}
}

/* A round's completion. motor: --protocol motor, its views filled
 * (dmr_txn_mv_views), mvr the reason they give to abort (-1: none); both
 * constants at the other protocols' call. */
static dmr_status_t exec_round(dmr_txn_ctx_t *c, dmr_txn_outcome_t *out)
{
	if (__builtin_expect(c->mv != NULL, 0))
		return exec_round_as(c, 1, out);
	return exec_round_as(c, 0, out);
}

static inline __attribute__((always_inline)) dmr_status_t
check_round(dmr_txn_ctx_t *c, int motor, int mvr, dmr_txn_outcome_t *out)
{
	const dmr_trace_txn_t *t = c->txn;
	int cause = -1;
	unsigned rl_table = 0, lk_table = 0;
	const int crest = crest_proto(c);
	/* MOTOR reads a version whatever the lock (MVCC): its views' lock
	 * words are not looked at (the views were filled before this call) */
	const uint64_t refuse =
	    motor ? 0 : (c->eng->protocol == DMR_TXN_PROTO_OCC ? ~0ull : DMR_LOCK_INVISIBLE);
	/* in locals: the crest calls below could change them, as far as the
	 * compiler knows, which would reload them every op */
	const uint32_t nops = t->nops, round = c->round;
	/* the round's ops only (contiguous, from round_op): at 16 CNs the
	 * 160-byte op records of the other rounds were cold, and reading
	 * their round was 57 % of this function's time (perf) */
	for (uint32_t i = c->round_op; i < nops && t->ops[i].round == round; i++) {
		const dmr_trace_op_t *op = &t->ops[i];
		dmr_txn_opst_t *os = &c->ops[i];
		if (!(os->flags & F_ISSUED))
			continue;
		if (apart(c, i)) /* the lock words READ apart into the headers */
			lock_splice(
			    image(c, i),
			    op->kind == DMR_TOP_READ ? c->eng->layout->t[op->table].rec_bytes : 0,
			    lkbuf(c, i), op->kind == DMR_TOP_READ ? op->count : 1);
		if (op->kind == DMR_TOP_READ) {
			uint32_t rb = c->eng->layout->t[op->table].rec_bytes;
			const uint8_t *img = c->buf + os->buf;
			/* FORD reads a locked record unless it is invisible
			 * (LOCK_REFUSE_READ_RO 0, INV_ABORT 1: CheckReadRO;
			 * its baselines too, CompareCheckReadRORW calls
			 * CheckDirectRO) */
			int locked = 0;
			if (crest) /* the locks of the cells it reads */
				locked = dmr_txn_crest_read_locked(c, i, 0);
			else
				for (uint32_t r = 0; r < op->count; r++)
					locked |= (rd64(img + (uint64_t)r * rb) & refuse) != 0;
			if (locked && cause < 0) {
				cause = DMR_ABORT_READ_LOCKED;
				rl_table = op->table;
			}
			if (!(rd64(img + 8) & DMR_VER_PRESENT))
				os->flags |= F_ABSENT;
			if (c->cnc_tables >> op->table & 1) /* --cn-cache: READ, so put */
				dmr_txn_cnc_fill(c, i);
			continue;
		}
		if (cmp_proto(c)) {
			/* FARM, DRTMH: READ without a lock, a locked one too
			 * (LOCK_REFUSE_READ_RW 0, CompareCheckDirectRW); the
			 * lock round follows execution */
			int present = (rd64(image(c, i) + 8) & DMR_VER_PRESENT) != 0;
			if (op->kind == DMR_TOP_INSERT) {
				if (present && cause < 0)
					cause = DMR_ABORT_DUPLICATE;
			} else if (!present) {
				os->flags |= F_ABSENT;
			}
			continue;
		}
		uint64_t old = rd64(c->buf + os->buf);
		if (crest) {
			/* the lock is ours when none of its cells was locked;
			 * words: cells taken before one failed are released
			 * at the abort (F_LOCKED) */
			uint32_t held;
			old = dmr_txn_crest_lock_failed(c, i, &held);
			if (old && held) {
				os->flags |= F_LOCKED;
				c->stats->locks_taken++;
			}
		} else if (old != 0) {
			/* the CAS failed, but our own tag in the lock word that the
			 * READ behind it in the same doorbell (executed after it)
			 * found is a lock only this CAS can have taken (exec_round
			 * refuses a record locked twice; our earlier unlocks
			 * completed): the responder executed it a second time, which
			 * returned our tag, or after the execution whose result we
			 * got (txn.h "Lock CAS results"). The lock is ours. Else it
			 * is a failed lock, nothing to release. */
			if (rd64(image(c, i)) == c->tag) {
				c->stats->cas_replayed++;
				old = 0;
			}
		}
		if (old != 0) {
			c->lockfail_rec = os->rec + 1;
			if (cause < 0 || cause == DMR_ABORT_READ_LOCKED) {
				cause = DMR_ABORT_LOCK;
				lk_table = op->table;
			}
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
	if (motor && cause < 0 && mvr >= 0) {
		mv_of(c)->aborts[mvr]++;
		cause = DMR_ABORT_VALIDATION;
	}
	if (cause >= 0) {
		/* the abort's table: the read-only record found locked, or the
		 * first record whose lock failed */
		if (c->xstats && cause == DMR_ABORT_READ_LOCKED)
			c->xstats->read_locked_by_table[rl_table]++;
		else if (c->xstats && cause == DMR_ABORT_LOCK)
			c->xstats->lock_by_table[lk_table]++;
		return dmr_txn_abort(c, cause, out);
	}
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
	c->round_op = 0;
	c->looked_round = 0;
	c->crest_hits = 0;
	memset(c->ph, 0, sizeof(c->ph));
	c->t_phase = dmr_be_now(c->eng->be, c->worker);
	uint32_t off = BUF_BASE;
	const int crest_w = crest_proto(c) && c->eng->crest->locks == DMR_CREST_LOCKS_WORDS;
	if (__builtin_expect(c->eng->protocol == DMR_TXN_PROTO_MOTOR, 0))
		off = dmr_txn_mv_begin(c, off);
	else
		for (uint32_t i = 0; i < t->nops; i++) {
			const dmr_trace_op_t *op = &t->ops[i];
			uint32_t rb = l->t[op->table].rec_bytes;
			c->ops[i].flags = 0;
			c->ops[i].buf = off;
			if (op->kind == DMR_TOP_READ)
				off += op->count * rb * 2;
			else /* CAS result, image (FARM, DRTMH: and the version READ) */
				off += 8 + rb + (cmp_proto(c) ? DMR_REC_HDR : 0);
			if (l->t[op->table].lock_base) /* lock words apart: lkbuf */
				off += 8 * (op->kind == DMR_TOP_READ ? 2 * op->count : 1);
			if (crest_w) /* crest words: txn_crest.c cellbuf */
				off += 8 * l->t[op->table].cell_words *
				       (op->kind == DMR_TOP_READ ? 2 * op->count : 1);
			off = (off + 7) & ~7u;
		}
	if (c->eng->index == DMR_TXN_INDEX_HASH) {
		c->lookup_off = off;
		off += t->nops * DMR_IDX_BUCKET_BYTES;
	}
	dmr_status_t st = grow(c, off, &c->err);
	if (st != DMR_OK)
		return st;
	if (c->by_rpc) /* the whole attempt as one RPC (txn_rpc.c) */
		return dmr_txn_rpc_attempt(c, out);
	return exec_round(c, out);
}

dmr_status_t dmr_txn_start(dmr_txn_ctx_t *c, const dmr_trace_txn_t *txn, dmr_txn_outcome_t *out_p)
{
	c->txn = txn;
	c->attempts = 0;
	c->by_rpc = 0;
	dmr_status_t st = c->rpc ? dmr_txn_rpc_choose(c) : DMR_OK;
	if (st != DMR_OK)
		return st;
	c->cnc_tables = c->eng->cncache ? dmr_txn_cnc_mask(c) : 0;
	if (crest_proto(c))
		dmr_txn_crest_masks(c);
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
		if (__builtin_expect(c->mv != NULL, 0))
			return check_round(c, 1, dmr_txn_mv_views(c), out_p);
		return check_round(c, 0, -1, out_p);
	case ST_VALIDATE:
		return dmr_txn_check_validation(c, out_p);
	case ST_MV_VALIDATE:
		return dmr_txn_mv_check_validation(c, out_p);
	case ST_COMMIT:
		return dmr_txn_finish(c, DMR_TXN_COMMITTED, out_p);
	case ST_COMMIT_WB:
		return dmr_txn_release(c, out_p);
	case ST_LOG:
		return dmr_txn_commit(c, out_p);
	case ST_LOOKUP:
		return check_lookup(c, out_p);
	case ST_ABORT:
		return after_abort(c, out_p);
	case ST_CMP_LOCK:
	case ST_CMP_VALIDATE:
	case ST_CMP_BACKUP:
	case ST_CMP_PRIMARY:
	case ST_CMP_UNLOCK:
		return dmr_txn_cmp_on_wc(c, out_p);
	case ST_BACKOFF:
		c->state = ST_IDLE; /* no round of this attempt checked yet */
		return begin_attempt(c, out_p);
	case ST_LOCAL_WAIT:
		return exec_round(c, out_p);
	case ST_RPC:
		return dmr_txn_rpc_on_wc(c, out_p);
	default:
		return dmr_err_set(&c->err, DMR_ERR_INVALID, "context %u: completion in state %u",
				   c->id, c->state);
	}
}

uint64_t dmr_txn_latency_ps(const dmr_txn_ctx_t *c)
{
	return dmr_be_now(c->eng->be, c->worker) - c->t_start;
}
