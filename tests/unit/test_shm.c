/*
 * tests/unit/test_shm.c - what the loopback backend (backends/shm/shm.c)
 * promises beyond backends/backend.h: a READ racing a WRITE, or an RPC
 * handler's stores, to the same bytes sees all of it or none of it
 * ("READs whole" in shm.c; verbs does not promise it, so it is not in the
 * conformance suite tests/integration/test_backend.c).
 *
 * A writer thread stores records whose every 8-byte word is the same
 * number n (n = 1, 2, ...: a WRITE on worker 0, or an RPC on worker 0 whose
 * handler stores the words one by one); reader threads READ them on
 * workers 1.. (or copy them in an RPC handler) and count the copies whose
 * words differ. Before shm.c read
 * whole (a plain memcpy), a 2-core host found torn copies in every run of
 * this test; now there must be none.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "helpers/be.h"
#include "helpers/suite.h"

#define MR_SIZE (8u << 20)
#define READERS 2u
#define DEADLINE_NS 10000000000ull

/* The records: one in a page, one across a page boundary (two stripes),
 * one of 64 KiB (16 pages). */
static const struct {
	uint64_t off;
	uint32_t len;
} g_rec[] = {{64, 512}, {3 * 4096 - 256, 1024}, {1u << 20, 64u << 10}};
#define NREC (sizeof(g_rec) / sizeof(g_rec[0]))

typedef struct race {
	dmr_be_t *be;
	int rpc;		/* the writer stores through an RPC handler */
	int rpc_read;		/* the readers copy in an RPC handler */
	unsigned writes;	/* records the writer stores, per record */
	volatile int done;	/* the writer finished */
	uint64_t torn[READERS]; /* copies with differing words */
	uint64_t copies[READERS];
	uint64_t nonzero[READERS]; /* copies that saw some write */
} race_t;

/* shm with one MN of MR_SIZE bytes and `workers` workers. */
static dmr_be_t *open_shm(uint32_t workers)
{
	dmr_be_config_t cfg = {.backend = "shm",
			       .mns = 1,
			       .cns = 1,
			       .workers = workers,
			       .mr_size = MR_SIZE,
			       .gid_index = -1,
			       .port = 1};
	dmr_be_t *be = NULL;
	dmr_err_t err;
	ck_assert_msg(dmr_be_open(&cfg, &be, &err) == DMR_OK, "%s", err.msg);
	return be;
}

/* One completion of worker w, waited for; it must succeed. */
static void wait_ok(dmr_be_t *be, uint32_t w)
{
	dmr_wc_t wc;
	ck_assert_int_eq(dmr_test_wait_wc(be, w, &wc, 1, DEADLINE_NS), 1);
	ck_assert_msg(wc.status == DMR_WC_SUCCESS, "worker %u: %s", w,
		      dmr_wc_status_string(wc.status));
}

typedef struct fill {
	uint64_t off, n;
	uint32_t len;
} fill_t;

/* The RPC handler: record [off, off + len) of the region, word by word,
 * each word n (plain stores: an MN CPU's). */
static uint32_t fill_handler(void *arg, uint8_t *mem, uint64_t mem_len)
{
	const fill_t *f = arg;
	ck_assert_uint_le(f->off + f->len, mem_len);
	volatile uint64_t *w = (volatile uint64_t *)(void *)(mem + f->off);
	for (uint32_t k = 0; k < f->len / 8; k++)
		w[k] = f->n;
	return 0;
}

typedef struct copy {
	uint64_t off;
	uint32_t len;
	uint8_t *dst;
} copy_t;

/* The RPC handler of a reader: record [off, off + len) copied to dst with
 * memcpy, as core/txn_rpc.c's execute() copies a read set's records. */
static uint32_t copy_handler(void *arg, uint8_t *mem, uint64_t mem_len)
{
	const copy_t *c = arg;
	ck_assert_uint_le(c->off + c->len, mem_len);
	memcpy(c->dst, mem + c->off, c->len);
	return 0;
}

static void *writer(void *arg)
{
	race_t *r = arg;
	uint64_t *buf = malloc(64u << 10);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(dmr_be_mr_reg(r->be, 0, buf, 64u << 10, NULL), DMR_OK);
	for (uint64_t n = 1; n <= r->writes; n++)
		for (size_t k = 0; k < NREC; k++) {
			dmr_err_t err;
			if (r->rpc) {
				fill_t f = {g_rec[k].off, n, g_rec[k].len};
				dmr_be_rpc_t rpc = {.wr_id = n,
						    .handler = fill_handler,
						    .arg = &f,
						    .req_bytes = 16,
						    .resp_cap = 0,
						    .accesses = 1};
				ck_assert_msg(dmr_be_rpc(r->be, 0, 0, &rpc, &err) == DMR_OK, "%s",
					      err.msg);
			} else {
				for (uint32_t w = 0; w < g_rec[k].len / 8; w++)
					buf[w] = n;
				ck_assert_msg(dmr_be_post_one(r->be, 0, 0, DMR_WR_WRITE, n, buf,
							      g_rec[k].off, g_rec[k].len, 0, 0,
							      &err) == DMR_OK,
					      "%s", err.msg);
			}
			wait_ok(r->be, 0);
		}
	free(buf);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

typedef struct reader_arg {
	race_t *r;
	uint32_t id; /* worker id + 1 */
} reader_arg_t;

static void *reader(void *arg)
{
	reader_arg_t *a = arg;
	race_t *r = a->r;
	uint32_t w = a->id + 1;
	uint64_t *buf = malloc(64u << 10);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(dmr_be_mr_reg(r->be, w, buf, 64u << 10, NULL), DMR_OK);
	/* until one round of the records after the writer finished (those
	 * copies see its last writes, whatever the scheduling) */
	for (uint64_t i = 0, last = NREC; last; i++) {
		size_t k = i % NREC;
		if (last < NREC || __atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			last--;
		dmr_err_t err;
		if (r->rpc_read) {
			copy_t c = {g_rec[k].off, g_rec[k].len, (uint8_t *)buf};
			dmr_be_rpc_t rpc = {.wr_id = i,
					    .handler = copy_handler,
					    .arg = &c,
					    .req_bytes = 16,
					    .resp_cap = 0,
					    .accesses = 1};
			ck_assert_msg(dmr_be_rpc(r->be, w, 0, &rpc, &err) == DMR_OK, "%s", err.msg);
		} else {
			ck_assert_msg(dmr_be_post_one(r->be, w, 0, DMR_WR_READ, i, buf,
						      g_rec[k].off, g_rec[k].len, 0, 0,
						      &err) == DMR_OK,
				      "%s", err.msg);
		}
		wait_ok(r->be, w);
		int torn = 0;
		for (uint32_t j = 1; j < g_rec[k].len / 8; j++)
			torn |= buf[j] != buf[0];
		r->torn[a->id] += (uint64_t)torn;
		r->nonzero[a->id] += buf[0] != 0;
		r->copies[a->id]++;
	}
	free(buf);
	return NULL;
}

/* The race, writes stores per record by WRITE or RPC, read by READ or in
 * an RPC handler; asserts no torn copy and that the readers raced (copies
 * that saw writes). */
static void race(int rpc, int rpc_read, unsigned writes)
{
	race_t r = {
	    .be = open_shm(1 + READERS), .rpc = rpc, .rpc_read = rpc_read, .writes = writes};
	pthread_t tw, tr[READERS];
	reader_arg_t ra[READERS];
	for (uint32_t i = 0; i < READERS; i++) {
		ra[i] = (reader_arg_t){&r, i};
		ck_assert_int_eq(pthread_create(&tr[i], NULL, reader, &ra[i]), 0);
	}
	ck_assert_int_eq(pthread_create(&tw, NULL, writer, &r), 0);
	pthread_join(tw, NULL);
	uint64_t torn = 0, copies = 0, nonzero = 0;
	for (uint32_t i = 0; i < READERS; i++) {
		pthread_join(tr[i], NULL);
		torn += r.torn[i];
		copies += r.copies[i];
		nonzero += r.nonzero[i];
	}
	ck_assert_msg(torn == 0, "%s by %s: %llu of %llu copies saw part of a write",
		      rpc ? "rpc" : "write", rpc_read ? "handler" : "READ",
		      (unsigned long long)torn, (unsigned long long)copies);
	ck_assert_uint_gt(nonzero, 0);
	dmr_be_close(r.be);
}

START_TEST(read_never_sees_half_a_write)
{
	race(0, 0, 5000);
}
END_TEST

START_TEST(read_never_sees_half_an_rpc)
{
	race(1, 0, 5000);
}
END_TEST

/* An RPC handler's reads are whole too: it runs alone among its MN's
 * writers (shm.c, RPCs). Before, a handler copying records while a WRITE
 * or another handler stored them saw torn copies (core/txn_rpc.c's read
 * set on shm, when RPC and one-sided transactions mix). */
START_TEST(handler_never_sees_half_a_write)
{
	race(0, 1, 5000);
}
END_TEST

START_TEST(handler_never_sees_half_an_rpc)
{
	race(1, 1, 5000);
}
END_TEST

/* A long READ under a stream of WRITEs to its pages: a 64 KiB block READ
 * while a writer stores its 4 KiB pages one after the other without a
 * pause (each page's words equal). No page of a copy is torn, and every
 * READ completes: on a 2-core host some reach shm.c's hold-back (new
 * writers wait after a READ's 64th try; seen with a print there), which
 * this does not assert (it is not visible through backend.h). */
typedef struct stream {
	dmr_be_t *be;
	volatile int stop;
	uint64_t pages_written;
} stream_t;

#define BLOCK_OFF (2u << 20)
#define BLOCK_BYTES (64u << 10)

static void *page_writer(void *arg)
{
	stream_t *st = arg;
	uint64_t *buf = malloc(4096);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(dmr_be_mr_reg(st->be, 0, buf, 4096, NULL), DMR_OK);
	for (uint64_t n = 1; !__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE); n++) {
		for (uint32_t w = 0; w < 512; w++)
			buf[w] = n;
		uint64_t page = n % (BLOCK_BYTES / 4096);
		dmr_err_t err;
		ck_assert_msg(dmr_be_post_one(st->be, 0, 0, DMR_WR_WRITE, n, buf,
					      BLOCK_OFF + page * 4096, 4096, 0, 0, &err) == DMR_OK,
			      "%s", err.msg);
		wait_ok(st->be, 0);
		__atomic_fetch_add(&st->pages_written, 1, __ATOMIC_RELEASE);
	}
	free(buf);
	return NULL;
}

START_TEST(long_read_under_a_write_stream)
{
	stream_t st = {.be = open_shm(2)};
	dmr_err_t err;
	uint64_t *blk = malloc(BLOCK_BYTES);
	ck_assert_ptr_nonnull(blk);
	ck_assert_int_eq(dmr_be_mr_reg(st.be, 1, blk, BLOCK_BYTES, NULL), DMR_OK);
	pthread_t tw;
	ck_assert_int_eq(pthread_create(&tw, NULL, page_writer, &st), 0);
	uint64_t torn = 0, seen = 0;
	while (__atomic_load_n(&st.pages_written, __ATOMIC_ACQUIRE) == 0) /* a page to see */
		sched_yield();
	for (int i = 0; i < 100; i++) {
		ck_assert_msg(dmr_be_post_one(st.be, 1, 0, DMR_WR_READ, (uint64_t)i, blk, BLOCK_OFF,
					      BLOCK_BYTES, 0, 0, &err) == DMR_OK,
			      "%s", err.msg);
		wait_ok(st.be, 1);
		for (uint32_t p = 0; p < BLOCK_BYTES / 4096; p++) {
			const uint64_t *w = blk + p * 512;
			for (uint32_t k = 1; k < 512; k++)
				torn += w[k] != w[0];
			seen += w[0] != 0;
		}
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tw, NULL);
	ck_assert_msg(torn == 0, "%llu torn words", (unsigned long long)torn);
	ck_assert_uint_gt(seen, 0);
	ck_assert_uint_gt(st.pages_written, 0);
	free(blk);
	dmr_be_close(st.be);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shm");
	TCase *tc = tcase_create("whole");
	tcase_add_test(tc, read_never_sees_half_a_write);
	tcase_add_test(tc, read_never_sees_half_an_rpc);
	tcase_add_test(tc, handler_never_sees_half_a_write);
	tcase_add_test(tc, handler_never_sees_half_an_rpc);
	tcase_add_test(tc, long_read_under_a_write_stream);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return dmr_test_run(s);
}
