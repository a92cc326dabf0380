/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan/search_int.h: what the files of the search share.
 *
 * The search is cut by job, each file using only those after it
 * (tests/check_cycles.sh):
 *
 *   search.c     the enumeration: walk_all(), walk_split() and its levels,
 *                the choices of each degree, the pruning
 *   rank.c       the ranking: the tie window, the simpler of two, the
 *                runners-up and why the plan beat them
 *   candidate.c  one candidate before its time: the request's constants,
 *                the batch and stages a split trains, its memory
 *   predict.c    one candidate's step: the links of each group kind, then
 *                one function per kind of group, summed
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by those four files only.  Nothing here allocates: every struct
 * lives on the stack of the search that uses it, and each comment says who
 * fills it and who only reads it.
 */
#ifndef DTPLAN_PLAN_SEARCH_INT_H
#define DTPLAN_PLAN_SEARCH_INT_H

#include "dtplan.h"
#include "cost/cost.h"
#include "fabric/fabric.h"
#include "model/model.h"
#include "plan/plan.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>

/*
 * The kernel times of one micro-batch (microbatch_seconds()) of the
 * (tp, cp, pp) split being walked, by micro-batch size and recomputation:
 * the same for every EP, ZeRO stage, interleaving and rank order.  A
 * split's sizes are b0 2^k, so the trailing zeros of b tell them apart.
 */
struct kernel_time {
	unsigned split; /* the memo's split it holds; 0 none */
	int b;
	double fwd, rest, flops, attn_fwd;
};

/* On the stack of the search that walks; the walk counts its splits in
 * `split` and the prediction fills and reads `t`. */
/* One collective's time (dtplan__nccl_seconds()) and what it was asked. */
struct comm_time {
	bool set;
	int coll, n, nodes, nvls;
	double bytes, bw, intra_lat, inter_lat, seconds;
};

struct kernel_memo {
	unsigned split; /* counts the splits walked */
	struct kernel_time t[32][DTPLAN_RECOMPUTE_FULL + 1];
	/* the collectives' times, any split's: candidates of one split ask
	 * the same ones (predict.c nccl_time()) */
	struct comm_time comm[16];
};

/*
 * Per-request constants, computed once per search: filled by
 * dtplan__search_ctx_init() (candidate.c), then search() (search.c) sets
 * fab, exhaustive and memo, and offload for each of its walks; read-only
 * everywhere else.  Borrows the request, the memo and the fabric, which
 * outlive it.
 */
struct ctx {
	const struct dtplan_request *req;
	double params;            /* N */
	double stage_extra[2];    /* embedding, output layer: layer-equivalents (pipeline.c) */
	double capacity;          /* usable bytes per GPU */
	struct dtplan__kernels k; /* kernel rates (lib/cost/compute.c) */
	double nvlink_bw;         /* one direction: what a ring sends at */
	double grad_bytes;        /* gradient bytes per parameter (the framework's) */
	int kv_heads;
	struct dtplan__split rules; /* the request's, every degree unknown (lib/model/rules.c) */
	int n_moe;                  /* MoE layers of the model */
	bool offload;               /* this walk's candidates are ZeRO-Offload ones */
	bool exhaustive;            /* evaluate every candidate: no pruning (tests compare) */
	struct kernel_memo *memo;   /* the walked split's kernel times; NULL: none */
	const struct dtplan__fabric *fab; /* NULL: uniform nodes under one switch */
};

/* Bandwidth and latency of each group kind's links for one candidate,
 * filled by the prediction's links functions for one rank order. */
struct links {
	bool tp_net, pp_net, dp_net, cp_net, ep_net;
	double tp_bw, tp_lat, pp_bw, pp_lat, dp_bw, dp_lat, cp_bw, cp_lat, ep_bw, ep_lat;
	const char *ep_where; /* "nvlink", "network", "leaf" or "uplink" */
	double ep_ratio;      /* largest oversubscription the EP groups cross (1.0 none) */
	double dp_rails;      /* a DP group's members per node: NICs its collectives use */
};

/* A (tp, cp, pp, dp, ep) split costed on the fabric under both rank orders:
 * ev with the tp x cp block in the place of TP, ep_ev's dp the EP groups.
 * Filled by the walk once per split (and per EP degree for ep_ev), read
 * by the prediction. */
struct split {
	struct dtplan__fabric_eval ev[2]; /* indexed by enum dtplan_rank_order */
	struct dtplan__fabric_eval ep_ev[2];
	bool tp_on_nvlink; /* TP alone fits its NVLink domains */
};

/*
 * One search's walk over the candidates, on the stack of search()
 * (search.c), which sets x, pass and first_fit; the walk sets stop and
 * counts out's considered and fitting candidates; the ranking (rank.c)
 * keeps fastest, out's best and the two runners-up.
 */
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

/* ------------------------------------------------------------------------
 * One candidate before its time (lib/plan/candidate.c)
 * ---------------------------------------------------------------------- */

/* Fills x from req, which x borrows: no fabric, no memo, not exhaustive,
 * not offloading (the search sets those after). */
void dtplan__search_ctx_init(struct ctx *x, const struct dtplan_request *req);

/*
 * The global batch that dp replicas of micro-batch b train nearest the
 * request: *m = round(gbs / (dp b)) micro-batches, at least 1, and *gbs.
 * False when it is off by more than DTPLAN_BATCH_TOLERANCE, or at all for
 * an exact request.  Here, inline, because the walk asks it of every
 * micro-batch of every ZeRO stage of every split (bench/bench_plan: about
 * 2% of a plan's time as a call).
 */
static inline bool dtplan__batch_of(const struct dtplan_request *r, int dp, int b, int *m, int *gbs)
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

/* Layers per stage for pp stages into *st, and *imbalance the slowest
 * stage's work over the mean (1 with pp 1): the balanced split, or with vp > 1
 * where vp does not divide its stages the balanced split in chunks of vp
 * layers (DTPLAN_ERR_INVAL when the layers make no whole chunks). */
enum dtplan_err dtplan__stages_of(const struct ctx *x, int pp, int vp,
				  struct dtplan_stage_layers *st, double *imbalance,
				  struct dtplan_error *err);

/* The memory of c into c->memory (its split's stages shaped in sh, or
 * NULL); *fits when it is within the GPU's. */
enum dtplan_err dtplan__candidate_ledger(const struct ctx *x, const struct dtplan__ledger_shape *sh,
					 struct dtplan_candidate *c, bool *fits,
					 struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * The prediction of one candidate's step (lib/plan/predict.c)
 * ---------------------------------------------------------------------- */

/* The links of c's groups without a fabric: rank order tp, dp, pp on
 * uniform nodes.  Fills *l. */
void dtplan__flat_links(const struct ctx *x, const struct dtplan_candidate *c, struct links *l);

/*
 * The links of c's groups on x's fabric under rank order o, the split's
 * evaluation in sp; nonblocking: as if every uplink carried the full NIC
 * bandwidth of its leaf (the reference for the uplink slowdown).  Fills *l.
 */
void dtplan__fabric_links(const struct ctx *x, const struct split *sp,
			  const struct dtplan_candidate *c, enum dtplan_rank_order o,
			  bool nonblocking, struct links *l);

/*
 * The step of c over links l: fills c->step (every part and their sum),
 * its FLOPs, network, DP, PP, EP and uplink bytes, TFLOP/s and MFU; reads
 * c's split, micro-batch, recomputation and memory, and x->memo when set.
 */
void dtplan__predict(const struct ctx *x, const struct links *l, struct dtplan_candidate *c);

/* The predicted step of c, which fits: on the fabric (sp, under the faster
 * rank order, with its slowdown from shared uplinks) or, sp NULL, flat. */
void dtplan__predict_step(const struct ctx *x, const struct split *sp, struct dtplan_candidate *c);

/* lib/plan/calibrate.c: applies r's learned correction to c's predicted
 * step (model_step, correction, correction_runs; the MFU follows), and the
 * smallest factor r's corrections may apply (1 without any), by which the
 * search's lower bounds are scaled so that pruning stays sound. */
void dtplan__calibrate(const struct dtplan_request *r, struct dtplan_candidate *c);
/* Adds the wait for the slowest GPU to c's step (its median) and sets its
 * 95th percentile (lib/plan/straggler.c). */
void dtplan__straggle(const struct dtplan_request *r, struct dtplan_candidate *c);
double dtplan__calibration_floor(const struct dtplan_request *r);

/* ------------------------------------------------------------------------
 * The ranking (lib/plan/rank.c)
 * ---------------------------------------------------------------------- */

/*
 * Step time t of c at the requested global batch: candidates that train
 * another batch (within DTPLAN_BATCH_TOLERANCE) compare by time per
 * sequence.  Here, inline, because the ranking asks it of every pair it
 * compares and the walk of every step bound: a call into another object
 * (or, in a shared library's PIC code, into this one) would not inline.
 */
static inline double dtplan__norm_time(const struct dtplan_candidate *c, double t, int requested)
{
	return c->global_batch == requested ? t : t * requested / c->global_batch;
}

/*
 * Hands the walk's fitting, predicted candidate c to the ranking: pass 1
 * lowers w->fastest (and with first_fit keeps c as the best), pass 2 ranks
 * c against w->out's best and the runners-up.  True to stop the walk.
 */
bool dtplan__rank_visit(struct walk *w, struct dtplan_candidate *c);

/*
 * True when no candidate whose step is at least lb can change the ranking
 * (pass 2, with pruning).  With lb NAN (not computed yet), true when a
 * bound could settle it: the caller then computes lb and asks again.
 */
bool dtplan__rank_cannot_matter(const struct walk *w, double lb);

/* Writes out->runner_up_reason: why out's best ranks before its runner-up,
 * with the numbers; fastest and requested as the walk's. */
void dtplan__rank_explain(struct dtplan__search *out, double fastest, int requested);

#endif /* DTPLAN_PLAN_SEARCH_INT_H */
