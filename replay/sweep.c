/*
 * replay/sweep.c - `dmreplay sweep`: spec parsing, planning, resume, and the
 * runner (sequential, or GNU parallel for --jobs / --hosts). Contract in
 * sweep.h; user documentation in docs/SWEEPS.md.
 */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../traces/workload.h"
#include "report.h"

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
    [V_SEED] = "an integer >= 0 or \"rep\"",
};

typedef struct keydef {
	const char *name;
	enum vtype t;
	int gen;	 /* generator setting (else a run option) */
	const char *wls; /* generator settings: workloads that take it ("" = all) */
} keydef_t;

static const keydef_t axis_defs[] = {
    {"regime", V_REGIME, 1, ""},      {"mix", V_STR, 1, "tpcc"},
    {"warehouses", V_POS, 1, "tpcc"}, {"txns", V_POS, 1, ""},
    {"loop", V_STR, 0, NULL},	      {"threads", V_POS, 0, NULL},
    {"coros", V_POS, 0, NULL},	      {"cns", V_POS, 0, NULL},
    {"seed", V_UINT, 0, NULL},	      {"retries", V_UINT, 0, NULL},
    {"profile", V_STR, 0, NULL},      {"ai_step", V_POS, 0, NULL},
    {"md_factor", V_NUMP, 0, NULL},   {"loop_window_ms", V_NUMP, 0, NULL},
    {"duration", V_DUR, 0, NULL},
};

static const keydef_t run_defs[] = {
    {"backend", V_STR, 0, NULL},     {"profile", V_STR, 0, NULL},
    {"cns", V_POS, 0, NULL},	     {"threads", V_POS, 0, NULL},
    {"coros", V_POS, 0, NULL},	     {"txns", V_POS, 0, NULL},
    {"duration", V_DUR, 0, NULL},    {"retries", V_UINT, 0, NULL},
    {"backoff_us", V_NUM0, 0, NULL}, {"mr_size", V_SIZE, 0, NULL},
    {"mtu", V_POS, 0, NULL},	     {"window_ms", V_NUMP, 0, NULL},
    {"loop", V_STR, 0, NULL},	     {"ai_step", V_POS, 0, NULL},
    {"md_factor", V_NUMP, 0, NULL},  {"loop_window_ms", V_NUMP, 0, NULL},
};

static const keydef_t wl_defs[] = {
    {"regime", V_REGIME, 1, ""},       {"txns", V_POS, 1, ""},
    {"seed", V_SEED, 1, ""},	       {"mix", V_STR, 1, "tpcc"},
    {"warehouses", V_POS, 1, "tpcc"},  {"order_cap", V_POS, 1, "tpcc"},
    {"payment_cap", V_POS, 1, "tpcc"}, {"accounts", V_POS, 1, "smallbank"},
    {"zipf", V_NUMP, 1, "smallbank"},  {"workload", V_STR, 1, "ycsb"},
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
	return strcmp(d->wls, wl) == 0;
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

static int duration_text(const char *s)
{
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || errno || !(x > 0) || *s == '-' || *s == '+')
		return 0;
	return *end == '\0' || strcmp(end, "s") == 0 || strcmp(end, "ms") == 0;
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
			    "'-', or one of: space , ; = \" ' \\ ` $)",
			    field, json_string_value(v), DMR_SWEEP_VAL_MAX - 1);
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
		if (json_is_string(v))
			return val_text(v, V_STR, field, out, err);
		return val_text(v, V_POS, field, out, err) == DMR_OK
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
		static const char *known[] = {"name", "description", "workload", "axes",
					      "reps", "seed",	     "run",	 "comment"};
		size_t i;
		for (i = 0; i < NELEM(known); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == NELEM(known)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: %.60s: unknown field (known: name, description, "
					 "workload, axes, reps, seed, run, comment)",
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
	     strcmp(json_string_value(v), "ycsb"))) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: workload.name: expected \"tpcc\", \"smallbank\" or \"ycsb\"",
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
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
			}
			buf = nb;
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
	}
	if (!buf) {
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: empty file", path);
	}
	buf[len] = '\0';
	dmr_status_t st = dmr_sweep_spec_parse(buf, path, spec_p, err);
	free(buf);
	return st;
}

/* ---- plan --------------------------------------------------------------- */

void dmr_sweep_cell_dirname(const char *cell, char *out, size_t out_len)
{
	size_t o = 0;
	for (const char *p = cell; *p && o + 1 < out_len; p++) {
		char c = *p;
		if (c == ';')
			c = '+';
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '=' || c == '+' ||
			   c == '-'))
			c = '_';
		out[o++] = c;
	}
	out[o] = '\0';
}

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static int opt_cmp(const void *a, const void *b)
{
	return strcmp(((const dmr_sweep_opt_t *)a)->key, ((const dmr_sweep_opt_t *)b)->key);
}

/* The generator settings of a job, sorted by key (seed included). */
static size_t gen_settings(const dmr_sweep_spec_t *s, const size_t *vidx, uint64_t trace_seed,
			   dmr_sweep_opt_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nwl; i++)
		if (strcmp(s->wl[i].key, "seed") != 0)
			out[n++] = s->wl[i];
	for (size_t a = 0; a < s->naxes; a++)
		if (s->axes[a].gen) {
			snprintf(out[n].key, sizeof(out[n].key), "%s", s->axes[a].name);
			snprintf(out[n].val, sizeof(out[n].val), "%s", s->axes[a].vals[vidx[a]]);
			n++;
		}
	snprintf(out[n].key, sizeof(out[n].key), "seed");
	snprintf(out[n].val, sizeof(out[n].val), "%" PRIu64, trace_seed);
	n++;
	qsort(out, n, sizeof(*out), opt_cmp);
	return n;
}

void dmr_sweep_plan_free(dmr_sweep_plan_t *plan)
{
	if (!plan || !plan->jobs)
		return;
	free(plan->jobs[0].vidx);
	free(plan->jobs);
	plan->jobs = NULL;
	plan->njobs = 0;
}

dmr_status_t dmr_sweep_plan_build(const dmr_sweep_spec_t *s, dmr_sweep_plan_t *plan_p,
				  dmr_err_t *err)
{
	dmr_sweep_plan_t p;
	memset(&p, 0, sizeof(p));
	size_t ncells = 1;
	for (size_t a = 0; a < s->naxes; a++) {
		if ((int)a == s->seed_axis)
			continue;
		if (ncells > 1000000 / s->axes[a].nvals)
			return dmr_err_set(err, DMR_ERR_RANGE, "sweep: more than 1000000 cells");
		ncells *= s->axes[a].nvals;
	}
	if ((uint64_t)ncells * s->reps > 1000000)
		return dmr_err_set(err, DMR_ERR_RANGE, "sweep: more than 1000000 runs");
	p.ncells = ncells;
	p.njobs = ncells * s->reps;
	p.jobs = calloc(p.njobs, sizeof(*p.jobs));
	size_t *vidx = calloc(p.njobs * (s->naxes ? s->naxes : 1), sizeof(size_t));
	if (!p.jobs || !vidx) {
		free(p.jobs);
		free(vidx);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	dmr_sweep_opt_t g[DMR_SWEEP_MAX_OPTS + DMR_SWEEP_MAX_AXES + 1];
	for (uint32_t r = 0; r < s->reps; r++) {
		for (size_t c = 0; c < ncells; c++) {
			dmr_sweep_job_t *j = &p.jobs[r * ncells + c];
			j->vidx = vidx + (r * ncells + c) * (s->naxes ? s->naxes : 1);
			j->cell_idx = (uint32_t)c;
			j->rep = r;
			size_t rem = c;
			for (size_t a = s->naxes; a-- > 0;) {
				if ((int)a == s->seed_axis) {
					j->vidx[a] = r;
					continue;
				}
				j->vidx[a] = rem % s->axes[a].nvals;
				rem /= s->axes[a].nvals;
			}
			size_t o = 0;
			for (size_t a = 0; a < s->naxes; a++) {
				if ((int)a == s->seed_axis)
					continue;
				o += (size_t)snprintf(j->cell + o, sizeof(j->cell) - o, "%s%s=%s",
						      o ? ";" : "", s->axes[a].name,
						      s->axes[a].vals[j->vidx[a]]);
				if (o >= sizeof(j->cell))
					goto toolong;
			}
			if (o == 0)
				snprintf(j->cell, sizeof(j->cell), "default");
			char d[sizeof(j->dir)];
			dmr_sweep_cell_dirname(j->cell, d, sizeof(d) - 16);
			if (snprintf(j->dir, sizeof(j->dir), "%s-r%u", d, r) >= (int)sizeof(j->dir))
				goto toolong;
			j->seed = s->seed_axis >= 0
				      ? strtoull(s->axes[s->seed_axis].vals[r], NULL, 10)
				      : s->seed_base + r;
			j->trace_seed = s->trace_seed_fixed ? s->trace_seed : j->seed;
			size_t ng = gen_settings(s, j->vidx, j->trace_seed, g);
			char key[1024];
			o = (size_t)snprintf(key, sizeof(key), "%s", s->workload);
			for (size_t i = 0; i < ng && o < sizeof(key); i++)
				o += (size_t)snprintf(key + o, sizeof(key) - o, ";%s=%s", g[i].key,
						      g[i].val);
			if (o >= sizeof(key))
				goto toolong;
			char san[400];
			dmr_sweep_cell_dirname(key, san, sizeof(san));
			snprintf(j->trace, sizeof(j->trace), "%s-%08x.csv", san, fnv32(key));
		}
	}
	/* two cells must not share a directory */
	for (size_t a = 0; a < ncells && ncells <= 20000; a++)
		for (size_t b = a + 1; b < ncells; b++)
			if (strcmp(p.jobs[a].dir, p.jobs[b].dir) == 0) {
				dmr_status_t st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "axes: cells '%s' and '%s' map to the same directory %s",
				    p.jobs[a].cell, p.jobs[b].cell, p.jobs[a].dir);
				p.jobs[0].vidx = vidx;
				dmr_sweep_plan_free(&p);
				return st;
			}
	*plan_p = p;
	return DMR_OK;
toolong:
	free(vidx);
	free(p.jobs);
	return dmr_err_set(err, DMR_ERR_PARSE, "axes: a cell name is longer than 500 characters");
}

/* ---- resume ------------------------------------------------------------- */

#define MAX_COLS 256

dmr_status_t dmr_sweep_plan_resume(dmr_sweep_plan_t *plan, const char *path, int repair,
				   dmr_err_t *err)
{
	plan->header[0] = '\0';
	plan->warning[0] = '\0';
	plan->dropped = 0;
	plan->foreign = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return DMR_OK;
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	size_t lineno = 0, ncols = 0;
	int ccell = -1, crep = -1;
	off_t good_end = 0; /* offset after the last complete line */
	dmr_status_t st = DMR_OK;
	char *fields[MAX_COLS];

	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] != '\n') {
			/* a write cut short: drop it */
			plan->dropped = 1;
			snprintf(plan->warning, sizeof(plan->warning),
				 "%s:%zu: last line has no newline (a write cut short): %s", path,
				 lineno, repair ? "dropped it" : "ignored (would be dropped)");
			break;
		}
		good_end += n;
		line[--n] = '\0';
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (lineno == 1) {
			snprintf(plan->header, sizeof(plan->header), "%s", line);
			int nf = dmr_report_csv_split(line, fields, MAX_COLS);
			if (nf < 2 || nf > MAX_COLS) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:1: not a sweep summary header", path);
				goto out;
			}
			ncols = (size_t)nf;
			for (int i = 0; i < nf; i++) {
				if (strcmp(fields[i], "cell") == 0)
					ccell = i;
				if (strcmp(fields[i], "rep") == 0)
					crep = i;
			}
			if (ccell < 0 || crep < 0) {
				st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s:1: header has no 'cell' and 'rep' columns: not a "
				    "sweep summary (use another --out)",
				    path);
				goto out;
			}
			continue;
		}
		int nf = dmr_report_csv_split(line, fields, MAX_COLS);
		if (nf != (int)ncols) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%zu: %d fields, the header has %zu (a corrupt row: "
					 "fix or remove it; the sweep never writes one)",
					 path, lineno, nf, ncols);
			goto out;
		}
		char *end;
		errno = 0;
		unsigned long rep = strtoul(fields[crep], &end, 10);
		if (!fields[crep][0] || *end || errno || fields[crep][0] == '-') {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%zu: field 'rep': '%s' is not an integer", path,
					 lineno, fields[crep]);
			goto out;
		}
		int found = 0;
		for (size_t i = 0; i < plan->njobs; i++) {
			dmr_sweep_job_t *j = &plan->jobs[i];
			if (j->rep == rep && strcmp(j->cell, fields[ccell]) == 0) {
				found = 1;
				if (!j->done) {
					j->done = 1;
					plan->ndone++;
				}
				break;
			}
		}
		if (!found)
			plan->foreign++;
	}
	if (ferror(f))
		st = dmr_err_set(err, DMR_ERR_IO, "%s: read error", path);
	if (st == DMR_OK && plan->dropped && repair) {
		if (truncate(path, good_end) != 0)
			st = dmr_err_set(err, DMR_ERR_IO, "%s: cannot drop the cut line: %s", path,
					 strerror(errno));
		if (good_end == 0)
			plan->header[0] = '\0';
	}
out:
	free(line);
	fclose(f);
	return st;
}

/* ---- argument vectors --------------------------------------------------- */

typedef struct argv_b {
	char **v;
	size_t n, cap;
	int oom;
} argv_b_t;

static void av_add(argv_b_t *b, const char *s)
{
	if (b->oom)
		return;
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char **nv = realloc(b->v, cap * sizeof(*nv));
		if (!nv) {
			b->oom = 1;
			return;
		}
		b->v = nv;
		b->cap = cap;
	}
	char *d = strdup(s);
	if (!d) {
		b->oom = 1;
		return;
	}
	b->v[b->n++] = d;
	b->v[b->n] = NULL;
}

static void av_opt(argv_b_t *b, const char *key, const char *val)
{
	char o[64];
	size_t i = 0;
	o[i++] = '-';
	o[i++] = '-';
	for (const char *k = key; *k && i + 1 < sizeof(o); k++)
		o[i++] = *k == '_' ? '-' : *k;
	o[i] = '\0';
	av_add(b, o);
	av_add(b, val);
}

void dmr_sweep_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **p = argv; *p; p++)
		free(*p);
	free(argv);
}

static char **av_done(argv_b_t *b)
{
	if (b->oom) {
		if (b->v) {
			b->v[b->n] = NULL;
			dmr_sweep_argv_free(b->v);
		}
		return NULL;
	}
	return b->v;
}

char **dmr_sweep_gen_argv(const dmr_sweep_spec_t *s, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path)
{
	argv_b_t b = {0};
	dmr_sweep_opt_t g[DMR_SWEEP_MAX_OPTS + DMR_SWEEP_MAX_AXES + 1];
	size_t ng = gen_settings(s, job->vidx, job->trace_seed, g);
	av_add(&b, exe);
	av_add(&b, "gen");
	av_add(&b, s->workload);
	for (size_t i = 0; i < ng; i++)
		av_opt(&b, g[i].key, g[i].val);
	av_add(&b, "-o");
	av_add(&b, trace_path);
	return av_done(&b);
}

char **dmr_sweep_run_argv(const dmr_sweep_spec_t *s, const dmr_sweep_job_t *job, const char *exe,
			  const char *trace_path, const char *cell_dir)
{
	argv_b_t b = {0};
	char seed[32];
	snprintf(seed, sizeof(seed), "%" PRIu64, job->seed);
	av_add(&b, exe);
	av_add(&b, "run");
	av_add(&b, "--trace");
	av_add(&b, trace_path);
	av_add(&b, "--out");
	av_add(&b, cell_dir);
	av_add(&b, "--seed");
	av_add(&b, seed);
	av_add(&b, "--quiet");
	for (size_t i = 0; i < s->nrun; i++)
		av_opt(&b, s->run[i].key, s->run[i].val);
	for (size_t a = 0; a < s->naxes; a++)
		if (!s->axes[a].gen && (int)a != s->seed_axis)
			av_opt(&b, s->axes[a].name, s->axes[a].vals[job->vidx[a]]);
	return av_done(&b);
}

/* ---- running ------------------------------------------------------------ */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	g_stop = sig;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

typedef struct sweep_ctx {
	const dmr_sweep_spec_t *spec;
	const char *spec_path; /* absolute */
	char dir[PATH_MAX];    /* absolute */
	char exe[PATH_MAX];    /* runs `gen` and `run` */
	char self[PATH_MAX];   /* runs `sweep --job-cell` under GNU parallel */
	char summary[PATH_MAX + 32];
	char header[4096]; /* summary.csv header in force, "" = none yet */
	int tty;
	double t0;
	size_t total, before, now, failed;
} sweep_ctx_t;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Run argv with stdout+stderr to log; forward a stop signal to the child
 * once. Returns the exit status, 128+signal, or -1 when it did not start. */
static int spawn_wait(char **argv, const char *log)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd < 0 || nul < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status, forwarded = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (g_stop && !forwarded) {
			kill(pid, SIGINT);
			forwarded = 1;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Last non-empty line of a file (for failure messages). */
static void last_line(const char *path, char *out, size_t len)
{
	out[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char buf[1024];
	while (fgets(buf, sizeof(buf), f)) {
		size_t n = strlen(buf);
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		if (n)
			snprintf(out, len, "%s", buf);
	}
	fclose(f);
}

/* Generate the job's trace unless present (under a per-trace lock). */
static dmr_status_t ensure_trace(sweep_ctx_t *c, const dmr_sweep_job_t *j, char *path, size_t len,
				 dmr_err_t *err)
{
	char tdir[PATH_MAX + 16], lock[PATH_MAX + 700], tmp[PATH_MAX + 700], log[PATH_MAX + 700];
	snprintf(tdir, sizeof(tdir), "%s/traces", c->dir);
	snprintf(path, len, "%s/%s", tdir, j->trace);
	if (access(path, R_OK) == 0)
		return DMR_OK;
	if (mkdirs(tdir) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", tdir, strerror(errno));
	snprintf(lock, sizeof(lock), "%s/.%s.lock", tdir, j->trace);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", lock, strerror(errno));
	while (flock(lfd, LOCK_EX) != 0) {
		if (errno != EINTR || g_stop) {
			close(lfd);
			return dmr_err_set(err, DMR_ERR_IO, "%s: lock: %s", lock, strerror(errno));
		}
	}
	dmr_status_t st = DMR_OK;
	if (access(path, R_OK) == 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", tdir, j->trace, (int)getpid());
	snprintf(log, sizeof(log), "%s/%s.log", tdir, j->trace);
	char **av = dmr_sweep_gen_argv(c->spec, j, c->exe, tmp);
	if (!av) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	int rc = spawn_wait(av, log);
	dmr_sweep_argv_free(av);
	if (rc != 0 || rename(tmp, path) != 0) {
		char ll[300];
		last_line(log, ll, sizeof(ll));
		remove(tmp);
		st = dmr_err_set(err, DMR_ERR_IO, "generating %s failed (status %d): %s (log %s)",
				 j->trace, rc, ll, log);
	}
out:
	flock(lfd, LOCK_UN);
	close(lfd);
	return st;
}

/* Read a 2-line CSV (header, row) into hdr and row (no newlines). */
static dmr_status_t read_run_summary(const char *path, char *hdr, size_t hlen, char *row,
				     size_t rlen, dmr_err_t *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
	int ok = fgets(hdr, (int)hlen, f) && fgets(row, (int)rlen, f);
	fclose(f);
	size_t hn = ok ? strlen(hdr) : 0, rn = ok ? strlen(row) : 0;
	if (!ok || !hn || !rn || hdr[hn - 1] != '\n' || row[rn - 1] != '\n')
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: not a header and one row", path);
	hdr[hn - 1] = '\0';
	row[rn - 1] = '\0';
	if (strchr(row, '\t') || strchr(hdr, '\t'))
		return dmr_err_set(err, DMR_ERR_PARSE, "%s: a tab in the summary", path);
	return DMR_OK;
}

/* Run one (cell, rep): trace, run, and the combined header and row. */
static dmr_status_t run_job(sweep_ctx_t *c, const dmr_sweep_job_t *j, char *hdr, size_t hlen,
			    char *row, size_t rlen, dmr_err_t *err)
{
	char trace[PATH_MAX + 700], cdir[PATH_MAX + 700], sum[PATH_MAX + 800], log[PATH_MAX + 800];
	dmr_status_t st = ensure_trace(c, j, trace, sizeof(trace), err);
	if (st != DMR_OK)
		return st;
	if (g_stop)
		return dmr_err_set(err, DMR_ERR_IO, "interrupted");
	snprintf(cdir, sizeof(cdir), "%s/cells/%s", c->dir, j->dir);
	if (mkdirs(cdir) != 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", cdir, strerror(errno));
	snprintf(sum, sizeof(sum), "%s/summary.csv", cdir);
	snprintf(log, sizeof(log), "%s/run.log", cdir);
	if (remove(sum) != 0 && errno != ENOENT) /* a stale one must not count */
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", sum, strerror(errno));
	char **av = dmr_sweep_run_argv(c->spec, j, c->exe, trace, cdir);
	if (!av)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	int rc = spawn_wait(av, log);
	dmr_sweep_argv_free(av);
	if (rc != 0) {
		char ll[300];
		last_line(log, ll, sizeof(ll));
		return dmr_err_set(err, DMR_ERR_REMOTE, "run exited with status %d: %s (log %s)",
				   rc, ll, log);
	}
	char h[4096], r[8192];
	st = read_run_summary(sum, h, sizeof(h), r, sizeof(r), err);
	if (st != DMR_OK)
		return st;
	snprintf(hdr, hlen, "cell,rep,%s", h);
	if ((size_t)snprintf(row, rlen, "%s,%u,%s", j->cell, j->rep, r) >= rlen)
		return dmr_err_set(err, DMR_ERR_RANGE, "%s: row too long", sum);
	return DMR_OK;
}

/* Append one row to summary.csv with one write() (header first when the
 * file is empty). */
static dmr_status_t append_row(sweep_ctx_t *c, const char *hdr, const char *row, dmr_err_t *err)
{
	if (c->header[0] && strcmp(c->header, hdr) != 0)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "%s: its columns differ from this run's (dmreplay's summary "
				   "columns changed since the sweep started?): use a fresh --out",
				   c->summary);
	int fd = open(c->summary, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", c->summary, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		close(fd);
		return dmr_err_set(err, DMR_ERR_IO, "%s: %s", c->summary, strerror(errno));
	}
	size_t hl = strlen(hdr), rl = strlen(row);
	char *buf = malloc(hl + rl + 3);
	if (!buf) {
		close(fd);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	size_t len = 0;
	if (sb.st_size == 0) {
		memcpy(buf, hdr, hl);
		buf[hl] = '\n';
		len = hl + 1;
	}
	memcpy(buf + len, row, rl);
	len += rl;
	buf[len++] = '\n';
	ssize_t w;
	do
		w = write(fd, buf, len);
	while (w < 0 && errno == EINTR);
	free(buf);
	dmr_status_t st = DMR_OK;
	if (w != (ssize_t)len) {
		int e = w < 0 ? errno : ENOSPC;
		if (ftruncate(fd, sb.st_size) != 0) { /* never leave half a row */
		}
		st = dmr_err_set(err, DMR_ERR_IO, "%s: append failed: %s", c->summary, strerror(e));
	} else {
		fdatasync(fd);
		if (!c->header[0])
			snprintf(c->header, sizeof(c->header), "%s", hdr);
	}
	close(fd);
	return st;
}

static void fmt_dur(double s, char *out, size_t len)
{
	if (s < 0 || s != s)
		snprintf(out, len, "?");
	else if (s < 60)
		snprintf(out, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(out, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static void progress(sweep_ctx_t *c, const char *current, int final)
{
	if (!c->tty)
		return;
	double el = now_s() - c->t0;
	size_t done = c->before + c->now;
	size_t left = c->total - done - c->failed;
	char eta[32], els[32];
	fmt_dur(c->now ? el / c->now * left : -1, eta, sizeof(eta));
	fmt_dur(el, els, sizeof(els));
	fprintf(stderr, "\r\033[Ksweep: %zu/%zu done", done, c->total);
	if (c->failed)
		fprintf(stderr, ", %zu failed", c->failed);
	fprintf(stderr, ", %s elapsed, %s left", els, left ? eta : "0s");
	if (current && !final)
		fprintf(stderr, "  [%.60s]", current);
	if (final)
		fprintf(stderr, "\n");
	fflush(stderr);
}

static void report_fail(sweep_ctx_t *c, const char *cell, unsigned rep, const char *msg)
{
	if (c->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "sweep: cell %s rep %u failed: %s\n", cell, rep, msg);
}

static int run_sequential(sweep_ctx_t *c, dmr_sweep_plan_t *p)
{
	char hdr[4096 + 16], row[8192 + 600];
	for (size_t i = 0; i < p->njobs && !g_stop; i++) {
		dmr_sweep_job_t *j = &p->jobs[i];
		if (j->done)
			continue;
		char cur[600];
		snprintf(cur, sizeof(cur), "%s r%u", j->cell, j->rep);
		progress(c, cur, 0);
		dmr_err_t err = {{0}};
		dmr_status_t st = run_job(c, j, hdr, sizeof(hdr), row, sizeof(row), &err);
		if (g_stop && st != DMR_OK)
			break; /* a run cut short by the signal is not a result */
		if (st == DMR_OK)
			st = append_row(c, hdr, row, &err); /* finished: keep it */
		if (st == DMR_OK) {
			j->done = 1;
			c->now++;
		} else {
			c->failed++;
			report_fail(c, j->cell, j->rep, err.msg);
			if (st == DMR_ERR_PARSE && strstr(err.msg, "columns differ"))
				return 1;
		}
	}
	return 0;
}

/* --jobs / --hosts: GNU parallel runs `EXE sweep SPEC --out DIR --job-cell
 * C --job-rep R` per pending job; each prints its row on stdout, which we
 * read here and append (one writer). */
static int run_parallel(sweep_ctx_t *c, dmr_sweep_plan_t *p, unsigned jobs, const char *hosts)
{
	char jl[PATH_MAX + 32];
	snprintf(jl, sizeof(jl), "%s/.jobs.tsv", c->dir);
	FILE *f = fopen(jl, "w");
	if (!f) {
		fprintf(stderr, "sweep: %s: %s\n", jl, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < p->njobs; i++)
		if (!p->jobs[i].done)
			fprintf(f, "%s\t%u\t%s\n", p->jobs[i].cell, p->jobs[i].rep, p->jobs[i].dir);
	if (fclose(f) != 0) {
		fprintf(stderr, "sweep: %s: write failed\n", jl);
		return 1;
	}
	argv_b_t b = {0};
	char nj[16], ret1[PATH_MAX + 64], ret2[PATH_MAX + 64];
	snprintf(nj, sizeof(nj), "%u", jobs);
	av_add(&b, "parallel");
	av_add(&b, "--will-cite");
	av_add(&b, "-j");
	av_add(&b, nj);
	av_add(&b, "--colsep");
	av_add(&b, "\t");
	av_add(&b, "-q");
	if (hosts) {
		snprintf(ret1, sizeof(ret1), "%s/cells/{3}/summary.csv", c->dir);
		snprintf(ret2, sizeof(ret2), "%s/cells/{3}/timeseries.csv", c->dir);
		av_add(&b, "-S");
		av_add(&b, hosts);
		av_add(&b, "--basefile");
		av_add(&b, c->spec_path);
		av_add(&b, "--return");
		av_add(&b, ret1);
		av_add(&b, "--return");
		av_add(&b, ret2);
	}
	av_add(&b, c->self);
	av_add(&b, "sweep");
	av_add(&b, c->spec_path);
	av_add(&b, "--out");
	av_add(&b, c->dir);
	av_add(&b, "--job-cell");
	av_add(&b, "{1}");
	av_add(&b, "--job-rep");
	av_add(&b, "{2}");
	av_add(&b, "::::");
	av_add(&b, jl);
	char **av = av_done(&b);
	if (!av) {
		fprintf(stderr, "sweep: out of memory\n");
		return 1;
	}
	int pfd[2];
	if (pipe(pfd) != 0) {
		dmr_sweep_argv_free(av);
		fprintf(stderr, "sweep: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		close(pfd[0]);
		dup2(pfd[1], 1);
		close(pfd[1]);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		execvp(av[0], av);
		fprintf(stderr,
			"sweep: cannot run GNU parallel (%s): install it (scripts/deps) or "
			"drop --jobs/--hosts\n",
			strerror(errno));
		_exit(127);
	}
	dmr_sweep_argv_free(av);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		fprintf(stderr, "sweep: fork: %s\n", strerror(errno));
		return 1;
	}
	FILE *in = fdopen(pfd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	int forwarded = 0, fatal = 0;
	progress(c, NULL, 0);
	for (;;) {
		errno = 0;
		ssize_t n = getline(&line, &cap, in);
		if (n < 0) {
			if (errno == EINTR) {
				clearerr(in);
				if (g_stop && !forwarded) {
					/* parallel: stop starting jobs, finish running ones */
					kill(pid, SIGTERM);
					forwarded = 1;
				}
				continue;
			}
			break;
		}
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "DMR-ROW\t", 8) == 0) {
			char *hdr = line + 8, *row = strchr(hdr, '\t');
			if (!row)
				continue;
			*row++ = '\0';
			dmr_err_t err = {{0}};
			if (!fatal && append_row(c, hdr, row, &err) == DMR_OK) {
				c->now++;
				/* mark done for the final count */
			} else {
				c->failed++;
				if (!fatal)
					report_fail(c, "(row)", 0, err.msg);
				if (!fatal && strstr(err.msg, "columns differ")) {
					fatal = 1;
					kill(pid, SIGTERM);
				}
			}
			progress(c, NULL, 0);
		} else if (strncmp(line, "DMR-FAIL\t", 9) == 0) {
			char *cell = line + 9, *rep = strchr(cell, '\t'), *msg = NULL;
			if (rep) {
				*rep++ = '\0';
				msg = strchr(rep, '\t');
				if (msg)
					*msg++ = '\0';
			}
			c->failed++;
			report_fail(c, cell, rep ? (unsigned)atoi(rep) : 0, msg ? msg : "?");
			progress(c, NULL, 0);
		} else if (n) {
			printf("%s\n", line);
		}
		if (g_stop && !forwarded) {
			kill(pid, SIGTERM);
			forwarded = 1;
		}
	}
	free(line);
	fclose(in);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && c->now == 0)
		return 1;
	return fatal;
}

/* ---- command line ------------------------------------------------------- */

static void sweep_usage(FILE *f)
{
	fputs("usage: dmreplay sweep SPEC.json [--out DIR] [--jobs N] [--hosts H1,H2] [--dry-run]\n"
	      "Run every cell (the cartesian product of SPEC's axes) x repetition with\n"
	      "`dmreplay run`, one row per finished (cell, rep) in DIR/summary.csv.\n"
	      "A re-run with the same SPEC and DIR skips the finished ones.\n\n"
	      "  --out DIR      sweep directory (default out/sweep-NAME)\n"
	      "  --jobs N       run N cells at once through GNU parallel (default 1:\n"
	      "                 one at a time, no parallel needed)\n"
	      "  --hosts H,...  spread the runs over these machines (GNU parallel -S;\n"
	      "                 ':' is this machine); dmreplay must be at the same path\n"
	      "                 there; traces are generated on each host\n"
	      "  --dry-run      print the plan (cells, done, traces, commands); run nothing\n"
	      "  --help\n"
	      "SPEC format: docs/SWEEPS.md. Exit status: 0 all done, 1 some runs failed,\n"
	      "2 bad SPEC or usage, 130 interrupted (re-run to resume).\n",
	      f);
}

static int job_main(sweep_ctx_t *c, dmr_sweep_plan_t *p, const char *cell, const char *rep_s)
{
	char *end;
	unsigned long rep = strtoul(rep_s, &end, 10);
	dmr_sweep_job_t *j = NULL;
	for (size_t i = 0; *rep_s && !*end && i < p->njobs; i++)
		if (p->jobs[i].rep == rep && strcmp(p->jobs[i].cell, cell) == 0)
			j = &p->jobs[i];
	if (!j) {
		printf("DMR-FAIL\t%s\t%s\tno such cell/rep in %s\n", cell, rep_s, c->spec_path);
		return 2;
	}
	char hdr[4096 + 16], row[8192 + 600];
	dmr_err_t err = {{0}};
	if (run_job(c, j, hdr, sizeof(hdr), row, sizeof(row), &err) != DMR_OK || g_stop) {
		printf("DMR-FAIL\t%s\t%u\t%s\n", j->cell, j->rep, g_stop ? "interrupted" : err.msg);
		return 1;
	}
	printf("DMR-ROW\t%s\t%s\n", hdr, row);
	return 0;
}

static void dry_run(sweep_ctx_t *c, dmr_sweep_plan_t *p)
{
	printf("sweep %s: %zu cells x %u reps = %zu runs; %zu done, %zu to run\n", c->spec->name,
	       p->ncells, c->spec->reps, p->njobs, p->ndone, p->njobs - p->ndone);
	printf("summary: %s%s\n", c->summary, p->foreign ? "" : "");
	if (p->foreign)
		printf("  (%zu rows of other cells kept)\n", p->foreign);
	size_t nt = 0, have = 0;
	for (size_t i = 0; i < p->njobs; i++) {
		size_t k;
		for (k = 0; k < i; k++)
			if (strcmp(p->jobs[k].trace, p->jobs[i].trace) == 0)
				break;
		if (k < i)
			continue;
		nt++;
		char path[PATH_MAX + 700];
		snprintf(path, sizeof(path), "%s/traces/%s", c->dir, p->jobs[i].trace);
		int ok = access(path, R_OK) == 0;
		have += ok;
		char **av = dmr_sweep_gen_argv(c->spec, &p->jobs[i], c->exe, path);
		printf("%s ", ok ? "[cached]" : "[gen]   ");
		for (char **a = av; a && *a; a++)
			printf("%s%s", *a, a[1] ? " " : "\n");
		dmr_sweep_argv_free(av);
	}
	printf("traces: %zu (%zu cached) in %s/traces\n", nt, have, c->dir);
	for (size_t i = 0; i < p->njobs; i++) {
		dmr_sweep_job_t *j = &p->jobs[i];
		char trace[PATH_MAX + 700], cdir[PATH_MAX + 700];
		snprintf(trace, sizeof(trace), "%s/traces/%s", c->dir, j->trace);
		snprintf(cdir, sizeof(cdir), "%s/cells/%s", c->dir, j->dir);
		char **av = dmr_sweep_run_argv(c->spec, j, c->exe, trace, cdir);
		printf("%s %s r%u: ", j->done ? "[done]" : "[run] ", j->cell, j->rep);
		for (char **a = av; a && *a; a++)
			printf("%s%s", *a, a[1] ? " " : "\n");
		dmr_sweep_argv_free(av);
	}
}

/* This executable, or the file named by env (tests: DMR_SWEEP_EXE, a
 * stand-in for `dmreplay gen/run`; DMR_SWEEP_SELF, a dmreplay with sweep for
 * the parallel jobs when the caller is not one). */
static int self_exe(const char *env_name, char *out, size_t len)
{
	const char *env = getenv(env_name);
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int dmr_sweep_main(int argc, char **argv)
{
	enum { O_OUT = 256, O_JOBS, O_HOSTS, O_DRY, O_JCELL, O_JREP, O_HELP };
	static const struct option opts[] = {{"out", required_argument, 0, O_OUT},
					     {"jobs", required_argument, 0, O_JOBS},
					     {"hosts", required_argument, 0, O_HOSTS},
					     {"dry-run", no_argument, 0, O_DRY},
					     {"job-cell", required_argument, 0, O_JCELL},
					     {"job-rep", required_argument, 0, O_JREP},
					     {"help", no_argument, 0, O_HELP},
					     {0, 0, 0, 0}};
	const char *out = NULL, *hosts = NULL, *jcell = NULL, *jrep = NULL;
	unsigned jobs = 0;
	int dry = 0, ch;
	optind = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case O_OUT:
			out = optarg;
			break;
		case O_HOSTS:
			hosts = optarg;
			break;
		case O_DRY:
			dry = 1;
			break;
		case O_JCELL:
			jcell = optarg;
			break;
		case O_JREP:
			jrep = optarg;
			break;
		case O_HELP:
			sweep_usage(stdout);
			return 0;
		case O_JOBS: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 4096 || *optarg == '-') {
				fprintf(
				    stderr,
				    "dmreplay sweep: --jobs: '%s' is not an integer in 1..4096\n",
				    optarg);
				return 2;
			}
			jobs = (unsigned)v;
			break;
		}
		default:
			sweep_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dmreplay sweep: %s\n",
			optind >= argc ? "missing SPEC.json" : "more than one SPEC given");
		sweep_usage(stderr);
		return 2;
	}
	if ((jcell == NULL) != (jrep == NULL)) {
		fprintf(stderr, "dmreplay sweep: --job-cell and --job-rep go together\n");
		return 2;
	}
	if (hosts && !jobs)
		jobs = 1;
	if (hosts && (!*hosts || strpbrk(hosts, " \t\n'\"`$;"))) {
		fprintf(stderr,
			"dmreplay sweep: --hosts: '%s' is not a comma-separated host list\n",
			hosts);
		return 2;
	}
	const char *spec_arg = argv[optind];
	dmr_sweep_spec_t spec;
	dmr_err_t err = {{0}};
	if (dmr_sweep_spec_load(spec_arg, &spec, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: error: %s\n", err.msg);
		return 2;
	}
	int rc = 2;
	dmr_sweep_plan_t plan;
	memset(&plan, 0, sizeof(plan));
	sweep_ctx_t *c = calloc(1, sizeof(*c));
	char *spec_abs = realpath(spec_arg, NULL);
	int lockfd = -1;
	if (!c || !spec_abs) {
		fprintf(stderr, "dmreplay sweep: %s: %s\n", spec_arg, strerror(errno));
		goto out;
	}
	c->spec = &spec;
	c->spec_path = spec_abs;
	if (dmr_sweep_plan_build(&spec, &plan, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: error: %s: %s\n", spec_arg, err.msg);
		goto out;
	}
	char dflt[128];
	snprintf(dflt, sizeof(dflt), "out/sweep-%s", spec.name);
	if (!out)
		out = dflt;
	if (strpbrk(out, ",\"\n\t")) {
		fprintf(stderr,
			"dmreplay sweep: --out: '%s': no commas, quotes or tabs (the path goes "
			"into CSV rows)\n",
			out);
		goto out;
	}
	if (!dry && mkdirs(out) != 0) {
		fprintf(stderr, "dmreplay sweep: --out %s: %s\n", out, strerror(errno));
		goto out;
	}
	if (!realpath(out, c->dir)) {
		if (!dry) {
			fprintf(stderr, "dmreplay sweep: --out %s: %s\n", out, strerror(errno));
			goto out;
		}
		snprintf(c->dir, sizeof(c->dir), "%s", out);
	}
	snprintf(c->summary, sizeof(c->summary), "%s/summary.csv", c->dir);
	if (self_exe("DMR_SWEEP_EXE", c->exe, sizeof(c->exe)) != 0 ||
	    self_exe("DMR_SWEEP_SELF", c->self, sizeof(c->self)) != 0) {
		fprintf(stderr, "dmreplay sweep: cannot find my own executable\n");
		rc = 1;
		goto out;
	}
	install_signals();
	if (jcell) {
		rc = job_main(c, &plan, jcell, jrep);
		goto out;
	}
	if (!dry) {
		char lk[PATH_MAX + 32];
		snprintf(lk, sizeof(lk), "%s/.sweep.lock", c->dir);
		lockfd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
			fprintf(stderr,
				"dmreplay sweep: %s: another sweep is running in this directory\n",
				c->dir);
			goto out;
		}
	}
	if (dmr_sweep_plan_resume(&plan, c->summary, !dry, &err) != DMR_OK) {
		fprintf(stderr, "dmreplay sweep: error: %s\n", err.msg);
		goto out;
	}
	if (plan.warning[0])
		fprintf(stderr, "dmreplay sweep: warning: %s\n", plan.warning);
	snprintf(c->header, sizeof(c->header), "%s", plan.header);
	if (dry) {
		dry_run(c, &plan);
		rc = 0;
		goto out;
	}
	c->tty = isatty(2);
	c->total = plan.njobs;
	c->before = plan.ndone;
	c->t0 = now_s();
	if (plan.ndone)
		fprintf(stderr, "sweep %s: %zu of %zu runs already in %s, running the other %zu\n",
			spec.name, plan.ndone, plan.njobs, c->summary, plan.njobs - plan.ndone);
	int bad = plan.ndone == plan.njobs ? 0
		  : jobs		   ? run_parallel(c, &plan, jobs, hosts)
					   : run_sequential(c, &plan);
	progress(c, NULL, 1);
	double el = now_s() - c->t0;
	size_t done = c->before + c->now;
	if (g_stop) {
		fprintf(
		    stderr,
		    "sweep %s: interrupted; %zu of %zu runs in %s (whole rows only); re-run the "
		    "same command to resume\n",
		    spec.name, done, plan.njobs, c->summary);
		rc = 130;
	} else {
		fprintf(
		    stderr,
		    "sweep %s: %zu of %zu runs done (%zu now, in %.1f s wall), %zu failed: %s\n",
		    spec.name, done, plan.njobs, c->now, el, c->failed, c->summary);
		rc = (c->failed || bad || done < plan.njobs) ? 1 : 0;
	}
out:
	if (lockfd >= 0)
		close(lockfd);
	free(spec_abs);
	free(c);
	dmr_sweep_plan_free(&plan);
	dmr_sweep_spec_free(&spec);
	return rc;
}
