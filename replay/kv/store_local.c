/*
 * replay/kv/store_local.c - the key/value store and its clients in one
 * process (sim, shm, verbs loopback), and the replay of a kvops trace
 * against it with a reference model (replay/kvstore.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "../../traces/kvops.h"
#include "../kvstore.h"

/* the trace layer cannot include core/kv: its copies of the limits */
_Static_assert(DMR_KVOPS_KEY_MAX == DMR_KV_KEY_MAX, "kvops key limit = the store's");
_Static_assert(DMR_KVOPS_VALUE_MAX == DMR_KV_VALUE_LIMIT, "kvops value limit = the store's");

static dmr_status_t serve_inline(void *arg, dmr_err_t *err)
{
	dmr_kv_local_t *L = arg;
	dmr_status_t st = dmr_kv_master_serve(&L->m, NULL);
	if (st != DMR_OK)
		dmr_err_set(err, st, "%s", L->m.err.msg);
	return st;
}

dmr_status_t dmr_kv_local_open(dmr_kv_local_t *L, const dmr_kv_local_opts_t *o, dmr_err_t *err)
{
	memset(L, 0, sizeof(*L));
	L->nc = o->clients ? o->clients : 1;
	uint64_t block = o->block ? o->block : DMR_KV_STORE_BLOCK;
	uint64_t cap = o->capacity ? o->capacity : DMR_KV_STORE_CAPACITY, logical;
	dmr_kv_pool_cfg_t pc = {.segments = 1,
				.block = block,
				.capacity = cap,
				.high_water = 1.0,
				.low_water = 1.0,
				.placement = DMR_KV_PLACE_RR,
				.name = "kv store",
				.block_from = "--block-bytes, default 1M"};
	dmr_status_t st = dmr_kv_pool_init(&L->pool, &pc, &logical, err);
	if (st != DMR_OK)
		return st;
	uint64_t nslots;
	if (dmr_kv_layout(L->nc, 1, L->pool.seg[0].nslots, L->pool.seg_stride, &L->lay, &nslots))
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "kv store: --capacity %" PRIu64 " overflows the region's layout",
				   cap);
	uint64_t vmax = dmr_kv_store_val_max(&L->pool, o->val_max);
	if (o->val_max && o->val_max > vmax)
		return dmr_err_set(
		    err, DMR_ERR_RANGE,
		    "kv store: --max-value %" PRIu64 " is above what the pool can "
		    "hold in one value: %" PRIu64 " bytes (min(%u blocks, the pool's "
		    "%" PRIu64 " slots) x %" PRIu64 " bytes)",
		    o->val_max, vmax, DMR_KV_VAL_BLOCKS_MAX, L->pool.cap_slots, block);
	dmr_be_config_t cfg = {.backend = o->backend,
			       .mns = 1,
			       .cns = 1,
			       .workers = L->nc,
			       .mr_size = L->lay.region,
			       .seed = o->seed ? o->seed : 1,
			       .profile = o->profile,
			       .device = o->device,
			       .port = o->port,
			       .gid_index = o->gid_index};
	if ((st = dmr_be_open(&cfg, &L->be, err)) != DMR_OK)
		return st;
	uint64_t memlen = 0;
	uint8_t *mem = dmr_be_mn_memory(L->be, 0, &memlen);
	if (!mem || memlen < L->lay.region)
		return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
				   "backend %s: the MN region is not local memory: run the store "
				   "as `dmreplay kv mn --config C`",
				   o->backend);
	if ((st = dmr_kv_store_init(&L->store, &L->pool, L->lay.pool_base, vmax, err)) != DMR_OK ||
	    (st = dmr_kv_master_init(&L->m, &L->pool, L->nc, "kv", err)) != DMR_OK)
		return st;
	L->m.store = &L->store;
	L->m.mem = mem;
	L->m.lay = L->lay;
	L->m.deadline_ps = dmr_ps_from_s(o->timeout_s > 0 ? o->timeout_s : 30);
	L->m.be = L->be;
	L->m.stop = &L->stop;
	L->g = (dmr_kv_store_geom_t){.version = 1,
				     .clients = L->nc,
				     .block_bytes = block,
				     .slots = L->pool.cap_slots,
				     .val_max = vmax,
				     .pool_base = L->lay.pool_base,
				     .region = L->lay.region};
	dmr_kv_master_region_store(&L->m, &L->g);
	L->threaded = !(L->be->ops->caps & DMR_BE_CAP_DRIVEN);
	if (L->threaded && (st = dmr_kv_master_start(&L->m, "kv", err)) != DMR_OK)
		return st;
	if (!(L->cli = calloc(L->nc, sizeof(*L->cli))))
		return dmr_err_set(err, DMR_ERR_NOMEM, "kv: out of memory");
	for (uint32_t i = 0; i < L->nc; i++) {
		dmr_kv_cli_cfg_t cc = {.be = L->be,
				       .worker = i,
				       .client = i,
				       .chunk = o->chunk,
				       .depth = o->depth,
				       .timeout_s = o->timeout_s,
				       .serve = L->threaded ? NULL : serve_inline,
				       .serve_arg = L};
		if ((st = dmr_kv_cli_open(&L->cli[i], &cc, err)) != DMR_OK)
			return st;
	}
	return DMR_OK;
}

void dmr_kv_local_close(dmr_kv_local_t *L)
{
	__atomic_store_n(&L->stop, 1, __ATOMIC_RELAXED);
	dmr_kv_master_join(&L->m);
	for (uint32_t i = 0; L->cli && i < L->nc; i++)
		if (L->cli[i].cfg.be)
			dmr_kv_cli_close(&L->cli[i]);
	free(L->cli);
	dmr_be_close(L->be);
	dmr_kv_master_fini(&L->m);
	dmr_kv_store_fini(&L->store);
	dmr_kv_pool_fini(&L->pool);
	memset(L, 0, sizeof(*L));
}

dmr_status_t dmr_kv_local_state(dmr_kv_local_t *L, uint64_t *blocks_p, uint64_t *keys_p,
				dmr_err_t *err)
{
	if (L->threaded) {
		__atomic_store_n(&L->stop, 1, __ATOMIC_RELAXED);
		dmr_kv_master_join(&L->m);
		if (L->m.st != DMR_OK)
			return dmr_err_set(err, L->m.st, "%s", L->m.err.msg);
	}
	*blocks_p = L->pool.used;
	*keys_p = L->store.keys;
	if (!L->threaded)
		return DMR_OK;
	__atomic_store_n(&L->stop, 0, __ATOMIC_RELAXED);
	return dmr_kv_master_start(&L->m, "kv", err);
}

uint64_t dmr_kv_local_now(dmr_kv_local_t *L, uint32_t i)
{
	return dmr_be_now(L->be, i);
}

/* ---- the reference model: key -> the set row of its value ------------- */

typedef struct model_ent {
	char key[DMR_KVOPS_KEY_MAX + 1];
	uint64_t row, len; /* row + 1; 0 = absent */
} model_ent_t;

typedef struct model {
	model_ent_t *e;
	uint64_t mask, n;
} model_t;

static uint64_t mhash(const char *k, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)k[i]) * 0x100000001b3ull;
	return dmr_mix64(h);
}

/* The entry of key (created absent when new); NULL when out of memory. */
static model_ent_t *model_at(model_t *m, const char *k, uint32_t n)
{
	if (!m->e || (m->n + 1) * 2 > m->mask + 1) {
		uint64_t cap = m->e ? (m->mask + 1) * 2 : 1024;
		model_ent_t *ne = calloc(cap, sizeof(*ne));
		if (!ne)
			return NULL;
		for (uint64_t i = 0; m->e && i <= m->mask; i++)
			if (m->e[i].key[0]) {
				uint64_t h =
				    mhash(m->e[i].key, (uint32_t)strlen(m->e[i].key)) & (cap - 1);
				while (ne[h].key[0])
					h = (h + 1) & (cap - 1);
				ne[h] = m->e[i];
			}
		free(m->e);
		m->e = ne;
		m->mask = cap - 1;
	}
	uint64_t h = mhash(k, n) & m->mask;
	while (m->e[h].key[0] && !(strlen(m->e[h].key) == n && !memcmp(m->e[h].key, k, n)))
		h = (h + 1) & m->mask;
	if (!m->e[h].key[0]) {
		memcpy(m->e[h].key, k, n);
		m->e[h].key[n] = 0;
		m->n++;
	}
	return &m->e[h];
}

/* ---- latencies ---------------------------------------------------------- */

typedef struct lat {
	double *v;
	size_t n, cap;
} lat_t;

static int lat_add(lat_t *l, double us)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 1024;
		double *v = realloc(l->v, c * sizeof(double));
		if (!v)
			return -1;
		l->v = v;
		l->cap = c;
	}
	l->v[l->n++] = us;
	return 0;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void lat_fill(lat_t *l, double *p50, double *p99, double *mean)
{
	*p50 = *p99 = *mean = 0;
	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(double), dcmp);
	double s = 0;
	for (size_t i = 0; i < l->n; i++)
		s += l->v[i];
	*mean = s / (double)l->n;
	/* nearest rank: the smallest value with at least p of the samples */
	size_t i50 = (size_t)((double)l->n * 0.50 + 0.999999999),
	       i99 = (size_t)((double)l->n * 0.99 + 0.999999999);
	*p50 = l->v[(i50 ? i50 : 1) - 1];
	*p99 = l->v[(i99 ? i99 : 1) - 1];
}

/* ---- the replay ---------------------------------------------------------- */

static dmr_status_t verify_get(const dmr_kvops_row_t *row, const char *trace, model_t *M,
			       const dmr_kv_value_t *out, dmr_kv_ops_result_t *r, dmr_err_t *err)
{
	for (uint32_t k = 0; k < row->nkeys; k++) {
		model_ent_t *e = model_at(M, row->key[k], row->klen[k]);
		if (!e)
			return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory (model)");
		int found = out[k].st == DMR_OK;
		if (found != (e->row != 0))
			return dmr_err_set(err, DMR_ERR_VERIFY,
					   "%s:%" PRIu64 ": get of key '%s': the store %s, the "
					   "reference model %s",
					   trace, row->line, e->key, found ? "found it" : "did not",
					   e->row ? "has it" : "does not");
		if (!found) {
			r->misses++;
			continue;
		}
		r->hits++;
		uint64_t badb = 0;
		if (out[k].len != e->len ||
		    !dmr_kvops_check(e->row - 1, out[k].data, out[k].len, &badb))
			return dmr_err_set(
			    err, DMR_ERR_VERIFY,
			    "%s:%" PRIu64 ": get of key '%s': %" PRIu64 " bytes, byte %" PRIu64
			    " differs from the value the set "
			    "of data row %" PRIu64 " wrote (%" PRIu64 " bytes)",
			    trace, row->line, e->key, out[k].len, badb, e->row - 1, e->len);
		r->checked += out[k].len;
		r->bytes_got += out[k].len;
	}
	return DMR_OK;
}

static dmr_status_t write_summary(const char *dir, const char *trace, const char *backend,
				  const dmr_kv_ops_result_t *r, dmr_err_t *err)
{
	dmr_status_t st = dmr_mkdir_p(dir, 0, err);
	if (st != DMR_OK)
		return st;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir,
		 r->partial ? "summary.partial.csv" : "summary.csv");
	dmr_afile_t af;
	if ((st = dmr_afile_open(&af, path, err)) != DMR_OK)
		return st;
	fprintf(af.f, "workload,trace,backend,status,ops,sets,gets,dels,keys_got,hits,misses,"
		      "sets_refused,dels_missing,bytes_set,bytes_got,bytes_checked,"
		      "set_p50_us,set_p99_us,get_p50_us,get_p99_us,del_p50_us,del_p99_us,"
		      "time_s,wall_s\n");
	fprintf(af.f,
		"kvops,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6f,%.3f\n",
		trace, backend, r->partial ? "partial" : "complete", r->ops, r->sets, r->gets,
		r->dels, r->keys_got, r->hits, r->misses, r->sets_refused, r->dels_missing,
		r->bytes_set, r->bytes_got, r->checked, r->p50_us[1], r->p99_us[1], r->p50_us[2],
		r->p99_us[2], r->p50_us[3], r->p99_us[3], r->time_s, r->wall_s);
	return dmr_afile_commit(&af, err);
}

static dmr_status_t replay_rows(dmr_kv_local_t *L, dmr_kvops_reader_t *rd, const char *trace,
				model_t *M, lat_t *lat, dmr_kv_ops_result_t *r, uint64_t *t_first,
				dmr_err_t *err)
{
	dmr_kv_cli_t *c = &L->cli[0];
	uint8_t *buf = NULL;
	uint64_t bufcap = 0;
	dmr_kvops_row_t row;
	dmr_status_t st;
	while ((st = dmr_kvops_next(rd, &row, err)) == DMR_OK) {
		if (dmr_sig_caught()) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d: results so far are "
					 "partial",
					 dmr_sig_caught());
			break;
		}
		uint64_t t0 = dmr_kv_local_now(L, 0);
		if (!r->ops)
			*t_first = t0;
		if (row.op == DMR_KVOPS_SET) {
			if (row.bytes > bufcap) {
				free(buf);
				bufcap = row.bytes;
				if (!(buf = malloc(bufcap))) {
					st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
					break;
				}
			}
			dmr_kvops_fill(row.index, buf, row.bytes);
			dmr_err_t e2;
			st = dmr_kv_set(c, row.key[0], row.klen[0], buf, row.bytes, &e2);
			model_ent_t *e = model_at(M, row.key[0], row.klen[0]);
			if (!e) {
				st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory (model)");
				break;
			}
			if (st == DMR_ERR_FULL) {
				r->sets_refused++; /* the old value stays, in the model too */
				st = DMR_OK;
			} else if (st != DMR_OK) {
				dmr_err_set(err, st, "%s:%" PRIu64 ": %s", trace, row.line, e2.msg);
				break;
			} else {
				e->row = row.index + 1;
				e->len = row.bytes;
				r->bytes_set += row.bytes;
			}
			r->sets++;
		} else if (row.op == DMR_KVOPS_GET) {
			const void *keys[DMR_KVOPS_MAX_GET];
			uint64_t klens[DMR_KVOPS_MAX_GET];
			dmr_kv_value_t out[DMR_KVOPS_MAX_GET];
			for (uint32_t k = 0; k < row.nkeys; k++) {
				keys[k] = row.key[k];
				klens[k] = row.klen[k];
			}
			dmr_err_t e2;
			st = dmr_kv_get(c, row.nkeys, keys, klens, out, &e2);
			if (st != DMR_OK && st != DMR_ERR_NOTFOUND) {
				dmr_err_set(err, st, "%s:%" PRIu64 ": %s", trace, row.line, e2.msg);
				break;
			}
			st = verify_get(&row, trace, M, out, r, err);
			dmr_kv_values_free(out, row.nkeys);
			if (st != DMR_OK)
				break;
			r->gets++;
			r->keys_got += row.nkeys;
		} else {
			dmr_err_t e2;
			st = dmr_kv_del(c, row.key[0], row.klen[0], &e2);
			model_ent_t *e = model_at(M, row.key[0], row.klen[0]);
			if (!e) {
				st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory (model)");
				break;
			}
			if ((st == DMR_OK) != (e->row != 0) ||
			    (st != DMR_OK && st != DMR_ERR_NOTFOUND)) {
				if (st == DMR_OK || st == DMR_ERR_NOTFOUND)
					st = dmr_err_set(err, DMR_ERR_VERIFY,
							 "%s:%" PRIu64
							 ": del of key '%s': the store "
							 "%s, the reference model %s",
							 trace, row.line, e->key,
							 st == DMR_OK ? "had it" : "did not",
							 e->row ? "has it" : "does not");
				else
					dmr_err_set(err, st, "%s:%" PRIu64 ": %s", trace, row.line,
						    e2.msg);
				break;
			}
			if (st == DMR_ERR_NOTFOUND)
				r->dels_missing++;
			st = DMR_OK;
			e->row = 0;
			e->len = 0;
			r->dels++;
		}
		r->ops++;
		if (lat_add(&lat[row.op], dmr_ps_to_us(dmr_kv_local_now(L, 0) - t0)) != 0) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			break;
		}
	}
	free(buf);
	return st == DMR_EOF ? DMR_OK : st;
}

dmr_status_t dmr_kv_ops_run(const char *trace, const dmr_kv_local_opts_t *o, const char *out_dir,
			    dmr_kv_ops_result_t *r, dmr_err_t *err)
{
	memset(r, 0, sizeof(*r));
	double w0 = dmr_wall_s();
	dmr_kvops_reader_t *rd = NULL;
	dmr_status_t st = dmr_kvops_open(trace, &rd, err);
	if (st != DMR_OK)
		return st;
	dmr_kv_local_opts_t lo = *o;
	lo.clients = 1;
	if (!lo.val_max)
		lo.val_max = dmr_kvops_value_max(rd);
	dmr_kv_local_t L;
	model_t M = {0};
	lat_t lat[4] = {{0}};
	uint64_t t_first = 0;
	if ((st = dmr_kv_local_open(&L, &lo, err)) != DMR_OK)
		goto out;
	/* set up: out_dir made now, and the caller's last word before the run
	 * writes into it (kv run: an earlier run's files moved aside) */
	if (out_dir && (st = dmr_mkdir_p(out_dir, DMR_FS_PROBE, err)) != DMR_OK)
		goto out;
	if (o->on_start && (st = o->on_start(o->on_start_arg, err)) != DMR_OK)
		goto out;
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	st = replay_rows(&L, rd, trace, &M, lat, r, &t_first, err);
	dmr_sig_restore(&saved);
	r->time_s = dmr_ps_to_s(dmr_kv_local_now(&L, 0) - t_first);
out:
	dmr_kv_local_close(&L);
	dmr_kvops_close(rd);
	for (int i = 1; i < 4; i++) {
		lat_fill(&lat[i], &r->p50_us[i], &r->p99_us[i], &r->mean_us[i]);
		free(lat[i].v);
	}
	free(M.e);
	r->wall_s = dmr_wall_s() - w0;
	r->partial = st != DMR_OK;
	if (out_dir && r->ops) {
		dmr_err_t werr;
		if (write_summary(out_dir, trace, o->backend, r, &werr) != DMR_OK && st == DMR_OK)
			st = dmr_err_set(err, DMR_ERR_WRITE, "%s", werr.msg);
	}
	return st;
}

void dmr_kv_ops_print(const char *trace, const dmr_kv_local_opts_t *o, const dmr_kv_ops_result_t *r,
		      FILE *f)
{
	fprintf(f,
		"dmreplay kv: %s on %s: %" PRIu64 " ops (%" PRIu64 " set, %" PRIu64 " get, %" PRIu64
		" del)%s\n",
		trace, o->backend, r->ops, r->sets, r->gets, r->dels,
		r->partial ? " [partial]" : "");
	fprintf(f,
		"  gets: %" PRIu64 " keys, %" PRIu64 " hits, %" PRIu64 " misses; every value "
		"checked byte for byte against the reference model (%" PRIu64 " bytes)\n",
		r->keys_got, r->hits, r->misses, r->checked);
	fprintf(f,
		"  bytes set %" PRIu64 ", got %" PRIu64 "; sets refused (pool full) %" PRIu64
		"; dels of absent keys %" PRIu64 "\n",
		r->bytes_set, r->bytes_got, r->sets_refused, r->dels_missing);
	static const char *nm[4] = {"", "set", "get", "del"};
	for (int i = 1; i < 4; i++)
		fprintf(f, "  %s latency: p50 %.2f us, p99 %.2f us, mean %.2f us\n", nm[i],
			r->p50_us[i], r->p99_us[i], r->mean_us[i]);
	fprintf(f, "  %s time %.6f s, wall %.2f s\n",
		(o->backend && strcmp(o->backend, "sim") == 0) ? "simulated" : "measured",
		r->time_s, r->wall_s);
}
