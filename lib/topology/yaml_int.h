/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * yaml_int.h: topology.yaml's YAML, read with libyaml's event parser into a
 * tree of values (lib/topology/yaml.c) for topology_yaml.c.  Inside
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

struct yparser {
	const char *source;
	struct dtplan_error *err;
	const char *text; /* the text read, for messages */
	size_t len;
};

/* Frees y and everything under it; NULL is fine. */
void dtplan__ynode_free(struct ynode *y);
/* A parse error at line of p's source; returns DTPLAN_ERR_PARSE. */
enum dtplan_err dtplan__yaml_err(struct yparser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Out of memory at line; returns DTPLAN_ERR_NOMEM. */
enum dtplan_err dtplan__yaml_nomem(struct yparser *p, int line);
/*
 * Reads text (NUL-terminated; it must outlive p) into *root: the value of
 * its one document.  *root is NULL when the text has none (comments only,
 * or an empty document); the caller frees it with dtplan__ynode_free().
 * On error *root is NULL and p->err says where.
 */
enum dtplan_err dtplan__yaml_read(struct yparser *p, const char *text, struct ynode **root);

#endif /* DTPLAN_TOPOLOGY_YAML_INT_H */
