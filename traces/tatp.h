/*
 * traces/tatp.h - TATP (Telecom Application Transaction Processing
 * benchmark, IBM/Nokia "TATP Benchmark Description" v1.0, 2009) on
 * dmreplay: the schema shared by the generator (tatp.c) and the verifier
 * (verify.c), and the generator's C API.
 *
 * Layout as the anchors lay it out (minghust/ford workload/tatp/tatp_db.h,
 * the same in minghust/motor and adslabcuhk/crest benchmark/TATP): five
 * tables, the four of the spec plus sec_subscriber, the sub_nbr -> s_id
 * index that UPDATE_LOCATION, INSERT_CALL_FORWARDING and
 * DELETE_CALL_FORWARDING read first (one round trip, as in FORD). Slots are
 * direct, per subscriber s in [0, S):
 *
 *   subscriber        S rows    slot s                 all loaded
 *   sec_subscriber    S rows    slot s                 all loaded
 *   access_info       4S rows   s*4 + ai_type-1        all loaded
 *   special_facility  4S rows   s*4 + sf_type-1        all loaded
 *   call_forwarding   12S rows  t*4S + s*4 + sf_type-1 the first 4S loaded
 *
 * where t = start_time / 8 (start_time in {0, 8, 16}). Putting t outermost
 * makes the rows with start_time 0 a prefix, so "slots [0, loaded) present"
 * (FORMAT.md) gives every special facility one call_forwarding row at start
 * and the other two absent. GENERATORS.md "TATP" lists what differs from
 * the spec's random population and why.
 */
#ifndef DMR_TATP_H
#define DMR_TATP_H

#include <stdint.h>

#include "gen.h"
#include "trace.h"
#include "workload.h"

/* ---- schema ------------------------------------------------------------ */

#define DMR_TATP_AI_TYPES 4		     /* ai_type 1..4 per subscriber (TATP description) */
#define DMR_TATP_SF_TYPES 4		     /* sf_type 1..4 */
#define DMR_TATP_STARTS 3		     /* start_time 0, 8, 16 */
#define DMR_TATP_MAX_SUBSCRIBERS 1000000000u /* FORD's TATP_MAX_SUBSCRIBERS */

enum dmr_tatp_table {
	DMR_TATP_SUBSCRIBER = 0,
	DMR_TATP_SEC_SUBSCRIBER,
	DMR_TATP_ACCESS_INFO,
	DMR_TATP_SPECIAL_FACILITY,
	DMR_TATP_CALL_FORWARDING,
	DMR_TATP_NTABLES
};
extern const char *const dmr_tatp_table_names[DMR_TATP_NTABLES];

/* Payload words (8 B each; the enum's last member is the word count). */
enum {
	DMR_TATP_S_UPDATES, /* ours: +1 per committed subscriber update (verify.c) */
	DMR_TATP_S_BITS,    /* bit_1 .. bit_10 */
	DMR_TATP_S_HEX,
	DMR_TATP_S_BYTES,
	DMR_TATP_S_MSC_LOCATION,
	DMR_TATP_S_VLR_LOCATION,
	DMR_TATP_S_WORDS
};
enum { DMR_TATP_SEC_S_ID, DMR_TATP_SEC_WORDS };
enum { DMR_TATP_AI_DATA12, DMR_TATP_AI_DATA34, DMR_TATP_AI_WORDS };
enum {
	DMR_TATP_SF_CF_COUNT, /* ours: call_forwarding rows inserted - deleted (verify.c) */
	DMR_TATP_SF_DATA_A,
	DMR_TATP_SF_OTHER, /* is_active, error_cntrl, data_b */
	DMR_TATP_SF_WORDS
};
enum { DMR_TATP_CF_END_TIME, DMR_TATP_CF_NUMBERX, DMR_TATP_CF_WORDS };

/* Transaction types = order of dmr_trace_hdr_t.types (the spec's order). */
enum dmr_tatp_type {
	DMR_TATP_T_GET_SUBSCRIBER_DATA = 0,
	DMR_TATP_T_GET_NEW_DESTINATION,
	DMR_TATP_T_GET_ACCESS_DATA,
	DMR_TATP_T_UPDATE_SUBSCRIBER_DATA,
	DMR_TATP_T_UPDATE_LOCATION,
	DMR_TATP_T_INSERT_CALL_FORWARDING,
	DMR_TATP_T_DELETE_CALL_FORWARDING,
	DMR_TATP_NTYPES
};
extern const char *const dmr_tatp_type_names[DMR_TATP_NTYPES];

static inline uint64_t dmr_tatp_ai_slot(uint64_t s, unsigned ai_type)
{
	return s * DMR_TATP_AI_TYPES + ai_type - 1;
}
static inline uint64_t dmr_tatp_sf_slot(uint64_t s, unsigned sf_type)
{
	return s * DMR_TATP_SF_TYPES + sf_type - 1;
}
/* call_forwarding row of (s, sf_type, start_time = 8 t) among S subscribers */
static inline uint64_t dmr_tatp_cf_slot(uint64_t S, uint64_t s, unsigned sf_type, unsigned t)
{
	return (uint64_t)t * S * DMR_TATP_SF_TYPES + dmr_tatp_sf_slot(s, sf_type);
}

/* ---- generator --------------------------------------------------------- */

enum dmr_tatp_mix {
	DMR_TATP_MIX_SPEC = 0, /* 35/10/35/2/14/2/2 (TATP description; FORD, Motor) */
	DMR_TATP_MIX_CREST,    /* 36/10/36/2/14/2/0 (adslabcuhk/crest TATPConstant.h) */
	DMR_TATP_MIX_CUSTOM,   /* dmr_tatp_cfg_t.mix_pct */
};

enum dmr_tatp_dist {
	DMR_TATP_NURAND = 0, /* spec's non-uniform s_id (FORD's GetNonUniformRandomSubscriber) */
	DMR_TATP_UNIFORM,
};

typedef struct dmr_tatp_cfg {
	uint64_t txns;
	uint64_t seed;
	uint64_t subscribers; /* S, 1 .. DMR_TATP_MAX_SUBSCRIBERS (default 100000) */
	int dist;	      /* enum dmr_tatp_dist; a non-uniform --regime replaces it */
	int mix;	      /* enum dmr_tatp_mix */
	unsigned mix_pct[DMR_TATP_NTYPES];
	int cf_check;	     /* 1 (default): the call_forwarding balance counter */
	const char *preset;  /* NULL or its name (header param) */
	dmr_regime_t regime; /* hot:K/P over subscribers (replaces dist) */
	int quiet;
} dmr_tatp_cfg_t;

/* Defaults: 100000 subscribers (FORD config/tatp_config.json), nurand,
 * spec mix, cf_check on, 100000 txns, seed 1, uniform regime. */
void dmr_tatp_cfg_default(dmr_tatp_cfg_t *cfg);

/* Mix of cfg in percent per type (enum order). */
const unsigned *dmr_tatp_mix_pct(const dmr_tatp_cfg_t *cfg);

/*
 * Parse a --mix value: "spec", "crest", or seven percentages GSD,GND,GAD,
 * USD,UL,ICF,DCF (integers 0..100 summing to 100). Errors: DMR_ERR_INVALID
 * naming --mix, the value, the sum or the bad field and the allowed values.
 */
dmr_status_t dmr_tatp_mix_parse(const char *s, dmr_tatp_cfg_t *cfg, dmr_err_t *err);

/*
 * The spec's NURand A for S subscribers (TATP description; the values
 * of FORD's tatp_db.h): 65535 up to 1,000,000, 1048575 up to 10,000,000,
 * else 2097151.
 */
uint64_t dmr_tatp_nurand_a(uint64_t subscribers);

/*
 * Header: the 5 tables, the 7 type names, params subscribers, dist,
 * nurand_a, mix, cf_check, preset (when given), footprint_bytes and the
 * common ones. Unless quiet, prints the footprint. Errors: DMR_ERR_INVALID
 * naming the bad field (subscribers out of range, mix not summing to 100,
 * a hot set not smaller than the subscribers, a drift regime).
 */
dmr_status_t dmr_tatp_header(const dmr_tatp_cfg_t *cfg, dmr_trace_hdr_t *hdr_p, dmr_err_t *err);

/*
 * Generate cfg->txns transactions into emit (ids 0 .. txns-1),
 * deterministic in cfg; shapes in GENERATORS.md "TATP". by_type_p (may be
 * NULL) receives DMR_TATP_NTYPES counts. Errors: DMR_ERR_INVALID,
 * DMR_ERR_NOMEM, or what emit returned.
 */
dmr_status_t dmr_tatp_generate(const dmr_tatp_cfg_t *cfg, dmr_gen_emit_func_t emit, void *arg,
			       uint64_t *by_type_p, dmr_err_t *err);

/* Command line: see --help. argv[0] = "tatp". */
int dmr_gen_tatp_main(int argc, char **argv);

#endif /* DMR_TATP_H */
