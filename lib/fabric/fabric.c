/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric.c: the allocation's fabric layout: nodes in topology order, GPUs in
 * rail order, NVLink domains, leaf runs and their uplinks.  The rules are in
 * doc/internals/placement.md.  Linear in nodes and GPUs.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "fabric/fabric.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dtplan__fabric_destroy(struct dtplan__fabric *f)
{
	if (f == NULL)
		return;
	free(f->host);
	free(f->inv);
	free(f->leaf);
	free(f->order);
	free(f->gpu_domain);
	free(f->runs);
	free(f->packed);
	free(f);
}

/* ------------------------------------------------------------------------
 * Building the layout
 * ---------------------------------------------------------------------- */

/* One allocated node while sorting. */
struct host {
	const char *name;
	const struct dtplan_node *inv;        /* NULL: generic */
	const struct dtplan_site_nodeset *ns; /* NULL: none */
	int leaf;                             /* topology leaf switch, -1 unknown */
	int leaf_rank;    /* depth-first position of the leaf; INT_MAX-like for unknown */
	const char *dkey; /* multi-node NVLink domain key, "" none */
	size_t ring_pos;  /* place in its ring or torus (ring, x-major order); 0 else */
	int n_gpus;       /* GPUs this node has */
	size_t alloc;     /* allocation order, the last tie-breaker */
};

/* Natural order: digit runs compare as numbers ("node2" < "node10"). */
static int natcmp(const char *a, const char *b)
{
	while (*a != '\0' && *b != '\0') {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *sa, *sb;
			size_t la, lb;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (sa = a; isdigit((unsigned char)*a); a++)
				;
			for (sb = b; isdigit((unsigned char)*b); b++)
				;
			la = (size_t)(a - sa);
			lb = (size_t)(b - sb);
			if (la != lb)
				return la < lb ? -1 : 1;
			for (size_t i = 0; i < la; i++)
				if (sa[i] != sb[i])
					return sa[i] < sb[i] ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a == *b ? 0 : (*a == '\0' ? -1 : 1);
}

static int cmp_host(const void *pa, const void *pb)
{
	const struct host *a = pa, *b = pb;
	int c;

	if (a->leaf_rank != b->leaf_rank)
		return a->leaf_rank < b->leaf_rank ? -1 : 1;
	c = strcmp(a->dkey, b->dkey);
	if (c != 0)
		return c;
	/* in a ring or torus, its own order: neighbours take neighbouring ranks */
	if (a->ring_pos != b->ring_pos)
		return a->ring_pos < b->ring_pos ? -1 : 1;
	c = natcmp(a->name, b->name);
	if (c != 0)
		return c;
	return a->alloc < b->alloc ? -1 : a->alloc > b->alloc;
}

/*
 * Depth-first (pre-order) position of every switch: roots in index order,
 * children in index order, so that leaves sharing a spine are neighbours.
 */
static enum dtplan_err switch_ranks(const struct dtplan_topology *t, int *rank)
{
	size_t n = t->n_switches, top = 0;
	int *first = NULL, *sib = NULL, *stack = NULL, *last = NULL, next = 0;
	enum dtplan_err rv = DTPLAN_ERR_NOMEM;

	first = malloc(n * sizeof(*first));
	sib = malloc(n * sizeof(*sib));
	last = malloc(n * sizeof(*last));
	stack = malloc(n * sizeof(*stack));
	if (first == NULL || sib == NULL || last == NULL || stack == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		first[i] = last[i] = sib[i] = -1;
		rank[i] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		int p = t->switches[i].parent;

		if (p < 0 || (size_t)p >= n)
			continue;
		if (last[p] < 0)
			first[p] = (int)i;
		else
			sib[last[p]] = (int)i;
		last[p] = (int)i;
	}
	/* roots pushed in reverse so that the first is visited first */
	for (size_t i = n; i-- > 0;)
		if (t->switches[i].parent < 0 || (size_t)t->switches[i].parent >= n)
			stack[top++] = (int)i;
	while (top > 0) {
		int s = stack[--top];
		size_t k = 0, base = top;

		if (rank[s] >= 0)
			continue; /* a cycle: visited already */
		rank[s] = next++;
		for (int c = first[s]; c >= 0; c = sib[c])
			k++;
		if (top + k > n)
			continue; /* only a malformed tree gets here */
		for (int c = first[s]; c >= 0; c = sib[c])
			stack[base + --k] = c;
		for (int c = first[s]; c >= 0; c = sib[c])
			top++;
	}
	rv = DTPLAN_OK;
out:
	free(first);
	free(sib);
	free(last);
	free(stack);
	return rv;
}

/*
 * Local order of an inventory's GPUs: grouped by NVLink domain, then round
 * robin over the rails (the NICs nearest to the GPUs, in NIC order), so that
 * local rank i uses the NIC of rail i.  GPUs without a NIC come last in
 * their domain.  order receives n->n_gpus indexes.
 */
struct gpu_key {
	int domain, turn, rail, gpu;
};

static int cmp_gpu_key(const void *pa, const void *pb)
{
	const struct gpu_key *a = pa, *b = pb;

	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->turn != b->turn)
		return a->turn < b->turn ? -1 : 1;
	if (a->rail != b->rail)
		return a->rail < b->rail ? -1 : 1;
	return a->gpu < b->gpu ? -1 : a->gpu > b->gpu;
}

static void local_order(const struct dtplan_node *n, int *order)
{
	struct gpu_key k[DTPLAN_NODE_MAX_GPUS];
	int seen[DTPLAN_NODE_MAX_NICS] = {0};
	int count = n->n_gpus < DTPLAN_NODE_MAX_GPUS ? n->n_gpus : DTPLAN_NODE_MAX_GPUS;

	for (int i = 0; i < count; i++) {
		int d = n->gpus[i].domain, nic = n->gpus[i].nic;
		bool has_nic = nic >= 0 && nic < n->n_nics && nic < DTPLAN_NODE_MAX_NICS;

		k[i].domain = d >= 0 && d < n->n_domains ? d : DTPLAN_NODE_MAX_GPUS + i;
		k[i].turn = has_nic ? seen[nic]++ : DTPLAN_NODE_MAX_GPUS;
		k[i].rail = has_nic ? nic : DTPLAN_NODE_MAX_NICS;
		k[i].gpu = i;
	}
	qsort(k, (size_t)count, sizeof(k[0]), cmp_gpu_key);
	for (int i = 0; i < count; i++)
		order[i] = k[i].gpu;
}

/* NVLink domain size (GPUs) of a node without an inventory: its site
 * GpuType='s (a gb200 node's 72), else the request's. */
static int site_domain_size(const struct host *h, int dsize)
{
	const struct dtplan_gpu *t;

	if (h->ns == NULL || h->ns->gpu_type[0] == '\0')
		return dsize;
	t = dtplan_gpu_find(h->ns->gpu_type, NULL);
	return t != NULL && t->domain_size > 0 ? t->domain_size : dsize;
}

/* Largest NVLink domain of a node (GPUs), for the heterogeneity check. */
static int node_domain_size(const struct host *h, const struct dtplan_request *req)
{
	int best = 1;

	if (h->inv == NULL) {
		int d = site_domain_size(h, req->gpu.domain_size);

		return d < h->n_gpus ? d : h->n_gpus;
	}
	for (int d = 0; d < h->inv->n_domains && d < DTPLAN_NODE_MAX_GPUS; d++)
		if (h->inv->domains[d].n_gpus > best)
			best = h->inv->domains[d].n_gpus;
	return best;
}

static const char *node_gpu_model(const struct host *h, const struct dtplan_request *req)
{
	if (h->inv != NULL && h->inv->n_gpus > 0 && h->inv->gpus[0].model[0] != '\0')
		return h->inv->gpus[0].model;
	if (h->ns != NULL && h->ns->gpu_type[0] != '\0')
		return h->ns->gpu_type;
	return req->gpu.name;
}

static void check_heterogeneous(struct dtplan__fabric *f, const struct host *hosts, size_t n,
				const struct dtplan_request *req)
{
	const struct host *a = &hosts[0];
	int da = node_domain_size(a, req);

	for (size_t i = 1; i < n; i++) {
		const struct host *b = &hosts[i];
		int db = node_domain_size(b, req);

		if (b->n_gpus == a->n_gpus && db == da &&
		    strcmp(node_gpu_model(a, req), node_gpu_model(b, req)) == 0)
			continue;
		f->heterogeneous = true;
		snprintf(f->hetero_reason, sizeof(f->hetero_reason),
			 "%.60s has %d x %.40s (NVLink domain %d) but %.60s has %d x %.40s "
			 "(domain %d)",
			 a->name, a->n_gpus, node_gpu_model(a, req), da, b->name, b->n_gpus,
			 node_gpu_model(b, req), db);
		return;
	}
}

/* Reads the allocation into hosts[] (allocation order). */
static enum dtplan_err read_hosts(const struct dtplan_request *req, const struct dtplan_cluster *cl,
				  struct host *hosts, size_t n, struct dtplan_error *err)
{
	const struct dtplan_config *c = cl->config;

	for (size_t i = 0; i < n; i++) {
		struct host *h = &hosts[i];

		h->alloc = i;
		h->leaf = -1;
		h->dkey = "";
		if (cl->n_hosts > 0) {
			int k = cl->host_inventory != NULL ? cl->host_inventory[i] : 0;

			if (cl->host_names == NULL)
				return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
						     "cluster has %zu hosts but no host names",
						     cl->n_hosts);
			h->name = cl->host_names[i];
			if (k >= 0 && (size_t)k >= cl->n_nodes && cl->n_nodes > 0)
				return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
						     "host %s uses inventory %d of %zu", h->name, k,
						     cl->n_nodes);
			h->inv = k >= 0 && cl->n_nodes > 0 ? &cl->nodes[k] : NULL;
		} else {
			h->inv = &cl->nodes[i];
			h->name = h->inv->hostname;
		}
		if (h->name[0] == '\0')
			return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
					     "node %zu of the allocation has no hostname", i);
		h->ns = c != NULL && c->n_nodesets > 0 ? dtplan_config_nodeset_for(c, h->name)
						       : NULL;
		if (h->inv != NULL) {
			h->n_gpus = h->inv->n_gpus < DTPLAN_NODE_MAX_GPUS ? h->inv->n_gpus
									  : DTPLAN_NODE_MAX_GPUS;
			if (h->n_gpus < 1)
				return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
						     "node %s has no GPUs (inventory source '%s')",
						     h->name, h->inv->source);
		} else {
			h->n_gpus = h->ns != NULL && h->ns->gpus_per_node > 0 ? h->ns->gpus_per_node
									      : req->gpus_per_node;
		}
		/* the job may hold only some of a node's GPUs */
		if (cl->gpus_per_node > 0 && h->n_gpus > cl->gpus_per_node)
			h->n_gpus = cl->gpus_per_node;
		if (h->ns != NULL && h->ns->nvlink_domain[0] != '\0') {
			h->dkey = h->ns->nvlink_domain;
		} else if (h->inv != NULL) {
			int d = h->inv->gpus[0].domain;

			if (d >= 0 && d < h->inv->n_domains)
				h->dkey = h->inv->domains[d].fabric_id;
		}
	}
	return DTPLAN_OK;
}

/* Topology leaf and its depth-first rank for every host. */
static enum dtplan_err place_in_tree(const struct dtplan_topology *t, struct host *hosts, size_t n,
				     size_t *unknown)
{
	int *rank;

	*unknown = 0;
	if (t == NULL || t->n_switches == 0) {
		for (size_t i = 0; i < n; i++)
			hosts[i].leaf_rank = 0;
		return DTPLAN_OK;
	}
	rank = malloc(t->n_switches * sizeof(*rank));
	if (rank == NULL)
		return DTPLAN_ERR_NOMEM;
	if (switch_ranks(t, rank) != DTPLAN_OK) {
		free(rank);
		return DTPLAN_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int k = dtplan_topology_node_index(t, hosts[i].name);
		int leaf = k >= 0 ? t->node_leaf[k] : -1;

		if (leaf < 0 || (size_t)leaf >= t->n_switches || rank[leaf] < 0) {
			hosts[i].leaf = -1;
			hosts[i].leaf_rank = (int)t->n_switches; /* after every leaf */
			(*unknown)++;
		} else {
			hosts[i].leaf = leaf;
			hosts[i].leaf_rank = rank[leaf];
			if (t->leaf_kind == DTPLAN_LEAF_RING || t->leaf_kind == DTPLAN_LEAF_TORUS)
				hosts[i].ring_pos = (size_t)k;
		}
	}
	free(rank);
	return DTPLAN_OK;
}

/*
 * Global NVLink domain of every GPU position: a site NVLinkDomain or an NVML
 * fabric id names a domain shared by nodes; otherwise a node's own domains
 * (a generic node: chunks of the GPU type's domain size).  Segments are runs
 * of positions in one domain and one leaf; TP must divide all of them.
 */
static enum dtplan_err assign_domains(struct dtplan__fabric *f, const struct host *hosts,
				      const struct dtplan_request *req)
{
	struct dtplan__strmap keys = {0};
	enum dtplan_err rv;
	int next = 0, g = f->gpus_per_node;
	int dsize = req->gpu.domain_size > 0 ? req->gpu.domain_size : 1;
	/* a node-local domain index: an inventory's (< DTPLAN_NODE_MAX_GPUS)
	 * or a generic node's l / dsize (< g, which the user sets) */
	size_t n_local = g > DTPLAN_NODE_MAX_GPUS ? (size_t)g : DTPLAN_NODE_MAX_GPUS;
	int *local = malloc(n_local * sizeof(*local));
	size_t seg_start = 0;

	rv = local == NULL ? DTPLAN_ERR_NOMEM : dtplan__strmap_init(&keys, 16);
	if (rv != DTPLAN_OK) {
		free(local);
		return rv;
	}
	for (size_t i = 0; i < f->n_nodes && rv == DTPLAN_OK; i++) {
		const struct host *h = &hosts[i];
		int id;

		for (size_t l = 0; l < n_local; l++)
			local[l] = -1;
		for (int l = 0; l < g; l++) {
			size_t pos = i * (size_t)g + (size_t)l;
			const char *key = "";
			int gi = f->order[i * (size_t)g + (size_t)l], d = -1;

			if (pos >= f->n_gpus)
				break;
			if (h->ns != NULL && h->ns->nvlink_domain[0] != '\0') {
				key = h->ns->nvlink_domain;
			} else if (h->inv != NULL) {
				d = h->inv->gpus[gi].domain;
				if (d >= 0 && d < h->inv->n_domains)
					key = h->inv->domains[d].fabric_id;
				else
					d = -1;
			} else {
				d = l / site_domain_size(h, dsize);
			}
			if (key[0] != '\0') {
				id = dtplan__strmap_get(&keys, key);
				if (id < 0) {
					id = next++;
					rv = dtplan__strmap_put(&keys, key, id, NULL);
					if (rv != DTPLAN_OK)
						break;
				}
			} else if (d >= 0) {
				if (local[d] < 0)
					local[d] = next++;
				id = local[d];
			} else {
				id = next++;
			}
			f->gpu_domain[pos] = id;
		}
	}
	free(local);
	dtplan__strmap_fini(&keys);
	if (rv != DTPLAN_OK)
		return rv;
	f->n_domains = next;
	f->domain_gcd = 0;
	f->min_domain = 0;
	f->n_segments = 0;
	for (size_t pos = 1; pos <= f->n_gpus; pos++) {
		bool end = pos == f->n_gpus || f->gpu_domain[pos] != f->gpu_domain[pos - 1] ||
			   f->leaf[pos / (size_t)g] != f->leaf[(pos - 1) / (size_t)g];
		int len;

		if (!end)
			continue;
		len = (int)(pos - seg_start);
		f->domain_gcd = dtplan__gcd(f->domain_gcd, len);
		if (f->min_domain == 0 || len < f->min_domain)
			f->min_domain = len;
		f->n_segments++;
		seg_start = pos;
	}
	return DTPLAN_OK;
}

/* Leaves for the fewest-leaves allocation: most nodes first, then the least
 * oversubscribed, then tree order. */
struct leaf_key {
	size_t nodes;
	double ratio;
	int sw;
};

static int cmp_leaf_key(const void *pa, const void *pb)
{
	const struct leaf_key *a = pa, *b = pb;

	if (a->nodes != b->nodes)
		return a->nodes < b->nodes ? 1 : -1;
	if (a->ratio != b->ratio)
		return a->ratio < b->ratio ? -1 : 1;
	return a->sw < b->sw ? -1 : a->sw > b->sw;
}

/* What build_runs() knows of the tree's leaves. */
struct leaves {
	size_t *nodes;       /* nodes under each switch */
	double *site_ratio;  /* the site file's Oversubscription, 0 unset */
	double *site_uplink; /* the site file's UplinkBandwidth, 0 unset */
};

/*
 * Fills run r (first_node and n_nodes set) for leaf switch sw of t (-1: the
 * "unknown" leaf, or the one of a flat fabric): its GPUs, name, uplink
 * capacity and ratio.
 */
static void fill_run(const struct dtplan__fabric *f, const struct dtplan_topology *t,
		     const struct leaves *lv, struct dtplan__run *r)
{
	const struct dtplan_switch *sw = r->sw >= 0 ? &t->switches[r->sw] : NULL;
	size_t g = (size_t)f->gpus_per_node;
	double ratio, down;

	r->first_gpu = r->first_node * g;
	r->n_gpus = r->n_nodes * g;
	if (r->first_gpu + r->n_gpus > f->n_gpus)
		r->n_gpus = f->n_gpus > r->first_gpu ? f->n_gpus - r->first_gpu : 0;
	if (sw == NULL) {
		r->name = f->flat ? "" : "unknown";
		r->leaf_nodes = r->n_nodes;
		r->uplink_bw = INFINITY;
		r->ratio = 1.0;
		return;
	}
	r->name = sw->name;
	r->leaf_nodes = lv->nodes[r->sw];
	down = (double)(r->leaf_nodes * g) * f->net_bw;
	ratio = lv->site_ratio[r->sw] > 0  ? lv->site_ratio[r->sw]
		: sw->oversubscription > 0 ? sw->oversubscription
					   : 1.0;
	if (lv->site_uplink[r->sw] > 0)
		r->uplink_bw = lv->site_uplink[r->sw];
	else if (sw->uplink_bytes_per_s > 0)
		r->uplink_bw = sw->uplink_bytes_per_s;
	else
		r->uplink_bw = down / ratio;
	r->ratio = down / r->uplink_bw;
}

/*
 * The same nodes on the fewest leaves of the tree (doc/internals/placement.md,
 * "Enforcement"): the known nodes fill the leaves of keys[] in order, the
 * unknown ones follow under the "unknown" leaf.  Sets n_leaves_needed too.
 */
static enum dtplan_err pack_runs(struct dtplan__fabric *f, const struct dtplan_topology *t,
				 const struct leaves *lv, const struct leaf_key *keys,
				 size_t n_keys, size_t known)
{
	size_t node = 0;

	f->packed = calloc(n_keys + 1, sizeof(*f->packed));
	if (f->packed == NULL)
		return DTPLAN_ERR_NOMEM;
	for (size_t k = 0; k < n_keys && node < known; k++) {
		struct dtplan__run *r = &f->packed[f->n_packed++];

		r->sw = keys[k].sw;
		r->first_node = node;
		r->n_nodes = keys[k].nodes < known - node ? keys[k].nodes : known - node;
		node += r->n_nodes;
		fill_run(f, t, lv, r);
	}
	if (node < f->n_nodes) {
		struct dtplan__run *r = &f->packed[f->n_packed++];

		r->sw = -1;
		r->first_node = node;
		r->n_nodes = f->n_nodes - node;
		fill_run(f, t, lv, r);
	}
	f->n_leaves_needed = f->flat ? 1 : f->n_packed;
	return DTPLAN_OK;
}

/* Leaf runs, their uplink capacities, and the fewest leaves that would do. */
static enum dtplan_err build_runs(struct dtplan__fabric *f, const struct dtplan_cluster *cl)
{
	const struct dtplan_topology *t = cl->topology;
	const struct dtplan_config *c = cl->config;
	size_t n_sw = t != NULL ? t->n_switches : 0, known = 0, n_keys = 0;
	struct leaves lv = {0};
	struct leaf_key *keys = NULL;
	enum dtplan_err rv = DTPLAN_ERR_NOMEM;

	f->runs = calloc(f->n_nodes, sizeof(*f->runs));
	lv.nodes = calloc(n_sw + 1, sizeof(*lv.nodes));
	lv.site_ratio = calloc(n_sw + 1, sizeof(*lv.site_ratio));
	lv.site_uplink = calloc(n_sw + 1, sizeof(*lv.site_uplink));
	keys = calloc(n_sw + 1, sizeof(*keys));
	if (f->runs == NULL || lv.nodes == NULL || lv.site_ratio == NULL ||
	    lv.site_uplink == NULL || keys == NULL)
		goto out;
	for (size_t i = 0; t != NULL && i < t->n_nodes; i++)
		if (t->node_leaf[i] >= 0 && (size_t)t->node_leaf[i] < n_sw)
			lv.nodes[t->node_leaf[i]]++;
	for (size_t i = 0; c != NULL && t != NULL && i < c->n_switches; i++) {
		int k = dtplan_topology_switch_index(t, c->switches[i].name);

		if (k < 0)
			continue;
		if (c->switches[i].oversubscription > 0)
			lv.site_ratio[k] = c->switches[i].oversubscription;
		if (c->switches[i].uplink_bytes_per_s > 0)
			lv.site_uplink[k] = c->switches[i].uplink_bytes_per_s;
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct dtplan__run *r;

		if (i > 0 && f->leaf[i] == f->leaf[i - 1]) {
			f->runs[f->n_runs - 1].n_nodes++;
			continue;
		}
		r = &f->runs[f->n_runs++];
		r->sw = f->leaf[i];
		r->first_node = i;
		r->n_nodes = 1;
	}
	for (size_t k = 0; k < f->n_runs; k++) {
		fill_run(f, t, &lv, &f->runs[k]);
		if (f->runs[k].sw >= 0)
			known += f->runs[k].n_nodes;
	}
	/* every leaf of the tree, ranked for the fewest-leaves allocation */
	for (size_t k = 0; k < n_sw; k++) {
		struct dtplan__run probe = {.sw = (int)k, .n_nodes = 1};

		if (lv.nodes[k] == 0)
			continue;
		fill_run(f, t, &lv, &probe);
		keys[n_keys++] =
			(struct leaf_key){.nodes = lv.nodes[k], .ratio = probe.ratio, .sw = (int)k};
	}
	qsort(keys, n_keys, sizeof(*keys), cmp_leaf_key);
	rv = pack_runs(f, t, &lv, keys, n_keys, known);
out:
	free(lv.nodes);
	free(lv.site_ratio);
	free(lv.site_uplink);
	free(keys);
	return rv;
}

enum dtplan_err dtplan__fabric_build(const struct dtplan_request *req,
				     const struct dtplan_cluster *cl, struct dtplan__fabric **out,
				     struct dtplan_error *err)
{
	struct dtplan__fabric *f = NULL;
	struct host *hosts = NULL;
	size_t n, total, g, unknown = 0;
	enum dtplan_err rv;
	int *inv_order = NULL;

	if (out != NULL)
		*out = NULL;
	if (req == NULL || cl == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no request, cluster or output");
		goto out;
	}
	n = cl->n_hosts > 0 ? cl->n_hosts : cl->n_nodes;
	if (n == 0 || (cl->n_hosts == 0 && cl->nodes == NULL) ||
	    (cl->n_hosts > 0 && cl->n_nodes > 0 && cl->nodes == NULL)) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "the cluster has no nodes");
		goto out;
	}
	if (req->gpus_per_node < 1 || req->gpus < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "gpus_per_node must be >= 1 and gpus >= 0");
		goto out;
	}
	f = calloc(1, sizeof(*f));
	hosts = calloc(n, sizeof(*hosts));
	if (f == NULL || hosts == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	f->flat = cl->topology == NULL || cl->topology->n_switches == 0;
	f->blocks = !f->flat && cl->topology->blocks;
	f->block_size = f->blocks ? cl->topology->block_size : 0;
	f->leaf_kind = f->flat ? DTPLAN_LEAF_SWITCH : cl->topology->leaf_kind;
	f->net_bw = req->net_bytes_per_s;
	rv = read_hosts(req, cl, hosts, n, err);
	if (rv != DTPLAN_OK)
		goto out;
	check_heterogeneous(f, hosts, n, req);
	f->gpus_per_node = hosts[0].n_gpus;
	for (size_t i = 1; i < n; i++)
		if (hosts[i].n_gpus < f->gpus_per_node)
			f->gpus_per_node = hosts[i].n_gpus;
	g = (size_t)f->gpus_per_node;
	total = n * g;
	if (req->gpus > 0 && (size_t)req->gpus > total) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "gpus", 0,
				   "%d GPUs requested but the %zu nodes hold %zu usable (%zu each)",
				   req->gpus, n, total, g);
		goto out;
	}
	rv = place_in_tree(cl->topology, hosts, n, &unknown);
	if (rv != DTPLAN_OK) {
		dtplan__error(err, rv, "", 0, "out of memory");
		goto out;
	}
	qsort(hosts, n, sizeof(*hosts), cmp_host);
	f->n_gpus = req->gpus > 0 ? (size_t)req->gpus : total;
	f->n_nodes = (f->n_gpus + g - 1) / g;
	f->host = calloc(f->n_nodes, sizeof(*f->host));
	f->inv = calloc(f->n_nodes, sizeof(*f->inv));
	f->leaf = calloc(f->n_nodes, sizeof(*f->leaf));
	f->order = calloc(f->n_nodes * g, sizeof(*f->order));
	f->gpu_domain = calloc(f->n_gpus, sizeof(*f->gpu_domain));
	inv_order = malloc((cl->n_nodes + 1) * DTPLAN_NODE_MAX_GPUS * sizeof(*inv_order));
	if (f->host == NULL || f->inv == NULL || f->leaf == NULL || f->order == NULL ||
	    f->gpu_domain == NULL || inv_order == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
		goto out;
	}
	/* each inventory's local order once (hosts may share inventories) */
	for (size_t k = 0; k < cl->n_nodes; k++)
		inv_order[k * DTPLAN_NODE_MAX_GPUS] = -1;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct host *h = &hosts[i];
		int *dst = &f->order[i * g], *src;

		f->host[i] = h->name;
		f->inv[i] = h->inv;
		f->leaf[i] = h->leaf;
		f->n_unknown += h->leaf < 0 && !f->flat;
		if (h->inv == NULL && h->ns != NULL && h->ns->gpu_type[0] != '\0') {
			f->n_site++;
			if (f->site_gpu == NULL)
				f->site_gpu = h->ns->gpu_type;
		} else {
			f->n_generic += h->inv == NULL;
		}
		if (h->inv == NULL) {
			for (size_t l = 0; l < g; l++)
				dst[l] = (int)l;
			continue;
		}
		src = &inv_order[(size_t)(h->inv - cl->nodes) * DTPLAN_NODE_MAX_GPUS];
		if (src[0] < 0)
			local_order(h->inv, src);
		memcpy(dst, src, g * sizeof(*dst));
	}
	rv = assign_domains(f, hosts, req);
	if (rv == DTPLAN_OK)
		rv = build_runs(f, cl);
	if (rv != DTPLAN_OK) {
		dtplan__error(err, rv, "", 0, "out of memory");
		goto out;
	}
	*out = f;
	f = NULL;
out:
	free(inv_order);
	free(hosts);
	dtplan__fabric_destroy(f);
	return rv;
}

bool dtplan__fabric_tp_fits(const struct dtplan__fabric *f, int tp)
{
	return f != NULL && tp >= 1 && f->domain_gcd % tp == 0;
}
