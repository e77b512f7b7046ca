/*
 * tests/unit/test_trace_cache.c - the binary trace cache (traces/trace.h
 * dmr_trace_open_cached, FORMAT.md "Binary cache"): the same transactions
 * from the CSV and from the cache (every field, header, rows, rewind), a
 * stale cache rebuilt, a corrupt or truncated cache refused, concurrent
 * builders of one cache leaving one valid file, the cache directory option.
 * Traces: TPC-C and SmallBank from `dmreplay gen` (every column in use).
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "core/base/sig.h"
#include "traces/trace.h"
#include "traces/trace_impl.h"

static void gen(const char *wl, const char *seed, const char *txns, const char *path)
{
	dmr_test_run_t r =
	    dmr_test_dmr("gen", wl, "--txns", txns, "--seed", seed, "-o", path, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
}

/* Every field of ops a and b equal; of the actions, the first nacts
 * (DMR_TRACE_MAX_ACTS: all, the unused ones zero in both as dmr_trace_next
 * leaves them; a->nacts: those dmr_trace_rec_decode writes). */
static void op_eq(const dmr_trace_op_t *a, const dmr_trace_op_t *b, uint64_t id, uint32_t i,
		  uint32_t nacts)
{
#define F(x) ck_assert_msg(a->x == b->x, "txn %llu op %u: field " #x, (unsigned long long)id, i)
	F(kind);
	F(table);
	F(round);
	F(count);
	F(key);
	F(dep.op);
	F(dep.field);
	F(dep.lit);
	F(lo);
	F(hi);
	F(guard.kind);
	F(guard.op);
	F(guard.f);
	F(guard.f2);
	F(nacts);
	for (uint32_t k = 0; k < nacts; k++) {
		F(acts[k].kind);
		F(acts[k].field);
		F(acts[k].val.op);
		F(acts[k].val.field);
		F(acts[k].val.lit);
	}
#undef F
}

/* 1 when every field of a and b is equal (op_eq without an assertion per
 * field: the round trip below compares 50,000 ops). */
static int op_same(const dmr_trace_op_t *a, const dmr_trace_op_t *b)
{
	if (a->kind != b->kind || a->table != b->table || a->round != b->round ||
	    a->count != b->count || a->key != b->key || a->dep.op != b->dep.op ||
	    a->dep.field != b->dep.field || a->dep.lit != b->dep.lit || a->lo != b->lo ||
	    a->hi != b->hi || a->guard.kind != b->guard.kind || a->guard.op != b->guard.op ||
	    a->guard.f != b->guard.f || a->guard.f2 != b->guard.f2 || a->nacts != b->nacts)
		return 0;
	for (int k = 0; k < DMR_TRACE_MAX_ACTS; k++)
		if (a->acts[k].kind != b->acts[k].kind || a->acts[k].field != b->acts[k].field ||
		    a->acts[k].val.op != b->acts[k].val.op ||
		    a->acts[k].val.field != b->acts[k].val.field ||
		    a->acts[k].val.lit != b->acts[k].val.lit)
			return 0;
	return 1;
}

/* Read both readers to the end; every transaction equal; returns the count. */
static uint64_t same_txns(dmr_trace_reader_t *a, dmr_trace_reader_t *b)
{
	static dmr_trace_txn_t ta, tb;
	dmr_err_t err;
	uint64_t n = 0, ra = dmr_trace_rows(a), rb = dmr_trace_rows(b);
	dmr_status_t sa, sb;

	const dmr_trace_hdr_t *ha = dmr_trace_header(a), *hb = dmr_trace_header(b);
	ck_assert_str_eq(ha->workload, hb->workload);
	ck_assert_str_eq(ha->regime, hb->regime);
	ck_assert_uint_eq(ha->ntables, hb->ntables);
	ck_assert_uint_eq(ha->txns, hb->txns);
	ck_assert_uint_eq(ha->ntypes, hb->ntypes);
	ck_assert_uint_eq(ha->nparams, hb->nparams);
	ck_assert_int_eq(ha->version, hb->version);
	for (uint32_t i = 0; i < ha->ntables; i++) {
		ck_assert_str_eq(ha->tables[i].name, hb->tables[i].name);
		ck_assert_uint_eq(ha->tables[i].rows, hb->tables[i].rows);
		ck_assert_uint_eq(ha->tables[i].payload_bytes, hb->tables[i].payload_bytes);
		ck_assert_uint_eq(ha->tables[i].loaded, hb->tables[i].loaded);
	}
	for (uint32_t i = 0; i < ha->nparams; i++) {
		ck_assert_str_eq(ha->params[i].key, hb->params[i].key);
		ck_assert_str_eq(ha->params[i].val, hb->params[i].val);
	}
	for (;;) {
		sa = dmr_trace_next(a, &ta, &err);
		ck_assert_msg(sa == DMR_OK || sa == DMR_EOF, "%s", err.msg);
		sb = dmr_trace_next(b, &tb, &err);
		ck_assert_msg(sb == DMR_OK || sb == DMR_EOF, "%s", err.msg);
		ck_assert_int_eq(sa, sb);
		if (sa == DMR_EOF)
			break;
		ck_assert_uint_eq(ta.id, tb.id);
		ck_assert_uint_eq(ta.type, tb.type);
		ck_assert_int_eq(ta.xv, tb.xv);
		ck_assert_uint_eq(ta.nops, tb.nops);
		ck_assert_uint_eq(ta.line, tb.line);
		for (uint32_t i = 0; i < ta.nops; i++)
			op_eq(&ta.ops[i], &tb.ops[i], ta.id, i, DMR_TRACE_MAX_ACTS);
		n++;
	}
	ck_assert_uint_eq(dmr_trace_rows(a) - ra, dmr_trace_rows(b) - rb); /* cumulative */
	return n;
}

static void cache_of(char *buf, size_t n, const char *csv)
{
	snprintf(buf, n, "%s.dmrc", csv);
}

START_TEST(same_transactions_from_csv_and_cache)
{
	const char *wl[] = {"tpcc", "smallbank"};
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	struct stat st1, st2;

	for (int w = 0; w < 2; w++) {
		snprintf(csv, 900, "%s/%s.csv", dmr_test_tmp, wl[w]);
		cache_of(cache, sizeof(cache), csv);
		gen(wl[w], "3", "3000", csv);
		ck_assert(!dmr_test_exists(cache));
		ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
		ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
		ck_assert(dmr_test_exists(cache));
		ck_assert_uint_eq(same_txns(a, b), 3000);
		/* rewind both: the same again */
		ck_assert_int_eq(dmr_trace_rewind(a, &err), DMR_OK);
		ck_assert_int_eq(dmr_trace_rewind(b, &err), DMR_OK);
		ck_assert_uint_eq(same_txns(a, b), 3000);
		dmr_trace_close(a);
		dmr_trace_close(b);
		/* second open: the cache is reused, not rebuilt */
		ck_assert_int_eq(stat(cache, &st1), 0);
		ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
		ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
		ck_assert_int_eq(stat(cache, &st2), 0);
		ck_assert_uint_eq(st1.st_ino, st2.st_ino);
		ck_assert_uint_eq(same_txns(a, b), 3000);
		dmr_trace_close(b);
		/* the cache file given directly to dmr_trace_open */
		ck_assert_int_eq(dmr_trace_rewind(a, &err), DMR_OK);
		ck_assert_msg(dmr_trace_open(cache, &b, &err) == DMR_OK, "%s", err.msg);
		ck_assert_uint_eq(same_txns(a, b), 3000);
		dmr_trace_close(a);
		dmr_trace_close(b);
	}
}
END_TEST

START_TEST(stale_cache_rebuilt)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	struct stat st1, st2;

	snprintf(csv, 900, "%s/stale.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("smallbank", "1", "2000", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st1), 0);
	/* a new CSV at the same path (another seed: other keys) */
	gen("smallbank", "2", "2000", csv);
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(stat(cache, &st2), 0);
	ck_assert_uint_ne(st1.st_ino, st2.st_ino); /* rebuilt (renamed over) */
	ck_assert_uint_eq(same_txns(a, b), 2000);
	dmr_trace_close(a);
	dmr_trace_close(b);
	/* same content, new mtime: also rebuilt */
	struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, csv, ts, 0), 0);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st1), 0);
	ck_assert_uint_ne(st1.st_ino, st2.st_ino);
}
END_TEST

static void expect_refused(const char *csv, const char *cache, const char *sub)
{
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *b = NULL;
	dmr_err_t err;
	struct stat st1, st2;

	ck_assert_int_eq(stat(cache, &st1), 0);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_ERR_PARSE);
	ck_assert_ptr_null(b);
	ck_assert_msg(strstr(err.msg, sub) && strstr(err.msg, cache) &&
			  strstr(err.msg, "--no-trace-cache"),
		      "message: %s", err.msg);
	/* left as it is (not silently replaced) */
	ck_assert_int_eq(stat(cache, &st2), 0);
	ck_assert_uint_eq(st1.st_ino, st2.st_ino);
	ck_assert_int_eq(st1.st_size, st2.st_size);
	/* the direct open refuses it too */
	ck_assert_int_eq(dmr_trace_open(cache, &b, &err), DMR_ERR_PARSE);
}

START_TEST(corrupt_or_truncated_cache_refused)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *b;
	dmr_err_t err;
	struct stat st;

	snprintf(csv, 900, "%s/bad.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("tpcc", "1", "1000", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st), 0);

	/* one byte flipped in the records */
	FILE *fp = fopen(cache, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fseek(fp, st.st_size / 2, SEEK_SET), 0);
	int c = fgetc(fp);
	ck_assert_int_eq(fseek(fp, st.st_size / 2, SEEK_SET), 0);
	fputc(c ^ 0x10, fp);
	fclose(fp);
	/* found when the reader reaches that slice (each slice is verified as
	 * it is first read, FORMAT.md "Binary cache"): a sticky parse error,
	 * after only intact transactions */
	{
		static dmr_trace_txn_t t;
		dmr_status_t rs;
		uint64_t n = 0;
		ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
		while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK)
			n++;
		ck_assert_int_eq(rs, DMR_ERR_PARSE);
		ck_assert_uint_lt(n, 1000);
		ck_assert_msg(strstr(err.msg, "corrupt: checksum mismatch") &&
				  strstr(err.msg, "--no-trace-cache"),
			      "%s", err.msg);
		ck_assert_int_eq(dmr_trace_next(b, &t, &err), DMR_ERR_PARSE); /* sticky */
		dmr_trace_close(b);
	}
	/* restored, then one byte of the head flipped */
	fp = fopen(cache, "r+b");
	fseek(fp, st.st_size / 2, SEEK_SET);
	fputc(c, fp);
	fseek(fp, 40, SEEK_SET);
	c = fgetc(fp);
	fseek(fp, 40, SEEK_SET);
	fputc(c ^ 1, fp);
	fclose(fp);
	expect_refused(csv, cache, "header checksum mismatch");
	fp = fopen(cache, "r+b");
	fseek(fp, 40, SEEK_SET);
	fputc(c, fp);
	fclose(fp);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK); /* intact again */
	dmr_trace_close(b);
	/* truncated */
	ck_assert_int_eq(truncate(cache, st.st_size - 100), 0);
	expect_refused(csv, cache, "truncated");
	ck_assert_int_eq(truncate(cache, 64), 0);
	expect_refused(csv, cache, "truncated");
	/* removed: rebuilt */
	ck_assert_int_eq(unlink(cache), 0);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
}
END_TEST

/* A stop request while the cache is compiled: DMR_ERR_INTERRUPTED ("nothing
 * run"), no cache and no half-built file left; it used to fall back to the
 * CSV and start a run that stopped at once (a 0-transaction partial run). */
START_TEST(interrupted_build_runs_nothing)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {.quiet = 1};
	dmr_trace_reader_t *r = NULL;
	dmr_err_t err;
	snprintf(csv, 900, "%s/sig.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("smallbank", "3", "20000", csv);
	dmr_sig_install(NULL);
	dmr_sig_raise_flag(SIGINT);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &r, &err), DMR_ERR_INTERRUPTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "interrupted while building its trace cache"));
	ck_assert_ptr_nonnull(strstr(err.msg, "nothing run"));
	ck_assert_ptr_null(r);
	ck_assert_int_eq(access(cache, F_OK), -1);
	dmr_sig_raise_flag(0);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &r, &err), DMR_OK);
	ck_assert_int_eq(access(cache, F_OK), 0);
	dmr_trace_close(r);
}
END_TEST

START_TEST(concurrent_builders_leave_one_valid_cache)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	pid_t kids[4];

	snprintf(csv, 900, "%s/race.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("tpcc", "5", "4000", csv);
	for (int k = 0; k < 4; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0) {
			dmr_err_t e2;
			dmr_trace_reader_t *r;
			/* half build directly, half through open_cached */
			if (k % 2)
				_exit(dmr_trace_cache_build(csv, cache, &e2) == DMR_OK ? 0 : 1);
			if (dmr_trace_open_cached(csv, &co, &r, &e2) != DMR_OK)
				_exit(2);
			dmr_trace_close(r);
			_exit(0);
		}
	}
	for (int k = 0; k < 4; k++) {
		int ws;
		ck_assert_int_eq(waitpid(kids[k], &ws, 0), kids[k]);
		ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child %d: status %d", k, ws);
	}
	/* no temporary left behind, and the cache reads as the CSV */
	char cmd[2200];
	snprintf(cmd, sizeof(cmd), "ls %s | grep -c tmp", dmr_test_tmp);
	FILE *p = popen(cmd, "r");
	int ntmp = -1;
	ck_assert_int_eq(fscanf(p, "%d", &ntmp), 1);
	pclose(p);
	ck_assert_int_eq(ntmp, 0);
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_msg(dmr_trace_open(cache, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(same_txns(a, b), 4000);
	dmr_trace_close(a);
	dmr_trace_close(b);
}
END_TEST

START_TEST(cache_dir_and_off)
{
	char csv[1024], dir[1100], path[4096];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;

	snprintf(csv, 900, "%s/dir.csv", dmr_test_tmp);
	snprintf(dir, sizeof(dir), "%s/cachedir", dmr_test_tmp);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	gen("smallbank", "4", "500", csv);
	co.dir = dir;
	ck_assert_int_eq(dmr_trace_cache_path(csv, dir, path, sizeof(path), &err), DMR_OK);
	ck_assert_ptr_nonnull(strstr(path, "/cachedir/dir.csv-"));
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert(dmr_test_exists(path));
	char beside[1100];
	snprintf(beside, sizeof(beside), "%s.dmrc", csv);
	ck_assert(!dmr_test_exists(beside)); /* nothing beside the CSV */
	ck_assert_uint_eq(same_txns(a, b), 500);
	dmr_trace_close(a);
	dmr_trace_close(b);
	/* the trace through a symlink: the same cache (named after the file,
	 * not the link; the link's name had given a second cache) */
	char link[1100], lpath[4096];
	snprintf(link, sizeof(link), "%s/link.csv", dmr_test_tmp);
	ck_assert_int_eq(symlink(csv, link), 0);
	ck_assert_int_eq(dmr_trace_cache_path(link, dir, lpath, sizeof(lpath), &err), DMR_OK);
	ck_assert_str_eq(lpath, path);
	snprintf(path, sizeof(path), "%s.dmrc", csv);
	/* off: the CSV itself, no cache made */
	co.dir = NULL;
	co.off = 1;
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert(!dmr_test_exists(path));
	/* a directory that does not exist: a clear error */
	co.off = 0;
	co.dir = "/nonexistent-dmr-cache-dir";
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dmr-cache-dir"));
}
END_TEST

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* A random value: small, at the 32-bit edges, or any 64 bits. */
static int64_t rnd_val(uint64_t *s)
{
	switch (rnd(s) % 5) {
	case 0:
		return (int64_t)(rnd(s) % 1000);
	case 1:
		return -(int64_t)(rnd(s) % 1000);
	case 2:
		return rnd(s) % 2 ? INT32_MAX + (int64_t)(rnd(s) % 3) - 1
				  : INT32_MIN + (int64_t)(rnd(s) % 3) - 1;
	default:
		return (int64_t)rnd(s);
	}
}

/* The v2 op record (trace_impl.h): every op the CSV reader can give is
 * stored compact, anything else whole (BIN_F_RAW), and both decode to the
 * same fields, unused actions zero (50,000 random ops). */
START_TEST(op_records_round_trip)
{
	static unsigned char buf[TRACE_BIN_OP_WORST + 64];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	uint64_t nraw = 0, ncompact = 0;

	for (int n = 0; n < 50000; n++) {
		dmr_trace_op_t o, d;
		int odd = rnd(&s) % 8 == 0; /* a value no CSV row gives */
		memset(&o, 0, sizeof(o));
		o.kind = "RUID"[rnd(&s) % 4];
		o.table = (uint8_t)(rnd(&s) % DMR_TRACE_MAX_TABLES);
		o.round = (uint16_t)rnd(&s);
		o.count = rnd(&s) % 3 ? 1 : (uint32_t)rnd(&s);
		o.key = rnd_val(&s);
		o.dep.op = -1;
		if (rnd(&s) % 2) {
			o.dep.op = (int16_t)(rnd(&s) % 255);
			o.dep.field = (uint16_t)rnd(&s);
		}
		if (rnd(&s) % 2) {
			o.lo = rnd_val(&s);
			o.hi = rnd_val(&s);
		}
		o.guard.op = -1;
		switch (rnd(&s) % 3) {
		case 1:
			o.guard.kind = DMR_TGUARD_PRESENT;
			o.guard.op = (int16_t)(rnd(&s) % 256);
			break;
		case 2:
			o.guard.kind = DMR_TGUARD_LESS;
			o.guard.op = (int16_t)(rnd(&s) % 256);
			o.guard.f = (uint16_t)rnd(&s);
			o.guard.f2 = (uint16_t)rnd(&s);
			break;
		}
		o.nacts = (uint8_t)(rnd(&s) % (DMR_TRACE_MAX_ACTS + 1));
		for (int a = 0; a < o.nacts; a++) {
			o.acts[a].kind = (uint8_t)(rnd(&s) % 2);
			o.acts[a].field = (uint16_t)rnd(&s);
			o.acts[a].val.op = -1;
			if (rnd(&s) % 2) {
				o.acts[a].val.op = (int16_t)(rnd(&s) % 255);
				o.acts[a].val.field = (uint16_t)rnd(&s);
			} else {
				o.acts[a].val.lit = rnd_val(&s);
			}
		}
		if (odd) {
			switch (rnd(&s) % 4) {
			case 0:
				o.dep.lit = 7; /* a dep with a literal */
				break;
			case 1:
				o.dep.op = 300;
				break;
			case 2:
				o.guard.f = 3; /* words on a guard that has none */
				break;
			default:
				o.acts[0].val.op = 1; /* a reference with a literal */
				o.acts[0].val.lit = 5;
				o.nacts = o.nacts ? o.nacts : 1;
				break;
			}
		}
		memset(buf, 0xA5, sizeof(buf));
		size_t len = trace_bin_put_op(buf, &o);
		ck_assert_uint_gt(len, TRACE_BIN_OP_HEAD);
		ck_assert_uint_le(len, TRACE_BIN_OP_WORST);
		if (buf[4] & BIN_F_RAW) {
			nraw++;
			ck_assert_msg(odd, "op %d: stored whole though compact", n);
		} else {
			ncompact++;
			ck_assert_uint_le(len, 90);
			ck_assert_msg(!odd || (o.guard.kind == DMR_TGUARD_LESS && o.guard.f == 3),
				      "op %d: an odd op stored compact", n);
		}
		memset(&d, 0x5A, sizeof(d));
		const unsigned char *e = trace_bin_get_op(buf, &d);
		ck_assert_ptr_eq(e, buf + len);
		ck_assert_uint_eq(trace_bin_op_len(buf), len); /* the read-ahead's walk */
		if (!op_same(&o, &d))
			op_eq(&o, &d, (uint64_t)n, 0, DMR_TRACE_MAX_ACTS); /* names the field */
	}
	ck_assert_uint_gt(nraw, 2500);
	ck_assert_uint_gt(ncompact, 37500);
	/* more actions than an op holds: refused */
	dmr_trace_op_t o;
	memset(&o, 0, sizeof(o));
	o.nacts = DMR_TRACE_MAX_ACTS + 1;
	ck_assert_uint_eq(trace_bin_put_op(buf, &o), 0);
	/* a record the walk refuses: too many actions, an unknown action mode,
	 * a whole op whose nacts disagrees with its head */
	memset(&o, 0, sizeof(o));
	o.kind = 'U';
	o.dep.op = o.guard.op = -1;
	o.nacts = 1;
	o.acts[0].val.op = -1;
	o.acts[0].val.lit = 5;
	size_t len = trace_bin_put_op(buf, &o);
	ck_assert(!(buf[4] & BIN_F_RAW));
	ck_assert_uint_eq(trace_bin_op_len(buf), len);
	buf[5] = DMR_TRACE_MAX_ACTS + 1;
	ck_assert_uint_eq(trace_bin_op_len(buf), 0);
	buf[5] = 1;
	buf[len - 8 + 1] = 7; /* the action's mode */
	ck_assert_uint_eq(trace_bin_op_len(buf), 0);
	o.dep.lit = 7; /* stored whole */
	len = trace_bin_put_op(buf, &o);
	ck_assert(buf[4] & BIN_F_RAW);
	ck_assert_uint_eq(trace_bin_op_len(buf), len);
	buf[5] = 2;
	ck_assert_uint_eq(trace_bin_op_len(buf), 0);
}
END_TEST

/* dmr_trace_next_rec + dmr_trace_rec_decode (the replay engine's queued
 * records) give what dmr_trace_next gives, field by field, mixed on one
 * reader; on a CSV reader the call is refused and consumes nothing; a
 * record cut short does not decode; a damaged slice stops it as it stops
 * dmr_trace_next. */
START_TEST(records_decode_as_next)
{
	static dmr_trace_txn_t ta, tb;
	static unsigned char copy[TRACE_BIN_TXN_MAX];
	const char *wl[] = {"tpcc", "smallbank"};
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_trace_rec_t rec;
	dmr_err_t err;

	for (int w = 0; w < 2; w++) {
		snprintf(csv, 900, "%s/rec-%s.csv", dmr_test_tmp, wl[w]);
		cache_of(cache, sizeof(cache), csv);
		gen(wl[w], "5", "2000", csv);
		ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
		ck_assert_int_eq(dmr_trace_is_bin(a), 0);
		ck_assert_int_eq(dmr_trace_next_rec(a, &rec, &err), DMR_ERR_UNSUPPORTED);
		ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
		ck_assert_int_eq(dmr_trace_is_bin(b), 1);
		uint64_t n = 0, rows = 0, cut = 0;
		for (;;) {
			dmr_status_t sa = dmr_trace_next(a, &ta, &err), sb;
			ck_assert_msg(sa == DMR_OK || sa == DMR_EOF, "%s", err.msg);
			if (n % 3 == 2) { /* every third one decoded by the reader */
				sb = dmr_trace_next(b, &tb, &err);
			} else {
				sb = dmr_trace_next_rec(b, &rec, &err);
				if (sb == DMR_OK) {
					ck_assert_uint_le(rec.len, sizeof(copy));
					ck_assert_uint_eq(rec.nops, ta.nops);
					ck_assert_uint_eq(rec.id, ta.id);
					/* copied to an odd address, as a queue chunk may */
					memcpy(copy + 1, rec.bytes, rec.len);
					memset(&tb, 0x5A, sizeof(tb));
					ck_assert_int_eq(
					    dmr_trace_rec_decode(copy + 1, rec.len, &tb), DMR_OK);
					if (rec.len > 40 && cut < 50) { /* cut short */
						cut++;
						ck_assert_int_eq(dmr_trace_rec_decode(
								     copy + 1, rec.len - 1, &tb),
								 DMR_ERR_PARSE);
						ck_assert_int_eq(
						    dmr_trace_rec_decode(copy + 1, rec.len, &tb),
						    DMR_OK);
					}
				}
			}
			ck_assert_int_eq(sa, sb);
			if (sa == DMR_EOF)
				break;
			ck_assert_uint_eq(ta.id, tb.id);
			ck_assert_uint_eq(ta.type, tb.type);
			ck_assert_int_eq(ta.xv, tb.xv);
			ck_assert_uint_eq(ta.nops, tb.nops);
			ck_assert_uint_eq(ta.line, tb.line);
			/* dmr_trace_rec_decode leaves the actions past nacts
			 * (tb was filled with 0x5A) */
			for (uint32_t i = 0; i < ta.nops; i++)
				op_eq(&ta.ops[i], &tb.ops[i], ta.id, i,
				      n % 3 == 2 ? DMR_TRACE_MAX_ACTS : ta.ops[i].nacts);
			rows += ta.nops;
			n++;
		}
		ck_assert_uint_eq(n, 2000);
		ck_assert_uint_eq(cut, 50);
		ck_assert_uint_eq(dmr_trace_rows(b), rows);
		ck_assert_int_eq(dmr_trace_next_rec(b, &rec, &err), DMR_EOF); /* again */
		dmr_trace_close(a);
		dmr_trace_close(b);
	}

	/* a damaged slice (of the TPC-C cache: past the header's) refused as
	 * dmr_trace_next refuses it, sticky */
	snprintf(csv, 900, "%s/rec-%s.csv", dmr_test_tmp, wl[0]);
	cache_of(cache, sizeof(cache), csv);
	struct stat st;
	ck_assert_int_eq(stat(cache, &st), 0);
	FILE *fp = fopen(cache, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fseek(fp, st.st_size / 2, SEEK_SET), 0);
	int c = fgetc(fp);
	ck_assert_int_eq(fseek(fp, st.st_size / 2, SEEK_SET), 0);
	fputc(c ^ 0x10, fp);
	fclose(fp);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_status_t rs;
	uint64_t n = 0;
	while ((rs = dmr_trace_next_rec(b, &rec, &err)) == DMR_OK)
		n++;
	ck_assert_int_eq(rs, DMR_ERR_PARSE);
	ck_assert_uint_lt(n, 2000);
	ck_assert_msg(strstr(err.msg, "corrupt: checksum mismatch"), "%s", err.msg);
	ck_assert_int_eq(dmr_trace_next_rec(b, &rec, &err), DMR_ERR_PARSE);
	dmr_trace_close(b);
}
END_TEST

/* Cache's head into *hd, changed by the caller, then written back with its
 * checksum recomputed (a head an older build wrote whole): open, then put. */
static FILE *head_open(const char *cache, trace_bin_head_t *hd)
{
	FILE *fp = fopen(cache, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fread(hd, 1, sizeof(*hd), fp), sizeof(*hd));
	return fp;
}

static void head_put(FILE *fp, trace_bin_head_t *hd)
{
	trace_sum_t sum;
	hd->head_sum = 0;
	trace_sum_init(&sum);
	trace_sum_add(&sum, hd, sizeof(*hd));
	hd->head_sum = trace_sum_final(&sum);
	ck_assert_int_eq(fseek(fp, 0, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(hd, 1, sizeof(*hd), fp), sizeof(*hd));
	fclose(fp);
}

/* A cache of another layout version (a v1 cache left by an older build,
 * its head intact) is stale: rebuilt, not refused; given directly it is
 * refused with the versions named. */
START_TEST(old_layout_rebuilt)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	struct stat st1, st2, sc;
	trace_bin_head_t hd;

	snprintf(csv, 900, "%s/old.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("tpcc", "2", "1500", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st1), 0);
	ck_assert_int_eq(stat(csv, &sc), 0);
	ck_assert_int_lt(st1.st_size, sc.st_size); /* v2: smaller than its CSV */
	FILE *fp = head_open(cache, &hd);
	ck_assert_uint_eq(hd.version, TRACE_BIN_VERSION);
	ck_assert_uint_eq(hd.file_bytes, (uint64_t)st1.st_size);
	hd.version = 1;
	head_put(fp, &hd);
	ck_assert_int_eq(dmr_trace_open(cache, &b, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "layout v1 (this build reads v2)"), "%s", err.msg);
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(stat(cache, &st2), 0);
	ck_assert_uint_ne(st1.st_ino, st2.st_ino); /* rebuilt (renamed over) */
	ck_assert_uint_eq(same_txns(a, b), 1500);
	dmr_trace_close(a);
	dmr_trace_close(b);
}
END_TEST

/* A cache built by an older reader (checks revision 0: before session 14's
 * refusals of same-round guards and of a record locked twice) is stale:
 * rebuilt through today's checks, so that a CSV they refuse cannot be
 * replayed from its old cache; given directly it is refused, naming the
 * revision. */
START_TEST(older_checks_rebuilt)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	struct stat st1, st2;
	trace_bin_head_t hd;

	snprintf(csv, 900, "%s/oldchecks.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("smallbank", "3", "1000", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st1), 0);
	FILE *fp = head_open(cache, &hd);
	ck_assert_uint_eq(hd.checks, TRACE_BIN_CHECKS);
	hd.checks = 0;
	head_put(fp, &hd);
	ck_assert_int_eq(dmr_trace_open(cache, &b, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "checks revision 0 (this build's is"), "%s", err.msg);
	co.nobuild = 1; /* stale: the CSV is read, the cache left */
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_is_bin(b), 0);
	dmr_trace_close(b);
	co.nobuild = 0;
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_msg(dmr_trace_open_cached(csv, &co, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(dmr_trace_is_bin(b), 1);
	ck_assert_int_eq(stat(cache, &st2), 0);
	ck_assert_uint_ne(st1.st_ino, st2.st_ino); /* rebuilt (renamed over) */
	ck_assert_uint_eq(same_txns(a, b), 1000);
	dmr_trace_close(a);
	dmr_trace_close(b);
}
END_TEST

/* nobuild (the check `run` makes before --out): a fresh cache is read (its
 * count known at open, no scan), an absent or stale one is not built (the
 * CSV is read), a corrupt one is refused. */
START_TEST(nobuild_reads_only_a_fresh_cache)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {.nobuild = 1}, build = {0};
	dmr_trace_reader_t *a, *b;
	dmr_err_t err;
	struct stat st1, st2;

	snprintf(csv, 900, "%s/nobuild.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("smallbank", "6", "800", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	ck_assert(!dmr_test_exists(cache));		       /* absent: not built */
	ck_assert_uint_eq(dmr_trace_file_txns(b), UINT64_MAX); /* the CSV: not scanned yet */
	ck_assert_int_eq(dmr_trace_scan(b, &err), DMR_OK);
	ck_assert_uint_eq(dmr_trace_file_txns(b), 800);
	dmr_trace_close(b);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &build, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st1), 0);
	ck_assert_int_eq(dmr_trace_open(csv, &a, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	ck_assert_uint_eq(dmr_trace_file_txns(b), 800); /* the cache: counted when built */
	ck_assert_uint_eq(same_txns(a, b), 800);
	dmr_trace_close(a);
	dmr_trace_close(b);
	/* stale (touched): the CSV is read, the cache left as it is */
	struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, csv, ts, 0), 0);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	ck_assert_uint_eq(dmr_trace_file_txns(b), UINT64_MAX);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st2), 0);
	ck_assert_uint_eq(st1.st_ino, st2.st_ino);
	/* rebuilt, then corrupt (its head): refused, as without nobuild */
	ck_assert_int_eq(dmr_trace_open_cached(csv, &build, &b, &err), DMR_OK);
	dmr_trace_close(b);
	FILE *fp = fopen(cache, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fseek(fp, 40, SEEK_SET), 0);
	int c = fgetc(fp);
	ck_assert_int_eq(fseek(fp, 40, SEEK_SET), 0);
	fputc(c ^ 1, fp);
	fclose(fp);
	b = NULL;
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_ERR_PARSE);
	ck_assert_ptr_null(b);
	ck_assert_msg(strstr(err.msg, "corrupt") && strstr(err.msg, "--no-trace-cache"), "%s",
		      err.msg);
}
END_TEST

/* The records are read with pread into a window of whole slices (not
 * mapped): a cache of several windows reads the same transactions after a
 * rewind, a byte flipped in its last slice is found there (after the
 * intact transactions before it), and a file cut short after it was opened
 * ends in "truncated", not in a read past the window. */
START_TEST(windowed_reads_rewind_and_truncation)
{
	char csv[1024], cache[1100];
	dmr_trace_cache_opts_t co = {0};
	dmr_trace_reader_t *b;
	dmr_err_t err;
	struct stat st;
	static dmr_trace_txn_t t;
	dmr_status_t rs;
	uint64_t n1 = 0, n2 = 0, sum1 = 0, sum2 = 0;

	snprintf(csv, 900, "%s/win.csv", dmr_test_tmp);
	cache_of(cache, sizeof(cache), csv);
	gen("tpcc", "3", "6000", csv);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	dmr_trace_close(b);
	ck_assert_int_eq(stat(cache, &st), 0);
	/* more than two windows of 2 x 256 KiB */
	ck_assert_int_gt(st.st_size, 5 * 256 * 1024);
	/* readable as the CSV is (0666 less the umask), not mkstemp's 0600 */
	mode_t um = umask(0);
	umask(um);
	ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~um);

	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK) {
		n1++;
		sum1 += t.id * 31 + t.nops + (uint64_t)t.ops[t.nops - 1].key;
	}
	ck_assert_int_eq(rs, DMR_EOF);
	ck_assert_uint_eq(n1, 6000);
	ck_assert_int_eq(dmr_trace_rewind(b, &err), DMR_OK);
	while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK) {
		n2++;
		sum2 += t.id * 31 + t.nops + (uint64_t)t.ops[t.nops - 1].key;
	}
	ck_assert_int_eq(rs, DMR_EOF);
	ck_assert_uint_eq(n2, n1);
	ck_assert_uint_eq(sum2, sum1);

	/* a byte of the last slice's records flipped (the slice table and
	 * the tail follow the records: 8 bytes per slice + 256) */
	trace_bin_head_t hd;
	FILE *fp = fopen(cache, "r+b");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fread(&hd, sizeof(hd), 1, fp), 1);
	long at = (long)hd.table_off - 40;
	ck_assert_int_eq(fseek(fp, at, SEEK_SET), 0);
	int c = fgetc(fp);
	ck_assert_int_eq(fseek(fp, at, SEEK_SET), 0);
	fputc(c ^ 0x40, fp);
	fclose(fp);
	n2 = 0;
	rs = dmr_trace_rewind(b, &err); /* the open reader reads it again */
	ck_assert_int_eq(rs, DMR_OK);
	while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK)
		n2++;
	ck_assert_int_eq(rs, DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "checksum mismatch"), "%s", err.msg);
	ck_assert_uint_gt(n2, 4000); /* every slice before the last one */
	ck_assert_uint_lt(n2, 6000);
	/* the message names the cache file, and the damaged range ends at the
	 * records' end, not a whole slice past it */
	ck_assert_msg(strstr(err.msg, cache) && strstr(err.msg, "remove it (it is rebuilt)"), "%s",
		      err.msg);
	{
		unsigned long long ra = 0, rb = 0;
		const char *m = strstr(err.msg, "in bytes ");
		ck_assert_ptr_nonnull(m);
		ck_assert_int_eq(sscanf(m, "in bytes %llu..%llu", &ra, &rb), 2);
		ck_assert_uint_le(ra, (unsigned long long)at);
		ck_assert_uint_gt(rb, (unsigned long long)at);
		ck_assert_uint_eq(rb, hd.table_off);
	}
	dmr_trace_close(b);
	/* the cache given as the trace: no CSV behind it to rebuild from */
	ck_assert_int_eq(dmr_trace_open(cache, &b, &err), DMR_OK);
	while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK)
		;
	ck_assert_int_eq(rs, DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "rebuild it by running the CSV") &&
			  !strstr(err.msg, "--no-trace-cache"),
		      "%s", err.msg);
	dmr_trace_close(b);

	/* restored, opened, then cut after its first slices */
	fp = fopen(cache, "r+b");
	ck_assert_int_eq(fseek(fp, at, SEEK_SET), 0);
	fputc(c, fp);
	fclose(fp);
	ck_assert_int_eq(dmr_trace_open_cached(csv, &co, &b, &err), DMR_OK);
	ck_assert_int_eq(truncate(cache, 3 * 256 * 1024), 0);
	n2 = 0;
	while ((rs = dmr_trace_next(b, &t, &err)) == DMR_OK)
		n2++;
	ck_assert_int_eq(rs, DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, "truncated at byte"), "%s", err.msg);
	ck_assert_uint_lt(n2, 6000);
	dmr_trace_close(b);
	ck_assert_int_eq(unlink(cache), 0);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("trace_cache", 0, 1) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("trace_cache");
	TCase *tc = tcase_create("cache");
	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, same_transactions_from_csv_and_cache);
	tcase_add_test(tc, stale_cache_rebuilt);
	tcase_add_test(tc, corrupt_or_truncated_cache_refused);
	tcase_add_test(tc, interrupted_build_runs_nothing);
	tcase_add_test(tc, concurrent_builders_leave_one_valid_cache);
	tcase_add_test(tc, cache_dir_and_off);
	tcase_add_test(tc, op_records_round_trip);
	tcase_add_test(tc, records_decode_as_next);
	tcase_add_test(tc, old_layout_rebuilt);
	tcase_add_test(tc, older_checks_rebuilt);
	tcase_add_test(tc, nobuild_reads_only_a_fresh_cache);
	tcase_add_test(tc, windowed_reads_rewind_and_truncation);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
