/*
 * replay/roles.c - cluster config and the MN / CN role processes (see
 * roles.h, docs/ROLES.md).
 */
#include "roles.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/layout.h"
#include "../traces/trace.h"
#include "replay.h"
#include "results.h"

/* ---- config ------------------------------------------------------------ */

static dmr_status_t perr(dmr_err_t *err, const char *name, const char *field, const char *fmt,
			 ...) __attribute__((format(printf, 4, 5)));
static dmr_status_t perr(dmr_err_t *err, const char *name, const char *field, const char *fmt,
			 ...)
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
		return perr(err, name, field, "must be a dotted IPv4 address string (e.g. \"10.0.2.15\")");
	snprintf(out, 16, "%s", json_string_value(v));
	return DMR_OK;
}

static int known(const char *key, const char *const *list)
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

static const char *const common_keys[] = {"retry_cnt", "rnr_retry", "timeout", "port", NULL};

static dmr_status_t parse_common(json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				 dmr_err_t *err)
{
	static const struct {
		const char *key;
		long long lo, hi;
	} f[] = {{"retry_cnt", 0, 7}, {"rnr_retry", 0, 7}, {"timeout", 0, 31}, {"port", 1, 65535}};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		json_t *v = json_object_get(root, f[i].key);
		if (!v)
			continue;
		long long x = 0;
		dmr_status_t st = get_int(v, name, f[i].key, f[i].lo, f[i].hi, &x, err);
		if (st != DMR_OK)
			return st;
		switch (i) {
		case 0: cl->retry_cnt = (int)x; break;
		case 1: cl->rnr_retry = (int)x; break;
		case 2: cl->timeout = (int)x; break;
		default: cl->port = (uint16_t)x; break;
		}
	}
	return DMR_OK;
}

/* Shape 1: "mn" / "cn" arrays of node objects. */
static dmr_status_t parse_nodes(json_t *arr, const char *name, const char *role, int is_mn,
				dmr_verbs_node_t *nodes, uint32_t *n_p, dmr_err_t *err)
{
	static const char *const mn_keys[] = {"id", "ip", "devname", "ibport", "gid", "mr_size", NULL};
	static const char *const cn_keys[] = {"id", "ip", "devname", "ibport", "gid", NULL};
	const char *const *keys = is_mn ? mn_keys : cn_keys;
	char field[64];
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > DMR_VERBS_MAX_NODES)
		return perr(err, name, role, "must be an array of 1..%d node objects",
			    DMR_VERBS_MAX_NODES);
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		dmr_verbs_node_t *nd = &nodes[i];
		*nd = (dmr_verbs_node_t){.id = (uint32_t)i, .ibport = 1, .gid = -1};
		snprintf(field, sizeof(field), "%s[%zu]", role, i);
		if (!json_is_object(o))
			return perr(err, name, field, "must be an object with %s",
				    is_mn ? "id, ip, devname, ibport, gid, mr_size" : "id, ip, devname, ibport, gid");
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v) {
			snprintf(field, sizeof(field), "%s[%zu].%s", role, i, k);
			if (!known(k, keys)) {
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
				snprintf(nd->devname, sizeof(nd->devname), "%s", json_string_value(v));
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
			return perr(err, name, role, "entry %zu has no \"ip\" (the address the MN "
						     "listens on; a dotted IPv4 address)", i);
		if (is_mn && !nd->mr_size)
			return perr(err, name, role, "entry %zu has no \"mr_size\" (bytes, 64..2^48)",
				    i);
		for (size_t j = 0; j < i; j++)
			if (nodes[j].id == nd->id) {
				snprintf(field, sizeof(field), "%s[%zu].id", role, i);
				return perr(err, name, field, "id %u is also %s[%zu]'s: ids must be unique",
					    nd->id, role, j);
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
	json_array_foreach(arr, i, v) {
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
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: %s: give either \"mn\" and \"cn\" (node objects) or \"MN_ips\" "
				 "and \"CN_ips\" (the reference's shape)",
				 name, shape1 ? "both shapes mixed" : "no \"mn\"/\"cn\" nor \"MN_ips\"/\"CN_ips\"");
		goto out;
	}
	static const char *const s1_keys[] = {"mn", "cn", "retry_cnt", "rnr_retry", "timeout", "port", NULL};
	static const char *const s2_keys[] = {"MN_ips", "CN_ips", "ib_dev_id", "ib_port", "gid_idx",
					      "mr_size", "memcached_ip", "retry_cnt", "rnr_retry",
					      "timeout", "port", NULL};
	const char *const *keys = shape1 ? s1_keys : s2_keys;
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v) {
		if (!known(k, keys)) {
			char l[256];
			list_str(keys, l, sizeof(l));
			st = perr(err, name, k, "unknown field (this shape takes: %s)", l);
			goto out;
		}
	}
	(void)common_keys;
	if ((st = parse_common(root, name, cl, err)) != DMR_OK)
		goto out;
	if (shape1) {
		json_t *mn = json_object_get(root, "mn"), *cn = json_object_get(root, "cn");
		if (!mn || !cn) {
			st = perr(err, name, mn ? "cn" : "mn", "missing (both \"mn\" and \"cn\" are needed)");
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
			if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < 64) {
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
				st = perr(err, name, "memcached_ip", "must be a string (it is ignored)");
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

dmr_status_t dmr_cluster_load(const char *path, dmr_verbs_cluster_t *cl, char *note,
			      size_t notelen, dmr_err_t *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (n + 1 < cap)
			break;
		if (cap >= (1u << 24)) {
			free(buf);
			fclose(f);
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: larger than 16 MiB", path);
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int rerr = ferror(f);
	fclose(f);
	if (!buf)
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
	if (rerr) {
		free(buf);
		return dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
	}
	buf[n] = 0;
	dmr_status_t st = dmr_cluster_parse(buf, path, cl, note, notelen, err);
	free(buf);
	return st;
}

/* ---- the files of an earlier run in an output directory ------------------ */

/* One of the entries a run leaves in its directory? The launcher's
 * (summary.csv, summary.partial.csv, cluster.json, mn.log, cnK.log, cnK/)
 * and a CN's (summary*.csv, timeseries*.csv, trace.cnK.csv[.tmp]). */
static int run_entry(const char *name)
{
	static const char *const fixed[] = {"summary.csv",    "summary.partial.csv",
					    "timeseries.csv", "timeseries.partial.csv",
					    "cluster.json",   "mn.log",
					    "processes.csv",  NULL};
	if (known(name, fixed))
		return 1;
	const char *p = NULL;
	if (strncmp(name, "cn", 2) == 0)
		p = name + 2;
	else if (strncmp(name, "trace.cn", 8) == 0)
		p = name + 8;
	if (!p || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (name[0] == 'c')
		return !*p || strcmp(p, ".log") == 0;
	return strcmp(p, ".csv") == 0 || strcmp(p, ".csv.tmp") == 0;
}

int dmr_roles_clear_earlier(const char *dir, const char *pfx, int force, char *moved,
			    size_t movedlen)
{
	if (moved && movedlen)
		moved[0] = 0;
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: error: --out %s: %s\n", pfx, dir, strerror(errno));
		return 2;
	}
	char fin[1600] = "", p[1400];
	int any = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!run_entry(de->d_name))
			continue;
		any = 1;
		struct stat sb;
		if (!fin[0] && strcmp(de->d_name, "summary.csv") == 0)
			snprintf(fin, sizeof(fin), "%s/summary.csv", dir);
		snprintf(p, sizeof(p), "%s/%s/summary.csv", dir, de->d_name);
		if (!fin[0] && strncmp(de->d_name, "cn", 2) == 0 && stat(p, &sb) == 0)
			snprintf(fin, sizeof(fin), "%s", p);
	}
	if (!any) {
		closedir(d);
		return 0;
	}
	if (fin[0] && !force) {
		closedir(d);
		fprintf(stderr,
			"%s: error: --out %s holds the finished results of an earlier run (%s): "
			"give a new --out, or --force to move that run's files to %s/earlier-N/ "
			"first (nothing is deleted)\n",
			pfx, dir, fin, dir);
		return 2;
	}
	char to[1200];
	int n;
	for (n = 1; n < 100000; n++) {
		snprintf(to, sizeof(to), "%s/earlier-%d", dir, n);
		if (mkdir(to, 0777) == 0)
			break;
		if (errno != EEXIST) {
			closedir(d);
			fprintf(stderr, "%s: error: %s: %s\n", pfx, to, strerror(errno));
			return 2;
		}
	}
	rewinddir(d);
	int rc = 0;
	while ((de = readdir(d))) {
		if (!run_entry(de->d_name))
			continue;
		char from[1400], dst[1600];
		snprintf(from, sizeof(from), "%s/%s", dir, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, de->d_name);
		if (rename(from, dst) != 0) {
			fprintf(stderr, "%s: error: moving %s to %s: %s\n", pfx, from, dst,
				strerror(errno));
			rc = 2;
			break;
		}
	}
	closedir(d);
	if (rc == 0)
		fprintf(stderr, "%s: note: the files of an earlier %s run in %s were moved to %s/\n",
			pfx, fin[0] ? "(finished)" : "(unfinished)", dir, to);
	if (moved && movedlen)
		snprintf(moved, movedlen, "%s", to);
	return rc;
}

/* ---- role processes ---------------------------------------------------- */

static volatile int g_stop;

static void on_stop(int sig)
{
	g_stop = sig;
}

static int exit_code(dmr_status_t st)
{
	if (st == DMR_OK)
		return 0;
	if (st == DMR_ERR_PARSE || st == DMR_ERR_IO || st == DMR_ERR_RANGE ||
	    st == DMR_ERR_INVALID || st == DMR_ERR_NODEV)
		return 2;
	if (st == DMR_ERR_INTERRUPTED)
		return 130;
	return 1;
}

static int parse_secs(const char *pfx, const char *opt, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0 && v <= 86400)) {
		fprintf(stderr, "%s: option %s '%s': seconds in (0, 86400]\n", pfx, opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_uint(const char *pfx, const char *opt, const char *s, unsigned long long lo,
		      unsigned long long hi, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !*s || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "%s: option %s '%s': an integer in %llu..%llu\n", pfx, opt, s, lo,
			hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int find_node(const dmr_verbs_node_t *nodes, uint32_t n, long long id, uint32_t *idx)
{
	for (uint32_t i = 0; i < n; i++)
		if (id < 0 || nodes[i].id == (uint32_t)id) {
			*idx = i;
			return 0;
		}
	return -1;
}

static void ids_of(const dmr_verbs_node_t *nodes, uint32_t n, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? ", " : "", nodes[i].id);
}

#define MNP "dmreplay mn"
#define CNP "dmreplay cn"

int dmr_roles_mn_main(int argc, char **argv)
{
	static const struct option lo[] = {{"config", required_argument, 0, 'c'},
					   {"id", required_argument, 0, 'i'},
					   {"barrier-timeout", required_argument, 0, 'b'},
					   {"end-timeout", required_argument, 0, 'e'},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	const char *config = NULL;
	long long id = -1;
	double barrier_s = 60, end_s = 300;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long u;
		switch (c) {
		case 'c': config = optarg; break;
		case 'i':
			if (parse_uint(MNP, "--id", optarg, 0, INT32_MAX, &u)) return 2;
			id = (long long)u;
			break;
		case 'b': if (parse_secs(MNP, "--barrier-timeout", optarg, &barrier_s)) return 2; break;
		case 'e': if (parse_secs(MNP, "--end-timeout", optarg, &end_s)) return 2; break;
		case 'h':
			printf("usage: dmreplay mn --config CLUSTER.json [--id K] [--barrier-timeout S]"
			       " [--end-timeout S]\n"
			       "  The memory node as a process (docs/ROLES.md): registers mr_size bytes\n"
			       "  (RLIMIT_MEMLOCK and max_mr_size checked first), listens with rdma_cm\n"
			       "  on the MN entry's ip:port, serves the CNs, and exits when all are done\n"
			       "  (0), when the start barrier (default 60 s + 5) passes with CNs missing\n"
			       "  (1, naming them), or when every CN disconnected before the end (1).\n"
			       "  --id: the MN entry's id (default the first MN).\n");
			return 0;
		default:
			fprintf(stderr, MNP ": unknown option or missing value: '%s' (dmreplay mn "
					    "--help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (!config || optind < argc) {
		fprintf(stderr, "dmreplay mn: %s (dmreplay mn --help)\n",
			config ? "unexpected argument" : "--config is required");
		return 2;
	}
	static dmr_verbs_cluster_t cl;
	char note[256];
	dmr_err_t err = {{0}};
	if (dmr_cluster_load(config, &cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "dmreplay mn: error: %s\n", err.msg);
		return 2;
	}
	if (note[0])
		fprintf(stderr, "dmreplay mn: note: %s\n", note);
	uint32_t idx;
	if (find_node(cl.mn, cl.nmn, id, &idx)) {
		char ids[256];
		ids_of(cl.mn, cl.nmn, ids, sizeof(ids));
		fprintf(stderr, "dmreplay mn: error: %s: no MN with id %lld (MN ids: %s)\n", config,
			id, ids);
		return 2;
	}
	if (cl.nmn != 1)
		fprintf(stderr, "dmreplay mn: note: %s lists %u MNs; CNs use only the first in "
				"this version (docs/ROLES.md)\n",
			config, cl.nmn);
#ifdef DMR_HAVE_VERBS
	dmr_verbs_role_t role = {.cl = &cl, .self = idx, .barrier_s = barrier_s, .end_s = end_s,
				 .stop = &g_stop};
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	dmr_status_t st = dmr_verbs_mn_main(&role, &err);
	if (st != DMR_OK)
		fprintf(stderr, "dmreplay mn: error: %s\n", err.msg);
	else
		fprintf(stderr, "dmreplay mn: done\n");
	return exit_code(st);
#else
	(void)barrier_s;
	(void)end_s;
	(void)on_stop;
	fprintf(stderr, "dmreplay mn: error: built without the verbs backend (libibverbs-dev, "
			"librdmacm-dev; -DDMR_VERBS=ON)\n");
	return 2;
#endif
}

/* Write this CN's share of the trace: transactions i (i < txns, 0 = all)
 * with i mod total in [first, first + n). */
static dmr_status_t write_share(const char *in, const char *out, uint32_t total, uint32_t first,
				uint32_t n, uint64_t txns, uint64_t *kept_p, dmr_err_t *err)
{
	dmr_trace_reader_t *rd = NULL;
	dmr_trace_writer_t *w = NULL;
	dmr_trace_txn_t *t = malloc(sizeof(*t));
	if (!t)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	dmr_trace_hdr_t *h = malloc(sizeof(*h));
	if (!h) {
		free(t);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	dmr_status_t st = dmr_trace_open(in, &rd, err);
	if (st == DMR_OK) {
		*h = *dmr_trace_header(rd);
		h->txns = 0; /* a share: the count is not declared */
		dmr_status_t ps = dmr_trace_hdr_set(h, "share", "cn");
		(void)ps;
		st = dmr_trace_create(out, h, &w, err);
	}
	uint64_t i = 0, kept = 0;
	while (st == DMR_OK && (!txns || i < txns)) {
		st = dmr_trace_next(rd, t, err);
		if (st == DMR_EOF) {
			st = DMR_OK;
			break;
		}
		if (st != DMR_OK)
			break;
		if (g_stop) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d while writing this CN's share of "
					 "the trace (%s; removed)",
					 (int)g_stop, out);
			break;
		}
		uint32_t wk = (uint32_t)(i++ % total);
		if (wk >= first && wk < first + n) {
			st = dmr_trace_write(w, t, err);
			kept++;
		}
	}
	if (w) {
		if (st == DMR_OK)
			st = dmr_trace_finish(w, err);
		else
			dmr_trace_abandon(w);
	}
	dmr_trace_close(rd);
	free(t);
	free(h);
	*kept_p = kept;
	return st;
}

int dmr_roles_cn_main(int argc, char **argv)
{
	static const struct option lo[] = {{"config", required_argument, 0, 'c'},
					   {"id", required_argument, 0, 'i'},
					   {"trace", required_argument, 0, 't'},
					   {"threads", required_argument, 0, 'T'},
					   {"coros", required_argument, 0, 'C'},
					   {"seed", required_argument, 0, 's'},
					   {"txns", required_argument, 0, 'n'},
					   {"retries", required_argument, 0, 'r'},
					   {"out", required_argument, 0, 'o'},
					   {"barrier-timeout", required_argument, 0, 'b'},
					   {"end-timeout", required_argument, 0, 'e'},
					   {"quiet", no_argument, 0, 'q'},
					   {"force", no_argument, 0, 'f'},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	const char *config = NULL, *trace = NULL, *out = NULL;
	int force = 0;
	long long id = -1;
	dmr_replay_opts_t o;
	dmr_replay_opts_default(&o);
	o.threads = 2;
	o.coros = 2;
	double barrier_s = 60, end_s = 300;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long u;
		switch (c) {
		case 'c': config = optarg; break;
		case 't': trace = optarg; break;
		case 'o': out = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'f': force = 1; break;
		case 'i':
			if (parse_uint(CNP, "--id", optarg, 0, INT32_MAX, &u)) return 2;
			id = (long long)u;
			break;
		case 'T': if (parse_uint(CNP, "--threads", optarg, 1, 1024, &u)) return 2; o.threads = (uint32_t)u; break;
		case 'C': if (parse_uint(CNP, "--coros", optarg, 1, 64, &u)) return 2; o.coros = (uint32_t)u; break;
		case 's': if (parse_uint(CNP, "--seed", optarg, 0, UINT64_MAX, &u)) return 2; o.seed = u; break;
		case 'n': if (parse_uint(CNP, "--txns", optarg, 0, UINT64_MAX, &u)) return 2; o.txns = u; break;
		case 'r': if (parse_uint(CNP, "--retries", optarg, 0, 1000000, &u)) return 2; o.retries = (uint32_t)u; break;
		case 'b': if (parse_secs(CNP, "--barrier-timeout", optarg, &barrier_s)) return 2; break;
		case 'e': if (parse_secs(CNP, "--end-timeout", optarg, &end_s)) return 2; break;
		case 'h':
			printf("usage: dmreplay cn --config CLUSTER.json --id K --trace FILE [--threads T]\n"
			       "       [--coros C] [--seed S] [--txns N] [--retries N] [--out DIR]\n"
			       "       [--barrier-timeout S] [--end-timeout S] [--quiet] [--force]\n"
			       "  A compute node as a process (docs/ROLES.md): T workers (every CN must\n"
			       "  use the same T), each an RC QP to the MN, run transactions i of FILE\n"
			       "  with i mod (CNs x T) in this CN's range; CN index 0 loads the initial\n"
			       "  state into the MN; after the run every CN reads the final state back\n"
			       "  and verifies it. Results: DIR (default out/cnK)/summary.csv, or\n"
			       "  summary.partial.csv on any failure. Defaults: T=2, C=2, barrier 60 s,\n"
			       "  end 300 s. A DIR holding a finished summary.csv is refused unless\n"
			       "  --force (that run's files are then moved to DIR/earlier-N/).\n"
			       "  Exit: 0, 1 failed run, 2 bad input (options, config, trace, device,\n"
			       "  port, GID), 130 SIGINT/SIGTERM (also during set-up).\n");
			return 0;
		default:
			fprintf(stderr, CNP ": unknown option or missing value: '%s' (dmreplay cn "
					    "--help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (!config || !trace || id < 0 || optind < argc) {
		fprintf(stderr, "dmreplay cn: --config, --id and --trace are required (dmreplay cn "
				"--help)\n");
		return 2;
	}
	static dmr_verbs_cluster_t cl;
	char note[256];
	dmr_err_t err = {{0}};
	if (dmr_cluster_load(config, &cl, note, sizeof(note), &err) != DMR_OK) {
		fprintf(stderr, "dmreplay cn: error: %s\n", err.msg);
		return 2;
	}
	if (note[0] && !o.quiet)
		fprintf(stderr, "dmreplay cn: note: %s\n", note);
	uint32_t idx;
	if (find_node(cl.cn, cl.ncn, id, &idx)) {
		char ids[256];
		ids_of(cl.cn, cl.ncn, ids, sizeof(ids));
		fprintf(stderr, "dmreplay cn: error: %s: no CN with id %lld (CN ids: %s)\n", config,
			id, ids);
		return 2;
	}
	char outbuf[512], share[1024];
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "out/cn%lld", id);
		out = outbuf;
	}
	o.out_dir = out;
	o.backend = "verbs";
	o.device = cl.cn[idx].devname[0] ? cl.cn[idx].devname : NULL;
	o.port = cl.cn[idx].ibport;
	o.gid_index = cl.cn[idx].gid;
	o.cns = 1;
	uint32_t total = cl.ncn * o.threads, first = idx * o.threads;
	/* the output directory first (created, writable): the share, and
	 * results on every path */
	if (dmr_results_mkdir_p(out) != 0) {
		fprintf(stderr, CNP ": error: --out %s: %s\n", out, strerror(errno));
		return 2;
	}
	/* an earlier run's files: refused when finished (unless --force), else
	 * moved to OUT/earlier-N/: never overwritten, never read as this run's */
	int erc = dmr_roles_clear_earlier(out, CNP, force, NULL, 0);
	if (erc)
		return erc;
	snprintf(share, sizeof(share), "%s/trace.cn%lld.csv", out, id);
	/* SIGINT/SIGTERM during set-up (the share takes seconds, connecting
	 * waits for the MN): stop cleanly with partial results; the replay
	 * installs its own handler for the run and restores this one */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	g_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	uint64_t kept = 0;
	dmr_status_t st = write_share(trace, share, total, first, o.threads, o.txns, &kept, &err);
	dmr_replay_result_t r;
	memset(&r, 0, sizeof(r));
	if (st == DMR_ERR_INTERRUPTED)
		goto setup_failed;
	if (st != DMR_OK) {
		fprintf(stderr, CNP ": error: %s\n", err.msg);
		return exit_code(st);
	}
	o.trace = share;
	o.txns = 0;
	/* the whole cluster's layout: log rings of all workers, global footprint */
	dmr_layout_t L;
	{
		dmr_trace_reader_t *rd = NULL;
		st = dmr_trace_open(trace, &rd, &err);
		if (st == DMR_OK)
			st = dmr_layout_init(&L, dmr_trace_header(rd), total, 64 * 1024, &err);
		dmr_trace_close(rd);
		if (st != DMR_OK) {
			fprintf(stderr, "dmreplay cn: error: %s\n", err.msg);
			return exit_code(st);
		}
	}
	if (!o.quiet)
		fprintf(stderr,
			"cn %lld: index %u of %u CNs, workers %u..%u of %u: %llu transactions of %s "
			"(written to %s); MN %u at %s:%u; footprint %llu bytes\n",
			id, idx, cl.ncn, first, first + o.threads - 1, total, (unsigned long long)kept,
			trace, share, cl.mn[0].id, cl.mn[0].ip, cl.port, (unsigned long long)L.total);
#ifdef DMR_HAVE_VERBS
	dmr_verbs_role_t role = {.cl = &cl,
				 .self = idx,
				 .first_worker = first,
				 .log_base = L.log_base,
				 .log_bytes = L.log_bytes,
				 .need_bytes = L.total,
				 .barrier_s = barrier_s,
				 .end_s = end_s,
				 .stop = &g_stop};
	dmr_replay_xv_t xv = {0};
	o.xv = &xv;
	role.xv_local = &xv.local;
	role.xv_total = &xv.total;
	role.xv_summed = &xv.summed;
	role.run_failed = &xv.failed;
	dmr_verbs_set_role(&role);
	st = dmr_replay_run(&o, &r, &err);
	dmr_err_t rerr;
	if (dmr_verbs_role_status(&rerr) != DMR_OK && (st == DMR_OK || st == DMR_ERR_VERIFY)) {
		/* the end barrier's error says why the (zeroed) image failed */
		st = dmr_err_set(&err, DMR_ERR_REMOTE, "%s", rerr.msg);
		r.partial = 1;
	}
	dmr_verbs_set_role(NULL);
#else
	(void)barrier_s;
	(void)end_s;
	st = dmr_err_set(&err, DMR_ERR_UNSUPPORTED,
			 "built without the verbs backend (libibverbs-dev, librdmacm-dev)");
#endif
	if (st == DMR_OK && g_stop)
		fprintf(stderr, CNP " %lld: note: signal %d came during set-up, after the run "
				"had started: the run was not stopped\n",
			id, (int)g_stop);
setup_failed:
	if (!r.status[0]) { /* the engine wrote nothing (it sets status last) */
		/* failed before the replay wrote anything: a partial summary anyway */
		dmr_trace_reader_t *rd = NULL;
		dmr_err_t e2;
		if (dmr_trace_open(trace, &rd, &e2) == DMR_OK) {
			snprintf(r.workload, sizeof(r.workload), "%s", dmr_trace_header(rd)->workload);
			snprintf(r.regime, sizeof(r.regime), "%s", dmr_trace_header(rd)->regime);
			dmr_trace_close(rd);
		}
		snprintf(r.backend, sizeof(r.backend), "verbs");
		snprintf(r.profile, sizeof(r.profile), "-");
		snprintf(r.profile_path, sizeof(r.profile_path), "-");
		snprintf(r.loop, sizeof(r.loop), "none");
		snprintf(r.status, sizeof(r.status), "partial");
		r.cns = 1;
		r.threads = o.threads;
		r.coros = o.coros;
		r.seed = o.seed;
		r.partial = 1;
		dmr_ts_t ts;
		dmr_ts_init(&ts, 100000000000ull);
		if (dmr_results_write(out, 0, &r, share, &ts, &e2) != DMR_OK)
			fprintf(stderr, "dmreplay cn: error: %s\n", e2.msg);
		dmr_ts_fini(&ts);
	}
	if ((st == DMR_OK || st == DMR_ERR_VERIFY || r.partial) && !o.quiet)
		dmr_replay_print(&r, stdout);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay cn %lld: error: %s (results: %s/summary.partial.csv)\n", id,
			err.msg, out);
		/* as run: a bad device (NODEV), port (RANGE) or GID, a refusal
		 * such as CNs with different --threads (INVALID), a bad trace row:
		 * bad input (2), also when the replay had started */
		return exit_code(st);
	}
	if (!o.quiet)
		printf("  results        %s/summary.csv\n", out);
	return 0;
}

/* ---- dmreplay run --procs: MN and CNs as child processes ------------------ */

typedef struct child {
	char name[24]; /* "mn K" or "cn K" */
	pid_t pid;
	int status; /* exit status; -1 running; 128+sig when killed */
	char log[1100];
} child_t;

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* fork + exec /proc/self/exe argv, stdout and stderr into log. */
static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "dmreplay run --procs: exec /proc/self/exe: %s\n", strerror(errno));
	_exit(127);
}

static void signal_all(child_t *c, uint32_t n, int sig)
{
	for (uint32_t i = 0; i < n; i++)
		if (c[i].pid > 0 && c[i].status < 0)
			kill(c[i].pid, sig);
}

/* One CSV line into at most `max` fields (no quoting: dmreplay's summaries
 * quote nothing); returns the count. */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	line[strcspn(line, "\r\n")] = 0;
	for (char *p = line; n < max;) {
		f[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	return n;
}

typedef struct cnsum {
	int have, final;
	char status[16], workload[32], regime[64];
	long long tried, committed, verified;
	double abort_rate, secs, tried_tps, committed_tps;
	/* the whole row, by column (for the combined standard row) */
	char hbuf[4096], rbuf[4096];
	char *hf[80], *rf[80];
	int nf;
} cnsum_t;

/* Value of column `name` in a CN's summary row, or NULL. */
static const char *cn_col(const cnsum_t *s, const char *name)
{
	for (int i = 0; s->have && i < s->nf; i++)
		if (strcmp(s->hf[i], name) == 0)
			return s->rf[i];
	return NULL;
}

/* Read DIR/summary.csv, else DIR/summary.partial.csv. */
static void read_cn_summary(const char *dir, cnsum_t *s)
{
	memset(s, 0, sizeof(*s));
	s->verified = 0;
	char p[1200];
	for (int fin = 1; fin >= 0 && !s->have; fin--) {
		snprintf(p, sizeof(p), "%s/%s", dir, fin ? "summary.csv" : "summary.partial.csv");
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		char *h = s->hbuf, *r = s->rbuf;
		if (fgets(h, sizeof(s->hbuf), f) && fgets(r, sizeof(s->rbuf), f)) {
			char **hf = s->hf, **rf = s->rf;
			int nh = csv_split(h, hf, 80), nr = csv_split(r, rf, 80);
			s->nf = nh < nr ? nh : nr;
			for (int i = 0; i < nh && i < nr; i++) {
				const char *k = hf[i], *v = rf[i];
				if (!strcmp(k, "status")) snprintf(s->status, sizeof(s->status), "%s", v);
				else if (!strcmp(k, "workload")) snprintf(s->workload, sizeof(s->workload), "%s", v);
				else if (!strcmp(k, "regime")) snprintf(s->regime, sizeof(s->regime), "%s", v);
				else if (!strcmp(k, "tried")) s->tried = atoll(v);
				else if (!strcmp(k, "committed")) s->committed = atoll(v);
				else if (!strcmp(k, "verified")) s->verified = atoll(v);
				else if (!strcmp(k, "abort_rate")) s->abort_rate = atof(v);
				else if (!strcmp(k, "sim_time_s")) s->secs = atof(v);
				else if (!strcmp(k, "tried_tps")) s->tried_tps = atof(v);
				else if (!strcmp(k, "committed_tps")) s->committed_tps = atof(v);
			}
			s->have = 1;
			s->final = fin;
		}
		fclose(f);
	}
}

typedef struct combo {
	const dmr_replay_opts_t *o;
	const dmr_verbs_cluster_t *cl;
	const cnsum_t *cs;
	const child_t *ch; /* [0] MN, [1 + k] CN k */
	int complete;
	const char *workload; /* from the trace's header */
} combo_t;

/*
 * OUT/summary.csv (or .partial.csv): the standard summary.csv header (as a
 * single-process run writes it, so `dmreplay report` reads it) and one row
 * for the whole run: counts (txns, tried, committed, gave_up, retries,
 * aborts by cause, verbs, skipped_ops) summed over the CNs; tried_tps and
 * committed_tps = those sums / the slowest CN's sim_time_s; abort_rate
 * weighted by the CNs' tried, atomics/reads per commit by their committed;
 * latency percentiles, times and footprint = the largest over the CNs (an
 * upper bound, not a merged distribution); cns = CN processes, threads =
 * per CN; verified 1 only when complete; status complete / partial; trace =
 * the launcher's --trace; other columns from the first CN with a summary.
 */
static int fill_standard(FILE *f, const void *a)
{
	const combo_t *c = a;
	static const char *const sums[] = {"txns", "tried", "committed", "gave_up", "retries",
					   "abort_lock", "abort_read_locked", "abort_validation",
					   "abort_duplicate", "abort_full", "verbs", "skipped_ops",
					   NULL};
	static const char *const maxes[] = {"sim_time_s", "wall_s", "loop_wall_s", "trace_wall_s",
					    "p50_us", "p99_us", "p999_us", "footprint_bytes", NULL};
	char hb[4096];
	snprintf(hb, sizeof(hb), "%s", dmr_results_header());
	char *cols[80];
	int nc = csv_split(hb, cols, 80);
	uint32_t ncn = c->cl->ncn;
	double tried = 0, committed = 0, secs = 0;
	for (uint32_t k = 0; k < ncn; k++) {
		tried += (double)c->cs[k].tried;
		committed += (double)c->cs[k].committed;
		if (c->cs[k].secs > secs)
			secs = c->cs[k].secs;
	}
	fprintf(f, "%s\n", dmr_results_header());
	for (int i = 0; i < nc; i++) {
		const char *n = cols[i];
		char v[1200] = "-";
		if (known(n, sums)) {
			long long x = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				x += s ? atoll(s) : 0;
			}
			snprintf(v, sizeof(v), "%lld", x);
		} else if (known(n, maxes)) {
			double x = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				if (s && atof(s) > x)
					x = atof(s);
			}
			if (strcmp(n, "footprint_bytes") == 0)
				snprintf(v, sizeof(v), "%.0f", x);
			else
				snprintf(v, sizeof(v), strcmp(n, "sim_time_s") == 0 ? "%.9f" : "%.3f", x);
		} else if (strcmp(n, "tried_tps") == 0 || strcmp(n, "committed_tps") == 0) {
			snprintf(v, sizeof(v), "%.3f",
				 secs > 0 ? (n[0] == 't' ? tried : committed) / secs : 0);
		} else if (strcmp(n, "abort_rate") == 0 || strcmp(n, "atomics_per_commit") == 0 ||
			   strcmp(n, "reads_per_commit") == 0) {
			int ar = n[1] == 'b';
			double num = 0, den = 0;
			for (uint32_t k = 0; k < ncn; k++) {
				const char *s = cn_col(&c->cs[k], n);
				double w = ar ? (double)c->cs[k].tried : (double)c->cs[k].committed;
				num += (s ? atof(s) : 0) * w;
				den += w;
			}
			snprintf(v, sizeof(v), ar ? "%.6f" : "%.4f", den > 0 ? num / den : 0);
		} else if (strcmp(n, "verified") == 0) {
			snprintf(v, sizeof(v), "%d", c->complete ? 1 : 0);
		} else if (strcmp(n, "status") == 0) {
			snprintf(v, sizeof(v), "%s", c->complete ? "complete" : "partial");
		} else if (strcmp(n, "cns") == 0) {
			snprintf(v, sizeof(v), "%u", ncn);
		} else if (strcmp(n, "threads") == 0) {
			snprintf(v, sizeof(v), "%u", c->o->threads);
		} else if (strcmp(n, "coros") == 0) {
			snprintf(v, sizeof(v), "%u", c->o->coros);
		} else if (strcmp(n, "seed") == 0) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)c->o->seed);
		} else if (strcmp(n, "backend") == 0) {
			snprintf(v, sizeof(v), "verbs");
		} else if (strcmp(n, "trace") == 0) {
			snprintf(v, sizeof(v), "%s", c->o->trace);
		} else if (strcmp(n, "workload") == 0 && c->workload) {
			snprintf(v, sizeof(v), "%s", c->workload);
			for (uint32_t k = 0; k < ncn; k++)
				if (cn_col(&c->cs[k], n)) {
					snprintf(v, sizeof(v), "%s", cn_col(&c->cs[k], n));
					break;
				}
		} else {
			for (uint32_t k = 0; k < ncn; k++)
				if (cn_col(&c->cs[k], n)) {
					snprintf(v, sizeof(v), "%s", cn_col(&c->cs[k], n));
					break;
				}
		}
		if (fprintf(f, "%s%s", v, i + 1 < nc ? "," : "\n") < 0)
			return -1;
	}
	return 0;
}

/* OUT/processes.csv: one row per scope (all, mn, cnK) with its exit status. */
static int fill_combined(FILE *f, const void *a)
{
	const combo_t *c = a;
	long long tried = 0, committed = 0;
	double aborts = 0, secs = 0;
	const char *wl = "-", *rg = "-";
	for (uint32_t k = 0; k < c->cl->ncn; k++) {
		const cnsum_t *s = &c->cs[k];
		tried += s->tried;
		committed += s->committed;
		aborts += s->abort_rate * s->tried;
		if (s->secs > secs)
			secs = s->secs;
		if (s->have) {
			wl = s->workload;
			rg = s->regime;
		}
	}
	fprintf(f, "scope,status,verified,exit,workload,regime,backend,cns,threads,coros,seed,"
		   "tried,committed,tried_tps,committed_tps,abort_rate,sim_time_s\n");
	fprintf(f, "all,%s,%d,%d,%s,%s,verbs,%u,%u,%u,%llu,%lld,%lld,%.3f,%.3f,%.6f,%.9f\n",
		c->complete ? "complete" : "partial", c->complete ? 1 : 0, c->complete ? 0 : 1, wl,
		rg, c->cl->ncn, c->o->threads, c->o->coros, (unsigned long long)c->o->seed, tried,
		committed, secs > 0 ? tried / secs : 0, secs > 0 ? committed / secs : 0,
		tried ? aborts / tried : 0, secs);
	fprintf(f, "mn,%s,-,%d,%s,%s,verbs,0,0,0,%llu,0,0,0,0,0,0\n",
		c->ch[0].status == 0 ? "complete" : "failed", c->ch[0].status, wl, rg,
		(unsigned long long)c->o->seed);
	int rc = 0;
	for (uint32_t k = 0; k < c->cl->ncn && rc >= 0; k++) {
		const cnsum_t *s = &c->cs[k];
		rc = fprintf(f, "cn%u,%s,%lld,%d,%s,%s,verbs,1,%u,%u,%llu,%lld,%lld,%.3f,%.3f,%.6f,%.9f\n",
			     c->cl->cn[k].id, s->have ? s->status : "missing", s->verified,
			     c->ch[1 + k].status, s->have ? s->workload : wl, s->have ? s->regime : rg,
			     c->o->threads, c->o->coros, (unsigned long long)c->o->seed, s->tried,
			     s->committed, s->tried_tps, s->committed_tps, s->abort_rate, s->secs);
	}
	return rc;
}

/* Write the cluster config for one host: MN and ncn CNs on ip. */
static dmr_status_t write_config(const char *path, const dmr_verbs_info_t *vi, uint32_t ncn,
				 uint64_t mr_size, uint16_t port, dmr_err_t *err)
{
	json_t *root = json_object(), *mns = json_array(), *cns = json_array();
	json_t *mn = json_pack("{s:i, s:s, s:s, s:i, s:i, s:I}", "id", 0, "ip", vi->ip, "devname",
			       vi->device, "ibport", vi->port, "gid", vi->gid_index, "mr_size",
			       (json_int_t)mr_size);
	json_array_append_new(mns, mn);
	for (uint32_t k = 0; k < ncn; k++)
		json_array_append_new(cns, json_pack("{s:i, s:s, s:s, s:i, s:i}", "id", (int)k, "ip",
						     vi->ip, "devname", vi->device, "ibport",
						     vi->port, "gid", vi->gid_index));
	json_object_set_new(root, "mn", mns);
	json_object_set_new(root, "cn", cns);
	/* 6, not 7: rxe retries forever with 7 (docs/ROLES.md "A dead MN") */
	json_object_set_new(root, "retry_cnt", json_integer(6));
	json_object_set_new(root, "rnr_retry", json_integer(7));
	json_object_set_new(root, "timeout", json_integer(14));
	json_object_set_new(root, "port", json_integer(port));
	int rc = json_dump_file(root, path, JSON_INDENT(1));
	json_decref(root);
	if (rc)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot write the cluster config", path);
	return DMR_OK;
}

static dmr_status_t copy_file(const char *from, const char *to, dmr_err_t *err)
{
	FILE *in = fopen(from, "rb");
	if (!in)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot open: %s", from, strerror(errno));
	FILE *out = fopen(to, "wb");
	if (!out) {
		fclose(in);
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot create: %s", to, strerror(errno));
	}
	char buf[8192];
	size_t n;
	int bad = 0;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			bad = 1;
	bad |= ferror(in);
	fclose(in);
	if (fclose(out) || bad)
		return dmr_err_set(err, DMR_ERR_IO, "%s: write failed", to);
	return DMR_OK;
}

/* Wait for the children ch[0..n) (status < 0 = running): SIGINT/SIGTERM
 * (g_stop) are forwarded; after deadline_s (0 = none), or 10 s after a
 * child failed (status != 0, including 127 = not started), the rest get
 * SIGTERM, and SIGKILL 10 s later. mn_first: ch[0] is the MN, stopped at
 * once when every CN (ch[1..n)) has exited and one failed. Sets
 * *interrupted_p / *timed_out_p. The caller installs and restores the
 * signal handlers. */
static void wait_children(const char *pfx, child_t *ch, uint32_t n, double deadline_s,
			  int mn_first, int *interrupted_p, int *timed_out_p)
{
	double t0 = mono_s(), fail_at = 0, term_at = 0;
	int forwarded = 0;
	uint32_t left = 0;
	*interrupted_p = *timed_out_p = 0;
	for (uint32_t i = 0; i < n; i++) {
		left += ch[i].status < 0;
		if (ch[i].status > 0 && !fail_at)
			fail_at = t0;
	}
	while (left > 0) {
		int wst;
		pid_t pid = waitpid(-1, &wst, WNOHANG);
		if (pid > 0) {
			for (uint32_t i = 0; i < n; i++)
				if (ch[i].pid == pid && ch[i].status < 0) {
					ch[i].status = WIFEXITED(wst) ? WEXITSTATUS(wst)
								      : 128 + WTERMSIG(wst);
					left--;
					fprintf(stderr, "%s: %s exited %d after %.1f s\n", pfx,
						ch[i].name, ch[i].status, mono_s() - t0);
					if (ch[i].status != 0 && !fail_at)
						fail_at = mono_s();
				}
			continue;
		}
		double now = mono_s();
		if (g_stop && !forwarded) {
			*interrupted_p = 1;
			forwarded = 1;
			fprintf(stderr, "%s: signal %d: forwarded to the children\n", pfx, (int)g_stop);
			signal_all(ch, n, g_stop);
			term_at = now;
		}
		if (!forwarded && deadline_s > 0 && now - t0 > deadline_s) {
			*timed_out_p = 1;
			forwarded = 1;
			fprintf(stderr, "%s: deadline of %.0f s passed: stopping the children (SIGTERM)\n",
				pfx, deadline_s);
			signal_all(ch, n, SIGTERM);
			term_at = now;
		}
		if (!forwarded && mn_first && ch[0].status < 0 && fail_at) {
			/* every CN has exited and one failed: the MN has nobody to
			 * serve (it would wait for its barrier); stop it now */
			uint32_t cn_left = 0;
			for (uint32_t k = 1; k < n; k++)
				cn_left += ch[k].status < 0;
			if (!cn_left) {
				forwarded = 1;
				fprintf(stderr, "%s: every CN has exited, one failed: stopping the MN "
						"(SIGTERM)\n",
					pfx);
				signal_all(ch, n, SIGTERM);
				term_at = now;
			}
		}
		if (!forwarded && fail_at && now - fail_at > 10) {
			forwarded = 1;
			fprintf(stderr, "%s: a child failed 10 s ago: stopping the others (SIGTERM)\n",
				pfx);
			signal_all(ch, n, SIGTERM);
			term_at = now;
		}
		if (forwarded && term_at && now - term_at > 10) {
			signal_all(ch, n, SIGKILL);
			term_at = 0;
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

int dmr_roles_spawn_wait(const char *pfx, uint32_t n, char **const argvs[],
			 const char *const names[], const char *const logs[], double deadline_s,
			 int *status_p)
{
	child_t *ch = calloc(n ? n : 1, sizeof(*ch));
	if (!ch) {
		fprintf(stderr, "%s: error: out of memory\n", pfx);
		for (uint32_t i = 0; i < n; i++)
			status_p[i] = 127;
		return 1;
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	g_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(ch[i].name, sizeof(ch[i].name), "%s", names[i]);
		snprintf(ch[i].log, sizeof(ch[i].log), "%s", logs[i]);
		ch[i].status = -1;
		ch[i].pid = spawn(argvs[i], ch[i].log);
		if (ch[i].pid <= 0) {
			fprintf(stderr, "%s: error: fork (%s): %s\n", pfx, names[i], strerror(errno));
			ch[i].pid = 0;
			ch[i].status = 127;
			signal_all(ch, i, SIGTERM);
			for (uint32_t j = i + 1; j < n; j++)
				ch[j].status = 127;
			break;
		}
	}
	int interrupted, timed_out;
	wait_children(pfx, ch, n, deadline_s, 0, &interrupted, &timed_out);
	int rc = interrupted ? 130 : timed_out ? 1 : 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	for (uint32_t i = 0; i < n; i++)
		status_p[i] = ch[i].status;
	free(ch);
	return rc;
}

/* A rate for people: txn/s below 1000, else K or M txn/s. */
static const char *fmt_rate(double tps, char *buf, size_t len)
{
	if (tps < 1e3)
		snprintf(buf, len, "%.1f txn/s", tps);
	else if (tps < 1e6)
		snprintf(buf, len, "%.1f K txn/s", tps / 1e3);
	else
		snprintf(buf, len, "%.2f M txn/s", tps / 1e6);
	return buf;
}

/* The lines of a child's log that say what went wrong: those with "error"
 * (else "fail", else "warning"), at most 6; else its last 4 lines. */
static void print_log_errors(const char *pfx, const char *log)
{
	static const char *const keys[] = {"error", "fail", "warning"};
	char line[512];
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		FILE *f = fopen(log, "r");
		int n = 0;
		while (f && n < 6 && fgets(line, sizeof(line), f))
			if (strstr(line, keys[k])) {
				fprintf(stderr, "    %s%s", line, strchr(line, '\n') ? "" : "\n");
				n++;
			}
		if (f)
			fclose(f);
		if (n)
			return;
	}
	(void)pfx;
	FILE *f = fopen(log, "r");
	char ring[4][512];
	int nl = 0;
	while (f && fgets(line, sizeof(line), f))
		snprintf(ring[nl++ % 4], sizeof(ring[0]), "%s", line);
	for (int j = nl > 4 ? nl - 4 : 0; j < nl; j++)
		fprintf(stderr, "    %s", ring[j % 4]);
	if (f)
		fclose(f);
}

int dmr_roles_launch(const dmr_replay_opts_t *o, const char *config, int cns_given,
		     double deadline_s, int force)
{
	static dmr_verbs_cluster_t cl;
	dmr_err_t err = {{0}};
	char cfgpath[1100], note[256] = "";
	const char *pfx = "dmreplay run --procs";
	if (strcmp(o->backend, "verbs") != 0) {
		fprintf(stderr, "%s: error: --procs/--config need --backend verbs (have %s)\n", pfx,
			o->backend);
		return 2;
	}
	if (o->duration_s > 0 || o->backoff_us > 0 || o->loop.loops || o->mtu) {
		fprintf(stderr, "%s: error: %s is not passed to the CN processes (dmreplay cn takes "
				"--threads, --coros, --seed, --txns, --retries)\n",
			pfx, o->duration_s > 0 ? "--duration" : o->backoff_us > 0 ? "--backoff-us"
						 : o->loop.loops	 ? "--loop"
									 : "--mtu");
		return 2;
	}
	if (dmr_results_mkdir_p(o->out_dir) != 0) {
		fprintf(stderr, "%s: error: --out %s: not a writable directory: %s\n", pfx,
			o->out_dir, strerror(errno));
		return 2;
	}
	snprintf(cfgpath, sizeof(cfgpath), "%s/cluster.json", o->out_dir);
	dmr_status_t st;
	char workload[32] = "-";
	uint64_t footprint = 0;
	/* the trace, on both paths before anything is spawned: readable, its
	 * header valid; the footprint with every CN's workers */
	uint32_t ncn_want = o->cns;
	if (config) {
		if ((st = dmr_cluster_load(config, &cl, note, sizeof(note), &err)) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		ncn_want = cl.ncn;
	}
	{
		dmr_trace_reader_t *rd = NULL;
		dmr_layout_t L;
		st = dmr_trace_open(o->trace, &rd, &err);
		if (st == DMR_OK) {
			snprintf(workload, sizeof(workload), "%s", dmr_trace_header(rd)->workload);
			st = dmr_layout_init(&L, dmr_trace_header(rd), ncn_want * o->threads,
					     64 * 1024, &err);
		}
		dmr_trace_close(rd);
		if (st != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		footprint = L.total;
	}
	if (config && footprint > cl.mn[0].mr_size) {
		fprintf(stderr, "%s: error: %s: mn[0] mr_size %llu bytes is below the footprint of %s "
				"with %u CNs x %u threads (%llu bytes): raise mr_size\n",
			pfx, config, (unsigned long long)cl.mn[0].mr_size, o->trace, cl.ncn, o->threads,
			(unsigned long long)footprint);
		return 2;
	}
	/* same file as OUT/cluster.json? (it is moved with an earlier run) */
	struct stat sa_, sb_;
	int cfg_in_out = config && stat(config, &sa_) == 0 && stat(cfgpath, &sb_) == 0 &&
			 sa_.st_dev == sb_.st_dev && sa_.st_ino == sb_.st_ino;
	char moved[1200] = "", cfgsrc[1300];
	if (config) {
		if (cns_given && o->cns != cl.ncn) {
			fprintf(stderr, "%s: error: --cns %u but %s lists %u CNs\n", pfx, o->cns,
				config, cl.ncn);
			return 2;
		}
		int erc = dmr_roles_clear_earlier(o->out_dir, pfx, force, moved, sizeof(moved));
		if (erc)
			return erc;
		snprintf(cfgsrc, sizeof(cfgsrc), "%s", config);
		if (cfg_in_out && moved[0])
			snprintf(cfgsrc, sizeof(cfgsrc), "%s/cluster.json", moved);
		if ((!cfg_in_out || moved[0]) &&
		    (st = copy_file(cfgsrc, cfgpath, &err)) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
	} else {
#ifdef DMR_HAVE_VERBS
		if (o->cns < 1 || o->cns > DMR_VERBS_MAX_NODES) {
			fprintf(stderr, "%s: error: --cns %u: 1..%d processes\n", pfx, o->cns,
				DMR_VERBS_MAX_NODES);
			return 2;
		}
		dmr_verbs_info_t vi;
		if ((st = dmr_verbs_probe(o->device, o->port, o->gid_index, &vi, &err)) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		/* the MN region: the trace's footprint with every CN's workers */
		uint64_t mr = (footprint + 4095) & ~4095ull;
		if (o->mr_size > mr)
			mr = o->mr_size;
		/* a port of its own, so that runs on one host do not meet */
		uint16_t port = (uint16_t)(20000 + getpid() % 20000);
		int erc = dmr_roles_clear_earlier(o->out_dir, pfx, force, moved, sizeof(moved));
		if (erc)
			return erc;
		if ((st = write_config(cfgpath, &vi, o->cns, mr, port, &err)) != DMR_OK ||
		    (st = dmr_cluster_load(cfgpath, &cl, note, sizeof(note), &err)) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
#else
		fprintf(stderr, "%s: error: built without the verbs backend\n", pfx);
		return 2;
#endif
	}
	uint32_t n = 1 + cl.ncn;
	child_t *ch = calloc(n, sizeof(*ch));
	cnsum_t *cs = calloc(cl.ncn, sizeof(*cs));
	char (*outs)[1100] = calloc(cl.ncn, sizeof(*outs));
	if (!ch || !cs || !outs) {
		free(ch);
		free(cs);
		free(outs);
		fprintf(stderr, "%s: error: out of memory\n", pfx);
		return 1;
	}
	/* an earlier run's files were moved away above: what is read below is
	 * this run's only */
	char p[1200];
	snprintf(p, sizeof(p), "%s/summary.partial.csv", o->out_dir);
	char a_id[16], a_thr[16], a_cor[16], a_seed[32], a_txns[32], a_ret[16];
	snprintf(a_thr, sizeof(a_thr), "%u", o->threads);
	snprintf(a_cor, sizeof(a_cor), "%u", o->coros);
	snprintf(a_seed, sizeof(a_seed), "%llu", (unsigned long long)o->seed);
	snprintf(a_txns, sizeof(a_txns), "%llu", (unsigned long long)o->txns);
	snprintf(a_ret, sizeof(a_ret), "%u", o->retries);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	g_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fprintf(stderr, "%s: MN %u at %s:%u (%s) and %u CN processes x %u threads; config %s; "
			"logs %s/mn.log, %s/cnK.log\n",
		pfx, cl.mn[0].id, cl.mn[0].ip, cl.port, cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0",
		cl.ncn, o->threads, cfgpath, o->out_dir, o->out_dir);
	snprintf(a_id, sizeof(a_id), "%u", cl.mn[0].id);
	snprintf(ch[0].name, sizeof(ch[0].name), "mn %u", cl.mn[0].id);
	snprintf(ch[0].log, sizeof(ch[0].log), "%s/mn.log", o->out_dir);
	char *mn_argv[] = {"dmreplay", "mn", "--config", cfgpath, "--id", a_id, NULL};
	ch[0].status = -1;
	ch[0].pid = spawn(mn_argv, ch[0].log);
	for (uint32_t k = 0; k < cl.ncn && ch[0].pid > 0; k++) {
		char id[16];
		snprintf(id, sizeof(id), "%u", cl.cn[k].id);
		snprintf(outs[k], sizeof(outs[k]), "%s/cn%u", o->out_dir, cl.cn[k].id);
		child_t *c = &ch[1 + k];
		snprintf(c->name, sizeof(c->name), "cn %u", cl.cn[k].id);
		c->status = -1;
		snprintf(c->log, sizeof(c->log), "%s/cn%u.log", o->out_dir, cl.cn[k].id);
		char *av[32];
		int ac = 0;
		av[ac++] = "dmreplay";
		av[ac++] = "cn";
		av[ac++] = "--config";
		av[ac++] = cfgpath;
		av[ac++] = "--id";
		av[ac++] = id;
		av[ac++] = "--trace";
		av[ac++] = (char *)o->trace;
		av[ac++] = "--threads";
		av[ac++] = a_thr;
		av[ac++] = "--coros";
		av[ac++] = a_cor;
		av[ac++] = "--seed";
		av[ac++] = a_seed;
		av[ac++] = "--retries";
		av[ac++] = a_ret;
		if (o->txns) {
			av[ac++] = "--txns";
			av[ac++] = a_txns;
		}
		av[ac++] = "--out";
		av[ac++] = outs[k];
		av[ac] = NULL;
		c->pid = spawn(av, c->log);
		if (c->pid < 0)
			break;
	}
	int spawn_failed = 0;
	for (uint32_t i = 0; i < n; i++)
		if (ch[i].pid <= 0) {
			spawn_failed = 1;
			ch[i].status = 127;
			ch[i].pid = 0;
		}
	if (spawn_failed) {
		fprintf(stderr, "%s: error: fork: %s\n", pfx, strerror(errno));
		signal_all(ch, n, SIGTERM);
	}
	/* wait: deadline; a failed child gives the others 10 s (their own
	 * deadlines write partial results), then SIGTERM; SIGKILL 10 s later */
	int interrupted, timed_out;
	wait_children(pfx, ch, n, deadline_s, 1, &interrupted, &timed_out);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* a CN killed while writing its share leaves NAME.tmp: remove it */
	for (uint32_t k = 0; k < cl.ncn; k++) {
		char tmp[1300];
		snprintf(tmp, sizeof(tmp), "%s/trace.cn%u.csv.tmp", outs[k], cl.cn[k].id);
		unlink(tmp);
	}
	/* combined results */
	int complete = !interrupted && !timed_out && !spawn_failed;
	int any2 = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (ch[i].status != 0)
			complete = 0;
		any2 |= ch[i].status == 2;
	}
	for (uint32_t k = 0; k < cl.ncn; k++) {
		read_cn_summary(outs[k], &cs[k]);
		if (!cs[k].have || !cs[k].final || cs[k].verified != 1 ||
		    strcmp(cs[k].status, "complete") != 0)
			complete = 0;
	}
	combo_t co = {.o = o, .cl = &cl, .cs = cs, .ch = ch, .complete = complete,
		      .workload = workload};
	st = dmr_results_write_file(o->out_dir, "processes.csv", fill_combined, &co, &err);
	if (st == DMR_OK)
		st = dmr_results_write_file(o->out_dir,
					    complete ? "summary.csv" : "summary.partial.csv",
					    fill_standard, &co, &err);
	if (st == DMR_OK && complete)
		unlink(p);
	long long tried = 0, committed = 0;
	double secs = 0;
	for (uint32_t k = 0; k < cl.ncn; k++) {
		tried += cs[k].tried;
		committed += cs[k].committed;
		if (cs[k].secs > secs)
			secs = cs[k].secs;
		char rb[48];
		if (!o->quiet)
			printf("  cn%-3u %-9s tried %lld, committed %lld (%s), verified %s, exit %d\n",
			       cl.cn[k].id, cs[k].have ? cs[k].status : "missing", cs[k].tried,
			       cs[k].committed, fmt_rate(cs[k].committed_tps, rb, sizeof(rb)),
			       cs[k].verified == 1 ? "yes" : "no", ch[1 + k].status);
	}
	if (!o->quiet) {
		char rb[48];
		printf("dmreplay: %s on verbs (%s), MN + %u CN processes x %u threads x %u coros, "
		       "seed %llu%s\n",
		       cs[0].have ? cs[0].workload : workload,
		       cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0", cl.ncn, o->threads,
		       o->coros, (unsigned long long)o->seed, complete ? "" : "  [PARTIAL]");
		printf("  transactions   %lld tried, %lld committed; %s committed over %.3f s (the "
		       "slowest CN)\n",
		       tried, committed, fmt_rate(secs > 0 ? committed / secs : 0, rb, sizeof(rb)),
		       secs);
		printf("  verification   %s\n",
		       complete ? "PASSED on every CN (final MN state; SmallBank/YCSB sums over all "
				  "CNs)"
				: "not complete (see the CN lines and logs)");
		printf("  results        %s/%s, %s/cnK/\n", o->out_dir,
		       complete ? "summary.csv" : "summary.partial.csv", o->out_dir);
	}
	if (st != DMR_OK)
		fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
	if (!complete)
		for (uint32_t i = 0; i < n; i++)
			if (ch[i].status != 0) {
				fprintf(stderr, "%s: %s (exit %d), from %s:\n", pfx, ch[i].name,
					ch[i].status, ch[i].log);
				print_log_errors(pfx, ch[i].log);
			}
	free(ch);
	free(cs);
	free(outs);
	if (interrupted)
		return 130;
	if (complete && st == DMR_OK)
		return 0;
	return any2 && !timed_out ? 2 : 1;
}
