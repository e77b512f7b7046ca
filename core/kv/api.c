/* core/kv/api.c - the key/value API's client: RPCs to the store's master
 * over WRITE and READ, value transfers block by block (api.h). */
#include "api.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/timeps.h"
#include "../base/wrid.h"

#define MIB (1ull << 20)

static const char *sstatus_text(uint32_t s)
{
	switch (s) {
	case DMR_KV_S_OK:
		return "ok";
	case DMR_KV_S_NOTFOUND:
		return "not found";
	case DMR_KV_S_FULL:
		return "the pool has no room for the value";
	case DMR_KV_S_TOOBIG:
		return "the value is above the store's limit";
	case DMR_KV_S_BADKEY:
		return "a bad key";
	case DMR_KV_S_BADREC:
		return "not a value of this client's";
	}
	return "an unknown answer";
}

dmr_status_t dmr_kv_key_check(const void *key, uint64_t klen, dmr_err_t *err)
{
	if (klen == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "kv: empty key (keys are 1..%u bytes)",
				   DMR_KV_KEY_MAX);
	if (klen > DMR_KV_KEY_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv: key of %" PRIu64
				   " bytes: longer than the limit of %u bytes (DMR_KV_KEY_MAX); "
				   "nothing was written",
				   klen, DMR_KV_KEY_MAX);
	const uint8_t *z = memchr(key, 0, (size_t)klen);
	if (z)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "kv: key has a NUL byte at offset %td (of %" PRIu64
				   " bytes): keys are text without NUL; nothing was written",
				   z - (const uint8_t *)key, klen);
	return DMR_OK;
}

/* Wait for the next completion of the client's worker (DRIVEN backends:
 * advance the simulation). A failed completion is DMR_ERR_REMOTE. */
static dmr_status_t wait_wc(dmr_kv_cli_t *c, dmr_wc_t *wc, const char *what, dmr_err_t *err)
{
	dmr_be_t *be = c->cfg.be;
	uint32_t w = c->cfg.worker;
	int driven = (be->ops->caps & DMR_BE_CAP_DRIVEN) != 0;
	uint64_t t0 = dmr_be_now(be, w);
	for (uint32_t spin = 0;; spin++) {
		int n = dmr_be_poll(be, w, wc, 1);
		if (n < 0)
			return dmr_err_set(err, (dmr_status_t)n, "kv: %s: poll of worker %u: %s",
					   what, w, dmr_status_string((dmr_status_t)n));
		if (n == 1) {
			if (wc->status != DMR_WC_SUCCESS)
				return dmr_err_set(err, DMR_ERR_REMOTE,
						   "kv: %s: %s completed with %s (worker %u, MN 0)",
						   what, dmr_wr_opcode_string(wc->opcode),
						   dmr_wc_status_string(wc->status), w);
			return DMR_OK;
		}
		if (driven) {
			if (dmr_be_progress(be, UINT64_MAX) < 0)
				return dmr_err_set(err, DMR_ERR_REMOTE,
						   "kv: %s: no completion and no event left", what);
		} else if (dmr_be_now(be, w) - t0 > c->ps_timeout) {
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "kv: %s: no completion within %.0f s (worker %u): MN "
					   "gone?",
					   what, c->cfg.timeout_s, w);
		} else if (spin > 64) {
			sched_yield();
		}
	}
}

/* One READ of len bytes at `remote` into local (registered), waited for. */
static dmr_status_t read_wait(dmr_kv_cli_t *c, void *local, uint64_t remote, uint32_t len,
			      const char *what, dmr_err_t *err)
{
	dmr_wr_t wr = {.wr_id = dmr_wrid_n(DMR_WRID_KV_RPCR, 0),
		       .local = local,
		       .remote = remote,
		       .length = len,
		       .opcode = DMR_WR_READ,
		       .flags = DMR_WR_SIGNALED};
	dmr_wc_t wc;
	dmr_status_t st = dmr_be_post(c->cfg.be, c->cfg.worker, 0, &wr, 1, err);
	return st != DMR_OK ? st : wait_wc(c, &wc, what, err);
}

/* An RPC on mailbox slot 0: the request (key as the body), then READs of
 * the response area until it answers this sequence number. *status_p,
 * *n_p (entries), *rid_p; the entries stay in c->mb + DMR_KV_MB_RESP until
 * the next RPC. */
static dmr_status_t rpc(dmr_kv_cli_t *c, uint32_t op, uint64_t a, const void *key, uint64_t klen,
			uint32_t *status_p, uint32_t *n_p, uint64_t *rid_p, dmr_err_t *err)
{
	static const char *names[] = {"?",     "LOOKUP", "FINISH",  "SET", "COMMIT",
				      "ABORT", "GET",	 "RELEASE", "DEL"};
	const char *name = op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
	uint64_t ids[(DMR_KV_KEY_MAX + 7) / 8] = {0};
	if (klen)
		memcpy(ids, key, (size_t)klen);
	dmr_kv_rpc_req_t rq = {
	    .op = op, .n = (uint32_t)((klen + 7) / 8), .a = a, .b0 = (uint32_t)klen, .total = 0};
	uint64_t remote = dmr_kv_mb_off(c->cfg.client, 0), seq = ++c->seq;
	char what[64];
	snprintf(what, sizeof(what), "RPC %s (mailbox %u)", name, c->cfg.client);
	dmr_status_t st = dmr_kv_rpc_send(c->cfg.be, c->cfg.worker, c->mb, remote, seq, &rq, ids,
					  dmr_wrid_n(DMR_WRID_KV_RPCW, seq), err);
	dmr_wc_t wc;
	for (int i = 0; st == DMR_OK && i < 2; i++)
		st = wait_wc(c, &wc, what, err);
	if (st != DMR_OK)
		return st;
	c->st.rpcs++;
	uint8_t *resp = c->mb + DMR_KV_MB_RESP;
	uint64_t t0 = dmr_be_now(c->cfg.be, c->cfg.worker);
	for (;;) {
		if (c->cfg.serve && (st = c->cfg.serve(c->cfg.serve_arg, err)) != DMR_OK)
			return st;
		if ((st = dmr_kv_rpc_fetch(c->cfg.be, c->cfg.worker, resp, remote, DMR_KV_MB_MAXB,
					   dmr_wrid_n(DMR_WRID_KV_RPCR, seq), err)) != DMR_OK ||
		    (st = wait_wc(c, &wc, what, err)) != DMR_OK)
			return st;
		uint32_t n = dmr_kv_ld_u32(resp + 12);
		if (n <= DMR_KV_MB_MAXB && dmr_kv_rpc_resp_ok(resp, seq, n)) {
			*status_p = dmr_kv_ld_u32(resp + 8);
			*n_p = n;
			*rid_p = dmr_kv_rpc_resp_rid(resp);
			return DMR_OK;
		}
		if (dmr_be_now(c->cfg.be, c->cfg.worker) - t0 > c->ps_timeout)
			return dmr_err_set(err, DMR_ERR_TIMEOUT,
					   "kv: %s: no answer from the store's master within %.0f "
					   "s: is `dmreplay kv mn` running?",
					   what, c->cfg.timeout_s);
		if ((c->cfg.be->ops->caps & DMR_BE_CAP_DRIVEN) && !c->cfg.serve)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "kv: %s: a DRIVEN backend needs the master inline "
					   "(cfg.serve)",
					   what);
	}
}

dmr_status_t dmr_kv_cli_open(dmr_kv_cli_t *c, const dmr_kv_cli_cfg_t *cfg, dmr_err_t *err)
{
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (!c->cfg.chunk)
		c->cfg.chunk = MIB;
	if (!c->cfg.depth)
		c->cfg.depth = 8;
	if (c->cfg.timeout_s <= 0)
		c->cfg.timeout_s = 30;
	c->ps_timeout = dmr_ps_from_s(c->cfg.timeout_s);
	dmr_be_t *be = cfg->be;
	/* the header first, through a small registered buffer */
	c->mb = aligned_alloc(4096, DMR_KV_MB_SLOT);
	if (!c->mb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	memset(c->mb, 0, DMR_KV_MB_SLOT);
	dmr_status_t st = dmr_be_mr_reg(be, cfg->worker, c->mb, DMR_KV_MB_SLOT, err);
	if (st != DMR_OK) {
		free(c->mb);
		c->mb = NULL;
		return st;
	}
	if ((st = read_wait(c, c->mb, 0, 8 + sizeof(c->g), "store header", err)) != DMR_OK)
		return st;
	uint64_t magic = dmr_kv_ld_u64(c->mb);
	if (magic != DMR_KV_STORE_MAGIC)
		return dmr_err_set(
		    err, DMR_ERR_NODEV,
		    "kv: no key/value store at the MN (header word 0x%016" PRIx64
		    "%s): start it with `dmreplay kv mn --config C` (without "
		    "--trace)",
		    magic, magic == DMR_KV_MAGIC ? ": the MN runs a trace replay's master" : "");
	memcpy(&c->g, c->mb + 8, sizeof(c->g));
	if (c->g.version != 1 || !c->g.block_bytes)
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "kv: the store's header has version %" PRIu64 ", block %" PRIu64
				   " bytes: not a store this client knows",
				   c->g.version, c->g.block_bytes);
	if (cfg->client >= c->g.clients)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv: mailbox %u: the store has %" PRIu64
				   " mailboxes (0..%" PRIu64 ")",
				   cfg->client, c->g.clients, c->g.clients - 1);
	if (c->cfg.chunk > c->g.block_bytes)
		c->cfg.chunk = c->g.block_bytes;
	size_t rl = (size_t)c->cfg.chunk * c->cfg.depth;
	c->ring = aligned_alloc(4096, (rl + 4095) & ~(size_t)4095);
	if (!c->ring)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory (%zu transfer bytes)",
				   rl);
	if ((st = dmr_be_mr_reg(be, cfg->worker, c->ring, rl, err)) != DMR_OK) {
		free(c->ring);
		c->ring = NULL;
		return st;
	}
	/* continue the mailbox's numbering (a new process on an old mailbox) */
	if ((st = read_wait(c, c->mb, dmr_kv_mb_off(cfg->client, 0), 8, "mailbox sequence word",
			    err)) != DMR_OK)
		return st;
	c->seq = dmr_kv_ld_u64(c->mb);
	return DMR_OK;
}

void dmr_kv_cli_close(dmr_kv_cli_t *c)
{
	dmr_err_t e;
	if (c->ring) {
		dmr_be_mr_dereg(c->cfg.be, c->cfg.worker, c->ring, &e);
		free(c->ring);
	}
	if (c->mb) {
		dmr_be_mr_dereg(c->cfg.be, c->cfg.worker, c->mb, &e);
		free(c->mb);
	}
	memset(c, 0, sizeof(*c));
}

/* Move len bytes of a value between user and its blocks at the region
 * offsets off[] (block j holds bytes [j x block, (j + 1) x block)), in
 * chunks, depth WRs in flight (completions of one QP come in order). */
static dmr_status_t xfer(dmr_kv_cli_t *c, int write, const uint64_t *off, uint8_t *user,
			 uint64_t len, dmr_err_t *err)
{
	uint64_t blk = c->g.block_bytes, chunk = c->cfg.chunk, posted = 0;
	uint32_t depth = c->cfg.depth, inflight = 0;
	uint64_t npost = 0, ndone = 0, rpos[64], rlen[64];
	if (depth > 64)
		depth = 64;
	const char *what = write ? "WRITE of a value's block" : "READ of a value's block";
	while (posted < len || inflight) {
		while (posted < len && inflight < depth) {
			uint64_t j = posted / blk, o = posted % blk, n = chunk;
			if (n > blk - o)
				n = blk - o;
			if (n > len - posted)
				n = len - posted;
			uint8_t *buf = c->ring + (npost % depth) * chunk;
			if (write)
				memcpy(buf, user + posted, (size_t)n);
			dmr_wr_t wr = {.wr_id = dmr_wrid_n(DMR_WRID_KV_SLICE, npost),
				       .local = buf,
				       .remote = off[j] + o,
				       .length = (uint32_t)n,
				       .opcode = write ? DMR_WR_WRITE : DMR_WR_READ,
				       .flags = DMR_WR_SIGNALED};
			dmr_status_t st = dmr_be_post(c->cfg.be, c->cfg.worker, 0, &wr, 1, err);
			if (st != DMR_OK)
				return st;
			rpos[npost % depth] = posted;
			rlen[npost % depth] = n;
			npost++;
			posted += n;
			inflight++;
		}
		dmr_wc_t wc;
		dmr_status_t st = wait_wc(c, &wc, what, err);
		if (st != DMR_OK) {
			/* collect what is still in flight (flushed after an error
			 * completion), so the next RPC sees only its own */
			dmr_err_t e2;
			while (--inflight > 0 && st != DMR_ERR_TIMEOUT &&
			       wait_wc(c, &wc, what, &e2) != DMR_ERR_TIMEOUT)
				;
			return st;
		}
		if (dmr_wrid_get_n(wc.wr_id) != ndone)
			return dmr_err_set(err, DMR_ERR_REMOTE,
					   "kv: %s: completion of WR %" PRIu64
					   ", expected %" PRIu64,
					   what, dmr_wrid_get_n(wc.wr_id), ndone);
		uint32_t r = (uint32_t)(ndone % depth);
		if (!write)
			memcpy(user + rpos[r], c->ring + (uint64_t)r * chunk, (size_t)rlen[r]);
		ndone++;
		inflight--;
	}
	return DMR_OK;
}

/* The block offsets of the answer in c->mb (entries 1..n-1) into off[];
 * *len_p = entry 0's length. */
static void answer_blocks(const dmr_kv_cli_t *c, uint32_t n, uint64_t *off, uint64_t *len_p)
{
	const uint8_t *resp = c->mb + DMR_KV_MB_RESP;
	uint32_t rs, kind;
	dmr_kv_rpc_resp_get(resp, 0, len_p, &rs, &kind);
	for (uint32_t j = 1; j < n; j++)
		dmr_kv_rpc_resp_get(resp, j, &off[j - 1], &rs, &kind);
}

static dmr_status_t check_blocks(const dmr_kv_cli_t *c, uint32_t n, uint64_t len, const char *what,
				 dmr_err_t *err)
{
	uint64_t blk = c->g.block_bytes;
	if (n < 1 || (uint64_t)(n - 1) != (len + blk - 1) / blk)
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "kv: %s: the master answered %u entries for a value of %" PRIu64
				   " bytes (blocks of %" PRIu64 ")",
				   what, n, len, blk);
	return DMR_OK;
}

static int key_text(char *b, size_t bl, const void *key, uint64_t klen)
{
	int w = (int)(klen > 64 ? 64 : klen);
	return snprintf(b, bl, "'%.*s'%s", w, (const char *)key, klen > 64 ? "..." : "");
}

dmr_status_t dmr_kv_set(dmr_kv_cli_t *c, const void *key, uint64_t klen, const void *val,
			uint64_t len, dmr_err_t *err)
{
	dmr_status_t st = dmr_kv_key_check(key, klen, err);
	if (st != DMR_OK)
		return st;
	char kt[80];
	key_text(kt, sizeof(kt), key, klen);
	if (len > c->g.val_max)
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv set %s: value of %" PRIu64
				   " bytes: above the store's limit of %" PRIu64
				   " bytes (val_max); nothing was written",
				   kt, len, c->g.val_max);
	uint32_t status, n;
	uint64_t rid, vlen;
	if ((st = rpc(c, DMR_KV_OP_SET, len, key, klen, &status, &n, &rid, err)) != DMR_OK)
		return st;
	if (status != DMR_KV_S_OK)
		return dmr_err_set(err, status == DMR_KV_S_FULL ? DMR_ERR_FULL : DMR_ERR_RANGE,
				   "kv set %s (%" PRIu64 " bytes): refused by the MN: %s; nothing "
				   "was written, the old value (if any) is kept",
				   kt, len, sstatus_text(status));
	uint64_t off[DMR_KV_MB_MAXB];
	answer_blocks(c, n, off, &vlen);
	if (vlen != len)
		st = dmr_err_set(err, DMR_ERR_REMOTE,
				 "kv set %s: the master allocated %" PRIu64
				 " bytes for a value of %" PRIu64,
				 kt, vlen, len);
	if (st == DMR_OK)
		st = check_blocks(c, n, len, "set", err);
	uint64_t wlen = len;
	uint32_t fail = c->test_fail_after;
	c->test_fail_after = 0;
	if (fail && (uint64_t)fail < n - 1ull)
		wlen = (uint64_t)fail * c->g.block_bytes;
	if (st == DMR_OK)
		st = xfer(c, 1, off, (uint8_t *)(uintptr_t)val, wlen, err);
	if (st == DMR_OK && wlen < len)
		st = dmr_err_set(
		    err, DMR_ERR_REMOTE,
		    "kv set %s: stopped after %u of %u blocks (test: a lost connection)", kt, fail,
		    n - 1);
	if (st != DMR_OK) {
		if (!(fail && c->test_no_abort)) {
			dmr_err_t e2;
			uint32_t s2, n2;
			uint64_t r2;
			rpc(c, DMR_KV_OP_ABORT, rid, NULL, 0, &s2, &n2, &r2, &e2); /* best effort */
		}
		return st;
	}
	if ((st = rpc(c, DMR_KV_OP_COMMIT, rid, NULL, 0, &status, &n, &rid, err)) != DMR_OK)
		return st;
	if (status != DMR_KV_S_OK)
		return dmr_err_set(err, DMR_ERR_REMOTE, "kv set %s: COMMIT refused by the MN: %s",
				   kt, sstatus_text(status));
	c->st.sets++;
	c->st.bytes_set += len;
	return DMR_OK;
}

void dmr_kv_values_free(dmr_kv_value_t *out, uint32_t n)
{
	for (uint32_t i = 0; out && i < n; i++) {
		free(out[i].data);
		out[i].data = NULL;
		out[i].len = 0;
	}
}

dmr_status_t dmr_kv_get(dmr_kv_cli_t *c, uint32_t n, const void *const *keys, const uint64_t *klens,
			dmr_kv_value_t *out, dmr_err_t *err)
{
	dmr_status_t st = DMR_OK;
	for (uint32_t i = 0; i < n; i++) {
		out[i] = (dmr_kv_value_t){NULL, 0, DMR_ERR_NOTFOUND};
		if ((st = dmr_kv_key_check(keys[i], klens[i], err)) != DMR_OK)
			return st;
	}
	uint64_t *rids = calloc(n ? n : 1, sizeof(uint64_t));
	uint64_t(*offs)[DMR_KV_MB_MAXB] = calloc(n ? n : 1, sizeof(*offs));
	if (!rids || !offs) {
		free(rids);
		free(offs);
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv get: out of memory");
	}
	uint32_t missing = 0, held = 0;
	char kt[80];
	/* look every key up (each value held until RELEASE) */
	for (uint32_t i = 0; i < n && st == DMR_OK; i++) {
		uint32_t status, ne;
		c->st.gets++;
		st = rpc(c, DMR_KV_OP_GET, 0, keys[i], klens[i], &status, &ne, &rids[i], err);
		if (st != DMR_OK)
			break;
		key_text(kt, sizeof(kt), keys[i], klens[i]);
		if (status == DMR_KV_S_NOTFOUND) {
			missing++;
			c->st.misses++;
			continue;
		}
		if (status != DMR_KV_S_OK) {
			st = dmr_err_set(err, DMR_ERR_REMOTE, "kv get %s: refused by the MN: %s",
					 kt, sstatus_text(status));
			break;
		}
		held = i + 1;
		out[i].st = DMR_INPROGRESS;
		answer_blocks(c, ne, offs[i], &out[i].len);
		if ((st = check_blocks(c, ne, out[i].len, "get", err)) != DMR_OK)
			break;
		c->st.hits++;
	}
	/* READ the values, then release them */
	for (uint32_t i = 0; i < n && st == DMR_OK; i++) {
		if (out[i].st != DMR_INPROGRESS)
			continue;
		if (!(out[i].data = malloc(out[i].len ? out[i].len : 1))) {
			st = dmr_err_set(err, DMR_ERR_NOMEM,
					 "kv get: out of memory (%" PRIu64 " bytes)", out[i].len);
			break;
		}
		st = xfer(c, 0, offs[i], out[i].data, out[i].len, err);
		c->st.bytes_got += out[i].len;
	}
	for (uint32_t i = 0; i < held; i++) {
		if (out[i].st != DMR_INPROGRESS)
			continue;
		uint32_t status, ne;
		uint64_t r;
		dmr_err_t e2;
		dmr_status_t s2 =
		    rpc(c, DMR_KV_OP_RELEASE, rids[i], NULL, 0, &status, &ne, &r, st ? &e2 : err);
		if (st == DMR_OK && s2 != DMR_OK)
			st = s2;
		else if (st == DMR_OK && status != DMR_KV_S_OK)
			st = dmr_err_set(err, DMR_ERR_REMOTE,
					 "kv get: RELEASE refused by the MN: %s",
					 sstatus_text(status));
		out[i].st = DMR_OK;
	}
	free(rids);
	free(offs);
	if (st != DMR_OK) {
		dmr_kv_values_free(out, n);
		return st;
	}
	if (missing) {
		uint32_t first = 0;
		while (out[first].st == DMR_OK)
			first++;
		key_text(kt, sizeof(kt), keys[first], klens[first]);
		return dmr_err_set(err, DMR_ERR_NOTFOUND, "kv get %s: not found%s", kt,
				   missing > 1 ? " (and more keys)" : "");
	}
	return DMR_OK;
}

dmr_status_t dmr_kv_del(dmr_kv_cli_t *c, const void *key, uint64_t klen, dmr_err_t *err)
{
	dmr_status_t st = dmr_kv_key_check(key, klen, err);
	if (st != DMR_OK)
		return st;
	uint32_t status, n;
	uint64_t rid;
	if ((st = rpc(c, DMR_KV_OP_DEL, 0, key, klen, &status, &n, &rid, err)) != DMR_OK)
		return st;
	char kt[80];
	key_text(kt, sizeof(kt), key, klen);
	if (status == DMR_KV_S_NOTFOUND)
		return dmr_err_set(err, DMR_ERR_NOTFOUND, "kv del %s: not found", kt);
	if (status != DMR_KV_S_OK)
		return dmr_err_set(err, DMR_ERR_REMOTE, "kv del %s: refused by the MN: %s", kt,
				   sstatus_text(status));
	c->st.dels++;
	return DMR_OK;
}
