/*
 * replay/tools/calibrate_check.c - what `dmreplay calibrate` prints: every
 * measurement with its spread, the fits, and the measurements beside the
 * profile's own values: on sim the self-check (PASS/FAIL against the
 * tolerance, also kept in the profile's measured.sim_check), elsewhere
 * beside the base profile for information.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "../../models/model.h"
#include "../../core/base/timeps.h"
#include "calibrate_impl.h"

static void print_summ(const cal_t *c, const char *label, const summ_t *s, const char *unit,
		       int prec)
{
	char cut[64] = "";
	if (s->done && !c->s.driven && c->o.max_s > 0) {
		uint64_t lo = UINT64_MAX;
		for (uint32_t i = 0; i < s->n; i++)
			lo = s->done[i] < lo ? s->done[i] : lo;
		snprintf(cut, sizeof(cut), ", >= %" PRIu64 " WRs", lo);
	}
	printf("  %-34s %10.*f %-7s (stdev %.*f, min %.*f, max %.*f, %u reps%s)\n", label, prec,
	       s->value, unit, prec, s->stdev, prec, s->min, prec, s->max, s->n, cut);
}

/* The host's load per round and the verdict on it (hostload.h). */
static void print_host_load(const cal_t *c)
{
	if (!c->hl_sampled) {
		printf("host load: not sampled (simulated time does not depend on it)\n");
		return;
	}
	uint32_t loaded = 0;
	printf("host load per round (other = busy share of the host's CPU in a %d ms quiet "
	       "window before the round, steal over the round; loaded above %.0f %%):\n",
	       DMR_HOSTLOAD_IDLE_MS, 100 * DMR_HOSTLOAD_LIMIT);
	for (uint32_t r = 0; r < c->rounds; r++) {
		char hb[96];
		dmr_hostload_format(&c->hl[r], hb, sizeof(hb));
		printf("  round %-3u %s\n", r + 1, hb);
		loaded += c->hl[r].loaded;
	}
	if (loaded)
		printf("WARNING: %u of %u rounds ran on a loaded host: the medians below include "
		       "them; measure again on a quiet host before trusting the profile\n",
		       loaded, c->rounds);
	else
		printf("host quiet in every round\n");
}

void dmr_cal_print_results(const cal_t *c)
{
	print_host_load(c);
	if (!c->s.driven && c->o.max_s > 0)
		printf("(each run stops posting %.2f s after its first post, --max-run-s; the WRs "
		       "completed are given per line and in the profile's iterations_done)\n",
		       c->o.max_s);
	static const char *const opn[2] = {"READ", "WRITE"};
	for (int o = 0; o < 2; o++) {
		printf("%s latency vs size (depth 1; t_typical, median of %u x %" PRIu64
		       " iterations):\n",
		       opn[o], c->o.reps, c->o.lat_iters);
		printf("     bytes  t_typical[ns]     stdev       min       max   t_avg[ns]  "
		       "99%%[ns]   fit[ns]\n");
		for (int k = 0; k < CAL_NSIZES; k++) {
			const summ_t *s = &c->lat[o][k];
			printf("  %8u  %13.1f %9.1f %9.1f %9.1f %11.1f %9.1f %9.1f\n", c->sizes[k],
			       s->value, s->stdev, s->min, s->max, c->lat_avg[o][k].value,
			       c->lat_p99[o][k].value, c->fit_c[o] + c->fit_m[o] * c->sizes[k]);
		}
		printf("  fit: latency = %.1f ns + %.5f ns/B x bytes (std. errors %.1f, %.5f; "
		       "residual rms %.1f ns)\n",
		       c->fit_c[o], c->fit_m[o], sqrt(c->fit_cov00[o]), sqrt(c->fit_cov11[o]),
		       sqrt(c->fit_sumsq[o] / CAL_NSIZES));
	}
	printf("Bandwidth, 64 KiB, %u outstanding, %" PRIu64 " iterations:\n", CAL_BW_DEPTH,
	       c->o.bw_iters);
	print_summ(c, "READ  BW average", &c->bw[0], "Gb/s", 2);
	print_summ(c, "READ  BW peak", &c->bw_peak[0], "Gb/s", 2);
	print_summ(c, "WRITE BW average", &c->bw[1], "Gb/s", 2);
	print_summ(c, "WRITE BW peak", &c->bw_peak[1], "Gb/s", 2);
	printf("8 B READ message rate vs outstanding depth (%" PRIu64 " iterations):\n",
	       c->o.rate_iters);
	for (int k = 0; k < CAL_NDEPTHS; k++) {
		char l[40];
		snprintf(l, sizeof(l), "depth %2u", dmr_cal_depths[k]);
		print_summ(c, l, &c->rate[k], "Mpps", 3);
	}
	printf("8 B WRITE and CAS message rate at depth %u, one QP:\n",
	       dmr_cal_depths[CAL_NDEPTHS - 1]);
	print_summ(c, "WRITE", &c->rate_w, "Mpps", 3);
	print_summ(c, "CAS distinct addresses", &c->rate_cas, "Mpps", 3);
	printf("Atomics, %u QPs x %u outstanding, %" PRIu64 " per QP:\n", c->o.qps,
	       CAL_ATOMIC_DEPTH, c->o.atomic_iters);
	print_summ(c, "CAS distinct addresses", &c->atom[0][0], "Mops/s", 3);
	print_summ(c, "CAS one address", &c->atom[0][1], "Mops/s", 3);
	print_summ(c, "FAA distinct addresses", &c->atom[1][0], "Mops/s", 3);
	print_summ(c, "FAA one address", &c->atom[1][1], "Mops/s", 3);
	printf("Doorbell: one post of %u 8 B WRITEs vs %u single posts (CPU time of the posts, "
	       "clock cost %.1f ns subtracted):\n",
	       c->o.batch, c->o.batch, c->clock_ns);
	print_summ(c, "batch of k", &c->db_batch, "ns", 1);
	print_summ(c, "k single posts", &c->db_single, "ns", 1);
	print_summ(c, "per doorbell", &c->db_doorbell, "ns", 1);
	print_summ(c, "per WQE", &c->db_wqe, "ns", 1);
	printf("Poll:\n");
	print_summ(c, "poll returning one completion", &c->poll_one, "ns", 1);
	print_summ(c, "empty poll", &c->poll_empty, "ns", 1);
	if (c->poll_late)
		printf("  (%u of %u polls found no completion yet: left out)\n", c->poll_late,
		       c->o.poll_reps);
	if (c->host_cpus) {
		printf("Software NIC: %u host CPUs (%s); CPU per WR beyond post and poll,\n"
		       "from the one-QP depth-%u streams:\n",
		       c->host_cpus, c->host_cpus_src, dmr_cal_depths[CAL_NDEPTHS - 1]);
		printf("  %-34s %10.1f ns\n", "READ", c->h_read);
		printf("  %-34s %10.1f ns\n", "READ finding its CPU busy", c->h_switch);
		printf("  %-34s %10.1f ns  (16 READs: %.1f ns in one doorbell, %.1f ns single)\n",
		       "of READ: per doorbell", c->h_read_post, c->rd_batch.value,
		       c->rd_single.value);
		printf("  %-34s %10.1f ns\n", "WRITE", c->h_write);
		printf("  %-34s %10.1f ns\n", "CAS/FAA", c->h_atomic);
		printf("  %-34s %10.3f ns/B\n", "per payload byte", c->h_byte);
	}
	if (c->eng_have) {
		printf("Replay engine CPU on shm (1 x 1; per attempt: ns, operations, completions, "
		       "fit error; %.1f ns per clock read):\n",
		       c->eng_clock_ns);
		for (uint32_t i = 0; i < c->eng_n; i++)
			printf("  %-12s %10.1f ns %7.1f ops %5.2f completions  %+6.1f %%\n",
			       c->eng_trace[i], c->eng_t[i], c->eng_ops[i], c->eng_db[i],
			       100 * c->eng_resid[i]);
		printf("  %-34s %10.1f ns\n", "per transaction (txn_begin)", c->eng_begin);
		printf("  %-34s %10.1f ns\n", "per operation (txn_op)", c->eng_op);
		printf("  %-34s %10.1f ns\n", "per completion (txn_logic)", c->eng_logic);
	}
}

static int print_checks(const cal_check_t *ck, int n, double tol, const char *against, int verdict)
{
	int fails = 0, scaled = 0;
	printf("%-34s %12s %12s %10s %s\n", "parameter", against, "measured", "diff",
	       verdict ? "result" : "");
	for (int i = 0; i < n; i++) {
		double rel = dmr_cal_check_rel(&ck[i]);
		const char *res = "";
		if (verdict) {
			res = ck[i].skip	 ? "SKIP (MTU overridden)"
			      : fabs(rel) <= tol ? "PASS"
						 : "FAIL";
			fails += !ck[i].skip && !(fabs(rel) <= tol);
		}
		printf("%-34s %12.3f %12.3f %+9.2f %%%s %s\n", ck[i].param, ck[i].profile,
		       ck[i].measured, rel, ck[i].scale > 0 ? "*" : " ", res);
		scaled += ck[i].scale > 0;
	}
	if (scaled)
		printf("(* the difference as a share of the time per WR of the stream the cost "
		       "is fitted from)\n");
	return fails;
}

int dmr_cal_self_check(cal_t *c, const dmr_model_t *bm, int sim, json_t **checks_p)
{
	const cal_opts_t *o = &c->o;
	/* beside the profile (sim: verdict) or the base (other backends: information) */
	const dmr_model_t *cm = sim ? c->s.model : bm;
	int mtu_changed = sim && c->s.mtu != c->profile_mtu;
	/* software NIC: the multi-QP atomic rates are bounded by the host CPUs
	 * as well as by the unit: expected min(unit, min(K, qps) x the one-QP
	 * CAS rate measured in this run) */
	double au = cm->atomic_addr_mops, ag = cm->atomic_global_mops;
	/* every atomic passes the global unit too (ev_mn_arrive): one address
	 * runs at no more than either unit */
	au = au < ag ? au : ag;
	if (sim && cm->host_cpus && c->cpu_bound_mops > 0) {
		au = au < c->cpu_bound_mops ? au : c->cpu_bound_mops;
		ag = ag < c->cpu_bound_mops ? ag : c->cpu_bound_mops;
	}
	double t_read =
	    c->rate[CAL_NDEPTHS - 1].value > 0 ? 1e3 / c->rate[CAL_NDEPTHS - 1].value : 0;
	double t_write = c->rate_w.value > 0 ? 1e3 / c->rate_w.value : 0;
	double t_cas = c->rate_cas.value > 0 ? 1e3 / c->rate_cas.value : 0;
	cal_check_t ck[] = {
	    {"read_rtt_ns", cm->read_rtt_ns, c->lat[0][3].value, 0, 0},
	    {"read_bw_64k_gbps", cm->read_bw_64k_gbps, c->bw[0].value, mtu_changed, 0},
	    {"atomic_addr_mops (CAS one address)", au, c->atom[0][1].value, 0, 0},
	    {"atomic_addr_mops (FAA one address)", au, c->atom[1][1].value, 0, 0},
	    {"atomic_global_mops (CAS distinct)", ag, c->atom[0][0].value, 0, 0},
	    {"atomic_global_mops (FAA distinct)", ag, c->atom[1][0].value, 0, 0},
	    {"post_doorbell_ns", dmr_ps_to_ns(cm->post_doorbell_ps), c->db_doorbell.value, 0, 0},
	    {"post_wqe_ns", dmr_ps_to_ns(cm->post_wqe_ps), c->db_wqe.value, 0, 0},
	    {"poll_ns", dmr_ps_to_ns(cm->poll_ps), c->poll_one.value, 0, 0},
	    /* software NIC only (nck below leaves them out otherwise); the
	     * per-WR costs against the time per WR of the stream each is fitted
	     * from, as the sim ran it here (dmr_cal_check_rel) */
	    {"host_read_ns (8 B READ stream)",
	     dmr_ps_to_ns(cm->host_read_ps + cm->host_read_post_ps), c->h_read_fit, 0, t_read},
	    {"host_read_ns + host_switch_ns",
	     dmr_ps_to_ns(cm->host_read_ps + cm->host_read_post_ps + cm->host_switch_ps),
	     c->h_read_fit + c->h_switch, 0, t_read},
	    {"host_write_ns (8 B WRITE stream)", dmr_ps_to_ns(cm->host_write_ps), c->h_write, 0,
	     t_write},
	    {"host_atomic_ns (8 B CAS stream)", dmr_ps_to_ns(cm->host_atomic_ps), c->h_atomic, 0,
	     t_cas},
	    /* ps x 1000 per byte to ns per byte */
	    {"host_byte_ns (64 KiB vs 8 B READ)", cm->host_ps_per_byte_x1000 / 1e6, c->h_byte,
	     mtu_changed, 0},
	    /* only when the profile has it (skipped: 0 against 0) */
	    {"host_read_post_ns (16 READs/doorbell)", dmr_ps_to_ns(cm->host_read_post_ps),
	     c->h_read_post, 0, t_read},
	};
	int nck = (int)(sizeof(ck) / sizeof(ck[0]));
	if (!(sim && cm->host_cpus && c->host_cpus && cm->host_read_post_ps))
		nck -= 1;
	if (!(sim && cm->host_cpus && c->host_cpus))
		nck -= 5;
	int fails = 0;
	if (sim) {
		printf("Sim against its own profile %s (tolerance %g %%):\n", cm->name, o->tol_pct);
		fails = print_checks(ck, nck, o->tol_pct, "profile", 1);
		json_t *checks_json = json_array();
		for (int i = 0; i < nck; i++) {
			double rel = dmr_cal_check_rel(&ck[i]) / 100;
			json_array_append_new(
			    checks_json,
			    json_pack("{s:s, s:o, s:o, s:o, s:s}", "param", ck[i].param, "profile",
				      jreal(ck[i].profile), "measured", jreal(ck[i].measured),
				      "rel_diff", jreal(rel), "result",
				      ck[i].skip		      ? "SKIP"
				      : fabs(rel) * 100 <= o->tol_pct ? "PASS"
								      : "FAIL"));
		}
		int nskip = 0;
		for (int i = 0; i < nck; i++)
			nskip += ck[i].skip;
		printf("%s: %d of %d values within %g %%\n", fails ? "FAIL" : "PASS",
		       nck - fails - nskip, nck - nskip, o->tol_pct);
		*checks_p = checks_json;
	} else {
		printf("Measured beside the base profile %s (information, no verdict):\n",
		       bm->name);
		print_checks(ck, nck, o->tol_pct, bm->name, 0);
		*checks_p = NULL;
	}
	return fails;
}
