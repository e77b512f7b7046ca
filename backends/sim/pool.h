/*
 * backends/sim/pool.h - one MN's bytes while its initial image is written
 * lazily (DMR_BE_CTL_LAZY_INIT, backends/backend.h; docs/MODEL.md "The
 * MN's bytes").
 *
 * The region is cut into DMR_SIM_POOL_PAGE-byte pages. A page no WRITE or
 * atomic has reached holds its initial image, which the caller's init
 * computes (into a READ's buffer: never stored); the first WRITE or
 * atomic on a page stores it in the next slot of the pool, an anonymous
 * mapping of huge pages filled in order, with the image written first.
 * So the records a run writes, wherever they lie in a region of GiBs,
 * cost no 4 KiB page fault each (about 3 us apiece on this project's
 * machines, docs/PERFORMANCE.md "MN memory") nor a TLB entry each. When
 * something needs the region raw, dmr_sim_pool_flatten writes the whole
 * image into it and the pool is gone.
 *
 * Offsets are bytes into the MN region; callers check that a range lies
 * inside the region (the sim's REM_ACCESS_ERR comes first). No wall
 * clock, no randomness: the stored bytes are a function of the WRs.
 */
#ifndef DMR_SIM_POOL_H
#define DMR_SIM_POOL_H

#include <stdint.h>

#include "../backend.h"

/* A record written stores this much. TPC-C extreme, 200 k transactions, 4
 * x 28 x 3 (a 5.2 GB region, random records of 48 to 64 B): max RSS 153 /
 * 162 / 182 MB with 256 B / 512 B / 1 KiB pages (4 KiB: 269 MB), CPU the
 * same within the noise (paired, 3 rounds); the map costs 4 B per page,
 * 40 MB of address space there, touched where the run goes. */
#define DMR_SIM_POOL_SHIFT 9
#define DMR_SIM_POOL_PAGE (1ull << DMR_SIM_POOL_SHIFT)

typedef struct dmr_sim_pool {
	uint32_t *pmap;	     /* per page, 1 + its slot, 0: its initial image;
				NULL: not in use (the region is raw) */
	uint8_t *slots;	     /* the stored pages (size bytes reserved) */
	uint64_t used;	     /* slots taken */
	uint64_t size;	     /* the region's bytes */
	uint32_t mn;	     /* passed to init */
	dmr_be_init_fn init; /* the initial image's writer */
	void *arg;
} dmr_sim_pool_t;

/* Take a pool for MN mn's region of size bytes whose initial image init
 * writes (backend.h dmr_be_init_fn). DMR_ERR_NOMEM (p unchanged, not in
 * use) when the map or the pool's address space cannot be had, or the
 * region has 2^32 pages or more. */
dmr_status_t dmr_sim_pool_init(dmr_sim_pool_t *p, uint64_t size, uint32_t mn, dmr_be_init_fn init,
			       void *arg);
/* Release it (a pool not in use: nothing). */
void dmr_sim_pool_fini(dmr_sim_pool_t *p);

static inline int dmr_sim_pool_on(const dmr_sim_pool_t *p)
{
	return p->pmap != NULL;
}

/* Page pg's stored bytes, or NULL while it holds its initial image. */
static inline uint8_t *dmr_sim_pool_page(const dmr_sim_pool_t *p, uint64_t pg)
{
	uint32_t k = p->pmap[pg];
	return k ? p->slots + ((uint64_t)(k - 1) << DMR_SIM_POOL_SHIFT) : NULL;
}

/* Store page pg (not stored yet): the next slot, the image written into
 * it. Returns its bytes. */
uint8_t *dmr_sim_pool_store(dmr_sim_pool_t *p, uint64_t pg);

/* Bytes [off, off + len) into out; pages not stored are computed. */
void dmr_sim_pool_read(const dmr_sim_pool_t *p, uint64_t off, uint64_t len, uint8_t *out);
/* 1 when a page holding a byte of [off, off + len) is stored (a WRITE or
 * an atomic reached it), 0 when the range holds its initial image. */
int dmr_sim_pool_stored(const dmr_sim_pool_t *p, uint64_t off, uint64_t len);

/* in into bytes [off, off + len), storing the pages it reaches. */
void dmr_sim_pool_write(dmr_sim_pool_t *p, uint64_t off, uint64_t len, const uint8_t *in);

/* Where the 8-byte word at off (8-aligned) is stored; its page is stored
 * first if it is not. */
static inline uint8_t *dmr_sim_pool_word(dmr_sim_pool_t *p, uint64_t off)
{
	uint8_t *pg = dmr_sim_pool_page(p, off >> DMR_SIM_POOL_SHIFT);
	if (!pg)
		pg = dmr_sim_pool_store(p, off >> DMR_SIM_POOL_SHIFT);
	return pg + (off & (DMR_SIM_POOL_PAGE - 1));
}

/* The whole image into mem, the raw region (size bytes, untouched: zero):
 * stored pages copied, the others' image written in place by one init
 * call per run of them (touching only the pages that have one); then
 * dmr_sim_pool_fini. */
void dmr_sim_pool_flatten(dmr_sim_pool_t *p, uint8_t *mem);

#endif /* DMR_SIM_POOL_H */
