/*
 * cmd_ckpt.c: dtplan ckpt: checkpoint interval from the job's MTBF.
 */
#include "config.h"

#include "cli.h"

#include <getopt.h>
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
		"  --json               print JSON instead of a table\n",
		DTPLAN_DEFAULT_MTBF_GPU_HOURS);
}

int cmd_ckpt(int argc, char **argv)
{
	static const struct option opts[] = {
		{"gpus", required_argument, NULL, 'g'},
		{"mtbf-gpu-hours", required_argument, NULL, 'm'},
		{"write-seconds", required_argument, NULL, 'w'},
		{"restart-seconds", required_argument, NULL, 'r'},
		{"step-seconds", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct dtplan_ckpt_in in = {0};
	struct dtplan_error err = {0};
	struct dtplan_ckpt k;
	int c, rc = 0;
	bool json = false, have_write = false;
	char a[32];

	opterr = 0;
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			rc = cli_int(CMD, "--gpus", optarg, 1, 1 << 24, &in.gpus);
			break;
		case 'm':
			rc = cli_double(CMD, "--mtbf-gpu-hours", optarg, 1e-3, 1e9,
					&in.mtbf_gpu_hours);
			break;
		case 'w':
			rc = cli_time(CMD, "--write-seconds", optarg, &in.write_seconds);
			if (rc == 0 && !(in.write_seconds > 0.0 && in.write_seconds <= 1e7))
				rc = cli_usage_error(CMD,
						     "--write-seconds: '%s' must be more than 0 and "
						     "at most 10^7 s",
						     optarg);
			have_write = true;
			break;
		case 'r':
			rc = cli_time(CMD, "--restart-seconds", optarg, &in.restart_seconds);
			if (rc == 0 && in.restart_seconds > 1e7)
				rc = cli_usage_error(CMD, "--restart-seconds: '%s' is over 10^7 s",
						     optarg);
			break;
		case 's':
			rc = cli_time(CMD, "--step-seconds", optarg, &in.step_seconds);
			if (rc == 0 && !(in.step_seconds > 0.0 && in.step_seconds <= 1e7))
				rc = cli_usage_error(CMD,
						     "--step-seconds: '%s' must be more than 0 and "
						     "at most 10^7 s",
						     optarg);
			break;
		case 'j':
			json = true;
			break;
		default:
			rc = cli_bad_option(CMD, c, optopt, argv, optind);
			break;
		}
	}
	if (rc == 0)
		rc = cli_no_operands(CMD, argc, argv, optind);
	if (rc != 0)
		return rc;
	if (in.gpus == 0)
		return cli_usage_error(CMD, "--gpus is required");
	if (in.mtbf_gpu_hours == 0.0)
		return cli_usage_error(CMD, "--mtbf-gpu-hours is required");
	if (!have_write)
		return cli_usage_error(CMD, "--write-seconds is required");
	if (dtplan_ckpt_compute(&in, &k, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	if (json) {
		printf("{\"gpus\": %d, \"mtbf_gpu_hours\": %.17g, \"write_seconds\": %.17g, "
		       "\"restart_seconds\": %.17g, \"job_mtbf_seconds\": %.17g, "
		       "\"young_seconds\": %.17g, \"daly_seconds\": %.17g, "
		       "\"interval_seconds\": %.17g, \"waste_fraction\": %.17g",
		       in.gpus, in.mtbf_gpu_hours, in.write_seconds, in.restart_seconds,
		       k.job_mtbf_seconds, k.young_seconds, k.daly_seconds, k.interval_seconds,
		       k.waste_fraction);
		if (in.step_seconds > 0.0)
			printf(", \"step_seconds\": %.17g, \"interval_steps\": %.17g", in.step_seconds,
			       k.interval_steps);
		printf("}\n");
		return CLI_EXIT_OK;
	}
	printf("dtplan ckpt: %d GPUs, %.0f GPU-hours MTBF per GPU, write %s\n\n", in.gpus,
	       in.mtbf_gpu_hours, dtplan_format_time(in.write_seconds, a, sizeof(a)));
	printf("%-18s %14s %14s\n", "quantity", "seconds", "readable");
	printf("%-18s %14.1f %14s\n", "job MTBF", k.job_mtbf_seconds,
	       dtplan_format_time(k.job_mtbf_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "Young interval", k.young_seconds,
	       dtplan_format_time(k.young_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "Daly interval", k.daly_seconds,
	       dtplan_format_time(k.daly_seconds, a, sizeof(a)));
	printf("%-18s %14.1f %14s\n", "chosen interval", k.interval_seconds,
	       dtplan_format_time(k.interval_seconds, a, sizeof(a)));
	if (in.step_seconds > 0.0)
		printf("%-18s %14.0f %14s\n", "interval (steps)", k.interval_steps, "steps");
	printf("%-18s %13.2f%% %14s\n", "expected waste", k.waste_fraction * 100.0, "");
	return CLI_EXIT_OK;
}
