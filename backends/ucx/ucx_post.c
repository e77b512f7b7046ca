/*
 * backends/ucx/ucx_post.c - the ucx backend's data path: each endpoint's
 * ring of WRs, what is handed to UCP when (the ordering rule of ucx.h),
 * completions from UCP's callbacks, and poll().
 */
#include <string.h>

#include "../../core/base/timeps.h"
#include "ucx_impl.h"

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

uint8_t dmr_ucx_wc_status(ucs_status_t st)
{
	switch (st) {
	case UCS_OK:
		return DMR_WC_SUCCESS;
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_TIMED_OUT:
		return DMR_WC_RETRY_EXC_ERR; /* the peer is gone */
	case UCS_ERR_CANCELED:
		return DMR_WC_FLUSH_ERR; /* the endpoint was closed under it */
	default:
		return DMR_WC_GENERAL_ERR;
	}
}

static void slot_fail(ucx_slot_t *s, uint8_t status)
{
	s->status = status;
	s->state = UCX_SLOT_DONE;
	ADD(s->ep->worker->st.errors, 1);
}

/* A slot handed to UCP has completed with st. */
static void slot_complete(ucx_slot_t *s, ucs_status_t st)
{
	ucx_ep_t *e = s->ep;
	e->inflight--;
	if (e->inflight == 0)
		e->inflight_nonread = 0;
	if (st != UCS_OK) {
		/* the first failure of the endpoint carries its cause, the
		 * ones behind it are flushes (RC) */
		slot_fail(s, e->error
				 ? DMR_WC_FLUSH_ERR
				 : dmr_ucx_wc_status(e->ucp_error != UCS_OK ? e->ucp_error : st));
		e->error = 1;
		if (e->ucp_error == UCS_OK)
			e->ucp_error = st;
		return;
	}
	const dmr_wr_t *wr = &s->wr;
	dmr_be_mn_stats_t *m = &e->worker->ms[e->mn];
	ADD(m->verbs, 1);
	switch (wr->opcode) {
	case DMR_WR_READ:
		ADD(m->reads, 1);
		ADD(m->bytes_read, wr->length);
		break;
	case DMR_WR_WRITE:
		ADD(m->writes, 1);
		ADD(m->bytes_written, wr->length);
		break;
	default:
		memcpy(wr->local, &s->reply, 8); /* the old value, host order */
		ADD(m->atomics, 1);
		break;
	}
	s->status = DMR_WC_SUCCESS;
	s->state = UCX_SLOT_DONE;
}

/* UCP's completion callback (ucp_send_nbx_callback_t), run inside
 * ucp_worker_progress of the slot's worker. */
static void on_done(void *req, ucs_status_t st, void *user_data)
{
	slot_complete(user_data, st);
	ucp_request_free(req);
}

/* Hand slot s to UCP: NULL (done at once), a request (its callback will
 * come), or UCS_PTR_IS_ERR. */
static ucs_status_ptr_t slot_start(ucx_slot_t *s)
{
	ucx_ep_t *e = s->ep;
	const dmr_wr_t *wr = &s->wr;
	uint64_t raddr = e->base + wr->remote;
	ucp_request_param_t p = {.op_attr_mask =
				     UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
				 .cb.send = on_done,
				 .user_data = s};
	switch (wr->opcode) {
	case DMR_WR_READ:
		return ucp_get_nbx(e->ep, wr->local, wr->length, raddr, e->rkey, &p);
	case DMR_WR_WRITE: {
		/* the put's own completion frees the local buffer only; the
		 * flush after it is the remote completion (ucx.h) */
		ucp_request_param_t none = {.op_attr_mask = 0};
		ucs_status_ptr_t r =
		    ucp_put_nbx(e->ep, wr->local, wr->length, raddr, e->rkey, &none);
		if (UCS_PTR_IS_ERR(r))
			return r;
		if (r)
			ucp_request_free(r); /* released by UCP when it completes */
		return ucp_ep_flush_nbx(e->ep, &p);
	}
	case DMR_WR_CAS:
		s->operand = wr->compare_add; /* compared */
		s->reply = wr->swap;	      /* swapped in; the old value out */
		break;
	default: /* FAA */
		s->operand = wr->compare_add;
		s->reply = 0;
		break;
	}
	p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
	p.datatype = ucp_dt_make_contig(8);
	p.reply_buffer = &s->reply;
	return ucp_atomic_op_nbx(e->ep,
				 wr->opcode == DMR_WR_CAS ? UCP_ATOMIC_OP_CSWAP : UCP_ATOMIC_OP_ADD,
				 &s->operand, 1, raddr, e->rkey, &p);
}

void dmr_ucx_issue(ucx_ep_t *e)
{
	while (e->issue < e->tail) {
		ucx_slot_t *s = &e->ring[e->issue % DMR_UCX_DEPTH];
		const dmr_wr_t *wr = &s->wr;
		int rw = wr->opcode == DMR_WR_READ || wr->opcode == DMR_WR_WRITE;
		uint64_t len = rw ? wr->length : 8;
		if (e->error || e->ucp_error != UCS_OK) {
			/* the first WR after a peer failure carries its cause */
			slot_fail(s, e->error ? DMR_WC_FLUSH_ERR : dmr_ucx_wc_status(e->ucp_error));
			e->error = 1;
			e->issue++;
			continue;
		}
		if (wr->remote > e->size || len > e->size - wr->remote) {
			/* outside the MN region: the rkey's bounds */
			slot_fail(s, DMR_WC_REM_ACCESS_ERR);
			e->error = 1;
			e->issue++;
			continue;
		}
		if (rw && len == 0) { /* completes, moves nothing */
			s->status = DMR_WC_SUCCESS;
			s->state = UCX_SLOT_DONE;
			e->issue++;
			continue;
		}
		int rd = wr->opcode == DMR_WR_READ;
		if (e->inflight && (e->inflight_nonread || !rd))
			break; /* RC order: wait for what is in flight */
		s->state = UCX_SLOT_ISSUED;
		e->inflight++;
		if (!rd)
			e->inflight_nonread = 1;
		e->issue++;
		ucs_status_ptr_t r = slot_start(s);
		if (r == NULL)
			slot_complete(s, UCS_OK);
		else if (UCS_PTR_IS_ERR(r))
			slot_complete(s, UCS_PTR_STATUS(r));
	}
}

dmr_status_t dmr_ucx_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			  uint32_t n, dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	ucx_worker_t *k = &u->wk[worker];
	ucx_ep_t *e = &k->eps[mn];
	uint64_t used = e->tail - e->head;
	if (used + n > DMR_UCX_DEPTH)
		return dmr_err_set(err, DMR_ERR_AGAIN,
				   "ucx: worker %u, MN %u: send queue full: %llu WRs in flight of "
				   "%u, batch of %u (poll first)",
				   worker, mn, (unsigned long long)used, DMR_UCX_DEPTH, n);
	dmr_be_stats_t d = {.doorbells = 1};
	uint64_t *dirty = u->mn[mn].dirty;
	for (uint32_t i = 0; i < n; i++) {
		if (dirty && wrs[i].opcode != DMR_WR_READ) {
			/* remote mode: what END reads back (ucx_remote.c) */
			uint64_t len = wrs[i].opcode == DMR_WR_WRITE ? wrs[i].length : 8;
			uint64_t last = u->mn[mn].size / DMR_UCX_CHUNK;
			for (uint64_t c = wrs[i].remote / DMR_UCX_CHUNK;
			     len && c <= (wrs[i].remote + len - 1) / DMR_UCX_CHUNK && c <= last;
			     c++)
				__atomic_fetch_or(&dirty[c / 64], 1ull << (c % 64),
						  __ATOMIC_RELAXED);
		}
		ucx_slot_t *s = &e->ring[e->tail % DMR_UCX_DEPTH];
		s->wr = wrs[i];
		s->state = UCX_SLOT_QUEUED;
		s->status = DMR_WC_SUCCESS;
		s->ep = e;
		e->tail++;
		d.verbs++;
		switch (wrs[i].opcode) {
		case DMR_WR_READ:
			d.reads++;
			d.bytes_read += wrs[i].length;
			break;
		case DMR_WR_WRITE:
			d.writes++;
			d.bytes_written += wrs[i].length;
			break;
		case DMR_WR_CAS:
			d.cas++;
			break;
		default:
			d.faa++;
			break;
		}
	}
	dmr_be_stats_t *st = &k->st;
	ADD(st->doorbells, d.doorbells);
	ADD(st->verbs, d.verbs);
	ADD(st->reads, d.reads);
	ADD(st->writes, d.writes);
	ADD(st->cas, d.cas);
	ADD(st->faa, d.faa);
	ADD(st->bytes_read, d.bytes_read);
	ADD(st->bytes_written, d.bytes_written);
	dmr_ucx_issue(e);
	return DMR_OK;
}

/* Timers of k due at now, earliest first, into wcs (at most max). */
static int timers_due(ucx_worker_t *k, uint64_t now, dmr_wc_t *wcs, int max)
{
	int n = 0;
	pthread_mutex_lock(&k->mu);
	uint32_t j = 0;
	while (j < k->ntm && n < max && k->tm[j].at <= now) {
		wcs[n++] = (dmr_wc_t){.wr_id = k->tm[j].wr_id, .opcode = DMR_WR_TIMER};
		j++;
	}
	if (j) {
		memmove(k->tm, k->tm + j, (k->ntm - j) * sizeof(*k->tm));
		k->ntm -= j;
	}
	pthread_mutex_unlock(&k->mu);
	return n;
}

int dmr_ucx_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	ucx_t *u = (ucx_t *)be;
	ucx_worker_t *k = &u->wk[worker];
	if (max <= 0)
		return 0;
	int n = timers_due(k, dmr_mono_ps() - u->t0, wcs, max);
	for (int i = 0; i < 64 && ucp_worker_progress(k->w); i++)
		;
	for (uint32_t m = 0; m < u->mns; m++)
		n += dmr_ucx_reap(&k->eps[m], wcs + n, max - n);
	return n;
}

int dmr_ucx_reap(ucx_ep_t *e, dmr_wc_t *wcs, int max)
{
	int n = 0;
	dmr_ucx_issue(e);
	while (n < max && e->head < e->issue) {
		ucx_slot_t *s = &e->ring[e->head % DMR_UCX_DEPTH];
		if (s->state != UCX_SLOT_DONE)
			break; /* posting order */
		if ((s->wr.flags & DMR_WR_SIGNALED) || s->status != DMR_WC_SUCCESS)
			wcs[n++] =
			    (dmr_wc_t){.wr_id = s->wr.wr_id,
				       .opcode = s->wr.opcode,
				       .status = s->status,
				       .mn = (uint16_t)e->mn,
				       .byte_len = s->wr.opcode == DMR_WR_READ ? s->wr.length : 0};
		e->head++;
	}
	return n;
}
