/*
 * tests/helpers/files.h - whole files in and out, for the suites that check
 * what a command wrote (dmr_test_helpers library).
 *
 * Buffers are NUL-terminated. Helpers that assert fail the calling test
 * naming the path and errno's text.
 */
#ifndef DMR_TEST_FILES_H
#define DMR_TEST_FILES_H

#include <stddef.h>

/* The whole file at path, malloc'd (the caller frees), its length in
 * *len_p (may be NULL); NULL when it cannot be opened. */
char *dmr_test_slurp(const char *path, size_t *len_p);

/* The same, asserting the file opened. */
char *dmr_test_read_text(const char *path);

/* The whole file at path in one static buffer that the next call reuses
 * (the caller does not free); NULL when it cannot be opened. */
char *dmr_test_read_file(const char *path);

/* Everything written to fd so far (pread from offset 0), malloc'd. */
char *dmr_test_slurp_fd(int fd);

/* Create or truncate path with text; asserts open, write and close. */
void dmr_test_write_file(const char *path, const char *text);

/* 1 when path exists (stat succeeds), else 0. */
int dmr_test_exists(const char *path);

/* DIR1/NAME and DIR2/NAME exist and are byte-identical (a deterministic
 * run twice); otherwise the test fails naming both. */
void dmr_test_assert_same_file(const char *dir1, const char *dir2, const char *name);

/* Remove dir and everything below it (nftw, symlinks not followed), as
 * rm -rf: 0 (also when dir is "" or does not exist), or -1 when anything
 * could not be removed. */
int dmr_test_rmtree(const char *dir);

/* What dir holds, one level, dot files included (not . and ..): the names
 * sorted, each followed by '\n' ("" when empty), malloc'ed; NULL when dir
 * cannot be read. A refused run leaves it as it was: compare before and
 * after. */
char *dmr_test_dir_listing(const char *dir);

#endif
