/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_json.c: fabric descriptions as a service serves them.  Two formats,
 * chosen by the answer's Content-Type or the site's FabricFormat=
 * (dtplan_fabric_format_of_type()): dtplan.fabric/1 JSON and Slurm's
 * topology.conf.  Written back as JSON by fabric_export.c.  This file is the
 * entry and the passes' order; the switches, the raw cut of their array and
 * the member getters are its neighbours over fabric_int.h.  What a plan
 * then uses of an answer is probes/fabric_source.c's to decide.
 *
 * The JSON form holds what topology.conf and the site file hold together, so
 * it is read by writing those two texts and handing them to the parsers of
 * lib/topology/topology.c and lib/site/config.c: one switch per topology line, one setting
 * per site line.  A fabric from a service then means exactly what the same
 * content in local files means, and every rule those parsers check (names,
 * hostlists, cycles, a node under two leaves, overlapping node sets) holds
 * for both.  Their errors come back naming the JSON element of the line.
 *
 * The JSON's schema (dtplan.conf(5) documents it):
 *   { "schema": "dtplan.fabric/1",
 *     "network": {"bandwidth": RATE, "latency": TIME},   NetworkBandwidth=...
 *     "nvlink": {"bandwidth": RATE, "latency": TIME},    NVLinkBandwidth=...
 *     "gpu_type": "h100-sxm",                            GpuType=
 *     "switches": [ {"name": "leaf1", "nodes": "gpu[01-08]" | ["gpu01", ...],
 *                    "switches": "leaf[1-2]" | ["leaf1", ...], "parent": "spine",
 *                    "link_speed": RATE, "oversubscription": RATIO,
 *                    "uplink_bandwidth": RATE}, ... ],
 *     "node_sets": [ {"nodes": "gpu[01-16]", "gpu_type": "h100-sxm", "gpus": 8,
 *                     "nvlink_domain": "rack1"}, ... ] }
 * RATE is a number of bytes per second or a string with a unit ("400Gb/s"),
 * TIME a number of seconds or a string ("5us"), RATIO a number or "4:1".
 * Keys starting with "x-" are ignored; other unknown keys are errors.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/fabric_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *dtplan_fabric_format_name(enum dtplan_fabric_format f)
{
	switch (f) {
	case DTPLAN_FABRIC_JSON:
		return DTPLAN_FABRIC_SCHEMA;
	case DTPLAN_FABRIC_TOPOLOGY_CONF:
		return "topology.conf";
	default:
		return "?";
	}
}

void dtplan_fabric_desc_destroy(struct dtplan_fabric_desc *f)
{
	if (f == NULL)
		return;
	dtplan_topology_destroy(f->topology);
	free(f->site_text);
	free(f);
}

static void jparse_fini(struct jparse *p)
{
	for (size_t i = 0; p->children != NULL && i < p->n_switches; i++)
		free(p->children[i]);
	free(p->children);
	free(p->n_children);
	free(p->cap_children);
	free(p->parent);
	dtplan__strmap_fini(&p->index);
	free(p->names);
	free(p->sw);
	free(p->keep);
	free(p->spans);
	free(p->strings.s);
	free(p->scratch.s);
	free(p->topo.s);
	free(p->site.s);
	free(p->topo_lines.text.s);
	free(p->topo_lines.at);
	free(p->site_lines.text.s);
	free(p->site_lines.at);
	memset(p, 0, sizeof(*p));
}

/*
 * The answer's JSON, its switches one at a time unless whole; *again set
 * when a switch's text did not parse alone (the caller then reads the whole
 * document, whose error names the fault).
 */
static enum dtplan_err parse_json_as(const char *text, size_t len, const char *nodes, bool whole,
				     struct dtplan_fabric_desc *f, bool *again,
				     struct dtplan_error *err)
{
	static const char *const keys[] = {"schema",   "network",   "nvlink", "gpu_type",
					   "switches", "node_sets", NULL};
	struct jparse p = {.source = f->source, .err = err, .text = text};
	struct dtplan_config check;
	struct dtplan_error e = {0};
	json_t *root = NULL, *switches, *sets, *v;
	char schema[64], gpu_buf[64], *rest = NULL;
	const char *gpu = NULL;
	enum dtplan_err rv = DTPLAN_ERR_PARSE;
	size_t i, rest_len = 0;

	dtplan_config_init(&check);
	/* a switch takes about 6 values; a site holds at most 1,048,576 */
	if (!whole && dtplan__json_bounded(text, len, (size_t)1 << 23, f->source,
					   "not valid JSON: ", err) != DTPLAN_OK)
		goto out;
	if (!whole)
		rest = dtplan__fabric_cut_switches(&p, text, len, &rest_len);
	if (rest != NULL) {
		json_error_t jerr;

		root = json_loadb(rest, rest_len, JSON_REJECT_DUPLICATES, &jerr);
		free(rest);
		if (root == NULL) {
			*again = true;
			goto out;
		}
	} else {
		root = dtplan__json_load(text, len, (size_t)1 << 23, f->source,
					 "not valid JSON: ", err);
		if (root == NULL)
			goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__fabric_fail(&p, "document", "must be a JSON object");
		goto out;
	}
	rv = dtplan__jget_str(root, f->source, "", "schema", DTPLAN_JGET_REQUIRED, schema,
			      sizeof(schema), err);
	if (rv == DTPLAN_OK && strcmp(schema, DTPLAN_FABRIC_SCHEMA) != 0)
		rv = dtplan__fabric_fail(&p, "schema", "'%s' is not %s", schema,
					 DTPLAN_FABRIC_SCHEMA);
	if (rv == DTPLAN_OK)
		rv = dtplan__fabric_check_keys(&p, "document", root, keys);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	switches = json_object_get(root, "switches");
	p.arr = switches;
	p.n_switches = p.spans != NULL ? p.n_spans : json_array_size(switches);
	if (!json_is_array(switches) || p.n_switches == 0) {
		dtplan__fabric_fail(&p, "switches", "must be a non-empty array");
		goto out;
	}
	rv = dtplan__fabric_collect_switches(&p, again);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	for (i = 0; i < p.n_switches; i++) {
		rv = dtplan__fabric_link_parent(&p, i);
		if (rv != DTPLAN_OK)
			goto out;
	}
	rv = dtplan__fabric_check_cycles(&p);
	if (rv == DTPLAN_OK)
		rv = dtplan__fabric_mark_kept(&p, nodes);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_PARSE;
	if (dtplan__fabric_emit_link(&p, root, "network", "NetworkBandwidth", "NetworkLatency") !=
		    DTPLAN_OK ||
	    dtplan__fabric_emit_link(&p, root, "nvlink", "NVLinkBandwidth", "NVLinkLatency") !=
		    DTPLAN_OK ||
	    dtplan__fabric_get_string(&p, "", root, "gpu_type", gpu_buf, sizeof(gpu_buf), &gpu) !=
		    DTPLAN_OK)
		goto out;
	if (gpu != NULL) {
		dtplan__text_add(&p.site, "GpuType=%s\n", gpu);
		dtplan__fabric_label_add(&p.site_lines, "gpu_type");
	}
	for (i = 0; i < p.n_switches; i++)
		if (dtplan__fabric_emit_switch(&p, i) != DTPLAN_OK)
			goto out;
	sets = json_object_get(root, "node_sets");
	if (sets != NULL && !json_is_array(sets)) {
		dtplan__fabric_fail(&p, "node_sets", "must be an array");
		goto out;
	}
	json_array_foreach(sets, i,
			   v) if (dtplan__fabric_emit_node_set(&p, i, v) != DTPLAN_OK) goto out;
	if (p.topo.failed || p.site.failed || p.topo_lines.failed || p.site_lines.failed) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, f->source, 0, "out of memory");
		goto out;
	}
	/* The texts hold all the parsers need: the switches as read and the
	 * children lists go first, so that their memory and the tree's do not
	 * add up. */
	for (i = 0; p.children != NULL && i < p.n_switches; i++) {
		free(p.children[i]);
		p.children[i] = NULL;
	}
	dtplan__strmap_fini(&p.index); /* its keys are in p.strings */
	free(p.names);
	p.names = NULL;
	free(p.sw);
	p.sw = NULL;
	free(p.strings.s);
	p.strings = (struct dtplan__text){0};
	json_decref(root);
	root = NULL;
	/* Both texts through their own parsers; the site part checked on the tree. */
	rv = dtplan_topology_parse_conf(p.topo.s, f->source, &f->topology, &e);
	if (rv != DTPLAN_OK) {
		rv = dtplan__fabric_relabel(&p, &p.topo_lines, &e);
		goto out;
	}
	rv = dtplan_config_parse_string(&check, p.site.s ? p.site.s : "", f->source, &e);
	if (rv != DTPLAN_OK) {
		rv = dtplan__fabric_relabel(&p, &p.site_lines, &e);
		goto out;
	}
	f->site_text = p.site.s ? p.site.s : strdup("");
	p.site.s = NULL;
	rv = f->site_text != NULL
		     ? DTPLAN_OK
		     : dtplan__error(err, DTPLAN_ERR_NOMEM, f->source, 0, "out of memory");
out:
	dtplan_config_fini(&check);
	jparse_fini(&p);
	json_decref(root);
	return rv;
}

static enum dtplan_err parse_json(const char *text, size_t len, const char *nodes,
				  struct dtplan_fabric_desc *f, struct dtplan_error *err)
{
	bool again = false;
	enum dtplan_err rv = parse_json_as(text, len, nodes, false, f, &again, err);

	if (again) {
		dtplan_topology_destroy(f->topology);
		f->topology = NULL;
		again = false;
		rv = parse_json_as(text, len, nodes, true, f, &again, err);
	}
	return rv;
}

/* The media type of a Content-Type value ("application/json; charset=utf-8"
 * is application/json), in lower case, cut to size. */
static void media_type(const char *value, char *buf, size_t size)
{
	size_t n = 0;

	while (*value == ' ' || *value == '\t')
		value++;
	for (; *value != '\0' && *value != ';' && *value != ' ' && *value != '\t'; value++)
		if (n + 1 < size)
			buf[n++] = (char)tolower((unsigned char)*value);
	buf[n] = '\0';
}

enum dtplan_err dtplan_fabric_format_of_type(const char *content_type, const char *source,
					     enum dtplan_fabric_format *format,
					     struct dtplan_error *err)
{
	const char *name = source ? source : "fabric";
	char type[128];

	if (content_type == NULL || content_type[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, name, 0,
				     "the answer has no Content-Type: application/json "
				     "(dtplan.fabric/1) or text/plain (topology.conf) expected, "
				     "or FabricFormat= set");
	media_type(content_type, type, sizeof(type));
	if (strcmp(type, "application/json") == 0) {
		*format = DTPLAN_FABRIC_JSON;
		return DTPLAN_OK;
	}
	if (strcmp(type, "text/plain") == 0) {
		*format = DTPLAN_FABRIC_TOPOLOGY_CONF;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, name, 0,
			     "the answer's Content-Type is '%.100s', neither application/json "
			     "(dtplan.fabric/1) nor text/plain (topology.conf); FabricFormat= "
			     "can name the format",
			     content_type);
}

enum dtplan_err dtplan_fabric_desc_parse(const char *text, size_t len,
					 enum dtplan_fabric_format format, const char *source,
					 struct dtplan_fabric_desc **out, struct dtplan_error *err)
{
	return dtplan_fabric_desc_parse_for(text, len, format, source, NULL, out, err);
}

enum dtplan_err dtplan_fabric_desc_parse_for(const char *text, size_t len,
					     enum dtplan_fabric_format format, const char *source,
					     const char *nodes, struct dtplan_fabric_desc **out,
					     struct dtplan_error *err)
{
	struct dtplan_fabric_desc *f = NULL;
	const char *name = source ? source : "fabric";
	char *copy = NULL;
	size_t i = 0;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, name, 0, "no fabric text to parse");
		goto out;
	}
	if (memchr(text, '\0', len) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, name, 0, "the answer holds a NUL byte");
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, name, 0, "out of memory");
		goto out;
	}
	dtplan__strlcpy(f->source, name, sizeof(f->source));
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i == len) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, name, 0, "the answer is empty");
		goto out;
	}
	f->format = format;
	if (format == DTPLAN_FABRIC_JSON) {
		rv = parse_json(text, len, nodes, f, err);
	} else if (format != DTPLAN_FABRIC_TOPOLOGY_CONF) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, name, 0, "no such fabric format (%d)",
				   (int)format);
	} else {
		copy = strndup(text, len);
		rv = copy != NULL ? dtplan_topology_parse_conf(copy, name, &f->topology, err)
				  : dtplan__error(err, DTPLAN_ERR_NOMEM, name, 0, "out of memory");
	}
	if (rv != DTPLAN_OK)
		goto out;
	*out = f;
	f = NULL;
out:
	free(copy);
	dtplan_fabric_desc_destroy(f);
	return rv;
}
