/*
 * replay/tools/calibrate_profile.c - the hardware profile `dmreplay
 * calibrate` writes (models/model.h format, docs/CALIBRATION.md): each
 * parameter measured (with its spread and source) or copied from the base
 * profile (estimate), the device section and the "measured" section with
 * every raw series, fit and setting.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../../models/model.h"
#include "calibrate_impl.h"
#ifdef DMR_HAVE_VERBS
#include "../../backends/verbs/verbs.h"
#endif

static json_t *summ_json(const summ_t *s)
{
	json_t *reps = json_array();
	for (uint32_t i = 0; i < s->n; i++)
		json_array_append_new(reps, jreal(s->reps[i]));
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:i, s:o}", "value", jreal(s->value),
			      "mean", jreal(s->mean), "stdev", jreal(s->stdev), "min",
			      jreal(s->min), "max", jreal(s->max), "n", (int)s->n, "reps", reps);
	if (j && s->done) {
		json_t *d = json_array();
		for (uint32_t i = 0; i < s->n; i++)
			json_array_append_new(d, json_integer((json_int_t)s->done[i]));
		json_object_set_new(j, "iterations_done", d);
	}
	return j;
}

static json_t *spread_json(const summ_t *s)
{
	return json_pack("{s:o, s:o, s:o, s:i}", "stdev", jreal(s->stdev), "min", jreal(s->min),
			 "max", jreal(s->max), "reps", (int)s->n);
}

/* The parameters of models/model.c, in profile order; `unit` for copies of
 * bare numbers. nic_proc_ns and dma_gbps are derived by the loader. */
static const struct {
	const char *name, *unit;
	int integer;
} cal_params[] = {
    {"link_gbps", "Gb/s", 0},
    {"mtu", "bytes", 1},
    {"prop_ns", "ns", 0},
    {"switch_ns", "ns", 0},
    {"post_doorbell_ns", "ns", 0},
    {"post_wqe_ns", "ns", 0},
    {"poll_ns", "ns", 0},
    {"txn_logic_ns", "ns", 0},
    {"txn_begin_ns", "ns", 0}, /* optional: absent in hardware profiles */
    {"txn_op_ns", "ns", 0},
    {"nic_msg_mops", "Mmsg/s", 0},
    {"qp_max_rd_atomic", "WRs", 1},
    {"dma_read_ns", "ns", 0},
    {"dma_write_ns", "ns", 0},
    {"atomic_addr_mops", "Mops/s", 0},
    {"atomic_global_mops", "Mops/s", 0},
    {"read_rtt_ns", "ns", 0},
    {"read_bw_64k_gbps", "Gb/s", 0},
    /* software NIC only (host_cpus > 0); left out for a hardware NIC */
    {"host_cpus", "CPUs", 1},
    {"host_read_ns", "ns", 0},
    {"host_write_ns", "ns", 0},
    {"host_atomic_ns", "ns", 0},
    {"host_byte_ns", "ns/B", 0},
    {"host_switch_ns", "ns", 0},
    {"host_read_post_ns", "ns", 0},
};

static int is_host_param(const char *nm)
{
	return strncmp(nm, "host_", 5) == 0;
}

/* On a software NIC over loopback (the calibration's MN is in this process,
 * on the same device) there is no cable, switch or PCIe DMA: the copies are
 * host CPU time (host_byte_ns). */
static int is_loopback_latency(const char *nm)
{
	return strcmp(nm, "prop_ns") == 0 || strcmp(nm, "switch_ns") == 0 ||
	       strcmp(nm, "dma_read_ns") == 0 || strcmp(nm, "dma_write_ns") == 0;
}

typedef struct meas {
	int have;
	double value;
	const summ_t *spread; /* NULL: not a repeated measurement */
	char source[600];
} meas_t;

static json_t *param_json(double value, int integer, const char *unit, int estimate,
			  const char *source)
{
	json_t *p = json_object();
	json_object_set_new(p, "value",
			    integer ? json_integer((json_int_t)llround(value)) : json_real(value));
	json_object_set_new(p, "unit", json_string(unit));
	json_object_set_new(p, "estimate", json_boolean(estimate));
	json_object_set_new(p, "source", json_string(source));
	return p;
}

void dmr_cal_read_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static json_t *measured_json(const cal_t *c)
{
	static const char *const opn[2] = {"read", "write"};
	json_t *m = json_object();
	char key[64];
	for (int o = 0; o < 2; o++) {
		json_t *sz = json_array(), *pts = json_array();
		for (int k = 0; k < CAL_NSIZES; k++) {
			json_array_append_new(sz, json_integer(c->sizes[k]));
			json_array_append_new(
			    pts, json_pack("{s:i, s:o, s:o, s:o}", "bytes", (int)c->sizes[k],
					   "t_typical_ns", summ_json(&c->lat[o][k]), "t_avg_ns",
					   summ_json(&c->lat_avg[o][k]), "t_p99_ns",
					   summ_json(&c->lat_p99[o][k])));
		}
		json_t *fit = json_pack(
		    "{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "model",
		    "latency_ns = c_ns + m_ns_per_byte x bytes (gsl_fit_linear over the t_typical "
		    "medians)",
		    "c_ns", jreal(c->fit_c[o]), "m_ns_per_byte", jreal(c->fit_m[o]), "c_stderr_ns",
		    jreal(sqrt(c->fit_cov00[o])), "m_stderr_ns_per_byte",
		    jreal(sqrt(c->fit_cov11[o])), "residual_sumsq_ns2", jreal(c->fit_sumsq[o]),
		    "residual_rms_ns", jreal(sqrt(c->fit_sumsq[o] / CAL_NSIZES)));
		snprintf(key, sizeof(key), "%s_latency_vs_size", opn[o]);
		json_object_set_new(m, key,
				    json_pack("{s:s, s:i, s:i, s:i, s:o, s:o, s:o}", "method",
					      "perftest _lat statistics, depth 1, one QP",
					      "iterations", (int)c->o.lat_iters, "repetitions",
					      (int)c->o.reps, "depth", 1, "sizes", sz, "points",
					      pts, "fit", fit));
		snprintf(key, sizeof(key), "%s_bw_64k", opn[o]);
		json_object_set_new(m, key,
				    json_pack("{s:i, s:i, s:i, s:i, s:s, s:o, s:o}", "bytes",
					      (int)CAL_BW_SIZE, "depth", (int)CAL_BW_DEPTH,
					      "iterations", (int)c->o.bw_iters, "qps", 1, "unit",
					      "Gb/s", "bw_average", summ_json(&c->bw[o]), "bw_peak",
					      summ_json(&c->bw_peak[o])));
	}
	json_t *dep = json_array(), *rates = json_array();
	for (int k = 0; k < CAL_NDEPTHS; k++) {
		json_array_append_new(dep, json_integer(dmr_cal_depths[k]));
		json_array_append_new(rates, summ_json(&c->rate[k]));
	}
	json_object_set_new(m, "read_8b_rate_vs_depth",
			    json_pack("{s:i, s:i, s:s, s:o, s:o}", "bytes", 8, "iterations",
				      (int)c->o.rate_iters, "unit", "Mpps", "depths", dep,
				      "msg_rate", rates));
	json_object_set_new(
	    m, "atomics",
	    json_pack("{s:i, s:i, s:i, s:s, s:s, s:o, s:o, s:o, s:o}", "qps", (int)c->o.qps,
		      "depth", (int)CAL_ATOMIC_DEPTH, "iterations_per_qp", (int)c->o.atomic_iters,
		      "unit", "Mops/s", "addresses",
		      "distinct: 512 8-byte words per QP, cycled; same: one word for all QPs",
		      "cas_distinct", summ_json(&c->atom[0][0]), "cas_same",
		      summ_json(&c->atom[0][1]), "faa_distinct", summ_json(&c->atom[1][0]),
		      "faa_same", summ_json(&c->atom[1][1])));
	json_object_set_new(
	    m, "doorbell",
	    json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "k", (int)c->o.batch, "unit",
		      "ns", "method",
		      "CPU time (dmr_be_now around the posts) of one post of k "
		      "8 B WRITEs and of k single posts; batch = D + k W, singles = "
		      "k (D + W)",
		      "clock_cost_ns", jreal(c->clock_ns), "batch_of_k", summ_json(&c->db_batch),
		      "k_singles", summ_json(&c->db_single), "per_doorbell",
		      summ_json(&c->db_doorbell), "per_wqe", summ_json(&c->db_wqe)));
	json_object_set_new(
	    m, "rate_8b_depth16",
	    json_pack("{s:s, s:i, s:i, s:i, s:s, s:o, s:o}", "method",
		      "bench 8 B WRITE and CAS (distinct addresses) streams, one QP, signaled, "
		      "one WR per post",
		      "bytes", 8, "depth", (int)dmr_cal_depths[CAL_NDEPTHS - 1], "iterations",
		      (int)c->o.rate_iters, "unit", "Mpps", "write", summ_json(&c->rate_w), "cas",
		      summ_json(&c->rate_cas)));
	json_object_set_new(
	    m, "software_nic",
	    json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "host_cpus",
		      (int)c->host_cpus, "host_cpus_source", c->host_cpus_src, "method",
		      "one QP at depth 16: 1 / rate = post_doorbell + post_wqe + poll + NIC CPU "
		      "per WR (+ bytes x host_byte); host_byte from the 64 KiB against the 8 B "
		      "READ stream; refined by running the same streams on the sim with the "
		      "profile; what of the READ stream's CPU time does not fit in the idle "
		      "READ (read_rtt_ns) is host_switch_ns, paid by READs that find "
		      "their CPU busy",
		      "host_read_ns_fit", jreal(c->h_read_fit), "host_read_ns", jreal(c->h_read),
		      "host_write_ns", jreal(c->h_write), "host_atomic_ns", jreal(c->h_atomic),
		      "host_byte_ns", jreal(c->h_byte), "host_switch_ns", jreal(c->h_switch),
		      "applied", json_boolean(c->host_cpus > 0)));
	if (c->eng_have) {
		json_t *runs = json_array();
		for (uint32_t i = 0; i < c->eng_n; i++)
			json_array_append_new(
			    runs, json_pack("{s:s, s:o, s:o, s:o, s:o}", "trace", c->eng_trace[i],
					    "ns_per_attempt", jreal(c->eng_t[i]), "ops_per_txn",
					    jreal(c->eng_ops[i]), "completions_per_attempt",
					    jreal(c->eng_db[i]), "fit_rel_error",
					    jreal(c->eng_resid[i])));
		json_object_set_new(
		    m, "engine",
		    json_pack(
			"{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "applied",
			"no: information (docs/fidelity.md, Reading: charged, it takes TPC-C "
			"to -40 % while SmallBank and YCSB-A meet; the profile's txn_begin_ns "
			"and txn_op_ns stay absent)",
			"method",
			"the replay engine on the shm backend, 1 worker x 1 context, "
			"generated traces; loop wall time per attempt minus shm's clock reads "
			"(2 per completion, clock_ns each, less the verbs clock) = txn_begin + "
			"txn_op x operations + txn_logic x completions, least squares",
			"clock_ns", jreal(c->eng_clock_ns), "runs", runs, "txn_begin_ns",
			jreal(c->eng_begin), "txn_op_ns", jreal(c->eng_op), "txn_logic_ns",
			jreal(c->eng_logic)));
	}
	json_object_set_new(
	    m, "poll",
	    json_pack("{s:s, s:s, s:o, s:o, s:i}", "unit", "ns", "method",
		      "dmr_be_now around a poll that returns one completion already "
		      "delivered (sim: progress() returned the worker; threaded: after "
		      "ten WRITE round trips), and around an empty poll",
		      "one_completion", summ_json(&c->poll_one), "empty", summ_json(&c->poll_empty),
		      "not_arrived", (int)c->poll_late));
	return m;
}

/* x is the summary s, its source printf-style. */
__attribute__((format(printf, 3, 4))) static void measured(meas_t *x, const summ_t *s,
							   const char *fmt, ...)
{
	x->value = s->value;
	x->spread = s;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->source, sizeof(x->source), fmt, ap);
	va_end(ap);
}

/* What was measured for parameter nm, into *x (x->have 0: copy it from the
 * base); sess names the session in the sources. */
static void param_measured(cal_t *c, const dmr_model_t *bm, const char *nm, const char *sess,
			   int sim, int verbs, meas_t *x)
{
	if (strcmp(nm, "read_rtt_ns") == 0) {
		measured(x, &c->lat[0][3], /* 64 B */
			 "measured (%s): 64 B READ latency, perftest t_typical, median of "
			 "%u repetitions x %" PRIu64 " iterations at depth 1",
			 sess, c->o.reps, c->o.lat_iters);
	} else if (strcmp(nm, "read_bw_64k_gbps") == 0) {
		measured(x, &c->bw[0],
			 "measured (%s): 64 KiB READ BW average, %u outstanding, one QP, "
			 "median of %u repetitions x %" PRIu64 " iterations",
			 sess, CAL_BW_DEPTH, c->o.reps, c->o.bw_iters);
	} else if (strcmp(nm, "atomic_addr_mops") == 0 || strcmp(nm, "atomic_global_mops") == 0) {
		int same = strcmp(nm, "atomic_addr_mops") == 0; /* else distinct addresses */
		const summ_t *a = &c->atom[0][same];
		const char *where = same ? "one address" : "distinct addresses";
		int bit = same ? 1 : 2;
		if (dmr_cal_atomic_cpu_bound(c, a->value)) {
			if (!c->refining && !(c->warned_cpu_bound & bit)) {
				if (dmr_cal_atomic_below_one_qp(c, a->value))
					fprintf(stderr,
						"dmreplay calibrate: CAS on %s %.4f Mops/s with %u "
						"QPs is below one QP's CAS stream (%.4f Mops/s): "
						"not the atomic unit's rate (the host's load "
						"changed between phases, or its CPUs bound the "
						"QPs); %s copied from %s\n",
						where, a->value, c->o.qps, c->rate_cas.value, nm,
						bm->name);
				else
					fprintf(stderr,
						"dmreplay calibrate: CAS on %s %.4f Mops/s is the "
						"host CPUs' rate (%.4f); %s copied from %s\n",
						where, a->value, c->cpu_bound_mops, nm, bm->name);
			}
			if (!c->refining)
				c->warned_cpu_bound |= bit;
			return;
		}
		measured(x, a,
			 "measured (%s): CAS on %s, %u QPs x %u outstanding, median of %u "
			 "repetitions",
			 sess, where, c->o.qps, CAL_ATOMIC_DEPTH, c->o.reps);
	} else if (strcmp(nm, "post_doorbell_ns") == 0) {
		measured(x, &c->db_doorbell,
			 "measured (%s): (k single posts - one post of k) / (k - 1), k = %u, "
			 "median of %u repetitions",
			 sess, c->o.batch, c->o.db_reps);
	} else if (strcmp(nm, "post_wqe_ns") == 0) {
		measured(x, &c->db_wqe,
			 "measured (%s): (one post of k - doorbell) / k, k = %u, median of "
			 "%u repetitions",
			 sess, c->o.batch, c->o.db_reps);
	} else if (strcmp(nm, "poll_ns") == 0) {
		measured(x, &c->poll_one,
			 "measured (%s): one poll returning one completion, median of %u", sess,
			 c->poll_one.n);
	} else if (strcmp(nm, "mtu") == 0 && c->s.mtu && (sim || verbs)) {
		x->value = c->s.mtu;
		snprintf(x->source, sizeof(x->source), "%s",
			 sim ? "path MTU of the sim run"
			     : "path MTU of the connection (the smaller active MTU of the "
			       "two ports)");
	} else if (is_host_param(nm)) {
		if (!c->host_cpus)
			return; /* hardware NIC: left out (= 0) */
		const char *what = "";
		if (strcmp(nm, "host_cpus") == 0) {
			x->value = c->host_cpus;
			snprintf(x->source, sizeof(x->source), "%s", c->host_cpus_src);
			x->have = 1;
			return;
		} else if (strcmp(nm, "host_read_ns") == 0) {
			/* less the per-doorbell part (not while refining:
			 * the fit runs single-READ streams, which pay both) */
			x->value = c->h_read - (c->refining ? 0 : c->h_read_post);
			x->spread = &c->rate[CAL_NDEPTHS - 1];
			what = "8 B READ stream, less host_read_post_ns";
		} else if (strcmp(nm, "host_read_post_ns") == 0) {
			if (c->refining)
				return;
			x->value = c->h_read_post;
			x->spread = &c->rd_single;
			snprintf(x->source, sizeof(x->source),
				 "measured (%s): 16 8 B READs in one doorbell against 16 "
				 "single posts (first post to completion, median of %u): "
				 "(singles - batch) / 15 - post_doorbell_ns, a part of the "
				 "READ stream's CPU per READ (spread: of the singles, ns)",
				 sess, c->rd_single.n);
			x->have = 1;
			return;
		} else if (strcmp(nm, "host_write_ns") == 0) {
			x->value = c->h_write;
			x->spread = &c->rate_w;
			what = "8 B WRITE stream";
		} else if (strcmp(nm, "host_atomic_ns") == 0) {
			x->value = c->h_atomic;
			x->spread = &c->rate_cas;
			what = "8 B CAS stream (distinct addresses)";
		} else if (strcmp(nm, "host_switch_ns") == 0) {
			x->value = c->h_switch;
			x->spread = &c->rate[CAL_NDEPTHS - 1];
			what = "8 B READ stream: the CPU time per READ under load beyond "
			       "what the idle 64 B READ (read_rtt_ns) leaves for host_read_ns";
		} else {
			x->value = c->h_byte;
			x->spread = &c->bw[0];
			what = "64 KiB against 8 B READ stream: (t64k - t8) / (65536 - 8)";
		}
		snprintf(x->source, sizeof(x->source),
			 "fitted (%s): %s, one QP at depth %u, median of %u repetitions; "
			 "1 / rate - post_doorbell - post_wqe - poll, refined on the sim "
			 "(spread: of the rate)",
			 sess, what, dmr_cal_depths[CAL_NDEPTHS - 1], c->o.reps);
		x->have = 1; /* 0 is a legal value here */
		return;
	} else if (c->host_cpus && is_loopback_latency(nm) && !sim) {
		x->value = 0;
		snprintf(x->source, sizeof(x->source),
			 "0: software NIC over loopback (%s; the MN is in the calibrating "
			 "process on the same device): no cable, switch or PCIe DMA, the "
			 "copies are host CPU time (host_byte_ns)",
			 c->host_cpus_src);
		x->have = 1;
		return;
	} else if (strcmp(nm, "qp_max_rd_atomic") == 0 && sim) {
		x->value = c->s.model->qp_max_rd_atomic;
		snprintf(x->source, sizeof(x->source),
			 "qp_max_rd_atomic of the sim run (profile %s)", c->profile_name);
	} else {
#ifdef DMR_HAVE_VERBS
		if (strcmp(nm, "qp_max_rd_atomic") == 0 && verbs) {
			dmr_verbs_info_t vi;
			dmr_verbs_info(c->s.be, &vi);
			x->value = vi.max_rd_atomic;
			snprintf(x->source, sizeof(x->source),
				 "max_rd_atomic used by the verbs backend on %s "
				 "(device limit, ibv_query_device)",
				 vi.device);
			x->have = x->value > 0;
		}
		if (strcmp(nm, "link_gbps") == 0 && verbs) {
			/* the port's rate as the device reports it; used only when
			 * the measured READ bandwidth fits under it (rxe reports
			 * its netdev's nominal speed, which it does not enforce) */
			dmr_verbs_info_t vi;
			dmr_verbs_info(c->s.be, &vi);
			char p[300], line[128];
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", vi.device,
				 vi.port);
			dmr_cal_read_line(p, line, sizeof(line));
			double g = line[0] ? strtod(line, NULL) : 0;
			if (g > 0 && g >= c->bw[0].value) {
				x->value = g;
				snprintf(x->source, sizeof(x->source),
					 "port rate of %.63s port %d (sysfs ports/%d/rate: "
					 "\"%.100s\")",
					 vi.device, vi.port, vi.port, line);
				x->have = 1;
			}
		}
#endif
		return;
	}
	x->have = isfinite(x->value) && x->value > 0;
	if (!x->have && x->spread)
		fprintf(stderr,
			"dmreplay calibrate: %s measured %.3f (not positive: below "
			"the clock's resolution?); copied from %s instead\n",
			nm, x->value, bm->name);
}

/* The profile's "device" section: backend, device, firmware, host, kernel
 * and the link (MTU, rate; verbs: port, GID, limits). */
static json_t *device_json(cal_t *c, int sim, int verbs)
{
#ifndef DMR_HAVE_VERBS
	(void)verbs;
#endif
	json_t *dev = json_object(), *link = json_object();
	json_object_set_new(dev, "backend", json_string(c->o.t.backend));
	json_object_set_new(dev, "description", json_string(c->s.desc));
	json_object_set_new(link, "mtu", c->s.mtu ? json_integer(c->s.mtu) : json_null());
	if (sim) {
		const dmr_model_t *sm = c->s.model;
		json_object_set_new(dev, "name", json_string("sim"));
		json_object_set_new(dev, "profile", json_string(sm->name));
		json_object_set_new(dev, "profile_path", json_string(sm->path));
		json_object_set_new(dev, "firmware", json_null());
		json_object_set_new(link, "rate_gbps", jreal(sm->link_gbps));
	} else {
		json_object_set_new(dev, "name", json_string(c->o.t.backend));
		json_object_set_new(dev, "firmware", json_null());
		json_object_set_new(link, "rate", json_null());
#ifdef DMR_HAVE_VERBS
		if (verbs) {
			dmr_verbs_info_t vi;
			dmr_verbs_info(c->s.be, &vi);
			char p[300], line[128];
			json_object_set_new(dev, "name", json_string(vi.device));
			json_object_set_new(dev, "port", json_integer(vi.port));
			json_object_set_new(dev, "gid_index", json_integer(vi.gid_index));
			json_object_set_new(dev, "ip", json_string(vi.ip));
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/fw_ver", vi.device);
			dmr_cal_read_line(p, line, sizeof(line));
			json_object_set_new(dev, "firmware",
					    line[0] ? json_string(line) : json_null());
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/hca_type", vi.device);
			dmr_cal_read_line(p, line, sizeof(line));
			if (line[0])
				json_object_set_new(dev, "hca_type", json_string(line));
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%d/rate", vi.device,
				 vi.port);
			dmr_cal_read_line(p, line, sizeof(line));
			json_object_set_new(link, "rate",
					    line[0] ? json_string(line) : json_null());
			json_object_set_new(link, "max_rd_atomic", json_integer(vi.max_rd_atomic));
			json_object_set_new(link, "sq_depth", json_integer(vi.sq_depth));
		}
#endif
	}
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct utsname un;
	json_object_set_new(dev, "host", json_string(host));
	if (uname(&un) == 0)
		json_object_set_new(dev, "kernel", json_string(un.release));
	json_object_set_new(dev, "link", link);
	return dev;
}

dmr_status_t dmr_cal_profile_json(cal_t *c, const dmr_model_t *bm, json_t *base_params,
				  json_t *checks, json_t **root_p, dmr_err_t *err)
{
	char src[512], sess[200];
	snprintf(sess, sizeof(sess), "dmreplay calibrate on %s", c->s.desc);
	meas_t me[sizeof(cal_params) / sizeof(cal_params[0])];
	memset(me, 0, sizeof(me));
	const int sim = c->s.driven && c->s.model != NULL;
	int verbs = strcmp(c->o.t.backend, "verbs") == 0;
	for (size_t i = 0; i < sizeof(cal_params) / sizeof(cal_params[0]); i++)
		param_measured(c, bm, cal_params[i].name, sess, sim, verbs, &me[i]);

	json_t *root = json_object(), *params = json_object();
	char name[96], date[32], desc[1024];
	if (c->o.name)
		snprintf(name, sizeof(name), "%s", c->o.name);
	else if (sim)
		snprintf(name, sizeof(name), "calibrated-sim-%s", c->profile_name);
	else if (c->o.t.device)
		snprintf(name, sizeof(name), "calibrated-%s-%s", c->o.t.backend, c->o.t.device);
	else
		snprintf(name, sizeof(name), "calibrated-%s", c->o.t.backend);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(desc, sizeof(desc),
		 "Measured by `dmreplay calibrate` on %s, %s. Values with estimate=false were "
		 "measured (or read from the device); estimate=true values were copied from "
		 "the base profile %s because they cannot be measured from a compute node. "
		 "nic_proc_ns and dma_gbps are derived by the loader from read_rtt_ns and "
		 "read_bw_64k_gbps. docs/CALIBRATION.md explains every field.",
		 c->s.desc, date, bm->name);
	json_object_set_new(root, "name", json_string(name));
	json_object_set_new(root, "description", json_string(desc));
	json_object_set_new(root, "date", json_string(date));

	json_object_set_new(root, "device", device_json(c, sim, verbs));
	json_t *meas = measured_json(c), *copied = json_object();
	json_object_set_new(meas, "base", json_string(bm->name));
	json_object_set_new(meas, "base_path", json_string(bm->path));

	for (size_t i = 0; i < sizeof(cal_params) / sizeof(cal_params[0]); i++) {
		const char *nm = cal_params[i].name;
		if (me[i].have) {
			int est = c->host_cpus && is_loopback_latency(nm) && !sim;
			json_t *p = param_json(me[i].value, cal_params[i].integer,
					       cal_params[i].unit, est, me[i].source);
			if (me[i].spread)
				json_object_set_new(p, "spread", spread_json(me[i].spread));
			json_object_set_new(params, nm, p);
			continue;
		}
		if (is_host_param(nm))
			continue;
		json_t *bp = json_object_get(base_params, nm);
		if (!bp && (strcmp(nm, "txn_begin_ns") == 0 || strcmp(nm, "txn_op_ns") == 0))
			continue; /* optional, absent in the base: not modelled */
		json_t *bv = json_is_object(bp) ? json_object_get(bp, "value") : bp;
		if (!json_is_number(bv)) {
			json_decref(root);
			json_decref(params);
			json_decref(meas);
			json_decref(copied);
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "base profile %s: parameter %s has no value to copy",
					   bm->path, nm);
		}
		const char *unit = json_string_value(json_object_get(bp, "unit"));
		snprintf(src, sizeof(src), "copied from %s: not measurable from the CN", bm->name);
		json_t *p = param_json(json_number_value(bv), cal_params[i].integer,
				       unit ? unit : cal_params[i].unit, 1, src);
		/* the base's own provenance, kept beside (the loader allows only
		 * value, unit, source, estimate, spread in a parameter) */
		json_t *prov = json_object();
		json_t *bs = json_object_get(bp, "source"), *be = json_object_get(bp, "estimate");
		json_object_set_new(prov, "from", json_string(bm->name));
		json_object_set(prov, "source", json_is_string(bs) ? bs : json_null());
		json_object_set(prov, "estimate", json_is_boolean(be) ? be : json_null());
		json_object_set_new(copied, nm, prov);
		json_object_set_new(params, nm, p);
	}
	if (c->refining) { /* fit runs: the idle latency does not matter */
		json_object_set_new(params, "nic_proc_ns",
				    param_json(0, 0, "ns", 1, "0 while host_* are fitted"));
	} else if (c->rtt_short > 0) {
		/* the loader cannot derive it (the parts exceed read_rtt_ns):
		 * the profile says so, and the self-check fails read_rtt_ns */
		snprintf(src, sizeof(src),
			 "0: not derivable: the other parts of the idle 64 B READ, measured "
			 "apart, exceed read_rtt_ns by %.1f ns even with host_read_ns 0 (the "
			 "host's load changed between phases); calibrate again on a quieter host",
			 c->rtt_short);
		json_object_set_new(params, "nic_proc_ns", param_json(0, 0, "ns", 1, src));
	}
	json_object_set_new(root, "params", params);
	json_object_set_new(meas, "copied", copied);
	if (checks)
		json_object_set(meas, "sim_check", checks);
	json_object_set_new(
	    meas, "settings",
	    json_pack("{s:s, s:s?, s:s?, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f}",
		      "backend", c->o.t.backend, "profile", c->o.t.profile, "device", c->o.t.device,
		      "quick", c->o.quick, "repetitions", (int)c->o.reps, "lat_iters",
		      (int)c->o.lat_iters, "bw_iters", (int)c->o.bw_iters, "rate_iters",
		      (int)c->o.rate_iters, "atomic_iters", (int)c->o.atomic_iters, "qps",
		      (int)c->o.qps, "doorbell_k", (int)c->o.batch, "poll_reps",
		      (int)c->o.poll_reps, "max_run_s", c->o.max_s, "wall_s", c->wall_s));
	/* the host's load around each round (hostload.h): a profile measured
	 * on a loaded host says so */
	json_t *hl = json_array();
	uint32_t loaded = 0;
	for (uint32_t r = 0; r < c->rounds; r++) {
		const dmr_hostload_t *h = &c->hl[r];
		loaded += h->loaded;
		json_array_append_new(
		    hl, h->known ? json_pack("{s:i, s:o, s:o, s:o, s:b}", "round", (int)r + 1,
					     "other", jreal(h->other), "steal", jreal(h->steal),
					     "loadavg1", jreal(h->loadavg1), "loaded", h->loaded)
				 : json_pack("{s:i, s:n}", "round", (int)r + 1, "other"));
	}
	json_object_set_new(meas, "host_load",
			    json_pack("{s:f, s:i, s:i, s:b, s:o}", "limit", DMR_HOSTLOAD_LIMIT,
				      "rounds", (int)c->rounds, "loaded_rounds", (int)loaded,
				      "sampled", c->hl_sampled, "per_round", hl));
	json_object_set_new(root, "measured", meas);
	*root_p = root;
	return DMR_OK;
}

dmr_status_t dmr_cal_write_profile(cal_t *c, const dmr_model_t *bm, json_t *base_params,
				   const char *path, json_t *checks, dmr_err_t *err)
{
	json_t *root;
	dmr_status_t st = dmr_cal_profile_json(c, bm, base_params, checks, &root, err);
	if (st != DMR_OK)
		return st;
	int rc = json_dump_file(root, path, CAL_JSON_FLAGS);
	json_decref(root);
	if (rc != 0)
		return dmr_err_set(err, DMR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	return DMR_OK;
}
