/*
 * replay/sweep/runner.c - running a sweep's jobs: a trace per generator
 * setting (generated once, under a per-trace lock, to a temp file renamed
 * into place), one `dmreplay run` per (cell, rep) with its log, and one row
 * per finished job appended to summary.csv with one write() by one writer;
 * sequentially, or through GNU parallel for --jobs / --hosts (contract in
 * replay/sweep.h; docs/SWEEPS.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "sweep_impl.h"

/* SIGHUP as a stop request too (a sweep outlives its terminal only under
 * nohup): the same flag as SIGINT and SIGTERM (core/base/sig.h). */
static void on_hup(int sig)
{
	dmr_sig_raise_flag(sig);
}

void dmr_sweep_signals_install(void)
{
	dmr_sig_install(NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_hup; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
}

/* In a child of the sweep (parent: the sweep's pid before fork): deathsig
 * when the sweep dies, and SIGINT, SIGTERM, SIGHUP at their defaults (the
 * sweep forwards a stop itself). Exits 127 when the sweep is gone already. */
static void child_init(pid_t parent, int deathsig)
{
	prctl(PR_SET_PDEATHSIG, deathsig);
	if (getppid() != parent)
		_exit(127);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/* Run argv with stdout+stderr to log; forward a stop signal to the child
 * once. Returns the exit status, 128+signal, or -1 when it did not start. */
static int spawn_wait(char **argv, const char *log)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_init(parent, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd < 0 || nul < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status, forwarded = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (dmr_sig_caught() && !forwarded) {
			kill(pid, SIGINT);
			forwarded = 1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Last non-empty line of a file (for failure messages). */
static void last_line(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char buf[1024];
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		if (n)
			snprintf(out, len, "%s", buf);
	}
	fclose(f);
}

/* Generate the job's trace unless present (under a per-trace lock). */
static dmr_status_t ensure_trace(dmr_sweep_ctx_t *c, const dmr_sweep_job_t *j, char *path,
				 size_t len, dmr_err_t *err)
{
	char tdir[PATH_MAX + 16], lock[PATH_MAX + 700], tmp[PATH_MAX + 700], log[PATH_MAX + 700];
	snprintf(tdir, sizeof(tdir), "%s/traces", c->dir);
	snprintf(path, len, "%s/%s", tdir, j->trace);
	if (access(path, R_OK) == 0)
		return DMR_OK;
	dmr_status_t st = dmr_mkdir_p(tdir, 0, err);
	if (st != DMR_OK)
		return st;
	snprintf(lock, sizeof(lock), "%s/.%s.lock", tdir, j->trace);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", lock, strerror(errno));
	while (flock(lfd, LOCK_EX) != 0) {
		if (errno != EINTR || dmr_sig_caught()) {
			close(lfd);
			return dmr_err_set(err, DMR_ERR_IO, "%s: lock: %s", lock, strerror(errno));
		}
	}
	if (access(path, R_OK) == 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", tdir, j->trace, (int)getpid());
	snprintf(log, sizeof(log), "%s/%s.log", tdir, j->trace);
	char **av = dmr_sweep_gen_argv(c->spec, j, c->exe, tmp);
	if (!av) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	int rc = spawn_wait(av, log);
	dmr_sweep_argv_free(av);
	if (rc != 0 || rename(tmp, path) != 0) {
		char ll[300];
		last_line(log, ll, sizeof(ll));
		remove(tmp);
		st = dmr_err_set(err, DMR_ERR_IO, "generating %s failed (status %d): %s (log %s)",
				 j->trace, rc, ll, log);
	}
out:
	flock(lfd, LOCK_UN);
	close(lfd);
	return st;
}

/* Read a 2-line CSV (header, row) into hdr and row (no newlines). */
static dmr_status_t read_run_summary(const char *path, char *hdr, size_t hlen, char *row,
				     size_t rlen, dmr_err_t *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	int ok = fgets(hdr, (int)hlen, f) && fgets(row, (int)rlen, f);
	fclose(f);
	size_t hn = ok ? strlen(hdr) : 0, rn = ok ? strlen(row) : 0;
	if (!ok || !hn || !rn || hdr[hn - 1] != '\n' || row[rn - 1] != '\n')
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: not a header and one row", path);
	hdr[hn - 1] = '\0';
	row[rn - 1] = '\0';
	if (strchr(row, '\t') || strchr(hdr, '\t'))
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: a tab in the summary", path);
	return DMR_OK;
}

/* Run one (cell, rep): trace, run, and the combined header and row. */
dmr_status_t dmr_sweep_run_job(dmr_sweep_ctx_t *c, const dmr_sweep_job_t *j, char *hdr, size_t hlen,
			       char *row, size_t rlen, dmr_err_t *err)
{
	char trace[PATH_MAX + 700], cdir[PATH_MAX + 700], sum[PATH_MAX + 800], log[PATH_MAX + 800];
	dmr_status_t st = ensure_trace(c, j, trace, sizeof(trace), err);
	if (st != DMR_OK)
		return st;
	if (dmr_sig_caught())
		return dmr_err_set(err, DMR_ERR_IO, "interrupted");
	snprintf(cdir, sizeof(cdir), "%s/cells/%s", c->dir, j->dir);
	if ((st = dmr_mkdir_p(cdir, 0, err)) != DMR_OK)
		return st;
	snprintf(sum, sizeof(sum), "%s/summary.csv", cdir);
	snprintf(log, sizeof(log), "%s/run.log", cdir);
	if (remove(sum) != 0 && errno != ENOENT) /* a stale one must not count */
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", sum, strerror(errno));
	char **av = dmr_sweep_run_argv(c->spec, j, c->exe, trace, cdir);
	if (!av)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	int rc = spawn_wait(av, log);
	dmr_sweep_argv_free(av);
	if (rc != 0) {
		char ll[300];
		last_line(log, ll, sizeof(ll));
		return dmr_err_set(err, DMR_ERR_REMOTE, "run exited with status %d: %s (log %s)",
				   rc, ll, log);
	}
	char h[4096], r[8192];
	st = read_run_summary(sum, h, sizeof(h), r, sizeof(r), err);
	if (st != DMR_OK)
		return st;
	snprintf(hdr, hlen, "cell,rep,%s", h);
	if ((size_t)snprintf(row, rlen, "%s,%u,%s", j->cell, j->rep, r) >= rlen)
		return dmr_err_set(err, DMR_ERR_RANGE, "%s: row too long", sum);
	return DMR_OK;
}

/* Append one row to summary.csv with one write() (header first when the
 * file is empty). */
static dmr_status_t append_row(dmr_sweep_ctx_t *c, const char *hdr, const char *row, dmr_err_t *err)
{
	if (c->header[0] && strcmp(c->header, hdr) != 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: its columns differ from this run's (dmreplay's summary "
				   "columns changed since the sweep started?): use a fresh --out",
				   c->summary);
	int fd = open(c->summary, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", c->summary, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		close(fd);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", c->summary, strerror(errno));
	}
	size_t hl = strlen(hdr), rl = strlen(row);
	char *buf = malloc(hl + rl + 3);
	if (!buf) {
		close(fd);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	size_t len = 0;
	if (sb.st_size == 0) {
		memcpy(buf, hdr, hl);
		buf[hl] = '\n';
		len = hl + 1;
	}
	memcpy(buf + len, row, rl);
	len += rl;
	buf[len++] = '\n';
	ssize_t w;
	do
		w = write(fd, buf, len);
	while (w < 0 && errno == EINTR);
	free(buf);
	dmr_status_t st = DMR_OK;
	if (w != (ssize_t)len) {
		int e = w < 0 ? errno : ENOSPC;
		if (ftruncate(fd, sb.st_size) != 0) { /* never leave half a row */
		}
		st = dmr_err_set(err, DMR_ERR_IO, "%s: append failed: %s", c->summary, strerror(e));
	} else {
		fdatasync(fd);
		if (!c->header[0])
			snprintf(c->header, sizeof(c->header), "%s", hdr);
	}
	close(fd);
	return st;
}

static void fmt_dur(double s, char *out, size_t len)
{
	if (s < 0 || s != s)
		snprintf(out, len, "?");
	else if (s < 60)
		snprintf(out, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(out, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

void dmr_sweep_progress(dmr_sweep_ctx_t *c, const char *current, int final)
{
	if (!c->tty)
		return;
	double el = dmr_wall_s() - c->t0;
	size_t done = c->before + c->now;
	size_t left = c->total - done - c->failed;
	char eta[32], els[32];
	fmt_dur(c->now ? el / c->now * left : -1, eta, sizeof(eta));
	fmt_dur(el, els, sizeof(els));
	fprintf(stderr, "\r\033[Ksweep: %zu/%zu done", done, c->total);
	if (c->failed)
		fprintf(stderr, ", %zu failed", c->failed);
	fprintf(stderr, ", %s elapsed, %s left", els, left ? eta : "0s");
	if (current && !final)
		fprintf(stderr, "  [%.60s]", current);
	if (final)
		fprintf(stderr, "\n");
	fflush(stderr);
}

static void report_fail(dmr_sweep_ctx_t *c, const char *cell, unsigned rep, const char *msg)
{
	if (c->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "sweep: cell %s rep %u failed: %s\n", cell, rep, msg);
}

int dmr_sweep_run_sequential(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p)
{
	char hdr[4096 + 16], row[8192 + 600];
	for (size_t i = 0; i < p->njobs && !dmr_sig_caught(); i++) {
		dmr_sweep_job_t *j = &p->jobs[i];
		if (j->done)
			continue;
		char cur[600];
		snprintf(cur, sizeof(cur), "%s r%u", j->cell, j->rep);
		dmr_sweep_progress(c, cur, 0);
		dmr_err_t err = {{0}};
		dmr_status_t st = dmr_sweep_run_job(c, j, hdr, sizeof(hdr), row, sizeof(row), &err);
		if (dmr_sig_caught() && st != DMR_OK)
			break; /* a run cut short by the signal is not a result */
		if (st == DMR_OK)
			st = append_row(c, hdr, row, &err); /* finished: keep it */
		if (st == DMR_OK) {
			j->done = 1;
			c->now++;
		} else {
			c->failed++;
			report_fail(c, j->cell, j->rep, err.msg);
			if (st == DMR_ERR_PARSE && strstr(err.msg, "columns differ"))
				return 1;
		}
	}
	return 0;
}

int dmr_sweep_check_parallel(char *msg, size_t len)
{
	FILE *p = popen("parallel --version 2>&1 </dev/null", "r");
	char line[512] = "", first[512] = "";
	int gnu = 0;
	if (p) {
		while (fgets(line, sizeof(line), p)) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", line);
			if (strstr(line, "GNU parallel"))
				gnu = 1;
		}
		int rc = pclose(p);
		if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) == 127) {
			if (!gnu)
				first[0] = '\0';
		}
	}
	if (gnu)
		return 0;
	first[strcspn(first, "\n")] = '\0';
	if (!first[0])
		snprintf(msg, len,
			 "--jobs/--hosts need GNU parallel, and there is no `parallel` on PATH: "
			 "install it (apt-get install parallel; scripts/deps), or drop "
			 "--jobs/--hosts to run one cell at a time");
	else
		snprintf(msg, len,
			 "--jobs/--hosts need GNU parallel, but the `parallel` first on PATH is "
			 "not GNU parallel (`parallel --version` said: %.200s; moreutils ships "
			 "one of that name): install GNU parallel (apt-get install parallel) "
			 "or put it first on PATH, or drop --jobs/--hosts",
			 first);
	return -1;
}

/* --jobs / --hosts: GNU parallel runs `EXE sweep SPEC --out DIR --job-cell
 * C --job-rep R` per pending job; each prints its row on stdout, which we
 * read here and append (one writer). */
int dmr_sweep_run_parallel(dmr_sweep_ctx_t *c, dmr_sweep_plan_t *p, unsigned jobs,
			   const char *hosts)
{
	char jl[PATH_MAX + 32];
	snprintf(jl, sizeof(jl), "%s/.jobs.tsv", c->dir);
	/* the pending jobs, one "cell TAB rep TAB dir" line each */
	dmr_afile_t jf;
	dmr_err_t jerr;
	if (dmr_afile_open(&jf, jl, &jerr) != DMR_OK) {
		fprintf(stderr, "sweep: %s\n", jerr.msg);
		return 1;
	}
	for (size_t i = 0; i < p->njobs; i++)
		if (!p->jobs[i].done)
			fprintf(jf.f, "%s\t%u\t%s\n", p->jobs[i].cell, p->jobs[i].rep,
				p->jobs[i].dir);
	if (dmr_afile_commit(&jf, &jerr) != DMR_OK) {
		fprintf(stderr, "sweep: %s\n", jerr.msg);
		return 1;
	}
	dmr_sweep_av_t b = {0};
	char nj[16], ret1[PATH_MAX + 64], ret2[PATH_MAX + 64];
	snprintf(nj, sizeof(nj), "%u", jobs);
	dmr_sweep_av_list(&b, "parallel", "--will-cite", "-j", nj, "--colsep", "\t", "-q",
			  (char *)NULL);
	if (hosts) {
		snprintf(ret1, sizeof(ret1), "%s/cells/{3}/summary.csv", c->dir);
		snprintf(ret2, sizeof(ret2), "%s/cells/{3}/timeseries.csv", c->dir);
		dmr_sweep_av_list(&b, "-S", hosts, "--basefile", c->spec_path, "--return", ret1,
				  "--return", ret2, (char *)NULL);
	}
	dmr_sweep_av_list(&b, c->self, "sweep", c->spec_path, "--out", c->dir, "--job-cell", "{1}",
			  "--job-rep", "{2}", "::::", jl, (char *)NULL);
	char **av = dmr_sweep_av_done(&b);
	if (!av) {
		fprintf(stderr, "sweep: out of memory\n");
		return 1;
	}
	int pfd[2];
	if (pipe(pfd) != 0) {
		dmr_sweep_argv_free(av);
		fprintf(stderr, "sweep: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		child_init(parent, SIGTERM);
		close(pfd[0]);
		dup2(pfd[1], 1);
		close(pfd[1]);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		execvp(av[0], av);
		fprintf(stderr,
			"sweep: cannot run GNU parallel (%s): install it (scripts/deps) or "
			"drop --jobs/--hosts\n",
			strerror(errno));
		_exit(127);
	}
	dmr_sweep_argv_free(av);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		fprintf(stderr, "sweep: fork: %s\n", strerror(errno));
		return 1;
	}
	FILE *in = fdopen(pfd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	int forwarded = 0, fatal = 0;
	dmr_sweep_progress(c, NULL, 0);
	for (;;) {
		errno = 0;
		ssize_t n = getline(&line, &cap, in);
		if (n < 0) {
			if (errno == EINTR) {
				clearerr(in);
				if (dmr_sig_caught() && !forwarded) {
					/* parallel: stop starting jobs, finish running ones */
					kill(pid, SIGTERM);
					forwarded = 1;
				}
				continue;
			}
			break;
		}
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "DMR-ROW\t", 8) == 0) {
			char *hdr = line + 8, *row = strchr(hdr, '\t');
			if (!row)
				continue;
			*row++ = '\0';
			dmr_err_t err = {{0}};
			if (!fatal && append_row(c, hdr, row, &err) == DMR_OK) {
				c->now++;
				/* mark done for the final count */
			} else {
				c->failed++;
				if (!fatal)
					report_fail(c, "(row)", 0, err.msg);
				if (!fatal && strstr(err.msg, "columns differ")) {
					fatal = 1;
					kill(pid, SIGTERM);
				}
			}
			dmr_sweep_progress(c, NULL, 0);
		} else if (strncmp(line, "DMR-FAIL\t", 9) == 0) {
			char *cell = line + 9, *rep = strchr(cell, '\t'), *msg = NULL;
			if (rep) {
				*rep++ = '\0';
				msg = strchr(rep, '\t');
				if (msg)
					*msg++ = '\0';
			}
			c->failed++;
			report_fail(c, cell, rep ? (unsigned)atoi(rep) : 0, msg ? msg : "?");
			dmr_sweep_progress(c, NULL, 0);
		} else if (n) {
			printf("%s\n", line);
		}
		if (dmr_sig_caught() && !forwarded) {
			kill(pid, SIGTERM);
			forwarded = 1;
		}
	}
	free(line);
	fclose(in);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && c->now == 0)
		return 1;
	return fatal;
}
