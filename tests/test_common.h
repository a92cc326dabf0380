/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_common.h: what every cmocka driver includes.
 */
#ifndef DTPLAN_TEST_COMMON_H
#define DTPLAN_TEST_COMMON_H

#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtplan.h"

/*
 * cmocka 1.1 (Debian 12, 13) and 2.0 (sid): 2.0 deprecates the untyped
 * will_return_count(), will_return_maybe(), assert_in_range() and
 * check_expected() (-Werror fails on them) for typed ones 1.1 lacks.  The
 * tests use these names; check_expected_ptr() is in both.
 */
#ifdef will_return_int_maybe
#define dt_will_return_count(f, v, n) will_return_int_count(f, v, n)
#define dt_will_return_maybe(f, v) will_return_int_maybe(f, v)
#define dt_assert_in_range(v, lo, hi) assert_int_in_range(v, lo, hi)
#else
#define dt_will_return_count(f, v, n) will_return_count(f, v, n)
#define dt_will_return_maybe(f, v) will_return_maybe(f, v)
#define dt_assert_in_range(v, lo, hi) assert_in_range(v, lo, hi)
#endif

/* Asserts |a - b| <= tol (absolute). */
#define assert_near(a, b, tol)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b), t_ = (tol);                                             \
		if (!(fabs(a_ - b_) <= t_))                                                        \
			fail_msg("%s = %.9g, expected %.9g (tolerance %.3g)", #a, a_, b_, t_);     \
	} while (0)

/* Asserts |a - b| <= rel * |b| (relative). */
#define assert_rel(a, b, rel)                                                                      \
	do {                                                                                       \
		double a_ = (a), b_ = (b), r_ = (rel);                                             \
		if (!(fabs(a_ - b_) <= r_ * fabs(b_)))                                             \
			fail_msg("%s = %.9g, expected %.9g (relative %.3g)", #a, a_, b_, r_);      \
	} while (0)

/* Path of a file in the project's own tests/data (static buffer). */
static inline const char *test_data_path(const char *name)
{
	static char path[4096];
	const char *top = getenv("top_srcdir");

	snprintf(path, sizeof(path), "%s/tests/data/%s", top ? top : ".", name);
	return path;
}

/* Path of a shared fixture, or NULL when ../shared/fixtures is absent. */
static inline const char *test_fixture_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("DTPLAN_FIXTURES");
	FILE *f;

	if (dir == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	fclose(f);
	return path;
}

/* A bound of `seconds` on a wait (alarm()), ten times longer under valgrind
 * (tests/valgrind.sh sets DTPLAN_TEST_UNDER_VALGRIND), where code runs 20 to
 * 50 times slower. */
static inline unsigned test_bound_s(unsigned seconds)
{
	return getenv("DTPLAN_TEST_UNDER_VALGRIND") != NULL ? 10 * seconds : seconds;
}

/*
 * Under valgrind a large input's size and a sweep's share are cut: n / 20
 * of it, and every 8th case of a sweep (test_stride()).  The code paths
 * are the same, so memcheck still sees them; make check runs the full sizes,
 * which are what catch a reader gone quadratic.
 */
static inline size_t test_scaled(size_t n)
{
	return getenv("DTPLAN_TEST_UNDER_VALGRIND") != NULL && n >= 20 ? n / 20 : n;
}

static inline size_t test_stride(void)
{
	return getenv("DTPLAN_TEST_UNDER_VALGRIND") != NULL ? 8 : 1;
}

/* Unbuffered stdio so that output interleaves with cmocka's. */
static inline void test_setup_stdio(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
}

#endif /* DTPLAN_TEST_COMMON_H */
