/*
 * traces/smallbank.c - SmallBank trace generator (see smallbank.h and
 * traces/GENERATORS.md for the mapping and the deviations).
 */
#include "smallbank.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "zipf.h"

const char *const dmr_smallbank_table_names[DMR_SB_NTABLES] = {"savings", "checking"};
const char *const dmr_smallbank_type_names[DMR_SB_NTYPES] = {
    "Amalgamate", "Balance", "DepositChecking", "SendPayment", "TransactSavings", "WriteCheck",
};
const unsigned dmr_smallbank_mix_pct[DMR_SB_NTYPES] = {15, 15, 15, 25, 15, 15};

typedef struct sb_gen {
	const dmr_smallbank_cfg_t *cfg;
	gsl_rng *r;
	dmr_trace_txn_t *t;
	dmr_zipf_t zipf;
	dmr_zipf_ri_t zri;
	int use_zipf; /* 1 zipf (Gray), 2 zri (--theta) */
} sb_gen_t;

void dmr_smallbank_cfg_default(dmr_smallbank_cfg_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->txns = 100000;
	cfg->seed = 1;
	cfg->accounts = 100000;
	cfg->zipf_theta = -1;
	dmr_gen_regime_uniform(&cfg->regime);
}

static dmr_status_t sb_check(const dmr_smallbank_cfg_t *cfg, dmr_err_t *err)
{
	if (cfg->accounts < 2 || cfg->accounts > (UINT64_C(1) << 40))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "smallbank: accounts %" PRIu64 " not in [2, 2^40]",
				   cfg->accounts);
	if (cfg->zipf_theta >= 1.0)
		return dmr_err_set(err, DMR_ERR_INVALID, "smallbank: zipf theta %g not in [0, 1)",
				   cfg->zipf_theta);
	if (cfg->theta_set && !(cfg->theta >= 0.0 && cfg->theta <= 5.0))
		return dmr_err_set(err, DMR_ERR_INVALID, "--theta %g not in [0, 5]", cfg->theta);
	if (cfg->theta_set && cfg->zipf_theta >= 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--theta and --zipf both choose the accounts: give one (--theta "
				   "draws exactly, any theta; --zipf is YCSB's closed form, < 1)");
	if (cfg->theta_set && !cfg->regime.uniform && cfg->regime.hot_k > 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--theta and --regime %s both choose the accounts: give one",
				   cfg->regime.name);
	return DMR_OK;
}

dmr_status_t dmr_smallbank_header(const dmr_smallbank_cfg_t *cfg, dmr_trace_hdr_t *hdr_p,
				  dmr_err_t *err)
{
	dmr_trace_hdr_t *h;
	uint64_t fp;
	dmr_status_t st;

	if ((st = sb_check(cfg, err)) != DMR_OK ||
	    (st = dmr_gen_regime_check(&cfg->regime, cfg->accounts, "accounts", err)) != DMR_OK)
		return st;
	if ((h = malloc(sizeof(*h))) == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "smallbank: out of memory");
	if ((st = dmr_gen_hdr_begin(h, "smallbank", cfg->txns, cfg->seed, &cfg->regime, err)) !=
	    DMR_OK)
		goto out;
	for (int i = 0; i < DMR_SB_NTABLES; i++)
		dmr_gen_hdr_table(h, dmr_smallbank_table_names[i], cfg->accounts, DMR_SB_WORDS * 8,
				  cfg->accounts);
	for (int i = 0; i < DMR_SB_NTYPES; i++)
		snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "%s",
			 dmr_smallbank_type_names[i]);
	if (!cfg->quiet)
		fprintf(stderr, "smallbank: MN footprint (rows x (16 + payload)):\n");
	fp = dmr_gen_footprint(h, cfg->quiet ? NULL : stderr);
	if ((st = dmr_gen_hdr_setf(h, err, "accounts", "%" PRIu64, cfg->accounts)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "max_amount", "%d", DMR_SB_MAX_AMOUNT)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "initial_total", "0")) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "footprint_bytes", "%" PRIu64, fp)) != DMR_OK)
		goto out;
	if (cfg->zipf_theta >= 0 &&
	    (st = dmr_gen_hdr_setf(h, err, "zipf_theta", "%g", cfg->zipf_theta)) != DMR_OK)
		goto out;
	if (cfg->theta_set &&
	    ((st = dmr_gen_hdr_setf(h, err, "zipf_theta", "%g", cfg->theta)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "zipf_method", "rejection-inversion")) != DMR_OK))
		goto out;
	if (cfg->zipf_theta >= 0)
		snprintf(h->regime, sizeof(h->regime), "zipf:%g", cfg->zipf_theta);
	if (cfg->theta_set)
		snprintf(h->regime, sizeof(h->regime), "zipf:%g", cfg->theta);
	/* drift (FORMAT.md "Drift"): the hot accounts are 0..K-1; both tables
	 * are partitioned per account and the hot set moves by K accounts */
	if (cfg->regime.drift_s > 0 &&
	    ((st = dmr_gen_hdr_setf(h, err, "drift_s", "%g", cfg->regime.drift_s)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "drift_shift", "%u", cfg->regime.hot_k)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "partitions", "%" PRIu64, cfg->accounts)) != DMR_OK ||
	     (st = dmr_gen_hdr_setf(h, err, "partitioned", "savings,checking")) != DMR_OK))
		goto out;
	*hdr_p = *h;
out:
	free(h);
	return st;
}

static uint64_t sb_account(sb_gen_t *g)
{
	if (g->use_zipf == 2)
		return dmr_zipf_ri_next(&g->zri, g->r);
	if (g->use_zipf)
		return dmr_zipf_next(&g->zipf, g->r);
	return dmr_gen_regime_draw(g->r, &g->cfg->regime, g->cfg->accounts);
}

/* A second account != a: from the same distribution, else uniform. */
static uint64_t sb_other(sb_gen_t *g, uint64_t a)
{
	uint64_t b = sb_account(g);

	return b != a ? b : dmr_gen_other(g->r, g->cfg->accounts, a);
}

static int sb_type(sb_gen_t *g)
{
	uint64_t u = dmr_gen_below(g->r, 100), acc = 0;

	for (int i = 0; i < DMR_SB_NTYPES; i++) {
		acc += dmr_smallbank_mix_pct[i];
		if (u < acc)
			return i;
	}
	return DMR_SB_T_BALANCE; /* not reached */
}

/* One transaction of `type` into g->t; all ops in round 0. */
static void sb_txn(sb_gen_t *g, int type)
{
	dmr_trace_txn_t *t = g->t;
	uint64_t a = sb_account(g), b;
	int64_t v = (int64_t)dmr_gen_range(g->r, 1, DMR_SB_MAX_AMOUNT);
	dmr_trace_op_t *op;
	int sa = 0, ca = 1; /* op indexes (set by dmr_gen_op) */

	switch (type) {
	case DMR_SB_T_AMALGAMATE: /* move all of A's money into B's checking */
		b = sb_other(g, a);
		op = dmr_gen_op(t, 'U', DMR_SB_SAVINGS, 0, (int64_t)a, &sa);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_SB_BALANCE, 0);
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)a, &ca);
		dmr_trace_op_act(op, DMR_TACT_SET, DMR_SB_BALANCE, 0);
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)b, NULL);
		dmr_trace_op_act_ref(op, DMR_TACT_ADD, DMR_SB_BALANCE, sa, DMR_SB_BALANCE);
		dmr_trace_op_act_ref(op, DMR_TACT_ADD, DMR_SB_BALANCE, ca, DMR_SB_BALANCE);
		break;
	case DMR_SB_T_BALANCE:
		dmr_gen_op(t, 'R', DMR_SB_SAVINGS, 0, (int64_t)a, NULL);
		dmr_gen_op(t, 'R', DMR_SB_CHECKING, 0, (int64_t)a, NULL);
		break;
	case DMR_SB_T_DEPOSIT_CHECKING:
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)a, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_SB_BALANCE, v);
		t->xv = v;
		break;
	case DMR_SB_T_SEND_PAYMENT: /* no insufficient-funds abort (see GENERATORS.md) */
		b = sb_other(g, a);
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)a, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_SB_BALANCE, -v);
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)b, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_SB_BALANCE, v);
		break;
	case DMR_SB_T_TRANSACT_SAVINGS:
		op = dmr_gen_op(t, 'U', DMR_SB_SAVINGS, 0, (int64_t)a, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_SB_BALANCE, v);
		t->xv = v;
		break;
	case DMR_SB_T_WRITE_CHECK: /* no overdraft penalty (see GENERATORS.md) */
		dmr_gen_op(t, 'R', DMR_SB_SAVINGS, 0, (int64_t)a, NULL);
		op = dmr_gen_op(t, 'U', DMR_SB_CHECKING, 0, (int64_t)a, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_SB_BALANCE, -v);
		t->xv = -v;
		break;
	}
}

dmr_status_t dmr_smallbank_generate(const dmr_smallbank_cfg_t *cfg, dmr_gen_emit_func_t emit,
				    void *arg, uint64_t *by_type_p, dmr_err_t *err)
{
	uint64_t by_type[DMR_SB_NTYPES] = {0};
	sb_gen_t g;
	dmr_status_t st;

	if ((st = sb_check(cfg, err)) != DMR_OK)
		return st;
	memset(&g, 0, sizeof(g));
	g.cfg = cfg;
	g.r = gsl_rng_alloc(gsl_rng_mt19937);
	g.t = malloc(sizeof(*g.t));
	if (g.r == NULL || g.t == NULL) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "smallbank: out of memory");
		goto out;
	}
	gsl_rng_set(g.r, (unsigned long)cfg->seed);
	if (cfg->zipf_theta >= 0) {
		g.use_zipf = 1;
		dmr_zipf_init(&g.zipf, 0, cfg->accounts - 1, cfg->zipf_theta);
	}
	if (cfg->theta_set) {
		g.use_zipf = 2;
		dmr_zipf_ri_init(&g.zri, cfg->accounts, cfg->theta);
	}
	for (uint64_t id = 0; id < cfg->txns; id++) {
		int type = sb_type(&g);

		dmr_gen_txn_begin(g.t, id, type);
		sb_txn(&g, type);
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

enum { OPT_ACCOUNTS = 256, OPT_ZIPF, OPT_QUIET, OPT_THETA };

static void sb_usage(FILE *f)
{
	fputs("usage: dmreplay gen smallbank -o FILE [options]\n"
	      "SmallBank (Amalgamate 15, Balance 15, DepositChecking 15, SendPayment 25,\n"
	      "TransactSavings 15, WriteCheck 15 percent) as a dmreplay trace.\n"
	      "  --accounts N      accounts (default 100000); tables savings, checking\n"
	      "  --zipf THETA      Zipf(THETA) account popularity, 0 <= THETA < 1\n"
	      "                    (account 0 hottest); excludes a non-uniform --regime\n"
	      "  --theta T         Zipf(T) drawn exactly (rejection-inversion), any T in\n"
	      "                    [0, 5] (1 and above included); instead of --zipf\n"
	      "  --quiet           no footprint lines\n",
	      f);
	dmr_gen_common_help(f);
	fputs("hot:K/P sends fraction P of the account draws to accounts 0..K-1.\n"
	      "Default --txns 100000.\n",
	      f);
}

static dmr_status_t sb_run(void *ctx, dmr_gen_emit_func_t emit, void *emit_arg, dmr_err_t *err)
{
	return dmr_smallbank_generate(ctx, emit, emit_arg, NULL, err);
}

static int sb_opt(void *ctx, int c, const char *arg)
{
	dmr_smallbank_cfg_t *cfg = ctx;

	switch (c) {
	case OPT_ACCOUNTS:
		return dmr_gen_parse_count("smallbank", "accounts", arg, 2, UINT64_C(1) << 40,
					   &cfg->accounts);
	case OPT_ZIPF:
		return dmr_gen_parse_double("smallbank", "zipf", arg, 0.0, 0.999999,
					    &cfg->zipf_theta);
	case OPT_QUIET:
		cfg->quiet = 1;
		return 0;
	case OPT_THETA:
		cfg->theta_set = 1;
		return dmr_gen_parse_double("smallbank", "theta", arg, 0.0, 5.0, &cfg->theta);
	}
	return -1;
}

static int sb_prepare(void *ctx, const dmr_gen_common_t *cm, dmr_trace_hdr_t *hdr)
{
	dmr_smallbank_cfg_t *cfg = ctx;
	dmr_err_t err = {{0}};

	if (cfg->zipf_theta >= 0 && cm->regime_set && !cm->regime.uniform) {
		fprintf(stderr, "smallbank: --zipf and --regime %s exclude each other\n",
			cm->regime.name);
		return 2;
	}
	if (cm->txns_set)
		cfg->txns = cm->txns;
	cfg->seed = cm->seed;
	cfg->regime = cm->regime;
	if (dmr_smallbank_header(cfg, hdr, &err) != DMR_OK) {
		fprintf(stderr, "smallbank: %s\n", err.msg);
		return 2;
	}
	return 0;
}

/* The summary line, as tpcc's (its counts are the transactions asked for:
 * the generator writes every one). */
static void sb_done(void *ctx, const dmr_gen_common_t *cm)
{
	const dmr_smallbank_cfg_t *cfg = ctx;

	if (!cfg->quiet)
		fprintf(stderr, "smallbank: wrote %" PRIu64 " txns to %s (%" PRIu64 " accounts)\n",
			cfg->txns, dmr_gen_out_name(cm->out), cfg->accounts);
}

int dmr_gen_smallbank_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    DMR_GEN_COMMON_LONGOPTS,
	    {"accounts", required_argument, NULL, OPT_ACCOUNTS},
	    {"zipf", required_argument, NULL, OPT_ZIPF},
	    {"quiet", no_argument, NULL, OPT_QUIET},
	    {"theta", required_argument, NULL, OPT_THETA},
	    {NULL, 0, NULL, 0},
	};
	static const dmr_gen_cli_t cli = {.prog = "smallbank",
					  .opts = opts,
					  .usage = sb_usage,
					  .opt = sb_opt,
					  .prepare = sb_prepare,
					  .run = sb_run,
					  .done = sb_done};
	dmr_smallbank_cfg_t cfg;

	dmr_smallbank_cfg_default(&cfg);
	return dmr_gen_cli_main(&cli, &cfg, argc, argv);
}
