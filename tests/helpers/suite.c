/*
 * tests/helpers/suite.c - see suite.h.
 */
#include "helpers/suite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/files.h"

char dmr_test_bin[DMR_TEST_DIR_MAX];
char dmr_test_src[DMR_TEST_DIR_MAX];
char dmr_test_tmp[DMR_TEST_TMP_MAX];
static char g_name[64] = "test";

int dmr_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int tmp_mkdtemp(void)
{
	const char *td = getenv("TMPDIR");
	int n = snprintf(dmr_test_tmp, sizeof(dmr_test_tmp), "%s/dmr-%s-XXXXXX",
			 td && *td ? td : "/tmp", g_name);
	if (n <= 0 || (size_t)n >= sizeof(dmr_test_tmp) || !mkdtemp(dmr_test_tmp)) {
		dmr_test_tmp[0] = 0;
		return -1;
	}
	return 0;
}

int dmr_test_env_init(const char *name, int make_tmp, int need_bin)
{
	snprintf(g_name, sizeof(g_name), "%s", name);
	const char *b = getenv("DMR_BUILD_DIR"), *src = getenv("DMR_SOURCE_DIR");
	int nb = snprintf(dmr_test_bin, sizeof(dmr_test_bin), "%s/dmreplay",
			  b && *b ? b : DMR_BUILD_DIR);
	int ns =
	    snprintf(dmr_test_src, sizeof(dmr_test_src), "%s", src && *src ? src : DMR_SOURCE_DIR);
	if (nb < 0 || nb >= (int)sizeof(dmr_test_bin) || ns < 0 ||
	    ns >= (int)sizeof(dmr_test_src)) {
		fprintf(stderr, "test_%s: build or source path longer than %d bytes\n", name,
			DMR_TEST_DIR_MAX - 1);
		return -1;
	}
	if (need_bin && access(dmr_test_bin, X_OK) != 0) {
		fprintf(stderr, "test_%s: %s: %s\n", name, dmr_test_bin, strerror(errno));
		return -1;
	}
	if (make_tmp && tmp_mkdtemp() != 0) {
		fprintf(stderr, "test_%s: mkdtemp in %s: %s\n", name,
			getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(errno));
		return -1;
	}
	return 0;
}

void dmr_test_env_fini(void)
{
	if (dmr_test_tmp[0])
		dmr_test_tmp_remove();
}

void dmr_test_tmp_make(void)
{
	ck_assert_msg(tmp_mkdtemp() == 0, "mkdtemp: %s", strerror(errno));
}

void dmr_test_tmp_remove(void)
{
	if (dmr_test_rmtree(dmr_test_tmp) != 0)
		fprintf(stderr, "could not remove %s\n", dmr_test_tmp);
	dmr_test_tmp[0] = 0;
}

void dmr_test_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dmr_test_tmp, name);
	ck_assert(n > 0 && (size_t)n < len);
}

const char *dmr_test_ycsb_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("DMR_YCSB_DIR");
	const char *src = getenv("DMR_SOURCE_DIR");
	char probe[PATH_MAX + 16];

	if (env && *env)
		return env;
	if (src && *src) {
		snprintf(dir, sizeof(dir), "%s/traces/ycsb", src);
		snprintf(probe, sizeof(probe), "%s/workloada", dir);
		if (access(probe, R_OK) == 0)
			return dir;
	}
	if (access("/work/shared/data/ycsb/workloada", R_OK) == 0)
		return "/work/shared/data/ycsb";
	ck_abort_msg("YCSB property files not found: set DMR_YCSB_DIR (tried "
		     "$DMR_SOURCE_DIR/traces/ycsb and /work/shared/data/ycsb)");
	return NULL;
}
