/*
 * tests/integration/test_ucx.c - the ucx backend (backends/ucx/ucx.h) beyond
 * the conformance suite (test_backend_ucx_*): UCX_TLS respected (the lanes
 * UCP selected name the transport asked for; a UCX_TLS that names nothing
 * usable, or nothing that carries RMA and atomics, refused at open and by
 * `dmreplay run` with exit 2 and a message naming it), several MNs (each
 * its own region, per-MN counters), atomics from four threads on one word
 * (every old value seen once), mr_dereg of an unregistered buffer, and
 * `dmreplay run --backend ucx` replaying TPC-C (the shipped sample) and
 * SmallBank with their verification PASSED.
 *
 * Transport: UCX_TLS=tcp (loopback) unless the environment sets UCX_TLS.
 * Without the ucx backend built, or when it cannot open on that transport,
 * it prints SKIPPED and the reason and exits 77.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "helpers/be.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#ifdef DMR_HAVE_UCX
#include "backends/ucx/ucx.h"
#endif

#define MR_SIZE (1u << 20)
#define DEADLINE_NS 10000000000ull

#ifdef DMR_HAVE_UCX

static char g_tls[128]; /* the transport of the suite's runs */

static dmr_status_t try_open(uint32_t mns, uint32_t workers, dmr_be_t **be_p, dmr_err_t *err)
{
	dmr_be_config_t cfg = {
	    .backend = "ucx", .mns = mns, .cns = 1, .workers = workers, .mr_size = MR_SIZE};
	return dmr_be_open(&cfg, be_p, err);
}

static dmr_be_t *open_be(uint32_t mns, uint32_t workers)
{
	dmr_be_t *be = NULL;
	dmr_err_t err;
	ck_assert_msg(try_open(mns, workers, &be, &err) == DMR_OK, "open ucx: %s", err.msg);
	return be;
}

/* The lanes of worker 0 -> MN 0 name the transport of UCX_TLS: tcp/... for
 * tcp, a shared-memory one (posix/sysv) and no tcp for sm. */
START_TEST(transports_follow_ucx_tls)
{
	const char *want[][3] = {{"tcp", "tcp/", "posix/"}, {"sm", "/memory", "tcp/"}};
	for (int i = 0; i < 2; i++) {
		setenv("UCX_TLS", want[i][0], 1);
		dmr_be_t *be = NULL;
		dmr_err_t err;
		if (try_open(1, 1, &be, &err) != DMR_OK) {
			printf("SKIPPED: transports_follow_ucx_tls with UCX_TLS=%s: %s\n",
			       want[i][0], err.msg);
			continue;
		}
		char text[4096];
		ck_assert_int_eq(dmr_ucx_transports(be, 0, 0, text, sizeof(text), &err), DMR_OK);
		ck_assert_msg(strstr(text, want[i][1]) && !strstr(text, want[i][2]),
			      "UCX_TLS=%s: lanes\n%s", want[i][0], text);
		ck_assert_int_eq(dmr_ucx_transports(be, 1, 0, text, sizeof(text), &err),
				 DMR_ERR_RANGE);
		dmr_be_close(be);
	}
	setenv("UCX_TLS", g_tls, 1);
}
END_TEST

/* A UCX_TLS with no such transport (ucp_init fails) or with none that can
 * carry RMA and atomics to the MN (self: same worker only; ucp_ep_create
 * fails): DMR_ERR_NODEV naming UCX_TLS. */
START_TEST(unusable_ucx_tls_refused)
{
	const char *bad[] = {"nosuchtransport", "self"};
	for (int i = 0; i < 2; i++) {
		setenv("UCX_TLS", bad[i], 1);
		dmr_be_t *be = NULL;
		dmr_err_t err;
		ck_assert_int_eq(try_open(1, 2, &be, &err), DMR_ERR_NODEV);
		char want[64];
		snprintf(want, sizeof(want), "UCX_TLS=%s names no", bad[i]);
		ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
	}
	setenv("UCX_TLS", g_tls, 1);
}
END_TEST

/* The same through the command line: exit 2 (bad input), the message on
 * stderr, no summary written. */
START_TEST(run_with_unusable_ucx_tls_exits_2)
{
	setenv("UCX_TLS", "nosuchtransport", 1);
	char out[DMR_TEST_DIR_MAX], sum[DMR_TEST_DIR_MAX + 16];
	dmr_test_path(out, sizeof(out), "badtls");
	dmr_test_run_t r = dmr_test_dmr("run", "--backend", "ucx", "--cns", "1", "--threads", "1",
					"--txns", "10", "--out", out, NULL);
	setenv("UCX_TLS", g_tls, 1);
	ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "UCX_TLS=nosuchtransport"), "%s", r.err);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert(!dmr_test_exists(sum));
	dmr_test_run_free(&r);
}
END_TEST

/* The connection mode's bad input (ucx.h "Connection modes"): a
 * DMR_UCX_CONNECT that is not a mode, sockaddr without DMR_UCX_LISTEN or
 * with one that is not a numeric address, sockaddr with MN processes:
 * DMR_ERR_INVALID naming the variable. UCX_TLS=rc (auto: sockaddr): refused
 * naming UCX_TLS where this host has no rc (ucp_init), else naming
 * DMR_UCX_LISTEN. */
START_TEST(connect_mode_bad_input_refused)
{
	const char *cases[][4] = {
	    /* DMR_UCX_CONNECT, DMR_UCX_LISTEN, DMR_UCX_MN, the message */
	    {"bogus", NULL, NULL, "DMR_UCX_CONNECT=bogus: not auto, address or sockaddr"},
	    {"sockaddr", NULL, NULL, "needs DMR_UCX_LISTEN=IP"},
	    {"sockaddr", "10.0.0.300", NULL, "DMR_UCX_LISTEN=10.0.0.300: not a numeric"},
	    /* IPv6: UCX 1.13's tcp CM overflows a buffer on it (a trial's abort) */
	    {"sockaddr", "::1", NULL, "DMR_UCX_LISTEN=::1: not a numeric IPv4 address"},
	    {"sockaddr", "127.0.0.1", "127.0.0.1:1", "is loopback-only"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		setenv("DMR_UCX_CONNECT", cases[i][0], 1);
		if (cases[i][1])
			setenv("DMR_UCX_LISTEN", cases[i][1], 1);
		if (cases[i][2])
			setenv("DMR_UCX_MN", cases[i][2], 1);
		dmr_be_t *be = NULL;
		dmr_err_t err;
		ck_assert_int_eq(try_open(1, 1, &be, &err), DMR_ERR_INVALID);
		ck_assert_msg(strstr(err.msg, cases[i][3]), "case %zu: %s", i, err.msg);
		unsetenv("DMR_UCX_CONNECT");
		unsetenv("DMR_UCX_LISTEN");
		unsetenv("DMR_UCX_MN");
	}
	setenv("UCX_TLS", "rc", 1);
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = try_open(1, 1, &be, &err);
	setenv("UCX_TLS", g_tls, 1);
	ck_assert_msg((st == DMR_ERR_NODEV && strstr(err.msg, "UCX_TLS=rc names no usable")) ||
			  (st == DMR_ERR_INVALID && strstr(err.msg, "needs DMR_UCX_LISTEN")),
		      "UCX_TLS=rc: %d %s", st, err.msg);
}
END_TEST

/* The same through the command line: exit 2, no summary written. */
START_TEST(run_with_bad_connect_mode_exits_2)
{
	setenv("DMR_UCX_CONNECT", "sockaddr", 1);
	char out[DMR_TEST_DIR_MAX], sum[DMR_TEST_DIR_MAX + 16];
	dmr_test_path(out, sizeof(out), "badmode");
	dmr_test_run_t r = dmr_test_dmr("run", "--backend", "ucx", "--cns", "1", "--threads", "1",
					"--txns", "10", "--out", out, NULL);
	unsetenv("DMR_UCX_CONNECT");
	ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "needs DMR_UCX_LISTEN"), "%s", r.err);
	snprintf(sum, sizeof(sum), "%s/summary.csv", out);
	ck_assert(!dmr_test_exists(sum));
	dmr_test_run_free(&r);
}
END_TEST

/* The sockaddr mode on tcp (loopback): the endpoints are clients of the
 * MNs' listeners (DMR_UCX_INFO names the mode), and `dmreplay run` on the
 * TPC-C sample verifies. tcp only: the mode exists for RDMA transports,
 * scripts/rxe-ucx-check runs it on rc_verbs in the VM. */
START_TEST(sockaddr_mode_replay_verified)
{
	if (strcmp(g_tls, "tcp") != 0) {
		printf("SKIPPED: sockaddr_mode_replay_verified: UCX_TLS=%s, not tcp\n", g_tls);
		return;
	}
	setenv("DMR_UCX_CONNECT", "sockaddr", 1);
	setenv("DMR_UCX_LISTEN", "127.0.0.1", 1);
	setenv("DMR_UCX_INFO", "1", 1);
	char out[DMR_TEST_DIR_MAX], trace[DMR_TEST_DIR_MAX + 64];
	dmr_test_path(out, sizeof(out), "sockaddr");
	snprintf(trace, sizeof(trace), "%s/traces/samples/tpcc-extreme.csv", dmr_test_src);
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--backend", "ucx", "--trace", trace, "--cns", "1", "--threads",
			 "2", "--coros", "2", "--txns", "500", "--out", out, NULL);
	unsetenv("DMR_UCX_CONNECT");
	unsetenv("DMR_UCX_LISTEN");
	unsetenv("DMR_UCX_INFO");
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.err, "connection mode sockaddr"), "%s", r.err);
	ck_assert_msg(strstr(r.out, "verification   PASSED") && strstr(r.out, "tpcc C1 C2 C3 ok"),
		      "%s", r.out);
	ck_assert_msg(!strstr(r.out, " 0 committed"), "%s", r.out);
	dmr_test_run_free(&r);
}
END_TEST

/* Three MNs: a WRITE to each lands in its own region only (offset 64 of
 * MN m holds 100 + m), READs and an FAA per MN; MN_STATS counts each MN's
 * WRs. */
START_TEST(several_mns)
{
	dmr_be_t *be = open_be(3, 1);
	static uint64_t v[3], got[3], old[3];
	for (uint32_t m = 0; m < 3; m++) {
		v[m] = 100 + m;
		ck_assert_int_eq(
		    dmr_be_post_one(be, 0, m, DMR_WR_WRITE, m, &v[m], 64, 8, 0, 0, NULL), DMR_OK);
	}
	dmr_wc_t wc[3];
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	for (uint32_t m = 0; m < 3; m++) {
		ck_assert_int_eq(wc[m].status, DMR_WC_SUCCESS);
		uint64_t len = 0;
		uint64_t *mem = dmr_be_mn_memory(be, m, &len);
		ck_assert_uint_eq(len, MR_SIZE);
		ck_assert_uint_eq(mem[8], 100 + m);
		dmr_wr_t wrs[2] = {{.wr_id = 10 + m,
				    .local = &got[m],
				    .remote = 64,
				    .length = 8,
				    .opcode = DMR_WR_READ,
				    .flags = DMR_WR_SIGNALED},
				   {.wr_id = 20 + m,
				    .local = &old[m],
				    .remote = 64,
				    .compare_add = 5,
				    .opcode = DMR_WR_FAA,
				    .flags = DMR_WR_SIGNALED}};
		ck_assert_int_eq(dmr_be_post(be, 0, m, wrs, 2, NULL), DMR_OK);
	}
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 3, DEADLINE_NS), 3);
	for (uint32_t m = 0; m < 3; m++) {
		ck_assert_uint_eq(got[m], 100 + m);
		ck_assert_uint_eq(old[m], 100 + m);
		ck_assert_uint_eq(((uint64_t *)dmr_be_mn_memory(be, m, NULL))[8], 105 + m);
	}
	dmr_be_mn_stats_t ms[3];
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_MN_STATS, ms, NULL), DMR_OK);
	for (uint32_t m = 0; m < 3; m++) {
		ck_assert_uint_eq(ms[m].verbs, 3);
		ck_assert_uint_eq(ms[m].writes, 1);
		ck_assert_uint_eq(ms[m].reads, 1);
		ck_assert_uint_eq(ms[m].atomics, 1);
		ck_assert_uint_eq(ms[m].bytes_read, 8);
		ck_assert_uint_eq(ms[m].bytes_written, 8);
	}
	dmr_be_close(be);
}
END_TEST

#define THREADS 4
#define FAAS 300

typedef struct faa_arg {
	dmr_be_t *be;
	uint32_t w;
	uint64_t old[FAAS];
	int ok;
} faa_arg_t;

/* One worker's thread: FAAS FAAs of 1 on offset 0, each waited for. */
static void *faa_thread(void *p)
{
	faa_arg_t *a = p;
	uint64_t old = 0;
	a->ok = 1;
	for (uint32_t i = 0; i < FAAS && a->ok; i++) {
		dmr_wc_t wc;
		a->ok = dmr_be_post_one(a->be, a->w, 0, DMR_WR_FAA, i, &old, 0, 8, 1, 0, NULL) ==
			    DMR_OK &&
			dmr_test_wait_wc(a->be, a->w, &wc, 1, DEADLINE_NS) == 1 &&
			wc.status == DMR_WC_SUCCESS && wc.wr_id == i;
		a->old[i] = old;
	}
	return NULL;
}

/* Four workers in four threads add 1 to one word FAAS times each: the word
 * ends at THREADS * FAAS and every old value 0..THREADS*FAAS-1 came back
 * exactly once (the MN executes the atomics, not the CNs). */
START_TEST(atomics_from_threads)
{
	dmr_be_t *be = open_be(1, THREADS);
	static faa_arg_t a[THREADS];
	pthread_t th[THREADS];
	for (uint32_t t = 0; t < THREADS; t++) {
		a[t] = (faa_arg_t){.be = be, .w = t};
		ck_assert_int_eq(pthread_create(&th[t], NULL, faa_thread, &a[t]), 0);
	}
	for (uint32_t t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	static uint8_t seen[THREADS * FAAS];
	for (uint32_t t = 0; t < THREADS; t++) {
		ck_assert_msg(a[t].ok, "worker %u: an FAA failed", t);
		for (uint32_t i = 0; i < FAAS; i++) {
			ck_assert_uint_lt(a[t].old[i], THREADS * FAAS);
			ck_assert_msg(!seen[a[t].old[i]], "old value %llu twice",
				      (unsigned long long)a[t].old[i]);
			seen[a[t].old[i]] = 1;
		}
	}
	ck_assert_uint_eq(*(uint64_t *)dmr_be_mn_memory(be, 0, NULL), THREADS * FAAS);
	dmr_be_close(be);
}
END_TEST

START_TEST(mr_dereg_unknown_refused)
{
	dmr_be_t *be = open_be(1, 2);
	static uint64_t buf[4];
	dmr_err_t err;
	ck_assert_int_eq(dmr_be_mr_reg(be, 0, buf, sizeof(buf), &err), DMR_OK);
	ck_assert_int_eq(dmr_be_mr_dereg(be, 1, buf, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "not registered for worker 1"), "%s", err.msg);
	ck_assert_int_eq(dmr_be_mr_dereg(be, 0, buf, &err), DMR_OK);
	ck_assert_int_eq(dmr_be_mr_dereg(be, 0, buf, &err), DMR_ERR_INVALID);
	dmr_be_close(be);
}
END_TEST

/* `dmreplay run --backend ucx` on trace: exit 0, verification PASSED,
 * some transactions committed. */
static void replay_verified(const char *trace, const char *name, const char *check)
{
	char out[DMR_TEST_DIR_MAX];
	dmr_test_path(out, sizeof(out), name);
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--backend", "ucx", "--trace", trace, "--cns", "2", "--threads",
			 "2", "--coros", "2", "--txns", "1500", "--out", out, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "on ucx/"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "verification   PASSED") && strstr(r.out, check), "%s", r.out);
	ck_assert_msg(!strstr(r.out, " 0 committed"), "%s", r.out);
	printf("ucx (UCX_TLS=%s) %s:\n%s", g_tls, name, r.out);
	dmr_test_run_free(&r);
}

START_TEST(replay_tpcc_verified)
{
	char trace[DMR_TEST_DIR_MAX + 64];
	snprintf(trace, sizeof(trace), "%s/traces/samples/tpcc-extreme.csv", dmr_test_src);
	replay_verified(trace, "tpcc", "tpcc C1 C2 C3 ok");
}
END_TEST

START_TEST(replay_smallbank_verified)
{
	char trace[DMR_TEST_DIR_MAX];
	dmr_test_path(trace, sizeof(trace), "sb.csv");
	dmr_test_run_t g =
	    dmr_test_dmr("gen", "smallbank", "--accounts", "10000", "--regime", "hot:100/0.9",
			 "--txns", "1500", "--seed", "1", "-o", trace, NULL);
	dmr_test_run_ok(&g);
	dmr_test_run_free(&g);
	replay_verified(trace, "smallbank", "smallbank sum ok");
}
END_TEST

/* ---- two processes: dmreplay-ucx-mn and this one ------------------------ */

typedef struct mn_proc {
	pid_t pid;
	char hostport[64];
} mn_proc_t;

/* Start dmreplay-ucx-mn (beside dmreplay) on an ephemeral loopback port
 * with args (NULL-terminated extra options) and read the port it prints. */
static mn_proc_t start_mn(const char *extra)
{
	char bin[DMR_TEST_DIR_MAX + 32];
	snprintf(bin, sizeof(bin), "%s", dmr_test_bin);
	char *slash = strrchr(bin, '/');
	ck_assert_ptr_nonnull(slash);
	snprintf(slash + 1, sizeof(bin) - (size_t)(slash + 1 - bin), "dmreplay-ucx-mn");
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	mn_proc_t mp = {.pid = fork()};
	ck_assert_int_ge(mp.pid, 0);
	if (mp.pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(bin, bin, "--listen", "127.0.0.1:0", extra, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	char line[256] = "";
	ck_assert_msg(fgets(line, sizeof(line), f), "%s printed nothing", bin);
	fclose(f);
	char *at = strstr(line, "listening on ");
	ck_assert_msg(at, "%s", line);
	snprintf(mp.hostport, sizeof(mp.hostport), "%s", at + strlen("listening on "));
	mp.hostport[strcspn(mp.hostport, "\n")] = 0;
	return mp;
}

/* An MN process and `dmreplay run` as the CN process over UCX_TLS: TPC-C
 * verified (the barrier moved the region to the MN and back); the MN's
 * --once session ends with the CN and it exits 0. */
START_TEST(two_processes_replay_verified)
{
	mn_proc_t mp = start_mn("--once");
	setenv("DMR_UCX_MN", mp.hostport, 1);
	char trace[DMR_TEST_DIR_MAX + 64], out[DMR_TEST_DIR_MAX];
	snprintf(trace, sizeof(trace), "%s/traces/samples/tpcc-extreme.csv", dmr_test_src);
	dmr_test_path(out, sizeof(out), "two");
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--backend", "ucx", "--trace", trace, "--cns", "1", "--threads",
			 "2", "--coros", "2", "--txns", "500", "--out", out, NULL);
	unsetenv("DMR_UCX_MN");
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "verification   PASSED (tpcc C1 C2 C3 ok)"), "%s", r.out);
	printf("ucx two processes (UCX_TLS=%s, MN at %s):\n%s", g_tls, mp.hostport, r.out);
	dmr_test_run_free(&r);
	int ws = 0;
	ck_assert_int_eq(waitpid(mp.pid, &ws, 0), mp.pid);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "dmreplay-ucx-mn: status 0x%x", ws);
}
END_TEST

/* The MN process killed mid-run: the CN's next WR completes with an error
 * within the deadline, the one after it is flushed. */
START_TEST(mn_killed_mid_run)
{
	mn_proc_t mp = start_mn(NULL);
	setenv("DMR_UCX_MN", mp.hostport, 1);
	dmr_be_t *be = open_be(1, 1);
	unsetenv("DMR_UCX_MN");
	static uint64_t v = 7, got;
	dmr_wc_t wc[2];
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_WRITE, 1, &v, 64, 8, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 1, DEADLINE_NS), 1);
	ck_assert_int_eq(wc[0].status, DMR_WC_SUCCESS);
	kill(mp.pid, SIGKILL);
	waitpid(mp.pid, NULL, 0);
	dmr_wr_t wrs[2] = {{.wr_id = 2,
			    .local = &got,
			    .remote = 64,
			    .length = 8,
			    .opcode = DMR_WR_FAA,
			    .flags = DMR_WR_SIGNALED},
			   {.wr_id = 3,
			    .local = &got,
			    .remote = 64,
			    .length = 8,
			    .opcode = DMR_WR_READ,
			    .flags = DMR_WR_SIGNALED}};
	ck_assert_int_eq(dmr_be_post(be, 0, 0, wrs, 2, NULL), DMR_OK);
	ck_assert_int_eq(dmr_test_wait_wc(be, 0, wc, 2, 60 * DEADLINE_NS / 10), 2);
	ck_assert_uint_eq(wc[0].wr_id, 2);
	ck_assert_msg(wc[0].status == DMR_WC_RETRY_EXC_ERR, "an FAA to a dead MN: %s",
		      dmr_wc_status_string(wc[0].status));
	ck_assert_uint_eq(wc[1].wr_id, 3);
	ck_assert_int_eq(wc[1].status, DMR_WC_FLUSH_ERR);
	dmr_be_close(be);
}
END_TEST

/* DMR_UCX_MN naming no MN process: open fails naming the address. */
START_TEST(no_mn_process_refused)
{
	setenv("DMR_UCX_MN", "127.0.0.1:1", 1);
	dmr_be_t *be = NULL;
	dmr_err_t err;
	ck_assert_int_eq(try_open(1, 1, &be, &err), DMR_ERR_REMOTE);
	ck_assert_msg(strstr(err.msg, "127.0.0.1:1") && strstr(err.msg, "cannot connect"), "%s",
		      err.msg);
	setenv("DMR_UCX_MN", "127.0.0.1:1,127.0.0.1:2", 1);
	ck_assert_int_eq(try_open(1, 1, &be, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "names 2 MNs, the run has 1"), "%s", err.msg);
	unsetenv("DMR_UCX_MN");
}
END_TEST

#if defined(__SANITIZE_THREAD__)
#define UCX_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UCX_TEST_TSAN 1
#endif
#endif

int main(int argc, char **argv)
{
	(void)argc;
#ifdef UCX_TEST_TSAN
	/* UCX's memory hooks (UCM: patched mmap/munmap) crash a ThreadSanitizer
	 * process at start-up; they must be off before libucs loads, so this
	 * suite (and the dmreplay it runs) restarts with them off */
	if (!getenv("UCX_MEM_EVENTS")) {
		setenv("UCX_MEM_EVENTS", "no", 1);
		execv("/proc/self/exe", argv);
		perror("test_ucx: re-exec with UCX_MEM_EVENTS=no");
		return EXIT_FAILURE;
	}
#else
	(void)argv;
#endif
	unsetenv("DMR_UCX_MN"); /* loopback unless a test sets it */
	const char *t = getenv("UCX_TLS");
	snprintf(g_tls, sizeof(g_tls), "%s", t && *t ? t : "tcp");
	setenv("UCX_TLS", g_tls, 1);
	dmr_be_t *be = NULL;
	dmr_err_t err;
	if (try_open(1, 1, &be, &err) != DMR_OK) {
		printf("SKIPPED: ucx backend on UCX_TLS=%s: %s\n", g_tls, err.msg);
		return 77;
	}
	dmr_be_close(be);
	if (dmr_test_env_init("ucx", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("ucx");
	TCase *tc = tcase_create("ucx");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, transports_follow_ucx_tls);
	tcase_add_test(tc, unusable_ucx_tls_refused);
	tcase_add_test(tc, run_with_unusable_ucx_tls_exits_2);
	tcase_add_test(tc, connect_mode_bad_input_refused);
	tcase_add_test(tc, run_with_bad_connect_mode_exits_2);
	tcase_add_test(tc, sockaddr_mode_replay_verified);
	tcase_add_test(tc, several_mns);
	tcase_add_test(tc, atomics_from_threads);
	tcase_add_test(tc, mr_dereg_unknown_refused);
	tcase_add_test(tc, replay_tpcc_verified);
	tcase_add_test(tc, replay_smallbank_verified);
	tcase_add_test(tc, two_processes_replay_verified);
	tcase_add_test(tc, mn_killed_mid_run);
	tcase_add_test(tc, no_mn_process_refused);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}

#else

int main(void)
{
	printf("SKIPPED: the ucx backend is not built (DMR_UCX=OFF, or libucx-dev missing)\n");
	return 77;
}

#endif
