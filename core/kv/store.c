/* core/kv/store.c - the key/value store's directory and its RPC ops at the
 * master (store.h). */
#include "store.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NOIDX DMR_KV_NOIDX
#define V_FREE 0
#define V_PENDING 1
#define V_LIVE 2 /* the key's value */
#define V_DEAD 3 /* deleted or overwritten, still held by a GET */

uint64_t dmr_kv_store_val_max(const dmr_kv_pool_t *pool, uint64_t want)
{
	uint64_t blk = pool->block, m = (uint64_t)DMR_KV_VAL_BLOCKS_MAX * blk;
	if (!pool->cfg.unbounded && pool->cap_slots < DMR_KV_VAL_BLOCKS_MAX)
		m = pool->cap_slots * blk;
	if (m > DMR_KV_VALUE_LIMIT)
		m = DMR_KV_VALUE_LIMIT;
	return want && want < m ? want : m;
}

dmr_status_t dmr_kv_store_init(dmr_kv_store_t *s, dmr_kv_pool_t *pool, uint64_t pool_base,
			       uint64_t val_max, dmr_err_t *err)
{
	memset(s, 0, sizeof(*s));
	s->pool = pool;
	s->pool_base = pool_base;
	s->val_max = val_max;
	s->next_id = 1;
	s->vfree = s->kfree = NOIDX;
	s->nbucket = 1024;
	s->bucket = malloc(s->nbucket * sizeof(uint32_t));
	if (!s->bucket)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv store: out of memory");
	for (uint32_t i = 0; i < s->nbucket; i++)
		s->bucket[i] = NOIDX;
	return DMR_OK;
}

void dmr_kv_store_fini(dmr_kv_store_t *s)
{
	for (uint32_t i = 0; s->v && i < s->capv; i++)
		free(s->v[i].ent);
	free(s->v);
	free(s->k);
	free(s->bucket);
	memset(s, 0, sizeof(*s));
}

dmr_kv_sstatus_t dmr_kv_store_key_check(const void *key, uint64_t klen)
{
	if (klen == 0 || klen > DMR_KV_KEY_MAX || memchr(key, 0, (size_t)klen))
		return DMR_KV_S_BADKEY;
	return DMR_KV_S_OK;
}

uint64_t dmr_kv_store_bytes_held(const dmr_kv_store_t *s)
{
	return s->pool->used * s->pool->block;
}

/* FNV-1a over the key, mixed (the chains' hash). */
static uint64_t key_hash(const uint8_t *key, uint32_t klen)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < klen; i++)
		h = (h ^ key[i]) * 0x100000001b3ull;
	return dmr_kv_mix64(h);
}

static uint32_t key_find(const dmr_kv_store_t *s, const uint8_t *key, uint32_t klen, uint64_t h)
{
	for (uint32_t i = s->bucket[h & (s->nbucket - 1)]; i != NOIDX; i = s->k[i].next)
		if (s->k[i].hash == h && s->k[i].klen == klen && !memcmp(s->k[i].key, key, klen))
			return i;
	return NOIDX;
}

/* Double the bucket array when the keys outnumber it (chains stay short). */
static int key_rehash(dmr_kv_store_t *s)
{
	uint32_t nb = s->nbucket * 2, *b = malloc(nb * sizeof(uint32_t));
	if (!b)
		return -1;
	for (uint32_t i = 0; i < nb; i++)
		b[i] = NOIDX;
	for (uint32_t o = 0; o < s->nbucket; o++)
		for (uint32_t i = s->bucket[o], nx; i != NOIDX; i = nx) {
			nx = s->k[i].next;
			s->k[i].next = b[s->k[i].hash & (nb - 1)];
			b[s->k[i].hash & (nb - 1)] = i;
		}
	free(s->bucket);
	s->bucket = b;
	s->nbucket = nb;
	return 0;
}

static void key_unlink(dmr_kv_store_t *s, uint32_t ki)
{
	uint32_t *pp = &s->bucket[s->k[ki].hash & (s->nbucket - 1)];
	while (*pp != ki)
		pp = &s->k[*pp].next;
	*pp = s->k[ki].next;
	s->k[ki].next = s->kfree;
	s->kfree = ki;
	s->keys--;
}

/* One reference less on record vi; at 0 its blocks go back to the pool. */
static void val_unref(dmr_kv_store_t *s, uint32_t vi)
{
	dmr_kv_sval_t *v = &s->v[vi];
	if (--v->refs)
		return;
	for (uint32_t j = 0; j < v->nblocks; j++)
		dmr_kv_pool_remove(s->pool, v->ent[j]);
	free(v->ent);
	v->ent = NULL;
	v->state = V_FREE;
	v->next = s->vfree;
	s->vfree = vi;
}

/* The directory lets go of record vi (DEL, overwrite). */
static void dir_drop(dmr_kv_store_t *s, uint32_t vi)
{
	s->v[vi].state = V_DEAD;
	val_unref(s, vi);
}

static void respond(uint8_t *slot, uint64_t seq, uint32_t status, uint32_t n, uint64_t rid)
{
	dmr_kv_rpc_respond(slot + DMR_KV_MB_RESP, seq, status, n, rid);
}

static dmr_status_t op_set(dmr_kv_store_t *s, uint32_t c, uint8_t *slot, uint64_t seq,
			   const uint8_t *key, uint32_t klen, uint64_t len, dmr_err_t *err)
{
	s->sets++;
	if (len > s->val_max) {
		respond(slot, seq, DMR_KV_S_TOOBIG, 0, 0);
		return DMR_OK;
	}
	uint64_t blk = s->pool->block;
	uint32_t nb = (uint32_t)((len + blk - 1) / blk), vi;
	uint32_t *ent = malloc((nb ? nb : 1) * sizeof(uint32_t));
	dmr_kv_sval_t *v = ent ? dmr_kv_list_take(s->v, &s->capv, &s->vfree, sizeof(*v),
						  offsetof(dmr_kv_sval_t, next), 64, &vi)
			       : NULL;
	if (!v) {
		free(ent);
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv store: out of memory (values)");
	}
	s->v = v;
	v = &s->v[vi];
	for (uint32_t j = 0; j < nb; j++) {
		dmr_kv_hit_t hk;
		dmr_status_t st = dmr_kv_pool_lookup(s->pool, s->next_id++, &hk, &ent[j], err);
		if (st != DMR_OK || hk != DMR_KV_PUT) {
			/* no room (or out of memory): give back what was taken */
			if (st == DMR_OK && hk == DMR_KV_HIT) /* a fresh id cannot be present */
				dmr_kv_pool_release(s->pool, ent[j], 0);
			for (uint32_t i = 0; i < j; i++)
				dmr_kv_pool_remove(s->pool, ent[i]);
			free(ent);
			v->next = s->vfree;
			s->vfree = vi;
			if (st != DMR_OK)
				return st;
			s->full++;
			respond(slot, seq, DMR_KV_S_FULL, 0, 0);
			return DMR_OK;
		}
	}
	memcpy(v->key, key, klen);
	v->klen = klen;
	v->nblocks = nb;
	v->refs = 1; /* the setter's, then the directory's */
	v->client = c;
	v->state = V_PENDING;
	v->len = len;
	v->ent = ent;
	uint8_t *resp = slot + DMR_KV_MB_RESP;
	dmr_kv_rpc_resp_put(resp, 0, len, 0, 0);
	for (uint32_t j = 0; j < nb; j++)
		dmr_kv_rpc_resp_put(resp, j + 1, s->pool_base + s->pool->e[ent[j]].off, 0,
				    DMR_KV_KIND_PUT);
	respond(slot, seq, DMR_KV_S_OK, nb + 1, vi);
	return DMR_OK;
}

/* Record a of the request, when it is client c's and in `state`. */
static uint32_t rec_of(const dmr_kv_store_t *s, uint64_t a, uint32_t c, uint8_t state)
{
	if (a >= s->capv || s->v[a].state != state || (state == V_PENDING && s->v[a].client != c))
		return NOIDX;
	return (uint32_t)a;
}

static dmr_status_t op_commit(dmr_kv_store_t *s, uint32_t c, uint8_t *slot, uint64_t seq,
			      uint64_t a, dmr_err_t *err)
{
	uint32_t vi = rec_of(s, a, c, V_PENDING);
	if (vi == NOIDX) {
		respond(slot, seq, DMR_KV_S_BADREC, 0, a);
		return DMR_OK;
	}
	dmr_kv_sval_t *v = &s->v[vi];
	for (uint32_t j = 0; j < v->nblocks; j++)
		s->pool->e[v->ent[j]].state = DMR_KV_E_READY; /* pinned: never evicted */
	uint64_t h = key_hash(v->key, v->klen);
	uint32_t ki = key_find(s, v->key, v->klen, h);
	if (ki == NOIDX) {
		if (s->keys + 1 > s->nbucket && key_rehash(s) != 0)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv store: out of memory (keys)");
		dmr_kv_skey_t *k = dmr_kv_list_take(s->k, &s->capk, &s->kfree, sizeof(*k),
						    offsetof(dmr_kv_skey_t, next), 64, &ki);
		if (!k)
			return dmr_err_set(err, DMR_ERR_NOMEM, "kv store: out of memory (keys)");
		s->k = k;
		v = &s->v[vi];
		memcpy(s->k[ki].key, v->key, v->klen);
		s->k[ki].klen = v->klen;
		s->k[ki].hash = h;
		s->k[ki].next = s->bucket[h & (s->nbucket - 1)];
		s->bucket[h & (s->nbucket - 1)] = ki;
		s->keys++;
	} else {
		dir_drop(s, s->k[ki].val); /* the old value: freed once no GET holds it */
		v = &s->v[vi];
	}
	s->k[ki].val = vi;
	v->state = V_LIVE; /* the setter's reference is now the directory's */
	s->commits++;
	respond(slot, seq, DMR_KV_S_OK, 0, vi);
	return DMR_OK;
}

static dmr_status_t op_get(dmr_kv_store_t *s, uint8_t *slot, uint64_t seq, const uint8_t *key,
			   uint32_t klen)
{
	s->gets++;
	uint32_t ki = key_find(s, key, klen, key_hash(key, klen));
	if (ki == NOIDX) {
		s->misses++;
		respond(slot, seq, DMR_KV_S_NOTFOUND, 0, 0);
		return DMR_OK;
	}
	s->hits++;
	uint32_t vi = s->k[ki].val;
	dmr_kv_sval_t *v = &s->v[vi];
	v->refs++; /* until RELEASE */
	uint8_t *resp = slot + DMR_KV_MB_RESP;
	dmr_kv_rpc_resp_put(resp, 0, v->len, 0, 0);
	for (uint32_t j = 0; j < v->nblocks; j++)
		dmr_kv_rpc_resp_put(resp, j + 1, s->pool_base + s->pool->e[v->ent[j]].off, 0,
				    DMR_KV_KIND_GET);
	respond(slot, seq, DMR_KV_S_OK, v->nblocks + 1, vi);
	return DMR_OK;
}

dmr_status_t dmr_kv_store_serve(dmr_kv_store_t *s, uint32_t c, uint8_t *slot, uint64_t seq,
				const dmr_kv_rpc_req_t *q, dmr_err_t *err)
{
	const uint8_t *key = slot + DMR_KV_MB_REQ_HDR;
	uint32_t klen = q->b0;
	int keyed = q->op == DMR_KV_OP_SET || q->op == DMR_KV_OP_GET || q->op == DMR_KV_OP_DEL;
	if (keyed && (uint64_t)klen > 8ull * q->n)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv store: client %u: a key of %u bytes in a %u-word body", c,
				   klen, q->n);
	if (keyed && dmr_kv_store_key_check(key, klen) != DMR_KV_S_OK) {
		respond(slot, seq, DMR_KV_S_BADKEY, 0, 0);
		return DMR_OK;
	}
	uint32_t vi, ki;
	if (!keyed)
		klen = 0;
	switch (q->op) {
	case DMR_KV_OP_SET:
		return op_set(s, c, slot, seq, key, klen, q->a, err);
	case DMR_KV_OP_COMMIT:
		return op_commit(s, c, slot, seq, q->a, err);
	case DMR_KV_OP_ABORT:
		if ((vi = rec_of(s, q->a, c, V_PENDING)) == NOIDX) {
			respond(slot, seq, DMR_KV_S_BADREC, 0, q->a);
			return DMR_OK;
		}
		s->aborts++;
		val_unref(s, vi);
		respond(slot, seq, DMR_KV_S_OK, 0, q->a);
		return DMR_OK;
	case DMR_KV_OP_GET:
		return op_get(s, slot, seq, key, klen);
	case DMR_KV_OP_RELEASE:
		/* a held record: live with the directory's reference and at
		 * least one GET's, or dead (deleted, overwritten) with a GET's */
		vi = q->a < s->capv ? (uint32_t)q->a : NOIDX;
		if (vi == NOIDX || !((s->v[vi].state == V_LIVE && s->v[vi].refs >= 2) ||
				     (s->v[vi].state == V_DEAD && s->v[vi].refs >= 1))) {
			respond(slot, seq, DMR_KV_S_BADREC, 0, q->a);
			return DMR_OK;
		}
		val_unref(s, vi);
		respond(slot, seq, DMR_KV_S_OK, 0, q->a);
		return DMR_OK;
	case DMR_KV_OP_DEL:
		s->dels++;
		ki = key_find(s, key, klen, key_hash(key, klen));
		if (ki == NOIDX) {
			respond(slot, seq, DMR_KV_S_NOTFOUND, 0, 0);
			return DMR_OK;
		}
		vi = s->k[ki].val;
		key_unlink(s, ki);
		dir_drop(s, vi);
		respond(slot, seq, DMR_KV_S_OK, 0, 0);
		return DMR_OK;
	default:
		return dmr_err_set(err, DMR_ERR_INVALID, "kv store: client %u: unknown op %u", c,
				   q->op);
	}
}
