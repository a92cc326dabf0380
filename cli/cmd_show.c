/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_show.c: dtplan show: a saved plan (a job's dtplan-JOBID.json, or
 * dtplan plan --json) shown as dtplan plan shows it, and its picture.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "show"

void cmd_show_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan show PLAN.json [--svg FILE] [--json]\n\n"
		"Shows a saved plan, a job's dtplan-JOBID.json or the output of\n"
		"\"dtplan plan --json\" (schema %s), as dtplan plan and the job log show it:\n"
		"the split, memory, step time, checkpoint, warnings and the rank map.\n\n"
		"  --svg FILE           also draw the nodes and GPUs, coloured by pipeline stage\n"
		"                       (racks marked above the default oversubscription\n"
		"                       threshold, 2:1)\n"
		"  --json               print the plan as JSON (schema %s), as dtplan plan\n"
		"                       --json wrote it, once read and checked as a plan\n"
		"Exit status 1 when the file cannot be read, 2 when it is not a plan.\n",
		DTPLAN_PLAN_SCHEMA, DTPLAN_PLAN_SCHEMA);
}

int cmd_show(int argc, char **argv)
{
	const char *path = NULL, *svg = NULL;
	struct dtplan_error err = {0};
	struct dtplan_plan *plan = NULL;
	char *json = NULL, *text = NULL;
	bool as_json = false;
	int rc;
	/* one row per flag, in the order of the usage */
	const struct cli_opt opts[] = {
		{.name = "svg", .kind = CLI_OPT_STRING, .dest = &svg, .once = true},
		CLI_OPT_JSON(&as_json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {
		.cmd = CMD, .usage = cmd_show_usage, .opts = opts, .args = &path, .max_args = 1};

	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (path == NULL) {
		rc = cli_usage_error(CMD, "no plan file given");
		goto out;
	}
	if (dtplan_file_read(path, DTPLAN_FILE_PLAN, &json, NULL, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	if (dtplan_plan_from_json(json, &plan, &err) != DTPLAN_OK) {
		snprintf(err.source, sizeof(err.source), "%s", path);
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	/* the plan as read, once the reader took it whole (dtplan_plan_from_json()
	 * keeps only what the text and the picture need) */
	if (as_json) {
		size_t len = strlen(json);

		fputs(json, stdout);
		if (len == 0 || json[len - 1] != '\n')
			fputc('\n', stdout);
	} else if (dtplan_plan_render_text(plan, &text, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	} else {
		fputs(text, stdout);
	}
	rc = svg != NULL ? cli_write_svg(CMD, plan, svg) : CLI_EXIT_OK;
out:
	free(text);
	free(json);
	dtplan_plan_destroy(plan);
	return rc;
}
