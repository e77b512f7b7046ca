/*
 * traces/verify.c - post-run invariant checks of the generated workloads
 * (dmr_wl_verify, workload.h). Records are read through the caller's
 * callback, one at a time, so the same code runs on sim memory and on
 * records fetched from a real MN. Table layouts: tpcc.h, smallbank.h,
 * ycsb.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smallbank.h"
#include "tatp.h"
#include "tpcc.h"
#include "workload.h"
#include "ycsb.h"

typedef struct vctx {
	const dmr_trace_hdr_t *h;
	dmr_wl_read_func_t read;
	dmr_wl_absent_func_t absent; /* may be NULL */
	void *arg;
	dmr_verify_result_t *res;
	dmr_err_t *err;
	int64_t committed_xv;
} vctx_t;

static void v_fail(vctx_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void v_fail(vctx_t *v, const char *fmt, ...)
{
	va_list ap;

	if (v->res->failures++ == 0) {
		va_start(ap, fmt);
		vsnprintf(v->res->first_failure, sizeof(v->res->first_failure), fmt, ap);
		va_end(ap);
	}
}

/* Read one record: *present_p = 1 and *p_p set, or 0. Propagates read()'s
 * negative return as the status. */
static dmr_status_t v_read(vctx_t *v, int table, uint64_t slot, const uint64_t **p_p,
			   int *present_p)
{
	int rc;

	*present_p = 0;
	rc = v->read(v->arg, table, slot, p_p, NULL);
	if (rc < 0)
		return dmr_err_set(v->err, (dmr_status_t)rc, "verify: read %s slot %" PRIu64 ": %s",
				   v->h->tables[table].name, slot,
				   dmr_status_string((dmr_status_t)rc));
	*present_p = rc > 0;
	return DMR_OK;
}

/* How many of the `most` slots from `slot` on (towards dir) are known
 * absent: 0 when not known (workload.h dmr_wl_absent_func_t). */
static uint64_t v_absent(vctx_t *v, int table, uint64_t slot, int dir, uint64_t most)
{
	if (!v->absent)
		return 0;
	uint64_t k = v->absent(v->arg, table, slot, dir);
	return k < most ? k : most;
}

/* Index of table `name` with at least `words` payload words, or -1 (err set). */
static int v_table(vctx_t *v, const char *name, unsigned words)
{
	int t = dmr_trace_hdr_table(v->h, name);

	if (t < 0) {
		dmr_err_set(v->err, DMR_ERR_INVALID, "verify %s: no table %s", v->h->workload,
			    name);
		return -1;
	}
	if (v->h->tables[t].payload_bytes < words * 8) {
		dmr_err_set(v->err, DMR_ERR_INVALID, "verify %s: table %s: payload %u B < %u B",
			    v->h->workload, name, v->h->tables[t].payload_bytes, words * 8);
		return -1;
	}
	return t;
}

/* ---- TPC-C -------------------------------------------------------------- */

/* C1 (clause 3.3.2.1): W_YTD = sum(D_YTD) per warehouse. */
static dmr_status_t tpcc_c1(vctx_t *v, int tw, int td, uint64_t W, uint64_t *fail_p)
{
	const uint64_t *p;
	int present;
	dmr_status_t st;

	for (uint64_t w = 0; w < W; w++) {
		uint64_t wytd, sum = 0;
		int ok = 1;

		v->res->checks++;
		if ((st = v_read(v, tw, w, &p, &present)) != DMR_OK)
			return st;
		if (!present) {
			(*fail_p)++;
			v_fail(v, "tpcc C1: warehouse %" PRIu64 ": record absent", w);
			continue;
		}
		wytd = p[DMR_TPCC_W_YTD];
		for (uint64_t d = 0; d < DMR_TPCC_DISTRICTS && ok; d++) {
			if ((st = v_read(v, td, dmr_tpcc_district_slot(w, d), &p, &present)) !=
			    DMR_OK)
				return st;
			if (!present) {
				ok = 0;
				(*fail_p)++;
				v_fail(v,
				       "tpcc C1: warehouse %" PRIu64 " district %" PRIu64
				       ": record absent",
				       w, d);
				break;
			}
			sum += p[DMR_TPCC_D_YTD];
		}
		if (ok && wytd != sum) {
			(*fail_p)++;
			v_fail(v,
			       "tpcc C1: warehouse %" PRIu64 ": W_YTD %" PRId64
			       " != sum(D_YTD) %" PRId64,
			       w, (int64_t)wytd, (int64_t)sum);
		}
	}
	return DMR_OK;
}

/*
 * C2 (3.3.2.2): D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district, the
 * new_order part only when the district has new_order rows; with 0-based
 * ids an empty district has D_NEXT_O_ID = 0 and no order.
 * C3 (3.3.2.3): max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER of the
 * district. Ids are the slot offsets within the district's block.
 */
static dmr_status_t tpcc_c23(vctx_t *v, int td, int to, int tno, uint64_t dists, uint64_t cap,
			     uint64_t *fail2_p, uint64_t *fail3_p)
{
	const uint64_t *p;
	int present;
	dmr_status_t st;

	for (uint64_t dist = 0; dist < dists; dist++) {
		uint64_t w = dist / DMR_TPCC_DISTRICTS, d = dist % DMR_TPCC_DISTRICTS;
		int64_t next, max_o = -1, min_no = -1, max_no = -1, count = 0;

		v->res->checks += 2;
		if ((st = v_read(v, td, dist, &p, &present)) != DMR_OK)
			return st;
		if (!present) {
			(*fail2_p)++;
			v_fail(v,
			       "tpcc C2: warehouse %" PRIu64 " district %" PRIu64 ": record absent",
			       w, d);
			continue;
		}
		next = (int64_t)p[DMR_TPCC_D_NEXT_O_ID];
		for (uint64_t o = cap; o-- > 0;) {
			uint64_t k = v_absent(v, to, dmr_tpcc_order_slot(dist, o, cap), -1, o + 1);
			if (k) { /* slots o, o - 1, ..., o - k + 1 absent */
				o -= k - 1;
				continue;
			}
			if ((st = v_read(v, to, dmr_tpcc_order_slot(dist, o, cap), &p, &present)) !=
			    DMR_OK)
				return st;
			if (present) {
				max_o = (int64_t)o;
				break;
			}
		}
		for (uint64_t o = 0; o < cap; o++) {
			uint64_t k =
			    v_absent(v, tno, dmr_tpcc_order_slot(dist, o, cap), 1, cap - o);
			if (k) { /* slots o .. o + k - 1 absent */
				o += k - 1;
				continue;
			}
			if ((st = v_read(v, tno, dmr_tpcc_order_slot(dist, o, cap), &p,
					 &present)) != DMR_OK)
				return st;
			if (!present)
				continue;
			if (min_no < 0)
				min_no = (int64_t)o;
			max_no = (int64_t)o;
			count++;
		}
		if (next - 1 != max_o || (count > 0 && max_no != max_o)) {
			(*fail2_p)++;
			v_fail(v,
			       "tpcc C2: warehouse %" PRIu64 " district %" PRIu64
			       ": D_NEXT_O_ID - 1 = %" PRId64 ", max(O_ID) = %" PRId64
			       ", max(NO_O_ID) = %" PRId64 "%s (0-based, -1 = none)",
			       w, d, next - 1, max_o, max_no, count ? "" : " (no new_order rows)");
		}
		if (count > 0 && max_no - min_no + 1 != count) {
			(*fail3_p)++;
			v_fail(v,
			       "tpcc C3: warehouse %" PRIu64 " district %" PRIu64
			       ": max(NO_O_ID) - min(NO_O_ID) + 1 = %" PRId64 " - %" PRId64
			       " + 1 != %" PRId64 " new_order rows",
			       w, d, max_no, min_no, count);
		}
	}
	return DMR_OK;
}

static void v_summary_part(char *buf, size_t n, const char *name, uint64_t fails)
{
	size_t len = strlen(buf);

	if (fails)
		snprintf(buf + len, n - len, " %s FAIL(%" PRIu64 ")", name, fails);
	else
		snprintf(buf + len, n - len, " %s ok", name);
}

static dmr_status_t verify_tpcc(vctx_t *v)
{
	int tw = v_table(v, "warehouse", DMR_TPCC_W_WORDS);
	int td = v_table(v, "district", DMR_TPCC_D_WORDS);
	int to = v_table(v, "order", DMR_TPCC_O_WORDS);
	int tno = v_table(v, "new_order", DMR_TPCC_NO_WORDS);
	uint64_t W, dists, cap, f1 = 0, f2 = 0, f3 = 0;
	dmr_status_t st;

	if (tw < 0 || td < 0 || to < 0 || tno < 0)
		return DMR_ERR_INVALID;
	W = v->h->tables[tw].rows;
	dists = v->h->tables[td].rows;
	if (W == 0 || dists != W * DMR_TPCC_DISTRICTS || v->h->tables[to].rows % dists != 0 ||
	    v->h->tables[to].rows != v->h->tables[tno].rows)
		return dmr_err_set(v->err, DMR_ERR_INVALID,
				   "verify tpcc: table sizes do not match the schema (tpcc.h)");
	cap = v->h->tables[to].rows / dists;
	if ((st = tpcc_c1(v, tw, td, W, &f1)) != DMR_OK ||
	    (st = tpcc_c23(v, td, to, tno, dists, cap, &f2, &f3)) != DMR_OK)
		return st;
	if (f1 + f2 + f3 == 0) {
		snprintf(v->res->summary, sizeof(v->res->summary), "tpcc C1 C2 C3 ok");
	} else {
		snprintf(v->res->summary, sizeof(v->res->summary), "tpcc");
		v_summary_part(v->res->summary, sizeof(v->res->summary), "C1", f1);
		v_summary_part(v->res->summary, sizeof(v->res->summary), "C2", f2);
		v_summary_part(v->res->summary, sizeof(v->res->summary), "C3", f3);
	}
	return DMR_OK;
}

/* ---- sums (SmallBank, YCSB) --------------------------------------------- */

/* Sum word `word` over the records of table t (two's complement). Absent
 * records fail when must_exist, else count 0. */
static dmr_status_t v_sum(vctx_t *v, int t, unsigned word, int must_exist, uint64_t *sum_p)
{
	const dmr_trace_table_t *tb = &v->h->tables[t];
	const uint64_t *p;
	uint64_t sum = 0;
	int present;
	dmr_status_t st;

	for (uint64_t s = 0; s < tb->rows; s++) {
		if ((st = v_read(v, t, s, &p, &present)) != DMR_OK)
			return st;
		if (present)
			sum += p[word];
		else if (must_exist && s < tb->loaded)
			v_fail(v, "%s: %s slot %" PRIu64 ": record absent", v->h->workload,
			       tb->name, s);
	}
	*sum_p = sum;
	return DMR_OK;
}

/* SmallBank: sum of all balances = initial total + committed_xv. */
static dmr_status_t verify_smallbank(vctx_t *v)
{
	int ts = v_table(v, "savings", DMR_SB_WORDS), tc = v_table(v, "checking", DMR_SB_WORDS);
	const char *init_s = dmr_trace_hdr_param(v->h, "initial_total");
	int64_t init = init_s ? strtoll(init_s, NULL, 10) : 0;
	uint64_t s1, s2, want;
	dmr_status_t st;

	if (ts < 0 || tc < 0)
		return DMR_ERR_INVALID;
	if ((st = v_sum(v, ts, DMR_SB_BALANCE, 1, &s1)) != DMR_OK ||
	    (st = v_sum(v, tc, DMR_SB_BALANCE, 1, &s2)) != DMR_OK)
		return st;
	v->res->checks++;
	want = (uint64_t)init + (uint64_t)v->committed_xv;
	if (s1 + s2 != want)
		v_fail(v,
		       "smallbank: sum of balances %" PRId64 " (savings %" PRId64
		       ", checking %" PRId64 ") != initial %" PRId64 " + committed_xv %" PRId64,
		       (int64_t)(s1 + s2), (int64_t)s1, (int64_t)s2, init, v->committed_xv);
	snprintf(v->res->summary, sizeof(v->res->summary), "smallbank sum %s",
		 v->res->failures ? "FAIL" : "ok");
	return DMR_OK;
}

/* YCSB: sum of the RMW counters (word 0) of present records = committed_xv. */
static dmr_status_t verify_ycsb(vctx_t *v)
{
	int t = v_table(v, "usertable", 1);
	uint64_t sum;
	dmr_status_t st;

	if (t < 0)
		return DMR_ERR_INVALID;
	if ((st = v_sum(v, t, DMR_YCSB_COUNTER, 0, &sum)) != DMR_OK)
		return st;
	v->res->checks++;
	if (sum != (uint64_t)v->committed_xv)
		v_fail(v, "ycsb: sum of RMW counters %" PRId64 " != committed_xv %" PRId64,
		       (int64_t)sum, v->committed_xv);
	snprintf(v->res->summary, sizeof(v->res->summary), "ycsb counters %s",
		 v->res->failures ? "FAIL" : "ok");
	return DMR_OK;
}

/* ---- TATP --------------------------------------------------------------- */

/* Every loaded record of table t present (the tables no transaction
 * deletes or inserts into); absences counted in *fail_p. */
static dmr_status_t v_all_present(vctx_t *v, int t, uint64_t *fail_p)
{
	const dmr_trace_table_t *tb = &v->h->tables[t];
	const uint64_t *p;
	int present;
	dmr_status_t st;

	for (uint64_t s = 0; s < tb->loaded; s++) {
		if ((st = v_read(v, t, s, &p, &present)) != DMR_OK)
			return st;
		if (!present) {
			(*fail_p)++;
			v_fail(v, "tatp: %s slot %" PRIu64 ": record absent", tb->name, s);
		}
	}
	v->res->checks++;
	return DMR_OK;
}

/*
 * The call_forwarding balance (cf_check 1): per special facility (s,
 * sf_type), the present call_forwarding rows among its DMR_TATP_STARTS
 * slots = 1 (the row with start_time 0 loaded at start) + its CF_COUNT word
 * (+1 per committed insert, -1 per committed delete that found a row).
 */
static dmr_status_t tatp_cf_balance(vctx_t *v, int tsf, int tcf, uint64_t S, uint64_t *fail_p)
{
	const uint64_t *p;
	int present;
	dmr_status_t st;

	for (uint64_t s = 0; s < S; s++)
		for (unsigned sf = 1; sf <= DMR_TATP_SF_TYPES; sf++) {
			int64_t cnt, rows = 0;

			v->res->checks++;
			if ((st = v_read(v, tsf, dmr_tatp_sf_slot(s, sf), &p, &present)) != DMR_OK)
				return st;
			if (!present)
				continue; /* counted by v_all_present */
			cnt = (int64_t)p[DMR_TATP_SF_CF_COUNT];
			for (unsigned t = 0; t < DMR_TATP_STARTS; t++) {
				if ((st = v_read(v, tcf, dmr_tatp_cf_slot(S, s, sf, t), &p,
						 &present)) != DMR_OK)
					return st;
				rows += present;
			}
			if (rows != 1 + cnt) {
				(*fail_p)++;
				v_fail(v,
				       "tatp cf_balance: subscriber %" PRIu64
				       " sf_type %u: %" PRId64 " call_forwarding rows present != 1 "
				       "loaded + %" PRId64 " (inserts - deletes)",
				       s, sf, rows, cnt);
			}
		}
	return DMR_OK;
}

static dmr_status_t verify_tatp(vctx_t *v)
{
	int ts = v_table(v, "subscriber", DMR_TATP_S_WORDS);
	int tsec = v_table(v, "sec_subscriber", DMR_TATP_SEC_WORDS);
	int tai = v_table(v, "access_info", DMR_TATP_AI_WORDS);
	int tsf = v_table(v, "special_facility", DMR_TATP_SF_WORDS);
	int tcf = v_table(v, "call_forwarding", DMR_TATP_CF_WORDS);
	const char *cf = dmr_trace_hdr_param(v->h, "cf_check");
	uint64_t S, sum, f_upd = 0, f_pres = 0, f_cf = 0, before;
	dmr_status_t st;

	if (ts < 0 || tsec < 0 || tai < 0 || tsf < 0 || tcf < 0)
		return DMR_ERR_INVALID;
	S = v->h->tables[ts].rows;
	if (S == 0 || v->h->tables[tsec].rows != S ||
	    v->h->tables[tai].rows != S * DMR_TATP_AI_TYPES ||
	    v->h->tables[tsf].rows != S * DMR_TATP_SF_TYPES ||
	    v->h->tables[tcf].rows != S * DMR_TATP_SF_TYPES * DMR_TATP_STARTS ||
	    v->h->tables[tcf].loaded != S * DMR_TATP_SF_TYPES)
		return dmr_err_set(v->err, DMR_ERR_INVALID,
				   "verify tatp: table sizes do not match the schema (tatp.h)");
	before = v->res->failures;
	if ((st = v_sum(v, ts, DMR_TATP_S_UPDATES, 1, &sum)) != DMR_OK)
		return st;
	v->res->checks++;
	if (sum != (uint64_t)v->committed_xv)
		v_fail(v,
		       "tatp: sum of subscriber update counters %" PRId64
		       " != committed_xv %" PRId64,
		       (int64_t)sum, v->committed_xv);
	f_upd = v->res->failures - before;
	if ((st = v_all_present(v, tsec, &f_pres)) != DMR_OK ||
	    (st = v_all_present(v, tai, &f_pres)) != DMR_OK ||
	    (st = v_all_present(v, tsf, &f_pres)) != DMR_OK)
		return st;
	if (cf && strcmp(cf, "1") == 0 && (st = tatp_cf_balance(v, tsf, tcf, S, &f_cf)) != DMR_OK)
		return st;
	snprintf(v->res->summary, sizeof(v->res->summary), "tatp");
	v_summary_part(v->res->summary, sizeof(v->res->summary), "updates", f_upd);
	v_summary_part(v->res->summary, sizeof(v->res->summary), "present", f_pres);
	if (cf && strcmp(cf, "1") == 0)
		v_summary_part(v->res->summary, sizeof(v->res->summary), "cf_balance", f_cf);
	return DMR_OK;
}

dmr_status_t dmr_wl_verify(const dmr_trace_hdr_t *hdr, dmr_wl_read_func_t read,
			   dmr_wl_absent_func_t absent, void *arg, int64_t committed_xv,
			   dmr_verify_result_t *res, dmr_err_t *err)
{
	vctx_t v = {hdr, read, absent, arg, res, err, committed_xv};
	dmr_status_t st;

	memset(res, 0, sizeof(*res));
	if (strcmp(hdr->workload, "tpcc") == 0)
		st = verify_tpcc(&v);
	else if (strcmp(hdr->workload, "smallbank") == 0)
		st = verify_smallbank(&v);
	else if (strcmp(hdr->workload, "ycsb") == 0)
		st = verify_ycsb(&v);
	else if (strcmp(hdr->workload, "tatp") == 0)
		st = verify_tatp(&v);
	else
		st = dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				 "verify: no invariants known for workload '%s'", hdr->workload);
	res->ok = st == DMR_OK && res->failures == 0;
	return st;
}
