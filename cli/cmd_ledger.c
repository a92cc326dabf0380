/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_ledger.c: dtplan ledger: memory per GPU for one parallel layout.
 */
#include "config.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define CMD "ledger"

void cmd_ledger_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan ledger --model SPEC --gpus N [--tp T] [--pp P] [--zero 0|1|2|3]\n"
		"                     [--no-master-copy] [--seq S] [--micro-batch B]\n"
		"                     [--recompute none|selective|full] [--json]\n\n"
		"Shows the memory each GPU needs: weights, gradients, optimizer state and\n"
		"activations, for mixed-precision Adam.  DP is N / (T x P).\n\n"
		"  --model SPEC         preset name, config.json path, "
		"layers=..,hidden=..,heads=..\n"
		"                       or a size such as 7B\n"
		"  --gpus N             GPUs in the job\n"
		"  --tp T               tensor-parallel degree, divides the heads (default 1)\n"
		"  --pp P               pipeline stages (default 1)\n"
		"  --zero Z             ZeRO stage 0-3, sharded over DP (default 0)\n"
		"  --no-master-copy     12 bytes per parameter instead of 16\n"
		"  --seq S              sequence length for activations (default 4096, 0: none)\n"
		"  --micro-batch B      sequences per micro-batch (default 1)\n"
		"  --recompute R        none, selective, fine or full (default none)\n"
		"  --json               print JSON (schema " CLI_LEDGER_SCHEMA
		") instead of a table\n"
		"Stage 0 of a 1F1B pipeline holds P micro-batches of activations.\n");
}

static void print_text(const struct dtplan_model *m, const struct dtplan_ledger_in *in,
		       const struct dtplan_ledger *l)
{
	const struct {
		const char *name;
		double v;
	} rows[] = {
		{"weights", l->weights},     {"gradients", l->gradients},
		{"optimizer", l->optimizer}, {"activations", l->activations},
		{"total", l->total},
	};
	char a[32], b[32];

	printf("dtplan ledger: %s, %s parameters, TP %d x PP %d x DP %d, ZeRO-%d%s\n", m->name,
	       dtplan_format_count(m->params, a, sizeof(a)), in->tp, in->pp, in->dp, in->zero,
	       in->no_master_copy ? ", no master copy" : "");
	printf("seq %d, micro-batch %d, recompute %s, %s parameters per GPU\n\n", in->seq,
	       in->micro_batch, dtplan_recompute_name(in->recompute),
	       dtplan_format_count(l->params_per_gpu, b, sizeof(b)));
	printf("%-12s %14s %18s\n", "part", "per GPU", "bytes");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		printf("%-12s %14s %18.0f\n", rows[i].name,
		       dtplan_format_bytes(rows[i].v, a, sizeof(a)), rows[i].v);
}

static int print_json(const struct dtplan_model *m, const struct dtplan_ledger_in *in,
		      const struct dtplan_ledger *l)
{
	json_t *root;

	root = json_pack("{s:s, s:o, s:i, s:i, s:i, s:i, s:b, s:i, s:i, s:s, s:o, "
			 "s:{s:o, s:o, s:o, s:o, s:o}}",
			 "model", m->name, "params", cli_json_number(m->params), "tp", in->tp, "pp",
			 in->pp, "dp", in->dp, "zero", in->zero, "no_master_copy",
			 (int)in->no_master_copy, "seq", in->seq, "micro_batch", in->micro_batch,
			 "recompute", dtplan_recompute_name(in->recompute), "params_per_gpu",
			 cli_json_number(l->params_per_gpu), "bytes_per_gpu", "weights",
			 cli_json_number(l->weights), "gradients", cli_json_number(l->gradients),
			 "optimizer", cli_json_number(l->optimizer), "activations",
			 cli_json_number(l->activations), "total", cli_json_number(l->total));
	return cli_json_print(CMD, cli_json_schema(root, CLI_LEDGER_SCHEMA));
}

int cmd_ledger(int argc, char **argv)
{
	struct dtplan_ledger_in in = {.tp = 1, .pp = 1, .seq = 4096, .micro_batch = 1};
	struct dtplan_error err = {0};
	struct dtplan_model model;
	struct dtplan_ledger l;
	const char *spec = NULL;
	int gpus = 0, rc;
	bool json = false;
	const struct cli_opt opts[] = {
		CLI_OPT_MODEL(&spec),
		CLI_OPT_GPUS(&gpus, 1 << 24, true),
		CLI_OPT_TP(&in.tp, 1 << 16),
		CLI_OPT_PP(&in.pp),
		CLI_OPT_ZERO(&in.zero),
		{.name = "no-master-copy", .kind = CLI_OPT_FLAG, .dest = &in.no_master_copy},
		CLI_OPT_SEQ(&in.seq, 0),
		CLI_OPT_MICRO_BATCH(&in.micro_batch),
		CLI_OPT_RECOMPUTE(&in.recompute, NULL),
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_ledger_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (dtplan_model_parse(spec, &model, &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "--model");
		return cli_report(CMD, &err, true);
	}
	if (dtplan_ledger_layout(gpus, in.tp, in.pp, &in.dp, &err) != DTPLAN_OK)
		return cli_usage_error(CMD, "%s", err.text);
	/* the training rules' model clauses; they name the degree, here an
	 * option */
	if (dtplan_split_check_model(&model, &in.split, &err) != DTPLAN_OK) {
		char degree[16];

		snprintf(degree, sizeof(degree), "%.15s", err.source);
		snprintf(err.source, sizeof(err.source), "--%s", degree);
		return cli_report(CMD, &err, true);
	}
	in.model = &model;
	in.num_microbatches = in.pp;
	in.sequence_parallel = in.tp > 1;
	if (dtplan_ledger_compute(&in, &l, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	if (json)
		return print_json(&model, &in, &l);
	print_text(&model, &in, &l);
	return CLI_EXIT_OK;
}
