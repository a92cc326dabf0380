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

/* Parses one line (comment already cut) in place. */
static enum dtplan_err parse_line(struct parser *p, char *line, int lineno,
				  struct dtplan_error *err)
{
	static const char *const keys[] = {"SwitchName", "Switches", "Nodes", "LinkSpeed"};
	const char *v[4], *unknown, *name, *switches, *nodes, *speed;
	struct dtplan_error e = {0};
	struct dtplan__topo_entry *r;
	enum dtplan_err rv;

	rv = dtplan__conf_keys(line, keys, v, 4, &unknown, p->source, lineno, err);
	if (unknown != NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "unknown key '%s' (expected SwitchName, Switches, Nodes or "
				     "LinkSpeed)",
				     unknown);
	if (rv != DTPLAN_OK)
		return rv;
	name = v[0];
	switches = v[1];
	nodes = v[2];
	speed = v[3];
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
	r->switches = switches ? strdup(switches) : NULL;
	r->nodes = nodes ? strdup(nodes) : NULL;
	if ((switches != NULL && r->switches == NULL) || (nodes != NULL && r->nodes == NULL))
		return dtplan__error(err, DTPLAN_ERR_NOMEM, p->source, lineno, "out of memory");
	return DTPLAN_OK;
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
