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
			int bound = (int)ceil(16.0 * presets[k].params / usable_node);
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
					fail_msg("%s on %d %s nodes: no plan after %d nodes planned: %s",
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
	if (strstr(err.text, "global batch 1021 is exact") == NULL || strstr(err.text, want) == NULL)
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

static void parse_global_batch__forms__exact_flag(void **state)
{
	static const struct {
		const char *text;
		enum dtplan_err rv;
		int gbs;
		bool exact;
	} cases[] = {
		{"1024", DTPLAN_OK, 1024, false}, {"1024!", DTPLAN_OK, 1024, true},
		{"1!", DTPLAN_OK, 1, true},       {"!", DTPLAN_ERR_INVAL, 0, false},
		{"", DTPLAN_ERR_PARSE, 0, false}, {"0", DTPLAN_ERR_RANGE, 0, false},
		{"12!!", DTPLAN_ERR_PARSE, 0, false}, {"x!", DTPLAN_ERR_PARSE, 0, false},
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
		cmocka_unit_test(parse_global_batch__forms__exact_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
