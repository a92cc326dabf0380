/*
 * cluster.c: the allocation for "dtplan plan --nodes ...": host names, the
 * switch tree, the site file and saved node inventories (hwloc XML or
 * "dtplan node --json"), assembled into a struct dtplan_cluster.
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
}

void cli_cluster_fini(struct cli_cluster *c)
{
	if (c == NULL)
		return;
	dtplan_config_fini(&c->config);
	dtplan_topology_destroy(c->topology);
	dtplan_fabric_fetch_fini(c->fabric);
	free(c->fabric);
	free(c->inv);
	free(c->hosts);
	free(c->host_inv);
	free(c->assumed);
	for (size_t i = 0; i < c->n_specs; i++)
		free(c->specs[i].text);
	free(c->specs);
	memset(c, 0, sizeof(*c));
}

int cli_cluster_fabric(const char *cmd, struct cli_cluster *c, const char *url)
{
	struct dtplan_config applied;
	struct dtplan_error err = {0};

	if (strlen(url) >= sizeof(c->config.fabric_url))
		return cli_usage_error(cmd, "--fabric-url: longer than %zu characters",
				       sizeof(c->config.fabric_url) - 1);
	if ((strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) ||
	    strpbrk(url, " \t\r\n\v\f") != NULL)
		return cli_usage_error(cmd,
				       "--fabric-url: '%s' is not an http:// or https:// URL", url);
	if (url != c->config.fabric_url)
		snprintf(c->config.fabric_url, sizeof(c->config.fabric_url), "%s", url);
	c->fabric = calloc(1, sizeof(*c->fabric));
	if (c->fabric == NULL)
		return cli_usage_error(cmd, "out of memory");
	if (dtplan_fabric_fetch(&c->config, false, c->fabric, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, false);
	if (c->fabric->desc == NULL)
		return CLI_EXIT_OK;
	/* the site's settings with the fabric's over them, as the plugin does */
	if (dtplan_fabric_desc_apply(c->fabric->desc, &c->config, &applied, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, true);
	dtplan_config_fini(&c->config);
	c->config = applied;
	return CLI_EXIT_OK;
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
int cli_cluster_add_specs(const char *cmd, struct cli_cluster *c, const char *flag,
			  const char *arg, bool json)
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
			return cli_usage_error(cmd, "%s: '%s' is not HOSTLIST=FILE[,HOSTLIST=FILE...]",
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

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct cli_host_ix *)a)->name, ((const struct cli_host_ix *)b)->name);
}

/* Loads spec k's inventory into c->inv[k]. */
static int load_inventory(const char *cmd, struct cli_cluster *c, size_t k)
{
	const struct cli_node_spec *sp = &c->specs[k];
	struct dtplan_error err = {0};
	char *text;

	if (!sp->json) {
		if (dtplan_node_from_xml(sp->file, &c->inv[k], &err) != DTPLAN_OK)
			return cli_report(cmd, &err, true);
		return CLI_EXIT_OK;
	}
	if (dtplan_file_read(sp->file, DTPLAN_FILE_NODE_JSON, &text, NULL, &err) != DTPLAN_OK)
		return cli_report(cmd, &err, true);
	if (dtplan_node_from_json(text, &c->inv[k], &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "%s", sp->file);
		free(text);
		return cli_report(cmd, &err, true);
	}
	free(text);
	return CLI_EXIT_OK;
}

/* Appends names to c->hosts. */
static int add_hosts(const char *cmd, struct cli_cluster *c, char (*names)[64], size_t n)
{
	char (*tmp)[64] = realloc(c->hosts, (c->n_hosts + n) * sizeof(*tmp));

	if (tmp == NULL)
		return cli_usage_error(cmd, "out of memory");
	c->hosts = tmp;
	memcpy(c->hosts[c->n_hosts], names, n * sizeof(*names));
	c->n_hosts += n;
	return CLI_EXIT_OK;
}

int cli_cluster_load(const char *cmd, struct cli_cluster *c, const char *nodes,
		     const char *topology)
{
	struct dtplan_error err = {0};
	struct cli_host_ix *ix = NULL;
	char (*names)[64] = NULL;
	size_t n = 0;
	int rc = CLI_EXIT_OK;

	/* the fabric service's tree, else topology.conf */
	if (topology != NULL && (c->fabric == NULL || c->fabric->desc == NULL)) {
		if (dtplan_topology_parse_file(topology, &c->topology, &err) != DTPLAN_OK)
			return cli_report(cmd, &err, true);
		if (c->have_site &&
		    dtplan_config_apply_topology(&c->config, c->topology, &err) != DTPLAN_OK)
			return cli_report(cmd, &err, true);
		c->topology_path = topology;
	}
	if (nodes != NULL) {
		if (dtplan_hostlist_expand(nodes, DTPLAN_HOSTLIST_MAX, &names, &n, &err) !=
		    DTPLAN_OK)
			return cli_usage_error(cmd, "--nodes: %s", err.text);
		rc = add_hosts(cmd, c, names, n);
		free(names);
		names = NULL;
	}
	/* without --nodes the inventories' hostlists name the allocation */
	for (size_t k = 0; rc == 0 && k < c->n_specs; k++) {
		if (dtplan_hostlist_expand(c->specs[k].hostlist, DTPLAN_HOSTLIST_MAX, &names, &n,
					   &err) != DTPLAN_OK) {
			rc = cli_usage_error(cmd, "%s: %s", c->specs[k].flag, err.text);
			break;
		}
		c->specs[k].names = names;
		c->specs[k].n_names = n;
		names = NULL;
		if (nodes == NULL)
			rc = add_hosts(cmd, c, c->specs[k].names, n);
	}
	if (rc != 0)
		goto out;
	c->inv = calloc(c->n_specs + 1, sizeof(*c->inv));
	c->host_inv = malloc((c->n_hosts + 1) * sizeof(*c->host_inv));
	c->assumed = calloc(c->n_hosts + 1, sizeof(*c->assumed));
	ix = malloc((c->n_hosts + 1) * sizeof(*ix));
	if (c->inv == NULL || c->host_inv == NULL || c->assumed == NULL || ix == NULL) {
		rc = cli_usage_error(cmd, "out of memory");
		goto out;
	}
	for (size_t k = 0; rc == 0 && k < c->n_specs; k++)
		rc = load_inventory(cmd, c, k);
	if (rc != 0)
		goto out;
	/* each host takes the first inventory naming it */
	for (size_t i = 0; i < c->n_hosts; i++) {
		ix[i].name = c->hosts[i];
		ix[i].host = i;
		c->host_inv[i] = -1;
	}
	qsort(ix, c->n_hosts, sizeof(*ix), cmp_name);
	for (size_t k = c->n_specs; k-- > 0;) {
		for (size_t j = 0; j < c->specs[k].n_names; j++) {
			struct cli_host_ix key = {.name = c->specs[k].names[j]}, *hit;

			hit = bsearch(&key, ix, c->n_hosts, sizeof(*ix), cmp_name);
			if (hit == NULL) {
				rc = cli_usage_error(cmd, "%s: host '%s' of '%s' is not in --nodes",
						     c->specs[k].flag, key.name,
						     c->specs[k].hostlist);
				goto out;
			}
			c->host_inv[hit->host] = (int)k;
		}
	}
	/* hosts without one are assumed equal to the first inventory given */
	for (size_t i = 0; i < c->n_hosts; i++) {
		if (c->host_inv[i] >= 0 || c->n_specs == 0)
			continue;
		c->host_inv[i] = 0;
		c->assumed[i] = true;
		c->n_assumed++;
	}
	c->cl.n_nodes = c->n_specs;
	c->cl.nodes = c->inv;
	c->cl.topology = c->fabric != NULL && c->fabric->desc != NULL ? c->fabric->desc->topology
								    : c->topology;
	c->cl.config = &c->config;
	c->cl.n_hosts = c->n_hosts;
	c->cl.host_names = (const char (*)[64])c->hosts;
	c->cl.host_inventory = c->host_inv;
out:
	free(ix);
	for (size_t k = 0; k < c->n_specs; k++) {
		free(c->specs[k].names);
		c->specs[k].names = NULL;
	}
	return rc;
}

/* The "fabric-service" warning: the fault, and what was used instead. */
static int note_fabric(const struct cli_cluster *c, struct dtplan_plan *p)
{
	const struct dtplan_fabric_fetch *f = c->fabric;
	enum dtplan_err rv;

	if (f == NULL || f->warning[0] == '\0')
		return CLI_EXIT_OK;
	if (f->desc != NULL)
		rv = dtplan_plan_add_warning(p, "fabric-service", "%s", f->warning);
	else if (c->topology_path != NULL)
		rv = dtplan_plan_add_warning(p, "fabric-service", "%s; using topology.conf %s",
					     f->warning, c->topology_path);
	else
		rv = dtplan_plan_add_warning(p, "fabric-service",
					     "%s; planning without a switch tree", f->warning);
	return rv == DTPLAN_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_cluster_note(struct cli_cluster *c, struct dtplan_plan *p)
{
	char (*names)[64];
	char list[256];
	size_t n = 0;

	if (note_fabric(c, p) != CLI_EXIT_OK)
		return CLI_EXIT_FAIL;
	if (c->n_assumed == 0)
		return CLI_EXIT_OK;
	names = malloc(c->n_assumed * sizeof(*names));
	if (names == NULL)
		return CLI_EXIT_FAIL;
	for (size_t i = 0; i < c->n_hosts; i++)
		if (c->assumed[i])
			memcpy(names[n++], c->hosts[i], sizeof(names[0]));
	dtplan_hostlist_compress((const char (*)[64])names, n, list, sizeof(list));
	free(names);
	if (dtplan_plan_add_warning(p, "assumed-nodes",
				    "%zu nodes (%s) have no inventory: assumed equal to %s (%s)",
				    c->n_assumed, list, c->inv[0].hostname[0] ? c->inv[0].hostname
									     : "the first node",
				    c->specs[0].file) != DTPLAN_OK)
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}
