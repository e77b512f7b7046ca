/*
 * replay/main.c - the dmreplay command: subcommand dispatch.
 */
#include <stdio.h>
#include <string.h>

#include "../models/model.h"
#include "../traces/workload.h"
#include "kv.h"
#include "tools/doctor.h"
#include "tools/fidelity.h"
#include "tools/bench.h"
#include "tools/calibrate.h"
#include "tools/recsim.h"
#include "replay.h"
#include "report.h"
#include "roles.h"
#include "sweep.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay COMMAND [options]   (COMMAND --help for its options)\n\n"
	    "commands:\n"
	    "  run              replay a trace on a backend (default: the shipped TPC-C sample on "
	    "sim)\n"
	    "  gen tpcc         generate a TPC-C trace\n"
	    "  gen smallbank    generate a SmallBank trace\n"
	    "  gen ycsb         generate a YCSB trace from a YCSB workload file\n"
	    "  gen tatp         generate a TATP trace\n"
	    "  kv gen|run|bench|models  KV-cache pool workload (docs/KVCACHE.md)\n"
	    "  sweep SPEC.json  run cells x repetitions of a sweep (docs/SWEEPS.md)\n"
	    "  report SUMMARY   medians, bootstrap intervals, ratios, plots of a sweep\n"
	    "  model PROFILE    print a hardware profile as the simulator uses it\n"
	    "  doctor           preflight checks of this node (RDMA devices, GIDs, MTU, memlock, "
	    "IOMMU)\n"
	    "  bench OP         perftest-style micro-benchmark: read, write, cas, faa\n"
	    "  bench transfer   KV block transfers (= kv bench): per-op latency, Gb/s\n"
	    "  calibrate        measure a backend and write a hardware profile\n"
	    "  fidelity         sim predictions vs a device on the same traces (docs/fidelity.md)\n"
	    "  replay-record F  a record:INNER recording replayed on the sim: measured vs "
	    "simulated\n"
	    "                   latency per opcode and size (docs/RECORD.md)\n"
	    "  mn               the memory node as a process (cluster config; docs/ROLES.md)\n"
	    "  cn               a compute node as a process: its share of a trace on the MN\n");
}

static void model_usage(FILE *f)
{
	fprintf(f, "usage: dmreplay model PROFILE\n"
		   "Print a hardware profile as the simulator uses it: link, propagation, CN CPU,\n"
		   "NIC, MN DMA and atomics, MN CPU, device memory and the idle 64 B READ it\n"
		   "models next to the profile's figure (docs/MODEL.md).\n\n"
		   "  PROFILE   a name, looked up as NAME.json in $DMR_MODELS_DIR, the source\n"
		   "            tree's models/ and the install dir (e.g. cx6dx-100g, cx7-400g,\n"
		   "            rxe-qemu), or the path of a JSON profile (contains '/' or ends in\n"
		   "            .json)\n"
		   "  -h, --help  this help\n");
}

static int model_main(int argc, char **argv)
{
	/* -h / --help anywhere is the help, as for every other command */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			model_usage(stdout);
			return 0;
		}
	const char *why = NULL, *what = NULL;
	for (int i = 1; i < argc && !why; i++)
		if (argv[i][0] == '-' && argv[i][1] != '\0') { /* a lone "-" is no option */
			why = "unknown option";
			what = argv[i];
		}
	if (!why && argc < 2)
		why = "missing PROFILE";
	else if (!why && argc > 2) {
		why = "unexpected argument";
		what = argv[2];
	}
	if (why) {
		if (what)
			fprintf(stderr, "dmreplay model: %s '%s' (see dmreplay model --help)\n",
				why, what);
		else
			fprintf(stderr, "dmreplay model: %s (see dmreplay model --help)\n", why);
		return 2;
	}
	dmr_model_t m;
	dmr_err_t err;
	if (dmr_model_load(argv[1], &m, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay model: error: %s\n", err.msg);
		return 2;
	}
	dmr_model_print(&m, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "run") == 0)
		return dmr_replay_main(argc - 1, argv + 1);
	if (strcmp(cmd, "kv") == 0)
		return dmr_kv_main(argc - 1, argv + 1);
	if (strcmp(cmd, "sweep") == 0)
		return dmr_sweep_main(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return dmr_report_main(argc - 1, argv + 1);
	if (strcmp(cmd, "doctor") == 0)
		return dmr_doctor_main(argc - 1, argv + 1);
	if (strcmp(cmd, "model") == 0)
		return model_main(argc - 1, argv + 1);
	if (strcmp(cmd, "bench") == 0 && argc > 2 && strcmp(argv[2], "transfer") == 0) {
		argv[2] = "bench"; /* `bench transfer ...` = `kv bench ...` (issue #5) */
		return dmr_kv_main(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "bench") == 0)
		return dmr_bench_main(argc - 1, argv + 1);
	if (strcmp(cmd, "calibrate") == 0)
		return dmr_calibrate_main(argc - 1, argv + 1);
	if (strcmp(cmd, "fidelity") == 0)
		return dmr_fidelity_main(argc - 1, argv + 1);
	if (strcmp(cmd, "replay-record") == 0)
		return dmr_recsim_main(argc - 1, argv + 1);
	if (strcmp(cmd, "mn") == 0)
		return dmr_roles_mn_main(argc - 1, argv + 1);
	if (strcmp(cmd, "cn") == 0)
		return dmr_roles_cn_main(argc - 1, argv + 1);
	if (strcmp(cmd, "gen") == 0) {
		if (argc < 3 || strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) {
			/* gen's own usage: its workloads (each with --help) */
			fprintf(argc < 3 ? stderr : stdout,
				"usage: dmreplay gen WORKLOAD [options] -o FILE\n"
				"Generate a trace (traces/FORMAT.md). WORKLOAD: tpcc, smallbank, "
				"ycsb or tatp;\n"
				"`dmreplay gen WORKLOAD --help` lists its options.\n");
			return argc < 3 ? 2 : 0;
		}
		if (strcmp(argv[2], "tpcc") == 0)
			return dmr_gen_tpcc_main(argc - 2, argv + 2);
		if (strcmp(argv[2], "smallbank") == 0)
			return dmr_gen_smallbank_main(argc - 2, argv + 2);
		if (strcmp(argv[2], "ycsb") == 0)
			return dmr_gen_ycsb_main(argc - 2, argv + 2);
		if (strcmp(argv[2], "tatp") == 0)
			return dmr_gen_tatp_main(argc - 2, argv + 2);
		fprintf(stderr,
			"dmreplay gen: unknown workload '%s' (tpcc, smallbank, ycsb, tatp)\n",
			argv[2]);
		return 2;
	}
	fprintf(stderr, "dmreplay: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
