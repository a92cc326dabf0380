/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_set.c: distinct node inventories shared among the hosts of a job
 * (probes/inventory.c keeps an allocation's records in one).
 *
 * A struct dtplan_node is about 33 KB; a job of 16,384 identical nodes
 * needs one, not 16,384 copies (issue 13, finding 10).  A set keeps each
 * distinct hardware once, found again by a hash of the fields planning
 * reads, so that adding n inventories costs O(n).
 */
#include "config.h"

#include "dtplan.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s, strlen(s) + 1);
}

static uint64_t fnv_int(uint64_t h, int v)
{
	return fnv(h, &v, sizeof(v));
}

/* Counts clamped to the arrays, for inventories filled by hand. */
static int clamp(int v, int max)
{
	return v < 0 ? 0 : v > max ? max : v;
}

static uint64_t hardware_hash(const struct dtplan_node *n)
{
	uint64_t h = 14695981039346656037ULL;
	int gpus = clamp(n->n_gpus, DTPLAN_NODE_MAX_GPUS);
	int nics = clamp(n->n_nics, DTPLAN_NODE_MAX_NICS);
	int domains = clamp(n->n_domains, DTPLAN_NODE_MAX_GPUS);

	h = fnv_int(h, gpus);
	h = fnv_int(h, nics);
	h = fnv_int(h, domains);
	h = fnv_int(h, n->cores);
	h = fnv_int(h, n->numa_nodes);
	for (int i = 0; i < gpus; i++) {
		h = fnv_str(h, n->gpus[i].model);
		h = fnv_str(h, n->gpus[i].pci_bus_id);
		h = fnv_int(h, n->gpus[i].domain);
		h = fnv_int(h, n->gpus[i].nic);
	}
	for (int i = 0; i < nics; i++)
		h = fnv_str(h, n->nics[i].name);
	for (int d = 0; d < domains; d++) {
		h = fnv_int(h, n->domains[d].n_gpus);
		h = fnv_str(h, n->domains[d].fabric_id);
	}
	return h;
}

bool dtplan_node_same_hardware(const struct dtplan_node *a, const struct dtplan_node *b)
{
	int gpus = clamp(a->n_gpus, DTPLAN_NODE_MAX_GPUS);
	int nics = clamp(a->n_nics, DTPLAN_NODE_MAX_NICS);
	int domains = clamp(a->n_domains, DTPLAN_NODE_MAX_GPUS);

	if (a->n_gpus != b->n_gpus || a->n_nics != b->n_nics || a->n_domains != b->n_domains ||
	    a->cores != b->cores || a->numa_nodes != b->numa_nodes)
		return false;
	for (int i = 0; i < gpus; i++) {
		const struct dtplan_node_gpu *x = &a->gpus[i], *y = &b->gpus[i];

		if (strcmp(x->vendor, y->vendor) != 0 || strcmp(x->model, y->model) != 0 ||
		    strcmp(x->pci_bus_id, y->pci_bus_id) != 0 ||
		    strcmp(x->os_name, y->os_name) != 0 || x->numa != y->numa ||
		    x->domain != y->domain || x->nic != y->nic ||
		    x->memory_bytes != y->memory_bytes)
			return false;
	}
	for (int i = 0; i < nics; i++) {
		const struct dtplan_node_nic *x = &a->nics[i], *y = &b->nics[i];

		if (strcmp(x->name, y->name) != 0 || x->kind != y->kind ||
		    strcmp(x->pci_bus_id, y->pci_bus_id) != 0 || x->numa != y->numa)
			return false;
	}
	for (int d = 0; d < domains; d++) {
		const struct dtplan_node_domain *x = &a->domains[d], *y = &b->domains[d];

		if (x->n_gpus != y->n_gpus ||
		    x->bandwidth_bytes_per_s != y->bandwidth_bytes_per_s ||
		    strcmp(x->fabric_id, y->fabric_id) != 0)
			return false;
		for (int k = 0; k < clamp(x->n_gpus, DTPLAN_NODE_MAX_GPUS); k++)
			if (x->gpus[k] != y->gpus[k])
				return false;
	}
	return true;
}

void dtplan_node_set_init(struct dtplan_node_set *s)
{
	memset(s, 0, sizeof(*s));
}

void dtplan_node_set_fini(struct dtplan_node_set *s)
{
	if (s == NULL)
		return;
	free(s->nodes);
	free(s->hash);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

/* Rebuilds the open-addressing index with n_slots (a power of two). */
static bool reindex(struct dtplan_node_set *s, size_t n_slots)
{
	size_t *slot = malloc(n_slots * sizeof(*slot));

	if (slot == NULL)
		return false;
	for (size_t i = 0; i < n_slots; i++)
		slot[i] = SIZE_MAX;
	for (size_t k = 0; k < s->n; k++) {
		size_t i = (size_t)s->hash[k] & (n_slots - 1);

		while (slot[i] != SIZE_MAX)
			i = (i + 1) & (n_slots - 1);
		slot[i] = k;
	}
	free(s->slot);
	s->slot = slot;
	s->n_slots = n_slots;
	return true;
}

long dtplan_node_set_add(struct dtplan_node_set *s, const struct dtplan_node *n)
{
	uint64_t h = hardware_hash(n);
	size_t i;

	if (s->n_slots > 0) {
		for (i = (size_t)h & (s->n_slots - 1); s->slot[i] != SIZE_MAX;
		     i = (i + 1) & (s->n_slots - 1))
			if (s->hash[s->slot[i]] == h &&
			    dtplan_node_same_hardware(&s->nodes[s->slot[i]], n))
				return (long)s->slot[i];
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4;
		struct dtplan_node *nodes = realloc(s->nodes, cap * sizeof(*nodes));
		uint64_t *hash;

		if (nodes == NULL)
			return -1;
		s->nodes = nodes;
		hash = realloc(s->hash, cap * sizeof(*hash));
		if (hash == NULL)
			return -1;
		s->hash = hash;
		s->cap = cap;
	}
	s->nodes[s->n] = *n;
	s->hash[s->n] = h;
	s->n++;
	if (2 * s->n > s->n_slots) { /* at most half full */
		if (!reindex(s, s->n_slots ? 2 * s->n_slots : 8)) {
			s->n--;
			return -1;
		}
	} else {
		for (i = (size_t)h & (s->n_slots - 1); s->slot[i] != SIZE_MAX;
		     i = (i + 1) & (s->n_slots - 1))
			;
		s->slot[i] = s->n - 1;
	}
	return (long)(s->n - 1);
}
