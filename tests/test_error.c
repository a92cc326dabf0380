/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_error.c: error codes, struct dtplan_error helpers and the JSON
 * member getters' one convention.
 */
#include "test_common.h"

#include "base/base.h"

#include <jansson.h>

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

/* Every getter, every failure kind: DTPLAN_ERR_PARSE, the source, PATH.KEY. */
static void jget__table__one_code_and_message_per_failure(void **state)
{
	static const char doc[] = "{\"i\": 7, \"big\": 70, \"f\": 1.5, \"s\": \"abc\", "
				  "\"nul\": \"a\\u0000b\", \"b\": true, \"z\": null, "
				  "\"obj\": {}, \"arr\": []}";
	static const struct {
		char kind; /* l(ong), i(nt), n(um), s(tr), b(ool), o(bject), a(rray) */
		const char *path, *key;
		unsigned flags;
		enum dtplan_err code;
		const char *text;
	} cases[] = {
		{'i', "", "i", DTPLAN_JGET_REQUIRED, DTPLAN_OK, ""},
		{'i', "", "gone", 0, DTPLAN_OK, ""},
		{'i', "", "z", DTPLAN_JGET_NULLABLE | DTPLAN_JGET_REQUIRED, DTPLAN_OK, ""},
		{'i', "", "gone", DTPLAN_JGET_REQUIRED, DTPLAN_ERR_PARSE, "gone: missing"},
		{'i', "a[1]", "gone", DTPLAN_JGET_REQUIRED, DTPLAN_ERR_PARSE, "a[1].gone: missing"},
		{'i', "a[1].", "gone", DTPLAN_JGET_REQUIRED, DTPLAN_ERR_PARSE,
		 "a[1].gone: missing"},
		{'i', "o", "z", 0, DTPLAN_ERR_PARSE, "o.z: expected a whole number"},
		{'i', "o", "f", 0, DTPLAN_ERR_PARSE, "o.f: expected a whole number"},
		{'i', "o", "big", 0, DTPLAN_ERR_PARSE, "o.big: 70 is out of range (0 to 10)"},
		{'l', "o", "big", 0, DTPLAN_ERR_PARSE, "o.big: 70 is out of range (0 to 10)"},
		{'n', "o", "i", 0, DTPLAN_OK, ""},
		{'n', "o", "s", 0, DTPLAN_ERR_PARSE, "o.s: expected a number"},
		{'n', "o", "big", 0, DTPLAN_ERR_PARSE, "o.big: 70 is out of range (0 to 10)"},
		{'s', "o", "s", 0, DTPLAN_OK, ""},
		{'s', "o", "i", 0, DTPLAN_ERR_PARSE, "o.i: expected a string"},
		{'s', "o", "nul", 0, DTPLAN_ERR_PARSE,
		 "o.nul: longer than 3 characters or holds a NUL"},
		{'b', "o", "b", 0, DTPLAN_OK, ""},
		{'b', "o", "s", 0, DTPLAN_ERR_PARSE, "o.s: expected true or false"},
		{'o', "o", "obj", 0, DTPLAN_OK, ""},
		{'o', "o", "arr", 0, DTPLAN_ERR_PARSE, "o.arr: expected an object"},
		{'o', "o", "gone", DTPLAN_JGET_REQUIRED, DTPLAN_ERR_PARSE, "o.gone: missing"},
		{'a', "o", "arr", 0, DTPLAN_OK, ""},
		{'a', "o", "obj", 0, DTPLAN_ERR_PARSE, "o.obj: expected an array"},
		{'a', "o", "z", DTPLAN_JGET_NULLABLE, DTPLAN_OK, ""},
	};
	json_t *root = json_loads(doc, JSON_ALLOW_NUL, NULL);

	(void)state;
	assert_non_null(root);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(cases); i++) {
		struct dtplan_error err = {0};
		enum dtplan_err rc = DTPLAN_ERR__LAST;
		long l = -5;
		int n = -5;
		double d = -5;
		char s[4] = "";
		bool b = false;
		json_t *j = NULL;

		switch (cases[i].kind) {
		case 'l':
			rc = dtplan__jget_long(root, "src", cases[i].path, cases[i].key,
					       cases[i].flags, 0, 10, &l, &err);
			break;
		case 'i':
			rc = dtplan__jget_int(root, "src", cases[i].path, cases[i].key,
					      cases[i].flags, 0, 10, &n, &err);
			break;
		case 'n':
			rc = dtplan__jget_num(root, "src", cases[i].path, cases[i].key,
					      cases[i].flags, 0, 10, &d, &err);
			break;
		case 's':
			rc = dtplan__jget_str(root, "src", cases[i].path, cases[i].key,
					      cases[i].flags, s, sizeof(s), &err);
			break;
		case 'b':
			rc = dtplan__jget_bool(root, "src", cases[i].path, cases[i].key,
					       cases[i].flags, &b, &err);
			break;
		case 'o':
			rc = dtplan__jget_obj(root, "src", cases[i].path, cases[i].key,
					      cases[i].flags, &j, &err);
			break;
		case 'a':
			rc = dtplan__jget_array(root, "src", cases[i].path, cases[i].key,
						cases[i].flags, &j, &err);
			break;
		}
		/* a container is borrowed from root, and only when it is one */
		if (j != NULL)
			assert_ptr_equal(j, json_object_get(root, cases[i].key));
		if (rc != cases[i].code || strcmp(err.text, cases[i].text) != 0)
			fail_msg("case %zu: got %s '%s', expected %s '%s'", i, dtplan_strerror(rc),
				 err.text, dtplan_strerror(cases[i].code), cases[i].text);
		if (rc != DTPLAN_OK) {
			assert_string_equal(err.source, "src");
			assert_true(l == -5 && n == -5 && d == -5 && s[0] == '\0' && !b &&
				    j == NULL);
		}
	}
	/* what was read, and what was left as it was */
	{
		int n = -5;
		double d = 0;
		char s[4];
		bool b = false;

		assert_int_equal(dtplan__jget_int(root, "src", "", "i", 0, 0, 10, &n, NULL),
				 DTPLAN_OK);
		assert_int_equal(n, 7);
		assert_int_equal(dtplan__jget_int(root, "src", "", "z", DTPLAN_JGET_NULLABLE, 0, 10,
						  &n, NULL),
				 DTPLAN_OK);
		assert_int_equal(n, 7);
		assert_int_equal(dtplan__jget_int(root, "src", "", "i", 0, 8, 10, &n, NULL),
				 DTPLAN_ERR_PARSE);
		assert_int_equal(n, 7);
		assert_int_equal(dtplan__jget_num(root, "src", "", "f", 0, 0, 10, &d, NULL),
				 DTPLAN_OK);
		assert_true(d == 1.5);
		assert_int_equal(dtplan__jget_str(root, "src", "", "s", 0, s, sizeof(s), NULL),
				 DTPLAN_OK);
		assert_string_equal(s, "abc");
		assert_int_equal(dtplan__jget_bool(root, "src", "", "b", 0, &b, NULL), DTPLAN_OK);
		assert_true(b);
	}
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(version__macros__equal_library_and_configure),
		cmocka_unit_test(strerror__every_code__has_distinct_text),
		cmocka_unit_test(error_format__source_and_line__prefixes_them),
		cmocka_unit_test(error_clear__null__is_harmless),
		cmocka_unit_test(version__matches_package),
		cmocka_unit_test(jget__table__one_code_and_message_per_failure),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
