/*
 * core/base/hash.h - the 64-bit finaliser of MurmurHash3 (fmix64, Austin
 * Appleby, MurmurHash3.cpp, public domain): a bijective mix of a 64-bit key,
 * used by the KV trace's block sets, the KV pool's block map, its content
 * pattern, the RPC checksum and the trace fingerprint. Deterministic, no
 * seed. Part of core/base (nothing of ours below).
 */
#ifndef DMR_BASE_HASH_H
#define DMR_BASE_HASH_H

#include <stdint.h>

static inline uint64_t dmr_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif /* DMR_BASE_HASH_H */
