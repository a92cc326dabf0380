/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_launch.c: the plan in the frameworks' words (lib/launch/launch.c): exact
 * Megatron-LM arguments, NeMo overrides, DeepSpeed fragments, hostfiles,
 * torchrun's variables and the job log's line, for hand-made plans.
 */
#include "test_common.h"

#define MAX_NODES 16
#define MAX_RANKS 128

/* A hand-made plan with its own storage. */
struct fixture {
	struct dtplan_plan plan;
	char names[MAX_NODES][64];
	struct dtplan_rank ranks[MAX_RANKS];
};

/*
 * Llama 3 70B's shape on 16 nodes of 8: TP 8 x PP 4 x DP 4, ZeRO-1,
 * micro-batch 1 x 128 (global batch 4 x 1 x 128 = 512), sequence 8192,
 * selective recompute, stages of 19, 21, 21 and 19 layers, rank order
 * tp-pp-dp, a checkpoint every 250.9 steps, Megatron-LM's memory count.
 * Rank r on node gpu<r/8 + 1>, local rank r % 8.
 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct dtplan_candidate *c;

	assert_non_null(f);
	c = &f->plan.best;
	c->tp = 8;
	c->pp = 4;
	c->dp = 4;
	c->zero = 1;
	c->micro_batch = 1;
	c->num_microbatches = 128;
	c->global_batch = 512;
	c->recompute = DTPLAN_RECOMPUTE_SELECTIVE;
	c->stages.first = 19;
	c->stages.middle = 21;
	c->stages.last = 19;
	c->rank_order = DTPLAN_ORDER_TP_PP_DP;
	f->plan.request.framework = DTPLAN_FRAMEWORK_MEGATRON;
	f->plan.request.seq = 8192;
	f->plan.request.gpus = 128;
	f->plan.request.gpus_per_node = 8;
	f->plan.ckpt.interval_steps = 250.9;
	for (int n = 0; n < MAX_NODES; n++)
		snprintf(f->names[n], sizeof(f->names[n]), "gpu%02d", n + 1);
	for (int r = 0; r < MAX_RANKS; r++) {
		f->ranks[r].node = r / 8;
		f->ranks[r].local_rank = r % 8;
		f->ranks[r].gpu = r % 8;
	}
	f->plan.n_nodes = MAX_NODES;
	f->plan.node_names = f->names;
	f->plan.n_ranks = MAX_RANKS;
	f->plan.ranks = f->ranks;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Asserts fn(p) == want, freeing the text. */
#define assert_text(fn, p, want)                                                                   \
	do {                                                                                       \
		char *got_ = NULL;                                                                 \
		assert_int_equal(fn(p, &got_, NULL), DTPLAN_OK);                                   \
		assert_non_null(got_);                                                             \
		if (strcmp(got_, want) != 0)                                                       \
			fail_msg("%s:\n  got  '%s'\n  want '%s'", #fn, got_, want);                \
		free(got_);                                                                        \
	} while (0)

static void megatron_args__tp8_pp4_uneven_tp_pp_dp__every_flag(void **state)
{
	struct fixture *f = *state;

	/* Stages 19 + 21 + 21 + 19: first and last given, the two between take
	 * (80 - 19 - 19) / 2 = 21 each, as Megatron splits them. */
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer "
		    "--recompute-granularity selective "
		    "--decoder-first-pipeline-num-layers 19 --decoder-last-pipeline-num-layers 19 "
		    "--use-tp-pp-dp-mapping --save-interval 250");
}

static void nemo_overrides__tp8_pp4_uneven_tp_pp_dp__every_key(void **state)
{
	struct fixture *f = *state;

	assert_text(
		dtplan_launch_nemo_overrides, &f->plan,
		"trainer.num_nodes=16 trainer.devices=8 model.tensor_model_parallel_size=8 "
		"model.pipeline_model_parallel_size=4 model.micro_batch_size=1 "
		"model.global_batch_size=512 model.encoder_seq_length=8192 "
		"model.sequence_parallel=true model.activations_checkpoint_granularity=selective "
		"model.optim.name=distributed_fused_adam "
		"++model.num_layers_in_first_pipeline_stage=19 "
		"++model.num_layers_in_last_pipeline_stage=19 ++model.use_tp_pp_dp_mapping=true "
		"++exp_manager.checkpoint_callback_params.every_n_train_steps=250 "
		"++exp_manager.checkpoint_callback_params.every_n_epochs=0");
}

static void deepspeed_config__tp8_pp4__batch_identity(void **state)
{
	struct fixture *f = *state;

	/* train_batch_size 512 = micro-batch 1 x accumulation 128 x DP 4 */
	assert_text(dtplan_launch_deepspeed_config, &f->plan,
		    "{\n"
		    "  \"train_batch_size\": 512,\n"
		    "  \"train_micro_batch_size_per_gpu\": 1,\n"
		    "  \"gradient_accumulation_steps\": 128,\n"
		    "  \"zero_optimization\": {\n"
		    "    \"stage\": 1\n"
		    "  },\n"
		    "  \"bf16\": {\n"
		    "    \"enabled\": true\n"
		    "  }\n"
		    "}\n");
}

static void deepspeed_config__offload__offload_optimizer_to_cpu(void **state)
{
	struct fixture *f = *state;
	struct dtplan_plan p = f->plan;

	p.best.offload = true;
	assert_text(dtplan_launch_deepspeed_config, &p,
		    "{\n"
		    "  \"train_batch_size\": 512,\n"
		    "  \"train_micro_batch_size_per_gpu\": 1,\n"
		    "  \"gradient_accumulation_steps\": 128,\n"
		    "  \"zero_optimization\": {\n"
		    "    \"stage\": 1,\n"
		    "    \"offload_optimizer\": {\n"
		    "      \"device\": \"cpu\"\n"
		    "    }\n"
		    "  },\n"
		    "  \"bf16\": {\n"
		    "    \"enabled\": true\n"
		    "  }\n"
		    "}\n");
}

static void hostfile__node_by_node__one_line_per_rank(void **state)
{
	struct fixture *f = *state;
	char *text = NULL, *line, *save = NULL;
	int r = 0;

	assert_int_equal(dtplan_launch_hostfile(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(text);
	assert_int_equal(strlen(text), 128 * strlen("gpu01\n"));
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char want[16];

		snprintf(want, sizeof(want), "gpu%02d", r / 8 + 1);
		if (strcmp(line, want) != 0)
			fail_msg("line %d: '%s', expected '%s'", r + 1, line, want);
		r++;
	}
	assert_int_equal(r, 128);
	free(text);
}

static void torchrun__node_by_node__16_nodes_of_8(void **state)
{
	struct fixture *f = *state;
	int nnodes = -1, per = -1;

	assert_true(dtplan_launch_torchrun(&f->plan, &nnodes, &per));
	assert_int_equal(nnodes, 16);
	assert_int_equal(per, 8);
	assert_true(dtplan_launch_torchrun(&f->plan, NULL, NULL));
}

/* Two nodes a, b of 2 ranks each, the ranks alternating between them. */
static void interleave(struct fixture *f)
{
	static const int node[4] = {0, 1, 0, 1}, local[4] = {0, 0, 1, 1};

	snprintf(f->names[0], 64, "a");
	snprintf(f->names[1], 64, "b");
	f->plan.n_nodes = 2;
	f->plan.n_ranks = 4;
	for (int r = 0; r < 4; r++) {
		f->ranks[r].node = node[r];
		f->ranks[r].local_rank = local[r];
	}
	f->plan.best.tp = 1;
	f->plan.best.pp = 1;
	f->plan.best.dp = 4;
	f->plan.best.global_batch = 512; /* 4 x 1 x 128 */
}

static void hostfile_and_torchrun__ranks_alternate_nodes__file_follows_torchrun_refuses(void **state)
{
	struct fixture *f = *state;
	int nnodes = -1, per = -1;

	interleave(f);
	assert_text(dtplan_launch_hostfile, &f->plan, "a\nb\na\nb\n");
	/* torchrun would give a ranks 0, 1: not the plan's. */
	assert_false(dtplan_launch_torchrun(&f->plan, &nnodes, &per));
	assert_int_equal(nnodes, 0);
	assert_int_equal(per, 0);
	/* Unequal nodes: 3 ranks, 2 nodes. */
	f->plan.n_ranks = 3;
	assert_false(dtplan_launch_torchrun(&f->plan, NULL, NULL));
}

static void megatron_and_nemo__plain_dp__sizes_only(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;

	/* DP 8 on one node, no ZeRO, no recompute, no checkpoint steps, no
	 * placement: 8 x 4 x 32 = 1024. */
	c->tp = 1;
	c->pp = 1;
	c->dp = 8;
	c->zero = 0;
	c->micro_batch = 4;
	c->num_microbatches = 32;
	c->global_batch = 1024;
	c->recompute = DTPLAN_RECOMPUTE_NONE;
	c->stages = (struct dtplan_stage_layers){.first = 32};
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	f->plan.request.seq = 2048;
	f->plan.request.gpus = 8;
	f->plan.ckpt.interval_steps = 0.0;
	f->plan.n_nodes = 0;
	f->plan.n_ranks = 0;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
		    "--micro-batch-size 4 --global-batch-size 1024 --seq-length 2048 --bf16");
	assert_text(dtplan_launch_nemo_overrides, &f->plan,
		    "trainer.num_nodes=1 trainer.devices=8 model.tensor_model_parallel_size=1 "
		    "model.pipeline_model_parallel_size=1 model.micro_batch_size=4 "
		    "model.global_batch_size=1024 model.encoder_seq_length=2048 "
		    "model.sequence_parallel=false");
	assert_false(dtplan_launch_torchrun(&f->plan, NULL, NULL));
}

static void megatron_and_nemo__full_recompute_even_stages_zero2_and_3__flags(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;

	/* TP 2 x PP 2 x DP 2, even stages 16 + 16: no stage flags. */
	c->tp = 2;
	c->pp = 2;
	c->dp = 2;
	c->zero = 2;
	c->micro_batch = 2;
	c->num_microbatches = 16;
	c->global_batch = 64; /* 2 x 2 x 16 */
	c->recompute = DTPLAN_RECOMPUTE_FULL;
	c->stages = (struct dtplan_stage_layers){.first = 16, .last = 16};
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	f->plan.request.seq = 0; /* the model's context */
	f->plan.request.model.max_seq = 131072;
	f->plan.ckpt.interval_steps = 1.0;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
		    "--micro-batch-size 2 --global-batch-size 64 --seq-length 131072 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer --use-megatron-fsdp "
		    "--data-parallel-sharding-strategy optim_grads --ckpt-format fsdp_dtensor "
		    "--megatron-fsdp-main-grads-dtype fp32 --recompute-granularity full "
		    "--recompute-method uniform --recompute-num-layers 1 --save-interval 1");
	assert_text(dtplan_launch_nemo_overrides, &f->plan,
		    "trainer.num_nodes=16 trainer.devices=8 model.tensor_model_parallel_size=2 "
		    "model.pipeline_model_parallel_size=2 model.micro_batch_size=2 "
		    "model.global_batch_size=64 model.encoder_seq_length=131072 "
		    "model.sequence_parallel=true model.activations_checkpoint_granularity=full "
		    "model.activations_checkpoint_method=uniform "
		    "model.activations_checkpoint_num_layers=1 "
		    "model.optim.name=distributed_fused_adam "
		    "++exp_manager.checkpoint_callback_params.every_n_train_steps=1 "
		    "++exp_manager.checkpoint_callback_params.every_n_epochs=0");
	/* ZeRO-3 (PP 1): parameters sharded too. */
	c->pp = 1;
	c->dp = 4;
	c->zero = 3;
	c->global_batch = 128; /* 4 x 2 x 16 */
	c->recompute = DTPLAN_RECOMPUTE_NONE;
	c->stages = (struct dtplan_stage_layers){.first = 32};
	f->plan.ckpt.interval_steps = 0.5; /* under one step: no interval */
	assert_text(
		dtplan_launch_megatron_args, &f->plan,
		"--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
		"--micro-batch-size 2 --global-batch-size 128 --seq-length 131072 --bf16 "
		"--sequence-parallel --use-distributed-optimizer --use-megatron-fsdp "
		"--data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor "
		"--megatron-fsdp-main-grads-dtype fp32");
	assert_text(dtplan_launch_nemo_overrides, &f->plan,
		    "trainer.num_nodes=16 trainer.devices=8 model.tensor_model_parallel_size=2 "
		    "model.pipeline_model_parallel_size=1 model.micro_batch_size=2 "
		    "model.global_batch_size=128 model.encoder_seq_length=131072 "
		    "model.sequence_parallel=true ++model.fsdp=true");
}

/* Fine recomputation names Megatron-Core's recompute modules the model has
 * (TransformerConfig refuses mla_up_proj without latent attention and
 * moe_act without experts); bf16 moments its precision-aware optimizer. */
static void megatron_and_nemo__fine_recompute_bf16_moments__modules_of_the_model(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	char *got = NULL;

	c->recompute = DTPLAN_RECOMPUTE_FINE;
	f->plan.request.moments = DTPLAN_MOMENTS_BF16;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer "
		    "--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 "
		    "--recompute-granularity selective --recompute-modules core_attn layernorm "
		    "--decoder-first-pipeline-num-layers 19 --decoder-last-pipeline-num-layers 19 "
		    "--use-tp-pp-dp-mapping --save-interval 250");
	/* latent attention and experts: both of their modules */
	f->plan.request.model.kv_lora_rank = 512;
	f->plan.request.model.experts = 256;
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &got, NULL), DTPLAN_OK);
	assert_non_null(strstr(got, " --recompute-modules core_attn layernorm mla_up_proj "
				    "moe_act --decoder"));
	free(got);
	got = NULL;
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, &got, NULL), DTPLAN_OK);
	assert_non_null(strstr(got, " model.activations_checkpoint_granularity=selective "
				    "++model.recompute_modules=[core_attn,layernorm,mla_up_proj,"
				    "moe_act] "));
	free(got);
}

static void megatron_args__pp2_first_differs__both_stage_flags(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	char *text = NULL;

	c->pp = 2;
	c->dp = 8;
	c->stages = (struct dtplan_stage_layers){.first = 41, .last = 39};
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, " --decoder-first-pipeline-num-layers 41 "
				     "--decoder-last-pipeline-num-layers 39 "));
	free(text);
	/* A split the plan does not know (a plan read back from JSON): no flags. */
	c->stages = (struct dtplan_stage_layers){0};
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &text, NULL), DTPLAN_OK);
	assert_null(strstr(text, "pipeline-num-layers"));
	free(text);
}

/*
 * Megatron-LM's account-for-embedding/loss split (Llama 3.1 405B's 126
 * layers + 2 in 16 stages of 8, 8 chunks each: stages of 7, 8, ..., 8, 7
 * layers; TransformerConfig.__post_init__, megatron/core/transformer/
 * transformer_config.py, d98e8a6): the two flags and the chunk count, never
 * the first and last stage's layer counts, which vp does not divide.
 */
/* Whether the plan's Megatron-Bridge overrides, for a model of this name
 * and config.json family, give TP under model.transformer (else flat). */
static bool bridge_nested(struct dtplan_plan *p, const char *name, const char *family)
{
	char *text = NULL;
	bool nested;

	snprintf(p->request.model.name, sizeof(p->request.model.name), "%s", name);
	snprintf(p->request.model.family, sizeof(p->request.model.family), "%s", family);
	assert_int_equal(dtplan_launch_megatron_bridge_overrides(p, &text, NULL), DTPLAN_OK);
	nested = strstr(text, "model.transformer.tensor_model_parallel_size=") != NULL;
	/* one or the other, never both */
	assert_true(nested == (strstr(text, "model.tensor_model_parallel_size=") == NULL));
	free(text);
	return nested;
}

static void megatron_nemo_bridge__account_split__flags_not_layer_counts(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	char *text = NULL;

	f->plan.request.model.layers = 126;
	c->pp = 16;
	c->tp = 4;
	c->dp = 2;
	c->vp = 8;
	c->stages = (struct dtplan_stage_layers){.first = 7, .middle = 8, .last = 7};
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, " --account-for-embedding-in-pipeline-split "
				     "--account-for-loss-in-pipeline-split "
				     "--num-virtual-stages-per-pipeline-rank 8 "));
	assert_null(strstr(text, "pipeline-num-layers"));
	free(text);
	text = NULL;
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, " ++model.account_for_embedding_in_pipeline_split=true "
				     "++model.account_for_loss_in_pipeline_split=true "
				     "model.virtual_pipeline_model_parallel_size=8"));
	assert_null(strstr(text, "pipeline_stage="));
	free(text);
	text = NULL;
	/* a Llama, preset or config.json, goes under the Llama recipes'
	 * nested model.transformer (bridge_model_key()), nothing else does:
	 * not a llama-named config of another family */
	assert_false(bridge_nested(&f->plan, "", ""));
	assert_true(bridge_nested(&f->plan, "llama3-405b", ""));
	assert_true(bridge_nested(&f->plan, "config.json", "llama"));
	assert_false(bridge_nested(&f->plan, "llama-moe.json", "qwen3_moe"));
	f->plan.request.model.name[0] = f->plan.request.model.family[0] = '\0';
	assert_int_equal(dtplan_launch_megatron_bridge_overrides(&f->plan, &text, NULL), DTPLAN_OK);
	/* a recipe's own split cleared: the layer counts null */
	assert_non_null(strstr(text, " model.virtual_pipeline_model_parallel_size=8 "
				     "model.num_layers_in_first_pipeline_stage=null "
				     "model.num_layers_in_last_pipeline_stage=null "
				     "model.account_for_embedding_in_pipeline_split=true "
				     "model.account_for_loss_in_pipeline_split=true "
				     "model.pipeline_model_parallel_layout=null"));
	free(text);
	/* the same counts without interleaving: the layer counts say it */
	c->vp = 1;
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, " --decoder-first-pipeline-num-layers 7 "
				     "--decoder-last-pipeline-num-layers 7"));
	assert_null(strstr(text, "account-for"));
	free(text);
}

/*
 * Megatron-LM's pipeline layout (DeepSeek-V3's 61 layers on PP 4 with vp=4:
 * 15 chunks of 4 and a last of 1, stages of 16, 16, 16 and 13 layers, the
 * layout Megatron-Bridge's recipes give it, _get_deepseek_v3_pipeline_
 * layout(), src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py,
 * 067f987, without its MTP layer): one string of E, t, | and L
 * (PipelineParallelLayerLayout.parse_str_to_list(), megatron/core/
 * transformer/pipeline_parallel_layer_layout.py, d98e8a6), which Megatron-LM
 * takes instead of the chunk count and the stage layer counts.
 */
static void megatron_nemo_bridge__layout_split__one_layout_string(void **state)
{
	static const char layout[] = "Etttt|tttt|tttt|tttt|tttt|tttt|tttt|tttt|tttt|tttt|tttt|"
				     "tttt|tttt|tttt|tttt|tL";
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	char *text = NULL, want[512];

	f->plan.request.model.layers = 61;
	c->pp = 4;
	c->tp = 1;
	c->dp = 32;
	c->vp = 4;
	c->stages = (struct dtplan_stage_layers){.first = 16, .middle = 16, .last = 13};
	snprintf(want, sizeof(want), " --pipeline-model-parallel-layout %s ", layout);
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, want));
	assert_null(strstr(text, "pipeline-num-layers"));
	assert_null(strstr(text, "virtual"));
	free(text);
	text = NULL;
	snprintf(want, sizeof(want), " ++model.pipeline_model_parallel_layout=%s ", layout);
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, want));
	assert_null(strstr(text, "pipeline_stage="));
	free(text);
	text = NULL;
	snprintf(want, sizeof(want),
		 " model.num_layers_in_first_pipeline_stage=null "
		 "model.num_layers_in_last_pipeline_stage=null "
		 "model.account_for_embedding_in_pipeline_split=false "
		 "model.account_for_loss_in_pipeline_split=false "
		 "model.pipeline_model_parallel_layout=%s ",
		 layout);
	assert_int_equal(dtplan_launch_megatron_bridge_overrides(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, want));
	free(text);
}

/*
 * Megatron-Bridge's MoE recipes (067f987): Qwen3-30B-A3B's names its
 * mixed-precision recipe ("bf16_mixed") and recomputes in full (uniform, one
 * layer), DeepSeek-V3's holds a MixedPrecisionConfig and one MTP layer.  fp8
 * is a named recipe, which replaces either (no mixed_precision.* key, none
 * in struct mode over a name); fine recomputation clears the method and the
 * layer count ("When using recompute_granularity: selective
 * recompute_num_layers must be None", TransformerConfig.__post_init__(),
 * d98e8a6); multi-token prediction is off, as in the plan.
 */
static void megatron_bridge__moe_recipes__named_fp8_selective_no_mtp(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	char *text = NULL;

	snprintf(f->plan.request.model.name, sizeof(f->plan.request.model.name), "%s",
		 "hf-qwen3-30b-a3b.json");
	f->plan.request.model.layers = 48;
	f->plan.request.model.experts = 128;
	f->plan.request.model.top_k = 8;
	f->plan.request.precision = DTPLAN_PRECISION_FP8;
	c->tp = 2;
	c->pp = 1;
	c->ep = 4;
	c->dp = 64;
	c->recompute = DTPLAN_RECOMPUTE_FINE;
	c->stages = (struct dtplan_stage_layers){.first = 48, .middle = 0, .last = 48};
	assert_int_equal(dtplan_launch_megatron_bridge_overrides(&f->plan, &text, NULL), DTPLAN_OK);
	assert_non_null(strstr(text, " model.expert_model_parallel_size=4 "));
	assert_non_null(strstr(text, " mixed_precision=bf16_with_fp8_current_scaling_mixed "));
	assert_null(strstr(text, "mixed_precision."));
	assert_non_null(strstr(text, " model.mtp_num_layers=null "));
	assert_non_null(strstr(text, " model.recompute_granularity=selective "
				     "model.recompute_method=null model.recompute_num_layers=null "
				     "model.recompute_modules=[core_attn,layernorm,moe_act] "));
	free(text);
}

static void launch_in_init__job_values_win_when_valid(void **state)
{
	struct fixture *f = *state;
	struct dtplan_launch_in l;

	dtplan_launch_in_init(&l, &f->plan, 1234, NULL, NULL);
	assert_string_equal(l.master_addr, "gpu01");
	assert_int_equal(l.master_port, 29734); /* 29500 + 1234 % 1000 */
	assert_null(l.hostfile);
	assert_null(l.deepspeed_config);
	assert_null(l.svg);
	dtplan_launch_in_init(&l, &f->plan, 1234, "login7", "12345");
	assert_string_equal(l.master_addr, "login7");
	assert_int_equal(l.master_port, 12345);
	/* A port that is not one: the plan's. */
	dtplan_launch_in_init(&l, &f->plan, 1234, "", "70000");
	assert_string_equal(l.master_addr, "gpu01");
	assert_int_equal(l.master_port, 29734);
	dtplan_launch_in_init(&l, &f->plan, 1234, NULL, "x1");
	assert_int_equal(l.master_port, 29734);
	/* No job and no placement: nothing known. */
	f->plan.n_nodes = 0;
	dtplan_launch_in_init(&l, &f->plan, 0, NULL, NULL);
	assert_null(l.master_addr);
	assert_int_equal(l.master_port, 0);
	dtplan_launch_in_init(&l, NULL, 0, NULL, NULL);
	assert_null(l.master_addr);
}

static void launch_env__files_and_rendezvous__every_variable(void **state)
{
	struct fixture *f = *state;
	struct dtplan_launch_in l = {.master_addr = "gpu01",
				     .master_port = 29734,
				     .hostfile = "/w/dtplan-7.hosts",
				     .deepspeed_config = "/w/dtplan-7.deepspeed.json",
				     .svg = "/w/dtplan-7.svg"};
	static const char *const names[] = {"DT_MEGATRON_ARGS",
					    "DT_NEMO_OVERRIDES",
					    "DT_MEGATRON_BRIDGE_OVERRIDES",
					    "PET_NNODES",
					    "PET_NPROC_PER_NODE",
					    "PET_RDZV_BACKEND",
					    "PET_MASTER_ADDR",
					    "PET_MASTER_PORT",
					    "DTPLAN_HOSTFILE",
					    "DTPLAN_DEEPSPEED_CONFIG",
					    "DTPLAN_SVG"};
	char *megatron = NULL;
	struct dtplan_env e;

	dtplan_env_init(&e);
	assert_int_equal(dtplan_launch_env(&f->plan, &l, &e, NULL), DTPLAN_OK);
	assert_int_equal(e.n, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < e.n; i++)
		assert_string_equal(e.vars[i].name, names[i]);
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &megatron, NULL), DTPLAN_OK);
	assert_string_equal(dtplan_env_get(&e, "DT_MEGATRON_ARGS"), megatron);
	free(megatron);
	assert_string_equal(dtplan_env_get(&e, "PET_NNODES"), "16");
	assert_string_equal(dtplan_env_get(&e, "PET_NPROC_PER_NODE"), "8");
	assert_string_equal(dtplan_env_get(&e, "PET_RDZV_BACKEND"), "static");
	assert_string_equal(dtplan_env_get(&e, "PET_MASTER_ADDR"), "gpu01");
	assert_string_equal(dtplan_env_get(&e, "PET_MASTER_PORT"), "29734");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_HOSTFILE"), "/w/dtplan-7.hosts");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_DEEPSPEED_CONFIG"),
			    "/w/dtplan-7.deepspeed.json");
	assert_string_equal(dtplan_env_get(&e, "DTPLAN_SVG"), "/w/dtplan-7.svg");
	dtplan_env_fini(&e);

	/* Ranks torchrun would number otherwise, no files: the frameworks'
	 * arguments only. */
	interleave(f);
	dtplan_env_init(&e);
	assert_int_equal(dtplan_launch_env(&f->plan, NULL, &e, NULL), DTPLAN_OK);
	assert_int_equal(e.n, 3);
	assert_non_null(dtplan_env_get(&e, "DT_MEGATRON_ARGS"));
	assert_non_null(dtplan_env_get(&e, "DT_NEMO_OVERRIDES"));
	assert_non_null(dtplan_env_get(&e, "DT_MEGATRON_BRIDGE_OVERRIDES"));
	dtplan_env_fini(&e);
}

static void launch_hint__with_and_without_files__one_line(void **state)
{
	struct fixture *f = *state;
	struct dtplan_launch_in l = {.master_addr = "gpu01",
				     .master_port = 29734,
				     .hostfile = "/w/dtplan-7.hosts",
				     .deepspeed_config = "/w/dtplan-7.deepspeed.json"};
	char *text = NULL;

	assert_int_equal(dtplan_launch_hint(&f->plan, &l, &text, NULL), DTPLAN_OK);
	assert_string_equal(text,
			    "launch: SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -m arbitrary -n 128 "
			    "PROGRAM makes SLURM_PROCID the plan's rank; Megatron-LM: PROGRAM "
			    "$DT_MEGATRON_ARGS; NeMo: PROGRAM $DT_NEMO_OVERRIDES; DeepSpeed: "
			    "--deepspeed_config $DTPLAN_DEEPSPEED_CONFIG; torchrun: srun "
			    "--ntasks-per-node=1 torchrun PROGRAM (PET_* set) "
			    "(doc/launchers.md)");
	free(text);
	interleave(f);
	assert_int_equal(dtplan_launch_hint(&f->plan, NULL, &text, NULL), DTPLAN_OK);
	assert_string_equal(text,
			    "launch: srun -n 4 PROGRAM gets RANK in plan order; "
			    "Megatron-LM: PROGRAM $DT_MEGATRON_ARGS; NeMo: PROGRAM "
			    "$DT_NEMO_OVERRIDES; DeepSpeed: the plan JSON's launch.deepspeed; "
			    "torchrun: nodes hold unequal runs of ranks, launch one task per "
			    "GPU (doc/launchers.md)");
	assert_null(strchr(text, '\n'));
	free(text);
}

static void launch__bad_plans__inval_naming_why(void **state)
{
	struct fixture *f = *state;
	struct dtplan_error err = {0};
	char *text = (char *)"untouched";
	struct dtplan_env e;

	assert_int_equal(dtplan_launch_megatron_args(NULL, &text, &err), DTPLAN_ERR_INVAL);
	assert_null(text);
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, NULL, NULL), DTPLAN_ERR_INVAL);
	f->plan.best.num_microbatches = 0;
	assert_int_equal(dtplan_launch_deepspeed_config(&f->plan, &text, &err), DTPLAN_ERR_INVAL);
	assert_null(text);
	assert_non_null(strstr(err.text, "the plan has no parallel split"));
	dtplan_env_init(&e);
	assert_int_equal(dtplan_launch_env(&f->plan, NULL, &e, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(e.n, 0);
	assert_int_equal(dtplan_launch_env(&f->plan, NULL, NULL, NULL), DTPLAN_ERR_INVAL);
	f->plan.best.num_microbatches = 128;
	/* No placement: no hostfile. */
	f->plan.n_ranks = 0;
	assert_int_equal(dtplan_launch_hostfile(&f->plan, &text, &err), DTPLAN_ERR_INVAL);
	assert_null(text);
	assert_string_equal(err.text, "the plan places no ranks");
	/* A rank on a node the plan lacks. */
	f->plan.n_ranks = MAX_RANKS;
	f->ranks[5].node = 16;
	assert_int_equal(dtplan_launch_hostfile(&f->plan, &text, &err), DTPLAN_ERR_INVAL);
	assert_string_equal(err.text, "rank 5 is on node 16 of a plan of 16 nodes");
	assert_false(dtplan_launch_torchrun(&f->plan, NULL, NULL));
	assert_false(dtplan_launch_torchrun(NULL, NULL, NULL));
}

/*
 * Megatron-LM's spelling, type and constraints for what the plan adds, as
 * megatron/training/arguments.py (validate_args()), megatron/core/
 * transformer/transformer_config.py and megatron/training/config/
 * training_config.py read at d98e8a64ddf34856e74b24714e3bedb2f5a39553 have
 * them:
 *   --use-megatron-fsdp asserts ckpt_format == "fsdp_dtensor" (choices
 *   torch, torch_dist, torch_dcp, fsdp_dtensor; default torch_dist) and
 *   turns the distributed optimizer on; --data-parallel-sharding-strategy
 *   choices no_shard, optim, optim_grads, optim_grads_params;
 *   --megatron-fsdp-main-grads-dtype choices fp32, bf16, fp16, auto
 *   (default auto: the model's bf16);
 *   --fp8-format (TransformerConfig.fp8) choices e4m3, hybrid;
 *   --fp8-recipe choices tensorwise, delayed, mxfp8, blockwise, custom;
 *   --optimizer-cpu-offload asserts --use-precision-aware-optimizer, which
 *   needs the distributed optimizer (megatron/core/optimizer/__init__.py);
 *   --optimizer-offload-fraction is a float;
 *   --grad-reduce-in-bf16 (store_true) keeps main gradients and their
 *   reduction in bf16.
 */
static void megatron_args__fsdp_fp8_offload_deepspeed_count__as_megatron_spells_them(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;

	/* Megatron-FSDP ZeRO-3 with PP (no PP assertion), fp8 on Hopper */
	c->zero = 3;
	c->stages = (struct dtplan_stage_layers){.first = 20, .middle = 20, .last = 20};
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	c->recompute = DTPLAN_RECOMPUTE_NONE;
	f->plan.request.precision = DTPLAN_PRECISION_FP8;
	snprintf(f->plan.request.gpu.name, sizeof(f->plan.request.gpu.name), "h100-sxm");
	assert_text(
		dtplan_launch_megatron_args, &f->plan,
		"--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
		"--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		"--fp8-format hybrid --fp8-recipe tensorwise --sequence-parallel "
		"--use-distributed-optimizer --use-megatron-fsdp "
		"--data-parallel-sharding-strategy optim_grads_params --ckpt-format fsdp_dtensor "
		"--megatron-fsdp-main-grads-dtype fp32 --save-interval 250");
	/* MXFP8 blocks on Blackwell */
	snprintf(f->plan.request.gpu.name, sizeof(f->plan.request.gpu.name), "b200");
	c->zero = 1;
	c->offload = true;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--fp8-format e4m3 --fp8-recipe mxfp8 --sequence-parallel "
		    "--use-distributed-optimizer --use-precision-aware-optimizer "
		    "--optimizer-cpu-offload --optimizer-offload-fraction 1.0 --save-interval 250");
	/* counted as DeepSpeed holds gradients (2 bytes): bf16 main gradients,
	 * reduced in bf16; under Megatron-FSDP its own main-gradient dtype */
	f->plan.request.framework = DTPLAN_FRAMEWORK_DEEPSPEED;
	f->plan.request.precision = DTPLAN_PRECISION_BF16;
	c->offload = false;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer --grad-reduce-in-bf16 "
		    "--save-interval 250");
	c->zero = 2;
	c->pp = 1;
	c->dp = 16;
	c->num_microbatches = 32;
	c->stages = (struct dtplan_stage_layers){.first = 80};
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer --use-megatron-fsdp "
		    "--data-parallel-sharding-strategy optim_grads --ckpt-format fsdp_dtensor "
		    "--megatron-fsdp-main-grads-dtype bf16 --save-interval 250");
	/* Megatron-LM's own count told grads=bf16 holds them so too; fp32
	 * named is its default */
	f->plan.request.framework = DTPLAN_FRAMEWORK_MEGATRON;
	f->plan.request.grads = DTPLAN_GRADS_BF16;
	c->zero = 1;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer --grad-reduce-in-bf16 "
		    "--save-interval 250");
	f->plan.request.grads = DTPLAN_GRADS_FP32;
	assert_text(dtplan_launch_megatron_args, &f->plan,
		    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 "
		    "--micro-batch-size 1 --global-batch-size 512 --seq-length 8192 --bf16 "
		    "--sequence-parallel --use-distributed-optimizer --save-interval 250");
}

/*
 * torchtitan's options as torchtitan/config/configs.py (ParallelismConfig,
 * TrainingConfig), components/checkpointer/base.py (interval) and
 * distributed/activation_checkpoint.py (the "full"/"none" subcommands) at
 * b5bcd76c66d0acb1a08b176d9639425bc55e0b2a spell them; the pipeline split
 * as _generate_llm_fqn_per_model_part() makes it: 81 effective layers (80,
 * the last stage one short) over 4 stages of 21 (the first gets the
 * remainder) are 21 + 20 + 20 + 19.  With PP, CUDA graphs off
 * (Trainer.Config._validate_cuda_graphs(), trainer.py: "CUDA graphs do not
 * support pipeline parallelism yet"); an interval with checkpoint.enable,
 * off by default (BaseCheckpointManager.Config, components/checkpointer/
 * base.py).
 */
static void torchtitan_args__fsdp2_tp_pp__options_it_has(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	struct dtplan_error err = {0};
	char *out = NULL;

	f->plan.request.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	f->plan.request.model.layers = 80;
	c->tp = 4;
	c->zero = 2;
	c->stages = (struct dtplan_stage_layers){.first = 21, .middle = 20, .last = 19};
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	c->recompute = DTPLAN_RECOMPUTE_FULL;
	f->plan.best.dp = 8;
	c->num_microbatches = 64; /* 8 x 1 x 64 = 512 */
	assert_text(
		dtplan_launch_torchtitan_args, &f->plan,
		"--parallelism.data_parallel_replicate_degree 1 "
		"--parallelism.data_parallel_shard_degree 8 "
		"--parallelism.tensor_parallel_degree 4 --parallelism.context_parallel_degree 1 "
		"--parallelism.pipeline_parallel_degree 4 "
		"--parallelism.fsdp_reshard_after_forward never "
		"--parallelism.pipeline_parallel_schedule 1F1B "
		"--parallelism.num_pp_microbatches 64 "
		"--parallelism.pipeline_parallel_layers_per_stage 21 "
		"--parallelism.pipeline_parallel_first_stage_less_layers 0 "
		"--parallelism.pipeline_parallel_last_stage_less_layers 1 "
		"--training.num_tokens_per_microbatch_per_dp_rank 8192 "
		"--training.num_tokens_per_train_step 4194304 --training.max_context_length 8192 "
		"--training.disable_cuda_graphs --checkpoint.enable --checkpoint.interval 250 "
		"activation-checkpoint:full");
	/* interleaved, 5 chunks of 4 layers on each of 4 stages */
	c->vp = 5;
	c->zero = 3;
	c->stages = (struct dtplan_stage_layers){.first = 20, .middle = 20, .last = 20};
	c->recompute = DTPLAN_RECOMPUTE_NONE;
	f->plan.ckpt.interval_steps = 0.0;
	assert_text(
		dtplan_launch_torchtitan_args, &f->plan,
		"--parallelism.data_parallel_replicate_degree 1 "
		"--parallelism.data_parallel_shard_degree 8 "
		"--parallelism.tensor_parallel_degree 4 --parallelism.context_parallel_degree 1 "
		"--parallelism.pipeline_parallel_degree 4 "
		"--parallelism.fsdp_reshard_after_forward always "
		"--parallelism.pipeline_parallel_schedule Interleaved1F1B "
		"--parallelism.num_pp_microbatches 64 "
		"--parallelism.pipeline_parallel_layers_per_stage 4 "
		"--parallelism.pipeline_parallel_first_stage_less_layers 0 "
		"--parallelism.pipeline_parallel_last_stage_less_layers 0 "
		"--training.num_tokens_per_microbatch_per_dp_rank 8192 "
		"--training.num_tokens_per_train_step 4194304 --training.max_context_length 8192 "
		"--training.disable_cuda_graphs activation-checkpoint:none");
	/* DDP for ZeRO-0 (dp_replicate), no pipeline flags with PP 1 */
	c->vp = 1;
	c->pp = 1;
	c->zero = 0;
	c->dp = 32;
	c->num_microbatches = 16;
	c->stages = (struct dtplan_stage_layers){.first = 80};
#define DDP_ARGS                                                                                   \
	"--parallelism.data_parallel_replicate_degree 32 "                                         \
	"--parallelism.data_parallel_shard_degree 1 "                                              \
	"--parallelism.tensor_parallel_degree 4 --parallelism.context_parallel_degree 1 "          \
	"--parallelism.pipeline_parallel_degree 1 "                                                \
	"--training.num_tokens_per_microbatch_per_dp_rank 8192 "                                   \
	"--training.num_tokens_per_train_step 4194304 --training.max_context_length 8192 "
	assert_text(dtplan_launch_torchtitan_args, &f->plan, DDP_ARGS "activation-checkpoint:none");
	/* selective as the plan counted it: torchtitan's own per-op policy,
	 * the union's "selective" subcommand (activation_checkpoint.py) */
	c->recompute = DTPLAN_RECOMPUTE_SELECTIVE;
	assert_text(dtplan_launch_torchtitan_args, &f->plan,
		    DDP_ARGS "activation-checkpoint:selective");
#undef DDP_ARGS
	/* a plan counted with Megatron-LM's selective, or its recompute
	 * modules, is not what torchtitan would rerun */
	f->plan.request.framework = DTPLAN_FRAMEWORK_MEGATRON;
	assert_int_equal(dtplan_launch_torchtitan_args(&f->plan, &out, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.text, "per-op"));
	f->plan.request.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	c->recompute = DTPLAN_RECOMPUTE_FINE;
	assert_int_equal(dtplan_launch_torchtitan_args(&f->plan, &out, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.text, "no recompute modules"));
	c->recompute = DTPLAN_RECOMPUTE_NONE;
	/* what its mesh cannot hold: said, no options */
	c->rank_order = DTPLAN_ORDER_TP_PP_DP;
	assert_int_equal(dtplan_launch_torchtitan_args(&f->plan, &out, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_null(out);
	assert_string_equal(err.text, "torchtitan cannot run this plan as it is: its mesh is pp, "
				      "dp_replicate, dp_shard, cp, tp: no tp-pp-dp rank order");
	c->rank_order = DTPLAN_ORDER_TP_DP_PP;
	c->zero = 1;
	assert_int_equal(dtplan_launch_torchtitan_args(&f->plan, &out, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.text, "no ZeRO-1"));
}

/*
 * A folded plan whose experts' TP is not TP's: Megatron-LM takes
 * --expert-tensor-parallel-size; NeMo 1.x (8cfedd7) copies the key into its
 * model config but forms the process groups at TP's size
 * (nlp_overrides.py's initialize_model_parallel() call has no
 * expert_tensor_parallel_size), so its overrides are refused, and the job
 * gets no DT_NEMO_OVERRIDES.
 */
static void megatron_and_nemo__etp_not_tp__nemo_refused(void **state)
{
	struct fixture *f = *state;
	struct dtplan_candidate *c = &f->plan.best;
	struct dtplan_error err = {0};
	struct dtplan_env e;
	char *out = NULL, *args = NULL;

	c->ep = 8;
	c->etp = 1;
	assert_int_equal(dtplan_launch_megatron_args(&f->plan, &args, NULL), DTPLAN_OK);
	assert_non_null(strstr(args, "--expert-model-parallel-size 8 "));
	assert_non_null(strstr(args, "--expert-tensor-parallel-size 1"));
	free(args);
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, &out, &err),
			 DTPLAN_ERR_UNSUPPORTED);
	assert_null(out);
	assert_string_equal(err.source, "etp");
	assert_non_null(strstr(err.text, "TP's size (8)"));
	assert_non_null(strstr(err.text, "experts' TP 1"));
	dtplan_env_init(&e);
	assert_int_equal(dtplan_launch_env(&f->plan, NULL, &e, NULL), DTPLAN_OK);
	assert_non_null(dtplan_env_get(&e, "DT_MEGATRON_ARGS"));
	assert_null(dtplan_env_get(&e, "DT_NEMO_OVERRIDES"));
	dtplan_env_fini(&e);
	/* the experts' TP left TP's: NeMo runs it, without the key */
	c->etp = 8;
	assert_int_equal(dtplan_launch_nemo_overrides(&f->plan, &out, NULL), DTPLAN_OK);
	assert_non_null(strstr(out, "model.expert_model_parallel_size=8"));
	assert_null(strstr(out, "expert_tensor_parallel_size"));
	free(out);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(megatron_args__tp8_pp4_uneven_tp_pp_dp__every_flag),
		T(nemo_overrides__tp8_pp4_uneven_tp_pp_dp__every_key),
		T(deepspeed_config__tp8_pp4__batch_identity),
		T(deepspeed_config__offload__offload_optimizer_to_cpu),
		T(hostfile__node_by_node__one_line_per_rank),
		T(torchrun__node_by_node__16_nodes_of_8),
		T(hostfile_and_torchrun__ranks_alternate_nodes__file_follows_torchrun_refuses),
		T(megatron_and_nemo__plain_dp__sizes_only),
		T(megatron_and_nemo__full_recompute_even_stages_zero2_and_3__flags),
		T(megatron_and_nemo__fine_recompute_bf16_moments__modules_of_the_model),
		T(megatron_and_nemo__etp_not_tp__nemo_refused),
		T(megatron_args__pp2_first_differs__both_stage_flags),
		T(megatron_nemo_bridge__account_split__flags_not_layer_counts),
		T(megatron_nemo_bridge__layout_split__one_layout_string),
		T(megatron_bridge__moe_recipes__named_fp8_selective_no_mtp),
		T(launch_in_init__job_values_win_when_valid),
		T(launch_env__files_and_rendezvous__every_variable),
		T(launch_hint__with_and_without_files__one_line),
		T(launch__bad_plans__inval_naming_why),
		T(megatron_args__fsdp_fp8_offload_deepspeed_count__as_megatron_spells_them),
		T(torchtitan_args__fsdp2_tp_pp__options_it_has),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
