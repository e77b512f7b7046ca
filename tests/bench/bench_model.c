/*
 * tests/bench/bench_model.c - print the sim model's figures next to the
 * published ones (issue #2 "Model sanity"); scripts/bench-model runs it.
 */
#include <stdio.h>

#include "helpers/sim_probe.h"

int main(void)
{
	dmr_model_t m;
	dmr_err_t err;
	if (dmr_model_load("cx6dx-100g", &m, &err) != DMR_OK) {
		fprintf(stderr, "bench-model: %s\n", err.msg);
		return 1;
	}
	printf("bench-model: profile %s\n", m.name);
	double rtt = dmr_probe_idle_read_ps(64);
	printf("  idle 64 B READ round trip     %8.1f ns   (profile %.1f ns, %+.2f %%)\n",
	       rtt / 1e3, m.read_rtt_ns, 100 * (rtt / 1e3 - m.read_rtt_ns) / m.read_rtt_ns);
	const unsigned mtus[] = {256, 512, 1024, 2048, 4096};
	for (int i = 0; i < 5; i++) {
		double g = dmr_probe_read_stream_gbps(mtus[i], 65536, 16, 3000);
		double ceil = m.link_gbps * mtus[i] / (mtus[i] + 82.0);
		printf(
		    "  64 KiB READ, 16 outstanding, MTU %4u  %6.2f Gb/s (wire ceiling %6.2f)%s\n",
		    mtus[i], g, ceil, mtus[i] == 4096 ? "  [target 93..96; ib_read_bw 94.65]" : "");
	}
	double want = 0;
	double cas = dmr_probe_same_addr_cas_mops(4, 16, 20000, &want);
	printf("  same-address CAS stream       %8.3f Mops/s (profile %.3f, %+.2f %%)\n", cas, want,
	       100 * (cas - want) / want);
	double w4 = dmr_probe_write_ps(4u << 20);
	printf("  one 4 MiB WRITE               %8.1f us   (serialisation at %.0f Gb/s: %.1f us)\n",
	       w4 / 1e6, m.link_gbps, (4u << 20) * 8 / (m.link_gbps * 1e3));
	return 0;
}
