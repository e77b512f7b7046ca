/* traces/trace_read.c - the trace reader (trace.h: dmr_trace_open, _next,
 * _rewind, _close; see the comment at the top of trace.c). */
#include "trace_impl.h"
#include "trace_parse.h"

#include <fcntl.h>

/* ---- reader ----------------------------------------------------------- */

static dmr_status_t rd_fail(dmr_trace_reader_t *r, uint32_t line, const char *field,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Decide a parse error: "PATH:LINE: field NAME: reason" into r->err. */
static dmr_status_t rd_fail(dmr_trace_reader_t *r, uint32_t line, const char *field,
			    const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (field)
		r->status = dmr_err_set(&r->err, DMR_ERR_PARSE, "%s:%u: field %s: %s", r->path,
					line, field, why);
	else
		r->status = dmr_err_set(&r->err, DMR_ERR_PARSE, "%s:%u: %s", r->path, line, why);
	return r->status;
}

/*
 * Take the next line: returns 1 with the line in s_p, n_p (without its
 * '\n'), 0 at end of file, -1 on error (r->status set: truncated last
 * line, overlong line, read error).
 */
static int rd_line(dmr_trace_reader_t *r, char **s_p, size_t *n_p)
{
	for (;;) {
		char *start = r->buf + r->pos;
		char *nl = memchr(start, '\n', r->end - r->pos);

		if (nl) {
			if ((size_t)(nl - start) > TRACE_LINE_MAX) {
				rd_fail(r, r->line + 1, NULL, "line longer than %u bytes",
					TRACE_LINE_MAX);
				return -1;
			}
			*s_p = start;
			*n_p = (size_t)(nl - start);
			r->pos += *n_p + 1;
			r->line++;
			return 1;
		}
		if (r->end - r->pos > TRACE_LINE_MAX) {
			rd_fail(r, r->line + 1, NULL, "line longer than %u bytes", TRACE_LINE_MAX);
			return -1;
		}
		if (r->eof) {
			if (r->end > r->pos) {
				rd_fail(r, r->line + 1, NULL,
					"truncated: last line has no trailing newline");
				return -1;
			}
			return 0;
		}
		memmove(r->buf, start, r->end - r->pos);
		r->buf_off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
		size_t got = fread(r->buf + r->end, 1, TRACE_CHUNK - r->end, r->fp);
		if (got == 0) {
			if (ferror(r->fp)) {
				r->status = dmr_err_set(&r->err, DMR_ERR_IO, "%s: read error: %s",
							r->path, strerror(errno));
				return -1;
			}
			r->eof = 1;
		}
		r->end += got;
	}
}

static const dmr_trace_act_t act_zero;

/* Parse "K.F" (op index, payload word) into v. */
static int parse_ref(const char *s, size_t n, dmr_trace_val_t *v)
{
	const char *p = s, *dot;
	uint64_t k, f;

	if (scan_ref(&p, s + n, v) == 0 && p == s + n)
		return 0;
	dot = find_ch(s, n, '.');
	if (!dot || parse_u64(s, (size_t)(dot - s), INT16_MAX, &k) ||
	    parse_u64(dot + 1, n - (size_t)(dot - s) - 1, UINT16_MAX, &f))
		return -1;
	v->op = (int16_t)k;
	v->field = (uint16_t)f;
	v->lit = 0;
	return 0;
}

/* Parse one action "set:F:V" / "add:F:V" (V literal or "@K.F"). NULL or the
 * reason it is malformed. */
static const char *parse_act(const char *s, size_t n, dmr_trace_act_t *a)
{
	const char *colon;
	uint64_t f;

	if (n > 4 && memcmp(s, "set:", 4) == 0)
		a->kind = DMR_TACT_SET;
	else if (n > 4 && memcmp(s, "add:", 4) == 0)
		a->kind = DMR_TACT_ADD;
	else
		return "expected set:F:V or add:F:V";
	s += 4;
	n -= 4;
	colon = find_ch(s, n, ':');
	if (!colon || parse_u64(s, (size_t)(colon - s), UINT16_MAX, &f))
		return "bad word index F in set:F:V / add:F:V";
	a->field = (uint16_t)f;
	n -= (size_t)(colon - s) + 1;
	s = colon + 1;
	if (n > 0 && s[0] == '@') {
		if (parse_ref(s + 1, n - 1, &a->val))
			return "bad reference V (expected @K.F)";
	} else {
		a->val.op = -1;
		a->val.field = 0;
		if (parse_i64(s, n, &a->val.lit))
			return "bad value V (expected an i64 or @K.F)";
	}
	return NULL;
}

/* Parse the fields of the current row (r->fptr, flen) into *row, its op into *o
 * (the transaction's next op in place, or row->op). 0 or -1. */
static int rd_parse_row(dmr_trace_reader_t *r, trace_row_t *row, dmr_trace_op_t *o)
{
	const dmr_trace_hdr_t *h = &r->hdr;
	const char *const *f = r->fptr;
	const size_t *n = r->flen;
	uint32_t line = r->line;
	uint64_t u;
	int rc, idx;

	row->line = line;

#define BAD_INT(col, rcv)                                                                          \
	rd_fail(r, line, trace_colname[col],                                                       \
		(rcv) == -2 ? "'%.40s' out of range" : "bad integer '%.40s'", f[col])

	if ((rc = field_u64(f[COL_TXN], n[COL_TXN], UINT64_MAX, &row->txn)))
		return BAD_INT(COL_TXN, rc), -1;

	/* type, table: by name, the last match tried first */
	idx = r->type_hint;
	if (idx < 0 || (uint32_t)idx >= h->ntypes || n[COL_TYPE] >= DMR_TRACE_NAME_MAX ||
	    !name_eq(h->types[idx], f[COL_TYPE], n[COL_TYPE])) {
		idx = lookup_name((const char(*)[DMR_TRACE_NAME_MAX])h->types, h->ntypes,
				  f[COL_TYPE], n[COL_TYPE]);
		if (idx < 0)
			return rd_fail(r, line, "type", "unknown type '%.40s'", f[COL_TYPE]), -1;
		r->type_hint = idx;
	}
	row->type = (uint16_t)idx;

	/* the defaults of dmr_trace_txn_op() field by field (a memset of the
	 * op is `rep stos`, slow for 160 bytes); the actions after they are
	 * parsed */
	o->nacts = 0;
	if ((rc = field_u64(f[COL_ROUND], n[COL_ROUND], UINT16_MAX, &u)))
		return BAD_INT(COL_ROUND, rc), -1;
	o->round = (uint16_t)u;

	if (n[COL_OP] != 1 || (f[COL_OP][0] != 'R' && f[COL_OP][0] != 'U' && f[COL_OP][0] != 'I' &&
			       f[COL_OP][0] != 'D'))
		return rd_fail(r, line, "op", "unknown op '%.40s' (expected R, U, I or D)",
			       f[COL_OP]),
		       -1;
	o->kind = (uint8_t)f[COL_OP][0];

	idx = r->table_hint;
	if (idx < 0 || (uint32_t)idx >= h->ntables || n[COL_TABLE] >= DMR_TRACE_NAME_MAX ||
	    !name_eq(h->tables[idx].name, f[COL_TABLE], n[COL_TABLE])) {
		idx = -1;
		for (uint32_t i = 0; i < h->ntables; i++)
			if (n[COL_TABLE] < DMR_TRACE_NAME_MAX &&
			    name_eq(h->tables[i].name, f[COL_TABLE], n[COL_TABLE])) {
				idx = (int)i;
				break;
			}
		if (idx < 0)
			return rd_fail(r, line, "table", "unknown table '%.40s'", f[COL_TABLE]), -1;
		r->table_hint = idx;
	}
	o->table = (uint8_t)idx;

	if ((rc = field_i64(f[COL_KEY], n[COL_KEY], &o->key)))
		return BAD_INT(COL_KEY, rc), -1;

	o->dep.op = -1;
	o->dep.field = 0;
	o->dep.lit = 0;
	o->lo = o->hi = 0;
	if (n[COL_DEP] && parse_ref(f[COL_DEP], n[COL_DEP], &o->dep))
		return rd_fail(r, line, "dep", "bad dep '%.40s' (expected K.F)", f[COL_DEP]), -1;

	if (n[COL_LO] || n[COL_HI]) {
		if (!n[COL_LO] || !n[COL_HI])
			return rd_fail(r, line, n[COL_LO] ? "hi" : "lo",
				       "lo and hi are given together or not at all"),
			       -1;
		if ((rc = field_i64(f[COL_LO], n[COL_LO], &o->lo)))
			return BAD_INT(COL_LO, rc), -1;
		if ((rc = field_i64(f[COL_HI], n[COL_HI], &o->hi)))
			return BAD_INT(COL_HI, rc), -1;
		if (o->dep.op < 0)
			return rd_fail(r, line, "lo", "lo/hi given without dep"), -1;
		if (o->lo >= o->hi)
			return rd_fail(r, line, "hi",
				       "lo %lld >= hi %lld: the range [lo, hi) is empty",
				       (long long)o->lo, (long long)o->hi),
			       -1;
	}

	o->count = 1;
	if (n[COL_COUNT]) {
		if ((rc = field_u64(f[COL_COUNT], n[COL_COUNT], UINT32_MAX, &u)))
			return BAD_INT(COL_COUNT, rc), -1;
		if (u == 0)
			return rd_fail(r, line, "count", "count must be >= 1"), -1;
		o->count = (uint32_t)u;
	}

	o->guard.kind = DMR_TGUARD_NONE;
	o->guard.op = -1;
	o->guard.f = o->guard.f2 = 0;
	if (n[COL_GUARD]) {
		const char *s = f[COL_GUARD], *lt = find_ch(s, n[COL_GUARD], '<');

		if (!lt) {
			if (parse_u64(s, n[COL_GUARD], INT16_MAX, &u))
				return rd_fail(r, line, "guard",
					       "bad guard '%.40s' (expected K or K.F<K.G)", s),
				       -1;
			o->guard.kind = DMR_TGUARD_PRESENT;
			o->guard.op = (int16_t)u;
		} else {
			dmr_trace_val_t a, b;

			if (parse_ref(s, (size_t)(lt - s), &a) ||
			    parse_ref(lt + 1, n[COL_GUARD] - (size_t)(lt - s) - 1, &b))
				return rd_fail(r, line, "guard",
					       "bad guard '%.40s' (expected K or K.F<K.G)", s),
				       -1;
			if (a.op != b.op)
				return rd_fail(r, line, "guard",
					       "guard '%.40s' compares two ops (K.F<K.G names one "
					       "op K)",
					       s),
				       -1;
			o->guard.kind = DMR_TGUARD_LESS;
			o->guard.op = a.op;
			o->guard.f = a.field;
			o->guard.f2 = b.field;
		}
	}

	if (n[COL_ACT] && scan_acts(f[COL_ACT], f[COL_ACT] + n[COL_ACT], o) != 0) {
		const char *s = f[COL_ACT], *e = s + n[COL_ACT];

		o->nacts = 0;
		for (;;) {
			const char *semi = find_ch(s, (size_t)(e - s), ';');
			const char *ae = semi ? semi : e;
			const char *why;

			if (o->nacts >= DMR_TRACE_MAX_ACTS)
				return rd_fail(r, line, "act", "more than %d actions",
					       DMR_TRACE_MAX_ACTS),
				       -1;
			why = parse_act(s, (size_t)(ae - s), &o->acts[o->nacts]);
			if (why)
				return rd_fail(r, line, "act", "action %u '%.*s': %s", o->nacts + 1,
					       (int)((ae - s) > 40 ? 40 : (ae - s)), s, why),
				       -1;
			o->nacts++;
			if (!semi)
				break;
			s = semi + 1;
		}
	}

	for (uint32_t a = o->nacts; a < DMR_TRACE_MAX_ACTS; a++)
		memcpy(&o->acts[a], &act_zero, sizeof(act_zero));

	row->has_xv = n[COL_XV] != 0;
	row->xv = 0;
	if (row->has_xv && (rc = field_i64(f[COL_XV], n[COL_XV], &row->xv)))
		return BAD_INT(COL_XV, rc), -1;
#undef BAD_INT
	return 0;
}

/* Append a parsed row to r->txn (starting it when empty) and check it; its
 * op is *op (already in place when op is &r->txn->ops[nops]). */
static int rd_apply(dmr_trace_reader_t *r, const trace_row_t *row, const dmr_trace_op_t *op)
{
	dmr_trace_txn_t *t = r->txn;
	const char *field;
	char why[400];

	if (t->nops == 0) {
		if (r->hdr.txns && r->ntxns >= r->hdr.txns)
			return rd_fail(
				   r, row->line, "txn",
				   "txn %llu is beyond the %llu transactions declared by '# txns'",
				   (unsigned long long)row->txn, (unsigned long long)r->hdr.txns),
			       -1;
		t->id = row->txn;
		t->type = row->type;
		t->xv = row->xv;
		t->line = row->line;
		trace_locks_begin(&r->locks);
		r->ntxns++;
	} else {
		if (row->type != t->type)
			return rd_fail(r, row->line, "type",
				       "type '%s' differs from type '%s' of txn %llu (line %u)",
				       r->hdr.types[row->type], r->hdr.types[t->type],
				       (unsigned long long)t->id, t->line),
			       -1;
		if (row->has_xv)
			return rd_fail(r, row->line, "xv",
				       "xv given on a later row of txn %llu (only the first row "
				       "carries xv)",
				       (unsigned long long)t->id),
			       -1;
		if (t->nops >= DMR_TRACE_MAX_OPS)
			return rd_fail(r, row->line, "txn", "txn %llu has more than %d ops",
				       (unsigned long long)t->id, DMR_TRACE_MAX_OPS),
			       -1;
	}
	if (op != &t->ops[t->nops])
		t->ops[t->nops] = *op;
	if (dmr_trace_check_op(&r->hdr, t, t->nops, &field, why, sizeof(why)) ||
	    dmr_trace_check_locks(&r->locks, &r->hdr, t, t->nops, t->line, &field, why,
				  sizeof(why)))
		return rd_fail(r, row->line, field, "%s", why), -1;
	t->nops++;
	return 0;
}

static void rd_cb_field(void *s, size_t len, void *data)
{
	dmr_trace_reader_t *r = data;

	if (r->status)
		return;
	if (r->nfields < TRACE_NCOLS) {
		if (len)
			memcpy(r->rowbuf + r->rowlen, s, len);
		r->rowbuf[r->rowlen + len] = '\0';
		r->fptr[r->nfields] = r->rowbuf + r->rowlen;
		r->flen[r->nfields] = len;
		r->rowlen += len + 1;
	}
	r->nfields++;
}

static void rd_cb_row(int c, void *data)
{
	dmr_trace_reader_t *r = data;
	dmr_trace_txn_t *t = r->txn;
	uint32_t nf = r->nfields;
	trace_row_t row;

	(void)c;
	r->nfields = 0;
	r->rowlen = 0;
	if (r->status)
		return;
	if (++r->rows_in_line > 1) {
		rd_fail(r, r->line, NULL, "more than one row on the line (stray carriage return?)");
		return;
	}
	if (nf != TRACE_NCOLS) {
		rd_fail(r, r->line, NULL, "wrong field count: expected %d fields (%s), got %u",
			TRACE_NCOLS, trace_columns, nf);
		return;
	}
	/* parsed in place, as the transaction's next op (no copy) */
	dmr_trace_op_t *op = t->nops < DMR_TRACE_MAX_OPS ? &t->ops[t->nops] : &row.op;
	if (rd_parse_row(r, &row, op))
		return;
	if (t->nops > 0 && row.txn != t->id) {
		if (row.txn < t->id) {
			rd_fail(r, row.line, "txn", "txn id %llu after txn %llu: ids must increase",
				(unsigned long long)row.txn, (unsigned long long)t->id);
			return;
		}
		/* the first row of the next transaction */
		r->pending.txn = row.txn;
		r->pending.type = row.type;
		r->pending.has_xv = row.has_xv;
		r->pending.xv = row.xv;
		r->pending.line = row.line;
		r->pending.op = *op;
		r->have_pending = 1;
		r->txn_done = 1;
		return;
	}
	rd_apply(r, &row, op);
}

static int rd_header_line(dmr_trace_reader_t *r, const char *s, size_t n, int *seen_workload,
			  int *seen_regime, int *seen_txns)
{
	dmr_trace_hdr_t *h = &r->hdr;
	uint32_t line = r->line;
	const char *p = s + 1, *e = s + n, *kw, *arg;
	size_t kwn;

	while (p < e && *p == ' ')
		p++;
	kw = p;
	while (p < e && *p != ' ')
		p++;
	kwn = (size_t)(p - kw);
	arg = p < e ? p + 1 : e; /* after exactly one space */

#define KW(str) (kwn == sizeof(str) - 1 && memcmp(kw, str, kwn) == 0)
	if (KW("workload")) {
		const char *why = name_problem(arg, (size_t)(e - arg));
		if (*seen_workload)
			return rd_fail(r, line, "workload", "duplicate '# workload' line"), -1;
		if (why)
			return rd_fail(r, line, "workload", "'%.*s': %s",
				       (int)(e - arg > 40 ? 40 : e - arg), arg, why),
			       -1;
		memcpy(h->workload, arg, (size_t)(e - arg));
		h->workload[e - arg] = '\0';
		*seen_workload = 1;
	} else if (KW("regime")) {
		const char *why = text_problem(arg, (size_t)(e - arg), TRACE_REGIME_MAX);
		if (*seen_regime)
			return rd_fail(r, line, "regime", "duplicate '# regime' line"), -1;
		if (arg == e)
			why = "empty regime";
		else if (!why && (memchr(arg, ',', (size_t)(e - arg)) ||
				  memchr(arg, '"', (size_t)(e - arg))))
			why = "regime contains a comma or a quote (it is a field of summary.csv)";
		if (why)
			return rd_fail(r, line, "regime", "%s", why), -1;
		memcpy(h->regime, arg, (size_t)(e - arg));
		h->regime[e - arg] = '\0';
		*seen_regime = 1;
	} else if (KW("txns")) {
		int rc;
		if (*seen_txns)
			return rd_fail(r, line, "txns", "duplicate '# txns' line"), -1;
		if ((rc = parse_u64(arg, (size_t)(e - arg), UINT64_MAX, &h->txns)))
			return rd_fail(r, line, "txns", "bad transaction count '%.*s'",
				       (int)(e - arg > 40 ? 40 : e - arg), arg),
			       -1;
		*seen_txns = 1;
	} else if (KW("table")) {
		const char *tok[5];
		size_t tn[5];
		int nt = 0;
		uint64_t rows, payload, loaded;
		const char *why;
		dmr_trace_table_t *tb;

		for (const char *q = arg; q < e;) {
			const char *t0;
			while (q < e && *q == ' ')
				q++;
			if (q == e)
				break;
			t0 = q;
			while (q < e && *q != ' ')
				q++;
			if (nt < 5) {
				tok[nt] = t0;
				tn[nt] = (size_t)(q - t0);
			}
			nt++;
		}
		if (nt != 4)
			return rd_fail(r, line, "table",
				       "malformed table line: expected '# table NAME ROWS "
				       "PAYLOAD_BYTES LOADED', got %d fields",
				       nt),
			       -1;
		if ((why = name_problem(tok[0], tn[0])))
			return rd_fail(r, line, "table", "'%.*s': %s",
				       (int)(tn[0] > 40 ? 40 : tn[0]), tok[0], why),
			       -1;
		for (uint32_t i = 0; i < h->ntables; i++)
			if (strlen(h->tables[i].name) == tn[0] &&
			    memcmp(h->tables[i].name, tok[0], tn[0]) == 0)
				return rd_fail(r, line, "table", "duplicate table '%.*s'",
					       (int)tn[0], tok[0]),
				       -1;
		if (h->ntables >= DMR_TRACE_MAX_TABLES)
			return rd_fail(r, line, "table", "more than %d tables",
				       DMR_TRACE_MAX_TABLES),
			       -1;
		if (parse_u64(tok[1], tn[1], UINT64_MAX, &rows) || rows == 0)
			return rd_fail(r, line, "rows",
				       "bad row count '%.*s' (expected an integer >= 1)",
				       (int)(tn[1] > 40 ? 40 : tn[1]), tok[1]),
			       -1;
		if (parse_u64(tok[2], tn[2], 8u * 65536u, &payload) || payload == 0)
			return rd_fail(r, line, "payload_bytes",
				       "bad payload size '%.*s' (expected 8 .. 524288)",
				       (int)(tn[2] > 40 ? 40 : tn[2]), tok[2]),
			       -1;
		if (payload % 8)
			return rd_fail(r, line, "payload_bytes",
				       "payload %llu is not a multiple of 8",
				       (unsigned long long)payload),
			       -1;
		if (parse_u64(tok[3], tn[3], UINT64_MAX, &loaded))
			return rd_fail(r, line, "loaded", "bad loaded count '%.*s'",
				       (int)(tn[3] > 40 ? 40 : tn[3]), tok[3]),
			       -1;
		uint64_t bytes = 0; /* the tables' bytes so far */
		for (uint32_t i = 0; i < h->ntables; i++)
			bytes += h->tables[i].rows * h->tables[i].payload_bytes;
		if (rows > (DMR_TRACE_TABLE_BYTES_MAX - bytes) / payload)
			return rd_fail(r, line, "rows",
				       "%llu rows x %llu bytes overflow: the tables hold at "
				       "most 2^60 bytes (rows x payload_bytes, all tables)",
				       (unsigned long long)rows, (unsigned long long)payload),
			       -1;
		if (loaded > rows)
			return rd_fail(r, line, "loaded", "loaded %llu > rows %llu",
				       (unsigned long long)loaded, (unsigned long long)rows),
			       -1;
		tb = &h->tables[h->ntables++];
		memcpy(tb->name, tok[0], tn[0]);
		tb->name[tn[0]] = '\0';
		tb->rows = rows;
		tb->payload_bytes = (uint32_t)payload;
		tb->loaded = loaded;
	} else if (KW("type")) {
		const char *why = name_problem(arg, (size_t)(e - arg));
		if (why)
			return rd_fail(r, line, "type", "'%.*s': %s",
				       (int)(e - arg > 40 ? 40 : e - arg), arg, why),
			       -1;
		if (lookup_name((const char(*)[DMR_TRACE_NAME_MAX])h->types, h->ntypes, arg,
				(size_t)(e - arg)) >= 0)
			return rd_fail(r, line, "type", "duplicate type '%.*s'", (int)(e - arg),
				       arg),
			       -1;
		if (h->ntypes >= DMR_TRACE_MAX_TYPES)
			return rd_fail(r, line, "type", "more than %d types", DMR_TRACE_MAX_TYPES),
			       -1;
		memcpy(h->types[h->ntypes], arg, (size_t)(e - arg));
		h->types[h->ntypes++][e - arg] = '\0';
	} else if (KW("param")) {
		const char *k = arg, *ke, *v, *why;
		dmr_trace_param_t *pp;

		ke = k;
		while (ke < e && *ke != ' ')
			ke++;
		v = ke < e ? ke + 1 : e;
		if ((why = name_problem(k, (size_t)(ke - k))))
			return rd_fail(r, line, "param", "key '%.*s': %s",
				       (int)(ke - k > 40 ? 40 : ke - k), k, why),
			       -1;
		if ((why = text_problem(v, (size_t)(e - v), TRACE_PARAM_VAL_MAX)))
			return rd_fail(r, line, "param", "value of '%.*s': %s", (int)(ke - k), k,
				       why),
			       -1;
		for (uint32_t i = 0; i < h->nparams; i++)
			if (strlen(h->params[i].key) == (size_t)(ke - k) &&
			    memcmp(h->params[i].key, k, (size_t)(ke - k)) == 0)
				return rd_fail(r, line, "param", "duplicate param '%.*s'",
					       (int)(ke - k), k),
				       -1;
		if (h->nparams >= DMR_TRACE_MAX_PARAMS)
			return rd_fail(r, line, "param", "more than %d params",
				       DMR_TRACE_MAX_PARAMS),
			       -1;
		pp = &h->params[h->nparams++];
		memcpy(pp->key, k, (size_t)(ke - k));
		pp->key[ke - k] = '\0';
		memcpy(pp->val, v, (size_t)(e - v));
		pp->val[e - v] = '\0';
	} else {
		return rd_fail(r, line, "header", "unknown header line '%.*s'",
			       (int)(n > 60 ? 60 : n), s),
		       -1;
	}
#undef KW
	return 0;
}

/* Parse the header, leaving r at the first data line. 0 or -1. */
static int rd_header(dmr_trace_reader_t *r)
{
	char *s;
	size_t n;
	int rc, seen_workload = 0, seen_regime = 0, seen_txns = 0;
	uint64_t ver;

	rc = rd_line(r, &s, &n);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return rd_fail(r, 1, "magic", "empty file (expected '%s%d')", trace_magic,
			       DMR_TRACE_VERSION),
		       -1;
	if (n && s[n - 1] == '\r')
		n--;
	if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) /* issue #15 D15 */
		return rd_fail(r, 1, "magic",
			       "the file starts with a UTF-8 byte-order mark (EF BB BF): save it "
			       "without one (the first line must be '%s%d')",
			       trace_magic, DMR_TRACE_VERSION),
		       -1;
	if (n < sizeof(trace_magic) - 1 || memcmp(s, trace_magic, sizeof(trace_magic) - 1) != 0)
		return rd_fail(r, 1, "magic", "not a dmreplay trace (first line must be '%s%d')",
			       trace_magic, DMR_TRACE_VERSION),
		       -1;
	rc = parse_u64(s + sizeof(trace_magic) - 1, n - (sizeof(trace_magic) - 1), INT32_MAX, &ver);
	if (rc || ver == 0)
		return rd_fail(r, 1, "version", "bad version '%.*s'",
			       (int)(n - (sizeof(trace_magic) - 1) > 20
					 ? 20
					 : n - (sizeof(trace_magic) - 1)),
			       s + sizeof(trace_magic) - 1),
		       -1;
	if (ver > DMR_TRACE_VERSION)
		return rd_fail(r, 1, "version",
			       "trace format v%llu is newer than this reader (v%d)",
			       (unsigned long long)ver, DMR_TRACE_VERSION),
		       -1;
	r->hdr.version = (int)ver;

	for (;;) {
		rc = rd_line(r, &s, &n);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return rd_fail(r, r->line + 1, "columns", "missing column header line '%s'",
				       trace_columns),
			       -1;
		if (n && s[n - 1] == '\r')
			n--;
		if (n == 0 || s[0] != '#')
			break;
		if (rd_header_line(r, s, n, &seen_workload, &seen_regime, &seen_txns))
			return -1;
	}
	if (n != sizeof(trace_columns) - 1 || memcmp(s, trace_columns, n) != 0)
		return rd_fail(r, r->line, "columns", "expected column header line '%s'",
			       trace_columns),
		       -1;
	if (!seen_workload)
		return rd_fail(r, r->line, "workload", "missing '# workload NAME' line"), -1;
	if (r->hdr.ntables == 0)
		return rd_fail(r, r->line, "table", "no '# table' lines: a trace needs a table"),
		       -1;
	r->data_off = r->buf_off + r->pos;
	r->data_line = r->line;
	return 0;
}

/* Scan a regular file's data lines once, before any transaction is read:
 * count its transactions (changes of the first field from line to line) and
 * refuse a last line without its newline or fewer transactions than
 * `# txns`, with the messages and lines dmr_trace_next gives at the end
 * (issue #15 D19). 0 or -1 (r->status set). Not a regular file: skipped. */
static int rd_scan(dmr_trace_reader_t *r)
{
	struct stat sb;
	if (fstat(fileno(r->fp), &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the stream reports what it meets */
	/* 1 MiB pread()s and memchr over them (getline's per-line calls were
	 * 4 % of a whole run, perf); a line longer than the buffer doubles it */
	size_t cap = 1u << 20, have = 0;
	char *buf = malloc(cap), prev[32];
	uint64_t off = r->data_off, lines = 0, txns = 0;
	size_t plen = SIZE_MAX;
	int nonl = 0, bad = !buf;
	while (!bad) {
		ssize_t got = pread(fd, buf + have, cap - have, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			bad = 1;
			break;
		}
		off += (uint64_t)got;
		char *p = buf, *e = buf + have + (size_t)got;
		for (;;) {
			char *nl = memchr(p, '\n', (size_t)(e - p));
			if (!nl) {
				if (got > 0 || p == e)
					break;
				nl = e; /* the last line, without its newline */
				nonl = 1;
			}
			lines++;
			char *c = memchr(p, ',', (size_t)(nl - p));
			size_t fl = (size_t)((c ? c : nl) - p);
			if (fl > 0 &&
			    (fl > sizeof(prev) || fl != plen || memcmp(prev, p, fl) != 0)) {
				txns++;
				plen = fl <= sizeof(prev) ? fl : SIZE_MAX;
				if (fl <= sizeof(prev))
					memcpy(prev, p, fl);
			} /* fl == 0: an empty line, the stream names it */
			if (nonl) {
				p = e;
				break;
			}
			p = nl + 1;
		}
		if (got == 0)
			break;
		have = (size_t)(e - p);
		memmove(buf, p, have);
		if (have == cap) {
			char *nb = realloc(buf, 2 * cap);
			if (!nb) {
				bad = 1;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	free(buf);
	close(fd);
	if (bad)
		return 0;
	uint32_t last = r->data_line + (uint32_t)lines;
	if (nonl) {
		rd_fail(r, last, NULL, "truncated: last line has no trailing newline");
		return -1;
	}
	if (r->hdr.txns && txns < r->hdr.txns) {
		rd_fail(r, last, "txns", "truncated: %llu of %llu transactions",
			(unsigned long long)txns, (unsigned long long)r->hdr.txns);
		return -1;
	}
	r->file_txns = txns;
	return 0;
}

uint64_t dmr_trace_file_txns(const dmr_trace_reader_t *r)
{
	return r->file_txns;
}

dmr_status_t dmr_trace_scan(dmr_trace_reader_t *r, dmr_err_t *err)
{
	if (r->status)
		return trace_rd_report(r, err);
	if (r->bin) {
		/* a binary cache was compiled from a complete, checked CSV: its
		 * head holds the transaction count (trace_cache.c) */
		r->file_txns = r->bin_ntxns;
		return DMR_OK;
	}
	if (rd_scan(r))
		return trace_rd_report(r, err);
	return DMR_OK;
}

static void rd_csv_init(dmr_trace_reader_t *r)
{
	csv_init(&r->csv, CSV_STRICT);
	r->csv_live = 1;
	r->nfields = 0;
	r->rowlen = 0;
}

dmr_status_t dmr_trace_check_file(const char *path, dmr_err_t *err)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return strcmp(path, "-") == 0
			   ? dmr_err_set(err, DMR_ERR_IO,
					 "-: no such file (a trace is not read from standard "
					 "input: write it to a file, e.g. gen ... -o FILE)")
			   : DMR_OK;
	if (S_ISREG(sb.st_mode))
		return DMR_OK;
	const char *what = S_ISDIR(sb.st_mode)	  ? "a directory"
			   : S_ISFIFO(sb.st_mode) ? "a pipe"
			   : S_ISCHR(sb.st_mode)  ? "a terminal or a device"
						  : "not a regular file";
	return dmr_err_set(err, DMR_ERR_INVALID,
			   "%s: %s: a trace is read from a regular file (its start is read "
			   "twice and its end checked before the run); write it to a file "
			   "first (e.g. gen ... -o FILE)",
			   path, what);
}

dmr_status_t dmr_trace_open(const char *path, dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	dmr_trace_reader_t *r;
	dmr_status_t st;

	if ((st = dmr_trace_check_file(path, err)) != DMR_OK)
		return st;
	r = calloc(1, sizeof(*r));
	if (!r)
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
	r->path = strdup(path);
	r->buf = calloc(1, TRACE_CHUNK + TRACE_SLACK);
	r->rowbuf = calloc(1, TRACE_LINE_MAX + TRACE_NCOLS + 2 + TRACE_SLACK);
	if (!r->path || !r->buf || !r->rowbuf) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
		goto err_free;
	}
	r->fp = fopen(path, "rb");
	if (!r->fp) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
		goto err_free;
	}
	r->type_hint = r->table_hint = -1;
	r->file_txns = UINT64_MAX;
	{
		char magic[8] = {0};
		size_t got = fread(magic, 1, sizeof(magic), r->fp);
		rewind(r->fp);
		if (got == sizeof(magic) && memcmp(magic, TRACE_BIN_MAGIC, 8) == 0) {
			fclose(r->fp);
			free(r->rowbuf);
			free(r->buf);
			free(r->path);
			free(r);
			return dmr_trace_open_cache_file(path, r_p, err);
		}
	}
	if (rd_header(r)) {
		st = trace_rd_report(r, err);
		goto err_close;
	}
	rd_csv_init(r);
	*r_p = r;
	return DMR_OK;

err_close:
	fclose(r->fp);
err_free:
	free(r->rowbuf);
	free(r->buf);
	free(r->path);
	free(r);
	return st;
}

const dmr_trace_hdr_t *dmr_trace_header(const dmr_trace_reader_t *r)
{
	return &r->hdr;
}

uint64_t dmr_trace_rows(const dmr_trace_reader_t *r)
{
	return r->rows;
}

int dmr_trace_is_bin(const dmr_trace_reader_t *r)
{
	return r->bin != NULL;
}

dmr_status_t dmr_trace_next_rec(dmr_trace_reader_t *r, dmr_trace_rec_t *rec, dmr_err_t *err)
{
	if (r->status)
		return trace_rd_report(r, err);
	if (!r->bin)
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "%s: read as CSV: no binary record to return", r->path);
	return trace_bin_next_rec(r, rec, err);
}

dmr_status_t dmr_trace_next(dmr_trace_reader_t *r, dmr_trace_txn_t *txn, dmr_err_t *err)
{
	char *s;
	size_t n;
	int rc;

	if (r->status)
		return trace_rd_report(r, err);
	if (r->bin)
		return trace_bin_next(r, txn, err);
	r->txn = txn;
	r->txn_done = 0;
	txn->nops = 0;
	if (r->have_pending) {
		r->have_pending = 0;
		if (rd_apply(r, &r->pending, &r->pending.op))
			return trace_rd_report(r, err);
	}
	while (!r->txn_done) {
		rc = rd_line(r, &s, &n);
		if (rc < 0)
			return trace_rd_report(r, err);
		if (rc == 0)
			break;
		if (n == 0 || (n == 1 && s[0] == '\r')) {
			rd_fail(r, r->line, NULL, "empty line");
			return trace_rd_report(r, err);
		}
		r->rows_in_line = 0;
		if (rd_fast_split(r, s, n)) {
			rd_cb_row(0, r);
		} else { /* the libcsv callbacks fill rowbuf */
			if (csv_parse(&r->csv, s, n + 1, rd_cb_field, rd_cb_row, r) != n + 1 &&
			    !r->status) {
				uint32_t col =
				    r->nfields < TRACE_NCOLS ? r->nfields : TRACE_NCOLS - 1;
				rd_fail(r, r->line, trace_colname[col], "malformed CSV: %s",
					csv_strerror(csv_error(&r->csv)));
			}
		}
		if (r->status)
			return trace_rd_report(r, err);
		if (r->rows_in_line == 0) {
			rd_fail(
			    r, r->line, NULL,
			    "no complete row on the line (blank line or newline inside quotes)");
			return trace_rd_report(r, err);
		}
	}
	if (txn->nops == 0) {
		if (r->hdr.txns && r->ntxns < r->hdr.txns) {
			rd_fail(r, r->line, "txns", "truncated: %llu of %llu transactions",
				(unsigned long long)r->ntxns, (unsigned long long)r->hdr.txns);
			return trace_rd_report(r, err);
		}
		return DMR_EOF;
	}
	r->rows += txn->nops;
	return DMR_OK;
}

dmr_status_t dmr_trace_rewind(dmr_trace_reader_t *r, dmr_err_t *err)
{
	if (r->bin) {
		trace_bin_rewind(r);
		r->ntxns = 0;
		r->status = DMR_OK;
		r->err.msg[0] = '\0';
		return DMR_OK;
	}
	if (fseeko(r->fp, (off_t)r->data_off, SEEK_SET) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: seek: %s", r->path, strerror(errno));
	clearerr(r->fp);
	if (r->csv_live)
		csv_free(&r->csv);
	rd_csv_init(r);
	r->pos = r->end = 0;
	r->buf_off = r->data_off;
	r->eof = 0;
	r->line = r->data_line;
	r->have_pending = 0;
	r->txn_done = 0;
	r->ntxns = 0;
	r->status = DMR_OK;
	r->err.msg[0] = '\0';
	return DMR_OK;
}

void dmr_trace_close(dmr_trace_reader_t *r)
{
	if (!r)
		return;
	if (r->csv_live)
		csv_free(&r->csv);
	if (r->fp)
		fclose(r->fp);
	if (r->bin)
		trace_bin_close(r);
	free(r->rowbuf);
	free(r->buf);
	free(r->path);
	free(r);
}
