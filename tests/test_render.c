/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_render.c: plan -> text block and SVG (lib/launch/render.c).
 */
#include "test_common.h"

/* A plan of model on gpus A100-80GB; pp > 0 pins the pipeline stages. */
static struct dtplan_plan *make_plan_pp(const char *model, int gpus, int pp)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse(model, &r.model, NULL), DTPLAN_OK);
	r.gpu = *dtplan_gpu_find("a100-80gb", NULL);
	r.gpus = gpus;
	r.pp = pp;
	r.train_tokens = pp > 0 ? 2e12 : 0.0;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	return p;
}

static struct dtplan_plan *make_plan(const char *model, int gpus)
{
	return make_plan_pp(model, gpus, 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s != NULL; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void render_text__70b__every_section(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-70b", 128);
	char *text = NULL, want[128];

	(void)state;
	assert_int_equal(dtplan_plan_render_text(p, &text, NULL), DTPLAN_OK);
	assert_true(strncmp(text, "dtplan plan", 11) == 0);
	snprintf(want, sizeof(want), "TP %d x PP %d x DP %d", p->best.tp, p->best.pp, p->best.dp);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "llama2-70b: 68.98B parameters"));
	assert_non_null(strstr(text, "128 x a100-80gb (16 nodes of 8)"));
	/* 81920 MiB * 0.9 */
	assert_non_null(strstr(text, "of 77.31 GB usable"));
	assert_non_null(strstr(text, "kernels      bf16, flash attention, deepspeed memory count"));
	assert_non_null(strstr(text, "+ optimizer "));
	assert_null(strstr(text, "training     "));
	assert_non_null(strstr(text, "step time"));
	assert_non_null(strstr(text, "MFU"));
	assert_non_null(strstr(text, "runner-up"));
	assert_non_null(strstr(text, "why not: "));
	assert_non_null(strstr(text, "checkpoint   every"));
	assert_non_null(strstr(text, "job MTBF"));
	assert_null(strstr(text, "rank map"));
	free(text);
	dtplan_plan_destroy(p);
}

static void render_text__warnings_degraded_ranks__listed(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", 8);
	char *text = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_add_warning(p, "pipeline-bubble", "bubble is %d%%", 30),
			 DTPLAN_OK);
	dtplan_plan_set_degraded(p, "hwloc XML missing on %s", "gpu02");
	p->n_nodes = 1;
	p->node_names = calloc(1, sizeof(*p->node_names));
	p->n_ranks = 2;
	p->ranks = calloc(2, sizeof(*p->ranks));
	assert_non_null(p->node_names);
	assert_non_null(p->ranks);
	snprintf(p->node_names[0], 64, "gpu01");
	p->ranks[1].gpu = 1;
	p->ranks[1].dp_rank = 1;
	snprintf(p->ranks[1].nic, sizeof(p->ranks[1].nic), "mlx5_1");
	assert_int_equal(dtplan_plan_render_text(p, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, "warning      [pipeline-bubble] bubble is 30%"));
	assert_non_null(strstr(text, "degraded     hwloc XML missing on gpu02"));
	assert_non_null(strstr(text, "rank map"));
	assert_non_null(strstr(text, "gpu01            g0:r0(0,0,0) g1:r1(0,0,1)@mlx5_1"));
	free(text);
	dtplan_plan_destroy(p);
}

static void render_text__pipeline_and_tokens__stages_and_training(void **state)
{
	struct dtplan_plan *p = make_plan_pp("llama2-70b", 128, 4);
	char *text = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_render_text(p, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, "stages       20 + 20 + 20 + 20 layers"));
	assert_non_null(strstr(text, "training     2.00T tokens in 476838 steps"));
	assert_non_null(strstr(text, "goodput"));
	free(text);
	dtplan_plan_destroy(p);
}

static void render_svg__128_gpus__one_rect_per_gpu_coloured_by_stage(void **state)
{
	struct dtplan_plan *p = make_plan_pp("llama2-70b", 128, 4);
	char *svg = NULL;

	(void)state;
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_true(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
	assert_non_null(strstr(svg, "</svg>\n"));
	/* 16 nodes of 8 GPUs */
	assert_int_equal(count(svg, "class=\"gpu\""), 128);
	assert_int_equal(count(svg, "class=\"node\""), 16);
	/* rank order tp, dp, pp: rank 127 is in the last stage, pp - 1 */
	assert_non_null(strstr(svg, "rank 127, PP stage 3"));
	assert_non_null(strstr(svg, "rank 0, PP stage 0"));
	/* one legend entry per stage, with distinct hues */
	assert_int_equal(count(svg, ">stage "), (size_t)p->best.pp);
	assert_non_null(strstr(svg, "hsl(90,65%,60%)"));
	free(svg);
	dtplan_plan_destroy(p);
}

static void render_svg__ranks_and_odd_names__escaped(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", 8);
	char *svg = NULL;

	(void)state;
	snprintf(p->request.model.name, sizeof(p->request.model.name), "a<b>&\"c\"");
	p->n_nodes = 1;
	p->node_names = calloc(1, sizeof(*p->node_names));
	p->n_ranks = 1;
	p->ranks = calloc(1, sizeof(*p->ranks));
	assert_non_null(p->node_names);
	assert_non_null(p->ranks);
	snprintf(p->node_names[0], 64, "n&1");
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_non_null(strstr(svg, "a&lt;b&gt;&amp;&quot;c&quot;"));
	assert_non_null(strstr(svg, ">n&amp;1<"));
	assert_null(strstr(svg, "a<b>"));
	/* one rank on GPU 0; the other seven GPUs of the node are unassigned (grey) */
	assert_int_equal(count(svg, "#dddddd"), 7);
	free(svg);
	dtplan_plan_destroy(p);
}

static void render__null__inval(void **state)
{
	char *out = (char *)"x";
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_plan_render_text(NULL, &out, &err), DTPLAN_ERR_INVAL);
	assert_null(out);
	out = (char *)"x";
	assert_int_equal(dtplan_plan_render_svg(NULL, &out, &err), DTPLAN_ERR_INVAL);
	assert_null(out);
	assert_int_equal(dtplan_plan_render_text(NULL, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_plan_render_svg(NULL, NULL, NULL), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(render_text__70b__every_section),
		cmocka_unit_test(render_text__pipeline_and_tokens__stages_and_training),
		cmocka_unit_test(render_text__warnings_degraded_ranks__listed),
		cmocka_unit_test(render_svg__128_gpus__one_rect_per_gpu_coloured_by_stage),
		cmocka_unit_test(render_svg__ranks_and_odd_names__escaped),
		cmocka_unit_test(render__null__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
