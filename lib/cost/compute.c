/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compute.c: how long the kernels of one micro-batch take on one GPU: matrix
 * multiplies at the GPU's measured matmul ceiling with tile and wave
 * quantization, attention (FlashAttention or unfused scores through memory),
 * the memory-bound element-wise work of each layer, the output layer and its
 * loss, and the optimizer step.  Every constant and formula is derived in
 * doc/internals/cost-model.md ("Compute"); keep the two in step.
 *
 * Pure arithmetic, no allocation; the GPU's calibrated shares come from
 * lib/model/gpu.c.
 */
#include "config.h"

#include "dtplan.h"
#include "cost/cost.h"
#include "model/model.h"

#include <math.h>
#include <string.h>

/* The site's compute_efficiency that means "the calibrated model". */
#define DTPLAN__EFFICIENCY_REF 0.5

/* cuBLAS/CUTLASS output tiles of large bf16 GEMMs (128 x 128), and the
 * expected idle share of the last wave of tiles (half of one wave). */
#define TILE 128.0
#define WAVE_TAIL 0.5

/* Bytes per attention score of unfused attention: forward QK^T writes it (2),
 * the fused scale-mask-softmax reads and writes it (4), dropout reads,
 * writes and keeps a mask (5), AV reads it (2); backward 17 (the same
 * tensors the other way, the gradient of each). */
#define SCORE_BYTES_FWD 13.0
#define SCORE_BYTES_BWD 17.0

/* Bytes per logit of the output layer's loss: forward reads bf16 (2), writes
 * fp32 (4), reads it twice for max and sum (8); backward reads fp32 (4) and
 * writes the bf16 gradient (2). */
#define LOGIT_BYTES 20.0

/* The share of the datasheet's memory bandwidth that streaming kernels reach:
 * STREAM triad 2.97 of 3.35 TB/s on an H100 SXM (Azure's AI-benchmarking-guide,
 * ND H100 v5). */
#define HBM_EFFICIENCY 0.89

/* Host memory bandwidth per GPU for ZeRO-Offload's CPU Adam: two sockets of
 * eight DDR4-3200 channels (2 x 204.8 GB/s) shared by a node's 8 GPUs. */
#define HOST_MEMORY_PER_GPU 51.2e9

/*
 * Bytes per element a GEMM input keeps in precision p, its scales
 * included: 2 (bf16), 1 (fp8: one fp32 scale a tensor), 1 + 1/32 (MXFP8:
 * one E8M0 byte per 32 elements, OCP MX v1.0), 0.5 + 1/16 (NVFP4: E2M1
 * values, one E4M3 byte per 16 elements; its one fp32 a tensor is not
 * counted).  Transformer Engine keeps these for the backward pass.
 */
double dtplan__precision_in_bytes(enum dtplan_precision p)
{
	switch (p) {
	case DTPLAN_PRECISION_FP8:
		return 1.0;
	case DTPLAN_PRECISION_MXFP8:
		return 1.0 + 1.0 / 32.0;
	case DTPLAN_PRECISION_NVFP4:
		return 0.5 + 1.0 / 16.0;
	case DTPLAN_PRECISION_BF16:
	default:
		return 2.0;
	}
}

/*
 * The block-scaled formats on Blackwell (issue 33): MXFP8 GEMMs at the
 * dense fp8 rate, NVFP4 at the dense fp4 rate, both at the fp8 share of the
 * peak measured (no fp4 matmul measured yet).  Each input is cast as
 * memory-bound work: read bf16 (2 bytes), write the values and scales
 * (dtplan__precision_in_bytes()); NVFP4 reads it once more for the
 * tensor's amax (its fp32 scale), 2 bytes more.  request.c refuses both on
 * GPUs without block-scaled tensor cores.
 */
static void block_scaled(const struct dtplan_request *r, double share, struct dtplan__kernels *k)
{
	const struct dtplan_gpu *g = &r->gpu;
	double peak;

	if ((r->precision != DTPLAN_PRECISION_MXFP8 && r->precision != DTPLAN_PRECISION_NVFP4) ||
	    !(g->peak_fp4_flops > 0.0) || !(g->peak_fp8_flops > 0.0))
		return;
	peak = r->precision == DTPLAN_PRECISION_NVFP4 ? g->peak_fp4_flops : g->peak_fp8_flops;
	k->gemm_rate = fmin(peak * g->fp8_efficiency * share, peak);
	k->gemm_in_bytes = dtplan__precision_in_bytes(r->precision);
	k->cast_bytes =
		2.0 + k->gemm_in_bytes + (r->precision == DTPLAN_PRECISION_NVFP4 ? 2.0 : 0.0);
}

void dtplan__kernels_init(const struct dtplan_request *r, struct dtplan__kernels *k)
{
	const struct dtplan_gpu *g = &r->gpu;
	const struct dtplan_model_fit *cal = &r->model_fit;
	double scale = r->efficiency / DTPLAN__EFFICIENCY_REF;
	double sustained = cal->set ? cal->gemm_sustained : dtplan__gpu_gemm_sustained(g);
	double attention =
		cal->set ? cal->attention_efficiency : dtplan__gpu_attention_efficiency(g);

	/* a site's efficiency scales every rate, never past the datasheet */
	memset(k, 0, sizeof(*k));
	k->bf16_rate = fmin(g->peak_bf16_flops * g->matmul_efficiency * sustained * scale,
			    g->peak_bf16_flops);
	k->gemm_rate = k->bf16_rate;
	k->gemm_in_bytes = 2.0;
	if (r->precision == DTPLAN_PRECISION_FP8 && g->peak_fp8_flops > 0.0) {
		k->gemm_rate = fmin(g->peak_fp8_flops * g->fp8_efficiency * sustained * scale,
				    g->peak_fp8_flops);
		k->gemm_in_bytes = 1.0;
		k->cast_bytes = 3.0;
	}
	block_scaled(r, sustained * scale, k);
	k->attn_rate = fmin(g->peak_bf16_flops * g->matmul_efficiency * attention * scale,
			    g->peak_bf16_flops);
	k->hbm = fmin(g->hbm_bytes_per_s * HBM_EFFICIENCY * scale, g->hbm_bytes_per_s);
	k->sms = g->sms > 0 ? g->sms : 1;
	k->host_link = g->host_bytes_per_s;
	k->host_memory = HOST_MEMORY_PER_GPU;
	k->flash = r->attention == DTPLAN_ATTENTION_FLASH;
	k->per_op = dtplan__selective_per_op(r->framework);
}

/*
 * One GEMM of an M x K and a K x N matrix: 2 M N K FLOPs at the rate of its
 * tiles' waves (T tiles of 128 x 128 over the SMs run in w = T / SMs waves,
 * the last one half idle on average: w / (w + 0.5)), or the time to move its
 * operands through memory when that is longer.
 */
static double gemm(const struct dtplan__kernels *k, double rate, double in_bytes, double m,
		   double n, double kk)
{
	double tiles = ceil(m / TILE) * ceil(n / TILE), w = tiles / k->sms;
	double t_compute = 2.0 * m * n * kk / (rate * w / (w + WAVE_TAIL));
	double t_memory = ((m * kk + kk * n) * in_bytes + 2.0 * m * n) / k->hbm;

	return t_compute > t_memory ? t_compute : t_memory;
}

void dtplan__layer_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			   int micro_batch, int tp, enum dtplan_recompute rc,
			   struct dtplan__layer_time *out)
{
	dtplan__layer_seconds_ex(k, mdl, seq, micro_batch, tp, 1, false, 0, rc, out);
}

/*
 * The attention's projections of one layer (forward, seconds; *flops their
 * FLOPs): QKV and the output projection with GQA, or latent attention's
 * query and key/value down and up projections (DeepSeek-V2, arXiv
 * 2405.04434, section 2.1) and its output projection.  TP splits the
 * per-head matrices.
 */
static double attn_proj(const struct dtplan__kernels *k, const struct dtplan_model *mdl, double tok,
			double t, double *flops)
{
	double h = mdl->hidden, a = mdl->heads, r = k->gemm_rate, in = k->gemm_in_bytes;
	double q = dtplan__model_q_dim(mdl), kvd = dtplan__model_kv_dim(mdl), qk, ql, kvl;

	if (mdl->kv_lora_rank <= 0) {
		*flops = 2.0 * tok * (h * (q + 2.0 * kvd) + q * h) / t;
		return gemm(k, r, in, tok, (q + 2.0 * kvd) / t, h) + gemm(k, r, in, tok, h, q / t);
	}
	qk = a * ((double)mdl->qk_nope_dim + mdl->qk_rope_dim);
	ql = mdl->q_lora_rank;
	kvl = mdl->kv_lora_rank;
	*flops = 2.0 * tok *
		 ((ql > 0.0 ? h * ql + ql * qk / t : h * qk / t) + h * (kvl + mdl->qk_rope_dim) +
		  kvl * a * ((double)mdl->qk_nope_dim + mdl->v_head_dim) / t +
		  a * mdl->v_head_dim * h / t);
	return (ql > 0.0 ? gemm(k, r, in, tok, ql, h) + gemm(k, r, in, tok, qk / t, ql)
			 : gemm(k, r, in, tok, qk / t, h)) +
	       gemm(k, r, in, tok, kvl + mdl->qk_rope_dim, h) +
	       gemm(k, r, in, tok, a * ((double)mdl->qk_nope_dim + mdl->v_head_dim) / t, kvl) +
	       gemm(k, r, in, tok, h, a * mdl->v_head_dim / t);
}

void dtplan__layer_seconds_ex(const struct dtplan__kernels *k, const struct dtplan_model *mdl,
			      int seq, int micro_batch, int tp, int cp, bool moe, int etp,
			      enum dtplan_recompute rc, struct dtplan__layer_time *out)
{
	double s = seq, b = micro_batch, t = tp, h = mdl->hidden, a = mdl->heads;
	/* the routed experts' tensor parallelism: with ETP each GPU runs
	 * etp / tp times the rows of its TP share through 1 / etp of each
	 * expert (Megatron-Core's MoE parallel folding: the tokens of the
	 * etp x ep group are all-gathered over ETP), the same FLOPs */
	double et = etp > 0 ? etp : t;
	double c = cp > 1 ? cp : 1.0, sl = s / c;
	double f = mdl->ffn > 0 ? mdl->ffn : 4.0 * h, tok = sl * b;
	double d = dtplan__model_head_dim(mdl), q = dtplan__model_q_dim(mdl);
	double kvd = dtplan__model_kv_dim(mdl);
	bool swiglu = mdl->mlp == DTPLAN_MLP_SWIGLU;
	double gemm_f, elem_f, elem_b, attn_f, attn_b, heads = a / t, flops_f, proj_flops;
	/* the attention core's width: a (d_qk + d_v), 2 a d without latent
	 * attention (2h where d is h / a) */
	double core = mdl->kv_lora_rank > 0
			      ? a * ((double)mdl->qk_nope_dim + mdl->qk_rope_dim + mdl->v_head_dim)
			      : 2.0 * q;

	memset(out, 0, sizeof(*out));
	/* QKV, the attention's output projection, the MLP's up (and gate) and
	 * down projections; TP splits each along N or K */
	gemm_f = attn_proj(k, mdl, tok, t, &proj_flops);
	flops_f = proj_flops;
	if (!moe) {
		gemm_f += gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, (swiglu ? 2.0 : 1.0) * f / t,
			       h) +
			  gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, h, f / t);
		flops_f += 2.0 * tok * (swiglu ? 3.0 : 2.0) * h * f / t;
		/* two layer norms (read and write h), two bias-dropout-adds (read
		 * 2h, write h, a 1-byte mask), both split by sequence
		 * parallelism; the activation reads f (2f for SwiGLU) and writes
		 * f, split by TP; bf16 */
		elem_f = tok * (22.0 * h + (swiglu ? 6.0 : 4.0) * f) / t / k->hbm;
	} else {
		/* the router (E x h, not split); the busiest GPU's routed tokens,
		 * top_k copies of each times the capacity factor, through one
		 * grouped GEMM of its experts; the shared experts on every token;
		 * permuting and unpermuting copies each routed token (read and
		 * write 2h each way) */
		double fe = mdl->moe_ffn, sh = mdl->shared_experts, e = mdl->experts;
		double routed = tok * mdl->top_k * DTPLAN_MOE_CAPACITY_FACTOR,
		       up = swiglu ? 2.0 : 1.0, rows = routed * et / t;

		gemm_f += gemm(k, k->bf16_rate, 2.0, tok, e, h) +
			  gemm(k, k->gemm_rate, k->gemm_in_bytes, rows, up * fe / et, h) +
			  gemm(k, k->gemm_rate, k->gemm_in_bytes, rows, h, fe / et);
		if (sh > 0.0)
			gemm_f +=
				gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, up * sh * fe / t, h) +
				gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, h, sh * fe / t);
		flops_f += 2.0 * tok * (e * h + (mdl->top_k + sh) * (up + 1.0) * h * fe / t);
		elem_f = (tok * 22.0 * h + (routed + tok * sh) * (swiglu ? 6.0 : 4.0) * fe +
			  routed * 8.0 * h) /
			 t / k->hbm;
	}
	elem_b = 2.0 * elem_f;
	/* fp8: each GEMM's input is cast first (read 2 bytes, write 1): the
	 * gathered QKV and MLP inputs (h each), the projection and down inputs
	 * forward; backward the output gradients of all four */
	if (k->gemm_in_bytes < 2.0) {
		double grads_in = q + 2.0 * kvd + (swiglu ? 2.0 : 1.0) * f;

		elem_f += tok * k->cast_bytes * (2.0 * h + (q + f) / t) / k->hbm;
		elem_b += tok * k->cast_bytes * (2.0 * h + grads_in / t) / k->hbm;
	}
	if (k->flash) {
		/* causal: half of the 4 b s^2 h scores and values are computed
		 * (2 b s^2 core / 2); with CP a rank's s / cp queries meet every
		 * key, half of them on average (the load-balanced causal split
		 * of Megatron-LM's ring attention); the backward runs 5 matrix
		 * multiplies against the forward's 2 */
		attn_f = b * sl * s * core / t / k->attn_rate;
		attn_b = 2.5 * attn_f;
		flops_f += b * sl * s * core / t;
	} else {
		/* QK^T and AV per head: s x d by d x s and s x s by s x d, all of
		 * the scores (the mask is applied to them), which pass through
		 * memory as SCORE_BYTES */
		double scores = b * heads * s * s;

		attn_f = b * heads *
				 (gemm(k, k->bf16_rate, 2.0, s, s, d) +
				  gemm(k, k->bf16_rate, 2.0, s, d, s)) +
			 scores * SCORE_BYTES_FWD / k->hbm;
		attn_b = 2.0 * (attn_f - scores * SCORE_BYTES_FWD / k->hbm) +
			 scores * SCORE_BYTES_BWD / k->hbm;
		flops_f += 2.0 * b * s * s * core / t;
	}
	out->fwd = gemm_f + elem_f + attn_f;
	out->attn_fwd = attn_f;
	out->bwd = 2.0 * gemm_f + elem_b + attn_b;
	out->flops = 3.0 * flops_f;
	switch (rc) {
	case DTPLAN_RECOMPUTE_FULL:
		out->recompute = out->fwd;
		out->flops += flops_f;
		break;
	case DTPLAN_RECOMPUTE_FINE:
		/* the two layer norms again (read and write h, split by sequence
		 * parallelism, and their fp8 cast), latent attention's query and
		 * key/value up-projections, and the routed experts' activation
		 * function (read 2F, write F for SwiGLU) */
		out->recompute =
			tok * (8.0 * h + (k->gemm_in_bytes < 2.0 ? 2.0 * k->cast_bytes * h : 0.0)) /
			t / k->hbm;
		if (mdl->kv_lora_rank > 0) {
			double qk = a * ((double)mdl->qk_nope_dim + mdl->qk_rope_dim);
			double kvu = a * ((double)mdl->qk_nope_dim + mdl->v_head_dim);
			double ql = mdl->q_lora_rank, kvl = mdl->kv_lora_rank;

			if (ql > 0.0)
				out->recompute +=
					gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, qk / t, ql);
			out->recompute +=
				gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, kvu / t, kvl);
			out->flops += 2.0 * tok * ((ql > 0.0 ? ql * qk : 0.0) + kvl * kvu) / t;
		}
		if (moe)
			out->recompute += tok * mdl->top_k * DTPLAN_MOE_CAPACITY_FACTOR *
					  (swiglu ? 6.0 : 4.0) * mdl->moe_ffn / t / k->hbm;
		break;
	case DTPLAN_RECOMPUTE_SELECTIVE:
		/* per-op (dtplan__selective_per_op()), a dense block with
		 * standard attention: every second matrix multiply (wk, wo, and
		 * w3 of SwiGLU or the second of GELU) and all the element-wise
		 * work again */
		if (k->per_op && !moe && mdl->kv_lora_rank <= 0) {
			out->recompute =
				gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, kvd / t, h) +
				gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, h, q / t) +
				(swiglu ? gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, f / t, h)
					: gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, h, f / t)) +
				elem_f;
			out->flops += 2.0 * tok * (h * kvd + q * h + h * f) / t;
		}
		break;
	case DTPLAN_RECOMPUTE_NONE:
		break;
	}
	/* selective and fine: the attention core's forward again;
	 * FlashAttention keeps no scores, so there is nothing to recompute */
	if ((rc == DTPLAN_RECOMPUTE_SELECTIVE || rc == DTPLAN_RECOMPUTE_FINE) && !k->flash) {
		out->recompute += attn_f;
		out->flops += 2.0 * b * s * s * core / t;
	}
}

void dtplan__head_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			  int micro_batch, int tp, struct dtplan__layer_time *out)
{
	double tok = (double)seq * micro_batch, h = mdl->hidden, t = tp;
	double v = mdl->vocab > 0 ? mdl->vocab : 0.0, out_gemm, loss, embed;

	memset(out, 0, sizeof(*out));
	if (v > 0.0) {
		/* the output layer, N = V / t; its fp32 loss through memory */
		out_gemm = gemm(k, k->gemm_rate, k->gemm_in_bytes, tok, v / t, h);
		loss = tok * v / t * LOGIT_BYTES / k->hbm;
		out->fwd = out_gemm + loss * (14.0 / LOGIT_BYTES);
		out->bwd = 2.0 * out_gemm + loss * (6.0 / LOGIT_BYTES);
		out->flops = 6.0 * tok * v * h / t;
	}
	/* the embedding: a gather forward (read and write h), a scatter-add of
	 * the gradient backward (read h, read and write fp32 h): 16 h bytes */
	embed = tok * 16.0 * h / t / k->hbm;
	out->fwd += embed / 4.0;
	out->bwd += embed * 3.0 / 4.0;
}

double dtplan__optimizer_seconds(const struct dtplan__kernels *k, double params, double grad_bytes,
				 bool offload)
{
	/*
	 * Adam reads the gradient, the fp32 master, m and v, and writes the
	 * last three and the bf16 weights: grad + 26 bytes per parameter
	 * through memory.  Offloaded, the gradients (bf16) cross the host link
	 * to the CPU, which runs the same traffic through host memory, and the
	 * new bf16 weights come back.
	 */
	if (!offload)
		return params * (grad_bytes + 26.0) / k->hbm;
	return params * 4.0 / k->host_link + params * 28.0 / k->host_memory;
}
