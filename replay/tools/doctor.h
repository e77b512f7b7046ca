/*
 * replay/tools/doctor.h - `dmreplay doctor`: a preflight check of one node that
 * reads the kernel's view (sysfs, procfs, rlimits, interface addresses) and
 * needs no libibverbs, so it runs, and is tested, everywhere.
 *
 * One line per check: OK / INFO / WARN / FAIL, what was found and, for
 * WARN and FAIL, what to do. --json prints the same checks as one JSON
 * object. docs/DOCTOR.md lists every check, its source and its advice.
 *
 * Exit status (DMR_DOCTOR_*): 0 no check failed (warnings allowed; with
 * --strict a warning counts as a failure), 1 a check failed, 2 bad usage or
 * a bad config file (the field and its legal range are named), 3 no RDMA
 * device at all (one error line on stderr).
 */
#ifndef DMR_DOCTOR_H
#define DMR_DOCTOR_H

#include <stdint.h>

enum {
	DMR_DOCTOR_OK = 0,
	DMR_DOCTOR_FAILED = 1,
	DMR_DOCTOR_USAGE = 2,
	DMR_DOCTOR_NODEV = 3,
};

/* Bytes the kernel reserves for headers when it derives a RoCE port's IB
 * MTU from its netdev's MTU. Hardware drivers (mlx4, mlx5) use ib_core's
 * iboe_get_mtu() (include/rdma/ib_addr.h): GRH/IP 40 + UDP 8 + BTH 12 +
 * XRC 4 + AtomicETH 28 + ICRC 4 = 96. SoftRoCE (rdma_rxe) subtracts
 * RXE_MAX_HDR_LENGTH = 80 (measured on rxe: netdev 4176 -> 4096, 4175 ->
 * 2048, 1104 -> 1024, 1103 -> 512). */
#define DMR_DOCTOR_ROCE_HDR 96u
#define DMR_DOCTOR_RXE_HDR 80u

/* The IB MTU (256, 512, 1024, 2048 or 4096 bytes) a RoCE port gets from a
 * netdev MTU: the largest IB MTU <= netdev_mtu - hdr; 0 when not even 256
 * fits. */
uint32_t dmr_doctor_ib_mtu(uint32_t netdev_mtu, uint32_t hdr);

/* `dmreplay doctor` (argv[0] = "doctor"); returns the exit status. */
int dmr_doctor_main(int argc, char **argv);

#endif /* DMR_DOCTOR_H */
