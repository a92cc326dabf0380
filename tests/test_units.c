/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_units.c: parsing and formatting sizes, rates, times, counts, longs, bools.
 */
#include "test_common.h"

#include <limits.h>

#define SENTINEL -12345.0

struct double_case {
	const char *text;
	enum dtplan_err code;
	double value; /* expected on success */
};

typedef enum dtplan_err (*double_parser)(const char *, const char *, double *,
					 struct dtplan_error *);

static void run_double_cases(double_parser parse, const struct double_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = SENTINEL;
		struct dtplan_error err;
		enum dtplan_err rv;

		dtplan_error_clear(&err);
		rv = parse(cases[i].text, "--opt", &v, &err);
		if (rv != cases[i].code)
			fail_msg("'%s': got %d (%s), expected %d",
				 cases[i].text ? cases[i].text : "(null)", rv, err.text,
				 cases[i].code);
		if (rv == DTPLAN_OK) {
			assert_rel(v, cases[i].value, 1e-12);
			continue;
		}
		/* on error: *out untouched, message names the option and the text */
		assert_near(v, SENTINEL, 0.0);
		assert_int_equal(err.code, cases[i].code);
		assert_non_null(strstr(err.text, "--opt"));
		if (cases[i].text != NULL && cases[i].text[0] != '\0')
			assert_non_null(strstr(err.text, cases[i].text));
	}
}

static const struct double_case bytes_cases[] = {
	{"14GB", DTPLAN_OK, 14e9},
	{"33.6MB", DTPLAN_OK, 33.6e6},
	{"14e9", DTPLAN_OK, 14e9},
	{"1GiB", DTPLAN_OK, 1073741824.0},
	{"512KiB", DTPLAN_OK, 524288.0},
	{"7B", DTPLAN_OK, 7.0},
	{"1.5T", DTPLAN_OK, 1.5e12},
	{"2P", DTPLAN_OK, 2e15},
	{"3kB", DTPLAN_OK, 3000.0},
	{"1Ti", DTPLAN_OK, 1099511627776.0},
	{"100", DTPLAN_OK, 100.0},
	{".5GB", DTPLAN_OK, 0.5e9},
	{NULL, DTPLAN_ERR_INVAL, 0},
	{"", DTPLAN_ERR_INVAL, 0},
	{"GB", DTPLAN_ERR_PARSE, 0},
	{"14 GB", DTPLAN_ERR_PARSE, 0},
	{"14gb", DTPLAN_ERR_PARSE, 0},
	{"14GBx", DTPLAN_ERR_PARSE, 0},
	{" 14GB", DTPLAN_ERR_PARSE, 0},
	{"0x10GB", DTPLAN_ERR_PARSE, 0},
	{"inf", DTPLAN_ERR_PARSE, 0},
	{"nan", DTPLAN_ERR_PARSE, 0},
	{"-1GB", DTPLAN_ERR_RANGE, 0},
	{"0", DTPLAN_ERR_RANGE, 0},
	{"0GB", DTPLAN_ERR_RANGE, 0},
	{"1e999", DTPLAN_ERR_RANGE, 0},
	/* finite number, infinite after the unit */
	{"1e308P", DTPLAN_ERR_RANGE, 0},
};

static void parse_bytes__table__values_and_errors(void **state)
{
	(void)state;
	run_double_cases(dtplan_parse_bytes, bytes_cases,
			 sizeof(bytes_cases) / sizeof(bytes_cases[0]));
}

static const struct double_case rate_cases[] = {
	{"900GB/s", DTPLAN_OK, 900e9},
	/* 400 Gb/s = 400e9 / 8 = 50e9 bytes/s */
	{"400Gb/s", DTPLAN_OK, 50e9},
	{"100Gbps", DTPLAN_OK, 12.5e9},
	{"10Mb/s", DTPLAN_OK, 1.25e6},
	{"25GiB/s", DTPLAN_OK, 25.0 * 1073741824.0},
	{"1.8TB/s", DTPLAN_OK, 1.8e12},
	{"1e9", DTPLAN_OK, 1e9},
	{"", DTPLAN_ERR_INVAL, 0},
	{"900GB", DTPLAN_ERR_PARSE, 0},
	{"fast", DTPLAN_ERR_PARSE, 0},
	{"900 GB/s", DTPLAN_ERR_PARSE, 0},
	{"0GB/s", DTPLAN_ERR_RANGE, 0},
	{"-5GB/s", DTPLAN_ERR_RANGE, 0},
};

static void parse_rate__table__values_and_errors(void **state)
{
	(void)state;
	run_double_cases(dtplan_parse_rate, rate_cases, sizeof(rate_cases) / sizeof(rate_cases[0]));
}

static const struct double_case time_cases[] = {
	{"2us", DTPLAN_OK, 2e-6},     {"1.5ms", DTPLAN_OK, 1.5e-3},    {"1ns", DTPLAN_OK, 1e-9},
	{"60s", DTPLAN_OK, 60.0},     {"2sec", DTPLAN_OK, 2.0},        {"5min", DTPLAN_OK, 300.0},
	{"5m", DTPLAN_OK, 300.0},     {"3h", DTPLAN_OK, 10800.0},      {"2d", DTPLAN_OK, 172800.0},
	{"10", DTPLAN_OK, 10.0},      {"0", DTPLAN_OK, 0.0},           {"", DTPLAN_ERR_INVAL, 0},
	{"3 h", DTPLAN_ERR_PARSE, 0}, {"3hours", DTPLAN_ERR_PARSE, 0}, {"h", DTPLAN_ERR_PARSE, 0},
	{"-1s", DTPLAN_ERR_RANGE, 0},
};

static void parse_time__table__values_and_errors(void **state)
{
	(void)state;
	run_double_cases(dtplan_parse_time, time_cases, sizeof(time_cases) / sizeof(time_cases[0]));
}

/* Issue 13, finding 21: "--latency -0" was kept as -0 and printed "-0.0 us". */
static void parse_time__minus_zero__plain_zero(void **state)
{
	static const char *const zeros[] = {"-0", "-0us", "-0.0e5s", "+0"};

	(void)state;
	for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
		double v = SENTINEL;

		assert_int_equal(dtplan_parse_time(zeros[i], "--latency", &v, NULL), DTPLAN_OK);
		assert_true(v == 0.0);
		if (signbit(v))
			fail_msg("'%s' parsed as -0", zeros[i]);
	}
}

static const struct double_case count_cases[] = {
	{"7B", DTPLAN_OK, 7e9},         {"70b", DTPLAN_OK, 70e9},     {"1.5T", DTPLAN_OK, 1.5e12},
	{"350M", DTPLAN_OK, 350e6},     {"125k", DTPLAN_OK, 125e3},   {"7e9", DTPLAN_OK, 7e9},
	{"", DTPLAN_ERR_INVAL, 0},      {"7GB", DTPLAN_ERR_PARSE, 0}, {"B", DTPLAN_ERR_PARSE, 0},
	{"seven", DTPLAN_ERR_PARSE, 0}, {"0", DTPLAN_ERR_RANGE, 0},   {"-7B", DTPLAN_ERR_RANGE, 0},
};

static void parse_count__table__values_and_errors(void **state)
{
	(void)state;
	run_double_cases(dtplan_parse_count, count_cases,
			 sizeof(count_cases) / sizeof(count_cases[0]));
}

static const struct {
	const char *text;
	long min, max;
	enum dtplan_err code;
	long value;
} long_cases[] = {
	{"8", 1, 1024, DTPLAN_OK, 8},
	{"1024", 1, 1024, DTPLAN_OK, 1024},
	{"1", 1, 1024, DTPLAN_OK, 1},
	{"-3", -5, 5, DTPLAN_OK, -3},
	{"+5", -10, 10, DTPLAN_OK, 5},
	{"0", 0, 3, DTPLAN_OK, 0},
	{"9223372036854775807", 0, LONG_MAX, DTPLAN_OK, LONG_MAX},
	{"1025", 1, 1024, DTPLAN_ERR_RANGE, 0},
	{"0", 1, 1024, DTPLAN_ERR_RANGE, 0},
	{"-1", 1, 1024, DTPLAN_ERR_RANGE, 0},
	{"99999999999999999999", 0, LONG_MAX, DTPLAN_ERR_RANGE, 0},
	{"-99999999999999999999", LONG_MIN, 0, DTPLAN_ERR_RANGE, 0},
	{"+5", 1, 10, DTPLAN_ERR_PARSE, 0},
	{" 8", 1, 10, DTPLAN_ERR_PARSE, 0},
	{"8 ", 1, 10, DTPLAN_ERR_PARSE, 0},
	{"8x", 1, 10, DTPLAN_ERR_PARSE, 0},
	{"3.0", 1, 10, DTPLAN_ERR_PARSE, 0},
	{"0x10", 1, 100, DTPLAN_ERR_PARSE, 0},
	{"eight", 1, 10, DTPLAN_ERR_PARSE, 0},
	{"", 1, 10, DTPLAN_ERR_INVAL, 0},
	{NULL, 1, 10, DTPLAN_ERR_INVAL, 0},
};

static void parse_long__table__values_and_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(long_cases) / sizeof(long_cases[0]); i++) {
		long v = -777;
		struct dtplan_error err;
		enum dtplan_err rv;

		dtplan_error_clear(&err);
		rv = dtplan_parse_long(long_cases[i].text, "--gpus", long_cases[i].min,
				       long_cases[i].max, &v, &err);
		if (rv != long_cases[i].code)
			fail_msg("'%s' in [%ld, %ld]: got %d (%s), expected %d",
				 long_cases[i].text ? long_cases[i].text : "(null)",
				 long_cases[i].min, long_cases[i].max, rv, err.text,
				 long_cases[i].code);
		if (rv == DTPLAN_OK) {
			assert_true(v == long_cases[i].value);
		} else {
			assert_true(v == -777);
			assert_non_null(strstr(err.text, "--gpus"));
		}
	}
	/* NULL `what` still gives a message */
	{
		long v;
		struct dtplan_error err;

		assert_int_equal(dtplan_parse_long("x", NULL, 0, 1, &v, &err), DTPLAN_ERR_PARSE);
		assert_non_null(strstr(err.text, "value"));
	}
}

static const struct {
	const char *text;
	enum dtplan_err code;
	bool value;
} bool_cases[] = {
	{"yes", DTPLAN_OK, true},    {"no", DTPLAN_OK, false},      {"TRUE", DTPLAN_OK, true},
	{"False", DTPLAN_OK, false}, {"on", DTPLAN_OK, true},       {"OFF", DTPLAN_OK, false},
	{"1", DTPLAN_OK, true},      {"0", DTPLAN_OK, false},       {"2", DTPLAN_ERR_PARSE, 0},
	{"y", DTPLAN_ERR_PARSE, 0},  {"yess", DTPLAN_ERR_PARSE, 0}, {"", DTPLAN_ERR_PARSE, 0},
	{NULL, DTPLAN_ERR_PARSE, 0},
};

static void parse_bool__table__spellings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bool_cases) / sizeof(bool_cases[0]); i++) {
		bool v = !bool_cases[i].value;
		bool before = v;
		struct dtplan_error err;

		dtplan_error_clear(&err);
		assert_int_equal(dtplan_parse_bool(bool_cases[i].text, "--dt-probe", &v, &err),
				 bool_cases[i].code);
		if (bool_cases[i].code == DTPLAN_OK) {
			assert_int_equal(v, bool_cases[i].value);
		} else {
			assert_int_equal(v, before);
			assert_non_null(strstr(err.text, "--dt-probe"));
			assert_non_null(strstr(err.text, "yes/no"));
		}
	}
}

typedef const char *(*formatter)(double, char *, size_t);

static const struct {
	formatter fmt;
	double value;
	const char *text;
} format_cases[] = {
	{dtplan_format_bytes, 38.5e9, "38.50 GB"},
	{dtplan_format_bytes, 112e9, "112 GB"},
	{dtplan_format_bytes, 14e9, "14.00 GB"},
	{dtplan_format_bytes, 33.6e6, "33.60 MB"},
	{dtplan_format_bytes, 1e3, "1.00 KB"},
	{dtplan_format_bytes, 512.0, "512 B"},
	{dtplan_format_bytes, 0.0, "0.00 B"},
	{dtplan_format_bytes, 1.5e15, "1.50 PB"},
	/* rounding up across a unit: 999.9996 GB is 1.00 TB, not "1000 GB" */
	{dtplan_format_bytes, 999.9996e9, "1.00 TB"},
	{dtplan_format_bytes, 999.9996, "1.00 KB"},
	/* 99.999 rounds to 100.00: printed without decimals like every value >= 100 */
	{dtplan_format_bytes, 99.999e9, "100 GB"},
	{dtplan_format_bytes, 999.4e9, "999 GB"},
	{dtplan_format_rate, 900e9, "900 GB/s"},
	{dtplan_format_rate, 50e9, "50.00 GB/s"},
	{dtplan_format_rate, 1.8e12, "1.80 TB/s"},
	{dtplan_format_count, 70553706496.0, "70.55B"},
	{dtplan_format_count, 6738415616.0, "6.74B"},
	{dtplan_format_count, 7e9, "7.00B"},
	{dtplan_format_count, 405853388800.0, "406B"},
	{dtplan_format_count, 1.5e12, "1.50T"},
	{dtplan_format_count, 125e3, "125K"},
	{dtplan_format_count, 500.0, "500"},
	{dtplan_format_time, 12e-6, "12.0 us"},
	{dtplan_format_time, 0.0, "0.0 us"},
	{dtplan_format_time, 1.53e-3, "1.53 ms"},
	{dtplan_format_time, 0.0311, "31.10 ms"},
	{dtplan_format_time, 59.5, "59.50 s"},
	{dtplan_format_time, 125.0, "2m 05s"},
	/* 179.6 s rounds to 3m 00s, not 2m 60s or 2m 59s */
	{dtplan_format_time, 179.6, "3m 00s"},
	/* Daly's interval 7001.39 s = 116.69 min -> 1h 57m */
	{dtplan_format_time, 7001.39, "1h 57m"},
	{dtplan_format_time, 3599.6, "1h 00m"},
	/* Llama 3 job MTBF 11135.08 s = 185.58 min -> 3h 06m */
	{dtplan_format_time, 11135.08, "3h 06m"},
	{dtplan_format_time, 172800.0, "2.0 days"},
	{dtplan_format_time, 3.5 * 86400.0, "3.5 days"},
	{dtplan_format_time, -1.0, "-"},
	{dtplan_format_time, NAN, "-"},
	/* issue 13, finding 21: -0 printed as "-0.0 us" */
	{dtplan_format_time, -0.0, "0.0 us"},
	{dtplan_format_bytes, -0.0, "0.00 B"},
	{dtplan_format_rate, -0.0, "0.00 B/s"},
	{dtplan_format_count, -0.0, "0.00"},
};

static void format__table__readable_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(format_cases) / sizeof(format_cases[0]); i++) {
		char buf[64];
		const char *got = format_cases[i].fmt(format_cases[i].value, buf, sizeof(buf));

		assert_ptr_equal(got, buf);
		if (strcmp(got, format_cases[i].text) != 0)
			fail_msg("case %zu (%.9g): '%s', expected '%s'", i, format_cases[i].value,
				 got, format_cases[i].text);
	}
}

static void format__small_buffer__truncated_and_terminated(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	dtplan_format_bytes(38.5e9, buf, 5);
	assert_string_equal(buf, "38.5");
	assert_int_equal(buf[5], 'x');
	dtplan_format_time(7001.39, buf, 4);
	assert_string_equal(buf, "1h ");
	dtplan_format_count(70553706496.0, buf, sizeof(buf));
	assert_string_equal(buf, "70.55B");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_bytes__table__values_and_errors),
		cmocka_unit_test(parse_rate__table__values_and_errors),
		cmocka_unit_test(parse_time__table__values_and_errors),
		cmocka_unit_test(parse_time__minus_zero__plain_zero),
		cmocka_unit_test(parse_count__table__values_and_errors),
		cmocka_unit_test(parse_long__table__values_and_errors),
		cmocka_unit_test(parse_bool__table__spellings),
		cmocka_unit_test(format__table__readable_text),
		cmocka_unit_test(format__small_buffer__truncated_and_terminated),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
