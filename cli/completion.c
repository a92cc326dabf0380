/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * completion.c: "dtplan completion bash|zsh": the shell completion scripts,
 * written from the table of commands (cli/dtplan.c) and each command's own
 * flag table (cli_list_options()), so that they cannot drift from what the
 * commands take.  etc/completion/ holds the written copies that make install
 * installs; tests/cli/test_completion.sh checks that they are current.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "completion"

void cli_completion_usage(FILE *out)
{
	fprintf(out, "Usage: dtplan completion bash|zsh\n\n"
		     "Prints the completion script of a shell, written from the commands' own\n"
		     "flag tables (installed as etc/completion/dtplan and _dtplan).\n");
}

char *cli_command_options(const struct cli_command *c)
{
	char *argv[] = {(char *)c->name, (char *)c->sub, NULL};
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (f == NULL)
		return NULL;
	cli_list_options(f);
	c->run(c->sub != NULL ? 2 : 1, argv);
	cli_list_options(NULL);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The words of the lines of text that start with "--", or with " VALUE" only
 * (valued): "--a --b" into out. */
static void put_flags(FILE *out, const char *text, bool valued)
{
	const char *sep = "";

	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n"), name = strcspn(p, " \n");

		if (strncmp(p, "--", 2) == 0 && (!valued || name < len)) {
			fprintf(out, "%s%.*s", sep, (int)name, p);
			sep = " ";
		}
		p += len + (p[len] != '\0');
	}
}

static void put_words(FILE *out, const struct cli_command *commands)
{
	const char *sep = "";

	for (const struct cli_command *c = commands; c->name != NULL; c++) {
		if (c->hidden)
			continue;
		fprintf(out, "%s%s", sep, c->name);
		sep = " ";
	}
}

static const char bash_head[] =
	"# bash completion for dtplan(1), written by \"dtplan completion bash\" from the\n"
	"# commands' own flag tables: do not edit (tests/cli/test_completion.sh).\n"
	"_dtplan()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	"\tlocal cmd=${COMP_WORDS[1]} flags=\"\" valued=\"\" args=\"\" sub=\"\" commands\n";

static const char bash_tail[] =
	"\tesac\n"
	"\tif [ -n \"$sub\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$sub\" -- \"$cur\"))\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tcase \" $valued \" in\n"
	"\t*\" $prev \"*)\n"
	"\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	"\t\treturn 0\n"
	"\t\t;;\n"
	"\tesac\n"
	"\tcase $cur:$args in\n"
	"\t-*:* | *:) COMPREPLY=($(compgen -W \"$flags --help\" -- \"$cur\")) ;;\n"
	"\t*:commands) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")) ;;\n"
	"\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	"\tesac\n"
	"\treturn 0\n"
	"}\n"
	"complete -o default -F _dtplan dtplan\n";

static int write_bash(FILE *out, const struct cli_command *commands)
{
	fputs(bash_head, out);
	fputs("\tcommands=\"", out);
	put_words(out, commands);
	fputs("\"\n\tif [ \"$COMP_CWORD\" -le 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
	      "\t\treturn 0\n\tfi\n\tcase $cmd in\n",
	      out);
	for (const struct cli_command *c = commands; c->name != NULL; c++) {
		char *text;

		if (c->hidden)
			continue;
		if ((text = cli_command_options(c)) == NULL)
			return CLI_EXIT_FAIL;
		fprintf(out, "\t%s)\n\t\tflags=\"", c->name);
		put_flags(out, text, false);
		fputs("\"\n\t\tvalued=\"", out);
		put_flags(out, text, true);
		fputs("\"\n", out);
		if (strcmp(c->name, "help") == 0)
			fputs("\t\targs=commands\n", out);
		else if (strstr(text, "ARG\n") != NULL)
			fputs("\t\targs=files\n", out);
		if (c->sub != NULL)
			fprintf(out, "\t\tsub=%s\n", c->sub);
		fputs("\t\t;;\n", out);
		free(text);
	}
	fputs(bash_tail, out);
	return CLI_EXIT_OK;
}

/* text in zsh's single quotes, with ':' escaped for _describe when colon */
static void put_quoted(FILE *out, const char *text, bool colon)
{
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '\'')
			fputs("'\\''", out);
		else if (*p == ':' && colon)
			fputs("\\:", out);
		else
			fputc(*p, out);
	}
}

static int write_zsh(FILE *out, const struct cli_command *commands)
{
	fputs("#compdef dtplan\n"
	      "# zsh completion for dtplan(1), written by \"dtplan completion zsh\" from the\n"
	      "# commands' own flag tables: do not edit (tests/cli/test_completion.sh).\n"
	      "_dtplan() {\n\tlocal -a commands\n\tcommands=(\n",
	      out);
	for (const struct cli_command *c = commands; c->name != NULL; c++) {
		if (c->hidden)
			continue;
		fputs("\t\t'", out);
		put_quoted(out, c->name, true);
		fputc(':', out);
		put_quoted(out, c->summary, true);
		fputs("'\n", out);
	}
	fputs("\t)\n\tif (( CURRENT == 2 )); then\n"
	      "\t\t_describe -t commands 'dtplan command' commands\n\t\treturn\n\tfi\n"
	      "\tlocal cmd=$words[2]\n\tshift words\n\t(( CURRENT-- ))\n\tcase $cmd in\n",
	      out);
	for (const struct cli_command *c = commands; c->name != NULL; c++) {
		char *text;

		if (c->hidden)
			continue;
		if ((text = cli_command_options(c)) == NULL)
			return CLI_EXIT_FAIL;
		fprintf(out, "\t%s)\n", c->name);
		if (c->sub != NULL)
			fprintf(out,
				"\t\tif (( CURRENT == 2 )); then compadd %s; return; fi\n"
				"\t\tshift words\n\t\t(( CURRENT-- ))\n",
				c->sub);
		fputs("\t\t_arguments -S '(- *)--help'", out);
		for (const char *p = text; *p != '\0';) {
			size_t len = strcspn(p, "\n"), name = strcspn(p, " \n");

			if (strncmp(p, "--", 2) == 0)
				fprintf(out, " '%.*s%s'", (int)name, p,
					name < len ? ":value:_files" : "");
			p += len + (p[len] != '\0');
		}
		if (strcmp(c->name, "help") == 0)
			fputs(" '1:command:(", out), put_words(out, commands), fputs(")'", out);
		else if (strstr(text, "ARG\n") != NULL)
			fputs(" '*:file:_files'", out);
		fputs("\n\t\t;;\n", out);
		free(text);
	}
	fputs("\tesac\n}\n_dtplan \"$@\"\n", out);
	return CLI_EXIT_OK;
}

int cli_completion(const struct cli_command *commands, int argc, char **argv)
{
	const struct cli_opt opts[] = {CLI_OPT_END};
	const char *shell = NULL;
	const struct cli_spec cs = {.cmd = CMD,
				    .usage = cli_completion_usage,
				    .opts = opts,
				    .args = &shell,
				    .max_args = 1};
	int rc;

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (shell == NULL)
		return cli_usage_error(CMD, "which shell? (bash or zsh)");
	if (strcmp(shell, "bash") == 0)
		rc = write_bash(stdout, commands);
	else if (strcmp(shell, "zsh") == 0)
		rc = write_zsh(stdout, commands);
	else
		return cli_usage_error(CMD, "unknown shell '%s' (expected bash or zsh)", shell);
	if (rc != CLI_EXIT_OK)
		fprintf(stderr, "dtplan %s: out of memory\n", CMD);
	return rc;
}
