/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_ckpt.c: dtplan ckpt: checkpoint interval from the job's MTBF.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "ckpt"

void cmd_ckpt_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan ckpt --gpus N --mtbf-gpu-hours H --write-seconds S\n"
		"                   [--restart-seconds R] [--step-seconds T] [--json]\n\n"
		"Chooses the checkpoint interval (Daly 2006; Young 1974 shown too) from the\n"
		"job's mean time between failures, M = H x 3600 / N seconds.\n\n"
		"  --gpus N             GPUs in the job\n"
		"  --mtbf-gpu-hours H   mean time between failures of one GPU, in hours\n"
		"                       (Llama 3: %.0f)\n"
		"  --write-seconds S    time to write one checkpoint: 30, 30s, 2min\n"
		"  --restart-seconds R  time to restart after a failure (default 0)\n"
		"  --step-seconds T     time of one training step: shows the interval in steps\n"
		"  --json               print JSON (schema " CLI_CKPT_SCHEMA
		") instead of a table\n",
		DTPLAN_DEFAULT_MTBF_GPU_HOURS);
}

static int print_json(const struct dtplan_ckpt_in *in, const struct dtplan_ckpt *k)
{
	json_t *root;

	root = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "gpus", in->gpus,
			 "mtbf_gpu_hours", cli_json_number(in->mtbf_gpu_hours), "write_seconds",
			 cli_json_number(in->write_seconds), "restart_seconds",
			 cli_json_number(in->restart_seconds), "job_mtbf_seconds",
			 cli_json_number(k->job_mtbf_seconds), "young_seconds",
			 cli_json_number(k->young_seconds), "daly_seconds",
			 cli_json_number(k->daly_seconds), "availability_seconds",
			 cli_json_number(k->availability_seconds), "interval_seconds",
			 cli_json_number(k->interval_seconds), "waste_fraction",
			 cli_json_number(k->waste_fraction));
	if (root == NULL || in->step_seconds <= 0.0)
		return cli_json_print(CMD, cli_json_schema(root, CLI_CKPT_SCHEMA));
	if (json_object_set_new(root, "step_seconds", cli_json_number(in->step_seconds)) != 0 ||
	    json_object_set_new(root, "interval_steps", cli_json_number(k->interval_steps)) != 0) {
		json_decref(root);
		root = NULL;
	}
	return cli_json_print(CMD, cli_json_schema(root, CLI_CKPT_SCHEMA));
}

int cmd_ckpt(int argc, char **argv)
{
	struct dtplan_ckpt_in in = {0};
	struct dtplan_error err = {0};
	struct dtplan_ckpt k;
	int rc;
	bool json = false;
	char a[32];
	const struct cli_opt opts[] = {
		CLI_OPT_GPUS(&in.gpus, 1 << 24, true),
		{.name = "mtbf-gpu-hours",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &in.mtbf_gpu_hours,
		 .min = 1e-3,
		 .max = 1e9,
		 .required = true},
		{.name = "write-seconds",
		 .kind = CLI_OPT_TIME,
		 .dest = &in.write_seconds,
		 .positive = true,
		 .max = 1e7,
		 .limit = "must be more than 0 and at most 10^7 s",
		 .required = true},
		{.name = "restart-seconds",
		 .kind = CLI_OPT_TIME,
		 .dest = &in.restart_seconds,
		 .max = 1e7,
		 .limit = "is over 10^7 s"},
		{.name = "step-seconds",
		 .kind = CLI_OPT_TIME,
		 .dest = &in.step_seconds,
		 .positive = true,
		 .max = 1e7,
		 .limit = "must be more than 0 and at most 10^7 s"},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_ckpt_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (dtplan_ckpt_compute(&in, &k, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	if (json)
		return print_json(&in, &k);
	printf("dtplan ckpt: %d GPUs, %.0f GPU-hours MTBF per GPU, write %s\n\n", in.gpus,
	       in.mtbf_gpu_hours, dtplan_format_time(in.write_seconds, a, sizeof(a)));
	printf("%-18s %14s %14s\n", "quantity", "seconds", "readable");
	printf("%-18s %14.1f %14s\n", "job MTBF", k.job_mtbf_seconds,
	       dtplan_format_time(k.job_mtbf_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "Young interval", k.young_seconds,
	       dtplan_format_time(k.young_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "Daly interval", k.daly_seconds,
	       dtplan_format_time(k.daly_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "Availability opt.", k.availability_seconds,
	       dtplan_format_time(k.availability_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "chosen interval", k.interval_seconds,
	       dtplan_format_time(k.interval_seconds, a, sizeof(a)));
	if (in.step_seconds > 0.0)
		printf("%-18s %14.0f %14s\n", "interval (steps)", k.interval_steps, "steps");
	printf("%-18s %13.2f%% %14s\n", "expected waste", k.waste_fraction * 100.0, "");
	return CLI_EXIT_OK;
}
