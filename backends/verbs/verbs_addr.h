/*
 * backends/verbs/verbs_addr.h - the addressing choices of the verbs backend
 * per link layer, as pure functions (no device needed: tests/unit/
 * test_verbs_addr.c drives them with made-up GID tables and address
 * handles, which is how InfiniBand is tested here, where no IB port
 * exists; issue 16).
 *
 * RoCEv2 (Ethernet link layer): a port's GID table entry of type RoCEv2
 * whose IPv4-mapped address is one of this node's interfaces' (on the
 * GID's netdev); rdma_cm routes by that IP; every address handle is global
 * (a GRH carries the GIDs: IBTA annex A17) and its source GID index must be
 * the chosen one.
 *
 * InfiniBand: the port's GID of type IB (its subnet prefix and port GUID;
 * IBTA vol. 1, 4.1.1); rdma_cm routes by the IPoIB interface's IPv4 address
 * (the interface of link type ARPHRD_INFINIBAND on the same device: the
 * caller passes its address) and resolves a path record from the subnet
 * manager; inside one subnet the address handle is local (LID-routed, no
 * GRH: is_global 0, a non-zero DLID; IBTA vol. 1, 8.3), across subnets
 * global.
 */
#ifndef DMR_VERBS_ADDR_H
#define DMR_VERBS_ADDR_H

#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

/* Why GID table entry e cannot carry our traffic on a port of the given
 * link layer (IBV_LINK_LAYER_ETHERNET or IBV_LINK_LAYER_INFINIBAND), or
 * NULL when it can. RoCE: *ip gets the GID's IPv4 address, which must be
 * an address of an interface in ifs (on the GID's netdev when it names
 * one). IB: the GID must be of type IB and not all zero; *ip is untouched
 * (the IPoIB address comes from dmr_verbs_ipoib_refusal). A static string. */
const char *dmr_verbs_gid_refusal(int link_layer, const struct ibv_gid_entry *e,
				  const struct ifaddrs *ifs, struct in_addr *ip);

/* Why the IPv4 address of interface `ifname` (link type `arphrd`, from
 * /sys/class/net/IF/type) cannot be the rdma_cm address of an IB port, or
 * NULL: it must be an IPoIB interface (ARPHRD_INFINIBAND, 32) and, when
 * want is non-zero, that address. A static string. */
const char *dmr_verbs_ipoib_refusal(int arphrd, struct in_addr a, struct in_addr want);

/* Why the address handle rdma_cm built for a QP (rdma_init_qp_attr at RTR)
 * does not match our choice, written into why (len bytes), or NULL when it
 * does: a global handle must come from source GID index gid_index (both
 * link layers); a local one (is_global 0) is taken on RoCE as before (the
 * kernel builds the GRH) and on IB when its DLID is not 0 (LID-routed). */
const char *dmr_verbs_ah_refusal(int link_layer, const struct ibv_ah_attr *ah, int gid_index,
				 char *why, size_t len);

#endif
