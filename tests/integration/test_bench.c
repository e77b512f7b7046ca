/*
 * tests/integration/test_bench.c - `dmreplay bench` (replay/tools/bench.h): perftest-style
 * micro-benchmarks through the backend interface.
 *
 * On sim: 64 KiB READ bandwidth with 16 outstanding at MTU 4096 lies in
 * 93..96 Gb/s (ib_read_bw 94.65 on the reference cluster) and below the
 * wire ceiling at MTU 1024; latency mode's t_typical for 64 B is the
 * profile's read_rtt_ns within 1 %; a same-address CAS stream runs at the
 * profile's per-address rate; FAA from 4 QPs adds up in MN memory. On shm
 * (threaded, CLOCK_MONOTONIC): the iterations asked are the WRs completed,
 * counted by the backend too, with one doorbell each, from one QP and from
 * four threads. The command line prints perftest's columns and refuses bad
 * options with exit status 2, naming the option. On verbs, when a device
 * can be opened (else the case says SKIPPED and why), READ counts its
 * iterations as on shm.
 *
 * The commands are run in-process (dmr_bench_main) with stdout and stderr
 * redirected to files; Check forks every test, so getopt and stdio state
 * do not leak between cases.
 */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers/proc.h"
#include "helpers/suite.h"
#include "models/model.h"
#include "replay/tools/bench.h"

/* The data row under perftest's header line starting with `head`. */
static int table_row(const char *out, const char *head, double *v, int n)
{
	const char *h = strstr(out, head);
	if (!h)
		return -1;
	const char *row = strchr(h, '\n');
	if (!row)
		return -1;
	row++;
	int k = 0;
	char *end;
	const char *p = row;
	while (k < n) {
		double x = strtod(p, &end);
		if (end == p)
			break;
		v[k++] = x;
		p = end;
	}
	return k;
}

/* ---- sim ------------------------------------------------------------------ */

static dmr_bench_session_t open_sim(uint32_t workers, uint32_t mtu)
{
	dmr_bench_target_t t = {
	    .backend = "sim", .profile = "cx6dx-100g", .gid_index = -1, .mtu = mtu};
	dmr_bench_session_t s;
	dmr_err_t err;
	ck_assert_msg(dmr_bench_session_open(&s, &t, workers, 4u << 20, 1u << 20, &err) == DMR_OK,
		      "%s", err.msg);
	return s;
}

static dmr_bench_result_t run_ok(dmr_bench_session_t *s, dmr_bench_spec_t sp)
{
	dmr_bench_result_t r;
	dmr_err_t err;
	ck_assert_msg(dmr_bench_run(s, &sp, &r, &err) == DMR_OK, "%s", err.msg);
	return r;
}

START_TEST(sim_read_64k_bandwidth_mtu4096)
{
	dmr_bench_session_t s = open_sim(1, 4096);
	ck_assert_uint_eq(s.mtu, 4096);
	dmr_bench_result_t r = run_ok(
	    &s, (dmr_bench_spec_t){
		    .opcode = DMR_WR_READ, .size = 65536, .depth = 16, .iters = 5000, .qps = 1});
	ck_assert_uint_eq(r.iters, 5000);
	ck_assert_msg(r.bw_avg_gbps >= 93 && r.bw_avg_gbps <= 96, "BW average %.3f Gb/s",
		      r.bw_avg_gbps);
	ck_assert(r.bw_peak_gbps >= r.bw_avg_gbps - 1e-9);
	ck_assert_double_eq_tol(r.msg_rate_mpps, r.bw_avg_gbps * 1e3 / (65536 * 8), 1e-9);
	dmr_be_stats_t st;
	dmr_be_stats(s.be, &st);
	ck_assert_uint_eq(st.reads, 5000);
	ck_assert_uint_eq(st.doorbells, 5000); /* one signaled WR per post */
	dmr_bench_session_close(&s);

	/* the same through the command line, perftest's columns */
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "read", "--size", "65536",
					      "--depth", "16", "--iters", "5000", "--mtu", "4096",
					      "--cq-mod", "1", "--report_gbits", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	double v[5];
	ck_assert_int_eq(table_row(c.out,
				   " #bytes     #iterations    BW peak[Gb/sec]    BW "
				   "average[Gb/sec]   MsgRate[Mpps]",
				   v, 5),
			 5);
	ck_assert_double_eq(v[0], 65536);
	ck_assert_double_eq(v[1], 5000);
	ck_assert_msg(v[3] >= 93 && v[3] <= 96, "printed BW average %.2f", v[3]);
	ck_assert_msg(fabs(v[3] - r.bw_avg_gbps) < 0.01, "printed %.2f, API %.3f", v[3],
		      r.bw_avg_gbps);
	ck_assert_ptr_nonnull(strstr(c.out, "MTU 4096"));
	ck_assert_ptr_nonnull(strstr(c.out, "simulated"));
	dmr_test_run_free(&c);
}
END_TEST

/* perftest's selective signalling and post lists (command line only): one
 * completion per cq-mod WRs, post-list WRs per doorbell; every WR still
 * counted. */
START_TEST(sim_cq_mod_and_post_list)
{
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "read", "--size", "8",
					      "--depth", "16", "--iters", "1000", "--cq-mod", "7",
					      "--post-list", "4", "--report_gbits", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_ptr_nonnull(strstr(c.out, "one signaled WR in 7, 4 WRs per post"));
	double v[5];
	const char *head = " #bytes     #iterations    BW peak[Gb/sec]    BW "
			   "average[Gb/sec]   MsgRate[Mpps]";
	ck_assert_int_eq(table_row(c.out, head, v, 5), 5);
	ck_assert_double_eq(v[1], 1000);
	ck_assert(v[4] > 0 && v[2] >= v[3] - 0.01);
	dmr_test_run_free(&c);
	/* default cq-mod 100 is clamped to the depth; a count not a multiple of it */
	c = dmr_test_call_main(dmr_bench_main, "bench", "cas", "--depth", "8", "--iters", "1001",
			       "--report_gbits", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_ptr_nonnull(strstr(c.out, "one signaled WR in 8, 1 WR per post"));
	ck_assert_int_eq(table_row(c.out, head, v, 5), 5);
	ck_assert_double_eq(v[1], 1001);
	dmr_test_run_free(&c);
	/* shm (threaded): cq-mod and post-list with a remainder */
	c = dmr_test_call_main(dmr_bench_main, "bench", "write", "--backend", "shm", "--size", "64",
			       "--depth", "32", "--iters", "2003", "--cq-mod", "10", "--post-list",
			       "3", "--report_gbits", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_int_eq(table_row(c.out, head, v, 5), 5);
	ck_assert_double_eq(v[1], 2003);
	dmr_test_run_free(&c);
}
END_TEST

START_TEST(sim_mtu_1024_is_wire_bound)
{
	dmr_bench_session_t s = open_sim(1, 1024);
	dmr_bench_result_t r = run_ok(
	    &s, (dmr_bench_spec_t){
		    .opcode = DMR_WR_READ, .size = 65536, .depth = 16, .iters = 2000, .qps = 1});
	double ceiling = 100.0 * 1024 / (1024 + 82);
	ck_assert_msg(r.bw_avg_gbps <= ceiling && r.bw_avg_gbps > ceiling - 1.5,
		      "%.3f Gb/s, wire ceiling %.3f", r.bw_avg_gbps, ceiling);
	dmr_bench_session_close(&s);
}
END_TEST

START_TEST(sim_latency_64b_is_profile_rtt)
{
	dmr_model_t m;
	dmr_err_t err;
	ck_assert(dmr_model_load("cx6dx-100g", &m, &err) == DMR_OK);
	dmr_bench_session_t s = open_sim(1, 0);
	dmr_bench_result_t r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_READ,
							     .size = 64,
							     .depth = 1,
							     .iters = 1000,
							     .qps = 1,
							     .latency = 1});
	ck_assert_uint_eq(r.iters, 1000);
	double want = m.read_rtt_ns / 1e3;
	ck_assert_msg(fabs(r.t_typical_us - want) <= 0.01 * want, "t_typical %.4f us, profile %.4f",
		      r.t_typical_us, want);
	ck_assert(r.t_min_us <= r.t_typical_us && r.t_typical_us <= r.t_max_us);
	ck_assert(r.t_p99_us <= r.t_p999_us && r.t_p999_us <= r.t_max_us + 1e-12);
	dmr_bench_session_close(&s);

	dmr_test_run_t c =
	    dmr_test_call_main(dmr_bench_main, "bench", "read", "--latency", "--size", "64", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	double v[9];
	ck_assert_int_eq(table_row(c.out,
				   " #bytes #iterations    t_min[usec]    t_max[usec]  "
				   "t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% "
				   "percentile[usec]   99.9% percentile[usec]",
				   v, 9),
			 9);
	ck_assert_double_eq(v[0], 64);
	ck_assert_double_eq(v[1], 1000); /* --iters default of latency mode */
	ck_assert_msg(fabs(v[4] - want) <= 0.01 * want, "printed t_typical %.2f, profile %.3f",
		      v[4], want);
	dmr_test_run_free(&c);
}
END_TEST

START_TEST(sim_atomics)
{
	dmr_model_t m;
	dmr_err_t err;
	ck_assert(dmr_model_load("cx6dx-100g", &m, &err) == DMR_OK);
	dmr_bench_session_t s = open_sim(4, 0);
	dmr_bench_result_t r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_CAS,
							     .size = 8,
							     .depth = 16,
							     .iters = 5000,
							     .qps = 1,
							     .same_addr = 1});
	ck_assert_msg(fabs(r.msg_rate_mpps - m.atomic_addr_mops) <= 0.02 * m.atomic_addr_mops,
		      "same-address CAS %.4f Mops/s, profile %.4f", r.msg_rate_mpps,
		      m.atomic_addr_mops);
	uint64_t *word = dmr_be_mn_memory(s.be, 0, NULL);
	ck_assert_ptr_nonnull(word);
	word[0] = 0;
	r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_FAA,
					  .size = 8,
					  .depth = 16,
					  .iters = 3000,
					  .qps = 4,
					  .same_addr = 1});
	ck_assert_uint_eq(r.iters, 12000);
	ck_assert_uint_eq(word[0], 12000); /* every FAA added 1 */
	ck_assert(isnan(r.bw_peak_gbps));  /* several QPs: no perftest peak */
	dmr_bench_session_close(&s);
}
END_TEST

/* ---- shm (threaded) ------------------------------------------------------ */

static dmr_bench_session_t open_shm(uint32_t workers)
{
	dmr_bench_target_t t = {.backend = "shm", .gid_index = -1};
	dmr_bench_session_t s;
	dmr_err_t err;
	ck_assert_msg(dmr_bench_session_open(&s, &t, workers, 1u << 20, 1u << 16, &err) == DMR_OK,
		      "%s", err.msg);
	ck_assert_int_eq(s.driven, 0);
	return s;
}

START_TEST(shm_counts_iterations)
{
	dmr_bench_session_t s = open_shm(1);
	dmr_bench_result_t r = run_ok(
	    &s, (dmr_bench_spec_t){
		    .opcode = DMR_WR_READ, .size = 4096, .depth = 8, .iters = 10000, .qps = 1});
	ck_assert_uint_eq(r.iters, 10000);
	ck_assert(r.seconds > 0 && isfinite(r.bw_avg_gbps) && r.bw_peak_gbps >= r.bw_avg_gbps);
	dmr_be_stats_t st;
	dmr_be_stats(s.be, &st);
	ck_assert_uint_eq(st.reads, 10000);
	ck_assert_uint_eq(st.bytes_read, 10000ull * 4096);
	ck_assert_uint_eq(st.doorbells, 10000);
	r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_WRITE,
					  .size = 64,
					  .depth = 1,
					  .iters = 2000,
					  .qps = 1,
					  .latency = 1});
	ck_assert_uint_eq(r.iters, 2000);
	ck_assert(r.t_min_us >= 0 && r.t_min_us <= r.t_typical_us && r.t_typical_us <= r.t_max_us);
	dmr_be_stats(s.be, &st);
	ck_assert_uint_eq(st.writes, 2000);
	dmr_bench_session_close(&s);

	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "write", "--backend", "shm",
					      "--size", "64", "--iters", "20000", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	double v[5];
	ck_assert_int_eq(table_row(c.out, " #bytes     #iterations", v, 5), 5);
	ck_assert_double_eq(v[0], 64);
	ck_assert_double_eq(v[1], 20000);
	ck_assert_ptr_nonnull(strstr(c.out, "CLOCK_MONOTONIC"));
	dmr_test_run_free(&c);
}
END_TEST

START_TEST(shm_four_threads_faa_add_up)
{
	dmr_bench_session_t s = open_shm(4);
	uint64_t *word = dmr_be_mn_memory(s.be, 0, NULL);
	if (!word) {
		dmr_bench_session_close(&s);
		return;
	}
	dmr_bench_result_t r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_FAA,
							     .size = 8,
							     .depth = 16,
							     .iters = 5000,
							     .qps = 4,
							     .same_addr = 1});
	ck_assert_uint_eq(r.iters, 20000);
	ck_assert_uint_eq(word[0], 20000);
	r = run_ok(&s, (dmr_bench_spec_t){
			   .opcode = DMR_WR_CAS, .size = 8, .depth = 16, .iters = 5000, .qps = 4});
	ck_assert_uint_eq(r.iters, 20000);
	dmr_be_stats_t st;
	dmr_be_stats(s.be, &st);
	ck_assert_uint_eq(st.faa, 20000);
	ck_assert_uint_eq(st.cas, 20000);
	dmr_bench_session_close(&s);
}
END_TEST

/* perftest's cycle buffer: FAA i lands on cache line i mod 64 of the first
 * 4 KiB; a 64 KiB READ uses one buffer; sizes of the regions needed. */
START_TEST(shm_cycle_buffer_pattern)
{
	dmr_bench_spec_t r8 = {
	    .opcode = DMR_WR_READ, .size = 8, .depth = 128, .qps = 1, .cycle_buffer = 4096};
	ck_assert_uint_eq(dmr_bench_local_need(&r8), 4096); /* 64 slots of 64 B */
	ck_assert_uint_eq(dmr_bench_mr_need(&r8), 4096);
	dmr_bench_spec_t r64k = {
	    .opcode = DMR_WR_READ, .size = 65536, .depth = 128, .qps = 1, .cycle_buffer = 4096};
	ck_assert_uint_eq(dmr_bench_local_need(&r64k), 65536); /* one buffer */
	ck_assert_uint_eq(dmr_bench_mr_need(&r64k), 65536);
	dmr_bench_session_t s = open_shm(1);
	uint64_t *word = dmr_be_mn_memory(s.be, 0, NULL);
	if (!word) {
		dmr_bench_session_close(&s);
		return;
	}
	memset(word, 0, 8192);
	dmr_bench_result_t r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_FAA,
							     .size = 8,
							     .depth = 16,
							     .iters = 6400,
							     .qps = 1,
							     .cycle_buffer = 4096});
	ck_assert_uint_eq(r.iters, 6400);
	for (int k = 0; k < 512; k++)
		ck_assert_msg(word[k] == (k % 8 == 0 ? 100u : 0u), "word %d = %llu", k,
			      (unsigned long long)word[k]);
	ck_assert_uint_eq(word[512], 0);
	r = run_ok(&s, (dmr_bench_spec_t){.opcode = DMR_WR_READ,
					  .size = 65536,
					  .depth = 4,
					  .iters = 100,
					  .qps = 1,
					  .cycle_buffer = 4096});
	ck_assert_uint_eq(r.iters, 100);
	dmr_bench_session_close(&s);
}
END_TEST

/* ---- verbs, when a device can be opened --------------------------------- */

START_TEST(verbs_counts_iterations_if_device)
{
	if (!dmr_bench_known_backend("verbs")) {
		printf("verbs_counts_iterations_if_device: SKIPPED (built without the verbs "
		       "backend)\n");
		return;
	}
	dmr_bench_target_t t = {
	    .backend = "verbs", .device = getenv("DMR_TEST_DEVICE"), .gid_index = -1};
	dmr_bench_session_t s;
	dmr_err_t err;
	if (dmr_bench_session_open(&s, &t, 1, 1u << 20, 1u << 16, &err) != DMR_OK) {
		printf("verbs_counts_iterations_if_device: SKIPPED (%s)\n", err.msg);
		return;
	}
	dmr_bench_result_t r =
	    run_ok(&s, (dmr_bench_spec_t){
			   .opcode = DMR_WR_READ, .size = 8, .depth = 8, .iters = 2000, .qps = 1});
	ck_assert_uint_eq(r.iters, 2000);
	r = run_ok(
	    &s,
	    (dmr_bench_spec_t){
		.opcode = DMR_WR_CAS, .size = 8, .depth = 1, .iters = 200, .qps = 1, .latency = 1});
	ck_assert_uint_eq(r.iters, 200);
	ck_assert(r.t_typical_us > 0);
	dmr_bench_session_close(&s);
}
END_TEST

/* ---- the command line refuses bad options -------------------------------- */

START_TEST(bad_options_refused)
{
	static const struct {
		const char *a[8];
		const char *want;
	} cases[] = {
	    {{NULL}, "missing operation"},
	    {{"copy"}, "unknown operation 'copy'"},
	    {{"read", "--size", "0"}, "--size"},
	    {{"read", "--size", "12x"}, "--size"},
	    {{"read", "--size", "2G"}, "--size"},
	    {{"read", "--depth", "0"}, "--depth"},
	    {{"read", "--depth", "2000"}, "--depth"},
	    {{"read", "--iters", "4"}, "--iters"},
	    {{"read", "--iters", "-5"}, "--iters"},
	    {{"read", "--mtu", "1000"}, "--mtu"},
	    {{"read", "--backend", "shm", "--mtu", "1024"}, "--mtu"},
	    {{"read", "--backend", "shm", "--profile", "cx6dx-100g"}, "--profile"},
	    {{"read", "--device", "mlx5_0"}, "--device"},
	    {{"read", "--latency", "--depth", "4"}, "--depth"},
	    {{"cas", "--size", "64"}, "--size"},
	    {{"read", "--same-addr"}, "--same-addr"},
	    {{"read", "--backend", "nosuch"}, "--backend"},
	    {{"read", "--frobnicate"}, "--frobnicate"},
	    {{"read", "--size"}, "--size"},
	    {{"read", "--profile", "no-such-profile"}, "--profile"},
	    {{"read", "--timeout", "0"}, "--timeout"},
	    {{"read", "--cq-mod", "0"}, "--cq-mod"},
	    {{"read", "--post-list", "2000"}, "--post-list"},
	    {{"read", "--latency", "--cq-mod", "4"}, "--cq-mod"},
	    {{"read", "write"}, "a destination ('write'): two-host runs need --backend verbs"},
	    {{"read", "h1", "h2"}, "unexpected argument 'h2'"},
	    /* a device that does not exist: bad input (2), as in run, mn and cn */
	    {{"read", "--backend", "verbs", "--device", "mlx5_9"}, "verbs"},
	    /* issue #15 D2: what the run allocates, checked against memory first
	     * (2 TiB of MN region and local buffers; --size 1G touched 16.8 GB) */
	    {{"read", "--size", "1G", "--depth", "1024"},
	     "option --size 1073741824 x --depth 1024: needs 2199023335552 bytes"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].a;
		/* a[] is NULL after its last argument: the list ends there */
		dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", a[0], a[1], a[2],
						      a[3], a[4], a[5], NULL);
		ck_assert_msg(c.status == 2, "case %zu (%s): status %d, stderr: %s", i,
			      cases[i].want, c.status, c.err);
		ck_assert_msg(strstr(c.err, cases[i].want) != NULL,
			      "case %zu: stderr does not name '%s': %s", i, cases[i].want, c.err);
		ck_assert_msg(strstr(c.out, "#bytes") == NULL, "case %zu printed a table", i);
		dmr_test_run_free(&c);
	}
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "--help", NULL);
	ck_assert_int_eq(c.status, 0);
	ck_assert_ptr_nonnull(strstr(c.out, "usage: dmreplay bench"));
	dmr_test_run_free(&c);
}
END_TEST

/* ---- perftest's spellings (issue 16 item 1) ------------------------------ */

#define HEAD_MIB                                                                                   \
	" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]"
#define HEAD_GB " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"

/* Up to max rows of 5 numbers under the header line `head`; their count. */
static int table_rows(const char *out, const char *head, double (*v)[5], int max)
{
	const char *h = strstr(out, head);
	if (!h)
		return -1;
	const char *p = strchr(h, '\n');
	int k = 0;
	while (p && k < max) {
		p++;
		char *end;
		int j = 0;
		const char *q = p;
		for (; j < 5; j++) {
			double x = strtod(q, &end);
			if (end == q)
				break;
			v[k][j] = x;
			q = end;
		}
		if (j < 5)
			break;
		k++;
		p = strchr(p, '\n');
	}
	return k;
}

/* ib_read_bw's flags give the same run as dmreplay's own (the sim is
 * deterministic: the same row), MiB/sec by default and Gb/sec with
 * --report_gbits (perftest's format factors 2^20 bytes and 1.25e8 bytes). */
START_TEST(perftest_spellings_same_run)
{
	dmr_test_run_t a =
	    dmr_test_call_main(dmr_bench_main, "bench", "ib_read_bw", "-s", "8", "-n", "2000", "-t",
			       "16", "-Q", "4", "-l", "2", "-F", NULL);
	ck_assert_msg(a.status == 0, "status %d: %s", a.status, a.err);
	dmr_test_run_t b = dmr_test_call_main(dmr_bench_main, "bench", "read", "--size", "8",
					      "--iters", "2000", "--depth", "16", "--cq-mod", "4",
					      "--post-list", "2", "--report_gbits", NULL);
	ck_assert_msg(b.status == 0, "status %d: %s", b.status, b.err);
	double va[1][5], vb[1][5];
	ck_assert_int_eq(table_rows(a.out, HEAD_MIB, va, 1), 1);
	ck_assert_int_eq(table_rows(b.out, HEAD_GB, vb, 1), 1);
	ck_assert_double_eq(va[0][0], 8);
	ck_assert_double_eq(va[0][1], 2000);
	ck_assert_double_eq(va[0][4], vb[0][4]); /* the same message rate */
	/* MiB/s x 2^20 x 8 / 1e9 = Gb/s (2 decimals printed on each side) */
	ck_assert_msg(fabs(va[0][3] * 1048576 * 8 / 1e9 - vb[0][3]) < 0.02,
		      "%.2f MiB/s vs %.2f Gb/s", va[0][3], vb[0][3]);
	ck_assert_ptr_nonnull(strstr(a.out, "one signaled WR in 4, 2 WRs per post"));
	dmr_test_run_free(&a);
	dmr_test_run_free(&b);
	/* ib_atomic_bw -A FETCH_AND_ADD is faa; perftest's defaults: 1000 iterations */
	a = dmr_test_call_main(dmr_bench_main, "bench", "ib_atomic_bw", "-A", "FETCH_AND_ADD",
			       NULL);
	ck_assert_msg(a.status == 0, "status %d: %s", a.status, a.err);
	ck_assert_ptr_nonnull(strstr(a.out, "Atomic FAA BW Test"));
	ck_assert_int_eq(table_rows(a.out, HEAD_MIB, va, 1), 1);
	ck_assert_double_eq(va[0][0], 8);
	ck_assert_double_eq(va[0][1], 1000);
	dmr_test_run_free(&a);
	/* ib_read_lat: perftest's latency columns, 1000 iterations of 2 bytes */
	a = dmr_test_call_main(dmr_bench_main, "bench", "ib_read_lat", NULL);
	ck_assert_msg(a.status == 0, "status %d: %s", a.status, a.err);
	ck_assert_int_eq(
	    table_row(a.out, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]",
		      vb[0], 5),
	    5);
	ck_assert_double_eq(vb[0][0], 2);
	ck_assert_double_eq(vb[0][1], 1000);
	ck_assert_ptr_nonnull(strstr(a.out, "99% percentile[usec]   99.9% percentile[usec]"));
	dmr_test_run_free(&a);
}
END_TEST

/* -a: every size 2..2^23 as perftest, one row each under one header; the
 * 8 MiB READ runs at the wire's 93..96 Gb/s like 64 KiB. */
START_TEST(perftest_all_sizes)
{
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "read", "-a", "-n", "40",
					      "--report_gbits", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	double v[30][5];
	ck_assert_int_eq(table_rows(c.out, HEAD_GB, v, 30), 23);
	for (int i = 0; i < 23; i++) {
		ck_assert_double_eq(v[i][0], (double)(2u << i));
		ck_assert_double_eq(v[i][1], 40);
		ck_assert(v[i][4] > 0);
	}
	ck_assert_msg(v[22][3] >= 93 && v[22][3] <= 96, "8 MiB: %.2f Gb/s", v[22][3]);
	ck_assert(v[0][4] > v[22][4] * 1000); /* 2 bytes: message-rate bound */
	dmr_test_run_free(&c);
}
END_TEST

/* -q: several QPs, iterations per QP (perftest -n), one thread per QP on
 * shm; -D: a duration, in simulated time on the sim. */
START_TEST(perftest_qps_and_duration)
{
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "read", "-s", "8", "-n",
					      "1000", "-q", "4", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	double v[1][5], one[1][5];
	ck_assert_int_eq(table_rows(c.out, HEAD_MIB, v, 1), 1);
	ck_assert_double_eq(v[0][1], 4000);
	ck_assert_double_eq(v[0][2], 0); /* no peak with several QPs */
	ck_assert_ptr_nonnull(strstr(c.out, "Number of qps   : 4"));
	dmr_test_run_free(&c);
	c = dmr_test_call_main(dmr_bench_main, "bench", "read", "-s", "8", "-n", "1000", NULL);
	ck_assert_int_eq(table_rows(c.out, HEAD_MIB, one, 1), 1);
	ck_assert_msg(v[0][4] > one[0][4], "4 QPs %.3f Mpps, 1 QP %.3f", v[0][4], one[0][4]);
	dmr_test_run_free(&c);
	c = dmr_test_call_main(dmr_bench_main, "bench", "faa", "-n", "3000", "-q", "3", "--backend",
			       "shm", "--same-addr", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_int_eq(table_rows(c.out, HEAD_MIB, v, 1), 1);
	ck_assert_double_eq(v[0][1], 9000);
	dmr_test_run_free(&c);
	/* 2 ms of simulated time: iterations = rate x 2 ms, give or take the
	 * 16 outstanding at the end */
	c = dmr_test_call_main(dmr_bench_main, "bench", "read", "-s", "8", "-D", "2ms", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_int_eq(table_rows(c.out, HEAD_MIB, v, 1), 1);
	double secs = v[0][1] / (v[0][4] * 1e6);
	ck_assert_msg(fabs(secs - 0.002) < 0.002 * 0.02, "%.0f WRs at %.3f Mpps = %.6f s", v[0][1],
		      v[0][4], secs);
	ck_assert_ptr_nonnull(strstr(c.out, "Duration        : 0.002 s (simulated)"));
	dmr_test_run_free(&c);
	c = dmr_test_call_main(dmr_bench_main, "bench", "ib_read_lat", "-D", "1ms", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_int_eq(table_row(c.out,
				   " #bytes        #iterations       t_avg[usec]    tps average",
				   one[0], 4),
			 4);
	/* the profile's 2 us READ round trip: 500 in 1 ms */
	ck_assert_msg(one[0][1] >= 495 && one[0][1] <= 505, "%.0f iterations", one[0][1]);
	ck_assert_double_eq_tol(one[0][2], 2.0, 0.05);
	dmr_test_run_free(&c);
}
END_TEST

/* Every perftest flag not supported is refused by name (exit 2), never
 * ignored; the spellings' own bad values too. */
START_TEST(perftest_refusals)
{
	static const struct {
		const char *a[6];
		const char *want;
	} cases[] = {
	    {{"ib_read_bw", "-c", "UD"}, "option -c: perftest's -c/--connection is not supported"},
	    {{"ib_read_bw", "-b"}, "-b/--bidirectional is not supported"},
	    {{"ib_read_bw", "--use-srq"}, "option --use-srq: perftest's --use-srq"},
	    {{"ib_read_bw", "-R"}, "-R/--rdma_cm"},
	    {{"ib_read_bw", "-o", "4"}, "-o/--outs"},
	    {{"ib_read_bw", "--run_infinitely"}, "--run_infinitely"},
	    {{"ib_read_bw", "-p", "18515"}, "-p/--cm-port: only for two-host runs"},
	    {{"ib_read_bw", "192.168.1.2"}, "two-host runs need --backend verbs"},
	    {{"ib_read_bw", "-P"}, "-P/--client needs a destination"},
	    {{"ib_read_bw", "--loopback", "-Z"}, "--loopback is one process"},
	    {{"ib_read_bw", "-p", "0", "h"}, "--cm-port"},
	    {{"ib_atomic_bw", "-A", "CMP_AND_SWP"}, "'CMP_AND_SWP' is not an atomic type"},
	    {{"ib_read_bw", "-A", "CMP_AND_SWAP"}, "only for the atomic tests"},
	    {{"cas", "-A", "FETCH_AND_ADD"}, "only for the atomic tests"},
	    {{"ib_atomic_bw", "-a"}, "atomic tests have one size"},
	    {{"read", "-a", "-s", "64"}, "not with -s"},
	    {{"ib_read_lat", "-q", "2"}, "latency mode runs one QP"},
	    {{"read", "-q", "0"}, "--qp"},
	    {{"read", "-q", "257"}, "--qp"},
	    {{"read", "-D", "0"}, "-D/--duration"},
	    {{"read", "-s", "0"}, "--size"},
	    {{"read", "-n", "3"}, "--iters"},
	    {{"read", "-t", "0"}, "--depth"},
	    {{"ib_read_bw", "-Z"}, "-Z/--server"},
	    {{"ib_read_bw", "-X", "1"}, "-X/--vector"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].a;
		dmr_test_run_t c =
		    dmr_test_call_main(dmr_bench_main, "bench", a[0], a[1], a[2], a[3], a[4], NULL);
		ck_assert_msg(c.status == 2, "case %zu (%s): status %d, stderr: %s", i,
			      cases[i].want, c.status, c.err);
		ck_assert_msg(strstr(c.err, cases[i].want) != NULL,
			      "case %zu: stderr does not name '%s': %s", i, cases[i].want, c.err);
		ck_assert_msg(strstr(c.out, "#bytes") == NULL, "case %zu printed a table", i);
		dmr_test_run_free(&c);
	}
	/* -d without --backend is the verbs backend (here: no such device) */
	dmr_test_run_t c = dmr_test_call_main(dmr_bench_main, "bench", "ib_read_bw", "-d", "mlx5_9",
					      "-i", "1", "-F", "--report_gbits", NULL);
	ck_assert_int_eq(c.status, 2);
	ck_assert_msg(strstr(c.err, "verbs") && !strstr(c.err, "--profile"), "%s", c.err);
	dmr_test_run_free(&c);
	/* -d with --backend sim: a device is for verbs only */
	c = dmr_test_call_main(dmr_bench_main, "bench", "read", "--backend", "sim", "-d", "rxe0",
			       NULL);
	ck_assert_int_eq(c.status, 2);
	ck_assert_ptr_nonnull(strstr(c.err, "--device: only the verbs backend"));
	dmr_test_run_free(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench");
	TCase *tc = tcase_create("bench");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, sim_read_64k_bandwidth_mtu4096);
	tcase_add_test(tc, sim_cq_mod_and_post_list);
	tcase_add_test(tc, sim_mtu_1024_is_wire_bound);
	tcase_add_test(tc, sim_latency_64b_is_profile_rtt);
	tcase_add_test(tc, sim_atomics);
	tcase_add_test(tc, shm_counts_iterations);
	tcase_add_test(tc, shm_four_threads_faa_add_up);
	tcase_add_test(tc, shm_cycle_buffer_pattern);
	tcase_add_test(tc, verbs_counts_iterations_if_device);
	tcase_add_test(tc, bad_options_refused);
	tcase_add_test(tc, perftest_spellings_same_run);
	tcase_add_test(tc, perftest_all_sizes);
	tcase_add_test(tc, perftest_qps_and_duration);
	tcase_add_test(tc, perftest_refusals);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
