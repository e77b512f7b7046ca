/*
 * replay/tools/bench_perftest.c - perftest's figures and table for
 * `dmreplay bench` (bench.h has the definitions): the peak bandwidth's
 * minimum time per WR, the latency statistics of print_report_lat, the
 * heading and the result table as ib_read_bw / ib_read_lat print them.
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/timeps.h"
#include "bench_impl.h"

/* min over i <= j of (tc[j] - tp[i]) / (j - i + 1), exactly, by Dinkelbach's
 * iteration: g(t) = min (tc[j] - tp[i] - t (j - i + 1)) is found in one pass
 * for a given t (best i for each j = argmax of tp[i] - t i); the pair that
 * attains it gives a smaller ratio until g(t) = 0. */
double dmr_bench_min_per_wr_ps(const uint64_t *tp, const uint64_t *tc, uint64_t n)
{
	double t = (double)(tc[n - 1] - tp[0]) / (double)n;
	for (int it = 0; it < 200; it++) {
		double best = 0, maxa = -INFINITY;
		uint64_t ai = 0, bi = 0, bj = 0;
		int found = 0;
		for (uint64_t j = 0; j < n; j++) {
			double a = (double)tp[j] - t * (double)j;
			if (a > maxa) {
				maxa = a;
				ai = j;
			}
			double g = (double)tc[j] - t * (double)(j + 1) - maxa;
			if (g < best) {
				best = g;
				bi = ai;
				bj = j;
				found = 1;
			}
		}
		if (!found)
			break;
		double nt = (double)(tc[bj] - tp[bi]) / (double)(bj - bi + 1);
		if (!(nt < t))
			break;
		t = nt;
	}
	return t;
}

/* perftest print_report_lat over tposted deltas. */
void dmr_bench_lat_stats(const uint64_t *tp, uint64_t iters, dmr_bench_result_t *r)
{
	size_t m = (size_t)iters - 1;
	double *d = malloc(m * sizeof(*d));
	if (!d) {
		r->t_min_us = r->t_max_us = r->t_typical_us = r->t_avg_us = r->t_stdev_us =
		    r->t_p99_us = r->t_p999_us = NAN;
		return;
	}
	for (size_t i = 0; i < m; i++)
		d[i] = dmr_ps_to_us(tp[i + 1] - tp[i]);
	gsl_sort(d, 1, m);
	size_t keep = m > BENCH_LAT_TAIL + 1 ? m - BENCH_LAT_TAIL : m;
	double median = (keep - 1) % 2 ? (d[keep / 2] + d[keep / 2 - 1]) / 2 : d[keep / 2];
	double avg = gsl_stats_mean(d, 1, keep);
	size_t i99 = (size_t)ceil(keep * 0.99), i999 = (size_t)ceil(keep * 0.999);
	r->t_min_us = d[0];
	r->t_max_us = d[keep < m ? keep : m - 1];
	r->t_typical_us = median;
	r->t_avg_us = avg;
	r->t_stdev_us = gsl_stats_sd_with_fixed_mean(d, 1, keep, avg); /* population, as perftest */
	r->t_p99_us = d[i99 < m ? i99 : m - 1];
	r->t_p999_us = d[i999 < m ? i999 : m - 1];
	free(d);
}

#define RULE                                                                                       \
	"---------------------------------------------------------------------------------------"  \
	"\n"

/* perftest_parameters.h (linux-rdma/perftest, commit 00b55b6): RESULT_FMT,
 * RESULT_FMT_G, RESULT_FMT_LAT, RESULT_FMT_LAT_DUR and the row formats
 * REPORT_FMT, REPORT_FMT_LAT, REPORT_FMT_LAT_DUR, verbatim. */
#define PT_RESULT_FMT                                                                              \
	" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]"
#define PT_RESULT_FMT_G                                                                            \
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
#define PT_RESULT_FMT_LAT                                                                          \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "    \
	"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
#define PT_RESULT_FMT_LAT_DUR " #bytes        #iterations       t_avg[usec]    tps average"
#define PT_REPORT_FMT " %-7lu    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t     %-7.6lf"
#define PT_REPORT_FMT_LAT                                                                          \
	" %-7lu %" PRIu64                                                                          \
	"          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t"             \
	"%-7.2f \t\t%-7.2f"
#define PT_REPORT_FMT_LAT_DUR " %-7lu       %" PRIu64 "            %-7.2f        %-7.2f"

void dmr_bench_table_head(FILE *f, const dmr_bench_spec_t *sp, int gbits)
{
	fputs(RULE, f);
	if (sp->latency)
		fputs(sp->duration_s > 0 ? PT_RESULT_FMT_LAT_DUR : PT_RESULT_FMT_LAT, f);
	else
		fputs(gbits ? PT_RESULT_FMT_G : PT_RESULT_FMT, f);
	fputs("\n", f);
}

void dmr_bench_table_row(FILE *f, const dmr_bench_spec_t *sp, const dmr_bench_result_t *r,
			 int gbits)
{
	unsigned long bytes = bench_is_atomic(sp->opcode) ? 8ul : sp->size;
	if (sp->latency && sp->duration_s > 0) {
		/* print_report_lat_duration: the span over the iterations (READ and
		 * atomics: rtt_factor 1; our WRITE is not a ping-pong, also 1) */
		double us = dmr_ps_to_us(dmr_ps_from_s(r->seconds));
		fprintf(f, PT_REPORT_FMT_LAT_DUR "\n", bytes, r->iters, us / (double)r->iters,
			(double)r->iters / r->seconds);
	} else if (sp->latency) {
		fprintf(f, PT_REPORT_FMT_LAT "\n", bytes, r->iters, r->t_min_us, r->t_max_us,
			r->t_typical_us, r->t_avg_us, r->t_stdev_us, r->t_p99_us, r->t_p999_us);
	} else {
		/* print_report_bw: format_factor 0x100000 (MiB/s) or 125000000
		 * (Gb/s) bytes per second per unit */
		double k = gbits ? 1.0 : 125e6 / 1048576.0;
		double peak = isnan(r->bw_peak_gbps) ? 0 : r->bw_peak_gbps * k;
		fprintf(f, PT_REPORT_FMT "\n", bytes, r->iters, peak, r->bw_avg_gbps * k,
			r->msg_rate_mpps);
	}
}

void dmr_bench_table_foot(FILE *f)
{
	fputs(RULE, f);
}

void dmr_bench_print(const dmr_bench_spec_t *sp, const dmr_bench_result_t *r, void *file)
{
	dmr_bench_table_head(file, sp, 1);
	dmr_bench_table_row(file, sp, r, 1);
	dmr_bench_table_foot(file);
}

void dmr_bench_print_header(FILE *f, const dmr_bench_session_t *s, const dmr_bench_spec_t *sp,
			    uint32_t cq_mod, uint32_t post_list)
{
	static const char *const names[] = {"RDMA_Read", "RDMA_Write", "Atomic CAS", "Atomic FAA"};
	fputs(RULE, f);
	fprintf(f, "                    %s %s Test (dmreplay bench)\n", names[sp->opcode],
		sp->latency ? "Latency" : "BW");
	fprintf(f, " Backend         : %s\n", s->desc);
	fprintf(f, " Number of qps   : %u\n", sp->qps);
	fprintf(f, " Outstanding     : %u WR%s, one signaled WR in %u, %u WR%s per post%s\n",
		sp->depth, sp->depth == 1 ? "" : "s", cq_mod, post_list, post_list == 1 ? "" : "s",
		bench_is_atomic(sp->opcode) && !sp->cycle_buffer
		    ? (sp->same_addr ? "; one 8-byte word" : "; 512 distinct 8-byte words")
		    : "");
	if (sp->cycle_buffer) {
		uint64_t inc = 0, n = dmr_bench_cycle_slots(sp, &inc);
		fprintf(f,
			" Addresses       : perftest's cycle buffer of %u bytes: %llu slot%s of "
			"%llu bytes%s\n",
			sp->cycle_buffer, (unsigned long long)n, n == 1 ? "" : "s",
			(unsigned long long)inc, sp->same_addr ? " (remote: one 8-byte word)" : "");
	}
	fprintf(f, " Time            : %s\n",
		s->driven ? "simulated (dmr_be_now of the worker)"
			  : "dmr_be_now (verbs: the TSC, rate measured against CLOCK_MONOTONIC)");
}

/* perftest's options (perftest_parameters.c, parser_long_options and the
 * getopt string) that dmreplay bench does not take, with why. */
static const struct {
	char s; /* short letter, 0: long only */
	const char *l;
	const char *why;
} pt_unsup[] = {
    {'b', "bidirectional",
     "one-sided WRs go from the CN to the MN only; the MN posts nothing back"},
    {'m', "mtu", "the verbs backend uses the port's active MTU (sim: --mtu)"},
    {'c', "connection", "RC only (the transaction core's QPs)"},
    {'o', "outs", "the verbs backend asks max_rd_atomic 16 for every QP"},
    {'I', "inline_size", "inline data is perftest's default: WRITE only, up to the device's"},
    {'R', "rdma_cm", "the verbs backend always connects through rdma_cm"},
    {'z', "comm_rdma_cm", "the verbs backend always connects through rdma_cm"},
    {'e', "events", "completions are polled"},
    {'N', "noPeak", "BW peak is computed for one QP (0.00 with several)"},
    {'u', "qp-timeout", NULL},
    {'S', "sl", NULL},
    {'X', "vector", NULL},
    {'g', "mcg", NULL},
    {'T', "tos", NULL},
    {'L', "hop_limit", NULL},
    {'M', "MGID", NULL},
    {'r', "rx-depth", "one-sided WRs post no receives"},
    {'V', "version", NULL},
    {'C', "report-cycles", NULL},
    {'H', "report-histogrm", NULL},
    {'U', "report-unsorted", NULL},
    {'O', "dualport", NULL},
    {'f', "margin", "-D measures the whole duration"},
    {'w', "limit_bw", NULL},
    {'y', "limit_msgrate", NULL},
    {'W', "report-counters", NULL},
    {'B', "source_mac", NULL},
    {'E', "dest_mac", NULL},
    {'J', "dest_ip", NULL},
    {'j', "source_ip", NULL},
    {'K', "dest_port", NULL},
    {'k', "source_port", NULL},
    {'Y', "ethertype", NULL},
    {'v', "mac_fwd", NULL},
    {'G', "use_rss", NULL},
    {0, "run_infinitely", NULL},
    {0, "use-srq", NULL},
    {0, "report-both", NULL},
    {0, "reversed", NULL},
    {0, "tcp", NULL},
    {0, "output", NULL},
    {0, "cpu_util", NULL},
    {0, "out_json", NULL},
    {0, "out_json_file", NULL},
    {0, "perform_warm_up", NULL},
    {0, "use_hugepages", NULL},
    {0, "odp", NULL},
    {0, "ipv6", NULL},
    {0, "latency_gap", NULL},
    {0, "retry_count", NULL},
    {0, "flows", NULL},
    {0, "mr_per_qp", NULL},
    {0, "use_cuda", NULL},
    {0, "use_rocm", NULL},
    {0, "use_old_post_send", NULL},
    {0, "data_validation", NULL},
    {0, "rate_limit", NULL},
    {0, "dlid", NULL},
    {0, "pkey_index", NULL},
    {0, "write_with_imm", NULL},
    {0, "send_with_imm", NULL},
    {0, "dont_xchg_versions", NULL},
};

int dmr_bench_pt_refuse(int optopt_ch, const char *arg)
{
	for (size_t i = 0; i < sizeof(pt_unsup) / sizeof(pt_unsup[0]); i++) {
		int hit = 0;
		if (optopt_ch && pt_unsup[i].s == optopt_ch)
			hit = 1;
		else if (!optopt_ch && arg && arg[0] == '-' && arg[1] == '-') {
			size_t n = strcspn(arg + 2, "=");
			hit = strlen(pt_unsup[i].l) == n && strncmp(arg + 2, pt_unsup[i].l, n) == 0;
		}
		if (!hit)
			continue;
		char name[48];
		if (pt_unsup[i].s)
			snprintf(name, sizeof(name), "-%c/--%s", pt_unsup[i].s, pt_unsup[i].l);
		else
			snprintf(name, sizeof(name), "--%s", pt_unsup[i].l);
		fprintf(stderr, "dmreplay bench: option %s: perftest's %s is not supported%s%s\n",
			optopt_ch ? (char[3]){'-', (char)optopt_ch, 0} : arg, name,
			pt_unsup[i].why ? ": " : "", pt_unsup[i].why ? pt_unsup[i].why : "");
		return 1;
	}
	return 0;
}
