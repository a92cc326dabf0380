/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c: the one option parser of the dtplan subcommands.  A command
 * describes its flags in a table (struct cli_opt, cli/cli.h); cli_parse()
 * turns the table into getopt_long()'s, parses the value of each flag by
 * its kind and checks what the table asks for.  The messages name the flag
 * and the value, and end with a hint to run "dtplan help CMD".
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long() returns OPT_BASE + i for row i; below it, 'h', ':' and '?'. */
#define OPT_BASE 256

/* dtplan_parse_bytes(), _rate() and _time() */
typedef enum dtplan_err (*unit_parser)(const char *text, const char *what, double *out,
				       struct dtplan_error *err);

/* Where cli_parse() lists a command's flags instead of parsing (NULL: parse). */
static FILE *listing;

void cli_list_options(FILE *out)
{
	listing = out;
}

/* The flag of opts[0..n) or --help nearest to the long option arg, or NULL. */
static const char *near_option(const struct cli_opt *opts, size_t n, const char *arg)
{
	const char *names[64], *hit;
	char word[80];
	size_t m = 0, len = strcspn(arg + 2, "=");

	if (len >= sizeof(word))
		return NULL;
	memcpy(word, arg + 2, len);
	word[len] = '\0';
	for (size_t i = 0; i < n && m + 1 < sizeof(names) / sizeof(names[0]); i++)
		names[m++] = opts[i].name;
	names[m++] = "help";
	hit = cli_suggest(word, names, m);
	/* a prefix of a flag is getopt_long()'s, ambiguous when it gets here */
	return hit != NULL && strncmp(hit, word, len) == 0 ? NULL : hit;
}

/* Reports a getopt_long() failure c (':' or '?'); optind and optopt tell which. */
static int bad_option(const struct cli_spec *spec, size_t n, int c, char **argv)
{
	const char *cmd = spec->cmd, *arg = optind > 0 ? argv[optind - 1] : "", *near;

	/* a long option names itself in argv; optopt is its value then */
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	if (optopt != 0 && strncmp(arg, "--", 2) != 0)
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	if (strncmp(arg, "--", 2) == 0 && (near = near_option(spec->opts, n, arg)) != NULL)
		return cli_usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", arg, near);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

/* cli_list_options(): one line per flag, "--NAME" and " VALUE" when it takes one. */
static void list_options(const struct cli_spec *spec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(listing, "--%s%s\n", spec->opts[i].name,
			spec->opts[i].kind == CLI_OPT_FLAG ? "" : " VALUE");
	if (spec->max_args > 0)
		fprintf(listing, "ARG\n");
}

static int parse_int(const char *cmd, const char *flag, const char *text, const struct cli_opt *o)
{
	struct dtplan_error err = {0};
	long v;

	if (dtplan_parse_long(text, flag, (long)o->min, (long)o->max, &v, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	*(int *)o->dest = (int)v;
	return 0;
}

static int parse_double(const char *cmd, const char *flag, const char *text,
			const struct cli_opt *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (text[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v))
		return cli_usage_error(cmd, "%s: '%s' is not a number", flag, text);
	if (v < o->min || v > o->max)
		return cli_usage_error(cmd, "%s: %s is out of range [%g, %g]", flag, text, o->min,
				       o->max);
	*(double *)o->dest = v;
	return 0;
}

/* A size, rate or time with its unit, then the row's own limits. */
static int parse_unit(const char *cmd, const char *flag, const char *text, const struct cli_opt *o,
		      unit_parser parse)
{
	struct dtplan_error err = {0};
	double v;

	if (parse(text, flag, &v, &err) != DTPLAN_OK)
		return cli_usage_error(cmd, "%s", err.text);
	if ((o->positive && !(v > 0.0)) || (o->max > 0.0 && v > o->max))
		return cli_usage_error(cmd, "%s: '%s' %s", flag, text,
				       o->limit != NULL ? o->limit : "is out of range");
	*(double *)o->dest = v;
	return 0;
}

/* Parses text as flag o's value and stores it.  Returns 0 or an exit status. */
static int apply(const char *cmd, const struct cli_opt *o, const char *text)
{
	struct dtplan_error err = {0};
	const struct dtplan_gpu *gpu;
	enum dtplan_err rv = DTPLAN_OK;
	char flag[64];

	snprintf(flag, sizeof(flag), "--%s", o->name);
	switch (o->kind) {
	case CLI_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case CLI_OPT_STRING:
		*(const char **)o->dest = text;
		return 0;
	case CLI_OPT_INT:
		return parse_int(cmd, flag, text, o);
	case CLI_OPT_DOUBLE:
		return parse_double(cmd, flag, text, o);
	case CLI_OPT_BYTES:
		return parse_unit(cmd, flag, text, o, dtplan_parse_bytes);
	case CLI_OPT_RATE:
		return parse_unit(cmd, flag, text, o, dtplan_parse_rate);
	case CLI_OPT_TIME:
		return parse_unit(cmd, flag, text, o, dtplan_parse_time);
	case CLI_OPT_RECOMPUTE:
		rv = dtplan_recompute_parse(text, o->dest, &err);
		break;
	case CLI_OPT_COLL:
		rv = dtplan_coll_parse(text, o->dest, &err);
		break;
	case CLI_OPT_ALGO:
		rv = dtplan_algo_parse(text, o->dest, &err);
		break;
	case CLI_OPT_GPU:
		gpu = dtplan_gpu_find(text, &err);
		if (gpu == NULL)
			rv = DTPLAN_ERR_NOT_FOUND;
		else
			*(struct dtplan_gpu *)o->dest = *gpu;
		break;
	case CLI_OPT_CALL:
		return o->call(cmd, o, text);
	}
	if (rv != DTPLAN_OK)
		return cli_usage_error(cmd, "%s: %s", flag, err.text);
	return 0;
}

/* getopt_long()'s table for spec: one row per flag, then --help (caller frees). */
static struct option *long_options(const struct cli_opt *opts, size_t n)
{
	struct option *lo = calloc(n + 2, sizeof(*lo));

	if (lo == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		lo[i].name = opts[i].name;
		lo[i].has_arg = opts[i].kind == CLI_OPT_FLAG ? no_argument : required_argument;
		lo[i].val = OPT_BASE + (int)i;
	}
	lo[n].name = "help";
	lo[n].val = 'h';
	return lo;
}

/*
 * The first pass: --help or -h anywhere prints the usage, else the early
 * flags are applied with the last value each was given.  Bad options wait
 * for the second pass.  Returns true when the command should go on.
 */
static bool first_pass(const struct cli_spec *spec, int argc, char **argv, const struct option *lo,
		       const char **last, size_t n, int *rc)
{
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c == 'h') {
			spec->usage(stdout);
			*rc = CLI_EXIT_OK;
			return false;
		}
		if (c >= OPT_BASE && spec->opts[c - OPT_BASE].early)
			last[c - OPT_BASE] = optarg;
	}
	for (size_t i = 0; i < n; i++) {
		if (last[i] == NULL)
			continue;
		*rc = apply(spec->cmd, &spec->opts[i], last[i]);
		if (*rc != 0)
			return false;
	}
	return true;
}

bool cli_parse(const struct cli_spec *spec, int argc, char **argv, int *status)
{
	const char *cmd = spec->cmd;
	struct option *lo = NULL;
	const char **last = NULL;
	bool *given = NULL, go_on = false;
	size_t n = 0;
	int c, rc = CLI_EXIT_OK, n_args = 0;

	while (spec->opts[n].name != NULL)
		n++;
	if (listing != NULL) {
		list_options(spec, n);
		goto out;
	}
	lo = long_options(spec->opts, n);
	last = calloc(n + 1, sizeof(*last));
	given = calloc(n + 1, sizeof(*given));
	if (lo == NULL || last == NULL || given == NULL) {
		fprintf(stderr, "dtplan %s: out of memory\n", cmd);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (!first_pass(spec, argc, argv, lo, last, n, &rc))
		goto out;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		const struct cli_opt *o;

		if (c < OPT_BASE) {
			rc = bad_option(spec, n, c, argv);
			goto out;
		}
		o = &spec->opts[c - OPT_BASE];
		if (o->once && given[c - OPT_BASE]) {
			rc = cli_usage_error(cmd, "--%s given twice", o->name);
			goto out;
		}
		given[c - OPT_BASE] = true;
		if (o->seen != NULL)
			*o->seen = true;
		if (!o->early && (rc = apply(cmd, o, optarg)) != 0)
			goto out;
	}
	for (; optind < argc; optind++, n_args++) {
		if (n_args >= spec->max_args) {
			rc = cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
			goto out;
		}
		spec->args[n_args] = argv[optind];
	}
	for (size_t i = 0; i < n; i++) {
		if (spec->opts[i].required && !given[i]) {
			rc = cli_usage_error(cmd, "--%s is required", spec->opts[i].name);
			goto out;
		}
	}
	go_on = true;
out:
	free(lo);
	free(last);
	free(given);
	*status = rc;
	return go_on;
}
