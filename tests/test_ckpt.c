/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ckpt.c: Young/Daly checkpoint interval, waste, steps.
 */
#include "test_common.h"

/*
 * Daly's example: M = 24 h = 86400 s, delta = 5 min = 300 s.
 * Young: sqrt(2 * 300 * 86400) = sqrt(51,840,000) = 7200 s.
 * delta/(2M) = 300/172800 = 1/576; sqrt(1/576) = 1/24.
 * Daly: 7200 (1 + 1/72 + 1/5184) - 300 = 7200 + 100 + 1.388889 - 300 = 7001.388889 s (116.7 min).
 */
static void ckpt__daly_example__117_minutes(void **state)
{
	struct dtplan_ckpt_in in = {.gpus = 1,
				    .mtbf_gpu_hours = 24.0,
				    .write_seconds = 300.0,
				    .restart_seconds = 600.0,
				    .step_seconds = 10.0};
	struct dtplan_ckpt c;

	(void)state;
	assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
	assert_near(c.job_mtbf_seconds, 86400.0, 1e-9);
	assert_near(c.young_seconds, 7200.0, 1e-6);
	assert_near(c.daly_seconds, 7001.388889, 1e-5);
	assert_near(c.interval_seconds / 60.0, 117.0, 0.5);
	assert_near(c.interval_seconds, c.daly_seconds, 0.0);
	/* availability-optimal (arXiv 2410.18124): Ts + sqrt(2 (Tf + Tr) Ts + Ts^2)
	 * = 300 + sqrt(2 (86400 + 600) 300 + 90000) = 300 + sqrt(52,290,000)
	 * = 300 + 7231.1825 = 7531.1825 s */
	assert_near(c.availability_seconds, 7531.1825, 1e-3);
	/* waste: 300/7001.389 + (3500.694 + 600)/86400 = 0.0428486 + 0.0474617 = 0.0903104 */
	assert_near(c.waste_fraction, 0.0903104, 1e-6);
	/* floor(7001.39 / 10) = 700 */
	assert_near(c.interval_steps, 700.0, 0.0);
}

static void ckpt__delta_at_least_2m__interval_is_m(void **state)
{
	/* M = (100/3600 h * 3600) / 1 = 100 s */
	struct dtplan_ckpt_in in = {.gpus = 1,
				    .mtbf_gpu_hours = 100.0 / 3600.0,
				    .write_seconds = 200.0};
	struct dtplan_ckpt c;

	(void)state;
	assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
	assert_near(c.job_mtbf_seconds, 100.0, 1e-9);
	/* sqrt(2 * 200 * 100) = 200 */
	assert_near(c.young_seconds, 200.0, 1e-9);
	assert_near(c.daly_seconds, 100.0, 1e-9);
	/* 200/100 + (50 + 0)/100 = 2.5, capped at 1 */
	assert_near(c.waste_fraction, 1.0, 0.0);
	/* no step time: no steps */
	assert_near(c.interval_steps, 0.0, 0.0);
	in.write_seconds = 500.0;
	assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
	assert_near(c.daly_seconds, 100.0, 1e-9);
}

/*
 * Llama 3: 419 interruptions in 54 days on 16,384 GPUs.
 * Per GPU: 16384 * 54 * 24 / 419 = 50,677 GPU-hours = 5.78 years (8766 h a year).
 * Job: 54 * 24 / 419 = 3.0931 h = 11135.08 s.
 */
static void ckpt__llama3_default_mtbf__3_09_hours(void **state)
{
	struct dtplan_ckpt_in in = {.gpus = 16384,
				    .mtbf_gpu_hours = DTPLAN_DEFAULT_MTBF_GPU_HOURS,
				    .write_seconds = 60.0,
				    .step_seconds = 7.5};
	struct dtplan_ckpt c;

	(void)state;
	assert_near(DTPLAN_DEFAULT_MTBF_GPU_HOURS, 50677.0, 1.0);
	assert_near(DTPLAN_DEFAULT_MTBF_GPU_HOURS / 8766.0, 6.0, 0.25);
	assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
	assert_near(c.job_mtbf_seconds / 3600.0, 3.09, 0.005);
	/* Young sqrt(2 * 60 * 11135.08) = 1155.95; x = 60/22270.17 = 0.0026942,
	 * Daly 1155.95 (1 + 0.017302 + 0.000299) - 60 = 1116.29 s */
	assert_near(c.young_seconds, 1155.95, 0.01);
	assert_near(c.daly_seconds, 1116.29, 0.01);
	/* floor(1116.29 / 7.5) = 148 */
	assert_near(c.interval_steps, 148.0, 0.0);
}

static const struct {
	double step;
	double steps;
} steps_cases[] = {
	/* Daly example interval 7001.39 s */
	{1.0, 7001.0}, {7001.0, 1.0},
	{7002.0, 1.0},             /* a step longer than the interval: still every step */
	{1e9, 1.0},    {0.0, 0.0}, /* unknown step time */
};

static void ckpt__interval_steps__floor_at_least_one(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(steps_cases) / sizeof(steps_cases[0]); i++) {
		struct dtplan_ckpt_in in = {.gpus = 1,
					    .mtbf_gpu_hours = 24.0,
					    .write_seconds = 300.0,
					    .step_seconds = steps_cases[i].step};
		struct dtplan_ckpt c;

		assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
		assert_near(c.interval_steps, steps_cases[i].steps, 0.0);
	}
}

static void ckpt__free_checkpoint__waste_is_restart_share(void **state)
{
	/* delta = 0: interval 0, waste R/M = 360/3600 = 0.1 (M = 1 h on 1 GPU) */
	struct dtplan_ckpt_in in = {.gpus = 1,
				    .mtbf_gpu_hours = 1.0,
				    .restart_seconds = 360.0,
				    .step_seconds = 5.0};
	struct dtplan_ckpt c;

	(void)state;
	assert_int_equal(dtplan_ckpt_compute(&in, &c, NULL), DTPLAN_OK);
	assert_near(c.interval_seconds, 0.0, 0.0);
	assert_near(c.waste_fraction, 0.1, 1e-12);
	assert_near(c.interval_steps, 1.0, 0.0);
}

static void ckpt__more_gpus__shorter_interval(void **state)
{
	struct dtplan_ckpt_in in = {.gpus = 1024, .mtbf_gpu_hours = 50000.0, .write_seconds = 30.0};
	struct dtplan_ckpt a, b;

	(void)state;
	assert_int_equal(dtplan_ckpt_compute(&in, &a, NULL), DTPLAN_OK);
	in.gpus = 4096;
	assert_int_equal(dtplan_ckpt_compute(&in, &b, NULL), DTPLAN_OK);
	/* M / 4, Young sqrt(M) / 2 */
	assert_near(b.job_mtbf_seconds, a.job_mtbf_seconds / 4.0, 1e-6);
	assert_near(b.young_seconds, a.young_seconds / 2.0, 1e-6);
	assert_true(b.daly_seconds < a.daly_seconds);
	assert_true(b.waste_fraction > a.waste_fraction);
}

static void ckpt__bad_input__inval(void **state)
{
	const struct dtplan_ckpt_in good = {.gpus = 8,
					    .mtbf_gpu_hours = 1000.0,
					    .write_seconds = 10.0,
					    .restart_seconds = 60.0,
					    .step_seconds = 1.0};
	struct dtplan_ckpt_in cases[9];
	struct dtplan_ckpt c = {.interval_seconds = 42.0};
	struct dtplan_error err;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cases[i] = good;
	cases[n++].gpus = 0;
	cases[n++].gpus = -3;
	cases[n++].mtbf_gpu_hours = 0.0;
	cases[n++].mtbf_gpu_hours = -1.0;
	cases[n++].mtbf_gpu_hours = INFINITY;
	cases[n++].write_seconds = -1.0;
	cases[n++].write_seconds = NAN;
	cases[n++].restart_seconds = -0.5;
	cases[n++].step_seconds = -2.0;
	for (size_t i = 0; i < n; i++) {
		dtplan_error_clear(&err);
		assert_int_equal(dtplan_ckpt_compute(&cases[i], &c, &err), DTPLAN_ERR_INVAL);
		assert_int_equal(err.code, DTPLAN_ERR_INVAL);
		assert_non_null(strstr(err.text, "checkpoint"));
		assert_near(c.interval_seconds, 42.0, 0.0);
	}
	assert_int_equal(dtplan_ckpt_compute(NULL, &c, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_ckpt_compute(&good, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_ckpt_compute(&good, &c, NULL), DTPLAN_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ckpt__daly_example__117_minutes),
		cmocka_unit_test(ckpt__delta_at_least_2m__interval_is_m),
		cmocka_unit_test(ckpt__llama3_default_mtbf__3_09_hours),
		cmocka_unit_test(ckpt__interval_steps__floor_at_least_one),
		cmocka_unit_test(ckpt__free_checkpoint__waste_is_restart_share),
		cmocka_unit_test(ckpt__more_gpus__shorter_interval),
		cmocka_unit_test(ckpt__bad_input__inval),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
