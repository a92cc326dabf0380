/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_straggler.c: the step waits for the slowest GPU (lib/plan/
 * straggler.c): the normal quantile, the quantiles of the maximum of N
 * GPUs, and the median and 95th percentile a plan gives, through its JSON
 * and back; the cv learned from the records' step spread (lib/record/
 * learn.c) and which cv a plan uses.
 */
#include "test_common.h"

/* Phi(z) from the C library's erfc(): the check is independent of the
 * rational approximation under test. */
static double phi(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

/* Known quantiles (Abramowitz and Stegun, Table 26.5, and the 68-95-99.7
 * rule's one sigma); Acklam's relative error is below 1.15e-9. */
static void normal_quantile__table__within_1e_8(void **state)
{
	static const struct {
		double p, z;
	} rows[] = {
		{0.5, 0.0},
		{0.8413447460685429, 1.0},
		{0.95, 1.6448536269514722},
		{0.975, 1.959963984540054},
		{0.99, 2.3263478740408408},
		{0.999, 3.090232306167813},
		{0.025, -1.959963984540054},
		{1e-6, -4.753424308822899},
		{0.02425, -1.9727},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double z = dtplan_normal_quantile(rows[i].p);

		if (i + 1 < sizeof(rows) / sizeof(rows[0]))
			assert_true(fabs(z - rows[i].z) <= 1e-8 * fmax(1.0, fabs(rows[i].z)));
		/* every row, and the seam between the regions: Phi(z) = p (a
		 * relative error e in z is one of z e z in p: 1e-7 at 1e-6) */
		assert_true(fabs(phi(z) - rows[i].p) <= 1e-7 * rows[i].p);
	}
	assert_true(isnan(dtplan_normal_quantile(0.0)));
	assert_true(isnan(dtplan_normal_quantile(1.0)));
	assert_true(isnan(dtplan_normal_quantile(-0.5)));
	assert_true(isnan(dtplan_normal_quantile(NAN)));
}

/* The maximum of N iid normals is below z with probability Phi(z)^N: its
 * q-quantile solves Phi(z)^N = q. */
static void max_quantile_z__n_gpus__phi_to_the_n_is_q(void **state)
{
	static const int ns[] = {1, 2, 8, 64, 1024, 16384};

	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (double q = 0.5; q < 0.96; q += 0.45) {
			double z = dtplan_max_quantile_z(q, ns[i]);

			assert_true(fabs(pow(phi(z), ns[i]) - q) < 1e-7);
		}
	/* one GPU: its own median; two: Phi^-1(sqrt(0.5)) = 0.54495 */
	assert_true(fabs(dtplan_max_quantile_z(0.5, 1)) < 1e-12);
	assert_true(fabs(dtplan_max_quantile_z(0.5, 2) - 0.5449521) < 1e-6);
}

static struct dtplan_plan *plan_of(const char *model, int gpus, double cv)
{
	struct dtplan_request r;
	struct dtplan_plan *p = NULL;

	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse(model, &r.model, NULL), DTPLAN_OK);
	r.gpus = gpus;
	r.step_cv = cv;
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, NULL), DTPLAN_OK);
	return p;
}

/*
 * Stated: one GPU's compute varies 3% (sd / mean) and the job has 64
 * GPUs.  The step's median waits cv x compute x Phi^-1(0.5^(1/64)) more
 * than the model's parts, its 95th percentile cv x compute x
 * Phi^-1(0.95^(1/64)); z from the bisection of Phi(z)^64 = q here.
 */
static double z_by_bisection(double q, int n)
{
	double lo = -10.0, hi = 10.0;

	for (int i = 0; i < 200; i++) {
		double mid = 0.5 * (lo + hi);

		if (pow(phi(mid), n) < q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static void plan__cv_3pct_64_gpus__p95_from_the_maximum(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 64, 0.03), *q0 = plan_of("llama3-8b", 64, 0.0);
	const struct dtplan_candidate *c = &p->best;
	const struct dtplan_step *s = &c->step;
	double z50 = z_by_bisection(0.5, 64), z95 = z_by_bisection(0.95, 64), parts;

	(void)state;
	/* z50 = 2.2983, z95 = 3.1555 */
	assert_true(fabs(z50 - 2.2983) < 1e-3 && fabs(z95 - 3.1555) < 1e-3);
	parts = s->compute + s->tp_comm + s->bubble + s->pp_comm + s->dp_exposed + s->optimizer +
		s->ep_comm + s->cp_comm;
	assert_near(s->straggler, 0.03 * s->compute * z50, 1e-6 * s->compute);
	assert_near(s->total, parts + 0.03 * s->compute * z50, 1e-6 * s->total);
	assert_near(c->step_p95, parts + 0.03 * s->compute * z95, 1e-6 * s->total);
	assert_near(c->step_cv, 0.03, 0.0);
	/* no variability: p50 = p95 = the parts */
	assert_near(q0->best.step.straggler, 0.0, 0.0);
	assert_near(q0->best.step_p95, q0->best.step.total, 0.0);
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(q0);
}

/* One GPU waits for nobody at the median; its p95 is its own. */
static void plan__one_gpu__median_unchanged(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 1, 0.02);
	const struct dtplan_step *s = &p->best.step;

	(void)state;
	assert_near(s->straggler, 0.0, 0.0);
	assert_near(p->best.step_p95, s->total + 0.02 * s->compute * 1.6448536269514722,
		    1e-6 * s->total);
	dtplan_plan_destroy(p);
}

/* The default, the site's setting and the plan's JSON read back. */
static void plan__json__p50_p95_read_back(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, 0.05), *b = NULL;
	struct dtplan_request r;
	struct dtplan_config c;
	struct dtplan_error err = {0};
	char *json = NULL;

	(void)state;
	dtplan_request_init(&r);
	assert_near(dtplan_request_step_cv(&r, NULL), DTPLAN_STEP_CV_DEFAULT, 0.0);
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "StepTimeCV=0.04\n", "test", &err),
			 DTPLAN_OK);
	dtplan_request_apply_config(&r, &c);
	assert_near(dtplan_request_step_cv(&r, NULL), 0.04, 0.0);
	dtplan_config_fini(&c);
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	assert_non_null(strstr(json, "\"step_p95_seconds\""));
	assert_non_null(strstr(json, "\"step_p50_seconds\""));
	assert_int_equal(dtplan_plan_from_json(json, &b, &err), DTPLAN_OK);
	assert_near(b->best.step.total, p->best.step.total, 1e-9 * p->best.step.total);
	assert_near(b->best.step_p95, p->best.step_p95, 1e-9 * p->best.step_p95);
	assert_near(b->best.step.straggler, p->best.step.straggler, 1e-9 * p->best.step.total);
	assert_near(b->best.step_cv, 0.05, 1e-12);
	assert_true(p->best.step_p95 > p->best.step.total);
	free(json);
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(b);
}

/* ---- the cv learned from the records' step spread ---- */

/*
 * A run of g GPUs (DP g) on cluster c1 as the planner's own model has it:
 * one GPU's compute normal, mean mu and sd cv mu, the step the slowest of
 * g, so its quartiles sit at mu (1 + cv z(q, g)): median mu (1 + cv z50),
 * interquartile range cv mu (z75 - z25).
 */
static struct dtplan_record run_of(int g, double mu, double cv, int64_t steps)
{
	struct dtplan_record r;
	double z50 = dtplan_max_quantile_z(0.5, g);

	memset(&r, 0, sizeof(r));
	snprintf(r.cluster, sizeof(r.cluster), "c1");
	snprintf(r.gpu, sizeof(r.gpu), "h100-sxm");
	snprintf(r.framework, sizeof(r.framework), "megatron");
	snprintf(r.shape_class, sizeof(r.shape_class), "dp/z1/none");
	r.tp = r.cp = r.pp = 1;
	r.dp = g;
	r.measured_step_s = mu * (1.0 + cv * (z50 > 0.0 ? z50 : 0.0));
	r.measured_spread_s =
		cv * mu * (dtplan_max_quantile_z(0.75, g) - dtplan_max_quantile_z(0.25, g));
	r.model_step_s = r.predicted_step_s = mu;
	r.steps = steps;
	r.checkpoint_s = NAN;
	return r;
}

static void learn_of(const struct dtplan_record *recs, size_t n, struct dtplan_calibration *cal)
{
	struct dtplan_error err = {0};

	assert_int_equal(dtplan_calibration_learn(recs, n, "c1", cal, &err), DTPLAN_OK);
}

/* Stated cv 3% at 1, 8, 64, 512 and 4096 GPUs, steps of 0.5 s to 9 s:
 * learned back as 0.03. */
static void learn_cv__3pct_at_five_sizes__learned_back(void **state)
{
	static const int gs[] = {1, 8, 64, 512, 4096};
	struct dtplan_record recs[5];
	struct dtplan_calibration cal;

	(void)state;
	for (size_t i = 0; i < 5; i++)
		recs[i] = run_of(gs[i], 0.5 + 2.0 * (double)i, 0.03, 100);
	/* one GPU: the normal's own IQR, 2 x 0.6744897501960817 sd */
	assert_near(recs[0].measured_spread_s / recs[0].measured_step_s,
		    0.03 * 2.0 * 0.6744897501960817, 1e-9);
	learn_of(recs, 5, &cal);
	assert_int_equal(cal.cv_runs, 5);
	assert_near(cal.step_cv, 0.03, 1e-9);
	dtplan_calibration_fini(&cal);
}

/* Two runs, runs of 19 steps, runs without a spread, another cluster's:
 * nothing learned; the third run of 20 steps makes three. */
static void learn_cv__too_few_runs_or_steps__none(void **state)
{
	struct dtplan_record recs[6];
	struct dtplan_calibration cal;

	(void)state;
	recs[0] = run_of(8, 1.0, 0.03, 100);
	recs[1] = run_of(64, 1.0, 0.03, DTPLAN_CALIB_CV_MIN_STEPS);
	learn_of(recs, 2, &cal);
	assert_int_equal(cal.cv_runs, 0);
	assert_near(cal.step_cv, 0.0, 0.0);
	assert_int_equal((int)cal.n, 2); /* the corrections are learned all the same */
	dtplan_calibration_fini(&cal);
	recs[2] = run_of(16, 1.0, 0.03, DTPLAN_CALIB_CV_MIN_STEPS - 1);
	recs[3] = run_of(16, 1.0, 0.03, 100);
	recs[3].measured_spread_s = 0.0;
	recs[4] = run_of(16, 1.0, 0.03, 100);
	snprintf(recs[4].cluster, sizeof(recs[4].cluster), "c2");
	learn_of(recs, 5, &cal);
	assert_int_equal(cal.cv_runs, 0);
	dtplan_calibration_fini(&cal);
	recs[5] = run_of(32, 1.0, 0.03, DTPLAN_CALIB_CV_MIN_STEPS);
	learn_of(recs, 6, &cal);
	assert_int_equal(cal.cv_runs, 3);
	assert_near(cal.step_cv, 0.03, 1e-9);
	dtplan_calibration_fini(&cal);
}

/* Runs at 2%, 3% and 40% learn 3%; four at 3% with one at 40%, 3%; a
 * spread wider than the model allows counts as the bound, 0.5. */
static void learn_cv__one_outlier_run__median_holds(void **state)
{
	struct dtplan_record recs[5];
	struct dtplan_calibration cal;

	(void)state;
	recs[0] = run_of(8, 1.0, 0.02, 50);
	recs[1] = run_of(64, 2.0, 0.03, 50);
	recs[2] = run_of(8, 1.0, 0.40, 50);
	learn_of(recs, 3, &cal);
	assert_int_equal(cal.cv_runs, 3);
	assert_near(cal.step_cv, 0.03, 1e-9);
	dtplan_calibration_fini(&cal);
	recs[0] = run_of(128, 3.0, 0.03, 50);
	recs[3] = run_of(1024, 1.0, 0.03, 50);
	learn_of(recs, 4, &cal);
	assert_near(cal.step_cv, 0.03, 1e-9);
	dtplan_calibration_fini(&cal);
	/* three runs whose IQR is the whole median at 1024 GPUs (z50 = 3.2):
	 * m dz < s z50, past any cv */
	for (int i = 0; i < 3; i++) {
		recs[i] = run_of(1024, 1.0, 0.03, 50);
		recs[i].measured_spread_s = recs[i].measured_step_s;
	}
	learn_of(recs, 3, &cal);
	assert_near(cal.step_cv, DTPLAN_STEP_CV_MAX, 0.0);
	dtplan_calibration_fini(&cal);
}

/*
 * The precedence: with records that taught 3% and no StepTimeCV=, the plan
 * uses 3% and says so (text, JSON, read back); StepTimeCV=0.02, the
 * default's own value, still wins as the site's; with neither, the default.
 */
static void plan__learned_cv__records_then_site_wins(void **state)
{
	struct dtplan_record recs[3];
	struct dtplan_calibration cal;
	struct dtplan_request r;
	struct dtplan_config c;
	struct dtplan_error err = {0};
	struct dtplan_plan *p = NULL, *b = NULL;
	enum dtplan_cv_from from;
	char text[512], *json = NULL;

	(void)state;
	recs[0] = run_of(8, 1.0, 0.03, 100);
	recs[1] = run_of(64, 1.0, 0.03, 100);
	recs[2] = run_of(512, 1.0, 0.03, 100);
	learn_of(recs, 3, &cal);
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama3-8b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 16;
	assert_near(dtplan_request_step_cv(&r, &from), DTPLAN_STEP_CV_DEFAULT, 0.0);
	assert_int_equal(from, DTPLAN_CV_FROM_DEFAULT);
	r.calibration = &cal;
	assert_near(dtplan_request_step_cv(&r, &from), 0.03, 1e-9);
	assert_int_equal(from, DTPLAN_CV_FROM_RECORDS);

	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_OK);
	assert_near(p->best.step_cv, 0.03, 1e-9);
	assert_int_equal(p->best.step_cv_from, DTPLAN_CV_FROM_RECORDS);
	assert_int_equal(p->best.step_cv_runs, 3);
	dtplan_plan_spread_text(p, text, sizeof(text));
	assert_non_null(strstr(text, "varying 3.0% (sd; learned from 3 runs' step spread)"));
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	assert_non_null(strstr(json, "\"records\""));
	assert_int_equal(dtplan_plan_from_json(json, &b, &err), DTPLAN_OK);
	assert_int_equal(b->best.step_cv_from, DTPLAN_CV_FROM_RECORDS);
	assert_int_equal(b->best.step_cv_runs, 3);
	assert_near(b->best.step_cv, 0.03, 1e-12);
	free(json);
	dtplan_plan_destroy(b);
	dtplan_plan_destroy(p);

	/* the site's StepTimeCV=0.02 over the records' 3% */
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "StepTimeCV=0.02\n", "test", &err),
			 DTPLAN_OK);
	dtplan_request_apply_config(&r, &c);
	dtplan_config_fini(&c);
	assert_int_equal(dtplan_plan_create(&r, NULL, &p, &err), DTPLAN_OK);
	assert_near(p->best.step_cv, 0.02, 0.0);
	assert_int_equal(p->best.step_cv_from, DTPLAN_CV_FROM_SITE);
	assert_int_equal(p->best.step_cv_runs, 0);
	dtplan_plan_spread_text(p, text, sizeof(text));
	assert_non_null(strstr(text, "(sd; the site's StepTimeCV=)"));
	dtplan_plan_destroy(p);

	/* a site file without StepTimeCV= leaves the records' */
	dtplan_request_init(&r);
	assert_int_equal(dtplan_model_parse("llama3-8b", &r.model, NULL), DTPLAN_OK);
	r.gpus = 16;
	dtplan_config_init(&c);
	assert_int_equal(dtplan_config_parse_string(&c, "MtbfGpuHours=50000\n", "test", &err),
			 DTPLAN_OK);
	dtplan_request_apply_config(&r, &c);
	dtplan_config_fini(&c);
	r.calibration = &cal;
	assert_near(dtplan_request_step_cv(&r, &from), 0.03, 1e-9);
	assert_int_equal(from, DTPLAN_CV_FROM_RECORDS);
	dtplan_calibration_fini(&cal);
}

/* No site, no records: the default, named; a plan written before
 * step_cv_from reads back unknown and names no source. */
static void plan__default_cv__named_and_old_json_unknown(void **state)
{
	struct dtplan_plan *p = plan_of("llama3-8b", 16, DTPLAN_STEP_CV_UNSET), *b = NULL;
	struct dtplan_error err = {0};
	char text[512], *json = NULL;

	(void)state;
	assert_near(p->best.step_cv, DTPLAN_STEP_CV_DEFAULT, 0.0);
	assert_int_equal(p->best.step_cv_from, DTPLAN_CV_FROM_DEFAULT);
	dtplan_plan_spread_text(p, text, sizeof(text));
	assert_non_null(strstr(text, "varying 2.0% (sd; the default, Sinha et al. SC'22)"));
	p->best.step_cv_from = DTPLAN_CV_FROM_UNKNOWN;
	assert_int_equal(dtplan_plan_to_json(p, true, &json, NULL), DTPLAN_OK);
	assert_null(strstr(json, "step_cv_from"));
	assert_int_equal(dtplan_plan_from_json(json, &b, &err), DTPLAN_OK);
	assert_int_equal(b->best.step_cv_from, DTPLAN_CV_FROM_UNKNOWN);
	dtplan_plan_spread_text(b, text, sizeof(text));
	assert_non_null(strstr(text, "varying 2.0% (sd), waits "));
	assert_string_equal(dtplan_cv_from_name(DTPLAN_CV_FROM_RECORDS), "records");
	assert_false(dtplan_cv_from_parse("measured", NULL));
	free(json);
	dtplan_plan_destroy(p);
	dtplan_plan_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normal_quantile__table__within_1e_8),
		cmocka_unit_test(max_quantile_z__n_gpus__phi_to_the_n_is_q),
		cmocka_unit_test(plan__cv_3pct_64_gpus__p95_from_the_maximum),
		cmocka_unit_test(plan__one_gpu__median_unchanged),
		cmocka_unit_test(plan__json__p50_p95_read_back),
		cmocka_unit_test(learn_cv__3pct_at_five_sizes__learned_back),
		cmocka_unit_test(learn_cv__too_few_runs_or_steps__none),
		cmocka_unit_test(learn_cv__one_outlier_run__median_holds),
		cmocka_unit_test(plan__learned_cv__records_then_site_wins),
		cmocka_unit_test(plan__default_cv__named_and_old_json_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
