/*
 * tests/integration/test_cli.c - `dmreplay run` refuses bad input: each case exits with
 * status 2, names the file, line and field (or option) on stderr, and
 * leaves no summary.csv in --out (summary.partial.csv only for runs that
 * started: with --no-trace-cache the trace is streamed, so a bad row is
 * met mid-run; through the default cache, compiling it meets the row and
 * the run is refused before it starts). Cases:
 * wrong field count, unknown op, unknown table, key beyond the table,
 * truncated trace (mid-line, and at a transaction boundary short of
 * `# txns`), missing trace, profile with a missing or a negative parameter,
 * footprint larger than --mr-size, bad option values. `--help` of
 * dmreplay, run, gen tpcc and model (-h anywhere) exits 0 with usage.
 * That finished results are never replaced, and the launcher's checks:
 * test_cli_out.c (the helpers both use: cli_helpers.h).
 *
 * Traces are generated into one mkdtemp directory (removed at the end) and
 * edited line by line; the binary is $DMR_BUILD_DIR/dmreplay.
 */
#include "cli_helpers.h"

/* ---- trace rows ----------------------------------------------------------- */

START_TEST(test_wrong_field_count)
{
	char t[PATH_MAX];
	int line;
	dmr_test_run_t r = bad_row("fields.csv", 0, -1, NULL, t, sizeof(t), &line, NULL, 0);
	assert_at(&r, t, line);
	assert_has(&r, "13 fields");
	assert_has(&r, "got 12");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_unknown_op)
{
	char t[PATH_MAX];
	int line;
	dmr_test_run_t r = bad_row("op.csv", 1, 3, "X", t, sizeof(t), &line, NULL, 0);
	assert_at(&r, t, line);
	assert_has(&r, "field op");
	assert_has(&r, "'X'");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_unknown_table)
{
	char t[PATH_MAX];
	int line;
	dmr_test_run_t r = bad_row("table.csv", 1, 4, "nosuchtable", t, sizeof(t), &line, NULL, 0);
	assert_at(&r, t, line);
	assert_has(&r, "field table");
	assert_has(&r, "nosuchtable");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_key_beyond_table)
{
	/* key = ROWS of the row's table (SmallBank: 100 accounts per table) */
	char t[PATH_MAX], tbl[64];
	int line;
	{
		char base[PATH_MAX];
		base_trace(base, sizeof(base));
		lines_t L;
		lines_load(&L, base);
		int i = first_row(&L);
		i += (L.n - i) / 2;
		field_of(tbl, sizeof(tbl), L.l[i], 4);
		char want[128];
		snprintf(want, sizeof(want), "# table %s 100 ", tbl);
		int found = 0;
		for (int j = 0; j < i; j++)
			found |= strncmp(L.l[j], want, strlen(want)) == 0;
		ck_assert_msg(found, "base trace: no '%s' header", want);
		lines_free(&L);
	}
	dmr_test_run_t r = bad_row("key.csv", 1, 5, "100", t, sizeof(t), &line, NULL, 0);
	assert_at(&r, t, line);
	assert_has(&r, "field key");
	assert_has(&r, "100");
	assert_has(&r, tbl);
	dmr_test_run_free(&r);

	/* and a negative key without dep */
	r = bad_row("keyneg.csv", 1, 5, "-1", t, sizeof(t), &line, NULL, 0);
	assert_at(&r, t, line);
	assert_has(&r, "field key");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_truncated_midline)
{
	char base[PATH_MAX], t[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	/* cut the last line in its middle, no newline */
	char cut[1200];
	snprintf(cut, sizeof(cut), "%s", L.l[L.n - 1]);
	cut[strlen(cut) / 2] = 0;
	dmr_test_path(t, sizeof(t), "cut.csv");
	lines_write(&L, L.n, L.n - 1, cut, 1, t);
	int last = L.n;
	lines_free(&L);
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-cut", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0); /* before the run (D19) */
	assert_at(&r, t, last);
	assert_has(&r, "truncated");
	dmr_test_run_free(&r);

	/* cut inside an earlier line (file ends mid-row, mid-file) */
	lines_load(&L, base);
	int mid = first_row(&L) + 7;
	snprintf(cut, sizeof(cut), "%s", L.l[mid]);
	cut[strlen(cut) / 3] = 0;
	lines_write(&L, mid + 1, mid, cut, 1, t);
	lines_free(&L);
	r = run_into(dir, sizeof(dir), "out-cut2", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0); /* before the run (D19) */
	assert_at(&r, t, mid + 1);
	assert_has(&r, "truncated");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_truncated_at_txn_boundary)
{
	char base[PATH_MAX], t[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	/* keep the rows of the first 10 transactions: '# txns 200' says more */
	int i = first_row(&L), ntx = 0, end = L.n;
	char prev[64] = "", cur[64];
	for (; i < L.n; i++) {
		field_of(cur, sizeof(cur), L.l[i], 0);
		if (strcmp(cur, prev) != 0) {
			if (ntx == 10) {
				end = i;
				break;
			}
			ntx++;
			snprintf(prev, sizeof(prev), "%s", cur);
		}
	}
	ck_assert_int_lt(end, L.n);
	dmr_test_path(t, sizeof(t), "short.csv");
	lines_write(&L, end, -1, NULL, 0, t);
	lines_free(&L);
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-short", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0); /* before the run (D19) */
	assert_at(&r, t, end);	    /* the last line */
	assert_has(&r, "truncated");
	assert_has(&r, "10 of 200");
	assert_has(&r, "field txns");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_missing_trace)
{
	char t[PATH_MAX], dir[PATH_MAX];
	dmr_test_path(t, sizeof(t), "no-such-trace.csv");
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-missing", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, t);
	assert_has(&r, "No such file");
	dmr_test_run_free(&r);
	/* an empty --trace is named as such, not as ": No such file" */
	r = run_into(dir, sizeof(dir), "out-empty-trace", "", NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "option --trace: empty file name");
	dmr_test_run_free(&r);
	/* an empty --fault (e.g. an unset variable) is refused, not a run
	 * without faults */
	dmr_test_path(dir, sizeof(dir), "out-empty-fault");
	r = dmr_test_dmr("run", "--backend", "fault:sim", "--fault", "", "--txns", "5", "--out",
			 dir, "--quiet", NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "option --fault: empty");
	dmr_test_run_free(&r);
}
END_TEST

/* every command's --help exits 0 with its own usage: gen lists its
 * workloads, kv models says what it lists (a trial: both failed) */
START_TEST(test_subcommand_help)
{
	dmr_test_run_t r = dmr_test_dmr("gen", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "usage: dmreplay gen WORKLOAD") &&
			  strstr(r.out, "tpcc, smallbank, ycsb or tatp"),
		      "%s", r.out);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "models", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "usage: dmreplay kv models"), "%s", r.out);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "models", "--bogus", NULL);
	ck_assert_int_eq(r.status, 2);
	dmr_test_run_free(&r);
	/* -h is --help everywhere: exit 0, the command's own usage on stdout */
	static const char *const cmds[][3] = {{"run", NULL},
					      {"gen", NULL},
					      {"gen", "tpcc"},
					      {"gen", "smallbank"},
					      {"gen", "ycsb"},
					      {"gen", "tatp"},
					      {"kv", NULL},
					      {"kv", "gen"},
					      {"kv", "run"},
					      {"kv", "bench"},
					      {"kv", "models"},
					      {"sweep", NULL},
					      {"report", NULL},
					      {"model", NULL},
					      {"doctor", NULL},
					      {"bench", NULL},
					      {"calibrate", NULL},
					      {"fidelity", NULL},
					      {"replay-record", NULL},
					      {"mn", NULL},
					      {"cn", NULL}};
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		char want[64];
		snprintf(want, sizeof(want), "usage: dmreplay %s%s%s", cmds[k][0],
			 cmds[k][1] ? " " : "", cmds[k][1] ? cmds[k][1] : "");
		r = cmds[k][1] ? dmr_test_dmr(cmds[k][0], cmds[k][1], "-h", NULL)
			       : dmr_test_dmr(cmds[k][0], "-h", NULL);
		ck_assert_msg(r.status == 0 && strstr(r.out, want), "%s -h: exit %d: %s%s", want,
			      r.status, r.out, r.err);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* an option getopt_long refuses is said one way by every command, on one
 * line: "dmreplay CMD: unknown option 'X' (see dmreplay CMD --help)" or
 * "dmreplay CMD: option X needs a value" (it was getopt's own "run:
 * unrecognized option" followed by the whole usage for some, "smallbank:
 * try --help" or "unknown option or missing value" for others) */
START_TEST(test_option_errors_one_way)
{
	static const char *const cmds[][2] = {
	    {"run", NULL},   {"gen", "smallbank"}, {"gen", "tpcc"},    {"kv", "gen"},
	    {"kv", "run"},   {"kv", "bench"},	   {"kv", "mn"},       {"kv", "cn"},
	    {"kv", "set"},   {"sweep", NULL},	   {"report", NULL},   {"doctor", NULL},
	    {"bench", NULL}, {"calibrate", NULL},  {"fidelity", NULL}, {"replay-record", NULL},
	    {"mn", NULL},    {"cn", NULL},	   {"model", NULL}};
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		char cmd[64], want[256];
		snprintf(cmd, sizeof(cmd), "%s%s%s", cmds[k][0], cmds[k][1] ? " " : "",
			 cmds[k][1] ? cmds[k][1] : "");
		snprintf(want, sizeof(want),
			 "dmreplay %s: unknown option '--bogus' (see dmreplay %s --help)\n", cmd,
			 cmd);
		dmr_test_run_t r = cmds[k][1]
				       ? dmr_test_dmr(cmds[k][0], cmds[k][1], "--bogus", NULL)
				       : dmr_test_dmr(cmds[k][0], "--bogus", NULL);
		ck_assert_msg(r.status == 2 && strcmp(r.err, want) == 0 && r.out[0] == '\0',
			      "%s --bogus: exit %d, stderr:\n%s", cmd, r.status, r.err);
		dmr_test_run_free(&r);
	}
	static const struct {
		const char *a[5], *says; /* a: NULL-terminated */
	} miss[] = {
	    {{"run", "--coros"}, "dmreplay run: option --coros needs a value\n"},
	    {{"run", "--quiet=1"}, "dmreplay run: option --quiet takes no value\n"},
	    {{"gen", "smallbank", "-o"}, "dmreplay gen smallbank: option -o needs a value\n"},
	    {{"gen", "smallbank", "--txns", "x"},
	     "dmreplay gen smallbank: option --txns: 'x' is not a non-negative integer (K/M/G/T "
	     "suffixes: powers of 1024)\n"},
	    {{"kv", "gen", "-o"}, "dmreplay kv gen: option -o needs a value\n"},
	    {{"kv", "get", "-o"}, "dmreplay kv get: option -o needs a value\n"},
	    {{"kv", "run", "--clients"}, "dmreplay kv run: option --clients needs a value\n"},
	    {{"mn", "--config"}, "dmreplay mn: option --config needs a value\n"},
	};
	for (size_t k = 0; k < sizeof(miss) / sizeof(miss[0]); k++) {
		dmr_test_run_t r = dmr_test_dmrv(miss[k].a);
		ck_assert_msg(r.status == 2 && strcmp(r.err, miss[k].says) == 0, "%s: exit %d: %s",
			      miss[k].says, r.status, r.err);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* ---- profiles --------------------------------------------------------------- */

START_TEST(test_profile_copy_ok)
{
	/* control: the unedited copy, passed as a path, is accepted */
	char src[PATH_MAX + 64], p[PATH_MAX], base[PATH_MAX], dir[PATH_MAX];
	snprintf(src, sizeof(src), "%s/models/cx6dx-100g.json", dmr_test_src);
	lines_t L;
	lines_load(&L, src);
	dmr_test_path(p, sizeof(p), "copy.json");
	lines_write(&L, L.n, -1, NULL, 0, p);
	lines_free(&L);
	base_trace(base, sizeof(base));
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-copy", base, "--profile", p, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	ck_assert(exists(dir, "summary.csv"));
}
END_TEST

START_TEST(test_profile_missing_param)
{
	char p[PATH_MAX], base[PATH_MAX], dir[PATH_MAX];
	profile_variant(p, sizeof(p), "missing.json", 0);
	base_trace(base, sizeof(base));
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-pmiss", base, "--profile", p, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, p);
	assert_has(&r, "poll_ns");
	assert_has(&r, "missing");
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_profile_negative_param)
{
	char p[PATH_MAX], base[PATH_MAX], dir[PATH_MAX];
	profile_variant(p, sizeof(p), "negative.json", 1);
	base_trace(base, sizeof(base));
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-pneg", base, "--profile", p, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, p);
	assert_has(&r, "poll_ns");
	assert_has(&r, "-50");
	dmr_test_run_free(&r);
}
END_TEST

/* ---- footprint -------------------------------------------------------------- */

START_TEST(test_mr_size_too_small)
{
	char t[PATH_MAX], dir[PATH_MAX];
	dmr_test_path(t, sizeof(t), "tpcc.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "tpcc", "--warehouses", "4", "--txns", "200",
					"--seed", "1", "--quiet", "-o", t, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	/* the footprint a run with this shape reports */
	r = run_into(dir, sizeof(dir), "out-fp", t, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_summary_t s;
	dmr_test_summary_load(&s, dir, "summary.csv");
	char fp[32];
	snprintf(fp, sizeof(fp), "%s", dmr_test_col(&s, "footprint_bytes"));
	dmr_test_summary_free(&s);
	ck_assert_msg(strtoull(fp, NULL, 10) > (1u << 20), "footprint '%s'", fp);

	r = run_into(dir, sizeof(dir), "out-mr", t, "--mr-size", "1M", NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, t);
	assert_has(&r, "--mr-size");
	assert_has(&r, fp);	   /* the footprint */
	assert_has(&r, "1048576"); /* and the region size */
	dmr_test_run_free(&r);

	/* a region larger than the 47-bit user address space cannot be
	 * mapped, even unreserved: refused (exit 2, it was 1), said, and
	 * --out not left behind (it held a .dmr-lock) */
	static const char *const bes[] = {"sim", "shm"};
	for (int k = 0; k < 2; k++) {
		r = run_into(dir, sizeof(dir), k ? "out-map-shm" : "out-map-sim", t, "--mr-size",
			     "200T", "--backend", bes[k]);
		assert_refused(&r, dir, 0);
		assert_has(&r, "more than this host maps");
		assert_has(&r, "--mr-size");
		ck_assert_msg(access(dir, F_OK) != 0, "%s left behind", dir);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* ---- option values ---------------------------------------------------------- */

START_TEST(test_bad_options)
{
	static const struct {
		const char *opt, *val;
	} cases[] = {
	    {"--cns", "0"},
	    {"--threads", "abc"},
	    {"--duration", "-1"},
	    {"--mtu", "3000"},
	    {"--coros", "0"},
	    {"--threads", "-2"},
	    {"--seed", "12x"},
	    {"--mr-size", "5Q"},
	    {"--duration", "1h"},
	    {"--mtu", "100"},
	    {"--retries", "-1"},
	    {"--txns", ""},
	    /* issue #15 D1: kv run's bounds, 1 us to 1 h (1e-9 grew to 24 GB) */
	    {"--window-ms", "1e-9"},
	    {"--window-ms", "0"},
	    {"--window-ms", "4e6"},
	    /* issue 11: MNs, backups (R < M: --mns is 1 here), protocol, index */
	    {"--mns", "17"},
	    {"--mns", "0"},
	    {"--backups", "3"},
	    {"--backups", "1"},
	    {"--protocol", "motor"},
	    {"--index", "btree"},
	    {"--addr-cache", "12"},
	    {"--index-buckets", "64"},
	    {"--mns", "2x"},
	};
	char base[PATH_MAX], dir[PATH_MAX], name[64];
	base_trace(base, sizeof(base));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "out-opt%zu", i);
		/* the option last, overriding the small shape */
		dmr_test_run_t r =
		    run_into(dir, sizeof(dir), name, base, cases[i].opt, cases[i].val, NULL, NULL);
		ck_assert_msg(r.status == 2, "%s %s: exit %d\n%s", cases[i].opt, cases[i].val,
			      r.status, r.err);
		assert_refused(&r, dir, 0);
		assert_has(&r, cases[i].opt);
		if (*cases[i].val)
			assert_has(&r, cases[i].val);
		dmr_test_run_free(&r);
	}
	/* issue 11, options that need another: an index with more keys than
	 * slots (the trace's tables have 100 rows: 13 buckets needed), an
	 * address cache larger than the machine, R >= M */
	static const struct {
		const char *o1, *v1, *o2, *v2, *says;
	} pairs[] = {
	    {"--index", "hash", "--index-buckets", "2", "it needs at least 13 buckets"},
	    {"--index", "hash", "--addr-cache", "1T", "more than this machine's memory"},
	    {"--mns", "2", "--backups", "2", "--backups 2 with --mns 2"},
	    /* 1500 lies inside 256..4096, which the message used to give */
	    {"--mtu", "1500", "--seed", "1",
	     "option --mtu: 1500: not an IB MTU (256, 512, 1024, 2048 or 4096)"},
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		snprintf(name, sizeof(name), "out-pair%zu", i);
		dmr_test_run_t p = run_into(dir, sizeof(dir), name, base, pairs[i].o1, pairs[i].v1,
					    pairs[i].o2, pairs[i].v2);
		ck_assert_msg(p.status == 2, "%s %s %s %s: exit %d\n%s", pairs[i].o1, pairs[i].v1,
			      pairs[i].o2, pairs[i].v2, p.status, p.err);
		assert_refused(&p, dir, 0);
		assert_has(&p, pairs[i].says);
		dmr_test_run_free(&p);
	}
	/* an unknown option and a stray argument */
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-optx", base, "--no-such-option", NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "dmreplay run: unknown option '--no-such-option' (see dmreplay run --help)");
	dmr_test_run_free(&r);
	r = run_into(dir, sizeof(dir), "out-opty", base, "stray", NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "stray");
	dmr_test_run_free(&r);
}
END_TEST

/* issue 11: a SmallBank run on shm and on sim with 3 MNs and 2 backups
 * under every protocol and the hash index with a small address cache:
 * verified (the sum on the primaries, backups identical, every lock idle on
 * every MN), the placement printed, the cache hit in a real share of
 * lookups. */
START_TEST(test_replicated_runs_verified)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	const char *protos[] = {"occ", "ford", "farm", "drtmh", "crest"};
	const char *bes[] = {"shm", "sim"};
	for (int i = 0; i < 10; i++) {
		char name[32];
		snprintf(name, sizeof(name), "out-repl-%s-%s", protos[i / 2], bes[i % 2]);
		dmr_test_path(dir, sizeof(dir), name);
		dmr_test_run_t r =
		    dmr_test_dmr("run", "--trace", base, "--backend", bes[i % 2], SMALL, "--mns",
				 "3", "--backups", "2", "--protocol", protos[i / 2], "--index",
				 "hash", "--addr-cache", "50", "--out", dir, NULL);
		dmr_test_run_ok(&r);
		assert_has_out(&r, "verification   PASSED");
		assert_has_out(&r, "replicas       identical, locks idle");
		assert_has_out(&r, "savings:0/1,2 checking:1/2,0");
		char *p = strstr(r.out, "hit ratio ");
		ck_assert_ptr_nonnull(p);
		double ratio = atof(p + 10);
		ck_assert_msg(ratio > 0.05 && ratio < 1, "%s %s: hit ratio %f\n%s", protos[i / 2],
			      bes[i % 2], ratio, r.out);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* issue 11: TPC-C (1 warehouse, under contention: 4 CNs x 28 x 3 contexts)
 * on shm and on sim with 3 MNs and 2 backups under every protocol:
 * C1-C3 on the primaries, backups identical, every lock idle. */
START_TEST(test_replicated_tpcc_verified)
{
	char tr[PATH_MAX], dir[PATH_MAX];
	dmr_test_path(tr, sizeof(tr), "tpcc1.csv");
	dmr_test_run_t g = dmr_test_dmr("gen", "tpcc", "--warehouses", "1", "--txns", "600",
					"--seed", "5", "--quiet", "-o", tr, NULL);
	dmr_test_run_ok(&g);
	dmr_test_run_free(&g);
	const char *protos[] = {"occ", "ford", "farm", "drtmh", "crest"};
	const char *bes[] = {"shm", "sim"};
	for (int i = 0; i < 10; i++) {
		char name[32];
		snprintf(name, sizeof(name), "out-tpcc-%s-%s", protos[i / 2], bes[i % 2]);
		dmr_test_path(dir, sizeof(dir), name);
		dmr_test_run_t r = dmr_test_dmr(
		    "run", "--trace", tr, "--backend", bes[i % 2], "--mns", "3", "--backups", "2",
		    "--protocol", protos[i / 2], "--retries", "3", "--out", dir, NULL);
		dmr_test_run_ok(&r);
		assert_has_out(&r, "verification   PASSED (tpcc C1 C2 C3 ok)");
		assert_has_out(&r, "replicas       identical, locks idle");
		char want[64];
		snprintf(want, sizeof(want), "cluster        protocol %s,", protos[i / 2]);
		assert_has_out(&r, want);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* issue #15 D1: a --duration whose time series would need more rows than a
 * run keeps (DMR_REPLAY_TS_MAX_ROWS) is refused before the run, naming
 * --window-ms and the rows needed */
START_TEST(test_window_rows_cap)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-rows", base, "--window-ms", "0.001",
				    "--duration", "2000");
	assert_refused(&r, dir, 0);
	assert_has(&r, "--window-ms");
	assert_has(&r, "2000000000 time-series rows");
	dmr_test_run_free(&r);
	/* at the cap it runs: 1 s of run time in windows of 1 ms = 1000 rows */
	r = run_into(dir, sizeof(dir), "out-rows-ok", base, "--window-ms", "1", "--duration", "1");
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}
END_TEST

/* issue #15 D23: a trace without transactions is refused (it was reported
 * as a complete run), and a refused trace leaves no --out directory behind
 * (it was created before the trace was opened) */
START_TEST(test_empty_trace_and_no_out)
{
	char base[PATH_MAX], t[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	int i = first_row(&L), at = -1;
	for (int k = 0; k < i; k++)
		if (strncmp(L.l[k], "# txns ", 7) == 0)
			at = k;
	ck_assert_int_ge(at, 0);
	dmr_test_path(t, sizeof(t), "empty.csv");
	lines_write(&L, i, at, "# txns 0", 0, t);
	lines_free(&L);
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-empty", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "no transactions");
	ck_assert_msg(!dmr_test_exists(dir), "%s created for a refused trace", dir);
	dmr_test_run_free(&r);
	/* a bad option found after --out was made and locked: it goes again */
	r = run_into(dir, sizeof(dir), "out-badmtu", base, "--mtu", "3000", NULL, NULL);
	assert_refused(&r, dir, 0);
	ck_assert_msg(!dmr_test_exists(dir), "%s left behind by a refused --mtu", dir);
	dmr_test_run_free(&r);
	dmr_test_path(t, sizeof(t), "no-such-trace.csv");
	r = run_into(dir, sizeof(dir), "out-missing", t, NULL, NULL, NULL, NULL);
	assert_refused(&r, dir, 0);
	ck_assert_msg(!dmr_test_exists(dir), "%s created for a missing trace", dir);
	dmr_test_run_free(&r);
	/* the parents of --out that the run made go too (the trial of session
	 * 12 found an empty parent left by a refused --profile) */
	char parent[PATH_MAX - 16];
	dmr_test_path(parent, sizeof(parent), "made-parent");
	snprintf(dir, sizeof(dir), "%s/x/y", parent);
	r = dmr_test_dmr("run", "--trace", base, "--profile", "nosuch", "--out", dir, "--quiet",
			 NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!dmr_test_exists(parent), "%s left by a refused --profile", parent);
	dmr_test_run_free(&r);
}
END_TEST

/* Trace paths a trial tried: a name with a comma and a quote is one
 * quoted field of summary.csv, which report reads (it had given a row with
 * a field too many); a FIFO and "-" are refused, naming why (a pipe had
 * given "field magic: not a dmreplay trace"). */
START_TEST(test_trace_paths)
{
	char t[PATH_MAX], dir[PATH_MAX], rep[PATH_MAX], fifo[PATH_MAX];
	dmr_test_path(t, sizeof(t), "a,b\"c.csv");
	dmr_test_run_t r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "200",
					"--quiet", "-o", t, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(dir, sizeof(dir), "out-comma");
	r = dmr_test_dmr("run", "--trace", t, SMALL, "--quiet", "--out", dir, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	char sum[PATH_MAX + 16];
	snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
	char *text = dmr_test_read_text(sum);
	ck_assert_msg(strstr(text, ",b\"\"c.csv\",") != NULL, "trace field not quoted:\n%s", text);
	free(text);
	dmr_test_path(rep, sizeof(rep), "rep-comma");
	r = dmr_test_dmr("report", sum, "--out", rep, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(fifo, sizeof(fifo), "trace.fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	dmr_test_path(dir, sizeof(dir), "out-fifo");
	r = dmr_test_dmr("run", "--trace", fifo, SMALL, "--quiet", "--out", dir, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "trace.fifo: a pipe: a trace is read from a regular file");
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", fifo, SMALL, "--quiet", "--no-trace-cache", "--out", dir,
			 NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "a pipe: a trace is read from a regular file");
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", "-", SMALL, "--quiet", "--out", dir, NULL);
	ck_assert_int_ne(r.status, 0);
	assert_has(&r, "a trace is not read from standard input");
	dmr_test_run_free(&r);
	/* --trace-cache-dir: an existing directory, named when it is not */
	r = dmr_test_dmr("run", "--trace", t, SMALL, "--quiet", "--out", dir, "--trace-cache-dir",
			 "/nonexistent-dmr-cache", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "option --trace-cache-dir /nonexistent-dmr-cache: No such file");
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", t, SMALL, "--quiet", "--out", dir, "--trace-cache-dir",
			 "", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "option --trace-cache-dir: empty");
	dmr_test_run_free(&r);
	ck_assert(!dmr_test_exists(dir));
}
END_TEST

/* issue #15 D20: a progress line on stderr (on a terminal, or forced with
 * --progress: then a line per second and always a last one), never with
 * --quiet; run counts the transactions started of the trace's, gen those
 * written of --txns */
START_TEST(test_progress_line)
{
	char base[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_path(dir, sizeof(dir), "out-progress");
	dmr_test_run_t r =
	    dmr_test_dmr("run", "--trace", base, SMALL, "--out", dir, "--progress", NULL);
	dmr_test_run_ok(&r);
	assert_has(&r, "run: 200/200 txns (100.0 %)");
	assert_has(&r, "ETA");
	dmr_test_run_free(&r);
	/* stderr is no terminal here: nothing unless forced */
	r = dmr_test_dmr("run", "--trace", base, SMALL, "--out", dir, "--force", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.err, "txns (") == NULL, "progress line off a terminal:\n%s", r.err);
	dmr_test_run_free(&r);
	dmr_test_path(out, sizeof(out), "out-progress-quiet");
	r = dmr_test_dmr("run", "--trace", base, SMALL, "--out", out, "--progress", "--quiet",
			 NULL);
	dmr_test_run_ok(&r);
	ck_assert_str_eq(r.err, "");
	dmr_test_run_free(&r);
	/* --txns below the trace's count: the total is --txns */
	r = dmr_test_dmr("run", "--trace", base, SMALL, "--out", dir, "--progress", "--force",
			 "--txns", "50", NULL);
	dmr_test_run_ok(&r);
	assert_has(&r, "run: 50/50 txns");
	dmr_test_run_free(&r);
	dmr_test_path(out, sizeof(out), "progress-gen.csv");
	r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "300", "--progress",
			 "-o", out, NULL);
	dmr_test_run_ok(&r);
	assert_has(&r, "smallbank: 300/300 txns (100.0 %)");
	/* the summary line every generator prints (tpcc's since issue 1) */
	char want[4096 + 128];
	snprintf(want, sizeof(want), "smallbank: wrote 300 txns to %s (100 accounts)", out);
	assert_has(&r, want);
	dmr_test_run_free(&r);
	/* -o -: the same trace on standard output, no file named "-" (a trial
	 * found one in its directory) */
	r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "300", "-o", "-", NULL);
	dmr_test_run_ok(&r);
	char *file = dmr_test_read_text(out);
	ck_assert_str_eq(r.out, file);
	free(file);
	ck_assert(!dmr_test_exists("-"));
	assert_has(&r, "smallbank: wrote 300 txns to standard output");
	dmr_test_run_free(&r);
	/* -o '': refused as bad input (it wrote ./.tmp and removed it: a trial) */
	r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "30", "-o", "", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "output path '': empty");
	dmr_test_run_free(&r);
	char wl[512 + 64];
	snprintf(wl, sizeof(wl), "%s/traces/ycsb/workloada", dmr_test_src);
	r = dmr_test_dmr("gen", "ycsb", "--workload", wl, "--txns", "40", "-o", out, NULL);
	dmr_test_run_ok(&r);
	snprintf(want, sizeof(want), "ycsb: wrote 40 txns to %s (workload ", out);
	assert_has(&r, want);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "300", "--progress",
			 "--quiet", "-o", out, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.err, "txns (") == NULL, "progress with --quiet:\n%s", r.err);
	dmr_test_run_free(&r);
}
END_TEST

/* issue #15 D17: hot:K/P with K not fewer than the table's items was taken
 * as uniform silently: refused, naming K and the table size */
START_TEST(test_gen_hot_k_refused)
{
	char out[PATH_MAX], wl[PATH_MAX];
	dmr_test_path(out, sizeof(out), "hotk.csv");
	snprintf(wl, sizeof(wl), "%s/traces/ycsb/workloada", dmr_test_src);
	static const char *const gens[][8] = {
	    {"smallbank", "--accounts", "100", "--regime", "hot:100/0.9", NULL},
	    {"tpcc", "--warehouses", "4", "--regime", "hot:5/0.9", NULL},
	    {"ycsb", "--workload", NULL, "--regime", "hot:1000/0.9", NULL},
	};
	static const char *const want[] = {"K = 100 hot items is not fewer than the 100 accounts",
					   "K = 5 hot items is not fewer than the 4 warehouses",
					   "K = 1000 hot items is not fewer than the 1000 records"};
	for (int i = 0; i < 3; i++) {
		const char *a[16];
		int n = 0;
		a[n++] = "gen";
		for (int k = 0; gens[i][k] || k == 2; k++)
			a[n++] = gens[i][k] ? gens[i][k] : wl;
		a[n++] = "--txns";
		a[n++] = "10";
		a[n++] = "-o";
		a[n++] = out;
		a[n] = NULL;
		dmr_test_run_t r = dmr_test_dmrv(a);
		ck_assert_msg(r.status == 2, "gen %s: exit %d\n%s", gens[i][0], r.status, r.err);
		assert_has(&r, want[i]);
		ck_assert_msg(!dmr_test_exists(out), "%s written", out);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* issue #15 D23: a record locked twice in one transaction is named as
 * FILE:LINE of the op that locks it again (it was "trace line N" of the
 * transaction's first row, without the file). Session 14: with literal keys
 * the reader refuses it (field key, the first op's line), before the run;
 * through a dep (the slot known at run time only) the run stops on it. */
START_TEST(test_duplicate_lock_line)
{
	char base[PATH_MAX], t[PATH_MAX], dir[PATH_MAX], op[8];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	int i = first_row(&L);
	for (; i < L.n; i++) {
		field_of(op, sizeof(op), L.l[i], 3);
		if (strcmp(op, "U") == 0)
			break;
	}
	ck_assert_int_lt(i, L.n);
	/* the U row twice: rows i and i + 1 (file lines i + 1 and i + 2) */
	dmr_test_path(t, sizeof(t), "duplock.csv");
	FILE *f = fopen(t, "w");
	ck_assert_ptr_nonnull(f);
	for (int k = 0; k < L.n; k++) {
		fprintf(f, "%s\n", L.l[k]);
		if (k == i)
			fprintf(f, "%s\n", L.l[k]);
	}
	ck_assert_int_eq(fclose(f), 0);
	lines_free(&L);
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-duplock", t, NULL, NULL, NULL, NULL);
	ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
	char where[PATH_MAX + 64];
	snprintf(where, sizeof(where), "%s:%d: field key: ", t, i + 2);
	assert_has(&r, where);
	snprintf(where, sizeof(where), "(U, line %d) too", i + 1);
	assert_has(&r, where);
	ck_assert_msg(!dmr_test_exists(dir), "%s created", dir);
	dmr_test_run_free(&r);

	/* the same record through a dep: word 0 of acct 1 is 0 at load */
	dmr_test_path(t, sizeof(t), "deplock.csv");
	dmr_test_write_file(t, "# dmreplay-trace v1\n"
			       "# workload custom\n"
			       "# table acct 32 16 32\n"
			       "# type a\n"
			       "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n"
			       "1,a,0,U,acct,1,,,,,,,\n"
			       "1,a,1,U,acct,1,0.0,,,,,,\n");
	r = run_into(dir, sizeof(dir), "out-deplock", t, NULL, NULL, NULL, NULL);
	ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
	snprintf(where, sizeof(where), "%s:7: txn 1 op 1: ", t);
	assert_has(&r, where);
	assert_has(&r, "locks a record it already locked (op 0, line 6");
	dmr_test_run_free(&r);
}
END_TEST

/* issue #15 D17: counts and sizes take K/M/G/T alike in every command (kv
 * run --requests 1K and bench --iters 1K were accepted, run --txns 1K and
 * gen --txns 1K refused) */
START_TEST(test_suffixes_agree)
{
	char base[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-suffix", base, "--txns", "1K", "--mtu", "4K");
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	dmr_test_path(out, sizeof(out), "suffix.csv");
	r = dmr_test_dmr("gen", "smallbank", "--accounts", "100", "--txns", "1K", "--quiet", "-o",
			 out, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	char *text = dmr_test_read_text(out);
	ck_assert_msg(strstr(text, "# txns 1024\n") != NULL, "no '# txns 1024' in %s", out);
	free(text);
	/* identifiers stay plain digits */
	r = run_into(dir, sizeof(dir), "out-suffix2", base, "--seed", "1K", NULL, NULL);
	assert_refused(&r, dir, 0);
	dmr_test_run_free(&r);
}
END_TEST

/* ---- one exit-status rule (issue #15 D14) ----------------------------------- */

/* Run the binary with files limited to `limit` bytes (RLIMIT_FSIZE, SIGXFSZ
 * ignored: a write past it fails with EFBIG, as on a full disk). */
static dmr_test_run_t run_fsize(rlim_t limit, const char *const *args)
{
	struct rlimit old, lim;
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = limit;
	void (*h)(int) = signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	dmr_test_run_t r = dmr_test_dmrv(args);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, h);
	return r;
}

/* A write that fails during the work (disk full) is a failed run, exit 1, in
 * gen and run alike (it was 1 in gen, 2 in run); an output that cannot be
 * created as given is bad input, exit 2 (it was 1 in gen) */
START_TEST(test_exit_disk_full)
{
	char base[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_path(out, sizeof(out), "full.csv");
	const char *gen[] = {"gen",  "smallbank", "--accounts", "100", "--txns",
			     "2000", "--quiet",	  "-o",		out,   NULL};
	dmr_test_run_t r = run_fsize(4096, gen);
	ck_assert_msg(r.status == 1, "gen on a full disk: exit %d\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "write") != NULL, "%s", r.err);
	ck_assert_msg(!dmr_test_exists(out), "%s left behind", out);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("gen", "smallbank", "--txns", "10", "--quiet", "-o",
			 "/nonexistent-dir/x.csv", NULL);
	ck_assert_msg(r.status == 2, "gen into a missing directory: exit %d\n%s", r.status, r.err);
	dmr_test_run_free(&r);
	dmr_test_path(dir, sizeof(dir), "out-full");
	const char *run[] = {"run",	  "--trace", base,	    "--cns", "2",
			     "--threads", "2",	     "--coros",	    "1",     "--quiet",
			     "--out",	  dir,	     "--window-ms", "0.001", NULL};
	r = run_fsize(2048, run);
	ck_assert_msg(r.status == 1, "run on a full disk: exit %d\n%s", r.status, r.err);
	ck_assert_msg(!exists(dir, "summary.csv"), "summary.csv written on a full disk");
	dmr_test_run_free(&r);
}
END_TEST

/* --coros 100000 (11.2 M contexts at 4 x 28) said "out of memory", exit 1,
 * naming neither the option nor the size: refused up front, exit 2, naming
 * --coros and the bytes the contexts need */
START_TEST(test_coros_memory)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_path(dir, sizeof(dir), "out-coros");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", base, "--quiet", "--out", dir, "--cns",
					"100", "--threads", "100", "--coros", "100000", NULL);
	assert_refused(&r, dir, 0);
	assert_has(&r, "option --coros 100000: 1000000000 transaction contexts");
	assert_has(&r, "bytes");
	dmr_test_run_free(&r);
}
END_TEST

/* ---- a user trial: cache in the way, notes with --quiet, limits ----------- */

/* A copy of the base trace named name, line `at` (0-based, -1: none)
 * replaced by repl (NULL: the line dropped). */
static void base_copy(char *t, size_t len, const char *name, int at, const char *repl)
{
	char base[PATH_MAX];
	base_trace(base, sizeof(base));
	lines_t L;
	lines_load(&L, base);
	dmr_test_path(t, len, name);
	FILE *f = fopen(t, "w");
	ck_assert_msg(f != NULL, "%s: %s", t, strerror(errno));
	for (int i = 0; i < L.n; i++)
		if (i != at || repl)
			fprintf(f, "%s\n", i == at ? repl : L.l[i]);
	ck_assert_int_eq(fclose(f), 0);
	lines_free(&L);
}

/* Trial defect 8: a directory in the cache's place gave "mmap: No such
 * device"; a FIFO there would block. Both are refused naming the cache and
 * the way out, exit 2, nothing created. --no-trace-cache with a cache
 * given as the trace says that the cache is read. */
START_TEST(test_trace_cache_not_regular)
{
	char t[PATH_MAX], c[PATH_MAX + 8], dir[PATH_MAX];
	base_copy(t, sizeof(t), "nreg.csv", -1, NULL);
	snprintf(c, sizeof(c), "%s.dmrc", t);
	ck_assert_int_eq(mkdir(c, 0700), 0);
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-nreg", t, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "nreg.csv.dmrc of ");
	assert_has(&r, "is not a regular file (a directory); remove it or run with "
		       "--no-trace-cache");
	ck_assert_ptr_null(strstr(r.err, "mmap"));
	ck_assert_msg(!dmr_test_exists(dir), "%s created by a refused run", dir);
	dmr_test_run_free(&r);
	ck_assert_int_eq(rmdir(c), 0);
	ck_assert_int_eq(mkfifo(c, 0600), 0);
	r = run_into(dir, sizeof(dir), "out-nreg", t, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "is not a regular file (a pipe)");
	ck_assert_msg(!dmr_test_exists(dir), "%s created by a refused run", dir);
	dmr_test_run_free(&r);
	ck_assert_int_eq(unlink(c), 0);
	/* a run builds the cache; the cache given with --no-trace-cache */
	r = run_into(dir, sizeof(dir), "out-nreg", t, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	ck_assert(dmr_test_exists(c));
	r = run_into(dir, sizeof(dir), "out-nreg-off", c, "--no-trace-cache", NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	assert_has(&r, "note: ");
	assert_has(&r, "nreg.csv.dmrc is a trace cache, given as the trace: read as it is");
	ck_assert_str_eq(r.out, "");
	dmr_test_run_free(&r);
}
END_TEST

/* Trial defect 7: README says --quiet prints the errors and the notes on
 * stderr; the note that a workload has no known invariants had vanished. */
START_TEST(test_quiet_keeps_notes)
{
	char t[PATH_MAX], dir[PATH_MAX];
	base_copy(t, sizeof(t), "mystery.csv", 1, "# workload mystery");
	dmr_test_run_t r = run_into(dir, sizeof(dir), "out-mystery", t, NULL, NULL, NULL, NULL);
	dmr_test_run_ok(&r);
	ck_assert_str_eq(r.out, "");
	assert_has(&r, "dmreplay run: note: ");
	assert_has(&r, "no invariants known for workload 'mystery'; only lock release is checked");
	dmr_test_run_free(&r);
}
END_TEST

/* --txns above the trace's count replays the whole trace and says so (a
 * note on stderr, --quiet too); --txns within it says nothing. */
START_TEST(test_txns_beyond_trace_noted)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_run_t r =
	    run_into(dir, sizeof(dir), "out-txns-over", base, "--txns", "5000", NULL, NULL);
	dmr_test_run_ok(&r);
	ck_assert_str_eq(r.out, "");
	assert_has(&r, "dmreplay run: note: --txns 5000: the trace holds 200 transactions; all "
		       "of them were replayed");
	dmr_test_run_free(&r);
	r = run_into(dir, sizeof(dir), "out-txns-within", base, "--txns", "150", NULL, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.err, "--txns") == NULL, "stderr:\n%s", r.err);
	dmr_test_run_free(&r);
	/* --duration shorter than the first start: an empty run is said, and
	 * no latency of 0.00 us is printed (a trial) */
	dmr_test_path(dir, sizeof(dir), "out-duration-empty");
	r = dmr_test_dmr("run", "--trace", base, "--duration", "1ns", "--out", dir, NULL);
	dmr_test_run_ok(&r);
	assert_has(&r, "note: --duration 1e-09 s: no transaction was started within it");
	ck_assert_msg(
	    strstr(r.out, "per commit     - (no transaction committed: none was started)"), "%s",
	    r.out);
	ck_assert_ptr_null(strstr(r.out, "p50 0.00 us"));
	dmr_test_run_free(&r);
}
END_TEST

/* Trial defect 9: --threads 2000 got past the options and was refused by
 * the sim as "cns 1 / workers 2000 out of range (1..1024)", naming no
 * option; --help said nothing of the limit. */
START_TEST(test_worker_limit)
{
	char base[PATH_MAX], dir[PATH_MAX];
	base_trace(base, sizeof(base));
	dmr_test_path(dir, sizeof(dir), "out-workers");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", base, "--quiet", "--out", dir,
					"--threads", "2000", "--cns", "1", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "option --threads: 2000 out of range (1..1024)");
	ck_assert_ptr_null(strstr(r.err, "sim:"));
	ck_assert_msg(!dmr_test_exists(dir), "%s created by a refused run", dir);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--trace", base, "--quiet", "--out", dir, "--cns", "1025", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "option --cns: 1025 out of range (1..1024)");
	ck_assert_msg(!dmr_test_exists(dir), "%s created by a refused run", dir);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("run", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	assert_has_out(&r, "--cns N           compute nodes (1..1024, default 4)");
	assert_has_out(&r, "--threads N       workers per CN (1..1024, default 28)");
	dmr_test_run_free(&r);
}
END_TEST

/* Trial defect 10: a trace without '# regime' printed "smallbank , loop";
 * a --trace-cache-dir that cannot take the cache was named by its temp
 * file (DIR/NAME.dmrc.tmp.XXXXXX) instead of the option. */
START_TEST(test_no_regime_and_cache_dir)
{
	char t[PATH_MAX], dir[PATH_MAX];
	base_copy(t, sizeof(t), "noregime.csv", 2, NULL);
	dmr_test_path(dir, sizeof(dir), "out-noregime");
	dmr_test_run_t r = dmr_test_dmr("run", "--trace", t, SMALL, "--out", dir, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strncmp(r.out, "dmreplay: smallbank, loop none, on sim/", 39) == 0,
		      "first line:\n%s", r.out);
	dmr_test_run_free(&r);
	/* --out DIR/ (and DIR//) is DIR: the files are named DIR/NAME */
	char slash[PATH_MAX + 2], want[PATH_MAX + 16];
	dmr_test_path(dir, sizeof(dir), "out-slash");
	snprintf(slash, sizeof(slash), "%s//", dir);
	r = dmr_test_dmr("run", "--trace", t, SMALL, "--out", slash, NULL);
	dmr_test_run_ok(&r);
	snprintf(want, sizeof(want), " %s/summary.csv,", dir);
	assert_has_out(&r, want);
	ck_assert_ptr_null(strstr(r.out, "//"));
	dmr_test_run_free(&r);
	/* /proc/self: a directory nobody (not even root) can create files in */
	dmr_test_path(dir, sizeof(dir), "out-cachedir");
	r = dmr_test_dmr("run", "--trace", t, SMALL, "--quiet", "--out", dir, "--trace-cache-dir",
			 "/proc/self", NULL);
	ck_assert_int_eq(r.status, 2);
	assert_has(&r, "option --trace-cache-dir /proc/self: cannot create the trace cache "
		       "/proc/self/noregime.csv-");
	assert_has(&r, ".dmrc in /proc/self: ");
	ck_assert_ptr_null(strstr(r.err, ".tmp."));
	ck_assert_msg(!dmr_test_exists(dir), "%s created by a refused run", dir);
	dmr_test_run_free(&r);
}
END_TEST

/* ---- help ----------------------------------------------------------------- */

START_TEST(test_help)
{
	dmr_test_run_t r = dmr_test_dmr("--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "usage: dmreplay") != NULL);
	ck_assert(strstr(r.out, "run") != NULL && strstr(r.out, "gen tpcc") != NULL);
	ck_assert_str_eq(r.err, "");
	dmr_test_run_free(&r);

	r = dmr_test_dmr("run", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "usage: dmreplay run") != NULL);
	ck_assert(strstr(r.out, "--trace") != NULL && strstr(r.out, "--mr-size") != NULL);
	ck_assert_str_eq(r.err, "");
	dmr_test_run_free(&r);

	r = dmr_test_dmr("gen", "tpcc", "--help", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert(strstr(r.out, "usage: dmreplay gen tpcc") != NULL);
	ck_assert(strstr(r.out, "--warehouses") != NULL);
	ck_assert_str_eq(r.err, "");
	dmr_test_run_free(&r);

	/* model: -h / --help anywhere is the whole help, exit 0 (a trial:
	 * `model -h cx6dx-100g` exited 2 with the bare usage line); a real
	 * usage error says what was wrong */
	static const char *const mh[][3] = {
	    {"-h", "cx6dx-100g", NULL}, {"cx6dx-100g", "-h", NULL}, {"cx6dx-100g", "--help", NULL}};
	for (size_t k = 0; k < sizeof(mh) / sizeof(mh[0]); k++) {
		r = dmr_test_dmr("model", mh[k][0], mh[k][1], NULL);
		ck_assert_msg(r.status == 0 && strstr(r.out, "usage: dmreplay model PROFILE\n") &&
				  strstr(r.out, "DMR_MODELS_DIR") && r.err[0] == '\0',
			      "model %s %s: exit %d: %s%s", mh[k][0], mh[k][1], r.status, r.out,
			      r.err);
		dmr_test_run_free(&r);
	}
	static const char *const mbad[][4] = {
	    {NULL, NULL, "dmreplay model: missing PROFILE"},
	    {"cx6dx-100g", "extra", "dmreplay model: unexpected argument 'extra'"},
	    {"cx6dx-100g", "--bogus", "dmreplay model: unknown option '--bogus'"},
	    {"--bogus", NULL, "dmreplay model: unknown option '--bogus'"}};
	for (size_t k = 0; k < sizeof(mbad) / sizeof(mbad[0]); k++) {
		r = dmr_test_dmr("model", mbad[k][0], mbad[k][1], NULL);
		ck_assert_msg(r.status == 2 && strstr(r.err, mbad[k][2]) && r.out[0] == '\0',
			      "model %s %s: exit %d: %s%s", mbad[k][0] ? mbad[k][0] : "",
			      mbad[k][1] ? mbad[k][1] : "", r.status, r.out, r.err);
		dmr_test_run_free(&r);
	}

	/* no command: usage on stderr, status 2 */
	r = dmr_test_dmr(NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert(strstr(r.err, "usage: dmreplay") != NULL);
	dmr_test_run_free(&r);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("bad_input");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_subcommand_help);
	tcase_add_test(tc, test_option_errors_one_way);
	tcase_add_test(tc, test_wrong_field_count);
	tcase_add_test(tc, test_unknown_op);
	tcase_add_test(tc, test_unknown_table);
	tcase_add_test(tc, test_key_beyond_table);
	tcase_add_test(tc, test_truncated_midline);
	tcase_add_test(tc, test_truncated_at_txn_boundary);
	tcase_add_test(tc, test_missing_trace);
	tcase_add_test(tc, test_profile_copy_ok);
	tcase_add_test(tc, test_profile_missing_param);
	tcase_add_test(tc, test_profile_negative_param);
	tcase_add_test(tc, test_mr_size_too_small);
	tcase_add_test(tc, test_bad_options);
	tcase_add_test(tc, test_replicated_runs_verified);
	tcase_add_test(tc, test_replicated_tpcc_verified);
	tcase_add_test(tc, test_window_rows_cap);
	tcase_add_test(tc, test_exit_disk_full);
	tcase_add_test(tc, test_coros_memory);
	tcase_add_test(tc, test_empty_trace_and_no_out);
	tcase_add_test(tc, test_progress_line);
	tcase_add_test(tc, test_gen_hot_k_refused);
	tcase_add_test(tc, test_trace_paths);
	tcase_add_test(tc, test_duplicate_lock_line);
	tcase_add_test(tc, test_suffixes_agree);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_trace_cache_not_regular);
	tcase_add_test(tc, test_quiet_keeps_notes);
	tcase_add_test(tc, test_txns_beyond_trace_noted);
	tcase_add_test(tc, test_worker_limit);
	tcase_add_test(tc, test_no_regime_and_cache_dir);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("cli", 1, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(cli_suite());
	dmr_test_env_fini();
	return rc;
}
