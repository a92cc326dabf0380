/*
 * dtplan.h: libdtplan, placement plans for distributed training.
 *
 * libdtplan is pure planning: plain structs in, a plan out.  It includes no
 * Slurm header, touches no hardware, /sys or sockets, and never prints.
 * Errors are returned as enum dtplan_err with detail in a caller-provided
 * struct dtplan_error (NULL allowed).  Log messages go to a sink installed by
 * the host program (dtplan_log_set_sink()).
 *
 * Units: sizes are in bytes, bandwidths in bytes per second, times in
 * seconds, FLOP rates in FLOP/s.  All are doubles.  "GB" is 10^9 bytes.
 *
 * Thread safety: every function is reentrant; the log sink is global and is
 * meant to be installed once at start-up.
 */
#ifndef DTPLAN_H
#define DTPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of this header, for code that builds against more than one
 * (curl's LIBCURL_VERSION_NUM, hwloc's HWLOC_API_VERSION); dtplan_version()
 * is the library's, and a test keeps the two and configure.ac's equal.
 */
#define DTPLAN_VERSION_MAJOR 0
#define DTPLAN_VERSION_MINOR 1
#define DTPLAN_VERSION_PATCH 0
#define DTPLAN_VERSION_NUMBER                                                                      \
	((DTPLAN_VERSION_MAJOR << 16) | (DTPLAN_VERSION_MINOR << 8) | DTPLAN_VERSION_PATCH)

/* ------------------------------------------------------------------------
 * Errors (lib/error.c)
 * ---------------------------------------------------------------------- */

/*
 * Error codes.  Add new codes at the end, just before DTPLAN_ERR__LAST, and
 * never renumber: values are part of the ABI and of the JSON output.
 */
enum dtplan_err {
	DTPLAN_OK = 0,
	DTPLAN_ERR_NOMEM,       /* out of memory */
	DTPLAN_ERR_INVAL,       /* a value is invalid (bad flag value, zero count) */
	DTPLAN_ERR_PARSE,       /* text does not parse (unit, config line, JSON, XML) */
	DTPLAN_ERR_IO,          /* a file cannot be read or written */
	DTPLAN_ERR_NOT_FOUND,   /* unknown name (model preset, GPU type, switch) */
	DTPLAN_ERR_RANGE,       /* a number is out of its allowed range */
	DTPLAN_ERR_NO_FIT,      /* no configuration fits the request */
	DTPLAN_ERR_TIMEOUT,     /* an external wait ran out of time */
	DTPLAN_ERR_UNSUPPORTED, /* valid input that this build cannot handle */
	DTPLAN_ERR_POLICY,      /* the allocation breaks the site's rules */
	DTPLAN_ERR__LAST        /* not an error: one past the last code */
};

/*
 * Detail of an error.  Filled by the library when the caller passes a
 * non-NULL pointer; modelled on Jansson's json_error_t.
 */
struct dtplan_error {
	enum dtplan_err code;
	char source[256]; /* file name, option name or "" */
	int line;         /* 1-based line in source, 0 when not applicable */
	char text[512];   /* human-readable message, without a trailing newline */
};

/* Returns a static, never-NULL string describing code. */
const char *dtplan_strerror(enum dtplan_err code);

/* Clears err (NULL allowed). */
void dtplan_error_clear(struct dtplan_error *err);

/*
 * Formats err into buf as "source:line: text" (or the parts that are set).
 * Returns buf.
 */
const char *dtplan_error_format(const struct dtplan_error *err, char *buf, size_t size);

/* ------------------------------------------------------------------------
 * Logging (lib/log.c)
 * ---------------------------------------------------------------------- */

enum dtplan_log_level {
	DTPLAN_LOG_ERROR = 0,
	DTPLAN_LOG_WARNING,
	DTPLAN_LOG_INFO,
	DTPLAN_LOG_DEBUG,
};

typedef void (*dtplan_log_sink_fn)(enum dtplan_log_level level, const char *msg, void *arg);

/* Installs the sink (NULL: discard messages).  Call once, before any other use. */
void dtplan_log_set_sink(dtplan_log_sink_fn fn, void *arg);

/* ------------------------------------------------------------------------
 * Units (lib/units.c)
 *
 * Parsers accept a number (decimal or exponent form) and an optional unit,
 * with no space between.  On error they fill err naming the text and what
 * was expected, and leave *out unchanged.  `what` names the value for the
 * message (for example "--bytes"); may be NULL.
 * ---------------------------------------------------------------------- */

/* "14GB", "33.6MB", "14e9", "1GiB", "512KiB", "7B" (bytes).  Decimal units
 * K/M/G/T/P (B optional), binary Ki/Mi/Gi/Ti.  Must be > 0 and finite. */
enum dtplan_err dtplan_parse_bytes(const char *text, const char *what, double *out,
				   struct dtplan_error *err);

/* "900GB/s", "400Gb/s", "25GiB/s", "1e9" (bytes per second).  Lower-case
 * b means bits.  Must be > 0. */
enum dtplan_err dtplan_parse_rate(const char *text, const char *what, double *out,
				  struct dtplan_error *err);

/* "2us", "1.5ms", "60s", "5min", "3h", "2d", "0" (seconds); a bare number is
 * seconds.  Must be >= 0. */
enum dtplan_err dtplan_parse_time(const char *text, const char *what, double *out,
				  struct dtplan_error *err);

/* A whole number in [min, max].  Rejects trailing garbage, signs where min
 * is positive, and overflow. */
enum dtplan_err dtplan_parse_long(const char *text, const char *what, long min, long max, long *out,
				  struct dtplan_error *err);

/* A parameter count: "7B", "70b", "1.5T", "350M", "7e9".  Must be > 0. */
enum dtplan_err dtplan_parse_count(const char *text, const char *what, double *out,
				   struct dtplan_error *err);

/* Formatting for people: "38.50 GB", "900 GB/s", "1.53 ms", "1h 57m".
 * Write into buf and return buf. */
const char *dtplan_format_bytes(double bytes, char *buf, size_t size);
const char *dtplan_format_rate(double bytes_per_s, char *buf, size_t size);
const char *dtplan_format_time(double seconds, char *buf, size_t size);
const char *dtplan_format_count(double count, char *buf, size_t size); /* "70.55B" */

/* ------------------------------------------------------------------------
 * Reading files (lib/file.c)
 *
 * Every file dtplan reads whole goes through dtplan_file_read().  Limits and
 * messages are in doc/internals/limits.md.
 * ---------------------------------------------------------------------- */

/* Kinds of file, each with its size limit.  Add new kinds before __LAST. */
enum dtplan_file_kind {
	DTPLAN_FILE_SITE = 0,     /* dtplan.conf: 4 MiB */
	DTPLAN_FILE_TOPOLOGY,     /* Slurm's topology.conf: 16 MiB */
	DTPLAN_FILE_HF_CONFIG,    /* HuggingFace config.json: 4 MiB */
	DTPLAN_FILE_NODE_JSON,    /* node inventory JSON (dtplan node --json): 1 MiB */
	DTPLAN_FILE_NODE_XML,     /* hwloc XML named by the user or admin: 32 MiB */
	DTPLAN_FILE_CACHE_XML,    /* hwloc XML in the node cache: 32 MiB, never a link */
	DTPLAN_FILE_PLAN,         /* plan JSON read back (DTPLAN_FILE): 64 MiB, never a link */
	DTPLAN_FILE_MEASUREMENTS, /* the prolog's measurement file: 64 MiB, never a link */
	DTPLAN_FILE_FABRIC_CACHE, /* the fabric service's cached answer: 64 MiB, never a link */
	DTPLAN_FILE__LAST         /* not a kind: one past the last */
};

/*
 * Reads the regular file at path whole into *out, NUL-terminated (caller
 * frees with free()), and its length into *len (NULL allowed).  Never opens
 * anything but a regular file and never reads more than the kind's limit:
 * DTPLAN_ERR_IO for a missing or unreadable file, a directory, FIFO, device
 * or socket (and a symbolic link for the kinds that refuse them), naming
 * what it is, and for a file over the limit; DTPLAN_ERR_PARSE for a NUL
 * byte.  err->source is the path.  *out is NULL on error.
 */
enum dtplan_err dtplan_file_read(const char *path, enum dtplan_file_kind kind, char **out,
				 size_t *len, struct dtplan_error *err);

/* Size limit of a kind of file in bytes; 0 for an unknown kind. */
size_t dtplan_file_limit(enum dtplan_file_kind kind);

/* ------------------------------------------------------------------------
 * Models (lib/model.c)
 * ---------------------------------------------------------------------- */

enum dtplan_mlp {
	DTPLAN_MLP_GELU = 0, /* two matrices: h -> ffn -> h */
	DTPLAN_MLP_SWIGLU,   /* three matrices: gate, up, down */
};

struct dtplan_model {
	char name[64]; /* preset name, config path basename or the spec */
	int layers;    /* transformer blocks */
	int hidden;    /* model width h */
	int heads;     /* attention heads a */
	int kv_heads;  /* key/value heads (GQA); == heads without GQA */
	int ffn;       /* MLP inner width */
	int vocab;     /* vocabulary size V */
	int max_seq;   /* max position embeddings (0: unknown) */
	enum dtplan_mlp mlp;
	bool tied_embeddings; /* output head shares the input embedding */
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
 * GPU catalog (lib/gpu.c)
 * ---------------------------------------------------------------------- */

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
};

/* Finds a GPU type by name (case-insensitive).  Returns NULL and fills err
 * (listing the known names) when unknown. */
const struct dtplan_gpu *dtplan_gpu_find(const char *name, struct dtplan_error *err);

/*
 * The catalog entry a node inventory's GPU is (lib/gpu.c): by its model
 * string ("NVIDIA H100 80GB HBM3", "GH100 [H200 SXM 141GB]", "AMD INSTINCT
 * MI200 ...") or, when hwloc knew no name, its PCI ids ("10de:2330").
 * memory_bytes (0: unknown) tells A100 40GB from 80GB.  NULL when the model
 * is not in the catalog (a T4, a V100, an H100 PCIe).
 */
const struct dtplan_gpu *dtplan_gpu_match(const char *model, double memory_bytes);

/* The catalog: *n receives its length.  Static storage. */
const struct dtplan_gpu *dtplan_gpu_catalog(size_t *n);

/* ------------------------------------------------------------------------
 * Memory ledger (lib/ledger.c)
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
 * sharded by its distributed optimizer), fp32 master 4, Adam 8, and no
 * ZeRO-2/3.  doc/internals/cost-model.md, "Memory".
 */
enum dtplan_framework {
	DTPLAN_FRAMEWORK_DEEPSPEED = 0,
	DTPLAN_FRAMEWORK_MEGATRON,
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

/* The precision of the matrix multiplies (the rest stays bf16). */
enum dtplan_precision {
	DTPLAN_PRECISION_BF16 = 0,
	DTPLAN_PRECISION_FP8,
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

/* "deepspeed"/"megatron", "unfused"/"flash", "bf16"/"fp8" <-> enums (static
 * strings, "unknown" out of range).  Parse: case-insensitive,
 * DTPLAN_ERR_INVAL naming the accepted words. */
const char *dtplan_framework_name(int f);
const char *dtplan_attention_name(int a);
const char *dtplan_precision_name(int p);
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
const char *dtplan_schedule_name(int s);
enum dtplan_err dtplan_schedule_parse(const char *text, int *out, struct dtplan_error *err);
const char *dtplan_moments_name(int m);
enum dtplan_err dtplan_moments_parse(const char *text, int *out, struct dtplan_error *err);

struct dtplan_ledger_in {
	const struct dtplan_model *model;
	int tp, pp, dp;       /* >= 1 each */
	int zero;             /* 0..3, sharded over dp */
	bool no_master_copy;  /* 12 bytes/param instead of 16 */
	bool bf16_moments;    /* Adam's m and v in bf16: 2 + 2 bytes instead of 4 + 4 */
	int seq;              /* sequence length s (0: no activations) */
	int micro_batch;      /* b */
	int num_microbatches; /* m; stage 0 holds min(m, pp) micro-batches */
	enum dtplan_recompute recompute;
	bool sequence_parallel; /* divide the sbh*34 part by tp too (Megatron SP) */
	/* layers per stage when pp > 1 (NULL: dtplan_stage_split_model() of the
	 * model and seq); borrowed */
	const struct dtplan_stage_layers *stages;
	enum dtplan_framework framework; /* bytes per parameter (see the enum) */
	enum dtplan_attention attention; /* flash: no a s^2 scores stored */
	int chunks;                      /* interleaved virtual stages v (0 or 1: none) */
	bool offload;                    /* ZeRO-Offload: master copy and Adam in host memory */
	bool fp8;                        /* fp8 matrix multiplies keep their inputs in fp8 */
	int ep;                          /* expert parallelism (0 or 1: none); divides dp */
	int cp;                          /* context parallelism (0 or 1: none) */
	bool dualpipe;                   /* DualPipe (pp even): two stages per GPU */
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
	double params_per_gpu; /* its parameters on one GPU: dense / tp + experts / (tp ep) */
	double expert_params_per_gpu; /* of them, expert parameters (sharded over dp cp / ep) */
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
 * Collectives (lib/comm.c)
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
 * (n-1) alpha; tree all-reduce: 2 S/B + 2 log2(n) alpha; p2p: S/B + alpha.
 * n <= 1 (or S == 0) costs 0.  All-gather and reduce-scatter use the ring
 * whatever the algorithm.  Returns NAN for bw <= 0, alpha < 0, negative or
 * non-finite bytes, or an unknown collective or algorithm.
 */
double dtplan_comm_seconds(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n, double bw,
			   double alpha);

/* Bytes each rank sends for that collective (ring all-reduce 2(n-1)/n S,
 * tree all-reduce 2S, p2p S; 0 for n <= 1; NAN for bad arguments). */
double dtplan_comm_bytes_per_rank(enum dtplan_coll c, enum dtplan_algo a, double bytes, int n);

/* ------------------------------------------------------------------------
 * Pipeline (lib/pipeline.c)
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
 * Checkpoint interval (lib/ckpt.c)
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
	double job_mtbf_seconds; /* M = mtbf_gpu_hours * 3600 / gpus */
	double young_seconds;    /* sqrt(2 delta M) */
	double daly_seconds;     /* Daly 2006, = M when delta >= 2M */
	double interval_seconds; /* the chosen interval (Daly) */
	double waste_fraction;   /* delta/tau + (tau/2 + R)/M */
	double interval_steps;   /* floor(interval / step), >= 1; 0 when step unknown */
};

enum dtplan_err dtplan_ckpt_compute(const struct dtplan_ckpt_in *in, struct dtplan_ckpt *out,
				    struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Node inventory (filled by probes/, read by lib/)
 * ---------------------------------------------------------------------- */

enum dtplan_nic_kind {
	DTPLAN_NIC_UNKNOWN = 0,
	DTPLAN_NIC_INFINIBAND,
	DTPLAN_NIC_ROCE,
	DTPLAN_NIC_ETHERNET,
	DTPLAN_NIC_EFA,
	DTPLAN_NIC_SLINGSHOT,
	DTPLAN_NIC_OMNIPATH,
};

const char *dtplan_nic_kind_name(enum dtplan_nic_kind k);

struct dtplan_node_gpu {
	char vendor[16];     /* "nvidia", "amd", "intel" */
	char model[64];      /* marketing name when known, else "10de:2330" */
	double memory_bytes; /* memory hwloc reports (CUDA, ROCm SMI), 0 unknown */
	char pci_bus_id[16]; /* "0000:18:00.0" */
	char os_name[32];    /* "nvml0", "cuda0", "rsmi0", "card1" or "" */
	int numa;            /* NUMA node os index, -1 unknown */
	int domain;          /* index into dtplan_node.domains */
	int nic;             /* index into dtplan_node.nics of the nearest NIC, -1 none */
};

struct dtplan_node_nic {
	char name[32]; /* "mlx5_0", "hfi1_0", "cxi0", "eth0" */
	enum dtplan_nic_kind kind;
	char pci_bus_id[16];
	int numa;
};

struct dtplan_node_domain {
	int n_gpus;
	int gpus[64];                 /* indexes into dtplan_node.gpus */
	double bandwidth_bytes_per_s; /* per-GPU NVLink/xGMI bandwidth, 0 for a lone GPU */
	char fabric_id[64];           /* multi-node domain id (NVML cluster UUID/clique) or "" */
};

#define DTPLAN_NODE_MAX_GPUS 64
#define DTPLAN_NODE_MAX_NICS 32

struct dtplan_node {
	char hostname[64];
	int n_gpus;
	struct dtplan_node_gpu gpus[DTPLAN_NODE_MAX_GPUS];
	int n_nics;
	struct dtplan_node_nic nics[DTPLAN_NODE_MAX_NICS];
	int n_domains;
	struct dtplan_node_domain domains[DTPLAN_NODE_MAX_GPUS];
	int cores;
	int numa_nodes;
	char source[16]; /* "live", "xml", "cache", "assumed", "site" */
	char note[256];  /* e.g. "I/O devices were not exported" */
};

/* ------------------------------------------------------------------------
 * Cluster topology: switch tree and site file (lib/topology.c, lib/config.c)
 * ---------------------------------------------------------------------- */

struct dtplan_switch {
	char name[64];
	int parent;                /* index of the parent switch, -1 for a root */
	int level;                 /* 0 for leaves (switches with nodes) */
	double link_speed;         /* bytes/s from topology.conf LinkSpeed, 0 unknown */
	double oversubscription;   /* downlink/uplink capacity, 1.0 = non-blocking */
	double uplink_bytes_per_s; /* capacity of the uplink to the parent, 0 unknown */
};

struct dtplan_topology_index; /* private to lib/topology.c */

struct dtplan_topology {
	size_t n_switches;
	struct dtplan_switch *switches; /* owned */
	size_t n_nodes;
	char (*node_names)[64]; /* owned; every node named under a leaf */
	int *node_leaf;         /* owned; index of each node's leaf switch */
	/* Name index built by the parsers (owned).  NULL in a tree built by hand:
	 * lookups then scan the arrays. */
	struct dtplan_topology_index *index;
	/* topology/block: the leaves are blocks (an NVL72 rack each, say), each a
	 * root, in the file's order; block_size is the base block's node count
	 * (BlockSizes' first, else the first block's).  false and 0 for a tree. */
	bool blocks;
	size_t block_size;
};

/* Most names one hostlist expression in topology.conf or dtplan.conf may name. */
#define DTPLAN_HOSTLIST_MAX 1048576

/*
 * Parses a topology file in any of the forms Slurm reads
 * (lib/topology_file.c picks by content, and a path ending .yaml or .yml is
 * YAML):
 *   - topology.conf for topology/tree: SwitchName=, Switches=, Nodes=,
 *     LinkSpeed=, hostlist expressions;
 *   - topology.conf for topology/block: BlockName= Nodes= lines and an
 *     optional BlockSizes=; blocks become leaves (t->blocks);
 *   - topology.yaml (Slurm 25.05): a list of topologies, the first with
 *     cluster_default: true (else the first) read, in its tree: or block:
 *     form (flat: gives a topology without switches).  A YAML subset:
 *     block mappings and sequences, [a, b] lists, plain and quoted scalars;
 *     anchors, tags, multi-line scalars and {} maps are refused by name.
 * Caller frees with dtplan_topology_destroy().  Errors name the file and
 * line.
 */
enum dtplan_err dtplan_topology_parse_file(const char *path, struct dtplan_topology **out,
					   struct dtplan_error *err);
enum dtplan_err dtplan_topology_parse_string(const char *text, const char *source_name,
					     struct dtplan_topology **out,
					     struct dtplan_error *err);

/*
 * Builds a tree from per-node SLURM_TOPOLOGY_ADDR strings
 * ("spine.leaf1.node1"): addrs[i] is node i's address.
 */
enum dtplan_err dtplan_topology_from_addrs(const char *const *addrs, size_t n,
					   struct dtplan_topology **out, struct dtplan_error *err);
void dtplan_topology_destroy(struct dtplan_topology *t);

/* Index of a switch or node by name, -1 when absent (or t/name NULL). */
int dtplan_topology_switch_index(const struct dtplan_topology *t, const char *name);
int dtplan_topology_node_index(const struct dtplan_topology *t, const char *name);

/* Lowest switch above (or equal to) both switches a and b; -1 when they sit
 * in different trees or an index is out of range. */
int dtplan_topology_common_ancestor(const struct dtplan_topology *t, int a, int b);

/*
 * Writes the switch indexes from sw up to its root into out (at most max of
 * them; out may be NULL when max is 0).  Returns the length of the whole
 * path, like snprintf; 0 when sw is out of range.
 */
size_t dtplan_topology_path_up(const struct dtplan_topology *t, int sw, int *out, size_t max);

/* Number of nodes under leaf switch sw (0 for a non-leaf or a bad index). */
size_t dtplan_topology_leaf_size(const struct dtplan_topology *t, int sw);

/*
 * Fewest leaf switches that could hold n_nodes nodes: the largest leaves
 * first.  0 when n_nodes is 0 or the tree has fewer than n_nodes nodes.
 */
size_t dtplan_topology_min_leaves(const struct dtplan_topology *t, size_t n_nodes);

/*
 * Distinct leaf switches the named nodes sit under.  Names the tree lacks
 * are counted in *unknown (NULL allowed) and otherwise ignored.
 */
size_t dtplan_topology_leaves_used(const struct dtplan_topology *t, const char (*names)[64],
				   size_t n, size_t *unknown);

/*
 * Expands a Slurm hostlist ("node[01-16,20],gpu7") into names.  Caller frees
 * *names with free() (one allocation).  At most max_hosts names.
 */
enum dtplan_err dtplan_hostlist_expand(const char *expr, size_t max_hosts, char (**names)[64],
				       size_t *n, struct dtplan_error *err);

/* Sets *match to whether name is one of the names expr expands to, without
 * expanding it.  Errors as dtplan_hostlist_expand() for a bad expression. */
enum dtplan_err dtplan_hostlist_match(const char *expr, const char *name, bool *match,
				      struct dtplan_error *err);

/*
 * Writes names in hostlist form ("node[1-4,7],gpu[01-02]") into buf for
 * messages: names sharing a prefix and trailing-number width are grouped
 * in order of first appearance, their numbers sorted.  Truncates with "..."
 * when buf is too small.  Returns buf.
 */
const char *dtplan_hostlist_compress(const char (*names)[64], size_t n, char *buf, size_t size);

/* Per node set settings from the site file. */
struct dtplan_site_nodeset {
	char nodes[256];        /* hostlist expression */
	char gpu_type[32];      /* catalog name or "" */
	int gpus_per_node;      /* 0: from discovery */
	char nvlink_domain[64]; /* multi-node NVLink domain name or "" */
	int line;               /* line in the site file, 0 when not from a file */
};

struct dtplan_site_switch {
	char name[64];
	double oversubscription;   /* 0: not set */
	double uplink_bytes_per_s; /* 0: not set */
	int line;                  /* line in the site file, 0 when not from a file */
};

/* Site configuration: dtplan.conf plus plugstack arguments. */
struct dtplan_config {
	/* plugin behaviour (plugstack.conf arguments) */
	int default_mode; /* enum dtplan_mode for jobs without --dt-plan */
	int policy;       /* enum dtplan_policy */
	char site_file[256];
	char topology_file[256];
	/* folder that relative site= and topology= arguments name files in ("":
	 * as given); set it with dtplan_config_set_dir() before the arguments */
	char conf_dir[256];
	char cache_dir[256];    /* cached node hwloc XML folder */
	char json_dir[256];     /* "" = job's submit directory */
	double probe_timeout_s; /* per external wait */
	/* measuring the allocation in the prolog (doc/internals/probe.md) */
	char spool_dir[256];      /* root-owned folder of the prolog's measurement files */
	double probe_budget_s;    /* the whole prolog work, at most */
	int probe_ports[2];       /* the probe's listener ports, first and last */
	int probe_fanout;         /* children per node in the fan-in tree */
	char node_xml[256];       /* hwloc XML of each node, %n its name; "" discover live */
	char probe_interface[32]; /* the training fabric's interface; "" the host names' */
	char munge_socket[256];   /* munged's socket; "" libmunge's default */
	int nccl_ib_hca;          /* enum dtplan_nccl_ib_hca: what tasks get */
	/* fabric */
	double net_bytes_per_s; /* node NIC bandwidth per GPU rail */
	double net_latency_s;
	double nvlink_bytes_per_s; /* 0: from the GPU catalog */
	double nvlink_latency_s;
	char gpu_type[32]; /* default GPU type */
	/* reliability and checkpoint */
	double mtbf_gpu_hours;
	double ckpt_write_bytes_per_s;
	double restart_seconds;
	/* warning thresholds */
	double oversub_threshold;      /* warn above this ratio */
	double bubble_threshold;       /* warn above this bubble fraction */
	double exposed_comm_threshold; /* warn above this fraction of the step */
	double slowdown_threshold;     /* warn or refuse an allocation only when one on fewer
				    * leaves would be faster by more than this fraction */
	double mfu_efficiency;         /* achievable fraction of peak for compute */
	/* HTTP (probes/http.c): the fabric service and the plans' collector */
	char fabric_url[256];        /* FabricURL: dtplan.fabric/1 JSON or topology.conf; "" none */
	char fabric_cache[256];      /* file holding the last good answer; "" no cache */
	double fabric_cache_ttl_s;   /* a cached answer younger than this is used without asking */
	double fabric_timeout_s;     /* bound on one fetch of the fabric, connection included */
	char report_url[256];        /* ReportURL: where each plan is POSTed; "" none */
	char report_token_file[256]; /* root-only file holding a bearer token; "" none */
	double report_timeout_s;     /* bound on one report, connection included */
	double http_connect_timeout_s; /* bound on connecting (within the two above) */
	double http_max_bytes;         /* largest answer accepted */
	char http_ca_path[256];        /* CA bundle file or hashed folder; "" libcurl's default */
	size_t n_switches;
	struct dtplan_site_switch *switches; /* owned */
	size_t n_nodesets;
	struct dtplan_site_nodeset *nodesets; /* owned */
};

enum dtplan_mode {
	DTPLAN_MODE_OFF = 0,
	DTPLAN_MODE_AUTO,
	DTPLAN_MODE_STRICT,
};

enum dtplan_policy {
	DTPLAN_POLICY_WARN = 0,
	DTPLAN_POLICY_DENY,
};

/* NCCL_IB_HCA in each task (plugstack nccl_ib_hca=). */
enum dtplan_nccl_ib_hca {
	DTPLAN_NCCL_IB_HCA_OFF = 0, /* not set: NCCL picks its NICs, rails and PXN itself */
	DTPLAN_NCCL_IB_HCA_NODE,    /* the NICs of every rail of the node, "=mlx5_0,mlx5_1" */
};

/* Sets every default (the single place defaults live). */
void dtplan_config_init(struct dtplan_config *c);
/* Frees owned arrays and re-initialises.  NULL allowed. */
void dtplan_config_fini(struct dtplan_config *c);

/* Reads a dtplan.conf site file (Key=Value lines, SwitchName=/NodeName=
 * lines).  Unknown keys and bad values are errors with file and line. */
enum dtplan_err dtplan_config_parse_file(struct dtplan_config *c, const char *path,
					 struct dtplan_error *err);
enum dtplan_err dtplan_config_parse_string(struct dtplan_config *c, const char *text,
					   const char *source_name, struct dtplan_error *err);

/*
 * Sets the folder that relative site= and topology= arguments name files in
 * (doc/spank_dtplan.8, "Configless"): the folder of slurm_conf, Slurm's
 * SLURM_CONF (on a configless node slurmd points it into its configuration
 * cache), else fallback (NULL or "": none, paths stay as given).  A folder
 * longer than the field is not set.  Keeps the rest of c.
 */
void dtplan_config_set_dir(struct dtplan_config *c, const char *slurm_conf, const char *fallback);

/* Applies plugstack.conf arguments (argv of key=value tokens); relative
 * site= and topology= paths are read in c->conf_dir when it is set. */
enum dtplan_err dtplan_config_parse_args(struct dtplan_config *c, int argc, char *const *argv,
					 struct dtplan_error *err);

/* Boolean spellings: yes/no, true/false, on/off, 1/0 (case-insensitive). */
enum dtplan_err dtplan_parse_bool(const char *text, const char *what, bool *out,
				  struct dtplan_error *err);

/* Copies site switch settings (oversubscription, uplink bandwidth) into the
 * tree's switches.  DTPLAN_ERR_NOT_FOUND, naming the site file line, for a
 * switch the tree lacks. */
enum dtplan_err dtplan_config_apply_topology(const struct dtplan_config *c,
					     struct dtplan_topology *t, struct dtplan_error *err);

/* The first NodeName= set of the site file holding hostname, NULL when none.
 * Borrowed from c. */
const struct dtplan_site_nodeset *dtplan_config_nodeset_for(const struct dtplan_config *c,
							    const char *hostname);

/*
 * Describes global setting i (0, 1, ... until it returns false) for
 * summaries: *key receives its site-file name ("" for plugstack-only
 * settings), *arg its plugstack argument name (static strings), value its
 * current value for people ("50.00 GB/s", "warn", "" for an unset path),
 * *is_default whether it equals dtplan_config_init()'s value.  Any output
 * pointer may be NULL.
 */
bool dtplan_config_setting(const struct dtplan_config *c, size_t i, const char **key,
			   const char **arg, char *value, size_t size, bool *is_default);

/* "off", "auto", "strict"; "warn", "deny"; "off", "node" (static strings,
 * "?" when unknown). */
const char *dtplan_mode_name(int mode);
const char *dtplan_policy_name(int policy);
const char *dtplan_nccl_ib_hca_name(int nccl_ib_hca);

/* ------------------------------------------------------------------------
 * Fabric descriptions from a service (lib/fabric_json.c)
 *
 * What a fabric service (FabricURL=) answers, in one of two formats chosen
 * by content: dtplan's own JSON (schema DTPLAN_FABRIC_SCHEMA, documented in
 * dtplan.conf(5)), which holds the switch tree and the site file's fabric
 * part, or Slurm's topology.conf text, which holds the tree only.  No I/O
 * here: probes/http.c fetches and caches the text.
 * ---------------------------------------------------------------------- */

#define DTPLAN_FABRIC_SCHEMA "dtplan.fabric/1"

enum dtplan_fabric_format {
	DTPLAN_FABRIC_JSON = 0,      /* dtplan.fabric/1 */
	DTPLAN_FABRIC_TOPOLOGY_CONF, /* Slurm topology.conf */
};

/* "dtplan.fabric/1" or "topology.conf" (static strings). */
const char *dtplan_fabric_format_name(enum dtplan_fabric_format f);

struct dtplan_fabric_desc {
	enum dtplan_fabric_format format;
	struct dtplan_topology *topology; /* owned; never NULL in a parsed fabric */
	/* The JSON form's site-file part as dtplan.conf text (switch settings,
	 * node sets, network and NVLink values, GPU type); NULL for topology.conf.
	 * Owned. */
	char *site_text;
	char source[256]; /* name used in messages (a URL, a file) */
};

/*
 * Parses a fabric description.  Text whose first non-blank character is
 * '{' is dtplan.fabric/1 JSON, anything else topology.conf.  Errors name
 * source and, for JSON, the line or the element ("switches[3] (leaf4): ...").
 * Caller frees *out with dtplan_fabric_desc_destroy(); *out is NULL on error.
 */
enum dtplan_err dtplan_fabric_desc_parse(const char *text, size_t len, const char *source,
					 struct dtplan_fabric_desc **out, struct dtplan_error *err);
void dtplan_fabric_desc_destroy(struct dtplan_fabric_desc *f);

/*
 * The site configuration a plan uses with fabric f: *out receives a copy of
 * base (caller frees with dtplan_config_fini()); with the JSON form, the
 * fabric's switch settings and node sets replace base's, and the network,
 * NVLink and GPU type values it gives replace base's.  The switch settings
 * are then applied to f->topology (dtplan_config_apply_topology()).  On
 * error *out is left initialised and empty of arrays (dtplan_config_init()).
 */
enum dtplan_err dtplan_fabric_desc_apply(struct dtplan_fabric_desc *f,
					 const struct dtplan_config *base,
					 struct dtplan_config *out, struct dtplan_error *err);

/*
 * Writes the fabric of a switch tree and a site configuration as
 * dtplan.fabric/1 JSON (what "dtplan fabric export" serves): every switch
 * with its nodes or child switches, link speed, oversubscription and uplink
 * bandwidth; the node sets; the network and NVLink values and the GPU type.
 * Parsing the result and applying it gives the same tree and settings.
 * DTPLAN_ERR_NOT_FOUND when c sets a switch t lacks.  Caller frees *out.
 */
enum dtplan_err dtplan_fabric_to_json(const struct dtplan_topology *t,
				      const struct dtplan_config *c, bool pretty, char **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Plan reports for a collector (lib/report_json.c)
 * ---------------------------------------------------------------------- */

#define DTPLAN_REPORT_SCHEMA "dtplan.report/1"

/* What a report says besides the plan; every pointer borrowed, NULL: unknown. */
struct dtplan_report {
	const char *plan_json; /* dtplan_plan_to_json() text; NULL: no plan was made */
	uint32_t job_id;       /* 0: not a job (a preview) */
	const char *cluster;   /* Slurm cluster name */
	const char *user;      /* the job's user name */
	long uid;              /* -1: unknown */
	const char *nodes;     /* the allocation as a hostlist; NULL: the plan's nodes */
	const char *host;      /* where the plan was made */
	const char *state;     /* "ok", "degraded", "refused"; NULL: from the plan */
	const char *reason;    /* why degraded or refused */
	const char *sender;    /* "plugin", "dtplan report" */
	double time;           /* seconds since the epoch; 0: not given */
};

/*
 * The JSON a collector receives (schema DTPLAN_REPORT_SCHEMA, documented in
 * dtplan.conf(5)): the fields above, the plan's warnings at the top level,
 * and the plan itself (null without one).  DTPLAN_ERR_PARSE when plan_json
 * is not a dtplan.plan/1 document.  Caller frees *out with free().
 */
enum dtplan_err dtplan_report_to_json(const struct dtplan_report *r, char **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Planning (lib/search.c, lib/plan.c, lib/placement.c)
 * ---------------------------------------------------------------------- */

/* Sequence length when neither the request nor the model gives one. */
#define DTPLAN_DEFAULT_SEQ 4096

/*
 * The global batch a plan trains is dp x micro-batch x micro-batches, the
 * value nearest the request that a split can make: at most this fraction
 * away from it unless the request is exact (doc/internals/cost-model.md).
 */
#define DTPLAN_BATCH_TOLERANCE 0.05

/* Who chose a request's GPU type.  A measured inventory replaces a default
 * or the site's GpuType=; what the user asked for stays (dtplan_plan_create()). */
enum dtplan_gpu_from {
	DTPLAN_GPU_FROM_DEFAULT = 0, /* dtplan_request_init(): h100-sxm */
	DTPLAN_GPU_FROM_SITE,        /* the site's GpuType= */
	DTPLAN_GPU_FROM_USER,        /* --dt-train gpu=, dtplan plan --gpu */
};

struct dtplan_request {
	struct dtplan_model model;
	struct dtplan_gpu gpu; /* copied from the catalog or the site */
	enum dtplan_gpu_from gpu_from;
	int gpus;          /* total GPUs */
	int gpus_per_node; /* >= 1 */
	int seq;           /* sequence length; 0: the model's max_seq, else DTPLAN_DEFAULT_SEQ */
	int global_batch;  /* sequences per step, as asked */
	bool exact_batch;  /* train exactly global_batch (else within
				    * DTPLAN_BATCH_TOLERANCE of it) */
	/* fixed choices; 0 (or -1 for zero/recompute) means "search" */
	int tp, pp, zero, micro_batch;
	int ep, cp;    /* expert and context parallelism; 0 search */
	int recompute; /* -1 search, else enum dtplan_recompute */
	bool no_master_copy;
	int vp;              /* interleaved virtual stages per PP stage; 0 search */
	int offload;         /* ZeRO-Offload: -1 only when nothing fits without it,
				    * 0 never, 1 always */
	int framework;       /* enum dtplan_framework (memory per parameter, ZeRO stages) */
	int attention;       /* enum dtplan_attention (DTPLAN_ATTENTION_FLASH by default) */
	int precision;       /* enum dtplan_precision of the matrix multiplies */
	int schedule;        /* enum dtplan_schedule (1F1B by default) */
	int moments;         /* enum dtplan_moments: Adam's m and v (fp32 by default) */
	double train_tokens; /* tokens of the whole run; 0: no time to train */
	/* links */
	double nvlink_bytes_per_s; /* 0: from gpu */
	double nvlink_latency_s;
	double net_bytes_per_s; /* per GPU across nodes */
	double net_latency_s;
	double efficiency;      /* kernel speed: 0.5 (the site default) is the calibrated
				    * model, 0.6 kernels 20% faster (cost-model.md) */
	double memory_headroom; /* fraction of GPU memory kept free (0.1) */
	/* checkpoint */
	double mtbf_gpu_hours;
	double ckpt_write_bytes_per_s; /* aggregate */
	double restart_seconds;
	/* thresholds */
	double oversub_threshold;
	double bubble_threshold;
	double exposed_comm_threshold;
	double slowdown_threshold; /* see struct dtplan_config; 0: any slowdown */
};

/* Fills a request with defaults: llama-free (no model), h100-sxm, 8 GPUs per
 * node, seq 0 (the model's context length), global batch 1024, all
 * "search", 50 GB/s and 5 us across nodes, efficiency 0.5, headroom 0.1, Llama 3 MTBF, 100 GB/s checkpoint
 * write bandwidth, 300 s restart; flash attention, bf16, DeepSpeed's memory
 * count, ZeRO-Offload only when nothing fits without it. */
void dtplan_request_init(struct dtplan_request *r);

/* Applies a site configuration's fabric, reliability and threshold values. */
void dtplan_request_apply_config(struct dtplan_request *r, const struct dtplan_config *c);

/* How ranks map to the groups: TP fastest, then DP or PP. */
enum dtplan_rank_order {
	DTPLAN_ORDER_TP_DP_PP = 0, /* DP inner: a PP stage is tp*dp consecutive ranks */
	DTPLAN_ORDER_TP_PP_DP,     /* PP inner: a pipeline replica is tp*pp consecutive ranks */
};

/* "tp-dp-pp" / "tp-pp-dp" (static strings). */
const char *dtplan_rank_order_name(enum dtplan_rank_order o);

struct dtplan_candidate;

/* The candidate's rank order in Megatron-LM's spelling, innermost first,
 * naming CP and EP when above 1 (EP the inner part of DP): "tp-cp-ep-dp-pp",
 * "tp-ep-dp-pp", .., "tp-cp-pp-dp".  A static string; "tp-dp-pp" for NULL. */
const char *dtplan_candidate_rank_order(const struct dtplan_candidate *c);

/* The rank order a dtplan_candidate_rank_order() string names (its last
 * group: pp for DTPLAN_ORDER_TP_DP_PP, dp for DTPLAN_ORDER_TP_PP_DP);
 * DTPLAN_ERR_PARSE for a string it never returns. */
enum dtplan_err dtplan_rank_order_parse(const char *s, enum dtplan_rank_order *o);

/* Predicted step time and its parts (seconds). */
struct dtplan_step {
	double compute;    /* the slowest stage's kernels: matmuls, attention, memory-bound */
	double tp_comm;    /* TP all-reduces on NVLink, not hidden */
	double pp_comm;    /* activations between stages */
	double bubble;     /* pipeline bubble */
	double dp_comm;    /* whole DP/ZeRO communication */
	double dp_exposed; /* part of dp_comm not hidden behind backward */
	double optimizer;  /* the Adam step: on the GPU, or the host's with ZeRO-Offload
				* and its transfers */
	double ep_comm;    /* MoE all-to-all dispatch and combine: its exposed part */
	double cp_comm;    /* ring attention's K/V exchange, not hidden behind attention */
	double total;
};

struct dtplan_candidate {
	int tp, pp, dp, zero, micro_batch, num_microbatches;
	int ep;           /* expert parallelism, carved from dp (1: none) */
	int cp;           /* context parallelism (1: none); tp * cp * pp * dp GPUs */
	int vp;           /* interleaved virtual stages per PP stage (1: plain 1F1B) */
	bool dualpipe;    /* the DualPipe schedule (PP > 1, the request's schedule) */
	bool offload;     /* ZeRO-Offload: optimizer state in host memory */
	int global_batch; /* trained: dp * micro_batch * num_microbatches */
	enum dtplan_recompute recompute;
	struct dtplan_stage_layers stages; /* layers per PP stage */
	double stage_imbalance;            /* slowest stage's work / the mean stage's (>= 1) */
	struct dtplan_ledger memory;
	struct dtplan_step step;
	double flops_per_step;       /* whole job */
	double tflops_per_gpu;       /* achieved, model FLOPs */
	double mfu;                  /* model FLOPs utilisation */
	double uplink_slowdown;      /* step-time factor from oversubscribed uplinks (1.0 none) */
	const char *crosses_uplinks; /* "dp", "pp", "tp" or "none" (static string) */
	double net_bytes_per_gpu;    /* bytes one GPU sends per step over the inter-node
				    * network (DP/ZeRO + PP traffic); the tie-breaker */
	enum dtplan_rank_order rank_order;
	double dp_bytes;        /* bytes one rank sends per step in its DP/ZeRO collectives */
	double pp_bytes;        /* bytes one rank sends per step over one pipeline boundary,
				    * each way */
	double uplink_bytes;    /* of net_bytes_per_gpu, those of the groups that cross
				    * oversubscribed leaf uplinks (0 without a fabric) */
	const char *ep_links;   /* where an EP group's all-to-all runs: "nvlink", "leaf"
				    * (one leaf switch), "uplink" (across leaves); static */
	double ep_uplink_ratio; /* largest oversubscription its all-to-all crosses (1.0 none) */
	double ep_bytes;        /* bytes one rank sends per step in all-to-alls */
};

#define DTPLAN_WARN_CODE_MAX 32
#define DTPLAN_WARN_TEXT_MAX 512

struct dtplan_warning {
	char code[DTPLAN_WARN_CODE_MAX]; /* "oversubscribed-uplink", "model-too-large", ... */
	char message[DTPLAN_WARN_TEXT_MAX];
};

/* One rank of the placement. */
struct dtplan_rank {
	int node;       /* index into plan->node_names (rank order) */
	int gpu;        /* local GPU index on that node */
	int local_rank; /* rank among the node's ranks */
	int tp_rank, pp_rank, dp_rank;
	int cp_rank;  /* rank in its context-parallel group (0 without CP) */
	int ep_rank;  /* rank in its expert-parallel group: dp_rank % ep */
	int domain;   /* global NVLink domain id */
	char nic[32]; /* nearest NIC, "" unknown */
};

struct dtplan_measurements; /* dtplan_measure.h */
/*
 * The whole run at the plan's step (doc/internals/cost-model.md, "Time to
 * train"): steps of the trained global batch, the checkpoint writes at the
 * chosen interval and the work lost to failures at the job's MTBF.
 */
struct dtplan_training {
	double tokens;          /* asked */
	double steps;           /* ceil(tokens / (global batch x seq)) */
	double compute_seconds; /* steps x step */
	double wall_seconds;    /* compute / goodput */
	double goodput;         /* 1 - the checkpoint's waste fraction */
};

struct dtplan_plan {
	struct dtplan_request request;
	struct dtplan_candidate best;
	bool have_runner_up;
	struct dtplan_candidate runner_up;
	char runner_up_reason[256];
	size_t n_considered; /* configurations examined */
	size_t n_fit;        /* of them, fitting memory */
	struct dtplan_ckpt ckpt;
	double ckpt_bytes;  /* bytes of one checkpoint */
	bool have_training; /* request.train_tokens > 0 */
	struct dtplan_training training;
	size_t n_warnings;
	struct dtplan_warning *warnings; /* owned */
	/* placement; n_nodes == 0 when planned without a cluster */
	size_t n_nodes;
	char (*node_names)[64]; /* owned, in rank order */
	int *node_leaf;         /* owned, leaf switch index per node (-1 unknown) */
	size_t n_ranks;
	struct dtplan_rank *ranks; /* owned, indexed by rank */
	size_t n_leaves_used;
	size_t n_leaves_needed;
	bool degraded; /* some measurement failed; plan built on assumptions */
	char degraded_reason[256];
	/* leaf switches in rank order (n_leaves_used entries; placement only) */
	char (*leaf_names)[64]; /* owned; "unknown" for nodes missing from the tree, "" flat */
	size_t *leaf_nodes;     /* owned; nodes of the plan under each leaf */
	double *leaf_ratio;     /* owned; uplink oversubscription of each leaf (1.0 flat) */
	int *node_run;          /* owned; n_nodes entries: index into leaf_names per node */
	/* what was measured and what the plan used (dtplan_measure.h); owned,
	 * NULL when the plan was made without a measurement */
	struct dtplan_measurements *measurements;
	bool blocks; /* the leaves are topology/block blocks (leaf_names name them) */
};

/* The inputs the planner sees beyond the request: optional cluster facts. */
struct dtplan_cluster {
	size_t n_nodes;
	const struct dtplan_node *nodes;        /* borrowed; n_nodes entries, allocation order */
	const struct dtplan_topology *topology; /* borrowed; NULL: flat */
	const struct dtplan_config *config;     /* borrowed; NULL: defaults */
	/*
	 * Optional hosts sharing inventories, so that 16,384 identical nodes need
	 * not carry 16,384 copies of an inventory.  When n_hosts > 0 the
	 * allocation is host_names[0..n_hosts) (allocation order) and host i is
	 * described by nodes[host_inventory[i]] (host_inventory NULL: nodes[0]);
	 * an entry of -1, or n_nodes 0, stands for a generic node: the site's
	 * NodeName= Gpus (else the request's gpus_per_node) GPUs of the request's
	 * type in NVLink domains of its domain_size.  The inventory's own
	 * hostname is then not used.  All borrowed.
	 */
	size_t n_hosts;
	const char (*host_names)[64];
	const int *host_inventory;
	/*
	 * GPUs the job holds on each node (Slurm's SLURM_GPUS_ON_NODE), when
	 * fewer than an inventory has; 0: every GPU of each inventory.  The
	 * first ones in rail order take ranks.
	 */
	int gpus_per_node;
};

/*
 * Searches every (tp, pp, dp, zero, micro-batch, recompute) for the request,
 * places the ranks on the cluster (NULL: uniform nodes of gpus_per_node under
 * one switch) and returns the fastest that fits.  DTPLAN_ERR_NO_FIT when
 * nothing fits: err says why and the smallest GPU count that would fit.
 * Caller frees *out with dtplan_plan_destroy().
 *
 * With a cluster (n_nodes or n_hosts > 0), req->gpus 0 means every GPU of the
 * allocation; otherwise it must not exceed them (the first nodes in topology
 * order are used).  gpus_per_node is replaced by the allocation's smallest
 * node.  Nodes are ordered by topology address (doc/internals/placement.md),
 * both rank orders are costed on the leaf uplinks, and the plan's ranks,
 * node_names, node_leaf and leaf counts are filled.  DTPLAN_ERR_INVAL for an
 * empty hostname or a node without GPUs.
 */
enum dtplan_err dtplan_plan_create(const struct dtplan_request *req,
				   const struct dtplan_cluster *cluster, struct dtplan_plan **out,
				   struct dtplan_error *err);
void dtplan_plan_destroy(struct dtplan_plan *p);

/* Appends a warning to a plan (formatted message). */
enum dtplan_err dtplan_plan_add_warning(struct dtplan_plan *p, const char *code, const char *fmt,
					...) __attribute__((format(printf, 3, 4)));

/* Marks a plan degraded with a reason (formatted). */
void dtplan_plan_set_degraded(struct dtplan_plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------------
 * Output (lib/plan_json.c, lib/render.c)
 * ---------------------------------------------------------------------- */

#define DTPLAN_PLAN_SCHEMA "dtplan.plan/1"

/* Plan -> JSON text (indented when pretty), with a "launch" object for the
 * frameworks (dtplan_plan_to_json_launch()).  Caller frees *out with free(). */
enum dtplan_err dtplan_plan_to_json(const struct dtplan_plan *p, bool pretty, char **out,
				    struct dtplan_error *err);

/* Node inventory <-> JSON.  Caller frees *out with free(). */
enum dtplan_err dtplan_node_to_json(const struct dtplan_node *n, bool pretty, char **out,
				    struct dtplan_error *err);
enum dtplan_err dtplan_node_from_json(const char *text, struct dtplan_node *n,
				      struct dtplan_error *err);

/*
 * Distinct node inventories (lib/node_set.c), so that hosts with the same
 * hardware share one record: a job of 16,384 identical nodes keeps one
 * struct dtplan_node, not 16,384 (struct dtplan_cluster's host_inventory;
 * probes/inventory.c's records).  Init with dtplan_node_set_init(), free
 * with dtplan_node_set_fini().
 */
struct dtplan_node_set {
	size_t n, cap;
	struct dtplan_node *nodes; /* owned; n distinct inventories */
	uint64_t *hash;            /* owned; private */
	size_t *slot, n_slots;     /* owned; private hash index */
};

void dtplan_node_set_init(struct dtplan_node_set *s);
void dtplan_node_set_fini(struct dtplan_node_set *s);

/*
 * Index in s->nodes of an inventory with n's hardware (dtplan_node_same_hardware()),
 * copying n in when there is none yet; -1 when out of memory.  O(1) on average.
 * n's hostname, source and note are not compared: the first copy's are kept.
 */
long dtplan_node_set_add(struct dtplan_node_set *s, const struct dtplan_node *n);

/* True when a and b describe the same GPUs, NICs, domains, cores and NUMA
 * nodes (everything but hostname, source and note). */
bool dtplan_node_same_hardware(const struct dtplan_node *a, const struct dtplan_node *b);

/* Plan -> the readable block for people and the job log.  Caller frees. */
enum dtplan_err dtplan_plan_render_text(const struct dtplan_plan *p, char **out,
					struct dtplan_error *err);

/* Plan -> SVG picture of racks, nodes and GPUs.  Caller frees. */
enum dtplan_err dtplan_plan_render_svg(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err);

/* Version string of the library. */
const char *dtplan_version(void);

/* ------------------------------------------------------------------------
 * User options as text (lib/request_train.c)
 * ---------------------------------------------------------------------- */

/* "off", "auto", "strict" -> enum dtplan_mode (case-insensitive).  Returns
 * DTPLAN_ERR_INVAL and leaves *out unchanged on unknown text.  The reverse is
 * dtplan_mode_name(). */
enum dtplan_err dtplan_mode_parse(const char *text, enum dtplan_mode *out,
				  struct dtplan_error *err);

/* Largest global batch a request may ask for. */
#define DTPLAN_MAX_GLOBAL_BATCH (1 << 24)

/* Most tokens a run may ask to be planned for (tokens=, --tokens). */
#define DTPLAN_MAX_TRAIN_TOKENS 1e18

/*
 * Parses a global batch: "1024" (a plan trains the nearest value within
 * DTPLAN_BATCH_TOLERANCE) or "1024!" (exactly 1024, else a refusal naming
 * the nearest values), into r->global_batch and r->exact_batch.  On error r
 * is unchanged and err names `what`.
 */
enum dtplan_err dtplan_parse_global_batch(const char *text, const char *what,
					  struct dtplan_request *r, struct dtplan_error *err);

/*
 * Applies a training spec "seq=8192,gbs=1024[!][,tp=N][,pp=N][,zero=0-3][,mb=N]
 * [,recompute=none|selective|fine|full|auto][,gpu=TYPE][,vp=N][,offload=auto|yes|no]
 * [,framework=deepspeed|megatron][,attention=flash|unfused][,precision=bf16|fp8]
 * [,schedule=1f1b|dualpipe][,moments=fp32|bf16][,tokens=COUNT]" to r (tokens: the whole run, "15T", for the time to
 * train).  Keys not given keep
 * their value in r.  Each key at most once; mb must not exceed gbs; "gbs=N!"
 * asks for exactly N (dtplan_parse_global_batch()).  On error r
 * is unchanged and err names the key and value (DTPLAN_ERR_PARSE for syntax,
 * DTPLAN_ERR_NOT_FOUND for an unknown key or GPU type, DTPLAN_ERR_RANGE for
 * out-of-range numbers, DTPLAN_ERR_INVAL otherwise).
 */
enum dtplan_err dtplan_request_parse_train(struct dtplan_request *r, const char *text,
					   struct dtplan_error *err);

/*
 * Checks the choices of r that --dt-train fixes among themselves, whatever
 * the model, the GPUs and their count: ZeRO-2/3 with PP > 1, interleaving
 * without PP, Megatron-LM with ZeRO-2/3 or offload, ZeRO-Offload with
 * ZeRO-0, CP without flash attention, DualPipe with an odd PP or
 * interleaving, recompute=fine and
 * moments=bf16 without framework=megatron; with gpu= (which the nodes' GPUs
 * do not override), fp8 or offload on a GPU without fp8 tensor cores or a
 * host link.  DTPLAN_ERR_INVAL naming the key in err->source.  The plugin refuses such a --dt-train at submission;
 * planning checks it again with the rest.
 */
enum dtplan_err dtplan_request_check_train(const struct dtplan_request *r,
					   struct dtplan_error *err);

/*
 * dtplan_request_check_train(), and what r's model cannot take whatever the
 * GPUs and their count: a TP that does not divide its attention or
 * key/value heads, more pipeline stages than layers, EP on a dense model or
 * one that does not divide the experts.  The plugin refuses such a job at
 * submission, once --dt-model and --dt-train are both known.
 */
enum dtplan_err dtplan_request_check_model(const struct dtplan_request *r,
					   struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Launch environment (lib/env.c, lib/env_vars.c, lib/plan_ranks_json.c)
 *
 * What a plan means for launchers as NAME=value pairs: the job-wide
 * variables (DT_TP, MASTER_ADDR, ...) and one task's (RANK, LOCAL_RANK, ...).
 * The host program copies them into the job's or the task's environment.
 * ---------------------------------------------------------------------- */

struct dtplan_env_var {
	char name[32];
	char *value; /* owned */
};

struct dtplan_env {
	size_t n;
	struct dtplan_env_var *vars; /* owned, in the order they were set */
};

/*
 * Longest value dtplan puts in one variable.  Linux refuses every execve
 * whose single NAME=value string exceeds 128 KiB (MAX_ARG_STRLEN); a
 * quarter of that leaves the job room for its own.  dtplan_env_set()
 * refuses a longer value with DTPLAN_ERR_RANGE; a node order or stage list
 * that long is left in the plan file, and DT_NODE_ORDER_FILE or
 * DT_PP_LAYERS_FILE name it instead.
 */
#define DTPLAN_ENV_VALUE_MAX 32768

/* MASTER_PORT is DTPLAN_MASTER_PORT_BASE + job_id % DTPLAN_MASTER_PORT_SPAN:
 * stable for a job, different for jobs that share a first node (lib/launch.c). */
#define DTPLAN_MASTER_PORT_BASE 29500
#define DTPLAN_MASTER_PORT_SPAN 1000
int dtplan_master_port(uint32_t job_id);

/* Zeroes e.  dtplan_env_fini() frees what e owns and zeroes it (NULL allowed). */
void dtplan_env_init(struct dtplan_env *e);
void dtplan_env_fini(struct dtplan_env *e);

/* Value of name in e, or NULL.  Owned by e. */
const char *dtplan_env_get(const struct dtplan_env *e, const char *name);

/* Sets name to a formatted value, replacing an earlier value.  DTPLAN_ERR_RANGE
 * (nothing set) for a value longer than DTPLAN_ENV_VALUE_MAX. */
enum dtplan_err dtplan_env_set(struct dtplan_env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * True when the user's own value of name wins over the plan's: NCCL_*,
 * MASTER_* (MASTER_ADDR, MASTER_PORT), PET_* (torchrun's options), RANK,
 * WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE, which users and launchers set
 * themselves.  The host
 * program sets such a variable only where the job has none; every other
 * variable of a dtplan_env (DT_*, DTPLAN_*) replaces the job's.
 */
bool dtplan_env_user_owned(const char *name);

/*
 * True when the plan must not run: mode strict or policy deny, and a warning
 * with code "oversubscribed-uplink" or "too-many-leaves", which a plan has
 * only when the same nodes on fewer leaves are predicted faster by more than
 * request.slowdown_threshold (doc/internals/placement.md, "Enforcement").
 * The first such warning's message goes to reason (NULL allowed).
 */
bool dtplan_plan_refused(const struct dtplan_plan *p, enum dtplan_mode mode,
			 enum dtplan_policy policy, char *reason, size_t size);

struct dtplan_launch_in; /* lib/launch.c, below */

struct dtplan_job_env_in {
	const struct dtplan_plan *plan; /* NULL: no plan could be made */
	uint32_t job_id;
	const char *plan_file;   /* DTPLAN_FILE; NULL: not written */
	const char (*nodes)[64]; /* the allocation's nodes in Slurm's order (borrowed; may be
				    * NULL): node order and MASTER_ADDR when the plan has no
				    * placement or there is no plan */
	size_t n_nodes;
	const char *reason; /* why the plan is degraded or refused; NULL: none */
	bool refused;       /* DTPLAN_PLAN_STATE=refused */
	/* the launch variables' rendezvous and files (borrowed); NULL: MASTER_ADDR
	 * and MASTER_PORT as set here, no files */
	const struct dtplan_launch_in *launch;
};

/*
 * Job-wide variables, appended to e: DTPLAN_PLAN_STATE (ok, degraded,
 * refused), DTPLAN_PLAN_REASON (when not ok), DTPLAN_FILE, MASTER_ADDR,
 * MASTER_PORT, and with a plan DT_TP, DT_PP, DT_DP, DT_ZERO, DT_MICRO_BATCH,
 * DT_NUM_MICROBATCHES, DT_RECOMPUTE, DT_PP_SCHEDULE, DT_RANK_ORDER (best.rank_order,
 * "tp-dp-pp" or "tp-pp-dp"; not set when the plan has none),
 * DT_CKPT_INTERVAL_S, DT_CKPT_INTERVAL_STEPS, the launch variables of
 * dtplan_launch_env() (DT_MEGATRON_ARGS, DT_NEMO_OVERRIDES, PET_*, the files'
 * paths), and DT_NNODES, DT_NODE_ORDER (comma list in rank order; the
 * allocation's order when the plan places nothing).
 */
enum dtplan_err dtplan_env_job(const struct dtplan_job_env_in *in, struct dtplan_env *e,
			       struct dtplan_error *err);

struct dtplan_task_env_in {
	const char *host; /* node the task runs on */
	int local_id;     /* the task's index among the node's tasks */
	int local_count;  /* tasks of the step on this node */
	int step_nodes;   /* nodes in the step; 0: unknown */
	int nccl_ib_hca;  /* enum dtplan_nccl_ib_hca (the site's nccl_ib_hca=) */
};

/*
 * One task's variables, appended to e.  When the node runs as many tasks as
 * the plan has ranks there: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * DT_TP_RANK, DT_PP_RANK, DT_DP_RANK, DT_LOCAL_GPU, DT_NODE_RANK and
 * PET_NODE_RANK.  With one task per node (a launcher such as torchrun per
 * node): DT_NODE_RANK, PET_NODE_RANK (torchrun's --node-rank) and DT_NNODES
 * only.  In both cases, with nccl_ib_hca DTPLAN_NCCL_IB_HCA_NODE,
 * NCCL_IB_HCA: "=" and the NICs nearest to the node's ranks' GPUs, each once,
 * in GPU order (not set when the plan knows none).  DTPLAN_ERR_NOT_FOUND when
 * host is not in the plan, DTPLAN_ERR_INVAL when the step does not match
 * the plan (err says how).
 */
enum dtplan_err dtplan_env_task(const struct dtplan_plan *p, const struct dtplan_task_env_in *in,
				struct dtplan_env *e, struct dtplan_error *err);

/* Most nodes and ranks a plan read back may hold (doc/internals/limits.md). */
#define DTPLAN_PLAN_MAX_NODES (1 << 20)
#define DTPLAN_PLAN_MAX_RANKS (1 << 20)

/*
 * Reads from a plan's JSON (dtplan_plan_to_json()) what tasks need: the
 * parallelism (into best: tp, pp, dp, zero, micro_batch, num_microbatches,
 * recompute), the checkpoint interval, and the placement (node names in rank
 * order, ranks).  Other fields are zero.  A plan without placement is a
 * DTPLAN_ERR_PARSE error, as are more than DTPLAN_PLAN_MAX_NODES nodes or
 * DTPLAN_PLAN_MAX_RANKS ranks, ranks that are not tp x pp x dp, and JSON
 * nested more than 32 deep.  Time and memory are linear in the text and the
 * plan (no document tree is built).  Caller frees *out with
 * dtplan_plan_destroy(); *out is NULL on error.
 */
enum dtplan_err dtplan_plan_ranks_from_json(const char *text, struct dtplan_plan **out,
					    struct dtplan_error *err);

/*
 * Reads a whole plan from its JSON (dtplan_plan_to_json()): what
 * dtplan_plan_render_text() and dtplan_plan_render_svg() show, so that a
 * saved plan renders as it did when it was made (dtplan show).  The
 * request's settings the JSON does not carry (the warning thresholds, link
 * speeds) take dtplan_request_init()'s values; its checkpoint write rate and
 * per-GPU MTBF come from the checkpoint's numbers.  The placement is
 * optional.  DTPLAN_ERR_PARSE, naming the member, for JSON that is not a
 * dtplan.plan/1 plan.  Caller frees *out with dtplan_plan_destroy(); *out
 * is NULL on error.
 */
enum dtplan_err dtplan_plan_from_json(const char *text, struct dtplan_plan **out,
				      struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Launch lines for frameworks (lib/launch.c)
 *
 * The plan in the words of Megatron-LM, NeMo, DeepSpeed and torchrun, so that
 * a job's launch line takes it without translation (doc/launchers.md).  Each
 * function is pure: the plan (and the rendezvous and file paths the host
 * program chose) in, text out.
 * ---------------------------------------------------------------------- */

/* What a launch needs besides the plan.  Strings are borrowed. */
struct dtplan_launch_in {
	const char *master_addr;      /* torchrun's rendezvous host; NULL: unknown */
	int master_port;              /* its port; 0: unknown */
	const char *hostfile;         /* paths of the files written beside the plan */
	const char *deepspeed_config; /* JSON; each NULL when not written */
	const char *svg;
};

/*
 * Fills l for plan p of job job_id (0: no job): the rendezvous is the job's
 * own MASTER_ADDR and MASTER_PORT when given (non-empty, a port 1-65535),
 * else the plan's first node and dtplan_master_port(job_id) (no port without
 * a job).  No files.  job_addr and p's node names stay borrowed.
 */
void dtplan_launch_in_init(struct dtplan_launch_in *l, const struct dtplan_plan *p, uint32_t job_id,
			   const char *job_addr, const char *job_port);

/*
 * Megatron-LM's arguments for p (megatron/training/arguments.py):
 * --tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --micro-batch-size, --global-batch-size (the trained batch), --seq-length,
 * --bf16, then as the plan needs them --sequence-parallel (TP > 1),
 * --use-distributed-optimizer (ZeRO-1; ZeRO-2 and 3 with Megatron-FSDP's
 * --data-parallel-sharding-strategy), the recomputation flags,
 * --decoder-first/last-pipeline-num-layers (uneven stages),
 * --use-tp-pp-dp-mapping (rank order tp-pp-dp) and --save-interval (the
 * checkpoint interval in steps).  Space-separated; caller frees *out.
 */
enum dtplan_err dtplan_launch_megatron_args(const struct dtplan_plan *p, char **out,
					    struct dtplan_error *err);

/* NeMo's Hydra overrides for p (megatron_gpt_config.yaml keys; "++" for keys
 * that file lacks).  Space-separated; caller frees *out. */
enum dtplan_err dtplan_launch_nemo_overrides(const struct dtplan_plan *p, char **out,
					     struct dtplan_error *err);

/* A DeepSpeed configuration fragment (JSON text): train_batch_size,
 * train_micro_batch_size_per_gpu, gradient_accumulation_steps,
 * zero_optimization.stage, bf16.enabled.  Caller frees *out. */
enum dtplan_err dtplan_launch_deepspeed_config(const struct dtplan_plan *p, char **out,
					       struct dtplan_error *err);

/*
 * The hostfile of p: one line per rank, the node of that rank, for
 * SLURM_HOSTFILE with srun -m arbitrary (then SLURM_PROCID is the plan's
 * rank).  DTPLAN_ERR_INVAL when p places no ranks.  Caller frees *out.
 */
enum dtplan_err dtplan_launch_hostfile(const struct dtplan_plan *p, char **out,
				       struct dtplan_error *err);

/*
 * True when torchrun's static rendezvous numbers p's ranks as p does: every
 * node holds the same count of consecutive ranks, node by node in plan order
 * (rank = node rank x nproc_per_node + local rank).  *nnodes and
 * *nproc_per_node receive the counts (NULL allowed).
 */
bool dtplan_launch_torchrun(const struct dtplan_plan *p, int *nnodes, int *nproc_per_node);

/*
 * Job-wide launch variables, appended to e: DT_MEGATRON_ARGS,
 * DT_NEMO_OVERRIDES, with dtplan_launch_torchrun() PET_NNODES,
 * PET_NPROC_PER_NODE, PET_RDZV_BACKEND=static and (when known)
 * PET_MASTER_ADDR, PET_MASTER_PORT, and DTPLAN_HOSTFILE,
 * DTPLAN_DEEPSPEED_CONFIG, DTPLAN_SVG for the files in l (NULL allowed).
 */
enum dtplan_err dtplan_launch_env(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				  struct dtplan_env *e, struct dtplan_error *err);

/* What a user adds to the launch line, in one line for the job log (no
 * prefix, no newline).  Caller frees *out. */
enum dtplan_err dtplan_launch_hint(const struct dtplan_plan *p, const struct dtplan_launch_in *l,
				   char **out, struct dtplan_error *err);

/*
 * Plan -> JSON as dtplan_plan_to_json(), whose "launch" object then names
 * l's rendezvous and files (NULL: as dtplan_plan_to_json(): the plan's
 * first node, no port, no files).  Caller frees *out with free().
 */
enum dtplan_err dtplan_plan_to_json_launch(const struct dtplan_plan *p,
					   const struct dtplan_launch_in *l, bool pretty,
					   char **out, struct dtplan_error *err);

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_H */
