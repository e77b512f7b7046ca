/* backends/registry.c - the explicit list of backends (libfabric fabric.c
 * style) and the checks every backend shares. */
#include "backend.h"

#include <string.h>

extern const dmr_be_ops_t dmr_sim_ops;
extern const dmr_be_ops_t dmr_shm_ops;
#ifdef DMR_HAVE_VERBS
extern const dmr_be_ops_t dmr_verbs_ops;
#endif

static const dmr_be_ops_t *const registry[] = {
	&dmr_sim_ops,
	&dmr_shm_ops,
#ifdef DMR_HAVE_VERBS
	&dmr_verbs_ops,
#endif
};

const char *dmr_be_names(void)
{
#ifdef DMR_HAVE_VERBS
	return "sim, shm, verbs";
#else
	return "sim, shm";
#endif
}

dmr_status_t dmr_be_unsupported(void)
{
	return DMR_ERR_UNSUPPORTED;
}

const char *dmr_wc_status_string(int status)
{
	switch (status) {
	case DMR_WC_SUCCESS: return "success";
	case DMR_WC_REM_ACCESS_ERR: return "remote access error";
	case DMR_WC_FLUSH_ERR: return "work request flushed error";
	case DMR_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	case DMR_WC_GENERAL_ERR: return "general error";
	}
	return "unknown status";
}

const char *dmr_wr_opcode_string(int opcode)
{
	switch (opcode) {
	case DMR_WR_READ: return "READ";
	case DMR_WR_WRITE: return "WRITE";
	case DMR_WR_CAS: return "CAS";
	case DMR_WR_FAA: return "FAA";
	case DMR_WR_TIMER: return "TIMER";
	}
	return "?";
}

dmr_status_t dmr_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
		const dmr_be_ops_t *ops = registry[i];
		if (strcmp(ops->name, cfg->backend) != 0)
			continue;
		if (ops->size != sizeof(dmr_be_ops_t))
			return dmr_err_set(err, DMR_ERR_NODEV,
					   "backend %s: ops table size %zu, expected %zu",
					   ops->name, ops->size, sizeof(dmr_be_ops_t));
		return ops->open(cfg, be_p, err);
	}
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
			return dmr_err_set(err, DMR_ERR_INVALID, "post: WR %u has unknown opcode %u",
					   i, wr->opcode);
		}
	}
	return be->ops->post(be, worker, mn, wrs, n, err);
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
