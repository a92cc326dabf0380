/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * allocation.c: the allocation a plan is made on, and the plan, assembled in
 * one place and one order for the plugin (plugin/remote.c) and the CLI
 * (cli/cmd_plan.c): the site's settings with the fabric service's answer
 * over them, the caller's request on those settings, topology.conf when the
 * service gave no tree (dtplan_fabric_source_choose() says which), the
 * inventories (inventory.c), this host's GPUs, the measurement's ratios and
 * tiers, MTBF=slurm's cache, the records' calibration, the plan, and the
 * plan's notes about all of them.  The CLI is strict: what the plugin
 * degrades a plan for is an error there (dtprobes.h).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtplan_allocation_init(struct dtplan_allocation *a)
{
	memset(a, 0, sizeof(*a));
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
	dtplan_calibration_fini(&a->calibration);
	memset(a, 0, sizeof(*a));
}

/* The effective configuration: site, with fab's fabric applied when it gave
 * one; fab's warning becomes the plan's "fabric-service" one. */
static enum dtplan_err config(struct dtplan_allocation *a, const struct dtplan_config *site,
			      const struct dtplan_fabric_fetch *fab, struct dtplan_error *err)
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

/* topology.conf from path (NULL or "": none), with the configuration's
 * switch settings, unless the service's tree is used.  Not strict, a file
 * that does not read is the plan's degraded reason. */
static enum dtplan_err topology(struct dtplan_allocation *a, const char *path,
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

/* The inventories of in's hosts, the tree, and a->cluster over them. */
static enum dtplan_err nodes(struct dtplan_allocation *a, const struct dtplan_allocation_in *in,
			     struct dtplan_error *err)
{
	struct dtplan_inventory_opts io;

	if (in->nodes == NULL)
		return DTPLAN_OK;
	io = *in->nodes;
	io.measured = in->measured != NULL && in->measured->m != NULL ? in->measured : NULL;
	if (in->site_files) {
		io.node_xml = a->base->node_xml;
		io.cache_dir = a->base->cache_dir;
		io.timeout_s = a->base->probe_timeout_s;
	}
	if (io.n_hosts > 0) {
		enum dtplan_err rv = dtplan_inventory_assemble(&io, &a->inventory, err);

		if (rv != DTPLAN_OK)
			return rv;
		dtplan_inventory_cluster(a->inventory, &a->cluster);
	}
	dtplan_fabric_source_choose(a->service, a->topology, a->topology_path, &a->source);
	a->cluster.topology = a->source.tree;
	a->cluster.config = &a->config;
	return DTPLAN_OK;
}

/* The GPUs the job holds on each node into the cluster; with in->self, the
 * request's too (Slurm's count, else this host's inventory's), and every GPU
 * of the allocation's nodes (the smallest node decides). */
static enum dtplan_err gpus(struct dtplan_allocation *a, const struct dtplan_allocation_in *in,
			    struct dtplan_request *req, struct dtplan_error *err)
{
	int self = -1;

	a->cluster.gpus_per_node = in->gpus_per_node;
	if (in->self == NULL)
		return DTPLAN_OK;
	for (size_t i = 0; a->inventory != NULL && i < a->inventory->n_hosts && self < 0; i++)
		if (strcmp(in->nodes->hosts[i], in->self) == 0)
			self = a->inventory->host_record[i];
	req->gpus_per_node = in->gpus_per_node > 0 ? in->gpus_per_node
			     : self >= 0           ? a->inventory->records[self].n_gpus
						   : 0;
	if (req->gpus_per_node <= 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "the job has no GPUs");
	req->gpus = 0;
	return DTPLAN_OK;
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

/* mf's measurement becomes p's, then the "assumed-nodes" and
 * "fabric-service" warnings and the topology's fault. */
static enum dtplan_err note(struct dtplan_allocation *a, struct dtplan_plan *p,
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

enum dtplan_err dtplan_allocation_plan(struct dtplan_allocation *a,
				       const struct dtplan_allocation_in *in,
				       struct dtplan_request *req, struct dtplan_plan **plan,
				       struct dtplan_error *err)
{
	struct dtplan_error merr = {0};
	enum dtplan_err rv;

	*plan = NULL;
	a->strict = in->strict;
	a->step = DTPLAN_ALLOC_CONFIG;
	rv = config(a, in->site, in->fabric, err);
	if (rv != DTPLAN_OK)
		goto out;
	a->step = DTPLAN_ALLOC_REQUEST;
	rv = in->request(in->arg, a->base, req, err);
	if (rv != DTPLAN_OK)
		goto out;
	a->step = DTPLAN_ALLOC_TOPOLOGY;
	rv = topology(a, in->site_files ? a->base->topology_file : in->topology, err);
	if (rv != DTPLAN_OK)
		goto out;
	a->step = DTPLAN_ALLOC_NODES;
	rv = nodes(a, in, err);
	if (rv != DTPLAN_OK)
		goto out;
	a->step = DTPLAN_ALLOC_GPUS;
	rv = gpus(a, in, req, err);
	if (rv != DTPLAN_OK)
		goto out;
	a->step = DTPLAN_ALLOC_MEASURE;
	if (in->measured != NULL && in->measured->m != NULL)
		rv = dtplan_measurements_apply(in->measured->m, req, &a->config, a->source.tree,
					       err);
	if (rv != DTPLAN_OK)
		goto out;
	/* MTBF=slurm: the cached accounting's; a fault is only said */
	a->step = DTPLAN_ALLOC_MTBF;
	if (dtplan_mtbf_cache_apply(in->site, req, &merr) != DTPLAN_OK && in->warn != NULL)
		in->warn(in->arg, req->mtbf_source);
	/* what earlier jobs measured, unless calibration=off */
	a->step = DTPLAN_ALLOC_CALIBRATION;
	if (!req->calibration_off && in->calibrate != NULL &&
	    in->calibrate(in->arg, &a->calibration) == 0)
		req->calibration = &a->calibration;
	a->step = DTPLAN_ALLOC_PLAN;
	rv = dtplan_plan_create(req, in->nodes != NULL ? &a->cluster : NULL, plan, err);
	if (rv != DTPLAN_OK) {
		*plan = NULL;
		goto out;
	}
	a->step = DTPLAN_ALLOC_NOTES;
	rv = note(a, *plan, in->measured, err);
	if (rv != DTPLAN_OK) {
		dtplan_plan_destroy(*plan);
		*plan = NULL;
		goto out;
	}
	a->step = DTPLAN_ALLOC_DONE;
out:
	return rv;
}
