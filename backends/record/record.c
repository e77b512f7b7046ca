/*
 * backends/record/record.c - the recording wrapper (record.h has the
 * format): every operation forwards to the inner backend; post() and poll()
 * also append a record to the worker's buffer. Per-worker buffers are
 * touched only by the worker's own posts and polls (one thread per worker
 * on threaded backends); writing a full buffer to the file, the hash and
 * the count are under one mutex.
 */
#include "record.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../core/base/fs.h"

#define BUF_RECORDS 1638u /* 64 KiB of 40-byte records per worker */

typedef struct rworker {
	uint8_t *buf; /* BUF_RECORDS records */
	uint32_t n;
} rworker_t;

typedef struct rec {
	dmr_be_t be; /* first */
	dmr_be_ops_t table;
	dmr_be_t *in;
	uint32_t nworkers;
	rworker_t *w;
	pthread_mutex_t mu;
	dmr_afile_t af;
	uint64_t hash, count;
	int failed; /* a write failed: the file is not committed */
	int write_errno;
} rec_t;

static rec_t *to_r(dmr_be_t *be)
{
	return (rec_t *)be;
}

uint64_t dmr_rec_fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 1099511628211ull; /* the FNV 64-bit prime */
	}
	return h;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Write n bytes to the file, under the mutex. */
static void emit_locked(rec_t *r, const uint8_t *p, size_t n, uint64_t records)
{
	if (r->failed)
		return;
	if (fwrite(p, 1, n, r->af.f) != n) {
		r->failed = 1;
		r->write_errno = errno;
		return;
	}
	r->hash = dmr_rec_fnv(r->hash, p, n);
	r->count += records;
}

static void flush_worker(rec_t *r, rworker_t *w)
{
	if (!w->n)
		return;
	pthread_mutex_lock(&r->mu);
	emit_locked(r, w->buf, (size_t)w->n * DMR_REC_RECORD_BYTES, w->n);
	pthread_mutex_unlock(&r->mu);
	w->n = 0;
}

static void append(rec_t *r, uint32_t worker, uint8_t type, uint8_t opcode, uint8_t aux,
		   uint32_t mn, uint32_t length, uint64_t remote, uint64_t t, uint64_t wr_id)
{
	rworker_t *w = &r->w[worker];
	if (w->n == BUF_RECORDS)
		flush_worker(r, w);
	uint8_t *p = w->buf + (size_t)w->n * DMR_REC_RECORD_BYTES;
	p[0] = type;
	p[1] = opcode;
	p[2] = aux;
	p[3] = 0;
	put32(p + 4, worker);
	put32(p + 8, mn);
	put32(p + 12, length);
	put64(p + 16, remote);
	put64(p + 24, t);
	put64(p + 32, wr_id);
	w->n++;
}

/* ---- the operations ---- */

static void rec_close(dmr_be_t *be)
{
	rec_t *r = to_r(be);
	if (r->w) {
		for (uint32_t i = 0; i < r->nworkers; i++) {
			flush_worker(r, &r->w[i]);
			free(r->w[i].buf);
		}
		uint8_t end[DMR_REC_RECORD_BYTES] = {DMR_REC_END};
		put64(end + 16, r->count);
		put64(end + 24, r->hash);
		memcpy(end + 32, "DMRREND", 8);
		emit_locked(r, end, sizeof(end), 0);
		dmr_err_t err;
		if (r->failed) {
			fprintf(stderr,
				"dmreplay: record: %s: write failed: %s (recording not kept)\n",
				r->af.path, strerror(r->write_errno));
			dmr_afile_abort(&r->af);
		} else if (dmr_afile_commit(&r->af, &err) != DMR_OK) {
			fprintf(stderr, "dmreplay: record: %s\n", err.msg);
		}
	}
	free(r->w);
	pthread_mutex_destroy(&r->mu);
	dmr_be_close(r->in);
	free(r);
}

static dmr_status_t rec_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	const char *pre = DMR_RECORD_PREFIX;
	size_t np = strlen(pre);
	if (!cfg->backend || strncmp(cfg->backend, pre, np) != 0 || !cfg->backend[np])
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "backend '%s': the recording wrapper is named record:INNER "
				   "(e.g. record:shm)",
				   cfg->backend ? cfg->backend : "(none)");
	const char *inner = cfg->backend + np;
	if (!strncmp(inner, pre, np))
		return dmr_err_set(err, DMR_ERR_INVALID, "backend '%s': one recording wrapper only",
				   cfg->backend);
	const uint16_t one = 1;
	if (*(const uint8_t *)&one != 1)
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "backend %s: recordings are little-endian; this host is not",
				   cfg->backend);
	rec_t *r = calloc(1, sizeof(*r));
	if (!r)
		return dmr_err_set(err, DMR_ERR_NOMEM, "record: out of memory");
	pthread_mutex_init(&r->mu, NULL);
	dmr_be_config_t icfg = *cfg;
	icfg.backend = inner;
	dmr_status_t st = dmr_be_open(&icfg, &r->in, err);
	if (st != DMR_OK) {
		pthread_mutex_destroy(&r->mu);
		free(r);
		return st;
	}
	const char *path = getenv("DMR_RECORD");
	if (!path || !*path)
		path = DMR_RECORD_DEFAULT;
	r->nworkers = cfg->cns * cfg->workers;
	r->w = calloc(r->nworkers ? r->nworkers : 1, sizeof(*r->w));
	if (!r->w) {
		rec_close(&r->be);
		return dmr_err_set(err, DMR_ERR_NOMEM, "record: out of memory");
	}
	for (uint32_t i = 0; i < r->nworkers; i++)
		if (!(r->w[i].buf = malloc((size_t)BUF_RECORDS * DMR_REC_RECORD_BYTES))) {
			free(r->w);
			r->w = NULL;
			rec_close(&r->be);
			return dmr_err_set(err, DMR_ERR_NOMEM, "record: out of memory");
		}
	/* the recording is renamed over path at close, where a failure can only
	 * be printed (close returns nothing): what would make the rename fail
	 * is refused now, before the run */
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "record: DMR_RECORD=%s is a directory or not a regular file: "
				 "the recording could not be written there",
				 path);
	else
		st = dmr_afile_open(&r->af, path, err);
	if (st != DMR_OK) {
		for (uint32_t i = 0; i < r->nworkers; i++)
			free(r->w[i].buf);
		free(r->w);
		r->w = NULL;
		rec_close(&r->be);
		return st;
	}
	uint8_t h[DMR_REC_HEADER_BYTES] = {0};
	memcpy(h, DMR_REC_MAGIC, 8);
	put32(h + 8, DMR_REC_VERSION);
	put32(h + 12, DMR_REC_HEADER_BYTES);
	put32(h + 16, DMR_REC_RECORD_BYTES);
	put32(h + 20, cfg->mns);
	put32(h + 24, cfg->cns);
	put32(h + 28, cfg->workers);
	put64(h + 32, cfg->mr_size);
	strncpy((char *)h + 40, inner, 23);
	r->hash = DMR_REC_FNV_BASIS;
	emit_locked(r, h, sizeof(h), 0);
	/* the caps follow the inner backend's (backend.h, as backends/fault) */
	r->table = dmr_record_ops;
	/* not DMR_BE_CAP_RPC: the wrapper does not wrap dmr_be_rpc */
	r->table.caps = r->in->ops->caps & ~DMR_BE_CAP_RPC;
	r->be.ops = &r->table;
	r->be.cfg = *cfg;
	*be_p = &r->be;
	return DMR_OK;
}

static dmr_status_t rec_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			       dmr_err_t *err)
{
	return to_r(be)->in->ops->mr_reg(to_r(be)->in, worker, addr, len, err);
}

static dmr_status_t rec_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err)
{
	return to_r(be)->in->ops->mr_dereg(to_r(be)->in, worker, addr, err);
}

static dmr_status_t rec_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			     uint32_t n, dmr_err_t *err)
{
	rec_t *r = to_r(be);
	uint64_t t = dmr_be_now(r->in, worker);
	dmr_status_t st = dmr_be_post(r->in, worker, mn, wrs, n, err);
	if (st != DMR_OK)
		return st; /* no completion will come: nothing to log */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t f = (wrs[i].flags & DMR_WR_SIGNALED ? DMR_REC_F_SIGNALED : 0) |
			    (i ? DMR_REC_F_CONT : 0);
		append(r, worker, DMR_REC_POST, wrs[i].opcode, f, mn, wrs[i].length, wrs[i].remote,
		       t, wrs[i].wr_id);
	}
	return DMR_OK;
}

static int rec_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	rec_t *r = to_r(be);
	int n = dmr_be_poll(r->in, worker, wcs, max);
	if (n <= 0)
		return n;
	uint64_t t = dmr_be_now(r->in, worker);
	for (int i = 0; i < n; i++)
		if (wcs[i].opcode != DMR_WR_TIMER)
			append(r, worker, DMR_REC_COMPLETION, wcs[i].opcode, wcs[i].status,
			       wcs[i].mn, wcs[i].byte_len, 0, t, wcs[i].wr_id);
	return n;
}

static uint64_t rec_now(dmr_be_t *be, uint32_t worker)
{
	return dmr_be_now(to_r(be)->in, worker);
}

static dmr_status_t rec_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	return dmr_be_timer(to_r(be)->in, worker, at_ps, wr_id);
}

static dmr_status_t rec_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
				dmr_err_t *err)
{
	return dmr_be_barrier(to_r(be)->in, b, sum_p, err);
}

static int rec_progress(dmr_be_t *be, uint64_t until_ps)
{
	return dmr_be_progress(to_r(be)->in, until_ps);
}

static void *rec_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	return dmr_be_mn_memory(to_r(be)->in, mn, len_p);
}

static void rec_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	dmr_be_stats(to_r(be)->in, st);
}

static void rec_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	dmr_be_charge(to_r(be)->in, worker, ps);
}

static dmr_status_t rec_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	/* streams: the inner backend would post and poll past this wrapper */
	if (op == DMR_BE_CTL_STREAMS)
		return dmr_be_ctl_unsupported(be, op, err);
	return dmr_be_control(to_r(be)->in, op, arg, err);
}

const dmr_be_ops_t dmr_record_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "record",
    .caps = 0, /* per handle: the inner backend's (rec_open) */
    .open = rec_open,
    .close = rec_close,
    .mr_reg = rec_mr_reg,
    .mr_dereg = rec_mr_dereg,
    .post = rec_post,
    .poll = rec_poll,
    .now = rec_now,
    .timer = rec_timer,
    .barrier = rec_barrier,
    .progress = rec_progress,
    .mn_memory = rec_mn_memory,
    .stats = rec_stats,
    .charge = rec_charge,
    .control = rec_control,
};
