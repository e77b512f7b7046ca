/*
 * core/base/progress.h - a progress line for long work (`run`, `gen`,
 * `kv run`, `calibrate`; `sweep` has its own): on stderr, at most
 * DMR_PROGRESS_HZ times a second, "WHAT: DONE/TOTAL UNIT (P %), E elapsed,
 * ETA R" (TOTAL, P and the ETA only when the total is known; the ETA is
 * elapsed x (total - done) / done, a straight-line estimate).
 *
 * Shown when stderr is a terminal (then the line is rewritten in place with
 * "\r\033[K" and erased at the end), or when forced (--progress: one line
 * per update, at most DMR_PROGRESS_FILE_HZ a second, for a log file or a
 * test); never with --quiet. The one part of core/base that prints: a line
 * for the user, never an error. One thread owns a progress line.
 */
#ifndef DMR_BASE_PROGRESS_H
#define DMR_BASE_PROGRESS_H

#include <stdint.h>

#define DMR_PROGRESS_HZ 4.0	 /* updates per second on a terminal */
#define DMR_PROGRESS_FILE_HZ 1.0 /* lines per second when forced off a terminal */

typedef enum dmr_progress_mode {
	DMR_PROGRESS_AUTO = 0, /* when stderr is a terminal */
	DMR_PROGRESS_ON = 1,   /* always (--progress) */
	DMR_PROGRESS_OFF = 2,  /* never (--quiet) */
} dmr_progress_mode_t;

typedef struct dmr_progress {
	int on, tty, shown;
	const char *what, *unit; /* static strings of the caller */
	uint64_t total;		 /* 0 = unknown */
	uint32_t calls;		 /* updates since the last clock read */
	double t0, last;	 /* wall s: start, last line */
} dmr_progress_t;

/* Start a progress line of `what` (e.g. "run") counting `unit` (e.g.
 * "txns") up to total (0 = unknown). Prints nothing yet. */
void dmr_progress_init(dmr_progress_t *p, dmr_progress_mode_t mode, const char *what,
		       const char *unit, uint64_t total);
/* done units so far; cheap (reads the clock every 256 calls unless force):
 * prints when the interval has passed. */
void dmr_progress_update(dmr_progress_t *p, uint64_t done);
/* The same for slow steps (a phase of seconds): reads the clock every call. */
void dmr_progress_tick(dmr_progress_t *p, uint64_t done);
/* The end: on a terminal the line is erased (the command's own output
 * follows); forced off a terminal, a last line with done (also after a
 * short run that printed none; not when nothing was done nor shown: a run
 * refused in its setup). */
void dmr_progress_end(dmr_progress_t *p, uint64_t done);

#endif /* DMR_BASE_PROGRESS_H */
