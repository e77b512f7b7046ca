/*
 * tests/integration/test_workloads.c - the workload knobs of issue 12
 * through the dmreplay binary: traces made by `dmreplay gen tatp`, `gen
 * tpcc --preset crest | --mix NO,P,OS,D,SL`, `gen ycsb --ops-per-txn
 * --theta` and `gen smallbank --theta` replay on sim and pass their
 * verifier (summary.csv verified = 1, committed > 0); the shipped TATP
 * sample regenerates byte-identically; bad parameters exit 2 naming the
 * option and the allowed values, and leave no file; records of 128 KiB
 * replay (their log records fit the log rings).
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

/* Generate with args (NULL-ended, after "gen"), replay on sim, assert the
 * run verified and committed; returns the committed count. */
static unsigned long long gen_run(const char *name, const char *const *args)
{
	char trace[PATH_MAX], out[PATH_MAX];
	const char *a[40];
	int n = 0;
	dmr_test_summary_t s;
	unsigned long long committed;

	char oname[128];

	dmr_test_path(trace, sizeof(trace), name);
	snprintf(oname, sizeof(oname), "%s.out", name);
	dmr_test_path(out, sizeof(out), oname);
	a[n++] = "gen";
	for (; *args; args++)
		a[n++] = *args;
	a[n++] = "--quiet";
	a[n++] = "-o";
	a[n++] = trace;
	a[n] = NULL;
	dmr_test_run_t r = dmr_test_dmrv(a);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", trace, "--backend", "sim", "--cns", "2", "--threads",
			 "4", "--coros", "2", "--seed", "3", "--out", out, "--quiet", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_summary_load(&s, out, "summary.csv");
	ck_assert_msg(dmr_test_colu(&s, "verified") == 1, "%s: not verified", name);
	committed = dmr_test_colu(&s, "committed");
	ck_assert_msg(committed > 0, "%s: nothing committed", name);
	dmr_test_summary_free(&s);
	return committed;
}

START_TEST(test_tatp_runs_verified)
{
	static const char *const nurand[] = {"tatp", "--subscribers", "2000", "--txns",
					     "5000", "--seed",	      "2",    NULL};
	static const char *const hot[] = {
	    "tatp",  "--subscribers",	    "2000", "--txns", "5000", "--regime", "hot:4/0.9",
	    "--mix", "20,0,20,20,20,10,10", NULL};
	static const char *const spec_shape[] = {
	    "tatp",	  "--subscribers", "500",    "--txns",	"3000",
	    "--cf-check", "off",	   "--dist", "uniform", NULL};
	unsigned long long c;

	c = gen_run("tatp-nurand.csv", nurand);
	ck_assert_uint_ge(c, 4000); /* 2000 subscribers, 16 workers: few conflicts */
	gen_run("tatp-hot.csv", hot);
	gen_run("tatp-spec-shape.csv", spec_shape);
}
END_TEST

/* The README's command remakes the shipped sample byte for byte. */
START_TEST(test_tatp_sample_regenerates)
{
	char trace[PATH_MAX], sample[PATH_MAX];

	dmr_test_path(trace, sizeof(trace), "tatp-sample.csv");
	snprintf(sample, sizeof(sample), "%s/traces/samples/tatp-nurand.csv", dmr_test_src);
	dmr_test_run_t r = dmr_test_dmr("gen", "tatp", "--subscribers", "10000", "--txns", "5000",
					"--seed", "1", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	size_t la, lb;
	char *a = dmr_test_slurp(trace, &la), *b = dmr_test_slurp(sample, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(a, b, la) == 0);
	free(a);
	free(b);
}
END_TEST

/* --preset crest: CREST's 1,000,000 subscribers and mix; explicit options
 * win, before or after it. */
START_TEST(test_tatp_preset)
{
	char trace[PATH_MAX];
	char *text;

	dmr_test_path(trace, sizeof(trace), "tatp-crest.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "tatp", "--preset", "crest", "--txns", "10",
					"--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	text = dmr_test_read_text(trace);
	ck_assert_ptr_nonnull(strstr(text, "# table subscriber 1000000 48 1000000\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param mix crest\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param preset crest\n"));
	free(text);
	r = dmr_test_dmr("gen", "tatp", "--subscribers", "5000", "--preset", "crest", "--mix",
			 "spec", "--txns", "10", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	text = dmr_test_read_text(trace);
	ck_assert_ptr_nonnull(strstr(text, "# param subscribers 5000\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param mix spec\n"));
	free(text);
}
END_TEST

START_TEST(test_tpcc_knobs_run_verified)
{
	static const char *const crest[] = {"tpcc", "--preset", "crest", "--warehouses",
					    "2",    "--txns",	"2000",	 NULL};
	static const char *const mix[] = {"tpcc", "--warehouses",  "2",		  "--txns",
					  "3000", "--mix",	   "40,40,8,6,6", "--order-cap",
					  "400",  "--payment-cap", "30",	  "--customers",
					  "100",  "--items",	   "500",	  NULL};
	char trace[PATH_MAX];

	gen_run("tpcc-crest.csv", crest);
	gen_run("tpcc-mix.csv", mix);
	/* explicit options win over the preset, in either order */
	dmr_test_path(trace, sizeof(trace), "tpcc-crest.csv");
	char *text = dmr_test_read_text(trace);
	ck_assert_ptr_nonnull(strstr(text, "# param customers_per_district 300\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param order_cap 20000\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param mix dm\n"));
	free(text);
	dmr_test_run_t r =
	    dmr_test_dmr("gen", "tpcc", "--customers", "500", "--preset", "crest", "--txns", "10",
			 "--warehouses", "1", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	text = dmr_test_read_text(trace);
	ck_assert_ptr_nonnull(strstr(text, "# param customers_per_district 500\n"));
	ck_assert_ptr_nonnull(strstr(text, "# param items 10000\n"));
	free(text);
}
END_TEST

START_TEST(test_ycsb_knobs_run_verified)
{
	char wa[PATH_MAX], wf[PATH_MAX];

	snprintf(wa, sizeof(wa), "%s/workloada", dmr_test_ycsb_dir());
	snprintf(wf, sizeof(wf), "%s/workloadf", dmr_test_ycsb_dir());
	const char *const multi[] = {"ycsb",	      "--workload", wa,	       "--txns", "3000",
				     "--ops-per-txn", "4",	    "--theta", "1.22",	 NULL};
	const char *const rmw[] = {"ycsb",	    "--workload", wf,	     "--txns", "3000",
				   "--ops-per-txn", "3",	  "--theta", "0.99",   NULL};
	gen_run("ycsb-multi.csv", multi);
	gen_run("ycsb-rmw.csv", rmw); /* the RMW counters = committed xv */
	static const char *const sb[] = {"smallbank", "--accounts", "1000", "--theta",
					 "1.22",      "--txns",	    "3000", NULL};
	gen_run("smallbank-theta.csv", sb); /* the balances' sum */
}
END_TEST

/* ---- records over 64 KiB ---------------------------------------------------- */

/* A trace of one table of 64 records of 128 KiB and txns transactions of
 * `writes` updates each (keys 0.., add:0:1). */
static void big_trace(const char *path, unsigned txns, unsigned writes)
{
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp,
		"# dmreplay-trace v1\n# workload custom\n# txns %u\n"
		"# table big 64 131072 64\n# type t1\n"
		"txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n",
		txns);
	for (unsigned t = 0; t < txns; t++)
		for (unsigned k = 0; k < writes; k++)
			fprintf(fp, "%u,t1,0,U,big,%u,,,,,,add:0:1,\n", t, (t + k) % 64);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Records of 128 KiB (a trial on 2026-12-05: a log record over 64 KiB ran
 * past its worker's log ring: a remote access error at the region's end,
 * the hash index after the rings overwritten): replay on sim and shm,
 * with and without --index hash; a log record beyond the ring's 16
 * records of the largest table is refused with its trace line (exit 2). */
START_TEST(test_big_records)
{
	char trace[PATH_MAX], out[PATH_MAX], name[64];
	static const char *const be[] = {"sim", "shm"};
	dmr_test_path(trace, sizeof(trace), "big.csv");
	big_trace(trace, 40, 3);
	for (int b = 0; b < 2; b++)
		for (int ix = 0; ix < 2; ix++) {
			snprintf(name, sizeof(name), "big-%s-%d.out", be[b], ix);
			dmr_test_path(out, sizeof(out), name);
			dmr_test_run_t r =
			    dmr_test_dmr("run", "--trace", trace, "--backend", be[b], "--cns", "1",
					 "--threads", "2", "--coros", "2", "--seed", "1", "--out",
					 out, "--quiet", ix ? "--index" : NULL, "hash", NULL);
			dmr_test_run_ok(&r);
			dmr_test_run_free(&r);
			dmr_test_summary_t s;
			dmr_test_summary_load(&s, out, "summary.csv");
			ck_assert_msg(dmr_test_colu(&s, "committed") > 0, "%s", name);
			ck_assert_str_eq(dmr_test_col(&s, "status"), "complete");
			dmr_test_summary_free(&s);
		}
	dmr_test_path(trace, sizeof(trace), "big17.csv");
	big_trace(trace, 1, 17);
	dmr_test_path(out, sizeof(out), "big17.out");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", trace, "--cns", "1", "--threads", "1",
					"--coros", "1", "--out", out, "--quiet", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "trace line 7"));
	ck_assert_ptr_nonnull(strstr(r.err, "log ring"));
	dmr_test_run_free(&r);
}
END_TEST

/* ---- bad input ------------------------------------------------------------ */

START_TEST(test_bad_parameters)
{
	char wa[PATH_MAX], we[PATH_MAX], out[PATH_MAX];

	snprintf(wa, sizeof(wa), "%s/workloada", dmr_test_ycsb_dir());
	snprintf(we, sizeof(we), "%s/workloade", dmr_test_ycsb_dir());
	dmr_test_path(out, sizeof(out), "refused.csv");
	const struct {
		const char *args[8];
		const char *want1, *want2;
	} cases[] = {
	    {{"tpcc", "--mix", "50,40,4,0,0"}, "--mix", "sum to 94, not 100"},
	    {{"tpcc", "--mix", "50,46,4"},
	     "--mix",
	     "five comma- (or colon-) separated percentages NO,P,OS,D,SL"},
	    {{"tpcc", "--mix", "cres"}, "--mix", "expected spec, dm, or five percentages"},
	    {{"tpcc", "--customers", "3001"}, "--customers", "1..3000"},
	    {{"tpcc", "--items", "10"}, "--items", "15..100000"},
	    {{"tpcc", "--preset", "motor"}, "--preset", "known: crest"},
	    {{"tatp", "--mix", "35,10,35,2,14,2,3"}, "--mix", "sum to 101, not 100"},
	    {{"tatp", "--mix", "tatp"}, "--mix", "expected spec, crest, or seven percentages"},
	    {{"tatp", "--subscribers", "0"}, "--subscribers", "1..1000000000"},
	    {{"tatp", "--subscribers", "10", "--regime", "hot:10/0.9"},
	     "--regime",
	     "10 subscribers"},
	    {{"tatp", "--dist", "zipf"}, "--dist", "nurand or uniform"},
	    {{"tatp", "--cf-check", "yes"}, "--cf-check", "on or off"},
	    {{"tatp", "--preset", "ford"}, "--preset", "known: crest"},
	    {{"tatp", "--regime", "drift:hot:1/0.9@1s"}, "--regime", "drift is not supported"},
	    {{"ycsb", "--workload", wa, "--ops-per-txn", "65"}, "--ops-per-txn", "1..64"},
	    {{"ycsb", "--workload", we, "--ops-per-txn", "2"},
	     "--ops-per-txn",
	     "scans are only supported with one operation"},
	    {{"ycsb", "--workload", wa, "--theta", "-0.5"}, "--theta", "[0, 5]"},
	    {{"smallbank", "--theta", "7"}, "--theta", "[0, 5]"},
	    {{"smallbank", "--theta", "1.1", "--zipf", "0.5"}, "--theta and --zipf", "give one"},
	    {{"ycsb", "--workload", wa, "--theta", "1.2", "--regime", "extreme"},
	     "--theta and --regime",
	     "give one"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *a[16];
		int n = 0;

		a[n++] = "gen";
		for (int j = 0; cases[i].args[j]; j++)
			a[n++] = cases[i].args[j];
		a[n++] = "-o";
		a[n++] = out;
		a[n] = NULL;
		dmr_test_run_t r = dmr_test_dmrv(a);
		ck_assert_msg(r.status == 2, "case %zu (%s %s): exit %d, stderr %s", i,
			      cases[i].args[0], cases[i].args[1], r.status, r.err);
		ck_assert_msg(strstr(r.err, cases[i].want1) && strstr(r.err, cases[i].want2),
			      "case %zu: stderr '%s' lacks '%s' / '%s'", i, r.err, cases[i].want1,
			      cases[i].want2);
		ck_assert_msg(!dmr_test_exists(out), "case %zu left %s", i, out);
		dmr_test_run_free(&r);
	}
	/* the unknown workload names the known ones */
	dmr_test_run_t r = dmr_test_dmr("gen", "tatpp", "-o", out, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "tpcc, smallbank, ycsb, tatp"));
	dmr_test_run_free(&r);
}
END_TEST

static Suite *workloads_suite(void)
{
	Suite *s = suite_create("workloads");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_tatp_runs_verified);
	tcase_add_test(tc, test_tatp_sample_regenerates);
	tcase_add_test(tc, test_tatp_preset);
	tcase_add_test(tc, test_tpcc_knobs_run_verified);
	tcase_add_test(tc, test_ycsb_knobs_run_verified);
	tcase_add_test(tc, test_bad_parameters);
	tcase_add_test(tc, test_big_records);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("workloads", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(workloads_suite());
	dmr_test_env_fini();
	return rc;
}
