/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dtplan/plan.h: the request, the search and the plan; the user's options as text.
 *
 * Part of libdtplan's public API; include "dtplan.h", which holds every
 * area in layer order.  Errors, units and ownership as dtplan.h says.
 */
#ifndef DTPLAN_PLAN_H
#define DTPLAN_PLAN_H

#include "dtplan/cost.h"
#include "dtplan/site.h"
#include "dtplan/node.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Planning (lib/plan/search.c, lib/plan/plan.c, lib/fabric/placement.c)
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

/* Where a request's sequence length came from (dtplan_request_seq()). */
enum dtplan_seq_from {
	DTPLAN_SEQ_FROM_USER = 0,    /* given: seq=, --seq, or a plan read back */
	DTPLAN_SEQ_FROM_PRETRAINING, /* the preset's pre-training length */
	DTPLAN_SEQ_FROM_CONTEXT,     /* the model's context length (max_position_embeddings) */
	DTPLAN_SEQ_FROM_DEFAULT,     /* DTPLAN_DEFAULT_SEQ: the model says neither */
};

/*
 * The calibrated constants of the step-time model, replaced as a whole when
 * `set` (tests/calibrate.py fits them through the CLI's DTPLAN_CALIBRATION;
 * doc/internals/cost-model.md, "Calibration").  Unset: the GPU's own
 * gemm_sustained and attention_efficiency and the built-in overlap taxes
 * (lib/plan/plan.h).
 */
struct dtplan_model_fit {
	bool set;
	double gemm_sustained;       /* share of the MAMF GEMMs sustain */
	double attention_efficiency; /* FlashAttention's rate over the MAMF */
	double overlap_tax;          /* share of hidden communication still charged */
	double zero3_overlap_tax;    /* the same for ZeRO-3's gathers and reductions */
};

/*
 * What the records of earlier runs taught (lib/record/learn.c): the factor
 * by which measured steps exceeded the model's, for one GPU type, framework
 * and shape class (dtplan_shape_class()), shrunk toward 1 when the runs are
 * few and bounded to [DTPLAN_CORRECTION_MIN, DTPLAN_CORRECTION_MAX].
 */
#define DTPLAN_CORRECTION_MIN 0.5
#define DTPLAN_CORRECTION_MAX 2.0

struct dtplan_correction {
	char gpu[32];         /* the catalog's name, "h100-sxm" */
	char framework[16];   /* dtplan_framework_name() */
	char shape_class[48]; /* dtplan_shape_class() */
	double factor;        /* applied to the model's step: shrunk and bounded */
	double observed;      /* geometric mean of measured / model over the runs */
	double log_sd;        /* spread of log(measured / model) across the runs */
	double weight;        /* the runs' share against the prior, in [0, 1) */
	int runs;
	/* how the error changes with the job's size (lib/record/learn.c):
	 * log(measured / model) = log(factor) + slope (log(gpus) - log(ref_gpus)) */
	double ref_gpus;        /* geometric mean of the runs' GPU counts (factor holds there) */
	double slope;           /* per e-fold of GPUs, shrunk toward 0 */
	double slope_weight;    /* the runs' share against the slope's prior, in [0, 1) */
	int min_gpus, max_gpus; /* the runs' smallest and largest GPU counts */
};

/* The factor k applies to a plan of gpus GPUs: factor x (gpus /
 * ref_gpus)^slope, bounded to [DTPLAN_CORRECTION_MIN, DTPLAN_CORRECTION_MAX];
 * factor when k has no slope or ref_gpus. */
double dtplan_correction_at(const struct dtplan_correction *k, int gpus);

/* Corrections for one cluster: every GPU type, framework and class it has
 * records of.  Borrowed by a request; the caller keeps it alive while it
 * plans with it. */
struct dtplan_calibration {
	char cluster[64]; /* "" any cluster */
	size_t n;
	const struct dtplan_correction *corrections; /* n entries */
	/* one GPU's compute-time coefficient of variation, learned from the
	 * runs' step spread (dtplan/record.h, DTPLAN_CALIB_CV_MIN_RUNS);
	 * cv_runs 0: none learned */
	double step_cv;
	int cv_runs;
};

struct dtplan_request {
	struct dtplan_model model;
	struct dtplan_gpu gpu; /* copied from the catalog or the site */
	enum dtplan_gpu_from gpu_from;
	int gpus;                      /* total GPUs */
	int gpus_per_node;             /* >= 1 */
	int seq;                       /* sequence length; 0: dtplan_request_seq() */
	enum dtplan_seq_from seq_from; /* set when seq 0 is resolved */
	int global_batch;              /* sequences per step, as asked */
	bool exact_batch;              /* train exactly global_batch (else within
				    * DTPLAN_BATCH_TOLERANCE of it) */
	/* the pins: 0 (-1 for zero and recompute) means "search"; dp is never
	 * pinned (0); vp counts interleaved stages per PP stage; offload, for
	 * ZeRO-Offload: -1 only when nothing fits without it, 0 never, 1
	 * always */
	DTPLAN_SPLIT_EMBED;
	bool no_master_copy;
	enum dtplan_framework framework; /* (memory per parameter, ZeRO stages) */
	enum dtplan_attention attention; /* (DTPLAN_ATTENTION_FLASH by default) */
	enum dtplan_precision precision; /* of the matrix multiplies */
	enum dtplan_schedule schedule;   /* (1F1B by default) */
	enum dtplan_moments moments;     /* Adam's m and v (fp32 by default) */
	enum dtplan_grads grads;         /* the gradients' dtype (the framework's by default) */
	double train_tokens;             /* tokens of the whole run; 0: no time to train */
	/* links */
	double nvlink_bytes_per_s; /* 0: from gpu */
	double nvlink_latency_s;
	double net_bytes_per_s; /* per GPU across nodes */
	double net_latency_s;
	double efficiency;                 /* kernel speed: 0.5 (the site default) is the calibrated
				    * model, 0.6 kernels 20% faster (cost-model.md) */
	double memory_headroom;            /* fraction of GPU memory kept free (0.1) */
	double step_cv;                    /* one GPU's compute time per step: sd / mean, the
			 * site's (StepTimeCV=); DTPLAN_STEP_CV_UNSET:
			 * dtplan_request_step_cv() resolves it */
	struct dtplan_model_fit model_fit; /* unset: the built-in constants */
	/* checkpoint */
	double mtbf_gpu_hours;
	char mtbf_source[192]; /* where mtbf_gpu_hours came from; "": dtplan_mtbf_source() */
	double ckpt_write_bytes_per_s; /* aggregate */
	double restart_seconds;
	/* thresholds */
	double oversub_threshold;
	double bubble_threshold;
	double exposed_comm_threshold;
	double slowdown_threshold; /* see struct dtplan_config; 0: any slowdown */
	/* learned corrections (borrowed; NULL: the model alone, --no-calibration).
	 * A plan's copy of its request has it NULL. */
	const struct dtplan_calibration *calibration;
	/* calibration=off (--dt-train, --train): the records are not read, the
	 * plan is the model's alone */
	bool calibration_off;
};

/* Fills a request with defaults: llama-free (no model), h100-sxm, 8 GPUs per
 * node, seq 0 (dtplan_request_seq()), global batch 1024, all
 * "search", 50 GB/s and 5 us across nodes, efficiency 0.5, headroom 0.1, Llama 3 MTBF, 100 GB/s checkpoint
 * write bandwidth, 300 s restart; flash attention, bf16, DeepSpeed's memory
 * count, ZeRO-Offload only when nothing fits without it. */
void dtplan_request_init(struct dtplan_request *r);

/*
 * One GPU's compute time per step varies from GPU to GPU; the step waits
 * for the slowest.  The default coefficient of variation: Sinha et al.,
 * "Not All GPUs Are Created Equal", SC'22 (arXiv 2208.11035), measured 8%
 * average performance variation between identical GPUs of five clusters
 * (Summit, Vortex, Frontera, Longhorn, Corona); read as the spread of the
 * central 95% of a normal, 4 sd: 0.08 / 4 = 0.02.  A site's records
 * teach its own (dtplan_calibration_learn()), and StepTimeCV=
 * (dtplan.conf(5)) sets one over both.
 */
#define DTPLAN_STEP_CV_DEFAULT 0.02
/* The largest cv a site may set (StepTimeCV=) or the records teach. */
#define DTPLAN_STEP_CV_MAX 0.5
/* A request's or a site's step_cv nobody set (dtplan_request_init(),
 * dtplan_config_init()): any value outside [0, 0.5] reads the same. */
#define DTPLAN_STEP_CV_UNSET (-1.0)

/* Where the coefficient of variation a plan used came from. */
enum dtplan_cv_from {
	DTPLAN_CV_FROM_UNKNOWN = 0, /* a plan read from JSON older than the field */
	DTPLAN_CV_FROM_SITE,        /* the site's StepTimeCV= (or the request's own) */
	DTPLAN_CV_FROM_RECORDS,     /* learned from the records' step spread */
	DTPLAN_CV_FROM_DEFAULT,     /* DTPLAN_STEP_CV_DEFAULT */
};

/* "", "site", "records", "default" (the plan JSON's prediction.step_cv_from);
 * static strings.  dtplan_cv_from_parse() reads them back: false for any
 * other name. */
const char *dtplan_cv_from_name(enum dtplan_cv_from from);
bool dtplan_cv_from_parse(const char *name, enum dtplan_cv_from *from);

/* Phi^-1(p), the standard normal's quantile (Acklam's approximation,
 * relative error < 1.2e-9); NAN outside (0, 1). */
double dtplan_normal_quantile(double p);

/* z of the q-quantile of the maximum of n iid standard normals:
 * Phi^-1(q^(1/n)).  The step of n GPUs of mean mu and sd cv mu has its
 * q-quantile at mu + cv mu z. */
double dtplan_max_quantile_z(double q, int n);

/* The coefficient of variation r plans with: its step_cv when in [0, 0.5]
 * (the site's StepTimeCV=), else its calibration's learned one when it has
 * one (cv_runs > 0), else DTPLAN_STEP_CV_DEFAULT.  *from (NULL allowed)
 * says which. */
double dtplan_request_step_cv(const struct dtplan_request *r, enum dtplan_cv_from *from);

struct dtplan_plan;
/* The text plan's lines on the best candidate's step spread (p50, p95, the
 * wait for the slowest GPU and which the plan's other numbers use) into
 * buf; "" when p is NULL or has no p95 (a plan read from older JSON). */
void dtplan_plan_spread_text(const struct dtplan_plan *p, char *buf, size_t size);

/* Applies a site configuration's fabric, reliability and threshold values. */
void dtplan_request_apply_config(struct dtplan_request *r, const struct dtplan_config *c);

/* Bytes of a GPU's memory a plan may fill: its memory less the request's
 * headroom.  The one place this is computed (lib/plan/request.c). */
double dtplan_request_usable_memory(const struct dtplan_request *r);

/*
 * The sequence length r trains: its seq when given, else the model's
 * pre-training length (presets), else its context length (config.json's
 * max_position_embeddings, seq=), else DTPLAN_DEFAULT_SEQ.  *from (may be
 * NULL) says which.  The one place the default is decided.
 */
int dtplan_request_seq(const struct dtplan_request *r, enum dtplan_seq_from *from);

/*
 * Where r's sequence length came from, for people: "llama3-405b's
 * pre-training length", "the model's context length", "dtplan's default";
 * "" when it was given.  Written into buf; returns buf.
 */
const char *dtplan_request_seq_source(const struct dtplan_request *r, char *buf, size_t size);

/* "given", "pretraining", "context", "default" (the plan JSON's
 * model.seq_from); static strings.  dtplan_seq_from_parse() reads them back:
 * false for another name. */
const char *dtplan_seq_from_name(enum dtplan_seq_from from);
bool dtplan_seq_from_parse(const char *name, enum dtplan_seq_from *from);

/*
 * The model's state held whole on one GPU (no TP, PP, DP or ZeRO, no
 * activations): weights, gradients and optimizer as the request's
 * framework, moments and master copy count them; *out's total is their sum.
 * The ledger the search uses (dtplan__ledger_in()).  DTPLAN_ERR_INVAL for a
 * request without a model.
 */
enum dtplan_err dtplan_request_model_state(const struct dtplan_request *r,
					   struct dtplan_ledger *out, struct dtplan_error *err);

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

/*
 * Slurm's --segment for a job on topology/block (issue 33): the segment
 * size S that keeps whole groups of candidate c inside blocks, for a job of
 * `nodes` nodes of `gpus_per_node` GPUs (c's GPUs) and base blocks of
 * `block_nodes` nodes (0: no blocks).  Ranks lie as the plan places them
 * (lib/fabric/placement.c): an expert group is TP x EP consecutive ranks; a
 * model-parallel group (TP x CP x PP, one model replica) is consecutive when
 * PP is inner (tp-pp-dp), or with one stage or one replica, and otherwise
 * has a member in every stage, dp replicas apart: the whole job.  A group of
 * B consecutive ranks (aligned on B) lies whole in segments of S nodes when
 * S x G is a multiple of B: its node span is the fewest such nodes,
 * lcm(B, G) / G.  S is the largest number of nodes that divides the job's,
 * fits a block and is a multiple of the span of every group that spans more
 * than one node and less than the job (the expert group's, the
 * model-parallel group's); else of the expert group's alone; else none.
 * No group spanning nodes: none either (nothing to keep whole).
 */
struct dtplan_segment {
	size_t expert_nodes; /* one expert group's node span; 0 without EP */
	size_t model_nodes;  /* one model-parallel group's (the job's when strided) */
	size_t segment;      /* the --segment to ask for; 0: none */
	char reason[640];    /* why, one line */
};
enum dtplan_err dtplan_segment_for(const struct dtplan_candidate *c, int gpus_per_node,
				   size_t nodes, size_t block_nodes, struct dtplan_segment *out,
				   struct dtplan_error *err);

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
	double straggler;  /* the wait for the slowest GPU's compute, at the median
			    * (dtplan_max_quantile_z(0.5, gpus) x cv x compute) */
	double total;      /* the median step (p50): what throughput, the checkpoint
			    * interval, goodput and time to train use */
};

struct dtplan_candidate {
	/* every degree chosen (>= 1; ep 1, cp 1, vp 1: none), zero 0-3,
	 * recompute an enum dtplan_recompute, offload 1: ZeRO-Offload
	 * (optimizer state in host memory) */
	DTPLAN_SPLIT_EMBED;
	int num_microbatches;
	bool dualpipe;    /* the DualPipe schedule (PP > 1, the request's schedule) */
	int global_batch; /* trained: dp * micro_batch * num_microbatches */
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
				    * (one leaf switch), "uplink" (across leaves),
				    * "network" (no topology known); static */
	double ep_uplink_ratio; /* largest oversubscription its all-to-all crosses (1.0 none) */
	double ep_bytes;        /* bytes one rank sends per step in all-to-alls */
	/* the learned correction step.total carries (dtplan_calibration_find()):
	 * step.total = model_step x correction; 1 and 0 runs without one */
	double model_step;      /* the model's step, its parts' sum */
	double correction;      /* factor applied */
	int correction_runs;    /* runs it was learned from */
	bool correction_pooled; /* learned from other shape classes (DTPLAN_SHAPE_ANY) */
	/* the step's spread (lib/plan/straggler.c): step.total is its median */
	double step_p95; /* the 95th percentile, the correction included */
	double step_cv;  /* one GPU's compute-time coefficient of variation it used */
	enum dtplan_cv_from step_cv_from; /* and where it came from */
	int step_cv_runs;                 /* runs it was learned from (DTPLAN_CV_FROM_RECORDS) */
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
	int ep_rank;  /* rank in its expert-parallel group: rank / etp % ep (folded over
		       * TP x CP x DP, Megatron-Core's expert RankGenerator) */
	int etp_rank; /* rank in its expert tensor-parallel group: rank % etp */
	int edp_rank; /* rank in its expert data-parallel group: rank / (etp ep) % edp */
	int domain;   /* global NVLink domain id */
	char nic[32]; /* nearest NIC, "" unknown */
};

/*
 * The candidate's shape class, the key a correction is learned under with
 * the GPU type and framework: the parallelisms above 1 innermost first, the
 * ZeRO stage and the recomputation, "tp-pp-dp/z1/selective", "dp/z3/none",
 * "single/z0/none".  lib/plan/calibrate.c.
 */
void dtplan_shape_class(const struct dtplan_candidate *c, char *buf, size_t size);

/* The shape class of a correction learned from every class of one GPU type
 * and framework: what a class without records of its own gets. */
#define DTPLAN_SHAPE_ANY "*"

/* The correction of cal for the GPU type, framework and shape class, else
 * its DTPLAN_SHAPE_ANY one; NULL when cal (NULL allowed) has neither.
 * Borrowed from cal. */
const struct dtplan_correction *dtplan_calibration_find(const struct dtplan_calibration *cal,
							const char *gpu, const char *framework,
							const char *shape_class);

struct dtplan_measurements; /* dtplan/measure.h */
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
	/* what was measured and what the plan used (dtplan/measure.h); owned,
	 * NULL when the plan was made without a measurement */
	struct dtplan_measurements *measurements;
	bool blocks; /* the leaves are topology/block blocks (leaf_names name them) */
	enum dtplan_leaf_kind leaf_kind; /* switches, blocks, rings or toruses */
};

/*
 * The warnings' table (lib/plan/warnings.c): every code a plan of this
 * version can carry, and whether it breaks the site's topology rules, so
 * that --dt-plan=strict and policy=deny refuse the job.  False for a code
 * the table lacks.
 */
bool dtplan_warning_refuses(const char *code);
/* The table's i-th code (a static string), NULL past its end: every code a
 * plan of this version can carry (the collector labels its counters with
 * these and "other", so that a poster makes no series of its own). */
const char *dtplan_warning_code_at(size_t i);

/*
 * True when the plan must not run: mode strict or policy deny, and a warning
 * whose kind refuses a job (dtplan_warning_refuses(): "oversubscribed-uplink"
 * or "too-many-leaves"), which a plan has
 * only when the same nodes on fewer leaves are predicted faster by more than
 * request.slowdown_threshold (doc/internals/placement.md, "Enforcement").
 * The first such warning's message goes to reason (NULL allowed).
 */
bool dtplan_plan_refused(const struct dtplan_plan *p, enum dtplan_mode mode,
			 enum dtplan_policy policy, char *reason, size_t size);

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
/*
 * The fewest GPUs, in whole nodes of req->gpus_per_node, on which
 * dtplan_plan_create() finds a plan that fits memory for req (req->gpus is
 * ignored): the count its "does not fit" error names.  0 when nothing up to
 * 1,048,576 GPUs fits; -1 with err filled for a request that can never
 * plan (the checks of dtplan_plan_create()).  lib/plan/plan.c.
 */
long dtplan_plan_fewest_gpus(const struct dtplan_request *req, struct dtplan_error *err);

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
 * User options as text (lib/plan/request.c)
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
 * [,framework=deepspeed|megatron|torchtitan][,attention=flash|unfused][,precision=bf16|fp8|mxfp8|nvfp4]
 * [,schedule=1f1b|dualpipe][,moments=fp32|bf16][,grads=default|fp32|bf16][,tokens=COUNT]"
 * to r (tokens: the whole run, "15T", for the time to train).  Keys not given keep
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
 * moments=bf16 without framework=megatron, grads= other than the
 * framework's own where it cannot be told; with gpu= (which the nodes' GPUs
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

#ifdef __cplusplus
}
#endif

#endif /* DTPLAN_PLAN_H */
