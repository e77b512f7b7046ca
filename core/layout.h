/*
 * core/layout.h - where tables and logs live in the MN region.
 *
 * A record is {lock u64, version u64, payload} at
 * base(table) + slot * (16 + payload_bytes). The version word holds the
 * version in bits 0..62 and the "present" flag in bit 63 (a slot never
 * inserted, or deleted, is absent). Lock word 0 = free; a holder writes its
 * context tag (never 0). After the tables, each worker has a log ring of
 * log_bytes for commit log records.
 */
#ifndef DMR_LAYOUT_H
#define DMR_LAYOUT_H

#include <stdint.h>

#include "../traces/trace.h"

#define DMR_REC_HDR 16u
#define DMR_VER_PRESENT (1ull << 63)
#define DMR_VER_MASK (DMR_VER_PRESENT - 1)

typedef struct dmr_layout_table {
	uint64_t base; /* byte offset in the MN region */
	uint64_t rows;
	uint32_t rec_bytes; /* 16 + payload_bytes */
	uint32_t payload_bytes;
	uint64_t loaded;
} dmr_layout_table_t;

typedef struct dmr_layout {
	uint32_t ntables;
	dmr_layout_table_t t[DMR_TRACE_MAX_TABLES];
	uint64_t log_base;  /* first log ring */
	uint64_t log_bytes; /* per worker */
	uint32_t nworkers;
	uint64_t total; /* bytes needed in the MN region */
} dmr_layout_t;

/* Compute the layout of the trace's tables plus nworkers log rings of
 * log_bytes each (tables 64-byte aligned). DMR_ERR_RANGE on overflow. */
dmr_status_t dmr_layout_init(dmr_layout_t *l, const dmr_trace_hdr_t *h, uint32_t nworkers,
			     uint64_t log_bytes, dmr_err_t *err);

static inline uint64_t dmr_layout_rec(const dmr_layout_t *l, unsigned table, uint64_t slot)
{
	return l->t[table].base + slot * l->t[table].rec_bytes;
}

/* Write the initial MN state into mem (the region, zeroed): the version word
 * of loaded rows gets DMR_VER_PRESENT | 1. */
void dmr_layout_load(const dmr_layout_t *l, uint8_t *mem);

#endif
