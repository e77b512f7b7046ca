/*
 * core/loop.c - admission control loops (see loop.h).
 */
#include "loop.h"

#include "base/timeps.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define HBITS 16

void dmr_loop_cfg_default(dmr_loop_cfg_t *c)
{
	c->loops = 0;
	c->ai_step = 4;
	c->md_factor = 2.0;
	c->window_ps = 5 * DMR_PS_PER_MS;
	c->threshold = 0.5;
	c->hot_windows = 2;
	c->doorbell_max = 32;
	c->doorbell_util = 0.2;
	dmr_aura_cfg_default(&c->aura);
}

static const dmr_loop_info_t loops_tab[] = {
    {"aimd", DMR_LOOP_AIMD, "the CN's aborts per attempt in the window",
     "transaction slots the CN admits at once", "loop_window_ms (5 ms), per CN",
     "1 <= slots <= threads x coros"},
    {"perkey", DMR_LOOP_PERKEY, "failed lock CAS per record", "admission per hot record",
     "a record stays hot hot_windows windows", "one admitted transaction per hot record per CN"},
    {"aimd-worker", DMR_LOOP_AIMD_WORKER, "the worker's aborts per attempt in the window",
     "transactions the worker admits at once", "loop_window_ms (5 ms), per worker",
     "1 <= limit <= coros"},
    {"doorbell", DMR_LOOP_DOORBELL,
     "utilisation of the MN links, MN PCIe/DMA and the CN's doorbell MMIOs in the window",
     "WRs the CN rings per doorbell", "loop_window_ms (5 ms), per CN",
     "1 <= WRs per doorbell <= doorbell_max (32)"},
    {"aura", DMR_LOOP_AURA,
     "per record group: atomics, RPCs, ownership moves, CN imbalance, abort rate; per table: "
     "reads and writes",
     "per group: access path (A1), owner CN (A2, A4); per table: CN cache (A3)",
     "loop_window_ms (5 ms), per cluster",
     "a group is one-sided, by RPC or owned by one CN; an inbox holds at most a CN's slots "
     "(A4)"},
    {"prefetch", DMR_LOOP_PREFETCH, "the KV pool's hit ratio in the window",
     "prefetch depth of the blocks predicted next", "kv run --loop-window-ms (1000 ms)",
     "0 <= depth <= --prefetch-max (8)"},
};
#define NLOOPS (sizeof(loops_tab) / sizeof(loops_tab[0]))

const dmr_loop_info_t *dmr_loop_info(size_t *n_p)
{
	*n_p = NLOOPS;
	return loops_tab;
}

/* What --loop takes, for a message: "none, or A, B, ... joined by +,
 * e.g. A+B" over the loops in `allowed`, or "none or A" for one. */
static void known_names(unsigned allowed, char *buf, size_t len)
{
	char names[200];
	size_t o = 0;
	unsigned n = 0;
	const char *a = NULL, *b = NULL;
	names[0] = 0;
	for (size_t i = 0; i < NLOOPS && o < sizeof(names); i++) {
		if (!(allowed & loops_tab[i].bit))
			continue;
		int k = snprintf(names + o, sizeof(names) - o, "%s%s", o ? ", " : "",
				 loops_tab[i].name);
		if (k < 0)
			break;
		o += (size_t)k;
		a = n == 0 ? loops_tab[i].name : a;
		b = n == 1 ? loops_tab[i].name : b;
		n++;
	}
	if (n == 1)
		snprintf(buf, len, "none or %s", names);
	else
		snprintf(buf, len, "none, or %s joined by +, e.g. %s+%s", names, a ? a : "",
			 b ? b : "");
}

dmr_status_t dmr_loop_parse(const char *s, unsigned *loops_p, dmr_err_t *err)
{
	return dmr_loop_parse_for(s, ~0u, loops_p, err);
}

dmr_status_t dmr_loop_parse_for(const char *s, unsigned allowed, unsigned *loops_p, dmr_err_t *err)
{
	unsigned loops = 0;
	const char *p = s;
	char known[300];
	if (strcmp(s, "none") == 0) {
		*loops_p = 0;
		return DMR_OK;
	}
	known_names(allowed, known, sizeof(known));
	if (!*s)
		return dmr_err_set(err, DMR_ERR_PARSE, "--loop '': empty (%s)", known);
	for (;;) {
		const char *e = strchr(p, '+');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const dmr_loop_info_t *li = NULL;
		for (size_t i = 0; i < NLOOPS; i++)
			if (strlen(loops_tab[i].name) == n && memcmp(p, loops_tab[i].name, n) == 0)
				li = &loops_tab[i];
		if (n == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--loop '%s': empty part (loops are joined by one +)",
					   s);
		if (n == 4 && memcmp(p, "none", 4) == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--loop '%s': none stands alone (no loop), it is not "
					   "joined with others",
					   s);
		if (!li)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "--loop '%s': unknown loop '%.*s' (%s)", s, (int)n, p,
					   known);
		if (loops & li->bit)
			return dmr_err_set(err, DMR_ERR_PARSE, "--loop '%s': loop '%s' named twice",
					   s, li->name);
		loops |= li->bit;
		if (!e)
			break;
		p = e + 1;
	}
	if ((loops & DMR_LOOP_SLOTS) == DMR_LOOP_SLOTS)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "--loop '%s': aimd and aimd-worker are one loop at two "
				   "granularities (per CN, per worker): pick one",
				   s);
	*loops_p = loops;
	return DMR_OK;
}

const char *dmr_loop_name(unsigned loops, char *buf, size_t len)
{
	size_t o = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	for (size_t i = 0; i < NLOOPS; i++) {
		if (!(loops & loops_tab[i].bit) || o >= len)
			continue;
		int k = snprintf(buf + o, len - o, "%s%s", o ? "+" : "", loops_tab[i].name);
		if (k > 0)
			o += (size_t)k;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}

typedef struct kent {
	uint64_t rec;
	uint64_t hot_until;
	uint32_t holders;
	uint32_t wq_head, wq_tail; /* deferred contexts */
	uint32_t next;		   /* hash chain / free list */
} kent_t;

typedef struct cnstate {
	uint32_t *buckets;
	kent_t *ents;
	uint32_t nents, cap, free;
} cnstate_t;

/* A group of the slot gate: a CN (aimd) or a worker (aimd-worker). */
typedef struct gstate {
	uint32_t limit, active;
	uint32_t q_head, q_tail;	/* contexts waiting for the gate */
	uint64_t wend;			/* end of its open window */
	uint64_t win_tried, win_aborts; /* its workers' change in the open window */
} gstate_t;

/* A worker's counters at its last tick. */
typedef struct wlast {
	uint64_t tried, aborts;
} wlast_t;

typedef struct cstate {
	uint8_t aimd_counted;
	uint8_t local;	/* aura A2: admitted as a transaction of a group its CN owns */
	uint32_t qnext; /* next in whichever queue it waits */
	uint32_t *held; /* key entries held (perkey) */
	uint32_t nheld, capheld;
} cstate_t;

struct dmr_adm {
	dmr_loop_cfg_t cfg;
	const dmr_layout_t *l;
	uint32_t nworkers, wpc, coros, ncn;
	uint32_t ngroups, gdiv, cap; /* slot gate: groups, workers per group, bound */
	gstate_t *g;
	wlast_t *wl;
	cstate_t *c;
	cnstate_t *cn;
	dmr_aura_t *aura;
	/* samples */
	double sig_sum;
	uint64_t sig_n, inc, dec, deferred, moves;
	/* over the run */
	uint32_t gmin, gmax;
	uint64_t up, down, windows, key_deferred, local_deferred;
};

dmr_status_t dmr_adm_create(const dmr_loop_cfg_t *cfg, const dmr_layout_t *l, uint32_t nworkers,
			    uint32_t workers_per_cn, uint32_t coros, dmr_adm_t **adm_p,
			    dmr_err_t *err)
{
	dmr_adm_t *a = calloc(1, sizeof(*a));
	if (!a)
		return dmr_err_set(err, DMR_ERR_NOMEM, "loop: out of memory");
	a->cfg = *cfg;
	a->l = l;
	a->nworkers = nworkers;
	a->wpc = workers_per_cn;
	a->coros = coros;
	a->ncn = (nworkers + workers_per_cn - 1) / workers_per_cn;
	if (cfg->loops & DMR_LOOP_AIMD_WORKER) {
		a->gdiv = 1;
		a->ngroups = nworkers;
		a->cap = coros;
	} else {
		/* aimd, or no slot gate (groups unused but allocated: admit
		 * and finish index them without a test) */
		a->gdiv = workers_per_cn;
		a->ngroups = a->ncn;
		a->cap = workers_per_cn * coros;
	}
	a->g = calloc(a->ngroups ? a->ngroups : 1, sizeof(*a->g));
	a->wl = calloc(nworkers ? nworkers : 1, sizeof(*a->wl));
	a->c = calloc((size_t)nworkers * coros, sizeof(*a->c));
	a->cn = calloc(a->ncn, sizeof(*a->cn));
	if (!a->g || !a->wl || !a->c || !a->cn)
		goto nomem;
	for (uint32_t i = 0; i < a->ngroups; i++) {
		a->g[i].limit = a->cap;
		a->g[i].q_head = a->g[i].q_tail = NIL;
		a->g[i].wend = cfg->window_ps;
	}
	a->gmin = a->gmax = a->cap;
	if (cfg->loops & DMR_LOOP_AURA) {
		dmr_status_t st = dmr_aura_create(&cfg->aura, a->ncn, workers_per_cn * coros, l,
						  cfg->window_ps, &a->aura, err);
		if (st != DMR_OK) {
			dmr_adm_destroy(a);
			return st;
		}
	}
	if (cfg->loops & (DMR_LOOP_PERKEY | DMR_LOOP_AURA)) {
		for (uint32_t i = 0; i < a->ncn; i++) {
			a->cn[i].buckets = malloc(sizeof(uint32_t) << HBITS);
			if (!a->cn[i].buckets)
				goto nomem;
			memset(a->cn[i].buckets, 0xff, sizeof(uint32_t) << HBITS);
			a->cn[i].free = NIL;
		}
	}
	*adm_p = a;
	return DMR_OK;
nomem:
	dmr_adm_destroy(a);
	return dmr_err_set(err, DMR_ERR_NOMEM, "loop: out of memory");
}

void dmr_adm_destroy(dmr_adm_t *a)
{
	if (!a)
		return;
	if (a->c)
		for (uint32_t i = 0; i < a->nworkers * a->coros; i++)
			free(a->c[i].held);
	if (a->cn)
		for (uint32_t i = 0; i < a->ncn; i++) {
			free(a->cn[i].buckets);
			free(a->cn[i].ents);
		}
	dmr_aura_destroy(a->aura);
	free(a->g);
	free(a->wl);
	free(a->c);
	free(a->cn);
	free(a);
}

static inline uint32_t hslot(uint64_t rec)
{
	return (uint32_t)((rec >> 3) * 0x9E3779B97F4A7C15ull >> (64 - HBITS));
}

static uint32_t kfind(cnstate_t *cn, uint64_t rec)
{
	for (uint32_t e = cn->buckets[hslot(rec)]; e != NIL; e = cn->ents[e].next)
		if (cn->ents[e].rec == rec)
			return e;
	return NIL;
}

static uint32_t kget(cnstate_t *cn, uint64_t rec)
{
	uint32_t e = kfind(cn, rec);
	if (e != NIL)
		return e;
	if (cn->free != NIL) {
		e = cn->free;
		cn->free = cn->ents[e].next;
	} else {
		if (cn->nents == cn->cap) {
			uint32_t cap = cn->cap ? cn->cap * 2 : 1024;
			kent_t *n = realloc(cn->ents, sizeof(*n) * cap);
			if (!n)
				return NIL;
			cn->ents = n;
			cn->cap = cap;
		}
		e = cn->nents++;
	}
	kent_t *k = &cn->ents[e];
	k->rec = rec;
	k->hot_until = 0;
	k->holders = 0;
	k->wq_head = k->wq_tail = NIL;
	uint32_t h = hslot(rec);
	k->next = cn->buckets[h];
	cn->buckets[h] = e;
	return e;
}

static void kput(cnstate_t *cn, uint32_t e, uint64_t now)
{
	kent_t *k = &cn->ents[e];
	if (k->holders || k->wq_head != NIL || k->hot_until > now)
		return;
	uint32_t *pp = &cn->buckets[hslot(k->rec)];
	while (*pp != e)
		pp = &cn->ents[*pp].next;
	*pp = k->next;
	k->next = cn->free;
	cn->free = e;
}

static int held_add(cstate_t *c, uint32_t e)
{
	if (c->nheld == c->capheld) {
		uint32_t cap = c->capheld ? c->capheld * 2 : 16;
		uint32_t *n = realloc(c->held, sizeof(*n) * cap);
		if (!n)
			return -1;
		c->held = n;
		c->capheld = cap;
	}
	c->held[c->nheld++] = e;
	return 0;
}

/* Static lock set: records of U/I/D ops whose key needs no read. */
static inline int static_lock(const dmr_trace_op_t *op)
{
	return op->kind != DMR_TOP_READ && op->dep.op < 0;
}

int dmr_adm_admit(dmr_adm_t *a, uint32_t worker, uint32_t ctx, const dmr_trace_txn_t *txn,
		  uint64_t now)
{
	cstate_t *c = &a->c[ctx];
	gstate_t *w = &a->g[worker / a->gdiv];
	if ((a->cfg.loops & DMR_LOOP_SLOTS) && !c->aimd_counted) {
		if (w->active >= w->limit) {
			c->qnext = NIL;
			if (w->q_tail != NIL)
				a->c[w->q_tail].qnext = ctx;
			else
				w->q_head = ctx;
			w->q_tail = ctx;
			a->deferred++;
			return 0;
		}
		w->active++;
		c->aimd_counted = 1;
	}
	/* aura A2: every admitted transaction of a CN holds its records'
	 * entries (a woken transaction that is no longer local keeps the chain
	 * of waiters going); only a local one is deferred behind a holder */
	int a2 = a->aura && (a->cfg.aura.levers & DMR_AURA_A2), local = 0;
	if (a2)
		local = dmr_aura_owner(a->aura, dmr_aura_group(a->aura, txn)) == worker / a->wpc;
	if ((a->cfg.loops & DMR_LOOP_PERKEY) || a2) {
		cnstate_t *cn = &a->cn[worker / a->wpc];
		for (uint32_t i = 0; i < txn->nops; i++) {
			const dmr_trace_op_t *op = &txn->ops[i];
			if (!static_lock(op))
				continue;
			uint64_t rec = dmr_layout_rec(a->l, op->table, (uint64_t)op->key);
			uint32_t e = kfind(cn, rec);
			if (e == NIL)
				continue;
			kent_t *k = &cn->ents[e];
			if ((local || k->hot_until > now) && k->holders > 0) {
				/* defer behind the holder; give back the aimd slot */
				if (c->aimd_counted) {
					c->aimd_counted = 0;
					w->active--;
				}
				c->qnext = NIL;
				if (k->wq_tail != NIL)
					a->c[k->wq_tail].qnext = ctx;
				else
					k->wq_head = ctx;
				k->wq_tail = ctx;
				a->deferred++;
				if (local)
					a->local_deferred++;
				else
					a->key_deferred++;
				return 0;
			}
		}
		c->nheld = 0;
		for (uint32_t i = 0; i < txn->nops; i++) {
			const dmr_trace_op_t *op = &txn->ops[i];
			if (!static_lock(op))
				continue;
			uint32_t e = kget(cn, dmr_layout_rec(a->l, op->table, (uint64_t)op->key));
			if (e == NIL || held_add(c, e) != 0)
				continue; /* out of memory: this key goes unguarded */
			cn->ents[e].holders++;
		}
	}
	c->local = (uint8_t)local;
	return 1;
}

static uint32_t wake_aimd(dmr_adm_t *a, gstate_t *w, uint32_t *wake, uint32_t n, uint32_t max)
{
	uint32_t room = w->limit > w->active ? w->limit - w->active : 0;
	while (room && w->q_head != NIL && n < max) {
		uint32_t x = w->q_head;
		w->q_head = a->c[x].qnext;
		if (w->q_head == NIL)
			w->q_tail = NIL;
		wake[n++] = x;
		room--;
	}
	return n;
}

uint32_t dmr_adm_finish(dmr_adm_t *a, uint32_t worker, uint32_t ctx, uint32_t *wake, uint32_t max)
{
	cstate_t *c = &a->c[ctx];
	gstate_t *w = &a->g[worker / a->gdiv];
	uint32_t n = 0;
	if (c->aimd_counted) {
		c->aimd_counted = 0;
		w->active--;
	}
	if (c->nheld) {
		cnstate_t *cn = &a->cn[worker / a->wpc];
		for (uint32_t i = 0; i < c->nheld; i++) {
			uint32_t e = c->held[i];
			kent_t *k = &cn->ents[e];
			k->holders--;
			/* perkey wakes the first waiter; aura all of them (a woken
			 * one may defer on another record: the rest must not wait
			 * on an entry nobody holds) */
			while (k->holders == 0 && k->wq_head != NIL && n < max) {
				uint32_t x = k->wq_head;
				k->wq_head = a->c[x].qnext;
				if (k->wq_head == NIL)
					k->wq_tail = NIL;
				wake[n++] = x;
				if (!a->aura)
					break;
			}
			kput(cn, e, 0);
		}
		c->nheld = 0;
	}
	c->local = 0;
	if (a->cfg.loops & DMR_LOOP_SLOTS)
		n = wake_aimd(a, w, wake, n, max);
	return n;
}

void dmr_adm_lock_failed(dmr_adm_t *a, uint32_t worker, uint64_t rec, uint64_t now)
{
	if (!(a->cfg.loops & DMR_LOOP_PERKEY))
		return;
	cnstate_t *cn = &a->cn[worker / a->wpc];
	uint32_t e = kget(cn, rec);
	if (e == NIL)
		return;
	cn->ents[e].hot_until = now + a->cfg.hot_windows * a->cfg.window_ps;
}

uint32_t dmr_adm_tick(dmr_adm_t *a, uint32_t worker, uint64_t now, const dmr_txn_stats_t *ws,
		      uint32_t *wake, uint32_t max)
{
	if (a->aura)
		dmr_aura_tick(a->aura, now);
	if (!(a->cfg.loops & DMR_LOOP_SLOTS))
		return 0;
	gstate_t *w = &a->g[worker / a->gdiv];
	wlast_t *l = &a->wl[worker];
	uint64_t aborts = 0;
	for (int i = 0; i < DMR_ABORT_NCAUSES; i++)
		aborts += ws->aborts[i];
	/* this worker's change since its last tick goes to the open window
	 * of its group */
	w->win_tried += ws->tried - l->tried;
	w->win_aborts += aborts - l->aborts;
	l->tried = ws->tried;
	l->aborts = aborts;
	if (now < w->wend)
		return 0;
	uint64_t dt = w->win_tried, da = w->win_aborts;
	w->win_tried = w->win_aborts = 0;
	while (w->wend <= now)
		w->wend += a->cfg.window_ps;
	if (dt == 0)
		return 0;
	double sig = (double)da / (double)dt;
	uint32_t old = w->limit;
	a->sig_sum += sig;
	a->sig_n++;
	a->windows++;
	if (sig > a->cfg.threshold) {
		uint32_t nl = (uint32_t)(w->limit / a->cfg.md_factor);
		w->limit = nl ? nl : 1;
		a->dec++;
	} else {
		uint64_t nl = (uint64_t)w->limit + a->cfg.ai_step;
		w->limit = nl < a->cap ? (uint32_t)nl : a->cap;
		a->inc++;
	}
	if (w->limit != old) {
		a->moves++;
		if (w->limit > old)
			a->up++;
		else
			a->down++;
		if (w->limit < a->gmin)
			a->gmin = w->limit;
		if (w->limit > a->gmax)
			a->gmax = w->limit;
	}
	return wake_aimd(a, w, wake, 0, max);
}

/* Records hot at now over every CN (an entry is freed only once its hot
 * period is over, so the live entries are the ones to count). */
static uint64_t hot_records(const dmr_adm_t *a, uint64_t now)
{
	uint64_t n = 0;
	for (uint32_t c = 0; c < a->ncn; c++)
		for (uint32_t e = 0; e < a->cn[c].nents; e++)
			n += a->cn[c].ents[e].hot_until > now;
	return n;
}

void dmr_adm_sample(dmr_adm_t *a, uint64_t now, dmr_adm_sample_t *s)
{
	memset(s, 0, sizeof(*s));
	s->signal = a->sig_n ? a->sig_sum / a->sig_n : 0;
	if (a->cfg.loops & DMR_LOOP_SLOTS) {
		double sum = 0;
		for (uint32_t i = 0; i < a->ngroups; i++)
			sum += a->g[i].limit;
		s->actuator = a->ngroups ? sum / a->ngroups : 0;
	} else if (a->cfg.loops & DMR_LOOP_PERKEY) {
		s->actuator = (double)hot_records(a, now);
	}
	s->increases = a->inc;
	s->decreases = a->dec;
	s->deferred = a->deferred;
	s->moves = a->moves;
	a->sig_sum = 0;
	a->sig_n = 0;
	a->inc = a->dec = a->deferred = a->moves = 0;
}

dmr_aura_t *dmr_adm_aura(dmr_adm_t *a)
{
	return a->aura;
}

uint32_t dmr_adm_ncn(const dmr_adm_t *a)
{
	return a->ncn;
}

uint32_t dmr_adm_cn_slots(const dmr_adm_t *a, uint32_t cn)
{
	if (!(a->cfg.loops & DMR_LOOP_SLOTS) || cn >= a->ncn)
		return a->wpc * a->coros;
	if (a->cfg.loops & DMR_LOOP_AIMD)
		return a->g[cn].limit;
	uint32_t sum = 0;
	for (uint32_t w = cn * a->wpc; w < (cn + 1) * a->wpc && w < a->nworkers; w++)
		sum += a->g[w].limit;
	return sum;
}

void dmr_adm_summary(const dmr_adm_t *a, dmr_adm_summary_t *s)
{
	memset(s, 0, sizeof(*s));
	s->key_deferred = a->key_deferred;
	s->local_deferred = a->local_deferred;
	if (!(a->cfg.loops & DMR_LOOP_SLOTS))
		return;
	s->min = a->gmin;
	s->max = a->gmax;
	s->cap = a->cap;
	s->up = a->up;
	s->down = a->down;
	s->windows = a->windows;
}
