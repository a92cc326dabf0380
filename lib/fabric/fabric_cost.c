/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fabric_cost.c: what a (tp, pp, dp) split costs on a fabric under a rank
 * order: where each group kind runs and its effective bandwidth over the
 * uplinks it shares.  O(leaf runs) per split: the search calls
 * dtplan__fabric_eval() for every split it walks.
 */
#include "config.h"

#include "dtplan.h"
#include "fabric/fabric.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *dtplan_rank_order_name(enum dtplan_rank_order o)
{
	return o == DTPLAN_ORDER_TP_PP_DP ? "tp-pp-dp" : "tp-dp-pp";
}

/* Indexed by [order][cp > 1][ep > 1]; lib/fabric/placement.c lays ranks out so. */
static const char *const order_names[2][2][2] = {
	[DTPLAN_ORDER_TP_DP_PP] = {{"tp-dp-pp", "tp-ep-dp-pp"}, {"tp-cp-dp-pp", "tp-cp-ep-dp-pp"}},
	[DTPLAN_ORDER_TP_PP_DP] = {{"tp-pp-dp", "tp-pp-ep-dp"}, {"tp-cp-pp-dp", "tp-cp-pp-ep-dp"}},
};

const char *dtplan_candidate_rank_order(const struct dtplan_candidate *c)
{
	if (c == NULL)
		return order_names[DTPLAN_ORDER_TP_DP_PP][0][0];
	return order_names[c->rank_order == DTPLAN_ORDER_TP_PP_DP][c->cp > 1][c->ep > 1];
}

enum dtplan_err dtplan_rank_order_parse(const char *s, enum dtplan_rank_order *o)
{
	if (s == NULL || o == NULL)
		return DTPLAN_ERR_INVAL;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				if (strcmp(s, order_names[i][j][k]) == 0) {
					*o = (enum dtplan_rank_order)i;
					return DTPLAN_OK;
				}
	return DTPLAN_ERR_PARSE;
}

/* ------------------------------------------------------------------------
 * Costing a split
 * ---------------------------------------------------------------------- */

/*
 * Group kinds come in two shapes.  Blocked: consecutive blocks of `block`
 * GPUs each hold `inter` interleaved groups (members `inter` apart).
 * Strided: each group has one member in every block of `block` GPUs
 * (members `block` apart) and spans the whole job.  A ring (or a pipeline)
 * over members in position order leaves a leaf once per group that has
 * members both inside and outside the leaf: that is one flow per direction.
 */
double dtplan__run_flows(const struct dtplan__fabric *f, const struct dtplan__run *r, bool strided,
			 size_t block, size_t inter)
{
	size_t a = r->first_gpu, b = r->first_gpu + r->n_gpus, G = f->n_gpus;
	double flows = 0.0;

	if (r->n_gpus == 0 || (a == 0 && b >= G))
		return 0.0;
	if (strided) {
		size_t present = block < b - a ? block : b - a, contained = 0;

		/* group j (j < block) lies inside [a, b) when a <= j and j + G - block < b */
		if (b + block > G) {
			size_t hi = b + block - G < block ? b + block - G : block;

			contained = hi > a ? hi - a : 0;
		}
		return (double)(present - (contained < present ? contained : present));
	}
	for (int s = 0; s < (a / block == (b - 1) / block ? 1 : 2); s++) {
		size_t k = s == 0 ? a / block : (b - 1) / block;
		size_t lo = k * block, hi = lo + block, ov;

		if (hi > G)
			hi = G;
		if (lo >= a && hi <= b)
			continue; /* the whole block is inside the leaf */
		ov = (hi < b ? hi : b) - (lo > a ? lo : a);
		flows += (double)(ov < inter ? ov : inter);
	}
	return flows;
}

static void group_links(const struct dtplan__fabric *f, bool strided, size_t block, size_t inter,
			size_t members, double nvlink_bw, struct dtplan__group_links *gl)
{
	size_t g = (size_t)f->gpus_per_node;
	double worst = INFINITY;

	memset(gl, 0, sizeof(*gl));
	gl->bw = nvlink_bw;
	if (members <= 1)
		return;
	/* inside one NVLink domain: blocks that tile the domain segments, or
	 * the whole job in one segment */
	if (strided ? (f->n_segments == 1)
		    : (f->domain_gcd > 0 && (size_t)f->domain_gcd % block == 0))
		return;
	gl->net = f->n_gpus > g || f->n_segments > 1;
	if (!gl->net)
		return;
	gl->bw = f->net_bw;
	for (size_t k = 0; k < f->n_runs; k++) {
		const struct dtplan__run *r = &f->runs[k];
		double flows = dtplan__run_flows(f, r, strided, block, inter), per;

		if (flows <= 0.0)
			continue;
		per = r->uplink_bw / flows;
		if (!gl->crosses || per < worst) {
			worst = per;
			gl->worst_run = k;
			gl->worst_flows = flows;
		}
		gl->crosses = true;
		if (r->ratio > gl->max_ratio)
			gl->max_ratio = r->ratio;
	}
	if (gl->crosses && worst < gl->bw)
		gl->bw = worst;
}

void dtplan__fabric_eval(const struct dtplan__fabric *f, int tp, int pp, int dp,
			 enum dtplan_rank_order o, double nvlink_bw,
			 struct dtplan__fabric_eval *out)
{
	size_t t = (size_t)tp, p = (size_t)pp, d = (size_t)dp;

	group_links(f, false, t, 1, t, nvlink_bw, &out->tp);
	if (o == DTPLAN_ORDER_TP_PP_DP) {
		group_links(f, false, t * p, t, p, nvlink_bw, &out->pp);
		group_links(f, true, t * p, 0, d, nvlink_bw, &out->dp);
	} else {
		group_links(f, false, t * d, t, d, nvlink_bw, &out->dp);
		group_links(f, true, t * d, 0, p, nvlink_bw, &out->pp);
	}
}
