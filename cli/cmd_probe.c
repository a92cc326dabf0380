/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_probe.c: "dtplan probe": the prolog's measurement, run by the job's
 * user in a step, one task per node:
 *
 *     srun -N8 --ntasks-per-node=1 dtplan probe [--json] [--budget S]
 *
 * The nodes meet as the prolog's do (probes/rendezvous.c), with the step's
 * node list, the step as the session and the user's own MUNGE credentials
 * (only the user's uid is taken); the first node prints the measurements.
 */
#include "config.h"

#include "cli.h"
#include "dtprobes.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "probe"

/* A user's run listens where a user may: from 1024 up.  Its messages are
 * credentials only that user decodes, and a node sends nothing before the
 * listener it reached proved to be the user's own probe (probes/net.c). */
#define USER_PORT_LO 30500
#define USER_PORT_HI 30599
#define PRIVILEGED_BELOW 1024 /* IPPORT_RESERVED */

void cmd_probe_usage(FILE *out)
{
	fprintf(out,
		"Usage: srun -N N --ntasks-per-node=1 dtplan probe [--json] [--budget TIME]\n"
		"                   [--output FILE] [--topology FILE] [--site FILE]\n"
		"                   [--node-xml PATTERN] [--ports LO-HI] [--interface IF]\n"
		"                   [--munge-socket PATH]\n\n"
		"Measures the step's nodes as the prolog does for a job: every node's\n"
		"inventory, latency and bandwidth inside and across leaf switches, the\n"
		"uplinks' oversubscription under load and stragglers.  Run it as one task\n"
		"per node; the first node prints the measurements, the others nothing.\n\n"
		"  --json               print the measurements as JSON (the plan's\n"
		"                       \"measurements\" object)\n"
		"  --budget TIME        the whole run, at most (default 5s)\n"
		"  --output FILE        also save the measurement file, with the inventories,\n"
		"                       for \"dtplan plan --measurements FILE\"\n"
		"  --topology FILE      Slurm's topology.conf: group the links by leaf switch\n"
		"  --site FILE          dtplan.conf: ProbePorts, ProbeFanout, ProbeInterface,\n"
		"                       NodeXml, MungeSocket\n"
		"  --node-xml PATTERN   read each node's hwloc XML (%%n: its name) instead of\n"
		"                       discovering it\n"
		"  --ports LO-HI        the listener ports (default: ProbePorts as root, or\n"
		"                       when they start at 1024 or above; else 30500-30599)\n"
		"  --interface IF       probe over this interface (the training fabric)\n"
		"  --munge-socket PATH  munged's socket (default: libmunge's)\n"
		"Outside a Slurm step (no SLURM_STEP_NODELIST and SLURM_NODEID) it fails with\n"
		"exit status 2.\n");
}

struct probe_args {
	struct dtplan_config config;
	const char *budget, *output, *topology, *site, *node_xml, *ports, *interface, *munge;
	bool json;
	char (*hosts)[64];
	size_t n_hosts;
	uint32_t self;
};

/* This node's inventory: the pattern's file, else live. */
static enum dtplan_err discover(void *arg, struct dtplan_node *out, struct dtplan_error *err)
{
	const struct probe_args *a = arg;
	struct dtplan_discover_opts d = {0};
	char path[4096];

	if (a->config.node_xml[0] != '\0') {
		if (dtplan_inventory_node_xml(a->config.node_xml, a->hosts[a->self], path,
					      sizeof(path), err) != DTPLAN_OK)
			return err != NULL ? err->code : DTPLAN_ERR_INVAL;
		return dtplan_node_from_xml(path, out, err);
	}
	d.hostname = a->hosts[a->self];
	d.timeout_s = 0.3 * a->config.probe_budget_s;
	return dtplan_node_discover(&d, out, err);
}

/* The site file, then the flags over it (as the plugin's arguments). */
static int settings(struct probe_args *a)
{
	struct dtplan_error err = {0};
	char *argv[5];
	char b[300], x[4200], p[64], i[64], m[4200];
	int n = 0;

	if (a->site != NULL && dtplan_config_parse_file(&a->config, a->site, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	if (a->budget != NULL && snprintf(b, sizeof(b), "probe_budget=%s", a->budget) > 0)
		argv[n++] = b;
	if (a->node_xml != NULL && snprintf(x, sizeof(x), "node_xml=%s", a->node_xml) > 0)
		argv[n++] = x;
	if (a->ports != NULL && snprintf(p, sizeof(p), "probe_ports=%s", a->ports) > 0)
		argv[n++] = p;
	if (a->interface != NULL && snprintf(i, sizeof(i), "probe_interface=%s", a->interface) > 0)
		argv[n++] = i;
	if (a->munge != NULL && snprintf(m, sizeof(m), "munge_socket=%s", a->munge) > 0)
		argv[n++] = m;
	if (dtplan_config_parse_args(&a->config, n, argv, &err) != DTPLAN_OK) {
		/* "argument 'probe_budget=x': ..." names the flag's setting */
		return cli_usage_error(CMD, "%s", err.text);
	}
	return CLI_EXIT_OK;
}

/* The step's nodes and this one's index, from Slurm's environment. */
static int step_nodes(struct probe_args *a, uint32_t *job, uint32_t *session)
{
	const char *list = getenv("SLURM_STEP_NODELIST"), *id = getenv("SLURM_NODEID");
	const char *jid = getenv("SLURM_JOB_ID"), *sid = getenv("SLURM_STEP_ID");
	struct dtplan_error err = {0};
	long v;

	if (list == NULL || id == NULL || jid == NULL || sid == NULL)
		return cli_usage_error(CMD, "not in a Slurm step (SLURM_STEP_NODELIST, "
					    "SLURM_NODEID, SLURM_JOB_ID, SLURM_STEP_ID): run it "
					    "with srun --ntasks-per-node=1");
	if (dtplan_hostlist_expand(list, DTPLAN_HOSTLIST_MAX, &a->hosts, &a->n_hosts, &err) !=
	    DTPLAN_OK)
		return cli_usage_error(CMD, "SLURM_STEP_NODELIST: %s", err.text);
	if (dtplan_parse_long(id, "SLURM_NODEID", 0, (long)a->n_hosts - 1, &v, &err) != DTPLAN_OK)
		return cli_usage_error(CMD, "%s", err.text);
	a->self = (uint32_t)v;
	if (dtplan_parse_long(jid, "SLURM_JOB_ID", 0, UINT32_MAX, &v, &err) != DTPLAN_OK)
		return cli_usage_error(CMD, "%s", err.text);
	*job = (uint32_t)v;
	/* a step id of its own, so that the prolog's session (0) is never this one */
	if (dtplan_parse_long(sid, "SLURM_STEP_ID", 0, UINT32_MAX - 1, &v, &err) != DTPLAN_OK)
		return cli_usage_error(CMD, "%s", err.text);
	*session = (uint32_t)v + 1;
	return CLI_EXIT_OK;
}

static void print_text(const struct dtplan_measurements *m)
{
	char a[32], b[32];

	printf("dtplan probe: %zu of %zu nodes measured in %.2f s (budget %g s)\n", m->n_reported,
	       m->n_nodes, m->elapsed_s, m->budget_s);
	for (int k = 0; k < 2; k++) {
		const struct dtplan_tier *t = k == 0 ? &m->intra : &m->cross;

		if (!t->measured)
			printf("  %-12s not measured\n", k == 0 ? "intra-leaf" : "cross-leaf");
		else
			printf("  %-12s %s, %.1f us one way (%zu links)\n",
			       k == 0 ? "intra-leaf" : "cross-leaf",
			       dtplan_format_rate(t->bandwidth_bytes_per_s, a, sizeof(a)),
			       t->latency_s * 1e6, t->links);
	}
	for (size_t i = 0; i < m->n_uplinks; i++)
		printf("  uplink       %s %.1f:1 (%s over %zu concurrent flows%s)\n",
		       m->uplinks[i].name, m->uplinks[i].oversubscription,
		       dtplan_format_rate(m->uplinks[i].aggregate_bytes_per_s, a, sizeof(a)),
		       m->uplinks[i].flows, m->uplinks[i].saturated ? "" : ", not saturated");
	for (size_t i = 0; i < m->n_stragglers; i++)
		printf("  straggler    %s at %s (tier median %s)\n", m->stragglers[i].node,
		       dtplan_format_rate(m->stragglers[i].bandwidth_bytes_per_s, a, sizeof(a)),
		       dtplan_format_rate(m->stragglers[i].tier_median_bytes_per_s, b, sizeof(b)));
	for (size_t i = 0; i < m->n_missing; i++)
		printf("  missing      %s\n", m->hosts[m->missing[i]]);
	for (size_t i = 0; i < m->n_notes; i++)
		printf("  note         %s\n", m->notes[i]);
	if (m->n_notes_more > 0)
		printf("  note         and %zu more\n", m->n_notes_more);
	if (m->n_links > 0)
		printf("  links        round a -> b: latency one way, bandwidth\n");
	for (size_t i = 0; i < m->n_links; i++) {
		const struct dtplan_link_result *l = &m->links[i];

		printf("    %u %s -> %s: %.1f us, %s%s%s\n", l->round, m->hosts[l->from],
		       m->hosts[l->to], l->latency_s * 1e6,
		       dtplan_format_rate(l->bandwidth_bytes_per_s, a, sizeof(a)),
		       l->flags & DTPLAN_LINK_CONCURRENT ? " (concurrent)" : "",
		       l->flags & DTPLAN_LINK_OK ? "" : " FAILED");
	}
}

int cmd_probe(int argc, char **argv)
{
	struct probe_args a = {0};
	struct dtplan_probe_opts o = {0};
	struct dtplan_measure_file f = {0};
	struct dtplan_topology *topo = NULL;
	struct dtplan_auth *auth = NULL;
	struct dtplan_auth_munge_opts ao = {0};
	struct dtplan_error err = {0};
	char *text = NULL;
	double start = dtplan_probe_clock();
	int rc;
	const struct cli_opt opts[] = {
		CLI_OPT_JSON(&a.json),
		{.name = "budget", .kind = CLI_OPT_STRING, .dest = &a.budget, .once = true},
		{.name = "output", .kind = CLI_OPT_STRING, .dest = &a.output, .once = true},
		CLI_OPT_TOPOLOGY(&a.topology, true),
		{.name = "site", .kind = CLI_OPT_STRING, .dest = &a.site, .once = true},
		{.name = "node-xml", .kind = CLI_OPT_STRING, .dest = &a.node_xml, .once = true},
		{.name = "ports", .kind = CLI_OPT_STRING, .dest = &a.ports, .once = true},
		{.name = "interface", .kind = CLI_OPT_STRING, .dest = &a.interface, .once = true},
		{.name = "munge-socket", .kind = CLI_OPT_STRING, .dest = &a.munge, .once = true},
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_probe_usage, .opts = opts};

	dtplan_config_init(&a.config);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	rc = settings(&a);
	if (rc != 0)
		goto out;
	rc = step_nodes(&a, &o.job_id, &o.session);
	if (rc != 0)
		goto out;
	if (a.self == 0 && a.topology != NULL &&
	    dtplan_topology_parse_file(a.topology, &topo, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	/* the user's messages, for the user's own probes only */
	ao.socket = a.config.munge_socket;
	ao.decoder_uid = getuid();
	ao.ttl_s = dtplan_auth_ttl(a.config.probe_budget_s);
	if (dtplan_auth_munge_create(&ao, &auth, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	o.source = "probe";
	o.n_hosts = a.n_hosts;
	o.hosts = (const char(*)[64])a.hosts;
	o.self = a.self;
	o.uid = getuid(); /* the job's user: only the user's own messages count */
	o.auth = auth;
	o.port_lo = (uint16_t)a.config.probe_ports[0];
	o.port_hi = (uint16_t)a.config.probe_ports[1];
	/* the prolog's ports (below 1024 by default) are root's only */
	if (a.ports == NULL && geteuid() != 0 && o.port_lo < PRIVILEGED_BELOW) {
		o.port_lo = USER_PORT_LO;
		o.port_hi = USER_PORT_HI;
	}
	o.interface = a.config.probe_interface;
	dtplan_probe_params_init(&o.params);
	o.params.budget_s = a.config.probe_budget_s;
	o.params.fanout = (uint32_t)a.config.probe_fanout;
	o.start_s = start;
	o.discover = discover;
	o.discover_arg = &a;
	o.topology = topo;
	if (dtplan_probe_run(&o, &f, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	rc = CLI_EXIT_OK;
	if (a.self != 0)
		goto out;
	if (a.output != NULL) {
		FILE *fp;

		if (dtplan_measure_file_to_json(&f, &text, &err) != DTPLAN_OK) {
			rc = cli_report(CMD, &err, false);
			goto out;
		}
		fp = fopen(a.output, "w");
		if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) != 0) {
			fprintf(stderr, "dtplan %s: --output: cannot write '%s'\n", CMD, a.output);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		free(text);
		text = NULL;
	}
	if (a.json) {
		if (dtplan_measurements_to_json(f.m, true, &text, &err) != DTPLAN_OK) {
			rc = cli_report(CMD, &err, false);
			goto out;
		}
		printf("%s\n", text);
	} else {
		print_text(f.m);
	}
out:
	free(text);
	free(a.hosts);
	dtplan_measure_file_fini(&f);
	dtplan_topology_destroy(topo);
	dtplan_auth_destroy(auth);
	dtplan_config_fini(&a.config);
	return rc;
}
