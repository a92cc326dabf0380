/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_gpu.c: the GPU catalog.
 */
#include "test_common.h"

/* Datasheet numbers and measurements (see lib/model/gpu.c for the source of
 * each); memory as nvidia-smi reports it: MiB x 1048576. */
static const struct {
	const char *name;
	const char *vendor;
	double memory, bf16, link;
	int domain;
	double hbm, matmul, fp8, fp8_eff;
	int sms;
	double fp4; /* dense FP4: Blackwell's block-scaled tensor cores */
	int nvls;   /* NVLink SHARP: third-generation NVSwitch and later */
} gpu_cases[] = {
	{"a100-40gb", "nvidia", 42949672960.0, 312e12, 600e9, 8, 1555e9, 0.859, 0, 0, 108, 0,
	 DTPLAN_NVLS_NONE},
	{"a100-80gb", "nvidia", 85899345920.0, 312e12, 600e9, 8, 2039e9, 0.859, 0, 0, 108, 0,
	 DTPLAN_NVLS_NONE},
	{"h100-sxm", "nvidia", 85520809984.0, 989e12, 900e9, 8, 3350e9, 0.801, 1979e12, 0.698, 132,
	 0, DTPLAN_NVLS_HOPPER},
	{"h100-96gb", "nvidia", 96e9, 989e12, 900e9, 8, 2400e9, 0.801, 1979e12, 0.698, 132, 0,
	 DTPLAN_NVLS_HOPPER},
	{"h800", "nvidia", 85520809984.0, 989e12, 400e9, 8, 3350e9, 0.801, 1979e12, 0.698, 132, 0,
	 DTPLAN_NVLS_HOPPER},
	{"h200", "nvidia", 150754820096.0, 989e12, 900e9, 8, 4800e9, 0.830, 1979e12, 0.698, 132, 0,
	 DTPLAN_NVLS_HOPPER},
	{"b200", "nvidia", 180e9, 2.25e15, 1.8e12, 8, 8000e9, 0.801, 4.5e15, 1.0, 148, 9e15,
	 DTPLAN_NVLS_BLACKWELL},
	{"gb200", "nvidia", 186e9, 2.45e15, 1.8e12, 72, 8000e9, 0.801, 4.9e15, 1.0, 148, 10e15,
	 DTPLAN_NVLS_BLACKWELL},
	{"gb300", "nvidia", 288e9, 2.5e15, 1.8e12, 72, 8000e9, 0.801, 5e15, 1.0, 160, 15e15,
	 DTPLAN_NVLS_BLACKWELL},
	{"b300", "nvidia", 288e9, 2.25e15, 1.8e12, 8, 8000e9, 0.801, 4.5e15, 1.0, 160, 13.125e15,
	 DTPLAN_NVLS_BLACKWELL},
	{"mi250x", "amd", 128e9, 383e12, 800e9, 8, 3276.8e9, 0.767, 0, 0, 220, 0, DTPLAN_NVLS_NONE},
	{"mi300x", "amd", 192e9, 1307e12, 896e9, 8, 5300e9, 0.601, 2615e12, 0.601, 304, 0,
	 DTPLAN_NVLS_NONE},
};

static void gpu_find__catalog_names__datasheet_numbers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gpu_cases) / sizeof(gpu_cases[0]); i++) {
		const struct dtplan_gpu *g = dtplan_gpu_find(gpu_cases[i].name, NULL);

		assert_non_null(g);
		assert_string_equal(g->name, gpu_cases[i].name);
		assert_string_equal(g->vendor, gpu_cases[i].vendor);
		assert_near(g->memory_bytes, gpu_cases[i].memory, 0.0);
		assert_near(g->peak_bf16_flops, gpu_cases[i].bf16, 0.0);
		assert_near(g->nvlink_bytes_per_s, gpu_cases[i].link, 0.0);
		assert_int_equal(g->domain_size, gpu_cases[i].domain);
		assert_near(g->hbm_bytes_per_s, gpu_cases[i].hbm, 0.0);
		assert_near(g->matmul_efficiency, gpu_cases[i].matmul, 0.0);
		assert_near(g->peak_fp8_flops, gpu_cases[i].fp8, 0.0);
		assert_near(g->fp8_efficiency, gpu_cases[i].fp8_eff, 0.0);
		assert_int_equal(g->sms, gpu_cases[i].sms);
		assert_near(g->peak_fp4_flops, gpu_cases[i].fp4, 0.0);
		assert_int_equal(g->nvls, gpu_cases[i].nvls);
		assert_true(g->host_bytes_per_s > 0);
	}
}

static void gpu_catalog__every_entry__findable_and_sane(void **state)
{
	size_t n = 0;
	const struct dtplan_gpu *c = dtplan_gpu_catalog(&n);

	(void)state;
	assert_int_equal(n, sizeof(gpu_cases) / sizeof(gpu_cases[0]));
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(dtplan_gpu_find(c[i].name, NULL), &c[i]);
		assert_true(c[i].memory_bytes > 0 && c[i].peak_bf16_flops > 0);
		assert_true(c[i].nvlink_bytes_per_s > 0 && c[i].domain_size >= 1);
	}
	assert_non_null(dtplan_gpu_catalog(NULL));
}

static const struct {
	const char *alias;
	const char *name;
} alias_cases[] = {
	{"h100", "h100-sxm"},     {"H100", "h100-sxm"},     {"h100-sxm5", "h100-sxm"},
	{"H100-SXM", "h100-sxm"}, {"gb200-nvl72", "gb200"}, {"MI300X", "mi300x"},
	{"GB300-NVL72", "gb300"}, {"B300", "b300"},
};

static void gpu_find__aliases_and_case__resolve(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(alias_cases) / sizeof(alias_cases[0]); i++) {
		const struct dtplan_gpu *g = dtplan_gpu_find(alias_cases[i].alias, NULL);

		assert_non_null(g);
		assert_string_equal(g->name, alias_cases[i].name);
	}
}

static void gpu_find__unknown__lists_known(void **state)
{
	struct dtplan_error err;

	(void)state;
	assert_null(dtplan_gpu_find("v100", &err));
	assert_int_equal(err.code, DTPLAN_ERR_NOT_FOUND);
	assert_non_null(strstr(err.text, "'v100'"));
	assert_non_null(strstr(err.text, "h100-sxm"));
	assert_non_null(strstr(err.text, "mi300x"));
	assert_null(dtplan_gpu_find(NULL, &err));
	assert_int_equal(err.code, DTPLAN_ERR_INVAL);
	assert_null(dtplan_gpu_find("", &err));
	assert_int_equal(err.code, DTPLAN_ERR_INVAL);
	assert_null(dtplan_gpu_find("h100-sxm-and-then-some-garbage-that-is-long", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu_find__catalog_names__datasheet_numbers),
		cmocka_unit_test(gpu_catalog__every_entry__findable_and_sane),
		cmocka_unit_test(gpu_find__aliases_and_case__resolve),
		cmocka_unit_test(gpu_find__unknown__lists_known),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
