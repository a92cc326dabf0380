/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_fabric.c: "dtplan fabric export": the fabric of topology.conf and a
 * site file as dtplan.fabric/1 JSON, for a site to serve (FabricURL=).
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "fabric export"

void cmd_fabric_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan fabric export --topology FILE [--site FILE] [--json]\n"
		"\n"
		"Writes the fabric of Slurm's topology.conf and dtplan's site file (switch\n"
		"settings, node sets, network and NVLink values, GPU type) as %s JSON\n"
		"on standard output: what a fabric service serves for FabricURL=.  A plan made\n"
		"with it is the plan made with the two files.\n"
		"\n"
		"Options:\n"
		"  --topology FILE    Slurm's topology.conf (the switch tree)\n"
		"  --site FILE        the site file (dtplan.conf); default: dtplan's defaults\n"
		"  --json             taken for every command's sake: the output is JSON\n"
		"  -h, --help         show this help\n"
		"\n"
		"Exit status: 0 when written, 1 when a file has errors (FILE:LINE: message),\n"
		"2 for bad usage.\n",
		DTPLAN_FABRIC_SCHEMA);
}

static int fabric_export(int argc, char **argv)
{
	struct dtplan_topology *t = NULL;
	struct dtplan_config c;
	struct dtplan_error err = {0};
	const char *topology = NULL, *site = NULL;
	char *json = NULL;
	bool as_json = false; /* the output is JSON with or without it */
	int rc;
	const struct cli_opt opts[] = {
		CLI_OPT_TOPOLOGY(&topology, true),
		{.name = "site", .kind = CLI_OPT_STRING, .dest = &site, .once = true},
		CLI_OPT_JSON(&as_json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_fabric_usage, .opts = opts};

	dtplan_config_init(&c);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (topology == NULL) {
		rc = cli_usage_error(CMD, "--topology is required");
		goto out;
	}
	rc = CLI_EXIT_FAIL;
	if (site != NULL && dtplan_config_parse_file(&c, site, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		goto out;
	}
	if (dtplan_topology_parse_file(topology, &t, &err) != DTPLAN_OK ||
	    dtplan_fabric_to_json(t, &c, true, &json, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		goto out;
	}
	cli_print_json(json);
	rc = CLI_EXIT_OK;
out:
	dtplan_topology_destroy(t);
	dtplan_config_fini(&c);
	return rc;
}

int cmd_fabric(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return fabric_export(argc - 1, argv + 1);
	/* --help anywhere wins, as for every command */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cmd_fabric_usage(stdout);
			return CLI_EXIT_OK;
		}
	}
	if (argc < 2)
		return cli_usage_error("fabric", "which one? (export)");
	if (argv[1][0] == '-')
		return cli_usage_error("fabric", "unknown option '%s'", argv[1]);
	return cli_usage_error("fabric", "unknown subcommand '%s' (expected export)", argv[1]);
}
