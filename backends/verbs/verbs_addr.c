/*
 * backends/verbs/verbs_addr.c - see verbs_addr.h.
 */
#include "verbs_addr.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

const char *dmr_verbs_gid_refusal(int link_layer, const struct ibv_gid_entry *e,
				  const struct ifaddrs *ifs, struct in_addr *ip)
{
	static const uint8_t v4pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[16];
	if (link_layer == IBV_LINK_LAYER_INFINIBAND) {
		if (e->gid_type != IBV_GID_TYPE_IB)
			return "not an InfiniBand GID";
		if (memcmp(e->gid.raw, zero, 16) == 0)
			return "empty";
		return NULL;
	}
	if (e->gid_type != IBV_GID_TYPE_ROCE_V2)
		return e->gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCEv1" : "not RoCE";
	if (memcmp(e->gid.raw, v4pfx, 12) != 0)
		return e->gid.raw[0] == 0xfe && (e->gid.raw[1] & 0xc0) == 0x80 ? "IPv6 link-local"
									       : "IPv6";
	memcpy(&ip->s_addr, e->gid.raw + 12, 4);
	if ((ntohl(ip->s_addr) & 0xffff0000u) == 0xa9fe0000u)
		return "IPv4 link-local (169.254/16)";
	for (const struct ifaddrs *a = ifs; a; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
			continue;
		if (((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr.s_addr !=
		    ip->s_addr)
			continue;
		if (e->ndev_ifindex == 0 || if_nametoindex(a->ifa_name) == e->ndev_ifindex)
			return NULL;
	}
	return "foreign (not an address of this node)";
}

const char *dmr_verbs_ipoib_refusal(int arphrd, struct in_addr a, struct in_addr want)
{
	if (arphrd != 32) /* ARPHRD_INFINIBAND, <net/if_arp.h> */
		return "not an IPoIB interface";
	if ((ntohl(a.s_addr) & 0xffff0000u) == 0xa9fe0000u)
		return "IPv4 link-local (169.254/16)";
	if (want.s_addr && a.s_addr != want.s_addr)
		return "not the configured ip";
	return NULL;
}

const char *dmr_verbs_ah_refusal(int link_layer, const struct ibv_ah_attr *ah, int gid_index,
				 char *why, size_t len)
{
	if (ah->is_global) {
		if ((int)ah->grh.sgid_index == gid_index)
			return NULL;
		snprintf(why, len, "rdma_cm chose source GID index %u, not the chosen %d%s",
			 ah->grh.sgid_index, gid_index,
			 link_layer == IBV_LINK_LAYER_ETHERNET
			     ? " (check default_roce_mode in /sys/kernel/config/rdma_cm/DEV)"
			     : "");
		return why;
	}
	if (link_layer == IBV_LINK_LAYER_ETHERNET)
		return NULL; /* the kernel adds the GRH RoCE needs (as before: rxe) */
	if (ah->dlid == 0) {
		snprintf(why, len,
			 "a local InfiniBand address handle with DLID 0 (no path record: is "
			 "the subnet manager running?)");
		return why;
	}
	return NULL;
}
