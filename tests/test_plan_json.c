/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_plan_json.c: plan -> JSON (lib/json/plan_json.c).
 */
#include "test_common.h"

#include <jansson.h>

static struct dtplan_plan *make_plan(const char *model, const char *gpu, int gpus)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse(model, &r.model, NULL), DTPLAN_OK);
	r.gpu = *dtplan_gpu_find(gpu, NULL);
	r.gpus = gpus;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	return p;
}

/* Gives the plan two nodes of 4 ranks with made-up names and NICs. */
static void add_ranks(struct dtplan_plan *p)
{
	p->n_nodes = 2;
	p->node_names = calloc(2, sizeof(*p->node_names));
	p->n_ranks = 8;
	p->ranks = calloc(8, sizeof(*p->ranks));
	assert_non_null(p->node_names);
	assert_non_null(p->ranks);
	snprintf(p->node_names[0], 64, "gpu<01>");
	snprintf(p->node_names[1], 64, "gpu02");
	for (int i = 0; i < 8; i++) {
		p->ranks[i].node = i / 4;
		p->ranks[i].gpu = i % 4;
		p->ranks[i].local_rank = i % 4;
		p->ranks[i].tp_rank = i % 2;
		p->ranks[i].pp_rank = i / 4;
		p->ranks[i].dp_rank = (i / 2) % 2;
		snprintf(p->ranks[i].nic, sizeof(p->ranks[i].nic), "mlx5_%d", i % 4);
	}
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (j == NULL)
		fail_msg("JSON does not parse: %s at line %d", e.text, e.line);
	return j;
}

static double num_at(json_t *root, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(root, a);

	if (b != NULL)
		v = json_object_get(v, b);
	if (c != NULL)
		v = json_object_get(v, c);
	if (!json_is_number(v))
		fail_msg("%s.%s.%s is not a number", a, b ? b : "", c ? c : "");
	return json_number_value(v);
}

static void plan_to_json__70b__every_key(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-70b", "a100-80gb", 128);
	char *text = NULL;
	json_t *j;

	(void)state;
	assert_int_equal(dtplan_plan_to_json(p, true, &text, NULL), DTPLAN_OK);
	j = parse(text);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "dtplan.plan/1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "model"), "name")),
			    "llama2-70b");
	assert_near(num_at(j, "model", "params", NULL), p->request.model.params, 0);
	assert_near(num_at(j, "model", "kv_heads", NULL), 8, 0);
	assert_near(num_at(j, "model", "seq", NULL), 4096, 0);
	/* A100-80GB: 81920 MiB as the device reports it */
	assert_near(num_at(j, "gpu", "memory_bytes", NULL), 81920.0 * 1048576.0, 0);
	assert_near(num_at(j, "gpus", NULL, NULL), 128, 0);
	assert_near(num_at(j, "gpus_per_node", NULL, NULL), 8, 0);
	assert_near(num_at(j, "parallelism", "tp", NULL), p->best.tp, 0);
	assert_near(num_at(j, "parallelism", "vp", NULL), p->best.vp, 0);
	assert_true(json_is_boolean(json_object_get(json_object_get(j, "parallelism"), "offload")));
	assert_string_equal(json_string_value(json_object_get(j, "framework")), "deepspeed");
	assert_string_equal(json_string_value(json_object_get(j, "attention")), "flash");
	assert_string_equal(json_string_value(json_object_get(j, "precision")), "bf16");
	assert_near(num_at(j, "parallelism", "pp", NULL), p->best.pp, 0);
	assert_near(num_at(j, "parallelism", "num_microbatches", NULL), p->best.num_microbatches,
		    0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "parallelism"),
							      "recompute")),
			    dtplan_recompute_name(p->best.recompute));
	assert_near(num_at(j, "memory", "bytes_per_gpu", "total"), p->best.memory.total, 0);
	assert_near(num_at(j, "memory", "bytes_per_gpu", "weights"), p->best.memory.weights, 0);
	assert_near(num_at(j, "memory", "capacity_bytes", NULL), 81920.0 * 1048576.0 * 0.9, 1e-3);
	assert_near(num_at(j, "prediction", "step_seconds", NULL), p->best.step.total, 0);
	assert_near(num_at(j, "prediction", "bubble_seconds", NULL), p->best.step.bubble, 0);
	assert_near(num_at(j, "prediction", "mfu", NULL), p->best.mfu, 0);
	assert_near(num_at(j, "prediction", "optimizer_seconds", NULL), p->best.step.optimizer, 0);
	/* no tokens asked: no time to train */
	assert_true(json_is_null(json_object_get(j, "training")));
	assert_true(json_is_string(json_object_get(json_object_get(j, "runner_up"), "reason")));
	assert_near(num_at(j, "runner_up", "tp", NULL), p->runner_up.tp, 0);
	assert_near(num_at(j, "checkpoint", "bytes", NULL), 16.0 * p->request.model.params, 0);
	/* write = 16 * params / 100 GB/s */
	assert_rel(num_at(j, "checkpoint", "write_seconds", NULL),
		   16.0 * p->request.model.params / 100e9, 1e-12);
	/* whole counts are JSON integers; the interval in whole steps */
	assert_true(json_is_integer(json_object_get(json_object_get(j, "model"), "params")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "model"), "params")),
			 (json_int_t)llround(p->request.model.params));
	assert_true(json_is_integer(
		json_object_get(json_object_get(j, "checkpoint"), "interval_steps")));
	assert_near(num_at(j, "checkpoint", "interval_steps", NULL), floor(p->ckpt.interval_steps),
		    0);
	assert_true(json_is_array(json_object_get(j, "warnings")));
	assert_true(json_is_false(json_object_get(j, "degraded")));
	assert_near(num_at(j, "considered", NULL, NULL), (double)p->n_considered, 0);
	assert_near(num_at(j, "fitting", NULL, NULL), (double)p->n_fit, 0);
	/* no ranks: no placement */
	assert_null(json_object_get(j, "placement"));
	json_decref(j);
	free(text);
	dtplan_plan_destroy(p);
}

static void plan_to_json__tokens__training(void **state)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;
	char *text = NULL;
	json_t *j;
	double steps;

	(void)state;
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama2-7b", &r.model, NULL), DTPLAN_OK);
	r.gpu = *dtplan_gpu_find("a100-80gb", NULL);
	r.gpus = 8;
	r.train_tokens = 2e12;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	/* 2e12 tokens in steps of 1024 x 4096 = 4194304: 476838 steps (rounded
	 * up), each the predicted step; the wall time divides by the goodput,
	 * 1 - the checkpoint's waste */
	steps = ceil(2e12 / 4194304.0);
	assert_true(p->have_training);
	assert_near(p->training.steps, steps, 0);
	assert_rel(p->training.compute_seconds, steps * p->best.step.total, 1e-12);
	assert_rel(p->training.goodput, 1.0 - p->ckpt.waste_fraction, 1e-12);
	assert_rel(p->training.wall_seconds, steps * p->best.step.total / p->training.goodput,
		   1e-12);
	assert_int_equal(dtplan_plan_to_json(p, false, &text, NULL), DTPLAN_OK);
	j = parse(text);
	assert_near(num_at(j, "training", "tokens", NULL), 2e12, 0);
	assert_true(json_is_integer(json_object_get(json_object_get(j, "training"), "steps")));
	assert_near(num_at(j, "training", "steps", NULL), steps, 0);
	assert_near(num_at(j, "training", "wall_seconds", NULL), p->training.wall_seconds, 0);
	assert_near(num_at(j, "training", "goodput", NULL), p->training.goodput, 0);
	json_decref(j);
	free(text);
	dtplan_plan_destroy(p);
}

static void plan_to_json__ranks_and_warnings__placement(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", "a100-80gb", 8);
	char *text = NULL;
	json_t *j, *ranks, *w;

	(void)state;
	add_ranks(p);
	assert_int_equal(dtplan_plan_add_warning(p, "oversubscribed-uplink", "ratio %.1f", 3.0),
			 DTPLAN_OK);
	dtplan_plan_set_degraded(p, "links not measured");
	assert_int_equal(dtplan_plan_to_json(p, false, &text, NULL), DTPLAN_OK);
	assert_null(strchr(text, '\n')); /* compact */
	j = parse(text);
	ranks = json_object_get(json_object_get(j, "placement"), "ranks");
	assert_int_equal(json_array_size(ranks), 8);
	assert_near(json_integer_value(json_object_get(json_array_get(ranks, 5), "rank")), 5, 0);
	assert_near(json_integer_value(json_object_get(json_array_get(ranks, 5), "node")), 1, 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ranks, 5), "nic")),
			    "mlx5_1");
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(json_object_get(j, "placement"), "nodes"), 0)),
			    "gpu<01>");
	w = json_array_get(json_object_get(j, "warnings"), 0);
	assert_string_equal(json_string_value(json_object_get(w, "code")), "oversubscribed-uplink");
	assert_string_equal(json_string_value(json_object_get(w, "message")), "ratio 3.0");
	assert_true(json_is_true(json_object_get(j, "degraded")));
	assert_string_equal(json_string_value(json_object_get(j, "degraded_reason")),
			    "links not measured");
	json_decref(j);
	free(text);
	dtplan_plan_destroy(p);
}

static json_t *at(json_t *j, const char *a, const char *b)
{
	json_t *v = json_object_get(json_object_get(j, a), b);

	if (v == NULL)
		fail_msg("%s.%s missing", a, b);
	return v;
}

static void plan_to_json_launch__files_and_rendezvous__launch_object(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", "a100-80gb", 8);
	struct dtplan_launch_in l = {.master_addr = "gpu<01>",
				     .master_port = 29734,
				     .hostfile = "/w/dtplan-7.hosts",
				     .deepspeed_config = "/w/dtplan-7.deepspeed.json"};
	char *text = NULL, *megatron = NULL, *nemo = NULL;
	json_t *j, *launch, *ds;

	(void)state;
	add_ranks(p); /* 2 nodes of 4 ranks, node by node */
	assert_int_equal(dtplan_plan_to_json_launch(p, &l, true, &text, NULL), DTPLAN_OK);
	j = parse(text);
	launch = json_object_get(j, "launch");
	assert_true(json_is_object(launch));
	/* The same words the job's environment gets. */
	assert_int_equal(dtplan_launch_megatron_args(p, &megatron, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_launch_nemo_overrides(p, &nemo, NULL), DTPLAN_OK);
	assert_string_equal(json_string_value(at(j, "launch", "megatron_args")), megatron);
	assert_string_equal(json_string_value(at(j, "launch", "nemo_overrides")), nemo);
	assert_string_equal(json_string_value(at(launch, "env", "DT_MEGATRON_ARGS")), megatron);
	assert_string_equal(json_string_value(at(launch, "env", "PET_NNODES")), "2");
	assert_string_equal(json_string_value(at(launch, "env", "DTPLAN_HOSTFILE")),
			    "/w/dtplan-7.hosts");
	/* DeepSpeed's batch identity, in integers. */
	ds = json_object_get(launch, "deepspeed");
	assert_true(json_is_integer(json_object_get(ds, "train_batch_size")));
	assert_int_equal(json_integer_value(json_object_get(ds, "train_batch_size")),
			 p->best.global_batch);
	assert_int_equal(json_integer_value(json_object_get(ds, "train_micro_batch_size_per_gpu")) *
				 json_integer_value(
					 json_object_get(ds, "gradient_accumulation_steps")) *
				 p->best.dp,
			 p->best.global_batch);
	assert_int_equal(json_integer_value(at(ds, "zero_optimization", "stage")), p->best.zero);
	assert_true(json_is_true(at(ds, "bf16", "enabled")));
	assert_int_equal(json_integer_value(at(launch, "torchrun", "nnodes")), 2);
	assert_int_equal(json_integer_value(at(launch, "torchrun", "nproc_per_node")), 4);
	assert_int_equal(json_integer_value(at(launch, "torchrun", "master_port")), 29734);
	assert_string_equal(json_string_value(at(launch, "torchrun", "master_addr")), "gpu<01>");
	assert_string_equal(json_string_value(at(launch, "files", "deepspeed_config")),
			    "/w/dtplan-7.deepspeed.json");
	assert_true(json_is_null(at(launch, "files", "svg")));
	json_decref(j);
	free(text);
	/* Without a job: no port, no files. */
	assert_int_equal(dtplan_plan_to_json(p, false, &text, NULL), DTPLAN_OK);
	j = parse(text);
	launch = json_object_get(j, "launch");
	assert_true(json_is_null(at(launch, "torchrun", "master_port")));
	assert_string_equal(json_string_value(at(launch, "torchrun", "master_addr")), "gpu<01>");
	assert_true(json_is_null(at(launch, "files", "hostfile")));
	assert_null(json_object_get(json_object_get(launch, "env"), "PET_MASTER_PORT"));
	/* Megatron-Bridge runs it: its overrides, no reason why not */
	assert_true(json_is_string(json_object_get(launch, "megatron_bridge_overrides")));
	assert_null(json_object_get(launch, "megatron_bridge_unsupported"));
	json_decref(j);
	free(text);
	/* Megatron-FSDP in rank order tp-pp-dp, which ConfigContainer.validate()
	 * refuses (Megatron-Bridge 067f987): no overrides, and why */
	p->best.zero = 3;
	p->best.rank_order = DTPLAN_ORDER_TP_PP_DP;
	assert_int_equal(dtplan_plan_to_json(p, false, &text, NULL), DTPLAN_OK);
	j = parse(text);
	launch = json_object_get(j, "launch");
	assert_true(json_is_null(json_object_get(launch, "megatron_bridge_overrides")));
	assert_string_equal(
		json_string_value(json_object_get(launch, "megatron_bridge_unsupported")),
		"Megatron-Bridge cannot run this plan as it is: Megatron-FSDP with rank "
		"order tp-pp-dp");
	json_decref(j);
	free(text);
	free(megatron);
	free(nemo);
	dtplan_plan_destroy(p);
}

static void plan_to_json__null__inval(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", "a100-80gb", 8);
	char *text = (char *)"x";
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_plan_to_json(NULL, true, &text, &err), DTPLAN_ERR_INVAL);
	assert_null(text);
	assert_int_equal(dtplan_plan_to_json(p, true, NULL, NULL), DTPLAN_ERR_INVAL);
	dtplan_plan_destroy(p);
}

/* Allocator that fails after `budget` successful allocations. */
static int budget;

static void *failing_malloc(size_t n)
{
	if (budget-- <= 0)
		return NULL;
	return malloc(n);
}

static void plan_to_json__allocation_failures__nomem(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", "a100-80gb", 8);
	char *text = NULL;
	enum dtplan_err rv;
	int failures = 0;

	(void)state;
	add_ranks(p);
	assert_int_equal(dtplan_plan_add_warning(p, "w", "m"), DTPLAN_OK);
	/* fail the Nth allocation for each N until the call succeeds */
	for (int n = 0; n < 100000; n++) {
		budget = n;
		json_set_alloc_funcs(failing_malloc, free);
		rv = dtplan_plan_to_json(p, true, &text, NULL);
		json_set_alloc_funcs(malloc, free);
		if (rv == DTPLAN_OK)
			break;
		assert_int_equal(rv, DTPLAN_ERR_NOMEM);
		assert_null(text);
		failures++;
	}
	assert_non_null(text);
	assert_true(failures > 50);
	free(text);
	dtplan_plan_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_to_json__70b__every_key),
		cmocka_unit_test(plan_to_json__tokens__training),
		cmocka_unit_test(plan_to_json__ranks_and_warnings__placement),
		cmocka_unit_test(plan_to_json_launch__files_and_rendezvous__launch_object),
		cmocka_unit_test(plan_to_json__null__inval),
		cmocka_unit_test(plan_to_json__allocation_failures__nomem),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
