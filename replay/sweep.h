/*
 * replay/sweep.h - `dmreplay sweep SPEC.json`: run the cartesian product of
 * a spec's axes x repetitions, one `dmreplay run` per (cell, rep), and
 * collect one summary row per finished (cell, rep) in DIR/summary.csv.
 *
 * SPEC (JSON, see docs/SWEEPS.md):
 *   { "name": "regimes",                      optional, informational
 *     "workload": {"name": "tpcc", "mix": "dm", "warehouses": 40,
 *                  "txns": 200000},           generator settings
 *     "axes": {"regime": ["uniform", "extreme"], "loop": ["none", "aimd"]},
 *     "cells": [{"name": "baseline"},         named option sets (optional)
 *               {"name": "aimd", "loop": "aimd"}],
 *     "reps": 3,                              repetitions (default 1)
 *     "seed": 1,                              base seed (default 1)
 *     "run": {"cns": 4, "threads": 28} }      fixed `dmreplay run` options
 *
 * Cells are the cartesian product of the axes (first axis outermost); a cell
 * is named "axis=value;axis=value" in axis order ("default" without axes).
 * With "cells" (named option sets: run options and generator settings, as
 * the axes take them), each named set is crossed with the axes, outermost,
 * and the cell's name starts with "cell=NAME" ("cell=aimd;regime=extreme");
 * a set's options may be neither an axis nor fixed in run or workload.
 * Repetition r of a cell runs with seed base+r; when "seed" is an axis its
 * values are the repetitions instead (cells then exclude seed). The trace
 * seed follows the run seed unless workload.seed is an integer.
 *
 * Files under DIR (--out, default out/sweep-NAME):
 *   traces/      one trace per distinct generator setting, generated once
 *                (under a lock, to a temp file renamed into place)
 *   cells/D-rR/  the run's own summary.csv, timeseries.csv and run.log
 *                (D = dmr_sweep_cell_dirname(cell))
 *   summary.csv  "cell,rep," + the run's summary columns; one row appended
 *                per finished (cell, rep) with ONE write() on an O_APPEND
 *                descriptor after the run finished, by one writer (the
 *                coordinating process), so the file only ever holds whole
 *                rows. A re-run skips the (cell, rep) already there; a last
 *                line without newline (a write cut short) is dropped with a
 *                warning. A row whose cell is not in the spec is kept.
 *
 * Contract of the planning functions (tested without running anything):
 * dmr_sweep_spec_parse() refuses unknown keys, axes and value types naming
 * the JSON field ("axes.threads[2]: ...", "cells[1] (aimd).ai_step: ...",
 * a cell name given twice); dmr_sweep_plan_build() expands
 * cells x reps; dmr_sweep_plan_resume() marks finished jobs from an existing
 * summary.csv.
 */
#ifndef DMR_SWEEP_H
#define DMR_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "../core/base/status.h"
#include "sweepdir.h"

#define DMR_SWEEP_MAX_AXES 16
#define DMR_SWEEP_MAX_OPTS 32
#define DMR_SWEEP_VAL_MAX 128

/* One option as text: key is the spec name (underscores), val the value as
 * passed on the command line. */
typedef struct dmr_sweep_opt {
	char key[32];
	char val[DMR_SWEEP_VAL_MAX];
} dmr_sweep_opt_t;

typedef struct dmr_sweep_axis {
	char name[32];
	int gen; /* 1: a generator setting (a trace per value) */
	size_t nvals;
	char (*vals)[DMR_SWEEP_VAL_MAX];
} dmr_sweep_axis_t;

/* One named option set of "cells". */
typedef struct dmr_sweep_set {
	char name[64];
	dmr_sweep_opt_t opts[DMR_SWEEP_MAX_OPTS];
	uint8_t gen[DMR_SWEEP_MAX_OPTS]; /* 1: a generator setting (a trace per value) */
	size_t nopts;
} dmr_sweep_set_t;

typedef struct dmr_sweep_spec {
	char name[64];
	char workload[16];			/* tpcc, smallbank, ycsb */
	dmr_sweep_opt_t wl[DMR_SWEEP_MAX_OPTS]; /* fixed generator options */
	size_t nwl;
	int trace_seed_fixed; /* workload.seed is an integer */
	uint64_t trace_seed;
	dmr_sweep_opt_t run[DMR_SWEEP_MAX_OPTS]; /* fixed run options */
	size_t nrun;
	dmr_sweep_axis_t axes[DMR_SWEEP_MAX_AXES];
	size_t naxes;
	int seed_axis;	       /* index into axes, or -1 */
	dmr_sweep_set_t *sets; /* "cells" (malloc'd), NULL = none */
	size_t nsets;
	uint32_t reps;
	uint64_t seed_base;
} dmr_sweep_spec_t;

/* One (cell, rep). */
typedef struct dmr_sweep_job {
	char cell[512];	 /* "regime=extreme;loop=aimd" */
	char dir[600];	 /* "regime=extreme+loop=aimd-r0" (under cells/) */
	char trace[600]; /* trace file name (under traces/) */
	uint32_t cell_idx, rep;
	int set; /* index into spec->sets, or -1 */
	uint64_t seed, trace_seed;
	size_t *vidx; /* value index per axis (seed axis: rep) */
	int done;
} dmr_sweep_job_t;

typedef struct dmr_sweep_plan {
	dmr_sweep_job_t *jobs; /* rep-major: all cells of rep 0, then rep 1... */
	size_t njobs, ncells, ndone;
	size_t foreign;	    /* rows of summary.csv whose cell is not planned */
	size_t dropped;	    /* truncated last line dropped (0 or 1) */
	char header[4096];  /* header of the existing summary.csv, or "" */
	char warning[1024]; /* what resume repaired, or "" */
} dmr_sweep_plan_t;

/* Parse a spec from JSON text; name is used in messages (the file). */
dmr_status_t dmr_sweep_spec_parse(const char *json, const char *name, dmr_sweep_spec_t *spec_p,
				  dmr_err_t *err);
/* Read and parse a spec file. */
dmr_status_t dmr_sweep_spec_load(const char *path, dmr_sweep_spec_t *spec_p, dmr_err_t *err);
void dmr_sweep_spec_free(dmr_sweep_spec_t *spec);

/* Expand cells x reps into plan (nothing done). */
dmr_status_t dmr_sweep_plan_build(const dmr_sweep_spec_t *spec, dmr_sweep_plan_t *plan_p,
				  dmr_err_t *err);
void dmr_sweep_plan_free(dmr_sweep_plan_t *plan);

/*
 * Mark the jobs already in summary_path as done. A missing or empty file is
 * fine. A last line without '\n' is a write cut short: it is dropped
 * (plan->dropped = 1, plan->warning says which line) and, when repair is
 * set, the file is truncated after its last '\n'. Refused (DMR_ERR_PARSE,
 * file and line named): a header without cell and rep columns, a complete
 * line with a wrong column count or a non-integer rep.
 */
dmr_status_t dmr_sweep_plan_resume(dmr_sweep_plan_t *plan, const char *summary_path, int repair,
				   dmr_err_t *err);

/* dmr_sweep_cell_dirname (a cell's directory name): replay/sweepdir.h. */

/* Argument vectors (NULL-terminated, malloc'd; free with
 * dmr_sweep_argv_free) for the job's generator and run, with exe as
 * argv[0]; dir is the sweep directory. */
char **dmr_sweep_gen_argv(const dmr_sweep_spec_t *spec, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path);
char **dmr_sweep_run_argv(const dmr_sweep_spec_t *spec, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path, const char *cell_dir);
void dmr_sweep_argv_free(char **argv);

/* CLI entry: `dmreplay sweep ...` (argv[0] = "sweep"); exit status 0 all
 * done, 1 some runs failed, 2 bad spec or usage, 130 interrupted. */
int dmr_sweep_main(int argc, char **argv);

#endif /* DMR_SWEEP_H */
