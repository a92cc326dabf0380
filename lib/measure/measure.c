/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * measure.c: link results -> measurements (tiers, uplinks, stragglers,
 * missing nodes), the measurement as the plan's input, and its warnings.
 * The rules are in doc/internals/probe.md ("What the numbers mean").  No I/O.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dtplan_measurements *dtplan_measurements_create(size_t n, const char (*hosts)[64])
{
	struct dtplan_measurements *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	dtplan__strlcpy(m->source, "none", sizeof(m->source));
	m->n_nodes = n;
	m->hosts = calloc(n + 1, sizeof(*m->hosts));
	if (m->hosts == NULL) {
		free(m);
		return NULL;
	}
	if (hosts != NULL && n > 0)
		memcpy(m->hosts, hosts, n * sizeof(*hosts));
	return m;
}

void dtplan_measurements_destroy(struct dtplan_measurements *m)
{
	if (m == NULL)
		return;
	free(m->hosts);
	free(m->uplinks);
	free(m->links);
	free(m->stragglers);
	free(m->missing);
	free(m->notes);
	free(m);
}

enum dtplan_err dtplan_measurements_add_note(struct dtplan_measurements *m, const char *fmt, ...)
{
	char(*notes)[256];
	va_list ap;

	if (m == NULL || fmt == NULL)
		return DTPLAN_ERR_INVAL;
	if (m->n_notes >= DTPLAN_MEASURE_MAX_NOTES) {
		m->n_notes_more++;
		return DTPLAN_OK;
	}
	notes = realloc(m->notes, (m->n_notes + 1) * sizeof(*notes));
	if (notes == NULL)
		return DTPLAN_ERR_NOMEM;
	m->notes = notes;
	va_start(ap, fmt);
	vsnprintf(m->notes[m->n_notes], sizeof(m->notes[0]), fmt, ap);
	va_end(ap);
	m->n_notes++;
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * Analysis
 * ---------------------------------------------------------------------- */

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* Median of v[0..n) (sorts v); 0 for n == 0. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static bool is_cross(const struct dtplan_measure_in *in, const struct dtplan_link_result *l)
{
	if (in->leaf != NULL)
		return in->leaf[l->from] != in->leaf[l->to];
	return (l->flags & DTPLAN_LINK_CROSS) != 0;
}

/* Fills a tier: the median bandwidth of its single flows (that moved
 * data) and the median latency of its single-flow rounds (that pinged).
 * The concurrent round counts for latency only when the tier has no other:
 * all its pairs connect and ping at once, and what they measure is that. */
static void tier_of(const struct dtplan_measure_in *in, bool cross, double *buf,
		    struct dtplan_tier *t)
{
	size_t nb = 0, nl = 0;
	double *lat = buf + in->n_links, *spread = buf + 2 * in->n_links;

	memset(t, 0, sizeof(*t));
	for (int pass = 0; pass < 2 && nl == 0; pass++) {
		for (size_t i = 0; i < in->n_links; i++) {
			const struct dtplan_link_result *l = &in->links[i];
			bool conc = (l->flags & DTPLAN_LINK_CONCURRENT) != 0;

			if (!(l->flags & DTPLAN_LINK_OK) || is_cross(in, l) != cross)
				continue;
			if (pass == 0) {
				t->links++;
				if (!conc && l->bandwidth_bytes_per_s > 0)
					buf[nb++] = l->bandwidth_bytes_per_s;
			}
			if (l->samples > 0 && conc == (pass == 1)) {
				lat[nl] = l->latency_s;
				spread[nl] = l->latency_spread_s;
				nl++;
			}
		}
	}
	t->bandwidth_bytes_per_s = median(buf, nb);
	t->latency_s = median(lat, nl);
	t->latency_spread_s = median(spread, nl);
	t->measured = nb > 0 || nl > 0;
}

/* Stragglers of the intra-leaf tier: a node whose best single flow is
 * below DTPLAN_STRAGGLER_FRACTION of the tier's median.  Needs three
 * links: with fewer the median says nothing about the others. */
static enum dtplan_err find_stragglers(const struct dtplan_measure_in *in,
				       struct dtplan_measurements *m)
{
	double med = m->intra.bandwidth_bytes_per_s, *best;
	size_t links = 0;

	if (med <= 0)
		return DTPLAN_OK;
	best = calloc(in->n_nodes, sizeof(*best));
	m->stragglers = calloc(in->n_nodes + 1, sizeof(*m->stragglers));
	if (best == NULL || m->stragglers == NULL) {
		free(best);
		return DTPLAN_ERR_NOMEM;
	}
	for (size_t i = 0; i < in->n_links; i++) {
		const struct dtplan_link_result *l = &in->links[i];
		double bw = l->bandwidth_bytes_per_s;

		if (!(l->flags & DTPLAN_LINK_OK) || (l->flags & DTPLAN_LINK_CONCURRENT) ||
		    is_cross(in, l) || bw <= 0)
			continue;
		links++;
		best[l->from] = fmax(best[l->from], bw);
		best[l->to] = fmax(best[l->to], bw);
	}
	for (size_t i = 0; links >= 3 && i < in->n_nodes; i++) {
		struct dtplan_straggler *s;

		if (best[i] <= 0 || best[i] >= DTPLAN_STRAGGLER_FRACTION * med)
			continue;
		s = &m->stragglers[m->n_stragglers++];
		dtplan__strlcpy(s->node, in->hosts[i], sizeof(s->node));
		s->bandwidth_bytes_per_s = best[i];
		s->tier_median_bytes_per_s = med;
	}
	free(best);
	return DTPLAN_OK;
}

/* One leaf's share of the concurrent round. */
struct leaf_load {
	int32_t leaf;
	size_t hosts;    /* the job's hosts under it */
	double up, down; /* bytes/s leaving, entering */
	size_t up_flows, down_flows;
};

static struct leaf_load *load_of(struct leaf_load *ll, size_t n, int32_t leaf)
{
	for (size_t k = 0; k < n; k++)
		if (ll[k].leaf == leaf)
			return &ll[k];
	return NULL;
}

static enum dtplan_err find_uplinks(const struct dtplan_measure_in *in,
				    struct dtplan_measurements *m)
{
	struct leaf_load *ll;
	double node_bw = m->intra.bandwidth_bytes_per_s;
	size_t n = 0;

	if (in->leaf == NULL)
		return DTPLAN_OK;
	ll = calloc(in->n_nodes + 1, sizeof(*ll));
	m->uplinks = calloc(in->n_nodes + 1, sizeof(*m->uplinks));
	if (ll == NULL || m->uplinks == NULL) {
		free(ll);
		return DTPLAN_ERR_NOMEM;
	}
	for (size_t i = 0; i < in->n_nodes; i++) {
		struct leaf_load *l;

		if (in->leaf[i] < 0)
			continue;
		l = load_of(ll, n, in->leaf[i]);
		if (l == NULL) {
			l = &ll[n++];
			l->leaf = in->leaf[i];
		}
		l->hosts++;
	}
	for (size_t i = 0; i < in->n_links; i++) {
		const struct dtplan_link_result *lk = &in->links[i];
		struct leaf_load *a, *b;

		if (!(lk->flags & DTPLAN_LINK_OK) || !(lk->flags & DTPLAN_LINK_CONCURRENT) ||
		    !is_cross(in, lk) || lk->bandwidth_bytes_per_s <= 0)
			continue;
		a = load_of(ll, n, in->leaf[lk->from]);
		b = load_of(ll, n, in->leaf[lk->to]);
		if (a != NULL) {
			a->up += lk->bandwidth_bytes_per_s;
			a->up_flows++;
		}
		if (b != NULL) {
			b->down += lk->bandwidth_bytes_per_s;
			b->down_flows++;
		}
		/* without an intra-leaf tier, the fastest flow stands for a node link */
		if (!m->intra.measured)
			node_bw = fmax(node_bw, lk->bandwidth_bytes_per_s);
	}
	for (size_t k = 0; k < n && node_bw > 0; k++) {
		struct dtplan_uplink *u;
		const struct leaf_load *l = &ll[k];
		bool up = l->up >= l->down;
		size_t flows = up ? l->up_flows : l->down_flows, leaf_nodes = l->hosts;
		const struct dtplan_topology *t = in->topology;

		if (flows == 0)
			continue;
		u = &m->uplinks[m->n_uplinks++];
		if (t != NULL && l->leaf >= 0 && (size_t)l->leaf < t->n_switches) {
			dtplan__strlcpy(u->name, t->switches[l->leaf].name, sizeof(u->name));
			if (dtplan_topology_leaf_size(t, l->leaf) > 0)
				leaf_nodes = dtplan_topology_leaf_size(t, l->leaf);
		} else {
			snprintf(u->name, sizeof(u->name), "leaf%d", (int)l->leaf);
		}
		u->aggregate_bytes_per_s = up ? l->up : l->down;
		u->flows = flows;
		u->downlink_bytes_per_s = (double)leaf_nodes * node_bw;
		u->oversubscription = u->downlink_bytes_per_s / u->aggregate_bytes_per_s;
		u->saturated = u->aggregate_bytes_per_s <
			       DTPLAN_SATURATED_FRACTION * (double)flows * node_bw;
	}
	free(ll);
	return DTPLAN_OK;
}

enum dtplan_err dtplan_measurements_analyze(const struct dtplan_measure_in *in,
					    struct dtplan_measurements **out,
					    struct dtplan_error *err)
{
	struct dtplan_measurements *m = NULL;
	double *buf = NULL;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (in == NULL || out == NULL || in->n_nodes == 0 || in->hosts == NULL ||
	    (in->n_links > 0 && in->links == NULL)) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "measurements: no input, hosts or links");
		goto out;
	}
	for (size_t i = 0; i < in->n_links; i++) {
		if (in->links[i].from >= in->n_nodes || in->links[i].to >= in->n_nodes ||
		    in->links[i].from == in->links[i].to) {
			rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
					   "measurements: link %zu names hosts %u and %u of %zu", i,
					   in->links[i].from, in->links[i].to, in->n_nodes);
			goto out;
		}
	}
	m = dtplan_measurements_create(in->n_nodes, in->hosts);
	buf = malloc((3 * in->n_links + 1) * sizeof(*buf));
	if (m == NULL || buf == NULL)
		goto nomem;
	dtplan__strlcpy(m->source, in->source ? in->source : "probe", sizeof(m->source));
	m->budget_s = in->budget_s;
	m->elapsed_s = in->elapsed_s;
	if (in->interface != NULL)
		dtplan__strlcpy(m->interface, in->interface, sizeof(m->interface));
	if (in->n_links > 0) {
		m->links = malloc(in->n_links * sizeof(*m->links));
		if (m->links == NULL)
			goto nomem;
		memcpy(m->links, in->links, in->n_links * sizeof(*m->links));
		m->n_links = in->n_links;
		/* the tree decides what crosses a leaf uplink, not the prober */
		for (size_t i = 0; in->leaf != NULL && i < m->n_links; i++) {
			m->links[i].flags &= (uint8_t)~DTPLAN_LINK_CROSS;
			if (is_cross(in, &m->links[i]))
				m->links[i].flags |= DTPLAN_LINK_CROSS;
		}
	}
	tier_of(in, false, buf, &m->intra);
	tier_of(in, true, buf, &m->cross);
	if (find_stragglers(in, m) != DTPLAN_OK || find_uplinks(in, m) != DTPLAN_OK)
		goto nomem;
	m->missing = calloc(in->n_nodes + 1, sizeof(*m->missing));
	if (m->missing == NULL)
		goto nomem;
	for (size_t i = 0; i < in->n_nodes; i++) {
		bool rep = in->reported == NULL || in->reported[i];

		m->n_reported += rep;
		if (!rep || (in->complete != NULL && !in->complete[i]))
			m->missing[m->n_missing++] = (uint32_t)i;
	}
	*out = m;
	m = NULL;
	rv = DTPLAN_OK;
	goto out;
nomem:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
out:
	free(buf);
	dtplan_measurements_destroy(m);
	return rv;
}

/* ------------------------------------------------------------------------
 * The measurement as the plan's input
 * ---------------------------------------------------------------------- */

enum dtplan_err dtplan_measurements_apply(struct dtplan_measurements *m, struct dtplan_request *req,
					  struct dtplan_config *c, struct dtplan_topology *t,
					  struct dtplan_error *err)
{
	if (m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no measurements");
	for (size_t i = 0; i < m->n_uplinks; i++) {
		struct dtplan_uplink *u = &m->uplinks[i];
		int k = t != NULL ? dtplan_topology_switch_index(t, u->name) : -1;
		double site = 0.0, uplink = 0.0;

		for (size_t j = 0; c != NULL && j < c->n_switches; j++) {
			if (strcmp(c->switches[j].name, u->name) != 0)
				continue;
			if (c->switches[j].oversubscription > 0)
				site = c->switches[j].oversubscription;
			if (c->switches[j].uplink_bytes_per_s > 0)
				uplink = c->switches[j].uplink_bytes_per_s;
		}
		/* An UplinkBandwidth= is a ratio to the leaf's GPUs' links, as
		 * the fabric prices it (lib/fabric/fabric.c); the topology's own ratio
		 * is 1.0 unless the site file set it. */
		if (!(site > 0) && uplink > 0 && req != NULL && k >= 0 && req->gpus_per_node > 0 &&
		    req->net_bytes_per_s > 0)
			site = (double)dtplan_topology_leaf_size(t, k) * req->gpus_per_node *
			       req->net_bytes_per_s / uplink;
		u->configured = site;
		if (!u->saturated || !(u->oversubscription > 0) || !isfinite(u->oversubscription))
			continue;
		for (size_t j = 0; c != NULL && j < c->n_switches; j++) {
			if (strcmp(c->switches[j].name, u->name) != 0)
				continue;
			c->switches[j].oversubscription = u->oversubscription;
			c->switches[j].uplink_bytes_per_s = 0.0;
		}
		if (k >= 0) {
			t->switches[k].oversubscription = u->oversubscription;
			t->switches[k].uplink_bytes_per_s = 0.0;
		}
		m->used_ratios = true;
	}
	if (req != NULL && m->interface[0] != '\0' && m->intra.measured &&
	    m->intra.bandwidth_bytes_per_s > 0) {
		req->net_bytes_per_s = m->intra.bandwidth_bytes_per_s;
		if (m->intra.latency_s > 0)
			req->net_latency_s = m->intra.latency_s;
		m->used_tiers = true;
	}
	return DTPLAN_OK;
}
