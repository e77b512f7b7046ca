/*
 * replay/roles/etcd.c - etcd v3's JSON gateway over a minimal HTTP/1.1
 * client of our own (one bounded request per connection), and its KV and
 * lease calls (contract in etcd.h; membership in etcd_mn.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/base/timeps.h"
#include "etcd.h"

/* The largest answer read, bytes (a range of a few MN entries is < 4 KiB). */
#define ETCD_MAX_ANSWER (1u << 20)

dmr_status_t dmr_etcd_open(dmr_etcd_t *e, const char *endpoint, dmr_err_t *err)
{
	memset(e, 0, sizeof(*e));
	const char *colon = endpoint ? strrchr(endpoint, ':') : NULL;
	char host[64];
	if (!colon || colon == endpoint || (size_t)(colon - endpoint) >= sizeof(host))
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--etcd '%s': must be HOST:PORT (HOST a dotted IPv4 address or "
				   "localhost, e.g. 127.0.0.1:2379)",
				   endpoint ? endpoint : "");
	memcpy(host, endpoint, (size_t)(colon - endpoint));
	host[colon - endpoint] = 0;
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--etcd '%s': port '%s' must be an integer in 1..65535",
				   endpoint, colon + 1);
	struct in_addr a;
	if (strcmp(host, "localhost") == 0)
		a.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &a) != 1)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "--etcd '%s': host '%s' must be a dotted IPv4 address or "
				   "localhost",
				   endpoint, host);
	snprintf(e->endpoint, sizeof(e->endpoint), "%s", endpoint);
	e->addr = a.s_addr;
	e->port = (uint16_t)p;
	e->request_s = DMR_ETCD_REQUEST_S;
	return DMR_OK;
}

/* ---- base64 (RFC 4648, with padding: what the gateway sends and takes) --- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const unsigned char *in, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = 0;
	return out;
}

/* Decode s into a malloc'd, NUL-terminated buffer; NULL when s is not
 * base64 (or out of memory). */
static char *b64_decode(const char *s, size_t *len_p)
{
	size_t n = strlen(s);
	if (n % 4)
		return NULL;
	char *out = malloc(n / 4 * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			const char *p = s[i + k] ? strchr(b64, s[i + k]) : NULL;
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!p || pad) {
				free(out);
				return NULL;
			}
			v = (v << 6) | (uint32_t)(p - b64);
		}
		out[o++] = (char)(v >> 16);
		if (pad < 2)
			out[o++] = (char)(v >> 8);
		if (pad < 1)
			out[o++] = (char)v;
	}
	out[o] = 0;
	*len_p = o;
	return out;
}

/* ---- one HTTP/1.1 request --------------------------------------------- */

/* Milliseconds left until deadline (mono seconds), at least 0. */
static int ms_left(double deadline)
{
	double l = deadline - dmr_wall_s();
	return l <= 0 ? 0 : (int)(l * 1000) + 1;
}

/* Decode a chunked body in place (RFC 9112 7.1; trailers ignored): its
 * length, or -1 when malformed. */
static long unchunk(char *b, size_t n)
{
	size_t in = 0, out = 0;
	for (;;) {
		char *end;
		if (in >= n)
			return -1;
		unsigned long sz = strtoul(b + in, &end, 16);
		char *nl = memchr(b + in, '\n', n - in);
		if (end == b + in || !nl)
			return -1;
		in = (size_t)(nl - b) + 1;
		if (sz == 0)
			return (long)out;
		if (sz > n - in)
			return -1;
		memmove(b + out, b + in, sz);
		out += sz;
		in += sz;
		while (in < n && (b[in] == '\r' || b[in] == '\n'))
			in++;
	}
}

/* Send one request; on success *status = the HTTP status and *body = the
 * body (malloc'd, NUL-terminated). DMR_ERR_TIMEOUT when etcd cannot be
 * reached or does not answer in time (the message names the step). */
static dmr_status_t http_post(const dmr_etcd_t *e, const char *path, const char *json,
			      double deadline, int *status, char **body, dmr_err_t *err)
{
	double own = dmr_wall_s() + e->request_s;
	if (own < deadline)
		deadline = own;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return dmr_err_set(err, DMR_ERR_IO, "etcd at %s: socket: %s", e->endpoint,
				   strerror(errno));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(e->port)};
	sa.sin_addr.s_addr = e->addr;
	dmr_status_t st = DMR_OK;
	char *buf = NULL, *req = NULL;
	const char *step = "connect";
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (errno != EINPROGRESS)
			goto sys;
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int r = poll(&p, 1, ms_left(deadline));
		if (r == 0)
			goto late;
		int so = 0;
		socklen_t sl = sizeof(so);
		if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0)
			goto sys;
		if (so) {
			errno = so;
			goto sys;
		}
	}
	size_t jl = strlen(json);
	req = malloc(jl + 256);
	if (!req) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	int hl = snprintf(req, 256,
			  "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
			  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			  path, e->endpoint, jl);
	if (hl < 0 || hl >= 256) { /* cannot happen: endpoint < 80, our paths short */
		st = dmr_err_set(err, DMR_ERR_INVALID, "etcd at %s: POST %s: header too long",
				 e->endpoint, path);
		goto out;
	}
	memcpy(req + hl, json, jl);
	size_t rl = (size_t)hl + jl, sent = 0;
	step = "send";
	while (sent < rl) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int r = poll(&p, 1, ms_left(deadline));
		if (r == 0)
			goto late;
		ssize_t w = r < 0 ? -1 : send(fd, req + sent, rl - sent, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			goto sys;
		if (w > 0)
			sent += (size_t)w;
	}
	step = "receive";
	size_t cap = 4096, got = 0;
	buf = malloc(cap);
	if (!buf) {
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		if (got + 1 >= cap) {
			char *nb = cap >= ETCD_MAX_ANSWER ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				st = dmr_err_set(err, DMR_ERR_PARSE,
						 "etcd at %s: POST %s: answer over %u bytes",
						 e->endpoint, path, ETCD_MAX_ANSWER);
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, ms_left(deadline));
		if (r == 0)
			goto late;
		ssize_t k = r < 0 ? -1 : recv(fd, buf + got, cap - 1 - got, 0);
		if (k == 0)
			break;
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			goto sys;
		if (k > 0)
			got += (size_t)k;
	}
	buf[got] = 0;
	int code = 0;
	char *hend = strstr(buf, "\r\n\r\n");
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1 || !hend) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "etcd at %s: POST %s: not an HTTP answer (%zu bytes): is this "
				 "etcd's client URL?",
				 e->endpoint, path, got);
		goto out;
	}
	*hend = 0;
	char *b = hend + 4;
	size_t bl = got - (size_t)(b - buf);
	for (char *h = buf; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h - 'A' + 'a');
	if (strstr(buf, "\ntransfer-encoding: chunked")) {
		long n = unchunk(b, bl);
		if (n < 0) {
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "etcd at %s: POST %s: malformed chunked answer",
					 e->endpoint, path);
			goto out;
		}
		bl = (size_t)n;
	}
	memmove(buf, b, bl);
	buf[bl] = 0;
	*status = code;
	*body = buf;
	buf = NULL;
	goto out;
late:
	st = dmr_err_set(err, DMR_ERR_TIMEOUT, "etcd at %s: POST %s: no answer (%s) within %.1f s",
			 e->endpoint, path, step, e->request_s);
	goto out;
sys:
	st = dmr_err_set(err, DMR_ERR_TIMEOUT, "etcd at %s: POST %s: %s: %s", e->endpoint, path,
			 step, strerror(errno));
out:
	close(fd);
	free(req);
	free(buf);
	return st;
}

/* POST body (a JSON object, consumed) to path; *answer = the JSON object
 * answered (the caller's). A status other than 200 is DMR_ERR_REMOTE with
 * etcd's message. */
static dmr_status_t call(const dmr_etcd_t *e, const char *path, json_t *body, json_t **answer,
			 dmr_err_t *err)
{
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	int code = 0;
	char *ans = NULL;
	dmr_status_t st = http_post(e, path, text, dmr_wall_s() + e->request_s, &code, &ans, err);
	free(text);
	if (st != DMR_OK)
		return st;
	json_error_t je;
	json_t *root = json_loads(ans, 0, &je);
	if (code != 200) {
		json_t *m = json_is_object(root) ? json_object_get(root, "message") : NULL;
		st = dmr_err_set(err, DMR_ERR_REMOTE, "etcd at %s: POST %s: HTTP %d: %.200s",
				 e->endpoint, path, code,
				 json_is_string(m) ? json_string_value(m) : ans);
	} else if (!json_is_object(root)) {
		st = dmr_err_set(err, DMR_ERR_PARSE,
				 "etcd at %s: POST %s: the answer is not a JSON object: %.120s",
				 e->endpoint, path, ans);
	}
	free(ans);
	if (st != DMR_OK) {
		json_decref(root);
		return st;
	}
	*answer = root;
	return DMR_OK;
}

/* A 64-bit integer the gateway sends as a string (or a number); 0 absent. */
static int64_t json_i64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return 0;
}

static json_t *b64_json(const char *s, size_t n)
{
	char *t = b64_encode((const unsigned char *)s, n);
	json_t *v = t ? json_string(t) : NULL;
	free(t);
	return v;
}

dmr_status_t dmr_etcd_put(const dmr_etcd_t *e, const char *key, const char *val, size_t val_len,
			  int64_t lease, dmr_err_t *err)
{
	json_t *b = json_object(), *ans = NULL;
	json_object_set_new(b, "key", b64_json(key, strlen(key)));
	json_object_set_new(b, "value", b64_json(val, val_len));
	if (lease) {
		char id[32];
		snprintf(id, sizeof(id), "%lld", (long long)lease);
		json_object_set_new(b, "lease", json_string(id));
	}
	dmr_status_t st = call(e, "/v3/kv/put", b, &ans, err);
	json_decref(ans);
	return st;
}

/* The key after the last key starting with prefix (etcd's prefix range:
 * the last byte below 0xff plus one, the rest cut). */
static char *range_end(const char *prefix, size_t *len_p)
{
	size_t n = strlen(prefix);
	char *r = malloc(n + 1);
	if (!r)
		return NULL;
	memcpy(r, prefix, n + 1);
	while (n > 0 && (unsigned char)r[n - 1] == 0xff)
		n--;
	if (n == 0) { /* every key: "\0" */
		r[0] = 0;
		*len_p = 1;
		return r;
	}
	r[n - 1] = (char)((unsigned char)r[n - 1] + 1);
	*len_p = n;
	return r;
}

dmr_status_t dmr_etcd_list(const dmr_etcd_t *e, const char *prefix, dmr_etcd_kv_t **kvs,
			   size_t *n_p, dmr_err_t *err)
{
	size_t el;
	char *end = range_end(prefix, &el);
	if (!end)
		return dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	json_t *b = json_object(), *ans = NULL;
	json_object_set_new(b, "key", b64_json(prefix, strlen(prefix)));
	json_object_set_new(b, "range_end", b64_json(end, el));
	free(end);
	dmr_status_t st = call(e, "/v3/kv/range", b, &ans, err);
	if (st != DMR_OK)
		return st;
	json_t *arr = json_object_get(ans, "kvs"), *kv;
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0, i;
	dmr_etcd_kv_t *out = n ? calloc(n, sizeof(*out)) : NULL;
	if (n && !out)
		st = dmr_err_set(err, DMR_ERR_NOMEM, "out of memory");
	json_array_foreach(arr, i, kv)
	{
		if (st != DMR_OK)
			break;
		json_t *k = json_object_get(kv, "key"), *v = json_object_get(kv, "value");
		size_t kl = 0;
		out[i].key = json_is_string(k) ? b64_decode(json_string_value(k), &kl) : NULL;
		/* an empty value is absent from the gateway's JSON */
		out[i].val =
		    b64_decode(json_is_string(v) ? json_string_value(v) : "", &out[i].val_len);
		out[i].lease = json_i64(kv, "lease");
		if (!out[i].key || !out[i].val)
			st = dmr_err_set(err, DMR_ERR_PARSE,
					 "etcd at %s: /v3/kv/range under '%s': entry %zu has no "
					 "base64 key or value",
					 e->endpoint, prefix, i);
	}
	json_decref(ans);
	if (st != DMR_OK) {
		dmr_etcd_kvs_free(out, n);
		return st;
	}
	*kvs = out;
	*n_p = n;
	return DMR_OK;
}

void dmr_etcd_kvs_free(dmr_etcd_kv_t *kvs, size_t n)
{
	for (size_t i = 0; kvs && i < n; i++) {
		free(kvs[i].key);
		free(kvs[i].val);
	}
	free(kvs);
}

dmr_status_t dmr_etcd_del(const dmr_etcd_t *e, const char *key, dmr_err_t *err)
{
	json_t *b = json_object(), *ans = NULL;
	json_object_set_new(b, "key", b64_json(key, strlen(key)));
	dmr_status_t st = call(e, "/v3/kv/deleterange", b, &ans, err);
	json_decref(ans);
	return st;
}

dmr_status_t dmr_etcd_lease_grant(const dmr_etcd_t *e, double ttl_s, int64_t *id,
				  int64_t *granted_s, dmr_err_t *err)
{
	if (!(ttl_s > 0 && ttl_s <= 86400))
		return dmr_err_set(err, DMR_ERR_INVALID, "etcd lease TTL %g s: legal (0, 86400]",
				   ttl_s);
	json_t *b = json_object(), *ans = NULL;
	long long t = (long long)ttl_s;
	if ((double)t < ttl_s)
		t++;
	json_object_set_new(b, "TTL", json_integer(t));
	dmr_status_t st = call(e, "/v3/lease/grant", b, &ans, err);
	if (st != DMR_OK)
		return st;
	int64_t got = json_i64(ans, "ID");
	if (!got)
		st = dmr_err_set(err, DMR_ERR_PARSE, "etcd at %s: /v3/lease/grant: no lease ID",
				 e->endpoint);
	else {
		*id = got;
		if (granted_s)
			*granted_s = json_i64(ans, "TTL");
	}
	json_decref(ans);
	return st;
}

dmr_status_t dmr_etcd_lease_keepalive(const dmr_etcd_t *e, int64_t id, int64_t *ttl_s,
				      dmr_err_t *err)
{
	char s[32];
	snprintf(s, sizeof(s), "%lld", (long long)id);
	json_t *b = json_object(), *ans = NULL;
	json_object_set_new(b, "ID", json_string(s));
	/* a stream in gRPC: the gateway answers {"result": {...}} per message */
	dmr_status_t st = call(e, "/v3/lease/keepalive", b, &ans, err);
	if (st != DMR_OK)
		return st;
	json_t *r = json_object_get(ans, "result");
	if (!json_is_object(r)) {
		json_t *m = json_object_get(json_object_get(ans, "error"), "message");
		st = dmr_err_set(err, DMR_ERR_REMOTE, "etcd at %s: /v3/lease/keepalive: %s",
				 e->endpoint,
				 json_is_string(m) ? json_string_value(m) : "no result");
	} else {
		*ttl_s = json_i64(r, "TTL"); /* absent (0): the lease is gone */
	}
	json_decref(ans);
	return st;
}

dmr_status_t dmr_etcd_lease_revoke(const dmr_etcd_t *e, int64_t id, dmr_err_t *err)
{
	char s[32];
	snprintf(s, sizeof(s), "%lld", (long long)id);
	json_t *b = json_object(), *ans = NULL;
	json_object_set_new(b, "ID", json_string(s));
	dmr_status_t st = call(e, "/v3/lease/revoke", b, &ans, err);
	json_decref(ans);
	return st;
}
