/* traces/gencli.c - the command line shared by the trace generators (gen.h):
 * option values, the common options, the file sink and the driver. */
#include "gen.h"

#include <sys/stat.h>

#include "../core/base/fs.h"
#include "../core/base/opt.h"
#include "../core/base/progress.h"
#include "../core/base/sig.h"

static int parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		     unsigned flags, uint64_t *v_p)
{
	char name[64];
	dmr_err_t err;
	snprintf(name, sizeof(name), "--%s", opt);
	if (dmr_opt_u64(name, s, min, max, flags, v_p, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay gen %s: %s\n", prog, err.msg);
		return -1;
	}
	return 0;
}

int dmr_gen_parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		      uint64_t *v_p)
{
	return parse_u64(prog, opt, s, min, max, 0, v_p);
}

int dmr_gen_parse_count(const char *prog, const char *opt, const char *s, uint64_t min,
			uint64_t max, uint64_t *v_p)
{
	return parse_u64(prog, opt, s, min, max, DMR_OPT_SIZE, v_p);
}

int dmr_gen_parse_double(const char *prog, const char *opt, const char *s, double min, double max,
			 double *v_p)
{
	char name[64];
	dmr_err_t err;
	snprintf(name, sizeof(name), "--%s", opt);
	if (dmr_opt_double(name, s, min, max, 0, v_p, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay gen %s: %s\n", prog, err.msg);
		return -1;
	}
	return 0;
}

int dmr_gen_common_opt(const char *prog, int c, const char *arg, dmr_gen_common_t *cm)
{
	dmr_err_t err;

	switch (c) {
	case 'n': /* a count: K/M/G/T as every count and size (core/base/opt.h) */
		if (dmr_opt_u64("--txns", arg, 1, UINT64_C(1) << 40, DMR_OPT_SIZE, &cm->txns,
				&err) != DMR_OK) {
			fprintf(stderr, "dmreplay gen %s: %s\n", prog, err.msg);
			return -1;
		}
		cm->txns_set = 1;
		return 1;
	case 's':
		return dmr_gen_parse_u64(prog, "seed", arg, 0, UINT32_MAX, &cm->seed) != 0 ? -1 : 1;
	case 'o':
		cm->out = arg;
		return 1;
	case 'P':
		cm->progress = 1;
		return 1;
	case 'r':
		if (dmr_regime_parse(arg, &cm->regime, &err) != DMR_OK) {
			fprintf(stderr, "dmreplay gen %s: option --regime: %s\n", prog, err.msg);
			return -1;
		}
		cm->regime_set = 1;
		return 1;
	default:
		return 0;
	}
}

int dmr_gen_out_is_input(const char *prog, const char *out, const char *opt, const char *in)
{
	struct stat si, so;

	if (!out || !in || strcmp(out, "-") == 0 || stat(in, &si) != 0 || stat(out, &so) != 0 ||
	    si.st_dev != so.st_dev || si.st_ino != so.st_ino)
		return 0;
	fprintf(stderr, "%s: -o %s is the input file (%s %s): give another output path\n", prog,
		out, opt, in);
	return 2;
}

/* The file sink with the progress line. */
typedef struct gen_sink {
	dmr_trace_writer_t *w;
	const char *path;
	dmr_progress_t prog;
	uint64_t n;
} gen_sink_t;

static dmr_status_t emit_progress(void *arg, const dmr_trace_txn_t *txn, dmr_err_t *err)
{
	gen_sink_t *s = arg;
	/* SIGINT/SIGTERM (dmr_sig_install in dmr_gen_write_file): stop; the
	 * caller abandons the file (its .tmp removed) and exits 130 */
	int sig = dmr_sig_caught();
	if (sig)
		return dmr_err_set(
		    err, DMR_ERR_INTERRUPTED,
		    "interrupted by signal %d after %llu transactions: %s not written", sig,
		    (unsigned long long)s->n, s->path);
	dmr_progress_update(&s->prog, ++s->n);
	return dmr_trace_write(s->w, txn, err);
}

int dmr_gen_write_file(const char *prog, const char *path, const dmr_trace_hdr_t *hdr,
		       dmr_gen_run_func_t run, void *ctx, const dmr_gen_common_t *cm)
{
	dmr_trace_writer_t *w = NULL;
	dmr_err_t err = {{0}};
	dmr_status_t st;
	gen_sink_t sink = {0};
	dmr_sig_saved_t saved;

	dmr_sig_install(&saved);
	st = dmr_trace_create(path, hdr, &w, &err);
	if (st != DMR_OK)
		goto fail;
	sink.w = w;
	sink.path = path;
	dmr_progress_init(&sink.prog,
			  !cm || cm->quiet ? DMR_PROGRESS_OFF
			  : cm->progress   ? DMR_PROGRESS_ON
					   : DMR_PROGRESS_AUTO,
			  prog, "txns", cm && cm->txns_set ? cm->txns : 0);
	st = run(ctx, emit_progress, &sink, &err);
	dmr_progress_end(&sink.prog, sink.n);
	if (st != DMR_OK)
		goto fail_abandon;
	st = dmr_trace_finish(w, &err);
	if (st != DMR_OK)
		goto fail;
	dmr_sig_restore(&saved);
	return 0;

fail_abandon:
	dmr_trace_abandon(w);
fail:
	dmr_sig_restore(&saved);
	if (err.msg[0])
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, path, dmr_status_string(st));
	return dmr_exit_status(st);
}

int dmr_gen_cli_main(const dmr_gen_cli_t *cli, void *cfg, int argc, char **argv)
{
	const char *prog = cli->prog;
	dmr_gen_common_t cm;
	dmr_trace_hdr_t *hdr;
	int c, rc;

	dmr_gen_common_init(&cm);
	optind = 0; /* full getopt reinit: main may run more than once per process */
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((c = getopt_long(argc, argv, DMR_GEN_COMMON_SHORTOPTS, cli->opts, NULL)) != -1) {
		int h = dmr_gen_common_opt(prog, c, optarg, &cm);

		if (h < 0)
			return 2;
		if (h > 0)
			continue;
		if (c == 'h') {
			cli->usage(stdout);
			return 0;
		}
		if (c < 256) { /* '?' or ':': refused by getopt_long */
			char cmd[48];
			dmr_err_t err;
			snprintf(cmd, sizeof(cmd), "gen %s", prog);
			dmr_opt_refused(cmd, c, argv, cli->opts, &err);
			fprintf(stderr, "dmreplay %s: %s\n", cmd, err.msg);
			return 2;
		}
		if (cli->opt(cfg, c, optarg) != 0)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return 2;
	}
	/* --quiet is each generator's own option (its footprint lines); it
	 * silences the progress line too */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quiet") == 0)
			cm.quiet = 1;
	if (cm.out == NULL) {
		fprintf(stderr, "%s: missing -o FILE (try --help)\n", prog);
		return 2;
	}
	/* the output's directory before anything is printed or generated (a
	 * missing one was named as OUT.tmp, after the footprint table: a trial) */
	if (cm.out[0] == 0) {
		fprintf(stderr,
			"%s: output path '': empty (give a file, or - for standard output)\n",
			prog);
		return 2;
	}
	if (strcmp(cm.out, "-") != 0) {
		dmr_err_t err;
		dmr_status_t st = dmr_out_file_check(cm.out, &err);
		if (st != DMR_OK) {
			fprintf(stderr, "%s: -o %s\n", prog, err.msg);
			return dmr_exit_status(st);
		}
	}
	if ((hdr = malloc(sizeof(*hdr))) == NULL) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	rc = cli->prepare(cfg, &cm, hdr);
	if (rc == 0) {
		rc = dmr_gen_write_file(prog, cm.out, hdr, cli->run, cfg, &cm);
		if (rc == 0 && cli->done)
			cli->done(cfg, &cm);
	}
	free(hdr);
	return rc;
}
