/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_plan.c: cost of dtplan_plan_create() from 8 to 131,072 GPUs.
 *
 * Not a test: `make bench` builds and runs it.  For each GPU count it plans
 * a model several times and prints the median wall time and the process's
 * peak resident memory (getrusage ru_maxrss) so far.
 *
 * The global batch grows with the job (two sequences per GPU, at least
 * 1024), as it does in practice: with a fixed batch, large GPU counts leave
 * only a handful of splits (DP cannot exceed the batch) and the search
 * measured would be trivial.
 *
 * Three searches per GPU count: the default (interleaved 1F1B searched,
 * ZeRO-Offload only when nothing fits), fp8 with Megatron-LM's memory count,
 * and every candidate with ZeRO-Offload (offload=yes), so that every
 * dimension of the search is timed.
 */
#include "config.h"

#include "dtplan.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPEATS 7

int main(int argc, char **argv)
{
	const char *model = argc > 1 ? argv[1] : "llama2-70b";
	struct dtplan_request req;
	struct dtplan_error err = {0};
	double t[REPEATS];
	char buf[1024];

	dtplan_request_init(&req);
	if (dtplan_model_parse(model, &req.model, &err) != DTPLAN_OK) {
		fprintf(stderr, "bench_plan: %s\n", dtplan_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	printf("model %s, h100-sxm, 8 GPUs per node, %d runs per row\n\n", req.model.name, REPEATS);
	printf("%-14s %8s %8s %12s %10s %10s %12s %12s\n", "search", "GPUs", "batch", "median ms",
	       "min ms", "max ms", "considered", "peak RSS MiB");
	for (int k = 0; k < 3 * 8; k++) {
		static const char *const names[] = {"default", "fp8, megatron", "offload=yes"};
		int gpus = 8 << (2 * (k % 8));

		struct dtplan_plan *p = NULL;
		size_t considered = 0;
		enum dtplan_err rv = DTPLAN_OK;

		req.gpus = gpus;
		req.global_batch = gpus * 2 > 1024 ? gpus * 2 : 1024;
		req.precision = k / 8 == 1 ? DTPLAN_PRECISION_FP8 : DTPLAN_PRECISION_BF16;
		req.framework = k / 8 == 1 ? DTPLAN_FRAMEWORK_MEGATRON : DTPLAN_FRAMEWORK_DEEPSPEED;
		req.offload = k / 8 == 2 ? 1 : -1;
		for (int i = 0; i < REPEATS; i++) {
			double t0 = bench_now();

			rv = dtplan_plan_create(&req, NULL, &p, &err);
			t[i] = (bench_now() - t0) * 1e3;
			if (p != NULL)
				considered = p->n_considered;
			dtplan_plan_destroy(p);
			p = NULL;
		}
		qsort(t, REPEATS, sizeof(t[0]), bench_cmp_double);
		printf("%-14s %8d %8d %12.3f %10.3f %10.3f %12zu %12.1f%s\n", names[k / 8], gpus,
		       req.global_batch, t[REPEATS / 2], t[0], t[REPEATS - 1], considered,
		       bench_peak_rss_mib(), rv == DTPLAN_OK ? "" : "  (no fit)");
	}
	return 0;
}
