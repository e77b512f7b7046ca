/*
 * replay/kv/prefetch.c - Loop X on the sim KV runner (`kv run --loop
 * prefetch`): the predictor, buffers and rule of core/kv/prefetch.h wired
 * to the requests of sim.c. A prefetch is a pool touch (present and READY:
 * pinned, most recently used; not a request, not counted in the hit ratio)
 * and a READ of the block into the client, queued on its QP after the
 * request's own gets; the pin is released when the READ completes. A later
 * get of the same client that finds the block ready in its buffer is not
 * READ. Windows are of simulated time; the decision reads the pool's
 * requested and hits counters.
 */
#include <stdlib.h>

#include "kv_impl.h"

dmr_status_t kv_pf_setup(kv_t *k)
{
	if (!(k->o->loop & DMR_LOOP_PREFETCH))
		return DMR_OK;
	dmr_status_t st = dmr_kv_pf_create(&k->o->pf, k->nclients, &k->pf, k->err);
	if (st != DMR_OK)
		return st;
	k->pf_window = dmr_ps_from_ms_round(k->o->loop_window_ms);
	if (!k->pf_window)
		k->pf_window = 1;
	k->pf_wend = k->pf_window;
	return DMR_OK;
}

dmr_status_t kv_pf_after_rpc(kv_t *k, uint32_t c, uint64_t last)
{
	uint32_t depth = k->pf ? dmr_kv_pf_depth(k->pf) : 0;
	if (!depth)
		return DMR_OK;
	uint64_t ids[DMR_KV_PF_MAX_DEPTH];
	uint32_t n = dmr_kv_pf_predict(k->pf, last, depth, ids), queued = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ei;
		if (dmr_kv_pf_holds(k->pf, c, ids[i]) || !dmr_kv_pool_touch(&k->pool, ids[i], &ei))
			continue;
		uint32_t xi = dmr_kv_xeng_alloc(&k->X);
		if (xi == NOIDX) {
			dmr_kv_pool_release(&k->pool, ei, 0);
			return dmr_err_set(k->err, DMR_ERR_NOMEM, "kv: out of memory (transfers)");
		}
		dmr_kv_xfer_t *x = &k->X.x[xi];
		x->entry = ei;
		x->logical = k->pool.e[ei].off;
		x->len = k->block;
		x->opcode = DMR_WR_READ;
		x->owner = KV_PF_OWNER;
		x->client = c;
		x->tag = ids[i];
		dmr_kv_pf_issue(k->pf, c, ids[i]);
		dmr_kv_xeng_enqueue(&k->X, xi);
		queued++;
	}
	return queued ? dmr_kv_xeng_pump(&k->X, c) : DMR_OK;
}

int kv_pf_serve(kv_t *k, uint32_t ri, uint32_t b)
{
	if (!k->pf)
		return 0;
	const dmr_kv_preq_t *r = &k->pool.rq[ri];
	uint32_t ei = r->ent[b];
	if (!dmr_kv_pf_take(k->pf, r->client, k->pool.e[ei].id))
		return 0;
	dmr_kv_pool_release(&k->pool, ei, 0); /* the lookup's pin: no READ holds it */
	return 1;
}

void kv_pf_done(kv_t *k, const dmr_kv_xfer_t *x)
{
	dmr_kv_pool_release(&k->pool, x->entry, 0);
	k->pf_bytes += x->len;
	dmr_kv_pf_ready(k->pf, x->client, x->tag);
}

void kv_pf_tick(kv_t *k, dmr_time_ps_t t)
{
	if (!k->pf || t < k->pf_wend)
		return;
	uint64_t req = dmr_kv_pool_count(&k->pool.requested),
		 hits = dmr_kv_pool_count(&k->pool.hits);
	dmr_kv_pf_stats_t s0, s1;
	dmr_kv_pf_stats(k->pf, 0, &s0);
	dmr_kv_pf_window(k->pf, req, hits);
	dmr_kv_pf_stats(k->pf, 0, &s1);
	if (s1.windows > s0.windows) {
		k->pf_sig_sum += s1.signal;
		k->pf_sig_n++;
	}
	k->pf_wend += ((t - k->pf_wend) / k->pf_window + 1) * k->pf_window;
}

void kv_pf_sample(kv_t *k, double *g)
{
	if (!k->pf)
		return;
	dmr_kv_pf_stats_t s;
	dmr_kv_pf_stats(k->pf, 0, &s);
	k->cnt[KV_PF_ISSUED] = s.issued;
	k->cnt[KV_PF_USED] = s.used;
	k->cnt[KV_PF_WASTED] = s.wasted;
	k->cnt[KV_PF_BYTES] = k->pf_bytes;
	g[KV_G_PF_SIGNAL] = k->pf_sig_n ? k->pf_sig_sum / (double)k->pf_sig_n : 0;
	g[KV_G_PF_DEPTH] = s.depth;
	k->pf_sig_sum = 0;
	k->pf_sig_n = 0;
}
