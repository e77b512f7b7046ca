/*
 * traces/trace_impl.h - what the trace reader (trace_read.c), the writer
 * (trace_write.c) and the builders (trace.c) share: the format's constants,
 * the column table, the integer parsers and formatters, the name checks and
 * the static checks of one op (dmr_trace_check_op). Private to traces/.
 */
#ifndef DMR_TRACE_IMPL_H
#define DMR_TRACE_IMPL_H

#include "trace.h"

#include <csv.h>
#include <stddef.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRACE_CHUNK (256u * 1024u)   /* read / write buffer */
#define TRACE_LINE_MAX (64u * 1024u) /* longest accepted line, '\n' excluded */
#define TRACE_NCOLS 13
#define TRACE_PARAM_VAL_MAX 128 /* sizeof(dmr_trace_param_t.val) */
#define TRACE_REGIME_MAX 64	/* sizeof(dmr_trace_hdr_t.regime) */
#define TRACE_ACT_POISON 0xFF	/* dmr_trace_act_t.kind after misuse */
#define TRACE_ROW_MAX 1024	/* longest row the writer can produce */

static const char trace_magic[] = "# dmreplay-trace v";
static const char trace_columns[] = "txn,type,round,op,table,key,dep,lo,hi,count,guard,act,xv";

enum {
	COL_TXN,
	COL_TYPE,
	COL_ROUND,
	COL_OP,
	COL_TABLE,
	COL_KEY,
	COL_DEP,
	COL_LO,
	COL_HI,
	COL_COUNT,
	COL_GUARD,
	COL_ACT,
	COL_XV,
};

static const char *const trace_colname[TRACE_NCOLS] = {
    "txn", "type", "round", "op", "table", "key", "dep", "lo", "hi", "count", "guard", "act", "xv",
};

/* ---- small helpers shared by reader and writer ------------------------ */

/* Parse an unsigned decimal (digits only, at least one) not above max.
 * Returns 0, -1 (not a number) or -2 (out of range). */
static inline int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *v_p)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	if (n <= 19) {
		/* at most 19 digits: below 10^19 < 2^64, no overflow possible */
		for (size_t i = 0; i < n; i++) {
			unsigned d = (unsigned)(unsigned char)s[i] - '0';
			if (d > 9)
				return -1;
			v = v * 10 + d;
		}
		if (v > max)
			return -2;
		*v_p = v;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) {
			/* still reject "123x" as garbage, not as overflow */
			for (i++; i < n; i++)
				if ((unsigned)(unsigned char)s[i] - '0' > 9)
					return -1;
			return -2;
		}
	}
	if (v > max)
		return -2;
	*v_p = v;
	return 0;
}

/* Parse a signed decimal: optional '-', digits. Same returns as parse_u64. */
static inline int parse_i64(const char *s, size_t n, int64_t *v_p)
{
	int neg = n > 0 && s[0] == '-';
	uint64_t u;
	int rc = parse_u64(s + neg, n - (size_t)neg, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &u);

	if (rc)
		return rc;
	if (!neg)
		*v_p = (int64_t)u;
	else if (u == 0)
		*v_p = 0;
	else
		*v_p = -(int64_t)(u - 1) - 1;
	return 0;
}

static inline char *fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static inline char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, 0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

/* NULL when s[0..n) is a valid name (FORMAT.md "Names"), else the reason. */
static inline const char *name_problem(const char *s, size_t n)
{
	if (n == 0)
		return "empty name";
	if (n >= DMR_TRACE_NAME_MAX)
		return "name longer than 31 characters";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c >= 0x7f || c == ',' || c == '"' || c == ';' || c == '#')
			return "name contains a space, control or non-ASCII character, or one of , "
			       "\" ; #";
	}
	return NULL;
}

/* NULL when s is valid free text (regime, param value), else the reason. */
static inline const char *text_problem(const char *s, size_t n, size_t max)
{
	if (n >= max)
		return "text too long";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < ' ' || c == 0x7f)
			return "text contains a control character";
	}
	return NULL;
}

static inline int lookup_name(const char (*names)[DMR_TRACE_NAME_MAX], uint32_t n, const char *s,
			      size_t len)
{
	if (len >= DMR_TRACE_NAME_MAX)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(names[i], s, len) == 0 && names[i][len] == '\0')
			return (int)i;
	return -1;
}

static inline uint32_t table_words(const dmr_trace_hdr_t *h, int table)
{
	return h->tables[table].payload_bytes / 8;
}

/*
 * Static checks of op i of t against h and ops 0..i-1 (FORMAT.md "Checks"),
 * shared by reader and writer. Returns 0, or -1 with *field_p the column
 * name and the reason in why.
 */
int dmr_trace_check_op(const dmr_trace_hdr_t *h, const dmr_trace_txn_t *t, uint32_t i,
		       const char **field_p, char *why, size_t whysz);

/* The records locked by the U/I/D ops with a literal key of the
 * transaction being checked (dmr_trace_check_locks): an open-addressed
 * set of twice the most ops a transaction has, its slots of earlier
 * transactions told apart by a generation (no clearing per transaction).
 * Zeroed before its first use (calloc). */
#define TRACE_LOCK_SLOTS (2 * DMR_TRACE_MAX_OPS)
typedef struct trace_lockset {
	uint32_t gen; /* this transaction's; slots of another are free */
	struct {
		uint64_t rec; /* table << 58 | key */
		uint32_t gen;
		uint32_t op; /* the op that locks it */
	} slot[TRACE_LOCK_SLOTS];
} trace_lockset_t;

/* A new transaction: the set empty. */
static inline void trace_locks_begin(trace_lockset_t *ls)
{
	if (++ls->gen == 0) {
		memset(ls->slot, 0, sizeof(ls->slot));
		ls->gen = 1;
	}
}

int trace_lock_fail(const dmr_trace_hdr_t *h, const dmr_trace_txn_t *t, uint32_t i, uint32_t k,
		    uint32_t line0, const char **field_p, char *why, size_t whysz);

/*
 * Two lock-taking ops (U, I, D) of one transaction with a literal key (no
 * dep) on one record are refused (FORMAT.md "Checks"; the run-time check,
 * core/txn.c, met them mid-run): op i of t against ls, the records of the
 * earlier ones, then op i's record added. -1 with *field_p "key" and the
 * reason in why (naming the earlier op, and its line line0 + k when line0
 * != 0: rows are one line each); else 0. Call for i = 0, 1, ... after
 * dmr_trace_check_op passed (op i's key is in range), with
 * trace_locks_begin(ls) before op 0. The record is table << 58 | key: key <
 * ROWS <= 2^57 (2^60 bytes over payloads of >= 8 bytes). Ops with a dep
 * are left to the run-time check: their slot is known only then; so are
 * ops with a guard on another op, which may skip them. O(1) per
 * op (at most 256 records in 512 slots), inline: reading TPC-C 200 k, a
 * linear scan of the earlier records cost 3 % more CPU, and out of line
 * 3-6 %.
 */
static inline int dmr_trace_check_locks(trace_lockset_t *ls, const dmr_trace_hdr_t *h,
					const dmr_trace_txn_t *t, uint32_t i, uint32_t line0,
					const char **field_p, char *why, size_t whysz)
{
	const dmr_trace_op_t *o = &t->ops[i];

	/* a guard on another op may skip it (core/txn.c: F_SKIPPED, no lock):
	 * two such ops on one record, under exclusive guards, are a
	 * conditional update; the run-time check meets them if both run */
	if (o->kind == DMR_TOP_READ || o->dep.op >= 0 ||
	    (o->guard.kind != DMR_TGUARD_NONE && o->guard.op != (int)i))
		return 0;
	uint64_t rec = (uint64_t)o->table << 58 | (uint64_t)o->key;
	uint32_t k = (uint32_t)((rec * 0x9E3779B97F4A7C15ull) >> 55) % TRACE_LOCK_SLOTS;
	while (ls->slot[k].gen == ls->gen) {
		if (__builtin_expect(ls->slot[k].rec == rec, 0))
			return trace_lock_fail(h, t, i, ls->slot[k].op, line0, field_p, why, whysz);
		k = (k + 1) % TRACE_LOCK_SLOTS;
	}
	ls->slot[k].rec = rec;
	ls->slot[k].gen = ls->gen;
	ls->slot[k].op = i;
	return 0;
}

/* ---- the reader's state (trace_read.c; the cache half in trace_cache.c) - */

/* One parsed data row, not yet checked against its transaction. */
typedef struct trace_row {
	uint64_t txn;
	uint16_t type;
	int has_xv;
	int64_t xv;
	uint32_t line;
	dmr_trace_op_t op;
} trace_row_t;

struct dmr_trace_reader {
	FILE *fp;
	char *path;
	dmr_trace_hdr_t hdr;
	struct csv_parser csv;
	int csv_live;

	/* read buffer: buf[pos, end) not yet consumed; buf[0] at file offset buf_off */
	char *buf;
	size_t pos, end;
	uint64_t buf_off;
	int eof;
	uint32_t line;	    /* number of the last line taken */
	uint64_t data_off;  /* file offset of the first data line */
	uint32_t data_line; /* line number before the first data line */

	/* fields of the row being parsed: fptr[k], flen[k] bytes, a NUL after
	 * each (in the line itself in buf, split in place, or in rowbuf as
	 * filled by the libcsv callbacks) */
	char *rowbuf;
	size_t rowlen;
	uint32_t nfields;
	uint32_t rows_in_line;
	const char *fptr[TRACE_NCOLS];
	size_t flen[TRACE_NCOLS];
	int type_hint, table_hint;

	/* transaction assembly */
	dmr_trace_txn_t *txn;
	int txn_done;
	int have_pending;
	trace_row_t pending;
	trace_lockset_t locks; /* the records its U/I/D ops lock */
	uint64_t ntxns;	       /* transactions started since open / rewind */
	uint64_t rows;	       /* ops of the transactions returned */

	dmr_status_t status; /* sticky error, message in err */
	dmr_err_t err;
	uint64_t file_txns; /* counted at open; UINT64_MAX = not scanned */

	/* binary cache (trace_cache.c): bin != NULL, fp == NULL */
	unsigned char *bin;	   /* the window: the file's [bin_woff, +bin_wlen) */
	size_t bin_woff, bin_wlen; /* bytes */
	size_t bin_pos, bin_data;  /* file offsets; bin_data: first txn record */
	size_t bin_end;		   /* end of the records (the slice table) */
	uint64_t *bin_sums;	   /* the slice table (checked at open) */
	uint64_t bin_ntxns;	   /* from the cache head */
	int bin_fd;		   /* the cache file, read with pread */
	char *bin_cache;	   /* its path (messages) */
	int bin_direct;		   /* given as the trace itself: no CSV behind it */
};

/* Propagate r's sticky error to the caller's err. */
static inline dmr_status_t trace_rd_report(const dmr_trace_reader_t *r, dmr_err_t *err)
{
	return dmr_err_set(err, r->status, "%s", r->err.msg);
}

/* ---- the binary trace cache (trace_cache.c; FORMAT.md "Binary cache") -- */

#define TRACE_BIN_MAGIC "DMRTBIN" /* 8 bytes with its NUL */
#define TRACE_BIN_VERSION 2u	  /* bump on any layout change */
/* The revision of the reader's static checks (dmr_trace_check_op,
 * dmr_trace_check_locks) a cache was built with: bump when a check is added,
 * so that a cache an older build compiled from a CSV the checks now refuse
 * is stale (rebuilt through them, and refused), not replayed (session 14: 1
 * = guards on an earlier round, one lock per record). An older cache has 0
 * there (reserved). */
#define TRACE_BIN_CHECKS 1u
#define TRACE_BIN_ENDIAN 0x01020304u			  /* as written by the host that built it */
#define TRACE_BIN_OP_BYTES offsetof(dmr_trace_op_t, acts) /* a raw op (BIN_F_RAW), acts apart */

#define TRACE_BIN_SLICE (256u << 10) /* bytes per checksummed slice */

/*
 * An op record (v2): a 6-byte head {kind u8, table u8, round u16, flags u8,
 * nacts u8}, the key (i32, or i64 with BIN_F_KEY64), then only what the
 * flags announce, in this order: count u32; dep {op u8, word u16}; lo, hi
 * (i32 each, or i64 with BIN_F_RANGE64); the guard {op u8} (present) or
 * {op u8, f u16, f2 u16} (less); then nacts actions {kind u8, mode u8, word
 * u16, value: i32 literal | {op i16, word u16} reference | i64 literal}.
 * Anything else (values no CSV row can give, e.g. a dep with a literal)
 * is stored whole after the head: BIN_F_RAW, TRACE_BIN_OP_BYTES of the
 * op and its nacts dmr_trace_act_t. Unaligned, host byte order.
 */
enum {
	BIN_F_KEY64 = 0x01,
	BIN_F_COUNT = 0x02,
	BIN_F_DEP = 0x04,
	BIN_F_RANGE = 0x08,
	BIN_F_RANGE64 = 0x10,
	BIN_F_GPRESENT = 0x20,
	BIN_F_GLESS = 0x40,
	BIN_F_RAW = 0x80,
};
enum { BIN_A_LIT32 = 0, BIN_A_REF = 1, BIN_A_LIT64 = 2 };
#define TRACE_BIN_OP_HEAD 6
/* the longest op record: raw (6 + 56 + 4 x 24 = 158; compact at most 90) */
#define TRACE_BIN_OP_WORST                                                                         \
	(TRACE_BIN_OP_HEAD + TRACE_BIN_OP_BYTES + DMR_TRACE_MAX_ACTS * sizeof(dmr_trace_act_t))
/* Zero bytes after the slice table, so that the reader can decode one op
 * without checking each field against the mapping's end (it checks once per
 * op that TRACE_BIN_OP_WORST bytes remain). */
#define TRACE_BIN_TAIL 256u
/* The largest transaction record (padded to 8): the reader verifies this
 * far ahead. */
#define TRACE_BIN_TXN_MAX (sizeof(trace_bin_txn_t) + DMR_TRACE_MAX_OPS * TRACE_BIN_OP_WORST + 7)

/* The cache file's first 128 bytes. Then dmr_trace_hdr_t (raw), then per
 * transaction one trace_bin_txn_t followed by its nops op records (above),
 * zero-padded to a multiple of 8 bytes; then, at table_off, the checksums
 * of the slices of [128, table_off) (TRACE_BIN_SLICE bytes each, the last
 * one shorter), one uint64 each; then TRACE_BIN_TAIL zero bytes. The reader
 * verifies a slice when it first reads from it, while the slice is in
 * cache, so that each byte is fetched from memory once. */
typedef struct trace_bin_head {
	char magic[8];
	uint32_t version, endian;
	uint32_t op_bytes, act_bytes, hdr_bytes, txn_bytes;
	uint64_t src_size;     /* the CSV's size, bytes */
	int64_t src_mtime_ns;  /* its mtime, ns since the epoch */
	uint64_t src_hash;     /* trace_src_hash() of the CSV */
	uint64_t ntxns, nrows; /* transactions, ops */
	uint64_t file_bytes;   /* size of the whole cache file */
	uint64_t table_sum;    /* checksum of the slice table */
	uint64_t head_sum;     /* checksum of these 128 bytes, head_sum = 0 */
	uint64_t table_off;    /* offset of the slice table */
	uint64_t nslices;      /* its entries */
	uint32_t checks;       /* TRACE_BIN_CHECKS of the build that wrote it */
	uint32_t reserved0;
	uint64_t reserved[1];
} trace_bin_head_t;
_Static_assert(sizeof(trace_bin_head_t) == 128, "the cache head is 128 bytes");

typedef struct trace_bin_txn {
	uint64_t id;
	int64_t xv;
	uint32_t line;
	uint16_t nops; /* 1 .. DMR_TRACE_MAX_OPS */
	uint8_t type;  /* < DMR_TRACE_MAX_TYPES */
	uint8_t pad;
} trace_bin_txn_t;

/* Encode op o at out (TRACE_BIN_OP_WORST bytes of room): the bytes
 * written, 0 when o cannot be stored (nacts > DMR_TRACE_MAX_ACTS). */
size_t trace_bin_put_op(unsigned char *out, const dmr_trace_op_t *o);
/* Decode the op record at p into *o (every field, unused actions zero):
 * the byte after it, or NULL when it is malformed (nacts too large).
 * Reads at most TRACE_BIN_OP_WORST bytes. */
const unsigned char *trace_bin_get_op(const unsigned char *p, dmr_trace_op_t *o);
/* Bytes of the op record at p, as trace_bin_get_op would read them, or 0
 * when it is malformed (the same checks); reads the record's head, the raw
 * op's nacts and each action's mode byte, at most TRACE_BIN_OP_WORST bytes. */
size_t trace_bin_op_len(const unsigned char *p);
/* The next transaction's record, not decoded (dmr_trace_next_rec). */
dmr_status_t trace_bin_next_rec(dmr_trace_reader_t *r, dmr_trace_rec_t *rec, dmr_err_t *err);
/* The next transaction of a reader opened on a cache (dmr_trace_next). */
dmr_status_t trace_bin_next(dmr_trace_reader_t *r, dmr_trace_txn_t *txn, dmr_err_t *err);

/* Streaming checksum over 64-bit words (xxHash64's round and constants,
 * Yann Collet, BSD-2: four independent lanes, so ~1 word per cycle). */
typedef struct trace_sum {
	uint64_t lane[4];
	uint64_t words;
} trace_sum_t;

#define TRACE_SUM_P1 0x9E3779B185EBCA87ull
#define TRACE_SUM_P2 0xC2B2AE3D27D4EB4Full

static inline void trace_sum_init(trace_sum_t *s)
{
	s->lane[0] = TRACE_SUM_P1 + TRACE_SUM_P2;
	s->lane[1] = TRACE_SUM_P2;
	s->lane[2] = 0;
	s->lane[3] = 0 - TRACE_SUM_P1;
	s->words = 0;
}

static inline uint64_t trace_sum_round(uint64_t acc, uint64_t w)
{
	acc += w * TRACE_SUM_P2;
	acc = (acc << 31) | (acc >> 33);
	return acc * TRACE_SUM_P1;
}

/* Add n bytes (n a multiple of 8) to the checksum. */
void trace_sum_add(trace_sum_t *s, const void *p, size_t n);
uint64_t trace_sum_final(const trace_sum_t *s);

/*
 * Open the binary cache file fd (at path cache; NULL: name is the cache,
 * given as the trace), mapped at map[0, len) and already checked by
 * trace_bin_check, as a reader whose messages name `name` and the cache. Takes
 * ownership of fd (closed at dmr_trace_close) and of the mapping (unmapped
 * before it returns: the records are read with pread, trace_cache.c).
 * DMR_OK, or DMR_ERR_NOMEM with err set (fd and map released).
 */
dmr_status_t dmr_trace_open_bin(const char *name, const char *cache, int fd, void *map, size_t len,
				dmr_trace_reader_t **r_p, dmr_err_t *err);
/* A cache reader back to its first record (dmr_trace_rewind), and its
 * window, file and slice table released (dmr_trace_close). */
void trace_bin_rewind(dmr_trace_reader_t *r);
void trace_bin_close(dmr_trace_reader_t *r);
/* Open the cache file at path directly (dmr_trace_open on a file that
 * starts with TRACE_BIN_MAGIC): checked by trace_bin_check, no staleness
 * check (there is no CSV to compare with). */
dmr_status_t dmr_trace_open_cache_file(const char *path, dmr_trace_reader_t **r_p, dmr_err_t *err);

/* Check a mapped cache file's head, size, slice table and the slices that
 * hold the trace header: 0 valid, -1 corrupt or truncated (why set), -2
 * another layout version or host (why set; rebuild). */
int trace_bin_check(const void *map, size_t len, char *why, size_t whysz);
/* Verify slice k of a checked mapping: 0, or -1 (checksum mismatch). */
int trace_bin_check_slice(const void *map, uint64_t k);

#endif /* DMR_TRACE_IMPL_H */
