/* traces/trace_write.c - the trace writer (trace.h: dmr_trace_create,
 * _write, _finish, _abandon; see the comment at the top of trace.c). */
#include "trace_impl.h"

#include "../core/base/fs.h"

#include <sys/stat.h>

/* ---- writer ----------------------------------------------------------- */

struct dmr_trace_writer {
	FILE *fp;
	char *path, *tmp;
	dmr_trace_hdr_t hdr;
	char *buf;
	size_t len;
	uint64_t ntxns;
	uint64_t last_id;
	int stream;	     /* path "-": standard output, no .tmp, no rename */
	dmr_status_t status; /* sticky I/O error, message in err */
	dmr_err_t err;
	trace_lockset_t locks; /* dmr_trace_check_locks */
};

static int wr_flush(dmr_trace_writer_t *w)
{
	if (w->len && fwrite(w->buf, 1, w->len, w->fp) != w->len) {
		w->status =
		    dmr_err_set(&w->err, DMR_ERR_WRITE, "%s: write: %s", w->tmp, strerror(errno));
		return -1;
	}
	w->len = 0;
	return 0;
}

/* Check a header before writing it: NULL or the failing field, reason in why. */
static const char *wr_check_hdr(const dmr_trace_hdr_t *h, char *why, size_t whysz)
{
	const char *p;

#define HFAIL(field, ...)                                                                          \
	do {                                                                                       \
		snprintf(why, whysz, __VA_ARGS__);                                                 \
		return field;                                                                      \
	} while (0)

	if ((p = name_problem(h->workload, strnlen(h->workload, sizeof(h->workload)))))
		HFAIL("workload", "workload '%.31s': %s", h->workload, p);
	if (strnlen(h->regime, sizeof(h->regime)) == sizeof(h->regime) ||
	    (p = text_problem(h->regime, strlen(h->regime), TRACE_REGIME_MAX)))
		HFAIL("regime", "regime: %s", p ? p : "not NUL-terminated");
	if (h->ntables == 0 || h->ntables > DMR_TRACE_MAX_TABLES)
		HFAIL("table", "%u tables (1 .. %d allowed)", h->ntables, DMR_TRACE_MAX_TABLES);
	for (uint32_t i = 0; i < h->ntables; i++)
		if ((p = name_problem(h->tables[i].name,
				      strnlen(h->tables[i].name, DMR_TRACE_NAME_MAX))))
			HFAIL("table", "table %u '%.31s': %s", i, h->tables[i].name, p);
	for (uint32_t i = 0; i < h->ntables; i++) {
		const dmr_trace_table_t *t = &h->tables[i];
		if (dmr_trace_hdr_table(h, t->name) != (int)i)
			HFAIL("table", "duplicate table '%s'", t->name);
		if (t->rows == 0)
			HFAIL("rows", "table '%s': rows must be >= 1", t->name);
		if (t->payload_bytes == 0 || t->payload_bytes % 8 || t->payload_bytes > 8u * 65536u)
			HFAIL("payload_bytes",
			      "table '%s': payload %u is not a multiple of 8 in 8 .. 524288",
			      t->name, t->payload_bytes);
		if (t->loaded > t->rows)
			HFAIL("loaded", "table '%s': loaded %llu > rows %llu", t->name,
			      (unsigned long long)t->loaded, (unsigned long long)t->rows);
	}
	if (h->ntypes > DMR_TRACE_MAX_TYPES)
		HFAIL("type", "%u types (at most %d)", h->ntypes, DMR_TRACE_MAX_TYPES);
	for (uint32_t i = 0; i < h->ntypes; i++)
		if ((p = name_problem(h->types[i], strnlen(h->types[i], DMR_TRACE_NAME_MAX))))
			HFAIL("type", "type %u '%.31s': %s", i, h->types[i], p);
	for (uint32_t i = 0; i < h->ntypes; i++) {
		if (dmr_trace_hdr_type(h, h->types[i]) != (int)i)
			HFAIL("type", "duplicate type '%s'", h->types[i]);
	}
	if (h->nparams > DMR_TRACE_MAX_PARAMS)
		HFAIL("param", "%u params (at most %d)", h->nparams, DMR_TRACE_MAX_PARAMS);
	for (uint32_t i = 0; i < h->nparams; i++) {
		const dmr_trace_param_t *pp = &h->params[i];
		if ((p = name_problem(pp->key, strnlen(pp->key, sizeof(pp->key)))))
			HFAIL("param", "param key '%.31s': %s", pp->key, p);
		if (strnlen(pp->val, sizeof(pp->val)) == sizeof(pp->val) ||
		    (p = text_problem(pp->val, strlen(pp->val), TRACE_PARAM_VAL_MAX)))
			HFAIL("param", "value of '%s': %s", pp->key, p ? p : "not NUL-terminated");
	}
	for (uint32_t i = 0; i < h->nparams; i++) {
		const dmr_trace_param_t *pp = &h->params[i];
		if (dmr_trace_hdr_param(h, pp->key) != pp->val)
			HFAIL("param", "duplicate param '%s'", pp->key);
	}
#undef HFAIL
	return NULL;
}

dmr_status_t dmr_trace_create(const char *path, const dmr_trace_hdr_t *h, dmr_trace_writer_t **w_p,
			      dmr_err_t *err)
{
	dmr_trace_writer_t *w;
	const char *field;
	char why[300];
	dmr_status_t st;

	field = wr_check_hdr(h, why, sizeof(why));
	if (field)
		return dmr_err_set(err, DMR_ERR_INVALID, "%s: header: field %s: %s", path, field,
				   why);
	/* the trace is written to PATH.tmp and renamed over path: never over
	 * a device, a directory or a pipe (run as root, -o /dev/null had
	 * /dev/null replaced by a regular file: a trial) */
	if (!*path)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "output path '': empty (give a file, or - for standard output)");
	int stream = strcmp(path, "-") == 0;
	struct stat st_path;
	if (!stream && stat(path, &st_path) == 0 && !S_ISREG(st_path.st_mode))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: not a regular file (a trace is written beside it and "
				   "renamed over it): give the path of a file",
				   path);
	w = calloc(1, sizeof(*w));
	if (!w)
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
	w->path = strdup(path);
	w->tmp = malloc(strlen(path) + 16); /* PATH.tmp, or "standard output" */
	w->buf = malloc(TRACE_CHUNK);
	if (!w->path || !w->tmp || !w->buf) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
		goto err_free;
	}
	sprintf(w->tmp, "%s.tmp", path);
	w->hdr = *h;
	w->hdr.version = DMR_TRACE_VERSION;
	w->stream = stream;
	if (stream) /* messages name it; written as it goes (nothing to rename) */
		snprintf(w->tmp, strlen(path) + 16, "%s", "standard output");
	if (stream)
		w->fp = stdout;
	else if ((st = dmr_tmp_fopen(w->tmp, path, &w->fp, err)) != DMR_OK)
		goto err_free;

	w->len += (size_t)sprintf(w->buf + w->len, "%s%d\n# workload %s\n", trace_magic,
				  DMR_TRACE_VERSION, h->workload);
	if (h->regime[0])
		w->len += (size_t)sprintf(w->buf + w->len, "# regime %s\n", h->regime);
	w->len += (size_t)sprintf(w->buf + w->len, "# txns %llu\n", (unsigned long long)h->txns);
	for (uint32_t i = 0; i < h->ntables; i++)
		w->len += (size_t)sprintf(w->buf + w->len, "# table %s %llu %u %llu\n",
					  h->tables[i].name, (unsigned long long)h->tables[i].rows,
					  h->tables[i].payload_bytes,
					  (unsigned long long)h->tables[i].loaded);
	for (uint32_t i = 0; i < h->ntypes; i++)
		w->len += (size_t)sprintf(w->buf + w->len, "# type %s\n", h->types[i]);
	for (uint32_t i = 0; i < h->nparams; i++)
		w->len += (size_t)sprintf(w->buf + w->len, "# param %s %s\n", h->params[i].key,
					  h->params[i].val);
	w->len += (size_t)sprintf(w->buf + w->len, "%s\n", trace_columns);
	if (wr_flush(w)) {
		st = dmr_err_set(err, w->status, "%s", w->err.msg);
		goto err_close;
	}
	*w_p = w;
	return DMR_OK;

err_close:
	if (!w->stream) {
		fclose(w->fp);
		unlink(w->tmp);
	}
err_free:
	free(w->buf);
	free(w->tmp);
	free(w->path);
	free(w);
	return st;
}

static char *wr_ref(char *p, int op, unsigned field)
{
	p = fmt_u64(p, (uint64_t)op);
	*p++ = '.';
	return fmt_u64(p, field);
}

dmr_status_t dmr_trace_write(dmr_trace_writer_t *w, const dmr_trace_txn_t *txn, dmr_err_t *err)
{
	const dmr_trace_hdr_t *h = &w->hdr;
	const char *field;
	char why[400];
	/* "ID,TYPE," : up to 20 digits, a type name of up to
	 * DMR_TRACE_NAME_MAX - 1 characters, two commas (24 bytes overflowed
	 * with TATP's 20-character UpdateSubscriberData) */
	char txnid[20 + DMR_TRACE_NAME_MAX + 2], *idend;
	size_t idlen;

	if (w->status)
		return dmr_err_set(err, w->status, "%s", w->err.msg);
	if (txn->nops == 0 || txn->nops > DMR_TRACE_MAX_OPS)
		return dmr_err_set(err, DMR_ERR_INVALID, "%s: txn %llu: %u ops (1 .. %d allowed)",
				   w->path, (unsigned long long)txn->id, txn->nops,
				   DMR_TRACE_MAX_OPS);
	if (w->ntxns && txn->id <= w->last_id)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: txn %llu: field txn: id not above the previous txn %llu",
				   w->path, (unsigned long long)txn->id,
				   (unsigned long long)w->last_id);
	if (txn->type >= h->ntypes)
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "%s: txn %llu: field type: type index %u not declared (%u types)", w->path,
		    (unsigned long long)txn->id, txn->type, h->ntypes);
	trace_locks_begin(&w->locks);
	for (uint32_t i = 0; i < txn->nops; i++)
		if (dmr_trace_check_op(h, txn, i, &field, why, sizeof(why)) ||
		    dmr_trace_check_locks(&w->locks, h, txn, i, 0, &field, why, sizeof(why)))
			return dmr_err_set(err, DMR_ERR_INVALID, "%s: txn %llu op %u: field %s: %s",
					   w->path, (unsigned long long)txn->id, i, field, why);

	idend = fmt_u64(txnid, txn->id);
	*idend++ = ',';
	idlen = strlen(h->types[txn->type]);
	memcpy(idend, h->types[txn->type], idlen);
	idend += idlen;
	*idend++ = ',';
	idlen = (size_t)(idend - txnid);

	for (uint32_t i = 0; i < txn->nops; i++) {
		const dmr_trace_op_t *o = &txn->ops[i];
		char *p;
		size_t tn;

		if (TRACE_CHUNK - w->len < TRACE_ROW_MAX && wr_flush(w))
			return dmr_err_set(err, w->status, "%s", w->err.msg);
		p = w->buf + w->len;
		memcpy(p, txnid, idlen);
		p += idlen;
		p = fmt_u64(p, o->round);
		*p++ = ',';
		*p++ = (char)o->kind;
		*p++ = ',';
		tn = strlen(h->tables[o->table].name);
		memcpy(p, h->tables[o->table].name, tn);
		p += tn;
		*p++ = ',';
		p = fmt_i64(p, o->key);
		*p++ = ',';
		if (o->dep.op >= 0)
			p = wr_ref(p, o->dep.op, o->dep.field);
		*p++ = ',';
		if (o->dep.op >= 0 && (o->lo || o->hi)) {
			p = fmt_i64(p, o->lo);
			*p++ = ',';
			p = fmt_i64(p, o->hi);
		} else {
			*p++ = ',';
		}
		*p++ = ',';
		if (o->count != 1)
			p = fmt_u64(p, o->count);
		*p++ = ',';
		if (o->guard.kind == DMR_TGUARD_PRESENT) {
			p = fmt_u64(p, (uint64_t)o->guard.op);
		} else if (o->guard.kind == DMR_TGUARD_LESS) {
			p = wr_ref(p, o->guard.op, o->guard.f);
			*p++ = '<';
			p = wr_ref(p, o->guard.op, o->guard.f2);
		}
		*p++ = ',';
		for (uint32_t a = 0; a < o->nacts; a++) {
			const dmr_trace_act_t *ac = &o->acts[a];
			if (a)
				*p++ = ';';
			memcpy(p, ac->kind == DMR_TACT_SET ? "set:" : "add:", 4);
			p = fmt_u64(p + 4, ac->field);
			*p++ = ':';
			if (ac->val.op >= 0) {
				*p++ = '@';
				p = wr_ref(p, ac->val.op, ac->val.field);
			} else {
				p = fmt_i64(p, ac->val.lit);
			}
		}
		*p++ = ',';
		if (i == 0 && txn->xv != 0)
			p = fmt_i64(p, txn->xv);
		*p++ = '\n';
		w->len = (size_t)(p - w->buf);
	}
	w->ntxns++;
	w->last_id = txn->id;
	return DMR_OK;
}

dmr_status_t dmr_trace_finish(dmr_trace_writer_t *w, dmr_err_t *err)
{
	dmr_status_t st = DMR_OK;

	if (!w->status)
		wr_flush(w);
	if (w->status) {
		st = dmr_err_set(err, w->status, "%s", w->err.msg);
		if (!w->stream)
			fclose(w->fp);
		goto err_unlink;
	}
	if (w->stream) { /* standard output stays open for the caller */
		if (fflush(w->fp) != 0 || ferror(w->fp)) {
			st = dmr_err_set(err, DMR_ERR_WRITE, "standard output: write: %s",
					 strerror(errno));
			goto err_unlink;
		}
	} else if (fclose(w->fp) != 0) {
		st = dmr_err_set(err, DMR_ERR_WRITE, "%s: close: %s", w->tmp, strerror(errno));
		goto err_unlink;
	}
	if (w->hdr.txns && w->ntxns != w->hdr.txns) {
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "%s: field txns: header declares %llu transactions, %llu written",
				 w->path, (unsigned long long)w->hdr.txns,
				 (unsigned long long)w->ntxns);
		goto err_unlink;
	}
	if (!w->stream && rename(w->tmp, w->path) != 0) {
		st = dmr_err_set(err, DMR_ERR_WRITE, "%s: rename from %s: %s", w->path, w->tmp,
				 strerror(errno));
		goto err_unlink;
	}
	goto out_free;

err_unlink:
	if (!w->stream)
		unlink(w->tmp);
out_free:
	free(w->buf);
	free(w->tmp);
	free(w->path);
	free(w);
	return st;
}

void dmr_trace_abandon(dmr_trace_writer_t *w)
{
	if (!w)
		return;
	if (w->stream) {
		fflush(w->fp); /* what is written stays written: a reader of the
				  stream sees a trace cut short and refuses it */
	} else {
		fclose(w->fp);
		unlink(w->tmp);
	}
	free(w->buf);
	free(w->tmp);
	free(w->path);
	free(w);
}
