/*
 * replay/roles/children.c - the MN and CN processes as children of one
 * command (`dmreplay run --procs`, `dmreplay kv run --procs`): spawn them,
 * wait for them in one loop (signals forwarded, deadlines, a failed child
 * stops the rest), and show what their logs say went wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "roles_impl.h"

pid_t dmr_roles_spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "dmreplay run --procs: exec /proc/self/exe: %s\n", strerror(errno));
	_exit(127);
}

void dmr_roles_signal_all(dmr_roles_child_t *c, uint32_t n, int sig)
{
	for (uint32_t i = 0; i < n; i++)
		if (c[i].pid > 0 && c[i].status < 0)
			kill(c[i].pid, sig);
}

void dmr_roles_wait_children(const char *pfx, dmr_roles_child_t *ch, uint32_t n, double deadline_s,
			     uint32_t mn_first, int *interrupted_p, int *timed_out_p)
{
	double t0 = dmr_wall_s(), fail_at = 0, term_at = 0;
	int forwarded = 0;
	uint32_t left = 0;
	*interrupted_p = *timed_out_p = 0;
	for (uint32_t i = 0; i < n; i++) {
		left += ch[i].status < 0;
		if (ch[i].status > 0 && !fail_at)
			fail_at = t0;
	}
	while (left > 0) {
		int wst;
		pid_t pid = waitpid(-1, &wst, WNOHANG);
		if (pid > 0) {
			for (uint32_t i = 0; i < n; i++)
				if (ch[i].pid == pid && ch[i].status < 0) {
					ch[i].status =
					    WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
					left--;
					fprintf(stderr, "%s: %s exited %d after %.1f s\n", pfx,
						ch[i].name, ch[i].status, dmr_wall_s() - t0);
					if (ch[i].status != 0 && !fail_at)
						fail_at = dmr_wall_s();
				}
			continue;
		}
		double now = dmr_wall_s();
		int sig = dmr_sig_caught();
		if (sig && !forwarded) {
			*interrupted_p = 1;
			forwarded = 1;
			fprintf(stderr, "%s: signal %d: forwarded to the children\n", pfx, sig);
			dmr_roles_signal_all(ch, n, sig);
			term_at = now;
		}
		if (!forwarded && deadline_s > 0 && now - t0 > deadline_s) {
			*timed_out_p = 1;
			forwarded = 1;
			fprintf(stderr,
				"%s: deadline of %.0f s passed: stopping the children (SIGTERM)\n",
				pfx, deadline_s);
			dmr_roles_signal_all(ch, n, SIGTERM);
			term_at = now;
		}
		uint32_t mn_left = 0;
		for (uint32_t k = 0; k < mn_first && k < n; k++)
			mn_left += ch[k].status < 0;
		if (!forwarded && mn_left && fail_at) {
			/* every CN has exited and one failed: the MNs have nobody to
			 * serve (they would wait for their barriers); stop them now */
			uint32_t cn_left = 0;
			for (uint32_t k = mn_first; k < n; k++)
				cn_left += ch[k].status < 0;
			if (!cn_left) {
				forwarded = 1;
				fprintf(stderr,
					"%s: every CN has exited, one failed: stopping the MN "
					"(SIGTERM)\n",
					pfx);
				dmr_roles_signal_all(ch, n, SIGTERM);
				term_at = now;
			}
		}
		if (!forwarded && fail_at && now - fail_at > 10) {
			forwarded = 1;
			fprintf(stderr,
				"%s: a child failed 10 s ago: stopping the others (SIGTERM)\n",
				pfx);
			dmr_roles_signal_all(ch, n, SIGTERM);
			term_at = now;
		}
		if (forwarded && term_at && now - term_at > 10) {
			dmr_roles_signal_all(ch, n, SIGKILL);
			term_at = 0;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

int dmr_roles_spawn_wait(const char *pfx, uint32_t n, char **const argvs[],
			 const char *const names[], const char *const logs[], double deadline_s,
			 int *status_p)
{
	dmr_roles_child_t *ch = calloc(n ? n : 1, sizeof(*ch));
	if (!ch) {
		fprintf(stderr, "%s: error: out of memory\n", pfx);
		for (uint32_t i = 0; i < n; i++)
			status_p[i] = 127;
		return 1;
	}
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(ch[i].name, sizeof(ch[i].name), "%s", names[i]);
		snprintf(ch[i].log, sizeof(ch[i].log), "%s", logs[i]);
		ch[i].status = -1;
		ch[i].pid = dmr_roles_spawn(argvs[i], ch[i].log);
		if (ch[i].pid <= 0) {
			fprintf(stderr, "%s: error: fork (%s): %s\n", pfx, names[i],
				strerror(errno));
			ch[i].pid = 0;
			ch[i].status = 127;
			dmr_roles_signal_all(ch, i, SIGTERM);
			for (uint32_t j = i + 1; j < n; j++)
				ch[j].status = 127;
			break;
		}
	}
	int interrupted, timed_out;
	dmr_roles_wait_children(pfx, ch, n, deadline_s, 0, &interrupted, &timed_out);
	int rc = interrupted ? 130 : timed_out ? 1 : 0;
	dmr_sig_restore(&saved);
	for (uint32_t i = 0; i < n; i++)
		status_p[i] = ch[i].status;
	free(ch);
	return rc;
}

void dmr_roles_print_log_errors(const char *log)
{
	static const char *const keys[] = {"error", "fail", "warning"};
	char line[512];
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		FILE *f = fopen(log, "r");
		int n = 0;
		while (f && n < 6 && fgets(line, sizeof(line), f))
			if (strstr(line, keys[k])) {
				fprintf(stderr, "    %s%s", line, strchr(line, '\n') ? "" : "\n");
				n++;
			}
		if (f)
			fclose(f);
		if (n)
			return;
	}
	FILE *f = fopen(log, "r");
	char ring[4][512];
	int nl = 0;
	while (f && fgets(line, sizeof(line), f))
		snprintf(ring[nl++ % 4], sizeof(ring[0]), "%s", line);
	for (int j = nl > 4 ? nl - 4 : 0; j < nl; j++)
		fprintf(stderr, "    %s", ring[j % 4]);
	if (f)
		fclose(f);
}
