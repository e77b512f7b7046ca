/*
 * backends/record/record_read.c - reading a recording back (record.h):
 * the header, the records and the end record's count and hash, each
 * refusal naming the file and the byte offset.
 */
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "record.h"

/* A recording larger than this is refused (about 100 M records). */
#define REC_MAX_BYTES (4ull << 30)

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

void dmr_rec_free(dmr_rec_t *r)
{
	if (!r)
		return;
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

dmr_status_t dmr_rec_read(const char *path, dmr_rec_t *r_p, dmr_err_t *err)
{
	char *buf = NULL;
	size_t len = 0;
	dmr_status_t st = dmr_file_read_all(path, REC_MAX_BYTES, &buf, &len, err);
	if (st != DMR_OK)
		return st;
	const uint8_t *b = (const uint8_t *)buf;
	dmr_rec_t r;
	memset(&r, 0, sizeof(r));
	const size_t H = DMR_REC_HEADER_BYTES, R = DMR_REC_RECORD_BYTES;
	if (len < H) {
		st = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: truncated at byte offset %zu: shorter than the %zu-byte header", path, len,
		    H);
		goto out;
	}
	if (memcmp(b, DMR_REC_MAGIC, 8) != 0) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: byte offset 0: not a dmreplay recording (magic is not %s)",
				 path, DMR_REC_MAGIC);
		goto out;
	}
	r.version = get32(b + 8);
	if (r.version != DMR_REC_VERSION) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: byte offset 8: version %u (this dmreplay reads version %u)",
				 path, r.version, DMR_REC_VERSION);
		goto out;
	}
	if (get32(b + 12) != H || get32(b + 16) != R) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: byte offset 12: header of %u bytes and records of %u bytes "
				 "(version 1: %zu and %zu)",
				 path, get32(b + 12), get32(b + 16), H, R);
		goto out;
	}
	r.mns = get32(b + 20);
	r.cns = get32(b + 24);
	r.workers = get32(b + 28);
	r.mr_size = get64(b + 32);
	memcpy(r.inner, b + 40, 24);
	r.inner[24] = 0;
	if (!r.mns || r.mns > DMR_BE_MAX_MNS || !r.cns || !r.workers ||
	    (uint64_t)r.cns * r.workers > (1u << 24)) {
		st = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: byte offset 20: shape %u MNs, %u CNs x %u workers out of range", path,
		    r.mns, r.cns, r.workers);
		goto out;
	}
	size_t body = len - H;
	if (body % R) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: truncated at byte offset %zu: a partial %zu-byte record "
				 "(%zu bytes)",
				 path, H + body / R * R, R, body % R);
		goto out;
	}
	size_t nrec = body / R;
	if (nrec == 0 || b[len - R] != DMR_REC_END) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: truncated at byte offset %zu: no end record (the recording "
				 "was not closed)",
				 path, len);
		goto out;
	}
	const uint8_t *end = b + len - R;
	uint64_t count = get64(end + 16), hash = get64(end + 24);
	if (memcmp(end + 32, "DMRREND", 8) != 0 || count != nrec - 1) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: byte offset %zu: end record counts %llu records, the file "
				 "holds %zu",
				 path, len - R, (unsigned long long)count, nrec - 1);
		goto out;
	}
	r.n = nrec - 1;
	r.ev = calloc(r.n ? r.n : 1, sizeof(*r.ev));
	if (!r.ev) {
		st =
		    dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory for %zu records", path, r.n);
		goto out;
	}
	uint32_t nw = r.cns * r.workers;
	for (size_t i = 0; i < r.n; i++) {
		const uint8_t *p = b + H + i * R;
		dmr_rec_event_t *e = &r.ev[i];
		e->type = p[0];
		e->opcode = p[1];
		e->aux = p[2];
		e->worker = get32(p + 4);
		e->mn = get32(p + 8);
		e->length = get32(p + 12);
		e->remote = get64(p + 16);
		e->t_ps = get64(p + 24);
		e->wr_id = get64(p + 32);
		const char *bad = NULL;
		if (e->type != DMR_REC_POST && e->type != DMR_REC_COMPLETION)
			bad = "unknown record type";
		else if (e->opcode > DMR_WR_FAA && e->opcode != DMR_WR_MASKED_CAS)
			bad = "unknown opcode";
		else if (e->worker >= nw)
			bad = "worker out of the header's shape";
		else if (e->mn >= r.mns)
			bad = "MN out of the header's shape";
		if (bad) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: byte offset %zu: record %zu: %s (type %u, opcode %u, "
					 "worker %u, MN %u)",
					 path, H + i * R, i, bad, e->type, e->opcode, e->worker,
					 e->mn);
			goto out;
		}
	}
	uint64_t h = dmr_rec_fnv(DMR_REC_FNV_BASIS, b, len - R);
	if (h != hash) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: byte offset %zu: hash 0x%016llx in the end record, the bytes "
				 "before it hash to 0x%016llx (corrupt recording)",
				 path, len - R, (unsigned long long)hash, (unsigned long long)h);
		goto out;
	}
	*r_p = r;
	r.ev = NULL;
out:
	free(r.ev);
	free(buf);
	return st;
}
