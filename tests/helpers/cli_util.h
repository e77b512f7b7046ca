/*
 * tests/helpers/cli_util.h - helpers shared by the tests that run the dmreplay
 * binary (tests/integration/test_cli.c, test_e2e.c, test_fidelity.c): the suite's temp dir, running
 * $DMR_BUILD_DIR/dmreplay with captured output, reading files, and
 * summary.csv columns by name. The includer defines SMALL (its run shape).
 */
#ifndef DMR_TEST_CLI_UTIL_H
#define DMR_TEST_CLI_UTIL_H

static char g_tmp[PATH_MAX]; /* suite temp dir (made in main) */
static char g_bin[PATH_MAX]; /* $DMR_BUILD_DIR/dmreplay */
static char g_src[PATH_MAX]; /* $DMR_SOURCE_DIR */


typedef struct run {
	int status; /* exit status; 128 + signal when killed */
	char *out;  /* stdout */
	char *err;  /* stderr */
} run_t;

static inline char *slurp(const char *path, size_t *len_p)
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

static inline void path_of(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", g_tmp, name);
	ck_assert(n > 0 && (size_t)n < len);
}

/* Run dmreplay with args[] (NULL-terminated), capturing stdout and stderr. */
static inline run_t dmrv(const char *const *args)
{
	const char *argv[64];
	int argc = 0;
	argv[argc++] = g_bin;
	for (; *args; args++) {
		ck_assert_int_lt(argc, 63);
		argv[argc++] = *args;
	}
	argv[argc] = NULL;

	static unsigned seq;
	char outp[PATH_MAX], errp[PATH_MAX], name[64];
	snprintf(name, sizeof(name), "cmd%u.%ld.out", seq, (long)getpid());
	path_of(outp, sizeof(outp), name);
	snprintf(name, sizeof(name), "cmd%u.%ld.err", seq++, (long)getpid());
	path_of(errp, sizeof(errp), name);

	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
			_exit(126);
		execv(g_bin, (char *const *)argv);
		_exit(127);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		ck_assert_int_eq(errno, EINTR);
	run_t r;
	r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r.out = slurp(outp, NULL);
	r.err = slurp(errp, NULL);
	ck_assert_ptr_nonnull(r.out);
	ck_assert_ptr_nonnull(r.err);
	unlink(outp);
	unlink(errp);
	return r;
}

/* Run `dmreplay ARG0 ... NULL`. */
static inline run_t dmr(const char *arg0, ...)
{
	const char *args[64];
	int n = 0;
	va_list ap;
	va_start(ap, arg0);
	for (const char *a = arg0; a; a = va_arg(ap, const char *)) {
		ck_assert_int_lt(n, 63);
		args[n++] = a;
	}
	va_end(ap);
	args[n] = NULL;
	return dmrv(args);
}

static inline void run_free(run_t *r)
{
	free(r->out);
	free(r->err);
}

/* A run that must succeed. */
static inline void dmr_ok(run_t *r)
{
	ck_assert_msg(r->status == 0, "dmreplay exited %d\nstdout:\n%s\nstderr:\n%s", r->status,
		      r->out, r->err);
}

/* ---- summary.csv: header row + one row; columns by name ----------------- */

#define MAXCOL 64

typedef struct summary {
	char *buf;
	int n;
	char *name[MAXCOL], *val[MAXCOL];
} summary_t;

static inline int split(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line;;) {
		ck_assert_int_lt(n, max);
		f[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

#endif
