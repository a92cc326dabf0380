/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * yaml.c: the YAML of topology.yaml, read with libyaml's event parser (as
 * Slurm reads it, src/interfaces/serializer/yaml) into a tree of values:
 * block and flow mappings and sequences, every scalar style, comments, one
 * document.  Anchors, aliases and tags are refused, each by name and line,
 * and so are keys that are not scalars, a key given twice in one mapping,
 * a second document and nesting deeper than MAX_DEPTH; libyaml's own errors
 * keep its line.  The text is bounded by the file's limit (16 MiB,
 * doc/internals/limits.md), so is every scalar and collection.
 *
 * What the values mean is topology_yaml.c's.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/yaml_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void dtplan__ynode_free(struct ynode *y)
{
	if (y == NULL)
		return;
	for (size_t k = 0; k < y->n; k++) {
		if (y->keys != NULL)
			free(y->keys[k]);
		dtplan__ynode_free(y->items[k]);
	}
	free(y->keys);
	free(y->items);
	free(y->text);
	free(y);
}

enum dtplan_err dtplan__yaml_err(struct yparser *p, int line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, line, "%s", msg);
}

enum dtplan_err dtplan__yaml_nomem(struct yparser *p, int line)
{
	return dtplan__error(p->err, DTPLAN_ERR_NOMEM, p->source, line, "out of memory");
}

static struct ynode *ynode_new(enum ykind kind, int line)
{
	struct ynode *y = calloc(1, sizeof(*y));

	if (y != NULL) {
		y->kind = kind;
		y->line = line;
	}
	return y;
}

/* Appends item (and key, for a map; both taken) to y. */
static bool ynode_add(struct ynode *y, char *key, struct ynode *item)
{
	/* the arrays hold the next power of two of n: they double when n
	 * reaches one (growing by one was quadratic where realloc copies) */
	size_t cap = y->n == 0 ? 1 : 2 * y->n;
	struct ynode **items;
	char **keys;

	if ((y->n & (y->n - 1)) == 0) {
		items = realloc(y->items, cap * sizeof(*items));
		if (items == NULL)
			return false;
		y->items = items;
		if (y->kind == Y_MAP) {
			keys = realloc(y->keys, cap * sizeof(*keys));
			if (keys == NULL)
				return false;
			y->keys = keys;
		}
	}
	if (y->kind == Y_MAP)
		y->keys[y->n] = key;
	y->items[y->n++] = item;
	return true;
}

/* The 1-based line of a libyaml mark. */
static int line_of(const yaml_mark_t *m)
{
	return m->line < (size_t)0x7fffffff ? (int)m->line + 1 : 0x7fffffff;
}

/* libyaml's error, at its line: a tab where a token should start gets its
 * cause named. */
static enum dtplan_err parser_err(struct yparser *p, yaml_parser_t *yp)
{
	/* where the token it was reading began ("while scanning a simple
	 * key"), else where it stopped */
	int line = line_of(yp->context != NULL ? &yp->context_mark : &yp->problem_mark);

	if (yp->error == YAML_MEMORY_ERROR)
		return dtplan__yaml_nomem(p, line);
	if (yp->problem_mark.index < p->len && p->text[yp->problem_mark.index] == '\t')
		return dtplan__yaml_err(p, line_of(&yp->problem_mark),
					"a tab in the indentation (YAML indents with "
					"spaces)");
	if (yp->context != NULL)
		return dtplan__yaml_err(p, line, "%s: %s", yp->context,
					yp->problem != NULL ? yp->problem : "a YAML error");
	return dtplan__yaml_err(p, line, "%s", yp->problem != NULL ? yp->problem : "a YAML error");
}

/* The next event into ev (to be deleted by the caller). */
static enum dtplan_err next(struct yparser *p, yaml_parser_t *yp, yaml_event_t *ev)
{
	if (yaml_parser_parse(yp, ev) == 0) {
		memset(ev, 0, sizeof(*ev));
		return parser_err(p, yp);
	}
	return DTPLAN_OK;
}

/* Anchors and tags refused on the node that starts with ev. */
static enum dtplan_err plain_node(struct yparser *p, const yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	int line = line_of(&ev->start_mark);

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_ALIAS_EVENT:
		return dtplan__yaml_err(p, line, "'*%s': aliases (*) are not supported",
					(const char *)ev->data.alias.anchor);
	default:
		return dtplan__yaml_err(p, line, "a YAML value expected");
	}
	if (anchor != NULL)
		return dtplan__yaml_err(p, line, "'&%s': anchors (&) are not supported",
					(const char *)anchor);
	if (tag != NULL)
		return dtplan__yaml_err(p, line, "'%s': tags (!) are not supported",
					(const char *)tag);
	return DTPLAN_OK;
}

/* A scalar event's value as a new string; NULL with *rv set. */
static char *scalar_text(struct yparser *p, const yaml_event_t *ev, enum dtplan_err *rv)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	char *out;

	if (memchr(v, '\0', len) != NULL) {
		*rv = dtplan__yaml_err(p, line_of(&ev->start_mark), "a NUL character in a scalar");
		return NULL;
	}
	out = malloc(len + 1);
	if (out == NULL) {
		*rv = dtplan__yaml_nomem(p, line_of(&ev->start_mark));
		return NULL;
	}
	memcpy(out, v, len);
	out[len] = '\0';
	*rv = DTPLAN_OK;
	return out;
}

static struct ynode *node(struct yparser *p, yaml_parser_t *yp, yaml_event_t *ev, int depth,
			  enum dtplan_err *rv);

/* The items of a sequence whose start was ev, up to its end. */
static enum dtplan_err sequence(struct yparser *p, yaml_parser_t *yp, struct ynode *y, int depth)
{
	for (;;) {
		yaml_event_t ev;
		struct ynode *item;
		enum dtplan_err rv = next(p, yp, &ev);

		if (rv != DTPLAN_OK)
			return rv;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return DTPLAN_OK;
		}
		item = node(p, yp, &ev, depth, &rv);
		if (item != NULL && !ynode_add(y, NULL, item)) {
			rv = dtplan__yaml_nomem(p, item->line);
			dtplan__ynode_free(item);
		}
		yaml_event_delete(&ev);
		if (rv != DTPLAN_OK)
			return rv;
	}
}

/* The keys and values of a mapping whose start was ev, up to its end. */
static enum dtplan_err mapping(struct yparser *p, yaml_parser_t *yp, struct ynode *y, int depth)
{
	/* the keys seen, found by hash: 400,000 keys used to take over 20 s
	 * compared each with every earlier one (issue 26) */
	struct dtplan__strmap seen = {0};
	enum dtplan_err rv = DTPLAN_OK;

	if (dtplan__strmap_init(&seen, 8) != DTPLAN_OK)
		return dtplan__yaml_nomem(p, y->line);
	while (rv == DTPLAN_OK) {
		yaml_event_t ev;
		struct ynode *child = NULL;
		char *key = NULL;
		int line;

		rv = next(p, yp, &ev);
		if (rv != DTPLAN_OK)
			break;
		line = line_of(&ev.start_mark);
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		rv = plain_node(p, &ev);
		if (rv == DTPLAN_OK && ev.type != YAML_SCALAR_EVENT)
			rv = dtplan__yaml_err(p, line,
					      "a key that is a list or a mapping: keys are "
					      "scalars");
		if (rv == DTPLAN_OK)
			key = scalar_text(p, &ev, &rv);
		yaml_event_delete(&ev);
		if (rv == DTPLAN_OK) {
			switch (dtplan__strmap_put(&seen, key, 0, NULL)) {
			case DTPLAN_OK:
				break;
			case DTPLAN_ERR_INVAL:
				rv = dtplan__yaml_err(p, line, "'%s' given twice in one mapping",
						      key);
				break;
			default:
				rv = dtplan__yaml_nomem(p, line);
				break;
			}
		}
		if (rv == DTPLAN_OK)
			rv = next(p, yp, &ev);
		if (rv != DTPLAN_OK) {
			free(key);
			break;
		}
		child = node(p, yp, &ev, depth, &rv);
		yaml_event_delete(&ev);
		if (child != NULL)
			child->line = line; /* messages point at the key */
		if (child != NULL && !ynode_add(y, key, child)) {
			rv = dtplan__yaml_nomem(p, line);
			dtplan__ynode_free(child);
			child = NULL;
		}
		if (child == NULL)
			free(key);
	}
	dtplan__strmap_fini(&seen);
	return rv;
}

/* The value that starts with ev (which the caller deletes), and everything
 * under it; NULL with *rv set on error. */
static struct ynode *node(struct yparser *p, yaml_parser_t *yp, yaml_event_t *ev, int depth,
			  enum dtplan_err *rv)
{
	int line = line_of(&ev->start_mark);
	struct ynode *y;

	*rv = plain_node(p, ev);
	if (*rv != DTPLAN_OK)
		return NULL;
	if (ev->type != YAML_SCALAR_EVENT && depth >= MAX_DEPTH) {
		*rv = dtplan__yaml_err(p, line, "nested more than %d levels deep", MAX_DEPTH);
		return NULL;
	}
	y = ynode_new(ev->type == YAML_SCALAR_EVENT          ? Y_SCALAR
		      : ev->type == YAML_MAPPING_START_EVENT ? Y_MAP
							     : Y_SEQ,
		      line);
	if (y == NULL) {
		*rv = dtplan__yaml_nomem(p, line);
		return NULL;
	}
	if (y->kind == Y_SCALAR)
		y->text = scalar_text(p, ev, rv);
	else if (y->kind == Y_MAP)
		*rv = mapping(p, yp, y, depth + 1);
	else
		*rv = sequence(p, yp, y, depth + 1);
	if (*rv != DTPLAN_OK) {
		dtplan__ynode_free(y);
		return NULL;
	}
	return y;
}

/* The stream: one document at most, its root into *root. */
static enum dtplan_err stream(struct yparser *p, yaml_parser_t *yp, struct ynode **root)
{
	yaml_event_t ev;
	enum dtplan_err rv = next(p, yp, &ev); /* the stream's start */
	int docs = 0;

	yaml_event_delete(&ev);
	while (rv == DTPLAN_OK) {
		rv = next(p, yp, &ev);
		if (rv != DTPLAN_OK)
			break;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_DOCUMENT_START_EVENT || docs++ > 0) {
			rv = dtplan__yaml_err(p, line_of(&ev.start_mark),
					      "a second document ('---'): one topology.yaml "
					      "document only");
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
		rv = next(p, yp, &ev);
		if (rv != DTPLAN_OK)
			break;
		*root = node(p, yp, &ev, 0, &rv);
		yaml_event_delete(&ev);
		if (rv == DTPLAN_OK)
			rv = next(p, yp, &ev); /* the document's end */
		if (rv == DTPLAN_OK)
			yaml_event_delete(&ev);
	}
	/* "---" alone: an empty document, as a text of comments */
	if (rv == DTPLAN_OK && *root != NULL && (*root)->kind == Y_SCALAR &&
	    (*root)->text[0] == '\0') {
		dtplan__ynode_free(*root);
		*root = NULL;
	}
	return rv;
}

enum dtplan_err dtplan__yaml_read(struct yparser *p, const char *text, struct ynode **root)
{
	yaml_parser_t yp;
	enum dtplan_err rv;

	*root = NULL;
	p->text = text;
	p->len = strlen(text);
	if (yaml_parser_initialize(&yp) == 0)
		return dtplan__yaml_nomem(p, 0);
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, p->len);
	rv = stream(p, &yp, root);
	yaml_parser_delete(&yp);
	if (rv != DTPLAN_OK) {
		dtplan__ynode_free(*root);
		*root = NULL;
	}
	return rv;
}
