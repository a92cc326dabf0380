/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_segment.c: dtplan segment: Slurm's --segment for a job on
 * topology/block, from the plan made at submission (issue 33).  What
 * etc/cli_filter.lua runs in sbatch, as the user, to set --segment.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "segment"

void cmd_segment_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan segment --model SPEC --gpus N [--gpus-per-node G] [--gpu TYPE]\n"
		"                      [--train SPEC] [--topology FILE | --block-nodes B]\n"
		"                      [--site FILE] [--json]\n\n"
		"Plans the model on N GPUs as the preview at sbatch does (no allocation), and\n"
		"says the --segment that keeps its groups whole inside the blocks of Slurm's\n"
		"topology/block: the nodes one expert group (TP x EP) and one model-parallel\n"
		"group (TP x CP x PP) span, and the largest segment that divides the job's\n"
		"nodes, fits a block and holds whole groups.  None when no group spans nodes,\n"
		"when the site has no blocks, or when no such segment exists.\n\n"
		"  --model SPEC         preset name, config.json path, "
		"layers=..,hidden=..,heads=..\n"
		"  --gpus N             GPUs in the job (a multiple of --gpus-per-node)\n"
		"  --gpus-per-node G    GPUs per node (default 8)\n"
		"  --gpu TYPE           GPU type from the catalog (default: the site's, else\n"
		"                       h100-sxm)\n"
		"  --train SPEC         the --dt-train keys (tp=, pp=, ep=, cp=, precision=, ...)\n"
		"  --topology FILE      Slurm's topology.conf or topology.yaml: its blocks\n"
		"                       (BlockSizes' first, else the first block's nodes)\n"
		"  --block-nodes B      nodes per block, without a topology file\n"
		"  --site FILE          dtplan.conf site file (GPU type, links, thresholds)\n"
		"  --json               print JSON (schema " CLI_SEGMENT_SCHEMA ")\n"
		"Exit status 1 when nothing fits on N GPUs.\n");
}

int cmd_segment(int argc, char **argv)
{
	struct dtplan_config config;
	struct dtplan_request req;
	struct dtplan_error err = {0};
	struct dtplan_topology *t = NULL;
	struct dtplan_plan *plan = NULL;
	struct dtplan_segment seg;
	const char *model = NULL, *train = NULL, *topology = NULL;
	struct dtplan_gpu gpu;
	bool json = false, have_gpu = false, have_gpn = false;
	int gpus = 0, gpn = 8, blocks = 0, rc;
	size_t block_nodes = 0, nodes;
	const struct cli_opt opts[] = {
		CLI_OPT_MODEL(&model),
		CLI_OPT_GPUS(&gpus, 1 << 20, true),
		CLI_OPT_GPUS_PER_NODE(&gpn, &have_gpn),
		{.name = "gpu", .kind = CLI_OPT_GPU, .dest = &gpu, .seen = &have_gpu},
		{.name = "train", .kind = CLI_OPT_STRING, .dest = &train},
		CLI_OPT_TOPOLOGY(&topology, true),
		{.name = "block-nodes",
		 .kind = CLI_OPT_INT,
		 .dest = &blocks,
		 .min = 1,
		 .max = 1 << 20},
		CLI_OPT_SITE(&config),
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_segment_usage, .opts = opts};

	dtplan_config_init(&config);
	dtplan_request_init(&req);
	if (!cli_parse(&cs, argc, argv, &rc))
		goto out;
	if (topology != NULL && blocks > 0) {
		rc = cli_usage_error(CMD, "--topology and --block-nodes: give one");
		goto out;
	}
	if (gpus % gpn != 0) {
		rc = cli_usage_error(CMD, "--gpus %d is not a whole number of %d-GPU nodes", gpus,
				     gpn);
		goto out;
	}
	/* the request as the plugin's preview makes it (plugin/opts.c) */
	dtplan_request_apply_config(&req, &config);
	if (have_gpu) {
		req.gpu = gpu;
		req.gpu_from = DTPLAN_GPU_FROM_USER;
	} else if (config.gpu_type[0] != '\0') {
		const struct dtplan_gpu *g = dtplan_gpu_find(config.gpu_type, &err);

		if (g == NULL) {
			snprintf(err.source, sizeof(err.source), "GpuType");
			rc = cli_report(CMD, &err, true);
			goto out;
		}
		req.gpu = *g;
	}
	if (dtplan_model_parse(model, &req.model, &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "--model");
		rc = cli_report(CMD, &err, true);
		goto out;
	}
	if (train != NULL && dtplan_request_parse_train(&req, train, &err) != DTPLAN_OK) {
		rc = cli_usage_error(CMD, "--train: %s", err.text);
		goto out;
	}
	req.gpus = gpus;
	req.gpus_per_node = gpn;
	nodes = (size_t)(gpus / gpn);
	if (topology != NULL) {
		if (dtplan_topology_parse_file(topology, &t, &err) != DTPLAN_OK) {
			rc = cli_report(CMD, &err, true);
			goto out;
		}
		block_nodes = t->blocks ? t->block_size : 0;
	} else {
		block_nodes = (size_t)blocks;
	}
	if (dtplan_plan_create(&req, NULL, &plan, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	if (dtplan_segment_for(&plan->best, gpn, nodes, block_nodes, &seg, &err) != DTPLAN_OK) {
		rc = cli_report(CMD, &err, false);
		goto out;
	}
	if (json) {
		const struct dtplan_candidate *c = &plan->best;
		json_t *root = json_pack(
			"{s:s, s:i, s:i, s:I, s:o, s:{s:i, s:i, s:i, s:i, s:i}, s:s, s:o, s:I, "
			"s:o, "
			"s:s}",
			"model", req.model.name, "gpus", gpus, "gpus_per_node", gpn, "nodes",
			(json_int_t)nodes, "block_nodes",
			block_nodes > 0 ? json_integer((json_int_t)block_nodes) : json_null(),
			"split", "tp", c->tp, "cp", c->cp > 1 ? c->cp : 1, "pp", c->pp, "dp", c->dp,
			"ep", c->ep > 1 ? c->ep : 1, "rank_order", dtplan_candidate_rank_order(c),
			"expert_group_nodes",
			seg.expert_nodes > 0 ? json_integer((json_int_t)seg.expert_nodes)
					     : json_null(),
			"model_parallel_group_nodes", (json_int_t)seg.model_nodes, "segment",
			seg.segment > 0 ? json_integer((json_int_t)seg.segment) : json_null(),
			"reason", seg.reason);

		rc = cli_json_print(CMD, cli_json_schema(root, CLI_SEGMENT_SCHEMA));
		goto out;
	}
	printf("dtplan segment: %s on %zu node%s of %d GPUs: %s\n", req.model.name, nodes,
	       nodes == 1 ? "" : "s", gpn, seg.reason);
	rc = CLI_EXIT_OK;
out:
	dtplan_plan_destroy(plan);
	dtplan_topology_destroy(t);
	dtplan_config_fini(&config);
	return rc;
}
