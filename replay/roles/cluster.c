/*
 * replay/roles/cluster.c - the cluster config: its two JSON shapes parsed
 * and checked field by field, read from a file, and written for one host
 * (contract in replay/roles.h; docs/ROLES.md).
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

static dmr_status_t perr(dmr_err_t *err, const char *name, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static dmr_status_t perr(dmr_err_t *err, const char *name, const char *field, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dmr_err_set(err, DMR_ERR_PARSE, "%s: field '%s': %s", name, field, msg);
}

/* Integer field in [lo, hi]. */
static dmr_status_t get_int(json_t *v, const char *name, const char *field, long long lo,
			    long long hi, long long *out, dmr_err_t *err)
{
	if (!json_is_integer(v))
		return perr(err, name, field, "must be an integer in %lld..%lld", lo, hi);
	long long x = json_integer_value(v);
	if (x < lo || x > hi)
		return perr(err, name, field, "%lld is out of range: legal %lld..%lld", x, lo, hi);
	*out = x;
	return DMR_OK;
}

static dmr_status_t get_ip(json_t *v, const char *name, const char *field, char *out,
			   dmr_err_t *err)
{
	struct in_addr a;
	if (!json_is_string(v) || inet_pton(AF_INET, json_string_value(v), &a) != 1)
		return perr(err, name, field,
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

static void list_str(const char *const *list, char *buf, size_t len)
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
			return perr(err, name, f[i].key,
				    "0 disables the ACK timer: a dead MN would never fail a "
				    "request and would be noticed only by the replay's 10 s "
				    "no-completion deadline; legal 1..31 (4.096 us x "
				    "2^timeout; 14 = 67 ms, the default)");
		dmr_status_t st = get_int(v, name, f[i].key, f[i].lo, f[i].hi, &x, err);
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

/* Shape 1: "mn" / "cn" arrays of node objects. */
static dmr_status_t parse_nodes(json_t *arr, const char *name, const char *role, int is_mn,
				dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	static const char *const mn_keys[] = {"id",  "ip",	"devname", "ibport",
					      "gid", "mr_size", NULL};
	static const char *const cn_keys[] = {"id", "ip", "devname", "ibport", "gid", NULL};
	const char *const *keys = is_mn ? mn_keys : cn_keys;
	char field[64];
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > DMR_VERBS_MAX_NODES)
		return perr(err, name, role, "must be an array of 1..%d node objects",
			    DMR_VERBS_MAX_NODES);
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		dmr_verbs_node_t *nd = &nodes[i];
		*nd = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		snprintf(field, sizeof(field), "%s[%zu]", role, i);
		if (!json_is_object(o))
			return perr(err, name, field, "must be an object with %s",
				    is_mn ? "id, ip, devname, ibport, gid, mr_size"
					  : "id, ip, devname, ibport, gid");
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v)
		{
			snprintf(field, sizeof(field), "%s[%zu].%s", role, i, k);
			if (!dmr_roles_known(k, keys)) {
				char l[128];
				list_str(keys, l, sizeof(l));
				return perr(err, name, field, "unknown field (%s entries take: %s)",
					    role, l);
			}
			long long x = 0;
			dmr_status_t st = DMR_OK;
			if (strcmp(k, "id") == 0) {
				st = get_int(v, name, field, 0, INT32_MAX, &x, err);
				nd->id = (uint32_t)x;
			} else if (strcmp(k, "ip") == 0) {
				st = get_ip(v, name, field, nd->ip, err);
			} else if (strcmp(k, "devname") == 0) {
				if (!json_is_string(v) || json_string_length(v) == 0 ||
				    json_string_length(v) >= sizeof(nd->devname))
					return perr(err, name, field,
						    "must be an RDMA device name string of 1..63 "
						    "characters (e.g. \"rxe0\", \"mlx5_0\")");
				snprintf(nd->devname, sizeof(nd->devname), "%s",
					 json_string_value(v));
			} else if (strcmp(k, "ibport") == 0) {
				st = get_int(v, name, field, 1, 255, &x, err);
				nd->ibport = (int)x;
			} else if (strcmp(k, "gid") == 0) {
				st = get_int(v, name, field, -1, 255, &x, err);
				nd->gid = (int)x;
			} else { /* mr_size, bytes */
				st = get_int(v, name, field, 64, 1ll << 48, &x, err);
				if (st == DMR_OK && (x & 7))
					return perr(err, name, field,
						    "%lld is not a multiple of 8 (legal: 64..2^48 "
						    "bytes, a multiple of 8)",
						    x);
				nd->mr_size = (uint64_t)x;
			}
			if (st != DMR_OK)
				return st;
		}
		if (is_mn && !nd->ip[0])
			return perr(err, name, role,
				    "entry %zu has no \"ip\" (the address the MN "
				    "listens on; a dotted IPv4 address)",
				    i);
		if (is_mn && !nd->mr_size)
			return perr(err, name, role,
				    "entry %zu has no \"mr_size\" (bytes, 64..2^48)", i);
		for (size_t j = 0; j < i; j++)
			if (nodes[j].id == nd->id) {
				snprintf(field, sizeof(field), "%s[%zu].id", role, i);
				return perr(err, name, field,
					    "id %u is also %s[%zu]'s: ids must be unique", nd->id,
					    role, j);
			}
	}
	*n_p = (uint32_t)json_array_size(arr);
	return DMR_OK;
}

static dmr_status_t parse_ips(json_t *arr, const char *name, const char *key,
			      dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > DMR_VERBS_MAX_NODES)
		return perr(err, name, key, "must be an array of 1..%d IPv4 address strings",
			    DMR_VERBS_MAX_NODES);
	size_t i;
	json_t *v;
	char field[64];
	json_array_foreach(arr, i, v)
	{
		snprintf(field, sizeof(field), "%s[%zu]", key, i);
		nodes[i] = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		dmr_status_t st = get_ip(v, name, field, nodes[i].ip, err);
		if (st != DMR_OK)
			return st;
	}
	*n_p = (uint32_t)json_array_size(arr);
	return DMR_OK;
}

dmr_status_t dmr_cluster_parse(const char *text, const char *name, dmr_verbs_cluster_t *cl,
			       char *note, size_t notelen, dmr_err_t *err)
{
	memset(cl, 0, sizeof(*cl));
	cl->retry_cnt = 7;
	cl->rnr_retry = 7;
	cl->timeout = 14;
	cl->port = DMR_ROLES_DEFAULT_PORT;
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
	int shape1 = json_object_get(root, "mn") || json_object_get(root, "cn");
	int shape2 = json_object_get(root, "MN_ips") || json_object_get(root, "CN_ips");
	if (shape1 == shape2) {
		st = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: %s: give either \"mn\" and \"cn\" (node objects) or \"MN_ips\" "
		    "and \"CN_ips\" (the reference's shape)",
		    name,
		    shape1 ? "both shapes mixed" : "no \"mn\"/\"cn\" nor \"MN_ips\"/\"CN_ips\"");
		goto out;
	}
	static const char *const s1_keys[] = {"mn",	 "cn",	 "retry_cnt", "rnr_retry",
					      "timeout", "port", NULL};
	static const char *const s2_keys[] = {"MN_ips",	   "CN_ips",  "ib_dev_id",    "ib_port",
					      "gid_idx",   "mr_size", "memcached_ip", "retry_cnt",
					      "rnr_retry", "timeout", "port",	      NULL};
	const char *const *keys = shape1 ? s1_keys : s2_keys;
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
	{
		if (!dmr_roles_known(k, keys)) {
			char l[256];
			list_str(keys, l, sizeof(l));
			st = perr(err, name, k, "unknown field (this shape takes: %s)", l);
			goto out;
		}
	}
	if ((st = parse_common(root, name, cl, err)) != DMR_OK)
		goto out;
	if (shape1) {
		json_t *mn = json_object_get(root, "mn"), *cn = json_object_get(root, "cn");
		if (!mn || !cn) {
			st = perr(err, name, mn ? "cn" : "mn",
				  "missing (both \"mn\" and \"cn\" are needed)");
			goto out;
		}
		if ((st = parse_nodes(mn, name, "mn", 1, cl->mn, &cl->nmn, err)) != DMR_OK ||
		    (st = parse_nodes(cn, name, "cn", 0, cl->cn, &cl->ncn, err)) != DMR_OK)
			goto out;
	} else {
		json_t *mn = json_object_get(root, "MN_ips"), *cn = json_object_get(root, "CN_ips");
		if (!mn || !cn) {
			st = perr(err, name, mn ? "CN_ips" : "MN_ips",
				  "missing (both \"MN_ips\" and \"CN_ips\" are needed)");
			goto out;
		}
		if ((st = parse_ips(mn, name, "MN_ips", cl->mn, &cl->nmn, err)) != DMR_OK ||
		    (st = parse_ips(cn, name, "CN_ips", cl->cn, &cl->ncn, err)) != DMR_OK)
			goto out;
		char dev[64] = "";
		long long port = 1, gid = -1, x = 0;
		if ((v = json_object_get(root, "ib_dev_id"))) {
			if (json_is_string(v) && json_string_length(v) > 0 &&
			    json_string_length(v) < 64) {
				snprintf(dev, sizeof(dev), "%s", json_string_value(v));
			} else {
				if ((st = get_int(v, name, "ib_dev_id", 0, 255, &x, err)) != DMR_OK)
					goto out;
				snprintf(dev, sizeof(dev), "%lld", x);
			}
		}
		if ((v = json_object_get(root, "ib_port")) &&
		    (st = get_int(v, name, "ib_port", 1, 255, &port, err)) != DMR_OK)
			goto out;
		if ((v = json_object_get(root, "gid_idx")) &&
		    (st = get_int(v, name, "gid_idx", -1, 255, &gid, err)) != DMR_OK)
			goto out;
		v = json_object_get(root, "mr_size");
		if (!v) {
			st = perr(err, name, "mr_size", "missing (GiB per MN, > 0 and <= 65536)");
			goto out;
		}
		double gb = json_is_number(v) ? json_number_value(v) : -1;
		if (!(gb > 0 && gb <= 65536)) {
			st = perr(err, name, "mr_size",
				  "must be a number of GiB in (0, 65536] (the reference's unit)");
			goto out;
		}
		uint64_t bytes = (uint64_t)llround(gb * 1073741824.0) & ~7ull;
		if (bytes < 64) {
			st = perr(err, name, "mr_size", "%g GiB is below 64 bytes", gb);
			goto out;
		}
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
			if (!json_is_string(v)) {
				st = perr(err, name, "memcached_ip",
					  "must be a string (it is ignored)");
				goto out;
			}
			if (note && notelen)
				snprintf(note, notelen,
					 "%s: \"memcached_ip\" ignored: connections are set up "
					 "through rdma_cm on the MN's ip:port, no side service is "
					 "needed",
					 name);
		}
	}
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

dmr_status_t dmr_cluster_write_host(const char *path, const dmr_verbs_info_t *vi, uint32_t ncn,
				    uint64_t mr_size, uint16_t port, dmr_err_t *err)
{
	if (ncn < 1 || ncn > DMR_VERBS_MAX_NODES)
		return dmr_err_set(err, DMR_ERR_INVALID, "%s: %u CNs: 1..%d", path, ncn,
				   DMR_VERBS_MAX_NODES);
	json_t *root = json_object(), *mns = json_array(), *cns = json_array();
	json_t *mn = json_pack("{s:i, s:s, s:s, s:i, s:i, s:I}", "id", 0, "ip", vi->ip, "devname",
			       vi->device, "ibport", vi->port, "gid", vi->gid_index, "mr_size",
			       (json_int_t)mr_size);
	json_array_append_new(mns, mn);
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
