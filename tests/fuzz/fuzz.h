/*
 * tests/fuzz/fuzz.h - shared by the libFuzzer harnesses (tests/fuzz/README.md):
 * the input as a file (most loaders take a path) and as a NUL-terminated
 * string (the JSON parsers take text).
 *
 * dmr_fuzz_file: writes the size bytes at data to one file per process,
 * under $TMPDIR (or /tmp), named dmr-fuzz-<pid>-<tag>, and returns its
 * path (static storage, overwritten by the next call); the file is removed
 * at exit. A failed write aborts (the harness cannot test anything then).
 * dmr_fuzz_str: a malloc'd copy with a trailing NUL (the caller frees it;
 * an embedded NUL ends the text early, as it would for a file read whole).
 */
#ifndef DMR_FUZZ_H
#define DMR_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dmr_fuzz_path[4096];

static void dmr_fuzz_cleanup(void)
{
	if (dmr_fuzz_path[0])
		unlink(dmr_fuzz_path);
}

static inline const char *dmr_fuzz_file(const uint8_t *data, size_t size, const char *tag)
{
	if (!dmr_fuzz_path[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dmr_fuzz_path, sizeof(dmr_fuzz_path), "%s/dmr-fuzz-%ld-%s",
			 tmp && *tmp ? tmp : "/tmp", (long)getpid(), tag);
		atexit(dmr_fuzz_cleanup);
	}
	FILE *f = fopen(dmr_fuzz_path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	return dmr_fuzz_path;
}

static inline char *dmr_fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif /* DMR_FUZZ_H */
