/*
 * replay/tools/doctor.c - `dmreplay doctor`: preflight checks of one node from the
 * kernel's view, without libibverbs. See doctor.h and docs/DOCTOR.md.
 *
 * Sources (each under --sysfs ROOT / --proc ROOT, default /sys and /proc):
 *   sys/class/infiniband/<dev>/{node_type,fw_ver,board_id,parent,device/driver,
 *       device/iommu_group/type}
 *   sys/class/infiniband/<dev>/ports/<p>/{state,phys_state,link_layer,rate,
 *       active_mtu (when present),gids/N,gid_attrs/types/N,gid_attrs/ndevs/N}
 *   sys/class/infiniband_verbs/uverbs<N>/ibdev, sys/class/net/<ndev>/mtu,
 *   sys/class/iommu/<unit>
 *   proc/cmdline, proc/net/route, proc/meminfo, proc/self/status (CapEff),
 *   proc/self/uid_map
 * and getrlimit(RLIMIT_MEMLOCK) (--memlock overrides), getifaddrs() (--addrs
 * overrides). Nothing is sent on any network.
 */
#include "doctor.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "../roles.h"
#include "../../backends/backend.h"

#define PROG "dmreplay doctor"
#define SLOW_GBPS 25.0
#define CAP_IPC_LOCK_BIT 14

/* ---- small utilities ------------------------------------------------------ */

static void oom(void)
{
	fputs(PROG ": out of memory\n", stderr);
	exit(1);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

static void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

static char *xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		oom();
	return r;
}

static char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

/* Path into buf; an over-long path becomes "" (every open then fails). */
__attribute__((format(printf, 2, 3))) static char *P(char buf[PATH_MAX], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		buf[0] = '\0';
	return buf;
}

/* snprintf into a fixed buffer, truncating (the buffers are sized for
 * what goes in; vsnprintf keeps -Wformat-truncation out of it). */
__attribute__((format(printf, 3, 4))) static void sfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static void scpy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Append to a growing malloc'd string. */
__attribute__((format(printf, 2, 3))) static void sappend(char **s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *add = xvasprintf(fmt, ap);
	va_end(ap);
	size_t a = *s ? strlen(*s) : 0, b = strlen(add);
	*s = xrealloc(*s, a + b + 1);
	memcpy(*s + a, add, b + 1);
	free(add);
}

/* One sysfs/procfs attribute, trailing white space removed. -1 with errno
 * when it cannot be read (missing, or the kernel refuses: an unset GID's
 * type reads as EINVAL). */
static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return 0;
}

/* A whole (small) file, NUL-terminated; NULL when it cannot be read. */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, k;
	char *b = xcalloc(1, cap);
	while ((k = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n - 1 == 0) {
			cap *= 2;
			b = xrealloc(b, cap);
		}
	}
	fclose(f);
	b[n] = '\0';
	return b;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Natural order: mlx5_2 < mlx5_10, gids/9 < gids/10. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			size_t la = 0, lb = 0;
			while (isdigit((unsigned char)a[la]))
				la++;
			while (isdigit((unsigned char)b[lb]))
				lb++;
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
		} else {
			if (*a != *b)
				return (unsigned char)*a - (unsigned char)*b;
			a++;
			b++;
		}
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int natcmp_q(const void *a, const void *b)
{
	return natcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct strv {
	char **v;
	size_t n;
} strv_t;

static void strv_free(strv_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* Entries of a directory but . and .., in natural order; -1 if unreadable. */
static int list_dir(const char *path, strv_t *out)
{
	out->v = NULL;
	out->n = 0;
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 16;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		out->v[out->n++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), natcmp_q);
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* "64 KiB", "1 GiB", "1.5 GiB", "100 B". */
static void hbytes(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	int u = 0;
	double x = (double)v;
	while (x >= 1024.0 && u < 6) {
		x /= 1024.0;
		u++;
	}
	if (u == 0 || x == (double)(uint64_t)x)
		sfmt(buf, len, "%.0f %s", x, unit[u]);
	else
		sfmt(buf, len, "%.1f %s", x, unit[u]);
}

uint32_t dmr_doctor_ib_mtu(uint32_t netdev_mtu, uint32_t hdr)
{
	if (netdev_mtu < hdr)
		return 0;
	uint32_t room = netdev_mtu - hdr;
	for (uint32_t m = 4096; m >= 256; m /= 2)
		if (room >= m)
			return m;
	return 0;
}

/* ---- checks --------------------------------------------------------------- */

typedef enum { S_OK, S_INFO, S_WARN, S_FAIL } sev_t;
static const char *const sev_str[] = {"OK", "INFO", "WARN", "FAIL"};

typedef struct check {
	sev_t sev;
	char *name;    /* check id: "port", "speed", "mtu", ... */
	char *subject; /* "mlx5_0:1", "mn[0] 10.0.0.1", "" */
	char *found;   /* what was found */
	char *advice;  /* what to do; NULL when nothing */
	json_t *data;  /* structured fields (object) */
} check_t;

/* ---- host addresses ------------------------------------------------------- */

typedef struct haddr {
	int fam; /* AF_INET, AF_INET6 */
	unsigned char a[16];
	char ifname[IF_NAMESIZE + 1];
} haddr_t;

/* ---- config --------------------------------------------------------------- */

/* The cluster config is parsed by replay/roles.c (dmr_cluster_load: the same
 * parser `dmreplay mn` and `dmreplay cn` use, so a config doctor accepts is
 * one they accept); doctor flattens it into nodes. */
typedef struct node {
	int mn;	 /* 1 MN, 0 CN */
	int idx; /* position in its list */
	long id;
	char ip[INET_ADDRSTRLEN]; /* "" = not given (a CN then uses its GID's address) */
	struct in_addr in;
	char devname[64]; /* "" = not given: the verbs backend opens device index 0 */
	long ibport;
	long gid;	  /* -1 = automatic */
	uint64_t mr_size; /* MN entries */
} node_t;

typedef struct config {
	const char *path;
	int shape; /* 1: {"mn","cn"}, 2: {"MN_ips","CN_ips"} */
	node_t *nodes;
	size_t n, n_mn, n_cn;
	char note[256]; /* from the parser, e.g. memcached_ip ignored */
} config_t;

/* ---- the kernel's view of the devices -------------------------------------- */

enum gclass {
	G_OWN4,	    /* IPv4-mapped, an address of this host */
	G_FOREIGN4, /* IPv4-mapped, not an address of this host */
	G_LL4,	    /* IPv4-mapped 169.254/16 */
	G_LOOP4,    /* IPv4-mapped 127/8 */
	G_LL6,	    /* fe80::/10 */
	G_IPV6,	    /* other IPv6 */
};
static const char *const gclass_str[] = {"own-ipv4", "foreign-ipv4", "link-local-ipv4",
					 "loopback", "link-local",   "ipv6"};

typedef struct dgid {
	int index;
	unsigned char raw[16];
	char text[INET6_ADDRSTRLEN];
	char ip4[INET_ADDRSTRLEN]; /* IPv4-mapped: the IPv4 address */
	char type[32];		   /* "RoCE v2", "IB/RoCE v1", "" */
	int v2;
	char ndev[IF_NAMESIZE + 1];
	int cls;
} dgid_t;

typedef struct port {
	int num;
	char state[48];
	int state_num;
	char phys[48];
	char ll[32];
	char rate[64];
	double gbps;  /* -1 unknown */
	uint32_t mtu; /* IB MTU bytes; 0 unknown */
	char *mtu_how;
	uint32_t netdev_mtu;
	uint32_t hdr; /* header bytes of the derivation */
	char ndev[IF_NAMESIZE + 1];
	dgid_t *gids;
	size_t n_gids;
	int selected;
} port_t;

typedef struct rdev {
	char name[64];
	char node_type[48];
	char fw[64];
	char board[64];
	char driver[64];
	char parent[IF_NAMESIZE + 1]; /* rxe: its netdev */
	int soft;		      /* SoftRoCE */
	int iwarp;
	char iommu_type[32];
	char uverbs[32]; /* "uverbs0", "" = none */
	port_t *ports;
	size_t n_ports;
	int selected;
} rdev_t;

/* ---- the run --------------------------------------------------------------- */

typedef struct doctor {
	const char *sysfs, *proc;
	int sysfs_default;
	const char *device_opt; /* --device NAME[:PORT] */
	int json, strict;
	int have_memlock;
	uint64_t memlock; /* UINT64_MAX = unlimited */
	haddr_t *addrs;
	size_t n_addrs;
	int have_cfg;
	config_t cfg;
	/* devices */
	rdev_t *devs;
	size_t n_devs;
	int explicit_sel; /* a device was named (--device or config) */
	char sel_dev[64];
	int sel_port; /* 0 = every port */
	long sel_gid; /* -2 = none, -1 = automatic, else an index */
	const char *sel_from;
	long cfg_dev_index; /* the config names the device by index (or none: 0); -1 by name */
	int cfg_dev_given;
	/* this host in the config */
	int host_mn, host_cn, host_known;
	node_t *host_node;
	/* results */
	check_t *checks;
	size_t n_checks, cap_checks;
} doctor_t;

__attribute__((format(printf, 5, 6))) static check_t *add(doctor_t *d, sev_t sev, const char *name,
							  const char *subject, const char *fmt, ...)
{
	if (d->n_checks == d->cap_checks) {
		d->cap_checks = d->cap_checks ? d->cap_checks * 2 : 32;
		d->checks = xrealloc(d->checks, d->cap_checks * sizeof(*d->checks));
	}
	check_t *c = &d->checks[d->n_checks++];
	memset(c, 0, sizeof(*c));
	c->sev = sev;
	c->name = xstrdup(name);
	c->subject = xstrdup(subject ? subject : "");
	va_list ap;
	va_start(ap, fmt);
	c->found = xvasprintf(fmt, ap);
	va_end(ap);
	c->data = json_object();
	if (!c->data)
		oom();
	return c;
}

__attribute__((format(printf, 2, 3))) static void advise(check_t *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	free(c->advice);
	c->advice = s;
}

static void cset(check_t *c, const char *key, json_t *v)
{
	if (!v)
		oom();
	json_object_set_new(c->data, key, v);
}

static void cset_port(check_t *c, const rdev_t *dv, const port_t *p)
{
	cset(c, "device", json_string(dv->name));
	if (p)
		cset(c, "port", json_integer(p->num));
}

static char *check_line(const check_t *c)
{
	return xasprintf("%s %s%s%s: %s%s%s", sev_str[c->sev], c->name, c->subject[0] ? " " : "",
			 c->subject, c->found, c->advice ? " -> " : "", c->advice ? c->advice : "");
}

/* ---- host addresses ---------------------------------------------------------- */

static int parse_addrs(doctor_t *d, const char *list)
{
	char *dup = xstrdup(list), *save = NULL;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		haddr_t h;
		memset(&h, 0, sizeof(h));
		char *at = strchr(tok, '@');
		if (at) {
			*at = '\0';
			if (!at[1] || strlen(at + 1) > IF_NAMESIZE) {
				fprintf(stderr, PROG ": --addrs: '%s@%s': bad interface name\n",
					tok, at + 1);
				free(dup);
				return -1;
			}
			scpy(h.ifname, sizeof(h.ifname), at + 1);
		}
		if (inet_pton(AF_INET, tok, h.a) == 1) {
			h.fam = AF_INET;
		} else if (inet_pton(AF_INET6, tok, h.a) == 1) {
			h.fam = AF_INET6;
		} else {
			fprintf(stderr,
				PROG ": --addrs: '%s' is not an IPv4 or IPv6 address "
				     "(list: ADDR[@IFNAME],...)\n",
				tok);
			free(dup);
			return -1;
		}
		d->addrs = xrealloc(d->addrs, (d->n_addrs + 1) * sizeof(*d->addrs));
		d->addrs[d->n_addrs++] = h;
	}
	free(dup);
	return 0;
}

static void host_addrs(doctor_t *d)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) != 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		haddr_t h;
		memset(&h, 0, sizeof(h));
		if (i->ifa_addr->sa_family == AF_INET) {
			h.fam = AF_INET;
			memcpy(h.a, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			h.fam = AF_INET6;
			memcpy(h.a, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		scpy(h.ifname, sizeof(h.ifname), i->ifa_name ? i->ifa_name : "");
		d->addrs = xrealloc(d->addrs, (d->n_addrs + 1) * sizeof(*d->addrs));
		d->addrs[d->n_addrs++] = h;
	}
	freeifaddrs(ifa);
}

/* The host address equal to a (fam, 4 or 16 bytes), or NULL. */
static const haddr_t *host_has(const doctor_t *d, int fam, const void *a)
{
	for (size_t i = 0; i < d->n_addrs; i++)
		if (d->addrs[i].fam == fam && !memcmp(d->addrs[i].a, a, fam == AF_INET ? 4 : 16))
			return &d->addrs[i];
	return NULL;
}

static char *host_addr_list(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_addrs; i++) {
		if (d->addrs[i].fam != AF_INET)
			continue;
		char t[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, d->addrs[i].a, t, sizeof(t));
		sappend(&s, "%s%s", s ? ", " : "", t);
	}
	return s ? s : xstrdup("none");
}

/* ---- config ------------------------------------------------------------------ */

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
static int cfg_load(config_t *c, const char *path, dmr_err_t *e)
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
	for (uint32_t i = 0; i < cl->nmn; i++)
		cfg_add(c, &cl->mn[i], 1, (int)i);
	for (uint32_t i = 0; i < cl->ncn; i++)
		cfg_add(c, &cl->cn[i], 0, (int)i);
	free(cl);
	return 0;
}

static const char *node_role(const node_t *n)
{
	return n->mn ? "mn" : "cn";
}

static void node_subject(const config_t *c, const node_t *n, char *buf, size_t len)
{
	if (c->shape == 1)
		sfmt(buf, len, "%s[%d] %s", node_role(n), n->idx, n->ip[0] ? n->ip : "(no ip)");
	else
		sfmt(buf, len, "%s[%d] %s", n->mn ? "MN_ips" : "CN_ips", n->idx, n->ip);
}

/* ---- sysfs scan --------------------------------------------------------------- */

static void parse_state(const char *s, int *num, char *text, size_t len)
{
	/* "4: ACTIVE", "5: LinkUp" */
	*num = atoi(s);
	const char *p = strchr(s, ':');
	p = p ? p + 1 : s;
	while (*p == ' ')
		p++;
	scpy(text, len, p);
}

static void scan_gids(doctor_t *d, rdev_t *dv, port_t *p, const char *base)
{
	char path[PATH_MAX], buf[128];
	strv_t ents;
	if (list_dir(P(path, "%s/gids", base), &ents) != 0)
		return;
	for (size_t i = 0; i < ents.n; i++) {
		if (!all_digits(ents.v[i]))
			continue;
		if (read_str(P(path, "%s/gids/%s", base, ents.v[i]), buf, sizeof(buf)) != 0)
			continue;
		dgid_t g;
		memset(&g, 0, sizeof(g));
		g.index = atoi(ents.v[i]);
		if (inet_pton(AF_INET6, buf, g.raw) != 1)
			continue;
		static const unsigned char zero[16];
		if (!memcmp(g.raw, zero, 16))
			continue;
		inet_ntop(AF_INET6, g.raw, g.text, sizeof(g.text));
		if (read_str(P(path, "%s/gid_attrs/types/%s", base, ents.v[i]), buf, sizeof(buf)) ==
		    0)
			scpy(g.type, sizeof(g.type), buf);
		g.v2 = strstr(g.type, "v2") != NULL;
		if (read_str(P(path, "%s/gid_attrs/ndevs/%s", base, ents.v[i]), buf, sizeof(buf)) ==
		    0)
			scpy(g.ndev, sizeof(g.ndev), buf);
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (!memcmp(g.raw, mapped, 12)) {
			inet_ntop(AF_INET, g.raw + 12, g.ip4, sizeof(g.ip4));
			if (g.raw[12] == 127)
				g.cls = G_LOOP4;
			else if (g.raw[12] == 169 && g.raw[13] == 254)
				g.cls = G_LL4;
			else if (host_has(d, AF_INET, g.raw + 12))
				g.cls = G_OWN4;
			else
				g.cls = G_FOREIGN4;
		} else if (g.raw[0] == 0xfe && (g.raw[1] & 0xc0) == 0x80) {
			g.cls = G_LL6;
		} else {
			g.cls = G_IPV6;
		}
		p->gids = xrealloc(p->gids, (p->n_gids + 1) * sizeof(*p->gids));
		p->gids[p->n_gids++] = g;
	}
	strv_free(&ents);
	(void)dv;
}

static void scan_mtu(doctor_t *d, rdev_t *dv, port_t *p, const char *base)
{
	char path[PATH_MAX], buf[64];
	static const char *const names[] = {"active_mtu", "mtu"};
	for (size_t i = 0; i < 2; i++) {
		if (read_str(P(path, "%s/%s", base, names[i]), buf, sizeof(buf)) != 0)
			continue;
		long v = atol(buf);
		if (v >= 1 && v <= 5)
			v = 128L << v; /* enum ib_mtu: 1 = 256 .. 5 = 4096 */
		if (v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096) {
			p->mtu = (uint32_t)v;
			p->mtu_how = xasprintf("read from %s/%s", base, names[i]);
			return;
		}
	}
	if (!p->ndev[0]) {
		p->mtu_how = xstrdup("unknown: the port exposes no MTU in sysfs and has no netdev "
				     "(ibv_devinfo -v shows active_mtu)");
		return;
	}
	if (read_str(P(path, "%s/class/net/%s/mtu", d->sysfs, p->ndev), buf, sizeof(buf)) != 0 ||
	    atol(buf) <= 0) {
		p->mtu_how =
		    xasprintf("unknown: %s/class/net/%s/mtu unreadable", d->sysfs, p->ndev);
		return;
	}
	p->netdev_mtu = (uint32_t)atol(buf);
	p->hdr = dv->soft ? DMR_DOCTOR_RXE_HDR : DMR_DOCTOR_ROCE_HDR;
	p->mtu = dmr_doctor_ib_mtu(p->netdev_mtu, p->hdr);
	p->mtu_how = xasprintf("derived: netdev %s MTU %u - %u B RoCE headers (%s) -> largest IB "
			       "MTU that fits",
			       p->ndev, p->netdev_mtu, p->hdr,
			       dv->soft ? "rdma_rxe" : "ib_core iboe_get_mtu");
}

static void scan_port(doctor_t *d, rdev_t *dv, port_t *p)
{
	char base[PATH_MAX], path[PATH_MAX], buf[128];
	P(base, "%s/class/infiniband/%s/ports/%d", d->sysfs, dv->name, p->num);
	p->gbps = -1;
	if (read_str(P(path, "%s/state", base), buf, sizeof(buf)) == 0)
		parse_state(buf, &p->state_num, p->state, sizeof(p->state));
	else
		scpy(p->state, sizeof(p->state), "unknown");
	if (read_str(P(path, "%s/phys_state", base), buf, sizeof(buf)) == 0) {
		int n;
		parse_state(buf, &n, p->phys, sizeof(p->phys));
	} else {
		scpy(p->phys, sizeof(p->phys), "unknown");
	}
	if (read_str(P(path, "%s/link_layer", base), buf, sizeof(buf)) == 0)
		scpy(p->ll, sizeof(p->ll), buf);
	else
		scpy(p->ll, sizeof(p->ll), "unknown");
	if (read_str(P(path, "%s/rate", base), buf, sizeof(buf)) == 0) {
		scpy(p->rate, sizeof(p->rate), buf);
		char *end;
		double g = strtod(buf, &end);
		if (end != buf && !strncmp(end, " Gb/sec", 7) && g >= 0)
			p->gbps = g;
	}
	scan_gids(d, dv, p, base);
	for (size_t i = 0; i < p->n_gids && !p->ndev[0]; i++)
		if (p->gids[i].ndev[0])
			scpy(p->ndev, sizeof(p->ndev), p->gids[i].ndev);
	if (!p->ndev[0] && dv->parent[0])
		scpy(p->ndev, sizeof(p->ndev), dv->parent);
	if (!p->ndev[0]) {
		strv_t net;
		if (list_dir(P(path, "%s/class/infiniband/%s/device/net", d->sysfs, dv->name),
			     &net) == 0) {
			if (net.n == 1 || (size_t)p->num <= net.n)
				scpy(p->ndev, sizeof(p->ndev), net.v[net.n == 1 ? 0 : p->num - 1]);
			strv_free(&net);
		}
	}
	scan_mtu(d, dv, p, base);
}

static void scan_dev(doctor_t *d, rdev_t *dv)
{
	char base[PATH_MAX], path[PATH_MAX], buf[256];
	P(base, "%s/class/infiniband/%s", d->sysfs, dv->name);
	if (read_str(P(path, "%s/node_type", base), buf, sizeof(buf)) == 0)
		scpy(dv->node_type, sizeof(dv->node_type), buf);
	dv->iwarp = strstr(dv->node_type, "RNIC") != NULL;
	if (read_str(P(path, "%s/fw_ver", base), buf, sizeof(buf)) == 0)
		scpy(dv->fw, sizeof(dv->fw), buf);
	if (read_str(P(path, "%s/board_id", base), buf, sizeof(buf)) == 0)
		scpy(dv->board, sizeof(dv->board), buf);
	if (read_str(P(path, "%s/parent", base), buf, sizeof(buf)) == 0 && buf[0]) {
		scpy(dv->parent, sizeof(dv->parent), buf);
		dv->soft = !dv->iwarp; /* rdma_rxe's "parent" attribute: its netdev */
	}
	ssize_t n = readlink(P(path, "%s/device/driver", base), buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		const char *b = strrchr(buf, '/');
		scpy(dv->driver, sizeof(dv->driver), b ? b + 1 : buf);
	}
	if (read_str(P(path, "%s/device/iommu_group/type", base), buf, sizeof(buf)) == 0)
		scpy(dv->iommu_type, sizeof(dv->iommu_type), buf);
	/* user-space verbs: uverbsN whose ibdev is this device */
	strv_t uv;
	if (list_dir(P(path, "%s/class/infiniband_verbs", d->sysfs), &uv) == 0) {
		for (size_t i = 0; i < uv.n; i++) {
			if (strncmp(uv.v[i], "uverbs", 6))
				continue;
			if (read_str(
				P(path, "%s/class/infiniband_verbs/%s/ibdev", d->sysfs, uv.v[i]),
				buf, sizeof(buf)) == 0 &&
			    !strcmp(buf, dv->name)) {
				scpy(dv->uverbs, sizeof(dv->uverbs), uv.v[i]);
				break;
			}
		}
		strv_free(&uv);
	}
	strv_t ports;
	if (list_dir(P(path, "%s/ports", base), &ports) == 0) {
		for (size_t i = 0; i < ports.n; i++) {
			if (!all_digits(ports.v[i]))
				continue;
			dv->ports = xrealloc(dv->ports, (dv->n_ports + 1) * sizeof(*dv->ports));
			port_t *p = &dv->ports[dv->n_ports++];
			memset(p, 0, sizeof(*p));
			p->num = atoi(ports.v[i]);
			scan_port(d, dv, p);
		}
		strv_free(&ports);
	}
}

/* ---- procfs ------------------------------------------------------------------ */

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
	char *txt = read_all(P(path, "%s/net/route", d->proc));
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

/* A "Key:   value kB" line of meminfo, in bytes (or a plain count); -1 if absent. */
static long long meminfo(const char *txt, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = txt; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			char *end;
			long long v = strtoll(p + kl + 1, &end, 10);
			while (*end == ' ')
				end++;
			return !strncmp(end, "kB", 2) ? v * 1024 : v;
		}
	}
	return -1;
}

/* CAP_IPC_LOCK in the effective set of this process in the initial user
 * namespace (ib_umem_get() checks capable(CAP_IPC_LOCK), which a capability
 * held in a child user namespace does not satisfy). */
static int has_ipc_lock(const doctor_t *d)
{
	char path[PATH_MAX];
	char *st = read_all(P(path, "%s/self/status", d->proc));
	if (!st)
		return 0;
	int cap = 0;
	const char *p = strstr(st, "\nCapEff:");
	if (p) {
		unsigned long long v = strtoull(p + 8, NULL, 16);
		cap = (v >> CAP_IPC_LOCK_BIT) & 1;
	}
	free(st);
	if (!cap)
		return 0;
	char *um = read_all(P(path, "%s/self/uid_map", d->proc));
	if (!um)
		return 0;
	unsigned long a, b, n;
	int init_ns =
	    sscanf(um, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0 && b == 0 && n == 4294967295ul;
	free(um);
	return init_ns;
}

/* ---- the checks ------------------------------------------------------------- */

static rdev_t *find_dev(doctor_t *d, const char *name)
{
	for (size_t i = 0; i < d->n_devs; i++)
		if (!strcmp(d->devs[i].name, name))
			return &d->devs[i];
	return NULL;
}

static char *dev_names(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		sappend(&s, "%s%s", i ? ", " : "", d->devs[i].name);
	return s ? s : xstrdup("");
}

static void port_subject(const rdev_t *dv, const port_t *p, char *buf, size_t len)
{
	sfmt(buf, len, "%s:%d", dv->name, p->num);
}

static int port_active(const port_t *p)
{
	return p->state_num == 4 || !strcmp(p->state, "ACTIVE");
}

static int is_eth(const port_t *p)
{
	return !strcmp(p->ll, "Ethernet");
}

static int gid_usable(const dgid_t *g)
{
	return g->v2 && g->cls == G_OWN4;
}

/* The host that runs this: which config entries carry one of its
 * addresses; and from them (or --device) which device/port/GID to check. */
static void select_target(doctor_t *d)
{
	d->sel_port = 0;
	d->sel_gid = -2;
	if (d->have_cfg) {
		for (size_t i = 0; i < d->cfg.n; i++) {
			node_t *n = &d->cfg.nodes[i];
			if (!n->ip[0] || !host_has(d, AF_INET, &n->in))
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

static void check_config(doctor_t *d)
{
	const config_t *c = &d->cfg;
	uint64_t mr = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].mr_size > mr)
			mr = c->nodes[i].mr_size;
	char mrs[32] = "not given";
	if (mr)
		hbytes(mrs, sizeof(mrs), mr);
	check_t *k = add(d, S_OK, "config", c->path, "%s shape: %zu MN%s, %zu CN%s, mr_size %s",
			 c->shape == 1 ? "mn/cn" : "MN_ips", c->n_mn, c->n_mn == 1 ? "" : "s",
			 c->n_cn, c->n_cn == 1 ? "" : "s", mrs);
	if (c->n_cn == 1)
		advise(k, "start exactly 1 CN process (id 0): the start barrier waits for every CN "
			  "the config lists");
	else
		advise(k,
		       "start exactly %zu CN processes (ids 0..%zu): the start barrier waits for "
		       "every CN the config lists",
		       c->n_cn, c->n_cn - 1);
	cset(k, "shape", json_string(c->shape == 1 ? "mn/cn" : "MN_ips"));
	cset(k, "mns", json_integer((json_int_t)c->n_mn));
	cset(k, "cns", json_integer((json_int_t)c->n_cn));
	cset(k, "mr_size", mr ? json_integer((json_int_t)mr) : json_null());
	if (c->note[0]) {
		k = add(d, S_INFO, "config", c->path, "%s", c->note);
		cset(k, "note", json_string(c->note));
	}

	if (!d->host_known) {
		char *mine = host_addr_list(d);
		k = add(d, S_WARN, "host", "",
			"none of the config's addresses is an address of this host (this host: %s)",
			mine);
		advise(k, "run doctor on the cluster's nodes with the config they run with; a node "
			  "that is not in the config has no role, device or port to check");
		free(mine);
		return;
	}
	char *roles = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		if (!n->ip[0] || !host_has(d, AF_INET, &n->in))
			continue;
		char s[64];
		node_subject(c, n, s, sizeof(s));
		sappend(&roles, "%s%s", roles ? ", " : "", s);
	}
	k = add(d, S_OK, "host", "", "this host is %s", roles);
	cset(k, "mn", json_boolean(d->host_mn));
	cset(k, "cn", json_boolean(d->host_cn));
	free(roles);
}

static void check_devices(doctor_t *d)
{
	char *names = dev_names(d);
	rdev_t *sel = d->explicit_sel ? find_dev(d, d->sel_dev) : NULL;
	if (d->explicit_sel && !sel) {
		check_t *k;
		if (d->cfg_dev_index >= 0)
			k = add(d, S_FAIL, "devices", "",
				"config device index %ld, but this host has %zu device%s (%s)",
				d->cfg_dev_index, d->n_devs, d->n_devs == 1 ? "" : "s", names);
		else
			k = add(d, S_FAIL, "devices", "",
				"%s names device %s, which this host does not have (have: %s)",
				d->sel_from, d->sel_dev, names);
		advise(k, "use one of: %s (`rdma link` shows each device's netdev)", names);
		free(names);
		return;
	}
	check_t *k;
	if (sel) {
		k = add(d, S_OK, "devices", "", "%zu RDMA device%s (%s); checking %s (from %s)",
			d->n_devs, d->n_devs == 1 ? "" : "s", names, sel->name, d->sel_from);
		sel->selected = 1;
	} else {
		k = add(d, S_OK, "devices", "",
			"%zu RDMA device%s (%s); checking all (no --device and none in the config: "
			"the verbs backend opens index 0 of ibv_get_device_list())",
			d->n_devs, d->n_devs == 1 ? "" : "s", names);
		for (size_t i = 0; i < d->n_devs; i++)
			d->devs[i].selected = 1;
	}
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_devs; i++)
		json_array_append_new(arr, json_string(d->devs[i].name));
	cset(k, "devices", arr);
	if (sel && d->cfg_dev_index >= 0) {
		if (d->cfg_dev_given)
			k = add(
			    d, S_INFO, "devices", "",
			    "config device index %ld = %s, assuming ibv_get_device_list() lists "
			    "devices in name order",
			    d->cfg_dev_index, sel->name);
		else
			k = add(d, S_INFO, "devices", "",
				"the config names no device: the verbs backend opens index 0 = %s, "
				"assuming ibv_get_device_list() lists devices in name order",
				sel->name);
		advise(k, "confirm with `ibv_devices` (its order is the index)%s",
		       d->cfg_dev_given ? ""
					: "; name the device (devname / ib_dev_id) to be sure");
	}
	if (d->have_cfg && d->host_node && d->host_node->devname[0] &&
	    !all_digits(d->host_node->devname) && d->device_opt &&
	    strcmp(d->host_node->devname, d->sel_dev)) {
		k = add(d, S_WARN, "devices", "",
			"--device %s, but the config gives this host devname %s", d->sel_dev,
			d->host_node->devname);
		advise(k, "check the device the run will use; dmreplay's roles take devname from "
			  "the config");
	}
	free(names);
}

static char *faster_ports(const doctor_t *d, const rdev_t *self, const port_t *sp)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if ((&d->devs[i] == self && p == sp) || p->gbps < SLOW_GBPS)
				continue;
			sappend(&s, "%s%s:%d at %s%s", s ? ", " : "", d->devs[i].name, p->num,
				p->rate, port_active(p) ? "" : ", not ACTIVE");
		}
	return s;
}

static void check_gids(doctor_t *d, const rdev_t *dv, const port_t *p, const char *ps)
{
	char sub[96];
	size_t usable = 0;
	for (size_t i = 0; i < p->n_gids; i++) {
		const dgid_t *g = &p->gids[i];
		sfmt(sub, sizeof(sub), "%s[%d]", ps, g->index);
		const char *type = g->type[0] ? g->type : "type unknown";
		const char *nd = g->ndev[0] ? g->ndev : "no netdev";
		check_t *k;
		switch (g->cls) {
		case G_OWN4:
			k = add(d, S_INFO, "gid", sub, "%s %s = IPv4 %s, this node's (%s)%s", type,
				g->text, g->ip4, nd, g->v2 ? "" : "; RoCE v1 is not routable");
			if (g->v2)
				usable++;
			break;
		case G_FOREIGN4:
			k = add(d, S_WARN, "gid", sub,
				"%s %s = IPv4 %s, not an address of this host (%s)", type, g->text,
				g->ip4, nd);
			advise(k,
			       "a GID mirrors an address of its netdev: if dmreplay runs in "
			       "another network namespace (container), run doctor there; else "
			       "the address was removed or the config uses another node's: use a "
			       "GID carrying this node's own IPv4 address");
			break;
		case G_LL4:
			k = add(d, S_INFO, "gid", sub,
				"%s %s = IPv4 %s, link-local (169.254/16): not usable by the verbs "
				"backend (%s)",
				type, g->text, g->ip4, nd);
			break;
		case G_LOOP4:
			k = add(
			    d, S_INFO, "gid", sub,
			    "%s %s = IPv4 %s, loopback: rdma_cm does not work over 127.0.0.1 (%s)",
			    type, g->text, g->ip4, nd);
			break;
		case G_LL6:
			k = add(d, S_INFO, "gid", sub,
				"%s %s, link-local (fe80::/10, from the MAC): not routable, not "
				"used by "
				"rdma_cm (%s)",
				type, g->text, nd);
			break;
		default:
			k = add(d, S_INFO, "gid", sub,
				"%s %s, IPv6%s: the verbs backend uses IPv4 GIDs (%s)", type,
				g->text, host_has(d, AF_INET6, g->raw) ? " (this node's)" : "", nd);
			break;
		}
		cset_port(k, dv, p);
		cset(k, "index", json_integer(g->index));
		cset(k, "type", json_string(g->type));
		cset(k, "address", json_string(g->text));
		cset(k, "ipv4", g->ip4[0] ? json_string(g->ip4) : json_null());
		cset(k, "ndev", json_string(g->ndev));
		cset(k, "class", json_string(gclass_str[g->cls]));
	}

	/* does a RoCE v2 GID carry this node's own IPv4 address? */
	check_t *k;
	if (usable) {
		char *list = NULL;
		int first = -1;
		for (size_t i = 0; i < p->n_gids; i++)
			if (gid_usable(&p->gids[i])) {
				if (first < 0)
					first = p->gids[i].index;
				sappend(&list, "%s%d (%s)", list ? ", " : "", p->gids[i].index,
					p->gids[i].ip4);
			}
		k = add(d, S_OK, "roce-gid", ps,
			"RoCE v2 GID%s with this node's IPv4 address: index %s",
			usable > 1 ? "s" : "", list);
		cset(k, "gid_index", json_integer(first));
		free(list);
	} else {
		char *seen = NULL;
		for (size_t i = 0; i < p->n_gids; i++) {
			const dgid_t *g = &p->gids[i];
			const char *why = g->cls == G_LL6	 ? "link-local"
					  : g->cls == G_FOREIGN4 ? "foreign"
					  : g->cls == G_LL4	 ? "link-local IPv4"
					  : g->cls == G_LOOP4	 ? "loopback"
					  : g->cls == G_OWN4	 ? "own, but RoCE v1"
								 : "IPv6";
			sappend(&seen, "%s%d %s (%s)", seen ? ", " : "", g->index,
				g->ip4[0] ? g->ip4 : g->text, why);
		}
		k = add(d, S_WARN, "roce-gid", ps,
			"no RoCE v2 GID carries an IPv4 address of this host; GIDs: %s",
			seen ? seen : "none");
		advise(k,
		       "give %s this node's experiment-network IPv4 address (ip addr add "
		       "ADDR/PREFIX dev %s): the kernel then adds a RoCE v2 GID for it; "
		       "link-local and foreign GIDs cannot carry the cluster's traffic",
		       p->ndev[0] ? p->ndev : "the port's netdev", p->ndev[0] ? p->ndev : "NETDEV");
		cset(k, "gid_index", json_null());
		free(seen);
	}
	cset_port(k, dv, p);

	/* the GID the config names */
	if (d->sel_gid >= 0) {
		const dgid_t *g = NULL;
		for (size_t i = 0; i < p->n_gids; i++)
			if (p->gids[i].index == d->sel_gid)
				g = &p->gids[i];
		int first = -1;
		for (size_t i = 0; i < p->n_gids && first < 0; i++)
			if (gid_usable(&p->gids[i]))
				first = p->gids[i].index;
		char alt[64];
		if (first >= 0)
			sfmt(alt, sizeof(alt), "%d or -1 (automatic)", first);
		else
			sfmt(alt, sizeof(alt), "-1 (automatic) once the address is assigned");
		if (!g) {
			k = add(d, S_FAIL, "config-gid", ps, "config GID index %ld is empty on %s",
				d->sel_gid, ps);
			advise(k, "set the GID index to %s", alt);
		} else if (!gid_usable(g)) {
			k = add(d, S_FAIL, "config-gid", ps,
				"config GID index %ld is %s %s (%s): the verbs backend refuses it",
				d->sel_gid, g->type[0] ? g->type : "type unknown",
				g->ip4[0] ? g->ip4 : g->text, gclass_str[g->cls]);
			advise(k, "set the GID index to %s", alt);
		} else {
			k = add(d, S_OK, "config-gid", ps,
				"config GID index %ld is RoCE v2 %s, this node's", d->sel_gid,
				g->ip4);
		}
		cset_port(k, dv, p);
		cset(k, "gid_index", json_integer(d->sel_gid));
	}
}

static void check_port(doctor_t *d, rdev_t *dv, port_t *p)
{
	char ps[96];
	port_subject(dv, p, ps, sizeof(ps));
	check_t *k;

	/* state, link layer */
	int active = port_active(p);
	sev_t bad = d->explicit_sel ? S_FAIL : S_WARN;
	k = add(d, active ? S_OK : bad, "port", ps, "state %s, phys_state %s, link layer %s",
		p->state, p->phys, p->ll);
	if (!active) {
		if (!strcmp(p->ll, "InfiniBand") && p->state_num == 2)
			advise(k, "the port is INIT: no subnet manager configured it (start opensm "
				  "on the fabric)");
		else if (p->ndev[0])
			advise(k,
			       "bring the link up: ip link set %s up; check cable and switch port "
			       "(ethtool %s)",
			       p->ndev, p->ndev);
		else
			advise(k, "bring the link up (cable, switch port, subnet manager)%s",
			       d->explicit_sel ? "" : ", or select another device with --device");
	}
	cset_port(k, dv, p);
	cset(k, "state", json_string(p->state));
	cset(k, "phys_state", json_string(p->phys));
	cset(k, "link_layer", json_string(p->ll));
	cset(k, "netdev", p->ndev[0] ? json_string(p->ndev) : json_null());

	/* speed */
	if (p->gbps < 0) {
		k = add(d, S_INFO, "speed", ps, "rate unknown (%s)",
			p->rate[0] ? p->rate : "rate unreadable");
	} else if (p->gbps < SLOW_GBPS && dv->soft) {
		k = add(d, S_INFO, "speed", ps,
			"%s: SoftRoCE reports its netdev %s's nominal speed; its throughput is "
			"bound by the CPU",
			p->rate, p->ndev[0] ? p->ndev : "");
	} else if (p->gbps < SLOW_GBPS) {
		char *fast = faster_ports(d, dv, p);
		k = add(d, S_WARN, "speed", ps,
			"%s, slower than 25 Gb/s: control network? throughput will be ~1/100 of a "
			"100 GbE port",
			p->rate);
		if (fast)
			advise(k,
			       "use the experiment network's device (--device, devname or "
			       "ib_dev_id in the config); faster here: %s",
			       fast);
		else
			advise(k,
			       "use the experiment network's device (--device, devname or "
			       "ib_dev_id in the config); `rdma link` shows each device's netdev");
		free(fast);
	} else {
		k = add(d, S_OK, "speed", ps, "%s", p->rate);
	}
	cset_port(k, dv, p);
	cset(k, "rate", json_string(p->rate));
	cset(k, "gbps", p->gbps >= 0 ? json_real(p->gbps) : json_null());

	/* MTU */
	if (!p->mtu) {
		k = add(d, S_INFO, "mtu", ps, "active MTU %s", p->mtu_how ? p->mtu_how : "unknown");
	} else if (p->mtu < 1024) {
		k = add(d, S_WARN, "mtu", ps, "active MTU %u (%s): %s", p->mtu, p->mtu_how,
			p->mtu == 256 ? "256 halves performance" : "below 1024 costs throughput");
		if (p->netdev_mtu)
			advise(k,
			       "set 1024 or 4096: raise %s's MTU to at least %u for 1024 or %u "
			       "for 4096 (ip link set dev %s mtu 9000; the switch must allow it)",
			       p->ndev, 1024 + p->hdr, 4096 + p->hdr, p->ndev);
		else
			advise(k, "set 1024 or 4096 (port and switch/subnet manager MTU)");
	} else {
		k = add(d, S_OK, "mtu", ps, "active MTU %u (%s)", p->mtu, p->mtu_how);
	}
	cset_port(k, dv, p);
	cset(k, "mtu", p->mtu ? json_integer(p->mtu) : json_null());
	cset(k, "mtu_source", json_string(p->mtu_how ? p->mtu_how : ""));
	cset(k, "netdev_mtu", p->netdev_mtu ? json_integer(p->netdev_mtu) : json_null());

	/* GIDs */
	if (dv->iwarp) {
		k = add(d, S_INFO, "roce-gid", ps, "iWARP device: no RoCE GIDs to check");
		cset_port(k, dv, p);
	} else if (!is_eth(p)) {
		k = add(d, S_INFO, "roce-gid", ps,
			"link layer %s: RoCE GID checks do not apply (addressing by LID; rdma_cm "
			"uses IPoIB)",
			p->ll);
		cset_port(k, dv, p);
	} else {
		check_gids(d, dv, p, ps);
	}
}

static void check_device(doctor_t *d, rdev_t *dv)
{
	check_t *k;
	if (!dv->selected) {
		char *ps = NULL;
		for (size_t i = 0; i < dv->n_ports; i++)
			sappend(&ps, "%s%d %s %s", ps ? ", " : "", dv->ports[i].num,
				dv->ports[i].state, dv->ports[i].rate);
		k = add(d, S_INFO, "device", dv->name, "not selected, not checked (ports: %s)",
			ps ? ps : "none");
		cset(k, "device", json_string(dv->name));
		cset(k, "selected", json_false());
		free(ps);
		return;
	}
	const char *kind = dv->soft ? "SoftRoCE (rdma_rxe)" : dv->iwarp ? "iWARP" : "hardware";
	char *desc = xasprintf("%s", kind);
	if (dv->node_type[0])
		sappend(&desc, ", node type %s", dv->node_type);
	if (dv->driver[0])
		sappend(&desc, ", driver %s", dv->driver);
	if (dv->fw[0])
		sappend(&desc, ", firmware %s", dv->fw);
	if (dv->board[0])
		sappend(&desc, ", board %s", dv->board);
	if (dv->parent[0])
		sappend(&desc, ", netdev %s", dv->parent);
	k = add(d, S_INFO, "device", dv->name, "%s", desc);
	free(desc);
	cset(k, "device", json_string(dv->name));
	cset(k, "selected", json_true());
	cset(k, "kind", json_string(kind));
	cset(k, "driver", json_string(dv->driver));
	cset(k, "fw_ver", json_string(dv->fw));

	/* user-space verbs */
	char path[PATH_MAX];
	if (!dv->uverbs[0]) {
		k = add(
		    d, S_FAIL, "uverbs", dv->name,
		    "no %s/class/infiniband_verbs/uverbs* for %s: user-space verbs cannot open it",
		    d->sysfs, dv->name);
		advise(k, "load ib_uverbs (modprobe ib_uverbs)");
	} else if (d->sysfs_default &&
		   access(P(path, "/dev/infiniband/%s", dv->uverbs), R_OK | W_OK) != 0) {
		int e = errno;
		k = add(d, S_FAIL, "uverbs", dv->name, "%s: %s", path, strerror(e));
		if (e == ENOENT)
			advise(k, "create the device node (udev), or in a container pass "
				  "/dev/infiniband in (docker --device=/dev/infiniband)");
		else
			advise(k, "let this user open it (group rdma, udev rules)");
	} else {
		k = add(d, S_OK, "uverbs", dv->name, "%s%s", dv->uverbs,
			d->sysfs_default ? " (/dev/infiniband node usable)" : "");
	}
	cset(k, "device", json_string(dv->name));

	if (dv->n_ports == 0) {
		k = add(d, S_FAIL, "port", dv->name, "no ports under %s/class/infiniband/%s/ports",
			d->sysfs, dv->name);
		advise(k, "check the driver (dmesg)");
	}
	int found_sel_port = 0;
	for (size_t i = 0; i < dv->n_ports; i++) {
		port_t *p = &dv->ports[i];
		if (d->sel_port && p->num != d->sel_port)
			continue;
		p->selected = 1;
		found_sel_port = 1;
		check_port(d, dv, p);
	}
	if (d->sel_port && !found_sel_port && dv->n_ports) {
		char *ps = NULL;
		for (size_t i = 0; i < dv->n_ports; i++)
			sappend(&ps, "%s%d", ps ? ", " : "", dv->ports[i].num);
		k = add(d, S_FAIL, "port", dv->name, "port %d selected, but %s has port%s %s",
			d->sel_port, dv->name, dv->n_ports == 1 ? "" : "s", ps);
		advise(k, "set ibport/ib_port (or --device %s:PORT) to one of %s", dv->name, ps);
		free(ps);
	}

	/* atomics: not in sysfs */
	if (dv->soft)
		k = add(d, S_INFO, "atomics", dv->name,
			"not checked: needs verbs (ibv_query_device atomic_cap); SoftRoCE executes "
			"atomics in software (tens of K ops/s under emulation)");
	else
		k = add(d, S_INFO, "atomics", dv->name,
			"not checked: needs verbs (ibv_query_device atomic_cap)");
	advise(k, "measure with perftest ib_atomic_bw: below 1 M ops/s the atomics are emulated "
		  "(firmware/configuration)");
	cset(k, "device", json_string(dv->name));
}

static void check_iommu(doctor_t *d)
{
	char path[PATH_MAX];
	strv_t units;
	int have_units = list_dir(P(path, "%s/class/iommu", d->sysfs), &units) == 0 && units.n;
	char *unit_list = NULL;
	for (size_t i = 0; have_units && i < units.n; i++)
		sappend(&unit_list, "%s%s", i ? ", " : "", units.v[i]);
	if (have_units)
		strv_free(&units);

	/* kernel command line, up to "--" (the rest goes to init) */
	char *cmd = read_all(P(path, "%s/cmdline", d->proc));
	char *toks = NULL;
	int pt = 0, off = 0, on = 0, have_cmd = cmd != NULL;
	if (cmd) {
		char *save = NULL;
		for (char *t = strtok_r(cmd, " \t\n", &save); t;
		     t = strtok_r(NULL, " \t\n", &save)) {
			if (!strcmp(t, "--"))
				break;
			if (strncmp(t, "iommu", 5) && strncmp(t, "intel_iommu", 11) &&
			    strncmp(t, "amd_iommu", 9))
				continue;
			sappend(&toks, "%s%s", toks ? " " : "", t);
			if (!strcmp(t, "iommu=pt") || !strcmp(t, "iommu.passthrough=1"))
				pt = 1;
			else if (!strcmp(t, "iommu=off") || !strcmp(t, "intel_iommu=off") ||
				 !strcmp(t, "amd_iommu=off"))
				off = 1;
			else if (!strcmp(t, "intel_iommu=on") || !strcmp(t, "amd_iommu=on") ||
				 !strcmp(t, "iommu=force") || !strcmp(t, "iommu.passthrough=0") ||
				 !strcmp(t, "iommu=nopt"))
				on = 1;
		}
		free(cmd);
	}
	const char *cl = toks ? toks : (have_cmd ? "no iommu options" : "unreadable");

	/* the selected devices' IOMMU group type: the authoritative answer */
	char *dma = NULL, *ident = NULL;
	for (size_t i = 0; i < d->n_devs; i++) {
		const rdev_t *dv = &d->devs[i];
		if (!dv->selected || !dv->iommu_type[0])
			continue;
		if (!strcmp(dv->iommu_type, "identity"))
			sappend(&ident, "%s%s", ident ? ", " : "", dv->name);
		else
			sappend(&dma, "%s%s (iommu_group type %s)", dma ? ", " : "", dv->name,
				dv->iommu_type);
	}
	check_t *k;
	static const char advice[] =
	    "READs may return zeros (REFERENCE.md: data all zero with successful completions): "
	    "boot with iommu=pt (add it to GRUB_CMDLINE_LINUX, update-grub, reboot); the verbs "
	    "backend's canary catches it before a run";
	if (dma) {
		k = add(d, S_WARN, "iommu", "",
			"IOMMU translating DMA for %s, not passthrough; kernel command line: %s",
			dma, cl);
		advise(k, "%s", advice);
	} else if (ident) {
		k = add(d, S_OK, "iommu", "",
			"passthrough for %s (iommu_group type identity); "
			"kernel command line: %s",
			ident, cl);
	} else if (!have_units) {
		k = add(d, S_OK, "iommu", "",
			"no IOMMU registered (%s/class/iommu %s); kernel "
			"command line: %s",
			d->sysfs, exists(P(path, "%s/class/iommu", d->sysfs)) ? "empty" : "absent",
			cl);
	} else if (pt) {
		k = add(d, S_OK, "iommu", "", "IOMMU %s in passthrough (kernel command line: %s)",
			unit_list, cl);
	} else if (off) {
		k = add(d, S_OK, "iommu", "",
			"IOMMU %s registered, disabled on the kernel command "
			"line (%s)",
			unit_list, cl);
	} else {
		k = add(d, S_WARN, "iommu", "",
			"IOMMU enabled (%s%s) and not in passthrough (kernel command line: %s)",
			unit_list, on ? ", forced on" : "", cl);
		advise(k, "%s", advice);
	}
	cset(k, "units", unit_list ? json_string(unit_list) : json_null());
	cset(k, "cmdline", json_string(toks ? toks : ""));
	free(unit_list);
	free(toks);
	free(dma);
	free(ident);
}

static uint64_t cfg_mr_size(const doctor_t *d)
{
	if (!d->have_cfg)
		return 0;
	if (d->host_mn) {
		for (size_t i = 0; i < d->cfg.n; i++)
			if (d->cfg.nodes[i].mn && d->cfg.nodes[i].ip[0] &&
			    host_has(d, AF_INET, &d->cfg.nodes[i].in) && d->cfg.nodes[i].mr_size)
				return d->cfg.nodes[i].mr_size;
	}
	uint64_t mr = 0;
	for (size_t i = 0; i < d->cfg.n; i++)
		if (d->cfg.nodes[i].mr_size > mr)
			mr = d->cfg.nodes[i].mr_size;
	return mr;
}

static void check_memory(doctor_t *d)
{
	uint64_t lim = d->memlock;
	if (!d->have_memlock) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
			lim = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
		else
			lim = 0;
	}
	char ls[32] = "unlimited", ms[32];
	if (lim != UINT64_MAX)
		hbytes(ls, sizeof(ls), lim);
	uint64_t mr = cfg_mr_size(d);
	int cn_only = d->host_known && d->host_cn && !d->host_mn;
	const char *src = d->have_memlock ? "--memlock" : "getrlimit";
	check_t *k;
	if (!mr || cn_only) {
		k = add(d, S_INFO, "memlock", "", "locked-memory limit %s (%s); %s", ls, src,
			cn_only ? "this host is a CN only: the MN registers mr_size"
				: "no mr_size to compare (give --config)");
	} else {
		hbytes(ms, sizeof(ms), mr);
		if (lim == UINT64_MAX || lim >= mr) {
			k = add(d, S_OK, "memlock", "", "locked-memory limit %s (%s) >= mr_size %s",
				ls, src, ms);
		} else if (has_ipc_lock(d)) {
			k = add(d, S_OK, "memlock", "",
				"locked-memory limit %s (%s) < mr_size %s, but this process has "
				"CAP_IPC_LOCK: registration is not limited",
				ls, src, ms);
			advise(k, "run dmreplay the same way (a process without CAP_IPC_LOCK needs "
				  "`ulimit -l unlimited`)");
		} else {
			k = add(d, S_FAIL, "memlock", "",
				"locked-memory limit %s (%s) < mr_size %s: registering the MR will "
				"fail",
				ls, src, ms);
			advise(k, "raise it: `ulimit -l unlimited` in the shell that starts "
				  "dmreplay, or `* - memlock unlimited` in "
				  "/etc/security/limits.conf (new login); systemd: "
				  "LimitMEMLOCK=infinity; "
				  "docker: --ulimit memlock=-1");
		}
	}
	cset(k, "limit_bytes", lim == UINT64_MAX ? json_null() : json_integer((json_int_t)lim));
	cset(k, "unlimited", json_boolean(lim == UINT64_MAX));
	cset(k, "mr_size", mr ? json_integer((json_int_t)mr) : json_null());

	char path[PATH_MAX];
	char *mi = read_all(P(path, "%s/meminfo", d->proc));
	if (mr && !cn_only) {
		long long tot = mi ? meminfo(mi, "MemTotal") : -1;
		long long avail = mi ? meminfo(mi, "MemAvailable") : -1;
		char ts[32], as[32];
		hbytes(ms, sizeof(ms), mr);
		if (tot < 0) {
			k = add(d, S_INFO, "memory", "", "MemTotal unreadable (%s)", path);
		} else {
			hbytes(ts, sizeof(ts), (uint64_t)tot);
			hbytes(as, sizeof(as), avail < 0 ? 0 : (uint64_t)avail);
			if ((uint64_t)tot < mr) {
				k = add(
				    d, S_FAIL, "memory", "",
				    "mr_size %s > physical memory %s: the MN cannot populate it",
				    ms, ts);
				advise(k, "lower mr_size or use a node with more memory");
			} else if (avail >= 0 && (uint64_t)avail < mr) {
				k = add(d, S_WARN, "memory", "",
					"mr_size %s > available memory %s (of %s)", ms, as, ts);
				advise(k,
				       "free memory on the MN or lower mr_size: populating the MR "
				       "may swap or trigger the OOM killer");
			} else {
				k = add(d, S_OK, "memory", "",
					"mr_size %s fits: %s available of %s", ms, as, ts);
			}
		}
		cset(k, "mem_total", tot >= 0 ? json_integer(tot) : json_null());
		cset(k, "mem_available", avail >= 0 ? json_integer(avail) : json_null());
	}
	long long ht = mi ? meminfo(mi, "HugePages_Total") : -1;
	long long hf = mi ? meminfo(mi, "HugePages_Free") : -1;
	long long hs = mi ? meminfo(mi, "Hugepagesize") : -1;
	char hss[32] = "?";
	if (hs > 0)
		hbytes(hss, sizeof(hss), (uint64_t)hs);
	if (ht < 0)
		k = add(d, S_INFO, "hugepages", "", "unknown (no %s/meminfo)", d->proc);
	else
		k = add(d, S_INFO, "hugepages", "",
			"%lld pages of %s configured, %lld free (optional: dmreplay's MR uses "
			"ordinary pages)",
			ht, hss, hf < 0 ? 0 : hf);
	cset(k, "total", ht >= 0 ? json_integer(ht) : json_null());
	cset(k, "free", hf >= 0 ? json_integer(hf) : json_null());
	free(mi);
}

static int in_list(const char *list, const char *name)
{
	if (!list)
		return 0;
	char *hay = xasprintf(", %s,", list), *needle = xasprintf(", %s,", name);
	int r = strstr(hay, needle) != NULL;
	free(hay);
	free(needle);
	return r;
}

/* The netdevs of the selected ports: where RDMA traffic leaves. */
static char *rdma_netdevs(const doctor_t *d)
{
	char *s = NULL;
	for (size_t i = 0; i < d->n_devs; i++)
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if (d->devs[i].selected && p->selected && p->ndev[0] &&
			    !in_list(s, p->ndev))
				sappend(&s, "%s%s", s ? ", " : "", p->ndev);
		}
	return s;
}

static void check_reach(doctor_t *d)
{
	const config_t *c = &d->cfg;
	char *rnd = rdma_netdevs(d);
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		char sub[64];
		node_subject(c, n, sub, sizeof(sub));
		check_t *k;
		const haddr_t *h = n->ip[0] ? host_has(d, AF_INET, &n->in) : NULL;
		unsigned char b0 = (unsigned char)(ntohl(n->in.s_addr) >> 24);
		route_t r;
		memset(&r, 0, sizeof(r));
		if (!n->ip[0]) {
			k = add(d, S_INFO, "reach", sub,
				"no ip: the CN uses the address of its GID; nothing to check");
		} else if (b0 == 127) {
			k = add(
			    d, S_WARN, "reach", sub,
			    "loopback address: other hosts cannot reach it and rdma_cm does not "
			    "work over 127.0.0.1");
			advise(k, "use the address of the RDMA netdev%s%s", rnd ? " (" : "",
			       rnd ? rnd : "");
			if (rnd)
				sappend(&k->advice, ")");
		} else if (h) {
			if (rnd && h->ifname[0] && !in_list(rnd, h->ifname)) {
				k = add(d, S_WARN, "reach", sub,
					"this host, on %s; the RDMA netdev is %s", h->ifname, rnd);
				advise(
				    k,
				    "give this node the address of its RDMA netdev in the config: "
				    "rdma_cm binds to the RDMA device behind the address's netdev");
			} else {
				k = add(d, S_OK, "reach", sub, "this host%s%s",
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
				k = add(d, S_INFO, "reach", sub,
					"not checked: %s/net/route unreadable", d->proc);
			} else if (rr == 0) {
				k = add(d, S_FAIL, "reach", sub,
					"no route in the kernel's main table (%s/net/route)",
					d->proc);
				advise(k,
				       "check the address in the config; or give %s an address on "
				       "that subnet, or add a route (ip route add ...)",
				       rnd ? rnd : "the RDMA netdev");
			} else if (r.flags & RTF_REJECT_) {
				k = add(d, S_FAIL, "reach", sub,
					"the kernel rejects it (reject route "
					"via %s)",
					r.ifname);
				advise(k, "remove the reject/unreachable route or fix the address");
			} else if (rnd && !in_list(rnd, r.ifname)) {
				k = add(d, S_WARN, "reach", sub,
					"routed via %s%s%s%s, not via the RDMA netdev %s", r.ifname,
					gw[0] ? " (gateway " : "", gw, gw[0] ? ")" : "", rnd);
				advise(
				    k,
				    "use the node's experiment-network address in the config, or "
				    "route it via %s: rdma_cm follows the kernel's route",
				    rnd);
			} else {
				k = add(d, S_OK, "reach", sub, "routable via %s (%s%s)", r.ifname,
					gw[0] ? "gateway " : "directly connected", gw);
			}
		}
		cset(k, "role", json_string(node_role(n)));
		cset(k, "index", json_integer(n->idx));
		cset(k, "ip", json_string(n->ip));
		cset(k, "local", json_boolean(h != NULL));
		cset(k, "via", r.ifname[0] ? json_string(r.ifname) : json_null());
	}
	for (size_t i = 0; i < c->n; i++) {
		const node_t *n = &c->nodes[i];
		if (!n->mn)
			continue;
		char sub[64];
		node_subject(c, n, sub, sizeof(sub));
		check_t *k =
		    add(d, S_INFO, "canary", sub,
			"READ/CAS against this MN: not run from doctor (a running MN counts "
			"every CN that connects; doctor does not join its CN set)");
		advise(k, "every `dmreplay cn` runs this canary against the MN at start-up, before "
			  "any transaction; the local loopback canary below checks this node's "
			  "device");
		cset(k, "ip", json_string(n->ip));
	}
	free(rnd);
}

/* Loopback canary on the selected (or first ACTIVE) port: open the verbs
 * backend with a 64 KiB region, whose open() writes a pattern, reads it back
 * (all zeros = DMA/IOMMU problem) and checks a CAS's returned old value
 * (byte order, atomics), then close it. Only on the real sysfs (not with
 * injected device data) and when built with the verbs backend. */
static void check_canary(doctor_t *d)
{
	const rdev_t *dv = NULL;
	const port_t *pt = NULL;
	for (size_t i = 0; i < d->n_devs && !pt; i++) {
		if (d->explicit_sel && strcmp(d->devs[i].name, d->sel_dev) != 0)
			continue;
		for (size_t j = 0; j < d->devs[i].n_ports && !pt; j++) {
			const port_t *p = &d->devs[i].ports[j];
			if ((!d->sel_port || p->num == d->sel_port) && port_active(p)) {
				dv = &d->devs[i];
				pt = p;
			}
		}
	}
	if (!pt)
		return; /* the port checks above already failed */
	char sub[128];
	port_subject(dv, pt, sub, sizeof(sub));
	check_t *k;
	if (!d->sysfs_default) {
		k = add(d, S_INFO, "canary", sub, "loopback READ/CAS canary: not run on injected "
						  "device data (--sysfs)");
		return;
	}
#ifdef DMR_HAVE_VERBS
	dmr_be_config_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = "verbs";
	cfg.mns = 1;
	cfg.cns = 1;
	cfg.workers = 1;
	cfg.mr_size = 64 * 1024;
	cfg.device = dv->name;
	cfg.port = pt->num;
	cfg.gid_index = d->sel_gid >= 0 ? (int)d->sel_gid : -1;
	dmr_be_t *be = NULL;
	dmr_err_t err;
	memset(&err, 0, sizeof(err));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dmr_status_t st = dmr_be_open(&cfg, &be, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (st == DMR_OK) {
		dmr_be_close(be);
		k = add(d, S_OK, "canary", sub,
			"loopback through the verbs backend (64 KiB MR, RC QP via rdma_cm): WRITE, "
			"READ back and CAS old value checked (%.1f ms)",
			ms);
	} else {
		k = add(d, S_FAIL, "canary", sub, "loopback through the verbs backend failed: %s",
			err.msg[0] ? err.msg : dmr_status_string(st));
		advise(k, "all zeros read back: IOMMU/DMA (see the iommu line); a wrong CAS old "
			  "value: byte order or atomics; a connect error: GID/address (see the gid "
			  "lines) or memlock");
	}
#else
	k = add(d, S_INFO, "canary", sub,
		"loopback READ/CAS canary: not run: built without the verbs backend "
		"(-DDMR_VERBS=ON needs libibverbs-dev, librdmacm-dev)");
#endif
	(void)k;
}

/* ---- output ------------------------------------------------------------------ */

static int exit_status(const doctor_t *d, size_t cnt[4])
{
	memset(cnt, 0, 4 * sizeof(*cnt));
	for (size_t i = 0; i < d->n_checks; i++)
		cnt[d->checks[i].sev]++;
	return cnt[S_FAIL] || (d->strict && cnt[S_WARN]) ? DMR_DOCTOR_FAILED : DMR_DOCTOR_OK;
}

static json_t *checks_json(const doctor_t *d)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_checks; i++) {
		const check_t *c = &d->checks[i];
		char *line = check_line(c);
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s}", "status", sev_str[c->sev],
				      "check", c->name, "subject", c->subject, "found", c->found,
				      "advice", c->advice, "line", line);
		free(line);
		if (!o)
			oom();
		if (!c->advice)
			json_object_set_new(o, "advice", json_null());
		json_object_set(o, "data", c->data);
		json_array_append_new(arr, o);
	}
	return arr;
}

static int output(doctor_t *d)
{
	size_t cnt[4];
	int rc = exit_status(d, cnt);
	if (d->json) {
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:s?, s:b, s:o, s:{s:I, s:I, s:I, s:I}, s:i}", "command",
		    "doctor", "sysfs", d->sysfs, "proc", d->proc, "config",
		    d->have_cfg ? d->cfg.path : NULL, "strict", d->strict, "checks", checks_json(d),
		    "counts", "OK", (json_int_t)cnt[S_OK], "INFO", (json_int_t)cnt[S_INFO], "WARN",
		    (json_int_t)cnt[S_WARN], "FAIL", (json_int_t)cnt[S_FAIL], "exit_status", rc);
		if (!o)
			oom();
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		for (size_t i = 0; i < d->n_checks; i++) {
			char *line = check_line(&d->checks[i]);
			puts(line);
			free(line);
		}
		printf("doctor: %zu OK, %zu INFO, %zu WARN, %zu FAIL: exit %d (%s)\n", cnt[S_OK],
		       cnt[S_INFO], cnt[S_WARN], cnt[S_FAIL], rc,
		       rc ? (cnt[S_FAIL] ? "a check failed" : "a warning, with --strict")
			  : (cnt[S_WARN] ? "no check failed; read the warnings"
					 : "all checks passed"));
	}
	fflush(stdout);
	return rc;
}

static int no_device(doctor_t *d, const char *why)
{
	static const char advice[] =
	    "load an RDMA driver (modprobe mlx5_ib) or create a SoftRoCE device (modprobe "
	    "rdma_rxe; rdma link add rxe0 type rxe netdev eth0), or run where there is one "
	    "(scripts/rxe-vm run -- build/dmreplay doctor)";
	char *found = xasprintf("no RDMA device: %s", why);
	fprintf(stderr, PROG ": error: %s; %s\n", found, advice);
	if (d->json) {
		char *line = xasprintf("FAIL devices: %s -> %s", found, advice);
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:s?, s:b, s:[{s:s, s:s, s:s, s:s, s:s, s:s, "
		    "s:{}}], s:{s:i, s:i, s:i, s:i}, s:i, s:s}",
		    "command", "doctor", "sysfs", d->sysfs, "proc", d->proc, "config",
		    d->have_cfg ? d->cfg.path : NULL, "strict", d->strict, "checks", "status",
		    "FAIL", "check", "devices", "subject", "", "found", found, "advice", advice,
		    "line", line, "data", "counts", "OK", 0, "INFO", 0, "WARN", 0, "FAIL", 1,
		    "exit_status", DMR_DOCTOR_NODEV, "error", found);
		free(line);
		if (!o)
			oom();
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		fflush(stdout);
		json_decref(o);
	}
	free(found);
	return DMR_DOCTOR_NODEV;
}

static void doctor_free(doctor_t *d)
{
	for (size_t i = 0; i < d->n_checks; i++) {
		check_t *c = &d->checks[i];
		free(c->name);
		free(c->subject);
		free(c->found);
		free(c->advice);
		json_decref(c->data);
	}
	free(d->checks);
	for (size_t i = 0; i < d->n_devs; i++) {
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			free(d->devs[i].ports[j].gids);
			free(d->devs[i].ports[j].mtu_how);
		}
		free(d->devs[i].ports);
	}
	free(d->devs);
	free(d->addrs);
	free(d->cfg.nodes);
}

/* ---- command line --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay doctor [--config C] [--device D[:PORT]] [--json] [--strict]\n"
	    "                       [--sysfs ROOT] [--proc ROOT] [--memlock BYTES|unlimited]\n"
	    "                       [--addrs ADDR[@IFNAME],...]\n"
	    "\n"
	    "Preflight checks of this node from the kernel's view (sysfs, procfs, rlimits,\n"
	    "interface addresses; no libibverbs, no network traffic): RDMA devices and ports\n"
	    "(state, link layer, speed, active MTU), GID table, locked-memory limit vs\n"
	    "mr_size, IOMMU mode, atomics; with a config, the CN count, whether every node's\n"
	    "address is this host's or routable, and the MN canary. One line per check:\n"
	    "OK / INFO / WARN / FAIL, what was found, and after \"->\" what to do.\n"
	    "\n"
	    "  --config C        cluster config (JSON): {\"mn\":[{id,ip,devname,ibport,gid,\n"
	    "                    mr_size}],\"cn\":[...]} or {\"MN_ips\",\"CN_ips\",\"ib_dev_id\",\n"
	    "                    \"ib_port\",\"gid_idx\",\"mr_size\"}; this host's entry picks\n"
	    "                    the device, port and GID to check\n"
	    "  --device D[:P]    check device D (port P) only; default: the config's, else all\n"
	    "  --json            print the checks as one JSON object on stdout\n"
	    "  --strict          a warning fails too (exit 1)\n"
	    "  --sysfs ROOT      read ROOT/class/... instead of /sys/class/... (testing)\n"
	    "  --proc ROOT       read ROOT/cmdline, ROOT/net/route, ... instead of /proc "
	    "(testing)\n"
	    "  --memlock N       take N bytes (K/M/G suffixes) or 'unlimited' as the\n"
	    "                    locked-memory limit instead of getrlimit (testing)\n"
	    "  --addrs LIST      take LIST as this host's addresses instead of getifaddrs\n"
	    "                    (testing; '' = none)\n"
	    "\n"
	    "Exit status: 0 no check failed (warnings allowed, unless --strict); 1 a check\n"
	    "failed (or warned, with --strict); 2 bad usage or config (the field and its\n"
	    "legal range are named); 3 no RDMA device at all (one error line).\n"
	    "docs/DOCTOR.md describes every check.\n");
}

static int parse_memlock(const char *s, uint64_t *out)
{
	if (!strcmp(s, "unlimited") || !strcmp(s, "infinity")) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)s[0]))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mul = 1;
	switch (*end) {
	case '\0':
		break;
	case 'K':
	case 'k':
		mul = 1ull << 10;
		end++;
		break;
	case 'M':
	case 'm':
		mul = 1ull << 20;
		end++;
		break;
	case 'G':
	case 'g':
		mul = 1ull << 30;
		end++;
		break;
	default:
		return -1;
	}
	if (errno || *end || v > (UINT64_MAX - 1) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int dmr_doctor_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, 0, 'c'},  {"device", required_argument, 0, 'd'},
	    {"json", no_argument, 0, 'j'},	    {"strict", no_argument, 0, 'S'},
	    {"sysfs", required_argument, 0, 's'},   {"proc", required_argument, 0, 'p'},
	    {"memlock", required_argument, 0, 'm'}, {"addrs", required_argument, 0, 'a'},
	    {"help", no_argument, 0, 'h'},	    {0, 0, 0, 0}};
	doctor_t d;
	memset(&d, 0, sizeof(d));
	d.sysfs = "/sys";
	d.proc = "/proc";
	d.cfg_dev_index = -1;
	const char *cfg_path = NULL, *addrs = NULL;
	int ch, rc;
	optind = 1;
	opterr = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			cfg_path = optarg;
			break;
		case 'd':
			if (!optarg[0] || strlen(optarg) > 63 || optarg[0] == ':' ||
			    (strchr(optarg, ':') && !all_digits(strchr(optarg, ':') + 1)) ||
			    (strchr(optarg, ':') && atoi(strchr(optarg, ':') + 1) < 1)) {
				fprintf(stderr,
					PROG ": --device '%s': expected NAME or NAME:PORT (port "
					     ">= 1)\n",
					optarg);
				return DMR_DOCTOR_USAGE;
			}
			d.device_opt = optarg;
			break;
		case 'j':
			d.json = 1;
			break;
		case 'S':
			d.strict = 1;
			break;
		case 's':
			d.sysfs = optarg;
			break;
		case 'p':
			d.proc = optarg;
			break;
		case 'm':
			if (parse_memlock(optarg, &d.memlock)) {
				fprintf(stderr,
					PROG ": --memlock '%s': expected bytes (K/M/G suffix) or "
					     "'unlimited'\n",
					optarg);
				return DMR_DOCTOR_USAGE;
			}
			d.have_memlock = 1;
			break;
		case 'a':
			addrs = optarg;
			break;
		case 'h':
			usage(stdout);
			return DMR_DOCTOR_OK;
		default:
			usage(stderr);
			return DMR_DOCTOR_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return DMR_DOCTOR_USAGE;
	}
	d.sysfs_default = !strcmp(d.sysfs, "/sys");

	if (cfg_path) {
		dmr_err_t e;
		if (cfg_load(&d.cfg, cfg_path, &e) != 0) {
			fprintf(stderr, PROG ": config error: %s\n", e.msg);
			free(d.cfg.nodes);
			return DMR_DOCTOR_USAGE;
		}
		d.have_cfg = 1;
	}
	if (addrs) {
		if (parse_addrs(&d, addrs)) {
			doctor_free(&d);
			return DMR_DOCTOR_USAGE;
		}
	} else {
		host_addrs(&d);
	}

	/* devices */
	char path[PATH_MAX];
	strv_t names;
	P(path, "%s/class/infiniband", d.sysfs);
	if (list_dir(path, &names) != 0 || names.n == 0) {
		char *why =
		    names.n == 0 && is_dir(path)
			? xasprintf("%s is empty (an RDMA stack without devices)", path)
			: xasprintf("%s does not exist (this kernel has no RDMA driver loaded)",
				    path);
		rc = no_device(&d, why);
		free(why);
		strv_free(&names);
		doctor_free(&d);
		return rc;
	}
	d.devs = xcalloc(names.n, sizeof(*d.devs));
	for (size_t i = 0; i < names.n; i++) {
		rdev_t *dv = &d.devs[d.n_devs++];
		scpy(dv->name, sizeof(dv->name), names.v[i]);
		scan_dev(&d, dv);
	}
	strv_free(&names);

	select_target(&d);
	if (d.have_cfg)
		check_config(&d);
	check_devices(&d);
	for (size_t i = 0; i < d.n_devs; i++)
		check_device(&d, &d.devs[i]);
	if (!d.explicit_sel) {
		int any = 0;
		for (size_t i = 0; i < d.n_devs; i++)
			for (size_t j = 0; j < d.devs[i].n_ports; j++)
				any |= port_active(&d.devs[i].ports[j]);
		if (!any) {
			check_t *k =
			    add(&d, S_FAIL, "port", "", "no ACTIVE port on any RDMA device");
			advise(k, "bring a link up (see the port lines above)");
		}
	}
	check_iommu(&d);
	check_memory(&d);
	if (d.have_cfg)
		check_reach(&d);
	check_canary(&d);
	rc = output(&d);
	doctor_free(&d);
	return rc;
}
