/*
 * replay/tools/bench_remote.c - `dmreplay bench` on two hosts (issue 16),
 * as perftest runs: the server holds the MR (an MN process:
 * dmr_verbs_mn_main), the client posts to it over rdma_cm (a CN role of the
 * verbs backend). Both are given the same test options (as perftest's two
 * sides are); the MR both compute from them must agree (the client checks
 * the server's region holds what it needs: the CN role's need_bytes).
 */
#include "bench_impl.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "../../core/base/sig.h"
#include "../roles.h"
#include "../../backends/verbs/verbs.h"

#ifdef DMR_HAVE_VERBS
/* One MN (the server) and one CN (the client), a cluster config's defaults
 * (dmr_cluster_defaults) but retry_cnt 6: rxe retries forever with 7, and
 * a client whose server died must fail in bounded time (docs/ROLES.md "A
 * dead MN"). */
static void two_node_cluster(dmr_verbs_cluster_t *cl, const dmr_bench_target_t *t,
			     const char *server_ip, uint16_t port, uint64_t mr_size, int server)
{
	dmr_cluster_defaults(cl);
	cl->nmn = cl->ncn = 1;
	cl->retry_cnt = 6;
	cl->port = port;
	snprintf(cl->shape, sizeof(cl->shape), "dmreplay");
	dmr_verbs_node_t *me = server ? &cl->mn[0] : &cl->cn[0];
	snprintf(me->devname, sizeof(me->devname), "%s", t->device ? t->device : "");
	me->ibport = t->port ? t->port : 1;
	me->gid = t->gid_index;
	cl->mn[0].mr_size = mr_size;
	if (!server)
		snprintf(cl->mn[0].ip, sizeof(cl->mn[0].ip), "%s", server_ip);
}
#endif

dmr_status_t dmr_bench_resolve(const char *host, char *ip, size_t len, dmr_err_t *err)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "destination '%s': not an IPv4 address or a host name with one "
				   "(%s)",
				   host, rc ? gai_strerror(rc) : "no address");
	const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)res->ai_addr;
	inet_ntop(AF_INET, &sin->sin_addr, ip, (socklen_t)len);
	freeaddrinfo(res);
	return DMR_OK;
}

int dmr_bench_serve(const dmr_bench_target_t *t, uint16_t port, uint64_t mr_size)
{
#ifdef DMR_HAVE_VERBS
	static dmr_verbs_cluster_t cl;
	two_node_cluster(&cl, t, NULL, port, mr_size, 1);
	dmr_verbs_role_t role = {.cl = &cl, .self = 0, .barrier_s = 600, .end_s = 600};
	dmr_err_t err = {{0}};
	fprintf(stderr,
		"dmreplay bench: server: %llu-byte MR on device %s port %d, rdma_cm port %u; "
		"waiting for the client (start it with the same options and this host as its "
		"destination)\n",
		(unsigned long long)mr_size, t->device ? t->device : "0", t->port ? t->port : 1,
		port);
	dmr_sig_install(NULL);
	dmr_status_t st = dmr_verbs_mn_main(&role, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay bench: server: %s\n", err.msg);
		/* no such device / port / GID: bad input, as for a client */
		if (st == DMR_ERR_NODEV || st == DMR_ERR_RANGE || st == DMR_ERR_INVALID)
			return 2;
		return st == DMR_ERR_INTERRUPTED ? 130 : 1;
	}
	fprintf(stderr, "dmreplay bench: server: the client finished and disconnected\n");
	return 0;
#else
	(void)t;
	(void)port;
	(void)mr_size;
	fprintf(stderr, "dmreplay bench: -Z/--server: built without the verbs backend\n");
	return 2;
#endif
}

#ifdef DMR_HAVE_VERBS
static dmr_verbs_cluster_t client_cl;
static dmr_verbs_role_t client_role;
#endif

dmr_status_t dmr_bench_client_role(const dmr_bench_target_t *t, const char *server_ip,
				   uint16_t port, uint64_t mr_size, dmr_err_t *err)
{
#ifdef DMR_HAVE_VERBS
	two_node_cluster(&client_cl, t, server_ip, port, mr_size, 0);
	client_role = (dmr_verbs_role_t){.cl = &client_cl,
					 .self = 0,
					 .first_worker = 0,
					 .need_bytes = mr_size,
					 .keep_region = 1,
					 .barrier_s = 60,
					 .end_s = 60};
	dmr_verbs_set_role(&client_role);
	(void)err;
	return DMR_OK;
#else
	(void)t;
	(void)server_ip;
	(void)port;
	(void)mr_size;
	return dmr_err_set(err, DMR_ERR_UNSUPPORTED,
			   "a destination: built without the verbs backend");
#endif
}

void dmr_bench_client_done(void)
{
#ifdef DMR_HAVE_VERBS
	dmr_verbs_set_role(NULL);
#endif
}
