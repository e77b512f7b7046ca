/*
 * replay/roles.h - the MN and CN roles as processes (issue #3 item 2;
 * docs/ROLES.md): the cluster config parser and `dmreplay mn` / `dmreplay cn`.
 */
#ifndef DMR_ROLES_H
#define DMR_ROLES_H

#include <stddef.h>

#include "../backends/verbs/verbs.h"
#include "../core/status.h"

#define DMR_ROLES_DEFAULT_PORT 18515

/*
 * Parse a cluster config (JSON text; `name` is used in messages). Two shapes:
 *   {"mn":[{"id","ip","devname","ibport","gid","mr_size"(bytes)}],
 *    "cn":[{"id","ip","devname","ibport","gid"}], ...}
 *   {"MN_ips":[...], "CN_ips":[...], "ib_dev_id", "ib_port", "gid_idx",
 *    "mr_size"(GiB), "memcached_ip"(accepted, ignored), ...}
 * plus, in both, "retry_cnt" 0..7 (7), "rnr_retry" 0..7 (7), "timeout"
 * 0..31 (14), "port" 1..65535 (18515). Unknown fields, duplicate keys,
 * wrong types and values out of range are refused (DMR_ERR_PARSE) naming the
 * field and its legal range. A note (e.g. memcached_ip ignored) goes into
 * note (may be NULL).
 */
dmr_status_t dmr_cluster_parse(const char *text, const char *name, dmr_verbs_cluster_t *cl,
			       char *note, size_t notelen, dmr_err_t *err);
/* Read and parse a file (DMR_ERR_IO when it cannot be read). */
dmr_status_t dmr_cluster_load(const char *path, dmr_verbs_cluster_t *cl, char *note,
			      size_t notelen, dmr_err_t *err);

/* CLI entries: argv[0] is "mn" / "cn". Exit status: 0 ok, 1 failed run,
 * 2 bad input, 130 interrupted. */
int dmr_roles_mn_main(int argc, char **argv);
int dmr_roles_cn_main(int argc, char **argv);

#endif
