/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_allocations.c: a plan for every allocation.  Every preset model on
 * every whole number of 8-GPU nodes from 1 to 64 either gets a plan or is
 * told the fewest nodes that would hold it; layer counts and global
 * batches that nothing divides still plan.
 */
#include "test_common.h"

#define MAX_NODES 64
#define GPN 8

static void request_for(struct dtplan_request *r, const struct dtplan_model *m, const char *gpu,
			int gpus)
{
	dtplan_request_init(r);
	r->model = *m;
	r->gpu = *dtplan_gpu_find(gpu, NULL);
	r->gpus = gpus;
	r->gpus_per_node = GPN;
	/* 4096 for every model: llama3-405b's 128K context needs context
	 * parallelism, which the search does not have yet */
	r->seq = 4096;
	/* the bounds below are the GPUs' own memory: no ZeRO-Offload */
	r->offload = 0;
	/* DeepSpeed refuses ZeRO-3 with MoE layers: on a prime node count
	 * (PP 1 or one stage per node) an MoE model fits only with it, which
	 * Megatron-LM runs as Megatron-FSDP (asked for: never searched) */
	if (m->experts > 0) {
		r->framework = DTPLAN_FRAMEWORK_MEGATRON;
		r->zero = 3;
	}
}

/* Checks a plan's own arithmetic: the degrees multiply to the GPUs, the
 * stages hold every layer, the batch is the one trained, within 5%. */
static void assert_consistent(const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	const struct dtplan_request *r = &p->request;
	int sum = 0;

	assert_int_equal(c->tp * c->pp * c->dp, r->gpus);
	for (int i = 0; i < c->pp; i++) {
		int l = dtplan_stage_layers_at(&c->stages, c->pp, i);

		assert_true(l >= 1);
		sum += l;
	}
	assert_int_equal(sum, r->model.layers);
	assert_int_equal(c->global_batch, c->dp * c->micro_batch * c->num_microbatches);
	assert_true(fabs((double)c->global_batch - r->global_batch) <=
		    DTPLAN_BATCH_TOLERANCE * r->global_batch);
	assert_true(c->memory.total <= r->gpu.memory_bytes * (1.0 - r->memory_headroom));
}

/*
 * For each preset and GPU, at sequence 4096: the nodes below the fewest that fit get
 * DTPLAN_ERR_NO_FIT naming that count, every count from it to 64 gets a
 * plan (so the count of plannable sizes is 64 - fewest + 1), and the
 * fewest is no lower than the weights and Adam state alone allow (16 bytes
 * per parameter over 90% of each GPU, DESIGN.md) and at most one node
 * more (activations and the split rules may take one).
 */
static void plan_create__every_preset_every_node_count__plans_or_names_fewest(void **state)
{
	static const char *const gpus[] = {"h100-sxm", "a100-80gb"};
	const struct dtplan_model *presets;
	size_t n_presets, total_planned = 0, total_expected = 0;

	(void)state;
	presets = dtplan_model_presets(&n_presets);
	for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
		for (size_t k = 0; k < n_presets; k++) {
			const struct dtplan_gpu *gpu = dtplan_gpu_find(gpus[g], NULL);
			double usable_node = GPN * gpu->memory_bytes * 0.9;
			/* the model state per parameter: 16 bytes as DeepSpeed
			 * holds it, 18 with Megatron-LM's fp32 main gradients
			 * (request_for()'s framework for an MoE model) */
			double held = presets[k].experts > 0 ? 18.0 : 16.0;
			int bound = (int)ceil(held * presets[k].params / usable_node);
			int fewest = 0, planned = 0;
			char want[64];

			for (int nodes = 1; nodes <= MAX_NODES; nodes++) {
				struct dtplan_request r;
				struct dtplan_plan *p = NULL;
				struct dtplan_error err = {0};
				enum dtplan_err rv;

				request_for(&r, &presets[k], gpus[g], nodes * GPN);
				rv = dtplan_plan_create(&r, NULL, &p, &err);
				if (rv == DTPLAN_OK) {
					assert_consistent(p);
					if (fewest == 0)
						fewest = nodes;
					planned++;
				} else if (fewest != 0) {
					fail_msg("%s on %d %s nodes: no plan after %d nodes "
						 "planned: %s",
						 presets[k].name, nodes, gpus[g], fewest, err.text);
				} else if (rv != DTPLAN_ERR_NO_FIT || nodes >= bound + 2) {
					fail_msg("%s on %d %s nodes (state needs %d): %s",
						 presets[k].name, nodes, gpus[g], bound, err.text);
				}
				dtplan_plan_destroy(p);
			}
			if (fewest == 0)
				fail_msg("%s on %s: no plan on up to %d nodes", presets[k].name,
					 gpus[g], MAX_NODES);
			if (fewest < bound || fewest > (bound > 1 ? bound : 1) + 1)
				fail_msg("%s on %s: fewest nodes %d, state alone needs %d",
					 presets[k].name, gpus[g], fewest, bound);
			assert_int_equal(planned, MAX_NODES - fewest + 1);
			total_planned += (size_t)planned;
			total_expected += (size_t)(MAX_NODES - fewest + 1);
			/* every count below names the fewest */
			snprintf(want, sizeof(want), "the fewest that fit are %d GPUs (%d %s of 8)",
				 fewest * GPN, fewest, fewest == 1 ? "node" : "nodes");
			for (int nodes = 1; nodes < fewest; nodes++) {
				struct dtplan_request r;
				struct dtplan_plan *p = NULL;
				struct dtplan_error err = {0};

				request_for(&r, &presets[k], gpus[g], nodes * GPN);
				assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err),
						 DTPLAN_ERR_NO_FIT);
				if (strstr(err.text, want) == NULL)
					fail_msg("%s on %d nodes: '%s' lacks '%s'", presets[k].name,
						 nodes, err.text, want);
			}
		}
	}
	assert_int_equal(total_planned, total_expected);
	assert_true(total_planned > 0);
}

static void plan_for_dims(const char *spec, int gpus, int gbs, struct dtplan_plan **p)
{
	struct dtplan_model m;
	struct dtplan_request r;
	struct dtplan_error err = {0};

	assert_int_equal(dtplan_model_parse(spec, &m, &err), DTPLAN_OK);
	request_for(&r, &m, "h100-sxm", gpus);
	r.global_batch = gbs;
	if (dtplan_plan_create(&r, NULL, p, &err) != DTPLAN_OK)
		fail_msg("%s on %d GPUs, batch %d: %s", spec, gpus, gbs, err.text);
	assert_consistent(*p);
}

/* 70 layers on 384 GPUs (3 x 2^7), global batch 2048 = 2^11. */
static void plan_create__70_layers_384_gpus__plans(void **state)
{
	struct dtplan_plan *p = NULL;

	(void)state;
	plan_for_dims("layers=70,hidden=8192,heads=64,kv_heads=8,ffn=28672,vocab=128256,"
		      "mlp=swiglu,seq=4096",
		      384, 2048, &p);
	dtplan_plan_destroy(p);
}

/* 44 layers on 96 GPUs, global batch 1538 = 2 x 769 (prime): no DP above 2
 * divides it, so the plan trains a multiple of its DP within 5%. */
static void plan_create__44_layers_96_gpus_batch_1538__nearest_batch(void **state)
{
	struct dtplan_plan *p = NULL;
	const struct dtplan_candidate *c;

	(void)state;
	plan_for_dims("layers=44,hidden=6144,heads=48,ffn=24576,vocab=50257,seq=2048", 96, 1538,
		      &p);
	c = &p->best;
	if (c->dp > 2)
		assert_int_not_equal(c->global_batch, 1538);
	/* the nearest multiple of dp x micro-batch */
	assert_true(abs(c->global_batch - 1538) <= c->dp * c->micro_batch / 2);
	dtplan_plan_destroy(p);
}

/* A pipeline deeper than the layers divide: 71 layers in 4 stages. */
static void plan_create__fixed_pp_not_dividing_layers__uneven_stages(void **state)
{
	struct dtplan_model m;
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	(void)state;
	assert_int_equal(dtplan_model_parse("layers=71,hidden=8192,heads=64,kv_heads=8,ffn=28672,"
					    "vocab=32000,mlp=swiglu",
					    &m, NULL),
			 DTPLAN_OK);
	request_for(&r, &m, "h100-sxm", 128);
	r.pp = 4;
	r.tp = 8;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	assert_consistent(p);
	assert_int_equal(p->best.pp, 4);
	/* ceil(71 / 4) = 18: no stage holds more */
	for (int i = 0; i < 4; i++)
		assert_true(dtplan_stage_layers_at(&p->best.stages, 4, i) <= 18);
	dtplan_plan_destroy(p);
}

/*
 * An exact global batch nothing trains: 2 layers and 4 heads allow TP x PP
 * up to 8, so 24 GPUs have DP 3 at least, and 1021 is prime.  The refusal
 * names the multiples of the DP the inexact plan picks around 1021.
 */
static void plan_create__exact_batch_unreachable__names_nearest(void **state)
{
	struct dtplan_model m;
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	char want[128];
	int dp;

	(void)state;
	assert_int_equal(dtplan_model_parse("layers=2,hidden=512,heads=4,ffn=2048,vocab=1000", &m,
					    NULL),
			 DTPLAN_OK);
	request_for(&r, &m, "h100-sxm", 24);
	assert_int_equal(dtplan_parse_global_batch("1021", "gbs", &r, NULL), DTPLAN_OK);
	assert_false(r.exact_batch);
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	dp = p->best.dp;
	assert_true(dp >= 3);
	assert_true(p->best.global_batch != 1021);
	dtplan_plan_destroy(p);
	p = NULL;

	assert_int_equal(dtplan_parse_global_batch("1021!", "gbs", &r, NULL), DTPLAN_OK);
	assert_true(r.exact_batch);
	assert_int_equal(r.global_batch, 1021);
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_ERR_NO_FIT);
	assert_null(p);
	snprintf(want, sizeof(want), "the nearest are %d and %d", 1021 / dp * dp,
		 1021 / dp * dp + dp);
	if (strstr(err.text, "global batch 1021 is exact") == NULL ||
	    strstr(err.text, want) == NULL)
		fail_msg("'%s' lacks '%s'", err.text, want);
	/* an exact batch a split trains is planned exactly: 1020 = 3 x 340 */
	assert_int_equal(dtplan_parse_global_batch("1020!", "gbs", &r, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	assert_int_equal(p->best.global_batch, 1020);
	dtplan_plan_destroy(p);
}

/* A batch smaller than the narrowest DP: the hint names the batch, not fewer GPUs. */
static void plan_create__batch_below_min_dp__names_batch(void **state)
{
	struct dtplan_model m;
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_model_parse("llama3-8b", &m, NULL), DTPLAN_OK);
	request_for(&r, &m, "h100-sxm", 512);
	r.global_batch = 1;
	/* TP at most 8 (a node), PP at most 32 layers: DP at least 512 / 256 = 2 */
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_ERR_NO_FIT);
	assert_non_null(strstr(err.text, "global batch 1 is too small for 512 GPUs"));
	assert_non_null(strstr(err.text, "at least 2"));
	assert_null(strstr(err.text, "fewest"));
}

/* One node of n GPUs of a model (memory_bytes 0: unknown), each its own
 * domain, as node JSON would describe it. */
static void one_node(struct dtplan_node *n, const char *model, double memory_bytes, int gpus)
{
	char json[4096];
	size_t len;
	struct dtplan_error err = {0};

	len = (size_t)snprintf(json, sizeof(json),
			       "{\"hostname\": \"g1\", \"source\": \"xml\", \"cores\": 8, "
			       "\"numa_nodes\": 1, \"nics\": [], \"gpus\": [");
	for (int i = 0; i < gpus; i++)
		len += (size_t)
			snprintf(json + len, sizeof(json) - len,
				 "%s{\"vendor\": \"nvidia\", \"model\": \"%s\", "
				 "\"pci_bus_id\": \"0000:%02x:00.0\", \"memory_bytes\": %.0f, "
				 "\"numa\": 0, \"domain\": %d, \"nic\": null}",
				 i ? ", " : "", model, i + 1, memory_bytes, i);
	len += (size_t)snprintf(json + len, sizeof(json) - len, "], \"domains\": [");
	for (int i = 0; i < gpus; i++)
		len += (size_t)snprintf(json + len, sizeof(json) - len,
					"%s{\"gpus\": [%d], \"bandwidth_bytes_per_s\": 0}",
					i ? ", " : "", i);
	snprintf(json + len, sizeof(json) - len, "]}");
	if (dtplan_node_from_json(json, n, &err) != DTPLAN_OK)
		fail_msg("node JSON: %s\n%s", err.text, json);
}

static const struct dtplan_warning *warning(const struct dtplan_plan *p, const char *code)
{
	for (size_t i = 0; i < p->n_warnings; i++)
		if (strcmp(p->warnings[i].code, code) == 0)
			return &p->warnings[i];
	return NULL;
}

/* Issue 13, finding 20: a node whose inventory says T4 was planned as the
 * default h100-sxm ("does not fit on 1 h100-sxm GPUs").  The measured GPU
 * wins over the default: a catalog model takes its entry, a model the
 * catalog lacks its name and measured memory (with a warning); what the
 * user asked for stays, with a warning. */
static void plan_create__inventory_gpu__wins_over_default(void **state)
{
	/* Tesla T4: 15472384 KiB, as CUDA reports it through hwloc */
	const double t4 = 15472384.0 * 1024;
	struct dtplan_node *node = calloc(1, sizeof(*node));
	struct dtplan_cluster cl = {.n_nodes = 1};
	struct dtplan_request r;
	struct dtplan_model m;
	struct dtplan_plan *p = NULL;
	struct dtplan_error err = {0};
	const struct dtplan_warning *w;

	(void)state;
	assert_non_null(node);
	cl.nodes = node;
	one_node(node, "Tesla T4", t4, 1);
	/* 500M parameters: 8 GB of weights and Adam state fit a T4 */
	assert_int_equal(dtplan_model_parse("500M", &m, &err), DTPLAN_OK);
	dtplan_request_init(&r);
	r.model = m;
	r.seq = 512;
	r.global_batch = 8;
	if (dtplan_plan_create(&r, &cl, &p, &err) != DTPLAN_OK)
		fail_msg("500M on a T4: %s", err.text);
	assert_string_equal(p->request.gpu.name, "Tesla T4");
	assert_true(p->request.gpu.memory_bytes == t4);
	assert_true(p->best.memory.total <= t4 * 0.9);
	w = warning(p, "gpu-unknown");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "GPU model 'Tesla T4' is not in dtplan's catalog: "
					   "planned with its 15.84 GB of memory"));
	dtplan_plan_destroy(p);
	p = NULL;

	/* 7B does not fit, and the error names the T4, not the default */
	assert_int_equal(dtplan_model_parse("7B", &m, &err), DTPLAN_OK);
	r.model = m;
	assert_int_equal(dtplan_plan_create(&r, &cl, &p, &err), DTPLAN_ERR_NO_FIT);
	assert_non_null(strstr(err.text, "does not fit on 1 Tesla T4 GPUs (14.26 GB usable"));
	assert_null(strstr(err.text, "h100"));

	/* A model the catalog knows takes its entry; no warning */
	one_node(node, "NVIDIA H200", 0, 8);
	r.model = m;
	r.global_batch = 64;
	assert_int_equal(dtplan_plan_create(&r, &cl, &p, &err), DTPLAN_OK);
	assert_string_equal(p->request.gpu.name, "h200");
	assert_true(p->request.gpu.memory_bytes == dtplan_gpu_find("h200", NULL)->memory_bytes);
	assert_null(warning(p, "gpu-unknown"));
	dtplan_plan_destroy(p);
	p = NULL;

	/* The user's choice stays, and the plan says the nodes differ */
	r.gpu = *dtplan_gpu_find("a100-80gb", NULL);
	r.gpu_from = DTPLAN_GPU_FROM_USER;
	assert_int_equal(dtplan_plan_create(&r, &cl, &p, &err), DTPLAN_OK);
	assert_string_equal(p->request.gpu.name, "a100-80gb");
	w = warning(p, "gpu-type");
	assert_non_null(w);
	assert_string_equal(w->message,
			    "planned for a100-80gb GPUs as asked, but the nodes have NVIDIA H200 "
			    "(h200)");
	dtplan_plan_destroy(p);
	free(node);
}

/* Inventory model strings and PCI ids to catalog entries. */
static void gpu_match__inventory_models__catalog_or_null(void **state)
{
	static const struct {
		const char *model;
		double memory;
		const char *name; /* NULL: not in the catalog */
	} cases[] = {
		{"NVIDIA H100 80GB HBM3", 0, "h100-sxm"},
		{"GH100 [H100 SXM5 80GB]", 0, "h100-sxm"},
		{"10de:2330", 0, "h100-sxm"},
		{"NVIDIA H100 96GB HBM2e", 0, "h100-96gb"},
		{"NVIDIA H100", 96e9, "h100-96gb"},
		{"NVIDIA H100", 85.5e9, "h100-sxm"},
		{"NVIDIA H100 PCIe", 0, NULL},
		{"NVIDIA H100 NVL", 0, NULL},
		{"GH100 [H200 SXM 141GB]", 0, "h200"},
		{"10de:2335", 0, "h200"},
		{"NVIDIA A100-SXM4-80GB", 0, "a100-80gb"},
		{"NVIDIA A100-SXM4-40GB", 0, "a100-40gb"},
		{"NVIDIA A100", 85e9, "a100-80gb"},
		{"NVIDIA A100", 42e9, "a100-40gb"},
		{"NVIDIA A100", 0, NULL},
		{"NVIDIA B200", 0, "b200"},
		{"NVIDIA GB200", 0, "gb200"},
		{"NVIDIA GB300", 0, "gb300"},
		{"NVIDIA B300 SXM6 AC", 0, "b300"},
		{"AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", 0, "mi250x"},
		{"AMD Instinct MI300X", 0, "mi300x"},
		{"Tesla T4", 0, NULL},
		{"TU104GL [Tesla T4]", 0, NULL},
		{"Tesla V100-SXM3-32GB-H", 0, NULL},
		{"h100-sxm", 0, "h100-sxm"},
		{"XH1000", 0, NULL},
		{"", 0, NULL},
	};

	(void)state;
	assert_null(dtplan_gpu_match(NULL, 0));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dtplan_gpu *g = dtplan_gpu_match(cases[i].model, cases[i].memory);

		if (cases[i].name == NULL && g != NULL)
			fail_msg("'%s': %s, expected none", cases[i].model, g->name);
		if (cases[i].name != NULL && (g == NULL || strcmp(g->name, cases[i].name) != 0))
			fail_msg("'%s': %s, expected %s", cases[i].model, g ? g->name : "none",
				 cases[i].name);
	}
}

static void parse_global_batch__forms__exact_flag(void **state)
{
	static const struct {
		const char *text;
		enum dtplan_err rv;
		int gbs;
		bool exact;
	} cases[] = {
		{"1024", DTPLAN_OK, 1024, false},
		{"1024!", DTPLAN_OK, 1024, true},
		{"1!", DTPLAN_OK, 1, true},
		{"!", DTPLAN_ERR_INVAL, 0, false},
		{"", DTPLAN_ERR_PARSE, 0, false},
		{"0", DTPLAN_ERR_RANGE, 0, false},
		{"12!!", DTPLAN_ERR_PARSE, 0, false},
		{"x!", DTPLAN_ERR_PARSE, 0, false},
		{"16777217", DTPLAN_ERR_RANGE, 0, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_request r;
		struct dtplan_error err = {0};
		enum dtplan_err rv;

		dtplan_request_init(&r);
		rv = dtplan_parse_global_batch(cases[i].text, "gbs", &r, &err);
		if (rv != cases[i].rv)
			fail_msg("'%s': %s, expected %s (%s)", cases[i].text, dtplan_strerror(rv),
				 dtplan_strerror(cases[i].rv), err.text);
		if (rv == DTPLAN_OK) {
			assert_int_equal(r.global_batch, cases[i].gbs);
			assert_int_equal(r.exact_batch, cases[i].exact);
		} else {
			assert_int_equal(r.global_batch, 1024);
			assert_false(r.exact_batch);
		}
	}
	assert_int_equal(dtplan_parse_global_batch(NULL, "gbs", NULL, NULL), DTPLAN_ERR_PARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_create__every_preset_every_node_count__plans_or_names_fewest),
		cmocka_unit_test(plan_create__70_layers_384_gpus__plans),
		cmocka_unit_test(plan_create__44_layers_96_gpus_batch_1538__nearest_batch),
		cmocka_unit_test(plan_create__fixed_pp_not_dividing_layers__uneven_stages),
		cmocka_unit_test(plan_create__exact_batch_unreachable__names_nearest),
		cmocka_unit_test(plan_create__batch_below_min_dp__names_batch),
		cmocka_unit_test(plan_create__inventory_gpu__wins_over_default),
		cmocka_unit_test(gpu_match__inventory_models__catalog_or_null),
		cmocka_unit_test(parse_global_batch__forms__exact_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
