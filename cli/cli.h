/*
 * cli.h: shared pieces of the dtplan command-line tool.
 */
#ifndef DTPLAN_CLI_H
#define DTPLAN_CLI_H

#include "dtplan.h"

#include <stdio.h>

/* Exit status (documented in dtplan(1)). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* the request cannot be met, or a runtime failure */
#define CLI_EXIT_USAGE 2 /* bad usage: unknown flag, bad value, missing value */

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	void (*usage)(FILE *out);          /* full usage, starting "Usage: dtplan NAME" */
};

/* Subcommands, one per cli/cmd_<verb>.c. */
int cmd_ledger(int argc, char **argv);
void cmd_ledger_usage(FILE *out);
int cmd_pipeline(int argc, char **argv);
void cmd_pipeline_usage(FILE *out);
int cmd_comm(int argc, char **argv);
void cmd_comm_usage(FILE *out);
int cmd_ckpt(int argc, char **argv);
void cmd_ckpt_usage(FILE *out);
int cmd_plan(int argc, char **argv);
void cmd_plan_usage(FILE *out);
int cmd_node(int argc, char **argv);
void cmd_node_usage(FILE *out);
int cmd_check_config(int argc, char **argv);
void cmd_check_config_usage(FILE *out);

/*
 * Reports a usage error for command cmd on stderr ("dtplan CMD: message"),
 * followed by a hint to run "dtplan help CMD".  Returns CLI_EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Reports a library error on stderr as "dtplan CMD: source:line: text".
 * Returns CLI_EXIT_USAGE for errors in user-supplied values (INVAL, PARSE,
 * RANGE, NOT_FOUND) when usage is true, else CLI_EXIT_FAIL.
 */
int cli_report(const char *cmd, const struct dtplan_error *err, bool usage);

/*
 * Parses the common flag values, reporting errors as usage errors naming
 * the flag.  Each returns 0 on success, CLI_EXIT_USAGE after printing.
 */
int cli_long(const char *cmd, const char *flag, const char *text, long min, long max, long *out);
int cli_int(const char *cmd, const char *flag, const char *text, int min, int max, int *out);
int cli_bytes(const char *cmd, const char *flag, const char *text, double *out);
int cli_rate(const char *cmd, const char *flag, const char *text, double *out);
int cli_time(const char *cmd, const char *flag, const char *text, double *out);
int cli_double(const char *cmd, const char *flag, const char *text, double min, double max,
	       double *out);

/*
 * Reports a getopt_long() failure: c is its return (':' or '?'), opt is
 * optopt, index is optind.  Returns CLI_EXIT_USAGE (cli/util.c).
 */
int cli_bad_option(const char *cmd, int c, int opt, char **argv, int index);

/* Fails with CLI_EXIT_USAGE when arguments remain after the options, else 0. */
int cli_no_operands(const char *cmd, int argc, char **argv, int index);

/* Writes s as a JSON string literal (quoted and escaped). */
void cli_json_string(FILE *out, const char *s);

/* Prints the JSON text followed by a newline and frees it. */
void cli_print_json(char *text);

/* Installs the stderr log sink (verbosity from DTPLAN_DEBUG). */
void cli_log_init(void);

#endif /* DTPLAN_CLI_H */
