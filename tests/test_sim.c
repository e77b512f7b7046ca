/*
 * tests/test_sim.c - the sim backend's event queue and resource model
 * against the profile (issue #2 "Model sanity").
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/sim/eventq.h"
#include "backends/sim/sim.h"

START_TEST(eventq_orders_by_time_then_seq)
{
	dmr_sim_eventq_t q;
	ck_assert_int_eq(dmr_sim_eventq_init(&q, 2), DMR_OK);
	/* pseudo-random times with many ties */
	uint64_t x = 12345;
	for (uint32_t i = 0; i < 10000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ck_assert_int_eq(dmr_sim_eventq_push(&q, (x >> 33) % 500, 0, i), DMR_OK);
	}
	dmr_sim_event_t ev, prev = {0, 0, 0, 0};
	uint32_t n = 0;
	while (dmr_sim_eventq_pop(&q, &ev)) {
		if (n) {
			ck_assert(ev.t > prev.t || (ev.t == prev.t && ev.seq > prev.seq));
			if (ev.t == prev.t)
				ck_assert_uint_gt(ev.arg, prev.arg); /* FIFO among ties */
		}
		prev = ev;
		n++;
	}
	ck_assert_uint_eq(n, 10000);
	ck_assert_uint_eq(dmr_sim_eventq_peek_time(&q), UINT64_MAX);
	dmr_sim_eventq_fini(&q);
}
END_TEST

static dmr_be_t *open_sim(uint32_t cns, uint32_t workers)
{
	dmr_be_config_t cfg = {.backend = "sim", .mns = 1, .cns = cns, .workers = workers,
			       .mr_size = 64 << 20, .profile = "cx6dx-100g"};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	ck_assert_msg(st == DMR_OK, "open: %s", err.msg);
	return be;
}

START_TEST(idle_read_rtt_matches_profile)
{
	dmr_be_t *be = open_sim(1, 1);
	const dmr_model_t *m = dmr_sim_model(be);
	static uint8_t buf[64];
	uint64_t t0 = dmr_be_now(be, 0);
	ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, 7, buf, 4096, 64, 0, 0, NULL), DMR_OK);
	ck_assert_int_eq(dmr_be_progress(be, UINT64_MAX), 0);
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_be_poll(be, 0, &wc, 1), 1);
	ck_assert_uint_eq(wc.wr_id, 7);
	ck_assert_int_eq(wc.status, DMR_WC_SUCCESS);
	double rtt = (double)(dmr_be_now(be, 0) - t0);
	double want = m->read_rtt_ns * 1000.0;
	ck_assert_msg(rtt > want * 0.99 && rtt < want * 1.01, "RTT %.0f ps vs profile %.0f ps", rtt,
		      want);
	ck_assert_uint_eq((uint64_t)rtt, dmr_model_read_rtt_ps(m, 64));
	dmr_be_close(be);
}
END_TEST

/* Stream of `size` READs with `depth` outstanding on one QP; returns Gb/s
 * of payload between the first and last completion. */
static double read_stream_gbps(uint32_t mtu, uint32_t size, uint32_t depth, uint32_t total)
{
	dmr_be_t *be = open_sim(1, 1);
	ck_assert_int_eq(dmr_sim_set_mtu(be, mtu), DMR_OK);
	uint8_t *buf = malloc(size);
	uint32_t posted = 0, done = 0;
	for (; posted < depth; posted++)
		ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, posted, buf, 0, size, 0, 0, NULL),
				 DMR_OK);
	uint64_t t_first = 0, t_last = 0;
	dmr_wc_t wc[32];
	while (done < total && dmr_be_progress(be, UINT64_MAX) == 0) {
		int n = dmr_be_poll(be, 0, wc, 32);
		for (int i = 0; i < n; i++) {
			ck_assert_int_eq(wc[i].status, DMR_WC_SUCCESS);
			done++;
			if (done == depth)
				t_first = dmr_sim_time(be);
			t_last = dmr_sim_time(be);
			if (posted < total) {
				ck_assert_int_eq(dmr_be_post_one(be, 0, 0, DMR_WR_READ, posted, buf, 0,
								 size, 0, 0, NULL), DMR_OK);
				posted++;
			}
		}
	}
	ck_assert_uint_eq(done, total);
	free(buf);
	dmr_be_close(be);
	return (double)(total - depth) * size * 8 / ((t_last - t_first) / 1e12) / 1e9;
}

START_TEST(read_64k_stream_bandwidth)
{
	double g = read_stream_gbps(4096, 65536, 16, 3000);
	ck_assert_msg(g >= 93.0 && g <= 96.0, "64 KiB READ stream at MTU 4096: %.2f Gb/s", g);
}
END_TEST

START_TEST(read_stream_respects_wire_ceiling_every_mtu)
{
	const uint32_t mtus[] = {256, 512, 1024, 2048, 4096};
	for (int i = 0; i < 5; i++) {
		double ceiling = 100.0 * mtus[i] / (mtus[i] + 82.0);
		double g = read_stream_gbps(mtus[i], 65536, 16, 1500);
		ck_assert_msg(g <= ceiling + 1e-6, "MTU %u: %.3f Gb/s above the wire ceiling %.3f",
			      mtus[i], g, ceiling);
		double bound = ceiling < 94.65 ? ceiling : 94.65;
		ck_assert_msg(g >= 0.97 * bound, "MTU %u: %.3f Gb/s, expected about %.3f", mtus[i], g,
			      bound);
	}
	/* the published ceilings (issue #2): about 98 Gb/s at 4096, 92.6 at 1024 */
	ck_assert_msg(read_stream_gbps(1024, 65536, 16, 1500) < 92.7, "MTU 1024 over 92.6 Gb/s");
}
END_TEST

START_TEST(same_address_cas_saturates_at_profile_rate)
{
	const uint32_t W = 4, depth = 16, total = 20000;
	dmr_be_t *be = open_sim(1, W);
	const dmr_model_t *m = dmr_sim_model(be);
	uint64_t *old = calloc(W * depth, sizeof(uint64_t));
	uint32_t posted = 0, done = 0;
	for (uint32_t w = 0; w < W; w++)
		for (uint32_t d = 0; d < depth; d++, posted++)
			ck_assert_int_eq(dmr_be_post_one(be, w, 0, DMR_WR_CAS, w * depth + d,
							 &old[w * depth + d], 64, 8, 0, 1, NULL),
					 DMR_OK);
	uint64_t t_first = 0, t_last = 0;
	dmr_wc_t wc[32];
	int w;
	while (done < total && (w = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		int n = dmr_be_poll(be, (uint32_t)w, wc, 32);
		for (int i = 0; i < n; i++) {
			done++;
			if (done == 1000)
				t_first = dmr_sim_time(be);
			t_last = dmr_sim_time(be);
			if (posted < total) {
				ck_assert_int_eq(dmr_be_post_one(be, (uint32_t)w, 0, DMR_WR_CAS, wc[i].wr_id,
								 &old[wc[i].wr_id], 64, 8, 0, 1, NULL),
						 DMR_OK);
				posted++;
			}
		}
	}
	double rate = (done - 1000) / ((t_last - t_first) / 1e12) / 1e6;
	ck_assert_msg(rate > m->atomic_addr_mops * 0.98 && rate < m->atomic_addr_mops * 1.02,
		      "same-address CAS %.3f Mops/s vs profile %.3f", rate, m->atomic_addr_mops);
	free(old);
	dmr_be_close(be);
}
END_TEST

START_TEST(profile_errors_are_named)
{
	char dir[] = "/tmp/dmr_model_XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[256];
	dmr_model_t m;
	dmr_err_t err;
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	FILE *f = fopen(path, "w");
	fprintf(f, "{\"name\": \"bad\", \"params\": {\"link_gbps\": {\"value\": -5}}}\n");
	fclose(f);
	ck_assert_int_eq(dmr_model_load(path, &m, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "link_gbps"));
	ck_assert_ptr_nonnull(strstr(err.msg, "positive"));
	f = fopen(path, "w");
	fprintf(f, "{\"name\": \"bad\", \"params\": {\"link_gbps\": {\"value\": 100}}}\n");
	fclose(f);
	ck_assert_int_eq(dmr_model_load(path, &m, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
	f = fopen(path, "w");
	fprintf(f, "{\"name\": \"bad\", \n\"params\": {,}}\n");
	fclose(f);
	ck_assert_int_eq(dmr_model_load(path, &m, &err), DMR_ERR_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "bad.json:2:"));
	ck_assert_int_eq(dmr_model_load("no-such-profile", &m, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "no-such-profile"));
	remove(path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, eventq_orders_by_time_then_seq);
	tcase_add_test(tc, idle_read_rtt_matches_profile);
	tcase_add_test(tc, read_64k_stream_bandwidth);
	tcase_add_test(tc, read_stream_respects_wire_ceiling_every_mtu);
	tcase_add_test(tc, same_address_cas_saturates_at_profile_rate);
	tcase_add_test(tc, profile_errors_are_named);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
