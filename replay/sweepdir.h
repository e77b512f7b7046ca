/*
 * replay/sweepdir.h - the two pieces of a sweep directory's format that its
 * writer (replay/sweep/, `dmreplay sweep`) and its reader (replay/report/,
 * `dmreplay report`) share, in a module below both:
 *  - summary.csv lines: comma-separated, a field may be double-quoted (""
 *    is a quote inside one); the sweep quotes nothing, but its cell names
 *    are read back by the same splitter the report uses;
 *  - the directory of a (cell, rep): DIR/cells/D-rR/ with D =
 *    dmr_sweep_cell_dirname(cell);
 *  - the lock of an output directory, DIR/.dmr-lock, that `dmreplay sweep`
 *    and `dmreplay run` (one process or --procs) hold for as long as they
 *    write into DIR, so that two of them never mix their files there.
 * replay/roles/combine.c reads a CN's summary.csv with the same splitter.
 * The functions keep the names their first callers gave them (tests call
 * them). Depends on nothing of ours.
 */
#ifndef DMR_SWEEPDIR_H
#define DMR_SWEEPDIR_H

#include <stddef.h>

/* Split one CSV line in place (no trailing newline) into at most max fields;
 * double-quoted fields may hold commas ("" is a quote). Returns the number
 * of fields found (which may exceed max: the extra ones are not stored), or
 * -1 for an unterminated quote (or text after a closing quote). */
int dmr_report_csv_split(char *line, char **fields, int max);

/* Directory name of a cell (characters outside [A-Za-z0-9._=+-] become
 * '_', ';' becomes '+'), at most out_len-1 chars (out_len >= 1). */
void dmr_sweep_cell_dirname(const char *cell, char *out, size_t out_len);

/* Take the lock of the output directory dir (it must exist): flock
 * (LOCK_EX | LOCK_NB) on dir/.dmr-lock, created (0644) when missing, on an
 * O_CLOEXEC descriptor, so the lock is held until that descriptor is closed
 * or the process exits (children started with exec do not keep it). Never
 * waits. Returns the descriptor (>= 0), or -1 with msg (len bytes) saying
 * why, prefixed with dir: "another run holds it (DIR/.dmr-lock)" when
 * another process holds the lock (*busy_p = 1), or "not writable: ..." /
 * strerror when the lock file cannot be opened or locked (*busy_p = 0).
 * busy_p may be NULL. */
int dmr_sweepdir_lock(const char *dir, char *msg, size_t len, int *busy_p);

#endif /* DMR_SWEEPDIR_H */
