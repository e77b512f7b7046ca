/*
 * tests/unit/test_verbs_addr.c - the verbs backend's addressing choices
 * per link layer (backends/verbs/verbs_addr.h) on made-up GID tables and
 * address handles. This is all of InfiniBand that can be tested here: the
 * rxe VM has RoCE only, and no machine of CI has an IB port, so a run on
 * InfiniBand is untested (docs/SOFTROCE-VM.md). The sim's InfiniBand
 * framing is tested below too (26 bytes per packet, models/model.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/suite.h"
#include "models/model.h"

#ifdef DMR_HAVE_VERBS
#include <arpa/inet.h>

#include "backends/verbs/verbs_addr.h"

static struct ibv_gid_entry entry(uint32_t type, const char *gid6)
{
	struct ibv_gid_entry e;
	memset(&e, 0, sizeof(e));
	e.gid_type = type;
	ck_assert_int_eq(inet_pton(AF_INET6, gid6, e.gid.raw), 1);
	return e;
}

/* one interface lo with 127.0.0.1 (always this node's) */
static struct ifaddrs *lo_ifs(struct sockaddr_in *sin)
{
	static struct ifaddrs ifa;
	static char name[] = "lo";
	memset(&ifa, 0, sizeof(ifa));
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &sin->sin_addr);
	ifa.ifa_name = name;
	ifa.ifa_addr = (struct sockaddr *)sin;
	return &ifa;
}

START_TEST(gid_choice_per_link_layer)
{
	struct sockaddr_in sin;
	struct ifaddrs *ifs = lo_ifs(&sin);
	struct in_addr ip = {0};
	struct ibv_gid_entry ib = entry(IBV_GID_TYPE_IB, "fe80::248a:703:49:d4f0"),
			     v2 = entry(IBV_GID_TYPE_ROCE_V2, "::ffff:127.0.0.1"),
			     v1 = entry(IBV_GID_TYPE_ROCE_V1, "::ffff:127.0.0.1"),
			     v2x = entry(IBV_GID_TYPE_ROCE_V2, "::ffff:10.9.9.9"),
			     ib0 = entry(IBV_GID_TYPE_IB, "::");
	/* InfiniBand: the IB GID, nothing of RoCE */
	ck_assert_ptr_null(dmr_verbs_gid_refusal(IBV_LINK_LAYER_INFINIBAND, &ib, ifs, &ip));
	ck_assert_str_eq(dmr_verbs_gid_refusal(IBV_LINK_LAYER_INFINIBAND, &v2, ifs, &ip),
			 "not an InfiniBand GID");
	ck_assert_str_eq(dmr_verbs_gid_refusal(IBV_LINK_LAYER_INFINIBAND, &ib0, ifs, &ip), "empty");
	/* RoCE: the RoCEv2 GID of one of this node's addresses */
	ck_assert_ptr_null(dmr_verbs_gid_refusal(IBV_LINK_LAYER_ETHERNET, &v2, ifs, &ip));
	ck_assert_uint_eq(ntohl(ip.s_addr), 0x7f000001u);
	ck_assert_str_eq(dmr_verbs_gid_refusal(IBV_LINK_LAYER_ETHERNET, &v1, ifs, &ip), "RoCEv1");
	ck_assert_str_eq(dmr_verbs_gid_refusal(IBV_LINK_LAYER_ETHERNET, &ib, ifs, &ip), "not RoCE");
	ck_assert_str_eq(dmr_verbs_gid_refusal(IBV_LINK_LAYER_ETHERNET, &v2x, ifs, &ip),
			 "foreign (not an address of this node)");
}
END_TEST

START_TEST(ipoib_address)
{
	struct in_addr a, none = {0}, other;
	inet_pton(AF_INET, "192.168.10.5", &a);
	inet_pton(AF_INET, "192.168.10.6", &other);
	ck_assert_ptr_null(dmr_verbs_ipoib_refusal(32, a, none));
	ck_assert_ptr_null(dmr_verbs_ipoib_refusal(32, a, a));
	ck_assert_str_eq(dmr_verbs_ipoib_refusal(1, a, none), "not an IPoIB interface");
	ck_assert_str_eq(dmr_verbs_ipoib_refusal(32, a, other), "not the configured ip");
	inet_pton(AF_INET, "169.254.3.4", &a);
	ck_assert_str_eq(dmr_verbs_ipoib_refusal(32, a, none), "IPv4 link-local (169.254/16)");
}
END_TEST

START_TEST(address_handle_per_link_layer)
{
	char why[160];
	struct ibv_ah_attr ah;
	memset(&ah, 0, sizeof(ah));
	/* IB inside a subnet: local, LID-routed */
	ah.dlid = 0x12;
	ck_assert_ptr_null(
	    dmr_verbs_ah_refusal(IBV_LINK_LAYER_INFINIBAND, &ah, 0, why, sizeof(why)));
	ah.dlid = 0;
	ck_assert_ptr_nonnull(
	    dmr_verbs_ah_refusal(IBV_LINK_LAYER_INFINIBAND, &ah, 0, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "DLID 0"));
	/* global handles: the chosen source GID, on both */
	ah.is_global = 1;
	ah.grh.sgid_index = 3;
	ck_assert_ptr_null(dmr_verbs_ah_refusal(IBV_LINK_LAYER_ETHERNET, &ah, 3, why, sizeof(why)));
	ck_assert_ptr_null(
	    dmr_verbs_ah_refusal(IBV_LINK_LAYER_INFINIBAND, &ah, 3, why, sizeof(why)));
	ck_assert_ptr_nonnull(
	    dmr_verbs_ah_refusal(IBV_LINK_LAYER_ETHERNET, &ah, 1, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "source GID index 3, not the chosen 1"));
	ck_assert_ptr_nonnull(strstr(why, "default_roce_mode"));
	ck_assert_ptr_nonnull(
	    dmr_verbs_ah_refusal(IBV_LINK_LAYER_INFINIBAND, &ah, 1, why, sizeof(why)));
	ck_assert_ptr_null(strstr(why, "default_roce_mode"));
}
END_TEST
#endif /* DMR_HAVE_VERBS */

/* The sim's framing: 26 bytes per packet on InfiniBand, 82 on RoCEv2; a
 * 64 B READ response is 64 + 26 + AETH 4 bytes on IB. */
START_TEST(sim_ib_framing)
{
	dmr_model_t roce, ib;
	dmr_err_t err;
	ck_assert_msg(dmr_model_load("cx6dx-100g", &roce, &err) == DMR_OK, "%s", err.msg);
	ck_assert_msg(dmr_model_load("cx6-edr-ib", &ib, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(roce.ib, 0);
	ck_assert_int_eq(ib.ib, 1);
	ck_assert_uint_eq(roce.pkt_overhead, 82);
	ck_assert_uint_eq(ib.pkt_overhead, 26);
	ck_assert_uint_eq(dmr_model_msg_wire_bytes(&ib, 64, 4, 0), 64 + 26 + 4);
	/* 8 KiB at MTU 4096: two packets, the headers twice */
	ck_assert_uint_eq(dmr_model_msg_wire_bytes(&ib, 8192, 4, 0), 8192 + 2 * 26 + 4);
	ck_assert_uint_eq(dmr_model_msg_wire_bytes(&roce, 8192, 4, 0), 8192 + 2 * 82 + 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verbs_addr");
	TCase *tc = tcase_create("addr");
#ifdef DMR_HAVE_VERBS
	tcase_add_test(tc, gid_choice_per_link_layer);
	tcase_add_test(tc, ipoib_address);
	tcase_add_test(tc, address_handle_per_link_layer);
#else
	printf("test_verbs_addr: the verbs addressing tests SKIPPED: built without the verbs "
	       "backend (DMR_VERBS=OFF)\n");
#endif
	tcase_add_test(tc, sim_ib_framing);
	suite_add_tcase(s, tc);
	if (dmr_test_env_init("verbs_addr", 0, 0) != 0)
		return EXIT_FAILURE;
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
