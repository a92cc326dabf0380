/*
 * test_error.c: error codes and struct dtplan_error helpers.
 */
#include "test_common.h"

static void strerror__every_code__has_distinct_text(void **state)
{
	(void)state;
	for (int i = 0; i < DTPLAN_ERR__LAST; i++) {
		const char *s = dtplan_strerror((enum dtplan_err)i);

		assert_non_null(s);
		assert_string_not_equal(s, "unknown error");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(s, dtplan_strerror((enum dtplan_err)j));
	}
	assert_string_equal(dtplan_strerror(DTPLAN_ERR__LAST), "unknown error");
	assert_string_equal(dtplan_strerror((enum dtplan_err) - 1), "unknown error");
}

static void error_format__source_and_line__prefixes_them(void **state)
{
	struct dtplan_error err = {.code = DTPLAN_ERR_PARSE, .line = 7};
	char buf[256];

	(void)state;
	snprintf(err.source, sizeof(err.source), "%s", "dtplan.conf");
	snprintf(err.text, sizeof(err.text), "%s", "unknown key 'Foo'");
	assert_string_equal(dtplan_error_format(&err, buf, sizeof(buf)),
			    "dtplan.conf:7: unknown key 'Foo'");
	err.line = 0;
	assert_string_equal(dtplan_error_format(&err, buf, sizeof(buf)),
			    "dtplan.conf: unknown key 'Foo'");
	err.source[0] = '\0';
	assert_string_equal(dtplan_error_format(&err, buf, sizeof(buf)), "unknown key 'Foo'");
	err.text[0] = '\0';
	assert_string_equal(dtplan_error_format(&err, buf, sizeof(buf)), "parse error");
	assert_string_equal(dtplan_error_format(NULL, buf, sizeof(buf)), "");
}

static void error_clear__null__is_harmless(void **state)
{
	struct dtplan_error err = {.code = DTPLAN_ERR_IO, .line = 3};

	(void)state;
	dtplan_error_clear(NULL);
	dtplan_error_clear(&err);
	assert_int_equal(err.code, DTPLAN_OK);
	assert_int_equal(err.line, 0);
}

static void version__matches_package(void **state)
{
	(void)state;
	assert_string_equal(dtplan_version(), PACKAGE_VERSION);
}

static void version__macros__equal_library_and_configure(void **state)
{
	char v[32];

	(void)state;
	snprintf(v, sizeof(v), "%d.%d.%d", DTPLAN_VERSION_MAJOR, DTPLAN_VERSION_MINOR,
		 DTPLAN_VERSION_PATCH);
	assert_string_equal(v, dtplan_version());
	assert_string_equal(v, PACKAGE_VERSION);
	assert_int_equal(DTPLAN_VERSION_NUMBER, (DTPLAN_VERSION_MAJOR << 16) |
							(DTPLAN_VERSION_MINOR << 8) |
							DTPLAN_VERSION_PATCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version__macros__equal_library_and_configure),
		cmocka_unit_test(strerror__every_code__has_distinct_text),
		cmocka_unit_test(error_format__source_and_line__prefixes_them),
		cmocka_unit_test(error_clear__null__is_harmless),
		cmocka_unit_test(version__matches_package),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
