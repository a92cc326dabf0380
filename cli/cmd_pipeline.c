/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_pipeline.c: dtplan pipeline: simulate a 1F1B schedule and draw it.
 */
#include "config.h"

#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMD "pipeline"

/* Widest chart drawn, in time slots of one forward. */
#define MAX_SLOTS 240

void cmd_pipeline_usage(FILE *out)
{
	fprintf(out,
		"Usage: dtplan pipeline --stages P --microbatches M [--backward-ratio R]\n"
		"                       [--chunks V] [--json]\n\n"
		"Simulates one training step of a 1F1B pipeline (interleaved with V chunks)\n"
		"and prints the bubble, the makespan and a chart of the schedule.\n\n"
		"  --stages P           pipeline stages\n"
		"  --microbatches M     micro-batches per step (a multiple of P when V > 1)\n"
		"  --backward-ratio R   backward time / forward time (default 2)\n"
		"  --chunks V           model chunks per stage, interleaved schedule (default 1)\n"
		"  --json               print JSON (schema " CLI_PIPELINE_SCHEMA
		") instead of text\n"
		"Times are in units of one micro-batch forward on one stage.  In the chart\n"
		"F3 is the forward and B3 the backward of micro-batch 3 (of one chunk when\n"
		"V > 1); '.' is idle.\n");
}

static int digits(int n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/* One row per stage, one cell per forward-long time slot. */
static void print_chart(const struct dtplan_pipeline_in *in, const struct dtplan_pipeline *p)
{
	double unit = in->forward / in->chunks; /* one chunk's forward */
	int slots = (int)ceil(p->makespan / unit - 1e-9);
	int w = 1 + digits(in->microbatches - 1);
	size_t i = 0;

	if (slots > MAX_SLOTS) {
		printf("\n(chart omitted: %d time slots, more than %d)\n", slots, MAX_SLOTS);
		return;
	}
	printf("\nschedule (one column per forward time of one chunk):\n");
	for (int s = 0; s < in->stages; s++) {
		int t = 0;

		printf("stage %*d |", digits(in->stages - 1), s);
		for (; i < p->n_ops && p->ops[i].stage == s; i++) {
			const struct dtplan_pipeline_op *op = &p->ops[i];
			int a = (int)floor(op->start / unit + 1e-9);
			int b = (int)ceil(op->end / unit - 1e-9);

			for (; t < a; t++)
				printf(" %-*s", w, ".");
			for (; t < b; t++)
				printf(" %c%-*d", op->backward ? 'B' : 'F', w - 1, op->microbatch);
		}
		for (; t < slots; t++)
			printf(" %-*s", w, ".");
		printf("\n");
	}
}

static int print_json(const struct dtplan_pipeline_in *in, const struct dtplan_pipeline *p)
{
	double closed =
		in->chunks > 1
			? dtplan_bubble_ratio_interleaved(in->stages, in->microbatches, in->chunks)
			: dtplan_bubble_fraction(in->stages, in->microbatches);
	json_t *root;

	root = json_pack("{s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o}", "stages", in->stages,
			 "microbatches", in->microbatches, "chunks", in->chunks, "backward_ratio",
			 cli_json_number(in->backward / in->forward), "makespan",
			 cli_json_number(p->makespan), "ideal", cli_json_number(p->ideal),
			 "bubble_fraction", cli_json_number(p->bubble_fraction), "closed_form",
			 cli_json_number(closed));
	return cli_json_print(CMD, cli_json_schema(root, CLI_PIPELINE_SCHEMA));
}

int cmd_pipeline(int argc, char **argv)
{
	struct dtplan_pipeline_in in = {.chunks = 1, .forward = 1.0, .backward = 2.0};
	struct dtplan_pipeline *p = NULL;
	struct dtplan_error err = {0};
	int rc;
	bool json = false;
	const struct cli_opt opts[] = {
		{.name = "stages",
		 .kind = CLI_OPT_INT,
		 .dest = &in.stages,
		 .min = 1,
		 .max = 65536,
		 .required = true},
		{.name = "microbatches",
		 .kind = CLI_OPT_INT,
		 .dest = &in.microbatches,
		 .min = 1,
		 .max = 1 << 20,
		 .required = true},
		{.name = "backward-ratio",
		 .kind = CLI_OPT_DOUBLE,
		 .dest = &in.backward,
		 .min = 0.01,
		 .max = 100.0},
		{.name = "chunks", .kind = CLI_OPT_INT, .dest = &in.chunks, .min = 1, .max = 1024},
		CLI_OPT_JSON(&json),
		CLI_OPT_END,
	};
	const struct cli_spec cs = {.cmd = CMD, .usage = cmd_pipeline_usage, .opts = opts};

	if (!cli_parse(&cs, argc, argv, &rc))
		return rc;
	if (in.chunks > 1 && in.microbatches % in.stages != 0)
		return cli_usage_error(CMD,
				       "--microbatches %d must be a multiple of --stages %d with "
				       "--chunks %d",
				       in.microbatches, in.stages, in.chunks);
	if ((double)in.stages * in.microbatches * in.chunks > 5e6)
		return cli_usage_error(CMD,
				       "--stages %d x --microbatches %d x --chunks %d is too large "
				       "to simulate (at most 5000000)",
				       in.stages, in.microbatches, in.chunks);
	if (dtplan_pipeline_simulate(&in, &p, &err) != DTPLAN_OK)
		return cli_report(CMD, &err, true);
	rc = CLI_EXIT_OK;
	if (json) {
		rc = print_json(&in, p);
	} else {
		printf("dtplan pipeline: %d stages, %d micro-batches, %d chunk%s, backward = %g x "
		       "forward\n\n",
		       in.stages, in.microbatches, in.chunks, in.chunks > 1 ? "s" : "",
		       in.backward / in.forward);
		printf("%-16s %12s\n", "quantity", "value");
		printf("%-16s %12.3f forwards\n", "makespan", p->makespan / in.forward);
		printf("%-16s %12.3f forwards\n", "ideal", p->ideal / in.forward);
		printf("%-16s %11.2f%%\n", "bubble", p->bubble_fraction * 100.0);
		if (in.chunks > 1)
			printf("%-16s %11.2f%% of compute, (p-1)/(v m)\n", "closed form",
			       dtplan_bubble_ratio_interleaved(in.stages, in.microbatches,
							       in.chunks) *
				       100.0);
		else
			printf("%-16s %11.2f%% of the step, (p-1)/(m+p-1)\n", "closed form",
			       dtplan_bubble_fraction(in.stages, in.microbatches) * 100.0);
		print_chart(&in, p);
	}
	dtplan_pipeline_destroy(p);
	return rc;
}
