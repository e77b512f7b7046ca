/*
 * replay/tools/tools_util.h - what the tools share (private to
 * replay/tools/): integer options as a table over core/base/opt.h,
 * getopt_long's two errors said the same way, and the open-and-close probe
 * of an RDMA device through the verbs backend.
 *
 * A tool lists its integer options as rows (the getopt_long value, the
 * option's name, the inclusive range, DMR_OPT_* flags, where the value
 * goes) and hands every option it reads to dmr_tools_num; the numbers are
 * parsed by dmr_opt_u64, so every tool refuses the same strings with the
 * same words. Messages go to stderr as "dmreplay CMD: <message>".
 */
#ifndef DMR_TOOLS_UTIL_H
#define DMR_TOOLS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/base/opt.h"
#include "../../core/base/status.h"

typedef struct dmr_tools_num {
	int ch;		  /* getopt_long's value for the option */
	const char *name; /* as the user types it: "--port" */
	uint64_t lo, hi;  /* inclusive range */
	unsigned flags;	  /* DMR_OPT_SIZE or 0 */
	uint64_t *v;	  /* the value goes here */
	int *seen;	  /* NULL, or set to 1 when the option is given */
} dmr_tools_num_t;

/*
 * If ch is the option of a row of tab[0..n): parse arg into *row->v (and
 * set *row->seen) and return 1, or print "dmreplay CMD: option NAME: ..."
 * (the value and the range allowed) and return -1. 0 when no row has ch.
 */
int dmr_tools_num(const char *cmd, const dmr_tools_num_t *tab, size_t n, int ch, const char *arg);

/*
 * getopt_long with opterr = 0 and ":" leading the short options returned
 * ch ':' (a value missing) or another unknown value: print "dmreplay CMD: "
 * and what dmr_opt_refused (core/base/opt.h) says, e.g. "option X needs a
 * value" or "unknown option 'X' (see dmreplay CMD --help)".
 */
void dmr_tools_opt_error(const char *cmd, int ch, char **argv);

/*
 * Open the verbs backend on device / port / gid_index (-1 automatic) with
 * one MN, one CN, one worker and an MN region of mr_size bytes (its open
 * runs the loopback canary: a pattern written and read back, a CAS's old
 * value), then close it. DMR_OK when the device can run; *open_ms_p (may be
 * NULL) is the open's wall time. Errors: dmr_be_open's (DMR_ERR_NODEV: no
 * such device, or a build without the verbs backend).
 */
dmr_status_t dmr_tools_verbs_probe(const char *device, int port, int gid_index, uint64_t mr_size,
				   double *open_ms_p, dmr_err_t *err);

#endif /* DMR_TOOLS_UTIL_H */
