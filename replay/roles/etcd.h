/*
 * replay/roles/etcd.h - cluster membership in etcd (issue 17 item 2;
 * docs/ROLES.md "Membership in etcd"): an MN process registers its address
 * under a lease, a CN waits for the MNs it expects. Optional: the cluster
 * config stays the default; `dmreplay mn|cn --etcd HOST:PORT --cluster NAME`
 * use this.
 *
 * Transport: etcd v3's JSON gateway (grpc-gateway, etcd 3.4: Debian 12's
 * etcd-server 3.4.23; the API is documented at etcd.io "gRPC gateway"),
 * POST of a JSON body over HTTP/1.1 on a TCP socket of our own, one
 * connection per request ("Connection: close"), keys and values base64 in
 * the JSON, 64-bit integers (lease IDs) as JSON strings. Every request is
 * bounded: connect, send and receive share one deadline (the handle's
 * request timeout, or less when a caller's deadline is nearer). Only the
 * endpoint the user gives is contacted (the tests and scripts: 127.0.0.1).
 *
 * Keys: DMR_ETCD_ROOT "/" CLUSTER "/mn/" K for MN id K (decimal). Value: a
 * JSON object {"id": K, "ip": "A.B.C.D", "port": 1..65535, "mr_size":
 * 64..2^48 (a multiple of 8), "devname": "rxe0", "pid": N, "host": "name"}:
 * id, ip, port and mr_size required (what a CN needs to connect and what
 * it checks of the region), devname, pid and host informative; any other
 * field is refused.
 *
 * Errors (dmr_status_t, message in err naming the endpoint, key and
 * field): DMR_ERR_INVALID a bad endpoint, cluster name or argument;
 * DMR_ERR_TIMEOUT etcd unreachable (connect refused or no answer) within
 * the deadline, or MNs missing at the deadline; DMR_ERR_REMOTE etcd
 * answered with an error (HTTP status and etcd's message); DMR_ERR_PARSE a
 * malformed answer or entry; DMR_ERR_NOMEM.
 */
#ifndef DMR_ROLES_ETCD_H
#define DMR_ROLES_ETCD_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/base/status.h"

#define DMR_ETCD_ROOT "/dmreplay"
/* Default lease TTL of an MN's key, s: a killed MN's key is gone within
 * TTL + etcd's expiry check (500 ms, etcd's lessor) of its last keepalive.
 * etcd raises a TTL below its minimum (1.5 x the election timeout, 1.5 s
 * by default) to that minimum. */
#define DMR_ETCD_DEFAULT_TTL 5.0
/* Default wait of a CN for the MNs it expects (and of an MN for etcd), s. */
#define DMR_ETCD_DEFAULT_WAIT 30.0
/* Bound of one request, s (its connect, send and receive together). */
#define DMR_ETCD_REQUEST_S 2.0
/* The longest cluster name (characters A-Z a-z 0-9 . _ -). */
#define DMR_ETCD_NAME_MAX 64

/* An endpoint: where etcd's client URL listens. */
typedef struct dmr_etcd {
	char endpoint[80]; /* "HOST:PORT" as given, for messages */
	uint32_t addr;	   /* IPv4, network order */
	uint16_t port;	   /* host order */
	double request_s;  /* bound of one request, s (DMR_ETCD_REQUEST_S) */
} dmr_etcd_t;

/*
 * Parse "HOST:PORT" (HOST a dotted IPv4 address or "localhost" =
 * 127.0.0.1; PORT 1..65535) into e; nothing is contacted. DMR_ERR_INVALID
 * naming the text and what is wrong.
 */
dmr_status_t dmr_etcd_open(dmr_etcd_t *e, const char *endpoint, dmr_err_t *err);

/* One key and its value (bytes, NUL-terminated for convenience). */
typedef struct dmr_etcd_kv {
	char *key;
	char *val;
	size_t val_len;
	int64_t lease; /* 0: none */
} dmr_etcd_kv_t;

/* Put key = val (val_len bytes) under lease (0: none). */
dmr_status_t dmr_etcd_put(const dmr_etcd_t *e, const char *key, const char *val, size_t val_len,
			  int64_t lease, dmr_err_t *err);
/* Every key starting with prefix (etcd's range [prefix, prefix + 1)),
 * sorted by key (etcd's order): *kvs (malloc'd, free with
 * dmr_etcd_kvs_free) and *n; none: *kvs NULL, *n 0. */
dmr_status_t dmr_etcd_list(const dmr_etcd_t *e, const char *prefix, dmr_etcd_kv_t **kvs, size_t *n,
			   dmr_err_t *err);
void dmr_etcd_kvs_free(dmr_etcd_kv_t *kvs, size_t n);
/* Delete key (absent: not an error). */
dmr_status_t dmr_etcd_del(const dmr_etcd_t *e, const char *key, dmr_err_t *err);
/* Grant a lease of ttl_s seconds (1..86400, rounded up): *id, and the TTL
 * etcd granted in *granted_s (may be NULL; etcd raises small TTLs). */
dmr_status_t dmr_etcd_lease_grant(const dmr_etcd_t *e, double ttl_s, int64_t *id,
				  int64_t *granted_s, dmr_err_t *err);
/* Renew lease id once: *ttl_s = its TTL again, 0 when etcd no longer has
 * it (expired or revoked: its keys are gone). */
dmr_status_t dmr_etcd_lease_keepalive(const dmr_etcd_t *e, int64_t id, int64_t *ttl_s,
				      dmr_err_t *err);
/* Revoke lease id: its keys are deleted at once. An unknown lease is
 * DMR_ERR_REMOTE (etcd's "requested lease not found"). */
dmr_status_t dmr_etcd_lease_revoke(const dmr_etcd_t *e, int64_t id, dmr_err_t *err);

/* ---- membership ---------------------------------------------------------- */

/* What an MN registers (the value of its key). */
typedef struct dmr_etcd_mn {
	uint32_t id;
	char ip[16];
	uint16_t port;
	uint64_t mr_size; /* bytes */
	char devname[64]; /* "" when not given */
	long long pid;	  /* 0 when not given */
} dmr_etcd_mn_t;

/* A cluster name: 1..DMR_ETCD_NAME_MAX characters of A-Z a-z 0-9 . _ -
 * (no "/": it is one path element of the key). DMR_ERR_INVALID. */
dmr_status_t dmr_etcd_check_name(const char *cluster, dmr_err_t *err);
/* The prefix of a cluster's MN keys, DMR_ETCD_ROOT/CLUSTER/mn/, into buf. */
void dmr_etcd_mn_prefix(const char *cluster, char *buf, size_t len);
/* MN's value as JSON text (malloc'd; jansson, strings escaped). */
char *dmr_etcd_mn_json(const dmr_etcd_mn_t *mn);
/* Parse the entry key = val (val_len bytes) of prefix (the key's tail a
 * decimal MN id) into *mn: DMR_ERR_PARSE naming the key and the field
 * (not JSON, not an object, a missing, unknown or out-of-range field, an
 * "id" other than the key's). */
dmr_status_t dmr_etcd_mn_parse(const char *prefix, const char *key, const char *val, size_t val_len,
			       dmr_etcd_mn_t *mn, dmr_err_t *err);

/* A registration: the key under a lease, kept alive by a thread. */
typedef struct dmr_etcd_reg dmr_etcd_reg_t;

/*
 * Register mn in cluster at e: a lease of ttl_s seconds is granted and
 * DMR_ETCD_ROOT/CLUSTER/mn/ID put under it; a thread renews the lease every
 * ttl / 3 (a renewal that finds the lease gone, e.g. after etcd was
 * unreachable longer than the TTL, grants a new one and puts the key
 * again; each failure and recovery is one line on stderr prefixed pfx).
 * etcd unreachable: retried every 200 ms for wait_s, then
 * DMR_ERR_TIMEOUT naming the endpoint. *reg is the caller's until
 * dmr_etcd_unregister. *granted_s (may be NULL) = the lease's TTL. A
 * SIGINT/SIGTERM (core/base/sig.h dmr_sig_caught) during the wait:
 * DMR_ERR_INTERRUPTED.
 */
dmr_status_t dmr_etcd_register(const dmr_etcd_t *e, const char *cluster, const dmr_etcd_mn_t *mn,
			       double ttl_s, double wait_s, const char *pfx, dmr_etcd_reg_t **reg,
			       int64_t *granted_s, dmr_err_t *err);
/* The number of keepalives the thread sent successfully so far. */
unsigned long dmr_etcd_reg_keepalives(dmr_etcd_reg_t *reg);
/*
 * Stop the keepalive thread and free reg (NULL: nothing). revoke: the
 * lease is revoked (the key is gone at once; a failure to reach etcd is
 * returned, the key then expires with its lease); 0: nothing is sent, the
 * key expires with the lease, as a killed MN's does.
 */
dmr_status_t dmr_etcd_unregister(dmr_etcd_reg_t *reg, int revoke, dmr_err_t *err);

/*
 * Wait until the cluster's MNs ids[0..n) are all registered at e, polling
 * every 200 ms for at most wait_s: out[i] = MN ids[i]'s entry. Entries of
 * other ids are ignored (*extra_p = how many, may be NULL). A malformed
 * entry under the prefix is refused at once (DMR_ERR_PARSE, key and
 * field). At the deadline: etcd never reached, DMR_ERR_TIMEOUT "etcd at
 * ENDPOINT unreachable for S s: ..."; MNs missing, DMR_ERR_TIMEOUT naming
 * the cluster, the prefix, found / expected and the missing ids. A
 * SIGINT/SIGTERM (dmr_sig_caught) during the wait: DMR_ERR_INTERRUPTED.
 */
dmr_status_t dmr_etcd_find_mns(const dmr_etcd_t *e, const char *cluster, const uint32_t *ids,
			       uint32_t n, double wait_s, dmr_etcd_mn_t *out, uint32_t *extra_p,
			       dmr_err_t *err);

#endif /* DMR_ROLES_ETCD_H */
