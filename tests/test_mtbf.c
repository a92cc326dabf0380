/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mtbf.c: the per-GPU MTBF from Slurm's parsable accounting output
 * (lib/record/mtbf.c) and its exact chi-square interval.
 *
 * Quantiles from the chi-square table (NIST/SEMATECH e-Handbook of
 * Statistical Methods, 1.3.6.7.4): chi2(0.95; 2) = 5.991, chi2(0.05; 2) =
 * 0.103, chi2(0.95; 6) = 12.592, chi2(0.05; 4) = 0.711, chi2(0.95; 10) =
 * 18.307, chi2(0.05; 10) = 3.940.
 */
#include "test_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void chi2_quantile__table(void **state)
{
	(void)state;
	assert_near(dtplan_chi2_quantile(0.95, 2), 5.991, 1e-3);
	assert_near(dtplan_chi2_quantile(0.05, 2), 0.103, 1e-3);
	assert_near(dtplan_chi2_quantile(0.95, 6), 12.592, 1e-3);
	assert_near(dtplan_chi2_quantile(0.05, 4), 0.711, 1e-3);
	assert_near(dtplan_chi2_quantile(0.95, 10), 18.307, 1e-3);
	assert_near(dtplan_chi2_quantile(0.05, 10), 3.940, 1e-3);
	assert_true(isnan(dtplan_chi2_quantile(1.0, 2)));
	assert_true(isnan(dtplan_chi2_quantile(0.5, 0)));
}

/* sacctmgr -P -n show event event=node format=NodeName,Start,End,State,Reason */
static const char events[] =
	"node3|2026-12-01T10:05:00|2026-12-01T10:20:00|DOWN|Not responding\n"
	"node5|2026-12-01T11:00:00|Unknown|DRAIN|maintenance\n"
	"node7|2026-12-01T12:00:00|Unknown|DOWN*|Kill task failed\n"
	"node1|2026-11-29T12:00:00|2026-11-29T13:00:00|DOWN|before the window\n";
/* sacct -P -n -X -a --state=NODE_FAIL --format=JobIDRaw,NodeList,Start,End,State */
static const char jobs[] = "41|node[3-4]|2026-12-01T10:00:00|2026-12-01T10:06:00|NODE_FAIL\n"
			   "42|node7|2026-12-01T11:50:00|2026-12-01T12:01:00|NODE_FAIL\n";

static int64_t at(const char *s)
{
	struct tm tm = {0};

	assert_non_null(strptime(s, "%Y-%m-%dT%H:%M:%S", &tm));
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm);
}

/*
 * 8 nodes x 8 GPUs over 24 hours: 1536 GPU-hours; two DOWN events in the
 * window (the DRAIN is the admin's): 768 GPU-hours; 90%: 2 x 1536 / 12.592
 * = 243.97 to 2 x 1536 / 0.711 = 4322.4 GPU-hours.
 */
static void mtbf__two_down_events__exact_interval(void **state)
{
	struct dtplan_node_event *ev = NULL;
	struct dtplan_failed_job *fj = NULL;
	size_t ne = 0, nj = 0;
	struct dtplan_mtbf_in in = {.window_start = at("2026-12-01T00:00:00"),
				    .window_end = at("2026-12-02T00:00:00"),
				    .n_nodes = 8,
				    .gpus_per_node = 8,
				    .confidence = 0.9};
	struct dtplan_mtbf m;

	(void)state;
	assert_int_equal(dtplan_slurm_events_parse(events, &ev, &ne, NULL), DTPLAN_OK);
	assert_int_equal(ne, 4);
	assert_string_equal(ev[2].state, "DOWN*");
	assert_int_equal(ev[1].end, -1);
	assert_int_equal(dtplan_slurm_jobs_parse(jobs, &fj, &nj, NULL), DTPLAN_OK);
	assert_int_equal(nj, 2);
	assert_string_equal(fj[0].nodes, "node[3-4]");
	assert_int_equal(dtplan_mtbf_compute(&in, ev, ne, fj, nj, &m, NULL), DTPLAN_OK);
	assert_int_equal(m.failures, 2);
	assert_int_equal(m.node_fail_jobs, 2);
	assert_near(m.gpu_hours, 1536.0, 1e-9);
	assert_near(m.mtbf_gpu_hours, 768.0, 1e-9);
	assert_near(m.lower_gpu_hours, 3072.0 / 12.59158724, 1e-3);
	assert_near(m.upper_gpu_hours, 3072.0 / 0.7107230213, 1e-2);
	/* no failure: a one-sided lower bound, 2T / chi2(0.9; 2) = 3072 / 4.605 */
	assert_int_equal(dtplan_mtbf_compute(&in, ev + 1, 1, NULL, 0, &m, NULL), DTPLAN_OK);
	assert_int_equal(m.failures, 0);
	assert_true(isinf(m.mtbf_gpu_hours));
	assert_near(m.lower_gpu_hours, 3072.0 / 4.605170186, 1e-3);
	free(ev);
	free(fj);
}

static void parse__not_parsable__refused_with_line(void **state)
{
	struct dtplan_node_event *ev = NULL;
	struct dtplan_failed_job *fj = NULL;
	struct dtplan_error err = {0};
	size_t n = 0;

	(void)state;
	/* what sacctmgr prints for people, not -P */
	assert_int_equal(dtplan_slurm_events_parse("node3 2026-12-01T10:05:00 DOWN\n", &ev, &n,
						   &err),
			 DTPLAN_ERR_PARSE);
	assert_int_equal(err.line, 1);
	assert_null(ev);
	assert_int_equal(dtplan_slurm_events_parse("node3|yesterday|Unknown|DOWN|x\n", &ev, &n,
						   &err),
			 DTPLAN_ERR_PARSE);
	assert_non_null(strstr(err.text, "not a time"));
	assert_int_equal(dtplan_slurm_jobs_parse("x|n|a|b|NODE_FAIL\n", &fj, &n, &err),
			 DTPLAN_ERR_PARSE);
	assert_int_equal(dtplan_slurm_events_parse("", &ev, &n, &err), DTPLAN_OK);
	assert_int_equal(n, 0);
}

/* sacctmgr -P does not escape a '|' in a reason, nor a newline: the reason
 * is asked for last, so the fields past the fourth are the reason whole, and
 * a line of fewer fields after an event goes on with its reason. */
static void parse__reason_with_bar_and_newline__read_whole(void **state)
{
	const char text[] = "node3|2026-12-01T10:05:00|Unknown|DOWN|disk a|b full|x\n"
			    "node4|2026-12-01T10:06:00|Unknown|DOWN*|first line\n"
			    "second line|of it\n"
			    "node5|2026-12-01T10:07:00|Unknown|DRAIN|\n";
	struct dtplan_node_event *ev = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(dtplan_slurm_events_parse(text, &ev, &n, NULL), DTPLAN_OK);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].reason, "disk a|b full|x");
	assert_string_equal(ev[0].state, "DOWN");
	assert_string_equal(ev[1].reason, "first line second line|of it");
	assert_string_equal(ev[2].node, "node5");
	assert_string_equal(ev[2].reason, "");
	free(ev);
}

/*
 * Only the nodes asked count, each event once: the events and jobs of
 * mtbf__two_down_events__exact_interval, plus node3's event again
 * (slurmdbd keys an event on node and start: the same one), a DOWN of node9
 * (not watched), job 41 again and job 43 on node[9-10].  Still 2 failures
 * and 2 jobs over node[1-8]; 2 of other nodes, 2 repeated.
 */
static void mtbf__other_nodes_and_repeats__not_counted(void **state)
{
	char ev_text[1024], job_text[512];
	struct dtplan_node_event *ev = NULL;
	struct dtplan_failed_job *fj = NULL;
	char(*names)[64] = NULL;
	size_t ne = 0, nj = 0, nn = 0;
	struct dtplan_mtbf_in in = {.window_start = at("2026-12-01T00:00:00"),
				    .window_end = at("2026-12-02T00:00:00"),
				    .gpus_per_node = 8,
				    .confidence = 0.9};
	struct dtplan_mtbf m;

	(void)state;
	snprintf(ev_text, sizeof(ev_text), "%s%s", events,
		 "node3|2026-12-01T10:05:00|2026-12-01T10:20:00|DOWN|Not responding\n"
		 "node9|2026-12-01T13:00:00|Unknown|DOWN|Not responding\n");
	snprintf(job_text, sizeof(job_text), "%s%s", jobs,
		 "41|node[3-4]|2026-12-01T10:00:00|2026-12-01T10:06:00|NODE_FAIL\n"
		 "43|node[9-10]|2026-12-01T12:00:00|2026-12-01T13:01:00|NODE_FAIL\n");
	assert_int_equal(dtplan_hostlist_expand("node[1-8]", 64, &names, &nn, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_slurm_events_parse(ev_text, &ev, &ne, NULL), DTPLAN_OK);
	assert_int_equal(dtplan_slurm_jobs_parse(job_text, &fj, &nj, NULL), DTPLAN_OK);
	in.n_nodes = nn;
	in.nodes = (const char(*)[64])names;
	assert_int_equal(dtplan_mtbf_compute(&in, ev, ne, fj, nj, &m, NULL), DTPLAN_OK);
	assert_int_equal(m.failures, 2);
	assert_int_equal(m.node_fail_jobs, 2);
	assert_int_equal(m.other_nodes, 2);
	assert_int_equal(m.repeated, 2);
	assert_near(m.mtbf_gpu_hours, 768.0, 1e-9);
	free(names);
	free(ev);
	free(fj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chi2_quantile__table),
		cmocka_unit_test(mtbf__two_down_events__exact_interval),
		cmocka_unit_test(parse__not_parsable__refused_with_line),
		cmocka_unit_test(parse__reason_with_bar_and_newline__read_whole),
		cmocka_unit_test(mtbf__other_nodes_and_repeats__not_counted),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
