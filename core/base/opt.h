/*
 * core/base/opt.h - numeric option values: the one parser family every
 * subcommand uses (getopt_long gives the strings; these give the numbers).
 *
 * Each parser takes the option's name as the user typed it (`opt`, e.g.
 * "--threads"), the string (`s`, may be NULL: refused) and an inclusive
 * range, and returns DMR_OK with *v_p set, or DMR_ERR_PARSE with err->msg
 * naming the option, the value and what is allowed, without a prefix:
 *   option --threads: 'x' is not a non-negative integer
 *   option --threads: 0 out of range (1..4096)
 *   option --window-ms: 'abc' is not a number
 * The caller prints it behind its own "dmreplay CMD: " and exits 2.
 *
 * One rule for suffixes (issue #15 D17): every size and every count of
 * work or of things (bytes, --txns, --requests, --iters, --cns, --threads,
 * --coros, --depth, ...) is parsed with DMR_OPT_SIZE, so K, M, G and T
 * (powers of 1024) are accepted alike by every subcommand; identifiers
 * (--seed, --port, --gid-index, --id) take plain digits only.
 * *v_p is left unchanged on error. Part of core/base (nothing of ours below).
 */
#ifndef DMR_BASE_OPT_H
#define DMR_BASE_OPT_H

#include <stdint.h>

#include "status.h"

/* flags */
#define DMR_OPT_SIZE                                                                               \
	0x1u /* integers: K/M/G/T suffix, powers of 1024, an                                       \
		optional B or iB after it (4K, 4KiB, 4KB) */
#define DMR_OPT_SECONDS                                                                            \
	0x2u		     /* doubles: a unit suffix s, ms, us or ns; the                        \
				value is returned in seconds ("200ms" -> 0.2);                     \
				no suffix means seconds */
#define DMR_OPT_LO_OPEN 0x4u /* doubles: the lower bound is excluded (x > lo) */

/* An unsigned decimal integer in [lo, hi] ("-1", "+1", "", "1x" refused;
 * overflow refused). DMR_OPT_SIZE allowed. */
dmr_status_t dmr_opt_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, unsigned flags,
			 uint64_t *v_p, dmr_err_t *err);
dmr_status_t dmr_opt_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, unsigned flags,
			 uint32_t *v_p, dmr_err_t *err);
/* A signed decimal integer in [lo, hi] (e.g. a GID index where -1 means
 * automatic). */
dmr_status_t dmr_opt_i64(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *v_p,
			 dmr_err_t *err);
/* A finite number (strtod syntax) in [lo, hi] ((lo, hi] with
 * DMR_OPT_LO_OPEN); DMR_OPT_SECONDS allowed. NaN and infinities refused. */
dmr_status_t dmr_opt_double(const char *opt, const char *s, double lo, double hi, unsigned flags,
			    double *v_p, dmr_err_t *err);

/*
 * What getopt_long refused, in the same words for every command. Call it
 * with opterr = 0 (getopt's own "run: unrecognized option" is not ours)
 * when getopt_long returned '?' or ':' (a ':' leading the short options
 * tells a short option's missing value from an unknown one; long options
 * need none): cmd as in "dmreplay CMD", ch what getopt_long returned, argv
 * what it scanned, opts its long options (for an ambiguous abbreviation;
 * may be NULL). Sets err->msg, without a prefix, to one of
 *   unknown option '--bogus' (see dmreplay CMD --help)
 *   option --coros needs a value
 *   option --quiet takes no value
 *   option --c is ambiguous (--coros, --cns, ...)
 * and returns DMR_ERR_PARSE; the caller prints it behind "dmreplay CMD: "
 * and exits 2.
 */
struct option;
dmr_status_t dmr_opt_refused(const char *cmd, int ch, char *const *argv, const struct option *opts,
			     dmr_err_t *err);

/* This machine's physical memory, bytes (sysconf _SC_PHYS_PAGES x
 * _SC_PAGESIZE); UINT64_MAX when it cannot be told. */
uint64_t dmr_phys_mem(void);
/* What options ask of memory, checked before allocating it (`run`'s
 * footprint and contexts, `bench --size/--depth`, `calibrate`): DMR_OK when
 * need_bytes <= dmr_phys_mem(), else DMR_ERR_RANGE with err->msg
 *   option(s) OPTS: need N bytes (G GiB: WHAT), more than this machine's
 *   memory (M bytes)
 * (opts e.g. "--size 1073741824 x --depth 16", what e.g. "MN region and
 * local buffers"). The caller prints it and exits 2. */
dmr_status_t dmr_opt_fits_memory(const char *opts, uint64_t need_bytes, const char *what,
				 dmr_err_t *err);

#endif /* DMR_BASE_OPT_H */
