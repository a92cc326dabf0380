/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_node.c: "dtplan node": discover this node (or read an hwloc XML file)
 * and show its GPUs, NVLink domains and NICs.
 */
#include "config.h"

#include "cli.h"
#include "dtprobes.h"

#include <stdlib.h>
#include <string.h>

void cmd_node_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan node [--xml FILE] [--cache-dir DIR] [--json] [--timeout TIME]\n"
		"\n"
		"Shows the GPUs of a node with their PCI bus id, NUMA node, NVLink domain and\n"
		"nearest NIC, the NVLink/xGMI domains, and the network adapters.\n"
		"\n"
		"Options:\n"
		"  --xml FILE       read an hwloc XML export (lstopo FILE.xml) instead of\n"
		"                   discovering this node\n"
		"  --cache-dir DIR  use DIR/<hostname>.xml when present (written by the prolog)\n"
		"  --json           print the inventory as JSON\n"
		"  --timeout TIME   bound on a live discovery (default %gs; e.g. 30s, 2min)\n"
		"  -h, --help       show this help\n"
		"\n"
		"A live discovery honours hwloc's environment, e.g. HWLOC_XMLFILE.\n",
		DTPLAN_DISCOVER_DEFAULT_TIMEOUT);
}

static void print_table(const struct dtplan_node *n)
{
	char rate[32];

	printf("Node %s (source %s): %d cores, %d NUMA nodes\n",
	       n->hostname[0] != '\0' ? n->hostname : "(unknown)", n->source, n->cores,
	       n->numa_nodes);
	if (n->note[0] != '\0')
		printf("Note: %s\n", n->note);
	printf("\nGPUs: %d\n", n->n_gpus);
	if (n->n_gpus > 0)
		printf("  %-3s %-7s %-28s %-13s %-5s %-7s %s\n", "#", "VENDOR", "MODEL", "BUS ID",
		       "NUMA", "DOMAIN", "NIC");
	for (int i = 0; i < n->n_gpus; i++) {
		const struct dtplan_node_gpu *g = &n->gpus[i];

		printf("  %-3d %-7s %-28.28s %-13s %-5d %-7d %s\n", i, g->vendor, g->model,
		       g->pci_bus_id[0] != '\0' ? g->pci_bus_id : "-", g->numa, g->domain,
		       g->nic >= 0 && g->nic < n->n_nics ? n->nics[g->nic].name : "-");
	}
	printf("\nNVLink domains: %d\n", n->n_domains);
	if (n->n_domains > 0)
		printf("  %-3s %-13s %-24s %s\n", "#", "BANDWIDTH/GPU", "GPUS", "FABRIC");
	for (int d = 0; d < n->n_domains; d++) {
		const struct dtplan_node_domain *dm = &n->domains[d];
		char list[256] = "";
		size_t len = 0;

		for (int k = 0; k < dm->n_gpus && len < sizeof(list); k++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
						k > 0 ? "," : "", dm->gpus[k]);
		if (dm->bandwidth_bytes_per_s > 0)
			dtplan_format_rate(dm->bandwidth_bytes_per_s, rate, sizeof(rate));
		else
			snprintf(rate, sizeof(rate), "-");
		printf("  %-3d %-13s %-24s %s\n", d, rate, list,
		       dm->fabric_id[0] != '\0' ? dm->fabric_id : "-");
	}
	printf("\nNICs: %d\n", n->n_nics);
	if (n->n_nics > 0)
		printf("  %-3s %-12s %-11s %-13s %s\n", "#", "NAME", "KIND", "BUS ID", "NUMA");
	for (int k = 0; k < n->n_nics; k++) {
		const struct dtplan_node_nic *nic = &n->nics[k];

		printf("  %-3d %-12s %-11s %-13s %d\n", k, nic->name,
		       dtplan_nic_kind_name(nic->kind),
		       nic->pci_bus_id[0] != '\0' ? nic->pci_bus_id : "-", nic->numa);
	}
}

int cmd_node(int argc, char **argv)
{
	struct dtplan_discover_opts o = {0};
	struct dtplan_error err = {0};
	struct dtplan_node *node = NULL;
	bool json = false;
	char *text = NULL;
	int rv;
	const struct cli_opt opts[] = {
		{.name = "xml", .kind = CLI_OPT_STRING, .dest = &o.xml_path},
		{.name = "cache-dir", .kind = CLI_OPT_STRING, .dest = &o.cache_dir},
		CLI_OPT_JSON(&json),
		{.name = "timeout",
		 .kind = CLI_OPT_TIME,
		 .dest = &o.timeout_s,
		 .positive = true,
		 .limit = "must be more than 0"},
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = "node", .usage = cmd_node_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rv))
		goto out;
	node = calloc(1, sizeof(*node));
	if (node == NULL) {
		fprintf(stderr, "dtplan node: out of memory\n");
		rv = CLI_EXIT_FAIL;
		goto out;
	}
	if (dtplan_node_discover(&o, node, &err) != DTPLAN_OK) {
		rv = cli_report("node", &err, false);
		goto out;
	}
	if (json) {
		if (dtplan_node_to_json(node, true, &text, &err) != DTPLAN_OK) {
			rv = cli_report("node", &err, false);
			goto out;
		}
		cli_print_json(text);
	} else {
		print_table(node);
	}
	rv = CLI_EXIT_OK;
out:
	free(node);
	return rv;
}
