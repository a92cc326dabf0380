/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_pipeline.c: 1F1B and interleaved schedule simulation.
 */
#include "test_common.h"

static struct dtplan_pipeline *simulate(int p, int m, int v, double f, double b)
{
	struct dtplan_pipeline_in in = {
		.stages = p, .microbatches = m, .chunks = v, .forward = f, .backward = b};
	struct dtplan_pipeline *pl = NULL;
	struct dtplan_error err;

	dtplan_error_clear(&err);
	if (dtplan_pipeline_simulate(&in, &pl, &err) != DTPLAN_OK)
		fail_msg("p=%d m=%d v=%d: %s", p, m, v, err.text);
	assert_non_null(pl);
	return pl;
}

static void pipeline__p4_m8__bubble_3_of_11(void **state)
{
	struct dtplan_pipeline *pl = simulate(4, 8, 1, 1.0, 2.0);

	(void)state;
	/* (m + p - 1)(F + B) = 11 * 3 = 33; ideal 8 * 3 = 24; 9/33 = 3/11 = 27.3% */
	assert_near(pl->makespan, 33.0, 1e-9);
	assert_near(pl->ideal, 24.0, 1e-9);
	assert_near(pl->bubble_fraction, 3.0 / 11.0, 1e-12);
	assert_near(pl->bubble_fraction, 0.273, 0.0005);
	assert_int_equal(pl->n_ops, 2 * 8 * 4);
	dtplan_pipeline_destroy(pl);
}

static void pipeline__grid__matches_closed_form(void **state)
{
	static const int ps[] = {1, 2, 3, 4, 8, 16};
	static const int ms[] = {1, 2, 3, 4, 7, 8, 16, 33, 64};
	static const double bs[] = {1.0, 2.0, 3.5};

	(void)state;
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		for (size_t j = 0; j < sizeof(ms) / sizeof(ms[0]); j++) {
			for (size_t k = 0; k < sizeof(bs) / sizeof(bs[0]); k++) {
				struct dtplan_pipeline *pl = simulate(ps[i], ms[j], 1, 1.0, bs[k]);
				/* (p - 1)/(m + p - 1) */
				double want = (double)(ps[i] - 1) / (ms[j] + ps[i] - 1);

				if (fabs(pl->bubble_fraction - want) > 1e-12)
					fail_msg("p=%d m=%d b=%g: %.12f, expected %.12f", ps[i],
						 ms[j], bs[k], pl->bubble_fraction, want);
				assert_near(dtplan_bubble_fraction(ps[i], ms[j]), want, 1e-15);
				dtplan_pipeline_destroy(pl);
			}
		}
	}
}

static void pipeline__backward_twice_forward__fraction_unchanged(void **state)
{
	struct dtplan_pipeline *a = simulate(8, 24, 1, 1.0, 1.0);
	struct dtplan_pipeline *b = simulate(8, 24, 1, 1.0, 2.0);

	(void)state;
	/* 7/31 either way; the makespan scales with F + B: 31 * 2 and 31 * 3 */
	assert_near(a->bubble_fraction, b->bubble_fraction, 1e-12);
	assert_near(a->bubble_fraction, 7.0 / 31.0, 1e-12);
	assert_near(a->makespan, 62.0, 1e-9);
	assert_near(b->makespan, 93.0, 1e-9);
	dtplan_pipeline_destroy(a);
	dtplan_pipeline_destroy(b);
}

static void pipeline__p4_five_percent__needs_57_microbatches(void **state)
{
	struct dtplan_pipeline *pl;

	(void)state;
	/* 3/(56 + 3) = 0.0508 > 5% */
	pl = simulate(4, 56, 1, 1.0, 2.0);
	assert_true(pl->bubble_fraction > 0.05);
	dtplan_pipeline_destroy(pl);
	/* 3/(57 + 3) = 0.05 */
	pl = simulate(4, 57, 1, 1.0, 2.0);
	assert_true(pl->bubble_fraction <= 0.05 + 1e-12);
	assert_near(pl->bubble_fraction, 0.05, 1e-12);
	dtplan_pipeline_destroy(pl);
	assert_true(dtplan_bubble_fraction(4, 56) > 0.05);
	assert_true(dtplan_bubble_fraction(4, 57) <= 0.05);
}

/* Interleaved: bubble relative to ideal (p-1)/(v m); p 4, m 8, v 2: 3/16 = 0.1875.
 * Without communication costs Megatron's order reaches the closed form. */
static const struct {
	int p, m, v;
} interleaved_cases[] = {
	{4, 8, 2}, {4, 16, 2}, {4, 16, 4}, {8, 32, 2},  {8, 64, 4},
	{2, 8, 3}, {4, 4, 2},  {8, 8, 2},  {16, 64, 4},
};

static void pipeline__interleaved__near_closed_form_below_1f1b(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(interleaved_cases) / sizeof(interleaved_cases[0]); i++) {
		int p = interleaved_cases[i].p, m = interleaved_cases[i].m;
		int v = interleaved_cases[i].v;
		struct dtplan_pipeline *il = simulate(p, m, v, 1.0, 2.0);
		struct dtplan_pipeline *plain = simulate(p, m, 1, 1.0, 2.0);
		double ratio = (il->makespan - il->ideal) / il->ideal;
		double want = dtplan_bubble_ratio_interleaved(p, m, v);

		/* same work: m (F + B) */
		assert_near(il->ideal, plain->ideal, 1e-9);
		assert_int_equal(il->n_ops, (size_t)(2 * m * p * v));
		if (fabs(ratio - want) > 1e-9)
			fail_msg("p=%d m=%d v=%d: bubble/ideal %.4f, expected about %.4f", p, m, v,
				 ratio, want);
		if (!(il->makespan < plain->makespan))
			fail_msg("p=%d m=%d v=%d: interleaved %.3f not below 1F1B %.3f", p, m, v,
				 il->makespan, plain->makespan);
		dtplan_pipeline_destroy(il);
		dtplan_pipeline_destroy(plain);
	}
}

/* Every (stage, chunk, micro-batch) runs forward and backward once, stages never
 * overlap, ops are ordered by stage then start, and dependencies hold. */
static void check_schedule(const struct dtplan_pipeline *pl, int p, int m, int v, double f,
			   double b)
{
	int n_virtual = p * v;
	double *fend = calloc((size_t)(n_virtual * m), sizeof(double));
	double *bend = calloc((size_t)(n_virtual * m), sizeof(double));
	int *seen = calloc((size_t)(2 * n_virtual * m), sizeof(int));

	assert_non_null(fend);
	assert_non_null(bend);
	assert_non_null(seen);
	assert_int_equal(pl->n_ops, (size_t)(2 * m * p * v));
	for (size_t i = 0; i < pl->n_ops; i++) {
		const struct dtplan_pipeline_op *op = &pl->ops[i];
		int k = op->chunk * p + op->stage;

		dt_assert_in_range(op->stage, 0, p - 1);
		dt_assert_in_range(op->chunk, 0, v - 1);
		dt_assert_in_range(op->microbatch, 0, m - 1);
		assert_near(op->end - op->start, (op->backward ? b : f) / v, 1e-12);
		if (i > 0 && pl->ops[i - 1].stage == op->stage)
			assert_true(op->start >= pl->ops[i - 1].end - 1e-12);
		if (i > 0)
			assert_true(pl->ops[i - 1].stage <= op->stage);
		seen[(op->backward ? n_virtual * m : 0) + k * m + op->microbatch]++;
		(op->backward ? bend : fend)[k * m + op->microbatch] = op->end;
		assert_true(op->end <= pl->makespan + 1e-12);
	}
	for (int i = 0; i < 2 * n_virtual * m; i++)
		assert_int_equal(seen[i], 1);
	for (size_t i = 0; i < pl->n_ops; i++) {
		const struct dtplan_pipeline_op *op = &pl->ops[i];
		int k = op->chunk * p + op->stage, mb = op->microbatch;

		if (!op->backward && k > 0)
			assert_true(op->start >= fend[(k - 1) * m + mb] - 1e-12);
		if (op->backward && k < n_virtual - 1)
			assert_true(op->start >= bend[(k + 1) * m + mb] - 1e-12);
		if (op->backward)
			assert_true(op->start >= fend[k * m + mb] - 1e-12);
	}
	free(fend);
	free(bend);
	free(seen);
}

static void pipeline__schedules__complete_ordered_dependent(void **state)
{
	struct dtplan_pipeline *pl;

	(void)state;
	pl = simulate(4, 8, 1, 1.0, 2.0);
	check_schedule(pl, 4, 8, 1, 1.0, 2.0);
	/* 1F1B: stage 0 runs 3 warm-up forwards, then F3 B0 F4 B1 ... */
	assert_false(pl->ops[0].backward);
	assert_false(pl->ops[2].backward);
	assert_false(pl->ops[3].backward);
	assert_true(pl->ops[4].backward);
	assert_int_equal(pl->ops[4].microbatch, 0);
	/* the last stage alternates from the start: F0 B0 F1 B1 */
	assert_int_equal(pl->ops[3 * 16].stage, 3);
	assert_false(pl->ops[3 * 16].backward);
	assert_true(pl->ops[3 * 16 + 1].backward);
	/* B0 on the last stage starts when F0 reached it: 4 forwards of 1 s */
	assert_near(pl->ops[3 * 16 + 1].start, 4.0, 1e-12);
	dtplan_pipeline_destroy(pl);

	pl = simulate(4, 8, 2, 1.0, 2.0);
	check_schedule(pl, 4, 8, 2, 1.0, 2.0);
	/* stage 0 warm-up: 2 (4 - 1) + (2 - 1) 4 = 10 forwards; the first four use chunk 0 */
	for (int i = 0; i < 10; i++)
		assert_false(pl->ops[i].backward);
	assert_int_equal(pl->ops[3].chunk, 0);
	assert_int_equal(pl->ops[4].chunk, 1);
	assert_int_equal(pl->ops[4].microbatch, 0);
	assert_true(pl->ops[11].backward);
	assert_int_equal(pl->ops[11].chunk, 1);
	dtplan_pipeline_destroy(pl);

	pl = simulate(3, 9, 3, 2.0, 3.0);
	check_schedule(pl, 3, 9, 3, 2.0, 3.0);
	dtplan_pipeline_destroy(pl);
	pl = simulate(4, 4, 2, 1.0, 2.0);
	check_schedule(pl, 4, 4, 2, 1.0, 2.0);
	dtplan_pipeline_destroy(pl);
	pl = simulate(1, 5, 2, 1.0, 2.0);
	check_schedule(pl, 1, 5, 2, 1.0, 2.0);
	/* one stage: no bubble */
	assert_near(pl->makespan, 15.0, 1e-9);
	assert_near(pl->bubble_fraction, 0.0, 1e-12);
	dtplan_pipeline_destroy(pl);
}

static const struct {
	int p, m, v;
	double f, b;
	enum dtplan_err code;
} bad_cases[] = {
	{0, 8, 1, 1.0, 2.0, DTPLAN_ERR_INVAL},
	{-4, 8, 1, 1.0, 2.0, DTPLAN_ERR_INVAL},
	{4, 0, 1, 1.0, 2.0, DTPLAN_ERR_INVAL},
	{4, 8, 0, 1.0, 2.0, DTPLAN_ERR_INVAL},
	{4, 8, 1, 0.0, 2.0, DTPLAN_ERR_INVAL},
	{4, 8, 1, 1.0, -2.0, DTPLAN_ERR_INVAL},
	{4, 8, 1, NAN, 2.0, DTPLAN_ERR_INVAL},
	{4, 8, 1, 1.0, INFINITY, DTPLAN_ERR_INVAL},
	/* interleaved needs m a multiple of p */
	{4, 6, 2, 1.0, 2.0, DTPLAN_ERR_INVAL},
	{4, 2, 2, 1.0, 2.0, DTPLAN_ERR_INVAL},
	/* 2 * 100000 * 1000 * 1 = 2e8 operations */
	{1000, 100000, 1, 1.0, 2.0, DTPLAN_ERR_RANGE},
	{65536, 65536, 65536, 1.0, 2.0, DTPLAN_ERR_RANGE},
};

static void pipeline__bad_input__error_and_null(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct dtplan_pipeline_in in = {.stages = bad_cases[i].p,
						.microbatches = bad_cases[i].m,
						.chunks = bad_cases[i].v,
						.forward = bad_cases[i].f,
						.backward = bad_cases[i].b};
		struct dtplan_pipeline *pl = (struct dtplan_pipeline *)&in;
		struct dtplan_error err;

		dtplan_error_clear(&err);
		assert_int_equal(dtplan_pipeline_simulate(&in, &pl, &err), bad_cases[i].code);
		assert_null(pl);
		assert_int_equal(err.code, bad_cases[i].code);
		assert_non_null(strstr(err.text, "pipeline"));
	}
	{
		struct dtplan_pipeline_in in = {.stages = 2,
						.microbatches = 2,
						.chunks = 1,
						.forward = 1.0,
						.backward = 1.0};
		struct dtplan_pipeline *pl;

		assert_int_equal(dtplan_pipeline_simulate(NULL, &pl, NULL), DTPLAN_ERR_INVAL);
		assert_null(pl);
		assert_int_equal(dtplan_pipeline_simulate(&in, NULL, NULL), DTPLAN_ERR_INVAL);
	}
	dtplan_pipeline_destroy(NULL);
}

static void bubble_closed_forms__values_and_bad_args(void **state)
{
	(void)state;
	assert_near(dtplan_bubble_fraction(4, 8), 3.0 / 11.0, 1e-15);
	assert_near(dtplan_bubble_fraction(1, 8), 0.0, 0.0);
	/* (8 - 1)/(2 * 32) = 0.109375 */
	assert_near(dtplan_bubble_ratio_interleaved(8, 32, 2), 0.109375, 1e-15);
	assert_near(dtplan_bubble_ratio_interleaved(4, 8, 1), 3.0 / 8.0, 1e-15);
	assert_true(isnan(dtplan_bubble_fraction(0, 8)));
	assert_true(isnan(dtplan_bubble_fraction(4, 0)));
	assert_true(isnan(dtplan_bubble_ratio_interleaved(4, 8, 0)));
	assert_true(isnan(dtplan_bubble_ratio_interleaved(-1, 8, 2)));
}

/*
 * Splits worked by hand: minimise the slowest stage (layers plus the extra
 * work on the ends), then the lightest first stage, then the lightest last.
 */
static const struct {
	int layers, stages;
	double e0, e1;
	int first, middle, last;
} split_cases[] = {
	/* one stage holds everything */
	{32, 1, 0.0, 2.4, 32, 0, 0},
	/* 5 over 2 with the last doing 1 more: 3 and 2 + 1 */
	{5, 2, 0.0, 1.0, 3, 0, 2},
	/* even: 80 over 4 */
	{80, 4, 0.0, 0.0, 20, 20, 20},
	/* 70 over 4: middles 18 leave 34 = 17 + 17 (slowest 18); middles 17 leave
	 * 36 = 18 + 18 (also 18) but a heavier first stage */
	{70, 4, 0.0, 0.0, 17, 18, 17},
	/* 71 over 4: 17 + 18 + 18 + 18 (the lighter first) */
	{71, 4, 0.0, 0.0, 17, 18, 18},
	/* 32 over 4 with the output layer worth 2.4 layers: middles 9 leave 14,
	 * 8 + (6 + 2.4): slowest 9; middles 8 leave 16 = 9 + (7 + 2.4): 9.4 */
	{32, 4, 0.0, 2.4, 8, 9, 6},
	/* as many stages as layers */
	{4, 4, 0.0, 0.0, 1, 1, 1},
	/* a huge output layer leaves the last stage one layer; the rest even out,
	 * the lighter first */
	{10, 3, 0.0, 50.0, 4, 5, 1},
	/* an expensive first stage */
	{12, 3, 3.0, 0.0, 2, 5, 5},
};

static void stage_split__hand_worked__layouts(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		struct dtplan_stage_layers s;
		int sum = 0;

		assert_int_equal(dtplan_stage_split(split_cases[i].layers, split_cases[i].stages,
						    split_cases[i].e0, split_cases[i].e1, &s, NULL),
				 DTPLAN_OK);
		if (s.first != split_cases[i].first || s.middle != split_cases[i].middle ||
		    s.last != split_cases[i].last)
			fail_msg("%d layers over %d: %d/%d/%d, expected %d/%d/%d",
				 split_cases[i].layers, split_cases[i].stages, s.first, s.middle,
				 s.last, split_cases[i].first, split_cases[i].middle,
				 split_cases[i].last);
		for (int k = 0; k < split_cases[i].stages; k++)
			sum += dtplan_stage_layers_at(&s, split_cases[i].stages, k);
		assert_int_equal(sum, split_cases[i].layers);
	}
}

/* The slowest stage of the best Megatron layout (first, equal middles,
 * last), found by trying every one. */
static double brute_force_cost(int l, int p, double e0, double e1)
{
	double best = INFINITY;

	if (p == 1)
		return l + e0 + e1;
	for (int mid = p > 2 ? 1 : 0; (long)(p - 2) * mid <= l - 2; mid++) {
		int r = l - (p - 2) * mid;

		for (int f = 1; f <= r - 1; f++) {
			double c = fmax(p > 2 ? mid : 0.0, fmax(f + e0, r - f + e1));

			best = fmin(best, c);
		}
		if (p == 2)
			break;
	}
	return best;
}

/* Every layer count 1..60 over every stage count, with and without an
 * output layer's extra work: every layer placed, >= 1 per stage, the
 * slowest stage as fast as the best layout, and even stages when the
 * layers divide and nothing costs extra. */
static void stage_split__sweep__optimal_and_complete(void **state)
{
	static const double extras[] = {0.0, 0.47, 1.84, 7.0};

	(void)state;
	for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++)
		for (int l = 1; l <= 60; l++)
			for (int p = 1; p <= l; p++) {
				struct dtplan_stage_layers s;
				int sum = 0;
				double cost = 0.0;

				assert_int_equal(dtplan_stage_split(l, p, 0.0, extras[e], &s, NULL),
						 DTPLAN_OK);
				for (int k = 0; k < p; k++) {
					int n = dtplan_stage_layers_at(&s, p, k);

					assert_true(n >= 1);
					sum += n;
					cost = fmax(cost, n + (k == p - 1 ? extras[e] : 0.0));
				}
				if (p == 1)
					cost = l + extras[e];
				assert_int_equal(sum, l);
				if (fabs(cost - brute_force_cost(l, p, 0.0, extras[e])) > 1e-9)
					fail_msg("%d over %d (+%g): slowest %g, best %g", l, p,
						 extras[e], cost,
						 brute_force_cost(l, p, 0.0, extras[e]));
				if (extras[e] == 0.0 && l % p == 0)
					assert_true(s.first == l / p &&
						    (p < 3 || s.middle == l / p) &&
						    (p < 2 || s.last == l / p));
			}
}

/* The best slowest stage over every middle count, for fixed middles the
 * ends split at the two integers around (R + e1 - e0) / 2 (the ends'
 * cost is convex in f). */
static double full_scan_cost(int l, int p, double e0, double e1)
{
	double best = INFINITY;

	for (int mid = 1; (long)(p - 2) * mid <= l - 2; mid++) {
		int r = l - (p - 2) * mid;
		double f0 = floor((r + e1 - e0) / 2.0);

		for (int d = 0; d < 2; d++) {
			double f = fmin(fmax(f0 + d, 1.0), r - 1.0);

			best = fmin(best, fmax(mid, fmax(f + e0, r - f + e1)));
		}
	}
	return best;
}

/* Layer counts past the scanned range (more than 4096 middle layers per
 * stage): windows around the optimum find as good a split as every count. */
static void stage_split__long_scans__as_good_as_every_middle_count(void **state)
{
	static const int layers[] = {4100, 5003, 9999, 12289, 100000, 1000003};
	static const int stages[] = {3, 4, 5};
	static const double extras[] = {0.0, 1.84, 7.0, 50.0, 3000.0};

	(void)state;
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		for (size_t j = 0; j < sizeof(stages) / sizeof(stages[0]); j++)
			for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++) {
				struct dtplan_stage_layers s;
				int l = layers[i], p = stages[j];
				double cost, want = full_scan_cost(l, p, 0.0, extras[e]);

				assert_int_equal(dtplan_stage_split(l, p, 0.0, extras[e], &s, NULL),
						 DTPLAN_OK);
				assert_int_equal(s.first + (p - 2) * s.middle + s.last, l);
				cost = fmax(s.middle, fmax(s.first, s.last + extras[e]));
				if (fabs(cost - want) > 1e-9)
					fail_msg("%d over %d (+%g): slowest %g, best %g", l, p,
						 extras[e], cost, want);
			}
}

static void stage_split__bad_input__inval_and_zeroed(void **state)
{
	struct dtplan_stage_layers s = {7, 7, 7};
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_stage_split(8, 0, 0.0, 0.0, &s, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(s.first + s.middle + s.last, 0);
	assert_int_equal(dtplan_stage_split(8, 9, 0.0, 0.0, &s, &err), DTPLAN_ERR_INVAL);
	assert_non_null(strstr(err.text, "PP 9"));
	assert_int_equal(dtplan_stage_split(8, 2, -1.0, 0.0, &s, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_stage_split(8, 2, 0.0, NAN, &s, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_stage_split(8, 2, 0.0, INFINITY, &s, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_stage_split(8, 2, 0.0, 0.0, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_stage_layers_at(NULL, 2, 0), 0);
	s = (struct dtplan_stage_layers){3, 4, 5};
	assert_int_equal(dtplan_stage_layers_at(&s, 4, -1), 0);
	assert_int_equal(dtplan_stage_layers_at(&s, 4, 4), 0);
	assert_int_equal(dtplan_stage_layers_at(&s, 4, 2), 4);
}

static void stage_extras__llama3_8b__output_layer_by_hand(void **state)
{
	struct dtplan_model m;
	struct dtplan_stage_layers s;
	double e0, e1;
	char *text;
	/* Vh = 128256 * 4096 = 525336576; P_layer = (params - 2 Vh) / 32; at
	 * s = 8192: e1 = 2 Vh / (2 P_layer + 4 s h) */
	double vh = 128256.0 * 4096.0, per_layer;

	(void)state;
	assert_int_equal(dtplan_model_parse("llama3-8b", &m, NULL), DTPLAN_OK);
	per_layer = (m.params - 2.0 * vh) / 32.0;
	dtplan_stage_extras(&m, 8192, &e0, &e1);
	assert_near(e0, 0.0, 0.0);
	assert_rel(e1, 2.0 * vh / (2.0 * per_layer + 4.0 * 8192.0 * 4096.0), 1e-12);
	/* about 1.84 layers: 32 over 2 is 17 + 15 (17 vs 16.84) */
	assert_int_equal(dtplan_stage_split_model(&m, 8192, 2, &s, NULL), DTPLAN_OK);
	assert_int_equal(s.first, 17);
	assert_int_equal(s.last, 15);
	text = dtplan_stage_layers_format(&s, 2);
	assert_string_equal(text, "17,15");
	free(text);
	s = (struct dtplan_stage_layers){8, 9, 6};
	text = dtplan_stage_layers_format(&s, 4);
	assert_string_equal(text, "8,9,9,6");
	free(text);
	assert_int_equal(dtplan_stage_split_model(NULL, 8192, 2, &s, NULL), DTPLAN_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pipeline__p4_m8__bubble_3_of_11),
		cmocka_unit_test(pipeline__grid__matches_closed_form),
		cmocka_unit_test(pipeline__backward_twice_forward__fraction_unchanged),
		cmocka_unit_test(pipeline__p4_five_percent__needs_57_microbatches),
		cmocka_unit_test(pipeline__interleaved__near_closed_form_below_1f1b),
		cmocka_unit_test(pipeline__schedules__complete_ordered_dependent),
		cmocka_unit_test(pipeline__bad_input__error_and_null),
		cmocka_unit_test(bubble_closed_forms__values_and_bad_args),
		cmocka_unit_test(stage_split__hand_worked__layouts),
		cmocka_unit_test(stage_split__sweep__optimal_and_complete),
		cmocka_unit_test(stage_split__long_scans__as_good_as_every_middle_count),
		cmocka_unit_test(stage_split__bad_input__inval_and_zeroed),
		cmocka_unit_test(stage_extras__llama3_8b__output_layer_by_hand),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
