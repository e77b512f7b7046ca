/*
 * replay/roles/cluster_ford.c - FORD's own config files as cluster configs
 * (contract in replay/roles.h; docs/ROLES.md "FORD's files"). The fields and
 * their meaning are FORD's (minghust/ford, config/compute_node_config.json
 * read by core/connection/meta_manager.cc and compute_pool/worker/
 * handler.cc; config/memory_node_config.json read by memory_pool/server/
 * server.cc):
 *
 *   compute_node_config.json: "local_compute_node" {machine_num (CNs),
 *   machine_id (this CN), thread_num_per_machine, coroutine_num, local_port,
 *   txn_system (0 FaRM, 1 DrTM+H, 2 FORD), comment} and "remote_pm_nodes"
 *   {remote_ips, remote_ports (RDMA exchange), remote_meta_ports}: every
 *   MN's address, no region size;
 *
 *   memory_node_config.json: "local_memory_node" {machine_num (MNs),
 *   machine_id (this MN), local_port, local_meta_port, use_pm, pm_root,
 *   mem_size_GB, log_buf_size_GB, workload} and "remote_compute_nodes"
 *   {compute_node_ips, compute_node_ports}: one MN (its region is
 *   mem_size_GB + log_buf_size_GB GiB, as FORD allocates hash and log
 *   buffers), the CNs' addresses.
 * * Motor (minghust/motor, FORD's successor: config/cn_config.json read by
 * txn/connection/meta_manager.cc and compute_node/handler/gen_output.cc,
 * config/mn_config.json read by memory_node/server/server.cc) keeps the
 * shape with other fields: the CN file's MN list is "remote_mem_nodes", its
 * local_compute_node adds iso_level (1 snapshot isolation, 2
 * serializability), crash_tnum, crash_time_ms, tp_probe_interval_ms and
 * has no txn_system; the MN file sizes the region as reserve_GB GiB of data
 * + max_client_num_per_mn x per_thread_delta_size_MB MiB of deltas and
 * lists the other MNs ("other_memory_nodes": memory_node_ips,
 * memory_node_ids, memory_node_ports).
 *
 * FORD's RDMA port is our rdma_cm port; the meta ports (FORD's TCP exchange
 * of table metadata) have nothing to carry here and are checked, then
 * ignored.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "roles_impl.h"

/* Every key of object o one of keys (else the error names it). */
static dmr_status_t only_keys(json_t *o, const char *name, const char *obj, const char *const *keys,
			      dmr_err_t *err)
{
	const char *k;
	json_t *v;
	char field[96], l[256];
	if (!json_is_object(o)) {
		dmr_roles_list(keys, l, sizeof(l));
		return dmr_roles_perr(err, name, obj, "must be an object with %s", l);
	}
	json_object_foreach(o, k, v)
	{
		if (dmr_roles_known(k, keys))
			continue;
		snprintf(field, sizeof(field), "%s.%s", obj, k);
		dmr_roles_list(keys, l, sizeof(l));
		return dmr_roles_perr(err, name, field, "unknown field (%s takes: %s)", obj, l);
	}
	return DMR_OK;
}

/* o.key as an integer in [lo, hi]; required: missing is an error, else
 * *out stays. */
static dmr_status_t ford_int(json_t *o, const char *name, const char *obj, const char *key,
			     long long lo, long long hi, int required, long long *out,
			     dmr_err_t *err)
{
	char field[96];
	snprintf(field, sizeof(field), "%s.%s", obj, key);
	json_t *v = json_object_get(o, key);
	if (!v)
		return required ? dmr_roles_perr(err, name, field,
						 "missing (an integer in %lld..%lld)", lo, hi)
				: DMR_OK;
	return dmr_roles_int(v, name, field, lo, hi, out, err);
}

static dmr_status_t ford_str(json_t *o, const char *name, const char *obj, const char *key,
			     dmr_err_t *err)
{
	char field[96];
	json_t *v = json_object_get(o, key);
	snprintf(field, sizeof(field), "%s.%s", obj, key);
	if (v && !json_is_string(v))
		return dmr_roles_perr(err, name, field, "must be a string");
	return DMR_OK;
}

/* An array of IPv4 strings (1..max) into nodes[].ip, ids 0.. */
static dmr_status_t ford_ips(json_t *o, const char *name, const char *obj, const char *key,
			     size_t max, dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	char field[96];
	snprintf(field, sizeof(field), "%s.%s", obj, key);
	json_t *a = json_object_get(o, key);
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > max)
		return dmr_roles_perr(err, name, field,
				      "%s: must be an array of 1..%zu IPv4 address strings",
				      a ? "wrong type or size" : "missing", max);
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		char f2[128];
		snprintf(f2, sizeof(f2), "%.96s[%zu]", field, i);
		nodes[i] = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		dmr_status_t st = dmr_roles_ip(v, name, f2, nodes[i].ip, err);
		if (st != DMR_OK)
			return st;
	}
	*n_p = (uint32_t)json_array_size(a);
	return DMR_OK;
}

static dmr_status_t ford_ports(json_t *o, const char *name, const char *obj, const char *key,
			       uint32_t n, const char *of, dmr_verbs_node_t *nodes, dmr_err_t *err)
{
	char field[96], off[96];
	snprintf(field, sizeof(field), "%s.%s", obj, key);
	snprintf(off, sizeof(off), "%s.%s", obj, of);
	json_t *a = json_object_get(o, key);
	if (!a)
		return dmr_roles_perr(err, name, field, "missing (one port 1..65535 per %s entry)",
				      off);
	return dmr_roles_ports(a, name, field, n, off, nodes, err);
}

static dmr_status_t parse_ford_cn(json_t *root, const char *name, int motor,
				  dmr_verbs_cluster_t *cl, char *note, size_t notelen,
				  dmr_err_t *err)
{
	static const char *const top[] = {"local_compute_node", "remote_pm_nodes", NULL};
	static const char *const mtop[] = {"local_compute_node", "remote_mem_nodes", NULL};
	static const char *const flc[] = {"machine_num",   "machine_id", "thread_num_per_machine",
					  "coroutine_num", "local_port", "txn_system",
					  "comment",	   NULL};
	static const char *const mlc[] = {"machine_num",
					  "machine_id",
					  "thread_num_per_machine",
					  "coroutine_num",
					  "local_port",
					  "comment",
					  "iso_level",
					  "crash_tnum",
					  "crash_time_ms",
					  "tp_probe_interval_ms",
					  NULL};
	const char *const *lc = motor ? mlc : flc;
	static const char *const rp[] = {"remote_ips", "remote_ports", "remote_meta_ports", NULL};
	const char *L = "local_compute_node", *R = motor ? "remote_mem_nodes" : "remote_pm_nodes";
	json_t *l = json_object_get(root, L), *r = json_object_get(root, R);
	dmr_status_t st;
	if ((st = only_keys(root, name, "(top level)", motor ? mtop : top, err)) != DMR_OK)
		return st;
	if (!r)
		return dmr_roles_perr(err, name, R,
				      "missing (remote_ips, remote_ports, remote_meta_ports: the "
				      "memory nodes)");
	if ((st = only_keys(l, name, L, lc, err)) != DMR_OK ||
	    (st = only_keys(r, name, R, rp, err)) != DMR_OK)
		return st;
	long long ncn = 0, id = 0, x = 0, txn = 2, thr = 1, crash = 0, iso = 2;
	if ((st = ford_int(l, name, L, "machine_num", 1, DMR_VERBS_MAX_NODES, 1, &ncn, err)) !=
		DMR_OK ||
	    (st = ford_int(l, name, L, "machine_id", 0, ncn - 1, 1, &id, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "thread_num_per_machine", 1, 1024, 0, &thr, err)) !=
		DMR_OK ||
	    (st = ford_int(l, name, L, "coroutine_num", 1, 64, 0, &x, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "local_port", 1, 65535, 0, &x, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "txn_system", 0, 2, 0, &txn, err)) != DMR_OK ||
	    (st = ford_str(l, name, L, "comment", err)) != DMR_OK)
		return st; /* Motor's: crash_tnum threads crash in its fault runs (gen_output.cc
			    * reads it under HAVE_COORD_CRASH only; its shipped file has 20 of 28):
			    * below the thread count */
	if (motor &&
	    ((st = ford_int(l, name, L, "iso_level", 1, 2, 0, &iso, err)) != DMR_OK ||
	     (st = ford_int(l, name, L, "crash_tnum", 0, thr - 1, 0, &crash, err)) != DMR_OK ||
	     (st = ford_int(l, name, L, "crash_time_ms", 0, 86400000, 0, &x, err)) != DMR_OK ||
	     (st = ford_int(l, name, L, "tp_probe_interval_ms", 0, 86400000, 0, &x, err)) !=
		 DMR_OK))
		return st;
	if ((st = ford_ips(r, name, R, "remote_ips", DMR_BE_MAX_MNS, cl->mn, &cl->nmn, err)) !=
		DMR_OK ||
	    (st = ford_ports(r, name, R, "remote_ports", cl->nmn, "remote_ips", cl->mn, err)) !=
		DMR_OK ||
	    (st = ford_ports(r, name, R, "remote_meta_ports", cl->nmn, "remote_ips", NULL, err)) !=
		DMR_OK)
		return st;
	cl->ncn = (uint32_t)ncn;
	for (uint32_t k = 0; k < cl->ncn; k++)
		cl->cn[k] = (dmr_verbs_node_t){.id = k, .ibport = 1, .gid = -1};
	cl->ford_machine_id = (int)id;
	snprintf(cl->shape, sizeof(cl->shape), motor ? "motor-cn" : "ford-cn");
	static const char *const sys[] = {"FaRM", "DrTM+H", "FORD"};
	if (motor && note && notelen)
		snprintf(note, notelen,
			 "%s: Motor's cn_config.json: %u MNs, %u CNs (machine_id %lld is this "
			 "file's CN); iso_level %lld (%s), the crash settings and the thread and "
			 "coroutine counts are Motor's run settings, not applied; the meta ports "
			 "are not used (rdma_cm carries the region's address)",
			 name, cl->nmn, cl->ncn, id, iso,
			 iso == 1 ? "snapshot isolation" : "serializability");
	else if (note && notelen)
		snprintf(note, notelen,
			 "%s: FORD's compute_node_config.json: %u MNs, %u CNs (machine_id %lld "
			 "is this file's CN); txn_system %lld (%s) and the thread and coroutine "
			 "counts are FORD's run settings, not applied (--threads, --coros); the "
			 "meta ports are not used (rdma_cm carries the region's address)",
			 name, cl->nmn, cl->ncn, id, txn, sys[txn]);
	return DMR_OK;
}

/* Motor's other_memory_nodes: the other MNs' ids, addresses and ports. */
static dmr_status_t motor_others(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				 uint32_t self, dmr_err_t *err)
{
	static const char *const om[] = {"memory_node_ips", "memory_node_ids", "memory_node_ports",
					 NULL};
	const char *O = "other_memory_nodes";
	json_t *o = json_object_get(root, O);
	if (!o)
		return DMR_OK;
	dmr_status_t st = only_keys(o, name, O, om, err);
	if (st != DMR_OK)
		return st;
	static dmr_verbs_node_t tmp[DMR_BE_MAX_MNS];
	uint32_t n = 0;
	char field[96];
	if ((st = ford_ips(o, name, O, "memory_node_ips", DMR_BE_MAX_MNS, tmp, &n, err)) !=
		DMR_OK ||
	    (st = ford_ports(o, name, O, "memory_node_ports", n, "memory_node_ips", tmp, err)) !=
		DMR_OK)
		return st;
	json_t *ids = json_object_get(o, "memory_node_ids");
	if (!json_is_array(ids) || json_array_size(ids) != n)
		return dmr_roles_perr(
		    err, name, "other_memory_nodes.memory_node_ids",
		    "must be an array of %u MN ids, one per memory_node_ips entry", n);
	for (uint32_t k = 0; k < n; k++) {
		long long id;
		snprintf(field, sizeof(field), "%s.memory_node_ids[%u]", O, k);
		if ((st = dmr_roles_int(json_array_get(ids, k), name, field, 0, cl->nmn - 1, &id,
					err)) != DMR_OK)
			return st;
		if ((uint32_t)id == self || cl->mn[id].ip[0])
			return dmr_roles_perr(
			    err, name, field,
			    "MN %lld is %s: each other MN once, not this one "
			    "(local_memory_node.machine_id %u)",
			    id, (uint32_t)id == self ? "this file's MN" : "listed twice", self);
		snprintf(cl->mn[id].ip, sizeof(cl->mn[id].ip), "%s", tmp[k].ip);
		cl->mn[id].port = tmp[k].port;
	}
	return DMR_OK;
}

static dmr_status_t parse_ford_mn(json_t *root, const char *name, int motor,
				  dmr_verbs_cluster_t *cl, char *note, size_t notelen,
				  dmr_err_t *err)
{
	static const char *const ftop[] = {"local_memory_node", "remote_compute_nodes", NULL};
	static const char *const mtop[] = {"local_memory_node", "remote_compute_nodes",
					   "other_memory_nodes", NULL};
	static const char *const flm[] = {
	    "machine_num", "machine_id",      "local_port", "local_meta_port", "use_pm",
	    "mem_size_GB", "log_buf_size_GB", "pm_root",    "workload",	       NULL};
	static const char *const mlm[] = {"machine_num",
					  "machine_id",
					  "local_port",
					  "local_meta_port",
					  "use_pm",
					  "pm_root",
					  "reserve_GB",
					  "max_client_num_per_mn",
					  "per_thread_delta_size_MB",
					  "workload",
					  NULL};
	const char *const *top = motor ? mtop : ftop, *const *lm = motor ? mlm : flm;
	static const char *const rc[] = {"compute_node_ips", "compute_node_ports", NULL};
	static const char *const wl[] = {"TPCC", "SmallBank", "TATP", "MICRO", NULL};
	const char *L = "local_memory_node", *R = "remote_compute_nodes";
	json_t *l = json_object_get(root, L), *r = json_object_get(root, R);
	dmr_status_t st;
	if ((st = only_keys(root, name, "(top level)", top, err)) != DMR_OK)
		return st;
	if (!r)
		return dmr_roles_perr(err, name, R,
				      "missing (compute_node_ips, compute_node_ports: the compute "
				      "nodes)");
	if ((st = only_keys(l, name, L, lm, err)) != DMR_OK ||
	    (st = only_keys(r, name, R, rc, err)) != DMR_OK)
		return st;
	long long nmn = 0, id = 0, port = 0, x = 0, pm = 0, mem = 0, logb = 0, ncl = 1, dmb = 0;
	if ((st = ford_int(l, name, L, "machine_num", 1, DMR_BE_MAX_MNS, 1, &nmn, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "machine_id", 0, nmn - 1, 1, &id, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "local_port", 1, 65535, 1, &port, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "local_meta_port", 1, 65535, 0, &x, err)) != DMR_OK ||
	    (st = ford_int(l, name, L, "use_pm", 0, 1, 0, &pm, err)) != DMR_OK ||
	    (st = ford_str(l, name, L, "pm_root", err)) != DMR_OK)
		return st;
	if (!motor &&
	    ((st = ford_int(l, name, L, "mem_size_GB", 1, 65536, 1, &mem, err)) != DMR_OK ||
	     (st = ford_int(l, name, L, "log_buf_size_GB", 0, 65536, 0, &logb, err)) != DMR_OK))
		return st;
	if (motor &&
	    ((st = ford_int(l, name, L, "reserve_GB", 1, 65536, 1, &mem, err)) != DMR_OK ||
	     (st = ford_int(l, name, L, "max_client_num_per_mn", 1, 100000, 0, &ncl, err)) !=
		 DMR_OK ||
	     (st = ford_int(l, name, L, "per_thread_delta_size_MB", 0, 1048576, 0, &dmb, err)) !=
		 DMR_OK))
		return st;
	json_t *w = json_object_get(l, "workload");
	if (w && (!json_is_string(w) || !dmr_roles_known(json_string_value(w), wl)))
		return dmr_roles_perr(err, name, "local_memory_node.workload",
				      "must be one of TPCC, SmallBank, TATP, MICRO (FORD's "
				      "names; ignored: the trace defines the workload)");
	if ((st = ford_ips(r, name, R, "compute_node_ips", DMR_VERBS_MAX_NODES, cl->cn, &cl->ncn,
			   err)) != DMR_OK ||
	    (st = ford_ports(r, name, R, "compute_node_ports", cl->ncn, "compute_node_ips", NULL,
			     err)) != DMR_OK)
		return st;
	cl->nmn = (uint32_t)nmn;
	for (uint32_t m = 0; m < cl->nmn; m++)
		cl->mn[m] = (dmr_verbs_node_t){
		    .id = m,
		    .ibport = 1,
		    .gid = -1}; /* this MN: FORD allocates mem_size_GB of hash store +
				 * log_buf_size_GB; Motor reserve_GB of data + max_client_num_per_mn
				 * x per_thread_delta_size_MB of deltas (server.cc main) */
	dmr_verbs_node_t *me = &cl->mn[id];
	me->port = (uint16_t)port;
	me->mr_size = motor ? ((uint64_t)mem << 30) + ((uint64_t)ncl * (uint64_t)dmb << 20)
			    : (uint64_t)(mem + logb) << 30;
	cl->ford_machine_id = (int)id;
	snprintf(cl->shape, sizeof(cl->shape), motor ? "motor-mn" : "ford-mn");
	if (motor && (st = motor_others(root, name, cl, (uint32_t)id, err)) != DMR_OK)
		return st;
	if (motor && note && notelen)
		snprintf(note, notelen,
			 "%s: Motor's mn_config.json: MN %lld of %lld, rdma_cm port %lld, region "
			 "%llu bytes (reserve_GB + max_client_num_per_mn x "
			 "per_thread_delta_size_MB), %u CNs; the address is the automatic "
			 "GID's%s; the workload is the trace's",
			 name, id, nmn, port, (unsigned long long)me->mr_size, cl->ncn,
			 pm ? "; use_pm 1: a DRAM region is used (pm_root ignored)" : "");
	else if (note && notelen)
		snprintf(note, notelen,
			 "%s: FORD's memory_node_config.json: MN %lld of %lld, rdma_cm port "
			 "%lld, region %lld GiB (mem_size_GB + log_buf_size_GB), %u CNs; the "
			 "address is the automatic GID's%s; the workload is the trace's",
			 name, id, nmn, port, mem + logb, cl->ncn,
			 pm ? "; use_pm 1: a DRAM region is used (pm_root ignored)" : "");
	return DMR_OK;
}

dmr_status_t dmr_roles_parse_ford(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				  char *note, size_t notelen, dmr_err_t *err)
{
	if (json_object_get(root, "local_compute_node") &&
	    json_object_get(root, "local_memory_node"))
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: both \"local_compute_node\" and \"local_memory_node\": "
				   "FORD keeps them in two files (compute_node_config.json, "
				   "memory_node_config.json); give one",
				   name);
	json_t *lm = json_object_get(root, "local_memory_node");
	int motor = json_object_get(root, "remote_mem_nodes") ||
		    json_object_get(root, "other_memory_nodes") ||
		    (json_is_object(lm) && json_object_get(lm, "reserve_GB"));
	return json_object_get(root, "local_compute_node")
		   ? parse_ford_cn(root, name, motor, cl, note, notelen, err)
		   : parse_ford_mn(root, name, motor, cl, note, notelen, err);
}
