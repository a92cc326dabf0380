/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_render.c: plan -> text block and SVG (lib/launch/render.c).
 */
#include "test_common.h"

/* A plan of model on gpus A100-80GB; tp, pp > 0 pin the TP and PP degrees. */
static struct dtplan_plan *make_plan_split(const char *model, int gpus, int tp, int pp)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse(model, &r.model, NULL), DTPLAN_OK);
	r.gpu = *dtplan_gpu_find("a100-80gb", NULL);
	r.gpus = gpus;
	r.tp = tp;
	r.pp = pp;
	r.train_tokens = pp > 0 ? 2e12 : 0.0;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	return p;
}

static struct dtplan_plan *make_plan_pp(const char *model, int gpus, int pp)
{
	return make_plan_split(model, gpus, 0, pp);
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
	/* one legend entry per stage */
	assert_int_equal(count(svg, ">stage "), (size_t)p->best.pp);
	free(svg);
	dtplan_plan_destroy(p);
}

/* WCAG's relative luminance of "#rrggbb" or "#rgb". */
static double luminance(const char *hex)
{
	unsigned int v[3];
	double y = 0;
	const double w[3] = {0.2126, 0.7152, 0.0722};

	if (strlen(hex) == 4) {
		assert_int_equal(sscanf(hex, "#%1x%1x%1x", &v[0], &v[1], &v[2]), 3);
		for (int i = 0; i < 3; i++)
			v[i] *= 17;
	} else {
		assert_int_equal(sscanf(hex, "#%2x%2x%2x", &v[0], &v[1], &v[2]), 3);
	}
	for (int i = 0; i < 3; i++) {
		double c = v[i] / 255.0;

		y += w[i] * (c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
	}
	return y;
}

/* The value of attribute name (` name="`) after at, in buf. */
static void attr(const char *at, const char *name, char *buf, size_t size)
{
	char key[32];
	const char *v, *end;

	snprintf(key, sizeof(key), " %s=\"", name);
	v = strstr(at, key);
	assert_non_null(v);
	v += strlen(key);
	end = strchr(v, '"');
	assert_non_null(end);
	assert_true((size_t)(end - v) < size);
	snprintf(buf, size, "%.*s", (int)(end - v), v);
}

/*
 * Every stage of an SVG of pp stages: the fill of each GPU of the stage (one
 * per stage, into fills), the stage's number on it in a colour that
 * contrasts 4.5:1 or more, and a legend entry of the same fill naming it.
 * Returns the number of distinct fills.
 */
static int stage_fills(const char *svg, int pp, char (*fills)[16])
{
	const char *legend = strstr(svg, "<g class=\"stage-key\">");
	int distinct = 0;

	for (int i = 0; i < pp; i++)
		fills[i][0] = '\0';
	for (const char *g = strstr(svg, "class=\"gpu\""); g != NULL;
	     g = strstr(g + 1, "class=\"gpu\"")) {
		char fill[16], ink[16];
		const char *t = strstr(g, "PP stage "), *end = strstr(g, "</rect>");
		int stage;

		if (t == NULL || t > end)
			continue; /* a GPU without a rank */
		assert_int_equal(sscanf(t, "PP stage %d", &stage), 1);
		assert_true(stage >= 0 && stage < pp);
		attr(g, "fill", fill, sizeof(fill));
		if (fills[stage][0] == '\0')
			snprintf(fills[stage], sizeof(fills[stage]), "%s", fill);
		assert_string_equal(fills[stage], fill);
		/* the stage's number on the GPU, readable */
		t = strstr(end, "<text class=\"st\"");
		assert_non_null(t);
		attr(t, "fill", ink, sizeof(ink));
		assert_int_equal(atoi(strchr(t, '>') + 1), stage);
		{
			double a = luminance(fill) + 0.05, b = luminance(ink) + 0.05;

			assert_true((a > b ? a / b : b / a) >= 4.5);
		}
	}
	assert_non_null(legend);
	for (int i = 0; i < pp; i++) {
		const char *e = legend, *text;
		char fill[16];
		int named;

		assert_true(fills[i][0] != '\0');
		for (int k = 0; k < i; k++)
			e = strstr(e + 1, "<g class=\"stage-key\">");
		assert_non_null(e);
		attr(e, "fill", fill, sizeof(fill));
		assert_string_equal(fill, fills[i]);
		text = strstr(e, "<text");
		assert_non_null(text);
		text = strchr(text, '>') + 1;
		if (strncmp(text, "stage ", 6) == 0)
			text += 6;
		named = atoi(text);
		assert_int_equal(named, i);
		distinct++;
		for (int k = 0; k < i; k++)
			if (strcmp(fills[k], fills[i]) == 0)
				distinct--;
	}
	assert_int_equal(count(svg, "<g class=\"stage-key\">"), (size_t)pp);
	return distinct;
}

static void render_svg__pp16__sixteen_colours_each_named(void **state)
{
	struct dtplan_plan *p = make_plan_pp("llama2-70b", 128, 16);
	char *svg = NULL, fills[16][16];

	(void)state;
	assert_int_equal(p->best.pp, 16);
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_int_equal(stage_fills(svg, 16, fills), 16);
	assert_non_null(strstr(svg, ">stage 15</text>"));
	free(svg);
	dtplan_plan_destroy(p);
}

static void render_svg__pp128__distinct_colours_compact_legend(void **state)
{
	struct dtplan_plan *p = make_plan_pp("layers=128,hidden=4096,heads=32", 256, 128);
	char *svg = NULL, (*fills)[16] = calloc(128, sizeof(*fills));

	(void)state;
	assert_non_null(fills);
	assert_int_equal(p->best.pp, 128);
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_int_equal(stage_fills(svg, 128, fills), 128);
	/* the compact legend: numbers on the colours, no "stage N" */
	assert_null(strstr(svg, ">stage "));
	free(fills);
	free(svg);
	dtplan_plan_destroy(p);
}

/* Colours beyond the picture's stages stay distinct too: 200 stages. */
static void render_svg__pp200__distinct_colours(void **state)
{
	struct dtplan_plan *p = make_plan_pp("layers=200,hidden=2048,heads=16", 200, 200);
	char *svg = NULL, (*fills)[16] = calloc(200, sizeof(*fills));

	(void)state;
	assert_non_null(fills);
	assert_int_equal(p->best.pp, 200);
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_int_equal(stage_fills(svg, 200, fills), 200);
	free(fills);
	free(svg);
	dtplan_plan_destroy(p);
}

/* A plan that claims more stages than the legend names: the rest counted. */
static void render_svg__pp5000__legend_bounded(void **state)
{
	struct dtplan_plan *p = make_plan("llama2-7b", 8);
	char *svg = NULL;

	(void)state;
	p->best.pp = 5000;
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_int_equal(count(svg, "<g class=\"stage-key\">"), 1024);
	assert_non_null(strstr(svg, ">... 3976 more stages</text>"));
	assert_true(strlen(svg) < 200000);
	free(svg);
	dtplan_plan_destroy(p);
}

static void render_svg__tp_groups__outlined_dp_ranks_labelled(void **state)
{
	struct dtplan_plan *p = make_plan_split("llama2-7b", 16, 2, 2);
	char *svg = NULL, want[64];

	(void)state;
	assert_int_equal(p->best.tp, 2);
	assert_int_equal(p->best.dp, 4);
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	/* 16 GPUs in TP groups of 2, each in one node's row: 8 outlines, and
	 * the key's sample */
	assert_int_equal(count(svg, "<rect class=\"tp\""), 8 + 1);
	assert_non_null(strstr(svg, "a TP group of 2 GPUs"));
	/* each DP rank labelled on its GPUs: 2 stages x 2 TP ranks each */
	for (int d = 0; d < 4; d++) {
		snprintf(want, sizeof(want), ">d%d</text>", d);
		assert_int_equal(count(svg, want), 4);
	}
	assert_non_null(strstr(svg, "dN its DP rank (of 4)"));
	free(svg);
	dtplan_plan_destroy(p);

	/* TP 1: no outlines, and the key says so */
	p = make_plan_split("llama2-7b", 8, 1, 1);
	assert_int_equal(p->best.tp, 1);
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_int_equal(count(svg, "class=\"tp\""), 0);
	assert_non_null(strstr(svg, "TP 1: no TP groups"));
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
	snprintf(p->request.gpu.name, sizeof(p->request.gpu.name), "g<&>");
	assert_int_equal(dtplan_plan_render_svg(p, &svg, NULL), DTPLAN_OK);
	assert_non_null(strstr(svg, " x g&lt;&amp;&gt;</text>"));
	assert_null(strstr(svg, "g<&>"));
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
		cmocka_unit_test(render_svg__pp16__sixteen_colours_each_named),
		cmocka_unit_test(render_svg__pp128__distinct_colours_compact_legend),
		cmocka_unit_test(render_svg__pp200__distinct_colours),
		cmocka_unit_test(render_svg__pp5000__legend_bounded),
		cmocka_unit_test(render_svg__tp_groups__outlined_dp_ranks_labelled),
		cmocka_unit_test(render_svg__ranks_and_odd_names__escaped),
		cmocka_unit_test(render__null__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
