/*
 * search.c: the (tp, pp, dp, zero, micro-batch, recompute, interleaving,
 * offload) search and the step-time prediction.  The formulas are derived in
 * doc/internals/cost-model.md; keep the two in step.  The kernels' times
 * come from lib/cost/compute.c.
 *
 * The search walks divisors only and allocates nothing, so that planning
 * 131,072 GPUs stays in the millisecond range (bench/bench_plan.c).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "fabric/fabric.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan/search_int.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
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

static void ctx_init(struct ctx *x, const struct dtplan_request *req)
{
	x->req = req;
	x->params = req->model.params;
	dtplan_stage_extras(&req->model, req->seq, &x->stage_extra[0], &x->stage_extra[1]);
	x->capacity = dtplan_request_usable_memory(req);
	dtplan__kernels_init(req, &x->k);
	/* NVLink figures sum both directions; a ring sends one way */
	x->nvlink_bw = (req->nvlink_bytes_per_s > 0.0 ? req->nvlink_bytes_per_s
						      : req->gpu.nvlink_bytes_per_s) /
		       2.0;
	x->grad_bytes = dtplan__grad_bytes(req->framework);
	x->kv_heads = req->model.kv_heads > 0 ? req->model.kv_heads : req->model.heads;
	x->n_moe = dtplan_model_moe_layers(&req->model);
	x->offload = false;
	x->exhaustive = false;
	x->memo = NULL;
	x->fab = NULL;
	dtplan__split_init(&x->rules, &req->model);
	x->rules.framework = req->framework;
	x->rules.attention = req->attention;
	x->rules.schedule = req->schedule;
	x->rules.moments = req->moments;
}

/* Whether the training rules allow s: the enumeration asks them as it fixes
 * each degree, so that it walks what the request checks allow. */
static bool allowed(const struct dtplan__split *s, unsigned rules)
{
	return dtplan__split_check(s, rules, NULL) == DTPLAN_OK;
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
static void flat_links(const struct ctx *x, const struct dtplan_candidate *c, struct links *l)
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
	group_link(x, tc * c->ep, &l->ep_net, &l->ep_bw, &l->ep_lat);
	l->dp_rails = l->dp_net ? dp_rails(r->gpus_per_node, tc, c->dp) : 1.0;
	if (l->dp_net)
		l->dp_bw = fmin(l->dp_bw * l->dp_rails, x->nvlink_bw);
	/* an all-to-all leaving the node runs over every rail of its members */
	if (l->ep_net)
		l->ep_bw = fmin(l->ep_bw * dp_rails(r->gpus_per_node, tc, c->ep), x->nvlink_bw);
	l->ep_where = l->ep_net ? "network" : "nvlink";
	l->ep_ratio = 1.0;
}

/*
 * Links on a fabric under one rank order; nonblocking: as if every uplink
 * carried the full NIC bandwidth of its leaf (the reference for
 * uplink_slowdown).
 */
static void fabric_links(const struct ctx *x, const struct split *sp,
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
		double rails = dp_rails(r->gpus_per_node,
					o == DTPLAN_ORDER_TP_DP_PP ? (long)c->tp * c->cp
								   : (long)c->tp * c->cp * c->pp,
					c->ep);

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
		l->ep_where = !e->net ? "nvlink" : e->crosses ? "uplink" : "leaf";
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

/* Bytes one rank sends per step in its DP/ZeRO collectives (see predict()). */
static double dp_traffic(const struct dtplan_candidate *c, double grad_bytes)
{
	double m = c->num_microbatches;
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
		return m * rs + ag;
	default:
		return m * (rs + 2.0 * ag);
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
	dtplan__layer_seconds_ex(&x->k, &r->model, r->seq, c->micro_batch, c->tp, c->cp, false,
				 c->recompute, &lt);
	memset(&mo, 0, sizeof(mo));
	if (moe > 0)
		dtplan__layer_seconds_ex(&x->k, &r->model, r->seq, c->micro_batch, c->tp, c->cp,
					 true, c->recompute, &mo);
	dtplan__head_seconds(&x->k, &r->model, r->seq / c->cp, c->micro_batch, c->tp, &hd);
	*fwd = (layers * lt.fwd + moe * mo.fwd + hd.fwd) * share;
	*rest = (layers * (lt.bwd + lt.recompute) + moe * (mo.bwd + mo.recompute) + hd.bwd) * share;
	*flops = (layers * lt.flops + moe * mo.flops + hd.flops) * c->tp * c->cp;
	*attn_fwd = lt.attn_fwd;
	if (kt != NULL)
		*kt = (struct kernel_time){x->memo->split, c->micro_batch, *fwd,
					   *rest,          *flops,         *attn_fwd};
}

static void predict(const struct ctx *x, const struct links *l, struct dtplan_candidate *c)
{
	const struct dtplan_request *r = x->req;
	struct dtplan_step *st = &c->step;
	double s = r->seq, h = r->model.hidden, b = c->micro_batch, m = c->num_microbatches;
	double sl = s / c->cp;                         /* a CP rank's share of each sequence */
	double gpus = r->gpus, act = 2.0 * sl * b * h; /* bf16 activation of one micro-batch */
	double fwd_mb, bwd_mb, mb_flops, t, bw, lat, grad_bytes, wire, held, attn_fwd;
	double n_ar, net_bytes = 0.0, pp_net = 0.0, tokens = (double)c->global_batch * s;
	double share = c->stage_imbalance / c->pp, ep_net = 0.0;
	bool net;

	memset(st, 0, sizeof(*st));
	/* the slowest stage sets the pace of every stage (doc/internals/cost-model.md) */
	microbatch_seconds(x, c, &fwd_mb, &bwd_mb, &mb_flops, &attn_fwd);
	st->compute = m * (fwd_mb + bwd_mb);
	c->flops_per_step = mb_flops * c->dp * m;

	/* EP: each MoE layer dispatches its tokens' top_k copies to their
	 * experts and combines the results, forward and backward (twice more
	 * when full recomputation reruns the forward): all-to-alls of the
	 * busiest rank's s b k / (cp tp) tokens of 2h bytes, (ep - 1)/ep of
	 * them leaving the rank (doc/internals/cost-model.md, "Experts"). */
	c->ep_bytes = 0.0;
	if (c->ep > 1 && x->n_moe > 0) {
		double bytes =
			sl * b * r->model.top_k * DTPLAN_MOE_CAPACITY_FACTOR * 2.0 * h / c->tp;
		double n_a2a =
			(c->recompute == DTPLAN_RECOMPUTE_FULL ? 6.0 : 4.0) * x->n_moe * share;
		double off = bytes * (c->ep - 1.0) / c->ep;

		t = off / l->ep_bw + (c->ep - 1.0) * l->ep_lat;
		st->ep_comm = n_a2a * m * t;
		c->ep_bytes = n_a2a / share / c->pp * m * off;
		if (l->ep_net) {
			ep_net = c->ep_bytes;
			net_bytes += ep_net;
		}
	}
	c->ep_links = c->ep > 1 ? l->ep_where : "none";
	c->ep_uplink_ratio = c->ep > 1 ? l->ep_ratio : 1.0;

	/* CP: ring attention passes each rank's K and V blocks (bf16, kv
	 * heads, or latent attention's expanded keys and values) around the
	 * ring, cp - 1 steps per layer forward and twice the bytes backward
	 * (K, V and their gradients), each step hidden behind the attention
	 * of the block it holds (Liu et al., Ring Attention, arXiv
	 * 2310.01889; Megatron-LM's context parallelism). */
	if (c->cp > 1) {
		const struct dtplan_model *md = &r->model;
		double kv_w = md->kv_lora_rank > 0 ? md->heads * ((double)md->qk_nope_dim +
								  md->qk_rope_dim + md->v_head_dim)
						   : 2.0 * x->kv_heads * ((double)h / md->heads);
		double blk = 2.0 * sl * b * kv_w / c->tp, step_attn = attn_fwd / (c->cp - 1.0);
		double step = dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, blk, 2,
						  l->cp_bw, l->cp_lat);
		double step_b = dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, 2.0 * blk, 2,
						    l->cp_bw, l->cp_lat);
		double per_layer = (c->cp - 1.0) * (fmax(0.0, step - step_attn) +
						    fmax(0.0, step_b - 2.5 * step_attn));

		per_layer += DTPLAN__OVERLAP_TAX * (c->cp - 1.0) *
			     (fmin(step, step_attn) + fmin(step_b, 2.5 * step_attn));
		st->cp_comm = per_layer * r->model.layers * share * m *
			      (c->recompute == DTPLAN_RECOMPUTE_FULL ? 4.0 / 3.0 : 1.0);
		if (l->cp_net)
			net_bytes += (c->cp - 1.0) * 3.0 * blk * r->model.layers / c->pp * m;
	}

	/* TP: 4 all-reduces of 2sbh bytes per layer per micro-batch (2 forward,
	 * 2 backward), 2 more when full recomputation reruns the forward. */
	if (c->tp > 1) {
		bw = l->tp_bw;
		lat = l->tp_lat;
		n_ar = (c->recompute == DTPLAN_RECOMPUTE_FULL ? 6.0 : 4.0) * r->model.layers /
		       c->pp;
		t = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING, act, c->tp, bw,
					lat);
		st->tp_comm = n_ar * m * t;
	}

	/* Pipeline: 1F1B idles (p-1)/m of the busy time, interleaving v chunks
	 * (p-1)/(v m); warm-up and cool-down expose 2(p-1) transfers of 2sbh/tp
	 * bytes, the rest overlap.  DualPipe idles (p/2 - 1)(F&B + B - 3W)
	 * (arXiv 2412.19437, Table 2): with the overlapped pair F&B as long as
	 * F + B and the weight gradients W half of B, (p/2 - 1)(F + B/2) of
	 * the m (F + B) busy time. */
	if (c->pp > 1) {
		double ratio = c->dualpipe
				       ? (c->pp / 2 - 1.0) * (fwd_mb + 0.5 * bwd_mb) /
						 (m * (fwd_mb + bwd_mb))
				       : dtplan_bubble_ratio_interleaved(c->pp, c->num_microbatches,
									 c->vp > 1 ? c->vp : 1);

		st->bubble = ratio > 0.0 ? (st->compute + st->tp_comm) * ratio : 0.0;
		net = l->pp_net;
		bw = l->pp_bw;
		lat = l->pp_lat;
		t = dtplan_comm_seconds(DTPLAN_COLL_P2P, DTPLAN_ALGO_RING, act / c->tp, 2, bw, lat);
		st->pp_comm = 2.0 * (c->pp - 1) * t;
		if (net)
			/* a micro-batch crosses v p - 1 boundaries each way */
			pp_net = 2.0 * ((double)(c->vp > 1 ? c->vp : 1) * c->pp - 1.0) / c->pp * m *
				 act / c->tp;
		net_bytes += pp_net;
	}

	/* DP/ZeRO (doc/internals/cost-model.md): ZeRO-0 all-reduces and ZeRO-1
	 * reduce-scatters + all-gathers the accumulated gradients once per step,
	 * hidden only behind the last micro-batch's backward.  ZeRO-2/3 keep
	 * gradients sharded, so every micro-batch's backward reduce-scatters;
	 * ZeRO-2 all-gathers the updated weights once, ZeRO-3 gathers them
	 * before every forward and backward instead.  A group that leaves the
	 * node runs over as many NICs as it has members on each node. */
	wire = dtplan__grad_wire_bytes(r->framework);
	grad_bytes = wire * c->memory.params_per_gpu;
	if (c->dp * c->cp > 1) {
		/* the dense gradients over dp x cp ranks, the experts' over the
		 * expert data-parallel group of dp x cp / ep */
		double rs, ag, hidden, ge = wire * c->memory.expert_params_per_gpu,
				       gd = grad_bytes - ge;
		int n = c->dp * c->cp, ne = n / c->ep;

		net = l->dp_net;
		bw = l->dp_bw;
		lat = l->dp_lat;
		rs = dtplan_comm_seconds(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING, gd, n, bw,
					 lat) +
		     dtplan_comm_seconds(DTPLAN_COLL_REDUCESCATTER, DTPLAN_ALGO_RING, ge, ne, bw,
					 lat);
		ag = dtplan_comm_seconds(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING, gd, n, bw, lat) +
		     dtplan_comm_seconds(DTPLAN_COLL_ALLGATHER, DTPLAN_ALGO_RING, ge, ne, bw, lat);
		switch (c->zero) {
		case 0:
			st->dp_comm = dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING,
							  gd, n, bw, lat) +
				      dtplan_comm_seconds(DTPLAN_COLL_ALLREDUCE, DTPLAN_ALGO_RING,
							  ge, ne, bw, lat);
			st->dp_exposed = fmax(0.0, st->dp_comm - bwd_mb);
			break;
		case 1:
			st->dp_comm = rs + ag;
			st->dp_exposed = fmax(0.0, st->dp_comm - bwd_mb);
			break;
		case 2:
			st->dp_comm = m * rs + ag;
			st->dp_exposed =
				(m - 1.0) * fmax(0.0, rs - bwd_mb) + fmax(0.0, rs + ag - bwd_mb);
			break;
		default:
			st->dp_comm = m * (rs + 2.0 * ag);
			st->dp_exposed = m * (fmax(0.0, ag - fwd_mb) + fmax(0.0, rs + ag - bwd_mb));
			break;
		}
		/* Overlap is not free: NCCL's channels take SMs and HBM
		 * bandwidth from the kernels they hide behind. */
		hidden = st->dp_comm - st->dp_exposed;
		st->dp_exposed += DTPLAN__OVERLAP_TAX * hidden;
		if (net)
			net_bytes += dp_traffic(c, grad_bytes) / l->dp_rails;
	}

	/* The optimizer step over the parameters whose state this GPU holds. */
	held = c->zero >= 1
		       ? (c->memory.params_per_gpu - c->memory.expert_params_per_gpu) /
					 ((double)c->dp * c->cp) +
				 c->memory.expert_params_per_gpu * c->ep / ((double)c->dp * c->cp)
		       : c->memory.params_per_gpu;
	st->optimizer = dtplan__optimizer_seconds(&x->k, held, x->grad_bytes, c->offload);

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

		st->ep_comm -= (1.0 - DTPLAN__OVERLAP_TAX) * hidden;
	}

	st->total = st->compute + st->tp_comm + st->bubble + st->pp_comm + st->dp_exposed +
		    st->optimizer + st->ep_comm + st->cp_comm;
	c->net_bytes_per_gpu = net_bytes;
	/* the fabric says which of them cross oversubscribed uplinks */
	c->uplink_bytes = pp_net + ep_net;
	c->dp_bytes = dp_traffic(c, grad_bytes);
	/* each boundary carries 2sbh/tp each way per micro-batch and chunk */
	c->pp_bytes = c->pp > 1 ? (c->vp > 1 ? c->vp : 1) * m * act / c->tp : 0.0;
	c->tflops_per_gpu = 6.0 *
			    (r->model.active_params > 0.0 ? r->model.active_params : x->params) *
			    tokens / (st->total * gpus) / 1e12;
	c->mfu = c->tflops_per_gpu * 1e12 / r->gpu.peak_bf16_flops;
	c->uplink_slowdown = 1.0;
	c->crosses_uplinks = "none";
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
}

/*
 * On a fabric: predicts under both rank orders and keeps the faster (DP
 * inner on a tie), then the step on a non-blocking fabric for the slowdown.
 */
static void predict_placed(const struct ctx *x, const struct split *sp, struct dtplan_candidate *c)
{
	struct dtplan_candidate alt = *c;
	const struct dtplan__fabric_eval *ev;
	enum dtplan_rank_order o = DTPLAN_ORDER_TP_DP_PP;
	struct links l;
	double placed;

	fabric_links(x, sp, c, DTPLAN_ORDER_TP_DP_PP, false, &l);
	predict(x, &l, c);
	/* EP with PP: tp-dp-pp only.  Megatron-LM's tp-pp-dp mapping
	 * (tp-cp-ep-pp-dp) refuses PP > 1 unless "the data parallel size of the
	 * attention and moe layers [are] the same" (parallel_state.py), which
	 * EP > 1 makes them not */
	if (c->ep > 1 && c->pp > 1)
		goto chosen;
	fabric_links(x, sp, &alt, DTPLAN_ORDER_TP_PP_DP, false, &l);
	predict(x, &l, &alt);
	if (alt.step.total < c->step.total * (1.0 - 1e-9)) {
		*c = alt;
		o = DTPLAN_ORDER_TP_PP_DP;
	}
chosen:
	ev = &sp->ev[o];
	placed = c->step.total;
	fabric_links(x, sp, c, o, true, &l);
	alt = *c;
	predict(x, &l, &alt);
	c->rank_order = o;
	c->uplink_slowdown = alt.step.total > 0.0 ? placed / alt.step.total : 1.0;
	/* bytes over oversubscribed uplinks: the PP share predict() left in
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

/*
 * The global batch that dp replicas of micro-batch b train nearest the
 * request: m = round(gbs / (dp b)) micro-batches, at least 1.  False when
 * it is off by more than DTPLAN_BATCH_TOLERANCE, or at all for an exact
 * request.
 */
static bool batch_of(const struct dtplan_request *r, int dp, int b, int *m, int *gbs)
{
	long step = (long)dp * b, k = ((long)r->global_batch + step / 2) / step;

	if (k < 1)
		k = 1;
	if (k * step > INT_MAX)
		return false;
	*m = (int)k;
	*gbs = (int)(k * step);
	if (r->exact_batch)
		return *gbs == r->global_batch;
	return fabs((double)*gbs - r->global_batch) <= DTPLAN_BATCH_TOLERANCE * r->global_batch;
}

/* Layers per stage for pp stages and the slowest stage's work over the mean. */
static enum dtplan_err stages_of(const struct ctx *x, int pp, struct dtplan_stage_layers *st,
				 double *imbalance, struct dtplan_error *err)
{
	const double *e = x->stage_extra;
	int layers = x->req->model.layers;
	double slowest;
	enum dtplan_err rv;

	rv = dtplan_stage_split(layers, pp, e[0], e[1], st, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (pp == 1) {
		*imbalance = 1.0;
		return DTPLAN_OK;
	}
	slowest = fmax(st->first + e[0], st->last + e[1]);
	if (pp > 2)
		slowest = fmax(slowest, st->middle);
	*imbalance = slowest * pp / (layers + e[0] + e[1]);
	return DTPLAN_OK;
}

/* The ledger's input for candidate c. */
static void ledger_in_of(const struct ctx *x, const struct dtplan_candidate *c,
			 struct dtplan_ledger_in *out)
{
	dtplan__ledger_in(x->req, c, out);
}

/* The ledger of c, and when it fits and `timed`, its predicted step. */
/* The memory of c (its split's stages shaped in sh, or NULL); *fits when it
 * is within the GPU's. */
static enum dtplan_err ledger_of(const struct ctx *x, const struct dtplan__ledger_shape *sh,
				 struct dtplan_candidate *c, bool *fits, struct dtplan_error *err)
{
	struct dtplan_ledger_in in;
	enum dtplan_err rv;

	ledger_in_of(x, c, &in);
	rv = sh != NULL ? dtplan__ledger_compute_shaped(&in, sh, &c->memory, err)
			: dtplan_ledger_compute(&in, &c->memory, err);
	if (rv != DTPLAN_OK)
		return rv;
	*fits = c->memory.total <= x->capacity;
	return DTPLAN_OK;
}

/* The predicted step of c, which fits. */
static void time_of(const struct ctx *x, const struct split *sp, struct dtplan_candidate *c)
{
	struct links l;

	if (sp != NULL) {
		predict_placed(x, sp, c);
		return;
	}
	flat_links(x, c, &l);
	predict(x, &l, c);
	c->uplink_bytes = 0.0; /* uniform nodes under one non-blocking switch */
}

/* The ledger of c and, when it fits, its predicted step. */
static enum dtplan_err evaluate(const struct ctx *x, const struct split *sp,
				struct dtplan_candidate *c, bool *fits, struct dtplan_error *err)
{
	enum dtplan_err rv;

	rv = ledger_of(x, NULL, c, fits, err);
	if (rv == DTPLAN_OK && *fits)
		time_of(x, sp, c);
	return rv;
}

void dtplan__request_pin(struct dtplan_request *r, const struct dtplan_candidate *c)
{
	r->tp = c->tp;
	r->pp = c->pp;
	r->ep = c->ep;
	r->cp = c->cp;
	r->vp = c->vp;
	r->zero = c->zero;
	r->offload = c->offload ? 1 : 0;
	r->micro_batch = c->micro_batch;
	r->recompute = (int)c->recompute;
}

enum dtplan_err dtplan__candidate_evaluate(const struct dtplan_request *req,
					   struct dtplan_candidate *c, bool *fits,
					   struct dtplan_error *err)
{
	struct ctx x;
	enum dtplan_err rv;

	rv = dtplan__request_check(req, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (c != NULL && c->vp == 0)
		c->vp = 1;
	if (c != NULL && c->ep == 0)
		c->ep = 1;
	if (c != NULL && c->cp == 0)
		c->cp = 1;
	if (c == NULL || fits == NULL || c->tp < 1 || c->pp < 1 || c->dp < 1 ||
	    c->micro_batch < 1 || c->zero < 0 || c->zero > 3 || c->vp < 1 ||
	    (c->vp > 1 && c->pp < 2) || c->ep < 1 || c->cp < 1 || c->dp % c->ep != 0 ||
	    !batch_of(req, c->dp, c->micro_batch, &c->num_microbatches, &c->global_batch))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "candidate needs tp, pp, dp, micro-batch >= 1, ZeRO 0-3, "
				     "interleaving only with PP, and dp * micro-batch * some "
				     "micro-batch count near the global batch");
	c->dualpipe = req->schedule == DTPLAN_SCHEDULE_DUALPIPE && c->pp > 1;
	ctx_init(&x, req);
	rv = stages_of(&x, c->pp, &c->stages, &c->stage_imbalance, err);
	if (rv != DTPLAN_OK)
		return rv;
	return evaluate(&x, NULL, c, fits, err);
}

const char *dtplan__candidate_describe(const struct dtplan_candidate *c, char *buf, size_t size)
{
	char vp[32] = "";

	char cp[24] = "", ep[24] = "";

	if (c->vp > 1)
		snprintf(vp, sizeof(vp), " (%d interleaved)", c->vp);
	if (c->cp > 1)
		snprintf(cp, sizeof(cp), " x CP %d", c->cp);
	if (c->ep > 1)
		snprintf(ep, sizeof(ep), " (EP %d)", c->ep);
	snprintf(buf, size,
		 "TP %d%s x PP %d%s x DP %d%s, ZeRO-%d%s, micro-batch %d x %d, %s recompute", c->tp,
		 cp, c->pp, vp, c->dp, ep, c->zero, c->offload ? " with CPU offload" : "",
		 c->micro_batch, c->num_microbatches, dtplan_recompute_name(c->recompute));
	return buf;
}

/* ------------------------------------------------------------------------
 * Choosing
 * ---------------------------------------------------------------------- */

/*
 * Step time at the requested global batch: candidates that train another
 * batch (within DTPLAN_BATCH_TOLERANCE) compare by time per sequence.
 */
static double norm_time(const struct dtplan_candidate *c, double t, int requested)
{
	return c->global_batch == requested ? t : t * requested / c->global_batch;
}

/* Communication that is not hidden: the least certain part of a prediction. */
static double exposed_comm(const struct dtplan_candidate *c)
{
	return c->step.tp_comm + c->step.pp_comm + c->step.dp_exposed + c->step.ep_comm +
	       c->step.cp_comm;
}

/*
 * The step time when links reach only half their catalog bandwidth, as NCCL
 * often does: the upper end of the prediction.
 */
static double pessimistic(const struct dtplan_candidate *c, int requested)
{
	return norm_time(c,
			 c->step.total +
				 exposed_comm(c) * (1.0 / DTPLAN__LINK_EFFICIENCY_LOW - 1.0),
			 requested);
}

/* `bound` is the smallest pessimistic step time among the fitting candidates. */
static bool within_tie(const struct dtplan_candidate *c, double bound, int requested)
{
	return norm_time(c, c->step.total, requested) <= bound * (1.0 + DTPLAN__TIE_FRACTION);
}

/* Network bytes differing by under 1% count as equal. */
static int cmp_bytes(double a, double b)
{
	double tol = 0.01 * fmax(a, b);

	if (a < b - tol)
		return -1;
	if (a > b + tol)
		return 1;
	return 0;
}

/*
 * The simpler of two tied candidates, as experts choose (Narayanan et al.,
 * arXiv 2104.04473, takeaway 2): no host offload; the fewest model-parallel
 * GPUs tp * pp (model parallelism changes the training script, ZeRO and
 * recomputation are switches); lower ZeRO; plain 1F1B before interleaving;
 * less recomputation.  How tp * pp splits into TP and PP is left to the
 * predicted time.  <0 when a is simpler, >0 when b is, 0 when neither; *why
 * names the first difference.
 */
static int cmp_simpler(const struct dtplan_candidate *a, const struct dtplan_candidate *b,
		       const char **why)
{
	static const char *const reasons[] = {"offload", "mp", "zero", "vp", "recompute"};
	int d[] = {
		(int)a->offload - (int)b->offload,
		a->tp * a->cp * a->pp - b->tp * b->cp * b->pp,
		a->zero - b->zero,
		a->vp - b->vp,
		(int)a->recompute - (int)b->recompute,
	};

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(d); i++) {
		if (d[i] != 0) {
			if (why != NULL)
				*why = reasons[i];
			return d[i] < 0 ? -1 : 1;
		}
	}
	return 0;
}

/*
 * True when a ranks before b: inside the tie window, the global batch
 * nearest the request, then fewer bytes over oversubscribed uplinks (shared
 * uplinks make that traffic the riskiest; none without a fabric), then the
 * simpler (cmp_simpler()), then the shorter step, then fewer network bytes;
 * outside it, time (at the requested batch) alone.
 */
static bool ranks_before(const struct dtplan_candidate *a, const struct dtplan_candidate *b,
			 double fastest, int requested)
{
	bool in_a = within_tie(a, fastest, requested), in_b = within_tie(b, fastest, requested);
	double ta, tb;
	int cb, da, db, cs;

	if (in_a != in_b)
		return in_a;
	if (in_a) {
		da = abs(a->global_batch - requested);
		db = abs(b->global_batch - requested);
		if (da != db)
			return da < db;
		cb = cmp_bytes(a->uplink_bytes, b->uplink_bytes);
		if (cb != 0)
			return cb < 0;
		cs = cmp_simpler(a, b, NULL);
		if (cs != 0)
			return cs < 0;
	}
	ta = norm_time(a, a->step.total, requested);
	tb = norm_time(b, b->step.total, requested);
	if (ta != tb)
		return ta < tb;
	cb = cmp_bytes(a->net_bytes_per_gpu, b->net_bytes_per_gpu);
	if (cb != 0)
		return cb < 0;
	return a->micro_batch > b->micro_batch;
}

static bool same_layout(const struct dtplan_candidate *a, const struct dtplan_candidate *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->zero == b->zero &&
	       a->recompute == b->recompute && a->vp == b->vp && a->offload == b->offload &&
	       a->ep == b->ep && a->cp == b->cp;
}

static bool same_split(const struct dtplan_candidate *a, const struct dtplan_candidate *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->ep == b->ep && a->cp == b->cp;
}

/* The step part in which b exceeds a the most. */
static const char *largest_gap(const struct dtplan_step *a, const struct dtplan_step *b,
			       double *gap)
{
	const struct {
		const char *name;
		double d;
	} parts[] = {
		{"compute", b->compute - a->compute},
		{"TP communication", b->tp_comm - a->tp_comm},
		{"pipeline bubble", b->bubble - a->bubble},
		{"PP communication", b->pp_comm - a->pp_comm},
		{"exposed DP communication", b->dp_exposed - a->dp_exposed},
		{"optimizer step", b->optimizer - a->optimizer},
		{"expert all-to-all", b->ep_comm - a->ep_comm},
		{"ring attention exchange", b->cp_comm - a->cp_comm},
	};
	size_t best = 0;

	for (size_t i = 1; i < DTPLAN_ARRAY_SIZE(parts); i++)
		if (parts[i].d > parts[best].d)
			best = i;
	*gap = parts[best].d;
	return parts[best].name;
}

/* Why w is simpler than l, with the numbers. */
static const char *simpler_part(const struct dtplan_candidate *w, const struct dtplan_candidate *l,
				char *buf, size_t size)
{
	const char *why = "";

	cmp_simpler(w, l, &why);
	if (strcmp(why, "offload") == 0)
		snprintf(buf, size, "no CPU offload");
	else if (strcmp(why, "mp") == 0)
		if (w->cp > 1 || l->cp > 1)
			snprintf(buf, size,
				 "%d model-parallel GPU%s (TP %d x CP %d x PP %d) instead of %d",
				 w->tp * w->cp * w->pp, w->tp * w->cp * w->pp == 1 ? "" : "s",
				 w->tp, w->cp, w->pp, l->tp * l->cp * l->pp);
		else
			snprintf(buf, size, "%d model-parallel GPU%s (TP %d x PP %d) instead of %d",
				 w->tp * w->pp, w->tp * w->pp == 1 ? "" : "s", w->tp, w->pp,
				 l->tp * l->pp);
	else if (strcmp(why, "zero") == 0)
		snprintf(buf, size, "ZeRO-%d instead of ZeRO-%d", w->zero, l->zero);
	else if (strcmp(why, "vp") == 0 && w->vp == 1)
		snprintf(buf, size, "plain 1F1B instead of %d interleaved chunks per stage", l->vp);
	else if (strcmp(why, "vp") == 0)
		snprintf(buf, size, "%d interleaved chunks per stage instead of %d", w->vp, l->vp);
	else
		snprintf(buf, size, "%s recompute instead of %s",
			 dtplan_recompute_name(w->recompute), dtplan_recompute_name(l->recompute));
	return buf;
}

static void explain(struct dtplan__search *out, double fastest, int requested)
{
	const struct dtplan_candidate *w = &out->best, *l = &out->runner_up;
	char gb_w[32], gb_l[32], why[96];
	double slower = (norm_time(l, l->step.total, requested) /
				 norm_time(w, w->step.total, requested) -
			 1.0) *
			100.0,
	       gap;
	const char *part;

	if (!within_tie(l, fastest, requested)) {
		part = largest_gap(&w->step, &l->step, &gap);
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "%.1f%% slower (%.3f s vs %.3f s per step), mostly %.3f s more %s", slower,
			 l->step.total, w->step.total, gap, part);
	} else if (cmp_bytes(w->uplink_bytes, l->uplink_bytes) != 0) {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "ties within the model's accuracy (%.3f s vs %.3f s per step) but moves "
			 "%s "
			 "per GPU per step over oversubscribed uplinks instead of %s",
			 l->step.total, w->step.total,
			 dtplan_format_bytes(l->uplink_bytes, gb_l, sizeof(gb_l)),
			 dtplan_format_bytes(w->uplink_bytes, gb_w, sizeof(gb_w)));
	} else if (cmp_simpler(w, l, NULL) < 0) {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "ties within the model's accuracy (%.3f s vs %.3f s per step); the plan "
			 "is "
			 "simpler: %s",
			 l->step.total, w->step.total, simpler_part(w, l, why, sizeof(why)));
	} else if (norm_time(l, l->step.total, requested) !=
		   norm_time(w, w->step.total, requested)) {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "ties within the model's accuracy and is as simple (%d model-parallel "
			 "GPUs), but is %.1f%% slower (%.3f s vs %.3f s per step), mostly %s",
			 l->tp * l->pp, slower, l->step.total, w->step.total,
			 largest_gap(&w->step, &l->step, &gap));
	} else {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "ties within the model's accuracy (%.3f s per step) but moves %s per GPU "
			 "per step over the network instead of %s",
			 l->step.total,
			 dtplan_format_bytes(l->net_bytes_per_gpu, gb_l, sizeof(gb_l)),
			 dtplan_format_bytes(w->net_bytes_per_gpu, gb_w, sizeof(gb_w)));
	}
}

/* ------------------------------------------------------------------------
 * Enumeration
 * ---------------------------------------------------------------------- */

struct walk {
	const struct ctx *x;
	int pass; /* 1: find the tie bound; 2: rank */
	bool first_fit;
	double fastest; /* smallest pessimistic step time */
	bool stop;      /* first_fit found one */
	struct dtplan__search *out;
	/* runner-up candidates: another TP x PP split, or another ZeRO/recompute */
	bool have_split, have_other;
	struct dtplan_candidate split, other;
};

/* Keeps *slot the best candidate that differs from the current best by `same`. */
static void keep_second(struct walk *w, const struct dtplan_candidate *c,
			const struct dtplan_candidate *old_best, bool new_best,
			bool (*same)(const struct dtplan_candidate *,
				     const struct dtplan_candidate *),
			struct dtplan_candidate *slot, bool *have)
{
	if (new_best) {
		if (!same(c, old_best)) {
			*slot = *old_best;
			*have = true;
		}
	} else if (!same(c, &w->out->best) &&
		   (!*have || ranks_before(c, slot, w->fastest, w->x->req->global_batch))) {
		*slot = *c;
		*have = true;
	}
}

/* Returns true to stop the walk. */
static bool visit(struct walk *w, struct dtplan_candidate *c)
{
	struct dtplan__search *o = w->out;
	struct dtplan_candidate old;
	bool new_best;

	if (w->pass == 1) {
		double t = pessimistic(c, w->x->req->global_batch);

		if (t < w->fastest)
			w->fastest = t;
		if (w->first_fit) {
			o->best = *c;
			o->have_best = true;
			return true;
		}
		return false;
	}
	if (!o->have_best) {
		o->best = *c;
		o->have_best = true;
		return false;
	}
	old = o->best;
	new_best = ranks_before(c, &o->best, w->fastest, w->x->req->global_batch);
	if (new_best)
		o->best = *c;
	keep_second(w, c, &old, new_best, same_split, &w->split, &w->have_split);
	keep_second(w, c, &old, new_best, same_layout, &w->other, &w->have_other);
	return false;
}

/* Most interleaved chunks per stage tried (Megatron-LM's recipes go to 20). */
#define MAX_VP 32

static int gcd(int a, int b)
{
	while (b != 0) {
		int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The interleaving degrees v a split allows, ascending, into vps (MAX_VP):
 * 1, and with pp >= 2 every v > 1 that divides each stage's layers (a chunk
 * is layers / v of a stage, as Megatron-LM's --num-layers-per-virtual-
 * pipeline-stage takes them); the request's pinned v alone when it is one.
 */
static int vp_choices(const struct ctx *x, const struct dtplan_candidate *c, int *vps)
{
	const struct dtplan_request *r = x->req;
	struct dtplan__split s = x->rules;
	int n = 0, g = c->stages.first;

	s.pp = c->pp;
	s.schedule = c->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE : DTPLAN_SCHEDULE_1F1B;

	if (c->pp >= 2) {
		g = gcd(g, c->stages.last);
		if (c->pp > 2)
			g = gcd(g, c->stages.middle);
	}
	for (int v = 1; v <= MAX_VP && n < MAX_VP; v++) {
		/* a chunk holds whole layers of each stage; the rules: PP >= 2,
		 * DualPipe does not interleave */
		s.vp = v;
		if (v > 1 &&
		    ((g > 0 && v > g) || !allowed(&s, DTPLAN__RULE_VP_PP | DTPLAN__RULE_DUALPIPE)))
			break;
		if (v > 1 && g % v != 0)
			continue;
		if (r->vp > 0 && v != r->vp)
			continue;
		vps[n++] = v;
	}
	return n;
}

/*
 * Pruning that changes no plan (doc/internals/cost-model.md, "Search"): a
 * candidate is skipped only when the ledger would say it does not fit, and
 * counted as considered all the same.
 *
 * Weights, gradients and optimizer state do not depend on the micro-batch,
 * interleaving or recomputation, and activations only add to them: when
 * they alone exceed memory on one stage (the ledger without a sequence), no
 * candidate of the (split, ZeRO stage) fits.  *fails says so.
 */
static void static_fails(const struct ctx *x, const struct dtplan__ledger_shape *sh,
			 const struct dtplan_candidate *base, int zero, bool *fails)
{
	struct dtplan_candidate c = *base;
	struct dtplan_ledger_in in;
	struct dtplan_ledger l;
	enum dtplan_err rv;

	c.zero = zero;
	c.micro_batch = 1;
	c.num_microbatches = 1;
	c.vp = 1;
	c.offload = x->offload;
	c.recompute = DTPLAN_RECOMPUTE_NONE;
	ledger_in_of(x, &c, &in);
	in.seq = 0;
	rv = sh != NULL ? dtplan__ledger_compute_shaped(&in, sh, &l, NULL)
			: dtplan_ledger_compute(&in, &l, NULL);
	/* an error is the candidates' to report */
	*fails = rv == DTPLAN_OK && l.total > x->capacity;
}

/*
 * A (split, ZeRO, interleaving, recomputation) whose micro-batch b did not
 * fit on stage `stage` with m micro-batches.  Every activation term is
 * linear in b, and b' = 2^k b scales each of them by 2^k exactly in
 * floating point; the stage holds min(m, pp - stage) micro-batches in
 * flight.  So a larger b' with at least as many in flight on that stage
 * holds at least as many bytes there, and does not fit either.
 */
struct too_big {
	bool on;
	int m, stage;
	bool dualpipe;
};

static bool still_too_big(const struct too_big *d, int pp, int m)
{
	/* DualPipe keeps pp + 1 in flight on every GPU */
	int held = d->dualpipe ? pp + 1 : pp - d->stage;

	return d->on && (m < held ? m : held) >= (d->m < held ? d->m : held);
}

/*
 * A lower bound on the step time (at the requested batch, as ranked) of
 * every candidate of a split with micro-batch b: the compute, TP, EP and CP
 * parts of predict() without recomputation, the parts that do not depend on
 * the ZeRO stage or interleaving, under the faster rank order.  Each part
 * only grows with recomputation and every other part is >= 0; floating-point
 * sums and products are monotone, so the bound holds to the last bit.
 */
static double split_bound(const struct ctx *x, const struct split *sp,
			  const struct dtplan_candidate *base, int b, int m, int gbs)
{
	struct dtplan_candidate c = *base;
	double best = INFINITY;

	memset(&c.memory, 0, sizeof(c.memory));
	c.zero = 0;
	c.vp = 1;
	c.offload = false;
	c.recompute = DTPLAN_RECOMPUTE_NONE;
	c.micro_batch = b;
	c.num_microbatches = m;
	c.global_batch = gbs;
	for (int o = 0; o < (sp != NULL ? 2 : 1); o++) {
		struct links l;
		double t;

		if (sp != NULL)
			fabric_links(x, sp, &c, (enum dtplan_rank_order)o, false, &l);
		else
			flat_links(x, &c, &l);
		predict(x, &l, &c);
		t = c.step.compute + c.step.tp_comm + c.step.ep_comm + c.step.cp_comm;
		/* compute + ep_comm, C + E - (1 - tax) f min(E, C), grows with E
		 * and C (f <= 1) but may round the other way by an ulp: a
		 * margin keeps the bound below every candidate's */
		t = norm_time(&c, t, x->req->global_batch) * (1.0 - 1e-12);
		if (t < best)
			best = t;
	}
	return best;
}

/*
 * True when no candidate whose step is at least lb can change the ranking
 * (pass 2): the best so far is inside the tie window and lb is outside it,
 * so such a candidate neither beats the best nor, against the two runners-up
 * kept, one that is inside the window or faster than lb.
 */
static bool cannot_matter(const struct walk *w, double lb)
{
	const struct dtplan__search *o = w->out;
	int requested = w->x->req->global_batch;
	const struct dtplan_candidate *slot[2] = {&w->split, &w->other};
	const bool have[2] = {w->have_split, w->have_other};

	if (w->x->exhaustive || w->pass != 2 || !o->have_best || !w->have_split || !w->have_other ||
	    !within_tie(&o->best, w->fastest, requested))
		return false;
	if (isnan(lb))
		return true; /* the caller computes lb and asks again */
	if (!(lb > w->fastest * (1.0 + DTPLAN__TIE_FRACTION)))
		return false;
	for (int i = 0; i < 2; i++)
		if (!have[i] || (!within_tie(slot[i], w->fastest, requested) &&
				 !(norm_time(slot[i], slot[i]->step.total, requested) < lb)))
			return false;
	return true;
}

/* Most micro-batch sizes one split walks (doubling up to the batch: 2^31 at most). */
#define MAX_B 32

/* Visits every ZeRO stage, micro-batch, interleaving and recomputation of one split. */
static enum dtplan_err walk_split(struct walk *w, struct dtplan_candidate *base,
				  const struct split *sp, struct dtplan_error *err)
{
	const struct ctx *x = w->x;
	const struct dtplan_request *r = x->req;
	int dp = base->dp, pp = base->pp, vps[MAX_VP], n_vp;
	int zero_lo = r->zero >= 0 ? r->zero : 0, zero_hi = r->zero >= 0 ? r->zero : 3;
	double most =
		r->exact_batch ? r->global_batch : r->global_batch * (1.0 + DTPLAN_BATCH_TOLERANCE);
	bool flash = r->attention == DTPLAN_ATTENTION_FLASH;
	enum dtplan_err rv;
	bool fits, timed;

	double lb[MAX_B];
	struct dtplan__ledger_shape shape;
	const struct dtplan__ledger_shape *shp = NULL;
	int b0 = r->micro_batch > 0 ? r->micro_batch : 1, bi;

	struct dtplan__split rules = x->rules;

	/* DualPipe mirrors the stages: an even PP */
	rules.pp = pp;
	if (!allowed(&rules, DTPLAN__RULE_DUALPIPE))
		return DTPLAN_OK;
	rules.offload = x->offload ? 1 : 0;
	n_vp = vp_choices(x, base, vps);
	/* the ledger's view of the split, once (none: each candidate's own,
	 * which reports the error) */
	if (!x->exhaustive) {
		struct dtplan_candidate c = *base;
		struct dtplan_ledger_in in;

		c.micro_batch = 1;
		c.num_microbatches = 1;
		c.vp = 1;
		c.offload = x->offload;
		c.zero = 0;
		c.recompute = DTPLAN_RECOMPUTE_NONE;
		ledger_in_of(x, &c, &in);
		if (dtplan__ledger_shape(&in, &shape, NULL) == DTPLAN_OK)
			shp = &shape;
	}
	/* the step-time bound of each micro-batch, computed when first needed
	 * (NAN: not yet; 0: none) */
	for (bi = 0; bi < MAX_B; bi++)
		lb[bi] = x->exhaustive || w->first_fit ? 0.0 : NAN;
	for (int zero = zero_lo; zero <= zero_hi; zero++) {
		struct too_big dead[MAX_VP][DTPLAN_RECOMPUTE_FULL + 1];
		bool none_fits = false;

		/* the rules: DeepSpeed runs ZeRO-2/3 only without pipeline
		 * parallelism, Megatron-LM's distributed optimizer is ZeRO-1,
		 * ZeRO-Offload needs ZeRO (DeepSpeed's offload_optimizer) */
		rules.zero = zero;
		if (!allowed(&rules, DTPLAN__RULE_ZERO_PP | DTPLAN__RULE_MEGATRON |
					     DTPLAN__RULE_OFFLOAD_ZERO))
			continue;
		/* ZeRO over one replica is ZeRO-0 */
		if (zero > 0 && dp == 1 && r->zero < 0 && !x->offload)
			continue;
		memset(dead, 0, (size_t)n_vp * sizeof(dead[0]));
		if (!x->exhaustive)
			static_fails(x, shp, base, zero, &none_fits);
		bi = -1;
		for (int b = b0; (double)dp * b <= most && bi + 1 < MAX_B; b *= 2) {
			int m, gbs;

			bi++;

			if (!batch_of(r, dp, b, &m, &gbs)) {
				if (r->micro_batch > 0)
					break;
				continue;
			}
			/* DualPipe splits the micro-batches between its two
			 * directions, at least PP each */
			if (base->dualpipe && (m < 2 * pp || m % 2 != 0))
				continue;
			for (int k = 0; k < n_vp; k++) {
				/* the interleaved schedule runs micro-batches in groups of p */
				if (vps[k] > 1 && m % pp != 0)
					continue;
				int rc_hi =
					r->recompute >= 0 ? r->recompute : DTPLAN_RECOMPUTE_FULL;

				for (int rc = r->recompute >= 0 ? r->recompute : 0; rc <= rc_hi;
				     rc++) {
					struct dtplan_candidate c;
					bool skip;

					/* FlashAttention keeps no scores: selective
					 * recomputation is no recomputation */
					if (flash && rc == DTPLAN_RECOMPUTE_SELECTIVE &&
					    r->recompute < 0)
						continue;
					/* fine recomputation needs Megatron-Core 0.13's
					 * recompute modules: only when asked for */
					if (rc == DTPLAN_RECOMPUTE_FINE && r->recompute < 0)
						continue;
					if (w->pass == 1)
						w->out->n_considered++;
					if (!x->exhaustive &&
					    (none_fits || still_too_big(&dead[k][rc], pp, m)))
						continue;
					/* pass 2: skip what cannot change the ranking */
					skip = cannot_matter(w, lb[bi]);
					if (skip && isnan(lb[bi])) {
						lb[bi] = split_bound(x, sp, base, b, m, gbs);
						skip = cannot_matter(w, lb[bi]);
					}
					if (skip)
						continue;
					c = *base;
					c.zero = zero;
					c.micro_batch = b;
					c.num_microbatches = m;
					c.global_batch = gbs;
					c.vp = vps[k];
					c.offload = x->offload;
					c.recompute = (enum dtplan_recompute)rc;
					rv = ledger_of(x, shp, &c, &fits, err);
					if (rv != DTPLAN_OK)
						return rv;
					/* pass 1 only lowers the fastest pessimistic
					 * time, which is at least lb */
					if (fits && w->pass == 1 && !x->exhaustive &&
					    !w->first_fit && isnan(lb[bi]))
						lb[bi] = split_bound(x, sp, base, b, m, gbs);
					timed = w->pass == 2 || x->exhaustive || w->first_fit ||
						!(lb[bi] >= w->fastest);
					if (fits && timed)
						time_of(x, sp, &c);
					if (!fits) {
						dead[k][rc] = (struct too_big){
							.on = true,
							.m = m,
							.stage = c.memory.stage,
							.dualpipe = c.dualpipe,
						};
						continue;
					}
					dead[k][rc].on = false;
					if (w->pass == 1)
						w->out->n_fit++;
					if (!timed)
						continue;
					if (visit(w, &c)) {
						w->stop = true;
						return DTPLAN_OK;
					}
				}
			}
			if (r->micro_batch > 0)
				break;
		}
	}
	return DTPLAN_OK;
}

/* Most CP and EP degrees tried for one split (CP: powers of two). */
#define MAX_CP 24
#define MAX_EP 64

/* Divisors of any int: 1,600 at most (2,095,133,040 has that many). */
#define MAX_DIVISORS 1600

/*
 * The divisors of n up to `most`, ascending, into out (MAX_DIVISORS);
 * returns their count.  O(sqrt(n)), whatever the layer count.
 */
static size_t divisors(int n, int most, int *out)
{
	size_t lo = 0, hi = 0;
	int d;

	for (d = 1; (long)d * d <= n; d++)
		if (n % d == 0)
			out[lo++] = d;
	/* the co-divisors n / d, descending, then reversed into place */
	for (size_t k = lo; k-- > 0;)
		if (n / out[k] != out[k])
			out[lo + hi++] = n / out[k];
	while (lo + hi > 0 && out[lo + hi - 1] > most)
		hi--;
	while (hi == 0 && lo > 0 && out[lo - 1] > most)
		lo--;
	return lo + hi;
}

/*
 * Context-parallel degrees searched: 1, and with FlashAttention every power
 * of two whose ranks keep at least DTPLAN__CP_MIN_TOKENS of each sequence
 * and that splits it into 2 cp chunks (Megatron-LM's load-balanced causal
 * split); the request's pinned degree alone when it gives one.
 */
static int cp_choices(const struct ctx *x, int rest, int *cps)
{
	const struct dtplan_request *r = x->req;
	int n = 0;

	if (r->cp > 0) {
		if (rest % r->cp == 0)
			cps[n++] = r->cp;
		return n;
	}
	struct dtplan__split rules = x->rules;

	cps[n++] = 1;
	rules.cp = 2;
	if (!allowed(&rules, DTPLAN__RULE_CP_FLASH))
		return n;
	for (int cp = 2; cp <= rest && n < MAX_CP; cp *= 2) {
		if (rest % cp != 0 || r->seq % (2 * cp) != 0 || r->seq / cp < DTPLAN__CP_MIN_TOKENS)
			break;
		cps[n++] = cp;
	}
	return n;
}

/* Expert-parallel degrees: 1 for a dense model, else every divisor of the
 * experts that divides dp (EP is carved from DP), or the pinned one. */
static int ep_choices(const struct ctx *x, int dp, int *eps)
{
	const struct dtplan_request *r = x->req;
	int n = 0, e = r->model.experts;
	struct dtplan__split rules = x->rules;
	unsigned ep_rules = DTPLAN__RULE_EP_EXPERTS | DTPLAN__RULE_EP_DP;

	rules.dp = dp;
	if (r->ep > 0) {
		rules.ep = r->ep;
		if (allowed(&rules, ep_rules))
			eps[n++] = r->ep;
		return n;
	}
	eps[n++] = 1;
	if (x->n_moe == 0)
		return n;
	{
		int ds[MAX_DIVISORS];
		size_t n_d = divisors(e, dp, ds);

		for (size_t i = 0; i < n_d && n < MAX_EP; i++) {
			rules.ep = ds[i];
			if (ds[i] >= 2 && allowed(&rules, ep_rules))
				eps[n++] = ds[i];
		}
	}
	return n;
}

/*
 * Every tp dividing the GPUs, the heads and the NVLink domain, every cp of
 * cp_choices(), every pp dividing the rest up to the layers (stages need not
 * divide the layers: see dtplan_stage_split()), dp the rest, every ep of
 * ep_choices().  Ranks follow Megatron-LM's tp-cp-ep-dp-pp order (or
 * tp-cp-pp-ep-dp): CP next to TP, EP the inner part of DP.
 */
static enum dtplan_err walk_all(struct walk *w, struct dtplan_error *err)
{
	const struct ctx *x = w->x;
	const struct dtplan_request *r = x->req;
	int gpus = r->gpus, layers = r->model.layers;
	int tp_max = r->tp > 0 ? r->tp : (r->gpus_per_node < gpus ? r->gpus_per_node : gpus);
	double most =
		r->exact_batch ? r->global_batch : r->global_batch * (1.0 + DTPLAN_BATCH_TOLERANCE);
	int pps[MAX_DIVISORS], cps[MAX_CP], eps[MAX_EP];
	enum dtplan_err rv;
	struct split sp;

	/* on a fabric TP may fill a multi-node NVLink domain */
	if (x->fab != NULL && r->tp == 0)
		tp_max = x->fab->domain_gcd < gpus ? x->fab->domain_gcd : gpus;

	for (int tp = r->tp > 0 ? r->tp : 1; tp <= tp_max && !w->stop; tp++) {
		int n_cp;

		struct dtplan__split rules = x->rules;

		rules.gpus = gpus;
		rules.tp = tp;
		if (!allowed(&rules, DTPLAN__RULE_TP_HEADS | DTPLAN__RULE_GPUS))
			continue;
		if (r->tp == 0 && x->fab != NULL && !dtplan__fabric_tp_fits(x->fab, tp))
			continue;
		if (r->tp == 0 && x->fab == NULL &&
		    (r->gpus_per_node % tp != 0 || tp > r->gpu.domain_size))
			continue;
		n_cp = cp_choices(x, gpus / tp, cps);
		for (int kc = 0; kc < n_cp && !w->stop; kc++) {
			int cp = cps[kc], tc = tp * cp;
			size_t n_pp = divisors(gpus / tc, layers, pps);

			for (size_t k = 0; k < n_pp && !w->stop; k++) {
				int pp = pps[k], n_ep;
				/* DualPipe is the request's schedule wherever there is
				 * a pipeline */
				struct dtplan_candidate c = {
					.tp = tp,
					.pp = pp,
					.cp = cp,
					.ep = 1,
					.dualpipe =
						r->schedule == DTPLAN_SCHEDULE_DUALPIPE && pp > 1};

				if (r->pp > 0 && pp != r->pp)
					continue;
				c.dp = gpus / tc / pp;
				if (w->out->min_dp == 0 || c.dp < w->out->min_dp)
					w->out->min_dp = c.dp;
				if (c.dp > most)
					continue;
				rv = stages_of(x, pp, &c.stages, &c.stage_imbalance, err);
				if (rv != DTPLAN_OK)
					return rv;
				if (x->fab != NULL) {
					dtplan__fabric_eval(x->fab, tc, pp, c.dp,
							    DTPLAN_ORDER_TP_DP_PP, x->nvlink_bw,
							    &sp.ev[DTPLAN_ORDER_TP_DP_PP]);
					dtplan__fabric_eval(x->fab, tc, pp, c.dp,
							    DTPLAN_ORDER_TP_PP_DP, x->nvlink_bw,
							    &sp.ev[DTPLAN_ORDER_TP_PP_DP]);
					sp.tp_on_nvlink = dtplan__fabric_tp_fits(x->fab, tp);
				}
				/* the kernel times do not depend on EP */
				if (x->memo != NULL && ++x->memo->split == 0) {
					/* wrapped: start over */
					memset(x->memo, 0, sizeof(*x->memo));
					x->memo->split = 1;
				}
				n_ep = ep_choices(x, c.dp, eps);
				for (int ke = 0; ke < n_ep && !w->stop; ke++) {
					c.ep = eps[ke];
					if (x->fab != NULL) {
						/* the EP groups: ep ranks tc apart (tc pp
						 * with PP inner), as a DP group */
						dtplan__fabric_eval(
							x->fab, tc, pp * (c.dp / c.ep), c.ep,
							DTPLAN_ORDER_TP_DP_PP, x->nvlink_bw,
							&sp.ep_ev[DTPLAN_ORDER_TP_DP_PP]);
						dtplan__fabric_eval(
							x->fab, tc * pp, c.dp / c.ep, c.ep,
							DTPLAN_ORDER_TP_DP_PP, x->nvlink_bw,
							&sp.ep_ev[DTPLAN_ORDER_TP_PP_DP]);
					}
					rv = walk_split(w, &c, x->fab != NULL ? &sp : NULL, err);
					if (rv != DTPLAN_OK)
						return rv;
				}
			}
		}
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan__search_run(const struct dtplan_request *req, bool first_fit,
				   struct dtplan__search *out, struct dtplan_error *err)
{
	return dtplan__search_run_fabric(req, NULL, first_fit, out, err);
}

static enum dtplan_err search(const struct dtplan_request *req, const struct dtplan__fabric *fab,
			      bool first_fit, bool exhaustive, struct dtplan__search *out,
			      struct dtplan_error *err)
{
	struct ctx x;
	struct walk w = {.x = &x, .pass = 1, .first_fit = first_fit, .fastest = INFINITY};
	struct kernel_memo memo;
	struct dtplan_request resolved;
	enum dtplan_err rv;

	if (out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no search result");
	memset(out, 0, sizeof(*out));
	req = dtplan__request_resolve(req, &resolved);
	rv = dtplan__request_check(req, err);
	if (rv != DTPLAN_OK)
		return rv;
	ctx_init(&x, req);
	x.fab = fab;
	x.exhaustive = exhaustive;
	memset(&memo, 0, sizeof(memo));
	x.memo = exhaustive ? NULL : &memo;
	x.offload = req->offload == 1;
	w.out = out;
	rv = walk_all(&w, err);
	/* ZeRO-Offload when the GPUs are too few for anything else (DeepSpeed's,
	 * over a host link) */
	if (rv == DTPLAN_OK && out->n_fit == 0 && req->offload < 0 &&
	    req->framework == DTPLAN_FRAMEWORK_DEEPSPEED && req->gpu.host_bytes_per_s > 0.0) {
		x.offload = true;
		rv = walk_all(&w, err);
	}
	if (rv != DTPLAN_OK || first_fit || out->n_fit == 0)
		return rv;
	w.pass = 2;
	rv = walk_all(&w, err);
	if (rv != DTPLAN_OK)
		return rv;
	/* another TP x PP split explains the choice best; else another ZeRO or
	 * recomputation for the same split */
	if (w.have_split || w.have_other) {
		out->runner_up = w.have_split ? w.split : w.other;
		out->have_runner_up = true;
		explain(out, w.fastest, req->global_batch);
	}
	return rv;
}

enum dtplan_err dtplan__search_run_fabric(const struct dtplan_request *req,
					  const struct dtplan__fabric *fab, bool first_fit,
					  struct dtplan__search *out, struct dtplan_error *err)
{
	return search(req, fab, first_fit, false, out, err);
}

enum dtplan_err dtplan__search_run_exhaustive(const struct dtplan_request *req,
					      const struct dtplan__fabric *fab,
					      struct dtplan__search *out, struct dtplan_error *err)
{
	return search(req, fab, false, true, out, err);
}
