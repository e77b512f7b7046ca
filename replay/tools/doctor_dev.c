/*
 * replay/tools/doctor_dev.c - `dmreplay doctor`'s checks of the RDMA
 * devices, their ports (state, link layer, speed, active MTU) and GID
 * tables (a RoCE v2 GID carrying this node's IPv4 address; the config's GID
 * index), and of user-space verbs access.
 */
#include <errno.h>
#include <unistd.h>

#include "doctor_impl.h"

static const char *const gclass_str[] = {"own-ipv4", "foreign-ipv4", "link-local-ipv4",
					 "loopback", "link-local",   "ipv6"};

static rdev_t *find_dev(doctor_t *d, const char *name)
{
	for (size_t i = 0; i < d->n_devs; i++)
		if (!strcmp(d->devs[i].name, name))
			return &d->devs[i];
	return NULL;
}

static char *dev_names(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		sappend(&s, "%s%s", i ? ", " : "", d->devs[i].name);
	return s ? s : xstrdup("");
}

void dmr_doc_port_subject(const rdev_t *dv, const port_t *p, char *buf, size_t len)
{
	sfmt(buf, len, "%s:%d", dv->name, p->num);
}

void dmr_doc_check_devices(doctor_t *d)
{
	char *names = dev_names(d);
	rdev_t *sel = d->explicit_sel ? find_dev(d, d->sel_dev) : NULL;
	if (d->explicit_sel && !sel) {
		check_t *k;
		if (d->cfg_dev_index >= 0)
			k = dmr_doc_add(
			    d, S_FAIL, "devices", "",
			    "config device index %ld, but this host has %zu device%s (%s)",
			    d->cfg_dev_index, d->n_devs, d->n_devs == 1 ? "" : "s", names);
		else
			k = dmr_doc_add(
			    d, S_FAIL, "devices", "",
			    "%s names device %s, which this host does not have (have: %s)",
			    d->sel_from, d->sel_dev, names);
		dmr_doc_advise(k, "use one of: %s (`rdma link` shows each device's netdev)", names);
		free(names);
		return;
	}
	check_t *k;
	if (sel) {
		k = dmr_doc_add(d, S_OK, "devices", "",
				"%zu RDMA device%s (%s); checking %s (from %s)", d->n_devs,
				d->n_devs == 1 ? "" : "s", names, sel->name, d->sel_from);
		sel->selected = 1;
	} else {
		k = dmr_doc_add(
		    d, S_OK, "devices", "",
		    "%zu RDMA device%s (%s); checking all (no --device and none in the config: "
		    "the verbs backend opens index 0 of ibv_get_device_list())",
		    d->n_devs, d->n_devs == 1 ? "" : "s", names);
		for (size_t i = 0; i < d->n_devs; i++)
			d->devs[i].selected = 1;
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_devs; i++)
		json_array_append_new(arr, json_string(d->devs[i].name));
	dmr_doc_cset(k, "devices", arr);
	if (sel && d->cfg_dev_index >= 0) {
		if (d->cfg_dev_given)
			k = dmr_doc_add(
			    d, S_INFO, "devices", "",
			    "config device index %ld = %s, assuming ibv_get_device_list() lists "
			    "devices in name order",
			    d->cfg_dev_index, sel->name);
		else
			k = dmr_doc_add(
			    d, S_INFO, "devices", "",
			    "the config names no device: the verbs backend opens index 0 = %s, "
			    "assuming ibv_get_device_list() lists devices in name order",
			    sel->name);
		dmr_doc_advise(
		    k, "confirm with `ibv_devices` (its order is the index)%s",
		    d->cfg_dev_given ? "" : "; name the device (devname / ib_dev_id) to be sure");
	}
	if (d->have_cfg && d->host_node && d->host_node->devname[0] &&
	    !all_digits(d->host_node->devname) && d->device_opt &&
	    strcmp(d->host_node->devname, d->sel_dev)) {
		k = dmr_doc_add(d, S_WARN, "devices", "",
				"--device %s, but the config gives this host devname %s",
				d->sel_dev, d->host_node->devname);
		dmr_doc_advise(
		    k, "check the device the run will use; dmreplay's roles take devname from "
		       "the config");
	}
	free(names);
}

static char *faster_ports(const doctor_t *d, const rdev_t *self, const port_t *sp)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if ((&d->devs[i] == self && p == sp) || p->gbps < SLOW_GBPS)
				continue;
			sappend(&s, "%s%s:%d at %s%s", s ? ", " : "", d->devs[i].name, p->num,
				p->rate, port_active(p) ? "" : ", not ACTIVE");
		}
	return s;
}

static void check_gids(doctor_t *d, const rdev_t *dv, const port_t *p, const char *ps)
{
	char sub[96];
	size_t usable = 0;
	for (size_t i = 0; i < p->n_gids; i++) {
		const dgid_t *g = &p->gids[i];
		sfmt(sub, sizeof(sub), "%s[%d]", ps, g->index);
		const char *type = g->type[0] ? g->type : "type unknown";
		const char *nd = g->ndev[0] ? g->ndev : "no netdev";
		check_t *k;
		switch (g->cls) {
		case G_OWN4:
			k = dmr_doc_add(d, S_INFO, "gid", sub,
					"%s %s = IPv4 %s, this node's (%s)%s", type, g->text,
					g->ip4, nd, g->v2 ? "" : "; RoCE v1 is not routable");
			if (g->v2)
				usable++;
			break;
		case G_FOREIGN4:
			k = dmr_doc_add(d, S_WARN, "gid", sub,
					"%s %s = IPv4 %s, not an address of this host (%s)", type,
					g->text, g->ip4, nd);
			dmr_doc_advise(
			    k, "a GID mirrors an address of its netdev: if dmreplay runs in "
			       "another network namespace (container), run doctor there; else "
			       "the address was removed or the config uses another node's: use a "
			       "GID carrying this node's own IPv4 address");
			break;
		case G_LL4:
		case G_LOOP4:
			k = dmr_doc_add(d, S_INFO, "gid", sub, "%s %s = IPv4 %s, %s (%s)", type,
					g->text, g->ip4,
					g->cls == G_LL4 ? "link-local (169.254/16): not usable by "
							  "the verbs backend"
							: "loopback: rdma_cm does not work over "
							  "127.0.0.1",
					nd);
			break;
		case G_LL6:
			k = dmr_doc_add(
			    d, S_INFO, "gid", sub,
			    "%s %s, link-local (fe80::/10, from the MAC): not routable, not "
			    "used by "
			    "rdma_cm (%s)",
			    type, g->text, nd);
			break;
		default:
			k = dmr_doc_add(
			    d, S_INFO, "gid", sub,
			    "%s %s, IPv6%s: the verbs backend uses IPv4 GIDs (%s)", type, g->text,
			    dmr_doc_host_has(d, AF_INET6, g->raw) ? " (this node's)" : "", nd);
			break;
		}
		dmr_doc_cset_port(k, dv, p);
		dmr_doc_cset(k, "index", json_integer(g->index));
		dmr_doc_cset(k, "type", json_string(g->type));
		dmr_doc_cset(k, "address", json_string(g->text));
		dmr_doc_cset(k, "ipv4", g->ip4[0] ? json_string(g->ip4) : json_null());
		dmr_doc_cset(k, "ndev", json_string(g->ndev));
		dmr_doc_cset(k, "class", json_string(gclass_str[g->cls]));
	}

	/* does a RoCE v2 GID carry this node's own IPv4 address? */
	check_t *k;
	if (usable) {
		char *list = NULL;
		int first = -1;
		for (size_t i = 0; i < p->n_gids; i++)
			if (gid_usable(&p->gids[i])) {
				if (first < 0)
					first = p->gids[i].index;
				sappend(&list, "%s%d (%s)", list ? ", " : "", p->gids[i].index,
					p->gids[i].ip4);
			}
		k = dmr_doc_add(d, S_OK, "roce-gid", ps,
				"RoCE v2 GID%s with this node's IPv4 address: index %s",
				usable > 1 ? "s" : "", list);
		dmr_doc_cset(k, "gid_index", json_integer(first));
		free(list);
	} else {
		char *seen = NULL;
		for (size_t i = 0; i < p->n_gids; i++) {
			const dgid_t *g = &p->gids[i];
			const char *why = g->cls == G_LL6	 ? "link-local"
					  : g->cls == G_FOREIGN4 ? "foreign"
					  : g->cls == G_LL4	 ? "link-local IPv4"
					  : g->cls == G_LOOP4	 ? "loopback"
					  : g->cls == G_OWN4	 ? "own, but RoCE v1"
								 : "IPv6";
			sappend(&seen, "%s%d %s (%s)", seen ? ", " : "", g->index,
				g->ip4[0] ? g->ip4 : g->text, why);
		}
		k = dmr_doc_add(d, S_WARN, "roce-gid", ps,
				"no RoCE v2 GID carries an IPv4 address of this host; GIDs: %s",
				seen ? seen : "none");
		dmr_doc_advise(k,
			       "give %s this node's experiment-network IPv4 address (ip addr add "
			       "ADDR/PREFIX dev %s): the kernel then adds a RoCE v2 GID for it; "
			       "link-local and foreign GIDs cannot carry the cluster's traffic",
			       p->ndev[0] ? p->ndev : "the port's netdev",
			       p->ndev[0] ? p->ndev : "NETDEV");
		dmr_doc_cset(k, "gid_index", json_null());
		free(seen);
	}
	dmr_doc_cset_port(k, dv, p);

	/* the GID the config names */
	if (d->sel_gid >= 0) {
		const dgid_t *g = NULL;
		for (size_t i = 0; i < p->n_gids; i++)
			if (p->gids[i].index == d->sel_gid)
				g = &p->gids[i];
		int first = -1;
		for (size_t i = 0; i < p->n_gids && first < 0; i++)
			if (gid_usable(&p->gids[i]))
				first = p->gids[i].index;
		char alt[64];
		if (first >= 0)
			sfmt(alt, sizeof(alt), "%d or -1 (automatic)", first);
		else
			sfmt(alt, sizeof(alt), "-1 (automatic) once the address is assigned");
		if (!g) {
			k = dmr_doc_add(d, S_FAIL, "config-gid", ps,
					"config GID index %ld is empty on %s", d->sel_gid, ps);
			dmr_doc_advise(k, "set the GID index to %s", alt);
		} else if (!gid_usable(g)) {
			k = dmr_doc_add(
			    d, S_FAIL, "config-gid", ps,
			    "config GID index %ld is %s %s (%s): the verbs backend refuses it",
			    d->sel_gid, g->type[0] ? g->type : "type unknown",
			    g->ip4[0] ? g->ip4 : g->text, gclass_str[g->cls]);
			dmr_doc_advise(k, "set the GID index to %s", alt);
		} else {
			k = dmr_doc_add(d, S_OK, "config-gid", ps,
					"config GID index %ld is RoCE v2 %s, this node's",
					d->sel_gid, g->ip4);
		}
		dmr_doc_cset_port(k, dv, p);
		dmr_doc_cset(k, "gid_index", json_integer(d->sel_gid));
	}
}

static void check_port(doctor_t *d, rdev_t *dv, port_t *p)
{
	char ps[96];
	dmr_doc_port_subject(dv, p, ps, sizeof(ps));
	check_t *k;

	/* state, link layer */
	int active = port_active(p);
	sev_t bad = d->explicit_sel ? S_FAIL : S_WARN;
	k = dmr_doc_add(d, active ? S_OK : bad, "port", ps,
			"state %s, phys_state %s, link layer %s", p->state, p->phys, p->ll);
	if (!active) {
		if (!strcmp(p->ll, "InfiniBand") && p->state_num == 2)
			dmr_doc_advise(
			    k, "the port is INIT: no subnet manager configured it (start opensm "
			       "on the fabric)");
		else if (p->ndev[0])
			dmr_doc_advise(
			    k,
			    "bring the link up: ip link set %s up; check cable and switch port "
			    "(ethtool %s)",
			    p->ndev, p->ndev);
		else
			dmr_doc_advise(
			    k, "bring the link up (cable, switch port, subnet manager)%s",
			    d->explicit_sel ? "" : ", or select another device with --device");
	}
	dmr_doc_cset_port(k, dv, p);
	dmr_doc_cset(k, "state", json_string(p->state));
	dmr_doc_cset(k, "phys_state", json_string(p->phys));
	dmr_doc_cset(k, "link_layer", json_string(p->ll));
	dmr_doc_cset(k, "netdev", p->ndev[0] ? json_string(p->ndev) : json_null());

	/* speed */
	if (p->gbps < 0) {
		k = dmr_doc_add(d, S_INFO, "speed", ps, "rate unknown (%s)",
				p->rate[0] ? p->rate : "rate unreadable");
	} else if (p->gbps < SLOW_GBPS && dv->soft) {
		k = dmr_doc_add(
		    d, S_INFO, "speed", ps,
		    "%s: SoftRoCE reports its netdev %s's nominal speed; its throughput is "
		    "bound by the CPU",
		    p->rate, p->ndev[0] ? p->ndev : "");
	} else if (p->gbps < SLOW_GBPS) {
		char *fast = faster_ports(d, dv, p);
		k = dmr_doc_add(
		    d, S_WARN, "speed", ps,
		    "%s, slower than 25 Gb/s: control network? throughput will be ~1/100 of a "
		    "100 GbE port",
		    p->rate);
		if (fast)
			dmr_doc_advise(k,
				       "use the experiment network's device (--device, devname or "
				       "ib_dev_id in the config); faster here: %s",
				       fast);
		else
			dmr_doc_advise(
			    k, "use the experiment network's device (--device, devname or "
			       "ib_dev_id in the config); `rdma link` shows each device's netdev");
		free(fast);
	} else {
		k = dmr_doc_add(d, S_OK, "speed", ps, "%s", p->rate);
	}
	dmr_doc_cset_port(k, dv, p);
	dmr_doc_cset(k, "rate", json_string(p->rate));
	dmr_doc_cset(k, "gbps", p->gbps >= 0 ? json_real(p->gbps) : json_null());

	/* MTU */
	if (!p->mtu) {
		k = dmr_doc_add(d, S_INFO, "mtu", ps, "active MTU %s",
				p->mtu_how ? p->mtu_how : "unknown");
	} else if (p->mtu < 1024) {
		k = dmr_doc_add(d, S_WARN, "mtu", ps, "active MTU %u (%s): %s", p->mtu, p->mtu_how,
				p->mtu == 256 ? "256 halves performance"
					      : "below 1024 costs throughput");
		if (p->netdev_mtu)
			dmr_doc_advise(
			    k,
			    "set 1024 or 4096: raise %s's MTU to at least %u for 1024 or %u "
			    "for 4096 (ip link set dev %s mtu 9000; the switch must allow it)",
			    p->ndev, 1024 + p->hdr, 4096 + p->hdr, p->ndev);
		else
			dmr_doc_advise(k, "set 1024 or 4096 (port and switch/subnet manager MTU)");
	} else {
		k = dmr_doc_add(d, S_OK, "mtu", ps, "active MTU %u (%s)", p->mtu, p->mtu_how);
	}
	dmr_doc_cset_port(k, dv, p);
	dmr_doc_cset(k, "mtu", p->mtu ? json_integer(p->mtu) : json_null());
	dmr_doc_cset(k, "mtu_source", json_string(p->mtu_how ? p->mtu_how : ""));
	dmr_doc_cset(k, "netdev_mtu", p->netdev_mtu ? json_integer(p->netdev_mtu) : json_null());

	/* GIDs */
	if (dv->iwarp) {
		k = dmr_doc_add(d, S_INFO, "roce-gid", ps, "iWARP device: no RoCE GIDs to check");
		dmr_doc_cset_port(k, dv, p);
	} else if (!is_eth(p)) {
		k = dmr_doc_add(
		    d, S_INFO, "roce-gid", ps,
		    "link layer %s: RoCE GID checks do not apply (addressing by LID; rdma_cm "
		    "uses IPoIB)",
		    p->ll);
		dmr_doc_cset_port(k, dv, p);
	} else {
		check_gids(d, dv, p, ps);
	}
}

void dmr_doc_check_device(doctor_t *d, rdev_t *dv)
{
	check_t *k;
	if (!dv->selected) {
		char *ps = NULL;
		for (size_t i = 0; i < dv->n_ports; i++)
			sappend(&ps, "%s%d %s %s", ps ? ", " : "", dv->ports[i].num,
				dv->ports[i].state, dv->ports[i].rate);
		k = dmr_doc_add(d, S_INFO, "device", dv->name,
				"not selected, not checked (ports: %s)", ps ? ps : "none");
		dmr_doc_cset(k, "device", json_string(dv->name));
		dmr_doc_cset(k, "selected", json_false());
		free(ps);
		return;
	}
	const char *kind = dv->soft ? "SoftRoCE (rdma_rxe)" : dv->iwarp ? "iWARP" : "hardware";
	char *desc = xasprintf("%s", kind);
	if (dv->node_type[0])
		sappend(&desc, ", node type %s", dv->node_type);
	if (dv->driver[0])
		sappend(&desc, ", driver %s", dv->driver);
	if (dv->fw[0])
		sappend(&desc, ", firmware %s", dv->fw);
	if (dv->board[0])
		sappend(&desc, ", board %s", dv->board);
	if (dv->parent[0])
		sappend(&desc, ", netdev %s", dv->parent);
	k = dmr_doc_add(d, S_INFO, "device", dv->name, "%s", desc);
	free(desc);
	dmr_doc_cset(k, "device", json_string(dv->name));
	dmr_doc_cset(k, "selected", json_true());
	dmr_doc_cset(k, "kind", json_string(kind));
	dmr_doc_cset(k, "driver", json_string(dv->driver));
	dmr_doc_cset(k, "fw_ver", json_string(dv->fw));

	/* user-space verbs */
	char path[PATH_MAX];
	if (!dv->uverbs[0]) {
		k = dmr_doc_add(
		    d, S_FAIL, "uverbs", dv->name,
		    "no %s/class/infiniband_verbs/uverbs* for %s: user-space verbs cannot open it",
		    d->sysfs, dv->name);
		dmr_doc_advise(k, "load ib_uverbs (modprobe ib_uverbs)");
	} else if (d->sysfs_default &&
		   access(P(path, "/dev/infiniband/%s", dv->uverbs), R_OK | W_OK) != 0) {
		int e = errno;
		k = dmr_doc_add(d, S_FAIL, "uverbs", dv->name, "%s: %s", path, strerror(e));
		if (e == ENOENT)
			dmr_doc_advise(k, "create the device node (udev), or in a container pass "
					  "/dev/infiniband in (docker --device=/dev/infiniband)");
		else
			dmr_doc_advise(k, "let this user open it (group rdma, udev rules)");
	} else {
		k = dmr_doc_add(d, S_OK, "uverbs", dv->name, "%s%s", dv->uverbs,
				d->sysfs_default ? " (/dev/infiniband node usable)" : "");
	}
	dmr_doc_cset(k, "device", json_string(dv->name));

	if (dv->n_ports == 0) {
		k = dmr_doc_add(d, S_FAIL, "port", dv->name,
				"no ports under %s/class/infiniband/%s/ports", d->sysfs, dv->name);
		dmr_doc_advise(k, "check the driver (dmesg)");
	}
	int found_sel_port = 0;
	for (size_t i = 0; i < dv->n_ports; i++) {
		port_t *p = &dv->ports[i];
		if (d->sel_port && p->num != d->sel_port)
			continue;
		p->selected = 1;
		found_sel_port = 1;
		check_port(d, dv, p);
	}
	if (d->sel_port && !found_sel_port && dv->n_ports) {
		char *ps = NULL;
		for (size_t i = 0; i < dv->n_ports; i++)
			sappend(&ps, "%s%d", ps ? ", " : "", dv->ports[i].num);
		k = dmr_doc_add(d, S_FAIL, "port", dv->name,
				"port %d selected, but %s has port%s %s", d->sel_port, dv->name,
				dv->n_ports == 1 ? "" : "s", ps);
		dmr_doc_advise(k, "set ibport/ib_port (or --device %s:PORT) to one of %s", dv->name,
			       ps);
		free(ps);
	}

	/* atomics: not in sysfs */
	if (dv->soft)
		k = dmr_doc_add(
		    d, S_INFO, "atomics", dv->name,
		    "not checked: needs verbs (ibv_query_device atomic_cap); SoftRoCE executes "
		    "atomics in software (tens of K ops/s under emulation)");
	else
		k = dmr_doc_add(d, S_INFO, "atomics", dv->name,
				"not checked: needs verbs (ibv_query_device atomic_cap)");
	dmr_doc_advise(
	    k, "measure with perftest ib_atomic_bw: below 1 M ops/s the atomics are emulated "
	       "(firmware/configuration)");
	dmr_doc_cset(k, "device", json_string(dv->name));
}
