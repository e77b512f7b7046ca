/*
 * backends/verbs/verbs_dm.c - the lock-word region served from memory of
 * its own (DMR_BE_CTL_LOCK_REGION, backends/backend.h; issue 16 item 3,
 * docs/MODEL.md "Device memory"): the lock words apart from their records
 * (core/layout.h dmr_layout_locks) in NIC device memory (--dm-locks) or in
 * a host MR of their own (--locks-apart). Device memory follows rdma-core's
 * man pages (libibverbs/man/ibv_alloc_dm.3, ibv_reg_dm_mr, ibv_memcpy_to_dm):
 * ibv_alloc_dm of the region's size per MN on the device, ibv_reg_dm_mr
 * with IBV_ACCESS_ZERO_BASED (a device-memory MR is addressed from 0) and
 * remote READ/WRITE/ATOMIC, initialised with ibv_memcpy_to_dm from the
 * region's words; the host variant is a buffer of its own (ibv_reg_mr),
 * initialised and read back the same way with memcpy. mn_memory() copies
 * the words back into the region's range (dmr_verbs_lock_sync, when WRs
 * completed since the last copy), which RDMA no longer addresses. Every worker's QP to MN m gets
 * the second MR's address and rkey (vb_qp_t.lk_*); the post path sends a WR whose remote offset
 * falls in [lk_off, lk_off + lk_len) there. Loopback only: the MNs are this
 * process's, so their MRs are known here; the roles' MN processes do not
 * know the layout (not done yet: refused, DMR_ERR_INVALID).
 */
#include "verbs_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

dmr_status_t dmr_verbs_dm_check(const char *dev, uint64_t max_dm, uint64_t need, uint32_t mns,
				dmr_err_t *err)
{
	if (max_dm == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: --dm-locks: device %s offers no device memory "
				   "(ibv_query_device_ex: max_dm_size 0); lock words stay in "
				   "host memory",
				   dev);
	if (need > max_dm) {
		char per[96] = "";
		if (mns > 1)
			snprintf(per, sizeof(per), " (%u MNs on this device x %llu bytes)", mns,
				 (unsigned long long)(need / mns));
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "verbs: --dm-locks: device %s: lock words need %llu bytes of "
				   "device memory%s, the device offers %llu (ibv_query_device_ex "
				   "max_dm_size)",
				   dev, (unsigned long long)need, per, (unsigned long long)max_dm);
	}
	return DMR_OK;
}

/* The device's max_dm_size (0: none, or the query failed). */
static uint64_t max_dm_of(vb_t *vb)
{
	struct ibv_device_attr_ex ax;
	memset(&ax, 0, sizeof(ax));
	if (vb->ctx && ibv_query_device_ex(vb->ctx, NULL, &ax) == 0)
		return ax.max_dm_size;
	return 0;
}

dmr_status_t dmr_verbs_dm_refuse(vb_t *vb, dmr_err_t *err)
{
	uint64_t max_dm = max_dm_of(vb);
	const char *dev = vb->ctx ? ibv_get_device_name(vb->ctx->device) : "(no device)";
	dmr_status_t st = dmr_verbs_dm_check(dev, max_dm, 0, 1, err);
	if (st != DMR_OK)
		return st;
	return dmr_err_set(err, DMR_ERR_INVALID,
			   "verbs: device memory: device %s offers %llu bytes, but verbs puts "
			   "only the lock-word region there (run --dm-locks: the lock words "
			   "apart from their records), not ranges of the record MR (bench "
			   "--dm: the sim's model)",
			   dev, (unsigned long long)max_dm);
}

/* MN m's second MR over the lock-word region: device memory or host. */
static dmr_status_t mn_lock_mr(vb_t *vb, uint32_t m, const dmr_be_lock_region_t *r,
			       uint64_t *raddr_p, dmr_err_t *err)
{
	vb_mn_t *mn = &vb->mn[m];
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t *words = (uint8_t *)mn->mem + r->off;
	if (!r->dm) {
		/* a buffer of its own (not the region's range: a WR that missed
		 * the lock MR would land in the region and be seen), so the
		 * host variant runs the device-memory path's copies too */
		if (posix_memalign(&mn->lk_host, 4096, r->len) != 0) {
			mn->lk_host = NULL;
			return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, (int)m,
					      "the lock-word region: %llu bytes of host memory",
					      (unsigned long long)r->len);
		}
		memcpy(mn->lk_host, words, r->len);
		mn->lk_mr = ibv_reg_mr(mn->pd, mn->lk_host, r->len, acc);
		if (!mn->lk_mr)
			return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, (int)m,
					      "ibv_reg_mr of the lock-word region (%llu bytes, "
					      "host memory): %s",
					      (unsigned long long)r->len, strerror(errno));
		*raddr_p = (uint64_t)(uintptr_t)mn->lk_host;
		return DMR_OK;
	}
	struct ibv_alloc_dm_attr da = {.length = r->len};
	mn->lk_dm = ibv_alloc_dm(vb->ctx, &da);
	if (!mn->lk_dm)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, (int)m,
				      "ibv_alloc_dm of %llu bytes (the lock words): %s",
				      (unsigned long long)r->len, strerror(errno));
	int rc = ibv_memcpy_to_dm(mn->lk_dm, 0, words, r->len);
	if (rc)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, (int)m,
				      "ibv_memcpy_to_dm of %llu bytes (the lock words): %s",
				      (unsigned long long)r->len, strerror(rc > 0 ? rc : errno));
	mn->lk_mr = ibv_reg_dm_mr(mn->pd, mn->lk_dm, 0, r->len, acc | IBV_ACCESS_ZERO_BASED);
	if (!mn->lk_mr)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, (int)m,
				      "ibv_reg_dm_mr of %llu bytes (remote READ/WRITE/ATOMIC, "
				      "zero-based): %s",
				      (unsigned long long)r->len, strerror(errno));
	*raddr_p = 0; /* zero-based */
	return DMR_OK;
}

dmr_status_t dmr_verbs_lock_region(vb_t *vb, const dmr_be_lock_region_t *r, dmr_err_t *err)
{
	if (!r || r->len == 0 || r->off % 64 || r->len % 8 || r->off > vb->be.cfg.mr_size ||
	    r->len > vb->be.cfg.mr_size - r->off)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "lock-word region [%llu, +%llu) is not an aligned range of "
				      "the %llu-byte MN region",
				      r ? (unsigned long long)r->off : 0ull,
				      r ? (unsigned long long)r->len : 0ull,
				      (unsigned long long)vb->be.cfg.mr_size);
	if (vb->lk_len)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "the lock-word region is placed already");
	if (vb->rpc_mode) /* verbs_rpc.c: the handlers read them in the region */
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "lock words apart with RPCs (--rpc, aura's a1): the MN's "
				      "CPU takes them in the region");
	if (vb->role) /* the MN processes serve mr_size bytes and know no layout */
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "%s: lock words apart from their records are not done for "
				      "the roles yet (the MN processes do not know the layout, and "
				      "the end barrier reads back the tables only); run loopback "
				      "(dmreplay run --backend verbs)",
				      r->dm ? "--dm-locks" : "--locks-apart");
	uint32_t mns = vb->be.cfg.mns;
	if (r->dm) {
		const char *dev = ibv_get_device_name(vb->ctx->device);
		dmr_status_t st = dmr_verbs_dm_check(dev, max_dm_of(vb), r->len * mns, mns, err);
		if (st != DMR_OK)
			return st;
	}
	for (uint32_t m = 0; m < mns; m++) {
		uint64_t raddr = 0;
		dmr_status_t st = mn_lock_mr(vb, m, r, &raddr, err);
		if (st != DMR_OK)
			return st; /* what was made: dmr_verbs_lock_region_free at close */
		for (uint32_t w = 0; w < vb->nwalloc; w++) {
			vb_qp_t *q = &vb->w[w].qps[m];
			q->lk_off = r->off;
			q->lk_len = r->len;
			q->lk_raddr = raddr;
			q->lk_rkey = vb->mn[m].lk_mr->rkey;
		}
	}
	vb->lk_off = r->off;
	vb->lk_len = r->len;
	return DMR_OK;
}

void dmr_verbs_lock_sync(vb_t *vb, uint32_t m)
{
	vb_mn_t *mn = &vb->mn[m];
	if (!mn->mem || (!mn->lk_dm && !mn->lk_host))
		return;
	/* only when WRs completed since the last copy: the verifiers call
	 * mn_memory once per record read (a copy of megabytes each time would
	 * take hours under emulation) */
	uint64_t done = 0;
	for (uint32_t i = 0; vb->w && i < vb->nwalloc; i++)
		done += vb->w[i].st.verbs;
	if (mn->lk_synced && done == mn->lk_done)
		return;
	if (mn->lk_dm)
		(void)ibv_memcpy_from_dm((uint8_t *)mn->mem + vb->lk_off, mn->lk_dm, 0, vb->lk_len);
	else
		memcpy((uint8_t *)mn->mem + vb->lk_off, mn->lk_host, vb->lk_len);
	mn->lk_done = done;
	mn->lk_synced = 1;
}

void dmr_verbs_lock_region_free(vb_mn_t *mn)
{
	if (mn->lk_mr)
		ibv_dereg_mr(mn->lk_mr);
	mn->lk_mr = NULL;
	if (mn->lk_dm)
		ibv_free_dm(mn->lk_dm);
	mn->lk_dm = NULL;
	free(mn->lk_host);
	mn->lk_host = NULL;
	mn->lk_synced = 0;
}
