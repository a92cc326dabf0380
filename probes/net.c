/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * net.c: sockets for the probe: listeners on the configured port range,
 * non-blocking connects and reads and writes bounded by deadlines, node
 * addresses, and messages sent and received with their credential
 * (lib/measure/wire.c frames, probes/auth.c credentials).  Every wait here ends at
 * a deadline on CLOCK_MONOTONIC; nothing blocks without one.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double dtplan_probe_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Milliseconds until deadline for poll(), at least 0. */
static int ms_left(double deadline)
{
	double left = deadline - dtplan_probe_clock();

	if (left <= 0)
		return 0;
	return left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
}

int dtprobe__poll_ms(double deadline)
{
	return ms_left(deadline);
}

static int set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return -1;
	return 0;
}

void dtprobe__sock_tune(int fd, int sndbuf)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (sndbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
}

uint16_t dtprobe__port_candidate(uint16_t lo, uint16_t hi, uint32_t seed, unsigned k)
{
	uint32_t span = (uint32_t)hi - lo + 1;

	return (uint16_t)(lo + (seed + k) % span);
}

int dtprobe__listen(const struct sockaddr_storage *at, uint16_t lo, uint16_t hi, uint32_t seed,
		    uint16_t *port, struct dtplan_error *err)
{
	int last = 0;
	unsigned tries = at != NULL ? 1 : DTPLAN__PORT_TRIES;

	if (at == NULL && (lo == 0 || hi < lo)) {
		dtplan__error(err, DTPLAN_ERR_INVAL, "probe", 0, "no port range (probe_ports=)");
		return -1;
	}
	for (unsigned k = 0; k < tries && (at != NULL || k <= (unsigned)(hi - lo)); k++) {
		struct sockaddr_storage a;
		socklen_t len;
		int fd, one = 1;

		memset(&a, 0, sizeof(a));
		if (at != NULL) {
			a = *at;
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;

			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_any;
			s6->sin6_port = htons(dtprobe__port_candidate(lo, hi, seed, k));
		}
		len = a.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					      : sizeof(struct sockaddr_in);
		fd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 && a.ss_family == AF_INET6 && at == NULL) {
			/* no IPv6 here: IPv4 only */
			struct sockaddr_in *s4 = (struct sockaddr_in *)&a;
			uint16_t p = ((struct sockaddr_in6 *)&a)->sin6_port;

			memset(&a, 0, sizeof(a));
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
			s4->sin_port = p;
			len = sizeof(*s4);
			fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		}
		if (fd < 0) {
			last = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (a.ss_family == AF_INET6) {
			int zero = 0;

			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		}
		if (bind(fd, (struct sockaddr *)&a, len) == 0 && listen(fd, 1024) == 0 &&
		    set_flags(fd) == 0) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&a;
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&a;

			*port = ntohs(a.ss_family == AF_INET6 ? s6->sin6_port : s4->sin_port);
			return fd;
		}
		last = errno;
		close(fd);
	}
	if (at != NULL) {
		char where[64];

		dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "cannot listen at %s: %s",
			      dtprobe__addr_text(at, where, sizeof(where)), strerror(last));
	} else {
		char tried[64] = "";
		size_t len = 0;
		unsigned n = hi - lo + 1u < tries ? hi - lo + 1u : tries;

		/* the candidates of this job, as its other nodes dial them */
		for (unsigned k = 0; k < n && len < sizeof(tried); k++)
			len += (size_t)snprintf(tried + len, sizeof(tried) - len, "%s%u",
						k == 0 ? "" : ", ",
						dtprobe__port_candidate(lo, hi, seed, k));
		dtplan__error(err, DTPLAN_ERR_IO, "probe", 0,
			      "cannot listen on %s %s (the job's of probe_ports=%u-%u): %s",
			      n > 1 ? "any of ports" : "port", tried, lo, hi, strerror(last));
	}
	return -1;
}

int dtprobe__connect_start(const struct sockaddr_storage *a)
{
	socklen_t len =
		a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (set_flags(fd) != 0 ||
	    (connect(fd, (const struct sockaddr *)a, len) != 0 && errno != EINPROGRESS)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int dtprobe__connect_done(int fd)
{
	int e = 0;
	socklen_t l = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0)
		return errno;
	return e;
}

int dtprobe__connect(const struct sockaddr_storage *a, double deadline)
{
	int fd = dtprobe__connect_start(a), e;
	struct pollfd p;

	if (fd < 0)
		return -1;
	p.fd = fd;
	p.events = POLLOUT;
	while (poll(&p, 1, ms_left(deadline)) < 0 && errno == EINTR)
		;
	e = (p.revents & (POLLOUT | POLLERR | POLLHUP)) ? dtprobe__connect_done(fd) : ETIMEDOUT;
	if (e != 0) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int dtprobe__write_all(int fd, const void *buf, size_t len, double deadline)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		struct pollfd pf = {fd, POLLOUT, 0};

		if (w > 0) {
			p += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (dtplan_probe_clock() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pf, 1, ms_left(deadline)) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

int dtprobe__read_all(int fd, void *buf, size_t len, double deadline)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t r = recv(fd, p, len, 0);
		struct pollfd pf = {fd, POLLIN, 0};

		if (r > 0) {
			p += r;
			len -= (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = ECONNRESET; /* the peer closed early: truncated */
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (dtplan_probe_clock() >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pf, 1, ms_left(deadline)) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Addresses
 * ---------------------------------------------------------------------- */

enum dtplan_err dtprobe__resolve(const char *host, uint16_t port, struct sockaddr_storage *out,
				 struct dtplan_error *err)
{
	struct addrinfo hints, *res = NULL, *pick = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "probe", 0, "cannot resolve %s: %s",
				     host, gai_strerror(rc));
	/* IPv4 first: what Slurm's NodeAddr usually is */
	for (struct addrinfo *a = res; a != NULL; a = a->ai_next)
		if (pick == NULL || (a->ai_family == AF_INET && pick->ai_family != AF_INET))
			pick = a;
	memset(out, 0, sizeof(*out));
	memcpy(out, pick->ai_addr, pick->ai_addrlen);
	dtprobe__addr_set_port(out, port);
	freeaddrinfo(res);
	return DTPLAN_OK;
}

void dtprobe__addr_set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)a)->sin_port = htons(port);
}

uint16_t dtprobe__addr_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	return 0;
}

void dtprobe__addr_to_wire(const struct sockaddr_storage *a, uint16_t port,
			   struct dtplan_wire_addr *w)
{
	memset(w, 0, sizeof(*w));
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;

		/* an IPv4 client on a dual-stack listener: keep it IPv4 */
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			w->family = 4;
			memcpy(w->addr, &s6->sin6_addr.s6_addr[12], 4);
		} else {
			w->family = 6;
			memcpy(w->addr, &s6->sin6_addr, 16);
		}
	} else if (a->ss_family == AF_INET) {
		w->family = 4;
		memcpy(w->addr, &((const struct sockaddr_in *)a)->sin_addr, 4);
	}
	w->port = port;
}

bool dtprobe__wire_to_addr(const struct dtplan_wire_addr *w, struct sockaddr_storage *a)
{
	memset(a, 0, sizeof(*a));
	if (w->family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)a;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, w->addr, 4);
		s4->sin_port = htons(w->port);
		return true;
	}
	if (w->family == 6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)a;

		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, w->addr, 16);
		s6->sin6_port = htons(w->port);
		return true;
	}
	return false;
}

const char *dtprobe__addr_text(const struct sockaddr_storage *a, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	uint16_t port = 0;

	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)a;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], host, sizeof(host));
		else
			inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	} else if (a->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, host, sizeof(host));
		port = ntohs(((const struct sockaddr_in *)a)->sin_port);
	}
	snprintf(buf, size, "%s:%u", host, port);
	return buf;
}

enum dtplan_err dtprobe__iface_addr(const char *ifname, struct dtplan_wire_addr *w,
				    struct dtplan_error *err)
{
	struct ifaddrs *all = NULL;
	struct sockaddr_storage pick;
	bool found = false;

	if (getifaddrs(&all) != 0)
		return dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "getifaddrs: %s",
				     strerror(errno));
	memset(&pick, 0, sizeof(pick));
	for (struct ifaddrs *i = all; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || strcmp(i->ifa_name, ifname) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET ||
		    (i->ifa_addr->sa_family == AF_INET6 && !found)) {
			memcpy(&pick, i->ifa_addr,
			       i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
								 : sizeof(struct sockaddr_in6));
			if (i->ifa_addr->sa_family == AF_INET6 &&
			    IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)&pick)->sin6_addr))
				continue;
			found = true;
			if (i->ifa_addr->sa_family == AF_INET)
				break;
		}
	}
	freeifaddrs(all);
	if (!found)
		return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "probe", 0,
				     "probe_interface=%s: no such interface with an address here",
				     ifname);
	dtprobe__addr_to_wire(&pick, 0, w);
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * Messages with their credential
 * ---------------------------------------------------------------------- */

enum dtplan_err dtprobe__hello_send(int fd, const struct dtprobe__peer_rules *r, uint32_t self,
				    uint16_t port, double deadline, struct dtplan_error *err)
{
	struct dtplan_wire_join j = {(uint32_t)r->n_nodes, {0}};
	struct dtplan_wire_header h = {0};
	struct sockaddr_storage local;
	socklen_t l = sizeof(local);
	uint8_t *body = NULL;
	size_t len = 0;
	enum dtplan_err rv;

	if (getsockname(fd, (struct sockaddr *)&local, &l) == 0)
		dtprobe__addr_to_wire(&local, port, &j.addr);
	j.addr.port = port;
	h.type = DTPLAN_WIRE_JOIN;
	h.job_id = r->job_id;
	h.session = r->session;
	h.sender = self;
	rv = dtplan_wire_join_encode(&j, &body, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_send(fd, r->auth, &h, body, len, deadline, err);
	free(body);
	return rv;
}

enum dtplan_err dtprobe__hello_check(const struct dtprobe__peer_rules *r,
				     const struct dtplan_wire_header *h, const uint8_t *body,
				     uint32_t node, uint16_t port, struct dtplan_error *err)
{
	struct dtplan_wire_join j;

	if (h->type != DTPLAN_WIRE_JOIN || h->round != 0)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "a %s message where node %u's listener says who it is",
				     dtplan_wire_type_name(h->type), node);
	if (h->sender != node)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "the listener at port %u is node %u's, not node %u's", port,
				     h->sender, node);
	if (dtplan_wire_join_decode(body, h->body_len, &j, err) != DTPLAN_OK)
		return DTPLAN_ERR_POLICY;
	if (j.n_nodes != r->n_nodes)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "node %u counts %u nodes in the job, not %zu", node, j.n_nodes,
				     r->n_nodes);
	/* node's own listener names its port: another process that passes
	 * node's greeting on from elsewhere names another */
	if (j.addr.port != port)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "the listener at port %u speaks for node %u's at port %u",
				     port, node, j.addr.port);
	return DTPLAN_OK;
}

enum dtplan_err dtprobe__msg_send(int fd, struct dtplan_auth *auth,
				  const struct dtplan_wire_header *h, const void *body, size_t len,
				  double deadline, struct dtplan_error *err)
{
	struct dtplan_wire_header hh = *h;
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN], *frame = NULL;
	char *cred = NULL;
	size_t flen = 0;
	enum dtplan_err rv;

	hh.version = DTPLAN_WIRE_VERSION;
	hh.body_len = (uint32_t)len;
	dtplan_wire_seal(&hh, body, seal);
	rv = auth->encode(auth, seal, sizeof(seal), &cred, err);
	if (rv == DTPLAN_OK)
		rv = dtplan_wire_frame_encode(&hh, cred, body, len, &frame, &flen, err);
	if (rv == DTPLAN_OK && dtprobe__write_all(fd, frame, flen, deadline) != 0)
		rv = dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "cannot send a %s message: %s",
				   dtplan_wire_type_name(h->type), strerror(errno));
	free(cred);
	free(frame);
	return rv;
}

enum dtplan_err dtprobe__msg_check_header(const struct dtprobe__peer_rules *r,
					  const struct dtplan_wire_header *h,
					  struct dtplan_error *err)
{
	if (h->job_id != r->job_id)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "a %s message for another job (%u; this is job %u)",
				     dtplan_wire_type_name(h->type), h->job_id, r->job_id);
	if (h->session != r->session)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "a %s message of session %u (this run is session %u)",
				     dtplan_wire_type_name(h->type), h->session, r->session);
	if (h->sender >= r->n_nodes)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				     "a %s message from node %u of a %zu-node job",
				     dtplan_wire_type_name(h->type), h->sender, r->n_nodes);
	return DTPLAN_OK;
}

enum dtplan_err dtprobe__msg_check_cred(const struct dtprobe__peer_rules *r,
					const struct dtplan_wire_header *h, const char *cred,
					uint8_t seal[DTPLAN_WIRE_SEAL_LEN],
					struct dtplan_error *err)
{
	void *payload = NULL;
	size_t plen = 0;
	uid_t uid = (uid_t)-1;
	enum dtplan_err rv;

	rv = r->auth->decode(r->auth, cred, h->cred_len, &payload, &plen, &uid, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (uid != r->uid) {
		rv = dtplan__error(
			err, DTPLAN_ERR_POLICY, "probe", 0,
			"a %s message with a credential of uid %u (only uid %u is taken)",
			dtplan_wire_type_name(h->type), (unsigned)uid, (unsigned)r->uid);
		goto out;
	}
	rv = dtplan_wire_check_seal_fields(h, payload, plen, err);
	if (rv == DTPLAN_OK)
		memcpy(seal, payload, DTPLAN_WIRE_SEAL_LEN);
out:
	free(payload);
	return rv;
}

enum dtplan_err dtprobe__msg_recv(int fd, const struct dtprobe__peer_rules *r, double deadline,
				  struct dtplan_wire_header *h, uint8_t **body,
				  struct dtplan_error *err)
{
	uint8_t head[DTPLAN_WIRE_HEADER_LEN], seal[DTPLAN_WIRE_SEAL_LEN];
	char *cred = NULL;
	enum dtplan_err rv;

	*body = NULL;
	if (dtprobe__read_all(fd, head, sizeof(head), deadline) != 0)
		return dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "no message: %s",
				     errno == ECONNRESET ? "connection closed" : strerror(errno));
	rv = dtplan_wire_header_decode(head, sizeof(head), h, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_check_header(r, h, err);
	if (rv != DTPLAN_OK)
		return rv;
	cred = malloc(h->cred_len + 1u);
	if (cred == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
	if (dtprobe__read_all(fd, cred, h->cred_len, deadline) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, "probe", 0,
				   "truncated %s message (credential): %s",
				   dtplan_wire_type_name(h->type), strerror(errno));
		goto out;
	}
	rv = dtprobe__msg_check_cred(r, h, cred, seal, err);
	if (rv != DTPLAN_OK)
		goto out;
	*body = malloc(h->body_len + 1u);
	if (*body == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
		goto out;
	}
	if (dtprobe__read_all(fd, *body, h->body_len, deadline) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, "probe", 0,
				   "truncated %s message (body): %s",
				   dtplan_wire_type_name(h->type), strerror(errno));
		goto out;
	}
	rv = dtplan_wire_check_seal(h, *body, seal, sizeof(seal), err);
out:
	free(cred);
	if (rv != DTPLAN_OK) {
		free(*body);
		*body = NULL;
	}
	return rv;
}
