/*
 * replay/roles.h - the MN and CN roles as processes (issue #3 item 2;
 * docs/ROLES.md): the cluster config (parse, load, write), `dmreplay mn` /
 * `dmreplay cn`, and the launcher of `dmreplay run --procs` with its child
 * processes. Implemented in replay/roles/ (roles_impl.h maps the files).
 */
#ifndef DMR_ROLES_H
#define DMR_ROLES_H

#include <stddef.h>
#include <stdint.h>

#include "../backends/verbs/verbs.h"
#include "../core/base/status.h"

#define DMR_ROLES_DEFAULT_PORT 18515

/*
 * Parse a cluster config (JSON text; `name` is used in messages) into cl
 * (cl->shape names the shape found). Shapes:
 *   "dmreplay": {"mn":[{"id","ip","devname","ibport","gid","mr_size"(bytes),
 *    "port"}], "cn":[{"id","ip","devname","ibport","gid"}], ...};
 *   "crest" (adslabcuhk/crest config/ files): the same node objects with
 *    mr_size in GiB on MN and CN entries and a workload section ("tpcc",
 *    "smallbank", "ycsb", "tatp", "micro": objects, ignored); told apart by
 *    that section;
 *   "reference": {"MN_ips":[...], "CN_ips":[...], "MN_ports":[...],
 *    "ib_dev_id", "ib_port", "gid_idx", "mr_size"(GiB), "memcached_ip"
 *    (accepted, ignored), ...};
 *   "ford-cn" / "ford-mn": FORD's compute_node_config.json (every MN's
 *    address, no region size) and memory_node_config.json (one MN of *    machine_num; its address
 * is the automatic GID's), replay/roles/ cluster_ford.c; "motor-cn" / "motor-mn": Motor's
 * cn_config.json and mn_config.json (the same shape, Motor's fields; the MN file also lists the
 * other MNs); plus, in ours, CREST's and the reference's, "retry_cnt" 0..7 (7), "rnr_retry" 0..7
 * (7), "timeout" 1..31 (14; 0, the verbs "no ACK timer", is refused: a dead MN would never fail a
 * request, docs/ROLES.md "A dead MN"), "port" 1..65535 (18515; an MN's own "port" overrides it),
 * "backups" 0..2 (below the number of MNs) and "placement" {"TABLE":
 * [primary MN id, backup MN ids...]} (ids in the MN list, none twice, 1 +
 * backups long). 1..DMR_BE_MAX_MNS MNs, 1..DMR_VERBS_MAX_NODES CNs; two MNs
 * at one ip:port are refused. Unknown fields, duplicate keys, wrong types
 * and values out of range are refused (DMR_ERR_PARSE) naming the file, the
 * field and its legal range. A note (e.g. memcached_ip ignored, the shape
 * read) goes into note (may be NULL).
 */
dmr_status_t dmr_cluster_parse(const char *text, const char *name, dmr_verbs_cluster_t *cl,
			       char *note, size_t notelen, dmr_err_t *err);
/* What a cluster config leaves unsaid: zero nodes, retry_cnt 7, rnr_retry
 * 7, timeout 14, port DMR_ROLES_DEFAULT_PORT, no backups or FORD id given
 * (-1). dmr_cluster_parse starts from it. */
void dmr_cluster_defaults(dmr_verbs_cluster_t *cl);
/* Read and parse a file (DMR_ERR_IO when it cannot be read). */
dmr_status_t dmr_cluster_load(const char *path, dmr_verbs_cluster_t *cl, char *note, size_t notelen,
			      dmr_err_t *err);

/*
 * Write the cluster config of one host to path, in the "mn"/"cn" shape
 * dmr_cluster_parse reads: MNs 0..nmn-1 (1..DMR_BE_MAX_MNS) with mr_size
 * bytes each (64..2^48, a multiple of 8), MN k on rdma_cm port port + k
 * (its "port"), and CNs 0..ncn-1 (1..DMR_VERBS_MAX_NODES), all on vi's ip,
 * device, port and GID index (as dmr_verbs_probe fills them); "port" =
 * port; retry_cnt 6 (not 7: rxe retries forever with 7, docs/ROLES.md "A
 * dead MN"), rnr_retry 7, timeout 14. JSON through jansson (strings
 * escaped), written atomically (core/base/fs.h): a reader sees the old file
 * or the new one. DMR_ERR_INVALID (ncn), DMR_ERR_IO (path named).
 */
dmr_status_t dmr_cluster_write_host(const char *path, const dmr_verbs_info_t *vi, uint32_t nmn,
				    uint32_t ncn, uint64_t mr_size, uint16_t port, dmr_err_t *err);

/* CLI entries: argv[0] is "mn" / "cn". Exit status: 0 ok, 1 failed run,
 * 2 bad input, 130 interrupted. */
int dmr_roles_mn_main(int argc, char **argv);
int dmr_roles_cn_main(int argc, char **argv);

/*
 * `dmreplay run --backend verbs --procs` (or `--config C`): one MN and the
 * CNs as child processes on this host (fork + exec of /proc/self/exe; docs/
 * ROLES.md "One command"). Without config, OUT/cluster.json is written for
 * o->cns CNs on the address of o->device's chosen GID, with mr_size = the
 * trace's footprint for cns x threads workers (or o->mr_size if larger) and
 * an rdma_cm port of its own (20000 + pid mod 20000); with config, that
 * file is copied there (cns_given: o->cns must match its CNs). Children log
 * to OUT/mn.log and OUT/cnK.log; CN K writes OUT/cnK/. SIGINT/SIGTERM are
 * forwarded; after deadline_s (0 = none), or 10 s after a child failed, the
 * rest get SIGTERM, then SIGKILL 10 s later. OUT/summary.csv (all children
 * exited 0 and every CN's run is complete and verified) or else
 * OUT/summary.partial.csv: the standard summary.csv columns, one row for the
 * whole run (sums of the counts, rates over the slowest CN's run time;
 * docs/ROLES.md); OUT/processes.csv: one row "all", one for the MN, one per
 * CN, with exit statuses. Returns the exit status: 0, 1 failed, 2 bad
 * input, 130 interrupted.
 */
/*
 * Run n commands of this executable as child processes (fork + exec of
 * /proc/self/exe with argvs[i], argvs[i][0] = "dmreplay"), stdout and
 * stderr of child i into logs[i] (truncated), and wait for all of them,
 * printing "PFX: NAME exited S after T s" to stderr for each. SIGINT and
 * SIGTERM are forwarded; after deadline_s (0 = none), or 10 s after a child
 * failed (or could not be started), the rest get SIGTERM, and SIGKILL 10 s
 * later. status_p[i] (n entries, caller's) = the exit status, 128 + signal
 * when killed, 127 when not started. Returns 0, 1 (the deadline passed) or
 * 130 (interrupted). Used by `dmreplay kv run --procs` (replay/kv.c).
 */
int dmr_roles_spawn_wait(const char *pfx, uint32_t n, char **const argvs[],
			 const char *const names[], const char *const logs[], double deadline_s,
			 int *status_p);

/*
 * Before a run into dir (the launcher's OUT, or a CN's --out): the files an
 * earlier run left there (summary.csv, summary.partial.csv, timeseries*.csv,
 * cluster.json, processes.csv, mn.log, cnK.log, cnK/, trace.cnK.csv[.tmp];
 * nothing else is touched) are moved to dir/earlier-N/ (the first free N; a note on stderr
 * names it, and moved = that path, movedlen bytes, "" when nothing moved).
 * When they include finished results (dir/summary.csv or dir/cnK/summary.csv)
 * the run is refused instead unless force. Nothing is deleted. Returns 0, or
 * 2 (refused, or a move failed; the message, prefixed pfx, is printed).
 */
int dmr_roles_clear_earlier(const char *dir, const char *pfx, int force, char *moved,
			    size_t movedlen);

/*
 * The check of dmr_roles_clear_earlier alone, nothing moved: 2 (the message,
 * prefixed pfx, printed) when dir holds finished results and !force, or dir
 * cannot be read; else 0. A run takes it up front and moves the files only
 * once it is sure to start (run, kv run: a refused run leaves dir as it was).
 */
int dmr_roles_earlier_refused(const char *dir, const char *pfx, int force);

struct dmr_replay_opts;
/* force: see dmr_roles_clear_earlier (run's --force). The trace is checked
 * (readable, header, footprint <= the config's mr_size) on both paths before
 * anything is spawned. When every CN has exited and one failed, the MN is
 * stopped at once. */
int dmr_roles_launch(const struct dmr_replay_opts *o, const char *config, int cns_given,
		     double deadline_s, int force);

#endif
