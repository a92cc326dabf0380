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

/* ------------------------------------------------------------------------
 * The allocation for dtplan plan (cli/cluster.c)
 * ---------------------------------------------------------------------- */

/* One --node-xml / --node-json HOSTLIST=FILE. */
struct cli_node_spec {
	char *text;          /* owned: "HOSTLIST\0FILE" */
	const char *hostlist, *file, *flag;
	bool json;
	char (*names)[64];   /* expanded hostlist while loading */
	size_t n_names;
};

struct cli_host_ix {
	const char *name;
	size_t host;
};

struct cli_cluster {
	struct dtplan_config config;
	bool have_site;
	struct dtplan_topology *topology;
	struct cli_node_spec *specs;
	size_t n_specs;
	struct dtplan_node *inv;   /* one inventory per spec */
	char (*hosts)[64];
	size_t n_hosts;
	int *host_inv;             /* inventory per host, -1 generic */
	bool *assumed;             /* host took the first inventory for lack of its own */
	size_t n_assumed;
	struct dtplan_cluster cl;  /* borrows everything above */
};

void cli_cluster_init(struct cli_cluster *c);
void cli_cluster_fini(struct cli_cluster *c);
/* Reads the site file (--site). */
int cli_cluster_site(const char *cmd, struct cli_cluster *c, const char *path);
/* Records a --node-xml (json false) or --node-json argument. */
int cli_cluster_add_specs(const char *cmd, struct cli_cluster *c, const char *flag,
			  const char *arg, bool json);
/* Expands hosts, reads the topology and inventories, fills c->cl. */
int cli_cluster_load(const char *cmd, struct cli_cluster *c, const char *nodes,
		     const char *topology);
/* Adds the "assumed-nodes" warning for hosts that took the first inventory. */
int cli_cluster_note(struct cli_cluster *c, struct dtplan_plan *p);

#endif /* DTPLAN_CLI_H */
