/*
 * backends/sim/sim.h - the discrete-event backend: a model of compute-node
 * CPUs and NICs, links, a switch, and 1..DMR_BE_MAX_MNS memory nodes, each
 * with its own link, NIC, PCIe DMA engines, atomic unit and memory (real
 * bytes, cfg.mr_size per MN).
 *
 * Resources are FIFO servers (depart = max(arrival, free) + service; Kleinrock
 * vol. 1 ch. 3): CN worker CPU (post and poll costs), CN NIC message rate,
 * per-direction link serialisation with RoCEv2 per-packet overhead at the
 * path MTU (cut-through at the switch), MN NIC message rate, MN DMA read and
 * write engines, a global atomic unit and a per-8-byte-address atomic
 * server; the per-QP limit of outstanding READ/atomic WRs (max_rd_atomic)
 * holds later WRs in the send queue. Fixed latencies: NIC processing,
 * propagation, switch, DMA. The memory effect of each WR happens at its
 * modelled time (event MN_EFFECT), after any earlier WRITE's effect (PCIe
 * ordering: reads do not pass posted writes). Completions of one QP are in
 * posting order.
 *
 * Several MNs (docs/MODEL.md "Several memory nodes"): steps at the MN use
 * the WR's MN's resources; a CN's NIC and links are shared by its QPs to
 * every MN; one RC QP per (worker, MN) with its own credits and order; a
 * response reaches its CN's downlink as an event (EV_CN_ARRIVE), so the
 * downlink serves MNs in arrival order. One MN: no such event, results as
 * before.
 *
 * Events per WR: MN arrival, MN effect, (several MNs: CN arrival,) CN
 * completion (skipped for unsignaled WRITEs). Hops whose inputs cannot interleave (the CN's own NIC
 * and uplink) are computed at post time.
 *
 * Software NIC (profile host_cpus > 0, docs/MODEL.md): the worker CPUs
 * become host_cpus shared FIFO servers per CN (worker w on CPU w mod
 * host_cpus) and each WR's NIC work (host_*_ns + bytes x host_byte_ns) is
 * served on its poster's CPU when it reaches the MN; requests skip the
 * shared CN NIC/uplink queues and go through the event queue. host_cpus 0
 * leaves the model above unchanged.
 *
 * Limitations (documented, not hidden): all MNs run one profile, and a
 * link serves whole messages (no packet interleaving); the CN NIC serves requests
 * in hand-off order (a worker whose CPU clock runs ahead of global time
 * hands over WQEs slightly early); RDMA errors other than remote access out
 * of bounds are not modelled.
 */
#ifndef DMR_SIM_H
#define DMR_SIM_H

#include "../backend.h"
#include "../../models/model.h"

extern const dmr_be_ops_t dmr_sim_ops;

/*
 * Control ops (dmr_be_control, backend.h) answered: DMR_BE_CTL_MODEL (the
 * profile), DMR_BE_CTL_SIM_TIME (global simulated time: the time of the last
 * event processed, ps), DMR_BE_CTL_SET_MTU (an IB MTU, else
 * DMR_ERR_INVALID), DMR_BE_CTL_SET_PAYLOAD (0: READ and WRITE move no bytes,
 * atomics still do, times unchanged), DMR_BE_CTL_ROLE (the whole cluster:
 * cn 0, first_worker 0), DMR_BE_CTL_MN_STATS (cfg.mns entries: counts of
 * WRs executed without error, and busy ps of each MN's link down = request
 * wire times, link up = response wire times, NIC = nic_msg_ps per request,
 * DMA = read + write engines' occupancy, atomic = atomic_global_ps per
 * atomic; docs/MODEL.md). open refuses mns outside 1..DMR_BE_MAX_MNS with
 * DMR_ERR_INVALID naming the value. The barrier is the single-process stub. Nothing
 * outside backends/ needs more of the sim than dmr_sim_ops (the registry's
 * entry, and tests that wrap the table).
 */

#endif
