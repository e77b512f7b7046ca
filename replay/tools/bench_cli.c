/*
 * replay/tools/bench_cli.c - `dmreplay bench read|write|cas|faa [options]`
 * (bench.h), and the options that choose a target, which `dmreplay
 * calibrate` takes too (bench_impl.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench_impl.h"
#include "tools_util.h"
#ifdef DMR_HAVE_VERBS
#include "../../backends/verbs/verbs.h"
#endif

/* ---- the target options ---------------------------------------------------- */

int dmr_bench_known_backend(const char *name)
{
	const char *p = dmr_be_names();
	size_t n = strlen(name);
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t k = strcspn(p, ", ");
		if (k == n && strncmp(p, name, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

void dmr_bench_topts_init(dmr_bench_topts_t *o, unsigned num_flags)
{
	memset(o, 0, sizeof(*o));
	o->t = (dmr_bench_target_t){.backend = "sim", .gid_index = -1};
	o->num_flags = num_flags;
}

int dmr_bench_topt(const char *cmd, int ch, const char *arg, dmr_bench_topts_t *o)
{
	uint64_t port = 0, gid = 0, mtu = 0;
	const unsigned f = o->num_flags;
	const dmr_tools_num_t nums[] = {
	    {DMR_BENCH_O_PORT, "--port", 1, 255, f, &port, &o->have_port},
	    {DMR_BENCH_O_GID, "--gid-index", 0, 255, f, &gid, &o->have_gid},
	    {DMR_BENCH_O_MTU, "--mtu", 256, 4096, f, &mtu, NULL},
	};
	switch (ch) {
	case DMR_BENCH_O_BACKEND:
		o->t.backend = arg;
		return 1;
	case DMR_BENCH_O_PROFILE:
		o->t.profile = arg;
		o->have_profile = 1;
		return 1;
	case DMR_BENCH_O_DEVICE:
		o->t.device = arg;
		o->have_device = 1;
		return 1;
	}
	int r = dmr_tools_num(cmd, nums, sizeof(nums) / sizeof(nums[0]), ch, arg);
	if (r <= 0)
		return r;
	if (ch == DMR_BENCH_O_PORT)
		o->t.port = (int)port;
	else if (ch == DMR_BENCH_O_GID)
		o->t.gid_index = (int)gid;
	else if (!bench_is_ib_mtu(mtu)) {
		fprintf(stderr,
			"dmreplay %s: option --mtu: %" PRIu64
			" is not an IB MTU (256, 512, 1024, 2048, 4096)\n",
			cmd, mtu);
		return -1;
	} else
		o->t.mtu = (uint32_t)mtu;
	return 1;
}

int dmr_bench_topts_check(const char *cmd, const dmr_bench_topts_t *o, const char *profile_hint)
{
	const char *be = o->t.backend;
	int sim = strcmp(be, "sim") == 0;
	if (!dmr_bench_known_backend(be))
		fprintf(stderr, "dmreplay %s: option --backend: unknown backend '%s' (known: %s)\n",
			cmd, be, dmr_be_names());
	else if (o->have_profile && !sim)
		fprintf(stderr,
			"dmreplay %s: option --profile: only the sim backend runs a profile "
			"(backend %s%s)\n",
			cmd, be, profile_hint);
	else if (o->t.mtu && !sim)
		fprintf(stderr,
			"dmreplay %s: option --mtu: only the sim's path MTU can be set (backend %s "
			"uses its ports' active MTU)\n",
			cmd, be);
	else if ((o->have_device || o->have_port || o->have_gid) && strcmp(be, "verbs") != 0)
		fprintf(stderr,
			"dmreplay %s: option %s: only the verbs backend has devices (backend %s)\n",
			cmd,
			o->have_device ? "--device"
			: o->have_port ? "--port"
				       : "--gid-index",
			be);
	else
		return 0;
	return -1;
}

int dmr_bench_opt_rest(const char *cmd, int ch, char **argv, dmr_bench_topts_t *to,
		       const dmr_tools_num_t *nums, size_t n)
{
	int r = dmr_bench_topt(cmd, ch, optarg, to);
	if (r == 0)
		r = dmr_tools_num(cmd, nums, n, ch, optarg);
	if (r == 0)
		dmr_tools_opt_error(cmd, ch, argv);
	return r > 0 ? 1 : -1;
}

/* ---- dmreplay bench -------------------------------------------------------- */

static void bench_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay bench read|write|cas|faa [options]\n\n"
	    "perftest-style micro-benchmark through the backend interface: one worker,\n"
	    "one QP to the MN, `depth` WRs outstanding, one WR in `cq-mod` signaled,\n"
	    "`post-list` WRs per post (one doorbell).\n\n"
	    "  --backend B     sim (default), shm, verbs\n"
	    "  --profile P     sim: hardware profile (default cx6dx-100g)\n"
	    "  --mtu M         sim: path MTU (256, 512, 1024, 2048, 4096; default the profile's)\n"
	    "  --device D      verbs: device name or index (default index 0)\n"
	    "  --port N        verbs: port (default 1)\n"
	    "  --gid-index G   verbs: GID index (default: automatic RoCEv2 IPv4 GID)\n"
	    "  --size B        bytes per READ/WRITE (1..1073741824; default 65536, latency 2);\n"
	    "                  cas/faa are 8 bytes\n"
	    "  --depth D       outstanding WRs (1..1024; default 16; latency mode: 1)\n"
	    "  --iters N       WRs (5..10000000; default 5000, latency 1000)\n"
	    "  --latency       latency mode (perftest *_lat columns), depth 1\n"
	    "  --cq-mod N      signal one WR in N (and the last), as perftest --cq-mod\n"
	    "                  (1..1024; default 100, clamped to depth; latency mode: 1)\n"
	    "  --post-list N   WRs per post, one doorbell each (1..1024, clamped to depth;\n"
	    "                  default 1; latency mode: 1)\n"
	    "  --same-addr     cas/faa: every WR on one 8-byte word (default: 512 words)\n"
	    "  --cycle-buffer B  perftest's address pattern: WR i at (i mod (B / inc)) x inc,\n"
	    "                  local and remote, inc = size rounded up to 64; one buffer when\n"
	    "                  size > B / 2 (perftest: B = the page size, 4096); default:\n"
	    "                  depth slots of size bytes, atomics on 512 words\n"
	    "  --timeout S     threaded backends: seconds without a completion before giving\n"
	    "                  up (default 10)\n\n"
	    "Times: dmr_be_now: simulated on sim; CLOCK_MONOTONIC on shm; on verbs the TSC\n"
	    "at a rate measured against CLOCK_MONOTONIC (as perftest's get_cycles).\n"
	    "Exit status: 0 done, 1 the run failed, 2 bad options.\n");
}

int dmr_bench_main(int argc, char **argv)
{
	enum {
		O_SIZE = DMR_BENCH_O_NEXT,
		O_DEPTH,
		O_ITERS,
		O_LATENCY,
		O_SAME,
		O_TIMEOUT,
		O_CQ_MOD,
		O_POST_LIST,
		O_CYCLE,
		O_HELP
	};
	static const struct option opts[] = {
	    DMR_BENCH_TARGET_OPTIONS,
	    {"size", required_argument, NULL, O_SIZE},
	    {"depth", required_argument, NULL, O_DEPTH},
	    {"iters", required_argument, NULL, O_ITERS},
	    {"latency", no_argument, NULL, O_LATENCY},
	    {"same-addr", no_argument, NULL, O_SAME},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"cq-mod", required_argument, NULL, O_CQ_MOD},
	    {"post-list", required_argument, NULL, O_POST_LIST},
	    {"cycle-buffer", required_argument, NULL, O_CYCLE},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	dmr_bench_topts_t to;
	dmr_bench_topts_init(&to, DMR_OPT_SIZE);
	int have_size = 0, have_depth = 0, have_iters = 0, latency = 0, same = 0;
	int have_cq_mod = 0, have_post_list = 0;
	uint64_t size = 0, depth = 0, iters = 0, cq_mod = 100, post_list = 1, cycle = 0;
	double timeout = 10;
	/* every count takes K/M/G/T suffixes */
	const dmr_tools_num_t nums[] = {
	    {O_SIZE, "--size", 1, BENCH_MAX_SIZE, DMR_OPT_SIZE, &size, &have_size},
	    {O_DEPTH, "--depth", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &depth, &have_depth},
	    {O_ITERS, "--iters", 5, BENCH_MAX_ITERS, DMR_OPT_SIZE, &iters, &have_iters},
	    {O_CQ_MOD, "--cq-mod", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &cq_mod, &have_cq_mod},
	    {O_POST_LIST, "--post-list", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &post_list,
	     &have_post_list},
	    {O_CYCLE, "--cycle-buffer", 64, 1u << 30, DMR_OPT_SIZE, &cycle, NULL},
	};
	dmr_err_t err;
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_LATENCY:
			latency = 1;
			break;
		case O_SAME:
			same = 1;
			break;
		case O_TIMEOUT:
			if (dmr_opt_double("--timeout", optarg, 0, 86400, DMR_OPT_LO_OPEN, &timeout,
					   &err) != DMR_OK) {
				fprintf(stderr, "dmreplay bench: %s\n", err.msg);
				return 2;
			}
			break;
		case 'h':
		case O_HELP:
			bench_usage(stdout);
			return 0;
		default:
			if (dmr_bench_opt_rest("bench", ch, argv, &to, nums,
					       sizeof(nums) / sizeof(nums[0])) < 0)
				return 2;
			break;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "dmreplay bench: missing operation (read, write, cas, faa)\n");
		bench_usage(stderr);
		return 2;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "dmreplay bench: unexpected argument '%s'\n", argv[optind + 1]);
		return 2;
	}
	const char *opname = argv[optind];
	dmr_bench_spec_t sp = {.qps = 1, .timeout_s = timeout};
	if (strcmp(opname, "read") == 0)
		sp.opcode = DMR_WR_READ;
	else if (strcmp(opname, "write") == 0)
		sp.opcode = DMR_WR_WRITE;
	else if (strcmp(opname, "cas") == 0)
		sp.opcode = DMR_WR_CAS;
	else if (strcmp(opname, "faa") == 0)
		sp.opcode = DMR_WR_FAA;
	else {
		fprintf(stderr, "dmreplay bench: unknown operation '%s' (read, write, cas, faa)\n",
			opname);
		return 2;
	}
	if (dmr_bench_topts_check("bench", &to, "") != 0)
		return 2;
	const dmr_bench_target_t t = to.t;
	int sim = strcmp(t.backend, "sim") == 0;
#ifdef DMR_HAVE_VERBS
	int verbs = strcmp(t.backend, "verbs") == 0;
#endif
	if (bench_is_atomic(sp.opcode)) {
		if (have_size && size != 8) {
			fprintf(stderr,
				"dmreplay bench: option --size: %s operates on 8 bytes "
				"(asked %" PRIu64 ")\n",
				opname, size);
			return 2;
		}
		size = 8;
	} else {
		if (same) {
			fprintf(stderr,
				"dmreplay bench: option --same-addr: only for cas and faa\n");
			return 2;
		}
		if (!have_size)
			size = latency ? 2 : 65536;
	}
	if (latency) {
		if (have_depth && depth != 1) {
			fprintf(stderr,
				"dmreplay bench: option --depth: latency mode runs one WR at "
				"a time (depth 1; asked %" PRIu64 ")\n",
				depth);
			return 2;
		}
		if ((have_cq_mod && cq_mod != 1) || (have_post_list && post_list != 1)) {
			fprintf(stderr,
				"dmreplay bench: option %s: latency mode signals and posts one "
				"WR at a time\n",
				have_cq_mod && cq_mod != 1 ? "--cq-mod" : "--post-list");
			return 2;
		}
		depth = 1;
		cq_mod = post_list = 1;
		if (!have_iters)
			iters = 1000;
	} else {
		if (!have_depth)
			depth = 16;
		if (!have_iters)
			iters = 5000;
	}
	sp.size = (uint32_t)size;
	sp.depth = (uint32_t)depth;
	sp.iters = iters;
	sp.latency = latency;
	sp.same_addr = same;
	sp.cycle_buffer = (uint32_t)cycle;
	cq_mod = cq_mod < depth ? cq_mod : depth; /* perftest: at most tx_depth */
	post_list = post_list < depth ? post_list : depth;

	{
		/* what the run allocates and registers, checked before it is (issue
		 * #15 D2: --size 1G touched 16.8 GB): the MN region (depth x size
		 * per QP), the local buffers, two timestamps per iteration */
		uint64_t need = dmr_bench_mr_need(&sp) + dmr_bench_local_need(&sp) + 16 * iters;
		char what[96];
		snprintf(what, sizeof(what), "--size %" PRIu64 " x --depth %" PRIu64, size, depth);
		if (dmr_opt_fits_memory(what, need, "MN region, local buffers and timestamps",
					&err) != DMR_OK) {
			fprintf(stderr, "dmreplay bench: %s\n", err.msg);
			return 2;
		}
	}
	dmr_bench_session_t s;
#ifdef DMR_HAVE_VERBS
	/* perftest's QP: tx_depth WRs, inline data only for WRITE (verbs.h) */
	if (verbs)
		dmr_verbs_set_queue(2 * (uint32_t)depth < 64 ? 64 : 2 * (uint32_t)depth,
				    sp.opcode == DMR_WR_WRITE ? -1 : 0);
#endif
	dmr_status_t st = dmr_bench_session_open(&s, &t, 1, dmr_bench_mr_need(&sp),
						 dmr_bench_local_need(&sp), &err);
#ifdef DMR_HAVE_VERBS
	if (verbs)
		dmr_verbs_set_queue(0, -1);
#endif
	if (st != DMR_OK) {
		/* a bad profile, or no such device / port / GID: bad input (2) */
		int bad_input = (sim && (st == DMR_ERR_IO || st == DMR_ERR_PARSE)) ||
				st == DMR_ERR_NODEV || st == DMR_ERR_RANGE;
		fprintf(stderr, "dmreplay bench: %s%s\n", bad_input ? "option --profile: " : "",
			err.msg);
		return bad_input ? 2 : 1;
	}
#ifdef DMR_HAVE_VERBS
	if (verbs) {
		dmr_verbs_info_t vi;
		dmr_verbs_info(s.be, &vi);
		if (sp.depth > vi.sq_depth) {
			fprintf(stderr,
				"dmreplay bench: option --depth: %u exceeds the send queue "
				"depth %u of %s\n",
				sp.depth, vi.sq_depth, vi.device);
			dmr_bench_session_close(&s);
			return 2;
		}
	}
#endif
	dmr_bench_print_header(stdout, &s, &sp, (uint32_t)cq_mod, (uint32_t)post_list);
	dmr_bench_result_t res;
	st = dmr_bench_run_sel(&s, &sp, (uint32_t)cq_mod, (uint32_t)post_list, &res, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay bench: %s\n", err.msg);
		dmr_bench_session_close(&s);
		return 1;
	}
	dmr_bench_print(&sp, &res, stdout);
	if (!s.driven)
		printf(" Clock check     : first post to last completion %.6f s by dmr_be_now; the "
		       "whole loop %.6f s by CLOCK_MONOTONIC\n",
		       res.seconds, res.mono_seconds);
	dmr_bench_session_close(&s);
	return 0;
}
