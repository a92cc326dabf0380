/*
 * util.c: error reporting, value parsing, output and logging helpers shared
 * by the subcommands.  The dispatcher (cli/dtplan.c) calls the subcommands
 * and they call these; nothing here calls back into either.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_bad_option(const char *cmd, int c, int opt, char **argv, int index)
{
	const char *arg = index > 0 ? argv[index - 1] : "";

	/* a long option names itself in argv; optopt is its value then */
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs a value", arg);
	if (opt != 0 && strncmp(arg, "--", 2) != 0)
		return cli_usage_error(cmd, "unknown option '-%c'", opt);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

int cli_no_operands(const char *cmd, int argc, char **argv, int index)
{
	if (index < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[index]);
	return 0;
}

void cli_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
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
