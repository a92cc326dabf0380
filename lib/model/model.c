/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model.c: model presets, HuggingFace config.json and explicit dimensions.
 *
 * Parameter counting rule (dtplan_model_param_count()), h hidden, a heads,
 * k key/value heads, d = h/a head width, f MLP width, V vocabulary, L layers:
 *
 *   attention   q and o: 2h^2; k and v with GQA: 2 h (k d)
 *   MLP         SwiGLU: 3 h f (gate, up, down); GELU: 2 h f
 *   norms       SwiGLU models use RMSNorm without bias: 2h per layer, h final.
 *               GELU models (GPT style) use LayerNorm with bias: 4h per layer,
 *               2h final.
 *   biases      GELU models only: q, k, v, o (2h + 2kd) and MLP (f + h).
 *               SwiGLU models have no linear biases.
 *   embeddings  V h, plus V h for the output head unless tied.
 *   positions   not counted (rotary, ALiBi; GPT-3's 2048 x h learned table is
 *               left out, 0.01% of the model).
 *
 * Llama-2-7B: 32 (4h^2 + 3 h f + 2h) + 2 V h + h with h 4096, f 11008,
 * V 32000 = 6,738,415,616, the count HuggingFace reports.
 *
 * Mixture of experts: an MoE layer's MLP is E routed experts and S shared
 * experts of width F (3 h F each with SwiGLU, 2 h F + F + h with GELU) and
 * a router of E h; the active count takes top_k routed experts instead of E.
 * Mixtral 8x7B: 32 (41,943,040 + 8 x 176,160,768 + 32,768 + 8,192) + 2 x
 * 32000 x 4096 + 4096 = 46,702,792,704, as HuggingFace reports.
 *
 * Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434): queries
 * h r_q + r_q + r_q a (d_nope + d_rope) (or h a (d_nope + d_rope) without a
 * query rank), keys and values h (r_kv + d_rope) + r_kv + r_kv a (d_nope +
 * d_v), output a d_v h.  DeepSeek-V3's router bias (E per layer) and its
 * multi-token prediction module (14B) are left out: 671B as its report says.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HIDDEN (1 << 20)
#define MAX_PARAMS DTPLAN_MODEL_MAX_PARAMS

/*
 * Published dimensions (HuggingFace config.json of each model; GPT-3 from
 * Brown et al., arXiv 2005.14165, Table 2.1).  params is
 * dtplan_model_param_count() of the row; test_model checks that it stays so.
 *
 * train_seq, the default sequence a plan trains, is the length each model
 * was pre-trained at, from its paper or card (named at each row); max_seq
 * is its context length, which long-context variants reach only in a short
 * final phase of training.
 *
 * dropout: GPT-3 as Megatron-LM trains it (TransformerConfig's
 * hidden_dropout and attention_dropout, 0.1 by default); the others trained
 * without (their config.json files' dropout probabilities are 0: Llama 2 and
 * 3, BLOOM, GPT-NeoX 20B, Mixtral, DeepSeek-V3).
 */
static const struct dtplan_model presets[] = {
	{.name = "gpt3-175b",
	 .layers = 96,
	 .hidden = 12288,
	 .heads = 96,
	 .kv_heads = 96,
	 .ffn = 49152,
	 .vocab = 50257,
	 .max_seq = 2048,
	 /* Brown et al. 2020 (arXiv 2005.14165), section 2.1: context window 2048 */
	 .train_seq = 2048,
	 .mlp = DTPLAN_MLP_GELU,
	 .tied_embeddings = true,
	 .dropout = true,
	 .params = 174579093504.0},
	{.name = "llama2-7b",
	 .layers = 32,
	 .hidden = 4096,
	 .heads = 32,
	 .kv_heads = 32,
	 .ffn = 11008,
	 .vocab = 32000,
	 .max_seq = 4096,
	 /* Touvron et al. 2023 (arXiv 2307.09288), Table 1: context length 4k */
	 .train_seq = 4096,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 6738415616.0},
	{.name = "llama2-13b",
	 .layers = 40,
	 .hidden = 5120,
	 .heads = 40,
	 .kv_heads = 40,
	 .ffn = 13824,
	 .vocab = 32000,
	 .max_seq = 4096,
	 /* Touvron et al. 2023 (arXiv 2307.09288), Table 1: context length 4k */
	 .train_seq = 4096,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 13015864320.0},
	{.name = "llama2-70b",
	 .layers = 80,
	 .hidden = 8192,
	 .heads = 64,
	 .kv_heads = 8,
	 .ffn = 28672,
	 .vocab = 32000,
	 .max_seq = 4096,
	 /* Touvron et al. 2023 (arXiv 2307.09288), Table 1: context length 4k */
	 .train_seq = 4096,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 68976648192.0},
	{.name = "llama3-8b",
	 .layers = 32,
	 .hidden = 4096,
	 .heads = 32,
	 .kv_heads = 8,
	 .ffn = 14336,
	 .vocab = 128256,
	 .max_seq = 8192,
	 /* Llama 3 Herd (arXiv 2407.21783), section 3.4.1: sequences of 8,192
	  * tokens */
	 .train_seq = 8192,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 8030261248.0},
	{.name = "llama3-70b",
	 .layers = 80,
	 .hidden = 8192,
	 .heads = 64,
	 .kv_heads = 8,
	 .ffn = 28672,
	 .vocab = 128256,
	 .max_seq = 8192,
	 /* Llama 3 Herd (arXiv 2407.21783), section 3.4.1: sequences of 8,192
	  * tokens */
	 .train_seq = 8192,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 70553706496.0},
	/* Llama 3.1 405B, the first 405B release: 128K context. */
	{.name = "llama3-405b",
	 .layers = 126,
	 .hidden = 16384,
	 .heads = 128,
	 .kv_heads = 8,
	 .ffn = 53248,
	 .vocab = 128256,
	 .max_seq = 131072,
	 /* Llama 3 Herd (arXiv 2407.21783), section 3.4.1: 4,096 for the first
	  * 252M tokens, then 8,192; 128K only in the final long-context phase
	  * (section 3.4.2) */
	 .train_seq = 8192,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 405853388800.0},
	{.name = "bloom-176b",
	 .layers = 70,
	 .hidden = 14336,
	 .heads = 112,
	 .kv_heads = 112,
	 .ffn = 57344,
	 .vocab = 250880,
	 .max_seq = 2048,
	 /* BigScience 2022 (arXiv 2211.05100), its hyperparameters: sequence 2048 */
	 .train_seq = 2048,
	 .mlp = DTPLAN_MLP_GELU,
	 .tied_embeddings = true,
	 .params = 176247242752.0},
	{.name = "gpt-neox-20b",
	 .layers = 44,
	 .hidden = 6144,
	 .heads = 64,
	 .kv_heads = 64,
	 .ffn = 24576,
	 .vocab = 50432,
	 .max_seq = 2048,
	 /* Black et al. 2022 (arXiv 2204.06745), its hyperparameters: sequence 2048 */
	 .train_seq = 2048,
	 .mlp = DTPLAN_MLP_GELU,
	 .params = 20554567680.0},
	/* mistralai/Mixtral-8x7B-v0.1 and Mixtral-8x22B-v0.1: every layer 8
	 * experts of intermediate_size, 2 per token. */
	{.name = "mixtral-8x7b",
	 .layers = 32,
	 .hidden = 4096,
	 .heads = 32,
	 .kv_heads = 8,
	 .ffn = 14336,
	 .vocab = 32000,
	 .max_seq = 32768,
	 /* Jiang et al. 2024 (arXiv 2401.04088), abstract: "trained with a
	  * context size of 32k tokens" */
	 .train_seq = 32768,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 46702792704.0,
	 .experts = 8,
	 .top_k = 2,
	 .moe_ffn = 14336,
	 .moe_every = 1,
	 .active_params = 12879925248.0},
	{.name = "mixtral-8x22b",
	 .layers = 56,
	 .hidden = 6144,
	 .heads = 48,
	 .kv_heads = 8,
	 .ffn = 16384,
	 .vocab = 32768,
	 .max_seq = 65536,
	 /* no pre-training length published (Mistral AI's release: a 64K
	  * context window): plans default to the context length */
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 140630071296.0,
	 .experts = 8,
	 .top_k = 2,
	 .moe_ffn = 16384,
	 .moe_every = 1,
	 .active_params = 39161468928.0},
	/* deepseek-ai/DeepSeek-V3: 3 dense layers, then 58 MoE layers of 256
	 * routed experts (8 per token) and 1 shared, width 2048; MLA. */
	{.name = "deepseek-v3",
	 .layers = 61,
	 .hidden = 7168,
	 .heads = 128,
	 .kv_heads = 128,
	 .ffn = 18432,
	 .vocab = 129280,
	 .max_seq = 163840,
	 /* DeepSeek-V3 report (arXiv 2412.19437), section 4.2: maximum sequence
	  * length 4K in pre-training, extended to 32K and 128K afterwards
	  * (section 4.3) */
	 .train_seq = 4096,
	 .mlp = DTPLAN_MLP_SWIGLU,
	 .params = 671026404352.0,
	 .experts = 256,
	 .top_k = 8,
	 .moe_ffn = 2048,
	 .shared_experts = 1,
	 .moe_every = 1,
	 .first_dense = 3,
	 .q_lora_rank = 1536,
	 .kv_lora_rank = 512,
	 .qk_nope_dim = 128,
	 .qk_rope_dim = 64,
	 .v_head_dim = 128,
	 .active_params = 37552282624.0},
};

const struct dtplan_model *dtplan_model_presets(size_t *n)
{
	if (n != NULL)
		*n = DTPLAN_ARRAY_SIZE(presets);
	return presets;
}

int dtplan__model_moe_in(const struct dtplan_model *m, int first, int n)
{
	long every, lo, hi;

	if (m == NULL || m->experts <= 0 || n <= 0)
		return 0;
	/* layers i in [lo, hi) = [max(first, first_dense), first + n) with
	 * (i + 1) % every == 0: the multiples of every in (lo, hi]; with
	 * i % every == 0 (DeepSeek's moe_layer_freq): those in [lo, hi), that
	 * is ceil(hi / every) - ceil(lo / every) (lo, hi >= 0) */
	every = m->moe_every > 1 ? m->moe_every : 1;
	lo = first > m->first_dense ? first : m->first_dense;
	hi = (long)first + n;
	if (hi <= lo)
		return 0;
	if (m->moe_every_from_zero)
		return (int)((hi + every - 1) / every - (lo + every - 1) / every);
	return (int)(hi / every - lo / every);
}

int dtplan_model_moe_layers(const struct dtplan_model *m)
{
	return m == NULL ? 0 : dtplan__model_moe_in(m, 0, m->layers);
}

/* One MLP of width f (without its share of the layer norms). */
static double mlp_params(const struct dtplan_model *m, double f)
{
	double h = m->hidden;

	if (m->mlp == DTPLAN_MLP_SWIGLU)
		return 3.0 * h * f;
	return 2.0 * h * f + f + h;
}

double dtplan__model_head_dim(const struct dtplan_model *m)
{
	return m->head_dim > 0 ? (double)m->head_dim : (double)m->hidden / m->heads;
}

double dtplan__model_q_dim(const struct dtplan_model *m)
{
	return m->heads * dtplan__model_head_dim(m);
}

double dtplan__model_kv_dim(const struct dtplan_model *m)
{
	return (m->kv_heads > 0 ? m->kv_heads : m->heads) * dtplan__model_head_dim(m);
}

double dtplan__model_attn_params(const struct dtplan_model *m)
{
	double h = m->hidden, a = m->heads, kv_dim, q_dim, qk, p;

	if (m->kv_lora_rank > 0) {
		qk = a * ((double)m->qk_nope_dim + m->qk_rope_dim);
		p = m->q_lora_rank > 0 ? h * m->q_lora_rank + m->q_lora_rank + m->q_lora_rank * qk
				       : h * qk;
		p += h * ((double)m->kv_lora_rank + m->qk_rope_dim) + m->kv_lora_rank +
		     (double)m->kv_lora_rank * a * ((double)m->qk_nope_dim + m->v_head_dim);
		return p + a * m->v_head_dim * h;
	}
	q_dim = dtplan__model_q_dim(m);
	kv_dim = dtplan__model_kv_dim(m);
	/* Q and the output projection, K and V; GELU models have biases */
	p = 2.0 * h * q_dim + 2.0 * h * kv_dim;
	if (m->mlp != DTPLAN_MLP_SWIGLU)
		p += q_dim + h + 2.0 * kv_dim;
	return p;
}

/* Routed experts counted: `experts` for the total, top_k for the active. */
static double count_params(const struct dtplan_model *m, int routed)
{
	double h, per_layer, final_norm, embed, dense_mlp, moe_mlp = 0.0;
	int n_moe;

	if (m == NULL || m->heads <= 0 || m->hidden <= 0)
		return 0.0;
	h = m->hidden;
	n_moe = dtplan_model_moe_layers(m);
	per_layer = dtplan__model_attn_params(m);
	if (m->mlp == DTPLAN_MLP_SWIGLU) {
		per_layer += 2.0 * h;
		final_norm = h;
	} else {
		per_layer += 4.0 * h;
		final_norm = 2.0 * h;
	}
	dense_mlp = mlp_params(m, m->ffn);
	if (n_moe > 0)
		moe_mlp = ((double)routed + m->shared_experts) * mlp_params(m, m->moe_ffn) +
			  (double)m->experts * h;
	embed = (double)m->vocab * h * (m->tied_embeddings ? 1.0 : 2.0);
	return m->layers * per_layer + (double)(m->layers - n_moe) * dense_mlp + n_moe * moe_mlp +
	       final_norm + embed;
}

double dtplan_model_param_count(const struct dtplan_model *m)
{
	return count_params(m, m != NULL ? m->experts : 0);
}

double dtplan_model_active_param_count(const struct dtplan_model *m)
{
	return count_params(m, m != NULL ? m->top_k : 0);
}

/* Checks dimensions and sets params unless given.  `source` names the input. */
static enum dtplan_err validate(struct dtplan_model *m, const char *source,
				struct dtplan_error *err)
{
	double params;

	if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->kv_heads <= 0 || m->ffn <= 0 ||
	    m->vocab <= 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "layers (%d), hidden (%d), heads (%d), kv_heads (%d), "
				     "ffn (%d) and vocab (%d) must all be positive",
				     m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab);
	if (m->max_seq < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "sequence length %d must not be negative", m->max_seq);
	if (m->hidden > MAX_HIDDEN)
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
				     "hidden %d is larger than %d", m->hidden, MAX_HIDDEN);
	if (m->head_dim > MAX_HIDDEN)
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
				     "head_dim %d is larger than %d", m->head_dim, MAX_HIDDEN);
	if (m->hidden % m->heads != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "heads %d does not divide hidden %d", m->heads, m->hidden);
	if (m->heads % m->kv_heads != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "kv_heads %d does not divide heads %d", m->kv_heads, m->heads);
	if (m->experts < 0 || m->top_k < 0 || m->moe_ffn < 0 || m->shared_experts < 0 ||
	    m->moe_every < 0 || m->first_dense < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "experts (%d), top_k (%d), moe_ffn (%d), shared_experts (%d), "
				     "moe_every (%d) and first_dense (%d) must not be negative",
				     m->experts, m->top_k, m->moe_ffn, m->shared_experts,
				     m->moe_every, m->first_dense);
	if (m->experts == 0 && (m->top_k > 0 || m->shared_experts > 0))
		return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
				     "top_k (%d) and shared_experts (%d) need routed experts "
				     "(experts=N)",
				     m->top_k, m->shared_experts);
	if (m->experts > 0) {
		if (m->top_k == 0)
			m->top_k = 1;
		if (m->moe_ffn == 0)
			m->moe_ffn = m->ffn;
		if (m->moe_every == 0)
			m->moe_every = 1;
		if (m->top_k > m->experts)
			return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
					     "top_k %d is more than the %d experts", m->top_k,
					     m->experts);
		if (dtplan_model_moe_layers(m) == 0)
			return dtplan__error(err, DTPLAN_ERR_INVAL, source, 0,
					     "no layer is an MoE layer: first_dense %d and "
					     "moe_every %d leave none of the %d layers",
					     m->first_dense, m->moe_every, m->layers);
	}
	if (m->kv_lora_rank < 0 || m->q_lora_rank < 0 ||
	    (m->kv_lora_rank > 0 &&
	     (m->qk_nope_dim <= 0 || m->qk_rope_dim < 0 || m->v_head_dim <= 0)))
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, source, 0,
			"latent attention needs kv_lora_rank, qk_nope_dim and v_head_dim "
			"above 0 (%d, %d, %d)",
			m->kv_lora_rank, m->qk_nope_dim, m->v_head_dim);
	{
		/* each latent dimension within a hidden size, so that no product
		 * of them leaves 64 bits; the key named (issue 26) */
		static const struct {
			const char *key;
			size_t off;
		} dims[] = {
			{"q_lora_rank", offsetof(struct dtplan_model, q_lora_rank)},
			{"kv_lora_rank", offsetof(struct dtplan_model, kv_lora_rank)},
			{"qk_nope_dim", offsetof(struct dtplan_model, qk_nope_dim)},
			{"qk_rope_dim", offsetof(struct dtplan_model, qk_rope_dim)},
			{"v_head_dim", offsetof(struct dtplan_model, v_head_dim)},
		};

		for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(dims); i++) {
			int v = *(const int *)((const char *)m + dims[i].off);

			if (v > MAX_HIDDEN)
				return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
						     "latent attention's %s %d is larger than %d",
						     dims[i].key, v, MAX_HIDDEN);
		}
	}
	params = m->params_given ? m->params : dtplan_model_param_count(m);
	if (!(params <= MAX_PARAMS))
		return dtplan__error(err, DTPLAN_ERR_RANGE, source, 0,
				     "%.3g parameters is more than the %.0e allowed", params,
				     MAX_PARAMS);
	m->params = params;
	m->active_params = m->params_given  ? params
			   : m->experts > 0 ? dtplan_model_active_param_count(m)
					    : params;
	return DTPLAN_OK;
}

enum dtplan_err dtplan_model_from_size(double params, struct dtplan_model *m,
				       struct dtplan_error *err)
{
	struct dtplan_model tmp = {0};
	double h;
	char buf[32];

	if (m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "model size: no output given");
	if (!isfinite(params) || params <= 0.0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "model size %g must be a positive number", params);
	if (params > MAX_PARAMS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size %.3g is more than the %.0e parameters allowed",
				     params, MAX_PARAMS);
	/* 1e-300 parameters planned as a "0.00" model (issue 13, finding 21). */
	if (params < DTPLAN_MODEL_MIN_PARAMS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size %.6g is less than the %.0f parameters dtplan "
				     "plans for",
				     params, DTPLAN_MODEL_MIN_PARAMS);
	/* N = 12 L h^2 (Kaplan et al., arXiv 2001.08361) with L = h/128. */
	h = round(cbrt(128.0 * params / 12.0) / 128.0) * 128.0;
	if (h < 128.0)
		h = 128.0;
	tmp.hidden = (int)h;
	tmp.layers = tmp.hidden / 128;
	tmp.heads = tmp.hidden / 128;
	tmp.kv_heads = tmp.heads;
	tmp.ffn = 4 * tmp.hidden;
	tmp.vocab = 50257;
	tmp.mlp = DTPLAN_MLP_GELU;
	tmp.dropout = true; /* Megatron-LM's default, the count's own */
	tmp.params = params;
	tmp.active_params = params;
	tmp.params_given = true;
	dtplan__strlcpy(tmp.name, dtplan_format_count(params, buf, sizeof(buf)), sizeof(tmp.name));
	*m = tmp;
	return DTPLAN_OK;
}

/*
 * config.json's integers, read by dtplan__jget_int() from 1 (or 0) to
 * INT32_MAX: a required key must be there, an optional one may be null.
 */
#define HF_REQ DTPLAN_JGET_REQUIRED
#define HF_OPT DTPLAN_JGET_NULLABLE

/*
 * The mixture-of-experts and latent-attention keys of the three families
 * (transformers' configuration_mixtral.py, configuration_qwen2_moe.py,
 * configuration_deepseek_v3.py):
 *   Mixtral      num_local_experts, num_experts_per_tok; experts of
 *                intermediate_size
 *   Qwen2-MoE    num_experts, num_experts_per_tok, moe_intermediate_size,
 *                shared_expert_intermediate_size (one expert that wide: a
 *                multiple of moe_intermediate_size), decoder_sparse_step,
 *                mlp_only_layers (leading layers only)
 *   DeepSeek     n_routed_experts, num_experts_per_tok, moe_intermediate_size,
 *                n_shared_experts, first_k_dense_replace, moe_layer_freq;
 *                q_lora_rank (null: none), kv_lora_rank, qk_nope_head_dim,
 *                qk_rope_head_dim, v_head_dim
 * A routed count of 0 (Qwen2's num_experts 0) is a dense model.
 */
static enum dtplan_err hf_moe(json_t *root, struct dtplan_model *m, const char *path,
			      struct dtplan_error *err)
{
	static const char *const experts_keys[] = {"num_local_experts", "num_experts",
						   "n_routed_experts"};
	const char *experts_key = NULL;
	enum dtplan_err rv;
	json_t *v;
	int shared_width = 0, n, sparse_step = 0, layer_freq = 0;

	for (size_t k = 0; k < DTPLAN_ARRAY_SIZE(experts_keys); k++) {
		v = json_object_get(root, experts_keys[k]);
		if (v == NULL || json_is_null(v))
			continue;
		if (experts_key != NULL)
			return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					     "keys '%s' and '%s' both give the routed experts",
					     experts_key, experts_keys[k]);
		experts_key = experts_keys[k];
	}
	if ((rv = dtplan__jget_int(root, path, "", "num_local_experts", HF_OPT, 0, INT32_MAX,
				   &m->experts, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "num_experts", HF_OPT, 0, INT32_MAX, &m->experts,
				   err)) ||
	    (rv = dtplan__jget_int(root, path, "", "n_routed_experts", HF_OPT, 0, INT32_MAX,
				   &m->experts, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "num_experts_per_tok", HF_OPT, 0, INT32_MAX,
				   &m->top_k, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "moe_intermediate_size", HF_OPT, 1, INT32_MAX,
				   &m->moe_ffn, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "n_shared_experts", HF_OPT, 0, INT32_MAX,
				   &m->shared_experts, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "shared_expert_intermediate_size", HF_OPT, 0,
				   INT32_MAX, &shared_width, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "first_k_dense_replace", HF_OPT, 0, INT32_MAX,
				   &m->first_dense, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "moe_layer_freq", HF_OPT, 1, INT32_MAX,
				   &layer_freq, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "decoder_sparse_step", HF_OPT, 1, INT32_MAX,
				   &sparse_step, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "q_lora_rank", HF_OPT, 0, INT32_MAX,
				   &m->q_lora_rank, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "kv_lora_rank", HF_OPT, 0, INT32_MAX,
				   &m->kv_lora_rank, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "qk_nope_head_dim", HF_OPT, 1, INT32_MAX,
				   &m->qk_nope_dim, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "qk_rope_head_dim", HF_OPT, 0, INT32_MAX,
				   &m->qk_rope_dim, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "v_head_dim", HF_OPT, 1, INT32_MAX,
				   &m->v_head_dim, err)))
		return rv;
	if (m->experts == 0) {
		m->top_k = m->shared_experts = m->moe_ffn = m->first_dense = m->moe_every = 0;
		return DTPLAN_OK;
	}
	if (m->top_k > m->experts)
		return dtplan__error(err, DTPLAN_ERR_RANGE, path, 0,
				     "key 'num_experts_per_tok': %d is more than the %d experts of "
				     "key '%s'",
				     m->top_k, m->experts, experts_key);
	/* Qwen2-MoE: layer i is MoE when (i + 1) % decoder_sparse_step == 0
	 * (modeling_qwen2_moe.py); DeepSeek: when i >= first_k_dense_replace and
	 * i % moe_layer_freq == 0 (modeling_deepseek.py) */
	if (layer_freq > 0 && sparse_step > 0)
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "keys 'moe_layer_freq' and 'decoder_sparse_step' both given: "
				     "they count MoE layers differently");
	m->moe_every = layer_freq > 0 ? layer_freq : sparse_step;
	m->moe_every_from_zero = layer_freq > 0;
	if (m->moe_ffn == 0)
		m->moe_ffn = m->ffn;
	if (shared_width > 0) {
		if (shared_width % m->moe_ffn != 0)
			return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					     "key 'shared_expert_intermediate_size': %d is not a "
					     "multiple of the experts' width %d",
					     shared_width, m->moe_ffn);
		m->shared_experts = shared_width / m->moe_ffn;
	}
	v = json_object_get(root, "mlp_only_layers");
	n = v != NULL && json_is_array(v) ? (int)json_array_size(v) : 0;
	if (v != NULL && !json_is_null(v) && !json_is_array(v))
		return dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				     "key 'mlp_only_layers' must be a list of layer indexes");
	for (int i = 0; i < n; i++) {
		json_t *e = json_array_get(v, (size_t)i);

		if (!json_is_integer(e) || json_integer_value(e) != i)
			return dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, path, 0,
					     "key 'mlp_only_layers': dtplan plans dense layers "
					     "leading the model only (0, 1, ..), not entry %d",
					     i);
	}
	if (n > m->first_dense)
		m->first_dense = n;
	return DTPLAN_OK;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Dropout: any of the probabilities transformers' configurations name for it
 * (Llama, Mistral, Qwen2: attention_dropout; GPT-NeoX, BLOOM: hidden_dropout,
 * attention_dropout; GPT-2: resid_pdrop, attn_pdrop; BERT-style:
 * hidden_dropout_prob, attention_probs_dropout_prob) above 0; none given:
 * none.
 */
static enum dtplan_err hf_dropout(const json_t *root, struct dtplan_model *m, const char *path,
				  struct dtplan_error *err)
{
	static const char *const keys[] = {"hidden_dropout",      "attention_dropout",
					   "resid_pdrop",         "attn_pdrop",
					   "hidden_dropout_prob", "attention_probs_dropout_prob"};

	m->dropout = false;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(keys); i++) {
		double p = 0.0;
		enum dtplan_err rv =
			dtplan__jget_num(root, path, "", keys[i], HF_OPT, 0.0, 1.0, &p, err);

		if (rv != DTPLAN_OK)
			return rv;
		if (p > 0.0)
			m->dropout = true;
	}
	return DTPLAN_OK;
}

/*
 * HuggingFace keys: hidden_size, num_hidden_layers, num_attention_heads,
 * vocab_size (required); num_key_value_heads (default heads),
 * intermediate_size (default 4h), max_position_embeddings (default 0),
 * tie_word_embeddings (default true, as in transformers' PretrainedConfig),
 * hidden_act (silu/swish: SwiGLU; gelu*, relu: two matrices; default gelu),
 * model_type (the family, for the hand-offs that differ by it),
 * the dropout probabilities (hf_dropout()).
 */
enum dtplan_err dtplan_model_from_hf_config(const char *path, struct dtplan_model *m,
					    struct dtplan_error *err)
{
	struct dtplan_model tmp = {0};
	enum dtplan_err rv;
	json_t *root = NULL, *v;
	char *text = NULL;
	size_t len = 0;

	if (path == NULL || path[0] == '\0' || m == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "config.json: no path given");
		goto out;
	}
	rv = dtplan_file_read(path, DTPLAN_FILE_HF_CONFIG, &text, &len, err);
	if (rv != DTPLAN_OK)
		goto out;
	/* a config.json with a large id2label map still fits */
	root = dtplan__json_load(text, len, (size_t)1 << 20, path, "", err);
	if (root == NULL) {
		rv = DTPLAN_ERR_PARSE;
		goto out;
	}
	if (!json_is_object(root)) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
				   "expected a JSON object at the top level");
		goto out;
	}
	if ((rv = dtplan__jget_int(root, path, "", "num_hidden_layers", HF_REQ, 1, INT32_MAX,
				   &tmp.layers, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "hidden_size", HF_REQ, 1, INT32_MAX, &tmp.hidden,
				   err)) ||
	    (rv = dtplan__jget_int(root, path, "", "num_attention_heads", HF_REQ, 1, INT32_MAX,
				   &tmp.heads, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "vocab_size", HF_REQ, 1, INT32_MAX, &tmp.vocab,
				   err)))
		goto out;
	tmp.kv_heads = tmp.heads;
	tmp.ffn = tmp.hidden <= INT32_MAX / 4 ? 4 * tmp.hidden : 0;
	if ((rv = dtplan__jget_int(root, path, "", "num_key_value_heads", HF_OPT, 1, INT32_MAX,
				   &tmp.kv_heads, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "intermediate_size", HF_OPT, 1, INT32_MAX,
				   &tmp.ffn, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "max_position_embeddings", HF_OPT, 1, INT32_MAX,
				   &tmp.max_seq, err)) ||
	    (rv = dtplan__jget_int(root, path, "", "head_dim", HF_OPT, 1, INT32_MAX, &tmp.head_dim,
				   err)) ||
	    (rv = hf_moe(root, &tmp, path, err)))
		goto out;
	tmp.tied_embeddings = true;
	rv = dtplan__jget_bool(root, path, "", "tie_word_embeddings", HF_OPT, &tmp.tied_embeddings,
			       err);
	if (rv != DTPLAN_OK)
		goto out;
	if ((rv = hf_dropout(root, &tmp, path, err)) != DTPLAN_OK)
		goto out;
	if ((rv = dtplan__jget_str(root, path, "", "model_type", HF_OPT, tmp.family,
				   sizeof(tmp.family), err)) != DTPLAN_OK)
		goto out;
	tmp.mlp = DTPLAN_MLP_GELU;
	v = json_object_get(root, "hidden_act");
	if (v != NULL && !json_is_null(v)) {
		const char *act = json_string_value(v);

		if (act == NULL) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					   "key 'hidden_act' must be a string");
			goto out;
		}
		if (dtplan__streq_nocase(act, "silu") || dtplan__streq_nocase(act, "swish")) {
			tmp.mlp = DTPLAN_MLP_SWIGLU;
		} else if (strncasecmp(act, "gelu", 4) != 0 && !dtplan__streq_nocase(act, "relu")) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0,
					   "key 'hidden_act': unknown activation '%s' (expected "
					   "silu, swish, gelu* or relu)",
					   act);
			goto out;
		}
	}
	dtplan__strlcpy(tmp.name, base_name(path), sizeof(tmp.name));
	rv = validate(&tmp, path, err);
	if (rv != DTPLAN_OK)
		goto out;
	*m = tmp;
	rv = DTPLAN_OK;
out:
	json_decref(root);
	free(text);
	return rv;
}

/* Explicit dimensions: "layers=96,hidden=12288,heads=96[,kv_heads=..]...". */
struct dims {
	struct dtplan_model m; /* first: the keys' offsets are the model's */
	const char *spec;
};

static enum dtplan_err dims_mlp(void *obj, const struct dtplan__kv_key *k, const char *value,
				struct dtplan_error *err)
{
	struct dims *d = obj;

	(void)k;
	if (dtplan__streq_nocase(value, "gelu")) {
		d->m.mlp = DTPLAN_MLP_GELU;
		return DTPLAN_OK;
	}
	if (dtplan__streq_nocase(value, "swiglu")) {
		d->m.mlp = DTPLAN_MLP_SWIGLU;
		return DTPLAN_OK;
	}
	return dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
			     "model '%s': mlp '%s' is not gelu or swiglu", d->spec, value);
}

/* seq, shared experts, leading dense layers and ranks may be 0 */
#define DIM(n, field, lo)                                                                          \
	{                                                                                          \
		.name = n, .kind = DTPLAN__KV_INT, .offset = offsetof(struct dtplan_model, field), \
		.min = lo, .max = INT32_MAX                                                        \
	}

/* layers, hidden, heads, kv_heads and ffn first: parse_dims() checks them by index */
static const struct dtplan__kv_key dims_keys[] = {
	DIM("layers", layers, 1),
	DIM("hidden", hidden, 1),
	DIM("heads", heads, 1),
	DIM("kv_heads", kv_heads, 1),
	DIM("ffn", ffn, 1),
	DIM("head_dim", head_dim, 1),
	DIM("vocab", vocab, 1),
	DIM("seq", max_seq, 0),
	{.name = "mlp", .kind = DTPLAN__KV_CUSTOM, .parse = dims_mlp},
	{.name = "tied",
	 .kind = DTPLAN__KV_BOOL,
	 .offset = offsetof(struct dtplan_model, tied_embeddings)},
	{.name = "dropout",
	 .kind = DTPLAN__KV_BOOL,
	 .offset = offsetof(struct dtplan_model, dropout)},
	DIM("experts", experts, 1),
	DIM("top_k", top_k, 1),
	DIM("moe_ffn", moe_ffn, 1),
	DIM("shared_experts", shared_experts, 0),
	DIM("moe_every", moe_every, 1),
	DIM("first_dense", first_dense, 0),
	DIM("q_lora_rank", q_lora_rank, 0),
	DIM("kv_lora_rank", kv_lora_rank, 0),
	DIM("qk_nope_dim", qk_nope_dim, 0),
	DIM("qk_rope_dim", qk_rope_dim, 0),
	DIM("v_head_dim", v_head_dim, 0),
};

static const struct dtplan__kv_table dims_table = {
	.keys = dims_keys,
	.n = DTPLAN_ARRAY_SIZE(dims_keys),
	.sep = ',',
	.nocase = false,
};

static enum dtplan_err parse_dims(const char *spec, struct dtplan_model *m,
				  struct dtplan_error *err)
{
	struct dims d = {.spec = spec};
	struct dtplan_model tmp;
	bool seen[DTPLAN_ARRAY_SIZE(dims_keys)];
	char prefix[sizeof(err->text)]; /* the spec in full, as the message shows it */
	struct dtplan__kv_where where = {prefix, "", 0};
	enum dtplan_err rv;

	snprintf(prefix, sizeof(prefix), "model '%s': ", spec);
	d.m.vocab = 50257;
	d.m.mlp = DTPLAN_MLP_GELU;
	d.m.dropout = true; /* Megatron-LM's default hidden and attention dropout */
	rv = dtplan__kv_parse(&dims_table, spec, &d, seen, &where, err);
	if (rv != DTPLAN_OK)
		goto out;
	tmp = d.m;
	for (size_t k = 0; k < 3; k++) {
		if (!seen[k]) {
			rv = dtplan__error(err, DTPLAN_ERR_PARSE, "", 0,
					   "model '%s': missing key '%s' (layers, hidden and heads "
					   "are required)",
					   spec, dims_keys[k].name);
			goto out;
		}
	}
	if (!seen[3])
		tmp.kv_heads = tmp.heads;
	if (!seen[4]) {
		if (tmp.hidden > MAX_HIDDEN) {
			rv = dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
					   "model '%s': hidden %d is larger than %d", spec,
					   tmp.hidden, MAX_HIDDEN);
			goto out;
		}
		tmp.ffn = 4 * tmp.hidden;
	}
	rv = validate(&tmp, "", err);
	if (rv != DTPLAN_OK)
		goto out;
	dtplan__strlcpy(tmp.name, spec, sizeof(tmp.name));
	*m = tmp;
	rv = DTPLAN_OK;
out:
	return rv;
}

static enum dtplan_err unknown_preset(const char *spec, struct dtplan_error *err)
{
	char list[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(presets); i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				 presets[i].name);

		if (w < 0 || (size_t)w >= sizeof(list) - len)
			break;
		len += (size_t)w;
	}
	return dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0,
			     "unknown model '%s' (presets: %s; or a size such as 7B, a config.json "
			     "path, or layers=..,hidden=..,heads=..)",
			     spec, list);
}

enum dtplan_err dtplan_model_parse(const char *spec, struct dtplan_model *m,
				   struct dtplan_error *err)
{
	size_t len;
	double n;
	enum dtplan_err rv;

	if (spec == NULL || spec[0] == '\0' || m == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "missing model");
	len = strlen(spec);
	if (strchr(spec, '/') != NULL || (len >= 5 && strcasecmp(spec + len - 5, ".json") == 0))
		return dtplan_model_from_hf_config(spec, m, err);
	if (strchr(spec, '=') != NULL)
		return parse_dims(spec, m, err);
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(presets); i++) {
		if (dtplan__streq_nocase(spec, presets[i].name)) {
			*m = presets[i];
			if (m->active_params <= 0.0)
				m->active_params = m->params;
			return DTPLAN_OK;
		}
	}
	/* "-7B" is a size with a sign, not an unknown preset. */
	if ((spec[0] == '-' || spec[0] == '+') &&
	    ((spec[1] >= '0' && spec[1] <= '9') || spec[1] == '.'))
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "model size '%s' must be positive, without a sign (such as "
				     "7B)",
				     spec);
	if ((spec[0] >= '0' && spec[0] <= '9') || spec[0] == '.') {
		rv = dtplan_parse_count(spec, "model size", &n, err);
		if (rv != DTPLAN_OK)
			return rv;
		rv = dtplan_model_from_size(n, m, err);
		if (rv == DTPLAN_OK)
			dtplan__strlcpy(m->name, spec, sizeof(m->name));
		return rv;
	}
	return unknown_preset(spec, err);
}

void dtplan__model_parts(const struct dtplan_model *m, struct dtplan__model_parts *out)
{
	double vh, untied;

	memset(out, 0, sizeof(*out));
	if (m == NULL || m->layers < 1 || !(m->params > 0.0))
		return;
	vh = m->vocab > 0 && m->hidden > 0 ? (double)m->vocab * m->hidden : 0.0;
	untied = m->tied_embeddings ? 0.0 : vh;
	if (vh > 0.0 && m->params - vh - untied > 0.0) {
		out->embedding = vh;
		out->head = vh;
		out->head_flops_params = vh;
		out->per_layer = (m->params - vh - untied) / m->layers;
		out->active_per_layer = m->active_params > 0.0
						? (m->active_params - vh - untied) / m->layers
						: out->per_layer;
	} else {
		out->per_layer = m->params / m->layers;
		out->active_per_layer = out->per_layer;
	}
	if (out->active_per_layer <= 0.0)
		out->active_per_layer = out->per_layer;
}

void dtplan__model_layer_range(const struct dtplan_model *m, int first, int n, double *dense,
			       double *expert)
{
	struct dtplan__model_parts parts;
	double h = m->hidden, common, moe_dense, routed;
	int n_moe = 0;

	*dense = 0.0;
	*expert = 0.0;
	if (n <= 0)
		return;
	dtplan__model_parts(m, &parts);
	if (m->experts <= 0 || m->params_given) {
		*dense = n * parts.per_layer;
		return;
	}
	n_moe = dtplan__model_moe_in(m, first, n);
	common = dtplan__model_attn_params(m) + (m->mlp == DTPLAN_MLP_SWIGLU ? 2.0 : 4.0) * h;
	moe_dense = m->shared_experts * mlp_params(m, m->moe_ffn) + (double)m->experts * h;
	routed = (double)m->experts * mlp_params(m, m->moe_ffn);
	*dense = n * common + (double)(n - n_moe) * mlp_params(m, m->ffn) + n_moe * moe_dense;
	*expert = n_moe * routed;
}
