/*
 * replay/sweep/sweep_impl.h - what the files of `dmreplay sweep` share among
 * themselves (not for other modules: their contract is replay/sweep.h).
 *
 *   spec.c       the spec: value types, known keys, JSON -> dmr_sweep_spec_t
 *   plan.c       cells x reps -> jobs, resume from summary.csv, the argv of
 *                a job's `gen` and `run`
 *   runner.c     running jobs: a trace per generator setting (under a
 *                lock), one `dmreplay run` per job, one appended row per
 *                finished job; sequential or through GNU parallel
 *   sweep_cli.c  `dmreplay sweep`: options, the DIR lock (sweepdir.h), --dry-run,
 *                --job-cell (one job under GNU parallel)
 *
 * Stops: SIGINT, SIGTERM and SIGHUP set the core/base/sig.h flag
 * (dmr_sweep_signals_install); every loop checks dmr_sig_caught().
 */
#ifndef DMR_SWEEP_IMPL_H
#define DMR_SWEEP_IMPL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../sweep.h"

/* ---- argument vectors (plan.c) ------------------------------------------ */

/* A growing NULL-terminated vector of strdup'd strings; oom is set on the
 * first failed allocation (later adds are ignored). Zero-initialise. */
typedef struct dmr_sweep_av {
	char **v;
	size_t n, cap;
	int oom;
} dmr_sweep_av_t;

void dmr_sweep_av_add(dmr_sweep_av_t *b, const char *s);
/* Every string up to a NULL (pass it as (char *)NULL). */
void dmr_sweep_av_list(dmr_sweep_av_t *b, ...) __attribute__((sentinel));
/* "--KEY" (underscores become dashes) and val. */
void dmr_sweep_av_opt(dmr_sweep_av_t *b, const char *key, const char *val);
/* The vector (free with dmr_sweep_argv_free), or NULL after oom. */
char **dmr_sweep_av_done(dmr_sweep_av_t *b);

/* ---- plan lookups (plan.c): O(n log n), never a scan per job --------- */

/* The job (cell, rep) of p, or NULL (sorts the cells once per call). */
dmr_sweep_job_t *dmr_sweep_plan_find(const dmr_sweep_plan_t *p, const char *cell,
				     unsigned long rep);
/* first[i] = 1 when job i is the first (lowest index) job with its trace
 * file: a malloc'd array of p->njobs flags (the caller frees), or NULL
 * when out of memory. */
uint8_t *dmr_sweep_plan_first_traces(const dmr_sweep_plan_t *p);

/* ---- the spec's fingerprint (plan.c) ----------------------------------- */

/* What determines the runs, as text (malloc'd; NULL when out of memory):
 * one "KEY=VALUE" line per field: workload, workload.* and run.* sorted by
 * key, axes.NAME=v1,v2 in axis order, reps, seed (without a seed axis).
 * The name and comments are left out: they change no run. */
char *dmr_sweep_spec_normalised(const dmr_sweep_spec_t *spec);
/* Compare spec with the one recorded at path (DIR/sweep.spec): DMR_OK when
 * the same or when path is missing (then written, atomically, when write
 * is set); DMR_ERR_PARSE naming the fields that differ and "use another
 * --out" when they differ; DMR_ERR_IO when path cannot be read or written. */
dmr_status_t dmr_sweep_spec_check_dir(const dmr_sweep_spec_t *spec, const char *path, int write,
				      dmr_err_t *err);

/* ---- running (runner.c) ------------------------------------------------- */

typedef struct dmr_sweep_ctx {
	const dmr_sweep_spec_t *spec;
	const char *spec_path; /* absolute */
	char dir[PATH_MAX];    /* absolute */
	char exe[PATH_MAX];    /* runs `gen` and `run` */
	char self[PATH_MAX];   /* runs `sweep --job-cell` under GNU parallel */
	char summary[PATH_MAX + 32];
	char header[4096]; /* summary.csv header in force, "" = none yet */
	int tty;
	double t0; /* dmr_wall_s() at the start */
	size_t total, before, now, failed;
} dmr_sweep_ctx_t;

/* SIGINT, SIGTERM, SIGHUP: set the stop flag (dmr_sig_caught()). */
void dmr_sweep_signals_install(void);

/* Run one (cell, rep): its trace (generated when missing), `dmreplay run`
 * into DIR/cells/J/, and the combined summary header ("cell,rep," + the
 * run's) and row. DMR_ERR_REMOTE: the run failed (its log's last line
 * named); DMR_ERR_IO / _PARSE: the trace or the run's summary. */
dmr_status_t dmr_sweep_run_job(dmr_sweep_ctx_t *c, const dmr_sweep_job_t *j, char *hdr, size_t hlen,
			       char *row, size_t rlen, dmr_err_t *err);
/* Every pending job, one after the other (0), or 1 when summary.csv's
 * columns differ from a run's (the sweep cannot go on). */
int dmr_sweep_run_sequential(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p);
/* The pending jobs through GNU parallel (-j jobs; -S hosts when not NULL),
 * each a `sweep --job-cell`; their rows are appended here. 0, or 1 when
 * parallel could not run or the columns differ. */
int dmr_sweep_run_parallel(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p, unsigned jobs,
			   const char *hosts);
/* Is the `parallel` first on PATH GNU parallel (`parallel --version`
 * names it)? 0, or -1 with msg (len bytes) saying what was found and how
 * to fix it (moreutils' parallel is not). There is no built-in parallel
 * runner: a sweep with --jobs/--hosts is refused (exit 2) rather than run
 * one cell at a time unasked. */
int dmr_sweep_check_parallel(char *msg, size_t len);
/* The progress line on a tty (final: end it with a newline). */
void dmr_sweep_progress(dmr_sweep_ctx_t *c, const char *current, int final);

#endif /* DMR_SWEEP_IMPL_H */
