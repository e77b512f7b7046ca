/*
 * backends/sim/qpc.h - the NIC's QP-context cache (issue 16).
 *
 * A NIC keeps the contexts of recently used QPs on chip; a message whose QP
 * is not cached waits while the context is fetched from host memory over
 * PCIe. With many active QPs (CNs x threads x MNs) the small-message rate
 * falls well below the NIC's peak: on ConnectX-6, 32 threads issuing 64 B
 * READs reach 83 M/s over 32 QPs, 55 M/s over 64, 42 M/s over 512 and
 * 21 M/s over 4096 (g4197/codebase, tests/think/scalability.cpp, comment
 * block at e5d42db; shared/docs/PUBLISHED.md R7).
 *
 * Model: per NIC, a set-associative cache of `qps` contexts in `ways`-way
 * sets with LRU replacement inside a set; QP q maps to set
 * ((q * 0x9E3779B1 mod 2^32) * sets) >> 32, a multiplicative (Fibonacci)
 * hash, so consecutive QP numbers spread over the sets. The way array of a set is kept in recency
 * order (most recent first). Deterministic: no randomness, no time.
 * Capacity, associativity and the miss cost come from the profile
 * (qpc_qps, qpc_ways, qpc_miss_ns; models/model.h); NVIDIA does not
 * publish the cache's size, so the profiles' values are estimates.
 */
#ifndef DMR_SIM_QPC_H
#define DMR_SIM_QPC_H

#include <stdint.h>
#include <stdlib.h>

typedef struct dmr_sim_qpc {
	uint32_t *tag; /* sets x ways: QP + 1, 0 = empty; way 0 most recent */
	uint32_t sets, ways;
	uint64_t hits, misses;
} dmr_sim_qpc_t;

/* Allocate a cache of qps contexts in ways-way sets (ways divides qps;
 * models/model.c checks). Returns 0, or -1 when out of memory (c is then
 * empty and dmr_sim_qpc_free is still safe). */
static inline int dmr_sim_qpc_init(dmr_sim_qpc_t *c, uint32_t qps, uint32_t ways)
{
	c->sets = qps / ways;
	c->ways = ways;
	c->hits = c->misses = 0;
	c->tag = calloc((size_t)qps, sizeof(*c->tag));
	return c->tag ? 0 : -1;
}

static inline void dmr_sim_qpc_free(dmr_sim_qpc_t *c)
{
	free(c->tag);
	c->tag = NULL;
}

/* Touch QP q: 1 if its context was cached (a hit), 0 if it was fetched
 * (a miss; it evicts its set's least recently used context). */
static inline int dmr_sim_qpc_touch(dmr_sim_qpc_t *c, uint32_t q)
{
	uint32_t set = (uint32_t)(((uint64_t)(q * 0x9E3779B1u) * c->sets) >> 32);
	uint32_t *t = c->tag + (size_t)set * c->ways, key = q + 1, w = 0;
	while (w < c->ways && t[w] != key)
		w++;
	int hit = w < c->ways;
	if (!hit)
		w = c->ways - 1; /* the LRU way */
	for (; w > 0; w--)
		t[w] = t[w - 1];
	t[0] = key;
	if (hit)
		c->hits++;
	else
		c->misses++;
	return hit;
}

#endif /* DMR_SIM_QPC_H */
