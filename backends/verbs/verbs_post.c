/*
 * backends/verbs/verbs_post.c - the post path: a batch of dmr_wr_t becomes
 * one chain of ibv_send_wr (one doorbell) with a send-queue slot per WR,
 * selective signalling (one WR in every half queue signaled to reclaim
 * slots), inline WRITEs, lkeys. Remote offsets and atomics' values go out
 * as the caller gave them (the core makes lock tags and log-ring offsets
 * unique over the cluster from DMR_BE_CTL_ROLE). A post that fails
 * part-way marks the posted WRs' slots void (they complete unreported).
 * dmr_verbs_op_wait posts one WR and polls for it (canary, control page).
 */
#include "verbs_impl.h"

dmr_status_t dmr_verbs_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			    uint32_t n, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	vb_worker_t *wk = &vb->w[worker];
	vb_qp_t *q = &wk->qps[mn];
	/* CN role: an MN the watch found dead stops the run's workers (not the
	 * control worker: it still tells the live MNs) */
	if (__builtin_expect(atomic_load_explicit(&vb->dead_mn, memory_order_acquire) != 0, 0) &&
	    worker < vb->nworkers)
		return dmr_err_set(err, DMR_ERR_REMOTE, "%s", vb->dead_msg);
	if (n > q->depth - q->outstanding)
		return dmr_verbs_fail(
		    vb, err, DMR_ERR_AGAIN, (int)worker, (int)mn,
		    "send queue full: %u WRs in flight of %u, batch of %u (poll first)",
		    q->outstanding, q->depth, n);
	uint32_t run = q->unsig_run, half = q->depth / 2, slot = q->head;
	for (uint32_t i = 0; i < n; i++, slot = slot + 1 == q->depth ? 0 : slot + 1) {
		const dmr_wr_t *d = &wrs[i];
		struct ibv_send_wr *s = &wk->wrs[i];
		struct ibv_sge *g = &wk->sges[i];
		int user_sig = (d->flags & DMR_WR_SIGNALED) != 0;
		int sig = user_sig;
		if (!sig && ++run >= half)
			sig = 1; /* reclaim send queue slots */
		if (sig)
			run = 0;
		/* no memset: every member the provider reads for these opcodes is
		 * set below (wr_id, next, sg_list, num_sge, opcode, send_flags,
		 * wr.rdma / wr.atomic); the rest stay zero from calloc */
		s->wr_id = (uint64_t)mn << 32 | slot;
		s->next = i + 1 < n ? &wk->wrs[i + 1] : NULL;
		s->sg_list = g;
		s->send_flags = sig ? IBV_SEND_SIGNALED : 0;
		uint64_t raddr = q->raddr + d->remote;
		uint32_t rkey = q->rkey;
		if (__builtin_expect(d->remote - q->lk_off < q->lk_len, 0)) {
			/* the lock-word region's own MR (verbs_dm.c) */
			raddr = q->lk_raddr + (d->remote - q->lk_off);
			rkey = q->lk_rkey;
		}
		uint32_t len =
		    d->opcode == DMR_WR_READ || d->opcode == DMR_WR_WRITE ? d->length : 8;
		switch (d->opcode) {
		case DMR_WR_READ:
			s->opcode = IBV_WR_RDMA_READ;
			s->wr.rdma.remote_addr = raddr;
			s->wr.rdma.rkey = rkey;
			break;
		case DMR_WR_WRITE:
			s->opcode = IBV_WR_RDMA_WRITE;
			s->wr.rdma.remote_addr = raddr;
			s->wr.rdma.rkey = rkey;
			if (len && len <= vb->inline_used)
				s->send_flags |= IBV_SEND_INLINE;
			break;
		case DMR_WR_CAS:
			s->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			s->wr.atomic.remote_addr = raddr;
			s->wr.atomic.rkey = rkey;
			s->wr.atomic.compare_add = d->compare_add;
			s->wr.atomic.swap = d->swap;
			break;
		case DMR_WR_FAA:
			s->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			s->wr.atomic.remote_addr = raddr;
			s->wr.atomic.rkey = rkey;
			s->wr.atomic.compare_add = d->compare_add;
			break;
		default:
			return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, (int)worker, (int)mn,
					      "WR %u: unknown opcode %u", i, d->opcode);
		}
		g->addr = (uintptr_t)d->local;
		g->length = len;
		s->num_sge = len ? 1 : 0;
		if (len && !(s->send_flags & IBV_SEND_INLINE)) {
			int found;
			g->lkey = lkey_of(wk, d->local, len, &found);
			if (!found)
				return dmr_verbs_fail(
				    vb, err, DMR_ERR_INVALID, (int)worker, (int)mn,
				    "%s WR %u (wr_id %llu): local buffer %p+%u is not in "
				    "a region registered with dmr_be_mr_reg",
				    dmr_wr_opcode_string(d->opcode), i,
				    (unsigned long long)d->wr_id, d->local, len);
		}
		q->slots[slot] = (vb_slot_t){.wr_id = d->wr_id,
					     .local = d->local,
					     .length = d->length,
					     .opcode = d->opcode,
					     .flags = user_sig ? SLOT_USER_SIG : 0};
	}
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(q->qp, wk->wrs, &bad);
	if (rc) {
		/* WRs before `bad` were posted: they complete, but are never reported */
		uint32_t k = bad ? (uint32_t)(bad - wk->wrs) : 0;
		if (k > n)
			k = 0;
		for (uint32_t i = 0; i < k; i++)
			q->slots[(q->head + i) % q->depth].flags = SLOT_VOID;
		q->head = (q->head + k) % q->depth;
		q->outstanding += k;
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)worker, (int)mn,
				      "ibv_post_send of %u WRs failed at WR %u: %s", n, k,
				      strerror(rc));
	}
	q->head = (q->head + n) % q->depth;
	q->outstanding += n;
	q->unsig_run = run;
	wk->st.doorbells++;
	return DMR_OK;
}

/* One WR on `worker` / MN `mn`, waited for with a deadline. */
dmr_status_t dmr_verbs_op_wait(vb_t *vb, uint32_t worker, uint32_t mn, uint8_t opcode, void *local,
			       uint64_t remote, uint32_t len, uint64_t cmp, uint64_t swp,
			       uint64_t timeout_ns, const char *what, dmr_err_t *err)
{
	int im = (int)mn;
	dmr_wr_t wr = {.wr_id = 0xCA11A7,
		       .local = local,
		       .remote = remote,
		       .compare_add = cmp,
		       .swap = swp,
		       .length = len,
		       .opcode = opcode,
		       .flags = DMR_WR_SIGNALED};
	dmr_status_t st = dmr_verbs_post(&vb->be, worker, mn, &wr, 1, err);
	if (st != DMR_OK)
		return st;
	uint64_t deadline = vb_now_ns(vb) + timeout_ns;
	dmr_wc_t wc;
	while (dmr_verbs_poll(&vb->be, worker, &wc, 1) == 0)
		if (vb_now_ns(vb) > deadline)
			return dmr_verbs_fail(vb, err, DMR_ERR_TIMEOUT, (int)worker, im,
					      "%s %s: no completion within %.1f s", what,
					      dmr_wr_opcode_string(opcode), timeout_ns / 1e9);
	if (wc.status != DMR_WC_SUCCESS)
		return dmr_verbs_fail(vb, err, DMR_ERR_REMOTE, (int)worker, im, "%s %s failed: %s",
				      what, dmr_wr_opcode_string(opcode),
				      dmr_wc_status_string(wc.status));
	return DMR_OK;
}
