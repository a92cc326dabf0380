/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous.c: one node's part in measuring the allocation
 * (doc/internals/probe.md): the driver.
 *
 * Every node listens on a port of the configured range and joins its parent
 * in the fan-in tree (node i's parent is (i - 1) / fanout; node 0 leads);
 * when its parent does not answer, it joins the parent's parent, and so on
 * up to the leader (rendezvous_up.c).  Its inventory (discovered on a thread
 * of its own) and its subtree's go up (rendezvous_tree.c); the leader
 * schedules the link rounds (rendezvous_lead.c) and sends each subtree its
 * nodes' partners; the rounds start at the same time everywhere (a delay
 * counted from receipt, so no clocks need to agree) and last one slot each;
 * the results go up the tree and the leader turns them into the
 * measurement.  One thread runs an event loop with poll(), here; every wait
 * ends at a deadline, and the whole run at start + budget.
 *
 * Every message is checked before it is used (rendezvous_conn.c,
 * probes/net.c): job, session and sender in the header, then the
 * credential's uid and seal, then the body's digest, then what the message
 * may say from where it comes (a child speaks only for its own subtree).  A
 * message that fails is logged and its connection closed.  The timing is
 * named in rendezvous_int.h.
 */
#include "config.h"

#include "rendezvous_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Events
 * ---------------------------------------------------------------------- */

static void conn_event(struct engine *e, struct conn *c)
{
	struct dtplan_error err = {0};
	int rc;

	if (c->kind == C_PROBE) {
		rc = dtprobe__link_srv_step(c->srv, c->fd, &e->rules, e->self, c->round_end, &err);
		if (rc < 0)
			dtplan__log(DTPLAN_LOG_INFO, "probe: node %u: probe of node %u: %s",
				    e->self, c->node, err.text);
		if (rc != 0)
			dtprobe__rdv_conn_close(c);
		return;
	}
	for (;;) {
		rc = dtprobe__rdv_conn_read(e, c, &err);
		if (rc == 0)
			return;
		if (rc == -2) {
			/* a child closed: it is done, or it died */
			dtprobe__rdv_conn_close(c);
			return;
		}
		if (rc < 0 || dtprobe__rdv_on_message(e, c, &err) != 0) {
			dtprobe__rdv_reject(e, c->where, &err);
			dtprobe__rdv_conn_close(c);
			return;
		}
		dtprobe__rdv_conn_reset_msg(c);
		if (c->kind == C_PROBE)
			return conn_event(e, c);
	}
}

static void on_discovered(struct engine *e)
{
	char b;

	while (read(e->pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	pthread_join(e->thread, NULL);
	e->thread_started = false;
	e->disc_done = true;
	if (e->disc_rv != DTPLAN_OK)
		dtplan__log(DTPLAN_LOG_WARNING, "probe: node %s: %s", e->o->hosts[e->self],
			    e->disc_err.text);
}

/* What is due: inventories up, the leader's schedule, results up. */
static void progress(struct engine *e)
{
	double t = dtprobe__rdv_now();

	dtprobe__rdv_own_entry(e);
	if (e->self == 0) {
		size_t have = 0;

		for (uint32_t i = 0; i < e->n; i++)
			have += e->have_entry[i];
		if (!e->have_go &&
		    (have == e->n || t >= e->inv_deadline ||
		     (!e->any_join && e->n > 1 &&
		      t >= e->start + fmin(RDV_ALONE_MAX_S,
					   RDV_ALONE_FRAC * e->o->params.budget_s)))) {
			if (!e->any_join && e->n > 1 && e->refused[0] != '\0')
				dtprobe__rdv_note(
					e,
					"no other node joined within %.1f s: MUNGE refused "
					"their credentials: %s",
					t - e->start, e->refused);
			else if (!e->any_join && e->n > 1)
				dtprobe__rdv_note(
					e,
					"no other node joined within %.1f s: the prolog ran on %s "
					"only, or the others could not make MUNGE credentials (is "
					"PrologFlags=Alloc set in slurm.conf, and munged running "
					"on "
					"every node at the socket Slurm's AuthInfo=socket= names?)",
					t - e->start, e->o->hosts[0]);
			dtprobe__rdv_plan_rounds(e);
			if (e->assign != NULL)
				dtprobe__rdv_forward_go(e, e->assign, e->n, t);
		}
		return;
	}
	if (e->up.state == U_UP && !e->have_go && e->have_entry[e->self] &&
	    (dtprobe__rdv_children_in(e, false) || t >= e->inv_deadline))
		dtprobe__rdv_send_inventory(e);
	if (e->up.state == U_UP && e->rounds_over && !e->results_sent &&
	    (dtprobe__rdv_children_in(e, true) || t >= e->res_deadline))
		dtprobe__rdv_send_results(e);
}

/* ------------------------------------------------------------------------
 * Deadlines
 * ---------------------------------------------------------------------- */

/* Closes the connections whose deadline passed; the earliest other one. */
static double conns_expire(struct engine *e, double t, double wake)
{
	for (size_t k = 0; k < e->max_conns; k++) {
		struct conn *c = &e->conns[k];
		/* a begun message's deadline; a child may be silent between messages */
		double d = c->msg_deadline > 0  ? c->msg_deadline
			   : c->kind == C_CHILD ? 0
						: c->idle_deadline;

		if (c->kind == C_FREE || d == 0)
			continue;
		if (t >= d && c->kind == C_PROBE) {
			struct dtplan_error err = {0};

			/* the report is due: what arrived is the measurement */
			if (dtprobe__link_srv_finish(c->srv, c->fd, &e->rules, e->self,
						     c->round_end, &err) < 0)
				dtplan__log(DTPLAN_LOG_INFO,
					    "probe: node %u: probe of "
					    "node %u: %s",
					    e->self, c->node, err.text);
			dtprobe__rdv_conn_close(c);
			continue;
		}
		if (t >= d) {
			struct dtplan_error err = {0};

			dtplan__error(&err, DTPLAN_ERR_PARSE, "probe", 0,
				      "%s (a %s message of %zu header, %zu credential and "
				      "%zu body bytes so far)",
				      c->kind == C_PROBE ? "the prober went quiet"
							 : "timed out: truncated or silent",
				      c->head_got >= DTPLAN_WIRE_HEADER_LEN
					      ? dtplan_wire_type_name(c->h.type)
					      : "?",
				      c->head_got, c->cred_got, c->body_got);
			if (c->kind == C_PROBE)
				dtplan__log(DTPLAN_LOG_INFO, "probe: node %u: %s", e->self,
					    err.text);
			else
				dtprobe__rdv_reject(e, c->where, &err);
			dtprobe__rdv_conn_close(c);
			continue;
		}
		wake = fmin(wake, d);
	}
	return wake;
}

/* Tries the uplink again or drops it when its deadline passed; the earliest
 * of its next try and its deadline. */
static double up_expire(struct engine *e, double t, double wake)
{
	if (e->self != 0 && e->up.state == U_IDLE && t >= e->up.next_try)
		dtprobe__rdv_up_try(e);
	if ((e->up.state == U_CONNECTING || e->up.state == U_JOINING) && t >= e->up.deadline)
		dtprobe__rdv_up_fail(e, "no answer");
	if (e->self != 0 && e->up.state == U_IDLE)
		wake = fmin(wake, e->up.next_try);
	if (e->up.state == U_CONNECTING || e->up.state == U_JOINING)
		wake = fmin(wake, e->up.deadline);
	return wake;
}

/* ------------------------------------------------------------------------
 * The poll set
 * ---------------------------------------------------------------------- */

/* What an entry of the poll array stands for; 0 and up: that slot of conns[]. */
enum { PS_LISTEN = -1, PS_DISCOVERY = -2, PS_UPLINK = -3 };

/* The most entries pollset_build() writes. */
static size_t pollset_max(const struct engine *e)
{
	return e->max_conns + 3;
}

/*
 * The poll array's layout, written here only: the listener (its fd -1 when
 * there is none, which poll() skips), discovery's pipe while it runs, the
 * uplink while it is open, then every open connection in slot order.  who[i]
 * says what p[i] is; the count of entries is returned.
 */
static size_t pollset_build(const struct engine *e, struct pollfd *p, long *who)
{
	size_t np = 0;

	p[np] = (struct pollfd){.fd = e->lfd, .events = POLLIN};
	who[np++] = PS_LISTEN;
	if (!e->disc_done && e->thread_started) {
		p[np] = (struct pollfd){.fd = e->pipe[0], .events = POLLIN};
		who[np++] = PS_DISCOVERY;
	}
	if (e->up.state == U_CONNECTING || e->up.state == U_JOINING || e->up.state == U_UP) {
		p[np] = (struct pollfd){.fd = e->up.rx.fd,
					.events = e->up.state == U_CONNECTING ? POLLOUT : POLLIN};
		who[np++] = PS_UPLINK;
	}
	for (size_t k = 0; k < e->max_conns; k++) {
		if (e->conns[k].kind == C_FREE)
			continue;
		p[np] = (struct pollfd){.fd = e->conns[k].fd, .events = POLLIN};
		who[np++] = (long)k;
	}
	return np;
}

/* Hands what poll() said to each entry's handler, in the array's order. */
static void pollset_dispatch(struct engine *e, const struct pollfd *p, const long *who, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		struct conn *c;

		switch (who[i]) {
		case PS_LISTEN:
			if (p[i].revents & POLLIN)
				dtprobe__rdv_accept_all(e);
			break;
		case PS_DISCOVERY:
			if (p[i].revents & POLLIN)
				on_discovered(e);
			break;
		case PS_UPLINK:
			if (p[i].revents)
				dtprobe__rdv_up_event(e, p[i].revents);
			break;
		default:
			c = &e->conns[who[i]];
			/* closed during this turn (and a slot taken during it is
			 * not in p[] yet) */
			if (c->kind == C_FREE || c->fd != p[i].fd)
				break;
			if (p[i].revents)
				conn_event(e, c);
			break;
		}
	}
}

/* ------------------------------------------------------------------------
 * The event loop
 * ---------------------------------------------------------------------- */

/* Runs the loop until `until` or stop(e). */
static void serve(struct engine *e, double until, bool (*stop)(const struct engine *))
{
	struct pollfd *p = calloc(pollset_max(e), sizeof(*p));
	long *who = calloc(pollset_max(e), sizeof(*who));

	if (p == NULL || who == NULL)
		goto out;
	for (;;) {
		double t = dtprobe__rdv_now(), wake = until;
		size_t np;
		int rc;

		progress(e);
		if (t >= until || (stop != NULL && stop(e)))
			break;
		wake = conns_expire(e, t, wake);
		wake = up_expire(e, t, wake);
		if (!e->have_go)
			wake = fmin(wake, e->inv_deadline);
		wake = fmin(wake, t + RDV_TICK_S); /* progress() checks its own clocks */
		np = pollset_build(e, p, who);
		rc = poll(p, np, dtprobe__poll_ms(wake));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		pollset_dispatch(e, p, who, np);
	}
out:
	free(p);
	free(who);
}

static bool has_go(const struct engine *e)
{
	return e->have_go;
}

static bool results_done(const struct engine *e)
{
	uint32_t want = 0, have = 0;

	if (e->self != 0)
		return e->results_sent;
	for (uint32_t i = 0; i < e->n; i++) {
		want += e->present != NULL && e->present[i];
		have += e->present != NULL && e->present[i] && e->done[i];
	}
	return have >= want;
}

/* ------------------------------------------------------------------------
 * The rounds
 * ---------------------------------------------------------------------- */

static void run_rounds(struct engine *e)
{
	double slot = e->go.slot_us * 1e-6;

	for (uint32_t r = 0; r < e->go.n_rounds; r++) {
		double t0 = e->t_rounds + (double)r * slot;
		int32_t q = e->mine.peer[r];
		struct dtprobe__slot sl;
		struct sockaddr_storage addr;
		struct dtplan_link_result l;
		struct dtplan_error err = {0};

		if (t0 + slot > e->deadline)
			break;
		serve(e, t0, NULL);
		if (q < 0 || !e->mine.sends[r]) {
			serve(e, t0 + slot, NULL);
			continue;
		}
		if (!dtprobe__wire_to_addr(&e->mine.peer_addr[r], &addr)) {
			dtplan__log(DTPLAN_LOG_INFO,
				    "probe: node %u: round %u: no address of node "
				    "%d",
				    e->self, r + 1, q);
			continue;
		}
		dtprobe__slot_of(&e->go, e->t_rounds, r + 1, &sl);
		if (dtprobe__link_probe(&e->rules, e->self, (uint32_t)q, r + 1, e->mine.kind[r],
					&addr, &e->go, &sl, &l, &err) != DTPLAN_OK)
			dtplan__log(DTPLAN_LOG_INFO, "probe: job %u node %u: %s", e->o->job_id,
				    e->self, err.text);
		if (dtprobe__rdv_add_link(e, &l) != DTPLAN_OK)
			dtplan__log(DTPLAN_LOG_ERROR, "probe: out of memory");
	}
	e->done[e->self] = 1;
	e->rounds_over = true;
}

/* ------------------------------------------------------------------------
 * Set-up, the leader's measurement, the whole run
 * ---------------------------------------------------------------------- */

static void *discover_thread(void *arg)
{
	struct engine *e = arg;
	char b = 1;

	e->disc_rv = e->o->discover(e->o->discover_arg, &e->node, &e->disc_err);
	if (e->disc_rv != DTPLAN_OK && e->disc_err.text[0] == '\0')
		snprintf(e->disc_err.text, sizeof(e->disc_err.text), "%s",
			 dtplan_strerror(e->disc_rv));
	while (write(e->pipe[1], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void engine_fini(struct engine *e)
{
	if (e->thread_started)
		pthread_join(e->thread, NULL);
	for (size_t k = 0; e->conns != NULL && k < e->max_conns; k++)
		dtprobe__rdv_conn_close(&e->conns[k]);
	dtprobe__rdv_conn_close(&e->up.rx);
	if (e->lfd >= 0)
		close(e->lfd);
	if (e->pipe[0] >= 0)
		close(e->pipe[0]);
	if (e->pipe[1] >= 0)
		close(e->pipe[1]);
	for (size_t k = 0; k < e->n_records; k++)
		free(e->records[k]);
	free(e->records);
	dtplan__strmap_fini(&e->rec_index);
	free(e->entries);
	free(e->have_entry);
	free(e->links);
	free(e->done);
	free(e->conns);
	free(e->assign);
	free(e->present);
	dtplan_measurements_destroy(e->notes);
}

enum dtplan_err dtplan_probe_run(const struct dtplan_probe_opts *o, struct dtplan_measure_file *out,
				 struct dtplan_error *err)
{
	struct engine e;
	enum dtplan_err rv;
	double b;

	memset(&e, 0, sizeof(e));
	e.lfd = e.pipe[0] = e.pipe[1] = -1;
	e.up.rx.fd = -1;
	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (o == NULL || out == NULL || o->n_hosts == 0 || o->hosts == NULL ||
	    o->self >= o->n_hosts || o->auth == NULL || o->discover == NULL ||
	    o->params.fanout == 0 || !(o->params.budget_s > 0) || o->n_hosts > DTPLAN_HOSTLIST_MAX)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "probe", 0,
				     "probe: bad options (hosts, self, credentials, discovery, "
				     "fan-out or budget)");
	e.o = o;
	e.n = (uint32_t)o->n_hosts;
	e.self = o->self;
	e.fanout = o->params.fanout;
	e.depth = dtplan_probe_tree_depth(e.n, e.fanout);
	e.my_depth = dtplan_probe_tree_depth((size_t)e.self + 1, e.fanout);
	e.start = o->start_s > 0 ? o->start_s : dtprobe__rdv_now();
	b = o->params.budget_s;
	e.deadline = e.start + b;
	e.inv_deadline = e.start + b * fmax(RDV_INV_MIN_FRAC,
					    RDV_INV_FRAC - RDV_INV_LEVEL_FRAC * (double)e.my_depth);
	e.seed = o->job_id * 31u + o->session * 7919u;
	e.rules.job_id = o->job_id;
	e.rules.session = o->session;
	e.rules.n_nodes = e.n;
	e.rules.uid = o->uid;
	e.rules.auth = o->auth;
	e.max_conns = e.fanout + RDV_EXTRA_CONNS;
	e.conns = calloc(e.max_conns, sizeof(*e.conns));
	e.entries = calloc(e.n, sizeof(*e.entries));
	e.have_entry = calloc(e.n, 1);
	e.done = calloc(e.n, 1);
	e.notes = dtplan_measurements_create(0, NULL);
	if (e.conns == NULL || e.entries == NULL || e.have_entry == NULL || e.done == NULL ||
	    e.notes == NULL || dtplan__strmap_init(&e.rec_index, 8) != DTPLAN_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < e.max_conns; k++)
		e.conns[k].fd = -1;
	/* a node that cannot make credentials takes no part, and says why
	 * (munged down, or its socket elsewhere), before anyone waits on it; a
	 * job of one node sends no message */
	if (e.n > 1) {
		struct dtplan_error e2 = {0};
		char *cred = NULL;

		rv = o->auth->encode(o->auth, "", 0, &cred, &e2);
		free(cred);
		if (rv != DTPLAN_OK) {
			rv = dtplan__error(err, rv, "probe", 0, "no MUNGE credentials: %s",
					   e2.text);
			goto out;
		}
	}
	{
		struct dtplan_error e2 = {0};

		e.lfd = dtprobe__listen(o->addrs != NULL ? &o->addrs[e.self] : NULL, o->port_lo,
					o->port_hi, e.seed, &e.port, &e2);
		/* the leader's listener is the whole measurement's; without its own
		 * a node still joins and reports, with the reason, outside the
		 * rounds (no address), and its children join its parent */
		if (e.lfd < 0 && (e.self == 0 || e.n == 1)) {
			rv = dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "%s", e2.text);
			goto out;
		}
		if (e.lfd < 0) {
			dtplan__log(DTPLAN_LOG_WARNING, "probe: job %u node %u: %s", o->job_id,
				    e.self, e2.text);
			dtplan__strlcpy(e.listen_err, e2.text, sizeof(e.listen_err));
		}
	}
	if (e.lfd < 0) {
		e.addr_known = true; /* none: family 0 */
	} else if (o->addrs != NULL) {
		dtprobe__addr_to_wire(&o->addrs[e.self], e.port, &e.my_addr);
		e.addr_known = true;
	} else if (o->interface != NULL && o->interface[0] != '\0') {
		if (dtprobe__iface_addr(o->interface, &e.my_addr, err) != DTPLAN_OK) {
			rv = DTPLAN_ERR_NOT_FOUND;
			goto out;
		}
		e.my_addr.port = e.port;
		e.addr_known = true;
	} else if (e.n == 1) {
		e.addr_known = true; /* nobody will connect */
	}
	if (pipe2(e.pipe, O_CLOEXEC) != 0 ||
	    pthread_create(&e.thread, NULL, discover_thread, &e) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, "probe", 0, "cannot start discovery: %s",
				   strerror(errno));
		goto out;
	}
	e.thread_started = true;
	e.up.target = dtplan_probe_tree_parent(e.self, e.fanout);
	e.up.state = e.self == 0 ? U_GONE : U_IDLE;
	e.up.next_try = e.start;
	e.up.fallback_at = e.start + fmin(RDV_FALLBACK_S, RDV_FALLBACK_FRAC * b);
	dtplan__log(DTPLAN_LOG_DEBUG, "probe: job %u node %u of %u listens on port %u", o->job_id,
		    e.self, e.n, e.port);
	/* inventories up, the schedule down */
	serve(&e, e.deadline - (e.self == 0 ? RDV_WRITE_RESERVE_S : 0), has_go);
	if (e.have_go) {
		run_rounds(&e);
		serve(&e, e.self == 0 ? e.res_deadline : e.deadline, results_done);
	}
	/* The discovery is bounded by the callback's own timeout (the caller
	 * gives it a share of the budget): engine_fini() waits for it. */
	if (e.self == 0) {
		if (!e.disc_done)
			dtprobe__rdv_note(&e, "%s's own discovery did not end within the budget",
					  o->hosts[0]);
		rv = dtprobe__rdv_measure(&e, out, err);
	} else {
		if (!e.results_sent)
			dtplan__log(DTPLAN_LOG_INFO,
				    "probe: job %u node %u: ended without sending "
				    "results (%s)",
				    o->job_id, e.self,
				    e.up.state == U_UP ? "no schedule came" : "no parent answered");
		rv = DTPLAN_OK;
	}
out:
	engine_fini(&e);
	return rv;
}
