/*
 * backends/ucx/ucx_cm.c - the ucx backend's client-server connection mode
 * (ucx.h "Connection modes"; docs/UCX.md "rc on rxe"): each loopback MN's
 * UCP listener on a socket address, the endpoints it accepts, and the CN
 * side's wait for a client endpoint's wireup. UCX's CM component (rdmacm
 * for an RDMA device's IP address, tcp sockets otherwise) carries the
 * wireup, so a transport that connects endpoint to endpoint (rc_verbs) needs
 * no auxiliary UD lane: with Debian 12's UCX 1.13 on SoftRoCE the UD
 * datagrams of the address mode's wireup were never acknowledged.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../../core/base/timeps.h"
#include "ucx_impl.h"

/* The transport names of UCX 1.13 (ucx_info -d, docs "UCX_TLS") that need
 * an RDMA device: an UCX_TLS naming one of them (without '^') selects the
 * sockaddr mode under DMR_UCX_CONNECT=auto. */
static const char *const rdma_tls[] = {"rc",	   "rc_v", "rc_verbs", "rc_x", "rc_mlx5",
				       "dc",	   "dc_x", "dc_mlx5",  "ud",   "ud_v",
				       "ud_verbs", "ud_x", "ud_mlx5",  "ib",   "mlx5"};

static int names_rdma(const char *tls)
{
	if (!tls || !*tls || *tls == '^')
		return 0;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", tls);
	for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
		/* "rc_verbs:aux" style qualifiers: the name before ':' */
		t[strcspn(t, ":")] = 0;
		for (size_t i = 0; i < sizeof(rdma_tls) / sizeof(*rdma_tls); i++)
			if (strcmp(t, rdma_tls[i]) == 0)
				return 1;
	}
	return 0;
}

dmr_status_t dmr_ucx_cm_mode(ucx_t *u, int remote, dmr_err_t *err)
{
	const char *mode = getenv("DMR_UCX_CONNECT");
	u->spin = names_rdma(getenv("UCX_TLS"));
	if (!mode || !*mode || strcmp(mode, "auto") == 0)
		u->sockaddr = u->spin;
	else if (strcmp(mode, "address") == 0)
		u->sockaddr = 0;
	else if (strcmp(mode, "sockaddr") == 0)
		u->sockaddr = 1;
	else
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "ucx: DMR_UCX_CONNECT=%s: not auto, address or sockaddr", mode);
	if (!u->sockaddr)
		return DMR_OK;
	const char *why = mode && *mode && strcmp(mode, "auto") != 0 ? "DMR_UCX_CONNECT=sockaddr"
								     : "UCX_TLS names an RDMA "
								       "transport: the sockaddr "
								       "connection mode";
	if (remote)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "ucx: %s is loopback-only; with DMR_UCX_MN set "
				   "DMR_UCX_CONNECT=address (UCX_TLS=%s)",
				   why, dmr_ucx_tls());
	const char *ip = getenv("DMR_UCX_LISTEN");
	if (!ip || !*ip)
		return dmr_err_set(err, DMR_ERR_INVALID,
				   "ucx: %s needs DMR_UCX_LISTEN=IP, the address the MNs listen on "
				   "(the RDMA device's netdev address; UCX_TLS=%s)",
				   why, dmr_ucx_tls());
	/* IPv4 only: UCX 1.13's tcp connection manager overflows a buffer
	 * formatting an IPv6 peer (ASan: inet_ntop <- ucs_sockaddr_str <-
	 * uct_tcp_cm_conn_start, then a double free; a fresh-user trial's
	 * DMR_UCX_LISTEN=::1 aborted the run) */
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICHOST, .ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(ip, "0", &hints, &ai);
	if (rc != 0 || ai->ai_addrlen > sizeof(u->listen_at)) {
		if (ai)
			freeaddrinfo(ai);
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "ucx: DMR_UCX_LISTEN=%s: not a numeric IPv4 address (%s; IPv6 is "
		    "refused: UCX 1.13's tcp connection manager mishandles it)",
		    ip, rc ? gai_strerror(rc) : "too long");
	}
	memcpy(&u->listen_at, ai->ai_addr, ai->ai_addrlen);
	u->listen_len = (socklen_t)ai->ai_addrlen;
	freeaddrinfo(ai);
	return DMR_OK;
}

/* ---- the MN side ------------------------------------------------------------ */

/* A server endpoint's peer failed (its CN endpoint closed): nothing to do,
 * the MN's close() closes it. */
static void sep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	(void)arg;
	(void)ep;
	(void)st;
}

/* The listener's connection handler, on the MN's progress thread: accept
 * the request into an endpoint of the MN's worker, kept in n->sep. */
static void on_conn(ucp_conn_request_h req, void *arg)
{
	ucx_mn_t *n = arg;
	if (n->nsep == n->capsep) {
		uint32_t cap = n->capsep ? 2 * n->capsep : 16;
		ucp_ep_h *s = realloc(n->sep, cap * sizeof(*s));
		if (!s) {
			ucp_listener_reject(n->listener, req);
			return;
		}
		n->sep = s;
		n->capsep = cap;
	}
	ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST |
					   UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
					   UCP_EP_PARAM_FIELD_ERR_HANDLER,
			     .conn_request = req,
			     .err_mode = UCP_ERR_HANDLING_MODE_PEER,
			     .err_handler = {.cb = sep_failed, .arg = n}};
	ucp_ep_h ep;
	if (ucp_ep_create(n->w, &p, &ep) == UCS_OK)
		n->sep[n->nsep++] = ep;
}

dmr_status_t dmr_ucx_mn_listen(ucx_t *u, ucx_mn_t *n, uint32_t m, dmr_err_t *err)
{
	ucp_listener_params_t lp = {
	    .field_mask =
		UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
	    .sockaddr = {.addr = (const struct sockaddr *)&u->listen_at, .addrlen = u->listen_len},
	    .conn_handler = {.cb = on_conn, .arg = n}};
	ucs_status_t st = ucp_listener_create(n->w, &lp, &n->listener);
	if (st != UCS_OK) {
		n->listener = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: MN %u: ucp_listener_create on DMR_UCX_LISTEN=%s: %s "
				   "(UCX_TLS=%s)",
				   m, getenv("DMR_UCX_LISTEN"), ucs_status_string(st),
				   dmr_ucx_tls());
	}
	ucp_listener_attr_t la = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
	if ((st = ucp_listener_query(n->listener, &la)) != UCS_OK)
		return dmr_err_set(err, DMR_ERR_NODEV, "ucx: MN %u: ucp_listener_query: %s", m,
				   ucs_status_string(st));
	memcpy(&n->listen_at, &la.sockaddr, sizeof(n->listen_at));
	n->listen_len = u->listen_len;
	return DMR_OK;
}

void dmr_ucx_mn_unlisten(ucx_mn_t *n)
{
	if (n->listener)
		ucp_listener_destroy(n->listener);
	n->listener = NULL;
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_EP_CLOSE_FLAG_FORCE};
	for (uint32_t i = 0; i < n->nsep; i++) {
		ucs_status_ptr_t r = ucp_ep_close_nbx(n->sep[i], &p);
		if (r && !UCS_PTR_IS_ERR(r)) {
			while (ucp_request_check_status(r) == UCS_INPROGRESS)
				ucp_worker_progress(n->w);
			ucp_request_free(r);
		}
	}
	free(n->sep);
	n->sep = NULL;
	n->nsep = n->capsep = 0;
}

/* ---- the CN side ------------------------------------------------------------ */

dmr_status_t dmr_ucx_wait_wired(ucp_worker_h w, ucp_ep_h ep, uint64_t ps, int *timed_out)
{
	*timed_out = 0;
	ucp_request_param_t p = {0};
	ucs_status_ptr_t r = ucp_ep_flush_nbx(ep, &p);
	if (r == NULL)
		return DMR_OK;
	if (UCS_PTR_IS_ERR(r))
		return DMR_ERR_NODEV;
	uint64_t end = dmr_mono_ps() + ps;
	ucs_status_t st;
	while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS && dmr_mono_ps() < end)
		ucp_worker_progress(w);
	if (st == UCS_INPROGRESS) {
		/* still UCP's: left to the process's exit (ucx_t.unwired) */
		*timed_out = 1;
		return DMR_ERR_NODEV;
	}
	ucp_request_free(r);
	return st == UCS_OK ? DMR_OK : DMR_ERR_NODEV;
}
