/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_scan.c: the one raw JSON scanner: where blanks, a string and a value
 * end in a text, without building or checking anything.  For readers that
 * cut a document before a parser sees it (the fabric answer's switches),
 * count its values (json_load.c) or copy it compactly (a report's plan);
 * syntax stays the parser's to check.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <string.h>

size_t dtplan__json_skip_blank(const char *s, size_t i, size_t len)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

size_t dtplan__json_skip_string(const char *s, size_t i, size_t len)
{
	for (i++; i < len && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i < len ? i + 1 : 0;
}

size_t dtplan__json_skip_value(const char *s, size_t i, size_t len)
{
	size_t depth = 0;

	if (i >= len)
		return 0;
	if (s[i] != '"' && s[i] != '{' && s[i] != '[') {
		size_t start = i;

		while (i < len && strchr(",:{}[]\" \t\r\n", s[i]) == NULL)
			i++;
		return i > start ? i : 0;
	}
	while (i < len) {
		if (s[i] == '"') {
			i = dtplan__json_skip_string(s, i, len);
			if (i == 0)
				return 0;
			if (depth == 0)
				return i;
			continue;
		}
		if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if (s[i] == '}' || s[i] == ']') {
			if (--depth == 0)
				return i + 1;
		}
		i++;
	}
	return 0;
}
