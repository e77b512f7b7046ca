/*
 * replay/tools/fidelity_impl.h - private to `dmreplay fidelity`
 * (replay/tools/README.md has the map): the run's settings and the two
 * functions its files share (dmr_fid_*, not part of fidelity.h's API).
 */
#ifndef DMR_FIDELITY_IMPL_H
#define DMR_FIDELITY_IMPL_H

#include <stdint.h>

#include "../../core/base/status.h"
#include "fidelity.h"

#define FID_MAX_TRACES 32
#define FID_MAX_ROUNDS 15

/* What `dmreplay fidelity` runs, from its options. */
typedef struct dmr_fid_cfg {
	const char *profile; /* the sim's (predicted) */
	const char *device;  /* the device measured ("sim" under the test hook) */
	const char *meas_be; /* backend of the measured side: "verbs" ("sim": test hook) */
	int port, gid;	     /* verbs: port, GID index (-1 automatic) */
	const char *out;     /* DIR: traces/, runs/, the table */
	char **traces;	     /* ntraces trace files; 0: the generated set */
	size_t ntraces;
	uint64_t txns, cns, threads, coros, seed;
	uint64_t rounds; /* measured runs per trace (alternating over the traces) */
	int quiet;
} dmr_fid_cfg_t;

/* Generate the traces (unless given), run each on both sides, print the
 * table and write it (DIR/fidelity.{csv,md}, or .partial.{csv,md} when a
 * run failed or a signal stopped it, core/base/sig.h's flag, installed by
 * the caller). Returns a DMR_FID_EXIT_* status (fidelity_run.c). */
int dmr_fid_run(const dmr_fid_cfg_t *cfg);

/* The table as DIR/NAME, written atomically (core/base/fs.h): CSV, or
 * Markdown (md) below the heading `head`. Errors: DMR_ERR_IO, err naming
 * the file (fidelity_table.c). */
dmr_status_t dmr_fid_write_table(const char *dir, const char *name, int md, const char *head,
				 const dmr_fid_row_t *rows, size_t n, dmr_err_t *err);

#endif /* DMR_FIDELITY_IMPL_H */
