/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_mtbf.c: dtplan mtbf: the per-GPU MTBF from Slurm's accounting, node-
 * down events (sacctmgr) and jobs ended by NODE_FAIL (sacct), read from
 * their parsable output.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CMD "mtbf"
/* One accounting query: at most this long and this much output. */
#define QUERY_TIMEOUT_S 30
#define QUERY_MAX (64u << 20)

void cmd_mtbf_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan mtbf --nodes HOSTLIST [--days D | --start TIME [--end TIME]]\n"
		"                   [--gpus-per-node G] [--confidence C] [--json]\n"
		"                   [--events FILE --jobs FILE] [--write-cache FILE]\n\n"
		"The per-GPU MTBF of the nodes from Slurm's accounting over a window: the\n"
		"node-down events of `sacctmgr -P -n show event` and the jobs `sacct -P`\n"
		"says ended NODE_FAIL, with an exact chi-square confidence interval (a\n"
		"Poisson process observed for a fixed time) and the data it used.\n\n"
		"  --nodes HOSTLIST     the nodes watched (their GPUs are the exposure)\n"
		"  --days D             the window: the last D days (default 30)\n"
		"  --start TIME, --end TIME\n"
		"                       the window, as Slurm writes times (2026-12-01T10:00:00)\n"
		"  --gpus-per-node G    GPUs per node (default 8)\n"
		"  --confidence C       of the interval (default 0.9)\n"
		"  --events FILE, --jobs FILE\n"
		"                       saved output of those two commands instead of asking\n"
		"  --write-cache FILE   also keep the result where plans read it with the\n"
		"                       site's MTBF=slurm (MtbfCache=)\n"
		"  --json               print it as JSON\n");
}

/* Runs argv (no shell) with its output into *out, bounded in time and size. */
static int capture(char *const argv[], char **out)
{
	struct dtplan_error err = {0};
	size_t len = 0;

	if (dtplan_run_capture(argv, QUERY_TIMEOUT_S, QUERY_MAX, out, &len, &err) != DTPLAN_OK) {
		fprintf(stderr, "dtplan %s: %s (is slurmdbd there?)\n", CMD, err.text);
		return CLI_EXIT_FAIL;
	}
	if (*out == NULL)
		*out = strdup("");
	return *out != NULL ? CLI_EXIT_OK : cli_usage_error(CMD, "out of memory");
}

static int read_text(const char *path, char **out)
{
	struct dtplan_error err = {0};

	if (dtplan_observe_read(path, QUERY_MAX, false, out, NULL, NULL, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, false);
	return CLI_EXIT_OK;
}

/* The cache plans read with MTBF=slurm: written beside, then renamed. */
static int write_cache(const char *path, const struct dtplan_mtbf *m,
		       const struct dtplan_mtbf_in *in, size_t nodes)
{
	struct dtplan_error err = {0};
	char *text = NULL, tmp[4200];
	FILE *f;
	int rc = CLI_EXIT_FAIL;

	if (dtplan_mtbf_to_json(m, in->window_start, in->window_end, nodes, (int64_t)time(NULL),
				&text, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, false);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "wx");
	if (f == NULL || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		fprintf(stderr, "dtplan %s: cannot write %s: %s\n", CMD, path, strerror(errno));
	else
		rc = CLI_EXIT_OK;
	if (rc != CLI_EXIT_OK)
		(void)unlink(tmp);
	free(text);
	return rc;
}

static void fmt_time(time_t t, char *buf, size_t size)
{
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		snprintf(buf, size, "?");
}

static int parse_time(const char *s, time_t *t)
{
	struct tm tm = {0};
	char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);

	if (e == NULL || *e != '\0')
		return -1;
	tm.tm_isdst = -1;
	*t = mktime(&tm);
	return 0;
}

int cmd_mtbf(int argc, char **argv)
{
	const char *nodes = NULL, *start_s = NULL, *end_s = NULL, *events_f = NULL, *jobs_f = NULL,
		   *cache_f = NULL;
	struct dtplan_mtbf_in in = {.gpus_per_node = 8, .confidence = 0.9};
	struct dtplan_node_event *ev = NULL;
	struct dtplan_failed_job *jobs = NULL;
	struct dtplan_error err = {0};
	struct dtplan_mtbf m;
	char(*names)[64] = NULL;
	char *etext = NULL, *jtext = NULL, s1[32], s2[32], nodes_arg[4200];
	size_t n_names = 0, n_ev = 0, n_jobs = 0;
	double days = 30.0;
	time_t t0, t1 = time(NULL);
	bool json = false;
	int rc;
	const struct cli_opt opts[] = {
		{.name = "nodes", .kind = CLI_OPT_STRING, .dest = &nodes, .required = true},
		{.name = "days",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &days,
		 .min = 1.0 / 24,
		 .max = 3650},
		{.name = "start", .kind = CLI_OPT_STRING, .dest = &start_s},
		{.name = "end", .kind = CLI_OPT_STRING, .dest = &end_s},
		{.name = "gpus-per-node",
		 .kind = CLI_OPT_INT,
		 .dest = &in.gpus_per_node,
		 .min = 1,
		 .max = 1024},
		{.name = "confidence",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &in.confidence,
		 .min = 0.5,
		 .max = 0.999},
		{.name = "events", .kind = CLI_OPT_STRING, .dest = &events_f},
		{.name = "jobs", .kind = CLI_OPT_STRING, .dest = &jobs_f},
		{.name = "write-cache", .kind = CLI_OPT_STRING, .dest = &cache_f},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_mtbf_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if ((events_f == NULL) != (jobs_f == NULL)) {
		rc = cli_usage_error(CMD, "--events and --jobs go together");
		goto out;
	}
	if (end_s != NULL && parse_time(end_s, &t1) != 0) {
		rc = cli_usage_error(CMD, "--end: '%s' is not YYYY-MM-DDTHH:MM:SS", end_s);
		goto out;
	}
	t0 = t1 - (time_t)(days * 86400.0);
	if (start_s != NULL && parse_time(start_s, &t0) != 0) {
		rc = cli_usage_error(CMD, "--start: '%s' is not YYYY-MM-DDTHH:MM:SS", start_s);
		goto out;
	}
	if (t1 <= t0) {
		rc = cli_usage_error(CMD, "the window ends before it starts");
		goto out;
	}
	if (dtplan_hostlist_expand(nodes, 1 << 20, &names, &n_names, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	fmt_time(t0, s1, sizeof(s1));
	fmt_time(t1, s2, sizeof(s2));
	if (events_f != NULL) {
		if ((rc = read_text(events_f, &etext)) != 0 ||
		    (rc = read_text(jobs_f, &jtext)) != 0)
			goto out;
	} else {
		char start[48], end[48], nl[4200];
		char *ea[] = {"sacctmgr", "-P",
			      "-n",       "show",
			      "event",    "event=node",
			      start,      end,
			      nl,         "format=NodeName,Start,End,State,Reason",
			      NULL};
		char *ja[] = {"sacct",
			      "-P",
			      "-n",
			      "-X",
			      "-a",
			      "--state=NODE_FAIL",
			      "-S",
			      s1,
			      "-E",
			      s2,
			      "-N",
			      nodes_arg,
			      "--format=JobIDRaw,NodeList,Start,End,State",
			      NULL};

		snprintf(start, sizeof(start), "start=%s", s1);
		snprintf(end, sizeof(end), "end=%s", s2);
		snprintf(nl, sizeof(nl), "nodes=%s", nodes);
		snprintf(nodes_arg, sizeof(nodes_arg), "%s", nodes);
		if ((rc = capture(ea, &etext)) != 0 || (rc = capture(ja, &jtext)) != 0)
			goto out;
	}
	if (dtplan_slurm_events_parse(etext, &ev, &n_ev, &err) != DTPLAN_OK ||
	    dtplan_slurm_jobs_parse(jtext, &jobs, &n_jobs, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	in.window_start = (int64_t)t0;
	in.window_end = (int64_t)t1;
	in.n_nodes = n_names;
	in.nodes = (const char(*)[64])names;
	if (dtplan_mtbf_compute(&in, ev, n_ev, jobs, n_jobs, &m, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	if (cache_f != NULL && (rc = write_cache(cache_f, &m, &in, n_names)) != 0)
		goto out;
	if (json) {
		json_t *e = json_array(), *j = json_array();

		for (size_t i = 0; e != NULL && i < n_ev; i++)
			json_array_append_new(e,
					      json_pack("{s:s, s:I, s:s, s:s}", "node", ev[i].node,
							"start", (json_int_t)ev[i].start, "state",
							ev[i].state, "reason", ev[i].reason));
		for (size_t i = 0; j != NULL && i < n_jobs; i++)
			json_array_append_new(j, json_pack("{s:I, s:s, s:s}", "job_id",
							   (json_int_t)jobs[i].job_id, "nodes",
							   jobs[i].nodes, "state", jobs[i].state));
		rc = cli_json_print(
			CMD,
			json_pack(
				"{s:s, s:s, s:s, s:I, s:i, s:o, s:i, s:i, s:i, s:i, s:o, s:o, s:o, "
				"s:o, s:s, s:o, s:o}",
				"source", events_f != NULL ? "files" : "slurm accounting", "start",
				s1, "end", s2, "nodes", (json_int_t)n_names, "gpus_per_node",
				in.gpus_per_node, "gpu_hours", cli_json_number(m.gpu_hours),
				"failures", m.failures, "node_fail_jobs", m.node_fail_jobs,
				"other_nodes", m.other_nodes, "repeated", m.repeated,
				"mtbf_gpu_hours", cli_json_number(m.mtbf_gpu_hours),
				"lower_gpu_hours", cli_json_number(m.lower_gpu_hours),
				"upper_gpu_hours", cli_json_number(m.upper_gpu_hours), "confidence",
				cli_json_number(m.confidence), "interval",
				"exact chi-square (Poisson, time-truncated)", "events",
				e != NULL ? e : json_null(), "jobs", j != NULL ? j : json_null()));
		goto out;
	}
	printf("window        %s to %s, %zu nodes x %d GPUs = %.1f GPU-hours\n", s1, s2, n_names,
	       in.gpus_per_node, m.gpu_hours);
	printf("failures      %d node-down events; %d jobs ended NODE_FAIL\n", m.failures,
	       m.node_fail_jobs);
	if (m.other_nodes > 0 || m.repeated > 0)
		printf("not counted   %d of other nodes than --nodes, %d repeated\n", m.other_nodes,
		       m.repeated);
	for (size_t i = 0; i < n_ev; i++) {
		char t[32];

		fmt_time((time_t)ev[i].start, t, sizeof(t));
		printf("  %s %-12s %-12s %s\n", t, ev[i].node, ev[i].state, ev[i].reason);
	}
	for (size_t i = 0; i < n_jobs; i++)
		printf("  job %lld on %s: %s\n", (long long)jobs[i].job_id, jobs[i].nodes,
		       jobs[i].state);
	if (m.failures == 0)
		printf("MTBF per GPU  no failure: at least %.0f GPU-hours (%.0f%% one-sided)\n",
		       m.lower_gpu_hours, m.confidence * 100.0);
	else
		printf("MTBF per GPU  %.1f GPU-hours, %.0f%% interval %.1f to %.1f (exact "
		       "chi-square, Poisson)\n",
		       m.mtbf_gpu_hours, m.confidence * 100.0, m.lower_gpu_hours,
		       m.upper_gpu_hours);
	rc = CLI_EXIT_OK;
out:
	free(names);
	free(ev);
	free(jobs);
	free(etext);
	free(jtext);
	return rc;
}
