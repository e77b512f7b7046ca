/*
 * replay/roles/etcd_mn.c - membership in etcd: an MN's entry (its JSON,
 * checked field by field), its registration under a lease kept alive by a
 * thread, and a CN's bounded wait for the MNs it expects (contract in
 * etcd.h; docs/ROLES.md "Membership in etcd").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/base/sig.h"
#include "../../core/base/timeps.h"
#include "etcd.h"
#include "roles_impl.h"

/* Poll interval of the waits (an MN reaching etcd, a CN waiting for MNs). */
#define ETCD_POLL_US 200000

dmr_status_t dmr_etcd_check_name(const char *cluster, dmr_err_t *err)
{
	size_t n = cluster ? strlen(cluster) : 0;
	if (n == 0 || n > DMR_ETCD_NAME_MAX ||
	    strspn(cluster, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
		n ||
	    strcmp(cluster, ".") == 0 || strcmp(cluster, "..") == 0)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--cluster '%s': a name of 1..%d characters A-Z a-z 0-9 . _ - "
				   "(one element of the etcd key %s/NAME/mn/K)",
				   cluster ? cluster : "", DMR_ETCD_NAME_MAX, DMR_ETCD_ROOT);
	return DMR_OK;
}

void dmr_etcd_mn_prefix(const char *cluster, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/mn/", DMR_ETCD_ROOT, cluster);
}

char *dmr_etcd_mn_json(const dmr_etcd_mn_t *mn)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = 0;
	json_t *o = json_pack("{s:I, s:s, s:i, s:I}", "id", (json_int_t)mn->id, "ip", mn->ip,
			      "port", (int)mn->port, "mr_size", (json_int_t)mn->mr_size);
	if (!o)
		return NULL;
	if (mn->devname[0])
		json_object_set_new(o, "devname", json_string(mn->devname));
	if (mn->pid)
		json_object_set_new(o, "pid", json_integer(mn->pid));
	if (host[0])
		json_object_set_new(o, "host", json_string(host));
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

static dmr_status_t bad(dmr_err_t *err, const char *key, const char *field, const char *what)
{
	return dmr_err_set(err, DMR_ERR_PARSE,
			   "etcd key %s: field '%s': %s (a malformed MN entry: the MN registers "
			   "{\"id\", \"ip\", \"port\", \"mr_size\"}; remove the key or restart "
			   "that MN)",
			   key, field, what);
}

/* An integer field in [lo, hi]. */
static dmr_status_t int_field(json_t *o, const char *key, const char *f, long long lo, long long hi,
			      long long *out, dmr_err_t *err)
{
	json_t *v = json_object_get(o, f);
	char what[160];
	if (!v)
		return bad(err, key, f, "missing");
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		snprintf(what, sizeof(what), "must be an integer in %lld..%lld", lo, hi);
		return bad(err, key, f, what);
	}
	*out = json_integer_value(v);
	return DMR_OK;
}

dmr_status_t dmr_etcd_mn_parse(const char *prefix, const char *key, const char *val, size_t val_len,
			       dmr_etcd_mn_t *mn, dmr_err_t *err)
{
	static const char *const known[] = {"id",      "ip",  "port", "mr_size",
					    "devname", "pid", "host", NULL};
	size_t pl = strlen(prefix);
	const char *tail = key + (strncmp(key, prefix, pl) == 0 ? pl : strlen(key));
	char *end;
	errno = 0;
	unsigned long kid = strtoul(tail, &end, 10);
	if (!*tail || *end || errno || kid > INT32_MAX || tail[0] < '0' || tail[0] > '9' ||
	    (tail[0] == '0' && tail[1])) /* one key per MN: no "01" beside "1" */
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "etcd key %s: not an MN key (%sK, K the MN id 0..2^31-1)", key,
				   prefix);
	json_error_t je;
	json_t *o = json_loadb(val, val_len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return dmr_err_set(err, DMR_ERR_PARSE,
				   "etcd key %s: the value is not JSON (column %d: %s): %.80s", key,
				   je.column, je.text, val);
	dmr_status_t st = DMR_OK;
	memset(mn, 0, sizeof(*mn));
	if (!json_is_object(o)) {
		st = dmr_err_set(err, DMR_ERR_PARSE, "etcd key %s: the value must be a JSON object",
				 key);
		goto out;
	}
	const char *f;
	json_t *v;
	json_object_foreach(o, f, v)
	{
		if (!dmr_roles_known(f, known)) {
			st = bad(err, key, f,
				 "unknown field (an MN entry takes id, ip, port, mr_size, "
				 "devname, pid, host)");
			goto out;
		}
	}
	long long x = 0;
	if ((st = int_field(o, key, "id", 0, INT32_MAX, &x, err)) != DMR_OK)
		goto out;
	if ((unsigned long)x != kid) {
		char what[128];
		snprintf(what, sizeof(what), "%lld, but the key names MN %lu", x, kid);
		st = bad(err, key, "id", what);
		goto out;
	}
	mn->id = (uint32_t)x;
	v = json_object_get(o, "ip");
	struct in_addr a;
	if (!v || !json_is_string(v) || inet_pton(AF_INET, json_string_value(v), &a) != 1) {
		st = bad(err, key, "ip",
			 v ? "must be a dotted IPv4 address string (e.g. \"10.0.2.15\")"
			   : "missing");
		goto out;
	}
	snprintf(mn->ip, sizeof(mn->ip), "%s", json_string_value(v));
	if ((st = int_field(o, key, "port", 1, 65535, &x, err)) != DMR_OK)
		goto out;
	mn->port = (uint16_t)x;
	if ((st = int_field(o, key, "mr_size", 64, 1ll << 48, &x, err)) != DMR_OK)
		goto out;
	if (x & 7) {
		st = bad(err, key, "mr_size", "must be a multiple of 8 bytes");
		goto out;
	}
	mn->mr_size = (uint64_t)x;
	if ((v = json_object_get(o, "devname"))) {
		if (!json_is_string(v) || json_string_length(v) >= sizeof(mn->devname)) {
			st = bad(err, key, "devname", "must be a string of 0..63 characters");
			goto out;
		}
		snprintf(mn->devname, sizeof(mn->devname), "%s", json_string_value(v));
	}
	if ((v = json_object_get(o, "pid")) &&
	    (st = int_field(o, key, "pid", 1, INT32_MAX, &mn->pid, err)) != DMR_OK)
		goto out;
	if ((v = json_object_get(o, "host")) && !json_is_string(v))
		st = bad(err, key, "host", "must be a string");
out:
	json_decref(o);
	return st;
}

/* ---- registration ---------------------------------------------------- */

struct dmr_etcd_reg {
	dmr_etcd_t e;
	char key[160], pfx[64];
	char *val;
	double ttl_s;
	int64_t lease;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	unsigned long keepalives;
};

/* A lease and the key under it. */
static dmr_status_t put_leased(dmr_etcd_reg_t *r, int64_t *granted_s, dmr_err_t *err)
{
	int64_t id = 0;
	dmr_status_t st = dmr_etcd_lease_grant(&r->e, r->ttl_s, &id, granted_s, err);
	if (st != DMR_OK)
		return st;
	st = dmr_etcd_put(&r->e, r->key, r->val, strlen(r->val), id, err);
	if (st != DMR_OK) {
		dmr_err_t e2;
		(void)dmr_etcd_lease_revoke(&r->e, id, &e2);
		return st;
	}
	r->lease = id;
	return DMR_OK;
}

static void *keepalive_thread(void *arg)
{
	dmr_etcd_reg_t *r = arg;
	int failing = 0;
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double p = r->ttl_s / 3; /* three chances per TTL */
		ts.tv_sec += (time_t)p;
		ts.tv_nsec += (long)((p - (double)(time_t)p) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == 0 || r->stop)
			continue;
		pthread_mutex_unlock(&r->mu);
		dmr_err_t err = {{0}};
		int64_t ttl = 0;
		dmr_status_t st = dmr_etcd_lease_keepalive(&r->e, r->lease, &ttl, &err);
		int renewed = 0;
		if (st == DMR_OK && ttl == 0) { /* gone: a new lease, the key again */
			st = put_leased(r, NULL, &err);
			renewed = st == DMR_OK;
		}
		if (st != DMR_OK && !failing)
			fprintf(stderr,
				"%s: warning: etcd keepalive of %s failed: %s (retried every "
				"%.1f s; the key expires %.0f s after the last success)\n",
				r->pfx, r->key, err.msg, p, r->ttl_s);
		else if (st == DMR_OK && (failing || renewed))
			fprintf(stderr, "%s: etcd: %s %s\n", r->pfx, r->key,
				renewed ? "had expired: registered again under a new lease"
					: "kept alive again");
		failing = st != DMR_OK;
		pthread_mutex_lock(&r->mu);
		if (st == DMR_OK)
			r->keepalives++;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

dmr_status_t dmr_etcd_register(const dmr_etcd_t *e, const char *cluster, const dmr_etcd_mn_t *mn,
			       double ttl_s, double wait_s, const char *pfx, dmr_etcd_reg_t **reg,
			       int64_t *granted_s, dmr_err_t *err)
{
	dmr_status_t st = dmr_etcd_check_name(cluster, err);
	if (st != DMR_OK)
		return st;
	if (!(ttl_s >= 1 && ttl_s <= 86400))
		return dmr_err_set(err, DMR_ERR_INVALID, "--etcd-ttl %g s: legal 1..86400", ttl_s);
	dmr_etcd_reg_t *r = calloc(1, sizeof(*r));
	if (!r || !(r->val = dmr_etcd_mn_json(mn))) {
		free(r);
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	}
	r->e = *e;
	r->ttl_s = ttl_s;
	snprintf(r->pfx, sizeof(r->pfx), "%s", pfx ? pfx : "dmreplay");
	char prefix[128];
	dmr_etcd_mn_prefix(cluster, prefix, sizeof(prefix));
	snprintf(r->key, sizeof(r->key), "%s%u", prefix, mn->id);
	double t0 = dmr_wall_s(), deadline = t0 + wait_s;
	for (;;) {
		st = put_leased(r, granted_s, err);
		if (st != DMR_ERR_TIMEOUT || dmr_wall_s() + ETCD_POLL_US / 1e6 > deadline)
			break;
		if (dmr_sig_caught()) {
			free(r->val);
			free(r);
			return dmr_err_set(err, DMR_ERR_INTERRUPTED,
					   "interrupted by signal %d while reaching etcd at %s",
					   dmr_sig_caught(), e->endpoint);
		}
		usleep(ETCD_POLL_US);
	}
	if (st == DMR_ERR_TIMEOUT) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", err->msg);
		st = dmr_err_set(err, st, "etcd at %s unreachable for %.1f s (--etcd-wait): %s",
				 e->endpoint, dmr_wall_s() - t0, m);
	}
	if (st == DMR_OK) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r->cv, &ca);
		pthread_condattr_destroy(&ca);
		pthread_mutex_init(&r->mu, NULL);
		int rc = pthread_create(&r->th, NULL, keepalive_thread, r);
		if (rc) {
			dmr_err_t e2;
			(void)dmr_etcd_lease_revoke(&r->e, r->lease, &e2);
			pthread_cond_destroy(&r->cv);
			pthread_mutex_destroy(&r->mu);
			st = dmr_err_set(err, DMR_ERR_IO, "pthread_create (etcd keepalive): %s",
					 strerror(rc));
		}
	}
	if (st != DMR_OK) {
		free(r->val);
		free(r);
		return st;
	}
	*reg = r;
	return DMR_OK;
}

unsigned long dmr_etcd_reg_keepalives(dmr_etcd_reg_t *reg)
{
	pthread_mutex_lock(&reg->mu);
	unsigned long n = reg->keepalives;
	pthread_mutex_unlock(&reg->mu);
	return n;
}

dmr_status_t dmr_etcd_unregister(dmr_etcd_reg_t *reg, int revoke, dmr_err_t *err)
{
	if (!reg)
		return DMR_OK;
	pthread_mutex_lock(&reg->mu);
	reg->stop = 1;
	pthread_cond_signal(&reg->cv);
	pthread_mutex_unlock(&reg->mu);
	pthread_join(reg->th, NULL);
	dmr_status_t st = revoke ? dmr_etcd_lease_revoke(&reg->e, reg->lease, err) : DMR_OK;
	pthread_cond_destroy(&reg->cv);
	pthread_mutex_destroy(&reg->mu);
	free(reg->val);
	free(reg);
	return st;
}

/* ---- a CN's wait for its MNs ------------------------------------------ */

dmr_status_t dmr_etcd_find_mns(const dmr_etcd_t *e, const char *cluster, const uint32_t *ids,
			       uint32_t n, double wait_s, dmr_etcd_mn_t *out, uint32_t *extra_p,
			       dmr_err_t *err)
{
	dmr_status_t st = dmr_etcd_check_name(cluster, err);
	if (st != DMR_OK)
		return st;
	char prefix[128];
	dmr_etcd_mn_prefix(cluster, prefix, sizeof(prefix));
	double t0 = dmr_wall_s(), deadline = t0 + wait_s;
	int reached = 0;
	uint32_t found = 0, extra = 0;
	unsigned char *have = calloc(n ? n : 1, 1);
	if (!have)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	dmr_err_t last = {{0}};
	for (;;) {
		dmr_etcd_kv_t *kvs = NULL;
		size_t nk = 0;
		st = dmr_etcd_list(e, prefix, &kvs, &nk, &last);
		if (st == DMR_OK) {
			reached = 1;
			found = extra = 0;
			memset(have, 0, n ? n : 1);
			for (size_t i = 0; i < nk && st == DMR_OK; i++) {
				dmr_etcd_mn_t mn;
				st = dmr_etcd_mn_parse(prefix, kvs[i].key, kvs[i].val,
						       kvs[i].val_len, &mn, err);
				uint32_t k = 0;
				while (st == DMR_OK && k < n && ids[k] != mn.id)
					k++;
				if (st == DMR_OK && k == n)
					extra++;
				else if (st == DMR_OK) {
					out[k] = mn;
					found += !have[k];
					have[k] = 1;
				}
			}
			dmr_etcd_kvs_free(kvs, nk);
			if (st != DMR_OK || found == n)
				break;
		} else if (st != DMR_ERR_TIMEOUT) { /* etcd answered with an error */
			*err = last;
			break;
		}
		if (dmr_wall_s() + ETCD_POLL_US / 1e6 > deadline) {
			st = DMR_ERR_TIMEOUT;
			break;
		}
		if (dmr_sig_caught()) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED,
					 "interrupted by signal %d while waiting for the MNs of "
					 "cluster '%s' in etcd at %s",
					 dmr_sig_caught(), cluster, e->endpoint);
			break;
		}
		usleep(ETCD_POLL_US);
	}
	if (st == DMR_ERR_TIMEOUT && !reached) {
		st = dmr_err_set(err, st, "etcd at %s unreachable for %.1f s (--etcd-wait): %s",
				 e->endpoint, dmr_wall_s() - t0, last.msg);
	} else if (st == DMR_ERR_TIMEOUT) {
		char miss[200] = "";
		size_t off = 0;
		for (uint32_t k = 0; k < n && off < sizeof(miss); k++)
			if (!have[k])
				off += (size_t)snprintf(miss + off, sizeof(miss) - off, "%s%u",
							off ? ", " : "", ids[k]);
		st = dmr_err_set(err, st,
				 "cluster '%s': %u of %u MNs registered in etcd at %s under %s "
				 "after %.1f s (--etcd-wait)%s; missing MN %s: start `dmreplay mn "
				 "--etcd %s --cluster %s --id K` for each",
				 cluster, found, n, e->endpoint, prefix, dmr_wall_s() - t0,
				 extra ? " (other MN ids there ignored)" : "", miss, e->endpoint,
				 cluster);
	}
	free(have);
	if (st == DMR_OK && extra_p)
		*extra_p = extra;
	return st;
}
