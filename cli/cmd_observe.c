/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_observe.c: dtplan observe: a finished job's record, from its plan,
 * its output and its observation file (what the plugin's epilog does).
 */
#include "config.h"

#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CMD "observe"

void cmd_observe_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan observe --plan FILE [--output FILE] [--observe FILE]\n"
		"                      [--job-id N] [--time EPOCH] [--records FILE]\n"
		"                      [--cluster NAME] [--site FILE] [--json]\n\n"
		"Reads what a job measured and keeps it as the job's record: the step times\n"
		"its framework printed (Megatron-LM/NeMo, torchtitan, DeepSpeed, Lightning) in\n"
		"its output, or the lines it appended to its %s file, warm-up skipped;\n"
		"their median and spread.  Prints \"planned X, measured Y (+Z%%)\".\n\n"
		"  --plan FILE      the job's plan (dtplan-JOBID.json)\n"
		"  --output FILE    the job's output (its last %u MiB are read)\n"
		"  --observe FILE   the job's observation file, one JSON object a line:\n"
		"                   {\"step\":N,\"step_seconds\":S} or {\"checkpoint_seconds\":S}\n"
		"  --job-id N       the job (default $SLURM_JOB_ID, else 0)\n"
		"  --time EPOCH     when it ended (default now)\n"
		"  --records FILE   the record database (default: the site's RecordDB=, else\n"
		"                   $XDG_STATE_HOME/dtplan/records.db)\n"
		"  --cluster NAME   the cluster it ran on (default $SLURM_CLUSTER_NAME)\n"
		"  --site FILE      dtplan.conf, for RecordDB=\n"
		"  --json           print the record kept as JSON (schema %s): the\n"
		"                   database, where the steps came from, the notes, and the\n"
		"                   record as dtplan history --json writes it\n",
		DTPLAN_OBSERVE_ENV, DTPLAN_OBSERVE_LOG_TAIL >> 20, CLI_OBSERVED_SCHEMA);
}

int cmd_observe(int argc, char **argv)
{
	struct dtplan_config config;
	struct dtplan_job_files files = {0};
	struct dtplan_record r;
	struct dtplan_error err = {0};
	struct dtplan_recdb *db = NULL;
	enum dtplan_err rv;
	const char *plan_path = NULL, *output = NULL, *observe = NULL, *records = NULL,
		   *cluster = NULL, *job = getenv("SLURM_JOB_ID");
	double job_id = job != NULL ? strtod(job, NULL) : 0.0, when = (double)time(NULL);
	char path[4096], buf[1024], user[64] = "", source[32], notes[2048];
	bool json = false;
	int rc;
	const struct cli_opt opts[] = {
		{.name = "plan", .kind = CLI_OPT_STRING, .dest = &plan_path, .required = true},
		{.name = "output", .kind = CLI_OPT_STRING, .dest = &output},
		{.name = "observe", .kind = CLI_OPT_STRING, .dest = &observe},
		{.name = "job-id",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &job_id,
		 .min = 0,
		 .max = 4294967295.0},
		{.name = "time", .kind = CLI_OPT_DOUBLE, .dest = &when, .min = 0, .max = 1e11},
		CLI_OPT_RECORDS(&records, &cluster),
		CLI_OPT_SITE(&config),
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_observe_usage, .opts = opts};

	dtplan_config_init(&config);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (output == NULL && observe == NULL) {
		rc = cli_usage_error(CMD, "--output or --observe is required");
		goto out;
	}
	files.plan = plan_path;
	files.observe = observe;
	files.output = output;
	rv = dtplan_job_observe(&files, cli_records_cluster(cluster), &r, source, sizeof(source),
				notes, sizeof(notes), &err);
	if (notes[0] != '\0')
		fprintf(stderr, "dtplan %s: %s\n", CMD, notes);
	if (rv != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	r.job_id = (int64_t)job_id;
	r.time = (int64_t)when;
	if (getlogin_r(user, sizeof(user)) != 0)
		snprintf(user, sizeof(user), "%u", (unsigned)getuid());
	snprintf(r.user, sizeof(r.user), "%s", user);
	if ((rc = cli_records_path(CMD, records, &config, path, sizeof(path))) != 0)
		goto out;
	if (dtplan_recdb_open(path, true, &db, &err) != DTPLAN_OK ||
	    dtplan_recdb_add(db, &r, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	if (json) {
		rc = cli_json_print(CMD, json_pack("{s:s, s:s, s:s, s:o?, s:o}", "schema",
						   CLI_OBSERVED_SCHEMA, "records", path, "source",
						   source, "notes",
						   notes[0] != '\0' ? json_string(notes) : NULL,
						   "record", cli_record_json(&r)));
		goto out;
	}
	printf("dtplan: job %lld: planned %s, measured %s (%+.0f%%) from %zu steps (%s)\n",
	       (long long)r.job_id, dtplan_format_time(r.predicted_step_s, buf, sizeof(buf)),
	       dtplan_format_time(r.measured_step_s, path, sizeof(path)),
	       (r.measured_step_s / r.predicted_step_s - 1.0) * 100.0, (size_t)r.steps, source);
	rc = CLI_EXIT_OK;
out:
	dtplan_recdb_close(db);
	dtplan_config_fini(&config);
	return rc;
}
