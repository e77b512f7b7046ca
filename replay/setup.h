/*
 * replay/setup.h - the run's shape checked and laid out before the backend
 * opens (replay/setup.c); used by replay.c only.
 */
#ifndef DMR_REPLAY_SETUP_H
#define DMR_REPLAY_SETUP_H

#include <stdint.h>

#include "../core/layout.h"
#include "results.h" /* dmr_replay_result_t */

/* What of the run's options the shape depends on (dmr_replay_opts_t's
 * fields of the same names, replay/replay.h). */
typedef struct dmr_replay_shape {
	const char *trace;   /* named in errors */
	const char *backend; /* "sim": one driving thread, else one per worker */
	uint32_t cns, threads, coros, mns, backups;
	const dmr_layout_pin_t *pins; /* borrowed */
	uint32_t npins;
	int protocol;	   /* dmr_txn_protocol_t */
	uint32_t versions; /* motor: vcells per record (0: DMR_CVT_VCELLS) */
	int index;	   /* dmr_txn_index_t */
	int quiet;
	uint64_t index_buckets, addr_cache, mr_size;
} dmr_replay_shape_t;

/* Lay out the trace h for nworkers workers into *l (log rings of 64 KiB),
 * place it on o->mns MNs with o->backups backups (FORD's rule, then
 * o->pins), add the hash index (o->index), and check the address caches,
 * the footprint (against o->mr_size when given, and this machine's memory)
 * and the transaction contexts' memory. Fills res's cluster fields
 * (mns, backups, protocol, index, addr_cache, placement, footprint) and
 * *mr_p (the MN region size, bytes: o->mr_size or the footprint rounded up
 * to 4 KiB). Prints the placement on stderr unless o->quiet (several MNs or
 * a protocol other than occ). Errors, err naming the option or table:
 * DMR_ERR_RANGE, DMR_ERR_INVALID (dmr_layout_*), and DMR_ERR_RANGE for an
 * address cache, footprint or context memory larger than this machine. */
dmr_status_t dmr_replay_setup_layout(const dmr_replay_shape_t *o, const dmr_trace_hdr_t *h,
				     uint32_t nworkers, dmr_layout_t *l, dmr_replay_result_t *res,
				     uint64_t *mr_p, dmr_err_t *err);

#endif
