/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve_site.c: the site the collector's pages aggregate by (issue 35): the
 * leaves of the --fabric file, each under its parent switch, its nodes, and
 * the racks its node sets name (a node set's "nvlink_domain", an NVL72 rack
 * say), built once at start and read without a lock; and the tally of what
 * the store measured per leaf and per rack.
 *
 * The tally is O(n log n) in the nodes measured: each measured node is
 * found by name in the site's nodes (sorted), and the leaves only reports
 * name (a collector without a fabric file, or nodes the file lacks) are
 * sorted once and found the same way.
 */
#include "config.h"

#include "serve_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Natural order for display: digit runs compared as numbers ("leaf2" before
 * "leaf10"), then bytes. */
int serve_natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *x = a, *y = b;
			size_t nx, ny;

			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			for (nx = 0; isdigit((unsigned char)x[nx]); nx++)
				;
			for (ny = 0; isdigit((unsigned char)y[ny]); ny++)
				;
			if (nx != ny)
				return nx < ny ? -1 : 1;
			for (size_t i = 0; i < nx; i++)
				if (x[i] != y[i])
					return x[i] < y[i] ? -1 : 1;
			a = x + nx;
			b = y + ny;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int cmp_node(const void *x, const void *y)
{
	return strcmp(((const struct serve_site_node *)x)->name,
		      ((const struct serve_site_node *)y)->name);
}

static int cmp_leaf(const void *x, const void *y)
{
	return strcmp(((const struct serve_site_leaf *)x)->name,
		      ((const struct serve_site_leaf *)y)->name);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static const struct serve_site *sort_site; /* qsort has no argument */

static int cmp_leaf_display(const void *x, const void *y)
{
	const struct serve_site_leaf *a = &sort_site->leaves[*(const size_t *)x],
				     *b = &sort_site->leaves[*(const size_t *)y];
	int c = serve_natural_cmp(a->parent, b->parent);

	return c != 0 ? c : serve_natural_cmp(a->name, b->name);
}

int serve_site_leaf(const struct serve_site *s, const char *name)
{
	size_t lo = 0, hi = s != NULL ? s->n_leaves : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->leaves[mid].name, name);

		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

long serve_site_node(const struct serve_site *s, const char *name)
{
	size_t lo = 0, hi = s != NULL ? s->n_nodes : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->nodes[mid].name, name);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int serve_site_rack(const struct serve_site *s, const char *name)
{
	char *const *hit;

	if (s == NULL || s->n_racks == 0)
		return -1;
	hit = bsearch(&name, s->racks, s->n_racks, sizeof(*s->racks), cmp_str);
	return hit != NULL ? (int)(hit - s->racks) : -1;
}

void serve_site_destroy(struct serve_site *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n_leaves; i++) {
		free(s->leaves[i].name);
		free(s->leaves[i].parent);
	}
	for (size_t i = 0; i < s->n_nodes; i++)
		free(s->nodes[i].name);
	for (size_t i = 0; i < s->n_racks; i++)
		free(s->racks[i]);
	free(s->leaves);
	free(s->order);
	free(s->nodes);
	free(s->racks);
	free(s);
}

/* The racks of the node sets that name one: the names, sorted and unique,
 * then each node's. */
static bool add_racks(struct serve_site *s, json_t *fabric, struct dtplan_error *err)
{
	json_t *sets = json_object_get(fabric, "node_sets"), *set;
	size_t i, n = 0;

	json_array_foreach(sets, i, set)
	{
		if (json_string_value(json_object_get(set, "nvlink_domain")) != NULL)
			n++;
	}
	if (n == 0)
		return true;
	s->racks = calloc(n, sizeof(*s->racks));
	if (s->racks == NULL)
		return false;
	json_array_foreach(sets, i, set)
	{
		const char *d = json_string_value(json_object_get(set, "nvlink_domain"));

		if (d != NULL && d[0] != '\0' && (s->racks[s->n_racks] = strdup(d)) != NULL)
			s->n_racks++;
	}
	qsort(s->racks, s->n_racks, sizeof(*s->racks), cmp_str);
	for (size_t k = 0, w = 0; k <= s->n_racks; k++) {
		if (k == s->n_racks)
			s->n_racks = w;
		else if (w > 0 && strcmp(s->racks[k], s->racks[w - 1]) == 0)
			free(s->racks[k]);
		else
			s->racks[w++] = s->racks[k];
	}
	json_array_foreach(sets, i, set)
	{
		const char *d = json_string_value(json_object_get(set, "nvlink_domain"));
		json_t *nodes = json_object_get(set, "nodes"), *v;
		char(*names)[64] = NULL;
		size_t m = 0, k;
		int r = d != NULL ? serve_site_rack(s, d) : -1;

		if (r < 0)
			continue;
		if (json_is_string(nodes)) {
			if (dtplan_hostlist_expand(json_string_value(nodes), DTPLAN_HOSTLIST_MAX,
						   &names, &m, err) != DTPLAN_OK)
				return false;
			for (k = 0; k < m; k++) {
				long at = serve_site_node(s, names[k]);

				if (at >= 0)
					s->nodes[at].rack = r;
			}
			free(names);
		}
		json_array_foreach(nodes, k, v)
		{
			long at = json_is_string(v) ? serve_site_node(s, json_string_value(v)) : -1;

			if (at >= 0)
				s->nodes[at].rack = r;
		}
	}
	return true;
}

enum dtplan_err serve_site_create(json_t *fabric, struct serve_site **out, struct dtplan_error *err)
{
	struct serve_site *s = calloc(1, sizeof(*s));
	struct dtplan_fabric_desc *f = NULL;
	const struct dtplan_topology *t;
	char *text = NULL;
	int *leaf_of = NULL; /* switch index -> leaf index */
	enum dtplan_err rv = DTPLAN_ERR_NOMEM;

	*out = NULL;
	if (s == NULL)
		goto out;
	if (fabric == NULL) {
		rv = DTPLAN_OK;
		goto done;
	}
	text = json_dumps(fabric, JSON_COMPACT);
	if (text == NULL)
		goto out;
	rv = dtplan_fabric_desc_parse(text, strlen(text), DTPLAN_FABRIC_JSON, "--fabric", &f, err);
	if (rv != DTPLAN_OK)
		goto out;
	rv = DTPLAN_ERR_NOMEM;
	t = f->topology;
	leaf_of = malloc((t->n_switches + 1) * sizeof(*leaf_of));
	s->leaves = calloc(t->n_switches + 1, sizeof(*s->leaves));
	s->nodes = calloc(t->n_nodes + 1, sizeof(*s->nodes));
	if (leaf_of == NULL || s->leaves == NULL || s->nodes == NULL)
		goto out;
	/* the leaves: switches with nodes, sorted by name */
	for (size_t i = 0; i < t->n_switches; i++) {
		const struct dtplan_switch *sw = &t->switches[i];

		leaf_of[i] = -1;
		if (dtplan_topology_leaf_size(t, (int)i) == 0)
			continue;
		s->leaves[s->n_leaves].name = strdup(sw->name);
		s->leaves[s->n_leaves].parent =
			strdup(sw->parent >= 0 ? t->switches[sw->parent].name : "");
		if (s->leaves[s->n_leaves].name == NULL || s->leaves[s->n_leaves].parent == NULL) {
			s->n_leaves++;
			goto out;
		}
		s->n_leaves++;
	}
	qsort(s->leaves, s->n_leaves, sizeof(*s->leaves), cmp_leaf);
	for (size_t i = 0; i < t->n_switches; i++)
		leaf_of[i] = serve_site_leaf(s, t->switches[i].name);
	for (size_t i = 0; i < t->n_nodes; i++) {
		int sw = t->node_leaf[i];

		s->nodes[s->n_nodes].name = strdup(t->node_names[i]);
		if (s->nodes[s->n_nodes].name == NULL)
			goto out;
		s->nodes[s->n_nodes].leaf =
			sw >= 0 && (size_t)sw < t->n_switches ? leaf_of[sw] : -1;
		s->nodes[s->n_nodes].rack = -1;
		if (s->nodes[s->n_nodes].leaf >= 0)
			s->leaves[s->nodes[s->n_nodes].leaf].n_nodes++;
		s->n_nodes++;
	}
	qsort(s->nodes, s->n_nodes, sizeof(*s->nodes), cmp_node);
	if (!add_racks(s, fabric, err)) {
		rv = err != NULL && err->code != DTPLAN_OK ? err->code : DTPLAN_ERR_NOMEM;
		goto out;
	}
done:
	s->order = malloc((s->n_leaves + 1) * sizeof(*s->order));
	if (s->order == NULL)
		goto out;
	for (size_t i = 0; i < s->n_leaves; i++)
		s->order[i] = i;
	sort_site = s; /* once, at start, before the server's threads */
	qsort(s->order, s->n_leaves, sizeof(*s->order), cmp_leaf_display);
	sort_site = NULL;
	*out = s;
	s = NULL;
	rv = DTPLAN_OK;
out:
	free(leaf_of);
	free(text);
	dtplan_fabric_desc_destroy(f);
	serve_site_destroy(s);
	return rv;
}

/* ------------------------------------------------------------------------
 * The tally
 * ---------------------------------------------------------------------- */

const char *serve_health_class(const struct serve_health *h)
{
	if (h->slow > 0 || (isfinite(h->ratio) && h->ratio > SERVE_BAD_RATIO))
		return "bad";
	if (h->flaky > 0 || h->stragglers > 0 || (isfinite(h->ratio) && h->ratio > SERVE_OK_RATIO))
		return "strained";
	if (h->measured == 0 && !isfinite(h->ratio))
		return "unmeasured";
	return "fine";
}

static int cmp_cstr(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Index of name among the extra leaves (sorted); -1 when absent. */
static long extra_leaf(const struct serve_tally *t, const char *name)
{
	const char *const *hit =
		t->n_extra > 0 ? bsearch(&name, t->extra, t->n_extra, sizeof(*t->extra), cmp_cstr)
			       : NULL;

	return hit != NULL ? (long)(hit - t->extra) : -1;
}

static void health_add(struct serve_health *h, const struct serve_rows *n, size_t row)
{
	long slow = atol(serve_cell(n, row, 2)), seen = atol(serve_cell(n, row, 3)),
	     strag = atol(serve_cell(n, row, 4));
	long long last = atoll(serve_cell(n, row, 5));

	if (seen > 0 || strag > 0)
		h->measured++;
	if (slow >= SERVE_SLOW_REPORTS)
		h->slow++;
	else if (slow > 0)
		h->flaky++;
	if (strag > 0)
		h->stragglers++;
	if (last > h->last)
		h->last = last;
}

/* The leaf name of node row i: the site's, else the one its report named
 * ("" none). */
const char *serve_tally_leaf_name(const struct serve_site *s, const struct serve_tally *t, size_t i)
{
	long at = t->site_node[i];

	if (at >= 0 && s->nodes[at].leaf >= 0)
		return s->leaves[s->nodes[at].leaf].name;
	return serve_cell(t->rows, i, 1);
}

bool serve_tally_make(struct serve_tally *t, const struct serve_site *s,
		      const struct serve_rows *nodes, const struct serve_rows *ups)
{
	size_t n_names = 0, nl = s->n_leaves;

	memset(t, 0, sizeof(*t));
	t->rows = nodes;
	t->site_node = malloc((nodes->n + 1) * sizeof(*t->site_node));
	t->extra = malloc((nodes->n + ups->n + 1) * sizeof(*t->extra));
	if (t->site_node == NULL || t->extra == NULL)
		goto fail;
	/* each measured node in the site, and the leaves only reports name */
	for (size_t i = 0; i < nodes->n; i++) {
		long at = serve_site_node(s, serve_cell(nodes, i, 0));

		t->site_node[i] = at;
		if ((at < 0 || s->nodes[at].leaf < 0) &&
		    serve_site_leaf(s, serve_cell(nodes, i, 1)) < 0)
			t->extra[n_names++] = serve_cell(nodes, i, 1);
	}
	for (size_t i = 0; i < ups->n; i++)
		if (serve_site_leaf(s, serve_cell(ups, i, 0)) < 0)
			t->extra[n_names++] = serve_cell(ups, i, 0);
	qsort(t->extra, n_names, sizeof(*t->extra), cmp_cstr);
	for (size_t i = 0; i < n_names; i++)
		if (t->n_extra == 0 || strcmp(t->extra[i], t->extra[t->n_extra - 1]) != 0)
			t->extra[t->n_extra++] = t->extra[i];
	t->leaf = calloc(nl + t->n_extra + 1, sizeof(*t->leaf));
	t->rack = calloc(s->n_racks + 1, sizeof(*t->rack));
	if (t->leaf == NULL || t->rack == NULL)
		goto fail;
	for (size_t i = 0; i < nl + t->n_extra; i++)
		t->leaf[i].ratio = NAN;
	for (size_t i = 0; i < s->n_racks; i++)
		t->rack[i].ratio = NAN;
	for (size_t i = 0; i < nl; i++)
		t->leaf[i].nodes = s->leaves[i].n_nodes;
	for (size_t i = 0; i < s->n_nodes; i++)
		if (s->nodes[i].rack >= 0)
			t->rack[s->nodes[i].rack].nodes++;
	for (size_t i = 0; i < nodes->n; i++) {
		long at = t->site_node[i], li;

		if (at >= 0 && s->nodes[at].leaf >= 0)
			li = s->nodes[at].leaf;
		else if ((li = serve_site_leaf(s, serve_cell(nodes, i, 1))) < 0)
			li = (long)nl + extra_leaf(t, serve_cell(nodes, i, 1));

		if (at < 0 || s->nodes[at].leaf < 0)
			t->leaf[li].nodes++;
		health_add(&t->leaf[li], nodes, i);
		if (at >= 0 && s->nodes[at].rack >= 0)
			health_add(&t->rack[s->nodes[at].rack], nodes, i);
		health_add(&t->all, nodes, i);
	}
	for (size_t i = 0; i < ups->n; i++) {
		int li = serve_site_leaf(s, serve_cell(ups, i, 0));
		long at = li >= 0 ? li : (long)nl + extra_leaf(t, serve_cell(ups, i, 0));

		t->leaf[at].ratio = serve_cell_num(ups, i, 1);
	}
	t->n_leaves = nl + t->n_extra;
	t->all.nodes = s->n_nodes;
	for (size_t i = 0; i < nodes->n; i++)
		if (t->site_node[i] < 0)
			t->all.nodes++;
	return true;
fail:
	serve_tally_fini(t);
	return false;
}

void serve_tally_fini(struct serve_tally *t)
{
	free(t->site_node);
	free(t->extra);
	free(t->leaf);
	free(t->rack);
	memset(t, 0, sizeof(*t));
}
