/*
 * tests/integration/test_doctor.c - `dmreplay doctor` (replay/tools/, docs/DOCTOR.md).
 *
 *  - On a machine without RDMA (this one; and an empty fake sysfs): one
 *    error line on stderr, nothing on stdout, exit 3; --json says the same.
 *  - A fake sysfs/procfs tree with everything REFERENCE.md section 5 warns
 *    about (tests/data/doctor/bad.tree: GID table with link-local fe80:: and
 *    a foreign IPv4-mapped address, netdev MTU 500 = IB MTU 256, a 1 Gb/sec
 *    port, an IOMMU translating DMA; memlock 64 KiB vs mr_size 1 GiB): each
 *    warning fires with its advice, memlock fails, exit 1.
 *  - A healthy fake node (healthy.tree + healthy-cluster.json): no warning,
 *    exit 0 even with --strict.
 *  - --json: parses with jansson and carries the same checks as the text.
 *  - Bad config files are refused with exit 2 naming the field and its range.
 *  - Selection (--device, config devname / ib_dev_id, ports), reachability
 *    (own address, route, loopback, no route), CAP_IPC_LOCK, active_mtu,
 *    the MTU mapping, usage errors.
 *
 * Trees are built from the manifests in tests/data/doctor/ (format in its
 * README.md) inside one mkdtemp directory, removed at the end. The binary
 * is $DMR_BUILD_DIR/dmreplay.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "replay/tools/doctor.h"

static char g_data[PATH_MAX]; /* tests/data/doctor */

/* addresses and limits of the fake nodes */
#define HEALTHY_ADDRS "10.0.0.1@ens2f0,192.168.1.10@eno1"
#define BAD_ADDRS "10.0.0.1@eth5"

/* ---- helpers ----------------------------------------------------------------- */

/* A path; a truncated one fails the test. */
__attribute__((format(printf, 2, 3))) static void pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	ck_assert_msg(n > 0 && n < PATH_MAX, "path too long");
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];
	pathf(buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			ck_abort_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		ck_abort_msg("mkdir %s: %s", buf, strerror(errno));
}

static void parent_dirs(const char *path)
{
	char buf[PATH_MAX];
	pathf(buf, "%s", path);
	char *slash = strrchr(buf, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	mkdirs(buf);
}

/* Build tests/data/doctor/NAME.tree under DIR (see its README.md). */
static void build_tree(const char *name, const char *dir)
{
	char mpath[PATH_MAX];
	pathf(mpath, "%s/%s.tree", g_data, name);
	char *m = dmr_test_slurp(mpath, NULL);
	ck_assert_msg(m != NULL, "cannot read %s", mpath);
	mkdirs(dir);
	char *save = NULL;
	for (char *line = strtok_r(m, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!line[0] || line[0] == '#')
			continue;
		char kind = line[0];
		ck_assert_msg(line[1] == ' ', "%s: bad line '%s'", mpath, line);
		char *path = line + 2, *rest = strchr(path, ' ');
		if (rest)
			*rest++ = '\0';
		char full[PATH_MAX];
		pathf(full, "%s/%s", dir, path);
		if (kind == 'D') {
			mkdirs(full);
			continue;
		}
		parent_dirs(full);
		if (kind == 'L') {
			ck_assert_msg(rest && symlink(rest, full) == 0, "symlink %s", full);
			continue;
		}
		ck_assert_msg(kind == 'F', "%s: unknown kind in '%s'", mpath, line);
		FILE *f = fopen(full, "w");
		ck_assert_msg(f != NULL, "%s: %s", full, strerror(errno));
		for (const char *c = rest ? rest : ""; *c; c++) {
			if (c[0] == '\\' && c[1] == 'n') {
				fputc('\n', f);
				c++;
			} else if (c[0] == '\\' && c[1] == 't') {
				fputc('\t', f);
				c++;
			} else {
				fputc(*c, f);
			}
		}
		fputc('\n', f);
		fclose(f);
	}
	free(m);
}

/* A fresh copy of tree NAME in dmr_test_tmp/TAG; its root path in root[]. */
static void fresh_tree(const char *name, const char *tag, char root[PATH_MAX])
{
	pathf(root, "%s/%s", dmr_test_tmp, tag);
	build_tree(name, root);
}

#define DMR(...) dmr_test_dmrv((const char *const[]){"doctor", __VA_ARGS__, NULL})

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The line of text starting with prefix that contains every string of the
 * NULL-terminated list; aborts naming what was missing. */
static void expect_line(const char *text, const char *prefix, ...)
{
	const char *p = text;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = strndup(p, len);
		ck_assert_ptr_nonnull(line);
		int ok = !strncmp(line, prefix, strlen(prefix));
		va_list ap;
		va_start(ap, prefix);
		for (const char *s; ok && (s = va_arg(ap, const char *));)
			ok = strstr(line, s) != NULL;
		va_end(ap);
		free(line);
		if (ok)
			return;
		p = eol ? eol + 1 : NULL;
	}
	ck_abort_msg("no line '%s...' with the expected text in:\n%s", prefix, text);
}

static int has_prefix_line(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, prefix, n))
			return 1;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static void data_file(char *buf, const char *name)
{
	pathf(buf, "%s/%s", g_data, name);
}

/* paths of a tree */
typedef struct tree {
	char root[PATH_MAX], sys[PATH_MAX], proc[PATH_MAX];
} tree_t;

static void tree(tree_t *t, const char *name, const char *tag)
{
	fresh_tree(name, tag, t->root);
	pathf(t->sys, "%s/sys", t->root);
	pathf(t->proc, "%s/proc", t->root);
}

static dmr_test_run_t run_bad(const tree_t *t, const char *memlock, const char *extra)
{
	char cfg[PATH_MAX];
	data_file(cfg, "bad-cluster.json");
	if (extra)
		return DMR("--sysfs", t->sys, "--proc", t->proc, "--config", cfg, "--addrs",
			   BAD_ADDRS, "--memlock", memlock, extra);
	return DMR("--sysfs", t->sys, "--proc", t->proc, "--config", cfg, "--addrs", BAD_ADDRS,
		   "--memlock", memlock);
}

/* ---- no RDMA ------------------------------------------------------------------- */

static int host_has_rdma(void)
{
	struct stat st;
	if (stat("/sys/class/infiniband", &st) != 0)
		return 0;
	int any = 0;
	DIR *d = opendir("/sys/class/infiniband");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				any = 1;
		closedir(d);
	}
	return any;
}

START_TEST(test_no_rdma_here)
{
	if (host_has_rdma()) {
		fprintf(stderr, "test_no_rdma_here: this host has RDMA devices; covered by "
				"test_no_rdma_empty_sysfs instead\n");
		return;
	}
	dmr_test_run_t r = DMR(NULL);
	ck_assert_int_eq(r.status, DMR_DOCTOR_NODEV);
	ck_assert_str_eq(r.out, "");
	ck_assert_uint_eq(count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "dmreplay doctor: error: no RDMA device: "
					    "/sys/class/infiniband does not exist"));
	ck_assert_ptr_nonnull(strstr(r.err, "rdma link add rxe0 type rxe"));
	dmr_test_run_free(&r);

	r = DMR("--json");
	ck_assert_int_eq(r.status, DMR_DOCTOR_NODEV);
	ck_assert_uint_eq(count_lines(r.err), 1);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	ck_assert_msg(o != NULL, "json: %s", je.text);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_status")), 3);
	json_t *c0 = json_array_get(json_object_get(o, "checks"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c0, "status")), "FAIL");
	ck_assert_ptr_nonnull(
	    strstr(json_string_value(json_object_get(o, "error")), "no RDMA device"));
	json_decref(o);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_no_rdma_empty_sysfs)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	pathf(sys, "%s/empty/sys/class/infiniband", dmr_test_tmp);
	mkdirs(sys);
	pathf(sys, "%s/empty/sys", dmr_test_tmp);
	pathf(proc, "%s/empty/proc", dmr_test_tmp);
	mkdirs(proc);
	dmr_test_run_t r = DMR("--sysfs", sys, "--proc", proc);
	ck_assert_int_eq(r.status, 3);
	ck_assert_str_eq(r.out, "");
	ck_assert_uint_eq(count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "no RDMA device"));
	ck_assert_ptr_nonnull(strstr(r.err, "is empty"));
	dmr_test_run_free(&r);
	/* a bad config is reported before the missing device (exit 2, not 3) */
	char cfg[PATH_MAX];
	pathf(cfg, "%s/empty/bad.json", dmr_test_tmp);
	dmr_test_write_file(
	    cfg, "{\"mn\":[{\"ip\":\"10.0.0.1\",\"ibport\":0}],\"cn\":[{\"ip\":\"10.0.0.2\"}]}");
	r = DMR("--sysfs", sys, "--proc", proc, "--config", cfg);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "field 'mn[0].ibport'"));
	ck_assert_ptr_nonnull(strstr(r.err, "legal 1..255"));
	dmr_test_run_free(&r);
}
END_TEST

/* Issue #15 B32: rdma_rxe loaded (it could not init crc32, or `rdma link
 * add` was never run) but no device: say so and point at the kernel log,
 * from /sys/module/rdma_rxe or from /proc/modules. */
START_TEST(test_rxe_loaded_no_device)
{
	char root[PATH_MAX], sys[PATH_MAX], proc[PATH_MAX], path[PATH_MAX];
	pathf(root, "%s/rxemod", dmr_test_tmp);
	pathf(sys, "%s/sys", root);
	pathf(proc, "%s/proc", root);
	pathf(path, "%s/class/infiniband", sys);
	mkdirs(path);
	mkdirs(proc);
	/* not loaded: the generic advice */
	dmr_test_run_t r = DMR("--sysfs", sys, "--proc", proc);
	ck_assert_int_eq(r.status, 3);
	ck_assert_ptr_null(strstr(r.err, "rdma_rxe is loaded"));
	dmr_test_run_free(&r);
	pathf(path, "%s/modules", proc);
	dmr_test_write_file(path, "ib_uverbs 196608 0 - Live 0x0\nrdma_rxe 180224 0 - Live "
				  "0x0\nib_core 458752 2 rdma_rxe,ib_uverbs, Live 0x0\n");
	r = DMR("--sysfs", sys, "--proc", proc);
	ck_assert_int_eq(r.status, 3);
	ck_assert_uint_eq(count_lines(r.err), 1);
	ck_assert_ptr_nonnull(strstr(r.err, "rdma_rxe is loaded"));
	ck_assert_ptr_nonnull(strstr(r.err, "/proc/modules"));
	ck_assert_ptr_nonnull(strstr(r.err, "but no rxe device exists"));
	ck_assert_ptr_nonnull(strstr(r.err, "rdma link add rxe0 type rxe netdev"));
	ck_assert_ptr_nonnull(strstr(r.err, "dmesg | grep -i rxe"));
	ck_assert_ptr_nonnull(strstr(r.err, "crc32"));
	dmr_test_run_free(&r);
	dmr_test_write_file(path, "ib_core 458752 0 - Live 0x0\n");
	pathf(path, "%s/module/rdma_rxe", sys);
	mkdirs(path);
	r = DMR("--sysfs", sys, "--proc", proc, "--json");
	ck_assert_int_eq(r.status, 3);
	ck_assert_ptr_nonnull(strstr(r.out, "sys/module/rdma_rxe) but no rxe device exists"));
	dmr_test_run_free(&r);
	/* a hardware device and rdma_rxe loaded without an rxe device: INFO */
	tree_t t;
	tree(&t, "healthy", "rxemod-hw");
	pathf(path, "%s/module/rdma_rxe", t.sys);
	mkdirs(path);
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--memlock",
		"unlimited", "--device", "mlx5_2");
	expect_line(r.out, "INFO rxe: ", "rdma_rxe is loaded", "no rxe device", "dmesg", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* Issue #15 B31: the kernel device exists but libibverbs has no provider
 * for it (libibverbs.d hidden or without rxe.driver): the provider is named
 * as missing, and nothing says to create the device. */
START_TEST(test_provider_missing)
{
	tree_t t;
	tree(&t, "rxe", "noprov");
	char cfg[PATH_MAX], path[PATH_MAX];
	data_file(cfg, "rxe-cluster.json");
	pathf(path, "%s/etc/libibverbs.d/rxe.driver", t.root);
	ck_assert_int_eq(unlink(path), 0);
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       "10.0.2.15@eth0", "--memlock", "8M");
	ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "FAIL provider rxe0: ", "the kernel has rxe0",
		    "no libibverbs provider 'rxe'", "lists: mlx5", "ibverbs-providers",
		    "rxe.driver", "do not create it again", NULL);
	ck_assert_ptr_null(strstr(r.out, "rdma link add"));
	dmr_test_run_free(&r);
	/* the directory hidden altogether */
	pathf(path, "%s/etc/libibverbs.d/mlx5.driver", t.root);
	ck_assert_int_eq(unlink(path), 0);
	pathf(path, "%s/etc/libibverbs.d", t.root);
	ck_assert_int_eq(rmdir(path), 0);
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", "10.0.2.15@eth0");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL provider rxe0: ", "no user-space provider at all", "is missing",
		    "apt-get install ibverbs-providers", NULL);
	dmr_test_run_free(&r);
	/* --ibverbs-dir: read elsewhere */
	char dir[PATH_MAX];
	pathf(dir, "%s/provdir", t.root);
	mkdirs(dir);
	pathf(path, "%s/rxe.driver", dir);
	dmr_test_write_file(path, "driver rxe\n");
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", "10.0.2.15@eth0", "--ibverbs-dir",
		dir);
	ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "OK provider rxe0: ", "'rxe' configured", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* ---- the misconfigured node ------------------------------------------------------ */

START_TEST(test_bad_node_warnings)
{
	tree_t t;
	tree(&t, "bad", "bad1");
	dmr_test_run_t r = run_bad(&t, "64K", NULL);
	ck_assert_msg(r.status == DMR_DOCTOR_FAILED, "status %d\n%s%s", r.status, r.out, r.err);
	ck_assert_str_eq(r.err, "");
	const char *o = r.out;
	/* a 1 Gb/s port */
	expect_line(o, "WARN speed mlx5_0:1: ", "1 Gb/sec", "slower than 25 Gb/s",
		    "control network? throughput will be ~1/100 of a 100 GbE port",
		    "-> use the experiment network's device", NULL);
	/* MTU 256, derived from the netdev */
	expect_line(o, "WARN mtu mlx5_0:1: ", "active MTU 256",
		    "derived: netdev eth5 MTU 500 - 96 B RoCE headers (ib_core iboe_get_mtu)",
		    "halves performance", "-> set 1024 or 4096", "ip link set dev eth5 mtu", NULL);
	/* GID table: link-local fe80:: and a foreign IPv4 address */
	expect_line(o, "INFO gid mlx5_0:1[1]: ", "RoCE v2 fe80::", "link-local", NULL);
	expect_line(o, "WARN gid mlx5_0:1[3]: ", "RoCE v2 ::ffff:10.9.9.9",
		    "not an address of this host", "-> ", "this node's own IPv4 address", NULL);
	expect_line(
	    o, "WARN roce-gid mlx5_0:1: ", "no RoCE v2 GID carries an IPv4 address of this host",
	    "fe80::e42:a1ff:fe00:99 (link-local)", "10.9.9.9 (foreign)",
	    "-> give eth5 this node's experiment-network IPv4 address",
	    "ip addr add ADDR/PREFIX dev eth5", NULL);
	/* memlock 64 KiB < mr_size 1 GiB */
	expect_line(o, "FAIL memlock: ", "64 KiB", "mr_size 1 GiB", "`ulimit -l unlimited`",
		    "/etc/security/limits.conf", NULL);
	/* IOMMU translating */
	expect_line(o, "WARN iommu: ", "DMA-FQ", "not passthrough", "intel_iommu=on",
		    "READs may return zeros", "iommu=pt", NULL);
	/* not checked without verbs: INFO, never OK */
	expect_line(o, "INFO atomics mlx5_0: ", "not checked: needs verbs", NULL);
	ck_assert(!has_prefix_line(o, "OK atomics"));
	expect_line(o, "INFO canary mn[0] 10.0.0.1: ", "not run from doctor (a running MN counts",
		    NULL);
	/* the loopback canary never runs on injected device data */
	ck_assert(!has_prefix_line(o, "OK canary"));
	ck_assert(!has_prefix_line(o, "FAIL canary"));
	expect_line(o, "OK config ", "1 MN, 1 CN, mr_size 1 GiB", NULL);
	expect_line(o, "doctor: ", "6 WARN, 1 FAIL: exit 1", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_bad_node_exit_policy)
{
	tree_t t;
	tree(&t, "bad", "bad2");
	/* warnings only: exit 0 */
	dmr_test_run_t r = run_bad(&t, "unlimited", NULL);
	ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "OK memlock: ", "unlimited", NULL);
	ck_assert(has_prefix_line(r.out, "WARN speed"));
	expect_line(r.out, "doctor: ", "0 FAIL: exit 0 (no check failed; read the warnings)", NULL);
	dmr_test_run_free(&r);
	/* --strict: a warning fails */
	r = run_bad(&t, "unlimited", "--strict");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "doctor: ", "exit 1 (a warning, with --strict)", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_memlock_cap_ipc_lock)
{
	tree_t t;
	tree(&t, "bad", "cap");
	char path[PATH_MAX];
	pathf(path, "%s/self/status", t.proc);
	dmr_test_write_file(path, "Name:\tdmreplay\nCapEff:\t0000000000004000\n");
	dmr_test_run_t r = run_bad(&t, "64K", NULL);
	ck_assert_int_eq(r.status, 0);
	expect_line(r.out, "OK memlock: ", "64 KiB", "CAP_IPC_LOCK", NULL);
	dmr_test_run_free(&r);
	/* a capability of a child user namespace does not count */
	pathf(path, "%s/self/uid_map", t.proc);
	dmr_test_write_file(path, "         0       1000          1\n");
	r = run_bad(&t, "64K", NULL);
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL memlock: ", "64 KiB", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* Issue #15 B09/B28: the limit is compared with what the role locks: the MN
 * mr_size (rounded to 64 B) + the 8 KiB control page; a CN its image of the
 * region (at most mr_size) + the 8 KiB control page. healthy.tree has no
 * CAP_IPC_LOCK; healthy-cluster.json's mr_size is 1 GiB. */
START_TEST(test_memlock_role_need)
{
	tree_t t;
	tree(&t, "healthy", "mlk");
	char cfg[PATH_MAX];
	data_file(cfg, "healthy-cluster.json");
	/* the MN at exactly mr_size: 8 KiB short (OK before) */
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       HEALTHY_ADDRS, "--memlock", "1073741824");
	ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "FAIL memlock: ", "1 GiB (--memlock) <", "mr_size 1 GiB",
		    "8 KiB control page", "`dmreplay mn` refuses", NULL);
	dmr_test_run_free(&r);
	/* mr_size + 8 KiB: enough */
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS,
		"--memlock", "1073750016");
	ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "OK memlock: ", "the MN region (mr_size 1 GiB)", NULL);
	dmr_test_run_free(&r);
	/* a CN only (this host, 10.0.0.1, is cn[0]; the MN is 10.0.0.9) with 64
	 * MiB: INFO before, though `dmreplay cn` refused it; now a failure
	 * naming the CN's image */
	pathf(cfg, "%s/cn.json", t.root);
	dmr_test_write_file(cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.9\",\"devname\":"
				 "\"mlx5_2\",\"mr_size\":1073741824}],\"cn\":[{\"id\":0,\"ip\":"
				 "\"10.0.0.1\",\"devname\":\"mlx5_2\"}]}\n");
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS,
		"--memlock", "64M");
	ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "FAIL memlock: ", "64 MiB", "the CN's image of the MN region",
		    "`dmreplay cn` refuses", NULL);
	ck_assert(!has_prefix_line(r.out, "INFO memlock"));
	expect_line(r.out, "doctor: ", "1 FAIL", NULL);
	dmr_test_run_free(&r);
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS,
		"--memlock", "1073750016", "--json");
	ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\"need_bytes\": 1073750016"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"role\": \"cn\""));
	dmr_test_run_free(&r);
}
END_TEST

/* Issue #15 B27: retry_cnt 7 (also the default) on SoftRoCE warns, and
 * --strict fails; 6 passes; hardware with 7 is fine. */
START_TEST(test_retry_cnt_rxe)
{
	tree_t t;
	tree(&t, "rxe", "retry");
	char cfg[PATH_MAX];
	pathf(cfg, "%s/c7.json", t.root);
	dmr_test_write_file(cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.2.15\",\"devname\":\"rxe0\","
				 "\"mr_size\":4096}],\"cn\":[{\"id\":0,\"ip\":\"10.0.2.15\"}]}\n");
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       "10.0.2.15@eth0", "--memlock", "8M");
	ck_assert_msg(r.status == 0, "status %d\n%s%s", r.status, r.out, r.err);
	expect_line(r.out, "WARN retry ", "retry_cnt 7", "SoftRoCE (rxe0)", "retries forever",
		    "10 s", "-> set \"retry_cnt\": 6", NULL);
	dmr_test_run_free(&r);
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", "10.0.2.15@eth0",
		"--memlock", "8M", "--strict");
	ck_assert_int_eq(r.status, 1);
	dmr_test_run_free(&r);
	char c6[PATH_MAX];
	data_file(c6, "rxe-cluster.json");
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", c6, "--addrs", "10.0.2.15@eth0",
		"--memlock", "8M", "--strict");
	ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.out);
	expect_line(r.out, "OK retry ", "retry_cnt 6, timeout 12", NULL);
	dmr_test_run_free(&r);
	/* hardware counts 7 retries: no warning */
	tree_t h;
	tree(&h, "healthy", "retry-hw");
	data_file(cfg, "healthy-cluster.json");
	r = DMR("--sysfs", h.sys, "--proc", h.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS,
		"--memlock", "unlimited");
	expect_line(r.out, "OK retry ", "retry_cnt 7, timeout 14", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* ---- the healthy node ---------------------------------------------------------------- */

START_TEST(test_healthy_node)
{
	tree_t t;
	tree(&t, "healthy", "ok1");
	char cfg[PATH_MAX];
	data_file(cfg, "healthy-cluster.json");
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       HEALTHY_ADDRS, "--memlock", "unlimited", "--strict");
	ck_assert_msg(r.status == 0, "status %d\n%s%s", r.status, r.out, r.err);
	ck_assert_str_eq(r.err, "");
	ck_assert(!has_prefix_line(r.out, "WARN"));
	ck_assert(!has_prefix_line(r.out, "FAIL"));
	expect_line(r.out, "OK config ", "1 MN, 3 CNs", "start exactly 3 CN processes", NULL);
	expect_line(r.out, "OK host: ", "mn[0] 10.0.0.1", NULL);
	expect_line(r.out, "OK devices: ", "checking mlx5_2 (from config)", NULL);
	expect_line(r.out, "INFO device mlx5_0: ", "not selected", "1 Gb/sec", NULL);
	expect_line(r.out, "OK port mlx5_2:1: ", "ACTIVE", "LinkUp", "Ethernet", NULL);
	expect_line(r.out, "OK speed mlx5_2:1: ", "100 Gb/sec", NULL);
	expect_line(r.out, "OK mtu mlx5_2:1: ", "active MTU 1024", "netdev ens2f0 MTU 1500", NULL);
	expect_line(r.out, "INFO gid mlx5_2:1[3]: ", "RoCE v2 ::ffff:10.0.0.1", "this node's",
		    NULL);
	expect_line(r.out, "OK roce-gid mlx5_2:1: ", "index 3 (10.0.0.1)", NULL);
	/* injected device data: the loopback canary is named, not run */
	expect_line(r.out, "INFO canary mlx5_2:1: ", "not run on injected device data", NULL);
	expect_line(r.out, "OK config-gid mlx5_2:1: ", "index 3", NULL);
	expect_line(r.out, "OK uverbs mlx5_2: ", "uverbs2", NULL);
	expect_line(r.out, "OK iommu: ", "identity", NULL);
	expect_line(r.out, "OK memlock: ", "unlimited", NULL);
	expect_line(r.out, "OK memory: ", "mr_size 1 GiB fits", NULL);
	expect_line(r.out, "OK reach mn[0] 10.0.0.1: ", "this host, on ens2f0", NULL);
	expect_line(r.out, "OK reach cn[2] 10.0.0.4: ", "via ens2f0 (directly connected)", NULL);
	expect_line(r.out, "doctor: ", "0 WARN, 0 FAIL: exit 0 (all checks passed)", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_healthy_without_config)
{
	/* no --device, no config: every device is checked, and the control
	 * network's 1 Gb/s port warns, pointing at the faster one */
	tree_t t;
	tree(&t, "healthy", "ok2");
	dmr_test_run_t r =
	    DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--memlock", "8M");
	ck_assert_int_eq(r.status, 0);
	expect_line(r.out, "OK devices: ", "2 RDMA devices (mlx5_0, mlx5_2); checking all", NULL);
	expect_line(r.out, "WARN speed mlx5_0:1: ", "control network?",
		    "faster here: mlx5_2:1 at 100 Gb/sec", NULL);
	expect_line(r.out, "OK speed mlx5_2:1: ", NULL);
	expect_line(r.out, "INFO memlock: ", "8 MiB", "no mr_size", NULL);
	dmr_test_run_free(&r);
	/* --device picks one */
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--device",
		"mlx5_2:1");
	ck_assert_int_eq(r.status, 0);
	ck_assert(!has_prefix_line(r.out, "WARN"));
	expect_line(r.out, "OK devices: ", "checking mlx5_2 (from --device)", NULL);
	dmr_test_run_free(&r);
	/* a device or port that is not there fails */
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--device", "mlx5_9");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL devices: ", "mlx5_9", "have: mlx5_0, mlx5_2", NULL);
	dmr_test_run_free(&r);
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--device",
		"mlx5_2:2");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL port mlx5_2: ", "port 2 selected", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_port_down_and_active_mtu)
{
	tree_t t;
	tree(&t, "healthy", "down");
	char path[PATH_MAX];
	pathf(path, "%s/class/infiniband/mlx5_2/ports/1/state", t.sys);
	dmr_test_write_file(path, "1: DOWN\n");
	pathf(path, "%s/class/infiniband/mlx5_2/ports/1/active_mtu", t.sys);
	dmr_test_write_file(path, "4096\n");
	dmr_test_run_t r =
	    DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", HEALTHY_ADDRS, "--device", "mlx5_2");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL port mlx5_2:1: ", "state DOWN", "ip link set ens2f0 up", NULL);
	expect_line(r.out, "OK mtu mlx5_2:1: ", "active MTU 4096", "read from", "active_mtu", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_shape_b_config)
{
	tree_t t;
	tree(&t, "healthy", "shapeb");
	char cfg[PATH_MAX];
	data_file(cfg, "shape-b.json");
	/* this host is the MN; ib_dev_id 1 = mlx5_2; gid_idx 1 is link-local */
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       HEALTHY_ADDRS, "--memlock", "1G");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "OK config ", "MN_ips shape: 1 MN, 2 CNs, mr_size 16 GiB", NULL);
	expect_line(r.out, "OK host: ", "MN_ips[0] 10.0.0.1", NULL);
	expect_line(r.out, "INFO config ", "\"memcached_ip\" ignored", NULL);
	expect_line(r.out, "INFO devices: ", "config device index 1 = mlx5_2", "ibv_devices", NULL);
	expect_line(r.out, "FAIL config-gid mlx5_2:1: ", "index 1", "link-local",
		    "the verbs backend refuses it", "set the GID index to 3 or -1 (automatic)",
		    NULL);
	expect_line(r.out, "FAIL memlock: ", "1 GiB", "mr_size 16 GiB", NULL);
	expect_line(r.out, "OK reach CN_ips[1] 10.0.0.3: ", "directly connected", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_config_default_device)
{
	/* no devname: the verbs backend opens device index 0, here the 1 Gb/s
	 * control network (REFERENCE.md's trap): doctor checks that one */
	tree_t t;
	tree(&t, "healthy", "dev0");
	char cfg[PATH_MAX];
	pathf(cfg, "%s/nodev.json", t.root);
	dmr_test_write_file(cfg, "{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096}],"
				 "\"cn\":[{\"ip\":\"10.0.0.2\"}]}");
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       HEALTHY_ADDRS, "--memlock", "unlimited");
	ck_assert_int_eq(r.status, 0);
	expect_line(r.out, "INFO devices: ", "the config names no device", "index 0 = mlx5_0",
		    "name the device", NULL);
	expect_line(r.out, "WARN speed mlx5_0:1: ", "control network?",
		    "faster here: mlx5_2:1 at 100 Gb/sec", NULL);
	expect_line(r.out, "WARN reach cn[0] 10.0.0.2: ", "routed via ens2f0",
		    "not via the RDMA netdev eno1", NULL);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_reachability)
{
	tree_t t;
	tree(&t, "healthy", "reach");
	char cfg[PATH_MAX];
	pathf(cfg, "%s/reach.json", t.root);
	dmr_test_write_file(
	    cfg, "{\"mn\":[{\"id\":0,\"ip\":\"10.0.0.1\",\"devname\":\"mlx5_2\","
		 "\"mr_size\":4096}],"
		 "\"cn\":[{\"id\":0,\"ip\":\"10.0.0.2\"},{\"id\":1,\"ip\":\"172.16.0.9\"},"
		 "{\"id\":2,\"ip\":\"127.0.0.1\"},{\"id\":3,\"ip\":\"192.168.1.10\"}]}");
	dmr_test_run_t r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
			       HEALTHY_ADDRS, "--memlock", "unlimited");
	ck_assert_int_eq(r.status, 0);
	expect_line(r.out, "OK reach cn[0] 10.0.0.2: ", "routable via ens2f0", NULL);
	expect_line(r.out, "WARN reach cn[1] 172.16.0.9: ", "routed via eno1 (gateway 192.168.1.1)",
		    "not via the RDMA netdev ens2f0", NULL);
	expect_line(r.out, "WARN reach cn[2] 127.0.0.1: ", "loopback", "ens2f0", NULL);
	expect_line(r.out, "WARN reach cn[3] 192.168.1.10: ", "this host, on eno1",
		    "the RDMA netdev is ens2f0", NULL);
	dmr_test_run_free(&r);
	/* without a default route 172.16.0.9 is unreachable */
	char route[PATH_MAX];
	pathf(route, "%s/net/route", t.proc);
	dmr_test_write_file(
	    route, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\t"
		   "Window\tIRTT\nens2f0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0"
		   "\t0\n");
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS,
		"--memlock", "unlimited");
	ck_assert_int_eq(r.status, 1);
	expect_line(r.out, "FAIL reach cn[1] 172.16.0.9: ", "no route", NULL);
	dmr_test_run_free(&r);
	/* this host in none of the entries */
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", "10.0.0.77@ens2f0",
		"--memlock", "unlimited");
	expect_line(r.out, "WARN host: ", "none of the config's addresses", "10.0.0.77", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* ---- SoftRoCE: the fixture copied from the rxe VM, and the real host ----------------- */

START_TEST(test_rxe_fixture)
{
	tree_t t;
	tree(&t, "rxe", "rxe");
	char cfg[PATH_MAX];
	data_file(cfg, "rxe-cluster.json");
	dmr_test_run_t r =
	    DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
		"10.0.2.15@eth0,fec0::5054:ff:fe12:3456@eth0", "--memlock", "8M", "--strict");
	ck_assert_msg(r.status == 0, "status %d\n%s%s", r.status, r.out, r.err);
	ck_assert(!has_prefix_line(r.out, "WARN"));
	/* empty fw_ver and no driver link: left out, not "unknown" */
	ck_assert_ptr_nonnull(
	    strstr(r.out, "INFO device rxe0: SoftRoCE (rdma_rxe), node type 1: CA, netdev eth0\n"));
	expect_line(r.out, "INFO speed rxe0:1: ", "2.5 Gb/sec", "SoftRoCE", NULL);
	expect_line(r.out, "OK mtu rxe0:1: ", "active MTU 1024", "80 B RoCE headers (rdma_rxe)",
		    NULL);
	expect_line(r.out, "INFO gid rxe0:1[2]: ", "fec0::5054:ff:fe12:3456", "IPv6 (this node's)",
		    NULL);
	expect_line(r.out, "OK roce-gid rxe0:1: ", "index 1 (10.0.2.15)", NULL);
	expect_line(r.out, "OK memlock: ", "8 MiB", "CAP_IPC_LOCK", NULL);
	expect_line(r.out, "OK host: ", "mn[0] 10.0.2.15, cn[0] 10.0.2.15, cn[1] 10.0.2.15", NULL);
	expect_line(r.out, "INFO atomics rxe0: ", "SoftRoCE executes atomics in software", NULL);
	dmr_test_run_free(&r);
	/* eth0 at MTU 600: rxe gives 512 (600 - 80 >= 512), a warning */
	char path[PATH_MAX];
	pathf(path, "%s/class/net/eth0/mtu", t.sys);
	dmr_test_write_file(path, "600\n");
	r = DMR("--sysfs", t.sys, "--proc", t.proc, "--addrs", "10.0.2.15@eth0");
	ck_assert_int_eq(r.status, 0);
	expect_line(r.out, "WARN mtu rxe0:1: ", "active MTU 512", "below 1024",
		    "at least 1104 for 1024 or 4176 for 4096", NULL);
	dmr_test_run_free(&r);
}
END_TEST

/* Where the host has RDMA devices (the rxe VM: DMR_VM=1): the real sysfs
 * parses, and in the VM every check passes. */
START_TEST(test_real_host)
{
	if (!host_has_rdma()) {
		fprintf(stderr, "test_real_host: no RDMA device here (covered by "
				"test_no_rdma_here)\n");
		return;
	}
	const char *dev = getenv("DMR_TEST_DEVICE");
	dmr_test_run_t r = dev ? DMR("--json", "--device", dev) : DMR("--json");
	ck_assert_msg(r.status == 0 || r.status == 1, "status %d\n%s", r.status, r.err);
	json_error_t je;
	json_t *o = json_loads(r.out, 0, &je);
	ck_assert_msg(o != NULL, "json: %s", je.text);
	json_decref(o);
	dmr_test_run_free(&r);
	if (getenv("DMR_VM")) {
		r = dev ? DMR("--strict", "--device", dev) : DMR("--strict");
		ck_assert_msg(r.status == 0, "in the rxe VM every check must pass:\n%s", r.out);
		expect_line(r.out, "OK roce-gid ", NULL);
		dmr_test_run_free(&r);
	}
}
END_TEST

/* ---- --json ---------------------------------------------------------------------- */

static void json_matches_text(const char *tree_name, const char *tag)
{
	tree_t t;
	tree(&t, tree_name, tag);
	char cfg[PATH_MAX];
	int bad = !strcmp(tree_name, "bad");
	data_file(cfg, bad ? "bad-cluster.json" : "healthy-cluster.json");
	const char *addrs = bad ? BAD_ADDRS : HEALTHY_ADDRS;
	const char *ml = bad ? "64K" : "unlimited";
	dmr_test_run_t tx = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
				addrs, "--memlock", ml);
	dmr_test_run_t js = DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs",
				addrs, "--memlock", ml, "--json");
	ck_assert_int_eq(tx.status, js.status);
	json_error_t je;
	json_t *o = json_loads(js.out, 0, &je);
	ck_assert_msg(o != NULL, "--json output does not parse: %s (line %d)", je.text, je.line);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "exit_status")), js.status);
	json_t *checks = json_object_get(o, "checks");
	ck_assert(json_is_array(checks));
	/* the text has one line per check plus the summary line */
	ck_assert_uint_eq(json_array_size(checks) + 1, count_lines(tx.out));
	size_t cnt[4] = {0};
	static const char *const sev[] = {"OK", "INFO", "WARN", "FAIL"};
	const char *p = tx.out;
	for (size_t i = 0; i < json_array_size(checks); i++) {
		json_t *c = json_array_get(checks, i);
		const char *line = json_string_value(json_object_get(c, "line"));
		const char *st = json_string_value(json_object_get(c, "status"));
		const char *name = json_string_value(json_object_get(c, "check"));
		const char *found = json_string_value(json_object_get(c, "found"));
		ck_assert_ptr_nonnull(line);
		ck_assert_ptr_nonnull(st);
		ck_assert_ptr_nonnull(name);
		ck_assert_ptr_nonnull(found);
		ck_assert(json_is_object(json_object_get(c, "data")));
		const char *eol = strchr(p, '\n');
		ck_assert_ptr_nonnull(eol);
		ck_assert_msg(strlen(line) == (size_t)(eol - p) && !strncmp(p, line, strlen(line)),
			      "check %zu: json '%s' vs text '%.*s'", i, line, (int)(eol - p), p);
		ck_assert(!strncmp(line, st, strlen(st)) && line[strlen(st)] == ' ');
		ck_assert_ptr_nonnull(strstr(line, name));
		ck_assert_ptr_nonnull(strstr(line, found));
		const json_t *adv = json_object_get(c, "advice");
		if (json_is_string(adv))
			ck_assert_ptr_nonnull(strstr(line, json_string_value(adv)));
		else
			ck_assert(json_is_null(adv));
		for (int k = 0; k < 4; k++)
			if (!strcmp(st, sev[k]))
				cnt[k]++;
		p = eol + 1;
	}
	json_t *counts = json_object_get(o, "counts");
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(json_integer_value(json_object_get(counts, sev[k])),
				 (json_int_t)cnt[k]);
	if (bad) {
		/* structured data of a few checks */
		int seen_mtu = 0, seen_gid = 0, seen_mem = 0;
		for (size_t i = 0; i < json_array_size(checks); i++) {
			json_t *c = json_array_get(checks, i), *d = json_object_get(c, "data");
			const char *name = json_string_value(json_object_get(c, "check"));
			if (!strcmp(name, "mtu")) {
				ck_assert_int_eq(json_integer_value(json_object_get(d, "mtu")),
						 256);
				ck_assert_int_eq(
				    json_integer_value(json_object_get(d, "netdev_mtu")), 500);
				seen_mtu = 1;
			}
			if (!strcmp(name, "gid") &&
			    json_integer_value(json_object_get(d, "index")) == 3) {
				ck_assert_str_eq(json_string_value(json_object_get(d, "class")),
						 "foreign-ipv4");
				ck_assert_str_eq(json_string_value(json_object_get(d, "type")),
						 "RoCE v2");
				ck_assert_str_eq(json_string_value(json_object_get(d, "ipv4")),
						 "10.9.9.9");
				seen_gid = 1;
			}
			if (!strcmp(name, "memlock")) {
				ck_assert_int_eq(
				    json_integer_value(json_object_get(d, "limit_bytes")), 65536);
				ck_assert_int_eq(json_integer_value(json_object_get(d, "mr_size")),
						 1073741824);
				seen_mem = 1;
			}
		}
		ck_assert(seen_mtu && seen_gid && seen_mem);
	}
	json_decref(o);
	dmr_test_run_free(&tx);
	dmr_test_run_free(&js);
}

START_TEST(test_json_same_checks)
{
	json_matches_text("bad", "json-bad");
	json_matches_text("healthy", "json-ok");
}
END_TEST

/* ---- bad configs -------------------------------------------------------------------- */

/* Refused by the parser doctor shares with `dmreplay mn` / `cn`
 * (replay/roles.c): exit 2, one stderr line naming the field and its legal
 * range (or what is wrong with it). */
#define MN1 "\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096}]"
#define CN1 "\"cn\":[{\"ip\":\"10.0.0.2\"}]"
#define B1 "\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1"
static const struct {
	const char *json;
	const char *field;
	const char *what;
} bad_cfgs[] = {
    {"{" MN1 "," CN1 ",\"foo\":1}", "field 'foo'", "unknown field"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"speed\":1}]," CN1 "}", "field 'mn[0].speed'",
     "unknown field (mn entries take: id, ip, devname, ibport, gid, mr_size, port)"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"port\":0}]," CN1 "}", "field 'mn[0].port'",
     "legal 1..65535"},
    {"{" MN1 ",\"cn\":[{\"ip\":\"10.0.0.2\",\"ibport\":0}]}", "field 'cn[0].ibport'",
     "legal 1..255"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"gid\":300}]," CN1 "}", "field 'mn[0].gid'",
     "legal -1..255"},
    {"{\"mn\":[{\"ip\":\"10.0.0.300\",\"mr_size\":4096}]," CN1 "}", "field 'mn[0].ip'",
     "dotted IPv4"},
    {"{" MN1 ",\"cn\":[{\"id\":1,\"ip\":\"10.0.0.2\"},{\"id\":1,\"ip\":\"10.0.0.3\"}]}",
     "field 'cn[1].id'", "unique"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":16}]," CN1 "}", "field 'mn[0].mr_size'",
     "legal 64..281474976710656"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4100}]," CN1 "}", "field 'mn[0].mr_size'",
     "multiple of 8"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\"}]," CN1 "}", "field 'mn'", "\"mr_size\""},
    {"{" MN1 ",\"cn\":[{\"ip\":\"10.0.0.2\",\"mr_size\":4096}]}", "field 'cn[0].mr_size'",
     "unknown field (cn entries take: id, ip, devname, ibport, gid)"},
    {"{" MN1 ",\"cn\":[]}", "field 'cn'", "1..64"},
    {"{" MN1 "}", "field 'cn'", "missing"},
    {"{\"mn\":[{\"id\":0,\"mr_size\":4096}]," CN1 "}", "field 'mn'", "no \"ip\""},
    {"{" MN1 "," CN1 ",\"retry_cnt\":8}", "field 'retry_cnt'", "legal 0..7"},
    {"{" MN1 "," CN1 ",\"port\":0}", "field 'port'", "legal 1..65535"},
    {"{" B1 ",\"timeout\":32}", "field 'timeout'", "legal 1..31"},
    {"{" B1 ",\"timeout\":0}", "field 'timeout'", "disables the ACK timer"},
    {"{" B1 ",\"rnr_retry\":-1}", "field 'rnr_retry'", "legal 0..7"},
    {"{" B1 ",\"ib_port\":0}", "field 'ib_port'", "legal 1..255"},
    {"{" B1 ",\"gid_idx\":-2}", "field 'gid_idx'", "legal -1..255"},
    {"{" B1 ",\"ib_dev_id\":true}", "field 'ib_dev_id'", "0..255"},
    {"{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":\"16G\"}", "field 'mr_size'",
     "GiB"},
    {"{\"MN_ips\":[\"10.0.0.1\"],\"CN_ips\":[\"10.0.0.2\"]}", "field 'mr_size'", "missing"},
    {"{" B1 ",\"ib_devname\":\"mlx5_0\"}", "field 'ib_devname'", "unknown field"},
    {"{\"MN_ips\":[],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1}", "field 'MN_ips'", "1..16"},
    {"{\"MN_ips\":[\"fd00::1\"],\"CN_ips\":[\"10.0.0.2\"],\"mr_size\":1}", "field 'MN_ips[0]'",
     "dotted IPv4"},
    {"{" MN1 "," CN1 ",\"MN_ips\":[\"10.0.0.1\"]}", "both shapes mixed", "\"MN_ips\""},
    {"{\"nodes\":[]}", "nor \"MN_ips\"", "\"mn\""},
    {"[1,2]", "must be a JSON object", "cluster.json"},
    {"{\"mn\":[{\"ip\":\"10.0.0.1\",\"mr_size\":4096,\"devname\":"
     "\"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm\"}]," CN1 "}",
     "field 'mn[0].devname'", "1..63"},
    {"{" MN1 ",\n \"cn\":[{\"ip\":\"10.0.0.2\"},]}", "line 2 column", "cluster.json"},
    {"{" MN1 ",\"mn\":[]," CN1 "}", "duplicate", "mn"},
};

START_TEST(test_bad_config)
{
	tree_t t;
	char tag[32];
	snprintf(tag, sizeof(tag), "cfg%d", _i);
	tree(&t, "healthy", tag);
	char cfg[PATH_MAX];
	pathf(cfg, "%s/cluster.json", t.root);
	dmr_test_write_file(cfg, bad_cfgs[_i].json);
	dmr_test_run_t r =
	    DMR("--sysfs", t.sys, "--proc", t.proc, "--config", cfg, "--addrs", HEALTHY_ADDRS);
	ck_assert_msg(r.status == DMR_DOCTOR_USAGE, "case %d: status %d\n%s", _i, r.status, r.out);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, bad_cfgs[_i].field) && strstr(r.err, bad_cfgs[_i].what),
		      "case %d: '%s' and '%s' not in: %s", _i, bad_cfgs[_i].field,
		      bad_cfgs[_i].what, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "dmreplay doctor: config error: "));
	ck_assert_uint_eq(count_lines(r.err), 1);
	dmr_test_run_free(&r);
}
END_TEST

START_TEST(test_missing_config)
{
	char cfg[PATH_MAX];
	pathf(cfg, "%s/no-such.json", dmr_test_tmp);
	dmr_test_run_t r = DMR("--config", cfg);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "no-such.json"));
	dmr_test_run_free(&r);
}
END_TEST

/* ---- usage, MTU mapping ---------------------------------------------------------- */

START_TEST(test_usage)
{
	dmr_test_run_t r = DMR("--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: dmreplay doctor"));
	ck_assert_ptr_nonnull(strstr(r.out, "Exit status: 0"));
	ck_assert_ptr_nonnull(strstr(r.out, "3 no RDMA device"));
	dmr_test_run_free(&r);
	static const char *const bad[][2] = {{"--memlock", "lots"},    {"--device", ":1"},
					     {"--device", "mlx5_0:x"}, {"--addrs", "10.0.0.300"},
					     {"--bogus", NULL},	       {"extra", NULL}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = bad[i][1] ? DMR(bad[i][0], bad[i][1]) : DMR(bad[i][0]);
		ck_assert_msg(r.status == 2, "%s: status %d", bad[i][0], r.status);
		ck_assert_str_eq(r.out, "");
		dmr_test_run_free(&r);
	}
}
END_TEST

START_TEST(test_ib_mtu)
{
	const uint32_t H = DMR_DOCTOR_ROCE_HDR, R = DMR_DOCTOR_RXE_HDR;
	ck_assert_uint_eq(dmr_doctor_ib_mtu(9000, H), 4096);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(4192, H), 4096);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(4191, H), 2048);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1500, H), 1024);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1120, H), 1024);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1119, H), 512);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(608, H), 512);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(500, H), 256);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(352, H), 256);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(351, H), 0);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(0, H), 0);
	/* rdma_rxe, as measured in the rxe VM (ibv_devinfo active_mtu) */
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1500, R), 1024);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(4176, R), 4096);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(4175, R), 2048);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1104, R), 1024);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(1103, R), 512);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(600, R), 512);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(400, R), 256);
	ck_assert_uint_eq(dmr_doctor_ib_mtu(351, R), 256);
}
END_TEST

/* ---- suite -------------------------------------------------------------------------- */

int main(void)
{
	if (dmr_test_env_init("doctor", 1, 0) != 0)
		return EXIT_FAILURE;
	if (snprintf(g_data, sizeof(g_data), "%s/tests/data/doctor", dmr_test_src) >=
	    (int)sizeof(g_data)) {
		fprintf(stderr, "test_doctor: %s: path too long\n", dmr_test_src);
		return EXIT_FAILURE;
	}

	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("doctor");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_no_rdma_here);
	tcase_add_test(tc, test_no_rdma_empty_sysfs);
	tcase_add_test(tc, test_rxe_loaded_no_device);
	tcase_add_test(tc, test_provider_missing);
	tcase_add_test(tc, test_bad_node_warnings);
	tcase_add_test(tc, test_bad_node_exit_policy);
	tcase_add_test(tc, test_memlock_cap_ipc_lock);
	tcase_add_test(tc, test_memlock_role_need);
	tcase_add_test(tc, test_retry_cnt_rxe);
	tcase_add_test(tc, test_healthy_node);
	tcase_add_test(tc, test_healthy_without_config);
	tcase_add_test(tc, test_port_down_and_active_mtu);
	tcase_add_test(tc, test_shape_b_config);
	tcase_add_test(tc, test_config_default_device);
	tcase_add_test(tc, test_reachability);
	tcase_add_test(tc, test_rxe_fixture);
	tcase_add_test(tc, test_real_host);
	tcase_add_test(tc, test_json_same_checks);
	tcase_add_loop_test(tc, test_bad_config, 0, (int)(sizeof(bad_cfgs) / sizeof(bad_cfgs[0])));
	tcase_add_test(tc, test_missing_config);
	tcase_add_test(tc, test_usage);
	tcase_add_test(tc, test_ib_mtu);
	suite_add_tcase(s, tc);

	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
