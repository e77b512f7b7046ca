/*
 * backends/sim/sim.c - see sim.h for the model.
 */
#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "eventq.h"

enum { EV_MN_ARRIVE = 0, EV_MN_EFFECT = 1, EV_CN_COMPLETE = 2, EV_WORKER_RUN = 3, EV_TIMER = 4 };

#define NOIDX UINT32_MAX

typedef struct sim_op {
	dmr_wr_t wr;
	uint32_t worker;
	uint32_t qp;       /* index into sim->qps */
	uint32_t next;     /* free list / QP pending list */
	uint32_t req_wire; /* wire time of the request, ps */
	uint8_t status;
} sim_op_t;

typedef struct sim_qp {
	uint32_t outstanding; /* READ/atomic in flight */
	uint32_t pend_head, pend_tail;
	uint64_t last_cqe;
	uint64_t last_eff; /* MN effect time of the previous WR (RC order) */
	uint8_t error;
} sim_qp_t;

typedef struct sim_worker {
	uint64_t clock; /* CPU busy until, ps */
	dmr_wc_t *cq;
	uint32_t cq_head, cq_n, cq_cap;
	uint8_t scheduled;
} sim_worker_t;

typedef struct sim_cn {
	uint64_t nic_free, up_free, down_free;
} sim_cn_t;

typedef struct addr_ent {
	uint64_t addr; /* offset + 1; 0 = empty */
	uint64_t free;
} addr_ent_t;

typedef struct sim_mn {
	uint8_t *mem;
	uint64_t size;
	uint64_t down_free, up_free, nic_free;
	uint64_t dma_rd_free, dma_wr_free, atomic_free;
	uint64_t last_write_eff;
	addr_ent_t *atab; /* per-address atomic servers, open addressing */
	uint32_t amask, aused;
} sim_mn_t;

typedef struct sim {
	dmr_be_t be;
	dmr_model_t m;
	dmr_sim_eventq_t q;
	uint64_t now;
	uint32_t nworkers;
	sim_worker_t *workers;
	sim_cn_t *cns;
	sim_mn_t mn;
	sim_qp_t *qps;
	sim_op_t *ops;
	uint32_t nops, free_head;
	dmr_be_stats_t st;
	dmr_status_t fatal;
} sim_t;

static inline sim_t *to_sim(dmr_be_t *be)
{
	return (sim_t *)be;
}

static dmr_status_t sim_grow_ops(sim_t *s)
{
	uint32_t n = s->nops ? s->nops * 2 : 4096;
	sim_op_t *o = realloc(s->ops, sizeof(*o) * n);
	if (!o)
		return DMR_ERR_NOMEM;
	for (uint32_t i = s->nops; i < n; i++)
		o[i].next = i + 1 < n ? i + 1 : s->free_head;
	s->free_head = s->nops;
	s->ops = o;
	s->nops = n;
	return DMR_OK;
}

static void sim_close(dmr_be_t *be)
{
	sim_t *s = to_sim(be);
	if (s->mn.mem)
		munmap(s->mn.mem, s->mn.size);
	for (uint32_t i = 0; i < s->nworkers; i++)
		free(s->workers[i].cq);
	free(s->workers);
	free(s->cns);
	free(s->qps);
	free(s->ops);
	free(s->mn.atab);
	dmr_sim_eventq_fini(&s->q);
	free(s);
}

static dmr_status_t sim_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	if (cfg->mns != 1)
		return dmr_err_set(err, DMR_ERR_INVALID, "sim: %u MNs requested; the model has one MN",
				   cfg->mns);
	if (cfg->cns == 0 || cfg->workers == 0 || cfg->cns > 1024 || cfg->workers > 1024)
		return dmr_err_set(err, DMR_ERR_INVALID, "sim: cns %u / workers %u out of range (1..1024)",
				   cfg->cns, cfg->workers);
	if (cfg->mr_size == 0 || (cfg->mr_size & 7))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "sim: mr_size %llu must be a positive multiple of 8",
				   (unsigned long long)cfg->mr_size);
	sim_t *s = calloc(1, sizeof(*s));
	if (!s)
		return dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
	s->be.ops = &dmr_sim_ops;
	s->be.cfg = *cfg;
	dmr_status_t st = dmr_model_load(cfg->profile ? cfg->profile : "cx6dx-100g", &s->m, err);
	if (st != DMR_OK)
		goto fail;
	s->nworkers = cfg->cns * cfg->workers;
	s->workers = calloc(s->nworkers, sizeof(*s->workers));
	s->cns = calloc(cfg->cns, sizeof(*s->cns));
	s->qps = calloc(s->nworkers, sizeof(*s->qps));
	s->mn.amask = (1u << 16) - 1;
	s->mn.atab = calloc(s->mn.amask + 1, sizeof(*s->mn.atab));
	if (!s->workers || !s->cns || !s->qps || !s->mn.atab) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < s->nworkers; i++) {
		s->qps[i].pend_head = s->qps[i].pend_tail = NOIDX;
		s->workers[i].cq_cap = 256;
		s->workers[i].cq = malloc(sizeof(dmr_wc_t) * 256);
		if (!s->workers[i].cq) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
	}
	s->mn.size = cfg->mr_size;
	void *mem = mmap(NULL, cfg->mr_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: cannot map MN region of %llu bytes",
				 (unsigned long long)cfg->mr_size);
		goto fail;
	}
	s->mn.mem = mem;
	if (dmr_sim_eventq_init(&s->q, 1 << 14) != DMR_OK || sim_grow_ops(s) != DMR_OK) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
		goto fail;
	}
	*be_p = &s->be;
	return DMR_OK;
fail:
	sim_close(&s->be);
	return st;
}

static dmr_status_t sim_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			       dmr_err_t *err)
{
	(void)be;
	(void)worker;
	(void)addr;
	(void)len;
	(void)err;
	return DMR_OK;
}

static inline void push(sim_t *s, uint64_t t, uint32_t type, uint32_t arg)
{
	if (dmr_sim_eventq_push(&s->q, t, type, arg) != DMR_OK)
		s->fatal = DMR_ERR_NOMEM;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline int is_rd_atomic(uint8_t opc)
{
	return opc != DMR_WR_WRITE;
}

/* Request bytes on the wire for one WR. */
static inline uint64_t req_wire_bytes(const dmr_model_t *m, const dmr_wr_t *wr)
{
	switch (wr->opcode) {
	case DMR_WR_READ:
		return m->pkt_overhead + m->reth_bytes;
	case DMR_WR_WRITE:
		return dmr_model_msg_wire_bytes(m, wr->length, m->reth_bytes, 0);
	default:
		return m->pkt_overhead + m->atomiceth_bytes;
	}
}

static inline uint64_t resp_wire_bytes(const dmr_model_t *m, const dmr_wr_t *wr)
{
	switch (wr->opcode) {
	case DMR_WR_READ:
		return dmr_model_msg_wire_bytes(m, wr->length, m->aeth_bytes,
						wr->length > m->mtu ? m->aeth_bytes : 0);
	case DMR_WR_WRITE:
		return m->pkt_overhead + m->aeth_bytes;
	default:
		return m->pkt_overhead + m->aeth_bytes + m->atomicacketh_bytes;
	}
}

/* CN side of a WR, computed when the NIC takes it at time t: NIC message
 * service and processing, then the CN uplink; schedules MN arrival. */
static void issue(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_cn_t *cn = &s->cns[op->worker / s->be.cfg.workers];
	t = max64(t, cn->nic_free) + m->nic_msg_ps;
	cn->nic_free = t;
	t += m->nic_proc_ps;
	uint64_t w = dmr_model_wire_ps(m, req_wire_bytes(m, &op->wr));
	t = max64(t, cn->up_free) + w;
	cn->up_free = t;
	op->req_wire = (uint32_t)w;
	if (is_rd_atomic(op->wr.opcode))
		s->qps[op->qp].outstanding++;
	push(s, t + m->prop_ps + m->switch_ps, EV_MN_ARRIVE, idx);
}

static addr_ent_t *atomic_slot(sim_mn_t *mn, uint64_t off, uint64_t now)
{
	uint64_t key = off + 1;
	uint32_t h = (uint32_t)((key >> 3) * 0x9E3779B97F4A7C15ull >> 40) & mn->amask;
	addr_ent_t *reuse = NULL;
	for (;;) {
		addr_ent_t *e = &mn->atab[h];
		if (e->addr == key)
			return e;
		if (e->addr == 0) {
			if (reuse)
				e = reuse;
			else
				mn->aused++;
			e->addr = key;
			e->free = 0;
			return e;
		}
		if (!reuse && e->free <= now)
			reuse = e;
		h = (h + 1) & mn->amask;
	}
}

/* Drop per-address entries that no longer delay anything. */
static void atomic_gc(sim_mn_t *mn, uint64_t now)
{
	uint32_t n = mn->amask + 1, live = 0;
	addr_ent_t *old = mn->atab;
	addr_ent_t *tab = calloc(n, sizeof(*tab));
	if (!tab)
		return; /* keep the old table: correct, only slower */
	mn->atab = tab;
	mn->aused = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (old[i].addr && old[i].free > now) {
			addr_ent_t *e = atomic_slot(mn, old[i].addr - 1, UINT64_MAX);
			e->free = old[i].free;
			live++;
		}
	}
	free(old);
	(void)live;
}

static void ev_mn_arrive(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_mn_t *mn = &s->mn;
	/* MN downlink, cut-through: the last byte leaves no earlier than the
	 * link can carry it after the previous message. */
	t = max64(t, mn->down_free + op->req_wire);
	mn->down_free = t;
	t += m->prop_ps;
	t = max64(t, mn->nic_free) + m->nic_msg_ps;
	mn->nic_free = t;
	t += m->nic_proc_ps;
	uint64_t len = op->wr.length, eff;
	switch (op->wr.opcode) {
	case DMR_WR_READ: {
		uint64_t x = (len * m->dma_ps_per_byte_x1000 + 999) / 1000;
		uint64_t start = max64(t, mn->dma_rd_free);
		mn->dma_rd_free = start + x;
		eff = max64(start + x + m->dma_read_ps, mn->last_write_eff);
		break;
	}
	case DMR_WR_WRITE: {
		uint64_t x = (len * m->dma_ps_per_byte_x1000 + 999) / 1000;
		uint64_t start = max64(t, mn->dma_wr_free);
		mn->dma_wr_free = start + x;
		eff = max64(start + x + m->dma_write_ps, mn->last_write_eff);
		mn->last_write_eff = eff;
		break;
	}
	default: {
		t = max64(t, mn->atomic_free) + m->atomic_global_ps;
		mn->atomic_free = t;
		if (mn->aused > (mn->amask + 1) / 2)
			atomic_gc(mn, s->now);
		addr_ent_t *e = atomic_slot(mn, op->wr.remote, s->now);
		t = max64(t, e->free) + m->atomic_addr_ps;
		e->free = t;
		eff = max64(t, mn->last_write_eff);
		break;
	}
	}
	/* RC: the responder executes a QP's requests in order (IBTA vol. 1,
	 * 9.5 and 9.7.5), so a READ posted after a CAS sees the CAS's effect */
	sim_qp_t *qp = &s->qps[op->qp];
	eff = max64(eff, qp->last_eff);
	qp->last_eff = eff;
	push(s, eff, EV_MN_EFFECT, idx);
}

static void cq_push(sim_t *s, uint32_t w, const dmr_wc_t *wc, uint64_t t)
{
	sim_worker_t *wk = &s->workers[w];
	if (wk->cq_n == wk->cq_cap) {
		dmr_wc_t *n = malloc(sizeof(*n) * wk->cq_cap * 2);
		if (!n) {
			s->fatal = DMR_ERR_NOMEM;
			return;
		}
		for (uint32_t i = 0; i < wk->cq_n; i++)
			n[i] = wk->cq[(wk->cq_head + i) % wk->cq_cap];
		free(wk->cq);
		wk->cq = n;
		wk->cq_head = 0;
		wk->cq_cap *= 2;
	}
	wk->cq[(wk->cq_head + wk->cq_n) % wk->cq_cap] = *wc;
	wk->cq_n++;
	if (!wk->scheduled) {
		wk->scheduled = 1;
		push(s, max64(t, wk->clock), EV_WORKER_RUN, w);
	}
}

static void op_free(sim_t *s, uint32_t idx)
{
	s->ops[idx].next = s->free_head;
	s->free_head = idx;
}

static void ev_mn_effect(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_mn_t *mn = &s->mn;
	dmr_wr_t *wr = &op->wr;
	uint64_t len = wr->opcode == DMR_WR_READ || wr->opcode == DMR_WR_WRITE ? wr->length : 8;
	if (wr->remote > mn->size || len > mn->size - wr->remote) {
		op->status = DMR_WC_REM_ACCESS_ERR;
		s->qps[op->qp].error = 1;
	} else {
		uint8_t *p = mn->mem + wr->remote;
		switch (wr->opcode) {
		case DMR_WR_READ:
			memcpy(wr->local, p, len);
			s->st.reads++;
			s->st.bytes_read += len;
			break;
		case DMR_WR_WRITE:
			memcpy(p, wr->local, len);
			s->st.writes++;
			s->st.bytes_written += len;
			break;
		case DMR_WR_CAS: {
			uint64_t old;
			memcpy(&old, p, 8);
			if (old == wr->compare_add)
				memcpy(p, &wr->swap, 8);
			memcpy(wr->local, &old, 8);
			s->st.cas++;
			break;
		}
		case DMR_WR_FAA: {
			uint64_t old, nv;
			memcpy(&old, p, 8);
			nv = old + wr->compare_add;
			memcpy(p, &nv, 8);
			memcpy(wr->local, &old, 8);
			s->st.faa++;
			break;
		}
		}
	}
	/* response: MN NIC, MN uplink, switch, CN downlink, CN NIC */
	t += m->nic_proc_ps;
	uint64_t w = dmr_model_wire_ps(m, resp_wire_bytes(m, wr));
	t = max64(t, mn->up_free) + w;
	mn->up_free = t;
	sim_cn_t *cn = &s->cns[op->worker / s->be.cfg.workers];
	t = max64(t + m->prop_ps + m->switch_ps, cn->down_free + w);
	cn->down_free = t;
	t += m->prop_ps + m->nic_proc_ps;
	sim_qp_t *qp = &s->qps[op->qp];
	t = max64(t, qp->last_cqe);
	qp->last_cqe = t;
	if (is_rd_atomic(wr->opcode) || (wr->flags & DMR_WR_SIGNALED) || op->status) {
		push(s, t, EV_CN_COMPLETE, idx);
	} else {
		s->st.verbs++;
		op_free(s, idx);
	}
}

static void ev_cn_complete(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	sim_qp_t *qp = &s->qps[op->qp];
	s->st.verbs++;
	if (op->status)
		s->st.errors++;
	if (op->wr.flags & DMR_WR_SIGNALED || op->status) {
		dmr_wc_t wc = {.wr_id = op->wr.wr_id,
			       .opcode = op->wr.opcode,
			       .status = op->status,
			       .mn = 0,
			       .byte_len = op->wr.opcode == DMR_WR_READ ? op->wr.length : 0};
		cq_push(s, op->worker, &wc, t);
	}
	if (is_rd_atomic(op->wr.opcode)) {
		qp->outstanding--;
		/* the send queue drains in order while credits allow */
		while (qp->pend_head != NOIDX) {
			uint32_t p = qp->pend_head;
			if (is_rd_atomic(s->ops[p].wr.opcode) &&
			    qp->outstanding >= s->m.qp_max_rd_atomic)
				break;
			qp->pend_head = s->ops[p].next;
			if (qp->pend_head == NOIDX)
				qp->pend_tail = NOIDX;
			issue(s, p, t);
		}
	}
	op_free(s, idx);
}

static dmr_status_t sim_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err)
{
	sim_t *s = to_sim(be);
	(void)mn;
	sim_worker_t *wk = &s->workers[worker];
	sim_qp_t *qp = &s->qps[worker];
	const dmr_model_t *m = &s->m;
	uint64_t t = max64(wk->clock, s->now) + m->post_doorbell_ps;
	s->st.doorbells++;
	for (uint32_t i = 0; i < n; i++) {
		if (s->free_head == s->nops && sim_grow_ops(s) != DMR_OK)
			return dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory for WRs");
		uint32_t idx = s->free_head;
		sim_op_t *op = &s->ops[idx];
		s->free_head = op->next;
		op->wr = wrs[i];
		op->worker = worker;
		op->qp = worker;
		op->status = 0;
		op->next = NOIDX;
		t += m->post_wqe_ps;
		if (qp->error) {
			/* QP in error: flushed, completes with FLUSH_ERR */
			op->status = DMR_WC_FLUSH_ERR;
			push(s, t, EV_CN_COMPLETE, idx);
			if (is_rd_atomic(op->wr.opcode))
				qp->outstanding++;
			continue;
		}
		if (qp->pend_head != NOIDX ||
		    (is_rd_atomic(op->wr.opcode) && qp->outstanding >= m->qp_max_rd_atomic)) {
			if (qp->pend_tail != NOIDX)
				s->ops[qp->pend_tail].next = idx;
			else
				qp->pend_head = idx;
			qp->pend_tail = idx;
			continue;
		}
		issue(s, idx, t);
	}
	wk->clock = t;
	if (s->fatal)
		return dmr_err_set(err, s->fatal, "sim: out of memory for events");
	return DMR_OK;
}

static int sim_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	sim_t *s = to_sim(be);
	sim_worker_t *wk = &s->workers[worker];
	int n = 0;
	while (n < max && wk->cq_n) {
		wcs[n++] = wk->cq[wk->cq_head];
		wk->cq_head = (wk->cq_head + 1) % wk->cq_cap;
		wk->cq_n--;
	}
	if (n)
		wk->clock = max64(wk->clock, s->now) + s->m.poll_ps;
	if (wk->cq_n && !wk->scheduled) {
		wk->scheduled = 1;
		push(s, wk->clock, EV_WORKER_RUN, worker);
	}
	return n;
}

static uint64_t sim_now(dmr_be_t *be, uint32_t worker)
{
	sim_t *s = to_sim(be);
	return max64(s->workers[worker].clock, s->now);
}

static dmr_status_t sim_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	sim_t *s = to_sim(be);
	if (s->free_head == s->nops && sim_grow_ops(s) != DMR_OK)
		return DMR_ERR_NOMEM;
	uint32_t idx = s->free_head;
	sim_op_t *op = &s->ops[idx];
	s->free_head = op->next;
	memset(op, 0, sizeof(*op));
	op->wr.wr_id = wr_id;
	op->wr.opcode = DMR_WR_TIMER;
	op->worker = worker;
	push(s, max64(at_ps, s->now), EV_TIMER, idx);
	return s->fatal;
}

static dmr_status_t sim_barrier(dmr_be_t *be, uint64_t deadline_ps, dmr_err_t *err)
{
	(void)be;
	(void)deadline_ps;
	(void)err;
	return DMR_OK; /* one process, one clock */
}

static int sim_progress(dmr_be_t *be, uint64_t until_ps)
{
	sim_t *s = to_sim(be);
	dmr_sim_event_t ev;
	while (!s->fatal) {
		if (dmr_sim_eventq_peek_time(&s->q) > until_ps)
			return -1;
		if (!dmr_sim_eventq_pop(&s->q, &ev))
			return -1;
		s->now = ev.t;
		s->st.events++;
		switch (ev.type) {
		case EV_MN_ARRIVE:
			ev_mn_arrive(s, ev.arg, ev.t);
			break;
		case EV_MN_EFFECT:
			ev_mn_effect(s, ev.arg, ev.t);
			break;
		case EV_CN_COMPLETE:
			ev_cn_complete(s, ev.arg, ev.t);
			break;
		case EV_TIMER: {
			sim_op_t *op = &s->ops[ev.arg];
			dmr_wc_t wc = {.wr_id = op->wr.wr_id, .opcode = DMR_WR_TIMER};
			uint32_t w = op->worker;
			op_free(s, ev.arg);
			cq_push(s, w, &wc, ev.t);
			break;
		}
		case EV_WORKER_RUN: {
			sim_worker_t *wk = &s->workers[ev.arg];
			wk->scheduled = 0;
			if (wk->clock > ev.t) { /* busy: come back when free */
				wk->scheduled = 1;
				push(s, wk->clock, EV_WORKER_RUN, ev.arg);
				break;
			}
			if (wk->cq_n)
				return (int)ev.arg;
			break;
		}
		}
	}
	return -1;
}

static void *sim_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	sim_t *s = to_sim(be);
	if (mn != 0)
		return NULL;
	if (len_p)
		*len_p = s->mn.size;
	return s->mn.mem;
}

static void sim_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	*st = to_sim(be)->st;
}

static void sim_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	sim_t *s = to_sim(be);
	sim_worker_t *wk = &s->workers[worker];
	wk->clock = max64(wk->clock, s->now) + ps;
}

const dmr_model_t *dmr_sim_model(dmr_be_t *be)
{
	return be && be->ops == &dmr_sim_ops ? &to_sim(be)->m : NULL;
}

dmr_status_t dmr_sim_set_mtu(dmr_be_t *be, uint32_t mtu)
{
	if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
		return DMR_ERR_INVALID;
	to_sim(be)->m.mtu = mtu;
	return DMR_OK;
}

uint64_t dmr_sim_time(dmr_be_t *be)
{
	return to_sim(be)->now;
}

const dmr_be_ops_t dmr_sim_ops = {
	.size = sizeof(dmr_be_ops_t),
	.name = "sim",
	.caps = DMR_BE_CAP_DRIVEN,
	.open = sim_open,
	.close = sim_close,
	.mr_reg = sim_mr_reg,
	.post = sim_post,
	.poll = sim_poll,
	.now = sim_now,
	.timer = sim_timer,
	.barrier = sim_barrier,
	.progress = sim_progress,
	.mn_memory = sim_mn_memory,
	.stats = sim_stats,
	.charge = sim_charge,
};
