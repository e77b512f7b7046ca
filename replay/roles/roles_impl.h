/*
 * replay/roles/roles_impl.h - what the files of the MN / CN roles share
 * among themselves (not for other modules: their contract is
 * replay/roles.h; docs/ROLES.md).
 *
 *   cluster.c   the cluster config: parse, load, write one for this host
 *   outdir.c    an earlier run's files in an output directory, moved aside
 *   nodes.c     `dmreplay mn` and `dmreplay cn` (a CN's share of the trace)
 *   children.c  child processes: spawn, the one wait loop, their logs
 *   combine.c   the CNs' summaries -> OUT/summary.csv and processes.csv
 *   launch.c    `dmreplay run --procs` / `--config`: the MN and CNs here
 *
 * Stops: the launcher and dmr_roles_spawn_wait take SIGINT/SIGTERM through
 * core/base/sig.h (dmr_sig_caught); the mn and cn processes also hand the
 * verbs role a flag of its own (nodes.c).
 */
#ifndef DMR_ROLES_IMPL_H
#define DMR_ROLES_IMPL_H

/* The most summary.csv columns a CN summary may have (dmr_results_header
 * has 86; room to grow). */
#define DMR_ROLES_MAXCOL 160

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../replay.h"
#include "../roles.h"

/* 1 when key is one of the NULL-terminated list. */
int dmr_roles_known(const char *key, const char *const *list);

/* ---- the cluster config's field checks (cluster.c), for cluster_ford.c ---
 * Each returns DMR_ERR_PARSE with "NAME: field 'FIELD': ..." naming the
 * legal range (dmr_roles_perr formats it); v is a jansson value. */
struct json_t;
dmr_status_t dmr_roles_perr(dmr_err_t *err, const char *name, const char *field, const char *fmt,
			    ...) __attribute__((format(printf, 4, 5)));
/* An integer in [lo, hi] into *out. */
dmr_status_t dmr_roles_int(struct json_t *v, const char *name, const char *field, long long lo,
			   long long hi, long long *out, dmr_err_t *err);
/* A dotted IPv4 string into out (16 bytes). */
dmr_status_t dmr_roles_ip(struct json_t *v, const char *name, const char *field, char *out,
			  dmr_err_t *err);
/* An array of n ports 1..65535 (one per entry of the array named `of`) into
 * nodes[i].port (nodes NULL: checked only). */
dmr_status_t dmr_roles_ports(struct json_t *v, const char *name, const char *key, uint32_t n,
			     const char *of, dmr_verbs_node_t *nodes, dmr_err_t *err);
/* "a, b, c" of a NULL-terminated list into buf. */
void dmr_roles_list(const char *const *list, char *buf, size_t len);
/* FORD's compute_node_config.json or memory_node_config.json (minghust/ford
 * config/; cluster_ford.c) into cl (defaults already set). */
dmr_status_t dmr_roles_parse_ford(struct json_t *root, const char *name, dmr_verbs_cluster_t *cl,
				  char *note, size_t notelen, dmr_err_t *err);

/* ---- child processes (children.c) ---------------------------------------- */

typedef struct dmr_roles_child {
	char name[24]; /* "mn K" or "cn K" */
	pid_t pid;     /* 0: not started */
	int status;    /* exit status; -1 running; 128+sig when killed; 127 not started */
	char log[1100];
} dmr_roles_child_t;

/* fork + exec /proc/self/exe argv (argv[0] "dmreplay"), stdout and stderr
 * into log (truncated), SIGINT/SIGTERM at their defaults in the child.
 * Returns the pid, or -1 (fork failed; errno set). */
pid_t dmr_roles_spawn(char *const argv[], const char *log);
/* Send sig to every child still running. */
void dmr_roles_signal_all(dmr_roles_child_t *c, uint32_t n, int sig);
/*
 * Wait for the children ch[0..n) (status < 0 = running), printing "PFX:
 * NAME exited S after T s" for each: a SIGINT/SIGTERM (dmr_sig_caught, the
 * caller installs the handler) is forwarded; after deadline_s (0 = none),
 * or 10 s after a child failed (status != 0, including 127 = not started),
 * the rest get SIGTERM, and SIGKILL 10 s later. mn_first: ch[0..mn_first)
 * are MNs (0: none), stopped at once when every CN (ch[mn_first..n)) has
 * exited and one failed. Sets
 * *interrupted_p / *timed_out_p.
 */
void dmr_roles_wait_children(const char *pfx, dmr_roles_child_t *ch, uint32_t n, double deadline_s,
			     uint32_t mn_first, int *interrupted_p, int *timed_out_p);
/* The lines of a child's log that say what went wrong (those with "error",
 * else "fail", else "warning", at most 6; else its last 4 lines), indented,
 * to stderr. */
void dmr_roles_print_log_errors(const char *log);

/* ---- the CNs' summaries combined (combine.c) ------------------------------ */

/* One CN's summary row (its summary.csv, else summary.partial.csv). */
typedef struct dmr_roles_cnsum {
	int have, final; /* a row was read; from summary.csv */
	char status[16], workload[32], regime[64];
	long long tried, committed, verified;
	double abort_rate, secs, tried_tps, committed_tps;
	/* the whole row, by column (for the combined standard row) */
	char hbuf[4096], rbuf[4096];
	char *hf[DMR_ROLES_MAXCOL], *rf[DMR_ROLES_MAXCOL];
	int nf;
} dmr_roles_cnsum_t;

/* Read DIR/summary.csv, else DIR/summary.partial.csv (have 0: neither). */
void dmr_roles_read_cn_summary(const char *dir, dmr_roles_cnsum_t *s);

/* What the combined files are made of. */
typedef struct dmr_roles_combo {
	const dmr_replay_opts_t *o;
	const dmr_verbs_cluster_t *cl;
	const dmr_roles_cnsum_t *cs; /* [k]: CN k */
	const dmr_roles_child_t *ch; /* [0, nmn) the MNs, [nmn + k] CN k */
	uint32_t nmn;
	int complete;
	const char *workload; /* from the trace's header */
} dmr_roles_combo_t;

/* dmr_results_write_file fillers (arg: a dmr_roles_combo_t): OUT/summary.csv
 * (the standard columns, one row for the whole run; docs/ROLES.md) and
 * OUT/processes.csv (one row per scope: all, mn, cnK). */
int dmr_roles_fill_standard(FILE *f, const void *arg);
int dmr_roles_fill_processes(FILE *f, const void *arg);

/* OUT/types.csv, cns.csv, mns.csv from the CNs' own (outs[k]: CN k's
 * directory; cs[k]: its summary, for the slowest CN's time), final when
 * the combined summary.csv is (replay/breakdown.h dmr_breakdown_combine).
 * DMR_ERR_NOMEM, DMR_ERR_IO naming the path. */
dmr_status_t dmr_roles_combine_breakdown(const char *out, int final, const char (*outs)[1100],
					 const dmr_roles_cnsum_t *cs, uint32_t ncn, dmr_err_t *err);

#endif /* DMR_ROLES_IMPL_H */
