/*
 * backends/verbs/verbs_mr.c - memory registration: a worker's local regions
 * (dmr_verbs_mr_reg; a new region drops the older ones it contains;
 * dmr_verbs_mr_dereg; the
 * per-WR lkey lookup, lkey_of, is static inline in verbs_impl.h), and the
 * start-up check that refuses, before ibv_reg_mr, a region larger than
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK, saying how to raise the limit.
 */
#include "verbs_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

dmr_status_t dmr_verbs_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (worker >= vb->nwalloc)
		return dmr_verbs_fail(vb, err, DMR_ERR_RANGE, (int)worker, -1,
				      "mr_reg: no such worker");
	if (len == 0)
		return DMR_OK;
	vb_worker_t *wk = &vb->w[worker];
	struct ibv_mr *mr = ibv_reg_mr(vb->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)worker, -1,
				      "ibv_reg_mr(%p, %zu bytes, LOCAL_WRITE): %s", addr, len,
				      strerror(errno));
	/* an older region inside the new one belonged to a freed buffer */
	uintptr_t a = (uintptr_t)addr;
	uint32_t keep = 0;
	for (uint32_t k = 0; k < wk->nmr; k++) {
		if (wk->mrs[k].addr >= a && wk->mrs[k].addr + wk->mrs[k].len <= a + len)
			ibv_dereg_mr(wk->mrs[k].mr);
		else
			wk->mrs[keep++] = wk->mrs[k];
	}
	wk->nmr = keep;
	if (wk->nmr == wk->mrcap) {
		uint32_t cap = wk->mrcap ? wk->mrcap * 2 : 16;
		vb_mr_t *m = realloc(wk->mrs, cap * sizeof(*m));
		if (!m) {
			ibv_dereg_mr(mr);
			return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, (int)worker, -1,
					      "out of memory");
		}
		wk->mrs = m;
		wk->mrcap = cap;
	}
	wk->mrs[wk->nmr++] = (vb_mr_t){.addr = a, .len = len, .mr = mr};
	return DMR_OK;
}

dmr_status_t dmr_verbs_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err)
{
	vb_t *vb = to_vb(be);
	if (worker >= vb->nwalloc)
		return dmr_verbs_fail(vb, err, DMR_ERR_RANGE, (int)worker, -1,
				      "mr_dereg: no such worker");
	vb_worker_t *wk = &vb->w[worker];
	for (uint32_t k = wk->nmr; k-- > 0;) {
		if (wk->mrs[k].addr != (uintptr_t)addr)
			continue;
		int rc = ibv_dereg_mr(wk->mrs[k].mr);
		if (rc)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, (int)worker, -1,
					      "ibv_dereg_mr(%p): %s", addr, strerror(rc));
		/* keep the order: lkey_of looks from the newest region down */
		memmove(&wk->mrs[k], &wk->mrs[k + 1], (wk->nmr - k - 1) * sizeof(*wk->mrs));
		wk->nmr--;
		return DMR_OK;
	}
	return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, (int)worker, -1,
			      "mr_dereg: %p is not a region registered for this worker", addr);
}

/* CAP_IPC_LOCK in the effective set: the memlock limit does not apply. */
static int has_cap_ipc_lock(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long cap = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &cap) == 1)
			break;
	fclose(f);
	return (cap >> 14) & 1; /* CAP_IPC_LOCK = 14 */
}

/* Start-up safety: refuse before ibv_reg_mr when `bytes` cannot be locked. */
dmr_status_t dmr_verbs_memlock_check(const vb_t *vb, uint64_t bytes, const char *what, int mn,
				     dmr_err_t *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    bytes <= (uint64_t)rl.rlim_cur || has_cap_ipc_lock())
		return DMR_OK;
	return dmr_verbs_fail(
	    vb, err, DMR_ERR_RANGE, -1, mn,
	    "%s needs %llu bytes of locked memory (%.1f MiB) but RLIMIT_MEMLOCK is "
	    "%llu bytes (%.1f MiB) and the process lacks CAP_IPC_LOCK: raise it "
	    "(`ulimit -l unlimited` in the shell that starts dmreplay, memlock in "
	    "/etc/security/limits.conf, LimitMEMLOCK=infinity for a systemd unit, "
	    "--ulimit memlock=-1 for docker) or use a smaller mr_size",
	    what, (unsigned long long)bytes, bytes / 1048576.0, (unsigned long long)rl.rlim_cur,
	    rl.rlim_cur / 1048576.0);
}
