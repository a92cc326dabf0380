/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_tree.c: Slurm's topology.conf for topology/tree, one switch per
 * line, into the entries lib/topology/topology.c links:
 *   SwitchName=leaf1 Nodes=node[1-4] [LinkSpeed=...]
 *   SwitchName=spine Switches=leaf[1-2]
 * Keys are case-insensitive, '#' starts a comment.  LinkSpeed with a unit
 * ("400Gb/s") is a bandwidth; a bare whole number is Slurm's unitless weight
 * and leaves link_speed unknown (0).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *source;
	struct dtplan__topo_entry *raw;
	size_t n_raw, cap_raw;
};

static enum dtplan_err parse_link_speed(const char *value, double *out, struct dtplan_error *err)
{
	struct dtplan_error e = {0};
	long weight;

	/* A bare whole number is Slurm's unitless weight: the speed stays unknown. */
	if (dtplan_parse_long(value, "LinkSpeed", 0, 1L << 62, &weight, NULL) == DTPLAN_OK) {
		*out = 0.0;
		return DTPLAN_OK;
	}
	if (dtplan_parse_rate(value, "LinkSpeed", out, &e) != DTPLAN_OK)
		return dtplan__error(err, e.code, "", 0, "%s", e.text);
	return DTPLAN_OK;
}

/* A line's values, each a copy (line_fini()). */
struct tree_line {
	char *name, *switches, *nodes, *speed;
};

#define TREE_KEY(key, field)                                                                       \
	{                                                                                          \
		.name = key, .kind = DTPLAN__KV_TEXT, .offset = offsetof(struct tree_line, field)  \
	}

static const struct dtplan__kv_key tree_keys[] = {
	TREE_KEY("SwitchName", name),
	TREE_KEY("Switches", switches),
	TREE_KEY("Nodes", nodes),
	TREE_KEY("LinkSpeed", speed),
};

/* Slurm's topology.conf lines, on the one Key=Value engine (base/base.h). */
static const struct dtplan__kv_table tree_table = {
	.keys = tree_keys,
	.n = DTPLAN_ARRAY_SIZE(tree_keys),
	.sep = ' ',
	.nocase = true,
	.form = "Key=Value",
};

static void line_fini(struct tree_line *l)
{
	free(l->name);
	free(l->switches);
	free(l->nodes);
	free(l->speed);
}

/* One line's values into p, which takes its lists. */
static enum dtplan_err take_line(struct parser *p, struct tree_line *l, int lineno,
				 struct dtplan_error *err)
{
	const char *name = l->name, *switches = l->switches, *nodes = l->nodes, *speed = l->speed;
	struct dtplan_error e = {0};
	struct dtplan__topo_entry *r;
	enum dtplan_err rv;

	if (name == NULL && switches == NULL && nodes == NULL && speed == NULL)
		return DTPLAN_OK; /* blank line */
	if (name == NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "line has no SwitchName=");
	if (!dtplan__topo_valid_name(name))
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "SwitchName=%s: not a valid switch name (letters, digits, "
				     "'-', '_'; at most 63)",
				     name);
	if (switches == NULL && nodes == NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "switch '%s' has neither Nodes= nor Switches=", name);
	if (switches != NULL && nodes != NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "switch '%s' has both Nodes= and Switches= (nodes belong "
				     "to leaf switches only)",
				     name);
	rv = dtplan__topo_entry_add(&p->raw, &p->n_raw, &p->cap_raw, &r);
	if (rv != DTPLAN_OK)
		return dtplan__error(err, rv, p->source, lineno, "out of memory");
	dtplan__strlcpy(r->name, name, sizeof(r->name));
	r->line = lineno;
	if (speed != NULL && parse_link_speed(speed, &r->link_speed, &e) != DTPLAN_OK)
		return dtplan__error(err, e.code, p->source, lineno, "%s", e.text);
	r->switches = l->switches;
	r->nodes = l->nodes;
	l->switches = l->nodes = NULL;
	return DTPLAN_OK;
}

/* Parses one line (comment already cut). */
static enum dtplan_err parse_line(struct parser *p, char *line, int lineno,
				  struct dtplan_error *err)
{
	struct tree_line l = {0};
	const struct dtplan__kv_where where = {"", p->source, lineno};
	enum dtplan_err rv = dtplan__kv_parse(&tree_table, line, &l, NULL, &where, err);

	if (rv == DTPLAN_OK)
		rv = take_line(p, &l, lineno, err);
	line_fini(&l);
	return rv;
}

enum dtplan_err dtplan__topology_parse_tree(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err)
{
	struct parser p = {.source = source};
	char *copy = NULL, *line, *next;
	enum dtplan_err rv;
	int lineno = 0;

	*out = NULL;
	copy = strdup(text);
	if (copy == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, p.source, 0, "out of memory");
		goto out;
	}
	for (next = copy; (line = dtplan__conf_line(&next, &lineno)) != NULL;) {
		rv = parse_line(&p, line, lineno, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	if (p.n_raw == 0) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, p.source, 0,
				   "no switches defined (expected SwitchName= lines, or "
				   "BlockName= lines for topology/block)");
		goto out;
	}
	rv = dtplan__topology_link(p.raw, p.n_raw, p.source, "switch", out, err);
out:
	dtplan__topo_entries_free(p.raw, p.n_raw);
	free(copy);
	return rv;
}
