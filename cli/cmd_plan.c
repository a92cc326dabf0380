/*
 * cmd_plan.c: dtplan plan: the whole plan for a model on N GPUs, offline.
 */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define CMD "plan"

void cmd_plan_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan plan --model SPEC --gpus N [--gpus-per-node G] [--gpu TYPE]\n"
		"                   [--seq S] [--global-batch B] [--tp T] [--pp P] [--zero Z]\n"
		"                   [--micro-batch B] [--recompute R] [--svg FILE] [--json]\n"
		"                   [--nodes HOSTLIST] [--topology FILE] [--site FILE]\n"
		"                   [--node-xml HOSTLIST=FILE[,...]] [--node-json HOSTLIST=FILE]\n\n"
		"Searches TP, PP, DP, ZeRO stage, micro-batch and recomputation for the model\n"
		"on N GPUs, and prints the fastest plan that fits in memory, why the runner-up\n"
		"lost, and the checkpoint interval.\n\n"
		"  --model SPEC         preset name, config.json path, layers=..,hidden=..,heads=..\n"
		"                       or a size such as 7B\n"
		"  --gpus N             GPUs in the job\n"
		"  --gpus-per-node G    GPUs per node (default 8); with --nodes, the GPUs of\n"
		"                       each node the job holds (default all)\n"
		"  --gpu TYPE           GPU type from the catalog (default h100-sxm)\n"
		"  --seq S              sequence length (default: the model's context length, else 4096)\n"
		"  --global-batch B     sequences per step (default 1024): the plan trains the\n"
		"                       nearest value DP can make, within 5%%; B! for exactly B\n"
		"  --tp T, --pp P, --zero Z, --micro-batch B, --recompute none|selective|full\n"
		"                       pin that choice instead of searching it\n"
		"  --svg FILE           also draw the nodes and GPUs, coloured by pipeline stage\n"
		"  --json               print the plan as JSON (schema %s)\n"
		"  --nodes HOSTLIST     the allocation (\"gpu[01-16]\"): ranks are placed on it\n"
		"                       in topology order; --gpus then defaults to all its GPUs\n"
		"  --topology FILE      Slurm topology.conf (switch tree)\n"
		"  --site FILE          dtplan.conf site file (oversubscription, fabric, thresholds)\n"
		"  --node-xml HOSTLIST=FILE[,HOSTLIST=FILE...]\n"
		"                       hwloc XML inventories of those nodes (repeatable)\n"
		"  --node-json HOSTLIST=FILE\n"
		"                       inventories saved by \"dtplan node --json\" (repeatable)\n"
		"Nodes without an inventory are assumed equal to the first one given (or to\n"
		"generic nodes of --gpus-per-node GPUs), and the plan says so.\n"
		"Exit status 1 when nothing fits: the message names the smallest GPU count that\n"
		"would.\n",
		DTPLAN_PLAN_SCHEMA);
}

static int write_svg(const struct dtplan_plan *p, const char *path)
{
	struct dtplan_error err = {0};
	char *svg = NULL;
	FILE *f;
	int rc = CLI_EXIT_OK;

	if (dtplan_plan_render_svg(p, &svg, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, false);
	f = fopen(path, "w");
	if (f == NULL || fputs(svg, f) == EOF) {
		fprintf(stderr, "dtplan %s: --svg: cannot write '%s': %s\n", CMD, path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	if (f != NULL && fclose(f) != 0 && rc == CLI_EXIT_OK) {
		fprintf(stderr, "dtplan %s: --svg: cannot write '%s': %s\n", CMD, path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	free(svg);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, 'm'},
		{"gpus", required_argument, NULL, 'g'},
		{"gpus-per-node", required_argument, NULL, 'G'},
		{"gpu", required_argument, NULL, 'T'},
		{"seq", required_argument, NULL, 's'},
		{"global-batch", required_argument, NULL, 'B'},
		{"tp", required_argument, NULL, 't'},
		{"pp", required_argument, NULL, 'p'},
		{"zero", required_argument, NULL, 'z'},
		{"micro-batch", required_argument, NULL, 'b'},
		{"recompute", required_argument, NULL, 'r'},
		{"svg", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"nodes", required_argument, NULL, 'n'},
		{"topology", required_argument, NULL, 'o'},
		{"site", required_argument, NULL, 'c'},
		{"node-xml", required_argument, NULL, 'x'},
		{"node-json", required_argument, NULL, 'J'},
		{NULL, 0, NULL, 0},
	};
	struct dtplan_request req;
	struct dtplan_error err = {0};
	struct dtplan_plan *plan = NULL;
	const struct dtplan_gpu *gpu;
	const char *spec = NULL, *svg = NULL, *nodes = NULL, *topology = NULL, *site = NULL;
	struct cli_cluster cluster;
	bool placed, gpus_per_node_given = false;
	enum dtplan_recompute rcmp;
	char *text = NULL;
	int c, rc = 0;
	bool json = false;

	dtplan_request_init(&req);
	cli_cluster_init(&cluster);
	/* the site file first, so that flags override its values */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		if (c == 'c')
			site = optarg;
	if (site != NULL) {
		rc = cli_cluster_site(CMD, &cluster, site);
		if (rc != 0)
			goto out;
		dtplan_request_apply_config(&req, &cluster.config);
	}
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			spec = optarg;
			break;
		case 'g':
			rc = cli_int(CMD, "--gpus", optarg, 1, 1 << 20, &req.gpus);
			break;
		case 'G':
			rc = cli_int(CMD, "--gpus-per-node", optarg, 1, 1024, &req.gpus_per_node);
			gpus_per_node_given = true;
			break;
		case 'T':
			gpu = dtplan_gpu_find(optarg, &err);
			if (gpu == NULL) {
				rc = cli_usage_error(CMD, "--gpu: %s", err.text);
			} else {
				req.gpu = *gpu;
				req.gpu_from = DTPLAN_GPU_FROM_USER; /* not replaced by --node-json */
			}
			break;
		case 's':
			rc = cli_int(CMD, "--seq", optarg, 1, 1 << 24, &req.seq);
			break;
		case 'B':
			if (dtplan_parse_global_batch(optarg, "--global-batch", &req, &err) !=
			    DTPLAN_OK)
				rc = cli_usage_error(CMD, "%s", err.text);
			break;
		case 't':
			rc = cli_int(CMD, "--tp", optarg, 1, 1024, &req.tp);
			break;
		case 'p':
			rc = cli_int(CMD, "--pp", optarg, 1, 1 << 16, &req.pp);
			break;
		case 'z':
			rc = cli_int(CMD, "--zero", optarg, 0, 3, &req.zero);
			break;
		case 'b':
			rc = cli_int(CMD, "--micro-batch", optarg, 1, 1 << 20, &req.micro_batch);
			break;
		case 'r':
			if (dtplan_recompute_parse(optarg, &rcmp, &err) != DTPLAN_OK)
				rc = cli_usage_error(CMD, "--recompute: %s", err.text);
			req.recompute = (int)rcmp;
			break;
		case 'S':
			svg = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 'o':
			topology = optarg;
			break;
		case 'c':
			break;
		case 'x':
		case 'J':
			rc = cli_cluster_add_specs(CMD, &cluster, c == 'x' ? "--node-xml" : "--node-json",
						   optarg, c == 'J');
			break;
		default:
			rc = cli_bad_option(CMD, c, optopt, argv, optind);
			break;
		}
	}
	if (rc == 0)
		rc = cli_no_operands(CMD, argc, argv, optind);
	if (rc != 0)
		goto out;
	placed = nodes != NULL || cluster.n_specs > 0;
	if (spec == NULL) {
		rc = cli_usage_error(CMD, "--model is required");
		goto out;
	}
	if (req.gpus == 0 && !placed) {
		rc = cli_usage_error(CMD, "--gpus is required (or --nodes)");
		goto out;
	}
	if (topology != NULL && !placed) {
		rc = cli_usage_error(CMD, "--topology needs --nodes or --node-xml/--node-json");
		goto out;
	}
	if (dtplan_model_parse(spec, &req.model, &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "--model");
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	if (placed) {
		rc = cli_cluster_load(CMD, &cluster, nodes, topology);
		if (rc != 0)
			goto out;
		/* like a job holding G of each node's GPUs */
		if (gpus_per_node_given)
			cluster.cl.gpus_per_node = req.gpus_per_node;
	}
	if (dtplan_plan_create(&req, placed ? &cluster.cl : NULL, &plan, &err) != DTPLAN_OK) {
		/* the library names a pinned choice by its field: show the flag */
		if (err.code == DTPLAN_ERR_INVAL && err.source[0] != '\0' && err.source[0] != '-') {
			char field[64];

			snprintf(field, sizeof(field), "%.60s", err.source);
			snprintf(err.source, sizeof(err.source), "--%s", field);
		}
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	if (cli_cluster_note(&cluster, plan) != CLI_EXIT_OK) {
		rc = cli_usage_error(CMD, "out of memory");
		goto out;
	}
	if (json)
		rc = dtplan_plan_to_json(plan, true, &text, &err);
	else
		rc = dtplan_plan_render_text(plan, &text, &err);
	if (rc != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	fputs(text, stdout);
	if (json)
		fputc('\n', stdout);
	rc = svg != NULL ? write_svg(plan, svg) : CLI_EXIT_OK;
out:
	free(text);
	dtplan_plan_destroy(plan);
	cli_cluster_fini(&cluster);
	return rc;
}
