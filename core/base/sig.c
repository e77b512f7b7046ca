/* core/base/sig.c - SIGINT and SIGTERM as a stop request (sig.h). */
#include "sig.h"

#include <stdatomic.h>
#include <string.h>

static atomic_int caught;

static void on_stop(int sig)
{
	atomic_store_explicit(&caught, sig, memory_order_relaxed);
}

void dmr_sig_install(dmr_sig_saved_t *saved)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR */
	struct sigaction cur;
	/* nested (a command that installs it runs a replay that installs it
	 * again): keep a stop that already arrived */
	if (sigaction(SIGINT, NULL, &cur) != 0 || cur.sa_handler != on_stop)
		atomic_store(&caught, 0);
	sigaction(SIGINT, &sa, saved ? &saved->old_int : NULL);
	sigaction(SIGTERM, &sa, saved ? &saved->old_term : NULL);
}

void dmr_sig_restore(const dmr_sig_saved_t *saved)
{
	if (!saved)
		return;
	sigaction(SIGINT, &saved->old_int, NULL);
	sigaction(SIGTERM, &saved->old_term, NULL);
}

int dmr_sig_caught(void)
{
	return atomic_load_explicit(&caught, memory_order_relaxed);
}

void dmr_sig_raise_flag(int sig)
{
	atomic_store(&caught, sig);
}
