/*
 * tests/helpers/files.c - see files.h.
 */
#include "helpers/files.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *dmr_test_slurp(const char *path, size_t *len_p)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	ck_assert_ptr_nonnull(b);
	size_t k;
	while ((k = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n - 1 == 0) {
			cap *= 2;
			b = realloc(b, cap);
			ck_assert_ptr_nonnull(b);
		}
	}
	fclose(f);
	b[n] = 0;
	if (len_p)
		*len_p = n;
	return b;
}

char *dmr_test_read_text(const char *path)
{
	char *b = dmr_test_slurp(path, NULL);
	ck_assert_msg(b != NULL, "%s: %s", path, strerror(errno));
	return b;
}

char *dmr_test_read_file(const char *path)
{
	static char *buf;
	char *b = dmr_test_slurp(path, NULL);
	if (!b)
		return NULL;
	free(buf);
	buf = b;
	return buf;
}

char *dmr_test_slurp_fd(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	ck_assert_int_ge(n, 0);
	char *b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(fd, b, (size_t)n, 0), n);
	b[n] = 0;
	return b;
}

void dmr_test_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	size_t len = strlen(text);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

int dmr_test_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int dmr_test_rmtree(const char *dir)
{
	struct stat sb;
	if (!dir[0] || (lstat(dir, &sb) != 0 && errno == ENOENT))
		return 0; /* nothing to remove (as rm -rf) */
	return nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

void dmr_test_assert_same_file(const char *dir1, const char *dir2, const char *name)
{
	char p1[PATH_MAX + 64], p2[PATH_MAX + 64];
	snprintf(p1, sizeof(p1), "%s/%s", dir1, name);
	snprintf(p2, sizeof(p2), "%s/%s", dir2, name);
	size_t n1 = 0, n2 = 0;
	char *t1 = dmr_test_slurp(p1, &n1), *t2 = dmr_test_slurp(p2, &n2);
	ck_assert_msg(t1 && t2, "%s or %s missing", p1, p2);
	ck_assert_msg(n1 == n2 && memcmp(t1, t2, n1) == 0, "%s and %s differ", p1, p2);
	free(t1);
	free(t2);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *dmr_test_dir_listing(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	size_t n = 0, len = 1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char **nv = realloc(v, (n + 1) * sizeof(*v));
		ck_assert_ptr_nonnull(nv);
		v = nv;
		v[n] = strdup(de->d_name);
		ck_assert_ptr_nonnull(v[n]);
		len += strlen(v[n++]) + 1;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_names);
	char *s = malloc(len), *p = s;
	ck_assert_ptr_nonnull(s);
	*p = 0;
	for (size_t i = 0; i < n; i++) {
		p += sprintf(p, "%s\n", v[i]);
		free(v[i]);
	}
	free(v);
	return s;
}
