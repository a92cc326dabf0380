/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous_tree.c: the probe engine's fan-in tree (doc/internals/probe.md,
 * steps 3, 4 and 7).
 *
 * What arrives from below: a child's join (only from this node's subtree),
 * its inventories (equal records merged by text), its results, and a
 * prober's probe on a connection of its own.  What goes up: this node's
 * entry and its subtree's inventories, then its subtree's results, each
 * once every child has sent its own or the wait is over (the driver,
 * rendezvous.c, says when).  A child speaks only for its own subtree.
 */
#include "config.h"

#include "rendezvous_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
void dtprobe__rdv_own_entry(struct engine *e)
{
	struct dtplan_wire_entry me;
	char *text = NULL;
	struct dtplan_error err = {0};

	/* the leader's address is known once a child joins; dtprobe__rdv_plan_rounds() fills it */
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
void dtprobe__rdv_send_inventory(struct engine *e)
{
	struct dtplan_wire_inventory v = {0};
	struct dtplan_wire_header h = dtprobe__rdv_header(e, DTPLAN_WIRE_INVENTORY, 0);
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
			      fmin(dtprobe__rdv_now() + RDV_MSG_S, e->deadline), &err) != DTPLAN_OK)
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
bool dtprobe__rdv_children_in(const struct engine *e, bool results)
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
 * Results
 * ---------------------------------------------------------------------- */

enum dtplan_err dtprobe__rdv_add_link(struct engine *e, const struct dtplan_link_result *l)
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
		if (dtprobe__rdv_add_link(e, &r->links[i]) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "probe", 0, "out of memory");
	return DTPLAN_OK;
}

void dtprobe__rdv_send_results(struct engine *e)
{
	struct dtplan_wire_results r = {0};
	struct dtplan_wire_header h = dtprobe__rdv_header(e, DTPLAN_WIRE_RESULTS, 0);
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
			      fmin(dtprobe__rdv_now() + RDV_MSG_S, e->deadline), &err) != DTPLAN_OK)
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
int dtprobe__rdv_on_message(struct engine *e, struct conn *c, struct dtplan_error *err)
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
			dtprobe__rdv_conn_close(old); /* it came back: the new connection wins */
		if (!e->addr_known && e->self == 0 && e->o->addrs == NULL &&
		    (e->o->interface == NULL || e->o->interface[0] == '\0')) {
			struct sockaddr_storage local;
			socklen_t l = sizeof(local);

			if (getsockname(c->fd, (struct sockaddr *)&local, &l) == 0) {
				dtprobe__addr_to_wire(&local, e->port, &e->my_addr);
				e->addr_known = true;
			}
		}
		/* its greeting was this node's answer (dtprobe__rdv_accept_all()) */
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
