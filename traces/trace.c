/*
 * traces/trace.c, trace_read.c, trace_write.c - streaming reader and writer
 * of the dmreplay trace format (traces/FORMAT.md, contract in traces/trace.h).
 * trace.c: the static checks of an op, header helpers, transaction builders;
 * trace_read.c: the reader; trace_write.c: the writer; trace_impl.h: shared.
 *
 * Reader: the file is read in 256 KiB chunks; header lines are parsed by
 * hand; a plain data line (no quote, no CR, 13 fields) is split in place in
 * the read buffer (rd_fast_split), any other is fed to libcsv alone, so
 * that each csv_parse() call completes exactly one row. A row's op is
 * parsed straight into the caller's transaction (the first row of the next
 * transaction is kept in r->pending until the next dmr_trace_next()).
 * Integers are parsed by hand (no strtol). Memory is two fixed buffers.
 *
 * Writer: rows are formatted by hand into a 256 KiB buffer written to
 * PATH.tmp, renamed to PATH by dmr_trace_finish().
 *
 * The static checks of one op against the header and the earlier ops of
 * its transaction (dmr_trace_check_op) are shared by reader and writer.
 */
#include "trace_impl.h"

/*
 * Static checks of op i of t against h and ops 0..i-1 (FORMAT.md "Checks").
 * Returns 0, or -1 with *field_p the column name and the reason in why.
 */
int dmr_trace_check_op(const dmr_trace_hdr_t *h, const dmr_trace_txn_t *t, uint32_t i,
		       const char **field_p, char *why, size_t whysz)
{
	const dmr_trace_op_t *o = &t->ops[i];
	const dmr_trace_table_t *tb;
	uint32_t words;
	int has_range = o->lo != 0 || o->hi != 0;

#define FAIL(col, ...)                                                                             \
	do {                                                                                       \
		*field_p = trace_colname[col];                                                     \
		snprintf(why, whysz, __VA_ARGS__);                                                 \
		return -1;                                                                         \
	} while (0)

	if (o->kind != DMR_TOP_READ && o->kind != DMR_TOP_UPDATE && o->kind != DMR_TOP_INSERT &&
	    o->kind != DMR_TOP_DELETE)
		FAIL(COL_OP, "unknown op kind %d (expected R, U, I or D)", o->kind);
	if (o->table >= h->ntables)
		FAIL(COL_TABLE, "table index %u not declared (%u tables)", o->table, h->ntables);
	tb = &h->tables[o->table];
	words = tb->payload_bytes / 8;
	if (i > 0 && o->round < t->ops[i - 1].round)
		FAIL(COL_ROUND, "round %u after round %u: rounds must not decrease within a txn",
		     o->round, t->ops[i - 1].round);
	if (o->count == 0)
		FAIL(COL_COUNT, "count must be >= 1");
	if (o->count != 1 && o->kind != DMR_TOP_READ)
		FAIL(COL_COUNT, "count %u on op kind %c: only R ops read a range", o->count,
		     o->kind);

	if (o->dep.op >= 0) {
		const dmr_trace_op_t *d;
		int64_t first, last;

		if ((uint32_t)o->dep.op >= i)
			FAIL(COL_DEP, "op %d is not an earlier op of the txn (this is op %u)",
			     o->dep.op, i);
		d = &t->ops[o->dep.op];
		if (d->round >= o->round)
			FAIL(COL_DEP,
			     "op %d is in round %u, not in a round before this op's round %u",
			     o->dep.op, d->round, o->round);
		if (o->dep.field >= table_words(h, d->table))
			FAIL(COL_DEP, "word %u beyond table '%s' payload (%u words)", o->dep.field,
			     h->tables[d->table].name, table_words(h, d->table));
		if (has_range) {
			if (o->lo >= o->hi)
				FAIL(COL_HI, "lo %lld >= hi %lld: the range [lo, hi) is empty",
				     (long long)o->lo, (long long)o->hi);
			if (__builtin_add_overflow(o->key, o->lo, &first) || first < 0)
				FAIL(COL_LO, "first slot key+lo = %lld + %lld is below 0",
				     (long long)o->key, (long long)o->lo);
			if (__builtin_add_overflow(o->key, o->hi - 1, &last) ||
			    __builtin_add_overflow(last, (int64_t)o->count - 1, &last) ||
			    (uint64_t)last >= tb->rows)
				FAIL(COL_HI,
				     "last slot key+hi-1+count-1 (key %lld, hi %lld, count %u) "
				     "beyond "
				     "table '%s' (%llu rows)",
				     (long long)o->key, (long long)o->hi, o->count, tb->name,
				     (unsigned long long)tb->rows);
		}
	} else {
		if (has_range)
			FAIL(COL_LO, "lo/hi given without dep");
		if (o->key < 0)
			FAIL(COL_KEY, "key %lld is negative", (long long)o->key);
		if ((uint64_t)o->key >= tb->rows)
			FAIL(COL_KEY, "key %lld beyond table '%s' (%llu rows)", (long long)o->key,
			     tb->name, (unsigned long long)tb->rows);
		if (o->count > tb->rows - (uint64_t)o->key)
			FAIL(COL_COUNT, "key %lld + count %u beyond table '%s' (%llu rows)",
			     (long long)o->key, o->count, tb->name, (unsigned long long)tb->rows);
	}

	switch (o->guard.kind) {
	case DMR_TGUARD_NONE:
		break;
	case DMR_TGUARD_PRESENT:
	case DMR_TGUARD_LESS: {
		int g = o->guard.op;
		int self_ok = o->kind == DMR_TOP_UPDATE || o->kind == DMR_TOP_DELETE;

		if (g < 0 || (uint32_t)g > i || ((uint32_t)g == i && !self_ok))
			FAIL(COL_GUARD, "op %d is not an earlier op of the txn (this is op %u%s)",
			     g, i, self_ok ? "; a U/D op may also guard on itself" : "");
		/* as dep: a guard on another op is evaluated when this op is
		 * posted (core/txn.c resolve), so that op's read image must
		 * have arrived: an op of this round has not (the guard was
		 * evaluated on stale bytes). A U/D op's guard on itself is
		 * evaluated on its own image, at commit (txn_commit.c). */
		if ((uint32_t)g < i && t->ops[g].round >= o->round)
			FAIL(COL_GUARD,
			     "op %d is in round %u, not in a round before this op's round %u%s", g,
			     t->ops[g].round, o->round,
			     self_ok ? " (a U/D op may also guard on itself)" : "");
		if (o->guard.kind == DMR_TGUARD_LESS) {
			uint32_t gw = table_words(h, t->ops[g].table);
			if (o->guard.f >= gw || o->guard.f2 >= gw)
				FAIL(COL_GUARD, "word %u beyond table '%s' payload (%u words)",
				     o->guard.f >= gw ? o->guard.f : o->guard.f2,
				     h->tables[t->ops[g].table].name, gw);
		}
		break;
	}
	default:
		FAIL(COL_GUARD, "unknown guard kind %u", o->guard.kind);
	}

	if (o->nacts > DMR_TRACE_MAX_ACTS)
		FAIL(COL_ACT, "%u actions, at most %d", o->nacts, DMR_TRACE_MAX_ACTS);
	if (o->nacts && o->kind != DMR_TOP_UPDATE && o->kind != DMR_TOP_INSERT)
		FAIL(COL_ACT, "actions on op kind %c: only U and I ops write", o->kind);
	for (uint32_t a = 0; a < o->nacts; a++) {
		const dmr_trace_act_t *ac = &o->acts[a];

		if (ac->kind != DMR_TACT_SET && ac->kind != DMR_TACT_ADD)
			FAIL(COL_ACT,
			     "action %u invalid (too many actions or bad arguments to "
			     "dmr_trace_op_act)",
			     a + 1);
		if (ac->field >= words)
			FAIL(COL_ACT, "action %u: word %u beyond table '%s' payload (%u words)",
			     a + 1, ac->field, tb->name, words);
		if (ac->val.op >= 0) {
			if ((uint32_t)ac->val.op >= i)
				FAIL(COL_ACT,
				     "action %u: op %d is not an earlier op (this is op %u)", a + 1,
				     ac->val.op, i);
			if (ac->val.field >= table_words(h, t->ops[ac->val.op].table))
				FAIL(COL_ACT,
				     "action %u: word %u beyond table '%s' payload (%u words)",
				     a + 1, ac->val.field, h->tables[t->ops[ac->val.op].table].name,
				     table_words(h, t->ops[ac->val.op].table));
		}
	}
#undef FAIL
	return 0;
}

/* dmr_trace_check_locks found op i's record locked by op k too: the
 * message (out of line: the check itself is inlined into the reader). */
int trace_lock_fail(const dmr_trace_hdr_t *h, const dmr_trace_txn_t *t, uint32_t i, uint32_t k,
		    uint32_t line0, const char **field_p, char *why, size_t whysz)
{
	const dmr_trace_op_t *o = &t->ops[i];
	char at[24] = "";

	if (line0)
		snprintf(at, sizeof(at), ", line %u", line0 + k);
	*field_p = trace_colname[COL_KEY];
	snprintf(why, whysz,
		 "table '%s' key %lld is locked by op %u (%c%s) too: a transaction takes one "
		 "lock per record (two U/I/D ops on one record)",
		 h->tables[o->table].name, (long long)o->key, k, t->ops[k].kind, at);
	return -1;
}

/* ---- header helpers --------------------------------------------------- */

const char *dmr_trace_hdr_param(const dmr_trace_hdr_t *h, const char *key)
{
	for (uint32_t i = 0; i < h->nparams; i++)
		if (strcmp(h->params[i].key, key) == 0)
			return h->params[i].val;
	return NULL;
}

dmr_status_t dmr_trace_hdr_set(dmr_trace_hdr_t *h, const char *key, const char *val)
{
	size_t kn = strlen(key), vn = strlen(val);
	uint32_t i;

	if (kn >= DMR_TRACE_NAME_MAX || vn >= TRACE_PARAM_VAL_MAX)
		return DMR_ERR_RANGE;
	if (name_problem(key, kn) || text_problem(val, vn, TRACE_PARAM_VAL_MAX))
		return DMR_ERR_INVALID;
	for (i = 0; i < h->nparams; i++)
		if (strcmp(h->params[i].key, key) == 0)
			break;
	if (i == h->nparams) {
		if (h->nparams >= DMR_TRACE_MAX_PARAMS)
			return DMR_ERR_RANGE;
		h->nparams++;
		memcpy(h->params[i].key, key, kn + 1);
	}
	memcpy(h->params[i].val, val, vn + 1);
	return DMR_OK;
}

int dmr_trace_hdr_table(const dmr_trace_hdr_t *h, const char *name)
{
	for (uint32_t i = 0; i < h->ntables; i++)
		if (strcmp(h->tables[i].name, name) == 0)
			return (int)i;
	return -1;
}

int dmr_trace_hdr_type(const dmr_trace_hdr_t *h, const char *name)
{
	return lookup_name((const char(*)[DMR_TRACE_NAME_MAX])h->types, h->ntypes, name,
			   strlen(name));
}

/* ---- building transactions -------------------------------------------- */

int dmr_trace_txn_op(dmr_trace_txn_t *t, char kind, int table, int round, int64_t key)
{
	dmr_trace_op_t *o;

	if (t->nops >= DMR_TRACE_MAX_OPS)
		return -1;
	if (kind != DMR_TOP_READ && kind != DMR_TOP_UPDATE && kind != DMR_TOP_INSERT &&
	    kind != DMR_TOP_DELETE)
		return -1;
	if (table < 0 || table >= DMR_TRACE_MAX_TABLES || round < 0 || round > UINT16_MAX)
		return -1;
	o = &t->ops[t->nops];
	memset(o, 0, sizeof(*o));
	o->kind = (uint8_t)kind;
	o->table = (uint8_t)table;
	o->round = (uint16_t)round;
	o->count = 1;
	o->key = key;
	o->dep.op = -1;
	o->guard.kind = DMR_TGUARD_NONE;
	o->guard.op = -1;
	return (int)t->nops++;
}

static void op_act_add(dmr_trace_op_t *op, int kind, int field, dmr_trace_val_t val, int ok)
{
	dmr_trace_act_t *a;

	if (op->nacts >= DMR_TRACE_MAX_ACTS) {
		/* poison the last action: dmr_trace_write() rejects the op */
		op->acts[DMR_TRACE_MAX_ACTS - 1].kind = TRACE_ACT_POISON;
		return;
	}
	a = &op->acts[op->nacts++];
	memset(a, 0, sizeof(*a));
	if (!ok || (kind != DMR_TACT_SET && kind != DMR_TACT_ADD) || field < 0 ||
	    field > UINT16_MAX) {
		a->kind = TRACE_ACT_POISON;
		return;
	}
	a->kind = (uint8_t)kind;
	a->field = (uint16_t)field;
	a->val = val;
}

void dmr_trace_op_act(dmr_trace_op_t *op, int kind, int field, int64_t lit)
{
	dmr_trace_val_t v = {.lit = lit, .op = -1, .field = 0};

	op_act_add(op, kind, field, v, 1);
}

void dmr_trace_op_act_ref(dmr_trace_op_t *op, int kind, int field, int sop, int sfield)
{
	int ok = sop >= 0 && sop < DMR_TRACE_MAX_OPS && sfield >= 0 && sfield <= UINT16_MAX;
	dmr_trace_val_t v = {
	    .lit = 0, .op = (int16_t)(ok ? sop : 0), .field = (uint16_t)(ok ? sfield : 0)};

	op_act_add(op, kind, field, v, ok);
}
