/*
 * backends/verbs/verbs_cq.c - completions and time: poll converts ibv_wc to
 * dmr_wc_t (status conversion; an RC CQE retires the unsignaled slots before
 * it; atomics' old values byte-swapped if the device does; counters), the first failed completion
 * is logged and the flushed ones after it counted, per-worker timers (a binary heap on (at, seq)
 * under a mutex, delivered by poll), and the data-path clock behind now().
 */
#include "verbs_impl.h"

#include <stdio.h>
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define VB_HAVE_TSC 1
#endif

#define VB_POLL_CHUNK 32

/*
 * The data-path clock (now(), timers). CLOCK_MONOTONIC costs a system call
 * and an emulated device access where the kernel's clocksource is not the
 * TSC: under qemu TCG the guest runs on hpet, 0.74 us per call, about 4 % of
 * an 8-byte READ on rxe, paid once per post by a benchmark loop. perftest
 * reads the TSC (get_cycles) instead; so do we, with a rate measured against
 * CLOCK_MONOTONIC over the whole open() (at least VB_CLK_MIN_NS; open()
 * takes far longer on rxe), anchored at the end of open(), so both clocks
 * agree there. DMR_VERBS_CLOCK=monotonic, a non-x86 machine or an
 * implausible rate (outside 50 MHz..20 GHz) keep CLOCK_MONOTONIC.
 */
#define VB_CLK_MIN_NS 20000000ull

static inline uint64_t vb_tsc(void)
{
#ifdef VB_HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

void dmr_verbs_clock_start(vb_t *vb)
{
	vb->clk_tsc0 = vb_tsc();
}

void dmr_verbs_clock_calibrate(vb_t *vb)
{
	const char *env = getenv("DMR_VERBS_CLOCK");
	vb->clk_tsc = 0;
#ifdef VB_HAVE_TSC
	if (env && strcmp(env, "monotonic") == 0)
		return;
	uint64_t ns = vb_now_ns(vb);
	if (ns < VB_CLK_MIN_NS) {
		struct timespec ts = {0, (long)(VB_CLK_MIN_NS - ns)};
		nanosleep(&ts, NULL);
	}
	uint64_t a = vb_now_ns(vb), tsc = vb_tsc(), b = vb_now_ns(vb);
	if (tsc <= vb->clk_tsc0)
		return;
	double npt = (double)(a / 2 + b / 2) / (double)(tsc - vb->clk_tsc0);
	if (!(npt >= 0.05 && npt <= 20))
		return;
	vb->clk_ns_per_tick = npt;
	vb->clk_tsc1 = tsc;
	vb->clk_ns1 = a / 2 + b / 2;
	vb->clk_tsc = 1;
#else
	(void)env;
#endif
}

/* ns since open() on the data-path clock. */
static inline uint64_t vb_clock_ns(const vb_t *vb)
{
	if (!vb->clk_tsc)
		return vb_now_ns(vb);
	uint64_t t = vb_tsc();
	if (t <= vb->clk_tsc1) /* another core's TSC a little behind */
		return vb->clk_ns1;
	return vb->clk_ns1 + (uint64_t)((double)(t - vb->clk_tsc1) * vb->clk_ns_per_tick);
}

static uint8_t wc_status(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return DMR_WC_SUCCESS;
	case IBV_WC_REM_ACCESS_ERR:
		return DMR_WC_REM_ACCESS_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return DMR_WC_FLUSH_ERR;
	case IBV_WC_RETRY_EXC_ERR:
		return DMR_WC_RETRY_EXC_ERR;
	default:
		return DMR_WC_GENERAL_ERR;
	}
}

/* Retire the oldest slot of q (to MN m) with status `status`; count it. */
static vb_slot_t *retire(vb_t *vb, vb_worker_t *wk, uint32_t m, vb_qp_t *q, uint8_t status)
{
	dmr_be_mn_stats_t *ms = &wk->mst[m];
	vb_slot_t *s = &q->slots[q->tail];
	q->tail = (q->tail + 1) % q->depth;
	q->outstanding--;
	if (s->flags & SLOT_VOID)
		return s;
	dmr_be_stats_t *st = &wk->st;
	if (s->opcode == DMR_WR_RPC) /* a request SEND: counted at its answer */
		return s;
	st->verbs++;
	if (status != DMR_WC_SUCCESS) {
		st->errors++;
		return s;
	}
	ms->verbs++;
	switch (s->opcode) {
	case DMR_WR_READ:
		st->reads++;
		st->bytes_read += s->length;
		ms->reads++;
		ms->bytes_read += s->length;
		break;
	case DMR_WR_WRITE:
		st->writes++;
		st->bytes_written += s->length;
		ms->writes++;
		ms->bytes_written += s->length;
		break;
	case DMR_WR_CAS:
	case DMR_WR_FAA:
		ms->atomics++;
		if (s->opcode == DMR_WR_CAS)
			st->cas++;
		else
			st->faa++;
		if (vb->atomic_bswap) {
			uint64_t v;
			memcpy(&v, s->local, 8);
			v = __builtin_bswap64(v);
			memcpy(s->local, &v, 8);
		}
		break;
	}
	return s;
}

static int timer_before(const vb_timer_t *a, const vb_timer_t *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void timer_pop(vb_worker_t *wk)
{
	vb_timer_t last = wk->tim[--wk->ntim];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= wk->ntim)
			break;
		if (c + 1 < wk->ntim && timer_before(&wk->tim[c + 1], &wk->tim[c]))
			c++;
		if (!timer_before(&wk->tim[c], &last))
			break;
		wk->tim[i] = wk->tim[c];
		i = c;
	}
	if (wk->ntim)
		wk->tim[i] = last;
}

/* The first failed completion of the process is printed with operation, QP
 * number, peer and status; the flushed ones after it are counted (printed
 * at close). */
static void log_failure(vb_t *vb, uint32_t worker, uint32_t m, const vb_qp_t *q,
			const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_WR_FLUSH_ERR && atomic_flag_test_and_set(&vb->failed_logged)) {
		atomic_fetch_add(&vb->flushed, 1);
		return;
	}
	if (wc->status != IBV_WC_WR_FLUSH_ERR && atomic_flag_test_and_set(&vb->failed_logged))
		return;
	char pip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &vb->peer[m].sin_addr, pip, sizeof(pip));
	const vb_slot_t *s = &q->slots[q->tail];
	fprintf(stderr,
		"verbs: %s port %d: %s%s failed on QP %u (%s %u) -> MN %u (%s:%u): %s "
		"(ibv_wc_status %d, vendor_err 0x%x); later flushed completions are counted, "
		"not listed\n",
		vb->dev, vb->port, worker == vb->ctlw && vb->role ? "control " : "",
		dmr_wr_opcode_string(s->opcode), q->qp ? q->qp->qp_num : 0,
		worker == vb->ctlw && vb->role ? "control worker" : "worker", worker, m, pip,
		ntohs(vb->peer[m].sin_port), ibv_wc_status_str(wc->status), (int)wc->status,
		wc->vendor_err);
}

int dmr_verbs_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	vb_t *vb = to_vb(be);
	vb_worker_t *wk = &vb->w[worker];
	struct ibv_wc iwc[VB_POLL_CHUNK];
	int n = 0;
	while (n < max) {
		int want = max - n < VB_POLL_CHUNK ? max - n : VB_POLL_CHUNK;
		int got = ibv_poll_cq(wk->cq, want, iwc);
		if (got < 0) {
			wk->st.errors++; /* no way to report it here: counted */
			break;
		}
		for (int k = 0; k < got; k++) {
			if (iwc[k].wr_id & VB_RPC_RECV) { /* an RPC's answer (verbs_rpc.c) */
				n += dmr_verbs_rpc_answer(vb, worker, &iwc[k], &wcs[n]);
				continue;
			}
			uint32_t m = (uint32_t)(iwc[k].wr_id >> 32);
			uint32_t slot = (uint32_t)iwc[k].wr_id;
			if (m >= vb->be.cfg.mns)
				continue;
			vb_qp_t *q = &wk->qps[m];
			uint8_t status = wc_status(iwc[k].status);
			/* RC: the unsignaled WRs before this one completed successfully */
			while (q->tail != slot && q->outstanding)
				retire(vb, wk, m, q, DMR_WC_SUCCESS);
			if (!q->outstanding)
				continue; /* cannot happen: a CQE for no WR */
			if (status != DMR_WC_SUCCESS)
				log_failure(vb, worker, m, q, &iwc[k]);
			vb_slot_t *s = retire(vb, wk, m, q, status);
			if (s->flags & SLOT_VOID)
				continue;
			if (status == DMR_WC_SUCCESS && !(s->flags & SLOT_USER_SIG))
				continue;
			if (s->opcode == DMR_WR_RPC && !dmr_verbs_rpc_send_failed(q, s))
				continue; /* its RPC failed already */
			wcs[n++] = (dmr_wc_t){.wr_id = s->wr_id,
					      .opcode = s->opcode,
					      .status = status,
					      .mn = (uint16_t)m,
					      .byte_len = s->opcode == DMR_WR_READ &&
								  status == DMR_WC_SUCCESS
							      ? s->length
							      : 0};
		}
		if (got < want)
			break;
	}
	if (n < max)
		n += dmr_verbs_rpc_failed(vb, worker, wcs + n, max - n);
	if (n < max && __atomic_load_n(&wk->ntim_hint, __ATOMIC_ACQUIRE)) {
		uint64_t now = vb_clock_ns(vb) * 1000ull;
		pthread_mutex_lock(&wk->tmu);
		while (wk->ntim && n < max && wk->tim[0].at <= now) {
			wcs[n++] = (dmr_wc_t){.wr_id = wk->tim[0].wr_id, .opcode = DMR_WR_TIMER};
			timer_pop(wk);
		}
		__atomic_store_n(&wk->ntim_hint, wk->ntim, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&wk->tmu);
	}
	return n;
}

uint64_t dmr_verbs_now(dmr_be_t *be, uint32_t worker)
{
	(void)worker;
	return vb_clock_ns(to_vb(be)) * 1000ull;
}

dmr_status_t dmr_verbs_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	vb_t *vb = to_vb(be);
	if (worker >= vb->nworkers)
		return DMR_ERR_RANGE;
	vb_worker_t *wk = &vb->w[worker];
	pthread_mutex_lock(&wk->tmu);
	if (wk->ntim == wk->timcap) {
		uint32_t cap = wk->timcap ? wk->timcap * 2 : 64;
		vb_timer_t *t = realloc(wk->tim, cap * sizeof(*t));
		if (!t) {
			pthread_mutex_unlock(&wk->tmu);
			return DMR_ERR_NOMEM;
		}
		wk->tim = t;
		wk->timcap = cap;
	}
	vb_timer_t nt = {.at = at_ps, .seq = wk->tseq++, .wr_id = wr_id};
	uint32_t i = wk->ntim++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!timer_before(&nt, &wk->tim[p]))
			break;
		wk->tim[i] = wk->tim[p];
		i = p;
	}
	wk->tim[i] = nt;
	__atomic_store_n(&wk->ntim_hint, wk->ntim, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wk->tmu);
	return DMR_OK;
}
