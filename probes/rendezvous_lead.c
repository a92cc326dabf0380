/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rendezvous_lead.c: the probe engine's leader, node 0
 * (doc/internals/probe.md, steps 5 and 8).
 *
 * The schedule of the present nodes (lib/measure/probe_schedule.c) and its
 * timing, fitted into what the budget leaves; the go messages down the tree
 * (also forwarded by every other node, rendezvous_up.c); the notes; and the
 * measurement, the analysis of what arrived (lib/measure/measure.c), which
 * the caller writes to the spool file.
 */
#include "config.h"

#include "rendezvous_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The leader's schedule
 * ---------------------------------------------------------------------- */

void dtprobe__rdv_note(struct engine *e, const char *fmt, ...)
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
void dtprobe__rdv_plan_rounds(struct engine *e)
{
	const struct dtplan_probe_params *p = &e->o->params;
	struct dtplan_probe_schedule *s = NULL;
	struct dtplan_error err = {0};
	int32_t *leaf = leaves(e), *entry_of = NULL;
	double t = dtprobe__rdv_now(),
	       delay = RDV_GO_DELAY_S + RDV_GO_DELAY_LEVEL_S * (double)e->depth, slot = p->slot_s,
	       avail;
	double margin = RDV_RES_MARGIN_S + RDV_RES_MARGIN_LEVEL_S * (double)e->depth;
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
		dtprobe__rdv_note(e, "no link probes: %s", err.text);
		goto out;
	}
	rounds = s->n_rounds;
	avail = e->deadline - RDV_WRITE_RESERVE_S - margin - delay - t;
	if (rounds > 0 && avail < (double)rounds * slot)
		slot = avail / (double)rounds;
	if (rounds > 0 && slot < RDV_MIN_SLOT_S) {
		dtprobe__rdv_note(
			e, "no link probes: %.2f s of the %g s budget left after the inventories",
			e->deadline - t, p->budget_s);
		rounds = 0;
	}
	e->go.delay_us = (uint32_t)(delay * 1e6);
	e->go.slot_us = (uint32_t)(slot * 1e6);
	e->go.n_rounds = (uint32_t)rounds;
	e->go.ping_count = p->ping_count;
	e->go.ping_bytes = p->ping_bytes;
	e->go.ping_window_us = (uint32_t)(fmin(p->ping_window_s, RDV_PING_SLOT_FRAC * slot) * 1e6);
	/* pings, bulk, the drain allowance (links.c) and 50 ms for the report */
	e->go.bulk_us = (uint32_t)(fmax(0.0, fmin(p->bulk_s, slot - e->go.ping_window_us * 1e-6 -
								     RDV_DRAIN_S - RDV_REPORT_S)) *
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
	e->res_deadline =
		fmin(e->t_end + margin + RDV_RES_LEADER_EXTRA_S, e->deadline - RDV_WRITE_RESERVE_S);
out:
	if (!e->have_go) {
		e->have_go = true;
		e->t_rounds = e->t_end = t;
		e->res_deadline = fmin(t + margin, e->deadline - RDV_WRITE_RESERVE_S);
	}
	dtplan_probe_schedule_destroy(s);
	free(leaf);
	free(entry_of);
}

/* Sends each child the go with its subtree's assignments. */
void dtprobe__rdv_forward_go(struct engine *e, const struct dtplan_wire_assign *all, size_t n_all,
			     double received)
{
	for (size_t k = 0; k < e->max_conns; k++) {
		struct conn *c = &e->conns[k];
		struct dtplan_wire_go g = e->go;
		struct dtplan_wire_header h = dtprobe__rdv_header(e, DTPLAN_WIRE_GO, 0);
		struct dtplan_error err = {0};
		uint8_t *body = NULL;
		size_t len = 0;
		double spent = dtprobe__rdv_now() - received;

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
				      fmin(dtprobe__rdv_now() + RDV_MSG_S, e->deadline),
				      &err) != DTPLAN_OK)
			dtplan__log(DTPLAN_LOG_WARNING,
				    "probe: node %u: cannot send the schedule to "
				    "node %u: %s",
				    e->self, c->node, err.text);
		free(body);
		free(g.assign);
	}
}

/* The leader's measurement file from what arrived. */
enum dtplan_err dtprobe__rdv_measure(struct engine *e, struct dtplan_measure_file *out,
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
			dtprobe__rdv_note(e, "an inventory record does not read back: %s", e2.text);
		out->n_records++;
	}
	for (uint32_t i = 0; i < e->n; i++)
		out->host_record[i] = -1;
	for (size_t k = 0; k < e->n_entries; k++) {
		const struct dtplan_wire_entry *x = &e->entries[k];

		if (x->record == DTPLAN_WIRE_NO_RECORD)
			dtprobe__rdv_note(e, "%s has no inventory: %s", e->o->hosts[x->node],
					  x->note);
		else
			out->host_record[x->node] = (int32_t)x->record;
		if (x->record != DTPLAN_WIRE_NO_RECORD && x->addr.family == 0 && x->note[0] != '\0')
			dtprobe__rdv_note(e, "%s took no part in the link probes: %s",
					  e->o->hosts[x->node], x->note);
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
	in.elapsed_s = dtprobe__rdv_now() - e->start;
	in.interface = e->o->interface;
	rv = dtplan_measurements_analyze(&in, &m, err);
	if (rv != DTPLAN_OK)
		goto out;
	for (size_t k = 0; k < e->notes->n_notes; k++)
		dtplan_measurements_add_note(m, "%s", e->notes->notes[k]);
	m->n_notes_more += e->notes->n_notes_more;
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
