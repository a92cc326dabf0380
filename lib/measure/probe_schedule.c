/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe_schedule.c: who probes whom in each round, the fan-in tree, and
 * what a run costs (doc/internals/probe.md).  A pure function of the node
 * count, the leaf switches and the nodes present: the leader computes it
 * and sends each node its partners.  Linear in the nodes.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *dtplan_round_kind_name(enum dtplan_round_kind k)
{
	switch (k) {
	case DTPLAN_ROUND_INTRA:
		return "intra";
	case DTPLAN_ROUND_CROSS:
		return "cross";
	case DTPLAN_ROUND_CONCURRENT:
		return "concurrent";
	default:
		return "?";
	}
}

void dtplan_probe_schedule_destroy(struct dtplan_probe_schedule *s)
{
	if (s == NULL)
		return;
	for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++) {
		free(s->rounds[r].pairs);
		free(s->rounds[r].peer);
		free(s->rounds[r].sends);
	}
	free(s);
}

/* A present node with its group key, for sorting. */
struct member {
	int64_t key; /* leaf id; unknown leaves after every known one */
	uint32_t node;
};

static int cmp_member(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static void add_pair(struct dtplan_probe_round *r, uint32_t from, uint32_t to)
{
	r->pairs[r->n_pairs].from = from;
	r->pairs[r->n_pairs].to = to;
	r->n_pairs++;
	r->peer[from] = (int32_t)to;
	r->peer[to] = (int32_t)from;
	r->sends[from] = 1;
}

enum dtplan_err dtplan_probe_schedule_create(size_t n, const int32_t *leaf, const uint8_t *present,
					     struct dtplan_probe_schedule **out,
					     struct dtplan_error *err)
{
	struct dtplan_probe_schedule *s = NULL;
	struct dtplan_probe_round work[DTPLAN_PROBE_MAX_ROUNDS];
	struct member *m = NULL;
	size_t *gstart = NULL, M = 0, G = 0, used = 0;
	enum dtplan_err rv;

	memset(work, 0, sizeof(work));
	if (out != NULL)
		*out = NULL;
	if (out == NULL || n == 0 || n > DTPLAN_HOSTLIST_MAX) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				   "probe schedule: %zu nodes (1 to %d)", n, DTPLAN_HOSTLIST_MAX);
		goto out;
	}
	s = calloc(1, sizeof(*s));
	m = calloc(n, sizeof(*m));
	gstart = calloc(n + 1, sizeof(*gstart));
	if (s == NULL || m == NULL || gstart == NULL)
		goto nomem;
	for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++) {
		work[r].pairs = calloc(n / 2 + 1, sizeof(*work[r].pairs));
		work[r].peer = malloc(n * sizeof(*work[r].peer));
		work[r].sends = calloc(n, sizeof(*work[r].sends));
		if (work[r].pairs == NULL || work[r].peer == NULL || work[r].sends == NULL)
			goto nomem;
		for (size_t i = 0; i < n; i++)
			work[r].peer[i] = -1;
	}
	work[0].kind = work[1].kind = DTPLAN_ROUND_INTRA;
	work[2].kind = work[3].kind = DTPLAN_ROUND_CROSS;
	work[4].kind = DTPLAN_ROUND_CONCURRENT;
	/* Present nodes in leaf order, node order inside a leaf. */
	for (size_t i = 0; i < n; i++) {
		if (present != NULL && !present[i])
			continue;
		m[M].key = leaf == NULL ? 0 : leaf[i] < 0 ? (int64_t)INT_MAX + 1 : leaf[i];
		m[M].node = (uint32_t)i;
		M++;
	}
	qsort(m, M, sizeof(*m), cmp_member);
	for (size_t i = 0; i < M; i++)
		if (i == 0 || m[i].key != m[i - 1].key)
			gstart[G++] = i;
	gstart[G] = M;
	/* Intra A: 0-1, 2-3, ...; intra B: 1-2, 3-4, ... and k-1 with 0 when even. */
	for (size_t g = 0; g < G; g++) {
		size_t a = gstart[g], k = gstart[g + 1] - a;

		for (size_t j = 0; j + 1 < k; j += 2)
			add_pair(&work[0], m[a + j].node, m[a + j + 1].node);
		for (size_t j = 1; j + 1 < k; j += 2)
			add_pair(&work[1], m[a + j].node, m[a + j + 1].node);
		if (k > 2 && k % 2 == 0)
			add_pair(&work[1], m[a + k - 1].node, m[a].node);
	}
	/* Cross: the first node of leaf 2i to the first of leaf 2i+1; an odd
	 * last leaf to leaf 0 (its second node when it has one) a round later. */
	for (size_t g = 0; g + 1 < G; g += 2)
		add_pair(&work[2], m[gstart[g]].node, m[gstart[g + 1]].node);
	if (G >= 3 && G % 2 == 1) {
		size_t k0 = gstart[1] - gstart[0];

		add_pair(&work[3], m[gstart[G - 1]].node, m[gstart[0] + (k0 > 1 ? 1 : 0)].node);
	}
	/* Concurrent: position p with p + ceil(M/2) in leaf order, directions
	 * alternating; pairs that fall inside one leaf are left out. */
	if (G >= 2) {
		size_t h = M / 2, shift = M - M / 2;

		for (size_t p = 0; p < h; p++) {
			const struct member *a = &m[p], *b = &m[p + shift];

			if (a->key == b->key)
				continue;
			if (p % 2 == 0)
				add_pair(&work[4], a->node, b->node);
			else
				add_pair(&work[4], b->node, a->node);
		}
	}
	/* Keep the rounds that have pairs, in order. */
	s->n_nodes = n;
	s->n_groups = G;
	for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++) {
		if (work[r].n_pairs == 0)
			continue;
		s->rounds[used++] = work[r];
		memset(&work[r], 0, sizeof(work[r]));
	}
	s->n_rounds = used;
	*out = s;
	s = NULL;
	rv = DTPLAN_OK;
	goto out;
nomem:
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
out:
	for (size_t r = 0; r < DTPLAN_PROBE_MAX_ROUNDS; r++) {
		free(work[r].pairs);
		free(work[r].peer);
		free(work[r].sends);
	}
	dtplan_probe_schedule_destroy(s);
	free(m);
	free(gstart);
	return rv;
}

/* ------------------------------------------------------------------------
 * The fan-in tree
 * ---------------------------------------------------------------------- */

uint32_t dtplan_probe_tree_parent(uint32_t node, uint32_t fanout)
{
	if (node == 0 || fanout == 0)
		return 0;
	return (node - 1) / fanout;
}

size_t dtplan_probe_tree_depth(size_t n, uint32_t fanout)
{
	size_t depth = 0;
	uint32_t x;

	if (n <= 1 || fanout == 0)
		return 0;
	for (x = (uint32_t)(n - 1); x > 0; x = dtplan_probe_tree_parent(x, fanout))
		depth++;
	return depth;
}

bool dtplan_probe_tree_contains(uint32_t root, uint32_t node, uint32_t fanout)
{
	if (fanout == 0)
		return node == root;
	while (node > root)
		node = dtplan_probe_tree_parent(node, fanout);
	return node == root;
}

/* ------------------------------------------------------------------------
 * Cost
 * ---------------------------------------------------------------------- */

void dtplan_probe_params_init(struct dtplan_probe_params *p)
{
	memset(p, 0, sizeof(*p));
	p->budget_s = 5.0;
	p->fanout = 16;
	p->ping_count = 32;
	p->ping_bytes = 64;
	p->ping_window_s = 0.03;
	p->bulk_bytes = (uint64_t)32 << 20;
	p->bulk_s = 0.12;
	p->slot_s = 0.25;
	p->discover_s = 0.15;
	p->hop_s = 0.001;
	p->record_bytes = 8000;
	p->distinct_records = 1;
}

/* A message's fixed cost: the header and a MUNGE credential (about 250
 * bytes for a 60-byte seal). */
#define MSG_OVERHEAD (DTPLAN_WIRE_HEADER_LEN + 250.0)
#define ENTRY_BYTES (4 + 4 + 19 + 2) /* an inventory entry without a note */
#define LINK_BYTES (4 + 4 + 1 + 1 + 2 + 24)
#define ASSIGN_BYTES(r) (4 + (r) * (4 + 1 + 1 + 19))

enum dtplan_err dtplan_probe_cost(const struct dtplan_probe_schedule *s,
				  const struct dtplan_probe_params *p,
				  struct dtplan_probe_cost *out, struct dtplan_error *err)
{
	size_t n, *sub = NULL, *links = NULL;
	double per_pair, rec;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (s == NULL || p == NULL || out == NULL || p->fanout == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "probe cost: no schedule, parameters or fan-out");
	n = s->n_nodes;
	sub = calloc(n, sizeof(*sub));
	links = calloc(n, sizeof(*links));
	if (sub == NULL || links == NULL) {
		free(sub);
		free(links);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	}
	out->nodes = n;
	out->rounds = s->n_rounds;
	out->depth = dtplan_probe_tree_depth(n, p->fanout);
	/* a parent, the children, one probe connection */
	out->max_connections = (n > 1 ? 1 : 0) + (n - 1 < p->fanout ? n - 1 : p->fanout) + 1;
	for (size_t r = 0; r < s->n_rounds; r++) {
		out->pairs += s->rounds[r].n_pairs;
		for (size_t k = 0; k < s->rounds[r].n_pairs; k++)
			links[s->rounds[r].pairs[k].from]++;
	}
	/* subtree sizes and link counts, children before parents */
	for (size_t i = n; i-- > 1;) {
		uint32_t up = dtplan_probe_tree_parent((uint32_t)i, p->fanout);

		sub[i] += 1;
		sub[up] += sub[i];
		links[up] += links[i];
	}
	rec = p->record_bytes * (double)(p->distinct_records > 0 ? p->distinct_records : 1);
	for (size_t i = 1; i < n; i++) {
		double records =
			sub[i] < p->distinct_records ? (double)sub[i] * p->record_bytes : rec;
		double inv = MSG_OVERHEAD + 8 + records + (double)sub[i] * ENTRY_BYTES;
		double go = MSG_OVERHEAD + 44 + (double)sub[i] * ASSIGN_BYTES(s->n_rounds);
		double res = MSG_OVERHEAD + 8 + (double)sub[i] * 4 + (double)links[i] * LINK_BYTES;
		double join = MSG_OVERHEAD + 23;
		double edge = join + inv + go + res;

		out->tree_bytes += edge;
		if (dtplan_probe_tree_parent((uint32_t)i, p->fanout) == 0)
			out->leader_bytes += edge;
	}
	per_pair = 2 * MSG_OVERHEAD + 28 + 24 + 2.0 * p->ping_count * p->ping_bytes +
		   (double)p->bulk_bytes;
	out->probe_bytes = (double)out->pairs * per_pair;
	for (size_t r = 0; r < s->n_rounds; r++)
		if (s->rounds[r].peer[0] >= 0)
			out->leader_bytes += per_pair;
	/* discovery, inventories up, the go down (and its start margin), the
	 * rounds, results up, the file */
	out->wall_s = p->discover_s + 4.0 * (double)out->depth * p->hop_s + 0.05 +
		      (double)s->n_rounds * p->slot_s + (double)out->depth * p->hop_s + 0.05;
	free(sub);
	free(links);
	return DTPLAN_OK;
}
