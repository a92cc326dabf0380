/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_cut.c: the answer's top-level "switches" array cut out of its text
 * by the raw scanner (base/base.h), its members as spans.  See
 * fabric_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/fabric_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- the switches read one at a time ----
 *
 * A Jansson tree of the whole answer costs about 100 bytes a value: 200,000
 * switches took some 140 MB before any of them was read.  So the answer is
 * cut where its top-level "switches" array holds its members, the rest of
 * the document (with "switches": []) is loaded whole, and each switch alone,
 * read once and dropped.  The cut only finds where values end (strings,
 * brackets); Jansson still parses every byte.  Whatever the cut does not
 * take as it expects, and any part that does not parse, is left to the
 * whole document's load, whose error is the one said.
 */

/* The members of the array s[i..] as spans, *end one past it; false when it
 * is not cut as expected. */
static bool cut_array(struct jparse *p, const char *s, size_t i, size_t len, size_t *end)
{
	size_t cap = 0;

	i = dtplan__json_skip_blank(s, i + 1, len);
	if (i < len && s[i] == ']') {
		*end = i + 1;
		return true;
	}
	for (;;) {
		size_t e = dtplan__json_skip_value(s, i, len);

		if (e == 0)
			return false;
		if (p->n_spans == cap) {
			struct span *v;

			cap = cap ? 2 * cap : 1024;
			v = realloc(p->spans, cap * sizeof(*v));
			if (v == NULL)
				return false;
			p->spans = v;
		}
		p->spans[p->n_spans++] = (struct span){i, e - i};
		i = dtplan__json_skip_blank(s, e, len);
		if (i < len && s[i] == ']') {
			*end = i + 1;
			return true;
		}
		if (i >= len || s[i] != ',')
			return false;
		i = dtplan__json_skip_blank(s, i + 1, len);
	}
}

/*
 * The document without its switches: a copy of text with the value of its
 * top-level "switches", an array, cut out as [] and its members in p->spans.
 * NULL (p->spans freed) when there is no such array or the text is not cut
 * as expected: then the whole document is loaded.
 */
char *dtplan__fabric_cut_switches(struct jparse *p, const char *text, size_t len, size_t *out_len)
{
	size_t i = dtplan__json_skip_blank(text, 0, len), from = 0, to = 0;
	char *rest = NULL;

	if (i >= len || text[i] != '{')
		return NULL;
	i = dtplan__json_skip_blank(text, i + 1, len);
	while (i < len && text[i] == '"') {
		size_t k = i, e = dtplan__json_skip_value(text, i, len), v;

		if (e == 0)
			return NULL;
		i = dtplan__json_skip_blank(text, e, len);
		if (i >= len || text[i] != ':')
			goto no;
		v = dtplan__json_skip_blank(text, i + 1, len);
		if (e - k == 10 && memcmp(text + k, "\"switches\"", 10) == 0 && v < len &&
		    text[v] == '[') {
			if (to != 0 || !cut_array(p, text, v, len, &to))
				goto no;
			from = v;
			i = to;
		} else {
			i = dtplan__json_skip_value(text, v, len);
			if (i == 0)
				goto no;
		}
		i = dtplan__json_skip_blank(text, i, len);
		if (i < len && text[i] == ',')
			i = dtplan__json_skip_blank(text, i + 1, len);
		else
			break;
	}
	if (i >= len || text[i] != '}' || dtplan__json_skip_blank(text, i + 1, len) != len ||
	    to == 0)
		goto no;
	rest = malloc(len - (to - from) + 3);
	if (rest == NULL)
		goto no;
	memcpy(rest, text, from);
	memcpy(rest + from, "[]", 2);
	memcpy(rest + from + 2, text + to, len - to);
	*out_len = len - (to - from) + 2;
	rest[*out_len] = '\0';
	return rest;
no:
	free(p->spans);
	p->spans = NULL;
	p->n_spans = 0;
	return NULL;
}
