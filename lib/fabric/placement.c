/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement.c: ranks -> GPUs -> nodes -> switches on a built fabric
 * (lib/fabric/fabric.c) under the chosen candidate's rank order.  The rules are in
 * doc/internals/placement.md.  Linear in GPUs.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "fabric/fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dtplan_err dtplan__placement_fill(struct dtplan_plan *p, const struct dtplan__fabric *f,
				       struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	enum dtplan_rank_order o;
	size_t g, tp, pp, dp, cp, ep, etp, edp;

	if (p == NULL || f == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or fabric");
	c = &p->best;
	o = c->rank_order;
	g = (size_t)f->gpus_per_node;
	tp = (size_t)c->tp;
	pp = (size_t)c->pp;
	dp = (size_t)c->dp;
	cp = c->cp > 1 ? (size_t)c->cp : 1;
	ep = c->ep > 1 ? (size_t)c->ep : 1;
	etp = c->etp > 0 ? (size_t)c->etp : tp;
	if (tp * cp * pp * dp != f->n_gpus)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "TP %zu x CP %zu x PP %zu x DP %zu is not the %zu GPUs placed",
				     tp, cp, pp, dp, f->n_gpus);
	if ((tp * cp * dp) % (etp * ep) != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ETP %zu x EP %zu does not divide TP x CP x DP %zu", etp, ep,
				     tp * cp * dp);
	edp = tp * cp * dp / (etp * ep);
	p->ranks = calloc(f->n_gpus, sizeof(*p->ranks));
	p->node_names = calloc(f->n_nodes, sizeof(*p->node_names));
	p->node_leaf = calloc(f->n_nodes, sizeof(*p->node_leaf));
	if (p->ranks == NULL || p->node_names == NULL || p->node_leaf == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	p->n_ranks = f->n_gpus;
	p->n_nodes = f->n_nodes;
	for (size_t i = 0; i < f->n_nodes; i++) {
		dtplan__strlcpy(p->node_names[i], f->host[i], sizeof(p->node_names[i]));
		p->node_leaf[i] = f->leaf[i];
	}
	for (size_t rank = 0; rank < f->n_gpus; rank++) {
		struct dtplan_rank *k = &p->ranks[rank];
		/* Megatron-LM's order: TP fastest, CP, then DP and PP in the
		 * plan's rank order.  Its expert groups come from a second
		 * generator over tp-ep-dp-pp without CP, its tp the expert
		 * TP (RankGenerator, megatron/core/parallel_state.py,
		 * d98e8a6): ETP fastest, then EP, then expert DP, over the
		 * same tp x cp x dp ranks of each stage (the tp-pp-dp
		 * order runs EP only without PP: the same groups) */
		size_t node = rank / g, l = rank % g, rest = rank / (tp * cp);
		const struct dtplan_node *inv = f->inv[node];
		int nic;

		k->node = (int)node;
		k->local_rank = (int)l;
		k->gpu = f->order[node * g + l];
		k->tp_rank = (int)(rank % tp);
		k->cp_rank = (int)(rank / tp % cp);
		if (o == DTPLAN_ORDER_TP_PP_DP) {
			k->pp_rank = (int)(rest % pp);
			k->dp_rank = (int)(rest / pp);
		} else {
			k->dp_rank = (int)(rest % dp);
			k->pp_rank = (int)(rest / dp);
		}
		k->etp_rank = (int)(rank % etp);
		k->ep_rank = (int)(rank / etp % ep);
		k->edp_rank = (int)(rank / (etp * ep) % edp);
		k->domain = f->gpu_domain[rank];
		nic = inv != NULL ? inv->gpus[k->gpu].nic : -1;
		if (nic >= 0 && nic < inv->n_nics)
			dtplan__strlcpy(k->nic, inv->nics[nic].name, sizeof(k->nic));
	}
	p->leaf_names = calloc(f->n_runs + 1, sizeof(*p->leaf_names));
	p->leaf_nodes = calloc(f->n_runs + 1, sizeof(*p->leaf_nodes));
	p->leaf_ratio = calloc(f->n_runs + 1, sizeof(*p->leaf_ratio));
	p->node_run = calloc(f->n_nodes, sizeof(*p->node_run));
	if (p->leaf_names == NULL || p->leaf_nodes == NULL || p->leaf_ratio == NULL ||
	    p->node_run == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	for (size_t k = 0; k < f->n_runs; k++) {
		const struct dtplan__run *run = &f->runs[k];

		dtplan__strlcpy(p->leaf_names[k], run->name, sizeof(p->leaf_names[k]));
		p->leaf_nodes[k] = run->n_nodes;
		p->leaf_ratio[k] = run->ratio;
		for (size_t i = run->first_node; i < run->first_node + run->n_nodes; i++)
			p->node_run[i] = (int)k;
	}
	p->n_leaves_used = f->n_runs;
	p->blocks = f->blocks;
	p->leaf_kind = f->leaf_kind;
	p->n_leaves_needed = f->n_leaves_needed;
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * --segment on topology/block (dtplan_segment_for(), lib/dtplan/plan.h)
 * ---------------------------------------------------------------------- */

/* Nodes of g GPUs that hold whole groups of b consecutive ranks. */
static size_t span_nodes(size_t b, size_t g)
{
	return b / dtplan__gcd(b, g); /* lcm(b, g) / g */
}

/* The largest s <= most that divides n and is a multiple of unit; 0: none. */
static size_t largest_segment(size_t n, size_t most, size_t unit)
{
	for (size_t s = (most < n ? most : n) / unit * unit; s >= unit && s > 0; s -= unit)
		if (n % s == 0)
			return s;
	return 0;
}

enum dtplan_err dtplan_segment_for(const struct dtplan_candidate *c, int gpus_per_node,
				   size_t nodes, size_t block_nodes, struct dtplan_segment *out,
				   struct dtplan_error *err)
{
	size_t g, tp, cp, pp, dp, ep, e, m, unit, s = 0;
	bool use_e, use_m, strided;
	char groups[256], *r;
	size_t size;
	int w;

	if (out == NULL || c == NULL || gpus_per_node < 1 || nodes < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "no candidate, nodes or GPUs per node for --segment");
	memset(out, 0, sizeof(*out));
	g = (size_t)gpus_per_node;
	tp = (size_t)c->tp;
	pp = (size_t)c->pp;
	dp = (size_t)c->dp;
	cp = c->cp > 1 ? (size_t)c->cp : 1;
	ep = c->ep > 1 ? (size_t)c->ep : 1;
	if (tp < 1 || pp < 1 || dp < 1 || tp * cp * pp * dp != nodes * g)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "TP %zu x CP %zu x PP %zu x DP %zu is not the %zu GPUs of %zu "
				     "nodes of %zu",
				     tp, cp, pp, dp, nodes * g, nodes, g);
	e = ep > 1 ? span_nodes(tp * ep, g) : 0;
	strided = c->rank_order != DTPLAN_ORDER_TP_PP_DP && pp > 1 && dp > 1;
	m = strided ? nodes : span_nodes(tp * cp * pp, g);
	out->expert_nodes = e;
	out->model_nodes = m;
	use_e = e > 1;
	use_m = m > 1 && m < nodes;

	/* the groups, for the reason */
	groups[0] = '\0';
	w = 0;
	if (ep > 1)
		w = snprintf(groups, sizeof(groups),
			     "an expert group (TP %zu x EP %zu, %zu GPUs) spans %zu node%s of %zu "
			     "GPUs; ",
			     tp, ep, tp * ep, e, e == 1 ? "" : "s", g);
	if (w >= 0 && (size_t)w < sizeof(groups)) {
		if (strided)
			snprintf(groups + w, sizeof(groups) - (size_t)w,
				 "a model-parallel group (TP %zu x CP %zu x PP %zu) has a member "
				 "in every stage, across the job's %zu nodes",
				 tp, cp, pp, nodes);
		else
			snprintf(groups + w, sizeof(groups) - (size_t)w,
				 "a model-parallel group (TP %zu x CP %zu x PP %zu, %zu GPU%s) "
				 "spans %zu node%s",
				 tp, cp, pp, tp * cp * pp, tp * cp * pp == 1 ? "" : "s", m,
				 m == 1 ? "" : "s");
	}
	r = out->reason;
	size = sizeof(out->reason);
	if (block_nodes == 0) {
		snprintf(r, size, "no --segment: the site has no blocks (topology/block); %s",
			 groups);
		return DTPLAN_OK;
	}
	if (!use_e && !use_m) {
		snprintf(r, size, "no --segment: no group to keep inside a block of %zu nodes (%s)",
			 block_nodes, groups);
		return DTPLAN_OK;
	}
	unit = use_e ? e : m;
	if (use_e && use_m)
		unit = e / dtplan__gcd(e, m) * m;
	s = largest_segment(nodes, block_nodes, unit);
	if (s > 0) {
		out->segment = s;
		snprintf(r, size,
			 "--segment=%zu: %s; %zu nodes hold whole %s groups, divide the job's "
			 "%zu and fit a block of %zu",
			 s, groups, s,
			 use_e && use_m ? "expert and model-parallel"
			 : use_e        ? "expert"
					: "model-parallel",
			 nodes, block_nodes);
		return DTPLAN_OK;
	}
	if (use_e && use_m) {
		s = largest_segment(nodes, block_nodes, e);
		if (s > 0) {
			out->segment = s;
			snprintf(r, size,
				 "--segment=%zu: %s; %zu nodes hold whole expert groups, divide "
				 "the job's %zu and fit a block of %zu (no multiple of %zu nodes "
				 "would keep the model-parallel groups whole too)",
				 s, groups, s, nodes, block_nodes, unit);
			return DTPLAN_OK;
		}
	}
	unit = use_e ? e : m;
	snprintf(r, size,
		 "no --segment: %s; no multiple of %zu nodes up to a block's %zu divides the "
		 "job's %zu",
		 groups, unit, block_nodes, nodes);
	return DTPLAN_OK;
}
