/*
 * bench_parse.c: inputs an admin or a job controls, at sizes that were
 * quadratic once (issue 13, findings 8 and 13).  Prints the median time of
 * each over a few runs and the peak resident set size.
 *
 *   compress   dtplan_hostlist_compress() of 80,000 and 200,000 names that
 *              share no group ("r<i>n<i%7>"), the worst case for grouping,
 *              and of 200,000 names of one prefix; target well under 1 s
 *   site file  "SwitchName=s[1-100000] Oversubscription=2:1" through
 *              dtplan_config_parse_string(); target well under 1 s
 *
 * Usage: bench_parse [RUNS]   (default 5)
 */
#include "config.h"

#include "dtplan.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 200000

/* Median of runs timings of compressing names[0..n), in ms; the output's length in *len. */
static double time_compress(const char (*names)[64], size_t n, char *buf, size_t size, double *ms,
			    int runs, size_t *len)
{
	for (int r = 0; r < runs; r++) {
		double t0 = bench_now();

		dtplan_hostlist_compress(names, n, buf, size);
		ms[r] = (bench_now() - t0) * 1e3;
	}
	*len = strlen(buf);
	qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
	return ms[runs / 2];
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5, rc = 1;
	char(*names)[64] = malloc(MAX_NAMES * sizeof(*names));
	size_t size = 16 << 20, len = 0;
	char *buf = malloc(size), msg[1024];
	double *ms = NULL, med;
	struct dtplan_error err = {0};

	if (runs < 1)
		runs = 1;
	ms = malloc((size_t)runs * sizeof(*ms));
	if (names == NULL || buf == NULL || ms == NULL) {
		snprintf(err.text, sizeof(err.text), "out of memory");
		goto out;
	}
	for (size_t i = 0; i < MAX_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "r%zun%zu", i, i % 7);
	for (size_t n = 80000; n <= MAX_NAMES; n += MAX_NAMES - 80000) {
		med = time_compress((const char(*)[64])names, n, buf, size, ms, runs, &len);
		printf("bench_parse: compress %zu names in no common group: median %.1f ms "
		       "(min %.1f, max %.1f, %d runs), %zu characters\n",
		       n, med, ms[0], ms[runs - 1], runs, len);
	}
	for (size_t i = 0; i < MAX_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "node%06zu", (i * 7919) % MAX_NAMES + 1);
	med = time_compress((const char(*)[64])names, MAX_NAMES, buf, size, ms, runs, &len);
	printf("bench_parse: compress %d scrambled names of one prefix: median %.1f ms "
	       "(min %.1f, max %.1f, %d runs): %s\n",
	       MAX_NAMES, med, ms[0], ms[runs - 1], runs, buf);
	for (int r = 0; r < runs; r++) {
		struct dtplan_config c;
		double t0 = bench_now();
		enum dtplan_err ret;

		dtplan_config_init(&c);
		ret = dtplan_config_parse_string(&c,
						 "SwitchName=s[1-100000] Oversubscription=2:1\n",
						 "bench-site", &err);
		ms[r] = (bench_now() - t0) * 1e3;
		len = c.n_switches;
		dtplan_config_fini(&c);
		if (ret != DTPLAN_OK)
			goto out;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), bench_cmp_double);
	printf("bench_parse: site file SwitchName=s[1-100000]: %zu switches, median %.1f ms "
	       "(min %.1f, max %.1f, %d runs)\n",
	       len, ms[runs / 2], ms[0], ms[runs - 1], runs);
	printf("bench_parse: peak RSS %.1f MiB\n", bench_peak_rss_mib());
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "bench_parse: %s\n", dtplan_error_format(&err, msg, sizeof(msg)));
	free(names);
	free(buf);
	free(ms);
	return rc;
}
