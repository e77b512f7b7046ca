#include "layout.h"

#include <string.h>

dmr_status_t dmr_layout_init(dmr_layout_t *l, const dmr_trace_hdr_t *h, uint32_t nworkers,
			     uint64_t log_bytes, dmr_err_t *err)
{
	memset(l, 0, sizeof(*l));
	uint64_t off = 0;
	l->ntables = h->ntables;
	for (uint32_t i = 0; i < h->ntables; i++) {
		const dmr_trace_table_t *t = &h->tables[i];
		dmr_layout_table_t *lt = &l->t[i];
		lt->payload_bytes = t->payload_bytes;
		lt->rec_bytes = DMR_REC_HDR + t->payload_bytes;
		lt->rows = t->rows;
		lt->loaded = t->loaded;
		lt->base = off;
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

void dmr_layout_load(const dmr_layout_t *l, uint8_t *mem)
{
	const uint64_t v = DMR_VER_PRESENT | 1;
	for (uint32_t i = 0; i < l->ntables; i++) {
		const dmr_layout_table_t *t = &l->t[i];
		uint8_t *p = mem + t->base + 8;
		for (uint64_t s = 0; s < t->loaded; s++, p += t->rec_bytes)
			memcpy(p, &v, 8);
	}
}
