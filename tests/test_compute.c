/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_compute.c: the kernel time model (lib/cost/compute.c).  Every expected
 * number is the arithmetic of doc/internals/cost-model.md ("Compute") done by
 * hand on a made-up GPU with round numbers.
 */
#include "test_common.h"

#include "dtplan.h"
#include "cost/cost.h"

/*
 * A 100 TFLOP/s GPU whose best matmul reaches half of it, 1 TB/s of memory,
 * 128 SMs, 10 GB/s to the host; efficiency 0.5 is the calibrated model, so a
 * large GEMM runs at 100e12 * 0.5 * 0.8 = 4e13 FLOP/s and streams at
 * 0.89 TB/s.  The model: hidden 1024, 8 heads, MLP 4096 (GELU), 32000 tokens.
 */
static void toy(struct dtplan_request *r)
{
	dtplan_request_init(r);
	r->model.layers = 4;
	r->model.hidden = 1024;
	r->model.heads = 8;
	r->model.kv_heads = 8;
	r->model.ffn = 4096;
	r->model.vocab = 32000;
	r->model.mlp = DTPLAN_MLP_GELU;
	r->model.params = 1e9;
	r->gpu.peak_bf16_flops = 100e12;
	r->gpu.matmul_efficiency = 0.5;
	r->gpu.peak_fp8_flops = 200e12;
	r->gpu.fp8_efficiency = 0.5;
	r->gpu.hbm_bytes_per_s = 1e12;
	r->gpu.sms = 128;
	r->gpu.host_bytes_per_s = 10e9;
	/* round shares for hand computation (the catalog's are fitted) */
	r->gpu.gemm_sustained = 0.8;
	r->gpu.attention_efficiency = 0.56;
	r->efficiency = 0.5;
}

/*
 * b = 2, s = 1024 (M = 2048 rows), TP 2.  GEMM tiles of 128 x 128 over 128
 * SMs, w waves, at w / (w + 0.5) of 4e13:
 *   QKV   N = (1024 + 2 * 1024) / 2 = 1536, K = 1024: 16 x 12 = 192 tiles,
 *         w = 1.5 -> 0.75; 2 * 2048 * 1536 * 1024 = 6442450944 FLOPs
 *   proj  N = 1024, K = 512: 128 tiles, w = 1 -> 2/3; 2147483648 FLOPs
 *   up    N = 2048, K = 1024: 256 tiles, w = 2 -> 0.8; 8589934592 FLOPs
 *   down  N = 1024, K = 2048: 128 tiles -> 2/3; 8589934592 FLOPs
 * all compute-bound (QKV moves 13631488 bytes: 15 us against 215 us).
 * Element-wise: 2048 tokens * (22 * 1024 + 4 * 4096) / 2 bytes at 0.89 TB/s.
 */
static const double gemm_f = 6442450944.0 / (4e13 * 0.75) + 2147483648.0 / (4e13 * 2.0 / 3.0) +
			     8589934592.0 / (4e13 * 0.8) + 8589934592.0 / (4e13 * 2.0 / 3.0);
static const double elem_f = 2048.0 * 19456.0 / 0.89e12;

static void layer_seconds__flash__gemms_waves_memory_attention(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	struct dtplan__layer_time lt;
	/* causal FlashAttention: 2 b s^2 h / t = 2147483648 FLOPs at 0.7 of 4e13 */
	const double attn_f = 2147483648.0 / 2.8e13;
	const double flops_f =
		6442450944.0 + 2147483648.0 + 8589934592.0 + 8589934592.0 + 2147483648.0;

	(void)state;
	toy(&r);
	dtplan__kernels_init(&r, &k);
	assert_rel(k.gemm_rate, 4e13, 1e-12);
	assert_rel(k.hbm, 0.89e12, 1e-12);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_NONE, &lt);
	assert_rel(lt.fwd, gemm_f + elem_f + attn_f, 1e-12);
	/* backward: every GEMM twice, element-wise twice, attention 2.5 times */
	assert_rel(lt.bwd, 2.0 * gemm_f + 2.0 * elem_f + 2.5 * attn_f, 1e-12);
	assert_near(lt.recompute, 0.0, 0.0);
	assert_rel(lt.flops, 3.0 * flops_f, 1e-12);
	/* full recomputation reruns the forward; selective has nothing to
	 * rerun with FlashAttention */
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_FULL, &lt);
	assert_rel(lt.recompute, gemm_f + elem_f + attn_f, 1e-12);
	assert_rel(lt.flops, 4.0 * flops_f, 1e-12);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_SELECTIVE, &lt);
	assert_near(lt.recompute, 0.0, 0.0);
	/* torchtitan's per-op selective reruns every second matrix multiply
	 * of the block (wk, wo, the GELU MLP's second) and the element-wise
	 * work: wk N = 1024 / 2 = 512, K = 1024: 64 tiles, w = 0.5 -> 0.5,
	 * 2147483648 FLOPs; wo as proj; the second as down */
	r.framework = DTPLAN_FRAMEWORK_TORCHTITAN;
	dtplan__kernels_init(&r, &k);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_SELECTIVE, &lt);
	assert_rel(lt.recompute,
		   2147483648.0 / (4e13 * 0.5) + 2147483648.0 / (4e13 * 2.0 / 3.0) +
			   8589934592.0 / (4e13 * 2.0 / 3.0) + elem_f,
		   1e-12);
	assert_rel(lt.flops, 3.0 * flops_f + 2147483648.0 + 2147483648.0 + 8589934592.0, 1e-12);
}

/*
 * A head width of its own (head_dim, as Qwen3's): the toy's 8 heads at 256
 * instead of 1024 / 8 = 128.  Queries and keys/values 8 x 256 = 2048 wide
 * each: QKV 2 x 2048 x (1024 x 6144) / 2, the projection 2 x 2048 x (2048 x
 * 1024) / 2, together 17179869184 FLOPs; the MLP as before, 17179869184;
 * causal FlashAttention over a core 2 x 8 x 256 wide: 2 x 1024 x 1024 x
 * 4096 / 2 = 4294967296.
 */
static void layer_seconds__head_dim__wider_attention(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	struct dtplan__layer_time lt;

	(void)state;
	toy(&r);
	r.model.head_dim = 256;
	dtplan__kernels_init(&r, &k);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_NONE, &lt);
	assert_rel(lt.flops, 3.0 * (17179869184.0 + 17179869184.0 + 4294967296.0), 1e-12);
}

static void layer_seconds__unfused__scores_through_memory(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	struct dtplan__layer_time lt;
	/*
	 * 4 heads per GPU, d = 128, b = 2: 8 pairs of batched GEMMs.  QK^T:
	 * 1024 x 1024 from K = 128, 64 tiles, w = 0.5 -> 0.5, 268435456 FLOPs
	 * at 2e13 = 13.42 us, its 2.62 MB through memory 2.95 us; AV: 1024 x
	 * 128 from K = 1024, 8 tiles, w = 1/16 -> 1/9, 268435456 FLOPs at
	 * 4.44e12 = 60.4 us (memory 2.62 MB: 2.95 us).  Scores 8 * 1024^2 =
	 * 8388608, 13 bytes each forward, 17 backward.
	 */
	const double pair = 268435456.0 / 2e13 + 268435456.0 / (4e13 / 9.0);
	const double scores = 8388608.0;
	const double attn_f = 8.0 * pair + scores * 13.0 / 0.89e12;

	(void)state;
	toy(&r);
	r.attention = DTPLAN_ATTENTION_UNFUSED;
	dtplan__kernels_init(&r, &k);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_NONE, &lt);
	assert_rel(lt.fwd, gemm_f + elem_f + attn_f, 1e-12);
	assert_rel(lt.bwd, 2.0 * gemm_f + 2.0 * elem_f + 2.0 * 8.0 * pair + scores * 17.0 / 0.89e12,
		   1e-12);
	/* selective recomputation reruns the attention core's forward */
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_SELECTIVE, &lt);
	assert_rel(lt.recompute, attn_f, 1e-12);
}

static void layer_seconds__fp8__faster_gemms_and_casts(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	struct dtplan__layer_time lt;
	/* fp8: 200e12 * 0.5 * 0.8 = 8e13 (the waves as in bf16); casts read 2
	 * bytes and write 1: forward 2h + (h + f)/t = 4608 elements a token,
	 * backward 2h + (h + 2 kv d + f)/t = 2048 + 7168 / 2 = 5632 */
	const double gemm8 = gemm_f / 2.0;
	const double cast_f = 2048.0 * 3.0 * 4608.0 / 0.89e12;
	const double cast_b = 2048.0 * 3.0 * 5632.0 / 0.89e12;
	const double attn_f = 2147483648.0 / 2.8e13;

	(void)state;
	toy(&r);
	r.precision = DTPLAN_PRECISION_FP8;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.gemm_rate, 8e13, 1e-12);
	assert_rel(k.bf16_rate, 4e13, 1e-12);
	dtplan__layer_seconds(&k, &r.model, 1024, 2, 2, DTPLAN_RECOMPUTE_NONE, &lt);
	assert_rel(lt.fwd, gemm8 + elem_f + cast_f + attn_f, 1e-12);
	assert_rel(lt.bwd, 2.0 * gemm8 + 2.0 * elem_f + cast_b + 2.5 * attn_f, 1e-12);
}

static void head_seconds__output_layer_loss_and_embedding(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	struct dtplan__layer_time hd;
	/*
	 * Output layer, M = 2048, N = 32000 / 2 = 16000, K = 1024: 16 x 125 =
	 * 2000 tiles, w = 15.625 -> 15.625 / 16.125; 2 * 2048 * 16000 * 1024 =
	 * 67108864000 FLOPs.  Loss: 2048 * 16000 logits, 14 bytes forward and 6
	 * backward.  Embedding: 16 h / t = 8192 bytes a token, a quarter forward.
	 */
	const double out = 67108864000.0 / (4e13 * 15.625 / 16.125);
	const double logits = 2048.0 * 16000.0, embed = 2048.0 * 8192.0 / 0.89e12;

	(void)state;
	toy(&r);
	dtplan__kernels_init(&r, &k);
	dtplan__head_seconds(&k, &r.model, 1024, 2, 2, &hd);
	assert_rel(hd.fwd, out + logits * 14.0 / 0.89e12 + embed / 4.0, 1e-12);
	assert_rel(hd.bwd, 2.0 * out + logits * 6.0 / 0.89e12 + embed * 3.0 / 4.0, 1e-12);
	assert_rel(hd.flops, 3.0 * 67108864000.0, 1e-12);
}

static void optimizer_seconds__gpu_and_offloaded(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;

	(void)state;
	toy(&r);
	dtplan__kernels_init(&r, &k);
	/* 1e9 parameters, bf16 gradients: 28 bytes each at 0.89 TB/s; fp32
	 * gradients (Megatron): 30 */
	assert_rel(dtplan__optimizer_seconds(&k, 1e9, 2.0, false), 28e9 / 0.89e12, 1e-12);
	assert_rel(dtplan__optimizer_seconds(&k, 1e9, 4.0, false), 30e9 / 0.89e12, 1e-12);
	/* offloaded: 4 bytes over the 10 GB/s link, 28 through 51.2 GB/s of
	 * host memory */
	assert_rel(dtplan__optimizer_seconds(&k, 1e9, 2.0, true), 4e9 / 10e9 + 28e9 / 51.2e9,
		   1e-12);
}

static void kernels_init__efficiency__scales_every_rate(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;

	(void)state;
	toy(&r);
	/* the site's 0.6 against the calibrated 0.5: every kernel 1.2x, but
	 * never past the datasheet: 0.89e12 * 1.2 = 1.068e12 > 1e12 */
	r.efficiency = 0.6;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.gemm_rate, 4.8e13, 1e-12);
	assert_rel(k.attn_rate, 4.8e13 * 0.7, 1e-12);
	assert_rel(k.hbm, 1e12, 1e-12);
	/* 0.55: 0.89e12 * 1.1 = 9.79e11, under it */
	r.efficiency = 0.55;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.hbm, 9.79e11, 1e-12);
	/* 1.0 on a GPU whose best matmul is its peak: 100e12 * 1 * 0.8 * 2 =
	 * 1.6e14, capped at the 1e14 peak */
	r.efficiency = 1.0;
	r.gpu.matmul_efficiency = 1.0;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.gemm_rate, 1e14, 1e-12);
	r.gpu.matmul_efficiency = 0.5;
	r.efficiency = 0.6;
	assert_true(k.flash);
	/* fp8 asked of a GPU without it stays bf16 */
	r.precision = DTPLAN_PRECISION_FP8;
	r.gpu.peak_fp8_flops = 0.0;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.gemm_rate, 4.8e13, 1e-12);
	assert_near(k.gemm_in_bytes, 2.0, 0.0);
}

/* The shares: the GPU's own, Hopper's when it has none, and a request's
 * calibration replacing them (tests/calibrate.py takes the model apart
 * with it). */
static void kernels_init__calibration__gpu_shares_and_override(void **state)
{
	struct dtplan_request r;
	struct dtplan__kernels k;
	const struct dtplan_gpu *h100 = dtplan_gpu_find("h100-sxm", NULL);

	(void)state;
	toy(&r);
	dtplan__kernels_init(&r, &k);
	assert_rel(k.bf16_rate, 100e12 * 0.5 * 0.8, 1e-12);
	assert_rel(k.attn_rate, 100e12 * 0.5 * 0.56, 1e-12);
	r.gpu.gemm_sustained = 0.0;
	r.gpu.attention_efficiency = 0.0;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.bf16_rate, 100e12 * 0.5 * h100->gemm_sustained, 1e-12);
	assert_rel(k.attn_rate, 100e12 * 0.5 * h100->attention_efficiency, 1e-12);
	r.model_fit = (struct dtplan_model_fit){true, 0.5, 0.25, 0.0, 0.0};
	r.precision = DTPLAN_PRECISION_FP8;
	dtplan__kernels_init(&r, &k);
	assert_rel(k.bf16_rate, 100e12 * 0.5 * 0.5, 1e-12);
	assert_rel(k.gemm_rate, 200e12 * 0.5 * 0.5, 1e-12);
	assert_rel(k.attn_rate, 100e12 * 0.5 * 0.25, 1e-12);
	/* the catalog's generations differ */
	assert_true(dtplan_gpu_find("a100-80gb", NULL)->gemm_sustained > 0.0);
	assert_true(dtplan_gpu_find("a100-80gb", NULL)->attention_efficiency !=
		    h100->attention_efficiency);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layer_seconds__flash__gemms_waves_memory_attention),
		cmocka_unit_test(layer_seconds__head_dim__wider_attention),
		cmocka_unit_test(layer_seconds__unfused__scores_through_memory),
		cmocka_unit_test(layer_seconds__fp8__faster_gemms_and_casts),
		cmocka_unit_test(head_seconds__output_layer_loss_and_embedding),
		cmocka_unit_test(optimizer_seconds__gpu_and_offloaded),
		cmocka_unit_test(kernels_init__efficiency__scales_every_rate),
		cmocka_unit_test(kernels_init__calibration__gpu_shares_and_override),
	};

	test_setup_stdio();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
