/* core/base/progress.c - the progress line (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "timeps.h"

void dmr_progress_init(dmr_progress_t *p, dmr_progress_mode_t mode, const char *what,
		       const char *unit, uint64_t total)
{
	p->tty = isatty(2);
	p->on = mode == DMR_PROGRESS_ON || (mode == DMR_PROGRESS_AUTO && p->tty);
	p->shown = 0;
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->calls = 0;
	p->t0 = p->last = dmr_wall_s();
}

static void fmt_dur(double s, char *out, size_t len)
{
	if (!(s >= 0))
		snprintf(out, len, "?");
	else if (s < 60)
		snprintf(out, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
	else
		snprintf(out, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static void print_line(dmr_progress_t *p, uint64_t done, double now)
{
	char el[32], eta[32];
	fmt_dur(now - p->t0, el, sizeof(el));
	if (p->tty)
		fprintf(stderr, "\r\033[K");
	if (p->total) {
		uint64_t d = done < p->total ? done : p->total;
		fmt_dur(d ? (now - p->t0) * (double)(p->total - d) / (double)d : -1, eta,
			sizeof(eta));
		fprintf(stderr, "%s: %llu/%llu %s (%.1f %%), %s elapsed, ETA %s", p->what,
			(unsigned long long)done, (unsigned long long)p->total, p->unit,
			100.0 * (double)d / (double)p->total, el, eta);
	} else {
		fprintf(stderr, "%s: %llu %s, %s elapsed", p->what, (unsigned long long)done,
			p->unit, el);
	}
	if (!p->tty)
		fputc('\n', stderr);
	fflush(stderr);
	p->shown = 1;
	p->last = now;
}

void dmr_progress_update(dmr_progress_t *p, uint64_t done)
{
	if (!p->on || ++p->calls < 256)
		return;
	p->calls = 0;
	dmr_progress_tick(p, done);
}

void dmr_progress_tick(dmr_progress_t *p, uint64_t done)
{
	if (!p->on)
		return;
	double now = dmr_wall_s();
	if (now - p->last >= 1.0 / (p->tty ? DMR_PROGRESS_HZ : DMR_PROGRESS_FILE_HZ))
		print_line(p, done, now);
}

void dmr_progress_end(dmr_progress_t *p, uint64_t done)
{
	if (!p->on)
		return;
	if (p->tty) {
		if (p->shown) {
			fprintf(stderr, "\r\033[K");
			fflush(stderr);
		}
	} else if (p->shown || done) {
		print_line(p, done, dmr_wall_s()); /* forced: a last line */
	}
	p->on = 0;
}
