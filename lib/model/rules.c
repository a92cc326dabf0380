/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rules.c: which splits a model and a framework allow, and why not.
 *
 * The one home of every training rule: the request's refusals
 * (lib/plan/request.c), the search's enumeration (lib/plan/search.c) and
 * the ledger's validation (lib/cost/ledger.c) all ask dtplan__split_check(),
 * each for the rules it needs, with what it knows of the split.  The checks
 * run in one order, so that a split breaking two rules is told the same
 * first one wherever it is checked.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <stdio.h>

void dtplan__split_init(struct dtplan__split *s, const struct dtplan_model *m)
{
	*s = (struct dtplan__split){
		.model = m,
		.zero = -1,
		.offload = -1,
		.recompute = -1,
		.attention = DTPLAN_ATTENTION_FLASH,
	};
}

/* A model's key/value heads (its attention heads when it does not say). */
static int kv_heads(const struct dtplan_model *m)
{
	return m->kv_heads > 0 ? m->kv_heads : m->heads;
}

enum dtplan__vp_split dtplan__vp_split_of(int layers, int pp, int vp)
{
	int ends = layers + 2;

	if (vp < 2 || pp < 2 || (layers % vp == 0 && layers / vp >= pp))
		return DTPLAN__VP_UNITS;
	/* Megatron-Bridge's Llama 3.1 405B recipes set both flags
	 * (src/megatron/bridge/recipes/llama/h100/llama3.py, 067f987) */
	if (pp > 2 && ends % pp == 0 && (ends / pp) % vp == 0 && ends / pp >= 2)
		return DTPLAN__VP_ACCOUNT;
	if (layers - (layers + pp * vp - 1) / (pp * vp) * (pp * vp - 1) >= 1)
		return DTPLAN__VP_LAYOUT;
	return DTPLAN__VP_NONE;
}

static enum dtplan_err check_model(const struct dtplan__split *s, unsigned rules,
				   struct dtplan_error *err)
{
	const struct dtplan_model *m = s->model;

	if (m == NULL)
		return DTPLAN_OK;
	if ((rules & DTPLAN__RULE_TP_HEADS) && s->tp > 0 &&
	    (m->heads % s->tp != 0 || kv_heads(m) % s->tp != 0))
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "tp", 0,
			"TP %d does not divide the %d attention heads and %d key/value "
			"heads of %s",
			s->tp, m->heads, kv_heads(m), m->name);
	if ((rules & DTPLAN__RULE_PP_LAYERS) && s->pp > m->layers)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "pp", 0,
				     "PP %d is more stages than the %d layers of %s", s->pp,
				     m->layers, m->name);
	if ((rules & DTPLAN__RULE_VP_LAYERS) && s->vp > 1 && s->pp > 1 && s->pp <= m->layers &&
	    dtplan__vp_split_of(m->layers, s->pp, s->vp) == DTPLAN__VP_NONE)
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "vp", 0,
			"vp=%d with PP %d: interleaving cuts every stage into %d "
			"chunks of whole layers, and neither the %d layers of %s in "
			"units of %d, nor the %d with the embedding and the loss as one "
			"layer each (Megatron-LM's account-for-embedding/loss split), "
			"nor %d chunks of %d with a shorter last (its pipeline layout) "
			"make %d such stages",
			s->vp, s->pp, s->vp, m->layers, m->name, s->vp, m->layers + 2,
			s->pp * s->vp, (m->layers + s->pp * s->vp - 1) / (s->pp * s->vp), s->pp);
	if ((rules & DTPLAN__RULE_EP_EXPERTS) && s->ep > 1 && m->experts <= 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "EP %d needs a model with experts; %s is dense", s->ep,
				     m->name);
	if ((rules & DTPLAN__RULE_EP_EXPERTS) && s->ep > 1 && m->experts % s->ep != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "EP %d does not divide the %d experts of %s", s->ep,
				     m->experts, m->name);
	/* ETP cuts each expert's FFN (megatron/core/transformer/moe/experts.py
	 * splits moe_ffn_hidden_size over the expert TP group) */
	if ((rules & DTPLAN__RULE_EP_EXPERTS) && s->etp > 1 && m->experts > 0 && m->moe_ffn > 0 &&
	    m->moe_ffn % s->etp != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "etp", 0,
				     "ETP %d does not divide the expert FFN width %d of %s", s->etp,
				     m->moe_ffn, m->name);
	return DTPLAN_OK;
}

/*
 * "framework=a or framework=b": the frameworks whose row has `has`, for the
 * messages that name where a split runs (buf of n bytes).
 */
static const char *frameworks_with(char *buf, size_t n,
				   bool (*has)(const struct dtplan__framework *))
{
	size_t len = 0;
	int found = 0, count = dtplan__framework_count();

	buf[0] = '\0';
	for (int i = 0; i < count; i++) {
		const struct dtplan__framework *fw = dtplan__framework((enum dtplan_framework)i);
		int more = 0;

		if (!has(fw))
			continue;
		for (int j = i + 1; j < count; j++)
			more += has(dtplan__framework((enum dtplan_framework)j));
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%sframework=%s",
					found == 0 ? ""
					: more > 0 ? ", "
						   : " or ",
					fw->name);
		found++;
	}
	return buf;
}

static bool shards_with_pp(const struct dtplan__framework *fw)
{
	return fw->shard_with_pp;
}

static bool runs_fine(const struct dtplan__framework *fw)
{
	return (fw->recompute & (1u << DTPLAN_RECOMPUTE_FINE)) != 0;
}

static bool runs_bf16_moments(const struct dtplan__framework *fw)
{
	return fw->bf16_moments;
}

static bool runs_grads_either(const struct dtplan__framework *fw)
{
	return fw->grads_either;
}

/*
 * What each framework runs, from its row (lib/model/framework.c names the
 * sources): DeepSpeed refuses ZeRO-2/3 with its pipeline engine and ZeRO-3
 * with its MoE layers ("MoE not supported with Stage 3",
 * deepspeed/runtime/engine.py); Megatron-LM shards gradients and
 * parameters with Megatron-FSDP (--data-parallel-sharding-strategy
 * optim_grads / optim_grads_params) and offloads the optimizer with
 * --optimizer-cpu-offload; torchtitan is FSDP2 (dp_shard, with
 * reshard_after_forward "never" for ZeRO-2 and "always" for ZeRO-3) or DDP
 * (dp_replicate, ZeRO-0), always FSDP over CP (its fsdp mesh holds dp_shard
 * x cp, torchtitan/distributed/parallel_dims.py), and its EP borrows TP
 * ranks (efsdp = dp_shard x cp x tp / ep), another expert layout than the
 * TP-sharded experts counted here.
 */
static enum dtplan_err check_framework(const struct dtplan__split *s, struct dtplan_error *err)
{
	const struct dtplan_model *m = s->model;
	const struct dtplan__framework *fw = dtplan__framework(s->framework);
	char alt[128];

	if (fw == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "framework", 0, "unknown framework %d",
				     (int)s->framework);
	if (!fw->shard_with_pp && s->zero >= 2 && s->pp > 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0,
				     "ZeRO-%d needs PP 1 (%s does not combine ZeRO-2/3 with "
				     "pipeline parallelism), PP is %d; %s shard with any PP",
				     s->zero, fw->title, s->pp,
				     err != NULL ? frameworks_with(alt, sizeof(alt), shards_with_pp)
						 : "");
	if (!fw->moe_zero3 && s->zero == 3 && m != NULL && m->experts > 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0,
				     "ZeRO-3 with the experts of %s: %s refuses MoE layers "
				     "with stage 3",
				     m->name, fw->title);
	if (s->zero >= 0 && s->zero <= 3 && !(fw->zero & (1u << s->zero)))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0, "%s has no ZeRO-%d: %s",
				     fw->title, s->zero, fw->zero_note);
	if (!fw->offload && s->offload == 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0,
				     "offload=yes: %s's CPU offload moves parameters and "
				     "gradients too, not only the optimizer state",
				     fw->title);
	if (!fw->cp_replicated && s->cp > 1 && s->zero == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0,
				     "CP %d with ZeRO-0: %s always shards with FSDP over CP", s->cp,
				     fw->title);
	/* torchtitan's EP takes TP ranks and leaves its experts whole (its
	 * sparse mesh is pp, dp_replicate, efsdp, ep: no expert TP,
	 * parallel_dims.py, b5bcd76): ETP 1 with EP, TP's without */
	if (!fw->fold && !fw->ep_with_tp && s->ep > 1 && s->etp > 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "etp", 0,
				     "ETP %d with EP %d: %s's EP takes TP ranks and keeps its "
				     "experts whole (ETP 1)",
				     s->etp, s->ep, fw->title);
	if (!fw->fold && s->etp > 0 && s->tp > 0 && s->etp != s->tp &&
	    (fw->ep_with_tp || s->ep <= 1))
		return dtplan__error(err, DTPLAN_ERR_INVAL, "etp", 0,
				     "ETP %d with TP %d: %s shards its experts by TP%s (no "
				     "expert tensor parallelism of its own; framework=megatron "
				     "folds them)",
				     s->etp, s->tp, fw->title, fw->ep_with_tp ? "" : " without EP");
	/* Megatron-Core keeps the biases of MoE linear layers only with
	 * ETP 1 (TransformerConfig.__post_init__, "Bias in Moe is only
	 * supported when ETP==1", d98e8a6); dtplan's GELU models have linear
	 * biases (lib/model/model.c), its SwiGLU ones none */
	if (fw->fold && m != NULL && m->experts > 0 && m->mlp == DTPLAN_MLP_GELU && s->etp > 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "etp", 0,
				     "ETP %d: %s's experts have linear biases, which %s keeps "
				     "only with the experts' TP 1 (etp=1)",
				     s->etp, m->name, fw->title);
	if (!fw->dualpipe && s->schedule == DTPLAN_SCHEDULE_DUALPIPE)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "schedule", 0,
				     "schedule=dualpipe: %s has no DualPipe schedule", fw->title);
	return DTPLAN_OK;
}

static enum dtplan_err check_train(const struct dtplan__split *s, unsigned rules,
				   struct dtplan_error *err)
{
	const struct dtplan__framework *fw = dtplan__framework(s->framework);
	bool fine = fw != NULL && runs_fine(fw), bf16_moments = fw != NULL && fw->bf16_moments;
	char alt[128];
	enum dtplan_err rv;

	if ((rules & DTPLAN__RULE_FRAMEWORK) && (rv = check_framework(s, err)) != DTPLAN_OK)
		return rv;
	if ((rules & DTPLAN__RULE_VP_PP) && s->vp > 1 && s->pp == 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "vp", 0,
				     "%d interleaved stages need pipeline parallelism, PP is 1",
				     s->vp);
	if ((rules & DTPLAN__RULE_DUALPIPE) && s->schedule == DTPLAN_SCHEDULE_DUALPIPE &&
	    s->pp > 1 && s->pp % 2 != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "schedule", 0,
				     "DualPipe runs an even PP without interleaving: PP %d is odd",
				     s->pp);
	if ((rules & DTPLAN__RULE_DUALPIPE) && s->schedule == DTPLAN_SCHEDULE_DUALPIPE && s->vp > 1)
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "schedule", 0,
			"DualPipe runs an even PP without interleaving: %d interleaved "
			"stages asked",
			s->vp);
	if ((rules & DTPLAN__RULE_MEGATRON) && s->recompute == DTPLAN_RECOMPUTE_FINE && !fine)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "recompute", 0,
				     "recompute=fine is Megatron-Core's --recompute-modules; "
				     "it needs %s",
				     err != NULL ? frameworks_with(alt, sizeof(alt), runs_fine)
						 : "");
	/* DeepSpeed's bf16_optimizer_states needs bf16_master_weights_and_grads:
	 * no fp32 master copy, another ledger than the one counted here. */
	if ((rules & DTPLAN__RULE_MEGATRON) && s->moments == DTPLAN_MOMENTS_BF16 && !bf16_moments)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "moments", 0,
				     "moments=bf16 is Megatron-Core's precision-aware optimizer "
				     "(fp32 master weights, bf16 Adam moments); it needs "
				     "%s (DeepSpeed keeps bf16 moments only with "
				     "bf16 master weights)",
				     err != NULL
					     ? frameworks_with(alt, sizeof(alt), runs_bf16_moments)
					     : "");
	/* DeepSpeed's bf16 keeps bf16 gradients and torchtitan reduces in fp32
	 * (TrainingConfig.mixed_precision_reduce takes "float32" alone,
	 * torchtitan/config/configs.py, b5bcd76): grads= names their own */
	if ((rules & DTPLAN__RULE_MEGATRON) && fw != NULL && !fw->grads_either &&
	    s->grads != DTPLAN_GRADS_DEFAULT &&
	    (s->grads == DTPLAN_GRADS_BF16) != (fw->grad_bytes < 4.0)) {
		const char *asked = s->grads == DTPLAN_GRADS_BF16 ? "bf16" : "fp32";

		return dtplan__error(err, DTPLAN_ERR_INVAL, "grads", 0,
				     "grads=%s: %s keeps %s gradients; grads=%s needs %s", asked,
				     fw->title, s->grads == DTPLAN_GRADS_BF16 ? "fp32" : "bf16",
				     asked,
				     err != NULL
					     ? frameworks_with(alt, sizeof(alt), runs_grads_either)
					     : "");
	}
	/* TE's precision-aware optimizer runs under the distributed one
	 * ("--use-precision-aware-optimizer only supported with distributed
	 * optimizer", megatron/core/optimizer/__init__.py, d98e8a6) */
	if ((rules & DTPLAN__RULE_MEGATRON) && s->moments == DTPLAN_MOMENTS_BF16 && s->zero == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "moments", 0,
				     "moments=bf16 is Megatron-Core's precision-aware optimizer, "
				     "which runs with its distributed optimizer: ZeRO-1 or more, "
				     "not ZeRO-0");
	if ((rules & DTPLAN__RULE_OFFLOAD_ZERO) && s->offload == 1 && s->zero == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0,
				     "ZeRO-Offload runs with ZeRO-1, 2 or 3, not ZeRO-0");
	if ((rules & DTPLAN__RULE_CP_FLASH) && s->cp > 1 && s->attention != DTPLAN_ATTENTION_FLASH)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "cp", 0,
				     "CP %d needs flash attention (ring attention runs on its "
				     "blocks)",
				     s->cp);
	/* Megatron-LM cuts each sequence into 2 x CP chunks, two per CP rank
	 * (validate_args(), megatron/training/arguments.py), and sequence
	 * parallelism splits a CP rank's tokens over TP
	 * (_split_along_first_dim(), megatron/core/tensor_parallel/mappings.py;
	 * both read at d98e8a6).  The plans assume sequence parallelism with
	 * every TP > 1. */
	if ((rules & DTPLAN__RULE_SEQ) && s->seq > 0 && s->cp > 1 && s->seq % (2 * s->cp) != 0)
		return dtplan__error(
			err, DTPLAN_ERR_INVAL, "cp", 0,
			"CP %d cuts each sequence into %d chunks, and a sequence of %d "
			"token%s is not a multiple of them",
			s->cp, 2 * s->cp, s->seq, s->seq == 1 ? "" : "s");
	if ((rules & DTPLAN__RULE_SEQ) && s->seq > 0 && s->tp > 1 &&
	    (s->seq / (s->cp > 1 ? s->cp : 1)) % s->tp != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "tp", 0,
				     "TP %d does not divide the %d tokens of a sequence%s "
				     "(sequence parallelism splits them over TP)",
				     s->tp, s->seq / (s->cp > 1 ? s->cp : 1),
				     s->cp > 1 ? " a CP rank holds" : "");
	return DTPLAN_OK;
}

static enum dtplan_err check_gpus(const struct dtplan__split *s, unsigned rules,
				  struct dtplan_error *err)
{
	int tp = s->tp > 0 ? s->tp : 1;
	const struct dtplan__framework *fw = dtplan__framework(s->framework);
	long cd = (long)s->dp * (s->cp > 1 ? s->cp : 1);

	/* Megatron-Core's expert generator: expert DP = world / (etp ep pp)
	 * over the same ranks as tp x cp x dp, whole in every stage
	 * (initialize_model_parallel(), parallel_state.py, d98e8a6);
	 * torchtitan's EP divides dp_shard x cp x tp (ETP 1); DeepSpeed's
	 * divides its data-parallel ranks */
	if ((rules & DTPLAN__RULE_EP_DP) && s->dp > 0 && (fw == NULL || fw->fold) &&
	    (s->ep > 1 || (s->etp > 0 && s->etp != tp)) &&
	    (cd * tp) % ((long)(s->etp > 0 ? s->etp : tp) * s->ep) != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "ETP %d x EP %d does not divide TP x CP x DP %ld (the "
				     "experts' groups fold over the same ranks)",
				     s->etp > 0 ? s->etp : tp, s->ep, cd * tp);
	if ((rules & DTPLAN__RULE_EP_DP) && s->ep > 1 && s->dp > 0 && fw != NULL && !fw->fold &&
	    fw->ep_with_tp && cd % s->ep != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "EP %d does not divide CP x DP %ld (%s carves EP from "
				     "them; framework=megatron folds EP over TP too)",
				     s->ep, cd, fw->title);
	if ((rules & DTPLAN__RULE_EP_DP) && s->ep > 1 && s->dp > 0 && fw != NULL && !fw->fold &&
	    !fw->ep_with_tp && (cd * tp) % s->ep != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "EP %d does not divide TP x CP x DP %ld", s->ep, cd * tp);
	if (!(rules & DTPLAN__RULE_GPUS) || s->gpus <= 0)
		return DTPLAN_OK;
	if (s->tp > 0 && s->gpus % s->tp != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "tp", 0,
				     "TP %d does not divide %d GPUs", s->tp, s->gpus);
	if (s->pp > 0 && s->gpus % ((long)s->pp * tp) != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "pp", 0,
				     "TP %d x PP %d does not divide %d GPUs", tp, s->pp, s->gpus);
	if (s->ep > 0 && s->gpus % s->ep != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "ep", 0,
				     "EP %d does not divide %d GPUs", s->ep, s->gpus);
	if (s->cp > 0 && s->gpus % ((long)s->cp * tp) != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "cp", 0,
				     "TP %d x CP %d does not divide %d GPUs", tp, s->cp, s->gpus);
	return DTPLAN_OK;
}

/* A chosen split's numbers (DTPLAN__RULE_WHOLE). */
static enum dtplan_err check_whole(const struct dtplan__split *s, struct dtplan_error *err)
{
	if (s->tp < 1 || s->pp < 1 || s->dp < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "tp", 0,
				     "tp, pp and dp must be whole numbers >= 1");
	if (s->cp < 1 || s->ep < 1 || s->vp < 1 || s->etp < 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "cp", 0,
				     "cp, ep, etp and vp must be whole numbers >= 1");
	if (s->zero < 0 || s->zero > 3)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "zero", 0, "ZeRO stage %d is not 0-3",
				     s->zero);
	if (s->recompute < DTPLAN_RECOMPUTE_NONE || s->recompute > DTPLAN_RECOMPUTE_FULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "recompute", 0,
				     "recomputation %d unknown", s->recompute);
	if (s->offload != 0 && s->offload != 1)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "offload", 0,
				     "offload %d is neither 0 nor 1", s->offload);
	return DTPLAN_OK;
}

enum dtplan_err dtplan__split_check(const struct dtplan__split *s, unsigned rules,
				    struct dtplan_error *err)
{
	enum dtplan_err rv = DTPLAN_OK;

	if (rules & DTPLAN__RULE_WHOLE)
		rv = check_whole(s, err);
	if (rv == DTPLAN_OK)
		rv = check_model(s, rules, err);

	if (rv == DTPLAN_OK)
		rv = check_train(s, rules, err);
	if (rv == DTPLAN_OK)
		rv = check_gpus(s, rules, err);
	return rv;
}

enum dtplan_err dtplan__split_check_read(const struct dtplan_split *s,
					 enum dtplan_schedule schedule, enum dtplan_err code,
					 const char *source, const char *where,
					 struct dtplan_error *err)
{
	struct dtplan__split x;
	struct dtplan_error why;

	dtplan__split_init(&x, NULL);
	x.split = *s;
	x.schedule = schedule;
	/* a plan does not say whose rules counted it: its expert layout is
	 * checked against the widest, Megatron-Core's folding */
	x.framework = DTPLAN_FRAMEWORK_MEGATRON;
	if (x.ep == 0)
		x.ep = 1;
	if (x.etp == 0)
		x.etp = x.tp;
	if (x.cp == 0)
		x.cp = 1;
	if (x.vp == 0)
		x.vp = 1;
	if (dtplan__split_check(&x, DTPLAN__RULES_WHOLE, &why) == DTPLAN_OK)
		return DTPLAN_OK;
	return dtplan__error(err, code, source, 0, "%s: %s", where, why.text);
}

enum dtplan_err dtplan_split_check_model(const struct dtplan_model *m, const struct dtplan_split *s,
					 struct dtplan_error *err)
{
	struct dtplan__split x;

	if (m == NULL || s == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no model or split to check");
	dtplan__split_init(&x, m);
	x.split = *s;
	return dtplan__split_check(&x, DTPLAN__RULES_MODEL, err);
}

/*
 * What a framework's own launcher can be told, beyond what its count
 * allows: a plan counted under one framework handed to another's launcher
 * (lib/launch/), or under its own with what only the launcher refuses.
 * The clauses, in their order (each where the runner's row names it):
 *
 *   DeepSpeed's pipeline engine takes ZeRO-1 at most and has no sequence
 *   axis (its grid is pipe x data x model, deepspeed/runtime/pipe/
 *   topology.py: CP ranks would be data-parallel), and its engine refuses
 *   MoE layers with ZeRO-3 (deepspeed/runtime/engine.py, edaa722).
 *
 *   torchtitan's mesh is pp, dp_replicate, dp_shard, cp, tp; its EP divides
 *   dp_shard x cp x tp (ParallelDims._validate(), torchtitan/distributed/
 *   parallel_dims.py, b5bcd76), and DDP (ZeRO-0) has no dp_shard; its
 *   Float8 converter is set in the model's configuration; its selective
 *   recomputation is per-op, so a plan counted with another's is not its.
 *
 *   Megatron-Bridge refuses Megatron-FSDP with the tp-pp-dp mapping
 *   (ConfigContainer.validate(), src/megatron/bridge/training/config.py,
 *   067f987).
 */
static const char *runs_parallel(const struct dtplan__split *s, const struct dtplan__framework *r,
				 unsigned q, int order)
{
	if ((q & DTPLAN__RUNS_ORDER) && order >= 0 && !(r->orders & (1u << order)))
		return r->why_order;
	if ((q & DTPLAN__RUNS_ZERO) && s->zero >= 0 && s->zero <= 3 && !(r->zero & (1u << s->zero)))
		return r->why_zero;
	if ((q & DTPLAN__RUNS_SHARD_PP) && !r->shard_with_pp && s->zero >= 2 && s->pp > 1)
		return "DeepSpeed's pipeline engine does not run ZeRO-2/3";
	if ((q & DTPLAN__RUNS_CP_PP) && !r->cp_with_pp && s->cp > 1 && s->pp > 1)
		return "DeepSpeed's pipeline engine has no context (sequence) parallelism";
	if ((q & DTPLAN__RUNS_MOE_ZERO3) && !r->moe_zero3 && s->zero == 3 && s->model != NULL &&
	    s->model->experts > 0)
		return "DeepSpeed refuses MoE layers with ZeRO stage 3";
	if ((q & DTPLAN__RUNS_OFFLOAD) && !r->offload && s->offload == 1)
		return "its CPU offload moves parameters and gradients too";
	/* the expert layout: folded (Megatron-Core), ETP 1 with EP
	 * (torchtitan) or TP's with EP inside DP (DeepSpeed) */
	if ((q & DTPLAN__RUNS_EP) && !r->fold && !r->ep_with_tp && s->ep > 1 && s->etp > 1)
		return "its expert parallelism takes TP ranks and keeps the experts whole (ETP 1)";
	if ((q & DTPLAN__RUNS_EP) && !r->fold && s->etp > 0 && s->etp != s->tp &&
	    (r->ep_with_tp || s->ep <= 1))
		return "it shards its experts by TP (no expert tensor parallelism of its own)";
	if ((q & DTPLAN__RUNS_EP) && !r->fold && r->ep_with_tp && s->ep > 1 &&
	    ((long)s->dp * (s->cp > 1 ? s->cp : 1)) % s->ep != 0)
		return "its expert parallelism divides the data-parallel ranks (no folding over "
		       "TP)";
	if ((q & DTPLAN__RUNS_EP) && r->ep_shard && s->ep > 1 &&
	    ((long)(s->zero >= 2 ? s->dp : 1) * (s->cp > 1 ? s->cp : 1) * s->tp) % s->ep != 0)
		return "its expert parallelism divides dp_shard x cp x tp, and DDP shards nothing";
	if ((q & DTPLAN__RUNS_DUALPIPE) && !r->dualpipe && s->schedule == DTPLAN_SCHEDULE_DUALPIPE)
		return "it has no DualPipe schedule";
	if ((q & DTPLAN__RUNS_CP_ZERO) && !r->cp_replicated && s->cp > 1 && s->zero == 0)
		return "it shards with FSDP over CP";
	/* Megatron-Bridge's ConfigContainer.validate(): "use_tp_pp_dp_mapping
	 * is not supported with Megatron FSDP" */
	if ((q & DTPLAN__RUNS_FSDP_ORDER) && s->zero >= 2 && order >= 0 &&
	    !(r->fsdp_orders & (1u << order)))
		return "Megatron-FSDP with rank order tp-pp-dp";
	return NULL;
}

static const char *runs_numerics(const struct dtplan__split *s, const struct dtplan__framework *r,
				 unsigned q, int precision)
{
	bool fp8 = precision == DTPLAN_PRECISION_FP8;

	const struct dtplan__framework *counted = dtplan__framework(s->framework);

	if ((q & DTPLAN__RUNS_FP8) && !r->fp8_option && fp8)
		return "its Float8 converter is set in the model's configuration, not by an option";
	/* Transformer Engine's MXFP8BlockScaling and NVFP4BlockScaling recipes,
	 * which Megatron-LM sets by --fp8-recipe mxfp8 and --fp4-recipe nvfp4
	 * (megatron/training/arguments.py) and Megatron-Bridge by its
	 * bf16_with_mxfp8_mixed and bf16_with_nvfp4_mixed recipes
	 * (src/megatron/bridge/training/mixed_precision.py) */
	if ((q & DTPLAN__RUNS_FORMAT) &&
	    (precision == DTPLAN_PRECISION_MXFP8 || precision == DTPLAN_PRECISION_NVFP4) &&
	    !(r->formats & (1u << precision)))
		return precision == DTPLAN_PRECISION_MXFP8
			       ? "its launcher has no MXFP8 block-scaling recipe"
			       : "its launcher has no NVFP4 block-scaling recipe";
	if ((q & DTPLAN__RUNS_MOMENTS) && !r->bf16_moments && s->moments == DTPLAN_MOMENTS_BF16)
		return "its Adam keeps fp32 moments";
	if ((q & DTPLAN__RUNS_RECOMPUTE) && s->recompute == DTPLAN_RECOMPUTE_FINE &&
	    !(r->recompute & (1u << DTPLAN_RECOMPUTE_FINE)))
		return "it has no recompute modules (its selective recomputation is per-op)";
	/* selective under another framework's counting is Megatron-LM's */
	if ((q & DTPLAN__RUNS_RECOMPUTE) && s->recompute == DTPLAN_RECOMPUTE_SELECTIVE &&
	    r->selective_per_op && (counted == NULL || !counted->selective_per_op))
		return "its selective recomputation is per-op (it recomputes every second matrix "
		       "multiply), not Megatron-LM's";
	return NULL;
}

const char *dtplan__split_runs(const struct dtplan__split *s,
			       const struct dtplan__framework *runner, unsigned clauses, int order,
			       int precision)
{
	const char *why;

	if (s == NULL || runner == NULL)
		return NULL;
	why = runs_parallel(s, runner, clauses, order);
	return why != NULL ? why : runs_numerics(s, runner, clauses, precision);
}
