/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cli_util.c: the CLI's JSON numbers (cli/util.c): what a command's
 * --json writes for finite, whole, huge and non-finite values.
 */
#include "test_common.h"

#include "cli.h"

#include <float.h>
#include <unistd.h>

struct number_case {
	double v;
	const char *json; /* json_dumps() of cli_json_number(v) */
};

static void cli_json_number__each_value__writes_json(void **state)
{
	static const struct number_case cases[] = {
		{INFINITY, "null"},
		{-INFINITY, "null"},
		{NAN, "null"},
		{0.0, "0"},
		{33.0, "33"},
		{-8.0, "-8"},
		{38500000000.0, "38500000000"},
		/* the largest whole double below 1e17 is still an integer, 1e17 a real */
		{99999999999999984.0, "99999999999999984"},
		{1e17, "1e17"},
		{1.75e18, "1.75e18"},
		{0.1, "0.10000000000000001"},
		{2.5, "2.5"},
		{1e-300, "1e-300"},
		{DBL_MAX, "1.7976931348623157e308"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = cli_json_number(cases[i].v);
		char *text;

		assert_non_null(j);
		text = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
		assert_non_null(text);
		if (strcmp(text, cases[i].json) != 0)
			fail_msg("%.17g: got '%s', expected '%s'", cases[i].v, text, cases[i].json);
		free(text);
		json_decref(j);
	}
}

/* Runs cli_json_print(root) with stdout in a temporary file; returns what it wrote. */
static char *print_captured(json_t *root, int *rc)
{
	static char buf[256];
	FILE *tmp = tmpfile();
	int saved;
	size_t n;

	assert_non_null(tmp);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	*rc = cli_json_print("test", root);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

static void cli_json_print__infinite_field__null_and_newline(void **state)
{
	int rc = -1;
	const char *text;

	(void)state;
	text = print_captured(json_pack("{s:o, s:o, s:s}", "seconds", cli_json_number(INFINITY),
					"bytes", cli_json_number(14e9), "op", "allreduce"),
			      &rc);
	assert_int_equal(rc, CLI_EXIT_OK);
	assert_string_equal(text,
			    "{\"seconds\": null, \"bytes\": 14000000000, \"op\": \"allreduce\"}\n");
}

static void cli_json_print__null_root__fails(void **state)
{
	int rc = -1;

	(void)state;
	/* a failed json_pack(): a string that is not UTF-8 */
	assert_string_equal(print_captured(json_pack("{s:s}", "model", "\xff"), &rc), "");
	assert_int_equal(rc, CLI_EXIT_FAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli_json_number__each_value__writes_json),
		cmocka_unit_test(cli_json_print__infinite_field__null_and_newline),
		cmocka_unit_test(cli_json_print__null_root__fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
