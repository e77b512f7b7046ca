/*
 * replay/tools/hostload.h - how busy the host is while `dmreplay calibrate`
 * and `dmreplay fidelity` measure wall-clock figures (issue 16 item 8),
 * from procfs only: /proc/stat's first "cpu" line (USER_HZ ticks: user
 * nice system idle iowait irq softirq steal ...; proc(5)) and /proc/loadavg.
 *
 * A window is sampled in two parts around a measurement:
 *  - before it, DMR_HOSTLOAD_IDLE_MS with this process asleep: the share
 *    of the host's CPU time that was busy (not idle, iowait or steal) is
 *    other processes' work ("other"): our own threads are parked then, so
 *    this is not confused with the measurement's own CPU, nor with the
 *    kernel's work for it (rxe runs in softirq and kworkers, which
 *    /proc/stat cannot tell from anyone else's);
 *  - over the measurement itself, the share of CPU time stolen by the
 *    hypervisor ("steal"; 0 under qemu TCG, which reports none).
 * loaded = other + steal > DMR_HOSTLOAD_LIMIT (0.10): a software NIC (rxe)
 * and the replay's workers are CPU-bound, so losing more than a tenth of
 * the host's CPU moves a throughput by up to that much, two thirds of
 * fidelity's 15 % throughput tolerance (fidelity.h): a figure measured so
 * says more about the host than about the model. The 1-minute load
 * average is recorded beside them (information: it also counts our own
 * threads and decays over a minute).
 */
#ifndef DMR_HOSTLOAD_H
#define DMR_HOSTLOAD_H

#include <stdint.h>
#include <stdio.h>

#define DMR_HOSTLOAD_LIMIT 0.10	 /* other + steal, share of the host's CPU time */
#define DMR_HOSTLOAD_IDLE_MS 200 /* the quiet window before a measurement */

/* /proc/stat's CPU ticks at one instant. ok 0: not readable. */
typedef struct dmr_hostload_snap {
	uint64_t total, busy, steal;
	int ok;
} dmr_hostload_snap_t;

typedef struct dmr_hostload {
	int known;	 /* 0: procfs not readable (the fields are NAN) */
	double other;	 /* busy share while we slept, 0..1 */
	double steal;	 /* stolen share over the measurement, 0..1 */
	double loadavg1; /* /proc/loadavg's first field at the end */
	int loaded;	 /* other + steal > DMR_HOSTLOAD_LIMIT */
} dmr_hostload_t;

void dmr_hostload_snap(dmr_hostload_snap_t *s);
/* The quiet window: sleep DMR_HOSTLOAD_IDLE_MS and fill h->other (and
 * known); then *start_p is the snapshot the measurement starts from. */
void dmr_hostload_begin(dmr_hostload_t *h, dmr_hostload_snap_t *start_p);
/* After the measurement: h->steal from start to now, h->loadavg1, h->loaded. */
void dmr_hostload_end(dmr_hostload_t *h, const dmr_hostload_snap_t *start);
/* 1 when a tool should sample the host around a measurement: the clock
 * is the wall's (driven 0), or the test hook $DMR_TEST_SAMPLE_HOST is set
 * (tests sample around sim runs, whose own figures do not depend on it). */
int dmr_hostload_wanted(int driven);
/* "other 3.1 %, steal 0.0 %, load 1.52" (+ " LOADED"), or "unknown". */
void dmr_hostload_format(const dmr_hostload_t *h, char *buf, size_t len);

#endif /* DMR_HOSTLOAD_H */
