/*
 * tests/integration/test_roles.c - the cluster config of `dmreplay mn` / `dmreplay cn`
 * (replay/roles.h, docs/ROLES.md): both published shapes parse, defaults
 * apply, and every bad value is refused naming the field and its legal
 * range; the launcher (`dmreplay run --procs`, dmr_roles_launch) refuses bad
 * input with exit status 2 before it spawns anything. No RDMA needed. The processes themselves are
 * exercised on SoftRoCE by scripts/rxe-roles-check (inside scripts/rxe-vm).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay/replay.h"
#include "replay/roles.h"
#include "helpers/suite.h"

static dmr_verbs_cluster_t cl;

static dmr_status_t parse(const char *text, char *msg, size_t len)
{
	dmr_err_t err = {{0}};
	char note[512];
	dmr_status_t st = dmr_cluster_parse(text, "c.json", &cl, note, sizeof(note), &err);
	snprintf(msg, len, "%s", st == DMR_OK ? note : err.msg);
	return st;
}

START_TEST(shape_nodes)
{
	char msg[512];
	ck_assert_int_eq(parse("{\"mn\":[{\"id\":7,\"ip\":\"10.0.2.15\",\"devname\":\"rxe0\","
			       "\"ibport\":1,\"gid\":1,\"mr_size\":1048576}],"
			       "\"cn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"rxe0\"},"
			       "{\"id\":5,\"ip\":\"10.0.2.16\",\"gid\":-1}],\"port\":20000,"
			       "\"retry_cnt\":3,\"rnr_retry\":0,\"timeout\":31}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_uint_eq(cl.nmn, 1);
	ck_assert_uint_eq(cl.ncn, 2);
	ck_assert_uint_eq(cl.mn[0].id, 7);
	ck_assert_str_eq(cl.mn[0].ip, "10.0.2.15");
	ck_assert_str_eq(cl.mn[0].devname, "rxe0");
	ck_assert_int_eq(cl.mn[0].gid, 1);
	ck_assert_uint_eq(cl.mn[0].mr_size, 1048576);
	ck_assert_uint_eq(cl.cn[1].id, 5);
	ck_assert_int_eq(cl.cn[1].ibport, 1);
	ck_assert_int_eq(cl.cn[1].gid, -1);
	ck_assert_uint_eq(cl.port, 20000);
	ck_assert_int_eq(cl.retry_cnt, 3);
	ck_assert_int_eq(cl.rnr_retry, 0);
	ck_assert_int_eq(cl.timeout, 31);
}
END_TEST

START_TEST(shape_reference)
{
	char msg[512];
	ck_assert_int_eq(parse("{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\",\"10.0.0.3\","
			       "\"10.0.0.4\"],\"ib_dev_id\":0,\"ib_port\":1,\"gid_idx\":3,"
			       "\"mr_size\":2,\"memcached_ip\":\"10.0.0.1\"}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_uint_eq(cl.nmn, 1);
	ck_assert_uint_eq(cl.ncn, 3);
	ck_assert_str_eq(cl.cn[2].ip, "10.0.0.4");
	ck_assert_uint_eq(cl.cn[2].id, 2);
	ck_assert_str_eq(cl.mn[0].devname, "0");
	ck_assert_int_eq(cl.cn[0].gid, 3);
	ck_assert_uint_eq(cl.mn[0].mr_size, 2ull << 30); /* GiB, as in the reference */
	/* defaults */
	ck_assert_int_eq(cl.retry_cnt, 7);
	ck_assert_int_eq(cl.rnr_retry, 7);
	ck_assert_int_eq(cl.timeout, 14);
	ck_assert_uint_eq(cl.port, DMR_ROLES_DEFAULT_PORT);
	/* memcached_ip: accepted, ignored, said so */
	ck_assert_ptr_nonnull(strstr(msg, "memcached_ip"));
	ck_assert_ptr_nonnull(strstr(msg, "ignored"));
	/* a device name works too, and a fractional GiB */
	ck_assert_int_eq(parse("{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],"
			       "\"ib_dev_id\":\"mlx5_0\",\"mr_size\":0.5}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_str_eq(cl.cn[0].devname, "mlx5_0");
	ck_assert_uint_eq(cl.mn[0].mr_size, 1ull << 29);
}
END_TEST

/* Each bad config is refused with DMR_ERR_PARSE; the message holds every
 * listed fragment (field name and legal range). */
static const struct bad {
	const char *json;
	const char *want[3];
} bads[] = {
#define S2 "\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1"
#define S1                                                                                         \
	"\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}],\"cn\":[{\"id\":0,\"ip\":\"10."  \
	"0.0.2\"}]"
    {"{" S2 ",\"retry_cnt\":8}", {"'retry_cnt'", "8", "0..7"}},
    {"{" S2 ",\"retry_cnt\":-1}", {"'retry_cnt'", "0..7", NULL}},
    {"{" S1 ",\"rnr_retry\":9}", {"'rnr_retry'", "0..7", NULL}},
    {"{" S1 ",\"timeout\":32}", {"'timeout'", "32", "1..31"}},
    /* issue #15 B27: 0 = no ACK timer, a dead MN never fails a request */
    {"{" S1 ",\"timeout\":0}", {"'timeout'", "disables the ACK timer", "1..31"}},
    {"{" S2 ",\"timeout\":0}", {"'timeout'", "10 s", "1..31"}},
    {"{" S1 ",\"port\":70000}", {"'port'", "1..65535", NULL}},
    {"{" S1 ",\"port\":\"x\"}", {"'port'", "integer", "1..65535"}},
    {"{" S2 ",\"ib_port\":0}", {"'ib_port'", "1..255", NULL}},
    {"{" S2 ",\"gid_idx\":256}", {"'gid_idx'", "-1..255", NULL}},
    {"{" S2 ",\"memcached\":1}", {"'memcached'", "unknown field", "memcached_ip"}},
    {"{" S1 ",\"MN_ips\":[\"10.0.0.1\"]}", {"both shapes", NULL, NULL}},
    {"{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":0}",
     {"'mr_size'", "(0, 65536]", NULL}},
    {"{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"]}", {"'mr_size'", "missing", NULL}},
    {"{\"MN_ips\":[\"10.0.0.300\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1}",
     {"'MN_ips[0]'", "IPv4", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"speed\":1}],\"cn\":[{\"id\":0}]}",
     {"'mn[0].speed'", "unknown field", "mr_size"}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}],\"cn\":[{\"id\":0,\"mr_size\":8}]}",
     {"'cn[0].mr_size'", "unknown field", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4100}],\"cn\":[{\"id\":0}]}",
     {"'mn[0].mr_size'", "multiple of 8", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":8}],\"cn\":[{\"id\":0}]}",
     {"'mn[0].mr_size'", "64..", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"ibport\":0}],\"cn\":[{\"id\":0}]}",
     {"'mn[0].ibport'", "1..255", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}],\"cn\":[{\"id\":0,\"gid\":-2}]}",
     {"'cn[0].gid'", "-1..255", NULL}},
    {"{\"mn\":[{\"id\":0,\"mr_size\":4096}],\"cn\":[{\"id\":0}]}", {"'mn'", "\"ip\"", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\"}],\"cn\":[{\"id\":0}]}", {"'mn'", "mr_size", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}],\"cn\":[{\"id\":1},{\"id\":1}]}",
     {"'cn[1].id'", "unique", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}],\"cn\":[]}",
     {"'cn'", "1..64", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096}]}", {"'cn'", "missing", NULL}},
    {"{" S1 ",\"timeout\":1,\"timeout\":2}", {"duplicate", NULL, NULL}},
    {"{\"cn\":[{\"id\":0}], }", {"line 1", NULL, NULL}},
    {"{}", {"MN_ips", NULL, NULL}},
/* several MNs (issue 11) */
#define MN2P(p0, p1)                                                                               \
	"\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"port\":" #p0 "},"                \
	"{\"id\":1,\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"port\":" #p1 "}],\"cn\":[{\"id\":0}]"
    {"{" MN2P(20000, 20000) "}", {"both at 10.0.0.1:20000", "different ports", NULL}},
    {"{" MN2P(20000, 0) "}", {"'mn[1].port'", "1..65535", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":64},{\"id\":1,\"ip\":\"10.0.0.1\","
     "\"mr_size\":64}],\"cn\":[{\"id\":0}]}",
     {"both at 10.0.0.1:18515", NULL, NULL}},
    {"{\"MN_ips\":[\"10.0.0.1\",\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1}",
     {"MN 0 (entry 0) and MN 1 (entry 1)", "different ports", NULL}},
    {"{\"MN_ips\":[\"10.0.0.1\",\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1,"
     "\"MN_ports\":[1]}",
     {"'MN_ports'", "2 ports", "MN_ips"}},
    {"{\"MN_ips\":[\"10.0.0.1\",\"10.0.0.2\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1,"
     "\"MN_ports\":[1,65536]}",
     {"'MN_ports[1]'", "1..65535", NULL}},
    {"{\"MN_ips\":[\"1.0.0.1\",\"1.0.0.2\",\"1.0.0.3\",\"1.0.0.4\",\"1.0.0.5\",\"1.0.0.6\","
     "\"1.0.0.7\",\"1.0.0.8\",\"1.0.0.9\",\"1.0.0.10\",\"1.0.0.11\",\"1.0.0.12\",\"1.0.0.13\","
     "\"1.0.0.14\",\"1.0.0.15\",\"1.0.0.16\",\"1.0.0.17\"],\"CN_ips\":[\"10.0.0.2\"],"
     "\"mr_size\":1}",
     {"'MN_ips'", "1..16", NULL}},
    /* placement against the MN list */
    {"{" MN2P(1, 2) ",\"backups\":2}", {"'backups'", "need 3 MNs", "lists 2"}},
    {"{" MN2P(1, 2) ",\"backups\":3}", {"'backups'", "0..2", NULL}},
    {"{" MN2P(1, 2) ",\"placement\":{\"warehouse\":[0,2]}}",
     {"'placement.warehouse[1]'", "MN 2 is not in the MN list", "disagree"}},
    {"{" MN2P(1, 2) ",\"placement\":{\"warehouse\":[1,1]}}",
     {"'placement.warehouse[1]'", "twice", NULL}},
    {"{" MN2P(1, 2) ",\"backups\":1,\"placement\":{\"warehouse\":[1]}}",
     {"'placement.warehouse'", "2 MN ids", "\"backups\" 1"}},
    {"{" MN2P(1, 2) ",\"placement\":{\"warehouse\":[]}}", {"'placement.warehouse'", "1..3", NULL}},
    {"{" MN2P(1, 2) ",\"placement\":[0]}", {"'placement'", "object", NULL}},
    /* CREST's shape: mr_size in GiB, workload sections objects */
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":268435456}],\"cn\":[{\"id\":0}],"
     "\"tpcc\":{}}",
     {"'mn[0].mr_size'", "GiB in 1..65536", "workload section"}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4}],\"cn\":[{\"id\":0}],"
     "\"tpcc\":3}",
     {"'tpcc'", "must be an object", NULL}},
    {"{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"mr_size\":4}],\"cn\":[{\"id\":0}],"
     "\"tpcc\":{},\"tatp2\":{}}",
     {"'tatp2'", "unknown field", NULL}},
/* FORD's files */
#define FCN(l, r) "{\"local_compute_node\":{" l "},\"remote_pm_nodes\":{" r "}}"
#define FCN_L "\"machine_num\":2,\"machine_id\":1"
#define FCN_R                                                                                      \
	"\"remote_ips\":[\"10.0.0.1\",\"10.0.0.3\"],\"remote_ports\":[1,2],"                       \
	"\"remote_meta_ports\":[3,4]"
    {FCN("\"machine_num\":2,\"machine_id\":2", FCN_R),
     {"'local_compute_node.machine_id'", "0..1", NULL}},
    {FCN("\"machine_id\":0", FCN_R), {"'local_compute_node.machine_num'", "missing", NULL}},
    {FCN(FCN_L ",\"txn_system\":3", FCN_R), {"'local_compute_node.txn_system'", "0..2", NULL}},
    {FCN(FCN_L ",\"coroutine_num\":0", FCN_R),
     {"'local_compute_node.coroutine_num'", "1..64", NULL}},
    {FCN(FCN_L ",\"threads\":2", FCN_R),
     {"'local_compute_node.threads'", "unknown field", "thread_num_per_machine"}},
    {FCN(FCN_L, "\"remote_ips\":[\"10.0.0.1\"],\"remote_ports\":[1,2],\"remote_meta_ports\":[3]"),
     {"'remote_pm_nodes.remote_ports'", "1 ports", "remote_pm_nodes.remote_ips"}},
    {FCN(FCN_L, "\"remote_ips\":[\"10.0.0.1\"],\"remote_ports\":[1]"),
     {"'remote_pm_nodes.remote_meta_ports'", "missing", NULL}},
    {FCN(FCN_L, "\"remote_ips\":[\"10.0.0.x\"],\"remote_ports\":[1],\"remote_meta_ports\":[1]"),
     {"'remote_pm_nodes.remote_ips[0]'", "IPv4", NULL}},
    {FCN(FCN_L, "\"remote_ips\":[\"10.0.0.1\",\"10.0.0.1\"],\"remote_ports\":[1,1],"
		"\"remote_meta_ports\":[3,3]"),
     {"both at 10.0.0.1:1", NULL, NULL}},
    {"{\"local_compute_node\":{" FCN_L "}}", {"'remote_pm_nodes'", "missing", NULL}},
#define FMN(l)                                                                                     \
	"{\"local_memory_node\":{" l                                                               \
	"},\"remote_compute_nodes\":{\"compute_node_ips\":[\"10.0.0.7\"],"                         \
	"\"compute_node_ports\":[12345]}}"
#define FMN_L "\"machine_num\":3,\"machine_id\":1,\"local_port\":12346,\"mem_size_GB\":8"
    {FMN("\"machine_num\":3,\"machine_id\":3,\"local_port\":1,\"mem_size_GB\":8"),
     {"'local_memory_node.machine_id'", "0..2", NULL}},
    {FMN("\"machine_num\":17,\"machine_id\":0,\"local_port\":1,\"mem_size_GB\":8"),
     {"'local_memory_node.machine_num'", "1..16", NULL}},
    {FMN(FMN_L ",\"use_pm\":2"), {"'local_memory_node.use_pm'", "0..1", NULL}},
    {FMN(FMN_L ",\"workload\":\"YCSB\""), {"'local_memory_node.workload'", "TPCC", NULL}},
    {FMN("\"machine_num\":3,\"machine_id\":1,\"local_port\":12346"),
     {"'local_memory_node.mem_size_GB'", "missing", "1..65536"}},
    {FMN(FMN_L ",\"pm_root\":1"), {"'local_memory_node.pm_root'", "string", NULL}},
    {"{\"local_memory_node\":{" FMN_L "},\"local_compute_node\":{}}", {"two files", NULL, NULL}},
/* Motor's files */
#define MCN(l)                                                                                     \
	"{\"local_compute_node\":{" l "},\"remote_mem_nodes\":{\"remote_ips\":[\"10.0.0.1\"],"     \
	"\"remote_ports\":[1],\"remote_meta_ports\":[2]}}"
    {MCN(FCN_L ",\"iso_level\":3"), {"'local_compute_node.iso_level'", "1..2", NULL}},
    {MCN(FCN_L ",\"thread_num_per_machine\":4,\"crash_tnum\":4"),
     {"'local_compute_node.crash_tnum'", "0..3", NULL}},
    {MCN(FCN_L ",\"txn_system\":2"), {"'local_compute_node.txn_system'", "unknown field", NULL}},
#define MMN(l, o)                                                                                  \
	"{\"local_memory_node\":{\"machine_num\":3,\"machine_id\":0,\"local_port\":1," l "},"      \
	"\"remote_compute_nodes\":{\"compute_node_ips\":[\"10.0.0.7\"],\"compute_node_ports\":[1]" \
	"}" o "}"
    {MMN("\"reserve_GB\":0", ""), {"'local_memory_node.reserve_GB'", "1..65536", NULL}},
    {MMN("\"reserve_GB\":1,\"mem_size_GB\":1", ""),
     {"'local_memory_node.mem_size_GB'", "unknown field", "reserve_GB"}},
    {MMN("\"reserve_GB\":1", ",\"other_memory_nodes\":{\"memory_node_ips\":[\"10.0.0.3\"],"
			     "\"memory_node_ids\":[0],\"memory_node_ports\":[1]}"),
     {"'other_memory_nodes.memory_node_ids[0]'", "this file's MN", NULL}},
    {MMN("\"reserve_GB\":1", ",\"other_memory_nodes\":{\"memory_node_ips\":[\"10.0.0.3\"],"
			     "\"memory_node_ids\":[3],\"memory_node_ports\":[1]}"),
     {"'other_memory_nodes.memory_node_ids[0]'", "0..2", NULL}},
    {MMN("\"reserve_GB\":1", ",\"other_memory_nodes\":{\"memory_node_ips\":[\"10.0.0.3\"],"
			     "\"memory_node_ids\":[1,2],\"memory_node_ports\":[1]}"),
     {"'other_memory_nodes.memory_node_ids'", "1 MN ids", NULL}},
};

START_TEST(bad_values_refused)
{
	const struct bad *b = &bads[_i];
	char msg[512];
	dmr_status_t st = parse(b->json, msg, sizeof(msg));
	ck_assert_msg(st == DMR_ERR_PARSE, "case %d accepted: %s", _i, b->json);
	ck_assert_msg(strstr(msg, "c.json") != NULL, "case %d: no file name in: %s", _i, msg);
	for (int k = 0; k < 3 && b->want[k]; k++)
		ck_assert_msg(strstr(msg, b->want[k]) != NULL, "case %d: '%s' not in: %s", _i,
			      b->want[k], msg);
}
END_TEST

/* Several MNs in each of our shapes: ports per MN, the placement. */
START_TEST(several_mns)
{
	char msg[512];
	ck_assert_int_eq(parse("{" MN2P(20000, 20001) ",\"backups\":1,\"placement\":{"
						      "\"warehouse\":[1,0],\"stock\":[0,1]}}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_str_eq(cl.shape, "dmreplay");
	ck_assert_uint_eq(cl.nmn, 2);
	ck_assert_uint_eq(cl.mn[0].port, 20000);
	ck_assert_uint_eq(cl.mn[1].port, 20001);
	ck_assert_int_eq(cl.backups, 1);
	ck_assert_uint_eq(cl.nplace, 2);
	ck_assert_str_eq(cl.place[0].table, "warehouse");
	ck_assert_uint_eq(cl.place[0].n, 2);
	ck_assert_uint_eq(cl.place[0].mn[0], 1);
	ck_assert_uint_eq(cl.place[0].mn[1], 0);
	ck_assert_uint_eq(cl.place[1].mn[0], 0);
	/* no backups given: -1 */
	ck_assert_int_eq(parse("{" MN2P(1, 2) "}", msg, sizeof(msg)), DMR_OK);
	ck_assert_int_eq(cl.backups, -1);
	ck_assert_uint_eq(cl.nplace, 0);
	/* the reference's shape with MN_ports; without, MNs on different hosts */
	ck_assert_int_eq(parse("{\"MN_ips\":[\"10.0.0.1\",\"10.0.0.1\",\"10.0.0.1\"],"
			       "\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1,\"MN_ports\":[7,8,9],"
			       "\"backups\":2}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_str_eq(cl.shape, "reference");
	ck_assert_uint_eq(cl.nmn, 3);
	ck_assert_uint_eq(cl.mn[2].port, 9);
	ck_assert_uint_eq(cl.mn[2].mr_size, 1ull << 30);
	ck_assert_int_eq(cl.backups, 2);
	ck_assert_int_eq(parse("{\"MN_ips\":[\"10.0.0.1\",\"10.0.0.3\"],\"CN_ips\":[\"10.0.0.2\"],"
			       "\"mr_size\":1}",
			       msg, sizeof(msg)),
			 DMR_OK);
	ck_assert_uint_eq(cl.mn[1].port, 0); /* the cluster's port */
	ck_assert_uint_eq(cl.port, DMR_ROLES_DEFAULT_PORT);
}
END_TEST

static dmr_status_t load_data(const char *file, char *msg, size_t len)
{
	char path[1024], note[512];
	const char *src = getenv("DMR_SOURCE_DIR");
	snprintf(path, sizeof(path), "%s/tests/data/configs/%s", src ? src : ".", file);
	dmr_err_t err = {{0}};
	dmr_status_t st = dmr_cluster_load(path, &cl, note, sizeof(note), &err);
	snprintf(msg, len, "%s", st == DMR_OK ? note : err.msg);
	return st;
}

/* CREST's own files (adslabcuhk/crest config/, tests/data/configs/NOTICE). */
START_TEST(crest_files)
{
	char msg[512];
	ck_assert_msg(load_data("crest-tpcc_config.json", msg, sizeof(msg)) == DMR_OK, "%s", msg);
	ck_assert_str_eq(cl.shape, "crest");
	ck_assert_uint_eq(cl.nmn, 2);
	ck_assert_uint_eq(cl.ncn, 3);
	ck_assert_str_eq(cl.mn[1].ip, "10.118.0.49");
	ck_assert_str_eq(cl.mn[1].devname, "mlx5_1");
	ck_assert_int_eq(cl.mn[1].gid, 3);
	ck_assert_uint_eq(cl.mn[0].mr_size, 64ull << 30); /* GiB: BenchRunner.cc * (1ULL << 30) */
	ck_assert_str_eq(cl.cn[2].ip, "10.118.0.42");
	ck_assert_str_eq(cl.cn[2].devname, "mlx5_0");
	ck_assert_ptr_nonnull(strstr(msg, "CREST"));
	ck_assert_ptr_nonnull(strstr(msg, "GiB"));
	ck_assert_msg(load_data("crest-smallbank_config1.json", msg, sizeof(msg)) == DMR_OK, "%s",
		      msg);
	ck_assert_uint_eq(cl.nmn, 2);
	ck_assert_uint_eq(cl.ncn, 1);
	ck_assert_uint_eq(cl.mn[1].mr_size, 10ull << 30);
}
END_TEST

/* FORD's own files (minghust/ford config/, tests/data/configs/NOTICE). */
START_TEST(ford_files)
{
	char msg[512];
	ck_assert_msg(load_data("ford-compute_node_config.json", msg, sizeof(msg)) == DMR_OK, "%s",
		      msg);
	ck_assert_str_eq(cl.shape, "ford-cn");
	ck_assert_uint_eq(cl.nmn, 3);
	ck_assert_str_eq(cl.mn[0].ip, "10.0.0.1");
	ck_assert_str_eq(cl.mn[2].ip, "10.0.0.5");
	ck_assert_uint_eq(cl.mn[2].port, 12346); /* remote_ports: the RDMA exchange */
	ck_assert_uint_eq(cl.mn[2].mr_size, 0);	 /* not in FORD's CN file */
	ck_assert_uint_eq(cl.ncn, 1);		 /* machine_num */
	ck_assert_str_eq(cl.cn[0].ip, "");	 /* automatic */
	ck_assert_int_eq(cl.ford_machine_id, 0);
	ck_assert_ptr_nonnull(strstr(msg, "txn_system 2 (FORD)"));
	ck_assert_msg(load_data("ford-memory_node_config.json", msg, sizeof(msg)) == DMR_OK, "%s",
		      msg);
	ck_assert_str_eq(cl.shape, "ford-mn");
	ck_assert_uint_eq(cl.nmn, 2); /* machine_num */
	ck_assert_int_eq(cl.ford_machine_id, 0);
	ck_assert_uint_eq(cl.mn[0].port, 12346);
	ck_assert_uint_eq(cl.mn[0].mr_size, (8ull + 1) << 30); /* mem_size_GB + log_buf_size_GB */
	ck_assert_str_eq(cl.mn[0].ip, "");
	ck_assert_uint_eq(cl.ncn, 1);
	ck_assert_str_eq(cl.cn[0].ip, "10.0.0.7");
	ck_assert_ptr_nonnull(strstr(msg, "use_pm 1"));
}
END_TEST

/* Motor's own files (minghust/motor config/, tests/data/configs/NOTICE). */
START_TEST(motor_files)
{
	char msg[512];
	ck_assert_msg(load_data("motor-cn_config.json", msg, sizeof(msg)) == DMR_OK, "%s", msg);
	ck_assert_str_eq(cl.shape, "motor-cn");
	ck_assert_uint_eq(cl.nmn, 3);
	ck_assert_str_eq(cl.mn[1].ip, "10.0.0.3");
	ck_assert_uint_eq(cl.mn[1].port, 12346);
	ck_assert_uint_eq(cl.ncn, 1);
	ck_assert_ptr_nonnull(strstr(msg, "iso_level 2 (serializability)"));
	ck_assert_msg(load_data("motor-mn_config.json", msg, sizeof(msg)) == DMR_OK, "%s", msg);
	ck_assert_str_eq(cl.shape, "motor-mn");
	ck_assert_uint_eq(cl.nmn, 3);
	ck_assert_int_eq(cl.ford_machine_id, 0);
	ck_assert_uint_eq(cl.mn[0].port, 12346);
	/* reserve_GB 6 + max_client_num_per_mn 50 x per_thread_delta_size_MB 50 */
	ck_assert_uint_eq(cl.mn[0].mr_size, (6ull << 30) + (50ull * 50 << 20));
	ck_assert_str_eq(cl.mn[0].ip, "");
	ck_assert_str_eq(cl.mn[1].ip, "10.0.0.3"); /* other_memory_nodes */
	ck_assert_str_eq(cl.mn[2].ip, "10.0.0.5");
	ck_assert_uint_eq(cl.mn[2].port, 12346);
	ck_assert_uint_eq(cl.ncn, 1);
}
END_TEST

START_TEST(load_missing_file)
{
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_cluster_load("/nonexistent/c.json", &cl, NULL, 0, &err), DMR_ERR_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/c.json"));
}
END_TEST

/* Bad input to the launcher: exit 2, nothing spawned, no combined summary. */
START_TEST(launch_bad_input)
{
	char dir[] = "/tmp/dmr-roles-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char out[256], cfg[256], sum[300];
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(cfg, sizeof(cfg), "%s/c.json", dir);
	snprintf(sum, sizeof(sum), "%s/summary.partial.csv", out);
	FILE *f = fopen(cfg, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"mr_size\":1048576}],"
	      "\"cn\":[{\"id\":0},{\"id\":1}]}",
	      f);
	fclose(f);
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.out_dir = out;
	o.trace = "/nonexistent.csv";
	/* not verbs */
	ck_assert_int_eq(dmr_roles_launch(&o, NULL, 0, 10, 0), 2);
	o.backend = "verbs";
	/* options the CN processes do not take */
	o.duration_s = 1;
	ck_assert_int_eq(dmr_roles_launch(&o, cfg, 0, 10, 0), 2);
	o.duration_s = 0;
	/* --cns that does not match the config's CNs */
	o.cns = 3;
	ck_assert_int_eq(dmr_roles_launch(&o, cfg, 1, 10, 0), 2);
	/* a config that does not parse */
	snprintf(cfg, sizeof(cfg), "%s/missing.json", dir);
	ck_assert_int_eq(dmr_roles_launch(&o, cfg, 0, 10, 0), 2);
	FILE *p = fopen(sum, "r");
	ck_assert_ptr_null(p);
	snprintf(cfg, sizeof(cfg), "%s/c.json", dir);
	remove(cfg);
	rmdir(out);
	rmdir(dir);
}
END_TEST

/* The files of an earlier run: unfinished ones are moved to earlier-N/,
 * finished ones refused unless force; other files are not touched. */
START_TEST(clear_earlier)
{
	char dir[] = "/tmp/dmr-roles-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char p[512], moved[512];
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	/* nothing of a run: nothing moved */
	ck_assert_int_eq(dmr_roles_clear_earlier(dir, "t", 0, moved, sizeof(moved)), 0);
	ck_assert_str_eq(moved, "");
	snprintf(p, sizeof(p), "%s/cn0", dir);
	ck_assert_int_eq(mkdir(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/cn0/summary.partial.csv", dir);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/cn0.log", dir);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(dmr_roles_clear_earlier(dir, "t", 0, moved, sizeof(moved)), 0);
	snprintf(p, sizeof(p), "%s/earlier-1", dir);
	ck_assert_str_eq(moved, p);
	snprintf(p, sizeof(p), "%s/earlier-1/cn0/summary.partial.csv", dir);
	ck_assert_int_eq(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/earlier-1/cn0.log", dir);
	ck_assert_int_eq(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	ck_assert_int_eq(access(p, F_OK), 0);
	/* finished: refused (2) and left in place, unless force */
	snprintf(p, sizeof(p), "%s/summary.csv", dir);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(dmr_roles_clear_earlier(dir, "t", 0, moved, sizeof(moved)), 2);
	ck_assert_int_eq(access(p, F_OK), 0);
	ck_assert_int_eq(dmr_roles_clear_earlier(dir, "t", 1, moved, sizeof(moved)), 0);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/earlier-2/summary.csv", dir);
	ck_assert_int_eq(access(p, F_OK), 0);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *roles_suite(void)
{
	Suite *s = suite_create("roles");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, shape_nodes);
	tcase_add_test(tc, shape_reference);
	tcase_add_loop_test(tc, bad_values_refused, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_test(tc, several_mns);
	tcase_add_test(tc, crest_files);
	tcase_add_test(tc, ford_files);
	tcase_add_test(tc, motor_files);
	tcase_add_test(tc, load_missing_file);
	tcase_add_test(tc, launch_bad_input);
	tcase_add_test(tc, clear_earlier);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return dmr_test_run(roles_suite());
}
