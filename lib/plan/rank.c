/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rank.c: which of the search's candidates is the plan, which the
 * runner-up, and why.  Two passes over the same candidates: the first finds
 * the tie window (the smallest pessimistic step), the second ranks inside it
 * by batch, uplink bytes and simplicity, outside it by time
 * (doc/internals/cost-model.md).  It keeps the best and the two runners-up
 * in the walk's struct walk, and answers the walk's pruning when no
 * candidate can change them.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "plan/plan.h"
#include "plan/search_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	return dtplan__norm_time(c,
				 c->step.total + exposed_comm(c) *
							 (1.0 / DTPLAN__LINK_EFFICIENCY_LOW - 1.0),
				 requested);
}

/* `bound` is the smallest pessimistic step time among the fitting candidates. */
static bool within_tie(const struct dtplan_candidate *c, double bound, int requested)
{
	return dtplan__norm_time(c, c->step.total, requested) <=
	       bound * (1.0 + DTPLAN__TIE_FRACTION);
}

/*
 * The upper end of c's step: its 95th percentile (the slowest of its GPUs,
 * lib/plan/straggler.c) with the exposed communication at
 * DTPLAN__LINK_EFFICIENCY_LOW.
 */
static double upper_end(const struct dtplan_candidate *c, int requested)
{
	double p95 = c->step_p95 > c->step.total ? c->step_p95 : c->step.total;

	return dtplan__norm_time(c,
				 p95 + exposed_comm(c) * (1.0 / DTPLAN__LINK_EFFICIENCY_LOW - 1.0),
				 requested);
}

/* a is faster at its upper end than b at its median: a is the steadier plan
 * beyond doubt, and no tie between the two */
static bool steadier(const struct dtplan_candidate *a, const struct dtplan_candidate *b,
		     int requested)
{
	return upper_end(a, requested) < dtplan__norm_time(b, b->step.total, requested);
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
 * less recomputation; the experts' TP left TP's (Megatron-LM's default: no
 * --expert-tensor-parallel-size).  How tp * pp splits into TP and PP is
 * left to the predicted time.  <0 when a is simpler, >0 when b is, 0 when neither; *why
 * names the first difference.
 */
static int cmp_simpler(const struct dtplan_candidate *a, const struct dtplan_candidate *b,
		       const char **why)
{
	static const char *const reasons[] = {"offload", "mp", "zero", "vp", "recompute", "etp"};
	int d[] = {
		(int)a->offload - (int)b->offload,
		a->tp * a->cp * a->pp - b->tp * b->cp * b->pp,
		a->zero - b->zero,
		a->vp - b->vp,
		(int)a->recompute - (int)b->recompute,
		(a->etp > 0 && a->etp != a->tp) - (b->etp > 0 && b->etp != b->tp),
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
 * outside it, time (at the requested batch) alone.  Fewer model-parallel
 * GPUs do not win when the other split is faster even at its upper end than
 * they are at their median (steadier()): that is no tie, whatever the window
 * says (issue 34: a tie goes to the steadier plan).
 */
static bool ranks_before(const struct dtplan_candidate *a, const struct dtplan_candidate *b,
			 double fastest, int requested)
{
	bool in_a = within_tie(a, fastest, requested), in_b = within_tie(b, fastest, requested);
	const char *why = "";
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
		cs = cmp_simpler(a, b, &why);
		/* fewer model-parallel GPUs, unless the other split is the
		 * steadier beyond doubt */
		if (cs != 0 && strcmp(why, "mp") == 0 &&
		    steadier(cs < 0 ? b : a, cs < 0 ? a : b, requested))
			return cs > 0;
		if (cs != 0)
			return cs < 0;
	}
	ta = dtplan__norm_time(a, a->step.total, requested);
	tb = dtplan__norm_time(b, b->step.total, requested);
	if (ta != tb)
		return ta < tb;
	/* the same median step: the steadier plan (lib/plan/straggler.c) */
	ta = dtplan__norm_time(a, a->step_p95, requested);
	tb = dtplan__norm_time(b, b->step_p95, requested);
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
	       a->ep == b->ep && a->cp == b->cp && a->etp == b->etp;
}

static bool same_split(const struct dtplan_candidate *a, const struct dtplan_candidate *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->ep == b->ep && a->cp == b->cp &&
	       a->etp == b->etp;
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
	else if (strcmp(why, "etp") == 0)
		snprintf(buf, size, "the experts' TP left TP's (%d) instead of ETP %d", w->tp,
			 l->etp);
	else
		snprintf(buf, size, "%s recompute instead of %s",
			 dtplan_recompute_name(w->recompute), dtplan_recompute_name(l->recompute));
	return buf;
}

void dtplan__rank_explain(struct dtplan__search *out, double fastest, int requested)
{
	const struct dtplan_candidate *w = &out->best, *l = &out->runner_up;
	char gb_w[32], gb_l[32], why[96];
	const char *mp = "";
	double slower = (dtplan__norm_time(l, l->step.total, requested) /
				 dtplan__norm_time(w, w->step.total, requested) -
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
	} else if (cmp_simpler(l, w, &mp) < 0 && strcmp(mp, "mp") == 0 &&
		   steadier(w, l, requested)) {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "needs fewer model-parallel GPUs (%d instead of %d) but is slower beyond "
			 "the "
			 "model's uncertainty: %.3f s per step at its median, the plan %.3f s even "
			 "at its upper end (p95, links at %.0f%% of their bandwidth)",
			 l->tp * l->cp * l->pp, w->tp * w->cp * w->pp, l->step.total,
			 upper_end(w, requested) * w->step.total /
				 dtplan__norm_time(w, w->step.total, requested),
			 DTPLAN__LINK_EFFICIENCY_LOW * 100.0);
	} else if (cmp_simpler(w, l, NULL) < 0) {
		snprintf(out->runner_up_reason, sizeof(out->runner_up_reason),
			 "ties within the model's accuracy (%.3f s vs %.3f s per step); the plan "
			 "is "
			 "simpler: %s",
			 l->step.total, w->step.total, simpler_part(w, l, why, sizeof(why)));
	} else if (dtplan__norm_time(l, l->step.total, requested) !=
		   dtplan__norm_time(w, w->step.total, requested)) {
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

/* Returns true to stop the walk (search_int.h). */
bool dtplan__rank_visit(struct walk *w, struct dtplan_candidate *c)
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

/*
 * True when no candidate whose step is at least lb can change the ranking
 * (pass 2): the best so far is inside the tie window and lb is outside it,
 * so such a candidate neither beats the best nor, against the two runners-up
 * kept, one that is inside the window or faster than lb.
 */
bool dtplan__rank_cannot_matter(const struct walk *w, double lb)
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
		if (!have[i] ||
		    (!within_tie(slot[i], w->fastest, requested) &&
		     !(dtplan__norm_time(slot[i], slot[i]->step.total, requested) < lb)))
			return false;
	return true;
}
