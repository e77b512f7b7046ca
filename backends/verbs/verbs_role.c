/*
 * backends/verbs/verbs_role.c - roles as processes (verbs.h, docs/ROLES.md).
 * CN role: the role setting (dmr_verbs_set_role); the barrier op's START
 * (arrival, CN index 0 loads the region, wait for all: dmr_verbs_role_start)
 * and END (committed delta, done, wait for all, sum of the deltas, final
 * read into the shadow: dmr_verbs_role_end), all through the control page
 * over the control worker's QP. MN role: dmr_verbs_mn_main, the process
 * that serves the region and follows the CNs through the control page until
 * they are done and disconnected.
 */
#include "verbs_impl.h"

#include "../../core/base/sig.h"

#include <stdio.h>
#include <stdlib.h>

#define VB_CHUNK (1u << 20) /* load / read-back WR size */

static const dmr_verbs_role_t *g_role;

void dmr_verbs_set_role(const dmr_verbs_role_t *role)
{
	g_role = role;
}

const dmr_verbs_role_t *dmr_verbs_role_next(void)
{
	return g_role;
}

/* ---- CN role: start and end barriers through the control page ----------- */

/* WRITE or READ [off, off+len) of MN m's region between its shadow and the
 * MN. */
static dmr_status_t role_copy(vb_t *vb, uint32_t m, uint8_t opcode, uint64_t len, const char *what,
			      dmr_err_t *err)
{
	for (uint64_t off = 0; off < len; off += VB_CHUNK) {
		uint32_t n = (uint32_t)(len - off < VB_CHUNK ? len - off : VB_CHUNK);
		dmr_status_t st = dmr_verbs_op_wait(vb, vb->ctlw, m, opcode, vb->shadow[m] + off,
						    off, n, 0, 0, 30000000000ull, what, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* WRITE v into word `off` of MN m's control page. */
static dmr_status_t ctl_write_one(vb_t *vb, uint32_t m, uint32_t off, uint64_t v, const char *what,
				  dmr_err_t *err)
{
	vb->cbuf[0] = v;
	return dmr_verbs_op_wait(vb, vb->ctlw, m, DMR_WR_WRITE, &vb->cbuf[0], vb->rctl[m] + off, 8,
				 0, 0, 10000000000ull, what, err);
}

/* The same word on every MN's control page (each MN process follows the
 * CNs through its own page), MN 0 last: the CNs' barriers read MN 0's
 * page, so a word there means it is on every MN. The first error (naming
 * the MN) is returned. */
static dmr_status_t ctl_write(vb_t *vb, uint32_t off, uint64_t v, const char *what, dmr_err_t *err)
{
	for (uint32_t m = vb->be.cfg.mns; m-- > 0;) {
		dmr_status_t st = ctl_write_one(vb, m, off, v, what, err);
		if (st != DMR_OK)
			return st;
	}
	return DMR_OK;
}

/* Best effort after this CN's run failed: "failed" into its done word on
 * every MN that answers; returns how many did not. */
static uint32_t ctl_tell_failed(vb_t *vb, dmr_err_t *err)
{
	uint32_t bad = 0;
	dmr_err_t e2;
	for (uint32_t m = vb->be.cfg.mns; m-- > 0;)
		if (ctl_write_one(vb, m, CTL_DONE + 8 * vb->role->self, CTL_DONE_FAILED,
				  "end barrier: failed run", bad ? &e2 : err) != DMR_OK)
			bad++;
	return bad;
}

/* READ MN 0's control page (the barriers' page) into cbuf. */
static dmr_status_t ctl_read(vb_t *vb, const char *what, dmr_err_t *err)
{
	return dmr_verbs_op_wait(vb, vb->ctlw, 0, DMR_WR_READ, vb->cbuf, vb->rctl[0], CTL_CANARY, 0,
				 0, 10000000000ull, what, err);
}

static void shadows_zero(vb_t *vb)
{
	for (uint32_t m = 0; m < vb->be.cfg.mns; m++)
		memset(vb->shadow[m], 0, vb->shadow_len);
}

static uint64_t region_len(const vb_t *vb)
{
	uint64_t n = vb->shadow_len;
	if (vb->role->log_base && vb->role->log_base < n)
		n = vb->role->log_base; /* the tables; log rings are not state */
	return n;
}

/* Wait until every CN's word at `base` is non-zero (and, with `loaded`, the
 * region is loaded), or the deadline (vb_now_ns time); names the CNs
 * missing. A CN whose done word says "failed" fails the wait at once, in
 * either barrier (a CN that fails before START tells the others so). */
static dmr_status_t ctl_wait_all(vb_t *vb, uint32_t base, int loaded, uint64_t deadline,
				 const char *what, dmr_err_t *err)
{
	const dmr_verbs_cluster_t *cl = vb->role->cl;
	/* the barrier's whole timeout, for the messages */
	double secs = deadline > vb->bar_t0 ? (deadline - vb->bar_t0) / 1e9 : 0;
	for (;;) {
		dmr_status_t st = ctl_read(vb, what, err);
		if (st != DMR_OK)
			return st;
		char miss[512] = "";
		size_t off = 0;
		uint32_t nmiss = 0;
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!vb->cbuf[(base + 8 * k) / 8]) {
				nmiss++;
				if (off < sizeof(miss))
					off += (size_t)snprintf(
					    miss + off, sizeof(miss) - off, "%sCN %u (%s)",
					    nmiss > 1 ? ", " : "", cl->cn[k].id,
					    cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
			}
		for (uint32_t k = 0; base == CTL_ARRIVE && k < cl->ncn; k++) {
			uint64_t t = vb->cbuf[(base + 8 * k) / 8];
			if (t && t != vb->nworkers)
				return dmr_verbs_fail(
				    vb, err, DMR_ERR_INVALID, -1, 0,
				    "%s: CN %u (%s) runs %llu threads, CN %u (%s, this "
				    "one) %u: every CN must use the same --threads (the "
				    "trace is split by CNs x threads; refused)",
				    what, cl->cn[k].id, cl->cn[k].ip[0] ? cl->cn[k].ip : "?",
				    (unsigned long long)t, cl->cn[vb->role->self].id,
				    cl->cn[vb->role->self].ip[0] ? cl->cn[vb->role->self].ip : "?",
				    vb->nworkers);
		}
		int need_load = loaded && !vb->cbuf[CTL_LOADED / 8];
		char failed[512] = "";
		size_t foff = 0;
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (vb->cbuf[(CTL_DONE + 8 * k) / 8] == CTL_DONE_FAILED &&
			    foff < sizeof(failed))
				foff +=
				    (size_t)snprintf(failed + foff, sizeof(failed) - foff,
						     "%sCN %u (%s)", foff ? ", " : "", cl->cn[k].id,
						     cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
		if (failed[0] && base == CTL_ARRIVE && nmiss)
			/* before the start: say who is missing too (the CN that
			 * failed first may have timed out waiting for them) */
			return dmr_verbs_fail(
			    vb, err, DMR_ERR_REMOTE, -1, 0,
			    "%s: %s reported a failed run before the start; %u of "
			    "%u CNs did not arrive: %s",
			    what, failed, nmiss, cl->ncn, miss);
		if (failed[0])
			return dmr_verbs_fail(
			    vb, err, DMR_ERR_REMOTE, -1, 0,
			    "%s: %s reported a failed run: the final state holds its "
			    "unfinished transactions and is not verified",
			    what, failed);
		if (!nmiss && !need_load)
			return DMR_OK;
		if (vb_now_ns(vb) >= deadline) {
			if (nmiss)
				return dmr_verbs_fail(
				    vb, err, DMR_ERR_TIMEOUT, -1, 0,
				    "%s: %u of %u CNs did not arrive within %.1f s: %s", what,
				    nmiss, cl->ncn, secs, miss);
			return dmr_verbs_fail(
			    vb, err, DMR_ERR_TIMEOUT, -1, 0,
			    "%s: every CN arrived but CN %u (index 0) did not load the "
			    "initial state within %.1f s",
			    what, cl->cn[0].id, secs);
		}
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

/* Arrive; CN index 0 waits for every CN, then loads the region; the others
 * wait for all and the load. */
dmr_status_t dmr_verbs_role_start(vb_t *vb, uint64_t deadline_ns, dmr_err_t *err)
{
	const dmr_verbs_role_t *r = vb->role;
	/* the arrival word is this CN's thread count: every CN checks them
	 * (the trace is split by CNs x threads) */
	dmr_status_t st =
	    ctl_write(vb, CTL_ARRIVE + 8 * r->self, vb->nworkers, "start barrier: arrival", err);
	if (st == DMR_OK && r->self == 0 && r->keep_region) {
		/* the region is the MN process's own: nothing to load */
		st = ctl_write(vb, CTL_LOADED, 1, "start barrier: loaded", err);
	} else if (st == DMR_OK && r->self == 0) {
		/* every CN first (a missing one is named by the deadline, not
		 * after a load that may outlast the MN's own deadline), then the
		 * load the others wait for */
		st = ctl_wait_all(vb, CTL_ARRIVE, 0, deadline_ns, "start barrier", err);
		double t0 = vb_now_ns(vb) / 1e9;
		uint64_t n = region_len(vb);
		uint32_t mns = vb->be.cfg.mns;
		for (uint32_t m = 0; st == DMR_OK && m < mns; m++)
			st = role_copy(vb, m, DMR_WR_WRITE, n, "loading the initial state", err);
		if (st == DMR_OK)
			st = ctl_write(vb, CTL_LOADED, 1, "start barrier: loaded", err);
		if (st == DMR_OK)
			fprintf(stderr,
				"cn %u: loaded the initial state (%llu bytes per MN) into %u MN%s "
				"in %.2f s\n",
				r->cl->cn[r->self].id, (unsigned long long)n, mns,
				mns == 1 ? "" : "s", vb_now_ns(vb) / 1e9 - t0);
	}
	if (st == DMR_OK)
		st = ctl_wait_all(vb, CTL_ARRIVE, 1, deadline_ns, "start barrier", err);
	if (st == DMR_OK)
		fprintf(stderr, "cn %u: start barrier passed: all %u CNs arrived\n",
			r->cl->cn[r->self].id, r->cl->ncn);
	return st;
}

/* After the run: delta, done; wait for all; sum; read the final state. */
dmr_status_t dmr_verbs_role_end(vb_t *vb, const dmr_be_barrier_t *b, uint64_t deadline_ns,
				int64_t *sum_p, dmr_err_t *err)
{
	const dmr_verbs_role_t *r = vb->role;
	if (b->failed) {
		/* tell the others at once (they stop waiting and name this CN);
		 * this CN verifies nothing: the engine does not after a failure */
		uint32_t bad = ctl_tell_failed(vb, err);
		shadows_zero(vb);
		if (!bad)
			fprintf(stderr,
				"cn %u: the run failed: told the other CNs through the "
				"control page\n",
				r->cl->cn[r->self].id);
		else
			fprintf(
			    stderr,
			    "cn %u: the run failed: %u of %u MNs unreachable for the \"failed\" "
			    "word (%s)\n",
			    r->cl->cn[r->self].id, bad, vb->be.cfg.mns, err ? err->msg : "?");
		return bad ? DMR_ERR_REMOTE : DMR_OK;
	}
	dmr_status_t st = ctl_write_one(vb, 0, CTL_XV + 8 * r->self, (uint64_t)b->value,
					"end barrier: committed delta", err);
	if (st == DMR_OK)
		st = ctl_write(vb, CTL_DONE + 8 * r->self, 1, "end barrier: done", err);
	if (st == DMR_OK)
		st = ctl_wait_all(vb, CTL_DONE, 0, deadline_ns, "end barrier", err);
	uint64_t sum = 0; /* two's complement, as the verifier sums */
	uint32_t n = r->cl->ncn;
	if (st == DMR_OK) {
		/* RC order: a CN's delta landed before its "done" word */
		st = dmr_verbs_op_wait(vb, vb->ctlw, 0, DMR_WR_READ, vb->cbuf, vb->rctl[0] + CTL_XV,
				       8 * n, 0, 0, 10000000000ull, "end barrier: committed deltas",
				       err);
		for (uint32_t k = 0; st == DMR_OK && k < n; k++)
			sum += vb->cbuf[k];
	}
	for (uint32_t m = 0; st == DMR_OK && !r->keep_region && m < vb->be.cfg.mns; m++)
		st = role_copy(vb, m, DMR_WR_READ, region_len(vb), "reading the final state", err);
	if (st != DMR_OK) {
		/* never verify a stale image; tell the others (best effort: a dead
		 * MN is named in err, the CNs still waiting stop at once) */
		shadows_zero(vb);
		dmr_err_t e2;
		ctl_tell_failed(vb, &e2);
		fprintf(stderr, "cn %u: error: %s (final state not read; not verified)\n",
			r->cl->cn[r->self].id, err ? err->msg : "?");
		return st;
	}
	fprintf(stderr, "cn %u: committed delta %lld here, %lld over all %u CNs\n",
		r->cl->cn[r->self].id, (long long)b->value, (long long)sum, n);
	*sum_p = (int64_t)sum;
	return DMR_OK;
}

/* ---- CN role: the MN watch during the run ------------------------------- */

/* Period of the watch's READs: a dead MN is named within this plus the QP's
 * retry time (retry_cnt + 1 times 4.096 us x 2^timeout; docs/ROLES.md "A
 * dead MN"). */
#define VB_WATCH_NS 200000000ull

static void *watch_thread(void *arg)
{
	vb_t *vb = arg;
	uint64_t *word = &vb->cbuf[DMR_VERBS_CTL_BYTES / 8 - 1]; /* not used by the barriers */
	while (!atomic_load(&vb->watch_stop)) {
		for (uint32_t m = 0; m < vb->be.cfg.mns; m++) {
			dmr_err_t e;
			uint64_t t0 = vb_now_ns(vb);
			if (dmr_verbs_op_wait(vb, vb->ctlw, m, DMR_WR_READ, word,
					      vb->rctl[m] + CTL_LOADED, 8, 0, 0, 10000000000ull,
					      "MN watch (a READ every 200 ms during the run)",
					      &e) != DMR_OK) {
				snprintf(
				    vb->dead_msg, sizeof(vb->dead_msg),
				    "%.400s: this MN is unreachable (killed or cut off); the "
				    "run stops",
				    e.msg); /* the workers' WRs to this MN, in flight as long as
					     * this READ was, fail in about that time: they name the
					     * transaction (trace line), so give them that long
					     * (at most 5 s) before refusing their posts */
				uint64_t grace = vb_now_ns(vb) - t0;
				for (uint64_t t = 0; t < grace && t < 5000000000ull &&
						     !atomic_load(&vb->watch_stop);
				     t += 10000000ull) {
					struct timespec ts = {0, 10000000};
					nanosleep(&ts, NULL);
				}
				atomic_store_explicit(&vb->dead_mn, m + 1, memory_order_release);
				fprintf(stderr, "cn %u: error: %s\n",
					vb->role->cl->cn[vb->role->self].id, vb->dead_msg);
				return NULL;
			}
		}
		for (uint64_t t = 0; t < VB_WATCH_NS && !atomic_load(&vb->watch_stop);
		     t += 20000000ull) {
			struct timespec ts = {0, 20000000};
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

dmr_status_t dmr_verbs_watch_start(vb_t *vb, dmr_err_t *err)
{
	atomic_store(&vb->watch_stop, 0);
	int e = pthread_create(&vb->watch, NULL, watch_thread, vb);
	if (e)
		return dmr_verbs_fail(vb, err, DMR_ERR_IO, -1, -1, "pthread_create (MN watch): %s",
				      strerror(e));
	vb->watching = 1;
	return DMR_OK;
}

void dmr_verbs_watch_stop(vb_t *vb)
{
	if (!vb->watching)
		return;
	atomic_store(&vb->watch_stop, 1);
	pthread_join(vb->watch, NULL);
	vb->watching = 0;
}

/* ---- MN role: a process that serves its region -------------------------- */

static void names_of(const dmr_verbs_cluster_t *cl, const volatile uint64_t *ctl, uint32_t base,
		     char *buf, size_t len, uint32_t *n_p)
{
	size_t off = 0;
	uint32_t n = 0;
	buf[0] = 0;
	for (uint32_t k = 0; k < cl->ncn; k++)
		if (!__atomic_load_n(&ctl[(base + 8 * k) / 8], __ATOMIC_ACQUIRE)) {
			if (off < len)
				off += (size_t)snprintf(buf + off, len - off, "%sCN %u (%s)",
							n ? ", " : "", cl->cn[k].id,
							cl->cn[k].ip[0] ? cl->cn[k].ip : "?");
			n++;
		}
	*n_p = n;
}

dmr_status_t dmr_verbs_mn_main(const dmr_verbs_role_t *role, dmr_err_t *err)
{
	if (!role || !role->cl || role->self >= role->cl->nmn || role->cl->ncn == 0 ||
	    role->cl->ncn > DMR_VERBS_MAX_NODES)
		return dmr_err_set(err, DMR_ERR_INVALID, "verbs: MN role: bad role");
	const dmr_verbs_cluster_t *cl = role->cl;
	const dmr_verbs_node_t *me = &cl->mn[role->self];
	if (me->mr_size < 64 || (me->mr_size & 7))
		return dmr_err_set(
		    err, DMR_ERR_INVALID,
		    "verbs: MN %u: mr_size %llu must be a multiple of 8, at least 64", me->id,
		    (unsigned long long)me->mr_size);
	int region_cb = 0;
	vb_t *vb = calloc(1, sizeof(*vb));
	if (!vb)
		return dmr_err_set(err, DMR_ERR_NOMEM, "verbs: out of memory");
	vb->be.ops = &dmr_verbs_ops;
	vb->be.cfg = (dmr_be_config_t){.backend = "verbs",
				       .mns = 1,
				       .cns = cl->ncn,
				       .workers = 1,
				       .mr_size = me->mr_size,
				       .device = me->devname,
				       .port = me->ibport,
				       .gid_index = me->gid};
	vb->port = me->ibport > 0 ? me->ibport : 1;
	vb->gid_index = -1;
	for (uint32_t m = 0; m < DMR_BE_MAX_MNS; m++) {
		vb->mn[m].stop_fd = -1;
		pthread_mutex_init(&vb->mn[m].lock, NULL);
	}
	uint16_t lport = me->port ? me->port : cl->port;
	vb->retry_cnt = cl->retry_cnt;
	vb->rnr_retry = cl->rnr_retry;
	vb->timeout = cl->timeout;
	atomic_flag_clear(&vb->failed_logged);
	clock_gettime(CLOCK_MONOTONIC, &vb->t0);
	dmr_status_t st = dmr_verbs_find_device(vb, me->devname, err);
	if (st == DMR_OK)
		st = dmr_verbs_choose_gid(vb, me->gid, me->ip, err);
	if (st != DMR_OK)
		goto out;
	dmr_verbs_clamp_limits(vb);
	vb_mn_t *srv = &vb->mn[0]; /* this process serves one MN: slot 0 */
	srv->idx = role->self;
	srv->port = lport;
	srv->verbose = 1;
	if ((st = dmr_verbs_mn_start(vb, 0, err)) != DMR_OK)
		goto out;
	fprintf(stderr,
		"mn %u: listening on %s:%u (rdma_cm; %s port %d, GID %d, active MTU %u, link "
		"width/speed %u/%u); region %llu bytes + %u control bytes registered (max_mr_size "
		"%llu); waiting for %u CNs (start barrier %.0f s)\n",
		me->id, vb->ip, srv->port, vb->dev, vb->port, vb->gid_index,
		mtu_bytes(vb->pattr.active_mtu), vb->pattr.active_width, vb->pattr.active_speed,
		(unsigned long long)me->mr_size, DMR_VERBS_CTL_BYTES,
		(unsigned long long)vb->dattr.max_mr_size, cl->ncn, role->barrier_s);
	if (role->mn_region) {
		region_cb = 1;
		if ((st = role->mn_region(role->mn_arg, srv->mem, me->mr_size, err)) != DMR_OK)
			goto out;
	}
	const volatile uint64_t *ctl = (const uint64_t *)(void *)((uint8_t *)srv->mem + srv->ctl);
	uint64_t bdeadline = vb_now_ns(vb) + secs_ns(role->barrier_s + 5);
	uint8_t seen[DMR_VERBS_MAX_NODES] = {0}, failed[DMR_VERBS_MAX_NODES] = {0};
	uint32_t nfailed = 0;
	uint32_t narrived = 0;
	int all_arrived = 0, loaded = 0, all_done = 0, mn_err_shown = 0;
	uint64_t done_at = 0;
	for (;;) {
		if (dmr_sig_caught() || (role->stop && *role->stop)) {
			st = dmr_err_set(err, DMR_ERR_INTERRUPTED, "mn %u: interrupted by a signal",
					 me->id);
			break;
		}
		pthread_mutex_lock(&srv->lock);
		uint32_t nconn = srv->nconn, ndisc = srv->ndisc;
		if (srv->st != DMR_OK && !mn_err_shown) {
			mn_err_shown = 1;
			fprintf(stderr, "mn %u: warning: %s\n", me->id, srv->err.msg);
		}
		pthread_mutex_unlock(&srv->lock);
		if (role->service) { /* CNs come and go: no barriers, no end */
			struct timespec ts = {0, 20000000};
			nanosleep(&ts, NULL);
			continue;
		}
		uint64_t now = vb_now_ns(vb);
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!seen[k] &&
			    __atomic_load_n(&ctl[(CTL_ARRIVE + 8 * k) / 8], __ATOMIC_ACQUIRE)) {
				seen[k] = 1;
				narrived++;
				fprintf(stderr, "mn %u: CN %u arrived (%u/%u), %llu threads\n",
					me->id, cl->cn[k].id, narrived, cl->ncn,
					(unsigned long long)ctl[(CTL_ARRIVE + 8 * k) / 8]);
			}
		if (!loaded && ctl[CTL_LOADED / 8]) {
			loaded = 1;
			fprintf(stderr, "mn %u: CN %u loaded the initial state\n", me->id,
				cl->cn[0].id);
		}
		char miss[512];
		uint32_t nmiss;
		if (!all_arrived) {
			if (narrived == cl->ncn) {
				all_arrived = 1;
				fprintf(stderr, "mn %u: start barrier: all %u CNs arrived\n",
					me->id, cl->ncn);
			} else if (now >= bdeadline) {
				names_of(cl, ctl, CTL_ARRIVE, miss, sizeof(miss), &nmiss);
				st =
				    dmr_err_set(err, DMR_ERR_TIMEOUT,
						"mn %u: start barrier: %u of %u CNs did not arrive "
						"within %.0f s: %s",
						me->id, nmiss, cl->ncn, role->barrier_s + 5, miss);
				break;
			}
		}
		names_of(cl, ctl, CTL_DONE, miss, sizeof(miss), &nmiss);
		for (uint32_t k = 0; k < cl->ncn; k++)
			if (!failed[k] && __atomic_load_n(&ctl[(CTL_DONE + 8 * k) / 8],
							  __ATOMIC_ACQUIRE) == CTL_DONE_FAILED) {
				failed[k] = 1;
				nfailed++;
				fprintf(stderr, "mn %u: CN %u reported a failed run\n", me->id,
					cl->cn[k].id);
			}
		if (!all_done && nmiss == 0) {
			all_done = 1;
			done_at = now;
			fprintf(stderr,
				"mn %u: every CN is done; waiting for them to read the final "
				"state and disconnect\n",
				me->id);
		}
		if (all_done && ndisc >= nconn) {
			fprintf(stderr, "mn %u: all %u connections closed; exiting\n", me->id,
				nconn);
			st = nfailed ? dmr_err_set(err, DMR_ERR_REMOTE,
						   "mn %u: %u of %u CNs reported a failed run",
						   me->id, nfailed, cl->ncn)
				     : DMR_OK;
			break;
		}
		if (all_done && now - done_at > secs_ns(role->end_s)) {
			fprintf(stderr,
				"mn %u: warning: %u of %u connections still open %.0f s after "
				"the end; exiting\n",
				me->id, nconn - ndisc, nconn, role->end_s);
			st = DMR_OK;
			break;
		}
		if (all_arrived && !all_done && nconn > 0 && ndisc >= nconn) {
			st = dmr_err_set(
			    err, DMR_ERR_REMOTE,
			    "mn %u: every CN connection closed before the run ended; not "
			    "done: %s",
			    me->id, miss);
			break;
		}
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
out:
	if (region_cb && role->mn_region_end)
		role->mn_region_end(role->mn_arg);
	dmr_verbs_close(&vb->be);
	return st;
}
