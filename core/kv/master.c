/* core/kv/master.c - the KV master thread serving the RPC mailboxes
 * against the pool (master.h). */
#include "master.h"

#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../base/sig.h"

#define NOIDX DMR_KV_NOIDX

dmr_status_t dmr_kv_master_init(dmr_kv_master_t *m, dmr_kv_pool_t *pool, uint32_t nc,
				const char *who, dmr_err_t *err)
{
	memset(m, 0, sizeof(*m));
	m->pool = pool;
	m->nc = nc;
	m->seen = calloc((size_t)nc * DMR_KV_MB_SLOTS, 8);
	m->bad_since = calloc((size_t)nc * DMR_KV_MB_SLOTS, 8);
	m->lk_rid = malloc((nc ? nc : 1) * sizeof(uint32_t));
	if (!m->seen || !m->bad_since || !m->lk_rid)
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", who);
	for (uint32_t c = 0; c < nc; c++)
		m->lk_rid[c] = NOIDX;
	return DMR_OK;
}

void dmr_kv_master_fini(dmr_kv_master_t *m)
{
	free(m->seen);
	free(m->bad_since);
	free(m->lk_rid);
	memset(m, 0, sizeof(*m));
}

void dmr_kv_master_region(dmr_kv_master_t *m, const dmr_kv_geom_t *g)
{
	memset(m->mem, 0, m->lay.pool_base); /* header, mailboxes and ready words */
	if (!g)
		return;
	memcpy(m->mem + 8, g, sizeof(*g));
	__atomic_store_n((uint64_t *)(void *)m->mem, DMR_KV_MAGIC, __ATOMIC_RELEASE);
}

void dmr_kv_master_region_store(dmr_kv_master_t *m, const dmr_kv_store_geom_t *g)
{
	memset(m->mem, 0, m->lay.pool_base);
	memcpy(m->mem + 8, g, sizeof(*g));
	__atomic_store_n((uint64_t *)(void *)m->mem, DMR_KV_STORE_MAGIC, __ATOMIC_RELEASE);
}

/* ps since the start: the backend's clock, or the wall clock in the MN
 * process (no backend there: the master only touches local memory) */
static dmr_time_ps_t master_now(const dmr_kv_master_t *m)
{
	if (m->be)
		return dmr_be_now(m->be, 0);
	return dmr_ps_from_s(dmr_wall_s() - m->w0);
}

static inline void ready_store(dmr_kv_master_t *m, uint64_t gs, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)(m->mem + m->lay.ready_base + 8 * gs), v,
			 __ATOMIC_RELEASE);
}

static dmr_status_t master_lookup(dmr_kv_master_t *m, uint32_t c, uint8_t *slot, uint64_t seq,
				  const dmr_kv_rpc_req_t *q, int *done_p)
{
	dmr_kv_pool_t *p = m->pool;
	uint32_t n = q->n, b0 = q->b0, total = q->total;
	uint64_t index = q->a;
	*done_p = 0;
	if (index != m->next_expected)
		return DMR_OK; /* served in trace order: an earlier request first */
	uint32_t ri;
	if (b0 == 0) {
		ri = dmr_kv_pool_rq_new(p, total);
		if (ri == NOIDX)
			return dmr_err_set(&m->err, DMR_ERR_NOMEM, "kv master: out of memory");
		p->rq[ri].index = index;
		p->rq[ri].client = c;
		m->lk_rid[c] = ri;
	} else {
		ri = m->lk_rid[c];
		if (ri == NOIDX || ri >= p->caprq || p->rq[ri].index != index ||
		    p->rq[ri].looked != b0)
			return dmr_err_set(&m->err, DMR_ERR_INVALID,
					   "kv master: client %u: LOOKUP of request %" PRIu64
					   " from block %u does not continue its previous one",
					   c, index, b0);
	}
	dmr_kv_preq_t *r = &p->rq[ri];
	if (b0 + n > r->nblocks || n > DMR_KV_MB_MAXB)
		return dmr_err_set(
		    &m->err, DMR_ERR_INVALID,
		    "kv master: client %u: LOOKUP of blocks %u..%u of a %u-block request", c, b0,
		    b0 + n, r->nblocks);
	uint8_t *resp = slot + DMR_KV_MB_RESP;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t b = b0 + j, kind, ei;
		dmr_kv_hit_t hk;
		dmr_status_t st =
		    dmr_kv_pool_lookup(p, dmr_kv_rpc_req_id(slot, j), &hk, &ei, &m->err);
		if (st != DMR_OK)
			return st;
		r->ent[b] = ei;
		r->put[b] = hk != DMR_KV_HIT;
		if (hk == DMR_KV_HIT)
			kind =
			    p->e[ei].state == DMR_KV_E_READY ? DMR_KV_KIND_GET : DMR_KV_KIND_WAIT;
		else
			kind = hk == DMR_KV_PUT ? DMR_KV_KIND_PUT : DMR_KV_KIND_DROP;
		uint64_t off = 0, gs = 0;
		if (ei != NOIDX) {
			const dmr_kv_pentry_t *e = &p->e[ei];
			gs = dmr_kv_ready_index(&m->lay, e->seg, e->slot);
			off = m->lay.pool_base + e->off;
			if (kind == DMR_KV_KIND_PUT)
				ready_store(m, gs, 0);
		}
		dmr_kv_rpc_resp_put(resp, j, off, (uint32_t)gs, kind);
	}
	r->looked = b0 + n;
	if (b0 + n == r->nblocks) {
		m->next_expected++;
		m->lk_rid[c] = NOIDX;
	}
	dmr_kv_rpc_respond(resp, seq, 0, n, ri);
	*done_p = 1;
	return DMR_OK;
}

static dmr_status_t master_finish(dmr_kv_master_t *m, uint32_t c, uint8_t *slot, uint64_t seq,
				  const dmr_kv_rpc_req_t *q)
{
	dmr_kv_pool_t *p = m->pool;
	uint64_t ri = q->a;
	if (ri >= p->caprq || !p->rq[ri].ent || p->rq[ri].client != c ||
	    p->rq[ri].looked != p->rq[ri].nblocks)
		return dmr_err_set(
		    &m->err, DMR_ERR_INVALID,
		    "kv master: client %u: FINISH of unknown request record %" PRIu64, c, ri);
	const dmr_kv_preq_t *r = &p->rq[ri];
	for (uint32_t b = 0; b < r->nblocks; b++) {
		uint32_t ei = r->ent[b];
		if (ei == NOIDX)
			continue;
		dmr_kv_pool_release(p, ei, r->put[b]);
		if (r->put[b]) {
			const dmr_kv_pentry_t *e = &p->e[ei];
			ready_store(m, dmr_kv_ready_index(&m->lay, e->seg, e->slot),
				    dmr_kv_ready_tag(e->id));
		}
	}
	dmr_kv_pool_rq_free(p, (uint32_t)ri);
	m->finished++;
	dmr_kv_rpc_respond(slot + DMR_KV_MB_RESP, seq, 0, 0, ri);
	return DMR_OK;
}

/* Serve slot s of client c if it holds a new request; *progress_p = 1 when
 * one was served. */
static dmr_status_t master_slot(dmr_kv_master_t *m, uint32_t c, uint32_t s, int *progress_p)
{
	uint32_t i = c * DMR_KV_MB_SLOTS + s;
	uint8_t *slot = m->mem + dmr_kv_mb_off(c, s);
	uint64_t seq = __atomic_load_n((uint64_t *)(void *)slot, __ATOMIC_ACQUIRE);
	if (seq == m->seen[i])
		return DMR_OK;
	dmr_kv_rpc_req_t q;
	if (!dmr_kv_rpc_req_read(slot, seq, &q)) {
		/* body not (yet) consistent with the sequence word */
		dmr_time_ps_t now = master_now(m);
		if (!m->bad_since[i])
			m->bad_since[i] = now;
		else if (now - m->bad_since[i] > m->deadline_ps)
			return dmr_err_set(
			    &m->err, DMR_ERR_REMOTE,
			    "kv master: mailbox of client %u slot %u: sequence %" PRIu64
			    " with a body whose checksum never matched",
			    c, s, seq);
		return DMR_OK;
	}
	m->bad_since[i] = 0;
	int done = 1;
	dmr_status_t st;
	if (m->store && q.op >= DMR_KV_OP_SET)
		st = dmr_kv_store_serve(m->store, c, slot, seq, &q, &m->err);
	else if (m->store || q.op >= DMR_KV_OP_SET)
		st = dmr_err_set(&m->err, DMR_ERR_INVALID,
				 "kv master: client %u slot %u: op %u on %s", c, s, q.op,
				 m->store ? "a key/value store (a trace replay's client?)"
					  : "a trace replay's master (a key/value client?)");
	else if (q.op == DMR_KV_OP_LOOKUP)
		st = master_lookup(m, c, slot, seq, &q, &done);
	else if (q.op == DMR_KV_OP_FINISH)
		st = master_finish(m, c, slot, seq, &q);
	else
		st = dmr_err_set(&m->err, DMR_ERR_INVALID,
				 "kv master: client %u slot %u: unknown op %u", c, s, q.op);
	if (done) {
		m->seen[i] = seq;
		*progress_p = 1;
	}
	return st;
}

dmr_status_t dmr_kv_master_serve(dmr_kv_master_t *m, int *progress_p)
{
	dmr_status_t st = DMR_OK;
	int progress = 0;
	for (uint32_t c = 0; c < m->nc && st == DMR_OK; c++)
		for (uint32_t s = 0; s < DMR_KV_MB_SLOTS && st == DMR_OK; s++)
			st = master_slot(m, c, s, &progress);
	if (progress_p)
		*progress_p = progress;
	return st;
}

static void *master_main(void *arg)
{
	dmr_kv_master_t *m = arg;
	dmr_status_t st = DMR_OK;
	uint32_t idle = 0;
	while (st == DMR_OK && !__atomic_load_n(m->stop, __ATOMIC_RELAXED)) {
		if (m->stop_ext && !*m->stop_ext && dmr_sig_caught())
			*m->stop_ext = dmr_sig_caught(); /* the MN loop ends on it */
		int progress = 0;
		st = dmr_kv_master_serve(m, &progress);
		if (progress)
			idle = 0;
		else if (++idle > 64)
			sched_yield();
	}
	m->st = st;
	if (st != DMR_OK) {
		__atomic_store_n(m->stop, 1, __ATOMIC_RELAXED); /* read by the clients */
		if (m->stop_ext)
			*m->stop_ext = 1;
	}
	return NULL;
}

dmr_status_t dmr_kv_master_start(dmr_kv_master_t *m, const char *who, dmr_err_t *err)
{
	if (pthread_create(&m->tid, NULL, master_main, m) != 0)
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: cannot start the master thread", who);
	m->running = 1;
	return DMR_OK;
}

void dmr_kv_master_join(dmr_kv_master_t *m)
{
	if (m->running)
		pthread_join(m->tid, NULL);
	m->running = 0;
}
