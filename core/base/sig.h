/*
 * core/base/sig.h - SIGINT and SIGTERM as a stop request.
 *
 * Every long-running subcommand stops cleanly on SIGINT or SIGTERM: it
 * finishes or abandons the current step, writes partial results and exits
 * 130. dmr_sig_install() installs one handler for both signals that only
 * records the signal number (an atomic store: async-signal-safe), without
 * SA_RESTART, so a blocking wait returns EINTR and the loop around it checks
 * dmr_sig_caught(). The previous handlers are saved for dmr_sig_restore().
 * One flag per process: a process runs one subcommand. Installing clears
 * the flag, unless the stop handler is installed already (a nested install:
 * a command that runs a replay, which installs it again), so that a stop
 * that arrived before the inner install is not lost. Part of core/base (nothing of ours below).
 */
#ifndef DMR_BASE_SIG_H
#define DMR_BASE_SIG_H

#include <signal.h>

typedef struct dmr_sig_saved {
	struct sigaction old_int, old_term;
} dmr_sig_saved_t;

/* Install the stop handler (clears the flag); saved may be NULL. */
void dmr_sig_install(dmr_sig_saved_t *saved);
/* Put back the handlers saved by dmr_sig_install (the flag is kept). */
void dmr_sig_restore(const dmr_sig_saved_t *saved);
/* 0, or the number of the last SIGINT/SIGTERM received since install. */
int dmr_sig_caught(void);
/* Set the flag as if signal `sig` had arrived (tests; a stop requested by
 * the program itself); 0 clears it. */
void dmr_sig_raise_flag(int sig);

#endif /* DMR_BASE_SIG_H */
