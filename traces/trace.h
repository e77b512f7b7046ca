/*
 * traces/trace.h - the dmreplay trace: in-memory form, streaming reader and
 * writer (libcsv). The file format is specified in traces/FORMAT.md; this
 * header is its C contract.
 *
 * A trace is a header (tables, generator parameters) followed by
 * transactions. A transaction is a list of operations on records of MN
 * tables; each operation belongs to a round, and the operations of one round
 * are issued together (one doorbell batch). Keys are slot indexes into a
 * table (0 .. rows-1). A key may depend on a value read by an earlier round
 * of the same transaction ("dep"); such keys are resolved by the transaction
 * core from the bytes it read.
 *
 * Record layout in MN memory (core/record.h): {lock u64, version u64,
 * payload[payload_bytes]}, payload a multiple of 8 bytes, addressed here as
 * 64-bit little-endian words ("fields") 0 .. payload_bytes/8 - 1.
 */
#ifndef DMR_TRACE_H
#define DMR_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/base/status.h"

#define DMR_TRACE_VERSION 1
#define DMR_TRACE_MAX_TABLES 32
#define DMR_TRACE_MAX_PARAMS 64
#define DMR_TRACE_MAX_OPS 256  /* operations per transaction */
#define DMR_TRACE_MAX_ACTS 4   /* actions per operation */
#define DMR_TRACE_MAX_TYPES 16 /* transaction types per trace */
#define DMR_TRACE_NAME_MAX 32  /* names: at most 31 chars + NUL */
/* The tables' bytes, ROWS x PAYLOAD_BYTES summed over all tables, at most
 * 2^60 (1 EiB): a row count beyond it is refused on its '# table' line
 * (field rows), so that the memory layout (record headers, alignment,
 * version cells) never overflows 64 bits (a trial had got "rows x 24 bytes
 * overflow" naming no file or line). */
#define DMR_TRACE_TABLE_BYTES_MAX (1ull << 60)

/* Operation kinds (FORMAT.md "op" column). */
typedef enum dmr_trace_opkind {
	DMR_TOP_READ = 'R',   /* read-only; validated at commit */
	DMR_TOP_UPDATE = 'U', /* lock (CAS) + READ, write back with actions */
	DMR_TOP_INSERT = 'I', /* lock an absent slot, write a new record */
	DMR_TOP_DELETE = 'D', /* lock + READ, write back as absent */
} dmr_trace_opkind_t;

/* Action kinds (FORMAT.md "act" column). */
typedef enum dmr_trace_actkind {
	DMR_TACT_SET = 0, /* field = value */
	DMR_TACT_ADD = 1, /* field += value (two's complement, wraps) */
} dmr_trace_actkind_t;

/* A value: a literal, or word `field` of the read image of op `op`. */
typedef struct dmr_trace_val {
	int64_t lit;	/* used when op < 0 */
	int16_t op;	/* -1: literal; else index of an earlier op (action
			   values) or of an op in an earlier round (dep) */
	uint16_t field; /* payload word index in that op's record */
} dmr_trace_val_t;

typedef struct dmr_trace_act {
	uint8_t kind;	/* dmr_trace_actkind_t */
	uint16_t field; /* payload word written */
	dmr_trace_val_t val;
} dmr_trace_act_t;

/* Guard kinds: an op whose guard is false is skipped (not issued; for an op
 * already locked, its actions are not applied and the record is unlocked
 * unchanged). */
typedef enum dmr_trace_guardkind {
	DMR_TGUARD_NONE = 0,
	DMR_TGUARD_PRESENT = 1, /* op g.op's record is present */
	DMR_TGUARD_LESS = 2,	/* word f of op g.op < word f2 of op g.op (unsigned) */
} dmr_trace_guardkind_t;

typedef struct dmr_trace_guard {
	uint8_t kind;	/* dmr_trace_guardkind_t */
	int16_t op;	/* an op in an earlier round (its read image has
			   arrived when this op is issued), or this op itself
			   when it is U or D (guard on its own read image) */
	uint16_t f, f2; /* payload words of op's record (LESS only) */
} dmr_trace_guard_t;

typedef struct dmr_trace_op {
	uint8_t kind;	     /* dmr_trace_opkind_t */
	uint8_t table;	     /* index into dmr_trace_hdr_t.tables */
	uint16_t round;	     /* 0-based, nondecreasing within the txn */
	uint32_t count;	     /* records read (DMR_TOP_READ range); else 1 */
	int64_t key;	     /* slot, or base when dep.op >= 0 */
	dmr_trace_val_t dep; /* dep.op >= 0: slot = key + value (op in an earlier round) */
	int64_t lo, hi;	     /* with dep: value must be in [lo, hi); else
				INSERT -> table full, others -> skipped */
	dmr_trace_guard_t guard;
	uint8_t nacts; /* actions, applied in order; U and I ops only */
	dmr_trace_act_t acts[DMR_TRACE_MAX_ACTS];
} dmr_trace_op_t;

typedef struct dmr_trace_txn {
	uint64_t id;   /* "txn" column; strictly increasing in a file */
	uint16_t type; /* index into dmr_trace_hdr_t.types */
	int64_t xv;    /* application value summed over committed txns
			  (verification: deposits, increments) */
	uint32_t nops;
	uint32_t line; /* file line of the first row (for errors) */
	dmr_trace_op_t ops[DMR_TRACE_MAX_OPS];
} dmr_trace_txn_t;

typedef struct dmr_trace_table {
	char name[DMR_TRACE_NAME_MAX];
	uint64_t rows;		/* slots */
	uint32_t payload_bytes; /* multiple of 8, >= 8 */
	uint64_t loaded;	/* slots [0, loaded) are present at start */
} dmr_trace_table_t;

typedef struct dmr_trace_param {
	char key[DMR_TRACE_NAME_MAX];
	char val[128];
} dmr_trace_param_t;

typedef struct dmr_trace_hdr {
	int version;
	char workload[DMR_TRACE_NAME_MAX]; /* tpcc | smallbank | ycsb | ... */
	char regime[64];		   /* e.g. extreme, hot:2/0.92, uniform */
	uint32_t ntables;
	dmr_trace_table_t tables[DMR_TRACE_MAX_TABLES];
	uint32_t ntypes;
	char types[DMR_TRACE_MAX_TYPES][DMR_TRACE_NAME_MAX]; /* txn type names */
	uint32_t nparams;
	dmr_trace_param_t params[DMR_TRACE_MAX_PARAMS]; /* generator params */
	uint64_t txns;					/* declared count (0 = unknown) */
} dmr_trace_hdr_t;

/*
 * Names (workload, table, type, parameter key) are 1..DMR_TRACE_NAME_MAX-1
 * printable ASCII characters without space, ',', '"', ';' or '#'
 * (FORMAT.md "Names"); the writer rejects others.
 */

/* Value of generator parameter `key` (exact match), or NULL when absent.
 * The string belongs to *h and lives as long as it is unchanged. */
const char *dmr_trace_hdr_param(const dmr_trace_hdr_t *h, const char *key);
/*
 * Add parameter key=val, or replace the value when key is present. Both
 * strings are copied. Errors (h unchanged): DMR_ERR_INVALID when key is not
 * a valid name or val contains a control character (e.g. newline);
 * DMR_ERR_RANGE when key or val is too long (val: at most 127 chars) or the
 * table already holds DMR_TRACE_MAX_PARAMS parameters.
 */
dmr_status_t dmr_trace_hdr_set(dmr_trace_hdr_t *h, const char *key, const char *val);
/* Index (0-based, declaration order) of the table / txn type called `name`,
 * -1 if absent. */
int dmr_trace_hdr_table(const dmr_trace_hdr_t *h, const char *name);
int dmr_trace_hdr_type(const dmr_trace_hdr_t *h, const char *name);

/* ---- reader ---------------------------------------------------------- */

typedef struct dmr_trace_reader dmr_trace_reader_t;

/*
 * Open the trace file at `path` and parse its header (up to and including
 * the column header line). The reader holds one 256 KiB read buffer and one
 * line buffer: memory is O(1) in trace length (lines are limited to 64 KiB).
 * Errors (*r_p unchanged, nothing left open):
 *  - DMR_ERR_IO: missing or unreadable file (err: "PATH: strerror");
 *  - DMR_ERR_PARSE: bad header; err is "PATH:LINE: field NAME: reason"
 *    (missing or unknown magic line, version > DMR_TRACE_VERSION, malformed
 *    table line, payload not a multiple of 8, no tables, missing column
 *    header line, a UTF-8 byte-order mark before the magic line, ...);
 *  - DMR_ERR_INVALID: path is not a regular file (a pipe, a terminal, a
 *    device: the header is read twice and the end checked before a run);
 *  - DMR_ERR_NOMEM.
 * On success *r_p owns the open file; release it with dmr_trace_close().
 * The reader is not thread-safe; use one reader per thread.
 */
dmr_status_t dmr_trace_open(const char *path, dmr_trace_reader_t **r_p, dmr_err_t *err);
/*
 * Is path a file a trace can be read from? A trace (CSV, its cache, a KV
 * trace) is read from a regular file: its start is read twice and its end
 * checked before a run, so a directory, a pipe, a terminal or a device is
 * refused: DMR_ERR_INVALID, err naming path and what it is. "-" that does
 * not exist: DMR_ERR_IO with a hint (no trace is read from standard input).
 * DMR_OK otherwise, also when path does not exist (the open reports it).
 * dmr_trace_open, dmr_trace_open_cached, dmr_kv_trace_open and
 * dmr_kvops_open call it.
 */
dmr_status_t dmr_trace_check_file(const char *path, dmr_err_t *err);
/*
 * Before any transaction is read (right after dmr_trace_open): for a regular
 * file, check what its end shows, so that a long replay does not meet it at
 * its end (issue #15 D19): a last line without its newline ("FILE:LINE:
 * truncated: last line has no trailing newline", naming that line) and
 * fewer transactions than `# txns` declares ("FILE:LINE: field txns:
 * truncated: N of M transactions", naming the last line); the same messages
 * dmr_trace_next gives at the end. Reads the file once more (the first
 * field of each line, with getline: about 1 s per GB) and counts its
 * transactions. Not a regular file (a pipe): nothing checked, DMR_OK.
 * Errors: DMR_ERR_PARSE (then sticky: dmr_trace_next returns it too).
 */
dmr_status_t dmr_trace_scan(dmr_trace_reader_t *r, dmr_err_t *err);
/* The transactions in the file as counted by dmr_trace_scan (an upper
 * bound: changes of the raw `txn` field from one line to the next, so a
 * quoted id counts apart from the same id unquoted), or UINT64_MAX when it
 * was not counted (no scan, or not a regular file). */
uint64_t dmr_trace_file_txns(const dmr_trace_reader_t *r);
/* The parsed header; owned by r, valid until dmr_trace_close(r). */
const dmr_trace_hdr_t *dmr_trace_header(const dmr_trace_reader_t *r);
/*
 * Read the next transaction into *txn (caller-owned scratch, reused across
 * calls; ~40 KiB, so keep it off small stacks). Exactly one transaction per
 * call; every op has passed the static checks of FORMAT.md against the
 * header and the earlier ops of its transaction. Op fields not given in the
 * file have the defaults of dmr_trace_txn_op().
 * Returns
 *  - DMR_OK: *txn holds the transaction (nops >= 1);
 *  - DMR_EOF: clean end of file, no transaction (again on every
 *    further call);
 *  - DMR_ERR_PARSE: err is "PATH:LINE: field NAME: reason" (wrong field
 *    count, unknown op/table/type, bad or out-of-range number, key beyond
 *    the table, dep/guard/act referring to a later op or round, rounds or
 *    txn ids decreasing, too many ops, truncated file: last line without
 *    newline or fewer transactions than declared);
 *  - DMR_ERR_IO: read error.
 * On error the contents of *txn are unspecified, and the error is sticky:
 * later calls return it again until dmr_trace_rewind().
 */
dmr_status_t dmr_trace_next(dmr_trace_reader_t *r, dmr_trace_txn_t *txn, dmr_err_t *err);
/* A transaction as its record in the binary cache (dmr_trace_next_rec). */
typedef struct dmr_trace_rec {
	const void *bytes; /* in the reader's window: valid until its next call */
	size_t len;	   /* bytes */
	uint32_t nops;	   /* 1 .. DMR_TRACE_MAX_OPS */
	uint64_t id;	   /* the transaction's trace id */
} dmr_trace_rec_t;

/*
 * The next transaction as its record in the binary cache's layout (FORMAT.md
 * "Binary cache": the 24-byte transaction record and its op records, without
 * the padding), not decoded: for a caller that keeps transactions to decode
 * later (replay/txnq.h, the replay engine's read-ahead: ~32 B per TPC-C op
 * against 160 B decoded). Only for a reader on a binary cache (opened by
 * dmr_trace_open_cached on a fresh cache, or on a .dmrc); dmr_trace_is_bin()
 * says which. rec->bytes points into r's window, valid until the next call
 * on r (copy what is kept). Every record passes the checks dmr_trace_next
 * makes of it (lengths, action modes, the slice checksum), so that
 * dmr_trace_rec_decode of the same bytes succeeds.
 * Returns DMR_OK, DMR_EOF, DMR_ERR_PARSE (a damaged cache: as dmr_trace_next),
 * DMR_ERR_IO, or DMR_ERR_UNSUPPORTED (r reads CSV: nothing consumed).
 * Errors are sticky as dmr_trace_next's; both calls may be mixed on one r.
 */
dmr_status_t dmr_trace_next_rec(dmr_trace_reader_t *r, dmr_trace_rec_t *rec, dmr_err_t *err);
/* 1 when r reads a binary cache (dmr_trace_next_rec works), else 0. */
int dmr_trace_is_bin(const dmr_trace_reader_t *r);
/* Decode a record that dmr_trace_next_rec returned (its len bytes, copied
 * unchanged anywhere, any alignment) into *txn, whose ops[] must hold its
 * nops: the transaction dmr_trace_next would have returned, field by field,
 * but for the actions past each op's nacts, which it leaves as they were
 * (dmr_trace_next zeroes them; readers stop at nacts, and not writing them
 * spares the 96 bytes of a read op's actions). Reads only [rec, rec + len)
 * of such bytes; it does not check them again
 * (bytes from elsewhere may be read up to 158 bytes past an op that claims
 * more than it holds). DMR_OK, or DMR_ERR_PARSE when the op records do not
 * end at len (bytes that are not such a record). */
dmr_status_t dmr_trace_rec_decode(const void *rec, size_t len, dmr_trace_txn_t *txn);
/* Rewind to the first transaction (for --duration runs that loop); clears a
 * sticky parse error. Errors: DMR_ERR_IO (seek failed). */
dmr_status_t dmr_trace_rewind(dmr_trace_reader_t *r, dmr_err_t *err);
/* Close the file and free r. r may be NULL. */
void dmr_trace_close(dmr_trace_reader_t *r);
/* Rows (operations) of the transactions returned by dmr_trace_next() since
 * dmr_trace_open(); cumulative, not reset by dmr_trace_rewind(). */
uint64_t dmr_trace_rows(const dmr_trace_reader_t *r);

/* ---- binary trace cache (trace_cache.c; FORMAT.md "Binary cache") ----- */

typedef struct dmr_trace_cache_opts {
	int off;	 /* 1: no cache, read the CSV (dmr_trace_open) */
	const char *dir; /* NULL or "": beside the CSV, PATH.dmrc; else
			    DIR/BASENAME-HASH.dmrc (HASH of the CSV's real path) */
	int quiet;	 /* 1: no note on stderr (compiling, falling back to the
			    CSV, a cache given as the trace): for a second open
			    of the same trace; --quiet keeps the notes (README) */
	int nobuild;	 /* 1: read the cache only when it is fresh; when it is
			    absent, stale or of another layout, read the CSV
			    (nothing built; a corrupt cache is still refused) */
} dmr_trace_cache_opts_t;

/*
 * Open the trace `path` through its binary cache: when the cache exists,
 * is intact and was built from this CSV (same size, mtime in ns and content
 * hash of the first and last MiB and 14 interior 64 KiB slices), it is
 * mapped and read; when it is absent, stale or of another layout version it
 * is (re)built first (dmr_trace_cache_build) and then read. When path is
 * itself a cache file it is read as it is. The reader then behaves as
 * dmr_trace_open's (same header, the same transactions field by field,
 * rewind, rows; messages name `path` and its CSV lines), except that its
 * memory is the mapping, released behind the read position (at most 4 MiB resident).
 * When the cache cannot be created beside the CSV (directory not writable)
 * the CSV is read directly and a note goes to stderr (unless quiet).
 * A CSV the build finds malformed is read directly instead (no cache), so
 * that its error comes from dmr_trace_next at the same transaction as
 * without a cache. Errors (*r_p unchanged): those of dmr_trace_open;
 * DMR_ERR_PARSE when the cache exists but is corrupt
 * or truncated ("CACHE: trace cache of PATH is corrupt: data checksum
 * mismatch; remove it (it is rebuilt) or run with --no-trace-cache"): it
 * is refused, never silently replaced; DMR_ERR_IO (cannot write in co->dir,
 * mmap failed, CSV changed while being compiled); DMR_ERR_NOMEM.
 * co NULL or co->off: plain dmr_trace_open.
 */
dmr_status_t dmr_trace_open_cached(const char *path, const dmr_trace_cache_opts_t *co,
				   dmr_trace_reader_t **r_p, dmr_err_t *err);
/*
 * Compile the CSV trace csv into the cache file `cache`: written to
 * "cache.tmp.XXXXXX" beside it, fsync'ed and renamed over cache
 * (atomic: runs building the same cache concurrently each rename a
 * complete file; a failed build leaves cache untouched). Errors: those of
 * dmr_trace_open/next on csv (nothing renamed), DMR_ERR_INTERRUPTED (a
 * SIGINT/SIGTERM flag, core/base/sig.h, seen while building: nothing
 * renamed; dmr_trace_open_cached then reads the CSV), DMR_ERR_INVALID (csv is a
 * cache), DMR_ERR_IO (create, write, rename), DMR_ERR_NOMEM.
 */
dmr_status_t dmr_trace_cache_build(const char *csv, const char *cache, dmr_err_t *err);
/* The cache path of csv for cache directory dir (see dmr_trace_cache_opts_t)
 * into out[outsz]. Errors: DMR_ERR_IO (dir given and csv has no real path),
 * DMR_ERR_RANGE (does not fit). */
dmr_status_t dmr_trace_cache_path(const char *csv, const char *dir, char *out, size_t outsz,
				  dmr_err_t *err);

/* ---- writer ---------------------------------------------------------- */

typedef struct dmr_trace_writer dmr_trace_writer_t;

/*
 * Start writing the trace `path`: the data go to "path.tmp" (created or
 * truncated), which dmr_trace_finish() renames to path; path itself is not
 * touched before then. path "-" is standard output: written as it goes,
 * left open by finish and abandon (a failed or abandoned stream stops
 * short, and a reader refuses it: its last line is cut or fewer
 * transactions than "# txns" declares). The header (*h is copied; h->version is ignored,
 * DMR_TRACE_VERSION is written) is written immediately. h->txns, when not 0,
 * is the number of transactions that must be written before finish.
 * Errors (*w_p unchanged, no .tmp left behind):
 *  - DMR_ERR_INVALID: the header breaks FORMAT.md (no workload, no tables,
 *    bad name, payload_bytes not a positive multiple of 8, loaded > rows,
 *    ...); err names the field;
 *  - DMR_ERR_IO: cannot create path.tmp; DMR_ERR_NOMEM.
 * On success *w_p owns the file; end with dmr_trace_finish() or
 * dmr_trace_abandon(). Not thread-safe.
 */
dmr_status_t dmr_trace_create(const char *path, const dmr_trace_hdr_t *h, dmr_trace_writer_t **w_p,
			      dmr_err_t *err);
/*
 * Append one transaction (txn->nops rows). The transaction is first checked
 * with the reader's static checks (FORMAT.md), so that whatever is written
 * reads back. Errors:
 *  - DMR_ERR_INVALID: txn breaks the format (nops 0 or > DMR_TRACE_MAX_OPS,
 *    id not above the previous id, unknown type/table, key out of range,
 *    bad dep/guard/act, misuse of dmr_trace_op_act*()); err is
 *    "PATH: txn ID op I: field NAME: reason". Nothing was written; the
 *    writer stays usable.
 *  - DMR_ERR_IO: write failed; sticky (finish will fail too).
 */
dmr_status_t dmr_trace_write(dmr_trace_writer_t *w, const dmr_trace_txn_t *txn, dmr_err_t *err);
/*
 * Flush, close and rename path.tmp to path (replacing an existing file only
 * now, atomically). Always frees w. Errors: DMR_ERR_IO (an earlier or final
 * write, close or rename failed), DMR_ERR_INVALID (h->txns was declared and
 * a different number of transactions was written); on error path.tmp is
 * removed and an existing file at path is left untouched.
 */
dmr_status_t dmr_trace_finish(dmr_trace_writer_t *w, dmr_err_t *err);
/* Abandon: close and remove path.tmp, free w; path is untouched. w may be
 * NULL. */
void dmr_trace_abandon(dmr_trace_writer_t *w);

/* ---- building transactions (generators) ------------------------------ */

/*
 * A generator fills a caller-owned dmr_trace_txn_t: set nops = 0, id, type
 * and xv, then append ops with dmr_trace_txn_op() and set dep / lo / hi /
 * count / guard directly or add actions with dmr_trace_op_act*(). Checking
 * is done by dmr_trace_write().
 */

/*
 * Append op t->ops[t->nops] = {kind, table, round, key} with the defaults
 * count = 1, dep.op = -1 (no dep), lo = hi = 0 (no range), guard NONE,
 * nacts = 0; returns its index. Returns -1 (t unchanged) when
 * DMR_TRACE_MAX_OPS ops exist or an argument does not fit the op: kind not
 * one of 'R' 'U' 'I' 'D', table outside 0..DMR_TRACE_MAX_TABLES-1, round
 * outside 0..65535.
 */
int dmr_trace_txn_op(dmr_trace_txn_t *t, char kind, int table, int round, int64_t key);
/*
 * Add an action to *op: kind DMR_TACT_SET / DMR_TACT_ADD on payload word
 * `field` with literal value `lit`. Misuse (more than DMR_TRACE_MAX_ACTS
 * actions, bad kind, field outside 0..65535) marks the op's last action
 * invalid, so that dmr_trace_write() rejects the transaction (DMR_ERR_INVALID).
 */
void dmr_trace_op_act(dmr_trace_op_t *op, int kind, int field, int64_t lit);
/* As dmr_trace_op_act(), the value being word `sfield` of the read image of
 * op `sop` (an earlier op of the same transaction). Misuse as above, also
 * sop outside 0..DMR_TRACE_MAX_OPS-1 or sfield outside 0..65535. */
void dmr_trace_op_act_ref(dmr_trace_op_t *op, int kind, int field, int sop, int sfield);

#endif /* DMR_TRACE_H */
