/*
 * tests/integration/test_cli_out.c - `dmreplay run` and its process
 * launcher never replace finished results: a run into a --out holding an
 * earlier run's summary.csv is refused (or, with --force, moves those files
 * whole to earlier-N/), two runs cannot share a --out (its lock), a refused
 * run leaves --out as it was, and --quiet/--out checks come before any
 * file is touched. Split from test_cli.c (its helpers: cli_helpers.h).
 */
#include "cli_helpers.h"

/* ---- finished results are never replaced ------------------------------------ */

/* D3: a run holds its --out (DIR/.dmr-lock) for as long as it runs: a
 * second run into it is refused at once, naming the directory; a run into
 * a directory with finished results is refused unless --force. */
START_TEST(test_out_lock)
{
	char base[PATH_MAX], dir[PATH_MAX], lk[PATH_MAX + 16];
	base_trace(base, sizeof(base));
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-lock", base, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	size_t ls = 0;
	char *sum = read_in(dir, "summary.csv", &ls);
	ck_assert_ptr_nonnull(sum);
	/* another process holds the lock, as a running `dmreplay run` does */
	snprintf(lk, sizeof(lk), "%s/.dmr-lock", dir);
	int fd = open(lk, O_RDWR | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	r = run_into(dir, sizeof(dir), "out-lock", base, "--force", NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, dir);
	assert_has(&r, "another run holds this directory");
	dmr_test_run_free(&r);
	ck_assert(!exists(dir, "earlier-1"));
	close(fd);
	/* unlocked: finished results are refused without --force */
	r = run_into(dir, sizeof(dir), "out-lock", base, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "finished results of an earlier run");
	assert_has(&r, "--force");
	dmr_test_run_free(&r);
	size_t ls2 = 0;
	char *sum2 = read_in(dir, "summary.csv", &ls2);
	ck_assert(ls == ls2 && memcmp(sum, sum2, ls) == 0);
	free(sum2);
	/* --force: moved to earlier-1/ whole, a new run in DIR */
	r = run_into(dir, sizeof(dir), "out-lock", base, "--force", NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	char dir1[PATH_MAX + 16];
	snprintf(dir1, sizeof(dir1), "%s/earlier-1", dir);
	sum2 = read_in(dir1, "summary.csv", &ls2);
	ck_assert_ptr_nonnull(sum2);
	ck_assert(ls == ls2 && memcmp(sum, sum2, ls) == 0);
	ck_assert(exists(dir1, "timeseries.csv"));
	ck_assert(exists(dir, "summary.csv"));
	free(sum);
	free(sum2);
}
END_TEST

/* dir's earlier run moved to dir/earlier-1/ whole: its summary.csv there is
 * sum (ls bytes), the one the earlier run finished with. */
static void assert_moved_whole(const char *dir, const char *sum, size_t ls)
{
	char d1[PATH_MAX + 16];
	snprintf(d1, sizeof(d1), "%s/earlier-1", dir);
	size_t ls1 = 0;
	char *sum1 = read_in(d1, "summary.csv", &ls1);
	ck_assert_msg(sum1 && ls == ls1 && memcmp(sum, sum1, ls) == 0,
		      "%s/summary.csv is not the earlier run's", d1);
	free(sum1);
}

/* Trial of session 13: `run --force` moved a finished run's files to
 * earlier-1/ before its checks, so a run refused at set-up (exit 2) left
 * DIR without its summary.csv. Now they move only once the run is set up
 * and sure to start: each refused run leaves DIR exactly as it was. */
START_TEST(test_force_refused_keeps_out)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-force-refused", base, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	size_t ls = 0;
	char *sum = read_in(dir, "summary.csv", &ls), *before = dmr_test_dir_listing(dir);
	ck_assert_ptr_nonnull(sum);
	ck_assert_ptr_nonnull(before);
	ck_assert_ptr_nonnull(strstr(before, "summary.csv\n"));
	static const struct {
		const char *a[4], *why;
	} refused[] = {
	    {{"--cn-cache", "nosuch", NULL, NULL}, "'nosuch' is not a table of the trace"},
	    {{"--mr-size", "1", NULL, NULL}, "larger than --mr-size 1 bytes"},
	    {{"--index", "hash", "--index-buckets", "1"}, "--index-buckets 1"},
	    {{"--threads", "2000", NULL, NULL}, "option --threads: 2000 out of range"},
	    {{"--backend", "verbs", NULL, NULL}, "verbs"},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		dmr_test_path(dir, sizeof(dir), "out-force-refused");
		r = dmr_test_dmr("run", "--trace", base, SMALL, "--quiet", "--out", dir, "--force",
				 refused[i].a[0], refused[i].a[1], refused[i].a[2], refused[i].a[3],
				 NULL);
		ck_assert_msg(r.status == 2, "%s: exit %d, want 2:\n%s", refused[i].a[0], r.status,
			      r.err);
		assert_has(&r, refused[i].why);
		ck_assert_msg(!strstr(r.err, "earlier-1"), "%s: %s", refused[i].a[0], r.err);
		dmr_test_run_free(&r);
		char *after = dmr_test_dir_listing(dir);
		ck_assert_ptr_nonnull(after);
		ck_assert_msg(strcmp(before, after) == 0, "%s: --out changed:\n%s\nnow:\n%s",
			      refused[i].a[0], before, after);
		free(after);
		size_t ls2 = 0;
		char *sum2 = read_in(dir, "summary.csv", &ls2);
		ck_assert(sum2 && ls == ls2 && memcmp(sum, sum2, ls) == 0);
		free(sum2);
	}
	/* a run that starts: now the earlier files move, whole */
	r = run_into(dir, sizeof(dir), "out-force-refused", base, "--force", NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	assert_moved_whole(dir, sum, ls);
	ck_assert(!exists(dir, "earlier-2"));
	free(sum);
	free(before);
}
END_TEST

/* The base trace with an unknown op on a row in its middle, into `name`: a
 * run meets it mid-run (a truncated trace is refused at open since issue
 * #15 D19, before the run) */
static void mid_bad_trace(char *t, size_t tlen, const char *name)
{
	char base[PATH_MAX], row[1200];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	int i = first_row(&L);
	i += (L.n - i) / 2;
	row_with(row, sizeof(row), L.l[i], 3, "Z");
	dmr_test_path(t, tlen, name);
	lines_write(&L, L.n, i, row, 0, t);
	lines_free(&L);
}

START_TEST(test_no_overwrite)
{
	char base[PATH_MAX], dir[PATH_MAX], p[PATH_MAX], t[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-keep", base, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	size_t ls = 0, lt = 0;
	char *sum = read_in(dir, "summary.csv", &ls), *ts = read_in(dir, "timeseries.csv", &lt);
	ck_assert_ptr_nonnull(sum);
	ck_assert_ptr_nonnull(ts);
	dmr_test_summary_t s0;
	dmr_test_summary_load(&s0, dir, "summary.csv");
	ck_assert_str_eq(dmr_test_col(&s0, "status"), "complete");
	dmr_test_summary_free(&s0);

	/* 1: bad profile (refused before the run starts) */
	profile_variant(p, sizeof(p), "keep-neg.json", 1);
	r = run_into(dir, sizeof(dir), "out-keep", base, "--profile", p, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	dmr_test_run_free(&r);
	/* 2: a bad row mid-trace, without --force: refused at once (finished
	 * results there), nothing written */
	mid_bad_trace(t, sizeof(t), "keep-bad.csv");
	r = run_into(dir, sizeof(dir), "out-keep", t, "--seed", "99", NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "finished results of an earlier run");
	dmr_test_run_free(&r);
	ck_assert(!exists(dir, "summary.partial.csv"));
	/* 3: bad option value */
	r = run_into(dir, sizeof(dir), "out-keep", base, "--mtu", "3000", NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	dmr_test_run_free(&r);
	/* 4: with --force, through the trace cache (the default): compiling
	 * the CSV meets the bad row, so the run is refused before anything
	 * runs or moves (a trial of session 13: streamed, it stopped mid-run
	 * after the earlier results had been moved aside) */
	char *listing = dmr_test_dir_listing(dir);
	r = run_into(dir, sizeof(dir), "out-keep", t, "--seed", "99", "--force", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "field op");
	ck_assert_ptr_null(strstr(r.err, "earlier-1"));
	dmr_test_run_free(&r);
	char *listing2 = dmr_test_dir_listing(dir);
	ck_assert_str_eq(listing, listing2);
	free(listing);
	free(listing2);
	/* 5: with --force and --no-trace-cache the CSV is streamed: the
	 * earlier run moves to earlier-1/ whole, and the failing run (fails
	 * mid-run) writes only its partial files */
	r = run_into(dir, sizeof(dir), "out-keep", t, "--seed", "99", "--force",
		     "--no-trace-cache");
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "field op");
	assert_has(&r, "earlier-1");
	dmr_test_run_free(&r);
	ck_assert(exists(dir, "summary.partial.csv"));
	ck_assert(!exists(dir, "summary.csv"));
	char dir1[PATH_MAX + 16];
	snprintf(dir1, sizeof(dir1), "%s/earlier-1", dir);

	size_t ls2 = 0, lt2 = 0;
	char *sum2 = read_in(dir1, "summary.csv", &ls2),
	     *ts2 = read_in(dir1, "timeseries.csv", &lt2);
	ck_assert_ptr_nonnull(sum2);
	ck_assert_ptr_nonnull(ts2);
	ck_assert_msg(ls == ls2 && memcmp(sum, sum2, ls) == 0, "summary.csv changed:\n%s\n%s", sum,
		      sum2);
	ck_assert_msg(lt == lt2 && memcmp(ts, ts2, lt) == 0, "timeseries.csv changed");
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.partial.csv");
	ck_assert_str_eq(dmr_test_col(&s, "status"), "partial");
	ck_assert_str_eq(dmr_test_col(&s, "seed"), "99");
	dmr_test_summary_free(&s);
	free(sum);
	free(sum2);
	free(ts);
	free(ts2);
}
END_TEST

/* ---- defects of the process launcher and the quiet/out checks ------------- */

static void mkdir_in(char *buf, size_t len, const char *name)
{
	dmr_test_path(buf, len, name);
	ck_assert(mkdir(buf, 0777) == 0 || errno == EEXIST);
}

#define CLUSTER2                                                                                   \
	"{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"nosuchdev\",\"mr_size\":268435456}" \
	"],"                                                                                       \
	"\"cn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"nosuchdev\"},{\"id\":1,\"ip\":"      \
	"\"10.0.2.15\",\"devname\":\"nosuchdev\"}],\"port\":18599}"

/* An earlier run's per-CN results are never read as this run's, and
 * finished ones are never overwritten (the launcher refuses, or with
 * --force moves them to OUT/earlier-N/). The children fail here (no RDMA
 * device "nosuchdev", or no verbs backend): that is the failing run. */
START_TEST(test_launcher_earlier_results)
{
	char base[PATH_MAX], cfg[PATH_MAX], d[1024], cn0[1100], p[1200];
	base_trace(base, sizeof(base));
	dmr_test_path(cfg, sizeof(cfg), "cluster2.json");
	dmr_test_write_file(cfg, CLUSTER2);
	/* 1. finished results of an earlier run (workload "oldworkload", 98765 committed) */
	mkdir_in(d, sizeof(d), "out-earlier");
	snprintf(cn0, sizeof(cn0), "%s/cn0", d);
	ck_assert_int_eq(mkdir(cn0, 0777), 0);
	static const char old[] = "workload,regime,status,tried,committed,verified,sim_time_s\n"
				  "oldworkload,old,complete,2000,98765,1,0.5\n";
	snprintf(p, sizeof(p), "%s/summary.csv", cn0);
	dmr_test_write_file(p, old);
	snprintf(p, sizeof(p), "%s/trace.cn0.csv", cn0);
	dmr_test_write_file(p, "old share\n");
	dmr_test_run_t r = dmr_test_dmr("run", "--backend", "verbs", "--config", cfg, "--threads",
					"2", "--trace", base, "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "finished results of an earlier run");
	assert_has(&r, "cn0/summary.csv");
	assert_has(&r, "--force");
	ck_assert_str_eq(r.out, "");
	dmr_test_run_free(&r);
	ck_assert(!exists(d, "cn0.log") && !exists(d, "mn.log") && !exists(d, "cluster.json"));
	ck_assert(!exists(d, "summary.partial.csv"));
	char *kept = read_in(cn0, "summary.csv", NULL);
	ck_assert_str_eq(kept, old);
	free(kept);
	kept = read_in(cn0, "trace.cn0.csv", NULL);
	ck_assert_str_eq(kept, "old share\n");
	free(kept);

	/* 2. --force: moved to OUT/earlier-1/, this run's own (failed) results */
	r = dmr_test_dmr("run", "--backend", "verbs", "--config", cfg, "--threads", "2", "--trace",
			 base, "--out", d, "--force", NULL);
	ck_assert_msg(r.status == 1 || r.status == 2, "exit %d\n%s", r.status, r.err);
	assert_has(&r, "earlier-1");
	ck_assert_ptr_null(strstr(r.out, "oldworkload"));
	ck_assert_ptr_null(strstr(r.out, "98765"));
	ck_assert_ptr_nonnull(strstr(r.out, "dmreplay: smallbank on verbs"));
	/* the report names the children's error lines, not the empty summary */
	ck_assert_ptr_nonnull(strstr(r.err, "error:"));
	dmr_test_run_free(&r);
	snprintf(p, sizeof(p), "%s/earlier-1/cn0", d);
	kept = read_in(p, "summary.csv", NULL);
	ck_assert_ptr_nonnull(kept);
	ck_assert_str_eq(kept, old);
	free(kept);
	ck_assert(!exists(d, "summary.csv"));
	char *part = read_in(d, "summary.partial.csv", NULL);
	ck_assert_ptr_nonnull(part);
	ck_assert_ptr_null(strstr(part, "oldworkload"));
	ck_assert_ptr_null(strstr(part, "98765"));
	free(part);
	/* the combined summary has the standard columns: `report` reads it */
	dmr_test_summary_t sp;
	dmr_test_summary_load(&sp, d, "summary.partial.csv");
	ck_assert_str_eq(dmr_test_col(&sp, "status"), "partial");
	ck_assert_str_eq(dmr_test_col(&sp, "verified"), "0");
	ck_assert_str_eq(dmr_test_col(&sp, "workload"), "smallbank");
	ck_assert_str_eq(dmr_test_col(&sp, "cns"), "2");
	ck_assert_str_eq(dmr_test_col(&sp, "threads"), "2");
	ck_assert_str_eq(dmr_test_col(&sp, "backend"), "verbs");
	ck_assert_str_eq(dmr_test_col(&sp, "committed"), "0");
	ck_assert_str_eq(dmr_test_col(&sp, "trace"), base);
	dmr_test_summary_free(&sp);
	char *procs = read_in(d, "processes.csv", NULL);
	ck_assert_ptr_nonnull(procs);
	ck_assert_ptr_nonnull(strstr(procs, "\nall,partial,0,"));
	ck_assert_ptr_nonnull(strstr(procs, "\ncn1,"));
	ck_assert_ptr_null(strstr(procs, "98765"));
	free(procs);
	ck_assert(!exists(cn0, "trace.cn0.csv.tmp"));

	/* 3. only unfinished results there: moved without --force (earlier-2) */
	r = dmr_test_dmr("run", "--backend", "verbs", "--config", cfg, "--threads", "2", "--trace",
			 base, "--out", d, NULL);
	ck_assert_msg(r.status == 1 || r.status == 2, "exit %d\n%s", r.status, r.err);
	assert_has(&r, "earlier-2");
	dmr_test_run_free(&r);
	ck_assert(exists(d, "earlier-2/summary.partial.csv"));

	/* 4. a CN refuses an --out holding a finished summary.csv (its share,
	 * config and logs are not touched) */
	r = dmr_test_dmr("cn", "--config", cfg, "--id", "0", "--trace", base, "--out", p, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "dmreplay cn: error: --out");
	assert_has(&r, "finished results");
	dmr_test_run_free(&r);
	kept = read_in(p, "trace.cn0.csv", NULL);
	ck_assert_str_eq(kept, "old share\n");
	free(kept);
	ck_assert(!exists(p, "earlier-1"));
}
END_TEST

/* A finished run's files in d: its listing and summary.csv (ls bytes). */
static void finished_in(char *d, size_t len, const char *name, const char *base, char **list,
			char **sum, size_t *ls)
{
	dmr_test_run_t r = run_into(d, len, name, base, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	*sum = read_in(d, "summary.csv", ls);
	*list = dmr_test_dir_listing(d);
	ck_assert_ptr_nonnull(*sum);
	ck_assert_ptr_nonnull(*list);
	ck_assert_ptr_nonnull(strstr(*list, "summary.csv\n"));
}

/* r was refused (2, naming why) and d is as it was: listing, summary.csv. */
static void assert_refused_kept(dmr_test_run_t *r, const char *why, const char *d, const char *list,
				const char *sum, size_t ls)
{
	ck_assert_msg(r->status == 2, "exit %d, want 2:\n%s", r->status, r->err);
	assert_has(r, why);
	ck_assert_msg(!strstr(r->err, "earlier-1"), "%s", r->err);
	dmr_test_run_free(r);
	char *after = dmr_test_dir_listing(d);
	ck_assert_ptr_nonnull(after);
	ck_assert_msg(strcmp(list, after) == 0, "--out changed:\n%s\nnow:\n%s", list, after);
	free(after);
	size_t ls2 = 0;
	char *sum2 = read_in(d, "summary.csv", &ls2);
	ck_assert(sum2 && ls == ls2 && memcmp(sum, sum2, ls) == 0);
	free(sum2);
}

/* Trial of session 13: `cn --force` moved a finished run's files to
 * earlier-1/ before it checked its trace, so a CN refused for a trace it
 * cannot read (exit 2) left --out without its summary.csv. Now the trace
 * is checked first; the files move only before the CN writes its share. */
START_TEST(test_cn_force_refused_keeps_out)
{
	char base[PATH_MAX], cfg[PATH_MAX], d[PATH_MAX], t[PATH_MAX], bad[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_path(cfg, sizeof(cfg), "cluster2c.json");
	dmr_test_write_file(cfg, CLUSTER2);
	dmr_test_path(t, sizeof(t), "no-such-trace.csv");
	dmr_test_path(bad, sizeof(bad), "not-a-trace.csv");
	dmr_test_write_file(bad, "hello\n");
	char *list = NULL, *sum = NULL;
	size_t ls = 0;
	finished_in(d, sizeof(d), "out-cn-force", base, &list, &sum, &ls);
	dmr_test_run_t r = dmr_test_dmr("cn", "--config", cfg, "--id", "0", "--trace", t, "--out",
					d, "--force", "--quiet", NULL);
	assert_refused_kept(&r, t, d, list, sum, ls);
	r = dmr_test_dmr("cn", "--config", cfg, "--id", "0", "--trace", bad, "--out", d, "--force",
			 "--quiet", NULL);
	assert_refused_kept(&r, bad, d, list, sum, ls);
	/* a CN that starts (and fails here: no verbs, or no device "nosuchdev"):
	 * the earlier files move now, whole */
	r = dmr_test_dmr("cn", "--config", cfg, "--id", "0", "--trace", base, "--out", d, "--force",
			 "--quiet", "--barrier-timeout", "1", NULL);
	ck_assert_msg(r.status != 0, "exit %d\n%s", r.status, r.err);
	dmr_test_run_free(&r);
	assert_moved_whole(d, sum, ls);
	ck_assert(!exists(d, "summary.csv"));
	free(sum);
	free(list);
}
END_TEST

/* Up-front checks of run --config as of --procs: a missing trace, a config
 * whose mr_size is below the footprint; nothing spawned. */
START_TEST(test_launcher_config_checks)
{
	char cfg[PATH_MAX], d[PATH_MAX], t[PATH_MAX], base[PATH_MAX];
	dmr_test_path(cfg, sizeof(cfg), "cluster2b.json");
	dmr_test_write_file(cfg, CLUSTER2);
	dmr_test_path(d, sizeof(d), "out-cfgchk");
	dmr_test_path(t, sizeof(t), "no-such-trace.csv");
	dmr_test_run_t r = dmr_test_dmr("run", "--backend", "verbs", "--config", cfg, "--threads",
					"2", "--trace", t, "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, t);
	dmr_test_run_free(&r);
	ck_assert(!exists(d, "mn.log") && !exists(d, "cn0.log"));
	base_trace(base, sizeof(base));
	dmr_test_write_file(cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"mr_size\":4096}],"
				 "\"cn\":[{\"id\":0},{\"id\":1}]}");
	r = dmr_test_dmr("run", "--backend", "verbs", "--config", cfg, "--threads", "2", "--trace",
			 base, "--out", d, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "mr_size 4096");
	assert_has(&r, "footprint");
	dmr_test_run_free(&r);
	ck_assert(!exists(d, "mn.log"));
	/* --deadline -5: one error line */
	r = dmr_test_dmr("run", "--trace", base, "--procs", "--deadline", "-5", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
	assert_has(&r, "--deadline");
	dmr_test_run_free(&r);
	/* cn option errors name the command */
	r = dmr_test_dmr("cn", "--config", cfg, "--id", "0", "--trace", base, "--threads", "abc",
			 NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strncmp(r.err, "dmreplay cn: option --threads: 'abc'", 36) == 0, "%s", r.err);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("mn", "--config", cfg, "--bogus", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strncmp(r.err, "dmreplay mn: ", 13) == 0, "%s", r.err);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("cn", "--config", cfg, "--bogus", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strncmp(r.err, "dmreplay cn: ", 13) == 0, "%s", r.err);
	assert_has(&r, "--bogus");
	dmr_test_run_free(&r);
}
END_TEST

/* --quiet prints the error line(s) (and notes) only, also for a partial run; an --out
 * that exists but cannot be written is refused before the run. */
START_TEST(test_quiet_and_unwritable_out)
{
	char base[PATH_MAX], t[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	mid_bad_trace(t, sizeof(t), "quiet-bad.csv");
	/* streamed (no cache): the bad row is met mid-run, a partial run */
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-quiet", t, "--no-trace-cache", NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_null(strstr(r.err, "PARTIAL"));
	assert_has(&r, "field op");
	dmr_test_run_free(&r);
	ck_assert(exists(dir, "summary.partial.csv"));
	/* /proc/self: a directory nobody (not even root) can create files in */
	r = dmr_test_dmr("run", "--trace", base, SMALL, "--out", "/proc/self", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	assert_has(&r, "--out /proc/self");
	dmr_test_run_free(&r);
}
END_TEST

static Suite *cli_out_suite(void)
{
	Suite *s = suite_create("cli_out");
	TCase *tc = tcase_create("results_kept");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_out_lock);
	tcase_add_test(tc, test_force_refused_keeps_out);
	tcase_add_test(tc, test_no_overwrite);
	tcase_add_test(tc, test_launcher_earlier_results);
	tcase_add_test(tc, test_cn_force_refused_keeps_out);
	tcase_add_test(tc, test_launcher_config_checks);
	tcase_add_test(tc, test_quiet_and_unwritable_out);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("cli_out", 1, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(cli_out_suite());
	dmr_test_env_fini();
	return rc;
}
