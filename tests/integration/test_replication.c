/*
 * tests/integration/test_replication.c - issue 11 "the same traces on sim,
 * shm and rxe with 2 MNs and replication, verified on each": the host half.
 * The TPC-C and SmallBank traces scripts/rxe-mn-check replays on rxe (same
 * generator arguments and seeds) run through the dmreplay binary on sim and
 * on shm with --mns 2 --backups 1 under both protocols (occ, ford), each
 * verified: the workload's invariants on the primaries (TPC-C C1-C3, the
 * SmallBank sum), every backup record byte-identical to its primary and
 * every lock word idle on both MNs (core/replica.h; the run's `replicas`
 * line), the placement printed as FORD's rule gives it, and summary.csv
 * recording the cluster (protocol, mns 2, backups 1), complete and verified.
 *
 * Every file lives in the suite's mkdtemp directory, removed at the end.
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

/* The traces of scripts/rxe-mn-check's checks 5 and 6 (tpcc-r.csv, sb.csv). */
static void gen_traces(char *tpcc, size_t tl, char *sb, size_t sl)
{
	dmr_test_path(tpcc, tl, "tpcc.csv");
	dmr_test_path(sb, sl, "sb.csv");
	if (!dmr_test_exists(tpcc)) {
		dmr_test_run_t r = dmr_test_dmr("gen", "tpcc", "--warehouses", "1", "--txns", "400",
						"--seed", "3", "--order-cap", "200",
						"--payment-cap", "10", "-o", tpcc, "--quiet", NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
	}
	if (!dmr_test_exists(sb)) {
		dmr_test_run_t r =
		    dmr_test_dmr("gen", "smallbank", "--accounts", "1000", "--regime", "hot:10/0.9",
				 "--txns", "2000", "--seed", "3", "-o", sb, "--quiet", NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
	}
}

/* One run of trace on backend be with 2 MNs, 1 backup and protocol proto:
 * verified, replicas identical (a real number of checks), placement as
 * expected (want), summary.csv complete with the cluster's columns. */
static void run_replicated(const char *be, const char *proto, const char *trace, const char *tag,
			   const char *verified, const char *want)
{
	char name[64], dir[PATH_MAX];
	snprintf(name, sizeof(name), "out-%s-%s-%s", be, proto, tag);
	dmr_test_path(dir, sizeof(dir), name);
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", trace, "--backend", be, "--mns", "2",
					"--backups", "1", "--protocol", proto, "--threads", "2",
					"--coros", "2", "--seed", "3", "--out", dir, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, verified) != NULL, "%s %s %s: no '%s' in:\n%s", be, proto, tag,
		      verified, r.out);
	char cl[160];
	snprintf(cl, sizeof(cl), "cluster        protocol %s, mns=2 backups=1 %s", proto, want);
	ck_assert_msg(strstr(r.out, cl) != NULL, "%s %s %s: no '%s' in:\n%s", be, proto, tag, cl,
		      r.out);
	const char *rep = strstr(r.out, "replicas       identical, locks idle (");
	ck_assert_msg(rep != NULL, "%s %s %s: replicas not identical:\n%s", be, proto, tag, r.out);
	unsigned long long checks =
	    strtoull(rep + strlen("replicas       identical, locks idle ("), NULL, 10);
	/* SmallBank: 1000 accounts x 2 tables, each record compared once and
	 * its lock word checked on both MNs: at least 2000 checks */
	ck_assert_msg(checks >= 2000, "%s %s %s: %llu replica checks", be, proto, tag, checks);
	ck_assert_ptr_nonnull(strstr(rep, "checked on 2 MNs)"));
	dmr_test_run_free(&r);

	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "complete");
	ck_assert_int_eq(dmr_test_colu(&s, "verified"), 1);
	ck_assert_str_eq(dmr_test_col(&s, "protocol"), proto);
	ck_assert_int_eq(dmr_test_colu(&s, "mns"), 2);
	ck_assert_int_eq(dmr_test_colu(&s, "backups"), 1);
	ck_assert_uint_gt(dmr_test_colu(&s, "committed"), 0);
	dmr_test_summary_free(&s);
}

/* TPC-C's placement by FORD's rule on 2 MNs (table t: primary t % 2, backup
 * (t + 1) % 2) and SmallBank's. */
#define TPCC_PLACE "warehouse:0/1 district:1/0 customer:0/1 history:1/0 new_order:0/1"
#define SB_PLACE "savings:0/1 checking:1/0"

static void both(const char *be)
{
	char tpcc[PATH_MAX], sb[PATH_MAX];
	gen_traces(tpcc, sizeof(tpcc), sb, sizeof(sb));
	const char *protos[] = {"occ", "ford"};
	for (int i = 0; i < 2; i++) {
		run_replicated(be, protos[i], tpcc, "tpcc",
			       "verification   PASSED (tpcc C1 C2 C3 ok)", TPCC_PLACE);
		run_replicated(be, protos[i], sb, "sb", "verification   PASSED (smallbank sum ok)",
			       SB_PLACE);
	}
}

START_TEST(test_sim_two_mns_one_backup)
{
	both("sim");
}
END_TEST

START_TEST(test_shm_two_mns_one_backup)
{
	both("shm");
}
END_TEST

static Suite *replication_suite(void)
{
	Suite *s = suite_create("replication");
	TCase *tc = tcase_create("two_mns");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_sim_two_mns_one_backup);
	tcase_add_test(tc, test_shm_two_mns_one_backup);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("replication", 1, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(replication_suite());
	dmr_test_env_fini();
	return rc;
}
