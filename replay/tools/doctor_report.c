/*
 * replay/tools/doctor_report.c - `dmreplay doctor`'s list of checks and its
 * report: one line per check (OK / INFO / WARN / FAIL, what was found,
 * "->" what to do) and the summary, or one JSON object with --json; the
 * exit status.
 */
#include "doctor_impl.h"

static const char *const sev_str[] = {"OK", "INFO", "WARN", "FAIL"};

__attribute__((format(printf, 5, 6))) check_t *
dmr_doc_add(doctor_t *d, sev_t sev, const char *name, const char *subject, const char *fmt, ...)
{
	if (d->n_checks == d->cap_checks) {
		d->cap_checks = d->cap_checks ? d->cap_checks * 2 : 32;
		d->checks = xrealloc(d->checks, d->cap_checks * sizeof(*d->checks));
	}
	check_t *c = &d->checks[d->n_checks++];
	memset(c, 0, sizeof(*c));
	c->sev = sev;
	c->name = xstrdup(name);
	c->subject = xstrdup(subject ? subject : "");
	va_list ap;
	va_start(ap, fmt);
	c->found = xvasprintf(fmt, ap);
	va_end(ap);
	c->data = json_object();
	if (!c->data)
		oom();
	return c;
}

__attribute__((format(printf, 2, 3))) void dmr_doc_advise(check_t *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	free(c->advice);
	c->advice = s;
}

void dmr_doc_cset(check_t *c, const char *key, json_t *v)
{
	if (!v)
		oom();
	json_object_set_new(c->data, key, v);
}

void dmr_doc_cset_port(check_t *c, const rdev_t *dv, const port_t *p)
{
	dmr_doc_cset(c, "device", json_string(dv->name));
	if (p)
		dmr_doc_cset(c, "port", json_integer(p->num));
}

static char *check_line(const check_t *c)
{
	return xasprintf("%s %s%s%s: %s%s%s", sev_str[c->sev], c->name, c->subject[0] ? " " : "",
			 c->subject, c->found, c->advice ? " -> " : "", c->advice ? c->advice : "");
}

static int exit_status(const doctor_t *d, size_t cnt[4])
{
	memset(cnt, 0, 4 * sizeof(*cnt));
	for (size_t i = 0; i < d->n_checks; i++)
		cnt[d->checks[i].sev]++;
	return cnt[S_FAIL] || (d->strict && cnt[S_WARN]) ? DMR_DOCTOR_FAILED : DMR_DOCTOR_OK;
}

static json_t *checks_json(const doctor_t *d)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < d->n_checks; i++) {
		const check_t *c = &d->checks[i];
		char *line = check_line(c);
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s}", "status", sev_str[c->sev],
				      "check", c->name, "subject", c->subject, "found", c->found,
				      "advice", c->advice, "line", line);
		free(line);
		if (!o)
			oom();
		if (!c->advice)
			json_object_set_new(o, "advice", json_null());
		json_object_set(o, "data", c->data);
		json_array_append_new(arr, o);
	}
	return arr;
}

int dmr_doc_output(doctor_t *d)
{
	size_t cnt[4];
	int rc = exit_status(d, cnt);
	if (d->json) {
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:s?, s:b, s:o, s:{s:I, s:I, s:I, s:I}, s:i}", "command",
		    "doctor", "sysfs", d->sysfs, "proc", d->proc, "config",
		    d->have_cfg ? d->cfg.path : NULL, "strict", d->strict, "checks", checks_json(d),
		    "counts", "OK", (json_int_t)cnt[S_OK], "INFO", (json_int_t)cnt[S_INFO], "WARN",
		    (json_int_t)cnt[S_WARN], "FAIL", (json_int_t)cnt[S_FAIL], "exit_status", rc);
		if (!o)
			oom();
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		for (size_t i = 0; i < d->n_checks; i++) {
			char *line = check_line(&d->checks[i]);
			puts(line);
			free(line);
		}
		printf("doctor: %zu OK, %zu INFO, %zu WARN, %zu FAIL: exit %d (%s)\n", cnt[S_OK],
		       cnt[S_INFO], cnt[S_WARN], cnt[S_FAIL], rc,
		       rc ? (cnt[S_FAIL] ? "a check failed" : "a warning, with --strict")
			  : (cnt[S_WARN] ? "no check failed; read the warnings"
					 : "all checks passed"));
	}
	fflush(stdout);
	return rc;
}

int dmr_doc_no_device(doctor_t *d, const char *why)
{
	static const char generic[] =
	    "load an RDMA driver (modprobe mlx5_ib) or create a SoftRoCE device (modprobe "
	    "rdma_rxe; rdma link add rxe0 type rxe netdev eth0), or run where there is one "
	    "(scripts/rxe-vm run -- build/dmreplay doctor)";
	/* rdma_rxe loaded, no device: `rdma link add` was not run or failed
	 * (issue #15 B32: its error alone hides the kernel's reason) */
	char how[PATH_MAX];
	int rxe = dmr_doc_rxe_loaded(d, how, sizeof(how));
	const char *advice = rxe ? DMR_DOC_RXE_ADVICE : generic;
	char *found = rxe ? xasprintf("no RDMA device: %s; rdma_rxe is loaded (%s) but no rxe "
				      "device exists",
				      why, how)
			  : xasprintf("no RDMA device: %s", why);
	fprintf(stderr, PROG ": error: %s; %s\n", found, advice);
	if (d->json) {
		char *line = xasprintf("FAIL devices: %s -> %s", found, advice);
		json_t *o = json_pack(
		    "{s:s, s:s, s:s, s:s?, s:b, s:[{s:s, s:s, s:s, s:s, s:s, s:s, "
		    "s:{}}], s:{s:i, s:i, s:i, s:i}, s:i, s:s}",
		    "command", "doctor", "sysfs", d->sysfs, "proc", d->proc, "config",
		    d->have_cfg ? d->cfg.path : NULL, "strict", d->strict, "checks", "status",
		    "FAIL", "check", "devices", "subject", "", "found", found, "advice", advice,
		    "line", line, "data", "counts", "OK", 0, "INFO", 0, "WARN", 0, "FAIL", 1,
		    "exit_status", DMR_DOCTOR_NODEV, "error", found);
		free(line);
		if (!o)
			oom();
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		fflush(stdout);
		json_decref(o);
	}
	free(found);
	return DMR_DOCTOR_NODEV;
}

void dmr_doc_free(doctor_t *d)
{
	for (size_t i = 0; i < d->n_checks; i++) {
		check_t *c = &d->checks[i];
		char *text[] = {c->name, c->subject, c->found, c->advice};
		for (size_t k = 0; k < sizeof(text) / sizeof(text[0]); k++)
			free(text[k]);
		json_decref(c->data);
	}
	free(d->checks);
	for (size_t i = 0; i < d->n_devs; i++) {
		for (size_t j = 0; j < d->devs[i].n_ports; j++) {
			free(d->devs[i].ports[j].gids);
			free(d->devs[i].ports[j].mtu_how);
		}
		free(d->devs[i].ports);
	}
	free(d->devs);
	free(d->addrs);
	free(d->cfg.nodes);
}
