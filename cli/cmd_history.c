/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_history.c: dtplan history: planned against measured, one line a job.
 */
#include "config.h"

#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#define CMD "history"

void cmd_history_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan history [--records FILE] [--cluster NAME] [--site FILE] "
		"[--json]\n\n"
		"Lists the records of the jobs dtplan planned and then observed, oldest first:\n"
		"the shape, the predicted step and the measured one.\n\n"
		"  --records FILE   the record database (default: the site's RecordDB=, else\n"
		"                   $XDG_STATE_HOME/dtplan/records.db)\n"
		"  --cluster NAME   only this cluster's records (default $SLURM_CLUSTER_NAME,\n"
		"                   else every cluster's)\n"
		"  --site FILE      dtplan.conf, for RecordDB=\n"
		"  --json           print the records as a JSON array\n");
}

int cmd_history(int argc, char **argv)
{
	struct dtplan_config config;
	const char *records = NULL, *cluster = NULL;
	struct dtplan_record *recs = NULL;
	size_t n = 0;
	bool json = false;
	char path[4096];
	int rc;
	const struct cli_opt opts[] = {
		CLI_OPT_RECORDS(&records, &cluster),
		CLI_OPT_SITE(&config),
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_history_usage, .opts = opts};

	dtplan_config_init(&config);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if ((rc = cli_records_path(CMD, records, &config, path, sizeof(path))) != CLI_EXIT_OK ||
	    (rc = cli_records_read(CMD, path, cli_records_cluster(cluster), &recs, &n, true)) !=
		    CLI_EXIT_OK)
		goto out;
	if (json) {
		json_t *a = json_array();

		for (size_t i = 0; a != NULL && i < n; i++)
			if (json_array_append_new(a, cli_record_json(&recs[i])) != 0) {
				json_decref(a);
				a = NULL;
			}
		rc = cli_json_print(CMD, a);
		goto out;
	}
	if (n == 0) {
		printf("no records in %s\n", path);
		goto out;
	}
	printf("%-10s %-20s %-12s %-14s %-10s %6s %-24s %10s %10s %8s\n", "job", "ended (UTC)",
	       "cluster", "model", "gpu", "gpus", "shape", "planned", "measured", "diff");
	for (size_t i = 0; i < n; i++) {
		const struct dtplan_record *r = &recs[i];
		time_t t = (time_t)r->time;
		struct tm tm;
		char when[32] = "?", shape[64];

		if (gmtime_r(&t, &tm) != NULL)
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(shape, sizeof(shape), "tp%d pp%d dp%d mb%d z%d", r->tp, r->pp, r->dp,
			 r->micro_batch, r->zero);
		printf("%-10lld %-20s %-12.12s %-14.14s %-10.10s %6d %-24s %9.3fs %9.3fs "
		       "%+7.1f%%\n",
		       (long long)r->job_id, when, r->cluster, r->model, r->gpu,
		       r->tp * r->cp * r->pp * r->dp, shape, r->predicted_step_s,
		       r->measured_step_s,
		       (r->measured_step_s / r->predicted_step_s - 1.0) * 100.0);
	}
out:
	free(recs);
	dtplan_config_fini(&config);
	return rc;
}
