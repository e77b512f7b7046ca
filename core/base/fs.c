/* core/base/fs.c - mkdir -p and atomic file writes (fs.h). */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

dmr_status_t dmr_mkdir_p(const char *dir, unsigned flags, dmr_err_t *err)
{
	char buf[PATH_MAX];
	if (!dir || !*dir)
		return dmr_err_set(err, DMR_ERR_IO, "empty directory name");
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return dmr_err_set(err, DMR_ERR_IO, "%.64s...: path too long", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return dmr_err_set(err, DMR_ERR_IO, "%s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", buf, strerror(errno));
	struct stat sb;
	if (stat(buf, &sb) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", buf, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", buf, strerror(ENOTDIR));
	if (flags & DMR_FS_PROBE) {
		char probe[PATH_MAX + 32];
		snprintf(probe, sizeof(probe), "%s/.dmr-probe.%ld", buf, (long)getpid());
		int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return dmr_err_set(err, DMR_ERR_IO, "%s: not writable: %s", buf,
					   strerror(errno));
		close(fd);
		unlink(probe);
	}
	return DMR_OK;
}

/* dir into buf without its trailing slashes ("/" kept): 0, or -1 too long. */
static int path_trim(char *buf, size_t n, const char *dir)
{
	if (snprintf(buf, n, "%s", dir) >= (int)n)
		return -1;
	size_t len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = 0;
	return 0;
}

/* Cut buf's last component ("a/b" -> "a"; "a//b" -> "a"): 0, or -1 when
 * nothing is left above it ("a", "/a", "/"). */
static int path_up(char *buf)
{
	char *s = strrchr(buf, '/');
	if (!s || s == buf)
		return -1;
	while (s > buf && *s == '/')
		*s-- = 0;
	return 0;
}

unsigned dmr_dirs_missing(const char *dir)
{
	char buf[PATH_MAX];
	struct stat sb;
	unsigned n = 0;
	if (!dir || !*dir || path_trim(buf, sizeof(buf), dir))
		return 0;
	while (stat(buf, &sb) != 0 && errno == ENOENT) {
		n++;
		if (path_up(buf))
			break;
	}
	return n;
}

int dmr_rmdir_made(const char *dir, unsigned n)
{
	char buf[PATH_MAX];
	if (!n)
		return 0;
	if (!dir || !*dir || path_trim(buf, sizeof(buf), dir))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (rmdir(buf) != 0)
			return i ? 0 : -1;
		if (path_up(buf))
			break;
	}
	return 0;
}

dmr_status_t dmr_out_file_check(const char *path, dmr_err_t *err)
{
	struct stat sb;
	if (!path || !*path)
		return dmr_err_set(err, DMR_ERR_INVALID, "output path '': empty (give a file)");
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: not a regular file (the output is written beside it and "
				   "renamed over it): give the path of a file",
				   path);
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return dmr_err_set(err, DMR_ERR_IO, "%.64s...: path too long", path);
	else { /* "a//b" -> "a" */
		size_t len = (size_t)(slash - path);
		memcpy(dir, path, len);
		dir[len] = 0;
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = 0;
	}
	if (stat(dir, &sb) != 0) {
		int e = errno;
		if (e == ENOENT)
			return dmr_err_set(err, DMR_ERR_IO, "%s: no such directory '%s'", path,
					   dir);
		if (e == ENOTDIR)
			return dmr_err_set(err, DMR_ERR_IO,
					   "%s: '%s' is not a directory (a part of its path is a "
					   "file)",
					   path, dir);
		return dmr_err_set(err, DMR_ERR_IO, "%s: directory '%s': %s", path, dir,
				   strerror(e));
	}
	if (!S_ISDIR(sb.st_mode))
		return dmr_err_set(err, DMR_ERR_IO, "%s: '%s' is not a directory", path, dir);
	/* a file made and removed: access(2) says yes to root in a read-only
	 * directory and in /proc */
	char probe[PATH_MAX + 48];
	snprintf(probe, sizeof(probe), "%s/.dmr-probe.%ld", dir, (long)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EEXIST)
		return dmr_err_set(err, DMR_ERR_IO, "%s: no file can be made in directory '%s': %s",
				   path, dir, strerror(errno));
	if (fd >= 0) {
		close(fd);
		unlink(probe);
	}
	return DMR_OK;
}

dmr_status_t dmr_tmp_fopen(const char *tmp, const char *dest, FILE **fp_p, dmr_err_t *err)
{
	struct stat lt;
	if (lstat(tmp, &lt) == 0 && !S_ISREG(lt.st_mode))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s exists and is not a regular file (%s is written there, "
				   "then renamed): remove it or give another output path",
				   tmp, dest);
	/* O_NOFOLLOW: a link put there after the check is not followed */
	int fd =
	    open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return dmr_err_set(err, errno == ELOOP ? DMR_ERR_INVALID : DMR_ERR_IO, "%s: %s",
				   tmp, strerror(errno));
	if (fstat(fd, &lt) != 0 || !S_ISREG(lt.st_mode)) {
		close(fd);
		return dmr_err_set(err, DMR_ERR_INVALID, "%s: not a regular file", tmp);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || !(*fp_p = fdopen(fd, "wb"))) {
		int e = errno;
		close(fd);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", tmp, strerror(e));
	}
	return DMR_OK;
}

dmr_status_t dmr_afile_open(dmr_afile_t *a, const char *path, dmr_err_t *err)
{
	static atomic_uint seq;
	memset(a, 0, sizeof(*a));
	if (!*path)
		return dmr_err_set(err, DMR_ERR_INVALID, "output path '': empty (give a file)");
	if (snprintf(a->path, sizeof(a->path), "%s", path) >= (int)sizeof(a->path))
		return dmr_err_set(err, DMR_ERR_IO, "%.64s...: path too long", path);
	struct stat sp;
	if (stat(path, &sp) == 0 && !S_ISREG(sp.st_mode))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: not a regular file (the output is written beside it and "
				   "renamed over it): give the path of a file",
				   path);
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	const char *name = slash ? slash + 1 : path;
	if (snprintf(a->tmp, sizeof(a->tmp), "%.*s.%s.%ld.%u.tmp", dlen, path, name, (long)getpid(),
		     atomic_fetch_add(&seq, 1)) >= (int)sizeof(a->tmp))
		return dmr_err_set(err, DMR_ERR_IO, "%.64s...: path too long", path);
	int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", a->tmp, strerror(errno));
	a->f = fdopen(fd, "w");
	if (!a->f) {
		int e = errno;
		close(fd);
		unlink(a->tmp);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", a->tmp, strerror(e));
	}
	return DMR_OK;
}

dmr_status_t dmr_afile_commit(dmr_afile_t *a, dmr_err_t *err)
{
	if (!a->f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: not open", a->path);
	int bad = fflush(a->f) != 0 || ferror(a->f);
	int e = errno;
	if (fclose(a->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	a->f = NULL;
	if (!bad && rename(a->tmp, a->path) != 0) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		unlink(a->tmp);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", a->path, strerror(e ? e : EIO));
	}
	return DMR_OK;
}

void dmr_afile_abort(dmr_afile_t *a)
{
	if (a->f) {
		fclose(a->f);
		a->f = NULL;
		unlink(a->tmp);
	}
}

dmr_status_t dmr_file_write_atomic(const char *path, const void *data, size_t len, dmr_err_t *err)
{
	dmr_afile_t a;
	dmr_status_t st = dmr_afile_open(&a, path, err);
	if (st != DMR_OK)
		return st;
	if (len && fwrite(data, 1, len, a.f) != len) {
		int e = errno;
		dmr_afile_abort(&a);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(e ? e : EIO));
	}
	return dmr_afile_commit(&a, err);
}

dmr_status_t dmr_file_read_all(const char *path, size_t max_bytes, char **buf_p, size_t *len_p,
			       dmr_err_t *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	dmr_status_t st = DMR_OK;
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len > max_bytes) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s: larger than %zu bytes", path,
					 max_bytes);
			break;
		}
		if (len + 1 < cap)
			break; /* short read: end of file or error */
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (!buf)
		st = dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
	else if (st == DMR_OK && ferror(f))
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	if (st != DMR_OK) {
		free(buf);
		return st;
	}
	buf[len] = '\0';
	*buf_p = buf;
	*len_p = len;
	return DMR_OK;
}
