/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_read_whole.c: the whole plan's small members for
 * dtplan_plan_from_json() (dtplan show), each from the Jansson tree of its
 * own span of the text (plan_ranks_json.c): the model, GPUs, framework,
 * attention and precision, memory, prediction, runner-up, checkpoint, time
 * to train and warnings.  Members the text does not show may be absent.  See
 * plan_read_int.h.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "json/plan_read_int.h"

#include <float.h>
#include <jansson.h>
#include <stddef.h>
#include <string.h>

/* Most warnings read back: far more than a plan makes. */
#define DTPLAN_PLAN_MAX_WARNINGS 1024

/* ------------------------------------------------------------------------
 * The small members of the whole plan, as Jansson trees
 * ---------------------------------------------------------------------- */

/*
 * Every member here may be absent or null (a plan older than it, or a figure
 * not known), which leaves what was there; whole numbers are -1 (none) to
 * 10^9.  dtplan__jget_*() (base/base.h) read them.
 */
#define OPT DTPLAN_JGET_NULLABLE
#define WHOLE_MIN (-1)
#define WHOLE_MAX 1000000000

/* A split: tp, pp, dp, ZeRO, micro-batches and recomputation of obj (the
 * runner-up's; the plan's own is dtplan__plan_read_parallelism()'s). */
static enum dtplan_err read_split(json_t *obj, const char *where, struct dtplan_candidate *b,
				  struct dtplan_error *err)
{
	static const struct {
		const char *key;
		size_t offset;
	} ints[] = {
		{"tp", offsetof(struct dtplan_candidate, tp)},
		{"pp", offsetof(struct dtplan_candidate, pp)},
		{"dp", offsetof(struct dtplan_candidate, dp)},
		{"zero", offsetof(struct dtplan_candidate, zero)},
		{"micro_batch", offsetof(struct dtplan_candidate, micro_batch)},
		{"num_microbatches", offsetof(struct dtplan_candidate, num_microbatches)},
		{"global_batch", offsetof(struct dtplan_candidate, global_batch)},
		{"vp", offsetof(struct dtplan_candidate, vp)},
		{"ep", offsetof(struct dtplan_candidate, ep)},
		{"cp", offsetof(struct dtplan_candidate, cp)},
		{"etp", offsetof(struct dtplan_candidate, etp)},
	};
	json_t *rc, *sch, *st;
	enum dtplan_recompute named;
	enum dtplan_err ret;
	bool offload = false;
	int n, schedule = DTPLAN_SCHEDULE_1F1B;

	if (!json_is_object(obj))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"%s\" object", where);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(ints); i++) {
		ret = dtplan__jget_int(obj, SRC, where, ints[i].key, OPT, WHOLE_MIN, WHOLE_MAX,
				       (int *)((char *)b + ints[i].offset), err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	ret = dtplan__jget_bool(obj, SRC, where, "offload", OPT, &offload, err);
	if (ret != DTPLAN_OK)
		return ret;
	b->offload = offload ? 1 : 0;
	/* written only for DualPipe */
	sch = json_object_get(obj, "schedule");
	if (sch != NULL &&
	    (!json_is_string(sch) ||
	     dtplan_schedule_parse(json_string_value(sch), &schedule, NULL) != DTPLAN_OK))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.schedule: expected \"1f1b\" or \"dualpipe\"", where);
	rc = json_object_get(obj, "recompute");
	if (json_is_string(rc)) {
		ret = dtplan_recompute_parse(json_string_value(rc), &named, err);
		n = (int)named;
	} else {
		n = b->recompute;
		ret = dtplan__jget_int(obj, SRC, where, "recompute", OPT, WHOLE_MIN, WHOLE_MAX, &n,
				       err);
	}
	if (ret != DTPLAN_OK)
		return ret;
	if (n < DTPLAN_RECOMPUTE_NONE || n > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.recompute: %d unknown",
				     where, n);
	b->recompute = n;
	/* the split as "parallelism" reads it, by the rules every chosen
	 * split meets */
	ret = dtplan__plan_read_split(b, (enum dtplan_schedule)schedule, where, err);
	if (ret != DTPLAN_OK)
		return ret;
	/* the stages' layers and their imbalance, as dtplan__plan_read_
	 * parallelism() reads the plan's own */
	st = json_object_get(obj, "layers_per_stage");
	if (st == NULL || json_is_null(st))
		return DTPLAN_OK;
	if (!json_is_array(st) || json_array_size(st) != (size_t)b->pp)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.layers_per_stage: expected %d layer counts", where, b->pp);
	for (size_t i = 0; i < json_array_size(st); i++) {
		json_t *v = json_array_get(st, i);

		ret = dtplan__plan_stage_at(b, where, i, json_array_size(st),
					    json_is_integer(v) ? json_integer_value(v) : 0, err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	return dtplan__jget_num(obj, SRC, where, "stage_imbalance", OPT, -DBL_MAX, DBL_MAX,
				&b->stage_imbalance, err);
}

/* Model, GPUs and batch into the request (dtplan_request_init() first). */
static enum dtplan_err read_request(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_request *r = &p->request;
	struct dtplan_model *m = &r->model;
	json_t *model = json_object_get(root, "model"), *gpu = json_object_get(root, "gpu");
	const struct dtplan_gpu *known;
	enum dtplan_err ret;
	char name[32] = "", from[32] = "";

	if (!json_is_object(model) || !json_is_object(gpu))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"model\" or \"gpu\" object: not a whole plan");
	if ((ret = dtplan__jget_str(model, SRC, "model", "name", OPT, m->name, sizeof(m->name),
				    err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(model, SRC, "model", "params", OPT, -DBL_MAX, DBL_MAX,
				    &m->params, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(model, SRC, "model", "active_params", OPT, -DBL_MAX, DBL_MAX,
				    &m->active_params, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "experts", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->experts, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "top_k", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->top_k, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "first_dense", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->first_dense, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "moe_every", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->moe_every, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "layers", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->layers, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "hidden", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->hidden, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "heads", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->heads, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "kv_heads", OPT, WHOLE_MIN, WHOLE_MAX,
				    &m->kv_heads, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(model, SRC, "model", "seq", OPT, WHOLE_MIN, WHOLE_MAX, &r->seq,
				    err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_str(gpu, SRC, "gpu", "name", OPT, name, sizeof(name), err)) !=
		    DTPLAN_OK)
		return ret;
	m->moe_every_from_zero = json_is_true(json_object_get(model, "moe_every_from_zero"));
	if ((ret = dtplan__jget_str(model, SRC, "model", "seq_from", OPT, from, sizeof(from),
				    err)) != DTPLAN_OK)
		return ret;
	if (from[0] != '\0' && !dtplan_seq_from_parse(from, &r->seq_from))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "model.seq_from: '%s' is not given, pretraining, context or "
				     "default",
				     from);
	/* the catalog's entry for what the JSON does not carry */
	known = dtplan_gpu_find(name, NULL);
	if (known != NULL)
		r->gpu = *known;
	dtplan__strlcpy(r->gpu.name, name, sizeof(r->gpu.name));
	if ((ret = dtplan__jget_num(gpu, SRC, "gpu", "memory_bytes", OPT, -DBL_MAX, DBL_MAX,
				    &r->gpu.memory_bytes, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(root, SRC, "plan", "gpus", OPT, WHOLE_MIN, WHOLE_MAX, &r->gpus,
				    err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(root, SRC, "plan", "gpus_per_node", OPT, WHOLE_MIN, WHOLE_MAX,
				    &r->gpus_per_node, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(root, SRC, "plan", "global_batch_requested", OPT, WHOLE_MIN,
				    WHOLE_MAX, &r->global_batch, err)) != DTPLAN_OK)
		return ret;
	r->exact_batch = json_is_true(json_object_get(root, "global_batch_exact"));
	/* what the kernels line shows: absent in plans older than it */
	{
		static const struct {
			const char *key;
			size_t offset;
			enum dtplan_err (*parse)(const char *, int *, struct dtplan_error *);
		} names[] = {
#define NAME_KEY(k, fn) {#k, offsetof(struct dtplan_request, k), fn}
			NAME_KEY(framework, dtplan_framework_parse),
			NAME_KEY(attention, dtplan_attention_parse),
			NAME_KEY(precision, dtplan_precision_parse),
			NAME_KEY(moments, dtplan_moments_parse),
			NAME_KEY(grads, dtplan_grads_parse),
#undef NAME_KEY
		};

		for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(names); i++) {
			json_t *v = json_object_get(root, names[i].key);

			if (v == NULL || json_is_null(v))
				continue;
			if (!json_is_string(v))
				return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
						     "%s: expected a string", names[i].key);
			ret = names[i].parse(json_string_value(v),
					     (int *)((char *)r + names[i].offset), err);
			if (ret != DTPLAN_OK)
				return ret;
		}
	}
	if (r->gpus < 1 || r->gpus_per_node < 1 || m->layers < 1)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "gpus, gpus_per_node and model.layers must be >= 1");
	return DTPLAN_OK;
}

static enum dtplan_err read_memory(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_ledger *l = &p->best.memory;
	json_t *mem = json_object_get(root, "memory"), *b = json_object_get(mem, "bytes_per_gpu");
	double capacity = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(mem))
		return DTPLAN_OK;
	if ((ret = dtplan__jget_num(b, SRC, "memory.bytes_per_gpu", "weights", OPT, -DBL_MAX,
				    DBL_MAX, &l->weights, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(b, SRC, "memory.bytes_per_gpu", "gradients", OPT, -DBL_MAX,
				    DBL_MAX, &l->gradients, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(b, SRC, "memory.bytes_per_gpu", "optimizer", OPT, -DBL_MAX,
				    DBL_MAX, &l->optimizer, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(b, SRC, "memory.bytes_per_gpu", "activations", OPT, -DBL_MAX,
				    DBL_MAX, &l->activations, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(b, SRC, "memory.bytes_per_gpu", "total", OPT, -DBL_MAX, DBL_MAX,
				    &l->total, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(mem, SRC, "memory", "capacity_bytes", OPT, -DBL_MAX, DBL_MAX,
				    &capacity, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(mem, SRC, "memory", "fullest_stage", OPT, WHOLE_MIN, WHOLE_MAX,
				    &l->stage, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(mem, SRC, "memory", "fullest_stage_layers", OPT, WHOLE_MIN,
				    WHOLE_MAX, &l->stage_layers, err)) != DTPLAN_OK)
		return ret;
	/* the headroom is what the capacity leaves of the GPU's memory */
	if (capacity > 0.0 && p->request.gpu.memory_bytes >= capacity)
		p->request.memory_headroom = 1.0 - capacity / p->request.gpu.memory_bytes;
	return DTPLAN_OK;
}

/* prediction.step_cv_from and step_cv_runs; both absent in older plans */
static enum dtplan_err read_cv_from(json_t *pr, struct dtplan_candidate *c,
				    struct dtplan_error *err)
{
	char from[16] = "";
	enum dtplan_err ret;

	if ((ret = dtplan__jget_str(pr, SRC, "prediction", "step_cv_from", OPT, from, sizeof(from),
				    err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_int(pr, SRC, "prediction", "step_cv_runs", OPT, 0, WHOLE_MAX,
				    &c->step_cv_runs, err)) != DTPLAN_OK)
		return ret;
	if (from[0] != '\0' && !dtplan_cv_from_parse(from, &c->step_cv_from))
		return dtplan__error(
			err, DTPLAN_ERR_PARSE, SRC, 0,
			"prediction.step_cv_from: '%s' is not site, records or default", from);
	return DTPLAN_OK;
}

static enum dtplan_err read_prediction(json_t *root, struct dtplan_candidate *c,
				       struct dtplan_error *err)
{
	static const struct {
		const char *key;
		size_t offset;
	} nums[] = {
		{"step_seconds", offsetof(struct dtplan_candidate, step.total)},
		{"model_step_seconds", offsetof(struct dtplan_candidate, model_step)},
		{"compute_seconds", offsetof(struct dtplan_candidate, step.compute)},
		{"tp_comm_seconds", offsetof(struct dtplan_candidate, step.tp_comm)},
		{"pp_comm_seconds", offsetof(struct dtplan_candidate, step.pp_comm)},
		{"bubble_seconds", offsetof(struct dtplan_candidate, step.bubble)},
		{"dp_comm_seconds", offsetof(struct dtplan_candidate, step.dp_comm)},
		{"dp_exposed_seconds", offsetof(struct dtplan_candidate, step.dp_exposed)},
		{"optimizer_seconds", offsetof(struct dtplan_candidate, step.optimizer)},
		{"tflops_per_gpu", offsetof(struct dtplan_candidate, tflops_per_gpu)},
		{"mfu", offsetof(struct dtplan_candidate, mfu)},
		{"net_bytes_per_gpu", offsetof(struct dtplan_candidate, net_bytes_per_gpu)},
		/* issue 14's: absent in older plans */
		{"ep_comm_seconds", offsetof(struct dtplan_candidate, step.ep_comm)},
		{"cp_comm_seconds", offsetof(struct dtplan_candidate, step.cp_comm)},
		{"ep_bytes_per_gpu", offsetof(struct dtplan_candidate, ep_bytes)},
		{"ep_uplink_ratio", offsetof(struct dtplan_candidate, ep_uplink_ratio)},
		/* issue 34's: absent in older plans */
		{"step_p95_seconds", offsetof(struct dtplan_candidate, step_p95)},
		{"straggler_seconds", offsetof(struct dtplan_candidate, step.straggler)},
		{"step_cv", offsetof(struct dtplan_candidate, step_cv)},
	};
	static const char *const links[] = {"none", "nvlink", "leaf", "uplink", "network"};
	json_t *pr = json_object_get(root, "prediction"), *v;
	enum dtplan_err ret;
	const char *t;

	for (size_t i = 0; json_is_object(pr) && i < DTPLAN_ARRAY_SIZE(nums); i++) {
		ret = dtplan__jget_num(pr, SRC, "prediction", nums[i].key, OPT, -DBL_MAX, DBL_MAX,
				       (double *)((char *)c + nums[i].offset), err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	/* issue 34's cv source: absent in older plans (unknown) */
	if (json_is_object(pr) && (ret = read_cv_from(pr, c, err)) != DTPLAN_OK)
		return ret;
	/* a static name, as the search sets it */
	v = json_object_get(pr, "ep_links");
	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	t = json_string_value(v);
	for (size_t i = 0; t != NULL && i < DTPLAN_ARRAY_SIZE(links); i++)
		if (strcmp(t, links[i]) == 0) {
			c->ep_links = links[i];
			return DTPLAN_OK;
		}
	return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
			     "prediction.ep_links: expected none, nvlink, leaf, uplink or network");
}

static enum dtplan_err read_runner_up(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	json_t *ru = json_object_get(root, "runner_up");
	struct dtplan_candidate *c = &p->runner_up;
	enum dtplan_err ret;

	if (ru == NULL || json_is_null(ru))
		return DTPLAN_OK;
	if ((ret = read_split(ru, "runner_up", c, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ru, SRC, "runner_up", "step_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &c->step.total, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ru, SRC, "runner_up", "memory_bytes_per_gpu", OPT, -DBL_MAX,
				    DBL_MAX, &c->memory.total, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ru, SRC, "runner_up", "net_bytes_per_gpu", OPT, -DBL_MAX,
				    DBL_MAX, &c->net_bytes_per_gpu, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_str(ru, SRC, "runner_up", "reason", OPT, p->runner_up_reason,
				    sizeof(p->runner_up_reason), err)) != DTPLAN_OK)
		return ret;
	p->have_runner_up = true;
	return DTPLAN_OK;
}

/* The whole checkpoint, and the request's rates the text shows with it. */
static enum dtplan_err read_ckpt_all(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_ckpt *c = &p->ckpt;
	json_t *ck = json_object_get(root, "checkpoint"), *v;
	double write = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(ck))
		return DTPLAN_OK;
	if ((ret = dtplan__jget_num(ck, SRC, "checkpoint", "young_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &c->young_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "daly_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &c->daly_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "availability_seconds", OPT, -DBL_MAX,
				    DBL_MAX, &c->availability_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "write_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &write, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "job_mtbf_seconds", OPT, -DBL_MAX,
				    DBL_MAX, &c->job_mtbf_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "waste_fraction", OPT, -DBL_MAX, DBL_MAX,
				    &c->waste_fraction, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(ck, SRC, "checkpoint", "bytes", OPT, -DBL_MAX, DBL_MAX,
				    &p->ckpt_bytes, err)) != DTPLAN_OK)
		return ret;
	if (write > 0.0 && p->ckpt_bytes > 0.0)
		p->request.ckpt_write_bytes_per_s = p->ckpt_bytes / write;
	/* M = per-GPU MTBF x 3600 / GPUs */
	if (c->job_mtbf_seconds > 0.0)
		p->request.mtbf_gpu_hours = c->job_mtbf_seconds * p->request.gpus / 3600.0;
	v = json_object_get(ck, "mtbf_source");
	if (json_is_string(v))
		dtplan__strlcpy(p->request.mtbf_source, json_string_value(v),
				sizeof(p->request.mtbf_source));
	return DTPLAN_OK;
}

/* The time to train, when the plan was asked for one ("training" not null). */
static enum dtplan_err read_training(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	struct dtplan_training *t = &p->training;
	json_t *tr = json_object_get(root, "training");
	enum dtplan_err ret;

	if (tr == NULL || json_is_null(tr))
		return DTPLAN_OK;
	if (!json_is_object(tr))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "training: expected an object or null");
	if ((ret = dtplan__jget_num(tr, SRC, "training", "tokens", OPT, -DBL_MAX, DBL_MAX,
				    &t->tokens, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(tr, SRC, "training", "steps", OPT, -DBL_MAX, DBL_MAX, &t->steps,
				    err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(tr, SRC, "training", "compute_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &t->compute_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(tr, SRC, "training", "wall_seconds", OPT, -DBL_MAX, DBL_MAX,
				    &t->wall_seconds, err)) != DTPLAN_OK ||
	    (ret = dtplan__jget_num(tr, SRC, "training", "goodput", OPT, -DBL_MAX, DBL_MAX,
				    &t->goodput, err)) != DTPLAN_OK)
		return ret;
	p->request.train_tokens = t->tokens;
	p->have_training = t->tokens > 0.0;
	return DTPLAN_OK;
}

static enum dtplan_err read_warnings(json_t *root, struct dtplan_plan *p, struct dtplan_error *err)
{
	json_t *a = json_object_get(root, "warnings"), *v;
	size_t i;

	if (a == NULL)
		return DTPLAN_OK;
	if (!json_is_array(a) || json_array_size(a) > DTPLAN_PLAN_MAX_WARNINGS)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "warnings: expected a list of at most %d",
				     DTPLAN_PLAN_MAX_WARNINGS);
	json_array_foreach(a, i, v)
	{
		json_t *code = json_object_get(v, "code"), *msg = json_object_get(v, "message");

		if (!json_is_string(code) || !json_is_string(msg))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "warnings[%zu]: expected a code and a message", i);
		if (dtplan_plan_add_warning(p, json_string_value(code), "%s",
					    json_string_value(msg)) != DTPLAN_OK)
			return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	}
	return DTPLAN_OK;
}

/* Everything but the placement, for dtplan_plan_from_json(). */
enum dtplan_err dtplan__plan_read_whole(json_t *root, struct dtplan_plan *p,
					struct dtplan_error *err)
{
	json_t *v;
	enum dtplan_err ret;

	dtplan_request_init(&p->request);
	/* the streaming pass read the parallelism, for tasks and for this */
	if ((ret = read_request(root, p, err)) != DTPLAN_OK ||
	    (ret = read_memory(root, p, err)) != DTPLAN_OK ||
	    (ret = read_prediction(root, &p->best, err)) != DTPLAN_OK ||
	    (ret = read_runner_up(root, p, err)) != DTPLAN_OK ||
	    (ret = read_ckpt_all(root, p, err)) != DTPLAN_OK ||
	    (ret = read_training(root, p, err)) != DTPLAN_OK ||
	    (ret = read_warnings(root, p, err)) != DTPLAN_OK)
		return ret;
	p->best.uplink_slowdown = 1.0;
	p->best.crosses_uplinks = "none";
	v = json_object_get(root, "considered");
	p->n_considered =
		json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
	v = json_object_get(root, "fitting");
	p->n_fit =
		json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
	return DTPLAN_OK;
}
