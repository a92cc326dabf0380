/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_switches.c: the fabric answer's switches: each read once, their
 * names indexed, children and parents linked, cycles refused, those over a
 * job's nodes kept, and one topology line (and at most one site line) each.
 * See fabric_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/fabric_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_switch(const struct jparse *p, const char *name)
{
	return dtplan__strmap_get(&p->index, name);
}

/*
 * Runs one of a later pass's checks while switch i is read (rv, its
 * outcome, with p->err pointed at e): the first fault is kept for that pass
 * (struct late).
 */
static void keep_late(struct jparse *p, int pass, size_t i, enum dtplan_err rv,
		      const struct dtplan_error *e)
{
	if (rv != DTPLAN_OK && p->late[pass].at == NONE) {
		p->late[pass].at = i;
		p->late[pass].e = *e;
	}
}

/* A kept fault said by its pass. */
static enum dtplan_err say_late(struct jparse *p, int pass)
{
	if (p->err != NULL)
		*p->err = p->late[pass].e;
	return p->late[pass].e.code;
}

/* A quantity as a kept string (NONE when absent); a fault kept for dtplan__fabric_emit_switch(). */
static size_t keep_quantity(struct jparse *p, size_t i, const char *where, json_t *sw,
			    const char *key, const char *unit)
{
	struct dtplan_error e = {0}, *saved = p->err;
	char buf[64];
	enum dtplan_err rv;

	p->err = &e;
	rv = dtplan__fabric_get_quantity(p, where, sw, key, unit, buf, sizeof(buf));
	p->err = saved;
	keep_late(p, LATE_EMIT, i, rv, &e);
	return rv == DTPLAN_OK && buf[0] != '\0' ? dtplan__text_keep(&p->strings, buf) : NONE;
}

/*
 * Switch i, read once: what the first pass checks (an object, its name and
 * keys) is said at once; what the later passes need is kept in p->sw[i],
 * and the first fault each of them would find with it (struct late).
 */
static enum dtplan_err read_switch(struct jparse *p, size_t i, json_t *sw)
{
	static const char *const keys[] = {"name",
					   "nodes",
					   "switches",
					   "parent",
					   "link_speed",
					   "oversubscription",
					   "uplink_bandwidth",
					   NULL};
	struct jswitch *r = &p->sw[i];
	struct dtplan_error e = {0}, *saved = p->err;
	char where[128], name[64], parent_buf[64];
	const char *parent = NULL;
	enum dtplan_err rv;
	bool has_nodes;
	json_t *v;

	*r = (struct jswitch){NONE, NONE, NONE, NONE, NONE, NONE, NONE, 0, NONE, KIDS_NONE};
	p->parent[i] = -1;
	snprintf(where, sizeof(where), "switches[%zu]", i);
	if (!json_is_object(sw))
		return dtplan__fabric_fail(p, where, "must be an object");
	if (dtplan__jget_str(sw, p->source, where, "name", DTPLAN_JGET_REQUIRED, name, sizeof(name),
			     p->err) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	if (!dtplan__fabric_token_safe(name))
		return dtplan__fabric_fail(p, where, "\"name\" must be a switch name");
	r->name = dtplan__text_keep(&p->strings, name);
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, name);
	if (dtplan__fabric_check_keys(p, where, sw, keys) != DTPLAN_OK)
		return DTPLAN_ERR_PARSE;
	/* "switches", for the children's pass */
	v = json_object_get(sw, "switches");
	if (json_is_string(v)) {
		r->kids_kind = KIDS_HOSTLIST;
		r->kids = dtplan__text_keep(&p->strings, json_string_value(v));
	} else if (v != NULL && (!json_is_array(v) || json_array_size(v) == 0)) {
		r->kids_kind = KIDS_BAD;
	} else if (v != NULL) {
		json_t *c;
		size_t k;

		r->kids_kind = KIDS_NAMES;
		r->n_named = json_array_size(v);
		p->scratch.len = 0;
		json_array_foreach(v, k, c)
		{
			if (!json_is_string(c) || !dtplan__fabric_name_safe(json_string_value(c)) ||
			    strlen(json_string_value(c)) >= sizeof(p->children[0][0])) {
				r->bad_name = k;
				break;
			}
			dtplan__text_add(&p->scratch, "%s%s", k > 0 ? "," : "",
					 json_string_value(c));
		}
		if (r->bad_name == NONE)
			r->kids = dtplan__text_keep(&p->strings, p->scratch.s ? p->scratch.s : "");
	}
	/* "parent", for dtplan__fabric_link_parent() */
	p->err = &e;
	rv = dtplan__fabric_get_string(p, where, sw, "parent", parent_buf, sizeof(parent_buf),
				       &parent);
	p->err = saved;
	keep_late(p, LATE_PARENT, i, rv, &e);
	if (parent != NULL)
		r->parent = dtplan__text_keep(&p->strings, parent);
	/* the rest, for dtplan__fabric_emit_switch(), in its order */
	r->speed = keep_quantity(p, i, where, sw, "link_speed", "B/s");
	r->ratio = keep_quantity(p, i, where, sw, "oversubscription", "");
	r->uplink = keep_quantity(p, i, where, sw, "uplink_bandwidth", "B/s");
	p->scratch.len = 0;
	if (p->scratch.s != NULL)
		p->scratch.s[0] = '\0';
	p->err = &e;
	rv = dtplan__fabric_add_list(p, where, sw, "nodes", &p->scratch, &has_nodes);
	p->err = saved;
	keep_late(p, LATE_EMIT, i, rv, &e);
	if (rv == DTPLAN_OK && has_nodes)
		r->nodes = dtplan__text_keep(&p->strings, p->scratch.s ? p->scratch.s : "");
	return DTPLAN_OK;
}

/* Switch i of the answer, a reference the caller drops; NULL when its text
 * does not parse (the whole document then says why). */
static json_t *element(const struct jparse *p, size_t i)
{
	json_error_t jerr;

	if (p->spans == NULL)
		return json_incref(json_array_get(p->arr, i));
	return json_loadb(p->text + p->spans[i].at, p->spans[i].len,
			  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
}

/* Whether the switches from `from` on parse (a fault is only said of a
 * document that does). */
static bool rest_parses(const struct jparse *p, size_t from)
{
	for (size_t i = from; p->spans != NULL && i < p->n_switches; i++) {
		json_t *sw = element(p, i);

		if (sw == NULL)
			return false;
		json_decref(sw);
	}
	return true;
}

/*
 * First pass over the switches: each read once (read_switch()), then the
 * names' index, then the children named by "switches".  *whole is set when
 * a switch's text does not parse: the caller then reads the whole document.
 */
enum dtplan_err dtplan__fabric_collect_switches(struct jparse *p, bool *whole)
{
	struct dtplan_error e = {0};
	char where[128];
	size_t i, listed = 0;

	p->names = calloc(p->n_switches + 1, sizeof(*p->names));
	p->children = calloc(p->n_switches + 1, sizeof(*p->children));
	p->n_children = calloc(p->n_switches + 1, sizeof(*p->n_children));
	p->parent = malloc((p->n_switches + 1) * sizeof(*p->parent));
	p->cap_children = calloc(p->n_switches + 1, sizeof(*p->cap_children));
	p->sw = malloc((p->n_switches + 1) * sizeof(*p->sw));
	if (p->names == NULL || p->children == NULL || p->n_children == NULL || p->parent == NULL ||
	    p->cap_children == NULL || p->sw == NULL ||
	    dtplan__strmap_init(&p->index, p->n_switches) != DTPLAN_OK)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	for (int k = 0; k < N_LATE; k++)
		p->late[k].at = NONE;
	for (i = 0; i < p->n_switches; i++) {
		json_t *sw = element(p, i);
		enum dtplan_err rv;

		if (sw == NULL) {
			*whole = true;
			return DTPLAN_ERR_PARSE;
		}
		rv = read_switch(p, i, sw);
		json_decref(sw);
		if (rv != DTPLAN_OK && !rest_parses(p, i + 1)) {
			*whole = true;
			return DTPLAN_ERR_PARSE;
		}
		if (rv != DTPLAN_OK)
			return rv;
	}
	if (p->strings.failed || p->scratch.failed)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	for (i = 0; i < p->n_switches; i++) {
		p->names[i] = p->strings.s + p->sw[i].name;
		/* a name given twice keeps its first switch (topology.conf's
		 * reader then names the second) */
		enum dtplan_err rv = dtplan__strmap_put(&p->index, p->names[i], (int)i, NULL);

		if (rv == DTPLAN_ERR_NOMEM)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		p->duplicate |= rv == DTPLAN_ERR_INVAL;
	}
	/* Children from "switches" (names or hostlists), expanded once. */
	for (i = 0; i < p->n_switches; i++) {
		const struct jswitch *r = &p->sw[i];
		const char *kids = r->kids != NONE ? p->strings.s + r->kids : NULL;

		if (r->kids_kind == KIDS_NONE)
			continue;
		snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
		if (r->kids_kind == KIDS_HOSTLIST) {
			/* Bounded before it expands: each switch has one parent, so
			 * all the lists together name at most the answer's switches
			 * (a 2 KB answer naming c[1-1000000] in every switch took
			 * gigabytes). */
			if (dtplan_hostlist_expand(kids, p->n_switches - listed, &p->children[i],
						   &p->n_children[i], &e) != DTPLAN_OK)
				return e.code == DTPLAN_ERR_RANGE
					       ? dtplan__fabric_fail(p, where,
								     "\"switches\": the answer's "
								     "lists name more "
								     "than its %zu switches",
								     p->n_switches)
					       : dtplan__fabric_fail(p, where, "\"switches\": %s",
								     e.text);
			listed += p->n_children[i];
			continue;
		}
		if (r->kids_kind == KIDS_BAD)
			return dtplan__fabric_fail(p, where,
						   "\"switches\" must be a hostlist string or a "
						   "non-empty array of names");
		if (r->n_named > p->n_switches - listed)
			return dtplan__fabric_fail(
				p, where,
				"\"switches\": the answer's lists name more than its %zu "
				"switches",
				p->n_switches);
		if (r->bad_name != NONE)
			return dtplan__fabric_fail(p, where, "\"switches\"[%zu] is not a name",
						   r->bad_name);
		p->children[i] = calloc(r->n_named, sizeof(*p->children[i]));
		if (p->children[i] == NULL)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		for (size_t k = 0; k < r->n_named; k++) {
			size_t n = strcspn(kids, ",");

			memcpy(p->children[i][k], kids, n);
			p->children[i][k][n] = '\0';
			kids += n + (kids[n] == ',');
		}
		p->n_children[i] = r->n_named;
		listed += p->n_children[i];
	}
	for (i = 0; i < p->n_switches; i++) {
		for (size_t k = 0; k < p->n_children[i]; k++) {
			int c = find_switch(p, p->children[i][k]);

			if (c >= 0 && p->parent[c] < 0)
				p->parent[c] = (int)i;
		}
	}
	return DTPLAN_OK;
}

/* A switch's "parent": agrees with the switch that lists it, or adds it. */
enum dtplan_err dtplan__fabric_link_parent(struct jparse *p, size_t i)
{
	const char *parent;
	char where[128], (*tmp)[64];
	int q;

	if (p->late[LATE_PARENT].at == i)
		return say_late(p, LATE_PARENT);
	if (p->sw[i].parent == NONE)
		return DTPLAN_OK;
	parent = p->strings.s + p->sw[i].parent;
	q = find_switch(p, parent);
	if (q >= 0 && p->parent[i] == q)
		return DTPLAN_OK;
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
	if (q < 0)
		return dtplan__fabric_fail(p, where, "parent '%s' is not a switch of \"switches\"",
					   parent);
	if (p->parent[i] >= 0 && p->parent[i] != q)
		return dtplan__fabric_fail(p, where,
					   "parent '%s', but '%s' lists it in \"switches\"", parent,
					   p->names[p->parent[i]]);
	if (strlen(p->names[i]) >= sizeof(tmp[0]))
		return dtplan__fabric_fail(p, where, "name longer than %zu characters",
					   sizeof(tmp[0]) - 1);
	if (p->n_children[q] >= p->cap_children[q]) {
		/* doubling: 200,000 leaves naming one spine grew it one by one,
		 * quadratic where realloc copies */
		size_t cap = 2 * p->n_children[q] < 8 ? 8 : 2 * p->n_children[q];

		tmp = realloc(p->children[q], cap * sizeof(*tmp));
		if (tmp == NULL)
			return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0,
					     "out of memory");
		p->children[q] = tmp;
		p->cap_children[q] = cap;
	}
	tmp = p->children[q];
	dtplan__strlcpy(tmp[p->n_children[q]++], p->names[i], sizeof(tmp[0]));
	p->parent[i] = q;
	return DTPLAN_OK;
}

/*
 * No switch is its own ancestor (dtplan__tree_cycle()).  A cycle is named by its switches, as the answer
 * gave them ("a cycle of parents: leaf1 -> spine -> leaf1").
 */
static int parent_of(const void *ctx, int i)
{
	return ((const struct jparse *)ctx)->parent[i];
}

enum dtplan_err dtplan__fabric_check_cycles(struct jparse *p)
{
	int s = dtplan__tree_cycle(p->n_switches, parent_of, p);
	char where[128], path[600];
	size_t used = 0;
	int k, n = 0;

	if (s == -2)
		return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
	if (s < 0)
		return DTPLAN_OK;
	/* s is on a cycle: name it, at most 8 switches of it */
	k = s;
	do {
		used += (size_t)snprintf(path + used, sizeof(path) - used, "%.64s -> ",
					 p->names[k]);
		k = p->parent[k];
	} while (k != s && ++n < 8 && used < sizeof(path) - 70);
	snprintf(path + used, sizeof(path) - used, "%s%.64s", k == s ? "" : "... -> ", p->names[s]);
	snprintf(where, sizeof(where), "switches[%d] (%.64s)", s, p->names[s]);
	return dtplan__fabric_fail(p, where, "a cycle of parents: %s", path);
}

/* One topology line and at most one site line per switch. */
enum dtplan_err dtplan__fabric_emit_switch(struct jparse *p, size_t i)
{
	const struct jswitch *r = &p->sw[i];
	const char *str = p->strings.s;
	char where[128];

	const char *sep = " Switches=";

	if (p->late[LATE_EMIT].at == i)
		return say_late(p, LATE_EMIT);
	if (p->keep != NULL && !p->keep[i])
		return DTPLAN_OK;
	snprintf(where, sizeof(where), "switches[%zu] (%.64s)", i, p->names[i]);
	dtplan__text_add(&p->topo, "SwitchName=%s%s", p->names[i],
			 r->nodes != NONE ? str + r->nodes : "");
	for (size_t k = 0; k < p->n_children[i]; k++) {
		int c = p->keep != NULL ? find_switch(p, p->children[i][k]) : -1;

		/* a child that is no switch stays, for topology.conf's reader to name */
		if (c >= 0 && !p->keep[c])
			continue;
		dtplan__text_add(&p->topo, "%s%s", sep, p->children[i][k]);
		sep = ",";
	}
	if (r->speed != NONE)
		dtplan__text_add(&p->topo, " LinkSpeed=%s", str + r->speed);
	dtplan__text_add(&p->topo, "\n");
	dtplan__fabric_label_add(&p->topo_lines, "%s", where);
	if (r->ratio == NONE && r->uplink == NONE)
		return DTPLAN_OK;
	dtplan__text_add(&p->site, "SwitchName=%s", p->names[i]);
	if (r->ratio != NONE)
		dtplan__text_add(&p->site, " Oversubscription=%s", str + r->ratio);
	if (r->uplink != NONE)
		dtplan__text_add(&p->site, " UplinkBandwidth=%s", str + r->uplink);
	dtplan__text_add(&p->site, "\n");
	dtplan__fabric_label_add(&p->site_lines, "%s", where);
	return DTPLAN_OK;
}

/*
 * Read for some nodes (a job's allocation, a hostlist): keeps the switches
 * that hold one of them and those above them, and writes out no other
 * (p->keep).  Every check of the answer itself has run on all of them;
 * topology.conf's reader then checks what is written out.  A switch whose
 * nodes do not read as a hostlist is kept, for that reader to say why; an
 * answer that names two switches alike, or none of whose switches holds one
 * of the nodes, is written out whole.
 */
enum dtplan_err dtplan__fabric_mark_kept(struct jparse *p, const char *nodes)
{
	struct dtplan__strmap want = {0};
	char(*names)[64] = NULL;
	size_t n = 0, kept = 0;
	enum dtplan_err rv = DTPLAN_OK;

	if (nodes == NULL || p->duplicate ||
	    dtplan_hostlist_expand(nodes, DTPLAN_HOSTLIST_MAX, &names, &n, NULL) != DTPLAN_OK)
		return DTPLAN_OK;
	p->keep = calloc(p->n_switches + 1, 1);
	if (p->keep == NULL || dtplan__strmap_init(&want, n) != DTPLAN_OK) {
		rv = dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		if (dtplan__strmap_put(&want, names[k], (int)k, NULL) == DTPLAN_ERR_NOMEM) {
			rv = dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, 0, "out of memory");
			goto out;
		}
	for (size_t i = 0; i < p->n_switches; i++) {
		const char *list = p->sw[i].nodes != NONE ? p->strings.s + p->sw[i].nodes : NULL;
		bool hit = false;

		if (list == NULL)
			continue;
		list += strlen(" Nodes=");
		if (strchr(list, '[') == NULL) {
			/* names: each looked up */
			while (!hit && *list != '\0') {
				size_t len = strcspn(list, ",");
				char name[64];

				hit = len >= sizeof(name);
				if (!hit) {
					memcpy(name, list, len);
					name[len] = '\0';
					hit = dtplan__strmap_get(&want, name) >= 0;
				}
				list += len + (list[len] == ',');
			}
		} else {
			for (size_t k = 0; !hit && k < n; k++) {
				bool match = false;

				hit = dtplan_hostlist_match(list, names[k], &match, NULL) !=
					      DTPLAN_OK ||
				      match;
			}
		}
		for (int s = (int)i; hit && s >= 0 && !p->keep[s]; s = p->parent[s]) {
			p->keep[s] = 1;
			kept++;
		}
	}
	if (kept == 0) {
		free(p->keep);
		p->keep = NULL;
	}
out:
	dtplan__strmap_fini(&want);
	free(names);
	return rv;
}
