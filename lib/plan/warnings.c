/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * warnings.c: every warning of a plan, made in one place from the finished
 * plan (and the fabric it was placed on): the fabric's (nodes that differ,
 * assumed or unknown nodes, TP across domains, leaves and oversubscribed
 * uplinks), then the step's (bubble, exposed communication).
 *
 * The allocation's warnings, the ones strict mode and policy=deny refuse,
 * come only when a better allocation exists: the same nodes on fewer leaves,
 * where the best plan is predicted faster than this one by more than the
 * site's SlowdownThreshold.  A job on as few leaves as its size allows is never
 * told to ask for them (doc/internals/placement.md, "Enforcement").
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "fabric/fabric.h"
#include "plan/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every warning code, where it is made, and whether it refuses a job under
 * --dt-plan=strict or policy=deny (tests/check_warnings.sh keeps the list
 * whole: a code made anywhere and missing here fails make check).
 */
static const struct warning_kind {
	const char *code;
	bool refuses;
} warning_kinds[] = {
	/* the allocation's fabric (this file) */
	{"heterogeneous-nodes", false},
	{"assumed-nodes", false},
	{"node-not-in-topology", false},
	{"tp-exceeds-domain", false},
	{"too-many-leaves", true},
	{"oversubscribed-uplink", true},
	{"ep-oversubscribed-uplink", false},
	{"ep-crosses-nvlink-domain", true},
	/* the step (this file) */
	{"pipeline-bubble", false},
	{"exposed-communication", false},
	{"bf16-moments-megatron-only", false},
	/* the GPU the nodes have (lib/plan/plan.c) */
	{"gpu-type", false},
	{"gpu-memory", false},
	{"gpu-unknown", false},
	/* the measurement (lib/plan/measured.c) */
	{"measured-oversubscription", false},
	{"straggler", false},
	{"measurement-incomplete", false},
	{"measurement", false},
	/* where the fabric came from (plugin/remote.c, cli/cluster.c) */
	{"fabric-service", false},
};

bool dtplan_warning_refuses(const char *code)
{
	for (size_t i = 0; code != NULL && i < DTPLAN_ARRAY_SIZE(warning_kinds); i++)
		if (strcmp(code, warning_kinds[i].code) == 0)
			return warning_kinds[i].refuses;
	return false;
}

const char *dtplan_warning_code_at(size_t i)
{
	return i < DTPLAN_ARRAY_SIZE(warning_kinds) ? warning_kinds[i].code : NULL;
}

bool dtplan_plan_refused(const struct dtplan_plan *p, enum dtplan_mode mode,
			 enum dtplan_policy policy, char *reason, size_t size)
{
	if (p == NULL || (mode != DTPLAN_MODE_STRICT && policy != DTPLAN_POLICY_DENY))
		return false;
	for (size_t i = 0; i < p->n_warnings; i++) {
		if (!dtplan_warning_refuses(p->warnings[i].code))
			continue;
		if (reason != NULL && size > 0)
			snprintf(reason, size, "%s: %s", p->warnings[i].code,
				 p->warnings[i].message);
		return true;
	}
	return false;
}

enum dtplan_err dtplan_plan_add_warning(struct dtplan_plan *p, const char *code, const char *fmt,
					...)
{
	struct dtplan_warning *w;
	va_list ap;

	if (p == NULL || code == NULL || fmt == NULL)
		return DTPLAN_ERR_INVAL;
	w = realloc(p->warnings, (p->n_warnings + 1) * sizeof(*w));
	if (w == NULL)
		return DTPLAN_ERR_NOMEM;
	p->warnings = w;
	w = &p->warnings[p->n_warnings++];
	dtplan__strlcpy(w->code, code, sizeof(w->code));
	va_start(ap, fmt);
	vsnprintf(w->message, sizeof(w->message), fmt, ap);
	va_end(ap);
	return DTPLAN_OK;
}

/* ------------------------------------------------------------------------
 * The fabric's warnings
 * ---------------------------------------------------------------------- */

/* "leaf1 (4 nodes), leaf2 (4 nodes), ..." for the runs matching `pick`. */
static const char *list_runs(const struct dtplan__fabric *f, const bool *pick, char *buf,
			     size_t size)
{
	size_t used = 0, shown = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < f->n_runs && used + 1 < size; k++) {
		const struct dtplan__run *r = &f->runs[k];
		int w;

		if (pick != NULL && !pick[k])
			continue;
		if (shown == 8) {
			snprintf(buf + used, size - used, ", ...");
			break;
		}
		w = snprintf(buf + used, size - used, "%s%s (%zu node%s)", shown ? ", " : "",
			     r->name[0] ? r->name : "flat", r->n_nodes, r->n_nodes == 1 ? "" : "s");
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
		shown++;
	}
	return buf;
}

/*
 * The best plan on the same GPUs packed on the fewest leaves of the tree
 * (f->packed): a full search there, under the request as the user made it
 * (only the user's own pins stay pinned), ranked as the plan itself was.
 * *out stays untouched and false comes back when the job is on that few
 * leaves already or nothing fits there.  Not the plan's configuration
 * costed again: a split that suits thin uplinks (a pipeline across them) is
 * rarely the one a single leaf would choose, and only the best plan on each
 * layout says what the spread allocation costs.
 */
static bool packed_best(const struct dtplan_plan *p, const struct dtplan__fabric *f,
			struct dtplan_candidate *out)
{
	struct dtplan__fabric alt = *f;
	struct dtplan__search s;

	if (f->flat || f->packed == NULL || f->n_packed >= f->n_runs)
		return false;
	alt.runs = f->packed;
	alt.n_runs = f->n_packed;
	if (dtplan__search_run_fabric(&p->request, &alt, false, &s, NULL) != DTPLAN_OK ||
	    !s.have_best || !(s.best.step.total > 0.0))
		return false;
	*out = s.best;
	return true;
}

/* "leaf switch"/"leaf switches" on a tree, "block"/"blocks" on topology/block,
 * "ring"/"rings", "torus"/"toruses" on topology/ring and topology/torus3d. */
static const char *leaves_word(const struct dtplan__fabric *f, size_t n)
{
	if (f->leaf_kind != DTPLAN_LEAF_SWITCH)
		return dtplan_leaf_kind_name(f->leaf_kind, n != 1);
	return n == 1 ? "leaf switch" : "leaf switches";
}

/*
 * What to ask Slurm for to get the fewest leaves: --switches=K on a tree.
 * On blocks (topology/block has no --switches), --segment=S: S the largest
 * divisor of the job's nodes that fits the base block, so that each segment
 * lies in one block; only when that takes fewer blocks than the job has.
 * "" when nothing would.
 */
static const char *ask_for(const struct dtplan__fabric *f, char *buf, size_t size)
{
	size_t n = f->n_nodes, s;

	buf[0] = '\0';
	/* topology/ring and topology/torus3d place a job inside one ring or
	 * torus by themselves when it fits: there is nothing to ask for */
	if (f->leaf_kind == DTPLAN_LEAF_RING || f->leaf_kind == DTPLAN_LEAF_TORUS)
		return buf;
	if (!f->blocks) {
		snprintf(buf, size, "--switches=%zu", f->n_leaves_needed);
		return buf;
	}
	for (s = n < f->block_size ? n : f->block_size; s > 1 && n % s != 0; s--)
		;
	if (s >= 1 && n / s < f->n_runs)
		snprintf(buf, size, "--segment=%zu", s);
	return buf;
}

/* What the fewest-leaves allocation would gain, for the fabric's warnings. */
struct better {
	bool exists;     /* fewer leaves, predicted faster by more than the threshold */
	double step;     /* its best plan's predicted step (s) */
	double slowdown; /* this plan's step over it, minus 1 */
	char there[64];  /* its best plan's split, "TP 4 x PP 1 x DP 8" */
	char here[64];   /* this plan's */
};

/* "TP 4 x PP 2 x DP 4", with CP and EP when they are used. */
static const char *split_text(const struct dtplan_candidate *c, char *buf, size_t size)
{
	int w = c->cp > 1 ? snprintf(buf, size, "TP %d x CP %d x PP %d x DP %d", c->tp, c->cp,
				     c->pp, c->dp)
			  : snprintf(buf, size, "TP %d x PP %d x DP %d", c->tp, c->pp, c->dp);

	if (c->ep > 1 && c->etp > 0 && c->etp != c->tp && w > 0 && (size_t)w < size)
		snprintf(buf + w, size - (size_t)w, " (EP %d, ETP %d)", c->ep, c->etp);
	else if (c->ep > 1 && w > 0 && (size_t)w < size)
		snprintf(buf + w, size - (size_t)w, " (EP %d)", c->ep);
	return buf;
}

static enum dtplan_err warn_uplink(struct dtplan_plan *p, const struct dtplan__fabric *f,
				   const struct better *b, const char *kind,
				   const struct dtplan__group_links *gl, bool strided, size_t block,
				   size_t inter, double flow_bytes, bool *pick)
{
	const struct dtplan_request *r = &p->request;
	const struct dtplan__run *worst;
	char names[256], by[32], then[32], now[32], ask[64];
	double ratio = 0.0;
	size_t n = 0;

	if (!gl->crosses || !gl->net || !b->exists)
		return DTPLAN_OK;
	for (size_t k = 0; k < f->n_runs; k++) {
		const struct dtplan__run *run = &f->runs[k];

		pick[k] = run->ratio > r->oversub_threshold &&
			  dtplan__run_flows(f, run, strided, block, inter) > 0.0;
		if (pick[k]) {
			n++;
			if (run->ratio > ratio)
				ratio = run->ratio;
		}
	}
	if (n == 0)
		return DTPLAN_OK;
	worst = &f->runs[gl->worst_run];
	ask_for(f, ask, sizeof(ask));
	return dtplan_plan_add_warning(
		p, "oversubscribed-uplink",
		"%s groups cross the uplinks of %s, oversubscribed up to %.1f:1 (threshold "
		"%.1f:1): %s per step each way over %s's uplink (%.0f flows of %s), %.1f%% of "
		"the step; on %zu %s%s%s%s the best plan (%s) is predicted to take %s a step "
		"against %s here (%s)",
		kind, list_runs(f, pick, names, sizeof(names)), ratio, r->oversub_threshold,
		dtplan_format_bytes(gl->worst_flows * flow_bytes, by, sizeof(by)),
		worst->name[0] ? worst->name : "flat", gl->worst_flows, kind,
		(1.0 - 1.0 / p->best.uplink_slowdown) * 100.0, f->n_leaves_needed,
		leaves_word(f, f->n_leaves_needed), ask[0] ? " (" : "", ask, ask[0] ? ")" : "",
		b->there, dtplan_format_time(b->step, then, sizeof(then)),
		dtplan_format_time(p->best.step.total, now, sizeof(now)), b->here);
}

static enum dtplan_err fabric_warnings(struct dtplan_plan *p, const struct dtplan__fabric *f)
{
	const struct dtplan_request *r = &p->request;
	const struct dtplan_candidate *c = &p->best;
	enum dtplan_rank_order o = c->rank_order;
	struct dtplan__fabric_eval ev;
	size_t t = (size_t)c->tp, pp = (size_t)c->pp, dp = (size_t)c->dp;
	enum dtplan_err rv = DTPLAN_OK;
	struct better b = {0};
	struct dtplan_candidate there;
	char names[256], now[32], then[32], ask[64];
	bool *pick;

	pick = calloc(f->n_runs + 1, sizeof(*pick));
	if (pick == NULL)
		return DTPLAN_ERR_NOMEM;
	ask_for(f, ask, sizeof(ask));
	if (packed_best(p, f, &there)) {
		b.step = there.step.total;
		split_text(&there, b.there, sizeof(b.there));
		split_text(c, b.here, sizeof(b.here));
		b.slowdown = c->step.total / b.step - 1.0;
		/* a hair above the threshold: equal steps never differ by rounding */
		b.exists = b.slowdown > r->slowdown_threshold + 1e-9;
	}
	if (f->heterogeneous)
		rv = dtplan_plan_add_warning(p, "heterogeneous-nodes",
					     "nodes differ: %s; planning on the smallest: %d GPUs "
					     "per node, TP inside NVLink domains of %d GPUs",
					     f->hetero_reason, f->gpus_per_node, f->domain_gcd);
	if (rv == DTPLAN_OK && f->n_generic > 0)
		rv = dtplan_plan_add_warning(p, "assumed-nodes",
					     "%zu of %zu nodes have no inventory: assumed %d x %s "
					     "GPUs each, NVLink domains of %d",
					     f->n_generic, f->n_nodes, f->gpus_per_node,
					     r->gpu.name, r->gpu.domain_size);
	if (rv == DTPLAN_OK && f->n_unknown > 0)
		rv = dtplan_plan_add_warning(p, "node-not-in-topology",
					     "%zu of %zu nodes are not in the topology: placed "
					     "last under an \"unknown\" leaf, their uplink "
					     "assumed non-blocking",
					     f->n_unknown, f->n_nodes);
	if (rv == DTPLAN_OK && !dtplan__fabric_tp_fits(f, c->tp))
		rv = dtplan_plan_add_warning(p, "tp-exceeds-domain",
					     "TP %d does not fit the allocation's NVLink domains "
					     "(smallest %d GPUs, TP must divide %d): its "
					     "all-reduces cross the network (%.3f s per step)",
					     c->tp, f->min_domain, f->domain_gcd, c->step.tp_comm);
	if (rv == DTPLAN_OK && b.exists)
		rv = dtplan_plan_add_warning(p, "too-many-leaves",
					     "the %zu nodes span %zu %s (%s) where %zu "
					     "would hold them; the best plan there (%s) is "
					     "predicted to take %s a step against %s here (%s, "
					     "%.1f%% longer, threshold %.0f%%)%s%s",
					     f->n_nodes, f->n_runs, leaves_word(f, f->n_runs),
					     list_runs(f, NULL, names, sizeof(names)),
					     f->n_leaves_needed, b.there,
					     dtplan_format_time(b.step, then, sizeof(then)),
					     dtplan_format_time(c->step.total, now, sizeof(now)),
					     b.here, b.slowdown * 100.0,
					     r->slowdown_threshold * 100.0,
					     ask[0] ? ": ask for " : "", ask);
	dtplan__fabric_eval(f, c->tp, c->pp, c->dp, o, 1.0, &ev);
	if (rv == DTPLAN_OK)
		rv = warn_uplink(p, f, &b, "DP", &ev.dp, o == DTPLAN_ORDER_TP_PP_DP,
				 o == DTPLAN_ORDER_TP_PP_DP ? t * pp : t * dp,
				 o == DTPLAN_ORDER_TP_PP_DP ? 0 : t, c->dp_bytes, pick);
	if (rv == DTPLAN_OK)
		rv = warn_uplink(p, f, &b, "PP", &ev.pp, o == DTPLAN_ORDER_TP_DP_PP,
				 o == DTPLAN_ORDER_TP_DP_PP ? t * dp : t * pp,
				 o == DTPLAN_ORDER_TP_DP_PP ? 0 : t, c->pp_bytes, pick);
	free(pick);
	return rv;
}

/* The step's warnings; placed: the fabric's warnings checked TP already. */
static enum dtplan_err step_warnings(struct dtplan_plan *p, bool placed)
{
	const struct dtplan_request *r = &p->request;
	const struct dtplan_step *st = &p->best.step;
	double bubble = st->bubble / st->total;
	double exposed = (st->tp_comm + st->pp_comm + st->dp_exposed) / st->total;
	enum dtplan_err rv = DTPLAN_OK;

	/* placed: lib/fabric/placement.c checks TP against the allocation's domains */
	if (!placed && r->tp > r->gpu.domain_size)
		rv = dtplan_plan_add_warning(p, "tp-exceeds-domain",
					     "TP %d is larger than the %d-GPU NVLink domain of %s: "
					     "its all-reduces cross the network (%.3f s per step)",
					     r->tp, r->gpu.domain_size, r->gpu.name, st->tp_comm);
	else if (!placed && r->tp > 0 && r->gpus_per_node % r->tp != 0)
		rv = dtplan_plan_add_warning(
			p, "tp-exceeds-domain",
			"TP %d does not divide the %d GPUs of a node: TP groups "
			"span nodes (%.3f s per step)",
			r->tp, r->gpus_per_node, st->tp_comm);
	if (rv == DTPLAN_OK && bubble > r->bubble_threshold)
		rv = dtplan_plan_add_warning(
			p, "pipeline-bubble",
			"pipeline bubble is %.1f%% of the step (%.3f s of %.3f s, "
			"PP %d with %d micro-batches), above %.0f%%; more "
			"micro-batches or fewer stages shrink it",
			bubble * 100.0, st->bubble, st->total, p->best.pp, p->best.num_microbatches,
			r->bubble_threshold * 100.0);
	if (rv == DTPLAN_OK && exposed > r->exposed_comm_threshold)
		rv = dtplan_plan_add_warning(
			p, "exposed-communication",
			"communication not hidden behind compute is %.1f%% of the "
			"step (TP %.3f s, PP %.3f s, DP %.3f s of %.3f s), above "
			"%.0f%%",
			exposed * 100.0, st->tp_comm, st->pp_comm, st->dp_exposed, st->total,
			r->exposed_comm_threshold * 100.0);
	return rv;
}

/*
 * An expert-parallel group whose all-to-all crosses an oversubscribed leaf
 * uplink: the collective that suffers most from shared uplinks, every MoE
 * layer forward and backward.  The search keeps EP groups inside an NVLink
 * domain, else one leaf, when the time allows; a pinned or forced EP may not.
 */
static enum dtplan_err ep_warning(struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	char bytes[32];

	if (c->ep <= 1 || c->ep_links == NULL || strcmp(c->ep_links, "uplink") != 0 ||
	    !(c->ep_uplink_ratio > p->request.oversub_threshold))
		return DTPLAN_OK;
	return dtplan_plan_add_warning(
		p, "ep-oversubscribed-uplink",
		"expert-parallel groups of EP %d span leaf switches: their all-to-all (%s per "
		"GPU per step, %.3f s not hidden) crosses an uplink oversubscribed %.1f:1, above "
		"%.1f:1; a smaller EP, or TP x CP x EP within one leaf, keeps it below the uplinks",
		c->ep, dtplan_format_bytes(c->ep_bytes, bytes, sizeof(bytes)), c->step.ep_comm,
		c->ep_uplink_ratio, p->request.oversub_threshold);
}

/* The largest run of positions in one NVLink domain (GPUs). */
static size_t largest_domain(const struct dtplan__fabric *f)
{
	size_t best = 0, start = 0;

	for (size_t pos = 1; pos <= f->n_gpus; pos++)
		if (pos == f->n_gpus || f->gpu_domain[pos] != f->gpu_domain[pos - 1]) {
			if (pos - start > best)
				best = pos - start;
			start = pos;
		}
	return best;
}

/* The best plan on fabric f under p's request with the pins of `pin`
 * (dp searched); false when nothing fits. */
static bool best_pinned(const struct dtplan_plan *p, const struct dtplan__fabric *f,
			const struct dtplan_split *pin, struct dtplan_candidate *out)
{
	struct dtplan_request r = p->request;
	struct dtplan__search s;

	r.split = *pin;
	r.dp = 0;
	if (dtplan__search_run_fabric(&r, f, false, &s, NULL) != DTPLAN_OK || !s.have_best ||
	    !(s.best.step.total > 0.0))
		return false;
	*out = s.best;
	return true;
}

/*
 * Expert groups across NVLink domains (issue 33): on multi-node domains (the
 * NVL72 racks of a site's NVLinkDomain= or NVML's fabric ids) an EP group of
 * tp x ep consecutive GPUs inside one domain runs its all-to-all over
 * NVLink; one that spans two crosses the network.  The cost is this plan's
 * step against the same split with every group inside one domain (the
 * layout Slurm's --segment=N gives on topology/block: the fabric with
 * domains of one group each); warned, and refused under strict or deny,
 * when that is faster by SlowdownThreshold.  The fixes: --segment=N, and
 * the largest EP that fits the job's domains with its best plan here.
 */
static enum dtplan_err ep_domain_warning(struct dtplan_plan *p, const struct dtplan__fabric *f)
{
	const struct dtplan_candidate *c = &p->best;
	const struct dtplan_request *r = &p->request;
	/* an expert group: ep ranks etp apart, etp x ep consecutive ranks */
	int etp = c->etp > 0 ? c->etp : c->tp;
	size_t g = (size_t)f->gpus_per_node, span = (size_t)etp * (size_t)c->ep;
	struct dtplan__fabric alt = *f;
	struct dtplan_candidate inside, other;
	struct dtplan_split pin = c->split;
	char bytes[32], t1[32], t2[32], seg[96] = "", fix[192] = "", split[64];
	double slowdown;
	int e;

	if (c->ep <= 1 || c->ep_links == NULL || strcmp(c->ep_links, "nvlink") == 0 || span <= g ||
	    f->n_gpus % span != 0 || largest_domain(f) <= g)
		return DTPLAN_OK;
	alt.domain_gcd = (int)span;
	alt.min_domain = (int)span;
	alt.n_segments = f->n_gpus / span;
	if (!best_pinned(p, &alt, &pin, &inside))
		return DTPLAN_OK;
	slowdown = c->step.total / inside.step.total - 1.0;
	if (!(slowdown > r->slowdown_threshold + 1e-9))
		return DTPLAN_OK;
	if (span % g == 0 && f->n_nodes % (span / g) == 0)
		snprintf(seg, sizeof(seg),
			 "ask for --segment=%zu (topology/block keeps each group's nodes in one "
			 "rack)",
			 span / g);
	for (e = c->ep - 1; e > 1; e--)
		if (c->ep % e == 0 && f->domain_gcd > 0 && f->domain_gcd % (etp * e) == 0)
			break;
	pin = r->split; /* the user's own pins, EP e */
	pin.ep = e;
	if (e > 1 && best_pinned(p, f, &pin, &other) && other.step.total < c->step.total)
		snprintf(fix, sizeof(fix),
			 "%sEP %d, whose groups fit these domains (%s, %s a step)",
			 seg[0] ? ", or " : "", e, split_text(&other, split, sizeof(split)),
			 dtplan_format_time(other.step.total, t1, sizeof(t1)));
	return dtplan_plan_add_warning(
		p, "ep-crosses-nvlink-domain",
		"expert-parallel groups of EP %d (%zu GPUs each) span NVLink domains (the "
		"largest holds %zu of the job's GPUs): their all-to-all (%s per GPU per step) "
		"crosses the network; predicted %s a step against %s with every group inside "
		"one domain (%.1f%% longer, threshold %.0f%%)%s%s%s",
		c->ep, span, largest_domain(f),
		dtplan_format_bytes(c->ep_bytes, bytes, sizeof(bytes)),
		dtplan_format_time(c->step.total, t1, sizeof(t1)),
		dtplan_format_time(inside.step.total, t2, sizeof(t2)), slowdown * 100.0,
		r->slowdown_threshold * 100.0, seg[0] || fix[0] ? ": " : "", seg, fix);
}

/*
 * bf16 Adam moments beside fp32 master weights are Megatron Core's
 * precision-aware optimizer, which Megatron-LM's arguments and Megatron-
 * Bridge's overrides ask for: NeMo's YAML builds its OptimizerConfig from a
 * fixed set of keys, and
 * DeepSpeed keeps bf16 moments only with bf16 master weights
 * (doc/launchers.md).  Launched from DT_NEMO_OVERRIDES or the DeepSpeed
 * fragment, the moments stay fp32: the optimizer shard grows in the ratio
 * of its bytes per parameter.
 */
static enum dtplan_err moments_warning(struct dtplan_plan *p)
{
	const struct dtplan_request *r = &p->request;
	const struct dtplan_ledger *m = &p->best.memory;
	double bf16 = dtplan__optimizer_bytes(false, r->no_master_copy, true);
	double extra = m->optimizer *
		       (dtplan__optimizer_bytes(false, r->no_master_copy, false) - bf16) / bf16;
	char b1[32], b2[32], b3[32];

	if (r->moments != DTPLAN_MOMENTS_BF16 || !(m->optimizer > 0.0))
		return DTPLAN_OK;
	return dtplan_plan_add_warning(
		p, "bf16-moments-megatron-only",
		"Adam's moments in bf16 need Megatron Core's precision-aware optimizer "
		"($DT_MEGATRON_ARGS, $DT_MEGATRON_BRIDGE_OVERRIDES); NeMo's overrides and the "
		"DeepSpeed fragment keep them in fp32, and the fullest GPU then needs %s more: "
		"%s of its %s",
		dtplan_format_bytes(extra, b1, sizeof(b1)),
		dtplan_format_bytes(m->total + extra, b2, sizeof(b2)),
		dtplan_format_bytes(r->gpu.memory_bytes, b3, sizeof(b3)));
}

enum dtplan_err dtplan__plan_warnings(struct dtplan_plan *p, const struct dtplan__fabric *f,
				      struct dtplan_error *err)
{
	enum dtplan_err rv = DTPLAN_OK;

	if (f != NULL)
		rv = fabric_warnings(p, f);
	if (rv == DTPLAN_OK && f != NULL)
		rv = ep_warning(p);
	if (rv == DTPLAN_OK && f != NULL)
		rv = ep_domain_warning(p, f);
	if (rv == DTPLAN_OK)
		rv = step_warnings(p, f != NULL);
	if (rv == DTPLAN_OK)
		rv = moments_warning(p);
	if (rv != DTPLAN_OK)
		return dtplan__error(err, rv, "", 0, "out of memory");
	return DTPLAN_OK;
}
