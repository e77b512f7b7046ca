/*
 * core/replica.h - the replication invariants of a placed layout
 * (core/layout.h), checked on the MN regions after a run (issue 11 item 6):
 *  - every backup copy of every record is byte-identical to its primary
 *    (version word and payload: bytes 8..rec_bytes of the record);
 *  - every lock word of every table is idle on every MN holding it
 *    (primary and backups: FORD writes "invisible" to backup lock words
 *    during its commit and clears them at release): no bit of
 *    layout.lock_busy set (every protocol but crest: ~0, idle = 0; crest:
 *    its cell lock bits, the word keeps the cells' versions, txn_crest.h);
 *    with crest's cell lock words (layout.h dmr_layout_cells) every one
 *    of them 0 on the primary.
 *  - with version tuples (l->vcells > 0, --protocol motor): every version
 *    chain on the primaries idle and totally ordered, no version lost
 *    (replica.c check_chain; the backups equal their primary byte for
 *    byte, so theirs too).
 * The workload's own invariants (traces/workload.h) are checked on the
 * primaries by the caller.
 */
#ifndef DMR_REPLICA_H
#define DMR_REPLICA_H

#include <stdint.h>

#include "../backends/backend.h"
#include "layout.h"

typedef struct dmr_replica_result {
	int ok;
	uint64_t checks;	 /* records compared + lock words checked */
	uint64_t failures;	 /* mismatching records + held lock words
				    + broken version chains */
	uint64_t chains;	 /* version chains checked (0: single-version) */
	char first_failure[256]; /* names table, slot, MN */
} dmr_replica_result_t;

/* The MN region of MN mn (len bytes), NULL if it is not local. */
typedef const uint8_t *(*dmr_replica_mem_fn)(void *arg, uint32_t mn, uint64_t *len_p);

/* Check l's replicas and lock words on the regions mem(arg, mn) gives.
 * Returns DMR_OK (res->ok says whether the invariants hold),
 * DMR_ERR_UNSUPPORTED (err naming the MN) when a region is not local or
 * smaller than l->total. */
dmr_status_t dmr_replica_verify(const dmr_layout_t *l, dmr_replica_mem_fn mem, void *arg,
				dmr_replica_result_t *res, dmr_err_t *err);

/* The same on a backend's regions (dmr_be_mn_memory). */
dmr_status_t dmr_replica_verify_be(const dmr_layout_t *l, dmr_be_t *be, dmr_replica_result_t *res,
				   dmr_err_t *err);
/* The same on a backend that writes l's initial image lazily
 * (DMR_BE_CTL_LAZY_INIT accepted): the regions are read through
 * DMR_BE_CTL_MN_READ a block of about 1 MiB at a time, and a block that no
 * WR has written on any replica (dmr_be_mn_read_t.written 0) is counted
 * clean without being read: it holds the initial image, which
 * dmr_layout_load_mn writes alike on a table's primary and backups, with
 * its lock words 0 and one version per chain. Same results, failures and
 * messages as dmr_replica_verify on the regions mn_memory() would show,
 * without writing the whole image into them first (TPC-C, 2 MNs + 1
 * backup: a run of 1 transaction took 2 CPU-s and 626 MB for it).
 * DMR_ERR_NOMEM; a read's error (err set by the backend). */
dmr_status_t dmr_replica_verify_lazy(const dmr_layout_t *l, dmr_be_t *be, dmr_replica_result_t *res,
				     dmr_err_t *err);

#endif
