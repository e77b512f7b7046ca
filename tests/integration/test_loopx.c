/*
 * tests/integration/test_loopx.c - Loop X (`kv run --loop prefetch`, issue
 * 14 item 5) through the command line, on a constructed trace where the
 * chains predict the next blocks: sessions read growing prefixes (4, 8, 12,
 * 16 blocks) of 10 shared 16-block documents, a unique 4-block request
 * after each, 1 client, closed loop, a pool of 48 blocks (evictions). With
 * the loop: prefetches issued and used, the depth moved, the time-series
 * columns add up to the printed totals, the run is deterministic, fewer
 * bytes are READ for the requests; without it: the KV columns as before
 * and no prefetch column. Bad options refused (exit 2, named).
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/csv.h"
#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"

/* The Mooncake-style JSONL (docs/KVCACHE.md section 1) -> kv gen -> path. */
static void docs_trace(char *path, size_t len)
{
	char js[PATH_MAX];
	dmr_test_path(js, sizeof(js), "docs.jsonl");
	dmr_test_path(path, len, "docs.kv");
	if (dmr_test_exists(path))
		return;
	FILE *f = fopen(js, "w");
	ck_assert_ptr_nonnull(f);
	/* a fixed LCG (the test's own; no libc rand): sessions over docs */
	uint64_t x = 12345, uniq = 10000000;
	unsigned act_doc[3], act_step[3], nact = 0, started = 0;
	double t = 0;
	while (started < 60 || nact) {
		while (nact < 3 && started < 60) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			act_doc[nact] = (unsigned)(x >> 33) % 10;
			act_step[nact++] = 0;
			started++;
		}
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned i = (unsigned)(x >> 33) % nact;
		unsigned p = 4 * ++act_step[i];
		t += 5;
		fprintf(f,
			"{\"timestamp\": %.1f, \"input_length\": %u, \"output_length\": 1, "
			"\"hash_ids\": [",
			t, 512 * p);
		for (unsigned j = 0; j < p; j++)
			fprintf(f, "%s%u", j ? ", " : "", 1000000 + act_doc[i] * 16 + j);
		fprintf(f, "]}\n");
		if (p >= 16) {
			act_doc[i] = act_doc[nact - 1];
			act_step[i] = act_step[--nact];
		}
		t += 5;
		fprintf(f,
			"{\"timestamp\": %.1f, \"input_length\": 2048, \"output_length\": 1, "
			"\"hash_ids\": [%llu, %llu, %llu, %llu]}\n",
			t, (unsigned long long)uniq, (unsigned long long)uniq + 1,
			(unsigned long long)uniq + 2, (unsigned long long)uniq + 3);
		uniq += 4;
	}
	ck_assert_int_eq(fclose(f), 0);
	dmr_test_run_t r = dmr_test_dmr("kv", "gen", "--mooncake", js, "-o", path, "--block-bytes",
					"1M", "--quiet", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

static void kv_run(dmr_test_run_t *r, const char *tr, const char *d, const char *loop)
{
	*r = dmr_test_dmr("kv", "run", "--trace", tr, "--cns", "1", "--clients", "1", "--capacity",
			  "48M", "--outstanding", "1", "--window-ms", "5", "--loop-window-ms", "5",
			  "--loop", loop, "--out", d, NULL);
	dmr_test_run_ok(r);
}

typedef struct pfline {
	unsigned mx, cap;
	unsigned long long moves, up, down, wins, issued, used, wasted;
} pfline_t;

static void parse_pf(const char *out, pfline_t *p)
{
	const char *lp = strstr(out, "loop           prefetch: depth 0..");
	ck_assert_msg(lp != NULL, "stdout:\n%s", out);
	ck_assert_int_eq(
	    sscanf(lp,
		   "loop           prefetch: depth 0..%u (bound %u), %llu moves (%llu up, "
		   "%llu down) in %llu windows; %llu prefetches issued, %llu used, %llu "
		   "wasted",
		   &p->mx, &p->cap, &p->moves, &p->up, &p->down, &p->wins, &p->issued, &p->used,
		   &p->wasted),
	    9);
}

/* Sum of a column of dir/timeseries.csv (-1: no such column). */
/* a column's sum over the time series; -1 when it has no such column */
static double ts_sum(const char *dir, const char *name)
{
	int found;
	return dmr_test_ts_col(dir, name, NULL, NULL, NULL, &found);
}

START_TEST(test_prefetch_on_predictable_chains)
{
	char tr[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX], d2[PATH_MAX];
	docs_trace(tr, sizeof(tr));
	dmr_test_path(d0, sizeof(d0), "x-none");
	dmr_test_path(d1, sizeof(d1), "x-pf");
	dmr_test_path(d2, sizeof(d2), "x-pf2");
	dmr_test_run_t r0, r1, r2;
	kv_run(&r0, tr, d0, "none");
	kv_run(&r1, tr, d1, "prefetch");
	ck_assert_ptr_null(strstr(r0.out, "loop           prefetch"));
	pfline_t p;
	parse_pf(r1.out, &p);
	ck_assert_uint_eq(p.cap, 8);
	ck_assert_uint_ge(p.mx, 1);
	ck_assert_uint_gt(p.up, 0);
	ck_assert_uint_eq(p.moves, p.up + p.down);
	ck_assert_uint_gt(p.issued, 0);
	ck_assert_uint_gt(p.used, 0);
	/* issued = used + wasted (the end counts the unused in the buffers) */
	ck_assert_uint_eq(p.used + p.wasted, p.issued);
	/* the time series: per window, summing to the totals */
	ck_assert_uint_eq((unsigned long long)ts_sum(d1, "prefetch_issued"), p.issued);
	ck_assert_uint_eq((unsigned long long)ts_sum(d1, "prefetch_used"), p.used);
	ck_assert(ts_sum(d1, "prefetch_depth") > 0);
	ck_assert(ts_sum(d0, "prefetch_depth") == -1); /* off: no column */
	/* the same requests and pool decisions' totals; fewer request READs */
	dmr_test_summary_t s0, s1;
	dmr_test_summary_load(&s0, d0, "summary.csv");
	dmr_test_summary_load(&s1, d1, "summary.csv");
	ck_assert_uint_eq(dmr_test_colu(&s1, "requests"), dmr_test_colu(&s0, "requests"));
	/* Loop X's bound and counters are in summary.csv, as printed */
	ck_assert_str_eq(dmr_test_col(&s0, "loop"), "none");
	ck_assert_str_eq(dmr_test_col(&s0, "prefetch_issued"), "-");
	ck_assert_str_eq(dmr_test_col(&s1, "loop"), "prefetch");
	ck_assert_uint_eq(dmr_test_colu(&s1, "prefetch_max"), p.cap);
	ck_assert_uint_eq(dmr_test_colu(&s1, "prefetch_issued"), p.issued);
	ck_assert_uint_eq(dmr_test_colu(&s1, "prefetch_used"), p.used);
	ck_assert_uint_eq(dmr_test_colu(&s1, "prefetch_wasted"), p.wasted);
	ck_assert_uint_gt(dmr_test_colu(&s1, "prefetch_bytes"), 0);
	ck_assert_uint_eq(dmr_test_colu(&s1, "blocks_requested"),
			  dmr_test_colu(&s0, "blocks_requested"));
	ck_assert_uint_lt(dmr_test_colu(&s1, "bytes_got"), dmr_test_colu(&s0, "bytes_got"));
	/* the prefetch READs are on the wire */
	ck_assert_uint_gt(dmr_test_colu(&s1, "wire_bytes_from_mn"),
			  dmr_test_colu(&s1, "bytes_got"));
	dmr_test_summary_free(&s0);
	dmr_test_summary_free(&s1);
	/* deterministic */
	kv_run(&r2, tr, d2, "prefetch");
	dmr_test_assert_same_file(d1, d2, "timeseries.csv");
	dmr_test_run_free(&r0);
	dmr_test_run_free(&r1);
	dmr_test_run_free(&r2);
}
END_TEST

/* --prefetch-max 0: the loop runs, never prefetches: every column of the
 * run without it is the same. */
START_TEST(test_depth_zero_is_no_loop)
{
	char tr[PATH_MAX], d0[PATH_MAX], d1[PATH_MAX];
	docs_trace(tr, sizeof(tr));
	dmr_test_path(d0, sizeof(d0), "z-none");
	dmr_test_path(d1, sizeof(d1), "z-pf");
	dmr_test_run_t r0 =
	    dmr_test_dmr("kv", "run", "--trace", tr, "--cns", "1", "--clients", "1", "--capacity",
			 "48M", "--outstanding", "1", "--out", d0, NULL);
	dmr_test_run_ok(&r0);
	dmr_test_run_t r1 = dmr_test_dmr("kv", "run", "--trace", tr, "--cns", "1", "--clients", "1",
					 "--capacity", "48M", "--outstanding", "1", "--loop",
					 "prefetch", "--prefetch-max", "0", "--out", d1, NULL);
	dmr_test_run_ok(&r1);
	pfline_t p;
	parse_pf(r1.out, &p);
	ck_assert_uint_eq(p.issued, 0);
	dmr_test_summary_t s0, s1;
	dmr_test_summary_load(&s0, d0, "summary.csv");
	dmr_test_summary_load(&s1, d1, "summary.csv");
	static const char *same[] = {"hit_ratio", "bytes_got", "bytes_put", "evictions",
				     "p50_us",	  "p99_us",    "mean_us",   "wire_bytes_from_mn"};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		ck_assert_str_eq(dmr_test_col(&s0, same[i]), dmr_test_col(&s1, same[i]));
	dmr_test_summary_free(&s0);
	dmr_test_summary_free(&s1);
	dmr_test_run_free(&r0);
	dmr_test_run_free(&r1);
}
END_TEST

START_TEST(test_bad_options)
{
	char tr[PATH_MAX], d[PATH_MAX];
	docs_trace(tr, sizeof(tr));
	dmr_test_path(d, sizeof(d), "x-bad");
	static const char *bad[][3] = {
	    {"--prefetch-max", "65", "--prefetch-max"},
	    {"--prefetch-buffer", "0", "--prefetch-buffer"},
	    {"--loop-window-ms", "0", "--loop-window-ms"},
	    {"--loop", "aimd", "kv run takes none or prefetch"},
	    {"--loop", "prefetch+doorbell", "kv run takes none or prefetch"},
	    {"--loop", "prefech", "unknown loop 'prefech'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", tr, "--loop", "prefetch",
						bad[i][0], bad[i][1], "--out", d, NULL);
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, bad[i][2]), "%s %s: stderr:\n%s", bad[i][0], bad[i][1],
			      r.err);
		dmr_test_run_free(&r);
	}
	dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "shm", "--loop",
					"prefetch", "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "sim only"), "stderr:\n%s", r.err);
	dmr_test_run_free(&r);
	/* the transaction replay refuses the KV loop */
	r = dmr_test_dmr("run", "--loop", "aimd+prefetch", "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "KV pool's loop"), "stderr:\n%s", r.err);
	dmr_test_run_free(&r);
	ck_assert(!dmr_test_exists(d));
	r = dmr_test_dmr("kv", "run", "--help", NULL);
	ck_assert(strstr(r.out, "--prefetch-max") && strstr(r.out, "--prefetch-buffer"));
	dmr_test_run_free(&r);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("loopx", 1, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("loopx");
	TCase *tc = tcase_create("prefetch");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_prefetch_on_predictable_chains);
	tcase_add_test(tc, test_depth_zero_is_no_loop);
	tcase_add_test(tc, test_bad_options);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
