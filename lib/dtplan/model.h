/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/model.h: models and the GPU catalog.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_MODEL_H
#define DTPLAN_MODEL_H

#include "dtplan/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Models (lib/model/model.c)
 * ---------------------------------------------------------------------- */

enum dtplan_mlp {
	DTPLAN_MLP_GELU = 0, /* two matrices: h -> ffn -> h */
	DTPLAN_MLP_SWIGLU,   /* three matrices: gate, up, down */
};

struct dtplan_model {
	char name[64];   /* preset name, config path basename or the spec */
	char family[32]; /* config.json's model_type ("llama", "qwen3_moe"); "" otherwise */
	int layers;      /* transformer blocks */
	int hidden;      /* model width h */
	int heads;       /* attention heads a */
	int kv_heads;    /* key/value heads (GQA); == heads without GQA */
	int head_dim;    /* width of one attention head; 0: hidden / heads (Qwen3 and
			* Gemma set their own: config.json's head_dim) */
	int ffn;         /* MLP inner width */
	int vocab;       /* vocabulary size V */
	int max_seq;     /* max position embeddings (0: unknown) */
	int train_seq;   /* the sequence length it was pre-trained at, as its
			* paper or card says (presets; 0: unknown) */
	enum dtplan_mlp mlp;
	bool tied_embeddings; /* output head shares the input embedding */
	bool dropout;         /* trained with hidden and attention dropout: its masks are kept */
	double params;        /* parameter count used by the ledger: every expert */
	bool params_given;    /* params came from a bare size, dims derived */
	/* Mixture of experts (doc/internals/cost-model.md, "Experts"); experts 0:
	 * dense.  Layer i (0-based) is an MoE layer when i >= first_dense and
	 * (i + 1) % moe_every == 0 (Qwen2-MoE's decoder_sparse_step, moe_every=),
	 * or i % moe_every == 0 when moe_every_from_zero (DeepSeek's
	 * moe_layer_freq); its MLP is `experts` routed experts of width
	 * moe_ffn, top_k of them per token, and shared_experts experts of width
	 * moe_ffn that every token takes.  Other layers have the dense MLP of
	 * width ffn. */
	int experts;
	int top_k;
	int moe_ffn;
	int shared_experts;
	int moe_every;            /* 0 or 1: every layer */
	int first_dense;          /* leading dense layers (DeepSeek's first_k_dense_replace) */
	bool moe_every_from_zero; /* i % moe_every == 0, not (i + 1) % moe_every == 0 */
	/* Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank 0: none.
	 * q_lora_rank 0: queries projected from h directly. */
	int q_lora_rank;
	int kv_lora_rank;
	int qk_nope_dim;      /* per head */
	int qk_rope_dim;      /* per head */
	int v_head_dim;       /* per head */
	double active_params; /* parameters one token passes through (== params when dense) */
};

/*
 * Parses a model spec into m:
 *   - a preset name ("llama3-70b"; case-insensitive),
 *   - a path to a HuggingFace config.json (a spec containing '/' or ending
 *     in ".json"),
 *   - explicit dimensions "layers=96,hidden=12288,heads=96[,kv_heads=..]
 *     [,ffn=..][,vocab=..][,mlp=gelu|swiglu][,seq=..]",
 *   - a bare size ("7B", "70b", "1.5T") that sets params exactly and derives
 *     dimensions by the rule in dtplan_model_from_size().
 * Returns DTPLAN_ERR_NOT_FOUND for an unknown preset (the message lists the
 * presets), DTPLAN_ERR_PARSE/INVAL for a malformed spec or config.json,
 * DTPLAN_ERR_RANGE for a signed size ("-7B": sizes are positive) or one out
 * of dtplan_model_from_size()'s bounds.
 */
enum dtplan_err dtplan_model_parse(const char *spec, struct dtplan_model *m,
				   struct dtplan_error *err);

/* Reads a HuggingFace config.json file. */
enum dtplan_err dtplan_model_from_hf_config(const char *path, struct dtplan_model *m,
					    struct dtplan_error *err);

/* Bounds of a model given by its size (DTPLAN_ERR_RANGE outside). */
#define DTPLAN_MODEL_MIN_PARAMS 1e6
#define DTPLAN_MODEL_MAX_PARAMS 1e15

/*
 * Derives GPT-style dimensions from a parameter count: h = cbrt(128 N / 12)
 * rounded to a multiple of 128, layers = h / 128, heads = h / 128, ffn = 4h,
 * vocab 50257; params is set to N exactly (params_given = true).  N must be
 * finite and positive (DTPLAN_ERR_INVAL), and from DTPLAN_MODEL_MIN_PARAMS
 * to DTPLAN_MODEL_MAX_PARAMS (DTPLAN_ERR_RANGE).
 */
enum dtplan_err dtplan_model_from_size(double params, struct dtplan_model *m,
				       struct dtplan_error *err);

/* Parameter count computed from the dimensions (embedding, output head when
 * untied, attention with GQA or MLA, MLP or experts and router, norms). */
double dtplan_model_param_count(const struct dtplan_model *m);

/* Parameters a token passes through: the same count with top_k routed
 * experts instead of all of them (== dtplan_model_param_count() when dense). */
double dtplan_model_active_param_count(const struct dtplan_model *m);

/* Layers whose MLP is a mixture of experts (0 for a dense model). */
int dtplan_model_moe_layers(const struct dtplan_model *m);

/* The preset table: *n receives its length.  Static storage. */
const struct dtplan_model *dtplan_model_presets(size_t *n);

/* ------------------------------------------------------------------------
 * The split (lib/model/rules.c decides which ones a model and a framework
 * allow)
 * ---------------------------------------------------------------------- */

/*
 * How a job divides its GPUs and its training state: tensor, pipeline,
 * data, context and expert parallelism, interleaved stages per PP stage,
 * the ZeRO stage, the micro-batch, the recomputation (enum
 * dtplan_recompute) and ZeRO-Offload (1 yes, 0 no).  Where a split is not
 * chosen yet (a request's pins, the rules' partial splits) 0 means "not
 * known" for a degree and the micro-batch, -1 for zero, recompute and
 * offload.  GPUs: tp x cp x pp x dp.  The experts' layers lay the same
 * ranks of each pipeline stage out as etp x ep x edp (expert tensor,
 * expert and expert data parallelism: Megatron-Core's MoE parallel
 * folding), so etp x ep divides tp x cp x dp; etp 0 in a chosen split
 * reads as tp (Megatron-LM's default for --expert-tensor-parallel-size).
 *
 * One declaration, embedded by DTPLAN_SPLIT_EMBED in every struct that
 * names a split (the request, the candidate, the ledger's input, the
 * record, the rules' input): its members read as the struct's own (c->tp)
 * and the whole split as c->split, so a split is copied whole, never member
 * by member (the C11 anonymous union that Linux's struct_group() makes).
 */
#define DTPLAN_SPLIT_MEMBERS                                                                       \
	int tp, pp, dp, cp, ep, vp, etp;                                                           \
	int zero;                                                                                  \
	int micro_batch;                                                                           \
	int recompute;                                                                             \
	int offload;

struct dtplan_split {
	DTPLAN_SPLIT_MEMBERS
};

#define DTPLAN_SPLIT_EMBED                                                                         \
	union {                                                                                    \
		struct dtplan_split split;                                                         \
		struct {                                                                           \
			DTPLAN_SPLIT_MEMBERS                                                       \
		};                                                                                 \
	}

/*
 * Whether model m can take split s, whatever the GPUs and the framework:
 * TP divides its heads and key/value heads, PP is at most its layers, EP
 * divides its experts, interleaving cuts its layers into whole chunks
 * (degrees of 0: not known, not checked).  The training rules'
 * (lib/model/rules.c) model clauses, for callers outside the planner (dtplan
 * ledger).  DTPLAN_ERR_INVAL with err naming the degree ("tp", ...) in its
 * source.
 */
enum dtplan_err dtplan_split_check_model(const struct dtplan_model *m, const struct dtplan_split *s,
					 struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * GPU catalog (lib/model/gpu.c)
 * ---------------------------------------------------------------------- */

/*
 * NVLink SHARP: the domain's NVSwitches reduce in the switch (NCCL's NVLS
 * algorithm, NCCL 2.17+): third-generation NVSwitch (HGX H100/H200/H800)
 * and Blackwell's NVLink switch (HGX B200/B300, GB200/GB300 NVL72); not
 * A100's second-generation NVSwitch, PCIe parts or AMD's xGMI.  The value
 * names the generation, whose NCCL tuning differs.
 */
enum dtplan_nvls {
	DTPLAN_NVLS_NONE = 0, /* no in-switch reduction, or not known */
	DTPLAN_NVLS_HOPPER,
	DTPLAN_NVLS_BLACKWELL,
};

struct dtplan_gpu {
	char name[32];             /* "h100-sxm" */
	char vendor[16];           /* "nvidia", "amd" */
	double memory_bytes;       /* HBM capacity as the device reports it (nvidia-smi) */
	double peak_bf16_flops;    /* dense bf16 peak, FLOP/s */
	double nvlink_bytes_per_s; /* NVLink/xGMI bandwidth per GPU (GPU to GPU inside a domain) */
	int domain_size;           /* typical NVLink domain: 8 for HGX, 72 for NVL72, 1 for PCIe */
	/* The kernel time model (doc/internals/cost-model.md, "Compute"); 0 where
	 * unknown: a request needs hbm, matmul_efficiency and sms > 0. */
	double hbm_bytes_per_s;   /* memory bandwidth, datasheet */
	double matmul_efficiency; /* best bf16 matmul measured / peak_bf16_flops (MAMF) */
	double peak_fp8_flops;    /* dense fp8 peak, FLOP/s; 0: no fp8 tensor cores */
	double fp8_efficiency;    /* best fp8 matmul measured / peak_fp8_flops */
	int sms;                  /* streaming multiprocessors (compute units) */
	double host_bytes_per_s;  /* host link per direction (PCIe, C2C): ZeRO-Offload */
	/* Calibrated on tests/data/reference-runs.json (lib/model/gpu.c); 0:
	 * the Hopper figures */
	double gemm_sustained;       /* share of the MAMF training GEMMs sustain */
	double attention_efficiency; /* FlashAttention's rate over the MAMF */
	/* Blackwell's block-scaled tensor cores (MXFP8, NVFP4): dense FP4
	 * peak, FLOP/s; 0: none (Hopper has no MX formats) */
	double peak_fp4_flops;
	enum dtplan_nvls nvls; /* in-switch reductions in its NVLink domain */
};

/* Finds a GPU type by name (case-insensitive).  Returns NULL and fills err
 * (listing the known names) when unknown. */
const struct dtplan_gpu *dtplan_gpu_find(const char *name, struct dtplan_error *err);

/*
 * The catalog entry a node inventory's GPU is (lib/model/gpu.c): by its model
 * string ("NVIDIA H100 80GB HBM3", "GH100 [H200 SXM 141GB]", "AMD INSTINCT
 * MI200 ...") or, when hwloc knew no name, its PCI ids ("10de:2330").
 * memory_bytes (0: unknown) tells A100 40GB from 80GB.  NULL when the model
 * is not in the catalog (a T4, a V100, an H100 PCIe).
 */
const struct dtplan_gpu *dtplan_gpu_match(const char *model, double memory_bytes);

/* The catalog: *n receives its length.  Static storage. */
const struct dtplan_gpu *dtplan_gpu_catalog(size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_MODEL_H */
