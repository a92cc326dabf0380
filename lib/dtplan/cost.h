/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/cost.h: the memory ledger, collectives, the pipeline and the checkpoint interval.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_COST_H
#define DTPLAN_COST_H

#include "dtplan/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Memory ledger (lib/cost/ledger.c)
 * ---------------------------------------------------------------------- */

/*
 * What the backward pass recomputes instead of keeping, from least to most
 * memory saved: nothing; the attention core (Megatron-LM's selective
 * granularity, Korthikanti et al.); the attention core and the outputs of
 * the cheap operators a matrix multiply is fed from again, the layer norms,
 * latent attention's up-projections and an MoE expert's activation function
 * (Megatron-Core's --recompute-modules core_attn layernorm mla_up_proj
 * moe_act, the recipe of DeepSeek-V3's report, arXiv 2412.19437, section
 * 3.2.3; Megatron-LM only); every layer from its input (full).
 */
enum dtplan_recompute {
	DTPLAN_RECOMPUTE_NONE = 0,
	DTPLAN_RECOMPUTE_SELECTIVE,
	DTPLAN_RECOMPUTE_FINE,
	DTPLAN_RECOMPUTE_FULL,
};

/* "none", "selective", "fine", "full" <-> enum.  Parse returns
 * DTPLAN_ERR_INVAL. */
const char *dtplan_recompute_name(enum dtplan_recompute r);
enum dtplan_err dtplan_recompute_parse(const char *text, enum dtplan_recompute *out,
				       struct dtplan_error *err);

/*
 * How the framework holds a parameter's training state (bytes per parameter):
 * DeepSpeed (the ZeRO paper's count): bf16 weights 2, bf16 gradients 2, fp32
 * master 4, Adam 8; Megatron-LM: bf16 weights 2, fp32 main gradients 4 (not
 * sharded by its distributed optimizer, sharded by Megatron-FSDP as ZeRO-2/3),
 * fp32 master 4, Adam 8; torchtitan (FSDP2 with MixedPrecisionPolicy bf16
 * parameters, fp32 reduction): fp32 sharded parameters 4 (the master), fp32
 * gradients 4, Adam 8, the bf16 copy of the layers being computed.
 * doc/internals/cost-model.md, "Memory".
 */
enum dtplan_framework {
	DTPLAN_FRAMEWORK_DEEPSPEED = 0,
	DTPLAN_FRAMEWORK_MEGATRON,
	DTPLAN_FRAMEWORK_TORCHTITAN,
};

/*
 * The attention kernel.  Unfused (Megatron-LM before FlashAttention) stores
 * the a s^2 scores per layer and moves them through memory; flash (Dao et
 * al., FlashAttention) stores neither, so selective recomputation saves
 * nothing with it.
 */
enum dtplan_attention {
	DTPLAN_ATTENTION_UNFUSED = 0,
	DTPLAN_ATTENTION_FLASH,
};

/*
 * The precision of the matrix multiplies (the rest stays bf16).  mxfp8 and
 * nvfp4 are Blackwell's block-scaled formats, Transformer Engine's
 * MXFP8BlockScaling (fp8 values, one E8M0 scale per 32) and
 * NVFP4BlockScaling (fp4 E2M1 values, one E4M3 scale per 16 and one fp32
 * per tensor) recipes: GEMMs at the fp8 and fp4 dense rates.
 */
enum dtplan_precision {
	DTPLAN_PRECISION_BF16 = 0,
	DTPLAN_PRECISION_FP8,
	DTPLAN_PRECISION_MXFP8,
	DTPLAN_PRECISION_NVFP4,
};

/*
 * The pipeline schedule: 1F1B (Megatron-LM's, interleaved with vp > 1), or
 * DeepSeek's DualPipe (arXiv 2412.19437 section 3.2.1,
 * github.com/deepseek-ai/DualPipe): micro-batches enter from both ends of
 * the pipeline, so each GPU holds two stages' parameters (its own and the
 * mirrored one, PP - 1 - i) and PP + 1 micro-batches of activations, idles
 * (PP/2 - 1)(F&B + B - 3W) instead of (PP - 1)(F + B), and hides the
 * all-to-all of one micro-batch behind another's kernels throughout.  It
 * needs an even PP and at least 2 PP micro-batches.
 */
enum dtplan_schedule {
	DTPLAN_SCHEDULE_1F1B = 0,
	DTPLAN_SCHEDULE_DUALPIPE,
};

/* "deepspeed"/"megatron"/"torchtitan", "unfused"/"flash", "bf16"/"fp8"/"mxfp8"/"nvfp4" <-> enums (static
 * strings, "unknown" out of range).  Parse: case-insensitive,
 * DTPLAN_ERR_INVAL naming the accepted words. */
const char *dtplan_framework_name(enum dtplan_framework f);
const char *dtplan_attention_name(enum dtplan_attention a);
const char *dtplan_precision_name(enum dtplan_precision p);
enum dtplan_err dtplan_framework_parse(const char *text, int *out, struct dtplan_error *err);
enum dtplan_err dtplan_attention_parse(const char *text, int *out, struct dtplan_error *err);
enum dtplan_err dtplan_precision_parse(const char *text, int *out, struct dtplan_error *err);
/* Adam's moments m and v: fp32, or bf16 (Megatron-Core's precision-aware
 * optimizer, DeepSeek-V3's report section 3.3.3): 4 + 4 or 2 + 2 bytes. */
enum dtplan_moments {
	DTPLAN_MOMENTS_FP32 = 0,
	DTPLAN_MOMENTS_BF16,
};

/* "1f1b"/"dualpipe" <-> enum dtplan_schedule, "fp32"/"bf16" <-> enum
 * dtplan_moments, as the three above. */
const char *dtplan_schedule_name(enum dtplan_schedule s);
enum dtplan_err dtplan_schedule_parse(const char *text, int *out, struct dtplan_error *err);
const char *dtplan_moments_name(enum dtplan_moments m);
enum dtplan_err dtplan_moments_parse(const char *text, int *out, struct dtplan_error *err);

/* The gradients' dtype, held and reduced: the framework's own by default
 * (DeepSpeed's bf16, Megatron-LM's and torchtitan's fp32), or bf16 where the
 * framework can be told (Megatron-LM's --grad-reduce-in-bf16,
 * Megatron-Bridge's ddp.grad_reduce_in_fp32=false): 2 bytes a parameter
 * instead of 4. */
enum dtplan_grads {
	DTPLAN_GRADS_DEFAULT = 0,
	DTPLAN_GRADS_FP32,
	DTPLAN_GRADS_BF16,
};

/* "default"/"fp32"/"bf16" <-> enum dtplan_grads, as the ones above. */
const char *dtplan_grads_name(enum dtplan_grads g);
enum dtplan_err dtplan_grads_parse(const char *text, int *out, struct dtplan_error *err);

struct dtplan_ledger_in {
	const struct dtplan_model *model;
	/* tp, pp, dp >= 1 each; zero 0..3, sharded over dp; micro_batch b;
	 * recompute an enum dtplan_recompute; vp interleaved virtual stages
	 * (0 or 1: none); ep expert parallelism (0 or 1: none) and etp expert
	 * tensor parallelism (0: tp), etp x ep folded over tp x cp x dp; cp context parallelism (0 or 1: none); offload 1:
	 * ZeRO-Offload, master copy and Adam in host memory */
	DTPLAN_SPLIT_EMBED;
	bool no_master_copy;     /* 12 bytes/param instead of 16 */
	bool bf16_moments;       /* Adam's m and v in bf16: 2 + 2 bytes instead of 4 + 4 */
	enum dtplan_grads grads; /* the gradients' dtype (default: the framework's) */
	int seq;                 /* sequence length s (0: no activations) */
	int num_microbatches;    /* m; stage 0 holds min(m, pp) micro-batches */
	bool sequence_parallel;  /* divide the sbh*34 part by tp too (Megatron SP) */
	/* layers per stage when pp > 1 (NULL: dtplan_stage_split_model() of the
	 * model and seq); borrowed */
	const struct dtplan_stage_layers *stages;
	enum dtplan_framework framework; /* bytes per parameter (see the enum) */
	enum dtplan_attention attention; /* flash: no a s^2 scores stored */
	bool fp8;                        /* fp8 matrix multiplies keep their inputs in fp8 */
	/* bytes per element those inputs keep with their scales (mxfp8 1 + 1/32,
	 * nvfp4 0.5 + 1/16); 0: 1 (fp8) */
	double gemm_in_bytes;
	bool dualpipe; /* DualPipe (pp even): two stages per GPU */
};

/*
 * With pp > 1 the ledger is that of the heaviest stage: stage 0 holds the
 * embedding (V h parameters) and min(m, pp) micro-batches in flight, stage i
 * min(m, pp - i), the last stage the output layer (V h, a copy of the
 * embedding when tied) and one micro-batch; a layer holds P_layer = (params -
 * embedding - untied output layer) / layers parameters.  Interleaving v
 * chunks multiplies the activations by 1 + (p - 1) / (p v) (Korthikanti et
 * al.).  The last stage (the only one with pp == 1) also holds one
 * micro-batch of fp32 logits, 4 s b V / t bytes, in activations.  Full
 * recomputation also needs one layer's whole activations while it reruns it;
 * fp8 matrix multiplies keep their inputs (7 of the 34 s b h) at one byte.
 */
struct dtplan_ledger {
	int stage;             /* the heaviest stage (0 with pp == 1) */
	int stage_layers;      /* its transformer layers */
	double params_per_gpu; /* its parameters on one GPU: dense / tp + experts / (etp ep) */
	double expert_params_per_gpu; /* of them, expert parameters (sharded over
				       * tp cp dp / (etp ep)) */
	double weights;               /* bytes per GPU */
	double gradients;
	double optimizer; /* master copy (if any) + Adam m and v */
	double activations;
	double total;
};

/*
 * The busiest GPU of an expert-parallel group receives up to this many times
 * the mean routed tokens: its activations, expert kernels and all-to-all
 * are sized for it.  Switch Transformer's training capacity factor (Fedus
 * et al., arXiv 2101.03961, section 2.2: 1.25 beyond which tokens drop);
 * dropless routers (Megatron-LM's default, DeepSeek-V3) see the same skew
 * as load imbalance.  doc/internals/cost-model.md, "Experts".
 */
#define DTPLAN_MOE_CAPACITY_FACTOR 1.25

/* Most GPUs in one job dtplan plans for (16,777,216). */
#define DTPLAN_MAX_GPUS (1 << 24)

/*
 * Computes the per-GPU memory.  Formulas in DESIGN.md.  DTPLAN_ERR_INVAL for
 * a degree below 1, DTPLAN_ERR_RANGE when tp x pp x dp is more than
 * DTPLAN_MAX_GPUS (computed without overflow).
 */
enum dtplan_err dtplan_ledger_compute(const struct dtplan_ledger_in *in, struct dtplan_ledger *out,
				      struct dtplan_error *err);

/*
 * Splits a job of gpus GPUs into tp x pp x dp: sets *dp = gpus / (tp x pp).
 * DTPLAN_ERR_INVAL for a count below 1 or when tp x pp does not divide gpus;
 * DTPLAN_ERR_RANGE when gpus is more than DTPLAN_MAX_GPUS or tp x pp more
 * than gpus.  The product is computed without overflow.  *dp is unchanged
 * on error.  Messages name the numbers, not the options that gave them.
 */
enum dtplan_err dtplan_ledger_layout(int gpus, int tp, int pp, int *dp, struct dtplan_error *err);

/* Activation bytes of one transformer layer for one micro-batch. */
double dtplan_activation_bytes_per_layer(int seq, int micro_batch, int hidden, int heads, int tp,
					 bool sequence_parallel, enum dtplan_recompute r);

/* ------------------------------------------------------------------------
 * Collectives (lib/cost/comm.c)
 * ---------------------------------------------------------------------- */

enum dtplan_coll {
	DTPLAN_COLL_ALLREDUCE = 0,
	DTPLAN_COLL_ALLGATHER,
	DTPLAN_COLL_REDUCESCATTER,
	DTPLAN_COLL_P2P,
};

enum dtplan_algo {
	DTPLAN_ALGO_RING = 0,
	DTPLAN_ALGO_TREE,
	DTPLAN_ALGO_NVLS, /* NVLink SHARP: reduced in the NVSwitch (enum dtplan_nvls) */
};

const char *dtplan_coll_name(enum dtplan_coll c);
enum dtplan_err dtplan_coll_parse(const char *text, enum dtplan_coll *out,
				  struct dtplan_error *err);
const char *dtplan_algo_name(enum dtplan_algo a);
enum dtplan_err dtplan_algo_parse(const char *text, enum dtplan_algo *out,
				  struct dtplan_error *err);

/*
 * Time of a collective of `bytes` (the buffer size S) over n ranks on links
 * of bandwidth bw (bytes/s) and latency alpha (s).  Ring all-reduce:
 * 2(n-1)/n S/B + 2(n-1) alpha; all-gather/reduce-scatter: (n-1)/n S/B +
 * (n-1) alpha; tree all-reduce: 2 S/B + 2 log2(n) alpha; NVLS all-reduce:
 * (n-1)/n S/B + 2 alpha; p2p: S/B + alpha.  n <= 1 (or S == 0) costs 0.
 * All-gather and reduce-scatter use the ring whatever the algorithm.  Returns NAN for bw <= 0, alpha < 0, negative or
 * non-finite bytes, or an unknown collective or algorithm.
 */
double dtplan_comm_seconds(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n, double bw,
			   double alpha);

/* Bytes each rank sends for that collective (ring all-reduce 2(n-1)/n S,
 * tree all-reduce 2S, NVLS all-reduce (n-1)/n S, p2p S; 0 for n <= 1; NAN
 * for bad arguments). */
double dtplan_comm_bytes_per_rank(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n);

/* ------------------------------------------------------------------------
 * Pipeline (lib/cost/pipeline.c)
 * ---------------------------------------------------------------------- */

struct dtplan_pipeline_in {
	int stages;       /* p >= 1 */
	int microbatches; /* m >= 1 */
	int chunks;       /* v >= 1: interleaved model chunks per stage */
	double forward;   /* seconds of one micro-batch forward on one stage (whole stage) */
	double backward;  /* seconds of one backward */
};

/* One slot of the simulated schedule. */
struct dtplan_pipeline_op {
	int stage;
	int microbatch;
	int chunk;
	bool backward;
	double start, end;
};

struct dtplan_pipeline {
	double makespan;        /* simulated time of one step */
	double ideal;           /* m * (forward + backward) */
	double bubble_fraction; /* (makespan - ideal) / makespan */
	size_t n_ops;
	struct dtplan_pipeline_op *ops; /* owned; ordered by stage then start */
};

/*
 * Simulates a 1F1B schedule (interleaved when chunks > 1; then m must be a
 * multiple of p) driven by dependencies: a forward needs the previous stage's
 * forward, a backward the next stage's backward.  Caller frees *out with
 * dtplan_pipeline_destroy().  On error *out is NULL: DTPLAN_ERR_INVAL for a
 * count below 1, a time not above 0 or m not a multiple of p when
 * interleaved; DTPLAN_ERR_RANGE when 2 m p v exceeds 5e7 operations.
 */
enum dtplan_err dtplan_pipeline_simulate(const struct dtplan_pipeline_in *in,
					 struct dtplan_pipeline **out, struct dtplan_error *err);
void dtplan_pipeline_destroy(struct dtplan_pipeline *p);

/* Closed forms: (p-1)/(m+p-1) for 1F1B; (p-1)/(v m) relative to compute for
 * interleaved.  The first is a fraction of the total time.  NAN when an
 * argument is below 1. */
double dtplan_bubble_fraction(int stages, int microbatches);
double dtplan_bubble_ratio_interleaved(int stages, int microbatches, int chunks);

/*
 * Transformer layers per pipeline stage, laid out as Megatron-LM takes them
 * (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers):
 * the first and the last stage may differ, the stages between them hold
 * equal counts.  With one stage, first holds every layer.
 */
struct dtplan_stage_layers {
	int first;  /* stage 0 */
	int middle; /* each of stages 1 .. p-2; 0 when p < 3 */
	int last;   /* stage p-1; 0 when p == 1 */
};

/*
 * Splits `layers` transformer layers over `stages` stages so that the
 * slowest stage is as fast as it can be, where stage 0 also does the work
 * of first_extra layers (the embedding) and the last stage of last_extra
 * (the output layer and loss), in layer-equivalents.  Every stage gets at
 * least one layer.  Among equally fast splits the most even wins (least
 * sum of squared stage loads), then the one with the lightest first stage
 * (it holds the most micro-batches in flight), then the lightest last.  DTPLAN_ERR_INVAL when stages < 1, stages > layers,
 * or an extra is negative or not finite; *out is zeroed then.
 */
enum dtplan_err dtplan_stage_split(int layers, int stages, double first_extra, double last_extra,
				   struct dtplan_stage_layers *out, struct dtplan_error *err);

/* Layers of stage i (0-based) of a split over `stages` stages; 0 out of range. */
int dtplan_stage_layers_at(const struct dtplan_stage_layers *s, int stages, int i);

/*
 * The model's work per stage in layer-equivalents: *first_extra for the
 * embedding (no matrix multiply: 0) and *last_extra for the output layer,
 * 2hV FLOPs per token against a layer's 2 P_layer + 4sh (seq s).  Feed them
 * to dtplan_stage_split().
 */
void dtplan_stage_extras(const struct dtplan_model *m, int seq, double *first_extra,
			 double *last_extra);

/* "l0,l1,...,l(p-1)": each stage's layers.  Caller frees; NULL when out of memory. */
char *dtplan_stage_layers_format(const struct dtplan_stage_layers *s, int stages);

/* The split dtplan plans with: dtplan_stage_split() with dtplan_stage_extras(). */
enum dtplan_err dtplan_stage_split_model(const struct dtplan_model *m, int seq, int stages,
					 struct dtplan_stage_layers *out, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Checkpoint interval (lib/cost/ckpt.c)
 * ---------------------------------------------------------------------- */

/* Llama 3: 419 interruptions in 54 days on 16,384 GPUs: 16384*54*24/419. */
#define DTPLAN_DEFAULT_MTBF_GPU_HOURS (16384.0 * 54.0 * 24.0 / 419.0)

struct dtplan_ckpt_in {
	int gpus;
	double mtbf_gpu_hours;  /* per-GPU MTBF */
	double write_seconds;   /* delta: time to write one checkpoint */
	double restart_seconds; /* R */
	double step_seconds;    /* 0: unknown */
};

struct dtplan_ckpt {
	double job_mtbf_seconds;     /* M = mtbf_gpu_hours * 3600 / gpus */
	double young_seconds;        /* sqrt(2 delta M) */
	double daly_seconds;         /* Daly 2006, = M when delta >= 2M */
	double availability_seconds; /* availability-optimal: delta + sqrt(2 (M + R) delta +
				      * delta^2) (arXiv 2410.18124) */
	double interval_seconds;     /* the chosen interval (Daly) */
	double waste_fraction;       /* delta/tau + (tau/2 + R)/M */
	double interval_steps;       /* floor(interval / step), >= 1; 0 when step unknown */
};

enum dtplan_err dtplan_ckpt_compute(const struct dtplan_ckpt_in *in, struct dtplan_ckpt *out,
				    struct dtplan_error *err);

/* Where a per-GPU MTBF came from, for the plan: "Llama 3's, the default"
 * for DTPLAN_DEFAULT_MTBF_GPU_HOURS, else "the site's MtbfGpuHours="
 * (a static string). */
const char *dtplan_mtbf_source(double mtbf_gpu_hours);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_COST_H */
