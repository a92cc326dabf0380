/*
 * yaml_int.h: the YAML subset topology.yaml is written in, read into a tree
 * of values (lib/topology/yaml.c) for topology_yaml.c.  Inside
 * lib/topology/ only.
 */
#ifndef DTPLAN_TOPOLOGY_YAML_INT_H
#define DTPLAN_TOPOLOGY_YAML_INT_H

#include "dtplan.h"

#include <stddef.h>

/* Deepest nesting read: far beyond topology.yaml's five levels. */
#define MAX_DEPTH 32

enum ykind { Y_SCALAR = 0, Y_MAP, Y_SEQ };

/* A parsed YAML value; a tree of them, each owned by its parent. */
struct ynode {
	enum ykind kind;
	int line;
	char *text; /* Y_SCALAR: the value, "" for none */
	size_t n;
	char **keys;          /* Y_MAP: n keys */
	struct ynode **items; /* Y_MAP values or Y_SEQ items */
};

/* One non-blank line: its indentation and its content (comment cut). */
struct yline {
	int indent;
	int line;
	char *text; /* points into the parser's copy; changed in place */
};

struct yparser {
	const char *source;
	struct yline *lines;
	size_t n, i;
	struct dtplan_error *err;
};

/* Frees y and everything under it; NULL is fine. */
void dtplan__ynode_free(struct ynode *y);
/* A parse error at line of p's source; returns DTPLAN_ERR_PARSE. */
enum dtplan_err dtplan__yaml_err(struct yparser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Out of memory at line; returns DTPLAN_ERR_NOMEM. */
enum dtplan_err dtplan__yaml_nomem(struct yparser *p, int line);
/*
 * Reads copy (changed in place; it must outlive p's lines) into *root: one
 * block from the first line, every line used.  *root is NULL when the text
 * has no line; the caller frees it with dtplan__ynode_free() and p->lines
 * with free().
 */
enum dtplan_err dtplan__yaml_read(struct yparser *p, char *copy, struct ynode **root);

#endif /* DTPLAN_TOPOLOGY_YAML_INT_H */
