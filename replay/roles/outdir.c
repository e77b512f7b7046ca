/*
 * replay/roles/outdir.c - before a run into an output directory: the files
 * an earlier run left there are moved to DIR/earlier-N/, or the run is
 * refused when they are finished results (contract in replay/roles.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "roles_impl.h"

/* One of the entries a run leaves in its directory? The launcher's
 * (summary.csv, summary.partial.csv, cluster.json, mn.log or mnK.log,
 * cnK.log, cnK/) and a CN's (summary*.csv, timeseries*.csv, types*.csv,
 * cns*.csv, mns*.csv: docs/RESULTS.md, trace.cnK.csv[.tmp]). */
static int run_entry(const char *name)
{
	static const char *const fixed[] = {"summary.csv",    "summary.partial.csv",
					    "timeseries.csv", "timeseries.partial.csv",
					    "cluster.json",   "mn.log",
					    "processes.csv",  NULL};
	/* per type, CN and MN (replay/breakdown.h) */
	static const char *const breakdown[] = {
	    "types.csv", "types.partial.csv", "cns.csv", "cns.partial.csv",
	    "mns.csv",	 "mns.partial.csv",   NULL};
	if (dmr_roles_known(name, fixed) || dmr_roles_known(name, breakdown))
		return 1;
	const char *p = NULL;
	if (strncmp(name, "cn", 2) == 0 || strncmp(name, "mn", 2) == 0)
		p = name + 2;
	else if (strncmp(name, "trace.cn", 8) == 0)
		p = name + 8;
	if (!p || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (name[0] == 'm') /* mnK.log: MN K of several */
		return strcmp(p, ".log") == 0;
	if (name[0] == 'c')
		return !*p || strcmp(p, ".log") == 0;
	return strcmp(p, ".csv") == 0 || strcmp(p, ".csv.tmp") == 0;
}

/* Scan dir: *any = 1 when it holds entries of an earlier run; fin = the
 * path of finished results among them ("" when none). 2 when dir cannot
 * be read (the message printed), else 0. */
static int scan_earlier(const char *dir, const char *pfx, int *any, char *fin, size_t finlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: error: --out %s: %s\n", pfx, dir, strerror(errno));
		return 2;
	}
	char p[1400];
	*any = 0;
	fin[0] = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!run_entry(de->d_name))
			continue;
		*any = 1;
		struct stat sb;
		if (!fin[0] && strcmp(de->d_name, "summary.csv") == 0)
			snprintf(fin, finlen, "%s/summary.csv", dir);
		snprintf(p, sizeof(p), "%s/%s/summary.csv", dir, de->d_name);
		if (!fin[0] && strncmp(de->d_name, "cn", 2) == 0 && stat(p, &sb) == 0)
			snprintf(fin, finlen, "%s", p);
	}
	closedir(d);
	return 0;
}

static int refuse_finished(const char *dir, const char *pfx, const char *fin)
{
	fprintf(stderr,
		"%s: error: --out %s holds the finished results of an earlier run (%s): "
		"give a new --out, or --force to move that run's files to %s/earlier-N/ "
		"first (nothing is deleted)\n",
		pfx, dir, fin, dir);
	return 2;
}

int dmr_roles_earlier_refused(const char *dir, const char *pfx, int force)
{
	char fin[1600];
	int any = 0;
	int rc = scan_earlier(dir, pfx, &any, fin, sizeof(fin));
	if (rc == 0 && fin[0] && !force)
		rc = refuse_finished(dir, pfx, fin);
	return rc;
}

int dmr_roles_clear_earlier(const char *dir, const char *pfx, int force, char *moved,
			    size_t movedlen)
{
	if (moved && movedlen)
		moved[0] = 0;
	char fin[1600];
	int any = 0;
	int src = scan_earlier(dir, pfx, &any, fin, sizeof(fin));
	if (src != 0 || !any)
		return src;
	if (fin[0] && !force)
		return refuse_finished(dir, pfx, fin);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: error: --out %s: %s\n", pfx, dir, strerror(errno));
		return 2;
	}
	struct dirent *de;
	char to[1200];
	int n;
	for (n = 1; n < 100000; n++) {
		snprintf(to, sizeof(to), "%s/earlier-%d", dir, n);
		if (mkdir(to, 0777) == 0)
			break;
		if (errno != EEXIST) {
			closedir(d);
			fprintf(stderr, "%s: error: %s: %s\n", pfx, to, strerror(errno));
			return 2;
		}
	}
	int rc = 0;
	while ((de = readdir(d))) {
		if (!run_entry(de->d_name))
			continue;
		char from[1400], dst[1600];
		snprintf(from, sizeof(from), "%s/%s", dir, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, de->d_name);
		if (rename(from, dst) != 0) {
			fprintf(stderr, "%s: error: moving %s to %s: %s\n", pfx, from, dst,
				strerror(errno));
			rc = 2;
			break;
		}
	}
	closedir(d);
	if (rc == 0)
		fprintf(stderr,
			"%s: note: the files of an earlier %s run in %s were moved to %s/\n", pfx,
			fin[0] ? "(finished)" : "(unfinished)", dir, to);
	if (moved && movedlen)
		snprintf(moved, movedlen, "%s", to);
	return rc;
}
