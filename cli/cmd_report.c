/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_report.c: "dtplan report": posts a saved plan to a collector, as the
 * plugin does for each job (dtplan.report/1).
 */
#include "config.h"

#include "cli.h"
#include "dtprobes.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CMD "report"

void cmd_report_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan report --plan FILE [--url URL] [--site FILE] [--token-file FILE]\n"
		"                     [--job-id N] [--timeout TIME] [--munge-socket PATH]\n"
		"                     [--json]\n"
		"\n"
		"Posts a plan saved by \"dtplan plan --json\" or by the plugin\n"
		"(dtplan-JOBID.json) to a collector, once, as %s JSON: the plan, its\n"
		"warnings, the job id, and the user, host and time of the post.\n"
		"\n"
		"Options:\n"
		"  --plan FILE        the plan (%s JSON)\n"
		"  --url URL          the collector (default: the site file's ReportURL=)\n"
		"  --site FILE        dtplan.conf: ReportURL=, ReportTokenFile=, ReportTimeout=,\n"
		"                     HttpConnectTimeout=, HttpMaxSize=, HttpCAPath=\n"
		"  --token-file FILE  bearer token, in a file only its owner may read\n"
		"                     (default: the site file's ReportTokenFile=)\n"
		"  --job-id N         the job the plan is for (default: $SLURM_JOB_ID, else none)\n"
		"  --timeout TIME     bound on the post, connecting included (default: the\n"
		"                     site file's ReportTimeout=, 2s)\n"
		"  --munge-socket PATH  munged's socket for the credential that proves who\n"
		"                     posted (default: the site file's MungeSocket=, else\n"
		"                     libmunge's); without munged the post has none\n"
		"  --json             say what was posted as JSON (schema %s): the plan\n"
		"                     file, the URL and the job id\n"
		"  -h, --help         show this help\n"
		"\n"
		"Exit status: 0 when the collector took the report (HTTP 2xx), 1 when it could\n"
		"not be posted or the plan cannot be read, 2 for bad usage.\n",
		DTPLAN_REPORT_SCHEMA, DTPLAN_PLAN_SCHEMA, CLI_REPORTED_SCHEMA);
}

/* The job id: --job-id, else $SLURM_JOB_ID when it is a job id, else 0. */
static uint32_t job_id(int flag)
{
	const char *env = getenv("SLURM_JOB_ID");
	long v;

	if (flag > 0)
		return (uint32_t)flag;
	if (env != NULL &&
	    dtplan_parse_long(env, "SLURM_JOB_ID", 1, 0xfffffffeL, &v, NULL) == DTPLAN_OK)
		return (uint32_t)v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct dtplan_config c;
	struct dtplan_error err = {0};
	const char *plan_path = NULL, *url = NULL, *token_file = NULL, *munge = NULL;
	char *plan = NULL, *token = NULL, buf[1024];
	double timeout = 0;
	int id = 0, rc;
	bool json = false;
	const struct cli_opt opts[] = {
		{.name = "plan", .kind = CLI_OPT_STRING, .dest = &plan_path, .required = true},
		{.name = "url", .kind = CLI_OPT_STRING, .dest = &url},
		CLI_OPT_SITE(&c),
		{.name = "token-file", .kind = CLI_OPT_STRING, .dest = &token_file},
		{.name = "munge-socket", .kind = CLI_OPT_STRING, .dest = &munge},
		{.name = "job-id", .kind = CLI_OPT_INT, .dest = &id, .min = 1, .max = 2147483647},
		{.name = "timeout",
		 .kind = CLI_OPT_TIME,
		 .dest = &timeout,
		 .positive = true,
		 .max = 600,
		 .limit = "must be more than 0 s and at most 600 s"},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_report_usage, .opts = opts};

	dtplan_config_init(&c);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (url == NULL && c.report_url[0] != '\0')
		url = c.report_url;
	if (url == NULL) {
		rc = cli_usage_error(CMD, "--url is required (or a site file with ReportURL=)");
		goto out;
	}
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) {
		rc = cli_usage_error(CMD, "--url: '%s' is not an http:// or https:// URL", url);
		goto out;
	}
	if (munge != NULL && snprintf(c.munge_socket, sizeof(c.munge_socket), "%s", munge) >=
				     (int)sizeof(c.munge_socket)) {
		rc = cli_usage_error(CMD, "--munge-socket: '%s' is too long", munge);
		goto out;
	}
	if (token_file == NULL && c.report_token_file[0] != '\0')
		token_file = c.report_token_file;
	rc = CLI_EXIT_FAIL;
	if (token_file != NULL && dtplan_http_read_token(token_file, &token, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		goto out;
	}
	if (dtplan_file_read(plan_path, DTPLAN_FILE_PLAN, &plan, NULL, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		goto out;
	}
	if (cli_report_post(&c, url, "dtplan report", plan, job_id(id), token,
			    timeout > 0 ? timeout : c.report_timeout_s, &err) != DTPLAN_OK) {
		/* the plan file's own faults name it */
		if (strcmp(err.source, "plan") == 0)
			snprintf(err.source, sizeof(err.source), "%s", plan_path);
		fprintf(stderr, "dtplan %s: not reported: %s\n", CMD,
			dtplan_error_format(&err, buf, sizeof(buf)));
		goto out;
	}
	rc = CLI_EXIT_OK;
	if (json)
		rc = cli_json_print(CMD, json_pack("{s:s, s:s, s:s, s:o, s:b}", "schema",
						   CLI_REPORTED_SCHEMA, "plan", plan_path, "url",
						   url, "job_id",
						   job_id(id) > 0 ? json_integer(job_id(id))
								  : json_null(),
						   "reported", true));
out:
	if (token != NULL) {
		memset(token, 0, strlen(token));
		free(token);
	}
	free(plan);
	dtplan_config_fini(&c);
	return rc;
}
