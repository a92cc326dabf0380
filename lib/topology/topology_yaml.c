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
 * dtplan reads the first topology with cluster_default: true (else the
 * first), the one Slurm uses for partitions that name none.  Its switches
 * and blocks become the same entries topology.conf gives (lib/topology/topology.c,
 * lib/topology/topology_block.c); each ring (ring:) or torus (torus3d:) of
 * Slurm 26.05 a leaf of its own, its nodes in ring or x-major order
 * (doc/internals/placement.md, "Rings and toruses").  flat: is true or a
 * mapping of options (alpha_step_rank).  Checked against SchedMD/slurm
 * slurm-26.05 (531c4b2): doc/man/man5/topology.yaml.5 and the data_parser's
 * TOPOLOGY_CONF, RING_CONFIG and TORUS3D_CONFIG parsers (v0.0.45).
 *
 * The YAML is a subset, read without a YAML library: block mappings and
 * block sequences by indentation (spaces), "- key: value" items, [a, b]
 * lists of scalars, plain, 'single' and "double" quoted scalars, '#'
 * comments and one leading "---".  Anchors, aliases, tags, multi-line
 * scalars, {} maps and several documents are refused, each by name and line.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void ynode_free(struct ynode *y)
{
	if (y == NULL)
		return;
	for (size_t k = 0; k < y->n; k++) {
		if (y->keys != NULL)
			free(y->keys[k]);
		ynode_free(y->items[k]);
	}
	free(y->keys);
	free(y->items);
	free(y->text);
	free(y);
}

static enum dtplan_err yerr(struct yparser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum dtplan_err yerr(struct yparser *p, int line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dtplan__error(p->err, DTPLAN_ERR_PARSE, p->source, line, "%s", msg);
}

static enum dtplan_err nomem(struct yparser *p, int line)
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
			return yerr(p, lineno,
				    "a tab in the indentation (YAML indents with "
				    "spaces)");
		if (strcmp(s + indent, "---") == 0 || strncmp(s + indent, "--- ", 4) == 0) {
			if (seen_content || indent > 0)
				return yerr(p, lineno,
					    "a second document ('---'): one "
					    "topology.yaml document only");
			seen_content = true;
			continue;
		}
		if (strcmp(s + indent, "...") == 0 || s[indent] == '%')
			return yerr(p, lineno,
				    "'%s': YAML directives and document ends are not "
				    "supported",
				    s + indent);
		seen_content = true;
		if (p->n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct yline *l = realloc(p->lines, c * sizeof(*l));

			if (l == NULL)
				return nomem(p, lineno);
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
		*rv = yerr(p, line, "'%s': anchors (&) are not supported", s);
		return NULL;
	case '*':
		*rv = yerr(p, line, "'%s': aliases (*) are not supported", s);
		return NULL;
	case '!':
		*rv = yerr(p, line, "'%s': tags (!) are not supported", s);
		return NULL;
	case '|':
	case '>':
		*rv = yerr(p, line, "'%s': multi-line scalars (| and >) are not supported", s);
		return NULL;
	case '{':
		*rv = yerr(p, line, "'%s': flow mappings ({...}) are not supported", s);
		return NULL;
	case '?':
		*rv = yerr(p, line, "'%s': complex keys (?) are not supported", s);
		return NULL;
	case '@':
	case '`':
		*rv = yerr(p, line, "'%s': a plain scalar cannot start with @ or `", s);
		return NULL;
	default:
		break;
	}
	out = malloc(len + 1);
	if (out == NULL) {
		*rv = nomem(p, line);
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
	*rv = yerr(p, line, "%s: a quoted scalar that does not end with its quote", s);
	return NULL;
}

/* A scalar or an [a, b] list of scalars: the value of a key or an item. */
static struct ynode *value(struct yparser *p, char *s, int line, enum dtplan_err *rv)
{
	struct ynode *y;

	if (s[0] != '[') {
		y = ynode_new(Y_SCALAR, line);
		if (y == NULL) {
			*rv = nomem(p, line);
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
		*rv = yerr(p, line, "'%s': only one-line [a, b] lists of scalars are supported", s);
		return NULL;
	}
	y = ynode_new(Y_SEQ, line);
	if (y == NULL) {
		*rv = nomem(p, line);
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
			*rv = yerr(p, line,
				   "'%s]': nested lists and maps are not supported (quote "
				   "a hostlist: 'node[1-4]')",
				   s);
			ynode_free(y);
			return NULL;
		}
		if (*c != ',' && *c != '\0')
			continue;
		if (quote != 0) {
			*rv = yerr(p, line,
				   "'%s]': a quoted scalar that does not end with its "
				   "quote",
				   s);
			ynode_free(y);
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
					*rv = nomem(p, line);
				ynode_free(item);
				ynode_free(y);
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
		*rv = nomem(p, p->lines[p->i].line);
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
				*rv = nomem(p, l->line);
			ynode_free(item);
			ynode_free(y);
			return NULL;
		}
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			*rv = yerr(p, p->lines[p->i].line,
				   "'%s': unexpected indentation (a "
				   "multi-line value?)",
				   p->lines[p->i].text);
			ynode_free(y);
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
		*rv = nomem(p, p->lines[p->i].line);
		ynode_free(y);
		return NULL;
	}
	while (p->i < p->n && p->lines[p->i].indent == indent) {
		struct yline *l = &p->lines[p->i];
		char *colon = key_colon(l->text), *key, *rest;

		if (is_item(l->text)) {
			*rv = yerr(p, l->line, "'%s': a list item among a mapping's keys", l->text);
			goto fail;
		}
		if (colon == NULL) {
			*rv = yerr(p, l->line, "'%s': expected 'key: value'", l->text);
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
			*rv = yerr(p, l->line, "'%s' given twice in one mapping", key);
			free(key);
			goto fail;
		default:
			*rv = nomem(p, l->line);
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
				*rv = nomem(p, l->line);
			free(key);
			ynode_free(child);
			goto fail;
		}
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			*rv = yerr(p, p->lines[p->i].line,
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
	ynode_free(y);
	return NULL;
}

static struct ynode *block(struct yparser *p, int indent, int depth, enum dtplan_err *rv)
{
	if (depth > MAX_DEPTH) {
		*rv = yerr(p, p->lines[p->i].line, "nested more than 32 levels deep");
		return NULL;
	}
	if (is_item(p->lines[p->i].text))
		return sequence(p, indent, depth, rv);
	return mapping(p, indent, depth, rv);
}

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
		*rv = out != NULL ? DTPLAN_OK : nomem(p, y->line);
		return out;
	}
	for (size_t k = 0; y->kind == Y_SEQ && k < y->n; k++) {
		if (y->items[k]->kind != Y_SCALAR || y->items[k]->text[0] == '\0') {
			*rv = yerr(p, y->items[k]->line, "%s: expected a host name or hostlist",
				   what);
			return NULL;
		}
		len += strlen(y->items[k]->text) + 1;
	}
	if (y->kind != Y_SEQ || y->n == 0) {
		*rv = yerr(p, y->line, "%s: expected a hostlist such as node[01-04]", what);
		return NULL;
	}
	out = calloc(1, len);
	if (out == NULL) {
		*rv = nomem(p, y->line);
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
			return yerr(p, y->line, "%s: each item must be a mapping", list_key);
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
			return nomem(p, y->line);
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
			return yerr(p, v->line,
				    "block_sizes: expected node counts such as "
				    "[18, 36]");
		strcpy(text, v->text);
		for (tok = strtok_r(text, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			while (*tok == ' ')
				tok++;
			trim_right(tok);
			if (*n == 16 ||
			    dtplan_parse_long(tok, "block_sizes", 1, DTPLAN_HOSTLIST_MAX,
					      &sizes[*n], NULL) != DTPLAN_OK)
				return yerr(p, v->line,
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
		return yerr(p, flat->line, "topology '%s': flat: must be true or a mapping", name);
	rv = only_keys(p, flat, "flat", flat_keys);
	if (rv != DTPLAN_OK)
		return rv;
	v = get(flat, "alpha_step_rank");
	if (v != NULL && !is_true(v) &&
	    (v->kind != Y_SCALAR ||
	     (strcmp(v->text, "false") != 0 && strcmp(v->text, "False") != 0 &&
	      strcmp(v->text, "FALSE") != 0)))
		return yerr(p, v->line, "flat: alpha_step_rank: expected true or false");
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
		return yerr(p, ring->line, "ring: must be a mapping");
	rv = only_keys(p, ring, "ring", ring_keys);
	if (rv != DTPLAN_OK)
		return rv;
	list = get(ring, "rings");
	if (list == NULL || list->kind != Y_SEQ || list->n == 0)
		return yerr(p, list != NULL ? list->line : ring->line,
			    "'rings:' must be a list of rings ('- ring: NAME')");
	for (size_t k = 0; k < list->n; k++) {
		const struct ynode *y = list->items[k], *name, *nodes;
		struct dtplan__topo_entry *e;
		char(*names)[64] = NULL;
		size_t count = 0;

		if (y->kind != Y_MAP)
			return yerr(p, y->line, "rings: each item must be a mapping");
		rv = only_keys(p, y, "ring", item_keys);
		if (rv != DTPLAN_OK)
			return rv;
		name = get(y, "ring");
		nodes = get(y, "nodes");
		if (name == NULL || name->kind != Y_SCALAR || !dtplan__topo_valid_name(name->text))
			return yerr(p, y->line,
				    "rings: every item needs 'ring: NAME' (letters, digits, '-', "
				    "'_'; at most 63)");
		if (nodes == NULL)
			return yerr(p, y->line, "ring '%s' has no nodes:", name->text);
		if (dtplan__topo_entry_add(entries, n, &cap, &e) != DTPLAN_OK)
			return nomem(p, y->line);
		dtplan__strlcpy(e->name, name->text, sizeof(e->name));
		e->line = y->line;
		if ((e->nodes = hostlist(p, nodes, "nodes", &rv)) == NULL)
			return rv;
		rv = dtplan_hostlist_expand(e->nodes, RING_MAX_NODES + 1, &names, &count, NULL);
		free(names);
		if (rv != DTPLAN_OK || count > RING_MAX_NODES)
			return yerr(p, nodes->line,
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
		return yerr(p, y != NULL ? y->line : 0, "%s: expected a mapping of x, y and z",
			    what);
	rv = only_keys(p, y, what, xyz);
	for (int i = 0; i < 3 && rv == DTPLAN_OK; i++) {
		const struct ynode *v = get(y, xyz[i]);

		if (v == NULL || v->kind != Y_SCALAR ||
		    dtplan_parse_long(v->text, xyz[i], least, 65535, &d[i], NULL) != DTPLAN_OK)
			rv = yerr(p, v != NULL ? v->line : y->line,
				  "%s: %s must be a whole number from %ld to 65535", what, xyz[i],
				  least);
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
		return yerr(p, y->line,
			    "toruses: every item needs 'name: NAME' (letters, digits, '-', '_'; "
			    "at most 63)");
	dtplan__strlcpy(e->name, name->text, sizeof(e->name));
	e->line = y->line;
	rv = read_dims(p, get(y, "dims"), "dims", 1, d);
	if (rv != DTPLAN_OK)
		return rv;
	cells = d[0] * d[1] * d[2];
	if (cells > TORUS_MAX_CELLS)
		return yerr(p, y->line, "torus '%s': %ldx%ldx%ld is more than %d coordinates",
			    e->name, d[0], d[1], d[2], TORUS_MAX_CELLS);
	if ((nodes == NULL) == (regions == NULL))
		return yerr(p, y->line, "torus '%s' needs either nodes: or regions:", e->name);
	if (nodes != NULL) {
		if ((e->nodes = hostlist(p, nodes, "nodes", &rv)) == NULL)
			return rv;
		rv = dtplan_hostlist_expand(e->nodes, (size_t)cells + 1, &all, &n_all, NULL);
		free(all);
		if (rv != DTPLAN_OK || (long)n_all != cells)
			return yerr(p, nodes->line,
				    "torus '%s': %ldx%ldx%ld needs %ld nodes; nodes: names %s%zu",
				    e->name, d[0], d[1], d[2], cells,
				    rv != DTPLAN_OK ? "more or a bad hostlist, not " : "", n_all);
		return DTPLAN_OK;
	}
	if (regions->kind != Y_SEQ || regions->n == 0)
		return yerr(p, regions->line, "torus '%s': regions: must be a list", e->name);
	for (size_t k = 0; k < regions->n && rv == DTPLAN_OK; k++) {
		const struct ynode *r = regions->items[k];
		long a[3], rd[3];
		char *list = NULL;
		char(*names)[64] = NULL;
		size_t count = 0;
		struct cell *grown;

		if (r->kind != Y_MAP)
			rv = yerr(p, r->line, "regions: each item must be a mapping");
		if (rv == DTPLAN_OK)
			rv = only_keys(p, r, "region", region_keys);
		if (rv == DTPLAN_OK)
			rv = read_dims(p, get(r, "anchor"), "anchor", 0, a);
		if (rv == DTPLAN_OK)
			rv = read_dims(p, get(r, "dims"), "dims", 1, rd);
		for (int i = 0; i < 3 && rv == DTPLAN_OK; i++)
			if (a[i] + rd[i] > d[i])
				rv = yerr(p, r->line,
					  "torus '%s': a region reaches past the torus's dims "
					  "(regions do not wrap)",
					  e->name);
		if (rv == DTPLAN_OK && get(r, "nodes") == NULL)
			rv = yerr(p, r->line, "torus '%s': a region has no nodes:", e->name);
		if (rv == DTPLAN_OK)
			list = hostlist(p, get(r, "nodes"), "nodes", &rv);
		if (rv == DTPLAN_OK && (dtplan_hostlist_expand(list, (size_t)cells + 1, &names,
							       &count, NULL) != DTPLAN_OK ||
					(long)count != rd[0] * rd[1] * rd[2]))
			rv = yerr(p, r->line,
				  "torus '%s': a region of %ldx%ldx%ld needs as many nodes (nodes: "
				  "names %zu)",
				  e->name, rd[0], rd[1], rd[2], count);
		grown = rv == DTPLAN_OK ? realloc(c, (n_c + count) * sizeof(*c)) : NULL;
		if (rv == DTPLAN_OK && grown == NULL)
			rv = nomem(p, r->line);
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
				rv = nomem(p, r->line);
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
				rv = yerr(p, regions->line, "torus '%s': regions overlap", e->name);
	}
	if (rv == DTPLAN_OK && (e->nodes = calloc(1, len)) == NULL)
		rv = nomem(p, regions->line);
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
		return yerr(p, torus->line, "torus3d: must be a mapping");
	rv = only_keys(p, torus, "torus3d", torus_keys);
	if (rv != DTPLAN_OK)
		return rv;
	list = get(torus, "toruses");
	if (list == NULL || list->kind != Y_SEQ || list->n == 0)
		return yerr(p, list != NULL ? list->line : torus->line,
			    "'toruses:' must be a list of toruses ('- name: NAME')");
	for (size_t k = 0; k < list->n; k++) {
		struct dtplan__topo_entry *e;

		if (list->items[k]->kind != Y_MAP)
			return yerr(p, list->items[k]->line,
				    "toruses: each item must be a mapping");
		if (dtplan__topo_entry_add(entries, n, &cap, &e) != DTPLAN_OK)
			return nomem(p, list->items[k]->line);
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
		return *out != NULL ? DTPLAN_OK : nomem(p, flat->line);
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
		rv = tree->kind == Y_MAP ? only_keys(p, tree, "tree", tree_keys)
					 : yerr(p, tree->line, "tree: must be a mapping");
		if (rv == DTPLAN_OK)
			rv = read_entries(p, get(tree, "switches"), "switches", "switch", &entries,
					  &n);
		if (rv == DTPLAN_OK)
			rv = dtplan__topology_link(entries, n, p->source, "switch", out, p->err);
	} else {
		rv = blk->kind == Y_MAP ? only_keys(p, blk, "block", block_keys)
					: yerr(p, blk->line, "block: must be a mapping");
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
	char *copy;
	enum dtplan_err rv;

	*out = NULL;
	copy = strdup(text);
	if (copy == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, source, 0, "out of memory");
	rv = split_lines(&p, copy);
	if (rv == DTPLAN_OK && p.n == 0)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, 0, "no topologies defined");
	if (rv == DTPLAN_OK)
		root = block(&p, p.lines[0].indent, 0, &rv);
	if (rv == DTPLAN_OK && p.i < p.n)
		rv = yerr(&p, p.lines[p.i].line, "'%s': unexpected indentation", p.lines[p.i].text);
	if (rv == DTPLAN_OK && root->kind != Y_SEQ)
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, root->line,
				   "topology.yaml is a list of topologies ('- topology: NAME')");
	for (size_t k = 0; rv == DTPLAN_OK && k < root->n; k++) {
		const struct ynode *t = root->items[k], *name = get(t, "topology");

		if (t->kind != Y_MAP || name == NULL || name->kind != Y_SCALAR ||
		    name->text[0] == '\0' || strcmp(t->keys[0], "topology") != 0)
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, source, t->line,
					   "every topology starts with 'topology: NAME'");
		else if (pick == NULL && is_true(get(t, "cluster_default")))
			pick = t;
	}
	if (rv == DTPLAN_OK)
		rv = read_topology(&p, pick != NULL ? pick : root->items[0], out);
	ynode_free(root);
	free(p.lines);
	free(copy);
	return rv;
}
