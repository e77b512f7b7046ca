/*
 * tests/unit/test_report.c - replay/report.c: CSV splitting, the median and its
 * percentile-bootstrap interval on known data (exact median, the interval
 * holds it, deterministic for a seed), the ratio to a baseline, recovery
 * after phase changes, and a report over a small synthetic sweep (cells,
 * baseline matching, report.csv / report.md, plots when gnuplot is there),
 * and every bad input refused with the line or field named (exit 2).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers/files.h"
#include "helpers/suite.h"
#include "replay/report.h"

/* ---- CSV ----------------------------------------------------------------- */

START_TEST(test_split)
{
	char l1[] = "a,,\"b,c\",\"say \"\"hi\"\"\",d";
	char *f[8];
	ck_assert_int_eq(dmr_report_csv_split(l1, f, 8), 5);
	ck_assert_str_eq(f[0], "a");
	ck_assert_str_eq(f[1], "");
	ck_assert_str_eq(f[2], "b,c");
	ck_assert_str_eq(f[3], "say \"hi\"");
	ck_assert_str_eq(f[4], "d");
	char l2[] = "x,y,z";
	ck_assert_int_eq(dmr_report_csv_split(l2, f, 2), 3); /* counts past max */
	char l3[] = "\"open";
	ck_assert_int_eq(dmr_report_csv_split(l3, f, 8), -1);
	char l4[] = "";
	ck_assert_int_eq(dmr_report_csv_split(l4, f, 8), 1);
}
END_TEST

/* ---- statistics ---------------------------------------------------------- */

START_TEST(test_median_exact)
{
	double odd[] = {5, 1, 3};
	double even[] = {4, 1, 3, 2};
	double one[] = {7.25};
	ck_assert_double_eq(dmr_report_median(odd, 3), 3);
	ck_assert_double_eq(dmr_report_median(even, 4), 2.5);
	ck_assert_double_eq(dmr_report_median(one, 1), 7.25);
	ck_assert_double_eq(odd[0], 5); /* not modified */

	dmr_report_ci_t ci;
	ck_assert_int_eq(dmr_report_boot_median(odd, 3, 1000, 1, &ci), DMR_OK);
	ck_assert_double_eq(ci.est, 3);
	ck_assert_int_eq(dmr_report_boot_median(even, 4, 1000, 1, &ci), DMR_OK);
	ck_assert_double_eq(ci.est, 2.5);
	ck_assert_int_eq(dmr_report_boot_median(odd, 0, 1000, 1, &ci), DMR_ERR_INVALID);
	ck_assert_int_eq(dmr_report_boot_median(odd, 3, 0, 1, &ci), DMR_ERR_INVALID);
}
END_TEST

START_TEST(test_bootstrap_interval)
{
	/* 1..21: the median is 11; a bootstrap median stays within the data */
	double x[21];
	for (int i = 0; i < 21; i++)
		x[i] = 21 - i;
	dmr_report_ci_t a, b, c;
	ck_assert_int_eq(dmr_report_boot_median(x, 21, 1000, 42, &a), DMR_OK);
	ck_assert_double_eq(a.est, 11);
	ck_assert(a.lo <= a.est && a.est <= a.hi);
	ck_assert(a.lo >= 1 && a.hi <= 21);
	ck_assert(a.lo < a.est && a.hi > a.est); /* 21 distinct values: a real interval */
	/* the 95 % interval of the median of 21 values is about the 6th..16th */
	ck_assert_msg(a.lo >= 5 && a.lo <= 9 && a.hi >= 13 && a.hi <= 17, "[%g, %g]", a.lo, a.hi);
	/* deterministic for a seed; another seed draws other resamples */
	ck_assert_int_eq(dmr_report_boot_median(x, 21, 1000, 42, &b), DMR_OK);
	ck_assert_double_eq(a.lo, b.lo);
	ck_assert_double_eq(a.hi, b.hi);
	ck_assert_int_eq(dmr_report_boot_median(x, 21, 1000, 43, &c), DMR_OK);
	ck_assert_double_eq(c.est, 11);

	/* constant data: a point */
	double k[] = {3, 3, 3};
	ck_assert_int_eq(dmr_report_boot_median(k, 3, 1000, 1, &a), DMR_OK);
	ck_assert_double_eq(a.lo, 3);
	ck_assert_double_eq(a.hi, 3);

	/* 3 repetitions: the interval is inside the range */
	double r3[] = {100, 110, 130};
	ck_assert_int_eq(dmr_report_boot_median(r3, 3, 1000, 7, &a), DMR_OK);
	ck_assert_double_eq(a.est, 110);
	ck_assert(a.lo >= 100 && a.hi <= 130 && a.lo <= 110 && a.hi >= 110);
}
END_TEST

START_TEST(test_ratio)
{
	double x[] = {2, 2, 2}, b[] = {1, 1, 1};
	dmr_report_ci_t r, r2;
	ck_assert_int_eq(dmr_report_boot_ratio(x, 3, b, 3, 1000, 1, &r), DMR_OK);
	ck_assert_double_eq(r.est, 2);
	ck_assert_double_eq(r.lo, 2);
	ck_assert_double_eq(r.hi, 2);

	double y[] = {18, 20, 22}, c[] = {9, 10, 11, 10};
	ck_assert_int_eq(dmr_report_boot_ratio(y, 3, c, 4, 1000, 5, &r), DMR_OK);
	ck_assert_double_eq(r.est, 2);
	ck_assert(r.lo <= 2 && r.hi >= 2);
	ck_assert(r.lo >= 18.0 / 11 && r.hi <= 22.0 / 9);
	ck_assert(r.lo < r.hi); /* both resampled: a real interval */
	ck_assert_int_eq(dmr_report_boot_ratio(y, 3, c, 4, 1000, 5, &r2), DMR_OK);
	ck_assert_double_eq(r.lo, r2.lo);
	ck_assert_double_eq(r.hi, r2.hi);

	double z[] = {0, 0};
	ck_assert_int_eq(dmr_report_boot_ratio(y, 3, z, 2, 100, 5, &r), DMR_OK);
	ck_assert(!isfinite(r.est));
	ck_assert_int_eq(dmr_report_boot_ratio(y, 3, NULL, 0, 100, 5, &r), DMR_ERR_INVALID);
}
END_TEST

START_TEST(test_recovery)
{
	/* windows of 1 ms; phase 0 at 100, shift at t=10 ms drops to 20 and
	 * recovers to 95 at t=13 ms; shift at t=20 ms never recovers */
	double t[30], tps[30], ph[30], out[4];
	for (int i = 0; i < 30; i++) {
		t[i] = i * 1e-3;
		ph[i] = i < 10 ? 0 : i < 20 ? 1 : 2;
		tps[i] = 100;
		if (i >= 10 && i < 13)
			tps[i] = 20;
		if (i == 13)
			tps[i] = 95;
		if (i >= 20)
			tps[i] = 50;
	}
	size_t n = dmr_report_recovery(t, tps, ph, 30, 0.9, out, 4);
	ck_assert_uint_eq(n, 2);
	ck_assert_msg(fabs(out[0] - 4e-3) < 1e-12, "%g", out[0]); /* end of window 13 - 10 ms */
	ck_assert_double_eq(out[1], -1);
	/* no phase change: none */
	for (int i = 0; i < 30; i++)
		ph[i] = 3;
	ck_assert_uint_eq(dmr_report_recovery(t, tps, ph, 30, 0.9, out, 4), 0);
}
END_TEST

/* ---- a report over a synthetic sweep -------------------------------------- */

static const char *sweep_hdr = "cell,rep,workload,regime,loop,committed_tps,abort_rate,"
			       "atomics_per_commit,status\n";

static void synth_summary(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(sweep_hdr, f);
	const char *regimes[] = {"uniform", "extreme"};
	const char *loops[] = {"none", "aimd"};
	for (int rep = 0; rep < 3; rep++)
		for (int g = 0; g < 2; g++)
			for (int l = 0; l < 2; l++) {
				double base = g == 0 ? 100000 : 50000;
				double tps = base * (l == 1 && g == 1 ? 2 : 1) + rep * 1000;
				fprintf(f,
					"regime=%s;loop=%s,%d,tpcc,%s,%s,%.3f,%.4f,%.2f,complete\n",
					regimes[g], loops[l], rep, regimes[g], loops[l], tps,
					0.5 - 0.1 * l, 12.0 + rep);
			}
	fclose(f);
}

START_TEST(test_report_cells)
{
	char sum[300], out[300];
	snprintf(sum, sizeof(sum), "%s/summary.csv", dmr_test_tmp);
	snprintf(out, sizeof(out), "%s/rep1", dmr_test_tmp);
	synth_summary(sum);
	/* a time series with two phase changes for one cell */
	char cdir[400];
	snprintf(cdir, sizeof(cdir), "%s/cells", dmr_test_tmp);
	mkdir(cdir, 0755);
	snprintf(cdir, sizeof(cdir), "%s/cells/regime=extreme+loop=aimd-r0", dmr_test_tmp);
	mkdir(cdir, 0755);
	char ts[500];
	snprintf(ts, sizeof(ts), "%s/timeseries.csv", cdir);
	FILE *f = fopen(ts, "w");
	fputs("t_s,tried,committed,aborts,gave_up,phase,loop_signal,loop_actuator\n", f);
	for (int i = 0; i < 40; i++) {
		int ph = i / 20;
		int c = (i == 20 || i == 21) ? 10 : 100;
		fprintf(f, "%.3f,200,%d,100,100,%d,0.5,%d\n", i * 0.001, c, ph, 3 + (i % 5));
	}
	fclose(f);

	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	cfg.summary = sum;
	cfg.out_dir = out;
	cfg.plots = system("command -v gnuplot >/dev/null 2>&1") == 0;
	dmr_report_t *r;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_OK);
	ck_assert_uint_eq(dmr_report_ncells(r), 4);
	ck_assert_str_eq(dmr_report_cell_name(r, 3), "regime=extreme;loop=aimd");
	dmr_report_ci_t ci, ratio;
	int has;
	ck_assert_int_eq(dmr_report_cell_stat(r, 3, "committed_tps", &ci, &ratio, &has), 0);
	ck_assert_int_eq(has, 1);
	ck_assert_double_eq(ci.est, 101000);
	ck_assert_double_eq_tol(ratio.est, 101000.0 / 51000, 1e-12);
	ck_assert(ratio.lo <= ratio.est && ratio.est <= ratio.hi);
	ck_assert_int_eq(dmr_report_cell_stat(r, 1, "committed_tps", &ci, &ratio, &has), 0);
	ck_assert_double_eq(ratio.est, 1); /* uniform aimd = uniform none */
	ck_assert_int_eq(dmr_report_cell_stat(r, 0, "abort_rate", &ci, &ratio, &has), 0);
	ck_assert_double_eq(ci.est, 0.5);
	ck_assert_int_eq(dmr_report_cell_stat(r, 0, "nope", &ci, &ratio, &has), -1);
	ck_assert_int_eq(dmr_report_write(r, &err), DMR_OK);
	dmr_report_free(r);

	char path[400];
	snprintf(path, sizeof(path), "%s/report.csv", out);
	char *csv = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(csv);
	ck_assert_ptr_nonnull(
	    strstr(csv, "cell,regime,loop,metric,n,median,lo,hi,baseline,ratio,"));
	ck_assert_ptr_nonnull(
	    strstr(csv, "regime=extreme;loop=aimd,extreme,aimd,committed_tps,3,101000,"));
	/* recovery: one change recovered within 3 windows, one at once */
	ck_assert_ptr_nonnull(strstr(csv, "regime=extreme;loop=aimd,extreme,aimd,abort_rate"));
	ck_assert_ptr_nonnull(strstr(csv, ",1,1,0.003,0.003\n"));
	snprintf(path, sizeof(path), "%s/report.md", out);
	char *md = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(md);
	ck_assert_ptr_nonnull(strstr(md, "## committed_tps vs loop=none"));
	ck_assert_ptr_nonnull(strstr(md, "| regime=extreme | 51.0 K [50.0, 52.0] | 1.98x ["));
	ck_assert_ptr_nonnull(strstr(md, "## Recovery after phase changes"));
	if (cfg.plots) {
		snprintf(path, sizeof(path), "%s/plots/committed_tps.png", out);
		ck_assert_int_eq(access(path, R_OK), 0);
		snprintf(path, sizeof(path), "%s/plots/committed_tps.svg", out);
		ck_assert_int_eq(access(path, R_OK), 0);
		snprintf(path, sizeof(path), "%s/plots/ts-regime=extreme+loop=aimd.png", out);
		ck_assert_int_eq(access(path, R_OK), 0);
		/* report.md lists only plots that were made */
		ck_assert_ptr_nonnull(strstr(md, "![committed_tps](plots/committed_tps.png)"));
		ck_assert_ptr_nonnull(strstr(md, "Time series of "));
	} else {
		fprintf(stderr, "test_report_cells: plots SKIPPED: gnuplot not installed\n");
	}

	/* --by loop and an explicit baseline through the command line */
	char *argv[] = {"report",     sum,	 "--out",      out,
			"--by",	      "loop",	 "--baseline", "loop=aimd",
			"--no-plots", "--quiet", "--metrics",  "committed_tps",
			NULL};
	ck_assert_int_eq(dmr_report_main(12, argv), 0);
	snprintf(path, sizeof(path), "%s/report.csv", out);
	csv = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(strstr(csv, "cell,loop,regime,metric,"));
	ck_assert_ptr_nonnull(strstr(csv, "regime=extreme;loop=none,none,extreme,committed_tps,3,"
					  "51000,"));
	ck_assert_ptr_null(strstr(csv, "abort_rate"));
}
END_TEST

START_TEST(test_report_plain_summary)
{
	/* a summary.csv of plain runs (no cell column): cells by config */
	char sum[300];
	snprintf(sum, sizeof(sum), "%s/plain.csv", dmr_test_tmp);
	dmr_test_write_file(sum,
			    "workload,regime,loop,cns,committed_tps,abort_rate,atomics_per_commit\n"
			    "tpcc,extreme,none,4,100,0.5,12\n"
			    "tpcc,extreme,none,4,110,0.5,12\n"
			    "tpcc,extreme,aimd,4,200,0.4,10\n");
	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	cfg.summary = sum;
	dmr_report_t *r;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_OK);
	ck_assert_uint_eq(dmr_report_ncells(r), 2);
	ck_assert_str_eq(dmr_report_cell_name(r, 0),
			 "workload=tpcc;regime=extreme;cns=4;loop=none");
	dmr_report_ci_t ci, ratio;
	int has;
	ck_assert_int_eq(dmr_report_cell_stat(r, 1, "committed_tps", &ci, &ratio, &has), 0);
	ck_assert_int_eq(has, 1);
	ck_assert_double_eq_tol(ratio.est, 200.0 / 105, 1e-12);
	/* no cells/ directory: report.md must not promise time series plots */
	char out[320];
	snprintf(out, sizeof(out), "%s/plain-out", dmr_test_tmp);
	cfg.out_dir = out;
	dmr_report_free(r);
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_OK);
	ck_assert_int_eq(dmr_report_write(r, &err), DMR_OK);
	dmr_report_free(r);
	char path[400];
	snprintf(path, sizeof(path), "%s/report.md", out);
	char *md = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(md);
	ck_assert_ptr_null(strstr(md, "plots/ts-"));
	if (cfg.plots)
		ck_assert_ptr_nonnull(strstr(md, "No time series plots"));
	free(md);

	/* runs of two protocols, one MN count: never pooled (the fresh-user
	 * trial of session 6 found occ and crest rows in one cell); the
	 * constant column stays out of the names */
	dmr_test_write_file(sum, "workload,regime,loop,cns,committed_tps,abort_rate,"
				 "atomics_per_commit,protocol,mns,crest_local\n"
				 "tpcc,extreme,none,4,100,0.9,12,occ,1,-\n"
				 "tpcc,extreme,none,4,120,0.8,10,crest,1,on\n"
				 "tpcc,extreme,none,4,90,0.9,11,crest,1,off\n"
				 "tpcc,extreme,none,4,104,0.9,12,occ,1,-\n");
	cfg.out_dir = NULL;
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_OK);
	ck_assert_uint_eq(dmr_report_ncells(r), 3);
	ck_assert_str_eq(dmr_report_cell_name(r, 0),
			 "workload=tpcc;regime=extreme;cns=4;loop=none;protocol=occ;crest_local=-");
	ck_assert_str_eq(
	    dmr_report_cell_name(r, 1),
	    "workload=tpcc;regime=extreme;cns=4;loop=none;protocol=crest;crest_local=on");
	ck_assert_str_eq(
	    dmr_report_cell_name(r, 2),
	    "workload=tpcc;regime=extreme;cns=4;loop=none;protocol=crest;crest_local=off");
	ck_assert_int_eq(dmr_report_cell_stat(r, 0, "committed_tps", &ci, NULL, NULL), 0);
	ck_assert_double_eq_tol(ci.est, 102.0, 1e-12);
	dmr_report_free(r);
	/* occ as the baseline of crest: crest_local is "-" (not applicable)
	 * on occ's rows, which matches crest's on and off */
	cfg.baseline = "protocol=occ";
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_OK);
	ck_assert_int_eq(dmr_report_cell_stat(r, 1, "committed_tps", &ci, &ratio, &has), 0);
	ck_assert_int_eq(has, 1);
	ck_assert_double_eq_tol(ratio.est, 120.0 / 102, 1e-12);
	ck_assert_int_eq(dmr_report_cell_stat(r, 2, "committed_tps", &ci, &ratio, &has), 0);
	ck_assert_int_eq(has, 1);
	ck_assert_double_eq_tol(ratio.est, 90.0 / 102, 1e-12);
	dmr_report_free(r);
}
END_TEST

static const struct {
	const char *text;      /* summary.csv content */
	const char *opt, *arg; /* one extra option */
	const char *want;      /* in the message */
} bad_inputs[] = {
    {"", NULL, NULL, "bad.csv: empty file"},
    {"cell,rep,committed_tps\n", NULL, NULL, "bad.csv: no data rows"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "a=1,0,10,0.1,1\n"
     "a=1,1,10,0.1\n",
     NULL, NULL, "bad.csv:3: 4 fields, the header has 5"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "a=1,0,10,0.1,1\n"
     "a=1,1,10,0.1,1,7",
     NULL, NULL, "bad.csv:3: 6 fields, the header has 5 (last line, no newline"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "a=1,0,10,0.1,1\n"
     "a=1,1,fast,0.1,1\n",
     NULL, NULL, "bad.csv:3: field 'committed_tps': 'fast' is not a number"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "a=1,0,,0.1,1\n",
     NULL, NULL, "bad.csv:2: field 'committed_tps': '' is not a number"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "a=1,0,10,nan,1\n",
     NULL, NULL, "bad.csv:2: field 'abort_rate': 'nan' is not a number"},
    {"cell,rep,committed_tps\n"
     "a=1,0,10\n",
     NULL, NULL, "has no column 'abort_rate'"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=aimd,0,10,0.1,1\n",
     "--baseline", "loop=none", "--baseline 'loop=none': matches no cell"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=aimd,0,10,0.1,1\n",
     "--baseline", "loop", "--baseline 'loop': expected axis=value"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=aimd,0,10,0.1,1\n",
     "--by", "colour", "--by 'colour': no such axis or column"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=aimd;junk,0,10,0.1,1\n",
     NULL, NULL, "bad.csv:2: field 'cell'"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "\"loop=aimd,0,10,0.1,1\n",
     NULL, NULL, "bad.csv:2: unterminated quote"},
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=aimd,0,10,0.1,1\n\n",
     NULL, NULL, "bad.csv:3: empty line"},
    /* D6: an axis twice in a cell name (a false baseline) */
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "regime=uniform;loop=none,0,10,0.1,1\n"
     "regime=uniform;loop=none;loop=aimd,0,13,0.1,1\n",
     NULL, NULL, "bad.csv:3: field 'cell': axis 'loop' appears twice"},
    /* D7: a UTF-8 byte-order mark (the first column would be "\xEF\xBB\xBFcell") */
    {"\xEF\xBB\xBF"
     "cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=none,0,10,0.1,1\n",
     NULL, NULL, "bad.csv:1: field 1: the file starts with a UTF-8 byte-order mark"},
    /* D8: one (cell, rep) twice: not an extra repetition */
    {"cell,rep,committed_tps,abort_rate,atomics_per_commit\n"
     "loop=none,0,10,0.1,1\n"
     "loop=none,1,11,0.1,1\n"
     "loop=aimd,0,12,0.1,1\n"
     "loop=none,0,10,0.1,1\n",
     NULL, NULL, "bad.csv:5: fields 'cell', 'rep': cell 'loop=none' rep 0 again (first on line 2)"},
};

/* Aura cells (the fresh-user trial of session 7): runs differing only in
 * aura's record groups, step or start weights are never pooled; the
 * weights plots are listed apart from the time series; a loop column of 0
 * throughout (aura's: its levers are no actuator) draws no actuator. */
START_TEST(test_report_aura)
{
	char sum[300], out[320];
	snprintf(sum, sizeof(sum), "%s/aura.csv", dmr_test_tmp);
	dmr_test_write_file(sum, "workload,regime,loop,committed_tps,abort_rate,atomics_per_commit,"
				 "aura_levers,aura_groups,aura_lr,aura_weights\n"
				 "tpcc,extreme,aura,100,0.5,9,a1+a2,40,0.1,0.5:1:2.5:0.18\n"
				 "tpcc,extreme,aura,110,0.5,9,a1+a2,64,0.1,0.5:1:2.5:0.18\n"
				 "tpcc,extreme,aura,120,0.5,9,a1+a2,40,0.2,0.5:1:2.5:0.18\n"
				 "tpcc,extreme,aura,130,0.5,9,a1+a2,40,0.1,1:1:2.5:0.18\n");
	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	cfg.summary = sum;
	dmr_report_t *r;
	dmr_err_t err = {{0}};
	ck_assert_msg(dmr_report_compute(&cfg, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_uint_eq(dmr_report_ncells(r), 4);
	ck_assert_str_eq(dmr_report_cell_name(r, 0),
			 "workload=tpcc;regime=extreme;loop=aura;aura_groups=40;aura_lr=0.1;"
			 "aura_weights=0.5:1:2.5:0.18");
	dmr_report_free(r);

	/* a sweep cell with aura's weights and a loop_actuator of 0 */
	snprintf(sum, sizeof(sum), "%s/aura-sweep.csv", dmr_test_tmp);
	snprintf(out, sizeof(out), "%s/aura-out", dmr_test_tmp);
	dmr_test_write_file(sum, "cell,rep,workload,regime,loop,committed_tps,abort_rate,"
				 "atomics_per_commit,status\n"
				 "a,0,tpcc,extreme,aura,100,0.5,9,complete\n");
	char dir[400], ts[500];
	snprintf(dir, sizeof(dir), "%s/cells", dmr_test_tmp);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/cells/a-r0", dmr_test_tmp);
	mkdir(dir, 0755);
	snprintf(ts, sizeof(ts), "%s/timeseries.csv", dir);
	FILE *f = fopen(ts, "w");
	ck_assert_ptr_nonnull(f);
	fputs("t_s,committed,phase,loop_actuator,aura_w_atomic,aura_w_rpc,aura_w_move,"
	      "aura_w_load\n",
	      f);
	for (int i = 0; i < 10; i++)
		fprintf(f, "%.3f,%d,0,0,%.2f,1,2.5,0.18\n", i * 0.001, 100 + i, 0.5 + 0.01 * i);
	fclose(f);
	cfg.summary = sum;
	cfg.out_dir = out;
	cfg.plots = system("command -v gnuplot >/dev/null 2>&1") == 0;
	if (!cfg.plots) {
		fprintf(stderr, "test_report_aura: plots SKIPPED: gnuplot not installed\n");
		return;
	}
	ck_assert_msg(dmr_report_compute(&cfg, &r, &err) == DMR_OK, "%s", err.msg);
	ck_assert_int_eq(dmr_report_write(r, &err), DMR_OK);
	dmr_report_free(r);
	char path[600];
	snprintf(path, sizeof(path), "%s/report.md", out);
	char *md = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(md);
	ck_assert_msg(strstr(md, "Time series of 1 cell(s)"), "%s", md);
	ck_assert_msg(strstr(md, "Aura's cost-model weights of 1 cell(s)"), "%s", md);
	snprintf(path, sizeof(path), "%s/plots/ts-a.gp", out);
	char *gp = dmr_test_read_file(path);
	ck_assert_ptr_nonnull(gp);
	ck_assert_ptr_null(strstr(gp, "actuator"));
	snprintf(path, sizeof(path), "%s/plots/weights-a.png", out);
	ck_assert_int_eq(access(path, R_OK), 0);
}
END_TEST

START_TEST(test_bad_input)
{
	char sum[300];
	snprintf(sum, sizeof(sum), "%s/bad.csv", dmr_test_tmp);
	dmr_test_write_file(sum, bad_inputs[_i].text);
	dmr_report_cfg_t cfg;
	dmr_report_cfg_default(&cfg);
	cfg.summary = sum;
	cfg.plots = 0;
	if (bad_inputs[_i].opt && strcmp(bad_inputs[_i].opt, "--baseline") == 0)
		cfg.baseline = bad_inputs[_i].arg;
	if (bad_inputs[_i].opt && strcmp(bad_inputs[_i].opt, "--by") == 0)
		cfg.by = bad_inputs[_i].arg;
	dmr_report_t *r = NULL;
	dmr_err_t err = {{0}};
	ck_assert_int_eq(dmr_report_compute(&cfg, &r, &err), DMR_ERR_PARSE);
	ck_assert_msg(strstr(err.msg, bad_inputs[_i].want) != NULL, "want '%s' in '%s'",
		      bad_inputs[_i].want, err.msg);
	/* the command line: exit 2 */
	char out[300];
	snprintf(out, sizeof(out), "%s/bad-out", dmr_test_tmp);
	char *argv[10] = {"report", sum, "--out", out, "--quiet", "--no-plots"};
	int argc = 6;
	if (bad_inputs[_i].opt) {
		argv[argc++] = (char *)bad_inputs[_i].opt;
		argv[argc++] = (char *)bad_inputs[_i].arg;
	}
	ck_assert_int_eq(dmr_report_main(argc, argv), 2);
}
END_TEST

START_TEST(test_cli_usage)
{
	char *a1[] = {"report", NULL};
	ck_assert_int_eq(dmr_report_main(1, a1), 2);
	char *a2[] = {"report", "/nonexistent/summary.csv", "--quiet", NULL};
	ck_assert_int_eq(dmr_report_main(3, a2), 2);
	char *a3[] = {"report", "x.csv", "--resamples", "0", NULL};
	ck_assert_int_eq(dmr_report_main(4, a3), 2);
	char *a4[] = {"report", "--help", NULL};
	ck_assert_int_eq(dmr_report_main(2, a4), 0);
}
END_TEST

/* ---- a failed report leaves the previous one whole (D5) ------------------- */

/* report SUM --out OUT --quiet --no-plots [--metrics M]: its exit status. */
static int report_into(const char *sum, const char *out, const char *metrics)
{
	char *argv[10] = {"report", (char *)sum, "--out", (char *)out, "--quiet", "--no-plots"};
	int argc = 6;
	if (metrics) {
		argv[argc++] = "--metrics";
		argv[argc++] = (char *)metrics;
	}
	return dmr_report_main(argc, argv);
}

static char *slurp_in(const char *dir, const char *name)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return dmr_test_slurp(p, NULL);
}

/* an --out that cannot be a directory (a file, /dev/null) is bad input:
 * exit 2, as run, sweep and gen (the fresh-user trial of session 6 got 1) */
START_TEST(test_report_out_not_dir)
{
	char sum[300], out[300];
	snprintf(sum, sizeof(sum), "%s/summary-nd.csv", dmr_test_tmp);
	snprintf(out, sizeof(out), "%s/a-file", dmr_test_tmp);
	synth_summary(sum);
	dmr_test_write_file(out, "not a directory\n");
	ck_assert_int_eq(report_into(sum, out, NULL), 2);
	ck_assert_int_eq(report_into(sum, "/dev/null", NULL), 2);
	char *t = dmr_test_slurp(out, NULL);
	ck_assert_str_eq(t, "not a directory\n");
	free(t);
}
END_TEST

/* report.md cannot be put in place (a directory of that name): the new
 * report.csv must not stay without its report.md. */
START_TEST(test_report_all_or_nothing)
{
	char sum[300], out[300], p[400];
	snprintf(sum, sizeof(sum), "%s/summary.csv", dmr_test_tmp);
	snprintf(out, sizeof(out), "%s/rep-aon", dmr_test_tmp);
	synth_summary(sum);
	ck_assert_int_eq(report_into(sum, out, "committed_tps"), 0);
	char *csv0 = slurp_in(out, "report.csv");
	ck_assert_ptr_nonnull(csv0);
	snprintf(p, sizeof(p), "%s/report.md", out);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/report.md/keep", out);
	dmr_test_write_file(p, "x");
	ck_assert_int_ne(report_into(sum, out, "committed_tps,abort_rate"), 0);
	char *csv1 = slurp_in(out, "report.csv");
	ck_assert_ptr_nonnull(csv1);
	ck_assert_str_eq(csv1, csv0);
	/* no temp file left behind */
	char cmd[500];
	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -q 'tmp\\|old'", out);
	ck_assert_int_ne(system(cmd), 0);
	free(csv0);
	free(csv1);
}
END_TEST

/* A full disk (a 64 KiB tmpfs, root only): the second report fails and the
 * first stays whole, report.csv and report.md alike. */
START_TEST(test_report_full_disk)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_report_full_disk: SKIPPED: not root (needs to mount a "
				"small tmpfs; test_report_all_or_nothing covers the logic)\n");
		return;
	}
	char sum[300], out[300], cmd[600], fill[400];
	snprintf(sum, sizeof(sum), "%s/summary.csv", dmr_test_tmp);
	synth_summary(sum);
	snprintf(out, sizeof(out), "%s/rep-full", dmr_test_tmp);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=64k none '%s' 2>/dev/null", out);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_report_full_disk: SKIPPED: cannot mount a tmpfs here\n");
		return;
	}
	int ok1 = report_into(sum, out, "committed_tps");
	char *csv0 = slurp_in(out, "report.csv"), *md0 = slurp_in(out, "report.md");
	/* fill the file system */
	snprintf(fill, sizeof(fill), "%s/filler", out);
	FILE *f = fopen(fill, "w");
	static char block[4096];
	memset(block, 'x', sizeof(block));
	while (f && fwrite(block, 1, sizeof(block), f) == sizeof(block) && fflush(f) == 0)
		;
	if (f)
		fclose(f);
	int ok2 = report_into(sum, out, "committed_tps,abort_rate,atomics_per_commit");
	char *csv1 = slurp_in(out, "report.csv"), *md1 = slurp_in(out, "report.md");
	snprintf(cmd, sizeof(cmd), "umount '%s'", out);
	int um = system(cmd);
	ck_assert_int_eq(um, 0);
	ck_assert_int_eq(ok1, 0);
	ck_assert_int_ne(ok2, 0);
	ck_assert_ptr_nonnull(csv0);
	ck_assert_ptr_nonnull(md0);
	ck_assert_ptr_nonnull(csv1);
	ck_assert_ptr_nonnull(md1);
	ck_assert_str_eq(csv1, csv0);
	ck_assert_str_eq(md1, md0);
	free(csv0);
	free(md0);
	free(csv1);
	free(md1);
}
END_TEST

/* ---- D22: the order of rows, columns and series is the row order's no more */

static const char *d22_rows[8] = {
    "regime=extreme;loop=aimd,0,300,0.1,1\n", "regime=uniform;loop=none,0,200,0.1,1\n",
    "regime=extreme;loop=none,0,100,0.1,1\n", "regime=uniform;loop=aimd,1,210,0.1,1\n",
    "regime=uniform;loop=aimd,0,220,0.1,1\n", "regime=extreme;loop=none,1,110,0.1,1\n",
    "regime=uniform;loop=none,1,205,0.1,1\n", "regime=extreme;loop=aimd,1,310,0.1,1\n",
};

/* DIR/summary.csv with the rows in order (rev: reversed); the report's
 * report.csv and report.md (from its second line: the first names the
 * file) into *csv_p, *md_p. */
static void d22_report(const char *name, int rev, const char *spec, char **csv_p, char **md_p)
{
	char dir[300], sum[340], out[340];
	snprintf(dir, sizeof(dir), "%s/%s", dmr_test_tmp, name);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(sum, sizeof(sum), "%s/summary.csv", dir);
	FILE *f = fopen(sum, "w");
	ck_assert_ptr_nonnull(f);
	fputs("cell,rep,committed_tps,abort_rate,atomics_per_commit\n", f);
	for (int i = 0; i < 8; i++)
		fputs(d22_rows[rev ? 7 - i : i], f);
	ck_assert_int_eq(fclose(f), 0);
	if (spec) {
		char sp[340];
		snprintf(sp, sizeof(sp), "%s/sweep.spec", dir);
		dmr_test_write_file(sp, spec);
	}
	snprintf(out, sizeof(out), "%s/report", dir);
	ck_assert_int_eq(report_into(sum, out, "committed_tps"), 0);
	*csv_p = slurp_in(out, "report.csv");
	char *md = slurp_in(out, "report.md");
	ck_assert_ptr_nonnull(*csv_p);
	ck_assert_ptr_nonnull(md);
	*md_p = strdup(strchr(md, '\n') + 1);
	free(md);
}

START_TEST(test_report_order)
{
	char *c1, *m1, *c2, *m2, *c3, *m3;
	d22_report("d22-a", 0, NULL, &c1, &m1);
	d22_report("d22-b", 1, NULL, &c2, &m2);
	ck_assert_str_eq(c1, c2);
	ck_assert_str_eq(m1, m2);
	/* --by regime first, values in byte order; the baseline (loop=none)
	 * first within, and the first column of the pivot */
	const char *e = strstr(c1, "\nregime=extreme;loop=none,");
	const char *ea = strstr(c1, "\nregime=extreme;loop=aimd,");
	const char *u = strstr(c1, "\nregime=uniform;loop=none,");
	ck_assert(e && ea && u && e < ea && ea < u);
	ck_assert_ptr_nonnull(strstr(m1, "| cell | loop=none | loop=aimd |"));
	/* a sweep's DIR/sweep.spec gives the value order (baseline still first) */
	d22_report("d22-c", 0,
		   "# x\nworkload=tpcc\naxes.regime=uniform,extreme\naxes.loop=aimd,none\n", &c3,
		   &m3);
	e = strstr(c3, "\nregime=extreme;loop=none,");
	u = strstr(c3, "\nregime=uniform;loop=none,");
	const char *ua = strstr(c3, "\nregime=uniform;loop=aimd,");
	ck_assert(e && u && ua && u < ua && ua < e);
	ck_assert_ptr_nonnull(strstr(m3, "| cell | loop=none | loop=aimd |"));
	free(c1);
	free(m1);
	free(c2);
	free(m2);
	free(c3);
	free(m3);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("stats");
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_median_exact);
	tcase_add_test(tc, test_bootstrap_interval);
	tcase_add_test(tc, test_ratio);
	tcase_add_test(tc, test_recovery);
	suite_add_tcase(s, tc);

	tc = tcase_create("report");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, dmr_test_tmp_make, dmr_test_tmp_remove);
	tcase_add_test(tc, test_report_cells);
	tcase_add_test(tc, test_report_plain_summary);
	tcase_add_test(tc, test_report_aura);
	tcase_add_loop_test(tc, test_bad_input, 0,
			    (int)(sizeof(bad_inputs) / sizeof(bad_inputs[0])));
	tcase_add_test(tc, test_cli_usage);
	tcase_add_test(tc, test_report_out_not_dir);
	tcase_add_test(tc, test_report_all_or_nothing);
	tcase_add_test(tc, test_report_full_disk);
	tcase_add_test(tc, test_report_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (dmr_test_env_init("report", 0, 0) != 0)
		return EXIT_FAILURE;
	return dmr_test_run(report_suite());
}
