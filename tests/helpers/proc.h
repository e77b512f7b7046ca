/*
 * tests/helpers/proc.h - running a command with its stdout and stderr
 * captured: the dmreplay binary as a child process, or a subcommand's main()
 * in this process (dmr_test_helpers library).
 *
 * Output goes to unlinked temp files in $TMPDIR (/tmp when unset), read back
 * whole. Check forks every test, so getopt and stdio state of an in-process
 * main() do not leak between tests.
 */
#ifndef DMR_TEST_PROC_H
#define DMR_TEST_PROC_H

/* A finished command. */
typedef struct dmr_test_run {
	int status; /* exit status (child: 128 + signal when killed; in-process:
		       what main returned) */
	char *out;  /* stdout, malloc'd */
	char *err;  /* stderr, malloc'd */
} dmr_test_run_t;

/* Run dmr_test_bin (suite.h) with args (NULL-terminated, at most 62, not
 * counting argv[0]) and wait for it. */
dmr_test_run_t dmr_test_dmrv(const char *const *args);

/* The same, args as a NULL-terminated list: dmr_test_dmr("run", ..., NULL). */
dmr_test_run_t dmr_test_dmr(const char *arg0, ...);

/* Call fn(argc, argv) with a copy of args (NULL-terminated, at most 63;
 * args[0] is argv[0]), stdout and stderr captured. */
dmr_test_run_t dmr_test_call_mainv(int (*fn)(int, char **), const char *const *args);

/* The same, args as a NULL-terminated list. */
dmr_test_run_t dmr_test_call_main(int (*fn)(int, char **), const char *arg0, ...);

/* Free r's output. */
void dmr_test_run_free(dmr_test_run_t *r);

/* Assert that r exited 0; the message shows both outputs. */
void dmr_test_run_ok(const dmr_test_run_t *r);

#endif
