/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_base.c: the small mechanisms of lib/base/ every area shares: the
 * growing text (text.c), the UTF-8 check (utf8.c), the raw JSON scanner
 * (json_scan.c) and the cycle check of a tree (tree.c).
 */
#include "test_common.h"

#include "base/base.h"

static void text_add__many_appends__grows_and_keeps_all(void **state)
{
	struct dtplan__text t = {0};

	(void)state;
	for (int i = 0; i < 1000; i++)
		dtplan__text_add(&t, "%04d,", i);
	assert_false(t.failed);
	assert_int_equal(t.len, 5000);
	assert_int_equal(strlen(t.s), 5000);
	assert_memory_equal(t.s + 4995, "0999,", 5);
	dtplan__text_fini(&t);
	assert_null(t.s);
}

static void text_put_keep__bytes_and_strings__offsets_stay_valid(void **state)
{
	struct dtplan__text t = {0};
	size_t a, b;

	(void)state;
	a = dtplan__text_keep(&t, "leaf1");
	b = dtplan__text_keep(&t, "");
	dtplan__text_put(&t, "xy", 2);
	assert_int_equal(a, 0);
	assert_int_equal(b, 6);
	assert_string_equal(t.s + a, "leaf1");
	assert_string_equal(t.s + b, "");
	assert_string_equal(t.s + 7, "xy");
	assert_int_equal(t.len, 9);
	dtplan__text_fini(&t);
}

static void text_take__empty_and_failed__empty_string_or_null(void **state)
{
	struct dtplan__text t = {0};
	char *s;

	(void)state;
	s = dtplan__text_take(&t);
	assert_string_equal(s, "");
	free(s);
	dtplan__text_add(&t, "abc");
	s = dtplan__text_take(&t);
	assert_string_equal(s, "abc");
	assert_null(t.s);
	free(s);
	t.failed = true;
	dtplan__text_add(&t, "abc");
	assert_null(t.s);
	assert_int_equal(dtplan__text_keep(&t, "x"), DTPLAN_TEXT_NONE);
	assert_null(dtplan__text_take(&t));
}

static void utf8_len__table__rfc3629(void **state)
{
	static const struct {
		const char *in;
		size_t want;
	} cases[] = {
		{"a", 1},
		{"", 1},
		{"\x01", 1},
		{"\xc3\xa9", 2},         /* é */
		{"\xe2\x82\xac", 3},     /* € */
		{"\xf0\x9f\x98\x80", 4}, /* an emoji */
		{"\x80", 0},             /* stray continuation */
		{"\xc0\xaf", 0},         /* overlong '/' */
		{"\xe0\x80\xaf", 0},     /* overlong, three bytes */
		{"\xed\xa0\x80", 0},     /* a surrogate */
		{"\xf4\x90\x80\x80", 0}, /* past U+10FFFF */
		{"\xc3", 0},             /* cut short by the NUL */
		{"\xe2\x82", 0},
		{"\xff", 0},
	};

	(void)state;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(cases); i++)
		assert_int_equal(dtplan__utf8_len((const unsigned char *)cases[i].in),
				 cases[i].want);
}

static void json_skip_value__table__end_of_value(void **state)
{
	static const struct {
		const char *in;
		size_t want; /* 0: no value */
	} cases[] = {
		{"1, 2", 1},     {"true}", 4},  {"\"a\\\"b\" x", 6}, {"{\"a\": [1, \"]\"]} ,", 15},
		{"[[], {}]", 8}, {"\"open", 0}, {"\"ends in \\", 0}, {"[1, 2", 0},
		{"", 0},         {",", 0},
	};

	(void)state;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(cases); i++)
		assert_int_equal(dtplan__json_skip_value(cases[i].in, 0, strlen(cases[i].in)),
				 cases[i].want);
}

static void json_skip_blank_string__text__indexes(void **state)
{
	const char *s = " \t\r\n\"x\\\\\" ";

	(void)state;
	assert_int_equal(dtplan__json_skip_blank(s, 0, strlen(s)), 4);
	assert_int_equal(dtplan__json_skip_string(s, 4, strlen(s)), 9);
	assert_int_equal(dtplan__json_skip_blank(s, 9, strlen(s)), strlen(s));
	assert_int_equal(dtplan__json_skip_string("\"x", 0, 2), 0);
}

static int parent_of(const void *ctx, int i)
{
	return ((const int *)ctx)[i];
}

static void tree_cycle__forests_and_cycles__node_on_cycle(void **state)
{
	static const int forest[] = {-1, 0, 0, 1, 1, -1, 5};
	static const int loop[] = {-1, 2, 3, 1, 3};
	static const int self[] = {0};

	(void)state;
	assert_int_equal(dtplan__tree_cycle(DTPLAN_ARRAY_SIZE(forest), parent_of, forest), -1);
	assert_int_equal(dtplan__tree_cycle(DTPLAN_ARRAY_SIZE(loop), parent_of, loop), 1);
	assert_int_equal(dtplan__tree_cycle(1, parent_of, self), 0);
	assert_int_equal(dtplan__tree_cycle(0, parent_of, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_add__many_appends__grows_and_keeps_all),
		cmocka_unit_test(text_put_keep__bytes_and_strings__offsets_stay_valid),
		cmocka_unit_test(text_take__empty_and_failed__empty_string_or_null),
		cmocka_unit_test(utf8_len__table__rfc3629),
		cmocka_unit_test(json_skip_value__table__end_of_value),
		cmocka_unit_test(json_skip_blank_string__text__indexes),
		cmocka_unit_test(tree_cycle__forests_and_cycles__node_on_cycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
