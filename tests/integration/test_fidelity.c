/*
 * tests/integration/test_fidelity.c - `dmreplay fidelity` (replay/tools/,
 * docs/fidelity.md) without a device:
 *  - the table math on synthetic inputs: relative errors, PASS/FAIL at and
 *    around the 15 % (throughput) and 20 % (p50) tolerances, rows without
 *    numbers (a failed run) fail; the CSV and Markdown renderings;
 *  - the command: no --device, or a device that cannot be opened (no RDMA
 *    here; in the VM a name that is not there) -> one clear error, exit 3,
 *    nothing written; bad options -> exit 2;
 *  - --traces that are missing, a directory, not a trace, or empty -> exit 2
 *    before anything is opened or made;
 *  - with the "measured" side on the sim too (DMR_FIDELITY_TEST_MEASURE_SIM):
 *    SIGINT/SIGTERM mid-replay -> exit 130 at once, the finished table of an
 *    earlier run byte-identical, fidelity.partial.{csv,md} beside it; a
 *    failed run -> partial table, the finished one kept.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/tools/fidelity.h"

#define SMALL "--cns", "1", "--threads", "2", "--coros", "2"

static dmr_fid_row_t row(const char *name, double mt, double pt, double m50, double p50, double m99,
			 double p99)
{
	dmr_fid_row_t r;
	memset(&r, 0, sizeof(r));
	snprintf(r.trace, sizeof(r.trace), "%s", name);
	r.meas_tps = mt;
	r.pred_tps = pt;
	r.meas_p50 = m50;
	r.pred_p50 = p50;
	r.meas_p99 = m99;
	r.pred_p99 = p99;
	r.meas_abort = 0.25;
	r.pred_abort = 0.5;
	dmr_fid_row_compute(&r);
	return r;
}

START_TEST(test_rel_err)
{
	ck_assert_double_eq_tol(dmr_fid_rel_err(115, 100), 0.15, 1e-12);
	ck_assert_double_eq_tol(dmr_fid_rel_err(50, 100), -0.5, 1e-12);
	ck_assert_double_eq_tol(dmr_fid_rel_err(300, 100), 2.0, 1e-12);
	ck_assert(isnan(dmr_fid_rel_err(1, 0)));
	ck_assert(isnan(dmr_fid_rel_err(1, -1)));
	ck_assert(isnan(dmr_fid_rel_err(NAN, 1)));
	ck_assert(isnan(dmr_fid_rel_err(1, INFINITY)));
}
END_TEST

START_TEST(test_pass_fail)
{
	/* exactly at the limits: pass */
	dmr_fid_row_t r = row("edge", 1000, 850, 100, 120, 500, 900);
	ck_assert_double_eq_tol(r.err_tps, -0.15, 1e-12);
	ck_assert_double_eq_tol(r.err_p50, 0.20, 1e-12);
	ck_assert_double_eq_tol(r.err_p99, 0.80, 1e-12);
	ck_assert_int_eq(r.pass_tps, 1);
	ck_assert_int_eq(r.pass_p50, 1);
	ck_assert_int_eq(r.pass, 1); /* p99 is not judged */
	/* just outside: throughput fails, p50 passes */
	r = row("tps-off", 1000, 1160, 100, 81, 500, 500);
	ck_assert_int_eq(r.pass_tps, 0);
	ck_assert_int_eq(r.pass_p50, 1);
	ck_assert_int_eq(r.pass, 0);
	/* p50 fails either way */
	r = row("p50-low", 1000, 1000, 100, 79, 500, 500);
	ck_assert_int_eq(r.pass_tps, 1);
	ck_assert_int_eq(r.pass_p50, 0);
	ck_assert_int_eq(r.pass, 0);
	r = row("p50-high", 1000, 1000, 100, 121, 500, 500);
	ck_assert_int_eq(r.pass_p50, 0);
	/* a run without numbers (measured 0) fails; so does a row with a note */
	r = row("no-meas", 0, 1000, 0, 100, 0, 100);
	ck_assert(isnan(r.err_tps));
	ck_assert_int_eq(r.pass_tps, 0);
	ck_assert_int_eq(r.pass_p50, 0);
	ck_assert_int_eq(r.pass, 0);
	r = row("noted", 1000, 1000, 100, 100, 500, 500);
	snprintf(r.note, sizeof(r.note), "verbs: failed");
	dmr_fid_row_compute(&r);
	ck_assert_int_eq(r.pass_tps, 1);
	ck_assert_int_eq(r.pass, 0);
}
END_TEST

static char *render(int (*fn)(const dmr_fid_row_t *, size_t, FILE *), const dmr_fid_row_t *rows,
		    size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fn(rows, n, f), 0);
	fclose(f);
	return buf;
}

START_TEST(test_tables)
{
	dmr_fid_row_t rows[2] = {row("tpcc-uniform", 2000, 2500, 100, 90, 400, 300),
				 row("ycsb-a", 0, 1000, 0, 100, 0, 100)};
	char *csv = render(dmr_fid_write_csv, rows, 2);
	ck_assert_ptr_nonnull(strstr(csv, "trace,meas_tps,pred_tps,err_tps,meas_p50_us,"));
	ck_assert_ptr_nonnull(strstr(csv, "\ntpcc-uniform,2000,2500,0.25,100,90,-0.1,400,300,-0.25,"
					  "0.25,0.5,FAIL,PASS,FAIL,0.15,0.20,,0,,,,,,0,0.10\n"));
	/* NAN errors are empty fields */
	ck_assert_ptr_nonnull(
	    strstr(csv, "\nycsb-a,0,1000,,0,100,,0,100,,0.25,0.5,FAIL,FAIL,FAIL,"));
	int lines = 0;
	for (char *p = csv; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 3);
	free(csv);

	char *md = render(dmr_fid_write_md, rows, 2);
	ck_assert_ptr_nonnull(strstr(md, "| trace | measured K txn/s |"));
	ck_assert_ptr_nonnull(strstr(md, "| tpcc-uniform | 2.00 | 2.50 | +25.0 % | 100.0 | 90.0 | "
					 "-10.0 % | 400.0 | 300.0 | -25.0 % | 25.0 % / 50.0 % | "
					 "FAIL | PASS |"));
	ck_assert_ptr_nonnull(strstr(md, "| ycsb-a | 0.00 | 1.00 | n/a |"));
	free(md);

	char *txt = render(dmr_fid_print, rows, 2);
	ck_assert_ptr_nonnull(strstr(txt, "tpcc-uniform"));
	ck_assert_ptr_null(strstr(txt, "UNSTABLE"));
	free(txt);
	/* three rounds whose throughput spreads over more than the 15 %
	 * tolerance: UNSTABLE, whatever the host's load said */
	rows[0].rounds = 3;
	rows[0].spread_tps = 0.44;
	rows[0].spread_p50 = 0.05;
	rows[0].host_other = 0.024;
	rows[0].host_steal = 0;
	txt = render(dmr_fid_print, rows, 1);
	ck_assert_msg(strstr(txt, "3: 44.0 %/5.0 %, 2.4 %/0.0 %, quiet, UNSTABLE"), "%s", txt);
	free(txt);
	rows[0].spread_tps = 0.10;
	txt = render(dmr_fid_print, rows, 1);
	ck_assert_msg(strstr(txt, "3: 10.0 %/5.0 %, 2.4 %/0.0 %, quiet\n"), "%s", txt);
	free(txt);
	rows[0].rounds = 0;
	txt = render(dmr_fid_print, rows, 2);
	ck_assert_ptr_nonnull(strstr(txt, "+25.0 %"));
	ck_assert_ptr_nonnull(strstr(txt, "FAIL PASS"));
	free(txt);
}
END_TEST

static int exists(const char *name)
{
	char p[PATH_MAX];
	dmr_test_path(p, sizeof(p), name);
	struct stat sb;
	return stat(p, &sb) == 0;
}

START_TEST(test_no_device)
{
	char prof[PATH_MAX + 64], out[PATH_MAX];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	dmr_test_path(out, sizeof(out), "fid-out");
	/* no --device */
	dmr_test_run_t r = dmr_test_dmr("fidelity", "--profile", prof, "--out", out, NULL);
	ck_assert_msg(r.status == 3, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "error: no device"));
	ck_assert_ptr_nonnull(strstr(r.err, "--device"));
	ck_assert_str_eq(r.out, "");
	dmr_test_run_free(&r);
	/* a device that is not there (no RDMA here, or not that name) */
	r = dmr_test_dmr("fidelity", "--profile", prof, "--device", "dmr_no_such_dev0", "--out",
			 out, NULL);
	ck_assert_msg(r.status == 3, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "device 'dmr_no_such_dev0' cannot be used"));
	ck_assert_str_eq(r.out, "");
	/* one line */
	ck_assert_ptr_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	dmr_test_run_free(&r);
	ck_assert(!exists("fid-out"));
}
END_TEST

START_TEST(test_usage)
{
	char prof[PATH_MAX + 64];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	dmr_test_run_t r = dmr_test_dmr("fidelity", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "3 no device"));
	dmr_test_run_free(&r);
	r = dmr_test_dmr("fidelity", "--device", "rxe0", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "--profile P is required"));
	dmr_test_run_free(&r);
	r = dmr_test_dmr("fidelity", "--profile", "/nonexistent/p.json", "--device", "rxe0", NULL);
	ck_assert_int_eq(r.status, 2);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("fidelity", "--profile", prof, "--device", "rxe0", "--coros", "0", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "option --coros"));
	dmr_test_run_free(&r);
	r = dmr_test_dmr("fidelity", "--profile", prof, "--device", "rxe0", "extra", NULL);
	ck_assert_int_eq(r.status, 2);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_traces_checked)
{
	char prof[PATH_MAX + 64], out[PATH_MAX], dir[PATH_MAX], junk[PATH_MAX];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	dmr_test_path(out, sizeof(out), "fid-tr-out");
	dmr_test_path(dir, sizeof(dir), "fid-tr-dir");
	dmr_test_path(junk, sizeof(junk), "fid-junk.csv");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	FILE *f = fopen(junk, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "a,b,c\n1,2,3\n");
	fclose(f);
	struct {
		const char *arg, *msg;
	} bad[] = {
	    {"/nonexistent/dir", "No such file"},
	    {dir, "not a regular file"},
	    {junk, "not a trace"},
	    {"", "names no trace"},
	    {",", "names no trace"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* refused before the device is looked at (no RDMA here: 3 otherwise) */
		dmr_test_run_t r =
		    dmr_test_dmr("fidelity", "--profile", prof, "--device", "dmr_no_such_dev0",
				 "--out", out, "--traces", bad[i].arg, NULL);
		ck_assert_msg(r.status == 2, "--traces '%s': exit %d: %s", bad[i].arg, r.status,
			      r.err);
		ck_assert_msg(strstr(r.err, bad[i].msg), "--traces '%s': %s", bad[i].arg, r.err);
		ck_assert_str_eq(r.out, "");
		dmr_test_run_free(&r);
		ck_assert(!exists("fid-tr-out"));
	}
}
END_TEST

/* The rest runs "measured" on the sim too (DMR_FIDELITY_TEST_MEASURE_SIM):
 * the table is 0 % error, what is tested is the command around it. */
static void gen(const char *name, const char *txns)
{
	char p[PATH_MAX];
	dmr_test_path(p, sizeof(p), name);
	dmr_test_run_t r = dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--txns", txns,
					"--seed", "1", "--quiet", "-o", p, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

static char *slurp_of(const char *name)
{
	char p[PATH_MAX];
	dmr_test_path(p, sizeof(p), name);
	return dmr_test_slurp(p, NULL);
}

/* A finished table in fid-keep/: returns its CSV and MD. */
static void finished_table(const char *prof, char **csv, char **md)
{
	char out[PATH_MAX], small[PATH_MAX];
	dmr_test_path(out, sizeof(out), "fid-keep");
	dmr_test_path(small, sizeof(small), "small.csv");
	dmr_test_run_t r = dmr_test_dmr("fidelity", "--profile", prof, "--out", out, "--traces",
					small, SMALL, "--quiet", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	*csv = slurp_of("fid-keep/fidelity.csv");
	*md = slurp_of("fid-keep/fidelity.md");
	ck_assert_ptr_nonnull(*csv);
	ck_assert_ptr_nonnull(*md);
	ck_assert_ptr_nonnull(strstr(*csv, "\nsmall,"));
	ck_assert(!exists("fid-keep/fidelity.partial.csv"));
}

START_TEST(test_interrupt)
{
	char prof[PATH_MAX + 64], out[PATH_MAX], list[2 * PATH_MAX + 2], big[PATH_MAX],
	    small[PATH_MAX], errp[PATH_MAX];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	setenv("DMR_FIDELITY_TEST_MEASURE_SIM", "1", 1);
	gen("small.csv", "300");
	gen("big.csv", "60000");
	dmr_test_path(out, sizeof(out), "fid-keep");
	dmr_test_path(big, sizeof(big), "big.csv");
	dmr_test_path(small, sizeof(small), "small.csv");
	dmr_test_path(errp, sizeof(errp), "fid-int.err");
	snprintf(list, sizeof(list), "%s,%s", big, small);
	int sigs[] = {SIGINT, SIGTERM};
	for (int s = 0; s < 2; s++) {
		char *csv, *md;
		finished_table(prof, &csv, &md);
		/* the previous signal's stderr would be read as this child's
		 * before it truncates the file (a race that killed the child
		 * before its handler was installed under ASan) */
		unlink(errp);
		fflush(NULL);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int fo = open("/dev/null", O_WRONLY);
			if (fe < 0 || fo < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
				_exit(126);
			execl(dmr_test_bin, dmr_test_bin, "fidelity", "--profile", prof, "--out",
			      out, "--traces", list, SMALL, (char *)NULL);
			_exit(127);
		}
		/* wait until the first replay of the big trace has started */
		char *e = NULL;
		for (int i = 0; i < 600; i++) {
			free(e);
			e = dmr_test_slurp(errp, NULL);
			if (e && strstr(e, "big on sim ..."))
				break;
			usleep(50000);
		}
		ck_assert_msg(e && strstr(e, "big on sim ..."), "%s", e ? e : "");
		free(e);
		usleep(100000);
		kill(pid, sigs[s]);
		int ws;
		while (waitpid(pid, &ws, 0) < 0)
			ck_assert_int_eq(errno, EINTR);
		e = dmr_test_slurp(errp, NULL);
		ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 130, "status %d: %s", ws, e);
		ck_assert_msg(strstr(e, "interrupted"), "%s", e);
		/* stopped at once: the second trace never ran */
		ck_assert_msg(!strstr(e, "small on"), "%s", e);
		free(e);
		/* the finished table is byte-identical; the partial one is beside it */
		char *csv2 = slurp_of("fid-keep/fidelity.csv"),
		     *md2 = slurp_of("fid-keep/fidelity.md");
		ck_assert_str_eq(csv2, csv);
		ck_assert_str_eq(md2, md);
		char *pc = slurp_of("fid-keep/fidelity.partial.csv");
		char *pm = slurp_of("fid-keep/fidelity.partial.md");
		ck_assert_ptr_nonnull(pc);
		ck_assert_ptr_nonnull(pm);
		ck_assert_ptr_nonnull(strstr(pc, "\nbig,"));
		ck_assert_ptr_nonnull(strstr(pc, "interrupted"));
		ck_assert_ptr_null(strstr(pc, "\nsmall,"));
		ck_assert_ptr_nonnull(strstr(pm, "PARTIAL: interrupted"));
		ck_assert(!exists("fid-keep/fidelity.csv.tmp"));
		free(csv), free(md), free(csv2), free(md2), free(pc), free(pm);
	}
	unsetenv("DMR_FIDELITY_TEST_MEASURE_SIM");
}
END_TEST

START_TEST(test_failed_run_keeps_table)
{
	char prof[PATH_MAX + 64], out[PATH_MAX], bad[PATH_MAX], list[2 * PATH_MAX + 2],
	    small[PATH_MAX];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	setenv("DMR_FIDELITY_TEST_MEASURE_SIM", "1", 1);
	gen("small.csv", "300");
	char *csv, *md;
	finished_table(prof, &csv, &md);
	/* a trace with a good header and a broken body: the run fails */
	dmr_test_path(bad, sizeof(bad), "broken.csv");
	dmr_test_path(small, sizeof(small), "small.csv");
	char *t = dmr_test_slurp(small, NULL);
	ck_assert_ptr_nonnull(t);
	FILE *f = fopen(bad, "w");
	ck_assert_ptr_nonnull(f);
	fputs(t, f);
	fputs("this,is,not,a,trace,line\n", f);
	fclose(f);
	free(t);
	dmr_test_path(out, sizeof(out), "fid-keep");
	snprintf(list, sizeof(list), "%s,%s", small, bad);
	dmr_test_run_t r = dmr_test_dmr("fidelity", "--profile", prof, "--out", out, "--traces",
					list, SMALL, "--quiet", NULL);
	ck_assert_msg(r.status == 1 || r.status == 2, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "broken on sim"));
	ck_assert_ptr_nonnull(strstr(r.err, "table (partial)"));
	dmr_test_run_free(&r);
	char *csv2 = slurp_of("fid-keep/fidelity.csv"), *md2 = slurp_of("fid-keep/fidelity.md");
	ck_assert_str_eq(csv2, csv);
	ck_assert_str_eq(md2, md);
	char *pc = slurp_of("fid-keep/fidelity.partial.csv");
	ck_assert_ptr_nonnull(pc);
	ck_assert_ptr_nonnull(strstr(pc, "\nsmall,"));
	ck_assert_ptr_nonnull(strstr(pc, "\nbroken,"));
	free(csv), free(md), free(csv2), free(md2), free(pc);
	unsetenv("DMR_FIDELITY_TEST_MEASURE_SIM");
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("fidelity", 1, 0) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("fidelity");
	TCase *tc = tcase_create("fidelity");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rel_err);
	tcase_add_test(tc, test_pass_fail);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_no_device);
	tcase_add_test(tc, test_usage);
	tcase_add_test(tc, test_traces_checked);
	tcase_add_test(tc, test_interrupt);
	tcase_add_test(tc, test_failed_run_keeps_table);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
