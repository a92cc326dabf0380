/*
 * plan_ranks_json.c: a plan's JSON read back.  dtplan_plan_ranks_from_json()
 * reads the part tasks need (parallel degrees, node order, ranks) in every
 * srun step, so that all tasks follow the plan the batch step made instead
 * of recomputing it; dtplan_plan_from_json() reads everything the text and
 * the picture show (dtplan show).
 *
 * Reads what lib/plan_json.c writes: "parallelism", "checkpoint",
 * "placement" {"nodes", "ranks"}, "degraded", and for the whole plan the
 * model, GPUs, framework, attention and precision, memory, prediction,
 * runner-up, time to train, warnings and the placement's leaves.  Lenient
 * where it costs nothing: node entries may be strings or objects with
 * "name", a rank's node an index or a name, "recompute" a name or a number,
 * members the text does not show (vp, offload, training, ...) may be absent.  Bounded: the
 * text is at most DTPLAN_FILE_PLAN's limit, arrays are read once, and a
 * plan holds at most DTPLAN_PLAN_MAX_WARNINGS warnings.
 */
#include "config.h"

#include "dtplan_private.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC "plan JSON"

/* Most warnings read back: far more than a plan makes. */
#define DTPLAN_PLAN_MAX_WARNINGS 1024

/* Optional integer member: absent leaves *out; present must be an integer. */
static enum dtplan_err get_int(json_t *obj, const char *where, const char *key, int *out,
			       struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_integer(v) || json_integer_value(v) < -1 ||
	    json_integer_value(v) > 1000000000)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.%s: expected a whole number", where, key);
	*out = (int)json_integer_value(v);
	return DTPLAN_OK;
}

/* Optional number member: absent or null leaves *out; present must be a number. */
static enum dtplan_err get_num(json_t *obj, const char *where, const char *key, double *out,
			       struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_number(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.%s: expected a number",
				     where, key);
	*out = json_number_value(v);
	return DTPLAN_OK;
}

/* Optional string member into buf (truncated to size); absent leaves buf. */
static enum dtplan_err get_str(json_t *obj, const char *where, const char *key, char *buf,
			       size_t size, struct dtplan_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL || json_is_null(v))
		return DTPLAN_OK;
	if (!json_is_string(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.%s: expected a string",
				     where, key);
	dtplan__strlcpy(buf, json_string_value(v), size);
	return DTPLAN_OK;
}

/* A split: tp, pp, dp, ZeRO, micro-batches and recomputation of obj. */
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
	};
	json_t *rc, *off;
	enum dtplan_err ret;
	int n;

	if (!json_is_object(obj))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no \"%s\" object", where);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(ints); i++) {
		ret = get_int(obj, where, ints[i].key, (int *)((char *)b + ints[i].offset), err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	if (b->tp < 1 || b->pp < 1 || b->dp < 1)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: tp, pp and dp must be whole numbers >= 1", where);
	if (b->vp < 1)
		b->vp = 1;
	/* plans from before EP and CP carry neither */
	if (b->ep < 1)
		b->ep = 1;
	if (b->cp < 1)
		b->cp = 1;
	if (b->dp % b->ep != 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: ep %d does not divide dp %d", where, b->ep, b->dp);
	off = json_object_get(obj, "offload");
	if (off != NULL && !json_is_null(off) && !json_is_boolean(off))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.offload: expected true or false", where);
	b->offload = json_is_true(off);
	rc = json_object_get(obj, "recompute");
	if (json_is_string(rc))
		return dtplan_recompute_parse(json_string_value(rc), &b->recompute, err);
	n = (int)b->recompute;
	ret = get_int(obj, where, "recompute", &n, err);
	if (ret != DTPLAN_OK)
		return ret;
	if (n < DTPLAN_RECOMPUTE_NONE || n > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s.recompute: %d unknown",
				     where, n);
	b->recompute = (enum dtplan_recompute)n;
	return DTPLAN_OK;
}

static enum dtplan_err read_best(json_t *root, struct dtplan_candidate *b,
				 struct dtplan_error *err)
{
	return read_split(json_object_get(root, "parallelism"), "parallelism", b, err);
}

static void read_ckpt(json_t *root, struct dtplan_ckpt *c)
{
	json_t *ck = json_object_get(root, "checkpoint");

	if (!json_is_object(ck))
		return;
	if (json_is_number(json_object_get(ck, "interval_seconds")))
		c->interval_seconds = json_number_value(json_object_get(ck, "interval_seconds"));
	if (json_is_number(json_object_get(ck, "interval_steps")))
		c->interval_steps = json_number_value(json_object_get(ck, "interval_steps"));
}

static enum dtplan_err read_nodes(json_t *placement, struct dtplan_plan *p,
				  struct dtplan_error *err)
{
	json_t *nodes = json_object_get(placement, "nodes");
	json_t *v;
	size_t i;

	if (!json_is_array(nodes) || json_array_size(nodes) == 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "no placement.nodes array");
	p->node_names = calloc(json_array_size(nodes), sizeof(*p->node_names));
	p->node_leaf = calloc(json_array_size(nodes), sizeof(*p->node_leaf));
	if (p->node_names == NULL || p->node_leaf == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	json_array_foreach(nodes, i, v) {
		json_t *name = json_is_object(v) ? json_object_get(v, "name") : v;

		if (!json_is_string(name) || json_string_length(name) == 0 ||
		    json_string_length(name) >= sizeof(p->node_names[0]))
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "placement.nodes[%zu]: expected a host name", i);
		dtplan__strlcpy(p->node_names[i], json_string_value(name),
				sizeof(p->node_names[i]));
		p->node_leaf[i] = -1;
		p->n_nodes = i + 1;
	}
	return DTPLAN_OK;
}

static enum dtplan_err read_rank(json_t *v, size_t i, struct dtplan_plan *p,
				 struct dtplan_error *err)
{
	struct dtplan_rank *r = &p->ranks[i];
	char where[48];
	json_t *node, *nic;
	enum dtplan_err ret;
	int rank = (int)i;

	snprintf(where, sizeof(where), "placement.ranks[%zu]", i);
	if (!json_is_object(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "%s: expected an object", where);
	r->domain = -1;
	if ((ret = get_int(v, where, "rank", &rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "gpu", &r->gpu, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "local_rank", &r->local_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "tp_rank", &r->tp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "pp_rank", &r->pp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "dp_rank", &r->dp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "cp_rank", &r->cp_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "ep_rank", &r->ep_rank, err)) != DTPLAN_OK ||
	    (ret = get_int(v, where, "domain", &r->domain, err)) != DTPLAN_OK)
		return ret;
	if (rank != (int)i)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: rank %d out of order", where, rank);
	node = json_object_get(v, "node");
	r->node = -1;
	if (json_is_integer(node) && json_integer_value(node) >= 0 &&
	    (size_t)json_integer_value(node) < p->n_nodes)
		r->node = (int)json_integer_value(node);
	for (size_t n = 0; json_is_string(node) && n < p->n_nodes; n++)
		if (strcmp(p->node_names[n], json_string_value(node)) == 0)
			r->node = (int)n;
	if (r->node < 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s.node: not one of the plan's %zu nodes", where, p->n_nodes);
	if (r->local_rank < 0 || r->gpu < 0 || r->tp_rank < 0 || r->pp_rank < 0 || r->dp_rank < 0 ||
	    r->cp_rank < 0 || r->ep_rank < 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "%s: ranks and GPU indexes must be >= 0", where);
	nic = json_object_get(v, "nic");
	if (json_is_string(nic))
		dtplan__strlcpy(r->nic, json_string_value(nic), sizeof(r->nic));
	return DTPLAN_OK;
}

/* ---- the whole plan (dtplan_plan_from_json) ---- */

/* layers_per_stage: first, middle (all equal) and last, as the plan keeps them. */
static enum dtplan_err read_stages(json_t *par, struct dtplan_candidate *b,
				   struct dtplan_error *err)
{
	json_t *a = json_object_get(par, "layers_per_stage"), *v;
	size_t i;

	if (a == NULL)
		return DTPLAN_OK;
	if (!json_is_array(a) || json_array_size(a) != (size_t)b->pp)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "parallelism.layers_per_stage: expected %d layer counts",
				     b->pp);
	json_array_foreach(a, i, v) {
		json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;

		if (n < 1 || n > 1000000)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "parallelism.layers_per_stage[%zu]: expected a whole "
					     "number >= 1", i);
		if (i == 0)
			b->stages.first = (int)n;
		else if (i + 1 == json_array_size(a))
			b->stages.last = (int)n;
		else if (i == 1)
			b->stages.middle = (int)n;
		else if (n != b->stages.middle)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "parallelism.layers_per_stage[%zu]: the stages "
					     "between the first and the last hold equal layers",
					     i);
	}
	return get_num(par, "parallelism", "stage_imbalance", &b->stage_imbalance, err);
}

/* Model, GPUs and batch into the request (dtplan_request_init() first). */
static enum dtplan_err read_request(json_t *root, struct dtplan_plan *p,
				    struct dtplan_error *err)
{
	struct dtplan_request *r = &p->request;
	struct dtplan_model *m = &r->model;
	json_t *model = json_object_get(root, "model"), *gpu = json_object_get(root, "gpu");
	const struct dtplan_gpu *known;
	enum dtplan_err ret;
	char name[32] = "";

	if (!json_is_object(model) || !json_is_object(gpu))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "no \"model\" or \"gpu\" object: not a whole plan");
	if ((ret = get_str(model, "model", "name", m->name, sizeof(m->name), err)) != DTPLAN_OK ||
	    (ret = get_num(model, "model", "params", &m->params, err)) != DTPLAN_OK ||
	    (ret = get_num(model, "model", "active_params", &m->active_params, err)) !=
		    DTPLAN_OK ||
	    (ret = get_int(model, "model", "experts", &m->experts, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "top_k", &m->top_k, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "layers", &m->layers, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "hidden", &m->hidden, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "heads", &m->heads, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "kv_heads", &m->kv_heads, err)) != DTPLAN_OK ||
	    (ret = get_int(model, "model", "seq", &r->seq, err)) != DTPLAN_OK ||
	    (ret = get_str(gpu, "gpu", "name", name, sizeof(name), err)) != DTPLAN_OK)
		return ret;
	/* the catalog's entry for what the JSON does not carry */
	known = dtplan_gpu_find(name, NULL);
	if (known != NULL)
		r->gpu = *known;
	dtplan__strlcpy(r->gpu.name, name, sizeof(r->gpu.name));
	if ((ret = get_num(gpu, "gpu", "memory_bytes", &r->gpu.memory_bytes, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "gpus", &r->gpus, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "gpus_per_node", &r->gpus_per_node, err)) != DTPLAN_OK ||
	    (ret = get_int(root, "plan", "global_batch_requested", &r->global_batch, err)) !=
		    DTPLAN_OK)
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

static enum dtplan_err read_memory(json_t *root, struct dtplan_plan *p,
				   struct dtplan_error *err)
{
	struct dtplan_ledger *l = &p->best.memory;
	json_t *mem = json_object_get(root, "memory"), *b = json_object_get(mem, "bytes_per_gpu");
	double capacity = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(mem))
		return DTPLAN_OK;
	if ((ret = get_num(b, "memory.bytes_per_gpu", "weights", &l->weights, err)) != DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "gradients", &l->gradients, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "optimizer", &l->optimizer, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "activations", &l->activations, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(b, "memory.bytes_per_gpu", "total", &l->total, err)) != DTPLAN_OK ||
	    (ret = get_num(mem, "memory", "capacity_bytes", &capacity, err)) != DTPLAN_OK ||
	    (ret = get_int(mem, "memory", "fullest_stage", &l->stage, err)) != DTPLAN_OK ||
	    (ret = get_int(mem, "memory", "fullest_stage_layers", &l->stage_layers, err)) !=
		    DTPLAN_OK)
		return ret;
	/* the headroom is what the capacity leaves of the GPU's memory */
	if (capacity > 0.0 && p->request.gpu.memory_bytes >= capacity)
		p->request.memory_headroom = 1.0 - capacity / p->request.gpu.memory_bytes;
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
	};
	json_t *pr = json_object_get(root, "prediction");
	enum dtplan_err ret;

	for (size_t i = 0; json_is_object(pr) && i < DTPLAN_ARRAY_SIZE(nums); i++) {
		ret = get_num(pr, "prediction", nums[i].key, (double *)((char *)c + nums[i].offset),
			      err);
		if (ret != DTPLAN_OK)
			return ret;
	}
	return DTPLAN_OK;
}

static enum dtplan_err read_runner_up(json_t *root, struct dtplan_plan *p,
				      struct dtplan_error *err)
{
	json_t *ru = json_object_get(root, "runner_up");
	struct dtplan_candidate *c = &p->runner_up;
	enum dtplan_err ret;

	if (ru == NULL || json_is_null(ru))
		return DTPLAN_OK;
	if ((ret = read_split(ru, "runner_up", c, err)) != DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "step_seconds", &c->step.total, err)) != DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "memory_bytes_per_gpu", &c->memory.total, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ru, "runner_up", "net_bytes_per_gpu", &c->net_bytes_per_gpu, err)) !=
		    DTPLAN_OK ||
	    (ret = get_str(ru, "runner_up", "reason", p->runner_up_reason,
			   sizeof(p->runner_up_reason), err)) != DTPLAN_OK)
		return ret;
	p->have_runner_up = true;
	return DTPLAN_OK;
}

/* The whole checkpoint, and the request's rates the text shows with it. */
static enum dtplan_err read_ckpt_all(json_t *root, struct dtplan_plan *p,
				     struct dtplan_error *err)
{
	struct dtplan_ckpt *c = &p->ckpt;
	json_t *ck = json_object_get(root, "checkpoint");
	double write = 0.0;
	enum dtplan_err ret;

	if (!json_is_object(ck))
		return DTPLAN_OK;
	if ((ret = get_num(ck, "checkpoint", "young_seconds", &c->young_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "daly_seconds", &c->daly_seconds, err)) != DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "write_seconds", &write, err)) != DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "job_mtbf_seconds", &c->job_mtbf_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "waste_fraction", &c->waste_fraction, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(ck, "checkpoint", "bytes", &p->ckpt_bytes, err)) != DTPLAN_OK)
		return ret;
	if (write > 0.0 && p->ckpt_bytes > 0.0)
		p->request.ckpt_write_bytes_per_s = p->ckpt_bytes / write;
	/* M = per-GPU MTBF x 3600 / GPUs */
	if (c->job_mtbf_seconds > 0.0)
		p->request.mtbf_gpu_hours = c->job_mtbf_seconds * p->request.gpus / 3600.0;
	return DTPLAN_OK;
}

/* The time to train, when the plan was asked for one ("training" not null). */
static enum dtplan_err read_training(json_t *root, struct dtplan_plan *p,
				     struct dtplan_error *err)
{
	struct dtplan_training *t = &p->training;
	json_t *tr = json_object_get(root, "training");
	enum dtplan_err ret;

	if (tr == NULL || json_is_null(tr))
		return DTPLAN_OK;
	if (!json_is_object(tr))
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "training: expected an object or null");
	if ((ret = get_num(tr, "training", "tokens", &t->tokens, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "steps", &t->steps, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "compute_seconds", &t->compute_seconds, err)) !=
		    DTPLAN_OK ||
	    (ret = get_num(tr, "training", "wall_seconds", &t->wall_seconds, err)) != DTPLAN_OK ||
	    (ret = get_num(tr, "training", "goodput", &t->goodput, err)) != DTPLAN_OK)
		return ret;
	p->request.train_tokens = t->tokens;
	p->have_training = t->tokens > 0.0;
	return DTPLAN_OK;
}

static enum dtplan_err read_warnings(json_t *root, struct dtplan_plan *p,
				     struct dtplan_error *err)
{
	json_t *a = json_object_get(root, "warnings"), *v;
	size_t i;

	if (a == NULL)
		return DTPLAN_OK;
	if (!json_is_array(a) || json_array_size(a) > DTPLAN_PLAN_MAX_WARNINGS)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "warnings: expected a list of at most %d",
				     DTPLAN_PLAN_MAX_WARNINGS);
	json_array_foreach(a, i, v) {
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

/* The leaves in rank order and each node's leaf, from the placement's "leaves". */
static enum dtplan_err read_leaves(json_t *pl, struct dtplan_plan *p, struct dtplan_error *err)
{
	static const char *const crosses[] = {"tp", "pp", "dp", "none"};
	json_t *leaves = json_object_get(pl, "leaves"), *v;
	char order[16] = "", kind[16] = "", cross[8] = "none";
	size_t i, node = 0;
	int needed = 0;
	enum dtplan_err ret;

	p->best.uplink_slowdown = 1.0;
	p->best.crosses_uplinks = "none";
	if ((ret = get_num(pl, "placement", "uplink_slowdown", &p->best.uplink_slowdown, err)) !=
		    DTPLAN_OK ||
	    (ret = get_str(pl, "placement", "rank_order", order, sizeof(order), err)) !=
		    DTPLAN_OK ||
	    (ret = get_str(pl, "placement", "leaf_kind", kind, sizeof(kind), err)) != DTPLAN_OK ||
	    (ret = get_str(pl, "placement", "crosses_uplinks", cross, sizeof(cross), err)) !=
		    DTPLAN_OK)
		return ret;
	for (size_t k = 0; k < DTPLAN_ARRAY_SIZE(crosses); k++)
		if (strcmp(cross, crosses[k]) == 0)
			p->best.crosses_uplinks = crosses[k];
	p->best.rank_order = DTPLAN_ORDER_TP_DP_PP; /* absent: Megatron-LM's default */
	if (order[0] != '\0' && dtplan_rank_order_parse(order, &p->best.rank_order) != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement: rank_order '%s' is not a rank order (tp-dp-pp, "
				     "tp-cp-ep-dp-pp, tp-pp-dp, ..)",
				     order);
	p->blocks = strcmp(kind, "block") == 0;
	if (!json_is_array(leaves) || json_array_size(leaves) == 0)
		return DTPLAN_OK;
	if (json_array_size(leaves) > p->n_nodes)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.leaves: %zu leaves for %zu nodes",
				     json_array_size(leaves), p->n_nodes);
	p->n_leaves_used = json_array_size(leaves);
	p->leaf_names = calloc(p->n_leaves_used, sizeof(*p->leaf_names));
	p->leaf_nodes = calloc(p->n_leaves_used, sizeof(*p->leaf_nodes));
	p->leaf_ratio = calloc(p->n_leaves_used, sizeof(*p->leaf_ratio));
	p->node_run = calloc(p->n_nodes, sizeof(*p->node_run));
	if (p->leaf_names == NULL || p->leaf_nodes == NULL || p->leaf_ratio == NULL ||
	    p->node_run == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
	json_array_foreach(leaves, i, v) {
		json_t *n = json_object_get(v, "nodes");
		char where[48];

		snprintf(where, sizeof(where), "placement.leaves[%zu]", i);
		p->leaf_ratio[i] = 1.0;
		if (!json_is_integer(n) || json_integer_value(n) < 1 ||
		    (size_t)json_integer_value(n) > p->n_nodes - node)
			return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					     "%s.nodes: the leaves hold more than the plan's %zu "
					     "nodes", where, p->n_nodes);
		if ((ret = get_str(v, where, "name", p->leaf_names[i], sizeof(p->leaf_names[i]),
				   err)) != DTPLAN_OK ||
		    (ret = get_num(v, where, "oversubscription", &p->leaf_ratio[i], err)) !=
			    DTPLAN_OK)
			return ret;
		p->leaf_nodes[i] = (size_t)json_integer_value(n);
		for (size_t k = 0; k < p->leaf_nodes[i]; k++)
			p->node_run[node++] = (int)i;
	}
	if (node != p->n_nodes)
		return dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				     "placement.leaves hold %zu nodes, the plan %zu", node,
				     p->n_nodes);
	needed = (int)p->n_leaves_used;
	if ((ret = get_int(pl, "placement", "leaves_needed", &needed, err)) != DTPLAN_OK)
		return ret;
	p->n_leaves_needed = needed > 0 ? (size_t)needed : 0;
	return DTPLAN_OK;
}

/* Everything but the placement, for dtplan_plan_from_json(). */
static enum dtplan_err read_whole(json_t *root, struct dtplan_plan *p,
				  struct dtplan_error *err)
{
	json_t *v;
	enum dtplan_err ret;

	dtplan_request_init(&p->request);
	if ((ret = read_request(root, p, err)) != DTPLAN_OK ||
	    (ret = read_stages(json_object_get(root, "parallelism"), &p->best, err)) !=
		    DTPLAN_OK ||
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
	p->n_considered = json_is_integer(v) && json_integer_value(v) > 0
				  ? (size_t)json_integer_value(v) : 0;
	v = json_object_get(root, "fitting");
	p->n_fit = json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v)
								    : 0;
	return DTPLAN_OK;
}

/* whole: the whole plan, placement optional; else what tasks need, placement
 * required. */
static enum dtplan_err read_plan(const char *text, bool whole, struct dtplan_plan **out,
				 struct dtplan_error *err)
{
	struct dtplan_plan *p = NULL;
	json_t *root = NULL, *placement, *ranks, *schema, *v;
	json_error_t jerr;
	enum dtplan_err rv, ret;
	size_t i;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, SRC, 0, "no text given");
		goto out;
	}
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, jerr.line, "%s", jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0, "expected an object");
		goto out;
	}
	schema = json_object_get(root, "schema");
	if ((schema != NULL || whole) &&
	    (!json_is_string(schema) ||
	     strncmp(json_string_value(schema), "dtplan.plan/", 12) != 0)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "schema is not " DTPLAN_PLAN_SCHEMA);
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
		goto out;
	}
	ret = read_best(root, &p->best, err);
	if (ret == DTPLAN_OK && whole)
		ret = read_whole(root, p, err);
	if (ret != DTPLAN_OK) {
		rv = ret;
		goto out;
	}
	placement = json_object_get(root, "placement");
	if (!json_is_object(placement) && !whole) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
				   "no \"placement\" object: the plan places no ranks");
		goto out;
	}
	read_ckpt(root, &p->ckpt);
	if (json_is_object(placement)) {
		ret = read_nodes(placement, p, err);
		if (ret != DTPLAN_OK) {
			rv = ret;
			goto out;
		}
		ranks = json_object_get(placement, "ranks");
		if (!json_is_array(ranks) || json_array_size(ranks) == 0) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "no placement.ranks array");
			goto out;
		}
		p->ranks = calloc(json_array_size(ranks), sizeof(*p->ranks));
		if (p->ranks == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_NOMEM, SRC, 0, "out of memory");
			goto out;
		}
		json_array_foreach(ranks, i, v) {
			ret = read_rank(v, i, p, err);
			if (ret != DTPLAN_OK) {
				rv = ret;
				goto out;
			}
			p->n_ranks = i + 1;
		}
		if ((size_t)p->best.tp * p->best.pp * p->best.dp != p->n_ranks) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, SRC, 0,
					   "%zu ranks but tp %d x pp %d x dp %d", p->n_ranks,
					   p->best.tp, p->best.pp, p->best.dp);
			goto out;
		}
		if (whole && (ret = read_leaves(placement, p, err)) != DTPLAN_OK) {
			rv = ret;
			goto out;
		}
	}
	if (json_is_true(json_object_get(root, "degraded"))) {
		p->degraded = true;
		v = json_object_get(root, "degraded_reason");
		dtplan__strlcpy(p->degraded_reason, json_is_string(v) ? json_string_value(v) : "",
				sizeof(p->degraded_reason));
	}
	*out = p;
	p = NULL;
	rv = DTPLAN_OK;
out:
	dtplan_plan_destroy(p);
	json_decref(root);
	return rv;
}

enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err)
{
	return read_plan(text, false, out, err);
}

enum dtplan_err dtplan_plan_from_json(const char *text, struct dtplan_plan **out,
				      struct dtplan_error *err)
{
	return read_plan(text, true, out, err);
}
