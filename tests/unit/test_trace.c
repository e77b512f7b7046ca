/*
 * tests/unit/test_trace.c - trace format reader/writer (traces/trace.h,
 * traces/FORMAT.md) and regime parsing (traces/workload.h).
 *
 * Every bad input must give DMR_ERR_PARSE with "FILE:LINE: field NAME" in
 * the message; files live in a mkdtemp directory removed at the end.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/suite.h"
#include "traces/trace.h"
#include "traces/workload.h"

static int file_seq;

/* A fresh path in dmr_test_tmp (not created). */
static const char *tmp_path(char *buf, size_t n, const char *stem)
{
	snprintf(buf, n, "%s/%s-%d-%d.csv", dmr_test_tmp, stem, (int)getpid(), file_seq++);
	return buf;
}

/* ---- header / transactions used by the round trip --------------------- */

static void make_hdr(dmr_trace_hdr_t *h, uint64_t txns)
{
	memset(h, 0, sizeof(*h));
	strcpy(h->workload, "test");
	strcpy(h->regime, "hot:2/0.9");
	h->txns = txns;
	h->ntables = 3;
	strcpy(h->tables[0].name, "acct");
	h->tables[0].rows = 100;
	h->tables[0].payload_bytes = 16;
	h->tables[0].loaded = 50;
	strcpy(h->tables[1].name, "hist");
	h->tables[1].rows = 1000;
	h->tables[1].payload_bytes = 32;
	h->tables[1].loaded = 0;
	strcpy(h->tables[2].name, "item");
	h->tables[2].rows = 10;
	h->tables[2].payload_bytes = 8;
	h->tables[2].loaded = 10;
	h->ntypes = 2;
	strcpy(h->types[0], "pay");
	strcpy(h->types[1], "scan");
	ck_assert_int_eq(dmr_trace_hdr_set(h, "seed", "42"), DMR_OK);
	ck_assert_int_eq(dmr_trace_hdr_set(h, "note", "two words, comma"), DMR_OK);
}

/* txn 7 (pay): every feature. */
static void make_txn_a(dmr_trace_txn_t *t)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->id = 7;
	t->type = 0;
	t->xv = -123456789012LL;
	/* op 0: R acct 5, range of 3 records */
	i = dmr_trace_txn_op(t, 'R', 0, 0, 5);
	ck_assert_int_eq(i, 0);
	t->ops[0].count = 3;
	/* op 1: U acct 9: guard on its own image word0 < word1, two actions */
	i = dmr_trace_txn_op(t, 'U', 0, 0, 9);
	ck_assert_int_eq(i, 1);
	t->ops[1].guard.kind = DMR_TGUARD_LESS;
	t->ops[1].guard.op = 1;
	t->ops[1].guard.f = 0;
	t->ops[1].guard.f2 = 1;
	dmr_trace_op_act(&t->ops[1], DMR_TACT_ADD, 1, INT64_MIN);
	dmr_trace_op_act_ref(&t->ops[1], DMR_TACT_SET, 0, 0, 1);
	/* op 2: I hist at key -10 + word 1 of op 0, value in [10, 20) */
	i = dmr_trace_txn_op(t, 'I', 1, 1, -10);
	ck_assert_int_eq(i, 2);
	t->ops[2].dep.op = 0;
	t->ops[2].dep.field = 1;
	t->ops[2].lo = 10;
	t->ops[2].hi = 20;
	t->ops[2].guard.kind = DMR_TGUARD_PRESENT;
	t->ops[2].guard.op = 1;
	dmr_trace_op_act(&t->ops[2], DMR_TACT_SET, 3, INT64_MAX);
	dmr_trace_op_act(&t->ops[2], DMR_TACT_SET, 2, 0);
	dmr_trace_op_act(&t->ops[2], DMR_TACT_ADD, 1, -1);
	dmr_trace_op_act_ref(&t->ops[2], DMR_TACT_ADD, 0, 1, 0);
	/* op 3: D item 9, guard on itself being present; dep without range */
	i = dmr_trace_txn_op(t, 'D', 2, 2, 0);
	ck_assert_int_eq(i, 3);
	t->ops[3].dep.op = 2;
	t->ops[3].dep.field = 3;
	t->ops[3].guard.kind = DMR_TGUARD_PRESENT;
	t->ops[3].guard.op = 3;
	/* op 4: R item 9 in the same round */
	i = dmr_trace_txn_op(t, 'R', 2, 2, 9);
	ck_assert_int_eq(i, 4);
}

/* txn 1000000 (scan): one R of the whole item table, xv 0. */
static void make_txn_b(dmr_trace_txn_t *t)
{
	memset(t, 0, sizeof(*t));
	t->id = 1000000;
	t->type = 1;
	ck_assert_int_eq(dmr_trace_txn_op(t, 'R', 2, 0, 0), 0);
	t->ops[0].count = 10;
}

static void assert_op_eq(const dmr_trace_op_t *a, const dmr_trace_op_t *b, int i)
{
	ck_assert_msg(a->kind == b->kind, "op %d kind", i);
	ck_assert_uint_eq(a->table, b->table);
	ck_assert_uint_eq(a->round, b->round);
	ck_assert_uint_eq(a->count, b->count);
	ck_assert_int_eq(a->key, b->key);
	ck_assert_int_eq(a->dep.op, b->dep.op);
	if (a->dep.op >= 0)
		ck_assert_uint_eq(a->dep.field, b->dep.field);
	ck_assert_int_eq(a->lo, b->lo);
	ck_assert_int_eq(a->hi, b->hi);
	ck_assert_uint_eq(a->guard.kind, b->guard.kind);
	if (a->guard.kind != DMR_TGUARD_NONE)
		ck_assert_int_eq(a->guard.op, b->guard.op);
	if (a->guard.kind == DMR_TGUARD_LESS) {
		ck_assert_uint_eq(a->guard.f, b->guard.f);
		ck_assert_uint_eq(a->guard.f2, b->guard.f2);
	}
	ck_assert_uint_eq(a->nacts, b->nacts);
	for (int k = 0; k < a->nacts; k++) {
		ck_assert_uint_eq(a->acts[k].kind, b->acts[k].kind);
		ck_assert_uint_eq(a->acts[k].field, b->acts[k].field);
		ck_assert_int_eq(a->acts[k].val.op, b->acts[k].val.op);
		if (a->acts[k].val.op >= 0)
			ck_assert_uint_eq(a->acts[k].val.field, b->acts[k].val.field);
		else
			ck_assert_int_eq(a->acts[k].val.lit, b->acts[k].val.lit);
	}
}

static void assert_txn_eq(const dmr_trace_txn_t *a, const dmr_trace_txn_t *b)
{
	ck_assert_uint_eq(a->id, b->id);
	ck_assert_uint_eq(a->type, b->type);
	ck_assert_int_eq(a->xv, b->xv);
	ck_assert_uint_eq(a->nops, b->nops);
	for (uint32_t i = 0; i < a->nops; i++)
		assert_op_eq(&a->ops[i], &b->ops[i], (int)i);
}

START_TEST(test_roundtrip)
{
	static dmr_trace_txn_t a, b, got;
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w;
	dmr_trace_reader_t *r;
	const dmr_trace_hdr_t *rh;
	dmr_err_t err = {{0}};
	char path[1024], tmp[1100];
	char *text;

	tmp_path(path, sizeof(path), "rt");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	make_hdr(&h, 2);
	make_txn_a(&a);
	make_txn_b(&b);

	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	ck_assert(dmr_test_exists(tmp));
	ck_assert(!dmr_test_exists(path));
	ck_assert_msg(dmr_trace_write(w, &a, &err) == DMR_OK, "%s", err.msg);
	ck_assert_msg(dmr_trace_write(w, &b, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(dmr_trace_finish(w, &err), DMR_OK);
	ck_assert(dmr_test_exists(path));
	ck_assert(!dmr_test_exists(tmp));

	/* the exact text (format lock) */
	text = dmr_test_read_text(path);
	ck_assert_str_eq(text,
			 "# dmreplay-trace v1\n"
			 "# workload test\n"
			 "# regime hot:2/0.9\n"
			 "# txns 2\n"
			 "# table acct 100 16 50\n"
			 "# table hist 1000 32 0\n"
			 "# table item 10 8 10\n"
			 "# type pay\n"
			 "# type scan\n"
			 "# param seed 42\n"
			 "# param note two words, comma\n"
			 "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n"
			 "7,pay,0,R,acct,5,,,,3,,,-123456789012\n"
			 "7,pay,0,U,acct,9,,,,,1.0<1.1,add:1:-9223372036854775808;set:0:@0.1,\n"
			 "7,pay,1,I,hist,-10,0.1,10,20,,1,set:3:9223372036854775807;set:2:0;"
			 "add:1:-1;add:0:@1.0,\n"
			 "7,pay,2,D,item,0,2.3,,,,3,,\n"
			 "7,pay,2,R,item,9,,,,,,,\n"
			 "1000000,scan,0,R,item,0,,,,10,,,\n");
	free(text);

	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	rh = dmr_trace_header(r);
	ck_assert_int_eq(rh->version, 1);
	ck_assert_str_eq(rh->workload, "test");
	ck_assert_str_eq(rh->regime, "hot:2/0.9");
	ck_assert_uint_eq(rh->txns, 2);
	ck_assert_uint_eq(rh->ntables, 3);
	ck_assert_str_eq(rh->tables[1].name, "hist");
	ck_assert_uint_eq(rh->tables[1].rows, 1000);
	ck_assert_uint_eq(rh->tables[1].payload_bytes, 32);
	ck_assert_uint_eq(rh->tables[0].loaded, 50);
	ck_assert_uint_eq(rh->ntypes, 2);
	ck_assert_str_eq(rh->types[1], "scan");
	ck_assert_uint_eq(rh->nparams, 2);
	ck_assert_str_eq(dmr_trace_hdr_param(rh, "seed"), "42");
	ck_assert_str_eq(dmr_trace_hdr_param(rh, "note"), "two words, comma");
	ck_assert_ptr_null(dmr_trace_hdr_param(rh, "nope"));
	ck_assert_int_eq(dmr_trace_hdr_table(rh, "item"), 2);
	ck_assert_int_eq(dmr_trace_hdr_type(rh, "scan"), 1);
	ck_assert_int_eq(dmr_trace_hdr_type(rh, "sca"), -1);

	for (int pass = 0; pass < 2; pass++) {
		ck_assert_msg(dmr_trace_next(r, &got, &err) == DMR_OK, "%s", err.msg);
		assert_txn_eq(&got, &a);
		ck_assert_uint_eq(got.line, 13);
		ck_assert_msg(dmr_trace_next(r, &got, &err) == DMR_OK, "%s", err.msg);
		assert_txn_eq(&got, &b);
		ck_assert_uint_eq(got.line, 18);
		ck_assert_int_eq(dmr_trace_next(r, &got, &err), DMR_EOF);
		ck_assert_int_eq(dmr_trace_next(r, &got, &err), DMR_EOF);
		ck_assert_uint_eq(dmr_trace_rows(r), 6u * (unsigned)(pass + 1));
		ck_assert_int_eq(dmr_trace_rewind(r, &err), DMR_OK);
	}
	dmr_trace_close(r);
}
END_TEST

/* The longest "ID,TYPE," prefix: a 20-digit id and a 31-character type
 * name (the writer's prefix buffer was 24 bytes: TATP's
 * UpdateSubscriberData overflowed it, found by ASan). */
START_TEST(test_roundtrip_long_type_name)
{
	static dmr_trace_txn_t a, got;
	static const char name[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcde";
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w;
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	char path[1024], want[200];
	char *text;

	ck_assert_uint_eq(strlen(name), DMR_TRACE_NAME_MAX - 1);
	tmp_path(path, sizeof(path), "longtype");
	make_hdr(&h, 1);
	strcpy(h.types[1], name);
	memset(&a, 0, sizeof(a));
	a.id = UINT64_MAX - 1;
	a.type = 1;
	ck_assert_int_eq(dmr_trace_txn_op(&a, 'R', 0, 0, 5), 0);
	ck_assert_int_eq(dmr_trace_txn_op(&a, 'U', 0, 1, 6), 1);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	ck_assert_msg(dmr_trace_write(w, &a, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(dmr_trace_finish(w, &err), DMR_OK);
	text = dmr_test_read_text(path);
	snprintf(want, sizeof(want),
		 "18446744073709551614,%s,0,R,acct,5,,,,,,,\n"
		 "18446744073709551614,%s,1,U,acct,6,,,,,,,\n",
		 name, name);
	ck_assert_msg(strstr(text, want) != NULL, "%s", text);
	free(text);
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	ck_assert_msg(dmr_trace_next(r, &got, &err) == DMR_OK, "%s", err.msg);
	assert_txn_eq(&got, &a);
	dmr_trace_close(r);
}
END_TEST

/* Many transactions across several read chunks, ids with gaps. */
START_TEST(test_roundtrip_many)
{
	static dmr_trace_txn_t t, got;
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w;
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	char path[1024];
	const uint64_t n = 20000;
	uint64_t rows = 0;

	tmp_path(path, sizeof(path), "many");
	make_hdr(&h, n);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	for (uint64_t i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		t.id = 3 * i + 1;
		t.type = (uint16_t)(i % 2);
		t.xv = (int64_t)i - 5;
		for (uint64_t k = 0; k <= i % 7; k++) {
			int o = dmr_trace_txn_op(&t, k % 2 ? 'U' : 'R', 0, (int)k,
						 (int64_t)((i + k) % 100));
			ck_assert_int_ge(o, 0);
			if (k % 2)
				dmr_trace_op_act(&t.ops[o], DMR_TACT_ADD, 1, (int64_t)i);
		}
		rows += t.nops;
		ck_assert_msg(dmr_trace_write(w, &t, &err) == DMR_OK, "%s", err.msg);
	}
	ck_assert_int_eq(dmr_trace_finish(w, &err), DMR_OK);

	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	for (uint64_t i = 0; i < n; i++) {
		ck_assert_msg(dmr_trace_next(r, &got, &err) == DMR_OK, "%s", err.msg);
		ck_assert_uint_eq(got.id, 3 * i + 1);
		ck_assert_uint_eq(got.type, i % 2);
		ck_assert_int_eq(got.xv, (int64_t)i - 5);
		ck_assert_uint_eq(got.nops, i % 7 + 1);
		ck_assert_int_eq(got.ops[got.nops - 1].key, (int64_t)((i + got.nops - 1) % 100));
		if (got.nops > 1) {
			ck_assert_uint_eq(got.ops[1].nacts, 1);
			ck_assert_int_eq(got.ops[1].acts[0].val.lit, (int64_t)i);
		}
	}
	ck_assert_int_eq(dmr_trace_next(r, &got, &err), DMR_EOF);
	ck_assert_uint_eq(dmr_trace_rows(r), rows);
	/* rewind after crossing many read chunks: back to the first txn */
	ck_assert_int_eq(dmr_trace_rewind(r, &err), DMR_OK);
	ck_assert_msg(dmr_trace_next(r, &got, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(got.id, 1);
	ck_assert_uint_eq(got.line, 13);
	ck_assert_uint_eq(got.nops, 1);
	ck_assert_uint_eq(dmr_trace_rows(r), rows + 1);
	dmr_trace_close(r);
}
END_TEST

/* ---- bad data rows ---------------------------------------------------- */

static const char base_hdr[] = "# dmreplay-trace v1\n"					     /* 1 */
			       "# workload test\n"					     /* 2 */
			       "# regime uniform\n"					     /* 3 */
			       "# txns 0\n"						     /* 4 */
			       "# table acct 100 16 50\n"				     /* 5 */
			       "# table hist 1000 32 0\n"				     /* 6 */
			       "# type pay\n"						     /* 7 */
			       "# type scan\n"						     /* 8 */
			       "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n"; /* 9 */

#define GOOD0 "1,pay,0,R,acct,1,,,,,,,\n" /* line 10: a good first row */

typedef struct bad_case {
	const char *name;
	const char *rows; /* after base_hdr (data start at line 10) */
	int line;
	const char *field; /* "field X" expected in the message, or NULL */
	const char *text;  /* another expected substring, or NULL */
} bad_case_t;

static const bad_case_t bad_rows[] = {
    {"field count", GOOD0 "1,pay,0,R,acct,5,,,,,,\n", 11, NULL, "expected 13 fields"},
    {"field count high", GOOD0 "1,pay,0,R,acct,5,,,,,,,,\n", 11, NULL, "got 14"},
    {"unknown op", GOOD0 "1,pay,0,X,acct,5,,,,,,,\n", 11, "op", "unknown op 'X'"},
    {"unknown op long", "1,pay,0,RU,acct,5,,,,,,,\n", 10, "op", "unknown op"},
    {"unknown table", GOOD0 "1,pay,0,R,nosuch,5,,,,,,,\n", 11, "table", "unknown table 'nosuch'"},
    {"unknown type", GOOD0 "2,payx,0,R,acct,5,,,,,,,\n", 11, "type", "unknown type 'payx'"},
    {"bad integer", GOOD0 "1,pay,0,R,acct,12x,,,,,,,\n", 11, "key", "bad integer '12x'"},
    {"empty integer", GOOD0 "1,pay,0,R,acct,,,,,,,,\n", 11, "key", "bad integer"},
    {"plus sign", GOOD0 "1,pay,0,R,acct,+5,,,,,,,\n", 11, "key", "bad integer"},
    {"overflow", GOOD0 "1,pay,0,R,acct,9223372036854775808,,,,,,,\n", 11, "key", "out of range"},
    {"txn garbage", "abc,pay,0,R,acct,5,,,,,,,\n", 10, "txn", "bad integer"},
    {"txn overflow", "18446744073709551616,pay,0,R,acct,5,,,,,,,\n", 10, "txn", "out of range"},
    {"round negative", "1,pay,-1,R,acct,5,,,,,,,\n", 10, "round", "bad integer"},
    {"round too big", "1,pay,65536,R,acct,5,,,,,,,\n", 10, "round", "out of range"},
    {"xv garbage", "1,pay,0,R,acct,5,,,,,,,1e3\n", 10, "xv", "bad integer"},
    {"key negative", GOOD0 "1,pay,0,R,acct,-1,,,,,,,\n", 11, "key", "negative"},
    {"key too big", GOOD0 "1,pay,0,R,acct,100,,,,,,,\n", 11, "key", "beyond table 'acct'"},
    {"key+count too big", GOOD0 "1,pay,0,R,acct,98,,,,3,,,\n", 11, "count", "beyond table"},
    {"count zero", GOOD0 "1,pay,0,R,acct,5,,,,0,,,\n", 11, "count", ">= 1"},
    {"count on U", GOOD0 "1,pay,0,U,acct,5,,,,2,,,\n", 11, "count", "only R"},
    {"dep lo below 0", GOOD0 "1,pay,1,R,hist,-5,0.0,0,10,,,,\n", 11, "lo", "below 0"},
    {"dep hi beyond", GOOD0 "1,pay,1,R,hist,995,0.0,0,10,,,,\n", 11, "hi", "beyond table 'hist'"},
    {"dep hi beyond with count", GOOD0 "1,pay,1,R,hist,990,0.0,0,10,2,,,\n", 11, "hi", "beyond"},
    {"dep word beyond", GOOD0 "1,pay,1,R,hist,0,0.2,,,,,,\n", 11, "dep", "word 2 beyond"},
    {"dep same round", GOOD0 "1,pay,0,R,hist,0,0.0,,,,,,\n", 11, "dep", "not in a round before"},
    {"dep later op", GOOD0 "1,pay,1,R,hist,0,5.0,,,,,,\n", 11, "dep", "not an earlier op"},
    {"dep self", "1,pay,1,R,hist,0,0.0,,,,,,\n", 10, "dep", "not an earlier op"},
    {"dep syntax", GOOD0 "1,pay,1,R,hist,0,0x1,,,,,,\n", 11, "dep", "expected K.F"},
    {"lo without hi", GOOD0 "1,pay,1,R,hist,0,0.0,1,,,,,\n", 11, "hi", "together"},
    {"range without dep", GOOD0 "1,pay,1,R,hist,0,,1,5,,,,\n", 11, "lo", "without dep"},
    {"lo >= hi", GOOD0 "1,pay,1,R,hist,0,0.0,5,5,,,,\n", 11, "hi", "empty"},
    {"guard later op", GOOD0 "1,pay,0,R,acct,2,,,,,2,,\n", 11, "guard", "not an earlier op"},
    {"guard self on R", GOOD0 "1,pay,0,R,acct,2,,,,,1,,\n", 11, "guard", "not an earlier op"},
    {"guard self on I", GOOD0 "1,pay,0,I,acct,60,,,,,1,,\n", 11, "guard", "not an earlier op"},
    {"guard word beyond", GOOD0 "1,pay,1,U,acct,2,,,,,0.1<0.3,,\n", 11, "guard", "word 3 beyond"},
    /* session 14: a guard on another op of the same round was evaluated
     * before that op's read image arrived (stale bytes): refused as dep */
    {"guard same round", GOOD0 "1,pay,0,R,acct,2,,,,,0,,\n", 11, "guard",
     "op 0 is in round 0, not in a round before this op's round 0"},
    {"guard less same round", GOOD0 "1,pay,0,R,acct,2,,,,,0.0<0.1,,\n", 11, "guard",
     "op 0 is in round 0, not in a round before this op's round 0"},
    {"guard same round on U", GOOD0 "1,pay,0,U,acct,2,,,,,0.0<0.1,,\n", 11, "guard",
     "op 0 is in round 0, not in a round before this op's round 0 (a U/D op may also "
     "guard on itself)"},
    {"guard same later round",
     GOOD0 "1,pay,1,R,acct,2,,,,,,,\n1,pay,1,D,acct,3,,,,,1,,\n1,pay,2,R,acct,4,,,,,,,\n", 12,
     "guard", "op 1 is in round 1, not in a round before this op's round 1"},
    /* session 14: two lock-taking ops on one record (literal keys) were
     * met only mid-run ("locks a record it already locked") */
    {"lock twice U U", GOOD0 "1,pay,0,U,acct,5,,,,,,,\n1,pay,1,U,acct,5,,,,,,,\n", 12, "key",
     "table 'acct' key 5 is locked by op 1 (U, line 11) too: a transaction takes one lock per "
     "record"},
    {"lock twice I D",
     "1,pay,0,I,acct,60,,,,,,,\n1,pay,0,R,acct,60,,,,,,,\n1,pay,2,D,acct,60,,,,,,,\n", 12, "key",
     "table 'acct' key 60 is locked by op 0 (I, line 10) too"},
    {"lock twice second txn",
     GOOD0 "2,pay,0,U,hist,7,,,,,,,\n2,pay,0,U,acct,7,,,,,,,\n2,pay,1,D,hist,7,,,,,,,\n", 13, "key",
     "table 'hist' key 7 is locked by op 0 (U, line 11) too"},
    /* a guard on itself does not skip the lock: refused like no guard */
    {"lock twice self-guarded", "1,pay,0,U,acct,5,,,,,0.0<0.1,,\n1,pay,1,U,acct,5,,,,,1.0<1.1,,\n",
     11, "key", "table 'acct' key 5 is locked by op 0 (U, line 10) too"},
    {"guard two ops", GOOD0 "1,pay,0,U,acct,2,,,,,0.0<1.1,,\n", 11, "guard", "two ops"},
    {"guard syntax", GOOD0 "1,pay,0,U,acct,2,,,,,x,,\n", 11, "guard", "expected K or K.F<K.G"},
    {"act word beyond", GOOD0 "1,pay,0,U,acct,2,,,,,,set:2:5,\n", 11, "act", "word 2 beyond"},
    {"act ref later op", GOOD0 "1,pay,0,U,acct,2,,,,,,set:0:@3.0,\n", 11, "act",
     "not an earlier op"},
    {"act ref self", GOOD0 "1,pay,0,U,acct,2,,,,,,set:0:@1.0,\n", 11, "act", "not an earlier op"},
    {"act ref word beyond", GOOD0 "1,pay,0,U,hist,2,,,,,,set:0:@0.2,\n", 11, "act",
     "word 2 beyond"},
    {"act on R", GOOD0 "1,pay,0,R,acct,2,,,,,,set:0:1,\n", 11, "act", "only U and I"},
    {"act on D", GOOD0 "1,pay,0,D,acct,2,,,,,,add:0:1,\n", 11, "act", "only U and I"},
    {"act syntax", GOOD0 "1,pay,0,U,acct,2,,,,,,mul:0:1,\n", 11, "act", "set:F:V"},
    {"act empty element", GOOD0 "1,pay,0,U,acct,2,,,,,,set:0:1;,\n", 11, "act", "action 2"},
    {"act bad value", GOOD0 "1,pay,0,U,acct,2,,,,,,set:0:1z,\n", 11, "act", "bad value"},
    {"act too many", GOOD0 "1,pay,0,U,acct,2,,,,,,set:0:1;set:0:1;set:0:1;set:0:1;set:0:1,\n", 11,
     "act", "more than 4"},
    {"round decreasing", "1,pay,1,R,acct,1,,,,,,,\n1,pay,0,R,acct,1,,,,,,,\n", 11, "round",
     "must not decrease"},
    {"txn decreasing", "2,pay,0,R,acct,1,,,,,,,\n1,pay,0,R,acct,1,,,,,,,\n", 11, "txn",
     "ids must increase"},
    {"txn not contiguous",
     "1,pay,0,R,acct,1,,,,,,,\n2,pay,0,R,acct,1,,,,,,,\n"
     "1,pay,0,R,acct,1,,,,,,,\n",
     12, "txn", "ids must increase"},
    {"type changes", GOOD0 "1,scan,0,R,acct,1,,,,,,,\n", 11, "type", "differs"},
    {"xv on later row", GOOD0 "1,pay,0,R,acct,1,,,,,,,0\n", 11, "xv", "later row"},
    {"bad quoting", GOOD0 "1,pay,0,R,acct,5,,,,,,,x\"y\n", 11, "xv", "malformed CSV"},
    {"empty line", GOOD0 "\n1,pay,0,R,acct,1,,,,,,,\n", 11, NULL, "empty line"},
    {"stray CR", GOOD0 "1,pay,0,R,acct,1\r,,,,,,,\n", 11, NULL, NULL},
    {"quoted newline", GOOD0 "1,\"pa\ny\",0,R,acct,1,,,,,,,\n", 11, NULL, "no complete row"},
    {"truncated line", GOOD0 "1,pay,0,R,acct,1,,,,,,,", 11, NULL, "truncated"},
};

static void expect_error(const char *text, int line, const char *field, const char *sub,
			 const char *what)
{
	static dmr_trace_txn_t t;
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	char path[1024], want[1100];
	dmr_status_t st;
	int n = 0;

	tmp_path(path, sizeof(path), "bad");
	dmr_test_write_file(path, text);
	st = dmr_trace_open(path, &r, &err);
	if (st == DMR_OK) {
		while ((st = dmr_trace_next(r, &t, &err)) == DMR_OK)
			ck_assert_int_lt(++n, 1000);
		/* the error is sticky */
		ck_assert_int_eq(dmr_trace_next(r, &t, &err), st);
		dmr_trace_close(r);
	}
	ck_assert_msg(st == DMR_ERR_PARSE, "%s: status %d (%s), msg '%s'", what, st,
		      dmr_status_string(st), err.msg);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strstr(err.msg, want) != NULL, "%s: want '%s' in '%s'", what, want, err.msg);
	if (field) {
		snprintf(want, sizeof(want), ": field %s: ", field);
		ck_assert_msg(strstr(err.msg, want) != NULL, "%s: want '%s' in '%s'", what, want,
			      err.msg);
	}
	if (sub)
		ck_assert_msg(strstr(err.msg, sub) != NULL, "%s: want '%s' in '%s'", what, sub,
			      err.msg);
}

START_TEST(test_bad_rows)
{
	const bad_case_t *c = &bad_rows[_i];
	char text[4096];

	snprintf(text, sizeof(text), "%s%s", base_hdr, c->rows);
	expect_error(text, c->line, c->field, c->text, c->name);
}
END_TEST

/* The neighbours of the refused guards and locks (session 14), accepted:
 * guards on an earlier round, U/D guards on themselves beside other ops of
 * their round, the same key locked twice through a dep (the run-time check
 * keeps those), different keys or tables, R beside U on one record, one
 * record locked by two transactions; and the writer refuses what the
 * reader refuses; two U ops of one record under guards on another op
 * (a conditional update) are accepted. */
START_TEST(test_guard_lock_neighbours)
{
	static dmr_trace_txn_t t;
	static const char rows[] =
	    /* txn 1: guards on round 0 from round 1 (present, less); a U and
	     * a D guarding on themselves beside other ops of their round */
	    "1,pay,0,R,acct,1,,,,,,,\n"	       /* 10: op 0 */
	    "1,pay,0,U,acct,2,,,,,1.0<1.1,,\n" /* 11: op 1, on itself */
	    "1,pay,1,R,acct,3,,,,,0,,\n"       /* 12: op 2, on op 0 */
	    "1,pay,1,U,acct,4,,,,,0.0<0.1,,\n" /* 13: op 3, on op 0 */
	    "1,pay,1,D,acct,5,,,,,4,,\n"       /* 14: op 4, on itself */
	    /* txn 2: acct 5 locked twice, the second through a dep (known
	     * at run time only); U on different keys and tables; R and U
	     * on one record; acct 5 again in another txn */
	    "2,pay,0,U,acct,5,,,,,,,\n"
	    "2,pay,0,R,acct,6,,,,,,,\n"
	    "2,pay,0,U,hist,5,,,,,,,\n"
	    "2,pay,1,U,acct,0,1.0,,,,,,\n"
	    "2,pay,1,U,acct,6,,,,,,,\n"
	    "2,pay,2,U,acct,5,2.0,0,10,,,,\n"
	    "3,pay,0,U,acct,5,,,,,,,\n"
	    /* txn 4: a conditional update, acct 8 by one of two U ops
	     * under exclusive guards on op 0 (the run-time check meets
	     * them only if both run) */
	    "4,pay,0,R,acct,7,,,,,,,\n"
	    "4,pay,1,U,acct,8,,,,,0.0<0.1,,\n"
	    "4,pay,1,U,acct,8,,,,,0.1<0.0,,\n";
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	char path[1024], text[4096];
	dmr_status_t st;
	int n = 0;

	tmp_path(path, sizeof(path), "neighbours");
	snprintf(text, sizeof(text), "%s%s", base_hdr, rows);
	dmr_test_write_file(path, text);
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	while ((st = dmr_trace_next(r, &t, &err)) == DMR_OK)
		n++;
	ck_assert_msg(st == DMR_EOF, "%s", err.msg);
	ck_assert_int_eq(n, 4);
	dmr_trace_close(r);

	/* the writer: the same checks (no line numbers) */
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w;
	tmp_path(path, sizeof(path), "neighbours-w");
	make_hdr(&h, 0);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	memset(&t, 0, sizeof(t));
	t.id = 1;
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', 0, 0, 1), 0);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'U', 0, 0, 2), 1);
	t.ops[1].guard.kind = DMR_TGUARD_PRESENT;
	t.ops[1].guard.op = 0;
	ck_assert_int_eq(dmr_trace_write(w, &t, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "txn 1 op 1: field guard: op 0 is in round 0, not in a round "
				      "before this op's round 0"),
		      "%s", err.msg);
	t.ops[1].round = 1; /* on an earlier round */
	ck_assert_int_eq(dmr_trace_write(w, &t, &err), DMR_OK);
	memset(&t, 0, sizeof(t));
	t.id = 2;
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'D', 1, 0, 9), 0);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'U', 1, 1, 9), 1);
	ck_assert_int_eq(dmr_trace_write(w, &t, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "txn 2 op 1: field key: table 'hist' key 9 is locked by op 0 "
				      "(D) too"),
		      "%s", err.msg);
	t.ops[1].key = 8; /* another record */
	ck_assert_int_eq(dmr_trace_write(w, &t, &err), DMR_OK);
	dmr_trace_abandon(w);
}
END_TEST

START_TEST(test_too_many_ops)
{
	size_t cap = sizeof(base_hdr) + 300 * 32;
	char *text = malloc(cap), *p;

	ck_assert_ptr_nonnull(text);
	p = text + sprintf(text, "%s", base_hdr);
	for (int i = 0; i <= DMR_TRACE_MAX_OPS; i++)
		p += sprintf(p, "1,pay,0,R,acct,%d,,,,,,,\n", i % 100);
	/* op 257 is on line 10 + 256 */
	expect_error(text, 10 + DMR_TRACE_MAX_OPS, "txn", "more than 256 ops", "too many ops");
	free(text);
}
END_TEST

START_TEST(test_long_line)
{
	size_t cap = sizeof(base_hdr) + 100000;
	char *text = malloc(cap), *p;

	ck_assert_ptr_nonnull(text);
	p = text + sprintf(text, "%s" GOOD0 "1,pay,0,R,acct,1,,,,,,,", base_hdr);
	memset(p, '9', 70000);
	strcpy(p + 70000, "\n");
	expect_error(text, 11, NULL, "longer than", "long line");
	free(text);
}
END_TEST

/* ---- bad headers ------------------------------------------------------ */

#define COLS "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\n"
#define MAGIC "# dmreplay-trace v1\n# workload test\n"

static const bad_case_t bad_hdrs[] = {
    {"empty file", "", 1, "magic", "empty file"},
    {"no magic", "# dmreplay-trace\n", 1, "magic", "not a dmreplay trace"},
    {"wrong magic", "txn,type\n", 1, "magic", "not a dmreplay trace"},
    {"version 2", "# dmreplay-trace v2\n# table a 1 8 0\n" COLS, 1, "version", "newer"},
    {"version garbage", "# dmreplay-trace v1x\n", 1, "version", "bad version"},
    {"version 0", "# dmreplay-trace v0\n", 1, "version", "bad version"},
    {"regime comma", MAGIC "# regime uni,form\n# table acct 100 16 0\n" COLS, 3, "regime",
     "contains a comma or a quote"},
    {"regime quote", MAGIC "# regime \"x\"\n# table acct 100 16 0\n" COLS, 3, "regime",
     "contains a comma or a quote"},
    {"table 3 fields", MAGIC "# table acct 100 16\n" COLS, 3, "table", "malformed table line"},
    {"table 5 fields", MAGIC "# table acct 100 16 0 9\n" COLS, 3, "table", "malformed"},
    {"table rows bad", MAGIC "# table acct 1x 16 0\n" COLS, 3, "rows", "bad row count"},
    {"table rows 0", MAGIC "# table acct 0 16 0\n" COLS, 3, "rows", ">= 1"},
    /* a trial: the layout's "rows x 24 bytes overflow" had named no line */
    {"table rows overflow", MAGIC "# table acct 9223372036854775807 8 1000\n" COLS, 3, "rows",
     "9223372036854775807 rows x 8 bytes overflow"},
    {"tables sum overflow", MAGIC "# table a 2199023255552 524288 0\n# table b 2 8 0\n" COLS, 4,
     "rows", "2 rows x 8 bytes overflow"},
    {"payload not x8", MAGIC "# table acct 100 12 0\n" COLS, 3, "payload_bytes",
     "not a multiple of 8"},
    {"payload 0", MAGIC "# table acct 100 0 0\n" COLS, 3, "payload_bytes", "bad payload"},
    {"loaded > rows", MAGIC "# table acct 100 16 101\n" COLS, 3, "loaded", "loaded 101 > rows"},
    {"dup table", MAGIC "# table a 1 8 0\n# table a 1 8 0\n" COLS, 4, "table", "duplicate"},
    {"bad table name", MAGIC "# table a,b 1 8 0\n" COLS, 3, "table", "name contains"},
    {"no tables", MAGIC "# type pay\n" COLS, 4, "table", "no '# table'"},
    {"missing columns EOF", MAGIC "# table a 1 8 0\n", 4, "columns", "missing column"},
    {"wrong columns", MAGIC "# table a 1 8 0\n1,pay,0,R,a,0,,,,,,,\n", 4, "columns",
     "expected column header"},
    {"unknown directive", MAGIC "# tables a 1 8 0\n" COLS, 3, "header", "unknown header line"},
    {"txns bad", MAGIC "# txns -1\n# table a 1 8 0\n" COLS, 3, "txns", "bad transaction count"},
    {"dup workload", MAGIC "# workload x\n# table a 1 8 0\n" COLS, 3, "workload", "duplicate"},
    {"no workload", "# dmreplay-trace v1\n# table a 1 8 0\n" COLS, 3, "workload", "missing"},
    {"dup type", MAGIC "# table a 1 8 0\n# type t\n# type t\n" COLS, 5, "type", "duplicate"},
    {"dup param", MAGIC "# table a 1 8 0\n# param k 1\n# param k 2\n" COLS, 5, "param",
     "duplicate"},
    {"magic truncated", "# dmreplay-trace v1", 1, NULL, "truncated"},
};

START_TEST(test_bad_headers)
{
	const bad_case_t *c = &bad_hdrs[_i];

	expect_error(c->rows, c->line, c->field, c->text, c->name);
}
END_TEST

/* ---- truncation, I/O, odd but valid input ------------------------------ */

START_TEST(test_truncated_txns)
{
	char text[2048];

	/* declared 3, two present: error at the last line (11) */
	snprintf(text, sizeof(text), "%s", base_hdr);
	memcpy(strstr(text, "# txns 0"), "# txns 3", 8);
	strcat(text, "1,pay,0,R,acct,1,,,,,,,\n2,pay,0,R,acct,1,,,,,,,\n");
	expect_error(text, 11, "txns", "truncated: 2 of 3 transactions", "truncated txns");

	/* declared 1, two present: error at the first row of txn 2 */
	memcpy(strstr(text, "# txns 3"), "# txns 1", 8);
	expect_error(text, 11, "txn", "beyond the 1 transactions declared", "extra txns");
}
END_TEST

/* issue #15 D19: what the end of a regular file shows is refused by
 * dmr_trace_scan, before the first transaction (a replay meets it before
 * its run, not after it); the transactions are counted; D15: a UTF-8 BOM is
 * named */
static dmr_status_t open_text(const char *text, dmr_trace_reader_t **r_p, dmr_err_t *err)
{
	char path[1024];
	tmp_path(path, sizeof(path), "scan");
	dmr_test_write_file(path, text);
	dmr_status_t st = dmr_trace_open(path, r_p, err);
	if (st != DMR_OK)
		return st;
	if ((st = dmr_trace_scan(*r_p, err)) != DMR_OK) {
		/* sticky: the first read gives the same error */
		static dmr_trace_txn_t t;
		dmr_err_t e2;
		ck_assert_int_eq(dmr_trace_next(*r_p, &t, &e2), st);
		ck_assert_str_eq(e2.msg, err->msg);
		dmr_trace_close(*r_p);
	}
	return st;
}

START_TEST(test_open_checks_the_end)
{
	char text[2048];
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	/* no final newline: refused at open, naming line 11 */
	snprintf(text, sizeof(text), "%s%s%s", base_hdr, GOOD0, "2,pay,0,R,acct,1,,,,,,,");
	ck_assert_int_eq(open_text(text, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":11: truncated: last line has no trailing newline"), "%s",
		      err.msg);
	/* fewer transactions than declared: refused at open, naming the last line */
	snprintf(text, sizeof(text), "%s%s%s", base_hdr, GOOD0,
		 "2,pay,0,R,acct,1,,,,,,,\n2,pay,0,R,acct,2,,,,,,,\n");
	memcpy(strstr(text, "# txns 0"), "# txns 3", 8);
	ck_assert_int_eq(open_text(text, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":12: field txns: truncated: 2 of 3 transactions"), "%s",
		      err.msg);
	/* as declared: opens, two transactions counted */
	memcpy(strstr(text, "# txns 3"), "# txns 2", 8);
	ck_assert_int_eq(open_text(text, &r, &err), DMR_OK);
	ck_assert_uint_eq(dmr_trace_file_txns(r), 2);
	dmr_trace_close(r);
	/* no transaction at all */
	ck_assert_int_eq(open_text(base_hdr, &r, &err), DMR_OK);
	ck_assert_uint_eq(dmr_trace_file_txns(r), 0);
	dmr_trace_close(r);
	/* a byte-order mark is named as such */
	snprintf(text, sizeof(text), "\xEF\xBB\xBF%s%s", base_hdr, GOOD0);
	ck_assert_int_eq(open_text(text, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(
	    strstr(err.msg, ":1: field magic: the file starts with a UTF-8 byte-order mark"), "%s",
	    err.msg);
}
END_TEST

START_TEST(test_missing_file)
{
	dmr_trace_reader_t *r = (dmr_trace_reader_t *)0x1;
	dmr_err_t err = {{0}};
	char path[1024];

	tmp_path(path, sizeof(path), "missing");
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_ERR_IO);
	ck_assert_ptr_eq(r, (dmr_trace_reader_t *)0x1); /* not set on error */
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_ptr_nonnull(strstr(err.msg, "No such file"));
}
END_TEST

START_TEST(test_crlf_quotes_empty)
{
	static dmr_trace_txn_t t;
	dmr_trace_reader_t *r;
	dmr_err_t err = {{0}};
	char path[1024];

	/* CRLF line ends, quoted names and spaces around fields are accepted */
	tmp_path(path, sizeof(path), "crlf");
	dmr_test_write_file(path,
			    "# dmreplay-trace v1\r\n# workload test\r\n# table acct 100 16 50\r\n"
			    "# type pay\r\n"
			    "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv\r\n"
			    "4,\"pay\",0,R, acct ,7,,,,,,,12\r\n");
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	ck_assert_msg(dmr_trace_next(r, &t, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(t.id, 4);
	ck_assert_uint_eq(t.nops, 1);
	ck_assert_int_eq(t.ops[0].key, 7);
	ck_assert_int_eq(t.xv, 12);
	ck_assert_uint_eq(t.line, 6);
	ck_assert_int_eq(dmr_trace_next(r, &t, &err), DMR_EOF);
	dmr_trace_close(r);

	/* the same fields by the fast split (no quote, no CR) and by libcsv:
	 * spaces and tabs around unquoted fields trimmed in both; row 2 is
	 * row 1 with a quoted field, so it goes through libcsv */
	tmp_path(path, sizeof(path), "trim");
	dmr_test_write_file(path,
			    "# dmreplay-trace v1\n# workload test\n# table acct 100 16 50\n"
			    "# type pay\n" COLS "5, pay ,0,U,\tacct\t, 7 ,,,,,,add:1:-3 , 12\n"
			    "6, pay ,0,U,\"acct\", 7 ,,,,,,add:1:-3 , 12\n");
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	for (int k = 0; k < 2; k++) {
		ck_assert_msg(dmr_trace_next(r, &t, &err) == DMR_OK, "%s", err.msg);
		ck_assert_uint_eq(t.id, 5 + (unsigned)k);
		ck_assert_uint_eq(t.type, 0);
		ck_assert_uint_eq(t.ops[0].table, 0);
		ck_assert_int_eq(t.ops[0].key, 7);
		ck_assert_uint_eq(t.ops[0].nacts, 1);
		ck_assert_int_eq(t.ops[0].acts[0].val.lit, -3);
		ck_assert_int_eq(t.xv, 12);
	}
	ck_assert_int_eq(dmr_trace_next(r, &t, &err), DMR_EOF);
	dmr_trace_close(r);

	/* a trace without transactions */
	tmp_path(path, sizeof(path), "empty");
	dmr_test_write_file(
	    path, "# dmreplay-trace v1\n# workload test\n# txns 0\n# table acct 1 8 0\n" COLS);
	ck_assert_int_eq(dmr_trace_open(path, &r, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_next(r, &t, &err), DMR_EOF);
	ck_assert_uint_eq(dmr_trace_rows(r), 0);
	ck_assert_uint_eq(dmr_trace_header(r)->ntypes, 0);
	ck_assert_str_eq(dmr_trace_header(r)->regime, "");
	dmr_trace_close(r);
}
END_TEST

/* ---- writer ------------------------------------------------------------ */

START_TEST(test_writer_safety)
{
	static dmr_trace_txn_t a;
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w;
	dmr_err_t err = {{0}};
	char path[1024], tmp[1100];
	char *text;

	tmp_path(path, sizeof(path), "old");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	dmr_test_write_file(path, "OLD\n");
	make_hdr(&h, 1);
	make_txn_a(&a);

	/* abandon: the old file stays, no .tmp */
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_OK);
	dmr_trace_abandon(w);
	ck_assert(!dmr_test_exists(tmp));
	text = dmr_test_read_text(path);
	ck_assert_str_eq(text, "OLD\n");
	free(text);

	/* finish with fewer txns than declared: error, old file stays */
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_finish(w, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "declares 1 transactions, 0 written"));
	ck_assert(!dmr_test_exists(tmp));
	text = dmr_test_read_text(path);
	ck_assert_str_eq(text, "OLD\n");
	free(text);

	/* invalid txns are refused without writing; the writer stays usable */
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_OK);
	a.ops[4].key = 10; /* item has 10 rows */
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_ptr_nonnull(strstr(err.msg, "txn 7 op 4: field key: key 10 beyond table 'item'"));
	a.ops[4].key = 9;
	dmr_trace_op_act(&a.ops[3], DMR_TACT_SET, 0, 1); /* act on D */
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "op 3: field act: "));
	a.ops[3].nacts = 0;
	for (int k = 0; k < 3; k++) /* op 1 has 2 actions: 5 > 4 */
		dmr_trace_op_act(&a.ops[1], DMR_TACT_ADD, 0, 1);
	ck_assert_uint_eq(a.ops[1].nacts, DMR_TRACE_MAX_ACTS);
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "op 1: field act: action 4 invalid"));
	make_txn_a(&a);
	dmr_trace_op_act_ref(&a.ops[1], DMR_TACT_ADD, 0, -1, 0); /* bad sop */
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "field act: action 3 invalid"));
	make_txn_a(&a);
	a.ops[4].dep.op = 3; /* op 3 is in round 2, as op 4 */
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "op 4: field dep: "));
	make_txn_a(&a);
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_OK);
	ck_assert_int_eq(dmr_trace_write(w, &a, &err), DMR_ERR_INVALID); /* same id */
	ck_assert_ptr_nonnull(strstr(err.msg, "field txn: id not above the previous txn 7"));
	ck_assert_int_eq(dmr_trace_finish(w, &err), DMR_OK);
	text = dmr_test_read_text(path);
	ck_assert_ptr_nonnull(strstr(text, "# dmreplay-trace v1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n7,pay,2,R,item,9,,,,,,,\n"));
	free(text);
	ck_assert(!dmr_test_exists(tmp));

	/* never renamed over what is not a regular file: a directory here
	 * (run as root, -o /dev/null had replaced the device: a trial) */
	tmp_path(path, sizeof(path), "adir");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert(!dmr_test_exists(tmp));
	ck_assert_int_eq(rmdir(path), 0);
	ck_assert_int_eq(dmr_trace_create("/dev/null", &h, &w, &err), DMR_ERR_INVALID);
	ck_assert(!dmr_test_exists("/dev/null.tmp"));

	/* nor written through what sits at PATH.tmp: a symbolic link (fopen
	 * wrote the trace over its target) or a FIFO (the writer blocked):
	 * refused, both left as they were (a trial) */
	char target[PATH_MAX];
	tmp_path(path, sizeof(path), "linked.csv");
	tmp_path(target, sizeof(target), "precious.txt");
	dmr_test_write_file(target, "precious\n");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(symlink(target, tmp), 0);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_msg(strstr(err.msg, "exists and is not a regular file"), "%s", err.msg);
	text = dmr_test_read_text(target);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	struct stat sl;
	ck_assert_int_eq(lstat(tmp, &sl), 0);
	ck_assert(S_ISLNK(sl.st_mode));
	ck_assert_int_eq(unlink(tmp), 0);
	ck_assert_int_eq(mkfifo(tmp, 0600), 0);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_int_eq(lstat(tmp, &sl), 0);
	ck_assert(S_ISFIFO(sl.st_mode));
	ck_assert_int_eq(unlink(tmp), 0);
	ck_assert(!dmr_test_exists(path));
}
END_TEST

START_TEST(test_writer_header_errors)
{
	dmr_trace_hdr_t h;
	dmr_trace_writer_t *w = NULL;
	dmr_err_t err = {{0}};
	char path[1024], tmp[1100];

	tmp_path(path, sizeof(path), "hdr");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	make_hdr(&h, 0);
	h.tables[1].payload_bytes = 12;
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "field payload_bytes"));
	ck_assert_ptr_null(w);
	ck_assert(!dmr_test_exists(tmp));

	make_hdr(&h, 0);
	h.ntables = 0;
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "field table"));

	make_hdr(&h, 0);
	strcpy(h.types[1], "pay");
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "duplicate type 'pay'"));

	make_hdr(&h, 0);
	h.workload[0] = '\0';
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "field workload"));

	make_hdr(&h, 0);
	snprintf(path, sizeof(path), "%s/no/such/dir/x.csv", dmr_test_tmp);
	ck_assert_int_eq(dmr_trace_create(path, &h, &w, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "x.csv.tmp"));
	ck_assert_ptr_null(w);
}
END_TEST

START_TEST(test_helpers)
{
	static dmr_trace_txn_t t;
	dmr_trace_hdr_t h;
	char big[200];

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "a", "1"), DMR_OK);
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "a", "2"), DMR_OK);
	ck_assert_uint_eq(h.nparams, 1);
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "a"), "2");
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "b c", "1"), DMR_ERR_INVALID);
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "b", "x\ny"), DMR_ERR_INVALID);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "b", big), DMR_ERR_RANGE);
	big[40] = '\0';
	ck_assert_int_eq(dmr_trace_hdr_set(&h, big, "1"), DMR_ERR_RANGE);
	for (int i = 1; i < DMR_TRACE_MAX_PARAMS; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		ck_assert_int_eq(dmr_trace_hdr_set(&h, k, "v"), DMR_OK);
	}
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "last", "v"), DMR_ERR_RANGE);
	ck_assert_int_eq(dmr_trace_hdr_set(&h, "k5", "w"), DMR_OK); /* replace still works */
	ck_assert_str_eq(dmr_trace_hdr_param(&h, "k5"), "w");

	memset(&t, 0xab, sizeof(t));
	t.nops = 0;
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'U', 3, 2, -4), 0);
	ck_assert_uint_eq(t.ops[0].kind, 'U');
	ck_assert_uint_eq(t.ops[0].table, 3);
	ck_assert_uint_eq(t.ops[0].round, 2);
	ck_assert_int_eq(t.ops[0].key, -4);
	ck_assert_uint_eq(t.ops[0].count, 1);
	ck_assert_int_eq(t.ops[0].dep.op, -1);
	ck_assert_int_eq(t.ops[0].lo, 0);
	ck_assert_int_eq(t.ops[0].hi, 0);
	ck_assert_uint_eq(t.ops[0].guard.kind, DMR_TGUARD_NONE);
	ck_assert_uint_eq(t.ops[0].nacts, 0);
	dmr_trace_op_act_ref(&t.ops[0], DMR_TACT_ADD, 1, 0, 2);
	ck_assert_uint_eq(t.ops[0].nacts, 1);
	ck_assert_uint_eq(t.ops[0].acts[0].kind, DMR_TACT_ADD);
	ck_assert_uint_eq(t.ops[0].acts[0].field, 1);
	ck_assert_int_eq(t.ops[0].acts[0].val.op, 0);
	ck_assert_uint_eq(t.ops[0].acts[0].val.field, 2);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'X', 0, 0, 0), -1);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', -1, 0, 0), -1);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', DMR_TRACE_MAX_TABLES, 0, 0), -1);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', 0, 65536, 0), -1);
	ck_assert_uint_eq(t.nops, 1);
	for (int i = 1; i < DMR_TRACE_MAX_OPS; i++)
		ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', 0, 0, i), i);
	ck_assert_int_eq(dmr_trace_txn_op(&t, 'R', 0, 0, 0), -1);
	ck_assert_uint_eq(t.nops, DMR_TRACE_MAX_OPS);
}
END_TEST

/* ---- regimes ----------------------------------------------------------- */

START_TEST(test_regime_ok)
{
	dmr_regime_t r;
	dmr_err_t err = {{0}};

	ck_assert_int_eq(dmr_regime_parse("uniform", &r, &err), DMR_OK);
	ck_assert_str_eq(r.name, "uniform");
	ck_assert_int_eq(r.uniform, 1);
	ck_assert_double_eq(r.drift_s, 0.0);

	ck_assert_int_eq(dmr_regime_parse("extreme", &r, &err), DMR_OK);
	ck_assert_str_eq(r.name, "extreme");
	ck_assert_int_eq(r.uniform, 0);
	ck_assert_uint_eq(r.hot_k, 1);
	ck_assert_double_eq(r.hot_p, 0.95);

	ck_assert_int_eq(dmr_regime_parse("alt-extreme", &r, &err), DMR_OK);
	ck_assert_uint_eq(r.hot_k, 2);
	ck_assert_double_eq(r.hot_p, 0.92);

	ck_assert_int_eq(dmr_regime_parse("hot:3/0.9", &r, &err), DMR_OK);
	ck_assert_str_eq(r.name, "hot:3/0.9");
	ck_assert_uint_eq(r.hot_k, 3);
	ck_assert_double_eq(r.hot_p, 0.9);
	ck_assert_double_eq(r.drift_s, 0.0);

	ck_assert_int_eq(dmr_regime_parse("hot:40/1", &r, &err), DMR_OK);
	ck_assert_uint_eq(r.hot_k, 40);
	ck_assert_double_eq(r.hot_p, 1.0);

	ck_assert_int_eq(dmr_regime_parse("drift:hot:1/0.95@5s", &r, &err), DMR_OK);
	ck_assert_str_eq(r.name, "drift:hot:1/0.95@5s");
	ck_assert_uint_eq(r.hot_k, 1);
	ck_assert_double_eq(r.hot_p, 0.95);
	ck_assert_double_eq(r.drift_s, 5.0);

	ck_assert_int_eq(dmr_regime_parse("drift:alt-extreme@0.5s", &r, &err), DMR_OK);
	ck_assert_uint_eq(r.hot_k, 2);
	ck_assert_double_eq(r.drift_s, 0.5);
}
END_TEST

static const struct {
	const char *text;
	const char *why;
} bad_regimes[] = {
    {"", "empty"},
    {"Uniform", "unknown"},
    {"uniform ", "unknown"},
    {"hot", "unknown"},
    {"hot:0/0.5", "K in hot:K/P"},
    {"hot:-1/0.5", "K in hot:K/P"},
    {"hot:x/0.5", "K in hot:K/P"},
    {"hot:99999999999/0.5", "K in hot:K/P"},
    {"hot:1", "missing '/P'"},
    {"hot:1/", "P in hot:K/P"},
    {"hot:1/0", "(0, 1]"},
    {"hot:1/1.5", "(0, 1]"},
    {"hot:1/0.5x", "decimal"},
    {"hot:1/nan", "decimal"},
    {"hot:1/1e-1", "decimal"},
    {"drift:extreme", "missing '@Ts'"},
    {"drift:extreme@5", "seconds"},
    {"drift:extreme@s", "seconds"},
    {"drift:extreme@0s", "> 0"},
    {"drift:uniform@5s", "no hot set"},
    {"drift:drift:extreme@1s@2s", "nested"},
    {"drift:hot:0/1@5s", "K in hot:K/P"},
    {"hot:1/0.500000000000000000000000000000000000000000000000000000000001", "longer"},
};

START_TEST(test_regime_bad)
{
	dmr_regime_t r;
	dmr_err_t err = {{0}};
	const char *text = bad_regimes[_i].text;

	memset(&r, 0x5a, sizeof(r));
	ck_assert_int_eq(dmr_regime_parse(text, &r, &err), DMR_ERR_PARSE);
	ck_assert_uint_eq((unsigned char)r.name[0], 0x5a); /* untouched on error */
	if (strlen(text) < 40) {
		char want[80];
		snprintf(want, sizeof(want), "regime '%s'", text);
		ck_assert_msg(strstr(err.msg, want) != NULL, "want '%s' in '%s'", want, err.msg);
	}
	ck_assert_msg(strstr(err.msg, bad_regimes[_i].why) != NULL, "want '%s' in '%s'",
		      bad_regimes[_i].why, err.msg);
	/* err may be NULL */
	ck_assert_int_eq(dmr_regime_parse(text, &r, NULL), DMR_ERR_PARSE);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("format");

	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_roundtrip_long_type_name);
	tcase_add_test(tc, test_roundtrip_many);
	tcase_add_loop_test(tc, test_bad_rows, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_guard_lock_neighbours);
	tcase_add_test(tc, test_too_many_ops);
	tcase_add_test(tc, test_long_line);
	tcase_add_loop_test(tc, test_bad_headers, 0, (int)(sizeof(bad_hdrs) / sizeof(bad_hdrs[0])));
	tcase_add_test(tc, test_truncated_txns);
	tcase_add_test(tc, test_open_checks_the_end);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_crlf_quotes_empty);
	tcase_add_test(tc, test_writer_safety);
	tcase_add_test(tc, test_writer_header_errors);
	tcase_add_test(tc, test_helpers);
	suite_add_tcase(s, tc);

	tc = tcase_create("regime");
	tcase_add_test(tc, test_regime_ok);
	tcase_add_loop_test(tc, test_regime_bad, 0,
			    (int)(sizeof(bad_regimes) / sizeof(bad_regimes[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("trace", 0, 0) != 0)
		return EXIT_FAILURE;
	return dmr_test_run(trace_suite());
}
