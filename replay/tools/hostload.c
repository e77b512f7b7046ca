/*
 * replay/tools/hostload.c - the host's load from /proc/stat and
 * /proc/loadavg around a measurement (hostload.h).
 */
#include "hostload.h"

#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

void dmr_hostload_snap(dmr_hostload_snap_t *s)
{
	memset(s, 0, sizeof(*s));
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	uint64_t v[8] = {0};
	/* cpu user nice system idle iowait irq softirq steal (proc(5)) */
	int n = fscanf(f,
		       "cpu %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		       " %" SCNu64 " %" SCNu64,
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return;
	for (int i = 0; i < 8; i++)
		s->total += v[i];
	s->steal = v[7];
	s->busy = s->total - v[3] - v[4] - v[7];
	s->ok = 1;
}

static double loadavg1(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = NAN;
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

void dmr_hostload_begin(dmr_hostload_t *h, dmr_hostload_snap_t *start_p)
{
	memset(h, 0, sizeof(*h));
	h->other = h->steal = h->loadavg1 = NAN;
	dmr_hostload_snap_t a, b;
	dmr_hostload_snap(&a);
	struct timespec ts = {0, DMR_HOSTLOAD_IDLE_MS * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && ts.tv_nsec > 0)
		;
	dmr_hostload_snap(&b);
	if (a.ok && b.ok && b.total > a.total && b.busy >= a.busy) {
		h->known = 1;
		h->other = (double)(b.busy - a.busy) / (double)(b.total - a.total);
	}
	*start_p = b;
}

void dmr_hostload_end(dmr_hostload_t *h, const dmr_hostload_snap_t *start)
{
	dmr_hostload_snap_t e;
	dmr_hostload_snap(&e);
	if (h->known && start->ok && e.ok && e.total > start->total && e.steal >= start->steal)
		h->steal = (double)(e.steal - start->steal) / (double)(e.total - start->total);
	else if (h->known)
		h->steal = 0;
	h->loadavg1 = loadavg1();
	h->loaded = h->known && h->other + h->steal > DMR_HOSTLOAD_LIMIT;
}

void dmr_hostload_format(const dmr_hostload_t *h, char *buf, size_t len)
{
	if (!h->known) {
		snprintf(buf, len, "unknown (/proc/stat not readable)");
		return;
	}
	snprintf(buf, len, "other %.1f %%, steal %.1f %%, load %.2f%s", 100 * h->other,
		 100 * h->steal, h->loadavg1, h->loaded ? " LOADED" : "");
}

int dmr_hostload_wanted(int driven)
{
	const char *t = getenv("DMR_TEST_SAMPLE_HOST");
	return !driven || (t && *t);
}
