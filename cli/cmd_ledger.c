/*
 * cmd_ledger.c: dtplan ledger: memory per GPU for one parallel layout.
 */
#include "config.h"

#include "cli.h"

#include <getopt.h>
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
		"  --model SPEC         preset name, config.json path, layers=..,hidden=..,heads=..\n"
		"                       or a size such as 7B\n"
		"  --gpus N             GPUs in the job\n"
		"  --tp T               tensor-parallel degree, divides the heads (default 1)\n"
		"  --pp P               pipeline stages (default 1)\n"
		"  --zero Z             ZeRO stage 0-3, sharded over DP (default 0)\n"
		"  --no-master-copy     12 bytes per parameter instead of 16\n"
		"  --seq S              sequence length for activations (default 4096, 0: none)\n"
		"  --micro-batch B      sequences per micro-batch (default 1)\n"
		"  --recompute R        none, selective or full (default none)\n"
		"  --json               print JSON instead of a table\n"
		"Stage 0 of a 1F1B pipeline holds P micro-batches of activations.\n");
}

static void print_text(const struct dtplan_model *m, const struct dtplan_ledger_in *in,
		       const struct dtplan_ledger *l)
{
	const struct {
		const char *name;
		double v;
	} rows[] = {
		{"weights", l->weights},         {"gradients", l->gradients},
		{"optimizer", l->optimizer},     {"activations", l->activations},
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

static void print_json(const struct dtplan_model *m, const struct dtplan_ledger_in *in,
		       const struct dtplan_ledger *l)
{
	printf("{\"model\": ");
	cli_json_string(stdout, m->name);
	printf(", \"params\": %.17g, \"tp\": %d, \"pp\": %d, \"dp\": %d, \"zero\": %d, "
	       "\"no_master_copy\": %s, \"seq\": %d, \"micro_batch\": %d, \"recompute\": \"%s\", "
	       "\"params_per_gpu\": %.17g, \"bytes_per_gpu\": {\"weights\": %.17g, "
	       "\"gradients\": %.17g, \"optimizer\": %.17g, \"activations\": %.17g, "
	       "\"total\": %.17g}}\n",
	       m->params, in->tp, in->pp, in->dp, in->zero, in->no_master_copy ? "true" : "false",
	       in->seq, in->micro_batch, dtplan_recompute_name(in->recompute), l->params_per_gpu,
	       l->weights, l->gradients, l->optimizer, l->activations, l->total);
}

int cmd_ledger(int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, NULL, 'm'},
		{"gpus", required_argument, NULL, 'g'},
		{"tp", required_argument, NULL, 't'},
		{"pp", required_argument, NULL, 'p'},
		{"zero", required_argument, NULL, 'z'},
		{"no-master-copy", no_argument, NULL, 'n'},
		{"seq", required_argument, NULL, 's'},
		{"micro-batch", required_argument, NULL, 'b'},
		{"recompute", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct dtplan_ledger_in in = {.tp = 1, .pp = 1, .seq = 4096, .micro_batch = 1};
	struct dtplan_error err = {0};
	struct dtplan_model model;
	struct dtplan_ledger l;
	const char *spec = NULL;
	int gpus = 0, c, rc = 0, kv;
	bool json = false;

	opterr = 0;
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			spec = optarg;
			break;
		case 'g':
			rc = cli_int(CMD, "--gpus", optarg, 1, 1 << 24, &gpus);
			break;
		case 't':
			rc = cli_int(CMD, "--tp", optarg, 1, 1 << 16, &in.tp);
			break;
		case 'p':
			rc = cli_int(CMD, "--pp", optarg, 1, 1 << 16, &in.pp);
			break;
		case 'z':
			rc = cli_int(CMD, "--zero", optarg, 0, 3, &in.zero);
			break;
		case 'n':
			in.no_master_copy = true;
			break;
		case 's':
			rc = cli_int(CMD, "--seq", optarg, 0, 1 << 24, &in.seq);
			break;
		case 'b':
			rc = cli_int(CMD, "--micro-batch", optarg, 1, 1 << 20, &in.micro_batch);
			break;
		case 'r':
			if (dtplan_recompute_parse(optarg, &in.recompute, &err) != DTPLAN_OK)
				rc = cli_usage_error(CMD, "--recompute: %s", err.text);
			break;
		case 'j':
			json = true;
			break;
		default:
			rc = cli_bad_option(CMD, c, optopt, argv, optind);
			break;
		}
	}
	if (rc == 0)
		rc = cli_no_operands(CMD, argc, argv, optind);
	if (rc != 0)
		return rc;
	if (spec == NULL)
		return cli_usage_error(CMD, "--model is required");
	if (gpus == 0)
		return cli_usage_error(CMD, "--gpus is required");
	if (dtplan_model_parse(spec, &model, &err) != DTPLAN_OK) {
		if (err.source[0] == '\0')
			snprintf(err.source, sizeof(err.source), "--model");
		return cli_report(CMD, &err, true);
	}
	if (dtplan_ledger_layout(gpus, in.tp, in.pp, &in.dp, &err) != DTPLAN_OK)
		return cli_usage_error(CMD, "%s", err.text);
	kv = model.kv_heads > 0 ? model.kv_heads : model.heads;
	if (model.heads % in.tp != 0 || kv % in.tp != 0)
		return cli_usage_error(CMD,
				       "--tp %d does not divide the %d attention heads and %d "
				       "key/value heads of %s",
				       in.tp, model.heads, kv, model.name);
	in.model = &model;
	in.num_microbatches = in.pp;
	in.sequence_parallel = in.tp > 1;
	if (dtplan_ledger_compute(&in, &l, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	if (json)
		print_json(&model, &in, &l);
	else
		print_text(&model, &in, &l);
	return CLI_EXIT_OK;
}
