/*
 * tests/unit/test_motor.c - --protocol motor (core/txn_motor.c) on the sim
 * backend with 2 MNs and 1 backup, driven by hand: the version a read sees
 * by its start timestamp, where a writer puts its version (primary and
 * backup), Motor's abort reasons, SI against SR on a write skew, and the
 * version-chain check of core/replica.c on hand-built chains.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/replica.h"
#include "core/txn.h"
#include "helpers/suite.h"

#define PB 16u /* payload bytes: 2 words */

typedef struct fixture {
	dmr_trace_hdr_t h;
	dmr_layout_t l;
	dmr_be_t *be;
	dmr_txn_engine_t eng;
	dmr_txn_stats_t st;
	dmr_txn_ctx_t ctx[2];
	uint8_t *mem[2];
} fixture_t;

static void fx_init(fixture_t *f, uint32_t workers, int iso)
{
	memset(f, 0, sizeof(*f));
	f->h.version = 1;
	f->h.ntables = 1;
	snprintf(f->h.tables[0].name, sizeof(f->h.tables[0].name), "t");
	f->h.tables[0].rows = 16;
	f->h.tables[0].payload_bytes = PB;
	f->h.tables[0].loaded = 8; /* slots 8..15 absent */
	dmr_err_t err;
	ck_assert_int_eq(dmr_layout_init(&f->l, &f->h, workers, 4096, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_cvt(&f->l, DMR_CVT_VCELLS, &err), DMR_OK);
	ck_assert_int_eq(dmr_layout_place(&f->l, 2, 1, &err), DMR_OK);
	/* 16 + 4 x (24 + 16) bytes per record */
	ck_assert_uint_eq(f->l.t[0].rec_bytes, 176);
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = 2,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = (f->l.total + 4095) & ~4095ull,
			       .profile = "cx6dx-100g"};
	ck_assert_int_eq(dmr_be_open(&cfg, &f->be, &err), DMR_OK);
	for (uint32_t mn = 0; mn < 2; mn++) {
		f->mem[mn] = dmr_be_mn_memory(f->be, mn, NULL);
		dmr_layout_load_mn(&f->l, mn, f->mem[mn]);
	}
	ck_assert_int_eq(dmr_txn_engine_init(&f->eng, f->be, &f->l, 0, 0, &err), DMR_OK);
	f->eng.protocol = DMR_TXN_PROTO_MOTOR;
	f->eng.isolation = iso;
	for (uint32_t i = 0; i < workers; i++)
		ck_assert_int_eq(dmr_txn_ctx_init(&f->ctx[i], &f->eng, &f->st, i, i, &err), DMR_OK);
}

static void fx_fini(fixture_t *f, uint32_t workers)
{
	for (uint32_t i = 0; i < workers; i++)
		dmr_txn_ctx_fini(&f->ctx[i]);
	dmr_be_close(f->be);
}

static uint8_t *vcell(fixture_t *f, uint32_t mn, uint64_t slot, uint32_t k)
{
	return f->mem[mn] + dmr_layout_rec(&f->l, 0, slot) + dmr_cvt_vcell_off(PB, k);
}

static uint64_t rd(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* vcell k of slot on both MNs := a committed version ts (present), built
 * from base, payload word 0 = val; ts 0: invalid. */
static void set_vcell(fixture_t *f, uint64_t slot, uint32_t k, uint64_t ts, uint64_t base,
		      uint64_t val)
{
	uint64_t w = ts ? DMR_VER_PRESENT | DMR_CVT_VALID | ts : 0, z = 0;
	for (uint32_t mn = 0; mn < 2; mn++) {
		uint8_t *v = vcell(f, mn, slot, k);
		memcpy(v, &w, 8);
		memcpy(v + 8, &base, 8);
		memcpy(v + 16, &val, 8);
		memcpy(v + 24, &z, 8);
		memcpy(v + 16 + PB, &w, 8);
	}
}

static void drive(fixture_t *f, int *out, uint32_t n)
{
	dmr_wc_t wc[16];
	int w;
	while ((w = dmr_be_progress(f->be, UINT64_MAX)) >= 0) {
		int k = dmr_be_poll(f->be, (uint32_t)w, wc, 16);
		for (int i = 0; i < k; i++) {
			uint32_t ci = dmr_wrid_index(wc[i].wr_id);
			ck_assert_uint_lt(ci, n);
			dmr_txn_outcome_t o;
			ck_assert_int_eq(dmr_txn_on_wc(&f->ctx[ci], &wc[i], &o), DMR_OK);
			if (o != DMR_TXN_RUNNING)
				out[ci] = (int)o;
		}
	}
}

/* Motor's counters summed over the contexts and types. */
static dmr_txn_mv_stats_t mvs(const fixture_t *f)
{
	dmr_txn_mv_stats_t m;
	memset(&m, 0, sizeof(m));
	for (uint32_t i = 0; i < 2; i++)
		for (uint32_t t = 0; f->ctx[i].mv && t < DMR_TRACE_MAX_TYPES; t++)
			dmr_txn_mv_add(&m, &f->ctx[i].mv[t]);
	return m;
}

/* Run t alone on context 0 whose start timestamp will be start. */
static int run1(fixture_t *f, const dmr_trace_txn_t *t, uint64_t start)
{
	f->eng.ts_clock = start - 1;
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_start(&f->ctx[0], t, &o), DMR_OK);
	ck_assert_int_eq(o, DMR_TXN_RUNNING);
	int out[1] = {-1};
	drive(f, out, 1);
	ck_assert_uint_eq(f->ctx[0].start_ts, start);
	return out[0];
}

/* Payload word 0 of op 0's view (the version the read saw). */
static uint64_t seen(fixture_t *f)
{
	return rd(f->ctx[0].buf + f->ctx[0].ops[0].buf + DMR_REC_HDR);
}

START_TEST(read_picks_the_newest_version_at_its_start_timestamp)
{
	fixture_t f;
	fx_init(&f, 1, DMR_TXN_ISO_SR);
	/* slot 2: versions 1 (10), 5 (50), 9 (90), vcell 3 invalid */
	set_vcell(&f, 2, 0, 1, 0, 10);
	set_vcell(&f, 2, 1, 9, 5, 90);
	set_vcell(&f, 2, 2, 5, 1, 50);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	dmr_trace_txn_op(&t, 'R', 0, 0, 2);
	ck_assert_int_eq(run1(&f, &t, 6), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(seen(&f), 50);
	/* the view's version word: present, timestamp 5 */
	ck_assert_uint_eq(rd(f.ctx[0].buf + f.ctx[0].ops[0].buf + 8), DMR_VER_PRESENT | 5);
	ck_assert_uint_eq(mvs(&f).versions_read, 1);
	ck_assert_uint_eq(mvs(&f).old_reads, 1); /* 9 is newer */
	ck_assert_int_eq(run1(&f, &t, 9), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(seen(&f), 90);
	ck_assert_int_eq(run1(&f, &t, 4), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(seen(&f), 10);
	ck_assert_uint_eq(mvs(&f).versions_read, 3);
	ck_assert_uint_eq(mvs(&f).old_reads, 2);
	/* a read-only transaction commits without a verb after its READ
	 * (Motor's TXN::Commit: no timestamp, no validation) */
	ck_assert_uint_eq(f.ctx[0].commit_ts, 0);
	ck_assert_uint_eq(f.st.reads, 3);
	/* versions 5 and 9 only, start 3: none visible, the read aborts */
	set_vcell(&f, 2, 0, 0, 0, 0);
	ck_assert_int_eq(run1(&f, &t, 3), DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_VALIDATION], 1);
	ck_assert_uint_eq(mvs(&f).aborts[DMR_MV_NOVIS], 1);
	/* every vcell invalid: the row is absent, not an abort */
	for (uint32_t k = 0; k < DMR_CVT_VCELLS; k++)
		set_vcell(&f, 2, k, 0, 0, 0);
	ck_assert_int_eq(run1(&f, &t, 3), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_VALIDATION], 1);
	fx_fini(&f, 1);
}
END_TEST

START_TEST(writer_replaces_the_oldest_vcell_on_primary_and_backup)
{
	fixture_t f;
	fx_init(&f, 1, DMR_TXN_ISO_SR);
	set_vcell(&f, 3, 0, 4, 3, 40);
	set_vcell(&f, 3, 1, 2, 1, 20);
	set_vcell(&f, 3, 2, 3, 2, 30);
	set_vcell(&f, 3, 3, 6, 4, 60);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	int u = dmr_trace_txn_op(&t, 'U', 0, 0, 3);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_ADD, 0, 5);
	ck_assert_int_eq(run1(&f, &t, 10), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.ctx[0].commit_ts, 11);
	for (uint32_t mn = 0; mn < 2; mn++) {
		const uint8_t *v = vcell(&f, mn, 3, 1); /* the oldest, ts 2 */
		uint64_t w = DMR_VER_PRESENT | DMR_CVT_VALID | 11;
		ck_assert_uint_eq(rd(v), w);
		ck_assert_uint_eq(rd(v + 8), 6);		     /* built from version 6 */
		ck_assert_uint_eq(rd(v + 16), 65);		     /* 60 + 5 */
		ck_assert_uint_eq(rd(v + 16 + PB), w);		     /* anchor */
		ck_assert_uint_eq(rd(vcell(&f, mn, 3, 3) + 16), 60); /* kept */
		ck_assert_uint_eq(rd(f.mem[mn] + dmr_layout_rec(&f.l, 0, 3)), 0); /* unlocked */
	}
	/* CAS + READ, then per replica 1 WRITE and the unlock on the primary */
	ck_assert_uint_eq(f.st.atomics, 1);
	ck_assert_uint_eq(f.st.reads, 1);
	ck_assert_uint_eq(f.st.writes, 3);
	dmr_replica_result_t res;
	dmr_err_t err;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	ck_assert_uint_eq(res.chains, 16);
	/* an insert into an absent row: vcell 0, base 0 */
	memset(&t, 0, sizeof(t));
	u = dmr_trace_txn_op(&t, 'I', 0, 0, 9);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_SET, 1, 7);
	ck_assert_int_eq(run1(&f, &t, 20), DMR_TXN_COMMITTED);
	ck_assert_uint_eq(rd(vcell(&f, 1, 9, 0)), DMR_VER_PRESENT | DMR_CVT_VALID | 21);
	ck_assert_uint_eq(rd(vcell(&f, 1, 9, 0) + 8), 0);
	ck_assert_uint_eq(rd(vcell(&f, 1, 9, 0) + 24), 7);
	fx_fini(&f, 1);
}
END_TEST

START_TEST(writer_aborts_on_a_newer_version_or_no_free_vcell)
{
	fixture_t f;
	fx_init(&f, 1, DMR_TXN_ISO_SI);
	static dmr_trace_txn_t t;
	memset(&t, 0, sizeof(t));
	int u = dmr_trace_txn_op(&t, 'U', 0, 0, 1);
	dmr_trace_op_act(&t.ops[u], DMR_TACT_ADD, 0, 1);
	set_vcell(&f, 1, 1, 5, 1, 11);
	/* SI too: a version (5) newer than the snapshot (3) of a record it
	 * writes: first committer wins */
	ck_assert_int_eq(run1(&f, &t, 3), DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(mvs(&f).aborts[DMR_MV_NEWER], 1);
	ck_assert_uint_eq(rd(f.mem[0] + dmr_layout_rec(&f.l, 0, 1)), 0); /* released */
	/* 4 versions, the oldest (7) above the start timestamp (6): Motor's
	 * FindWritePos finds no vcell (and the newest 9 is newer too: the
	 * first reason counted is NEWER); with the newest at 6 only NOSLOT */
	set_vcell(&f, 1, 0, 3, 0, 0);
	set_vcell(&f, 1, 1, 4, 3, 0);
	set_vcell(&f, 1, 2, 5, 4, 0);
	set_vcell(&f, 1, 3, 6, 5, 0);
	ck_assert_int_eq(run1(&f, &t, 2), DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(mvs(&f).aborts[DMR_MV_NEWER], 2);
	ck_assert_uint_eq(mvs(&f).aborts[DMR_MV_NOSLOT], 0);
	fx_fini(&f, 1);
}
END_TEST

/* Write skew: T0 reads B and adds to A, T1 reads A and adds to B, started
 * together. SI validates no read: both commit (each one's write built on
 * the latest version of the record it writes: no lost update). SR re-reads
 * the read-only record at the commit timestamp: each finds it locked by
 * the other, both abort (CheckValidate "RO is Locked"). */
static void write_skew(int iso, int *out, fixture_t *f)
{
	fx_init(f, 2, iso);
	static dmr_trace_txn_t t0, t1;
	memset(&t0, 0, sizeof(t0));
	memset(&t1, 0, sizeof(t1));
	dmr_trace_txn_op(&t0, 'R', 0, 0, 1);
	int u = dmr_trace_txn_op(&t0, 'U', 0, 0, 0);
	dmr_trace_op_act(&t0.ops[u], DMR_TACT_ADD, 0, 100);
	dmr_trace_txn_op(&t1, 'R', 0, 0, 0);
	u = dmr_trace_txn_op(&t1, 'U', 0, 0, 1);
	dmr_trace_op_act(&t1.ops[u], DMR_TACT_ADD, 0, 100);
	dmr_txn_outcome_t o;
	ck_assert_int_eq(dmr_txn_start(&f->ctx[0], &t0, &o), DMR_OK);
	ck_assert_int_eq(dmr_txn_start(&f->ctx[1], &t1, &o), DMR_OK);
	drive(f, out, 2);
}

START_TEST(write_skew_commits_under_si_aborts_under_sr)
{
	fixture_t f;
	int out[2] = {-1, -1};
	write_skew(DMR_TXN_ISO_SI, out, &f);
	ck_assert_int_eq(out[0], DMR_TXN_COMMITTED);
	ck_assert_int_eq(out[1], DMR_TXN_COMMITTED);
	ck_assert_uint_eq(f.st.committed, 2);
	/* both snapshots were ts 1 (the loaded versions); both new versions
	 * built from it, on records 0 and 1 */
	ck_assert_uint_eq(rd(vcell(&f, 0, 0, 1) + 8), 1);
	ck_assert_uint_eq(rd(vcell(&f, 0, 1, 1) + 8), 1);
	ck_assert_uint_eq(rd(vcell(&f, 0, 0, 1) + 16), 100);
	ck_assert_uint_eq(rd(vcell(&f, 0, 1, 1) + 16), 100);
	dmr_replica_result_t res;
	dmr_err_t err;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	fx_fini(&f, 2);

	out[0] = out[1] = -1;
	write_skew(DMR_TXN_ISO_SR, out, &f);
	ck_assert_int_eq(out[0], DMR_TXN_GAVE_UP);
	ck_assert_int_eq(out[1], DMR_TXN_GAVE_UP);
	ck_assert_uint_eq(f.st.committed, 0);
	ck_assert_uint_eq(f.st.aborts[DMR_ABORT_VALIDATION], 2);
	ck_assert_uint_eq(mvs(&f).aborts[DMR_MV_CHANGED], 2);
	ck_assert_uint_eq(rd(vcell(&f, 0, 0, 1)), 0); /* nothing installed */
	ck_assert_uint_eq(f.st.locks_taken, f.st.locks_released);
	fx_fini(&f, 2);
}
END_TEST

START_TEST(chain_check_names_a_lost_update_and_a_half_written_version)
{
	fixture_t f;
	fx_init(&f, 1, DMR_TXN_ISO_SI);
	dmr_replica_result_t res;
	dmr_err_t err;
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert(res.ok);
	/* slot 4: 1 -> 3 -> 5, but 5 built from 1 (3's update lost) */
	set_vcell(&f, 4, 1, 3, 1, 0);
	set_vcell(&f, 4, 2, 5, 1, 0);
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert(!res.ok);
	ck_assert_uint_eq(res.failures, 1);
	ck_assert_str_eq(res.first_failure, "table t slot 4: version 5 was built from version 1, "
					    "not from the latest committed before it, 3 (a lost "
					    "update)");
	set_vcell(&f, 4, 2, 5, 3, 0);
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert_msg(res.ok, "%s", res.first_failure);
	/* a half-written vcell (anchor behind its word), on both MNs */
	uint64_t old = DMR_VER_PRESENT | DMR_CVT_VALID | 4;
	for (uint32_t mn = 0; mn < 2; mn++)
		memcpy(vcell(&f, mn, 4, 2) + 16 + PB, &old, 8);
	ck_assert_int_eq(dmr_replica_verify_be(&f.l, f.be, &res, &err), DMR_OK);
	ck_assert(!res.ok);
	ck_assert_ptr_nonnull(strstr(res.first_failure, "slot 4 vcell 2: anchor"));
	fx_fini(&f, 1);
}
END_TEST

START_TEST(isolation_parse_and_refusals)
{
	int iso = -1;
	dmr_err_t err;
	ck_assert_int_eq(dmr_txn_isolation_parse("si", DMR_TXN_PROTO_MOTOR, &iso, &err), DMR_OK);
	ck_assert_int_eq(iso, DMR_TXN_ISO_SI);
	ck_assert_int_eq(dmr_txn_isolation_parse("sr", DMR_TXN_PROTO_OCC, &iso, &err), DMR_OK);
	ck_assert_int_eq(iso, DMR_TXN_ISO_SR);
	ck_assert_int_eq(dmr_txn_isolation_parse("si", DMR_TXN_PROTO_FORD, &iso, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --isolation si: only with --protocol motor (--protocol "
				  "ford is serializable: --isolation sr)");
	ck_assert_int_eq(dmr_txn_isolation_parse("rc", DMR_TXN_PROTO_MOTOR, &iso, &err),
			 DMR_ERR_PARSE);
	ck_assert_str_eq(err.msg, "option --isolation: 'rc': one of si, sr");
	int p = -1;
	ck_assert_int_eq(dmr_txn_protocol_parse("motor", &p, &err), DMR_OK);
	ck_assert_int_eq(p, DMR_TXN_PROTO_MOTOR);
	ck_assert_str_eq(dmr_txn_protocol_name(DMR_TXN_PROTO_MOTOR), "motor");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("motor");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, read_picks_the_newest_version_at_its_start_timestamp);
	tcase_add_test(tc, writer_replaces_the_oldest_vcell_on_primary_and_backup);
	tcase_add_test(tc, writer_aborts_on_a_newer_version_or_no_free_vcell);
	tcase_add_test(tc, write_skew_commits_under_si_aborts_under_sr);
	tcase_add_test(tc, chain_check_names_a_lost_update_and_a_half_written_version);
	tcase_add_test(tc, isolation_parse_and_refusals);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
