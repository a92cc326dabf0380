/*
 * util.c: option-parsing and output helpers shared by the subcommands.
 */
#include "config.h"

#include "cli.h"

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
