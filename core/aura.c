/*
 * core/aura.c - AURA levers, cost model and tuners (see aura.h).
 */
#include "aura.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/opt.h"

#define NIL UINT32_MAX

static const char *const wnames[DMR_AURA_NW] = {"atomic", "rpc", "move", "load"};
static const char *const lnames[4] = {"a1", "a2", "a3", "a4"};

void dmr_aura_cfg_default(dmr_aura_cfg_t *c)
{
	memset(c, 0, sizeof(*c));
	c->levers = DMR_AURA_ALL;
	c->tuner = DMR_AURA_SGD;
	/* REFERENCE.md section 3: start values atomic 0.5, rpc 1.0, move 2.5,
	 * load 0.18 */
	c->w[DMR_AURA_W_ATOMIC] = 0.5;
	c->w[DMR_AURA_W_RPC] = 1.0;
	c->w[DMR_AURA_W_MOVE] = 2.5;
	c->w[DMR_AURA_W_LOAD] = 0.18;
	c->lr = 0.1;	    /* ours: NLMS is stable for 0 < lr < 2 */
	c->threshold = 0.5; /* the loop's abort threshold (core/loop.h) */
	c->cache_write_frac = 0.01;
}

dmr_status_t dmr_aura_parse_levers(const char *s, unsigned *levers_p, dmr_err_t *err)
{
	if (strcmp(s, "none") == 0) {
		*levers_p = 0;
		return DMR_OK;
	}
	if (strcmp(s, "all") == 0) {
		*levers_p = DMR_AURA_ALL;
		return DMR_OK;
	}
	unsigned lv = 0;
	const char *p = s;
	for (;;) {
		size_t n = strcspn(p, ",+");
		int k = -1;
		for (int i = 0; i < 4; i++)
			if (n == 2 && memcmp(p, lnames[i], 2) == 0)
				k = i;
		if (n == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-levers '%s': empty part (none, all, or a1, a2, "
					   "a3, a4 joined by ',' or '+')",
					   s);
		if (k < 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-levers '%s': unknown lever '%.*s' (none, all, "
					   "or a1, a2, a3, a4 joined by ',' or '+')",
					   s, (int)n, p);
		if (lv & (1u << k))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-levers '%s': lever '%s' named twice", s,
					   lnames[k]);
		lv |= 1u << k;
		if (!p[n])
			break;
		p += n + 1;
	}
	*levers_p = lv;
	return DMR_OK;
}

const char *dmr_aura_levers_name(unsigned levers, char *buf, size_t len)
{
	size_t o = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	for (int i = 0; i < 4; i++) {
		if (!(levers & (1u << i)) || o >= len)
			continue;
		int k = snprintf(buf + o, len - o, "%s%s", o ? "+" : "", lnames[i]);
		if (k > 0)
			o += (size_t)k;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

static const char *const tnames[3] = {"fixed", "rule", "sgd"};

const char *dmr_aura_tuner_name(dmr_aura_tuner_t t)
{
	return (unsigned)t < 3 ? tnames[t] : "?";
}

dmr_status_t dmr_aura_parse_tuner(const char *s, dmr_aura_tuner_t *t_p, dmr_err_t *err)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, tnames[i]) == 0) {
			*t_p = (dmr_aura_tuner_t)i;
			return DMR_OK;
		}
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "--aura-tuner '%s': unknown tuner (fixed, rule or sgd)", s);
}

dmr_status_t dmr_aura_parse_weights(const char *s, double w[DMR_AURA_NW], unsigned *seen_p,
				    dmr_err_t *err)
{
	double nw[DMR_AURA_NW];
	unsigned seen = 0;
	memcpy(nw, w, sizeof(nw));
	const char *p = s;
	if (!*s)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "--aura-weights '': empty (name=value pairs joined by ',', "
				   "names atomic, rpc, move, load)");
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		if (!eq)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-weights '%s': '%.*s' is not name=value (names "
					   "atomic, rpc, move, load)",
					   s, (int)n, p);
		size_t kn = (size_t)(eq - p);
		int k = -1;
		for (int i = 0; i < DMR_AURA_NW; i++)
			if (strlen(wnames[i]) == kn && memcmp(p, wnames[i], kn) == 0)
				k = i;
		if (k < 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-weights '%s': unknown weight '%.*s' (atomic, "
					   "rpc, move, load)",
					   s, (int)kn, p);
		if (seen & (1u << k))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-weights '%s': weight '%s' given twice", s,
					   wnames[k]);
		seen |= 1u << k;
		char num[64];
		size_t vn = n - kn - 1;
		if (vn == 0 || vn >= sizeof(num))
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--aura-weights '%s': weight '%s': expected a number >= "
					   "0, got '%.*s'",
					   s, wnames[k], (int)vn, eq + 1);
		memcpy(num, eq + 1, vn);
		num[vn] = 0;
		/* the number as --aura-w-NAME takes it (one parser, one verdict) */
		char what[96];
		snprintf(what, sizeof(what), "--aura-weights '%s', weight '%s'", s, wnames[k]);
		double v;
		if (dmr_opt_double(what, num, 0, DMR_AURA_W_MAX, 0, &v, err) != DMR_OK)
			return DMR_ERR_PARSE;
		nw[k] = v;
		if (!p[n])
			break;
		p += n + 1;
	}
	memcpy(w, nw, sizeof(nw));
	if (seen_p)
		*seen_p = seen;
	return DMR_OK;
}

/* Per group: the open window's measures and the levers' state. */
typedef struct group {
	/* window */
	uint64_t commits, atomics, rpcs, txns, locks;
	uint64_t rpc_commits, rpc_lat_ps, os_commits, os_lat_ps;
	/* state */
	uint8_t rpc;
	uint8_t rpc_nofit; /* A1 asked, the transaction ran one-sided: never again */
	uint32_t owner;
	double os_apc;	/* atomics per commit when last one-sided and unowned (< 0: never) */
	double lock_pt; /* locks per transaction (its U/I/D ops; < 0: not seen) */
	double rpc_pc;	/* RPCs per commit when it last went by RPC (1 before) */
	double cur_apc; /* atomics per commit in the window just closed */
} group_t;

typedef struct gorder {
	uint64_t commits;
	uint32_t g;
} gorder_t;

typedef struct table {
	uint64_t rows;
	uint64_t reads, writes; /* window */
	uint8_t cached;
} table_t;

struct dmr_aura {
	dmr_aura_cfg_t cfg;
	uint32_t ncn, slots, ngroups, ntables;
	uint64_t window_ps, wend, widx;
	group_t *g;
	table_t *t;
	uint64_t *cn_txns; /* window: transactions finished per CN (its load) */
	double *load;	   /* scratch: predicted commits per CN */
	gorder_t *order;   /* scratch: groups by commits */
	double w[DMR_AURA_NW];
	/* window totals */
	uint64_t w_tried, w_aborts, w_commits, w_lat_ps, w_moves;
	uint32_t move_hist; /* bit k: the decision k windows ago moved an owner */
	/* since the last sample */
	uint64_t s_moves, s_spills, s_windows;
	double cost_pred, cost_obs;
	/* run */
	dmr_aura_summary_t sum;
};

dmr_status_t dmr_aura_create(const dmr_aura_cfg_t *cfg, uint32_t ncn, uint32_t slots,
			     const dmr_layout_t *l, uint64_t window_ps, dmr_aura_t **a_p,
			     dmr_err_t *err)
{
	uint32_t groups = cfg->groups ? cfg->groups : 64;
	if (groups > DMR_AURA_MAX_GROUPS || !ncn || !window_ps)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "aura: %u record groups (1..%u), %u CNs, window %llu ps", groups,
				   DMR_AURA_MAX_GROUPS, ncn, (unsigned long long)window_ps);
	dmr_aura_t *a = calloc(1, sizeof(*a));
	if (!a)
		return dmr_err_set(err, DMR_ERR_NOMEM, "aura: out of memory");
	a->cfg = *cfg;
	a->ncn = ncn;
	a->slots = slots ? slots : 1;
	a->ngroups = groups;
	uint32_t ntables = l->ntables;
	a->ntables = ntables;
	a->window_ps = window_ps;
	a->wend = window_ps;
	memcpy(a->w, cfg->w, sizeof(a->w));
	a->g = calloc(groups, sizeof(*a->g));
	a->t = calloc(ntables ? ntables : 1, sizeof(*a->t));
	a->cn_txns = calloc(ncn, sizeof(*a->cn_txns));
	a->load = calloc(ncn, sizeof(*a->load));
	a->order = calloc(groups, sizeof(*a->order));
	if (!a->g || !a->t || !a->cn_txns || !a->load || !a->order) {
		dmr_aura_destroy(a);
		return dmr_err_set(err, DMR_ERR_NOMEM, "aura: out of memory");
	}
	for (uint32_t i = 0; i < groups; i++) {
		a->g[i].owner = NIL;
		a->g[i].os_apc = -1;
		a->g[i].lock_pt = -1;
		a->g[i].rpc_pc = 1;
	}
	for (uint32_t i = 0; i < ntables; i++)
		a->t[i].rows = l->t[i].rows;
	*a_p = a;
	return DMR_OK;
}

void dmr_aura_destroy(dmr_aura_t *a)
{
	if (!a)
		return;
	free(a->g);
	free(a->t);
	free(a->cn_txns);
	free(a->load);
	free(a->order);
	free(a);
}

uint32_t dmr_aura_group(const dmr_aura_t *a, const dmr_trace_txn_t *txn)
{
	for (uint32_t i = 0; i < txn->nops; i++) {
		const dmr_trace_op_t *op = &txn->ops[i];
		if (op->dep.op >= 0 || op->table >= a->ntables || op->key < 0)
			continue;
		uint64_t rows = a->t[op->table].rows;
		if (!rows)
			continue;
		uint64_t g = (uint64_t)op->key * a->ngroups / rows;
		return g < a->ngroups ? (uint32_t)g : a->ngroups - 1;
	}
	return 0;
}

uint32_t dmr_aura_owner(const dmr_aura_t *a, uint32_t g)
{
	return g < a->ngroups ? a->g[g].owner : NIL;
}

int dmr_aura_rpc(const dmr_aura_t *a, uint32_t g)
{
	return g < a->ngroups && a->g[g].rpc;
}

uint32_t dmr_aura_cache_mask(const dmr_aura_t *a)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < a->ntables && i < 32; i++)
		if (a->t[i].cached)
			m |= 1u << i;
	return m;
}

uint32_t dmr_aura_inbox_bound(const dmr_aura_t *a)
{
	return a->slots;
}

uint32_t dmr_aura_route(dmr_aura_t *a, uint32_t g, uint32_t reader_cn, uint32_t inbox_len)
{
	if (g >= a->ngroups || !(a->cfg.levers & DMR_AURA_A2))
		return reader_cn;
	uint32_t o = a->g[g].owner;
	if (o == NIL || o == reader_cn)
		return reader_cn;
	if ((a->cfg.levers & DMR_AURA_A4) && inbox_len >= a->slots) {
		a->s_spills++;
		a->sum.spills++;
		return reader_cn;
	}
	return o;
}

void dmr_aura_txn_done(dmr_aura_t *a, const dmr_aura_done_t *d)
{
	if (d->group >= a->ngroups)
		return;
	group_t *g = &a->g[d->group];
	a->w_tried += d->attempts;
	if (d->cn < a->ncn)
		a->cn_txns[d->cn]++;
	a->w_aborts += d->attempts - (d->committed ? 1 : 0);
	g->atomics += d->atomics;
	g->rpcs += d->rpcs;
	if (d->rpc_asked && !d->rpc)
		g->rpc_nofit = 1;
	if (!d->committed)
		return;
	g->commits++;
	a->w_commits++;
	a->w_lat_ps += d->latency_ps;

	if (d->rpc) {
		g->rpc_commits++;
		g->rpc_lat_ps += d->latency_ps;
	} else {
		g->os_commits++;
		g->os_lat_ps += d->latency_ps;
	}
}

void dmr_aura_txn_tables(dmr_aura_t *a, const dmr_trace_txn_t *txn)
{
	uint64_t locks = 0;
	for (uint32_t i = 0; i < txn->nops; i++) {
		const dmr_trace_op_t *op = &txn->ops[i];
		if (op->table >= a->ntables)
			continue;
		if (op->kind == DMR_TOP_READ) {
			a->t[op->table].reads += op->count ? op->count : 1;
		} else {
			a->t[op->table].writes++;
			locks++;
		}
	}
	group_t *g = &a->g[dmr_aura_group(a, txn)];
	g->txns++;
	g->locks += locks;
}

/* (max - mean) / mean of v[n]; 0 when empty. */
static double imbalance(const double *v, uint32_t n)
{
	double s = 0, mx = 0;
	for (uint32_t i = 0; i < n; i++) {
		s += v[i];
		if (v[i] > mx)
			mx = v[i];
	}
	if (s <= 0)
		return 0;
	double mean = s / n;
	return (mx - mean) / mean;
}

/* Most transactions first; ties by group index (deterministic). */
static int cmp_order(const void *x, const void *y)
{
	const gorder_t *i = x, *j = y;
	if (i->commits != j->commits)
		return i->commits > j->commits ? -1 : 1;
	return i->g < j->g ? -1 : (i->g > j->g);
}

/* Tune the weights on the window just closed (features x, observed y). */
static void tune(dmr_aura_t *a, const double x[DMR_AURA_NW], double y, double imb)
{
	double *w = a->w;
	if (a->cfg.tuner == DMR_AURA_SGD) {
		double pred = 0, xx = 0;
		for (int i = 0; i < DMR_AURA_NW; i++) {
			pred += w[i] * x[i];
			xx += x[i] * x[i];
		}
		double step = a->cfg.lr * (y - pred) / (1.0 + xx);
		for (int i = 0; i < DMR_AURA_NW; i++) {
			w[i] += step * x[i];
			if (!(w[i] > 0))
				w[i] = 0;
		}
	} else if (a->cfg.tuner == DMR_AURA_RULE) {
		int dir[DMR_AURA_NW] = {0, 0, 0, 0};
		double ar = a->w_tried ? (double)a->w_aborts / (double)a->w_tried : 0;
		if (a->w_tried)
			dir[DMR_AURA_W_ATOMIC] =
			    ar > a->cfg.threshold ? 1 : (ar < a->cfg.threshold / 2 ? -1 : 0);
		uint64_t rc = 0, rl = 0, oc = 0, ol = 0;
		for (uint32_t i = 0; i < a->ngroups; i++) {
			rc += a->g[i].rpc_commits;
			rl += a->g[i].rpc_lat_ps;
			oc += a->g[i].os_commits;
			ol += a->g[i].os_lat_ps;
		}
		if (rc && oc)
			dir[DMR_AURA_W_RPC] = (double)rl / rc > (double)ol / oc ? 1 : -1;
		/* moves in each of the last two decisions: flapping; none in
		 * the last ten: moves are rare, cheapen them */
		if ((a->move_hist & 3u) == 3u)
			dir[DMR_AURA_W_MOVE] = 1;
		else if (a->widx >= 10 && (a->move_hist & 0x3ffu) == 0)
			dir[DMR_AURA_W_MOVE] = -1;
		dir[DMR_AURA_W_LOAD] = imb > 0.5 ? 1 : (imb < 0.1 ? -1 : 0);
		for (int i = 0; i < DMR_AURA_NW; i++) {
			double lo = a->cfg.w[i] / 16, hi = a->cfg.w[i] * 16;
			if (dir[i] > 0)
				w[i] = w[i] * 1.25 > hi ? hi : w[i] * 1.25;
			else if (dir[i] < 0)
				w[i] = w[i] * 0.8 < lo ? lo : w[i] * 0.8;
		}
	}
}

/* Predicted cost per commit of group g taking option (rpc, owner), given
 * the predicted load vector a->load (transactions per CN; the group's
 * share already removed): w . (atomics, RPCs, moves per commit, the
 * cluster's imbalance after the placement). Adds the group's share to
 * a->load when commit != 0. */
static double option_cost(dmr_aura_t *a, const group_t *g, int rpc, uint32_t owner, int commit)
{
	double c = g->commits ? (double)g->commits : 1, n = (double)g->txns;
	double atomics = 0, rpcs = 0, moves = owner != g->owner ? 1 / c : 0;
	if (rpc)
		rpcs = g->rpc_pc;
	else if (owner != NIL)
		atomics = g->lock_pt; /* no conflict: each lock taken once */
	else
		atomics = g->os_apc >= 0 ? g->os_apc : g->cur_apc;
	if (owner != NIL)
		a->load[owner] += n;
	else
		for (uint32_t k = 0; k < a->ncn; k++)
			a->load[k] += n / a->ncn;
	double imb = imbalance(a->load, a->ncn);
	if (!commit) {
		if (owner != NIL)
			a->load[owner] -= n;
		else
			for (uint32_t k = 0; k < a->ncn; k++)
				a->load[k] -= n / a->ncn;
	}
	const double *w = a->w;
	return w[DMR_AURA_W_ATOMIC] * atomics + w[DMR_AURA_W_RPC] * rpcs +
	       w[DMR_AURA_W_MOVE] * moves + w[DMR_AURA_W_LOAD] * imb;
}

/* The least loaded CN of the prediction (lowest index on ties). */
static uint32_t least_loaded(const dmr_aura_t *a)
{
	uint32_t best = 0;
	for (uint32_t k = 1; k < a->ncn; k++)
		if (a->load[k] < a->load[best])
			best = k;
	return best;
}

/* Decide the levers for the next window from the one just closed; returns
 * the ownership moves made. */
static uint64_t decide(dmr_aura_t *a)
{
	unsigned lv = a->cfg.levers;
	gorder_t *ord = a->order;
	uint32_t n = 0;
	double total = 0;
	for (uint32_t i = 0; i < a->ngroups; i++)
		if (a->g[i].txns) {
			ord[n].commits = a->g[i].txns;
			ord[n].g = i;
			total += (double)a->g[i].txns;
			n++;
		}
	qsort(ord, n, sizeof(*ord), cmp_order);
	/* start from every active group spread evenly; each decision moves
	 * its share where its option puts it */
	for (uint32_t k = 0; k < a->ncn; k++)
		a->load[k] = total / a->ncn;
	uint64_t moves = 0;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t gi = ord[r].g;
		group_t *g = &a->g[gi];
		for (uint32_t k = 0; k < a->ncn; k++)
			a->load[k] -= (double)g->txns / a->ncn;
		int best_rpc = 0;
		uint32_t best_owner = NIL;
		double best = option_cost(a, g, 0, NIL, 0);
		if ((lv & DMR_AURA_A1) && !g->rpc_nofit) {
			double c = option_cost(a, g, 1, NIL, 0);
			if (c < best) {
				best = c;
				best_rpc = 1;
			}
		}
		if ((lv & DMR_AURA_A2) && g->lock_pt >= 0) {
			uint32_t k = (lv & DMR_AURA_A4)
					 ? (g->owner != NIL ? g->owner : least_loaded(a))
					 : gi % a->ncn;
			double c = option_cost(a, g, 0, k, 0);
			if (c < best) {
				best = c;
				best_rpc = 0;
				best_owner = k;
			}
			if ((lv & DMR_AURA_A4) && g->owner != NIL) {
				/* A4: moving to the least loaded CN */
				uint32_t k2 = least_loaded(a);
				double c2 = k2 != k ? option_cost(a, g, 0, k2, 0) : best + 1;
				if (c2 < best) {
					best = c2;
					best_rpc = 0;
					best_owner = k2;
				}
			}
		}
		(void)option_cost(a, g, best_rpc, best_owner, 1);
		if (best_owner != g->owner)
			moves++;
		g->rpc = (uint8_t)best_rpc;
		g->owner = best_owner;
	}
	/* A3: read-mostly tables (a rule; C has no read term) */
	if (lv & DMR_AURA_A3)
		for (uint32_t t = 0; t < a->ntables; t++) {
			table_t *tb = &a->t[t];
			if (tb->reads)
				tb->cached = (double)tb->writes <
					     a->cfg.cache_write_frac * (double)tb->reads;
		}
	return moves;
}

/* Close the open window. */
static void close_window(dmr_aura_t *a)
{
	/* measured features of the window, per commit, and the observed cost */
	uint64_t at = 0, rp = 0;
	double *cl = a->load;
	for (uint32_t k = 0; k < a->ncn; k++)
		cl[k] = (double)a->cn_txns[k];
	double imb = imbalance(cl, a->ncn);
	for (uint32_t i = 0; i < a->ngroups; i++) {
		group_t *g = &a->g[i];
		at += g->atomics;
		rp += g->rpcs;
		if (g->txns)
			g->lock_pt = (double)g->locks / (double)g->txns;
		if (g->commits && g->rpc && g->rpcs)
			g->rpc_pc = (double)g->rpcs / (double)g->commits;
		if (g->commits) {
			g->cur_apc = (double)g->atomics / (double)g->commits;
			if (!g->rpc && g->owner == NIL && g->os_commits == g->commits)
				g->os_apc = (double)g->atomics / (double)g->commits;
		}
	}
	a->cost_pred = a->cost_obs = 0;
	if (a->w_commits) {
		double c = (double)a->w_commits;
		double x[DMR_AURA_NW] = {(double)at / c, (double)rp / c, (double)a->w_moves / c,
					 imb};
		/* context time per commit (Little's law: every context of the
		 * cluster is busy, waiting or parked for the whole window) */
		double y = (double)a->window_ps / 1e6 * a->ncn * a->slots / c; /* us */
		double pred = 0;
		for (int i = 0; i < DMR_AURA_NW; i++)
			pred += a->w[i] * x[i];
		a->cost_pred = pred;
		a->cost_obs = y;
		tune(a, x, y, imb);
	}
	uint64_t moves = decide(a);
	a->move_hist = (a->move_hist << 1) | (moves ? 1u : 0u);
	a->w_moves = moves;
	a->s_moves += moves;
	a->sum.moves += moves;
	a->s_windows++;
	a->sum.windows++;
	for (uint32_t i = 0; i < a->ngroups; i++) {
		group_t *g = &a->g[i];
		a->sum.rpc_gw += g->rpc;
		a->sum.owned_gw += g->owner != NIL;
		g->commits = g->atomics = g->rpcs = g->txns = g->locks = 0;
		g->rpc_commits = g->rpc_lat_ps = g->os_commits = g->os_lat_ps = 0;
	}
	for (uint32_t t = 0; t < a->ntables; t++) {
		a->sum.cached_tw += a->t[t].cached;
		a->t[t].reads = a->t[t].writes = 0;
	}
	for (uint32_t k = 0; k < a->ncn; k++)
		a->cn_txns[k] = 0;
	a->w_tried = a->w_aborts = a->w_commits = a->w_lat_ps = 0;
	a->widx++;
}

uint32_t dmr_aura_tick(dmr_aura_t *a, uint64_t now_ps)
{
	uint32_t n = 0;
	if (now_ps < a->wend)
		return 0;
	close_window(a);
	n++;
	/* idle windows (nothing finished) decide nothing more */
	while (a->wend <= now_ps)
		a->wend += a->window_ps;
	return n;
}

void dmr_aura_sample(dmr_aura_t *a, dmr_aura_sample_t *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->w, a->w, sizeof(s->w));
	for (uint32_t i = 0; i < a->ngroups; i++) {
		s->rpc_groups += a->g[i].rpc;
		s->owned_groups += a->g[i].owner != NIL;
	}
	for (uint32_t t = 0; t < a->ntables; t++)
		s->cached_tables += a->t[t].cached;
	s->moves = a->s_moves;
	s->spills = a->s_spills;
	s->windows = a->s_windows;
	s->cost_pred = a->cost_pred;
	s->cost_obs = a->cost_obs;
	a->s_moves = a->s_spills = a->s_windows = 0;
}

void dmr_aura_summary(const dmr_aura_t *a, dmr_aura_summary_t *s)
{
	*s = a->sum;
	memcpy(s->w, a->w, sizeof(s->w));
}
