/*
 * replay/tools/doctor_scan.c - what `dmreplay doctor` reads before it
 * checks: this host's addresses (getifaddrs, or --addrs) and the kernel's
 * view of each RDMA device (sysfs: node type, firmware, driver, uverbs,
 * ports with state, rate, MTU and the GID table).
 */
#include <ifaddrs.h>
#include <sys/socket.h>
#include <unistd.h>

#include "doctor_impl.h"

int dmr_doc_parse_addrs(doctor_t *d, const char *list)
{
	char *dup = xstrdup(list), *save = NULL;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		haddr_t h;
		memset(&h, 0, sizeof(h));
		char *at = strchr(tok, '@');
		if (at) {
			*at = '\0';
			if (!at[1] || strlen(at + 1) > IF_NAMESIZE) {
				fprintf(stderr, PROG ": --addrs: '%s@%s': bad interface name\n",
					tok, at + 1);
				free(dup);
				return -1;
			}
			scpy(h.ifname, sizeof(h.ifname), at + 1);
		}
		if (inet_pton(AF_INET, tok, h.a) == 1) {
			h.fam = AF_INET;
		} else if (inet_pton(AF_INET6, tok, h.a) == 1) {
			h.fam = AF_INET6;
		} else {
			fprintf(stderr,
				PROG ": --addrs: '%s' is not an IPv4 or IPv6 address "
				     "(list: ADDR[@IFNAME],...)\n",
				tok);
			free(dup);
			return -1;
		}
		d->addrs = xrealloc(d->addrs, (d->n_addrs + 1) * sizeof(*d->addrs));
		d->addrs[d->n_addrs++] = h;
	}
	free(dup);
	return 0;
}

void dmr_doc_host_addrs(doctor_t *d)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) != 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		haddr_t h;
		memset(&h, 0, sizeof(h));
		if (i->ifa_addr->sa_family == AF_INET) {
			h.fam = AF_INET;
			memcpy(h.a, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			h.fam = AF_INET6;
			memcpy(h.a, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		scpy(h.ifname, sizeof(h.ifname), i->ifa_name ? i->ifa_name : "");
		d->addrs = xrealloc(d->addrs, (d->n_addrs + 1) * sizeof(*d->addrs));
		d->addrs[d->n_addrs++] = h;
	}
	freeifaddrs(ifa);
}

/* The host address equal to a (fam, 4 or 16 bytes), or NULL. */
const haddr_t *dmr_doc_host_has(const doctor_t *d, int fam, const void *a)
{
	for (size_t i = 0; i < d->n_addrs; i++)
		if (d->addrs[i].fam == fam && !memcmp(d->addrs[i].a, a, fam == AF_INET ? 4 : 16))
			return &d->addrs[i];
	return NULL;
}

char *dmr_doc_host_addr_list(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_addrs; i++) {
		if (d->addrs[i].fam != AF_INET)
			continue;
		char t[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, d->addrs[i].a, t, sizeof(t));
		sappend(&s, "%s%s", s ? ", " : "", t);
	}
	return s ? s : xstrdup("none");
}

static void parse_state(const char *s, int *num, char *text, size_t len)
{
	/* "4: ACTIVE", "5: LinkUp" */
	*num = atoi(s);
	const char *p = strchr(s, ':');
	p = p ? p + 1 : s;
	while (*p == ' ')
		p++;
	scpy(text, len, p);
}

static void scan_gids(doctor_t *d, rdev_t *dv, port_t *p, const char *base)
{
	char path[PATH_MAX], buf[128];
	strv_t ents;
	if (dmr_doc_list_dir(P(path, "%s/gids", base), &ents) != 0)
		return;
	for (size_t i = 0; i < ents.n; i++) {
		if (!all_digits(ents.v[i]))
			continue;
		if (dmr_doc_read_str(P(path, "%s/gids/%s", base, ents.v[i]), buf, sizeof(buf)) != 0)
			continue;
		dgid_t g;
		memset(&g, 0, sizeof(g));
		g.index = atoi(ents.v[i]);
		if (inet_pton(AF_INET6, buf, g.raw) != 1)
			continue;
		static const unsigned char zero[16];
		if (!memcmp(g.raw, zero, 16))
			continue;
		inet_ntop(AF_INET6, g.raw, g.text, sizeof(g.text));
		if (dmr_doc_read_str(P(path, "%s/gid_attrs/types/%s", base, ents.v[i]), buf,
				     sizeof(buf)) == 0)
			scpy(g.type, sizeof(g.type), buf);
		g.v2 = strstr(g.type, "v2") != NULL;
		if (dmr_doc_read_str(P(path, "%s/gid_attrs/ndevs/%s", base, ents.v[i]), buf,
				     sizeof(buf)) == 0)
			scpy(g.ndev, sizeof(g.ndev), buf);
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (!memcmp(g.raw, mapped, 12)) {
			inet_ntop(AF_INET, g.raw + 12, g.ip4, sizeof(g.ip4));
			if (g.raw[12] == 127)
				g.cls = G_LOOP4;
			else if (g.raw[12] == 169 && g.raw[13] == 254)
				g.cls = G_LL4;
			else if (dmr_doc_host_has(d, AF_INET, g.raw + 12))
				g.cls = G_OWN4;
			else
				g.cls = G_FOREIGN4;
		} else if (g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80) {
			g.cls = G_LL6;
		} else {
			g.cls = G_IPV6;
		}
		p->gids = xrealloc(p->gids, (p->n_gids + 1) * sizeof(*p->gids));
		p->gids[p->n_gids++] = g;
	}
	dmr_doc_strv_free(&ents);
	(void)dv;
}

static void scan_mtu(doctor_t *d, rdev_t *dv, port_t *p, const char *base)
{
	char path[PATH_MAX], buf[64];
	static const char *const names[] = {"active_mtu", "mtu"};
	for (size_t i = 0; i < 2; i++) {
		if (dmr_doc_read_str(P(path, "%s/%s", base, names[i]), buf, sizeof(buf)) != 0)
			continue;
		long v = atol(buf);
		if (v >= 1 && v <= 5)
			v = 128L << v; /* enum ib_mtu: 1 = 256 .. 5 = 4096 */
		if (v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096) {
			p->mtu = (uint32_t)v;
			p->mtu_how = xasprintf("read from %s/%s", base, names[i]);
			return;
		}
	}
	if (!p->ndev[0]) {
		p->mtu_how = xstrdup("unknown: the port exposes no MTU in sysfs and has no netdev "
				     "(ibv_devinfo -v shows active_mtu)");
		return;
	}
	if (dmr_doc_read_str(P(path, "%s/class/net/%s/mtu", d->sysfs, p->ndev), buf, sizeof(buf)) !=
		0 ||
	    atol(buf) <= 0) {
		p->mtu_how =
		    xasprintf("unknown: %s/class/net/%s/mtu unreadable", d->sysfs, p->ndev);
		return;
	}
	p->netdev_mtu = (uint32_t)atol(buf);
	p->hdr = dv->soft ? DMR_DOCTOR_RXE_HDR : DMR_DOCTOR_ROCE_HDR;
	p->mtu = dmr_doctor_ib_mtu(p->netdev_mtu, p->hdr);
	p->mtu_how = xasprintf("derived: netdev %s MTU %u - %u B RoCE headers (%s) -> largest IB "
			       "MTU that fits",
			       p->ndev, p->netdev_mtu, p->hdr,
			       dv->soft ? "rdma_rxe" : "ib_core iboe_get_mtu");
}

static void scan_port(doctor_t *d, rdev_t *dv, port_t *p)
{
	char base[PATH_MAX], path[PATH_MAX], buf[128];
	P(base, "%s/class/infiniband/%s/ports/%d", d->sysfs, dv->name, p->num);
	p->gbps = -1;
	if (dmr_doc_read_str(P(path, "%s/state", base), buf, sizeof(buf)) == 0)
		parse_state(buf, &p->state_num, p->state, sizeof(p->state));
	else
		scpy(p->state, sizeof(p->state), "unknown");
	if (dmr_doc_read_str(P(path, "%s/phys_state", base), buf, sizeof(buf)) == 0) {
		int n;
		parse_state(buf, &n, p->phys, sizeof(p->phys));
	} else {
		scpy(p->phys, sizeof(p->phys), "unknown");
	}
	if (dmr_doc_read_str(P(path, "%s/link_layer", base), buf, sizeof(buf)) == 0)
		scpy(p->ll, sizeof(p->ll), buf);
	else
		scpy(p->ll, sizeof(p->ll), "unknown");
	if (dmr_doc_read_str(P(path, "%s/rate", base), buf, sizeof(buf)) == 0) {
		scpy(p->rate, sizeof(p->rate), buf);
		char *end;
		double g = strtod(buf, &end);
		if (end != buf && !strncmp(end, " Gb/sec", 7) && g >= 0)
			p->gbps = g;
	}
	scan_gids(d, dv, p, base);
	for (size_t i = 0; i < p->n_gids && !p->ndev[0]; i++)
		if (p->gids[i].ndev[0])
			scpy(p->ndev, sizeof(p->ndev), p->gids[i].ndev);
	if (!p->ndev[0] && dv->parent[0])
		scpy(p->ndev, sizeof(p->ndev), dv->parent);
	if (!p->ndev[0]) {
		strv_t net;
		if (dmr_doc_list_dir(
			P(path, "%s/class/infiniband/%s/device/net", d->sysfs, dv->name), &net) ==
		    0) {
			if (net.n == 1 || (size_t)p->num <= net.n)
				scpy(p->ndev, sizeof(p->ndev), net.v[net.n == 1 ? 0 : p->num - 1]);
			dmr_doc_strv_free(&net);
		}
	}
	scan_mtu(d, dv, p, base);
}

void dmr_doc_scan_dev(doctor_t *d, rdev_t *dv)
{
	char base[PATH_MAX], path[PATH_MAX], buf[256];
	P(base, "%s/class/infiniband/%s", d->sysfs, dv->name);
	if (dmr_doc_read_str(P(path, "%s/node_type", base), buf, sizeof(buf)) == 0)
		scpy(dv->node_type, sizeof(dv->node_type), buf);
	dv->iwarp = strstr(dv->node_type, "RNIC") != NULL;
	if (dmr_doc_read_str(P(path, "%s/fw_ver", base), buf, sizeof(buf)) == 0)
		scpy(dv->fw, sizeof(dv->fw), buf);
	if (dmr_doc_read_str(P(path, "%s/board_id", base), buf, sizeof(buf)) == 0)
		scpy(dv->board, sizeof(dv->board), buf);
	if (dmr_doc_read_str(P(path, "%s/parent", base), buf, sizeof(buf)) == 0 && buf[0]) {
		scpy(dv->parent, sizeof(dv->parent), buf);
		dv->soft = !dv->iwarp; /* rdma_rxe's "parent" attribute: its netdev */
	}
	ssize_t n = readlink(P(path, "%s/device/driver", base), buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		const char *b = strrchr(buf, '/');
		scpy(dv->driver, sizeof(dv->driver), b ? b + 1 : buf);
	}
	if (dmr_doc_read_str(P(path, "%s/device/iommu_group/type", base), buf, sizeof(buf)) == 0)
		scpy(dv->iommu_type, sizeof(dv->iommu_type), buf);
	/* user-space verbs: uverbsN whose ibdev is this device */
	strv_t uv;
	if (dmr_doc_list_dir(P(path, "%s/class/infiniband_verbs", d->sysfs), &uv) == 0) {
		for (size_t i = 0; i < uv.n; i++) {
			if (strncmp(uv.v[i], "uverbs", 6))
				continue;
			if (dmr_doc_read_str(
				P(path, "%s/class/infiniband_verbs/%s/ibdev", d->sysfs, uv.v[i]),
				buf, sizeof(buf)) == 0 &&
			    !strcmp(buf, dv->name)) {
				scpy(dv->uverbs, sizeof(dv->uverbs), uv.v[i]);
				break;
			}
		}
		dmr_doc_strv_free(&uv);
	}
	strv_t ports;
	if (dmr_doc_list_dir(P(path, "%s/ports", base), &ports) == 0) {
		for (size_t i = 0; i < ports.n; i++) {
			if (!all_digits(ports.v[i]))
				continue;
			dv->ports = xrealloc(dv->ports, (dv->n_ports + 1) * sizeof(*dv->ports));
			port_t *p = &dv->ports[dv->n_ports++];
			memset(p, 0, sizeof(*p));
			p->num = atoi(ports.v[i]);
			scan_port(d, dv, p);
		}
		dmr_doc_strv_free(&ports);
	}
}
