/*
 * backends/sim/pool.c - see pool.h.
 */
#include "pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

dmr_status_t dmr_sim_pool_init(dmr_sim_pool_t *p, uint64_t size, uint32_t mn, dmr_be_init_fn init,
			       void *arg)
{
	uint64_t pages = (size + DMR_SIM_POOL_PAGE - 1) >> DMR_SIM_POOL_SHIFT;
	if (pages >= UINT32_MAX)
		return DMR_ERR_NOMEM;
	void *slots = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (slots == MAP_FAILED)
		return DMR_ERR_NOMEM;
	uint32_t *pm = calloc(pages, sizeof(*pm));
	if (!pm) {
		munmap(slots, size);
		return DMR_ERR_NOMEM;
	}
	/* filled in order from its start: huge pages waste nothing here (on
	 * the region they would zero 2 MiB per record a sparse table
	 * touches) */
	madvise(slots, size, MADV_HUGEPAGE);
	*p = (dmr_sim_pool_t){.pmap = pm,
			      .slots = slots,
			      .used = 0,
			      .size = size,
			      .mn = mn,
			      .init = init,
			      .arg = arg};
	return DMR_OK;
}

void dmr_sim_pool_fini(dmr_sim_pool_t *p)
{
	if (!p->pmap)
		return;
	free(p->pmap);
	munmap(p->slots, p->size);
	p->pmap = NULL;
	p->slots = NULL;
}

/* Bytes of page pg (the last one may be short). */
static inline uint64_t page_len(const dmr_sim_pool_t *p, uint64_t pg)
{
	uint64_t off = pg << DMR_SIM_POOL_SHIFT;
	return p->size - off < DMR_SIM_POOL_PAGE ? p->size - off : DMR_SIM_POOL_PAGE;
}

uint8_t *dmr_sim_pool_store(dmr_sim_pool_t *p, uint64_t pg)
{
	uint8_t *b = p->slots + (p->used << DMR_SIM_POOL_SHIFT);
	p->pmap[pg] = (uint32_t)++p->used;
	p->init(p->arg, p->mn, pg << DMR_SIM_POOL_SHIFT, page_len(p, pg), b);
	return b;
}

void dmr_sim_pool_read(const dmr_sim_pool_t *p, uint64_t off, uint64_t len, uint8_t *out)
{
	for (uint64_t o = off, end = off + len; o < end;) {
		uint64_t pg = o >> DMR_SIM_POOL_SHIFT, pe = (pg + 1) << DMR_SIM_POOL_SHIFT;
		const uint8_t *b = dmr_sim_pool_page(p, pg);
		if (!b) { /* a run of pages never stored: their image in one call */
			while (pe < end && !p->pmap[pe >> DMR_SIM_POOL_SHIFT])
				pe += DMR_SIM_POOL_PAGE;
		}
		uint64_t k = (pe < end ? pe : end) - o;
		if (b) {
			memcpy(out, b + (o & (DMR_SIM_POOL_PAGE - 1)), k);
		} else {
			memset(out, 0, k);
			p->init(p->arg, p->mn, o, k, out);
		}
		out += k;
		o += k;
	}
}

int dmr_sim_pool_stored(const dmr_sim_pool_t *p, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	for (uint64_t pg = off >> DMR_SIM_POOL_SHIFT, end = (off + len - 1) >> DMR_SIM_POOL_SHIFT;
	     pg <= end; pg++)
		if (p->pmap[pg])
			return 1;
	return 0;
}

void dmr_sim_pool_write(dmr_sim_pool_t *p, uint64_t off, uint64_t len, const uint8_t *in)
{
	for (uint64_t o = off, end = off + len; o < end;) {
		uint64_t pg = o >> DMR_SIM_POOL_SHIFT, pe = (pg + 1) << DMR_SIM_POOL_SHIFT;
		uint64_t k = (pe < end ? pe : end) - o;
		uint8_t *b = dmr_sim_pool_page(p, pg);
		if (!b)
			b = dmr_sim_pool_store(p, pg);
		memcpy(b + (o & (DMR_SIM_POOL_PAGE - 1)), in, k);
		in += k;
		o += k;
	}
}

void dmr_sim_pool_flatten(dmr_sim_pool_t *p, uint8_t *mem)
{
	if (!p->pmap)
		return;
	const uint64_t n = (p->size + DMR_SIM_POOL_PAGE - 1) >> DMR_SIM_POOL_SHIFT;
	for (uint64_t pg = 0; pg < n;) {
		uint64_t off = pg << DMR_SIM_POOL_SHIFT;
		const uint8_t *b = dmr_sim_pool_page(p, pg);
		if (b) {
			memcpy(mem + off, b, page_len(p, pg));
			pg++;
			continue;
		}
		uint64_t q = pg + 1; /* a run of pages never stored: one call */
		while (q < n && !p->pmap[q])
			q++;
		uint64_t end =
		    q << DMR_SIM_POOL_SHIFT < p->size ? q << DMR_SIM_POOL_SHIFT : p->size;
		p->init(p->arg, p->mn, off, end - off, mem + off);
		pg = q;
	}
	dmr_sim_pool_fini(p);
}
