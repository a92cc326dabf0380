/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * torchtitan.c: the plan as torchtitan options, or why they cannot say it.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>

/* Largest shortfall of the first or last stage tried for torchtitan. */
#define TORCHTITAN_LESS_MAX 16

/* Whether torchtitan's split of layers, with the first and last stage a and
 * b layers short, puts c's stages' layer counts on its ranks. */
static bool torchtitan_split_is(const struct dtplan_candidate *c, int layers, int a, int b)
{
	int v = c->vp > 1 ? c->vp : 1, n = c->pp * v, eff = layers + a + b;
	int base = eff / n, extra = eff % n;

	if (base < 1 || a > base || b > base)
		return false;
	for (int r = 0; r < c->pp; r++) {
		long sum = 0;

		for (int i = r; i < n; i += c->pp)
			sum += base + (i < extra) - (i == 0 ? a : 0) - (i == n - 1 ? b : 0);
		if (sum != dtplan_stage_layers_at(&c->stages, c->pp, r))
			return false;
	}
	return true;
}

/*
 * torchtitan's pipeline split of c's stages: *chunk layers per virtual
 * stage (--parallelism.pipeline_parallel_layers_per_stage), the first and
 * last stage *less_first and *less_last layers short.  torchtitan makes
 * ceil((layers + less_first + less_last) / chunk) virtual stages, pp x vp,
 * of equal effective layers, the remainder one each to the first ones,
 * rank r holding r, r + pp, ..., and refuses a shortfall above a stage's
 * share (_generate_llm_fqn_per_model_part(), torchtitan/distributed/
 * pipeline_parallel.py, b5bcd76).  False when no shortfall up to
 * TORCHTITAN_LESS_MAX makes c's stages.
 */
static bool torchtitan_stages(const struct dtplan_candidate *c, int layers, int *chunk,
			      int *less_first, int *less_last)
{
	int n = c->pp * (c->vp > 1 ? c->vp : 1);

	for (int a = 0; a <= TORCHTITAN_LESS_MAX; a++)
		for (int b = 0; b <= TORCHTITAN_LESS_MAX; b++) {
			int eff = layers + a + b, k = (eff + n - 1) / n;

			if (!torchtitan_split_is(c, layers, a, b) || (eff + k - 1) / k != n)
				continue;
			*chunk = k;
			*less_first = a;
			*less_last = b;
			return true;
		}
	return false;
}

/*
 * Why torchtitan's options cannot say plan p (NULL: they can): what its
 * launcher refuses is a clause of the rules (dtplan__split_runs(),
 * lib/model/rules.c: its mesh's rank order, DDP or FSDP2, its offload, EP
 * and CP, no DualPipe, Float8, fp32 moments, per-op recomputation); its
 * pipeline split is its options' own arithmetic.
 */
static const char *torchtitan_why_not(const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	const char *why = dtplan__plan_runs(p, DTPLAN_FRAMEWORK_TORCHTITAN,
					    dtplan__framework(DTPLAN_FRAMEWORK_TORCHTITAN)->runs);
	int chunk, a, b;

	if (why != NULL)
		return why;
	if (c->pp > 1 && !torchtitan_stages(c, p->request.model.layers, &chunk, &a, &b))
		return "its pipeline split cannot make these stages";
	return NULL;
}

enum dtplan_err dtplan_launch_torchtitan_args(const struct dtplan_plan *p, char **out,
					      struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	const char *why;
	struct dtplan__stream t;
	enum dtplan_err rv;
	long seq;
	int chunk = 0, a = 0, b = 0;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	c = &p->best;
	why = torchtitan_why_not(p);
	if (why != NULL)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "framework", 0,
				     "torchtitan cannot run this plan as it is: %s", why);
	if ((rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	seq = dtplan__plan_seq(p);
	/* DDP (dp_replicate) for ZeRO-0, FSDP2 (dp_shard) for ZeRO-2/3 */
	fprintf(t.f,
		"--parallelism.data_parallel_replicate_degree %d "
		"--parallelism.data_parallel_shard_degree %d "
		"--parallelism.tensor_parallel_degree %d --parallelism.context_parallel_degree %d "
		"--parallelism.pipeline_parallel_degree %d",
		c->zero == 0 ? c->dp : 1, c->zero == 0 ? 1 : c->dp, c->tp, c->cp > 1 ? c->cp : 1,
		c->pp);
	if (c->zero >= 2)
		fprintf(t.f, " --parallelism.fsdp_reshard_after_forward %s",
			c->zero == 3 ? "always" : "never");
	if (c->ep > 1)
		fprintf(t.f, " --parallelism.expert_parallel_degree %d", c->ep);
	if (c->pp > 1) {
		torchtitan_stages(c, p->request.model.layers, &chunk, &a, &b);
		fprintf(t.f,
			" --parallelism.pipeline_parallel_schedule %s "
			"--parallelism.num_pp_microbatches %d "
			"--parallelism.pipeline_parallel_layers_per_stage %d "
			"--parallelism.pipeline_parallel_first_stage_less_layers %d "
			"--parallelism.pipeline_parallel_last_stage_less_layers %d",
			c->vp > 1 ? "Interleaved1F1B" : "1F1B", c->num_microbatches, chunk, a, b);
	}
	/* batches in tokens: the micro-batch of a DP rank and the step's;
	 * torchtitan accumulates the rest (Trainer.__init__, torchtitan/
	 * trainer.py) */
	fprintf(t.f,
		" --training.num_tokens_per_microbatch_per_dp_rank %ld "
		"--training.num_tokens_per_train_step %ld --training.max_context_length %ld",
		(long)c->micro_batch * seq, dtplan__plan_global_batch(c) * seq, seq);
	/* Trainer.Config refuses CUDA graphs with PP, and with EP unless the
	 * model's token dispatcher never waits on the host (trainer.py); the
	 * plan counts no CUDA graphs */
	if (c->pp > 1 || c->ep > 1)
		fputs(" --training.disable_cuda_graphs", t.f);
	/* checkpoints are off by default (BaseCheckpointManager.Config.enable,
	 * components/checkpointer/base.py): the interval alone saves nothing */
	if (dtplan__ckpt_steps(p) > 0)
		fprintf(t.f, " --checkpoint.enable --checkpoint.interval %ld",
			dtplan__ckpt_steps(p));
	/* the activation-checkpoint policy is a subcommand, last
	 * (ActivationCheckpointingConfig, torchtitan/distributed/
	 * activation_checkpoint.py, b5bcd76): selective is its per-op
	 * SelectiveAC, as the plan counted it */
	fputs(c->recompute == DTPLAN_RECOMPUTE_FULL        ? " activation-checkpoint:full"
	      : c->recompute == DTPLAN_RECOMPUTE_SELECTIVE ? " activation-checkpoint:selective"
							   : " activation-checkpoint:none",
	      t.f);
	return dtplan__stream_finish(&t, out, err);
}
