/*
 * allocation.c: the allocation a plan is made on, assembled in one place
 * for the plugin (plugin/remote.c) and the CLI (cli/cluster.c): the site's
 * settings with the fabric service's answer over them, topology.conf when
 * the service gave no tree (dtplan_fabric_source_choose() says which), the
 * inventories (inventory.c), the measurement's ratios and tiers, and the
 * plan's notes about them.  The CLI is strict: what the plugin degrades a
 * plan for is an error there (dtprobes.h).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtplan_allocation_init(struct dtplan_allocation *a, bool strict)
{
	memset(a, 0, sizeof(*a));
	a->strict = strict;
	dtplan_config_init(&a->applied);
	dtplan_config_init(&a->config);
}

void dtplan_allocation_fini(struct dtplan_allocation *a)
{
	if (a == NULL)
		return;
	free(a->config.switches); /* the rest is base's */
	dtplan_config_fini(&a->applied);
	dtplan_topology_destroy(a->topology);
	dtplan_inventory_destroy(a->inventory);
	memset(a, 0, sizeof(*a));
}

enum dtplan_err dtplan_allocation_config(struct dtplan_allocation *a,
					 const struct dtplan_config *site,
					 const struct dtplan_fabric_fetch *fab,
					 struct dtplan_error *err)
{
	struct dtplan_error ferr = {0};
	char buf[1024];

	a->base = site;
	if (fab != NULL)
		dtplan__strlcpy(a->fabric_warning, fab->warning, sizeof(a->fabric_warning));
	if (fab != NULL && fab->desc != NULL) {
		if (dtplan_fabric_desc_apply(fab->desc, site, &a->applied, &ferr) == DTPLAN_OK) {
			a->base = &a->applied;
			a->service = fab->desc;
		} else if (a->strict) {
			if (err != NULL)
				*err = ferr;
			return ferr.code;
		} else {
			snprintf(a->fabric_warning, sizeof(a->fabric_warning),
				 "fabric service %s: %s", site->fabric_url,
				 dtplan_error_format(&ferr, buf, sizeof(buf)));
		}
	}
	/* a copy whose switches the measurement may change */
	a->config = *a->base;
	a->config.switches = NULL;
	if (a->base->n_switches > 0) {
		a->config.switches = malloc(a->base->n_switches * sizeof(*a->config.switches));
		if (a->config.switches == NULL) {
			a->config.n_switches = 0;
			return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		}
		memcpy(a->config.switches, a->base->switches,
		       a->base->n_switches * sizeof(*a->config.switches));
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan_allocation_topology(struct dtplan_allocation *a, const char *path,
					   struct dtplan_error *err)
{
	struct dtplan_error terr = {0};
	char buf[1024];

	if (a->service != NULL || path == NULL || path[0] == '\0')
		return DTPLAN_OK;
	if (dtplan_topology_parse_file(path, &a->topology, &terr) == DTPLAN_OK &&
	    dtplan_config_apply_topology(&a->config, a->topology, &terr) == DTPLAN_OK) {
		a->topology_path = path;
		return DTPLAN_OK;
	}
	dtplan_topology_destroy(a->topology);
	a->topology = NULL;
	if (a->strict) {
		if (err != NULL)
			*err = terr;
		return terr.code;
	}
	snprintf(a->topology_fault, sizeof(a->topology_fault), "topology %s: %s", path,
		 dtplan_error_format(&terr, buf, sizeof(buf)));
	return DTPLAN_OK;
}

enum dtplan_err dtplan_allocation_nodes(struct dtplan_allocation *a,
					const struct dtplan_inventory_opts *io,
					struct dtplan_error *err)
{
	if (io != NULL && io->n_hosts > 0) {
		enum dtplan_err rv = dtplan_inventory_assemble(io, &a->inventory, err);

		if (rv != DTPLAN_OK)
			return rv;
		dtplan_inventory_cluster(a->inventory, &a->cluster);
	}
	dtplan_fabric_source_choose(a->service, a->topology, a->topology_path, &a->source);
	a->cluster.topology = a->source.tree;
	a->cluster.config = &a->config;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_allocation_measure(struct dtplan_allocation *a,
					  const struct dtplan_measure_file *mf,
					  struct dtplan_request *req, struct dtplan_error *err)
{
	if (mf == NULL || mf->m == NULL)
		return DTPLAN_OK;
	return dtplan_measurements_apply(mf->m, req, &a->config, a->source.tree, err);
}

/* One note's failure: strict, the first one is kept in *rv; else p is
 * degraded. */
static void noted(const struct dtplan_allocation *a, struct dtplan_plan *p, enum dtplan_err got,
		  enum dtplan_err *rv, struct dtplan_error *err)
{
	if (got == DTPLAN_OK)
		return;
	if (!a->strict)
		dtplan_plan_set_degraded(p, "out of memory");
	else if (*rv == DTPLAN_OK)
		*rv = dtplan__error(err, got, "", 0, "out of memory");
}

enum dtplan_err dtplan_allocation_note(struct dtplan_allocation *a, struct dtplan_plan *p,
				       struct dtplan_measure_file *mf, struct dtplan_error *err)
{
	enum dtplan_err rv = DTPLAN_OK, got = DTPLAN_OK;

	if (mf != NULL && mf->m != NULL) {
		got = dtplan_plan_take_measurements(p, mf->m, NULL);
		mf->m = NULL; /* the plan's now */
	}
	noted(a, p, got, &rv, err);
	if (got == DTPLAN_OK && a->inventory != NULL)
		noted(a, p, dtplan_inventory_note(a->inventory, p), &rv, err);
	noted(a, p, dtplan_plan_note_fabric(p, a->fabric_warning, &a->source), &rv, err);
	if (a->topology_fault[0] != '\0')
		dtplan_plan_set_degraded(p, "%s", a->topology_fault);
	return rv;
}
