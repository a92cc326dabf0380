/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * predict.c: the predicted step of one candidate.  The formulas are derived
 * in doc/internals/cost-model.md; keep the two in step.  The kernels' times
 * come from lib/cost/compute.c, the collectives' from lib/cost/comm.c and,
 * on a fabric, the links from lib/fabric/fabric_cost.c.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "fabric/fabric.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan/search_int.h"

#include <math.h>
#include <string.h>

/*
 * Members of one DP group on each node when the group leaves the node: its
 * ranks are `stride` apart (tp under rank order tp, dp, pp; tp x pp under
 * tp, pp, dp), so a node of g GPUs holds g / stride of them, each with its
 * own NIC (rail).  NCCL's rings and trees run one channel per rail, so the
 * collective moves at that many NICs' bandwidth (doc/internals/cost-model.md).
 */
static double dp_rails(int gpus_per_node, long stride, int dp)
{
	long k;

	if (stride < 1 || stride >= gpus_per_node || gpus_per_node % stride != 0)
		return 1.0;
	k = gpus_per_node / stride;
	return (double)(k < dp ? k : dp);
}

/* The experts' tensor-parallel degree (0 in a candidate not normalised: TP's). */
static int etp(const struct dtplan_candidate *c)
{
	return c->etp > 0 ? c->etp : c->tp;
}

/* Bandwidth and latency of the links a group of `span` consecutive ranks uses. */
static void group_link(const struct ctx *x, int span, bool *net, double *bw, double *lat)
{
	const struct dtplan_request *r = x->req;

	/* A group stays inside a node when the job does, or when its span
	 * divides the node (groups never straddle a node boundary then). */
	*net = r->gpus > r->gpus_per_node &&
	       (span > r->gpus_per_node || r->gpus_per_node % span != 0);
	*bw = *net ? r->net_bytes_per_s : x->nvlink_bw;
	*lat = *net ? r->net_latency_s : r->nvlink_latency_s;
}

/* Links without a fabric: rank order tp, dp, pp on uniform nodes. */
void dtplan__flat_links(const struct ctx *x, const struct dtplan_candidate *c, struct links *l)
{
	const struct dtplan_request *r = x->req;
	bool in_domain = c->tp <= r->gpu.domain_size && r->gpus_per_node % c->tp == 0;
	int tc = c->tp * c->cp;

	l->tp_net = !in_domain;
	l->tp_bw = in_domain ? x->nvlink_bw : r->net_bytes_per_s;
	l->tp_lat = in_domain ? r->nvlink_latency_s : r->net_latency_s;
	group_link(x, tc * c->dp * c->pp, &l->pp_net, &l->pp_bw, &l->pp_lat);
	group_link(x, tc * c->dp, &l->dp_net, &l->dp_bw, &l->dp_lat);
	group_link(x, tc, &l->cp_net, &l->cp_bw, &l->cp_lat);
	/* Megatron-Core's expert groups: ep ranks etp apart, folded over
	 * TP x CP x DP */
	group_link(x, etp(c) * c->ep, &l->ep_net, &l->ep_bw, &l->ep_lat);
	l->dp_rails = l->dp_net ? dp_rails(r->gpus_per_node, tc, c->dp) : 1.0;
	if (l->dp_net)
		l->dp_bw = fmin(l->dp_bw * l->dp_rails, x->nvlink_bw);
	/* an all-to-all leaving the node runs over every rail of its members */
	if (l->ep_net)
		l->ep_bw = fmin(l->ep_bw * dp_rails(r->gpus_per_node, etp(c), c->ep), x->nvlink_bw);
	l->ep_where = l->ep_net ? "network" : "nvlink";
	l->ep_ratio = 1.0;
}

/*
 * Links on a fabric under one rank order; nonblocking: as if every uplink
 * carried the full NIC bandwidth of its leaf (the reference for
 * uplink_slowdown).
 */
void dtplan__fabric_links(const struct ctx *x, const struct split *sp,
			  const struct dtplan_candidate *c, enum dtplan_rank_order o,
			  bool nonblocking, struct links *l)
{
	const struct dtplan__fabric_eval *ev = &sp->ev[o], *ep_ev = &sp->ep_ev[o];
	bool sp_tp_on_nvlink = sp->tp_on_nvlink;
	const struct dtplan_request *r = x->req;
	const struct dtplan__group_links *g[3] = {&ev->tp, &ev->pp, &ev->dp};
	bool *net[3] = {&l->tp_net, &l->pp_net, &l->dp_net};
	double *bw[3] = {&l->tp_bw, &l->pp_bw, &l->dp_bw};
	double *lat[3] = {&l->tp_lat, &l->pp_lat, &l->dp_lat};

	for (int i = 0; i < 3; i++) {
		*net[i] = g[i]->net;
		*bw[i] = !g[i]->net ? x->nvlink_bw : nonblocking ? r->net_bytes_per_s : g[i]->bw;
		*lat[i] = g[i]->net ? r->net_latency_s : r->nvlink_latency_s;
	}
	l->dp_rails = l->dp_net ? dp_rails(r->gpus_per_node,
					   o == DTPLAN_ORDER_TP_DP_PP ? (long)c->tp * c->cp
								      : (long)c->tp * c->cp * c->pp,
					   c->dp)
				: 1.0;
	/* with CP, ev's TP is the tp x cp block: CP's ring runs there, TP
	 * stays on NVLink when it fits a domain alone */
	l->cp_net = l->tp_net;
	l->cp_bw = l->tp_bw;
	l->cp_lat = l->tp_lat;
	if (c->cp > 1 && sp_tp_on_nvlink) {
		l->tp_net = false;
		l->tp_bw = x->nvlink_bw;
		l->tp_lat = r->nvlink_latency_s;
	}
	{
		const struct dtplan__group_links *e = &ep_ev->dp;
		/* ep ranks etp apart in both orders (with EP, tp-pp-dp runs
		 * only without PP) */
		double rails = dp_rails(r->gpus_per_node, etp(c), c->ep);

		l->ep_net = e->net;
		l->ep_lat = e->net ? r->net_latency_s : r->nvlink_latency_s;
		l->ep_bw = !e->net ? x->nvlink_bw : nonblocking ? r->net_bytes_per_s : e->bw;
		if (e->net && rails > 1.0) {
			double ebw = r->net_bytes_per_s * rails;

			if (!nonblocking && e->crosses)
				ebw = fmin(ebw,
					   x->fab->runs[e->worst_run].uplink_bw / e->worst_flows);
			l->ep_bw = fmin(ebw, x->nvlink_bw);
		}
		/* without a topology the groups that leave their NVLink
		 * domain cross "the network", not a leaf switch dtplan knows */
		l->ep_where = !e->net        ? "nvlink"
			      : e->crosses   ? "uplink"
			      : x->fab->flat ? "network"
					     : "leaf";
		l->ep_ratio = e->crosses && e->max_ratio > 1.0 ? e->max_ratio : 1.0;
	}
	/* the rails add up to the uplink's share of each group that crosses it */
	if (l->dp_net && l->dp_rails > 1.0) {
		double rails = r->net_bytes_per_s * l->dp_rails;

		if (!nonblocking && ev->dp.crosses)
			rails = fmin(rails,
				     x->fab->runs[ev->dp.worst_run].uplink_bw / ev->dp.worst_flows);
		l->dp_bw = fmin(rails, x->nvlink_bw);
	}
}

/* The share of hidden communication still charged (DTPLAN__OVERLAP_TAX, or
 * the request's calibration). */
static double overlap_tax(const struct ctx *x)
{
	return x->req->model_fit.set ? x->req->model_fit.overlap_tax : DTPLAN__OVERLAP_TAX;
}

/* The same for ZeRO-3's (DTPLAN__ZERO3_OVERLAP_TAX). */
static double zero3_overlap_tax(const struct ctx *x)
{
	return x->req->model_fit.set ? x->req->model_fit.zero3_overlap_tax
				     : DTPLAN__ZERO3_OVERLAP_TAX;
}

/*
 * The step's collectives do not run NVLS yet (lib/cost/comm.c models it,
 * the GPU catalog says which parts have it): given the GPU's nvls on the
 * paths that stay on NVLink, tests/calibrate.py fits gemm.hopper 0.856
 * instead of 0.882 and its scaling series fall to 60% within 5 points, under
 * the 86% it requires (doc/internals/cost-model.md, "Collectives at scale").
 */
#define DTPLAN__STEP_NVLS DTPLAN_NVLS_NONE

/* dtplan__nccl_seconds(), through the search's memo when it has one (the
 * candidates of a split differ in what does not change their collectives). */
static double nccl_time(const struct ctx *x, enum dtplan_coll coll, double bytes, int n,
			const struct dtplan__nccl_path *path)
{
	struct comm_time *e;
	double t;

	if (x->memo == NULL)
		return dtplan__nccl_seconds(coll, bytes, n, path, NULL, NULL);
	e = &x->memo->comm[((unsigned)coll * 5u + (unsigned)n * 3u + (unsigned)path->nodes) & 15u];
	if (e->set && e->coll == (int)coll && e->n == n && e->nodes == path->nodes &&
	    e->nvls == path->nvls && e->bytes == bytes && e->bw == path->bw &&
	    e->intra_lat == path->intra_lat && e->inter_lat == path->inter_lat)
		return e->seconds;
	t = dtplan__nccl_seconds(coll, bytes, n, path, NULL, NULL);
	*e = (struct comm_time){true,
				(int)coll,
				n,
				path->nodes,
				path->nvls,
				bytes,
				path->bw,
				path->intra_lat,
				path->inter_lat,
				t};
	return t;
}

/* Bytes one rank sends per step in its DP/ZeRO collectives (see dtplan__predict()). */
static double dp_traffic(const struct dtplan_candidate *c, enum dtplan_framework f,
			 double grad_bytes)
{
	/* the reduce-scatters: every micro-batch's, or once per step */
	double m = c->num_microbatches,
	       mr = dtplan__grads_reduced_once(f, c->zero, c->pp) ? 1.0 : m;
	int n = c->dp * c->cp;
	double rs = dtplan_comm_bytes_per_rank(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING,
					       grad_bytes, n);
	double ag =
		dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING, grad_bytes, n);

	if (n <= 1)
		return 0.0;
	switch (c->zero) {
	case 0:
		return dtplan_comm_bytes_per_rank(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING,
						  grad_bytes, n);
	case 1:
		return rs + ag;
	case 2:
		return mr * rs + ag;
	default:
		return mr * rs + 2.0 * m * ag;
	}
}

/*
 * The kernels of one micro-batch on the slowest stage: its forward and the
 * rest (backward and recomputation), in seconds; *flops the FLOPs the whole
 * job executes per micro-batch of each pipeline.
 */
static void microbatch_seconds(const struct ctx *x, const struct dtplan_candidate *c, double *fwd,
			       double *rest, double *flops, double *attn_fwd)
{
	const struct dtplan_request *r = x->req;
	struct dtplan__layer_time lt, mo, hd;
	double layers = r->model.layers - x->n_moe, moe = x->n_moe;
	double share = c->stage_imbalance / c->pp;
	struct kernel_time *kt = NULL;

	if (x->memo != NULL && c->micro_batch > 0 &&
	    (unsigned)c->recompute <= DTPLAN_RECOMPUTE_FULL) {
		kt = &x->memo->t[__builtin_ctz((unsigned)c->micro_batch)][c->recompute];
		if (kt->split == x->memo->split && kt->b == c->micro_batch) {
			*fwd = kt->fwd;
			*rest = kt->rest;
			*flops = kt->flops;
			*attn_fwd = kt->attn_fwd;
			return;
		}
	}
	dtplan__layer_seconds_ex(&x->k, &r->model, r->seq, c->micro_batch, c->tp, c->cp, false, 0,
				 c->recompute, &lt);
	memset(&mo, 0, sizeof(mo));
	if (moe > 0)
		dtplan__layer_seconds_ex(&x->k, &r->model, r->seq, c->micro_batch, c->tp, c->cp,
					 true, c->etp, c->recompute, &mo);
	dtplan__head_seconds(&x->k, &r->model, r->seq / c->cp, c->micro_batch, c->tp, &hd);
	*fwd = (layers * lt.fwd + moe * mo.fwd + hd.fwd) * share;
	*rest = (layers * (lt.bwd + lt.recompute) + moe * (mo.bwd + mo.recompute) + hd.bwd) * share;
	*flops = (layers * lt.flops + moe * mo.flops + hd.flops) * c->tp * c->cp;
	*attn_fwd = lt.attn_fwd;
	if (kt != NULL)
		*kt = (struct kernel_time){x->memo->split, c->micro_batch, *fwd,
					   *rest,          *flops,         *attn_fwd};
}

/*
 * What the parts of one candidate's step share, set once by
 * dtplan__predict() and read by each part; net_bytes is the sum the parts
 * add their network bytes to, in the order dtplan__predict() calls them.
 */
struct step_in {
	double m;              /* micro-batches per step */
	double sl;             /* a CP rank's share of each sequence */
	double act;            /* bf16 activation of one micro-batch: 2 sl b h */
	double share;          /* the slowest stage's share of the model: imbalance / pp */
	double fwd_mb, bwd_mb; /* one micro-batch's forward and the rest (microbatch_seconds()) */
	double attn_fwd;       /* one layer's attention forward */
	double net_bytes;      /* network bytes per GPU per step so far */
};

/* Compute: m micro-batches of the slowest stage's kernels, which set the
 * pace of every stage (doc/internals/cost-model.md). */
static void compute_part(const struct ctx *x, struct dtplan_candidate *c, struct step_in *p)
{
	double mb_flops;

	microbatch_seconds(x, c, &p->fwd_mb, &p->bwd_mb, &mb_flops, &p->attn_fwd);
	c->step.compute = p->m * (p->fwd_mb + p->bwd_mb);
	c->flops_per_step = mb_flops * c->dp * p->m;
}

/*
 * EP: each MoE layer dispatches its tokens' top_k copies to their experts
 * and combines the results, forward and backward (twice more when full
 * recomputation reruns the forward): all-to-alls of the busiest rank's
 * s b k / (cp tp) tokens of 2h bytes, (ep - 1)/ep of them leaving the rank
 * (doc/internals/cost-model.md, "Experts"); then the share that hides
 * behind compute.  Returns the bytes over the network (0 inside a node).
 */
static double ep_part(const struct ctx *x, const struct links *l, struct dtplan_candidate *c,
		      struct step_in *p)
{
	const struct dtplan_request *r = x->req;
	struct dtplan_step *st = &c->step;
	double h = r->model.hidden, b = c->micro_batch, m = p->m, share = p->share, t;
	double ep_net = 0.0;

	c->ep_bytes = 0.0;
	if (c->ep > 1 && x->n_moe > 0) {
		double bytes =
			p->sl * b * r->model.top_k * DTPLAN_MOE_CAPACITY_FACTOR * 2.0 * h / c->tp;
		double n_a2a =
			(c->recompute == DTPLAN_RECOMPUTE_FULL ? 6.0 : 4.0) * x->n_moe * share;
		double off = bytes * (c->ep - 1.0) / c->ep;

		t = off / l->ep_bw + (c->ep - 1.0) * l->ep_lat;
		st->ep_comm = n_a2a * m * t;
		c->ep_bytes = n_a2a / share / c->pp * m * off;
		if (l->ep_net) {
			ep_net = c->ep_bytes;
			p->net_bytes += ep_net;
		}
	}
	c->ep_links = c->ep > 1 ? l->ep_where : "none";
	c->ep_uplink_ratio = c->ep > 1 ? l->ep_ratio : 1.0;

	/* EP overlap: once forwards and backwards alternate, one micro-batch's
	 * dispatch and combine run beside another's kernels (Megatron-LM's
	 * combined 1F1B schedule, --overlap-moe-expert-parallel-comm: the
	 * forward of micro-batch i + 1 with the backward of i; DeepSeek-V3's
	 * DualPipe, arXiv 2412.19437 section 3.2.1).  Under 1F1B the first
	 * stage runs p forwards before its first backward and the last p
	 * backwards after its last forward: m - p of its m forward-backward
	 * pairs co-run, so that share of the all-to-all hides, at most behind
	 * as much compute, and pays DTPLAN__OVERLAP_TAX like every overlap. */
	if (st->ep_comm > 0.0 && (m > c->pp || c->dualpipe)) {
		/* DualPipe pairs a forward and a backward chunk of the two
		 * directions from its first step: all of them co-run */
		double hidden =
			fmin(st->ep_comm, st->compute) * (c->dualpipe ? 1.0 : (m - c->pp) / m);

		st->ep_comm -= (1.0 - overlap_tax(x)) * hidden;
	}
	return ep_net;
}

/*
 * CP: ring attention passes each rank's K and V blocks (bf16, kv heads, or
 * latent attention's expanded keys and values) around the ring, cp - 1
 * steps per layer forward and twice the bytes backward (K, V and their
 * gradients), each step hidden behind the attention of the block it holds
 * (Liu et al., Ring Attention, arXiv 2310.01889; Megatron-LM's context
 * parallelism).
 */
static void cp_part(const struct ctx *x, const struct links *l, struct dtplan_candidate *c,
		    struct step_in *p)
{
	const struct dtplan_request *r = x->req;
	const struct dtplan_model *md = &r->model;
	double h = r->model.hidden, b = c->micro_batch, m = p->m;

	if (c->cp <= 1)
		return;
	double kv_w =
		md->kv_lora_rank > 0
			? md->heads * ((double)md->qk_nope_dim + md->qk_rope_dim + md->v_head_dim)
			: 2.0 * x->kv_heads * ((double)h / md->heads);
	double blk = 2.0 * p->sl * b * kv_w / c->tp, step_attn = p->attn_fwd / (c->cp - 1.0);
	double step =
		dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, blk, 2, l->cp_bw, l->cp_lat);
	double step_b = dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 2.0 * blk, 2,
					    l->cp_bw, l->cp_lat);
	double per_layer =
		(c->cp - 1.0) * (fmax(0.0, step - step_attn) + fmax(0.0, step_b - 2.5 * step_attn));

	per_layer += overlap_tax(x) * (c->cp - 1.0) *
		     (fmin(step, step_attn) + fmin(step_b, 2.5 * step_attn));
	c->step.cp_comm = per_layer * r->model.layers * p->share * m *
			  (c->recompute == DTPLAN_RECOMPUTE_FULL ? 4.0 / 3.0 : 1.0);
	if (l->cp_net)
		p->net_bytes += (c->cp - 1.0) * 3.0 * blk * r->model.layers / c->pp * m;
}

/* TP: 4 all-reduces of 2sbh bytes per layer per micro-batch (2 forward,
 * 2 backward), 2 more when full recomputation reruns the forward; as NCCL
 * runs them (a group that leaves its node spans tp / node's GPUs).  Half
 * of them are the MLP's: an MoE layer's run over its ETP group instead
 * when ETP is not TP (the all-gather and reduce-scatter around the
 * experts, Megatron-Core's MoE parallel folding), on the links of etp
 * consecutive ranks. */
static void tp_part(const struct ctx *x, const struct links *l, struct dtplan_candidate *c,
		    const struct step_in *p)
{
	const struct dtplan_request *r = x->req;
	double per = c->recompute == DTPLAN_RECOMPUTE_FULL ? 6.0 : 4.0;
	double layers = r->model.layers, moe = etp(c) != c->tp ? x->n_moe : 0.0, t;
	int nodes = l->tp_net && c->tp > r->gpus_per_node ? c->tp / r->gpus_per_node : 1;
	struct dtplan__nccl_path path = {l->tp_bw, nodes > 1 ? r->nvlink_latency_s : l->tp_lat,
					 l->tp_lat, nodes, DTPLAN__STEP_NVLS};

	c->step.tp_comm = 0.0;
	if (c->tp > 1) {
		t = nccl_time(x, DTPLAN_COLL_ALLREDUCE, p->act, c->tp, &path);
		c->step.tp_comm = per * (layers - 0.5 * moe) / c->pp * p->m * t;
	}
	if (moe > 0.0 && etp(c) > 1) {
		bool net;
		double bw, lat;
		int en;

		group_link(x, etp(c), &net, &bw, &lat);
		if (etp(c) <= c->tp) {
			bw = l->tp_bw;
			lat = l->tp_lat;
			net = l->tp_net;
		}
		en = net && etp(c) > r->gpus_per_node ? etp(c) / r->gpus_per_node : 1;
		path = (struct dtplan__nccl_path){bw, en > 1 ? r->nvlink_latency_s : lat, lat, en,
						  DTPLAN__STEP_NVLS};
		t = nccl_time(x, DTPLAN_COLL_ALLREDUCE, p->act, etp(c), &path);
		c->step.tp_comm += 0.5 * per * moe / c->pp * p->m * t;
	}
}

/*
 * Pipeline: 1F1B idles (p-1)/m of the busy time, interleaving v chunks
 * (p-1)/(v m); warm-up and cool-down expose 2(p-1) transfers of 2sbh/tp
 * bytes, the rest overlap.  DualPipe idles (p/2 - 1)(F&B + B - 3W) (arXiv
 * 2412.19437, Table 2): with the overlapped pair F&B as long as F + B and
 * the weight gradients W half of B, (p/2 - 1)(F + B/2) of the m (F + B)
 * busy time.  After compute and TP, which the bubble is a share of.
 * Returns the bytes over the network (0 inside a node).
 */
static double pipeline_part(const struct links *l, struct dtplan_candidate *c, struct step_in *p)
{
	struct dtplan_step *st = &c->step;
	double m = p->m, act = p->act, fwd_mb = p->fwd_mb, bwd_mb = p->bwd_mb, t, pp_net = 0.0;

	/* each boundary carries 2sbh/tp each way per micro-batch and chunk */
	c->pp_bytes = c->pp > 1 ? (c->vp > 1 ? c->vp : 1) * m * act / c->tp : 0.0;
	if (c->pp <= 1)
		return 0.0;
	double ratio =
		c->dualpipe ? (c->pp / 2 - 1.0) * (fwd_mb + 0.5 * bwd_mb) / (m * (fwd_mb + bwd_mb))
			    : dtplan_bubble_ratio_interleaved(c->pp, c->num_microbatches,
							      c->vp > 1 ? c->vp : 1);

	st->bubble = ratio > 0.0 ? (st->compute + st->tp_comm) * ratio : 0.0;
	t = dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, act / c->tp, 2, l->pp_bw,
				l->pp_lat);
	st->pp_comm = 2.0 * (c->pp - 1) * t;
	if (l->pp_net)
		/* a micro-batch crosses v p - 1 boundaries each way */
		pp_net = 2.0 * ((double)(c->vp > 1 ? c->vp : 1) * c->pp - 1.0) / c->pp * m * act /
			 c->tp;
	p->net_bytes += pp_net;
	return pp_net;
}

/*
 * DP/ZeRO (doc/internals/cost-model.md, "DP buckets"): ZeRO-0 all-reduces
 * and ZeRO-1 reduce-scatters + all-gathers the accumulated gradients once
 * per step, during the last micro-batch's backward.  ZeRO-2/3 keep
 * gradients sharded, so every micro-batch's backward reduce-scatters
 * (under torchtitan's pipeline only the last's: dtplan__grads_reduced_once());
 * ZeRO-2 all-gathers the updated weights once, ZeRO-3 gathers them before
 * every forward and backward instead.  Each runs in the framework's buckets
 * (dtplan__dp_buckets()), one NCCL collective each, one after another as
 * the backward readies them or ahead of the compute that uses them: what
 * sticks out is dtplan__bucket_tail().  A group that leaves the node runs
 * over as many NICs as it has members on each node.
 */
static void dp_part(const struct ctx *x, const struct links *l, struct dtplan_candidate *c,
		    struct step_in *p)
{
	const struct dtplan_request *r = x->req;
	struct dtplan_step *st = &c->step;
	double wire = dtplan__grad_wire_bytes(r->framework);
	double grad_bytes = wire * c->memory.params_per_gpu, m = p->m;
	double fwd_mb = p->fwd_mb, bwd_mb = p->bwd_mb;
	/* the dense gradients over dp x cp ranks, the experts' over the expert
	 * data-parallel group of tp x cp x dp / (etp x ep) */
	double rs, ag, rs_b, ag_b, ag_exposed, hidden, ge = wire * c->memory.expert_params_per_gpu,
						       gd = grad_bytes - ge;
	int n = c->dp * c->cp, ne = n * c->tp / (etp(c) * c->ep);
	/* the group's nodes: its members on each node share them */
	int nodes = l->dp_net ? (int)fmax(1.0, floor(c->dp / l->dp_rails)) : 1;
	struct dtplan__nccl_path pd = {l->dp_bw, r->nvlink_latency_s, l->dp_lat,
				       nodes < n ? nodes : n, DTPLAN__STEP_NVLS};
	struct dtplan__nccl_path pe = pd;
	struct dtplan__buckets bk;

	double mr = dtplan__grads_reduced_once(r->framework, c->zero, c->pp) ? 1.0 : m;

	pe.nodes = pe.nodes < ne ? pe.nodes : ne > 0 ? ne : 1;
	c->dp_bytes = dp_traffic(c, r->framework, grad_bytes);
	if (n <= 1 && ne <= 1)
		return;
	dtplan__dp_buckets(r->framework, c->zero, c->memory.params_per_gpu, n,
			   r->model.layers * p->share, &bk);
	/* one bucket's collectives, the dense and the experts' share */
#define BUCKET(coll, nb)                                                                           \
	(nccl_time(x, coll, gd / (nb), n, &pd) +                                                   \
	 (ge > 0.0 ? nccl_time(x, coll, ge / (nb), ne, &pe) : 0.0))
	if (c->zero == 0) {
		double ar_b = BUCKET(DTPLAN_COLL_ALLREDUCE, bk.reduce);

		st->dp_comm = bk.reduce * ar_b;
		st->dp_exposed = dtplan__bucket_tail(ar_b, bk.reduce, bwd_mb);
		goto taxed;
	}
	rs_b = BUCKET(DTPLAN_COLL_REDUCESCATTER, bk.reduce);
	ag_b = BUCKET(DTPLAN_COLL_ALLGATHER, bk.gather);
	rs = bk.reduce * rs_b;
	ag = bk.gather * ag_b;
	/* ZeRO-1/2's gathers of the updated weights: in DeepSpeed's step,
	 * else ahead of the next step's first forward */
	ag_exposed = bk.gather_after_step ? ag : dtplan__bucket_tail(ag_b, bk.gather, fwd_mb);
	switch (c->zero) {
	case 1:
		st->dp_comm = rs + ag;
		st->dp_exposed = dtplan__bucket_tail(rs_b, bk.reduce, bwd_mb) + ag_exposed;
		break;
	case 2: {
		/* an earlier micro-batch's tail runs on into the next forward */
		double tail = dtplan__bucket_tail(rs_b, bk.reduce, bwd_mb);

		st->dp_comm = mr * rs + ag;
		st->dp_exposed = (mr - 1.0) * fmax(0.0, tail - fwd_mb) + tail + ag_exposed;
		break;
	}
	default: {
		/* the backward gathers again and reduces: both in the finer
		 * buckets, one stream */
		double nb = fmax(bk.gather, bk.reduce), both = (ag + rs) / nb;

		st->dp_comm = mr * rs + 2.0 * m * ag;
		st->dp_exposed = m * dtplan__bucket_tail(ag_b, bk.gather, fwd_mb) +
				 (m - mr) * dtplan__bucket_tail(ag_b, bk.gather, bwd_mb) +
				 mr * dtplan__bucket_tail(both, nb, bwd_mb);
		break;
	}
	}
#undef BUCKET
taxed:
	/* Overlap is not free: NCCL's channels take SMs and HBM bandwidth from
	 * the kernels they hide behind (and hold their SMs while they wait on
	 * a hop). */
	hidden = fmax(0.0, st->dp_comm - st->dp_exposed);
	st->dp_exposed += (c->zero >= 3 ? zero3_overlap_tax(x) : overlap_tax(x)) * hidden;
	if (l->dp_net)
		p->net_bytes += c->dp_bytes / l->dp_rails;
}

/* The optimizer step over the parameters whose state this GPU holds. */
static void optimizer_part(const struct ctx *x, struct dtplan_candidate *c)
{
	double held = c->zero >= 1 ? (c->memory.params_per_gpu - c->memory.expert_params_per_gpu) /
						     ((double)c->dp * c->cp) +
					     c->memory.expert_params_per_gpu * c->ep * etp(c) /
						     ((double)c->dp * c->cp * c->tp)
				   : c->memory.params_per_gpu;

	c->step.optimizer = dtplan__optimizer_seconds(&x->k, held, x->grad_bytes, c->offload);
}

void dtplan__predict(const struct ctx *x, const struct links *l, struct dtplan_candidate *c)
{
	const struct dtplan_request *r = x->req;
	struct dtplan_step *st = &c->step;
	double s = r->seq, h = r->model.hidden, b = c->micro_batch;
	double gpus = r->gpus, tokens = (double)c->global_batch * s, pp_net, ep_net;
	struct step_in p;

	memset(st, 0, sizeof(*st));
	p.m = c->num_microbatches;
	p.sl = s / c->cp;
	p.act = 2.0 * p.sl * b * h;
	p.share = c->stage_imbalance / c->pp;
	p.net_bytes = 0.0;
	/* in this order: the EP overlap needs the compute, the bubble the
	 * compute and TP, and the parts add to the network bytes in turn */
	compute_part(x, c, &p);
	ep_net = ep_part(x, l, c, &p);
	cp_part(x, l, c, &p);
	tp_part(x, l, c, &p);
	pp_net = pipeline_part(l, c, &p);
	dp_part(x, l, c, &p);
	optimizer_part(x, c);

	st->total = st->compute + st->tp_comm + st->bubble + st->pp_comm + st->dp_exposed +
		    st->optimizer + st->ep_comm + st->cp_comm;
	dtplan__straggle(r, c);
	c->net_bytes_per_gpu = p.net_bytes;
	/* the fabric says which of them cross oversubscribed uplinks */
	c->uplink_bytes = pp_net + ep_net;
	c->tflops_per_gpu = 6.0 *
			    (r->model.active_params > 0.0 ? r->model.active_params : x->params) *
			    tokens / (st->total * gpus) / 1e12;
	c->mfu = c->tflops_per_gpu * 1e12 / r->gpu.peak_bf16_flops;
	c->uplink_slowdown = 1.0;
	c->crosses_uplinks = "none";
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	c->model_step = st->total;
	c->correction = 1.0;
	c->correction_runs = 0;
	c->correction_pooled = false;
}

/*
 * On a fabric: predicts under both rank orders and keeps the faster (DP
 * inner on a tie), then the step on a non-blocking fabric for the slowdown.
 */
static void predict_placed(const struct ctx *x, const struct split *sp, struct dtplan_candidate *c)
{
	struct dtplan_candidate alt = *c;
	const struct dtplan__fabric_eval *ev;
	const struct dtplan__framework *fw;
	enum dtplan_rank_order o = DTPLAN_ORDER_TP_DP_PP;
	struct links l;
	double placed;

	dtplan__fabric_links(x, sp, c, DTPLAN_ORDER_TP_DP_PP, false, &l);
	dtplan__predict(x, &l, c);
	/* EP with PP: tp-dp-pp only.  Megatron-LM's tp-pp-dp mapping
	 * (tp-cp-ep-pp-dp) refuses PP > 1 unless "the data parallel size of the
	 * attention and moe layers [are] the same" (parallel_state.py), which
	 * EP > 1 makes them not; torchtitan's mesh is pp, dp_replicate,
	 * dp_shard, cp, tp (ParallelDims.build_mesh(), torchtitan/distributed/
	 * parallel_dims.py, b5bcd76): tp-cp-dp-pp alone; the framework's row
	 * says which orders it lays ranks out in */
	fw = dtplan__framework(x->req->framework);
	if ((c->ep > 1 && c->pp > 1) ||
	    (fw != NULL && !(fw->orders & (1u << DTPLAN_ORDER_TP_PP_DP))))
		goto chosen;
	dtplan__fabric_links(x, sp, &alt, DTPLAN_ORDER_TP_PP_DP, false, &l);
	dtplan__predict(x, &l, &alt);
	if (alt.step.total < c->step.total * (1.0 - 1e-9)) {
		*c = alt;
		o = DTPLAN_ORDER_TP_PP_DP;
	}
chosen:
	ev = &sp->ev[o];
	placed = c->step.total;
	dtplan__fabric_links(x, sp, c, o, true, &l);
	alt = *c;
	dtplan__predict(x, &l, &alt);
	c->rank_order = o;
	c->uplink_slowdown = alt.step.total > 0.0 ? placed / alt.step.total : 1.0;
	/* bytes over oversubscribed uplinks: the PP share dtplan__predict() left in
	 * uplink_bytes when PP crosses one, the rest (DP) when DP does */
	{
		double pp_net = c->uplink_bytes, dp_net = c->net_bytes_per_gpu - pp_net;

		c->uplink_bytes = (ev->pp.crosses && ev->pp.max_ratio > 1.0 ? pp_net : 0.0) +
				  (ev->dp.crosses && ev->dp.max_ratio > 1.0 ? dp_net : 0.0);
	}
	if (ev->tp.crosses && c->tp > 1)
		c->crosses_uplinks = "tp";
	else if (ev->dp.crosses && c->dp > 1)
		c->crosses_uplinks = "dp";
	else if (ev->pp.crosses && c->pp > 1)
		c->crosses_uplinks = "pp";
	else
		c->crosses_uplinks = "none";
}

/* The predicted step of c, which fits. */
void dtplan__predict_step(const struct ctx *x, const struct split *sp, struct dtplan_candidate *c)
{
	struct links l;

	if (sp != NULL) {
		predict_placed(x, sp, c);
	} else {
		dtplan__flat_links(x, c, &l);
		dtplan__predict(x, &l, c);
		c->uplink_bytes = 0.0; /* uniform nodes under one non-blocking switch */
	}
	dtplan__calibrate(x->req, c);
}
