/*
 * backends/sim/sim_setup.c - the sim backend's cold parts: open and close,
 * growing the WR records, the control ops, the MN region as memory and the
 * counters (sim_impl.h). The event path is sim.c's.
 */
#include "sim_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

dmr_status_t dmr_sim_grow_ops(sim_t *s)
{
	uint32_t n = s->nops ? s->nops * 2 : 4096;
	if (n > DMR_SIM_EVQ_MAX_ARG + 1u)
		return DMR_ERR_NOMEM; /* an event's argument holds the index */
	sim_op_t *o = aligned_alloc(64, sizeof(*o) * n);
	sim_opx_t *x = aligned_alloc(64, sizeof(*x) * n);
	sim_opm_t *mk = aligned_alloc(64, sizeof(*mk) * n);
	sim_opr_t *r = malloc(sizeof(*r) * n);
	if (!o || !x || !mk || !r) {
		free(o);
		free(x);
		free(mk);
		free(r);
		return DMR_ERR_NOMEM;
	}
	if (s->nops) {
		memcpy(o, s->ops, sizeof(*o) * s->nops);
		memcpy(x, s->opx, sizeof(*x) * s->nops);
		memcpy(mk, s->opm, sizeof(*mk) * s->nops);
		memcpy(r, s->opr, sizeof(*r) * s->nops);
	}
	free(s->ops);
	free(s->opx);
	free(s->opm);
	free(s->opr);
	s->opr = r;
	for (uint32_t i = s->nops; i < n; i++)
		o[i].next = i + 1 < n ? i + 1 : NOIDX; /* only grown when empty */
	s->free_head = s->nops;
	s->ops = o;
	s->opx = x;
	s->opm = mk;
	s->nops = n;
	return DMR_OK;
}

void dmr_sim_close(dmr_be_t *be)
{
	sim_t *s = to_sim(be);
	for (uint32_t i = 0; i < s->nmns; i++) {
		if (s->mn[i].mem)
			munmap(s->mn[i].mem, s->mn[i].size);
		free(s->mn[i].atab);
		free(s->mn[i].rpc_free);
		dmr_sim_pool_fini(&s->mn[i].pool);
		dmr_sim_qpc_free(&s->mn[i].qpc);
	}
	for (uint32_t i = 0; s->cns && i < s->be.cfg.cns; i++)
		dmr_sim_qpc_free(&s->cns[i].qpc);
	for (uint32_t i = 0; i < s->nworkers; i++)
		free(s->workers[i].cq);
	free(s->workers);
	free(s->cns);
	free(s->qps);
	free(s->cpus);
	free(s->rings);
	free(s->ops);
	free(s->opx);
	free(s->opm);
	free(s->opr);
	dmr_sim_eventq_fini(&s->q);
	free(s);
}

dmr_status_t dmr_sim_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	if (cfg->mns == 0 || cfg->mns > DMR_BE_MAX_MNS)
		return dmr_err_set(err, DMR_ERR_INVALID, "sim: mns %u out of range (1..%u)",
				   cfg->mns, DMR_BE_MAX_MNS);
	if (cfg->cns == 0 || cfg->workers == 0 || cfg->cns > DMR_BE_MAX_CNS ||
	    cfg->workers > DMR_BE_MAX_WORKERS)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "sim: cns %u (1..%u) / workers per CN %u (1..%u) out of range",
				   cfg->cns, DMR_BE_MAX_CNS, cfg->workers, DMR_BE_MAX_WORKERS);
	if (cfg->mr_size == 0 || (cfg->mr_size & 7))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "sim: mr_size %llu must be a positive multiple of 8",
				   (unsigned long long)cfg->mr_size);
	sim_t *s = calloc(1, sizeof(*s));
	if (!s)
		return dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
	s->be.ops = &dmr_sim_ops;
	s->be.cfg = *cfg;
	s->free_head = NOIDX;
	dmr_status_t st = dmr_model_load(cfg->profile ? cfg->profile : "cx6dx-100g", &s->m, err);
	if (st != DMR_OK)
		goto fail;
	s->nworkers = cfg->cns * cfg->workers;
	s->nmns = cfg->mns;
	size_t nqps = (size_t)s->nworkers * s->nmns;
	s->workers = calloc(s->nworkers, sizeof(*s->workers));
	s->cns = calloc(cfg->cns, sizeof(*s->cns));
	s->qps = aligned_alloc(64, nqps * sizeof(*s->qps)); /* one line each */
	if (s->qps)
		memset(s->qps, 0, nqps * sizeof(*s->qps));
	s->ready = -1;
	for (s->rcap = 1; s->rcap < s->m.qp_max_rd_atomic; s->rcap <<= 1)
		;
	s->rings = calloc(nqps * s->rcap, sizeof(uint64_t));
	if (!s->workers || !s->cns || !s->qps || !s->rings) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; s->m.qpc_qps && i < cfg->cns; i++)
		if (dmr_sim_qpc_init(&s->cns[i].qpc, s->m.qpc_qps, s->m.qpc_ways)) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
	for (uint32_t i = 0; s->m.qpc_qps && i < s->nmns; i++)
		if (dmr_sim_qpc_init(&s->mn[i].qpc, s->m.qpc_qps, s->m.qpc_ways)) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
	for (size_t i = 0; i < nqps; i++) {
		s->qps[i].worker = (uint32_t)(i / s->nmns);
		s->qps[i].pend_head = s->qps[i].pend_tail = NOIDX;
		s->qps[i].fl_head = s->qps[i].fl_tail = NOIDX;
	}
	for (uint32_t i = 0; i < s->nworkers; i++) {
		s->workers[i].cn = (uint16_t)(i / cfg->workers);
		s->workers[i].cq_cap = 256;
		s->workers[i].cq = malloc(sizeof(dmr_wc_t) * 256);
		if (!s->workers[i].cq) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
	}
	if (s->m.host_cpus) {
		/* software NIC: worker w of a CN on CPU w mod host_cpus of that CN
		 * (the OS spreads runnable threads over the CPUs; rxe runs the NIC
		 * work of a WR on the CPU of the thread that posted it) */
		uint32_t k = s->m.host_cpus;
		s->cpus = calloc((size_t)cfg->cns * k, sizeof(uint64_t));
		if (!s->cpus) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
		for (uint32_t i = 0; i < s->nworkers; i++)
			s->workers[i].cpu =
			    &s->cpus[(size_t)(i / cfg->workers) * k + (i % cfg->workers) % k];
	}
	for (uint32_t i = 0; i < s->nmns; i++) {
		sim_mn_t *mn = &s->mn[i];
		/* per-address atomic servers: 4096 entries (64 KiB) to start,
		 * grown by atomic_gc when a quarter stays live; the former fixed
		 * 1 MiB table was a cache miss per atomic */
		mn->amask = (1u << 12) - 1;
		mn->atab = calloc(mn->amask + 1, sizeof(*mn->atab));
		if (s->m.mn_rpc_cores)
			mn->rpc_free = calloc(s->m.mn_rpc_cores, sizeof(uint64_t));
		if (!mn->atab || (s->m.mn_rpc_cores && !mn->rpc_free)) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
			goto fail;
		}
		void *mem = mmap(NULL, cfg->mr_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (mem == MAP_FAILED) {
			/* more than this host maps (even unreserved): the run's
			 * input (exit 2), not a failure of the run */
			st = dmr_err_set(
			    err, DMR_ERR_RANGE,
			    "sim: cannot map MN %u's region of %llu bytes (%.1f GiB): "
			    "more than this host maps (the region is --mr-size, or what "
			    "the trace's tables need; the sim touches only what is "
			    "written)",
			    i, (unsigned long long)cfg->mr_size,
			    (double)cfg->mr_size / 1073741824.0);
			goto fail;
		}
		mn->mem = s->mem[i] = mem;
		mn->size = cfg->mr_size;
	}
	/* no MADV_HUGEPAGE: tried; sparse tables (TPC-C history) then zero 2 MiB
	 * per touched record and the run became 7x slower */
	if (dmr_sim_eventq_init(&s->q, 1 << 14) != DMR_OK || dmr_sim_grow_ops(s) != DMR_OK) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "sim: out of memory");
		goto fail;
	}
	*be_p = &s->be;
	return DMR_OK;
fail:
	dmr_sim_close(&s->be);
	return st;
}

void *dmr_sim_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	sim_t *s = to_sim(be);
	if (mn >= s->nmns)
		return NULL;
	lazy_all(s, mn);
	if (len_p)
		*len_p = s->be.cfg.mr_size;
	return s->mem[mn];
}

void dmr_sim_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	const sim_t *s = to_sim(be);
	*st = s->st;
	for (uint32_t i = 0; i < s->nmns; i++) {
		st->reads += s->mn[i].st.reads;
		st->writes += s->mn[i].st.writes;
		st->bytes_read += s->mn[i].st.bytes_read;
		st->bytes_written += s->mn[i].st.bytes_written;
		st->rpcs += s->mn[i].st.rpcs;
		st->rpc_busy_ps += s->mn[i].st.rpc_busy_ps;
	}
	st->rpc_cores = s->m.mn_rpc_cores * s->nmns;
}

static dmr_status_t sim_set_mtu(sim_t *s, uint32_t mtu)
{
	if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
		return DMR_ERR_INVALID;
	s->m.mtu = mtu;
	return DMR_OK;
}

dmr_status_t dmr_sim_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	sim_t *s = to_sim(be);
	switch (op) {
	case DMR_BE_CTL_MODEL:
		*(const dmr_model_t **)arg = &s->m;
		return DMR_OK;
	case DMR_BE_CTL_SIM_TIME:
		*(uint64_t *)arg = s->now;
		return DMR_OK;
	case DMR_BE_CTL_SET_MTU: {
		uint32_t mtu = *(const uint32_t *)arg;
		if (sim_set_mtu(s, mtu) != DMR_OK)
			return dmr_err_set(
			    err, DMR_ERR_INVALID,
			    "sim: MTU %u is not an IB MTU (256, 512, 1024, 2048, 4096)", mtu);
		return DMR_OK;
	}
	case DMR_BE_CTL_SET_PAYLOAD:
		s->no_payload = !*(const int *)arg;
		return DMR_OK;
	case DMR_BE_CTL_ROLE:
		*(dmr_be_role_t *)arg = (dmr_be_role_t){
		    .cn = 0, .cns = be->cfg.cns, .first_worker = 0, .workers = s->nworkers};
		return DMR_OK;
	case DMR_BE_CTL_MN_STATS: {
		dmr_be_mn_stats_t *out = arg;
		for (uint32_t i = 0; i < s->nmns; i++) {
			out[i] = s->mn[i].st;
			out[i].verbs = out[i].reads + out[i].writes + out[i].atomics;
			out[i].qpc_misses = s->mn[i].qpc.misses;
		}
		return DMR_OK;
	}
	case DMR_BE_CTL_LAZY_INIT: {
		const dmr_be_lazy_init_t *li = arg;
		if (dmr_sim_pool_on(&s->mn[0].pool)) /* a second call: the first's image stays */
			return DMR_OK;
		for (uint32_t i = 0; i < s->nmns; i++) {
			if (dmr_sim_pool_init(&s->mn[i].pool, s->mn[i].size, i, li->init,
					      li->arg) == DMR_OK)
				continue;
			for (uint32_t k = 0; k < i; k++) /* all or none */
				dmr_sim_pool_fini(&s->mn[k].pool);
			return dmr_err_set(err, DMR_ERR_NOMEM,
					   "sim: out of memory for MN %u's page pool (%llu bytes)",
					   i, (unsigned long long)s->mn[i].size);
		}
		return DMR_OK;
	}
	case DMR_BE_CTL_MN_READ: {
		dmr_be_mn_read_t *rd = arg;
		if (rd->mn >= s->nmns || rd->off > s->mn[rd->mn].size ||
		    rd->len > s->mn[rd->mn].size - rd->off)
			return dmr_err_set(err, DMR_ERR_RANGE,
					   "sim: read of MN %u bytes [%llu, +%llu): outside the %u "
					   "regions of %llu bytes",
					   rd->mn, (unsigned long long)rd->off,
					   (unsigned long long)rd->len, s->nmns,
					   (unsigned long long)s->be.cfg.mr_size);
		const dmr_sim_pool_t *p = &s->mn[rd->mn].pool;
		rd->written = !dmr_sim_pool_on(p) || dmr_sim_pool_stored(p, rd->off, rd->len);
		if (!rd->buf)
			return DMR_OK;
		if (dmr_sim_pool_on(p))
			dmr_sim_pool_read(p, rd->off, rd->len, rd->buf);
		else
			memcpy(rd->buf, s->mn[rd->mn].mem + rd->off, rd->len);
		return DMR_OK;
	}
	case DMR_BE_CTL_STREAMS: {
		dmr_be_streams_t *sx = arg;
		if (!sx->n) {
			s->sx = NULL;
			return DMR_OK;
		}
		if (!sx->s || !sx->dirty || sx->w0 >= s->nworkers || sx->n > s->nworkers - sx->w0)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "sim: streams of workers %u..%u: the run has %u workers",
					   sx->w0, sx->w0 + sx->n - 1, s->nworkers);
		s->sx = sx;
		return DMR_OK;
	}
	case DMR_BE_CTL_CXL_TABLES: {
		const dmr_be_dm_locks_t *d = arg;
		if (!s->m.cxl)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "sim: profile %s has no CXL tier (give cxl_read_ns, "
					   "cxl_write_ns and cxl_gbps)",
					   s->m.name);
		if (d->n == 0 || d->n > DMR_BE_DM_MAX_RANGES)
			return dmr_err_set(err, DMR_ERR_INVALID, "sim: %u CXL ranges (1..%u)", d->n,
					   DMR_BE_DM_MAX_RANGES);
		s->cxl = *d;
		return DMR_OK;
	}
	case DMR_BE_CTL_DM_LOCKS: {
		const dmr_be_dm_locks_t *d = arg;
		if (!s->m.dm_bytes)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "sim: profile %s has no device memory (give dm_kib, "
					   "dm_atomic_addr_mops and dm_atomic_global_mops)",
					   s->m.name);
		if (d->n == 0 || d->n > DMR_BE_DM_MAX_RANGES)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "sim: %u device-memory ranges (1..%u)", d->n,
					   DMR_BE_DM_MAX_RANGES);
		if (d->lock_bytes > s->m.dm_bytes)
			return dmr_err_set(
			    err, DMR_ERR_INVALID,
			    "sim: option --dm-locks: the lock words need %llu bytes of device "
			    "memory on one MN, profile %s offers %llu per MN (dm_kib %llu)",
			    (unsigned long long)d->lock_bytes, s->m.name,
			    (unsigned long long)s->m.dm_bytes,
			    (unsigned long long)(s->m.dm_bytes / 1024));
		s->dm = *d;
		return DMR_OK;
	}
	}
	return dmr_be_ctl_unsupported(be, op, err);
}
