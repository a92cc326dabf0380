/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology/topology_int.h: what the topology readers share: entries before they
 * are linked, the linker, the readers.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by files of lib/topology/ only.
 */
#ifndef DTPLAN_TOPOLOGY_TOPOLOGY_INT_H
#define DTPLAN_TOPOLOGY_TOPOLOGY_INT_H

#include "dtplan.h"
#include "base/base.h"

/* ------------------------------------------------------------------------
 * Topology files: lib/topology/topology.c links what the readers found (the tree of
 * topology.conf, lib/topology/topology_block.c's blocks, lib/topology/topology_yaml.c's
 * topology.yaml); lib/topology/topology_file.c picks the reader.
 * ---------------------------------------------------------------------- */

/* One switch or block as a topology file names it, before the tree is linked. */
struct dtplan__topo_entry {
	char name[64];
	int line;          /* in the file, for messages */
	double link_speed; /* bytes/s, 0 unknown */
	char *switches;    /* hostlist of child switches, owned, or NULL */
	char *nodes;       /* hostlist of nodes, owned, or NULL */
};

/* Appends a zeroed entry to *entries (n used, cap allocated); *out points at
 * it.  DTPLAN_ERR_NOMEM when growing fails. */
enum dtplan_err dtplan__topo_entry_add(struct dtplan__topo_entry **entries, size_t *n, size_t *cap,
				       struct dtplan__topo_entry **out);

/* Frees n entries and the array (NULL allowed). */
void dtplan__topo_entries_free(struct dtplan__topo_entry *entries, size_t n);

/* A switch or block name: letters, digits, '-', '_'; at most 63. */
bool dtplan__topo_valid_name(const char *s);

/*
 * Links entries into a topology: leaves (entries with nodes) at level 0,
 * parents from Switches=, every node under one leaf, no cycle.  `what`
 * ("switch" or "block") names the entries in messages, which carry source
 * and the entry's line.  Caller frees *out with dtplan_topology_destroy();
 * NULL on error.
 */
enum dtplan_err dtplan__topology_link(const struct dtplan__topo_entry *entries, size_t n,
				      const char *source, const char *what,
				      struct dtplan_topology **out, struct dtplan_error *err);

/* The readers, each for text of its form (source names it in messages). */
enum dtplan_err dtplan__topology_parse_tree(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err);
enum dtplan_err dtplan__topology_parse_block(const char *text, const char *source,
					     struct dtplan_topology **out,
					     struct dtplan_error *err);
enum dtplan_err dtplan__topology_parse_yaml(const char *text, const char *source,
					    struct dtplan_topology **out, struct dtplan_error *err);

/*
 * Links blocks (entries with nodes only) into a topology of blocks as
 * topology/block reads them: sizes[0..n_sizes) the BlockSizes (node counts;
 * n_sizes 0: the first block's node count is the base), each a power-of-two
 * multiple of the first, at most 2^15 of it; every block at least the base.
 * sizes_line names where the sizes were given (0: nowhere).  Sets
 * t->blocks and t->block_size.  lib/topology/topology_block.c.
 */
enum dtplan_err dtplan__topology_blocks(const struct dtplan__topo_entry *entries, size_t n,
					const long *sizes, size_t n_sizes, int sizes_line,
					const char *source, struct dtplan_topology **out,
					struct dtplan_error *err);

#endif /* DTPLAN_TOPOLOGY_TOPOLOGY_INT_H */
