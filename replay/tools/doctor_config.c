/*
 * replay/tools/doctor_config.c - `dmreplay doctor --config`: the cluster
 * config (parsed by replay/roles.c's dmr_cluster_load, as `dmreplay mn`
 * and `dmreplay cn` parse it), which entries are this host and which
 * device, port and GID they select, the CN count, and whether every node's
 * address is this host's or routable via the RDMA netdev (the kernel's main
 * routing table).
 */
#include "../roles.h"
#include "doctor_impl.h"

static void cfg_add(config_t *c, const dmr_verbs_node_t *v, int mn, int idx)
{
	c->nodes = xrealloc(c->nodes, (c->n + 1) * sizeof(*c->nodes));
	node_t *n = &c->nodes[c->n++];
	memset(n, 0, sizeof(*n));
	n->mn = mn;
	n->idx = idx;
	n->id = (long)v->id;
	scpy(n->ip, sizeof(n->ip), v->ip);
	if (n->ip[0] && inet_pton(AF_INET, n->ip, &n->in) != 1)
		n->ip[0] = '\0';
	scpy(n->devname, sizeof(n->devname), v->devname);
	n->ibport = v->ibport;
	n->gid = v->gid;
	n->mr_size = v->mr_size;
	if (mn)
		c->n_mn++;
	else
		c->n_cn++;
}

/* 0, or -1 with the parser's message (naming the field and its range). */
int dmr_doc_cfg_load(config_t *c, const char *path, dmr_err_t *e)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	dmr_verbs_cluster_t *cl = xcalloc(1, sizeof(*cl));
	if (dmr_cluster_load(path, cl, c->note, sizeof(c->note), e) != DMR_OK) {
		free(cl);
		return -1;
	}
	/* which shape: for naming the entries as the file does */
	json_t *root = json_load_file(path, 0, NULL);
	c->shape =
	    root && (json_object_get(root, "MN_ips") || json_object_get(root, "CN_ips")) ? 2 : 1;
	json_decref(root);
	c->retry_cnt = cl->retry_cnt;
	c->rnr_retry = cl->rnr_retry;
	c->timeout = cl->timeout;
	for (uint32_t i = 0; i < cl->nmn; i++)
		cfg_add(c, &cl->mn[i], 1, (int)i);
	for (uint32_t i = 0; i < cl->ncn; i++)
		cfg_add(c, &cl->cn[i], 0, (int)i);
	free(cl);
	return 0;
}

void dmr_doc_node_subject(const config_t *c, const node_t *n, char *buf, size_t len)
{
	if (c->shape == 1)
		sfmt(buf, len, "%s[%d] %s", node_role(n), n->idx, n->ip[0] ? n->ip : "(no ip)");
	else
		sfmt(buf, len, "%s[%d] %s", n->mn ? "MN_ips" : "CN_ips", n->idx, n->ip);
}

/* The host that runs this: which config entries carry one of its
 * addresses; and from them (or --device) which device/port/GID to check. */
void dmr_doc_select_target(doctor_t *d)
{
	d->sel_port = 0;
	d->sel_gid = -2;
	if (d->have_cfg) {
		for (size_t i = 0; i < d->cfg.n; i++) {
			node_t *n = &d->cfg.nodes[i];
			if (!n->ip[0] || !dmr_doc_host_has(d, AF_INET, &n->in))
				continue;
			d->host_known = 1;
			if (n->mn)
				d->host_mn = 1;
			else
				d->host_cn = 1;
			if (!d->host_node)
				d->host_node = n;
		}
	}
	/* --device NAME[:PORT] wins */
	if (d->device_opt) {
		char name[64];
		scpy(name, sizeof(name), d->device_opt);
		char *colon = strchr(name, ':');
		if (colon) {
			*colon = '\0';
			d->sel_port = atoi(colon + 1);
		}
		scpy(d->sel_dev, sizeof(d->sel_dev), name);
		d->explicit_sel = 1;
		d->sel_from = "--device";
	}
	if (!d->have_cfg)
		return;
	/* this host's entry; in the MN_ips shape every entry has the same device */
	const node_t *n = d->host_node;
	if (!n && d->cfg.shape == 2 && d->cfg.n)
		n = &d->cfg.nodes[0];
	if (!n)
		return;
	if (!d->explicit_sel) {
		/* as the verbs backend reads it: a name, an index, or "" = index 0 */
		d->cfg_dev_index = -1;
		if (!n->devname[0] || all_digits(n->devname)) {
			long i = n->devname[0] ? atol(n->devname) : 0;
			d->cfg_dev_index = i;
			if (i >= 0 && (size_t)i < d->n_devs)
				scpy(d->sel_dev, sizeof(d->sel_dev), d->devs[i].name);
			else
				sfmt(d->sel_dev, sizeof(d->sel_dev), "#%ld", i);
		} else {
			scpy(d->sel_dev, sizeof(d->sel_dev), n->devname);
		}
		d->explicit_sel = 1;
		d->sel_from = "config";
		d->cfg_dev_given = n->devname[0] != '\0';
	}
	if (!d->sel_port && n->ibport)
		d->sel_port = (int)n->ibport;
	d->sel_gid = n->gid;
}

void dmr_doc_check_config(doctor_t *d)
{
	const config_t *c = &d->cfg;
	uint64_t mr = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].mr_size > mr)
			mr = c->nodes[i].mr_size;
	char mrs[32] = "not given";
	if (mr)
		dmr_doc_hbytes(mrs, sizeof(mrs), mr);
	check_t *k =
	    dmr_doc_add(d, S_OK, "config", c->path, "%s shape: %zu MN%s, %zu CN%s, mr_size %s",
			c->shape == 1 ? "mn/cn" : "MN_ips", c->n_mn, c->n_mn == 1 ? "" : "s",
			c->n_cn, c->n_cn == 1 ? "" : "s", mrs);
	if (c->n_cn == 1)
		dmr_doc_advise(
		    k, "start exactly 1 CN process (id 0): the start barrier waits for every CN "
		       "the config lists");
	else
		dmr_doc_advise(
		    k,
		    "start exactly %zu CN processes (ids 0..%zu): the start barrier waits for "
		    "every CN the config lists",
		    c->n_cn, c->n_cn - 1);
	dmr_doc_cset(k, "shape", json_string(c->shape == 1 ? "mn/cn" : "MN_ips"));
	dmr_doc_cset(k, "mns", json_integer((json_int_t)c->n_mn));
	dmr_doc_cset(k, "cns", json_integer((json_int_t)c->n_cn));
	dmr_doc_cset(k, "mr_size", mr ? json_integer((json_int_t)mr) : json_null());
	if (c->note[0]) {
		k = dmr_doc_add(d, S_INFO, "config", c->path, "%s", c->note);
		dmr_doc_cset(k, "note", json_string(c->note));
	}

	if (!d->host_known) {
		char *mine = dmr_doc_host_addr_list(d);
		k = dmr_doc_add(
		    d, S_WARN, "host", "",
		    "none of the config's addresses is an address of this host (this host: %s)",
		    mine);
		dmr_doc_advise(
		    k, "run doctor on the cluster's nodes with the config they run with; a node "
		       "that is not in the config has no role, device or port to check");
		free(mine);
		return;
	}
	char *roles = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		if (!n->ip[0] || !dmr_doc_host_has(d, AF_INET, &n->in))
			continue;
		char s[64];
		dmr_doc_node_subject(c, n, s, sizeof(s));
		sappend(&roles, "%s%s", roles ? ", " : "", s);
	}
	k = dmr_doc_add(d, S_OK, "host", "", "this host is %s", roles);
	dmr_doc_cset(k, "mn", json_boolean(d->host_mn));
	dmr_doc_cset(k, "cn", json_boolean(d->host_cn));
	free(roles);
}

/*
 * retry_cnt 7 on SoftRoCE: drivers/infiniband/sw/rxe/rxe_comp.c decrements
 * the retry count only when it is not 7 (IBTA's "infinite" for rnr_retry,
 * applied by rxe to retry_cnt too), so a CN on rxe whose MN died never gets
 * IBV_WC_RETRY_EXC_ERR and stops only on the replay's 10 s no-completion
 * deadline (docs/ROLES.md "A dead MN"). Hardware RNICs count 7 retries.
 */
void dmr_doc_check_transport(doctor_t *d)
{
	const config_t *c = &d->cfg;
	char *soft = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		if (d->devs[i].selected && d->devs[i].soft)
			sappend(&soft, "%s%s", soft ? ", " : "", d->devs[i].name);
	double ack_ms = 4.096e-3 * (double)(1ull << c->timeout);
	check_t *k;
	if (soft && c->retry_cnt == 7) {
		k = dmr_doc_add(d, S_WARN, "retry", c->path,
				"retry_cnt 7 (given, or the default) on SoftRoCE (%s): rdma_rxe "
				"retries forever with 7, so a dead MN is never reported as a "
				"failed request; a CN stops only on the replay's 10 s "
				"no-completion deadline",
				soft);
		dmr_doc_advise(k,
			       "set \"retry_cnt\": 6 in the config (a dead MN is then named "
			       "after 7 x %.3g ms, timeout %d)",
			       ack_ms, c->timeout);
	} else {
		k = dmr_doc_add(d, S_OK, "retry", c->path,
				"retry_cnt %d, timeout %d (%.3g ms per retry): a dead MN fails "
				"a request after about %.3g ms",
				c->retry_cnt, c->timeout, ack_ms, ack_ms * (c->retry_cnt + 1));
	}
	dmr_doc_cset(k, "retry_cnt", json_integer(c->retry_cnt));
	dmr_doc_cset(k, "rnr_retry", json_integer(c->rnr_retry));
	dmr_doc_cset(k, "timeout", json_integer(c->timeout));
	dmr_doc_cset(k, "softroce", soft ? json_string(soft) : json_null());
	free(soft);
}

typedef struct route {
	char ifname[IF_NAMESIZE + 1];
	uint32_t dst, gw, mask; /* network order, as the kernel prints them */
	unsigned flags;
	long metric;
} route_t;

#define RTF_UP_ 0x0001u
#define RTF_GATEWAY_ 0x0002u
#define RTF_REJECT_ 0x0200u

/* Longest-prefix match in <proc>/net/route (the main table: policy routing
 * rules are not consulted). 1 found, 0 none, -1 unreadable. */
static int route_lookup(const doctor_t *d, struct in_addr ip, route_t *out)
{
	char path[PATH_MAX];
	char *txt = dmr_doc_read_all(P(path, "%s/net/route", d->proc));
	if (!txt)
		return -1;
	int found = 0, best_len = -1;
	char *save = NULL;
	char *line = strtok_r(txt, "\n", &save);
	for (line = line ? strtok_r(NULL, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		route_t r;
		memset(&r, 0, sizeof(r));
		char ifn[64];
		unsigned dst, gw, flags, mask;
		int refcnt, use;
		long metric;
		if (sscanf(line, "%63s %x %x %x %d %d %ld %x", ifn, &dst, &gw, &flags, &refcnt,
			   &use, &metric, &mask) != 8)
			continue;
		if (!(flags & RTF_UP_) || (ip.s_addr & mask) != dst)
			continue;
		int len = __builtin_popcount(mask);
		if (len < best_len || (len == best_len && metric >= out->metric))
			continue;
		scpy(r.ifname, sizeof(r.ifname), ifn);
		r.dst = dst;
		r.gw = gw;
		r.flags = flags;
		r.mask = mask;
		r.metric = metric;
		*out = r;
		best_len = len;
		found = 1;
	}
	free(txt);
	return found;
}

/* The netdevs of the selected ports: where RDMA traffic leaves. */
static char *rdma_netdevs(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if (d->devs[i].selected && p->selected && p->ndev[0] &&
			    !dmr_doc_in_list(s, p->ndev))
				sappend(&s, "%s%s", s ? ", " : "", p->ndev);
		}
	return s;
}

void dmr_doc_check_reach(doctor_t *d)
{
	const config_t *c = &d->cfg;
	char *rnd = rdma_netdevs(d);
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		char sub[64];
		dmr_doc_node_subject(c, n, sub, sizeof(sub));
		check_t *k;
		const haddr_t *h = n->ip[0] ? dmr_doc_host_has(d, AF_INET, &n->in) : NULL;
		unsigned char b0 = (unsigned char)(ntohl(n->in.s_addr) >> 24);
		route_t r;
		memset(&r, 0, sizeof(r));
		if (!n->ip[0]) {
			k = dmr_doc_add(
			    d, S_INFO, "reach", sub,
			    "no ip: the CN uses the address of its GID; nothing to check");
		} else if (b0 == 127) {
			k = dmr_doc_add(
			    d, S_WARN, "reach", sub,
			    "loopback address: other hosts cannot reach it and rdma_cm does not "
			    "work over 127.0.0.1");
			dmr_doc_advise(k, "use the address of the RDMA netdev%s%s", rnd ? " (" : "",
				       rnd ? rnd : "");
			if (rnd)
				sappend(&k->advice, ")");
		} else if (h) {
			if (rnd && h->ifname[0] && !dmr_doc_in_list(rnd, h->ifname)) {
				k = dmr_doc_add(d, S_WARN, "reach", sub,
						"this host, on %s; the RDMA netdev is %s",
						h->ifname, rnd);
				dmr_doc_advise(
				    k,
				    "give this node the address of its RDMA netdev in the config: "
				    "rdma_cm binds to the RDMA device behind the address's netdev");
			} else {
				k = dmr_doc_add(d, S_OK, "reach", sub, "this host%s%s",
						h->ifname[0] ? ", on " : "", h->ifname);
			}
		} else {
			int rr = route_lookup(d, n->in, &r);
			char gw[INET_ADDRSTRLEN] = "";
			if (rr > 0 && (r.flags & RTF_GATEWAY_)) {
				struct in_addr g = {.s_addr = r.gw};
				inet_ntop(AF_INET, &g, gw, sizeof(gw));
			}
			if (rr < 0) {
				k = dmr_doc_add(d, S_INFO, "reach", sub,
						"not checked: %s/net/route unreadable", d->proc);
			} else if (rr == 0) {
				k = dmr_doc_add(
				    d, S_FAIL, "reach", sub,
				    "no route in the kernel's main table (%s/net/route)", d->proc);
				dmr_doc_advise(
				    k,
				    "check the address in the config; or give %s an address on "
				    "that subnet, or add a route (ip route add ...)",
				    rnd ? rnd : "the RDMA netdev");
			} else if (r.flags & RTF_REJECT_) {
				k = dmr_doc_add(d, S_FAIL, "reach", sub,
						"the kernel rejects it (reject route "
						"via %s)",
						r.ifname);
				dmr_doc_advise(
				    k, "remove the reject/unreachable route or fix the address");
			} else if (rnd && !dmr_doc_in_list(rnd, r.ifname)) {
				k = dmr_doc_add(d, S_WARN, "reach", sub,
						"routed via %s%s%s%s, not via the RDMA netdev %s",
						r.ifname, gw[0] ? " (gateway " : "", gw,
						gw[0] ? ")" : "", rnd);
				dmr_doc_advise(
				    k,
				    "use the node's experiment-network address in the config, or "
				    "route it via %s: rdma_cm follows the kernel's route",
				    rnd);
			} else {
				k = dmr_doc_add(d, S_OK, "reach", sub, "routable via %s (%s%s)",
						r.ifname, gw[0] ? "gateway " : "directly connected",
						gw);
			}
		}
		dmr_doc_cset(k, "role", json_string(node_role(n)));
		dmr_doc_cset(k, "index", json_integer(n->idx));
		dmr_doc_cset(k, "ip", json_string(n->ip));
		dmr_doc_cset(k, "local", json_boolean(h != NULL));
		dmr_doc_cset(k, "via", r.ifname[0] ? json_string(r.ifname) : json_null());
	}
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		if (!n->mn)
			continue;
		char sub[64];
		dmr_doc_node_subject(c, n, sub, sizeof(sub));
		check_t *k = dmr_doc_add(
		    d, S_INFO, "canary", sub,
		    "READ/CAS against this MN: not run from doctor (a running MN counts "
		    "every CN that connects; doctor does not join its CN set)");
		dmr_doc_advise(
		    k, "every `dmreplay cn` runs this canary against the MN at start-up, before "
		       "any transaction; the local loopback canary below checks this node's "
		       "device");
		dmr_doc_cset(k, "ip", json_string(n->ip));
	}
	free(rnd);
}
