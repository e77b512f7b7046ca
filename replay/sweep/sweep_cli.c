/*
 * replay/sweep/sweep_cli.c - `dmreplay sweep SPEC.json`: options, the
 * sweep directory and its lock, resume, --dry-run, and --job-cell (one job
 * as GNU parallel runs it); the jobs themselves run in runner.c (contract
 * in replay/sweep.h; docs/SWEEPS.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "sweep_impl.h"

static void sweep_usage(FILE *f)
{
	fputs("usage: dmreplay sweep SPEC.json [--out DIR] [--jobs N] [--hosts H1,H2] [--dry-run]\n"
	      "Run every cell (the cartesian product of SPEC's axes) x repetition with\n"
	      "`dmreplay run`, one row per finished (cell, rep) in DIR/summary.csv.\n"
	      "A re-run with the same SPEC and DIR skips the finished ones.\n\n"
	      "  --out DIR      sweep directory (default out/sweep-NAME)\n"
	      "  --jobs N       run N cells at once through GNU parallel (default 1:\n"
	      "                 one at a time, no parallel needed)\n"
	      "  --hosts H,...  spread the runs over these machines (GNU parallel -S;\n"
	      "                 ':' is this machine); dmreplay must be at the same path\n"
	      "                 there; traces are generated on each host\n"
	      "  --dry-run      print the plan (cells, done, traces, commands); run nothing\n"
	      "  --help\n"
	      "SPEC format: docs/SWEEPS.md. Exit status: 0 all done, 1 some runs failed,\n"
	      "2 bad SPEC or usage, 130 interrupted (re-run to resume).\n",
	      f);
}

static int job_main(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p, const char *cell, const char *rep_s)
{
	char *end;
	unsigned long rep = strtoul(rep_s, &end, 10);
	dmr_sweep_job_t *j = *rep_s && !*end ? dmr_sweep_plan_find(p, cell, rep) : NULL;
	if (!j) {
		printf("DMR-FAIL\t%s\t%s\tno such cell/rep in %s\n", cell, rep_s, c->spec_path);
		return 2;
	}
	char hdr[4096 + 16], row[8192 + 600];
	dmr_err_t err = {{0}};
	if (dmr_sweep_run_job(c, j, hdr, sizeof(hdr), row, sizeof(row), &err) != DMR_OK ||
	    dmr_sig_caught()) {
		printf("DMR-FAIL\t%s\t%u\t%s\n", j->cell, j->rep,
		       dmr_sig_caught() ? "interrupted" : err.msg);
		return 1;
	}
	printf("DMR-ROW\t%s\t%s\n", hdr, row);
	return 0;
}

/* The plan on stdout; 0, or 130 when a stop signal came (checked between
 * lines: a blocked stdout returns EINTR), 1 when out of memory. */
static int dry_run(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p)
{
	printf("sweep %s: %zu cells x %u reps = %zu runs; %zu done, %zu to run\n", c->spec->name,
	       p->ncells, c->spec->reps, p->njobs, p->ndone, p->njobs - p->ndone);
	printf("summary: %s%s\n", c->summary, p->foreign ? "" : "");
	if (p->foreign)
		printf("  (%zu rows of other cells kept)\n", p->foreign);
	size_t nt = 0, have = 0;
	uint8_t *first = dmr_sweep_plan_first_traces(p);
	if (!first) {
		fprintf(stderr, "dmreplay sweep: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < p->njobs && !dmr_sig_caught(); i++) {
		if (!first[i])
			continue;
		nt++;
		char path[PATH_MAX + 700];
		snprintf(path, sizeof(path), "%s/traces/%s", c->dir, p->jobs[i].trace);
		int ok = access(path, R_OK) == 0;
		have += ok;
		char **av = dmr_sweep_gen_argv(c->spec, &p->jobs[i], c->exe, path);
		printf("%s ", ok ? "[cached]" : "[gen]   ");
		for (char **a = av; a && *a && !dmr_sig_caught(); a++)
			printf("%s%s", *a, a[1] ? " " : "\n");
		dmr_sweep_argv_free(av);
	}
	free(first);
	if (!dmr_sig_caught())
		printf("traces: %zu (%zu cached) in %s/traces\n", nt, have, c->dir);
	for (size_t i = 0; i < p->njobs && !dmr_sig_caught(); i++) {
		dmr_sweep_job_t *j = &p->jobs[i];
		char trace[PATH_MAX + 700], cdir[PATH_MAX + 700];
		snprintf(trace, sizeof(trace), "%s/traces/%s", c->dir, j->trace);
		snprintf(cdir, sizeof(cdir), "%s/cells/%s", c->dir, j->dir);
		char **av = dmr_sweep_run_argv(c->spec, j, c->exe, trace, cdir);
		printf("%s %s r%u: ", j->done ? "[done]" : "[run] ", j->cell, j->rep);
		for (char **a = av; a && *a && !dmr_sig_caught(); a++)
			printf("%s%s", *a, a[1] ? " " : "\n");
		dmr_sweep_argv_free(av);
	}
	if (dmr_sig_caught()) /* stdout may be blocked: no more writes */
		return 130;
	fflush(stdout);
	return 0;
}

/* This executable, or the file named by env (tests: DMR_SWEEP_EXE, a
 * stand-in for `dmreplay gen/run`; DMR_SWEEP_SELF, a dmreplay with sweep for
 * the parallel jobs when the caller is not one). */
static int self_exe(const char *env_name, char *out, size_t len)
{
	const char *env = getenv(env_name);
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int dmr_sweep_main(int argc, char **argv)
{
	enum { O_OUT = 256, O_JOBS, O_HOSTS, O_DRY, O_JCELL, O_JREP, O_HELP };
	static const struct option opts[] = {{"out", required_argument, 0, O_OUT},
					     {"jobs", required_argument, 0, O_JOBS},
					     {"hosts", required_argument, 0, O_HOSTS},
					     {"dry-run", no_argument, 0, O_DRY},
					     {"job-cell", required_argument, 0, O_JCELL},
					     {"job-rep", required_argument, 0, O_JREP},
					     {"help", no_argument, 0, O_HELP},
					     {0, 0, 0, 0}};
	const char *out = NULL, *hosts = NULL, *jcell = NULL, *jrep = NULL;
	uint32_t jobs = 0;
	int dry = 0, ch;
	optind = 0;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case O_OUT:
			out = optarg;
			break;
		case O_HOSTS:
			hosts = optarg;
			break;
		case O_DRY:
			dry = 1;
			break;
		case O_JCELL:
			jcell = optarg;
			break;
		case O_JREP:
			jrep = optarg;
			break;
		case 'h':
		case O_HELP:
			sweep_usage(stdout);
			return 0;
		case O_JOBS: {
			dmr_err_t oerr;
			if (dmr_opt_u32("--jobs", optarg, 1, 4096, 0, &jobs, &oerr) != DMR_OK) {
				fprintf(stderr, "dmreplay sweep: %s\n", oerr.msg);
				return 2;
			}
			break;
		}
		default: {
			dmr_err_t oerr;
			dmr_opt_refused("sweep", ch, argv, opts, &oerr);
			fprintf(stderr, "dmreplay sweep: %s\n", oerr.msg);
			return 2;
		}
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dmreplay sweep: %s\n",
			optind >= argc ? "missing SPEC.json" : "more than one SPEC given");
		sweep_usage(stderr);
		return 2;
	}
	if ((jcell == NULL) != (jrep == NULL)) {
		fprintf(stderr, "dmreplay sweep: --job-cell and --job-rep go together\n");
		return 2;
	}
	if (hosts && !jobs)
		jobs = 1;
	if (hosts && (!*hosts || strpbrk(hosts, " \t\n'\"`$;"))) {
		fprintf(stderr,
			"dmreplay sweep: --hosts: '%s' is not a comma-separated host list\n",
			hosts);
		return 2;
	}
	const char *spec_arg = argv[optind];
	dmr_sweep_spec_t spec;
	dmr_err_t err = {{0}};
	if (dmr_sweep_spec_load(spec_arg, &spec, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: error: %s\n", err.msg);
		return 2;
	}
	int rc = 2;
	dmr_sweep_plan_t plan;
	memset(&plan, 0, sizeof(plan));
	dmr_sweep_ctx_t *c = calloc(1, sizeof(*c));
	char *spec_abs = realpath(spec_arg, NULL);
	int lockfd = -1;
	if (!c || !spec_abs) {
		fprintf(stderr, "dmreplay sweep: %s: %s\n", spec_arg, strerror(errno));
		goto out;
	}
	c->spec = &spec;
	c->spec_path = spec_abs;
	/* a stop signal ends planning, a dry run and a resume too (exit 130) */
	dmr_sweep_signals_install();
	dmr_status_t pst = dmr_sweep_plan_build(&spec, &plan, &err);
	if (pst != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: %s: %s: %s\n",
			pst == DMR_ERR_INTERRUPTED ? "interrupted" : "error", spec_arg, err.msg);
		rc = pst == DMR_ERR_INTERRUPTED ? 130 : 2;
		goto out;
	}
	char dflt[128];
	snprintf(dflt, sizeof(dflt), "out/sweep-%s", spec.name);
	if (!out)
		out = dflt;
	if (strpbrk(out, ",\"\n\t")) {
		fprintf(stderr,
			"dmreplay sweep: --out: '%s': no commas, quotes or tabs (the path goes "
			"into CSV rows)\n",
			out);
		goto out;
	}
	if (!dry && dmr_mkdir_p(out, 0, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: --out %s: %s\n", out, err.msg);
		goto out;
	}
	if (!realpath(out, c->dir)) {
		if (!dry) {
			fprintf(stderr, "dmreplay sweep: --out %s: %s\n", out, strerror(errno));
			goto out;
		}
		snprintf(c->dir, sizeof(c->dir), "%s", out);
	}
	snprintf(c->summary, sizeof(c->summary), "%s/summary.csv", c->dir);
	if (self_exe("DMR_SWEEP_EXE", c->exe, sizeof(c->exe)) != 0 ||
	    self_exe("DMR_SWEEP_SELF", c->self, sizeof(c->self)) != 0) {
		fprintf(stderr, "dmreplay sweep: cannot find my own executable\n");
		rc = 1;
		goto out;
	}
	if (jcell) {
		rc = job_main(c, &plan, jcell, jrep);
		goto out;
	}
	if (!dry) {
		char lmsg[PATH_MAX + 300];
		lockfd = dmr_sweepdir_lock(c->dir, lmsg, sizeof(lmsg), NULL);
		if (lockfd < 0) {
			fprintf(stderr, "dmreplay sweep: --out %s\n", lmsg);
			goto out;
		}
	}
	/* D4: the rows in DIR are this spec's runs only if DIR was made with it */
	char specf[PATH_MAX + 32];
	snprintf(specf, sizeof(specf), "%s/sweep.spec", c->dir);
	if ((pst = dmr_sweep_spec_check_dir(&spec, specf, !dry, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: error: %s\n", err.msg);
		rc = pst == DMR_ERR_NOMEM ? 1 : 2;
		goto out;
	}
	if ((pst = dmr_sweep_plan_resume(&plan, c->summary, !dry, &err)) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: %s: %s\n",
			pst == DMR_ERR_INTERRUPTED ? "interrupted" : "error", err.msg);
		rc = pst == DMR_ERR_INTERRUPTED ? 130 : 2;
		goto out;
	}
	if (plan.warning[0])
		fprintf(stderr, "dmreplay sweep: warning: %s\n", plan.warning);
	snprintf(c->header, sizeof(c->header), "%s", plan.header);
	if (dry) {
		rc = dry_run(c, &plan);
		goto out;
	}
	if (jobs && plan.ndone < plan.njobs) {
		char pmsg[800];
		if (dmr_sweep_check_parallel(pmsg, sizeof(pmsg)) != 0) {
			fprintf(stderr, "dmreplay sweep: error: %s\n", pmsg);
			goto out;
		}
	}
	c->tty = isatty(2);
	c->total = plan.njobs;
	c->before = plan.ndone;
	c->t0 = dmr_wall_s();
	if (plan.ndone)
		fprintf(stderr, "sweep %s: %zu of %zu runs already in %s, running the other %zu\n",
			spec.name, plan.ndone, plan.njobs, c->summary, plan.njobs - plan.ndone);
	int bad = plan.ndone == plan.njobs ? 0
		  : jobs		   ? dmr_sweep_run_parallel(c, &plan, jobs, hosts)
					   : dmr_sweep_run_sequential(c, &plan);
	dmr_sweep_progress(c, NULL, 1);
	double el = dmr_wall_s() - c->t0;
	size_t done = c->before + c->now;
	if (dmr_sig_caught()) {
		fprintf(
		    stderr,
		    "sweep %s: interrupted; %zu of %zu runs in %s (whole rows only); re-run the "
		    "same command to resume\n",
		    spec.name, done, plan.njobs, c->summary);
		rc = 130;
	} else {
		fprintf(
		    stderr,
		    "sweep %s: %zu of %zu runs done (%zu now, in %.1f s wall), %zu failed: %s\n",
		    spec.name, done, plan.njobs, c->now, el, c->failed, c->summary);
		rc = (c->failed || bad || done < plan.njobs) ? 1 : 0;
	}
out:
	if (lockfd >= 0)
		close(lockfd);
	free(spec_abs);
	free(c);
	dmr_sweep_plan_free(&plan);
	dmr_sweep_spec_free(&spec);
	return rc;
}
