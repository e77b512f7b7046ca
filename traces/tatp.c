/*
 * traces/tatp.c - TATP trace generator (TATP Benchmark Description v1.0,
 * mapped onto dmreplay's round/dep/guard operations as the anchors run it;
 * see tatp.h and traces/GENERATORS.md "TATP").
 */
#include "tatp.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *const dmr_tatp_table_names[DMR_TATP_NTABLES] = {
    "subscriber", "sec_subscriber", "access_info", "special_facility", "call_forwarding",
};

const char *const dmr_tatp_type_names[DMR_TATP_NTYPES] = {
    "GetSubscriberData", "GetNewDestination",	 "GetAccessData",	 "UpdateSubscriberData",
    "UpdateLocation",	 "InsertCallForwarding", "DeleteCallForwarding",
};

/* Percent per type (spec order). spec: the TATP description (FORD's
 * FREQUENCY_* in tatp_db.h, the same in Motor); crest: adslabcuhk/crest
 * benchmark/TATP/TATPConstant.h FREQUENCY_* (no DELETE_CALL_FORWARDING). */
static const unsigned tatp_mix_rows[2][DMR_TATP_NTYPES] = {
    [DMR_TATP_MIX_SPEC] = {35, 10, 35, 2, 14, 2, 2},
    [DMR_TATP_MIX_CREST] = {36, 10, 36, 2, 14, 2, 0},
};
static const char *const tatp_mix_names[2] = {"spec", "crest"};
static const char *const tatp_dist_names[2] = {"nurand", "uniform"};

void dmr_tatp_cfg_default(dmr_tatp_cfg_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->txns = 100000;
	cfg->seed = 1;
	cfg->subscribers = 100000; /* FORD config/tatp_config.json num_subscriber */
	cfg->dist = DMR_TATP_NURAND;
	cfg->mix = DMR_TATP_MIX_SPEC;
	cfg->cf_check = 1;
	dmr_gen_regime_uniform(&cfg->regime);
}

const unsigned *dmr_tatp_mix_pct(const dmr_tatp_cfg_t *cfg)
{
	return cfg->mix == DMR_TATP_MIX_CUSTOM ? cfg->mix_pct : tatp_mix_rows[cfg->mix];
}

uint64_t dmr_tatp_nurand_a(uint64_t subscribers)
{
	if (subscribers <= 1000000)
		return 65535;
	if (subscribers <= 10000000)
		return 1048575;
	return 2097151;
}

dmr_status_t dmr_tatp_mix_parse(const char *s, dmr_tatp_cfg_t *cfg, dmr_err_t *err)
{
	static const char *const abbr[DMR_TATP_NTYPES] = {"GSD", "GND", "GAD", "USD",
							  "UL",	 "ICF", "DCF"};
	unsigned pct[DMR_TATP_NTYPES], sum = 0;
	const char *p = s;

	for (int m = 0; m < 2; m++)
		if (strcmp(s, tatp_mix_names[m]) == 0) {
			cfg->mix = m;
			return DMR_OK;
		}
	for (int i = 0; i < DMR_TATP_NTYPES; i++) {
		char *end;
		unsigned long v;

		if (*p < '0' || *p > '9')
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--mix: '%s': %s%sexpected spec, crest, or seven "
					   "percentages GSD,GND,GAD,USD,UL,ICF,DCF (integers "
					   "0..100 summing to 100, e.g. 35,10,35,2,14,2,2)",
					   s, i ? abbr[i] : "", i ? ": " : "");
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v > 100)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--mix: '%s': %s percentage not in 0..100", s, abbr[i]);
		pct[i] = (unsigned)v;
		sum += pct[i];
		p = end;
		if (i + 1 < DMR_TATP_NTYPES) {
			if (*p != ',' && *p != ':')
				return dmr_err_set(
				    err, DMR_ERR_INVALID,
				    "--mix: '%s': expected seven comma- (or colon-) separated "
				    "percentages GSD,GND,GAD,USD,UL,ICF,DCF (or "
				    "spec, crest)",
				    s);
			p++;
		}
	}
	if (*p != '\0')
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "--mix: '%s': expected seven comma- (or colon-) separated percentages "
		    "GSD,GND,GAD,USD,UL,ICF,DCF (or spec, crest), got more",
		    s);
	if (sum != 100)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--mix: '%s': the percentages sum to %u, not 100", s, sum);
	for (int m = 0; m < 2; m++)
		if (memcmp(pct, tatp_mix_rows[m], sizeof(pct)) == 0) {
			cfg->mix = m;
			return DMR_OK;
		}
	cfg->mix = DMR_TATP_MIX_CUSTOM;
	memcpy(cfg->mix_pct, pct, sizeof(pct));
	return DMR_OK;
}

static dmr_status_t tatp_check(const dmr_tatp_cfg_t *cfg, dmr_err_t *err)
{
	if (cfg->subscribers < 1 || cfg->subscribers > DMR_TATP_MAX_SUBSCRIBERS)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "tatp: --subscribers %" PRIu64 " not in [1, %u]",
				   cfg->subscribers, DMR_TATP_MAX_SUBSCRIBERS);
	if (cfg->mix != DMR_TATP_MIX_SPEC && cfg->mix != DMR_TATP_MIX_CREST &&
	    cfg->mix != DMR_TATP_MIX_CUSTOM)
		return dmr_err_set(err, DMR_ERR_INVALID, "tatp: mix %d unknown", cfg->mix);
	if (cfg->mix == DMR_TATP_MIX_CUSTOM) {
		unsigned sum = 0;

		for (int i = 0; i < DMR_TATP_NTYPES; i++)
			sum += cfg->mix_pct[i];
		if (sum != 100)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "tatp: --mix percentages sum to %u, not 100", sum);
	}
	if (cfg->dist != DMR_TATP_NURAND && cfg->dist != DMR_TATP_UNIFORM)
		return dmr_err_set(err, DMR_ERR_INVALID, "tatp: dist %d unknown", cfg->dist);
	if (cfg->regime.drift_s > 0)
		/* call_forwarding is start_time-major: a subscriber partition is not
		 * one contiguous block of every table (FORMAT.md "Drift") */
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--regime %s: drift is not supported for TATP (use tpcc "
				   "or smallbank)",
				   cfg->regime.name);
	return dmr_gen_regime_check(&cfg->regime, cfg->subscribers, "subscribers", err);
}

/* ---- header ------------------------------------------------------------- */

static dmr_status_t tatp_hdr_mix(const dmr_tatp_cfg_t *cfg, dmr_trace_hdr_t *h, dmr_err_t *err)
{
	const unsigned *p = cfg->mix_pct;

	if (cfg->mix != DMR_TATP_MIX_CUSTOM)
		return dmr_gen_hdr_setf(h, err, "mix", "%s", tatp_mix_names[cfg->mix]);
	return dmr_gen_hdr_setf(h, err, "mix", "%u,%u,%u,%u,%u,%u,%u", p[0], p[1], p[2], p[3], p[4],
				p[5], p[6]);
}

dmr_status_t dmr_tatp_header(const dmr_tatp_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err)
{
	const uint64_t S = cfg->subscribers;
	static const uint32_t words[DMR_TATP_NTABLES] = {
	    DMR_TATP_S_WORDS,  DMR_TATP_SEC_WORDS, DMR_TATP_AI_WORDS,
	    DMR_TATP_SF_WORDS, DMR_TATP_CF_WORDS,
	};
	const uint64_t rows[DMR_TATP_NTABLES] = {
	    S,
	    S,
	    S * DMR_TATP_AI_TYPES,
	    S * DMR_TATP_SF_TYPES,
	    S * DMR_TATP_SF_TYPES * DMR_TATP_STARTS,
	};
	dmr_trace_hdr_t *h;
	uint64_t fp;
	dmr_status_t st;

	if ((st = tatp_check(cfg, err)) != DMR_OK)
		return st;
	if ((h = malloc(sizeof(*h))) == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "tatp: out of memory");
	if ((st = dmr_gen_hdr_begin(h, "tatp", cfg->txns, cfg->seed, &cfg->regime, err)) != DMR_OK)
		goto out;
	for (int i = 0; i < DMR_TATP_NTABLES; i++)
		dmr_gen_hdr_table(h, dmr_tatp_table_names[i], rows[i], words[i] * 8,
				  i == DMR_TATP_CALL_FORWARDING ? S * DMR_TATP_SF_TYPES : rows[i]);
	for (int i = 0; i < DMR_TATP_NTYPES; i++)
		snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "%s", dmr_tatp_type_names[i]);
	if (!cfg->quiet)
		fprintf(stderr, "tatp: MN footprint (rows x (16 + payload)):\n");
	fp = dmr_gen_footprint(h, cfg->quiet ? NULL : stderr);
	if ((st = dmr_gen_hdr_setf(h, err, "subscribers", "%" PRIu64, S)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(
		 h, err, "dist", "%s",
		 dmr_gen_regime_hot(&cfg->regime, S) ? "regime" : tatp_dist_names[cfg->dist])) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "nurand_a", "%" PRIu64, dmr_tatp_nurand_a(S))) !=
		DMR_OK ||
	    (st = tatp_hdr_mix(cfg, h, err)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "cf_check", "%d", cfg->cf_check ? 1 : 0)) != DMR_OK ||
	    (cfg->preset &&
	     (st = dmr_gen_hdr_setf(h, err, "preset", "%s", cfg->preset)) != DMR_OK) ||
	    (st = dmr_gen_hdr_setf(h, err, "footprint_bytes", "%" PRIu64, fp)) != DMR_OK)
		goto out;
	*hdr_p = *h;
out:
	free(h);
	return st;
}

/* ---- transactions ------------------------------------------------------- */

typedef struct tatp_gen {
	const dmr_tatp_cfg_t *cfg;
	gsl_rng *r;
	dmr_trace_txn_t *t;
	uint64_t A; /* NURand A */
} tatp_gen_t;

#define TATP_OP(g, kind, table, round, key, idx_p)                                                 \
	dmr_gen_op((g)->t, (kind), (table), (round), (int64_t)(key), (idx_p))

/*
 * s_id: a hot:K/P regime's draw when one is given; else the spec's
 * non-uniform NURand in FORD's form (tatp_db.h GetNonUniformRandomSubscriber:
 * (rand % S | rand & A) % S, 0-based), or uniform.
 */
static uint64_t tatp_sub(tatp_gen_t *g)
{
	const uint64_t S = g->cfg->subscribers;

	if (dmr_gen_regime_hot(&g->cfg->regime, S))
		return dmr_gen_regime_draw(g->r, &g->cfg->regime, S);
	if (g->cfg->dist == DMR_TATP_UNIFORM)
		return dmr_gen_below(g->r, S);
	return (dmr_gen_below(g->r, S) | dmr_gen_below(g->r, g->A + 1)) % S;
}

/* Random small fields (TATP description; FORD tatp_txn.cc): sf_type and
 * ai_type 1..4, start_time {0, 8, 16}, end_time 0..23, bit 0..1, data_a
 * 0..255. */
static unsigned tatp_type4(tatp_gen_t *g)
{
	return 1 + (unsigned)dmr_gen_below(g->r, 4);
}

static int tatp_txn(tatp_gen_t *g, int type)
{
	const uint64_t S = g->cfg->subscribers;
	uint64_t s = tatp_sub(g);
	dmr_trace_op_t *op;
	int k;

	switch (type) {
	case DMR_TATP_T_GET_SUBSCRIBER_DATA:
		return TATP_OP(g, 'R', DMR_TATP_SUBSCRIBER, 0, s, NULL) ? 0 : -1;
	case DMR_TATP_T_GET_NEW_DESTINATION: {
		/* round 0 the special facility, round 1 its call_forwarding rows
		 * with start_time <= the drawn one (FORD: two TxExe) */
		unsigned sf = tatp_type4(g), t = (unsigned)dmr_gen_below(g->r, DMR_TATP_STARTS);

		(void)dmr_gen_range(g->r, 1, 24); /* end_time: compared, not stored */
		if (!TATP_OP(g, 'R', DMR_TATP_SPECIAL_FACILITY, 0, dmr_tatp_sf_slot(s, sf), NULL))
			return -1;
		for (unsigned i = 0; i <= t; i++)
			if (!TATP_OP(g, 'R', DMR_TATP_CALL_FORWARDING, 1,
				     dmr_tatp_cf_slot(S, s, sf, i), NULL))
				return -1;
		return 0;
	}
	case DMR_TATP_T_GET_ACCESS_DATA:
		return TATP_OP(g, 'R', DMR_TATP_ACCESS_INFO, 0, dmr_tatp_ai_slot(s, tatp_type4(g)),
			       NULL)
			   ? 0
			   : -1;
	case DMR_TATP_T_UPDATE_SUBSCRIBER_DATA: {
		unsigned sf = tatp_type4(g);

		if (!(op = TATP_OP(g, 'U', DMR_TATP_SUBSCRIBER, 0, s, NULL)))
			return -1;
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TATP_S_BITS,
				 (int64_t)dmr_gen_below(g->r, 2));
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TATP_S_UPDATES, 1);
		if (!(op = TATP_OP(g, 'U', DMR_TATP_SPECIAL_FACILITY, 0, dmr_tatp_sf_slot(s, sf),
				   NULL)))
			return -1;
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TATP_SF_DATA_A,
				 (int64_t)dmr_gen_below(g->r, 256));
		g->t->xv = 1;
		return 0;
	}
	case DMR_TATP_T_UPDATE_LOCATION:
		/* round 0 the sub_nbr index, round 1 the subscriber */
		if (!TATP_OP(g, 'R', DMR_TATP_SEC_SUBSCRIBER, 0, s, NULL) ||
		    !(op = TATP_OP(g, 'U', DMR_TATP_SUBSCRIBER, 1, s, NULL)))
			return -1;
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TATP_S_VLR_LOCATION,
				 (int64_t)gsl_rng_get(g->r));
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TATP_S_UPDATES, 1);
		g->t->xv = 1;
		return 0;
	case DMR_TATP_T_INSERT_CALL_FORWARDING: {
		/* round 0 the index, round 1 the special facility (with cf_check
		 * locked, its counter +1), round 2 the insert (FORD: three TxExe).
		 * A present row is a duplicate: the transaction gives up, the
		 * counter's +1 with it. */
		unsigned sf = tatp_type4(g), t = (unsigned)dmr_gen_below(g->r, DMR_TATP_STARTS);
		int64_t end = (int64_t)dmr_gen_below(g->r, 24); /* FORD: FastRand % 24 */

		if (!TATP_OP(g, 'R', DMR_TATP_SEC_SUBSCRIBER, 0, s, NULL) ||
		    !(op = TATP_OP(g, g->cfg->cf_check ? 'U' : 'R', DMR_TATP_SPECIAL_FACILITY, 1,
				   dmr_tatp_sf_slot(s, sf), NULL)))
			return -1;
		if (g->cfg->cf_check)
			dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TATP_SF_CF_COUNT, 1);
		if (!(op = TATP_OP(g, 'I', DMR_TATP_CALL_FORWARDING, 2,
				   dmr_tatp_cf_slot(S, s, sf, t), NULL)))
			return -1;
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TATP_CF_END_TIME, end);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_TATP_CF_NUMBERX, (int64_t)dmr_gen_u64(g->r));
		return 0;
	}
	case DMR_TATP_T_DELETE_CALL_FORWARDING: {
		/* round 0 the index, round 1 the delete (an absent row: nothing
		 * deleted, the transaction commits); with cf_check, round 2 the
		 * special facility's counter -1, guarded by the row's presence */
		unsigned sf = tatp_type4(g), t = (unsigned)dmr_gen_below(g->r, DMR_TATP_STARTS);

		if (!TATP_OP(g, 'R', DMR_TATP_SEC_SUBSCRIBER, 0, s, NULL) ||
		    !TATP_OP(g, 'D', DMR_TATP_CALL_FORWARDING, 1, dmr_tatp_cf_slot(S, s, sf, t),
			     &k))
			return -1;
		if (g->cfg->cf_check) {
			if (!(op = TATP_OP(g, 'U', DMR_TATP_SPECIAL_FACILITY, 2,
					   dmr_tatp_sf_slot(s, sf), NULL)))
				return -1;
			dmr_gen_guard(op, DMR_TGUARD_PRESENT, k, 0, 0);
			dmr_trace_op_act(op, DMR_TACT_ADD, DMR_TATP_SF_CF_COUNT, -1);
		}
		return 0;
	}
	}
	return -1;
}

static int tatp_draw_type(tatp_gen_t *g)
{
	const unsigned *pct = dmr_tatp_mix_pct(g->cfg);
	uint64_t u = dmr_gen_below(g->r, 100), acc = 0;

	for (int i = 0; i < DMR_TATP_NTYPES; i++) {
		acc += pct[i];
		if (u < acc)
			return i;
	}
	return DMR_TATP_T_GET_SUBSCRIBER_DATA; /* not reached: the mix sums to 100 */
}

dmr_status_t dmr_tatp_generate(const dmr_tatp_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       uint64_t *by_type_p, dmr_err_t *err)
{
	uint64_t by_type[DMR_TATP_NTYPES] = {0};
	tatp_gen_t g;
	dmr_status_t st;

	if ((st = tatp_check(cfg, err)) != DMR_OK)
		return st;
	memset(&g, 0, sizeof(g));
	g.cfg = cfg;
	g.A = dmr_tatp_nurand_a(cfg->subscribers);
	g.r = gsl_rng_alloc(gsl_rng_mt19937);
	g.t = malloc(sizeof(*g.t));
	if (g.r == NULL || g.t == NULL) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "tatp: out of memory");
		goto out;
	}
	gsl_rng_set(g.r, (unsigned long)cfg->seed);
	for (uint64_t id = 0; id < cfg->txns; id++) {
		int type = tatp_draw_type(&g);

		dmr_gen_txn_begin(g.t, id, type);
		if (tatp_txn(&g, type) != 0) {
			st = dmr_err_set(err, DMR_ERR_RANGE,
					 "tatp: txn %" PRIu64 " (%s): too many ops", id,
					 dmr_tatp_type_names[type]);
			goto out;
		}
		by_type[type]++;
		if ((st = emit(arg, g.t, err)) != DMR_OK)
			goto out;
	}
	if (by_type_p)
		memcpy(by_type_p, by_type, sizeof(by_type));
out:
	free(g.t);
	gsl_rng_free(g.r);
	return st;
}

/* ---- command line ------------------------------------------------------- */

enum { OPT_SUBSCRIBERS = 256, OPT_DIST, OPT_MIX, OPT_CF_CHECK, OPT_PRESET, OPT_QUIET };
enum { SET_SUBSCRIBERS = 1, SET_MIX = 2 };

static void tatp_usage(FILE *f)
{
	fputs("usage: dmreplay gen tatp -o FILE [options]\n"
	      "TATP v1.0 transactions over subscriber, sec_subscriber, access_info,\n"
	      "special_facility and call_forwarding; see traces/GENERATORS.md.\n"
	      "  --subscribers N   subscribers, 1..1000000000 (default 100000)\n"
	      "  --dist D          nurand (the spec's non-uniform s_id, default) | uniform\n"
	      "  --mix M           spec = 35/10/35/2/14/2/2 GSD/GND/GAD/USD/UL/ICF/DCF\n"
	      "                    (default), crest = 36/10/36/2/14/2/0, or seven\n"
	      "                    percentages summing to 100\n"
	      "  --cf-check on|off the call_forwarding balance counter (default on):\n"
	      "                    INSERT locks the special facility and adds 1 to it,\n"
	      "                    DELETE subtracts 1 when it deleted a row\n"
	      "  --preset P        crest = adslabcuhk/crest's TATP: --subscribers\n"
	      "                    1000000 --mix crest (options given explicitly win)\n"
	      "  --quiet           no footprint lines\n",
	      f);
	dmr_gen_common_help(f);
	fputs("A hot:K/P regime replaces --dist: fraction P of the s_id draws go to\n"
	      "subscribers 0..K-1. Default --txns 100000.\n",
	      f);
}

typedef struct tatp_cli {
	dmr_tatp_cfg_t cfg;
	uint64_t by_type[DMR_TATP_NTYPES];
	const char *preset;
	unsigned set;
} tatp_cli_t;

static dmr_status_t tatp_run(void *ctx, dmr_gen_emit_func_t emit, void *emit_arg, dmr_err_t *err)
{
	tatp_cli_t *t = ctx;

	return dmr_tatp_generate(&t->cfg, emit, emit_arg, t->by_type, err);
}

static int tatp_opt(void *ctx, int c, const char *arg)
{
	tatp_cli_t *t = ctx;
	dmr_err_t err;
	uint64_t v;

	switch (c) {
	case OPT_SUBSCRIBERS:
		if (dmr_gen_parse_count("tatp", "subscribers", arg, 1, DMR_TATP_MAX_SUBSCRIBERS,
					&v) != 0)
			return -1;
		t->cfg.subscribers = v;
		t->set |= SET_SUBSCRIBERS;
		return 0;
	case OPT_DIST:
		for (int i = 0; i < 2; i++)
			if (strcmp(arg, tatp_dist_names[i]) == 0) {
				t->cfg.dist = i;
				return 0;
			}
		fprintf(stderr, "tatp: --dist: '%s' is not nurand or uniform\n", arg);
		return -1;
	case OPT_MIX:
		if (dmr_tatp_mix_parse(arg, &t->cfg, &err) != DMR_OK) {
			fprintf(stderr, "tatp: %s\n", err.msg);
			return -1;
		}
		t->set |= SET_MIX;
		return 0;
	case OPT_CF_CHECK:
		if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
			t->cfg.cf_check = arg[1] == 'n';
			return 0;
		}
		fprintf(stderr, "tatp: --cf-check: '%s' is not on or off\n", arg);
		return -1;
	case OPT_PRESET:
		if (strcmp(arg, "crest") != 0) {
			fprintf(stderr, "tatp: --preset: '%s' unknown (known: crest)\n", arg);
			return -1;
		}
		t->preset = arg;
		return 0;
	case OPT_QUIET:
		t->cfg.quiet = 1;
		return 0;
	}
	return -1;
}

static int tatp_prepare(void *ctx, const dmr_gen_common_t *cm, dmr_trace_hdr_t *hdr)
{
	tatp_cli_t *t = ctx;
	dmr_tatp_cfg_t *cfg = &t->cfg;
	dmr_err_t err = {{0}};

	if (t->preset) {
		/* adslabcuhk/crest config/tatp_config.json num_subscriber and
		 * TATPConstant.h FREQUENCY_* */
		if (!(t->set & SET_SUBSCRIBERS))
			cfg->subscribers = 1000000;
		if (!(t->set & SET_MIX))
			cfg->mix = DMR_TATP_MIX_CREST;
		cfg->preset = "crest";
	}
	if (cm->txns_set)
		cfg->txns = cm->txns;
	cfg->seed = cm->seed;
	cfg->regime = cm->regime;
	if (dmr_tatp_header(cfg, hdr, &err) != DMR_OK) {
		fprintf(stderr, "tatp: %s\n", err.msg);
		return 2;
	}
	return 0;
}

static void tatp_done(void *ctx, const dmr_gen_common_t *cm)
{
	const tatp_cli_t *t = ctx;
	const uint64_t *n = t->by_type;

	if (!t->cfg.quiet)
		fprintf(stderr,
			"tatp: wrote %" PRIu64 " txns to %s (GSD %" PRIu64 " GND %" PRIu64
			" GAD %" PRIu64 " USD %" PRIu64 " UL %" PRIu64 " ICF %" PRIu64
			" DCF %" PRIu64 ")\n",
			t->cfg.txns, dmr_gen_out_name(cm->out), n[0], n[1], n[2], n[3], n[4], n[5],
			n[6]);
}

int dmr_gen_tatp_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    DMR_GEN_COMMON_LONGOPTS,
	    {"subscribers", required_argument, NULL, OPT_SUBSCRIBERS},
	    {"dist", required_argument, NULL, OPT_DIST},
	    {"mix", required_argument, NULL, OPT_MIX},
	    {"cf-check", required_argument, NULL, OPT_CF_CHECK},
	    {"preset", required_argument, NULL, OPT_PRESET},
	    {"quiet", no_argument, NULL, OPT_QUIET},
	    {NULL, 0, NULL, 0},
	};
	static const dmr_gen_cli_t cli = {.prog = "tatp",
					  .opts = opts,
					  .usage = tatp_usage,
					  .opt = tatp_opt,
					  .prepare = tatp_prepare,
					  .run = tatp_run,
					  .done = tatp_done};
	tatp_cli_t t;

	memset(&t, 0, sizeof(t));
	dmr_tatp_cfg_default(&t.cfg);
	return dmr_gen_cli_main(&cli, &t, argc, argv);
}
