/*
 * rendezvous.c: one node's part in measuring the allocation
 * (doc/internals/probe.md).
 *
 * Every node listens on a port of the configured range and joins its parent
 * in the fan-in tree (node i's parent is (i - 1) / fanout; node 0 leads);
 * when its parent does not answer, it joins the parent's parent, and so on
 * up to the leader.  Its inventory (discovered on a thread of its own) and
 * its subtree's go up; the leader schedules the link rounds
 * (lib/measure/probe_schedule.c) and sends each subtree its nodes' partners; the
 * rounds start at the same time everywhere (a delay counted from receipt,
 * so no clocks need to agree) and last one slot each; the results go up the
 * tree and the leader turns them into the measurement.  One thread runs an
 * event loop with poll(); every wait ends at a deadline, and the whole run
 * at start + budget.
 *
 * Every message is checked before it is used (probes/net.c): job, session
 * and sender in the header, then the credential's uid and seal, then the
 * body's digest, then what the message may say from where it comes (a
 * child speaks only for its own subtree).  A message that fails is logged
 * and its connection closed.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define EXTRA_CONNS 48  /* beyond the fan-out: adopted children, probes, strays */
#define FIRST_MSG_S 1.0 /* a new connection's first message must come by then */
#define MSG_S 2.0       /* a message, once begun, must end by then */
#define CONNECT_S 0.2
#define ACK_S 0.5
#define RETRY_S 0.02
#define WRITE_RESERVE_S 0.2 /* kept at the end of the budget for the leader's file */

enum conn_kind { C_FREE = 0, C_NEW, C_CHILD, C_PROBE };

/* A connection and the message being read on it. */
struct conn {
	int fd;
	enum conn_kind kind;
	uint32_t node; /* once joined (C_CHILD) or probing (C_PROBE) */
	char where[64];
	double idle_deadline; /* C_NEW: the first message by then; C_PROBE: the report */
	double round_end;     /* C_PROBE: the round's end */
	double msg_deadline;  /* a begun message by then; 0: none begun */
	uint8_t head[DTPLAN_WIRE_HEADER_LEN];
	size_t head_got;
	struct dtplan_wire_header h;
	char *cred;
	size_t cred_got;
	uint8_t seal[DTPLAN_WIRE_SEAL_LEN];
	uint8_t *body;
	size_t body_got;
	struct dtprobe__link_srv *srv;
	bool inventory_in, results_in;
};

enum up_state { U_IDLE, U_CONNECTING, U_JOINING, U_UP, U_GONE };

/* The connection to the parent (or an ancestor standing in for it). */
struct uplink {
	enum up_state state;
	uint32_t target;
	unsigned cand;
	double next_try, deadline, fallback_at;
	bool resolved;
	struct sockaddr_storage addr;
	struct conn rx; /* fd and the message being read */
};

struct engine {
	const struct dtplan_probe_opts *o;
	struct dtprobe__peer_rules rules;
	uint32_t n, self, fanout;
	size_t depth, my_depth;
	double start, deadline;
	int lfd;              /* -1: none (listen_err says why) */
	char listen_err[192]; /* a node that could not listen still reports */
	uint16_t port;
	uint32_t seed;
	struct dtplan_wire_addr my_addr;
	bool addr_known;
	struct conn *conns;
	size_t max_conns;
	struct uplink up;
	/* discovery */
	pthread_t thread;
	bool thread_started, disc_done;
	int pipe[2];
	struct dtplan_node node;
	enum dtplan_err disc_rv;
	struct dtplan_error disc_err;
	/* the subtree's inventories */
	char **records;
	size_t n_records;
	struct dtplan__strmap rec_index;
	struct dtplan_wire_entry *entries;
	size_t n_entries, sent_entries;
	uint8_t *have_entry;
	double inv_deadline;
	bool any_join;
	/* the rounds */
	bool have_go;
	struct dtplan_wire_go go; /* the parameters; assign: this node's only */
	struct dtplan_wire_assign mine;
	double t_rounds, t_end, res_deadline;
	bool rounds_over;
	/* the subtree's results */
	struct dtplan_link_result *links;
	size_t n_links, cap_links;
	uint8_t *done;
	bool results_sent;
	/* the leader */
	struct dtplan_wire_assign *assign; /* every present node's, by node */
	uint8_t *present;
	struct dtplan_measurements *notes; /* collects notes before the analysis */
	size_t rejected;
};

static double now(void)
{
	return dtplan_probe_clock();
}

static void reject(struct engine *e, const char *where, const struct dtplan_error *err)
{
	e->rejected++;
	dtplan__log(DTPLAN_LOG_WARNING, "probe: job %u node %u: rejected %s: %s", e->o->job_id,
		    e->self, where, err->text);
}

static void conn_reset_msg(struct conn *c)
{
	free(c->cred);
	free(c->body);
	c->cred = NULL;
	c->body = NULL;
	c->head_got = c->cred_got = c->body_got = 0;
	c->msg_deadline = 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	conn_reset_msg(c);
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
static int conn_read(struct engine *e, struct conn *c, struct dtplan_error *err)
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
			c->msg_deadline = fmin(now() + MSG_S, e->deadline);
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

static struct dtplan_wire_header header(const struct engine *e, uint8_t type, uint32_t round)
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

static enum dtplan_err send_join(struct engine *e, int fd, struct dtplan_error *err)
{
	struct dtplan_wire_join j = {e->n, e->my_addr};
	struct dtplan_wire_header h = header(e, DTPLAN_WIRE_JOIN, 0);
	uint8_t *body = NULL;
	size_t len = 0;
	enum dtplan_err rv;

	rv = dtplan_wire_join_encode(&j, &body, &len, err);
	if (rv == DTPLAN_OK)
		rv = dtprobe__msg_send(fd, e->rules.auth, &h, body, len,
				       fmin(now() + ACK_S, e->deadline), err);
	free(body);
	return rv;
}

/* ------------------------------------------------------------------------
 * Inventories
 * ---------------------------------------------------------------------- */

/* The index of record text in e->records, added when new; -1 out of memory. */
static int32_t record_index(struct engine *e, const char *text)
{
	char **grown, *copy;
	int k = dtplan__strmap_get(&e->rec_index, text);

	if (k >= 0)
		return k;
	copy = strdup(text);
	grown = realloc(e->records, (e->n_records + 1) * sizeof(*grown));
	if (copy == NULL || grown == NULL) {
		free(copy);
		if (grown != NULL)
			e->records = grown;
		return -1;
	}
	e->records = grown;
	e->records[e->n_records] = copy;
	if (dtplan__strmap_put(&e->rec_index, copy, (int)e->n_records, NULL) != DTPLAN_OK) {
		free(copy);
		return -1;
	}
	return (int32_t)e->n_records++;
}

/* Adds an entry (first report of a node wins). */
static enum dtplan_err add_entry(struct engine *e, const struct dtplan_wire_entry *src,
				 const char *record)
{
	struct dtplan_wire_entry *x;

	if (src->node >= e->n || e->have_entry[src->node])
		return DTPLAN_OK;
	x = &e->entries[e->n_entries];
	*x = *src;
	x->record = DTPLAN_WIRE_NO_RECORD;
	if (record != NULL) {
		int32_t k = record_index(e, record);

		if (k < 0)
			return DTPLAN_ERR_NOMEM;
		x->record = (uint32_t)k;
	}
	e->have_entry[src->node] = 1;
	e->n_entries++;
	return DTPLAN_OK;
}

/* This node's entry, once discovery is over and its address known. */
static void own_entry(struct engine *e)
{
	struct dtplan_wire_entry me;
	char *text = NULL;
	struct dtplan_error err = {0};

	/* the leader's address is known once a child joins; plan_rounds() fills it */
	if (!e->disc_done || (!e->addr_known && e->self != 0) || e->have_entry[e->self])
		return;
	memset(&me, 0, sizeof(me));
	me.node = e->self;
	me.addr = e->my_addr;
	if (e->disc_rv == DTPLAN_OK) {
		/* equal hardware, equal text: the host's name lives in the host list */
		e->node.hostname[0] = '\0';
		if (dtplan_node_to_json(&e->node, false, &text, &err) != DTPLAN_OK)
			dtplan__strlcpy(me.note, err.text, sizeof(me.note));
		else if (e->lfd < 0)
			/* no address: no link probes; the note says why */
			dtplan__strlcpy(me.note, e->listen_err, sizeof(me.note));
	} else {
		dtplan__strlcpy(me.note, e->disc_err.text, sizeof(me.note));
	}
	if (add_entry(e, &me, text) != DTPLAN_OK)
		dtplan__log(DTPLAN_LOG_ERROR, "probe: out of memory");
	free(text);
}

static enum dtplan_err merge_inventory(struct engine *e, uint32_t from,
				       const struct dtplan_wire_inventory *v,
				       struct dtplan_error *err)
{
	for (size_t i = 0; i < v->n_entries; i++)
		if (v->entries[i].node >= e->n ||
		    !dtplan_probe_tree_contains(from, v->entries[i].node, e->fanout))
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u sent an inventory of node %u, which is not "
					     "in its subtree",
					     from, v->entries[i].node);
	for (size_t i = 0; i < v->n_entries; i++) {
		const struct dtplan_wire_entry *x = &v->entries[i];

		if (add_entry(e, x,
			      x->record != DTPLAN_WIRE_NO_RECORD ? v->records[x->record] : NULL) !=
		    DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
	}
	return DTPLAN_OK;
}

/* Sends the entries not sent yet (and the records they use) to the parent. */
static void send_inventory(struct engine *e)
{
	struct dtplan_wire_inventory v = {0};
	struct dtplan_wire_header h = header(e, DTPLAN_WIRE_INVENTORY, 0);
	struct dtplan_error err = {0};
	int32_t *map = NULL;
	uint8_t *body = NULL;
	size_t len = 0;

	if (e->sent_entries >= e->n_entries)
		return;
	map = malloc((e->n_records + 1) * sizeof(*map));
	v.records = malloc((e->n_records + 1) * sizeof(*v.records));
	v.entries = malloc((e->n_entries - e->sent_entries) * sizeof(*v.entries));
	if (map == NULL || v.records == NULL || v.entries == NULL)
		goto out;
	for (size_t k = 0; k < e->n_records; k++)
		map[k] = -1;
	for (size_t i = e->sent_entries; i < e->n_entries; i++) {
		struct dtplan_wire_entry *x = &v.entries[v.n_entries++];

		*x = e->entries[i];
		if (x->record == DTPLAN_WIRE_NO_RECORD)
			continue;
		if (map[x->record] < 0) {
			map[x->record] = (int32_t)v.n_records;
			v.records[v.n_records++] = e->records[x->record];
		}
		x->record = (uint32_t)map[x->record];
	}
	if (dtplan_wire_inventory_encode(&v, &body, &len, &err) != DTPLAN_OK ||
	    dtprobe__msg_send(e->up.rx.fd, e->rules.auth, &h, body, len,
			      fmin(now() + MSG_S, e->deadline), &err) != DTPLAN_OK)
		dtplan__log(DTPLAN_LOG_WARNING,
			    "probe: node %u: cannot send the inventories to "
			    "node %u: %s",
			    e->self, e->up.target, err.text);
	else
		e->sent_entries = e->n_entries;
out:
	free(body);
	free(map);
	free(v.records);
	free(v.entries);
}

/* Every direct child has sent its inventory (or the wait is over). */
static bool children_in(const struct engine *e, bool results)
{
	for (uint32_t c = e->self * e->fanout + 1; c <= e->self * e->fanout + e->fanout && c < e->n;
	     c++) {
		bool in = false;

		for (size_t k = 0; k < e->max_conns; k++) {
			const struct conn *x = &e->conns[k];

			if (x->kind == C_CHILD && x->node == c &&
			    (results ? x->results_in : x->inventory_in))
				in = true;
		}
		if (!in && !(results && !e->have_entry[c]))
			return false;
	}
	/* adopted children too */
	for (size_t k = 0; k < e->max_conns; k++) {
		const struct conn *x = &e->conns[k];

		if (x->kind == C_CHILD &&
		    !(results ? x->results_in || !x->inventory_in : x->inventory_in))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * The leader's schedule
 * ---------------------------------------------------------------------- */

static void note(struct engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct engine *e, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dtplan__log(DTPLAN_LOG_INFO, "probe: job %u: %s", e->o->job_id, buf);
	if (e->notes != NULL)
		dtplan_measurements_add_note(e->notes, "%s", buf);
}

static int32_t *leaves(const struct engine *e)
{
	const struct dtplan_topology *t = e->o->topology;
	int32_t *leaf;

	if (t == NULL || t->n_switches == 0)
		return NULL;
	leaf = malloc(e->n * sizeof(*leaf));
	if (leaf == NULL)
		return NULL;
	for (uint32_t i = 0; i < e->n; i++) {
		int k = dtplan_topology_node_index(t, e->o->hosts[i]);

		leaf[i] = k >= 0 ? t->node_leaf[k] : -1;
	}
	return leaf;
}

/* The leader: the schedule of the present nodes and its timing. */
static void plan_rounds(struct engine *e)
{
	const struct dtplan_probe_params *p = &e->o->params;
	struct dtplan_probe_schedule *s = NULL;
	struct dtplan_error err = {0};
	int32_t *leaf = leaves(e), *entry_of = NULL;
	double t = now(), delay = 0.03 + 0.01 * (double)e->depth, slot = p->slot_s, avail;
	double margin = 0.05 + 0.03 * (double)e->depth;
	size_t rounds;

	e->present = calloc(e->n, 1);
	e->assign = calloc(e->n, sizeof(*e->assign));
	entry_of = malloc(e->n * sizeof(*entry_of));
	if (e->present == NULL || e->assign == NULL || entry_of == NULL)
		goto out;
	for (uint32_t i = 0; i < e->n; i++)
		entry_of[i] = -1;
	for (size_t i = 0; i < e->n_entries; i++) {
		struct dtplan_wire_entry *x = &e->entries[i];

		if (x->node == e->self && x->addr.family == 0 && e->addr_known)
			x->addr = e->my_addr;
		entry_of[x->node] = (int32_t)i;
		e->present[x->node] = x->addr.family != 0;
	}
	if (dtplan_probe_schedule_create(e->n, leaf, e->present, &s, &err) != DTPLAN_OK) {
		note(e, "no link probes: %s", err.text);
		goto out;
	}
	rounds = s->n_rounds;
	avail = e->deadline - WRITE_RESERVE_S - margin - delay - t;
	if (rounds > 0 && avail < (double)rounds * slot)
		slot = avail / (double)rounds;
	if (rounds > 0 && slot < 0.15) {
		note(e, "no link probes: %.2f s of the %g s budget left after the inventories",
		     e->deadline - t, p->budget_s);
		rounds = 0;
	}
	e->go.delay_us = (uint32_t)(delay * 1e6);
	e->go.slot_us = (uint32_t)(slot * 1e6);
	e->go.n_rounds = (uint32_t)rounds;
	e->go.ping_count = p->ping_count;
	e->go.ping_bytes = p->ping_bytes;
	e->go.ping_window_us = (uint32_t)(fmin(p->ping_window_s, 0.25 * slot) * 1e6);
	/* pings, bulk, the drain allowance (links.c) and 50 ms for the report */
	e->go.bulk_us = (uint32_t)(fmax(0.0, fmin(p->bulk_s, slot - e->go.ping_window_us * 1e-6 -
								     0.06 - 0.05)) *
				   1e6);
	e->go.bulk_bytes = p->bulk_bytes;
	for (uint32_t i = 0; i < e->n; i++) {
		struct dtplan_wire_assign *a = &e->assign[i];

		a->node = i;
		for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++) {
			int32_t q = r < rounds ? s->rounds[r].peer[i] : -1;

			a->peer[r] = q;
			if (q < 0)
				continue;
			a->sends[r] = s->rounds[r].sends[i];
			a->kind[r] = (uint8_t)s->rounds[r].kind;
			if (entry_of[q] >= 0)
				a->peer_addr[r] = e->entries[entry_of[q]].addr;
		}
	}
	e->mine = e->assign[e->self];
	e->have_go = true;
	e->t_rounds = t + delay;
	e->t_end = e->t_rounds + (double)rounds * slot;
	e->res_deadline = fmin(e->t_end + margin + 0.05, e->deadline - WRITE_RESERVE_S);
out:
	if (!e->have_go) {
		e->have_go = true;
		e->t_rounds = e->t_end = t;
		e->res_deadline = fmin(t + margin, e->deadline - WRITE_RESERVE_S);
	}
	dtplan_probe_schedule_destroy(s);
	free(leaf);
	free(entry_of);
}

/* Sends each child the go with its subtree's assignments. */
static void forward_go(struct engine *e, const struct dtplan_wire_assign *all, size_t n_all,
		       double received)
{
	for (size_t k = 0; k < e->max_conns; k++) {
		struct conn *c = &e->conns[k];
		struct dtplan_wire_go g = e->go;
		struct dtplan_wire_header h = header(e, DTPLAN_WIRE_GO, 0);
		struct dtplan_error err = {0};
		uint8_t *body = NULL;
		size_t len = 0;
		double spent = now() - received;

		if (c->kind != C_CHILD)
			continue;
		g.assign = malloc((n_all + 1) * sizeof(*g.assign));
		if (g.assign == NULL)
			continue;
		g.n_assign = 0;
		for (size_t i = 0; i < n_all; i++)
			if (dtplan_probe_tree_contains(c->node, all[i].node, e->fanout))
				g.assign[g.n_assign++] = all[i];
		g.delay_us =
			spent * 1e6 < e->go.delay_us ? e->go.delay_us - (uint32_t)(spent * 1e6) : 0;
		if (dtplan_wire_go_encode(&g, &body, &len, &err) != DTPLAN_OK ||
		    dtprobe__msg_send(c->fd, e->rules.auth, &h, body, len,
				      fmin(now() + MSG_S, e->deadline), &err) != DTPLAN_OK)
			dtplan__log(DTPLAN_LOG_WARNING,
				    "probe: node %u: cannot send the schedule to "
				    "node %u: %s",
				    e->self, c->node, err.text);
		free(body);
		free(g.assign);
	}
}

/* ------------------------------------------------------------------------
 * Results
 * ---------------------------------------------------------------------- */

static enum dtplan_err add_link(struct engine *e, const struct dtplan_link_result *l)
{
	if (e->n_links == e->cap_links) {
		size_t cap = e->cap_links ? 2 * e->cap_links : 16;
		struct dtplan_link_result *g = realloc(e->links, cap * sizeof(*g));

		if (g == NULL)
			return DTPLAN_ERR_NOMEM;
		e->links = g;
		e->cap_links = cap;
	}
	e->links[e->n_links++] = *l;
	return DTPLAN_OK;
}

static enum dtplan_err merge_results(struct engine *e, uint32_t from,
				     const struct dtplan_wire_results *r, struct dtplan_error *err)
{
	for (size_t i = 0; i < r->n_done; i++)
		if (r->done[i] >= e->n || !dtplan_probe_tree_contains(from, r->done[i], e->fanout))
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u sent results of node %u, which is not in its "
					     "subtree",
					     from, r->done[i]);
	for (size_t i = 0; i < r->n; i++)
		if (r->links[i].from >= e->n || r->links[i].to >= e->n ||
		    !dtplan_probe_tree_contains(from, r->links[i].from, e->fanout))
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u sent a link of nodes %u and %u", from,
					     r->links[i].from, r->links[i].to);
	for (size_t i = 0; i < r->n_done; i++)
		e->done[r->done[i]] = 1;
	for (size_t i = 0; i < r->n; i++)
		if (add_link(e, &r->links[i]) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
	return DTPLAN_OK;
}

static void send_results(struct engine *e)
{
	struct dtplan_wire_results r = {0};
	struct dtplan_wire_header h = header(e, DTPLAN_WIRE_RESULTS, 0);
	struct dtplan_error err = {0};
	uint8_t *body = NULL;
	size_t len = 0;

	r.done = malloc((e->n + 1) * sizeof(*r.done));
	if (r.done == NULL)
		return;
	for (uint32_t i = 0; i < e->n; i++)
		if (e->done[i])
			r.done[r.n_done++] = i;
	r.n = e->n_links;
	r.links = e->links;
	if (dtplan_wire_results_encode(&r, &body, &len, &err) != DTPLAN_OK ||
	    dtprobe__msg_send(e->up.rx.fd, e->rules.auth, &h, body, len,
			      fmin(now() + MSG_S, e->deadline), &err) != DTPLAN_OK)
		dtplan__log(DTPLAN_LOG_WARNING,
			    "probe: node %u: cannot send the results to node "
			    "%u: %s",
			    e->self, e->up.target, err.text);
	else
		e->results_sent = true;
	free(body);
	free(r.done);
}

/* ------------------------------------------------------------------------
 * Messages
 * ---------------------------------------------------------------------- */

static struct conn *child_conn(struct engine *e, uint32_t node)
{
	for (size_t k = 0; k < e->max_conns; k++)
		if (e->conns[k].kind == C_CHILD && e->conns[k].node == node)
			return &e->conns[k];
	return NULL;
}

/* A whole message on a connection a peer opened. */
static int on_message(struct engine *e, struct conn *c, struct dtplan_error *err)
{
	const struct dtplan_wire_header *h = &c->h;
	uint32_t s = h->sender;

	switch (c->kind == C_NEW ? h->type : h->type + 16) {
	case DTPLAN_WIRE_JOIN: {
		struct dtplan_wire_join j;
		struct conn *old;

		if (s == e->self || !dtplan_probe_tree_contains(e->self, s, e->fanout))
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u may not join node %u (not in its subtree)", s,
					     e->self);
		if (dtplan_wire_join_decode(c->body, h->body_len, &j, err) != DTPLAN_OK)
			return -1;
		if (j.n_nodes != e->n)
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u counts %u nodes in the job, not %u", s,
					     j.n_nodes, e->n);
		old = child_conn(e, s);
		if (old != NULL)
			conn_close(old); /* it came back: the new connection wins */
		if (!e->addr_known && e->self == 0 && e->o->addrs == NULL &&
		    (e->o->interface == NULL || e->o->interface[0] == '\0')) {
			struct sockaddr_storage local;
			socklen_t l = sizeof(local);

			if (getsockname(c->fd, (struct sockaddr *)&local, &l) == 0) {
				dtprobe__addr_to_wire(&local, e->port, &e->my_addr);
				e->addr_known = true;
			}
		}
		/* its greeting was this node's answer (accept_all()) */
		c->kind = C_CHILD;
		c->node = s;
		e->any_join = true;
		return 0;
	}
	case DTPLAN_WIRE_PROBE: {
		struct dtplan_wire_probe p;
		struct dtprobe__slot sl;
		uint32_t r = h->round;

		if (dtplan_wire_probe_decode(c->body, h->body_len, &p, err) != DTPLAN_OK)
			return -1;
		if (!e->have_go || r < 1 || r > e->go.n_rounds ||
		    e->mine.peer[r - 1] != (int32_t)s || e->mine.sends[r - 1] || p.from != s ||
		    p.to != e->self)
			return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0,
					     "node %u is not node %u's prober in round %u", s,
					     e->self, r);
		c->srv = dtprobe__link_srv_create(&p, r);
		if (c->srv == NULL)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
		c->kind = C_PROBE;
		c->node = s;
		c->msg_deadline = 0;
		/* the report is due at a fixed time of the round, whatever still drains */
		dtprobe__slot_of(&e->go, e->t_rounds, r, &sl);
		c->idle_deadline = fmin(sl.report_at, e->deadline);
		c->round_end = fmin(sl.end, e->deadline);
		return 0;
	}
	case DTPLAN_WIRE_INVENTORY + 16: {
		struct dtplan_wire_inventory v;
		enum dtplan_err rv;

		if (s != c->node)
			break;
		if (dtplan_wire_inventory_decode(c->body, h->body_len, e->n, &v, err) != DTPLAN_OK)
			return -1;
		rv = merge_inventory(e, s, &v, err);
		dtplan_wire_inventory_fini(&v);
		if (rv != DTPLAN_OK)
			return -1;
		c->inventory_in = true;
		return 0;
	}
	case DTPLAN_WIRE_RESULTS + 16: {
		struct dtplan_wire_results r;
		enum dtplan_err rv;

		if (s != c->node)
			break;
		if (dtplan_wire_results_decode(c->body, h->body_len, &r, err) != DTPLAN_OK)
			return -1;
		rv = merge_results(e, s, &r, err);
		dtplan_wire_results_fini(&r);
		if (rv != DTPLAN_OK)
			return -1;
		c->results_in = true;
		return 0;
	}
	default:
		break;
	}
	return dtplan__error(err, DTPLAN_ERR_POLICY, "probe", 0, "a %s message from node %u %s",
			     dtplan_wire_type_name(h->type), s,
			     c->kind == C_NEW ? "before it joined" : "that it may not send here");
}

/* The go from the parent: this node's partners and the subtree's. */
static int on_go(struct engine *e, const uint8_t *body, size_t len, struct dtplan_error *err)
{
	struct dtplan_wire_go g;
	double t = now();
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
	e->res_deadline =
		fmin(e->t_end + 0.05 + 0.03 * (double)(e->depth - e->my_depth), e->deadline);
	forward_go(e, g.assign, g.n_assign, t);
	free(g.assign);
	return 0;
}

/* ------------------------------------------------------------------------
 * The uplink
 * ---------------------------------------------------------------------- */

static void up_fail(struct engine *e, const char *why)
{
	struct uplink *u = &e->up;

	dtplan__log(DTPLAN_LOG_DEBUG, "probe: node %u: node %u (port candidate %u): %s", e->self,
		    u->target, u->cand, why);
	conn_close(&u->rx);
	u->state = U_IDLE;
	u->next_try = now();
	if (++u->cand >= (e->o->addrs != NULL ? 1u : (unsigned)DTPLAN__PORT_TRIES)) {
		u->cand = 0;
		u->next_try = now() + RETRY_S;
	}
	/* no answer for long enough: the parent's parent stands in */
	if (now() >= u->fallback_at && u->target != 0) {
		dtplan__log(DTPLAN_LOG_INFO,
			    "probe: job %u node %u: node %u does not answer; "
			    "joining node %u",
			    e->o->job_id, e->self, u->target,
			    dtplan_probe_tree_parent(u->target, e->fanout));
		u->target = dtplan_probe_tree_parent(u->target, e->fanout);
		u->resolved = false;
		u->cand = 0;
		u->fallback_at = now() + 0.3;
	}
}

static void up_try(struct engine *e)
{
	struct uplink *u = &e->up;
	struct dtplan_error err = {0};

	if (!u->resolved) {
		if (e->o->addrs != NULL) {
			u->addr = e->o->addrs[u->target];
		} else if (dtprobe__resolve(e->o->hosts[u->target], 0, &u->addr, &err) !=
			   DTPLAN_OK) {
			u->next_try = now() + 0.1;
			u->fallback_at = fmin(u->fallback_at, now());
			up_fail(e, err.text);
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
		up_fail(e, strerror(errno));
		return;
	}
	dtprobe__addr_text(&u->addr, u->rx.where, sizeof(u->rx.where));
	u->state = U_CONNECTING;
	u->deadline = now() + CONNECT_S;
}

static void up_connected(struct engine *e)
{
	struct uplink *u = &e->up;
	int rc = dtprobe__connect_done(u->rx.fd);

	if (rc != 0) {
		up_fail(e, strerror(rc));
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
	u->deadline = now() + ACK_S;
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
		reject(e, c->where, &err);
		up_fail(e, "rejected");
		return;
	}
	if (u->state == U_JOINING) {
		/* the greeting: only now does this node say anything */
		if (dtprobe__hello_check(&e->rules, &c->h, c->body, u->target,
					 dtprobe__addr_port(&u->addr), &err) != DTPLAN_OK) {
			reject(e, c->where, &err);
			up_fail(e, "rejected");
			return;
		}
		if (send_join(e, c->fd, &err) != DTPLAN_OK) {
			conn_reset_msg(c);
			up_fail(e, err.text);
			return;
		}
		u->state = U_UP;
		e->sent_entries = 0; /* a new parent hears everything */
		e->results_sent = false;
	} else if (u->state == U_UP && c->h.type == DTPLAN_WIRE_GO) {
		if (on_go(e, c->body, c->h.body_len, &err) != 0)
			reject(e, c->where, &err);
	} else {
		dtplan__error(&err, DTPLAN_ERR_POLICY, "probe", 0, "an unexpected %s message",
			      dtplan_wire_type_name(c->h.type));
		reject(e, c->where, &err);
	}
	conn_reset_msg(c);
}

/* ------------------------------------------------------------------------
 * The event loop
 * ---------------------------------------------------------------------- */

static void accept_all(struct engine *e)
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
			reject(e, dtprobe__addr_text(&a, where, sizeof(where)), &err);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->kind = C_NEW;
		c->idle_deadline = now() + FIRST_MSG_S;
		dtprobe__sock_tune(fd, 0);
		dtprobe__addr_text(&a, c->where, sizeof(c->where));
		/* this node speaks first: the other sends nothing before it knows
		 * whom it reached (probes/net.c) */
		if (dtprobe__hello_send(fd, &e->rules, e->self, e->port,
					fmin(now() + ACK_S, e->deadline), &err) != DTPLAN_OK) {
			dtplan__log(DTPLAN_LOG_WARNING, "probe: job %u node %u: %s: %s",
				    e->o->job_id, e->self, c->where, err.text);
			conn_close(c);
		}
	}
}

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
			conn_close(c);
		return;
	}
	for (;;) {
		rc = conn_read(e, c, &err);
		if (rc == 0)
			return;
		if (rc == -2) {
			/* a child closed: it is done, or it died */
			conn_close(c);
			return;
		}
		if (rc < 0 || on_message(e, c, &err) != 0) {
			reject(e, c->where, &err);
			conn_close(c);
			return;
		}
		conn_reset_msg(c);
		if (c->kind == C_PROBE)
			return conn_event(e, c);
	}
}

static void up_event(struct engine *e, short revents)
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
		rc = conn_read(e, &u->rx, &err);
		if (rc == 0)
			return;
		if (rc == -2) {
			up_fail(e, "the connection closed");
			return;
		}
		if (rc < 0) {
			reject(e, u->rx.where, &err);
			up_fail(e, "rejected");
			return;
		}
		up_message(e);
		if (u->state != U_JOINING && u->state != U_UP)
			return;
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
	double t = now();

	own_entry(e);
	if (e->self == 0) {
		size_t have = 0;

		for (uint32_t i = 0; i < e->n; i++)
			have += e->have_entry[i];
		if (!e->have_go && (have == e->n || t >= e->inv_deadline ||
				    (!e->any_join && e->n > 1 &&
				     t >= e->start + fmin(1.5, 0.3 * e->o->params.budget_s)))) {
			if (!e->any_join && e->n > 1)
				note(e,
				     "no other node joined within %.1f s: the prolog ran on %s "
				     "only (is PrologFlags=Alloc set in slurm.conf?)",
				     t - e->start, e->o->hosts[0]);
			plan_rounds(e);
			if (e->assign != NULL)
				forward_go(e, e->assign, e->n, t);
		}
		return;
	}
	if (e->up.state == U_UP && !e->have_go && e->have_entry[e->self] &&
	    (children_in(e, false) || t >= e->inv_deadline))
		send_inventory(e);
	if (e->up.state == U_UP && e->rounds_over && !e->results_sent &&
	    (children_in(e, true) || t >= e->res_deadline))
		send_results(e);
}

/* Runs the loop until `until` or stop(e). */
static void serve(struct engine *e, double until, bool (*stop)(const struct engine *))
{
	struct pollfd *p = calloc(e->max_conns + 3, sizeof(*p));

	if (p == NULL)
		return;
	for (;;) {
		double t = now(), wake = until;
		size_t np = 0, up_ix = SIZE_MAX, disc_ix = SIZE_MAX;
		int rc;

		progress(e);
		if (t >= until || (stop != NULL && stop(e)))
			break;
		/* timers */
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
				conn_close(c);
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
					reject(e, c->where, &err);
				conn_close(c);
				continue;
			}
			wake = fmin(wake, d);
		}
		if (e->self != 0 && e->up.state == U_IDLE && t >= e->up.next_try)
			up_try(e);
		if ((e->up.state == U_CONNECTING || e->up.state == U_JOINING) &&
		    t >= e->up.deadline)
			up_fail(e, "no answer");
		if (e->self != 0 && e->up.state == U_IDLE)
			wake = fmin(wake, e->up.next_try);
		if (e->up.state == U_CONNECTING || e->up.state == U_JOINING)
			wake = fmin(wake, e->up.deadline);
		if (!e->have_go)
			wake = fmin(wake, e->inv_deadline);
		wake = fmin(wake, t + 0.05); /* progress() checks its own clocks */
		p[np].fd = e->lfd;
		p[np++].events = POLLIN;
		if (!e->disc_done && e->thread_started) {
			disc_ix = np;
			p[np].fd = e->pipe[0];
			p[np++].events = POLLIN;
		}
		if (e->up.state == U_CONNECTING || e->up.state == U_JOINING ||
		    e->up.state == U_UP) {
			up_ix = np;
			p[np].fd = e->up.rx.fd;
			p[np++].events = e->up.state == U_CONNECTING ? POLLOUT : POLLIN;
		}
		for (size_t k = 0; k < e->max_conns; k++) {
			if (e->conns[k].kind == C_FREE)
				continue;
			p[np].fd = e->conns[k].fd;
			p[np++].events = POLLIN;
		}
		rc = poll(p, np, dtprobe__poll_ms(wake));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		if (p[0].revents & POLLIN)
			accept_all(e);
		if (disc_ix != SIZE_MAX && (p[disc_ix].revents & POLLIN))
			on_discovered(e);
		if (up_ix != SIZE_MAX && p[up_ix].revents)
			up_event(e, p[up_ix].revents);
		for (size_t k = 0,
			    i = up_ix != SIZE_MAX ? up_ix + 1 : (disc_ix != SIZE_MAX ? 2 : 1);
		     k < e->max_conns; k++) {
			struct conn *c = &e->conns[k];

			if (c->kind == C_FREE)
				continue;
			/* connections accepted during this turn are not in p[] yet */
			if (i >= np || p[i].fd != c->fd)
				continue;
			if (p[i++].revents)
				conn_event(e, c);
		}
	}
	free(p);
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
		if (add_link(e, &l) != DTPLAN_OK)
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
		conn_close(&e->conns[k]);
	conn_close(&e->up.rx);
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

/* The leader's measurement file from what arrived. */
static enum dtplan_err measure(struct engine *e, struct dtplan_measure_file *out,
			       struct dtplan_error *err)
{
	struct dtplan_measure_in in = {0};
	struct dtplan_measurements *m = NULL;
	int32_t *leaf = leaves(e);
	uint8_t *complete = calloc(e->n, 1);
	enum dtplan_err rv = DTPLAN_ERR_NOMEM;

	out->records = calloc(e->n_records + 1, sizeof(*out->records));
	out->host_record = malloc(e->n * sizeof(*out->host_record));
	if (complete == NULL || out->records == NULL || out->host_record == NULL) {
		rv = dtplan__error(err, rv, "probe", 0, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < e->n_records; k++) {
		struct dtplan_error e2 = {0};

		if (dtplan_node_from_json(e->records[k], &out->records[k], &e2) != DTPLAN_OK)
			note(e, "an inventory record does not read back: %s", e2.text);
		out->n_records++;
	}
	for (uint32_t i = 0; i < e->n; i++)
		out->host_record[i] = -1;
	for (size_t k = 0; k < e->n_entries; k++) {
		const struct dtplan_wire_entry *x = &e->entries[k];

		if (x->record == DTPLAN_WIRE_NO_RECORD)
			note(e, "%s has no inventory: %s", e->o->hosts[x->node], x->note);
		else
			out->host_record[x->node] = (int32_t)x->record;
		if (x->record != DTPLAN_WIRE_NO_RECORD && x->addr.family == 0 && x->note[0] != '\0')
			note(e, "%s took no part in the link probes: %s", e->o->hosts[x->node],
			     x->note);
	}
	for (uint32_t i = 0; i < e->n; i++)
		complete[i] =
			e->done[i] || (e->present != NULL && !e->present[i] && e->have_entry[i]);
	in.source = e->o->source != NULL ? e->o->source : "probe";
	in.n_nodes = e->n;
	in.hosts = e->o->hosts;
	in.leaf = leaf;
	in.topology = e->o->topology;
	in.reported = e->have_entry;
	in.complete = complete;
	in.n_links = e->n_links;
	in.links = e->links;
	in.budget_s = e->o->params.budget_s;
	in.elapsed_s = now() - e->start;
	in.interface = e->o->interface;
	rv = dtplan_measurements_analyze(&in, &m, err);
	if (rv != DTPLAN_OK)
		goto out;
	for (size_t k = 0; k < e->notes->n_notes; k++)
		dtplan_measurements_add_note(m, "%s", e->notes->notes[k]);
	if (e->rejected > 0)
		dtplan_measurements_add_note(m, "%zu message%s rejected on %s (see its slurmd log)",
					     e->rejected, e->rejected == 1 ? "" : "s",
					     e->o->hosts[0]);
	out->m = m;
	out->job_id = e->o->job_id;
out:
	free(leaf);
	free(complete);
	if (rv != DTPLAN_OK)
		dtplan_measure_file_fini(out);
	return rv;
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
	e.start = o->start_s > 0 ? o->start_s : now();
	b = o->params.budget_s;
	e.deadline = e.start + b;
	e.inv_deadline = e.start + b * fmax(0.2, 0.45 - 0.04 * (double)e.my_depth);
	e.seed = o->job_id * 31u + o->session * 7919u;
	e.rules.job_id = o->job_id;
	e.rules.session = o->session;
	e.rules.n_nodes = e.n;
	e.rules.uid = o->uid;
	e.rules.auth = o->auth;
	e.max_conns = e.fanout + EXTRA_CONNS;
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
	e.up.fallback_at = e.start + fmin(1.0, 0.2 * b);
	dtplan__log(DTPLAN_LOG_DEBUG, "probe: job %u node %u of %u listens on port %u", o->job_id,
		    e.self, e.n, e.port);
	/* inventories up, the schedule down */
	serve(&e, e.deadline - (e.self == 0 ? WRITE_RESERVE_S : 0), has_go);
	if (e.have_go) {
		run_rounds(&e);
		serve(&e, e.self == 0 ? e.res_deadline : e.deadline, results_done);
	}
	/* The discovery is bounded by the callback's own timeout (the caller
	 * gives it a share of the budget): engine_fini() waits for it. */
	if (e.self == 0) {
		if (!e.disc_done)
			note(&e, "%s's own discovery did not end within the budget", o->hosts[0]);
		rv = measure(&e, out, err);
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
