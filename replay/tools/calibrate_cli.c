/*
 * replay/tools/calibrate_cli.c - `dmreplay calibrate` (calibrate.h): the
 * options (checked, -o included, before anything is measured), then
 * measure (calibrate_measure.c, calibrate_engine.c), fit (calibrate_fit.c),
 * print and check (calibrate_check.c), and write the profile
 * (calibrate_profile.c): -o FILE is replaced atomically (core/base/fs.h)
 * only by a profile that loads and passed; otherwise FILE is left as it was
 * and the new profile is FILE.partial.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/timeps.h"
#include "calibrate_impl.h"
#include "tools_util.h"

static void cal_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay calibrate --backend B [--profile P | --device D] [-o PROFILE.json]\n\n"
	    "Measures latency vs size, 64 KiB bandwidth, 8 B message rate vs depth, atomic\n"
	    "rates, doorbell and poll costs through the backend interface, and writes a\n"
	    "profile that dmr_model_load accepts (docs/CALIBRATION.md). On sim, prints the\n"
	    "measurements beside the profile's values and fails beyond the tolerance.\n\n"
	    "  --backend B       sim (default), verbs (shm is refused: no link to calibrate)\n"
	    "  --profile P       sim: profile to run (default cx6dx-100g)\n"
	    "  --mtu M           sim: path MTU override\n"
	    "  --device D        verbs: device name or index; --port N, --gid-index G\n"
	    "  --base P          profile the unmeasurable parameters are copied from\n"
	    "                    (default: --profile on sim, cx6dx-100g otherwise)\n"
	    "  -o, --output F    write the profile to F (always checked with dmr_model_load)\n"
	    "  --name NAME       profile name (default calibrated-BACKEND-PROFILE|DEVICE)\n"
	    "  --quick           fewer iterations and repetitions (rxe: well under 2 min)\n"
	    "  --progress        the progress line (phases done, ETA) on stderr also when\n"
	    "                    stderr is not a terminal (on a terminal it is shown anyway)\n"
	    "  --reps R          repetitions of every measurement (default 5, quick 3)\n"
	    "  --lat-iters N     iterations per latency point (default 1000, quick 200)\n"
	    "  --bw-iters N      iterations per bandwidth run (default 5000, quick 1000)\n"
	    "  --rate-iters N    iterations per 8 B rate run (default 20000, quick 4000)\n"
	    "  --atomic-iters N  atomics per QP per run (default 20000, quick 4000)\n"
	    "  --qps Q           QPs of the atomic runs (1..64, default 4)\n"
	    "  --batch K         WRs of the doorbell batch (2..64, default 16)\n"
	    "  --max-run-s S     shm/verbs: stop posting S s after a run's first post and\n"
	    "                    finish with what is posted (default 1, quick 0.5; 0 = off)\n"
	    "  --tolerance PCT   sim: allowed relative difference (default 2)\n"
	    "  --host-cpus N     verbs, software NIC: CPUs its work shares with the workers\n"
	    "                    (default: the online CPUs when the device is a software\n"
	    "                    NIC such as rxe, else 0; the sim uses its profile's)\n\n"
	    "-o FILE is written beside FILE and renamed over it only when the profile\n"
	    "loads and the sim's self-check passes; otherwise FILE is left as it was and\n"
	    "the new profile kept as FILE.partial.\n\n"
	    "Exit status: 0 done, 1 a run or a check failed or the profile does not load,\n"
	    "2 bad options (checked, -o included, before anything is measured).\n");
}

/* -o FILE, before measuring: a path, not a directory, in a directory where
 * a file can be created (a probe file is created and removed). 0, or -1
 * with the reason printed. */
static int check_output(const char *out)
{
	struct stat sb;
	const char *why = NULL;
	char dir[4096];
	if (!out[0])
		why = "empty path";
	else if (strcmp(out, "-") == 0)
		why = "a profile is written to a file (standard output carries the report): "
		      "give a path";
	else if (strlen(out) >= sizeof(dir) - 32)
		why = "path too long";
	else if (out[strlen(out) - 1] == '/')
		why = "ends with '/', a directory's name: give a file's path";
	else if (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode))
		why = "is a directory";
	else if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode))
		why = "exists and is not a regular file";
	if (why) {
		fprintf(stderr, "dmreplay calibrate: option -o: cannot write '%s': %s\n", out, why);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", out);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	char probe[4200];
	snprintf(probe, sizeof(probe), "%s/.dmr-calibrate-probe-XXXXXX", slash ? dir : ".");
	int fd = mkstemp(probe);
	if (fd < 0) {
		fprintf(stderr,
			"dmreplay calibrate: option -o: cannot write %s: cannot create a "
			"file in %s: %s\n",
			out, slash ? dir : ".", strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

int dmr_calibrate_main(int argc, char **argv)
{
	enum {
		O_BASE = DMR_BENCH_O_NEXT,
		O_NAME,
		O_QUICK,
		O_REPS,
		O_LAT,
		O_BW,
		O_RATE,
		O_ATOM,
		O_QPS,
		O_BATCH,
		O_TOL,
		O_MAXRUN,
		O_HOSTCPUS,
		O_PROGRESS,
		O_HELP
	};
	static const struct option opts[] = {
	    DMR_BENCH_TARGET_OPTIONS,
	    {"base", required_argument, NULL, O_BASE},
	    {"output", required_argument, NULL, 'o'},
	    {"name", required_argument, NULL, O_NAME},
	    {"quick", no_argument, NULL, O_QUICK},
	    {"progress", no_argument, NULL, O_PROGRESS},
	    {"reps", required_argument, NULL, O_REPS},
	    {"lat-iters", required_argument, NULL, O_LAT},
	    {"bw-iters", required_argument, NULL, O_BW},
	    {"rate-iters", required_argument, NULL, O_RATE},
	    {"atomic-iters", required_argument, NULL, O_ATOM},
	    {"qps", required_argument, NULL, O_QPS},
	    {"batch", required_argument, NULL, O_BATCH},
	    {"tolerance", required_argument, NULL, O_TOL},
	    {"max-run-s", required_argument, NULL, O_MAXRUN},
	    {"host-cpus", required_argument, NULL, O_HOSTCPUS},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	cal_t *c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "dmreplay calibrate: out of memory\n");
		return 1;
	}
	cal_opts_t *o = &c->o;
	dmr_bench_topts_t to;
	dmr_bench_topts_init(&to, 0);
	o->tol_pct = 2;
	uint64_t reps = 0, lat = 0, bw = 0, rate = 0, atom = 0, qps = 4, batch = 16, hcpus = 0;
	int have_hcpus = 0;
	/* counts: K/M/G/T suffixes, as every count option (README) */
	const dmr_tools_num_t nums[] = {
	    {O_REPS, "--reps", 1, 100, DMR_OPT_SIZE, &reps, NULL},
	    {O_LAT, "--lat-iters", 5, 1000000, DMR_OPT_SIZE, &lat, NULL},
	    {O_BW, "--bw-iters", 20, 1000000, DMR_OPT_SIZE, &bw, NULL},
	    {O_RATE, "--rate-iters", 100, 10000000, DMR_OPT_SIZE, &rate, NULL},
	    {O_ATOM, "--atomic-iters", 100, 10000000, DMR_OPT_SIZE, &atom, NULL},
	    {O_QPS, "--qps", 1, 64, DMR_OPT_SIZE, &qps, NULL},
	    {O_BATCH, "--batch", 2, 64, DMR_OPT_SIZE, &batch, NULL},
	    {O_HOSTCPUS, "--host-cpus", 0, 1024, DMR_OPT_SIZE, &hcpus, &have_hcpus},
	};
	double max_s = -1;
	int rc = 2, ch;
	dmr_status_t st;
	dmr_err_t err;
	json_t *base_root = NULL, *checks_json = NULL, *prof = NULL;
	dmr_afile_t pf; /* the profile written */
	memset(&pf, 0, sizeof(pf));
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		st = DMR_OK;
		switch (ch) {
		case O_BASE:
			o->base = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_NAME:
			if (!*optarg || strlen(optarg) >= 64 || strpbrk(optarg, ",\"\r\n")) {
				fprintf(stderr,
					"dmreplay calibrate: option --name: 1..63 characters, "
					"no comma, quote or line break (the profile's "
					"name is a field of summary.csv)\n");
				goto out;
			}
			o->name = optarg;
			break;
		case O_QUICK:
			o->quick = 1;
			break;
		case O_PROGRESS:
			o->progress = 1;
			break;
		case O_MAXRUN:
			st = dmr_opt_double("--max-run-s", optarg, 0, 3600, 0, &max_s, &err);
			break;
		case O_TOL:
			st = dmr_opt_double("--tolerance", optarg, 0, 100, DMR_OPT_LO_OPEN,
					    &o->tol_pct, &err);
			break;
		case 'h':
		case O_HELP:
			cal_usage(stdout);
			rc = 0;
			goto out;
		default:
			if (dmr_bench_opt_rest("calibrate", ch, argv, &to, nums,
					       sizeof(nums) / sizeof(nums[0])) < 0)
				goto out;
			break;
		}
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
			goto out;
		}
	}
	o->t = to.t;
	o->qps = (uint32_t)qps;
	o->batch = (uint32_t)batch;
	o->host_cpus = have_hcpus ? (int)hcpus : -1; /* -1: detect */
	if (optind < argc) {
		fprintf(stderr, "dmreplay calibrate: unexpected argument '%s'\n", argv[optind]);
		goto out;
	}
	if (dmr_bench_topts_check("calibrate", &to,
				  "; use --base to choose the profile copied from") != 0)
		goto out;
	int sim = strcmp(o->t.backend, "sim") == 0;
	if (strcmp(o->t.backend, "shm") == 0) {
		/* shm is the CPU copying memory: no link, wire or NIC; its rates
		 * (hundreds of Gb/s) exceed any copied link and the profile
		 * would not load (docs/CALIBRATION.md) */
		fprintf(stderr,
			"dmreplay calibrate: option --backend: shm has no link or NIC to "
			"calibrate (it is the CPU copying memory); use --backend verbs on an "
			"RDMA device (a software NIC: scripts/rxe-vm), or --backend sim to "
			"check a profile\n");
		goto out;
	}
	if (sim && o->host_cpus >= 0) {
		fprintf(stderr,
			"dmreplay calibrate: option --host-cpus: the sim runs its profile's "
			"host_cpus; to calibrate with another, copy the profile and set "
			"host_cpus in it\n");
		goto out;
	}
	if (o->out && check_output(o->out) != 0)
		goto out;
	if (sim && !o->t.profile)
		o->t.profile = "cx6dx-100g";
	if (!o->base)
		o->base = sim ? o->t.profile : "cx6dx-100g";
	o->reps = reps ? (uint32_t)reps : o->quick ? 3 : 5;
	o->lat_iters = lat ? lat : o->quick ? 200 : 1000;
	o->bw_iters = bw ? bw : o->quick ? 1000 : 5000;
	o->rate_iters = rate ? rate : o->quick ? 4000 : 20000;
	o->atomic_iters = atom ? atom : o->quick ? 4000 : 20000;
	o->poll_reps = o->quick ? 200 : 1000;
	o->max_s = max_s >= 0 ? max_s : o->quick ? 0.5 : 1.0;
	o->db_reps = o->quick ? 50 : 200;

	dmr_model_t pm;
	if (sim) {
		if (dmr_model_load(o->t.profile, &pm, &err) != DMR_OK) {
			fprintf(stderr, "dmreplay calibrate: option --profile: %s\n", err.msg);
			goto out;
		}
		snprintf(c->profile_name, sizeof(c->profile_name), "%s", pm.name);
		c->profile_mtu = pm.mtu;
	}
	dmr_model_t bm;
	if (dmr_model_load(o->base, &bm, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: option --base: %s\n", err.msg);
		goto out;
	}
	json_error_t jerr;
	base_root = json_load_file(bm.path, 0, &jerr);
	if (!base_root) {
		fprintf(stderr, "dmreplay calibrate: option --base: %s:%d: %s\n", bm.path,
			jerr.line, jerr.text);
		goto out;
	}
	rc = 1;
	for (int k = 0; k < CAL_NSIZES; k++)
		c->sizes[k] = 8u << k;
	uint64_t mr = (uint64_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	if ((uint64_t)o->qps * 4096 > mr)
		mr = (uint64_t)o->qps * 4096;
	size_t local = (size_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	{
		/* the MN region and one local buffer per QP, before allocating
		 * them (issue #15 D2, as bench) */
		char what[48];
		snprintf(what, sizeof(what), "--qps %u", o->qps);
		if (dmr_opt_fits_memory(what, mr + (uint64_t)o->qps * local,
					"MN region and a local buffer per QP", &err) != DMR_OK) {
			fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
			rc = 2;
			goto out;
		}
	}
	st = dmr_bench_session_open(&c->s, &o->t, o->qps, mr, local, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	time_t now = time(NULL);
	char date[32];
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("dmreplay calibrate: %s, %u repetitions%s, base profile %s, %s\n", c->s.desc,
	       o->reps, o->quick ? " (quick)" : "", bm.name, date);
	fflush(stdout);
	st = dmr_cal_measure(c, sim, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	json_t *bparams = json_object_get(base_root, "params");
	if ((st = dmr_cal_fit(c, &bm, bparams, sim, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: fitting host_*: %s\n", err.msg);
		goto out;
	}
	dmr_cal_print_results(c);
	printf("Measurements took %.1f s wall.\n", c->wall_s);
	int fails = dmr_cal_self_check(c, &bm, sim, &checks_json);

	/* the profile goes to a temporary file (beside FILE with -o, else in
	 * /tmp) and is loaded back; -o FILE is then replaced by it (renamed)
	 * only when it loads and the run passed, otherwise FILE is left as it
	 * was and the new profile is FILE.partial */
	if ((st = dmr_cal_profile_json(c, &bm, bparams, checks_json, &prof, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: %s\n", err.msg);
		goto out;
	}
	if ((st = dmr_afile_open(&pf, o->out ? o->out : "/tmp/dmr-calibrate.json", &err)) !=
	    DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: cannot create a temporary file: %s\n",
			err.msg);
		goto out;
	}
	if (json_dumpf(prof, pf.f, CAL_JSON_FLAGS) != 0 || fflush(pf.f) != 0) {
		fprintf(stderr, "dmreplay calibrate: cannot write %s: %s\n", pf.tmp,
			strerror(errno));
		goto out;
	}
	dmr_model_t wm;
	/* as a path: "-o out.json" makes the temporary ".out.json.PID.N.tmp",
	 * which without a '/' dmr_model_load takes for a profile's name */
	char tpath[PATH_MAX + 2];
	snprintf(tpath, sizeof(tpath), "%s%s", strchr(pf.tmp, '/') ? "" : "./", pf.tmp);
	int loads = dmr_model_load(tpath, &wm, &err) == DMR_OK;
	if (!loads)
		fprintf(stderr, "dmreplay calibrate: the profile written does not load: %s\n",
			err.msg);
	int keep = o->out && loads && !fails;
	if (keep && (st = dmr_afile_commit(&pf, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay calibrate: cannot write the profile: %s\n", err.msg);
		goto out;
	}
	dmr_afile_abort(&pf); /* the temporary file, unless renamed over FILE */
	if (o->out && !keep) {
		char part[PATH_MAX + 16];
		snprintf(part, sizeof(part), "%s.partial", o->out);
		char *text = json_dumps(prof, CAL_JSON_FLAGS);
		st = text ? dmr_file_write_atomic(part, text, strlen(text), &err)
			  : dmr_err_set(&err, DMR_ERR_NOMEM, "out of memory");
		free(text);
		if (st == DMR_OK)
			fprintf(stderr,
				"dmreplay calibrate: %s left as it was (%s); the new profile is in "
				"%s\n",
				o->out, loads ? "self-check FAIL" : "it does not load", part);
		else
			fprintf(stderr,
				"dmreplay calibrate: %s left as it was; cannot keep the new "
				"profile: %s\n",
				o->out, err.msg);
		goto out;
	}
	if (!loads)
		goto out;
	double idle_ns = dmr_ps_to_ns(dmr_model_read_rtt_ps(&wm, 64));
	if (o->out) {
		printf("wrote %s (profile %s; loads: modelled idle 64 B READ %.1f ns, measured "
		       "%.1f ns)\n",
		       o->out, wm.name, idle_ns, c->lat[0][3].value);
		/* an earlier failed run's FILE.partial is not this profile */
		char part[PATH_MAX + 16];
		snprintf(part, sizeof(part), "%s.partial", o->out);
		if (unlink(part) == 0)
			printf("removed %s (an earlier run's profile that failed)\n", part);
		/* --profile X takes X as a path only with a '/' or ending .json
		 * (models/model.h); else a name in the models directories */
		size_t n = strlen(o->out);
		if (!strchr(o->out, '/') && !(n > 5 && strcmp(o->out + n - 5, ".json") == 0))
			printf("give it as --profile ./%s: a bare name without .json is looked up "
			       "in the models directories\n",
			       o->out);
	} else
		printf("profile not written (no -o); it loads: modelled idle 64 B READ %.1f ns\n",
		       idle_ns);
	rc = fails ? 1 : 0;
out:
	dmr_afile_abort(&pf);
	json_decref(prof);
	json_decref(base_root);
	json_decref(checks_json);
	dmr_bench_session_close(&c->s);
	dmr_cal_free(c);
	return rc;
}
