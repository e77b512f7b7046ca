/*
 * tests/integration/test_sweep_cells.c - named cells in a sweep spec
 * (issue 14 item 4): "cells": [{"name": ..., options}, ...] parsed with its
 * errors named by file, cell and field; cells crossed with the axes (the
 * named set outermost, "cell=NAME;axis=value"); each cell's run options and
 * generator settings in its argument vectors and trace; the fingerprint
 * (DIR/sweep.spec); and end to end with the dmreplay binary: a sweep of
 * named cells, its resume (finished cells never re-run nor lost), a bad
 * spec refused with exit 2, and `dmreplay report` tabling the cells by
 * name against the first one.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/sweep.h"
#include "replay/sweep/sweep_impl.h"

static const char *cells_spec =
    "{ \"name\": \"ablation\",\n"
    "  \"workload\": {\"name\": \"tpcc\", \"txns\": 2000},\n"
    "  \"cells\": [{\"name\": \"baseline\", \"warehouses\": 4},\n"
    "            {\"name\": \"aimd\", \"loop\": \"aimd\", \"ai_step\": 8, \"warehouses\": 4},\n"
    "            {\"name\": \"wide\", \"warehouses\": 8, \"threads\": 2}],\n"
    "  \"axes\": {\"regime\": [\"uniform\", \"extreme\"]},\n"
    "  \"reps\": 2, \"seed\": 3,\n"
    "  \"run\": {\"backend\": \"sim\", \"cns\": 2, \"coros\": 2, \"window_ms\": 1}}\n";

START_TEST(test_cells_parse_and_plan)
{
	dmr_sweep_spec_t s;
	dmr_sweep_plan_t p;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(cells_spec, "c.json", &s, &err), DMR_OK);
	ck_assert_uint_eq(s.nsets, 3);
	ck_assert_str_eq(s.sets[1].name, "aimd");
	ck_assert_uint_eq(s.sets[1].nopts, 3);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.ncells, 6);
	ck_assert_uint_eq(p.njobs, 12);
	/* the named set outermost, then the axes; rep-major */
	ck_assert_str_eq(p.jobs[0].cell, "cell=baseline;regime=uniform");
	ck_assert_str_eq(p.jobs[1].cell, "cell=baseline;regime=extreme");
	ck_assert_str_eq(p.jobs[2].cell, "cell=aimd;regime=uniform");
	ck_assert_str_eq(p.jobs[5].cell, "cell=wide;regime=extreme");
	ck_assert_str_eq(p.jobs[6].cell, "cell=baseline;regime=uniform");
	ck_assert_uint_eq(p.jobs[6].rep, 1);
	ck_assert_str_eq(p.jobs[3].dir, "cell=aimd+regime=extreme-r0");
	ck_assert_int_eq(p.jobs[4].set, 2);
	ck_assert_uint_eq(p.jobs[6].seed, 4);
	/* a generator setting of a cell makes its own trace; a run option not */
	ck_assert_str_eq(p.jobs[0].trace, p.jobs[2].trace);
	ck_assert_str_ne(p.jobs[0].trace, p.jobs[4].trace);
	ck_assert_ptr_nonnull(strstr(p.jobs[4].trace, "warehouses=8"));
	/* argument vectors: the cell's run options on run, its generator
	 * settings on gen */
	char **av = dmr_sweep_run_argv(&s, &p.jobs[3], "dmr", "t.csv", "d");
	ck_assert_ptr_nonnull(av);
	char line[2048] = "";
	for (char **a = av; *a; a++) {
		strcat(line, *a);
		strcat(line, " ");
	}
	dmr_sweep_argv_free(av);
	ck_assert_msg(strstr(line, " --loop aimd --ai-step 8 ") != NULL, "%s", line);
	ck_assert_msg(strstr(line, "--warehouses") == NULL, "%s", line);
	av = dmr_sweep_gen_argv(&s, &p.jobs[5], "dmr", "t.csv");
	ck_assert_ptr_nonnull(av);
	line[0] = 0;
	for (char **a = av; *a; a++) {
		strcat(line, *a);
		strcat(line, " ");
	}
	dmr_sweep_argv_free(av);
	ck_assert_msg(strstr(line, "--warehouses 8 ") && strstr(line, "--regime extreme "), "%s",
		      line);
	ck_assert_msg(strstr(line, "--threads") == NULL, "%s", line);
	/* the fingerprint lists the cells in order and their options */
	char *n = dmr_sweep_spec_normalised(&s);
	ck_assert_ptr_nonnull(n);
	ck_assert_msg(strstr(n, "\naxes.cell=baseline,aimd,wide\n"), "%s", n);
	ck_assert_msg(strstr(n, "\ncells.aimd=ai_step=8;loop=aimd;warehouses=4\n"), "%s", n);
	free(n);
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
	/* cells alone: one cell per name */
	ck_assert_int_eq(dmr_sweep_spec_parse("{\"workload\": {\"name\": \"tpcc\"}, \"cells\": "
					      "[{\"name\": \"a\"}, {\"name\": \"b\", \"loop\": "
					      "\"perkey\"}]}",
					      "c2.json", &s, &err),
			 DMR_OK);
	ck_assert_int_eq(dmr_sweep_plan_build(&s, &p, &err), DMR_OK);
	ck_assert_uint_eq(p.njobs, 2);
	ck_assert_str_eq(p.jobs[0].cell, "cell=a");
	ck_assert_str_eq(p.jobs[1].cell, "cell=b");
	dmr_sweep_plan_free(&p);
	dmr_sweep_spec_free(&s);
}
END_TEST

#define W "{\"workload\": {\"name\": \"tpcc\", \"regime\": \"uniform\"}, "
static const struct {
	const char *json, *want;
} bad_cells[] = {
    {W "\"cells\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"a\"}]}",
     "cells[2].name: 'a' also names cells[0]"},
    {W "\"cells\": [{\"name\": \"a\", \"colour\": 1}]}", "cells[0] (a).colour: unknown option"},
    {W "\"cells\": [{\"name\": \"a\", \"ai_step\": \"8\"}]}",
     "cells[0] (a).ai_step: expected an integer >= 1, got a string ('8')"},
    {W "\"cells\": [{\"name\": \"a\"}, {\"name\": \"b\", \"md_factor\": true}]}",
     "cells[1] (b).md_factor: expected a number > 0, got a boolean"},
    {W "\"cells\": [{\"name\": \"a\", \"regime\": \"extreme\"}]}",
     "cells[0] (a).regime: also fixed in workload.regime"},
    {W "\"run\": {\"threads\": 4}, \"cells\": [{\"name\": \"a\", \"threads\": 8}]}",
     "cells[0] (a).threads: also fixed in run.threads"},
    {W "\"axes\": {\"loop\": [\"none\"]}, \"cells\": [{\"name\": \"a\", \"loop\": \"aimd\"}]}",
     "cells[0] (a).loop: also an axis (axes.loop)"},
    {W "\"cells\": [{\"name\": \"a\", \"seed\": 4}]}", "cells[0] (a).seed: set by the sweep"},
    {W "\"cells\": [{\"name\": \"a\", \"accounts\": 4}]}",
     "cells[0] (a).accounts: not a setting of workload tpcc"},
    {W "\"cells\": [{\"loop\": \"aimd\"}]}", "cells[0].name: missing"},
    {W "\"cells\": [{\"name\": \"a;b\"}]}", "cells[0].name: expected a string"},
    {W "\"cells\": [{\"name\": 3}]}", "cells[0].name: expected a string"},
    {W "\"cells\": []}", "cells: expected a non-empty array"},
    {W "\"cells\": {\"name\": \"a\"}}", "cells: expected a non-empty array"},
    {W "\"cells\": [\"a\"]}", "cells[0]: expected an object"},
    {W "\"cells\": [{\"name\": \"a\", \"loop\": \"x y\"}]}", "cells[0] (a).loop: 'x y' is not"},
};
#undef W

START_TEST(test_cells_bad)
{
	dmr_sweep_spec_t s;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_sweep_spec_parse(bad_cells[_i].json, "x.json", &s, &err),
			 DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, bad_cells[_i].want) != NULL, "want '%s' in '%s'",
		      bad_cells[_i].want, err.msg);
	ck_assert_msg(strncmp(err.msg, "x.json: ", 8) == 0, "file not named: '%s'", err.msg);
}
END_TEST

/* The number of lines of a file (0 when missing). */
static int lines_of(const char *path)
{
	char *t = dmr_test_slurp(path, NULL);
	int n = 0;
	for (char *p = t; p && *p; p++)
		n += *p == '\n';
	free(t);
	return n;
}

START_TEST(test_cells_end_to_end)
{
	char spec[PATH_MAX], dir[PATH_MAX], sum[PATH_MAX + 32], p[PATH_MAX + 64];
	dmr_test_path(spec, sizeof(spec), "cells.json");
	dmr_test_write_file(spec, cells_spec);
	dmr_test_path(dir, sizeof(dir), "sw");
	snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
	dmr_test_run_t r = dmr_test_dmr("sweep", spec, "--out", dir, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	ck_assert_int_eq(lines_of(sum), 1 + 12);
	char *t = dmr_test_slurp(sum, NULL);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t, "\ncell=aimd;regime=extreme,1,tpcc,extreme,aimd,"));
	ck_assert_ptr_nonnull(strstr(t, "\ncell=wide;regime=uniform,0,tpcc,uniform,none,"));
	free(t);
	/* a finished cell's run is not re-run: its summary stays the file it
	 * was (same inode and mtime), and no row is added */
	snprintf(p, sizeof(p), "%s/cells/cell=aimd+regime=extreme-r1/summary.csv", dir);
	struct stat a, b;
	ck_assert_int_eq(stat(p, &a), 0);
	/* one row lost (as if that run had not finished): only it runs again */
	t = dmr_test_slurp(sum, NULL);
	char *last = strrchr(t, '\n');
	*last = 0;
	last = strrchr(t, '\n');
	last[1] = 0;
	dmr_test_write_file(sum, t);
	free(t);
	r = dmr_test_dmr("sweep", spec, "--out", dir, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.err, "12 of 12 runs done (1 now") || strstr(r.out, "(1 now"),
		      "stdout:\n%s\nstderr:\n%s", r.out, r.err);
	dmr_test_run_free(&r);
	ck_assert_int_eq(lines_of(sum), 1 + 12);
	ck_assert_int_eq(stat(p, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
		  a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);

	/* the report: cells by name, ratios to the first named cell */
	r = dmr_test_dmr("report", sum, "--no-plots", "--quiet", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	snprintf(p, sizeof(p), "%s/report/report.md", dir);
	t = dmr_test_slurp(p, NULL);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(strstr(t, "## committed_tps vs cell=baseline"), "%s", t);
	ck_assert_msg(strstr(t, "| cell=baseline | cell=aimd | cell=wide |"), "%s", t);
	free(t);
	snprintf(p, sizeof(p), "%s/report/report.csv", dir);
	t = dmr_test_slurp(p, NULL);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(strstr(t, "\ncell=aimd;regime=extreme,"), "%s", t);
	free(t);

	/* a bad spec: exit 2, the file, the cell and the field named */
	dmr_test_path(p, sizeof(p), "dup.json");
	dmr_test_write_file(p,
			    "{\"workload\": {\"name\": \"tpcc\"}, \"cells\": [{\"name\": \"x\"}, "
			    "{\"name\": \"x\", \"loop\": \"aimd\"}]}");
	r = dmr_test_dmr("sweep", p, "--out", dir, "--dry-run", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "dup.json: cells[1].name: 'x' also names cells[0]"), "%s",
		      r.err);
	dmr_test_run_free(&r);
}
END_TEST

/* A percentage mix as a generator axis: colons for the commas a cell name
 * cannot hold; the two cells' traces are generated and replayed, the
 * custom mix's header records its percentages with commas. */
START_TEST(test_percent_mix_axis)
{
	char p[PATH_MAX], dir[PATH_MAX], sum[PATH_MAX + 16];
	dmr_test_path(p, sizeof(p), "mix.json");
	dmr_test_path(dir, sizeof(dir), "swmix");
	dmr_test_write_file(p, "{\"workload\": {\"name\": \"tpcc\", \"txns\": 300, "
			       "\"warehouses\": 2}, \"axes\": {\"mix\": [\"dm\", "
			       "\"30:30:20:10:10\"]}, \"reps\": 1, \"run\": {\"cns\": 1, "
			       "\"threads\": 2}}");
	dmr_test_run_t r = dmr_test_dmr("sweep", p, "--out", dir, "--jobs", "1", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
	char *t = dmr_test_slurp(sum, NULL);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(strstr(t, "\nmix=dm,") && strstr(t, "\nmix=30:30:20:10:10,"), "%s", t);
	free(t);
	/* a bad percentage mix refused at plan time, naming the axis value;
	 * commas in a fixed workload mix: the hint to use colons */
	dmr_test_path(p, sizeof(p), "badmix.json");
	dmr_test_write_file(p, "{\"workload\": {\"name\": \"tpcc\", \"txns\": 300}, \"axes\": "
			       "{\"mix\": [\"dm\", \"30:30:20:10:11\"]}}");
	dmr_test_path(dir, sizeof(dir), "swbadmix");
	r = dmr_test_dmr("sweep", p, "--out", dir, "--dry-run", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "axes.mix[1]: --mix: '30:30:20:10:11': the percentages sum to "
				    "101, not 100"),
		      "%s", r.err);
	dmr_test_run_free(&r);
	dmr_test_write_file(p, "{\"workload\": {\"name\": \"tpcc\", \"mix\": \"30,30,20,10,10\"}, "
			       "\"axes\": {\"loop\": [\"none\"]}}");
	r = dmr_test_dmr("sweep", p, "--out", dir, "--dry-run", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "a percentage mix takes colons"), "%s", r.err);
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("sweep-cells", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("sweep_cells");
	TCase *tc = tcase_create("cells");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_cells_parse_and_plan);
	tcase_add_loop_test(tc, test_cells_bad, 0, sizeof(bad_cells) / sizeof(bad_cells[0]));
	tcase_add_test(tc, test_cells_end_to_end);
	tcase_add_test(tc, test_percent_mix_axis);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
