/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * search.c: the (tp, pp, dp, zero, micro-batch, recompute, interleaving,
 * offload) search.  The formulas are derived in doc/internals/cost-model.md;
 * keep the two in step.  Each candidate's step is predicted in
 * lib/plan/predict.c.
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

#include <math.h>
#include <string.h>

/* Whether the training rules allow s: the enumeration asks them as it fixes
 * each degree, so that it walks what the request checks allow. */
static bool allowed(const struct dtplan__split *s, unsigned rules)
{
	return dtplan__split_check(s, rules, NULL) == DTPLAN_OK;
}

/* Most interleaved chunks per stage tried (Megatron-LM's recipes go to 20). */
#define MAX_VP 32

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
		g = dtplan__gcd(g, c->stages.last);
		if (c->pp > 2)
			g = dtplan__gcd(g, c->stages.middle);
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
	dtplan__ledger_in(x->req, &c, &in);
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
 * parts of dtplan__predict() without recomputation, the parts that do not
 * depend on the ZeRO stage or interleaving, under the faster rank order.
 * Each part only grows with recomputation and every other part is >= 0;
 * floating-point sums and products are monotone, so the bound holds to the
 * last bit.
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
			dtplan__fabric_links(x, sp, &c, (enum dtplan_rank_order)o, false, &l);
		else
			dtplan__flat_links(x, &c, &l);
		dtplan__predict(x, &l, &c);
		t = c.step.compute + c.step.tp_comm + c.step.ep_comm + c.step.cp_comm;
		/* compute + ep_comm, C + E - (1 - tax) f min(E, C), grows with E
		 * and C (f <= 1) but may round the other way by an ulp: a
		 * margin keeps the bound below every candidate's */
		t = dtplan__norm_time(&c, t, x->req->global_batch) * (1.0 - 1e-12);
		if (t < best)
			best = t;
	}
	/* a learned correction below 1 may make a candidate faster than the model */
	return best * dtplan__calibration_floor(x->req);
}

/* Most micro-batch sizes one split walks (doubling up to the batch: 2^31 at most). */
#define MAX_B 32

/*
 * One split's walk: what walk_split() sets up once for the split, and where
 * its levels stand (each level sets its own fields before the next runs).
 * On walk_split()'s stack.
 */
struct split_walk {
	struct walk *w;
	const struct dtplan_candidate *base; /* the split: tp, cp, pp, dp, ep, its stages */
	const struct split *sp;              /* its costs on the fabric; NULL: flat */
	struct dtplan__split rules;          /* the request's, with the split's pp and offload */
	int vps[MAX_VP], n_vp;               /* its interleavings (vp_choices()) */
	struct dtplan__ledger_shape shape;
	const struct dtplan__ledger_shape *shp; /* &shape, or NULL: each candidate's own */
	double lb[MAX_B]; /* the step-time bound of each micro-batch (NAN: not yet; 0: none) */
	/* walk_zero(): the ZeRO stage, and what its candidates cannot fit */
	int zero;
	bool none_fits;
	struct too_big dead[MAX_VP][DTPLAN_RECOMPUTE_FULL + 1];
	/* walk_microbatches(): the micro-batch (bi its index), its count and batch */
	int b, bi, m, gbs;
	/* walk_interleavings(): the index of the interleaving in vps */
	int k;
};

/*
 * One candidate, (zero, b, vps[k], rc) of the split, that may fit: skipped
 * when the pruning says it cannot change the ranking, else its ledger, its
 * step when it fits (and may matter) and the ranking.  Always inlined into
 * its one caller, as the loop's body was before it had a name: as a call
 * it cost about 2% of a plan's time at 131,072 GPUs (bench/bench_plan).
 */
static inline __attribute__((always_inline)) enum dtplan_err walk_candidate(
	struct split_walk *s, int rc, struct dtplan_error *err)
{
	struct walk *w = s->w;
	const struct ctx *x = w->x;
	int k = s->k, bi = s->bi;
	struct dtplan_candidate c;
	enum dtplan_err rv;
	bool fits, timed, skip;

	/* pass 2: skip what cannot change the ranking */
	skip = dtplan__rank_cannot_matter(w, s->lb[bi]);
	if (skip && isnan(s->lb[bi])) {
		s->lb[bi] = split_bound(x, s->sp, s->base, s->b, s->m, s->gbs);
		skip = dtplan__rank_cannot_matter(w, s->lb[bi]);
	}
	if (skip)
		return DTPLAN_OK;
	c = *s->base;
	c.zero = s->zero;
	c.micro_batch = s->b;
	c.num_microbatches = s->m;
	c.global_batch = s->gbs;
	c.vp = s->vps[k];
	c.offload = x->offload;
	c.recompute = (enum dtplan_recompute)rc;
	rv = dtplan__candidate_ledger(x, s->shp, &c, &fits, err);
	if (rv != DTPLAN_OK)
		return rv;
	/* pass 1 only lowers the fastest pessimistic time, which is at least lb */
	if (fits && w->pass == 1 && !x->exhaustive && !w->first_fit && isnan(s->lb[bi]))
		s->lb[bi] = split_bound(x, s->sp, s->base, s->b, s->m, s->gbs);
	timed = w->pass == 2 || x->exhaustive || w->first_fit || !(s->lb[bi] >= w->fastest);
	if (fits && timed)
		dtplan__predict_step(x, s->sp, &c);
	if (!fits) {
		s->dead[k][rc] = (struct too_big){
			.on = true,
			.m = s->m,
			.stage = c.memory.stage,
			.dualpipe = c.dualpipe,
		};
		return DTPLAN_OK;
	}
	s->dead[k][rc].on = false;
	if (w->pass == 1)
		w->out->n_fit++;
	if (!timed)
		return DTPLAN_OK;
	if (dtplan__rank_visit(w, &c))
		w->stop = true;
	return DTPLAN_OK;
}

/* Every recomputation of (zero, b, vps[k]): none, selective, full, fine, or
 * the request's.  Each is counted as considered; walk_candidate() gets
 * those that the memory pruning does not rule out. */
static enum dtplan_err walk_recomputes(struct split_walk *s, struct dtplan_error *err)
{
	struct walk *w = s->w;
	const struct ctx *x = w->x;
	const struct dtplan_request *r = x->req;
	bool flash = r->attention == DTPLAN_ATTENTION_FLASH;
	int rc_hi = r->recompute >= 0 ? r->recompute : DTPLAN_RECOMPUTE_FULL;
	enum dtplan_err rv;

	for (int rc = r->recompute >= 0 ? r->recompute : 0; rc <= rc_hi; rc++) {
		/* FlashAttention keeps no scores: selective recomputation is no
		 * recomputation, but for a per-op policy */
		if (flash && rc == DTPLAN_RECOMPUTE_SELECTIVE && r->recompute < 0 &&
		    !dtplan__selective_per_op(r->framework))
			continue;
		/* fine recomputation needs Megatron-Core 0.13's recompute
		 * modules: only when asked for */
		if (rc == DTPLAN_RECOMPUTE_FINE && r->recompute < 0)
			continue;
		if (w->pass == 1)
			w->out->n_considered++;
		if (!x->exhaustive &&
		    (s->none_fits || still_too_big(&s->dead[s->k][rc], s->base->pp, s->m)))
			continue;
		rv = walk_candidate(s, rc, err);
		if (rv != DTPLAN_OK || w->stop)
			return rv;
	}
	return DTPLAN_OK;
}

/* Every interleaving of (zero, b) that its micro-batch count allows. */
static enum dtplan_err walk_interleavings(struct split_walk *s, struct dtplan_error *err)
{
	enum dtplan_err rv;

	for (int k = 0; k < s->n_vp; k++) {
		/* the interleaved schedule runs micro-batches in groups of p */
		if (s->vps[k] > 1 && s->m % s->base->pp != 0)
			continue;
		s->k = k;
		rv = walk_recomputes(s, err);
		if (rv != DTPLAN_OK || s->w->stop)
			return rv;
	}
	return DTPLAN_OK;
}

/* Every micro-batch of the ZeRO stage: b0, 2 b0, 4 b0, ... while dp b stays
 * within the batch (the request's alone when it pins one). */
static enum dtplan_err walk_microbatches(struct split_walk *s, struct dtplan_error *err)
{
	const struct dtplan_request *r = s->w->x->req;
	int dp = s->base->dp, pp = s->base->pp, bi = -1;
	int b0 = r->micro_batch > 0 ? r->micro_batch : 1;
	double most =
		r->exact_batch ? r->global_batch : r->global_batch * (1.0 + DTPLAN_BATCH_TOLERANCE);
	enum dtplan_err rv;

	for (int b = b0; (double)dp * b <= most && bi + 1 < MAX_B; b *= 2) {
		int m, gbs;

		bi++;
		if (!dtplan__batch_of(r, dp, b, &m, &gbs)) {
			if (r->micro_batch > 0)
				break;
			continue;
		}
		/* DualPipe splits the micro-batches between its two directions,
		 * at least PP each */
		if (s->base->dualpipe && (m < 2 * pp || m % 2 != 0))
			continue;
		s->b = b;
		s->bi = bi;
		s->m = m;
		s->gbs = gbs;
		rv = walk_interleavings(s, err);
		if (rv != DTPLAN_OK || s->w->stop)
			return rv;
		if (r->micro_batch > 0)
			break;
	}
	return DTPLAN_OK;
}

/* ZeRO stage `zero` of the split, when the rules allow it. */
static enum dtplan_err walk_zero(struct split_walk *s, int zero, struct dtplan_error *err)
{
	const struct ctx *x = s->w->x;

	/* the rules: what the framework shards with the split's PP, CP and
	 * EP (DeepSpeed runs ZeRO-2/3 only without pipeline parallelism),
	 * ZeRO-Offload needs ZeRO */
	s->rules.zero = zero;
	if (!allowed(&s->rules,
		     DTPLAN__RULE_FRAMEWORK | DTPLAN__RULE_MEGATRON | DTPLAN__RULE_OFFLOAD_ZERO))
		return DTPLAN_OK;
	/* ZeRO over one replica is ZeRO-0 (but for the optimizers that
	 * need a distributed one: the CPU's, bf16 moments') */
	if (zero > 0 && s->base->dp == 1 && x->req->zero < 0 && !x->offload &&
	    x->req->moments != DTPLAN_MOMENTS_BF16)
		return DTPLAN_OK;
	s->zero = zero;
	s->none_fits = false;
	memset(s->dead, 0, (size_t)s->n_vp * sizeof(s->dead[0]));
	if (!x->exhaustive)
		static_fails(x, s->shp, s->base, zero, &s->none_fits);
	return walk_microbatches(s, err);
}

/* Visits every ZeRO stage, micro-batch, interleaving of vps and
 * recomputation of one split, in that order (outermost first). */
static enum dtplan_err walk_split_vps(struct walk *w, const struct dtplan_candidate *base,
				      const struct split *sp, const int *vps, int n_vp,
				      struct dtplan_error *err)
{
	const struct ctx *x = w->x;
	const struct dtplan_request *r = x->req;
	const struct dtplan__framework *fw = dtplan__framework(r->framework);
	/* the stages the framework tries unasked (its row: Megatron-FSDP is
	 * Megatron-LM's opt-in, --use-megatron-fsdp, so ZeRO-0/1 there) */
	int zero_lo = r->zero >= 0 ? r->zero : 0;
	int zero_hi = r->zero >= 0 ? r->zero : fw != NULL ? fw->zero_max : 3;
	struct split_walk s;
	enum dtplan_err rv;

	s.w = w;
	s.base = base;
	s.sp = sp;
	s.rules = x->rules;
	/* DualPipe mirrors the stages: an even PP */
	s.rules.pp = base->pp;
	s.rules.tp = base->tp;
	s.rules.cp = base->cp;
	s.rules.ep = base->ep;
	s.rules.etp = base->etp;
	if (!allowed(&s.rules, DTPLAN__RULE_DUALPIPE))
		return DTPLAN_OK;
	s.rules.offload = x->offload ? 1 : 0;
	s.n_vp = n_vp;
	memcpy(s.vps, vps, (size_t)n_vp * sizeof(vps[0]));
	/* the ledger's view of the split, once (none: each candidate's own,
	 * which reports the error) */
	s.shp = NULL;
	if (!x->exhaustive) {
		struct dtplan_candidate c = *base;
		struct dtplan_ledger_in in;

		c.micro_batch = 1;
		c.num_microbatches = 1;
		c.vp = 1;
		c.offload = x->offload;
		c.zero = 0;
		c.recompute = DTPLAN_RECOMPUTE_NONE;
		dtplan__ledger_in(x->req, &c, &in);
		if (dtplan__ledger_shape(&in, &s.shape, NULL) == DTPLAN_OK)
			s.shp = &s.shape;
	}
	/* the step-time bound of each micro-batch, computed when first needed */
	for (int bi = 0; bi < MAX_B; bi++)
		s.lb[bi] = x->exhaustive || w->first_fit ? 0.0 : NAN;
	for (int zero = zero_lo; zero <= zero_hi; zero++) {
		rv = walk_zero(&s, zero, err);
		if (rv != DTPLAN_OK || w->stop)
			return rv;
	}
	return DTPLAN_OK;
}

/* A new split for the kernel-time memo (its times hold for one split's
 * stages). */
static void memo_next(const struct ctx *x)
{
	if (x->memo != NULL && ++x->memo->split == 0) {
		/* wrapped: start over */
		memset(x->memo, 0, sizeof(*x->memo));
		x->memo->split = 1;
	}
}

/*
 * Every interleaving of one split: those its balanced stages allow
 * (vp_choices()), then each other v whose chunks of whole layers the split
 * can balance instead (dtplan__stages_of()), on those stages.
 */
static enum dtplan_err walk_split(struct walk *w, struct dtplan_candidate *base,
				  const struct split *sp, struct dtplan_error *err)
{
	const struct ctx *x = w->x;
	const struct dtplan_request *r = x->req;
	struct dtplan__split rules = x->rules;
	int vps[MAX_VP], n_vp = vp_choices(x, base, vps);
	enum dtplan_err rv;
	bool other = false;

	rv = walk_split_vps(w, base, sp, vps, n_vp, err);
	rules.pp = base->pp;
	rules.schedule = base->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE : DTPLAN_SCHEDULE_1F1B;
	for (int v = 2; rv == DTPLAN_OK && !w->stop && base->pp >= 2 && v <= MAX_VP; v++) {
		struct dtplan_candidate c = *base;
		bool seen = false;

		for (int k = 0; k < n_vp; k++)
			seen = seen || vps[k] == v;
		rules.vp = v;
		if (seen || (r->vp > 0 && v != r->vp) ||
		    !allowed(&rules,
			     DTPLAN__RULE_VP_PP | DTPLAN__RULE_DUALPIPE | DTPLAN__RULE_VP_LAYERS))
			continue;
		if (dtplan__stages_of(x, base->pp, v, &c.stages, &c.stage_imbalance, NULL) !=
		    DTPLAN_OK)
			continue;
		/* other stages: other kernel times */
		memo_next(x);
		other = true;
		rv = walk_split_vps(w, &c, sp, &v, 1, err);
	}
	/* the split's next walk (another EP) has the balanced stages again */
	if (other)
		memo_next(x);
	return rv;
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

/*
 * Expert tensor-parallel degrees: the pinned one, else TP's (Megatron-LM's
 * default when --expert-tensor-parallel-size is unset, arguments.py,
 * d98e8a6) and 1 (the experts whole, as most of Megatron-Bridge's MoE
 * recipes run them, and torchtitan's EP always does), those the rules
 * allow for some EP (a dense model: TP's alone).
 */
static int etp_choices(const struct ctx *x, int tp, int *etps)
{
	const struct dtplan_request *r = x->req;
	int n = 0;

	if (r->etp > 0) {
		etps[n++] = r->etp;
		return n;
	}
	etps[n++] = tp;
	if (tp > 1 && x->n_moe > 0)
		etps[n++] = 1;
	return n;
}

/* Expert-parallel degrees: 1 for a dense model, else every divisor of the
 * experts that the rules allow beside etp (Megatron-Core folds ETP x EP
 * over TP x CP x DP; others carve EP from CP x DP, or TP x CP x DP with
 * ETP 1), or the pinned one.  An unpinned ETP other than TP's, where TP's
 * would do (a folding framework), is tried only for the EPs that do not
 * divide CP x DP, which only folding reaches: the layouts Megatron-Bridge's
 * MoE recipes fold for (src/megatron/bridge/recipes/, 067f987: DeepSeek-V3,
 * Qwen3, gpt-oss, all with EP above CP x DP), at the cost of a few more EPs
 * per split and not of every EP twice (bench/bench_plan). */
static int ep_choices(const struct ctx *x, int tp, int cp, int dp, int etp, int *eps)
{
	const struct dtplan_request *r = x->req;
	int n = 0, e = r->model.experts;
	struct dtplan__split rules = x->rules;
	unsigned ep_rules = DTPLAN__RULE_EP_EXPERTS | DTPLAN__RULE_EP_DP | DTPLAN__RULE_FRAMEWORK;

	rules.dp = dp;
	rules.cp = cp;
	rules.tp = tp;
	rules.etp = etp;
	if (r->ep > 0) {
		rules.ep = r->ep;
		if (allowed(&rules, ep_rules))
			eps[n++] = r->ep;
		return n;
	}
	rules.ep = 1;
	/* ETP without EP, unpinned: the experts unsharded beside TP, which
	 * TP's ETP beats (see below) */
	if (!(r->etp == 0 && etp != tp && x->n_moe > 0) && allowed(&rules, ep_rules))
		eps[n++] = 1;
	if (x->n_moe == 0)
		return n;
	{
		int ds[MAX_DIVISORS];
		size_t n_d = divisors(e, tp * cp * dp / etp, ds);

		const struct dtplan__framework *fw = dtplan__framework(r->framework);
		bool beyond = r->etp == 0 && etp != tp && fw != NULL && fw->fold;

		for (size_t i = 0; i < n_d && n < MAX_EP; i++) {
			rules.ep = ds[i];
			if (beyond && (cp * dp) % ds[i] == 0)
				continue;
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

			/* TP and CP split each sequence as Megatron-LM cuts it */
			rules.cp = cp;
			rules.seq = r->seq;
			if (!allowed(&rules, DTPLAN__RULE_SEQ))
				continue;
			size_t n_pp = divisors(gpus / tc, layers, pps);

			for (size_t k = 0; k < n_pp && !w->stop; k++) {
				int pp = pps[k], n_ep, n_etp, etps[2];
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
				rv = dtplan__stages_of(x, pp, 1, &c.stages, &c.stage_imbalance,
						       err);
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
				n_etp = etp_choices(x, tp, etps);
				for (int kt = 0; kt < n_etp && !w->stop; kt++) {
					/* the kernel times depend on ETP, not on EP */
					memo_next(x);
					c.etp = etps[kt];
					n_ep = ep_choices(x, tp, cp, c.dp, c.etp, eps);
					for (int ke = 0; ke < n_ep && !w->stop; ke++) {
						c.ep = eps[ke];
						if (x->fab != NULL) {
							/* the EP groups: ep ranks etp apart over
						 * the stage's TP x CP x DP, as Megatron-
						 * Core's expert rank generator forms
						 * them (tp-pp-dp only without PP: the
						 * same groups) */
							dtplan__fabric_eval(
								x->fab, c.etp,
								pp * (tc * c.dp / (c.etp * c.ep)),
								c.ep, DTPLAN_ORDER_TP_DP_PP,
								x->nvlink_bw,
								&sp.ep_ev[DTPLAN_ORDER_TP_DP_PP]);
							sp.ep_ev[DTPLAN_ORDER_TP_PP_DP] =
								sp.ep_ev[DTPLAN_ORDER_TP_DP_PP];
						}
						rv = walk_split(w, &c, x->fab != NULL ? &sp : NULL,
								err);
						if (rv != DTPLAN_OK)
							return rv;
					}
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
	dtplan__search_ctx_init(&x, req);
	x.fab = fab;
	x.exhaustive = exhaustive;
	memset(&memo, 0, sizeof(memo));
	x.memo = exhaustive ? NULL : &memo;
	x.offload = req->offload == 1;
	w.out = out;
	rv = walk_all(&w, err);
	/* ZeRO-Offload when the GPUs are too few for anything else (DeepSpeed's
	 * offload_optimizer, Megatron-LM's --optimizer-cpu-offload), over a host link */
	if (rv == DTPLAN_OK && out->n_fit == 0 && req->offload < 0 &&
	    dtplan__framework(req->framework) != NULL &&
	    dtplan__framework(req->framework)->offload && req->gpu.host_bytes_per_s > 0.0) {
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
		dtplan__rank_explain(out, w.fastest, req->global_batch);
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
