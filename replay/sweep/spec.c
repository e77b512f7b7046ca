/*
 * replay/sweep/spec.c - a sweep spec: the value types and tables of known
 * keys, and JSON text -> dmr_sweep_spec_t (contract in replay/sweep.h;
 * the format in docs/SWEEPS.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "../../core/base/opt.h"
#include "../../core/loop.h"
#include "../../traces/tatp.h"
#include "../../traces/tpcc.h"
#include "../../traces/workload.h"
#include "sweep_impl.h"

/* ---- value types and the tables of known keys --------------------------- */

enum vtype {
	V_STR,	  /* non-empty string of safe characters */
	V_REGIME, /* V_STR that dmr_regime_parse accepts */
	V_POS,	  /* integer >= 1 */
	V_UINT,	  /* integer >= 0 */
	V_NUMP,	  /* number > 0 */
	V_NUM0,	  /* number >= 0 */
	V_DUR,	  /* number of seconds > 0, or "Xs" / "Xms" */
	V_SIZE,	  /* integer >= 1 or a string like "1G" */
	V_SIZE0,  /* integer >= 0 or a string like "100K" */
	V_SEED,	  /* integer >= 0 or "rep" */
};

static const char *vtype_name[] = {
    [V_STR] = "a string",
    [V_REGIME] = "a regime string",
    [V_POS] = "an integer >= 1",
    [V_UINT] = "an integer >= 0",
    [V_NUMP] = "a number > 0",
    [V_NUM0] = "a number >= 0",
    [V_DUR] = "a duration (seconds as a number, or \"0.5s\" / \"200ms\")",
    [V_SIZE] = "a size (bytes, or a string like \"1G\")",
    [V_SIZE0] = "a count >= 0 (or a string like \"100K\")",
    [V_SEED] = "an integer >= 0 or \"rep\"",
};

typedef struct keydef {
	const char *name;
	enum vtype t;
	int gen;	 /* generator setting (else a run option) */
	const char *wls; /* generator settings: workloads that take it ("" = all) */
} keydef_t;

static const keydef_t axis_defs[] = {
    {"regime", V_REGIME, 1, ""},
    {"mix", V_STR, 1, "tpcc,tatp"},
    {"warehouses", V_POS, 1, "tpcc"},
    {"txns", V_POS, 1, ""},
    {"loop", V_STR, 0, NULL},
    {"threads", V_POS, 0, NULL},
    {"coros", V_POS, 0, NULL},
    {"cns", V_POS, 0, NULL},
    {"seed", V_UINT, 0, NULL},
    {"retries", V_UINT, 0, NULL},
    {"profile", V_STR, 0, NULL},
    {"ai_step", V_POS, 0, NULL},
    {"md_factor", V_NUMP, 0, NULL},
    {"loop_window_ms", V_NUMP, 0, NULL},
    {"duration", V_DUR, 0, NULL},
    {"protocol", V_STR, 0, NULL},
    {"mns", V_POS, 0, NULL},
    {"backups", V_UINT, 0, NULL},
    {"index", V_STR, 0, NULL},
    {"addr_cache", V_SIZE0, 0, NULL},
    {"loop_threshold", V_NUM0, 0, NULL},
    {"doorbell_max", V_POS, 0, NULL}, /* Loop C (docs/LOOPS.md) */
    {"doorbell_util", V_NUMP, 0, NULL},
    {"aura_levers", V_STR, 0, NULL}, /* aura (docs/AURA.md) */
    {"aura_tuner", V_STR, 0, NULL},
    {"aura_lr", V_NUMP, 0, NULL},
    {"aura_groups", V_POS, 0, NULL},
    {"aura_w_atomic", V_NUM0, 0, NULL},
    {"aura_w_rpc", V_NUM0, 0, NULL},
    {"aura_w_move", V_NUM0, 0, NULL},
    {"aura_w_load", V_NUM0, 0, NULL},
    /* issue 12's protocol options */
    {"isolation", V_STR, 0, NULL},
    {"versions", V_POS, 0, NULL},
    {"crest_locks", V_STR, 0, NULL},
    {"crest_local", V_STR, 0, NULL},
    {"crest_cache", V_STR, 0, NULL},
    {"crest_cache_ttl", V_NUMP, 0, NULL},
    {"rpc", V_STR, 0, NULL}, /* issue 14 A1: none, all, half */
    /* generator axes of issue 12's knobs */
    {"customers", V_POS, 1, "tpcc"},
    {"items", V_POS, 1, "tpcc"},
    {"theta", V_NUM0, 1, "ycsb,smallbank"},
    {"ops_per_txn", V_POS, 1, "ycsb"},
    {"subscribers", V_POS, 1, "tatp"},
    {"dist", V_STR, 1, "tatp"},
};

static const keydef_t run_defs[] = {
    {"backend", V_STR, 0, NULL},
    {"profile", V_STR, 0, NULL},
    {"cns", V_POS, 0, NULL},
    {"threads", V_POS, 0, NULL},
    {"coros", V_POS, 0, NULL},
    {"txns", V_POS, 0, NULL},
    {"duration", V_DUR, 0, NULL},
    {"retries", V_UINT, 0, NULL},
    {"backoff_us", V_NUM0, 0, NULL},
    {"mr_size", V_SIZE, 0, NULL},
    {"mtu", V_POS, 0, NULL},
    {"window_ms", V_NUMP, 0, NULL},
    {"loop", V_STR, 0, NULL},
    {"ai_step", V_POS, 0, NULL},
    {"md_factor", V_NUMP, 0, NULL},
    {"loop_window_ms", V_NUMP, 0, NULL},
    {"protocol", V_STR, 0, NULL},
    {"mns", V_POS, 0, NULL},
    {"backups", V_UINT, 0, NULL},
    {"index", V_STR, 0, NULL},
    {"addr_cache", V_SIZE0, 0, NULL},
    {"loop_threshold", V_NUM0, 0, NULL},
    {"isolation", V_STR, 0, NULL},
    {"versions", V_POS, 0, NULL},
    {"crest_locks", V_STR, 0, NULL},
    {"crest_local", V_STR, 0, NULL},
    {"crest_cache", V_STR, 0, NULL},
    {"crest_cache_ttl", V_NUMP, 0, NULL},
    {"doorbell_max", V_POS, 0, NULL},
    {"doorbell_util", V_NUMP, 0, NULL},
    {"aura_levers", V_STR, 0, NULL},
    {"aura_tuner", V_STR, 0, NULL},
    {"aura_lr", V_NUMP, 0, NULL},
    {"aura_groups", V_POS, 0, NULL},
    {"aura_w_atomic", V_NUM0, 0, NULL},
    {"aura_w_rpc", V_NUM0, 0, NULL},
    {"aura_w_move", V_NUM0, 0, NULL},
    {"aura_w_load", V_NUM0, 0, NULL},
    {"rpc", V_STR, 0, NULL},
};

static const keydef_t wl_defs[] = {
    {"regime", V_REGIME, 1, ""},
    {"txns", V_POS, 1, ""},
    {"seed", V_SEED, 1, ""},
    {"mix", V_STR, 1, "tpcc,tatp"},
    {"warehouses", V_POS, 1, "tpcc"},
    {"order_cap", V_POS, 1, "tpcc"},
    {"payment_cap", V_POS, 1, "tpcc"},
    {"accounts", V_POS, 1, "smallbank"},
    {"zipf", V_NUMP, 1, "smallbank"},
    {"workload", V_STR, 1, "ycsb"},
    /* issue 12's knobs (traces/GENERATORS.md) */
    {"customers", V_POS, 1, "tpcc"},
    {"items", V_POS, 1, "tpcc"},
    {"preset", V_STR, 1, "tpcc,tatp"},
    {"theta", V_NUM0, 1, "ycsb,smallbank"},
    {"ops_per_txn", V_POS, 1, "ycsb"},
    {"subscribers", V_POS, 1, "tatp"},
    {"dist", V_STR, 1, "tatp"},
    {"cf_check", V_STR, 1, "tatp"},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const keydef_t *find_def(const keydef_t *defs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(defs[i].name, name) == 0)
			return &defs[i];
	return NULL;
}

static void list_defs(const keydef_t *defs, size_t n, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%s", i ? ", " : "", defs[i].name);
}

static int wl_takes(const keydef_t *d, const char *wl)
{
	if (!d->wls || !d->wls[0])
		return 1;
	size_t n = strlen(wl);
	for (const char *p = d->wls; *p;) { /* a comma-separated list */
		size_t k = strcspn(p, ",");
		if (k == n && strncmp(p, wl, n) == 0)
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

/* Characters allowed in a string value: it goes into a cell name (a CSV
 * field and, sanitised, a directory name) and onto a command line. */
static int safe_string(const char *s)
{
	if (!s[0] || s[0] == '-' || strlen(s) >= DMR_SWEEP_VAL_MAX)
		return 0;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c <= ' ' || c >= 0x7f || strchr(",;=\"'\\`$", c))
			return 0;
	}
	return 1;
}

/* A loop value checked as `dmreplay run --loop` would at plan time (known
 * names joined by '+', transaction loops only): a bad one is refused before
 * any cell runs. */
static dmr_status_t loop_ok(const char *key, const char *val, const char *field, dmr_err_t *err)
{
	dmr_err_t e1;
	if (strcmp(key, "aura_levers") == 0) {
		unsigned lv;
		if (dmr_aura_parse_levers(val, &lv, &e1) != DMR_OK)
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", field, e1.msg);
		return DMR_OK;
	}
	if (strcmp(key, "aura_lr") == 0 || strcmp(key, "aura_groups") == 0 ||
	    strncmp(key, "aura_w_", 7) == 0) {
		/* the bounds of run's --aura-lr, --aura-groups, --aura-w-* */
		double x = strtod(val, NULL);
		double hi = key[5] == 'l'   ? 1
			    : key[5] == 'g' ? DMR_AURA_MAX_GROUPS
					    : DMR_AURA_W_MAX;
		if (x > hi)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s: %s is more than %g (dmreplay run "
					   "--%s)",
					   field, val, hi,
					   key[5] == 'l'   ? "aura-lr"
					   : key[5] == 'g' ? "aura-groups"
							   : "aura-w-*");
		return DMR_OK;
	}
	if (strcmp(key, "aura_tuner") == 0) {
		dmr_aura_tuner_t t;
		if (dmr_aura_parse_tuner(val, &t, &e1) != DMR_OK)
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", field, e1.msg);
		return DMR_OK;
	}
	if (strcmp(key, "loop") != 0)
		return DMR_OK;
	unsigned loops;
	dmr_err_t e2;
	if (dmr_loop_parse_for(val, DMR_LOOP_TXN, &loops, &e2) != DMR_OK)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", field, e2.msg);
	if (loops & ~DMR_LOOP_TXN)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: '%s': prefetch is a loop of `dmreplay kv run`, not of a "
				   "transaction replay",
				   field, val);
	return DMR_OK;
}

/* A duration as `dmreplay run --duration` takes it: seconds > 0, with an
 * optional unit (s, ms, us, ns). */
static int duration_text(const char *s)
{
	double x;
	dmr_err_t e;
	return dmr_opt_double("duration", s, 0, HUGE_VAL, DMR_OPT_SECONDS | DMR_OPT_LO_OPEN, &x,
			      &e) == DMR_OK;
}

/* Convert a JSON value of type t to option text. */
static dmr_status_t val_text(const json_t *v, enum vtype t, const char *field, char *out,
			     dmr_err_t *err)
{
	switch (t) {
	case V_STR:
	case V_REGIME:
		if (!json_is_string(v))
			break;
		if (!safe_string(json_string_value(v)))
			return dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "%s: '%s' is not allowed (empty, longer than %d, a leading "
			    "'-', or one of: space , ; = \" ' \\ ` $)%s",
			    field, json_string_value(v), DMR_SWEEP_VAL_MAX - 1,
			    strchr(json_string_value(v), ',') && strstr(field, "mix")
				? "; a percentage mix takes colons: \"45:43:4:4:4\""
				: "");
		snprintf(out, DMR_SWEEP_VAL_MAX, "%s", json_string_value(v));
		if (t == V_REGIME) {
			dmr_regime_t r;
			dmr_err_t e2;
			if (dmr_regime_parse(out, &r, &e2) != DMR_OK)
				return dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", field, e2.msg);
		}
		return DMR_OK;
	case V_POS:
	case V_UINT:
		if (!json_is_integer(v) || json_integer_value(v) < (t == V_POS ? 1 : 0))
			break;
		snprintf(out, DMR_SWEEP_VAL_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return DMR_OK;
	case V_SEED:
		if (json_is_string(v) && strcmp(json_string_value(v), "rep") == 0) {
			snprintf(out, DMR_SWEEP_VAL_MAX, "rep");
			return DMR_OK;
		}
		return val_text(v, V_UINT, field, out, err) == DMR_OK
			   ? DMR_OK
			   : dmr_err_set(err, DMR_ERR_PARSE, "%s: expected %s", field,
					 vtype_name[t]);
	case V_SIZE:
	case V_SIZE0:
		if (json_is_string(v))
			return val_text(v, V_STR, field, out, err);
		return val_text(v, t == V_SIZE ? V_POS : V_UINT, field, out, err) == DMR_OK
			   ? DMR_OK
			   : dmr_err_set(err, DMR_ERR_PARSE, "%s: expected %s", field,
					 vtype_name[t]);
	case V_NUMP:
	case V_NUM0:
	case V_DUR:
		if (t == V_DUR && json_is_string(v)) {
			if (!safe_string(json_string_value(v)) ||
			    !duration_text(json_string_value(v)))
				break;
			snprintf(out, DMR_SWEEP_VAL_MAX, "%s", json_string_value(v));
			return DMR_OK;
		}
		if (!json_is_number(v))
			break;
		double x = json_number_value(v);
		if (!(t == V_NUM0 ? x >= 0 : x > 0))
			break;
		if (json_is_integer(v))
			snprintf(out, DMR_SWEEP_VAL_MAX, "%" JSON_INTEGER_FORMAT,
				 json_integer_value(v));
		else
			snprintf(out, DMR_SWEEP_VAL_MAX, "%.15g", x);
		return DMR_OK;
	}
	const char *got = json_is_string(v)    ? "a string"
			  : json_is_integer(v) ? "an integer"
			  : json_is_real(v)    ? "a real number"
			  : json_is_boolean(v) ? "a boolean"
			  : json_is_null(v)    ? "null"
			  : json_is_array(v)   ? "an array"
					       : "an object";
	char shown[64] = "";
	if (json_is_number(v))
		snprintf(shown, sizeof(shown), " (%g)", json_number_value(v));
	else if (json_is_string(v))
		snprintf(shown, sizeof(shown), " ('%.40s')", json_string_value(v));
	return dmr_err_set(err, DMR_ERR_PARSE, "%s: expected %s, got %s%s", field, vtype_name[t],
			   got, shown);
}

/* ---- spec --------------------------------------------------------------- */

void dmr_sweep_spec_free(dmr_sweep_spec_t *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->naxes; i++) {
		free(spec->axes[i].vals);
		spec->axes[i].vals = NULL;
	}
	spec->naxes = 0;
	free(spec->sets);
	spec->sets = NULL;
	spec->nsets = 0;
}

static dmr_status_t parse_opts(const json_t *obj, const char *what, const keydef_t *defs,
			       size_t ndefs, const char *wl, dmr_sweep_opt_t *out, size_t *n_p,
			       dmr_err_t *err)
{
	const char *key;
	json_t *v;
	char field[128], known[512];

	if (!json_is_object(obj))
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: expected an object", what);
	*n_p = 0;
	json_object_foreach((json_t *)obj, key, v)
	{
		snprintf(field, sizeof(field), "%s.%.60s", what, key);
		if (wl && strcmp(key, "name") == 0)
			continue;
		const keydef_t *d = find_def(defs, ndefs, key);
		if (!d || (wl && !wl_takes(d, wl))) {
			size_t o = 0;
			known[0] = '\0';
			for (size_t i = 0; i < ndefs; i++)
				if (!wl || wl_takes(&defs[i], wl))
					o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
							      o ? ", " : "", defs[i].name);
			if (!wl && (strcmp(key, "seed") == 0 || strcmp(key, "trace") == 0 ||
				    strcmp(key, "out") == 0 || strcmp(key, "quiet") == 0))
				return dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s: set by the sweep (use the top-level \"seed\" or "
				    "a seed axis; traces and --out are the sweep's)",
				    field);
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: unknown%s%s (known: %s)", field,
					   wl ? " for workload " : "", wl ? wl : "", known);
		}
		if (*n_p >= DMR_SWEEP_MAX_OPTS)
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: more than %d options", what,
					   DMR_SWEEP_MAX_OPTS);
		dmr_sweep_opt_t *o = &out[*n_p];
		snprintf(o->key, sizeof(o->key), "%s", key);
		dmr_status_t st = val_text(v, d->t, field, o->val, err);
		if (st == DMR_OK)
			st = loop_ok(key, o->val, field, err);
		if (st != DMR_OK)
			return st;
		(*n_p)++;
	}
	return DMR_OK;
}

static const dmr_sweep_opt_t *find_opt(const dmr_sweep_opt_t *o, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(o[i].key, key) == 0)
			return &o[i];
	return NULL;
}

/* A mix axis value checked as `dmreplay gen WL --mix` would (tpcc: five
 * percentages, tatp: seven, or a named row), at plan time: a bad value is
 * refused before any cell runs. */
static dmr_status_t mix_ok(const char *wl, const char *val, const char *field, dmr_err_t *err)
{
	dmr_err_t e2;
	dmr_status_t st = DMR_OK;
	if (strcmp(wl, "tpcc") == 0) {
		dmr_tpcc_cfg_t c;
		dmr_tpcc_cfg_default(&c);
		st = dmr_tpcc_mix_parse(val, &c, &e2);
	} else if (strcmp(wl, "tatp") == 0) {
		dmr_tatp_cfg_t c;
		dmr_tatp_cfg_default(&c);
		st = dmr_tatp_mix_parse(val, &c, &e2);
	}
	return st == DMR_OK ? DMR_OK : dmr_err_set(err, DMR_ERR_PARSE, "%s: %s", field, e2.msg);
}

static dmr_status_t parse_axes(const json_t *obj, dmr_sweep_spec_t *s, dmr_err_t *err)
{
	const char *key;
	json_t *arr;
	char field[160], known[512];

	if (!json_is_object(obj))
		return dmr_err_set(err, DMR_ERR_PARSE, "axes: expected an object (axis -> array)");
	json_object_foreach((json_t *)obj, key, arr)
	{
		snprintf(field, sizeof(field), "axes.%.60s", key);
		const keydef_t *d = find_def(axis_defs, NELEM(axis_defs), key);
		if (!d) {
			list_defs(axis_defs, NELEM(axis_defs), known, sizeof(known));
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: unknown axis (known: %s)",
					   field, known);
		}
		if (d->gen && !wl_takes(d, s->workload))
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: not a setting of workload %s",
					   field, s->workload);
		if (find_opt(s->run, s->nrun, key))
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: also fixed in run.%s", field,
					   key);
		if (d->gen && find_opt(s->wl, s->nwl, key))
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: also fixed in workload.%s",
					   field, key);
		if (!json_is_array(arr) || json_array_size(arr) == 0)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "%s: expected a non-empty array of values", field);
		if (s->naxes >= DMR_SWEEP_MAX_AXES)
			return dmr_err_set(err, DMR_ERR_PARSE, "%s: more than %d axes", field,
					   DMR_SWEEP_MAX_AXES);
		dmr_sweep_axis_t *a = &s->axes[s->naxes];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%s", key);
		a->gen = d->gen;
		a->vals = calloc(json_array_size(arr), sizeof(*a->vals));
		if (!a->vals)
			return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		s->naxes++;
		size_t i;
		json_t *v;
		json_array_foreach(arr, i, v)
		{
			char vf[200];
			snprintf(vf, sizeof(vf), "%s[%zu]", field, i);
			dmr_status_t st = val_text(v, d->t, vf, a->vals[i], err);
			if (st == DMR_OK && strcmp(key, "mix") == 0)
				st = mix_ok(s->workload, a->vals[i], vf, err);
			if (st == DMR_OK)
				st = loop_ok(key, a->vals[i], vf, err);
			if (st != DMR_OK)
				return st;
			for (size_t j = 0; j < i; j++)
				if (strcmp(a->vals[j], a->vals[i]) == 0)
					return dmr_err_set(err, DMR_ERR_PARSE,
							   "%s: value '%s' listed twice", vf,
							   a->vals[i]);
			a->nvals++;
		}
		if (strcmp(key, "seed") == 0)
			s->seed_axis = (int)(s->naxes - 1);
	}
	return DMR_OK;
}

/* The options a named cell takes: the axes' (seed excepted: the sweep's),
 * the run options that are no axis, and the generator settings of
 * "workload"; "txns" is the generator's, as on an axis. */
static const keydef_t *cell_def(const char *key)
{
	if (strcmp(key, "seed") == 0)
		return NULL;
	const keydef_t *d = find_def(axis_defs, NELEM(axis_defs), key);
	if (!d)
		d = find_def(run_defs, NELEM(run_defs), key);
	return d ? d : find_def(wl_defs, NELEM(wl_defs), key);
}

static void cell_known(const char *wl, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < NELEM(axis_defs) && o < len; i++)
		if (strcmp(axis_defs[i].name, "seed") != 0 &&
		    (!axis_defs[i].gen || wl_takes(&axis_defs[i], wl)))
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "",
					      axis_defs[i].name);
	for (size_t i = 0; i < NELEM(run_defs) && o < len; i++)
		if (!find_def(axis_defs, NELEM(axis_defs), run_defs[i].name))
			o += (size_t)snprintf(out + o, len - o, ", %s", run_defs[i].name);
	for (size_t i = 0; i < NELEM(wl_defs) && o < len; i++)
		if (!find_def(axis_defs, NELEM(axis_defs), wl_defs[i].name) &&
		    strcmp(wl_defs[i].name, "seed") != 0 && wl_takes(&wl_defs[i], wl))
			o += (size_t)snprintf(out + o, len - o, ", %s", wl_defs[i].name);
}

#define MAX_SETS 10000

/* "cells": a non-empty array of objects, each a "name" (unique, a safe
 * string) and options. Messages name the field: cells[I] (NAME).KEY. */
static dmr_status_t parse_cells(const json_t *arr, dmr_sweep_spec_t *s, dmr_err_t *err)
{
	char known[1024];
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "cells: expected a non-empty array of objects (each a "
				   "\"name\" and options)");
	size_t n = json_array_size(arr);
	if (n > MAX_SETS)
		return dmr_err_set(err, DMR_ERR_PARSE, "cells: more than %d cells", MAX_SETS);
	s->sets = calloc(n, sizeof(*s->sets));
	if (!s->sets)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	size_t i;
	json_t *obj;
	json_array_foreach((json_t *)arr, i, obj)
	{
		dmr_sweep_set_t *set = &s->sets[i];
		if (!json_is_object(obj))
			return dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "cells[%zu]: expected an object (a \"name\" and options)", i);
		json_t *nm = json_object_get(obj, "name");
		if (!nm)
			return dmr_err_set(err, DMR_ERR_PARSE,
					   "cells[%zu].name: missing (every cell needs a name)", i);
		if (!json_is_string(nm) || !safe_string(json_string_value(nm)) ||
		    strlen(json_string_value(nm)) >= sizeof(set->name))
			return dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "cells[%zu].name: expected a string of 1..%zu characters without a "
			    "leading '-', space , ; = \" ' \\ ` $",
			    i, sizeof(set->name) - 1);
		snprintf(set->name, sizeof(set->name), "%s", json_string_value(nm));
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->sets[j].name, set->name) == 0)
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "cells[%zu].name: '%s' also names cells[%zu] "
						   "(cell names must be unique)",
						   i, set->name, j);
		s->nsets = i + 1;
		const char *key;
		json_t *v;
		json_object_foreach(obj, key, v)
		{
			char field[200];
			snprintf(field, sizeof(field), "cells[%zu] (%s).%.60s", i, set->name, key);
			if (strcmp(key, "name") == 0)
				continue;
			if (strcmp(key, "seed") == 0 || strcmp(key, "trace") == 0 ||
			    strcmp(key, "out") == 0 || strcmp(key, "quiet") == 0)
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s: set by the sweep (use the top-level "
						   "\"seed\" or a seed axis)",
						   field);
			const keydef_t *d = cell_def(key);
			if (!d) {
				cell_known(s->workload, known, sizeof(known));
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s: unknown option (known: %s)", field, known);
			}
			if (d->gen && !wl_takes(d, s->workload))
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s: not a setting of workload %s", field,
						   s->workload);
			for (size_t a = 0; a < s->naxes; a++)
				if (strcmp(s->axes[a].name, key) == 0)
					return dmr_err_set(err, DMR_ERR_PARSE,
							   "%s: also an axis (axes.%s)", field,
							   key);
			if (find_opt(s->run, s->nrun, key))
				return dmr_err_set(err, DMR_ERR_PARSE, "%s: also fixed in run.%s",
						   field, key);
			if (d->gen && find_opt(s->wl, s->nwl, key))
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "%s: also fixed in workload.%s", field, key);
			if (set->nopts >= DMR_SWEEP_MAX_OPTS)
				return dmr_err_set(err, DMR_ERR_PARSE,
						   "cells[%zu]: more than %d options", i,
						   DMR_SWEEP_MAX_OPTS);
			dmr_sweep_opt_t *o = &set->opts[set->nopts];
			snprintf(o->key, sizeof(o->key), "%s", key);
			dmr_status_t st = val_text(v, d->t, field, o->val, err);
			if (st == DMR_OK)
				st = loop_ok(key, o->val, field, err);
			if (st != DMR_OK)
				return st;
			set->gen[set->nopts] = (uint8_t)d->gen;
			set->nopts++;
		}
	}
	return DMR_OK;
}

dmr_status_t dmr_sweep_spec_parse(const char *text, const char *name, dmr_sweep_spec_t *spec_p,
				  dmr_err_t *err)
{
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	dmr_sweep_spec_t *s = calloc(1, sizeof(*s));
	dmr_status_t st = DMR_OK;
	const char *key;
	json_t *v;

	if (!s) {
		json_decref(root);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	if (!root) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s:%d:%d: %s", name, jerr.line, jerr.column,
				 jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: expected a JSON object", name);
		goto out;
	}
	json_object_foreach(root, key, v)
	{
		static const char *known[] = {"name", "description", "workload", "axes",   "cells",
					      "reps", "seed",	     "run",	 "comment"};
		size_t i;
		for (i = 0; i < NELEM(known); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == NELEM(known)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: %.60s: unknown field (known: name, description, "
					 "workload, axes, cells, reps, seed, run, comment)",
					 name, key);
			goto out;
		}
	}
	s->seed_axis = -1;
	s->reps = 1;
	s->seed_base = 1;

	v = json_object_get(root, "name");
	if (v && (!json_is_string(v) || !safe_string(json_string_value(v)) ||
		  strlen(json_string_value(v)) >= sizeof(s->name))) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: name: expected a short string", name);
		goto out;
	}
	if (v)
		snprintf(s->name, sizeof(s->name), "%s", json_string_value(v));

	json_t *wl = json_object_get(root, "workload");
	if (!wl || !json_is_object(wl)) {
		st =
		    dmr_err_set(err, DMR_ERR_PARSE, "%s: workload: missing or not an object", name);
		goto out;
	}
	v = json_object_get(wl, "name");
	if (!v || !json_is_string(v) ||
	    (strcmp(json_string_value(v), "tpcc") && strcmp(json_string_value(v), "smallbank") &&
	     strcmp(json_string_value(v), "ycsb") && strcmp(json_string_value(v), "tatp"))) {
		st = dmr_err_set(
		    err, DMR_ERR_PARSE,
		    "%s: workload.name: expected \"tpcc\", \"smallbank\", \"ycsb\" or \"tatp\"",
		    name);
		goto out;
	}
	snprintf(s->workload, sizeof(s->workload), "%s", json_string_value(v));
	st = parse_opts(wl, "workload", wl_defs, NELEM(wl_defs), s->workload, s->wl, &s->nwl, err);
	if (st != DMR_OK)
		goto out;
	const dmr_sweep_opt_t *ts = find_opt(s->wl, s->nwl, "seed");
	if (ts && strcmp(ts->val, "rep") != 0) {
		s->trace_seed_fixed = 1;
		s->trace_seed = strtoull(ts->val, NULL, 10);
	}

	v = json_object_get(root, "run");
	if (v) {
		st = parse_opts(v, "run", run_defs, NELEM(run_defs), NULL, s->run, &s->nrun, err);
		if (st != DMR_OK)
			goto out;
	}
	v = json_object_get(root, "seed");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE, "%s: seed: expected an integer >= 0",
					 name);
			goto out;
		}
		s->seed_base = (uint64_t)json_integer_value(v);
	}
	v = json_object_get(root, "axes");
	if (v) {
		st = parse_axes(v, s, err);
		if (st != DMR_OK) {
			/* messages from parse_axes name the field; add the file */
			char m[sizeof(err->msg)];
			if (err) {
				snprintf(m, sizeof(m), "%s", err->msg);
				dmr_err_set(err, st, "%s: %s", name, m);
			}
			goto out;
		}
	}
	v = json_object_get(root, "cells");
	if (v) {
		st = parse_cells(v, s, err);
		if (st != DMR_OK)
			goto out; /* the file is added below */
	}
	v = json_object_get(root, "reps");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 100000) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: reps: expected an integer in 1..100000", name);
			goto out;
		}
		s->reps = (uint32_t)json_integer_value(v);
	}
	if (s->seed_axis >= 0) {
		size_t n = s->axes[s->seed_axis].nvals;
		if (v && s->reps != n) {
			st = dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "%s: reps: %u, but the seed axis lists %zu seeds (with a seed "
			    "axis each seed is one repetition: drop reps)",
			    name, s->reps, n);
			goto out;
		}
		if (json_object_get(root, "seed")) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: seed: a base seed and a seed axis exclude each other",
					 name);
			goto out;
		}
		s->reps = (uint32_t)n;
	}
	/* `dmreplay gen --seed` takes 0..UINT32_MAX (traces/gencli.c): a trace
	 * seed beyond it would fail only when its run starts */
	if (s->trace_seed_fixed && s->trace_seed > UINT32_MAX) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: workload.seed: %" PRIu64 " is above %" PRIu32
				 " (the generator takes 32-bit seeds)",
				 name, s->trace_seed, UINT32_MAX);
		goto out;
	}
	if (!s->trace_seed_fixed && s->seed_axis >= 0) {
		const dmr_sweep_axis_t *a = &s->axes[s->seed_axis];
		for (size_t i = 0; i < a->nvals; i++)
			if (strtoull(a->vals[i], NULL, 10) > UINT32_MAX) {
				st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s: axes.seed[%zu]: %s is above %" PRIu32
				    " (the trace seed follows the run seed and the "
				    "generator takes 32-bit seeds; or fix workload.seed)",
				    name, i, a->vals[i], UINT32_MAX);
				goto out;
			}
	}
	if (!s->trace_seed_fixed && s->seed_axis < 0 && s->seed_base + (s->reps - 1) > UINT32_MAX) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: seed: %" PRIu64 " + %u reps goes above %" PRIu32
				 " (the trace seed follows the run seed and the generator "
				 "takes 32-bit seeds; or fix workload.seed)",
				 name, s->seed_base, s->reps, UINT32_MAX);
		goto out;
	}
	if (!s->name[0]) {
		const char *b = strrchr(name, '/');
		b = b ? b + 1 : name;
		size_t n = strcspn(b, ".");
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(n < 63 ? n : 63), b);
	}
out:
	json_decref(root);
	if (st != DMR_OK && err && st == DMR_ERR_PARSE &&
	    strncmp(err->msg, name, strlen(name)) != 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", err->msg);
		dmr_err_set(err, st, "%s: %s", name, m);
	}
	if (st != DMR_OK) {
		dmr_sweep_spec_free(s);
		free(s);
		return st;
	}
	*spec_p = *s;
	free(s);
	return DMR_OK;
}

dmr_status_t dmr_sweep_spec_load(const char *path, dmr_sweep_spec_t *spec_p, dmr_err_t *err)
{
	char *buf;
	size_t len;
	dmr_status_t st = dmr_file_read_all(path, (size_t)1 << 30, &buf, &len, err);
	if (st != DMR_OK)
		return st;
	if (len == 0) {
		free(buf);
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: empty file", path);
	}
	st = dmr_sweep_spec_parse(buf, path, spec_p, err);
	free(buf);
	return st;
}
