/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous_up.c: the probe engine's uplink, a node's connection to its
 * parent in the fan-in tree (doc/internals/probe.md, step 3, "Who speaks
 * first").
 *
 * Connecting to the parent's port candidates in turn, checking its greeting
 * before this node says anything, then its join; when the parent does not
 * answer in time, the parent's parent stands in, and so on to the leader.
 * What the parent then sends is the go: this node's partners and its
 * subtree's, forwarded down (rendezvous_lead.c).
 */
#include "config.h"

#include "rendezvous_int.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* ------------------------------------------------------------------------
 * The go
 * ---------------------------------------------------------------------- */

/* The go from the parent: this node's partners and the subtree's. */
static int on_go(struct engine *e, const uint8_t *body, size_t len, struct dtplan_error *err)
{
	struct dtplan_wire_go g;
	double t = dtprobe__rdv_now();
	bool found = false;

	if (e->have_go)
		return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0, "a second schedule");
	if (dtplan_wire_go_decode(body, len, &g, err) != DTPLAN_OK)
		return -1;
	for (size_t i = 0; i < g.n_assign; i++) {
		if (!dtplan_probe_tree_contains(e->self, g.assign[i].node, e->fanout)) {
			dtplan_wire_go_fini(&g);
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "a schedule for node %u, not in this subtree",
					     g.assign[i].node);
		}
		if (g.assign[i].node == e->self) {
			e->mine = g.assign[i];
			found = true;
		}
	}
	if (!found) {
		memset(&e->mine, 0, sizeof(e->mine));
		for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++)
			e->mine.peer[r] = -1;
		e->mine.node = e->self;
	}
	e->go = g;
	e->go.assign = NULL;
	e->go.n_assign = 0;
	e->have_go = true;
	e->t_rounds = t + g.delay_us * 1e-6;
	e->t_end = e->t_rounds + (double)g.n_rounds * g.slot_us * 1e-6;
	e->res_deadline = fmin(e->t_end + RDV_RES_MARGIN_S +
				       RDV_RES_MARGIN_LEVEL_S * (double)(e->depth - e->my_depth),
			       e->deadline);
	dtprobe__rdv_forward_go(e, g.assign, g.n_assign, t);
	free(g.assign);
	return 0;
}

/* ------------------------------------------------------------------------
 * The uplink
 * ---------------------------------------------------------------------- */

void dtprobe__rdv_up_fail(struct engine *e, const char *why)
{
	struct uplink *u = &e->up;

	dtplan__log(DTPLAN_LOG_DEBUG, "probe: node %u: node %u (port candidate %u): %s", e->self,
		    u->target, u->cand, why);
	dtprobe__rdv_conn_close(&u->rx);
	u->state = U_IDLE;
	u->next_try = dtprobe__rdv_now();
	if (++u->cand >= (e->o->addrs != NULL ? 1u : (unsigned)DTPLAN__PORT_TRIES)) {
		u->cand = 0;
		u->next_try = dtprobe__rdv_now() + RDV_RETRY_S;
	}
	/* no answer for long enough: the parent's parent stands in */
	if (dtprobe__rdv_now() >= u->fallback_at && u->target != 0) {
		dtplan__log(DTPLAN_LOG_INFO,
			    "probe: job %u node %u: node %u does not answer; "
			    "joining node %u",
			    e->o->job_id, e->self, u->target,
			    dtplan_probe_tree_parent(u->target, e->fanout));
		u->target = dtplan_probe_tree_parent(u->target, e->fanout);
		u->resolved = false;
		u->cand = 0;
		u->fallback_at = dtprobe__rdv_now() + RDV_FALLBACK_NEXT_S;
	}
}

/*
 * Where target's name did not resolve: Slurm's NodeAddr for it, when the
 * caller gave one (a cluster whose slurmd are reached by address only).
 * true with *addr set; false with err saying both why.
 */
static bool by_node_addr(struct engine *e, uint32_t target, struct sockaddr_storage *addr,
			 struct dtplan_error *err)
{
	const char *a = e->o->node_addrs != NULL ? e->o->node_addrs[target] : "";
	struct dtplan_error e2 = {0};
	char name_err[sizeof(err->text)];

	if (a[0] == '\0')
		return false;
	if (dtprobe__resolve(a, 0, addr, &e2) == DTPLAN_OK)
		return true;
	dtplan__strlcpy(name_err, err->text, sizeof(name_err));
	dtplan__error(err, e2.code, "probe", 0, "%s, nor its NodeAddr: %s", name_err, e2.text);
	return false;
}

void dtprobe__rdv_up_try(struct engine *e)
{
	struct uplink *u = &e->up;
	struct dtplan_error err = {0};

	if (!u->resolved) {
		if (e->o->addrs != NULL) {
			u->addr = e->o->addrs[u->target];
		} else if (dtprobe__resolve(e->o->hosts[u->target], 0, &u->addr, &err) !=
				   DTPLAN_OK &&
			   !by_node_addr(e, u->target, &u->addr, &err)) {
			u->next_try = dtprobe__rdv_now() + RDV_RESOLVE_RETRY_S;
			u->fallback_at = fmin(u->fallback_at, dtprobe__rdv_now());
			dtprobe__rdv_up_fail(e, err.text);
			return;
		}
		u->resolved = true;
	}
	if (e->o->addrs == NULL)
		dtprobe__addr_set_port(&u->addr,
				       dtprobe__port_candidate(e->o->port_lo, e->o->port_hi,
							       e->seed, u->cand));
	u->rx.fd = dtprobe__connect_start(&u->addr);
	if (u->rx.fd < 0) {
		dtprobe__rdv_up_fail(e, strerror(errno));
		return;
	}
	dtprobe__addr_text(&u->addr, u->rx.where, sizeof(u->rx.where));
	u->state = U_CONNECTING;
	u->deadline = dtprobe__rdv_now() + RDV_CONNECT_S;
}

static void up_connected(struct engine *e)
{
	struct uplink *u = &e->up;
	int rc = dtprobe__connect_done(u->rx.fd);

	if (rc != 0) {
		dtprobe__rdv_up_fail(e, strerror(rc));
		return;
	}
	dtprobe__sock_tune(u->rx.fd, 0);
	if (!e->addr_known) {
		struct sockaddr_storage local;
		socklen_t l = sizeof(local);

		if (getsockname(u->rx.fd, (struct sockaddr *)&local, &l) == 0) {
			dtprobe__addr_to_wire(&local, e->port, &e->my_addr);
			e->addr_known = true;
		}
	}
	/* the parent speaks first; this node's join follows its greeting */
	u->state = U_JOINING;
	u->deadline = dtprobe__rdv_now() + RDV_ACK_S;
}

/* A whole message from the parent. */
static void up_message(struct engine *e)
{
	struct uplink *u = &e->up;
	struct conn *c = &u->rx;
	struct dtplan_error err = {0};

	if (c->h.sender != u->target) {
		dtplan__error(&err, DTPLAN_ERR_POLICY, "probe", 0,
			      "a %s message from node %u on the link to node %u",
			      dtplan_wire_type_name(c->h.type), c->h.sender, u->target);
		dtprobe__rdv_reject(e, c->where, &err);
		dtprobe__rdv_up_fail(e, "rejected");
		return;
	}
	if (u->state == U_JOINING) {
		/* the greeting: only now does this node say anything */
		if (dtprobe__hello_check(&e->rules, &c->h, c->body, u->target,
					 dtprobe__addr_port(&u->addr), &err) != DTPLAN_OK) {
			dtprobe__rdv_reject(e, c->where, &err);
			dtprobe__rdv_up_fail(e, "rejected");
			return;
		}
		if (dtprobe__rdv_send_join(e, c->fd, &err) != DTPLAN_OK) {
			dtprobe__rdv_conn_reset_msg(c);
			dtprobe__rdv_up_fail(e, err.text);
			return;
		}
		u->state = U_UP;
		e->sent_entries = 0; /* a new parent hears everything */
		e->results_sent = false;
	} else if (u->state == U_UP && c->h.type == DTPLAN_WIRE_GO) {
		if (on_go(e, c->body, c->h.body_len, &err) != 0)
			dtprobe__rdv_reject(e, c->where, &err);
	} else {
		dtplan__error(&err, DTPLAN_ERR_POLICY, "probe", 0, "an unexpected %s message",
			      dtplan_wire_type_name(c->h.type));
		dtprobe__rdv_reject(e, c->where, &err);
	}
	dtprobe__rdv_conn_reset_msg(c);
}

void dtprobe__rdv_up_event(struct engine *e, short revents)
{
	struct uplink *u = &e->up;
	struct dtplan_error err = {0};
	int rc;

	if (u->state == U_CONNECTING) {
		if (revents & (POLLOUT | POLLERR | POLLHUP))
			up_connected(e);
		return;
	}
	for (;;) {
		rc = dtprobe__rdv_conn_read(e, &u->rx, &err);
		if (rc == 0)
			return;
		if (rc == -2) {
			dtprobe__rdv_up_fail(e, "the connection closed");
			return;
		}
		if (rc < 0) {
			dtprobe__rdv_reject(e, u->rx.where, &err);
			dtprobe__rdv_up_fail(e, "rejected");
			return;
		}
		up_message(e);
		if (u->state != U_JOINING && u->state != U_UP)
			return;
	}
}
