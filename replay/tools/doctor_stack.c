/*
 * replay/tools/doctor_stack.c - `dmreplay doctor`: the RDMA stack between
 * the kernel's devices and a process (issue #15 B31, B32):
 *  - the user-space provider of each selected device: libibverbs lists a
 *    kernel device only when a provider claims it, and it finds providers
 *    through the "driver NAME" lines of <dir>/NAME.driver (rdma-core's
 *    libibverbs.d, package ibverbs-providers on Debian). Without one,
 *    ibv_get_device_list() returns nothing although /sys/class/infiniband
 *    shows the device: the fix is the package, not `rdma link add`;
 *  - the rdma_rxe module: loaded (<proc>/modules, <sysfs>/module/rdma_rxe)
 *    while no rxe device exists means `rdma link add` was not run or failed
 *    (the kernel log says why: e.g. rdma_rxe could not init crc32).
 */
#include <dirent.h>

#include "doctor_impl.h"

/* The provider rdma-core uses for a kernel driver (the PCI driver behind
 * <dev>/device/driver; rdma-core's providers/ directory names them). */
static const char *provider_of(const rdev_t *dv)
{
	static const struct {
		const char *drv, *prov;
	} map[] = {{"mlx5_core", "mlx5"},   {"mlx5_ib", "mlx5"},
		   {"mlx4_core", "mlx4"},   {"mlx4_ib", "mlx4"},
		   {"bnxt_en", "bnxt_re"},  {"bnxt_re", "bnxt_re"},
		   {"irdma", "irdma"},	    {"efa", "efa"},
		   {"hns3", "hns"},	    {"hns_roce_hw_v2", "hns"},
		   {"cxgb4", "cxgb4"},	    {"qede", "qedr"},
		   {"qedr", "qedr"},	    {"vmw_pvrdma", "vmw_pvrdma"},
		   {"erdma", "erdma"},	    {"mana", "mana"},
		   {"mana_ib", "mana"},	    {"hfi1", "hfi1verbs"},
		   {"ib_qib", "ipathverbs"}};
	if (dv->soft)
		return "rxe";
	if (dv->iwarp && !dv->driver[0] && dv->parent[0])
		return "siw";
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(dv->driver, map[i].drv))
			return map[i].prov;
	return NULL;
}

const char *dmr_doc_ibv_dir(const doctor_t *d, char buf[PATH_MAX])
{
	if (d->ibv_dir)
		return d->ibv_dir;
	if (d->sysfs_default)
		return "/etc/libibverbs.d";
	/* a fake tree: ROOT/sys -> ROOT/etc/libibverbs.d */
	char root[PATH_MAX];
	scpy(root, sizeof(root), d->sysfs);
	char *slash = strrchr(root, '/');
	if (slash)
		*slash = '\0';
	else
		scpy(root, sizeof(root), ".");
	return P(buf, "%s/etc/libibverbs.d", root);
}

/* The providers named by <dir>/NAME.driver ("driver NAME" lines), ", "-
 * separated, malloc'd ("" when none); NULL when dir cannot be read. */
static char *providers_in(const char *dir)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return NULL;
	char *list = xstrdup("");
	struct dirent *de;
	while ((de = readdir(dh))) {
		size_t n = strlen(de->d_name);
		if (n < 8 || strcmp(de->d_name + n - 7, ".driver") != 0)
			continue;
		char path[PATH_MAX];
		char *txt = dmr_doc_read_all(P(path, "%s/%s", dir, de->d_name));
		if (!txt)
			continue;
		char *save = NULL;
		for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char name[64];
			if (sscanf(l, " driver %63s", name) == 1 && !dmr_doc_in_list(list, name))
				sappend(&list, "%s%s", list[0] ? ", " : "", name);
		}
		free(txt);
	}
	closedir(dh);
	return list;
}

void dmr_doc_check_providers(doctor_t *d)
{
	char buf[PATH_MAX];
	const char *dir = dmr_doc_ibv_dir(d, buf);
	char *have = providers_in(dir);
	d->provider_missing = 0;
	for (size_t i = 0; i < d->n_devs; i++) {
		rdev_t *dv = &d->devs[i];
		if (!dv->selected)
			continue;
		const char *want = provider_of(dv);
		check_t *k;
		if (!have || !have[0]) {
			d->provider_missing = 1;
			k = dmr_doc_add(
			    d, S_FAIL, "provider", dv->name,
			    "the kernel has %s but libibverbs has no user-space provider "
			    "at all: %s %s, so ibv_get_device_list() lists no device",
			    dv->name, dir, have ? "has no *.driver file" : "is missing");
			dmr_doc_advise(k,
				       "install the providers (apt-get install ibverbs-providers; "
				       "rdma-core elsewhere), which puts %s.driver in "
				       "/etc/libibverbs.d; the device itself exists: do not create "
				       "it again",
				       want ? want : "<provider>");
		} else if (want && !dmr_doc_in_list(have, want)) {
			d->provider_missing = 1;
			k = dmr_doc_add(d, S_FAIL, "provider", dv->name,
					"the kernel has %s but no libibverbs provider '%s' is "
					"configured (%s lists: %s), so ibv_get_device_list() does "
					"not list it",
					dv->name, want, dir, have);
			dmr_doc_advise(k,
				       "install the provider (apt-get install ibverbs-providers: "
				       "%s/%s.driver with \"driver %s\"); the device itself "
				       "exists: do not create it again",
				       dir, want, want);
		} else if (want) {
			k = dmr_doc_add(d, S_OK, "provider", dv->name,
					"libibverbs provider '%s' configured (%s)", want, dir);
		} else {
			k = dmr_doc_add(d, S_INFO, "provider", dv->name,
					"kernel driver %s: which libibverbs provider claims it is "
					"not known here; %s lists: %s",
					dv->driver[0] ? dv->driver : "unknown", dir, have);
			dmr_doc_advise(k, "`ibv_devices` must list %s", dv->name);
		}
		dmr_doc_cset(k, "provider", want ? json_string(want) : json_null());
		dmr_doc_cset(k, "dir", json_string(dir));
		dmr_doc_cset(k, "configured", have ? json_string(have) : json_null());
	}
	free(have);
}

int dmr_doc_rxe_loaded(const doctor_t *d, char *how, size_t len)
{
	char path[PATH_MAX];
	if (is_dir(P(path, "%s/module/rdma_rxe", d->sysfs))) {
		scpy(how, len, path);
		return 1;
	}
	char *mods = dmr_doc_read_all(P(path, "%s/modules", d->proc));
	int yes = 0;
	if (mods) {
		for (char *l = mods; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
			if (!strncmp(l, "rdma_rxe ", 9)) {
				yes = 1;
				break;
			}
		free(mods);
	}
	if (yes)
		scpy(how, len, path);
	return yes;
}

void dmr_doc_check_rxe_module(doctor_t *d)
{
	char how[PATH_MAX];
	for (size_t i = 0; i < d->n_devs; i++)
		if (d->devs[i].soft)
			return; /* an rxe device exists */
	if (!dmr_doc_rxe_loaded(d, how, sizeof(how)))
		return;
	check_t *k = dmr_doc_add(d, S_INFO, "rxe", "",
				 "rdma_rxe is loaded (%s) but no rxe device exists", how);
	dmr_doc_advise(k, "%s", DMR_DOC_RXE_ADVICE);
}
