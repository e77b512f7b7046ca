/*
 * tests/integration/test_hostload.c - the host's load around calibrate's
 * and fidelity's measurements (replay/tools/hostload.h, issue 16 item 8).
 *
 * A host made busy by this test (one spinning process per online CPU) is
 * seen as loaded: the quiet window's "other" share is above 0.5, over
 * DMR_HOSTLOAD_LIMIT, in the API, in calibrate (every round LOADED, the
 * WARNING, the profile's measured.host_load) and in fidelity (the CSV's
 * loaded_rounds = rounds, the text's "LOADED 3 of 3") through the test
 * hook DMR_TEST_SAMPLE_HOST (the sim stands for the device). Without the
 * hook a sim run is not sampled (its time is simulated), and fidelity's
 * three measured rounds of the deterministic sim have a spread of 0. The
 * quiet case cannot be asserted here: the test host is shared.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/tools/hostload.h"

#define MAX_SPIN 64

static pid_t spin[MAX_SPIN];
static int nspin;

/* One process spinning per online CPU (at most MAX_SPIN). */
static void spin_start(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	nspin = n < 1 ? 1 : n > MAX_SPIN ? MAX_SPIN : (int)n;
	for (int i = 0; i < nspin; i++) {
		spin[i] = fork();
		ck_assert_int_ge(spin[i], 0);
		if (spin[i] == 0) {
			volatile unsigned long x = 0;
			for (;;)
				x++;
		}
	}
	usleep(100000); /* let them run */
}

static void spin_stop(void)
{
	for (int i = 0; i < nspin; i++) {
		kill(spin[i], SIGKILL);
		waitpid(spin[i], NULL, 0);
	}
	nspin = 0;
}

START_TEST(api_sees_a_busy_host)
{
	spin_start();
	dmr_hostload_t h;
	dmr_hostload_snap_t s;
	dmr_hostload_begin(&h, &s);
	usleep(50000);
	dmr_hostload_end(&h, &s);
	spin_stop();
	ck_assert_int_eq(h.known, 1);
	ck_assert_msg(h.other > 0.5 && h.other <= 1.0, "other %.3f", h.other);
	ck_assert(h.steal >= 0 && h.steal <= 1);
	ck_assert(h.loadavg1 >= 0);
	ck_assert_int_eq(h.loaded, 1);
	char b[96];
	dmr_hostload_format(&h, b, sizeof(b));
	ck_assert_msg(strstr(b, "LOADED") && strstr(b, "other "), "%s", b);
	ck_assert_int_eq(dmr_hostload_wanted(0), 1);
	unsetenv("DMR_TEST_SAMPLE_HOST");
	ck_assert_int_eq(dmr_hostload_wanted(1), 0);
	setenv("DMR_TEST_SAMPLE_HOST", "1", 1);
	ck_assert_int_eq(dmr_hostload_wanted(1), 1);
}
END_TEST

START_TEST(calibrate_flags_loaded_rounds)
{
	dmr_test_tmp_make();
	char out[600], out2[600];
	dmr_test_path(out, sizeof(out), "p.json");
	dmr_test_path(out2, sizeof(out2), "q.json");
	setenv("DMR_TEST_SAMPLE_HOST", "1", 1);
	spin_start();
	dmr_test_run_t c =
	    dmr_test_dmr("calibrate", "--backend", "sim", "--quick", "-o", out, NULL);
	spin_stop();
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	for (int r = 1; r <= 3; r++) {
		char want[64];
		snprintf(want, sizeof(want), "\n  round %-3d other ", r);
		const char *p = strstr(c.out, want);
		ck_assert_msg(p, "round %d: %s", r, c.out);
		ck_assert_msg(strstr(p, "LOADED") < strchr(p + 1, '\n'), "round %d not loaded", r);
	}
	ck_assert_ptr_nonnull(strstr(c.out, "WARNING: 3 of 3 rounds ran on a loaded host"));
	dmr_test_run_free(&c);
	json_error_t je;
	json_t *root = json_load_file(out, 0, &je);
	ck_assert_msg(root, "%s: %s", out, je.text);
	json_t *hl = json_object_get(json_object_get(root, "measured"), "host_load");
	ck_assert_ptr_nonnull(hl);
	ck_assert_int_eq(json_integer_value(json_object_get(hl, "rounds")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(hl, "loaded_rounds")), 3);
	ck_assert(json_is_true(json_object_get(hl, "sampled")));
	ck_assert_double_eq_tol(json_real_value(json_object_get(hl, "limit")), 0.10, 1e-12);
	json_t *r0 = json_array_get(json_object_get(hl, "per_round"), 0);
	ck_assert(json_real_value(json_object_get(r0, "other")) > 0.5);
	json_decref(root);
	/* without the hook the sim is not sampled */
	unsetenv("DMR_TEST_SAMPLE_HOST");
	c = dmr_test_dmr("calibrate", "--backend", "sim", "--quick", "-o", out2, NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_ptr_nonnull(strstr(c.out, "host load: not sampled"));
	dmr_test_run_free(&c);
	root = json_load_file(out2, 0, &je);
	ck_assert_ptr_nonnull(root);
	hl = json_object_get(json_object_get(root, "measured"), "host_load");
	ck_assert(json_is_false(json_object_get(hl, "sampled")));
	ck_assert_int_eq(json_integer_value(json_object_get(hl, "loaded_rounds")), 0);
	json_decref(root);
	dmr_test_tmp_remove();
}
END_TEST

/* The CSV row's field k (0-based) of the line starting with name. */
static void csv_field(const char *csv, const char *name, int k, char *buf, size_t len)
{
	char key[64];
	snprintf(key, sizeof(key), "\n%s,", name);
	const char *p = strstr(csv, key);
	ck_assert_msg(p, "%s", csv);
	p++;
	for (int i = 0; i < k; i++) {
		p = strchr(p, ',');
		ck_assert_ptr_nonnull(p);
		p++;
	}
	size_t n = strcspn(p, ",\n");
	snprintf(buf, len, "%.*s", (int)n, p);
}

START_TEST(fidelity_rounds_and_load)
{
	dmr_test_tmp_make();
	char trace[600], out[600], out2[600], csvp[700];
	dmr_test_path(trace, sizeof(trace), "small.csv");
	dmr_test_path(out, sizeof(out), "fid");
	dmr_test_path(out2, sizeof(out2), "fid2");
	dmr_test_run_t g = dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--txns", "300",
					"--seed", "1", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&g);
	dmr_test_run_free(&g);
	char prof[700];
	snprintf(prof, sizeof(prof), "%s/models/rxe-qemu.json", dmr_test_src);
	setenv("DMR_FIDELITY_TEST_MEASURE_SIM", "1", 1);
	setenv("DMR_TEST_SAMPLE_HOST", "1", 1);
	spin_start();
	dmr_test_run_t c =
	    dmr_test_dmr("fidelity", "--profile", prof, "--out", out, "--traces", trace, "--cns",
			 "1", "--threads", "2", "--coros", "2", "--quiet", NULL);
	spin_stop();
	ck_assert_msg(c.status == 0, "status %d: %s %s", c.status, c.out, c.err);
	ck_assert_msg(strstr(c.out, "LOADED 3 of 3"), "%s", c.out);
	dmr_test_run_free(&c);
	snprintf(csvp, sizeof(csvp), "%s/fidelity.csv", out);
	char *csv = dmr_test_read_text(csvp);
	ck_assert_ptr_nonnull(strstr(csv, ",note,rounds,spread_tps,spread_p50,host_other,"
					  "host_steal,host_loadavg,loaded_rounds,host_limit\n"));
	char f[64];
	csv_field(csv, "small", 18, f, sizeof(f));
	ck_assert_str_eq(f, "3"); /* rounds */
	csv_field(csv, "small", 19, f, sizeof(f));
	ck_assert_str_eq(f, "0"); /* the sim's rounds do not spread */
	csv_field(csv, "small", 21, f, sizeof(f));
	ck_assert_msg(atof(f) > 0.5, "host_other %s", f);
	csv_field(csv, "small", 24, f, sizeof(f));
	ck_assert_str_eq(f, "3"); /* loaded_rounds */
	csv_field(csv, "small", 25, f, sizeof(f));
	ck_assert_str_eq(f, "0.10");
	free(csv);
	/* --rounds 2 without the hook: not sampled, two rounds */
	unsetenv("DMR_TEST_SAMPLE_HOST");
	c = dmr_test_dmr("fidelity", "--profile", prof, "--out", out2, "--traces", trace, "--cns",
			 "1", "--threads", "2", "--coros", "2", "--rounds", "2", "--quiet", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_msg(strstr(c.out, "2: 0.0 %/0.0 %, host not sampled"), "%s", c.out);
	dmr_test_run_free(&c);
	c = dmr_test_dmr("fidelity", "--profile", prof, "--out", out2, "--traces", trace,
			 "--rounds", "16", NULL);
	ck_assert_int_eq(c.status, 2);
	ck_assert_ptr_nonnull(strstr(c.err, "--rounds"));
	dmr_test_run_free(&c);
	dmr_test_tmp_remove();
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("hostload", 0, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("hostload");
	TCase *tc = tcase_create("hostload");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, api_sees_a_busy_host);
	tcase_add_test(tc, calibrate_flags_loaded_rounds);
	tcase_add_test(tc, fidelity_rounds_and_load);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
