/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * megatron.c: the plan as Megatron-LM arguments, and the stage splits,
 * recompute modules and GPU names its successors (NeMo, Megatron-Bridge) take.
 *
 *   Megatron-LM, megatron/training/arguments.py: --tensor-model-parallel-size,
 *   --expert-model-parallel-size and --context-parallel-size (EP, CP > 1),
 *   --pipeline-model-parallel-size, --micro-batch-size, --global-batch-size,
 *   --seq-length, --bf16, --sequence-parallel, --use-distributed-optimizer,
 *   --recompute-granularity {full,selective}, --recompute-modules (Megatron
 *   Core 0.13 and later: core_attn, layernorm, mla_up_proj, moe_act),
 *   --use-precision-aware-optimizer with --exp-avg-dtype and --exp-avg-sq-dtype
 *   bf16 (Adam's moments in bf16, Megatron Core 0.13), --recompute-method
 *   {uniform,block}, --recompute-num-layers, --decoder-first-pipeline-num-layers
 *   and --decoder-last-pipeline-num-layers (the stages between take equal
 *   shares), --num-layers-per-virtual-pipeline-stage (interleaved 1F1B: layers
 *   per chunk) or, beside uneven first and last stages,
 *   --num-virtual-stages-per-pipeline-rank (chunks per stage), which also
 *   goes with --account-for-embedding-in-pipeline-split and
 *   --account-for-loss-in-pipeline-split (TransformerConfig's store_true
 *   fields through ArgumentGroupFactory: the embedding and the loss count
 *   as one layer each, first and last stage one layer short),
 *   --use-tp-pp-dp-mapping ("distributed ranks initialize order is
 *   changed from tp-cp-ep-dp-pp to tp-cp-ep-pp-dp": Megatron's default is
 *   our tp-dp-pp, the flag our tp-pp-dp), --save-interval (iterations).
 *   Megatron-FSDP shards gradients too: --use-megatron-fsdp with
 *   --data-parallel-sharding-strategy optim_grads (ZeRO-2) or
 *   optim_grads_params (ZeRO-3).
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>
#include <string.h>

/* Stages whose layer counts differ (a split known, more than one stage). */
/*
 * Megatron's account-for-embedding/loss split with interleaving: the first
 * and the last stage one layer short of the middle ones, whose count vp
 * divides but not theirs (what the decoder-first/last layer counts cannot
 * say: Megatron wants vp to divide them).
 */
bool dtplan__stages_account(const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;

	return c->pp > 2 && c->vp > 1 && s->middle > 1 && s->first == s->middle - 1 &&
	       s->last == s->first && s->middle % c->vp == 0;
}

/*
 * Megatron's pipeline layout with interleaving: chunks of k layers each,
 * vp of them on every stage, but the last chunk (the last stage's last)
 * holding the rest, which vp does not divide into the last stage
 * (Megatron-Bridge's DeepSeek-V3 layouts: E + 4 | 4 x 14 | 1 + MTP + loss).
 */
bool dtplan__stages_layout(const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;
	int k = c->vp > 1 ? s->first / c->vp : 0;

	/* with PP 2 there is no middle stage: the first holds vp full chunks */
	return c->pp >= 2 && c->vp > 1 && k >= 1 && s->first % c->vp == 0 &&
	       (c->pp == 2 || s->first == s->middle) && s->last > k * (c->vp - 1) &&
	       s->last < s->first && s->last % c->vp != 0;
}

/* The layout of dtplan__stages_layout() in Megatron's words: virtual stages of
 * "t" layers split by "|", chunk i on stage i mod pp, "E" (the embedding)
 * before the first and "L" (the loss) after the last. */
void dtplan__put_layout(FILE *f, const struct dtplan_candidate *c)
{
	int n = c->pp * c->vp, k = c->stages.first / c->vp;
	int r = c->stages.last - k * (c->vp - 1);

	for (int i = 0; i < n; i++) {
		fputs(i == 0 ? "E" : "|", f);
		for (int j = 0; j < (i == n - 1 ? r : k); j++)
			fputc('t', f);
	}
	fputc('L', f);
}

/* Uneven stages given as the first and last stage's layer counts. */
bool dtplan__stages_uneven(const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;

	if (c->pp < 2 || s->first < 1 || s->last < 1 || (c->pp > 2 && s->middle < 1) ||
	    dtplan__stages_account(c) || dtplan__stages_layout(c))
		return false;
	return s->first != s->last || (c->pp > 2 && s->middle != s->first);
}

/* Ranks laid out tp-pp-dp: Megatron's and NeMo's non-default mapping. */
bool dtplan__pp_inner(const struct dtplan_candidate *c)
{
	return c->rank_order == DTPLAN_ORDER_TP_PP_DP;
}

/*
 * Writes to f, between before and after and separated by sep, the
 * Megatron-Core recompute modules of fine recomputation
 * (DTPLAN_RECOMPUTE_FINE): the attention core and the layer norms always,
 * latent attention's up-projections and the experts' activation only where
 * the model has them (TransformerConfig refuses mla_up_proj without latent
 * attention and moe_act without --moe-grouped-gemm).
 */
void dtplan__put_fine_modules(FILE *f, const struct dtplan_plan *p, const char *before, char sep,
			      const char *after)
{
	const struct dtplan_model *m = &p->request.model;

	fprintf(f, "%score_attn%clayernorm", before, sep);
	if (m->kv_lora_rank > 0)
		fprintf(f, "%cmla_up_proj", sep);
	if (m->experts > 0)
		fprintf(f, "%cmoe_act", sep);
	fputs(after, f);
}

/* A Blackwell GPU (its catalog name): Transformer Engine's MXFP8 recipe. */
bool dtplan__blackwell(const struct dtplan_plan *p)
{
	const char *g = p->request.gpu.name;

	return strncmp(g, "b2", 2) == 0 || strncmp(g, "b3", 2) == 0 || strncmp(g, "gb", 2) == 0;
}

/*
 * Writes the sharding and optimizer arguments of Megatron-LM: the
 * distributed optimizer (ZeRO-1), Megatron-FSDP (ZeRO-2/3) with the
 * checkpoint format validate_args() asserts for it, the gradients' dtype
 * the plan counts, the precision-aware optimizer (bf16 moments, CPU
 * offload) once.
 */
static void put_megatron_optimizer(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	bool bf16_grads = dtplan__bf16_grads(p);
	bool bf16_moments = p->request.moments == DTPLAN_MOMENTS_BF16;
	bool fsdp = c->zero >= 2;

	/* Megatron-FSDP v1 turns the distributed optimizer on itself */
	if (c->zero >= 1)
		fputs(" --use-distributed-optimizer", f);
	if (fsdp)
		/* its main gradients follow the model's dtype unless told
		 * ("auto"): the plan counts fp32 (Megatron-LM) or bf16 */
		fprintf(f,
			" --use-megatron-fsdp --data-parallel-sharding-strategy %s "
			"--ckpt-format fsdp_dtensor --megatron-fsdp-main-grads-dtype %s",
			c->zero == 2 ? "optim_grads" : "optim_grads_params",
			bf16_grads ? "bf16" : "fp32");
	/* a plan counted as DeepSpeed holds it: bf16 gradients, reduced in
	 * bf16 (Megatron-LM's DDP buffers follow grad_reduce_in_fp32,
	 * megatron/core/distributed/param_and_grad_buffer.py) */
	if (bf16_grads && !fsdp)
		fputs(" --grad-reduce-in-bf16", f);
	/* the precision-aware optimizer (which needs the distributed one):
	 * bf16 moments and the CPU optimizer, which validate_args() asserts
	 * it for */
	if (bf16_moments || c->offload)
		fputs(" --use-precision-aware-optimizer", f);
	if (bf16_moments)
		fputs(" --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16", f);
	if (c->offload)
		fputs(" --optimizer-cpu-offload --optimizer-offload-fraction 1.0", f);
}

enum dtplan_err dtplan_launch_megatron_args(const struct dtplan_plan *p, char **out,
					    struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	struct dtplan__stream t;
	enum dtplan_err rv;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	c = &p->best;
	fprintf(t.f,
		"--tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
		"--micro-batch-size %d --global-batch-size %ld --seq-length %d --bf16",
		c->tp, c->pp, c->micro_batch, dtplan__plan_global_batch(c), dtplan__plan_seq(p));
	/* the matrix multiplies in fp8 through Transformer Engine: e4m3
	 * forward and e5m2 gradients with per-tensor current scaling, MXFP8
	 * blocks on Blackwell (TransformerConfig.fp8, .fp8_recipe); the
	 * block-scaled formats by their recipes: MXFP8 (e4m3 values, a shared
	 * E8M0 scale per 32) and NVFP4 (e2m1 values, an E4M3 scale per 16),
	 * --fp4-format/--fp4-recipe (megatron/training/arguments.py,
	 * Megatron-LM main as of 2026-12) */
	if (p->request.precision == DTPLAN_PRECISION_FP8)
		fputs(dtplan__blackwell(p) ? " --fp8-format e4m3 --fp8-recipe mxfp8"
					   : " --fp8-format hybrid --fp8-recipe tensorwise",
		      t.f);
	else if (p->request.precision == DTPLAN_PRECISION_MXFP8)
		fputs(" --fp8-format e4m3 --fp8-recipe mxfp8", t.f);
	else if (p->request.precision == DTPLAN_PRECISION_NVFP4)
		fputs(" --fp4-format e2m1 --fp4-recipe nvfp4", t.f);
	/* The ledger divides activations by TP with sequence parallelism
	 * (which Megatron-LM also requires of EP with TP). */
	if (c->tp > 1)
		fputs(" --sequence-parallel", t.f);
	if (c->ep > 1)
		fprintf(t.f, " --expert-model-parallel-size %d", c->ep);
	/* the experts' own TP where it is not TP's, Megatron-LM's default
	 * (validate_args(), megatron/training/arguments.py, d98e8a6) */
	if (c->etp > 0 && c->etp != c->tp)
		fprintf(t.f, " --expert-tensor-parallel-size %d", c->etp);
	if (c->cp > 1)
		fprintf(t.f, " --context-parallel-size %d", c->cp);
	put_megatron_optimizer(t.f, p);
	if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE)
		fputs(" --recompute-granularity selective", t.f);
	else if (c->recompute == DTPLAN_RECOMPUTE_FINE)
		dtplan__put_fine_modules(t.f, p,
					 " --recompute-granularity selective --recompute-modules ",
					 ' ', "");
	else if (c->recompute == DTPLAN_RECOMPUTE_FULL)
		fputs(" --recompute-granularity full --recompute-method uniform "
		      "--recompute-num-layers 1",
		      t.f);
	if (dtplan__stages_uneven(c))
		fprintf(t.f,
			" --decoder-first-pipeline-num-layers %d "
			"--decoder-last-pipeline-num-layers %d",
			c->stages.first, c->stages.last);
	if (dtplan__stages_account(c))
		fputs(" --account-for-embedding-in-pipeline-split "
		      "--account-for-loss-in-pipeline-split",
		      t.f);
	/* the layout names the chunks itself: no chunk count beside it */
	if (dtplan__stages_layout(c)) {
		fputs(" --pipeline-model-parallel-layout ", t.f);
		dtplan__put_layout(t.f, c);
	}
	/* interleaved 1F1B: chunks of a stage's layers (even stages), or the
	 * chunk count where the first and last stage differ */
	if (c->vp > 1 && !dtplan__stages_layout(c) && !dtplan__stages_uneven(c) &&
	    !dtplan__stages_account(c))
		fprintf(t.f, " --num-layers-per-virtual-pipeline-stage %d",
			c->stages.first / c->vp);
	else if (c->vp > 1 && !dtplan__stages_layout(c))
		fprintf(t.f, " --num-virtual-stages-per-pipeline-rank %d", c->vp);
	if (dtplan__pp_inner(c))
		fputs(" --use-tp-pp-dp-mapping", t.f);
	if (dtplan__ckpt_steps(p) > 0)
		fprintf(t.f, " --save-interval %ld", dtplan__ckpt_steps(p));
	return dtplan__stream_finish(&t, out, err);
}
