/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/model.h: a model's parameters by where a pipeline holds them, and
 * the training rules: which splits a model and a framework allow.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by lib/ files of this area and of the areas above it
 * (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_MODEL_MODEL_H
#define DTPLAN_MODEL_MODEL_H

#include "dtplan.h"
#include "base/base.h"

/*
 * A model's parameters by where a pipeline holds them (lib/model/model.c):
 * per_layer = (params - embedding - untied output layer) / layers, embedding
 * V h on stage 0, head V h on the last stage when pp > 1 (a copy of the
 * embedding when tied), head_flops_params V h the output layer's matrix.
 * Without a vocabulary (or when the embeddings would exceed params) all is
 * per_layer and the rest is 0.
 */
struct dtplan__model_parts {
	double per_layer;
	double active_per_layer; /* what one token passes through (== per_layer when dense) */
	double embedding;
	double head;
	double head_flops_params;
};

void dtplan__model_parts(const struct dtplan_model *m, struct dtplan__model_parts *out);

/* Parameters of the attention's projections of one layer (GQA or MLA). */
double dtplan__model_attn_params(const struct dtplan_model *m);

/* The width d of one attention head: head_dim where the model sets it, else
 * hidden / heads.  The queries are heads x d wide, the keys and values
 * kv_heads x d each, the output projection takes heads x d back to hidden. */
double dtplan__model_head_dim(const struct dtplan_model *m);
/* The queries' width, heads x d, and the keys' (the values' the same),
 * kv_heads x d (kv_heads: heads where the model does not say). */
double dtplan__model_q_dim(const struct dtplan_model *m);
double dtplan__model_kv_dim(const struct dtplan_model *m);

/* The GPU's calibrated shares (lib/model/gpu.c): its own, or Hopper's where
 * the entry has none. */
double dtplan__gpu_gemm_sustained(const struct dtplan_gpu *g);
double dtplan__gpu_attention_efficiency(const struct dtplan_gpu *g);

/* MoE layers among layers [first, first + n) (O(1)). */
int dtplan__model_moe_in(const struct dtplan_model *m, int first, int n);

/*
 * Parameters of layers [first, first + n): *expert the routed experts' (EP
 * divides them), *dense the rest (attention, norms, dense MLPs, shared
 * experts, routers).  A model given by its size: n per_layer, no experts.
 */
void dtplan__model_layer_range(const struct dtplan_model *m, int first, int n, double *dense,
			       double *expert);

/* ------------------------------------------------------------------------
 * The frameworks (lib/model/framework.c): one row per enum dtplan_framework,
 * its names and the traits the rules, the ledger, the search, the step and
 * the hand-offs read (doc/internals/new-framework.md).
 * ---------------------------------------------------------------------- */

/* The hand-offs of lib/launch/ that say a framework's plans. */
enum {
	DTPLAN__HANDOFF_MEGATRON = 1u << 0,        /* megatron.c: Megatron-LM arguments */
	DTPLAN__HANDOFF_NEMO = 1u << 1,            /* nemo.c: NeMo 1.x overrides */
	DTPLAN__HANDOFF_MEGATRON_BRIDGE = 1u << 2, /* megatron_bridge.c */
	DTPLAN__HANDOFF_DEEPSPEED = 1u << 3,       /* deepspeed.c: the configuration */
	DTPLAN__HANDOFF_TORCHTITAN = 1u << 4,      /* torchtitan.c: its options */
};

/* The clauses of dtplan__split_runs() a launcher answers (lib/model/rules.c
 * checks them in one order, doc/internals/new-framework.md lists it). */
enum {
	DTPLAN__RUNS_ORDER = 1u << 0,       /* the rank order among its orders */
	DTPLAN__RUNS_ZERO = 1u << 1,        /* the ZeRO stage among its stages */
	DTPLAN__RUNS_SHARD_PP = 1u << 2,    /* ZeRO-2/3 with PP > 1 */
	DTPLAN__RUNS_CP_PP = 1u << 3,       /* CP with PP > 1 */
	DTPLAN__RUNS_MOE_ZERO3 = 1u << 4,   /* experts with ZeRO-3 */
	DTPLAN__RUNS_OFFLOAD = 1u << 5,     /* the optimizer alone offloaded */
	DTPLAN__RUNS_EP = 1u << 6,          /* EP beside TP, EP over its sharded ranks */
	DTPLAN__RUNS_DUALPIPE = 1u << 7,    /* the DualPipe schedule */
	DTPLAN__RUNS_CP_ZERO = 1u << 8,     /* CP with ZeRO-0 */
	DTPLAN__RUNS_FP8 = 1u << 9,         /* fp8 set by an option */
	DTPLAN__RUNS_MOMENTS = 1u << 10,    /* bf16 moments */
	DTPLAN__RUNS_RECOMPUTE = 1u << 11,  /* the recomputation as the plan counted it */
	DTPLAN__RUNS_FSDP_ORDER = 1u << 12, /* Megatron-FSDP in the plan's rank order */
	DTPLAN__RUNS_FORMAT = 1u << 13,     /* a block-scaled format (mxfp8, nvfp4) its
					     * launcher has a recipe for */
};

/* A framework: a row of the table, static, never freed. */
struct dtplan__framework {
	const char *name;           /* framework= and dtplan_framework_name() */
	const char *const *aliases; /* other words framework= takes (NULL-ended, or NULL) */
	const char *title;          /* its name in messages: "DeepSpeed" */
	double grad_bytes;          /* gradient bytes held per parameter */
	double grad_wire_bytes;     /* gradient bytes sent per parameter by a reduction */
	/* its DP/ZeRO buckets (lib/cost/comm.c dtplan__dp_buckets()), in
	 * parameters: reduction buckets of max(bucket, bucket_per_dp x DP);
	 * ZeRO-1/2's gathers of gather_bucket (0: one), ZeRO-3's of
	 * z3_gather_bucket, or, gathers_as_reduces, the reductions' buckets;
	 * or, bucket_per_block, one of each per transformer block */
	double bucket, bucket_per_dp, gather_bucket, z3_gather_bucket;
	bool gathers_as_reduces;
	bool bucket_per_block;
	bool gather_after_step;  /* ZeRO-1/2 gather the updated weights in the
				 * optimizer's step, behind no compute */
	bool grads_once_with_pp; /* ZeRO-2/3 gradients reduced once per step with PP > 1 */
	bool selective_per_op;   /* its selective recomputation is a per-op policy */
	unsigned recompute;      /* 1u << enum dtplan_recompute it runs */
	bool bf16_moments;       /* Adam's moments in bf16 (moments=bf16) */
	bool grads_either;       /* gradients in fp32 or bf16 (grads=), as told */
	unsigned zero;           /* 1u << ZeRO stage it runs */
	const char *zero_note;   /* what it runs instead of the others, for messages */
	int zero_max;            /* the highest stage the search tries unasked */
	bool shard_with_pp;      /* ZeRO-2/3 with PP > 1 */
	bool cp_with_pp;         /* CP with PP > 1 (its own launcher) */
	bool moe_zero3;          /* experts with ZeRO-3 */
	bool offload;            /* the optimizer alone on the CPU (ZeRO-Offload) */
	bool ep_with_tp;         /* EP beside TP > 1, experts sharded by TP */
	bool fold;               /* Megatron-Core's MoE parallel folding: any ETP, EP
				  * from TP x CP x DP; else ETP is TP (or 1 with EP
				  * under ep_shard) */
	bool ep_shard;           /* EP divides its sharded ranks (dp_shard x cp x tp) */
	bool dualpipe;           /* the DualPipe schedule */
	bool cp_replicated;      /* CP with ZeRO-0 */
	unsigned orders;         /* 1u << enum dtplan_rank_order it lays ranks out in */
	unsigned fsdp_orders;    /* those ZeRO-2/3 runs in, where a launcher checks */
	bool fp8_option;         /* fp8 set by an option of its launcher */
	unsigned formats;        /* 1u << enum dtplan_precision of the block-scaled
				     * formats its launcher sets (mxfp8, nvfp4) */
	unsigned handoffs;       /* DTPLAN__HANDOFF_* saying its plans */
	unsigned runs;           /* DTPLAN__RUNS_* its own launcher answers */
	unsigned bridge_runs;    /* those Megatron-Bridge answers for its plans */
	const char *why_zero;    /* DTPLAN__RUNS_ZERO's reason */
	const char *why_order;   /* DTPLAN__RUNS_ORDER's reason */
};

/* Framework f's row; NULL out of range. */
const struct dtplan__framework *dtplan__framework(enum dtplan_framework f);
/* The rows: enum values 0 .. count - 1. */
int dtplan__framework_count(void);
/* The framework named text (a name or an alias, case-insensitive); -1 when none. */
int dtplan__framework_find(const char *text);

/* ------------------------------------------------------------------------
 * Training rules (lib/model/rules.c): which splits a model and a framework
 * allow.  The one home of every rule; each caller asks for the ones it
 * needs, with what it knows of the split.
 * ---------------------------------------------------------------------- */

/* A split as far as it is known: 0 where a degree is not known yet, -1 for
 * zero, offload (or auto) and recompute. */
struct dtplan__split {
	const struct dtplan_model *model; /* NULL: the model's rules are skipped */
	enum dtplan_framework framework;
	enum dtplan_attention attention;
	enum dtplan_schedule schedule;
	enum dtplan_moments moments;
	enum dtplan_grads grads;
	int gpus;           /* 0: not known (the submission) */
	int seq;            /* tokens of a sequence; 0: not known */
	DTPLAN_SPLIT_EMBED; /* 0 (-1 for zero, offload, recompute): not known */
};

/* Every degree unknown, the defaults of a request (DeepSpeed, flash
 * attention, 1F1B, fp32 moments) for model m (NULL allowed). */
void dtplan__split_init(struct dtplan__split *s, const struct dtplan_model *m);

/* The rules, in the order they are checked. */
enum {
	DTPLAN__RULE_TP_HEADS = 1u << 0,   /* TP divides the heads and key/value heads */
	DTPLAN__RULE_PP_LAYERS = 1u << 1,  /* PP at most the layers */
	DTPLAN__RULE_EP_EXPERTS = 1u << 2, /* EP on a model with experts, dividing them */
	DTPLAN__RULE_FRAMEWORK = 1u << 3,  /* ZeRO, offload, CP, EP, schedule the framework runs */
	DTPLAN__RULE_VP_PP = 1u << 4,      /* interleaving needs PP >= 2 */
	DTPLAN__RULE_MEGATRON = 1u << 5,   /* fine recomputation and bf16 moments need
					     * Megatron-LM */
	DTPLAN__RULE_DUALPIPE = 1u << 6,   /* DualPipe: an even PP, no interleaving */
	DTPLAN__RULE_OFFLOAD_ZERO = 1u << 7, /* ZeRO-Offload needs ZeRO >= 1 */
	DTPLAN__RULE_CP_FLASH = 1u << 8,     /* CP needs flash attention */
	DTPLAN__RULE_EP_DP = 1u << 9, /* ETP x EP divides TP x CP x DP (folding), or EP CP x DP */
	DTPLAN__RULE_GPUS = 1u << 10, /* TP, TP x PP, EP, TP x CP divide the GPUs */
	DTPLAN__RULE_SEQ = 1u << 11,  /* CP and TP split the sequence as Megatron-LM does */
	DTPLAN__RULE_VP_LAYERS = 1u << 12, /* interleaving cuts the layers into whole chunks */
	DTPLAN__RULE_WHOLE = 1u << 13,     /* every degree >= 1, ZeRO 0-3, a known
					     * recomputation, offload 0 or 1 (a chosen split) */
};

/* What a model can take, whatever the allocation (--dt-model with pins). */
#define DTPLAN__RULES_MODEL                                                                        \
	(DTPLAN__RULE_TP_HEADS | DTPLAN__RULE_PP_LAYERS | DTPLAN__RULE_EP_EXPERTS |                \
	 DTPLAN__RULE_VP_LAYERS)
/* What the framework and schedule run (--dt-train alone). */
#define DTPLAN__RULES_TRAIN                                                                        \
	(DTPLAN__RULE_FRAMEWORK | DTPLAN__RULE_VP_PP | DTPLAN__RULE_MEGATRON |                     \
	 DTPLAN__RULE_DUALPIPE | DTPLAN__RULE_OFFLOAD_ZERO | DTPLAN__RULE_CP_FLASH |               \
	 DTPLAN__RULE_SEQ)
/* What the memory ledger needs for its count to mean a split. */
#define DTPLAN__RULES_LEDGER                                                                       \
	(DTPLAN__RULE_VP_PP | DTPLAN__RULE_DUALPIPE | DTPLAN__RULE_EP_EXPERTS | DTPLAN__RULE_EP_DP)
/* What a chosen split needs for its numbers to describe one, whatever the
 * model: what every reader of a plan (its JSON, a step's ranks, a record)
 * and a candidate given by hand are checked against. */
#define DTPLAN__RULES_WHOLE                                                                        \
	(DTPLAN__RULE_WHOLE | DTPLAN__RULE_VP_PP | DTPLAN__RULE_DUALPIPE |                         \
	 DTPLAN__RULE_OFFLOAD_ZERO | DTPLAN__RULE_EP_DP)
#define DTPLAN__RULES_ALL                                                                          \
	(DTPLAN__RULES_MODEL | DTPLAN__RULES_TRAIN | DTPLAN__RULE_EP_DP | DTPLAN__RULE_GPUS)

/*
 * How vp interleaved chunks of whole layers cut `layers` layers over pp
 * stages (TransformerConfig.__post_init__, megatron/core/transformer/
 * transformer_config.py, d98e8a6, wants vp to divide each stage's layers):
 * DTPLAN__VP_UNITS, stages in units of vp layers; else DTPLAN__VP_ACCOUNT,
 * Megatron-LM's split with the embedding and the loss each counted as one
 * layer (--account-for-embedding-in-pipeline-split and
 * --account-for-loss-in-pipeline-split: layers + 2 in pp equal stages of
 * whole chunks, the first and the last stage one layer short); else
 * DTPLAN__VP_LAYOUT, Megatron-LM's pipeline layout
 * (--pipeline-model-parallel-layout) of pp x vp chunks of
 * k = ceil(layers / (pp vp)) layers but the last, which holds the rest (at
 * least one), as Megatron-Bridge's DeepSeek-V3 recipes lay out 61 layers
 * (_get_deepseek_v3_pipeline_layout(), src/megatron/bridge/recipes/
 * deepseek/h100/deepseek_v3.py, 067f987: 16 chunks of 4, the last of 1);
 * else DTPLAN__VP_NONE.  DTPLAN__VP_UNITS when vp or pp is below 2; the
 * account split needs pp >= 3, the layout pp >= 2 (Megatron-Bridge's GB300
 * DeepSeek-V3 recipes lay 61 layers over PP 2 x vp 8 with it:
 * src/megatron/bridge/perf_recipes/deepseek/gb300/deepseek_v3.py, 067f987,
 * "Et*4|(t*4|)*14tmL").
 */
enum dtplan__vp_split {
	DTPLAN__VP_NONE,
	DTPLAN__VP_UNITS,
	DTPLAN__VP_ACCOUNT,
	DTPLAN__VP_LAYOUT,
};
enum dtplan__vp_split dtplan__vp_split_of(int layers, int pp, int vp);

/*
 * DTPLAN_OK when s breaks none of `rules`; else DTPLAN_ERR_INVAL, the
 * broken rule's key in err->source ("tp", "pp", "ep", "zero", "vp",
 * "schedule", "recompute", "moments", "cp") and why in err->text.  A rule
 * about a degree s leaves unknown is skipped.  O(1); with err NULL nothing
 * is formatted (the search's enumeration).
 */
enum dtplan_err dtplan__split_check(const struct dtplan__split *s, unsigned rules,
				    struct dtplan_error *err);

/*
 * A chosen split as a plan, a step's ranks or a record carries it (ep, cp
 * and vp of 0 read as 1), checked by DTPLAN__RULES_WHOLE under the schedule
 * it was planned with: the one check of every reader.  On failure err
 * (NULL allowed) holds code, source and "where: why".
 */
enum dtplan_err dtplan__split_check_read(const struct dtplan_split *s,
					 enum dtplan_schedule schedule, enum dtplan_err code,
					 const char *source, const char *where,
					 struct dtplan_error *err);

/*
 * Whether a launcher of runner's can run split s as counted under
 * s->framework, with ranks in rank order `order` (enum dtplan_rank_order)
 * and matrix multiplies in `precision` (enum dtplan_precision): the clauses `clauses` (DTPLAN__RUNS_*;
 * runner->runs for its own launcher), answered from runner's row.  NULL
 * when it can; else why, a static string.
 */
const char *dtplan__split_runs(const struct dtplan__split *s,
			       const struct dtplan__framework *runner, unsigned clauses, int order,
			       int precision);

#endif /* DTPLAN_MODEL_MODEL_H */
