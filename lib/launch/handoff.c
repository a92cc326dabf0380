/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * handoff.c: what every hand-off of lib/launch/ shares: the text it builds,
 * the plan it checks, its global batch, sequence and checkpoint interval,
 * its split for the rules, and whether a launcher runs it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "model/model.h"
#include "launch/launch_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* DTPLAN_ERR_INVAL unless p holds a parallel split. */
enum dtplan_err dtplan__check_plan(const struct dtplan_plan *p, char **out,
				   struct dtplan_error *err)
{
	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	if (p->best.tp < 1 || p->best.pp < 1 || p->best.dp < 1 || p->best.micro_batch < 1 ||
	    p->best.num_microbatches < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "the plan has no parallel split (TP %d, PP %d, DP %d, "
				     "micro-batch %d x %d)",
				     p->best.tp, p->best.pp, p->best.dp, p->best.micro_batch,
				     p->best.num_microbatches);
	return DTPLAN_OK;
}

/* The sequence length the plan trains (the request's, resolved as the search does). */
int dtplan__plan_seq(const struct dtplan_plan *p)
{
	return dtplan_request_seq(&p->request, NULL);
}

/* The trained global batch: dp x micro-batch x micro-batches. */
long dtplan__plan_global_batch(const struct dtplan_candidate *c)
{
	if (c->global_batch > 0)
		return c->global_batch;
	return (long)c->dp * c->micro_batch * c->num_microbatches;
}

/* The checkpoint interval in whole steps, 0 when unknown. */
long dtplan__ckpt_steps(const struct dtplan_plan *p)
{
	double s = p->ckpt.interval_steps;

	return isfinite(s) && s >= 1.0 && s < 1e15 ? (long)floor(s) : 0;
}

void dtplan__plan_split(const struct dtplan_plan *p, struct dtplan__split *s)
{
	const struct dtplan_candidate *c = &p->best;

	dtplan__split_init(s, &p->request.model);
	s->framework = p->request.framework;
	s->attention = p->request.attention;
	s->schedule = c->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE : DTPLAN_SCHEDULE_1F1B;
	s->moments = p->request.moments;
	s->seq = dtplan__plan_seq(p);
	s->tp = c->tp;
	s->pp = c->pp;
	s->dp = c->dp;
	s->cp = c->cp;
	s->ep = c->ep;
	s->vp = c->vp;
	s->zero = c->zero;
	s->offload = c->offload ? 1 : 0;
	s->recompute = c->recompute;
}

const char *dtplan__plan_runs(const struct dtplan_plan *p, enum dtplan_framework runner,
			      unsigned clauses)
{
	struct dtplan__split s;

	dtplan__plan_split(p, &s);
	return dtplan__split_runs(&s, dtplan__framework(runner), clauses, (int)p->best.rank_order,
				  (int)p->request.precision);
}

bool dtplan__bf16_grads(const struct dtplan_plan *p)
{
	return dtplan__grads_held(p->request.framework, p->request.grads) == DTPLAN_GRADS_BF16;
}
