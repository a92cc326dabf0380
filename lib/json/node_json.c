/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_json.c: node inventory (struct dtplan_node) <-> JSON, and NIC kind
 * names.
 *
 * {"hostname": "hgx01", "source": "xml", "note": "", "cores": 16,
 *  "numa_nodes": 2,
 *  "gpus": [{"vendor": "nvidia", "model": "...", "pci_bus_id": "0000:1b:00.0",
 *            "os_name": "nvml0", "memory_bytes": 85020917760.0, "numa": 0,
 *            "domain": 0, "nic": "mlx5_0"}],
 *  "domains": [{"gpus": [0, 1], "bandwidth_bytes_per_s": 4.5e11,
 *               "fabric_id": ""}],
 *  "nics": [{"name": "mlx5_0", "kind": "infiniband",
 *            "pci_bus_id": "0000:1a:00.0", "numa": 0}]}
 *
 * "nic" is the name of an entry of "nics" or null.  Reading checks every
 * type, range and cross-reference and names the offending member.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "node JSON"

static const char *const nic_kind_names[] = {
	[DTPLAN_NIC_UNKNOWN] = "unknown",   [DTPLAN_NIC_INFINIBAND] = "infiniband",
	[DTPLAN_NIC_ROCE] = "roce",         [DTPLAN_NIC_ETHERNET] = "ethernet",
	[DTPLAN_NIC_EFA] = "efa",           [DTPLAN_NIC_SLINGSHOT] = "slingshot",
	[DTPLAN_NIC_OMNIPATH] = "omnipath",
};

const char *dtplan_nic_kind_name(enum dtplan_nic_kind k)
{
	if ((unsigned)k >= DTPLAN_ARRAY_SIZE(nic_kind_names))
		return "unknown";
	return nic_kind_names[k];
}

/* ------------------------------------------------------------------------
 * To JSON
 * ---------------------------------------------------------------------- */

/* Adds a fresh value to an object or array; false when out of memory. */
static bool set_new(json_t *obj, const char *key, json_t *v)
{
	return v != NULL && json_object_set_new(obj, key, v) == 0;
}

static bool push_new(json_t *arr, json_t *v)
{
	return v != NULL && json_array_append_new(arr, v) == 0;
}

static json_t *gpu_to_json(const struct dtplan_node *n, const struct dtplan_node_gpu *g)
{
	json_t *o = json_object();
	bool ok = o != NULL;
	bool has_nic = g->nic >= 0 && g->nic < n->n_nics;

	ok = ok && set_new(o, "vendor", json_string(g->vendor));
	ok = ok && set_new(o, "model", json_string(g->model));
	ok = ok && set_new(o, "pci_bus_id", json_string(g->pci_bus_id));
	ok = ok && set_new(o, "os_name", json_string(g->os_name));
	ok = ok && set_new(o, "memory_bytes", json_real(g->memory_bytes));
	ok = ok && set_new(o, "numa", json_integer(g->numa));
	ok = ok && set_new(o, "domain", json_integer(g->domain));
	ok = ok && set_new(o, "nic", has_nic ? json_string(n->nics[g->nic].name) : json_null());
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *domain_to_json(const struct dtplan_node_domain *d)
{
	json_t *o = json_object(), *gpus = json_array();
	bool ok = o != NULL && gpus != NULL;

	for (int k = 0; ok && k < d->n_gpus; k++)
		ok = push_new(gpus, json_integer(d->gpus[k]));
	if (ok) {
		ok = json_object_set(o, "gpus", gpus) == 0;
		ok = ok && set_new(o, "bandwidth_bytes_per_s", json_real(d->bandwidth_bytes_per_s));
		ok = ok && set_new(o, "fabric_id", json_string(d->fabric_id));
	}
	json_decref(gpus);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *nic_to_json(const struct dtplan_node_nic *nic)
{
	json_t *o = json_object();
	bool ok = o != NULL;

	ok = ok && set_new(o, "name", json_string(nic->name));
	ok = ok && set_new(o, "kind", json_string(dtplan_nic_kind_name(nic->kind)));
	ok = ok && set_new(o, "pci_bus_id", json_string(nic->pci_bus_id));
	ok = ok && set_new(o, "numa", json_integer(nic->numa));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

enum dtplan_err dtplan_node_to_json(const struct dtplan_node *n, bool pretty, char **out,
				    struct dtplan_error *err)
{
	json_t *root = NULL, *gpus = NULL, *domains = NULL, *nics = NULL;
	enum dtplan_err rv;
	bool ok;

	if (out != NULL)
		*out = NULL;
	if (n == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				   "dtplan_node_to_json: NULL argument");
		goto out;
	}
	if (n->n_gpus < 0 || n->n_gpus > DTPLAN_NODE_MAX_GPUS || n->n_nics < 0 ||
	    n->n_nics > DTPLAN_NODE_MAX_NICS || n->n_domains < 0 ||
	    n->n_domains > DTPLAN_NODE_MAX_GPUS) {
		rv = dtplan__error(err, DTPLAN_ERR_RANGE, NULL, 0,
				   "node inventory counts out of range "
				   "(%d GPUs, %d NICs, %d domains)",
				   n->n_gpus, n->n_nics, n->n_domains);
		goto out;
	}
	root = json_object();
	gpus = json_array();
	domains = json_array();
	nics = json_array();
	ok = root != NULL && gpus != NULL && domains != NULL && nics != NULL;
	for (int i = 0; ok && i < n->n_gpus; i++)
		ok = push_new(gpus, gpu_to_json(n, &n->gpus[i]));
	for (int i = 0; ok && i < n->n_domains; i++)
		ok = push_new(domains, domain_to_json(&n->domains[i]));
	for (int i = 0; ok && i < n->n_nics; i++)
		ok = push_new(nics, nic_to_json(&n->nics[i]));
	ok = ok && set_new(root, "hostname", json_string(n->hostname));
	ok = ok && set_new(root, "source", json_string(n->source));
	ok = ok && set_new(root, "note", json_string(n->note));
	ok = ok && set_new(root, "cores", json_integer(n->cores));
	ok = ok && set_new(root, "numa_nodes", json_integer(n->numa_nodes));
	ok = ok && json_object_set(root, "gpus", gpus) == 0;
	ok = ok && json_object_set(root, "domains", domains) == 0;
	ok = ok && json_object_set(root, "nics", nics) == 0;
	if (ok)
		*out = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) |
						JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	if (!ok || *out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, NULL, 0,
				   "out of memory building node JSON");
		goto out;
	}
	rv = DTPLAN_OK;
out:
	json_decref(gpus);
	json_decref(domains);
	json_decref(nics);
	json_decref(root);
	return rv;
}

/* ------------------------------------------------------------------------
 * From JSON
 * ---------------------------------------------------------------------- */

static enum dtplan_err get_array(json_t *obj, const char *key, size_t max, json_t **arr,
				 struct dtplan_error *err)
{
	*arr = json_object_get(obj, key);
	if (!json_is_array(*arr))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "%s: missing or not an array",
				     key);
	if (json_array_size(*arr) > max)
		return dtplan__error(err, DTPLAN_ERR_RANGE, SRC, 0,
				     "%s: %zu entries, at most %zu supported", key,
				     json_array_size(*arr), max);
	return DTPLAN_OK;
}

static enum dtplan_err read_nic(json_t *o, int i, struct dtplan_node_nic *nic,
				struct dtplan_error *err)
{
	char path[32], kind[32];
	enum dtplan_err ret;
	bool found = false;

	snprintf(path, sizeof(path), "nics[%d].", i);
	if (!json_is_object(o))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "nics[%d]: not an object", i);
	ret = dtplan__jget_str(o, SRC, path, "name", DTPLAN_JGET_REQUIRED, nic->name,
			       sizeof(nic->name), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(o, SRC, path, "kind", DTPLAN_JGET_REQUIRED, kind,
				       sizeof(kind), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(o, SRC, path, "pci_bus_id", DTPLAN_JGET_REQUIRED,
				       nic->pci_bus_id, sizeof(nic->pci_bus_id), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_int(o, SRC, path, "numa", DTPLAN_JGET_REQUIRED, -1, 1 << 20,
				       &nic->numa, err);
	if (ret != DTPLAN_OK)
		return ret;
	for (size_t k = 0; k < DTPLAN_ARRAY_SIZE(nic_kind_names); k++) {
		if (strcmp(kind, nic_kind_names[k]) == 0) {
			nic->kind = (enum dtplan_nic_kind)k;
			found = true;
		}
	}
	if (!found)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
				     "%skind: unknown NIC kind '%s' (infiniband, roce, ethernet, "
				     "efa, slingshot, omnipath, unknown)",
				     path, kind);
	return DTPLAN_OK;
}

static enum dtplan_err read_gpu(json_t *o, int i, struct dtplan_node *n, struct dtplan_error *err)
{
	struct dtplan_node_gpu *g = &n->gpus[i];
	char path[32];
	enum dtplan_err ret;
	json_t *nic;

	snprintf(path, sizeof(path), "gpus[%d].", i);
	if (!json_is_object(o))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "gpus[%d]: not an object", i);
	ret = dtplan__jget_str(o, SRC, path, "vendor", DTPLAN_JGET_REQUIRED, g->vendor,
			       sizeof(g->vendor), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(o, SRC, path, "model", DTPLAN_JGET_REQUIRED, g->model,
				       sizeof(g->model), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(o, SRC, path, "pci_bus_id", DTPLAN_JGET_REQUIRED,
				       g->pci_bus_id, sizeof(g->pci_bus_id), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(o, SRC, path, "os_name", 0, g->os_name, sizeof(g->os_name),
				       err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_num(o, SRC, path, "memory_bytes", 0, 0, 1e15, &g->memory_bytes,
				       err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_int(o, SRC, path, "numa", DTPLAN_JGET_REQUIRED, -1, 1 << 20,
				       &g->numa, err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_int(o, SRC, path, "domain", DTPLAN_JGET_REQUIRED, 0,
				       n->n_domains - 1, &g->domain, err);
	if (ret != DTPLAN_OK)
		return ret;
	nic = json_object_get(o, "nic");
	g->nic = -1;
	if (nic == NULL || json_is_null(nic))
		return DTPLAN_OK;
	if (!json_is_string(nic))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "%snic: not a NIC name or null",
				     path);
	for (int k = 0; k < n->n_nics; k++)
		if (strcmp(n->nics[k].name, json_string_value(nic)) == 0)
			g->nic = k;
	if (g->nic < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
				     "%snic: '%s' is not one of the node's nics", path,
				     json_string_value(nic));
	return DTPLAN_OK;
}

static enum dtplan_err read_domain(json_t *o, int i, struct dtplan_node *n, int *owner,
				   struct dtplan_error *err)
{
	struct dtplan_node_domain *d = &n->domains[i];
	json_t *gpus, *bw;
	char path[32];
	size_t k;
	json_t *v;

	snprintf(path, sizeof(path), "domains[%d].", i);
	if (!json_is_object(o))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "domains[%d]: not an object",
				     i);
	gpus = json_object_get(o, "gpus");
	if (!json_is_array(gpus) || json_array_size(gpus) == 0 ||
	    json_array_size(gpus) > DTPLAN_NODE_MAX_GPUS)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
				     "%sgpus: must be an array of 1 to %d GPU indexes", path,
				     DTPLAN_NODE_MAX_GPUS);
	json_array_foreach(gpus, k, v)
	{
		json_int_t g = json_is_integer(v) ? json_integer_value(v) : -1;

		if (g < 0 || g >= n->n_gpus)
			return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
					     "%sgpus[%zu]: not a GPU index (0..%d)", path, k,
					     n->n_gpus - 1);
		if (owner[g] >= 0)
			return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
					     "%sgpus[%zu]: GPU %lld is already in domain %d", path,
					     k, (long long)g, owner[g]);
		owner[g] = i;
		d->gpus[d->n_gpus++] = (int)g;
	}
	bw = json_object_get(o, "bandwidth_bytes_per_s");
	if (!json_is_number(bw) || !isfinite(json_number_value(bw)) || json_number_value(bw) < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
				     "%sbandwidth_bytes_per_s: must be a number >= 0", path);
	d->bandwidth_bytes_per_s = json_number_value(bw);
	return dtplan__jget_str(o, SRC, path, "fabric_id", 0, d->fabric_id, sizeof(d->fabric_id),
				err);
}

static enum dtplan_err read_node(json_t *root, struct dtplan_node *n, struct dtplan_error *err)
{
	json_t *gpus, *domains, *nics;
	int owner[DTPLAN_NODE_MAX_GPUS];
	enum dtplan_err ret;

	if (!json_is_object(root))
		return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "top level: not an object");
	ret = dtplan__jget_str(root, SRC, "", "hostname", DTPLAN_JGET_REQUIRED, n->hostname,
			       sizeof(n->hostname), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(root, SRC, "", "source", DTPLAN_JGET_REQUIRED, n->source,
				       sizeof(n->source), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_str(root, SRC, "", "note", 0, n->note, sizeof(n->note), err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_int(root, SRC, "", "cores", DTPLAN_JGET_REQUIRED, 0, 1 << 24,
				       &n->cores, err);
	if (ret == DTPLAN_OK)
		ret = dtplan__jget_int(root, SRC, "", "numa_nodes", DTPLAN_JGET_REQUIRED, 0,
				       1 << 20, &n->numa_nodes, err);
	if (ret == DTPLAN_OK)
		ret = get_array(root, "gpus", DTPLAN_NODE_MAX_GPUS, &gpus, err);
	if (ret == DTPLAN_OK)
		ret = get_array(root, "domains", DTPLAN_NODE_MAX_GPUS, &domains, err);
	if (ret == DTPLAN_OK)
		ret = get_array(root, "nics", DTPLAN_NODE_MAX_NICS, &nics, err);
	if (ret != DTPLAN_OK)
		return ret;

	n->n_gpus = (int)json_array_size(gpus);
	n->n_domains = (int)json_array_size(domains);
	n->n_nics = (int)json_array_size(nics);
	for (int i = 0; i < n->n_nics; i++) {
		ret = read_nic(json_array_get(nics, (size_t)i), i, &n->nics[i], err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	for (int i = 0; i < n->n_gpus; i++)
		owner[i] = -1;
	for (int i = 0; i < n->n_domains; i++) {
		ret = read_domain(json_array_get(domains, (size_t)i), i, n, owner, err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	for (int i = 0; i < n->n_gpus; i++) {
		ret = read_gpu(json_array_get(gpus, (size_t)i), i, n, err);
		if (ret != DTPLAN_OK)
			return ret;
		if (owner[i] != n->gpus[i].domain)
			return dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0,
					     "gpus[%d].domain: %d, but domain %d lists this GPU", i,
					     n->gpus[i].domain, owner[i]);
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan_node_from_json(const char *text, struct dtplan_node *n,
				      struct dtplan_error *err)
{
	json_t *root = NULL;
	enum dtplan_err rv;

	if (text == NULL || n == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, NULL, 0,
				   "dtplan_node_from_json: NULL argument");
		goto out;
	}
	memset(n, 0, sizeof(*n));
	/* 64 GPUs, 16 NICs and 64 domains of 64 GPUs take under 6,000 values */
	root = dtplan__json_load(text, strlen(text), (size_t)1 << 16, SRC, "", err);
	if (root == NULL) {
		rv = DTPLAN_ERR_PARSE;
		goto out;
	}
	rv = read_node(root, n, err);
	if (rv != DTPLAN_OK)
		memset(n, 0, sizeof(*n));
out:
	json_decref(root);
	return rv;
}
