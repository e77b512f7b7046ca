/*
 * backends/sim/sim_impl.h - the sim backend's state, shared by sim.c (the
 * event path: posts, events, completions) and sim_setup.c (open, close,
 * control ops, counters). Not for use outside backends/sim/: the backend's
 * interface is dmr_sim_ops (sim.h, backends/backend.h).
 */
#ifndef DMR_SIM_IMPL_H
#define DMR_SIM_IMPL_H

#include "sim.h"

#include "eventq.h"
#include "pool.h"
#include "qpc.h"

enum {
	EV_MN_ARRIVE = 0,
	EV_MN_EFFECT = 1,
	EV_CN_COMPLETE = 2, /* signaled or failed WR: deliver its WC */
	EV_WORKER_RUN = 3,
	EV_TIMER = 4,
	/* 5: a held WR's wake-up until session 11 (qp_release issues it
	   without an event) */
	EV_CN_ARRIVE = 6, /* several MNs: a response reaches its CN's downlink */
	EV_RPC_DONE = 7,  /* an MN core finished an RPC: its handler runs */
};

#define NOIDX UINT32_MAX

/* A WR in flight, split by use: the fields every event of the WR touches
 * (32 bytes, one aligned half line) and those only its memory effect and
 * completion read (sim_opx_t, a parallel array). The endpoint (QP) of a WR
 * is its worker's QP to its MN (one RC QP per worker and MN, backend.h). */
typedef struct sim_op {
	uint64_t remote;   /* byte offset in the MN region */
	uint32_t length;   /* bytes */
	uint32_t next;	   /* free list / QP pending list */
	uint32_t qp;	   /* its QP, index into sim->qps (a timer: its worker) */
	uint32_t req_wire; /* wire time of the request, ps */
	uint16_t cn;	   /* worker / workers per CN */
	uint8_t opcode;	   /* dmr_wr_opcode_t */
	uint8_t flags;	   /* DMR_WR_SIGNALED */
	uint8_t status;
	uint8_t first_read; /* software NIC: the first READ of its doorbell */
	uint8_t mn;	    /* target MN (< DMR_BE_MAX_MNS) */
} sim_op_t;
_Static_assert(sizeof(sim_op_t) == 32, "sim_op_t is one 32-byte record");

typedef struct sim_opx {
	uint64_t wr_id;
	void *local;
	uint64_t compare_add, swap;
} sim_opx_t;
_Static_assert(sizeof(sim_opx_t) == 32, "sim_opx_t is one 32-byte record");

/* An RPC's own fields (s->opr, parallel to ops; written for RPCs only). */
typedef struct sim_opr {
	dmr_be_rpc_fn handler;
	void *arg;
	uint32_t accesses, resp_cap;
} sim_opr_t;

/* What few WRs use (s->opm, parallel to ops; each field written only for
 * the WRs that read it): a MASKED_CAS's masks, a flushed WR's post time. */
typedef struct sim_opm {
	uint64_t compare_mask, swap_mask;
	uint64_t t_post; /* a flushed WR: when it was posted, ps */
} sim_opm_t;

/*
 * Credits for READ/atomic WRs (max_rd_atomic) are accounted without an
 * event per WR: `inflight` counts issued READ/atomics not yet retired; the
 * ring holds the completion times of those whose MN effect has been
 * computed (in order, as completions are in order). An entry is retired
 * when the QP's clock passes it. A WR held for a credit is issued when the
 * oldest known completion retires, without an event (qp_release).
 */
typedef struct sim_qp {
	uint32_t worker; /* whose QP (QP q is worker q / mns's to MN q mod mns) */
	uint32_t inflight;
	uint32_t rhead, rn; /* ring of completion times */
	uint32_t pend_head, pend_tail;
	/* RC order across a failure: `open` counts the QP's WRs posted before
	 * it (not flushed) whose completion time is not known yet; a WR
	 * flushed while any is open waits in fl_head..fl_tail (via next) and
	 * completes after the last of them (flush_ready) */
	uint32_t open;
	uint32_t fl_head, fl_tail;
	uint8_t error;
	uint64_t last_cqe;
	uint64_t last_eff; /* MN effect time of the previous WR (RC order) */
	uint64_t last_arr; /* software NIC: MN arrival of the previous WR */
} sim_qp_t;
_Static_assert(sizeof(sim_qp_t) == 64, "sim_qp_t is one cache line");

/* backends/backend.h opcodes as dmr_model_host_ps (models/model.h) reads them */
_Static_assert(DMR_WR_READ == 0 && DMR_WR_WRITE == 1 && DMR_WR_CAS == 2 && DMR_WR_FAA == 3,
	       "dmr_model_host_ps assumes these opcode values");

typedef struct sim_worker {
	uint64_t clock; /* CPU busy until, ps */
	uint64_t *cpu;	/* software NIC: busy-until of the host CPU it runs on
			   (shared with other workers and the NIC); NULL: its
			   own CPU, hardware NIC */
	dmr_wc_t *cq;
	uint32_t cq_head, cq_n, cq_cap; /* cq_cap: a power of two (256, doubled) */
	uint8_t scheduled;
	uint16_t cn; /* its CN (worker / cfg.workers, kept: no division per post) */
} sim_worker_t;

typedef struct sim_cn {
	uint64_t nic_free, up_free, down_free;
	dmr_sim_qpc_t qpc; /* its NIC's QP contexts (qpc_qps > 0) */
} sim_cn_t;

typedef struct addr_ent {
	uint64_t addr; /* offset + 1; 0 = empty */
	uint64_t free;
} addr_ent_t;

/* One memory node: its own link (both directions), NIC, DMA engines,
 * atomic unit and region; its counters (verbs is filled in when read). */
typedef struct sim_mn {
	uint8_t *mem;
	uint64_t size;
	uint64_t down_free, up_free, nic_free;
	uint64_t dma_rd_free, dma_wr_free, atomic_free;
	uint64_t last_write_eff;
	addr_ent_t *atab; /* per-address atomic servers, open addressing */
	uint32_t amask, aused;
	uint64_t dm_atomic_free; /* the device-memory atomic unit (--dm-locks) */
	uint64_t cxl_free;	 /* the CXL tier's bandwidth (--cxl-tables) */
	dmr_sim_qpc_t qpc;	 /* its NIC's QP contexts (qpc_qps > 0) */
	uint64_t *rpc_free;	 /* busy-until of its mn_rpc_cores RPC cores */
	dmr_sim_pool_t pool;	 /* DMR_BE_CTL_LAZY_INIT: its bytes until needed
				    raw (pool.h; not in use: the region is mem) */
	dmr_be_mn_stats_t st;
} sim_mn_t;

typedef struct sim {
	dmr_be_t be;
	dmr_model_t m;
	dmr_sim_eventq_t q;
	uint64_t now;
	uint32_t nworkers;
	sim_worker_t *workers;
	uint32_t nmns;
	sim_cn_t *cns;
	sim_qp_t *qps;	 /* nworkers x nmns: QP (w, mn) at w * nmns + mn */
	uint64_t *cpus;	 /* software NIC: host CPUs, cns x host_cpus busy-until */
	uint64_t *rings; /* per QP, rcap entries */
	uint32_t rcap;	 /* power of two >= max_rd_atomic */
	int ready;	 /* worker to return from progress() at once, -1 none */
	uint64_t until;	 /* progress()'s until_ps: no event after it is handled */
	int no_payload;	 /* timing only: READ/WRITE move no bytes */
	sim_op_t *ops;	 /* nops, 64-byte aligned */
	sim_opx_t *opx;	 /* nops, the cold halves */
	sim_opm_t *opm;	 /* nops, MASKED_CAS masks and flush times */
	sim_opr_t *opr;	 /* nops, RPCs' handlers */
	uint32_t nops, free_head;
	dmr_be_stats_t st; /* reads, writes, bytes: summed over mn[] when read */
	dmr_status_t fatal;
	uint8_t *mem[DMR_BE_MAX_MNS]; /* mn[i].mem: for dmr_sim_mn_memory */
	dmr_be_dm_locks_t dm;	      /* lock words in device memory (dm.n 0: none) */
	dmr_be_dm_locks_t cxl;	      /* tables on the CXL tier (cxl.n 0: none) */
	dmr_be_streams_t *sx;	      /* DMR_BE_CTL_STREAMS, the caller's; NULL: none */
	sim_mn_t mn[DMR_BE_MAX_MNS];
} sim_t;

static inline sim_t *to_sim(dmr_be_t *be)
{
	return (sim_t *)be;
}

/* Before something reads MN mni's region raw (mn_memory(), an RPC
 * handler): the whole image in it (pool.h). */
static inline void lazy_all(sim_t *s, uint32_t mni)
{
	dmr_sim_pool_flatten(&s->mn[mni].pool, s->mn[mni].mem);
}

/* sim_setup.c. dmr_sim_grow_ops: twice the WR records (4,096 at first;
 * the free list was empty), DMR_ERR_NOMEM past an event argument's range
 * or without memory. The others are dmr_sim_ops's open, close, mn_memory,
 * stats and control (backends/backend.h gives their contracts). */
dmr_status_t dmr_sim_grow_ops(sim_t *s);
dmr_status_t dmr_sim_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err);
void dmr_sim_close(dmr_be_t *be);
void *dmr_sim_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p);
void dmr_sim_stats(dmr_be_t *be, dmr_be_stats_t *st);
dmr_status_t dmr_sim_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err);

#endif /* DMR_SIM_IMPL_H */
