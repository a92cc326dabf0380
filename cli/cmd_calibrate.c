/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_calibrate.c: dtplan calibrate --show: what the records taught, and
 * from what.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>

#define CMD "calibrate"

void cmd_calibrate_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan calibrate --show [--records FILE] [--cluster NAME] [--site FILE]\n"
		"                        [--json]\n\n"
		"Shows the corrections later plans apply to the model's step time, one per GPU\n"
		"type, framework and shape class: the runs they were learned from, the measured\n"
		"over modelled ratio, its spread, and the factor after shrinkage toward 1 (a\n"
		"prior of +-%.0f%% on the model, runs differing by at least %.0f%%) within\n"
		"[%.1f, %.1f], at the runs' geometric-mean GPU count; and how it changes with\n"
		"the job's size: the slope of log(measured / model) per e-fold of GPUs, shrunk\n"
		"toward 0 (a prior of +-%.0f%% per e-fold), from runs at several GPU counts.\n"
		"And the spread of one GPU's compute per step (cv) the plans' straggler term\n"
		"uses unless the site sets StepTimeCV=: the median over the runs of at least\n"
		"%d steps with a spread, from %d such runs on.\n\n"
		"  --show           show them (the only action)\n"
		"  --records FILE   the record database (default: the site's RecordDB=, else\n"
		"                   $XDG_STATE_HOME/dtplan/records.db)\n"
		"  --cluster NAME   learn from this cluster's records (default\n"
		"                   $SLURM_CLUSTER_NAME, else every cluster's)\n"
		"  --site FILE      dtplan.conf, for RecordDB=\n"
		"  --json           print them as JSON (schema " CLI_CALIBRATION_SCHEMA ")\n",
		DTPLAN_CALIB_PRIOR_LOG_SD * 100.0, DTPLAN_CALIB_RUN_LOG_SD * 100.0,
		DTPLAN_CORRECTION_MIN, DTPLAN_CORRECTION_MAX, DTPLAN_CALIB_PRIOR_SLOPE_SD * 100.0,
		DTPLAN_CALIB_CV_MIN_STEPS, DTPLAN_CALIB_CV_MIN_RUNS);
}

int cmd_calibrate(int argc, char **argv)
{
	struct dtplan_config config;
	struct dtplan_calibration cal = {0};
	struct dtplan_error err = {0};
	const char *records = NULL, *cluster = NULL, *cl;
	struct dtplan_record *recs = NULL;
	size_t n = 0;
	bool json = false, show = false;
	char path[4096];
	int rc;
	const struct cli_opt opts[] = {
		{.name = "show", .kind = CLI_OPT_FLAG, .dest = &show},
		CLI_OPT_RECORDS(&records, &cluster),
		CLI_OPT_SITE(&config),
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_calibrate_usage, .opts = opts};

	dtplan_config_init(&config);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (!show) {
		rc = cli_usage_error(CMD, "--show is required");
		goto out;
	}
	cl = cli_records_cluster(cluster);
	if ((rc = cli_records_path(CMD, records, &config, path, sizeof(path))) != CLI_EXIT_OK ||
	    (rc = cli_records_read(CMD, path, cl, &recs, &n, true)) != CLI_EXIT_OK)
		goto out;
	if (dtplan_calibration_learn(recs, n, cl, &cal, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	if (json) {
		json_t *a = json_array();

		for (size_t i = 0; a != NULL && i < cal.n; i++) {
			const struct dtplan_correction *k = &cal.corrections[i];

			if (json_array_append_new(
				    a,
				    json_pack("{s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:i, s:i, "
					      "s:o, s:o, s:o}",
					      "gpu", k->gpu, "framework", k->framework,
					      "shape_class", k->shape_class, "runs", k->runs,
					      "observed", cli_json_number(k->observed), "log_sd",
					      cli_json_number(k->log_sd), "weight",
					      cli_json_number(k->weight), "factor",
					      cli_json_number(k->factor), "min_gpus", k->min_gpus,
					      "max_gpus", k->max_gpus, "ref_gpus",
					      cli_json_number(k->ref_gpus), "slope",
					      cli_json_number(k->slope), "slope_weight",
					      cli_json_number(k->slope_weight))) != 0) {
				json_decref(a);
				a = NULL;
			}
		}
		rc = cli_json_print(
			CMD, json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:i}",
				       "schema", CLI_CALIBRATION_SCHEMA, "records", path, "cluster",
				       cl, "records_read", (json_int_t)n, "prior_log_sd",
				       cli_json_number(DTPLAN_CALIB_PRIOR_LOG_SD), "run_log_sd",
				       cli_json_number(DTPLAN_CALIB_RUN_LOG_SD), "prior_slope_sd",
				       cli_json_number(DTPLAN_CALIB_PRIOR_SLOPE_SD), "corrections",
				       a != NULL ? a : json_null(), "step_cv",
				       cal.cv_runs > 0 ? cli_json_number(cal.step_cv) : json_null(),
				       "step_cv_runs", cal.cv_runs));
		goto out;
	}
	printf("%zu record%s in %s%s%s\n", n, n == 1 ? "" : "s", path, cl[0] ? ", cluster " : "",
	       cl);
	/* a record that teaches a cv teaches a correction too */
	if (cal.n == 0) {
		printf("nothing learned: plans use the model alone\n");
		goto out;
	}
	/* the step spread, learned apart from the corrections (over every GPU
	 * type and framework) */
	if (cal.cv_runs > 0)
		printf("step spread: one GPU's compute varies %.1f%% (sd), learned from %d runs\n",
		       cal.step_cv * 100.0, cal.cv_runs);
	else
		printf("step spread: none learned (needs %d runs of %d steps or more with a "
		       "spread)\n",
		       DTPLAN_CALIB_CV_MIN_RUNS, DTPLAN_CALIB_CV_MIN_STEPS);
	printf("%-12s %-10s %-26s %5s %9s %7s %7s %7s %11s %7s\n", "gpu", "framework",
	       "shape class", "runs", "measured", "spread", "weight", "factor", "gpus", "slope");
	for (size_t i = 0; i < cal.n; i++) {
		const struct dtplan_correction *k = &cal.corrections[i];

		char gpus[32];

		snprintf(gpus, sizeof(gpus), k->min_gpus == k->max_gpus ? "%d" : "%d-%d",
			 k->min_gpus, k->max_gpus);
		/* factor holds at the runs' geometric-mean size; slope: per e-fold */
		printf("%-12s %-10s %-26s %5d %8.3fx %6.1f%% %7.2f %6.3fx %11s %+7.3f\n", k->gpu,
		       k->framework, k->shape_class, k->runs, k->observed, k->log_sd * 100.0,
		       k->weight, k->factor, gpus, k->slope);
	}
out:
	dtplan_calibration_fini(&cal);
	free(recs);
	dtplan_config_fini(&config);
	return rc;
}
