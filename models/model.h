/*
 * models/model.h - hardware profiles for the sim backend.
 *
 * A profile is a JSON file (models/<name>.json, loaded with jansson). Each
 * parameter is an object {"value": number, "unit": "...", "source": "...",
 * "estimate": bool} so that every number carries where it came from; see
 * models/README.md. Units in JSON are the natural ones (Gb/s, ns, Mops/s,
 * bytes); dmr_model_load converts them once, here, into the integer
 * picosecond / byte quantities the simulator uses (STYLE.md: model
 * parameters may be doubles, converted in one function).
 *
 * Derived parameters: when "nic_proc_ns" is absent it is derived so that an
 * idle 64 B READ takes exactly "read_rtt_ns" (see dmr_model_read_rtt_ps);
 * when "dma_gbps" is absent it is derived from "read_bw_64k_gbps" (the
 * ib_read_bw figure) when that is below the wire ceiling.
 *
 * Software NIC (host_cpus > 0; docs/MODEL.md "Software NIC"): the NIC's
 * work is CPU time on the host that runs the CN's workers, as with rxe
 * (SoftRoCE), whose requester runs in the posting system call and whose
 * responder and completer run as tasklets on the CPU that raised them.
 * host_cpus CPUs per CN; worker w of a CN runs on CPU w mod host_cpus and
 * the NIC work of its WRs (host_read_ns / host_write_ns / host_atomic_ns
 * per WR plus host_byte_ns per payload byte) queues on that same CPU, plus
 * host_switch_ns for a READ that finds the CPU busy (not at idle). When
 * host_cpus is 0 (every hardware profile) all host_* are 0 and the model is
 * the hardware one, unchanged.
 */
#ifndef DMR_MODEL_H
#define DMR_MODEL_H

#include <stdint.h>

#include "../core/base/status.h"
#include "../core/base/timeps.h" /* DMR_PS_PER_NS, _US, _S (were defined here) */

typedef struct dmr_model {
	char name[64];
	char path[256];
	/* link: per direction, RoCEv2 over Ethernet, or InfiniBand ("link_layer":
	 * "ib": LRH/BTH/ICRC/VCRC framing, 26 bytes per packet) */
	int ib;			     /* 1: InfiniBand framing */
	double link_gbps;	     /* line rate per direction, Gb/s */
	uint32_t mtu;		     /* path MTU, bytes of RDMA payload per packet */
	uint32_t pkt_overhead;	     /* bytes on the wire per packet besides payload:
					RoCEv2: preamble+SFD 8, Ethernet 14, IPv4 20,
					UDP 8, BTH 12, ICRC 4, FCS 4, IFG 12 = 82;
					InfiniBand: LRH 8, BTH 12, ICRC 4, VCRC 2 = 26 */
	uint32_t reth_bytes;	     /* RETH 16 (READ request, first WRITE packet) */
	uint32_t aeth_bytes;	     /* AETH 4 (READ response first/last/only, ACK) */
	uint32_t atomiceth_bytes;    /* AtomicETH 28 */
	uint32_t atomicacketh_bytes; /* AtomicAckETH 8 */
	uint64_t ps_per_byte_x1000;  /* wire: picoseconds per byte x 1000 */
	uint64_t prop_ps;	     /* propagation, one link (cable), ps */
	uint64_t switch_ps;	     /* switch forwarding latency, ps */
	/* compute node CPU */
	uint64_t post_doorbell_ps; /* CPU cost of one doorbell (MMIO), ps */
	uint64_t post_wqe_ps;	   /* CPU cost per WQE built, ps */
	uint64_t poll_ps;	   /* CPU cost of one CQ poll that returns work, ps */
	uint64_t txn_logic_ps;	   /* CPU cost of transaction logic per completion handled, ps */
	uint64_t txn_begin_ps;	   /* CPU cost per transaction started, before its
				      first post (trace fetch and parse, dispatch,
				      latency bookkeeping), ps; 0: not modelled */
	uint64_t txn_op_ps;	   /* the same per trace operation of that
				      transaction (parsed, copied, set up), ps */
	/* NIC */
	uint64_t nic_msg_ps;	   /* per-message service time (1 / message rate), ps */
	uint64_t nic_proc_ps;	   /* fixed NIC processing latency per traversal, ps */
	uint32_t qp_max_rd_atomic; /* outstanding READ/atomic per QP */
	/* memory node */
	uint64_t dma_read_ps;		/* PCIe DMA read latency (host memory), ps */
	uint64_t dma_write_ps;		/* PCIe DMA write latency, ps */
	uint64_t dma_ps_per_byte_x1000; /* DMA throughput: ps per byte x 1000 */
	uint64_t atomic_addr_ps;	/* same-address atomic service time, ps */
	uint64_t atomic_global_ps;	/* global atomic unit service time, ps */
	/* software NIC on the CN's host CPUs (0: hardware NIC, no host cost) */
	uint32_t host_cpus;		 /* CPUs per CN shared by workers and the NIC */
	uint64_t host_read_ps;		 /* NIC CPU time per READ beyond the post, ps */
	uint64_t host_switch_ps;	 /* CPU time added to a READ whose responder
					    finds its CPU busy (rxe defers READ
					    responders to a kernel thread, which then
					    switches with the busy-polling worker), ps */
	uint64_t host_read_post_ps;	 /* NIC CPU time per doorbell that carries
					    READs, paid by its first READ: rxe's
					    deferred READ responder is scheduled once
					    for the requests queued together (a
					    batch), ps; host_read_ps is the rest */
	uint64_t host_write_ps;		 /* NIC CPU time per WRITE beyond the post, ps */
	uint64_t host_atomic_ps;	 /* NIC CPU time per CAS/FAA beyond the post, ps */
	uint64_t host_ps_per_byte_x1000; /* NIC CPU time per READ/WRITE payload
					    byte (copy + ICRC), ps x 1000 */
	/* the NIC's QP-context cache (qpc_qps 0: not modelled): a set-
	 * associative LRU cache of qpc_qps contexts per NIC (CN and MN), a
	 * message whose QP misses holds the NIC's pipeline qpc_miss_ps longer
	 * (the context fetched over PCIe); docs/MODEL.md "QP contexts" */
	uint32_t qpc_qps;     /* contexts cached per NIC */
	uint32_t qpc_ways;    /* associativity (divides qpc_qps) */
	uint64_t qpc_miss_ps; /* NIC pipeline time per miss, ps */
	/* NIC device memory (dm_bytes 0: none modelled): lock words of the
	 * tables the run places there (--dm-locks) are served by the MN NIC's
	 * device-memory atomic unit at these rates, not over PCIe */
	uint64_t dm_bytes;	      /* device memory per MN NIC, bytes */
	uint64_t dm_atomic_addr_ps;   /* same-address atomic service time, ps */
	uint64_t dm_atomic_global_ps; /* device-memory atomic unit service time, ps */
	double dm_atomic_addr_mops;   /* same-address rate, as given */
	double dm_atomic_global_mops; /* unit rate, as given */
	/* a CXL-attached memory tier at the MN (cxl 0: none): the tables a run
	 * places there (--cxl-tables) are read and written through it: DMA
	 * latency + cxl_read_ps / cxl_write_ps, and the tier's own bandwidth
	 * (a FIFO server beside the DMA engines); atomics there + cxl_read_ps */
	int cxl;
	uint64_t cxl_read_ps, cxl_write_ps; /* added to host DRAM's, ps */
	uint64_t cxl_ps_per_byte_x1000;	    /* the tier's bandwidth, ps per byte x 1000 */
	/* the MN CPU serving RPCs (issue 14 lever A1, backend.h dmr_be_rpc;
	 * mn_rpc_cores 0: none modelled, the sim refuses RPCs): per MN
	 * mn_rpc_cores FIFO servers (a request goes to the core free first),
	 * a request holding its core mn_rpc_req_ps + accesses x mn_rpc_op_ps */
	uint32_t mn_rpc_cores;	/* cores per MN */
	uint64_t mn_rpc_req_ps; /* per request (receive, dispatch, respond), ps */
	uint64_t mn_rpc_op_ps;	/* per record access of the handler, ps */
	/* published figures kept for checks and reports */
	double read_rtt_ns;	   /* idle 64 B READ round trip (ib_read_lat) */
	double read_bw_64k_gbps;   /* ib_read_bw 64 KiB */
	double atomic_addr_mops;   /* same-address CAS/FAA rate */
	double atomic_global_mops; /* global atomic rate */
} dmr_model_t;

/*
 * Load a profile by name (looked up as models/<name>.json under the
 * directories DMR_MODELS_DIR (env), the build's source models/ dir, and the
 * install dir) or by path (contains '/' or ends in .json).
 * Errors: DMR_ERR_IO (not found: err lists where it looked), DMR_ERR_PARSE
 * (bad JSON: file:line:column; missing, non-numeric, negative or zero
 * parameter: "FILE: parameter NAME: ..."). *m_p is set only on success.
 */
dmr_status_t dmr_model_load(const char *name_or_path, dmr_model_t *m_p, dmr_err_t *err);

/* The unit a profile parameter must carry in its "unit" field ("ns", "Gb/s",
 * ...); NULL for an unknown parameter. */
const char *dmr_model_param_unit(const char *name);

/* Wire time of n bytes on one link, ps (rounded up). */
static inline uint64_t dmr_model_wire_ps(const dmr_model_t *m, uint64_t bytes)
{
	return (bytes * m->ps_per_byte_x1000 + 999) / 1000;
}

/* Bytes on the wire for a message carrying `payload` bytes split at the
 * path MTU, with `first_extra` header bytes on the first packet and
 * `last_extra` on the last (same packet when only one). Inline, the packet
 * count by a shift: the MTU is an IB MTU, a power of two (the loader and
 * the sim's set-MTU refuse others); a 64-bit division per WR was 6 % of a
 * KV replay's CPU (perf, llama-3-8b on the synthetic Mooncake trace). */
static inline uint64_t dmr_model_msg_wire_bytes(const dmr_model_t *m, uint64_t payload,
						uint32_t first_extra, uint32_t last_extra)
{
	uint32_t mtu = m->mtu;
	uint64_t pkts;
	if (payload == 0)
		pkts = 1;
	else if (mtu && (mtu & (mtu - 1)) == 0)
		pkts = (payload + mtu - 1) >> __builtin_ctz(mtu);
	else
		pkts = (payload + mtu - 1) / mtu;
	return payload + pkts * m->pkt_overhead + first_extra + last_extra;
}

/* Modelled round trip of an idle `bytes` READ from post to completion
 * handled (the figure ib_read_lat reports), ps. */
uint64_t dmr_model_read_rtt_ps(const dmr_model_t *m, uint32_t bytes);

/* The same round trip without the four NIC processing latencies
 * (nic_proc_ps), ps: what the loader subtracts from read_rtt_ns to derive
 * nic_proc_ns (which needs read_rtt_ns >= this for 64 B). */
uint64_t dmr_model_read_rtt_rest_ps(const dmr_model_t *m, uint32_t bytes);

/* Software-NIC CPU time of one WR of `opcode` (DMR_WR_*) moving `bytes`
 * of payload (ignored for atomics), ps; 0 when host_cpus is 0. */
static inline uint64_t dmr_model_host_ps(const dmr_model_t *m, uint8_t opcode, uint64_t bytes)
{
	/* opcodes of backends/backend.h: READ 0, WRITE 1, CAS 2, FAA 3 */
	if (opcode >= 2)
		return m->host_atomic_ps;
	return (opcode == 0 ? m->host_read_ps : m->host_write_ps) +
	       (bytes * m->host_ps_per_byte_x1000 + 999) / 1000;
}

/* Print the profile, one parameter per line with unit, to f. */
void dmr_model_print(const dmr_model_t *m, void *file);

#endif /* DMR_MODEL_H */
