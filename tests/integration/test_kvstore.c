/*
 * tests/integration/test_kvstore.c - the key/value API over the KV pool
 * (issue #17 item 1; core/kv/api.h, core/kv/store.h, replay/kvstore.h,
 * docs/KVCACHE.md section 10): set/get/del round trips of 1 KiB, 1 MiB and
 * 64 MiB values on sim and shm (every byte compared), multi-key get,
 * overwrite, a failed set leaving the old value readable, every bad input
 * refused with its message and nothing written, a full pool, the kvops
 * trace (format, reader refusals, generator determinism) replayed on sim
 * and shm with every get checked against the reference model, the sim's
 * determinism, and the command line's refusals before anything connects.
 * `kv set` / `kv get` across two CN processes against `kv mn` needs RDMA:
 * scripts/rxe-kv-check runs it in the VM.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/kvstore.h"
#include "traces/kvops.h"

static const char *backends[] = {"sim", "shm"};

static void open_local(dmr_kv_local_t *L, const char *be, uint64_t cap, uint64_t block,
		       uint32_t clients)
{
	dmr_kv_local_opts_t o = {
	    .backend = be, .capacity = cap, .block = block, .clients = clients, .timeout_s = 30};
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_local_open(L, &o, &err);
	ck_assert_msg(st == DMR_OK, "open %s: %s", be, err.msg);
}

/* the pool's blocks in use and the keys mapped (replay/kvstore.h) */
static uint64_t state_of(dmr_kv_local_t *L, int keys)
{
	dmr_err_t err = {{0}};
	uint64_t b = 0, k = 0;
	ck_assert_msg(dmr_kv_local_state(L, &b, &k, &err) == DMR_OK, "%s", err.msg);
	return keys ? k : b;
}

static uint8_t *pattern(uint64_t seed, uint64_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(b);
	dmr_kvops_fill(seed, b, len);
	return b;
}

static void get_one(dmr_kv_cli_t *c, const char *key, dmr_kv_value_t *v, dmr_status_t want)
{
	const void *k[1] = {key};
	uint64_t kl[1] = {strlen(key)};
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_get(c, 1, k, kl, v, &err);
	ck_assert_msg(st == want, "get %s: %d (%s), want %d", key, st, err.msg, want);
}

/* set then get of 1 KiB, 1 MiB, 64 MiB (and an odd size, and 0 bytes);
 * the get is from another client (worker, mailbox) than the set */
START_TEST(test_round_trip)
{
	const char *be = backends[_i];
	dmr_kv_local_t L;
	open_local(&L, be, 200ull << 20, 1 << 20, 2);
	static const uint64_t sizes[] = {1024, 1 << 20, 64ull << 20, 3 * (1 << 20) + 17, 0};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char key[32];
		snprintf(key, sizeof(key), "key-%zu", i);
		uint8_t *v = pattern(100 + i, sizes[i]);
		dmr_err_t err = {{0}};
		dmr_status_t st = dmr_kv_set(&L.cli[0], key, strlen(key), v, sizes[i], &err);
		ck_assert_msg(st == DMR_OK, "%s: set %s (%llu B): %s", be, key,
			      (unsigned long long)sizes[i], err.msg);
		dmr_kv_value_t out;
		get_one(&L.cli[1], key, &out, DMR_OK);
		ck_assert_uint_eq(out.len, sizes[i]);
		ck_assert_msg(memcmp(out.data, v, sizes[i]) == 0, "%s: %s bytes differ", be, key);
		dmr_kv_values_free(&out, 1);
		free(v);
	}
	/* the pool holds exactly the values' blocks: 1 + 1 + 64 + 4 + 0 */
	ck_assert_uint_eq(state_of(&L, 0), 70);
	ck_assert_uint_eq(state_of(&L, 1), 5);
	/* del: gone, its blocks free; a second del and a get are not found */
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_kv_del(&L.cli[0], "key-2", 5, &err), DMR_OK);
	ck_assert_uint_eq(state_of(&L, 0), 6);
	ck_assert_int_eq(dmr_kv_del(&L.cli[1], "key-2", 5, &err), DMR_ERR_NOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, "kv del 'key-2': not found"));
	dmr_kv_value_t out;
	get_one(&L.cli[0], "key-2", &out, DMR_ERR_NOTFOUND);
	ck_assert_int_eq(out.st, DMR_ERR_NOTFOUND);
	ck_assert_ptr_null(out.data);
	dmr_kv_local_close(&L);
}
END_TEST

/* several keys in one get, one of them missing; overwrite */
START_TEST(test_multi_get_overwrite)
{
	const char *be = backends[_i];
	dmr_kv_local_t L;
	open_local(&L, be, 64ull << 20, 64 << 10, 1);
	dmr_kv_cli_t *c = &L.cli[0];
	dmr_err_t err = {{0}};
	uint8_t *a = pattern(1, 5000), *b = pattern(2, 300000), *a2 = pattern(3, 777);
	ck_assert_int_eq(dmr_kv_set(c, "a", 1, a, 5000, &err), DMR_OK);
	ck_assert_int_eq(dmr_kv_set(c, "b", 1, b, 300000, &err), DMR_OK);
	const void *keys[3] = {"a", "nope", "b"};
	uint64_t kl[3] = {1, 4, 1};
	dmr_kv_value_t out[3];
	ck_assert_int_eq(dmr_kv_get(c, 3, keys, kl, out, &err), DMR_ERR_NOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, "'nope': not found"));
	ck_assert_int_eq(out[0].st, DMR_OK);
	ck_assert_int_eq(out[1].st, DMR_ERR_NOTFOUND);
	ck_assert_int_eq(out[2].st, DMR_OK);
	ck_assert_uint_eq(out[0].len, 5000);
	ck_assert_uint_eq(out[2].len, 300000);
	ck_assert(memcmp(out[0].data, a, 5000) == 0);
	ck_assert(memcmp(out[2].data, b, 300000) == 0);
	dmr_kv_values_free(out, 3);
	/* overwrite a with a shorter value: the get sees the new one only, the
	 * old blocks are freed (1 block instead of 1: 5000 B and 777 B both
	 * take one 64 KiB block; b takes 5) */
	ck_assert_int_eq(dmr_kv_set(c, "a", 1, a2, 777, &err), DMR_OK);
	get_one(c, "a", out, DMR_OK);
	ck_assert_uint_eq(out[0].len, 777);
	ck_assert(memcmp(out[0].data, a2, 777) == 0);
	dmr_kv_values_free(out, 1);
	ck_assert_uint_eq(state_of(&L, 0), 1 + 5);
	ck_assert_uint_eq(state_of(&L, 1), 2);
	free(a);
	free(b);
	free(a2);
	dmr_kv_local_close(&L);
}
END_TEST

/* a set that fails after WRITING part of the new value (a lost connection,
 * with or without its ABORT) leaves the old value whole; a set the pool has
 * no room for is refused FULL and leaves it too */
START_TEST(test_failed_set_keeps_old)
{
	const char *be = backends[_i];
	dmr_kv_local_t L;
	open_local(&L, be, 8ull << 20, 1 << 20, 1); /* 8 slots of 1 MiB */
	dmr_kv_cli_t *c = &L.cli[0];
	dmr_err_t err = {{0}};
	uint8_t *old = pattern(10, 2 << 20), *nv = pattern(11, 4 << 20);
	ck_assert_int_eq(dmr_kv_set(c, "k", 1, old, 2 << 20, &err), DMR_OK);
	for (int no_abort = 0; no_abort < 2; no_abort++) {
		c->test_fail_after = 2;
		c->test_no_abort = no_abort;
		dmr_status_t st = dmr_kv_set(c, "k", 1, nv, 4 << 20, &err);
		ck_assert_int_eq(st, DMR_ERR_REMOTE);
		ck_assert_ptr_nonnull(strstr(err.msg, "stopped after 2 of 4 blocks"));
		dmr_kv_value_t out;
		get_one(c, "k", &out, DMR_OK);
		ck_assert_uint_eq(out.len, 2 << 20);
		ck_assert_msg(memcmp(out.data, old, 2 << 20) == 0, "old value damaged");
		dmr_kv_values_free(&out, 1);
	}
	/* with ABORT the 4 blocks were freed; without, they stay allocated
	 * (a dead setter's): 2 + 4 in use */
	ck_assert_uint_eq(state_of(&L, 0), 6);
	/* 4 MiB more does not fit in the 2 free slots: FULL, nothing changed */
	dmr_status_t st = dmr_kv_set(c, "k", 1, nv, 4 << 20, &err);
	ck_assert_int_eq(st, DMR_ERR_FULL);
	ck_assert_ptr_nonnull(strstr(err.msg, "the pool has no room"));
	ck_assert_ptr_nonnull(strstr(err.msg, "the old value (if any) is kept"));
	ck_assert_uint_eq(state_of(&L, 0), 6);
	dmr_kv_value_t out;
	get_one(c, "k", &out, DMR_OK);
	ck_assert(out.len == (2u << 20) && memcmp(out.data, old, 2 << 20) == 0);
	dmr_kv_values_free(&out, 1);
	free(old);
	free(nv);
	dmr_kv_local_close(&L);
}
END_TEST

/* bad keys and a value over the limit: refused before any RPC, with the
 * message, and nothing is written (the pool and the RPC count unchanged) */
START_TEST(test_bad_input)
{
	const char *be = backends[_i];
	dmr_kv_local_t L;
	open_local(&L, be, 16ull << 20, 1 << 20, 1);
	dmr_kv_cli_t *c = &L.cli[0];
	dmr_err_t err = {{0}};
	uint8_t v[16] = {1, 2, 3};
	ck_assert_int_eq(dmr_kv_set(c, "k", 1, v, 16, &err), DMR_OK);
	uint64_t rpcs = c->st.rpcs, used = state_of(&L, 0);
	char longkey[300];
	memset(longkey, 'x', sizeof(longkey));
	static const struct {
		const char *key;
		uint64_t klen;
		const char *want;
	} bad[] = {{"a\0b", 3, "key has a NUL byte at offset 1"},
		   {"", 0, "empty key"},
		   {NULL, 251, "key of 251 bytes: longer than the limit of 250 bytes"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *k = bad[i].key ? bad[i].key : longkey;
		ck_assert_int_eq(dmr_kv_set(c, k, bad[i].klen, v, 16, &err), DMR_ERR_INVALID);
		ck_assert_msg(strstr(err.msg, bad[i].want), "set: '%s'", err.msg);
		dmr_kv_value_t out;
		const void *kk[1] = {k};
		ck_assert_int_eq(dmr_kv_get(c, 1, kk, &bad[i].klen, &out, &err), DMR_ERR_INVALID);
		ck_assert_msg(strstr(err.msg, bad[i].want), "get: '%s'", err.msg);
		ck_assert_int_eq(dmr_kv_del(c, k, bad[i].klen, &err), DMR_ERR_INVALID);
		ck_assert_msg(strstr(err.msg, bad[i].want), "del: '%s'", err.msg);
	}
	/* 250 bytes is allowed */
	ck_assert_int_eq(dmr_kv_key_check(longkey, 250, &err), DMR_OK);
	/* the limit: 16 slots -> 16 MiB; one byte more is refused */
	ck_assert_uint_eq(c->g.val_max, 16ull << 20);
	uint64_t big = (16ull << 20) + 1;
	uint8_t *bv = calloc(1, big);
	ck_assert_int_eq(dmr_kv_set(c, "k", 1, bv, big, &err), DMR_ERR_RANGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "value of 16777217 bytes: above the store's limit "
					      "of 16777216 bytes"));
	ck_assert_ptr_nonnull(strstr(err.msg, "nothing was written"));
	free(bv);
	ck_assert_uint_eq(c->st.rpcs, rpcs);
	ck_assert_uint_eq(state_of(&L, 0), used);
	/* the old value is still there */
	dmr_kv_value_t out;
	get_one(c, "k", &out, DMR_OK);
	ck_assert(out.len == 16 && memcmp(out.data, v, 16) == 0);
	dmr_kv_values_free(&out, 1);
	/* the master refuses a bad key too (a client that skips the check) */
	dmr_kv_rpc_req_t q = {.op = DMR_KV_OP_GET, .n = 1, .b0 = 3};
	uint8_t slot[DMR_KV_MB_SLOT] = {0};
	memcpy(slot + DMR_KV_MB_REQ_HDR, "a\0b", 3);
	ck_assert_int_eq(dmr_kv_store_serve(&L.store, 0, slot, 99, &q, &err), DMR_OK);
	ck_assert_uint_eq(dmr_kv_ld_u32(slot + DMR_KV_MB_RESP + 8), DMR_KV_S_BADKEY);
	dmr_kv_local_close(&L);
}
END_TEST

/* the get READs the region's bytes: a byte flipped in the MN region after
 * the set (the pool slot of the value's second block) is what the get
 * returns, and dmr_kvops_check finds it */
START_TEST(test_get_reads_the_region)
{
	const char *be = backends[_i];
	dmr_kv_local_t L;
	open_local(&L, be, 8ull << 20, 1 << 20, 1);
	dmr_err_t err = {{0}};
	uint64_t len = (1 << 20) + 4096;
	uint8_t *v = pattern(42, len);
	ck_assert_int_eq(dmr_kv_set(&L.cli[0], "c", 1, v, len, &err), DMR_OK);
	uint64_t memlen;
	uint8_t *mem = dmr_be_mn_memory(L.be, 0, &memlen);
	ck_assert_ptr_nonnull(mem);
	/* the value's blocks are the first two slots of a fresh pool */
	mem[L.lay.pool_base + (1 << 20) + 100] ^= 0xff;
	dmr_kv_value_t out;
	get_one(&L.cli[0], "c", &out, DMR_OK);
	uint64_t badb = 0;
	ck_assert_int_eq(dmr_kvops_check(42, out.data, out.len, &badb), 0);
	ck_assert_uint_eq(badb, (1 << 20) + 100);
	dmr_kv_values_free(&out, 1);
	free(v);
	dmr_kv_local_close(&L);
}
END_TEST

/* shm: one thread overwrites a key while another gets it; every get
 * returns one whole value (every word the same version number, the length
 * that version's): never a mix of two sets, never a torn one */
typedef struct race_arg {
	dmr_kv_cli_t *c;
	int rounds;
	uint64_t whole, bad;
	dmr_status_t st;
	char msg[512];
} race_arg_t;

static int race_done; /* the setter finished */

static uint64_t race_len(uint64_t ver)
{
	return 8 * (1000 + (ver * 7919) % 40000); /* 8 KB .. 328 KB, several blocks */
}

static void *race_setter(void *p)
{
	race_arg_t *a = p;
	dmr_err_t err = {{0}};
	uint64_t *v = malloc(8 * 41000);
	for (int i = 1; v && i <= a->rounds && a->st == DMR_OK; i++) {
		uint64_t n = race_len((uint64_t)i) / 8;
		for (uint64_t w = 0; w < n; w++)
			v[w] = (uint64_t)i;
		a->st = dmr_kv_set(a->c, "x", 1, v, n * 8, &err);
	}
	if (a->st != DMR_OK)
		snprintf(a->msg, sizeof(a->msg), "%s", err.msg);
	free(v);
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *race_getter(void *p)
{
	race_arg_t *a = p;
	dmr_err_t err = {{0}};
	const void *k[1] = {"x"};
	uint64_t kl[1] = {1};
	/* until the setter is done, then once more (the last value) */
	for (int last = 0; a->st == DMR_OK && !last;) {
		last = __atomic_load_n(&race_done, __ATOMIC_ACQUIRE);
		dmr_kv_value_t out;
		dmr_status_t st = dmr_kv_get(a->c, 1, k, kl, &out, &err);
		if (st == DMR_ERR_NOTFOUND)
			continue; /* before the first set */
		if ((a->st = st) != DMR_OK) {
			snprintf(a->msg, sizeof(a->msg), "%s", err.msg);
			break;
		}
		const uint64_t *w = out.data;
		uint64_t ver = out.len >= 8 ? w[0] : 0, ok = out.len == race_len(ver);
		for (uint64_t j = 0; ok && j < out.len / 8; j++)
			ok = w[j] == ver;
		a->whole += ok;
		a->bad += !ok;
		dmr_kv_values_free(&out, 1);
	}
	return NULL;
}

START_TEST(test_concurrent_set_get)
{
	dmr_kv_local_t L;
	open_local(&L, "shm", 64ull << 20, 64 << 10, 2);
	race_arg_t s = {.c = &L.cli[0], .rounds = 150}, g = {.c = &L.cli[1]};
	race_done = 0;
	pthread_t ts, tg;
	ck_assert_int_eq(pthread_create(&ts, NULL, race_setter, &s), 0);
	ck_assert_int_eq(pthread_create(&tg, NULL, race_getter, &g), 0);
	pthread_join(ts, NULL);
	pthread_join(tg, NULL);
	ck_assert_msg(s.st == DMR_OK, "setter: %s", s.msg);
	ck_assert_msg(g.st == DMR_OK, "getter: %s", g.msg);
	ck_assert_uint_eq(g.bad, 0);
	ck_assert(g.whole > 0); /* at least the last get, after the setter */
	/* only the last value is left: its blocks, one key */
	ck_assert_uint_eq(state_of(&L, 0), (race_len(150) + (64 << 10) - 1) / (64 << 10));
	ck_assert_uint_eq(state_of(&L, 1), 1);
	dmr_kv_local_close(&L);
}
END_TEST

/* a hand-written kvops trace on sim and shm: the counts are the model's */
START_TEST(test_ops_small)
{
	const char *be = backends[_i];
	char tr[600];
	dmr_test_path(tr, sizeof(tr), "small.kvops");
	dmr_test_write_file(tr, "# dmreplay-kvops v1\n# value_max 3000000\nop,key,bytes\n"
				"set,a,1000\nset,b,3000000\nget,a b c,\ndel,a,\nget,a,\nset,b,5\n"
				"get,b,\ndel,zz,\nset,c,0\nget,c b,\n# end 10\n");
	dmr_kv_local_opts_t o = {.backend = be, .capacity = 16ull << 20, .block = 1 << 20};
	dmr_kv_ops_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_ops_run(tr, &o, NULL, &r, &err);
	ck_assert_msg(st == DMR_OK, "%s: %s", be, err.msg);
	ck_assert_uint_eq(r.ops, 10);
	ck_assert_uint_eq(r.sets, 4);
	ck_assert_uint_eq(r.gets, 4);
	ck_assert_uint_eq(r.dels, 2);
	ck_assert_uint_eq(r.keys_got, 3 + 1 + 1 + 2);
	ck_assert_uint_eq(r.hits, 2 + 0 + 1 + 2);
	ck_assert_uint_eq(r.misses, 1 + 1);
	ck_assert_uint_eq(r.dels_missing, 1);
	ck_assert_uint_eq(r.bytes_set, 1000 + 3000000 + 5);
	ck_assert_uint_eq(r.bytes_got, 1000 + 3000000 + 5 + 0 + 5);
	ck_assert_uint_eq(r.checked, r.bytes_got);
	ck_assert(r.p50_us[2] > 0);
}
END_TEST

/* generated traces: deterministic bytes; replayed on sim and shm with
 * the same counts; the sim's summary is byte-identical on a rerun except
 * the wall column */
START_TEST(test_ops_generated)
{
	char tr[600], tr2[600], o1[600], o2[600], o3[600];
	dmr_test_path(tr, sizeof(tr), "g.kvops");
	dmr_test_path(tr2, sizeof(tr2), "g2.kvops");
	dmr_test_path(o1, sizeof(o1), "o1");
	dmr_test_path(o2, sizeof(o2), "o2");
	dmr_test_path(o3, sizeof(o3), "o3");
	for (int i = 0; i < 2; i++) {
		dmr_test_run_t r = dmr_test_dmr(
		    "kv", "gen", "--kvops", "--ops", "600", "--keys", "50", "--theta", "0.99",
		    "--sizes", "lognormal:4K:1.5", "--value-max", "1M", "--mix", "0.4,0.5,0.1",
		    "--get-keys", "4", "--seed", "7", "-o", i ? tr2 : tr,
		    i ? "--quiet" : NULL /* the second with --quiet, as kv gen --mooncake */, NULL);
		dmr_test_run_ok(&r);
		dmr_test_run_free(&r);
	}
	char *a = dmr_test_read_text(tr), *b = dmr_test_read_text(tr2);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "# end 600\n"));
	free(a);
	free(b);
	dmr_kv_ops_result_t rs[2];
	for (int i = 0; i < 2; i++) {
		dmr_kv_local_opts_t o = {
		    .backend = backends[i], .capacity = 64ull << 20, .block = 64 << 10};
		dmr_err_t err = {{0}};
		dmr_status_t st = dmr_kv_ops_run(tr, &o, i ? o2 : o1, &rs[i], &err);
		ck_assert_msg(st == DMR_OK, "%s: %s", backends[i], err.msg);
	}
	ck_assert_uint_eq(rs[0].ops, 600);
	ck_assert_uint_eq(rs[0].hits, rs[1].hits);
	ck_assert_uint_eq(rs[0].misses, rs[1].misses);
	ck_assert_uint_eq(rs[0].bytes_got, rs[1].bytes_got);
	ck_assert_uint_eq(rs[0].bytes_set, rs[1].bytes_set);
	ck_assert(rs[0].hits > 100 && rs[0].misses > 10);
	ck_assert_uint_eq(rs[0].checked, rs[0].bytes_got);
	/* sim twice: the same simulated figures */
	dmr_test_run_t r =
	    dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "sim", "--capacity", "64M",
			 "--block-bytes", "64K", "--out", o3, NULL);
	dmr_test_run_ok(&r);
	ck_assert_ptr_nonnull(strstr(r.out, "600 ops"));
	dmr_test_run_free(&r);
	char p1[700], p3[700];
	snprintf(p1, sizeof(p1), "%s/summary.csv", o1);
	snprintf(p3, sizeof(p3), "%s/summary.csv", o3);
	char *s1 = dmr_test_read_text(p1), *s3 = dmr_test_read_text(p3);
	/* everything up to the wall column (the last) */
	ck_assert_ptr_nonnull(strrchr(s1, ','));
	*strrchr(s1, ',') = 0;
	*strrchr(s3, ',') = 0;
	ck_assert_str_eq(s1, s3);
	free(s1);
	free(s3);
	/* o3 again: refused (exit 2), its finished summary kept; --force
	 * moves it to o3/earlier-1/ */
	s3 = dmr_test_read_text(p3);
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "sim", "--out", o3, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "holds the finished results of an earlier run"), "%s", r.err);
	dmr_test_run_free(&r);
	char *again = dmr_test_read_text(p3);
	ck_assert_str_eq(again, s3);
	free(again);
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "sim", "--capacity", "64M",
			 "--block-bytes", "64K", "--out", o3, "--force", NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	snprintf(p3, sizeof(p3), "%s/earlier-1/summary.csv", o3);
	again = dmr_test_read_text(p3);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(again, s3);
	free(again);
	/* trial of session 13: refused at set-up with --force (a block larger
	 * than the pool, an unknown backend): o3 as it was, nothing moved to
	 * earlier-2/ (they were moved before the checks) */
	char *list = dmr_test_dir_listing(o3);
	ck_assert_ptr_nonnull(list);
	snprintf(p3, sizeof(p3), "%s/summary.csv", o3);
	char *fin = dmr_test_read_text(p3);
	ck_assert_ptr_nonnull(fin);
	static const char *const bad[][4] = {{"--capacity", "1M", "--block-bytes", "64M"},
					     {"--backend", "nope", NULL, NULL}};
	static const char *const why[] = {"is larger than a segment", "unknown backend 'nope'"};
	for (int i = 0; i < 2; i++) {
		r = dmr_test_dmr("kv", "run", "--trace", tr, "--out", o3, "--force", bad[i][0],
				 bad[i][1], bad[i][2], bad[i][3], NULL);
		ck_assert_msg(r.status == 2, "exit %d:\n%s", r.status, r.err);
		ck_assert_msg(strstr(r.err, why[i]), "%s", r.err);
		ck_assert_msg(!strstr(r.err, "earlier-2"), "%s", r.err);
		dmr_test_run_free(&r);
		char *after = dmr_test_dir_listing(o3);
		ck_assert_msg(strcmp(list, after) == 0, "--out changed:\n%s\nnow:\n%s", list,
			      after);
		free(after);
		again = dmr_test_read_text(p3);
		ck_assert_ptr_nonnull(again);
		ck_assert_str_eq(again, fin);
		free(again);
	}
	/* the re-trial of session 13: a kvops run took no lock, and two into
	 * one --out both finished. Another process holding o3/.dmr-lock (as
	 * a running kv run does): refused at once, o3 as it was */
	char lk[700];
	snprintf(lk, sizeof(lk), "%s/.dmr-lock", o3);
	int fd = open(lk, O_RDWR | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "sim", "--out", o3, "--force",
			 NULL);
	ck_assert_msg(r.status == 2, "exit %d:\n%s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "another run holds this directory"), "%s", r.err);
	dmr_test_run_free(&r);
	/* an option a kvops trace does not take is named, with the command */
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--cns", "0", NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "dmreplay kv run: option --cns: a kvops trace takes"), "%s",
		      r.err);
	ck_assert_msg(!strstr(r.err, "unrecognized"), "%s", r.err);
	dmr_test_run_free(&r);
	char *held = dmr_test_dir_listing(o3);
	ck_assert_str_eq(held, list);
	free(held);
	close(fd);
	/* a run that starts (--out DIR/ is DIR: no DIR//NAME printed): now
	 * they move, whole */
	char o3s[700];
	snprintf(o3s, sizeof(o3s), "%s/", o3);
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--backend", "sim", "--capacity", "64M",
			 "--block-bytes", "64K", "--out", o3s, "--force", NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(!strstr(r.out, "//") && !strstr(r.err, "//"), "%s%s", r.out, r.err);
	dmr_test_run_free(&r);
	snprintf(p3, sizeof(p3), "%s/earlier-2/summary.csv", o3);
	again = dmr_test_read_text(p3);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(again, fin);
	free(again);
	free(fin);
	free(list);
	free(s3);
}
END_TEST

/* the reader refuses a bad trace naming the line and field */
static const struct {
	const char *text, *want;
} bad_ops[] = {
    {"# dmreplay-kvops v2\n", ":1: kvops trace version 'v2' not supported"},
    {"# dmreplay-kvtrace v1\n", "not a kvops trace"},
    {"# dmreplay-kvops v1\nop,key,bytes\n# end 0\n", "header 'value_max' missing"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key\n", "column line"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nput,a,1\n# end 1\n",
     ":4: field 'op': 'put' is not set, get or del"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nset,a,11\n# end 1\n", ":4: field 'bytes'"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nset,a b,1\n# end 1\n", "one key only"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nget,,\n# end 1\n", "empty key"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nget,a,3\n# end 1\n",
     "must be empty for get"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nget,a,\n", "truncated"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\n# end 0\n", ":4: no operations"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nget,a,\n# end 2\n",
     "trailer says 2 ops, the file has 1"},
    {"# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nget,a,\n# end 1\nget,a,\n",
     "after the '# end' trailer"},
};

START_TEST(test_ops_reader_refuses)
{
	char tr[600];
	dmr_test_path(tr, sizeof(tr), "bad.kvops");
	dmr_test_write_file(tr, bad_ops[_i].text);
	dmr_kv_local_opts_t o = {.backend = "sim"};
	dmr_kv_ops_result_t r;
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_kv_ops_run(tr, &o, NULL, &r, &err);
	ck_assert_int_eq(st, DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, bad_ops[_i].want), "'%s' lacks '%s'", err.msg,
		      bad_ops[_i].want);
	ck_assert_ptr_nonnull(strstr(err.msg, tr));
}
END_TEST

/* The command line routes a kvops file of any version or line end to the
 * kvops reader (a v2 or CR LF file was called "not a dmreplay KV trace",
 * naming the block-trace format); CR LF replays; a NUL byte in a line is
 * named as such (it was "line too long"); a refused header prints no
 * block of zero results. */
START_TEST(test_ops_cli_formats)
{
	char tr[600], o[600];
	dmr_test_path(tr, sizeof(tr), "crlf.kvops");
	dmr_test_path(o, sizeof(o), "crlf-out");
	dmr_test_write_file(tr, "# dmreplay-kvops v1\r\n# value_max 10\r\nop,key,bytes\r\n"
				"set,a,3\r\nget,a,\r\n# end 2\r\n");
	dmr_test_run_t r = dmr_test_dmr("kv", "run", "--trace", tr, "--out", o, NULL);
	dmr_test_run_ok(&r);
	ck_assert_msg(strstr(r.out, "2 ops (1 set, 1 get, 0 del)"), "stdout:\n%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_path(tr, sizeof(tr), "v2.kvops");
	dmr_test_path(o, sizeof(o), "v2-out");
	dmr_test_write_file(tr, "# dmreplay-kvops v2\n# value_max 10\nop,key,bytes\n");
	r = dmr_test_dmr("kv", "run", "--trace", tr, "--out", o, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "kvops trace version 'v2' not supported"), "%s", r.err);
	ck_assert_ptr_null(strstr(r.err, "0 ops"));
	ck_assert_ptr_null(strstr(r.out, "0 ops"));
	dmr_test_run_free(&r);
	dmr_test_path(tr, sizeof(tr), "nul.kvops");
	static const char nul[] =
	    "# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nset,a\0b,3\n# "
	    "end 1\n";
	FILE *f = fopen(tr, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
	fclose(f);
	dmr_kv_local_opts_t lo = {.backend = "sim"};
	dmr_kv_ops_result_t res;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_kv_ops_run(tr, &lo, NULL, &res, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, ":4: a NUL byte in the line"), "%s", err.msg);
	/* kv gen --kvops -o - writes the trace to standard output (once a file
	 * named '-', a trial), the same bytes --out FILE writes */
	dmr_test_path(tr, sizeof(tr), "gen.kvops");
	r = dmr_test_dmr("kv", "gen", "--kvops", "--ops", "50", "--seed", "4", "--out", tr, NULL);
	dmr_test_run_ok(&r);
	dmr_test_run_free(&r);
	r = dmr_test_dmr("kv", "gen", "--kvops", "--ops", "50", "--seed", "4", "-o", "-", NULL);
	dmr_test_run_ok(&r);
	size_t n = 0;
	char *file = dmr_test_slurp(tr, &n);
	ck_assert_ptr_nonnull(file);
	ck_assert_uint_eq(strlen(r.out), n);
	ck_assert_str_eq(r.out, file);
	ck_assert_ptr_nonnull(strstr(file, "# end 50\n"));
	free(file);
	dmr_test_run_free(&r);
	/* kv mn -h is kv mn --help (the pool's usage, not the store's) */
	r = dmr_test_dmr("kv", "mn", "--help", NULL);
	dmr_test_run_t h = dmr_test_dmr("kv", "mn", "-h", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(h.status, 0);
	ck_assert_str_eq(h.out, r.out);
	ck_assert_msg(strstr(r.out, "--trace KVTRACE"), "%s", r.out);
	/* each of kv mn and kv cn leads with its own usage line (kv cn --help
	 * began with kv mn's: the text is shared); kv mn's names the store */
	const char *mn_first = "usage: dmreplay kv mn --config CLUSTER.json --trace KVTRACE";
	const char *cn_first = "usage: dmreplay kv cn --config CLUSTER.json --id K --trace";
	ck_assert_msg(strncmp(r.out, mn_first, strlen(mn_first)) == 0, "%s", r.out);
	ck_assert_msg(strstr(r.out, "without --trace: the key/value store"), "%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_run_free(&h);
	r = dmr_test_dmr("kv", "cn", "--help", NULL);
	h = dmr_test_dmr("kv", "cn", "-h", NULL);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(h.status, 0);
	ck_assert_str_eq(h.out, r.out);
	ck_assert_msg(strncmp(r.out, cn_first, strlen(cn_first)) == 0, "%s", r.out);
	dmr_test_run_free(&r);
	dmr_test_run_free(&h);
}
END_TEST

/* the command line: bad input refused before anything connects (no RDMA
 * here), exit 2, the message naming the problem */
START_TEST(test_cli_refusals)
{
	char cfg[600], big[600], val[600], ops[600];
	dmr_test_path(ops, sizeof(ops), "refuse.kvops");
	dmr_test_write_file(
	    ops, "# dmreplay-kvops v1\n# value_max 10\nop,key,bytes\nset,a,3\n# end 1\n");
	dmr_test_path(cfg, sizeof(cfg), "c.json");
	dmr_test_path(big, sizeof(big), "big.bin");
	dmr_test_path(val, sizeof(val), "v.bin");
	dmr_test_write_file(cfg, "{\"mn\":[{\"id\":0,\"ip\":\"127.0.0.1\",\"mr_size\":4096}],"
				 "\"cn\":[{\"id\":0},{\"id\":1}]}");
	dmr_test_write_file(val, "hello");
	FILE *f = fopen(big, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, (long)DMR_KVOPS_VALUE_MAX, SEEK_SET), 0);
	fputc(0, f);
	fclose(f);
	char key251[260];
	memset(key251, 'k', 251);
	key251[251] = 0;
	static struct {
		const char *a[8];
		const char *want;
	} cases[] = {
	    {{"kv", "set", "k", NULL}, "usage: dmreplay kv set KEY FILE|-"},
	    {{"kv", "set", "k", "VAL", NULL}, "--config CLUSTER.json is required"},
	    {{"kv", "get", NULL}, "dmreplay kv get KEY..."},
	    {{"kv", "del", "a", "b", "--config", "CFG", "--id", "0"}, "one KEY"},
	    {{"kv", "set", "KEY251", "VAL", "--config", "CFG", "--id", "0"},
	     "key of 251 bytes: longer than the limit of 250 bytes"},
	    {{"kv", "get", "ok", "KEY251", "--config", "CFG", "--id", "0"}, "key of 251 bytes"},
	    {{"kv", "set", "k", "BIG", "--config", "CFG", "--id", "0"}, "above the limit"},
	    {{"kv", "set", "k", "/nonexistent/v", "--config", "CFG", "--id", "0"},
	     "/nonexistent/v"},
	    {{"kv", "set", "k", "VAL", "--config", "CFG", "--id", "5"}, "no CN with id 5"},
	    {{"kv", "get", "k", "--config", "CFG", NULL}, "--id K is required"},
	    {{"kv", "gen", "--kvops", "--sizes", "zipf:3", "-o", "VAL"},
	     "option --sizes: 'zipf:3'"},
	    {{"kv", "gen", "--kvops", "--mix", "0.5,0.5,0.5", "-o", "VAL"}, "summing to 1"},
	    {{"kv", "gen", "--kvops", "--get-keys", "17", "-o", "VAL"}, "--get-keys"},
	    /* -o given: the stray argument is named, not a missing -o */
	    {{"kv", "gen", "--kvops", "stray", "-o", "VAL", NULL}, "unexpected argument 'stray'"},
	    {{"kv", "gen", "--kvops", "--ops", "5", NULL}, "-o OUT is required"},
	    {{"kv", "mn", "--capacity", "1M", NULL}, "--config CLUSTER.json is required"},
	    /* one backend's options given to another that would ignore them */
	    {{"kv", "run", "--trace", "OPS", "--backend", "shm", "--device", "x"},
	     "only the verbs backend takes it (--backend shm would ignore it)"},
	    {{"kv", "run", "--trace", "OPS", "--backend", "shm", "--profile", "cx6dx-100g"},
	     "--profile: only the sim backend models a NIC profile"},
	    /* the same for a block trace (checked before the trace is opened) */
	    {{"kv", "run", "--trace", "/nonexistent.kv", "--port", "2"},
	     "only the verbs backend takes it (--backend sim would ignore it)"},
	    /* the block size is the store's option, not a trace header's */
	    {{"kv", "mn", "--config", "CFG", "--capacity", "1K", NULL},
	     "a block of 1048576 bytes (--block-bytes, default 1M) is larger than a segment"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[10] = {0};
		for (int j = 0; j < 8 && cases[i].a[j]; j++) {
			const char *s = cases[i].a[j];
			args[j] = !strcmp(s, "CFG")	 ? cfg
				  : !strcmp(s, "VAL")	 ? val
				  : !strcmp(s, "BIG")	 ? big
				  : !strcmp(s, "KEY251") ? key251
				  : !strcmp(s, "OPS")	 ? ops
							 : s;
		}
		dmr_test_run_t r = dmr_test_dmrv(args);
		ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
		ck_assert_msg(strstr(r.err, cases[i].want), "case %zu: '%s' lacks '%s'", i, r.err,
			      cases[i].want);
		dmr_test_run_free(&r);
	}
	unlink(big);
}
END_TEST

static Suite *kvstore_suite(void)
{
	Suite *s = suite_create("kvstore");
	TCase *tc = tcase_create("kvstore");
	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_loop_test(tc, test_round_trip, 0, 2);
	tcase_add_loop_test(tc, test_multi_get_overwrite, 0, 2);
	tcase_add_loop_test(tc, test_failed_set_keeps_old, 0, 2);
	tcase_add_loop_test(tc, test_bad_input, 0, 2);
	tcase_add_loop_test(tc, test_get_reads_the_region, 0, 2);
	tcase_add_test(tc, test_concurrent_set_get);
	tcase_add_loop_test(tc, test_ops_small, 0, 2);
	tcase_add_test(tc, test_ops_generated);
	tcase_add_loop_test(tc, test_ops_reader_refuses, 0,
			    (int)(sizeof(bad_ops) / sizeof(bad_ops[0])));
	tcase_add_test(tc, test_ops_cli_formats);
	tcase_add_test(tc, test_cli_refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("kvstore", 0, 1) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(kvstore_suite());
	dmr_test_env_fini();
	return rc;
}
