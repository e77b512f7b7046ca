/*
 * replay/tools/recsim.c - `dmreplay replay-record` (recsim.h): the
 * recording read and matched, its posts replayed open-loop on the sim, and
 * the per-opcode-and-size latency table.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/backend.h"
#include "../../backends/record/record.h"
#include "../../core/base/timeps.h"
#include "../../core/base/wrid.h"
#include "../../models/model.h"
#include "recsim.h"
#include "tools_util.h"

#define NONE UINT64_MAX
#define MAX_GROUPS 256
#define SCAN_MAX 65536 /* entries a completion's wr_id is looked for past the head */

typedef struct rpost {
	uint64_t t_rec, done_rec; /* recorded post and completion, ps (done: NONE) */
	uint64_t t_sim, done_sim; /* on the sim */
	uint64_t remote, wr_id;
	uint32_t mn, length;
	uint8_t opcode, flags, st_rec, st_sim;
} rpost_t;

/* One worker's posts in its order, and per MN the indices of its posts. */
typedef struct rwk {
	rpost_t *p;
	size_t n, cap;
	size_t *by_mn[DMR_BE_MAX_MNS];
	size_t mn_n[DMR_BE_MAX_MNS], mn_cap[DMR_BE_MAX_MNS];
	size_t head[DMR_BE_MAX_MNS]; /* first not yet completed */
	size_t mn_posted[DMR_BE_MAX_MNS];
	size_t next; /* sim: next post to make */
	int waking;  /* sim: a timer is set */
} rwk_t;

typedef struct rs {
	uint32_t nw, mns;
	rwk_t *w;
	size_t unmatched_rec, unmatched_sim;
} rs_t;

static int push_post(rwk_t *w, const dmr_rec_event_t *e)
{
	if (w->n == w->cap) {
		size_t c = w->cap ? 2 * w->cap : 256;
		rpost_t *np = realloc(w->p, c * sizeof(*np));
		if (!np)
			return -1;
		w->p = np;
		w->cap = c;
	}
	uint32_t m = e->mn;
	if (w->mn_n[m] == w->mn_cap[m]) {
		size_t c = w->mn_cap[m] ? 2 * w->mn_cap[m] : 256;
		size_t *nb = realloc(w->by_mn[m], c * sizeof(*nb));
		if (!nb)
			return -1;
		w->by_mn[m] = nb;
		w->mn_cap[m] = c;
	}
	w->by_mn[m][w->mn_n[m]++] = w->n;
	w->p[w->n++] = (rpost_t){.t_rec = e->t_ps,
				 .done_rec = NONE,
				 .done_sim = NONE,
				 .remote = e->remote,
				 .wr_id = e->wr_id,
				 .mn = m,
				 .length = e->length,
				 .opcode = e->opcode,
				 .flags = e->aux};
	return 0;
}

/* The post a completion of worker w with wr_id completes: looked for from
 * the head of each MN's list (the hinted MN first) up to `lim[m]` posts;
 * the unsignaled posts before it on its MN are completed with it. */
static rpost_t *match(rwk_t *w, uint32_t mns, uint32_t hint, uint64_t wr_id, int sim)
{
	uint32_t h = hint < mns ? hint : 0;
	for (uint32_t k = 0; k <= mns; k++) {
		uint32_t m = k == 0 ? h : k - 1;
		if (k && m == h)
			continue;
		size_t lim = sim ? w->mn_posted[m] : w->mn_n[m];
		for (size_t i = w->head[m]; i < lim && i - w->head[m] < SCAN_MAX; i++) {
			rpost_t *p = &w->p[w->by_mn[m][i]];
			if (p->wr_id == wr_id) {
				w->head[m] = i + 1;
				return p;
			}
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double quant_us(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);
	i = i ? i - 1 : 0;
	return dmr_ps_to_us(v[i < n ? i : n - 1]);
}

typedef struct grp {
	uint8_t opcode;
	uint32_t size;
	uint64_t *meas, *sim;
	size_t n, cap;
} grp_t;

static grp_t *group_of(grp_t *g, size_t *ng, uint8_t opc, uint32_t size)
{
	for (size_t i = 0; i < *ng; i++)
		if (g[i].opcode == opc && g[i].size == size)
			return &g[i];
	if (*ng == MAX_GROUPS)
		return NULL;
	g[*ng] = (grp_t){.opcode = opc, .size = size};
	return &g[(*ng)++];
}

static int grp_add(grp_t *g, uint64_t meas, uint64_t sim)
{
	if (g->n == g->cap) {
		size_t c = g->cap ? 2 * g->cap : 256;
		uint64_t *a = realloc(g->meas, c * sizeof(*a));
		if (!a)
			return -1;
		g->meas = a;
		uint64_t *b = realloc(g->sim, c * sizeof(*b));
		if (!b)
			return -1;
		g->sim = b;
		g->cap = c;
	}
	g->meas[g->n] = meas;
	g->sim[g->n++] = sim;
	return 0;
}

static int cmp_grp(const void *a, const void *b)
{
	const grp_t *x = a, *y = b;
	if (x->opcode != y->opcode)
		return x->opcode < y->opcode ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Post worker w's WRs due at its clock (one recorded doorbell = one post)
 * and set a timer for the next. */
static dmr_status_t post_due(dmr_be_t *be, rs_t *rs, uint32_t wi, uint8_t *local, dmr_err_t *err)
{
	rwk_t *w = &rs->w[wi];
	static dmr_wr_t wrs[4096];
	uint64_t now = dmr_be_now(be, wi);
	while (w->next < w->n && w->p[w->next].t_rec <= now) {
		size_t first = w->next, k = 0;
		uint32_t mn = w->p[first].mn;
		do {
			rpost_t *p = &w->p[w->next];
			wrs[k++] = (dmr_wr_t){
			    .wr_id = p->wr_id,
			    .local = local,
			    .remote = p->remote,
			    .compare_add = p->opcode == DMR_WR_FAA,
			    .length = p->length,
			    .opcode = p->opcode,
			    .flags = p->flags & DMR_REC_F_SIGNALED ? DMR_WR_SIGNALED : 0};
			p->t_sim = now;
			w->mn_posted[mn]++;
			w->next++;
		} while (w->next < w->n && k < 4096 && (w->p[w->next].flags & DMR_REC_F_CONT) &&
			 w->p[w->next].mn == mn);
		dmr_status_t st = dmr_be_post(be, wi, mn, wrs, (uint32_t)k, err);
		if (st != DMR_OK)
			return st;
	}
	if (w->next < w->n && !w->waking) {
		w->waking = 1;
		if (dmr_be_timer(be, wi, w->p[w->next].t_rec, dmr_wrid(DMR_WRID_WAKE, wi, 0)) !=
		    DMR_OK)
			return dmr_err_set(err, DMR_ERR_NOMEM, "replay-record: sim timer refused");
	}
	return DMR_OK;
}

static dmr_status_t run_sim(const dmr_rec_t *rec, rs_t *rs, const char *profile, char *desc,
			    size_t desc_len, dmr_err_t *err)
{
	uint64_t top = 0, maxlen = 8;
	for (uint32_t wi = 0; wi < rs->nw; wi++)
		for (size_t i = 0; i < rs->w[wi].n; i++) {
			const rpost_t *p = &rs->w[wi].p[i];
			uint64_t e = p->remote + (p->length > 8 ? p->length : 8);
			if (e > top)
				top = e;
			if (p->length > maxlen)
				maxlen = p->length;
		}
	dmr_be_config_t cfg = {.backend = "sim",
			       .mns = rec->mns,
			       .cns = rec->cns,
			       .workers = rec->workers,
			       .mr_size = (top + 4095) / 4096 * 4096,
			       .seed = 1,
			       .profile = profile};
	if (!cfg.mr_size)
		cfg.mr_size = 4096;
	dmr_be_t *be = NULL;
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (st != DMR_OK)
		return st;
	const dmr_model_t *m = NULL;
	if (dmr_be_control(be, DMR_BE_CTL_MODEL, &m, NULL) == DMR_OK && m)
		snprintf(desc, desc_len, "sim (profile %s, MTU %u)", m->name, m->mtu);
	size_t llen = (size_t)(maxlen + 63) / 64 * 64;
	uint8_t **local = calloc(rs->nw, sizeof(*local));
	if (!local) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "replay-record: out of memory");
		goto out;
	}
	for (uint32_t wi = 0; wi < rs->nw && st == DMR_OK; wi++) {
		local[wi] = aligned_alloc(64, llen);
		if (!local[wi]) {
			st = dmr_err_set(err, DMR_ERR_NOMEM, "replay-record: out of memory");
			break;
		}
		memset(local[wi], 0, llen);
		st = dmr_be_mr_reg(be, wi, local[wi], llen, err);
	}
	for (uint32_t wi = 0; wi < rs->nw && st == DMR_OK; wi++) {
		rwk_t *w = &rs->w[wi];
		memset(w->head, 0, sizeof(w->head));
		st = post_due(be, rs, wi, local[wi], err);
	}
	dmr_wc_t wc[64];
	int wi;
	while (st == DMR_OK && (wi = dmr_be_progress(be, UINT64_MAX)) >= 0) {
		rwk_t *w = &rs->w[wi];
		int n = dmr_be_poll(be, (uint32_t)wi, wc, 64);
		uint64_t now = dmr_be_now(be, (uint32_t)wi);
		for (int i = 0; i < n; i++) {
			if (wc[i].opcode == DMR_WR_TIMER) {
				w->waking = 0;
				continue;
			}
			rpost_t *p = match(w, rs->mns, wc[i].mn, wc[i].wr_id, 1);
			if (!p) {
				rs->unmatched_sim++;
				continue;
			}
			p->done_sim = now;
			p->st_sim = wc[i].status;
		}
		st = post_due(be, rs, (uint32_t)wi, local[wi], err);
	}
out:
	if (local)
		for (uint32_t k = 0; k < rs->nw; k++)
			free(local[k]);
	free(local);
	dmr_be_close(be);
	return st;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dmreplay replay-record FILE [--profile P] [--tolerance PCT]\n\n"
		"Feed the WRs a record:INNER run logged (docs/RECORD.md) to the sim at their\n"
		"recorded post times and print, per opcode and size, the measured and the\n"
		"simulated latency (post to completion; p50, p90, p99) and the lowest\n"
		"percentile where they differ by more than the tolerance.\n\n"
		"  --profile P      sim hardware profile (default cx6dx-100g)\n"
		"  --tolerance PCT  relative difference taken as parting (default 10)\n"
		"Exit status: 0 done, 1 the sim failed, 2 bad options or a refused recording.\n");
}

int dmr_recsim_main(int argc, char **argv)
{
	enum { O_PROFILE = 256, O_TOL, O_HELP };
	static const struct option opts[] = {{"profile", required_argument, NULL, O_PROFILE},
					     {"tolerance", required_argument, NULL, O_TOL},
					     {"help", no_argument, NULL, O_HELP},
					     {NULL, 0, NULL, 0}};
	const char *profile = NULL;
	double tol = 10;
	dmr_err_t err;
	int ch;
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_PROFILE:
			profile = optarg;
			break;
		case O_TOL:
			if (dmr_opt_double("--tolerance", optarg, 0, 1000, DMR_OPT_LO_OPEN, &tol,
					   &err) != DMR_OK) {
				fprintf(stderr, "dmreplay replay-record: %s\n", err.msg);
				return 2;
			}
			break;
		case 'h':
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			dmr_tools_opt_error("replay-record", ch, argv);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "dmreplay replay-record: %s\n",
			optind >= argc ? "missing the recording FILE" : "one recording FILE only");
		usage(stderr);
		return 2;
	}
	const char *path = argv[optind];
	dmr_rec_t rec;
	if (dmr_rec_read(path, &rec, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay replay-record: %s\n", err.msg);
		return 2;
	}
	int rc = 1;
	rs_t rs = {.nw = rec.cns * rec.workers, .mns = rec.mns};
	grp_t *g = NULL;
	size_t ng = 0, posts = 0, comps = 0, other = 0;
	rs.w = calloc(rs.nw, sizeof(*rs.w));
	g = calloc(MAX_GROUPS, sizeof(*g));
	if (!rs.w || !g) {
		fprintf(stderr, "dmreplay replay-record: out of memory\n");
		goto out;
	}
	/* the measured pass: posts in each worker's order, completions matched */
	for (size_t i = 0; i < rec.n; i++) {
		const dmr_rec_event_t *e = &rec.ev[i];
		rwk_t *w = &rs.w[e->worker];
		if (e->type == DMR_REC_POST) {
			posts++;
			if (push_post(w, e) != 0) {
				fprintf(stderr, "dmreplay replay-record: out of memory\n");
				goto out;
			}
			continue;
		}
		comps++;
		rpost_t *p = match(w, rs.mns, e->mn, e->wr_id, 0);
		if (!p) {
			rs.unmatched_rec++;
			continue;
		}
		p->done_rec = e->t_ps;
		p->st_rec = e->aux;
	}
	char desc[160] = "sim";
	dmr_status_t sst = run_sim(&rec, &rs, profile, desc, sizeof(desc), &err);
	if (sst != DMR_OK) {
		fprintf(stderr, "dmreplay replay-record: sim: %s\n", err.msg);
		rc = (sst == DMR_ERR_IO || sst == DMR_ERR_PARSE) ? 2 : 1; /* a bad profile: 2 */
		goto out;
	}
	for (uint32_t wi = 0; wi < rs.nw; wi++)
		for (size_t i = 0; i < rs.w[wi].n; i++) {
			const rpost_t *p = &rs.w[wi].p[i];
			if (p->done_rec == NONE || p->done_sim == NONE || p->st_rec || p->st_sim)
				continue;
			grp_t *gg = group_of(g, &ng, p->opcode, p->length);
			if (!gg) {
				other++;
				continue;
			}
			if (grp_add(gg, p->done_rec - p->t_rec, p->done_sim - p->t_sim) != 0) {
				fprintf(stderr, "dmreplay replay-record: out of memory\n");
				goto out;
			}
		}
	qsort(g, ng, sizeof(*g), cmp_grp);
	printf(" Recording       : %s (inner backend %s; %u MN%s, %u CN%s x %u workers)\n", path,
	       rec.inner, rec.mns, rec.mns == 1 ? "" : "s", rec.cns, rec.cns == 1 ? "" : "s",
	       rec.workers);
	printf(" Records         : %zu posts, %zu completions (%zu not matched to a post); on the "
	       "sim %zu not matched\n",
	       posts, comps, rs.unmatched_rec, rs.unmatched_sim);
	printf(" Replayed on     : %s, open loop at the recorded post times\n", desc);
	printf(" Latency         : post to completion of signaled WRs completed with success on "
	       "both, usec; parts = lowest percentile with |sim/measured - 1| > %g %%\n",
	       tol);
	printf(" op     #bytes     count   measured p50     p90     p99        sim p50     p90     "
	       "p99   parts\n");
	static const double qs[] = {0.05, 0.10, 0.20, 0.30, 0.40, 0.50,
				    0.60, 0.70, 0.80, 0.90, 0.95, 0.99};
	for (size_t i = 0; i < ng; i++) {
		grp_t *x = &g[i];
		qsort(x->meas, x->n, sizeof(uint64_t), cmp_u64);
		qsort(x->sim, x->n, sizeof(uint64_t), cmp_u64);
		char part[48] = "no (to p99)";
		for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			double a = quant_us(x->meas, x->n, qs[k]),
			       b = quant_us(x->sim, x->n, qs[k]);
			double rel = a > 0 ? b / a - 1 : (b > 0 ? INFINITY : 0);
			if (fabs(rel) * 100 > tol) {
				snprintf(part, sizeof(part), "p%.0f (%+.0f %%)", qs[k] * 100,
					 rel * 100);
				break;
			}
		}
		printf(" %-6s %-9u %7zu   %11.2f %7.2f %7.2f   %11.2f %7.2f %7.2f   %s\n",
		       dmr_wr_opcode_string(x->opcode), x->size, x->n, quant_us(x->meas, x->n, 0.5),
		       quant_us(x->meas, x->n, 0.9), quant_us(x->meas, x->n, 0.99),
		       quant_us(x->sim, x->n, 0.5), quant_us(x->sim, x->n, 0.9),
		       quant_us(x->sim, x->n, 0.99), part);
	}
	if (other)
		printf(" (%zu WRs of more than %d opcode/size groups not shown)\n", other,
		       MAX_GROUPS);
	rc = 0;
out:
	if (g)
		for (size_t i = 0; i < ng; i++) {
			free(g[i].meas);
			free(g[i].sim);
		}
	free(g);
	if (rs.w)
		for (uint32_t wi = 0; wi < rs.nw; wi++) {
			free(rs.w[wi].p);
			for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++)
				free(rs.w[wi].by_mn[m]);
		}
	free(rs.w);
	dmr_rec_free(&rec);
	return rc;
}
