/* backends/registry.c - the explicit list of backends (libfabric fabric.c
 * style), registration (the table's checks and its stubs: rdma-core's
 * verbs_set_ops, libfabric's ofi_enosys.h) and the checks every post
 * shares. */
#include "backend.h"

#include <string.h>

#include "fault/fault.h"
#include "record/record.h"

extern const dmr_be_ops_t dmr_sim_ops;
extern const dmr_be_ops_t dmr_shm_ops;
#ifdef DMR_HAVE_VERBS
extern const dmr_be_ops_t dmr_verbs_ops;
#endif
#ifdef DMR_HAVE_UCX
extern const dmr_be_ops_t dmr_ucx_ops;
#endif

static const dmr_be_ops_t *const registry[] = {
    &dmr_sim_ops,
    &dmr_shm_ops,
#ifdef DMR_HAVE_VERBS
    &dmr_verbs_ops,
#endif
#ifdef DMR_HAVE_UCX
    &dmr_ucx_ops,
#endif
};

const char *dmr_be_names(void)
{
	return "sim, shm"
#ifdef DMR_HAVE_VERBS
	       ", verbs"
#endif
#ifdef DMR_HAVE_UCX
	       ", ucx"
#endif
	       ", fault:INNER, record:INNER";
}

const char *dmr_be_base_name(const char *name)
{
	size_t nf = strlen(DMR_FAULT_PREFIX), nr = strlen(DMR_RECORD_PREFIX);
	for (;;) {
		if (name && strncmp(name, DMR_FAULT_PREFIX, nf) == 0)
			name += nf;
		else if (name && strncmp(name, DMR_RECORD_PREFIX, nr) == 0)
			name += nr;
		else
			return name;
	}
}

/* ---- the shared stubs: what an operation left NULL does (backend.h) ---- */

static dmr_status_t stub_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
				dmr_err_t *err)
{
	(void)be, (void)worker, (void)addr, (void)len, (void)err;
	return DMR_OK; /* nothing to register */
}

static dmr_status_t stub_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err)
{
	(void)be, (void)worker, (void)addr, (void)err;
	return DMR_OK; /* nothing to deregister */
}

static dmr_status_t stub_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			      uint32_t n, dmr_err_t *err)
{
	(void)wrs;
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
			   "backend %s: post not supported (worker %u, MN %u, %u WRs)",
			   be->ops->name, worker, mn, n);
}

static int stub_poll(dmr_be_t *be, uint32_t worker, dmr_wc_t *wcs, int max)
{
	(void)be, (void)worker, (void)wcs, (void)max;
	return DMR_ERR_UNSUPPORTED;
}

static uint64_t stub_now(dmr_be_t *be, uint32_t worker)
{
	(void)be, (void)worker;
	return 0;
}

static dmr_status_t stub_timer(dmr_be_t *be, uint32_t worker, uint64_t at_ps, uint64_t wr_id)
{
	(void)be, (void)worker, (void)at_ps, (void)wr_id;
	return DMR_ERR_UNSUPPORTED;
}

/* A single process: the only participant. */
static dmr_status_t stub_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
				 dmr_err_t *err)
{
	if (b->phase != DMR_BE_BARRIER_START && b->phase != DMR_BE_BARRIER_END)
		return dmr_err_set(err, DMR_ERR_INVALID, "backend %s: barrier phase %u unknown",
				   be->ops->name, b->phase);
	if (!b->failed)
		*sum_p = b->value;
	return DMR_OK;
}

static int stub_progress(dmr_be_t *be, uint64_t until_ps)
{
	(void)be, (void)until_ps;
	return -1;
}

static void *stub_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	(void)be, (void)mn, (void)len_p;
	return NULL;
}

static void stub_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	(void)be;
	memset(st, 0, sizeof(*st));
}

static void stub_charge(dmr_be_t *be, uint32_t worker, uint64_t ps)
{
	(void)be, (void)worker, (void)ps;
}

static dmr_status_t stub_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	(void)arg;
	return dmr_be_ctl_unsupported(be, op, err);
}

const char *dmr_be_ctl_string(int op)
{
	switch (op) {
	case DMR_BE_CTL_MODEL:
		return "model";
	case DMR_BE_CTL_SIM_TIME:
		return "sim-time";
	case DMR_BE_CTL_SET_MTU:
		return "set-mtu";
	case DMR_BE_CTL_SET_PAYLOAD:
		return "set-payload";
	case DMR_BE_CTL_ROLE:
		return "role";
	case DMR_BE_CTL_MN_STATS:
		return "mn-stats";
	case DMR_BE_CTL_DM_LOCKS:
		return "dm-locks";
	case DMR_BE_CTL_CXL_TABLES:
		return "cxl-tables";
	case DMR_BE_CTL_LOCK_REGION:
		return "lock-region";
	case DMR_BE_CTL_RPC_MODE:
		return "rpc-mode";
	case DMR_BE_CTL_LAZY_INIT:
		return "lazy-init";
	case DMR_BE_CTL_MN_READ:
		return "mn-read";
	case DMR_BE_CTL_STREAMS:
		return "streams";
	}
	return "?";
}

dmr_status_t dmr_be_ctl_unsupported(dmr_be_t *be, int op, dmr_err_t *err)
{
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED, "backend %s: control op %d (%s) not supported",
			   be->ops->name, op, dmr_be_ctl_string(op));
}

static dmr_status_t stub_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			     dmr_err_t *err)
{
	(void)rpc;
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
			   "backend %s: no RPC path to the MN's CPU (worker %u, MN %u; sim and "
			   "shm have one)",
			   be->ops->name, worker, mn);
}

#define FILL(f, stub)                                                                              \
	do {                                                                                       \
		if (!t->f)                                                                         \
			t->f = stub;                                                               \
	} while (0)

/* The table with every unset operation pointing at its stub. */
static void fill_stubs(dmr_be_ops_t *t)
{
	FILL(mr_reg, stub_mr_reg);
	FILL(mr_dereg, stub_mr_dereg);
	FILL(post, stub_post);
	FILL(poll, stub_poll);
	FILL(now, stub_now);
	FILL(timer, stub_timer);
	FILL(barrier, stub_barrier);
	FILL(progress, stub_progress);
	FILL(mn_memory, stub_mn_memory);
	FILL(stats, stub_stats);
	FILL(charge, stub_charge);
	FILL(control, stub_control);
	FILL(rpc, stub_rpc);
}

const char *dmr_wc_status_string(int status)
{
	switch (status) {
	case DMR_WC_SUCCESS:
		return "success";
	case DMR_WC_REM_ACCESS_ERR:
		return "remote access error";
	case DMR_WC_FLUSH_ERR:
		return "work request flushed error";
	case DMR_WC_RETRY_EXC_ERR:
		return "transport retry counter exceeded";
	case DMR_WC_GENERAL_ERR:
		return "general error";
	}
	return "unknown status";
}

const char *dmr_wr_opcode_string(int opcode)
{
	switch (opcode) {
	case DMR_WR_READ:
		return "READ";
	case DMR_WR_WRITE:
		return "WRITE";
	case DMR_WR_CAS:
		return "CAS";
	case DMR_WR_FAA:
		return "FAA";
	case DMR_WR_TIMER:
		return "TIMER";
	case DMR_WR_MASKED_CAS:
		return "MASKED_CAS";
	case DMR_WR_RPC:
		return "RPC";
	}
	return "?";
}

dmr_status_t dmr_be_open_ops(const dmr_be_ops_t *ops, const dmr_be_config_t *cfg, dmr_be_t **be_p,
			     dmr_err_t *err)
{
	if (ops->size != sizeof(dmr_be_ops_t))
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "backend %s: ops table size %zu, expected %zu",
				   ops->name ? ops->name : "?", ops->size, sizeof(dmr_be_ops_t));
	if (!ops->name || !ops->open || !ops->close)
		return dmr_err_set(err, DMR_ERR_INVALID, "backend %s: ops table without %s",
				   ops->name ? ops->name : "?",
				   !ops->name	? "a name"
				   : !ops->open ? "open"
						: "close");
	dmr_be_t *be = NULL;
	dmr_status_t st = ops->open(cfg, &be, err);
	if (st != DMR_OK)
		return st;
	be->filled = *ops;
	/* the caps of the table open() set: a wrapper's follow its inner
	 * backend's (backends/fault) */
	if (be->ops && be->ops->size == sizeof(dmr_be_ops_t))
		be->filled.caps = be->ops->caps;
	fill_stubs(&be->filled);
	be->ops = &be->filled;
	be->mr_regs = be->mr_deregs = 0;
	*be_p = be;
	return DMR_OK;
}

uint32_t dmr_be_caps_of(const char *name)
{
	const char *base = dmr_be_base_name(name);
	for (size_t i = 0; base && i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, base) == 0)
			return registry[i]->caps & (base == name ? ~0u : ~DMR_BE_CAP_RPC);
	return 0;
}

dmr_status_t dmr_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	/* fault:INNER, the wrapper (backends/fault/fault.h) */
	if (cfg->backend && strncmp(cfg->backend, DMR_FAULT_PREFIX, strlen(DMR_FAULT_PREFIX)) == 0)
		return dmr_be_open_ops(&dmr_fault_ops, cfg, be_p, err);
	/* record:INNER, the recording wrapper (backends/record/record.h) */
	if (cfg->backend &&
	    strncmp(cfg->backend, DMR_RECORD_PREFIX, strlen(DMR_RECORD_PREFIX)) == 0)
		return dmr_be_open_ops(&dmr_record_ops, cfg, be_p, err);
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, cfg->backend) == 0)
			return dmr_be_open_ops(registry[i], cfg, be_p, err);
	return dmr_err_set(err, DMR_ERR_NODEV, "unknown backend '%s' (known: %s)", cfg->backend,
			   dmr_be_names());
}

dmr_status_t dmr_be_post(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_wr_t *wrs,
			 uint32_t n, dmr_err_t *err)
{
	if (n == 0 || n > 4096)
		return dmr_err_set(err, DMR_ERR_INVALID, "post: batch of %u WRs (1..4096)", n);
	if (worker >= be->cfg.cns * be->cfg.workers || mn >= be->cfg.mns)
		return dmr_err_set(err, DMR_ERR_RANGE, "post: worker %u / mn %u out of range",
				   worker, mn);
	for (uint32_t i = 0; i < n; i++) {
		const dmr_wr_t *wr = &wrs[i];
		switch (wr->opcode) {
		case DMR_WR_READ:
		case DMR_WR_WRITE:
			break;
		case DMR_WR_MASKED_CAS:
			if (!dmr_be_has_masked_cas(be))
				return dmr_err_set(
				    err, DMR_ERR_UNSUPPORTED,
				    "post: WR %u (wr_id %llu): backend %s has no masked "
				    "compare-and-swap (upstream rdma-core has no masked "
				    "CAS verb; use --crest-locks words)",
				    i, (unsigned long long)wr->wr_id, be->ops->name);
			/* fall through */
		case DMR_WR_CAS:
		case DMR_WR_FAA:
			if (wr->remote & 7)
				return dmr_err_set(err, DMR_ERR_INVALID,
						   "post: %s (WR %u, wr_id %llu) at MN %u offset "
						   "0x%llx is not 8-byte aligned",
						   dmr_wr_opcode_string(wr->opcode), i,
						   (unsigned long long)wr->wr_id, mn,
						   (unsigned long long)wr->remote);
			break;
		default:
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "post: WR %u has unknown opcode %u", i, wr->opcode);
		}
	}
	return be->ops->post(be, worker, mn, wrs, n, err);
}

dmr_status_t dmr_be_rpc(dmr_be_t *be, uint32_t worker, uint32_t mn, const dmr_be_rpc_t *rpc,
			dmr_err_t *err)
{
	if (worker >= be->cfg.cns * be->cfg.workers || mn >= be->cfg.mns)
		return dmr_err_set(err, DMR_ERR_RANGE, "rpc: worker %u / mn %u out of range",
				   worker, mn);
	if (!rpc->handler || rpc->req_bytes == 0 || rpc->req_bytes > (1u << 20) ||
	    rpc->resp_cap > (1u << 20))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "rpc: wr_id %llu: %s (request %u bytes, response at most %u; "
				   "1..1048576 and 0..1048576)",
				   (unsigned long long)rpc->wr_id,
				   rpc->handler ? "bad size" : "no handler", rpc->req_bytes,
				   rpc->resp_cap);
	if (!(be->ops->caps & DMR_BE_CAP_RPC))
		return stub_rpc(be, worker, mn, rpc, err);
	return be->ops->rpc(be, worker, mn, rpc, err);
}

dmr_status_t dmr_be_post_one(dmr_be_t *be, uint32_t worker, uint32_t mn, uint8_t opcode,
			     uint64_t wr_id, void *local, uint64_t remote, uint32_t length,
			     uint64_t compare_add, uint64_t swap, dmr_err_t *err)
{
	dmr_wr_t wr = {.wr_id = wr_id,
		       .local = local,
		       .remote = remote,
		       .compare_add = compare_add,
		       .swap = swap,
		       .length = length,
		       .opcode = opcode,
		       .flags = DMR_WR_SIGNALED};
	return dmr_be_post(be, worker, mn, &wr, 1, err);
}
