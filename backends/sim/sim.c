/*
 * backends/sim/sim.c - see sim.h for the model. The event path: posts,
 * events, completions, progress; open, close and the control ops are in
 * sim_setup.c, the state both share in sim_impl.h.
 */
#include "sim_impl.h"

#include <stdlib.h>
#include <string.h>

/* Inlined everywhere: out of line (gcc's choice at -O2) a call per event
 * cost 10 instructions of the 62 of a push (callgrind). */
static inline __attribute__((always_inline)) void push(sim_t *s, uint64_t t, uint32_t type,
						       uint32_t arg)
{
	dmr_status_t st = dmr_sim_eventq_push(&s->q, t, type, arg);
	if (st != DMR_OK && !s->fatal)
		s->fatal = st;
}

/*
 * An event at t that a handler is about to push as its last act: is it the
 * very next event popped? Yes when t is before every pending event
 * (strictly: a tie pops in push order, after those), no worker is to be
 * returned to first (s->ready) and t is within progress()'s bound. Then the
 * caller handles it at once instead of pushing it, and this sets the clock
 * to t and counts the event (st.events), as the pop would have: results are
 * the same, with no queue traffic. Only inside progress(), never from a
 * post (a worker may post more before the event is due). A KV slice's three
 * events mostly take none of the queue's push and pop (docs/MODEL.md,
 * "Events per WR"); on TPC-C at 4 CNs the queue is rarely that empty.
 */
static inline __attribute__((always_inline)) int run_now(sim_t *s, uint64_t t)
{
	if (t < dmr_sim_eventq_peek_time(&s->q) && s->ready < 0 && t <= s->until) {
		s->now = t;
		s->st.events++;
		return 1;
	}
	return 0;
}

static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* When a worker's next piece of CPU work can start: after its own previous
 * work, not before global time, and on a software NIC after what its host
 * CPU has queued (other workers' posts, the NIC's work). */
static inline uint64_t cpu_start(const sim_t *s, const sim_worker_t *wk)
{
	uint64_t t = max64(wk->clock, s->now);
	if (wk->cpu)
		t = max64(t, *wk->cpu);
	return t;
}

/* The worker's CPU work ends at t. */
static inline void cpu_end(sim_worker_t *wk, uint64_t t)
{
	wk->clock = t;
	if (wk->cpu)
		*wk->cpu = t;
}

/* READ and atomics take a READ/atomic credit (max_rd_atomic); WRITE and
 * an RPC's SEND do not. */
static inline int is_rd_atomic(uint8_t opc)
{
	return opc != DMR_WR_WRITE && opc != DMR_WR_RPC;
}

/* Request bytes on the wire for one WR. */
static inline uint64_t req_wire_bytes(const dmr_model_t *m, const sim_op_t *wr)
{
	switch (wr->opcode) {
	case DMR_WR_READ:
		return m->pkt_overhead + m->reth_bytes;
	case DMR_WR_WRITE:
		return dmr_model_msg_wire_bytes(m, wr->length, m->reth_bytes, 0);
	case DMR_WR_RPC: /* a SEND: no RETH */
		return dmr_model_msg_wire_bytes(m, wr->length, 0, 0);
	default:
		return m->pkt_overhead + m->atomiceth_bytes;
	}
}

static inline uint64_t resp_wire_bytes(const dmr_model_t *m, const sim_op_t *wr)
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

/* CN side of a WR of QP q, computed when the NIC takes it at time t: NIC
 * message service and processing, then the CN uplink (both shared by the
 * CN's QPs to every MN); schedules MN arrival. */
static void issue(sim_t *s, uint32_t q, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_cn_t *cn = &s->cns[op->cn];
	sim_qp_t *qp = &s->qps[q];
	const sim_mn_t *mn = &s->mn[op->mn];
	if (dmr_sim_pool_on(&mn->pool) && op->remote < mn->size) /* for ev_mn_arrive */
		__builtin_prefetch(&mn->pool.pmap[op->remote >> DMR_SIM_POOL_SHIFT]);
	uint64_t w = dmr_model_wire_ps(m, req_wire_bytes(m, op));
	op->req_wire = (uint32_t)w;
	if (is_rd_atomic(op->opcode))
		qp->inflight++;
	if (m->host_cpus) {
		/* software NIC: the requester is the posting thread (its CPU time
		 * is post_wqe_ns), so no CN NIC or uplink queue is shared between
		 * workers; a worker's clock runs ahead of global time by what its
		 * CPU has queued, so arrivals are not in time order per CN */
		t += m->nic_msg_ps + m->nic_proc_ps + w + m->prop_ps + m->switch_ps;
		/* RC: a QP's requests arrive in posting order (a WR released by
		 * a credit at global time may be issued "before" an earlier WR
		 * that its worker's clock put ahead) */
		t = max64(t, qp->last_arr);
		qp->last_arr = t;
		push(s, t, EV_MN_ARRIVE, idx);
		return;
	}
	uint64_t svc = m->nic_msg_ps;
	if (m->qpc_qps && !dmr_sim_qpc_touch(&cn->qpc, q) && is_rd_atomic(op->opcode))
		svc += m->qpc_miss_ps; /* the context fetched over the CN's PCIe */
	t = max64(t, cn->nic_free) + svc;
	cn->nic_free = t;
	t += m->nic_proc_ps;
	t = max64(t, cn->up_free) + w;
	cn->up_free = t;
	push(s, t + m->prop_ps + m->switch_ps, EV_MN_ARRIVE, idx);
}

static inline void qp_retire(sim_t *s, uint32_t q, uint64_t t)
{
	sim_qp_t *qp = &s->qps[q];
	uint64_t *ring = s->rings + (size_t)q * s->rcap;
	while (qp->rn && ring[qp->rhead] <= t) {
		qp->rhead = (qp->rhead + 1) & (s->rcap - 1);
		qp->rn--;
		qp->inflight--;
	}
}

/*
 * Issue QP q's held WRs in order as their READ/atomic credits free: at the
 * oldest known completion time (the ring's head; never before now), retire
 * it, issue while credits allow, and so on while completions are known;
 * what stays held is released when cn_arrive computes the next completion.
 * No event: a held WR is issued now at its (future) issue time, as a post
 * is issued at its worker's clock, so the CN's NIC and uplink serve WRs in
 * the order they are issued, not strictly in time order (docs/MODEL.md,
 * "Events per WR"; it was a wake-up event per held WR, 0.58 per verb on
 * TPC-C extreme at 4 x 28 x 3: issue #13 asks for none).
 */
static inline __attribute__((always_inline)) void qp_release(sim_t *s, uint32_t q)
{
	sim_qp_t *qp = &s->qps[q];
	const uint64_t *ring = s->rings + (size_t)q * s->rcap;
	while (qp->pend_head != NOIDX && qp->rn) {
		uint64_t t = max64(ring[qp->rhead], s->now);
		qp_retire(s, q, t);
		while (qp->pend_head != NOIDX) {
			uint32_t p = qp->pend_head;
			if (is_rd_atomic(s->ops[p].opcode) && qp->inflight >= s->m.qp_max_rd_atomic)
				break;
			qp->pend_head = s->ops[p].next;
			if (qp->pend_head == NOIDX)
				qp->pend_tail = NOIDX;
			issue(s, q, p, t);
		}
	}
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

/* Drop per-address entries that no longer delay anything (free <= now:
 * such an entry changes no max()), into a table twice as large when more
 * than a quarter of the slots stay live. Exact whatever the table size. */
static void atomic_gc(sim_mn_t *mn, uint64_t now)
{
	uint32_t n = mn->amask + 1, live = 0;
	for (uint32_t i = 0; i < n; i++)
		live += mn->atab[i].addr && mn->atab[i].free > now;
	uint32_t nn = live > n / 4 && n < (1u << 26) ? n * 2 : n;
	addr_ent_t *old = mn->atab;
	addr_ent_t *tab = calloc(nn, sizeof(*tab));
	if (!tab)
		return; /* keep the old table: correct, only slower */
	mn->atab = tab;
	mn->amask = nn - 1;
	mn->aused = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (old[i].addr && old[i].free > now) {
			addr_ent_t *e = atomic_slot(mn, old[i].addr - 1, UINT64_MAX);
			e->free = old[i].free;
		}
	}
	free(old);
}

/* Is MN-region offset off in a range whose lock words are in device
 * memory? (A few ranges, scanned only for atomics with --dm-locks.) */
static inline int in_ranges(const dmr_be_dm_locks_t *r, uint64_t off)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (off - r->off[i] < r->len[i])
			return 1;
	return 0;
}

/* A READ or WRITE of len bytes at off whose DMA streams from `start` for
 * dma_x ps: on the CXL tier (--cxl-tables) it also streams through the
 * tier's bandwidth (FIFO, from `start`) and pays its added latency; returns
 * the extra time to the data's effect: the latency, plus how much later
 * the tier's stream ends than the DMA's (0 off the tier). */
static inline uint64_t cxl_extra(sim_t *s, sim_mn_t *mn, uint64_t off, uint64_t len, uint64_t start,
				 uint64_t dma_x, uint64_t lat_ps)
{
	if (!s->cxl.n || !in_ranges(&s->cxl, off))
		return 0;
	uint64_t x = (len * s->m.cxl_ps_per_byte_x1000 + 999) / 1000;
	uint64_t st = max64(start, mn->cxl_free);
	mn->cxl_free = st + x;
	return max64(st + x, start + dma_x) - (start + dma_x) + lat_ps;
}

static void ev_mn_arrive(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_mn_t *mn = &s->mn[op->mn];
	/* the effect comes later: start fetching the touched line and the
	 * WR's cold half (local buffer, operands) now. Not the line of a READ
	 * or WRITE without payload (SET_PAYLOAD 0: its effect touches no MN
	 * byte): in a never-touched region (kv run's folded pool) each such
	 * prefetch walked the page tables of an unmapped page, 11 % of a KV
	 * replay's CPU (perf, llama-3-8b on the synthetic Mooncake trace) */
	if (op->remote < mn->size &&
	    !(s->no_payload && (op->opcode == DMR_WR_READ || op->opcode == DMR_WR_WRITE))) {
		if (!dmr_sim_pool_on(&mn->pool)) {
			__builtin_prefetch(mn->mem + op->remote, 1, 3);
		} else { /* its map entry was fetched at issue() */
			const uint8_t *pg =
			    dmr_sim_pool_page(&mn->pool, op->remote >> DMR_SIM_POOL_SHIFT);
			if (pg)
				__builtin_prefetch(pg + (op->remote & (DMR_SIM_POOL_PAGE - 1)), 1,
						   3);
		}
	}
	__builtin_prefetch(&s->opx[idx]);
	/* MN downlink, cut-through: the last byte leaves no earlier than the
	 * link can carry it after the previous message. */
	t = max64(t, mn->down_free + op->req_wire);
	mn->down_free = t;
	mn->st.link_down_busy_ps += op->req_wire;
	t += m->prop_ps;
	uint64_t svc = m->nic_msg_ps;
	if (m->qpc_qps && !dmr_sim_qpc_touch(&mn->qpc, op->qp) && is_rd_atomic(op->opcode))
		svc += m->qpc_miss_ps; /* the context fetched over the MN's PCIe */
	t = max64(t, mn->nic_free) + svc;
	mn->nic_free = t;
	mn->st.nic_busy_ps += svc;
	t += m->nic_proc_ps;
	uint64_t len = op->length, eff;
	if (m->host_cpus) {
		/* software NIC: responder and completer work on the poster's CPU
		 * (loopback: CN and MN on one host), FIFO with its other work */
		uint64_t *cpu = s->workers[s->qps[op->qp].worker].cpu;
		/* busy CPU: the task waits; a READ's responder is deferred to
		 * a kernel thread (rxe_resp_queue_pkt schedules the responder
		 * for READ requests) and pays a switch with the busy worker */
		if (t < *cpu)
			t = *cpu + (op->opcode == DMR_WR_READ ? m->host_switch_ps : 0);
		/* an RPC's request is a SEND: the CPU time of a WRITE's bytes */
		t +=
		    dmr_model_host_ps(m, op->opcode == DMR_WR_RPC ? DMR_WR_WRITE : op->opcode, len);
		if (op->first_read)
			t += m->host_read_post_ps; /* the batch's responder run */
		*cpu = t;
	}
	switch (op->opcode) {
	case DMR_WR_READ: {
		/* DMA read engine, FIFO: the data is fetched from dma_read_ps
		 * after the start at the DMA rate; the response streams out as it
		 * arrives (ev_mn_effect) */
		uint64_t x = (len * m->dma_ps_per_byte_x1000 + 999) / 1000;
		uint64_t start = max64(t, mn->dma_rd_free);
		mn->dma_rd_free = start + x;
		mn->st.dma_busy_ps += x;
		eff = max64(start + m->dma_read_ps +
				cxl_extra(s, mn, op->remote, len, start, x, m->cxl_read_ps),
			    mn->last_write_eff);
		break;
	}
	case DMR_WR_WRITE: {
		/* DMA write engine, cut-through with the arriving packets: the last
		 * byte is written no earlier than it arrived (t) nor than the engine
		 * can write the message after the previous one */
		uint64_t x = (len * m->dma_ps_per_byte_x1000 + 999) / 1000;
		uint64_t end = max64(t, mn->dma_wr_free + x);
		mn->dma_wr_free = end;
		mn->st.dma_busy_ps += x;
		eff = max64(end + m->dma_write_ps +
				cxl_extra(s, mn, op->remote, len, end - x, x, m->cxl_write_ps),
			    mn->last_write_eff);
		mn->last_write_eff = eff;
		break;
	}
	case DMR_WR_RPC: {
		/* an RPC's request: DMA-written into the receive buffer as a
		 * WRITE's payload is (not ordered with the WRITEs to the region) */
		uint64_t x = (len * m->dma_ps_per_byte_x1000 + 999) / 1000;
		uint64_t end = max64(t, mn->dma_wr_free + x);
		mn->dma_wr_free = end;
		mn->st.dma_busy_ps += x;
		eff = end + m->dma_write_ps;
		break;
	}
	default: {
		/* host memory: the NIC's atomic unit, then the address's
		 * server; device memory (--dm-locks): the NIC's on-chip atomic
		 * unit at its own rates, no PCIe (docs/MODEL.md) */
		uint64_t *unit = &mn->atomic_free, gps = m->atomic_global_ps,
			 aps = m->atomic_addr_ps;
		if (s->dm.n && in_ranges(&s->dm, op->remote)) {
			unit = &mn->dm_atomic_free;
			gps = m->dm_atomic_global_ps;
			aps = m->dm_atomic_addr_ps;
		}
		t = max64(t, *unit) + gps;
		*unit = t;
		if (unit == &mn->atomic_free)
			mn->st.atomic_busy_ps += gps;
		else
			mn->st.dm_atomic_busy_ps += gps;
		if (mn->aused > (mn->amask + 1) / 2)
			atomic_gc(mn, s->now);
		addr_ent_t *e = atomic_slot(mn, op->remote, s->now);
		t = max64(t, e->free) + aps;
		e->free = t;
		/* on the CXL tier the read-modify-write reaches the word later
		 * (not when the word is in device memory: --dm-locks) */
		if (s->cxl.n && unit == &mn->atomic_free && in_ranges(&s->cxl, op->remote))
			t += m->cxl_read_ps;
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

static dmr_be_stream_t *stream_of(const sim_t *s, uint32_t w);
static int64_t stream_fits(const sim_t *s, uint32_t w, const dmr_be_stream_t *x, uint32_t n);
static void stream_take(sim_t *s, uint32_t w, dmr_be_stream_t *x, uint32_t n, uint64_t r);

static void cq_push(sim_t *s, uint32_t w, const dmr_wc_t *wc, uint64_t t)
{
	sim_worker_t *wk = &s->workers[w];
	if (s->sx && !wk->scheduled && wk->clock <= t && s->ready < 0 && !wk->cq_n) {
		/* the idle worker would be handed to the caller now, with this
		 * completion alone: its stream may take it (nothing after this
		 * call in the event's handler pushes an event or touches what
		 * the refill does: cn_arrive's flush_ready needs a QP in error,
		 * which stream_fits refuses) */
		dmr_be_stream_t *x = stream_of(s, w);
		int64_t r;
		if (x && wc->wr_id == x->wr_id && wc->status == DMR_WC_SUCCESS &&
		    (r = stream_fits(s, w, x, 1)) >= 0) {
			stream_take(s, w, x, 1, (uint64_t)r);
			return;
		}
	}
	if (wk->cq_n == wk->cq_cap) {
		dmr_wc_t *n = malloc(sizeof(*n) * wk->cq_cap * 2);
		if (!n) {
			s->fatal = DMR_ERR_NOMEM;
			return;
		}
		for (uint32_t i = 0; i < wk->cq_n; i++)
			n[i] = wk->cq[(wk->cq_head + i) & (wk->cq_cap - 1)];
		free(wk->cq);
		wk->cq = n;
		wk->cq_head = 0;
		wk->cq_cap *= 2;
	}
	wk->cq[(wk->cq_head + wk->cq_n) & (wk->cq_cap - 1)] = *wc;
	wk->cq_n++;
	if (!wk->scheduled) {
		wk->scheduled = 1;
		if (wk->clock <= t && s->ready < 0)
			s->ready = (int)w; /* idle: handled now, no event */
		else
			push(s, max64(t, wk->clock), EV_WORKER_RUN, w);
	}
}

static void op_free(sim_t *s, uint32_t idx)
{
	s->ops[idx].next = s->free_head;
	s->free_head = idx;
}

/* A flushed WR's completion: at its post time, never before the QP's last
 * completion (RC order, backend.h); it becomes the last. */
static void flush_complete(sim_t *s, sim_qp_t *qp, uint32_t idx)
{
	uint64_t t = max64(s->opm[idx].t_post, qp->last_cqe);
	qp->last_cqe = t;
	push(s, t, EV_CN_COMPLETE, idx);
}

/* Every WR posted before the flushed ones has its completion time: the
 * waiting flushed WRs complete after them, in posting order. */
static void flush_ready(sim_t *s, sim_qp_t *qp)
{
	while (qp->fl_head != NOIDX) {
		uint32_t idx = qp->fl_head;
		qp->fl_head = s->ops[idx].next;
		s->ops[idx].next = NOIDX;
		flush_complete(s, qp, idx);
	}
	qp->fl_tail = NOIDX;
}

static inline __attribute__((always_inline)) void ev_cn_complete(sim_t *s, uint32_t idx,
								 uint64_t t);

/* WR idx completes at t (cn_arrive's last push): at once when it is the
 * next event (run_now), else an EV_CN_COMPLETE. What cn_arrive does after
 * this call pushes only completions due no earlier than t (flush_ready:
 * t' >= t, a later sequence), which pop after it either way. */
static inline __attribute__((always_inline)) void complete_at(sim_t *s, uint32_t idx, uint64_t t)
{
	if (run_now(s, t))
		ev_cn_complete(s, idx, t);
	else
		push(s, t, EV_CN_COMPLETE, idx);
}

/* The response of WR idx (wire time w, ps) reaches its CN's downlink at
 * time t: CN downlink, CN NIC, CQ in posting order; the READ/atomic credit
 * and the completion. Inlined into both callers: a call per WR on the one-MN
 * path cost 20 instructions per verb (callgrind). */
static inline __attribute__((always_inline)) void cn_arrive(sim_t *s, uint32_t idx, uint64_t t,
							    uint64_t w)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	const uint32_t q = op->qp;
	sim_cn_t *cn = &s->cns[op->cn];
	t = max64(t, cn->down_free + w);
	cn->down_free = t;
	t += m->prop_ps + m->nic_proc_ps;
	sim_qp_t *qp = &s->qps[q];
	t = max64(t, qp->last_cqe);
	qp->last_cqe = t;
	qp->open--;
	if (is_rd_atomic(op->opcode)) {
		s->rings[(size_t)q * s->rcap + ((qp->rhead + qp->rn) & (s->rcap - 1))] = t;
		qp->rn++;
		if (qp->pend_head != NOIDX)
			qp_release(s, q);
	}
	if ((op->flags & DMR_WR_SIGNALED) || op->status) {
		complete_at(s, idx, t);
	} else {
		s->st.verbs++;
		op_free(s, idx);
	}
	/* WRs flushed while this one was open complete after it (pushed
	 * after its completion: same time, later in the queue) */
	if (qp->open == 0 && qp->fl_head != NOIDX)
		flush_ready(s, qp);
}

/* A MASKED_CAS's memory effect (backend.h: compare the bits of
 * compare_mask, swap those of swap_mask); out of line, so that the
 * effects of the other opcodes compile as before. */
static __attribute__((noinline, cold)) void masked_cas(sim_t *s, uint32_t idx, uint8_t *p,
						       const sim_opx_t *x)
{
	const sim_opm_t *mk = &s->opm[idx];
	uint64_t old, nv;
	memcpy(&old, p, 8);
	if (((old ^ x->compare_add) & mk->compare_mask) == 0) {
		nv = (old & ~mk->swap_mask) | (x->swap & mk->swap_mask);
		memcpy(p, &nv, 8);
	}
	memcpy(x->local, &old, 8);
	s->st.cas++;
	s->mn[s->ops[idx].mn].st.atomics++;
}

static void rpc_arrived(sim_t *s, uint32_t idx, uint64_t t);

static void ev_mn_effect(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	if (__builtin_expect(op->opcode == DMR_WR_RPC, 0)) {
		rpc_arrived(s, idx, t);
		return;
	}
	const dmr_model_t *m = &s->m;
	sim_mn_t *mn = &s->mn[op->mn];
	const uint32_t q = op->qp;
	const sim_op_t *wr = op;
	const sim_opx_t *x = &s->opx[idx];
	uint64_t len = wr->opcode == DMR_WR_READ || wr->opcode == DMR_WR_WRITE ? wr->length : 8;
	if (wr->remote > mn->size || len > mn->size - wr->remote) {
		op->status = DMR_WC_REM_ACCESS_ERR;
		s->qps[q].error = 1;
	} else {
		/* an atomic's word (8-aligned: dmr_be_post checks) */
		uint8_t *p = wr->opcode == DMR_WR_READ || wr->opcode == DMR_WR_WRITE ? NULL
			     : !dmr_sim_pool_on(&mn->pool)
				 ? mn->mem + wr->remote
				 : dmr_sim_pool_word(&mn->pool, wr->remote);
		switch (wr->opcode) {
		case DMR_WR_READ:
			if (s->no_payload)
				;
			else if (!dmr_sim_pool_on(&mn->pool))
				memcpy(x->local, mn->mem + wr->remote, len);
			else
				dmr_sim_pool_read(&mn->pool, wr->remote, len, x->local);
			mn->st.reads++;
			mn->st.bytes_read += len;
			break;
		case DMR_WR_WRITE:
			if (s->no_payload)
				;
			else if (!dmr_sim_pool_on(&mn->pool))
				memcpy(mn->mem + wr->remote, x->local, len);
			else
				dmr_sim_pool_write(&mn->pool, wr->remote, len, x->local);
			mn->st.writes++;
			mn->st.bytes_written += len;
			break;
		case DMR_WR_CAS: {
			uint64_t old;
			memcpy(&old, p, 8);
			if (old == x->compare_add)
				memcpy(p, &x->swap, 8);
			memcpy(x->local, &old, 8);
			s->st.cas++;
			mn->st.atomics++;
			break;
		}
		case DMR_WR_FAA: {
			uint64_t old, nv;
			memcpy(&old, p, 8);
			nv = old + x->compare_add;
			memcpy(p, &nv, 8);
			memcpy(x->local, &old, 8);
			s->st.faa++;
			mn->st.atomics++;
			break;
		}
		default: /* DMR_WR_MASKED_CAS (dmr_be_post admits nothing else) */
			masked_cas(s, idx, p, x);
			break;
		}
	}
	/* response: MN NIC, MN uplink, switch, CN downlink, CN NIC. A READ
	 * response's last byte also waits for the DMA engine to have fetched it
	 * (x after the effect). */
	t += m->nic_proc_ps;
	uint64_t w = dmr_model_wire_ps(m, resp_wire_bytes(m, wr));
	uint64_t tl = max64(t, mn->up_free) + w;
	if (wr->opcode == DMR_WR_READ)
		tl = max64(tl, t + (len * m->dma_ps_per_byte_x1000 + 999) / 1000);
	t = tl;
	mn->up_free = t;
	mn->st.link_up_busy_ps += w;
	t += m->prop_ps + m->switch_ps;
	if (s->nmns > 1) {
		/* responses of several MNs share the CN's downlink: served in
		 * the order they reach it, an event (one MN: the order of the
		 * effects is that order already) */
		push(s, t, EV_CN_ARRIVE, idx);
		return;
	}
	cn_arrive(s, idx, t, w);
}

/* The answer of RPC idx (wire time w, ps) at its CN's downlink at time t:
 * CN downlink, CN NIC, its completion (a SEND of the MN's: not ordered with
 * the QP's RC responses, backend.h dmr_be_rpc). */
static void rpc_cn_arrive(sim_t *s, uint32_t idx, uint64_t t, uint64_t w)
{
	sim_cn_t *cn = &s->cns[s->ops[idx].cn];
	t = max64(t, cn->down_free + w);
	cn->down_free = t;
	push(s, t + s->m.prop_ps + s->m.nic_proc_ps, EV_CN_COMPLETE, idx);
}

/* Wire bytes of RPC idx's answer (a SEND of op->length bytes). */
static inline uint64_t rpc_resp_wire_ps(const sim_t *s, uint32_t idx)
{
	return dmr_model_wire_ps(&s->m, dmr_model_msg_wire_bytes(&s->m, s->ops[idx].length, 0, 0));
}

/* The request of RPC idx is in the MN's memory at t (its SEND's effect):
 * to the core of the MN free first (FIFO servers; the lowest index among
 * those free together), which holds it mn_rpc_req_ps + accesses x
 * mn_rpc_op_ps (models/model.h); EV_RPC_DONE when it finishes. */
static void rpc_arrived(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	sim_mn_t *mn = &s->mn[op->mn];
	sim_qp_t *qp = &s->qps[op->qp];
	qp->open--; /* the SEND is delivered: later flushed WRs need not wait */
	if (qp->open == 0 && qp->fl_head != NOIDX)
		flush_ready(s, qp);
	uint32_t k = 0;
	for (uint32_t i = 1; i < s->m.mn_rpc_cores; i++)
		if (mn->rpc_free[i] < mn->rpc_free[k])
			k = i;
	uint64_t svc = s->m.mn_rpc_req_ps + (uint64_t)s->opr[idx].accesses * s->m.mn_rpc_op_ps;
	uint64_t done = max64(t, mn->rpc_free[k]) + svc;
	mn->rpc_free[k] = done;
	mn->st.rpc_busy_ps += svc;
	push(s, done, EV_RPC_DONE, idx);
}

/* RPC idx's core finished at t: the handler runs on the MN's region now,
 * then its answer goes out as a SEND: MN NIC, DMA read of the response,
 * MN uplink, switch, the CN's downlink. */
static void ev_rpc_done(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	const dmr_model_t *m = &s->m;
	sim_mn_t *mn = &s->mn[op->mn];
	const sim_opr_t *r = &s->opr[idx];
	lazy_all(s, op->mn); /* the handler reads the region raw */
	uint32_t resp = r->handler(r->arg, mn->mem, mn->size);
	if (resp > r->resp_cap) { /* the handler broke its contract */
		op->status = DMR_WC_GENERAL_ERR;
		resp = r->resp_cap;
	}
	mn->st.rpcs++;
	op->length = resp;
	t = max64(t, mn->nic_free) + m->nic_msg_ps;
	mn->nic_free = t;
	mn->st.nic_busy_ps += m->nic_msg_ps;
	t += m->nic_proc_ps;
	uint64_t x = ((uint64_t)resp * m->dma_ps_per_byte_x1000 + 999) / 1000;
	uint64_t start = max64(t, mn->dma_rd_free);
	mn->dma_rd_free = start + x;
	mn->st.dma_busy_ps += x;
	uint64_t w = rpc_resp_wire_ps(s, idx);
	t = max64(max64(start + m->dma_read_ps, mn->up_free) + w, start + x);
	mn->up_free = t;
	mn->st.link_up_busy_ps += w;
	t += m->prop_ps + m->switch_ps;
	if (s->nmns > 1) { /* the CN's downlink in arrival order: an event */
		push(s, t, EV_CN_ARRIVE, idx);
		return;
	}
	rpc_cn_arrive(s, idx, t, w);
}

/* Several MNs: response of WR idx at its CN's downlink at time t. */
static void ev_cn_arrive(sim_t *s, uint32_t idx, uint64_t t)
{
	const dmr_model_t *m = &s->m;
	if (s->ops[idx].opcode == DMR_WR_RPC) {
		rpc_cn_arrive(s, idx, t, rpc_resp_wire_ps(s, idx));
		return;
	}
	cn_arrive(s, idx, t, dmr_model_wire_ps(m, resp_wire_bytes(m, &s->ops[idx])));
}

static inline __attribute__((always_inline)) void ev_cn_complete(sim_t *s, uint32_t idx, uint64_t t)
{
	sim_op_t *op = &s->ops[idx];
	s->st.verbs += op->opcode != DMR_WR_RPC; /* one-sided operations only */
	if (op->status)
		s->st.errors++;
	dmr_wc_t wc = {.wr_id = s->opx[idx].wr_id,
		       .opcode = op->opcode,
		       .status = op->status,
		       .mn = op->mn,
		       .byte_len =
			   op->opcode == DMR_WR_READ || op->opcode == DMR_WR_RPC ? op->length : 0};
	uint32_t w = s->qps[op->qp].worker;
	op_free(s, idx);
	cq_push(s, w, &wc, t);
}

/* What a post does before and after its WRs: the doorbell's CPU time
 * starts the worker's work (post_begin), each WR adds post_wqe_ps
 * (post_one), the worker's CPU is busy until the last (cpu_end). */
static inline __attribute__((always_inline)) uint64_t post_begin(sim_t *s, sim_worker_t *wk)
{
	s->st.doorbells++;
	return cpu_start(s, wk) + s->m.post_doorbell_ps;
}

/* WR idx posted at t on a QP in error: flushed, it completes with
 * FLUSH_ERR after the QP's earlier WRs (waiting for those still open:
 * flush_ready). sim_post's WRs and sim_rpc's SEND. */
static void post_flushed(sim_t *s, sim_qp_t *qp, uint32_t idx, uint64_t t)
{
	s->ops[idx].status = DMR_WC_FLUSH_ERR;
	s->opm[idx].t_post = t;
	if (qp->open == 0) {
		flush_complete(s, qp, idx);
		return;
	}
	if (qp->fl_tail != NOIDX)
		s->ops[qp->fl_tail].next = idx;
	else
		qp->fl_head = idx;
	qp->fl_tail = idx;
}

/*
 * One WR of a post on QP q (the worker's to MN mn, on CN cn; qp =
 * &s->qps[q]); the worker's CPU is at *t_p before it and after it (+
 * post_wqe_ps: the WR's issue time). *first_read: no READ before it in
 * this doorbell yet. The WR is wr (sim_post), or, wr NULL, a signalled
 * READ or WRITE of the other arguments (the streams' refill, stream_take:
 * no dmr_wr_t built per slice). DMR_OK, or DMR_ERR_NOMEM (no WR record).
 * Inlined into both, so each keeps only its own half of the branch on wr.
 */
static inline __attribute__((always_inline)) dmr_status_t
post_one(sim_t *s, uint32_t q, sim_qp_t *qp, uint16_t cn, uint32_t mn, uint64_t *t_p,
	 uint8_t *first_read, const dmr_wr_t *wr, uint64_t wr_id, void *local, uint64_t remote,
	 uint32_t length, uint8_t opcode)
{
	const dmr_model_t *m = &s->m;
	uint32_t idx = s->free_head;
	if (__builtin_expect(idx == NOIDX, 0)) {
		if (dmr_sim_grow_ops(s) != DMR_OK)
			return DMR_ERR_NOMEM;
		idx = s->free_head;
	}
	sim_op_t *op = &s->ops[idx];
	const uint32_t nx = op->next;
	s->free_head = nx;
	if (nx != NOIDX) { /* the next WR's records (LIFO: cold) */
		__builtin_prefetch(&s->ops[nx], 1);
		__builtin_prefetch(&s->opx[nx], 1);
	}
	if (wr) {
		opcode = wr->opcode;
		op->remote = wr->remote;
		op->length = wr->length;
		op->flags = wr->flags;
		s->opx[idx] = (sim_opx_t){.wr_id = wr->wr_id,
					  .local = wr->local,
					  .compare_add = wr->compare_add,
					  .swap = wr->swap};
		if (__builtin_expect(opcode == DMR_WR_MASKED_CAS, 0))
			s->opm[idx] = (sim_opm_t){wr->compare_mask, wr->swap_mask, 0};
	} else {
		op->remote = remote;
		op->length = length;
		op->flags = DMR_WR_SIGNALED;
		s->opx[idx] = (sim_opx_t){.wr_id = wr_id, .local = local};
	}
	op->qp = q;
	op->cn = cn;
	op->mn = (uint8_t)mn;
	op->opcode = opcode;
	op->status = 0;
	op->first_read = opcode == DMR_WR_READ && *first_read;
	*first_read &= opcode != DMR_WR_READ;
	op->next = NOIDX;
	uint64_t t = *t_p += m->post_wqe_ps;
	if (qp->error) {
		post_flushed(s, qp, idx, t);
		return DMR_OK;
	}
	qp->open++;
	if (is_rd_atomic(opcode) && qp->pend_head == NOIDX && qp->inflight >= m->qp_max_rd_atomic)
		qp_retire(s, q, t);
	if (qp->pend_head != NOIDX ||
	    (is_rd_atomic(opcode) && qp->inflight >= m->qp_max_rd_atomic)) {
		if (qp->pend_tail != NOIDX)
			s->ops[qp->pend_tail].next = idx;
		else
			qp->pend_head = idx;
		qp->pend_tail = idx;
		qp_release(s, q);
		return DMR_OK;
	}
	issue(s, q, idx, t);
	return DMR_OK;
}

static dmr_status_t sim_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err)
{
	sim_t *s = to_sim(be);
	sim_worker_t *wk = &s->workers[worker];
	const uint32_t q = worker * s->nmns + mn; /* mn < mns: dmr_be_post checked */
	sim_qp_t *qp = &s->qps[q];
	const uint16_t cn = wk->cn;
	uint64_t t = post_begin(s, wk);
	uint8_t first_read = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (post_one(s, q, qp, cn, mn, &t, &first_read, &wrs[i], 0, NULL, 0, 0, 0) !=
		    DMR_OK)
			return dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory for WRs");
	}
	cpu_end(wk, t);
	if (!s->fatal)
		return DMR_OK;
	return dmr_err_set(err, s->fatal,
			   s->fatal == DMR_ERR_NOMEM
			       ? "sim: out of memory for events"
			       : "sim: event queue: an event before the current time or "
				 "beyond 2^35 events");
}

/*
 * DMR_BE_CTL_STREAMS (backend.h): the caller's refill of a worker's slices,
 * done here where the caller would be handed the worker. Exact: the same
 * CPU times (a poll, then posts of at most 64 WRs per doorbell) and the
 * same order of events pushed as the caller's poll and pump (core/kv/xfer.c
 * dmr_kv_xeng_pump); only the calls out of progress() and back are saved.
 */
static inline dmr_be_stream_t *stream_of(const sim_t *s, uint32_t w)
{
	const dmr_be_streams_t *sx = s->sx;
	if (w - sx->w0 >= sx->n)
		return NULL;
	dmr_be_stream_t *x = &sx->s[w - sx->w0];
	return x->wr_id && x->slice && x->opcode <= DMR_WR_WRITE && x->mn < s->nmns ? x : NULL;
}

/* Slices to post after n more completions of stream x (worker w), or -1
 * when the caller must handle them (backend.h's conditions). */
static inline int64_t stream_fits(const sim_t *s, uint32_t w, const dmr_be_stream_t *x, uint32_t n)
{
	if (s->now >= s->sx->until_ps || x->inflight < n || x->inflight - n > x->depth ||
	    x->done + (uint64_t)n * x->slice >= x->len || s->qps[w * s->nmns + x->mn].error)
		return -1;
	uint64_t r = x->depth - (x->inflight - n);
	return x->posted + r * x->slice < x->len ? (int64_t)r : -1;
}

/* Take n completions of stream x (already off the CQ): the poll's CPU
 * time, then r slices posted as dmr_kv_xeng_pump posts them. */
static void stream_take(sim_t *s, uint32_t w, dmr_be_stream_t *x, uint32_t n, uint64_t r)
{
	sim_worker_t *wk = &s->workers[w];
	cpu_end(wk, cpu_start(s, wk) + s->m.poll_ps); /* sim_poll's */
	if (wk->cq_n && !wk->scheduled) {
		wk->scheduled = 1;
		push(s, wk->clock, EV_WORKER_RUN, w);
	}
	if (!x->dirty) {
		x->dirty = 1;
		s->sx->dirty[s->sx->ndirty++] = w - s->sx->w0;
	}
	x->done += (uint64_t)n * x->slice;
	x->inflight -= n;
	x->handled += n;
	const uint32_t q = w * s->nmns + x->mn;
	sim_qp_t *qp = &s->qps[q];
	const uint16_t cn = wk->cn;
	while (r) { /* as dmr_kv_xeng_pump: at most 64 WRs per doorbell */
		uint32_t nb = r < 64 ? (uint32_t)r : 64;
		uint64_t t = post_begin(s, wk);
		uint8_t first_read = 1;
		for (uint32_t i = 0; i < nb; i++) {
			uint64_t remote = x->base + (x->fold_mod ? x->rpos & ~63ull : x->posted);
			if (post_one(s, q, qp, cn, x->mn, &t, &first_read, NULL, x->wr_id, x->local,
				     remote, x->slice, x->opcode) != DMR_OK) {
				s->fatal = DMR_ERR_NOMEM;
				return;
			}
			x->posted += x->slice;
			if (x->fold_mod && (x->rpos += x->slice) >= x->fold_mod)
				x->rpos %= x->fold_mod;
			x->inflight++;
			x->sposted++;
		}
		cpu_end(wk, t);
		r -= nb;
	}
}

/* Worker w is to be handed to the caller with completions on its CQ
 * (EV_WORKER_RUN): 1 when its stream took them instead. */
static int stream_try_cq(sim_t *s, uint32_t w)
{
	dmr_be_stream_t *x = stream_of(s, w);
	if (!x)
		return 0;
	sim_worker_t *wk = &s->workers[w];
	uint32_t n = wk->cq_n < 64 ? wk->cq_n : 64; /* what the caller polls */
	for (uint32_t i = 0; i < n; i++) {
		const dmr_wc_t *wc = &wk->cq[(wk->cq_head + i) & (wk->cq_cap - 1)];
		if (wc->wr_id != x->wr_id || wc->status != DMR_WC_SUCCESS)
			return 0;
	}
	int64_t r = stream_fits(s, w, x, n);
	if (r < 0)
		return 0;
	wk->scheduled = 0;
	wk->cq_head = (wk->cq_head + n) & (wk->cq_cap - 1);
	wk->cq_n -= n;
	stream_take(s, w, x, n, (uint64_t)r);
	return 1;
}

/* backend.h dmr_be_rpc: one SEND WQE and its doorbell on worker's CPU,
 * then the request on worker's QP to mn (behind the WRs held there for a
 * credit: RC order up to the MN), rpc_arrived at the MN. DMR_ERR_INVALID
 * when the profile has no MN CPU (mn_rpc_cores). */
static dmr_status_t sim_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			    dmr_err_t *err)
{
	sim_t *s = to_sim(be);
	if (!s->m.mn_rpc_cores)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "sim: profile %s has no MN CPU model for RPCs (give "
				   "mn_rpc_cores, mn_rpc_req_ns and mn_rpc_op_ns)",
				   s->m.name);
	if (s->free_head == NOIDX && dmr_sim_grow_ops(s) != DMR_OK)
		return dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory for WRs");
	sim_worker_t *wk = &s->workers[worker];
	const uint32_t q = worker * s->nmns + mn;
	sim_qp_t *qp = &s->qps[q];
	uint64_t t = cpu_start(s, wk) + s->m.post_doorbell_ps + s->m.post_wqe_ps;
	uint32_t idx = s->free_head;
	sim_op_t *op = &s->ops[idx];
	s->free_head = op->next;
	*op = (sim_op_t){.length = rpc->req_bytes,
			 .next = NOIDX,
			 .qp = q,
			 .cn = wk->cn,
			 .opcode = DMR_WR_RPC,
			 .flags = DMR_WR_SIGNALED,
			 .mn = (uint8_t)mn};
	s->opx[idx] = (sim_opx_t){.wr_id = rpc->wr_id};
	s->opr[idx] = (sim_opr_t){rpc->handler, rpc->arg, rpc->accesses, rpc->resp_cap};
	s->st.doorbells++;
	if (qp->error) { /* flushed after the QP's earlier WRs, as in sim_post */
		post_flushed(s, qp, idx, t);
	} else {
		qp->open++;
		if (qp->pend_head != NOIDX) {
			s->ops[qp->pend_tail].next = idx;
			qp->pend_tail = idx;
		} else {
			issue(s, q, idx, t);
		}
	}
	cpu_end(wk, t);
	return s->fatal ? dmr_err_set(err, s->fatal, "sim: out of memory for events") : DMR_OK;
}

static int sim_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	sim_t *s = to_sim(be);
	sim_worker_t *wk = &s->workers[worker];
	int n = 0;
	while (n < max && wk->cq_n) {
		wcs[n++] = wk->cq[wk->cq_head];
		wk->cq_head = (wk->cq_head + 1) & (wk->cq_cap - 1);
		wk->cq_n--;
	}
	if (n)
		cpu_end(wk, cpu_start(s, wk) + s->m.poll_ps);
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
	if (s->free_head == NOIDX && dmr_sim_grow_ops(s) != DMR_OK)
		return DMR_ERR_NOMEM;
	uint32_t idx = s->free_head;
	sim_op_t *op = &s->ops[idx];
	s->free_head = op->next;
	memset(op, 0, sizeof(*op));
	s->opx[idx].wr_id = wr_id;
	op->opcode = DMR_WR_TIMER;
	op->qp = worker; /* a timer has no QP */
	op->cn = (uint16_t)(worker / s->be.cfg.workers);
	push(s, max64(at_ps, s->now), EV_TIMER, idx);
	return s->fatal;
}

static int sim_progress(dmr_be_t *be, uint64_t until_ps)
{
	sim_t *s = to_sim(be);
	dmr_sim_event_t ev;
	s->until = until_ps;
	while (!s->fatal) {
		if (until_ps != UINT64_MAX && dmr_sim_eventq_peek_time(&s->q) > until_ps)
			return -1;
		if (!dmr_sim_eventq_pop(&s->q, &ev))
			return -1;
		/* the next event's WR record while this one is handled (its
		 * argument is a WR index for most types; a useless prefetch of
		 * another type, or past a heap event that pops first, is
		 * harmless) */
		uint32_t na = dmr_sim_eventq_peek_key(&s->q) & DMR_SIM_EVQ_MAX_ARG;
		if (na < s->nops)
			__builtin_prefetch(&s->ops[na]);
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
		case EV_CN_ARRIVE:
			ev_cn_arrive(s, ev.arg, ev.t);
			break;
		case EV_RPC_DONE:
			ev_rpc_done(s, ev.arg, ev.t);
			break;
		case EV_TIMER: {
			sim_op_t *op = &s->ops[ev.arg];
			dmr_wc_t wc = {.wr_id = s->opx[ev.arg].wr_id, .opcode = DMR_WR_TIMER};
			uint32_t w = op->qp; /* a timer's worker */
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
			if (wk->cq_n) {
				if (s->sx && stream_try_cq(s, ev.arg))
					break;	   /* its stream took them */
				wk->scheduled = 1; /* until polled */
				s->ready = -1;
				wk->scheduled = 0;
				return (int)ev.arg;
			}
			break;
		}
		}
		if (s->ready >= 0) {
			int w = s->ready;
			s->ready = -1;
			s->workers[w].scheduled = 0;
			return w;
		}
	}
	return -1;
}

static void sim_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	sim_t *s = to_sim(be);
	sim_worker_t *wk = &s->workers[worker];
	cpu_end(wk, cpu_start(s, wk) + ps);
}

/* mr_reg/mr_dereg, barrier: the registry's stubs (nothing to register; one
 * process). */
const dmr_be_ops_t dmr_sim_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "sim",
    .caps = DMR_BE_CAP_DRIVEN | DMR_BE_CAP_MASKED_CAS | DMR_BE_CAP_RPC,
    .open = dmr_sim_open,
    .close = dmr_sim_close,
    .post = sim_post,
    .poll = sim_poll,
    .now = sim_now,
    .timer = sim_timer,
    .progress = sim_progress,
    .mn_memory = dmr_sim_mn_memory,
    .stats = dmr_sim_stats,
    .charge = sim_charge,
    .control = dmr_sim_control,
    .rpc = sim_rpc,
};
