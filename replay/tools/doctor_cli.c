/*
 * replay/tools/doctor_cli.c - `dmreplay doctor` (doctor.h, docs/DOCTOR.md):
 * the options, then the scan (doctor_scan.c) and the checks in their
 * order: config (doctor_config.c), devices and ports (doctor_dev.c), host
 * (doctor_host.c), reachability, canary (doctor_canary.c), and the report
 * (doctor_report.c).
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
#include <getopt.h>

#include "../../core/base/opt.h"
#include "doctor_impl.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dmreplay doctor [--config C] [--device D[:PORT]] [--json] [--strict]\n"
	    "                       [--sysfs ROOT] [--proc ROOT] [--memlock BYTES|unlimited]\n"
	    "                       [--addrs ADDR[@IFNAME],...] [--ibverbs-dir DIR]\n"
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
	    "  --memlock N       take N bytes (K/M/G/T suffixes) or 'unlimited' as the\n"
	    "                    locked-memory limit instead of getrlimit (testing)\n"
	    "  --addrs LIST      take LIST as this host's addresses instead of getifaddrs\n"
	    "                    (testing; '' = none)\n"
	    "  --ibverbs-dir DIR read libibverbs' provider files (*.driver) from DIR instead\n"
	    "                    of /etc/libibverbs.d (default with --sysfs ROOT/sys:\n"
	    "                    ROOT/etc/libibverbs.d)\n"
	    "\n"
	    "Exit status: 0 no check failed (warnings allowed, unless --strict); 1 a check\n"
	    "failed (or warned, with --strict); 2 bad usage or config (the field and its\n"
	    "legal range are named); 3 no RDMA device at all (one error line).\n"
	    "docs/DOCTOR.md describes every check.\n");
}

/* --memlock: bytes (K/M/G/T suffixes) or unlimited/infinity (UINT64_MAX).
 * 0, or -1 with the reason on stderr. */
static int parse_memlock(const char *s, uint64_t *out)
{
	if (!strcmp(s, "unlimited") || !strcmp(s, "infinity")) {
		*out = UINT64_MAX;
		return 0;
	}
	dmr_err_t err;
	if (dmr_opt_u64("--memlock", s, 0, UINT64_MAX - 1, DMR_OPT_SIZE, out, &err) == DMR_OK)
		return 0;
	fprintf(stderr, PROG ": %s, or 'unlimited'\n", err.msg);
	return -1;
}

int dmr_doctor_main(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, 0, 'c'},
					     {"device", required_argument, 0, 'd'},
					     {"json", no_argument, 0, 'j'},
					     {"strict", no_argument, 0, 'S'},
					     {"sysfs", required_argument, 0, 's'},
					     {"proc", required_argument, 0, 'p'},
					     {"memlock", required_argument, 0, 'm'},
					     {"addrs", required_argument, 0, 'a'},
					     {"ibverbs-dir", required_argument, 0, 'I'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	doctor_t d;
	memset(&d, 0, sizeof(d));
	d.sysfs = "/sys";
	d.proc = "/proc";
	d.cfg_dev_index = -1;
	const char *cfg_path = NULL, *addrs = NULL;
	int ch, rc;
	optind = 1;
	opterr = 0; /* dmr_opt_refused says what getopt_long refused */
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
			if (parse_memlock(optarg, &d.memlock))
				return DMR_DOCTOR_USAGE;
			d.have_memlock = 1;
			break;
		case 'a':
			addrs = optarg;
			break;
		case 'I':
			d.ibv_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return DMR_DOCTOR_OK;
		default: {
			dmr_err_t oerr;
			dmr_opt_refused("doctor", ch, argv, opts, &oerr);
			fprintf(stderr, PROG ": %s\n", oerr.msg);
			return DMR_DOCTOR_USAGE;
		}
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
		if (dmr_doc_cfg_load(&d.cfg, cfg_path, &e) != 0) {
			fprintf(stderr, PROG ": config error: %s\n", e.msg);
			free(d.cfg.nodes);
			return DMR_DOCTOR_USAGE;
		}
		d.have_cfg = 1;
	}
	if (addrs) {
		if (dmr_doc_parse_addrs(&d, addrs)) {
			dmr_doc_free(&d);
			return DMR_DOCTOR_USAGE;
		}
	} else {
		dmr_doc_host_addrs(&d);
	}

	/* devices */
	char path[PATH_MAX];
	strv_t names;
	P(path, "%s/class/infiniband", d.sysfs);
	if (dmr_doc_list_dir(path, &names) != 0 || names.n == 0) {
		char *why =
		    names.n == 0 && is_dir(path)
			? xasprintf("%s is empty (an RDMA stack without devices)", path)
			: xasprintf("%s does not exist (this kernel has no RDMA driver loaded)",
				    path);
		rc = dmr_doc_no_device(&d, why);
		free(why);
		dmr_doc_strv_free(&names);
		dmr_doc_free(&d);
		return rc;
	}
	d.devs = xcalloc(names.n, sizeof(*d.devs));
	for (size_t i = 0; i < names.n; i++) {
		rdev_t *dv = &d.devs[d.n_devs++];
		scpy(dv->name, sizeof(dv->name), names.v[i]);
		dmr_doc_scan_dev(&d, dv);
	}
	dmr_doc_strv_free(&names);

	dmr_doc_select_target(&d);
	if (d.have_cfg)
		dmr_doc_check_config(&d);
	dmr_doc_check_devices(&d);
	dmr_doc_check_providers(&d);
	dmr_doc_check_rxe_module(&d);
	for (size_t i = 0; i < d.n_devs; i++)
		dmr_doc_check_device(&d, &d.devs[i]);
	if (d.have_cfg)
		dmr_doc_check_transport(&d);
	if (!d.explicit_sel) {
		int any = 0;
		for (size_t i = 0; i < d.n_devs; i++)
			for (size_t j = 0; j < d.devs[i].n_ports; j++)
				any |= port_active(&d.devs[i].ports[j]);
		if (!any) {
			check_t *k = dmr_doc_add(&d, S_FAIL, "port", "",
						 "no ACTIVE port on any RDMA device");
			dmr_doc_advise(k, "bring a link up (see the port lines above)");
		}
	}
	dmr_doc_check_iommu(&d);
	dmr_doc_check_memory(&d);
	if (d.have_cfg)
		dmr_doc_check_reach(&d);
	dmr_doc_check_canary(&d);
	rc = dmr_doc_output(&d);
	dmr_doc_free(&d);
	return rc;
}
