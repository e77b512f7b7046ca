/*
 * tests/integration/test_calibrate.c - `dmreplay calibrate` (replay/tools/calibrate.h).
 *
 * On sim the micro-benchmarks reproduce the profile they run on within 2 %
 * (read_rtt_ns, read_bw_64k_gbps, atomic_addr_mops, atomic_global_mops, and
 * the CPU costs), for cx6dx-100g and cx5-100g, and every check says PASS;
 * on a software-NIC profile (host_cpus > 0) it also fits host_read/write/
 * atomic_ns and host_byte_ns back within 2 % (14 checks; 15 with
 * host_read_post_ns, as rxe-qemu);
 * the profile written loads with dmr_model_load, every parameter carries
 * value, unit, source and estimate (measured ones with their spread, copied
 * ones marked estimate and "copied from <base>"), the measured section holds
 * the series and the fit, and a sim opened on the written profile gives the
 * same idle 64 B READ round trip as one on the original within 1 %. A
 * profile the sim cannot reproduce (its READ bandwidth above the wire at
 * MTU 256) makes calibrate print FAIL and exit 1; --mtu turns the bandwidth
 * check into SKIP; a failing run with -o FILE leaves FILE as it was and the
 * new profile in FILE.partial. shm (no link to calibrate) is refused, as is
 * --host-cpus on the sim. Bad options, -o included (empty, a directory, a
 * directory where no file can be created), exit 2 naming the option before
 * anything is measured.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/proc.h"
#include "helpers/suite.h"
#include "models/model.h"
#include "replay/tools/bench.h"
#include "replay/tools/calibrate.h"
#include "replay/tools/calibrate_impl.h"

static dmr_test_run_t calibrate(const char *arg0, ...)
{
	const char *a[64];
	int n = 0;
	a[n++] = "calibrate";
	va_list ap;
	va_start(ap, arg0);
	for (const char *s = arg0; s; s = va_arg(ap, const char *)) {
		ck_assert_int_lt(n, 63);
		a[n++] = s;
	}
	va_end(ap);
	a[n] = NULL;
	return dmr_test_call_mainv(dmr_calibrate_main, a);
}

static double param(json_t *root, const char *name)
{
	json_t *v =
	    json_object_get(json_object_get(json_object_get(root, "params"), name), "value");
	ck_assert_msg(json_is_number(v), "params.%s.value missing", name);
	return json_number_value(v);
}

static int g_nchecks = 9; /* checks calibrate_sim expects (14 with host_*) */

/* Run calibrate on sim with `profile`, quick; return the profile written. */
static json_t *calibrate_sim(const char *profile, const char *file, dmr_test_run_t *c_p)
{
	char out[256];
	dmr_test_path(out, sizeof(out), file);
	dmr_test_run_t c =
	    calibrate("--backend", "sim", "--profile", profile, "--quick", "-o", out, NULL);
	if (c.status != 0)
		fprintf(stderr, "calibrate %s: status %d\nstdout:\n%s\nstderr:\n%s\n", profile,
			c.status, c.out, c.err);
	ck_assert_msg(c.status == 0, "calibrate on %s: status %d (output above)", profile,
		      c.status);
	char want[64];
	snprintf(want, sizeof(want), "PASS: %d of %d values within 2 %%", g_nchecks, g_nchecks);
	ck_assert_msg(strstr(c.out, want) != NULL, "no '%s' in:\n%s", want, c.out);
	ck_assert_ptr_null(strstr(c.out, "FAIL"));
	json_error_t jerr;
	json_t *root = json_load_file(out, 0, &jerr);
	ck_assert_msg(root != NULL, "%s:%d: %s", out, jerr.line, jerr.text);
	if (c_p)
		*c_p = c;
	else
		dmr_test_run_free(&c);
	return root;
}

static void check_reproduces(const char *profile)
{
	dmr_model_t m;
	dmr_err_t err;
	ck_assert(dmr_model_load(profile, &m, &err) == DMR_OK);
	char file[80];
	snprintf(file, sizeof(file), "%s-cal.json", profile);
	json_t *root = calibrate_sim(profile, file, NULL);
	static const char *const names[] = {"read_rtt_ns", "read_bw_64k_gbps", "atomic_addr_mops",
					    "atomic_global_mops"};
	/* one address: every atomic also passes the global unit */
	const double want[] = {m.read_rtt_ns, m.read_bw_64k_gbps,
			       m.atomic_addr_mops < m.atomic_global_mops ? m.atomic_addr_mops
									 : m.atomic_global_mops,
			       m.atomic_global_mops};
	for (int i = 0; i < 4; i++) {
		double got = param(root, names[i]);
		ck_assert_msg(fabs(got - want[i]) <= 0.02 * want[i],
			      "%s %s: measured %.4f, profile %.4f", profile, names[i], got,
			      want[i]);
	}
	json_t *ck = json_object_get(json_object_get(root, "measured"), "sim_check");
	ck_assert_int_eq(json_array_size(ck), (size_t)g_nchecks);
	size_t i;
	json_t *e;
	json_array_foreach(ck, i, e)
	{
		ck_assert_str_eq(json_string_value(json_object_get(e, "result")), "PASS");
	}
	json_decref(root);
}

START_TEST(sim_reproduces_cx6dx)
{
	check_reproduces("cx6dx-100g");
}
END_TEST

START_TEST(sim_reproduces_cx5)
{
	check_reproduces("cx5-100g");
}
END_TEST

/* The shipped rxe profile (software NIC, fitted in the VM) reproduces
 * itself: 15 checks, host_* included, and host_read_post_ns (16 READs in
 * one doorbell against 16 single posts) within 2 %. */
START_TEST(sim_reproduces_rxe_qemu)
{
	dmr_model_t m;
	dmr_err_t err;
	ck_assert(dmr_model_load("rxe-qemu", &m, &err) == DMR_OK);
	ck_assert_msg(m.host_read_post_ps > 0, "rxe-qemu has no host_read_post_ns");
	g_nchecks = 15;
	check_reproduces("rxe-qemu");
	g_nchecks = 9;
}
END_TEST

/* A fitted host cost of 0 (CI, rxe in the VM: the WRITE stream ran faster
 * than post + poll, so host_write_ns was clamped to 0): the sim's refit of
 * its own stream is within 2 % of the stream's time per WR, and the check
 * passes, where 0 against a small refit used to be +inf % (and 0 against 0
 * nan %), a FAIL. */
START_TEST(sim_reproduces_zero_host_cost)
{
	json_error_t jerr;
	json_t *root = json_load_file(DMR_SOURCE_DIR "/models/rxe-qemu.json", 0, &jerr);
	ck_assert_ptr_nonnull(root);
	json_t *p = json_object_get(json_object_get(root, "params"), "host_write_ns");
	ck_assert_ptr_nonnull(p);
	json_object_set_new(p, "value", json_real(0));
	json_object_set_new(root, "name", json_string("rxe-write0"));
	char prof[256];
	dmr_test_path(prof, sizeof(prof), "rxe-write0.json");
	ck_assert_int_eq(json_dump_file(root, prof, JSON_INDENT(1)), 0);
	json_decref(root);
	dmr_test_run_t c;
	g_nchecks = 15;
	json_t *w = calibrate_sim(prof, "rxe-write0-cal.json", &c);
	g_nchecks = 9;
	const char *line = strstr(c.out, "\nhost_write_ns (8 B WRITE stream)");
	ck_assert_ptr_nonnull(line);
	const char *eol = strchr(line + 1, '\n');
	ck_assert(eol && memmem(line, (size_t)(eol - line), "%* PASS", 7));
	ck_assert_ptr_nonnull(strstr(c.out, "(* the difference as a share of the time per WR"));
	/* the refit stays near 0: under 2 % of the WRITE stream's time per WR */
	double t_w =
	    1e3 /
	    json_number_value(json_object_get(
		json_object_get(json_object_get(json_object_get(w, "measured"), "rate_8b_depth16"),
				"write"),
		"value"));
	ck_assert_msg(param(w, "host_write_ns") <= 0.02 * t_w, "host_write_ns %.1f of %.1f ns",
		      param(w, "host_write_ns"), t_w);
	dmr_test_run_free(&c);
	json_decref(w);
}
END_TEST

/* A software-NIC profile (cx6dx-100g with host_cpus 2 and host costs):
 * calibrate on the sim fits host_read/write/atomic_ns and host_byte_ns
 * back from the one-QP streams within 2 % (14 checks), and writes them
 * with unit, source ("fitted ...") and estimate false. */
START_TEST(sim_reproduces_host_profile)
{
	json_error_t jerr;
	json_t *root = json_load_file(DMR_SOURCE_DIR "/models/cx6dx-100g.json", 0, &jerr);
	ck_assert_ptr_nonnull(root);
	/* read_bw_64k_gbps as the CPU gives it: 64 KiB x 8 bit / (0.1 + 0.02 +
	 * 3 + 0.05 + 65536 x 0.002 us) */
	static const char *const hk[] = {"host_cpus",	    "host_read_ns", "host_write_ns",
					 "host_atomic_ns",  "host_byte_ns", "read_rtt_ns",
					 "read_bw_64k_gbps"};
	const double hv[] = {2, 3000, 1500, 2000, 2.0, 6000, 65536 * 8 / 134242.0};
	json_t *params = json_object_get(root, "params");
	for (int i = 0; i < 7; i++)
		json_object_set_new(params, hk[i],
				    json_pack("{s:f, s:s, s:s, s:b}", "value", hv[i], "unit",
					      dmr_model_param_unit(hk[i]), "source",
					      "tests/integration/test_calibrate.c", "estimate", 1));
	json_object_set_new(root, "name", json_string("host-test"));
	char prof[256];
	dmr_test_path(prof, sizeof(prof), "host-test.json");
	ck_assert_int_eq(json_dump_file(root, prof, JSON_INDENT(1)), 0);
	json_decref(root);
	g_nchecks = 14;
	json_t *w = calibrate_sim(prof, "host-cal.json", NULL);
	g_nchecks = 9;
	ck_assert_int_eq((int)param(w, "host_cpus"), 2);
	for (int i = 1; i < 5; i++) {
		double got = param(w, hk[i]);
		ck_assert_msg(fabs(got - hv[i]) <= 0.02 * hv[i], "%s: fitted %.4f, profile %.4f",
			      hk[i], got, hv[i]);
		json_t *p = json_object_get(json_object_get(w, "params"), hk[i]);
		ck_assert(json_is_false(json_object_get(p, "estimate")));
		ck_assert_msg(
		    strncmp(json_string_value(json_object_get(p, "source")), "fitted", 6) == 0,
		    "%s: source %s", hk[i], json_string_value(json_object_get(p, "source")));
	}
	json_decref(w);
}
END_TEST

/* idle 64 B READ on a sim with `profile`, perftest t_typical, ns */
static double sim_idle_read_ns(const char *profile)
{
	dmr_bench_target_t t = {.backend = "sim", .profile = profile, .gid_index = -1};
	dmr_bench_session_t s;
	dmr_err_t err;
	ck_assert_msg(dmr_bench_session_open(&s, &t, 1, 1u << 20, 1u << 16, &err) == DMR_OK, "%s",
		      err.msg);
	dmr_bench_spec_t sp = {
	    .opcode = DMR_WR_READ, .size = 64, .depth = 1, .iters = 100, .qps = 1, .latency = 1};
	dmr_bench_result_t r;
	ck_assert_msg(dmr_bench_run(&s, &sp, &r, &err) == DMR_OK, "%s", err.msg);
	dmr_bench_session_close(&s);
	return r.t_typical_us * 1e3;
}

START_TEST(written_profile_loads_and_predicts)
{
	json_t *root = calibrate_sim("cx6dx-100g", "p.json", NULL);
	json_decref(root);
	char path[256];
	dmr_test_path(path, sizeof(path), "p.json");
	dmr_model_t w, o;
	dmr_err_t err;
	ck_assert_msg(dmr_model_load(path, &w, &err) == DMR_OK, "%s", err.msg);
	ck_assert(dmr_model_load("cx6dx-100g", &o, &err) == DMR_OK);
	ck_assert_str_eq(w.name, "calibrated-sim-cx6dx-100g");
	double rw = dmr_model_read_rtt_ps(&w, 64) / 1e3, ro = dmr_model_read_rtt_ps(&o, 64) / 1e3;
	ck_assert_msg(fabs(rw - ro) <= 0.01 * ro, "modelled %.2f vs %.2f ns", rw, ro);
	double sw = sim_idle_read_ns(path), so = sim_idle_read_ns("cx6dx-100g");
	ck_assert_msg(fabs(sw - so) <= 0.01 * so,
		      "sim on the written profile %.2f ns, on cx6dx %.2f", sw, so);
	ck_assert_msg(fabs(sw - o.read_rtt_ns) <= 0.01 * o.read_rtt_ns, "%.2f vs read_rtt_ns %.1f",
		      sw, o.read_rtt_ns);
}
END_TEST

START_TEST(profile_fields)
{
	json_t *root = calibrate_sim("cx6dx-100g", "f.json", NULL);
	json_t *dev = json_object_get(root, "device");
	ck_assert_str_eq(json_string_value(json_object_get(dev, "backend")), "sim");
	ck_assert_str_eq(
	    json_string_value(json_object_get(json_object_get(root, "measured"), "base")),
	    "cx6dx-100g");
	regex_t re;
	ck_assert_int_eq(regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
				 REG_EXTENDED | REG_NOSUB),
			 0);
	const char *date = json_string_value(json_object_get(root, "date"));
	ck_assert_ptr_nonnull(date);
	ck_assert_msg(regexec(&re, date, 0, NULL, 0) == 0, "date '%s' is not UTC ISO 8601", date);
	regfree(&re);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(dev, "link"), "mtu")),
			 4096);
	ck_assert_ptr_nonnull(json_object_get(dev, "profile"));

	/* every parameter: value, unit, source, estimate */
	json_t *params = json_object_get(root, "params");
	const char *key;
	json_t *p;
	int n = 0;
	json_object_foreach(params, key, p)
	{
		n++;
		ck_assert_msg(json_is_number(json_object_get(p, "value")), "%s: value", key);
		ck_assert_msg(json_is_string(json_object_get(p, "unit")), "%s: unit", key);
		ck_assert_msg(json_is_string(json_object_get(p, "source")), "%s: source", key);
		ck_assert_msg(json_is_boolean(json_object_get(p, "estimate")), "%s: estimate", key);
		ck_assert_msg(strcmp(key, "nic_proc_ns") && strcmp(key, "dma_gbps"),
			      "%s is derived by the loader and must not be written", key);
	}
	ck_assert_int_eq(n, 16);
	static const char *const measured[] = {
	    "read_rtt_ns",	"read_bw_64k_gbps", "atomic_addr_mops", "atomic_global_mops",
	    "post_doorbell_ns", "post_wqe_ns",	    "poll_ns"};
	for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++) {
		p = json_object_get(params, measured[i]);
		ck_assert_msg(json_is_false(json_object_get(p, "estimate")), "%s", measured[i]);
		ck_assert_msg(
		    strncmp(json_string_value(json_object_get(p, "source")), "measured", 8) == 0,
		    "%s: source %s", measured[i], json_string_value(json_object_get(p, "source")));
		json_t *sp = json_object_get(p, "spread");
		ck_assert_msg(json_is_number(json_object_get(sp, "stdev")) &&
				  json_is_number(json_object_get(sp, "min")) &&
				  json_is_number(json_object_get(sp, "max")),
			      "%s: spread", measured[i]);
	}
	static const char *const copied[] = {"link_gbps",    "prop_ns",	     "switch_ns",
					     "txn_logic_ns", "nic_msg_mops", "dma_read_ns",
					     "dma_write_ns"};
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		p = json_object_get(params, copied[i]);
		ck_assert_msg(json_is_true(json_object_get(p, "estimate")), "%s", copied[i]);
		ck_assert_str_eq(json_string_value(json_object_get(p, "source")),
				 "copied from cx6dx-100g: not measurable from the CN");
		json_t *prov = json_object_get(
		    json_object_get(json_object_get(root, "measured"), "copied"), copied[i]);
		ck_assert_msg(json_is_string(json_object_get(prov, "source")),
			      "%s: the base's own source is not kept", copied[i]);
	}

	/* the measured section: series, fit, rates, costs */
	json_t *m = json_object_get(root, "measured");
	json_t *lat = json_object_get(m, "read_latency_vs_size");
	ck_assert_int_eq(json_array_size(json_object_get(lat, "points")), 14);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(lat, "sizes"), 0)), 8);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(lat, "sizes"), 13)),
			 65536);
	json_t *fit = json_object_get(lat, "fit");
	double c = json_number_value(json_object_get(fit, "c_ns"));
	double mb = json_number_value(json_object_get(fit, "m_ns_per_byte"));
	double rms = json_number_value(json_object_get(fit, "residual_rms_ns"));
	ck_assert_msg(c > 1500 && c < 2100 && mb > 0 && rms >= 0 && rms < 0.01 * c,
		      "fit c %.1f m %.5f rms %.2f", c, mb, rms);
	json_t *pt = json_array_get(json_object_get(lat, "points"), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(pt, "bytes")), 64);
	ck_assert_int_eq(
	    json_array_size(json_object_get(json_object_get(pt, "t_typical_ns"), "reps")), 3);
	ck_assert_ptr_nonnull(json_object_get(m, "write_latency_vs_size"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(m, "read_bw_64k"), "bw_average"));
	json_t *rate = json_object_get(m, "read_8b_rate_vs_depth");
	ck_assert_int_eq(json_array_size(json_object_get(rate, "depths")), 5);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(rate, "depths"), 4)),
			 16);
	ck_assert_int_eq(json_array_size(json_object_get(rate, "msg_rate")), 5);
	json_t *at = json_object_get(m, "atomics");
	ck_assert(json_object_get(at, "cas_distinct") && json_object_get(at, "cas_same") &&
		  json_object_get(at, "faa_distinct") && json_object_get(at, "faa_same"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(m, "doorbell"), "per_doorbell"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(m, "poll"), "one_completion"));
	json_decref(root);
}
END_TEST

static void write_variant(const char *name, const char *param_name, double value)
{
	json_error_t jerr;
	json_t *root = json_load_file(DMR_SOURCE_DIR "/models/cx6dx-100g.json", 0, &jerr);
	ck_assert_ptr_nonnull(root);
	json_object_set_new(root, "name", json_string(name));
	json_t *p = json_object_get(json_object_get(root, "params"), param_name);
	json_object_set_new(p, "value", json_integer((json_int_t)value));
	char path[256], file[96];
	snprintf(file, sizeof(file), "%s.json", name);
	dmr_test_path(path, sizeof(path), file);
	ck_assert_int_eq(json_dump_file(root, path, JSON_INDENT(2)), 0);
	json_decref(root);
}

START_TEST(unreproducible_profile_fails)
{
	/* read_bw_64k_gbps 94.65 cannot be carried by the wire at MTU 256 */
	write_variant("cx6dx-mtu256", "mtu", 256);
	char prof[256], out[256];
	dmr_test_path(prof, sizeof(prof), "cx6dx-mtu256.json");
	dmr_test_path(out, sizeof(out), "fail.json");
	dmr_test_run_t c = calibrate("--profile", prof, "--quick", "--reps", "1", "-o", out, NULL);
	if (c.status != 1)
		fprintf(stderr, "%s\n%s\n", c.out, c.err);
	ck_assert_msg(c.status == 1, "status %d (output above)", c.status);
	const char *line = strstr(c.out, "\nread_bw_64k_gbps");
	ck_assert_ptr_nonnull(line);
	const char *eol = strchr(line + 1, '\n');
	ck_assert(eol && memmem(line, (size_t)(eol - line), "FAIL", 4));
	ck_assert_ptr_nonnull(strstr(c.out, "\nFAIL: "));
	/* no old file: none created; the new profile (with the verdicts) kept
	 * as .partial */
	char part[300];
	snprintf(part, sizeof(part), "%s.partial", out);
	ck_assert_int_eq(access(out, F_OK), -1);
	ck_assert_int_eq(access(part, R_OK), 0);
	ck_assert_ptr_nonnull(strstr(c.err, "fail.json.partial"));
	dmr_test_run_free(&c);
	/* an existing file is left as it was */
	FILE *f = fopen(out, "w");
	ck_assert_ptr_nonnull(f);
	fputs("old\n", f);
	fclose(f);
	remove(part);
	c = calibrate("--profile", prof, "--quick", "--reps", "1", "-o", out, NULL);
	ck_assert_int_eq(c.status, 1);
	char buf[16] = "";
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "old\n");
	json_error_t jerr;
	json_t *pr = json_load_file(part, 0, &jerr);
	ck_assert_msg(pr != NULL, "%s: %s", part, jerr.text);
	json_decref(pr);
	dmr_test_run_free(&c);
	/* the tolerance as given: %g, not 0.0 */
	c = calibrate("--profile", "cx6dx-100g", "--tolerance", "0.001", "--quick", "--reps", "1",
		      NULL);
	ck_assert_ptr_nonnull(strstr(c.out, "within 0.001 %"));
	dmr_test_run_free(&c);

	/* an MTU override makes the bandwidth not comparable: SKIP, not FAIL */
	c = calibrate("--profile", "cx6dx-100g", "--mtu", "1024", "--quick", "--reps", "1", NULL);
	if (c.status != 0)
		fprintf(stderr, "%s\n%s\n", c.out, c.err);
	ck_assert_msg(c.status == 0, "status %d (output above)", c.status);
	ck_assert_ptr_nonnull(strstr(c.out, "SKIP (MTU overridden)"));
	ck_assert_ptr_nonnull(strstr(c.out, "PASS: 8 of 8"));
	dmr_test_run_free(&c);
}
END_TEST

/* shm has no link to calibrate; a successful run replaces an existing -o
 * FILE (written beside it and renamed) and leaves no temporary file. */
START_TEST(shm_refused_and_o_replaced)
{
	dmr_test_run_t c = calibrate("--backend", "shm", "--quick", NULL);
	ck_assert_int_eq(c.status, 2);
	ck_assert_ptr_nonnull(strstr(c.err, "shm has no link"));
	ck_assert_str_eq(c.out, "");
	dmr_test_run_free(&c);
	char sub[256], out[300];
	dmr_test_path(sub, sizeof(sub), "replace");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(out, sizeof(out), "%s/p.json", sub);
	FILE *f = fopen(out, "w");
	ck_assert_ptr_nonnull(f);
	fputs("old\n", f);
	fclose(f);
	c = calibrate("--profile", "cx6dx-100g", "--quick", "--reps", "1", "-o", out, NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	dmr_model_t m;
	dmr_err_t err;
	ck_assert_msg(dmr_model_load(out, &m, &err) == DMR_OK, "%s", err.msg);
	DIR *d = opendir(sub);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || strlen(e->d_name) > 2)
			n++;
	closedir(d);
	ck_assert_int_eq(n, 1); /* p.json only: no temp, probe or .partial */
	dmr_test_run_free(&c);
	/* -o as a bare file name: its temporary ".q.json.PID.N.tmp" is loaded
	 * back as a path, not taken for a profile's name (it was: "the profile
	 * written does not load", exit 1) */
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(sub), 0);
	c = calibrate("--profile", "cx6dx-100g", "--quick", "--reps", "1", "-o", "q.json", NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_ptr_null(strstr(c.out, "give it as --profile"));
	dmr_test_run_free(&c);
	/* without .json: how to name it (a bare name is a profile's name);
	 * an earlier failed run's FILE.partial goes; counts take suffixes */
	FILE *pf = fopen("q.partial", "w");
	ck_assert_ptr_nonnull(pf);
	fclose(pf);
	c = calibrate("--profile", "cx6dx-100g", "--quick", "--reps", "1", "--lat-iters", "1K",
		      "-o", "q", NULL);
	ck_assert_int_eq(access("q.partial", F_OK), -1);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_ptr_nonnull(strstr(c.out, "give it as --profile ./q: a bare name"));
	ck_assert_ptr_nonnull(strstr(c.out, "removed q.partial"));
	snprintf(out, sizeof(out), "%s/q.json", sub);
	ck_assert_msg(dmr_model_load(out, &m, &err) == DMR_OK, "%s", err.msg);
	dmr_test_run_free(&c);
}
END_TEST

/*
 * The software-NIC fit (calibrate_fit.c) on measurements whose idle 64 B
 * READ is shorter than its other parts measured apart (doorbell + WQE +
 * poll): on rxe under TCG the host's load changes between phases (CI,
 * 2026-12-07: "read_rtt_ns: 32770 ns is below the sum of the other path
 * components (40431 ns)", calibrate exit 1 with no profile). The fit must
 * finish, say by how much the idle READ is short, and write a profile that
 * loads (nic_proc_ns 0, marked); with an idle READ that leaves room, the
 * profile derives nic_proc_ns and models the idle READ as measured.
 */
typedef struct fit_out {
	double rtt_short, h_read, h_switch; /* ns, as fitted */
	double model_rtt, nic_proc;	    /* ns, of the profile written */
	double atomic_global;		    /* Mops/s, of the profile written */
} fit_out_t;

/* The fit on measurements of rxe-qemu's post and poll costs, an idle READ
 * of rtt_ns, and multi-QP atomic rates of atom_mops. */
static fit_out_t fit_measured_atom(double rtt_ns, double atom_mops)
{
	fit_out_t o;
	dmr_model_t bm;
	dmr_err_t err;
	ck_assert(dmr_model_load("rxe-qemu", &bm, &err) == DMR_OK);
	json_error_t jerr;
	json_t *base = json_load_file(bm.path, 0, &jerr);
	ck_assert_ptr_nonnull(base);
	cal_t *c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->o.t.backend = "shm"; /* no device to query; the fit is the same */
	c->o.t.gid_index = -1;
	c->o.host_cpus = 2;
	c->o.qps = 4;
	c->o.reps = 1;
	c->o.batch = 16;
	c->s.mr_size = (uint64_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	c->s.local_len = (size_t)CAL_BW_SIZE * CAL_BW_DEPTH;
	for (int k = 0; k < CAL_NSIZES; k++)
		c->sizes[k] = 8u << k;
	/* rxe-qemu's post and poll costs; streams 3 us per WR above them */
	const double D = 3366, W = 10905, P = 260, wr = D + W + P + 3000;
	c->db_doorbell.value = D;
	c->db_wqe.value = W;
	c->poll_one.value = P;
	c->lat[0][3].value = rtt_ns;
	c->rate[CAL_NDEPTHS - 1].value = 1e3 / wr;
	c->rate_w.value = 1e3 / wr;
	c->rate_cas.value = 1e3 / (wr + 1000);
	c->bw[0].value = CAL_BW_SIZE * 8.0 / (wr + 9.0 * CAL_BW_SIZE);
	c->rd_single.value = 16 * wr;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			c->atom[i][j].value = atom_mops;
	c->rd_batch.value = 16 * wr - 15 * (D + 2000);
	ck_assert_msg(dmr_cal_fit(c, &bm, json_object_get(base, "params"), 0, &err) == DMR_OK, "%s",
		      err.msg);
	o.rtt_short = c->rtt_short;
	o.h_read = c->h_read;
	o.h_switch = c->h_switch;
	char path[256];
	dmr_test_path(path, sizeof(path), "fit.json");
	ck_assert_msg(dmr_cal_write_profile(c, &bm, json_object_get(base, "params"), path, NULL,
					    &err) == DMR_OK,
		      "%s", err.msg);
	dmr_model_t m;
	ck_assert_msg(dmr_model_load(path, &m, &err) == DMR_OK, "%s", err.msg);
	o.model_rtt = dmr_model_read_rtt_ps(&m, 64) / 1e3;
	o.nic_proc = m.nic_proc_ps / 1e3;
	o.atomic_global = m.atomic_global_mops;
	free(c);
	json_decref(base);
	return o;
}

static fit_out_t fit_measured(double rtt_ns)
{
	return fit_measured_atom(rtt_ns, 0.05); /* Mops/s, below the CPUs' bound */
}

START_TEST(fit_idle_read_shorter_than_parts)
{
	/* room for everything: nic_proc_ns derived, the idle READ as measured,
	 * the READ stream's CPU all in host_read */
	fit_out_t ok = fit_measured(30000);
	ck_assert_double_eq(ok.rtt_short, 0);
	ck_assert_double_gt(ok.nic_proc, 0);
	ck_assert_double_eq_tol(ok.model_rtt, 30000, 1);
	ck_assert_double_gt(ok.h_read, 3000); /* 3 us per WR above post + poll */
	ck_assert_double_eq(ok.h_switch, 0);
	/* shorter than doorbell + WQE + poll alone (14,531 ns): host_read 0,
	 * its CPU moved to host_switch; the profile loads with nic_proc_ns 0
	 * and models the idle READ as its parts, short by rtt_short */
	fit_out_t sh = fit_measured(12000);
	ck_assert_double_eq(sh.h_read, 0);
	ck_assert_double_eq_tol(sh.h_switch, ok.h_read, 1);
	ck_assert_double_eq(sh.nic_proc, 0);
	ck_assert_double_gt(sh.rtt_short, 14531 - 12000);
	ck_assert_double_eq_tol(sh.model_rtt - 12000, sh.rtt_short, 1);
}
END_TEST

/* Four QPs' atomic rate below one QP's CAS stream (here 0.054 Mops/s) is
 * not the unit's (CI, 2026-12-07: 0.031 against 0.053 on rxe): copied
 * from the base, as a rate the host CPUs bound is; at 0.05 (within 10 %)
 * it is kept as measured. */
START_TEST(fit_atomic_below_one_qp)
{
	dmr_model_t bm;
	dmr_err_t err;
	ck_assert(dmr_model_load("rxe-qemu", &bm, &err) == DMR_OK);
	fit_out_t low = fit_measured_atom(30000, 0.031);
	ck_assert_double_eq_tol(low.atomic_global, bm.atomic_global_mops, 1e-9);
	fit_out_t ok = fit_measured_atom(30000, 0.05);
	ck_assert_double_eq_tol(ok.atomic_global, 0.05, 1e-9);
}
END_TEST

/* issue #15 D20: --progress shows the phases done (stderr is no terminal
 * here: nothing without it); issue 16 item 8: the stream phases run once per
 * round */
START_TEST(progress_line)
{
	char out[256];
	dmr_test_path(out, sizeof(out), "progress.json");
	dmr_test_run_t c = calibrate("--backend", "sim", "--profile", "cx6dx-100g", "--quick",
				     "--progress", "-o", out, NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	/* 8 phases in round 1, the 5 stream phases again in rounds 2 and 3
	 * (--quick: 3 rounds) */
	ck_assert_msg(strstr(c.err, "calibrate: 18/18 phases (100.0 %)") != NULL, "%s", c.err);
	dmr_test_run_free(&c);
	c = calibrate("--backend", "sim", "--profile", "cx6dx-100g", "--quick", "-o", out, NULL);
	ck_assert_msg(c.status == 0, "status %d: %s", c.status, c.err);
	ck_assert_msg(strstr(c.err, "phases (") == NULL, "%s", c.err);
	dmr_test_run_free(&c);
}
END_TEST

START_TEST(bad_options_refused)
{
	static const struct {
		const char *a[6];
		const char *want;
	} cases[] = {
	    {{"--device", "mlx5_0"}, "--device"},
	    {{"--backend", "shm", "--profile", "cx6dx-100g"}, "--profile"},
	    {{"--backend", "nosuch"}, "--backend"},
	    {{"--backend", "shm", "--mtu", "1024"}, "--mtu"},
	    {{"--mtu", "1000"}, "--mtu"},
	    {{"--profile", "no-such-profile"}, "--profile"},
	    {{"--base", "no-such-profile"}, "--base"},
	    {{"--qps", "0"}, "--qps"},
	    {{"--reps", "0"}, "--reps"},
	    {{"--batch", "1"}, "--batch"},
	    {{"--lat-iters", "x"}, "--lat-iters"},
	    {{"--tolerance", "0"}, "--tolerance"},
	    {{"-o", "/nonexistent-dir/p.json"}, "-o"},
	    {{"-o", ""}, "empty path"},
	    {{"-o", "/tmp"}, "is a directory"},
	    {{"-o", "/tmp/"}, "ends with '/', a directory's name"},
	    {{"-o", "/nonexistent-dir/"}, "ends with '/', a directory's name"},
	    {{"-o", "-"}, "a profile is written to a file"},
	    {{"--lat-iters", "2M"}, "--lat-iters"}, /* 2,097,152: above 1,000,000 */
	    {{"-o", "/sys/p.json"}, "cannot create a file in /sys"},
	    {{"-o", "/proc/p.json"}, "cannot create a file in /proc"},
	    {{"--backend", "shm"}, "shm has no link"},
	    {{"--backend", "sim", "--host-cpus", "1"}, "--host-cpus"},
	    {{"--frobnicate"}, "--frobnicate"},
	    {{"--output"}, "--output"},
	    {{"extra"}, "unexpected argument 'extra'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].a;
		dmr_test_run_t c = calibrate(a[0], a[1], a[2], a[3], a[4], a[5], NULL);
		ck_assert_msg(c.status == 2, "case %zu (%s): status %d, stderr: %s", i,
			      cases[i].want, c.status, c.err);
		ck_assert_msg(strstr(c.err, cases[i].want) != NULL,
			      "case %zu: stderr does not name '%s': %s", i, cases[i].want, c.err);
		ck_assert_msg(strstr(c.out, "Measurements took") == NULL, "case %zu measured", i);
		dmr_test_run_free(&c);
	}
	dmr_test_run_t c = calibrate("--help", NULL);
	ck_assert_int_eq(c.status, 0);
	ck_assert_ptr_nonnull(strstr(c.out, "usage: dmreplay calibrate"));
	dmr_test_run_free(&c);
}
END_TEST

int main(void)
{
	if (dmr_test_env_init("calibrate", 1, 0) != 0)
		return EXIT_FAILURE;
	Suite *s = suite_create("calibrate");
	TCase *tc = tcase_create("calibrate");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, sim_reproduces_cx6dx);
	tcase_add_test(tc, sim_reproduces_cx5);
	tcase_add_test(tc, sim_reproduces_host_profile);
	tcase_add_test(tc, sim_reproduces_rxe_qemu);
	tcase_add_test(tc, sim_reproduces_zero_host_cost);
	tcase_add_test(tc, written_profile_loads_and_predicts);
	tcase_add_test(tc, profile_fields);
	tcase_add_test(tc, unreproducible_profile_fails);
	tcase_add_test(tc, shm_refused_and_o_replaced);
	tcase_add_test(tc, fit_idle_read_shorter_than_parts);
	tcase_add_test(tc, fit_atomic_below_one_qp);
	tcase_add_test(tc, progress_line);
	tcase_add_test(tc, bad_options_refused);
	suite_add_tcase(s, tc);
	int rc = dmr_test_run(s);
	dmr_test_env_fini();
	return rc;
}
