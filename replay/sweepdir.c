/* replay/sweepdir.c - a sweep directory's CSV lines and cell directory
 * names (sweepdir.h). */
#include "sweepdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int dmr_report_csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		char *start = p;
		if (*p == '"') {
			char *w = p;
			start = w;
			p++;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"') {
					if (p[1] == '"') {
						*w++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*w++ = *p++;
			}
			if (*p != ',' && *p != '\0')
				return -1;
			char *sep = p;
			*w = '\0';
			p = sep;
		} else {
			while (*p && *p != ',')
				p++;
		}
		int last = *p == '\0';
		*p = '\0';
		if (n < max)
			fields[n] = start;
		n++;
		if (last)
			break;
		p++;
	}
	return n;
}

void dmr_sweep_cell_dirname(const char *cell, char *out, size_t out_len)
{
	size_t o = 0;
	for (const char *p = cell; *p && o + 1 < out_len; p++) {
		char c = *p;
		if (c == ';')
			c = '+';
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '=' || c == '+' ||
			   c == '-'))
			c = '_';
		out[o++] = c;
	}
	out[o] = '\0';
}

int dmr_sweepdir_lock(const char *dir, char *msg, size_t len, int *busy_p)
{
	char lk[4200];
	if (busy_p)
		*busy_p = 0;
	if ((size_t)snprintf(lk, sizeof(lk), "%s/.dmr-lock", dir) >= sizeof(lk)) {
		snprintf(msg, len, "%s: path too long", dir);
		return -1;
	}
	int fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		if (e == EACCES || e == EROFS || e == EPERM)
			snprintf(msg, len, "%s: the directory is not writable (%s: %s)", dir, lk,
				 strerror(e));
		else
			snprintf(msg, len, "%s: %s: %s", dir, lk, strerror(e));
		return -1;
	}
	int r;
	do
		r = flock(fd, LOCK_EX | LOCK_NB);
	while (r != 0 && errno == EINTR);
	if (r != 0) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK) {
			if (busy_p)
				*busy_p = 1;
			snprintf(msg, len,
				 "%s: another run holds this directory (its lock %s): wait for "
				 "it to finish, or give another --out",
				 dir, lk);
		} else {
			snprintf(msg, len, "%s: lock %s: %s", dir, lk, strerror(e));
		}
		return -1;
	}
	return fd;
}
