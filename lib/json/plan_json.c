/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_json.c: plan -> JSON ("dtplan.plan/1").  The only Jansson user for
 * plans.  Objects keep insertion order, so the text does not depend on
 * Jansson's hash seed.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"
#include "json/json_int.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A JSON number for v; non-finite values (never expected) become null. */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A whole count (parameters, steps) as a JSON integer; null when not finite. */
static json_t *count(double v)
{
	return isfinite(v) && fabs(v) < 9e18 ? json_integer((json_int_t)llround(v)) : json_null();
}

/* Sets key to a fresh value; false (and value freed) on failure. */
static bool put(json_t *obj, const char *key, json_t *value)
{
	return value != NULL && json_object_set_new(obj, key, value) == 0;
}

static json_t *model_json(const struct dtplan_request *r)
{
	const struct dtplan_model *m = &r->model;
	enum dtplan_seq_from from;
	int seq = dtplan_request_seq(r, &from);
	json_t *o = json_pack("{s:s, s:o, s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "name", m->name,
			      "params", count(m->params), "active_params",
			      count(m->active_params > 0.0 ? m->active_params : m->params),
			      "layers", m->layers, "hidden", m->hidden, "heads", m->heads,
			      "kv_heads", m->kv_heads > 0 ? m->kv_heads : m->heads, "seq", seq,
			      "experts", m->experts, "top_k", m->top_k);

	/* which layers are MoE layers, for MoE models only (dense plans read
	 * as before) */
	if (o != NULL && !put(o, "seq_from", json_string(dtplan_seq_from_name(from)))) {
		json_decref(o);
		return NULL;
	}
	if (o != NULL && m->experts > 0 &&
	    (!put(o, "first_dense", json_integer(m->first_dense)) ||
	     !put(o, "moe_every", json_integer(m->moe_every > 1 ? m->moe_every : 1)) ||
	     !put(o, "moe_every_from_zero", json_boolean(m->moe_every_from_zero)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *memory_json(const struct dtplan_ledger *l, double capacity)
{
	return json_pack("{s:{s:o, s:o, s:o, s:o, s:o}, s:o, s:i, s:i}", "bytes_per_gpu", "weights",
			 num(l->weights), "gradients", num(l->gradients), "optimizer",
			 num(l->optimizer), "activations", num(l->activations), "total",
			 num(l->total), "capacity_bytes", num(capacity), "fullest_stage", l->stage,
			 "fullest_stage_layers", l->stage_layers);
}

static json_t *prediction_json(const struct dtplan_candidate *c)
{
	const struct dtplan_step *s = &c->step;

	json_t *o, *cal = json_null();
	char cls[48];

	if (c->correction_runs > 0) {
		dtplan_shape_class(c, cls, sizeof(cls));
		cal = json_pack("{s:o, s:o, s:i, s:s, s:s}", "model_step_seconds",
				num(c->model_step), "factor", num(c->correction), "runs",
				c->correction_runs, "shape_class", cls, "learned_from",
				c->correction_pooled ? "other shapes" : "this shape");
	}
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
		      "s:s, s:o, s:o, s:o}",
		      "step_seconds", num(s->total), "compute_seconds", num(s->compute),
		      "tp_comm_seconds", num(s->tp_comm), "pp_comm_seconds", num(s->pp_comm),
		      "bubble_seconds", num(s->bubble), "dp_comm_seconds", num(s->dp_comm),
		      "dp_exposed_seconds", num(s->dp_exposed), "optimizer_seconds",
		      num(s->optimizer), "tflops_per_gpu", num(c->tflops_per_gpu), "mfu",
		      num(c->mfu), "net_bytes_per_gpu", num(c->net_bytes_per_gpu),
		      "ep_comm_seconds", num(s->ep_comm), "cp_comm_seconds", num(s->cp_comm),
		      "ep_bytes_per_gpu", num(c->ep_bytes), "ep_links",
		      c->ep_links != NULL ? c->ep_links : "none", "ep_uplink_ratio",
		      num(c->ep_uplink_ratio), "model_step_seconds",
		      num(c->model_step > 0.0 ? c->model_step : s->total), "calibration", cal);
	/* the spread: step_seconds is the median (lib/plan/straggler.c) */
	if (o != NULL &&
	    (json_object_set_new(o, "step_p50_seconds", num(s->total)) != 0 ||
	     json_object_set_new(o, "step_p95_seconds",
				 num(c->step_p95 > 0.0 ? c->step_p95 : s->total)) != 0 ||
	     json_object_set_new(o, "straggler_seconds", num(s->straggler)) != 0 ||
	     json_object_set_new(o, "step_cv", num(c->step_cv)) != 0)) {
		json_decref(o);
		o = NULL;
	}
	/* where step_cv came from; unknown (a plan read from older JSON): absent */
	if (o != NULL && c->step_cv_from != DTPLAN_CV_FROM_UNKNOWN &&
	    (!put(o, "step_cv_from", json_string(dtplan_cv_from_name(c->step_cv_from))) ||
	     !put(o, "step_cv_runs", json_integer(c->step_cv_runs)))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static json_t *stages_json(const struct dtplan_candidate *c)
{
	json_t *a = json_array();

	for (int i = 0; a != NULL && i < c->pp; i++)
		if (json_array_append_new(a, json_integer(dtplan_stage_layers_at(&c->stages, c->pp,
										 i))) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *parallelism_json(const struct dtplan_candidate *c)
{
	json_t *o =
		json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:o, s:o, s:i, s:b}",
			  "tp", c->tp, "pp", c->pp, "dp", c->dp, "ep", c->ep > 1 ? c->ep : 1, "cp",
			  c->cp > 1 ? c->cp : 1, "zero", c->zero, "micro_batch", c->micro_batch,
			  "num_microbatches", c->num_microbatches, "global_batch", c->global_batch,
			  "recompute", dtplan_recompute_name(c->recompute), "layers_per_stage",
			  stages_json(c), "stage_imbalance", num(c->stage_imbalance), "vp",
			  c->vp > 1 ? c->vp : 1, "offload", c->offload);

	/* only when not TP's: the plans of before read the same */
	if (o != NULL && c->etp > 0 && c->etp != c->tp && !put(o, "etp", json_integer(c->etp))) {
		json_decref(o);
		return NULL;
	}
	/* only when not 1F1B: the plans of before read the same */
	if (o != NULL && c->dualpipe &&
	    !put(o, "schedule", json_string(dtplan_schedule_name(DTPLAN_SCHEDULE_DUALPIPE)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *runner_up_json(const struct dtplan_plan *p)
{
	json_t *o = parallelism_json(&p->runner_up);

	if (o == NULL)
		return NULL;
	if (!put(o, "step_seconds", num(p->runner_up.step.total)) ||
	    !put(o, "memory_bytes_per_gpu", num(p->runner_up.memory.total)) ||
	    !put(o, "net_bytes_per_gpu", num(p->runner_up.net_bytes_per_gpu)) ||
	    !put(o, "reason", json_string(p->runner_up_reason))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *checkpoint_json(const struct dtplan_plan *p)
{
	const struct dtplan_ckpt *c = &p->ckpt;
	double write = p->request.ckpt_write_bytes_per_s > 0.0
			       ? p->ckpt_bytes / p->request.ckpt_write_bytes_per_s
			       : 0.0;

	return json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o}", "interval_seconds",
			 num(c->interval_seconds), "interval_steps",
			 count(floor(c->interval_steps)), "young_seconds", num(c->young_seconds),
			 "daly_seconds", num(c->daly_seconds), "mtbf_source",
			 p->request.mtbf_source[0] != '\0'
				 ? p->request.mtbf_source
				 : dtplan_mtbf_source(p->request.mtbf_gpu_hours),
			 "availability_seconds", num(c->availability_seconds), "write_seconds",
			 num(write), "job_mtbf_seconds", num(c->job_mtbf_seconds), "waste_fraction",
			 num(c->waste_fraction), "bytes", num(p->ckpt_bytes));
}

/* The whole run at the plan's step, or null when no tokens were asked. */
static json_t *training_json(const struct dtplan_plan *p)
{
	const struct dtplan_training *t = &p->training;

	if (!p->have_training)
		return json_null();
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "tokens", num(t->tokens), "steps",
			 count(t->steps), "compute_seconds", num(t->compute_seconds),
			 "wall_seconds", num(t->wall_seconds), "goodput", num(t->goodput));
}

static json_t *warnings_json(const struct dtplan_plan *p)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < p->n_warnings; i++) {
		json_t *w = json_pack("{s:s, s:s}", "code", p->warnings[i].code, "message",
				      p->warnings[i].message);

		if (w == NULL || json_array_append_new(a, w) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

/* Leaf switches in rank order: name, the plan's nodes under it, uplink ratio. */
static json_t *leaves_json(const struct dtplan_plan *p)
{
	json_t *a = json_array();

	for (size_t k = 0; a != NULL && p->leaf_names != NULL && k < p->n_leaves_used; k++) {
		json_t *l = json_pack("{s:s, s:I, s:f}", "name", p->leaf_names[k], "nodes",
				      (json_int_t)p->leaf_nodes[k], "oversubscription",
				      p->leaf_ratio[k]);

		if (l == NULL || json_array_append_new(a, l) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

static json_t *placement_json(const struct dtplan_plan *p)
{
	json_t *o = NULL, *nodes = json_array(), *ranks = json_array(), *leaves;

	if (nodes == NULL || ranks == NULL)
		goto fail;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (json_array_append_new(nodes, json_string(p->node_names[i])) != 0)
			goto fail;
	for (size_t i = 0; i < p->n_ranks; i++) {
		const struct dtplan_rank *r = &p->ranks[i];
		json_t *j = json_pack("{s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s}", "rank",
				      (json_int_t)i, "node", r->node, "gpu", r->gpu, "local_rank",
				      r->local_rank, "tp_rank", r->tp_rank, "pp_rank", r->pp_rank,
				      "dp_rank", r->dp_rank, "cp_rank", r->cp_rank, "ep_rank",
				      r->ep_rank, "nic", r->nic);

		/* the experts' coordinates where they are not the attention's
		 * (EP, or an ETP of its own): the plans of before read the same */
		if (j != NULL &&
		    (p->best.ep > 1 || (p->best.etp > 0 && p->best.etp != p->best.tp)) &&
		    (!put(j, "etp_rank", json_integer(r->etp_rank)) ||
		     !put(j, "edp_rank", json_integer(r->edp_rank)))) {
			json_decref(j);
			goto fail;
		}
		if (j == NULL || json_array_append_new(ranks, j) != 0)
			goto fail;
	}
	leaves = leaves_json(p);
	if (leaves == NULL)
		goto fail;
	o = json_pack("{s:o, s:s, s:s, s:f, s:s, s:I, s:I, s:o, s:o}", "nodes", nodes,
		      "crosses_uplinks", p->best.crosses_uplinks ? p->best.crosses_uplinks : "none",
		      "rank_order", dtplan_candidate_rank_order(&p->best), "uplink_slowdown",
		      p->best.uplink_slowdown, "leaf_kind",
		      dtplan_leaf_kind_name(p->leaf_kind, false), "leaves_used",
		      (json_int_t)p->n_leaves_used, "leaves_needed", (json_int_t)p->n_leaves_needed,
		      "leaves", leaves, "ranks", ranks);
	return o; /* json_pack stole nodes, leaves and ranks, even on failure */
fail:
	json_decref(nodes);
	json_decref(ranks);
	return NULL;
}

/* A string the caller made and hands over (NULL: out of memory). */
static json_t *string_take(char *text)
{
	json_t *j = text != NULL ? json_string(text) : NULL;

	free(text);
	return j;
}

/* A path or null. */
static json_t *path_or_null(const char *path)
{
	return path != NULL ? json_string(path) : json_null();
}

/* torchrun's options when its static rendezvous numbers ranks as the plan does. */
static json_t *torchrun_json(const struct dtplan_plan *p, const struct dtplan_launch_in *l)
{
	int nnodes, per;

	if (!dtplan_launch_torchrun(p, &nnodes, &per))
		return json_null();
	return json_pack("{s:i, s:i, s:s, s:o, s:o}", "nnodes", nnodes, "nproc_per_node", per,
			 "rdzv_backend", "static", "master_addr", path_or_null(l->master_addr),
			 "master_port",
			 l->master_port > 0 ? json_integer(l->master_port) : json_null());
}

/* The job-wide launch variables, as dtplan_launch_env() sets them. */
static json_t *launch_env_json(const struct dtplan_plan *p, const struct dtplan_launch_in *l)
{
	struct dtplan_env env;
	json_t *o = NULL;

	dtplan_env_init(&env);
	if (dtplan_launch_env(p, l, &env, NULL) != DTPLAN_OK)
		goto out;
	o = json_object();
	for (size_t i = 0; o != NULL && i < env.n; i++) {
		if (!put(o, env.vars[i].name, json_string(env.vars[i].value))) {
			json_decref(o);
			o = NULL;
		}
	}
out:
	dtplan_env_fini(&env);
	return o;
}

/*
 * What the frameworks take (lib/launch/launch.c): Megatron-LM's arguments, NeMo's
 * overrides, the DeepSpeed fragment, torchrun's options, the files beside
 * the plan and the variables a job gets.  null for a plan without a split.
 */
static json_t *launch_json(const struct dtplan_plan *p, const struct dtplan_launch_in *l)
{
	const struct dtplan_candidate *c = &p->best;
	char *megatron = NULL, *nemo = NULL, *ds = NULL, *titan = NULL, *bridge = NULL;
	json_t *o = NULL, *deepspeed = NULL, *titan_why = NULL, *bridge_why = NULL,
	       *nemo_why = NULL;
	struct dtplan_error why = {0}, bwhy = {0}, nwhy = {0};

	if (c->tp < 1 || c->pp < 1 || c->dp < 1 || c->micro_batch < 1 || c->num_microbatches < 1)
		return json_null();
	if (dtplan_launch_megatron_args(p, &megatron, NULL) != DTPLAN_OK ||
	    dtplan_launch_deepspeed_config(p, &ds, NULL) != DTPLAN_OK)
		goto out;
	/* NeMo's and Megatron-Bridge's overrides and torchtitan's options, or
	 * why they cannot run the plan as it is */
	if (dtplan_launch_nemo_overrides(p, &nemo, &nwhy) != DTPLAN_OK) {
		nemo = NULL;
		nemo_why = json_string(nwhy.text);
		if (nemo_why == NULL)
			goto out;
	}
	if (dtplan_launch_megatron_bridge_overrides(p, &bridge, &bwhy) != DTPLAN_OK) {
		bridge = NULL;
		bridge_why = json_string(bwhy.text);
		if (bridge_why == NULL)
			goto out;
	}
	if (dtplan_launch_torchtitan_args(p, &titan, &why) != DTPLAN_OK) {
		titan_why = json_string(why.text);
		if (titan_why == NULL)
			goto out;
	}
	/* One text for the file and the plan: the fragment is parsed back. */
	deepspeed = json_loads(ds, 0, NULL);
	if (deepspeed == NULL)
		goto out;
	o = json_pack("{s:o, s:o, s:o, s:o, s:O, s:o, s:{s:o, s:o, s:o}, s:o}", "megatron_args",
		      string_take(megatron), "nemo_overrides",
		      nemo != NULL ? string_take(nemo) : json_null(), "megatron_bridge_overrides",
		      bridge != NULL ? string_take(bridge) : json_null(), "torchtitan_args",
		      titan != NULL ? string_take(titan) : json_null(), "deepspeed", deepspeed,
		      "torchrun", torchrun_json(p, l), "files", "hostfile",
		      path_or_null(l->hostfile), "deepspeed_config",
		      path_or_null(l->deepspeed_config), "svg", path_or_null(l->svg), "env",
		      launch_env_json(p, l));
	megatron = nemo = titan = bridge = NULL; /* taken by string_take() */
	if (o != NULL && dtplan_launch_deepspeed_unsupported(p) != NULL &&
	    json_object_set_new(o, "deepspeed_unsupported",
				json_string(dtplan_launch_deepspeed_unsupported(p))) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && titan_why != NULL &&
	    json_object_set(o, "torchtitan_unsupported", titan_why) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && nemo_why != NULL &&
	    json_object_set(o, "nemo_unsupported", nemo_why) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && bridge_why != NULL &&
	    json_object_set(o, "megatron_bridge_unsupported", bridge_why) != 0) {
		json_decref(o);
		o = NULL;
	}
out:
	free(titan);
	free(bridge);
	json_decref(titan_why);
	json_decref(bridge_why);
	json_decref(nemo_why);
	free(megatron);
	free(nemo);
	free(ds);
	json_decref(deepspeed);
	return o;
}

static json_t *plan_json(const struct dtplan_plan *p, const struct dtplan_launch_in *l)
{
	const struct dtplan_request *r = &p->request;
	json_t *root = json_object();

	if (root == NULL)
		return NULL;
	if (!put(root, "schema", json_string(DTPLAN_PLAN_SCHEMA)) ||
	    !put(root, "model", model_json(r)) ||
	    !put(root, "gpu",
		 json_pack("{s:s, s:o}", "name", r->gpu.name, "memory_bytes",
			   num(r->gpu.memory_bytes))) ||
	    !put(root, "gpus", json_integer(r->gpus)) ||
	    !put(root, "gpus_per_node", json_integer(r->gpus_per_node)) ||
	    !put(root, "global_batch", json_integer(p->best.global_batch)) ||
	    !put(root, "global_batch_requested", json_integer(r->global_batch)) ||
	    !put(root, "global_batch_exact", json_boolean(r->exact_batch)) ||
	    !put(root, "framework", json_string(dtplan_framework_name(r->framework))) ||
	    !put(root, "attention", json_string(dtplan_attention_name(r->attention))) ||
	    !put(root, "precision", json_string(dtplan_precision_name(r->precision))) ||
	    !put(root, "moments", json_string(dtplan_moments_name(r->moments))) ||
	    !put(root, "grads",
		 json_string(dtplan_grads_name(dtplan__grads_held(r->framework, r->grads)))) ||
	    !put(root, "parallelism", parallelism_json(&p->best)) ||
	    !put(root, "memory", memory_json(&p->best.memory, dtplan_request_usable_memory(r))) ||
	    !put(root, "prediction", prediction_json(&p->best)) ||
	    !put(root, "runner_up", p->have_runner_up ? runner_up_json(p) : json_null()) ||
	    !put(root, "checkpoint", checkpoint_json(p)) ||
	    !put(root, "training", training_json(p)) || !put(root, "warnings", warnings_json(p)) ||
	    !put(root, "degraded", json_boolean(p->degraded)) ||
	    !put(root, "degraded_reason", json_string(p->degraded_reason)) ||
	    !put(root, "considered", json_integer((json_int_t)p->n_considered)) ||
	    !put(root, "fitting", json_integer((json_int_t)p->n_fit)) ||
	    !put(root, "measurements", dtplan__measurements_json(p->measurements, p->n_nodes)))
		goto fail;
	if (p->n_ranks > 0 && !put(root, "placement", placement_json(p)))
		goto fail;
	if (!put(root, "launch", launch_json(p, l)))
		goto fail;
	return root;
fail:
	json_decref(root);
	return NULL;
}

enum dtplan_err dtplan_plan_to_json(const struct dtplan_plan *p, bool pretty, char **out,
				    struct dtplan_error *err)
{
	return dtplan_plan_to_json_launch(p, NULL, pretty, out, err);
}

enum dtplan_err dtplan_plan_to_json_launch(const struct dtplan_plan *p,
					   const struct dtplan_launch_in *l, bool pretty,
					   char **out, struct dtplan_error *err)
{
	struct dtplan_launch_in plain;
	json_t *root = NULL;
	enum dtplan_err rv;

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
		goto out;
	}
	if (l == NULL) {
		dtplan_launch_in_init(&plain, p, 0, NULL, NULL);
		l = &plain;
	}
	root = plan_json(p, l);
	if (root != NULL)
		*out = json_dumps(root,
				  (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER);
	if (*out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0,
				   "out of memory while writing the plan as JSON");
		goto out;
	}
	rv = DTPLAN_OK;
out:
	json_decref(root);
	return rv;
}
