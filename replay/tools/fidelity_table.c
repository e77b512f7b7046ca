/*
 * replay/tools/fidelity_table.c - the table of `dmreplay fidelity`
 * (fidelity.h): relative errors and verdicts of a row, the aligned text,
 * CSV and Markdown forms, and the file written atomically.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../core/base/fs.h"
#include "fidelity_impl.h"
#include "hostload.h"

double dmr_fid_rel_err(double pred, double meas)
{
	if (!isfinite(pred) || !isfinite(meas) || !(meas > 0))
		return NAN;
	return (pred - meas) / meas;
}

void dmr_fid_row_compute(dmr_fid_row_t *r)
{
	r->err_tps = dmr_fid_rel_err(r->pred_tps, r->meas_tps);
	r->err_p50 = dmr_fid_rel_err(r->pred_p50, r->meas_p50);
	r->err_p99 = dmr_fid_rel_err(r->pred_p99, r->meas_p99);
	/* NAN compares false: a row without numbers fails */
	r->pass_tps = fabs(r->err_tps) <= DMR_FID_TOL_TPS;
	r->pass_p50 = fabs(r->err_p50) <= DMR_FID_TOL_P50;
	r->pass = r->pass_tps && r->pass_p50 && !r->note[0];
}

static const char *pf(int pass)
{
	return pass ? "PASS" : "FAIL";
}

/* "+12.3 %", or "n/a" for NAN */
static const char *pct(double e, char *buf, size_t len)
{
	if (isnan(e))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.1f %%", 100 * e);
	return buf;
}

/* "3: 4.1 %/2.0 %, 1.2 %/0.0 %, LOADED 1 of 3" (rounds measured, the
 * spread of throughput and p50, the host's largest other and steal
 * shares, the rounds on a loaded host), ", UNSTABLE" when a spread exceeds
 * its tolerance; "-" for a row never measured. */
static const char *host_text(const dmr_fid_row_t *r, char *buf, size_t len)
{
	if (!r->rounds) {
		snprintf(buf, len, "-");
		return buf;
	}
	char hs[64];
	if (isnan(r->host_other))
		snprintf(hs, sizeof(hs), "host not sampled");
	else
		snprintf(hs, sizeof(hs), "%.1f %%/%.1f %%", 100 * r->host_other,
			 100 * r->host_steal);
	char ld[48] = "quiet";
	if (r->loaded_rounds)
		snprintf(ld, sizeof(ld), "LOADED %u of %u", r->loaded_rounds, r->rounds);
	else if (isnan(r->host_other))
		snprintf(ld, sizeof(ld), "-");
	/* rounds that differ by more than the tolerance: the verdict is the
	 * host's as much as the model's, loaded or not (inside a qemu TCG
	 * guest the host's load cannot be seen: rxe VM, 14:17Z, "quiet" rounds
	 * with a throughput spread of 44-353 %) */
	int unstable =
	    r->rounds > 1 && (r->spread_tps > DMR_FID_TOL_TPS || r->spread_p50 > DMR_FID_TOL_P50);
	snprintf(buf, len, "%u: %.1f %%/%.1f %%, %s, %s%s", r->rounds, 100 * r->spread_tps,
		 100 * r->spread_p50, hs, ld, unstable ? ", UNSTABLE" : "");
	return buf;
}

int dmr_fid_print(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	char a[32], b[32], c[32], h[160];
	fprintf(f, "%-16s %11s %11s %8s %9s %9s %8s %9s %9s %8s %7s %7s  %-4s %-4s  %s\n", "trace",
		"meas tps", "pred tps", "err", "meas p50", "pred p50", "err", "meas p99",
		"pred p99", "err", "m abrt", "p abrt", "tps", "p50",
		"rounds: spread tps/p50, host other/steal, loaded");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f,
			"%-16s %11.1f %11.1f %8s %9.1f %9.1f %8s %9.1f %9.1f %8s %6.1f%% %6.1f%%  "
			"%-4s %-4s  %s%s%s\n",
			r->trace, r->meas_tps, r->pred_tps, pct(r->err_tps, a, sizeof(a)),
			r->meas_p50, r->pred_p50, pct(r->err_p50, b, sizeof(b)), r->meas_p99,
			r->pred_p99, pct(r->err_p99, c, sizeof(c)), 100 * r->meas_abort,
			100 * r->pred_abort, pf(r->pass_tps), pf(r->pass_p50),
			host_text(r, h, sizeof(h)), r->note[0] ? "  " : "", r->note);
	}
	return ferror(f) ? -1 : 0;
}

static void csv_num(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, ",");
	else
		fprintf(f, ",%.6g", v);
}

int dmr_fid_write_csv(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	fprintf(f, "trace,meas_tps,pred_tps,err_tps,meas_p50_us,pred_p50_us,err_p50,"
		   "meas_p99_us,pred_p99_us,err_p99,meas_abort_rate,pred_abort_rate,"
		   "tps_result,p50_result,result,tol_tps,tol_p50,note,rounds,spread_tps,spread_p50,"
		   "host_other,host_steal,host_loadavg,loaded_rounds,host_limit\n");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f, "%s", r->trace);
		csv_num(f, r->meas_tps);
		csv_num(f, r->pred_tps);
		csv_num(f, r->err_tps);
		csv_num(f, r->meas_p50);
		csv_num(f, r->pred_p50);
		csv_num(f, r->err_p50);
		csv_num(f, r->meas_p99);
		csv_num(f, r->pred_p99);
		csv_num(f, r->err_p99);
		csv_num(f, r->meas_abort);
		csv_num(f, r->pred_abort);
		/* the note never holds a comma or quote (fid_note strips them) */
		fprintf(f, ",%s,%s,%s,%.2f,%.2f,%s,%u", pf(r->pass_tps), pf(r->pass_p50),
			pf(r->pass), DMR_FID_TOL_TPS, DMR_FID_TOL_P50, r->note, r->rounds);
		if (r->rounds) {
			csv_num(f, r->spread_tps);
			csv_num(f, r->spread_p50);
			csv_num(f, r->host_other);
			csv_num(f, r->host_steal);
			csv_num(f, r->host_load);
		} else {
			fprintf(f, ",,,,,");
		}
		fprintf(f, ",%u,%.2f\n", r->loaded_rounds, DMR_HOSTLOAD_LIMIT);
	}
	return ferror(f) ? -1 : 0;
}

int dmr_fid_write_md(const dmr_fid_row_t *rows, size_t n, FILE *f)
{
	char a[32], b[32], c[32], h[160];
	fprintf(f, "| trace | measured K txn/s | predicted K txn/s | error | measured p50 us | "
		   "predicted p50 us | error | measured p99 us | predicted p99 us | error | "
		   "aborts measured / predicted | throughput (15 %%) | p50 (20 %%) | "
		   "rounds: spread tps/p50, host other/steal, loaded |\n"
		   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
		   "--- | --- | --- |\n");
	for (size_t i = 0; i < n; i++) {
		const dmr_fid_row_t *r = &rows[i];
		fprintf(f,
			"| %s%s%s%s | %.2f | %.2f | %s | %.1f | %.1f | %s | %.1f | %.1f | %s | "
			"%.1f %% / %.1f %% | %s | %s | %s |\n",
			r->trace, r->note[0] ? " (" : "", r->note[0] ? r->note : "",
			r->note[0] ? ")" : "", r->meas_tps / 1e3, r->pred_tps / 1e3,
			pct(r->err_tps, a, sizeof(a)), r->meas_p50, r->pred_p50,
			pct(r->err_p50, b, sizeof(b)), r->meas_p99, r->pred_p99,
			pct(r->err_p99, c, sizeof(c)), 100 * r->meas_abort, 100 * r->pred_abort,
			pf(r->pass_tps), pf(r->pass_p50), host_text(r, h, sizeof(h)));
	}
	return ferror(f) ? -1 : 0;
}

dmr_status_t dmr_fid_write_table(const char *dir, const char *name, int md, const char *head,
				 const dmr_fid_row_t *rows, size_t n, dmr_err_t *err)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	dmr_afile_t a;
	dmr_status_t st = dmr_afile_open(&a, path, err);
	if (st != DMR_OK)
		return st;
	if (md)
		fprintf(a.f, "%s\n\n", head);
	/* a write error sets the stream's error flag, which commit reports */
	(md ? dmr_fid_write_md : dmr_fid_write_csv)(rows, n, a.f);
	return dmr_afile_commit(&a, err);
}
