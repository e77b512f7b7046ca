/*
 * replay/tools/doctor_util.c - `dmreplay doctor`'s readers of sysfs and
 * procfs attributes and directories, and its small formatters.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "doctor_impl.h"

/* One sysfs/procfs attribute, trailing white space removed. -1 with errno
 * when it cannot be read (missing, or the kernel refuses: an unset GID's
 * type reads as EINVAL). */
int dmr_doc_read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* A whole (small) file, NUL-terminated; NULL when it cannot be read. */
char *dmr_doc_read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, k;
	char *b = xcalloc(1, cap);
	while ((k = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n - 1 == 0) {
			cap *= 2;
			b = xrealloc(b, cap);
		}
	}
	fclose(f);
	b[n] = '\0';
	return b;
}

/* Natural order: mlx5_2 < mlx5_10, gids/9 < gids/10. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			size_t la = 0, lb = 0;
			while (isdigit((unsigned char)a[la]))
				la++;
			while (isdigit((unsigned char)b[lb]))
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
		} else {
			if (*a != *b)
				return (unsigned char)*a - (unsigned char)*b;
			a++;
			b++;
		}
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int natcmp_q(const void *a, const void *b)
{
	return natcmp(*(char *const *)a, *(char *const *)b);
}

void dmr_doc_strv_free(strv_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Entries of a directory but . and .., in natural order; -1 if unreadable. */
int dmr_doc_list_dir(const char *path, strv_t *out)
{
	out->v = NULL;
	out->n = 0;
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 16;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		out->v[out->n++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), natcmp_q);
	return 0;
}

/* "64 KiB", "1 GiB", "1.5 GiB", "100 B". */
void dmr_doc_hbytes(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int u = 0;
	double x = (double)v;
	while (x >= 1024.0 && u < 6) {
		x /= 1024.0;
		u++;
	}
	if (u == 0 || x == (double)(uint64_t)x)
		sfmt(buf, len, "%.0f %s", x, unit[u]);
	else
		sfmt(buf, len, "%.1f %s", x, unit[u]);
}

uint32_t dmr_doctor_ib_mtu(uint32_t netdev_mtu, uint32_t hdr)
{
	if (netdev_mtu < hdr)
		return 0;
	uint32_t room = netdev_mtu - hdr;
	for (uint32_t m = 4096; m >= 256; m /= 2)
		if (room >= m)
			return m;
	return 0;
}

int dmr_doc_in_list(const char *list, const char *name)
{
	if (!list)
		return 0;
	char *hay = xasprintf(", %s,", list), *needle = xasprintf(", %s,", name);
	int r = strstr(hay, needle) != NULL;
	free(hay);
	free(needle);
	return r;
}
