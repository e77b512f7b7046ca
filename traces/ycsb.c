/*
 * traces/ycsb.c - YCSB core-workload trace generator (see ycsb.h and
 * traces/GENERATORS.md).
 */
#include "ycsb.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zipf.h"

const char *const dmr_ycsb_type_names[DMR_YCSB_NTYPES] = {
    "Read", "Update", "Insert", "Scan", "ReadModifyWrite",
};
static const char *const ycsb_prop_keys[DMR_YCSB_NTYPES] = {
    "readproportion", "updateproportion",	   "insertproportion",
    "scanproportion", "readmodifywriteproportion",
};
static const char *const ycsb_dist_names[] = {"uniform", "zipfian", "latest"};

/* ---- property file ------------------------------------------------------ */

void dmr_ycsb_props_default(dmr_ycsb_props_t *p)
{
	memset(p, 0, sizeof(*p));
	p->prop[DMR_YCSB_T_READ] = 0.95;
	p->prop[DMR_YCSB_T_UPDATE] = 0.05;
	p->requestdistribution = DMR_YCSB_UNIFORM;
	p->minscanlength = 1;
	p->maxscanlength = 1000;
	p->scanlengthdistribution = DMR_YCSB_UNIFORM;
	p->fieldcount = 10;
	p->fieldlength = 100;
}

static char *ycsb_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int ycsb_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v_p)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s == '-' || *s == '+' || *s == '\0')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*v_p = v;
	return 0;
}

/* Apply one key=value; 0 ok, -1 bad value (msg in why). */
static int ycsb_prop(dmr_ycsb_props_t *p, const char *k, const char *v, const char **why)
{
	uint64_t u;

	for (int i = 0; i < DMR_YCSB_NTYPES; i++) {
		if (strcmp(k, ycsb_prop_keys[i]) == 0) {
			char *end;
			double d;

			errno = 0;
			d = strtod(v, &end);
			*why = "not a number in [0, 1]";
			if (errno || *end || *v == '\0' || !(d >= 0.0 && d <= 1.0))
				return -1;
			p->prop[i] = d;
			return 0;
		}
	}
	if (strcmp(k, "recordcount") == 0 || strcmp(k, "operationcount") == 0) {
		*why = "not an integer in [1, 2^40]";
		if (ycsb_u64(v, 1, UINT64_C(1) << 40, &u) != 0)
			return -1;
		if (k[0] == 'r')
			p->recordcount = u;
		else
			p->operationcount = u;
	} else if (strcmp(k, "minscanlength") == 0 || strcmp(k, "maxscanlength") == 0) {
		*why = "not an integer in [1, 1000000]";
		if (ycsb_u64(v, 1, 1000000, &u) != 0)
			return -1;
		if (k[1] == 'i')
			p->minscanlength = u;
		else
			p->maxscanlength = u;
	} else if (strcmp(k, "fieldcount") == 0) {
		*why = "not an integer in [1, 1024]";
		if (ycsb_u64(v, 1, 1024, &u) != 0)
			return -1;
		p->fieldcount = (uint32_t)u;
	} else if (strcmp(k, "fieldlength") == 0) {
		*why = "not an integer in [1, 65536]";
		if (ycsb_u64(v, 1, 65536, &u) != 0)
			return -1;
		p->fieldlength = (uint32_t)u;
	} else if (strcmp(k, "requestdistribution") == 0) {
		*why = "unsupported (zipfian, uniform or latest)";
		for (int i = 0; i < 3; i++)
			if (strcmp(v, ycsb_dist_names[i]) == 0) {
				p->requestdistribution = i;
				return 0;
			}
		return -1;
	} else if (strcmp(k, "scanlengthdistribution") == 0) {
		*why = "unsupported (uniform or zipfian)";
		if (strcmp(v, "uniform") == 0)
			p->scanlengthdistribution = DMR_YCSB_UNIFORM;
		else if (strcmp(v, "zipfian") == 0)
			p->scanlengthdistribution = DMR_YCSB_ZIPFIAN;
		else
			return -1;
	}
	return 0; /* unknown keys are ignored */
}

dmr_status_t dmr_ycsb_props_load(const char *path, dmr_ycsb_props_t *p_p, dmr_err_t *err)
{
	dmr_ycsb_props_t p;
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	unsigned line = 0;
	double sum = 0;
	dmr_status_t st = DMR_OK;
	/* keys seen and their lines: a key given twice is refused (Java's
	 * Properties, YCSB's reader, keep the last silently; issue #15 D16) */
	enum { MAXKEYS = 256 };
	struct {
		char k[64];
		unsigned line;
	} *seen = NULL;
	unsigned nseen = 0, pline[DMR_YCSB_NTYPES] = {0};

	if (f == NULL)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	if ((seen = calloc(MAXKEYS, sizeof(*seen))) == NULL) {
		fclose(f);
		return dmr_err_set(err, DMR_ERR_NOMEM, "%s: out of memory", path);
	}
	dmr_ycsb_props_default(&p);
	snprintf(p.path, sizeof(p.path), "%s", path);
	while (getline(&buf, &cap, f) != -1) {
		char *s = buf, *eq, *k, *v;
		const char *why = "";

		line++;
		if (line == 1 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
			st =
			    dmr_err_set(err, DMR_ERR_PARSE,
					"%s:1: the file starts with a UTF-8 byte-order mark (EF BB "
					"BF): save it without one",
					path);
			goto out;
		}
		s = ycsb_trim(s);
		if (*s == '\0' || *s == '#' || *s == '!')
			continue;
		if ((eq = strchr(s, '=')) == NULL) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%u: malformed line (no '=')", path,
					 line);
			goto out;
		}
		*eq = '\0';
		k = ycsb_trim(s);
		v = ycsb_trim(eq + 1);
		if (*k == '\0') {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%u: malformed line (empty key)",
					 path, line);
			goto out;
		}
		for (unsigned i = 0; i < nseen; i++)
			if (strcmp(seen[i].k, k) == 0) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:%u: %s: duplicate key (first given at line "
						 "%u): give it once",
						 path, line, k, seen[i].line);
				goto out;
			}
		if (nseen < MAXKEYS && strlen(k) < sizeof(seen[0].k)) {
			snprintf(seen[nseen].k, sizeof(seen[0].k), "%s", k);
			seen[nseen++].line = line;
		}
		for (int i = 0; i < DMR_YCSB_NTYPES; i++)
			if (strcmp(k, ycsb_prop_keys[i]) == 0)
				pline[i] = line;
		if (ycsb_prop(&p, k, v, &why) != 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%u: %s: '%s' %s", path, line, k, v,
					 why);
			goto out;
		}
	}
	if (ferror(f)) {
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
		goto out;
	}
	for (int i = 0; i < DMR_YCSB_NTYPES; i++)
		sum += p.prop[i];
	if (p.recordcount < 2)
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: recordcount missing or < 2", path);
	else if (!(sum > 0))
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: all operation proportions are 0", path);
	else if (p.minscanlength > p.maxscanlength)
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: minscanlength > maxscanlength", path);
	else if (fabs(sum - 1.0) > DMR_YCSB_PROP_TOL) {
		/* YCSB normalises them silently; we refuse (issue #15 D16) */
		char list[400];
		size_t n = 0;
		for (int i = 0; i < DMR_YCSB_NTYPES && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s=%g (%s%.0u)",
					      i ? ", " : "", ycsb_prop_keys[i], p.prop[i],
					      pline[i] ? "line " : "default", pline[i]);
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: the operation proportions sum to %g, not 1 (within %g): "
				 "%s",
				 path, sum, DMR_YCSB_PROP_TOL, list);
	}
	if (st == DMR_OK)
		*p_p = p;
out:
	free(seen);
	free(buf);
	fclose(f);
	return st;
}

/* ---- generator ---------------------------------------------------------- */

typedef struct ycsb_gen {
	const dmr_ycsb_cfg_t *cfg;
	gsl_rng *rtype, *rkey;
	dmr_trace_txn_t *t;
	double psum;
	uint64_t next_insert;	 /* next key to insert */
	dmr_zipf_scrambled_t zs; /* zipfian */
	dmr_zipf_t zl;		 /* latest */
	dmr_zipf_t zscan;	 /* zipfian scan length */
	dmr_zipf_ri_t zt;	 /* --theta */
} ycsb_gen_t;

static uint32_t ycsb_nops(const dmr_ycsb_cfg_t *cfg)
{
	return cfg->ops_per_txn ? cfg->ops_per_txn : 1;
}

static dmr_status_t ycsb_check(const dmr_ycsb_cfg_t *cfg, dmr_err_t *err)
{
	const dmr_ycsb_props_t *p = &cfg->props;
	double sum = 0;

	for (int i = 0; i < DMR_YCSB_NTYPES; i++)
		sum += p->prop[i];
	if (p->recordcount < 2)
		return dmr_err_set(err, DMR_ERR_INVALID, "ycsb: recordcount %" PRIu64 " < 2",
				   p->recordcount);
	if (!(sum > 0))
		return dmr_err_set(err, DMR_ERR_INVALID, "ycsb: operation proportions sum to 0");
	if (p->fieldcount < 1 || p->fieldlength < 1 ||
	    (uint64_t)p->fieldcount * p->fieldlength > (UINT64_C(1) << 24))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "ycsb: fieldcount x fieldlength too large");
	if (p->minscanlength < 1 || p->minscanlength > p->maxscanlength)
		return dmr_err_set(err, DMR_ERR_INVALID, "ycsb: bad scan length range");
	if (ycsb_nops(cfg) > DMR_YCSB_MAX_OPS_PER_TXN)
		return dmr_err_set(err, DMR_ERR_INVALID, "--ops-per-txn %u not in [1, %d]",
				   cfg->ops_per_txn, DMR_YCSB_MAX_OPS_PER_TXN);
	if (ycsb_nops(cfg) > 1 && p->prop[DMR_YCSB_T_SCAN] > 0)
		/* a scan's range may cover a record another op of the same
		 * transaction locks: the read finds it locked and the
		 * transaction aborts at every attempt */
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--ops-per-txn %u with scanproportion %g: scans are only "
				   "supported with one operation per transaction",
				   cfg->ops_per_txn, p->prop[DMR_YCSB_T_SCAN]);
	if (ycsb_nops(cfg) > 1 && p->recordcount < 4 * (uint64_t)ycsb_nops(cfg))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--ops-per-txn %u needs recordcount >= %u (distinct keys "
				   "per transaction), have %" PRIu64,
				   cfg->ops_per_txn, 4 * ycsb_nops(cfg), p->recordcount);
	if (cfg->theta_set && !(cfg->theta >= 0 && cfg->theta <= DMR_YCSB_MAX_THETA))
		return dmr_err_set(err, DMR_ERR_INVALID, "--theta %g not in [0, %g]", cfg->theta,
				   DMR_YCSB_MAX_THETA);
	if (cfg->theta_set && cfg->regime_override)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--theta and --regime both choose the keys: give one");
	return DMR_OK;
}

/* YCSB DiscreteGenerator over the proportions (read, update, insert, scan,
 * rmw, in that order). */
static int ycsb_type(gsl_rng *r, const dmr_ycsb_props_t *p, double psum)
{
	double u = gsl_rng_uniform(r) * psum, acc = 0;
	int last = 0;

	for (int i = 0; i < DMR_YCSB_NTYPES; i++) {
		if (p->prop[i] <= 0)
			continue;
		last = i;
		acc += p->prop[i];
		if (u < acc)
			return i;
	}
	return last;
}

static double ycsb_psum(const dmr_ycsb_props_t *p)
{
	double s = 0;

	for (int i = 0; i < DMR_YCSB_NTYPES; i++)
		s += p->prop[i];
	return s;
}

/* Inserts the trace will make: replays the type stream. */
static dmr_status_t ycsb_count_inserts(const dmr_ycsb_cfg_t *cfg, uint64_t *n_p, dmr_err_t *err)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double psum = ycsb_psum(&cfg->props);
	uint64_t n = 0;

	if (r == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ycsb: out of memory");
	gsl_rng_set(r, (unsigned long)cfg->seed);
	if (cfg->props.prop[DMR_YCSB_T_INSERT] > 0)
		for (uint64_t i = 0; i < cfg->txns * ycsb_nops(cfg); i++)
			n += ycsb_type(r, &cfg->props, psum) == DMR_YCSB_T_INSERT;
	gsl_rng_free(r);
	*n_p = n;
	return DMR_OK;
}

static uint32_t ycsb_payload(const dmr_ycsb_props_t *p)
{
	return 8 + (uint32_t)(((uint64_t)p->fieldcount * p->fieldlength + 7) / 8 * 8);
}

dmr_status_t dmr_ycsb_header(const dmr_ycsb_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err)
{
	const dmr_ycsb_props_t *p = &cfg->props;
	dmr_regime_t reg;
	dmr_trace_hdr_t *h;
	uint64_t inserts, fp;
	dmr_status_t st;

	if ((st = ycsb_check(cfg, err)) != DMR_OK)
		return st;
	if (cfg->regime_override &&
	    (st = dmr_gen_regime_check(&cfg->regime, p->recordcount, "records (recordcount)",
				       err)) != DMR_OK)
		return st;
	if ((st = ycsb_count_inserts(cfg, &inserts, err)) != DMR_OK)
		return st;
	if ((h = malloc(sizeof(*h))) == NULL)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ycsb: out of memory");
	if (cfg->regime_override)
		reg = cfg->regime;
	else
		dmr_gen_regime_uniform(&reg);
	if ((st = dmr_gen_hdr_begin(h, "ycsb", cfg->txns, cfg->seed, &reg, err)) != DMR_OK)
		goto out;
	/* the regime column says what drew the keys: without --regime, the
	 * property file's requestdistribution */
	if (!cfg->regime_override)
		snprintf(h->regime, sizeof(h->regime), "%s",
			 p->requestdistribution == DMR_YCSB_ZIPFIAN  ? "zipfian:0.99"
			 : p->requestdistribution == DMR_YCSB_LATEST ? "latest"
								     : "uniform");
	if (cfg->theta_set)
		snprintf(h->regime, sizeof(h->regime), "zipf:%g", cfg->theta);
	dmr_gen_hdr_table(h, "usertable", p->recordcount + inserts, ycsb_payload(p),
			  p->recordcount);
	if (ycsb_nops(cfg) > 1) {
		snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "ReadOnly");
		snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "ReadWrite");
	} else {
		for (int i = 0; i < DMR_YCSB_NTYPES; i++)
			snprintf(h->types[h->ntypes++], DMR_TRACE_NAME_MAX, "%s",
				 dmr_ycsb_type_names[i]);
	}
	if (!cfg->quiet)
		fprintf(stderr, "ycsb: MN footprint (rows x (16 + payload)):\n");
	fp = dmr_gen_footprint(h, cfg->quiet ? NULL : stderr);
	if ((st = dmr_gen_hdr_setf(h, err, "workload_file", "%s", p->path)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "recordcount", "%" PRIu64, p->recordcount)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "operationcount", "%" PRIu64, p->operationcount)) !=
		DMR_OK)
		goto out;
	for (int i = 0; i < DMR_YCSB_NTYPES; i++)
		if ((st = dmr_gen_hdr_setf(h, err, ycsb_prop_keys[i], "%g", p->prop[i])) != DMR_OK)
			goto out;
	if ((st = dmr_gen_hdr_setf(h, err, "requestdistribution", "%s",
				   cfg->regime_override ? "regime"
				   : cfg->theta_set	? "zipf_theta"
						    : ycsb_dist_names[p->requestdistribution])) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "minscanlength", "%" PRIu64, p->minscanlength)) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "maxscanlength", "%" PRIu64, p->maxscanlength)) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "scanlengthdistribution", "%s",
				   ycsb_dist_names[p->scanlengthdistribution])) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "fieldcount", "%u", p->fieldcount)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "fieldlength", "%u", p->fieldlength)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "zipfian_constant", "%g", DMR_ZIPF_YCSB_THETA)) !=
		DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "inserts", "%" PRIu64, inserts)) != DMR_OK ||
	    (st = dmr_gen_hdr_setf(h, err, "footprint_bytes", "%" PRIu64, fp)) != DMR_OK)
		goto out;
	/* added later: only when given, so that default traces are unchanged */
	if ((ycsb_nops(cfg) > 1 &&
	     (st = dmr_gen_hdr_setf(h, err, "ops_per_txn", "%u", ycsb_nops(cfg))) != DMR_OK) ||
	    (cfg->theta_set &&
	     ((st = dmr_gen_hdr_setf(h, err, "zipf_theta", "%g", cfg->theta)) != DMR_OK ||
	      (st = dmr_gen_hdr_setf(h, err, "zipf_method", "rejection-inversion")) != DMR_OK)))
		goto out;
	*hdr_p = *h;
out:
	free(h);
	return st;
}

/* Word holding the first byte of field f. */
static int ycsb_field_word(const dmr_ycsb_props_t *p, uint64_t f)
{
	return (int)((8 + f * p->fieldlength) / 8);
}

/* YCSB nextKeynum(): a key <= the last inserted key. */
static uint64_t ycsb_key(ycsb_gen_t *g)
{
	const dmr_ycsb_props_t *p = &g->cfg->props;
	uint64_t last = g->next_insert - 1, k;

	if (g->cfg->regime_override)
		return dmr_gen_regime_draw(g->rkey, &g->cfg->regime, last + 1);
	if (g->cfg->theta_set)
		return dmr_zipf_ri_next(&g->zt, g->rkey);
	switch (p->requestdistribution) {
	case DMR_YCSB_ZIPFIAN:
		do
			k = dmr_zipf_scrambled_next(&g->zs, g->rkey);
		while (k > last);
		return k;
	case DMR_YCSB_LATEST:
		return last - dmr_zipf_next_n(&g->zl, g->rkey, last);
	default:
		return dmr_gen_below(g->rkey, p->recordcount);
	}
}

/* A key no earlier op of the transaction names (one op per transaction:
 * the first draw, so the key stream is unchanged): redrawn, then after 64
 * draws the next free key upward (ops_per_txn <= recordcount / 4 leaves
 * one). */
static int ycsb_taken(const dmr_trace_txn_t *t, uint64_t k)
{
	for (uint32_t i = 0; i < t->nops; i++)
		if ((uint64_t)t->ops[i].key == k)
			return 1;
	return 0;
}

static uint64_t ycsb_key_free(ycsb_gen_t *g)
{
	uint64_t k = ycsb_key(g);

	for (int tries = 0; ycsb_taken(g->t, k); tries++) {
		if (tries == 64) {
			const uint64_t n = g->cfg->props.recordcount;

			while (ycsb_taken(g->t, k))
				k = (k + 1) % n;
			break;
		}
		k = ycsb_key(g);
	}
	return k;
}

static uint64_t ycsb_scan_len(ycsb_gen_t *g)
{
	const dmr_ycsb_props_t *p = &g->cfg->props;

	if (p->scanlengthdistribution == DMR_YCSB_ZIPFIAN && p->maxscanlength > p->minscanlength)
		return dmr_zipf_next(&g->zscan, g->rkey);
	return dmr_gen_range(g->rkey, p->minscanlength, p->maxscanlength);
}

static void ycsb_txn(ycsb_gen_t *g, int type, uint64_t rows)
{
	const dmr_ycsb_props_t *p = &g->cfg->props;
	dmr_trace_txn_t *t = g->t;
	dmr_trace_op_t *op;
	uint64_t k, len;
	int self = 0;

	switch (type) {
	case DMR_YCSB_T_READ:
		dmr_gen_op(t, 'R', DMR_YCSB_TABLE, 0, (int64_t)ycsb_key_free(g), NULL);
		break;
	case DMR_YCSB_T_UPDATE:
		k = ycsb_key_free(g);
		op = dmr_gen_op(t, 'U', DMR_YCSB_TABLE, 0, (int64_t)k, &self);
		if (k >= p->recordcount) /* inserted by this trace: may not be there yet */
			dmr_gen_guard(op, DMR_TGUARD_PRESENT, self, 0, 0);
		dmr_trace_op_act(op, DMR_TACT_SET,
				 ycsb_field_word(p, dmr_gen_below(g->rkey, p->fieldcount)),
				 (int64_t)dmr_gen_u64(g->rkey));
		break;
	case DMR_YCSB_T_INSERT:
		k = g->next_insert++;
		op = dmr_gen_op(t, 'I', DMR_YCSB_TABLE, 0, (int64_t)k, NULL);
		dmr_trace_op_act(op, DMR_TACT_SET, ycsb_field_word(p, 0),
				 (int64_t)dmr_gen_u64(g->rkey));
		break;
	case DMR_YCSB_T_SCAN:
		k = ycsb_key(g);
		len = ycsb_scan_len(g);
		if (len > rows - k)
			len = rows - k;
		op = dmr_gen_op(t, 'R', DMR_YCSB_TABLE, 0, (int64_t)k, NULL);
		op->count = (uint32_t)len;
		break;
	case DMR_YCSB_T_RMW:
		/* loaded keys only, so the counter's xv never meets an absent record;
		 * after 64 draws beyond them, uniform among them */
		for (int tries = 0; (k = ycsb_key_free(g)) >= p->recordcount; tries++)
			if (tries == 64) {
				k = dmr_gen_below(g->rkey, p->recordcount);
				while (ycsb_taken(t, k))
					k = (k + 1) % p->recordcount;
				break;
			}
		op = dmr_gen_op(t, 'U', DMR_YCSB_TABLE, 0, (int64_t)k, NULL);
		dmr_trace_op_act(op, DMR_TACT_ADD, DMR_YCSB_COUNTER, 1);
		dmr_trace_op_act(op, DMR_TACT_SET,
				 ycsb_field_word(p, dmr_gen_below(g->rkey, p->fieldcount)),
				 (int64_t)dmr_gen_u64(g->rkey));
		t->xv += 1;
		break;
	}
}

dmr_status_t dmr_ycsb_generate(const dmr_ycsb_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       uint64_t *by_type_p, dmr_err_t *err)
{
	const dmr_ycsb_props_t *p = &cfg->props;
	uint64_t by_type[DMR_YCSB_NTYPES] = {0}, inserts, rows;
	ycsb_gen_t g;
	dmr_status_t st;

	if ((st = ycsb_check(cfg, err)) != DMR_OK)
		return st;
	if ((st = ycsb_count_inserts(cfg, &inserts, err)) != DMR_OK)
		return st;
	rows = p->recordcount + inserts;
	memset(&g, 0, sizeof(g));
	g.cfg = cfg;
	g.psum = ycsb_psum(p);
	g.next_insert = p->recordcount;
	g.rtype = gsl_rng_alloc(gsl_rng_mt19937);
	g.rkey = gsl_rng_alloc(gsl_rng_mt19937);
	g.t = malloc(sizeof(*g.t));
	if (g.rtype == NULL || g.rkey == NULL || g.t == NULL) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "ycsb: out of memory");
		goto out;
	}
	gsl_rng_set(g.rtype, (unsigned long)cfg->seed);
	gsl_rng_set(g.rkey, (unsigned long)((cfg->seed + DMR_YCSB_KEY_SEED_OFFSET) & 0xffffffffUL));
	if (!cfg->regime_override && p->requestdistribution == DMR_YCSB_ZIPFIAN) {
		/* CoreWorkload: keyspace grown by the expected inserts (x2 fudge) */
		uint64_t expected =
		    (uint64_t)((double)cfg->txns * p->prop[DMR_YCSB_T_INSERT] * 2.0);

		dmr_zipf_scrambled_init(&g.zs, 0, p->recordcount + expected);
	}
	if (!cfg->regime_override && p->requestdistribution == DMR_YCSB_LATEST)
		dmr_zipf_init(&g.zl, 0, p->recordcount - 2, DMR_ZIPF_YCSB_THETA);
	if (p->scanlengthdistribution == DMR_YCSB_ZIPFIAN && p->maxscanlength > p->minscanlength &&
	    p->prop[DMR_YCSB_T_SCAN] > 0)
		dmr_zipf_init(&g.zscan, p->minscanlength, p->maxscanlength, DMR_ZIPF_YCSB_THETA);

	if (cfg->theta_set)
		dmr_zipf_ri_init(&g.zt, p->recordcount, cfg->theta);

	for (uint64_t id = 0; id < cfg->txns; id++) {
		const uint32_t nops = ycsb_nops(cfg);
		int type = ycsb_type(g.rtype, p, g.psum), writes = 0;

		dmr_gen_txn_begin(g.t, id, type);
		for (uint32_t i = 0; i < nops; i++) {
			if (i > 0)
				type = ycsb_type(g.rtype, p, g.psum);
			ycsb_txn(&g, type, rows);
			by_type[type]++;
			writes += type != DMR_YCSB_T_READ;
		}
		if (nops > 1)
			g.t->type = writes ? DMR_YCSB_T_READ_WRITE : DMR_YCSB_T_READ_ONLY;
		if ((st = emit(arg, g.t, err)) != DMR_OK)
			goto out;
	}
	if (by_type_p)
		memcpy(by_type_p, by_type, sizeof(by_type));
out:
	free(g.t);
	gsl_rng_free(g.rkey);
	gsl_rng_free(g.rtype);
	return st;
}

/* ---- command line ------------------------------------------------------- */

enum { OPT_WORKLOAD = 256, OPT_QUIET, OPT_OPS_PER_TXN, OPT_THETA };

static void ycsb_usage(FILE *f)
{
	fputs("usage: dmreplay gen ycsb --workload FILE -o FILE [options]\n"
	      "YCSB core workload from one of YCSB's property files (workloada..f):\n"
	      "YCSB operations (one per transaction by default) on table usertable.\n"
	      "  --workload FILE   YCSB property file (recordcount, operationcount,\n"
	      "                    *proportion, requestdistribution zipfian|uniform|\n"
	      "                    latest, min/maxscanlength, scanlengthdistribution,\n"
	      "                    fieldcount, fieldlength; other keys ignored)\n"
	      "  --ops-per-txn N   YCSB operations per transaction, 1..64 (default 1);\n"
	      "                    the proportions apply per operation, keys are\n"
	      "                    distinct within a transaction (no scans with N > 1)\n"
	      "  --theta T         keys Zipf(T) over the loaded keys, key 0 the most\n"
	      "                    popular, T in [0, 5] (1 and above included; exact,\n"
	      "                    rejection-inversion), replacing requestdistribution\n"
	      "  --quiet           no footprint lines\n",
	      f);
	dmr_gen_common_help(f);
	fputs("--txns defaults to operationcount. --regime replaces requestdistribution:\n"
	      "hot:K/P sends fraction P of the key draws to keys 0..K-1.\n",
	      f);
}

typedef struct ycsb_cli {
	dmr_ycsb_cfg_t cfg;
	const char *workload;
} ycsb_cli_t;

static dmr_status_t ycsb_run(void *ctx, dmr_gen_emit_func_t emit, void *emit_arg, dmr_err_t *err)
{
	return dmr_ycsb_generate(&((ycsb_cli_t *)ctx)->cfg, emit, emit_arg, NULL, err);
}

static int ycsb_opt(void *ctx, int c, const char *arg)
{
	ycsb_cli_t *y = ctx;

	switch (c) {
	case OPT_WORKLOAD:
		y->workload = arg;
		return 0;
	case OPT_QUIET:
		y->cfg.quiet = 1;
		return 0;
	case OPT_OPS_PER_TXN: {
		uint64_t v;

		if (dmr_gen_parse_count("ycsb", "ops-per-txn", arg, 1, DMR_YCSB_MAX_OPS_PER_TXN,
					&v) != 0)
			return -1;
		y->cfg.ops_per_txn = (uint32_t)v;
		return 0;
	}
	case OPT_THETA:
		if (dmr_gen_parse_double("ycsb", "theta", arg, 0.0, DMR_YCSB_MAX_THETA,
					 &y->cfg.theta) != 0)
			return -1;
		y->cfg.theta_set = 1;
		return 0;
	}
	return -1;
}

static int ycsb_prepare(void *ctx, const dmr_gen_common_t *cm, dmr_trace_hdr_t *hdr)
{
	ycsb_cli_t *y = ctx;
	dmr_ycsb_cfg_t *cfg = &y->cfg;
	dmr_err_t err = {{0}};

	if (y->workload == NULL) {
		fprintf(stderr, "ycsb: missing --workload FILE (try --help)\n");
		return 2;
	}
	if (dmr_gen_out_is_input("ycsb", cm->out, "--workload", y->workload) != 0)
		return 2;
	if (dmr_ycsb_props_load(y->workload, &cfg->props, &err) != DMR_OK) {
		fprintf(stderr, "ycsb: --workload: %s\n", err.msg);
		return 2;
	}
	if (cm->txns_set) {
		cfg->txns = cm->txns;
	} else if (cfg->props.operationcount > 0) {
		cfg->txns = cfg->props.operationcount;
	} else {
		fprintf(stderr, "ycsb: --workload: %s: no operationcount; give --txns\n",
			y->workload);
		return 2;
	}
	cfg->seed = cm->seed;
	cfg->regime = cm->regime;
	cfg->regime_override = cm->regime_set;
	if (cm->regime.drift_s > 0) {
		/* inserts take fresh keys past recordcount: moving the hot set by
		 * rotating keys would make them collide with loaded records */
		fprintf(stderr,
			"ycsb: --regime %s: drift is not supported for YCSB (use tpcc or "
			"smallbank)\n",
			cm->regime.name);
		return 2;
	}
	if (dmr_ycsb_header(cfg, hdr, &err) != DMR_OK) {
		fprintf(stderr, "ycsb: %s\n", err.msg);
		return 2;
	}
	return 0;
}

/* The summary line, as tpcc's. */
static void ycsb_done(void *ctx, const dmr_gen_common_t *cm)
{
	const ycsb_cli_t *y = ctx;

	if (!y->cfg.quiet)
		fprintf(stderr, "ycsb: wrote %" PRIu64 " txns to %s (workload %s)\n", y->cfg.txns,
			dmr_gen_out_name(cm->out), y->workload);
}

int dmr_gen_ycsb_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    DMR_GEN_COMMON_LONGOPTS,
	    {"workload", required_argument, NULL, OPT_WORKLOAD},
	    {"quiet", no_argument, NULL, OPT_QUIET},
	    {"ops-per-txn", required_argument, NULL, OPT_OPS_PER_TXN},
	    {"theta", required_argument, NULL, OPT_THETA},
	    {NULL, 0, NULL, 0},
	};
	static const dmr_gen_cli_t cli = {.prog = "ycsb",
					  .opts = opts,
					  .usage = ycsb_usage,
					  .opt = ycsb_opt,
					  .prepare = ycsb_prepare,
					  .run = ycsb_run,
					  .done = ycsb_done};
	ycsb_cli_t y;

	memset(&y, 0, sizeof(y));
	return dmr_gen_cli_main(&cli, &y, argc, argv);
}
