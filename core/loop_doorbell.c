/*
 * core/loop_doorbell.c - Loop C: the doorbell stager and its controller
 * (see loop_doorbell.h).
 */
#include "loop_doorbell.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One (worker, MN) stage: WRs waiting for one doorbell. */
typedef struct stage {
	dmr_wr_t *wr; /* cap = doorbell_max */
	uint32_t n;
} stage_t;

/* A CN: its batch and open window. */
typedef struct dbcn {
	uint32_t batch;
	uint64_t wstart, wend; /* open window [wstart, wend) */
	uint64_t win_rings;    /* doorbells rung by its workers in it (atomic) */
	uint64_t *last;	       /* per MN: link down, link up, DMA busy at wstart */
} dbcn_t;

struct dmr_doorbell {
	dmr_loop_cfg_t cfg;
	dmr_be_t *be;
	uint32_t nworkers, wpc, mns, ncn;
	uint64_t mmio_ps;
	stage_t *st; /* nworkers x mns */
	dbcn_t *cn;
	dmr_be_mn_stats_t *ms; /* scratch: mns */
	int have_ms;	       /* the backend answers DMR_BE_CTL_MN_STATS */
	int driven;	       /* one thread drives every worker: flush rings all */
	uint32_t *dirty;       /* driven: workers with staged WRs (ndirty) */
	uint8_t *isdirty;      /* driven: per worker */
	uint32_t ndirty;
	pthread_mutex_t mu; /* window closes, the fields below */
	double sig_sum;
	uint64_t sig_n;
	uint32_t bmin, bmax;
	uint64_t up, down, windows;
	uint64_t posts, rings, wrs; /* relaxed atomics */
};

#define MN_BUSY 3 /* link down, link up, DMA per MN */

dmr_status_t dmr_doorbell_create(const dmr_loop_cfg_t *cfg, dmr_be_t *be, uint32_t nworkers,
				 uint32_t workers_per_cn, uint32_t mns, uint64_t mmio_ps,
				 int driven, dmr_doorbell_t **db_p, dmr_err_t *err)
{
	dmr_doorbell_t *d = calloc(1, sizeof(*d));
	if (!d)
		return dmr_err_set(err, DMR_ERR_NOMEM, "loop doorbell: out of memory");
	d->cfg = *cfg;
	d->be = be;
	d->nworkers = nworkers;
	d->wpc = workers_per_cn ? workers_per_cn : 1;
	d->mns = mns ? mns : 1;
	d->ncn = (nworkers + d->wpc - 1) / d->wpc;
	d->mmio_ps = mmio_ps;
	d->bmin = d->bmax = 1;
	pthread_mutex_init(&d->mu, NULL);
	d->st = calloc((size_t)nworkers * d->mns, sizeof(*d->st));
	d->cn = calloc(d->ncn ? d->ncn : 1, sizeof(*d->cn));
	d->ms = calloc(d->mns, sizeof(*d->ms));
	d->driven = driven;
	d->dirty = calloc(nworkers ? nworkers : 1, sizeof(*d->dirty));
	d->isdirty = calloc(nworkers ? nworkers : 1, 1);
	if (!d->st || !d->cn || !d->ms || !d->dirty || !d->isdirty)
		goto nomem;
	for (size_t i = 0; i < (size_t)nworkers * d->mns; i++)
		if (!(d->st[i].wr = malloc(sizeof(dmr_wr_t) * cfg->doorbell_max)))
			goto nomem;
	for (uint32_t c = 0; c < d->ncn; c++) {
		d->cn[c].batch = 1;
		d->cn[c].wend = cfg->window_ps;
		if (!(d->cn[c].last = calloc((size_t)d->mns * MN_BUSY, sizeof(uint64_t))))
			goto nomem;
	}
	d->have_ms = dmr_be_control(be, DMR_BE_CTL_MN_STATS, d->ms, NULL) == DMR_OK;
	*db_p = d;
	return DMR_OK;
nomem:
	dmr_doorbell_destroy(d);
	return dmr_err_set(err, DMR_ERR_NOMEM, "loop doorbell: out of memory");
}

void dmr_doorbell_destroy(dmr_doorbell_t *d)
{
	if (!d)
		return;
	if (d->st)
		for (size_t i = 0; i < (size_t)d->nworkers * d->mns; i++)
			free(d->st[i].wr);
	if (d->cn)
		for (uint32_t c = 0; c < d->ncn; c++)
			free(d->cn[c].last);
	pthread_mutex_destroy(&d->mu);
	free(d->st);
	free(d->cn);
	free(d->ms);
	free(d->dirty);
	free(d->isdirty);
	free(d);
}

/* Ring n WRs of worker to mn as one doorbell, counted. */
static dmr_status_t ring(dmr_doorbell_t *d, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			 uint32_t n, dmr_err_t *err)
{
	dmr_status_t st = dmr_be_post(d->be, worker, mn, wrs, n, err);
	if (st != DMR_OK)
		return st;
	__atomic_add_fetch(&d->rings, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->wrs, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d->cn[worker / d->wpc].win_rings, 1, __ATOMIC_RELAXED);
	return DMR_OK;
}

static dmr_status_t ring_stage(dmr_doorbell_t *d, uint32_t worker, uint32_t mn, dmr_err_t *err)
{
	stage_t *s = &d->st[(size_t)worker * d->mns + mn];
	if (!s->n)
		return DMR_OK;
	uint32_t n = s->n;
	s->n = 0; /* failed or not, these WRs are gone (the run fails) */
	return ring(d, worker, mn, s->wr, n, err);
}

dmr_status_t dmr_doorbell_post(dmr_doorbell_t *d, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			       uint32_t n, dmr_err_t *err)
{
	if (worker >= d->nworkers || mn >= d->mns) /* dmr_be_post names the range */
		return dmr_be_post(d->be, worker, mn, wrs, n, err);
	uint32_t b = __atomic_load_n(&d->cn[worker / d->wpc].batch, __ATOMIC_RELAXED);
	stage_t *s = &d->st[(size_t)worker * d->mns + mn];
	__atomic_add_fetch(&d->posts, 1, __ATOMIC_RELAXED);
	if (s->n + n > b) {
		dmr_status_t st = ring_stage(d, worker, mn, err);
		if (st != DMR_OK)
			return st;
	}
	if (n >= b || n == 0) /* n == 0: dmr_be_post refuses it */
		return ring(d, worker, mn, wrs, n, err);
	memcpy(s->wr + s->n, wrs, sizeof(*wrs) * n);
	s->n += n;
	if (d->driven && !d->isdirty[worker]) {
		d->isdirty[worker] = 1;
		d->dirty[d->ndirty++] = worker;
	}
	return DMR_OK;
}

uint32_t dmr_doorbell_decide(const dmr_loop_cfg_t *cfg, uint32_t batch, double signal)
{
	if (signal >= cfg->doorbell_util) {
		uint64_t nb = (uint64_t)batch * 2;
		return nb < cfg->doorbell_max ? (uint32_t)nb : cfg->doorbell_max;
	}
	if (signal < cfg->doorbell_util / 2)
		return batch / 2 ? batch / 2 : 1;
	return batch;
}

double dmr_doorbell_signal(const uint64_t *busy, uint32_t nbusy, uint64_t doorbells,
			   uint64_t mmio_ps, uint32_t workers, uint64_t len_ps)
{
	if (!len_ps)
		return 0;
	double u = workers ? (double)doorbells * (double)mmio_ps / ((double)len_ps * workers) : 0;
	for (uint32_t i = 0; i < nbusy; i++) {
		double x = (double)busy[i] / (double)len_ps;
		if (x > u)
			u = x;
	}
	return u;
}

/* Close CN c's window at now (caller holds d->mu). */
static dmr_status_t close_window(dmr_doorbell_t *d, uint32_t c, uint64_t now, dmr_err_t *err)
{
	dbcn_t *cn = &d->cn[c];
	uint64_t len = now - cn->wstart;
	uint64_t busy[MN_BUSY * DMR_BE_MAX_MNS];
	uint32_t nb = 0;
	if (d->have_ms) {
		dmr_status_t st = dmr_be_control(d->be, DMR_BE_CTL_MN_STATS, d->ms, err);
		if (st != DMR_OK)
			return st;
		for (uint32_t m = 0; m < d->mns && m < DMR_BE_MAX_MNS; m++) {
			uint64_t v[MN_BUSY] = {d->ms[m].link_down_busy_ps, d->ms[m].link_up_busy_ps,
					       d->ms[m].dma_busy_ps};
			for (int k = 0; k < MN_BUSY; k++) {
				uint64_t *l = &cn->last[m * MN_BUSY + k];
				busy[nb++] = v[k] > *l ? v[k] - *l : 0;
				*l = v[k];
			}
		}
	}
	uint64_t rings = __atomic_exchange_n(&cn->win_rings, 0, __ATOMIC_RELAXED);
	uint32_t workers = d->wpc;
	if ((c + 1) * d->wpc > d->nworkers)
		workers = d->nworkers - c * d->wpc;
	double sig = dmr_doorbell_signal(busy, nb, rings, d->mmio_ps, workers, len);
	cn->wstart = now;
	if (cn->wend <= now) /* the next window end after now (read unlocked by
				dmr_doorbell_flush: an atomic store) */
		__atomic_store_n(&cn->wend,
				 cn->wend +
				     ((now - cn->wend) / d->cfg.window_ps + 1) * d->cfg.window_ps,
				 __ATOMIC_RELAXED);
	if (!len)
		return DMR_OK;
	uint32_t old = cn->batch, nbat = dmr_doorbell_decide(&d->cfg, old, sig);
	__atomic_store_n(&cn->batch, nbat, __ATOMIC_RELAXED);
	d->sig_sum += sig;
	d->sig_n++;
	d->windows++;
	if (nbat > old)
		d->up++;
	else if (nbat < old)
		d->down++;
	if (nbat < d->bmin)
		d->bmin = nbat;
	if (nbat > d->bmax)
		d->bmax = nbat;
	return DMR_OK;
}

/* Ring the stages of worker w, MNs in order. */
static dmr_status_t ring_worker(dmr_doorbell_t *d, uint32_t w, dmr_err_t *err)
{
	for (uint32_t mn = 0; mn < d->mns; mn++) {
		dmr_status_t st = ring_stage(d, w, mn, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

dmr_status_t dmr_doorbell_flush(dmr_doorbell_t *d, uint32_t worker, uint64_t now, dmr_err_t *err)
{
	if (worker >= d->nworkers)
		return DMR_OK;
	dmr_status_t st0 = ring_worker(d, worker, err);
	/* driven: a context the batch woke on another worker (a loop's wake)
	 * posted on that worker: its doorbell is rung now too, in the order
	 * the workers first staged */
	if (d->driven) { /* one thread: the dirty list is its own */
		for (uint32_t i = 0; i < d->ndirty; i++) {
			uint32_t w = d->dirty[i];
			d->isdirty[w] = 0;
			if (st0 == DMR_OK && w != worker)
				st0 = ring_worker(d, w, err);
		}
		d->ndirty = 0;
	}
	if (st0 != DMR_OK)
		return st0;
	uint32_t c = worker / d->wpc;
	if (now < __atomic_load_n(&d->cn[c].wend, __ATOMIC_RELAXED))
		return DMR_OK;
	pthread_mutex_lock(&d->mu);
	dmr_status_t st = now >= d->cn[c].wend ? close_window(d, c, now, err) : DMR_OK;
	pthread_mutex_unlock(&d->mu);
	return st;
}

void dmr_doorbell_sample(dmr_doorbell_t *d, dmr_doorbell_sample_t *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&d->mu);
	s->signal = d->sig_n ? d->sig_sum / (double)d->sig_n : 0;
	d->sig_sum = 0;
	d->sig_n = 0;
	pthread_mutex_unlock(&d->mu);
	double sum = 0;
	for (uint32_t c = 0; c < d->ncn; c++)
		sum += __atomic_load_n(&d->cn[c].batch, __ATOMIC_RELAXED);
	s->batch = d->ncn ? sum / d->ncn : 0;
	s->posts = __atomic_load_n(&d->posts, __ATOMIC_RELAXED);
	s->rings = __atomic_load_n(&d->rings, __ATOMIC_RELAXED);
	s->wrs = __atomic_load_n(&d->wrs, __ATOMIC_RELAXED);
}

void dmr_doorbell_summary(const dmr_doorbell_t *d, dmr_doorbell_summary_t *s)
{
	memset(s, 0, sizeof(*s));
	s->min = d->bmin;
	s->max = d->bmax;
	s->cap = d->cfg.doorbell_max;
	s->up = d->up;
	s->down = d->down;
	s->windows = d->windows;
	s->posts = __atomic_load_n(&d->posts, __ATOMIC_RELAXED);
	s->rings = __atomic_load_n(&d->rings, __ATOMIC_RELAXED);
	s->wrs = __atomic_load_n(&d->wrs, __ATOMIC_RELAXED);
}

uint32_t dmr_doorbell_batch(const dmr_doorbell_t *d, uint32_t cn)
{
	return cn < d->ncn ? __atomic_load_n(&d->cn[cn].batch, __ATOMIC_RELAXED) : 1;
}
