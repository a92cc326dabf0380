/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_source.c: the fabric service's policy, where the allocation is
 * assembled (probes/allocation.c asks it): which switch tree a plan uses
 * (the service's answer, topology.conf or none), what the plan's
 * "fabric-service" warning says, and the site configuration an answer
 * gives once applied.  lib/json/fabric_json.c only reads the answer.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"

#include <stdlib.h>
#include <string.h>

/* *dst = a copy of src with its own arrays. */
static enum dtplan_err config_copy(struct dtplan_config *dst, const struct dtplan_config *src)
{
	*dst = *src;
	dst->switches = NULL;
	dst->nodesets = NULL;
	if (src->n_switches > 0) {
		dst->switches = malloc(src->n_switches * sizeof(*dst->switches));
		if (dst->switches == NULL)
			goto fail;
		memcpy(dst->switches, src->switches, src->n_switches * sizeof(*dst->switches));
	}
	if (src->n_nodesets > 0) {
		dst->nodesets = malloc(src->n_nodesets * sizeof(*dst->nodesets));
		if (dst->nodesets == NULL)
			goto fail;
		memcpy(dst->nodesets, src->nodesets, src->n_nodesets * sizeof(*dst->nodesets));
	}
	return DTPLAN_OK;
fail:
	free(dst->switches);
	dtplan_config_init(dst);
	return DTPLAN_ERR_NOMEM;
}

void dtplan_fabric_source_choose(struct dtplan_fabric_desc *service, struct dtplan_topology *conf,
				 const char *conf_path, struct dtplan_fabric_source *out)
{
	memset(out, 0, sizeof(*out));
	if (service != NULL) {
		out->tree = service->topology;
		out->from_service = true;
	} else if (conf != NULL) {
		out->tree = conf;
		out->topology_path = conf_path;
	}
}

enum dtplan_err dtplan_plan_note_fabric(struct dtplan_plan *p, const char *warning,
					const struct dtplan_fabric_source *src)
{
	if (warning == NULL || warning[0] == '\0')
		return DTPLAN_OK;
	if (src->from_service)
		return dtplan_plan_add_warning(p, "fabric-service", "%s", warning);
	if (src->tree != NULL)
		return dtplan_plan_add_warning(p, "fabric-service", "%s; using topology.conf %s",
					       warning,
					       src->topology_path ? src->topology_path : "");
	return dtplan_plan_add_warning(p, "fabric-service", "%s; planning without a switch tree",
				       warning);
}

enum dtplan_err dtplan_fabric_desc_apply(struct dtplan_fabric_desc *f,
					 const struct dtplan_config *base,
					 struct dtplan_config *out, struct dtplan_error *err)
{
	enum dtplan_err rv;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no configuration to fill");
	dtplan_config_init(out);
	if (f == NULL || f->topology == NULL || base == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no fabric or configuration");
		goto out;
	}
	rv = config_copy(out, base);
	if (rv != DTPLAN_OK) {
		rv = dtplan__error(err, rv, f->source, 0, "out of memory");
		goto out;
	}
	if (f->site_text != NULL) {
		/* The fabric's switch settings and node sets replace the site file's. */
		free(out->switches);
		free(out->nodesets);
		out->switches = NULL;
		out->nodesets = NULL;
		out->n_switches = 0;
		out->n_nodesets = 0;
		rv = dtplan_config_parse_string(out, f->site_text, f->source, err);
		if (rv != DTPLAN_OK)
			goto out;
	}
	rv = dtplan_config_apply_topology(out, f->topology, err);
out:
	if (rv != DTPLAN_OK)
		dtplan_config_fini(out);
	return rv;
}
