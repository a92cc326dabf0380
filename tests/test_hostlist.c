/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_hostlist.c: Slurm hostlist expressions: expansion, matching and
 * compression.
 */
#include "test_common.h"

struct expand_case {
	const char *expr;
	size_t n;
	const char *first, *last; /* expected first and last names */
};

static void hostlist_expand__good_expressions__expected_names(void **state)
{
	static const struct expand_case cases[] = {
		{"gpu7", 1, "gpu7", "gpu7"},
		{"node[1-4]", 4, "node1", "node4"},
		{"node[01-16,20]", 17, "node01", "node20"},
		{"node[8-10]", 3, "node8", "node10"},
		{"node[008-010]", 3, "node008", "node010"},
		{"a[1-2]b[3-4]", 4, "a1b3", "a2b4"},
		{"node[1-2],gpu7,x[5]", 4, "node1", "x5"},
		{"rack1-node[0-1]", 2, "rack1-node0", "rack1-node1"},
		{"[1-3]", 3, "1", "3"},
		{"n[0]", 1, "n0", "n0"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char(*names)[64] = NULL;
		size_t n = 99;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_hostlist_expand(cases[i].expr, 1000, &names, &n, &err),
				 DTPLAN_OK);
		assert_int_equal(n, cases[i].n);
		assert_string_equal(names[0], cases[i].first);
		assert_string_equal(names[n - 1], cases[i].last);
		free(names);
	}
}

static void hostlist_expand__cartesian__first_group_slowest(void **state)
{
	char(*names)[64] = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(dtplan_hostlist_expand("a[1-2]b[3-4]", 10, &names, &n, NULL), DTPLAN_OK);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "a1b3");
	assert_string_equal(names[1], "a1b4");
	assert_string_equal(names[2], "a2b3");
	assert_string_equal(names[3], "a2b4");
	free(names);
	assert_int_equal(dtplan_hostlist_expand("node[01-16,20]", 100, &names, &n, NULL),
			 DTPLAN_OK);
	assert_string_equal(names[8], "node09");
	assert_string_equal(names[15], "node16");
	assert_string_equal(names[16], "node20");
	free(names);
}

/* Eighteen ranges of 10^18 names each, then the start of a nineteenth. */
#define R18 "0-999999999999999999,"
#define WRAP_RANGES                                                                                \
	"n[" R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 R18 "0-"

struct bad_case {
	const char *expr;
	enum dtplan_err code;
	const char *text; /* substring of the message */
};

static void hostlist_expand__garbage__error_names_expression(void **state)
{
	static const struct bad_case cases[] = {
		{"node[3-1]", DTPLAN_ERR_PARSE, "hostlist 'node[3-1]': range 3-1 is reversed"},
		{"node[", DTPLAN_ERR_PARSE, "hostlist 'node[': '[' at offset 4 has no ']'"},
		{"node[a-b]", DTPLAN_ERR_PARSE, "hostlist 'node[a-b]': 'a' is not a number"},
		{"node[]", DTPLAN_ERR_PARSE, "empty brackets"},
		{"node[1-]", DTPLAN_ERR_PARSE, "empty number"},
		{"node[1,,2]", DTPLAN_ERR_PARSE, "empty number"},
		{"node[1[2]]", DTPLAN_ERR_PARSE, "has no ']'"},
		{"node]", DTPLAN_ERR_PARSE, "unexpected ']'"},
		{"a,,b", DTPLAN_ERR_PARSE, "empty name at offset 2"},
		{"a,", DTPLAN_ERR_PARSE, "empty name"},
		{",a", DTPLAN_ERR_PARSE, "empty name"},
		{"no de", DTPLAN_ERR_PARSE, "unexpected ' '"},
		{"", DTPLAN_ERR_PARSE, "hostlist is empty"},
		{"n[1234567890123456789]", DTPLAN_ERR_RANGE, "more than 18 digits"},
		{"node[1-11]", DTPLAN_ERR_RANGE, "names more than 10 hosts"},
		{"a[1-5]b[1-3]", DTPLAN_ERR_RANGE, "names more than 10 hosts"},
		{"n[1-999999999999999999]x[1-999999999999999999]", DTPLAN_ERR_RANGE,
		 "more than 10"},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa[1-2]",
		 DTPLAN_ERR_RANGE, "longer than 63"},
		/* issue 13, finding 1: counts that would wrap */
		{"n[0-99999999999999999999]", DTPLAN_ERR_RANGE, "more than 18 digits"},
		{"n[1-18446744073709551615]", DTPLAN_ERR_RANGE, "more than 18 digits"},
		/* 18 x 10^18 + 446744073709551616 = 2^64: the sum wrapped to 0 (SIGFPE) */
		{WRAP_RANGES "446744073709551615]", DTPLAN_ERR_RANGE,
		 "the ranges in one bracket name more than 18446744073709551615 hosts"},
		/* 2^64 + 4: the sum wrapped to 4 and four names came out */
		{WRAP_RANGES "446744073709551619]", DTPLAN_ERR_RANGE,
		 "the ranges in one bracket name more than"},
		{"x" WRAP_RANGES "446744073709551619]y[1-2]", DTPLAN_ERR_RANGE,
		 "the ranges in one bracket name more than"},
		/* a long expression is quoted by its first 69 characters */
		{WRAP_RANGES "446744073709551615]", DTPLAN_ERR_RANGE,
		 "hostlist 'n[0-999999999999999999,0-999999999999999999,0-999999999999999999,"
		 "0-99...': the ranges"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char(*names)[64] = (void *)&cases; /* must be reset to NULL */
		size_t n = 99;
		struct dtplan_error err = {0};

		assert_int_equal(dtplan_hostlist_expand(cases[i].expr, 10, &names, &n, &err),
				 cases[i].code);
		assert_null(names);
		assert_int_equal(n, 0);
		if (strstr(err.text, cases[i].text) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].expr, err.text,
				 cases[i].text);
	}
}

static void hostlist_expand__null_arguments__inval(void **state)
{
	char(*names)[64] = NULL;
	size_t n = 0;
	struct dtplan_error err = {0};

	(void)state;
	assert_int_equal(dtplan_hostlist_expand(NULL, 10, &names, &n, &err), DTPLAN_ERR_PARSE);
	assert_int_equal(dtplan_hostlist_expand("a", 10, NULL, &n, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_hostlist_expand("a", 10, &names, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_null(names);
	/* max_hosts 0: even one name is too many */
	assert_int_equal(dtplan_hostlist_expand("a", 0, &names, &n, &err), DTPLAN_ERR_RANGE);
}

struct match_case {
	const char *expr, *name;
	bool match;
};

static void hostlist_match__names__member_or_not(void **state)
{
	static const struct match_case cases[] = {
		{"node[01-16,20]", "node01", true},  {"node[01-16,20]", "node16", true},
		{"node[01-16,20]", "node20", true},  {"node[01-16,20]", "node1", false},
		{"node[01-16,20]", "node17", false}, {"node[01-16,20]", "node020", false},
		{"node[8-10]", "node9", true},       {"node[8-10]", "node09", false},
		{"node[8-10]", "node10", true},      {"a[1-2]b[3-4]", "a2b3", true},
		{"a[1-2]b[3-4]", "a3b3", false},     {"a[1-2]b[3-4]", "a1b", false},
		{"gpu7,node[1-2]", "gpu7", true},    {"gpu7,node[1-2]", "node2", true},
		{"gpu7,node[1-2]", "gpu", false},    {"n[1-12]x", "n12x", true},
		{"n[1-12][3-4]", "n123", true},      {"n[1-12][3-4]", "n14", true},
		{"n[1-12][3-4]", "n125", false},     {"node1", "node1x", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool m = !cases[i].match;

		assert_int_equal(dtplan_hostlist_match(cases[i].expr, cases[i].name, &m, NULL),
				 DTPLAN_OK);
		if (m != cases[i].match)
			fail_msg("'%s' in '%s': got %d", cases[i].name, cases[i].expr, m);
	}
}

static void hostlist_match__bad_expression__parse_error(void **state)
{
	struct dtplan_error err = {0};
	bool m = true;

	(void)state;
	assert_int_equal(dtplan_hostlist_match("node[3-1]", "node2", &m, &err), DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "node[3-1]"));
	/* issue 13, finding 1: no division by a wrapped count here either */
	assert_int_equal(dtplan_hostlist_match(WRAP_RANGES "446744073709551615]", "n1", &m, &err),
			 DTPLAN_ERR_RANGE);
	assert_int_equal(dtplan_hostlist_match("a", NULL, &m, &err), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_hostlist_match("a", "a", NULL, &err), DTPLAN_ERR_INVAL);
}

struct compress_case {
	const char *names[8];
	size_t n;
	const char *want;
};

static void hostlist_compress__names__shortest_form(void **state)
{
	static const struct compress_case cases[] = {
		{{"node1", "node2", "node3", "node4", "node7"}, 5, "node[1-4,7]"},
		{{"node7", "node1", "node2"}, 3, "node[1-2,7]"},
		{{"gpu01", "gpu02", "node1"}, 3, "gpu[01-02],node1"},
		{{"node09", "node10", "node11"}, 3, "node[09-11]"},
		{{"node10", "node09"}, 2, "node[09-10]"},
		{{"node9", "node10"}, 2, "node[9-10]"},
		{{"node9", "node09"}, 2, "node9,node09"},
		{{"login", "node1", "login"}, 3, "login,node1,login"},
		{{"node1", "node1", "node2"}, 3, "node[1-2]"},
		{{"node1", "node1"}, 2, "node1"},
		{{"a1b3", "a1b4"}, 2, "a1b[3-4]"},
		{{"42", "43"}, 2, "42,43"},
		{{"x"}, 1, "x"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char names[8][64];
		char buf[128];

		for (size_t k = 0; k < cases[i].n; k++)
			snprintf(names[k], sizeof(names[k]), "%s", cases[i].names[k]);
		assert_string_equal(dtplan_hostlist_compress((const char(*)[64])names, cases[i].n,
							     buf, sizeof(buf)),
				    cases[i].want);
	}
}

static void hostlist_compress__small_buffer__truncates_with_dots(void **state)
{
	char names[3][64] = {"alpha", "beta", "gamma"};
	char buf[12];

	(void)state;
	/* "alpha,beta,gamma" is 16 characters: 8 fit, then "..." */
	dtplan_hostlist_compress((const char(*)[64])names, 3, buf, sizeof(buf));
	assert_true(strlen(buf) < sizeof(buf));
	assert_non_null(strstr(buf, "..."));
	assert_int_equal(strncmp(buf, "alpha", 5), 0);
	assert_string_equal(dtplan_hostlist_compress(NULL, 0, buf, sizeof(buf)), "");
	assert_null(dtplan_hostlist_compress((const char(*)[64])names, 3, NULL, 10));
}

static void hostlist_compress__expand_round_trip__same_names(void **state)
{
	char(*names)[64] = NULL, (*again)[64] = NULL;
	size_t n = 0, m = 0;
	char buf[256];

	(void)state;
	assert_int_equal(dtplan_hostlist_expand("node[01-16,20],gpu7,a[1-2]", 100, &names, &n,
						NULL),
			 DTPLAN_OK);
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, sizeof(buf));
	assert_string_equal(buf, "node[01-16,20],gpu7,a[1-2]");
	assert_int_equal(dtplan_hostlist_expand(buf, 100, &again, &m, NULL), DTPLAN_OK);
	assert_int_equal(m, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], again[i]);
	free(names);
	free(again);
}

/*
 * Issue 13, finding 8: grouping scanned every earlier group for each name
 * (O(n^2), 38 s for 80,000 irregular names).  Large lists must still come
 * out right: bench/bench_parse times them.
 */
static void hostlist_compress__80000_names__exact_ranges(void **state)
{
	const size_t n = 80000;
	char(*names)[64] = malloc(n * sizeof(*names)), (*again)[64] = NULL;
	size_t size = 4 << 20, m = 0;
	char *buf = malloc(size);

	(void)state;
	assert_non_null(names);
	assert_non_null(buf);
	/* node00001..node80000 visited with stride 7919 (prime to 80000): every
	 * number once, in scrambled order; compression sorts them back. */
	for (size_t i = 0; i < n; i++)
		snprintf(names[i], 64, "node%05zu", (i * 7919) % n + 1);
	assert_string_equal(dtplan_hostlist_compress((const char(*)[64])names, n, buf, size),
			    "node[00001-80000]");
	/* Two prefixes interleaved, odd numbers only: one range per name. */
	for (size_t i = 0; i < n; i++)
		snprintf(names[i], 64, "%s%zu", i % 2 ? "gpu" : "cpu", 2 * (i / 2) + 1);
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, size);
	assert_int_equal(strncmp(buf, "cpu[1,3,5,", 10), 0);
	assert_non_null(strstr(buf, ",79997,79999],gpu[1,3,5,"));
	/* 80,000 names that share no group: each stays whole, in input order */
	for (size_t i = 0; i < n; i++)
		snprintf(names[i], 64, "r%zun%zu", i, i % 7);
	dtplan_hostlist_compress((const char(*)[64])names, n, buf, size);
	assert_int_equal(strncmp(buf, "r0n0,r1n1,r2n2,", 15), 0);
	assert_int_equal(dtplan_hostlist_expand(buf, n, &again, &m, NULL), DTPLAN_OK);
	assert_int_equal(m, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(again[i], names[i]);
	free(again);
	free(names);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostlist_expand__good_expressions__expected_names),
		cmocka_unit_test(hostlist_expand__cartesian__first_group_slowest),
		cmocka_unit_test(hostlist_expand__garbage__error_names_expression),
		cmocka_unit_test(hostlist_expand__null_arguments__inval),
		cmocka_unit_test(hostlist_match__names__member_or_not),
		cmocka_unit_test(hostlist_match__bad_expression__parse_error),
		cmocka_unit_test(hostlist_compress__names__shortest_form),
		cmocka_unit_test(hostlist_compress__small_buffer__truncates_with_dots),
		cmocka_unit_test(hostlist_compress__expand_round_trip__same_names),
		cmocka_unit_test(hostlist_compress__80000_names__exact_ranges),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
