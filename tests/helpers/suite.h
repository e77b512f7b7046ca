/*
 * tests/helpers/suite.h - what every suite's main() shares: running a Check
 * suite, and the suite's environment (the dmreplay binary, the source tree,
 * one temp dir).
 *
 * Part of the dmr_test_helpers library (tests/CMakeLists.txt), linked into
 * every suite. Helpers that check something fail the calling test with
 * ck_assert (they run inside it); the env functions run in main(), outside
 * any test, and return an error instead.
 */
#ifndef DMR_TEST_SUITE_H
#define DMR_TEST_SUITE_H

#include <check.h>
#include <limits.h>

/* Run every test of s (CK_NORMAL output) and free the runner; returns
 * EXIT_SUCCESS when none failed, else EXIT_FAILURE (main's exit status). */
int dmr_test_run(Suite *s);

/* The environment (dmr_test_env_init): $DMR_BUILD_DIR/dmreplay (else the
 * configure-time build tree's), $DMR_SOURCE_DIR (else the configure-time
 * source tree), and the suite's temp dir $TMPDIR/dmr-NAME-XXXXXX (/tmp when
 * TMPDIR is unset or empty). Empty strings until set. Sized so that a
 * suite's buffers hold them and a file name; longer paths are refused. */
#define DMR_TEST_DIR_MAX 512
#define DMR_TEST_TMP_MAX 256
extern char dmr_test_bin[DMR_TEST_DIR_MAX];
extern char dmr_test_src[DMR_TEST_DIR_MAX];
extern char dmr_test_tmp[DMR_TEST_TMP_MAX];

/* Fill dmr_test_bin and dmr_test_src; make_tmp: also make dmr_test_tmp (see
 * dmr_test_tmp_make); need_bin: dmr_test_bin must be executable. name names
 * the temp dir and the messages. Returns 0, or -1 after printing why on
 * stderr (main then returns EXIT_FAILURE). */
int dmr_test_env_init(const char *name, int make_tmp, int need_bin);

/* Remove dmr_test_tmp and everything below it (if it was made). */
void dmr_test_env_fini(void);

/* Make a fresh dmr_test_tmp ($TMPDIR/dmr-NAME-XXXXXX, NAME from
 * dmr_test_env_init, else "test"); fails the test when mkdtemp fails.
 * With dmr_test_tmp_remove, usable as a Check fixture. */
void dmr_test_tmp_make(void);

/* Remove dmr_test_tmp recursively; a failure is printed, not fatal. */
void dmr_test_tmp_remove(void);

/* buf = dmr_test_tmp "/" name; a truncated path fails the test. */
void dmr_test_path(char *buf, size_t len, const char *name);

/* The YCSB property files: $DMR_YCSB_DIR, else $DMR_SOURCE_DIR/traces/ycsb
 * (when workloada is there), else /work/shared/data/ycsb; aborts the test
 * when none has them. Static string. */
const char *dmr_test_ycsb_dir(void);

#endif
