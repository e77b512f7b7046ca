/*
 * replay/tools/doctor_canary.c - `dmreplay doctor`'s loopback canary: the
 * verbs backend opened on the selected port, which WRITEs a pattern, READs
 * it back and checks a CAS's old value.
 */
#include "doctor_impl.h"
#include "tools_util.h"

/* Loopback canary on the selected (or first ACTIVE) port: open the verbs
 * backend with a 64 KiB region, whose open() writes a pattern, reads it back
 * (all zeros = DMA/IOMMU problem) and checks a CAS's returned old value
 * (byte order, atomics), then close it. Only on the real sysfs (not with
 * injected device data) and when built with the verbs backend. */
void dmr_doc_check_canary(doctor_t *d)
{
	const rdev_t *dv = NULL;
	const port_t *pt = NULL;
	for (size_t i = 0; i < d->n_devs && !pt; i++) {
		if (d->explicit_sel && strcmp(d->devs[i].name, d->sel_dev) != 0)
			continue;
		for (size_t j = 0; j < d->devs[i].n_ports && !pt; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if ((!d->sel_port || p->num == d->sel_port) && port_active(p)) {
				dv = &d->devs[i];
				pt = p;
			}
		}
	}
	if (!pt)
		return; /* the port checks above already failed */
	char sub[128];
	dmr_doc_port_subject(dv, pt, sub, sizeof(sub));
	check_t *k;
	if (!d->sysfs_default) {
		k = dmr_doc_add(d, S_INFO, "canary", sub,
				"loopback READ/CAS canary: not run on injected "
				"device data (--sysfs)");
		return;
	}
#ifdef DMR_HAVE_VERBS
	dmr_err_t err;
	memset(&err, 0, sizeof(err));
	double ms;
	dmr_status_t st = dmr_tools_verbs_probe(
	    dv->name, pt->num, d->sel_gid >= 0 ? (int)d->sel_gid : -1, 64 * 1024, &ms, &err);
	if (st == DMR_OK) {
		k = dmr_doc_add(
		    d, S_OK, "canary", sub,
		    "loopback through the verbs backend (64 KiB MR, RC QP via rdma_cm): WRITE, "
		    "READ back and CAS old value checked (%.1f ms)",
		    ms);
	} else {
		k = dmr_doc_add(d, S_FAIL, "canary", sub,
				"loopback through the verbs backend failed: %s",
				err.msg[0] ? err.msg : dmr_status_string(st));
		if (d->provider_missing)
			dmr_doc_advise(k, "the device exists in the kernel but libibverbs has no "
					  "provider for it (see the provider line): install "
					  "ibverbs-providers; do not create the device again");
		else
			dmr_doc_advise(
			    k,
			    "all zeros read back: IOMMU/DMA (see the iommu line); a wrong CAS old "
			    "value: byte order or atomics; a connect error: GID/address (see the "
			    "gid "
			    "lines) or memlock");
	}
#else
	k = dmr_doc_add(d, S_INFO, "canary", sub,
			"loopback READ/CAS canary: not run: built without the verbs backend "
			"(-DDMR_VERBS=ON needs libibverbs-dev, librdmacm-dev)");
#endif
	(void)k;
}
