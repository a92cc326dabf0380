/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_export.c: a topology.conf and a site file written as one
 * dtplan.fabric/1 JSON document ("dtplan fabric"), the form fabric_json.c
 * reads back (its schema is there and in dtplan.conf(5)).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool put(json_t *obj, const char *key, json_t *value)
{
	return value != NULL && json_object_set_new(obj, key, value) == 0;
}

/* The nodes of leaf sw: a hostlist when it expands back to the same names in
 * the same order, else an array of names. */
static json_t *leaf_nodes_json(const struct dtplan_topology *t, int sw)
{
	char(*names)[64] = NULL, (*back)[64] = NULL, *buf = NULL;
	json_t *v = NULL;
	size_t n = 0, nb = 0, size;

	for (size_t i = 0; i < t->n_nodes; i++)
		if (t->node_leaf[i] == sw)
			n++;
	if (n == 0)
		return NULL;
	names = malloc(n * sizeof(*names));
	size = n * 68 + 16; /* never shorter than the names joined by commas */
	buf = malloc(size);
	if (names == NULL || buf == NULL)
		goto out;
	n = 0;
	for (size_t i = 0; i < t->n_nodes; i++)
		if (t->node_leaf[i] == sw)
			memcpy(names[n++], t->node_names[i], sizeof(names[0]));
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, size);
	if (dtplan_hostlist_expand(buf, DTPLAN_HOSTLIST_MAX, &back, &nb, NULL) == DTPLAN_OK &&
	    nb == n && memcmp(back, names, n * sizeof(*names)) == 0) {
		v = json_string(buf);
		goto out;
	}
	v = json_array();
	for (size_t i = 0; v != NULL && i < n; i++)
		if (json_array_append_new(v, json_string(names[i])) != 0) {
			json_decref(v);
			v = NULL;
		}
out:
	free(names);
	free(back);
	free(buf);
	return v;
}

static json_t *switch_json(const struct dtplan_topology *t, const struct dtplan_config *c, size_t i)
{
	const struct dtplan_switch *s = &t->switches[i];
	json_t *o = json_object(), *kids = NULL;

	if (!put(o, "name", json_string(s->name)))
		goto fail;
	if (s->level == 0) {
		json_t *nodes = leaf_nodes_json(t, (int)i);

		/* a leaf without nodes cannot be written in topology.conf */
		if (!put(o, "nodes", nodes))
			goto fail;
	} else {
		kids = json_array();
		for (size_t k = 0; kids != NULL && k < t->n_switches; k++)
			if (t->switches[k].parent == (int)i &&
			    json_array_append_new(kids, json_string(t->switches[k].name)) != 0)
				goto fail;
		if (!put(o, "switches", kids))
			goto fail;
		kids = NULL;
	}
	if (s->link_speed > 0 && !put(o, "link_speed", json_real(s->link_speed)))
		goto fail;
	for (size_t k = 0; k < c->n_switches; k++) {
		const struct dtplan_site_switch *ss = &c->switches[k];

		if (strcmp(ss->name, s->name) != 0)
			continue;
		if (ss->oversubscription > 0 &&
		    !put(o, "oversubscription", json_real(ss->oversubscription)))
			goto fail;
		if (ss->uplink_bytes_per_s > 0 &&
		    !put(o, "uplink_bandwidth", json_real(ss->uplink_bytes_per_s)))
			goto fail;
	}
	return o;
fail:
	json_decref(kids);
	json_decref(o);
	return NULL;
}

static json_t *node_set_json(const struct dtplan_site_nodeset *ns)
{
	json_t *o = json_object();

	if (!put(o, "nodes", json_string(ns->nodes)) ||
	    (ns->gpu_type[0] != '\0' && !put(o, "gpu_type", json_string(ns->gpu_type))) ||
	    (ns->gpus_per_node > 0 && !put(o, "gpus", json_integer(ns->gpus_per_node))) ||
	    (ns->nvlink_domain[0] != '\0' &&
	     !put(o, "nvlink_domain", json_string(ns->nvlink_domain)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

enum dtplan_err dtplan_fabric_to_json(const struct dtplan_topology *t,
				      const struct dtplan_config *c, bool pretty, char **out,
				      struct dtplan_error *err)
{
	json_t *root = NULL, *switches, *sets;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (t == NULL || c == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no topology or configuration");
		goto out;
	}
	for (size_t i = 0; i < c->n_switches; i++)
		if (dtplan_topology_switch_index(t, c->switches[i].name) < 0) {
			rv = dtplan__error(err, DTPLAN_ERR_NOT_FOUND,
					   c->site_file[0] ? c->site_file : "dtplan.conf",
					   c->switches[i].line,
					   "SwitchName=%s: no switch '%s' in the topology",
					   c->switches[i].name, c->switches[i].name);
			goto out;
		}
	rv = DTPLAN_ERR_NOMEM;
	root = json_object();
	if (!put(root, "schema", json_string(DTPLAN_FABRIC_SCHEMA)) ||
	    !put(root, "network",
		 json_pack("{s:f, s:f}", "bandwidth", c->net_bytes_per_s, "latency",
			   c->net_latency_s)) ||
	    !put(root, "nvlink",
		 json_pack("{s:f, s:f}", "bandwidth", c->nvlink_bytes_per_s, "latency",
			   c->nvlink_latency_s)) ||
	    (c->gpu_type[0] != '\0' && !put(root, "gpu_type", json_string(c->gpu_type))))
		goto fail;
	switches = json_array();
	if (!put(root, "switches", switches))
		goto fail;
	for (size_t i = 0; i < t->n_switches; i++)
		if (json_array_append_new(switches, switch_json(t, c, i)) != 0)
			goto fail;
	sets = json_array();
	if (!put(root, "node_sets", sets))
		goto fail;
	for (size_t i = 0; i < c->n_nodesets; i++)
		if (json_array_append_new(sets, node_set_json(&c->nodesets[i])) != 0)
			goto fail;
	*out = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER |
					JSON_REAL_PRECISION(17));
	if (*out == NULL)
		goto fail;
	rv = DTPLAN_OK;
	goto out;
fail:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory while writing the fabric");
out:
	json_decref(root);
	return rv;
}
