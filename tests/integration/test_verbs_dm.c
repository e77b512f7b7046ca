/*
 * tests/integration/test_verbs_dm.c - verbs --dm-locks on a device with
 * NIC device memory (issue 16 item 3; backends/verbs/verbs_dm.c): a TPC-C
 * replay on the verbs backend (loopback) with the hot tables' lock words
 * in device memory (ibv_alloc_dm + ibv_reg_dm_mr), verified (the workload's
 * invariants, every lock word idle after the run, read back from device
 * memory). It needs a device whose ibv_query_device_ex reports
 * max_dm_size > 0 (ConnectX-5 and later); $DMR_TEST_DM_DEVICE names one,
 * else the first such device is used. Without one it prints "SKIPPED: ..."
 * with every device's max_dm_size and exits 77 (CTest: skipped, never
 * passed): rxe, the CI's and the VM's device, has none. The host-memory
 * variant (--locks-apart) runs on rxe: scripts/rxe-replay-check.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

#ifdef DMR_HAVE_VERBS
#include <infiniband/verbs.h>

static char dm_dev[64];

/* The first device with device memory (or $DMR_TEST_DM_DEVICE) into
 * dm_dev; 0 when none, with why[] listing each device's max_dm_size. */
static int find_dm_device(char *why, size_t len)
{
	const char *want = getenv("DMR_TEST_DM_DEVICE");
	int n = 0, found = 0;
	size_t off = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		snprintf(why, len, "no RDMA device at all");
		if (list)
			ibv_free_device_list(list);
		return 0;
	}
	for (int i = 0; i < n && !found; i++) {
		const char *name = ibv_get_device_name(list[i]);
		if (want && *want && strcmp(want, name) != 0)
			continue;
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct ibv_device_attr_ex ax;
		memset(&ax, 0, sizeof(ax));
		uint64_t dm = 0;
		if (ctx && ibv_query_device_ex(ctx, NULL, &ax) == 0)
			dm = ax.max_dm_size;
		if (ctx)
			ibv_close_device(ctx);
		if (dm > 0) {
			snprintf(dm_dev, sizeof(dm_dev), "%s", name);
			found = 1;
		} else if (off < len) {
			off += (size_t)snprintf(why + off, len - off, "%s%s: max_dm_size 0",
						off ? ", " : "", name);
		}
	}
	ibv_free_device_list(list);
	if (!found && off == 0)
		snprintf(why, len, "DMR_TEST_DM_DEVICE=%s is not a device here", want ? want : "");
	return found;
}

START_TEST(tpcc_with_lock_words_in_device_memory)
{
	dmr_test_tmp_make();
	char trace[DMR_TEST_DIR_MAX], out[DMR_TEST_DIR_MAX];
	dmr_test_path(trace, sizeof(trace), "tpcc.csv");
	dmr_test_path(out, sizeof(out), "dm");
	dmr_test_run_t r = dmr_test_dmr("gen", "tpcc", "--warehouses", "2", "--regime", "extreme",
					"--txns", "3000", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", trace, "--out", out, "--backend", "verbs", "--device",
			 dm_dev, "--cns", "1", "--threads", "2", "--coros", "2", "--dm-locks",
			 "warehouse,district", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "apart from their records") &&
			  strstr(r.out, "in device memory)"),
		      "%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, out, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s, "verified"), "1");
	ck_assert_str_eq(dmr_test_col(&s, "dm_locks"), "warehouse/district");
	ck_assert_uint_gt(dmr_test_colu(&s, "committed"), 0);
	dmr_test_summary_free(&s);
	dmr_test_tmp_remove();
}
END_TEST
#endif

int main(void)
{
#ifndef DMR_HAVE_VERBS
	printf("SKIPPED: no device with device memory (the verbs backend is not built: "
	       "DMR_VERBS=OFF, or libibverbs-dev/librdmacm-dev missing at configure time)\n");
	return 77;
#else
	char why[512] = "";
	if (!find_dm_device(why, sizeof(why))) {
		printf("SKIPPED: no device with device memory (%s); verbs --dm-locks is untested "
		       "here\n",
		       why);
		return 77;
	}
	printf("verbs --dm-locks on %s\n", dm_dev);
	Suite *s = suite_create("verbs_dm");
	TCase *tc = tcase_create("device-memory");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, tpcc_with_lock_words_in_device_memory);
	suite_add_tcase(s, tc);
	if (dmr_test_env_init("verbs_dm", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
#endif
}
