/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_strmap.c: the string map (lib/base/strmap.c): put and get through
 * growth, duplicates and absent names, and the hash's key: every map has
 * its own, drawn at init or at the first put, kept as the map grows.
 */
#include "test_common.h"

#include "dtplan.h"
#include "base/base.h"

#define N_NAMES 5000

static char names[N_NAMES][16];

static int setup(void **state)
{
	(void)state;
	for (int i = 0; i < N_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "gpu%05d", i);
	return 0;
}

static void strmap_put__many_names__each_found(void **state)
{
	struct dtplan__strmap m;
	uint64_t seed[2];

	(void)state;
	assert_int_equal(dtplan__strmap_init(&m, 4), DTPLAN_OK);
	seed[0] = m.seed[0];
	seed[1] = m.seed[1];
	for (int i = 0; i < N_NAMES; i++)
		assert_int_equal(dtplan__strmap_put(&m, names[i], i, NULL), DTPLAN_OK);
	assert_int_equal(m.len, N_NAMES);
	assert_true(m.cap >= 2 * N_NAMES);
	/* growing rehashes under the same key */
	assert_true(m.seed[0] == seed[0] && m.seed[1] == seed[1]);
	for (int i = 0; i < N_NAMES; i++)
		assert_int_equal(dtplan__strmap_get(&m, names[i]), i);
	assert_int_equal(dtplan__strmap_get(&m, "gpu99999"), -1);
	assert_int_equal(dtplan__strmap_get(&m, ""), -1);
	assert_int_equal(dtplan__strmap_get(&m, NULL), -1);
	dtplan__strmap_fini(&m);
}

static void strmap_put__duplicate__inval_with_old(void **state)
{
	struct dtplan__strmap m;
	int old = -7;

	(void)state;
	assert_int_equal(dtplan__strmap_init(&m, 2), DTPLAN_OK);
	assert_int_equal(dtplan__strmap_put(&m, "a", 1, NULL), DTPLAN_OK);
	assert_int_equal(dtplan__strmap_put(&m, "", 2, NULL), DTPLAN_OK);
	assert_int_equal(dtplan__strmap_put(&m, "a", 3, &old), DTPLAN_ERR_INVAL);
	assert_int_equal(old, 1);
	assert_int_equal(dtplan__strmap_get(&m, "a"), 1);
	assert_int_equal(dtplan__strmap_get(&m, ""), 2);
	assert_int_equal(m.len, 2);
	dtplan__strmap_fini(&m);
	dtplan__strmap_fini(NULL);
}

static void strmap_init__two_maps__keys_differ(void **state)
{
	struct dtplan__strmap a, b;

	(void)state;
	assert_int_equal(dtplan__strmap_init(&a, 16), DTPLAN_OK);
	assert_int_equal(dtplan__strmap_init(&b, 16), DTPLAN_OK);
	assert_false(a.seed[0] == 0 && a.seed[1] == 0);
	assert_false(a.seed[0] == b.seed[0] && a.seed[1] == b.seed[1]);
	dtplan__strmap_fini(&a);
	dtplan__strmap_fini(&b);
	assert_true(a.seed[0] == 0 && a.seed[1] == 0);
}

/* Two maps of the same names in the same order place them differently: the
 * key, not the name alone, decides the slot. */
static void strmap_put__same_names__placed_apart(void **state)
{
	struct dtplan__strmap a, b;
	int same = 0;

	(void)state;
	assert_int_equal(dtplan__strmap_init(&a, 64), DTPLAN_OK);
	assert_int_equal(dtplan__strmap_init(&b, 64), DTPLAN_OK);
	assert_int_equal(a.cap, b.cap);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(dtplan__strmap_put(&a, names[i], i, NULL), DTPLAN_OK);
		assert_int_equal(dtplan__strmap_put(&b, names[i], i, NULL), DTPLAN_OK);
	}
	for (size_t s = 0; s < a.cap; s++)
		same += (a.keys[s] == NULL) == (b.keys[s] == NULL) &&
			(a.keys[s] == NULL || a.keys[s] == b.keys[s]);
	/* 64 names in 128 slots: equal layouts under two keys are a 2^-100 chance */
	assert_true(same < (int)a.cap);
	dtplan__strmap_fini(&a);
	dtplan__strmap_fini(&b);
}

/* A map left as = {0} (callers do) is keyed as it is first used. */
static void strmap_put__zeroed_map__keyed_on_first_put(void **state)
{
	struct dtplan__strmap m = {0};

	(void)state;
	assert_int_equal(dtplan__strmap_get(&m, "a"), -1);
	assert_int_equal(dtplan__strmap_put(&m, "a", 5, NULL), DTPLAN_OK);
	assert_false(m.seed[0] == 0 && m.seed[1] == 0);
	assert_int_equal(dtplan__strmap_get(&m, "a"), 5);
	dtplan__strmap_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strmap_put__many_names__each_found),
		cmocka_unit_test(strmap_put__duplicate__inval_with_old),
		cmocka_unit_test(strmap_init__two_maps__keys_differ),
		cmocka_unit_test(strmap_put__same_names__placed_apart),
		cmocka_unit_test(strmap_put__zeroed_map__keyed_on_first_put),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
