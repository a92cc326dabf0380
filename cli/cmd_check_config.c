/*
 * cmd_check_config.c: "dtplan check-config": validates the site file,
 * topology.conf and the plugstack.conf arguments the plugin would read, and
 * prints what it understood.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CMD "check-config"

void cmd_check_config_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan check-config [--site FILE] [--topology FILE]\n"
		"                           [--args \"key=value ...\"]\n"
		"\n"
		"Validates dtplan's site configuration the way the plugin reads it and prints a\n"
		"summary: switches, leaves, nodes, oversubscribed uplinks and every setting, with\n"
		"defaults marked.\n"
		"\n"
		"Options:\n"
		"  --site FILE        the site file (dtplan.conf)\n"
		"  --topology FILE    Slurm's topology.conf\n"
		"  --args TEXT        the plugstack.conf arguments, space-separated key=value\n"
		"                     tokens; site= and topology= there name the files too\n"
		"  -h, --help         show this help\n"
		"\n"
		"Exit status: 0 when everything is valid, 1 when a file or argument has errors\n"
		"(each printed as FILE:LINE: message), 2 for bad usage.\n");
}

/* Splits text on whitespace into a NULL-terminated argv (caller frees both). */
static char **split_args(const char *text, int *argc, char **copy)
{
	char **argv;
	char *save = NULL, *tok;
	size_t cap = strlen(text) / 2 + 2;

	*argc = 0;
	*copy = strdup(text);
	argv = calloc(cap, sizeof(*argv));
	if (*copy == NULL || argv == NULL) {
		free(*copy);
		free(argv);
		*copy = NULL;
		return NULL;
	}
	for (tok = strtok_r(*copy, " \t\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[(*argc)++] = tok;
	return argv;
}

static void print_topology(const char *path, const struct dtplan_topology *t,
			   const struct dtplan_config *c)
{
	size_t leaves = 0, n_over = 0;
	int levels = 0;
	char rate[32];

	for (size_t i = 0; i < t->n_switches; i++) {
		leaves += t->switches[i].level == 0;
		if (t->switches[i].level + 1 > levels)
			levels = t->switches[i].level + 1;
	}
	printf("topology: %s\n", path);
	if (t->blocks)
		printf("  blocks: %zu (topology/block, base block %zu nodes)\n", t->n_switches,
		       t->block_size);
	else if (t->n_switches == 0)
		printf("  switches: none (flat)\n");
	else
		printf("  switches: %zu (%zu leaves, %d levels)\n", t->n_switches, leaves, levels);
	printf("  nodes: %zu\n", t->n_nodes);
	if (t->n_switches <= 64) {
		for (size_t i = 0; i < t->n_switches; i++) {
			const struct dtplan_switch *s = &t->switches[i];

			printf("  %-16s level %d  parent %s", s->name, s->level,
			       s->parent >= 0 ? t->switches[s->parent].name : "-");
			if (s->level == 0)
				printf("  nodes %zu", dtplan_topology_leaf_size(t, (int)i));
			if (s->oversubscription != 1.0)
				printf("  oversubscription %g:1", s->oversubscription);
			if (s->uplink_bytes_per_s > 0)
				printf("  uplink %s", dtplan_format_rate(s->uplink_bytes_per_s,
									 rate, sizeof(rate)));
			printf("\n");
		}
	}
	printf("oversubscribed uplinks (threshold %g:1):", c->oversub_threshold);
	for (size_t i = 0; i < t->n_switches; i++) {
		const struct dtplan_switch *s = &t->switches[i];

		if (s->oversubscription <= 1.0)
			continue;
		printf("\n  %s %g:1%s", s->name, s->oversubscription,
		       s->oversubscription > c->oversub_threshold ? " (above threshold)" : "");
		n_over++;
	}
	printf("%s\n", n_over == 0 ? " none" : "");
}

static void print_site(const struct dtplan_config *c)
{
	char value[256];
	const char *key, *arg;
	bool def;

	printf("site: %s\n", c->site_file[0] ? c->site_file : "(none)");
	printf("  switch settings: %zu, node sets: %zu\n", c->n_switches, c->n_nodesets);
	for (size_t i = 0; i < c->n_nodesets; i++) {
		const struct dtplan_site_nodeset *ns = &c->nodesets[i];

		printf("  NodeName=%s GpuType=%s Gpus=%d NVLinkDomain=%s\n", ns->nodes,
		       ns->gpu_type[0] ? ns->gpu_type : "-", ns->gpus_per_node,
		       ns->nvlink_domain[0] ? ns->nvlink_domain : "-");
	}
	printf("settings (site file key, plugstack argument):\n");
	for (size_t i = 0; dtplan_config_setting(c, i, &key, &arg, value, sizeof(value), &def); i++)
		printf("  %-26s %-23s %-16s%s\n", key[0] ? key : "-", arg,
		       value[0] ? value : "\"\"", def ? " (default)" : "");
}

int cmd_check_config(int argc, char **argv)
{
	struct dtplan_config c;
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};
	const char *site = NULL, *topology = NULL, *args = NULL;
	char **targv = NULL, *copy = NULL;
	int targc = 0, rc = CLI_EXIT_OK;
	bool ok = true, site_ok = true;
	const struct cli_opt opts[] = {
		{.name = "site", .kind = CLI_OPT_STRING, .dest = &site, .once = true},
		CLI_OPT_TOPOLOGY(&topology, true),
		{.name = "args", .kind = CLI_OPT_STRING, .dest = &args, .once = true},
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_check_config_usage, .opts = opts};

	dtplan_config_init(&c);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (args != NULL) {
		targv = split_args(args, &targc, &copy);
		if (targv == NULL) {
			fprintf(stderr, "dtplan %s: out of memory\n", CMD);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		for (int i = 0; i < targc && site != NULL; i++)
			if (strncasecmp(targv[i], "site=", 5) == 0) {
				rc = cli_usage_error(CMD,
						     "the site file is given twice "
						     "(--site and '%s' in --args)",
						     targv[i]);
				goto out;
			}
	}
	/* The site file first: plugstack arguments override it, as in the plugin. */
	if (site != NULL && dtplan_config_parse_file(&c, site, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		ok = site_ok = false;
	}
	if (targv != NULL && dtplan_config_parse_args(&c, targc, targv, &err) != DTPLAN_OK) {
		cli_report(CMD, &err, false);
		ok = site_ok = false;
	}
	if (topology == NULL && c.topology_file[0] != '\0')
		topology = c.topology_file;
	if (topology != NULL) {
		if (dtplan_topology_parse_file(topology, &t, &err) != DTPLAN_OK) {
			cli_report(CMD, &err, false);
			ok = false;
		} else if (site_ok && dtplan_config_apply_topology(&c, t, &err) != DTPLAN_OK) {
			cli_report(CMD, &err, false);
			ok = false;
		}
	}
	if (!ok) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (t != NULL)
		print_topology(topology, t, &c);
	else
		printf("topology: (none)\n");
	print_site(&c);
	printf("configuration is valid\n");
out:
	dtplan_topology_destroy(t);
	dtplan_config_fini(&c);
	free(targv);
	free(copy);
	return rc;
}
