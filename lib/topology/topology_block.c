/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_block.c: Slurm's topology/block topology.conf (Slurm 23.11+),
 * the way NVL72-class systems are described:
 *
 *   BlockName=rack1 Nodes=gb[001-018]
 *   BlockName=rack2 Nodes=gb[019-036]
 *   BlockSizes=18,36
 *
 * A block is a set of nodes that talk fastest among themselves (an NVLink
 * rack); blocks become the leaves placement packs jobs into, each a root,
 * in file order (Slurm aggregates consecutive blocks in that order).
 * BlockSizes lists the base block size and the aggregations Slurm enforces,
 * in nodes: each a power-of-two multiple of the first, at most 2^15 of it.
 * Without it the base is the first block's node count.  Every block holds at
 * least the base.  Keys are case-insensitive, '#' starts a comment.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest aggregation Slurm accepts: 2^15 base blocks. */
#define MAX_BLOCK_LEVEL 15

/* Most BlockSizes values (one per level). */
#define MAX_BLOCK_SIZES (MAX_BLOCK_LEVEL + 1)

struct parser {
	const char *source;
	struct dtplan__topo_entry *blocks;
	size_t n, cap;
	long sizes[MAX_BLOCK_SIZES];
	size_t n_sizes;
	int sizes_line;
};

/* "18,36,72" -> p->sizes; each a positive whole number. */
static enum dtplan_err parse_sizes(struct parser *p, const char *text, int lineno,
				   struct dtplan_error *err)
{
	const char *c = text;

	if (p->sizes_line > 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "BlockSizes= given twice (first at line %d)", p->sizes_line);
	p->sizes_line = lineno;
	while (*c != '\0') {
		char item[32];
		size_t len = strcspn(c, ",");
		struct dtplan_error e = {0};

		if (p->n_sizes == MAX_BLOCK_SIZES)
			return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
					     "BlockSizes=%s: more than %d sizes", text,
					     MAX_BLOCK_SIZES);
		if (len == 0 || len >= sizeof(item))
			return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
					     "BlockSizes=%s: expected node counts such as 18,36",
					     text);
		memcpy(item, c, len);
		item[len] = '\0';
		if (dtplan_parse_long(item, "BlockSizes", 1, DTPLAN_HOSTLIST_MAX,
				      &p->sizes[p->n_sizes], &e) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
					     "BlockSizes=%s: '%s' is not a node count from 1 to %d",
					     text, item, DTPLAN_HOSTLIST_MAX);
		p->n_sizes++;
		c += len;
		if (*c == ',' && *++c == '\0')
			return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
					     "BlockSizes=%s: ends with a comma", text);
	}
	return DTPLAN_OK;
}

/* A line's values, each a copy (line_fini()). */
struct block_line {
	char *name, *nodes, *sizes;
};

#define BLOCK_KEY(key, field)                                                                      \
	{                                                                                          \
		.name = key, .kind = DTPLAN__KV_TEXT, .offset = offsetof(struct block_line, field) \
	}

/* SwitchName= and Switches= are the tree's: refused with the reason */
static enum dtplan_err tree_key(void *obj, const struct dtplan__kv_key *k, const char *value,
				struct dtplan_error *err)
{
	(void)obj;
	(void)value;
	return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
			     "%s= in a file of BlockName= lines: a topology.conf describes a tree "
			     "or blocks, not both",
			     k->name);
}

static const struct dtplan__kv_key block_keys[] = {
	BLOCK_KEY("BlockName", name),
	BLOCK_KEY("Nodes", nodes),
	BLOCK_KEY("BlockSizes", sizes),
	{.name = "SwitchName", .kind = DTPLAN__KV_CUSTOM, .parse = tree_key, .hidden = true},
	{.name = "Switches", .kind = DTPLAN__KV_CUSTOM, .parse = tree_key, .hidden = true},
};

/* topology/block's lines, on the one Key=Value engine (base/base.h). */
static const struct dtplan__kv_table block_table = {
	.keys = block_keys,
	.n = DTPLAN_ARRAY_SIZE(block_keys),
	.sep = ' ',
	.nocase = true,
	.form = "Key=Value",
};

static void line_fini(struct block_line *l)
{
	free(l->name);
	free(l->nodes);
	free(l->sizes);
}

/* One line's values into p, which takes its node list. */
static enum dtplan_err take_line(struct parser *p, struct block_line *l, int lineno,
				 struct dtplan_error *err)
{
	const char *name = l->name, *nodes = l->nodes, *sizes = l->sizes;
	struct dtplan__topo_entry *b;

	if (sizes != NULL && (name != NULL || nodes != NULL))
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "BlockSizes= goes on a line of its own");
	if (sizes != NULL)
		return parse_sizes(p, sizes, lineno, err);
	if (name == NULL && nodes == NULL)
		return DTPLAN_OK; /* blank line */
	if (name == NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "line has no BlockName=");
	if (!dtplan__topo_valid_name(name))
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "BlockName=%s: not a valid block name (letters, digits, '-', "
				     "'_'; at most 63)",
				     name);
	if (nodes == NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, p->source, lineno,
				     "block '%s' has no Nodes=", name);
	if (dtplan__topo_entry_add(&p->blocks, &p->n, &p->cap, &b) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, p->source, lineno, "out of memory");
	dtplan__strlcpy(b->name, name, sizeof(b->name));
	b->line = lineno;
	b->nodes = l->nodes;
	l->nodes = NULL;
	return DTPLAN_OK;
}

/* One line (comment already cut). */
static enum dtplan_err parse_line(struct parser *p, char *line, int lineno,
				  struct dtplan_error *err)
{
	struct block_line l = {0};
	const struct dtplan__kv_where where = {"", p->source, lineno};
	enum dtplan_err rv = dtplan__kv_parse(&block_table, line, &l, NULL, &where, err);

	if (rv == DTPLAN_OK)
		rv = take_line(p, &l, lineno, err);
	line_fini(&l);
	return rv;
}

/* Checks the sizes as Slurm does: a power-of-two multiple of the base each. */
static enum dtplan_err check_sizes(const long *sizes, size_t n, int line, const char *source,
				   struct dtplan_error *err)
{
	for (size_t i = 1; i < n; i++) {
		long ratio = sizes[i] / sizes[0];

		if (sizes[i] % sizes[0] != 0 || ratio < 1 || (ratio & (ratio - 1)) != 0 ||
		    ratio > (1L << MAX_BLOCK_LEVEL))
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, line,
					     "BlockSizes: %ld is not a power-of-two multiple of "
					     "the base block size %ld (at most %ld)",
					     sizes[i], sizes[0], sizes[0] << MAX_BLOCK_LEVEL);
		if (sizes[i] <= sizes[i - 1])
			return dtplan__error(err, DTPLAN_ERR_PARSE, source, line,
					     "BlockSizes: %ld after %ld: sizes must grow", sizes[i],
					     sizes[i - 1]);
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan__topology_blocks(const struct dtplan__topo_entry *entries, size_t n,
					const long *sizes, size_t n_sizes, int sizes_line,
					const char *source, struct dtplan_topology **out,
					struct dtplan_error *err)
{
	struct dtplan_topology *t = NULL;
	size_t base = 0;
	enum dtplan_err rv;
	size_t *count;

	*out = NULL;
	if (n == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0,
				     "no blocks defined (expected BlockName= lines)");
	rv = check_sizes(sizes, n_sizes, sizes_line, source, err);
	if (rv != DTPLAN_OK)
		return rv;
	rv = dtplan__topology_link(entries, n, source, "block", &t, err);
	if (rv != DTPLAN_OK)
		return rv;
	count = calloc(n, sizeof(*count));
	if (count == NULL) {
		dtplan_topology_destroy(t);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
	}
	for (size_t i = 0; i < t->n_nodes; i++)
		count[t->node_leaf[i]]++;
	base = n_sizes > 0 ? (size_t)sizes[0] : count[0];
	for (size_t k = 0; k < n && rv == DTPLAN_OK; k++)
		if (count[k] < base)
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, entries[k].line,
					   "block '%s' has %zu nodes, fewer than the base block "
					   "size %zu (%s)",
					   entries[k].name, count[k], base,
					   n_sizes > 0 ? "BlockSizes' first" : "the first block's");
	free(count);
	if (rv != DTPLAN_OK) {
		dtplan_topology_destroy(t);
		return rv;
	}
	t->blocks = true;
	t->leaf_kind = DTPLAN_LEAF_BLOCK;
	t->block_size = base;
	*out = t;
	return DTPLAN_OK;
}

enum dtplan_err dtplan__topology_parse_block(const char *text, const char *source,
					     struct dtplan_topology **out, struct dtplan_error *err)
{
	struct parser p = {.source = source};
	char *copy, *line, *next;
	enum dtplan_err rv = DTPLAN_OK;
	int lineno = 0;

	*out = NULL;
	copy = strdup(text);
	if (copy == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
	for (next = copy; rv == DTPLAN_OK && (line = dtplan__conf_line(&next, &lineno)) != NULL;)
		rv = parse_line(&p, line, lineno, err);
	if (rv == DTPLAN_OK)
		rv = dtplan__topology_blocks(p.blocks, p.n, p.sizes, p.n_sizes, p.sizes_line,
					     source, out, err);
	dtplan__topo_entries_free(p.blocks, p.n);
	free(copy);
	return rv;
}
