/*
 * backends/shm/shm.c - the loopback backend: "verbs" executed by the CPU of
 * the posting thread on an MN region in this process, with real atomics.
 *
 * For testing what the sim cannot: the threaded replay (one thread per
 * worker, as on verbs) and the transaction core under real concurrency. Not
 * a performance model; now() is CLOCK_MONOTONIC.
 *
 * Each WR takes effect during dmr_be_post, in order; its completion is
 * queued on the worker's CQ (only the posting thread and, for timers, any
 * thread touch it: a mutex per CQ). A WRITE stores each aligned 8-byte word
 * once (write_words), as a NIC's DMA does; CAS/FAA are sequentially
 * consistent 8-byte atomics. A READ is a memcpy that never sees part of a
 * WRITE (or of an RPC handler's stores): see "READs whole" below.
 *
 * READs whole. A READ racing a WRITE to the same bytes sees all of it or
 * none of it. The protocols modelled here (FORD's code: occ, ford, farm,
 * drtmh; core/txn.h) check a record's lock word and version, not each
 * cache line as FaRM's paper does, so they assume a READ of a record does
 * not see half of a write-back (a WRITE of version and payload). A NIC
 * mostly honours that: its DMA moves a record in tens of nanoseconds. A
 * memcpy on a thread preempted mid-copy can take milliseconds, and then
 * the READ sees the new version with the old payload behind it: found as
 * lost updates of farm and drtmh on shm under ThreadSanitizer (TPC-C C1
 * and C2 failed in 2-7 % of runs: a read-write record READ without a lock,
 * its version equal to the one at the lock round, its payload old). So
 * each READ is a seqlock reader over the 4 KiB pages it spans (stripes of
 * begin/end counters, page number mod the stripe count), and each WRITE a
 * writer of its pages (begin += 1, stores, end += 1); an RPC handler is a
 * writer of the whole region (one more pair per MN). A READ whose stripes
 * had a writer in progress, or saw a writer begin, copies again; after 64
 * tries it holds new writers of its MN back until it has copied (a writer
 * waits only before it begins, never mid-write). rxe's responder
 * copies with the CPU too (docs/SOFTROCE-VM.md); verbs keeps the window.
 *
 * Several MNs (1..DMR_BE_MAX_MNS): one region of cfg.mr_size bytes per MN;
 * a WR posted to MN m works on region m. DMR_BE_CTL_MN_STATS gives each
 * MN's counts (the busy times 0: no model).
 *
 * RPCs (dmr_be_rpc): the handler runs inline in the call, on the posting
 * thread, with the shared mapping as the MN's memory. Its reads need whole
 * records too (core/txn_rpc.c copies the read set's records with memcpy
 * and validates their versions: a copy torn by a one-sided write-back, or
 * by another handler's commit, would pass), so a handler runs alone among
 * the MN's writers: handlers of one MN one at a time (rpc_mu), and none
 * while a one-sided WRITE to the MN is in progress (active counts them;
 * the handler holds new WRITEs back as a long READ does, then waits for
 * active 0). An MN CPU serving RPCs with one thread, against DMA writes
 * it excludes: what the sim models (each handler at one instant).
 *
 * Fault injection (tests): DMR_SHM_CAS_TWICE=N executes every Nth CAS twice
 * and completes it with the second execution's old value, as a responder
 * that re-executes a retransmitted atomic instead of replaying its saved
 * result does (docs/SOFTROCE-VM.md "Replayed atomics"). Read at open.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../core/base/timeps.h"
#include "../backend.h"

typedef struct shm_timer {
	uint64_t at, wr_id;
} shm_timer_t;

typedef struct shm_cq {
	pthread_mutex_t mu;
	dmr_wc_t *wc;
	uint32_t head, n, cap;
	shm_timer_t *tm; /* sorted by at; equal times in the order set */
	uint32_t ntm, captm;
	uint8_t error; /* QP in error: WRs are flushed */
} shm_cq_t;

/* A stripe's seqlock (READs whole, above): writers that began, ended. */
typedef struct shm_seq {
	uint64_t begin, end;
} shm_seq_t;

#define SHM_PAGE_SHIFT 12u	   /* stripes cover 4 KiB pages */
#define SHM_MAX_STRIPES (1u << 16) /* 1 MiB of counters per MN at most */

typedef struct shm {
	dmr_be_t be;
	uint8_t *mem[DMR_BE_MAX_MNS];
	shm_seq_t *seq[DMR_BE_MAX_MNS];		/* nstripes per MN */
	shm_seq_t whole[DMR_BE_MAX_MNS];	/* RPC handlers: writers of the region */
	uint32_t stall[DMR_BE_MAX_MNS];		/* READs, handlers holding new writers back */
	uint64_t active[DMR_BE_MAX_MNS];	/* one-sided WRITEs in progress */
	pthread_mutex_t rpc_mu[DMR_BE_MAX_MNS]; /* handlers, one at a time */
	uint64_t nstripes;			/* a power of 2 */
	uint64_t size;
	uint32_t mns;
	dmr_be_mn_stats_t mst[DMR_BE_MAX_MNS]; /* under stmu */
	uint64_t t0;
	uint32_t nworkers;
	shm_cq_t *cq;
	dmr_be_stats_t st;
	pthread_mutex_t stmu;
	uint64_t cas_twice; /* DMR_SHM_CAS_TWICE: every Nth CAS twice (0: off) */
	uint64_t ncas;	    /* CASes executed (atomic), for cas_twice */
} shm_t;

static void shm_close(dmr_be_t *be)
{
	shm_t *s = (shm_t *)be;
	for (uint32_t m = 0; m < s->mns; m++)
		if (s->mem[m])
			munmap(s->mem[m], s->size);
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++)
		free(s->seq[m]);
	for (uint32_t i = 0; s->cq && i < s->nworkers; i++) {
		free(s->cq[i].wc);
		free(s->cq[i].tm);
		pthread_mutex_destroy(&s->cq[i].mu);
	}
	free(s->cq);
	pthread_mutex_destroy(&s->stmu);
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++)
		pthread_mutex_destroy(&s->rpc_mu[m]);
	free(s);
}

static dmr_status_t shm_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	if (cfg->mns < 1 || cfg->mns > DMR_BE_MAX_MNS)
		return dmr_err_set(err, DMR_ERR_INVALID, "shm: %u MNs: takes 1..%u", cfg->mns,
				   DMR_BE_MAX_MNS);
	if (cfg->cns == 0 || cfg->workers == 0 || cfg->mr_size == 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "shm: needs cns, workers and mr_size > 0");
	shm_t *s = calloc(1, sizeof(*s));
	if (!s)
		return dmr_err_set(err, DMR_ERR_NOMEM, "shm: out of memory");
	pthread_mutex_init(&s->stmu, NULL);
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++)
		pthread_mutex_init(&s->rpc_mu[m], NULL);
	s->be.ops = NULL;
	s->be.cfg = *cfg;
	s->nworkers = cfg->cns * cfg->workers;
	s->cq = calloc(s->nworkers, sizeof(*s->cq));
	s->size = cfg->mr_size;
	int bad = !s->cq;
	uint64_t pages = ((cfg->mr_size - 1) >> SHM_PAGE_SHIFT) + 1;
	s->nstripes = 1;
	while (s->nstripes < pages && s->nstripes < SHM_MAX_STRIPES)
		s->nstripes *= 2;
	for (uint32_t m = 0; !bad && m < cfg->mns; m++) {
		s->seq[m] = calloc(s->nstripes, sizeof(shm_seq_t));
		void *mem = mmap(NULL, cfg->mr_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (mem == MAP_FAILED || !s->seq[m]) {
			if (mem != MAP_FAILED)
				munmap(mem, cfg->mr_size);
			bad = mem == MAP_FAILED ? 2 : 1;
		} else {
			s->mem[s->mns++] = mem;
		}
	}
	if (bad) {
		s->nworkers = s->cq ? s->nworkers : 0;
		shm_close(&s->be);
		/* the region asked for is more than this host maps: the run's
		 * input (exit 2), not a failure of the run */
		if (bad == 2)
			return dmr_err_set(
			    err, DMR_ERR_RANGE,
			    "shm: cannot map %u MN regions of %llu bytes (%.1f GiB): "
			    "more than this host maps (the region is --mr-size, or "
			    "what the trace's tables need)",
			    cfg->mns, (unsigned long long)cfg->mr_size,
			    (double)cfg->mr_size / 1073741824.0);
		return dmr_err_set(err, DMR_ERR_NOMEM, "shm: out of memory");
	}
	for (uint32_t i = 0; i < s->nworkers; i++)
		pthread_mutex_init(&s->cq[i].mu, NULL);
	s->t0 = dmr_mono_ps();
	const char *twice = getenv("DMR_SHM_CAS_TWICE");
	s->cas_twice = twice ? strtoull(twice, NULL, 10) : 0;
	extern const dmr_be_ops_t dmr_shm_ops;
	s->be.ops = &dmr_shm_ops;
	*be_p = &s->be;
	return DMR_OK;
}

static int cq_add(shm_cq_t *q, const dmr_wc_t *wc)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 256;
		dmr_wc_t *n = malloc(sizeof(*n) * cap);
		if (!n)
			return -1;
		for (uint32_t i = 0; i < q->n; i++)
			n[i] = q->wc[(q->head + i) % q->cap];
		free(q->wc);
		q->wc = n;
		q->cap = cap;
		q->head = 0;
	}
	q->wc[(q->head + q->n) % q->cap] = *wc;
	q->n++;
	return 0;
}

/*
 * A WRITE's payload into the region: each aligned 8-byte word with one
 * store. Not memcpy: glibc copies 8..15 bytes as two overlapping 8-byte
 * stores, so an 8-byte unlock WRITE stored 0 twice, and another thread's
 * lock CAS that landed between the two (the writer's vCPU preempted there)
 * succeeded and was then overwritten: two holders of one lock. Found as
 * lost updates of test_motor_runs (ycsb, one hot key, 12 contexts on 4
 * threads) under host load; a log of the word showed a successful CAS
 * whose READ, next in its doorbell, saw 0. A NIC writes a DMA word once.
 * An unaligned destination or length is copied as it is (no protocol
 * here writes a lock word that way).
 */
static void write_words(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	if ((uintptr_t)dst & 7) {
		memcpy(dst, src, len);
		return;
	}
	uint64_t k = 0;
	for (; k + 8 <= len; k += 8) {
		uint64_t v;
		memcpy(&v, src + k, 8);
		__atomic_store_n((uint64_t *)(void *)(dst + k), v, __ATOMIC_RELAXED);
	}
	if (k < len)
		memcpy(dst + k, src + k, len - k);
}

/* The stripes of [off, off + len) (len > 0) as [*first, *first + *n) mod
 * nstripes, each once. */
static void stripes_of(const shm_t *s, uint64_t off, uint64_t len, uint64_t *first, uint64_t *n)
{
	uint64_t a = off >> SHM_PAGE_SHIFT, b = (off + len - 1) >> SHM_PAGE_SHIFT;
	*first = a;
	*n = b - a + 1 < s->nstripes ? b - a + 1 : s->nstripes;
}

/* A writer of MN mn that has not begun waits while a READ holds writers
 * back (read_whole). The load is sequentially consistent, as the READ's
 * increment and its loads of the begins: either the writer sees the READ
 * waiting or the READ sees the writer's begin. */
static void writer_wait(shm_t *s, uint32_t mn)
{
	while (__atomic_load_n(&s->stall[mn], __ATOMIC_SEQ_CST))
		sched_yield();
}

/* A one-sided WRITE to MN mn enters (active += 1) unless a READ or a
 * handler holds writers back; then it waits, not counted. The increment
 * and the load of stall are sequentially consistent, as shm_rpc's
 * increment of stall and its loads of active: either the WRITE sees the
 * handler waiting or the handler sees the WRITE in progress. */
static void write_enter(shm_t *s, uint32_t mn)
{
	for (;;) {
		__atomic_fetch_add(&s->active[mn], 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&s->stall[mn], __ATOMIC_SEQ_CST))
			return;
		__atomic_fetch_sub(&s->active[mn], 1, __ATOMIC_SEQ_CST);
		writer_wait(s, mn);
	}
}

/* A WRITE of [off, off + len) on MN mn, the seqlock's writer side: before
 * its stores (end 0) it enters (write_enter) and each stripe's begin
 * += 1, after them (end 1) each end += 1 and it leaves (active -= 1). */
static void write_mark(shm_t *s, uint32_t mn, uint64_t off, uint64_t len, int end)
{
	uint64_t a, n;
	if (!end)
		write_enter(s, mn);
	stripes_of(s, off, len, &a, &n);
	for (uint64_t k = 0; k < n; k++) {
		shm_seq_t *q = &s->seq[mn][(a + k) & (s->nstripes - 1)];
		if (end)
			__atomic_fetch_add(&q->end, 1, __ATOMIC_RELEASE);
		else
			__atomic_fetch_add(&q->begin, 1, __ATOMIC_SEQ_CST);
	}
	if (end)
		__atomic_fetch_sub(&s->active[mn], 1, __ATOMIC_RELEASE);
}

/* Sum of the begins of sq[0..n) (indices from a, mod mask + 1) and of
 * *whole; -1 when one of them has a writer in progress (a begin without
 * its end: each begin is loaded before its end). */
static uint64_t seq_quiet(const shm_seq_t *sq, uint64_t a, uint64_t n, uint64_t mask,
			  const shm_seq_t *whole)
{
	uint64_t b = __atomic_load_n(&whole->begin, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&whole->end, __ATOMIC_SEQ_CST) != b)
		return UINT64_MAX;
	uint64_t sum = b;
	for (uint64_t k = 0; k < n; k++) {
		const shm_seq_t *q = &sq[(a + k) & mask];
		uint64_t qb = __atomic_load_n(&q->begin, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&q->end, __ATOMIC_SEQ_CST) != qb)
			return UINT64_MAX;
		sum += qb;
	}
	return sum;
}

/* The same sum after the copy. Each begin is read with a release RMW
 * (adding 0), so the copy's loads come before it: a seqlock reader's
 * acquire fence, which ThreadSanitizer does not support. */
static uint64_t seq_begins(shm_seq_t *sq, uint64_t a, uint64_t n, uint64_t mask, shm_seq_t *whole)
{
	uint64_t sum = __atomic_fetch_add(&whole->begin, 0, __ATOMIC_ACQ_REL);
	for (uint64_t k = 0; k < n; k++)
		sum += __atomic_fetch_add(&sq[(a + k) & mask].begin, 0, __ATOMIC_ACQ_REL);
	return sum;
}

/* A READ of len (> 0) bytes at off of MN mn into dst, seeing no WRITE in
 * part: copied again while a writer of its pages is in progress or began
 * during the copy (begins only grow: an unchanged sum is no new writer);
 * the thread yields after 8 tries in a row. After SHM_READ_TRIES it holds
 * new writers of the MN back until it has copied (a long READ, e.g. a KV
 * block of 64 MiB, under a stream of WRITEs would otherwise never find its
 * pages quiet); writers that had begun finish, none waits mid-write. */
#define SHM_READ_TRIES 64u
static void read_whole(shm_t *s, uint32_t mn, uint64_t off, uint64_t len, uint8_t *dst)
{
	uint64_t a, n, mask = s->nstripes - 1;
	stripes_of(s, off, len, &a, &n);
	shm_seq_t *sq = s->seq[mn], *whole = &s->whole[mn];
	int held = 0;
	for (unsigned tries = 1;; tries++) {
		uint64_t b1 = seq_quiet(sq, a, n, mask, whole);
		if (b1 != UINT64_MAX) {
			memcpy(dst, s->mem[mn] + off, len);
			if (seq_begins(sq, a, n, mask, whole) == b1)
				break;
		}
		if (tries == SHM_READ_TRIES) {
			__atomic_fetch_add(&s->stall[mn], 1, __ATOMIC_SEQ_CST);
			held = 1;
		}
		if (tries % 8 == 0)
			sched_yield();
	}
	if (held)
		__atomic_fetch_sub(&s->stall[mn], 1, __ATOMIC_SEQ_CST);
}

static dmr_status_t shm_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err)
{
	shm_t *s = (shm_t *)be;
	shm_cq_t *q = &s->cq[worker];
	dmr_be_stats_t d = {0};
	d.doorbells = 1;
	pthread_mutex_lock(&q->mu);
	for (uint32_t i = 0; i < n; i++) {
		const dmr_wr_t *wr = &wrs[i];
		uint64_t len = wr->opcode <= DMR_WR_WRITE ? wr->length : 8;
		uint8_t status = DMR_WC_SUCCESS;
		if (q->error) {
			status = DMR_WC_FLUSH_ERR;
		} else if (wr->remote > s->size || len > s->size - wr->remote) {
			status = DMR_WC_REM_ACCESS_ERR;
			q->error = 1;
		} else {
			uint8_t *p = s->mem[mn] + wr->remote;
			switch (wr->opcode) {
			case DMR_WR_READ:
				if (len)
					read_whole(s, mn, wr->remote, len, wr->local);
				d.reads++;
				d.bytes_read += len;
				break;
			case DMR_WR_WRITE:
				if (len) {
					write_mark(s, mn, wr->remote, len, 0);
					write_words(p, wr->local, len);
					write_mark(s, mn, wr->remote, len, 1);
				}
				d.writes++;
				d.bytes_written += len;
				break;
			case DMR_WR_CAS: {
				uint64_t exp = wr->compare_add;
				__atomic_compare_exchange_n((uint64_t *)(void *)p, &exp, wr->swap,
							    0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
				if (s->cas_twice &&
				    __atomic_add_fetch(&s->ncas, 1, __ATOMIC_RELAXED) %
					    s->cas_twice ==
					0) {
					exp = wr->compare_add; /* executed again */
					__atomic_compare_exchange_n((uint64_t *)(void *)p, &exp,
								    wr->swap, 0, __ATOMIC_SEQ_CST,
								    __ATOMIC_SEQ_CST);
				}
				memcpy(wr->local, &exp, 8);
				d.cas++;
				break;
			}
			case DMR_WR_MASKED_CAS: {
				/* backend.h: compare the bits of compare_mask, swap
				 * those of swap_mask; a CAS loop makes it one atomic */
				uint64_t *w = (uint64_t *)(void *)p;
				uint64_t old = __atomic_load_n(w, __ATOMIC_SEQ_CST), nv;
				do {
					if ((old ^ wr->compare_add) & wr->compare_mask)
						break;
					nv = (old & ~wr->swap_mask) | (wr->swap & wr->swap_mask);
				} while (!__atomic_compare_exchange_n(
				    w, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
				memcpy(wr->local, &old, 8);
				d.cas++;
				break;
			}
			case DMR_WR_FAA: {
				uint64_t old = __atomic_fetch_add(
				    (uint64_t *)(void *)p, wr->compare_add, __ATOMIC_SEQ_CST);
				memcpy(wr->local, &old, 8);
				d.faa++;
				break;
			}
			}
		}
		d.verbs++;
		if (status)
			d.errors++;
		if ((wr->flags & DMR_WR_SIGNALED) || status) {
			dmr_wc_t wc = {.wr_id = wr->wr_id,
				       .opcode = wr->opcode,
				       .status = status,
				       .mn = (uint16_t)mn,
				       .byte_len = wr->opcode == DMR_WR_READ ? wr->length : 0};
			if (cq_add(q, &wc) != 0) {
				pthread_mutex_unlock(&q->mu);
				return dmr_err_set(err, DMR_ERR_NOMEM,
						   "shm: CQ of worker %u: out of memory", worker);
			}
		}
	}
	pthread_mutex_unlock(&q->mu);
	pthread_mutex_lock(&s->stmu);
	dmr_be_mn_stats_t *m = &s->mst[mn];
	m->verbs += d.verbs - d.errors;
	m->reads += d.reads;
	m->writes += d.writes;
	m->atomics += d.cas + d.faa;
	m->bytes_read += d.bytes_read;
	m->bytes_written += d.bytes_written;
	s->st.verbs += d.verbs;
	s->st.reads += d.reads;
	s->st.writes += d.writes;
	s->st.cas += d.cas;
	s->st.faa += d.faa;
	s->st.bytes_read += d.bytes_read;
	s->st.bytes_written += d.bytes_written;
	s->st.doorbells += d.doorbells;
	s->st.errors += d.errors;
	pthread_mutex_unlock(&s->stmu);
	return DMR_OK;
}

/* backend.h dmr_be_rpc: the handler runs here, on the posting thread,
 * against region mn while other workers' WRs run on it too (the handler
 * takes lock words with real atomics); the answer is queued on the
 * worker's CQ. A QP in error flushes it (handler not run). */
static dmr_status_t shm_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			    dmr_err_t *err)
{
	shm_t *s = (shm_t *)be;
	shm_cq_t *q = &s->cq[worker];
	pthread_mutex_lock(&q->mu);
	uint8_t status = q->error ? DMR_WC_FLUSH_ERR : DMR_WC_SUCCESS;
	pthread_mutex_unlock(&q->mu);
	uint32_t resp = 0;
	if (status == DMR_WC_SUCCESS) {
		/* alone among the MN's writers (RPCs, file head): other
		 * handlers wait on rpc_mu, new WRITEs on stall, and the WRITEs
		 * in progress finish first; then a writer of the whole region
		 * for READs (READs whole) */
		pthread_mutex_lock(&s->rpc_mu[mn]);
		__atomic_fetch_add(&s->stall[mn], 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&s->active[mn], __ATOMIC_SEQ_CST))
			sched_yield();
		__atomic_fetch_add(&s->whole[mn].begin, 1, __ATOMIC_SEQ_CST);
		resp = rpc->handler(rpc->arg, s->mem[mn], s->size);
		__atomic_fetch_add(&s->whole[mn].end, 1, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&s->stall[mn], 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&s->rpc_mu[mn]);
		if (resp > rpc->resp_cap) { /* the handler broke its contract */
			status = DMR_WC_GENERAL_ERR;
			resp = rpc->resp_cap;
		}
	}
	dmr_wc_t wc = {.wr_id = rpc->wr_id,
		       .opcode = DMR_WR_RPC,
		       .status = status,
		       .mn = (uint16_t)mn,
		       .byte_len = resp};
	pthread_mutex_lock(&q->mu);
	int bad = cq_add(q, &wc);
	pthread_mutex_unlock(&q->mu);
	if (bad)
		return dmr_err_set(err, DMR_ERR_NOMEM, "shm: CQ of worker %u: out of memory",
				   worker);
	pthread_mutex_lock(&s->stmu);
	s->st.doorbells++;
	if (status == DMR_WC_SUCCESS) {
		s->mst[mn].rpcs++;
		s->st.rpcs++;
	} else {
		s->st.errors++;
	}
	pthread_mutex_unlock(&s->stmu);
	return DMR_OK;
}

static uint64_t shm_now(dmr_be_t *be, uint32_t worker)
{
	(void)worker;
	return dmr_mono_ps() - ((shm_t *)be)->t0;
}

static int shm_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	shm_t *s = (shm_t *)be;
	shm_cq_t *q = &s->cq[worker];
	int n = 0;
	uint64_t now = shm_now(be, worker);
	pthread_mutex_lock(&q->mu);
	/* timers due, earliest first (backend.h: in time order) */
	uint32_t k = 0;
	while (k < q->ntm && n < max && q->tm[k].at <= now) {
		dmr_wc_t wc = {.wr_id = q->tm[k].wr_id, .opcode = DMR_WR_TIMER};
		wcs[n++] = wc;
		k++;
	}
	if (k) {
		memmove(q->tm, q->tm + k, (q->ntm - k) * sizeof(*q->tm));
		q->ntm -= k;
	}
	while (n < max && q->n) {
		wcs[n++] = q->wc[q->head];
		q->head = (q->head + 1) % q->cap;
		q->n--;
	}
	pthread_mutex_unlock(&q->mu);
	return n;
}

static dmr_status_t shm_timer(dmr_be_t *be, uint32_t worker, uint64_t at, uint64_t wr_id)
{
	shm_t *s = (shm_t *)be;
	shm_cq_t *q = &s->cq[worker];
	dmr_status_t st = DMR_OK;
	pthread_mutex_lock(&q->mu);
	if (q->ntm == q->captm) {
		uint32_t cap = q->captm ? q->captm * 2 : 64;
		shm_timer_t *t = realloc(q->tm, sizeof(*t) * cap);
		if (!t)
			st = DMR_ERR_NOMEM;
		else {
			q->tm = t;
			q->captm = cap;
		}
	}
	if (st == DMR_OK) {
		/* after every timer due no later (upper bound): sorted, FIFO on ties */
		uint32_t lo = 0, hi = q->ntm;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (q->tm[mid].at <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(q->tm + lo + 1, q->tm + lo, (q->ntm - lo) * sizeof(*q->tm));
		q->tm[lo] = (shm_timer_t){at, wr_id};
		q->ntm++;
	}
	pthread_mutex_unlock(&q->mu);
	return st;
}

static void *shm_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	shm_t *s = (shm_t *)be;
	if (mn >= s->mns)
		return NULL;
	if (len_p)
		*len_p = s->size;
	return s->mem[mn];
}

static void shm_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	shm_t *s = (shm_t *)be;
	pthread_mutex_lock(&s->stmu);
	*st = s->st;
	pthread_mutex_unlock(&s->stmu);
}

/* ROLE (one process holds the whole cluster) and MN_STATS (counts per MN).
 * No model, simulated time, MTU or payload switch (DMR_ERR_UNSUPPORTED). */
static dmr_status_t shm_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	if (op == DMR_BE_CTL_MN_STATS) {
		shm_t *s = (shm_t *)be;
		pthread_mutex_lock(&s->stmu);
		memcpy(arg, s->mst, sizeof(s->mst[0]) * s->mns);
		pthread_mutex_unlock(&s->stmu);
		return DMR_OK;
	}
	if (op == DMR_BE_CTL_ROLE) {
		shm_t *s = (shm_t *)be;
		*(dmr_be_role_t *)arg = (dmr_be_role_t){
		    .cn = 0, .cns = be->cfg.cns, .first_worker = 0, .workers = s->nworkers};
		return DMR_OK;
	}
	return dmr_be_ctl_unsupported(be, op, err);
}

/* mr_reg/mr_dereg (any local memory will do), barrier (one process),
 * progress (threaded), charge (the CPU is real): the registry's stubs. */
const dmr_be_ops_t dmr_shm_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "shm",
    .caps = DMR_BE_CAP_MASKED_CAS | DMR_BE_CAP_RPC,
    .open = shm_be_open,
    .close = shm_close,
    .post = shm_post,
    .poll = shm_poll,
    .now = shm_now,
    .timer = shm_timer,
    .mn_memory = shm_mn_memory,
    .stats = shm_stats,
    .control = shm_control,
    .rpc = shm_rpc,
};
