/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_yaml.c: Slurm's topology.yaml (Slurm 25.05+), a list of named
 * topologies, each a tree, a set of blocks or flat:
 *
 *   - topology: fabric
 *     cluster_default: true
 *     tree:
 *       switches:
 *         - switch: leaf1
 *           nodes: node[01-04]
 *         - switch: spine
 *           children: leaf[1-2]
 *   - topology: racks
 *     block:
 *       block_sizes: [18, 36]
 *       blocks:
 *         - block: rack1
 *           nodes: gb[001-018]
 *
 *   - topology: pod
 *     torus3d:
 *       toruses:
 *         - name: pod1
 *           dims: {x, y, z as a mapping}
 *           nodes: g[001-032]          (or regions: anchor, dims, nodes)
 *
 * dtplan reads the topology with cluster_default: true (else the first),
 * the one Slurm uses for partitions that name none; two of them are
 * refused, naming both.  Its switches
 * and blocks become the same entries topology.conf gives (lib/topology/topology.c,
 * lib/topology/topology_block.c); each ring (ring:) or torus (torus3d:) of
 * Slurm 26.05 a leaf of its own, its nodes in ring or x-major order
 * (doc/internals/placement.md, "Rings and toruses").  flat: is true or a
 * mapping of options (alpha_step_rank).  Checked against SchedMD/slurm
 * slurm-26.05 (531c4b2): doc/man/man5/topology.yaml.5 and the data_parser's
 * TOPOLOGY_CONF, RING_CONFIG and TORUS3D_CONFIG parsers (v0.0.45).

 *
 * The YAML itself is read by lib/topology/yaml.c (libyaml's event parser).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"
#include "topology/yaml_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- topology.yaml ---- */

/* The value of key in map y, NULL when absent. */
static struct ynode *get(const struct ynode *y, const char *key)
{
	for (size_t k = 0; y != NULL && y->kind == Y_MAP && k < y->n; k++)
		if (strcmp(y->keys[k], key) == 0)
			return y->items[k];
	return NULL;
}

/* Refuses keys of map y that are not in known (NULL-terminated). */
static enum dtplan_err only_keys(struct yparser *p, const struct ynode *y, const char *what,
				 const char *const *known)
{
	for (size_t k = 0; k < y->n; k++) {
		bool ok = false;
		char msg[256];

		for (const char *const *q = known; *q != NULL && !ok; q++)
			ok = strcmp(y->keys[k], *q) == 0;
		if (ok)
			continue;
		snprintf(msg, sizeof(msg), "%s: unknown key '%.64s' (expected", what, y->keys[k]);
		for (const char *const *q = known; *q != NULL; q++)
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s %s",
				 q == known ? "" : ",", *q);
		return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, y->items[k]->line, "%s)",
				     msg);
	}
	return DTPLAN_OK;
}

static bool is_true(const struct ynode *y)
{
	return y != NULL && y->kind == Y_SCALAR &&
	       (strcmp(y->text, "true") == 0 || strcmp(y->text, "True") == 0 ||
		strcmp(y->text, "TRUE") == 0);
}

/* A hostlist from a scalar or a list of scalars (joined with commas); caller
 * frees.  NULL with *rv set when y is neither. */
static char *hostlist(struct yparser *p, const struct ynode *y, const char *what,
		      enum dtplan_err *rv)
{
	size_t len = 1;
	char *out;

	if (y->kind == Y_SCALAR && y->text[0] != '\0') {
		out = strdup(y->text);
		*rv = out != NULL ? DTPLAN_OK : dtplan__yaml_nomem(p, y->line);
		return out;
	}
	for (size_t k = 0; y->kind == Y_SEQ && k < y->n; k++) {
		if (y->items[k]->kind != Y_SCALAR || y->items[k]->text[0] == '\0') {
			*rv = dtplan__yaml_err(p, y->items[k]->line,
					       "%s: expected a host name or hostlist", what);
			return NULL;
		}
		len += strlen(y->items[k]->text) + 1;
	}
	if (y->kind != Y_SEQ || y->n == 0) {
		*rv = dtplan__yaml_err(p, y->line, "%s: expected a hostlist such as node[01-04]",
				       what);
		return NULL;
	}
	out = calloc(1, len);
	if (out == NULL) {
		*rv = dtplan__yaml_nomem(p, y->line);
		return NULL;
	}
	/* joined at a running end: strcat() from the start each time took over
	 * 20 s for a million items (issue 26) */
	len = 0;
	for (size_t k = 0; k < y->n; k++) {
		size_t w = strlen(y->items[k]->text);

		if (k > 0)
			out[len++] = ',';
		memcpy(out + len, y->items[k]->text, w);
		len += w;
	}
	out[len] = '\0';
	*rv = DTPLAN_OK;
	return out;
}

/* The entries of a "switches:" or "blocks:" list: name_key names each. */
static enum dtplan_err read_entries(struct yparser *p, const struct ynode *list,
				    const char *list_key, const char *name_key,
				    struct dtplan__topo_entry **out, size_t *n)
{
	static const char *const switch_keys[] = {"switch", "children", "nodes", NULL};
	static const char *const block_keys[] = {"block", "nodes", NULL};
	bool tree = strcmp(name_key, "switch") == 0;
	size_t cap = 0;
	enum dtplan_err rv;

	if (list == NULL || list->kind != Y_SEQ || list->n == 0)
		return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source,
				     list != NULL ? list->line : 0,
				     "'%s:' must be a list of %ses ('- %s: NAME')", list_key,
				     name_key, name_key);
	for (size_t k = 0; k < list->n; k++) {
		const struct ynode *y = list->items[k], *name, *children, *nodes;
		struct dtplan__topo_entry *e;

		if (y->kind != Y_MAP)
			return dtplan__yaml_err(p, y->line, "%s: each item must be a mapping",
						list_key);
		rv = only_keys(p, y, name_key, tree ? switch_keys : block_keys);
		if (rv != DTPLAN_OK)
			return rv;
		name = get(y, name_key);
		children = get(y, "children");
		nodes = get(y, "nodes");
		if (name == NULL || name->kind != Y_SCALAR || !dtplan__topo_valid_name(name->text))
			return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, y->line,
					     "%s: every item needs '%s: NAME' (letters, digits, "
					     "'-', '_'; at most 63)",
					     list_key, name_key);
		if (tree && (children == NULL) == (nodes == NULL))
			return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, y->line,
					     "switch '%s' needs either nodes: or children:",
					     name->text);
		if (!tree && nodes == NULL)
			return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, y->line,
					     "block '%s' has no nodes:", name->text);
		if (dtplan__topo_entry_add(out, n, &cap, &e) != DTPLAN_OK)
			return dtplan__yaml_nomem(p, y->line);
		dtplan__strlcpy(e->name, name->text, sizeof(e->name));
		e->line = y->line;
		if (nodes != NULL && (e->nodes = hostlist(p, nodes, "nodes", &rv)) == NULL)
			return rv;
		if (children != NULL &&
		    (e->switches = hostlist(p, children, "children", &rv)) == NULL)
			return rv;
	}
	return DTPLAN_OK;
}

/* block_sizes: a list of node counts, or one "18,36" scalar. */
static enum dtplan_err read_sizes(struct yparser *p, const struct ynode *y, long *sizes, size_t *n)
{
	*n = 0;
	if (y == NULL)
		return DTPLAN_OK;
	for (size_t k = 0; k < (y->kind == Y_SEQ ? y->n : 1); k++) {
		const struct ynode *v = y->kind == Y_SEQ ? y->items[k] : y;
		char text[64], *save = NULL, *tok;

		if (v->kind != Y_SCALAR || strlen(v->text) >= sizeof(text))
			return dtplan__yaml_err(p, v->line,
						"block_sizes: expected node counts such as "
						"[18, 36]");
		strcpy(text, v->text);
		for (tok = strtok_r(text, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			size_t len;

			while (*tok == ' ')
				tok++;
			for (len = strlen(tok); len > 0 && isspace((unsigned char)tok[len - 1]);)
				tok[--len] = '\0';
			if (*n == 16 ||
			    dtplan_parse_long(tok, "block_sizes", 1, DTPLAN_HOSTLIST_MAX,
					      &sizes[*n], NULL) != DTPLAN_OK)
				return dtplan__yaml_err(p, v->line,
							"block_sizes: '%s' is not a node count "
							"(at most 16 of them)",
							tok);
			(*n)++;
		}
	}
	return DTPLAN_OK;
}

/* Slurm's MAX_RING_SIZE (src/plugins/topology/ring/ring_record.h, 26.05) */
#define RING_MAX_NODES 16
/* A torus's coordinates, at most (dtplan's bound: a million nodes) */
#define TORUS_MAX_CELLS DTPLAN_HOSTLIST_MAX

/* flat: true, or a mapping of options (26.05: alpha_step_rank, which orders
 * Slurm's step layout by name and changes nothing dtplan reads). */
static enum dtplan_err read_flat(struct yparser *p, const struct ynode *flat, const char *name)
{
	static const char *const flat_keys[] = {"alpha_step_rank", NULL};
	const struct ynode *v;
	enum dtplan_err rv;

	if (flat->kind == Y_SCALAR) {
		if (is_true(flat))
			return DTPLAN_OK;
		return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, flat->line,
				     "topology '%s': flat: must be true or a mapping of options "
				     "(alpha_step_rank: true)",
				     name);
	}
	if (flat->kind != Y_MAP)
		return dtplan__yaml_err(p, flat->line,
					"topology '%s': flat: must be true or a mapping", name);
	rv = only_keys(p, flat, "flat", flat_keys);
	if (rv != DTPLAN_OK)
		return rv;
	v = get(flat, "alpha_step_rank");
	if (v != NULL && !is_true(v) &&
	    (v->kind != Y_SCALAR ||
	     (strcmp(v->text, "false") != 0 && strcmp(v->text, "False") != 0 &&
	      strcmp(v->text, "FALSE") != 0)))
		return dtplan__yaml_err(p, v->line,
					"flat: alpha_step_rank: expected true or false");
	return DTPLAN_OK;
}

/* rings: each ring a leaf, its nodes in ring order (the order Slurm's
 * topology/ring keeps), at most RING_MAX_NODES. */
static enum dtplan_err read_rings(struct yparser *p, const struct ynode *ring,
				  struct dtplan__topo_entry **entries, size_t *n)
{
	static const char *const ring_keys[] = {"rings", NULL};
	static const char *const item_keys[] = {"ring", "nodes", NULL};
	const struct ynode *list;
	size_t cap = 0;
	enum dtplan_err rv;

	if (ring->kind != Y_MAP)
		return dtplan__yaml_err(p, ring->line, "ring: must be a mapping");
	rv = only_keys(p, ring, "ring", ring_keys);
	if (rv != DTPLAN_OK)
		return rv;
	list = get(ring, "rings");
	if (list == NULL || list->kind != Y_SEQ || list->n == 0)
		return dtplan__yaml_err(p, list != NULL ? list->line : ring->line,
					"'rings:' must be a list of rings ('- ring: NAME')");
	for (size_t k = 0; k < list->n; k++) {
		const struct ynode *y = list->items[k], *name, *nodes;
		struct dtplan__topo_entry *e;
		char(*names)[64] = NULL;
		size_t count = 0;

		if (y->kind != Y_MAP)
			return dtplan__yaml_err(p, y->line, "rings: each item must be a mapping");
		rv = only_keys(p, y, "ring", item_keys);
		if (rv != DTPLAN_OK)
			return rv;
		name = get(y, "ring");
		nodes = get(y, "nodes");
		if (name == NULL || name->kind != Y_SCALAR || !dtplan__topo_valid_name(name->text))
			return dtplan__yaml_err(
				p, y->line,
				"rings: every item needs 'ring: NAME' (letters, digits, '-', "
				"'_'; at most 63)");
		if (nodes == NULL)
			return dtplan__yaml_err(p, y->line, "ring '%s' has no nodes:", name->text);
		if (dtplan__topo_entry_add(entries, n, &cap, &e) != DTPLAN_OK)
			return dtplan__yaml_nomem(p, y->line);
		dtplan__strlcpy(e->name, name->text, sizeof(e->name));
		e->line = y->line;
		if ((e->nodes = hostlist(p, nodes, "nodes", &rv)) == NULL)
			return rv;
		rv = dtplan_hostlist_expand(e->nodes, RING_MAX_NODES + 1, &names, &count, NULL);
		free(names);
		if (rv != DTPLAN_OK || count > RING_MAX_NODES)
			return dtplan__yaml_err(
				p, nodes->line,
				"ring '%s': at most %d nodes (Slurm's topology/ring), or a bad "
				"hostlist",
				name->text, RING_MAX_NODES);
	}
	return DTPLAN_OK;
}

/* dims: {x: X, y: Y, z: Z}, each at least `least` (1 for sizes, 0 for an
 * anchor). */
static enum dtplan_err read_dims(struct yparser *p, const struct ynode *y, const char *what,
				 long least, long d[3])
{
	static const char *const xyz[] = {"x", "y", "z", NULL};
	enum dtplan_err rv;

	if (y == NULL || y->kind != Y_MAP)
		return dtplan__yaml_err(p, y != NULL ? y->line : 0,
					"%s: expected a mapping of x, y and z", what);
	rv = only_keys(p, y, what, xyz);
	for (int i = 0; i < 3 && rv == DTPLAN_OK; i++) {
		const struct ynode *v = get(y, xyz[i]);

		if (v == NULL || v->kind != Y_SCALAR ||
		    dtplan_parse_long(v->text, xyz[i], least, 65535, &d[i], NULL) != DTPLAN_OK)
			rv = dtplan__yaml_err(p, v != NULL ? v->line : y->line,
					      "%s: %s must be a whole number from %ld to 65535",
					      what, xyz[i], least);
	}
	return rv;
}

struct cell {
	size_t index; /* x + X * (y + Y * z) */
	const char *name;
};

static int cell_cmp(const void *a, const void *b)
{
	size_t x = ((const struct cell *)a)->index, y = ((const struct cell *)b)->index;

	return x < y ? -1 : x > y;
}

/* One torus: its nodes in x-major coordinate order (x fastest), from
 * nodes: (already in that order) or from regions: (each region x-major in
 * its own box from its anchor), the order Slurm's topology/torus3d maps
 * coordinates in; e->nodes gets them as a comma list. */
static enum dtplan_err read_torus(struct yparser *p, const struct ynode *y,
				  struct dtplan__topo_entry *e)
{
	static const char *const keys[] = {"name", "dims", "nodes", "regions", "placements", NULL};
	static const char *const region_keys[] = {"anchor", "dims", "nodes", NULL};
	const struct ynode *name = get(y, "name"), *nodes = get(y, "nodes");
	const struct ynode *regions = get(y, "regions");
	long d[3], cells;
	struct cell *c = NULL;
	char(*all)[64] = NULL;
	size_t n_c = 0, n_all = 0, len = 1;
	enum dtplan_err rv;

	rv = only_keys(p, y, "torus", keys);
	if (rv != DTPLAN_OK)
		return rv;
	if (name == NULL || name->kind != Y_SCALAR || !dtplan__topo_valid_name(name->text))
		return dtplan__yaml_err(
			p, y->line,
			"toruses: every item needs 'name: NAME' (letters, digits, '-', '_'; "
			"at most 63)");
	dtplan__strlcpy(e->name, name->text, sizeof(e->name));
	e->line = y->line;
	rv = read_dims(p, get(y, "dims"), "dims", 1, d);
	if (rv != DTPLAN_OK)
		return rv;
	cells = d[0] * d[1] * d[2];
	if (cells > TORUS_MAX_CELLS)
		return dtplan__yaml_err(p, y->line,
					"torus '%s': %ldx%ldx%ld is more than %d coordinates",
					e->name, d[0], d[1], d[2], TORUS_MAX_CELLS);
	if ((nodes == NULL) == (regions == NULL))
		return dtplan__yaml_err(p, y->line,
					"torus '%s' needs either nodes: or regions:", e->name);
	if (nodes != NULL) {
		if ((e->nodes = hostlist(p, nodes, "nodes", &rv)) == NULL)
			return rv;
		rv = dtplan_hostlist_expand(e->nodes, (size_t)cells + 1, &all, &n_all, NULL);
		free(all);
		if (rv != DTPLAN_OK || (long)n_all != cells)
			return dtplan__yaml_err(
				p, nodes->line,
				"torus '%s': %ldx%ldx%ld needs %ld nodes; nodes: names %s%zu",
				e->name, d[0], d[1], d[2], cells,
				rv != DTPLAN_OK ? "more or a bad hostlist, not " : "", n_all);
		return DTPLAN_OK;
	}
	if (regions->kind != Y_SEQ || regions->n == 0)
		return dtplan__yaml_err(p, regions->line, "torus '%s': regions: must be a list",
					e->name);
	for (size_t k = 0; k < regions->n && rv == DTPLAN_OK; k++) {
		const struct ynode *r = regions->items[k];
		long a[3], rd[3];
		char *list = NULL;
		char(*names)[64] = NULL;
		size_t count = 0;
		struct cell *grown;

		if (r->kind != Y_MAP)
			rv = dtplan__yaml_err(p, r->line, "regions: each item must be a mapping");
		if (rv == DTPLAN_OK)
			rv = only_keys(p, r, "region", region_keys);
		if (rv == DTPLAN_OK)
			rv = read_dims(p, get(r, "anchor"), "anchor", 0, a);
		if (rv == DTPLAN_OK)
			rv = read_dims(p, get(r, "dims"), "dims", 1, rd);
		for (int i = 0; i < 3 && rv == DTPLAN_OK; i++)
			if (a[i] + rd[i] > d[i])
				rv = dtplan__yaml_err(
					p, r->line,
					"torus '%s': a region reaches past the torus's dims "
					"(regions do not wrap)",
					e->name);
		if (rv == DTPLAN_OK && get(r, "nodes") == NULL)
			rv = dtplan__yaml_err(p, r->line,
					      "torus '%s': a region has no nodes:", e->name);
		if (rv == DTPLAN_OK)
			list = hostlist(p, get(r, "nodes"), "nodes", &rv);
		if (rv == DTPLAN_OK && (dtplan_hostlist_expand(list, (size_t)cells + 1, &names,
							       &count, NULL) != DTPLAN_OK ||
					(long)count != rd[0] * rd[1] * rd[2]))
			rv = dtplan__yaml_err(
				p, r->line,
				"torus '%s': a region of %ldx%ldx%ld needs as many nodes (nodes: "
				"names %zu)",
				e->name, rd[0], rd[1], rd[2], count);
		grown = rv == DTPLAN_OK ? realloc(c, (n_c + count) * sizeof(*c)) : NULL;
		if (rv == DTPLAN_OK && grown == NULL)
			rv = dtplan__yaml_nomem(p, r->line);
		if (rv == DTPLAN_OK) {
			c = grown;
			for (size_t i = 0; i < count; i++) {
				size_t x = (size_t)a[0] + i % (size_t)rd[0];
				size_t yy = (size_t)a[1] + i / (size_t)rd[0] % (size_t)rd[1];
				size_t z = (size_t)a[2] + i / (size_t)(rd[0] * rd[1]);

				c[n_c].index = x + (size_t)d[0] * (yy + (size_t)d[1] * z);
				c[n_c].name = NULL;
				n_c++;
			}
		}
		if (rv == DTPLAN_OK) {
			char(*more)[64] = realloc(all, (n_all + count) * sizeof(*all));

			if (more == NULL) {
				rv = dtplan__yaml_nomem(p, r->line);
			} else {
				all = more;
				memcpy(all + n_all, names, count * sizeof(*names));
				n_all += count;
			}
		}
		free(names);
		free(list);
	}
	if (rv == DTPLAN_OK) {
		for (size_t i = 0; i < n_c; i++) {
			c[i].name = all[i];
			len += strlen(all[i]) + 1;
		}
		qsort(c, n_c, sizeof(*c), cell_cmp);
		for (size_t i = 1; i < n_c && rv == DTPLAN_OK; i++)
			if (c[i].index == c[i - 1].index)
				rv = dtplan__yaml_err(p, regions->line,
						      "torus '%s': regions overlap", e->name);
	}
	if (rv == DTPLAN_OK && (e->nodes = calloc(1, len)) == NULL)
		rv = dtplan__yaml_nomem(p, regions->line);
	for (size_t i = 0, at = 0; rv == DTPLAN_OK && i < n_c; i++) {
		size_t w = strlen(c[i].name);

		if (i > 0)
			e->nodes[at++] = ',';
		memcpy(e->nodes + at, c[i].name, w);
		at += w;
	}
	free(c);
	free(all);
	return rv;
}

/* toruses: each torus a leaf. */
static enum dtplan_err read_toruses(struct yparser *p, const struct ynode *torus,
				    struct dtplan__topo_entry **entries, size_t *n)
{
	static const char *const torus_keys[] = {"toruses", NULL};
	const struct ynode *list;
	size_t cap = 0;
	enum dtplan_err rv;

	if (torus->kind != Y_MAP)
		return dtplan__yaml_err(p, torus->line, "torus3d: must be a mapping");
	rv = only_keys(p, torus, "torus3d", torus_keys);
	if (rv != DTPLAN_OK)
		return rv;
	list = get(torus, "toruses");
	if (list == NULL || list->kind != Y_SEQ || list->n == 0)
		return dtplan__yaml_err(p, list != NULL ? list->line : torus->line,
					"'toruses:' must be a list of toruses ('- name: NAME')");
	for (size_t k = 0; k < list->n; k++) {
		struct dtplan__topo_entry *e;

		if (list->items[k]->kind != Y_MAP)
			return dtplan__yaml_err(p, list->items[k]->line,
						"toruses: each item must be a mapping");
		if (dtplan__topo_entry_add(entries, n, &cap, &e) != DTPLAN_OK)
			return dtplan__yaml_nomem(p, list->items[k]->line);
		rv = read_torus(p, list->items[k], e);
		if (rv != DTPLAN_OK)
			return rv;
	}
	return DTPLAN_OK;
}

/* Reads the chosen topology t into *out. */
static enum dtplan_err read_topology(struct yparser *p, const struct ynode *t,
				     struct dtplan_topology **out)
{
	static const char *const keys[] = {"topology", "cluster_default", "tree", "block", "flat",
					   "ring",     "torus3d",         NULL};
	static const char *const tree_keys[] = {"switches", NULL};
	static const char *const block_keys[] = {"block_sizes", "blocks", NULL};
	const struct ynode *name = get(t, "topology"), *tree = get(t, "tree");
	const struct ynode *blk = get(t, "block"), *flat = get(t, "flat");
	const struct ynode *ring = get(t, "ring"), *torus = get(t, "torus3d");
	struct dtplan__topo_entry *entries = NULL;
	long sizes[16];
	size_t n = 0, n_sizes = 0;
	enum dtplan_err rv;

	rv = only_keys(p, t, "topology", keys);
	if (rv != DTPLAN_OK)
		return rv;
	if ((tree != NULL) + (blk != NULL) + (flat != NULL) + (ring != NULL) + (torus != NULL) != 1)
		return dtplan__error(
			p->err, DTPLAN_ERR_PARSE, p->source, t->line,
			"topology '%s' needs exactly one of tree:, block:, flat:, ring: "
			"or torus3d:",
			name->text);
	if (flat != NULL) {
		rv = read_flat(p, flat, name->text);
		if (rv != DTPLAN_OK)
			return rv;
		*out = calloc(1, sizeof(**out)); /* no switches: a flat fabric */
		return *out != NULL ? DTPLAN_OK : dtplan__yaml_nomem(p, flat->line);
	}
	if (ring != NULL || torus != NULL) {
		rv = ring != NULL ? read_rings(p, ring, &entries, &n)
				  : read_toruses(p, torus, &entries, &n);
		if (rv == DTPLAN_OK)
			rv = dtplan__topology_link(entries, n, p->source,
						   ring != NULL ? "ring" : "torus", out, p->err);
		if (rv == DTPLAN_OK)
			(*out)->leaf_kind = ring != NULL ? DTPLAN_LEAF_RING : DTPLAN_LEAF_TORUS;
		dtplan__topo_entries_free(entries, n);
		return rv;
	}
	if (tree != NULL) {
		rv = tree->kind == Y_MAP
			     ? only_keys(p, tree, "tree", tree_keys)
			     : dtplan__yaml_err(p, tree->line, "tree: must be a mapping");
		if (rv == DTPLAN_OK)
			rv = read_entries(p, get(tree, "switches"), "switches", "switch", &entries,
					  &n);
		if (rv == DTPLAN_OK)
			rv = dtplan__topology_link(entries, n, p->source, "switch", out, p->err);
	} else {
		rv = blk->kind == Y_MAP
			     ? only_keys(p, blk, "block", block_keys)
			     : dtplan__yaml_err(p, blk->line, "block: must be a mapping");
		if (rv == DTPLAN_OK)
			rv = read_sizes(p, get(blk, "block_sizes"), sizes, &n_sizes);
		if (rv == DTPLAN_OK)
			rv = read_entries(p, get(blk, "blocks"), "blocks", "block", &entries, &n);
		if (rv == DTPLAN_OK)
			rv = dtplan__topology_blocks(entries, n, sizes, n_sizes,
						     n_sizes > 0 ? get(blk, "block_sizes")->line
								 : 0,
						     p->source, out, p->err);
	}
	dtplan__topo_entries_free(entries, n);
	return rv;
}

enum dtplan_err dtplan__topology_parse_yaml(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err)
{
	struct yparser p = {.source = source, .err = err};
	struct ynode *root = NULL;
	const struct ynode *pick = NULL;
	enum dtplan_err rv;

	*out = NULL;
	rv = dtplan__yaml_read(&p, text, &root);
	if (rv == DTPLAN_OK && root == NULL)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, 0, "no topologies defined");
	if (rv == DTPLAN_OK && root->kind != Y_SEQ)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, root->line,
				   "topology.yaml is a list of topologies ('- topology: NAME')");
	for (size_t k = 0; rv == DTPLAN_OK && k < root->n; k++) {
		const struct ynode *t = root->items[k], *name = get(t, "topology");

		if (t->kind != Y_MAP || name == NULL || name->kind != Y_SCALAR ||
		    name->text[0] == '\0' || strcmp(t->keys[0], "topology") != 0)
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, t->line,
					   "every topology starts with 'topology: NAME'");
		else if (is_true(get(t, "cluster_default"))) {
			if (pick == NULL)
				pick = t;
			else /* Slurm takes one default: which is meant is not ours to guess */
				rv = dtplan__error(err, DTPLAN_ERR_PARSE, source,
						   get(t, "cluster_default")->line,
						   "topologies '%s' (line %d) and '%s' are both "
						   "cluster_default: true; only one may be",
						   get(pick, "topology")->text,
						   get(pick, "cluster_default")->line, name->text);
		}
	}
	if (rv == DTPLAN_OK)
		rv = read_topology(&p, pick != NULL ? pick : root->items[0], out);
	dtplan__ynode_free(root);
	return rv;
}
