#include "layout.h"

#include <stdio.h>
#include <string.h>

dmr_status_t dmr_layout_init(dmr_layout_t *l, const dmr_trace_hdr_t *h, uint32_t nworkers,
			     uint64_t log_bytes, dmr_err_t *err)
{
	memset(l, 0, sizeof(*l));
	uint64_t off = 0;
	l->ntables = h->ntables;
	l->mns = 1;
	l->lock_busy = ~0ull;
	for (uint32_t i = 0; i < h->ntables; i++) {
		const dmr_trace_table_t *t = &h->tables[i];
		dmr_layout_table_t *lt = &l->t[i];
		lt->payload_bytes = t->payload_bytes;
		lt->rec_bytes = DMR_REC_HDR + t->payload_bytes;
		lt->rows = t->rows;
		lt->loaded = t->loaded;
		lt->base = off;
		snprintf(l->names[i], sizeof(l->names[i]), "%s", t->name);
		if (t->rows > (UINT64_MAX / 2 - off) / lt->rec_bytes)
			return dmr_err_set(err, DMR_ERR_RANGE,
					   "table %s: %llu rows x %u bytes overflow", t->name,
					   (unsigned long long)t->rows, lt->rec_bytes);
		off += t->rows * lt->rec_bytes;
		off = (off + 63) & ~63ull;
	}
	l->log_base = off;
	l->log_bytes = log_bytes;
	l->nworkers = nworkers;
	off += (uint64_t)nworkers * log_bytes;
	l->total = off;
	return DMR_OK;
}

dmr_status_t dmr_layout_cvt(dmr_layout_t *l, uint32_t vcells, dmr_err_t *err)
{
	if (vcells < 1 || vcells > DMR_CVT_MAX_VCELLS)
		return dmr_err_set(err, DMR_ERR_RANGE, "versions per record %u: 1..%u", vcells,
				   DMR_CVT_MAX_VCELLS);
	dmr_layout_t n = *l;
	uint64_t off = 0;
	for (uint32_t i = 0; i < n.ntables; i++) {
		dmr_layout_table_t *lt = &n.t[i];
		lt->rec_bytes = DMR_REC_HDR + vcells * dmr_cvt_vcell_bytes(lt->payload_bytes);
		lt->base = off;
		if (lt->rows > (UINT64_MAX / 2 - off) / lt->rec_bytes)
			return dmr_err_set(err, DMR_ERR_RANGE,
					   "table %s: %llu rows x %u bytes overflow", n.names[i],
					   (unsigned long long)lt->rows, lt->rec_bytes);
		off += lt->rows * lt->rec_bytes;
		off = (off + 63) & ~63ull;
	}
	n.log_base = off;
	off += (uint64_t)n.nworkers * n.log_bytes;
	n.total = off;
	n.vcells = vcells;
	*l = n;
	return DMR_OK;
}

dmr_status_t dmr_layout_place(dmr_layout_t *l, uint32_t mns, uint32_t backups, dmr_err_t *err)
{
	if (mns < 1 || mns > DMR_LAYOUT_MAX_MNS)
		return dmr_err_set(err, DMR_ERR_RANGE, "--mns %u: the cluster has 1..%u MNs", mns,
				   DMR_LAYOUT_MAX_MNS);
	if (backups > DMR_LAYOUT_MAX_BACKUPS)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "--backups %u: at most %u backups per table (FORD's "
				   "BACKUP_DEGREE)",
				   backups, DMR_LAYOUT_MAX_BACKUPS);
	if (backups >= mns)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--backups %u with --mns %u: a table and its %u backups need "
				   "%u distinct MNs (backups < mns)",
				   backups, mns, backups, backups + 1);
	l->mns = mns;
	l->backups = backups;
	/* FORD LoadTable: primary t % M; backup i on (t % M + i) % M */
	for (uint32_t t = 0; t < l->ntables; t++) {
		l->t[t].primary = (uint8_t)(t % mns);
		memset(l->t[t].backup, 0, sizeof(l->t[t].backup));
		for (uint32_t i = 0; i < backups; i++)
			l->t[t].backup[i] = (uint8_t)((t % mns + i + 1) % mns);
	}
	return DMR_OK;
}

dmr_status_t dmr_layout_pin(dmr_layout_t *l, const dmr_layout_pin_t *pin, dmr_err_t *err)
{
	uint32_t t = 0;
	while (t < l->ntables && strcmp(l->names[t], pin->table) != 0)
		t++;
	if (t == l->ntables)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "placement: table '%s' is not a table of the trace", pin->table);
	if (pin->n != 1 + l->backups)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "placement.%s: %u MNs listed, the run has 1 primary + %u "
				   "backups",
				   pin->table, pin->n, l->backups);
	for (uint32_t i = 0; i < pin->n; i++) {
		if (pin->mn[i] >= l->mns)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "placement.%s: MN %u does not exist (the cluster has "
					   "MNs 0..%u)",
					   pin->table, pin->mn[i], l->mns - 1);
		for (uint32_t j = 0; j < i; j++)
			if (pin->mn[j] == pin->mn[i])
				return dmr_err_set(err, DMR_ERR_INVALID,
						   "placement.%s: MN %u listed twice (a backup "
						   "on its own primary's MN)",
						   pin->table, pin->mn[i]);
	}
	l->t[t].primary = (uint8_t)pin->mn[0];
	memset(l->t[t].backup, 0, sizeof(l->t[t].backup));
	for (uint32_t i = 1; i < pin->n; i++)
		l->t[t].backup[i - 1] = (uint8_t)pin->mn[i];
	return DMR_OK;
}

dmr_status_t dmr_layout_index(dmr_layout_t *l, uint64_t buckets, dmr_err_t *err)
{
	uint64_t off = (l->total + 63) & ~63ull, base[DMR_TRACE_MAX_TABLES],
		 nb[DMR_TRACE_MAX_TABLES];
	for (uint32_t t = 0; t < l->ntables; t++) {
		uint64_t rows = l->t[t].rows;
		uint64_t b =
		    buckets ? buckets : (rows + DMR_IDX_SLOTS / 2 - 1) / (DMR_IDX_SLOTS / 2);
		if (b == 0)
			b = 1;
		if (rows > b * DMR_IDX_SLOTS)
			return dmr_err_set(
			    err, DMR_ERR_RANGE,
			    "--index-buckets %llu: table %s has %llu keys, more than "
			    "its %llu slots (%u per bucket); it needs at least %llu "
			    "buckets",
			    (unsigned long long)buckets, l->names[t], (unsigned long long)rows,
			    (unsigned long long)(b * DMR_IDX_SLOTS), DMR_IDX_SLOTS,
			    (unsigned long long)((rows + DMR_IDX_SLOTS - 1) / DMR_IDX_SLOTS));
		if (b > (UINT64_MAX / 2 - off) / DMR_IDX_BUCKET_BYTES)
			return dmr_err_set(err, DMR_ERR_RANGE,
					   "table %s: %llu index buckets overflow", l->names[t],
					   (unsigned long long)b);
		base[t] = off;
		nb[t] = b;
		off += b * DMR_IDX_BUCKET_BYTES;
	}
	for (uint32_t t = 0; t < l->ntables; t++) {
		l->t[t].idx_base = base[t];
		l->t[t].idx_buckets = nb[t];
		l->indexed |= nb[t] != 0;
	}
	l->total = off;
	return DMR_OK;
}

dmr_status_t dmr_layout_cells(dmr_layout_t *l, const uint8_t *words, dmr_err_t *err)
{
	uint64_t off = (l->total + 63) & ~63ull, base[DMR_TRACE_MAX_TABLES];
	for (uint32_t t = 0; t < l->ntables; t++) {
		uint64_t per = 8ull * words[t];
		if (per && l->t[t].rows > (UINT64_MAX / 2 - off) / per)
			return dmr_err_set(err, DMR_ERR_RANGE,
					   "table %s: %llu rows x %u cell lock words overflow",
					   l->names[t], (unsigned long long)l->t[t].rows, words[t]);
		base[t] = off;
		off = (off + l->t[t].rows * per + 63) & ~63ull;
	}
	for (uint32_t t = 0; t < l->ntables; t++) {
		l->t[t].cell_base = base[t];
		l->t[t].cell_words = words[t];
	}
	l->total = off;
	return DMR_OK;
}

dmr_status_t dmr_layout_locks(dmr_layout_t *l, const uint8_t *apart, dmr_err_t *err)
{
	uint64_t start = (l->total + 63) & ~63ull, off = start, base[DMR_TRACE_MAX_TABLES];
	for (uint32_t t = 0; t < l->ntables; t++) {
		base[t] = 0;
		if (!apart[t])
			continue;
		if (l->t[t].rows > (UINT64_MAX / 2 - off) / 8)
			return dmr_err_set(err, DMR_ERR_RANGE, "table %s: %llu lock words overflow",
					   l->names[t], (unsigned long long)l->t[t].rows);
		base[t] = off;
		off = (off + l->t[t].rows * 8 + 63) & ~63ull;
	}
	if (off == start)
		return dmr_err_set(err, DMR_ERR_INVALID, "lock words apart: no table chosen");
	for (uint32_t t = 0; t < l->ntables; t++)
		l->t[t].lock_base = base[t];
	l->lk_base = start;
	l->lk_bytes = off - start;
	l->total = off;
	return DMR_OK;
}

int dmr_layout_holds(const dmr_layout_t *l, unsigned table, uint32_t mn)
{
	uint32_t r[1 + DMR_LAYOUT_MAX_BACKUPS];
	uint32_t n = dmr_layout_replicas(l, table, r);
	for (uint32_t i = 0; i < n; i++)
		if (r[i] == mn)
			return 1;
	return 0;
}

int dmr_layout_placement(const dmr_layout_t *l, char *buf, size_t size)
{
	size_t pos = 0;
	int n = snprintf(buf, size, "mns=%u backups=%u", l->mns, l->backups);
	pos = n > 0 ? (size_t)n : 0;
	for (uint32_t t = 0; t < l->ntables; t++) {
		n = snprintf(pos < size ? buf + pos : NULL, pos < size ? size - pos : 0, " %s:%u",
			     l->names[t], l->t[t].primary);
		pos += n > 0 ? (size_t)n : 0;
		for (uint32_t i = 0; i < l->backups; i++) {
			n = snprintf(pos < size ? buf + pos : NULL, pos < size ? size - pos : 0,
				     "%c%u", i ? ',' : '/', l->t[t].backup[i]);
			pos += n > 0 ? (size_t)n : 0;
		}
	}
	if (size && pos >= size)
		buf[size - 1] = 0;
	return (int)pos;
}

/* The loaded rows of table t: version word PRESENT | 1, or with version
 * tuples vcell 0 = PRESENT | VALID | 1 with its anchor (layout.h). */
static void load_rows(const dmr_layout_t *l, const dmr_layout_table_t *t, uint8_t *mem)
{
	if (l->vcells == 0) {
		const uint64_t v = DMR_VER_PRESENT | 1;
		uint8_t *p = mem + t->base + 8;
		for (uint64_t s = 0; s < t->loaded; s++, p += t->rec_bytes)
			memcpy(p, &v, 8);
		return;
	}
	const uint64_t v = DMR_VER_PRESENT | DMR_CVT_VALID | 1;
	uint8_t *p = mem + t->base + DMR_REC_HDR;
	for (uint64_t s = 0; s < t->loaded; s++, p += t->rec_bytes) {
		memcpy(p, &v, 8);
		memcpy(p + 16 + t->payload_bytes, &v, 8);
	}
}

void dmr_layout_load(const dmr_layout_t *l, uint8_t *mem)
{
	for (uint32_t i = 0; i < l->ntables; i++)
		load_rows(l, &l->t[i], mem);
}

void dmr_layout_load_mn(const dmr_layout_t *l, uint32_t mn, uint8_t *mem)
{
	for (uint32_t i = 0; i < l->ntables; i++) {
		const dmr_layout_table_t *t = &l->t[i];
		if (!dmr_layout_holds(l, i, mn))
			continue;
		load_rows(l, t, mem);
		if (!t->idx_buckets)
			continue;
		/* key k in bucket k % B, slot k / B (B * SLOTS >= rows) */
		uint8_t *ix = mem + t->idx_base;
		memset(ix, 0xff, t->idx_buckets * DMR_IDX_BUCKET_BYTES);
		for (uint64_t k = 0; k < t->rows; k++) {
			uint8_t *e = ix + (k % t->idx_buckets) * DMR_IDX_BUCKET_BYTES +
				     (k / t->idx_buckets) * 16;
			uint64_t a = dmr_layout_rec(l, i, k);
			memcpy(e, &k, 8);
			memcpy(e + 8, &a, 8);
		}
	}
}

int dmr_layout_load_range(const dmr_layout_t *l, uint32_t mn, uint64_t off, uint64_t len,
			  uint8_t *dst)
{
	if (l->vcells || l->indexed)
		return -1;
	const uint64_t v = DMR_VER_PRESENT | 1, end = off + len;
	uint8_t vb[8];
	memcpy(vb, &v, 8);
	/* the tables lie in index order (dmr_layout_init): the last one that
	 * starts at or before off, found by bisection, then those after it
	 * that start before end (a range over a table's start, or several
	 * tables). A linear pass over every table was 180 of this call's 255
	 * instructions on TPC-C extreme (callgrind, 1 M calls per 200 k
	 * transactions). */
	uint32_t lo = 0, hi = l->ntables;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (l->t[mid].base <= off)
			lo = mid;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < l->ntables && l->t[i].base < end; i++) {
		const dmr_layout_table_t *t = &l->t[i];
		/* version word of slot s at base + s x rec_bytes + 8 */
		const uint64_t w0 = t->base + 8, wend = w0 + t->loaded * t->rec_bytes;
		if (end <= w0 || off >= wend || !dmr_layout_holds(l, i, mn))
			continue;
		uint64_t s = off >= w0 + 8 ? (off - w0 - 8) / t->rec_bytes : 0;
		for (uint64_t w = w0 + s * t->rec_bytes; w < wend && w < end; w += t->rec_bytes) {
			if (w >= off && w + 8 <= end) { /* the whole word: one store */
				memcpy(dst + (w - off), vb, 8);
				continue;
			}
			if (w + 8 <= off)
				continue;
			uint64_t a = w > off ? w : off, b = w + 8 < end ? w + 8 : end;
			memcpy(dst + (a - off), vb + (a - w), b - a);
		}
	}
	return 0;
}

uint64_t dmr_layout_log_bytes(const dmr_trace_hdr_t *h)
{
	uint64_t max = 0;
	for (uint32_t i = 0; i < h->ntables; i++)
		max = h->tables[i].payload_bytes > max ? h->tables[i].payload_bytes : max;
	uint64_t b = 16 * (24 + max) + 64; /* + the record's header and slack */
	b = (b + 63) & ~63ull;
	return b > 64 * 1024 ? b : 64 * 1024;
}
