/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cluster.c: the allocation for "dtplan plan --nodes ...": host names, the
 * switch tree, the site file, saved node inventories (hwloc XML or "dtplan
 * node --json") and a saved measurement, which cli/cmd_plan.c hands to
 * probes/allocation.c, as the plugin hands its own.
 */
#include "config.h"

#include "cli.h"
#include "dtprobes.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cli_cluster_init(struct cli_cluster *c)
{
	memset(c, 0, sizeof(*c));
	dtplan_config_init(&c->config);
	dtplan_allocation_init(&c->alloc);
}

void cli_cluster_fini(struct cli_cluster *c)
{
	if (c == NULL)
		return;
	dtplan_allocation_fini(&c->alloc);
	dtplan_config_fini(&c->config);
	dtplan_measure_file_fini(&c->measured);
	dtplan_fabric_fetch_fini(c->fabric);
	free(c->fabric);
	free(c->hosts);
	free(c->files);
	for (size_t i = 0; i < c->n_specs; i++)
		free(c->specs[i].text);
	free(c->specs);
	memset(c, 0, sizeof(*c));
}

int cli_cluster_fabric(const char *cmd, struct cli_cluster *c, const char *url)
{
	struct dtplan_error err = {0};

	if (strlen(url) >= sizeof(c->config.fabric_url))
		return cli_usage_error(cmd, "--fabric-url: longer than %zu characters",
				       sizeof(c->config.fabric_url) - 1);
	if ((strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) ||
	    strpbrk(url, " \t\r\n\v\f") != NULL)
		return cli_usage_error(cmd, "--fabric-url: '%s' is not an http:// or https:// URL",
				       url);
	if (url != c->config.fabric_url)
		snprintf(c->config.fabric_url, sizeof(c->config.fabric_url), "%s", url);
	c->fabric = calloc(1, sizeof(*c->fabric));
	if (c->fabric == NULL)
		return cli_usage_error(cmd, "out of memory");
	if (dtplan_fabric_fetch(&c->config, false, c->fabric, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, false);
	return CLI_EXIT_OK;
}

const struct dtplan_config *cli_cluster_config(const struct cli_cluster *c)
{
	return c->alloc.base != NULL ? c->alloc.base : &c->config;
}

int cli_cluster_site(const char *cmd, struct cli_cluster *c, const char *path)
{
	struct dtplan_error err = {0};

	if (dtplan_config_parse_file(&c->config, path, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, true);
	c->have_site = true;
	return CLI_EXIT_OK;
}

/*
 * Adds "HOSTLIST=FILE[,HOSTLIST=FILE...]" from flag.  Commas inside
 * brackets belong to the hostlist; a piece without '=' continues the
 * hostlist of the next piece ("n1,n2=a.xml" names n1 and n2).
 */
int cli_cluster_add_specs(const char *cmd, struct cli_cluster *c, const char *flag, const char *arg,
			  bool json)
{
	const char *start = arg;
	int depth = 0;
	bool has_eq = false;

	for (const char *s = arg;; s++) {
		struct cli_node_spec *tmp, *sp;
		char *eq;

		if (*s == '[')
			depth++;
		else if (*s == ']' && depth > 0)
			depth--;
		else if (*s == '=' && depth == 0)
			has_eq = true;
		if (!(*s == '\0' || (*s == ',' && depth == 0 && has_eq)))
			continue;
		if (!has_eq || s == start)
			return cli_usage_error(cmd,
					       "%s: '%s' is not HOSTLIST=FILE[,HOSTLIST=FILE...]",
					       flag, arg);
		tmp = realloc(c->specs, (c->n_specs + 1) * sizeof(*tmp));
		if (tmp == NULL)
			return cli_usage_error(cmd, "out of memory");
		c->specs = tmp;
		sp = &c->specs[c->n_specs];
		memset(sp, 0, sizeof(*sp));
		sp->text = strndup(start, (size_t)(s - start));
		if (sp->text == NULL)
			return cli_usage_error(cmd, "out of memory");
		c->n_specs++;
		sp->flag = flag;
		sp->json = json;
		eq = strchr(sp->text, '=');
		*eq = '\0';
		sp->file = eq + 1;
		sp->hostlist = sp->text;
		if (sp->hostlist[0] == '\0' || sp->file[0] == '\0')
			return cli_usage_error(cmd, "%s: '%s' is not HOSTLIST=FILE", flag, arg);
		if (*s == '\0')
			break;
		start = s + 1;
		has_eq = false;
	}
	return CLI_EXIT_OK;
}

/* Appends names to c->hosts. */
static int add_hosts(const char *cmd, struct cli_cluster *c, char (*names)[64], size_t n)
{
	char(*tmp)[64] = realloc(c->hosts, (c->n_hosts + n) * sizeof(*tmp));

	if (tmp == NULL)
		return cli_usage_error(cmd, "out of memory");
	c->hosts = tmp;
	memcpy(c->hosts[c->n_hosts], names, n * sizeof(*names));
	c->n_hosts += n;
	return CLI_EXIT_OK;
}

int cli_cluster_measurements(const char *cmd, struct cli_cluster *c, const char *path)
{
	struct dtplan_error err = {0};
	char *text = NULL;
	int rc = CLI_EXIT_OK;

	if (dtplan_file_read(path, DTPLAN_FILE_MEASUREMENTS, &text, NULL, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, true);
	dtplan_measure_file_fini(&c->measured);
	if (dtplan_measure_file_from_json(text, &c->measured, &err) != DTPLAN_OK) {
		snprintf(err.source, sizeof(err.source), "%s", path);
		rc = cli_report(cmd, &err, true);
	}
	free(text);
	return rc;
}

int cli_cluster_load(const char *cmd, struct cli_cluster *c, const char *nodes)
{
	struct dtplan_error err = {0};
	char(*names)[64] = NULL;
	size_t n = 0;
	int rc = CLI_EXIT_OK;

	if (nodes != NULL) {
		if (dtplan_hostlist_expand(nodes, DTPLAN_HOSTLIST_MAX, &names, &n, &err) !=
		    DTPLAN_OK)
			return cli_usage_error(cmd, "--nodes: %s", err.text);
		rc = add_hosts(cmd, c, names, n);
		free(names);
		names = NULL;
	}
	/* without --nodes the inventories' hostlists name the allocation, and
	 * without those the measurement's hosts */
	for (size_t k = 0; rc == 0 && nodes == NULL && k < c->n_specs; k++) {
		if (dtplan_hostlist_expand(c->specs[k].hostlist, DTPLAN_HOSTLIST_MAX, &names, &n,
					   &err) != DTPLAN_OK) {
			rc = cli_usage_error(cmd, "%s: %s", c->specs[k].flag, err.text);
			break;
		}
		rc = add_hosts(cmd, c, names, n);
		free(names);
		names = NULL;
	}
	if (rc == 0 && c->n_hosts == 0 && c->measured.m != NULL)
		rc = add_hosts(cmd, c, c->measured.m->hosts, c->measured.m->n_nodes);
	if (rc != 0)
		return rc;
	free(c->files);
	c->files = calloc(c->n_specs + 1, sizeof(*c->files));
	if (c->files == NULL)
		return cli_usage_error(cmd, "out of memory");
	for (size_t k = 0; k < c->n_specs; k++) {
		c->files[k].hostlist = c->specs[k].hostlist;
		c->files[k].path = c->specs[k].file;
		c->files[k].json = c->specs[k].json;
		c->files[k].flag = c->specs[k].flag;
	}
	memset(&c->io, 0, sizeof(c->io));
	c->io.n_hosts = c->n_hosts;
	c->io.hosts = (const char(*)[64])c->hosts;
	c->io.n_files = c->n_specs;
	c->io.files = c->files;
	c->io.assumed_why = "";
	return CLI_EXIT_OK;
}
