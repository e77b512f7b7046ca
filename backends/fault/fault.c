/*
 * backends/fault/fault.c - the fault-injection wrapper (fault.h; the spec
 * and its semantics in docs/FAULTS.md). Every operation forwards to the
 * inner backend through its dispatchers; post() and poll() apply the
 * faults. Per-worker state is touched only by the worker's own posts and
 * polls (one thread per worker on threaded backends); the global counts
 * are atomic.
 */
#include "fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/opt.h"
#include "../../core/base/timeps.h"
#include "../../core/base/wrid.h"

#define MAX_RULES 16
#define NONE UINT64_MAX
/* wr_id of the wrapper's own wake-up timers (wrid.h: kind BACKEND, never
 * returned to a caller); index 0xFA17 tells them from any other. */
#define WAKE_ID dmr_wrid(DMR_WRID_BACKEND, 0xFA17u, 0)

typedef enum kind { F_UNREACH, F_FAIL, F_DELAY, F_DROP } kind_t;

typedef struct rule {
	kind_t kind;
	int64_t mn, worker; /* -1: any */
	uint64_t at_ps;	    /* unreachable: from */
	uint64_t k;	    /* fail: op; drop: k-th or (after) N */
	int after;	    /* drop: every one after k */
	uint8_t status;	    /* fail */
	uint64_t delay_ps;  /* delay */
} rule_t;

typedef struct held {
	dmr_wc_t wc;
	uint64_t due; /* delay: dmr_be_now() when it may be returned */
} held_t;

typedef struct fifo {
	held_t *v;
	uint32_t head, n, cap;
} fifo_t;

typedef struct fworker {
	fifo_t synth;	  /* completions made here (failed, flushed), in order */
	fifo_t hold;	  /* delayed completions */
	uint64_t posted;  /* WRs this worker posted */
	uint64_t wake_at; /* DRIVEN: time of the pending wake timer, NONE */
} fworker_t;

typedef struct fep {
	int64_t outstanding; /* signaled WRs posted to the inner backend, not yet polled */
	uint8_t error;	     /* in error: every later WR is flushed */
} fep_t;

typedef struct fault {
	dmr_be_t be; /* first */
	dmr_be_ops_t table;
	dmr_be_t *in;
	int driven;
	rule_t rules[MAX_RULES];
	uint32_t nrules;
	uint32_t nworkers, mns;
	fworker_t *w;
	fep_t *ep;		       /* nworkers * mns */
	uint64_t posted, returned;     /* global counts (atomic) */
	uint64_t made_errors, dropped; /* atomic */
} fault_t;

static fault_t *to_f(dmr_be_t *be)
{
	return (fault_t *)be;
}

/* ---- the spec ---- */

static const struct {
	const char *name;
	uint8_t st;
} statuses[] = {{"REM_ACCESS_ERR", DMR_WC_REM_ACCESS_ERR},
		{"FLUSH_ERR", DMR_WC_FLUSH_ERR},
		{"RETRY_EXC_ERR", DMR_WC_RETRY_EXC_ERR},
		{"GENERAL_ERR", DMR_WC_GENERAL_ERR}};

/* One FIELD=VALUE of fault `what` (the whole fault, for messages). */
static dmr_status_t parse_field(rule_t *r, const char *what, char *f, dmr_err_t *err)
{
	char *eq = strchr(f, '=');
	if (!eq)
		return dmr_err_set(err, DMR_ERR_INVALID, "fault '%s': field '%s' is not NAME=VALUE",
				   what, f);
	*eq = 0;
	const char *k = f, *v = eq + 1;
	char opt[64];
	snprintf(opt, sizeof(opt), "fault '%s' field %s", what, k);
	dmr_err_t e2;
	dmr_status_t st = DMR_OK;
	uint64_t u = 0;
	double d = 0;
	if (!strcmp(k, "mn") && (r->kind == F_UNREACH || r->kind == F_DELAY)) {
		st = dmr_opt_u64(opt, v, 0, 65535, 0, &u, &e2);
		r->mn = (int64_t)u;
	} else if (!strcmp(k, "worker") && (r->kind == F_FAIL || r->kind == F_DELAY)) {
		st = dmr_opt_u64(opt, v, 0, DMR_WRID_INDEX_MAX, 0, &u, &e2);
		r->worker = (int64_t)u;
	} else if (!strcmp(k, "at") && r->kind == F_UNREACH) {
		st = dmr_opt_double(opt, v, 0, 1e6, DMR_OPT_SECONDS, &d, &e2);
		r->at_ps = dmr_ps_from_s_round(d);
	} else if ((!strcmp(k, "op") && r->kind == F_FAIL) ||
		   (!strcmp(k, "k") && r->kind == F_DROP)) {
		st = dmr_opt_u64(opt, v, 1, UINT64_MAX - 1, 0, &r->k, &e2);
		r->after = 0;
	} else if (!strcmp(k, "after") && r->kind == F_DROP) {
		st = dmr_opt_u64(opt, v, 0, UINT64_MAX - 1, 0, &r->k, &e2);
		r->after = 1;
	} else if (!strcmp(k, "status") && r->kind == F_FAIL) {
		size_t i;
		for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
			if (!strcmp(v, statuses[i].name))
				break;
		if (i == sizeof(statuses) / sizeof(statuses[0]))
			return dmr_err_set(
			    err, DMR_ERR_INVALID,
			    "fault '%s': field status: '%s' unknown (REM_ACCESS_ERR, "
			    "FLUSH_ERR, RETRY_EXC_ERR, GENERAL_ERR)",
			    what, v);
		r->status = statuses[i].st;
	} else if (r->kind == F_DELAY &&
		   (!strcmp(k, "ps") || !strcmp(k, "ns") || !strcmp(k, "us") || !strcmp(k, "ms"))) {
		st = dmr_opt_double(opt, v, 0, 1e12, 0, &d, &e2);
		double scale = k[0] == 'p' ? 1 : k[0] == 'n' ? 1e3 : k[0] == 'u' ? 1e6 : 1e9;
		r->delay_ps = (uint64_t)(d * scale + 0.5);
	} else {
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "fault '%s': field '%s' unknown for this kind", what, k);
	}
	if (st != DMR_OK) /* "option fault '...' field F: ...": without "option " */
		return dmr_err_set(err, DMR_ERR_INVALID, "%s",
				   strncmp(e2.msg, "option ", 7) ? e2.msg : e2.msg + 7);
	return DMR_OK;
}

/* One fault KIND:FIELD=VALUE[:...] (unreachable also takes @T). */
static dmr_status_t parse_rule(rule_t *r, char *s, dmr_err_t *err)
{
	char what[128];
	snprintf(what, sizeof(what), "%s", s);
	memset(r, 0, sizeof(*r));
	r->mn = r->worker = -1;
	r->status = DMR_WC_REM_ACCESS_ERR;
	r->k = NONE;
	char *save = NULL, *kind = strtok_r(s, ":", &save);
	char *at = kind ? strchr(kind, '@') : NULL;
	if (!kind)
		return dmr_err_set(err, DMR_ERR_INVALID, "fault '': empty");
	if (!strcmp(kind, "unreachable"))
		r->kind = F_UNREACH;
	else if (!strcmp(kind, "fail"))
		r->kind = F_FAIL;
	else if (!strcmp(kind, "delay"))
		r->kind = F_DELAY;
	else if (!strcmp(kind, "drop"))
		r->kind = F_DROP;
	else
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "fault '%s': kind '%s' unknown (unreachable, fail, delay, drop)",
				   what, kind);
	for (char *f; (f = strtok_r(NULL, ":", &save));) {
		at = strchr(f, '@');
		if (at) {
			if (r->kind != F_UNREACH)
				return dmr_err_set(err, DMR_ERR_INVALID,
						   "fault '%s': '@TIME' is for unreachable only",
						   what);
			*at = 0;
		}
		dmr_status_t st = parse_field(r, what, f, err);
		if (st == DMR_OK && at) {
			char atf[64];
			snprintf(atf, sizeof(atf), "at=%s", at + 1);
			st = parse_field(r, what, atf, err);
		}
		if (st != DMR_OK)
			return st;
	}
	const char *missing = NULL;
	if (r->kind == F_UNREACH && r->mn < 0)
		missing = "mn";
	else if (r->kind == F_FAIL && r->k == NONE)
		missing = "op";
	else if (r->kind == F_DELAY && (r->mn < 0) == (r->worker < 0))
		missing = "mn or worker (one of them)";
	else if (r->kind == F_DELAY && !r->delay_ps)
		missing = "us, ns, ms or ps (> 0)";
	else if (r->kind == F_DROP && r->k == NONE)
		missing = "k or after";
	if (missing)
		return dmr_err_set(err, DMR_ERR_INVALID, "fault '%s': field %s missing", what,
				   missing);
	return DMR_OK;
}

static dmr_status_t parse_spec(fault_t *f, const char *spec, const dmr_be_config_t *cfg,
			       dmr_err_t *err)
{
	char buf[1024];
	if (strlen(spec) >= sizeof(buf))
		return dmr_err_set(err, DMR_ERR_INVALID, "fault spec: longer than %zu bytes",
				   sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *save = NULL, *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (f->nrules == MAX_RULES)
			return dmr_err_set(err, DMR_ERR_INVALID, "fault spec: more than %d faults",
					   MAX_RULES);
		rule_t *r = &f->rules[f->nrules];
		char what[128];
		snprintf(what, sizeof(what), "%s", s); /* parse_rule cuts s at ':' */
		dmr_status_t st = parse_rule(r, s, err);
		if (st != DMR_OK)
			return st;
		if (r->mn >= (int64_t)cfg->mns)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "fault '%s': field mn: %lld, the cluster has %u MN(s)",
					   what, (long long)r->mn, cfg->mns);
		if (r->worker >= (int64_t)(cfg->cns * cfg->workers))
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "fault '%s': field worker: %lld, the run has %u workers",
					   what, (long long)r->worker, cfg->cns * cfg->workers);
		f->nrules++;
	}
	return DMR_OK;
}

/* ---- fifos ---- */

static dmr_status_t fifo_push(fifo_t *q, const dmr_wc_t *wc, uint64_t due)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 64;
		held_t *v = malloc(sizeof(*v) * cap);
		if (!v)
			return DMR_ERR_NOMEM;
		for (uint32_t i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) % q->cap];
		free(q->v);
		q->v = v;
		q->head = 0;
		q->cap = cap;
	}
	q->v[(q->head + q->n) % q->cap] = (held_t){.wc = *wc, .due = due};
	q->n++;
	return DMR_OK;
}

static held_t *fifo_head(fifo_t *q)
{
	return q->n ? &q->v[q->head] : NULL;
}

static void fifo_pop(fifo_t *q)
{
	q->head = (q->head + 1) % q->cap;
	q->n--;
}

/* ---- the operations ---- */

static void fault_close(dmr_be_t *be)
{
	fault_t *f = to_f(be);
	if (f->w)
		for (uint32_t i = 0; i < f->nworkers; i++) {
			free(f->w[i].synth.v);
			free(f->w[i].hold.v);
		}
	free(f->w);
	free(f->ep);
	dmr_be_close(f->in);
	free(f);
}

static dmr_status_t fault_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	const char *pre = DMR_FAULT_PREFIX;
	size_t np = strlen(pre);
	if (!cfg->backend || strncmp(cfg->backend, pre, np) != 0 || !cfg->backend[np])
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "backend '%s': the fault wrapper is named fault:INNER "
				   "(e.g. fault:sim)",
				   cfg->backend ? cfg->backend : "(none)");
	const char *inner = cfg->backend + np;
	if (!strncmp(inner, pre, np))
		return dmr_err_set(err, DMR_ERR_INVALID, "backend '%s': one fault wrapper only",
				   cfg->backend);
	fault_t *f = calloc(1, sizeof(*f));
	if (!f)
		return dmr_err_set(err, DMR_ERR_NOMEM, "fault: out of memory");
	const char *spec = cfg->fault ? cfg->fault : getenv("DMR_FAULT");
	dmr_status_t st = spec && *spec ? parse_spec(f, spec, cfg, err) : DMR_OK;
	dmr_be_config_t icfg = *cfg;
	icfg.backend = inner;
	icfg.fault = NULL;
	if (st == DMR_OK)
		st = dmr_be_open(&icfg, &f->in, err);
	if (st != DMR_OK) {
		free(f);
		return st;
	}
	f->nworkers = cfg->cns * cfg->workers;
	f->mns = cfg->mns;
	f->w = calloc(f->nworkers, sizeof(*f->w));
	f->ep = calloc((size_t)f->nworkers * f->mns, sizeof(*f->ep));
	if (!f->w || !f->ep) {
		fault_close(&f->be);
		return dmr_err_set(err, DMR_ERR_NOMEM, "fault: out of memory");
	}
	for (uint32_t i = 0; i < f->nworkers; i++)
		f->w[i].wake_at = NONE;
	/* the caps follow the inner backend's: a table of this handle's own
	 * (registration copies be->ops, backend.h) */
	f->table = dmr_fault_ops;
	/* not DMR_BE_CAP_RPC: the wrapper does not wrap dmr_be_rpc */
	f->table.caps = f->in->ops->caps & ~DMR_BE_CAP_RPC;
	f->driven = (f->table.caps & DMR_BE_CAP_DRIVEN) != 0;
	f->be.ops = &f->table;
	f->be.cfg = *cfg;
	*be_p = &f->be;
	return DMR_OK;
}

static dmr_status_t fault_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
				 dmr_err_t *err)
{
	return to_f(be)->in->ops->mr_reg(to_f(be)->in, worker, addr, len, err);
}

static dmr_status_t fault_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err)
{
	return to_f(be)->in->ops->mr_dereg(to_f(be)->in, worker, addr, err);
}

/* The status the wrapper gives WR number k of worker (g: its global
 * number) to MN mn at time now, 0: none (posted to the inner backend). */
static uint8_t fault_of(const fault_t *f, uint32_t worker, uint32_t mn, uint64_t k, uint64_t g,
			uint64_t now)
{
	for (uint32_t i = 0; i < f->nrules; i++) {
		const rule_t *r = &f->rules[i];
		if (r->kind == F_UNREACH && r->mn == mn && now >= r->at_ps)
			return DMR_WC_RETRY_EXC_ERR;
		if (r->kind == F_FAIL &&
		    (r->worker < 0 ? g == r->k : (r->worker == worker && k == r->k)))
			return r->status;
	}
	return 0;
}

/* DRIVEN: make sure worker w is woken at time `at` (a timer of the inner
 * backend with the wrapper's wr_id). */
static dmr_status_t wake(fault_t *f, uint32_t w, uint64_t at)
{
	fworker_t *fw = &f->w[w];
	if (!f->driven || (fw->wake_at != NONE && fw->wake_at <= at))
		return DMR_OK;
	fw->wake_at = at;
	return dmr_be_timer(f->in, w, at, WAKE_ID);
}

static dmr_status_t fault_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			       uint32_t n, dmr_err_t *err)
{
	fault_t *f = to_f(be);
	fep_t *ep = &f->ep[(size_t)worker * f->mns + mn];
	fworker_t *fw = &f->w[worker];
	if (!f->nrules) /* no fault: forwarded as it is */
		return dmr_be_post(f->in, worker, mn, wrs, n, err);
	uint64_t now = dmr_be_now(f->in, worker);
	uint32_t cut = n; /* WRs [0, cut) go to the inner backend */
	uint8_t first = 0;
	/* this batch's global numbers g0 + 1 .. g0 + n, reserved at once */
	uint64_t g0 = __atomic_fetch_add(&f->posted, n, __ATOMIC_RELAXED);
	if (ep->error) {
		cut = 0;
		first = DMR_WC_FLUSH_ERR;
	} else {
		for (uint32_t i = 0; i < n; i++) {
			uint8_t s = fault_of(f, worker, mn, fw->posted + i + 1, g0 + i + 1, now);
			if (s) {
				cut = i;
				first = s;
				break;
			}
		}
	}
	if (cut) {
		dmr_status_t st = dmr_be_post(f->in, worker, mn, wrs, cut, err);
		if (st != DMR_OK)
			return st; /* nothing posted (the batch keeps its global numbers) */
		for (uint32_t i = 0; i < cut; i++)
			ep->outstanding += (wrs[i].flags & DMR_WR_SIGNALED) != 0;
	}
	fw->posted += n;
	for (uint32_t i = cut; i < n; i++) {
		dmr_wc_t wc = {.wr_id = wrs[i].wr_id,
			       .opcode = wrs[i].opcode,
			       .status = i == cut ? first : DMR_WC_FLUSH_ERR,
			       .mn = (uint16_t)mn};
		if (fifo_push(&fw->synth, &wc, 0) != DMR_OK)
			return dmr_err_set(err, DMR_ERR_NOMEM, "fault: out of memory");
		__atomic_add_fetch(&f->made_errors, 1, __ATOMIC_RELAXED);
	}
	if (cut < n) {
		ep->error = 1;
		if (wake(f, worker, now) != DMR_OK)
			return dmr_err_set(err, DMR_ERR_NOMEM, "fault: wake-up timer of worker %u",
					   worker);
	}
	return DMR_OK;
}

/* The delay rule's ps for a completion of worker w from MN mn (0: none). */
static uint64_t delay_of(const fault_t *f, uint32_t w, uint32_t mn)
{
	uint64_t d = 0;
	for (uint32_t i = 0; i < f->nrules; i++) {
		const rule_t *r = &f->rules[i];
		if (r->kind == F_DELAY && (r->mn == mn || r->worker == w))
			d += r->delay_ps;
	}
	return d;
}

static int dropped(fault_t *f)
{
	int drop = 0;
	uint64_t c = __atomic_add_fetch(&f->returned, 1, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < f->nrules; i++) {
		const rule_t *r = &f->rules[i];
		if (r->kind == F_DROP && (r->after ? c > r->k : c == r->k))
			drop = 1;
	}
	if (drop)
		__atomic_add_fetch(&f->dropped, 1, __ATOMIC_RELAXED);
	return drop;
}

static int fault_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	fault_t *f = to_f(be);
	if (!f->nrules) /* no fault: forwarded as it is */
		return dmr_be_poll(f->in, worker, wcs, max);
	fworker_t *fw = &f->w[worker];
	uint64_t now = dmr_be_now(f->in, worker);
	int n = 0;
	held_t *h;
	/* delayed completions whose time has come, first: they were
	 * delivered before anything the inner backend has now */
	while (n < max && (h = fifo_head(&fw->hold)) && h->due <= now) {
		wcs[n++] = h->wc;
		fifo_pop(&fw->hold);
	}
	if (n < max) {
		dmr_wc_t in[64];
		int m = dmr_be_poll(f->in, worker, in, max - n < 64 ? max - n : 64);
		if (m < 0)
			return n ? n : m;
		for (int i = 0; i < m; i++) {
			dmr_wc_t *wc = &in[i];
			if (wc->opcode == DMR_WR_TIMER) {
				if (wc->wr_id == WAKE_ID) {
					fw->wake_at = NONE;
					continue;
				}
				wcs[n++] = *wc;
				continue;
			}
			fep_t *ep = &f->ep[(size_t)worker * f->mns + wc->mn];
			if (ep->outstanding > 0)
				ep->outstanding--;
			if (dropped(f))
				continue;
			uint64_t d = delay_of(f, worker, wc->mn);
			if (d || fw->hold.n) {
				if (fifo_push(&fw->hold, wc, now + d) != DMR_OK)
					return DMR_ERR_NOMEM;
				continue;
			}
			wcs[n++] = *wc;
		}
	}
	/* completions made here, once their endpoint's earlier WRs are in
	 * (and none of this worker's is still held back by a delay) */
	while (n < max && !fw->hold.n && (h = fifo_head(&fw->synth)) &&
	       f->ep[(size_t)worker * f->mns + h->wc.mn].outstanding <= 0) {
		wcs[n++] = h->wc;
		fifo_pop(&fw->synth);
	}
	h = fifo_head(&fw->synth);
	if (h && !fw->hold.n && f->ep[(size_t)worker * f->mns + h->wc.mn].outstanding <= 0)
		(void)wake(f, worker, now);
	if ((h = fifo_head(&fw->hold)))
		(void)wake(f, worker, h->due > now ? h->due : now);
	return n;
}

static uint64_t fault_now(dmr_be_t *be, uint32_t worker)
{
	return dmr_be_now(to_f(be)->in, worker);
}

static dmr_status_t fault_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	return dmr_be_timer(to_f(be)->in, worker, at_ps, wr_id);
}

static dmr_status_t fault_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
				  dmr_err_t *err)
{
	return dmr_be_barrier(to_f(be)->in, b, sum_p, err);
}

static int fault_progress(dmr_be_t *be, uint64_t until_ps)
{
	return dmr_be_progress(to_f(be)->in, until_ps);
}

static void *fault_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	return dmr_be_mn_memory(to_f(be)->in, mn, len_p);
}

static void fault_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	fault_t *f = to_f(be);
	dmr_be_stats(f->in, st);
	uint64_t made = __atomic_load_n(&f->made_errors, __ATOMIC_RELAXED);
	st->errors += made;
	st->verbs += made;
}

static void fault_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	dmr_be_charge(to_f(be)->in, worker, ps);
}

static dmr_status_t fault_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	/* streams: the inner backend would post and poll past this wrapper */
	if (op == DMR_BE_CTL_STREAMS)
		return dmr_be_ctl_unsupported(be, op, err);
	return dmr_be_control(to_f(be)->in, op, arg, err);
}

const dmr_be_ops_t dmr_fault_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "fault",
    .caps = 0, /* per handle: the inner backend's (fault_open) */
    .open = fault_open,
    .close = fault_close,
    .mr_reg = fault_mr_reg,
    .mr_dereg = fault_mr_dereg,
    .post = fault_post,
    .poll = fault_poll,
    .now = fault_now,
    .timer = fault_timer,
    .barrier = fault_barrier,
    .progress = fault_progress,
    .mn_memory = fault_mn_memory,
    .stats = fault_stats,
    .charge = fault_charge,
    .control = fault_control,
};
