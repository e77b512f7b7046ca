/*
 * replay/report/report_cli.c - `dmreplay report SUMMARY.csv`: options
 * (values through core/base/opt.h), compute, write, print report.md
 * (contract in replay/report.h; docs/SWEEPS.md).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "report_impl.h"

static void report_usage(FILE *f)
{
	fputs("usage: dmreplay report SUMMARY.csv [options]\n"
	      "Per cell the median of each metric over its repetitions with a 95 %\n"
	      "percentile-bootstrap interval, the ratio to a baseline cell with its interval;\n"
	      "writes DIR/report.md, DIR/report.csv and DIR/plots/*.png|svg (gnuplot).\n\n"
	      "  --baseline K=V[,K=V]  baseline cell (default loop=none when there is a loop\n"
	      "                        axis; '' for no ratios)\n"
	      "  --by KEY              group and plot by this axis (default regime)\n"
	      "  --metrics A,B,...     columns (default committed_tps,abort_rate,\n"
	      "                        atomics_per_commit)\n"
	      "  --out DIR             output directory (default SUMMARY's directory/report)\n"
	      "  --resamples N         bootstrap resamples (default 1000)\n"
	      "  --seed S              bootstrap seed (default 1)\n"
	      "  --no-plots            skip gnuplot\n"
	      "  --quiet               do not print the report\n"
	      "  --help\n"
	      "Exit status: 0 ok, 2 bad input (empty or corrupt SUMMARY, a non-numeric\n"
	      "metric, a baseline that matches no cell), 1 other failure.\n",
	      f);
}

int dmr_report_main(int argc, char **argv)
{
	enum { O_BASE = 256, O_BY, O_MET, O_OUT, O_RES, O_SEED, O_NOPL, O_QUIET, O_HELP };
	static const struct option opts[] = {
	    {"baseline", required_argument, 0, O_BASE}, {"by", required_argument, 0, O_BY},
	    {"metrics", required_argument, 0, O_MET},	{"out", required_argument, 0, O_OUT},
	    {"resamples", required_argument, 0, O_RES}, {"seed", required_argument, 0, O_SEED},
	    {"no-plots", no_argument, 0, O_NOPL},	{"quiet", no_argument, 0, O_QUIET},
	    {"help", no_argument, 0, O_HELP},		{0, 0, 0, 0}};
	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	dmr_err_t err = {{0}};
	dmr_status_t st = DMR_OK;
	int ch;
	optind = 0;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case O_BASE:
			cfg.baseline = optarg;
			break;
		case O_BY:
			cfg.by = optarg;
			break;
		case O_MET:
			cfg.metrics = optarg;
			break;
		case O_OUT:
			cfg.out_dir = optarg;
			break;
		case O_NOPL:
			cfg.plots = 0;
			break;
		case O_QUIET:
			cfg.quiet = 1;
			break;
		case 'h':
		case O_HELP:
			report_usage(stdout);
			return 0;
		case O_RES:
			st = dmr_opt_u32("--resamples", optarg, 1, 10000000, 0, &cfg.resamples,
					 &err);
			break;
		case O_SEED:
			st = dmr_opt_u64("--seed", optarg, 0, UINT64_MAX, 0, &cfg.seed, &err);
			break;
		default:
			dmr_opt_refused("report", ch, argv, opts, &err);
			fprintf(stderr, "dmreplay report: %s\n", err.msg);
			return 2;
		}
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay report: %s\n", err.msg);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dmreplay report: %s\n",
			optind >= argc ? "missing SUMMARY.csv" : "more than one SUMMARY given");
		report_usage(stderr);
		return 2;
	}
	cfg.summary = argv[optind];
	dmr_report_t *r;
	st = dmr_report_compute(&cfg, &r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay report: error: %s\n", err.msg);
		return st == DMR_ERR_NOMEM ? 1 : 2;
	}
	/* an --out that cannot be a directory is bad input (exit 2, as run,
	 * sweep and gen); a failed write inside it is a failed run (exit 1) */
	if ((st = dmr_mkdir_p(r->out_dir, DMR_FS_PROBE, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay report: error: --out %s\n", err.msg);
		dmr_report_free(r);
		return 2;
	}
	st = dmr_report_write(r, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay report: error: %s\n", err.msg);
		dmr_report_free(r);
		return 1;
	}
	if (!cfg.quiet) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/report.md", r->out_dir);
		FILE *f = fopen(path, "r");
		char buf[4096];
		size_t n;
		while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		if (f)
			fclose(f);
		printf("\nreport: %s/report.md, %s/report.csv%s%s%s\n", r->out_dir, r->out_dir,
		       cfg.plots ? ", " : "", cfg.plots ? r->out_dir : "",
		       cfg.plots ? "/plots/" : "");
	}
	dmr_report_free(r);
	return 0;
}
