/*
 * backends/verbs/verbs_device.c - the device, port and GID: our own device
 * context, by name or index (dmr_verbs_find_device says why not rdma_cm's),
 * the port and atomics checks, the RoCEv2 GID that carries one of this
 * node's IPv4 addresses (each refused GID named with its reason), the queue
 * limits clamped to the device and the one line that logs them, and the
 * public dmr_verbs_info and dmr_verbs_probe.
 */
#include "verbs_impl.h"

#include "verbs_addr.h"

#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>

/* What we ask for; clamped to the device (logged once). */
#define VB_ASK_SQ 4096u
#define VB_ASK_RD_ATOMIC 16u
#define VB_ASK_INLINE 256u

dmr_status_t dmr_verbs_find_device(vb_t *vb, const char *want, dmr_err_t *err)
{
	int ndev = 0;
	struct ibv_device **list = ibv_get_device_list(&ndev);
	if (!list || ndev == 0) {
		int e = errno;
		if (list)
			ibv_free_device_list(list);
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "verbs: no RDMA device (ibv_get_device_list: %s; on SoftRoCE: "
				   "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0, "
				   "or run under scripts/rxe-vm)",
				   list ? "none found" : strerror(e));
	}
	int idx = -1;
	char names[256] = "";
	size_t off = 0;
	for (int i = 0; i < ndev; i++) {
		const char *nm = ibv_get_device_name(list[i]);
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						i ? ", " : "", nm);
		if (want && *want && strcmp(nm, want) == 0)
			idx = i;
	}
	if (!want || !*want) {
		idx = 0;
	} else if (idx < 0) {
		char *end;
		long v = strtol(want, &end, 10);
		if (*end == '\0' && v >= 0 && v < ndev)
			idx = (int)v;
	}
	if (idx < 0) {
		ibv_free_device_list(list);
		return dmr_err_set(err, DMR_ERR_NODEV, "verbs: no RDMA device '%s' (have: %s)",
				   want, names);
	}
	snprintf(vb->dev, sizeof(vb->dev), "%s", ibv_get_device_name(list[idx]));
	/*
	 * Our own context, not rdma_cm's (rdma_get_devices / id->verbs):
	 * librdmacm keeps its contexts open for the life of the process, and a
	 * process forked after one was opened (Check's fork mode) cannot use
	 * it: the rxe provider rings its doorbell with write() on the
	 * inherited command fd, which the kernel refuses (EACCES) across
	 * fork. rdma_cm only needs the same device, not the same context.
	 */
	vb->ctx = ibv_open_device(list[idx]);
	int e = errno;
	ibv_free_device_list(list);
	if (!vb->ctx)
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_open_device: %s",
				      strerror(e));
	if (ibv_query_device(vb->ctx, &vb->dattr))
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_device: %s",
				      strerror(errno));
	if (vb->port < 1 || vb->port > vb->dattr.phys_port_cnt)
		return dmr_verbs_fail(vb, err, DMR_ERR_RANGE, -1, -1,
				      "no such port (device has %u)", vb->dattr.phys_port_cnt);
	if (ibv_query_port(vb->ctx, (uint8_t)vb->port, &vb->pattr))
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_port: %s",
				      strerror(errno));
	if (vb->pattr.state != IBV_PORT_ACTIVE)
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1,
				      "port state is %s, not ACTIVE",
				      ibv_port_state_str(vb->pattr.state));
	if (vb->pattr.link_layer != IBV_LINK_LAYER_ETHERNET &&
	    vb->pattr.link_layer != IBV_LINK_LAYER_INFINIBAND)
		return dmr_verbs_fail(vb, err, DMR_ERR_UNSUPPORTED, -1, -1,
				      "link layer %u is neither Ethernet (RoCE) nor InfiniBand",
				      vb->pattr.link_layer);
	if (vb->dattr.atomic_cap == IBV_ATOMIC_NONE)
		return dmr_verbs_fail(vb, err, DMR_ERR_UNSUPPORTED, -1, -1,
				      "device has no atomics (atomic_cap NONE)");
	return DMR_OK;
}

/* InfiniBand: the IPv4 address rdma_cm routes by, that of an IPoIB
 * interface (/sys/class/net/IF/type 32) on vb's device (the same
 * /sys/class/.../device); want (non-zero) must be it. NULL and *ip, or why
 * not. */
static const char *ipoib_addr(const vb_t *vb, const struct ifaddrs *ifs, struct in_addr want,
			      struct in_addr *ip)
{
	char p[256], dev_real[PATH_MAX], if_real[PATH_MAX];
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device", vb->dev);
	if (!realpath(p, dev_real))
		return "its device has no /sys/class/infiniband entry";
	const char *why = "no IPoIB interface with an IPv4 address on this device";
	for (const struct ifaddrs *a = ifs; a; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
			continue;
		snprintf(p, sizeof(p), "/sys/class/net/%s/device", a->ifa_name);
		if (!realpath(p, if_real) || strcmp(if_real, dev_real) != 0)
			continue;
		snprintf(p, sizeof(p), "/sys/class/net/%s/type", a->ifa_name);
		FILE *f = fopen(p, "r");
		int type = -1;
		if (f) {
			if (fscanf(f, "%d", &type) != 1)
				type = -1;
			fclose(f);
		}
		struct in_addr v =
		    ((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
		const char *r = dmr_verbs_ipoib_refusal(type, v, want);
		if (!r) {
			*ip = v;
			return NULL;
		}
		why = r;
	}
	return why;
}

dmr_status_t dmr_verbs_choose_gid(vb_t *vb, int want, const char *want_ip, dmr_err_t *err)
{
	struct in_addr wip = {0};
	if (want_ip && *want_ip && inet_pton(AF_INET, want_ip, &wip) != 1)
		return dmr_verbs_fail(vb, err, DMR_ERR_INVALID, -1, -1,
				      "ip '%s' is not a dotted IPv4 address", want_ip);
	size_t max = vb->pattr.gid_tbl_len ? vb->pattr.gid_tbl_len : 16;
	struct ibv_gid_entry *ent = calloc(max, sizeof(*ent));
	if (!ent)
		return dmr_verbs_fail(vb, err, DMR_ERR_NOMEM, -1, -1, "out of memory");
	ssize_t n = ibv_query_gid_table(vb->ctx, ent, max, 0);
	if (n < 0) {
		free(ent);
		return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1, "ibv_query_gid_table: %s",
				      strerror((int)-n));
	}
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs)) {
		free(ent);
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, -1, "getifaddrs: %s",
				      strerror(errno));
	}
	char why[320] = "";
	size_t off = 0;
	int chosen = -1;
	struct in_addr ip = {0};
	for (ssize_t i = 0; i < n && chosen < 0; i++) {
		if (ent[i].port_num != (uint32_t)vb->port)
			continue;
		if (want >= 0 && ent[i].gid_index != (uint32_t)want)
			continue;
		struct in_addr a = {0};
		const char *r = dmr_verbs_gid_refusal(vb->pattr.link_layer, &ent[i], ifs, &a);
		if (!r && vb->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND)
			r = ipoib_addr(vb, ifs, wip, &a);
		if (!r && wip.s_addr && a.s_addr != wip.s_addr)
			r = "not the configured ip";
		if (!r) {
			chosen = (int)ent[i].gid_index;
			ip = a;
			vb->gid = ent[i].gid;
		} else if (off < sizeof(why)) {
			char g[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, ent[i].gid.raw, g, sizeof(g));
			off += (size_t)snprintf(why + off, sizeof(why) - off, "%sGID %u %s: %s",
						off ? "; " : "", ent[i].gid_index, g, r);
		}
	}
	freeifaddrs(ifs);
	free(ent);
	if (chosen < 0) {
		if (want >= 0)
			return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1,
					      "GID index %d refused: %s", want,
					      why[0] ? why : "not populated");
		if (vb->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND)
			return dmr_verbs_fail(vb, err, DMR_ERR_NODEV, -1, -1,
					      "no InfiniBand GID with an IPoIB address%s%s on this "
					      "device (%s; rdma_cm routes InfiniBand by the IPoIB "
					      "interface's IPv4 address: ip addr add A/N dev ib0)",
					      wip.s_addr ? " " : "", wip.s_addr ? want_ip : "",
					      why[0] ? why : "GID table empty");
		return dmr_verbs_fail(
		    vb, err, DMR_ERR_NODEV, -1, -1, "no RoCEv2 GID with %s%s (%s)",
		    wip.s_addr ? "the configured ip " : "an IPv4 address of this node",
		    wip.s_addr ? want_ip : "", why[0] ? why : "GID table empty");
	}
	vb->gid_index = chosen;
	vb->addr.sin_family = AF_INET;
	vb->addr.sin_addr = ip;
	inet_ntop(AF_INET, &ip, vb->ip, sizeof(vb->ip));
	return DMR_OK;
}

void dmr_verbs_clamp_limits(vb_t *vb)
{
	const struct ibv_device_attr *d = &vb->dattr;
	uint32_t mns = vb->be.cfg.mns;
	vb->sq_ask = vb->q_sq ? vb->q_sq : VB_ASK_SQ;
	vb->sq_depth = min32(vb->sq_ask, (uint32_t)d->max_qp_wr);
	/* per QP: its send queue's completions and its RPC answers' receives */
	vb->cq_depth = min32(mns * (vb->sq_depth + VB_RPC_SLOTS), (uint32_t)d->max_cqe);
	if (vb->cq_depth < mns * (vb->sq_depth + VB_RPC_SLOTS))
		vb->sq_depth = vb->cq_depth / mns - VB_RPC_SLOTS;
	vb->rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_init_rd_atom, 255));
	vb->dest_rd_atomic = min32(VB_ASK_RD_ATOMIC, min32((uint32_t)d->max_qp_rd_atom, 255));
	vb->inline_ask = vb->q_inline >= 0 ? (uint32_t)vb->q_inline : VB_ASK_INLINE;
}

void dmr_verbs_log_limits_once(const vb_t *vb)
{
	static atomic_flag logged = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&logged))
		return;
	fprintf(stderr,
		"verbs: %s port %d GID %d (%s): asked/used max_send_wr %u/%u, CQ depth %u/%u, "
		"max_rd_atomic %u/%u, max_dest_rd_atomic %u/%u, max_inline_data %u/%u, "
		"path MTU %u (local %u, peer %u)\n",
		vb->dev, vb->port, vb->gid_index, vb->ip, vb->sq_ask, vb->sq_depth,
		(vb->sq_ask + VB_RPC_SLOTS) * vb->be.cfg.mns, vb->cq_depth, VB_ASK_RD_ATOMIC,
		vb->rd_atomic, VB_ASK_RD_ATOMIC, vb->dest_rd_atomic, vb->inline_ask,
		vb->inline_used, mtu_bytes(vb->path_mtu), mtu_bytes(vb->pattr.active_mtu),
		mtu_bytes(vb->peer_mtu));
}

void dmr_verbs_info(dmr_be_t *be, dmr_verbs_info_t *info_p)
{
	vb_t *vb = to_vb(be);
	dmr_verbs_info_t in = {.port = vb->port,
			       .gid_index = vb->gid_index,
			       .path_mtu = mtu_bytes(vb->path_mtu),
			       .sq_depth = vb->sq_depth,
			       .cq_depth = vb->cq_depth,
			       .max_rd_atomic = vb->rd_atomic,
			       .max_inline = vb->inline_used,
			       .atomic_swapped = vb->atomic_bswap};
	snprintf(in.device, sizeof(in.device), "%s", vb->dev);
	snprintf(in.ip, sizeof(in.ip), "%s", vb->ip);
	*info_p = in;
}

dmr_status_t dmr_verbs_probe(const char *device, int port, int gid_index, dmr_verbs_info_t *info_p,
			     dmr_err_t *err)
{
	vb_t *vb = calloc(1, sizeof(*vb));
	if (!vb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "verbs: out of memory");
	vb->port = port > 0 ? port : 1;
	vb->gid_index = -1;
	dmr_status_t st = dmr_verbs_find_device(vb, device, err);
	if (st == DMR_OK)
		st = dmr_verbs_choose_gid(vb, gid_index, NULL, err);
	if (st == DMR_OK) {
		dmr_verbs_info_t in = {.port = vb->port, .gid_index = vb->gid_index};
		snprintf(in.device, sizeof(in.device), "%s", vb->dev);
		snprintf(in.ip, sizeof(in.ip), "%s", vb->ip);
		*info_p = in;
	}
	if (vb->ctx)
		ibv_close_device(vb->ctx);
	free(vb);
	return st;
}
