/*
 * backends/ucx/ucx.c - the ucx backend's objects (ucx.h): the UCP contexts,
 * the loopback memory nodes and their progress thread, the CN workers and
 * their endpoints, timers, registrations, counters, control, the table.
 */
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../core/base/timeps.h"
#include "ucx.h"
#include "ucx_impl.h"

/* How long open() waits for each endpoint's first READ and FAA (wireup
 * included), ps: 10 s, far above a loopback round trip (tens of us). */
#define CONNECT_PS 10000000000000ull
/* The MN thread's sleep on its workers' event fds when idle, ms: bounds how
 * late it sees close()'s stop flag. */
#define MN_SLEEP_MS 50
/* In the sockaddr connection mode (an RDMA transport), how long the MN
 * thread keeps progressing (yielding the CPU between rounds) after its last
 * event before it sleeps on the event fds, ps: 200 ms. There UCX 1.13 does
 * 64-bit atomics in software on the MN's CPU (rxe offers only device ADD and
 * CSWAP; UCP wants the whole set, docs/UCX.md "rc on rxe"), and with the
 * thread sleeping as soon as it was idle bench faa's t_typical on rc_verbs
 * over SoftRoCE in the VM was 8.0-12.4 ms, against 0.1-0.2 ms progressing.
 * The yield leaves the CPU to kernel work (SoftRoCE's responder) when it
 * has some. */
#define MN_SPIN_PS 200000000000ull

/* UCX_TLS as the messages quote it. */
const char *dmr_ucx_tls(void)
{
	const char *t = getenv("UCX_TLS");
	return !t ? "(unset: UCX's choice)" : *t ? t : "\"\" (empty)";
}

/* ---- the memory nodes (loopback) ---------------------------------------- */

static void *mn_thread(void *arg)
{
	ucx_t *u = arg;
	struct pollfd pf[DMR_BE_MAX_MNS];
	for (uint32_t m = 0; m < u->mns; m++)
		pf[m] = (struct pollfd){.fd = u->mn[m].efd, .events = POLLIN};
	uint64_t last = dmr_mono_ps();
	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		int busy = 0;
		for (uint32_t m = 0; m < u->mns; m++)
			while (ucp_worker_progress(u->mn[m].w))
				busy = 1;
		uint64_t now = dmr_mono_ps();
		if (busy)
			last = now;
		if (busy)
			continue;
		if (u->sockaddr && u->spin && now - last < MN_SPIN_PS) {
			/* spinning, but a kernel transport's own work (SoftRoCE's
			 * responder) may need this CPU */
			sched_yield();
			continue;
		}
		/* idle: sleep on the event fds unless an event is pending
		 * (ucp_worker_arm answers UCS_ERR_BUSY) */
		int armed = 1;
		for (uint32_t m = 0; m < u->mns && armed; m++)
			armed = ucp_worker_arm(u->mn[m].w) == UCS_OK;
		if (armed)
			(void)poll(pf, u->mns, MN_SLEEP_MS);
	}
	return NULL;
}

ucs_status_t dmr_ucx_make_ctx(uint64_t features, int shared, ucp_context_h *ctx_p)
{
	ucp_config_t *conf = NULL;
	ucs_status_t st = ucp_config_read(NULL, NULL, &conf);
	if (st != UCS_OK)
		return st;
	ucp_params_t p = {.field_mask =
			      UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
			  .features = features,
			  .mt_workers_shared = shared};
	st = ucp_init(&p, conf, ctx_p);
	ucp_config_release(conf);
	return st;
}

ucs_status_t dmr_ucx_make_worker(ucp_context_h ctx, ucp_worker_h *w_p)
{
	ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SERIALIZED};
	return ucp_worker_create(ctx, &wp, w_p);
}

dmr_status_t dmr_ucx_mn_open(ucp_context_h ctx, ucx_mn_t *n, uint32_t m, uint64_t size,
			     dmr_err_t *err)
{
	n->efd = -1;
	n->sock = -1;
	ucs_status_t st = dmr_ucx_make_worker(ctx, &n->w);
	if (st != UCS_OK)
		return dmr_err_set(err, DMR_ERR_NODEV, "ucx: MN %u: ucp_worker_create: %s", m,
				   ucs_status_string(st));
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: MN %u: cannot map %llu bytes", m,
				   (unsigned long long)size);
	n->mem = mem;
	n->size = size;
	n->base = (uint64_t)(uintptr_t)mem;
	ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
						 UCP_MEM_MAP_PARAM_FIELD_LENGTH,
				   .address = mem,
				   .length = size};
	if ((st = ucp_mem_map(ctx, &mp, &n->memh)) != UCS_OK) {
		n->memh = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: MN %u: ucp_mem_map of %llu bytes: %s (UCX_TLS=%s)", m,
				   (unsigned long long)size, ucs_status_string(st), dmr_ucx_tls());
	}
	if ((st = ucp_rkey_pack(ctx, n->memh, &n->rkey_buf, &n->rkey_len)) != UCS_OK) {
		n->rkey_buf = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV, "ucx: MN %u: ucp_rkey_pack: %s", m,
				   ucs_status_string(st));
	}
	if ((st = ucp_worker_get_address(n->w, &n->addr, &n->addr_len)) != UCS_OK) {
		n->addr = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV, "ucx: MN %u: ucp_worker_get_address: %s", m,
				   ucs_status_string(st));
	}
	if ((st = ucp_worker_get_efd(n->w, &n->efd)) != UCS_OK) {
		n->efd = -1;
		return dmr_err_set(err, DMR_ERR_NODEV, "ucx: MN %u: ucp_worker_get_efd: %s", m,
				   ucs_status_string(st));
	}
	return DMR_OK;
}

void dmr_ucx_mn_close(ucp_context_h ctx, ucx_mn_t *n)
{
	if (n->remote) {
		free(n->dirty);
		free(n->addr);
		free(n->rkey_buf);
		if (n->sock >= 0)
			close(n->sock);
		if (n->mem)
			munmap(n->mem, n->size);
		return;
	}
	if (n->w)
		dmr_ucx_mn_unlisten(n);
	if (n->addr)
		ucp_worker_release_address(n->w, n->addr);
	if (n->rkey_buf)
		ucp_rkey_buffer_release(n->rkey_buf);
	if (n->memh)
		ucp_mem_unmap(ctx, n->memh);
	if (n->w)
		ucp_worker_destroy(n->w);
	if (n->mem)
		munmap(n->mem, n->size);
}

/* ---- the CN workers and their endpoints ------------------------------- */

/* UCP's endpoint error handler (peer failure): the endpoint's cause of
 * failure (its in-flight requests fail on their own). */
static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	(void)ep;
	ucx_ep_t *e = arg;
	/* the next WR fails with this cause, those after it are flushed
	 * (dmr_ucx_issue) */
	if (e->ucp_error == UCS_OK)
		e->ucp_error = st;
}

static dmr_status_t ep_open(ucx_t *u, ucx_worker_t *k, uint32_t m, dmr_err_t *err)
{
	ucx_ep_t *e = &k->eps[m];
	ucx_mn_t *n = &u->mn[m];
	e->worker = k;
	e->mn = m;
	e->base = n->base;
	e->size = n->size;
	e->ring = calloc(DMR_UCX_DEPTH, sizeof(*e->ring));
	if (!e->ring)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: worker %u: out of memory", k->id);
	ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
					    UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
					    UCP_EP_PARAM_FIELD_ERR_HANDLER,
			      .address = n->addr,
			      .err_mode = UCP_ERR_HANDLING_MODE_PEER,
			      .err_handler = {.cb = ep_failed, .arg = e}};
	if (u->sockaddr) {
		/* a UCP client of the MN's listener: UCX's CM carries the
		 * wireup (ucx_cm.c) */
		ep.field_mask &= ~(uint64_t)UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
		ep.field_mask |= UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_FLAGS;
		ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
		ep.sockaddr = (ucs_sock_addr_t){.addr = (const struct sockaddr *)&n->listen_at,
						.addrlen = n->listen_len};
	}
	ucs_status_t st = ucp_ep_create(k->w, &ep, &e->ep);
	if (st == UCS_ERR_UNREACHABLE) {
		/* shared-memory transports (sm: posix, sysv, cma) cannot detect
		 * a peer's failure: without peer error handling they can carry
		 * the endpoint, whose MN lives in this process anyway */
		ep.field_mask &= ~(uint64_t)(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
					     UCP_EP_PARAM_FIELD_ERR_HANDLER);
		st = ucp_ep_create(k->w, &ep, &e->ep);
		e->no_peer_errors = st == UCS_OK;
	}
	if (st != UCS_OK) {
		e->ep = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: worker %u -> MN %u: ucp_ep_create: %s: UCX_TLS=%s names "
				   "no transport that reaches the MN with RMA and 64-bit atomics",
				   k->id, m, ucs_status_string(st), dmr_ucx_tls());
	}
	int timed_out = 0;
	/* a client endpoint learns the MN's transports during its wireup: the
	 * rkey is unpacked for the lanes it then has (ucp_ep_rkey_unpack
	 * unpacks only what the endpoint reaches) */
	if (u->sockaddr && dmr_ucx_wait_wired(k->w, e->ep, CONNECT_PS, &timed_out) != DMR_OK) {
		u->unwired = timed_out;
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: worker %u -> MN %u: the client-server wireup to %s %s "
				   "(UCX_TLS=%s)",
				   k->id, m, getenv("DMR_UCX_LISTEN"),
				   timed_out ? "did not complete in 10 s" : "failed",
				   dmr_ucx_tls());
	}
	if ((st = ucp_ep_rkey_unpack(e->ep, n->rkey_buf, &e->rkey)) != UCS_OK) {
		e->rkey = NULL;
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: worker %u -> MN %u: ucp_ep_rkey_unpack: %s (UCX_TLS=%s)",
				   k->id, m, ucs_status_string(st), dmr_ucx_tls());
	}
	return DMR_OK;
}

static void ep_close(ucx_worker_t *k, ucx_ep_t *e)
{
	if (e->rkey)
		ucp_rkey_destroy(e->rkey);
	if (e->ep) {
		ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
					 .flags = UCP_EP_CLOSE_FLAG_FORCE};
		ucs_status_ptr_t r = ucp_ep_close_nbx(e->ep, &p);
		if (r && !UCS_PTR_IS_ERR(r)) {
			while (ucp_request_check_status(r) == UCS_INPROGRESS)
				ucp_worker_progress(k->w);
			ucp_request_free(r);
		}
	}
	free(e->ring);
}

/* The first READ and FAA (of 0: nothing changes) of every endpoint,
 * waited for: wireup done, both lanes proven, before the run starts. */
static dmr_status_t probe(ucx_t *u, dmr_err_t *err)
{
	for (uint32_t w = 0; w < u->nworkers; w++)
		for (uint32_t m = 0; m < u->mns; m++) {
			/* in the handle: a probe that times out is still UCP's
			 * while close() drains it */
			uint64_t *rd = &u->probe[0], *old = &u->probe[1];
			dmr_wr_t wrs[2] = {{.wr_id = 1,
					    .local = rd,
					    .length = 8,
					    .opcode = DMR_WR_READ,
					    .flags = DMR_WR_SIGNALED},
					   {.wr_id = 2,
					    .local = old,
					    .opcode = DMR_WR_FAA,
					    .flags = DMR_WR_SIGNALED}};
			dmr_status_t s = dmr_ucx_post(&u->be, w, m, wrs, 2, err);
			if (s != DMR_OK)
				return s;
			dmr_wc_t wc[2];
			int got = 0;
			uint64_t end = dmr_mono_ps() + CONNECT_PS;
			while (got < 2 && dmr_mono_ps() < end) {
				int k = dmr_ucx_poll(&u->be, w, wc + got, 2 - got);
				got += k > 0 ? k : 0;
			}
			ucx_ep_t *e = &u->wk[w].eps[m];
			int ok = got == 2 && wc[0].status == DMR_WC_SUCCESS &&
				 wc[1].status == DMR_WC_SUCCESS;
			if (!ok) {
				u->unwired = got < 2;
				return dmr_err_set(
				    err, DMR_ERR_NODEV,
				    "ucx: worker %u -> MN %u: the first READ and FAA %s (%s; "
				    "UCX_TLS=%s)",
				    w, m, got < 2 ? "did not complete in 10 s" : "failed",
				    got < 2 ? "no completion"
				    : e->ucp_error != UCS_OK
					? ucs_status_string(e->ucp_error)
					: dmr_wc_status_string(wc[0].status ? wc[0].status
									    : wc[1].status),
				    dmr_ucx_tls());
			}
		}
	/* the probes are not the run's: counters from zero */
	for (uint32_t w = 0; w < u->nworkers; w++) {
		memset(&u->wk[w].st, 0, sizeof(u->wk[w].st));
		memset(u->wk[w].ms, 0, u->mns * sizeof(*u->wk[w].ms));
	}
	return DMR_OK;
}

/* ---- open / close --------------------------------------------------------- */

/* Progress k until none of its endpoints has a request in UCP's hands,
 * DRAIN_PS at most (close() with WRs in flight: their requests are UCP's
 * until they complete). */
#define DRAIN_PS 2000000000000ull /* 2 s */
static void drain(ucx_t *u, ucx_worker_t *k)
{
	uint64_t end = dmr_mono_ps() + DRAIN_PS;
	for (;;) {
		uint32_t busy = 0;
		for (uint32_t m = 0; k->eps && m < u->mns; m++)
			busy += k->eps[m].inflight;
		if (!busy || dmr_mono_ps() > end)
			return;
		ucp_worker_progress(k->w);
	}
}

static void ucx_close(dmr_be_t *be)
{
	ucx_t *u = (ucx_t *)be;
	if (u->unwired) {
		/* see ucx_t.unwired: the MN thread stopped, UCP's objects and
		 * the handle left to the process's exit */
		if (u->mn_thread_on) {
			__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
			pthread_join(u->mn_thread, NULL);
		}
		return;
	}
	for (uint32_t w = 0; u->wk && w < u->nworkers; w++) {
		ucx_worker_t *k = &u->wk[w];
		if (k->w)
			drain(u, k);
		for (uint32_t m = 0; k->eps && m < u->mns; m++)
			ep_close(k, &k->eps[m]);
		if (k->w)
			ucp_worker_destroy(k->w);
		free(k->eps);
		free(k->ms);
		free(k->tm);
		free(k->mr);
		pthread_mutex_destroy(&k->mu);
	}
	free(u->wk);
	if (u->mn_thread_on) {
		__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
		pthread_join(u->mn_thread, NULL);
	}
	for (uint32_t m = 0; u->mn && m < u->mns; m++)
		dmr_ucx_mn_close(u->mn_ctx, &u->mn[m]);
	free(u->mn);
	if (u->cn_ctx)
		ucp_cleanup(u->cn_ctx);
	if (u->mn_ctx)
		ucp_cleanup(u->mn_ctx);
	free(u);
}

/* Open the MNs: from the MN processes of DMR_UCX_MN (a comma-separated
 * host:port per MN), else in this process with their progress thread. */
static dmr_status_t open_mns(ucx_t *u, const dmr_be_config_t *cfg, dmr_err_t *err)
{
	const char *list = getenv("DMR_UCX_MN");
	dmr_status_t s;
	if (list && *list) {
		uint32_t count = 1;
		for (const char *c = list; *c; c++)
			count += *c == ',';
		if (count != u->mns)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "ucx: DMR_UCX_MN=%s names %u MNs, the run has %u (one "
					   "host:port per MN, comma-separated)",
					   list, count, u->mns);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", list);
		uint32_t m = 0;
		for (char *sv = NULL, *hp = strtok_r(buf, ",", &sv); hp && m < u->mns;
		     hp = strtok_r(NULL, ",", &sv), m++)
			if ((s = dmr_ucx_mn_connect(u, m, hp, cfg->mr_size, err)) != DMR_OK)
				return s;
		if (m != u->mns)
			return dmr_err_set(err, DMR_ERR_INVALID,
					   "ucx: DMR_UCX_MN=%s: an empty host:port", list);
		return DMR_OK;
	}
	for (uint32_t m = 0; m < u->mns; m++) {
		if ((s = dmr_ucx_mn_open(u->mn_ctx, &u->mn[m], m, cfg->mr_size, err)) != DMR_OK)
			return s;
		if (u->sockaddr && (s = dmr_ucx_mn_listen(u, &u->mn[m], m, err)) != DMR_OK)
			return s;
	}
	if (pthread_create(&u->mn_thread, NULL, mn_thread, u) != 0)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: cannot start the MN thread");
	u->mn_thread_on = 1;
	return DMR_OK;
}

static dmr_status_t ucx_open_all(ucx_t *u, const dmr_be_config_t *cfg, dmr_err_t *err)
{
	const char *remote = getenv("DMR_UCX_MN");
	ucs_status_t st = UCS_OK;
	if (!remote || !*remote)
		st = dmr_ucx_make_ctx(UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP, 0,
				      &u->mn_ctx);
	if (st == UCS_OK)
		st = dmr_ucx_make_ctx(UCP_FEATURE_RMA | UCP_FEATURE_AMO64, 1, &u->cn_ctx);
	if (st != UCS_OK)
		return dmr_err_set(err, DMR_ERR_NODEV,
				   "ucx: ucp_init (RMA, 64-bit atomics): %s: UCX_TLS=%s names no "
				   "usable transport",
				   ucs_status_string(st), dmr_ucx_tls());
	u->mn = calloc(u->mns, sizeof(*u->mn));
	u->wk = calloc(u->nworkers, sizeof(*u->wk));
	if (!u->mn || !u->wk)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: out of memory");
	dmr_status_t s = dmr_ucx_cm_mode(u, remote && *remote, err);
	if (s != DMR_OK)
		return s;
	for (uint32_t m = 0; m < u->mns; m++)
		u->mn[m].sock = -1;
	if ((s = open_mns(u, cfg, err)) != DMR_OK)
		return s;
	for (uint32_t w = 0; w < u->nworkers; w++) {
		ucx_worker_t *k = &u->wk[w];
		k->id = w;
		pthread_mutex_init(&k->mu, NULL);
		k->eps = calloc(u->mns, sizeof(*k->eps));
		k->ms = calloc(u->mns, sizeof(*k->ms));
		if (!k->eps || !k->ms)
			return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: out of memory");
		if ((st = dmr_ucx_make_worker(u->cn_ctx, &k->w)) != UCS_OK) {
			k->w = NULL;
			return dmr_err_set(err, DMR_ERR_NODEV,
					   "ucx: worker %u: ucp_worker_create: %s", w,
					   ucs_status_string(st));
		}
		for (uint32_t m = 0; m < u->mns; m++)
			if ((s = ep_open(u, k, m, err)) != DMR_OK)
				return s;
	}
	return probe(u, err);
}

static dmr_status_t ucx_be_open(const dmr_be_config_t *cfg, dmr_be_t **be_p, dmr_err_t *err)
{
	if (cfg->mns == 0 || cfg->mns > DMR_BE_MAX_MNS || cfg->cns == 0 || cfg->workers == 0 ||
	    cfg->mr_size == 0)
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "ucx: needs 1..%u MNs, cns, workers and mr_size > 0 (got %u MNs, "
		    "%u CNs, %u workers, %llu bytes)",
		    DMR_BE_MAX_MNS, cfg->mns, cfg->cns, cfg->workers,
		    (unsigned long long)cfg->mr_size);
	ucx_t *u = calloc(1, sizeof(*u));
	if (!u)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: out of memory");
	u->be.cfg = *cfg;
	u->nworkers = cfg->cns * cfg->workers;
	u->mns = cfg->mns;
	u->t0 = dmr_mono_ps();
	dmr_status_t s = ucx_open_all(u, cfg, err);
	if (s != DMR_OK) {
		ucx_close(&u->be);
		return s;
	}
	extern const dmr_be_ops_t dmr_ucx_ops;
	u->be.ops = &dmr_ucx_ops;
	const char *info = getenv("DMR_UCX_INFO");
	if (info && strcmp(info, "1") == 0) {
		fprintf(stderr,
			"ucx: UCX_TLS=%s; worker 0 -> MN 0 (connection mode %s, peer error "
			"handling %s):\n",
			dmr_ucx_tls(), u->sockaddr ? "sockaddr" : "address",
			u->wk[0].eps[0].no_peer_errors ? "off" : "on");
		ucp_ep_print_info(u->wk[0].eps[0].ep, stderr);
	}
	*be_p = &u->be;
	return DMR_OK;
}

dmr_status_t dmr_ucx_transports(dmr_be_t *be, uint32_t worker, uint32_t mn, char *buf, size_t len,
				dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	if (worker >= u->nworkers || mn >= u->mns)
		return dmr_err_set(err, DMR_ERR_RANGE, "ucx: worker %u / MN %u out of range",
				   worker, mn);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return dmr_err_set(err, DMR_ERR_IO, "ucx: open_memstream failed");
	ucp_ep_print_info(u->wk[worker].eps[mn].ep, f);
	fclose(f);
	snprintf(buf, len, "%s", text ? text : "");
	free(text);
	return DMR_OK;
}

/* ---- the rest of the table ---------------------------------------------- */

static uint64_t ucx_now(dmr_be_t *be, uint32_t worker)
{
	(void)worker;
	return dmr_mono_ps() - ((ucx_t *)be)->t0;
}

static dmr_status_t ucx_timer(dmr_be_t *be, uint32_t worker, uint64_t at, uint64_t wr_id)
{
	ucx_worker_t *k = &((ucx_t *)be)->wk[worker];
	dmr_status_t st = DMR_OK;
	pthread_mutex_lock(&k->mu);
	if (k->ntm == k->captm) {
		uint32_t cap = k->captm ? k->captm * 2 : 64;
		ucx_timer_t *t = realloc(k->tm, sizeof(*t) * cap);
		if (!t)
			st = DMR_ERR_NOMEM;
		else {
			k->tm = t;
			k->captm = cap;
		}
	}
	if (st == DMR_OK) {
		/* after every timer due no later: sorted, FIFO on ties */
		uint32_t lo = 0, hi = k->ntm;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (k->tm[mid].at <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(k->tm + lo + 1, k->tm + lo, (k->ntm - lo) * sizeof(*k->tm));
		k->tm[lo] = (ucx_timer_t){at, wr_id};
		k->ntm++;
	}
	pthread_mutex_unlock(&k->mu);
	return st;
}

static dmr_status_t ucx_mr_reg(dmr_be_t *be, uint32_t worker, void *addr, size_t len,
			       dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	if (worker >= u->nworkers)
		return dmr_err_set(err, DMR_ERR_RANGE, "ucx: mr_reg: worker %u out of range",
				   worker);
	ucx_worker_t *k = &u->wk[worker];
	if (k->nmr == k->capmr) {
		uint32_t cap = k->capmr ? 2 * k->capmr : 16;
		ucx_mr_t *n = realloc(k->mr, cap * sizeof(*n));
		if (!n)
			return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: mr_reg: out of memory");
		k->mr = n;
		k->capmr = cap;
	}
	k->mr[k->nmr++] = (ucx_mr_t){addr, len};
	return DMR_OK;
}

static dmr_status_t ucx_mr_dereg(dmr_be_t *be, uint32_t worker, void *addr, dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	ucx_worker_t *k = worker < u->nworkers ? &u->wk[worker] : NULL;
	for (uint32_t i = 0; k && i < k->nmr; i++)
		if (k->mr[i].addr == addr) {
			k->mr[i] = k->mr[--k->nmr];
			return DMR_OK;
		}
	return dmr_err_set(err, DMR_ERR_INVALID,
			   "ucx: mr_dereg: %p is not registered for worker %u", addr, worker);
}

static void *ucx_mn_memory(dmr_be_t *be, uint32_t mn, uint64_t *len_p)
{
	ucx_t *u = (ucx_t *)be;
	if (mn >= u->mns)
		return NULL;
	if (len_p)
		*len_p = u->mn[mn].size;
	return u->mn[mn].mem;
}

#define LOAD(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)

static void ucx_stats(dmr_be_t *be, dmr_be_stats_t *st)
{
	ucx_t *u = (ucx_t *)be;
	memset(st, 0, sizeof(*st));
	for (uint32_t w = 0; w < u->nworkers; w++) {
		dmr_be_stats_t *s = &u->wk[w].st;
		st->verbs += LOAD(s->verbs);
		st->reads += LOAD(s->reads);
		st->writes += LOAD(s->writes);
		st->cas += LOAD(s->cas);
		st->faa += LOAD(s->faa);
		st->bytes_read += LOAD(s->bytes_read);
		st->bytes_written += LOAD(s->bytes_written);
		st->doorbells += LOAD(s->doorbells);
		st->errors += LOAD(s->errors);
	}
}

/* ROLE (one process holds the whole cluster) and MN_STATS (the counts). */
static dmr_status_t ucx_control(dmr_be_t *be, int op, void *arg, dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	if (op == DMR_BE_CTL_ROLE) {
		*(dmr_be_role_t *)arg = (dmr_be_role_t){
		    .cn = 0, .cns = be->cfg.cns, .first_worker = 0, .workers = u->nworkers};
		return DMR_OK;
	}
	if (op == DMR_BE_CTL_MN_STATS) {
		dmr_be_mn_stats_t *out = arg;
		for (uint32_t m = 0; m < u->mns; m++) {
			dmr_be_mn_stats_t t = {0};
			for (uint32_t w = 0; w < u->nworkers; w++) {
				dmr_be_mn_stats_t *s = &u->wk[w].ms[m];
				t.verbs += LOAD(s->verbs);
				t.reads += LOAD(s->reads);
				t.writes += LOAD(s->writes);
				t.atomics += LOAD(s->atomics);
				t.bytes_read += LOAD(s->bytes_read);
				t.bytes_written += LOAD(s->bytes_written);
			}
			out[m] = t;
		}
		return DMR_OK;
	}
	return dmr_be_ctl_unsupported(be, op, err);
}

/* barrier (one process), progress (threaded), charge (the CPU is real):
 * the registry's stubs. */
const dmr_be_ops_t dmr_ucx_ops = {
    .size = sizeof(dmr_be_ops_t),
    .name = "ucx",
    .caps = 0,
    .open = ucx_be_open,
    .close = ucx_close,
    .mr_reg = ucx_mr_reg,
    .mr_dereg = ucx_mr_dereg,
    .post = dmr_ucx_post,
    .poll = dmr_ucx_poll,
    .now = ucx_now,
    .timer = ucx_timer,
    .barrier = dmr_ucx_barrier,
    .mn_memory = ucx_mn_memory,
    .stats = ucx_stats,
    .control = ucx_control,
};
