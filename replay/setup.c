/*
 * replay/setup.c - a run's shape, checked and laid out before anything is
 * opened (dmr_replay_run's first step after the trace): the layout, FORD's
 * placement and the config's pins, the hash index and the CN address
 * caches, the footprint against --mr-size and this machine's memory, and
 * the contexts' memory (issue #15 D14).
 */
#include "setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../core/addrcache.h"
#include "../core/base/opt.h"
#include "../core/base/timeps.h"
#include "../core/base/wrid.h"
#include "../core/txn.h"
#include "../core/txn_cncache.h"
#include "../core/txn_crest.h"
#include "../models/model.h"

static uint64_t phys_mem(void)
{
	return dmr_phys_mem(); /* core/base/opt.h: bench and calibrate check the same */
}

/* What the engine allocates for nctx transaction contexts driven by nth
 * threads, bytes: per context the core's context (core/txn.h: the doorbell
 * of 2 x DMR_TRACE_MAX_OPS + 2 WRs, the 4 KiB record buffer and 4 KiB log
 * buffer dmr_txn_ctx_init allocates first) and its current-transaction
 * slot, per driving thread three lists of nctx indices (thr_init). A lower
 * bound: the buffers grow with the transactions. */
static uint64_t ctx_bytes(uint64_t nctx, uint64_t nth)
{
	uint64_t per = sizeof(dmr_txn_ctx_t) + (2 * DMR_TRACE_MAX_OPS + 2) * sizeof(dmr_wr_t) +
		       2 * 4096 + sizeof(void *);
	return nctx * per + nth * (4 * nctx + 1) * sizeof(uint32_t);
}

dmr_status_t dmr_replay_setup_layout(const dmr_replay_shape_t *o, const dmr_trace_hdr_t *h,
				     uint32_t nworkers, dmr_layout_t *l, dmr_replay_result_t *res,
				     uint64_t *mr_p, dmr_err_t *err)
{
	dmr_status_t st;
	st = dmr_layout_init(l, h, nworkers, dmr_layout_log_bytes(h), err);
	if (st == DMR_OK && o->protocol == DMR_TXN_PROTO_MOTOR) {
		/* Motor's txn/flags.h: "BACKUP_NUM 2 // Backup memory node
		 * number. **NOT** 0" */
		if (o->backups < 1)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "--protocol motor needs --backups >= 1 (Motor commits "
					   "each version to its primary and its backups; its "
					   "BACKUP_NUM is never 0), got --backups %u",
					   o->backups);
		st = dmr_layout_cvt(l, o->versions ? o->versions : DMR_CVT_VCELLS, err);
	}
	if (st == DMR_OK)
		st = dmr_layout_place(l, o->mns ? o->mns : 1, o->backups, err);
	for (uint32_t i = 0; st == DMR_OK && i < o->npins; i++)
		st = dmr_layout_pin(l, &o->pins[i], err);
	if (st != DMR_OK)
		return st;
	res->mns = l->mns;
	res->backups = l->backups;
	snprintf(res->protocol, sizeof(res->protocol), "%s", dmr_txn_protocol_name(o->protocol));
	snprintf(res->index, sizeof(res->index), "%s",
		 o->index == DMR_TXN_INDEX_HASH ? "hash" : "direct");
	res->addr_cache = o->addr_cache;
	if (o->index != DMR_TXN_INDEX_HASH && o->index_buckets) {
		st = dmr_err_set(err, DMR_ERR_RANGE, "--index-buckets %llu: only with --index hash",
				 (unsigned long long)o->index_buckets);
		return st;
	}
	if (o->index == DMR_TXN_INDEX_HASH &&
	    (st = dmr_layout_index(l, o->index_buckets, err)) != DMR_OK)
		return st; /* a table with more keys than slots, named */
	if (o->index == DMR_TXN_INDEX_HASH && o->index_buckets && l->total > phys_mem())
		return dmr_err_set(
		    err, DMR_ERR_RANGE,
		    "--index-buckets %llu: the index makes the footprint %llu bytes, "
		    "more than this machine's memory (%llu bytes)",
		    (unsigned long long)o->index_buckets, (unsigned long long)l->total,
		    (unsigned long long)phys_mem());
	if (o->addr_cache) {
		/* the CNs' address caches, against this machine's memory */
		uint64_t per = dmr_acache_bytes(o->addr_cache);
		if (o->index != DMR_TXN_INDEX_HASH) {
			st = dmr_err_set(err, DMR_ERR_RANGE,
					 "--addr-cache %llu: only with --index hash (direct "
					 "addressing looks nothing up)",
					 (unsigned long long)o->addr_cache);
			return st;
		}
		if (per > phys_mem() / o->cns) {
			st = dmr_err_set(err, DMR_ERR_RANGE,
					 "--addr-cache %llu: %llu bytes per CN x %u CNs is more "
					 "than this machine's memory (%llu bytes)",
					 (unsigned long long)o->addr_cache, (unsigned long long)per,
					 o->cns, (unsigned long long)phys_mem());
			return st;
		}
	}
	if (o->cell_words && (st = dmr_layout_cells(l, o->cell_words, err)) != DMR_OK)
		return st;
	if (o->locks_apart &&
	    (st = dmr_replay_setup_locks_apart(l, o->locks_apart, o->locks_apart_opt, o->protocol,
					       err)) != DMR_OK)
		return st;
	dmr_layout_placement(l, res->placement, sizeof(res->placement));
	if (!o->quiet && (l->mns > 1 || o->protocol != DMR_TXN_PROTO_OCC))
		fprintf(stderr, "dmreplay run: protocol %s, placement %s\n", res->protocol,
			res->placement);
	uint64_t mr = o->mr_size ? o->mr_size : (l->total + 4095) & ~4095ull;
	if (l->total > mr) {
		st = dmr_err_set(err, DMR_ERR_RANGE,
				 "%s: footprint %llu bytes (%.1f MiB: tables + %u log rings) is "
				 "larger than --mr-size %llu bytes",
				 o->trace, (unsigned long long)l->total, l->total / 1048576.0,
				 nworkers, (unsigned long long)mr);
		return st;
	}
	if (l->total > phys_mem()) {
		st = dmr_err_set(err, DMR_ERR_RANGE,
				 "%s: footprint %llu bytes is larger than this machine's memory "
				 "(%llu bytes)",
				 o->trace, (unsigned long long)l->total,
				 (unsigned long long)phys_mem());
		return st;
	}
	{
		/* the contexts' memory, checked before allocating it: --coros
		 * 100000 said "out of memory" naming nothing (issue #15 D14) */
		uint64_t nctx = (uint64_t)nworkers * o->coros;
		int thr = strcmp(o->backend, "sim") != 0;
		uint64_t cb = ctx_bytes(nctx, thr ? nworkers : 1);
		if (nctx > (uint64_t)DMR_WRID_INDEX_MAX + 1 || cb + l->total > phys_mem()) {
			st = dmr_err_set(
			    err, DMR_ERR_RANGE,
			    "option --coros %u: %llu transaction contexts (--cns %u x --threads "
			    "%u x --coros %u) need at least %llu bytes (%.1f GiB) besides the "
			    "%llu-byte footprint; this machine has %llu bytes%s",
			    o->coros, (unsigned long long)nctx, o->cns, o->threads, o->coros,
			    (unsigned long long)cb, cb / 1073741824.0, (unsigned long long)l->total,
			    (unsigned long long)phys_mem(),
			    nctx > (uint64_t)DMR_WRID_INDEX_MAX + 1 ? " (and a wr_id names at most "
								      "2^28 contexts)"
								    : "");
			return st;
		}
	}
	res->footprint = l->total;
	*mr_p = mr;
	return DMR_OK;
}

/* The comma-separated tables of list into sel[t] (1: named); `opt` names
 * the option in errors. */
static dmr_status_t table_select(const dmr_layout_t *l, const char *list, const char *opt,
				 uint8_t sel[DMR_TRACE_MAX_TABLES], dmr_err_t *err)
{
	memset(sel, 0, DMR_TRACE_MAX_TABLES);
	char names[512] = "";
	size_t off = 0;
	for (uint32_t t = 0; t < l->ntables && off < sizeof(names); t++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", t ? ", " : "",
					l->names[t]);
	const char *p = list;
	for (;;) {
		size_t n = strcspn(p, ",");
		uint32_t t = 0;
		while (t < l->ntables &&
		       (strlen(l->names[t]) != n || strncmp(l->names[t], p, n) != 0))
			t++;
		if (n == 0 || t == l->ntables)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "option %s: '%.*s' is not a table of the trace "
					   "(tables: %s)",
					   opt, (int)n, p, names);
		if (sel[t])
			return dmr_err_set(err, DMR_ERR_PARSE, "option %s: table %s given twice",
					   opt, l->names[t]);
		sel[t] = 1;
		if (p[n] == 0)
			break;
		p += n + 1;
	}
	return DMR_OK;
}

/* The ranges of the comma-separated tables of list (whole tables); lock
 * bytes: the most any one MN needs, 8 per record of the tables whose
 * primary it holds (lock words live on the primary); `opt` names the
 * option in errors. */
static dmr_status_t table_ranges(const dmr_layout_t *l, const char *list, const char *opt,
				 dmr_be_dm_locks_t *d, dmr_err_t *err)
{
	memset(d, 0, sizeof(*d));
	uint8_t sel[DMR_TRACE_MAX_TABLES];
	dmr_status_t st = table_select(l, list, opt, sel, err);
	if (st != DMR_OK)
		return st;
	uint64_t per_mn[DMR_BE_MAX_MNS] = {0};
	for (uint32_t t = 0; t < l->ntables; t++) {
		if (!sel[t])
			continue;
		d->off[d->n] = l->t[t].base;
		d->len[d->n] = l->t[t].rows * l->t[t].rec_bytes;
		per_mn[l->t[t].primary] += l->t[t].rows * 8; /* locks on the primary */
		d->n++;
	}
	/* the device memory one MN needs: its primaries' lock words */
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++)
		if (per_mn[m] > d->lock_bytes)
			d->lock_bytes = per_mn[m];
	return DMR_OK;
}

dmr_status_t dmr_replay_setup_locks_apart(dmr_layout_t *l, const char *list, const char *opt,
					  int protocol, dmr_err_t *err)
{
	if (protocol != DMR_TXN_PROTO_OCC && protocol != DMR_TXN_PROTO_FORD)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option %s: --protocol %s keeps its lock words in its records "
				   "(lock words apart from their records: occ and ford only)",
				   opt, dmr_txn_protocol_name(protocol));
	uint8_t sel[DMR_TRACE_MAX_TABLES];
	dmr_status_t st = table_select(l, list, opt, sel, err);
	if (st == DMR_OK)
		st = dmr_layout_locks(l, sel, err);
	return st;
}

dmr_status_t dmr_replay_setup_lock_region(struct dmr_be *be, const dmr_layout_t *l, int dm,
					  const char *list, int quiet, dmr_err_t *err)
{
	dmr_be_lock_region_t r = {.off = l->lk_base, .len = l->lk_bytes, .dm = dm};
	dmr_status_t st = dmr_be_control(be, DMR_BE_CTL_LOCK_REGION, &r, err);
	if (st == DMR_ERR_UNSUPPORTED && !dm)
		st = DMR_OK; /* the backend's region holds them, as every other word */
	else if (st == DMR_ERR_UNSUPPORTED)
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "option --dm-locks: backend %s cannot place the lock-word region "
				 "in device memory",
				 be->cfg.backend);
	if (st == DMR_OK && !quiet)
		printf("dmreplay run: lock words of %s apart from their records (%llu bytes per "
		       "MN, in %s memory)\n",
		       list, (unsigned long long)l->lk_bytes, dm ? "device" : "host");
	return st;
}

dmr_status_t dmr_replay_setup_dm_locks(struct dmr_be *be, const dmr_layout_t *l, const char *list,
				       uint64_t *lock_bytes_p, dmr_err_t *err)
{
	dmr_be_dm_locks_t d;
	dmr_status_t st = table_ranges(l, list, "--dm-locks", &d, err);
	if (st != DMR_OK)
		return st;
	st = dmr_be_control(be, DMR_BE_CTL_DM_LOCKS, &d, err);
	if (st == DMR_ERR_UNSUPPORTED) /* not the NIC's: the backend has none */
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "option --dm-locks: backend %s has no NIC device memory (the "
				 "sim models it, verbs refuses naming the device)",
				 be->cfg.backend);
	if (st == DMR_OK && lock_bytes_p)
		*lock_bytes_p = d.lock_bytes;
	return st;
}

dmr_status_t dmr_replay_setup_cxl(struct dmr_be *be, const dmr_layout_t *l, const char *list,
				  uint64_t *bytes_p, dmr_err_t *err)
{
	dmr_be_dm_locks_t d;
	dmr_status_t st = table_ranges(l, list, "--cxl-tables", &d, err);
	if (st != DMR_OK)
		return st;
	st = dmr_be_control(be, DMR_BE_CTL_CXL_TABLES, &d, err);
	if (st == DMR_ERR_UNSUPPORTED)
		st = dmr_err_set(err, DMR_ERR_INVALID,
				 "option --cxl-tables: backend %s has no CXL tier (a what-if of "
				 "the sim: --backend sim with a profile that has cxl_*)",
				 be->cfg.backend);
	uint64_t b = 0;
	for (uint32_t i = 0; i < d.n; i++)
		b += d.len[i];
	if (st == DMR_OK && bytes_p)
		*bytes_p = b;
	return st;
}

dmr_status_t dmr_replay_setup_tiers(struct dmr_be *be, const dmr_layout_t *l, const char *dm_locks,
				    const char *cxl_tables, int rpc, int quiet, dmr_err_t *err)
{
	uint64_t b = 0;
	dmr_status_t st;
	const dmr_model_t *m;
	if (rpc && !(be->ops->caps & DMR_BE_CAP_RPC))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --rpc: backend %s has no RPC path to the MN's CPU (sim, "
				   "shm and verbs have one)",
				   be->ops->name);
	if (rpc) {
		/* mixed: handlers beside one-sided transactions on the same lock
		 * words (half, aura's a1; all on several MNs: a transaction
		 * spanning MNs runs one-sided) */
		dmr_be_rpc_mode_t md = {.mixed = rpc != DMR_TXN_RPC_ON || l->mns > 1};
		dmr_err_t e2;
		st = dmr_be_control(be, DMR_BE_CTL_RPC_MODE, &md, &e2);
		if (st != DMR_OK && st != DMR_ERR_UNSUPPORTED)
			return dmr_err_set(err, DMR_ERR_INVALID, "option %s: %s",
					   rpc == DMR_TXN_RPC_ALT && md.mixed
					       ? "--rpc half or aura's lever a1"
					   : md.mixed ? "--rpc all on several MNs"
						      : "--rpc",
					   e2.msg);
	}
	if (rpc && dmr_be_control(be, DMR_BE_CTL_MODEL, &m, NULL) == DMR_OK && !m->mn_rpc_cores)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --rpc: profile %s (%s) has no MN CPU model for RPCs "
				   "(give mn_rpc_cores, mn_rpc_req_ns and mn_rpc_op_ns)",
				   m->name, m->path);
	if (dm_locks) {
		if ((st = dmr_replay_setup_dm_locks(be, l, dm_locks, &b, err)) != DMR_OK)
			return st;
		if (!quiet)
			printf("dmreplay run: lock words of %s in device memory (%llu bytes on "
			       "the MN that needs most)\n",
			       dm_locks, (unsigned long long)b);
	}
	if (cxl_tables) {
		if ((st = dmr_replay_setup_cxl(be, l, cxl_tables, &b, err)) != DMR_OK)
			return st;
		if (!quiet)
			printf("dmreplay run: %s on the CXL tier (%llu bytes per MN)\n", cxl_tables,
			       (unsigned long long)b);
	}
	return DMR_OK;
}

dmr_status_t dmr_replay_setup_crest(const char *backend, int locks, int local, int cache,
				    uint64_t ttl_ps, const dmr_trace_hdr_t *h, const char *trace,
				    dmr_crest_t *cr, dmr_replay_result_t *res, dmr_err_t *err)
{
	/* the cells from the trace; masked CAS where the backend has it
	 * (DMR_BE_CAP_MASKED_CAS, asked before opening it: the words variant
	 * needs room in the MN region), else the portable words */
	int masked = (dmr_be_caps_of(backend) & DMR_BE_CAP_MASKED_CAS) != 0;
	if (locks == DMR_CREST_LOCKS_MASKED && !masked)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --crest-locks masked: backend %s has no masked "
				   "compare-and-swap (upstream rdma-core has none); use "
				   "--crest-locks words",
				   backend);
	cr->locks = locks >= 0 ? locks : masked ? DMR_CREST_LOCKS_MASKED : DMR_CREST_LOCKS_WORDS;
	dmr_status_t st = dmr_crest_init(cr, h, trace, err);
	if (st != DMR_OK)
		return st;
	res->crest_local = local;
	res->crest_cache = cache;
	cr->cache_ttl_ps = ttl_ps;
	res->crest_cache_ttl_ps = ttl_ps ? ttl_ps : DMR_CREST_CACHE_TTL_PS;
	snprintf(res->crest_locks, sizeof(res->crest_locks), "%s",
		 cr->locks == DMR_CREST_LOCKS_MASKED ? "masked" : "words");
	return DMR_OK;
}

/* The mask of --cn-cache's list (not NULL, not "none") over h's tables,
 * the names in res->cn_cache. */
static dmr_status_t cncache_mask(const char *list, const dmr_trace_hdr_t *h, uint32_t *mask_p,
				 dmr_replay_result_t *res, dmr_err_t *err)
{
	uint32_t mask = 0;
	char names[512] = "";
	size_t off = 0;
	for (uint32_t t = 0; t < h->ntables && off < sizeof(names); t++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", t ? ", " : "",
					h->tables[t].name);
	if (strcmp(list, "all") == 0) {
		mask = h->ntables >= 32 ? ~0u : (1u << h->ntables) - 1;
	} else {
		for (const char *p = list;;) {
			size_t n = strcspn(p, ",");
			uint32_t t = 0;
			while (t < h->ntables && (strlen(h->tables[t].name) != n ||
						  strncmp(h->tables[t].name, p, n) != 0))
				t++;
			if (n == 0 || t == h->ntables)
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "option --cn-cache: '%.*s' is not a table of "
						   "the trace (tables: %s; or all, none)",
						   (int)n, p, names);
			if (mask >> t & 1)
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "option --cn-cache: table %s given twice",
						   h->tables[t].name);
			mask |= 1u << t;
			if (p[n] == 0)
				break;
			p += n + 1;
		}
	}
	off = 0;
	res->cn_cache[0] = 0;
	for (uint32_t t = 0; t < h->ntables && off < sizeof(res->cn_cache); t++)
		if (mask >> t & 1)
			off += (size_t)snprintf(res->cn_cache + off, sizeof(res->cn_cache) - off,
						"%s%s", off ? "," : "", h->tables[t].name);
	*mask_p = mask;
	return DMR_OK;
}

dmr_status_t dmr_replay_setup_cncache(dmr_txn_engine_t *eng, const char *list, uint32_t entries,
				      uint32_t cns, int shared, const dmr_trace_hdr_t *h,
				      dmr_replay_result_t *res, dmr_err_t *err)
{
	if (!list || strcmp(list, "none") == 0)
		return DMR_OK;
	if (eng->protocol == DMR_TXN_PROTO_CREST || eng->protocol == DMR_TXN_PROTO_MOTOR)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "option --cn-cache: not with --protocol %s (%s)",
				   dmr_txn_protocol_name(eng->protocol),
				   eng->protocol == DMR_TXN_PROTO_CREST
				       ? "it has its own CN record cache: --crest-cache"
				       : "its reads pick a version by timestamp");
	uint32_t mask;
	dmr_status_t st = cncache_mask(list, h, &mask, res, err);
	if (st != DMR_OK)
		return st;
	if (!entries)
		entries = DMR_CNCACHE_DEFAULT_ENTRIES;
	if (entries > DMR_CNCACHE_MAX_ENTRIES)
		return dmr_err_set(err, DMR_ERR_RANGE, "option --cn-cache-entries %u: 1..%u",
				   entries, DMR_CNCACHE_MAX_ENTRIES);
	uint32_t slot = DMR_REC_HDR; /* the largest record: any table may be switched on */
	for (uint32_t t = 0; t < eng->layout->ntables; t++)
		if (eng->layout->t[t].rec_bytes > slot)
			slot = eng->layout->t[t].rec_bytes;
	uint64_t per = dmr_cncache_bytes(entries, slot);
	if (per > phys_mem() / (cns ? cns : 1))
		return dmr_err_set(err, DMR_ERR_RANGE,
				   "option --cn-cache-entries %u: %llu bytes per CN (records of "
				   "%u bytes) x %u CNs is more than this machine's memory (%llu "
				   "bytes)",
				   entries, (unsigned long long)per, slot, cns,
				   (unsigned long long)phys_mem());
	eng->cncache = calloc(cns, sizeof(*eng->cncache));
	if (!eng->cncache)
		return dmr_err_set(err, DMR_ERR_NOMEM, "replay: out of memory");
	for (uint32_t k = 0; k < cns; k++)
		if ((st = dmr_cncache_create(entries, slot, shared, &eng->cncache[k], err)) !=
		    DMR_OK)
			return st;
	dmr_txn_cncache_set_tables(eng, mask);
	res->cn_cache_entries = dmr_cncache_capacity(eng->cncache[0]);
	return DMR_OK;
}

void dmr_replay_cncache_free(dmr_txn_engine_t *eng, uint32_t cns)
{
	for (uint32_t k = 0; eng->cncache && k < cns; k++)
		dmr_cncache_destroy(eng->cncache[k]);
	free(eng->cncache);
	eng->cncache = NULL;
	dmr_txn_cncache_set_tables(eng, 0);
}

dmr_status_t dmr_replay_setup_drift(const dmr_trace_hdr_t *h, const char *trace,
				    dmr_replay_drift_t *d, dmr_err_t *err)
{
	memset(d, 0, sizeof(*d));
	const char *ds = dmr_trace_hdr_param(h, "drift_s");
	if (!ds)
		return DMR_OK;
	const char *sh = dmr_trace_hdr_param(h, "drift_shift");
	const char *pa = dmr_trace_hdr_param(h, "partitions");
	const char *pt = dmr_trace_hdr_param(h, "partitioned");
	double s = atof(ds);
	d->shift = sh ? (uint32_t)atoi(sh) : 0;
	d->parts = pa ? (uint32_t)atoi(pa) : 0;
	if (!(s > 0) || !d->shift || !d->parts || !pt)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: header: drift_s needs drift_shift, partitions and "
				   "partitioned (FORMAT.md \"Drift\")",
				   trace);
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", pt);
	for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		int ti = dmr_trace_hdr_table(h, t);
		if (ti < 0 || h->tables[ti].rows % d->parts)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s: header: partitioned table '%s' unknown or not "
					   "divisible into %u partitions",
					   trace, t, d->parts);
		d->part_mask |= 1u << ti;
	}
	d->ps = dmr_ps_from_s(s);
	return DMR_OK;
}

void dmr_replay_result_shape(dmr_replay_result_t *res, const dmr_replay_shape_t *o,
			     const dmr_replay_run_knobs_t *k, const dmr_trace_hdr_t *h,
			     const dmr_model_t *m, uint64_t started)
{
	snprintf(res->workload, sizeof(res->workload), "%s", h->workload);
	snprintf(res->regime, sizeof(res->regime), "%s", h->regime);
	dmr_loop_name(k->loop.loops, res->loop, sizeof(res->loop));
	snprintf(res->backend, sizeof(res->backend), "%s", o->backend);
	snprintf(res->profile, sizeof(res->profile), "%s", m ? m->name : "-");
	snprintf(res->profile_path, sizeof(res->profile_path), "%s", m ? m->path : "-");
	res->cns = o->cns;
	res->threads = o->threads;
	res->coros = o->coros;
	res->seed = k->seed;
	res->txns = started;
	res->mtu = m ? m->mtu : 0;
	res->retries_limit = k->retries;
	res->backoff_us = k->backoff_us;
	res->duration_s = k->duration_s;
	res->loop_cfg = k->loop;
	snprintf(res->isolation, sizeof(res->isolation), "%s",
		 k->isolation == DMR_TXN_ISO_SI ? "si" : "sr");
	snprintf(res->rpc, sizeof(res->rpc), "%s", dmr_txn_rpc_name(k->rpc));
	res->versions = k->versions;
	snprintf(res->dm_locks, sizeof(res->dm_locks), "%s", k->dm_locks ? k->dm_locks : "");
	snprintf(res->cxl_tables, sizeof(res->cxl_tables), "%s",
		 k->cxl_tables ? k->cxl_tables : "");
}

int dmr_replay_backend_opts_check(const char *cmd, const char *backend, const char *dev_opt,
				  int profile)
{
	const char *inner = strrchr(backend, ':') ? strrchr(backend, ':') + 1 : backend;
	if (dev_opt && strcmp(inner, "verbs") != 0) {
		fprintf(stderr,
			"dmreplay %s: option %s: only the verbs backend takes it (--backend %s "
			"would ignore it)\n",
			cmd, dev_opt, backend);
		return -1;
	}
	if (profile && strcmp(inner, "sim") != 0) {
		fprintf(stderr,
			"dmreplay %s: option --profile: only the sim backend models a NIC profile "
			"(--backend %s would ignore it; its figures are measured)\n",
			cmd, backend);
		return -1;
	}
	return 0;
}
