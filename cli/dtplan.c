/*
 * dtplan.c: the dtplan command-line tool: main, global options and the
 * subcommand table.  Each subcommand lives in cli/cmd_<verb>.c and uses only
 * the public library API.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int cmd_version(int argc, char **argv);
static void cmd_version_usage(FILE *out);
static int cmd_help(int argc, char **argv);
static void cmd_help_usage(FILE *out);

/* One row per subcommand; adding one means a row here and a cmd_<verb>.c. */
static const struct cli_command commands[] = {
	{"plan", "plan TP/PP/DP, ZeRO, micro-batch and checkpoints", cmd_plan, cmd_plan_usage},
	{"ledger", "memory per GPU for one layout", cmd_ledger, cmd_ledger_usage},
	{"pipeline", "simulate a 1F1B pipeline and its bubble", cmd_pipeline, cmd_pipeline_usage},
	{"comm", "time of one collective", cmd_comm, cmd_comm_usage},
	{"ckpt", "checkpoint interval from the MTBF", cmd_ckpt, cmd_ckpt_usage},
	{"version", "print the version", cmd_version, cmd_version_usage},
	{"help", "show help for a command", cmd_help, cmd_help_usage},
	{"node", "show a node's GPUs, NVLink domains and NICs", cmd_node, cmd_node_usage},
	{"check-config", "validate the site file, topology.conf and plugstack arguments",
	 cmd_check_config, cmd_check_config_usage},
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
	if (argc > 1)
		return cli_usage_error("version", "unexpected argument '%s'", argv[1]);
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
	const struct cli_command *c;

	if (argc < 2) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_error("help", "unexpected argument '%s'", argv[2]);
	c = find_command(argv[1]);
	if (c == NULL)
		return cli_usage_error("help", "unknown command '%s'", argv[1]);
	c->usage(stdout);
	return CLI_EXIT_OK;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dtplan %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'dtplan help %s' for more information.\n", cmd);
	return CLI_EXIT_USAGE;
}

int cli_report(const char *cmd, const struct dtplan_error *err, bool usage_error)
{
	char buf[1024];

	fprintf(stderr, "dtplan %s: %s\n", cmd, dtplan_error_format(err, buf, sizeof(buf)));
	if (!usage_error)
		return CLI_EXIT_FAIL;
	switch (err->code) {
	case DTPLAN_ERR_INVAL:
	case DTPLAN_ERR_PARSE:
	case DTPLAN_ERR_RANGE:
	case DTPLAN_ERR_NOT_FOUND:
		return CLI_EXIT_USAGE;
	default:
		return CLI_EXIT_FAIL;
	}
}

int cli_long(const char *cmd, const char *flag, const char *text, long min, long max, long *out)
{
	struct dtplan_error err = {0};

	if (dtplan_parse_long(text, flag, min, max, out, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	return 0;
}

int cli_int(const char *cmd, const char *flag, const char *text, int min, int max, int *out)
{
	long v;
	int rc = cli_long(cmd, flag, text, min, max, &v);

	if (rc == 0)
		*out = (int)v;
	return rc;
}

int cli_bytes(const char *cmd, const char *flag, const char *text, double *out)
{
	struct dtplan_error err = {0};

	if (dtplan_parse_bytes(text, flag, out, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	return 0;
}

int cli_rate(const char *cmd, const char *flag, const char *text, double *out)
{
	struct dtplan_error err = {0};

	if (dtplan_parse_rate(text, flag, out, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	return 0;
}

int cli_time(const char *cmd, const char *flag, const char *text, double *out)
{
	struct dtplan_error err = {0};

	if (dtplan_parse_time(text, flag, out, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	return 0;
}

int cli_double(const char *cmd, const char *flag, const char *text, double min, double max,
	       double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (text[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v))
		return cli_usage_error(cmd, "%s: '%s' is not a number", flag, text);
	if (v < min || v > max)
		return cli_usage_error(cmd, "%s: %s is out of range [%g, %g]", flag, text, min, max);
	*out = v;
	return 0;
}

void cli_print_json(char *text)
{
	fputs(text, stdout);
	fputc('\n', stdout);
	free(text);
}

static void log_to_stderr(enum dtplan_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	int max = *(const int *)arg;

	if ((int)level > max)
		return;
	fprintf(stderr, "dtplan: %s: %s\n", names[level], msg);
}

void cli_log_init(void)
{
	static int max_level = DTPLAN_LOG_WARNING;
	const char *debug = getenv("DTPLAN_DEBUG");

	if (debug != NULL && debug[0] != '\0' && strcmp(debug, "0") != 0)
		max_level = DTPLAN_LOG_DEBUG;
	dtplan_log_set_sink(log_to_stderr, &max_level);
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
	/* "dtplan CMD --help" prints the command's usage to stdout. */
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			c->usage(stdout);
			return CLI_EXIT_OK;
		}
	}
	return c->run(argc - 1, argv + 1);
}
