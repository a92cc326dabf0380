/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * render.c: plan -> the readable block for people and the job log, and an
 * SVG picture of nodes and GPUs coloured by pipeline stage.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nodes listed in the rank map and drawn in the picture; the rest are counted. */
#define MAX_MAP_NODES 64
#define MAX_SVG_NODES 256
/* Stages named in the picture's legend; the rest are counted. */
#define MAX_SVG_STAGES 1024

static int nodes_of(const struct dtplan_request *r)
{
	return (r->gpus + r->gpus_per_node - 1) / r->gpus_per_node;
}

/* The trained global batch, and why when it is not the one asked for. */
static void text_batch(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;

	fprintf(f, "  micro-batch  %d x %d micro-batches (global batch %d", c->micro_batch,
		c->num_microbatches, c->global_batch);
	if (c->global_batch != p->request.global_batch)
		fprintf(f, "; %d asked, the nearest DP %d x micro-batch %d makes",
			p->request.global_batch, c->dp, c->micro_batch);
	fprintf(f, ")\n");
}

/* Layers per stage: all of them up to 16 stages, else first, middle and last. */
static void text_stages(FILE *f, const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;

	if (c->pp < 2)
		return;
	fprintf(f, "  stages       ");
	if (c->pp <= 16) {
		for (int i = 0; i < c->pp; i++)
			fprintf(f, "%s%d", i > 0 ? " + " : "", dtplan_stage_layers_at(s, c->pp, i));
		fprintf(f, " layers");
	} else {
		fprintf(f, "%d + %d x %d + %d layers", s->first, c->pp - 2, s->middle, s->last);
	}
	fprintf(f,
		" (the first stage also embeds, the last computes the output and loss); "
		"slowest stage %.2fx the mean\n",
		c->stage_imbalance);
}

static void text_memory(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_ledger *l = &p->best.memory;
	const struct dtplan_request *r = &p->request;
	double usable = dtplan_request_usable_memory(r);
	char a[32], b[32], c[32], d[32], t[32], cap[32], mem[32];

	fprintf(f,
		"  memory/GPU   %s total = weights %s + gradients %s + optimizer %s + "
		"activations %s\n",
		dtplan_format_bytes(l->total, t, sizeof(t)),
		dtplan_format_bytes(l->weights, a, sizeof(a)),
		dtplan_format_bytes(l->gradients, b, sizeof(b)),
		dtplan_format_bytes(l->optimizer, c, sizeof(c)),
		dtplan_format_bytes(l->activations, d, sizeof(d)));
	if (p->best.dualpipe)
		fprintf(f,
			"               the GPU of stages %d and %d is the fullest (%d layers)\n",
			l->stage, p->best.pp - 1 - l->stage, l->stage_layers);
	else if (p->best.pp > 1)
		fprintf(f, "               stage %d is the fullest (%d layers)\n", l->stage,
			l->stage_layers);
	fprintf(f, "               of %s usable (%s, %.0f%% kept free), %.0f%% used\n",
		dtplan_format_bytes(usable, cap, sizeof(cap)),
		dtplan_format_bytes(r->gpu.memory_bytes, mem, sizeof(mem)),
		r->memory_headroom * 100.0, l->total / usable * 100.0);
}

static void text_step(FILE *f, const struct dtplan_candidate *c)
{
	const struct dtplan_step *s = &c->step;
	char t[32], a[32], b[32], d[32], e[32], g[32], h[32];

	fprintf(f,
		"  step time    %s = compute %s + TP %s + bubble %s + PP %s + DP exposed %s"
		" + optimizer %s",
		dtplan_format_time(c->model_step > 0.0 ? c->model_step : s->total, t, sizeof(t)),
		dtplan_format_time(s->compute, a, sizeof(a)),
		dtplan_format_time(s->tp_comm, b, sizeof(b)),
		dtplan_format_time(s->bubble, d, sizeof(d)),
		dtplan_format_time(s->pp_comm, e, sizeof(e)),
		dtplan_format_time(s->dp_exposed, g, sizeof(g)),
		dtplan_format_time(s->optimizer, h, sizeof(h)));
	/* the wait for the slowest GPU (lib/plan/straggler.c), a part of the
	 * median step */
	if (s->straggler > 0.0)
		fprintf(f, " + slowest GPU %s", dtplan_format_time(s->straggler, a, sizeof(a)));
	fputc('\n', f);
	if (c->correction_runs > 0)
		fprintf(f,
			"  predicted    %s = model %s x %.2f learned from %d run%s%s on this "
			"cluster\n",
			dtplan_format_time(s->total, t, sizeof(t)),
			dtplan_format_time(c->model_step, a, sizeof(a)), c->correction,
			c->correction_runs, c->correction_runs == 1 ? "" : "s",
			c->correction_pooled ? " of other shapes" : "");
	if (c->ep > 1 || c->cp > 1)
		fprintf(f,
			"               + EP all-to-all %s + CP ring exchange %s (their exposed "
			"parts)\n",
			dtplan_format_time(s->ep_comm, a, sizeof(a)),
			dtplan_format_time(s->cp_comm, b, sizeof(b)));
	if (c->ep > 1)
		fprintf(f, "               all-to-all %s per GPU per step over %s%s\n",
			dtplan_format_bytes(c->ep_bytes, t, sizeof(t)),
			c->ep_links == NULL                  ? "?"
			: strcmp(c->ep_links, "nvlink") == 0 ? "NVLink"
			: strcmp(c->ep_links, "leaf") == 0   ? "one leaf switch"
			: strcmp(c->ep_links, "uplink") == 0 ? "leaf uplinks"
							     : "the network",
			c->ep_uplink_ratio > 1.0 ? " (oversubscribed)" : "");
	fprintf(f, "               DP/ZeRO traffic %s per step, %s per GPU over the network\n",
		dtplan_format_time(s->dp_comm, h, sizeof(h)),
		dtplan_format_bytes(c->net_bytes_per_gpu, t, sizeof(t)));
	fprintf(f, "  throughput   %.1f TFLOP/s per GPU, MFU %.1f%%\n", c->tflops_per_gpu,
		c->mfu * 100.0);
}

/* The whole run: steps, wall time with checkpoints and failures, goodput. */
static void text_training(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_training *t = &p->training;
	char tok[32], wall[32], comp[32];

	if (!p->have_training)
		return;
	fprintf(f,
		"  training     %s tokens in %.0f steps: %s of steps, %s wall with checkpoint "
		"writes and work lost to failures (goodput %.1f%%)\n",
		dtplan_format_count(t->tokens, tok, sizeof(tok)), t->steps,
		dtplan_format_time(t->compute_seconds, comp, sizeof(comp)),
		dtplan_format_time(t->wall_seconds, wall, sizeof(wall)), t->goodput * 100.0);
}

static void text_ckpt(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_ckpt *k = &p->ckpt;
	const struct dtplan_request *r = &p->request;
	char iv[32], mtbf[32], wr[32], by[32], bw[32], y[32], av[32];
	double write = p->ckpt_bytes / r->ckpt_write_bytes_per_s;

	fprintf(f, "  checkpoint   every %.1f min (%.0f steps)\n", k->interval_seconds / 60.0,
		k->interval_steps);
	fprintf(f,
		"               why: job MTBF %s (%.0f GPU-hours per GPU, %s, / %d GPUs), one "
		"write %s (%s at %s); Daly %s, Young %s, availability-optimal %s, waste "
		"%.1f%%\n",
		dtplan_format_time(k->job_mtbf_seconds, mtbf, sizeof(mtbf)), r->mtbf_gpu_hours,
		r->mtbf_source[0] != '\0' ? r->mtbf_source : dtplan_mtbf_source(r->mtbf_gpu_hours),
		r->gpus, dtplan_format_time(write, wr, sizeof(wr)),
		dtplan_format_bytes(p->ckpt_bytes, by, sizeof(by)),
		dtplan_format_rate(r->ckpt_write_bytes_per_s, bw, sizeof(bw)),
		dtplan_format_time(k->daly_seconds, iv, sizeof(iv)),
		dtplan_format_time(k->young_seconds, y, sizeof(y)),
		dtplan_format_time(k->availability_seconds, av, sizeof(av)),
		k->waste_fraction * 100.0);
}

/* One tier for people: "118.75 MB/s, 48 us one way" or "not measured". */
static const char *tier_text(const struct dtplan_tier *t, char *buf, size_t size)
{
	char bw[32], lat[32];

	if (!t->measured) {
		snprintf(buf, size, "not measured");
		return buf;
	}
	if (t->bandwidth_bytes_per_s > 0)
		dtplan_format_rate(t->bandwidth_bytes_per_s, bw, sizeof(bw));
	else
		snprintf(bw, sizeof(bw), "bandwidth not measured");
	if (t->latency_s > 0)
		dtplan_format_time(t->latency_s, lat, sizeof(lat));
	else
		snprintf(lat, sizeof(lat), "latency not measured");
	snprintf(buf, size, "%s, %s one way", bw, lat);
	return buf;
}

/* What was measured, and for each figure whether the plan used the
 * measurement or assumed the site's value. */
static void text_measured(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_measurements *m = p->measurements;
	char a[96], b[96], el[32];
	const char *inv;

	if (strcmp(m->source, "none") == 0) {
		fprintf(f, "  measured     nothing: inventories, bandwidth, latency and "
			   "oversubscription assumed\n");
		return;
	}
	if (m->failed[0] != '\0') {
		fprintf(f,
			"  measured     nothing: the %s failed (%s); inventories, bandwidth, "
			"latency and oversubscription assumed\n",
			m->source, m->failed);
		return;
	}
	fprintf(f, "  measured     %zu of %zu nodes by the %s in %s (budget %g s)\n", m->n_reported,
		m->n_nodes, strcmp(m->source, "prolog") == 0 ? "prolog" : "probe",
		dtplan_format_time(m->elapsed_s, el, sizeof(el)), m->budget_s);
	fprintf(f, "  links        intra-leaf %s; cross-leaf %s\n",
		tier_text(&m->intra, a, sizeof(a)), tier_text(&m->cross, b, sizeof(b)));
	for (size_t i = 0; i < m->n_uplinks; i++) {
		const struct dtplan_uplink *u = &m->uplinks[i];

		if (u->configured > 0)
			snprintf(a, sizeof(a), "configured %.1f:1", u->configured);
		else
			snprintf(a, sizeof(a), "none configured");
		fprintf(f, "%s%s %.1f:1 (%s%s)\n", i == 0 ? "  uplinks      " : "               ",
			u->name, u->oversubscription, a,
			u->saturated ? "" : "; not saturated: an upper bound, not used");
	}
	inv = m->n_inventories == 0            ? "assumed"
	      : m->n_inventories >= m->n_nodes ? "measured"
					       : "partly measured";
	fprintf(f,
		"  figures      inventories %s; bandwidth and latency %s%s; oversubscription "
		"%s\n",
		inv, m->used_tiers ? "measured" : "assumed",
		m->used_tiers || m->interface[0] != '\0' ? ""
							 : " (the probe ran over the host names' "
							   "network: probe_interface= names the "
							   "training fabric)",
		m->used_ratios ? "measured" : "assumed");
}

/* Rack -> node -> GPU map: each leaf switch, then its nodes, then per GPU
 * rank(tp,pp,dp)@NIC, so PP stage and DP replica read off each GPU. */
static void text_ranks(FILE *f, const struct dtplan_plan *p)
{
	size_t shown = p->n_nodes < MAX_MAP_NODES ? p->n_nodes : MAX_MAP_NODES;
	int run = -1;

	if (p->leaf_names != NULL) {
		fprintf(f, "  placement    rank order %s; uplinks crossed by %s",
			dtplan_candidate_rank_order(&p->best),
			p->best.crosses_uplinks ? p->best.crosses_uplinks : "none");
		/* what shared uplinks cost, even where no allocation avoids it */
		if (p->best.uplink_slowdown > 1.0005)
			fprintf(f, " (%.1f%% of the step)",
				(1.0 - 1.0 / p->best.uplink_slowdown) * 100.0);
		fprintf(f, "; %zu %s used, %zu needed\n", p->n_leaves_used,
			p->leaf_kind != DTPLAN_LEAF_SWITCH
				? dtplan_leaf_kind_name(p->leaf_kind, p->n_leaves_used != 1)
				: (p->n_leaves_used == 1 ? "leaf switch" : "leaf switches"),
			p->n_leaves_needed);
	}
	if (p->best.ep > 1 || p->best.cp > 1)
		fprintf(f, "  rank map     %s / node / rank(tp,pp,dp,cp,ep) per GPU\n",
			p->leaf_kind != DTPLAN_LEAF_SWITCH
				? dtplan_leaf_kind_name(p->leaf_kind, false)
				: "leaf switch");
	else
		fprintf(f, "  rank map     %s / node / rank(tp,pp,dp) per GPU\n",
			p->leaf_kind != DTPLAN_LEAF_SWITCH
				? dtplan_leaf_kind_name(p->leaf_kind, false)
				: "leaf switch");
	for (size_t n = 0; n < shown; n++) {
		if (p->node_run != NULL && p->node_run[n] != run) {
			run = p->node_run[n];
			fprintf(f, "    %s (%zu node%s, uplink %.1f:1):\n",
				p->leaf_names[run][0] ? p->leaf_names[run] : "(flat)",
				p->leaf_nodes[run], p->leaf_nodes[run] == 1 ? "" : "s",
				p->leaf_ratio[run]);
		}
		fprintf(f, "    %-16s", p->node_names[n]);
		for (size_t i = 0; i < p->n_ranks; i++) {
			const struct dtplan_rank *k = &p->ranks[i];

			if (k->node != (int)n)
				continue;
			if (p->best.ep > 1 || p->best.cp > 1)
				fprintf(f, " g%d:r%zu(%d,%d,%d,%d,%d)%s%s", k->gpu, i, k->tp_rank,
					k->pp_rank, k->dp_rank, k->cp_rank, k->ep_rank,
					k->nic[0] ? "@" : "", k->nic);
			else
				fprintf(f, " g%d:r%zu(%d,%d,%d)%s%s", k->gpu, i, k->tp_rank,
					k->pp_rank, k->dp_rank, k->nic[0] ? "@" : "", k->nic);
		}
		fputc('\n', f);
	}
	if (shown < p->n_nodes)
		fprintf(f, "    ... %zu more nodes\n", p->n_nodes - shown);
}

enum dtplan_err dtplan_plan_render_text(const struct dtplan_plan *p, char **out,
					struct dtplan_error *err)
{
	const struct dtplan_request *r;
	const struct dtplan_candidate *c;
	struct dtplan__stream s = {0};
	char count[32], buf[256], from[96], spread[512];

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	if (dtplan__stream_open(&s, err) != DTPLAN_OK)
		return DTPLAN_ERR_NOMEM;
	r = &p->request;
	c = &p->best;
	dtplan_request_seq_source(r, from, sizeof(from));
	fprintf(s.f, "dtplan plan\n");
	fprintf(s.f,
		"  model        %s: %s parameters, %d layers, hidden %d, %d heads (%d kv), "
		"seq %d%s%s%s\n",
		r->model.name, dtplan_format_count(r->model.params, count, sizeof(count)),
		r->model.layers, r->model.hidden, r->model.heads,
		r->model.kv_heads > 0 ? r->model.kv_heads : r->model.heads,
		dtplan_request_seq(r, NULL), from[0] ? " (" : "", from, from[0] ? ")" : "");
	if (r->model.experts > 0)
		fprintf(s.f,
			"               %s active: %d experts (%d per token) in %d MoE layers\n",
			dtplan_format_count(r->model.active_params, buf, sizeof(buf)),
			r->model.experts, r->model.top_k, dtplan_model_moe_layers(&r->model));
	fprintf(s.f, "  GPUs         %d x %s (%d %s of %d)\n", r->gpus, r->gpu.name, nodes_of(r),
		nodes_of(r) == 1 ? "node" : "nodes", r->gpus_per_node);
	if (c->etp > 0 && c->ep > 0 && (c->etp != c->tp || (c->cp * c->dp) % c->ep != 0))
		/* Megatron-Core's folding: the experts' groups over the same
		 * TP x CP x DP ranks of each stage */
		fprintf(s.f,
			"  parallelism  TP %d x CP %d x PP %d x DP %d (experts: ETP %d x EP %d x "
			"EDP "
			"%d of TP x CP x DP)",
			c->tp, c->cp, c->pp, c->dp, c->etp, c->ep,
			c->tp * c->cp * c->dp / (c->etp * c->ep));
	else if (c->ep > 1)
		fprintf(s.f, "  parallelism  TP %d x CP %d x PP %d x DP %d (EP %d of %s)", c->tp,
			c->cp, c->pp, c->dp, c->ep, c->cp > 1 ? "CP x DP" : "DP");
	else if (c->cp > 1)
		fprintf(s.f, "  parallelism  TP %d x CP %d x PP %d x DP %d", c->tp, c->cp, c->pp,
			c->dp);
	else
		fprintf(s.f, "  parallelism  TP %d x PP %d x DP %d", c->tp, c->pp, c->dp);
	if (c->vp > 1)
		fprintf(s.f, ", %d interleaved chunks per stage", c->vp);
	if (c->dualpipe)
		fputs(", DualPipe (each GPU holds stage i and PP - 1 - i)", s.f);
	fprintf(s.f, "\n  ZeRO         stage %d%s\n", c->zero,
		c->offload ? ", optimizer state in host memory (ZeRO-Offload)" : "");
	fprintf(s.f, "  kernels      %s, %s attention, %s memory count, %s gradients%s\n",
		dtplan_precision_name(r->precision), dtplan_attention_name(r->attention),
		dtplan_framework_name(r->framework),
		dtplan_grads_name(dtplan__grads_held(r->framework, r->grads)),
		r->moments == DTPLAN_MOMENTS_BF16 ? ", bf16 Adam moments" : "");
	text_stages(s.f, c);
	text_batch(s.f, p);
	fprintf(s.f, "  recompute    %s%s\n", dtplan_recompute_name(c->recompute),
		c->recompute == DTPLAN_RECOMPUTE_SELECTIVE && dtplan__selective_per_op(r->framework)
			? " (per-op: every second matrix multiply and the element-wise work rerun)"
			: "");
	text_memory(s.f, p);
	text_step(s.f, c);
	dtplan_plan_spread_text(p, spread, sizeof(spread));
	fputs(spread, s.f);
	if (p->have_runner_up)
		fprintf(s.f, "  runner-up    %s\n               why not: %s\n",
			dtplan__candidate_describe(&p->runner_up, buf, sizeof(buf)),
			p->runner_up_reason);
	text_ckpt(s.f, p);
	text_training(s.f, p);
	fprintf(s.f, "  searched     %zu configurations, %zu fit in memory\n", p->n_considered,
		p->n_fit);
	if (p->measurements != NULL)
		text_measured(s.f, p);
	for (size_t i = 0; i < p->n_warnings; i++)
		fprintf(s.f, "  warning      [%s] %s\n", p->warnings[i].code,
			p->warnings[i].message);
	if (p->degraded)
		fprintf(s.f, "  degraded     %s\n", p->degraded_reason);
	if (p->n_ranks > 0 && p->n_nodes > 0)
		text_ranks(s.f, p);
	return dtplan__stream_finish(&s, out, err);
}

/* ------------------------------------------------------------------------
 * SVG
 * ---------------------------------------------------------------------- */

static void xml_text(FILE *f, const char *t)
{
	for (; *t != '\0'; t++) {
		switch (*t) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*t, f);
		}
	}
}

/*
 * Stage colour: hues a golden angle (137.5 degrees) apart, so that any
 * number of stages spreads around the wheel without repeating; above 12
 * stages the lightness also cycles through four levels, so that the stages
 * whose hues come close (8, 21, 34, 55, 89 apart) differ in lightness.  Up
 * to 128 stages no two share a colour (tests/test_render.c).  The text on
 * a colour is black or white, whichever contrasts more (WCAG's relative
 * luminance; at least 4.6:1 for every colour made here).
 */
struct svg_colour {
	char fill[8], ink[8];
};

static double hsl_part(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

static double srgb_linear(int c)
{
	double v = c / 255.0;

	return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static void stage_colour(int stage, int pp, struct svg_colour *c)
{
	static const double levels[] = {0.60, 0.40, 0.76, 0.50};
	double h = fmod(stage * 137.50776405, 360.0) / 360.0, s = 0.70;
	double l = pp > 12 ? levels[(unsigned)stage % 4] : 0.62,
	       q = l < 0.5 ? l * (1 + s) : l + s - l * s;
	double p = 2 * l - q, y;
	int rgb[3];

	for (int i = 0; i < 3; i++)
		rgb[i] = (int)lround(255 * hsl_part(p, q, h + (1 - i) / 3.0));
	snprintf(c->fill, sizeof(c->fill), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
	y = 0.2126 * srgb_linear(rgb[0]) + 0.7152 * srgb_linear(rgb[1]) +
	    0.0722 * srgb_linear(rgb[2]);
	/* contrast with black (y + 0.05) / 0.05 against white 1.05 / (y + 0.05) */
	snprintf(c->ink, sizeof(c->ink), "%s", (y + 0.05) * (y + 0.05) >= 0.0525 ? "#000" : "#fff");
}

/* One GPU as the picture draws it: its rank (-1 none), PP stage, DP rank
 * and TP group (the ranks' index / TP: TP is the fastest in every order). */
struct svg_gpu {
	int rank, stage, dp, tp_group;
};

/* The ranks on the nodes shown, by node * gpn + gpu: from the plan's ranks,
 * else from its rank order (TP fastest, CP, then DP and PP or PP and DP). */
static void svg_gpus(const struct dtplan_plan *p, int shown, struct svg_gpu *at)
{
	const struct dtplan_candidate *c = &p->best;
	int gpn = p->request.gpus_per_node, tp = c->tp > 0 ? c->tp : 1;
	int cp = c->cp > 0 ? c->cp : 1, dp = c->dp > 0 ? c->dp : 1, pp = c->pp > 0 ? c->pp : 1;

	for (long k = 0; k < (long)shown * gpn; k++)
		at[k] = (struct svg_gpu){-1, -1, -1, -1};
	if (p->n_ranks > 0) {
		for (size_t i = 0; i < p->n_ranks; i++) {
			const struct dtplan_rank *k = &p->ranks[i];

			if (k->node >= 0 && k->node < shown && k->gpu >= 0 && k->gpu < gpn)
				at[(long)k->node * gpn + k->gpu] =
					(struct svg_gpu){(int)i, k->pp_rank, k->dp_rank,
							 (int)(i / (size_t)tp)};
		}
		return;
	}
	for (long k = 0; k < (long)shown * gpn && k < p->request.gpus; k++) {
		long rest = k / ((long)tp * cp);
		bool pp_inner = c->rank_order == DTPLAN_ORDER_TP_PP_DP;

		at[k] = (struct svg_gpu){(int)k, (int)(pp_inner ? rest % pp : rest / dp),
					 (int)(pp_inner ? rest / pp : rest % dp), (int)(k / tp)};
	}
}

/* The TP groups of one node's row: an outline around each run of GPUs of
 * one group (TP above 1). */
static void svg_tp_outlines(FILE *f, const struct svg_gpu *row, int n, int x, int y, int pitch,
			    int gw)
{
	for (int g = 0; g < n;) {
		int end = g + 1;

		while (end < n && row[g].tp_group >= 0 && row[end].tp_group == row[g].tp_group)
			end++;
		if (row[g].tp_group >= 0)
			fprintf(f,
				"<rect class=\"tp\" x=\"%d.5\" y=\"%d.5\" width=\"%d\" "
				"height=\"%d\"/>\n",
				x + g * pitch - 3, y - 3, (end - g - 1) * pitch + gw + 5, gw + 5);
		g = end;
	}
}

/* What the marks mean, then one entry per stage: "stage N" by its colour up
 * to 32 stages, else the stage's number printed on its colour; the first
 * MAX_SVG_STAGES, the rest counted.  Returns the height it takes; draws only
 * when f is not NULL. */
static int svg_legend(FILE *f, const struct dtplan_plan *p, int y, int width, int pad)
{
	int pp = p->best.pp > 0 ? p->best.pp : 1, compact = pp > 32;
	int named = pp < MAX_SVG_STAGES ? pp : MAX_SVG_STAGES;
	int w = compact ? 26 : 70, h = compact ? 18 : 16, per_row = (width - 2 * pad) / w;
	int rows, more = named < pp ? 16 : 0;
	struct svg_colour c;

	if (per_row < 1)
		per_row = 1;
	rows = (named + per_row - 1) / per_row;
	if (f == NULL)
		return 22 + rows * h + more + 4;
	fprintf(f, "<g class=\"key\">");
	if (p->best.tp > 1)
		fprintf(f,
			"<rect class=\"tp\" x=\"%d.5\" y=\"%d.5\" width=\"20\" height=\"11\"/>"
			"<text x=\"%d\" y=\"%d\">a TP group of %d GPUs;</text>",
			pad, y + 2, pad + 26, y + 12, p->best.tp);
	else
		fprintf(f, "<text x=\"%d\" y=\"%d\">TP 1: no TP groups;</text>", pad, y + 12);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\">on each GPU its PP stage (colour and number) and "
		"dN its DP rank (of %d); grey: no rank</text></g>\n",
		pad + (p->best.tp > 1 ? 150 : 122), y + 12, p->best.dp);
	y += 22;
	for (int i = 0; i < named; i++) {
		int x = pad + (i % per_row) * w, ey = y + (i / per_row) * h;

		stage_colour(i, pp, &c);
		if (compact)
			fprintf(f,
				"<g class=\"stage-key\"><rect x=\"%d\" y=\"%d\" width=\"%d\" "
				"height=\"%d\" fill=\"%s\"/><text class=\"st\" x=\"%d\" y=\"%d\" "
				"fill=\"%s\">%d</text></g>\n",
				x, ey, w - 2, h - 2, c.fill, x + w / 2 - 1, ey + h - 6, c.ink, i);
		else
			fprintf(f,
				"<g class=\"stage-key\"><rect x=\"%d\" y=\"%d\" width=\"12\" "
				"height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">stage "
				"%d</text></g>\n",
				x, ey, c.fill, x + 16, ey + 10, i);
	}
	if (more)
		fprintf(f, "<text x=\"%d\" y=\"%d\">... %d more stages</text>\n", pad,
			y + rows * h + 12, pp - named);
	return 22 + rows * h + more + 4;
}

/* The picture's header: size, title, styles, background, heading. */
static void svg_head(FILE *f, const struct dtplan_plan *p, int width, int height, int pad)
{
	const struct dtplan_candidate *c = &p->best;

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n",
		width, height);
	fprintf(f, "<title>dtplan plan: ");
	xml_text(f, p->request.model.name);
	fprintf(f, " on %d GPUs, TP %d x PP %d x DP %d", p->request.gpus, c->tp, c->pp, c->dp);
	if (c->cp > 1 || c->ep > 1)
		fprintf(f, ", CP %d, EP %d", c->cp, c->ep);
	fprintf(f, "</title>\n");
	fprintf(f, "<style>.st{font-size:10px;font-weight:bold;text-anchor:middle}"
		   ".dp{font-size:7px;text-anchor:middle}"
		   ".tp{fill:none;stroke:#000;stroke-width:1.5}</style>\n");
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">", pad);
	xml_text(f, p->request.model.name);
	fprintf(f, ": TP %d x PP %d x DP %d", c->tp, c->pp, c->dp);
	if (c->cp > 1 || c->ep > 1)
		fprintf(f, " (CP %d, EP %d)", c->cp, c->ep);
	fprintf(f, ", ZeRO-%d on %d x ", c->zero, p->request.gpus);
	xml_text(f, p->request.gpu.name);
	fprintf(f, "</text>\n");
}

/* One GPU: its stage's colour, its stage's number and its DP rank. */
static void svg_gpu(FILE *f, const struct dtplan_plan *p, const struct svg_gpu *k, int g, int gx,
		    int gy, int gw)
{
	struct svg_colour c = {"#dddddd", "#000"};

	if (k->stage >= 0)
		stage_colour(k->stage, p->best.pp, &c);
	fprintf(f,
		"<rect class=\"gpu\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"%s\" stroke=\"#555\" stroke-width=\"0.5\"><title>GPU %d",
		gx, gy, gw, gw, c.fill, g);
	if (k->rank < 0) {
		fprintf(f, "</title></rect>\n");
		return;
	}
	fprintf(f,
		", rank %d, PP stage %d, DP rank %d, TP group %d</title></rect>\n"
		"<text class=\"st\" x=\"%d\" y=\"%d\" fill=\"%s\">%d</text>"
		"<text class=\"dp\" x=\"%d\" y=\"%d\" fill=\"%s\">d%d</text>\n",
		k->rank, k->stage, k->dp, k->tp_group, gx + gw / 2, gy + 11, c.ink, k->stage,
		gx + gw / 2, gy + gw - 3, c.ink, k->dp);
}

enum dtplan_err dtplan_plan_render_svg(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err)
{
	const int gw = 24, pitch = 32, pad = 8, label = 16, cols = 4;
	struct dtplan__stream s = {0};
	struct svg_gpu *at;
	int n_nodes, gpn, shown, node_w, node_h, rows, width, height, legend_y;
	bool hot, any_hot = false;
	char name[80];

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	gpn = p->request.gpus_per_node > 0 ? p->request.gpus_per_node : 1;
	n_nodes = p->n_nodes > 0 ? (int)p->n_nodes : nodes_of(&p->request);
	shown = n_nodes < MAX_SVG_NODES ? n_nodes : MAX_SVG_NODES;
	at = calloc((size_t)(shown > 0 ? shown : 1) * (size_t)gpn, sizeof(*at));
	if (at == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	if (dtplan__stream_open(&s, err) != DTPLAN_OK) {
		free(at);
		return DTPLAN_ERR_NOMEM;
	}
	svg_gpus(p, shown, at);
	node_w = pad * 2 + (gpn < 8 ? gpn : 8) * pitch - (pitch - gw);
	node_h = label + ((gpn + 7) / 8) * pitch + 4;
	rows = (shown + cols - 1) / cols;
	width = cols * (node_w + pad) + pad;
	if (width < 640)
		width = 640;
	legend_y = 34 + rows * (node_h + pad) + (shown < n_nodes ? 18 : 0);
	height = legend_y + svg_legend(NULL, p, 0, width, pad);
	svg_head(s.f, p, width, height, pad);
	for (int n = 0; n < shown; n++) {
		int x = pad + (n % cols) * (node_w + pad), y = 34 + (n / cols) * (node_h + pad);

		if (p->n_nodes > 0)
			snprintf(name, sizeof(name), "%.40s", p->node_names[n]);
		else
			snprintf(name, sizeof(name), "node %d", n);
		/* racks: the leaf's name after the node's; a red border marks a
		 * leaf whose oversubscribed uplink the job's groups cross */
		hot = false;
		if (p->node_run != NULL && p->n_nodes > 0) {
			int run = p->node_run[n];

			if (p->leaf_names[run][0] != '\0')
				snprintf(name + strlen(name), sizeof(name) - strlen(name),
					 " @ %.30s", p->leaf_names[run]);
			hot = p->leaf_ratio[run] > p->request.oversub_threshold &&
			      p->best.crosses_uplinks != NULL &&
			      strcmp(p->best.crosses_uplinks, "none") != 0 && p->n_leaves_used > 1;
			any_hot = any_hot || hot;
		}
		fprintf(s.f,
			"<g class=\"node%s\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"rx=\"4\" fill=\"#f4f4f4\" stroke=\"%s\" stroke-width=\"%d\"/>\n"
			"<text x=\"%d\" y=\"%d\">",
			hot ? " oversubscribed" : "", x, y, node_w, node_h, hot ? "#c00" : "#888",
			hot ? 2 : 1, x + pad, y + label - 3);
		xml_text(s.f, name);
		fprintf(s.f, "</text>\n");
		for (int g = 0; g < gpn; g++)
			svg_gpu(s.f, p, &at[(long)n * gpn + g], g, x + pad + (g % 8) * pitch,
				y + label + 2 + (g / 8) * pitch, gw);
		for (int g = 0; g < gpn && p->best.tp > 1; g += 8)
			svg_tp_outlines(s.f, &at[(long)n * gpn + g], gpn - g < 8 ? gpn - g : 8,
					x + pad, y + label + 2 + (g / 8) * pitch, pitch, gw);
		fprintf(s.f, "</g>\n");
	}
	free(at);
	if (shown < n_nodes)
		fprintf(s.f, "<text x=\"%d\" y=\"%d\">... %d more nodes</text>\n", pad,
			legend_y - 6, n_nodes - shown);
	if (any_hot) {
		fprintf(s.f,
			"<text x=\"%d\" y=\"20\" text-anchor=\"end\" fill=\"#c00\">red border: "
			"leaf uplink above %.1f:1 crossed by ",
			width - pad, p->request.oversub_threshold);
		xml_text(s.f, p->best.crosses_uplinks);
		fprintf(s.f, " traffic</text>\n");
	}
	svg_legend(s.f, p, legend_y, width, pad);
	fprintf(s.f, "</svg>\n");
	return dtplan__stream_finish(&s, out, err);
}
