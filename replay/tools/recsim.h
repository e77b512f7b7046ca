/*
 * replay/tools/recsim.h - `dmreplay replay-record FILE [--profile P]`: a
 * recording of the record:INNER backend (backends/record/record.h,
 * docs/RECORD.md) fed to the sim, and the measured against the simulated
 * latency of each WR, per opcode and size.
 *
 * The sim gets the recording's shape (MNs, CNs, workers per CN) and an MN
 * region just large enough for the highest remote offset + length posted.
 * Each worker's WRs are posted at their recorded times (dmr_be_now of the
 * worker on the recording backend: CLOCK_MONOTONIC on shm and verbs) by a
 * DMR_WR_TIMER at that time, the WRs of one recorded doorbell as one post,
 * to the same MN, with the same opcode, length, remote offset and
 * signalling; the local buffer is one per worker, the CAS/FAA operands are
 * not recorded (the sim's timing does not depend on them). This is an open
 * loop: a post is never held back by the sim's completions.
 *
 * Latency of a WR = its completion's time - its post's time, for signaled
 * WRs that completed with success on both (a completion completes its WR:
 * matched by wr_id in the worker's posting order to each MN, as RC
 * delivers). Per (opcode, size): the count, measured and simulated p50 /
 * p90 / p99 (nearest rank), and where they part: the lowest percentile of
 * 5, 10, 20, ..., 90, 95, 99 at which |sim / measured - 1| exceeds the
 * tolerance (--tolerance PCT, default 10), with that difference.
 *
 * Exit status: 0 the table printed, 1 the sim failed, 2 bad options or a
 * recording refused (dmr_rec_read: the byte offset named).
 */
#ifndef DMR_RECSIM_H
#define DMR_RECSIM_H

int dmr_recsim_main(int argc, char **argv);

#endif /* DMR_RECSIM_H */
