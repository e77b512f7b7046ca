/*
 * traces/ycsb.h - YCSB core workloads (Cooper et al., SoCC 2010; YCSB's
 * site.ycsb.workloads.CoreWorkload) on dmreplay: property-file reader and
 * generator API.
 *
 * One table, usertable: rows = recordcount + the inserts of this trace,
 * loaded = recordcount; payload = 8 (word 0: the RMW counter) +
 * fieldcount * fieldlength rounded up to 8. Field f starts at byte
 * 8 + f * fieldlength; an update writes the word holding that byte. Key
 * number k is slot k (YCSB's ordered key space; see GENERATORS.md).
 * Invariant (verify.c): sum of the counter words = committed_xv (xv = 1 per
 * ReadModifyWrite).
 */
#ifndef DMR_YCSB_H
#define DMR_YCSB_H

#include <stdint.h>

#include "gen.h"
#include "trace.h"
#include "workload.h"

#define DMR_YCSB_TABLE 0   /* usertable */
#define DMR_YCSB_COUNTER 0 /* payload word of the RMW counter */

/* Operation types = order of dmr_trace_hdr_t.types; also the order of
 * YCSB's operation chooser. */
enum dmr_ycsb_type {
	DMR_YCSB_T_READ = 0,
	DMR_YCSB_T_UPDATE,
	DMR_YCSB_T_INSERT,
	DMR_YCSB_T_SCAN,
	DMR_YCSB_T_RMW,
	DMR_YCSB_NTYPES
};
extern const char *const dmr_ycsb_type_names[DMR_YCSB_NTYPES];

enum dmr_ycsb_dist { DMR_YCSB_UNIFORM = 0, DMR_YCSB_ZIPFIAN, DMR_YCSB_LATEST };

/* The properties we use, with YCSB's defaults (CoreWorkload). */
typedef struct dmr_ycsb_props {
	char path[256];		      /* file read (for messages and the header) */
	uint64_t recordcount;	      /* required, >= 2 */
	uint64_t operationcount;      /* 0 = absent */
	double prop[DMR_YCSB_NTYPES]; /* readproportion 0.95, updateproportion 0.05,
					 insertproportion 0, scanproportion 0,
					 readmodifywriteproportion 0 */
	int requestdistribution;      /* enum dmr_ycsb_dist, default uniform */
	uint64_t minscanlength;	      /* 1 */
	uint64_t maxscanlength;	      /* 1000 */
	int scanlengthdistribution;   /* DMR_YCSB_UNIFORM (default) or _ZIPFIAN */
	uint32_t fieldcount;	      /* 10 */
	uint32_t fieldlength;	      /* 100 (bytes) */
} dmr_ycsb_props_t;

/* YCSB defaults (recordcount 0 = not set). */
void dmr_ycsb_props_default(dmr_ycsb_props_t *p);

/* The operation proportions (given, or YCSB's defaults 0.95 read, 0.05
 * update) must sum to 1 within this: YCSB normalises any sum silently, we
 * refuse it (issue #15 D16), so that workloadX's mix is the one written. */
#define DMR_YCSB_PROP_TOL 1e-6

/*
 * Read a YCSB property file: "key=value" lines, '#' or '!' comments, blank
 * lines; keys not listed above are ignored. Errors: DMR_ERR_IO (cannot
 * open/read), DMR_ERR_PARSE "FILE:LINE: ..." for a line without '=' or with
 * an empty key, a key given twice (any key: "duplicate key (first given at
 * line N)"), a UTF-8 byte-order mark, a bad value of a known key (not a
 * number, out of range, an unsupported distribution such as hotspot), and
 * "FILE: ..." for a missing recordcount, proportions summing to 0, or
 * proportions that do not sum to 1 within DMR_YCSB_PROP_TOL (each named
 * with its line, or "default"). *p is set only on success.
 */
dmr_status_t dmr_ycsb_props_load(const char *path, dmr_ycsb_props_t *p, dmr_err_t *err);

/* Transaction types when ops_per_txn > 1 (every op still has its YCSB
 * type; the transaction is ReadOnly when all its ops are Reads). */
enum { DMR_YCSB_T_READ_ONLY = 0, DMR_YCSB_T_READ_WRITE, DMR_YCSB_NTXN_TYPES };
#define DMR_YCSB_MAX_OPS_PER_TXN 64
#define DMR_YCSB_MAX_THETA 5.0

typedef struct dmr_ycsb_cfg {
	dmr_ycsb_props_t props;
	uint64_t txns;	      /* transactions */
	uint32_t ops_per_txn; /* YCSB operations per transaction, 1 (0 = 1) ..
				 DMR_YCSB_MAX_OPS_PER_TXN; the operation
				 proportions apply per op, keys distinct within a
				 transaction; > 1 refuses scans */
	int theta_set;	      /* 1: keys Zipf(theta) over the recordcount loaded
				 keys, key 0 the most popular (exact, zipf.h
				 dmr_zipf_ri_t), replacing requestdistribution */
	double theta;	      /* 0 .. DMR_YCSB_MAX_THETA */
	uint64_t seed;
	dmr_regime_t regime; /* used when regime_override */
	int regime_override; /* 1: keys from the regime (hot:K/P: a K-record hot set
				0..K-1, the rest uniform over the other existing
				keys), replacing requestdistribution */
	int quiet;
} dmr_ycsb_cfg_t;

/*
 * Header: table usertable (rows = recordcount + number of inserts this
 * trace makes, counted beforehand from the operation-type stream), the 5
 * type names (ReadOnly, ReadWrite when ops_per_txn > 1), params
 * (workload_file, recordcount, the proportions, requestdistribution, scan
 * lengths, field sizes, inserts, footprint_bytes, ...; ops_per_txn and
 * zipf_theta only when given, so that default traces are unchanged).
 * Errors: DMR_ERR_INVALID naming the option (--ops-per-txn, --theta) and
 * its allowed values.
 */
dmr_status_t dmr_ycsb_header(const dmr_ycsb_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err);

/*
 * Generate cfg->txns transactions into emit; deterministic in cfg. Draws:
 * operation types from an mt19937 seeded with seed, keys and values from a
 * second one seeded with seed + DMR_YCSB_KEY_SEED_OFFSET (so the header can
 * count inserts without generating keys). Key choice as YCSB's
 * CoreWorkload: zipfian = ScrambledZipfian over recordcount +
 * 2 * txns * insertproportion keys, redrawn while beyond the last inserted
 * key; uniform over the recordcount loaded keys; latest =
 * SkewedLatest (last inserted key minus a Zipf draw); theta >= 0: exact
 * Zipf(theta) over the loaded keys. by_type_p (may be NULL) receives
 * DMR_YCSB_NTYPES counts of operations (= transactions when
 * ops_per_txn is 1).
 */
#define DMR_YCSB_KEY_SEED_OFFSET 0x7F4A7C15UL
dmr_status_t dmr_ycsb_generate(const dmr_ycsb_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       uint64_t *by_type_p, dmr_err_t *err);

#endif /* DMR_YCSB_H */
