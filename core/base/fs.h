/*
 * core/base/fs.h - directories and files that are never seen half-written.
 *
 *  - dmr_mkdir_p: mkdir -p (mode 0777 less the umask), then checks that the
 *    path is a directory and, with DMR_FS_PROBE, that a file can be created
 *    in it (a run must not find out only when it writes its results).
 *  - dmr_afile_*: an atomic file write. The data go to a temp file in the
 *    same directory whose name is unique to this process and call
 *    (".NAME.PID.SEQ.tmp"), and are renamed over NAME only when every write,
 *    the flush and the close succeeded. So a reader sees the old file or
 *    the new one, never a mix, and two processes writing the same NAME at
 *    once cannot interleave their bytes (the last rename wins whole). On any
 *    failure the temp file is removed and NAME is left as it was.
 *  - dmr_file_read_all: a whole (bounded) file into memory.
 * Errors: DMR_ERR_IO with err naming the path and strerror. Part of
 * core/base (nothing of ours below).
 */
#ifndef DMR_BASE_FS_H
#define DMR_BASE_FS_H

#include <limits.h>
#include <stdio.h>

#include "status.h"

#define DMR_FS_PROBE 0x1u /* dmr_mkdir_p: also check the directory is writable */

dmr_status_t dmr_mkdir_p(const char *dir, unsigned flags, dmr_err_t *err);

/* How many directories of dir's path do not exist yet, dir's own included
 * (0: dir exists): asked before dmr_mkdir_p by a run that removes what it
 * made when it is then refused (dmr_rmdir_made). Trailing slashes ignored. */
unsigned dmr_dirs_missing(const char *dir);
/* Remove dir, then its parents, n directories in all (dmr_dirs_missing's
 * count), each with rmdir(2): only while empty, so a directory holding
 * anything (partial results) stops it. 0 when dir itself was removed (or
 * n is 0), -1 when it was not. */
int dmr_rmdir_made(const char *dir, unsigned n);

typedef struct dmr_afile {
	FILE *f;	     /* write here between open and commit */
	char path[PATH_MAX]; /* the destination */
	char tmp[PATH_MAX];  /* the temp file, same directory */
} dmr_afile_t;

/* Check, before any work, that a file can be written at path as given (a
 * writer that makes it beside path and renames it there): path not empty
 * (DMR_ERR_INVALID), not an existing file that is not a regular one (a
 * device, a directory, a pipe: DMR_ERR_INVALID), and its directory exists,
 * is a directory and a file can be made in it (one is made and removed,
 * DIR/.dmr-probe.PID; DMR_ERR_IO: "PATH: no such directory 'DIR'", "PATH:
 * 'DIR' is not a directory", "PATH: no file can be made in directory 'DIR':
 * REASON"). Messages name path as given, never a temp file; directories are
 * not made. gen and kv gen ask this before they print or generate anything
 * (gen said "nodir/a.csv.tmp: No such file or directory", and only after
 * its footprint table: a trial). */
dmr_status_t dmr_out_file_check(const char *path, dmr_err_t *err);

/* Open tmp, the fixed temp name a writer renames over dest when done
 * (gen's and kv gen's OUT.tmp), for writing from its start: created, or an
 * earlier regular file truncated. Never through a symbolic link, a FIFO or
 * a device at tmp (fopen followed a link there and wrote the trace over its
 * target; a FIFO blocked the writer: a trial). DMR_OK with *fp_p, else
 * DMR_ERR_INVALID (tmp exists and is not a regular file: it is named, with
 * dest, and left as it is) or DMR_ERR_IO. */
dmr_status_t dmr_tmp_fopen(const char *tmp, const char *dest, FILE **fp_p, dmr_err_t *err);

/* Create the temp file for `path` (its directory must exist).
 * DMR_ERR_INVALID when path exists and is not a regular file (a device, a
 * directory, a pipe: the commit would rename the temp file over it; run as
 * root, `kv gen -o /dev/full` replaced the device, a trial), DMR_ERR_IO
 * when the temp file cannot be created. */
dmr_status_t dmr_afile_open(dmr_afile_t *a, const char *path, dmr_err_t *err);
/* Flush, check for write errors, close, rename over a->path. On error the
 * temp file is removed (a->path untouched). a->f is closed either way. */
dmr_status_t dmr_afile_commit(dmr_afile_t *a, dmr_err_t *err);
/* Close and remove the temp file (a->path untouched). Safe after commit. */
void dmr_afile_abort(dmr_afile_t *a);
/* Write `len` bytes of `data` to `path` atomically (open + fwrite + commit). */
dmr_status_t dmr_file_write_atomic(const char *path, const void *data, size_t len, dmr_err_t *err);

/* Read a whole file into a new NUL-terminated buffer (*buf_p, freed by the
 * caller; *len_p bytes, not counting the NUL). A file over max_bytes is
 * refused (DMR_ERR_PARSE: "PATH: larger than N bytes"); open or read
 * errors are DMR_ERR_IO naming the path; DMR_ERR_NOMEM. An empty file is
 * returned as an empty buffer (the caller decides whether that is an
 * error). */
dmr_status_t dmr_file_read_all(const char *path, size_t max_bytes, char **buf_p, size_t *len_p,
			       dmr_err_t *err);

#endif /* DMR_BASE_FS_H */
