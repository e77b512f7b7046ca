/*
 * tests/integration/test_whatif.c - the hardware what-ifs of issue 16 on
 * the sim: the NIC's QP-context cache (backends/sim/qpc.h, profile
 * cx6dx-100g-qpc), lock words in NIC device memory (DMR_BE_CTL_DM_LOCKS,
 * run --dm-locks, bench --dm), and the refusals: profiles with half the
 * parameters, lock words that do not fit, backends without device memory,
 * table names that are not the trace's.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/sim/qpc.h"
#include "helpers/be.h"
#include "helpers/csv.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "models/model.h"
#include "replay/tools/bench.h"

/* Exact LRU order inside a set: one set of 2 ways. */
START_TEST(qpc_lru_exact)
{
	dmr_sim_qpc_t c;
	ck_assert_int_eq(dmr_sim_qpc_init(&c, 2, 2), 0);
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 1), 0); /* [1] */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 2), 0); /* [2 1] */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 1), 1); /* [1 2] */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 3), 0); /* [3 1]: 2 evicted */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 1), 1); /* [1 3] */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 2), 0); /* [2 1]: 3 evicted */
	ck_assert_int_eq(dmr_sim_qpc_touch(&c, 3), 0);
	ck_assert_uint_eq(c.hits, 2);
	ck_assert_uint_eq(c.misses, 5);
	dmr_sim_qpc_free(&c);
	/* a cache of 48 in 8-way sets holds any 6 QPs of one set and cycles
	 * through more than it holds with every touch a miss */
	ck_assert_int_eq(dmr_sim_qpc_init(&c, 48, 8), 0);
	for (int round = 0; round < 3; round++)
		for (uint32_t q = 0; q < 1000; q++)
			dmr_sim_qpc_touch(&c, q);
	ck_assert_uint_eq(c.hits, 0);
	ck_assert_uint_eq(c.misses, 3000);
	dmr_sim_qpc_free(&c);
}
END_TEST

static double bench_rate(const char *profile, uint8_t opcode, uint32_t size, uint32_t qps, int same,
			 int dm)
{
	dmr_bench_target_t t = {.backend = "sim", .profile = profile, .gid_index = -1};
	dmr_bench_session_t s;
	dmr_err_t err;
	ck_assert_msg(dmr_bench_session_open(&s, &t, qps, 16u << 20, 1u << 20, &err) == DMR_OK,
		      "%s", err.msg);
	if (dm) {
		dmr_be_dm_locks_t d = {.n = 1, .len = {16u << 20}, .lock_bytes = 8};
		ck_assert_msg(dmr_be_control(s.be, DMR_BE_CTL_DM_LOCKS, &d, &err) == DMR_OK, "%s",
			      err.msg);
	}
	dmr_bench_spec_t sp = {.opcode = opcode,
			       .size = size,
			       .depth = 16,
			       .iters = 20000,
			       .qps = qps,
			       .same_addr = same};
	dmr_bench_result_t r;
	ck_assert_msg(dmr_bench_run(&s, &sp, &r, &err) == DMR_OK, "%s", err.msg);
	dmr_bench_session_close(&s);
	return r.msg_rate_mpps;
}

/* The QP-context cache: 64 B READs over 32 QPs fit (the rate of
 * cx6dx-100g), over 64 they do not (55 M/s, the figure qpc_miss_ns comes
 * from), and WRITEs pay nothing (models/cx6dx-100g-qpc.json). */
START_TEST(qpc_read_rate_falls_past_capacity)
{
	double base32 = bench_rate("cx6dx-100g", DMR_WR_READ, 64, 32, 0, 0);
	double base64 = bench_rate("cx6dx-100g", DMR_WR_READ, 64, 64, 0, 0);
	double q32 = bench_rate("cx6dx-100g-qpc", DMR_WR_READ, 64, 32, 0, 0);
	double q64 = bench_rate("cx6dx-100g-qpc", DMR_WR_READ, 64, 64, 0, 0);
	double q256 = bench_rate("cx6dx-100g-qpc", DMR_WR_READ, 64, 256, 0, 0);
	double w256 = bench_rate("cx6dx-100g-qpc", DMR_WR_WRITE, 64, 256, 0, 0);
	double bw256 = bench_rate("cx6dx-100g", DMR_WR_WRITE, 64, 256, 0, 0);
	ck_assert_msg(fabs(q32 - base32) / base32 < 0.01, "32 QPs: %.2f vs %.2f M/s", q32, base32);
	ck_assert_msg(q64 > 54 && q64 < 56.5, "64 QPs: %.2f M/s (measured 55)", q64);
	ck_assert_msg(base64 > 82, "64 QPs without the cache: %.2f M/s", base64);
	ck_assert_msg(q256 <= q64 * 1.01, "256 QPs %.2f above 64 QPs %.2f", q256, q64);
	ck_assert_msg(fabs(w256 - bw256) / bw256 < 0.01, "WRITE 256 QPs %.2f vs %.2f", w256, bw256);
}
END_TEST

/* Same-address CAS: host memory 2.0 M/s, device memory 8.65 M/s (the
 * profile's dm_atomic_addr_mops, PUBLISHED.md R7). */
START_TEST(dm_same_address_cas_rate)
{
	double host = bench_rate("cx6dx-100g", DMR_WR_CAS, 8, 8, 1, 0);
	double dm = bench_rate("cx6dx-100g", DMR_WR_CAS, 8, 8, 1, 1);
	ck_assert_msg(fabs(host - 2.0) < 0.02, "host %.3f M/s", host);
	ck_assert_msg(fabs(dm - 8.65) < 0.09, "device memory %.3f M/s", dm);
}
END_TEST

static void open_be(const char *backend, const char *profile, dmr_be_t **be)
{
	dmr_be_config_t cfg = {.backend = backend,
			       .mns = 1,
			       .cns = 1,
			       .workers = 1,
			       .mr_size = 1 << 20,
			       .profile = profile};
	dmr_err_t err;
	ck_assert_msg(dmr_be_open(&cfg, be, &err) == DMR_OK, "%s", err.msg);
}

START_TEST(dm_refusals)
{
	dmr_be_t *be;
	dmr_err_t err;
	dmr_be_dm_locks_t d = {.n = 1, .len = {4096}, .lock_bytes = 4096};
	/* a profile without device memory */
	open_be("sim", "cx5-100g", &be);
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_DM_LOCKS, &d, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "cx5-100g has no device memory"));
	dmr_be_close(be);
	/* lock words larger than the 256 KiB */
	open_be("sim", "cx6dx-100g", &be);
	d.lock_bytes = 256 * 1024 + 8;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_DM_LOCKS, &d, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "need 262152 bytes"));
	ck_assert_ptr_nonnull(strstr(err.msg, "offers 262144"));
	d.lock_bytes = 8;
	d.n = 0;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_DM_LOCKS, &d, &err), DMR_ERR_INVALID);
	dmr_be_close(be);
	/* shm has no NIC */
	open_be("shm", NULL, &be);
	d.n = 1;
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_DM_LOCKS, &d, &err), DMR_ERR_UNSUPPORTED);
	dmr_be_close(be);
}
END_TEST

static char *write_profile(const char *extra)
{
	static char path[DMR_TEST_DIR_MAX];
	dmr_test_path(path, sizeof(path), "profile.json");
	char src[DMR_TEST_DIR_MAX + 32];
	snprintf(src, sizeof(src), "%s/models/cx6dx-100g.json", dmr_test_src);
	FILE *in = fopen(src, "r"), *out = fopen(path, "w");
	ck_assert(in && out);
	char line[4096];
	while (fgets(line, sizeof(line), in)) {
		if (strstr(line, "\"dm_kib\"") || strstr(line, "\"dm_atomic_addr_mops\""))
			continue; /* keep only dm_atomic_global_mops of the three */
		fputs(line, out);
		if (strstr(line, "\"params\""))
			fputs(extra, out);
	}
	fclose(in);
	fclose(out);
	return path;
}

START_TEST(profile_half_given_refused)
{
	dmr_model_t m;
	dmr_err_t err;
	char *p = write_profile("");
	ck_assert_int_eq(dmr_model_load(p, &m, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "parameter dm_kib: missing") != NULL, "%s", err.msg);
	p = write_profile("    \"dm_kib\": {\"value\": 256, \"unit\": \"KiB\"},\n"
			  "    \"dm_atomic_addr_mops\": {\"value\": 8, \"unit\": \"Mops/s\"},\n"
			  "    \"qpc_qps\": {\"value\": 48, \"unit\": \"QPs\"},\n");
	ck_assert_int_eq(dmr_model_load(p, &m, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "qpc_qps and qpc_miss_ns together") != NULL, "%s", err.msg);
	p = write_profile("    \"dm_kib\": {\"value\": 256, \"unit\": \"KiB\"},\n"
			  "    \"dm_atomic_addr_mops\": {\"value\": 8, \"unit\": \"Mops/s\"},\n"
			  "    \"qpc_qps\": {\"value\": 48, \"unit\": \"QPs\"},\n"
			  "    \"qpc_ways\": {\"value\": 7, \"unit\": \"ways\"},\n"
			  "    \"qpc_miss_ns\": {\"value\": 100, \"unit\": \"ns\"},\n");
	ck_assert_int_eq(dmr_model_load(p, &m, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "7 ways must divide") != NULL, "%s", err.msg);
	/* the shipped what-if loads, with its values */
	ck_assert_int_eq(dmr_model_load("cx6dx-100g-qpc", &m, &err), DMR_OK);
	ck_assert_uint_eq(m.qpc_qps, 48);
	ck_assert_uint_eq(m.qpc_ways, 8);
	ck_assert_uint_eq(m.qpc_miss_ps, 130000);
	ck_assert_uint_eq(m.dm_bytes, 256 * 1024);
}
END_TEST

/* run --dm-locks end to end: the hot tables' lock words in device memory
 * raise extreme TPC-C's throughput; bad table names exit 2. */
START_TEST(run_dm_locks)
{
	char trace[DMR_TEST_DIR_MAX], out1[DMR_TEST_DIR_MAX], out2[DMR_TEST_DIR_MAX];
	dmr_test_path(trace, sizeof(trace), "ext.csv");
	dmr_test_path(out1, sizeof(out1), "host");
	dmr_test_path(out2, sizeof(out2), "dm");
	dmr_test_run_t r = dmr_test_dmr("gen", "tpcc", "--mix", "dm", "--regime", "extreme",
					"--txns", "20000", "--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	const char *common[] = {"--backend", "sim",	"--cns", "4",	      "--threads",
				"28",	     "--coros", "3",	 "--retries", "0"};
	const char *a[32] = {"run", "--trace", trace, "--out", out1, "--quiet"};
	const char *b[32] = {"run",	   "--trace",		trace, "--out", out2,
			     "--dm-locks", "warehouse,district"};
	int na = 6, nb = 7;
	for (int i = 0; i < 10; i++)
		a[na++] = b[nb++] = common[i];
	r = dmr_test_dmrv(a);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	r = dmr_test_dmrv(b);
	dmr_test_run_ok(&r);
	ck_assert_ptr_nonnull(strstr(r.out, "lock words of warehouse,district in device memory "
					    "(3520 bytes on the MN that needs most)"));
	dmr_test_run_free(&r);
	dmr_test_summary_t s1, s2;
	dmr_test_summary_load(&s1, out1, "summary.csv");
	dmr_test_summary_load(&s2, out2, "summary.csv");
	double c1 = dmr_test_cold(&s1, "committed_tps"), c2 = dmr_test_cold(&s2, "committed_tps");
	dmr_test_summary_free(&s1);
	dmr_test_summary_free(&s2);
	ck_assert_msg(c2 > c1 * 1.1, "device memory %.0f vs host %.0f txn/s", c2, c1);
	char out3[DMR_TEST_DIR_MAX];
	dmr_test_path(out3, sizeof(out3), "refused");
	b[4] = out3; /* each refused run leaves no results there */
	b[6] = "warehouse,nosuch";
	r = dmr_test_dmrv(b);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "'nosuch' is not a table of the trace (tables: warehouse") !=
			  NULL,
		      "%s", r.err);
	dmr_test_run_free(&r);
	b[6] = "warehouse,warehouse";
	r = dmr_test_dmrv(b);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "table warehouse given twice"));
	dmr_test_run_free(&r);
	b[6] = "stock"; /* 100,000 x 40 rows: 32 MB of lock words */
	r = dmr_test_dmrv(b);
	ck_assert_int_ne(r.status, 0);
	ck_assert_msg(strstr(r.err, "offers 262144") != NULL, "%s", r.err);
	dmr_test_run_free(&r);
	const char *c[32] = {"run",	  "--trace",   trace, "--out",	out3, "--dm-locks",
			     "warehouse", "--backend", "shm", "--txns", "10", NULL};
	r = dmr_test_dmrv(c);
	ck_assert_int_ne(r.status, 0);
	ck_assert_msg(strstr(r.err, "dm-locks") != NULL, "%s", r.err);
	dmr_test_run_free(&r);
}
END_TEST

/* One READ's round trip (post to completion), simulated ps. */
static uint64_t one_read(dmr_be_t *be, uint64_t remote, uint32_t len)
{
	static uint8_t buf[65536];
	uint64_t t0 = dmr_test_sim_time(be);
	dmr_err_t err;
	ck_assert_msg(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 1, buf, remote, len, 0, 0, &err) ==
			  DMR_OK,
		      "%s", err.msg);
	dmr_wc_t wc;
	int w;
	while ((w = dmr_be_progress(be, UINT64_MAX)) >= 0)
		if (dmr_be_poll(be, (uint32_t)w, &wc, 1) == 1)
			break;
	ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
	return dmr_test_sim_time(be) - t0;
}

/* The CXL tier: a READ on it takes cxl_read_ns (200) longer, plus the
 * tier's slower stream (256 against 380 Gb/s); off it nothing changes;
 * refused by a profile without the tier and by a partial one. */
START_TEST(cxl_tier_latency)
{
	dmr_be_t *be;
	dmr_err_t err;
	open_be("sim", "cx7-400g", &be);
	dmr_be_dm_locks_t d = {.n = 1, .len = {65536}};
	ck_assert_msg(dmr_be_control(be, DMR_BE_CTL_CXL_TABLES, &d, &err) == DMR_OK, "%s", err.msg);
	one_read(be, 512 * 1024, 64); /* the first round trip has no poll before it */
	uint64_t host = one_read(be, 512 * 1024, 64), cxl = one_read(be, 0, 64);
	ck_assert_msg(cxl - host >= 200000 && cxl - host <= 201000, "CXL %llu ps, host %llu ps",
		      (unsigned long long)cxl, (unsigned long long)host);
	/* 64 KiB: the tier's stream (2048 ns at 256 Gb/s) ends 668 ns after
	 * the DMA engine's (1380 ns at 380 Gb/s) */
	uint64_t host64 = one_read(be, 512 * 1024, 65536), cxl64 = one_read(be, 0, 65536);
	ck_assert_msg(cxl64 - host64 >= 200000 + 660000 && cxl64 - host64 <= 200000 + 680000,
		      "64 KiB: CXL %llu ps, host %llu ps", (unsigned long long)cxl64,
		      (unsigned long long)host64);
	dmr_be_close(be);
	open_be("sim", "cx6dx-100g", &be);
	ck_assert_int_eq(dmr_be_control(be, DMR_BE_CTL_CXL_TABLES, &d, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "cx6dx-100g has no CXL tier"));
	dmr_be_close(be);
	dmr_model_t m;
	char *p =
	    write_profile("    \"dm_kib\": {\"value\": 256, \"unit\": \"KiB\"},\n"
			  "    \"dm_atomic_addr_mops\": {\"value\": 8, \"unit\": \"Mops/s\"},\n"
			  "    \"cxl_read_ns\": {\"value\": 200, \"unit\": \"ns\"},\n");
	ck_assert_int_eq(dmr_model_load(p, &m, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "parameter cxl_write_ns: missing") != NULL, "%s", err.msg);
}
END_TEST

/* Options that only mean something together are refused when they
 * disagree (fresh-user trial): crest's options without crest, --coros and
 * --coro_num both, --loop_a against --loop; and --dm-locks counts one MN's
 * lock words (the tables whose primary it holds), not all of them. */
START_TEST(options_that_disagree)
{
	char trace[DMR_TEST_DIR_MAX], out[DMR_TEST_DIR_MAX];
	dmr_test_path(trace, sizeof(trace), "tatp.csv");
	dmr_test_path(out, sizeof(out), "o");
	dmr_test_run_t r = dmr_test_dmr("gen", "tatp", "--subscribers", "20000", "--txns", "300",
					"--quiet", "-o", trace, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	static const struct {
		const char *a[6];
		const char *want;
	} bad[] = {
	    {{"--crest-locks", "words"}, "only with --protocol crest"},
	    {{"--crest-local", "off", "--protocol", "ford"}, "only with --protocol crest"},
	    {{"--crest-cache-ttl", "50", "--protocol", "occ"}, "only with --protocol crest"},
	    {{"--crest-cache", "off"}, "only with --protocol crest"},
	    {{"--protocol", "crest", "--crest-cache", "off", "--crest-cache-ttl", "500"},
	     "the CN record cache is off"},
	    {{"--deadline", "5"}, "--deadline: only with --procs"},
	    {{"--doorbell-max", "8"}, "only with --loop doorbell"},
	    {{"--loop", "aimd", "--doorbell-util", "0.5"}, "only with --loop doorbell"},
	    {{"--protocol", "crest", "--crest-cache-ttl", "0"}, "--crest-cache-ttl"},
	    {{"--coros", "3", "--coro_num", "5"}, "--coros and --coro_num"},
	    {{"--loop_a=false", "--loop", "aimd"}, "--loop_a=false and --loop aimd disagree"},
	    {{"--loop_a", "--loop", "perkey"}, "--loop_a=true and --loop perkey disagree"},
	    /* one MN holds both tables' 160,000 bytes of lock words each */
	    {{"--dm-locks", "subscriber,sec_subscriber"}, "need 320000 bytes"},
	    /* one backend's options given to another that would ignore them */
	    {{"--backend", "shm", "--device", "mlx5_0"}, "--device: only the verbs backend"},
	    {{"--backend", "shm", "--port", "2"}, "--port: only the verbs backend"},
	    {{"--gid-index", "1"}, "--gid-index: only the verbs backend takes it (--backend sim"},
	    {{"--backend", "record:shm", "--port", "1"}, "(--backend record:shm would ignore it)"},
	    {{"--backend", "fault:record:shm", "--profile", "x"}, "(--backend fault:record:shm"},
	    {{"--backend", "shm", "--profile", "cx6dx-100g"},
	     "--profile: only the sim backend models a NIC profile"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[24] = {"run",   "--trace", trace,	      "--out", out,
				     "--cns", "1",	 "--threads", "2"};
		int n = 9;
		for (int k = 0; k < 6 && bad[i].a[k]; k++)
			a[n++] = bad[i].a[k];
		r = dmr_test_dmrv(a);
		ck_assert_msg(r.status == 2, "case %zu: status %d: %s", i, r.status, r.err);
		ck_assert_msg(strstr(r.err, bad[i].want) != NULL, "case %zu: %s", i, r.err);
		dmr_test_run_free(&r);
	}
	/* on 2 MNs each table's primary is another MN: both fit */
	r = dmr_test_dmr("run", "--trace", trace, "--out", out, "--cns", "1", "--threads", "2",
			 "--mns", "2", "--dm-locks", "subscriber,sec_subscriber", NULL);
	dmr_test_run_ok(&r);
	ck_assert_ptr_nonnull(strstr(r.out, "(160000 bytes on the MN that needs most)"));
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("whatif");
	TCase *tc = tcase_create("sim");
	tcase_add_checked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, qpc_lru_exact);
	tcase_add_test(tc, qpc_read_rate_falls_past_capacity);
	tcase_add_test(tc, dm_same_address_cas_rate);
	tcase_add_test(tc, dm_refusals);
	tcase_add_test(tc, profile_half_given_refused);
	tcase_add_test(tc, run_dm_locks);
	tcase_add_test(tc, cxl_tier_latency);
	tcase_add_test(tc, options_that_disagree);
	suite_add_tcase(s, tc);
	if (dmr_test_env_init("whatif", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
