/*
 * replay/tools/doctor_host.c - `dmreplay doctor`'s checks of the host: the
 * IOMMU mode (iommu_group type, kernel command line), the locked-memory
 * limit against mr_size (getrlimit or --memlock; CAP_IPC_LOCK in the
 * initial user namespace), physical and available memory, huge pages.
 */
#include <sys/resource.h>

#include "../roles.h" /* DMR_VERBS_CTL_BYTES (backends/verbs/verbs.h) */
#include "doctor_impl.h"

/* A "Key:   value kB" line of meminfo, in bytes (or a plain count); -1 if absent. */
static long long meminfo(const char *txt, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = txt; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			char *end;
			long long v = strtoll(p + kl + 1, &end, 10);
			while (*end == ' ')
				end++;
			return !strncmp(end, "kB", 2) ? v * 1024 : v;
		}
	}
	return -1;
}

/* CAP_IPC_LOCK in the effective set of this process in the initial user
 * namespace (ib_umem_get() checks capable(CAP_IPC_LOCK), which a capability
 * held in a child user namespace does not satisfy). */
static int has_ipc_lock(const doctor_t *d)
{
	char path[PATH_MAX];
	char *st = dmr_doc_read_all(P(path, "%s/self/status", d->proc));
	if (!st)
		return 0;
	int cap = 0;
	const char *p = strstr(st, "\nCapEff:");
	if (p) {
		unsigned long long v = strtoull(p + 8, NULL, 16);
		cap = (v >> CAP_IPC_LOCK_BIT) & 1;
	}
	free(st);
	if (!cap)
		return 0;
	char *um = dmr_doc_read_all(P(path, "%s/self/uid_map", d->proc));
	if (!um)
		return 0;
	unsigned long a, b, n;
	int init_ns =
	    sscanf(um, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0 && b == 0 && n == 4294967295ul;
	free(um);
	return init_ns;
}

void dmr_doc_check_iommu(doctor_t *d)
{
	char path[PATH_MAX];
	strv_t units;
	int have_units =
	    dmr_doc_list_dir(P(path, "%s/class/iommu", d->sysfs), &units) == 0 && units.n;
	char *unit_list = NULL;
	for (size_t i = 0; have_units && i < units.n; i++)
		sappend(&unit_list, "%s%s", i ? ", " : "", units.v[i]);
	if (have_units)
		dmr_doc_strv_free(&units);

	/* kernel command line, up to "--" (the rest goes to init) */
	char *cmd = dmr_doc_read_all(P(path, "%s/cmdline", d->proc));
	char *toks = NULL;
	int pt = 0, off = 0, on = 0, have_cmd = cmd != NULL;
	if (cmd) {
		char *save = NULL;
		for (char *t = strtok_r(cmd, " \t\n", &save); t;
		     t = strtok_r(NULL, " \t\n", &save)) {
			if (!strcmp(t, "--"))
				break;
			if (strncmp(t, "iommu", 5) && strncmp(t, "intel_iommu", 11) &&
			    strncmp(t, "amd_iommu", 9))
				continue;
			sappend(&toks, "%s%s", toks ? " " : "", t);
			if (!strcmp(t, "iommu=pt") || !strcmp(t, "iommu.passthrough=1"))
				pt = 1;
			else if (!strcmp(t, "iommu=off") || !strcmp(t, "intel_iommu=off") ||
				 !strcmp(t, "amd_iommu=off"))
				off = 1;
			else if (!strcmp(t, "intel_iommu=on") || !strcmp(t, "amd_iommu=on") ||
				 !strcmp(t, "iommu=force") || !strcmp(t, "iommu.passthrough=0") ||
				 !strcmp(t, "iommu=nopt"))
				on = 1;
		}
		free(cmd);
	}
	const char *cl = toks ? toks : (have_cmd ? "no iommu options" : "unreadable");

	/* the selected devices' IOMMU group type: the authoritative answer */
	char *dma = NULL, *ident = NULL;
	for (size_t i = 0; i < d->n_devs; i++) {
		const rdev_t *dv = &d->devs[i];
		if (!dv->selected || !dv->iommu_type[0])
			continue;
		if (!strcmp(dv->iommu_type, "identity"))
			sappend(&ident, "%s%s", ident ? ", " : "", dv->name);
		else
			sappend(&dma, "%s%s (iommu_group type %s)", dma ? ", " : "", dv->name,
				dv->iommu_type);
	}
	check_t *k;
	static const char advice[] =
	    "READs may return zeros (REFERENCE.md: data all zero with successful completions): "
	    "boot with iommu=pt (add it to GRUB_CMDLINE_LINUX, update-grub, reboot); the verbs "
	    "backend's canary catches it before a run";
	if (dma) {
		k = dmr_doc_add(
		    d, S_WARN, "iommu", "",
		    "IOMMU translating DMA for %s, not passthrough; kernel command line: %s", dma,
		    cl);
		dmr_doc_advise(k, "%s", advice);
	} else if (ident) {
		k = dmr_doc_add(d, S_OK, "iommu", "",
				"passthrough for %s (iommu_group type identity); "
				"kernel command line: %s",
				ident, cl);
	} else if (!have_units) {
		k = dmr_doc_add(
		    d, S_OK, "iommu", "",
		    "no IOMMU registered (%s/class/iommu %s); kernel "
		    "command line: %s",
		    d->sysfs, exists(P(path, "%s/class/iommu", d->sysfs)) ? "empty" : "absent", cl);
	} else if (pt) {
		k = dmr_doc_add(d, S_OK, "iommu", "",
				"IOMMU %s in passthrough (kernel command line: %s)", unit_list, cl);
	} else if (off) {
		k = dmr_doc_add(d, S_OK, "iommu", "",
				"IOMMU %s registered, disabled on the kernel command "
				"line (%s)",
				unit_list, cl);
	} else {
		k = dmr_doc_add(
		    d, S_WARN, "iommu", "",
		    "IOMMU enabled (%s%s) and not in passthrough (kernel command line: %s)",
		    unit_list, on ? ", forced on" : "", cl);
		dmr_doc_advise(k, "%s", advice);
	}
	dmr_doc_cset(k, "units", unit_list ? json_string(unit_list) : json_null());
	dmr_doc_cset(k, "cmdline", json_string(toks ? toks : ""));
	free(unit_list);
	free(toks);
	free(dma);
	free(ident);
}

/* The MN's mr_size as the config gives it for this host (its own MN entry,
 * else mn[0], the one MN the CNs use in this version); 0 without config. */
static uint64_t cfg_mr_size(const doctor_t *d)
{
	if (!d->have_cfg)
		return 0;
	if (d->host_mn) {
		for (size_t i = 0; i < d->cfg.n; i++)
			if (d->cfg.nodes[i].mn && d->cfg.nodes[i].ip[0] &&
			    dmr_doc_host_has(d, AF_INET, &d->cfg.nodes[i].in) &&
			    d->cfg.nodes[i].mr_size)
				return d->cfg.nodes[i].mr_size;
	}
	for (size_t i = 0; i < d->cfg.n; i++)
		if (d->cfg.nodes[i].mn)
			return d->cfg.nodes[i].mr_size;
	return 0;
}

/*
 * What a role locks (issue #15 B09/B28), as backends/verbs registers it:
 *  - the MN (verbs_mn.c dmr_verbs_mn_start): mr_size rounded up to 64 B
 *    plus the DMR_VERBS_CTL_BYTES (8 KiB) control page, one MR;
 *  - a CN (verbs.c, checked before its first ibv_reg_mr): its image of
 *    the MN region plus the 8 KiB control page; the image is the trace's
 *    footprint (or --mr-size) and the CN refuses an MN region smaller than
 *    it, so the MN's mr_size is its upper bound, which doctor (without the
 *    trace) checks.
 * A host that is both needs the larger (the MN's): each process has the
 * limit on its own.
 */
static uint64_t role_need(uint64_t mr, int cn_only)
{
	if (!mr)
		return 0;
	if (cn_only)
		return mr + DMR_VERBS_CTL_BYTES;
	return ((mr + 63) & ~63ull) + DMR_VERBS_CTL_BYTES;
}

void dmr_doc_check_memory(doctor_t *d)
{
	uint64_t lim = d->memlock;
	if (!d->have_memlock) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
			lim = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
		else
			lim = 0;
	}
	char ls[32] = "unlimited", ms[32], ns[32];
	if (lim != UINT64_MAX)
		dmr_doc_hbytes(ls, sizeof(ls), lim);
	uint64_t mr = cfg_mr_size(d);
	int cn_only = d->host_known && d->host_cn && !d->host_mn;
	uint64_t need = role_need(mr, cn_only);
	const char *src = d->have_memlock ? "--memlock" : "getrlimit";
	char whats[160];
	check_t *k;
	if (!mr) {
		k = dmr_doc_add(d, S_INFO, "memlock", "", "locked-memory limit %s (%s); %s", ls,
				src, "no mr_size to compare (give --config)");
	} else {
		dmr_doc_hbytes(ms, sizeof(ms), mr);
		sfmt(ns, sizeof(ns), "%llu bytes", (unsigned long long)need);
		if (cn_only)
			sfmt(whats, sizeof(whats),
			     "the CN's image of the MN region (at most mr_size %s) + the 8 KiB "
			     "control page",
			     ms);
		else
			sfmt(whats, sizeof(whats),
			     "the MN region (mr_size %s) + the 8 KiB control page", ms);
		if (lim == UINT64_MAX || lim >= need) {
			k = dmr_doc_add(d, S_OK, "memlock", "",
					"locked-memory limit %s (%s) >= %s: %s", ls, src, ns,
					whats);
		} else if (has_ipc_lock(d)) {
			k = dmr_doc_add(
			    d, S_OK, "memlock", "",
			    "locked-memory limit %s (%s) < %s (%s), but this process has "
			    "CAP_IPC_LOCK: registration is not limited",
			    ls, src, ns, whats);
			dmr_doc_advise(
			    k, "run dmreplay the same way (a process without CAP_IPC_LOCK needs "
			       "`ulimit -l unlimited`)");
		} else {
			k = dmr_doc_add(d, S_FAIL, "memlock", "",
					"locked-memory limit %s (%s) < %s (%s): `dmreplay %s` "
					"refuses to start",
					ls, src, ns, whats, cn_only ? "cn" : "mn");
			dmr_doc_advise(k,
				       "raise it: `ulimit -l unlimited` in the shell that starts "
				       "dmreplay, or `* - memlock unlimited` in "
				       "/etc/security/limits.conf (new login); systemd: "
				       "LimitMEMLOCK=infinity; "
				       "docker: --ulimit memlock=-1");
		}
	}
	dmr_doc_cset(k, "need_bytes", need ? json_integer((json_int_t)need) : json_null());
	dmr_doc_cset(k, "role", mr ? json_string(cn_only ? "cn" : "mn") : json_null());
	dmr_doc_cset(k, "limit_bytes",
		     lim == UINT64_MAX ? json_null() : json_integer((json_int_t)lim));
	dmr_doc_cset(k, "unlimited", json_boolean(lim == UINT64_MAX));
	dmr_doc_cset(k, "mr_size", mr ? json_integer((json_int_t)mr) : json_null());

	char path[PATH_MAX];
	char *mi = dmr_doc_read_all(P(path, "%s/meminfo", d->proc));
	if (mr && !cn_only) {
		long long tot = mi ? meminfo(mi, "MemTotal") : -1;
		long long avail = mi ? meminfo(mi, "MemAvailable") : -1;
		char ts[32], as[32];
		dmr_doc_hbytes(ms, sizeof(ms), mr);
		if (tot < 0) {
			k = dmr_doc_add(d, S_INFO, "memory", "", "MemTotal unreadable (%s)", path);
		} else {
			dmr_doc_hbytes(ts, sizeof(ts), (uint64_t)tot);
			dmr_doc_hbytes(as, sizeof(as), avail < 0 ? 0 : (uint64_t)avail);
			if ((uint64_t)tot < mr) {
				k = dmr_doc_add(
				    d, S_FAIL, "memory", "",
				    "mr_size %s > physical memory %s: the MN cannot populate it",
				    ms, ts);
				dmr_doc_advise(k, "lower mr_size or use a node with more memory");
			} else if (avail >= 0 && (uint64_t)avail < mr) {
				k = dmr_doc_add(d, S_WARN, "memory", "",
						"mr_size %s > available memory %s (of %s)", ms, as,
						ts);
				dmr_doc_advise(
				    k, "free memory on the MN or lower mr_size: populating the MR "
				       "may swap or trigger the OOM killer");
			} else {
				k = dmr_doc_add(d, S_OK, "memory", "",
						"mr_size %s fits: %s available of %s", ms, as, ts);
			}
		}
		dmr_doc_cset(k, "mem_total", tot >= 0 ? json_integer(tot) : json_null());
		dmr_doc_cset(k, "mem_available", avail >= 0 ? json_integer(avail) : json_null());
	}
	long long ht = mi ? meminfo(mi, "HugePages_Total") : -1;
	long long hf = mi ? meminfo(mi, "HugePages_Free") : -1;
	long long hs = mi ? meminfo(mi, "Hugepagesize") : -1;
	char hss[32] = "?";
	if (hs > 0)
		dmr_doc_hbytes(hss, sizeof(hss), (uint64_t)hs);
	if (ht < 0)
		k = dmr_doc_add(d, S_INFO, "hugepages", "", "unknown (no %s/meminfo)", d->proc);
	else
		k = dmr_doc_add(
		    d, S_INFO, "hugepages", "",
		    "%lld pages of %s configured, %lld free (optional: dmreplay's MR uses "
		    "ordinary pages)",
		    ht, hss, hf < 0 ? 0 : hf);
	dmr_doc_cset(k, "total", ht >= 0 ? json_integer(ht) : json_null());
	dmr_doc_cset(k, "free", hf >= 0 ? json_integer(hf) : json_null());
	free(mi);
}
