/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_load.c: Jansson's parser for JSON that dtplan did not write (the
 * fabric service's answer, the measurement file, node JSON, a model's
 * config.json, a plan handed to a report), behind the bounds of the plan
 * reader (doc/internals/limits.md, "JSON"): a scan that allocates nothing
 * refuses nesting deeper than DTPLAN_JSON_MAX_DEPTH and more values than
 * the caller allows before a tree is built.  A Jansson tree costs about 100
 * bytes a value, so a file's bound alone would let 64 MiB of "{}," take
 * several GB.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>

/* Line of byte pos, for messages. */
static int line_at(const char *s, size_t pos)
{
	int line = 1;

	for (size_t i = 0; i < pos; i++)
		line += s[i] == '\n';
	return line;
}

/*
 * Counts the values of text, at least (every container, string and comma
 * starts one more; one scalar may stand alone), and follows the nesting;
 * syntax is Jansson's to check.  Returns the byte where a bound is passed,
 * len when none is, with *deep telling which.
 */
static size_t scan(const char *text, size_t len, size_t max_values, bool *deep)
{
	size_t values = 1;
	int depth = 0;

	*deep = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (c == '"') {
			/* a string, counted, then passed over; one left open ends the scan */
			if (++values > max_values)
				return i;
			i = dtplan__json_skip_string(text, i, len);
			if (i == 0)
				return len;
			i--;
			continue;
		}
		switch (c) {
		case '{':
		case '[':
			if (++depth > DTPLAN_JSON_MAX_DEPTH) {
				*deep = true;
				return i;
			}
			values++;
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			values++;
			break;
		default:
			continue;
		}
		if (values > max_values)
			return i;
	}
	return len;
}

enum dtplan_err dtplan__json_bounded(const char *text, size_t len, size_t max_values,
				     const char *source, const char *prefix,
				     struct dtplan_error *err)
{
	size_t at;
	bool deep;

	if (text == NULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, 0, "%sno text", prefix);
	at = scan(text, len, max_values, &deep);
	if (at < len && deep)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, line_at(text, at),
				     "%snested more than %d levels deep", prefix,
				     DTPLAN_JSON_MAX_DEPTH);
	if (at < len)
		return dtplan__error(err, DTPLAN_ERR_PARSE, source, line_at(text, at),
				     "%smore than %zu values", prefix, max_values);
	return DTPLAN_OK;
}

struct json_t *dtplan__json_load(const char *text, size_t len, size_t max_values,
				 const char *source, const char *prefix, struct dtplan_error *err)
{
	json_error_t jerr;
	json_t *root;

	if (dtplan__json_bounded(text, len, max_values, source, prefix, err) != DTPLAN_OK)
		return NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		dtplan__error(err, DTPLAN_ERR_PARSE, source, jerr.line > 0 ? jerr.line : 0, "%s%s",
			      prefix, jerr.text);
	return root;
}
