/*
 * replay/tools/tools_opt.h - the command-line pieces the tools share
 * (private to replay/tools/): integer options as a table over
 * core/base/opt.h, and getopt_long's two errors said the same way.
 *
 * A tool lists its integer options as rows (the getopt_long value, the
 * option's name, the inclusive range, DMR_OPT_* flags, where the value
 * goes) and hands every option it reads to dmr_tools_num; the numbers are
 * parsed by dmr_opt_u64, so every tool refuses the same strings with the
 * same words. Messages go to stderr as "dmreplay CMD: <message>".
 */
#ifndef DMR_TOOLS_OPT_H
#define DMR_TOOLS_OPT_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/base/opt.h"

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
 * ch ':' (a value missing) or another unknown value: print "dmreplay CMD:
 * option X needs a value" or "dmreplay CMD: unknown option 'X' (see
 * dmreplay CMD --help)", X being argv[optind - 1].
 */
void dmr_tools_opt_error(const char *cmd, int ch, char **argv);

#endif /* DMR_TOOLS_OPT_H */
