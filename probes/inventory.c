/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inventory.c: the inventory of an allocation, assembled in one place for
 * the plugin (the batch step) and the CLI (dtplan plan).  Each host takes,
 * in this order: a file named for it (the CLI's --node-xml/--node-json), the
 * prolog's measurement, the site's node_xml= pattern, the cache folder, a
 * live discovery when it is this node; else another host's record, and the
 * plan says so.  Hosts with equal hardware share one record: 16,384 equal
 * nodes hold one 32 KB record, not 16,384 copies.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const origin_names[] = {
	[DTPLAN_INV_NONE] = "none",         [DTPLAN_INV_FILE] = "file",
	[DTPLAN_INV_MEASURED] = "measured", [DTPLAN_INV_NODE_XML] = "node_xml",
	[DTPLAN_INV_CACHE] = "cache",       [DTPLAN_INV_LIVE] = "live",
	[DTPLAN_INV_ASSUMED] = "assumed",
};

const char *dtplan_inventory_origin_name(enum dtplan_inventory_origin o)
{
	if ((unsigned)o >= DTPLAN_ARRAY_SIZE(origin_names))
		return "?";
	return origin_names[o];
}

void dtplan_inventory_destroy(struct dtplan_inventory *inv)
{
	if (inv == NULL)
		return;
	free(inv->hosts);
	dtplan_node_set_fini(&inv->set);
	free(inv->host_record);
	free(inv->origin);
	free(inv);
}

/* The record with n's hardware, added when new: its index, -1 out of memory.
 * The allocation's records are a struct dtplan_node_set (lib/fabric/node_set.c):
 * found again by a hash, O(1) a host however many distinct nodes there are. */
static int intern(struct dtplan_inventory *inv, struct dtplan_node *n)
{
	long k;

	n->hostname[0] = '\0';
	k = dtplan_node_set_add(&inv->set, n);
	inv->records = inv->set.nodes;
	inv->n_records = inv->set.n;
	return k < 0 || k > INT_MAX ? -1 : (int)k;
}

/* A node struct whose unused bytes are zero (equal hardware, equal bytes). */
static struct dtplan_node *fresh_node(void)
{
	return calloc(1, sizeof(struct dtplan_node));
}

static void normalise(struct dtplan_node *dst, const struct dtplan_node *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst->source, src->source, strnlen(src->source, sizeof(src->source) - 1));
	memcpy(dst->note, src->note, strnlen(src->note, sizeof(src->note) - 1));
	dst->n_gpus = src->n_gpus;
	dst->n_nics = src->n_nics;
	dst->n_domains = src->n_domains;
	dst->cores = src->cores;
	dst->numa_nodes = src->numa_nodes;
	for (int i = 0; i < src->n_gpus && i < DTPLAN_NODE_MAX_GPUS; i++) {
		const struct dtplan_node_gpu *g = &src->gpus[i];
		struct dtplan_node_gpu *d = &dst->gpus[i];

		memcpy(d->vendor, g->vendor, strnlen(g->vendor, sizeof(g->vendor) - 1));
		memcpy(d->model, g->model, strnlen(g->model, sizeof(g->model) - 1));
		memcpy(d->pci_bus_id, g->pci_bus_id,
		       strnlen(g->pci_bus_id, sizeof(g->pci_bus_id) - 1));
		memcpy(d->os_name, g->os_name, strnlen(g->os_name, sizeof(g->os_name) - 1));
		d->memory_bytes = g->memory_bytes;
		d->numa = g->numa;
		d->domain = g->domain;
		d->nic = g->nic;
	}
	for (int i = 0; i < src->n_nics && i < DTPLAN_NODE_MAX_NICS; i++) {
		const struct dtplan_node_nic *c = &src->nics[i];
		struct dtplan_node_nic *d = &dst->nics[i];

		memcpy(d->name, c->name, strnlen(c->name, sizeof(c->name) - 1));
		d->kind = c->kind;
		memcpy(d->pci_bus_id, c->pci_bus_id,
		       strnlen(c->pci_bus_id, sizeof(c->pci_bus_id) - 1));
		d->numa = c->numa;
	}
	for (int i = 0; i < src->n_domains && i < DTPLAN_NODE_MAX_GPUS; i++) {
		const struct dtplan_node_domain *c = &src->domains[i];
		struct dtplan_node_domain *d = &dst->domains[i];

		d->n_gpus = c->n_gpus;
		for (int k = 0; k < c->n_gpus && k < 64; k++)
			d->gpus[k] = c->gpus[k];
		d->bandwidth_bytes_per_s = c->bandwidth_bytes_per_s;
		memcpy(d->fabric_id, c->fabric_id, strnlen(c->fabric_id, sizeof(c->fabric_id) - 1));
	}
}

/* Reads one --node-xml/--node-json file into n. */
static enum dtplan_err read_file(const struct dtplan_inventory_file *f, struct dtplan_node *n,
				 struct dtplan_error *err)
{
	enum dtplan_err rv;
	char *text = NULL;

	if (!f->json)
		return dtplan_node_from_xml(f->path, n, err);
	rv = dtplan_file_read(f->path, DTPLAN_FILE_NODE_JSON, &text, NULL, err);
	if (rv == DTPLAN_OK) {
		rv = dtplan_node_from_json(text, n, err);
		if (rv != DTPLAN_OK && err != NULL && err->source[0] == '\0')
			snprintf(err->source, sizeof(err->source), "%s", f->path);
	}
	free(text);
	return rv;
}

/* The node_xml= pattern for host: %n is its name, %% a '%'.  false when the
 * path does not fit. */
static bool expand_pattern(const char *pattern, const char *host, char *buf, size_t size)
{
	size_t used = 0;

	for (const char *p = pattern; *p != '\0'; p++) {
		const char *add = p;
		size_t len = 1;

		if (p[0] == '%' && p[1] == 'n') {
			add = host;
			len = strlen(host);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (used + len >= size)
			return false;
		memcpy(buf + used, add, len);
		used += len;
	}
	buf[used] = '\0';
	return true;
}

enum dtplan_err dtplan_inventory_node_xml(const char *pattern, const char *host, char *buf,
					  size_t size, struct dtplan_error *err)
{
	if (pattern == NULL || host == NULL || host[0] == '\0' || strchr(host, '/') != NULL ||
	    strcmp(host, "..") == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "node_xml", 0,
				     "no pattern, or a host name that cannot name a file ('%s')",
				     host ? host : "");
	if (!expand_pattern(pattern, host, buf, size))
		return dtplan__error(err, DTPLAN_ERR_RANGE, "node_xml", 0,
				     "node_xml=%s for %s: the path is too long", pattern, host);
	return DTPLAN_OK;
}

/* Sets host i's record from n (normalised first); -1 out of memory. */
static int take(struct dtplan_inventory *inv, size_t i, struct dtplan_node *tmp,
		const struct dtplan_node *n, enum dtplan_inventory_origin origin)
{
	int k;

	normalise(tmp, n);
	k = intern(inv, tmp);
	if (k < 0)
		return -1;
	inv->host_record[i] = k;
	inv->origin[i] = (uint8_t)origin;
	return 0;
}

enum dtplan_err dtplan_inventory_assemble(const struct dtplan_inventory_opts *o,
					  struct dtplan_inventory **out, struct dtplan_error *err)
{
	struct dtplan_inventory *inv = NULL;
	struct dtplan_node *n = fresh_node(), *tmp = fresh_node();
	struct dtplan__strmap index = {0};
	int *measured_map = NULL;
	int like = -1;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (o == NULL || out == NULL || o->n_hosts == 0 || o->hosts == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "inventory: no hosts");
		goto out;
	}
	inv = calloc(1, sizeof(*inv));
	if (n == NULL || tmp == NULL || inv == NULL)
		goto nomem;
	inv->n_hosts = o->n_hosts;
	inv->hosts = malloc(o->n_hosts * sizeof(*inv->hosts));
	inv->host_record = malloc(o->n_hosts * sizeof(*inv->host_record));
	inv->origin = calloc(o->n_hosts, 1);
	if (inv->hosts == NULL || inv->host_record == NULL || inv->origin == NULL ||
	    dtplan__strmap_init(&index, o->n_hosts) != DTPLAN_OK)
		goto nomem;
	memcpy(inv->hosts, o->hosts, o->n_hosts * sizeof(*inv->hosts));
	for (size_t i = 0; i < o->n_hosts; i++) {
		inv->host_record[i] = -1;
		/* a name given twice keeps its first place */
		dtplan__strmap_put(&index, inv->hosts[i], (int)i, NULL);
	}
	/* 1. files named for hosts (the first naming a host wins) */
	for (size_t f = 0; f < o->n_files; f++) {
		const struct dtplan_inventory_file *file = &o->files[f];
		char(*names)[64] = NULL;
		size_t nn = 0;
		int rec;

		rv = dtplan_hostlist_expand(file->hostlist, DTPLAN_HOSTLIST_MAX, &names, &nn, err);
		if (rv != DTPLAN_OK) {
			if (err != NULL)
				snprintf(err->source, sizeof(err->source), "%s",
					 file->flag ? file->flag : "inventory");
			goto out;
		}
		rv = read_file(file, n, err);
		rec = rv == DTPLAN_OK ? (normalise(tmp, n), intern(inv, tmp)) : 0;
		for (size_t j = 0; rv == DTPLAN_OK && j < nn; j++) {
			int k = dtplan__strmap_get(&index, names[j]);

			if (k < 0) {
				rv = dtplan__error(err, DTPLAN_ERR_INVAL,
						   file->flag ? file->flag : "", 0,
						   "host '%s' of '%s' is not in --nodes", names[j],
						   file->hostlist);
				break;
			}
			if (inv->host_record[k] >= 0)
				continue;
			inv->host_record[k] = rec;
			inv->origin[k] = DTPLAN_INV_FILE;
		}
		free(names);
		if (rv == DTPLAN_OK && rec < 0)
			goto nomem;
		if (rv != DTPLAN_OK)
			goto out;
		if (f == 0)
			snprintf(inv->assumed_from, sizeof(inv->assumed_from), "%s", file->path);
	}
	/* 2. the prolog's measurement */
	if (o->measured != NULL && o->measured->m != NULL) {
		const struct dtplan_measure_file *m = o->measured;

		measured_map = malloc((m->n_records + 1) * sizeof(*measured_map));
		if (measured_map == NULL)
			goto nomem;
		for (size_t k = 0; k < m->n_records; k++) {
			normalise(tmp, &m->records[k]);
			measured_map[k] = intern(inv, tmp);
			if (measured_map[k] < 0)
				goto nomem;
		}
		for (size_t j = 0; j < m->m->n_nodes; j++) {
			int k = dtplan__strmap_get(&index, m->m->hosts[j]);
			int32_t r = m->host_record != NULL ? m->host_record[j] : -1;

			if (k < 0 || r < 0 || (size_t)r >= m->n_records || inv->host_record[k] >= 0)
				continue;
			inv->host_record[k] = measured_map[r];
			inv->origin[k] = DTPLAN_INV_MEASURED;
			inv->n_measured++;
		}
	}
	/* 3. node_xml=, 4. the cache folder: files a site keeps on the node */
	for (size_t i = 0; i < o->n_hosts; i++) {
		char path[4096];
		struct dtplan_error e2 = {0};

		if (inv->host_record[i] >= 0)
			continue;
		if (o->node_xml != NULL && o->node_xml[0] != '\0' &&
		    dtplan_inventory_node_xml(o->node_xml, inv->hosts[i], path, sizeof(path),
					      &e2) == DTPLAN_OK &&
		    access(path, R_OK) == 0) {
			if (dtplan_node_from_xml(path, n, &e2) == DTPLAN_OK) {
				if (take(inv, i, tmp, n, DTPLAN_INV_NODE_XML) != 0)
					goto nomem;
				continue;
			}
			dtplan__log(DTPLAN_LOG_DEBUG, "inventory: %s: %s", inv->hosts[i], e2.text);
		}
		if (o->cache_dir != NULL && o->cache_dir[0] != '\0' &&
		    (o->self == NULL || strcmp(o->self, inv->hosts[i]) != 0) &&
		    snprintf(path, sizeof(path), "%s/%s.xml", o->cache_dir, inv->hosts[i]) <
			    (int)sizeof(path) &&
		    access(path, R_OK) == 0 && dtplan_node_from_xml(path, n, NULL) == DTPLAN_OK) {
			snprintf(n->source, sizeof(n->source), "cache");
			if (take(inv, i, tmp, n, DTPLAN_INV_CACHE) != 0)
				goto nomem;
		}
	}
	/* 5. this node, live (or from its own cache file) */
	if (o->self != NULL && o->self[0] != '\0') {
		int k = dtplan__strmap_get(&index, o->self);

		if (k >= 0 && inv->host_record[k] < 0) {
			struct dtplan_discover_opts d = {0};
			struct dtplan_error e2 = {0};

			d.cache_dir = o->cache_dir != NULL && o->cache_dir[0] ? o->cache_dir : NULL;
			d.hostname = o->self;
			d.timeout_s = o->timeout_s;
			rv = dtplan_node_discover(&d, n, &e2);
			if (rv != DTPLAN_OK) {
				char buf[768];

				dtplan__error(err, rv, "", 0, "cannot discover node %s: %s",
					      o->self, dtplan_error_format(&e2, buf, sizeof(buf)));
				goto out;
			}
			if (take(inv, (size_t)k, tmp, n, DTPLAN_INV_LIVE) != 0)
				goto nomem;
		}
	}
	/* 6. the rest take the reference host's record */
	if (o->assume_like != NULL) {
		int k = dtplan__strmap_get(&index, o->assume_like);

		if (k >= 0 && inv->host_record[k] >= 0) {
			like = inv->host_record[k];
			snprintf(inv->assumed_like, sizeof(inv->assumed_like), "%s",
				 o->assume_like);
			snprintf(inv->assumed_from, sizeof(inv->assumed_from), "%s",
				 dtplan_inventory_origin_name(inv->origin[k]));
		}
	} else if (inv->n_records > 0) {
		like = 0;
		for (size_t i = 0; i < o->n_hosts && inv->assumed_like[0] == '\0'; i++)
			if (inv->host_record[i] == 0)
				snprintf(inv->assumed_like, sizeof(inv->assumed_like), "%s",
					 inv->hosts[i]);
	}
	for (size_t i = 0; like >= 0 && i < o->n_hosts; i++) {
		if (inv->host_record[i] >= 0)
			continue;
		inv->host_record[i] = like;
		inv->origin[i] = DTPLAN_INV_ASSUMED;
		inv->n_assumed++;
	}
	if (o->assumed_why != NULL)
		snprintf(inv->assumed_why, sizeof(inv->assumed_why), "%s", o->assumed_why);
	*out = inv;
	inv = NULL;
	rv = DTPLAN_OK;
	goto out;
nomem:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
out:
	dtplan__strmap_fini(&index);
	dtplan_inventory_destroy(inv);
	free(measured_map);
	free(n);
	free(tmp);
	return rv;
}

void dtplan_inventory_cluster(const struct dtplan_inventory *inv, struct dtplan_cluster *cl)
{
	cl->n_nodes = inv->n_records;
	cl->nodes = inv->records;
	cl->n_hosts = inv->n_hosts;
	cl->host_names = (const char(*)[64])inv->hosts;
	cl->host_inventory = inv->host_record;
}

enum dtplan_err dtplan_inventory_note(const struct dtplan_inventory *inv, struct dtplan_plan *p)
{
	char(*names)[64], list[256];
	size_t n = 0;
	enum dtplan_err rv;

	if (inv == NULL || p == NULL)
		return DTPLAN_ERR_INVAL;
	if (p->measurements != NULL)
		p->measurements->n_inventories = inv->n_measured;
	if (inv->n_assumed == 0)
		return DTPLAN_OK;
	names = malloc(inv->n_assumed * sizeof(*names));
	if (names == NULL)
		return DTPLAN_ERR_NOMEM;
	for (size_t i = 0; i < inv->n_hosts; i++)
		if (inv->origin[i] == DTPLAN_INV_ASSUMED)
			memcpy(names[n++], inv->hosts[i], sizeof(names[0]));
	dtplan_hostlist_compress((const char(*)[64])names, n, list, sizeof(list));
	free(names);
	rv = dtplan_plan_add_warning(p, "assumed-nodes",
				     "%zu of %zu nodes (%s) have no inventory%s: assumed equal to "
				     "%s (%s)",
				     inv->n_assumed, inv->n_hosts, list, inv->assumed_why,
				     inv->assumed_like[0] ? inv->assumed_like : "the first node",
				     inv->assumed_from);
	return rv;
}
