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
	int sim = strcmp(dmr_be_base_name(be), "sim") == 0;
	/* bench also runs on the wrappers (fault:INNER, record:INNER); calibrate
	 * measures a backend itself */
	int wrapped_ok = strcmp(cmd, "bench") == 0;
	if (!dmr_bench_known_backend(wrapped_ok ? dmr_be_base_name(be) : be))
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
	else if ((o->have_device || o->have_port || o->have_gid) &&
		 strcmp(dmr_be_base_name(be), "verbs") != 0)
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
	    "usage: dmreplay bench read|write|cas|faa|atomic [options]\n"
	    "       dmreplay bench ib_read_bw|ib_read_lat|ib_write_bw|ib_write_lat|\n"
	    "                      ib_atomic_bw|ib_atomic_lat [perftest options]\n\n"
	    "perftest-style micro-benchmark through the backend interface: one CN, -q QPs to\n"
	    "the MN (one worker each), `depth` WRs outstanding per QP, one WR in `cq-mod`\n"
	    "signaled, `post-list` WRs per post (one doorbell). perftest's own spellings are\n"
	    "taken for what it supports; any other perftest option is refused by name.\n\n"
	    "  --backend B          sim (default; shm, verbs, fault:INNER, record:INNER);\n"
	    "                       perftest's -d/-i/-x without --backend mean verbs\n"
	    "  --profile P          sim: hardware profile (default cx6dx-100g)\n"
	    "  --mtu M              sim: path MTU (256, 512, 1024, 2048, 4096)\n"
	    "  -d, --ib-dev, --device D   verbs: device name or index (default index 0)\n"
	    "  -i, --ib-port, --port N    verbs: port (default 1)\n"
	    "  -x, --gid-index G    verbs: GID index (default: automatic RoCEv2 IPv4 GID)\n"
	    "  -s, --size B         bytes per READ/WRITE (1..1073741824, K/M/G suffixes;\n"
	    "                       default 65536, latency 2); atomics are 8 bytes\n"
	    "  -a, --all            every size 2, 4, ..., 8388608 (perftest's -a), one row each\n"
	    "  -t, --tx-depth, --depth D  outstanding WRs per QP (1..1024; default 16; "
	    "ib_write_bw\n"
	    "                       128; latency 1)\n"
	    "  -n, --iters N        WRs per QP (5..10000000; default 5000; ib_*: perftest's\n"
	    "                       1000, ib_write_bw 5000)\n"
	    "  -D, --duration S     run S seconds (simulated on sim), or -n WRs per QP\n"
	    "                       (default 2000000 / QPs), whichever comes first\n"
	    "  -q, --qp N           QPs (1..256), one thread each on shm/verbs\n"
	    "  DESTINATION          verbs: run as the client of a bench server on that host\n"
	    "                       (IPv4 address or name), both started with the same options\n"
	    "  -Z, --server         verbs: serve one client (the MR; perftest's names on verbs\n"
	    "                       without a destination serve too, unless --loopback)\n"
	    "  -P, --client         needs a destination (perftest's spelling; optional)\n"
	    "  -p, --cm-port N      the server's rdma_cm port (default 18515, perftest's)\n"
	    "  --loopback           verbs: server and client in this process (the default\n"
	    "                       for read/write/cas/faa/atomic)\n"
	    "  --latency            latency mode (perftest *_lat columns), depth 1\n"
	    "  -Q, --cq-mod N       signal one WR in N, and the last (1..1024; default 100,\n"
	    "                       clamped to depth; latency 1)\n"
	    "  -l, --post_list, --post-list N  WRs per post (1..1024, clamped to depth)\n"
	    "  -A, --atomic_type T  CMP_AND_SWAP or FETCH_AND_ADD (atomic tests only)\n"
	    "  -F, --CPU-freq       accepted: no CPU-frequency check to silence\n"
	    "  --report_gbits       BW in Gb/sec (default MiB/sec, as perftest)\n"
	    "  --same-addr          cas/faa: every WR on one 8-byte word (default: 512 words)\n"
	    "  --dm                 cas/faa: the words in the MN NIC's device memory (sim:\n"
	    "                       the profile's dm_* rates; verbs: refused, naming the\n"
	    "                       device's max_dm_size)\n"
	    "  --cycle-buffer B     perftest's address pattern: WR i at (i mod (B / inc)) x inc,\n"
	    "                       local and remote, inc = size rounded up to 64; one buffer\n"
	    "                       when size > B / 2 (perftest: B = the page size, 4096)\n"
	    "  --timeout S          shm/verbs: seconds without a completion before giving up\n"
	    "                       (default 10)\n\n"
	    "Times: dmr_be_now: simulated on sim; CLOCK_MONOTONIC on shm; on verbs the TSC\n"
	    "at a rate measured against CLOCK_MONOTONIC (as perftest's get_cycles).\n"
	    "Not yet: two-host server/client runs (perftest -p, a destination address).\n"
	    "Exit status: 0 done, 1 the run failed, 2 bad options.\n");
}

/* The operation: dmreplay's name or perftest's binary name. */
static int bench_op(const char *name, uint8_t *opc, int *lat, int *pt, int *atomic_any)
{
	static const struct {
		const char *n;
		uint8_t opc;
		int lat, pt, any;
	} ops[] = {
	    {"read", DMR_WR_READ, 0, 0, 0},
	    {"write", DMR_WR_WRITE, 0, 0, 0},
	    {"cas", DMR_WR_CAS, 0, 0, 0},
	    {"faa", DMR_WR_FAA, 0, 0, 0},
	    {"atomic", DMR_WR_CAS, 0, 0, 1},
	    {"ib_read_bw", DMR_WR_READ, 0, 1, 0},
	    {"ib_read_lat", DMR_WR_READ, 1, 1, 0},
	    {"ib_write_bw", DMR_WR_WRITE, 0, 1, 0},
	    {"ib_write_lat", DMR_WR_WRITE, 1, 1, 0},
	    {"ib_atomic_bw", DMR_WR_CAS, 0, 1, 1},
	    {"ib_atomic_lat", DMR_WR_CAS, 1, 1, 1},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(name, ops[i].n) == 0) {
			*opc = ops[i].opc;
			*lat = ops[i].lat;
			*pt = ops[i].pt;
			*atomic_any = ops[i].any;
			return 0;
		}
	return -1;
}

#define BENCH_MAX_QPS 256u
#define BENCH_DUR_WRS 2000000ull /* -D without -n: WRs over all QPs at most */
#define BENCH_ALL_MAX (1u << 23) /* perftest MAX_SIZE, the last size of -a */

int dmr_bench_main(int argc, char **argv)
{
	enum {
		O_LATENCY = DMR_BENCH_O_NEXT,
		O_SAME,
		O_TIMEOUT,
		O_CYCLE,
		O_GBITS,
		O_HELP,
		O_DM,
		O_LOOPBACK,
		O_CM_PORT
	};
	static const struct option opts[] = {
	    DMR_BENCH_TARGET_OPTIONS,
	    {"ib-dev", required_argument, NULL, 'd'},
	    {"ib-port", required_argument, NULL, 'i'},
	    {"size", required_argument, NULL, 's'},
	    {"depth", required_argument, NULL, 't'},
	    {"tx-depth", required_argument, NULL, 't'},
	    {"iters", required_argument, NULL, 'n'},
	    {"duration", required_argument, NULL, 'D'},
	    {"all", no_argument, NULL, 'a'},
	    {"qp", required_argument, NULL, 'q'},
	    {"latency", no_argument, NULL, O_LATENCY},
	    {"same-addr", no_argument, NULL, O_SAME},
	    {"dm", no_argument, NULL, O_DM},
	    {"server", no_argument, NULL, 'Z'},
	    {"client", no_argument, NULL, 'P'},
	    {"loopback", no_argument, NULL, O_LOOPBACK},
	    {"cm-port", required_argument, NULL, O_CM_PORT},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"cq-mod", required_argument, NULL, 'Q'},
	    {"post-list", required_argument, NULL, 'l'},
	    {"post_list", required_argument, NULL, 'l'},
	    {"atomic_type", required_argument, NULL, 'A'},
	    {"CPU-freq", no_argument, NULL, 'F'},
	    {"report_gbits", no_argument, NULL, O_GBITS},
	    {"cycle-buffer", required_argument, NULL, O_CYCLE},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	dmr_bench_topts_t to;
	dmr_bench_topts_init(&to, DMR_OPT_SIZE);
	int have_size = 0, have_depth = 0, have_iters = 0, latency = 0, same = 0, all = 0, dm = 0;
	int have_cq_mod = 0, have_post_list = 0, gbits = 0, have_backend = 0, pt_dev = 0;
	const char *atype = NULL;
	uint64_t size = 0, depth = 0, iters = 0, cq_mod = 100, post_list = 1, cycle = 0, qps = 1;
	uint64_t cm_port = DMR_BENCH_DEFAULT_CM_PORT;
	int server = 0, client = 0, loopback = 0, have_cm_port = 0;
	double timeout = 10, duration = 0;
	/* every count takes K/M/G/T suffixes */
	const dmr_tools_num_t nums[] = {
	    {'s', "--size", 1, BENCH_MAX_SIZE, DMR_OPT_SIZE, &size, &have_size},
	    {'t', "--depth", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &depth, &have_depth},
	    {'n', "--iters", 5, BENCH_MAX_ITERS, DMR_OPT_SIZE, &iters, &have_iters},
	    {'Q', "--cq-mod", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &cq_mod, &have_cq_mod},
	    {'l', "--post-list", 1, BENCH_MAX_DEPTH, DMR_OPT_SIZE, &post_list, &have_post_list},
	    {'q', "--qp", 1, BENCH_MAX_QPS, DMR_OPT_SIZE, &qps, NULL},
	    {O_CYCLE, "--cycle-buffer", 64, 1u << 30, DMR_OPT_SIZE, &cycle, NULL},
	    {'p', "--cm-port", 1, 65535, 0, &cm_port, &have_cm_port},
	    {O_CM_PORT, "--cm-port", 1, 65535, 0, &cm_port, &have_cm_port},
	};
	dmr_err_t err;
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":hd:i:x:s:t:n:D:aq:Q:l:A:FbZPp:", opts, NULL)) !=
	       -1) {
		switch (ch) {
		case O_LATENCY:
			latency = 1;
			break;
		case O_SAME:
			same = 1;
			break;
		case O_DM:
			dm = 1;
			break;
		case 'Z':
			server = 1;
			break;
		case 'P':
			client = 1;
			break;
		case O_LOOPBACK:
			loopback = 1;
			break;
		case 'a':
			all = 1;
			break;
		case 'F':
			break; /* perftest: do not fail on a CPU-frequency mismatch; none here */
		case O_GBITS:
			gbits = 1;
			break;
		case 'A':
			atype = optarg;
			break;
		case 'b':
			dmr_bench_pt_refuse('b', NULL);
			return 2;
		case O_TIMEOUT:
		case 'D': {
			const char *nm = ch == 'D' ? "-D/--duration" : "--timeout";
			double *v = ch == 'D' ? &duration : &timeout;
			if (dmr_opt_double(nm, optarg, 0, 86400, DMR_OPT_LO_OPEN | DMR_OPT_SECONDS,
					   v, &err) != DMR_OK) {
				fprintf(stderr, "dmreplay bench: %s\n", err.msg);
				return 2;
			}
			break;
		}
		case 'h':
		case O_HELP:
			bench_usage(stdout);
			return 0;
		case '?':
			if (dmr_bench_pt_refuse(optopt, argv[optind - 1]))
				return 2;
			dmr_tools_opt_error("bench", ch, argv);
			return 2;
		default: {
			/* perftest's -d -i -x are the target's --device --port --gid-index */
			int tch = ch == 'd'   ? DMR_BENCH_O_DEVICE
				  : ch == 'i' ? DMR_BENCH_O_PORT
				  : ch == 'x' ? DMR_BENCH_O_GID
					      : ch;
			if (tch == DMR_BENCH_O_BACKEND)
				have_backend = 1;
			if (tch != ch)
				pt_dev = 1;
			if (dmr_bench_opt_rest("bench", tch, argv, &to, nums,
					       sizeof(nums) / sizeof(nums[0])) < 0)
				return 2;
			break;
		}
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "dmreplay bench: missing operation (read, write, cas, faa, atomic, "
				"ib_read_bw, ...)\n");
		bench_usage(stderr);
		return 2;
	}
	if (optind + 2 < argc) {
		fprintf(stderr,
			"dmreplay bench: unexpected argument '%s' (one operation and at most "
			"one destination)\n",
			argv[optind + 2]);
		return 2;
	}
	const char *dest = optind + 1 < argc ? argv[optind + 1] : NULL;
	const char *opname = argv[optind];
	dmr_bench_spec_t sp = {.qps = (uint32_t)qps, .timeout_s = timeout, .duration_s = duration};
	int pt = 0, atomic_any = 0, oplat = 0;
	if (bench_op(opname, &sp.opcode, &oplat, &pt, &atomic_any) != 0) {
		fprintf(stderr,
			"dmreplay bench: unknown operation '%s' (read, write, cas, faa, atomic, "
			"ib_read_bw, ib_read_lat, ib_write_bw, ib_write_lat, ib_atomic_bw, "
			"ib_atomic_lat)\n",
			opname);
		return 2;
	}
	latency |= oplat;
	if (atype) {
		/* perftest_parameters.c atomicTypesStr: exactly these two */
		uint8_t want = strcmp(atype, "CMP_AND_SWAP") == 0    ? DMR_WR_CAS
			       : strcmp(atype, "FETCH_AND_ADD") == 0 ? DMR_WR_FAA
								     : 0xff;
		if (want == 0xff) {
			fprintf(stderr,
				"dmreplay bench: option -A: '%s' is not an atomic type "
				"(CMP_AND_SWAP, FETCH_AND_ADD)\n",
				atype);
			return 2;
		}
		if (!bench_is_atomic(sp.opcode) || (!atomic_any && want != sp.opcode)) {
			fprintf(stderr,
				"dmreplay bench: option -A: only for the atomic tests (atomic, "
				"ib_atomic_bw, ib_atomic_lat; %s is %s)\n",
				opname, dmr_wr_opcode_string(sp.opcode));
			return 2;
		}
		sp.opcode = want;
	}
	/* perftest's -d/-i/-x name a device: verbs, unless --backend said otherwise
	 * (dmreplay's --device alone on the default sim is refused as before) */
	if (!have_backend && pt_dev)
		to.t.backend = "verbs";
	if (dmr_bench_topts_check("bench", &to, "") != 0)
		return 2;
	const dmr_bench_target_t t = to.t;
	int sim = strcmp(dmr_be_base_name(t.backend), "sim") == 0;
#ifdef DMR_HAVE_VERBS
	/* verbs, or verbs under a wrapper (fault:, record:): its queue is sized
	 * as perftest's; only the bare handle can be asked for its info */
	int verbs = strcmp(dmr_be_base_name(t.backend), "verbs") == 0;
	int bare_verbs = strcmp(t.backend, "verbs") == 0;
#endif
	/* two hosts: a destination makes a client; -Z a server; perftest's names
	 * on verbs without a destination a server too (perftest's convention),
	 * unless --loopback (dmreplay's own names run loopback) */
	{
		int is_verbs = strcmp(t.backend, "verbs") == 0;
		if (!dest && !server && !loopback && pt && is_verbs)
			server = 1;
		char bad[160] = "";
		if (server && dest)
			snprintf(bad, sizeof(bad), "-Z/--server takes no destination ('%s')", dest);
		else if (client && !dest)
			snprintf(bad, sizeof(bad), "-P/--client needs a destination");
		else if (loopback && (server || dest))
			snprintf(bad, sizeof(bad),
				 "--loopback is one process: no -Z or destination");
		else if (dest && !is_verbs)
			snprintf(bad, sizeof(bad),
				 "a destination ('%s'): two-host runs need --backend verbs (or "
				 "perftest's -d)",
				 dest);
		else if (server && !is_verbs)
			snprintf(
			    bad, sizeof(bad),
			    "-Z/--server: two-host runs need --backend verbs (or perftest's -d)");
		else if (have_cm_port && !server && !dest)
			snprintf(bad, sizeof(bad),
				 "-p/--cm-port: only for two-host runs (-Z, or a destination)");
		if (bad[0]) {
			fprintf(stderr, "dmreplay bench: %s\n", bad);
			return 2;
		}
	}
	if (all && have_size) {
		fprintf(stderr, "dmreplay bench: option -a: runs every size 2..%u; not with -s\n",
			BENCH_ALL_MAX);
		return 2;
	}
	if (bench_is_atomic(sp.opcode)) {
		if (have_size && size != 8) {
			fprintf(stderr,
				"dmreplay bench: option --size: %s operates on 8 bytes "
				"(asked %" PRIu64 ")\n",
				opname, size);
			return 2;
		}
		if (all) { /* perftest: "Message size cannot be changed for Atomic tests" */
			fprintf(
			    stderr,
			    "dmreplay bench: option -a: atomic tests have one size (8 bytes)\n");
			return 2;
		}
		size = 8;
	} else {
		if (same || dm) {
			fprintf(stderr, "dmreplay bench: option --%s: only for cas and faa\n",
				same ? "same-addr" : "dm");
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
		if (qps != 1) {
			fprintf(stderr, "dmreplay bench: option -q: latency mode runs one QP\n");
			return 2;
		}
		depth = 1;
		cq_mod = post_list = 1;
		if (!have_iters)
			iters = 1000;
	} else {
		/* perftest: tx_depth 128 (DEF_TX_BW); READ and atomics outstanding
		 * at most -o = max_qp_rd_atom, 16 on ConnectX and rxe */
		if (!have_depth)
			depth = pt && sp.opcode == DMR_WR_WRITE ? 128 : 16;
		if (!have_iters) /* perftest DEF_ITERS 1000, DEF_ITERS_WB 5000 */
			iters = pt && sp.opcode != DMR_WR_WRITE ? 1000 : 5000;
	}
	if (duration > 0 && !have_iters) {
		iters = BENCH_DUR_WRS / qps;
		if (iters < 1000)
			iters = 1000;
	}
	sp.size = (uint32_t)(all ? BENCH_ALL_MAX : size);
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
		uint64_t need =
		    dmr_bench_mr_need(&sp) + dmr_bench_local_need(&sp) * qps + 16 * iters * qps;
		char what[96];
		snprintf(what, sizeof(what), "--size %u x --depth %" PRIu64, sp.size, depth);
		if (dmr_opt_fits_memory(what, need, "MN region, local buffers and timestamps",
					&err) != DMR_OK) {
			fprintf(stderr, "dmreplay bench: %s\n", err.msg);
			return 2;
		}
	}
	/* the MR both sides size from the same options (bench_run.c's rounding) */
	uint64_t mr_size = (dmr_bench_mr_need(&sp) + 4095) & ~(uint64_t)4095;
	if (server)
		return dmr_bench_serve(&t, (uint16_t)cm_port, mr_size);
	if (dest) {
		char ip[64];
		if (dmr_bench_resolve(dest, ip, sizeof(ip), &err) != DMR_OK ||
		    dmr_bench_client_role(&t, ip, (uint16_t)cm_port, mr_size, &err) != DMR_OK) {
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
	dmr_status_t st = dmr_bench_session_open(&s, &t, (uint32_t)qps, dmr_bench_mr_need(&sp),
						 dmr_bench_local_need(&sp), &err);
#ifdef DMR_HAVE_VERBS
	if (verbs)
		dmr_verbs_set_queue(0, -1);
#endif
	if (st != DMR_OK) {
		/* a bad profile, no such device / port / GID, or a setting the
		 * backend refuses (ucx: DMR_UCX_CONNECT): bad input (2), as run */
		int bad_input = (sim && (st == DMR_ERR_IO || st == DMR_ERR_PARSE)) ||
				st == DMR_ERR_NODEV || st == DMR_ERR_RANGE || st == DMR_ERR_INVALID;
		int bad_profile = sim && (st == DMR_ERR_IO || st == DMR_ERR_PARSE);
		fprintf(stderr, "dmreplay bench: %s%s\n", bad_profile ? "option --profile: " : "",
			err.msg);
		if (dest)
			dmr_bench_client_done();
		return bad_input ? 2 : 1;
	}
	if (dest) {
		dmr_be_barrier_t b = {.phase = DMR_BE_BARRIER_START};
		int64_t sum;
		if ((st = dmr_be_barrier(s.be, &b, &sum, &err)) != DMR_OK) {
			fprintf(stderr, "dmreplay bench: start barrier with the server %s: %s\n",
				dest, err.msg);
			dmr_bench_session_close(&s);
			dmr_bench_client_done();
			return 1;
		}
	}
	if (dm) {
		/* the atomics' words in the MN NIC's device memory: the whole MR
		 * (one range), footprint the words the WRs touch */
		dmr_be_dm_locks_t d = {.n = 1, .len = {dmr_bench_mr_need(&sp)}};
		d.lock_bytes = same ? 8 : (uint64_t)qps * BENCH_ATOMIC_WORDS * 8;
		st = dmr_be_control(s.be, DMR_BE_CTL_DM_LOCKS, &d, &err);
		if (st == DMR_ERR_UNSUPPORTED)
			snprintf(err.msg, sizeof(err.msg),
				 "backend %s has no NIC device memory (the sim models it)",
				 t.backend);
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay bench: option --dm: %s\n", err.msg);
			dmr_bench_session_close(&s);
			return 2;
		}
	}
#ifdef DMR_HAVE_VERBS
	if (bare_verbs) {
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
	uint32_t first = all ? 2 : sp.size, last = sp.size;
	sp.size = first;
	dmr_bench_print_header(stdout, &s, &sp, (uint32_t)cq_mod, (uint32_t)post_list);
	if (duration > 0)
		printf(" Duration        : %g s%s, or %" PRIu64
		       " WRs per QP, whichever comes first\n",
		       duration, s.driven ? " (simulated)" : "", iters);
	dmr_bench_table_head(stdout, &sp, gbits);
	int rc = 0;
	for (uint64_t sz = first; sz <= last; sz *= 2) {
		sp.size = (uint32_t)sz;
		dmr_bench_result_t res;
		st = dmr_bench_run_sel(&s, &sp, (uint32_t)cq_mod, (uint32_t)post_list, &res, &err);
		if (st != DMR_OK) {
			fflush(stdout);
			fprintf(stderr, "dmreplay bench: %s (size %" PRIu64 ")\n", err.msg, sz);
			rc = 1;
			break;
		}
		dmr_bench_table_row(stdout, &sp, &res, gbits);
		if (!s.driven && !all)
			printf(" Clock check     : first post to last completion %.6f s by "
			       "dmr_be_now; the whole loop %.6f s by CLOCK_MONOTONIC\n",
			       res.seconds, res.mono_seconds);
	}
	dmr_bench_table_foot(stdout);
	if (dest) {
		/* the server ends when its client has said END */
		dmr_be_barrier_t b = {.phase = DMR_BE_BARRIER_END, .failed = rc != 0};
		int64_t sum;
		if (dmr_be_barrier(s.be, &b, &sum, &err) != DMR_OK && rc == 0) {
			fprintf(stderr, "dmreplay bench: end barrier with the server: %s\n",
				err.msg);
			rc = 1;
		}
	}
	dmr_bench_session_close(&s);
	if (dest)
		dmr_bench_client_done();
	return rc;
}
