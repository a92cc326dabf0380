/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deepspeed.c: the plan as a DeepSpeed configuration fragment, or why
 * DeepSpeed cannot run it.
 *
 *   DeepSpeed: train_batch_size = train_micro_batch_size_per_gpu x
 *   gradient_accumulation_steps x data-parallel size, zero_optimization.stage,
 *   bf16.enabled.  Its PipeModelDataParallelTopology orders ranks pipe, data,
 *   model (model fastest): our tp-dp-pp (doc/launchers.md has tp-pp-dp).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>

/* What DeepSpeed's engines refuse is a clause of the rules
 * (dtplan__split_runs(), lib/model/rules.c): its pipeline engine with
 * ZeRO-2/3 or CP, its MoE layers with ZeRO-3. */
const char *dtplan_launch_deepspeed_unsupported(const struct dtplan_plan *p)
{
	if (p == NULL)
		return NULL;
	return dtplan__plan_runs(p, DTPLAN_FRAMEWORK_DEEPSPEED,
				 dtplan__framework(DTPLAN_FRAMEWORK_DEEPSPEED)->runs);
}

enum dtplan_err dtplan_launch_deepspeed_config(const struct dtplan_plan *p, char **out,
					       struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	enum dtplan_err rv;
	struct dtplan__stream t;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	c = &p->best;
	/* Laid out as Jansson's JSON_INDENT(2) would write it; ZeRO-Offload is
	 * DeepSpeed's zero_optimization.offload_optimizer */
	fprintf(t.f,
		"{\n"
		"  \"train_batch_size\": %ld,\n"
		"  \"train_micro_batch_size_per_gpu\": %d,\n"
		"  \"gradient_accumulation_steps\": %d,\n",
		dtplan__plan_global_batch(c), c->micro_batch, c->num_microbatches);
	/* CP alone is Ulysses over the whole world: without an mpu,
	 * DeepSpeedConfig divides the world by sequence_parallel_size for its
	 * batch check, and deepspeed.initialize() builds its (data, sequence)
	 * mesh from the two sizes, sequence fastest as the plan's ranks
	 * (deepspeed/runtime/config.py, deepspeed/__init__.py, edaa722) */
	if (c->cp > 1 && c->tp == 1 && c->pp == 1)
		fprintf(t.f,
			"  \"sequence_parallel_size\": %d,\n"
			"  \"data_parallel_size\": %d,\n",
			c->cp, c->dp);
	fprintf(t.f,
		"  \"zero_optimization\": {\n"
		"    \"stage\": %d%s\n"
		"  },\n"
		"  \"bf16\": {\n"
		"    \"enabled\": true\n"
		"  }\n"
		"}\n",
		c->zero,
		c->offload ? ",\n    \"offload_optimizer\": {\n"
			     "      \"device\": \"cpu\"\n    }"
			   : "");
	return dtplan__stream_finish(&t, out, err);
}
