/*
 * replay/tools/bench_impl.h - private to `dmreplay bench` and `dmreplay
 * calibrate` (replay/tools/README.md has the map): the benchmark's limits,
 * the helpers its files share, perftest's figures (bench_perftest.c) and
 * the options that choose a target (bench_cli.c; calibrate takes the same).
 * Functions are dmr_bench_* but not part of bench.h's API.
 */
#ifndef DMR_BENCH_IMPL_H
#define DMR_BENCH_IMPL_H

#include <getopt.h>
#include <stdio.h>

#include "bench.h"
#include "tools_util.h"

#define BENCH_ATOMIC_WORDS 512u /* perftest's 4 KiB cycle buffer of 8-byte words */
#define BENCH_POLL_MAX 64
#define BENCH_MAX_SIZE (1u << 30)
#define BENCH_MAX_DEPTH 1024u
#define BENCH_MAX_ITERS 10000000ull
#define BENCH_LAT_TAIL 2    /* perftest LAT_MEASURE_TAIL */
#define BENCH_MIN_CAPPED 16 /* WRs per QP posted before max_s may stop a run */
#define BENCH_MAX_POST_LIST BENCH_MAX_DEPTH

static inline uint64_t bench_round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static inline int bench_is_atomic(uint8_t opc)
{
	return opc == DMR_WR_CAS || opc == DMR_WR_FAA;
}

static inline int bench_is_ib_mtu(uint64_t v)
{
	return v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096;
}

/* perftest's cycle buffer of spec: slots in the cycle and (*inc_p) their
 * stride; 0 = spec has none (bench_run.c). */
uint64_t dmr_bench_cycle_slots(const dmr_bench_spec_t *sp, uint64_t *inc_p);

/* dmr_bench_run with perftest's selective signalling (one WR in cq_mod,
 * and the last) and post lists (post_list WRs per doorbell); both 1..depth.
 * dmr_bench_run is cq_mod 1, post_list 1 (bench_run.c). */
dmr_status_t dmr_bench_run_sel(dmr_bench_session_t *s, const dmr_bench_spec_t *sp, uint32_t cq_mod,
			       uint32_t post_list, dmr_bench_result_t *res_p, dmr_err_t *err);

/* ---- perftest's figures and table (bench_perftest.c) ---- */

/* min over i <= j < n of (tc[j] - tp[i]) / (j - i + 1), ps: the peak's time
 * per WR (n >= 1). */
double dmr_bench_min_per_wr_ps(const uint64_t *tp, const uint64_t *tc, uint64_t n);
/* perftest print_report_lat over the deltas of tp[0..iters) (ps): fills the
 * t_*_us fields of r (NAN when out of memory). */
void dmr_bench_lat_stats(const uint64_t *tp, uint64_t iters, dmr_bench_result_t *r);
/* perftest's heading of a run: rule, test name, then the Backend, Number of
 * qps, Outstanding, Addresses (cycle buffer only) and Time lines. */
void dmr_bench_print_header(FILE *f, const dmr_bench_session_t *s, const dmr_bench_spec_t *sp,
			    uint32_t cq_mod, uint32_t post_list);

/* perftest's result table (perftest_parameters.h's formats, verbatim):
 * head = rule + the column line (BW: MiB/sec, gbits: Gb/sec as
 * --report_gbits; latency: t_* columns, with duration_s perftest's
 * "t_avg tps average" columns), one row per run (BW peak 0.00 when not
 * computed: several QPs), foot = the closing rule. */
void dmr_bench_table_head(FILE *f, const dmr_bench_spec_t *sp, int gbits);
void dmr_bench_table_row(FILE *f, const dmr_bench_spec_t *sp, const dmr_bench_result_t *r,
			 int gbits);
void dmr_bench_table_foot(FILE *f);
/* A perftest option dmreplay bench does not take: optopt_ch (getopt's
 * optopt for an unknown short option, 0 for a long one) or arg (the long
 * option as typed, "--name[=value]") names one: print "dmreplay bench:
 * option X: perftest's -L/--NAME is not supported: WHY" and return 1;
 * else 0 (bench_perftest.c). */
int dmr_bench_pt_refuse(int optopt_ch, const char *arg);

/* ---- the options that choose a target (bench_cli.c) ---- */

/* getopt_long values of the target options; a tool's own start at
 * DMR_BENCH_O_NEXT. DMR_BENCH_TARGET_OPTIONS are their struct option rows. */
enum {
	DMR_BENCH_O_BACKEND = 256,
	DMR_BENCH_O_PROFILE,
	DMR_BENCH_O_DEVICE,
	DMR_BENCH_O_PORT,
	DMR_BENCH_O_GID,
	DMR_BENCH_O_MTU,
	DMR_BENCH_O_NEXT
};
#define DMR_BENCH_TARGET_OPTIONS                                                                   \
	{"backend", required_argument, NULL, DMR_BENCH_O_BACKEND},                                 \
	    {"profile", required_argument, NULL, DMR_BENCH_O_PROFILE},                             \
	    {"device", required_argument, NULL, DMR_BENCH_O_DEVICE},                               \
	    {"port", required_argument, NULL, DMR_BENCH_O_PORT},                                   \
	    {"gid-index", required_argument, NULL, DMR_BENCH_O_GID},                               \
	{                                                                                          \
		"mtu", required_argument, NULL, DMR_BENCH_O_MTU                                    \
	}

/* --backend, --profile, --mtu, --device, --port, --gid-index as given. */
typedef struct dmr_bench_topts {
	dmr_bench_target_t t; /* backend "sim", gid_index -1 until given */
	int have_profile, have_device, have_port, have_gid;
	unsigned num_flags; /* DMR_OPT_* of --port, --gid-index, --mtu */
} dmr_bench_topts_t;

void dmr_bench_topts_init(dmr_bench_topts_t *o, unsigned num_flags);
/* ch, a getopt_long value, and its argument: 1 a target option taken, 0
 * not a target option, -1 a bad value (printed as "dmreplay CMD: ..."). */
int dmr_bench_topt(const char *cmd, int ch, const char *arg, dmr_bench_topts_t *o);
/* After the options: the backend is known, --profile and --mtu are given
 * only for sim, --device/--port/--gid-index only for verbs. 0, or -1 with
 * the first broken rule printed ("dmreplay CMD: option X: ..."; a
 * --profile refusal ends with profile_hint, e.g. "" or "; use --base"). */
int dmr_bench_topts_check(const char *cmd, const dmr_bench_topts_t *o, const char *profile_hint);

/* The rest of a tool's getopt_long switch (getopt's optarg): a target
 * option, an integer option of nums[0..n), else getopt's error. 1 taken,
 * -1 a bad or unknown option (printed; exit 2). */
int dmr_bench_opt_rest(const char *cmd, int ch, char **argv, dmr_bench_topts_t *to,
		       const dmr_tools_num_t *nums, size_t n);

/* ---- two hosts (bench_remote.c; issue 16) ------------------------------ */

/* perftest's default TCP port (perftest_parameters.h DEF_PORT), here the
 * server's rdma_cm port. */
#define DMR_BENCH_DEFAULT_CM_PORT 18515u

/* host (a dotted IPv4 address or a name) -> dotted IPv4 in ip (len >= 16).
 * DMR_ERR_INVALID naming host when it has no IPv4 address. */
dmr_status_t dmr_bench_resolve(const char *host, char *ip, size_t len, dmr_err_t *err);

/* Serve one bench client: an MN process (dmr_verbs_mn_main) with an
 * mr_size-byte MR on t's device and port, rdma_cm on `port`, until the
 * client has finished and disconnected. Returns the exit status (0; 1 the
 * MN failed: printed; 130 a signal; 2 no such device, port or GID, or
 * built without verbs). */
int dmr_bench_serve(const dmr_bench_target_t *t, uint16_t port, uint64_t mr_size);

/* Make the next verbs open a CN of a two-node cluster whose MN is the bench
 * server at server_ip:port (dmr_verbs_set_role; the role lives in this
 * file); the server's region must hold mr_size bytes. Undo with
 * dmr_bench_client_done after the session is closed. DMR_ERR_UNSUPPORTED
 * without verbs. */
dmr_status_t dmr_bench_client_role(const dmr_bench_target_t *t, const char *server_ip,
				   uint16_t port, uint64_t mr_size, dmr_err_t *err);
void dmr_bench_client_done(void);

#endif /* DMR_BENCH_IMPL_H */
