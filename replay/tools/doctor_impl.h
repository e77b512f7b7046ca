/*
 * replay/tools/doctor_impl.h - private to `dmreplay doctor`
 * (replay/tools/README.md has the map of its files): the run (doctor_t:
 * options, this host's addresses, the config's nodes, the devices as sysfs
 * shows them, the checks found so far), the small helpers every file uses
 * (static inline: allocation that exits on out of memory, bounded string
 * formatting, sysfs paths), and the functions the files share (dmr_doc_*,
 * not part of doctor.h's API).
 *
 * Conventions: a check is added with dmr_doc_add (severity, check id,
 * subject, what was found), then dmr_doc_advise (what to do) and dmr_doc_cset
 * (its JSON fields); out of memory exits 1 (oom); a path too long for
 * PATH_MAX becomes "" so that every open of it fails.
 */
#ifndef DMR_DOCTOR_IMPL_H
#define DMR_DOCTOR_IMPL_H

#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../core/base/status.h"
#include "doctor.h"

#define PROG "dmreplay doctor"
#define SLOW_GBPS 25.0
#define CAP_IPC_LOCK_BIT 14

/* ---- small helpers ------------------------------------------------------------ */

/* ---- small utilities ------------------------------------------------------ */

static inline void oom(void)
{
	fputs(PROG ": out of memory\n", stderr);
	exit(1);
}

static inline void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

static inline void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz ? sz : 1);
	if (!p)
		oom();
	return p;
}

static inline char *xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		oom();
	return r;
}

static inline char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

__attribute__((format(printf, 1, 2))) static inline char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

/* Path into buf; an over-long path becomes "" (every open then fails). */
__attribute__((format(printf, 2, 3))) static inline char *P(char buf[PATH_MAX], const char *fmt,
							    ...)
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
__attribute__((format(printf, 3, 4))) static inline void sfmt(char *buf, size_t len,
							      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static inline void scpy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Append to a growing malloc'd string. */
__attribute__((format(printf, 2, 3))) static inline void sappend(char **s, const char *fmt, ...)
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

static inline int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static inline int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static inline int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* ---- the run's objects ---------------------------------------------------------- */

typedef enum { S_OK, S_INFO, S_WARN, S_FAIL } sev_t;

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
	char note[256];			   /* from the parser, e.g. memcached_ip ignored */
	int retry_cnt, rnr_retry, timeout; /* as parsed (defaults 7, 7, 14) */
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
	const char *ibv_dir;	/* --ibverbs-dir; NULL: dmr_doc_ibv_dir's default */
	int provider_missing;	/* a selected device has no libibverbs provider */
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

static inline const char *node_role(const node_t *n)
{
	return n->mn ? "mn" : "cn";
}

static inline int port_active(const port_t *p)
{
	return p->state_num == 4 || !strcmp(p->state, "ACTIVE");
}

static inline int is_eth(const port_t *p)
{
	return !strcmp(p->ll, "Ethernet");
}

static inline int gid_usable(const dgid_t *g)
{
	return g->v2 && g->cls == G_OWN4;
}

/* ---- readers and formatters (doctor_util.c) ---------------------------------------- */

typedef struct strv {
	char **v;
	size_t n;
} strv_t;

/* One sysfs/procfs attribute, trailing white space removed. -1 with errno
 * when it cannot be read. */
int dmr_doc_read_str(const char *path, char *buf, size_t len);
/* A whole (small) file, NUL-terminated, malloc'd; NULL when unreadable. */
char *dmr_doc_read_all(const char *path);
/* Entries of a directory but . and .., in natural order (mlx5_2 < mlx5_10);
 * -1 if unreadable. */
int dmr_doc_list_dir(const char *path, strv_t *out);
void dmr_doc_strv_free(strv_t *s);
/* "64 KiB", "1.5 GiB", "100 B". */
void dmr_doc_hbytes(char *buf, size_t len, uint64_t v);
/* 1 if name is an item of the ", "-separated list (NULL: none). */
int dmr_doc_in_list(const char *list, const char *name);

/* ---- the checks and the report (doctor_report.c) --------------------------------- */

__attribute__((format(printf, 5, 6))) check_t *
dmr_doc_add(doctor_t *d, sev_t sev, const char *name, const char *subject, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) void dmr_doc_advise(check_t *c, const char *fmt, ...);
/* A JSON field of the check (v: a new reference; NULL = out of memory). */
void dmr_doc_cset(check_t *c, const char *key, json_t *v);
/* "device" (and "port" when p) fields. */
void dmr_doc_cset_port(check_t *c, const rdev_t *dv, const port_t *p);
/* Print every check (text or --json) and the summary; the exit status. */
int dmr_doc_output(doctor_t *d);
/* No RDMA device at all: one stderr line (and the JSON); DMR_DOCTOR_NODEV. */
int dmr_doc_no_device(doctor_t *d, const char *why);
void dmr_doc_free(doctor_t *d);

/* ---- what is read (doctor_scan.c) --------------------------------------------------- */

/* --addrs ADDR[@IFNAME],...: 0, or -1 with the bad item on stderr. */
int dmr_doc_parse_addrs(doctor_t *d, const char *list);
/* This host's addresses (getifaddrs). */
void dmr_doc_host_addrs(doctor_t *d);
/* The host address equal to a (fam: AF_INET 4 or AF_INET6 16 bytes), or NULL. */
const haddr_t *dmr_doc_host_has(const doctor_t *d, int fam, const void *a);
/* This host's IPv4 addresses, ", "-separated ("none"), malloc'd. */
char *dmr_doc_host_addr_list(const doctor_t *d);
/* Fill dv (its name set) from sysfs: attributes, uverbs, ports, GIDs, MTU. */
void dmr_doc_scan_dev(doctor_t *d, rdev_t *dv);

/* ---- the cluster config (doctor_config.c) ---------------------------------------- */

/* 0, or -1 with the parser's message (naming the field and its range). */
int dmr_doc_cfg_load(config_t *c, const char *path, dmr_err_t *e);
/* "mn[0] 10.0.0.1" (or "MN_ips[0] ..." in that shape). */
void dmr_doc_node_subject(const config_t *c, const node_t *n, char *buf, size_t len);
/* Which config entries are this host, and which device/port/GID to check
 * (--device, else this host's entry). */
void dmr_doc_select_target(doctor_t *d);
void dmr_doc_check_config(doctor_t *d);
/* The QP transport fields on the selected devices: retry_cnt 7 on
 * SoftRoCE (rdma_rxe retries forever with 7) warns. */
void dmr_doc_check_transport(doctor_t *d);
/* Every node's address: this host's, or routed via the RDMA netdev; the
 * MN canaries (not run from doctor). */
void dmr_doc_check_reach(doctor_t *d);

/* ---- devices, ports, GIDs (doctor_dev.c) --------------------------------------------- */

/* "mlx5_0:1" */
void dmr_doc_port_subject(const rdev_t *dv, const port_t *p, char *buf, size_t len);
/* The device list and the selection. */
void dmr_doc_check_devices(doctor_t *d);
/* One device: kind, uverbs, each selected port (state, speed, MTU, GIDs),
 * atomics. */
void dmr_doc_check_device(doctor_t *d, rdev_t *dv);

/* ---- the user-space stack (doctor_stack.c) ---------------------------------------- */

#define DMR_DOC_RXE_ADVICE                                                                         \
	"create the device: rdma link add rxe0 type rxe netdev eth0 (your netdev); when that "     \
	"fails with only \"No such file or directory\", the kernel says why: dmesg | grep -i "     \
	"rxe (e.g. rdma_rxe could not init crc32: a kernel without crc32 support)"

/* Where libibverbs' provider files are read: --ibverbs-dir; else
 * /etc/libibverbs.d with the default --sysfs; else ROOT/etc/libibverbs.d
 * for --sysfs ROOT/sys (the fake trees of the tests). */
const char *dmr_doc_ibv_dir(const doctor_t *d, char buf[PATH_MAX]);
/* Each selected device's provider in that directory: FAIL when none claims
 * it (libibverbs then lists no device although the kernel has it), OK,
 * or INFO for a driver whose provider is not known here. */
void dmr_doc_check_providers(doctor_t *d);
/* 1 when rdma_rxe is loaded (<sysfs>/module/rdma_rxe or a <proc>/modules
 * line); how = the path that says so. */
int dmr_doc_rxe_loaded(const doctor_t *d, char *how, size_t len);
/* rdma_rxe loaded and no rxe device: INFO with DMR_DOC_RXE_ADVICE. */
void dmr_doc_check_rxe_module(doctor_t *d);

/* ---- the host (doctor_host.c), the canary (doctor_canary.c) ---------------------------- */

void dmr_doc_check_iommu(doctor_t *d);
void dmr_doc_check_memory(doctor_t *d);
/* Loopback READ/CAS through the verbs backend on the selected (or first
 * ACTIVE) port; INFO only on injected data or without the verbs backend. */
void dmr_doc_check_canary(doctor_t *d);

#endif /* DMR_DOCTOR_IMPL_H */
