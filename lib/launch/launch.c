/*
 * launch.c: the plan in the words of the frameworks that run it: Megatron-LM
 * arguments, NeMo overrides, a DeepSpeed configuration fragment, torchrun's
 * PET_* variables and a hostfile in rank order.  The one home of these
 * names: lib/launch/env.c, lib/json/plan_json.c and the plugin take them from here, and
 * doc/launchers.md shows the launch lines.
 *
 * Where the names come from (checked against the frameworks' sources):
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
 *
 *   NeMo, examples/nlp/language_modeling/conf/megatron_gpt_config.yaml:
 *   trainer.num_nodes, trainer.devices, model.tensor_model_parallel_size,
 *   model.pipeline_model_parallel_size, model.micro_batch_size,
 *   model.global_batch_size, model.encoder_seq_length, model.sequence_parallel,
 *   model.virtual_pipeline_model_parallel_size (interleaved chunks per stage),
 *   model.expert_model_parallel_size (EP > 1), ++model.context_parallel_size
 *   (CP > 1: the YAML lacks the key and Hydra refuses it without "++"),
 *   model.activations_checkpoint_granularity/_method/_num_layers and
 *   model.optim.name (distributed_fused_adam is the distributed optimizer:
 *   megatron_base_model.py's with_distributed_adam).  megatron_base_model.py
 *   also reads cfg.get('use_tp_pp_dp_mapping') and cfg.get('fsdp'), and
 *   copies every Megatron Core TransformerConfig field found in the model
 *   config (num_layers_in_first_pipeline_stage, ..._last_...,
 *   account_for_embedding/loss_in_pipeline_split, which NeMo 2's Llama 3.1
 *   405B recipe sets: nemo/collections/llm/recipes/llama31_405b.py); keys the YAML
 *   lacks take Hydra's "++" (add or override).  nemo/utils/exp_manager.py's
 *   CallbackParams (exp_manager.checkpoint_callback_params, handed to
 *   Lightning's ModelCheckpoint) has every_n_train_steps, the interval in
 *   steps, and every_n_epochs, 1 by default: ModelCheckpoint's
 *   __validate_init_configuration() (lightning/pytorch/callbacks/
 *   model_checkpoint.py, 7f0c343) refuses both >= 1, so every_n_epochs=0.
 *   Read at NeMo 8cfedd7, the last of NeMo 1.x's LLM path (legacy; NeMo 2
 *   runs Megatron-Bridge).
 *
 *   DeepSpeed: train_batch_size = train_micro_batch_size_per_gpu x
 *   gradient_accumulation_steps x data-parallel size, zero_optimization.stage,
 *   bf16.enabled.  Its PipeModelDataParallelTopology orders ranks pipe, data,
 *   model (model fastest): our tp-dp-pp (doc/launchers.md has tp-pp-dp).
 *
 *   torchrun, torch/distributed/run.py: every option declared with
 *   action=env falls back to the variable PET_<DEST> (argparse_util.py):
 *   PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_RDZV_BACKEND,
 *   PET_MASTER_ADDR, PET_MASTER_PORT.  The static rendezvous numbers ranks
 *   node rank x nproc_per_node + local rank.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "cost/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dtplan_master_port(uint32_t job_id)
{
	return DTPLAN_MASTER_PORT_BASE + (int)(job_id % DTPLAN_MASTER_PORT_SPAN);
}

/* An in-memory text; text_finish() hands it over or reports NOMEM. */
struct text {
	FILE *f;
	char *buf;
	size_t len;
};

static enum dtplan_err text_open(struct text *t, struct dtplan_error *err)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	if (t->f == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	return DTPLAN_OK;
}

static enum dtplan_err text_finish(struct text *t, char **out, struct dtplan_error *err)
{
	bool failed = ferror(t->f) != 0;

	if (fclose(t->f) != 0)
		failed = true;
	t->f = NULL;
	if (failed) {
		free(t->buf);
		t->buf = NULL;
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	}
	*out = t->buf;
	return DTPLAN_OK;
}

/* DTPLAN_ERR_INVAL unless p holds a parallel split. */
static enum dtplan_err check_plan(const struct dtplan_plan *p, char **out, struct dtplan_error *err)
{
	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	if (p->best.tp < 1 || p->best.pp < 1 || p->best.dp < 1 || p->best.micro_batch < 1 ||
	    p->best.num_microbatches < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "the plan has no parallel split (TP %d, PP %d, DP %d, "
				     "micro-batch %d x %d)",
				     p->best.tp, p->best.pp, p->best.dp, p->best.micro_batch,
				     p->best.num_microbatches);
	return DTPLAN_OK;
}

/* The sequence length the plan trains (the request's, resolved as the search does). */
static int plan_seq(const struct dtplan_plan *p)
{
	return dtplan_request_seq(&p->request, NULL);
}

/* The trained global batch: dp x micro-batch x micro-batches. */
static long plan_global_batch(const struct dtplan_candidate *c)
{
	if (c->global_batch > 0)
		return c->global_batch;
	return (long)c->dp * c->micro_batch * c->num_microbatches;
}

/* Stages whose layer counts differ (a split known, more than one stage). */
/*
 * Megatron's account-for-embedding/loss split with interleaving: the first
 * and the last stage one layer short of the middle ones, whose count vp
 * divides but not theirs (what the decoder-first/last layer counts cannot
 * say: Megatron wants vp to divide them).
 */
static bool stages_account(const struct dtplan_candidate *c)
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
static bool stages_layout(const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;
	int k = c->vp > 1 ? s->middle / c->vp : 0;

	return c->pp > 2 && c->vp > 1 && k >= 1 && s->middle % c->vp == 0 &&
	       s->first == s->middle && s->last > k * (c->vp - 1) && s->last < s->middle &&
	       s->last % c->vp != 0;
}

/* The layout of stages_layout() in Megatron's words: virtual stages of
 * "t" layers split by "|", chunk i on stage i mod pp, "E" (the embedding)
 * before the first and "L" (the loss) after the last. */
static void put_layout(FILE *f, const struct dtplan_candidate *c)
{
	int n = c->pp * c->vp, k = c->stages.middle / c->vp;
	int r = c->stages.last - k * (c->vp - 1);

	for (int i = 0; i < n; i++) {
		fputs(i == 0 ? "E" : "|", f);
		for (int j = 0; j < (i == n - 1 ? r : k); j++)
			fputc('t', f);
	}
	fputc('L', f);
}

/* Uneven stages given as the first and last stage's layer counts. */
static bool stages_uneven(const struct dtplan_candidate *c)
{
	const struct dtplan_stage_layers *s = &c->stages;

	if (c->pp < 2 || s->first < 1 || s->last < 1 || (c->pp > 2 && s->middle < 1) ||
	    stages_account(c) || stages_layout(c))
		return false;
	return s->first != s->last || (c->pp > 2 && s->middle != s->first);
}

/* Ranks laid out tp-pp-dp: Megatron's and NeMo's non-default mapping. */
static bool pp_inner(const struct dtplan_candidate *c)
{
	return c->rank_order == DTPLAN_ORDER_TP_PP_DP;
}

/* The checkpoint interval in whole steps, 0 when unknown. */
static long ckpt_steps(const struct dtplan_plan *p)
{
	double s = p->ckpt.interval_steps;

	return isfinite(s) && s >= 1.0 && s < 1e15 ? (long)floor(s) : 0;
}

/*
 * Writes to f, between before and after and separated by sep, the
 * Megatron-Core recompute modules of fine recomputation
 * (DTPLAN_RECOMPUTE_FINE): the attention core and the layer norms always,
 * latent attention's up-projections and the experts' activation only where
 * the model has them (TransformerConfig refuses mla_up_proj without latent
 * attention and moe_act without --moe-grouped-gemm).
 */
static void put_fine_modules(FILE *f, const struct dtplan_plan *p, const char *before, char sep,
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
static bool blackwell(const struct dtplan_plan *p)
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
	bool deepspeed = p->request.framework == DTPLAN_FRAMEWORK_DEEPSPEED;
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
			deepspeed ? "bf16" : "fp32");
	/* a plan counted as DeepSpeed holds it: bf16 gradients, reduced in
	 * bf16 (Megatron-LM's DDP buffers follow grad_reduce_in_fp32,
	 * megatron/core/distributed/param_and_grad_buffer.py) */
	if (deepspeed && !fsdp)
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
	struct text t;
	enum dtplan_err rv;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	c = &p->best;
	fprintf(t.f,
		"--tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
		"--micro-batch-size %d --global-batch-size %ld --seq-length %d --bf16",
		c->tp, c->pp, c->micro_batch, plan_global_batch(c), plan_seq(p));
	/* the matrix multiplies in fp8 through Transformer Engine: e4m3
	 * forward and e5m2 gradients with per-tensor current scaling, MXFP8
	 * blocks on Blackwell (TransformerConfig.fp8, .fp8_recipe) */
	if (p->request.precision == DTPLAN_PRECISION_FP8)
		fputs(blackwell(p) ? " --fp8-format e4m3 --fp8-recipe mxfp8"
				   : " --fp8-format hybrid --fp8-recipe tensorwise",
		      t.f);
	/* The ledger divides activations by TP with sequence parallelism
	 * (which Megatron-LM also requires of EP with TP). */
	if (c->tp > 1)
		fputs(" --sequence-parallel", t.f);
	if (c->ep > 1)
		fprintf(t.f, " --expert-model-parallel-size %d", c->ep);
	if (c->cp > 1)
		fprintf(t.f, " --context-parallel-size %d", c->cp);
	put_megatron_optimizer(t.f, p);
	if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE)
		fputs(" --recompute-granularity selective", t.f);
	else if (c->recompute == DTPLAN_RECOMPUTE_FINE)
		put_fine_modules(t.f, p, " --recompute-granularity selective --recompute-modules ",
				 ' ', "");
	else if (c->recompute == DTPLAN_RECOMPUTE_FULL)
		fputs(" --recompute-granularity full --recompute-method uniform "
		      "--recompute-num-layers 1",
		      t.f);
	if (stages_uneven(c))
		fprintf(t.f,
			" --decoder-first-pipeline-num-layers %d "
			"--decoder-last-pipeline-num-layers %d",
			c->stages.first, c->stages.last);
	if (stages_account(c))
		fputs(" --account-for-embedding-in-pipeline-split "
		      "--account-for-loss-in-pipeline-split",
		      t.f);
	/* the layout names the chunks itself: no chunk count beside it */
	if (stages_layout(c)) {
		fputs(" --pipeline-model-parallel-layout ", t.f);
		put_layout(t.f, c);
	}
	/* interleaved 1F1B: chunks of a stage's layers (even stages), or the
	 * chunk count where the first and last stage differ */
	if (c->vp > 1 && !stages_layout(c) && !stages_uneven(c) && !stages_account(c))
		fprintf(t.f, " --num-layers-per-virtual-pipeline-stage %d",
			c->stages.first / c->vp);
	else if (c->vp > 1 && !stages_layout(c))
		fprintf(t.f, " --num-virtual-stages-per-pipeline-rank %d", c->vp);
	if (pp_inner(c))
		fputs(" --use-tp-pp-dp-mapping", t.f);
	if (ckpt_steps(p) > 0)
		fprintf(t.f, " --save-interval %ld", ckpt_steps(p));
	return text_finish(&t, out, err);
}

/* Ranks per node: torchrun's count when the plan has one, else the request's. */
static int ranks_per_node(const struct dtplan_plan *p, int *nodes)
{
	int nn = 0, per = 0;

	if (dtplan_launch_torchrun(p, &nn, &per)) {
		*nodes = nn;
		return per;
	}
	per = p->request.gpus_per_node > 0 ? p->request.gpus_per_node : 1;
	*nodes = p->n_nodes > 0 ? (int)p->n_nodes
				: (p->request.gpus > 0 ? (p->request.gpus + per - 1) / per : 1);
	return per;
}

enum dtplan_err dtplan_launch_nemo_overrides(const struct dtplan_plan *p, char **out,
					     struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	enum dtplan_err rv;
	struct text t;
	int nodes, per;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	c = &p->best;
	per = ranks_per_node(p, &nodes);
	fprintf(t.f,
		"trainer.num_nodes=%d trainer.devices=%d model.tensor_model_parallel_size=%d "
		"model.pipeline_model_parallel_size=%d model.micro_batch_size=%d "
		"model.global_batch_size=%ld model.encoder_seq_length=%d "
		"model.sequence_parallel=%s",
		nodes, per, c->tp, c->pp, c->micro_batch, plan_global_batch(c), plan_seq(p),
		c->tp > 1 ? "true" : "false");
	if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE)
		fputs(" model.activations_checkpoint_granularity=selective", t.f);
	else if (c->recompute == DTPLAN_RECOMPUTE_FINE)
		put_fine_modules(t.f, p,
				 " model.activations_checkpoint_granularity=selective "
				 "++model.recompute_modules=[",
				 ',', "]");
	else if (c->recompute == DTPLAN_RECOMPUTE_FULL)
		fputs(" model.activations_checkpoint_granularity=full "
		      "model.activations_checkpoint_method=uniform "
		      "model.activations_checkpoint_num_layers=1",
		      t.f);
	if (c->zero == 1 || c->zero == 2)
		fputs(" model.optim.name=distributed_fused_adam", t.f);
	else if (c->zero == 3)
		fputs(" ++model.fsdp=true", t.f);
	if (stages_uneven(c))
		fprintf(t.f,
			" ++model.num_layers_in_first_pipeline_stage=%d "
			"++model.num_layers_in_last_pipeline_stage=%d",
			c->stages.first, c->stages.last);
	if (stages_account(c))
		fputs(" ++model.account_for_embedding_in_pipeline_split=true "
		      "++model.account_for_loss_in_pipeline_split=true",
		      t.f);
	if (stages_layout(c)) {
		fputs(" ++model.pipeline_model_parallel_layout=", t.f);
		put_layout(t.f, c);
	}
	if (c->vp > 1)
		fprintf(t.f, " model.virtual_pipeline_model_parallel_size=%d", c->vp);
	if (c->ep > 1)
		fprintf(t.f, " model.expert_model_parallel_size=%d", c->ep);
	if (c->cp > 1)
		fprintf(t.f, " ++model.context_parallel_size=%d", c->cp);
	if (pp_inner(c))
		fputs(" ++model.use_tp_pp_dp_mapping=true", t.f);
	if (ckpt_steps(p) > 0)
		fprintf(t.f,
			" ++exp_manager.checkpoint_callback_params.every_n_train_steps=%ld "
			"++exp_manager.checkpoint_callback_params.every_n_epochs=0",
			ckpt_steps(p));
	return text_finish(&t, out, err);
}

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

enum dtplan_err dtplan_launch_megatron_bridge_overrides(const struct dtplan_plan *p, char **out,
							struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	const char *m;
	bool fsdp, deepspeed, bf16_moments;
	struct text t;
	enum dtplan_err rv;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	c = &p->best;
	fsdp = c->zero >= 2;
	deepspeed = p->request.framework == DTPLAN_FRAMEWORK_DEEPSPEED;
	bf16_moments = p->request.moments == DTPLAN_MOMENTS_BF16;
	/* ConfigContainer.validate(): "use_tp_pp_dp_mapping is not supported
	 * with Megatron FSDP" */
	if (fsdp && pp_inner(c))
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "framework", 0,
				     "Megatron-Bridge cannot run this plan as it is: Megatron-FSDP "
				     "with rank order tp-pp-dp");
	m = bridge_model_key(p);
	if ((rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	fprintf(t.f,
		"%stensor_model_parallel_size=%d %spipeline_model_parallel_size=%d "
		"%scontext_parallel_size=%d %sexpert_model_parallel_size=%d "
		"%ssequence_parallel=%s dataset.seq_length=%d train.micro_batch_size=%d "
		"train.global_batch_size=%ld",
		m, c->tp, m, c->pp, m, c->cp > 1 ? c->cp : 1, m, c->ep > 1 ? c->ep : 1, m,
		c->tp > 1 ? "true" : "false", plan_seq(p), c->micro_batch, plan_global_batch(c));
	/* runtime_config_update() has the mixed_precision config overwrite
	 * the model's fp8 fields and the DDP's gradient dtype
	 * (MixedPrecisionConfig.setup(), training/mixed_precision.py), so fp8
	 * is a named mixed-precision recipe, which runtime_config_update()
	 * resolves (get_mixed_precision_config()): the name replaces whichever
	 * the recipe holds, a name (the Llama and Qwen3 recipes' "bf16_mixed",
	 * where a mixed_precision.fp8 key is no key in struct mode) or a
	 * MixedPrecisionConfig (the DeepSeek-V3 recipe's) */
	if (p->request.precision == DTPLAN_PRECISION_FP8)
		fputs(blackwell(p) ? " mixed_precision=bf16_with_mxfp8_mixed"
				   : " mixed_precision=bf16_with_fp8_current_scaling_mixed",
		      t.f);
	/* and bf16 is "bf16_mixed" where the plan reduces gradients in fp32:
	 * setup() also overwrites ddp.grad_reduce_in_fp32, which the DeepSeek-V3
	 * recipe's MixedPrecisionConfig has false.  No named bf16 recipe
	 * reduces in bf16 (bf16_mixed and those built on it: true), so a
	 * DeepSpeed plan keeps the recipe's */
	else if (!deepspeed)
		fputs(" mixed_precision=bf16_mixed", t.f);
	/* A recipe sets its own interleaving, stage split and recomputation
	 * (the Llama 3 70B and 405B recipes: VP 5 and 8, the embedding and
	 * loss counted in the split): each is stated, null where the plan has
	 * none, or ConfigContainer.validate() finds the recipe's beside the
	 * plan's ("cannot be set at the same time", "must be divisible by
	 * virtual pipeline parallel degree") */
	if (c->vp > 1)
		fprintf(t.f, " %svirtual_pipeline_model_parallel_size=%d", m, c->vp);
	else
		fprintf(t.f, " %svirtual_pipeline_model_parallel_size=null", m);
	if (stages_uneven(c))
		fprintf(t.f,
			" %snum_layers_in_first_pipeline_stage=%d "
			"%snum_layers_in_last_pipeline_stage=%d",
			m, c->stages.first, m, c->stages.last);
	else
		fprintf(t.f,
			" %snum_layers_in_first_pipeline_stage=null "
			"%snum_layers_in_last_pipeline_stage=null",
			m, m);
	fprintf(t.f,
		" %saccount_for_embedding_in_pipeline_split=%s "
		"%saccount_for_loss_in_pipeline_split=%s",
		m, stages_account(c) ? "true" : "false", m, stages_account(c) ? "true" : "false");
	fprintf(t.f, " %spipeline_model_parallel_layout=", m);
	if (stages_layout(c))
		put_layout(t.f, c);
	else
		fputs("null", t.f);
	/* nor multi-token prediction, which dtplan's models do not have: the
	 * DeepSeek-V3 recipe's provider takes one MTP layer from config.json's
	 * num_nextn_predict_layers (models/deepseek/deepseek_v3_bridge.py), and
	 * a layout without it is refused ("Number of mtp layers in layout must
	 * match mtp_num_layers", PipelineParallelLayerLayout.
	 * validate_layer_layout(), megatron/core/transformer/
	 * pipeline_parallel_layer_layout.py, d98e8a6) */
	fprintf(t.f, " %smtp_num_layers=null", m);
	/* selective recomputation takes no method nor layer count, which the
	 * recipes of full recomputation set (Qwen3-30B-A3B's: uniform, 1):
	 * "When using recompute_granularity: selective recompute_num_layers
	 * must be None" (TransformerConfig.__post_init__(), megatron/core/
	 * transformer/transformer_config.py, d98e8a6) */
	if (c->recompute == DTPLAN_RECOMPUTE_NONE) {
		fprintf(t.f, " %srecompute_granularity=null", m);
	} else if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE) {
		fprintf(t.f,
			" %srecompute_granularity=selective %srecompute_method=null "
			"%srecompute_num_layers=null",
			m, m, m);
	} else if (c->recompute == DTPLAN_RECOMPUTE_FINE) {
		fprintf(t.f,
			" %srecompute_granularity=selective %srecompute_method=null "
			"%srecompute_num_layers=null %srecompute_modules=",
			m, m, m, m);
		put_fine_modules(t.f, p, "[", ',', "]");
	} else if (c->recompute == DTPLAN_RECOMPUTE_FULL) {
		fprintf(t.f,
			" %srecompute_granularity=full %srecompute_method=uniform "
			"%srecompute_num_layers=1",
			m, m, m);
	}
	/* the gradients as the plan counts them: fp32 main gradients
	 * (Megatron-LM's) or bf16 (DeepSpeed's); its DDP default is bf16 */
	fprintf(t.f, " ddp.grad_reduce_in_fp32=%s", deepspeed ? "false" : "true");
	if (c->zero >= 1)
		fputs(" ddp.use_distributed_optimizer=true "
		      "optimizer.use_distributed_optimizer=true",
		      t.f);
	if (fsdp)
		fprintf(t.f,
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
	fprintf(t.f,
		" optimizer.use_precision_aware_optimizer=%s optimizer.main_grads_dtype=fp32 "
		"optimizer.exp_avg_dtype=%s optimizer.exp_avg_sq_dtype=%s",
		bf16_moments || c->offload ? "true" : "false", bf16_moments ? "bf16" : "fp32",
		bf16_moments ? "bf16" : "fp32");
	if (c->offload)
		fputs(" optimizer.optimizer_cpu_offload=true", t.f);
	if (pp_inner(c))
		fputs(" dist.use_tp_pp_dp_mapping=true", t.f);
	if (ckpt_steps(p) > 0)
		fprintf(t.f, " checkpoint.save_interval=%ld", ckpt_steps(p));
	return text_finish(&t, out, err);
}

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

/* Why torchtitan's options cannot say plan p (NULL: they can). */
static const char *torchtitan_why_not(const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c = &p->best;
	int chunk, a, b;

	if (c->rank_order == DTPLAN_ORDER_TP_PP_DP)
		return "its mesh is pp, dp_replicate, dp_shard, cp, tp: no tp-pp-dp rank order";
	if (c->zero == 1)
		return "it has no ZeRO-1 (DDP or FSDP2)";
	if (c->offload)
		return "its CPU offload moves parameters and gradients too";
	if (c->ep > 1 && c->tp > 1)
		return "its expert parallelism takes TP ranks";
	/* ParallelDims._validate(): EP divides dp_shard x cp x tp, and DDP
	 * (ZeRO-0) has no dp_shard */
	if (c->ep > 1 &&
	    ((c->zero >= 2 ? c->dp : 1) * (c->cp > 1 ? c->cp : 1) * c->tp) % c->ep != 0)
		return "its expert parallelism divides dp_shard x cp x tp, and DDP shards nothing";
	if (c->dualpipe)
		return "it has no DualPipe schedule";
	if (c->cp > 1 && c->zero == 0)
		return "it shards with FSDP over CP";
	if (p->request.precision == DTPLAN_PRECISION_FP8)
		return "its Float8 converter is set in the model's configuration, not by an option";
	if (p->request.moments == DTPLAN_MOMENTS_BF16)
		return "its Adam keeps fp32 moments";
	if (c->recompute == DTPLAN_RECOMPUTE_FINE)
		return "it has no recompute modules (its selective recomputation is per-op)";
	/* selective under another framework's counting is Megatron-LM's */
	if (c->recompute == DTPLAN_RECOMPUTE_SELECTIVE &&
	    !dtplan__selective_per_op(p->request.framework))
		return "its selective recomputation is per-op (it recomputes every second matrix "
		       "multiply), not Megatron-LM's";
	if (c->pp > 1 && !torchtitan_stages(c, p->request.model.layers, &chunk, &a, &b))
		return "its pipeline split cannot make these stages";
	return NULL;
}

enum dtplan_err dtplan_launch_torchtitan_args(const struct dtplan_plan *p, char **out,
					      struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	const char *why;
	struct text t;
	enum dtplan_err rv;
	long seq;
	int chunk = 0, a = 0, b = 0;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK)
		return rv;
	c = &p->best;
	why = torchtitan_why_not(p);
	if (why != NULL)
		return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, "framework", 0,
				     "torchtitan cannot run this plan as it is: %s", why);
	if ((rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	seq = plan_seq(p);
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
		(long)c->micro_batch * seq, plan_global_batch(c) * seq, seq);
	/* Trainer.Config refuses CUDA graphs with PP, and with EP unless the
	 * model's token dispatcher never waits on the host (trainer.py); the
	 * plan counts no CUDA graphs */
	if (c->pp > 1 || c->ep > 1)
		fputs(" --training.disable_cuda_graphs", t.f);
	/* checkpoints are off by default (BaseCheckpointManager.Config.enable,
	 * components/checkpointer/base.py): the interval alone saves nothing */
	if (ckpt_steps(p) > 0)
		fprintf(t.f, " --checkpoint.enable --checkpoint.interval %ld", ckpt_steps(p));
	/* the activation-checkpoint policy is a subcommand, last
	 * (ActivationCheckpointingConfig, torchtitan/distributed/
	 * activation_checkpoint.py, b5bcd76): selective is its per-op
	 * SelectiveAC, as the plan counted it */
	fputs(c->recompute == DTPLAN_RECOMPUTE_FULL        ? " activation-checkpoint:full"
	      : c->recompute == DTPLAN_RECOMPUTE_SELECTIVE ? " activation-checkpoint:selective"
							   : " activation-checkpoint:none",
	      t.f);
	return text_finish(&t, out, err);
}

const char *dtplan_launch_deepspeed_unsupported(const struct dtplan_plan *p)
{
	const struct dtplan_candidate *c;

	if (p == NULL)
		return NULL;
	c = &p->best;
	/* DeepSpeed's engine: "MoE not supported with Stage 3"; its pipeline
	 * engine takes ZeRO-1 at most (deepspeed/runtime/engine.py, edaa722),
	 * and its grid is pipe x data x model (deepspeed/runtime/pipe/
	 * topology.py): no sequence axis, CP ranks would be data-parallel */
	if (c->zero >= 2 && c->pp > 1)
		return "DeepSpeed's pipeline engine does not run ZeRO-2/3";
	if (c->cp > 1 && c->pp > 1)
		return "DeepSpeed's pipeline engine has no context (sequence) parallelism";
	if (c->zero == 3 && p->request.model.experts > 0)
		return "DeepSpeed refuses MoE layers with ZeRO stage 3";
	return NULL;
}

enum dtplan_err dtplan_launch_deepspeed_config(const struct dtplan_plan *p, char **out,
					       struct dtplan_error *err)
{
	const struct dtplan_candidate *c;
	enum dtplan_err rv;
	struct text t;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	c = &p->best;
	/* Laid out as Jansson's JSON_INDENT(2) would write it; ZeRO-Offload is
	 * DeepSpeed's zero_optimization.offload_optimizer */
	fprintf(t.f,
		"{\n"
		"  \"train_batch_size\": %ld,\n"
		"  \"train_micro_batch_size_per_gpu\": %d,\n"
		"  \"gradient_accumulation_steps\": %d,\n",
		plan_global_batch(c), c->micro_batch, c->num_microbatches);
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
	return text_finish(&t, out, err);
}

enum dtplan_err dtplan_launch_hostfile(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err)
{
	enum dtplan_err rv;
	struct text t;

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no plan or output pointer");
	if (p->n_ranks == 0 || p->n_nodes == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "the plan places no ranks");
	for (size_t r = 0; r < p->n_ranks; r++)
		if (p->ranks[r].node < 0 || (size_t)p->ranks[r].node >= p->n_nodes)
			return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
					     "rank %zu is on node %d of a plan of %zu nodes", r,
					     p->ranks[r].node, p->n_nodes);
	rv = text_open(&t, err);
	if (rv != DTPLAN_OK)
		return rv;
	for (size_t r = 0; r < p->n_ranks; r++)
		fprintf(t.f, "%s\n", p->node_names[p->ranks[r].node]);
	return text_finish(&t, out, err);
}

bool dtplan_launch_torchrun(const struct dtplan_plan *p, int *nnodes, int *nproc_per_node)
{
	size_t per;

	if (nnodes != NULL)
		*nnodes = 0;
	if (nproc_per_node != NULL)
		*nproc_per_node = 0;
	if (p == NULL || p->n_nodes == 0 || p->n_ranks == 0 || p->n_ranks % p->n_nodes != 0)
		return false;
	per = p->n_ranks / p->n_nodes;
	for (size_t r = 0; r < p->n_ranks; r++)
		if (p->ranks[r].node != (int)(r / per) || p->ranks[r].local_rank != (int)(r % per))
			return false;
	if (nnodes != NULL)
		*nnodes = (int)p->n_nodes;
	if (nproc_per_node != NULL)
		*nproc_per_node = (int)per;
	return true;
}

/* Sets name to a string the caller made and frees it; NOMEM when text is NULL. */
static enum dtplan_err set_take(struct dtplan_env *e, const char *name, char *text)
{
	enum dtplan_err rv = text != NULL ? dtplan_env_set(e, name, "%s", text) : DTPLAN_ERR_NOMEM;

	free(text);
	return rv;
}

void dtplan_launch_in_init(struct dtplan_launch_in *l, const struct dtplan_plan *p, uint32_t job_id,
			   const char *job_addr, const char *job_port)
{
	long port = 0;

	memset(l, 0, sizeof(*l));
	if (job_addr != NULL && job_addr[0] != '\0')
		l->master_addr = job_addr;
	else if (p != NULL && p->n_nodes > 0)
		l->master_addr = p->node_names[0];
	if (job_port != NULL && job_port[0] != '\0' &&
	    dtplan_parse_long(job_port, "MASTER_PORT", 1, 65535, &port, NULL) == DTPLAN_OK)
		l->master_port = (int)port;
	else if (job_id != 0)
		l->master_port = dtplan_master_port(job_id);
}

enum dtplan_err dtplan_launch_env(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				  struct dtplan_env *e, struct dtplan_error *err)
{
	enum dtplan_err ret = DTPLAN_OK;
	char *megatron = NULL, *nemo = NULL, *titan = NULL, *bridge = NULL;
	int nnodes, per;

	if (e == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no environment given");
	ret = dtplan_launch_megatron_args(p, &megatron, err);
	if (ret == DTPLAN_OK)
		ret = dtplan_launch_nemo_overrides(p, &nemo, err);
	if (ret != DTPLAN_OK) {
		free(megatron);
		return ret;
	}
	ret |= set_take(e, "DT_MEGATRON_ARGS", megatron);
	ret |= set_take(e, "DT_NEMO_OVERRIDES", nemo);
	/* only where the framework can say the plan */
	if (dtplan_launch_torchtitan_args(p, &titan, NULL) == DTPLAN_OK)
		ret |= set_take(e, "DT_TORCHTITAN_ARGS", titan);
	if (dtplan_launch_megatron_bridge_overrides(p, &bridge, NULL) == DTPLAN_OK)
		ret |= set_take(e, "DT_MEGATRON_BRIDGE_OVERRIDES", bridge);
	if (dtplan_launch_torchrun(p, &nnodes, &per)) {
		ret |= dtplan_env_set(e, "PET_NNODES", "%d", nnodes);
		ret |= dtplan_env_set(e, "PET_NPROC_PER_NODE", "%d", per);
		ret |= dtplan_env_set(e, "PET_RDZV_BACKEND", "static");
		if (l != NULL && l->master_addr != NULL && l->master_addr[0] != '\0')
			ret |= dtplan_env_set(e, "PET_MASTER_ADDR", "%s", l->master_addr);
		if (l != NULL && l->master_port > 0)
			ret |= dtplan_env_set(e, "PET_MASTER_PORT", "%d", l->master_port);
	}
	if (l != NULL && l->hostfile != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_HOSTFILE", "%s", l->hostfile);
	if (l != NULL && l->deepspeed_config != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_DEEPSPEED_CONFIG", "%s", l->deepspeed_config);
	if (l != NULL && l->svg != NULL)
		ret |= dtplan_env_set(e, "DTPLAN_SVG", "%s", l->svg);
	/* Names are valid constants: every failure above is out of memory. */
	if (ret != DTPLAN_OK)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, "", 0, "out of memory");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_launch_hint(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				   char **out, struct dtplan_error *err)
{
	enum dtplan_err rv;
	struct text t;

	rv = check_plan(p, out, err);
	if (rv != DTPLAN_OK || (rv = text_open(&t, err)) != DTPLAN_OK)
		return rv;
	fputs("launch: ", t.f);
	if (l != NULL && l->hostfile != NULL)
		fprintf(t.f,
			"SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -m arbitrary -n %zu PROGRAM "
			"makes SLURM_PROCID the plan's rank",
			p->n_ranks);
	else if (p->n_ranks > 0)
		fprintf(t.f, "srun -n %zu PROGRAM gets RANK in plan order", p->n_ranks);
	else
		fputs("srun PROGRAM", t.f);
	fputs("; Megatron-LM: PROGRAM $DT_MEGATRON_ARGS; NeMo: PROGRAM $DT_NEMO_OVERRIDES", t.f);
	if (l != NULL && l->deepspeed_config != NULL)
		fputs("; DeepSpeed: --deepspeed_config $DTPLAN_DEEPSPEED_CONFIG", t.f);
	else
		fputs("; DeepSpeed: the plan JSON's launch.deepspeed", t.f);
	if (dtplan_launch_torchrun(p, NULL, NULL))
		fputs("; torchrun: srun --ntasks-per-node=1 torchrun PROGRAM (PET_* set)", t.f);
	else if (p->n_ranks > 0)
		fputs("; torchrun: nodes hold unequal runs of ranks, launch one task per GPU", t.f);
	fputs(" (doc/launchers.md)", t.f);
	return text_finish(&t, out, err);
}
