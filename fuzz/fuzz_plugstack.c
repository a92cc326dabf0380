/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_plugstack.c: the plugin's arguments on its plugstack.conf line
 * (dtplan_config_parse_args()), split on blanks as Slurm splits them.
 * site= and topology= name files, read by their own harnesses: here they
 * are dropped, so that a run never reads what the fuzzer names.
 */
#include "fuzz.h"

#define MAX_ARGS 64

DTPLAN_FUZZ_TARGET(plugstack)
{
	struct dtplan_config c;
	char *text = dtplan_fuzz_text(data, size), *argv[MAX_ARGS], *save = NULL, *tok;
	int argc = 0;

	if (text == NULL)
		return 0;
	for (tok = strtok_r(text, " \t\n", &save); tok != NULL && argc < MAX_ARGS;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (strncmp(tok, "site=", 5) != 0 && strncmp(tok, "topology=", 9) != 0)
			argv[argc++] = tok;
	dtplan_config_init(&c);
	dtplan_config_parse_args(&c, argc, argv, NULL);
	dtplan_config_fini(&c);
	free(text);
	return 0;
}
