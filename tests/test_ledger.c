/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ledger.c: memory per GPU (DESIGN.md acceptance numbers, Korthikanti's activations).
 */
#include "test_common.h"

#include "dtplan.h"
#include "cost/cost.h"

#include <strings.h>

#define GB 1e9

static struct dtplan_model model_of_size(double params)
{
	struct dtplan_model m;

	assert_int_equal(dtplan_model_from_size(params, &m, NULL), DTPLAN_OK);
	return m;
}

static void ledger__7b_one_gpu__112_gb(void **state)
{
	struct dtplan_model m = model_of_size(7e9);
	struct dtplan_ledger_in in = {.model = &m, .tp = 1, .pp = 1, .dp = 1};
	struct dtplan_ledger l;

	(void)state;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	/* 7e9 * 2 = 14 GB weights, 14 GB grads, (4 + 4 + 4) * 7e9 = 84 GB optimizer */
	assert_near(l.params_per_gpu, 7e9, 0.0);
	assert_near(l.weights, 14 * GB, 1.0);
	assert_near(l.gradients, 14 * GB, 1.0);
	assert_near(l.optimizer, 84 * GB, 1.0);
	assert_near(l.activations, 0.0, 0.0);
	assert_near(l.total, 112 * GB, 1.0);
}

static void ledger__70b__1120_gb_or_840_without_master(void **state)
{
	struct dtplan_model m = model_of_size(70e9);
	struct dtplan_ledger_in in = {.model = &m, .tp = 1, .pp = 1, .dp = 1};
	struct dtplan_ledger l;

	(void)state;
	/* 70e9 * 16 = 1120e9 */
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.total, 1120 * GB, 1.0);
	/* 70e9 * 12 = 840e9: optimizer 8 bytes (m, v) = 560 GB */
	in.no_master_copy = true;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.optimizer, 560 * GB, 1.0);
	assert_near(l.total, 840 * GB, 1.0);
}

/* 7B on 8 GPUs of DP, per GPU (ZeRO paper: 4 + 12/N, 2 + 14/N, 16/N bytes/param) */
static const struct {
	int zero;
	double weights, grads, optimizer, total; /* GB */
} zero_cases[] = {
	{0, 14, 14, 84, 112},
	/* 14 + 14 + 84/8 = 38.5 */
	{1, 14, 14, 10.5, 38.5},
	/* 14 + (14 + 84)/8 = 14 + 12.25 = 26.25 */
	{2, 14, 1.75, 10.5, 26.25},
	/* 112 / 8 = 14 */
	{3, 1.75, 1.75, 10.5, 14.0},
};

static void ledger__7b_8_gpus_zero_0_to_3__seed_numbers(void **state)
{
	struct dtplan_model m = model_of_size(7e9);

	(void)state;
	for (size_t i = 0; i < sizeof(zero_cases) / sizeof(zero_cases[0]); i++) {
		struct dtplan_ledger_in in = {
			.model = &m, .tp = 1, .pp = 1, .dp = 8, .zero = zero_cases[i].zero};
		struct dtplan_ledger l;

		assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
		assert_near(l.weights, zero_cases[i].weights * GB, 1.0);
		assert_near(l.gradients, zero_cases[i].grads * GB, 1.0);
		assert_near(l.optimizer, zero_cases[i].optimizer * GB, 1.0);
		assert_near(l.total, zero_cases[i].total * GB, 1.0);
	}
}

/*
 * FSDP2 under torchtitan's pipeline: PyTorch's PipelineStage.
 * backward_maybe_with_nosync() turns off gradient sync and resharding for all
 * but the last backward, so the stage's gradients stay whole (4 bytes, fp32
 * reduce) through the step: ZeRO-2 holds 2 + 4 + 12/d, not 2 + 16/d; without
 * PP, and under Megatron-LM's FSDP with PP, they are sharded.
 */
static void ledger__torchtitan_pp_fsdp__gradients_whole(void **state)
{
	struct dtplan_model m = model_of_size(70e9);
	struct dtplan_ledger_in in = {.model = &m,
				      .tp = 8,
				      .pp = 4,
				      .dp = 4,
				      .zero = 2,
				      .framework = DTPLAN_FRAMEWORK_TORCHTITAN};
	struct dtplan_ledger l;
	double p;

	(void)state;
	assert_true(dtplan__grads_reduced_once(DTPLAN_FRAMEWORK_TORCHTITAN, 2, 4));
	assert_true(dtplan__grads_reduced_once(DTPLAN_FRAMEWORK_TORCHTITAN, 3, 2));
	assert_false(dtplan__grads_reduced_once(DTPLAN_FRAMEWORK_TORCHTITAN, 2, 1));
	assert_false(dtplan__grads_reduced_once(DTPLAN_FRAMEWORK_MEGATRON, 3, 4));
	assert_true(dtplan__grads_reduced_once(DTPLAN_FRAMEWORK_MEGATRON, 1, 1));
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	p = l.params_per_gpu;
	assert_near(l.weights, 2.0 * p, 1.0);
	assert_near(l.gradients, 4.0 * p, 1.0);
	assert_near(l.optimizer, 12.0 * p / 4.0, 1.0);
	in.zero = 3;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.weights, 2.0 * p / 4.0, 1.0);
	assert_near(l.gradients, 4.0 * p, 1.0);
	in.framework = DTPLAN_FRAMEWORK_MEGATRON;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.gradients, 4.0 * p / 4.0, 1.0);
	in.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	in.pp = 1;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.gradients, 4.0 * l.params_per_gpu / 4.0, 1.0);
}

/*
 * torchtitan's per-op selective recomputation (SelectiveAC, torchtitan/
 * distributed/activation_checkpoint.py, b5bcd76) on Llama 3 8B (h 4096, 32
 * heads, 8 KV heads of 128, SwiGLU F 14336, 32 layers, V 128256): a block
 * keeps its input (2h), wq's output (2h), wv's (2 x 1024), the attention's
 * output and log-sum-exp (2h + 4 x 32) and w1's and w2's outputs (2F, 2h),
 * while wk, wo and w3 are rerun: 2 (4h + 1024 + F) + 128 = 63616 bytes per
 * token, against Megatron-LM's selective 34h = 139264.  Under TP 2: the
 * input, wq, wv, the attention and w1 halve; w2's output is whole until its
 * reduce-scatter; the two reduce-scatter outputs are kept (2h / 2 each):
 * 2h/2 + 2h/2 + 1024 + (2h + 128)/2 + F + 2h + 2 x h = 44096.  fp8 changes
 * nothing (the matrix multiplies return bf16).  Seq 8192, micro-batch 2:
 * 16384 tokens, plus the fp32 logits (4 V per token, / TP).
 */
static void ledger__torchtitan_selective__per_op_by_hand(void **state)
{
	struct dtplan_model m;
	struct dtplan_ledger_in in = {.tp = 1,
				      .pp = 1,
				      .dp = 8,
				      .zero = 3,
				      .seq = 8192,
				      .micro_batch = 2,
				      .num_microbatches = 1,
				      .recompute = DTPLAN_RECOMPUTE_SELECTIVE,
				      .framework = DTPLAN_FRAMEWORK_TORCHTITAN,
				      .attention = DTPLAN_ATTENTION_FLASH};
	struct dtplan_ledger l;
	double tok = 16384.0, logits = 4.0 * 128256.0 * tok;

	(void)state;
	assert_int_equal(dtplan_model_parse("llama3-8b", &m, NULL), DTPLAN_OK);
	in.model = &m;
	assert_true(dtplan__selective_per_op(DTPLAN_FRAMEWORK_TORCHTITAN));
	assert_false(dtplan__selective_per_op(DTPLAN_FRAMEWORK_MEGATRON));
	assert_false(dtplan__selective_per_op(DTPLAN_FRAMEWORK_DEEPSPEED));
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 32.0 * tok * 63616.0 + logits, 1.0);
	in.fp8 = true;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 32.0 * tok * 63616.0 + logits, 1.0);
	in.fp8 = false;
	in.tp = 2;
	in.dp = 4;
	in.sequence_parallel = true;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 32.0 * tok * 44096.0 + logits / 2.0, 1.0);
	/* Megatron-LM's selective: 34 s b h */
	in.tp = 1;
	in.dp = 8;
	in.framework = DTPLAN_FRAMEWORK_MEGATRON;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 32.0 * tok * 34.0 * 4096.0 + logits, 1.0);
	/* no recomputation under torchtitan keeps what Megatron-LM's would */
	in.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	in.recompute = DTPLAN_RECOMPUTE_NONE;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 32.0 * tok * 34.0 * 4096.0 + logits, 1.0);
}

/*
 * A head width of its own: Qwen3-30B-A3B's attention (hidden 2048, 32 heads
 * of 128, 4 KV heads) on a dense SwiGLU layer of F 6144 without dropout,
 * FlashAttention, seq 1024, one layer.  Per token: the norms' inputs and the
 * QKV and MLP inputs 8h; Q 2 x 4096, K and V 2 x 512 each, the projection's
 * input 2 x 4096; the MLP's 6F: 16384 + 18432 + 36864 = 71680 bytes.  Plus
 * 4 V of fp32 logits per token (V 50257, a dimension spec's).
 */
static void ledger__head_dim__queries_at_their_width(void **state)
{
	struct dtplan_model m;
	struct dtplan_ledger_in in = {.tp = 1,
				      .pp = 1,
				      .dp = 1,
				      .seq = 1024,
				      .micro_batch = 1,
				      .num_microbatches = 1,
				      .attention = DTPLAN_ATTENTION_FLASH};
	struct dtplan_ledger l;

	(void)state;
	assert_int_equal(dtplan_model_parse("layers=1,hidden=2048,heads=32,kv_heads=4,head_dim=128,"
					    "ffn=6144,mlp=swiglu,dropout=no",
					    &m, NULL),
			 DTPLAN_OK);
	in.model = &m;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 1024.0 * 71680.0 + 4.0 * 1024 * 50257, 1.0);
}

static void ledger__tp_pp__heaviest_stage(void **state)
{
	struct dtplan_model m = model_of_size(70e9);
	struct dtplan_ledger_in in = {.model = &m, .tp = 8, .pp = 4, .dp = 4, .zero = 1};
	struct dtplan_ledger l;
	/* 70B from its size: 71 layers, h 9088, V 50257, untied.  Vh = 456735616;
	 * P_layer = (70e9 - 2 Vh) / 71 = 69086528768 / 71.  Without a sequence the
	 * output layer costs Vh / P_layer = 0.469 layers, so 71 layers split
	 * 18 + 18 + 18 + 17 (17 + 0.469 < 18; 17 first would leave 18.469 last). */
	const double vh = 50257.0 * 9088.0, per_layer = (70e9 - 2.0 * vh) / 71.0;
	const double stage0 = 18.0 * per_layer + vh;

	(void)state;
	assert_int_equal(m.layers, 71);
	assert_int_equal(m.hidden, 9088);
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	/* stage 0 holds 18 layers and the embedding: the heaviest; 2 + 2 + 12/4 = 7 bytes */
	assert_int_equal(l.stage, 0);
	assert_int_equal(l.stage_layers, 18);
	assert_near(l.params_per_gpu, stage0 / 8.0, 1.0);
	assert_near(l.total, 7.0 * stage0 / 8.0, 8.0);
	/* one stage: every parameter, 70e9 / 8 */
	in.pp = 1;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.params_per_gpu, 70e9 / 8.0, 1.0);
	/* more stages than layers */
	in.pp = 72;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_ERR_INVAL);
}

static void ledger__given_stages__last_stage_heaviest(void **state)
{
	struct dtplan_model m = model_of_size(70e9);
	struct dtplan_stage_layers st = {.first = 10, .middle = 20, .last = 21};
	struct dtplan_ledger_in in = {.model = &m, .tp = 2, .pp = 4, .dp = 1, .stages = &st};
	struct dtplan_ledger l;
	const double vh = 50257.0 * 9088.0, per_layer = (70e9 - 2.0 * vh) / 71.0;

	(void)state;
	/* 10 + 20 + 20 + 21 = 71: the last stage, 21 layers and the output layer */
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_int_equal(l.stage, 3);
	assert_int_equal(l.stage_layers, 21);
	assert_near(l.params_per_gpu, (21.0 * per_layer + vh) / 2.0, 1.0);
	assert_near(l.total, 16.0 * (21.0 * per_layer + vh) / 2.0, 16.0);
}

/* Korthikanti et al. Table 2, s 2048, b 1, h 4096, a 32: sbh = 8388608, 5as/h = 80. */
static const struct {
	int tp;
	bool sp;
	enum dtplan_recompute r;
	double bytes;
} act_cases[] = {
	/* sbh (34 + 80) = 8388608 * 114 */
	{1, false, DTPLAN_RECOMPUTE_NONE, 956301312.0},
	{1, true, DTPLAN_RECOMPUTE_NONE, 956301312.0},
	/* (sbh / 8) * 114 */
	{8, true, DTPLAN_RECOMPUTE_NONE, 119537664.0},
	/* sbh (10 + 24/8 + 80/8) = sbh * 23 */
	{8, false, DTPLAN_RECOMPUTE_NONE, 192937984.0},
	/* 34 sbh / 8 */
	{8, true, DTPLAN_RECOMPUTE_SELECTIVE, 35651584.0},
	/* sbh (10 + 3) */
	{8, false, DTPLAN_RECOMPUTE_SELECTIVE, 109051904.0},
	/* sbh * 34 with t = 1 */
	{1, false, DTPLAN_RECOMPUTE_SELECTIVE, 285212672.0},
	/* fine: selective without the two layer-norm outputs, 30 sbh / 8 */
	{8, true, DTPLAN_RECOMPUTE_FINE, 31457280.0},
	/* sbh (6 + 3) */
	{8, false, DTPLAN_RECOMPUTE_FINE, 75497472.0},
	/* 2 sbh */
	{8, false, DTPLAN_RECOMPUTE_FULL, 16777216.0},
	/* 2 sbh / 8 */
	{8, true, DTPLAN_RECOMPUTE_FULL, 2097152.0},
};

static void activation_bytes_per_layer__korthikanti_table__by_hand(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(act_cases) / sizeof(act_cases[0]); i++)
		assert_near(dtplan_activation_bytes_per_layer(2048, 1, 4096, 32, act_cases[i].tp,
							      act_cases[i].sp, act_cases[i].r),
			    act_cases[i].bytes, 0.5);
	/* b = 2 doubles it: 2 * 956301312 */
	assert_near(dtplan_activation_bytes_per_layer(2048, 2, 4096, 32, 1, false,
						      DTPLAN_RECOMPUTE_NONE),
		    1912602624.0, 0.5);
	assert_near(dtplan_activation_bytes_per_layer(0, 1, 4096, 32, 1, false,
						      DTPLAN_RECOMPUTE_NONE),
		    0.0, 0.0);
	assert_near(dtplan_activation_bytes_per_layer(2048, 1, 4096, 32, 0, false,
						      DTPLAN_RECOMPUTE_NONE),
		    0.0, 0.0);
	assert_near(dtplan_activation_bytes_per_layer(2048, 1, 4096, 32, 1, false,
						      (enum dtplan_recompute)9),
		    0.0, 0.0);
}

static void ledger__llama2_7b_pp4__stage0_holds_min_m_p(void **state)
{
	struct dtplan_model m;
	struct dtplan_ledger_in in = {
		.tp = 1, .pp = 4, .dp = 1, .seq = 4096, .micro_batch = 1, .num_microbatches = 8};
	struct dtplan_ledger l;
	/* s = h = 4096, a 32, F 11008, SwiGLU, no dropout; per token 8h kept
	 * whole (the norms' inputs 4h, the QKV and first MLP inputs 2h each),
	 * 8h of attention (Q, K, V 2h each, the projection's input 2h), 6F of
	 * the MLP (gate and up outputs 4F, the second matrix's input 2F):
	 * 131584 bytes, and unfused the softmax's output, 2as = 262144 (no
	 * dropout mask or output): 4096 x 393728 per layer */
	const double per_layer = 1612709888.0;

	(void)state;
	assert_int_equal(dtplan_model_parse("llama2-7b", &m, NULL), DTPLAN_OK);
	in.model = &m;
	/* 32 / 4 = 8 layers, min(8, 4) = 4 micro-batches */
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 8 * 4 * per_layer, 1.0);
	assert_near(l.total, l.weights + l.gradients + l.optimizer + l.activations, 1.0);
	/* m = 2 < p: two in flight */
	in.num_microbatches = 2;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 8 * 2 * per_layer, 1.0);
	/* m = 0 counts as 1: every stage holds one micro-batch of its 8 layers,
	 * and the last also its fp32 logits, 4 s b V = 4 * 4096 * 32000 =
	 * 524288000 bytes, on the same weights: the last stage is the fullest */
	in.num_microbatches = 0;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_int_equal(l.stage, 3);
	assert_near(l.activations, 8 * per_layer + 524288000.0, 1.0);
	/* pp = 3: ceil(32/3) = 11 layers, min(1, 3) = 1 */
	in.pp = 3;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 11 * per_layer, 1.0);
	/* full recompute, tp 2 with SP: 2 sbh / 2 = 16777216 per layer, 11 layers,
	 * and the layer being rerun whole: 1612709888 / 2 = 806354944.  The
	 * last stage (10 layers) adds 524288000 / 2 of logits but holds fewer
	 * weights: P_layer = (6738415616 - 2 * 131072000) / 32 = 202383488, so
	 * 16 bytes * (11 P_layer + Vh) / 2 = 18858322944 on stage 0 against
	 * 17239255040 on the last, whose 1236271104 of activations do not make
	 * up for the 1619067904 */
	in.tp = 2;
	in.sequence_parallel = true;
	in.recompute = DTPLAN_RECOMPUTE_FULL;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_int_equal(l.stage, 0);
	assert_near(l.activations, 11 * 16777216.0 + 806354944.0, 1.0);
	assert_near(l.total, 18858322944.0 + 11 * 16777216.0 + 806354944.0, 1.0);
}

/*
 * DeepSeek-V3's memory recipe on llama2-7b, PP 4 in stages of 8 layers:
 * fp8 activations, fine recomputation, bf16 Adam moments, DualPipe.  Per
 * token and layer (h 4096, F 11008, no dropout), fine keeps the norms'
 * inputs (4h), Q, K and V (2h each), the fp8 input of the output projection
 * (h), SwiGLU's gate and up outputs (2 x 2F, bf16) and the fp8 input of the
 * second matrix (F): 11h + 5F = 100096 bytes, 4096 x 100096 per layer and
 * micro-batch (no scores: fine recomputes the attention core too).
 */
static void ledger__llama2_7b_pp4__fine_fp8_moments_dualpipe_by_hand(void **state)
{
	struct dtplan_model m;
	struct dtplan_stage_layers st = {.first = 8, .middle = 8, .last = 8};
	struct dtplan_ledger_in in = {.tp = 1,
				      .pp = 4,
				      .dp = 1,
				      .seq = 4096,
				      .micro_batch = 1,
				      .num_microbatches = 8,
				      .stages = &st,
				      .recompute = DTPLAN_RECOMPUTE_FINE,
				      .fp8 = true,
				      .bf16_moments = true,
				      .dualpipe = true};
	struct dtplan_ledger l;
	const double per_layer = 4096.0 * 100096.0, vh = 32000.0 * 4096.0;
	const double p_layer = 202383488.0, logits = 4.0 * 4096 * 32000;
	/* GPU 0 holds stage 0 (the embedding) and stage 3 (the output layer) */
	const double params = 16.0 * p_layer + 2.0 * vh;

	(void)state;
	assert_int_equal(dtplan_model_parse("llama2-7b", &m, NULL), DTPLAN_OK);
	in.model = &m;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_int_equal(l.stage, 0);
	assert_int_equal(l.stage_layers, 16);
	assert_near(l.params_per_gpu, params, 1.0);
	/* bf16 weights 2, gradients 2; fp32 master 4 and bf16 m and v 2 + 2 */
	assert_near(l.weights, 2.0 * params, 1.0);
	assert_near(l.gradients, 2.0 * params, 1.0);
	assert_near(l.optimizer, 8.0 * params, 1.0);
	/* pp + 1 = 5 of the 8 micro-batches in flight, one stage's 8 layers
	 * each, and the last stage's fp32 logits */
	assert_near(l.activations, 5.0 * 8 * per_layer + logits, 1.0);
	/* 3 micro-batches: 3 in flight */
	in.num_microbatches = 3;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 3.0 * 8 * per_layer + logits, 1.0);
	/* 1F1B: stage 0 alone, 4 in flight; fp32 moments 4 + 4 */
	in.num_microbatches = 8;
	in.dualpipe = false;
	in.bf16_moments = false;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_int_equal(l.stage, 0);
	assert_near(l.params_per_gpu, 8.0 * p_layer + vh, 1.0);
	assert_near(l.optimizer, 12.0 * (8.0 * p_layer + vh), 1.0);
	assert_near(l.activations, 4.0 * 8 * per_layer, 1.0);
	/* bf16 inputs: the output projection's 2h and the second matrix's 2F,
	 * 12h + 6F = 115200 bytes per token */
	in.fp8 = false;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_OK);
	assert_near(l.activations, 4.0 * 8 * 4096.0 * 115200.0, 1.0);
	/* DualPipe mirrors stages: an odd PP is refused */
	in.dualpipe = true;
	in.pp = 3;
	in.stages = NULL;
	assert_int_equal(dtplan_ledger_compute(&in, &l, NULL), DTPLAN_ERR_INVAL);
}

/*
 * Mixtral 8x7B (top 2 of 8 experts, hidden 4096) at TP 4 x DP 8, EP 8, with
 * sequence parallelism: the experts' TP group gathers its members' tokens before the
 * experts (Megatron-Core's token dispatcher all-gathers over the expert TP
 * group), so each routed copy's permuted input (2 h bytes in bf16) is kept
 * for ETP / TP of the sequence: the whole of it at ETP = TP (the default),
 * a quarter at ETP 1 (parallel folding).  Everything else an MoE layer keeps
 * is the same, so the two ledgers differ by (ETP 4 - ETP 1) / TP 4 x
 * tokens x capacity x top_k x 2 h per MoE layer held.
 */
static void ledger__mixtral_tp4__etp_gathers_permuted_tokens(void **state)
{
	struct dtplan_model m;
	struct dtplan_ledger_in in = {.tp = 4,
				      .pp = 1,
				      .dp = 8,
				      .ep = 8,
				      .framework = DTPLAN_FRAMEWORK_MEGATRON,
				      .seq = 4096,
				      .micro_batch = 1,
				      .num_microbatches = 1,
				      .sequence_parallel = true,
				      .recompute = DTPLAN_RECOMPUTE_SELECTIVE};
	struct dtplan_ledger whole, folded;
	double routed, per_layer;

	(void)state;
	assert_int_equal(dtplan_model_parse("mixtral-8x7b", &m, NULL), DTPLAN_OK);
	in.model = &m;
	in.etp = 4;
	assert_int_equal(dtplan_ledger_compute(&in, &whole, NULL), DTPLAN_OK);
	in.etp = 1;
	assert_int_equal(dtplan_ledger_compute(&in, &folded, NULL), DTPLAN_OK);
	routed = DTPLAN_MOE_CAPACITY_FACTOR * m.top_k;
	per_layer = 4096.0 * routed * 2.0 * m.hidden * (4.0 - 1.0) / 4.0;
	assert_int_equal(whole.stage_layers, m.layers);
	if (fabs(whole.activations - folded.activations - m.layers * per_layer) > 1.0)
		fail_msg("ETP 4 %.0f, ETP 1 %.0f bytes: %.0f apart, want %.0f", whole.activations,
			 folded.activations, whole.activations - folded.activations,
			 m.layers * per_layer);
}

static void ledger__bad_input__error(void **state)
{
	struct dtplan_model m = model_of_size(7e9), empty = {0};
	struct dtplan_ledger_in good = {
		.model = &m, .tp = 1, .pp = 1, .dp = 1, .seq = 2048, .micro_batch = 1};
	struct dtplan_ledger l = {.total = 42.0};
	struct dtplan_error err;
	struct {
		struct dtplan_ledger_in in;
		enum dtplan_err code;
	} cases[11];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cases[i].in = good;
	cases[n].in.model = NULL, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.model = &empty, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.tp = 0, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.dp = -1, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.zero = 4, cases[n++].code = DTPLAN_ERR_RANGE;
	cases[n].in.micro_batch = 0, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.seq = -1, cases[n++].code = DTPLAN_ERR_INVAL;
	cases[n].in.recompute = (enum dtplan_recompute)4, cases[n++].code = DTPLAN_ERR_INVAL;
	/* issue 13, finding 16: 65536 x 65536 wrapped to 0 in int */
	cases[n].in.tp = 65536, cases[n].in.pp = 65536, cases[n++].code = DTPLAN_ERR_RANGE;
	/* 2^31 - 1 cubed: each partial product is checked before the next */
	cases[n].in.tp = cases[n].in.pp = cases[n].in.dp = INT32_MAX;
	cases[n++].code = DTPLAN_ERR_RANGE;
	/* 2^12 x 2^12 x 2 = 2^25 GPUs, more than DTPLAN_MAX_GPUS = 2^24 */
	cases[n].in.tp = 4096, cases[n].in.pp = 4096, cases[n].in.dp = 2;
	cases[n++].code = DTPLAN_ERR_RANGE;
	for (size_t i = 0; i < n; i++) {
		dtplan_error_clear(&err);
		assert_int_equal(dtplan_ledger_compute(&cases[i].in, &l, &err), cases[i].code);
		assert_int_equal(err.code, cases[i].code);
		assert_true(strlen(err.text) > 0);
		assert_near(l.total, 42.0, 0.0);
	}
	assert_int_equal(dtplan_ledger_compute(NULL, &l, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_ledger_compute(&good, NULL, NULL), DTPLAN_ERR_INVAL);
	assert_int_equal(dtplan_ledger_compute(&good, &l, NULL), DTPLAN_OK);
}

/* Issue 13, finding 16: tp x pp overflowed int in the CLI and gpus % 0 was
 * SIGFPE; the layout is now checked here, in 64 bits. */
static void ledger_layout__products__dp_or_clear_error(void **state)
{
	static const struct {
		int gpus, tp, pp;
		enum dtplan_err code;
		int dp;
		const char *says;
	} cases[] = {
		{8, 1, 1, DTPLAN_OK, 8, ""},
		{16, 2, 2, DTPLAN_OK, 4, ""},
		{128, 8, 4, DTPLAN_OK, 4, ""},
		{16777216, 4096, 4096, DTPLAN_OK, 1, ""},
		{8, 65536, 65536, DTPLAN_ERR_RANGE, 0,
		 "TP 65536 x PP 65536 = 4294967296 GPUs is more than the 8 GPUs of the job"},
		{8, INT32_MAX, INT32_MAX, DTPLAN_ERR_RANGE, 0,
		 "TP 2147483647 x PP 2147483647 = 4611686014132420609 GPUs"},
		{8, 16, 1, DTPLAN_ERR_RANGE, 0, "TP 16 x PP 1 = 16 GPUs is more than the 8"},
		{8, 3, 1, DTPLAN_ERR_INVAL, 0, "8 GPUs are not a multiple of TP 3 x PP 1"},
		{0, 1, 1, DTPLAN_ERR_INVAL, 0, "GPUs (0), TP (1) and PP (1) must be at least 1"},
		{8, 0, 1, DTPLAN_ERR_INVAL, 0, "must be at least 1"},
		{8, 1, -2, DTPLAN_ERR_INVAL, 0, "must be at least 1"},
		{16777217, 1, 1, DTPLAN_ERR_RANGE, 0,
		 "16777217 GPUs is more than the 16777216 dtplan plans for"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dtplan_error err = {0};
		int dp = -7;

		assert_int_equal(dtplan_ledger_layout(cases[i].gpus, cases[i].tp, cases[i].pp, &dp,
						      &err),
				 cases[i].code);
		if (cases[i].code == DTPLAN_OK) {
			assert_int_equal(dp, cases[i].dp);
			continue;
		}
		assert_int_equal(dp, -7);
		if (strstr(err.text, cases[i].says) == NULL)
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, cases[i].says);
	}
	assert_int_equal(dtplan_ledger_layout(8, 1, 1, NULL, NULL), DTPLAN_ERR_INVAL);
}

static const struct {
	const char *text;
	enum dtplan_err code;
	enum dtplan_recompute r;
} recompute_cases[] = {
	{"none", DTPLAN_OK, DTPLAN_RECOMPUTE_NONE},
	{"selective", DTPLAN_OK, DTPLAN_RECOMPUTE_SELECTIVE},
	{"Fine", DTPLAN_OK, DTPLAN_RECOMPUTE_FINE},
	{"FULL", DTPLAN_OK, DTPLAN_RECOMPUTE_FULL},
	{"", DTPLAN_ERR_INVAL, DTPLAN_RECOMPUTE_NONE},
	{"partial", DTPLAN_ERR_INVAL, DTPLAN_RECOMPUTE_NONE},
	{NULL, DTPLAN_ERR_INVAL, DTPLAN_RECOMPUTE_NONE},
};

static void recompute_parse__table__round_trips(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(recompute_cases) / sizeof(recompute_cases[0]); i++) {
		enum dtplan_recompute r = (enum dtplan_recompute)99;
		struct dtplan_error err;

		assert_int_equal(dtplan_recompute_parse(recompute_cases[i].text, &r, &err),
				 recompute_cases[i].code);
		if (recompute_cases[i].code == DTPLAN_OK) {
			assert_int_equal(r, recompute_cases[i].r);
			assert_int_equal(strcasecmp(dtplan_recompute_name(r),
						    recompute_cases[i].text),
					 0);
		} else {
			assert_int_equal(r, 99);
			assert_non_null(strstr(err.text, "none, selective, fine or full"));
		}
	}
	assert_string_equal(dtplan_recompute_name((enum dtplan_recompute)7), "unknown");
	assert_string_equal(dtplan_recompute_name((enum dtplan_recompute) - 1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ledger__7b_one_gpu__112_gb),
		cmocka_unit_test(ledger__70b__1120_gb_or_840_without_master),
		cmocka_unit_test(ledger__7b_8_gpus_zero_0_to_3__seed_numbers),
		cmocka_unit_test(ledger__tp_pp__heaviest_stage),
		cmocka_unit_test(ledger__torchtitan_pp_fsdp__gradients_whole),
		cmocka_unit_test(ledger__torchtitan_selective__per_op_by_hand),
		cmocka_unit_test(ledger__head_dim__queries_at_their_width),
		cmocka_unit_test(ledger__given_stages__last_stage_heaviest),
		cmocka_unit_test(activation_bytes_per_layer__korthikanti_table__by_hand),
		cmocka_unit_test(ledger__llama2_7b_pp4__stage0_holds_min_m_p),
		cmocka_unit_test(ledger__mixtral_tp4__etp_gathers_permuted_tokens),
		cmocka_unit_test(ledger__bad_input__error),
		cmocka_unit_test(ledger_layout__products__dp_or_clear_error),
		cmocka_unit_test(recompute_parse__table__round_trips),
		cmocka_unit_test(ledger__llama2_7b_pp4__fine_fp8_moments_dualpipe_by_hand),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
