/*
 * core/base/status.h - the one status type of dmreplay.
 *
 * Modelled on UCX's ucs_status_t: DMR_OK = 0, DMR_INPROGRESS = 1, DMR_EOF =
 * 2 (a reader has no more items: not an error), negative values are errors
 * grouped by how much is broken (operation, transaction, endpoint/backend,
 * input). A status says whether a call worked; what a call produced (a
 * transaction's outcome, a completion's kind) has a type of its own and is
 * never carried in a dmr_status_t.
 *
 * Part of core/base, the bottom layer: it depends on nothing of ours.
 * Functions return a dmr_status_t; output parameters are set only on
 * DMR_OK. The function that decides an error
 * reports it (into a caller-supplied dmr_err_t when there is one); callers
 * only propagate.
 */
#ifndef DMR_STATUS_H
#define DMR_STATUS_H

#include <stddef.h>

typedef enum dmr_status {
	DMR_OK = 0,
	DMR_INPROGRESS = 1,
	DMR_EOF = 2, /* clean end of input: no item returned */
	/* operation level */
	DMR_ERR_INVALID = -1,	  /* bad argument (e.g. unaligned atomic) */
	DMR_ERR_UNSUPPORTED = -2, /* operation not supported by backend */
	DMR_ERR_AGAIN = -3,	  /* resource temporarily exhausted */
	DMR_ERR_RANGE = -4,	  /* address or value out of range */
	DMR_ERR_NOTFOUND = -5,	  /* no such key (the KV store's get, del) */
	/* transaction level */
	DMR_ERR_ABORT = -10, /* transaction aborted (conflict) */
	DMR_ERR_FULL = -11,  /* a table ran out of slots */
	/* endpoint / backend level */
	DMR_ERR_REMOTE = -20,	   /* remote access / completion error */
	DMR_ERR_TIMEOUT = -21,	   /* a deadline passed */
	DMR_ERR_NODEV = -22,	   /* no such device / backend */
	DMR_ERR_NOMEM = -23,	   /* allocation failed */
	DMR_ERR_IO = -24,	   /* system call / file error */
	DMR_ERR_INTERRUPTED = -25, /* stopped by a signal (SIGINT, SIGTERM) */
	DMR_ERR_WRITE = -26,	   /* an output could not be written in full
				      (disk full, I/O error, close or rename
				      failed): the run failed, its input was
				      fine (DMR_ERR_IO: a file or directory as
				      given cannot be opened or created) */
	/* input level */
	DMR_ERR_PARSE = -30,  /* malformed input (file, line, field named) */
	DMR_ERR_VERIFY = -31, /* a post-run invariant check failed */
} dmr_status_t;

/* Human-readable name of a status. Never NULL; static storage. */
const char *dmr_status_string(dmr_status_t st);

/*
 * The exit status of a command whose work ended with st, one rule for every
 * subcommand (README "exit status"; issue #15 D14):
 *   0    DMR_OK (and DMR_INPROGRESS, DMR_EOF: not errors)
 *   2    bad input, caught before the work or when it meets it: a file,
 *        line, field, option value or device that is wrong or cannot be
 *        satisfied (DMR_ERR_PARSE, _IO, _RANGE, _INVALID, _NODEV; an option
 *        that needs more memory than the machine has is checked up front
 *        and is DMR_ERR_RANGE)
 *   130  DMR_ERR_INTERRUPTED (SIGINT, SIGTERM)
 *   1    the run failed: everything else (DMR_ERR_VERIFY, _WRITE: disk full
 *        while writing results, _NOMEM: out of memory during the run,
 *        _REMOTE, _TIMEOUT, _UNSUPPORTED, ...).
 */
int dmr_exit_status(dmr_status_t st);

/*
 * Error detail: the place and cause of the first error, filled by the
 * function that decided it. msg is NUL-terminated, at most 511 chars.
 */
typedef struct dmr_err {
	char msg[512];
} dmr_err_t;

/* printf-style: format into err->msg (err may be NULL). Returns st. */
dmr_status_t dmr_err_set(dmr_err_t *err, dmr_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* DMR_STATUS_H */
