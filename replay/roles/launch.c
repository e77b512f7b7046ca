/*
 * replay/roles/launch.c - `dmreplay run --backend verbs --procs` (or
 * `--config C`): the MN and the CNs as child processes on this host, the
 * trace checked first, a cluster config written (or copied) into OUT, and
 * the combined results (contract in replay/roles.h; docs/ROLES.md "One
 * command").
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/base/fs.h"
#include "../../core/base/sig.h"
#include "../../core/layout.h"
#include "../../core/txn.h"
#include "../../traces/trace.h"
#include "../results.h"
#include "roles_impl.h"

/* Copy a file (the given cluster config into OUT/cluster.json) atomically. */
static dmr_status_t copy_file(const char *from, const char *to, dmr_err_t *err)
{
	FILE *in = fopen(from, "rb");
	if (!in)
		return dmr_err_set(err, DMR_ERR_IO, "%s: cannot open: %s", from, strerror(errno));
	dmr_afile_t out;
	dmr_status_t st = dmr_afile_open(&out, to, err);
	if (st != DMR_OK) {
		fclose(in);
		return st;
	}
	char buf[8192];
	size_t n;
	int bad = 0;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out.f) != n)
			bad = 1;
	bad |= ferror(in);
	fclose(in);
	if (bad) {
		dmr_afile_abort(&out);
		return dmr_err_set(err, DMR_ERR_IO, "%s: write failed", to);
	}
	return dmr_afile_commit(&out, err);
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

/* MN m of the config lacks the address or size this launcher needs (the
 * message printed): 1, else 0. */
static int mn_unusable(const char *pfx, const char *cfg, const dmr_verbs_cluster_t *cl, uint32_t m)
{
	if (cl->mn[m].mr_size && cl->mn[m].ip[0])
		return 0;
	fprintf(stderr,
		"%s: error: %s: MN %u has no %s: this launcher starts every MN of the config on "
		"this host and needs each MN's address and size\n",
		pfx, cfg, cl->mn[m].id, cl->mn[m].ip[0] ? "mr_size" : "ip");
	return 1;
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
		fprintf(stderr,
			"%s: error: %s is not passed to the CN processes (dmreplay cn takes "
			"--threads, --coros, --seed, --txns, --retries)\n",
			pfx,
			o->duration_s > 0   ? "--duration"
			: o->backoff_us > 0 ? "--backoff-us"
			: o->loop.loops	    ? "--loop"
					    : "--mtu");
		return 2;
	}
	if (dmr_mkdir_p(o->out_dir, DMR_FS_PROBE, &err) != DMR_OK) {
		fprintf(stderr, "%s: error: --out %s: %s\n", pfx, o->out_dir, err.msg);
		return 2;
	}
	/* finished results are never overwritten: refused now without
	 * --force; they and other leftovers are moved aside only once every
	 * check below passed, just before the children start: a refused run
	 * leaves --out as it was */
	int erc = dmr_roles_earlier_refused(o->out_dir, pfx, force);
	if (erc)
		return erc;
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
					     dmr_layout_log_bytes(dmr_trace_header(rd)), &err);
		}
		dmr_trace_close(rd);
		if (st != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
		footprint = L.total;
	}
	for (uint32_t m = 0; config && m < cl.nmn; m++)
		if (cl.mn[m].mr_size && footprint > cl.mn[m].mr_size) {
			fprintf(
			    stderr,
			    "%s: error: %s: mn[%u] mr_size %llu bytes is below the footprint of "
			    "%s with %u CNs x %u threads (%llu bytes): raise mr_size\n",
			    pfx, config, m, (unsigned long long)cl.mn[m].mr_size, o->trace, cl.ncn,
			    o->threads, (unsigned long long)footprint);
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
		for (uint32_t m = 0; m < cl.nmn; m++)
			if (mn_unusable(pfx, config, &cl, m))
				return 2;
		/* every check passed: the earlier run's files move now */
		erc = dmr_roles_clear_earlier(o->out_dir, pfx, force, moved, sizeof(moved));
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
		/* every check passed (the config written below is this host's:
		 * its MN has the probed address and mr): the earlier run's
		 * files move now */
		erc = dmr_roles_clear_earlier(o->out_dir, pfx, force, moved, sizeof(moved));
		if (erc)
			return erc;
		if ((st = dmr_cluster_write_host(cfgpath, &vi, o->mns ? o->mns : 1, o->cns, mr,
						 port, &err)) != DMR_OK ||
		    (st = dmr_cluster_load(cfgpath, &cl, note, sizeof(note), &err)) != DMR_OK) {
			fprintf(stderr, "%s: error: %s\n", pfx, err.msg);
			return 2;
		}
#else
		fprintf(stderr, "%s: error: built without the verbs backend\n", pfx);
		return 2;
#endif
	}
	/* children: the MNs first (ch[0..nmn)), then CN k at ch[nmn + k] */
	uint32_t nmn = cl.nmn, n = nmn + cl.ncn;
	for (uint32_t m = 0; !config && m < nmn; m++)
		if (mn_unusable(pfx, cfgpath, &cl, m))
			return 2;
	dmr_roles_child_t *ch = calloc(n, sizeof(*ch));
	dmr_roles_cnsum_t *cs = calloc(cl.ncn, sizeof(*cs));
	char(*outs)[1100] = calloc(cl.ncn, sizeof(*outs));
	if (!ch || !cs || !outs) {
		free(ch);
		free(cs);
		free(outs);
		fprintf(stderr, "%s: error: out of memory\n", pfx);
		return 1;
	}
	/* an earlier run's files were moved away above (once every check
	 * passed): what is read below is this run's only */
	char p[1200];
	snprintf(p, sizeof(p), "%s/summary.partial.csv", o->out_dir);
	char a_id[DMR_BE_MAX_MNS][16], a_thr[16], a_cor[16], a_seed[32], a_txns[32], a_ret[16];
	snprintf(a_thr, sizeof(a_thr), "%u", o->threads);
	snprintf(a_cor, sizeof(a_cor), "%u", o->coros);
	snprintf(a_seed, sizeof(a_seed), "%llu", (unsigned long long)o->seed);
	snprintf(a_txns, sizeof(a_txns), "%llu", (unsigned long long)o->txns);
	snprintf(a_ret, sizeof(a_ret), "%u", o->retries);
	char a_cnc[16];
	snprintf(a_cnc, sizeof(a_cnc), "%u", o->cn_cache_entries);
	/* --backups: the option when given, else the config's "backups" */
	char a_bak[16];
	snprintf(a_bak, sizeof(a_bak), "%u",
		 o->backups || !config || cl.backups < 0 ? o->backups : (uint32_t)cl.backups);
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	char mnl[400];
	size_t off = 0;
	mnl[0] = 0;
	for (uint32_t m = 0; m < nmn && off < sizeof(mnl); m++)
		off += (size_t)snprintf(mnl + off, sizeof(mnl) - off, "%sMN %u at %s:%u",
					m ? ", " : "", cl.mn[m].id, cl.mn[m].ip,
					cl.mn[m].port ? cl.mn[m].port : cl.port);
	fprintf(stderr,
		"%s: %s (%s) and %u CN processes x %u threads; config %s; logs %s/%s, "
		"%s/cnK.log\n",
		pfx, mnl, cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0", cl.ncn, o->threads,
		cfgpath, o->out_dir, nmn == 1 ? "mn.log" : "mnK.log", o->out_dir);
	int spawned = 1;
	for (uint32_t m = 0; m < nmn && spawned; m++) {
		snprintf(a_id[m], sizeof(a_id[m]), "%u", cl.mn[m].id);
		snprintf(ch[m].name, sizeof(ch[m].name), "mn %u", cl.mn[m].id);
		if (nmn == 1)
			snprintf(ch[m].log, sizeof(ch[m].log), "%s/mn.log", o->out_dir);
		else
			snprintf(ch[m].log, sizeof(ch[m].log), "%s/mn%u.log", o->out_dir,
				 cl.mn[m].id);
		char *mn_argv[] = {"dmreplay", "mn", "--config", cfgpath, "--id", a_id[m], NULL};
		ch[m].status = -1;
		ch[m].pid = dmr_roles_spawn(mn_argv, ch[m].log);
		spawned = ch[m].pid > 0;
	}
	for (uint32_t k = 0; k < cl.ncn && spawned; k++) {
		char id[16];
		snprintf(id, sizeof(id), "%u", cl.cn[k].id);
		snprintf(outs[k], sizeof(outs[k]), "%s/cn%u", o->out_dir, cl.cn[k].id);
		dmr_roles_child_t *c = &ch[nmn + k];
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
		/* issue 11: every CN the same backups and protocol (the MNs
		 * are memory only: the CNs' layout places the tables) */
		av[ac++] = "--backups";
		av[ac++] = a_bak;
		av[ac++] = "--protocol";
		av[ac++] = (char *)dmr_txn_protocol_name(o->protocol);
		if (o->txns) {
			av[ac++] = "--txns";
			av[ac++] = a_txns;
		}
		if (o->cn_cache) { /* issue 14 A3: each CN process its cache */
			av[ac++] = "--cn-cache";
			av[ac++] = (char *)o->cn_cache;
		}
		if (o->cn_cache_entries) {
			av[ac++] = "--cn-cache-entries";
			av[ac++] = a_cnc;
		}
		av[ac++] = "--out";
		av[ac++] = outs[k];
		av[ac] = NULL;
		c->pid = dmr_roles_spawn(av, c->log);
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
		dmr_roles_signal_all(ch, n, SIGTERM);
	}
	/* wait: deadline; a failed child gives the others 10 s (their own
	 * deadlines write partial results), then SIGTERM; SIGKILL 10 s later */
	int interrupted, timed_out;
	dmr_roles_wait_children(pfx, ch, n, deadline_s, nmn, &interrupted, &timed_out);
	dmr_sig_restore(&saved);
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
		dmr_roles_read_cn_summary(outs[k], &cs[k]);
		if (!cs[k].have || !cs[k].final || cs[k].verified != 1 ||
		    strcmp(cs[k].status, "complete") != 0)
			complete = 0;
	}
	dmr_roles_combo_t co = {.o = o,
				.cl = &cl,
				.cs = cs,
				.ch = ch,
				.nmn = nmn,
				.complete = complete,
				.workload = workload};
	st = dmr_results_write_file(o->out_dir, "processes.csv", dmr_roles_fill_processes, &co,
				    &err);
	if (st == DMR_OK)
		st = dmr_results_write_file(o->out_dir,
					    complete ? "summary.csv" : "summary.partial.csv",
					    dmr_roles_fill_standard, &co, &err);
	if (st == DMR_OK && complete)
		unlink(p);
	if (st == DMR_OK) /* per type, CN and MN (docs/RESULTS.md) */
		st = dmr_roles_combine_breakdown(o->out_dir, complete, outs, cs, cl.ncn, &err);
	long long tried = 0, committed = 0;
	double secs = 0;
	for (uint32_t k = 0; k < cl.ncn; k++) {
		tried += cs[k].tried;
		committed += cs[k].committed;
		if (cs[k].secs > secs)
			secs = cs[k].secs;
		char rb[48];
		if (!o->quiet)
			printf(
			    "  cn%-3u %-9s tried %lld, committed %lld (%s), verified %s, exit %d\n",
			    cl.cn[k].id, cs[k].have ? cs[k].status : "missing", cs[k].tried,
			    cs[k].committed, fmt_rate(cs[k].committed_tps, rb, sizeof(rb)),
			    cs[k].verified == 1 ? "yes" : "no", ch[nmn + k].status);
	}
	if (!o->quiet) {
		char rb[48];
		printf("dmreplay: %s on verbs (%s), %u MN + %u CN processes x %u threads x %u "
		       "coros, seed %llu%s\n",
		       cs[0].have ? cs[0].workload : workload,
		       cl.mn[0].devname[0] ? cl.mn[0].devname : "device 0", nmn, cl.ncn, o->threads,
		       o->coros, (unsigned long long)o->seed, complete ? "" : "  [PARTIAL]");
		printf("  transactions   %lld tried, %lld committed; %s committed over %.3f s (the "
		       "slowest CN)\n",
		       tried, committed, fmt_rate(secs > 0 ? committed / secs : 0, rb, sizeof(rb)),
		       secs);
		printf("  verification   %s\n",
		       complete
			   ? "PASSED on every CN (final MN state; SmallBank/YCSB sums over all "
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
				dmr_roles_print_log_errors(ch[i].log);
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
