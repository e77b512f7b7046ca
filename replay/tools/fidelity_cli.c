/*
 * replay/tools/fidelity_cli.c - `dmreplay fidelity` (fidelity.h): the
 * options, the checks made before anything runs (the --traces files, the
 * profile, the device), and SIGINT/SIGTERM as a stop request
 * (core/base/sig.h) around the runs (fidelity_run.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../core/base/sig.h"
#include "../../models/model.h"
#include "../../traces/trace.h"
#include "fidelity_impl.h"
#include "tools_util.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay fidelity --profile P --device D [options]\n"
	    "Replay a set of traces on the verbs backend on device D (measured) and on\n"
	    "the sim with profile P (predicted; P should be measured on D), same shape\n"
	    "and seed, and print measured vs predicted committed throughput and p50/p99\n"
	    "latency with the relative error, PASS/FAIL against %.0f %% (throughput) and\n"
	    "%.0f %% (p50). Writes DIR/fidelity.csv and DIR/fidelity.md.\n\n"
	    "  --profile P       hardware profile (name or path), e.g. models/rxe-qemu.json\n"
	    "  --device D        RDMA device name or index (e.g. rxe0)\n"
	    "  --port N          port (default 1)\n"
	    "  --gid-index N     GID index (default: the RoCEv2 GID of this node's IPv4)\n"
	    "  --out DIR         results (default out/fidelity): traces/, runs/, the table\n"
	    "  --traces F[,F..]  replay these traces instead of the generated set\n"
	    "                    (repeatable); default: TPC-C uniform and extreme\n"
	    "                    (2 warehouses), SmallBank (10000 accounts), YCSB-A\n"
	    "                    (traces/ycsb/workloada), --txns each, generated in DIR/traces\n"
	    "  --txns N          transactions per generated trace (default 2000)\n"
	    "  --cns N --threads N --coros N   shape (default 1 x 2 x 2)\n"
	    "  --seed S          generator and replay seed (default 1)\n"
	    "  --rounds R        measure each trace R times (1..15, default 3), the traces in\n"
	    "                    turn, reversed every other round; the table has the medians,\n"
	    "                    the spread and the host's load (docs/fidelity.md)\n"
	    "  --quiet           only the table\n"
	    "  --help\n\n"
	    "The table goes to DIR/fidelity.{csv,md} only when every replay ran to the\n"
	    "end; otherwise (a run failed, or SIGINT/SIGTERM, which stops after the\n"
	    "current replay with exit 130) to DIR/fidelity.partial.{csv,md}, leaving a\n"
	    "finished table of an earlier run as it was. --traces files are checked\n"
	    "(readable trace files) before anything is opened.\n\n"
	    "Exit status: 0 every row PASS, 1 some row FAIL or a run failed, 2 bad\n"
	    "options or input, 3 no device (none given, or it cannot be opened),\n"
	    "130 interrupted (SIGINT/SIGTERM).\n",
	    100 * DMR_FID_TOL_TPS, 100 * DMR_FID_TOL_P50);
}

/* A --traces file: a readable regular file that starts with a trace header.
 * 0, or -1 with the reason on stderr. Nothing is left open. */
static int check_trace(const char *path)
{
	struct stat sb;
	if (stat(path, &sb) < 0) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: not a regular file\n",
			path);
		return -1;
	}
	dmr_trace_reader_t *tr = NULL;
	dmr_err_t err = {{0}};
	if (dmr_trace_open(path, &tr, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay fidelity: error: --traces %s: not a trace: %s\n", path,
			err.msg);
		return -1;
	}
	dmr_trace_close(tr);
	return 0;
}

int dmr_fidelity_main(int argc, char **argv)
{
	static const struct option opts[] = {{"profile", required_argument, 0, 'p'},
					     {"device", required_argument, 0, 'v'},
					     {"port", required_argument, 0, 'P'},
					     {"gid-index", required_argument, 0, 'G'},
					     {"out", required_argument, 0, 'o'},
					     {"traces", required_argument, 0, 't'},
					     {"txns", required_argument, 0, 'n'},
					     {"cns", required_argument, 0, 'c'},
					     {"threads", required_argument, 0, 'T'},
					     {"coros", required_argument, 0, 'C'},
					     {"seed", required_argument, 0, 's'},
					     {"quiet", no_argument, 0, 'q'},
					     {"rounds", required_argument, 0, 'R'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	/* the defaults; the options fill in the rest */
	dmr_fid_cfg_t cfg = {.out = "out/fidelity",
			     .txns = 2000,
			     .cns = 1,
			     .threads = 2,
			     .coros = 2,
			     .seed = 1,
			     .rounds = 3};
	uint64_t port = 1, gid = 0;
	int have_gid = 0;
	const dmr_tools_num_t nums[] = {
	    {'P', "--port", 1, 255, 0, &port, NULL},
	    {'G', "--gid-index", 0, 255, 0, &gid, &have_gid},
	    {'n', "--txns", 1, 100000000, 0, &cfg.txns, NULL},
	    {'c', "--cns", 1, 1024, 0, &cfg.cns, NULL},
	    {'T', "--threads", 1, 1024, 0, &cfg.threads, NULL},
	    {'C', "--coros", 1, 1024, 0, &cfg.coros, NULL},
	    {'s', "--seed", 0, UINT64_MAX, 0, &cfg.seed, NULL},
	    {'R', "--rounds", 1, FID_MAX_ROUNDS, 0, &cfg.rounds, NULL},
	};
	const char *profile = NULL, *device = NULL;
	char *tlist[FID_MAX_TRACES];
	size_t ntr = 0;
	char *tdup[FID_MAX_TRACES];
	size_t ndup = 0;
	int ch, rc = DMR_FID_EXIT_USAGE;
	optind = 0;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int r = dmr_tools_num("fidelity", nums, sizeof(nums) / sizeof(nums[0]), ch, optarg);
		if (r < 0)
			goto done;
		if (r > 0)
			continue;
		switch (ch) {
		case 'p':
			profile = optarg;
			break;
		case 'v':
			device = optarg;
			break;
		case 'o':
			cfg.out = optarg;
			break;
		case 'q':
			cfg.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto done;
		case 't': {
			if (ndup == FID_MAX_TRACES) {
				fprintf(stderr, "dmreplay fidelity: too many --traces options\n");
				goto done;
			}
			char *d = strdup(optarg), *save = NULL;
			if (!d)
				goto done;
			tdup[ndup++] = d;
			size_t n0 = ntr;
			for (char *tok = strtok_r(d, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (ntr == FID_MAX_TRACES) {
					fprintf(stderr, "dmreplay fidelity: at most %d traces\n",
						FID_MAX_TRACES);
					goto done;
				}
				tlist[ntr++] = tok;
			}
			if (ntr == n0 || !*optarg) {
				fprintf(stderr,
					"dmreplay fidelity: error: --traces '%s' names no trace\n",
					optarg);
				goto done;
			}
			break;
		}
		default: {
			dmr_err_t oerr;
			dmr_opt_refused("fidelity", ch, argv, opts, &oerr);
			fprintf(stderr, "dmreplay fidelity: %s\n", oerr.msg);
			goto done;
		}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay fidelity: unexpected argument '%s'\n", argv[optind]);
		goto done;
	}
	if (!profile) {
		fprintf(stderr, "dmreplay fidelity: --profile P is required (the profile measured "
				"on the device, e.g. models/rxe-qemu.json)\n");
		goto done;
	}
	/* every named trace must be a trace before anything is opened or made */
	for (size_t i = 0; i < ntr; i++)
		if (check_trace(tlist[i]) < 0)
			goto done;
	/* test hook (tests/test_fidelity.c, no RDMA): "measure" on the sim too */
	const char *meas_be = getenv("DMR_FIDELITY_TEST_MEASURE_SIM") ? "sim" : "verbs";
	if (!strcmp(meas_be, "sim") && (!device || !*device))
		device = "sim";
	if (!device || !*device) {
		fprintf(
		    stderr,
		    "dmreplay fidelity: error: no device: fidelity compares the sim with "
		    "a real device, give it with --device D (e.g. rxe0; on a machine without "
		    "RDMA run it in the SoftRoCE VM: scripts/rxe-vm run -- scripts/fidelity-rxe "
		    "build)\n");
		rc = DMR_FID_EXIT_NODEV;
		goto done;
	}
	/* the profile must load before anything is measured */
	{
		dmr_model_t m;
		dmr_err_t merr = {{0}};
		if (dmr_model_load(profile, &m, &merr) != DMR_OK) {
			fprintf(stderr, "dmreplay fidelity: error: %s\n", merr.msg);
			goto done;
		}
	}
	if (!strcmp(meas_be, "verbs")) {
		dmr_err_t derr = {{0}};
		dmr_status_t st = dmr_tools_verbs_probe(device, (int)port, have_gid ? (int)gid : -1,
							1u << 20, NULL, &derr);
		if (st != DMR_OK) {
			fprintf(stderr,
				"dmreplay fidelity: error: device '%s' cannot be used: %s\n",
				device, derr.msg);
			rc = st == DMR_ERR_NODEV ? DMR_FID_EXIT_NODEV : DMR_FID_EXIT_FAIL;
			goto done;
		}
	}
	/* SIGINT/SIGTERM from here on: stop after the current replay (or trace
	 * generation), write what was gathered as partial, exit 130 */
	cfg.profile = profile;
	cfg.device = device;
	cfg.meas_be = meas_be;
	cfg.port = (int)port;
	cfg.gid = have_gid ? (int)gid : -1;
	cfg.traces = tlist;
	cfg.ntraces = ntr;
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	rc = dmr_fid_run(&cfg);
	dmr_sig_restore(&saved);
done:
	for (size_t i = 0; i < ndup; i++)
		free(tdup[i]);
	return rc;
}
