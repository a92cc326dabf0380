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
