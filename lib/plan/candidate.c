/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * candidate.c: one candidate of the search before its time is predicted:
 * the request's constants the search works from, the pipeline stages a
 * split trains (its global batch: dtplan__batch_of(), inline in
 * search_int.h), its memory (lib/cost/ledger.c); and one candidate
 * evaluated, described or pinned outside a search.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "model/model.h"
#include "plan/plan.h"
#include "plan/search_int.h"

#include <math.h>
#include <stdio.h>

/* The request's constants the search works from (search_int.h). */
void dtplan__search_ctx_init(struct ctx *x, const struct dtplan_request *req)
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
	x->grad_bytes = dtplan__grad_bytes(req->framework, req->grads);
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
	x->rules.grads = req->grads;
}

/* Layers per stage for pp stages and the slowest stage's work over the mean. */
/* The gcd of a split's stage layer counts (the first's alone with pp 1). */
static int stages_gcd(const struct dtplan_stage_layers *st, int pp)
{
	int g = st->first, k[2] = {st->last, st->middle};

	for (int i = 0; i < (pp > 2 ? 2 : pp > 1 ? 1 : 0); i++) {
		int a = g, b = k[i];

		while (b != 0) {
			int t = a % b;

			a = b;
			b = t;
		}
		g = a;
	}
	return g;
}

/*
 * Stages that vp interleaved chunks of whole layers cut, in the way
 * dtplan__vp_split_of() (lib/model/rules.c) says: the balanced split in
 * units of vp layers, Megatron-LM's account-for-embedding/loss split, or
 * its pipeline layout of chunks of k layers with a shorter last.
 */
static enum dtplan_err vp_stages(int layers, int pp, int vp, const double *e,
				 struct dtplan_stage_layers *st, struct dtplan_error *err)
{
	enum dtplan_err rv;

	switch (dtplan__vp_split_of(layers, pp, vp)) {
	case DTPLAN__VP_UNITS:
		rv = dtplan_stage_split(layers / vp, pp, e[0] / vp, e[1] / vp, st, err);
		if (rv != DTPLAN_OK)
			return rv;
		st->first *= vp;
		st->middle *= vp;
		st->last *= vp;
		return DTPLAN_OK;
	case DTPLAN__VP_ACCOUNT:
		st->first = (layers + 2) / pp - 1;
		st->middle = (layers + 2) / pp;
		st->last = (layers + 2) / pp - 1;
		return DTPLAN_OK;
	case DTPLAN__VP_LAYOUT: {
		int n = pp * vp, k = (layers + n - 1) / n;

		st->first = k * vp;
		st->middle = pp > 2 ? k * vp : 0; /* as dtplan_stage_split() */
		st->last = layers - k * (n - 1) + k * (vp - 1);
		return DTPLAN_OK;
	}
	default:
		return dtplan__error(err, DTPLAN_ERR_INVAL, "vp", 0,
				     "vp=%d with PP %d: no stages of whole chunks for %d layers",
				     vp, pp, layers);
	}
}

enum dtplan_err dtplan__stages_of(const struct ctx *x, int pp, int vp,
				  struct dtplan_stage_layers *st, double *imbalance,
				  struct dtplan_error *err)
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
	/* Interleaving cuts every stage into vp chunks of whole layers
	 * (TransformerConfig.__post_init__, megatron/core/transformer/
	 * transformer_config.py, d98e8a6, refuses first, last and middle
	 * stages that vp does not divide): where the balanced split does not
	 * allow it, vp_stages() finds one that does. */
	if (vp > 1 && stages_gcd(st, pp) % vp != 0) {
		rv = vp_stages(layers, pp, vp, e, st, err);
		if (rv != DTPLAN_OK)
			return rv;
	}
	slowest = fmax(st->first + e[0], st->last + e[1]);
	if (pp > 2)
		slowest = fmax(slowest, st->middle);
	*imbalance = slowest * pp / (layers + e[0] + e[1]);
	return DTPLAN_OK;
}

/* The memory of c (its split's stages shaped in sh, or NULL); *fits when it
 * is within the GPU's. */
enum dtplan_err dtplan__candidate_ledger(const struct ctx *x, const struct dtplan__ledger_shape *sh,
					 struct dtplan_candidate *c, bool *fits,
					 struct dtplan_error *err)
{
	struct dtplan_ledger_in in;
	enum dtplan_err rv;

	dtplan__ledger_in(x->req, c, &in);
	rv = sh != NULL ? dtplan__ledger_compute_shaped(&in, sh, &c->memory, err)
			: dtplan_ledger_compute(&in, &c->memory, err);
	if (rv != DTPLAN_OK)
		return rv;
	*fits = c->memory.total <= x->capacity;
	return DTPLAN_OK;
}

/* The ledger of c and, when it fits, its predicted step. */
static enum dtplan_err evaluate(const struct ctx *x, const struct split *sp,
				struct dtplan_candidate *c, bool *fits, struct dtplan_error *err)
{
	enum dtplan_err rv;

	rv = dtplan__candidate_ledger(x, NULL, c, fits, err);
	if (rv == DTPLAN_OK && *fits)
		dtplan__predict_step(x, sp, c);
	return rv;
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
	if (c == NULL || fits == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no candidate to evaluate");
	if (c->vp == 0)
		c->vp = 1;
	if (c->ep == 0)
		c->ep = 1;
	if (c->etp == 0)
		c->etp = c->tp;
	if (c->cp == 0)
		c->cp = 1;
	rv = dtplan__split_check_read(&c->split, req->schedule, DTPLAN_ERR_INVAL, "", "candidate",
				      err);
	if (rv != DTPLAN_OK)
		return rv;
	if (c->micro_batch < 1 ||
	    !dtplan__batch_of(req, c->dp, c->micro_batch, &c->num_microbatches, &c->global_batch))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "candidate needs a micro-batch >= 1, and dp * micro-batch * "
				     "some micro-batch count near the global batch");
	c->dualpipe = req->schedule == DTPLAN_SCHEDULE_DUALPIPE && c->pp > 1;
	dtplan__search_ctx_init(&x, req);
	rv = dtplan__stages_of(&x, c->pp, c->vp, &c->stages, &c->stage_imbalance, err);
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
	if (c->ep > 1 && c->etp != c->tp)
		snprintf(ep, sizeof(ep), " (EP %d, ETP %d)", c->ep, c->etp);
	else if (c->ep > 1)
		snprintf(ep, sizeof(ep), " (EP %d)", c->ep);
	snprintf(buf, size,
		 "TP %d%s x PP %d%s x DP %d%s, ZeRO-%d%s, micro-batch %d x %d, %s recompute", c->tp,
		 cp, c->pp, vp, c->dp, ep, c->zero, c->offload ? " with CPU offload" : "",
		 c->micro_batch, c->num_microbatches, dtplan_recompute_name(c->recompute));
	return buf;
}
