/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench.h: what every benchmark of bench/ times with: a monotonic clock,
 * the order of samples for medians, and the process's peak memory.
 */
#ifndef DTPLAN_BENCH_H
#define DTPLAN_BENCH_H

#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort order of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Peak resident memory of this process so far, in MiB (ru_maxrss is KiB). */
static inline double bench_peak_rss_mib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0.0;
	return (double)ru.ru_maxrss / 1024.0;
}

#endif /* DTPLAN_BENCH_H */
