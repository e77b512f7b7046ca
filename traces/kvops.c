/* traces/kvops.c - the key/value operation trace: reader, content pattern,
 * generator (kvops.h). */
#include "kvops.h"
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "../core/base/fs.h"
#include "../core/base/hash.h"
#include "../core/base/opt.h"
#include "../core/base/sig.h"
#include "zipf.h"

#define MAGIC "# dmreplay-kvops v1"
#define COLUMNS "op,key,bytes"
#define LINE_MAX_ (DMR_KVOPS_MAX_GET * (DMR_KVOPS_KEY_MAX + 1) + 64)

struct dmr_kvops_reader {
	FILE *f;
	char path[512];
	char line[LINE_MAX_ + 2];
	char *gl; /* getline's buffer */
	size_t glcap;
	uint64_t lineno, rows, value_max;
	int ended;
};

int dmr_kvops_is(const char *path)
{
	/* only a regular file is opened here (a FIFO's open would wait for a
	 * writer, and a pipe's first line would be lost): for anything else the
	 * reader's open says what it is (dmr_trace_check_file) */
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	FILE *f = fopen(path, "r");
	char b[32] = "";
	if (!f)
		return 0;
	/* any version, any line end: dmr_kvops_open then says what is wrong
	 * (a kvops file of another version is no block trace) */
	static const char fam[] = "# dmreplay-kvops ";
	int ok = fgets(b, sizeof(b), f) && strncmp(b, fam, sizeof(fam) - 1) == 0;
	fclose(f);
	return ok;
}

/* The next line without its newline (or CR LF) in rd->line; 0 at the end
 * of the file, -1 when it is too long, -2 when it holds a NUL byte. */
static int rd_line(dmr_kvops_reader_t *rd)
{
	ssize_t n = getline(&rd->gl, &rd->glcap, rd->f);
	if (n < 0)
		return 0;
	rd->lineno++;
	if (n && rd->gl[n - 1] == '\n')
		rd->gl[--n] = 0;
	if (n && rd->gl[n - 1] == '\r')
		rd->gl[--n] = 0;
	if (memchr(rd->gl, 0, (size_t)n))
		return -2;
	if ((size_t)n >= sizeof(rd->line))
		return -1;
	memcpy(rd->line, rd->gl, (size_t)n + 1);
	return 1;
}

/* What rd_line's r < 0 means. */
static const char *rd_why(int r)
{
	return r == -2 ? "a NUL byte in the line (keys and fields are text)" : "line too long";
}

static dmr_status_t bad(dmr_kvops_reader_t *rd, dmr_err_t *err, const char *fmt, const char *a,
			const char *b)
{
	char m[8192];
	snprintf(m, sizeof(m), fmt, a, b);
	return dmr_err_set(err, DMR_ERR_PARSE, "%.200s:%" PRIu64 ": %.280s", rd->path, rd->lineno,
			   m);
}

dmr_status_t dmr_kvops_open(const char *path, dmr_kvops_reader_t **rd_p, dmr_err_t *err)
{
	dmr_status_t cst = dmr_trace_check_file(path, err);
	if (cst != DMR_OK)
		return cst;
	dmr_kvops_reader_t *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return dmr_err_set(err, DMR_ERR_NOMEM, "kvops: out of memory");
	snprintf(rd->path, sizeof(rd->path), "%s", path);
	if (!(rd->f = fopen(path, "r"))) {
		dmr_status_t st = dmr_err_set(err, DMR_ERR_IO, "%s: %s", path, strerror(errno));
		free(rd);
		return st;
	}
	dmr_status_t st = DMR_OK;
	int r = rd_line(rd);
	if (r > 0 && strncmp(rd->line, "# dmreplay-kvops ", 17) == 0 &&
	    strcmp(rd->line, MAGIC) != 0)
		st = bad(rd, err,
			 "kvops trace version '%.40s' not supported (this build reads '%s')",
			 rd->line + 17, MAGIC);
	else if (r <= 0 || strcmp(rd->line, MAGIC) != 0)
		st = bad(rd, err, "not a kvops trace: the first line must be '%s'%s", MAGIC, "");
	while (st == DMR_OK) {
		if ((r = rd_line(rd)) <= 0) {
			st = bad(rd, err, "%s%s", r < 0 ? rd_why(r) : "no column line", "");
			break;
		}
		if (rd->line[0] != '#') {
			if (strcmp(rd->line, COLUMNS) != 0)
				st = bad(rd, err, "column line: expected '%s', got '%.80s'",
					 COLUMNS, rd->line);
			break;
		}
		if (strncmp(rd->line, "# value_max ", 12) == 0) {
			dmr_err_t e;
			if (dmr_opt_u64("value_max", rd->line + 12, 0, DMR_KVOPS_VALUE_MAX, 0,
					&rd->value_max, &e) != DMR_OK)
				st = bad(rd, err, "header 'value_max': %s%s", e.msg, "");
		}
	}
	if (st == DMR_OK && !rd->value_max)
		st = bad(rd, err, "header 'value_max' missing (or 0) before the column line%s%s",
			 "", "");
	if (st != DMR_OK) {
		dmr_kvops_close(rd);
		return st;
	}
	*rd_p = rd;
	return DMR_OK;
}

uint64_t dmr_kvops_value_max(const dmr_kvops_reader_t *rd)
{
	return rd->value_max;
}

void dmr_kvops_close(dmr_kvops_reader_t *rd)
{
	if (!rd)
		return;
	if (rd->f)
		fclose(rd->f);
	free(rd->gl);
	free(rd);
}

/* Check one key (printable ASCII without space or comma, 1..250 bytes). */
static const char *key_bad(const char *k, size_t n)
{
	if (n == 0)
		return "empty key";
	if (n > DMR_KVOPS_KEY_MAX)
		return "key longer than 250 bytes";
	for (size_t i = 0; i < n; i++)
		if (k[i] <= ' ' || k[i] > '~' || k[i] == ',')
			return "a key byte that is not printable ASCII (or is a space or comma)";
	return NULL;
}

dmr_status_t dmr_kvops_next(dmr_kvops_reader_t *rd, dmr_kvops_row_t *row, dmr_err_t *err)
{
	int r = rd_line(rd);
	if (rd->ended) {
		if (r == 0)
			return DMR_EOF;
		return bad(rd, err, "text after the '# end' trailer%s%s", "", "");
	}
	if (r < 0)
		return bad(rd, err, "%s%s", rd_why(r), "");
	if (r == 0)
		return bad(rd, err, "no '# end OPS' trailer: the file is truncated%s%s", "", "");
	char *ln = rd->line;
	if (strncmp(ln, "# end ", 6) == 0) {
		char *e;
		errno = 0;
		unsigned long long n = strtoull(ln + 6, &e, 10);
		if (errno || *e || e == ln + 6)
			return bad(rd, err, "trailer: '%.60s' is not '# end OPS'%s", ln, "");
		if (n == 0 && rd->rows == 0)
			return bad(rd, err, "no operations: an empty trace replays nothing%s%s", "",
				   "");
		if (n != rd->rows) {
			char a[64], b[64];
			snprintf(a, sizeof(a), "%llu", n);
			snprintf(b, sizeof(b), "%" PRIu64, rd->rows);
			return bad(rd, err, "trailer says %s ops, the file has %s", a, b);
		}
		rd->ended = 1;
		r = rd_line(rd);
		if (r != 0)
			return bad(rd, err, "text after the '# end' trailer%s%s", "", "");
		return DMR_EOF;
	}
	memset(row, 0, sizeof(*row));
	row->index = rd->rows;
	row->line = rd->lineno;
	char *c1 = strchr(ln, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (!c1 || !c2 || strchr(c2 + 1, ','))
		return bad(rd, err, "expected 3 fields op,key,bytes: '%.80s'%s", ln, "");
	*c1 = *c2 = 0;
	if (!strcmp(ln, "set"))
		row->op = DMR_KVOPS_SET;
	else if (!strcmp(ln, "get"))
		row->op = DMR_KVOPS_GET;
	else if (!strcmp(ln, "del"))
		row->op = DMR_KVOPS_DEL;
	else
		return bad(rd, err, "field 'op': '%.40s' is not set, get or del%s", ln, "");
	for (char *k = c1 + 1;;) {
		char *sp = strchr(k, ' ');
		size_t n = sp ? (size_t)(sp - k) : strlen(k);
		const char *why = key_bad(k, n);
		if (why)
			return bad(rd, err, "field 'key': %s%s", why, "");
		if (row->nkeys == (row->op == DMR_KVOPS_GET ? DMR_KVOPS_MAX_GET : 1))
			return bad(rd, err, "field 'key': %s%s",
				   row->op == DMR_KVOPS_GET ? "more than 16 keys in one get"
							    : "one key only for set and del",
				   "");
		row->key[row->nkeys] = k;
		row->klen[row->nkeys++] = (uint32_t)n;
		if (!sp)
			break;
		*sp = 0;
		k = sp + 1;
	}
	char *b = c2 + 1;
	if (row->op == DMR_KVOPS_SET) {
		dmr_err_t e;
		if (dmr_opt_u64("bytes", b, 0, rd->value_max, 0, &row->bytes, &e) != DMR_OK)
			return bad(rd, err,
				   "field 'bytes': %s (the header's value_max bounds it)%s", e.msg,
				   "");
	} else if (*b) {
		return bad(rd, err, "field 'bytes': must be empty for %s (got '%.30s')", ln, b);
	}
	rd->rows++;
	return DMR_OK;
}

void dmr_kvops_fill(uint64_t index, uint8_t *buf, uint64_t len)
{
	uint64_t base = index * 0x9E3779B97F4A7C15ull, w = 0, i = 0;
	for (; i + 8 <= len; i += 8, w++) {
		uint64_t v = dmr_mix64(base + w);
		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = dmr_mix64(base + w);
		memcpy(buf + i, &v, (size_t)(len - i));
	}
}

int dmr_kvops_check(uint64_t index, const uint8_t *buf, uint64_t len, uint64_t *bad_p)
{
	uint64_t base = index * 0x9E3779B97F4A7C15ull;
	for (uint64_t i = 0, w = 0; i < len; i += 8, w++) {
		uint64_t v = dmr_mix64(base + w);
		size_t n = len - i < 8 ? (size_t)(len - i) : 8;
		if (memcmp(buf + i, &v, n) != 0) {
			const uint8_t *vb = (const uint8_t *)&v;
			for (size_t j = 0; j < n; j++)
				if (buf[i + j] != vb[j]) {
					*bad_p = i + j;
					return 0;
				}
		}
	}
	return 1;
}

dmr_status_t dmr_kvops_parse_sizes(const char *s, dmr_kvops_gen_t *g, dmr_err_t *err)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	char *a = strchr(buf, ':'), *b = a ? strchr(a + 1, ':') : NULL;
	if (a)
		*a++ = 0;
	if (b)
		*b++ = 0;
	dmr_err_t e;
	if (!strcmp(buf, "fixed") && a && !b &&
	    dmr_opt_u64("--sizes fixed:N", a, 0, DMR_KVOPS_VALUE_MAX, DMR_OPT_SIZE, &g->size_a,
			&e) == DMR_OK) {
		g->size_kind = 0;
		return DMR_OK;
	}
	if (!strcmp(buf, "uniform") && a && b &&
	    dmr_opt_u64("--sizes uniform:A:B", a, 0, DMR_KVOPS_VALUE_MAX, DMR_OPT_SIZE, &g->size_a,
			&e) == DMR_OK &&
	    dmr_opt_u64("--sizes uniform:A:B", b, g->size_a, DMR_KVOPS_VALUE_MAX, DMR_OPT_SIZE,
			&g->size_b, &e) == DMR_OK) {
		g->size_kind = 1;
		return DMR_OK;
	}
	if (!strcmp(buf, "lognormal") && a && b &&
	    dmr_opt_u64("--sizes lognormal:MEDIAN:SIGMA", a, 1, DMR_KVOPS_VALUE_MAX, DMR_OPT_SIZE,
			&g->size_a, &e) == DMR_OK &&
	    dmr_opt_double("--sizes lognormal:MEDIAN:SIGMA", b, 0, 10, 0, &g->size_sigma, &e) ==
		DMR_OK) {
		g->size_kind = 2;
		return DMR_OK;
	}
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "option --sizes: '%s' is not fixed:N, uniform:A:B (A <= B) or "
			   "lognormal:MEDIAN:SIGMA (sizes in bytes, K/M/G allowed; sigma 0..10)",
			   s ? s : "");
}

static uint64_t draw_size(const dmr_kvops_gen_t *g, gsl_rng *r)
{
	double v;
	switch (g->size_kind) {
	case 1:
		v = (double)g->size_a +
		    (double)gsl_rng_uniform_int(r, (unsigned long)(g->size_b - g->size_a + 1));
		break;
	case 2:
		v = floor(gsl_ran_lognormal(r, log((double)g->size_a), g->size_sigma));
		break;
	default:
		v = (double)g->size_a;
	}
	return v > (double)g->value_max ? g->value_max : (uint64_t)v;
}

dmr_status_t dmr_kvops_generate(const dmr_kvops_gen_t *g, const char *path, dmr_err_t *err)
{
	if (!g->ops || !g->keys || g->get_max < 1 || g->get_max > DMR_KVOPS_MAX_GET ||
	    !g->value_max || g->value_max > DMR_KVOPS_VALUE_MAX)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--ops and --keys must be >= 1, --get-keys "
				   "1..%u, --value-max 1..%llu",
				   DMR_KVOPS_MAX_GET, (unsigned long long)DMR_KVOPS_VALUE_MAX);
	if (!*path) /* as kv gen --mooncake says it */
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "-o '': an empty path (give a file, or - for standard output)");
	const int stream = strcmp(path, "-") == 0; /* standard output */
	dmr_afile_t af = {.f = stdout};
	if (!stream) {
		/* its directory, named as given (not .OUT.PID.0.tmp) */
		dmr_err_t e;
		dmr_status_t st = dmr_out_file_check(path, &e);
		if (st != DMR_OK)
			return dmr_err_set(err, st, "-o %s", e.msg);
		st = dmr_afile_open(&af, path, err);
		if (st != DMR_OK)
			return st;
	}
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	if (!r) {
		if (!stream)
			dmr_afile_abort(&af);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	/* SIGINT/SIGTERM: stop, the temp file removed, an earlier file at path
	 * left as it was, exit 130 (it died by the signal and left its temp
	 * file: a trial) */
	dmr_sig_saved_t saved;
	dmr_sig_install(&saved);
	gsl_rng_set(r, g->seed);
	dmr_zipf_ri_t z;
	memset(&z, 0, sizeof(z));
	if (g->theta > 0)
		dmr_zipf_ri_init(&z, g->keys, g->theta);
	fprintf(af.f,
		MAGIC "\n# keys %" PRIu64 "\n# value_max %" PRIu64 "\n# seed %" PRIu64
		      "\n# theta %g\n" COLUMNS "\n",
		g->keys, g->value_max, g->seed, g->theta);
	uint64_t i = 0;
	int sig = 0;
	for (; i < g->ops && !(sig = dmr_sig_caught()); i++) {
		double u = gsl_rng_uniform(r);
		int op = u < g->p_set ? DMR_KVOPS_SET
				      : (u < g->p_set + g->p_get ? DMR_KVOPS_GET : DMR_KVOPS_DEL);
		uint32_t nk =
		    op == DMR_KVOPS_GET ? 1 + (uint32_t)gsl_rng_uniform_int(r, g->get_max) : 1;
		fputs(op == DMR_KVOPS_SET ? "set," : op == DMR_KVOPS_GET ? "get," : "del,", af.f);
		for (uint32_t k = 0; k < nk; k++) {
			uint64_t rank =
			    g->theta > 0 ? dmr_zipf_ri_next(&z, r)
					 : (uint64_t)gsl_rng_uniform_int(r, (unsigned long)g->keys);
			fprintf(af.f, "%suser%" PRIu64, k ? " " : "", rank);
		}
		if (op == DMR_KVOPS_SET)
			fprintf(af.f, ",%" PRIu64 "\n", draw_size(g, r));
		else
			fputs(",\n", af.f);
	}
	gsl_rng_free(r);
	if (!sig)
		sig = dmr_sig_caught(); /* one that came after the last operation */
	dmr_status_t st;
	if (sig) {
		if (stream) /* what went out stays: without its "# end" line, kv run
			       refuses it */
			fflush(stdout);
		else
			dmr_afile_abort(&af);
		st = dmr_err_set(
		    err, DMR_ERR_INTERRUPTED,
		    "interrupted by signal %d after %" PRIu64 " of %" PRIu64 " operations: %s%s",
		    sig, i, g->ops, stream ? "standard output incomplete (no '# end' line)" : path,
		    stream ? "" : " not written");
	} else {
		fprintf(af.f, "# end %" PRIu64 "\n", g->ops);
		if (stream)
			st = fflush(stdout) != 0 || ferror(stdout)
				 ? dmr_err_set(err, DMR_ERR_IO, "standard output: write error")
				 : DMR_OK;
		else
			st = dmr_afile_commit(&af, err);
	}
	dmr_sig_restore(&saved);
	return st;
}
