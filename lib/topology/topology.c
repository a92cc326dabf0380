/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology.c: the cluster's switch tree, linked from the switches (or
 * blocks) a topology file names or built from per-node SLURM_TOPOLOGY_ADDR
 * strings, and the lookups placement needs.  The readers fill the same
 * entries (struct dtplan__topo_entry): lib/topology/topology_tree.c topology.conf of
 * switches, lib/topology/topology_block.c of blocks, lib/topology/topology_yaml.c
 * topology.yaml; lib/topology/topology_file.c picks the reader for a file.
 *
 * Leaves (switches with nodes) are level 0; a switch is one level above its
 * highest child.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dtplan_topology_index {
	struct dtplan__strmap switches; /* keys borrowed from t->switches[].name */
	struct dtplan__strmap nodes;    /* keys borrowed from t->node_names[] */
};

void dtplan_topology_destroy(struct dtplan_topology *t)
{
	if (t == NULL)
		return;
	if (t->index != NULL) {
		dtplan__strmap_fini(&t->index->switches);
		dtplan__strmap_fini(&t->index->nodes);
		free(t->index);
	}
	free(t->switches);
	free(t->node_names);
	free(t->node_leaf);
	free(t);
}

static bool valid_name(const char *s)
{
	if (s[0] == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	return true;
}

/* Builds the name index over the final arrays; reports duplicates. */
static enum dtplan_err build_index(struct dtplan_topology *t, int *dup_switch, int *dup_first,
				   int *dup_node)
{
	struct dtplan_topology_index *ix;
	enum dtplan_err rv;
	int old;

	*dup_switch = -1;
	*dup_node = -1;
	ix = calloc(1, sizeof(*ix));
	if (ix == NULL)
		return DTPLAN_ERR_NOMEM;
	t->index = ix;
	rv = dtplan__strmap_init(&ix->switches, t->n_switches);
	if (rv == DTPLAN_OK)
		rv = dtplan__strmap_init(&ix->nodes, t->n_nodes);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t i = 0; i < t->n_switches; i++) {
		rv = dtplan__strmap_put(&ix->switches, t->switches[i].name, (int)i, &old);
		if (rv == DTPLAN_ERR_INVAL) {
			*dup_switch = (int)i;
			*dup_first = old;
			return rv;
		}
		if (rv != DTPLAN_OK)
			return rv;
	}
	for (size_t i = 0; i < t->n_nodes; i++) {
		rv = dtplan__strmap_put(&ix->nodes, t->node_names[i], (int)i, &old);
		if (rv == DTPLAN_ERR_INVAL) {
			*dup_node = (int)i;
			*dup_first = old;
			return rv;
		}
		if (rv != DTPLAN_OK)
			return rv;
	}
	return DTPLAN_OK;
}

int dtplan_topology_switch_index(const struct dtplan_topology *t, const char *name)
{
	if (t == NULL || name == NULL)
		return -1;
	if (t->index != NULL)
		return dtplan__strmap_get(&t->index->switches, name);
	for (size_t i = 0; i < t->n_switches; i++)
		if (strcmp(t->switches[i].name, name) == 0)
			return (int)i;
	return -1;
}

int dtplan_topology_node_index(const struct dtplan_topology *t, const char *name)
{
	if (t == NULL || name == NULL)
		return -1;
	if (t->index != NULL)
		return dtplan__strmap_get(&t->index->nodes, name);
	for (size_t i = 0; i < t->n_nodes; i++)
		if (strcmp(t->node_names[i], name) == 0)
			return (int)i;
	return -1;
}

/* ---- the entries every reader fills ---- */

enum dtplan_err dtplan__topo_entry_add(struct dtplan__topo_entry **entries, size_t *n, size_t *cap,
				       struct dtplan__topo_entry **out)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct dtplan__topo_entry *r = realloc(*entries, c * sizeof(*r));

		if (r == NULL)
			return DTPLAN_ERR_NOMEM;
		*entries = r;
		*cap = c;
	}
	*out = &(*entries)[(*n)++];
	memset(*out, 0, sizeof(**out));
	return DTPLAN_OK;
}

void dtplan__topo_entries_free(struct dtplan__topo_entry *entries, size_t n)
{
	for (size_t i = 0; entries != NULL && i < n; i++) {
		free(entries[i].switches);
		free(entries[i].nodes);
	}
	free(entries);
}

bool dtplan__topo_valid_name(const char *s)
{
	return strlen(s) <= 63 && valid_name(s);
}

static enum dtplan_err append_nodes(struct dtplan_topology *t, size_t *cap_nodes, char (*names)[64],
				    size_t n, int leaf)
{
	if (t->n_nodes + n > *cap_nodes) {
		size_t cap = *cap_nodes ? *cap_nodes : 256;
		char(*nn)[64];
		int *nl;

		while (cap < t->n_nodes + n)
			cap *= 2;
		nn = realloc(t->node_names, cap * sizeof(*nn));
		if (nn == NULL)
			return DTPLAN_ERR_NOMEM;
		t->node_names = nn;
		nl = realloc(t->node_leaf, cap * sizeof(*nl));
		if (nl == NULL)
			return DTPLAN_ERR_NOMEM;
		t->node_leaf = nl;
		*cap_nodes = cap;
	}
	memcpy(t->node_names[t->n_nodes], names, n * sizeof(*names));
	for (size_t i = 0; i < n; i++)
		t->node_leaf[t->n_nodes + i] = leaf;
	t->n_nodes += n;
	return DTPLAN_OK;
}

static int parent_of(const void *ctx, int i)
{
	return ((const struct dtplan_topology *)ctx)->switches[i].parent;
}

static void compute_levels(struct dtplan_topology *t)
{
	for (size_t i = 0; i < t->n_switches; i++) {
		int c = (int)i, p;

		if (t->switches[i].level != 0)
			continue;
		p = t->switches[c].parent;
		while (p >= 0 && t->switches[p].level < t->switches[c].level + 1) {
			t->switches[p].level = t->switches[c].level + 1;
			c = p;
			p = t->switches[p].parent;
		}
	}
}

enum dtplan_err dtplan__topology_link(const struct dtplan__topo_entry *raw, size_t n_raw,
				      const char *source, const char *what,
				      struct dtplan_topology **out, struct dtplan_error *err)
{
	struct dtplan_topology *t;
	struct dtplan_error e = {0};
	char(*names)[64] = NULL;
	size_t n = 0, cap_nodes = 0, listed = 0;
	enum dtplan_err rv;
	int dup_sw, dup_first, dup_node, cyc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t != NULL)
		t->switches = calloc(n_raw + 1, sizeof(*t->switches));
	if (t == NULL || t->switches == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
		goto out;
	}
	t->n_switches = n_raw;
	for (size_t i = 0; i < n_raw; i++) {
		struct dtplan_switch *s = &t->switches[i];

		dtplan__strlcpy(s->name, raw[i].name, sizeof(s->name));
		s->parent = -1;
		s->level = raw[i].nodes != NULL ? 0 : -1;
		s->link_speed = raw[i].link_speed;
		s->oversubscription = 1.0;
	}
	/* Nodes of every leaf, in file order. */
	for (size_t i = 0; i < n_raw; i++) {
		if (raw[i].nodes == NULL)
			continue;
		rv = dtplan_hostlist_expand(raw[i].nodes, DTPLAN_HOSTLIST_MAX, &names, &n, &e);
		if (rv != DTPLAN_OK) {
			rv = dtplan__error(err, rv, source, raw[i].line, "Nodes=%s: %s",
					   raw[i].nodes, e.text);
			goto out;
		}
		/* the whole file names at most DTPLAN_HOSTLIST_MAX nodes too */
		if (n > DTPLAN_HOSTLIST_MAX - t->n_nodes) {
			rv = dtplan__error(err, DTPLAN_ERR_RANGE, source, raw[i].line,
					   "Nodes=%.*s%s: the file names more than %d nodes in all",
					   strlen(raw[i].nodes) > 40 ? 37 : 40, raw[i].nodes,
					   strlen(raw[i].nodes) > 40 ? "..." : "",
					   DTPLAN_HOSTLIST_MAX);
			goto out;
		}
		rv = append_nodes(t, &cap_nodes, names, n, (int)i);
		free(names);
		names = NULL;
		if (rv != DTPLAN_OK) {
			rv = dtplan__error(err, rv, source, raw[i].line, "out of memory");
			goto out;
		}
	}
	rv = build_index(t, &dup_sw, &dup_first, &dup_node);
	if (rv == DTPLAN_ERR_INVAL && dup_sw >= 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[dup_sw].line,
				   "%s '%s' is defined twice (first at line %d)", what,
				   raw[dup_sw].name, raw[dup_first].line);
		goto out;
	}
	if (rv == DTPLAN_ERR_INVAL && dup_node >= 0) {
		int a = t->node_leaf[dup_first], b = t->node_leaf[dup_node];

		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[b].line,
				   "node '%s' is %s: '%s' (line %d) and '%s'",
				   t->node_names[dup_node],
				   strcmp(what, "block") == 0 ? "in two blocks"
							      : "under two leaf switches",
				   raw[a].name, raw[a].line, raw[b].name);
		goto out;
	}
	if (rv != DTPLAN_OK) {
		rv = dtplan__error(err, rv, source, 0, "out of memory");
		goto out;
	}
	/* Parents. */
	for (size_t i = 0; i < n_raw; i++) {
		if (raw[i].switches == NULL)
			continue;
		/* bounded before it expands: every switch has one parent, so the
		 * file's Switches= name at most its switches */
		rv = dtplan_hostlist_expand(raw[i].switches, n_raw - listed, &names, &n, &e);
		if (rv == DTPLAN_ERR_RANGE) {
			rv = dtplan__error(
				err, DTPLAN_ERR_PARSE, source, raw[i].line,
				"Switches=%.*s%s: the file's Switches= name more than its "
				"%zu switches",
				strlen(raw[i].switches) > 40 ? 37 : 40, raw[i].switches,
				strlen(raw[i].switches) > 40 ? "..." : "", n_raw);
			goto out;
		}
		if (rv != DTPLAN_OK) {
			rv = dtplan__error(err, rv, source, raw[i].line, "Switches=%s: %s",
					   raw[i].switches, e.text);
			goto out;
		}
		listed += n;
		for (size_t k = 0; k < n; k++) {
			int c = dtplan_topology_switch_index(t, names[k]);

			if (c < 0) {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[i].line,
						   "switch '%s': child switch '%s' is not defined",
						   raw[i].name, names[k]);
				goto out;
			}
			if (c == (int)i) {
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[i].line,
						   "switch '%s' lists itself in Switches= "
						   "(a cycle)",
						   raw[i].name);
				goto out;
			}
			if (t->switches[c].parent >= 0) {
				int q = t->switches[c].parent;

				rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[i].line,
						   "switch '%s' is under two switches: '%s' "
						   "(line %d) and '%s'",
						   names[k], raw[q].name, raw[q].line, raw[i].name);
				goto out;
			}
			t->switches[c].parent = (int)i;
		}
		free(names);
		names = NULL;
	}
	cyc = dtplan__tree_cycle(t->n_switches, parent_of, t);
	if (cyc == -2) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
		goto out;
	}
	if (cyc >= 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, raw[cyc].line,
				   "switch '%s' is its own ancestor (a cycle in Switches=)",
				   raw[cyc].name);
		goto out;
	}
	compute_levels(t);
	*out = t;
	t = NULL;
	rv = DTPLAN_OK;
out:
	free(names);
	dtplan_topology_destroy(t);
	return rv;
}

/* ---- queries ---- */

static bool valid_switch(const struct dtplan_topology *t, int s)
{
	return t != NULL && s >= 0 && (size_t)s < t->n_switches;
}

size_t dtplan_topology_leaf_size(const struct dtplan_topology *t, int sw)
{
	size_t n = 0;

	if (!valid_switch(t, sw) || t->switches[sw].level != 0)
		return 0;
	for (size_t i = 0; i < t->n_nodes; i++)
		n += t->node_leaf[i] == sw;
	return n;
}

const char *dtplan_leaf_kind_name(enum dtplan_leaf_kind k, bool many)
{
	switch (k) {
	case DTPLAN_LEAF_BLOCK:
		return many ? "blocks" : "block";
	case DTPLAN_LEAF_RING:
		return many ? "rings" : "ring";
	case DTPLAN_LEAF_TORUS:
		return many ? "toruses" : "torus";
	case DTPLAN_LEAF_SWITCH:
	default:
		return many ? "switches" : "switch";
	}
}
