/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * megatron_bridge.c: the plan as Megatron-Bridge overrides.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "launch/launch_int.h"

#include <stdio.h>
#include <string.h>

/*
 * Megatron-Bridge's ConfigContainer overrides (KEY=VALUE after
 * scripts/training/run_recipe.py's options), each a field of its config
 * dataclasses, so that they apply in OmegaConf's struct mode: model.* the
 * model's TransformerConfig / ModelParallelConfig fields (model.transformer.*
 * for the Llama recipes, bridge_model_key()), train.*
 * TrainingConfig's, dataset.seq_length (the dataset owns the sequence;
 * model.seq_length follows it), ddp.* DistributedDataParallelConfig's,
 * optimizer.* OptimizerConfig's, checkpoint.* CheckpointConfig's, dist.*
 * DistributedInitConfig's (src/megatron/bridge/training/config.py,
 * 067f987, over Megatron-LM d98e8a6's dataclasses).
 */
/*
 * The key path of the model's TransformerConfig fields in Megatron-Bridge's
 * OmegaConf tree.  Its Llama 2 and Llama 3 recipes build cfg.model with
 * AutoBridge.get_model_config(), a BridgeGPTModelConfig that holds them in
 * its nested "transformer" dataclass (recipes/llama/h100/llama2.py,
 * llama3.py; models/gpt/model_config.py, 067f987, over Megatron-LM
 * d98e8a6's megatron/training/models/gpt.py GPTModelConfig), and
 * create_omegaconf_dict_config() walks the dataclass fields: in struct mode
 * model.tensor_model_parallel_size is no key there, only
 * model.transformer.tensor_model_parallel_size.  Its other recipes
 * (DeepSeek, Qwen, GPT-3) build a model provider, a TransformerConfig
 * itself: model.FIELD.  A Llama is a preset named llama* or a config.json
 * whose model_type is "llama".
 */
static const char *bridge_model_key(const struct dtplan_plan *p)
{
	const struct dtplan_model *m = &p->request.model;
	bool llama = m->family[0] != '\0' ? strcmp(m->family, "llama") == 0
					  : strncmp(m->name, "llama", 5) == 0;

	return llama ? "model.transformer." : "model.";
}

/* The parallel sizes, the sequence and the batches. */
static void put_bridge_sizes(FILE *f, const struct dtplan_plan *p, const char *m)
{
	const struct dtplan_candidate *c = &p->best;

	fprintf(f,
		"%stensor_model_parallel_size=%d %spipeline_model_parallel_size=%d "
		"%scontext_parallel_size=%d %sexpert_model_parallel_size=%d "
		"%ssequence_parallel=%s dataset.seq_length=%d train.micro_batch_size=%d "
		"train.global_batch_size=%ld",
		m, c->tp, m, c->pp, m, c->cp > 1 ? c->cp : 1, m, c->ep > 1 ? c->ep : 1, m,
		c->tp > 1 ? "true" : "false", dtplan__plan_seq(p), c->micro_batch,
		dtplan__plan_global_batch(c));
	/* the recipes set their own expert TP (mostly 1,
	 * src/megatron/bridge/recipes/, 067f987): always said for experts */
	if (p->request.model.experts > 0)
		fprintf(f, " %sexpert_tensor_parallel_size=%d", m, c->etp > 0 ? c->etp : c->tp);
}

/* The mixed-precision recipe. */
static void put_bridge_precision(FILE *f, const struct dtplan_plan *p)
{
	bool bf16_grads = dtplan__bf16_grads(p);

	/* runtime_config_update() has the mixed_precision config overwrite
	 * the model's fp8 fields and the DDP's gradient dtype
	 * (MixedPrecisionConfig.setup(), training/mixed_precision.py), so fp8
	 * is a named mixed-precision recipe, which runtime_config_update()
	 * resolves (get_mixed_precision_config()): the name replaces whichever
	 * the recipe holds, a name (the Llama and Qwen3 recipes' "bf16_mixed",
	 * where a mixed_precision.fp8 key is no key in struct mode) or a
	 * MixedPrecisionConfig (the DeepSeek-V3 recipe's) */
	if (p->request.precision == DTPLAN_PRECISION_FP8)
		fputs(dtplan__blackwell(p) ? " mixed_precision=bf16_with_mxfp8_mixed"
					   : " mixed_precision=bf16_with_fp8_current_scaling_mixed",
		      f);
	/* the block-scaled formats' own recipes (bf16_with_mxfp8_mixed(),
	 * bf16_with_nvfp4_mixed(), training/mixed_precision.py) */
	else if (p->request.precision == DTPLAN_PRECISION_MXFP8)
		fputs(" mixed_precision=bf16_with_mxfp8_mixed", f);
	else if (p->request.precision == DTPLAN_PRECISION_NVFP4)
		fputs(" mixed_precision=bf16_with_nvfp4_mixed", f);
	/* and bf16 is "bf16_mixed" where the plan reduces gradients in fp32:
	 * setup() also overwrites ddp.grad_reduce_in_fp32, which the DeepSeek-V3
	 * recipe's MixedPrecisionConfig has false.  No named bf16 recipe
	 * reduces in bf16 (bf16_mixed and those built on it: true), so a
	 * DeepSpeed plan keeps the recipe's */
	else if (!bf16_grads)
		fputs(" mixed_precision=bf16_mixed", f);
}

/* The interleaving, the stage split and multi-token prediction. */
static void put_bridge_stages(FILE *f, const struct dtplan_candidate *c, const char *m)
{
	/* A recipe sets its own interleaving, stage split and recomputation
	 * (the Llama 3 70B and 405B recipes: VP 5 and 8, the embedding and
	 * loss counted in the split): each is stated, null where the plan has
	 * none, or ConfigContainer.validate() finds the recipe's beside the
	 * plan's ("cannot be set at the same time", "must be divisible by
	 * virtual pipeline parallel degree") */
	if (c->vp > 1)
		fprintf(f, " %svirtual_pipeline_model_parallel_size=%d", m, c->vp);
	else
		fprintf(f, " %svirtual_pipeline_model_parallel_size=null", m);
	if (dtplan__stages_uneven(c))
		fprintf(f,
			" %snum_layers_in_first_pipeline_stage=%d "
			"%snum_layers_in_last_pipeline_stage=%d",
			m, c->stages.first, m, c->stages.last);
	else
		fprintf(f,
			" %snum_layers_in_first_pipeline_stage=null "
			"%snum_layers_in_last_pipeline_stage=null",
			m, m);
	fprintf(f,
		" %saccount_for_embedding_in_pipeline_split=%s "
		"%saccount_for_loss_in_pipeline_split=%s",
		m, dtplan__stages_account(c) ? "true" : "false", m,
		dtplan__stages_account(c) ? "true" : "false");
	fprintf(f, " %spipeline_model_parallel_layout=", m);
	if (dtplan__stages_layout(c))
		dtplan__put_layout(f, c);
	else
		fputs("null", f);
	/* nor multi-token prediction, which dtplan's models do not have: the
	 * DeepSeek-V3 recipe's provider takes one MTP layer from config.json's
	 * num_nextn_predict_layers (models/deepseek/deepseek_v3_bridge.py), and
	 * a layout without it is refused ("Number of mtp layers in layout must
	 * match mtp_num_layers", PipelineParallelLayerLayout.
	 * validate_layer_layout(), megatron/core/transformer/
	 * pipeline_parallel_layer_layout.py, d98e8a6) */
	fprintf(f, " %smtp_num_layers=null", m);
}

/* The recomputation. */
static void put_bridge_recompute(FILE *f, const struct dtplan_plan *p, const char *m)
{
	const struct dtplan_candidate *c = &p->best;

	/* selective recomputation takes no method nor layer count, which the
	 * recipes of full recomputation set (Qwen3-30B-A3B's: uniform, 1):
	 * "When using recompute_granularity: selective recompute_num_layers
	 * must be None" (TransformerConfig.__post_init__(), megatron/core/
	 * transformer/transformer_config.py, d98e8a6) */
	if (c->recompute == DTPLAN_RECOMPUTE_NONE) {
		fprintf(f, " %srecompute_granularity=null", m);
	} else if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE) {
		fprintf(f,
			" %srecompute_granularity=selective %srecompute_method=null "
			"%srecompute_num_layers=null",
			m, m, m);
	} else if (c->recompute == DTPLAN_RECOMPUTE_FINE) {
		fprintf(f,
			" %srecompute_granularity=selective %srecompute_method=null "
			"%srecompute_num_layers=null %srecompute_modules=",
			m, m, m, m);
		dtplan__put_fine_modules(f, p, "[", ',', "]");
	} else if (c->recompute == DTPLAN_RECOMPUTE_FULL) {
		fprintf(f,
			" %srecompute_granularity=full %srecompute_method=uniform "
			"%srecompute_num_layers=1",
			m, m, m);
	}
}

/* The gradients, the distributed optimizer or Megatron-FSDP, the
 * optimizer's precision and its CPU offload. */
static void put_bridge_optimizer(FILE *f, const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	bool bf16_grads = dtplan__bf16_grads(p);
	bool bf16_moments = p->request.moments == DTPLAN_MOMENTS_BF16;
	bool fsdp = c->zero >= 2;

	/* the gradients as the plan counts them: fp32 main gradients
	 * (Megatron-LM's) or bf16 (DeepSpeed's); its DDP default is bf16 */
	fprintf(f, " ddp.grad_reduce_in_fp32=%s", bf16_grads ? "false" : "true");
	if (c->zero >= 1)
		fputs(" ddp.use_distributed_optimizer=true "
		      "optimizer.use_distributed_optimizer=true",
		      f);
	if (fsdp)
		fprintf(f,
			" ddp.use_megatron_fsdp=true ddp.data_parallel_sharding_strategy=%s "
			"checkpoint.ckpt_format=fsdp_dtensor",
			c->zero == 2 ? "optim_grads" : "optim_grads_params");
	/* The optimizer's precision, always stated: the DeepSeek-V3 recipe
	 * keeps Adam's moments and the main gradients in bf16 through the
	 * precision-aware optimizer, under a plan that counts fp32.  Its
	 * torch.dtype fields are keys, as strings ("torch.bfloat16"), which
	 * apply_overrides() reads back with str_to_dtype()
	 * (training/utils/omegaconf_utils.py, utils/activation_map.py,
	 * 067f987); OptimizerConfig.__post_init__() takes other dtypes than
	 * fp32 only with the precision-aware optimizer (megatron/core/
	 * optimizer/optimizer_config.py, d98e8a6), which bf16 moments and the
	 * CPU optimizer use, as Megatron-LM's arguments say */
	fprintf(f,
		" optimizer.use_precision_aware_optimizer=%s optimizer.main_grads_dtype=fp32 "
		"optimizer.exp_avg_dtype=%s optimizer.exp_avg_sq_dtype=%s",
		bf16_moments || c->offload ? "true" : "false", bf16_moments ? "bf16" : "fp32",
		bf16_moments ? "bf16" : "fp32");
	if (c->offload)
		fputs(" optimizer.optimizer_cpu_offload=true", f);
}

enum dtplan_err dtplan_launch_megatron_bridge_overrides(const struct dtplan_plan *p, char **out,
							struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	const char *m, *why;
	struct dtplan__stream t;
	enum dtplan_err rv;

	rv = dtplan__check_plan(p, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	c = &p->best;
	/* what it refuses is a clause of the rules (dtplan__split_runs(),
	 * lib/model/rules.c), for the Megatron-Core row whose plans it runs */
	why = dtplan__plan_runs(p, DTPLAN_FRAMEWORK_MEGATRON,
				dtplan__framework(DTPLAN_FRAMEWORK_MEGATRON)->bridge_runs);
	if (why != NULL)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "framework", 0,
				     "Megatron-Bridge cannot run this plan as it is: %s", why);
	m = bridge_model_key(p);
	if ((rv = dtplan__stream_open(&t, err)) != DTPLAN_OK)
		return rv;
	put_bridge_sizes(t.f, p, m);
	put_bridge_precision(t.f, p);
	put_bridge_stages(t.f, c, m);
	put_bridge_recompute(t.f, p, m);
	put_bridge_optimizer(t.f, p);
	if (dtplan__pp_inner(c))
		fputs(" dist.use_tp_pp_dp_mapping=true", t.f);
	if (dtplan__ckpt_steps(p) > 0)
		fprintf(t.f, " checkpoint.save_interval=%ld", dtplan__ckpt_steps(p));
	return dtplan__stream_finish(&t, out, err);
}
