/*
 * yaml.c: the YAML of topology.yaml, a subset read without a YAML library:
 * block mappings and block sequences by indentation (spaces),
 * "- key: value" items, [a, b] lists of scalars, plain, 'single' and "double" quoted scalars, '#'
 * comments and one leading "---".  Anchors, aliases, tags, multi-line
 * scalars, {} maps and several documents are refused, each by name and line.
 *
 * What the values mean is topology_yaml.c's.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/yaml_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- lines ---- */

/* Cuts a '#' comment that starts the line or follows a blank, outside quotes. */
static void cut_comment(char *s)
{
	char quote = 0;

	for (char *c = s; *c != '\0'; c++) {
		if (quote != 0) {
			if (*c == quote)
				quote = 0;
			else if (quote == '"' && *c == '\\' && c[1] != '\0')
				c++;
		} else if (*c == '"' || *c == '\'') {
			quote = *c;
		} else if (*c == '#' && (c == s || c[-1] == ' ' || c[-1] == '\t')) {
			*c = '\0';
			return;
		}
	}
}

static void trim_right(char *s)
{
	size_t len = strlen(s);

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

/* Splits the copy into its non-blank lines. */
static enum dtplan_err split_lines(struct yparser *p, char *copy)
{
	size_t cap = 0;
	int lineno = 0;
	bool seen_content = false;

	for (char *next = copy; next != NULL;) {
		char *s = next, *nl = strchr(s, '\n');
		int indent = 0;

		next = nl != NULL ? nl + 1 : NULL;
		if (nl != NULL)
			*nl = '\0';
		lineno++;
		while (s[indent] == ' ')
			indent++;
		cut_comment(s + indent);
		trim_right(s);
		if (s[indent] == '\0')
			continue;
		if (s[indent] == '\t')
			return dtplan__yaml_err(p, lineno,
						"a tab in the indentation (YAML indents with "
						"spaces)");
		if (strcmp(s + indent, "---") == 0 || strncmp(s + indent, "--- ", 4) == 0) {
			if (seen_content || indent > 0)
				return dtplan__yaml_err(p, lineno,
							"a second document ('---'): one "
							"topology.yaml document only");
			seen_content = true;
			continue;
		}
		if (strcmp(s + indent, "...") == 0 || s[indent] == '%')
			return dtplan__yaml_err(p, lineno,
						"'%s': YAML directives and document ends are not "
						"supported",
						s + indent);
		seen_content = true;
		if (p->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct yline *l = realloc(p->lines, c * sizeof(*l));

			if (l == NULL)
				return dtplan__yaml_nomem(p, lineno);
			p->lines = l;
			cap = c;
		}
		p->lines[p->n++] =
			(struct yline){.indent = indent, .line = lineno, .text = s + indent};
	}
	return DTPLAN_OK;
}

/* ---- values ---- */

static bool is_item(const char *s)
{
	return s[0] == '-' && (s[1] == '\0' || s[1] == ' ');
}

/* Where "key: value" has its colon (outside quotes), or NULL. */
static char *key_colon(char *s)
{
	char quote = 0;

	for (char *c = s; *c != '\0'; c++) {
		if (quote != 0) {
			if (*c == quote)
				quote = 0;
			continue;
		}
		if ((*c == '"' || *c == '\'') && c == s)
			quote = *c;
		else if (*c == ':' && (c[1] == '\0' || c[1] == ' '))
			return c;
	}
	return NULL;
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

/*
 * One scalar of text s (trimmed, no comment), unquoted into a new string;
 * NULL with *rv set when it is malformed or of a kind this reader refuses.
 */
static char *scalar(struct yparser *p, const char *s, int line, enum dtplan_err *rv)
{
	size_t len = strlen(s);
	char *out, *o;

	*rv = DTPLAN_OK;
	switch (s[0]) {
	case '&':
		*rv = dtplan__yaml_err(p, line, "'%s': anchors (&) are not supported", s);
		return NULL;
	case '*':
		*rv = dtplan__yaml_err(p, line, "'%s': aliases (*) are not supported", s);
		return NULL;
	case '!':
		*rv = dtplan__yaml_err(p, line, "'%s': tags (!) are not supported", s);
		return NULL;
	case '|':
	case '>':
		*rv = dtplan__yaml_err(p, line,
				       "'%s': multi-line scalars (| and >) are not supported", s);
		return NULL;
	case '{':
		*rv = dtplan__yaml_err(p, line, "'%s': flow mappings ({...}) are not supported", s);
		return NULL;
	case '?':
		*rv = dtplan__yaml_err(p, line, "'%s': complex keys (?) are not supported", s);
		return NULL;
	case '@':
	case '`':
		*rv = dtplan__yaml_err(p, line, "'%s': a plain scalar cannot start with @ or `", s);
		return NULL;
	default:
		break;
	}
	out = malloc(len + 1);
	if (out == NULL) {
		*rv = dtplan__yaml_nomem(p, line);
		return NULL;
	}
	if (s[0] != '"' && s[0] != '\'') {
		memcpy(out, s, len + 1);
		return out;
	}
	o = out;
	for (size_t k = 1; k < len; k++) {
		if (s[k] == s[0] && s[0] == '\'' && s[k + 1] == '\'') {
			*o++ = '\'';
			k++;
		} else if (s[k] == s[0]) {
			if (k + 1 != len)
				break;
			*o = '\0';
			return out;
		} else if (s[0] == '"' && s[k] == '\\' && k + 1 < len) {
			char e = s[++k];

			*o++ = e == 'n' ? '\n' : e == 't' ? '\t' : e;
		} else {
			*o++ = s[k];
		}
	}
	free(out);
	*rv = dtplan__yaml_err(p, line, "%s: a quoted scalar that does not end with its quote", s);
	return NULL;
}

/* A scalar or an [a, b] list of scalars: the value of a key or an item. */
static struct ynode *value(struct yparser *p, char *s, int line, enum dtplan_err *rv)
{
	struct ynode *y;

	if (s[0] != '[') {
		y = ynode_new(Y_SCALAR, line);
		if (y == NULL) {
			*rv = dtplan__yaml_nomem(p, line);
			return NULL;
		}
		y->text = scalar(p, s, line, rv);
		if (y->text == NULL) {
			free(y);
			return NULL;
		}
		return y;
	}
	if (s[strlen(s) - 1] != ']') {
		*rv = dtplan__yaml_err(p, line,
				       "'%s': only one-line [a, b] lists of scalars are supported",
				       s);
		return NULL;
	}
	y = ynode_new(Y_SEQ, line);
	if (y == NULL) {
		*rv = dtplan__yaml_nomem(p, line);
		return NULL;
	}
	s[strlen(s) - 1] = '\0';
	/* items end at commas outside quotes; a hostlist's brackets need quotes */
	for (char *c = s + 1, *start = s + 1, quote = 0;; c++) {
		struct ynode *item;
		char *tok = start;

		if (quote != 0 && *c != '\0') {
			if (*c == quote)
				quote = 0;
			continue;
		}
		if (*c == '"' || *c == '\'') {
			quote = *c;
			continue;
		}
		if (*c == '[' || *c == '{' || *c == ']') {
			*rv = dtplan__yaml_err(
				p, line,
				"'%s]': nested lists and maps are not supported (quote "
				"a hostlist: 'node[1-4]')",
				s);
			dtplan__ynode_free(y);
			return NULL;
		}
		if (*c != ',' && *c != '\0')
			continue;
		if (quote != 0) {
			*rv = dtplan__yaml_err(p, line,
					       "'%s]': a quoted scalar that does not end with its "
					       "quote",
					       s);
			dtplan__ynode_free(y);
			return NULL;
		}
		start = c + 1;
		if (*c == ',')
			*c = '\0';
		else
			start = NULL;
		while (*tok == ' ')
			tok++;
		trim_right(tok);
		if (*tok != '\0') {
			item = value(p, tok, line, rv);
			if (item == NULL || !ynode_add(y, NULL, item)) {
				if (item != NULL)
					*rv = dtplan__yaml_nomem(p, line);
				dtplan__ynode_free(item);
				dtplan__ynode_free(y);
				return NULL;
			}
		}
		if (start == NULL)
			break;
	}
	*rv = DTPLAN_OK;
	return y;
}

/* ---- blocks ---- */

static struct ynode *block(struct yparser *p, int indent, int depth, enum dtplan_err *rv);

/* The value of "key:" with nothing after it and nothing nested. */
static char empty[1];

static struct ynode *sequence(struct yparser *p, int indent, int depth, enum dtplan_err *rv)
{
	struct ynode *y = ynode_new(Y_SEQ, p->lines[p->i].line), *item;

	if (y == NULL) {
		*rv = dtplan__yaml_nomem(p, p->lines[p->i].line);
		return NULL;
	}
	while (p->i < p->n && p->lines[p->i].indent == indent && is_item(p->lines[p->i].text)) {
		struct yline *l = &p->lines[p->i];
		char *rest = l->text + 1;
		int col = indent + 1;

		while (*rest == ' ') {
			rest++;
			col++;
		}
		if (*rest == '\0') {
			p->i++;
			if (p->i < p->n && p->lines[p->i].indent > indent)
				item = block(p, p->lines[p->i].indent, depth + 1, rv);
			else
				item = value(p, empty, l->line, rv);
		} else if (is_item(rest) || key_colon(rest) != NULL) {
			/* "- key: value" opens a mapping at the key's column */
			l->indent = col;
			l->text = rest;
			item = block(p, col, depth + 1, rv);
		} else {
			p->i++;
			item = value(p, rest, l->line, rv);
		}
		if (item == NULL || !ynode_add(y, NULL, item)) {
			if (item != NULL)
				*rv = dtplan__yaml_nomem(p, l->line);
			dtplan__ynode_free(item);
			dtplan__ynode_free(y);
			return NULL;
		}
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			*rv = dtplan__yaml_err(p, p->lines[p->i].line,
					       "'%s': unexpected indentation (a "
					       "multi-line value?)",
					       p->lines[p->i].text);
			dtplan__ynode_free(y);
			return NULL;
		}
	}
	*rv = DTPLAN_OK;
	return y;
}

static struct ynode *mapping(struct yparser *p, int indent, int depth, enum dtplan_err *rv)
{
	struct ynode *y = ynode_new(Y_MAP, p->lines[p->i].line), *child;
	/* the keys seen, found by hash: 400,000 keys used to take over 20 s
	 * compared each with every earlier one (issue 26) */
	struct dtplan__strmap seen = {0};

	if (y == NULL || dtplan__strmap_init(&seen, 8) != DTPLAN_OK) {
		*rv = dtplan__yaml_nomem(p, p->lines[p->i].line);
		dtplan__ynode_free(y);
		return NULL;
	}
	while (p->i < p->n && p->lines[p->i].indent == indent) {
		struct yline *l = &p->lines[p->i];
		char *colon = key_colon(l->text), *key, *rest;

		if (is_item(l->text)) {
			*rv = dtplan__yaml_err(p, l->line,
					       "'%s': a list item among a mapping's keys", l->text);
			goto fail;
		}
		if (colon == NULL) {
			*rv = dtplan__yaml_err(p, l->line, "'%s': expected 'key: value'", l->text);
			goto fail;
		}
		*colon = '\0';
		trim_right(l->text);
		key = scalar(p, l->text, l->line, rv);
		if (key == NULL)
			goto fail;
		switch (dtplan__strmap_put(&seen, key, 0, NULL)) {
		case DTPLAN_OK:
			break;
		case DTPLAN_ERR_INVAL:
			*rv = dtplan__yaml_err(p, l->line, "'%s' given twice in one mapping", key);
			free(key);
			goto fail;
		default:
			*rv = dtplan__yaml_nomem(p, l->line);
			free(key);
			goto fail;
		}
		rest = colon + 1;
		while (*rest == ' ')
			rest++;
		p->i++;
		if (*rest != '\0')
			child = value(p, rest, l->line, rv);
		else if (p->i < p->n && p->lines[p->i].indent > indent)
			child = block(p, p->lines[p->i].indent, depth + 1, rv);
		else if (p->i < p->n && p->lines[p->i].indent == indent &&
			 is_item(p->lines[p->i].text))
			child = sequence(p, indent, depth + 1, rv); /* "key:\n- item" */
		else
			child = value(p, empty, l->line, rv);
		if (child != NULL)
			child->line = l->line; /* messages point at the key */
		if (child == NULL || !ynode_add(y, key, child)) {
			if (child != NULL)
				*rv = dtplan__yaml_nomem(p, l->line);
			free(key);
			dtplan__ynode_free(child);
			goto fail;
		}
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			*rv = dtplan__yaml_err(p, p->lines[p->i].line,
					       "'%s': unexpected indentation (a "
					       "multi-line value?)",
					       p->lines[p->i].text);
			goto fail;
		}
	}
	dtplan__strmap_fini(&seen);
	*rv = DTPLAN_OK;
	return y;
fail:
	dtplan__strmap_fini(&seen);
	dtplan__ynode_free(y);
	return NULL;
}

static struct ynode *block(struct yparser *p, int indent, int depth, enum dtplan_err *rv)
{
	if (depth > MAX_DEPTH) {
		*rv = dtplan__yaml_err(p, p->lines[p->i].line, "nested more than 32 levels deep");
		return NULL;
	}
	if (is_item(p->lines[p->i].text))
		return sequence(p, indent, depth, rv);
	return mapping(p, indent, depth, rv);
}

enum dtplan_err dtplan__yaml_read(struct yparser *p, char *copy, struct ynode **root)
{
	enum dtplan_err rv = split_lines(p, copy);

	*root = NULL;
	if (rv != DTPLAN_OK || p->n == 0)
		return rv;
	*root = block(p, p->lines[0].indent, 0, &rv);
	if (rv == DTPLAN_OK && p->i < p->n)
		rv = dtplan__yaml_err(p, p->lines[p->i].line, "'%s': unexpected indentation",
				      p->lines[p->i].text);
	return rv;
}
