/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cost/cost.h: the kernel model's rates and times, optimizer bytes and the
 * ledger's per-split shape.
 *
 * libdtplan's own, never installed; functions carry the dtplan__ prefix.
 * Included by lib/ files of this area and of the areas above it
 * (tests/check_layers.sh checks).
 */
#ifndef DTPLAN_COST_COST_H
#define DTPLAN_COST_COST_H

#include "dtplan.h"
#include "base/base.h"

/* ------------------------------------------------------------------------
 * Kernel times (lib/cost/compute.c): doc/internals/cost-model.md, "Compute"
 * ---------------------------------------------------------------------- */

/* Per-request rates of the kernel model. */
struct dtplan__kernels {
	double gemm_rate;     /* FLOP/s of a large GEMM in the request's precision */
	double gemm_in_bytes; /* bytes per GEMM input element (1 for fp8) */
	double cast_bytes;    /* bytes moved per element cast to it (read 2, write the rest) */
	double bf16_rate;     /* the same in bf16 (attention's matrix multiplies) */
	double attn_rate;     /* FlashAttention's FLOP/s */
	double hbm;           /* bytes/s streaming kernels reach */
	double sms;           /* streaming multiprocessors */
	double host_link;     /* host link per direction (bytes/s) */
	double host_memory;   /* host memory bandwidth per GPU (bytes/s) */
	bool flash;           /* FlashAttention */
	bool per_op;          /* selective is per-op (dtplan__selective_per_op()) */
};

/* Seconds of one micro-batch through one layer (or the output layer and the
 * embedding) on one GPU of a TP group, and the FLOPs executed. */
struct dtplan__layer_time {
	double fwd, bwd, recompute;
	double attn_fwd; /* of fwd, the attention core's (FlashAttention or unfused) */
	double flops;    /* forward, backward and recomputation */
};

void dtplan__kernels_init(const struct dtplan_request *r, struct dtplan__kernels *k);
/* Bytes per element a GEMM input keeps in precision p, with its scales. */
double dtplan__precision_in_bytes(enum dtplan_precision p);
void dtplan__layer_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			   int micro_batch, int tp, enum dtplan_recompute rc,
			   struct dtplan__layer_time *out);
/* The same for a layer of a model with experts (moe: the layer is an MoE
 * layer, its routed experts cut etp ways, 0: tp) or latent attention, on
 * s / cp tokens of each sequence. */
void dtplan__layer_seconds_ex(const struct dtplan__kernels *k, const struct dtplan_model *mdl,
			      int seq, int micro_batch, int tp, int cp, bool moe, int etp,
			      enum dtplan_recompute rc, struct dtplan__layer_time *out);
void dtplan__head_seconds(const struct dtplan__kernels *k, const struct dtplan_model *mdl, int seq,
			  int micro_batch, int tp, struct dtplan__layer_time *out);
/* One optimizer step over `params` parameters holding gradients of grad_bytes. */
double dtplan__optimizer_seconds(const struct dtplan__kernels *k, double params, double grad_bytes,
				 bool offload);

/*
 * Optimizer state on the GPU per parameter it holds, in bytes: the fp32
 * master copy (unless no_master_copy) and Adam's two moments, fp32 or bf16;
 * none when offloaded to the host.
 */
double dtplan__optimizer_bytes(bool offload, bool no_master_copy, bool bf16_moments);

/*
 * Gradient bytes per parameter: held on the GPU (the framework's gradient
 * buffer: Megatron-LM's fp32 main gradients, DeepSpeed's bf16 ones; 2 with
 * grads=bf16, 4 with grads=fp32), and moved by the DP/ZeRO collectives:
 * bf16, torchtitan's fp32, whatever grads= says (the one framework it may
 * change, lib/model/rules.c, is counted in bf16 on the wire already).  The
 * one home of both (lib/cost/ledger.c).  dtplan__grads_held(): the dtype
 * the held bytes are, never DTPLAN_GRADS_DEFAULT.
 */
double dtplan__grad_bytes(enum dtplan_framework f, enum dtplan_grads g);
double dtplan__grad_wire_bytes(enum dtplan_framework f);
enum dtplan_grads dtplan__grads_held(enum dtplan_framework f, enum dtplan_grads g);

/*
 * Whether the gradients stay whole on every rank through the step and are
 * reduced once, after the last micro-batch's backward: ZeRO-0 and ZeRO-1
 * always; FSDP2 (ZeRO-2/3) under torchtitan's pipeline parallelism too, whose
 * stages accumulate unsharded gradients until the last backward (PyTorch's
 * PipelineStage.backward_maybe_with_nosync(): set_requires_gradient_sync(False)
 * and set_reshard_after_backward(False) but for the last).  Otherwise ZeRO-2/3
 * reduce-scatter every micro-batch's gradients into shards.  The one home of
 * that rule (lib/cost/ledger.c), for the ledger and the DP/ZeRO traffic.
 */
bool dtplan__grads_reduced_once(enum dtplan_framework f, int zero, int pp);

/*
 * Whether selective recomputation is torchtitan's per-op policy (its
 * SelectiveAC, the default activation checkpointing of its Trainer.Config:
 * torchtitan/distributed/activation_checkpoint.py, b5bcd76) rather than
 * Megatron-LM's: each block keeps its input and the outputs of its
 * compute-intensive ops (attention, and the matrix multiplies but every
 * second one, counted in forward order) and reruns the rest in the
 * backward.  Megatron-LM and DeepSpeed rerun the attention core alone
 * (Korthikanti et al.).  The one home of that rule (lib/cost/ledger.c), for
 * the ledger, the kernel time, the search and the hand-off.
 */
bool dtplan__selective_per_op(enum dtplan_framework f);

/*
 * What the ledger needs of a (model, pp, stages) split that the ZeRO stage,
 * micro-batch, recomputation and interleaving do not change: for each stage
 * that can be the heaviest (the first, the first middle one, the last), its
 * layers, MoE layers and dense and expert parameters.  The search computes
 * it once per split; dtplan_ledger_compute() is the two calls below.
 */
struct dtplan__stage_shape {
	int stage, layers, n_moe;
	double dense, expert; /* parameters: dense (embedding, head) and routed experts */
};

struct dtplan__ledger_shape {
	int pp;
	int n; /* stages in s: 1 to 3 */
	struct dtplan__stage_shape s[3];
};

enum dtplan_err dtplan__ledger_shape(const struct dtplan_ledger_in *in,
				     struct dtplan__ledger_shape *out, struct dtplan_error *err);
enum dtplan_err dtplan__ledger_compute_shaped(const struct dtplan_ledger_in *in,
					      const struct dtplan__ledger_shape *sh,
					      struct dtplan_ledger *out, struct dtplan_error *err);

/* ------------------------------------------------------------------------
 * Collectives as NCCL runs them (lib/cost/comm.c): doc/internals/
 * cost-model.md, "Collectives at scale"
 * ---------------------------------------------------------------------- */

/* NCCL's protocols: LL (8-byte stores carrying 4 bytes and a flag), LL128
 * (128-byte lines carrying 120), Simple (bulk copies behind a fence). */
enum dtplan__proto {
	DTPLAN__PROTO_LL = 0,
	DTPLAN__PROTO_LL128,
	DTPLAN__PROTO_SIMPLE,
};

/* The links one collective's group runs over. */
struct dtplan__nccl_path {
	double bw;        /* bytes/s of the group's slowest link (its rails summed) */
	double intra_lat; /* one hop inside a node (NVLink), measured or configured */
	double inter_lat; /* one hop between nodes (network), measured or configured */
	int nodes;        /* nodes the n ranks span, each holding n / nodes (1: one node) */
	/* enum dtplan_nvls: the links are one NVLink domain whose switches
	 * reduce (NCCL's NVLS); only with nodes == 1 */
	int nvls;
};

/* One algorithm and protocol: seconds, NAN where NCCL does not run it (tree
 * for all-gather and reduce-scatter; NVLS but Simple, across nodes, on a
 * domain without it or point to point) or for bad arguments. */
double dtplan__nccl_algo_seconds(enum dtplan_coll c, enum dtplan_algo a, enum dtplan__proto p,
				 double bytes, int n, const struct dtplan__nccl_path *path);

/* The fastest algorithm and protocol, as NCCL's tuner picks; *algo and
 * *proto (either may be NULL) say which.  0 for n <= 1 or no bytes. */
double dtplan__nccl_seconds(enum dtplan_coll c, double bytes, int n,
			    const struct dtplan__nccl_path *path, enum dtplan_algo *algo,
			    enum dtplan__proto *proto);

/*
 * DP/ZeRO buckets as the framework's defaults cut them (its row's bucket
 * sizes): the reductions' and the gathers' counts for a rank holding
 * `params` parameters of `layers` transformer blocks over n data-parallel
 * ranks; at least 1 each.
 */
struct dtplan__buckets {
	double reduce, gather;
	bool gather_after_step; /* ZeRO-1/2's gathers hide behind nothing */
};

void dtplan__dp_buckets(enum dtplan_framework f, int zero, double params, int n, double layers,
			struct dtplan__buckets *out);

/*
 * Exposed seconds of nb buckets of c seconds each whose inputs become ready
 * evenly over t seconds of compute, their collectives one after another on
 * one stream: the last bucket's c, or, when the collectives fall behind,
 * nb c - t (nb - 1) / nb.  The same for gathers prefetched ahead of the
 * compute that uses them (the first one waits).
 */
double dtplan__bucket_tail(double c, double nb, double t);

#endif /* DTPLAN_COST_COST_H */
