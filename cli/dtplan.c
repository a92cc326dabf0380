/*
 * dtplan.c: the dtplan command-line tool: main, global options and the
 * subcommand table.  Each subcommand lives in cli/cmd_<verb>.c and uses only
 * the public library API.
 */
#include "config.h"

#include "cli.h"

#include <string.h>

static int cmd_version(int argc, char **argv);
static void cmd_version_usage(FILE *out);
static int cmd_help(int argc, char **argv);
static void cmd_help_usage(FILE *out);

/* One row per subcommand; adding one means a row here and a cmd_<verb>.c. */
static const struct cli_command commands[] = {
	{"plan", "plan TP/PP/DP, ZeRO, micro-batch and checkpoints", cmd_plan, cmd_plan_usage},
	{"show", "show a saved plan (a job's dtplan-JOBID.json)", cmd_show, cmd_show_usage},
	{"ledger", "memory per GPU for one layout", cmd_ledger, cmd_ledger_usage},
	{"pipeline", "simulate a 1F1B pipeline and its bubble", cmd_pipeline, cmd_pipeline_usage},
	{"comm", "time of one collective", cmd_comm, cmd_comm_usage},
	{"ckpt", "checkpoint interval from the MTBF", cmd_ckpt, cmd_ckpt_usage},
	{"version", "print the version", cmd_version, cmd_version_usage},
	{"help", "show help for a command", cmd_help, cmd_help_usage},
	{"node", "show a node's GPUs, NVLink domains and NICs", cmd_node, cmd_node_usage},
	{"probe", "measure a step's nodes and links (srun --ntasks-per-node=1)", cmd_probe,
	 cmd_probe_usage},
	{"check-config", "validate the site file, topology.conf and plugstack arguments",
	 cmd_check_config, cmd_check_config_usage},
	{"report", "post a saved plan to a collector", cmd_report, cmd_report_usage},
	{"fabric", "export topology.conf and the site file as fabric JSON", cmd_fabric,
	 cmd_fabric_usage},
	{"serve", "run the collector: reports in, page and /metrics out", cmd_serve,
	 cmd_serve_usage},
	{"history", "planned against measured step times of earlier jobs", cmd_history,
	 cmd_history_usage},
	{"calibrate", "show the corrections learned from earlier jobs", cmd_calibrate,
	 cmd_calibrate_usage},
	{"observe", "keep a finished job's measured step time as its record", cmd_observe,
	 cmd_observe_usage},
	{"mtbf", "the per-GPU MTBF from Slurm's accounting (node failures)", cmd_mtbf,
	 cmd_mtbf_usage},
	{NULL, NULL, NULL, NULL} /* End of commands */
};

static const struct cli_command *find_command(const char *name)
{
	for (const struct cli_command *c = commands; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: dtplan COMMAND [OPTIONS]\n"
		     "       dtplan help [COMMAND]\n\n"
		     "Plan distributed training: memory, pipeline, collectives, checkpoints and\n"
		     "placement on Slurm clusters.\n\nCommands:\n");
	for (const struct cli_command *c = commands; c->name != NULL; c++)
		fprintf(out, "  %-13s %s\n", c->name, c->summary);
	fprintf(out, "\nRun 'dtplan help COMMAND' for a command's options.\n");
}

static void cmd_version_usage(FILE *out)
{
	fprintf(out, "Usage: dtplan version\n\nPrints the version of dtplan.\n");
}

static int cmd_version(int argc, char **argv)
{
	const struct cli_opt opts[] = {CLI_OPT_END};
	const struct cli_spec cs = {.cmd = "version", .usage = cmd_version_usage, .opts = opts};
	int rc;

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	printf("dtplan %s\n", dtplan_version());
	return CLI_EXIT_OK;
}

static void cmd_help_usage(FILE *out)
{
	fprintf(out, "Usage: dtplan help [COMMAND]\n\nShows the list of commands, or one command's "
		     "options.\n");
}

static int cmd_help(int argc, char **argv)
{
	const struct cli_opt opts[] = {CLI_OPT_END};
	const char *name = NULL;
	const struct cli_spec cs = {
		.cmd = "help", .usage = cmd_help_usage, .opts = opts, .args = &name, .max_args = 1};
	const struct cli_command *c;
	int rc;

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (name == NULL) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	c = find_command(name);
	if (c == NULL)
		return cli_usage_error("help", "unknown command '%s'", name);
	c->usage(stdout);
	return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	cli_log_init();
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		return cmd_version(1, argv);
	c = find_command(argv[1]);
	if (c == NULL) {
		fprintf(stderr, "dtplan: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	/* each command parses its own flags, --help included (cli_parse()) */
	return c->run(argc - 1, argv + 1);
}
