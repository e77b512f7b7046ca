/* tests/unit/test_base.c - core/base: option values, picosecond conversions,
 * atomic files, mkdir -p, the stop flag, the wr_id encoding. */
#include <check.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/fs.h"
#include "core/base/opt.h"
#include "core/base/sig.h"
#include "core/base/timeps.h"
#include "core/base/wrid.h"
#include "helpers/suite.h"

START_TEST(opt_u64_values_and_errors)
{
	dmr_err_t err;
	uint64_t v = 7;
	ck_assert_int_eq(dmr_opt_u64("--n", "42", 0, 100, 0, &v, &err), DMR_OK);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(dmr_opt_u64("--n", "4K", 0, UINT64_MAX, DMR_OPT_SIZE, &v, &err), DMR_OK);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(dmr_opt_u64("--n", "2GiB", 0, UINT64_MAX, DMR_OPT_SIZE, &v, &err), DMR_OK);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(dmr_opt_u64("--n", "1T", 0, UINT64_MAX, DMR_OPT_SIZE, &v, &err), DMR_OK);
	ck_assert_uint_eq(v, 1ull << 40);
	v = 7;
	ck_assert_int_eq(dmr_opt_u64("--n", "4K", 0, UINT64_MAX, 0, &v, &err), DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --n: '4K' is not a non-negative integer");
	ck_assert_int_eq(dmr_opt_u64("--n", "-1", 0, 100, 0, &v, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_u64("--n", "+1", 0, 100, 0, &v, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_u64("--n", "", 0, 100, 0, &v, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_u64("--n", NULL, 0, 100, 0, &v, &err), DMR_ERR_PARSE);
	/* above 2^64 - 1: a number out of range, not "not an integer" */
	ck_assert_int_eq(dmr_opt_u64("--n", "99999999999999999999", 0, UINT64_MAX, 0, &v, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg,
			 "option --n: 99999999999999999999 out of range (0..18446744073709551615)");
	ck_assert_int_eq(dmr_opt_u64("--n", "16777216T", 0, UINT64_MAX, DMR_OPT_SIZE, &v, &err),
			 DMR_ERR_PARSE); /* 2^64: overflow */
	ck_assert_ptr_nonnull(strstr(err.msg, "16777216T out of range"));
	/* a suffix is a power of 1024: the value it made is named */
	ck_assert_int_eq(dmr_opt_u64("--items", "100K", 15, 100000, DMR_OPT_SIZE, &v, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --items: 100K = 102400 out of range (15..100000)");
	ck_assert_int_eq(dmr_opt_u64("--n", "101", 0, 100, 0, &v, &err), DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --n: 101 out of range (0..100)");
	ck_assert_uint_eq(v, 7); /* untouched on error */
	uint32_t w = 3;
	ck_assert_int_eq(dmr_opt_u32("--threads", "0", 1, 4096, 0, &w, &err), DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --threads: 0 out of range (1..4096)");
	ck_assert_int_eq(dmr_opt_u32("--threads", "28", 1, 4096, 0, &w, &err), DMR_OK);
	ck_assert_uint_eq(w, 28);
	int64_t i = 0;
	ck_assert_int_eq(dmr_opt_i64("--gid-index", "-1", -1, 255, &i, &err), DMR_OK);
	ck_assert_int_eq(i, -1);
	ck_assert_int_eq(dmr_opt_i64("--gid-index", "-2", -1, 255, &i, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_i64("--gid-index", "3x", -1, 255, &i, &err), DMR_ERR_PARSE);
}
END_TEST

START_TEST(opt_double_units_and_ranges)
{
	dmr_err_t err;
	double x = -5;
	ck_assert_int_eq(dmr_opt_double("--d", "200ms", 0, 1e9, DMR_OPT_SECONDS, &x, &err), DMR_OK);
	ck_assert(x == 0.2);
	ck_assert_int_eq(dmr_opt_double("--d", "50us", 0, 1e9, DMR_OPT_SECONDS, &x, &err), DMR_OK);
	ck_assert(x == 50 / 1e6);
	ck_assert_int_eq(dmr_opt_double("--d", "1.5", 0, 1e9, DMR_OPT_SECONDS, &x, &err), DMR_OK);
	ck_assert(x == 1.5);
	ck_assert_int_eq(dmr_opt_double("--d", "3h", 0, 1e9, DMR_OPT_SECONDS, &x, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --d: '3h': unknown unit 'h' (s, ms, us, ns)");
	ck_assert_int_eq(dmr_opt_double("--x", "1ms", 0, 10, 0, &x, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_double("--x", "nan", 0, 10, 0, &x, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_double("--x", "inf", 0, 10, 0, &x, &err), DMR_ERR_PARSE);
	ck_assert_int_eq(dmr_opt_double("--x", "0", 0, 10, DMR_OPT_LO_OPEN, &x, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --x: 0 out of range (0, 10]");
	ck_assert_int_eq(dmr_opt_double("--x", "10.5", 0, 10, 0, &x, &err), DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --x: 10.5 out of range [0, 10]");
	ck_assert_int_eq(dmr_opt_double("--x", "0", 0, 10, 0, &x, &err), DMR_OK);
	ck_assert(x == 0);
}
END_TEST

/* What getopt_long refused, said by dmr_opt_refused: the first refusal of
 * argv (opterr 0, ":" leading the short options, as the commands call it). */
static const char *refused(const char *a1, const char *a2)
{
	static const struct option lo[] = {{"coros", required_argument, NULL, 300},
					   {"config", required_argument, NULL, 301},
					   {"quiet", no_argument, NULL, 'q'},
					   {"out", required_argument, NULL, 'o'},
					   {NULL, 0, NULL, 0}};
	static dmr_err_t err;
	char *argv[] = {"cmd", (char *)a1, (char *)a2, NULL};
	int argc = a2 ? 3 : 2, ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":qo:", lo, NULL)) != -1)
		if (ch == '?' || ch == ':') {
			ck_assert_int_eq(dmr_opt_refused("run", ch, argv, lo, &err), DMR_ERR_PARSE);
			return err.msg;
		}
	return "(accepted)";
}

START_TEST(opt_refused_messages)
{
	ck_assert_str_eq(refused("--bogus", NULL),
			 "unknown option '--bogus' (see dmreplay run --help)");
	ck_assert_str_eq(refused("--bogus=3", NULL),
			 "unknown option '--bogus' (see dmreplay run --help)");
	ck_assert_str_eq(refused("--coros", NULL), "option --coros needs a value");
	ck_assert_str_eq(refused("--out", NULL), "option --out needs a value");
	ck_assert_str_eq(refused("-o", NULL), "option -o needs a value");
	ck_assert_str_eq(refused("--quiet=1", NULL), "option --quiet takes no value");
	ck_assert_str_eq(refused("--co", "3"), "option --co is ambiguous (--coros, --config)");
	ck_assert_str_eq(refused("-x", NULL), "unknown option '-x' (see dmreplay run --help)");
	/* in a cluster the letter is named, not the word before it */
	ck_assert_str_eq(refused("-q", "-qx"), "unknown option '-x' (see dmreplay run --help)");
	ck_assert_str_eq(refused("--cor", "3"), "(accepted)"); /* one match: an abbreviation */
}
END_TEST

START_TEST(time_conversions)
{
	ck_assert_uint_eq(dmr_ps_from_s(1.5), 1500000000000ull);
	ck_assert_uint_eq(dmr_ps_from_ms(5), 5 * DMR_PS_PER_MS);
	ck_assert_uint_eq(dmr_ps_from_us(2.5), 2500000ull);
	ck_assert_uint_eq(dmr_ps_from_ns(1), 1000ull);
	ck_assert_uint_eq(dmr_ps_from_s(-1), 0);
	ck_assert_uint_eq(dmr_ps_from_ms_round(0.0000000015), 2); /* 1.5 ps rounds to 2 */
	ck_assert_uint_eq(dmr_ps_from_ms(0.0000000015), 1);	  /* truncates */
	ck_assert(dmr_ps_to_s(3 * DMR_PS_PER_S) == 3.0);
	ck_assert(dmr_ps_to_us(1500000) == 1.5);
	ck_assert(dmr_ps_to_ms(DMR_PS_PER_MS / 2) == 0.5);
	ck_assert(dmr_ps_to_ns(20) == 0.02);
	double a = dmr_wall_s();
	dmr_time_ps_t p = dmr_mono_ps();
	ck_assert(a > 0 && p > 0);
	ck_assert(dmr_wall_s() >= a);
	ck_assert(dmr_mono_ps() >= p);
}
END_TEST

static char *tmpdir(void)
{
	static char t[64];
	snprintf(t, sizeof(t), "/tmp/dmr-test-base.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t));
	return t;
}

START_TEST(fs_mkdir_and_atomic_write)
{
	char *t = tmpdir(), p[256], q[256];
	dmr_err_t err;
	snprintf(p, sizeof(p), "%s/a/b/c", t);
	ck_assert_int_eq(dmr_mkdir_p(p, DMR_FS_PROBE, &err), DMR_OK);
	struct stat sb;
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	ck_assert_int_eq(dmr_mkdir_p(p, DMR_FS_PROBE, &err), DMR_OK); /* exists: fine */
	/* what a refused run made of its --out's path, and only that, goes */
	{
		char d[300], e[300];
		snprintf(d, sizeof(d), "%s/a/x//y/z/", t);
		ck_assert_uint_eq(dmr_dirs_missing(d), 3); /* x, y, z: a exists */
		ck_assert_uint_eq(dmr_dirs_missing(p), 0);
		ck_assert_int_eq(dmr_mkdir_p(d, 0, &err), DMR_OK);
		ck_assert_int_eq(dmr_rmdir_made(d, 3), 0);
		snprintf(e, sizeof(e), "%s/a/x", t);
		ck_assert(stat(e, &sb) != 0);	   /* x, y, z removed */
		ck_assert_int_eq(stat(p, &sb), 0); /* a/b/c kept */
		/* a directory holding something stops it, dir itself first */
		ck_assert_int_eq(dmr_mkdir_p(d, 0, &err), DMR_OK);
		snprintf(e, sizeof(e), "%s/a/x/y/z/partial.csv", t);
		ck_assert_int_eq(dmr_file_write_atomic(e, "p\n", 2, &err), DMR_OK);
		ck_assert_int_eq(dmr_rmdir_made(d, 3), -1);
		ck_assert_int_eq(stat(e, &sb), 0);
		ck_assert_int_eq(unlink(e), 0);
		snprintf(e, sizeof(e), "%s/a/x/keep", t);
		ck_assert_int_eq(dmr_file_write_atomic(e, "k\n", 2, &err), DMR_OK);
		ck_assert_int_eq(dmr_rmdir_made(d, 3), 0); /* z and y went, x holds keep */
		ck_assert_int_eq(stat(e, &sb), 0);
		ck_assert_int_eq(dmr_rmdir_made(d, 0), 0);
		ck_assert_uint_eq(dmr_dirs_missing("rel-never-made/q"), 2);
		ck_assert_uint_eq(dmr_dirs_missing(""), 0);
	}
	snprintf(q, sizeof(q), "%s/file", t);
	ck_assert_int_eq(dmr_file_write_atomic(q, "old\n", 4, &err), DMR_OK);
	/* a path that is a file is not a directory */
	ck_assert_int_eq(dmr_mkdir_p(q, 0, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "Not a directory"));
	/* an aborted write leaves the old file and no temp file */
	dmr_afile_t a;
	ck_assert_int_eq(dmr_afile_open(&a, q, &err), DMR_OK);
	ck_assert_ptr_nonnull(strstr(a.tmp, ".file."));
	fputs("half", a.f);
	dmr_afile_abort(&a);
	ck_assert_int_ne(access(a.tmp, F_OK), 0);
	FILE *f = fopen(q, "r");
	char buf[16] = {0};
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "old\n");
	/* two writers of one name get two temp files; the last commit wins whole */
	dmr_afile_t b, c;
	ck_assert_int_eq(dmr_afile_open(&b, q, &err), DMR_OK);
	ck_assert_int_eq(dmr_afile_open(&c, q, &err), DMR_OK);
	ck_assert_str_ne(b.tmp, c.tmp);
	fputs("from b\n", b.f);
	fputs("from c\n", c.f);
	ck_assert_int_eq(dmr_afile_commit(&b, &err), DMR_OK);
	ck_assert_int_eq(dmr_afile_commit(&c, &err), DMR_OK);
	f = fopen(q, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "from c\n");
	/* a directory that does not exist: refused at open, with the path */
	snprintf(p, sizeof(p), "%s/nodir/x", t);
	ck_assert_int_eq(dmr_afile_open(&a, p, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "nodir"));
	if (geteuid() != 0) { /* root writes anywhere: the probe cannot fail */
		snprintf(p, sizeof(p), "%s/ro", t);
		ck_assert_int_eq(mkdir(p, 0555), 0);
		ck_assert_int_eq(dmr_mkdir_p(p, DMR_FS_PROBE, &err), DMR_ERR_IO);
		ck_assert_ptr_nonnull(strstr(err.msg, "not writable"));
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(sig_stop_flag)
{
	dmr_sig_saved_t s;
	dmr_sig_install(&s);
	ck_assert_int_eq(dmr_sig_caught(), 0);
	raise(SIGTERM);
	ck_assert_int_eq(dmr_sig_caught(), SIGTERM);
	raise(SIGINT);
	ck_assert_int_eq(dmr_sig_caught(), SIGINT);
	dmr_sig_saved_t inner;
	dmr_sig_install(&inner); /* nested: a stop that arrived is kept */
	ck_assert_int_eq(dmr_sig_caught(), SIGINT);
	dmr_sig_restore(&inner);
	dmr_sig_restore(&s);
	dmr_sig_install(&s); /* not nested: installing clears */
	ck_assert_int_eq(dmr_sig_caught(), 0);
	dmr_sig_restore(&s);
	struct sigaction now;
	sigaction(SIGINT, NULL, &now);
	ck_assert_ptr_eq((void *)now.sa_handler, (void *)s.old_int.sa_handler);
	dmr_sig_raise_flag(0);
}
END_TEST

START_TEST(wrid_fields)
{
	uint64_t id = dmr_wrid(DMR_WRID_TXN, 1234, 99);
	ck_assert_uint_eq(id, (uint64_t)1234 << 32 | 99); /* the core's historic encoding */
	ck_assert_int_eq(dmr_wrid_kind(id), DMR_WRID_TXN);
	ck_assert_uint_eq(dmr_wrid_index(id), 1234);
	ck_assert_uint_eq(dmr_wrid_seq(id), 99);
	id = dmr_wrid(DMR_WRID_WAKE, DMR_WRID_INDEX_MAX, UINT32_MAX);
	ck_assert_int_eq(dmr_wrid_kind(id), DMR_WRID_WAKE);
	ck_assert_uint_eq(dmr_wrid_index(id), DMR_WRID_INDEX_MAX);
	ck_assert_uint_eq(dmr_wrid_seq(id), UINT32_MAX);
	id = dmr_wrid_n(DMR_WRID_KV_RDY, DMR_WRID_N_MAX);
	ck_assert_int_eq(dmr_wrid_kind(id), DMR_WRID_KV_RDY);
	ck_assert_uint_eq(dmr_wrid_get_n(id), DMR_WRID_N_MAX);
	ck_assert_int_eq(dmr_wrid_kind(dmr_wrid(DMR_WRID_BACKEND, 3, 7)), DMR_WRID_BACKEND);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("base");
	TCase *tc = tcase_create("base");
	tcase_add_test(tc, opt_u64_values_and_errors);
	tcase_add_test(tc, opt_double_units_and_ranges);
	tcase_add_test(tc, opt_refused_messages);
	tcase_add_test(tc, time_conversions);
	tcase_add_test(tc, fs_mkdir_and_atomic_write);
	tcase_add_test(tc, sig_stop_flag);
	tcase_add_test(tc, wrid_fields);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
