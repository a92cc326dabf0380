/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * framework.c: one row per framework (enum dtplan_framework): its names and
 * the traits every other file reads, so that adding a framework or a
 * training option is a row here, its clauses in lib/model/rules.c and a
 * hand-off file in lib/launch/ (doc/internals/new-framework.md).
 *
 * Who reads what: dtplan_framework_name() and dtplan_framework_parse()
 * (lib/cost/ledger.c) the names; the ledger the gradient bytes and how
 * often they are reduced; the rules (lib/model/rules.c) the ZeRO stages,
 * sharding with PP, MoE with ZeRO-3, offload, EP beside TP, DualPipe,
 * recomputations and moments; the search (lib/plan/search.c) the default
 * ZeRO range, offload and per-op selective recomputation; the step
 * (lib/plan/predict.c) the rank orders and the reduction's bytes; the
 * hand-offs (lib/launch/) the clauses dtplan__split_runs() checks for
 * them.
 *
 * The numbers (doc/internals/cost-model.md, "Memory"; doc/launchers.md
 * names the versions read):
 *
 *   DeepSpeed (the ZeRO paper's count): bf16 gradients 2 bytes, reduced in
 *   bf16; its pipeline engine runs ZeRO-1 at most and no sequence axis, its
 *   engine refuses MoE layers with ZeRO-3 (deepspeed/runtime/engine.py,
 *   edaa722).
 *
 *   Megatron-LM (and Megatron-Bridge and NeMo, which run it): fp32 main
 *   gradients 4 bytes, reduced in bf16 as a lower bound (lib/cost/ledger.c);
 *   Megatron-FSDP (ZeRO-2/3) is opt-in (--use-megatron-fsdp), so the search
 *   tries ZeRO-0/1 unasked; fine recomputation (--recompute-modules) and
 *   bf16 moments (the precision-aware optimizer) are its alone.
 *
 *   torchtitan: FSDP2 with fp32 reduction (TrainingConfig.
 *   mixed_precision_reduce, torchtitan/config/configs.py, b5bcd76): 4 bytes
 *   held and sent, reduced once per step under its pipeline; DDP (ZeRO-0)
 *   or FSDP2 (ZeRO-2/3), always FSDP over CP, its EP borrows TP ranks, its
 *   CPU offload moves parameters and gradients too, no DualPipe; its mesh
 *   is pp, dp_replicate, dp_shard, cp, tp (ParallelDims.build_mesh(),
 *   torchtitan/distributed/parallel_dims.py): tp-dp-pp alone; its
 *   selective recomputation is the per-op SelectiveAC.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <stddef.h>

#define ZERO_ALL (1u << 0 | 1u << 1 | 1u << 2 | 1u << 3)
#define RECOMPUTE_ALL                                                                              \
	(1u << DTPLAN_RECOMPUTE_NONE | 1u << DTPLAN_RECOMPUTE_SELECTIVE |                          \
	 1u << DTPLAN_RECOMPUTE_FINE | 1u << DTPLAN_RECOMPUTE_FULL)
#define ORDERS_ALL (1u << DTPLAN_ORDER_TP_DP_PP | 1u << DTPLAN_ORDER_TP_PP_DP)

static const char *const megatron_aliases[] = {"megatron-lm", "megatron-bridge", "nemo", NULL};

static const struct dtplan__framework frameworks[] = {
	[DTPLAN_FRAMEWORK_DEEPSPEED] =
		{
			.name = "deepspeed",
			.title = "DeepSpeed",
			.grad_bytes = 2.0,
			.grad_wire_bytes = 2.0,
			/* DeepSpeedZeroConfig (deepspeed/runtime/zero/config.py,
			 * 1b88ac3): reduce_bucket_size 5e8 and
			 * stage3_prefetch_bucket_size 5e7 elements; stage 1/2
			 * gather the updated partitions in step(), one
			 * all_gather_into_tensor() of the flat partition
			 * (all_gather_into_tensor_dp_groups(),
			 * deepspeed/runtime/utils.py; allgather_bucket_size only
			 * where torch lacks it) */
			.bucket = 5e8,
			.z3_gather_bucket = 5e7,
			.gather_after_step = true,
			.recompute = RECOMPUTE_ALL & ~(1u << DTPLAN_RECOMPUTE_FINE),
			.zero = ZERO_ALL,
			.zero_max = 3,
			.offload = true,
			.ep_with_tp = true,
			.dualpipe = true,
			.cp_replicated = true,
			.orders = ORDERS_ALL,
			.fp8_option = true,
			.handoffs = DTPLAN__HANDOFF_DEEPSPEED,
			.runs = DTPLAN__RUNS_SHARD_PP | DTPLAN__RUNS_CP_PP |
				DTPLAN__RUNS_MOE_ZERO3 | DTPLAN__RUNS_EP | DTPLAN__RUNS_FORMAT,
		},
	[DTPLAN_FRAMEWORK_MEGATRON] =
		{
			.name = "megatron",
			.aliases = megatron_aliases,
			.title = "Megatron-LM",
			.grad_bytes = 4.0,
			.grad_wire_bytes = 2.0,
			/* DistributedDataParallelConfig.bucket_size: max(40000000,
			 * 1000000 x dp_size) parameters (megatron/core/distributed/
			 * distributed_data_parallel.py, d98e8a6), the distributed
			 * optimizer's gathers in the same buckets */
			.bucket = 40e6,
			.bucket_per_dp = 1e6,
			.gathers_as_reduces = true,
			.recompute = RECOMPUTE_ALL,
			.bf16_moments = true,
			/* fp32 main gradients by default, bf16 held and
			 * reduced with --grad-reduce-in-bf16
			 * (megatron/training/arguments.py, d98e8a6) or
			 * Megatron-Bridge's ddp.grad_reduce_in_fp32=false */
			.grads_either = true,
			.zero = ZERO_ALL,
			.zero_max = 1,
			.shard_with_pp = true,
			.cp_with_pp = true,
			.moe_zero3 = true,
			.offload = true,
			.ep_with_tp = true,
			.fold = true,
			.dualpipe = true,
			.cp_replicated = true,
			.orders = ORDERS_ALL,
			.fsdp_orders = 1u << DTPLAN_ORDER_TP_DP_PP,
			.fp8_option = true,
			.formats = (1u << DTPLAN_PRECISION_MXFP8) | (1u << DTPLAN_PRECISION_NVFP4),
			.bridge_runs = DTPLAN__RUNS_FSDP_ORDER,
			.handoffs = DTPLAN__HANDOFF_MEGATRON | DTPLAN__HANDOFF_NEMO |
				    DTPLAN__HANDOFF_MEGATRON_BRIDGE,
		},
	[DTPLAN_FRAMEWORK_TORCHTITAN] =
		{
			.name = "torchtitan",
			.title = "torchtitan",
			.grad_bytes = 4.0,
			.grad_wire_bytes = 4.0,
			/* fully_shard() on every transformer block
			 * (torchtitan/distributed/fsdp.py,
			 * b5bcd76): one all-gather and one reduce-scatter each */
			.bucket_per_block = true,
			.grads_once_with_pp = true,
			.selective_per_op = true,
			.recompute = RECOMPUTE_ALL & ~(1u << DTPLAN_RECOMPUTE_FINE),
			.zero = ZERO_ALL & ~(1u << 1),
			.zero_note =
				"DDP (ZeRO-0) or FSDP2 (ZeRO-2 without resharding after forward, "
				"ZeRO-3 with it)",
			.why_zero = "it has no ZeRO-1 (DDP or FSDP2)",
			.zero_max = 3,
			.shard_with_pp = true,
			.cp_with_pp = true,
			.moe_zero3 = true,
			.ep_shard = true,
			.orders = 1u << DTPLAN_ORDER_TP_DP_PP,
			.why_order =
				"its mesh is pp, dp_replicate, dp_shard, cp, tp: no tp-pp-dp rank "
				"order",
			.handoffs = DTPLAN__HANDOFF_TORCHTITAN,
			.runs = DTPLAN__RUNS_ORDER | DTPLAN__RUNS_ZERO | DTPLAN__RUNS_OFFLOAD |
				DTPLAN__RUNS_EP | DTPLAN__RUNS_DUALPIPE | DTPLAN__RUNS_CP_ZERO |
				DTPLAN__RUNS_FP8 | DTPLAN__RUNS_FORMAT | DTPLAN__RUNS_MOMENTS |
				DTPLAN__RUNS_RECOMPUTE,
		},
};

const struct dtplan__framework *dtplan__framework(enum dtplan_framework f)
{
	if ((unsigned)f >= DTPLAN_ARRAY_SIZE(frameworks))
		return NULL;
	return &frameworks[f];
}

int dtplan__framework_count(void)
{
	return (int)DTPLAN_ARRAY_SIZE(frameworks);
}

int dtplan__framework_find(const char *text)
{
	for (size_t i = 0; text != NULL && i < DTPLAN_ARRAY_SIZE(frameworks); i++) {
		const struct dtplan__framework *fw = &frameworks[i];

		if (dtplan__streq_nocase(text, fw->name))
			return (int)i;
		for (size_t a = 0; fw->aliases != NULL && fw->aliases[a] != NULL; a++)
			if (dtplan__streq_nocase(text, fw->aliases[a]))
				return (int)i;
	}
	return -1;
}
