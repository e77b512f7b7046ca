/*
 * models/model.c - load a hardware profile (JSON, jansson) and convert it
 * once into the simulator's integer units.
 */
#include "model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* RoCEv2 framing per packet (bytes on the wire besides RDMA payload and
 * extended transport headers): preamble+SFD 8, Ethernet header 14, IPv4 20,
 * UDP 8, BTH 12 (IBTA vol. 1, 9.2), ICRC 4 (IBTA annex A17), FCS 4,
 * inter-frame gap 12 (IEEE 802.3 clause 4.4.2). */
#define ROCEV2_PKT_OVERHEAD 82u
/* InfiniBand framing per packet ("link_layer": "ib"): LRH 8 (IBTA vol. 1,
 * 7.7), BTH 12, ICRC 4, VCRC 2 (7.8); no GRH inside one subnet (a local
 * route: LID addressing), no preamble or inter-frame gap (the link's
 * 64b/66b coding is inside link_gbps, the data rate). */
#define IB_PKT_OVERHEAD 26u
#define IB_RETH_BYTES 16u	 /* IBTA vol. 1, 9.3.3.3 */
#define IB_AETH_BYTES 4u	 /* IBTA vol. 1, 9.3.5 */
#define IB_ATOMICETH_BYTES 28u	 /* IBTA vol. 1, 9.3.3.4 */
#define IB_ATOMICACKETH_BYTES 8u /* IBTA vol. 1, 9.3.6 */

typedef struct param_spec {
	const char *name;
	int required; /* 0: optional (derived or defaulted) */
	int integer;
	double min, max; /* legal range: hardware that exists, with margin */
	int zero_ok;	 /* 1: 0 is a legal value (the software-NIC host_* ones) */
} param_spec_t;

/* Ranges: links up to 1.6 Tb/s; latencies up to 1 ms (1e6 ns); rates from
 * 1 kop/s to 10 Gop/s; up to 1024 outstanding READ/atomic per QP. A value
 * outside is a typo or a unit mistake, refused rather than simulated.
 * Latencies that a loopback software NIC does not have (cable, switch,
 * PCIe DMA) may be 0. */
static const param_spec_t specs[] = {
    {"link_gbps", 1, 0, 0.001, 1600, 0},
    {"mtu", 1, 1, 256, 4096, 0},
    {"prop_ns", 1, 0, 0, 1e6, 1},
    {"switch_ns", 1, 0, 0, 1e6, 1},
    {"post_doorbell_ns", 1, 0, 0, 1e6, 0},
    {"post_wqe_ns", 1, 0, 0, 1e6, 0},
    {"poll_ns", 1, 0, 0, 1e6, 0},
    {"txn_logic_ns", 1, 0, 0, 1e6, 1},
    {"nic_msg_mops", 1, 0, 0.001, 1e4, 0},
    {"nic_proc_ns", 0, 0, 0, 1e6, 1},
    {"qp_max_rd_atomic", 1, 1, 1, 1024, 0},
    {"dma_read_ns", 1, 0, 0, 1e6, 1},
    {"dma_write_ns", 1, 0, 0, 1e6, 1},
    {"dma_gbps", 0, 0, 0.001, 1e4, 0},
    {"atomic_addr_mops", 1, 0, 0.001, 1e4, 0},
    {"atomic_global_mops", 1, 0, 0.001, 1e4, 0},
    {"read_rtt_ns", 1, 0, 1, 1e6, 0},
    {"read_bw_64k_gbps", 1, 0, 0.001, 1600, 0},
    /* software NIC (docs/MODEL.md): optional, 0 = hardware NIC; a CPU costs
     * at most 1 ms per WR and 1 us per byte */
    {"host_cpus", 0, 1, 0, 1024, 1},
    {"host_read_ns", 0, 0, 0, 1e6, 1},
    {"host_write_ns", 0, 0, 0, 1e6, 1},
    {"host_atomic_ns", 0, 0, 0, 1e6, 1},
    {"host_byte_ns", 0, 0, 0, 1e3, 1},
    {"host_switch_ns", 0, 0, 0, 1e6, 1},
    /* CN CPU per transaction started and per trace operation in it (the
     * replay engine: trace fetch, dispatch, bookkeeping); optional, 0 =
     * not modelled (hardware profiles: included in txn_logic_ns) */
    {"txn_begin_ns", 0, 0, 0, 1e6, 1},
    {"txn_op_ns", 0, 0, 0, 1e6, 1},
    /* software NIC: READ responder scheduling, once per doorbell */
    {"host_read_post_ns", 0, 0, 0, 1e6, 1},
    /* the NIC's QP-context cache (issue 16): optional, absent = not
     * modelled; capacity in QPs per NIC, associativity, miss cost */
    {"qpc_qps", 0, 1, 1, 1e6, 0},
    {"qpc_ways", 0, 1, 1, 64, 0},
    {"qpc_miss_ns", 0, 0, 0, 1e6, 1},
    /* NIC device memory for lock words (issue 16): optional, absent = the
     * NIC has none the model knows of */
    {"dm_kib", 0, 1, 1, 1 << 20, 0},
    {"dm_atomic_addr_mops", 0, 0, 0.001, 1e4, 0},
    {"dm_atomic_global_mops", 0, 0, 0.001, 1e4, 0},
    /* a CXL-attached memory tier at the MN (issue 16): optional, absent =
     * none; latencies added to host DRAM's, the tier's bandwidth */
    {"cxl_read_ns", 0, 0, 0, 1e6, 1},
    {"cxl_write_ns", 0, 0, 0, 1e6, 1},
    {"cxl_gbps", 0, 0, 0.001, 1e4, 0},
    /* the MN CPU serving RPCs (issue 14 lever A1): optional, absent = none
     * (the sim refuses RPCs); 1..1024 cores, costs up to 1 ms */
    {"mn_rpc_cores", 0, 1, 1, 1024, 0},
    {"mn_rpc_req_ns", 0, 0, 0, 1e6, 1},
    {"mn_rpc_op_ns", 0, 0, 0, 1e6, 1},
};

/* The unit each parameter is defined in, exactly as the profiles spell it
 * ("unit" is required and must match: a value in another unit is refused,
 * never converted). */
static const struct {
	const char *name, *unit;
} spec_units[] = {
    {"link_gbps", "Gb/s"},
    {"mtu", "bytes"},
    {"prop_ns", "ns"},
    {"switch_ns", "ns"},
    {"post_doorbell_ns", "ns"},
    {"post_wqe_ns", "ns"},
    {"poll_ns", "ns"},
    {"txn_logic_ns", "ns"},
    {"nic_msg_mops", "Mmsg/s"},
    {"nic_proc_ns", "ns"},
    {"qp_max_rd_atomic", "WRs"},
    {"dma_read_ns", "ns"},
    {"dma_write_ns", "ns"},
    {"dma_gbps", "Gb/s"},
    {"atomic_addr_mops", "Mops/s"},
    {"atomic_global_mops", "Mops/s"},
    {"read_rtt_ns", "ns"},
    {"read_bw_64k_gbps", "Gb/s"},
    {"host_cpus", "CPUs"},
    {"host_read_ns", "ns"},
    {"host_write_ns", "ns"},
    {"host_atomic_ns", "ns"},
    {"host_byte_ns", "ns/B"},
    {"host_switch_ns", "ns"},
    {"txn_begin_ns", "ns"},
    {"txn_op_ns", "ns"},
    {"host_read_post_ns", "ns"},
    {"qpc_qps", "QPs"},
    {"qpc_ways", "ways"},
    {"qpc_miss_ns", "ns"},
    {"dm_kib", "KiB"},
    {"dm_atomic_addr_mops", "Mops/s"},
    {"dm_atomic_global_mops", "Mops/s"},
    {"cxl_read_ns", "ns"},
    {"cxl_write_ns", "ns"},
    {"cxl_gbps", "Gb/s"},
    {"mn_rpc_cores", "cores"},
    {"mn_rpc_req_ns", "ns"},
    {"mn_rpc_op_ns", "ns"},
};

const char *dmr_model_param_unit(const char *name)
{
	for (size_t i = 0; i < sizeof(spec_units) / sizeof(spec_units[0]); i++)
		if (strcmp(spec_units[i].name, name) == 0)
			return spec_units[i].unit;
	return NULL;
}

static uint64_t ns_to_ps(double ns)
{
	return (uint64_t)llround(ns * 1000.0);
}

/* picoseconds per byte x 1000 at a rate in Gb/s: 8 bits / (G bit/s) = 8/G ns */
static uint64_t gbps_to_ps_per_byte_x1000(double gbps)
{
	return (uint64_t)llround(8.0 / gbps * 1000.0 * 1000.0);
}

/*
 * The idle READ path of backends/sim/sim.c, step by step; keep the two in
 * step (tests/unit/test_sim.c checks the simulated RTT against this):
 * CN CPU doorbell + 1 WQE, CN NIC (message service + processing), request
 * on the CN link, propagation, switch, MN link (cut-through: idle adds
 * nothing beyond the last byte), propagation, MN NIC (message service +
 * processing), DMA read latency, MN NIC processing, the response's last
 * byte on the MN link after the larger of its wire time and its DMA time
 * (the two stream together), propagation, switch, propagation, CN NIC
 * processing, one CQ poll.
 */
static uint64_t rtt_without_proc(const dmr_model_t *m, uint32_t bytes)
{
	/* software NIC: the responder's (and completer's) CPU time, charged
	 * when the request reaches the MN, on the idle CPU */
	uint64_t req = dmr_model_msg_wire_bytes(m, 0, m->reth_bytes, 0);
	uint64_t resp =
	    dmr_model_msg_wire_bytes(m, bytes, m->aeth_bytes, bytes > m->mtu ? m->aeth_bytes : 0);
	uint64_t t = m->post_doorbell_ps + m->post_wqe_ps;
	t += m->nic_msg_ps;
	t += dmr_model_wire_ps(m, req) + 2 * m->prop_ps + m->switch_ps;
	t += m->nic_msg_ps;
	t += dmr_model_host_ps(m, 0, bytes) + m->host_read_post_ps; /* a one-READ doorbell */
	uint64_t x = (bytes * m->dma_ps_per_byte_x1000 + 999) / 1000;
	uint64_t w = dmr_model_wire_ps(m, resp);
	t += m->dma_read_ps + (x > w ? x : w) + 2 * m->prop_ps + m->switch_ps;
	t += m->poll_ps;
	return t;
}

uint64_t dmr_model_read_rtt_rest_ps(const dmr_model_t *m, uint32_t bytes)
{
	return rtt_without_proc(m, bytes);
}

uint64_t dmr_model_read_rtt_ps(const dmr_model_t *m, uint32_t bytes)
{
	return rtt_without_proc(m, bytes) + 4 * m->nic_proc_ps;
}

/* Line of the first occurrence of "key" in the file (jansson keeps no
 * positions of values), 0 if not found: for error messages. */
static int line_of(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char pat[80], line[1024];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	int n = 0, found = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, pat)) {
			found = n;
			break;
		}
	}
	fclose(f);
	return found;
}

static int is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

static dmr_status_t find_profile(const char *name, char *path, size_t len, dmr_err_t *err)
{
	const char *dirs[3];
	int nd = 0;
	const char *env = getenv("DMR_MODELS_DIR");
	if (env && *env)
		dirs[nd++] = env;
	dirs[nd++] = DMR_SOURCE_DIR "/models";
	dirs[nd++] = "/usr/local/share/dmreplay/models";
	char tried[400] = "";
	for (int i = 0; i < nd; i++) {
		snprintf(path, len, "%s/%s.json", dirs[i], name);
		if (access(path, R_OK) == 0)
			return DMR_OK;
		size_t tl = strlen(tried);
		snprintf(tried + tl, sizeof(tried) - tl, "%s%s", tl ? ", " : "", dirs[i]);
	}
	return dmr_err_set(err, DMR_ERR_IO, "profile '%s': no %s.json in %s", name, name, tried);
}

/* A group of optional parameters given all together or not at all: v[i]
 * NAN when names[i] is absent. Returns how many are given (0 or n), or -1
 * with err naming the first missing one beside a given one ("what" says
 * what the group is). */
static int all_or_none(const char *path, const char *what, const char *const *names,
		       const double *v, int n, dmr_err_t *err)
{
	int given = 0, miss = -1, have = -1;
	for (int i = 0; i < n; i++) {
		if (isnan(v[i])) {
			if (miss < 0)
				miss = i;
		} else {
			given++;
			if (have < 0)
				have = i;
		}
	}
	if (given == 0 || given == n)
		return given;
	char list[160] = "";
	size_t off = 0;
	for (int i = 0; i < n && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i == 0 ? "" : (i == n - 1 ? " and " : ", "), names[i]);
	dmr_err_set(err, DMR_ERR_PARSE,
		    "%s:%d: parameter %s: missing: %s needs %s together (%s is given)", path,
		    line_of(path, names[have]), names[miss], what, list, names[have]);
	return -1;
}

dmr_status_t dmr_model_load(const char *name_or_path, dmr_model_t *m_p, dmr_err_t *err)
{
	char path[256];
	if (is_path(name_or_path)) {
		snprintf(path, sizeof(path), "%s", name_or_path);
		if (access(path, R_OK) != 0)
			return dmr_err_set(err, DMR_ERR_IO, "profile %s: %s", path,
					   strerror(errno));
	} else {
		dmr_status_t st = find_profile(name_or_path, path, sizeof(path), err);
		if (st != DMR_OK)
			return st;
	}

	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return dmr_err_set(err, DMR_ERR_PARSE, "%s:%d:%d: %s", path, jerr.line, jerr.column,
				   jerr.text);
	dmr_status_t st = DMR_OK;
	dmr_model_t m;
	memset(&m, 0, sizeof(m));
	snprintf(m.path, sizeof(m.path), "%s", path);
	double v[sizeof(specs) / sizeof(specs[0])];
	json_t *params = json_object_get(root, "params");
	const char *name = json_string_value(json_object_get(root, "name"));
	if (!json_is_object(root) || !name) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "%s: field \"name\": missing or not a string",
				 path);
		goto out_root;
	}
	if (strpbrk(name, ",\"\r\n") || !*name) {
		/* the name is a field of summary.csv and of report's cells: a
		 * comma had given a row with a field too many (a trial) */
		st =
		    dmr_err_set(err, DMR_ERR_PARSE,
				"%s:%d: field \"name\": empty, or holds a comma, a quote or a line "
				"break (it is a field of summary.csv)",
				path, line_of(path, "name"));
		goto out_root;
	}
	snprintf(m.name, sizeof(m.name), "%s", name);
	{
		/* the link layer: RoCEv2 (default) or InfiniBand */
		json_t *ll = json_object_get(root, "link_layer");
		const char *lls = json_string_value(ll);
		if (ll && (!lls || (strcmp(lls, "roce") && strcmp(lls, "ib")))) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: field \"link_layer\": \"roce\" (RoCEv2, the "
					 "default) or \"ib\" (InfiniBand)",
					 path, line_of(path, "link_layer"));
			goto out_root;
		}
		m.ib = lls && strcmp(lls, "ib") == 0;
	}
	if (!json_is_object(params)) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "%s: field \"params\": missing or not an object", path);
		goto out_root;
	}
	/* unknown fields and parameters are refused: a typo must not silently
	 * fall back */
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val)
	{
		if (strcmp(key, "name") && strcmp(key, "description") && strcmp(key, "params") &&
		    strcmp(key, "measured") && strcmp(key, "device") && strcmp(key, "date") &&
		    strcmp(key, "link_layer")) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: field \"%s\": unknown (name, description, params, "
					 "measured, device, date, link_layer)",
					 path, line_of(path, key), key);
			goto out_root;
		}
	}
	json_object_foreach(params, key, val)
	{
		size_t i;
		for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
			if (strcmp(specs[i].name, key) == 0)
				break;
		if (i == sizeof(specs) / sizeof(specs[0])) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: parameter %s: unknown parameter", path,
					 line_of(path, key), key);
			goto out_root;
		}
	}
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		json_t *p = json_object_get(params, specs[i].name);
		v[i] = NAN;
		if (!p) {
			if (specs[i].required) {
				st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s:%d: parameter %s: missing (required; \"params\" "
				    "starts here)",
				    path, line_of(path, "params"), specs[i].name);
				goto out_root;
			}
			continue;
		}
		if (json_is_object(p)) {
			const char *pk;
			json_t *pvv;
			json_object_foreach(p, pk, pvv)
			{
				if (strcmp(pk, "value") && strcmp(pk, "unit") &&
				    strcmp(pk, "source") && strcmp(pk, "estimate") &&
				    strcmp(pk, "spread")) {
					st = dmr_err_set(
					    err, DMR_ERR_PARSE,
					    "%s:%d: parameter %s: unknown field \"%s\" "
					    "(value, unit, source, estimate, spread)",
					    path, line_of(path, specs[i].name), specs[i].name, pk);
					goto out_root;
				}
			}
		}
		{
			const char *want = dmr_model_param_unit(specs[i].name);
			json_t *u = json_is_object(p) ? json_object_get(p, "unit") : NULL;
			char found[96];
			if (!json_is_object(p))
				snprintf(found, sizeof(found), "a bare value without \"unit\"");
			else if (!u)
				snprintf(found, sizeof(found), "no \"unit\"");
			else if (!json_is_string(u))
				snprintf(found, sizeof(found), "\"unit\" not a string");
			else
				snprintf(found, sizeof(found), "unit \"%.60s\"",
					 json_string_value(u));
			if (!want || !json_is_string(u) ||
			    strcmp(json_string_value(u), want) != 0) {
				st = dmr_err_set(
				    err, DMR_ERR_PARSE,
				    "%s:%d: parameter %s: %s, expected \"unit\": \"%s\" "
				    "(values are not converted)",
				    path, line_of(path, specs[i].name), specs[i].name, found,
				    want ? want : "?");
				goto out_root;
			}
		}
		json_t *pv = json_is_object(p) ? json_object_get(p, "value") : p;
		if (!json_is_number(pv)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: parameter %s: \"value\" missing or not a number",
					 path, line_of(path, specs[i].name), specs[i].name);
			goto out_root;
		}
		double x = json_number_value(pv);
		if (!isfinite(x) || x < 0 || (x == 0 && !specs[i].zero_ok)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: parameter %s: value %g must be %s", path,
					 line_of(path, specs[i].name), specs[i].name, x,
					 specs[i].zero_ok ? "0 or positive" : "positive");
			goto out_root;
		}
		if (x < specs[i].min || x > specs[i].max) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: parameter %s: value %g out of range [%g, %g]",
					 path, line_of(path, specs[i].name), specs[i].name, x,
					 specs[i].min, specs[i].max);
			goto out_root;
		}
		if (specs[i].integer && x != floor(x)) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s:%d: parameter %s: value %g must be an integer", path,
					 line_of(path, specs[i].name), specs[i].name, x);
			goto out_root;
		}
		v[i] = x;
	}
	{
		size_t k = 0;
#define IDX(nm)                                                                                    \
	({                                                                                         \
		for (k = 0; k < sizeof(specs) / sizeof(specs[0]); k++)                             \
			if (strcmp(specs[k].name, nm) == 0)                                        \
				break;                                                             \
		v[k];                                                                              \
	})
		m.link_gbps = IDX("link_gbps");
		m.mtu = (uint32_t)IDX("mtu");
		if (m.mtu != 256 && m.mtu != 512 && m.mtu != 1024 && m.mtu != 2048 &&
		    m.mtu != 4096) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "%s: parameter mtu: %u is not an IB MTU "
					 "(256, 512, 1024, 2048, 4096)",
					 path, m.mtu);
			goto out_root;
		}
		m.pkt_overhead = m.ib ? IB_PKT_OVERHEAD : ROCEV2_PKT_OVERHEAD;
		m.reth_bytes = IB_RETH_BYTES;
		m.aeth_bytes = IB_AETH_BYTES;
		m.atomiceth_bytes = IB_ATOMICETH_BYTES;
		m.atomicacketh_bytes = IB_ATOMICACKETH_BYTES;
		m.ps_per_byte_x1000 = gbps_to_ps_per_byte_x1000(m.link_gbps);
		m.prop_ps = ns_to_ps(IDX("prop_ns"));
		m.switch_ps = ns_to_ps(IDX("switch_ns"));
		m.post_doorbell_ps = ns_to_ps(IDX("post_doorbell_ns"));
		m.post_wqe_ps = ns_to_ps(IDX("post_wqe_ns"));
		m.poll_ps = ns_to_ps(IDX("poll_ns"));
		m.txn_logic_ps = ns_to_ps(IDX("txn_logic_ns"));
		{
			/* engine CPU per transaction: absent = 0 (not modelled) */
			double tb = IDX("txn_begin_ns"), to = IDX("txn_op_ns");
			m.txn_begin_ps = isnan(tb) ? 0 : ns_to_ps(tb);
			m.txn_op_ps = isnan(to) ? 0 : ns_to_ps(to);
		}
		m.nic_msg_ps = (uint64_t)llround(1e6 / IDX("nic_msg_mops"));
		m.qp_max_rd_atomic = (uint32_t)IDX("qp_max_rd_atomic");
		m.dma_read_ps = ns_to_ps(IDX("dma_read_ns"));
		m.dma_write_ps = ns_to_ps(IDX("dma_write_ns"));
		m.atomic_addr_mops = IDX("atomic_addr_mops");
		m.atomic_global_mops = IDX("atomic_global_mops");
		m.atomic_addr_ps = (uint64_t)llround(1e6 / m.atomic_addr_mops);
		m.atomic_global_ps = (uint64_t)llround(1e6 / m.atomic_global_mops);
		m.read_rtt_ns = IDX("read_rtt_ns");
		m.read_bw_64k_gbps = IDX("read_bw_64k_gbps");
		if (m.read_bw_64k_gbps > m.link_gbps) {
			st = dmr_err_set(
			    err, DMR_ERR_PARSE,
			    "%s:%d: parameter read_bw_64k_gbps: %g Gb/s is above the link "
			    "rate %g Gb/s",
			    path, line_of(path, "read_bw_64k_gbps"), m.read_bw_64k_gbps,
			    m.link_gbps);
			goto out_root;
		}
		/* software NIC: absent = 0 (hardware NIC) */
		{
			static const char *const hn[] = {"host_read_ns",   "host_write_ns",
							 "host_atomic_ns", "host_byte_ns",
							 "host_switch_ns", "host_read_post_ns"};
			double hc = IDX("host_cpus");
			m.host_cpus = isnan(hc) ? 0 : (uint32_t)hc;
			double hv[6];
			for (int h = 0; h < 6; h++) {
				hv[h] = IDX(hn[h]);
				if (isnan(hv[h]))
					hv[h] = 0;
				if (hv[h] > 0 && m.host_cpus == 0) {
					st = dmr_err_set(
					    err, DMR_ERR_PARSE,
					    "%s:%d: parameter %s: %g ns of host CPU but "
					    "host_cpus is 0 (a hardware NIC); give "
					    "host_cpus or remove %s",
					    path, line_of(path, hn[h]), hn[h], hv[h], hn[h]);
					goto out_root;
				}
			}
			m.host_read_ps = ns_to_ps(hv[0]);
			m.host_write_ps = ns_to_ps(hv[1]);
			m.host_atomic_ps = ns_to_ps(hv[2]);
			m.host_ps_per_byte_x1000 = (uint64_t)llround(hv[3] * 1e6);
			m.host_switch_ps = ns_to_ps(hv[4]);
			m.host_read_post_ps = ns_to_ps(hv[5]);
		}
		/* QP-context cache: capacity and miss cost together, or neither */
		{
			double q = IDX("qpc_qps"), w = IDX("qpc_ways"), ms = IDX("qpc_miss_ns");
			const char *miss = isnan(q) && !isnan(ms)   ? "qpc_miss_ns"
					   : isnan(q) && !isnan(w)  ? "qpc_ways"
					   : !isnan(q) && isnan(ms) ? "qpc_qps"
								    : NULL;
			if (miss) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s:%d: parameter %s: the QP-context cache needs "
						 "qpc_qps and qpc_miss_ns together (qpc_ways "
						 "optional, default 8), or none of them",
						 path, line_of(path, miss), miss);
				goto out_root;
			}
			if (!isnan(q)) {
				m.qpc_qps = (uint32_t)q;
				m.qpc_ways = isnan(w) ? 8 : (uint32_t)w;
				if (m.qpc_ways > m.qpc_qps || m.qpc_qps % m.qpc_ways) {
					st = dmr_err_set(
					    err, DMR_ERR_PARSE,
					    "%s:%d: parameter qpc_ways: %u ways must divide "
					    "qpc_qps (%u QPs) into whole sets",
					    path, line_of(path, isnan(w) ? "qpc_qps" : "qpc_ways"),
					    m.qpc_ways, m.qpc_qps);
					goto out_root;
				}
				m.qpc_miss_ps = ns_to_ps(ms);
			}
		}
		/* device memory: size and both atomic rates, or none */
		{
			static const char *const dn[] = {"dm_kib", "dm_atomic_addr_mops",
							 "dm_atomic_global_mops"};
			double dv[3] = {IDX(dn[0]), IDX(dn[1]), IDX(dn[2])};
			int given = all_or_none(path, "device memory", dn, dv, 3, err);
			if (given < 0) {
				st = DMR_ERR_PARSE;
				goto out_root;
			}
			if (given) {
				m.dm_bytes = (uint64_t)dv[0] * 1024;
				m.dm_atomic_addr_mops = dv[1];
				m.dm_atomic_global_mops = dv[2];
				m.dm_atomic_addr_ps = (uint64_t)llround(1e6 / dv[1]);
				m.dm_atomic_global_ps = (uint64_t)llround(1e6 / dv[2]);
			}
		}
		/* CXL tier: all three or none */
		{
			static const char *const cn[] = {"cxl_read_ns", "cxl_write_ns", "cxl_gbps"};
			double cv[3] = {IDX(cn[0]), IDX(cn[1]), IDX(cn[2])};
			int given = all_or_none(path, "a CXL tier", cn, cv, 3, err);
			if (given < 0) {
				st = DMR_ERR_PARSE;
				goto out_root;
			}
			if (given) {
				m.cxl = 1;
				m.cxl_read_ps = ns_to_ps(cv[0]);
				m.cxl_write_ps = ns_to_ps(cv[1]);
				m.cxl_ps_per_byte_x1000 = gbps_to_ps_per_byte_x1000(cv[2]);
			}
		}
		/* MN CPU for RPCs: all three or none */
		{
			static const char *const rn[] = {"mn_rpc_cores", "mn_rpc_req_ns",
							 "mn_rpc_op_ns"};
			double rv[3] = {IDX(rn[0]), IDX(rn[1]), IDX(rn[2])};
			int given = all_or_none(path, "an MN CPU for RPCs", rn, rv, 3, err);
			if (given < 0) {
				st = DMR_ERR_PARSE;
				goto out_root;
			}
			if (given) {
				m.mn_rpc_cores = (uint32_t)rv[0];
				m.mn_rpc_req_ps = ns_to_ps(rv[1]);
				m.mn_rpc_op_ps = ns_to_ps(rv[2]);
			}
		}
		double dma = IDX("dma_gbps");
		/* Derived: the DMA engine's payload rate is what ib_read_bw at
		 * 64 KiB measured (the wire is faster at MTU 4096). On a software
		 * NIC the copy is host CPU time (host_byte_ns), which is what
		 * bounds the stream; there is no DMA engine besides the link. */
		if (isnan(dma))
			dma = m.host_cpus ? m.link_gbps : m.read_bw_64k_gbps;
		m.dma_ps_per_byte_x1000 = gbps_to_ps_per_byte_x1000(dma);
		double proc = IDX("nic_proc_ns");
		if (isnan(proc)) {
			uint64_t rest = rtt_without_proc(&m, 64);
			uint64_t rtt = ns_to_ps(m.read_rtt_ns);

			/* software NIC: the whole round trip may be CPU time
			 * (rxe under qemu), so nic_proc_ns = 0 is legal */
			if (rtt < rest || (rtt == rest && m.host_cpus == 0)) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "%s: parameter read_rtt_ns: %.0f ns is below the "
						 "sum of the other path components (%.0f ns); "
						 "nic_proc_ns cannot be derived",
						 path, m.read_rtt_ns, rest / 1000.0);
				goto out_root;
			}
			m.nic_proc_ps = (rtt - rest) / 4;
		} else {
			m.nic_proc_ps = ns_to_ps(proc);
		}
#undef IDX
	}
	*m_p = m;
out_root:
	json_decref(root);
	return st;
}

void dmr_model_print(const dmr_model_t *m, void *file)
{
	FILE *f = file;
	fprintf(f, "profile %s (%s)\n", m->name, m->path);
	fprintf(f, "  link              %s, %.1f Gb/s per direction, MTU %u, %u B/pkt overhead\n",
		m->ib ? "InfiniBand" : "RoCEv2", m->link_gbps, m->mtu, m->pkt_overhead);
	fprintf(f, "  propagation       %.1f ns per link, switch %.1f ns\n", m->prop_ps / 1e3,
		m->switch_ps / 1e3);
	fprintf(f,
		"  CN CPU            doorbell %.1f ns, WQE %.1f ns, poll %.1f ns, logic %.1f ns\n",
		m->post_doorbell_ps / 1e3, m->post_wqe_ps / 1e3, m->poll_ps / 1e3,
		m->txn_logic_ps / 1e3);
	if (m->txn_begin_ps || m->txn_op_ps)
		fprintf(f,
			"                    + per transaction started %.1f ns + %.1f ns per "
			"operation\n",
			m->txn_begin_ps / 1e3, m->txn_op_ps / 1e3);
	fprintf(f,
		"  NIC               %.1f Mmsg/s, processing %.1f ns, %u outstanding RD/atomic per "
		"QP\n",
		1e6 / m->nic_msg_ps, m->nic_proc_ps / 1e3, m->qp_max_rd_atomic);
	fprintf(f, "  MN DMA            read %.1f ns, write %.1f ns, %.2f Gb/s\n",
		m->dma_read_ps / 1e3, m->dma_write_ps / 1e3, 8.0 * 1e6 / m->dma_ps_per_byte_x1000);
	fprintf(f, "  MN atomics        %.2f Mops/s per address, %.2f Mops/s global\n",
		m->atomic_addr_mops, m->atomic_global_mops);
	if (m->host_cpus)
		fprintf(f,
			"  host CPU (sw NIC) %u CPUs per CN; per WR READ %.1f ns, WRITE %.1f ns, "
			"atomic %.1f ns, %.3f ns per byte\n",
			m->host_cpus, m->host_read_ps / 1e3, m->host_write_ps / 1e3,
			m->host_atomic_ps / 1e3, m->host_ps_per_byte_x1000 / 1e6);
	if (m->host_cpus)
		fprintf(f,
			"                    + %.1f ns per READ that finds its CPU busy, "
			"+ %.1f ns per doorbell with READs\n",
			m->host_switch_ps / 1e3, m->host_read_post_ps / 1e3);
	if (m->qpc_qps)
		fprintf(f, "  NIC QP contexts   %u cached per NIC (%u-way), %.1f ns per miss\n",
			m->qpc_qps, m->qpc_ways, m->qpc_miss_ps / 1e3);
	if (m->cxl)
		fprintf(f,
			"  MN CXL tier       +%.1f ns read, +%.1f ns write over host DRAM, %.2f "
			"Gb/s\n",
			m->cxl_read_ps / 1e3, m->cxl_write_ps / 1e3,
			8.0 * 1e6 / m->cxl_ps_per_byte_x1000);
	if (m->mn_rpc_cores)
		fprintf(f,
			"  MN CPU (RPC)      %u cores, %.1f ns per request + %.1f ns per record\n",
			m->mn_rpc_cores, m->mn_rpc_req_ps / 1e3, m->mn_rpc_op_ps / 1e3);
	if (m->dm_bytes)
		fprintf(
		    f,
		    "  MN device memory  %llu KiB; atomics %.2f Mops/s per address, %.2f Mops/s "
		    "global\n",
		    (unsigned long long)(m->dm_bytes / 1024), m->dm_atomic_addr_mops,
		    m->dm_atomic_global_mops);
	fprintf(f, "  idle 64 B READ    %.1f ns modelled (profile %.1f ns)\n",
		dmr_model_read_rtt_ps(m, 64) / 1e3, m->read_rtt_ns);
}
