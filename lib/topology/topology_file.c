/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_file.c: a topology file in whichever form Slurm reads, handed to
 * its reader: topology.yaml (lib/topology/topology_yaml.c), a topology.conf of
 * blocks (lib/topology/topology_block.c) or of switches (lib/topology/topology.c).
 *
 * The form: a path (or source name) ending in .yaml or .yml is YAML; so is
 * text whose first line that is not blank or a comment starts with "-", or
 * with "---", or has a ':' before any '='.  Otherwise a BlockName= or
 * BlockSizes= key anywhere makes it topology/block, and anything else is
 * topology/tree.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "topology/topology_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum form { FORM_TREE, FORM_BLOCK, FORM_YAML };

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && dtplan__streq_nocase(s + a - b, suffix);
}

/* Whether a Key= token named key starts at p (the start of a word). */
static bool key_at(const char *p, const char *key)
{
	size_t n = strlen(key);

	return strncasecmp(p, key, n) == 0 && p[n] == '=';
}

static enum form sniff(const char *text, const char *source, bool yaml)
{
	const char *line = text;
	bool first = yaml;

	if (yaml && (ends_with(source, ".yaml") || ends_with(source, ".yml")))
		return FORM_YAML;
	while (*line != '\0') {
		const char *end = strchr(line, '\n'), *c = line;

		if (end == NULL)
			end = line + strlen(line);
		while (c < end && isspace((unsigned char)*c))
			c++;
		if (c < end && *c != '#') {
			if (first) {
				size_t eq = strcspn(c, "=\n"), colon = strcspn(c, ":\n");

				if (*c == '-' || colon < eq)
					return FORM_YAML;
				first = false;
			}
			for (const char *w = c; w < end; w++) {
				if (*w == '#')
					break;
				if ((w == c || isspace((unsigned char)w[-1])) &&
				    (key_at(w, "BlockName") || key_at(w, "BlockSizes")))
					return FORM_BLOCK;
			}
		}
		line = *end != '\0' ? end + 1 : end;
	}
	return FORM_TREE;
}

static enum dtplan_err parse_text(const char *text, const char *source_name, bool yaml,
				  struct dtplan_topology **out, struct dtplan_error *err)
{
	const char *source = source_name ? source_name : "topology.conf";

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0, "no text to parse");
	switch (sniff(text, source, yaml)) {
	case FORM_YAML:
		return dtplan__topology_parse_yaml(text, source, out, err);
	case FORM_BLOCK:
		return dtplan__topology_parse_block(text, source, out, err);
	case FORM_TREE:
	default:
		return dtplan__topology_parse_tree(text, source, out, err);
	}
}

enum dtplan_err dtplan_topology_parse_string(const char *text, const char *source_name,
					     struct dtplan_topology **out, struct dtplan_error *err)
{
	return parse_text(text, source_name, true, out, err);
}

enum dtplan_err dtplan_topology_parse_conf(const char *text, const char *source_name,
					   struct dtplan_topology **out, struct dtplan_error *err)
{
	return parse_text(text, source_name, false, out, err);
}

enum dtplan_err dtplan_topology_parse_file(const char *path, struct dtplan_topology **out,
					   struct dtplan_error *err)
{
	char *text = NULL;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	rv = dtplan_file_read(path, DTPLAN_FILE_TOPOLOGY, &text, NULL, err);
	if (rv == DTPLAN_OK)
		rv = dtplan_topology_parse_string(text, path, out, err);
	free(text);
	return rv;
}
