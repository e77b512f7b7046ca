/*
 * scripts/peer/simgrid_verbs.cpp - the peer of scripts/bench-sim in SimGrid
 * S4U (scripts/bench-peer builds it with `pkg-config simgrid`): the same
 * message pattern as the reference shape, 4 CN hosts x 28 threads x 3
 * contexts = 336 actors, each issuing one verb at a time to one MN host:
 * two 64 B READs (MN -> CN) then one 8 B atomic (CN -> MN), repeated. Each
 * verb is one SimGrid communication (Comm::sendto, one-sided: no receiver
 * actor), the cheapest way to move it in SimGrid, so the comparison favours
 * SimGrid: dmreplay models a request and a response, the NIC pipeline,
 * PCIe, QP credits and the MN's memory for each verb.
 *
 * Platform: a full zone; every host with its own 100 Gb/s link (latency
 * 0.5 us, the order of a CX-6 Dx port: models/cx6dx-100g.json) to a
 * non-blocking switch; the route CN -> MN crosses the CN's link and the
 * MN's link.
 *
 *   simgrid_verbs [VERBS_PER_ACTOR]     (default 3000: 1,008,000 verbs)
 *
 * Prints one line: "simgrid: N verbs, S s simulated, C s CPU (user+sys),
 * W s wall, R M verbs per CPU-second".
 */
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace sg4 = simgrid::s4u;

static long verbs_per_actor = 3000;
static long done_verbs = 0;

static void context(sg4::Host *cn, sg4::Host *mn)
{
	for (long k = 0; k < verbs_per_actor; k++) {
		if (k % 3 == 2)
			sg4::Comm::sendto(cn, mn, 8); /* atomic: 8 B */
		else
			sg4::Comm::sendto(mn, cn, 64); /* READ: 64 B back */
		done_verbs++;
	}
}

static double cpu_s()
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
	sg4::Engine e(&argc, argv);
	if (argc > 1)
		verbs_per_actor = std::atol(argv[1]);
	const int cns = 4, actors_per_cn = 28 * 3;
	auto *zone = sg4::create_full_zone("dm");
	sg4::Host *mn = zone->create_host("mn", "1Gf");
	sg4::Link *mnl = zone->create_link("mn-link", "100Gbps")->set_latency("0.5us");
	mnl->seal();
	std::vector<sg4::Host *> cn;
	for (int i = 0; i < cns; i++) {
		sg4::Host *h = zone->create_host("cn" + std::to_string(i), "1Gf");
		sg4::Link *l = zone->create_link("cn-link" + std::to_string(i), "100Gbps")
				   ->set_latency("0.5us");
		l->seal();
		zone->add_route(h->get_netpoint(), mn->get_netpoint(), nullptr, nullptr,
				{sg4::LinkInRoute(l), sg4::LinkInRoute(mnl)}, true);
		cn.push_back(h);
	}
	zone->seal();
	for (int i = 0; i < cns; i++)
		for (int a = 0; a < actors_per_cn; a++)
			sg4::Actor::create("ctx" + std::to_string(i) + "." + std::to_string(a),
					   cn[i], context, cn[i], mn);
	double c0 = cpu_s();
	auto w0 = std::chrono::steady_clock::now();
	e.run();
	double cpu = cpu_s() - c0;
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
	std::printf("simgrid: %ld verbs, %.6f s simulated, %.3f s CPU (user+sys), %.3f s wall, "
		    "%.3f M verbs per CPU-second\n",
		    done_verbs, sg4::Engine::get_clock(), cpu, wall, done_verbs / cpu / 1e6);
	return done_verbs == (long)cns * actors_per_cn * verbs_per_actor ? 0 : 1;
}
