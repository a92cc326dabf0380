/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ledger.c: memory a GPU needs for weights, gradients, optimizer state and
 * activations.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"
#include "cost/cost.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const recompute_names[] = {
	[DTPLAN_RECOMPUTE_NONE] = "none",
	[DTPLAN_RECOMPUTE_SELECTIVE] = "selective",
	[DTPLAN_RECOMPUTE_FINE] = "fine",
	[DTPLAN_RECOMPUTE_FULL] = "full",
};

const char *dtplan_recompute_name(enum dtplan_recompute r)
{
	if ((unsigned)r >= DTPLAN_ARRAY_SIZE(recompute_names))
		return "unknown";
	return recompute_names[r];
}

enum dtplan_err dtplan_recompute_parse(const char *text, enum dtplan_recompute *out,
				       struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(recompute_names); i++) {
		if (dtplan__streq_nocase(text, recompute_names[i])) {
			if (out != NULL)
				*out = (enum dtplan_recompute)i;
			return DTPLAN_OK;
		}
	}
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
			     "recompute: '%s' is not none, selective, fine or full",
			     text ? text : "");
}

static const char *const attention_names[] = {
	[DTPLAN_ATTENTION_UNFUSED] = "unfused",
	[DTPLAN_ATTENTION_FLASH] = "flash",
};

static const char *const precision_names[] = {
	[DTPLAN_PRECISION_BF16] = "bf16",
	[DTPLAN_PRECISION_FP8] = "fp8",
	[DTPLAN_PRECISION_MXFP8] = "mxfp8",
	[DTPLAN_PRECISION_NVFP4] = "nvfp4",
};

static const char *const moments_names[] = {
	[DTPLAN_MOMENTS_FP32] = "fp32",
	[DTPLAN_MOMENTS_BF16] = "bf16",
};

static const char *const grads_names[] = {
	[DTPLAN_GRADS_DEFAULT] = "default",
	[DTPLAN_GRADS_FP32] = "fp32",
	[DTPLAN_GRADS_BF16] = "bf16",
};

static const char *const schedule_names[] = {
	[DTPLAN_SCHEDULE_1F1B] = "1f1b",
	[DTPLAN_SCHEDULE_DUALPIPE] = "dualpipe",
};

double dtplan__optimizer_bytes(bool offload, bool no_master_copy, bool bf16_moments)
{
	if (offload)
		return 0.0;
	return (no_master_copy ? 0.0 : 4.0) + (bf16_moments ? 4.0 : 8.0);
}

/* The framework's row (lib/model/framework.c); Megatron-LM's out of range,
 * which check_in() refuses before any count. */
static const struct dtplan__framework *row(enum dtplan_framework f)
{
	const struct dtplan__framework *fw = dtplan__framework(f);

	return fw != NULL ? fw : dtplan__framework(DTPLAN_FRAMEWORK_MEGATRON);
}

double dtplan__grad_bytes(enum dtplan_framework f, enum dtplan_grads g)
{
	return g == DTPLAN_GRADS_BF16 ? 2.0 : g == DTPLAN_GRADS_FP32 ? 4.0 : row(f)->grad_bytes;
}

enum dtplan_grads dtplan__grads_held(enum dtplan_framework f, enum dtplan_grads g)
{
	return dtplan__grad_bytes(f, g) < 4.0 ? DTPLAN_GRADS_BF16 : DTPLAN_GRADS_FP32;
}

/* torchtitan reduces in fp32 (TrainingConfig.mixed_precision_reduce,
 * torchtitan/config/configs.py, b5bcd76); DeepSpeed in bf16.  Megatron-LM
 * with --bf16 reduces its fp32 main gradients in fp32 unless told
 * --grad-reduce-in-bf16 (validate_args(), megatron/training/arguments.py,
 * d98e8a6), which also makes them bf16: counted here as 4 bytes held and 2
 * on the wire, its memory exact and its DP time a lower bound
 * (doc/launchers.md). */
double dtplan__grad_wire_bytes(enum dtplan_framework f)
{
	return row(f)->grad_wire_bytes;
}

bool dtplan__grads_reduced_once(enum dtplan_framework f, int zero, int pp)
{
	return zero <= 1 || (row(f)->grads_once_with_pp && pp > 1);
}

bool dtplan__selective_per_op(enum dtplan_framework f)
{
	return row(f)->selective_per_op;
}

static const char *name_of(const char *const *names, size_t n, int i)
{
	return i >= 0 && (size_t)i < n ? names[i] : "unknown";
}

/* The index of text among names; DTPLAN_ERR_INVAL naming what names `what`. */
static enum dtplan_err parse_name(const char *const *names, size_t n, const char *what,
				  const char *text, int *out, struct dtplan_error *err)
{
	for (size_t i = 0; text != NULL && i < n; i++) {
		if (dtplan__streq_nocase(text, names[i])) {
			if (out != NULL)
				*out = (int)i;
			return DTPLAN_OK;
		}
	}
	if (n > 3)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "%s: '%s' is not %s, %s, %s or %s", what, text ? text : "",
				     names[0], names[1], names[2], names[3]);
	if (n > 2)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s: '%s' is not %s, %s or %s",
				     what, text ? text : "", names[0], names[1], names[2]);
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "%s: '%s' is not %s or %s", what,
			     text ? text : "", names[0], names[1]);
}

const char *dtplan_framework_name(enum dtplan_framework f)
{
	const struct dtplan__framework *fw = dtplan__framework(f);

	return fw != NULL ? fw->name : "unknown";
}

const char *dtplan_attention_name(enum dtplan_attention a)
{
	return name_of(attention_names, DTPLAN_ARRAY_SIZE(attention_names), a);
}

const char *dtplan_precision_name(enum dtplan_precision p)
{
	return name_of(precision_names, DTPLAN_ARRAY_SIZE(precision_names), p);
}

const char *dtplan_schedule_name(enum dtplan_schedule s)
{
	return name_of(schedule_names, DTPLAN_ARRAY_SIZE(schedule_names), s);
}

enum dtplan_err dtplan_schedule_parse(const char *text, int *out, struct dtplan_error *err)
{
	return parse_name(schedule_names, DTPLAN_ARRAY_SIZE(schedule_names), "schedule", text, out,
			  err);
}

const char *dtplan_moments_name(enum dtplan_moments m)
{
	return name_of(moments_names, DTPLAN_ARRAY_SIZE(moments_names), m);
}

enum dtplan_err dtplan_moments_parse(const char *text, int *out, struct dtplan_error *err)
{
	return parse_name(moments_names, DTPLAN_ARRAY_SIZE(moments_names), "moments", text, out,
			  err);
}

const char *dtplan_grads_name(enum dtplan_grads g)
{
	return name_of(grads_names, DTPLAN_ARRAY_SIZE(grads_names), g);
}

enum dtplan_err dtplan_grads_parse(const char *text, int *out, struct dtplan_error *err)
{
	return parse_name(grads_names, DTPLAN_ARRAY_SIZE(grads_names), "grads", text, out, err);
}

/* A name or an alias of the table's; the message names every name. */
enum dtplan_err dtplan_framework_parse(const char *text, int *out, struct dtplan_error *err)
{
	char names[128];
	size_t len = 0;
	int f = dtplan__framework_find(text), n = dtplan__framework_count();

	if (f >= 0) {
		if (out != NULL)
			*out = f;
		return DTPLAN_OK;
	}
	names[0] = '\0';
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
					"%s%s",
					i == 0       ? ""
					: i == n - 1 ? " or "
						     : ", ",
					dtplan_framework_name((enum dtplan_framework)i));
	return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "framework: '%s' is not %s",
			     text ? text : "", names);
}

enum dtplan_err dtplan_attention_parse(const char *text, int *out, struct dtplan_error *err)
{
	return parse_name(attention_names, DTPLAN_ARRAY_SIZE(attention_names), "attention", text,
			  out, err);
}

enum dtplan_err dtplan_precision_parse(const char *text, int *out, struct dtplan_error *err)
{
	return parse_name(precision_names, DTPLAN_ARRAY_SIZE(precision_names), "precision", text,
			  out, err);
}

/*
 * Activations of one layer for one micro-batch in bytes (Korthikanti et al.,
 * "Reducing Activation Recomputation in Large Transformer Models", arXiv
 * 2205.05198, Table 2), s sequence, b micro-batch, h hidden, a heads, t TP:
 *   no recompute, no TP             sbh (34 + 5as/h)
 *   TP with sequence parallelism    (sbh/t) (34 + 5as/h)
 *   TP without                      sbh (10 + 24/t + 5as/(ht))
 *   selective recompute             34 sbh/t with SP, sbh (10 + 24/t) without
 *   fine recompute                  30 sbh/t with SP, sbh (6 + 24/t) without
 *   full recompute                  2 sbh (the layer input), /t with SP
 * Returns 0 for non-positive inputs.
 */
double dtplan_activation_bytes_per_layer(int seq, int micro_batch, int hidden, int heads, int tp,
					 bool sequence_parallel, enum dtplan_recompute r)
{
	double s = seq, b = micro_batch, h = hidden, a = heads, t = tp;
	double sbh = s * b * h;

	if (seq <= 0 || micro_batch <= 0 || hidden <= 0 || heads <= 0 || tp <= 0)
		return 0.0;
	switch (r) {
	case DTPLAN_RECOMPUTE_NONE:
		if (sequence_parallel || tp == 1)
			return sbh / t * (34.0 + 5.0 * a * s / h);
		return sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
	case DTPLAN_RECOMPUTE_SELECTIVE:
		if (sequence_parallel)
			return 34.0 * sbh / t;
		return sbh * (10.0 + 24.0 / t);
	case DTPLAN_RECOMPUTE_FINE:
		/* selective without the two layer-norm outputs (2 sbh each) */
		if (sequence_parallel)
			return 30.0 * sbh / t;
		return sbh * (6.0 + 24.0 / t);
	case DTPLAN_RECOMPUTE_FULL:
		return sequence_parallel ? 2.0 * sbh / t : 2.0 * sbh;
	}
	return 0.0;
}

static enum dtplan_err check_in(const struct dtplan_ledger_in *in, struct dtplan_error *err)
{
	if (in->model == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "ledger: no model given");
	if (!(in->model->params > 0.0) || !isfinite(in->model->params))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: model '%s' has no parameter count", in->model->name);
	if (in->tp < 1 || in->pp < 1 || in->dp < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: tp (%d), pp (%d) and dp (%d) must be at least 1",
				     in->tp, in->pp, in->dp);
	/* In 64 bits: each factor is below 2^31, so tp x pp cannot wrap, and
	 * tp x pp x dp is only formed once tp x pp is at most DTPLAN_MAX_GPUS. */
	if ((int64_t)in->tp * in->pp > DTPLAN_MAX_GPUS ||
	    (int64_t)in->tp * in->pp * in->dp > DTPLAN_MAX_GPUS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "ledger: TP %d x PP %d x DP %d is more than the %d GPUs "
				     "dtplan plans for",
				     in->tp, in->pp, in->dp, DTPLAN_MAX_GPUS);
	if (in->zero < 0 || in->zero > 3)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "ledger: ZeRO stage %d is not 0, 1, 2 or 3", in->zero);
	if (in->seq < 0 || in->num_microbatches < 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: sequence length (%d) and micro-batch count (%d) must "
				     "not be negative",
				     in->seq, in->num_microbatches);
	if (in->seq > 0 && in->micro_batch < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: micro-batch size %d must be at least 1",
				     in->micro_batch);
	if ((unsigned)in->recompute >= DTPLAN_ARRAY_SIZE(recompute_names))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: unknown recompute mode %d", (int)in->recompute);
	if (dtplan__framework(in->framework) == NULL ||
	    (unsigned)in->attention >= DTPLAN_ARRAY_SIZE(attention_names))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: unknown framework %d or attention %d",
				     (int)in->framework, (int)in->attention);
	if (in->vp < 0 || in->ep < 0 || in->cp < 0 || in->etp < 0)
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "", 0,
			"ledger: interleaved chunks (%d), EP (%d) and CP (%d) must not "
			"be negative",
			in->vp, in->ep, in->cp);
	{
		/* the split's shape, by the training rules (lib/model/rules.c):
		 * what the count needs to mean a split; whether a framework runs
		 * it is the planner's question */
		struct dtplan__split s;

		dtplan__split_init(&s, in->model);
		s.framework = in->framework;
		s.attention = in->attention;
		s.schedule = in->dualpipe ? DTPLAN_SCHEDULE_DUALPIPE : DTPLAN_SCHEDULE_1F1B;
		s.split = in->split;
		if (dtplan__split_check(&s, DTPLAN__RULES_LEDGER, err) != DTPLAN_OK)
			return DTPLAN_ERR_INVAL;
	}
	if (in->seq > 0 && (in->model->layers < 1 || in->model->hidden < 1 || in->model->heads < 1))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: model '%s' lacks the layers, hidden and heads that "
				     "activations need",
				     in->model->name);
	return DTPLAN_OK;
}

/* The first layer (0-based) of stage i of a split over pp stages. */
static int stage_first_layer(const struct dtplan_ledger_in *in,
			     const struct dtplan_stage_layers *st, int i)
{
	if (i == 0 || st == NULL)
		return 0;
	if (i == in->pp - 1)
		return in->model->layers - st->last;
	return st->first + (i - 1) * st->middle;
}

/*
 * Activation bytes per token that one layer keeps for its backward pass
 * without full recomputation, as Megatron-LM keeps them: Korthikanti's 34 h
 * term by term, for the model's own attention and MLP (a standard GPT layer
 * gives the 34 h: 10 h whole on every TP rank, 24 h divided).  Kept whole
 * (*rep, what TP without sequence parallelism does not divide): the two
 * layer norms' inputs 2 + 2 h, the two dropout masks 1 + 1 h when the model
 * trains with dropout, the QKV and first MLP matrices' inputs g h each.
 * Divided by TP (*div): the queries 2 a d, keys and values 2 kv d each
 * (GQA: kv heads; d the head width, h / a unless the model sets it), the
 * output projection's input g a d; the first
 * MLP matrix's output 2 u F, the activation's input (u = 2 for SwiGLU's gate
 * and up, 1 for GELU), and the second matrix's input g F.  g is the bytes of
 * a matrix multiply's input (2, or 1 for fp8: a GPT layer's 34 h become
 * 27 h).
 *
 * Latent attention (DeepSeek-V2) keeps its wider queries and keys (a
 * (d_nope + d_rope) each), values (a d_v), the output projection's input (a
 * d_v) and its latents (the up-projections' inputs and the rotary key).  An
 * MoE MLP keeps its input (the router's, bf16) and for each of the top_k
 * routed copies of a token, times the capacity factor, the permuted input
 * (g h e bytes, e the experts' TP: the expert TP group gathers its e
 * members' tokens, so once divided by t the rank keeps e / t of the
 * sequence's: all of it at e = t, Megatron's TP all-gather before the
 * experts, its own sequence-parallel share at e = 1, parallel folding),
 * its expert's activation
 * input (g u F: under fp8 cached in fp8,
 * as DeepSeek-V3's recipe caches the SwiGLU operator's inputs, arXiv
 * 2412.19437, section 3.3.3) and output (g F, the second matrix's input);
 * the shared experts their g u F + g F each; and the fp32 router logits
 * (4 E).
 *
 * fine (DTPLAN_RECOMPUTE_FINE) keeps no layer-norm output (the first
 * matrices' inputs), no up-projected queries, keys and values of latent
 * attention and no routed expert's activation output: each is rebuilt from
 * what is kept when the backward pass needs it.
 */
static void layer_per_token(const struct dtplan_model *m, bool moe, double g, bool fine,
			    double gather, double *rep, double *div)
{
	double h = m->hidden, a = m->heads, f = m->moe_ffn, routed;
	double qd = dtplan__model_q_dim(m), kvd = dtplan__model_kv_dim(m);
	double u = m->mlp == DTPLAN_MLP_SWIGLU ? 2.0 : 1.0;

	*rep = 4.0 * h + (m->dropout ? 2.0 * h : 0.0) + (fine ? 0.0 : g * h);
	if (m->kv_lora_rank > 0)
		*div = (fine ? 0.0
			     : 4.0 * a * ((double)m->qk_nope_dim + m->qk_rope_dim) +
					2.0 * a * m->v_head_dim) +
		       g * a * m->v_head_dim + g * ((double)m->q_lora_rank + m->kv_lora_rank) +
		       2.0 * m->qk_rope_dim;
	else
		*div = 2.0 * qd + 4.0 * kvd + g * qd;
	if (!moe) {
		double ff = m->ffn > 0 ? m->ffn : 4.0 * h;

		*rep += fine ? 0.0 : g * h;
		*div += 2.0 * u * ff + g * ff;
		return;
	}
	routed = DTPLAN_MOE_CAPACITY_FACTOR * m->top_k;
	*rep += fine ? 0.0 : 2.0 * h;
	*div += routed * (g * h * gather + g * u * f + (fine ? 0.0 : g * f)) +
		m->shared_experts * (g * u * f + g * f) + 4.0 * m->experts;
}

/*
 * Bytes per token that torchtitan's per-op selective recomputation keeps of
 * one dense block (dtplan__selective_per_op()): the block's input (2 h,
 * sequence-parallel under TP), the attention's output and its fp32
 * log-sum-exp (2 a d + 4 a, split by TP; a d = h unless the model sets its
 * head width), the outputs of the first, third, ... of the block's matrix
 * multiplies in forward order (wq, wk, wv, wo,
 * then w1, w3, w2 of SwiGLU or the two of a GELU MLP; bf16 also under fp8,
 * whose matrix multiplies return bf16), and under TP the reduce-scatter
 * outputs after wo and the MLP (2 h / t each: saved communication).  A
 * row-parallel output (wo, w2) is whole on each rank until its
 * reduce-scatter.
 */
static double per_op_per_token(const struct dtplan_model *m, int tp)
{
	double h = m->hidden, a = m->heads, t = tp;
	double qd = dtplan__model_q_dim(m), kvd = dtplan__model_kv_dim(m);
	double f = m->ffn > 0 ? m->ffn : 4.0 * h;
	bool swiglu = m->mlp == DTPLAN_MLP_SWIGLU;
	const double mm[7] = {qd / t, kvd / t, kvd / t, h, f / t, swiglu ? f / t : h, h};
	double bytes = 2.0 * h / t + (2.0 * qd + 4.0 * a) / t;

	for (int i = 0; i < (swiglu ? 7 : 6); i += 2)
		bytes += 2.0 * mm[i];
	if (tp > 1)
		bytes += 2.0 * 2.0 * h / t;
	return bytes;
}

/* Activations of one layer for one micro-batch (CP divides the sequence). */
static double layer_activations(const struct dtplan_ledger_in *in, enum dtplan_recompute rc,
				bool moe, bool fp8)
{
	int cp = in->cp > 1 ? in->cp : 1, s = in->seq / cp;
	double tok = (double)s * in->micro_batch, t = in->tp, rep, div, bytes;

	/* per-op selective of a dense block with standard attention; MoE and
	 * latent-attention blocks are counted as Megatron-LM keeps them */
	if (rc == DTPLAN_RECOMPUTE_SELECTIVE && in->recompute == DTPLAN_RECOMPUTE_SELECTIVE &&
	    dtplan__selective_per_op(in->framework) && !moe && in->model->kv_lora_rank <= 0)
		return tok * per_op_per_token(in->model, in->tp);
	if (rc == DTPLAN_RECOMPUTE_FULL)
		return dtplan_activation_bytes_per_layer(s, in->micro_batch, in->model->hidden,
							 in->model->heads, in->tp,
							 in->sequence_parallel, rc);
	layer_per_token(in->model, moe,
			fp8 ? (in->gemm_in_bytes > 0.0 ? in->gemm_in_bytes : 1.0) : 2.0,
			rc == DTPLAN_RECOMPUTE_FINE, in->etp > 0 ? in->etp : t, &rep, &div);
	if (in->sequence_parallel || in->tp == 1)
		bytes = tok * (rep + div) / t;
	else
		bytes = tok * (rep + div / t);
	/* unfused attention without recomputation: the softmax's output
	 * (2 a s^2 b), and with dropout its mask and output (1 + 2): 5 a s^2 b */
	if (rc == DTPLAN_RECOMPUTE_NONE)
		bytes += (in->model->dropout ? 5.0 : 2.0) * in->model->heads * (double)s * tok / t;
	return bytes;
}

/* Each layer's activations for one micro-batch, dense and MoE, as stored
 * and as rebuilt by a full recomputation (layer_activations()). */
struct layer_acts {
	double dense, moe, whole_dense, whole_moe;
};

static void layer_acts_of(const struct dtplan_ledger_in *in, struct layer_acts *a)
{
	enum dtplan_recompute rc = in->recompute, whole;

	memset(a, 0, sizeof(*a));
	if (in->seq <= 0)
		return;
	if (in->attention == DTPLAN_ATTENTION_FLASH && rc == DTPLAN_RECOMPUTE_NONE)
		rc = DTPLAN_RECOMPUTE_SELECTIVE;
	a->dense = layer_activations(in, rc, false, in->fp8);
	a->moe = layer_activations(in, rc, true, in->fp8);
	/* rerunning a layer's forward rebuilds all of its activations */
	whole = in->attention == DTPLAN_ATTENTION_FLASH ? DTPLAN_RECOMPUTE_SELECTIVE
							: DTPLAN_RECOMPUTE_NONE;
	if (rc == DTPLAN_RECOMPUTE_FULL) {
		a->whole_dense = layer_activations(in, whole, false, false);
		a->whole_moe = layer_activations(in, whole, true, false);
	}
}

/* The ledger of one stage of shape sh (dtplan__ledger_shape()). */
static void stage_ledger(const struct dtplan_ledger_in *in, const struct dtplan__stage_shape *sh,
			 const struct dtplan__stage_shape *twin, const struct layer_acts *acts,
			 struct dtplan_ledger *l)
{
	/*
	 * Mixed-precision Adam (Rajbhandari et al., ZeRO, arXiv 1910.02054,
	 * section 3.1): 2 bytes bf16 weights, 2 gradients, 4 fp32 master copy,
	 * 4 Adam m, 4 Adam v = 16 per parameter (12 without the master copy).
	 * TP splits the stage's parameters; ZeRO shards over DP degree N:
	 * stage 1 the optimizer state, stage 2 also gradients, stage 3 also
	 * weights (4 + 12/N, 2 + 14/N, 16/N bytes per parameter).  Megatron-LM
	 * accumulates fp32 main gradients (4 bytes) that its distributed
	 * optimizer does not shard: 18 bytes, 6 + 12/N with ZeRO-1 (Megatron-LM's
	 * docs/source/distrib_optimizer.md).  ZeRO-Offload keeps the master
	 * copy and Adam's moments in host memory (Ren et al., arXiv 2101.06840).
	 * Context parallelism replicates the weights: ZeRO shards over dp x cp
	 * (Megatron-LM's data-parallel group with CP).  Expert parallelism
	 * and expert tensor parallelism divide the routed experts, and the
	 * expert data-parallel group of tp x cp x dp / (etp x ep) ranks shards
	 * them (Megatron-Core's MoE parallel folding, parallel_state.py,
	 * d98e8a6; etp 0: TP's, Megatron-LM's default).
	 */
	int cp = in->cp > 1 ? in->cp : 1, ep = in->ep > 1 ? in->ep : 1;
	int etp = in->etp > 0 ? in->etp : in->tp;
	int stage = sh->stage, layers = sh->layers, n_moe = sh->n_moe;
	double p, pe, n = (double)in->dp * cp, ne = n * in->tp / ((double)etp * ep), stage_acts;
	double opt = dtplan__optimizer_bytes(in->offload, in->no_master_copy, in->bf16_moments);
	double grad = dtplan__grad_bytes(in->framework, in->grads);
	bool gshard;

	/* DualPipe: the GPU of stage i also holds stage pp - 1 - i */
	p = (sh->dense + (twin != NULL ? twin->dense : 0.0)) / in->tp;
	pe = (sh->expert + (twin != NULL ? twin->expert : 0.0)) / ((double)etp * ep);
	memset(l, 0, sizeof(*l));
	l->stage = stage;
	l->stage_layers = layers + (twin != NULL ? twin->layers : 0);
	l->params_per_gpu = p + pe;
	l->expert_params_per_gpu = pe;
	l->weights = 2.0 * (p / (in->zero >= 3 ? n : 1.0) + pe / (in->zero >= 3 ? ne : 1.0));
	/* gradients held whole through the step are not sharded */
	gshard = !dtplan__grads_reduced_once(in->framework, in->zero, in->pp);
	l->gradients = grad * (p / (gshard ? n : 1.0) + pe / (gshard ? ne : 1.0));
	l->optimizer = opt * (p / (in->zero >= 1 ? n : 1.0) + pe / (in->zero >= 1 ? ne : 1.0));

	/*
	 * 1F1B keeps min(m, pp - i) micro-batches in flight on stage i
	 * (Narayanan et al., arXiv 2104.04473, section 2.2), each with the
	 * activations of the stage's layers; v interleaved chunks hold
	 * 1 + (p - 1) / (p v) times as much (Korthikanti et al., section 5).
	 * Flash attention stores no a s^2 scores: what selective recomputation
	 * keeps.  The last stage holds one micro-batch of fp32 logits.
	 */
	if (in->seq > 0) {
		int m = in->num_microbatches > 0 ? in->num_microbatches : 1;
		int in_flight = m < in->pp - stage ? m : in->pp - stage;
		enum dtplan_recompute rc = in->recompute;
		double chunks = in->vp > 1 ? in->vp : 1.0;

		if (in->attention == DTPLAN_ATTENTION_FLASH && rc == DTPLAN_RECOMPUTE_NONE)
			rc = DTPLAN_RECOMPUTE_SELECTIVE;
		stage_acts = (layers - n_moe) * acts->dense + n_moe * acts->moe;
		/* DualPipe: pp + 1 micro-batches of the heavier of the two
		 * stages (the DualPipe table's "PP + 1" against 1F1B's PP) */
		if (twin != NULL) {
			in_flight = m < in->pp + 1 ? m : in->pp + 1;
			stage_acts = fmax(stage_acts, (twin->layers - twin->n_moe) * acts->dense +
							      twin->n_moe * acts->moe);
		}
		l->activations = (double)in_flight * stage_acts;
		if (chunks > 1.0)
			l->activations *= 1.0 + (in->pp - 1.0) / (in->pp * chunks);
		/* rerunning a layer's forward rebuilds all of its activations */
		if (rc == DTPLAN_RECOMPUTE_FULL && layers > 0)
			l->activations += n_moe > 0 || (twin != NULL && twin->n_moe > 0)
						  ? acts->whole_moe
						  : acts->whole_dense;
		if ((stage == in->pp - 1 || (twin != NULL && twin->stage == in->pp - 1)) &&
		    in->model->vocab > 0)
			l->activations += 4.0 * (in->seq / cp) * in->micro_batch *
					  ((double)in->model->vocab / in->tp);
	}
	l->total = l->weights + l->gradients + l->optimizer + l->activations;
}

enum dtplan_err dtplan_ledger_layout(int gpus, int tp, int pp, int *dp, struct dtplan_error *err)
{
	int64_t model_parallel;

	if (dp == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no output given");
	if (gpus < 1 || tp < 1 || pp < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "GPUs (%d), TP (%d) and PP (%d) must be at least 1", gpus, tp,
				     pp);
	if (gpus > DTPLAN_MAX_GPUS)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "%d GPUs is more than the %d dtplan plans for", gpus,
				     DTPLAN_MAX_GPUS);
	/* 65536 x 65536 wrapped to 0 in int, and gpus % 0 was SIGFPE */
	model_parallel = (int64_t)tp * pp;
	if (model_parallel > gpus)
		return dtplan__error(err, DTPLAN_ERR_RANGE, "", 0,
				     "TP %d x PP %d = %" PRId64 " GPUs is more than the %d "
				     "GPUs of the job",
				     tp, pp, model_parallel, gpus);
	if (gpus % model_parallel != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "%d GPUs are not a multiple of TP %d x PP %d", gpus, tp, pp);
	*dp = (int)(gpus / model_parallel);
	return DTPLAN_OK;
}

/* The shape of stage i holding `layers` layers from `first` on. */
static void stage_shape(const struct dtplan_ledger_in *in, int i, int first, int layers,
			struct dtplan__stage_shape *sh)
{
	struct dtplan__model_parts parts;
	double dense, expert;

	dtplan__model_layer_range(in->model, first, layers, &dense, &expert);
	if (in->pp == 1) {
		dense = in->model->params - expert;
	} else {
		dtplan__model_parts(in->model, &parts);
		if (i == 0)
			dense += parts.embedding;
		if (i == in->pp - 1)
			dense += parts.head;
	}
	sh->stage = i;
	sh->layers = layers;
	sh->n_moe = dtplan__model_moe_in(in->model, first, layers);
	sh->dense = dense;
	sh->expert = expert;
}

enum dtplan_err dtplan__ledger_shape(const struct dtplan_ledger_in *in,
				     struct dtplan__ledger_shape *out, struct dtplan_error *err)
{
	struct dtplan_stage_layers split;
	const struct dtplan_stage_layers *st;
	enum dtplan_err rv;

	if (in == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "ledger: no input or output");
	rv = check_in(in, err);
	if (rv != DTPLAN_OK)
		return rv;
	memset(out, 0, sizeof(*out));
	out->pp = in->pp;
	if (in->pp == 1) {
		stage_shape(in, 0, 0, in->model->layers, &out->s[out->n++]);
		return DTPLAN_OK;
	}
	st = in->stages;
	if (st == NULL) {
		rv = dtplan_stage_split_model(in->model, in->seq, in->pp, &split, err);
		if (rv != DTPLAN_OK)
			return rv;
		st = &split;
	}
	/* The candidates for the heaviest stage: the first (most in flight,
	 * the embedding), the first middle one, the last (the output layer). */
	for (int k = 0; k < 3; k++) {
		int i = k == 0 ? 0 : k == 1 ? 1 : in->pp - 1;

		if (k == 1 && in->pp < 3)
			continue;
		stage_shape(in, i, stage_first_layer(in, st, i),
			    dtplan_stage_layers_at(st, in->pp, i), &out->s[out->n++]);
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan__ledger_compute_shaped(const struct dtplan_ledger_in *in,
					      const struct dtplan__ledger_shape *sh,
					      struct dtplan_ledger *out, struct dtplan_error *err)
{
	struct layer_acts acts;
	struct dtplan_ledger l;
	enum dtplan_err rv;

	if (in == NULL || sh == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "ledger: no input or output");
	rv = check_in(in, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (sh->pp != in->pp || sh->n < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0,
				     "ledger: the stages were shaped for PP %d, not PP %d", sh->pp,
				     in->pp);
	layer_acts_of(in, &acts);
	out->total = -1.0;
	for (int k = 0; k < sh->n; k++) {
		const struct dtplan__stage_shape *twin = NULL;

		/* DualPipe pairs stage 0 with the last, a middle stage with its
		 * mirror (as large: the middle stages are equal) */
		if (in->dualpipe && in->pp > 1) {
			if (k == sh->n - 1)
				break;
			twin = k == 0 ? &sh->s[sh->n - 1] : &sh->s[k];
		}
		stage_ledger(in, &sh->s[k], twin, &acts, &l);
		if (l.total > out->total)
			*out = l;
	}
	return DTPLAN_OK;
}

enum dtplan_err dtplan_ledger_compute(const struct dtplan_ledger_in *in, struct dtplan_ledger *out,
				      struct dtplan_error *err)
{
	struct dtplan__ledger_shape sh;
	enum dtplan_err rv;

	if (in == NULL || out == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "ledger: no input or output");
	rv = dtplan__ledger_shape(in, &sh, err);
	if (rv != DTPLAN_OK)
		return rv;
	return dtplan__ledger_compute_shaped(in, &sh, out, err);
}
