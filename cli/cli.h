/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h: shared pieces of the dtplan command-line tool.
 */
#ifndef DTPLAN_CLI_H
#define DTPLAN_CLI_H

#include "dtplan.h"
#include "dtprobes.h"

#include <jansson.h>
#include <stdio.h>

/* Exit status (documented in dtplan(1)). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* the request cannot be met, or a runtime failure */
#define CLI_EXIT_USAGE 2 /* bad usage: unknown flag, bad value, missing value */

/* The schemas of the JSON the CLI writes itself (doc/dtplan.cli.schema.json;
 * a plan's, a node's and a fabric's are the library's). */
#define CLI_VERSION_SCHEMA "dtplan.version/1"
#define CLI_HELP_SCHEMA "dtplan.help/1"
#define CLI_CHECK_CONFIG_SCHEMA "dtplan.check-config/1"
#define CLI_OBSERVED_SCHEMA "dtplan.observed/1"
#define CLI_REPORTED_SCHEMA "dtplan.reported/1"
#define CLI_LEDGER_SCHEMA "dtplan.ledger/1"
#define CLI_PIPELINE_SCHEMA "dtplan.pipeline/1"
#define CLI_COMM_SCHEMA "dtplan.comm/1"
#define CLI_CKPT_SCHEMA "dtplan.ckpt/1"
#define CLI_CALIBRATION_SCHEMA "dtplan.calibration/1"
#define CLI_SEGMENT_SCHEMA "dtplan.segment/1"

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	void (*usage)(FILE *out);          /* full usage, starting "Usage: dtplan NAME" */
	const char *sub;                   /* the subcommand before the flags ("export"), or NULL */
	bool hidden; /* left out of the list of commands (dtplan completion) */
};

/*
 * dtplan completion bash|zsh (cli/completion.c): the completion script,
 * written from commands (ends with a NULL name) and each one's flag table
 * (cli_list_options()).  */
int cli_completion(const struct cli_command *commands, int argc, char **argv);
void cli_completion_usage(FILE *out);
/* The flags of c as cli_list_options() writes them (caller frees), NULL
 * when out of memory. */
char *cli_command_options(const struct cli_command *c);

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
int cmd_probe(int argc, char **argv);
void cmd_probe_usage(FILE *out);
int cmd_check_config(int argc, char **argv);
void cmd_check_config_usage(FILE *out);
int cmd_show(int argc, char **argv);
void cmd_show_usage(FILE *out);
int cmd_report(int argc, char **argv);
void cmd_report_usage(FILE *out);
int cmd_fabric(int argc, char **argv);
void cmd_fabric_usage(FILE *out);
int cmd_serve(int argc, char **argv);
void cmd_serve_usage(FILE *out);
int cmd_history(int argc, char **argv);
void cmd_history_usage(FILE *out);
int cmd_calibrate(int argc, char **argv);
void cmd_calibrate_usage(FILE *out);
int cmd_observe(int argc, char **argv);
void cmd_observe_usage(FILE *out);
int cmd_mtbf(int argc, char **argv);
void cmd_mtbf_usage(FILE *out);
int cmd_segment(int argc, char **argv);
void cmd_segment_usage(FILE *out);

/* ------------------------------------------------------------------------
 * The record database (cli/records.c)
 * ---------------------------------------------------------------------- */

/* The database path: flag (--records) when given, else c's RecordDB=, else
 * the per-user default.  CLI_EXIT_OK, or an exit status after a message. */
int cli_records_path(const char *cmd, const char *flag, const struct dtplan_config *c, char *buf,
		     size_t size);
/* The cluster records are read for: flag, else $SLURM_CLUSTER_NAME, else ""
 * (every cluster).  Borrowed. */
const char *cli_records_cluster(const char *flag);
/* The records at path of cluster, read-only; a missing database is no
 * records when missing_ok.  Caller frees *recs with free(). */
int cli_records_read(const char *cmd, const char *path, const char *cluster,
		     struct dtplan_record **recs, size_t *n, bool missing_ok);

/* One record as dtplan history --json and dtplan observe --json write it:
 * a new reference, NULL when out of memory. */
json_t *cli_record_json(const struct dtplan_record *r);

/* A --site FILE option (CLI_OPT_CALL, .early, .dest a struct dtplan_config):
 * reads dtplan.conf into dest, so that the other flags override it. */
struct cli_opt;
int cli_opt_site(const char *cmd, const struct cli_opt *o, const char *value);

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

/* ------------------------------------------------------------------------
 * "Did you mean" (cli/suggest.c)
 * ---------------------------------------------------------------------- */

/* The Damerau-Levenshtein distance of a and b (optimal string alignment: an
 * insertion, deletion, substitution or swap of neighbours costs 1); (size_t)-1
 * when either is longer than 64 bytes. */
size_t cli_edit_distance(const char *a, const char *b);
/*
 * The word of words[0..n) nearest to word: within 1 edit for up to 4 letters,
 * 2 for up to 7, else 3 (ties: the first), or else the only word that starts
 * with it.  NULL when none is near.  Borrowed from words.
 */
const char *cli_suggest(const char *word, const char *const *words, size_t n);

/* ------------------------------------------------------------------------
 * Options (cli/options.c): each command describes its flags in a table of
 * struct cli_opt and hands it to cli_parse(), which owns getopt, optind, bad
 * options, leftover arguments, required and repeated flags, and --help.
 * ---------------------------------------------------------------------- */

/* What a flag's value is, and so how it is parsed and where it goes. */
enum cli_opt_kind {
	CLI_OPT_FLAG,      /* no value: bool *dest becomes true */
	CLI_OPT_STRING,    /* const char **dest points into argv */
	CLI_OPT_INT,       /* int *dest, a whole number in [min, max] */
	CLI_OPT_DOUBLE,    /* double *dest, a plain number in [min, max] */
	CLI_OPT_BYTES,     /* double *dest: "14GB", "1GiB" (then the limit below) */
	CLI_OPT_RATE,      /* double *dest: "900GB/s", "400Gb/s" */
	CLI_OPT_TIME,      /* double *dest: "30s", "2min", "0" */
	CLI_OPT_RECOMPUTE, /* enum dtplan_recompute *dest: none|selective|full */
	CLI_OPT_COLL,      /* enum dtplan_coll *dest: allreduce|allgather|... */
	CLI_OPT_ALGO,      /* enum dtplan_algo *dest: ring|tree */
	CLI_OPT_GPU,       /* struct dtplan_gpu *dest: a copy of a catalog entry */
	CLI_OPT_CALL,      /* call(cmd, opt, value) does the work; dest is its own */
};

/* One row of a command's flag table; a row with name NULL ends the table. */
struct cli_opt {
	const char *name; /* long name without "--" ("gpus-per-node") */
	enum cli_opt_kind kind;
	void *dest;        /* borrowed: where the value goes (see the kind) */
	double min, max;   /* INT, DOUBLE: the range.  BYTES, RATE, TIME: max,
				* when above 0, is the largest value taken */
	bool positive;     /* BYTES, RATE, TIME: the value must be above 0 */
	const char *limit; /* BYTES, RATE, TIME: the end of "--NAME: 'VALUE' ..."
				* when the value is not positive or above max */
	bool required;     /* "--NAME is required" when absent */
	bool once;         /* "--NAME given twice" when repeated (else the last wins) */
	bool early;        /* applied before every other flag, once, with the
				* last value given: a file that the others override */
	bool *seen;        /* optional: set to true when the flag is given */
	/* CLI_OPT_CALL: returns 0, or an exit status after printing the error */
	int (*call)(const char *cmd, const struct cli_opt *o, const char *value);
};

/* What cli_parse() needs to know about a command. */
struct cli_spec {
	const char *cmd;            /* "ledger": names the command in messages */
	void (*usage)(FILE *out);   /* printed to stdout for --help or -h */
	const struct cli_opt *opts; /* borrowed; ends with CLI_OPT_END */
	const char **args;          /* receives up to max_args operands (borrowed
				      * from argv); the slots past the last given
				      * are left alone */
	int max_args;               /* operands allowed after the options */
};

/*
 * Parses argv (argv[0] is the command name) against spec.  The first pass
 * looks only for --help/-h (usage to stdout, exit 0) and the early flags;
 * the second applies the others in order and stops at the first bad one.
 * Then come leftover arguments, and required flags in table order.  Long
 * flags may be abbreviated (getopt_long), and argv is permuted.
 *
 * Returns true when the command should go on; false when it should exit
 * with *status: CLI_EXIT_OK after --help, CLI_EXIT_USAGE after a usage error
 * (printed on stderr as "dtplan CMD: message" with a hint), or what an early
 * or CLI_OPT_CALL flag returned.
 */
bool cli_parse(const struct cli_spec *spec, int argc, char **argv, int *status);

/*
 * From now on cli_parse() parses nothing: it writes the command's flags to
 * out, one a line ("--NAME", "--NAME VALUE" when it takes a value, "ARG"
 * when operands follow), and returns false with CLI_EXIT_OK (the completion
 * scripts, dtplan help --json).  NULL parses again.
 */
void cli_list_options(FILE *out);

/* Ends a table of struct cli_opt. */
#define CLI_OPT_END                                                                                \
	{                                                                                          \
		.name = NULL                                                                       \
	}

/*
 * Flags that several commands share, declared once.  Where the commands
 * differ (a range, whether the flag is required), the macro takes it.
 */
#define CLI_OPT_JSON(p)                                                                            \
	{                                                                                          \
		.name = "json", .kind = CLI_OPT_FLAG, .dest = (p)                                  \
	}
/* --site FILE, read before the other flags (cli_opt_site()) into the
 * struct dtplan_config at p */
#define CLI_OPT_SITE(p)                                                                            \
	{                                                                                          \
		.name = "site", .kind = CLI_OPT_CALL, .dest = (p), .early = true,                  \
		.call = cli_opt_site                                                               \
	}
/* --records FILE and --cluster NAME of the commands that read the records
 * (cli_records_path(), cli_records_cluster()): two entries */
#define CLI_OPT_RECORDS(records_p, cluster_p)                                                      \
	{.name = "records", .kind = CLI_OPT_STRING, .dest = (records_p)},                          \
	{                                                                                          \
		.name = "cluster", .kind = CLI_OPT_STRING, .dest = (cluster_p)                     \
	}
#define CLI_OPT_MODEL(p)                                                                           \
	{                                                                                          \
		.name = "model", .kind = CLI_OPT_STRING, .dest = (p), .required = true             \
	}
#define CLI_OPT_GPUS(p, hi, req)                                                                   \
	{                                                                                          \
		.name = "gpus", .kind = CLI_OPT_INT, .dest = (p), .min = 1, .max = (hi),           \
		.required = (req)                                                                  \
	}
#define CLI_OPT_GPU(p)                                                                             \
	{                                                                                          \
		.name = "gpu", .kind = CLI_OPT_GPU, .dest = (p)                                    \
	}
#define CLI_OPT_GPUS_PER_NODE(p, seen_p)                                                           \
	{                                                                                          \
		.name = "gpus-per-node", .kind = CLI_OPT_INT, .dest = (p), .min = 1, .max = 1024,  \
		.seen = (seen_p)                                                                   \
	}
#define CLI_OPT_TP(p, hi)                                                                          \
	{                                                                                          \
		.name = "tp", .kind = CLI_OPT_INT, .dest = (p), .min = 1, .max = (hi)              \
	}
#define CLI_OPT_PP(p)                                                                              \
	{                                                                                          \
		.name = "pp", .kind = CLI_OPT_INT, .dest = (p), .min = 1, .max = 1 << 16           \
	}
#define CLI_OPT_ZERO(p)                                                                            \
	{                                                                                          \
		.name = "zero", .kind = CLI_OPT_INT, .dest = (p), .min = 0, .max = 3               \
	}
#define CLI_OPT_SEQ(p, lo)                                                                         \
	{                                                                                          \
		.name = "seq", .kind = CLI_OPT_INT, .dest = (p), .min = (lo), .max = 1 << 24       \
	}
#define CLI_OPT_MICRO_BATCH(p)                                                                     \
	{                                                                                          \
		.name = "micro-batch", .kind = CLI_OPT_INT, .dest = (p), .min = 1, .max = 1 << 20  \
	}
#define CLI_OPT_RECOMPUTE(p, seen_p)                                                               \
	{                                                                                          \
		.name = "recompute", .kind = CLI_OPT_RECOMPUTE, .dest = (p), .seen = (seen_p)      \
	}
#define CLI_OPT_TOPOLOGY(p, once_)                                                                 \
	{                                                                                          \
		.name = "topology", .kind = CLI_OPT_STRING, .dest = (p), .once = (once_)           \
	}

/* Writes p's SVG picture to path (--svg); CLI_EXIT_FAIL after a message
 * naming cmd and path when it cannot. */
int cli_write_svg(const char *cmd, const struct dtplan_plan *p, const char *path);

/* Prints the JSON text followed by a newline and frees it. */
void cli_print_json(char *text);

/*
 * A JSON number for v, for a command's --json: null when v is infinite or
 * NaN (JSON has no such numbers), an integer when v is whole and below 1e17
 * in magnitude (as "%.17g" would write it), else a real.  Returns a new
 * reference (for json_pack()'s "o"), NULL when out of memory.
 */
json_t *cli_json_number(double v);

/*
 * root with a "schema" member first, naming its document in
 * doc/dtplan.cli.schema.json.  Takes root (NULL allowed: a failed
 * json_pack()); returns a new object, NULL when out of memory.
 */
json_t *cli_json_schema(json_t *root, const char *schema);

/*
 * Prints root ("{...}" with ", " and ": ", reals with 17 digits) and a
 * newline, and releases root (NULL allowed: a failed json_pack()).  Returns
 * CLI_EXIT_OK, or CLI_EXIT_FAIL after a message naming cmd.
 */
int cli_json_print(const char *cmd, json_t *root);

/* Installs the stderr log sink (verbosity from DTPLAN_DEBUG). */
void cli_log_init(void);

/* ------------------------------------------------------------------------
 * The allocation for dtplan plan (cli/cluster.c)
 * ---------------------------------------------------------------------- */

/* One --node-xml / --node-json HOSTLIST=FILE. */
struct cli_node_spec {
	char *text; /* owned: "HOSTLIST\0FILE" */
	const char *hostlist, *file, *flag;
	bool json;
};

struct dtplan_fabric_fetch; /* dtprobes.h */

struct cli_cluster {
	struct dtplan_config config; /* the site's (--site) */
	bool have_site;
	/* --fabric-url: what the service (or its cache) gave; fabric->desc NULL
	 * when neither did.  Owned (cli_cluster_fabric()). */
	struct dtplan_fabric_fetch *fabric;
	struct cli_node_spec *specs;
	size_t n_specs;
	struct dtplan_measure_file measured; /* --measurements; m NULL when none */
	char (*hosts)[64];
	size_t n_hosts;
	struct dtplan_inventory_file *files; /* owned: specs as the assembler takes them */
	struct dtplan_inventory_opts io;     /* the allocation's hosts and files */
	/* the allocation (probes/allocation.c, strict): filled by
	 * dtplan_allocation_plan() in cmd_plan.c */
	struct dtplan_allocation alloc;
};

void cli_cluster_init(struct cli_cluster *c);
void cli_cluster_fini(struct cli_cluster *c);
/* Reads the site file (--site). */
int cli_cluster_site(const char *cmd, struct cli_cluster *c, const char *path);
/* Records a --node-xml (json false) or --node-json argument. */
int cli_cluster_add_specs(const char *cmd, struct cli_cluster *c, const char *flag, const char *arg,
			  bool json);
/* Reads a measurement file (--measurements): the prolog's or dtplan probe's. */
int cli_cluster_measurements(const char *cmd, struct cli_cluster *c, const char *path);
/* Expands the hosts (nodes, else the inventories' hostlists, else the
 * measurement's) into c->io, with the inventory files, for
 * dtplan_allocation_plan().  Returns 0, or an exit status after a message. */
int cli_cluster_load(const char *cmd, struct cli_cluster *c, const char *nodes);
/*
 * The fabric of url through the site's FabricCache= and bounds
 * (dtplan_fabric_fetch()) into c->fabric, for dtplan_allocation_plan():
 * when the service or the cache gives one, the plan's settings become the
 * site's with the fabric applied and its tree replaces --topology.  A fault
 * of the service is not an error: the plan gets a "fabric-service"
 * warning.  Returns 0, or an exit status after a message.
 */
int cli_cluster_fabric(const char *cmd, struct cli_cluster *c, const char *url);
/* The effective settings: the site's, with the fabric's over them once
 * dtplan_allocation_plan() applied one. */
const struct dtplan_config *cli_cluster_config(const struct cli_cluster *c);

/* ------------------------------------------------------------------------
 * Reports for a collector (cli/report.c)
 * ---------------------------------------------------------------------- */

/*
 * Posts plan_json (dtplan_plan_to_json() text) to url as a dtplan.report/1
 * report from sender ("dtplan plan", "dtplan report"): the caller's user,
 * uid and host name, $SLURM_CLUSTER_NAME, job_id (0: none) and the time now;
 * bounded by timeout_s and the site's HTTP settings of c, with the bearer
 * token in token (NULL: none) and a MUNGE credential for the body from
 * munged at c->munge_socket (dtplan_http_post_json(); none when munged
 * cannot make one, and the whole post, the credential included, stays
 * within timeout_s).  Returns DTPLAN_OK or fills err.
 */
enum dtplan_err cli_report_post(const struct dtplan_config *c, const char *url, const char *sender,
				const char *plan_json, uint32_t job_id, const char *token,
				double timeout_s, struct dtplan_error *err);

#endif /* DTPLAN_CLI_H */
