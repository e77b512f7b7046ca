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

void dmr_bench_print(const dmr_bench_spec_t *sp, const dmr_bench_result_t *r, void *file)
{
	FILE *f = file;
	unsigned long bytes = bench_is_atomic(sp->opcode) ? 8ul : sp->size;
	fputs(RULE, f);
	if (sp->latency) {
		fprintf(f, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
			   "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
			   "percentile[usec] \n");
		fprintf(f,
			" %-7lu %-10" PRIu64
			"  %-7.2f        %-7.2f      %-7.2f          %-7.2f        "
			"%-7.2f         %-7.2f                %-7.2f\n",
			bytes, r->iters, r->t_min_us, r->t_max_us, r->t_typical_us, r->t_avg_us,
			r->t_stdev_us, r->t_p99_us, r->t_p999_us);
	} else {
		fprintf(f, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
			   "MsgRate[Mpps]\n");
		fprintf(f,
			" %-7lu    %-10" PRIu64
			"     %-7.2f            %-7.2f              %-7.6f\n",
			bytes, r->iters, r->bw_peak_gbps, r->bw_avg_gbps, r->msg_rate_mpps);
	}
	fputs(RULE, f);
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
