/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan.c: the dtplan command-line tool: main, global options and the
 * subcommand table.  Each subcommand lives in cli/cmd_<verb>.c and uses only
 * the public library API.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

static int cmd_completion(int argc, char **argv);
static int cmd_version(int argc, char **argv);
static void cmd_version_usage(FILE *out);
static int cmd_help(int argc, char **argv);
static void cmd_help_usage(FILE *out);

/* One row per subcommand; adding one means a row here and a cmd_<verb>.c. */
static const struct cli_command commands[] = {
	{"plan", "plan TP/PP/DP, ZeRO, micro-batch and checkpoints", cmd_plan, cmd_plan_usage, NULL,
	 false},
	{"show", "show a saved plan (a job's dtplan-JOBID.json)", cmd_show, cmd_show_usage, NULL,
	 false},
	{"ledger", "memory per GPU for one layout", cmd_ledger, cmd_ledger_usage, NULL, false},
	{"pipeline", "simulate a 1F1B pipeline and its bubble", cmd_pipeline, cmd_pipeline_usage,
	 NULL, false},
	{"comm", "time of one collective", cmd_comm, cmd_comm_usage, NULL, false},
	{"ckpt", "checkpoint interval from the MTBF", cmd_ckpt, cmd_ckpt_usage, NULL, false},
	{"version", "print the version", cmd_version, cmd_version_usage, NULL, false},
	{"help", "show help for a command", cmd_help, cmd_help_usage, NULL, false},
	{"node", "show a node's GPUs, NVLink domains and NICs", cmd_node, cmd_node_usage, NULL,
	 false},
	{"probe", "measure a step's nodes and links (srun --ntasks-per-node=1)", cmd_probe,
	 cmd_probe_usage, NULL, false},
	{"check-config", "validate the site file, topology.conf and plugstack arguments",
	 cmd_check_config, cmd_check_config_usage, NULL, false},
	{"report", "post a saved plan to a collector", cmd_report, cmd_report_usage, NULL, false},
	{"fabric", "export topology.conf and the site file as fabric JSON", cmd_fabric,
	 cmd_fabric_usage, "export", false},
	{"serve", "run the collector: reports in, page and /metrics out", cmd_serve,
	 cmd_serve_usage, NULL, false},
	{"history", "planned against measured step times of earlier jobs", cmd_history,
	 cmd_history_usage, NULL, false},
	{"calibrate", "show the corrections learned from earlier jobs", cmd_calibrate,
	 cmd_calibrate_usage, NULL, false},
	{"observe", "keep a finished job's measured step time as its record", cmd_observe,
	 cmd_observe_usage, NULL, false},
	{"mtbf", "the per-GPU MTBF from Slurm's accounting (node failures)", cmd_mtbf,
	 cmd_mtbf_usage, NULL, false},
	{"segment", "Slurm's --segment that keeps the plan's groups inside blocks", cmd_segment,
	 cmd_segment_usage, NULL, false},
	{"completion", "print the bash or zsh completion script", cmd_completion,
	 cli_completion_usage, NULL, true},
	{NULL, NULL, NULL, NULL, NULL, false} /* End of commands */
};

static const struct cli_command *find_command(const char *name)
{
	for (const struct cli_command *c = commands; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* "unknown command 'NAME'", and the nearest command when one is near. */
static void unknown_command(const char *who, const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])], *near;
	size_t n = 0;

	for (const struct cli_command *c = commands; c->name != NULL; c++)
		if (!c->hidden)
			names[n++] = c->name;
	near = cli_suggest(name, names, n);
	fprintf(stderr, "%s: unknown command '%s'", who, name);
	if (near != NULL)
		fprintf(stderr, "; did you mean '%s'?", near);
	fputc('\n', stderr);
}

static int cmd_completion(int argc, char **argv)
{
	return cli_completion(commands, argc, argv);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: dtplan COMMAND [OPTIONS]\n"
		     "       dtplan help [COMMAND]\n\n"
		     "Plan distributed training: memory, pipeline, collectives, checkpoints and\n"
		     "placement on Slurm clusters.\n\nCommands:\n");
	for (const struct cli_command *c = commands; c->name != NULL; c++)
		if (!c->hidden)
			fprintf(out, "  %-13s %s\n", c->name, c->summary);
	fprintf(out, "\nRun 'dtplan help COMMAND' for a command's options.\n");
}

static void cmd_version_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan version [--json]\n\nPrints the version of dtplan.\n\n"
		"  --json    print it as JSON (schema %s)\n",
		CLI_VERSION_SCHEMA);
}

static int cmd_version(int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {CLI_OPT_JSON(&json), CLI_OPT_END};
	const struct cli_spec cs = {.cmd = "version", .usage = cmd_version_usage, .opts = opts};
	int rc;

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (json)
		return cli_json_print("version",
				      json_pack("{s:s, s:s}", "schema", CLI_VERSION_SCHEMA,
						"version", dtplan_version()));
	printf("dtplan %s\n", dtplan_version());
	return CLI_EXIT_OK;
}

static void cmd_help_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan help [COMMAND] [--json]\n\nShows the list of commands, or one "
		"command's options.\n\n"
		"  --json    print them as JSON (schema %s): the commands and their\n"
		"            summaries, or the command's usage and flags\n",
		CLI_HELP_SCHEMA);
}

/* dtplan help [COMMAND] --json */
static int help_json(const struct cli_command *one)
{
	json_t *root = json_pack("{s:s}", "schema", CLI_HELP_SCHEMA), *list = json_array();
	char *usage = NULL, *flags = NULL;
	size_t size = 0;
	FILE *f;

	if (one == NULL) {
		for (const struct cli_command *c = commands; c->name != NULL; c++)
			if (!c->hidden)
				json_array_append_new(list, json_pack("{s:s, s:s}", "name", c->name,
								      "summary", c->summary));
		json_object_set_new(root, "commands", list);
		return cli_json_print("help", root);
	}
	f = open_memstream(&usage, &size);
	if (f != NULL) {
		one->usage(f);
		fclose(f);
	}
	flags = cli_command_options(one);
	for (char *p = flags, *save = NULL, *line; (line = strtok_r(p, "\n", &save)) != NULL;
	     p = NULL)
		if (strncmp(line, "--", 2) == 0)
			json_array_append_new(list, json_pack("{s:s#, s:b}", "name", line + 2,
							      (int)strcspn(line + 2, " "), "value",
							      strchr(line, ' ') != NULL));
	json_object_set_new(root, "command", json_string(one->name));
	json_object_set_new(root, "summary", json_string(one->summary));
	json_object_set_new(root, "usage", usage != NULL ? json_string(usage) : NULL);
	json_object_set_new(root, "flags", list);
	free(usage);
	free(flags);
	return cli_json_print("help", root);
}

static int cmd_help(int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {CLI_OPT_JSON(&json), CLI_OPT_END};
	const char *name = NULL;
	const struct cli_spec cs = {
		.cmd = "help", .usage = cmd_help_usage, .opts = opts, .args = &name, .max_args = 1};
	const struct cli_command *c = NULL;
	int rc;

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (name != NULL && (c = find_command(name)) == NULL) {
		unknown_command("dtplan help", name);
		fprintf(stderr, "Try 'dtplan help' for the list of commands.\n");
		return CLI_EXIT_USAGE;
	}
	if (json)
		return help_json(c);
	if (c == NULL)
		usage(stdout);
	else
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
		return cmd_version(argc - 1, argv + 1);
	c = find_command(argv[1]);
	if (c == NULL) {
		unknown_command("dtplan", argv[1]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	/* each command parses its own flags, --help included (cli_parse()) */
	return c->run(argc - 1, argv + 1);
}
