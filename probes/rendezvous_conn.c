/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous_conn.c: the probe engine's connections (doc/internals/probe.md,
 * "Who speaks first", "Wire format").
 *
 * Accepting a connection and greeting it first; reading a message on a
 * connection part by part, each part checked as it completes (probes/net.c):
 * job, session and sender in the header, then the credential's uid and seal,
 * then the body's digest.  What the message may say is for its reader
 * (rendezvous_tree.c, rendezvous_up.c).  Also the headers of this node's
 * messages and its join.
 */
#include "config.h"

#include "rendezvous_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void dtprobe__rdv_reject(struct engine *e, const char *where, const struct dtplan_error *err)
{
	e->rejected++;
	if (e->refused[0] == '\0' && strcmp(err->source, "munge") == 0) {
		/* cut to the field: the where first, then as much of the reason */
		size_t n = dtplan__strlcpy(e->refused, where, sizeof(e->refused));

		if (n + 2 < sizeof(e->refused)) {
			memcpy(e->refused + n, ": ", 3);
			dtplan__strlcpy(e->refused + n + 2, err->text, sizeof(e->refused) - n - 2);
		}
	}
	dtplan__log(DTPLAN_LOG_WARNING, "probe: job %u node %u: rejected %s: %s", e->o->job_id,
		    e->self, where, err->text);
}

void dtprobe__rdv_conn_reset_msg(struct conn *c)
{
	free(c->cred);
	free(c->body);
	c->cred = NULL;
	c->body = NULL;
	c->head_got = c->cred_got = c->body_got = 0;
	c->msg_deadline = 0;
}

void dtprobe__rdv_conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	dtprobe__rdv_conn_reset_msg(c);
	dtprobe__link_srv_destroy(c->srv);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->kind = C_FREE;
}

/*
 * Reads what c's fd has of the current message and checks each part as it
 * completes.  1: a whole, checked message is in c (h, body); 0: more to
 * come; -1: rejected (err says why); -2: closed between messages.
 */
int dtprobe__rdv_conn_read(struct engine *e, struct conn *c, struct dtplan_error *err)
{
	for (;;) {
		uint8_t *dst;
		size_t want;
		ssize_t got;

		if (c->head_got < DTPLAN_WIRE_HEADER_LEN) {
			dst = c->head + c->head_got;
			want = DTPLAN_WIRE_HEADER_LEN - c->head_got;
		} else if (c->cred_got < c->h.cred_len) {
			dst = (uint8_t *)c->cred + c->cred_got;
			want = c->h.cred_len - c->cred_got;
		} else {
			dst = c->body + c->body_got;
			want = c->h.body_len - c->body_got;
		}
		if (want == 0)
			goto complete;
		got = recv(c->fd, dst, want, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (got <= 0) {
			if (got == 0 && c->head_got == 0)
				return -2;
			dtplan__error(err, DTPLAN_ERR_PARSE, "probe", 0,
				      "truncated message (%s after %zu header, %zu credential and "
				      "%zu body bytes)",
				      got == 0 ? "connection closed" : strerror(errno), c->head_got,
				      c->cred_got, c->body_got);
			return -1;
		}
		if (c->msg_deadline == 0)
			c->msg_deadline = fmin(dtprobe__rdv_now() + RDV_MSG_S, e->deadline);
		if (c->head_got < DTPLAN_WIRE_HEADER_LEN) {
			c->head_got += (size_t)got;
			if (c->head_got < DTPLAN_WIRE_HEADER_LEN)
				continue;
			if (dtplan_wire_header_decode(c->head, c->head_got, &c->h, err) !=
				    DTPLAN_OK ||
			    dtprobe__msg_check_header(&e->rules, &c->h, err) != DTPLAN_OK)
				return -1;
			c->cred = malloc(c->h.cred_len + 1u);
			if (c->cred == NULL) {
				dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
				return -1;
			}
			continue;
		}
		if (c->cred_got < c->h.cred_len) {
			c->cred_got += (size_t)got;
			if (c->cred_got < c->h.cred_len)
				continue;
			if (dtprobe__msg_check_cred(&e->rules, &c->h, c->cred, c->seal, err) !=
			    DTPLAN_OK)
				return -1;
			/* the body is allocated only for a sender that proved who it is */
			c->body = malloc(c->h.body_len + 1u);
			if (c->body == NULL) {
				dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
				return -1;
			}
			continue;
		}
		c->body_got += (size_t)got;
		if (c->body_got < c->h.body_len)
			continue;
	complete:
		if (c->cred == NULL || c->body == NULL) {
			/* an empty credential or body: allocate what the checks need */
			if (c->cred == NULL && (c->cred = malloc(1)) == NULL)
				return -1;
			if (dtprobe__msg_check_cred(&e->rules, &c->h, c->cred, c->seal, err) !=
			    DTPLAN_OK)
				return -1;
			if (c->body == NULL && (c->body = malloc(1)) == NULL)
				return -1;
		}
		if (dtplan_wire_check_seal(&c->h, c->body, c->seal, sizeof(c->seal), err) !=
		    DTPLAN_OK)
			return -1;
		return 1;
	}
}

struct dtplan_wire_header dtprobe__rdv_header(const struct engine *e, uint8_t type, uint32_t round)
{
	struct dtplan_wire_header h = {0};

	h.version = DTPLAN_WIRE_VERSION;
	h.type = type;
	h.job_id = e->o->job_id;
	h.session = e->o->session;
	h.round = round;
	h.sender = e->self;
	return h;
}

enum dtplan_err dtprobe__rdv_send_join(struct engine *e, int fd, struct dtplan_error *err)
{
	struct dtplan_wire_join j = {e->n, e->my_addr};
	struct dtplan_wire_header h = dtprobe__rdv_header(e, DTPLAN_WIRE_JOIN, 0);
	uint8_t *body = NULL;
	size_t len = 0;
	enum dtplan_err rv;

	rv = dtplan_wire_join_encode(&j, &body, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_send(fd, e->rules.auth, &h, body, len,
				       fmin(dtprobe__rdv_now() + RDV_ACK_S, e->deadline), err);
	free(body);
	return rv;
}

void dtprobe__rdv_accept_all(struct engine *e)
{
	for (;;) {
		struct sockaddr_storage a;
		socklen_t l = sizeof(a);
		int fd = accept4(e->lfd, (struct sockaddr *)&a, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct dtplan_error err = {0};
		struct conn *c = NULL;

		if (fd < 0)
			return;
		for (size_t k = 0; k < e->max_conns && c == NULL; k++)
			if (e->conns[k].kind == C_FREE)
				c = &e->conns[k];
		if (c == NULL) {
			char where[64];

			dtplan__error(&err, DTPLAN_ERR_POLICY, "probe", 0,
				      "%zu connections open already", e->max_conns);
			dtprobe__rdv_reject(e, dtprobe__addr_text(&a, where, sizeof(where)), &err);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->kind = C_NEW;
		c->idle_deadline = dtprobe__rdv_now() + RDV_FIRST_MSG_S;
		dtprobe__sock_tune(fd, 0);
		dtprobe__addr_text(&a, c->where, sizeof(c->where));
		/* this node speaks first: the other sends nothing before it knows
		 * whom it reached (probes/net.c) */
		if (dtprobe__hello_send(fd, &e->rules, e->self, e->port,
					fmin(dtprobe__rdv_now() + RDV_ACK_S, e->deadline),
					&err) != DTPLAN_OK) {
			dtplan__log(DTPLAN_LOG_WARNING, "probe: job %u node %u: %s: %s",
				    e->o->job_id, e->self, c->where, err.text);
			dtprobe__rdv_conn_close(c);
		}
	}
}
