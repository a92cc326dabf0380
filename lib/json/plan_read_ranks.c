/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_read_ranks.c: what tasks need from a plan's JSON, read with the
 * streaming reader (plan_read_stream.c) from where the first pass found it:
 * "parallelism" (all of it, and for both readers), "checkpoint" and
 * "placement" (its nodes and ranks, and for the whole plan its leaves and
 * the rest).  Memory is the plan's own, allocated after the counts are
 * checked against the parallel degrees and the limits
 * (doc/internals/limits.md); node names are found by binary search.  See
 * plan_read_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"
#include "json/plan_read_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members of "parallelism", in keys[]'s order. */
enum {
	S_TP,
	S_PP,
	S_DP,
	S_ZERO,
	S_MICRO_BATCH,
	S_NUM_MICROBATCHES,
	S_GLOBAL_BATCH,
	S_EP,
	S_CP,
	S_VP,
	S_ETP, /* the integers */
	S_RECOMPUTE,
	S_OFFLOAD,
	S_SCHEDULE,
	S_STAGES,
	S_IMBALANCE, /* read after the others: they need pp */
	S__N
};

/* What reading "parallelism" keeps until all its members are seen. */
struct split_read {
	char recompute[32]; /* the recomputation's name, when it is given one */
	bool recompute_named;
	int recompute_n; /* else its number */
	int schedule;
	struct dtplan__span stages, imbalance;
};

/* One known member of "parallelism" (k, key) at the reader. */
static enum dtplan_err read_split_member(struct dtplan__rd *r, int k, const char *key,
					 int *const *ints, struct split_read *s,
					 struct dtplan_candidate *b)
{
	enum dtplan_err ret;
	char name[16];
	size_t len = 0;
	char c;

	switch (k) {
	case S_RECOMPUTE:
		if (dtplan__rd_peek(r) != '"')
			return dtplan__rd_int_value(r, "parallelism", key, &s->recompute_n);
		ret = dtplan__rd_string(r, s->recompute, sizeof(s->recompute), &len);
		s->recompute_named = true;
		if (ret == DTPLAN_OK && len >= sizeof(s->recompute))
			ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
					    "parallelism.recompute: too long");
		return ret;
	case S_OFFLOAD:
		c = dtplan__rd_peek(r);
		if (c != 't' && c != 'f' && c != 'n')
			return dtplan__rd_syntax(r, "parallelism.offload: expected true or false");
		b->offload = c == 't';
		return dtplan__rd_skip_value(r);
	case S_SCHEDULE:
		/* written only for DualPipe */
		if (dtplan__rd_peek(r) == '"') {
			ret = dtplan__rd_string(r, name, sizeof(name), &len);
			if (ret != DTPLAN_OK ||
			    (len < sizeof(name) &&
			     dtplan_schedule_parse(name, &s->schedule, NULL) == DTPLAN_OK))
				return ret;
		}
		return dtplan__rd_syntax(r, "parallelism.schedule: expected \"1f1b\" or "
					    "\"dualpipe\"");
	case S_STAGES:
	case S_IMBALANCE:
		*(k == S_STAGES ? &s->stages : &s->imbalance) =
			(struct dtplan__span){.found = true, .pos = r->pos};
		return dtplan__rd_skip_value(r);
	default:
		return dtplan__rd_int_value(r, "parallelism", key, ints[k]);
	}
}

/* layers_per_stage at the reader: pp layer counts, kept as the plan keeps
 * them: the first, the middle (all equal) and the last. */
static enum dtplan_err read_stages(struct dtplan__rd *r, struct dtplan_candidate *b)
{
	enum dtplan_err ret;
	bool first = true, more = true, whole;
	struct dtplan__rd ahead;
	size_t i = 0, n = 0;
	long long v;
	double d;
	char c;

	if (dtplan__rd_peek(r) != '[')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.layers_per_stage: expected %d layer counts",
				     b->pp);
	ahead = *r;
	if ((ret = dtplan__rd_count_elements(&ahead, &n)) != DTPLAN_OK)
		return ret;
	if (n != (size_t)b->pp)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.layers_per_stage: expected %d layer counts",
				     b->pp);
	if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more) {
		v = 0;
		c = dtplan__rd_peek(r);
		if (c == '-' || (c >= '0' && c <= '9')) {
			ret = dtplan__rd_number(r, &d, &whole, &v);
			if (!whole)
				v = 0;
		} else {
			ret = dtplan__rd_skip_value(r);
		}
		if (ret != DTPLAN_OK ||
		    (ret = dtplan__plan_stage_at(b, "parallelism", i, n, v, r->err)) != DTPLAN_OK)
			return ret;
		i++;
	}
	return ret;
}

enum dtplan_err dtplan__plan_stage_at(struct dtplan_candidate *b, const char *where, size_t i,
				      size_t n, long long v, struct dtplan_error *err)
{
	if (v < 1 || v > 1000000)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.layers_per_stage[%zu]: expected a whole number >= 1",
				     where, i);
	if (i == 0)
		b->stages.first = (int)v;
	else if (i + 1 == n)
		b->stages.last = (int)v;
	else if (i == 1)
		b->stages.middle = (int)v;
	else if (v != b->stages.middle)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.layers_per_stage[%zu]: the stages between the first and "
				     "the last hold equal layers",
				     where, i);
	return DTPLAN_OK;
}

enum dtplan_err dtplan__plan_read_split(struct dtplan_candidate *b, enum dtplan_schedule schedule,
					const char *where, struct dtplan_error *err)
{
	/* plans from before interleaving, EP and CP carry none */
	if (b->vp == 0)
		b->vp = 1;
	if (b->ep == 0)
		b->ep = 1;
	if (b->etp == 0)
		b->etp = b->tp;
	if (b->cp == 0)
		b->cp = 1;
	b->dualpipe = schedule == DTPLAN_SCHEDULE_DUALPIPE && b->pp > 1;
	return dtplan__split_check_read(&b->split, schedule, DTPLAN_ERR_PARSE, SRC, where, err);
}

/* The checks that need every member of "parallelism", then the members
 * that need pp. */
static enum dtplan_err finish_split(struct dtplan__rd *r, const struct split_read *s,
				    struct dtplan_candidate *b)
{
	enum dtplan_err ret;
	struct dtplan__rd sub;

	if (s->recompute_named) {
		enum dtplan_recompute rc;

		ret = dtplan_recompute_parse(s->recompute, &rc, r->err);
		if (ret != DTPLAN_OK)
			return ret;
		b->recompute = (int)rc;
	} else if (s->recompute_n < DTPLAN_RECOMPUTE_NONE ||
		   s->recompute_n > DTPLAN_RECOMPUTE_FULL) {
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.recompute: %d unknown", s->recompute_n);
	} else {
		b->recompute = s->recompute_n;
	}
	ret = dtplan__plan_read_split(b, s->schedule, "parallelism", r->err);
	if (ret != DTPLAN_OK)
		return ret;
	/* stage_imbalance only beside layers_per_stage, as plans carry it and
	 * dtplan show read it */
	if (!s->stages.found)
		return DTPLAN_OK;
	sub = dtplan__rd_at(r, s->stages);
	if ((ret = read_stages(&sub, b)) != DTPLAN_OK || !s->imbalance.found)
		return ret;
	sub = dtplan__rd_at(r, s->imbalance);
	return dtplan__rd_num_value(&sub, "parallelism", "stage_imbalance", &b->stage_imbalance);
}

enum dtplan_err dtplan__plan_read_parallelism(struct dtplan__rd *r, struct dtplan_candidate *b)
{
	static const char *const keys[S__N] = {
		[S_TP] = "tp",
		[S_PP] = "pp",
		[S_DP] = "dp",
		[S_ZERO] = "zero",
		[S_MICRO_BATCH] = "micro_batch",
		[S_NUM_MICROBATCHES] = "num_microbatches",
		[S_GLOBAL_BATCH] = "global_batch",
		[S_EP] = "ep",
		[S_CP] = "cp",
		[S_VP] = "vp",
		[S_ETP] = "etp",
		[S_RECOMPUTE] = "recompute",
		[S_OFFLOAD] = "offload",
		[S_SCHEDULE] = "schedule",
		[S_STAGES] = "layers_per_stage",
		[S_IMBALANCE] = "stage_imbalance",
	};
	int *const ints[S_ETP + 1] = {
		[S_TP] = &b->tp,
		[S_PP] = &b->pp,
		[S_DP] = &b->dp,
		[S_ZERO] = &b->zero,
		[S_MICRO_BATCH] = &b->micro_batch,
		[S_NUM_MICROBATCHES] = &b->num_microbatches,
		[S_GLOBAL_BATCH] = &b->global_batch,
		[S_EP] = &b->ep,
		[S_CP] = &b->cp,
		[S_VP] = &b->vp,
		[S_ETP] = &b->etp,
	};
	struct split_read s = {.recompute_n = b->recompute, .schedule = DTPLAN_SCHEDULE_1F1B};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	char key[32];
	int k;

	if (dtplan__rd_peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no \"parallelism\" object");
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		k = dtplan__rd_known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0)
			ret = read_split_member(r, k, key, ints, &s, b);
		else
			ret = dtplan__rd_skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	return finish_split(r, &s, b);
}

enum dtplan_err dtplan__plan_read_ckpt(struct dtplan__rd *r, struct dtplan_ckpt *c)
{
	static const char *const keys[] = {"interval_seconds", "interval_steps"};
	double *const vals[] = {&c->interval_seconds, &c->interval_steps};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, whole;
	unsigned seen = 0;
	long long i;
	char key[32];
	int k;

	if (dtplan__rd_peek(r) != '{')
		return dtplan__rd_skip_value(r);
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		k = dtplan__rd_known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && (dtplan__rd_peek(r) == '-' ||
			       (dtplan__rd_peek(r) >= '0' && dtplan__rd_peek(r) <= '9')))
			ret = dtplan__rd_number(r, vals[k], &whole, &i);
		else
			ret = dtplan__rd_skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	return ret;
}

/* Orders node indexes by name (qsort_r: arg is the plan's node_names). */
static int cmp_name(const void *a, const void *b, void *arg)
{
	const char(*names)[64] = arg;

	return strcmp(names[*(const int *)a], names[*(const int *)b]);
}

/* Index of name among the plan's nodes (order: indexes sorted by name), -1. */
static int find_node(const struct dtplan_plan *p, const int *order, const char *name)
{
	size_t lo = 0, hi = p->n_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, p->node_names[order[mid]]);

		if (c == 0)
			return order[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* One entry of placement.nodes: a name, or an object with "name". */
static enum dtplan_err read_node(struct dtplan__rd *r, size_t i, struct dtplan_plan *p)
{
	enum dtplan_err ret;
	bool first = true, more = true, named = false;
	size_t len = 0;
	char key[16];

	if (dtplan__rd_peek(r) == '"') {
		ret = dtplan__rd_string(r, p->node_names[i], sizeof(p->node_names[i]), &len);
		named = ret == DTPLAN_OK;
	} else if (dtplan__rd_peek(r) == '{') {
		ret = dtplan__rd_open_container(r, '{');
		while (ret == DTPLAN_OK &&
		       (ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) ==
			       DTPLAN_OK &&
		       more) {
			if (strcmp(key, "name") == 0 && !named && dtplan__rd_peek(r) == '"') {
				ret = dtplan__rd_string(r, p->node_names[i],
							sizeof(p->node_names[i]), &len);
				named = true;
			} else {
				ret = dtplan__rd_skip_value(r);
			}
		}
	} else {
		ret = DTPLAN_OK;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (!named || len == 0 || len >= sizeof(p->node_names[i]))
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.nodes[%zu]: expected a host name", i);
	p->node_leaf[i] = -1;
	return DTPLAN_OK;
}

static enum dtplan_err read_nodes(struct dtplan__rd *r, size_t count, struct dtplan_plan *p,
				  int **order)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0;

	p->node_names = calloc(count, sizeof(*p->node_names));
	p->node_leaf = calloc(count, sizeof(*p->node_leaf));
	*order = malloc(count * sizeof(**order));
	if (p->node_names == NULL || p->node_leaf == NULL || *order == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more &&
	       i < count) {
		if ((ret = read_node(r, i, p)) != DTPLAN_OK)
			return ret;
		(*order)[i] = (int)i;
		p->n_nodes = ++i;
	}
	if (ret != DTPLAN_OK)
		return ret;
	qsort_r(*order, p->n_nodes, sizeof(**order), cmp_name, p->node_names);
	for (i = 1; i < p->n_nodes; i++)
		if (strcmp(p->node_names[(*order)[i - 1]], p->node_names[(*order)[i]]) == 0)
			return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
					     "placement.nodes[%d]: host '%s' is named twice",
					     (*order)[i] > (*order)[i - 1] ? (*order)[i]
									   : (*order)[i - 1],
					     p->node_names[(*order)[i]]);
	return DTPLAN_OK;
}

static enum dtplan_err read_rank(struct dtplan__rd *r, size_t i, struct dtplan_plan *p,
				 const int *order)
{
	static const char *const keys[] = {"rank",    "gpu",     "local_rank", "tp_rank",
					   "pp_rank", "dp_rank", "domain",     "node",
					   "nic",     "cp_rank", "ep_rank",    "etp_rank",
					   "edp_rank"};
	struct dtplan_rank *rk = &p->ranks[i];
	int *const ints[] = {NULL,         &rk->gpu,     &rk->local_rank, &rk->tp_rank,
			     &rk->pp_rank, &rk->dp_rank, &rk->domain,     NULL,
			     NULL,         &rk->cp_rank, &rk->ep_rank,    &rk->etp_rank,
			     &rk->edp_rank};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true, whole;
	char where[48], key[16], name[64];
	unsigned seen = 0;
	long long idx;
	size_t len;
	double v;
	int k, rank = (int)i;

	snprintf(where, sizeof(where), "placement.ranks[%zu]", i);
	if (dtplan__rd_peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "%s: expected an object",
				     where);
	rk->domain = -1;
	rk->node = -1;
	rk->etp_rank = -1;
	rk->edp_rank = -1;
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		k = dtplan__rd_known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k == 0) {
			ret = dtplan__rd_int_value(r, where, key, &rank);
		} else if ((k >= 1 && k <= 6) || k >= 9) {
			ret = dtplan__rd_int_value(r, where, key, ints[k]);
		} else if (k == 7 && dtplan__rd_peek(r) == '"') {
			ret = dtplan__rd_string(r, name, sizeof(name), &len);
			if (ret == DTPLAN_OK && len < sizeof(name))
				rk->node = find_node(p, order, name);
		} else if (k == 7 && (dtplan__rd_peek(r) == '-' ||
				      (dtplan__rd_peek(r) >= '0' && dtplan__rd_peek(r) <= '9'))) {
			ret = dtplan__rd_number(r, &v, &whole, &idx);
			if (ret == DTPLAN_OK && whole && idx >= 0 && (size_t)idx < p->n_nodes)
				rk->node = (int)idx;
		} else if (k == 8 && dtplan__rd_peek(r) == '"') {
			ret = dtplan__rd_string(r, rk->nic, sizeof(rk->nic), NULL);
		} else {
			ret = dtplan__rd_skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (rank != (int)i)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "%s: rank %d out of order",
				     where, rank);
	if (rk->node < 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.node: not one of the plan's %zu nodes", where, p->n_nodes);
	/* written only where the experts' coordinates are not the
	 * attention's: ETP is TP, expert DP the CP x DP rank (EP 1) */
	if (rk->etp_rank < 0)
		rk->etp_rank = rk->tp_rank;
	if (rk->edp_rank < 0)
		rk->edp_rank = rk->dp_rank * (p->best.cp > 1 ? p->best.cp : 1) + rk->cp_rank;
	if (rk->local_rank < 0 || rk->gpu < 0 || rk->tp_rank < 0 || rk->pp_rank < 0 ||
	    rk->dp_rank < 0 || rk->cp_rank < 0 || rk->ep_rank < 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: ranks and GPU indexes must be >= 0", where);
	return DTPLAN_OK;
}

static enum dtplan_err read_ranks(struct dtplan__rd *r, size_t count, struct dtplan_plan *p,
				  const int *order)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0;

	p->ranks = calloc(count, sizeof(*p->ranks));
	if (p->ranks == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more &&
	       i < count) {
		if ((ret = read_rank(r, i, p, order)) != DTPLAN_OK)
			return ret;
		p->n_ranks = ++i;
	}
	return ret;
}

/* One entry of placement.leaves ({"name", "nodes", "oversubscription"});
 * *node counts the nodes of the leaves before it. */
static enum dtplan_err read_leaf(struct dtplan__rd *r, size_t i, struct dtplan_plan *p,
				 size_t *node)
{
	static const char *const keys[] = {"name", "nodes", "oversubscription"};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	char where[48], key[24];
	int k, nodes = 0;

	snprintf(where, sizeof(where), "placement.leaves[%zu]", i);
	p->leaf_ratio[i] = 1.0;
	if (dtplan__rd_peek(r) != '{')
		return dtplan__rd_syntax(r, "%s: expected an object", where);
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		k = dtplan__rd_known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k == 0)
			ret = dtplan__rd_str_value(r, where, key, p->leaf_names[i],
						   sizeof(p->leaf_names[i]));
		else if (k == 1)
			ret = dtplan__rd_int_value(r, where, key, &nodes);
		else if (k == 2)
			ret = dtplan__rd_num_value(r, where, key, &p->leaf_ratio[i]);
		else
			ret = dtplan__rd_skip_value(r);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (nodes < 1)
		return dtplan__rd_syntax(r, "%s.nodes: expected a whole number >= 1", where);
	if ((size_t)nodes > p->n_nodes - *node)
		return dtplan__rd_syntax(r,
					 "%s.nodes: the leaves hold more than the plan's %zu nodes",
					 where, p->n_nodes);
	p->leaf_nodes[i] = (size_t)nodes;
	for (int n = 0; n < nodes; n++)
		p->node_run[(*node)++] = (int)i;
	return DTPLAN_OK;
}

/* The leaves in rank order and each node's leaf (the whole plan only). */
static enum dtplan_err read_leaves(struct dtplan__rd *r, size_t count, struct dtplan_plan *p)
{
	enum dtplan_err ret;
	bool first = true, more = true;
	size_t i = 0, node = 0;

	if (count > p->n_nodes)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC,
				     dtplan__rd_line_at(r->s, r->pos),
				     "placement.leaves: %zu leaves for %zu nodes", count,
				     p->n_nodes);
	p->n_leaves_used = count;
	p->leaf_names = calloc(count, sizeof(*p->leaf_names));
	p->leaf_nodes = calloc(count, sizeof(*p->leaf_nodes));
	p->leaf_ratio = calloc(count, sizeof(*p->leaf_ratio));
	p->node_run = calloc(p->n_nodes, sizeof(*p->node_run));
	if (p->leaf_names == NULL || p->leaf_nodes == NULL || p->leaf_ratio == NULL ||
	    p->node_run == NULL)
		return dtplan__error(r->err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	if ((ret = dtplan__rd_open_container(r, '[')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_element(r, &first, &more)) == DTPLAN_OK && more && i < count)
		if ((ret = read_leaf(r, i++, p, &node)) != DTPLAN_OK)
			return ret;
	if (ret != DTPLAN_OK)
		return ret;
	if (node != p->n_nodes)
		return dtplan__rd_syntax(r, "placement.leaves hold %zu nodes, the plan %zu", node,
					 p->n_nodes);
	return DTPLAN_OK;
}

enum {
	P_NODES,
	P_RANKS,
	P_LEAVES, /* arrays, counted in the first pass */
	P_SLOWDOWN,
	P_ORDER,
	P_KIND,
	P_CROSSES,
	P_NEEDED,
	P__N
};

/* The placement's members the whole plan reads besides the arrays. */
static enum dtplan_err read_placement_rest(struct dtplan__rd *r, const struct dtplan__span *found,
					   struct dtplan_plan *p)
{
	static const char *const crosses[] = {"tp", "pp", "dp", "none"};
	char order[16] = "", kind[16] = "", cross[8] = "none";
	enum dtplan_err ret = DTPLAN_OK;
	int needed = (int)p->n_leaves_used;
	struct dtplan__rd sub;

	p->best.uplink_slowdown = 1.0;
	p->best.crosses_uplinks = "none";
	if (found[P_SLOWDOWN].found) {
		sub = dtplan__rd_at(r, found[P_SLOWDOWN]);
		ret = dtplan__rd_num_value(&sub, "placement", "uplink_slowdown",
					   &p->best.uplink_slowdown);
	}
	if (ret == DTPLAN_OK && found[P_ORDER].found) {
		sub = dtplan__rd_at(r, found[P_ORDER]);
		ret = dtplan__rd_str_value(&sub, "placement", "rank_order", order, sizeof(order));
	}
	if (ret == DTPLAN_OK && found[P_KIND].found) {
		sub = dtplan__rd_at(r, found[P_KIND]);
		ret = dtplan__rd_str_value(&sub, "placement", "leaf_kind", kind, sizeof(kind));
	}
	if (ret == DTPLAN_OK && found[P_CROSSES].found) {
		sub = dtplan__rd_at(r, found[P_CROSSES]);
		ret = dtplan__rd_str_value(&sub, "placement", "crosses_uplinks", cross,
					   sizeof(cross));
	}
	if (ret == DTPLAN_OK && found[P_NEEDED].found && p->n_leaves_used > 0) {
		sub = dtplan__rd_at(r, found[P_NEEDED]);
		ret = dtplan__rd_int_value(&sub, "placement", "leaves_needed", &needed);
	}
	if (ret != DTPLAN_OK)
		return ret;
	for (size_t k = 0; k < DTPLAN_ARRAY_SIZE(crosses); k++)
		if (strcmp(cross, crosses[k]) == 0)
			p->best.crosses_uplinks = crosses[k];
	p->best.rank_order = DTPLAN_ORDER_TP_DP_PP; /* absent: Megatron-LM's default */
	if (order[0] != '\0' && dtplan_rank_order_parse(order, &p->best.rank_order) != DTPLAN_OK)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement: rank_order '%s' is not a rank order (tp-dp-pp, "
				     "tp-cp-ep-dp-pp, tp-pp-dp, ..)",
				     order);
	p->blocks = strcmp(kind, "block") == 0;
	p->leaf_kind = p->blocks                    ? DTPLAN_LEAF_BLOCK
		       : strcmp(kind, "ring") == 0  ? DTPLAN_LEAF_RING
		       : strcmp(kind, "torus") == 0 ? DTPLAN_LEAF_TORUS
						    : DTPLAN_LEAF_SWITCH;
	if (p->n_leaves_used > 0)
		p->n_leaves_needed = needed > 0 ? (size_t)needed : 0;
	return DTPLAN_OK;
}

/*
 * placement: finds its members and counts "nodes", "ranks" and "leaves"
 * (first pass), checks the counts against the limits and the parallel
 * degrees, then reads them; the leaves and the rest only for the whole plan.
 */
enum dtplan_err dtplan__plan_read_placement(struct dtplan__rd *r, struct dtplan_plan *p, bool whole)
{
	static const char *const keys[P__N] = {
		[P_NODES] = "nodes",
		[P_RANKS] = "ranks",
		[P_LEAVES] = "leaves",
		[P_SLOWDOWN] = "uplink_slowdown",
		[P_ORDER] = "rank_order",
		[P_KIND] = "leaf_kind",
		[P_CROSSES] = "crosses_uplinks",
		[P_NEEDED] = "leaves_needed",
	};
	struct dtplan__span found[P__N];
	size_t count[3] = {0, 0, 0};
	enum dtplan_err ret, rv = DTPLAN_OK;
	bool first = true, more = true;
	unsigned seen = 0;
	int *order = NULL, k;
	char key[24];
	struct dtplan__rd sub;
	size_t want;

	memset(found, 0, sizeof(found));
	if (dtplan__rd_peek(r) != '{')
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"placement\" object: the plan places no ranks");
	if ((ret = dtplan__rd_open_container(r, '{')) != DTPLAN_OK)
		return ret;
	while ((ret = dtplan__rd_next_member(r, &first, key, sizeof(key), &more)) == DTPLAN_OK &&
	       more) {
		k = dtplan__rd_known_key(r, key, keys, DTPLAN_ARRAY_SIZE(keys), &seen, &rv);
		if (rv != DTPLAN_OK)
			return rv;
		if (k >= 0 && k <= P_LEAVES && dtplan__rd_peek(r) == '[') {
			found[k].found = true;
			found[k].pos = r->pos;
			ret = dtplan__rd_count_elements(r, &count[k]);
		} else {
			if (k > P_LEAVES) {
				found[k].found = true;
				found[k].pos = r->pos;
			}
			ret = dtplan__rd_skip_value(r);
		}
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (!found[P_NODES].found || count[P_NODES] == 0)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.nodes array");
	if (count[P_NODES] > DTPLAN_PLAN_MAX_NODES)
		return dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.nodes: %zu nodes, more than the %d dtplan plans "
				     "for",
				     count[P_NODES], DTPLAN_PLAN_MAX_NODES);
	sub = dtplan__rd_at(r, found[P_NODES]);
	ret = read_nodes(&sub, count[P_NODES], p, &order);
	if (ret != DTPLAN_OK)
		goto out;
	if (!found[P_RANKS].found || count[P_RANKS] == 0) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.ranks array");
		goto out;
	}
	/* Sizes before memory: the degrees are small integers, the product in
	 * 64 bits, and the ranks must be exactly that many. */
	want = (size_t)p->best.tp * (size_t)p->best.cp * (size_t)p->best.pp * (size_t)p->best.dp;
	if (count[P_RANKS] > DTPLAN_PLAN_MAX_RANKS) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "placement.ranks: %zu ranks, more than the %d dtplan plans for",
				    count[P_RANKS], DTPLAN_PLAN_MAX_RANKS);
		goto out;
	}
	if (want != count[P_RANKS]) {
		ret = dtplan__error(r->err, DTPLAN_ERR_PARSE, SRC, 0,
				    "%zu ranks but tp %d x cp %d x pp %d x dp %d", count[P_RANKS],
				    p->best.tp, p->best.cp, p->best.pp, p->best.dp);
		goto out;
	}
	sub = dtplan__rd_at(r, found[P_RANKS]);
	ret = read_ranks(&sub, count[P_RANKS], p, order);
	if (ret != DTPLAN_OK || !whole)
		goto out;
	if (found[P_LEAVES].found && count[P_LEAVES] > 0) {
		sub = dtplan__rd_at(r, found[P_LEAVES]);
		ret = read_leaves(&sub, count[P_LEAVES], p);
		if (ret != DTPLAN_OK)
			goto out;
	}
	ret = read_placement_rest(r, found, p);
out:
	free(order);
	return ret;
}
