/*
 * replay/mnread.c - the engine's reads of the MN state (engine.h
 * dmr_eng_lazy_init, dmr_eng_verify, dmr_eng_mnread_fini): the initial
 * image handed to a backend that writes it lazily, and the records the
 * workload's verifier reads, through DMR_BE_CTL_MN_READ on such a backend
 * or raw from mn_memory() otherwise.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "../traces/workload.h"

/* DMR_BE_CTL_LAZY_INIT's writer: the layout's initial image (e->lazy). */
static void lazy_load(void *arg, uint32_t mn, uint64_t off, uint64_t len, uint8_t *dst)
{
	engine_t *e = arg;
	dmr_layout_load_range(&e->layout, mn, off, len, dst);
}

/* What mn_read read of one table on a lazy backend: slots [first, first +
 * n) in buf. A scan that reads the slot after them (or the one before:
 * the verifier looks for a district's last order downwards) reads twice
 * as many (up to DMR_VREAD_BYTES); any other slot is read alone. Without
 * it the verifier's reads of TPC-C (one DMR_BE_CTL_MN_READ per record,
 * each finding its table and its page) were 70 % of a 20 k-transaction
 * run's instructions (callgrind). */
#define DMR_VREAD_BYTES (64u << 10)
struct vread {
	uint8_t *buf; /* max(DMR_VREAD_BYTES, rec_bytes) */
	uint64_t first, n;
	int initial; /* no WR wrote [first, first + n): buf not filled */
};

/* A payload of zeros, as long as the longest record (the initial image's
 * payloads: dmr_layout_load_range writes only version words). */
static const uint64_t *vzero(engine_t *e)
{
	if (!e->vzero) {
		uint64_t most = 0;
		for (uint32_t t = 0; t < e->layout.ntables; t++)
			if (e->layout.t[t].rec_bytes > most)
				most = e->layout.t[t].rec_bytes;
		e->vzero = calloc(1, most + 8);
	}
	return e->vzero;
}

static void vread_reset(engine_t *e)
{
	for (uint32_t t = 0; e->vread && t < e->layout.ntables; t++)
		e->vread[t].n = 0;
}

static void vread_free(engine_t *e)
{
	for (uint32_t t = 0; e->vread && t < e->layout.ntables; t++)
		free(e->vread[t].buf);
	free(e->vread);
	e->vread = NULL;
	free(e->vzero);
	e->vzero = NULL;
}

static int vread_alloc(engine_t *e)
{
	e->vread = calloc(e->layout.ntables ? e->layout.ntables : 1, sizeof(*e->vread));
	for (uint32_t t = 0; e->vread && t < e->layout.ntables; t++) {
		uint32_t rb = e->layout.t[t].rec_bytes;
		if (!(e->vread[t].buf = malloc(rb > DMR_VREAD_BYTES ? rb : DMR_VREAD_BYTES))) {
			vread_free(e);
			return -1;
		}
	}
	return e->vread ? 0 : -1;
}

/* Read the window of table's slots around `slot` (after a miss of
 * v = &e->vread[table]): 0, DMR_ERR_RANGE (the backend refused the
 * read), DMR_ERR_NOMEM. Out of line: mn_read's window hit is most calls
 * (one per record the verifier reads), and this path's registers cost a
 * hit 17 instructions of prologue and epilogue (callgrind). */
static __attribute__((noinline)) int vread_fill(engine_t *e, int table, uint64_t slot)
{
	const dmr_layout_table_t *lt = &e->layout.t[table];
	struct vread *v = &e->vread[table];
	uint64_t n = 1, first = slot, most = DMR_VREAD_BYTES / lt->rec_bytes;
	uint64_t more = 2 * v->n < most ? 2 * v->n : most;
	if (v->n && slot == v->first + v->n) { /* the scan goes on */
		n = more < lt->rows - slot ? more : lt->rows - slot;
	} else if (v->n && slot + 1 == v->first) { /* a scan downwards */
		n = more < slot + 1 ? more : slot + 1;
		first = slot + 1 - n;
	}
	if (n < 1)
		n = 1;
	/* whether a WR wrote the range first: most of what the verifier
	 * scans (TPC-C's order and new_order slots past the last insert)
	 * never was, and computing its image was 45 % of a 20 k-transaction
	 * run's instructions (callgrind: memset and dmr_layout_load_range
	 * over 64 KiB windows) */
	dmr_be_mn_read_t rd = {lt->primary, dmr_layout_rec(&e->layout, (unsigned)table, first),
			       n * lt->rec_bytes, NULL, 0};
	dmr_status_t st =
	    e->vread_all ? DMR_OK : dmr_be_control(e->be, DMR_BE_CTL_MN_READ, &rd, NULL);
	if (e->vread_all)
		rd.written = 1;
	if (st == DMR_OK && rd.written) {
		rd.buf = v->buf;
		st = dmr_be_control(e->be, DMR_BE_CTL_MN_READ, &rd, NULL);
	}
	if (st != DMR_OK) {
		v->n = 0;
		return DMR_ERR_RANGE;
	}
	if (!rd.written && !vzero(e)) { /* the payload of the initial image */
		v->n = 0;
		return DMR_ERR_NOMEM;
	}
	v->first = first;
	v->n = n;
	v->initial = !rd.written;
	return 0;
}

static int mn_read(void *arg, int table, uint64_t slot, const uint64_t **payload_p,
		   uint64_t *version_p)
{
	engine_t *e = arg;
	if (table < 0 || (uint32_t)table >= e->layout.ntables || slot >= e->layout.t[table].rows)
		return -1;
	/* the primary copy (core/layout.h placement) */
	const dmr_layout_table_t *lt = &e->layout.t[table];
	uint8_t *rec;
	if (e->lazy) { /* read without writing the pages never reached */
		struct vread *v = &e->vread[table];
		if (slot - v->first >= v->n) {
			int st = vread_fill(e, table, slot);
			if (st)
				return st;
		}
		if (v->initial) {
			/* the initial image (dmr_layout_load_range, lazy_load):
			 * version DMR_VER_PRESENT | 1 on the loaded slots of a
			 * table its primary holds, every other byte zero */
			if (version_p)
				*version_p = slot < lt->loaded ? 1 : 0;
			*payload_p = e->vzero;
			return slot < lt->loaded ? 1 : 0;
		}
		rec = v->buf + (slot - v->first) * lt->rec_bytes;
	} else {
		rec = (uint8_t *)dmr_be_mn_memory(e->be, lt->primary, NULL) +
		      dmr_layout_rec(&e->layout, (unsigned)table, slot);
	}
	uint64_t ver;
	memcpy(&ver, rec + 8, 8);
	if (version_p)
		*version_p = ver & DMR_VER_MASK;
	*payload_p = (const uint64_t *)(void *)(rec + DMR_REC_HDR);
	return (ver & DMR_VER_PRESENT) ? 1 : 0;
}

/* workload.h dmr_wl_absent_func_t on a lazy backend: in a window no WR
 * wrote, the slots past the table's loaded rows are absent (mn_read
 * answers them 0); the window is read as mn_read would, so a scan that
 * skips goes on doubling it. 0 (read them) anywhere else. */
static uint64_t mn_absent(void *arg, int table, uint64_t slot, int dir)
{
	engine_t *e = arg;
	if (!e->lazy || table < 0 || (uint32_t)table >= e->layout.ntables ||
	    slot >= e->layout.t[table].rows)
		return 0;
	const dmr_layout_table_t *lt = &e->layout.t[table];
	struct vread *v = &e->vread[table];
	if (slot - v->first >= v->n && vread_fill(e, table, slot) != 0)
		return 0; /* the read reports it */
	if (!v->initial || slot < lt->loaded)
		return 0;
	if (dir > 0)
		return v->first + v->n - slot;
	return slot - (v->first > lt->loaded ? v->first : lt->loaded) + 1;
}

/* mn_read for records with version tuples (--protocol motor; layout.h):
 * the newest committed version of the primary's record. */
static int mn_read_cvt(void *arg, int table, uint64_t slot, const uint64_t **payload_p,
		       uint64_t *version_p)
{
	engine_t *e = arg;
	if (table < 0 || (uint32_t)table >= e->layout.ntables || slot >= e->layout.t[table].rows)
		return -1;
	const uint8_t *mem = dmr_be_mn_memory(e->be, e->layout.t[table].primary, NULL);
	return dmr_cvt_read(&e->layout, mem, (unsigned)table, slot, payload_p, version_p);
}

int dmr_eng_lazy_init(engine_t *e)
{
	uint8_t probe;
	if (dmr_layout_load_range(&e->layout, 0, 0, 0, &probe) == 0 && vread_alloc(e) == 0) {
		dmr_be_lazy_init_t li = {lazy_load, e};
		e->lazy = dmr_be_control(e->be, DMR_BE_CTL_LAZY_INIT, &li, NULL) == DMR_OK;
	}
	return e->lazy;
}

dmr_status_t dmr_eng_verify(engine_t *e, const dmr_trace_hdr_t *h, int64_t committed_xv,
			    dmr_verify_result_t *res, dmr_err_t *err)
{
	vread_reset(e); /* the MN may have changed since the last one */
	if (e->layout.vcells)
		return dmr_wl_verify(h, mn_read_cvt, NULL, e, committed_xv, res, err);
	return dmr_wl_verify(h, mn_read, e->vread_all ? NULL : mn_absent, e, committed_xv, res,
			     err);
}

void dmr_eng_mnread_fini(engine_t *e)
{
	vread_free(e);
}
