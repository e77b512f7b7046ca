/*
 * backends/ucx/ucx_remote.c - the ucx backend across processes (ucx.h
 * "Two processes"): the MN process's server (dmr_ucx_mn_serve), the CN's
 * connection to it (DMR_UCX_MN), and the barrier that moves the MN region
 * between the CN's shadow and the MN.
 *
 * The control connection is a TCP socket (loopback in our tests) that
 * carries one exchange per run: the CN sends a hello (magic, region size),
 * the MN maps a region of that size and answers with its address, length,
 * packed rkey and UCP worker address; the CN then reaches the region over
 * UCX only. The MN's session ends when the CN closes the socket.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/base/timeps.h"
#include "ucx.h"
#include "ucx_impl.h"

#define MAGIC "DMRUCX1"
/* Socket send/receive timeout of the exchange, s: far above a loopback
 * exchange (a region of GiBs is mmap'd lazily, MAP_NORESERVE). */
#define IO_TIMEOUT_S 10
#define CHUNK DMR_UCX_CHUNK
/* The barrier's wait for its WRs, ps: 120 s. */
#define MOVE_PS 120000000000000ull

typedef struct hello {
	char magic[8];
	uint64_t size;
} hello_t;

typedef struct info {
	char magic[8];
	int32_t status; /* 0 = OK, else msg says why */
	uint32_t pad;
	uint64_t size, base, addr_len, rkey_len;
	char msg[512]; /* a dmr_err_t's message */
} info_t;

static int io_all(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t k = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* "host:port" into getaddrinfo's answer (IPv4, TCP). */
static int resolve(const char *hostport, int passive, struct addrinfo **ai_p, char *why,
		   size_t whylen)
{
	char host[256];
	snprintf(host, sizeof(host), "%s", hostport);
	char *colon = strrchr(host, ':');
	if (!colon || colon == host || !colon[1]) {
		snprintf(why, whylen, "not host:port");
		return -1;
	}
	*colon = 0;
	struct addrinfo hints = {
	    .ai_family = AF_INET, .ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0};
	int rc = getaddrinfo(host, colon + 1, &hints, ai_p);
	if (rc)
		snprintf(why, whylen, "%s", gai_strerror(rc));
	return rc ? -1 : 0;
}

/* ---- the CN side --------------------------------------------------------- */

dmr_status_t dmr_ucx_mn_connect(ucx_t *u, uint32_t m, const char *hostport, uint64_t size,
				dmr_err_t *err)
{
	ucx_mn_t *n = &u->mn[m];
	n->remote = 1;
	n->sock = -1;
	n->efd = -1;
	struct addrinfo *ai = NULL;
	char why[128];
	if (resolve(hostport, 0, &ai, why, sizeof(why)) != 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "ucx: DMR_UCX_MN: MN %u at '%s': %s", m,
				   hostport, why);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		int e = errno;
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "ucx: MN %u at %s: cannot connect: %s (is dmreplay-ucx-mn "
				   "running there?)",
				   m, hostport, strerror(e));
	}
	freeaddrinfo(ai);
	n->sock = fd;
	set_timeouts(fd);
	hello_t h = {.magic = MAGIC, .size = size};
	info_t in;
	if (io_all(fd, &h, sizeof(h), 1) || io_all(fd, &in, sizeof(in), 0))
		return dmr_err_set(err, DMR_ERR_REMOTE, "ucx: MN %u at %s: exchange failed: %s", m,
				   hostport, errno ? strerror(errno) : "connection closed");
	in.msg[sizeof(in.msg) - 1] = 0;
	if (memcmp(in.magic, MAGIC, 8) != 0)
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "ucx: MN %u at %s: not a dmreplay-ucx-mn (bad magic)", m,
				   hostport);
	if (in.status)
		return dmr_err_set(err, DMR_ERR_REMOTE, "ucx: MN %u at %s: %s", m, hostport,
				   in.msg);
	if (in.size != size || in.addr_len > (1u << 20) || in.rkey_len > (1u << 20))
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "ucx: MN %u at %s: answered a region of %llu bytes (asked %llu)",
				   m, hostport, (unsigned long long)in.size,
				   (unsigned long long)size);
	n->addr = malloc(in.addr_len ? in.addr_len : 1);
	n->rkey_buf = malloc(in.rkey_len ? in.rkey_len : 1);
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!n->addr || !n->rkey_buf || mem == MAP_FAILED)
		return dmr_err_set(err, DMR_ERR_NOMEM,
				   "ucx: MN %u: cannot map a shadow of %llu bytes", m,
				   (unsigned long long)size);
	n->mem = mem;
	n->size = size;
	n->base = in.base;
	n->dirty = calloc(size / CHUNK / 64 + 1, sizeof(uint64_t));
	if (!n->dirty)
		return dmr_err_set(err, DMR_ERR_NOMEM, "ucx: MN %u: out of memory", m);
	n->addr_len = in.addr_len;
	n->rkey_len = in.rkey_len;
	if (io_all(fd, n->addr, in.addr_len, 0) || io_all(fd, n->rkey_buf, in.rkey_len, 0))
		return dmr_err_set(err, DMR_ERR_REMOTE,
				   "ucx: MN %u at %s: exchange failed reading its address", m,
				   hostport);
	return DMR_OK;
}

/* 1 when the chunk [p, p + len) (page aligned: a DMR_UCX_CHUNK of an
 * mmap'd shadow) holds only zeros. Pages never touched are not resident
 * (mincore(2)) and read as zero without being read: a region of GiBs that
 * the replay loaded a few MiB of is not scanned (nor paged in). */
static int is_zero(uint8_t *p, uint64_t len)
{
	unsigned char vec[DMR_UCX_CHUNK / 4096];
	long pg = sysconf(_SC_PAGESIZE);
	if (pg == 4096 && len <= DMR_UCX_CHUNK && mincore(p, len, vec) == 0) {
		int any = 0;
		for (uint64_t i = 0; i < (len + 4095) / 4096; i++)
			any |= vec[i] & 1;
		if (!any)
			return 1;
	}
	const uint64_t *q = (const uint64_t *)(const void *)p;
	for (uint64_t i = 0; i < len / 8; i++)
		if (q[i])
			return 0;
	for (uint64_t i = len & ~7ull; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Move MN m's region between the shadow and the MN through worker 0
 * (opcode WRITE: shadow -> MN, READ: MN -> shadow); its counters are left
 * as they were (the barrier's traffic is not the run's). */
static dmr_status_t move_region(ucx_t *u, uint32_t m, uint8_t opcode, dmr_err_t *err)
{
	ucx_worker_t *k = &u->wk[0];
	ucx_ep_t *e = &k->eps[m];
	ucx_mn_t *n = &u->mn[m];
	dmr_be_stats_t st = k->st;
	dmr_be_mn_stats_t ms = k->ms[m];
	dmr_status_t s = DMR_OK;
	uint64_t end = dmr_mono_ps() + MOVE_PS;
	for (uint64_t off = 0; off < n->size && s == DMR_OK;) {
		dmr_wr_t wrs[64];
		uint32_t nw = 0;
		for (; nw < 64 && off < n->size;) {
			uint64_t len = n->size - off < CHUNK ? n->size - off : CHUNK;
			uint64_t c = off / CHUNK;
			/* START: the MN's fresh region is zero, a zero chunk
			 * stays as it is; END: only chunks a WRITE or an atomic
			 * of this process may have changed */
			if (opcode == DMR_WR_WRITE ? is_zero(n->mem + off, len)
						   : !(n->dirty[c / 64] >> (c % 64) & 1)) {
				off += len;
				continue;
			}
			wrs[nw] = (dmr_wr_t){.wr_id = off,
					     .local = n->mem + off,
					     .remote = off,
					     .length = (uint32_t)len,
					     .opcode = opcode};
			off += len;
			nw++;
		}
		if (!nw)
			break;
		wrs[nw - 1].flags = DMR_WR_SIGNALED;
		if ((s = dmr_ucx_post(&u->be, 0, m, wrs, nw, err)) != DMR_OK)
			break;
		dmr_wc_t wc;
		int got = 0;
		while (!got && dmr_mono_ps() < end) {
			ucp_worker_progress(k->w);
			got = dmr_ucx_reap(e, &wc, 1);
		}
		if (!got || wc.status != DMR_WC_SUCCESS)
			s = dmr_err_set(err, DMR_ERR_REMOTE,
					"ucx: barrier: %s of MN %u's region at offset %llu: %s",
					opcode == DMR_WR_WRITE ? "writing" : "reading", m,
					(unsigned long long)wc.wr_id,
					got ? dmr_wc_status_string(wc.status)
					    : "no completion in 120 s");
	}
	k->st = st;
	k->ms[m] = ms;
	return s;
}

dmr_status_t dmr_ucx_barrier(dmr_be_t *be, const dmr_be_barrier_t *b, int64_t *sum_p,
			     dmr_err_t *err)
{
	ucx_t *u = (ucx_t *)be;
	if (b->phase != DMR_BE_BARRIER_START && b->phase != DMR_BE_BARRIER_END)
		return dmr_err_set(err, DMR_ERR_INVALID, "ucx: barrier phase %u unknown", b->phase);
	if (b->phase == DMR_BE_BARRIER_END && b->failed)
		return DMR_OK;
	for (uint32_t m = 0; m < u->mns; m++) {
		if (!u->mn[m].remote)
			continue;
		dmr_status_t s = move_region(
		    u, m, b->phase == DMR_BE_BARRIER_START ? DMR_WR_WRITE : DMR_WR_READ, err);
		if (s != DMR_OK)
			return s;
	}
	if (b->phase == DMR_BE_BARRIER_END)
		*sum_p = b->value;
	return DMR_OK;
}

/* ---- the MN process ------------------------------------------------------ */

/* One CN's session on connection fd: hello, region, answer, progress until
 * the CN closes the connection. */
static dmr_status_t serve_one(ucp_context_h ctx, int fd, FILE *log, dmr_err_t *err)
{
	set_timeouts(fd);
	hello_t h;
	info_t in = {.magic = MAGIC};
	if (io_all(fd, &h, sizeof(h), 0) || memcmp(h.magic, MAGIC, 8) != 0)
		return dmr_err_set(err, DMR_ERR_REMOTE, "ucx-mn: a connection without a hello");
	ucx_mn_t n;
	memset(&n, 0, sizeof(n));
	dmr_err_t e2;
	dmr_status_t s = h.size ? dmr_ucx_mn_open(ctx, &n, 0, h.size, &e2)
				: dmr_err_set(&e2, DMR_ERR_INVALID, "ucx-mn: a region of 0 bytes");
	if (s != DMR_OK) {
		in.status = 1;
		snprintf(in.msg, sizeof(in.msg), "%s", e2.msg);
		(void)io_all(fd, &in, sizeof(in), 1);
		dmr_ucx_mn_close(ctx, &n);
		return dmr_err_set(err, s, "%s", e2.msg);
	}
	in.size = n.size;
	in.base = n.base;
	in.addr_len = n.addr_len;
	in.rkey_len = n.rkey_len;
	if (io_all(fd, &in, sizeof(in), 1) || io_all(fd, n.addr, n.addr_len, 1) ||
	    io_all(fd, n.rkey_buf, n.rkey_len, 1)) {
		dmr_ucx_mn_close(ctx, &n);
		return dmr_err_set(err, DMR_ERR_REMOTE, "ucx-mn: the CN left during the exchange");
	}
	if (log)
		fprintf(log, "ucx-mn: serving a region of %llu bytes\n",
			(unsigned long long)n.size);
	struct pollfd pf[2] = {{.fd = n.efd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
	for (;;) {
		while (ucp_worker_progress(n.w))
			;
		if (ucp_worker_arm(n.w) != UCS_OK)
			continue;
		if (poll(pf, 2, 100) > 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			char c;
			if (recv(fd, &c, 1, MSG_DONTWAIT) <= 0)
				break; /* the CN closed its control connection */
		}
	}
	for (int i = 0; i < 1000 && ucp_worker_progress(n.w); i++)
		;
	dmr_ucx_mn_close(ctx, &n);
	if (log)
		fprintf(log, "ucx-mn: session ended\n");
	return DMR_OK;
}

dmr_status_t dmr_ucx_mn_serve(const char *hostport, int once, FILE *log, dmr_err_t *err)
{
	struct addrinfo *ai = NULL;
	char why[128];
	if (resolve(hostport, 1, &ai, why, sizeof(why)) != 0)
		return dmr_err_set(err, DMR_ERR_INVALID, "ucx-mn: --listen '%s': %s", hostport,
				   why);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	if (ls >= 0)
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 || listen(ls, 4) != 0) {
		int e = errno;
		freeaddrinfo(ai);
		if (ls >= 0)
			close(ls);
		return dmr_err_set(err, DMR_ERR_IO, "ucx-mn: cannot listen on %s: %s", hostport,
				   strerror(e));
	}
	freeaddrinfo(ai);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	getsockname(ls, (struct sockaddr *)&sa, &sl);
	ucp_context_h ctx = NULL;
	ucs_status_t st =
	    dmr_ucx_make_ctx(UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP, 0, &ctx);
	if (st != UCS_OK) {
		close(ls);
		return dmr_err_set(
		    err, DMR_ERR_NODEV,
		    "ucx-mn: ucp_init (RMA, 64-bit atomics): %s: UCX_TLS=%s names no "
		    "usable transport",
		    ucs_status_string(st), dmr_ucx_tls());
	}
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
	printf("ucx-mn: listening on %s:%u\n", ip, ntohs(sa.sin_port));
	fflush(stdout);
	dmr_status_t s = DMR_OK;
	do {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			s = dmr_err_set(err, DMR_ERR_IO, "ucx-mn: accept: %s", strerror(errno));
			break;
		}
		dmr_err_t e;
		dmr_status_t r = serve_one(ctx, fd, log, &e);
		close(fd);
		if (r != DMR_OK && log)
			fprintf(log, "%s\n", e.msg);
	} while (!once);
	ucp_cleanup(ctx);
	close(ls);
	return s;
}
