/*
 * replay/roles/cluster.c - the cluster config: our shapes and CREST's
 * parsed and checked field by field (FORD's two files in cluster_ford.c),
 * the placement checked against the MN list, read from a file, and written
 * for one host (contract in replay/roles.h; docs/ROLES.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "roles_impl.h"

dmr_status_t dmr_roles_perr(dmr_err_t *err, const char *name, const char *field, const char *fmt,
			    ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dmr_err_set(err, DMR_ERR_PARSE, "%s: field '%s': %s", name, field, msg);
}

dmr_status_t dmr_roles_int(json_t *v, const char *name, const char *field, long long lo,
			   long long hi, long long *out, dmr_err_t *err)
{
	if (!json_is_integer(v))
		return dmr_roles_perr(err, name, field, "must be an integer in %lld..%lld", lo, hi);
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return dmr_roles_perr(err, name, field, "%lld is out of range: legal %lld..%lld", x,
				      lo, hi);
	*out = x;
	return DMR_OK;
}

dmr_status_t dmr_roles_ip(json_t *v, const char *name, const char *field, char *out, dmr_err_t *err)
{
	struct in_addr a;
	if (!json_is_string(v) || inet_pton(AF_INET, json_string_value(v), &a) != 1)
		return dmr_roles_perr(err, name, field,
				      "must be a dotted IPv4 address string (e.g. \"10.0.2.15\")");
	snprintf(out, 16, "%s", json_string_value(v));
	return DMR_OK;
}

int dmr_roles_known(const char *key, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(key, *list) == 0)
			return 1;
	return 0;
}

void dmr_roles_list(const char *const *list, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; list[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", list[i]);
}

static dmr_status_t parse_common(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				 dmr_err_t *err)
{
	static const struct {
		const char *key;
		long long lo, hi;
	} f[] = {{"retry_cnt", 0, 7}, {"rnr_retry", 0, 7}, {"timeout", 1, 31}, {"port", 1, 65535}};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		json_t *v = json_object_get(root, f[i].key);
		if (!v)
			continue;
		long long x = 0;
		/* timeout 0 is legal verbs (IBTA: no ACK timer) but never what a
		 * run wants: a QP to a dead MN then never fails (issue #15 B27) */
		if (i == 2 && json_is_integer(v) && json_integer_value(v) == 0)
			return dmr_roles_perr(
			    err, name, f[i].key,
			    "0 disables the ACK timer: a dead MN would never fail a "
			    "request and would be noticed only by the replay's 10 s "
			    "no-completion deadline; legal 1..31 (4.096 us x "
			    "2^timeout; 14 = 67 ms, the default)");
		dmr_status_t st = dmr_roles_int(v, name, f[i].key, f[i].lo, f[i].hi, &x, err);
		if (st != DMR_OK)
			return st;
		switch (i) {
		case 0:
			cl->retry_cnt = (int)x;
			break;
		case 1:
			cl->rnr_retry = (int)x;
			break;
		case 2:
			cl->timeout = (int)x;
			break;
		default:
			cl->port = (uint16_t)x;
			break;
		}
	}
	return DMR_OK;
}

/* Shape 1 ("mn" / "cn" arrays of node objects), ours or CREST's
 * (adslabcuhk/crest config/ files, read by benchmark/BenchRunner.cc: the
 * same keys, mr_size in GiB ("* (1ULL << 30)") on MN and CN entries). */
static dmr_status_t parse_nodes(json_t *arr, const char *name, const char *role, int is_mn,
				int crest, dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	static const char *const mn_keys[] = {"id",  "ip",	"devname", "ibport",
					      "gid", "mr_size", "port",	   NULL};
	static const char *const cn_keys[] = {"id", "ip", "devname", "ibport", "gid", NULL};
	static const char *const crest_cn_keys[] = {"id",  "ip",      "devname", "ibport",
						    "gid", "mr_size", NULL};
	const char *const *keys = is_mn ? mn_keys : crest ? crest_cn_keys : cn_keys;
	size_t max = is_mn ? DMR_BE_MAX_MNS : DMR_VERBS_MAX_NODES;
	char field[64];
	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > max)
		return dmr_roles_perr(err, name, role, "must be an array of 1..%zu node objects",
				      max);
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		dmr_verbs_node_t *nd = &nodes[i];
		*nd = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		snprintf(field, sizeof(field), "%s[%zu]", role, i);
		if (!json_is_object(o)) {
			char l[128];
			dmr_roles_list(keys, l, sizeof(l));
			return dmr_roles_perr(err, name, field, "must be an object with %s", l);
		}
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v)
		{
			snprintf(field, sizeof(field), "%s[%zu].%s", role, i, k);
			if (!dmr_roles_known(k, keys)) {
				char l[128];
				dmr_roles_list(keys, l, sizeof(l));
				return dmr_roles_perr(err, name, field,
						      "unknown field (%s entries take: %s)", role,
						      l);
			}
			long long x = 0;
			dmr_status_t st = DMR_OK;
			if (strcmp(k, "id") == 0) {
				st = dmr_roles_int(v, name, field, 0, INT32_MAX, &x, err);
				nd->id = (uint32_t)x;
			} else if (strcmp(k, "ip") == 0) {
				st = dmr_roles_ip(v, name, field, nd->ip, err);
			} else if (strcmp(k, "devname") == 0) {
				if (!json_is_string(v) || json_string_length(v) == 0 ||
				    json_string_length(v) >= sizeof(nd->devname))
					return dmr_roles_perr(
					    err, name, field,
					    "must be an RDMA device name string of 1..63 "
					    "characters (e.g. \"rxe0\", \"mlx5_0\")");
				snprintf(nd->devname, sizeof(nd->devname), "%s",
					 json_string_value(v));
			} else if (strcmp(k, "ibport") == 0) {
				st = dmr_roles_int(v, name, field, 1, 255, &x, err);
				nd->ibport = (int)x;
			} else if (strcmp(k, "gid") == 0) {
				st = dmr_roles_int(v, name, field, -1, 255, &x, err);
				nd->gid = (int)x;
			} else if (strcmp(k, "port") == 0) {
				st = dmr_roles_int(v, name, field, 1, 65535, &x, err);
				nd->port = (uint16_t)x;
			} else if (crest) { /* mr_size, GiB (CREST's unit) */
				st = dmr_roles_int(v, name, field, 1, 65536, &x, err);
				if (st != DMR_OK)
					return dmr_roles_perr(
					    err, name, field,
					    "must be an integer number of GiB in 1..65536 (CREST's "
					    "unit: this file is read as CREST's config because it "
					    "has a workload section)");
				if (is_mn)
					nd->mr_size = (uint64_t)x << 30;
			} else { /* mr_size, bytes */
				st = dmr_roles_int(v, name, field, 64, 1ll << 48, &x, err);
				if (st == DMR_OK && (x & 7))
					return dmr_roles_perr(
					    err, name, field,
					    "%lld is not a multiple of 8 (legal: 64..2^48 "
					    "bytes, a multiple of 8)",
					    x);
				nd->mr_size = (uint64_t)x;
			}
			if (st != DMR_OK)
				return st;
		}
		if (is_mn && !nd->ip[0])
			return dmr_roles_perr(err, name, role,
					      "entry %zu has no \"ip\" (the address the MN "
					      "listens on; a dotted IPv4 address)",
					      i);
		if (is_mn && !nd->mr_size)
			return dmr_roles_perr(err, name, role, "entry %zu has no \"mr_size\" (%s)",
					      i, crest ? "GiB, 1..65536" : "bytes, 64..2^48");
		for (size_t j = 0; j < i; j++)
			if (nodes[j].id == nd->id) {
				snprintf(field, sizeof(field), "%s[%zu].id", role, i);
				return dmr_roles_perr(err, name, field,
						      "id %u is also %s[%zu]'s: ids must be unique",
						      nd->id, role, j);
			}
	}
	*n_p = (uint32_t)json_array_size(arr);
	return DMR_OK;
}

static dmr_status_t parse_ips(json_t *arr, const char *name, const char *key, size_t max,
			      dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > max)
		return dmr_roles_perr(err, name, key,
				      "must be an array of 1..%zu IPv4 address strings", max);
	size_t i;
	json_t *v;
	char field[64];
	json_array_foreach(arr, i, v)
	{
		snprintf(field, sizeof(field), "%s[%zu]", key, i);
		nodes[i] = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		dmr_status_t st = dmr_roles_ip(v, name, field, nodes[i].ip, err);
		if (st != DMR_OK)
			return st;
	}
	*n_p = (uint32_t)json_array_size(arr);
	return DMR_OK;
}

dmr_status_t dmr_roles_ports(json_t *arr, const char *name, const char *key, uint32_t n,
			     const char *of, dmr_verbs_node_t *nodes, dmr_err_t *err)
{
	if (!json_is_array(arr) || json_array_size(arr) != n)
		return dmr_roles_perr(err, name, key,
				      "must be an array of %u ports (1..65535), one per entry of "
				      "\"%s\"",
				      n, of);
	size_t i;
	json_t *v;
	char field[64];
	json_array_foreach(arr, i, v)
	{
		long long x = 0;
		snprintf(field, sizeof(field), "%s[%zu]", key, i);
		dmr_status_t st = dmr_roles_int(v, name, field, 1, 65535, &x, err);
		if (st != DMR_OK)
			return st;
		if (nodes)
			nodes[i].port = (uint16_t)x;
	}
	return DMR_OK;
}

/* "backups" (R) and "placement" ({"TABLE": [primary, backup, ...]} of MN
 * ids), checked against the MN list: every id an MN of the file, no MN
 * twice in a list, each list 1 + R long, R < the number of MNs. */
static dmr_status_t parse_placement(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				    dmr_err_t *err)
{
	json_t *b = json_object_get(root, "backups"), *p = json_object_get(root, "placement");
	char field[96];
	if (b) {
		long long x = 0;
		dmr_status_t st = dmr_roles_int(b, name, "backups", 0, 2, &x, err);
		if (st != DMR_OK)
			return st;
		if (x >= (long long)cl->nmn)
			return dmr_roles_perr(
			    err, name, "backups",
			    "%lld backups need %lld MNs, the file lists %u: R must "
			    "be below the number of MNs",
			    x, x + 1, cl->nmn);
		cl->backups = (int)x;
	}
	if (!p)
		return DMR_OK;
	if (!json_is_object(p) || json_object_size(p) == 0 ||
	    json_object_size(p) > DMR_VERBS_MAX_PLACE)
		return dmr_roles_perr(err, name, "placement",
				      "must be an object of 1..%d tables, each \"TABLE\": [primary "
				      "MN id, backup MN ids...]",
				      DMR_VERBS_MAX_PLACE);
	const char *t;
	json_t *l;
	json_object_foreach(p, t, l)
	{
		snprintf(field, sizeof(field), "placement.%.60s", t);
		dmr_verbs_place_t *pl = &cl->place[cl->nplace];
		if (strlen(t) == 0 || strlen(t) >= sizeof(pl->table))
			return dmr_roles_perr(err, name, field, "a table name of 1..31 characters");
		size_t want = cl->backups >= 0 ? (size_t)cl->backups + 1 : 0;
		if (want && (!json_is_array(l) || json_array_size(l) != want))
			return dmr_roles_perr(err, name, field,
					      "must list %zu MN ids (the primary and \"backups\" "
					      "%d)",
					      want, cl->backups);
		if (!json_is_array(l) || json_array_size(l) == 0 || json_array_size(l) > 3)
			return dmr_roles_perr(err, name, field,
					      "must list 1..3 MN ids (the primary, then up to 2 "
					      "backups)");
		snprintf(pl->table, sizeof(pl->table), "%s", t);
		pl->n = (uint32_t)json_array_size(l);
		for (uint32_t k = 0; k < pl->n; k++) {
			long long id = 0;
			char f2[112];
			snprintf(f2, sizeof(f2), "%s[%u]", field, k);
			dmr_status_t st =
			    dmr_roles_int(json_array_get(l, k), name, f2, 0, INT32_MAX, &id, err);
			if (st != DMR_OK)
				return st;
			uint32_t m = 0;
			while (m < cl->nmn && cl->mn[m].id != (uint32_t)id)
				m++;
			if (m == cl->nmn) {
				char ids[128];
				size_t off = 0;
				ids[0] = 0;
				for (uint32_t q = 0; q < cl->nmn && off < sizeof(ids); q++)
					off +=
					    (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%u",
							     q ? ", " : "", cl->mn[q].id);
				return dmr_roles_perr(err, name, f2,
						      "MN %lld is not in the MN list (MN ids: %s): "
						      "the MN list and the placement disagree",
						      id, ids);
			}
			for (uint32_t q = 0; q < k; q++)
				if (pl->mn[q] == m)
					return dmr_roles_perr(err, name, f2,
							      "MN %lld is listed twice: a backup "
							      "must be on another MN than the "
							      "primary and the other backups",
							      id);
			pl->mn[k] = m;
		}
		cl->nplace++;
	}
	return DMR_OK;
}

/* Every MN's ip:port unique (two MNs on one host need two ports). */
static dmr_status_t check_mn_addrs(const char *name, const dmr_verbs_cluster_t *cl, dmr_err_t *err)
{
	for (uint32_t i = 0; i < cl->nmn; i++)
		for (uint32_t j = 0; j < i && cl->mn[i].ip[0]; j++) {
			unsigned pi = cl->mn[i].port ? cl->mn[i].port : cl->port;
			unsigned pj = cl->mn[j].port ? cl->mn[j].port : cl->port;
			if (pi == pj && strcmp(cl->mn[i].ip, cl->mn[j].ip) == 0)
				return dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s: MN %u (entry %u) and MN %u (entry %u) both at %s:%u: "
				    "MNs on one host need different ports (\"port\" of an mn "
				    "entry, or \"MN_ports\")",
				    name, cl->mn[j].id, j, cl->mn[i].id, i, cl->mn[i].ip, pi);
		}
	return DMR_OK;
}

static const char *const crest_sections[] = {"tpcc", "smallbank", "ycsb", "tatp", "micro", NULL};

/* CREST's shape: node objects with a workload section (every CREST config
 * has one; its mr_size values are GiB, ours bytes). */
static int is_crest(json_t *root)
{
	for (int i = 0; crest_sections[i]; i++)
		if (json_object_get(root, crest_sections[i]))
			return 1;
	return 0;
}

/* Shape 2 (the reference's): MN_ips, CN_ips and the shared device fields. */
static dmr_status_t parse_reference(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				    char *note, size_t notelen, dmr_err_t *err)
{
	json_t *mn = json_object_get(root, "MN_ips"), *cn = json_object_get(root, "CN_ips"), *v;
	if (!mn || !cn)
		return dmr_roles_perr(err, name, mn ? "CN_ips" : "MN_ips",
				      "missing (both \"MN_ips\" and \"CN_ips\" are needed)");
	dmr_status_t st;
	if ((st = parse_ips(mn, name, "MN_ips", DMR_BE_MAX_MNS, cl->mn, &cl->nmn, err)) != DMR_OK ||
	    (st = parse_ips(cn, name, "CN_ips", DMR_VERBS_MAX_NODES, cl->cn, &cl->ncn, err)) !=
		DMR_OK)
		return st;
	if ((v = json_object_get(root, "MN_ports")) &&
	    (st = dmr_roles_ports(v, name, "MN_ports", cl->nmn, "MN_ips", cl->mn, err)) != DMR_OK)
		return st;
	char dev[64] = "";
	long long port = 1, gid = -1, x = 0;
	if ((v = json_object_get(root, "ib_dev_id"))) {
		if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < 64) {
			snprintf(dev, sizeof(dev), "%s", json_string_value(v));
		} else {
			if ((st = dmr_roles_int(v, name, "ib_dev_id", 0, 255, &x, err)) != DMR_OK)
				return st;
			snprintf(dev, sizeof(dev), "%lld", x);
		}
	}
	if ((v = json_object_get(root, "ib_port")) &&
	    (st = dmr_roles_int(v, name, "ib_port", 1, 255, &port, err)) != DMR_OK)
		return st;
	if ((v = json_object_get(root, "gid_idx")) &&
	    (st = dmr_roles_int(v, name, "gid_idx", -1, 255, &gid, err)) != DMR_OK)
		return st;
	v = json_object_get(root, "mr_size");
	if (!v)
		return dmr_roles_perr(err, name, "mr_size",
				      "missing (GiB per MN, > 0 and <= 65536)");
	double gb = json_is_number(v) ? json_number_value(v) : -1;
	if (!(gb > 0 && gb <= 65536))
		return dmr_roles_perr(
		    err, name, "mr_size",
		    "must be a number of GiB in (0, 65536] (the reference's unit)");
	uint64_t bytes = (uint64_t)llround(gb * 1073741824.0) & ~7ull;
	if (bytes < 64)
		return dmr_roles_perr(err, name, "mr_size", "%g GiB is below 64 bytes", gb);
	for (uint32_t i = 0; i < cl->nmn; i++) {
		snprintf(cl->mn[i].devname, sizeof(cl->mn[i].devname), "%s", dev);
		cl->mn[i].ibport = (int)port;
		cl->mn[i].gid = (int)gid;
		cl->mn[i].mr_size = bytes;
	}
	for (uint32_t i = 0; i < cl->ncn; i++) {
		snprintf(cl->cn[i].devname, sizeof(cl->cn[i].devname), "%s", dev);
		cl->cn[i].ibport = (int)port;
		cl->cn[i].gid = (int)gid;
	}
	if ((v = json_object_get(root, "memcached_ip"))) {
		if (!json_is_string(v))
			return dmr_roles_perr(err, name, "memcached_ip",
					      "must be a string (it is ignored)");
		if (note && notelen)
			snprintf(note, notelen,
				 "%s: \"memcached_ip\" ignored: connections are set up "
				 "through rdma_cm on the MN's ip:port, no side service is "
				 "needed",
				 name);
	}
	return DMR_OK;
}

void dmr_cluster_defaults(dmr_verbs_cluster_t *cl)
{
	memset(cl, 0, sizeof(*cl));
	cl->retry_cnt = 7;
	cl->rnr_retry = 7;
	cl->timeout = 14;
	cl->port = DMR_ROLES_DEFAULT_PORT;
	cl->backups = -1;
	cl->ford_machine_id = -1;
}

dmr_status_t dmr_cluster_parse(const char *text, const char *name, dmr_verbs_cluster_t *cl,
			       char *note, size_t notelen, dmr_err_t *err)
{
	dmr_cluster_defaults(cl);
	if (note && notelen)
		note[0] = 0;
	json_error_t je;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: line %d column %d: %s", name, je.line,
				   je.column, je.text);
	dmr_status_t st = DMR_OK;
	if (!json_is_object(root)) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: the config must be a JSON object", name);
		goto out;
	}
	if (json_object_get(root, "local_compute_node") ||
	    json_object_get(root, "local_memory_node")) {
		st = dmr_roles_parse_ford(root, name, cl, note, notelen, err);
		if (st == DMR_OK)
			st = check_mn_addrs(name, cl, err);
		goto out;
	}
	int shape1 = json_object_get(root, "mn") || json_object_get(root, "cn");
	int shape2 = json_object_get(root, "MN_ips") || json_object_get(root, "CN_ips");
	if (shape1 == shape2) {
		st = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: %s: give either \"mn\" and \"cn\" (node objects; ours or CREST's) or "
		    "\"MN_ips\" and \"CN_ips\" (the reference's shape), or FORD's "
		    "\"local_compute_node\" / \"local_memory_node\" files",
		    name,
		    shape1 ? "both shapes mixed" : "no \"mn\"/\"cn\" nor \"MN_ips\"/\"CN_ips\"");
		goto out;
	}
	int crest = shape1 && is_crest(root);
	static const char *const s1_keys[] = {
	    "mn", "cn", "retry_cnt", "rnr_retry", "timeout", "port", "backups", "placement", NULL};
	static const char *const crest_keys[] = {
	    "mn",	 "cn",	 "retry_cnt", "rnr_retry", "timeout", "port",  "backups",
	    "placement", "tpcc", "smallbank", "ycsb",	   "tatp",    "micro", NULL};
	static const char *const s2_keys[] = {"MN_ips",	   "CN_ips",	"MN_ports", "ib_dev_id",
					      "ib_port",   "gid_idx",	"mr_size",  "memcached_ip",
					      "retry_cnt", "rnr_retry", "timeout",  "port",
					      "backups",   "placement", NULL};
	const char *const *keys = crest ? crest_keys : shape1 ? s1_keys : s2_keys;
	snprintf(cl->shape, sizeof(cl->shape), "%s",
		 crest	  ? "crest"
		 : shape1 ? "dmreplay"
			  : "reference");
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
	{
		if (!dmr_roles_known(k, keys)) {
			char l[256];
			dmr_roles_list(keys, l, sizeof(l));
			st =
			    dmr_roles_perr(err, name, k, "unknown field (this shape takes: %s)", l);
			goto out;
		}
		if (crest && dmr_roles_known(k, crest_sections) && !json_is_object(v)) {
			st = dmr_roles_perr(err, name, k,
					    "must be an object (CREST's workload parameters; "
					    "ignored: the trace defines the workload)");
			goto out;
		}
	}
	if ((st = parse_common(root, name, cl, err)) != DMR_OK)
		goto out;
	if (shape1) {
		json_t *mn = json_object_get(root, "mn"), *cn = json_object_get(root, "cn");
		if (!mn || !cn) {
			st = dmr_roles_perr(err, name, mn ? "cn" : "mn",
					    "missing (both \"mn\" and \"cn\" are needed)");
			goto out;
		}
		if ((st = parse_nodes(mn, name, "mn", 1, crest, cl->mn, &cl->nmn, err)) != DMR_OK ||
		    (st = parse_nodes(cn, name, "cn", 0, crest, cl->cn, &cl->ncn, err)) != DMR_OK)
			goto out;
		if (crest && note && notelen)
			snprintf(note, notelen,
				 "%s: read as CREST's config: mr_size in GiB; the CNs' mr_size and "
				 "the workload section are ignored (the trace defines the "
				 "workload; a CN's buffers are sized by the replay)",
				 name);
	} else if ((st = parse_reference(root, name, cl, note, notelen, err)) != DMR_OK) {
		goto out;
	}
	if ((st = check_mn_addrs(name, cl, err)) != DMR_OK)
		goto out;
	st = parse_placement(root, name, cl, err);
out:
	json_decref(root);
	return st;
}

dmr_status_t dmr_cluster_load(const char *path, dmr_verbs_cluster_t *cl, char *note, size_t notelen,
			      dmr_err_t *err)
{
	char *buf;
	size_t n;
	dmr_status_t st = dmr_file_read_all(path, 1u << 24, &buf, &n, err);
	if (st != DMR_OK)
		return st;
	st = dmr_cluster_parse(buf, path, cl, note, notelen, err);
	free(buf);
	return st;
}

dmr_status_t dmr_cluster_write_host(const char *path, const dmr_verbs_info_t *vi, uint32_t nmn,
				    uint32_t ncn, uint64_t mr_size, uint16_t port, dmr_err_t *err)
{
	if (ncn < 1 || ncn > DMR_VERBS_MAX_NODES)
		return dmr_err_set(err, DMR_ERR_INVALID, "%s: %u CNs: 1..%d", path, ncn,
				   DMR_VERBS_MAX_NODES);
	if (nmn < 1 || nmn > DMR_BE_MAX_MNS || (uint32_t)port + nmn - 1 > 65535)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "%s: %u MNs from port %u: 1..%u MNs, "
				   "ports up to 65535",
				   path, nmn, port, DMR_BE_MAX_MNS);
	json_t *root = json_object(), *mns = json_array(), *cns = json_array();
	/* MN k on port + k: several MN processes on this host */
	for (uint32_t k = 0; k < nmn; k++)
		json_array_append_new(mns,
				      json_pack("{s:i, s:s, s:s, s:i, s:i, s:I, s:i}", "id", (int)k,
						"ip", vi->ip, "devname", vi->device, "ibport",
						vi->port, "gid", vi->gid_index, "mr_size",
						(json_int_t)mr_size, "port", (int)(port + k)));
	for (uint32_t k = 0; k < ncn; k++)
		json_array_append_new(cns, json_pack("{s:i, s:s, s:s, s:i, s:i}", "id", (int)k,
						     "ip", vi->ip, "devname", vi->device, "ibport",
						     vi->port, "gid", vi->gid_index));
	json_object_set_new(root, "mn", mns);
	json_object_set_new(root, "cn", cns);
	/* 6, not 7: rxe retries forever with 7 (docs/ROLES.md "A dead MN") */
	json_object_set_new(root, "retry_cnt", json_integer(6));
	json_object_set_new(root, "rnr_retry", json_integer(7));
	json_object_set_new(root, "timeout", json_integer(14));
	json_object_set_new(root, "port", json_integer(port));
	dmr_afile_t a;
	dmr_status_t st = dmr_afile_open(&a, path, err);
	if (st == DMR_OK) {
		if (json_dumpf(root, a.f, JSON_INDENT(1)) != 0) {
			dmr_afile_abort(&a);
			st = dmr_err_set(err, DMR_ERR_IO, "%s: cannot write the cluster config",
					 path);
		} else {
			st = dmr_afile_commit(&a, err);
		}
	}
	json_decref(root);
	return st;
}
