/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c: error reporting, JSON output and logging helpers shared by the
 * subcommands.  The dispatcher (cli/dtplan.c) calls the subcommands
 * and they call these; nothing here calls back into either.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

int cli_write_svg(const char *cmd, const struct dtplan_plan *p, const char *path)
{
	struct dtplan_error err = {0};
	char *svg = NULL;
	FILE *f;
	int rc = CLI_EXIT_OK;

	if (dtplan_plan_render_svg(p, &svg, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, false);
	f = fopen(path, "w");
	if (f == NULL || fputs(svg, f) == EOF) {
		fprintf(stderr, "dtplan %s: --svg: cannot write '%s': %s\n", cmd, path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	if (f != NULL && fclose(f) != 0 && rc == CLI_EXIT_OK) {
		fprintf(stderr, "dtplan %s: --svg: cannot write '%s': %s\n", cmd, path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	free(svg);
	return rc;
}

void cli_print_json(char *text)
{
	fputs(text, stdout);
	fputc('\n', stdout);
	free(text);
}

json_t *cli_json_number(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 1e17)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *cli_json_schema(json_t *root, const char *schema)
{
	json_t *out = root != NULL ? json_pack("{s:s}", "schema", schema) : NULL;

	if (out != NULL && json_object_update(out, root) != 0) {
		json_decref(out);
		out = NULL;
	}
	json_decref(root);
	return out;
}

int cli_json_print(const char *cmd, json_t *root)
{
	char *text = root != NULL ? json_dumps(root, JSON_REAL_PRECISION(17)) : NULL;

	json_decref(root);
	if (text == NULL) {
		fprintf(stderr,
			"dtplan %s: cannot write the JSON output (out of memory, or text "
			"that is not UTF-8)\n",
			cmd);
		return CLI_EXIT_FAIL;
	}
	cli_print_json(text);
	return CLI_EXIT_OK;
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

int cli_opt_site(const char *cmd, const struct cli_opt *o, const char *value)
{
	struct dtplan_error err = {0};

	if (dtplan_config_parse_file(o->dest, value, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, true);
	return CLI_EXIT_OK;
}
