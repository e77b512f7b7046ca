/*
 * tests/helpers/proc.c - see proc.h.
 */
#include "helpers/proc.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/suite.h"

#define MAXARGS 64

/* An unlinked temp file open for reading and writing. */
static int tmp_fd(const char *what)
{
	const char *td = getenv("TMPDIR");
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/dmr-test-%s-XXXXXX", td && *td ? td : "/tmp", what);
	int fd = mkstemp(p);
	ck_assert_msg(fd >= 0, "mkstemp %s: %s", p, strerror(errno));
	unlink(p);
	return fd;
}

static dmr_test_run_t collect(int status, int fo, int fe)
{
	dmr_test_run_t r;
	r.status = status;
	r.out = dmr_test_slurp_fd(fo);
	r.err = dmr_test_slurp_fd(fe);
	close(fo);
	close(fe);
	return r;
}

dmr_test_run_t dmr_test_dmrv(const char *const *args)
{
	const char *argv[MAXARGS];
	int argc = 0;
	argv[argc++] = dmr_test_bin;
	for (; *args; args++) {
		ck_assert_int_lt(argc, MAXARGS - 1);
		argv[argc++] = *args;
	}
	argv[argc] = NULL;
	int fo = tmp_fd("out"), fe = tmp_fd("err");
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		close(fo);
		close(fe);
		execv(dmr_test_bin, (char *const *)argv);
		_exit(127);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	return collect(WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws), fo, fe);
}

/* args[] = arg0 and the rest of ap up to its NULL, NULL-terminated. */
static void va_args(const char **args, const char *arg0, va_list ap)
{
	int n = 0;
	for (const char *a = arg0; a; a = va_arg(ap, const char *)) {
		ck_assert_int_lt(n, MAXARGS - 1);
		args[n++] = a;
	}
	args[n] = NULL;
}

dmr_test_run_t dmr_test_dmr(const char *arg0, ...)
{
	const char *args[MAXARGS];
	va_list ap;
	va_start(ap, arg0);
	va_args(args, arg0, ap);
	va_end(ap);
	return dmr_test_dmrv(args);
}

dmr_test_run_t dmr_test_call_mainv(int (*fn)(int, char **), const char *const *args)
{
	char *argv[MAXARGS];
	int argc = 0;
	for (; *args; args++) {
		ck_assert_int_lt(argc, MAXARGS - 1);
		argv[argc++] = strdup(*args);
	}
	argv[argc] = NULL;
	int fo = tmp_fd("out"), fe = tmp_fd("err");
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	ck_assert(so >= 0 && se >= 0);
	ck_assert(dup2(fo, 1) >= 0 && dup2(fe, 2) >= 0);
	int status = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return collect(status, fo, fe);
}

dmr_test_run_t dmr_test_call_main(int (*fn)(int, char **), const char *arg0, ...)
{
	const char *args[MAXARGS];
	va_list ap;
	va_start(ap, arg0);
	va_args(args, arg0, ap);
	va_end(ap);
	return dmr_test_call_mainv(fn, args);
}

void dmr_test_run_free(dmr_test_run_t *r)
{
	free(r->out);
	free(r->err);
}

void dmr_test_run_ok(const dmr_test_run_t *r)
{
	ck_assert_msg(r->status == 0, "dmreplay exited %d\nstdout:\n%s\nstderr:\n%s", r->status,
		      r->out, r->err);
}
