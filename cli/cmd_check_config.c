/* SPDX-License-Identifier: GPL-2.0-or-later */
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
		"                           [--args \"key=value ...\"] [--json]\n"
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
		"  --json             print the result as JSON (schema %s): \"valid\",\n"
		"                     each error (source, line, message), the topology, the\n"
		"                     node sets and every setting; the errors are also on\n"
		"                     standard error\n"
		"  -h, --help         show this help\n"
		"\n"
		"Exit status: 0 when everything is valid, 1 when a file or argument has errors\n"
		"(each printed as FILE:LINE: message), 2 for bad usage.\n",
		CLI_CHECK_CONFIG_SCHEMA);
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

/* --json: what print_topology() says, as an object */
static json_t *topology_json(const char *path, const struct dtplan_topology *t,
			     const struct dtplan_config *c)
{
	json_t *list = json_array();
	size_t leaves = 0;
	int levels = 0;

	for (size_t i = 0; i < t->n_switches; i++) {
		const struct dtplan_switch *s = &t->switches[i];

		leaves += s->level == 0;
		if (s->level + 1 > levels)
			levels = s->level + 1;
		json_array_append_new(
			list,
			json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:b}", "name", s->name, "level",
				  s->level, "parent",
				  s->parent >= 0 ? json_string(t->switches[s->parent].name)
						 : json_null(),
				  "nodes",
				  s->level == 0
					  ? json_integer((
						    json_int_t)dtplan_topology_leaf_size(t, (int)i))
					  : json_null(),
				  "oversubscription", cli_json_number(s->oversubscription),
				  "uplink_bytes_per_s",
				  s->uplink_bytes_per_s > 0 ? cli_json_number(s->uplink_bytes_per_s)
							    : json_null(),
				  "above_threshold", s->oversubscription > c->oversub_threshold));
	}
	return json_pack("{s:s, s:s, s:I, s:I, s:i, s:o, s:I, s:o}", "file", path, "kind",
			 t->blocks            ? "block"
			 : t->n_switches == 0 ? "flat"
					      : "tree",
			 "switches", (json_int_t)t->n_switches, "leaves", (json_int_t)leaves,
			 "levels", levels, "block_size",
			 t->blocks ? json_integer((json_int_t)t->block_size) : json_null(), "nodes",
			 (json_int_t)t->n_nodes, "switch_list", list);
}

/* --json: what print_site() says, as members of root */
static void site_json(json_t *root, const struct dtplan_config *c)
{
	json_t *sets = json_array(), *settings = json_array();
	char value[256];
	const char *key, *arg;
	bool def;

	for (size_t i = 0; i < c->n_nodesets; i++) {
		const struct dtplan_site_nodeset *ns = &c->nodesets[i];

		json_array_append_new(
			sets, json_pack("{s:s, s:o, s:i, s:o}", "nodes", ns->nodes, "gpu_type",
					ns->gpu_type[0] ? json_string(ns->gpu_type) : json_null(),
					"gpus", ns->gpus_per_node, "nvlink_domain",
					ns->nvlink_domain[0] ? json_string(ns->nvlink_domain)
							     : json_null()));
	}
	for (size_t i = 0; dtplan_config_setting(c, i, &key, &arg, value, sizeof(value), &def); i++)
		json_array_append_new(settings,
				      json_pack("{s:o, s:s, s:s, s:b}", "key",
						key[0] ? json_string(key) : json_null(), "argument",
						arg, "value", value, "default", def));
	json_object_set_new(root, "site",
			    c->site_file[0] ? json_string(c->site_file) : json_null());
	json_object_set_new(root, "switch_settings", json_integer((json_int_t)c->n_switches));
	json_object_set_new(root, "nodesets", sets);
	json_object_set_new(root, "oversubscription_threshold",
			    cli_json_number(c->oversub_threshold));
	json_object_set_new(root, "settings", settings);
}

/* An error: on stderr, and into errors (NULL: no --json) */
static void fault(json_t *errors, const struct dtplan_error *err)
{
	cli_report(CMD, err, false);
	if (errors != NULL)
		json_array_append_new(
			errors,
			json_pack("{s:o, s:o, s:s, s:s}", "source",
				  err->source[0] ? json_string(err->source) : json_null(), "line",
				  err->line > 0 ? json_integer(err->line) : json_null(), "message",
				  err->text, "code", dtplan_strerror(err->code)));
}

int cmd_check_config(int argc, char **argv)
{
	struct dtplan_config c;
	struct dtplan_topology *t = NULL;
	struct dtplan_error err = {0};
	const char *site = NULL, *topology = NULL, *args = NULL;
	char **targv = NULL, *copy = NULL;
	int targc = 0, rc = CLI_EXIT_OK;
	bool ok = true, site_ok = true, json = false;
	json_t *root = NULL, *errors = NULL;
	const struct cli_opt opts[] = {
		{.name = "site", .kind = CLI_OPT_STRING, .dest = &site, .once = true},
		CLI_OPT_TOPOLOGY(&topology, true),
		{.name = "args", .kind = CLI_OPT_STRING, .dest = &args, .once = true},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_check_config_usage, .opts = opts};

	dtplan_config_init(&c);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (json) {
		root = json_pack("{s:s, s:b}", "schema", CLI_CHECK_CONFIG_SCHEMA, "valid", true);
		errors = json_array();
		if (root == NULL || errors == NULL) {
			fprintf(stderr, "dtplan %s: out of memory\n", CMD);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
	}
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
		fault(errors, &err);
		ok = site_ok = false;
	}
	if (targv != NULL && dtplan_config_parse_args(&c, targc, targv, &err) != DTPLAN_OK) {
		fault(errors, &err);
		ok = site_ok = false;
	}
	if (topology == NULL && c.topology_file[0] != '\0')
		topology = c.topology_file;
	if (topology != NULL) {
		if (dtplan_topology_parse_file(topology, &t, &err) != DTPLAN_OK) {
			fault(errors, &err);
			ok = false;
		} else if (site_ok && dtplan_config_apply_topology(&c, t, &err) != DTPLAN_OK) {
			fault(errors, &err);
			ok = false;
		}
	}
	if (json) {
		/* invalid: the errors alone, as the text says nothing else */
		json_object_set_new(root, "valid", json_boolean(ok));
		json_object_set_new(root, "errors", errors);
		errors = NULL;
		if (ok) {
			json_object_set_new(root, "topology",
					    t != NULL ? topology_json(topology, t, &c)
						      : json_null());
			site_json(root, &c);
		}
		rc = cli_json_print(CMD, root);
		root = NULL;
		if (rc == CLI_EXIT_OK && !ok)
			rc = CLI_EXIT_FAIL;
		goto out;
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
	json_decref(root);
	json_decref(errors);
	dtplan_topology_destroy(t);
	dtplan_config_fini(&c);
	free(targv);
	free(copy);
	return rc;
}
