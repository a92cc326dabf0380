/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * links.c: one pair's link probe in one round (doc/internals/probe.md,
 * "A pair in a round").  The prober connects, reads and checks the peer's
 * greeting (probes/net.c: nothing goes to a listener that is not the
 * peer's), sends the probe message (with its credential), pings the peer (fixed-size frames the peer
 * echoes: latency), ends the pings, then sends for a bounded time or byte
 * count and half-closes; the peer counts what arrives and answers with a
 * report (with its credential) giving the rate of the steady part of the
 * transfer: the first fifth of the time is left out, so that TCP's slow
 * start and a shaper's initial burst do not count.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PING_MIN 8 /* kind byte, sequence */
#define PING_MAX 65536
#define CHUNK (64 << 10)   /* bulk writes and reads */
#define SNDBUF (256 << 10) /* bounds what is still in flight when sending stops */
#define MAX_SAMPLES 4096   /* arrival samples kept by the peer */
#define SKIP_FRACTION 0.2  /* of the transfer's time, left out at its start */
#define DRAIN_S 0.06       /* after the bulk time, for what is still in flight */

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* The value at fraction q of the sorted v[0..n). */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos);

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

static size_t ping_size(uint32_t bytes)
{
	return bytes < PING_MIN ? PING_MIN : bytes > PING_MAX ? PING_MAX : bytes;
}

/*
 * Pings until count round trips or the window ends: RTTs into rtt[].  No
 * ping starts after `end`, and each one's echo is waited for until `hard`:
 * an echo left in the socket would be read as the peer's report.  -1 when
 * an echo did not come back (the connection is then of no further use).
 */
static ssize_t pings(int fd, const struct dtplan_wire_go *go, double end, double hard, double *rtt)
{
	size_t size = ping_size(go->ping_bytes), n = 0;
	uint8_t out[PING_MAX], in[PING_MAX];

	memset(out, 0, size);
	for (uint32_t i = 0; i < go->ping_count && dtplan_probe_clock() < end; i++) {
		double t0 = dtplan_probe_clock();

		out[0] = DTPLAN__PING;
		memcpy(out + 1, &i, sizeof(i));
		if (dtprobe__write_all(fd, out, size, hard) != 0 ||
		    dtprobe__read_all(fd, in, size, hard) != 0 || memcmp(in, out, size) != 0)
			return -1;
		rtt[n++] = dtplan_probe_clock() - t0;
	}
	return (ssize_t)n;
}

void dtprobe__slot_of(const struct dtplan_wire_go *go, double t_rounds, uint32_t r,
		      struct dtprobe__slot *s)
{
	double slot = go->slot_us * 1e-6;

	s->t0 = t_rounds + (double)(r - 1) * slot;
	s->bulk_at = s->t0 + go->ping_window_us * 1e-6;
	/* what is still in flight when sending stops drains in the allowance */
	s->report_at = s->bulk_at + go->bulk_us * 1e-6 + DRAIN_S;
	s->end = s->t0 + slot;
}

/* Sends for go->bulk_us or go->bulk_bytes, whichever ends first. */
static int bulk(int fd, const struct dtplan_wire_go *go, double deadline)
{
	static uint8_t chunk[CHUNK];
	double end = dtplan_probe_clock() + go->bulk_us * 1e-6;
	uint64_t sent = 0;

	if (end > deadline)
		end = deadline;
	while (sent < go->bulk_bytes && dtplan_probe_clock() < end) {
		uint64_t left = go->bulk_bytes - sent;
		size_t want = left < CHUNK ? (size_t)left : CHUNK;
		ssize_t w = send(fd, chunk, want, MSG_NOSIGNAL);
		struct pollfd p = {fd, POLLOUT, 0};

		if (w > 0) {
			sent += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (poll(&p, 1, dtprobe__poll_ms(end)) < 0 && errno != EINTR)
			return -1;
	}
	return 0;
}

enum dtplan_err dtprobe__link_probe(const struct dtprobe__peer_rules *r, uint32_t self,
				    uint32_t peer, uint32_t round, uint8_t kind,
				    const struct sockaddr_storage *addr,
				    const struct dtplan_wire_go *go,
				    const struct dtprobe__slot *slot,
				    struct dtplan_link_result *out, struct dtplan_error *err)
{
	double deadline = slot->end - 0.01;
	struct dtplan_wire_probe p = {self,           peer,        go->ping_count,
				      go->ping_bytes, go->bulk_us, go->bulk_bytes};
	struct dtplan_wire_header h = {0}, rh;
	struct dtplan_wire_report rep;
	struct dtplan_error hello = {0};
	double *rtt = NULL, now = dtplan_probe_clock();
	uint8_t *body = NULL, end_frame[PING_MAX];
	size_t len = 0, n = 0;
	ssize_t got;
	enum dtplan_err rv;
	char where[64];
	int fd;

	memset(out, 0, sizeof(*out));
	out->from = self;
	out->to = peer;
	out->round = (uint8_t)round;
	if (kind != DTPLAN_ROUND_INTRA)
		out->flags |= DTPLAN_LINK_CROSS;
	if (kind == DTPLAN_ROUND_CONCURRENT)
		out->flags |= DTPLAN_LINK_CONCURRENT;
	dtprobe__addr_text(addr, where, sizeof(where));
	fd = dtprobe__connect(addr, now + 0.25 < deadline ? now + 0.25 : deadline);
	if (fd < 0)
		return dtplan__error(err, DTPLAN_ERR_IO, "probe", 0,
				     "round %u: cannot connect to node %u at %s: %s", round, peer,
				     where, strerror(errno));
	dtprobe__sock_tune(fd, SNDBUF);
	/* the peer's greeting first: nothing goes to a listener that is not it */
	rv = dtprobe__msg_recv(fd, r, now + 0.25 < deadline ? now + 0.25 : deadline, &rh, &body,
			       &hello);
	if (rv == DTPLAN_OK)
		rv = dtprobe__hello_check(r, &rh, body, peer, dtprobe__addr_port(addr), &hello);
	free(body);
	body = NULL;
	if (rv != DTPLAN_OK) {
		rv = dtplan__error(err, rv, "probe", 0, "round %u: node %u at %s: %s", round, peer,
				   where, hello.text);
		goto out;
	}
	h.type = DTPLAN_WIRE_PROBE;
	h.job_id = r->job_id;
	h.session = r->session;
	h.round = round;
	h.sender = self;
	rv = dtplan_wire_probe_encode(&p, &body, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_send(fd, r->auth, &h, body, len, deadline, err);
	free(body);
	body = NULL;
	if (rv != DTPLAN_OK)
		goto out;
	rtt = calloc(go->ping_count + 1u, sizeof(*rtt));
	if (rtt == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
		goto out;
	}
	got = pings(fd, go, fmin(slot->bulk_at, deadline), deadline, rtt);
	if (got < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, "probe", 0,
				   "round %u: node %u at %s did not echo a ping: %s", round, peer,
				   where, strerror(errno));
		goto out;
	}
	n = (size_t)got;
	if (n > 0) {
		qsort(rtt, n, sizeof(*rtt), cmp_double);
		out->samples = (uint16_t)(n > 65535 ? 65535 : n);
		out->latency_s = quantile(rtt, n, 0.5) / 2.0;
		out->latency_spread_s = (quantile(rtt, n, 0.9) - quantile(rtt, n, 0.1)) / 2.0;
	}
	memset(end_frame, 0, ping_size(go->ping_bytes));
	end_frame[0] = DTPLAN__PINGS_END;
	/* every pair of the round starts its bulk transfer at once */
	while ((now = dtplan_probe_clock()) < slot->bulk_at) {
		struct timespec ts = {0, (long)((slot->bulk_at - now) * 1e9)};

		nanosleep(&ts, NULL);
	}
	if (dtprobe__write_all(fd, end_frame, ping_size(go->ping_bytes), deadline) != 0 ||
	    bulk(fd, go, deadline) != 0 || shutdown(fd, SHUT_WR) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, "probe", 0,
				   "round %u: sending to node %u at %s: %s", round, peer, where,
				   strerror(errno));
		goto out;
	}
	rv = dtprobe__msg_recv(fd, r, deadline, &rh, &body, err);
	if (rv != DTPLAN_OK)
		goto out;
	if (rh.type != DTPLAN_WIRE_REPORT || rh.sender != peer || rh.round != round) {
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
				   "round %u: node %u at %s answered with a %s message of node %u "
				   "round %u",
				   round, peer, where, dtplan_wire_type_name(rh.type), rh.sender,
				   rh.round);
		goto out;
	}
	rv = dtplan_wire_report_decode(body, rh.body_len, &rep, err);
	if (rv != DTPLAN_OK)
		goto out;
	out->bandwidth_bytes_per_s = rep.bandwidth_bytes_per_s;
	out->flags |= DTPLAN_LINK_OK;
out:
	free(rtt);
	free(body);
	close(fd);
	return rv;
}

/* ------------------------------------------------------------------------
 * The peer's side
 * ---------------------------------------------------------------------- */

struct dtprobe__link_srv {
	uint32_t round;
	size_t ping;         /* frame size */
	uint32_t pings_left; /* the prober may stop early: PINGS_END says so */
	uint8_t frame[PING_MAX];
	size_t have; /* bytes of the current ping frame */
	bool bulk;
	uint64_t bytes;
	size_t n;      /* samples */
	size_t stride; /* keep every stride-th arrival */
	size_t seen;
	double t[MAX_SAMPLES];
	uint64_t b[MAX_SAMPLES];
	double first, last;
};

struct dtprobe__link_srv *dtprobe__link_srv_create(const struct dtplan_wire_probe *p,
						   uint32_t round)
{
	struct dtprobe__link_srv *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->round = round;
	s->ping = ping_size(p->ping_bytes);
	s->pings_left = p->ping_count;
	s->stride = 1;
	return s;
}

void dtprobe__link_srv_destroy(struct dtprobe__link_srv *s)
{
	free(s);
}

static void sample(struct dtprobe__link_srv *s, double t)
{
	if (s->seen++ % s->stride != 0)
		return;
	if (s->n == MAX_SAMPLES) {
		/* full: keep every other sample, take half as many from now on */
		for (size_t i = 0; i < MAX_SAMPLES / 2; i++) {
			s->t[i] = s->t[2 * i];
			s->b[i] = s->b[2 * i];
		}
		s->n = MAX_SAMPLES / 2;
		s->stride *= 2;
	}
	s->t[s->n] = t;
	s->b[s->n] = s->bytes;
	s->n++;
}

/* Bytes per second after the first SKIP_FRACTION of the transfer's time. */
static double steady_rate(const struct dtprobe__link_srv *s)
{
	double span = s->last - s->first, from = s->first + SKIP_FRACTION * span;
	size_t k = 0;

	if (s->n < 2 || span <= 0)
		return span > 0 ? (double)s->bytes / span : 0.0;
	while (k + 1 < s->n && s->t[k] < from)
		k++;
	if (s->last - s->t[k] <= 0)
		return (double)s->bytes / span;
	return (double)(s->bytes - s->b[k]) / (s->last - s->t[k]);
}

static int send_report(struct dtprobe__link_srv *s, int fd, const struct dtprobe__peer_rules *r,
		       uint32_t self, double deadline, struct dtplan_error *err)
{
	struct dtplan_wire_report rep = {s->bytes, s->last - s->first, steady_rate(s)};
	struct dtplan_wire_header h = {0};
	uint8_t *body = NULL;
	size_t len = 0;
	enum dtplan_err rv;

	h.type = DTPLAN_WIRE_REPORT;
	h.job_id = r->job_id;
	h.session = r->session;
	h.round = s->round;
	h.sender = self;
	rv = dtplan_wire_report_encode(&rep, &body, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_send(fd, r->auth, &h, body, len, deadline, err);
	free(body);
	return rv == DTPLAN_OK ? 1 : -1;
}

int dtprobe__link_srv_finish(struct dtprobe__link_srv *s, int fd,
			     const struct dtprobe__peer_rules *r, uint32_t self, double deadline,
			     struct dtplan_error *err)
{
	if (!s->bulk || s->bytes == 0) {
		dtplan__error(err, DTPLAN_ERR_IO, "probe", 0,
			      "round %u: no bulk transfer arrived before the report was due",
			      s->round);
		return -1;
	}
	return send_report(s, fd, r, self, deadline, err);
}

int dtprobe__link_srv_step(struct dtprobe__link_srv *s, int fd, const struct dtprobe__peer_rules *r,
			   uint32_t self, double deadline, struct dtplan_error *err)
{
	static uint8_t sink[CHUNK];

	for (;;) {
		ssize_t got;

		if (!s->bulk) {
			got = recv(fd, s->frame + s->have, s->ping - s->have, 0);
		} else {
			got = recv(fd, sink, sizeof(sink), 0);
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (got < 0) {
			dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "round %u: %s", s->round,
				      strerror(errno));
			return -1;
		}
		if (got == 0) {
			if (!s->bulk) {
				dtplan__error(err, DTPLAN_ERR_PARSE, "probe", 0,
					      "round %u: the prober closed during its pings",
					      s->round);
				return -1;
			}
			return send_report(s, fd, r, self, deadline, err);
		}
		if (s->bulk) {
			double now = dtplan_probe_clock();

			if (s->bytes == 0)
				s->first = now;
			s->bytes += (uint64_t)got;
			s->last = now;
			sample(s, now);
			continue;
		}
		s->have += (size_t)got;
		if (s->have < s->ping)
			continue;
		s->have = 0;
		if (s->frame[0] == DTPLAN__PINGS_END) {
			s->bulk = true;
			continue;
		}
		if (s->frame[0] != DTPLAN__PING || s->pings_left == 0) {
			dtplan__error(err, DTPLAN_ERR_PARSE, "probe", 0,
				      "round %u: a ping frame that is not one (or one too many)",
				      s->round);
			return -1;
		}
		s->pings_left--;
		if (dtprobe__write_all(fd, s->frame, s->ping, deadline) != 0) {
			dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "round %u: echo: %s",
				      s->round, strerror(errno));
			return -1;
		}
	}
}
