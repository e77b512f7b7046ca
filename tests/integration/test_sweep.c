/*
 * tests/integration/test_sweep.c - replay/sweep.c: spec parsing and its errors, the
 * plan (cells x reps, seeds, shared traces, argument vectors), resume from
 * an existing summary.csv (finished rows skipped, a cut last line dropped
 * and repaired, corrupt rows refused), and the runner end to end with a
 * stand-in for dmreplay (a shell script named by DMR_SWEEP_EXE that writes
 * a one-row summary.csv), including SIGKILL and SIGINT in the middle of a
 * sweep and the GNU parallel path when parallel is installed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/sweep.h"
#include "replay/sweepdir.h"

static const char *regimes_spec =
    "{ \"name\": \"regimes\",\n"
    "  \"workload\": {\"name\": \"tpcc\", \"mix\": \"dm\", \"warehouses\": 40, \"txns\": 2000},\n"
    "  \"axes\": {\"regime\": [\"uniform\", \"extreme\", \"alt-extreme\"],\n"
    "           \"loop\": [\"none\", \"aimd\", \"perkey\"]},\n"
    "  \"reps\": 3, \"seed\": 10,\n"
    "  \"run\": {\"cns\": 4, \"threads\": 28, \"coros\": 3, \"duration\": \"0.5s\"} }\n";

/* ---- spec parsing -------------------------------------------------------- */

START_TEST(test_spec_ok)
{
	dmr_sweep_spec_t s;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(regimes_spec, "r.json", &s, &err), DMR_OK);
	ck_assert_str_eq(s.name, "regimes");
	ck_assert_str_eq(s.workload, "tpcc");
	ck_assert_uint_eq(s.reps, 3);
	ck_assert_uint_eq(s.seed_base, 10);
	ck_assert_int_eq(s.seed_axis, -1);
	ck_assert_uint_eq(s.naxes, 2);
	ck_assert_str_eq(s.axes[0].name, "regime");
	ck_assert_int_eq(s.axes[0].gen, 1);
	ck_assert_uint_eq(s.axes[0].nvals, 3);
	ck_assert_str_eq(s.axes[0].vals[2], "alt-extreme");
	ck_assert_str_eq(s.axes[1].name, "loop");
	ck_assert_int_eq(s.axes[1].gen, 0);
	ck_assert_uint_eq(s.nrun, 4);
	ck_assert_str_eq(s.run[3].key, "duration");
	ck_assert_str_eq(s.run[3].val, "0.5s");
	ck_assert_int_eq(s.trace_seed_fixed, 0);
	dmr_sweep_spec_free(&s);

	/* numbers: reals keep their text, a seed axis makes the repetitions */
	const char *j2 =
	    "{\"workload\": {\"name\": \"smallbank\", \"accounts\": 1000, \"seed\": 7},"
	    " \"axes\": {\"md_factor\": [1.5, 2], \"seed\": [3, 5], "
	    "\"regime\": [\"drift:hot:1/0.95@0.05s\"], \"duration\": [0.25]}}";
	ck_assert_int_eq(dmr_sweep_spec_parse(j2, "dir/two.json", &s, &err), DMR_OK);
	ck_assert_str_eq(s.name, "two");
	ck_assert_str_eq(s.axes[0].vals[0], "1.5");
	ck_assert_str_eq(s.axes[0].vals[1], "2");
	ck_assert_int_eq(s.seed_axis, 1);
	ck_assert_uint_eq(s.reps, 2);
	ck_assert_int_eq(s.trace_seed_fixed, 1);
	ck_assert_uint_eq(s.trace_seed, 7);
	ck_assert_str_eq(s.axes[3].vals[0], "0.25");
	dmr_sweep_spec_free(&s);
}
END_TEST

static const struct {
	const char *json, *want;
} bad_specs[] = {
    /* D13: seeds the generator (32-bit) would refuse at run time */
    {"{\"workload\": {\"name\": \"tpcc\"}, \"seed\": 4294967296}", "seed: 4294967296 + 1 reps"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"seed\": 4294967295, \"reps\": 2}",
     "goes above 4294967295"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"seed\": [1, 5000000000]}}",
     "axes.seed[1]: 5000000000 is above 4294967295"},
    {"{\"workload\": {\"name\": \"tpcc\", \"seed\": 4294967296}}",
     "workload.seed: 4294967296 is above 4294967295"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"colour\": [1]}}",
     "axes.colour: unknown axis"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"threads\": [4, \"8\"]}}",
     "axes.threads[1]: expected an integer >= 1, got a string"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"threads\": [0]}}",
     "axes.threads[0]: expected an integer >= 1"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"md_factor\": [true]}}",
     "axes.md_factor[0]: expected a number > 0, got a boolean"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"regime\": [\"hot\"]}}",
     "axes.regime[0]: regime 'hot'"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"loop\": [\"none\", \"none\"]}}",
     "axes.loop[1]: value 'none' listed twice"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"loop\": []}}",
     "axes.loop: expected a non-empty array"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"loop\": \"aimd\"}}",
     "axes.loop: expected a non-empty array"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"loop\": [\"a,b\"]}}",
     "axes.loop[0]: 'a,b' is not allowed"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"duration\": [\"5 min\"]}}",
     "axes.duration[0]: expected a duration"},
    {"{\"workload\": {\"name\": \"smallbank\"}, \"axes\": {\"mix\": [\"dm\"]}}",
     "axes.mix: not a setting of workload smallbank"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"run\": {\"threads\": 4}, \"axes\": "
     "{\"threads\": [4]}}",
     "axes.threads: also fixed in run.threads"},
    {"{\"workload\": {\"name\": \"tpcc\", \"regime\": \"uniform\"}, \"axes\": "
     "{\"regime\": [\"extreme\"]}}",
     "axes.regime: also fixed in workload.regime"},
    {"{\"workload\": {\"name\": \"tpcc\", \"accounts\": 5}}",
     "workload.accounts: unknown for workload tpcc"},
    {"{\"workload\": {\"name\": \"tpcc\", \"warehouses\": -1}}",
     "workload.warehouses: expected an integer >= 1"},
    {"{\"workload\": {\"name\": \"tpcc\", \"seed\": \"x\"}}",
     "workload.seed: expected an integer >= 0 or \"rep\""},
    {"{\"workload\": {\"name\": \"tpcb\"}}",
     "workload.name: expected \"tpcc\", \"smallbank\", \"ycsb\" or \"tatp\""},
    {"{\"workload\": {\"name\": \"tpcc\", \"subscribers\": 5}}",
     "workload.subscribers: unknown for workload tpcc"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"theta\": [0.9]}}", "theta"},
    {"{\"axes\": {}}", "workload: missing"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"run\": {\"trheads\": 4}}", "run.trheads: unknown"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"run\": {\"seed\": 4}}", "run.seed: set by the sweep"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"run\": {\"out\": \"x\"}}",
     "run.out: set by the sweep"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"repz\": 3}", "repz: unknown field"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"reps\": 0}", "reps: expected an integer"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"reps\": 3, \"axes\": {\"seed\": [1, 2]}}",
     "reps: 3, but the seed axis lists 2 seeds"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"seed\": 1, \"axes\": {\"seed\": [1, 2]}}",
     "seed: a base seed and a seed axis exclude each other"},
    {"{\"workload\": {\"name\": \"tpcc\"},\n \"axes\": {\"loop\": [\"none\",]}}", "x.json:2:"},
    {"[1, 2]", "expected a JSON object"},
    {"{\"workload\": {\"name\": \"tpcc\"}, \"workload\": {\"name\": \"tpcc\"}}", "x.json:1:"},
};

START_TEST(test_spec_bad)
{
	dmr_sweep_spec_t s;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(bad_specs[_i].json, "x.json", &s, &err),
			 DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, bad_specs[_i].want) != NULL, "want '%s' in '%s'",
		      bad_specs[_i].want, err.msg);
	ck_assert_msg(strncmp(err.msg, "x.json", 6) == 0, "file not named: '%s'", err.msg);
}
END_TEST

START_TEST(test_spec_load_errors)
{
	dmr_sweep_spec_t s;
	dmr_err_t err = {{0}};
	char path[300];
	snprintf(path, sizeof(path), "%s/missing.json", dmr_test_tmp);
	ck_assert_int_eq(dmr_sweep_spec_load(path, &s, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "missing.json"));
	snprintf(path, sizeof(path), "%s/empty.json", dmr_test_tmp);
	dmr_test_write_file(path, "");
	ck_assert_int_eq(dmr_sweep_spec_load(path, &s, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty"));
}
END_TEST

/* ---- plan ---------------------------------------------------------------- */

START_TEST(test_plan)
{
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(regimes_spec, "r.json", &s, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.ncells, 9);
	ck_assert_uint_eq(p.njobs, 27);
	ck_assert_uint_eq(p.ndone, 0);
	/* rep-major, first axis outermost */
	ck_assert_str_eq(p.jobs[0].cell, "regime=uniform;loop=none");
	ck_assert_str_eq(p.jobs[1].cell, "regime=uniform;loop=aimd");
	ck_assert_str_eq(p.jobs[3].cell, "regime=extreme;loop=none");
	ck_assert_str_eq(p.jobs[8].cell, "regime=alt-extreme;loop=perkey");
	ck_assert_str_eq(p.jobs[9].cell, "regime=uniform;loop=none");
	ck_assert_uint_eq(p.jobs[9].rep, 1);
	ck_assert_str_eq(p.jobs[9].dir, "regime=uniform+loop=none-r1");
	ck_assert_uint_eq(p.jobs[0].seed, 10);
	ck_assert_uint_eq(p.jobs[26].seed, 12);
	ck_assert_uint_eq(p.jobs[26].trace_seed, 12);
	/* the loop axis does not change the trace, the regime and the seed do */
	ck_assert_str_eq(p.jobs[0].trace, p.jobs[1].trace);
	ck_assert_str_eq(p.jobs[0].trace, p.jobs[2].trace);
	ck_assert_str_ne(p.jobs[0].trace, p.jobs[3].trace);
	ck_assert_str_ne(p.jobs[0].trace, p.jobs[9].trace);
	size_t distinct = 0;
	for (size_t i = 0; i < p.njobs; i++) {
		size_t k;
		for (k = 0; k < i; k++)
			if (strcmp(p.jobs[k].trace, p.jobs[i].trace) == 0)
				break;
		distinct += k == i;
	}
	ck_assert_uint_eq(distinct, 9);

	/* argument vectors */
	char **av = dmr_sweep_run_argv(&s, &p.jobs[4], "/bin/dmreplay", "T.csv", "D");
	ck_assert_ptr_nonnull(av);
	char line[2048] = "";
	for (char **a = av; *a; a++) {
		strcat(line, *a);
		strcat(line, " ");
	}
	ck_assert_str_eq(line, "/bin/dmreplay run --trace T.csv --out D --seed 10 --quiet --cns 4 "
			       "--threads 28 --coros 3 --duration 0.5s --loop aimd ");
	dmr_sweep_argv_free(av);
	av = dmr_sweep_gen_argv(&s, &p.jobs[4], "/bin/dmreplay", "T.csv");
	line[0] = '\0';
	for (char **a = av; *a; a++) {
		strcat(line, *a);
		strcat(line, " ");
	}
	ck_assert_str_eq(line, "/bin/dmreplay gen tpcc --mix dm --regime extreme --seed 10 "
			       "--txns 2000 --warehouses 40 -o T.csv ");
	dmr_sweep_argv_free(av);
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);

	/* a seed axis: cells exclude it, each seed is a repetition; a fixed trace seed */
	const char *j =
	    "{\"workload\": {\"name\": \"tpcc\", \"seed\": 1}, \"axes\": {\"seed\": [5, "
	    "9], \"ai_step\": [2, 4]}}";
	ck_assert_int_eq(dmr_sweep_spec_parse(j, "s.json", &s, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.ncells, 2);
	ck_assert_uint_eq(p.njobs, 4);
	ck_assert_str_eq(p.jobs[0].cell, "ai_step=2");
	ck_assert_uint_eq(p.jobs[0].seed, 5);
	ck_assert_uint_eq(p.jobs[2].seed, 9);
	ck_assert_uint_eq(p.jobs[2].rep, 1);
	ck_assert_uint_eq(p.jobs[2].trace_seed, 1);
	ck_assert_str_eq(p.jobs[0].trace, p.jobs[3].trace);
	av = dmr_sweep_run_argv(&s, &p.jobs[3], "x", "T", "D");
	line[0] = '\0';
	for (char **a = av; *a; a++) {
		strcat(line, *a);
		strcat(line, " ");
	}
	ck_assert_str_eq(line, "x run --trace T --out D --seed 9 --quiet --ai-step 4 ");
	dmr_sweep_argv_free(av);
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);

	/* no axes: one cell named default */
	ck_assert_int_eq(dmr_sweep_spec_parse("{\"workload\": {\"name\": \"ycsb\"}, \"reps\": 2}",
					      "d.json", &s, &err),
			 DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.njobs, 2);
	ck_assert_str_eq(p.jobs[1].cell, "default");
	ck_assert_str_eq(p.jobs[1].dir, "default-r1");
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
}
END_TEST

START_TEST(test_dirname)
{
	char d[64];
	dmr_sweep_cell_dirname("regime=drift:hot:1/0.95@5s;loop=aimd+perkey", d, sizeof(d));
	ck_assert_str_eq(d, "regime=drift_hot_1_0.95_5s+loop=aimd+perkey");
	dmr_sweep_cell_dirname("abcdef", d, 4);
	ck_assert_str_eq(d, "abc");
}
END_TEST

/* ---- resume -------------------------------------------------------------- */

static const char *hdr = "cell,rep,workload,regime,loop,committed_tps\n";

static void plan_regimes(dmr_sweep_spec_t *s, dmr_sweep_plan_t *p)
{
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(regimes_spec, "r.json", s, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(s, p, &err), DMR_OK);
}

START_TEST(test_resume_skips_finished)
{
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	char path[300];
	snprintf(path, sizeof(path), "%s/summary-ok.csv", dmr_test_tmp);
	char text[2048];
	snprintf(text, sizeof(text),
		 "%sregime=uniform;loop=none,0,tpcc,uniform,none,1000\n"
		 "regime=extreme;loop=aimd,0,tpcc,extreme,aimd,2000\n"
		 "regime=extreme;loop=aimd,2,tpcc,extreme,aimd,2100\n"
		 "regime=extreme;loop=aimd,2,tpcc,extreme,aimd,2100\n" /* duplicate: once */
		 "regime=other;loop=none,0,tpcc,other,none,5\n",       /* not in this spec */
		 hdr);
	dmr_test_write_file(path, text);
	plan_regimes(&s, &p);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 3);
	ck_assert_uint_eq(p.foreign, 1);
	ck_assert_uint_eq(p.dropped, 0);
	ck_assert_str_eq(p.warning, "");
	ck_assert_str_eq(p.header, "cell,rep,workload,regime,loop,committed_tps");
	for (size_t i = 0; i < p.njobs; i++) {
		const dmr_sweep_job_t *j = &p.jobs[i];
		int want = (strcmp(j->cell, "regime=uniform;loop=none") == 0 && j->rep == 0) ||
			   (strcmp(j->cell, "regime=extreme;loop=aimd") == 0 &&
			    (j->rep == 0 || j->rep == 2));
		ck_assert_msg(j->done == want, "%s r%u done=%d", j->cell, j->rep, j->done);
	}
	/* the file is left alone */
	ck_assert_str_eq(dmr_test_read_file(path), text);
	dmr_sweep_plan_free(&p);

	/* a missing or empty summary: nothing done */
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	snprintf(path, sizeof(path), "%s/none.csv", dmr_test_tmp);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 0);
	snprintf(path, sizeof(path), "%s/empty.csv", dmr_test_tmp);
	dmr_test_write_file(path, "");
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 0);
	ck_assert_str_eq(p.header, "");
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
}
END_TEST

START_TEST(test_resume_truncated_last_line)
{
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	char path[300], good[1024], text[1200];
	snprintf(path, sizeof(path), "%s/summary-cut.csv", dmr_test_tmp);
	snprintf(good, sizeof(good), "%sregime=uniform;loop=none,0,tpcc,uniform,none,1000\n", hdr);
	/* a killed writer: the last row has no newline (and looks whole) */
	snprintf(text, sizeof(text), "%sregime=extreme;loop=none,0,tpcc,extreme,none,30", good);
	dmr_test_write_file(path, text);

	/* dry (repair = 0): ignored, the file untouched */
	plan_regimes(&s, &p);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 0, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 1);
	ck_assert_uint_eq(p.dropped, 1);
	ck_assert_ptr_nonnull(strstr(p.warning, "summary-cut.csv:3: last line has no newline"));
	ck_assert_str_eq(dmr_test_read_file(path), text);
	dmr_sweep_plan_free(&p);

	/* repair: the cut line is dropped from the file, its job stays to do */
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 1);
	ck_assert_uint_eq(p.dropped, 1);
	ck_assert_ptr_nonnull(strstr(p.warning, "dropped it"));
	ck_assert_str_eq(dmr_test_read_file(path), good);
	ck_assert_int_eq(p.jobs[3].done, 0); /* regime=extreme;loop=none r0 */
	dmr_sweep_plan_free(&p);

	/* a cut header: the file becomes empty */
	dmr_test_write_file(path, "cell,rep,wor");
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_OK);
	ck_assert_uint_eq(p.dropped, 1);
	ck_assert_str_eq(dmr_test_read_file(path), "");
	ck_assert_str_eq(p.header, "");
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
}
END_TEST

START_TEST(test_resume_corrupt)
{
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	char path[300], text[1024];
	snprintf(path, sizeof(path), "%s/summary-bad.csv", dmr_test_tmp);
	plan_regimes(&s, &p);

	snprintf(text, sizeof(text),
		 "%sregime=uniform;loop=none,0,tpcc,uniform,none,1000\n"
		 "regime=uniform;loop=aimd,0,tpcc\n"
		 "regime=uniform;loop=perkey,0,tpcc,uniform,perkey,1000\n",
		 hdr);
	dmr_test_write_file(path, text);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "summary-bad.csv:3: 3 fields, the header has 6"), "%s",
		      err.msg);
	ck_assert_str_eq(dmr_test_read_file(path), text); /* never modified */

	snprintf(text, sizeof(text), "%sregime=uniform;loop=none,x,tpcc,uniform,none,1000\n", hdr);
	dmr_test_write_file(path, text);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "summary-bad.csv:2: field 'rep': 'x'"), "%s", err.msg);

	dmr_test_write_file(path, "workload,regime\ntpcc,uniform\n");
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, path, 1, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "summary-bad.csv:1: header has no 'cell' and 'rep'"), "%s",
		      err.msg);
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
}
END_TEST

/* ---- the runner, with a stand-in for dmreplay ----------------------------- */

/* gen: writes the -o file. run: writes --out/summary.csv (a header and one
 * row with the seed and loop) and timeseries.csv, after FAKE_SLEEP seconds;
 * --loop aimd-worker fails with status 2 (a valid name: the sweep checks loop
 * names when it plans). */
static const char *fake_exe =
    "#!/bin/sh\n"
    "cmd=$1; shift\n"
    "if [ \"$cmd\" = gen ]; then\n"
    "  while [ $# -gt 0 ]; do [ \"$1\" = -o ] && o=$2; shift; done\n"
    "  echo trace > \"$o\"; exit 0\n"
    "fi\n"
    "loop=none\n"
    "while [ $# -gt 0 ]; do\n"
    "  case $1 in --out) out=$2;; --seed) seed=$2;; --loop) loop=$2;; --trace) trace=$2;; esac\n"
    "  shift\n"
    "done\n"
    "[ \"$loop\" = aimd-worker ] && { echo \"dmreplay run: --loop: 'aimd-worker' fails here\" "
    ">&2; exit 2; }\n"
    "sleep ${FAKE_SLEEP:-0}\n"
    "printf 'workload,loop,seed,committed_tps,trace\\ntpcc,%s,%s,%s000,%s\\n' \"$loop\" \"$seed\" "
    "\"$seed\" \"$trace\" > \"$out/summary.csv\"\n"
    "printf 't_s,committed,phase\\n0.0,1,0\\n0.1,2,0\\n' > \"$out/timeseries.csv\"\n";

static void setup_fake(char *spec, size_t len, const char *loops, int reps)
{
	char exe[300], text[1024];
	snprintf(exe, sizeof(exe), "%s/fake-dmreplay", dmr_test_tmp);
	dmr_test_write_file(exe, fake_exe);
	ck_assert_int_eq(chmod(exe, 0755), 0);
	setenv("DMR_SWEEP_EXE", exe, 1);
	snprintf(spec, len, "%s/spec.json", dmr_test_tmp);
	snprintf(text, sizeof(text),
		 "{\"name\": \"fake\", \"workload\": {\"name\": \"tpcc\", \"txns\": 100},"
		 " \"axes\": {\"regime\": [\"uniform\", \"extreme\"], \"loop\": [%s]},"
		 " \"reps\": %d}",
		 loops, reps);
	dmr_test_write_file(spec, text);
}

static int run_sweep(const char *spec, const char *out, const char *extra)
{
	char *argv[8] = {"sweep", (char *)spec, "--out", (char *)out, NULL, NULL, NULL, NULL};
	int argc = 4;
	char jobs[8] = "2";
	if (extra) {
		argv[argc++] = (char *)extra;
		argv[argc++] = jobs;
	}
	return dmr_sweep_main(argc, argv);
}

/* Count data lines; check every line ends with '\n' and has nf fields. */
static int count_rows(const char *path, int nf)
{
	char *t = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(t);
	size_t n = strlen(t);
	ck_assert_msg(n == 0 || t[n - 1] == '\n', "last line cut in %s", path);
	int lines = 0;
	for (char *p = t; *p;) {
		char *e = strchr(p, '\n');
		int f = 1;
		for (char *q = p; q < e; q++)
			f += *q == ',';
		ck_assert_msg(f == nf, "line %d has %d fields: %.*s", lines + 1, f, (int)(e - p),
			      p);
		lines++;
		p = e + 1;
	}
	return lines ? lines - 1 : 0;
}

START_TEST(test_run_and_resume)
{
	char spec[300], out[300], sum[340];
	setup_fake(spec, sizeof(spec), "\"none\", \"aimd\"", 2);
	unsetenv("FAKE_SLEEP");
	snprintf(out, sizeof(out), "%s/sw1", dmr_test_tmp);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert_int_eq(run_sweep(spec, out, NULL), 0);
	ck_assert_int_eq(count_rows(sum, 7), 8);
	char *t = dmr_test_read_file(sum);
	ck_assert_ptr_nonnull(strstr(t, "cell,rep,workload,loop,seed,committed_tps,trace\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nregime=extreme;loop=aimd,1,tpcc,aimd,2,2000,"));
	char path[400];
	snprintf(path, sizeof(path), "%s/cells/regime=extreme+loop=aimd-r1/timeseries.csv", out);
	ck_assert_int_eq(access(path, R_OK), 0);
	/* 4 traces: regime x seed */
	snprintf(path, sizeof(path), "ls '%s/traces' | grep -c 'csv$' | grep -qx 4", out);
	ck_assert_int_eq(system(path), 0);

	/* re-run: nothing to do, nothing appended */
	static char before[1 << 16];
	strcpy(before, dmr_test_read_file(sum));
	ck_assert_int_eq(run_sweep(spec, out, NULL), 0);
	ck_assert_str_eq(dmr_test_read_file(sum), before);

	/* remove two rows (as if never finished) and cut the last: resumed */
	FILE *f = fopen(sum, "w");
	char *lines = before, *keep_end = before;
	for (int i = 0; i < 6; i++)
		keep_end = strchr(keep_end, '\n') + 1;
	fwrite(lines, 1, (size_t)(keep_end - lines), f);
	fputs("regime=extreme;loop=aimd,1,tpcc,ai", f); /* cut short */
	fclose(f);
	ck_assert_int_eq(run_sweep(spec, out, NULL), 0);
	ck_assert_int_eq(count_rows(sum, 7), 8);

	/* a run that fails: reported, exit 1, the others land */
	setup_fake(spec, sizeof(spec), "\"none\", \"aimd-worker\"", 1);
	snprintf(out, sizeof(out), "%s/sw2", dmr_test_tmp);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert_int_eq(run_sweep(spec, out, NULL), 1);
	ck_assert_int_eq(count_rows(sum, 7), 2);
	snprintf(path, sizeof(path), "%s/cells/regime=uniform+loop=aimd-worker-r0/run.log", out);
	ck_assert_ptr_nonnull(strstr(dmr_test_read_file(path), "'aimd-worker' fails here"));

	/* an unknown loop name, or kv run's prefetch: refused when the sweep
	 * is planned (exit 2), no cell run */
	const char *badloops[2] = {"\"none\", \"bad\"", "\"aimd+prefetch\""};
	for (int k = 0; k < 2; k++) {
		setup_fake(spec, sizeof(spec), badloops[k], 1);
		snprintf(out, sizeof(out), "%s/sw3-%d", dmr_test_tmp, k);
		ck_assert_int_eq(run_sweep(spec, out, NULL), 2);
		snprintf(sum, sizeof(sum), "%s/summary.csv", out);
		ck_assert(!dmr_test_exists(sum));
	}
}
END_TEST

static pid_t start_sweep(const char *spec, const char *out)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* the sweep's messages go to a log that wait_rows shows on failure */
		char log[400];
		snprintf(log, sizeof(log), "%s/sweep-child.log", dmr_test_tmp);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0)
			dup2(fd, 2);
		_exit(run_sweep(spec, out, NULL));
	}
	return pid;
}

static void wait_rows(const char *sum, int n)
{
	char log[400];
	snprintf(log, sizeof(log), "%s/sweep-child.log", dmr_test_tmp);
	/* up to 60 s: a loaded 2-core CI machine running the sanitizer build */
	for (int i = 0; i < 2400; i++) {
		char *t = dmr_test_read_file(sum);
		int lines = 0;
		for (; t && *t; t++)
			lines += *t == '\n';
		if (lines >= n + 1)
			return;
		usleep(25000);
	}
	char *t = dmr_test_read_file(log);
	ck_abort_msg("no %d rows in %s; the sweep said: %s", n, sum, t ? t : "(no log)");
}

/* Wait (up to 60 s) until no process holds DIR's lock: what a killed
 * sweep's last run leaves may still be ending when waitpid returns on the
 * sweep (seen on a loaded machine under ASan: the next sweep was refused
 * with "another run holds this directory"); a lock never released still
 * fails the test. */
static void wait_unlocked(const char *dir)
{
	char msg[600];
	for (int i = 0; i < 2400; i++) {
		int busy = 0, fd = dmr_sweepdir_lock(dir, msg, sizeof(msg), &busy);
		if (fd >= 0) {
			close(fd);
			return;
		}
		ck_assert_msg(busy, "%s", msg);
		usleep(25000);
	}
	ck_abort_msg("%s: still locked after 60 s: %s", dir, msg);
}

START_TEST(test_killed_sweep)
{
	char spec[300], out[300], sum[340];
	setup_fake(spec, sizeof(spec), "\"none\", \"aimd\"", 3); /* 12 runs */
	setenv("FAKE_SLEEP", "0.1", 1);
	snprintf(out, sizeof(out), "%s/swk", dmr_test_tmp);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);

	/* SIGKILL after a few rows: whole rows only */
	pid_t pid = start_sweep(spec, out);
	wait_rows(sum, 3);
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFSIGNALED(status));
	int n = count_rows(sum, 7);
	ck_assert_int_ge(n, 3);
	ck_assert_int_lt(n, 12);

	/* SIGINT: stops after the current run, exit 130, whole rows */
	wait_unlocked(out);
	pid = start_sweep(spec, out);
	wait_rows(sum, n + 2);
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 130);
	int n2 = count_rows(sum, 7);
	ck_assert_int_ge(n2, n + 2);

	/* resume: exactly the 12 (cell, rep), none twice */
	unsetenv("FAKE_SLEEP");
	wait_unlocked(out);
	ck_assert_int_eq(run_sweep(spec, out, NULL), 0);
	ck_assert_int_eq(count_rows(sum, 7), 12);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "tail -n +2 '%s' | cut -d, -f1,2 | sort | uniq -d | grep -q .",
		 sum);
	ck_assert_int_ne(system(cmd), 0);
}
END_TEST

START_TEST(test_parallel)
{
	if (system("parallel --version 2>/dev/null | grep -q 'GNU parallel'") != 0) {
		fprintf(stderr, "test_parallel: SKIPPED: GNU parallel not installed\n");
		return;
	}
	/* the parallel jobs run `dmreplay sweep --job-cell`: a dmreplay with sweep */
	const char *bd = getenv("DMR_BUILD_DIR");
	char self[400], cmd0[500];
	snprintf(self, sizeof(self), "%s/dmreplay", bd ? bd : "build");
	snprintf(cmd0, sizeof(cmd0), "'%s' sweep --help >/dev/null 2>&1", self);
	if (system(cmd0) != 0) {
		fprintf(stderr, "test_parallel: SKIPPED: %s has no sweep command\n", self);
		return;
	}
	setenv("DMR_SWEEP_SELF", self, 1);
	char spec[300], out[300], sum[340];
	setup_fake(spec, sizeof(spec), "\"none\", \"aimd\", \"perkey\"", 2); /* 12 runs */
	unsetenv("FAKE_SLEEP");
	snprintf(out, sizeof(out), "%s/swp", dmr_test_tmp);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	/* two jobs ran earlier: parallel gets the other 10 */
	mkdir(out, 0755);
	dmr_test_write_file(sum, "cell,rep,workload,loop,seed,committed_tps,trace\n"
				 "regime=uniform;loop=none,0,tpcc,none,1,1000,x\n"
				 "regime=extreme;loop=perkey,1,tpcc,perkey,2,2000,x\n");
	ck_assert_int_eq(run_sweep(spec, out, "--jobs"), 0);
	ck_assert_int_eq(count_rows(sum, 7), 12);
	char cmd[600];
	snprintf(cmd, sizeof(cmd),
		 "tail -n +2 '%s' | cut -d, -f1,2 | sort -u | wc -l | grep -qx 12", sum);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_cli_errors)
{
	char spec[300], out[300];
	setup_fake(spec, sizeof(spec), "\"none\"", 1);
	snprintf(out, sizeof(out), "%s/swc", dmr_test_tmp);
	char *a1[] = {"sweep", NULL};
	ck_assert_int_eq(dmr_sweep_main(1, a1), 2);
	char *a2[] = {"sweep", spec, "--jobs", "0", NULL};
	ck_assert_int_eq(dmr_sweep_main(4, a2), 2);
	char *a3[] = {"sweep", spec, "--out", "a,b", NULL};
	ck_assert_int_eq(dmr_sweep_main(4, a3), 2);
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/bad.json", dmr_test_tmp);
	dmr_test_write_file(bad, "{\"workload\": {\"name\": \"tpcc\"}, \"axes\": {\"nope\": [1]}}");
	char *a4[] = {"sweep", bad, "--out", out, NULL};
	ck_assert_int_eq(dmr_sweep_main(4, a4), 2);
	char *a5[] = {"sweep", spec, "--out", out, "--dry-run", NULL};
	ck_assert_int_eq(dmr_sweep_main(5, a5), 0);
	ck_assert_int_ne(access(out, F_OK), 0); /* a dry run creates nothing */
	/* not a sweep summary in --out: refused, untouched */
	mkdir(out, 0755);
	char sum[340];
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	dmr_test_write_file(sum, "workload,regime\ntpcc,uniform\n");
	char *a6[] = {"sweep", spec, "--out", out, NULL};
	ck_assert_int_eq(dmr_sweep_main(4, a6), 2);
	ck_assert_str_eq(dmr_test_read_file(sum), "workload,regime\ntpcc,uniform\n");
}
END_TEST

/* D10: a directory that cannot be written is named as such, not as
 * "another sweep is running"; a held lock is "another run holds it". As
 * root (who writes through mode bits) a read-only tmpfs; else mode 0555. */
START_TEST(test_readonly_dir)
{
	char spec[300], out[300], cmd[700];
	setup_fake(spec, sizeof(spec), "\"none\"", 1);
	snprintf(out, sizeof(out), "%s/swro", dmr_test_tmp);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	int mounted = 0;
	if (geteuid() == 0) {
		snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o ro,size=64k none '%s' 2>/dev/null",
			 out);
		if (system(cmd) != 0) {
			fprintf(stderr,
				"test_readonly_dir: SKIPPED: root but cannot mount tmpfs\n");
			return;
		}
		mounted = 1;
	} else {
		ck_assert_int_eq(chmod(out, 0555), 0);
	}
	dmr_test_run_t r = dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, NULL);
	if (mounted) {
		snprintf(cmd, sizeof(cmd), "umount '%s'", out);
		ck_assert_int_eq(system(cmd), 0);
	} else {
		chmod(out, 0755);
	}
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "not writable") && !strstr(r.err, "another"), "%s", r.err);
	dmr_test_run_free(&r);

	/* held by another process: refused at once, naming it */
	char lk[400];
	snprintf(lk, sizeof(lk), "%s/.dmr-lock", out);
	int fd = open(lk, O_RDWR | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	r = dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, NULL);
	close(fd);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "another run holds this directory"), "%s", r.err);
	dmr_test_run_free(&r);
}
END_TEST

/* B24: moreutils' `parallel` first on PATH: refused at once (exit 2),
 * saying it is not GNU parallel and how to fix it; nothing run. */
START_TEST(test_not_gnu_parallel)
{
	char spec[300], out[300], bin[300], fake[340], path[4400];
	setup_fake(spec, sizeof(spec), "\"none\"", 1);
	snprintf(bin, sizeof(bin), "%s/moreutils-bin", dmr_test_tmp);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	snprintf(fake, sizeof(fake), "%s/parallel", bin);
	dmr_test_write_file(fake, "#!/bin/sh\n"
				  "echo 'parallel [OPTIONS] command -- arguments' >&2\n"
				  "echo '	for each argument, run command with argument' >&2\n"
				  "exit 1\n");
	ck_assert_int_eq(chmod(fake, 0755), 0);
	const char *old = getenv("PATH");
	snprintf(path, sizeof(path), "%s:%s", bin, old ? old : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	snprintf(out, sizeof(out), "%s/swmu", dmr_test_tmp);
	dmr_test_run_t r =
	    dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, "--jobs", "2", NULL);
	setenv("PATH", old ? old : "/usr/bin:/bin", 1);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "not GNU parallel") &&
			  strstr(r.err, "apt-get install parallel"),
		      "%s", r.err);
	ck_assert_msg(!strstr(r.err, "runs done"), "%s", r.err);
	char sum[340];
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert(!dmr_test_exists(sum));
	dmr_test_run_free(&r);
}
END_TEST

/* D4: a re-run with a changed spec into the same DIR is refused, naming
 * the fields that differ; the same spec resumes; the name changes no run. */
START_TEST(test_changed_spec_refused)
{
	char spec[300], out[300], sum[340], text[1024];
	setup_fake(spec, sizeof(spec), "\"none\", \"aimd\"", 2);
	unsetenv("FAKE_SLEEP");
	snprintf(out, sizeof(out), "%s/swspec", dmr_test_tmp);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert_int_eq(run_sweep(spec, out, NULL), 0);
	ck_assert_int_eq(count_rows(sum, 7), 8);
	static char before[1 << 16];
	snprintf(before, sizeof(before), "%s", dmr_test_read_file(sum));
	/* workload txns 100 -> 50 and reps 2 -> 3 */
	snprintf(text, sizeof(text),
		 "{\"name\": \"fake\", \"workload\": {\"name\": \"tpcc\", \"txns\": 50},"
		 " \"axes\": {\"regime\": [\"uniform\", \"extreme\"], \"loop\": [\"none\", "
		 "\"aimd\"]}, \"reps\": 3}");
	dmr_test_write_file(spec, text);
	dmr_test_run_t r = dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "the spec changed") && strstr(r.err, "workload.txns") &&
			  strstr(r.err, "reps") && strstr(r.err, "use another --out"),
		      "%s", r.err);
	ck_assert_msg(!strstr(r.err, "already in"), "%s", r.err);
	dmr_test_run_free(&r);
	/* a dry run says the same */
	r = dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, "--dry-run", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "workload.txns"));
	dmr_test_run_free(&r);
	ck_assert_str_eq(dmr_test_read_file(sum), before);
	/* the original spec, renamed, keys in another order: resumes */
	snprintf(text, sizeof(text),
		 "{\"name\": \"other-name\", \"workload\": {\"txns\": 100, \"name\": "
		 "\"tpcc\"}, \"axes\": {\"regime\": [\"uniform\", \"extreme\"], \"loop\": "
		 "[\"none\", \"aimd\"]}, \"reps\": 2}");
	dmr_test_write_file(spec, text);
	r = dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	dmr_test_run_free(&r);
	ck_assert_str_eq(dmr_test_read_file(sum), before);
}
END_TEST

/* ---- large plans: complexity and stop signals ---------------------------- */

/* 20,000 cells x 5 reps = 100,000 runs (run axes only: 5 traces). */
static void big_spec(char *spec, size_t len)
{
	static char text[4096];
	size_t o = (size_t)snprintf(text, sizeof(text),
				    "{\"name\": \"big\", \"workload\": {\"name\": \"tpcc\", "
				    "\"txns\": 100}, \"reps\": 5, \"axes\": {\"threads\": [");
	for (int t = 1; t <= 200; t++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", t > 1 ? "," : "", t);
	o += (size_t)snprintf(text + o, sizeof(text) - o, "], \"coros\": [");
	for (int c = 1; c <= 100; c++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%d", c > 1 ? "," : "", c);
	snprintf(text + o, sizeof(text) - o, "]}}");
	snprintf(spec, len, "%s/big.json", dmr_test_tmp);
	dmr_test_write_file(spec, text);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Planning, resume against 100,000 rows and the dry run's trace list are
 * O(n log n): they were quadratic (80 K runs: 76 s to plan, 56 s to
 * resume). 10 s is generous for a loaded sanitizer build; the fixed code
 * takes about 1 s here in a plain build. */
START_TEST(test_big_plan_fast)
{
	char spec[300], sum[300];
	big_spec(spec, sizeof(spec));
	double t0 = now_s();
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_load(spec, &s, &err), DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.njobs, 100000);
	/* every run but the last in summary.csv, in reverse order, plus one
	 * foreign row */
	snprintf(sum, sizeof(sum), "%s/big-summary.csv", dmr_test_tmp);
	FILE *f = fopen(sum, "w");
	ck_assert_ptr_nonnull(f);
	fputs("cell,rep,x\n", f);
	for (size_t i = p.njobs - 1; i-- > 0;)
		fprintf(f, "%s,%u,1\n", p.jobs[i].cell, p.jobs[i].rep);
	fputs("threads=999;coros=1,0,1\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(dmr_sweep_plan_resume(&p, sum, 0, &err), DMR_OK);
	ck_assert_uint_eq(p.ndone, 99999);
	ck_assert_uint_eq(p.foreign, 1);
	ck_assert_int_eq(p.jobs[p.njobs - 1].done, 0);
	ck_assert_int_eq(p.jobs[0].done, 1);
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
	double el = now_s() - t0;
	fprintf(stderr, "test_big_plan_fast: 100,000 runs planned and resumed in %.2f s\n", el);
	ck_assert_msg(el < 10.0, "planning 100,000 runs took %.1f s (quadratic again?)", el);
	/* the whole dry run (plan, trace list, 100,000 command lines: 20 MB of
	 * output captured to a file and read back) */
	t0 = now_s();
	char out[300];
	snprintf(out, sizeof(out), "%s/swbig", dmr_test_tmp);
	dmr_test_run_t r =
	    dmr_test_call_main(dmr_sweep_main, "sweep", spec, "--out", out, "--dry-run", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "20000 cells x 5 reps = 100000 runs"));
	ck_assert_ptr_nonnull(strstr(r.out, "traces: 5 (0 cached)"));
	dmr_test_run_free(&r);
	el = now_s() - t0;
	fprintf(stderr, "test_big_plan_fast: the dry run of 100,000 runs took %.2f s\n", el);
	ck_assert_msg(el < 30.0, "a dry run of 100,000 runs took %.1f s (quadratic again?)", el);
}
END_TEST

/* Fork a dry run of spec into out with stdout on a pipe nobody reads (it
 * blocks once the pipe is full); SIGINT after 1 s; its exit status. */
static int interrupted_dry_run(const char *spec, const char *out)
{
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], 1);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 2);
		char *argv[] = {"sweep", (char *)spec, "--out", (char *)out, "--dry-run", NULL};
		_exit(dmr_sweep_main(5, argv));
	}
	close(pfd[1]);
	usleep(1000000);
	kill(pid, SIGINT);
	int status;
	alarm(60);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	alarm(0);
	close(pfd[0]);
	ck_assert_msg(WIFEXITED(status), "killed by signal %d, not stopped",
		      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}

/* SIGINT stops a dry run (blocked on its output) and a resume (blocked
 * reading summary.csv, here a FIFO whose writer stays open): exit 130. */
START_TEST(test_dry_run_and_resume_stop)
{
	char spec[300], out[300], fifo[340];
	big_spec(spec, sizeof(spec));
	snprintf(out, sizeof(out), "%s/swint", dmr_test_tmp);
	ck_assert_int_eq(interrupted_dry_run(spec, out), 130);

	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(fifo, sizeof(fifo), "%s/summary.csv", out);
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	int wfd = open(fifo, O_RDWR); /* a writer that never closes */
	ck_assert_int_ge(wfd, 0);
	const char *rows = "cell,rep,x\nthreads=1;coros=1,0,1\n";
	ck_assert_int_eq(write(wfd, rows, strlen(rows)), (ssize_t)strlen(rows));
	ck_assert_int_eq(interrupted_dry_run(spec, out), 130);
	close(wfd);
}
END_TEST

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("spec");
	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_spec_ok);
	tcase_add_loop_test(tc, test_spec_bad, 0, (int)(sizeof(bad_specs) / sizeof(bad_specs[0])));
	tcase_add_test(tc, test_spec_load_errors);
	tcase_add_test(tc, test_plan);
	tcase_add_test(tc, test_dirname);
	suite_add_tcase(s, tc);

	tc = tcase_create("resume");
	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_resume_skips_finished);
	tcase_add_test(tc, test_resume_truncated_last_line);
	tcase_add_test(tc, test_resume_corrupt);
	suite_add_tcase(s, tc);

	tc = tcase_create("runner");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_run_and_resume);
	tcase_add_test(tc, test_killed_sweep);
	tcase_add_test(tc, test_parallel);
	tcase_add_test(tc, test_cli_errors);
	tcase_add_test(tc, test_readonly_dir);
	tcase_add_test(tc, test_not_gnu_parallel);
	tcase_add_test(tc, test_changed_spec_refused);
	tcase_add_test(tc, test_big_plan_fast);
	tcase_add_test(tc, test_dry_run_and_resume_stop);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("sweep", 0, 0) != 0)
		return EXIT_FAILURE;
	return dmr_test_run(sweep_suite());
}
