#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks a plan's launch words against the frameworks' own option tables.

Every Megatron-LM argument, Megatron-Bridge override key and torchtitan
option a plan emits must be one these frameworks define, with a value of
its type and among its choices, as read (never copied) from:

  Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553:
    megatron/training/arguments.py (add_argument, validate_args),
    megatron/training/config/{training_config,common_config}.py,
    megatron/core/{model_parallel_config,transformer/transformer_config}.py
    (expert_tensor_parallel_size: --expert-tensor-parallel-size),
    megatron/core/transformer/pipeline_parallel_layer_layout.py,
    megatron/core/distributed/distributed_data_parallel_config.py,
    megatron/core/optimizer/optimizer_config.py
  Megatron-Bridge 067f987df03b8355b03192d88d70f1709fedf51a:
    src/megatron/bridge/training/config.py (ConfigContainer sections),
    models/gpt/model_config.py, recipes/llama/h100/llama3.py (model.transformer),
    utils/activation_map.py (str_to_dtype)
  torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a:
    torchtitan/config/configs.py, components/checkpointer/base.py,
    distributed/activation_checkpoint.py (subcommands)

Usage: framework_keys.py PLAN.json; prints "ok N" or each mistake, exit 1.
"""
import json
import re
import sys

INT, FLAG = "int", "flag"
# Megatron-LM: name -> type, or the tuple of its choices
MEGATRON = {
    "--tensor-model-parallel-size": INT, "--pipeline-model-parallel-size": INT,
    "--micro-batch-size": INT, "--global-batch-size": INT, "--seq-length": INT,
    "--bf16": FLAG, "--sequence-parallel": FLAG, "--expert-model-parallel-size": INT,
    # a ModelParallelConfig field made an argument (default TP's)
    "--expert-tensor-parallel-size": INT,
    "--context-parallel-size": INT, "--use-distributed-optimizer": FLAG,
    "--use-megatron-fsdp": FLAG,
    "--data-parallel-sharding-strategy": ("no_shard", "optim", "optim_grads",
                                          "optim_grads_params"),
    "--ckpt-format": ("torch", "torch_dist", "torch_dcp", "fsdp_dtensor"),
    "--megatron-fsdp-main-grads-dtype": ("fp32", "bf16", "fp16", "auto"),
    "--fp8-format": ("e4m3", "hybrid"),
    "--fp8-recipe": ("tensorwise", "delayed", "mxfp8", "blockwise", "custom"),
    "--grad-reduce-in-bf16": FLAG, "--use-precision-aware-optimizer": FLAG,
    "--exp-avg-dtype": ("fp32", "fp16", "bf16", "fp8"),
    "--exp-avg-sq-dtype": ("fp32", "fp16", "bf16", "fp8"),
    "--optimizer-cpu-offload": FLAG, "--optimizer-offload-fraction": "float",
    "--recompute-granularity": ("full", "selective"),
    "--recompute-method": ("uniform", "block"), "--recompute-num-layers": INT,
    "--recompute-modules": "list",
    "--decoder-first-pipeline-num-layers": INT, "--decoder-last-pipeline-num-layers": INT,
    "--num-layers-per-virtual-pipeline-stage": INT,
    "--num-virtual-stages-per-pipeline-rank": INT,
    "--account-for-embedding-in-pipeline-split": FLAG,
    "--account-for-loss-in-pipeline-split": FLAG,
    "--pipeline-model-parallel-layout": "layout",
    "--use-tp-pp-dp-mapping": FLAG, "--save-interval": INT,
}
RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe",
                     "shared_experts")
BOOL = "bool"
DTYPES = ("fp32", "float32", "torch.float32", "fp16", "float16", "torch.float16", "bf16",
          "bfloat16", "torch.bfloat16")
BRIDGE = {
    "model.tensor_model_parallel_size": INT, "model.pipeline_model_parallel_size": INT,
    "model.context_parallel_size": INT, "model.expert_model_parallel_size": INT,
    "model.expert_tensor_parallel_size": INT,
    "model.sequence_parallel": BOOL, "model.virtual_pipeline_model_parallel_size": INT,
    "model.num_layers_in_first_pipeline_stage": INT,
    "model.num_layers_in_last_pipeline_stage": INT,
    "model.account_for_embedding_in_pipeline_split": BOOL,
    "model.account_for_loss_in_pipeline_split": BOOL,
    "model.pipeline_model_parallel_layout": "layout",
    "model.recompute_granularity": ("full", "selective"),
    "model.recompute_method": ("uniform", "block"), "model.recompute_num_layers": INT,
    "model.recompute_modules": "list", "model.mtp_num_layers": INT,
    # training/mixed_precision.py's MixedPrecisionConfig and named recipes
    "mixed_precision": ("bf16_mixed", "bf16_with_mxfp8_mixed",
                        "bf16_with_fp8_current_scaling_mixed"),
    "mixed_precision.fp8": ("e4m3", "hybrid"),
    "mixed_precision.fp8_recipe": ("tensorwise", "delayed", "mxfp8", "blockwise", "custom"),
    "dataset.seq_length": INT, "train.micro_batch_size": INT, "train.global_batch_size": INT,
    "ddp.grad_reduce_in_fp32": BOOL, "ddp.use_distributed_optimizer": BOOL,
    "ddp.use_megatron_fsdp": BOOL,
    "ddp.data_parallel_sharding_strategy": ("no_shard", "optim", "optim_grads",
                                            "optim_grads_params"),
    "optimizer.use_distributed_optimizer": BOOL,
    "optimizer.use_precision_aware_optimizer": BOOL, "optimizer.optimizer_cpu_offload": BOOL,
    # torch.dtype fields, by the names utils/activation_map.py's str_to_dtype() reads
    "optimizer.main_grads_dtype": DTYPES, "optimizer.exp_avg_dtype": DTYPES,
    "optimizer.exp_avg_sq_dtype": DTYPES,
    "checkpoint.ckpt_format": ("torch", "torch_dist", "torch_dcp", "fsdp_dtensor"),
    "checkpoint.save_interval": INT, "dist.use_tp_pp_dp_mapping": BOOL,
}
# Optional[...] fields of TransformerConfig / ModelParallelConfig
# (megatron/core/model_parallel_config.py, transformer/transformer_config.py)
BRIDGE_NULLABLE = ("model.virtual_pipeline_model_parallel_size",
                   "model.num_layers_in_first_pipeline_stage",
                   "model.num_layers_in_last_pipeline_stage",
                   "model.pipeline_model_parallel_layout", "model.recompute_granularity",
                   "model.recompute_method", "model.recompute_num_layers",
                   "model.mtp_num_layers")
TORCHTITAN = {
    "--parallelism.data_parallel_replicate_degree": INT,
    "--parallelism.data_parallel_shard_degree": INT,
    "--parallelism.tensor_parallel_degree": INT, "--parallelism.context_parallel_degree": INT,
    "--parallelism.pipeline_parallel_degree": INT, "--parallelism.expert_parallel_degree": INT,
    "--parallelism.fsdp_reshard_after_forward": ("default", "always", "never"),
    "--parallelism.pipeline_parallel_schedule": ("1F1B", "Interleaved1F1B"),
    "--parallelism.num_pp_microbatches": INT,
    "--parallelism.pipeline_parallel_layers_per_stage": INT,
    "--parallelism.pipeline_parallel_first_stage_less_layers": INT,
    "--parallelism.pipeline_parallel_last_stage_less_layers": INT,
    "--training.num_tokens_per_microbatch_per_dp_rank": INT,
    "--training.num_tokens_per_train_step": INT, "--training.max_context_length": INT,
    "--training.disable_cuda_graphs": FLAG, "--checkpoint.enable": FLAG,
    "--checkpoint.interval": INT,
}
TORCHTITAN_SUBCOMMANDS = ("activation-checkpoint:selective", "activation-checkpoint:full",
                          "activation-checkpoint:memory-budget", "activation-checkpoint:none")


def value_ok(kind, v):
    if kind == INT:
        return v.isdigit() and int(v) >= 0
    if kind == "float":
        try:
            float(v)
            return True
        except ValueError:
            return False
    if kind == BOOL:
        return v in ("true", "false")
    if kind == "layout":  # PipelineParallelLayerLayout.parse_str_to_list()'s E, t, m, L, |
        return re.fullmatch(r"E[tm|]*L", v) is not None
    if kind == "list":
        items = v.strip("[]").split(",")
        return all(i in RECOMPUTE_MODULES for i in items)
    return v in kind


def check_flags(words, table, what, bad):
    i = 0
    while i < len(words):
        w = words[i]
        if w in TORCHTITAN_SUBCOMMANDS and table is TORCHTITAN:
            i += 1
            continue
        if w not in table:
            bad.append(f"{what}: {w} is not an option")
            i += 1
            continue
        kind = table[w]
        if kind == FLAG:
            i += 1
            continue
        if kind == "list":  # --recompute-modules takes the words up to the next option
            j = i + 1
            while j < len(words) and not words[j].startswith("--"):
                if words[j] not in RECOMPUTE_MODULES:
                    bad.append(f"{what}: {w} {words[j]} is not a module")
                j += 1
            i = j
            continue
        if i + 1 >= len(words) or not value_ok(kind, words[i + 1]):
            bad.append(f"{what}: {w} {words[i + 1] if i + 1 < len(words) else ''} is not {kind}")
        i += 2


def main():
    j = json.load(open(sys.argv[1]))
    launch = j["launch"]
    # Megatron-Bridge's Llama recipes hold the TransformerConfig fields in
    # BridgeGPTModelConfig's "transformer" (recipes/llama/h100/llama3.py's
    # get_model_config(), models/gpt/model_config.py); its others in a
    # provider, model.FIELD
    nested = j["model"]["name"].startswith("llama")
    bad, n = [], 0
    words = launch["megatron_args"].split()
    check_flags(words, MEGATRON, "Megatron-LM", bad)
    n += len(words)
    if launch.get("megatron_bridge_overrides"):
        for kv in launch["megatron_bridge_overrides"].split():
            k, _, v = kv.partition("=")
            n += 1
            if k.startswith("model.") and nested:
                if not k.startswith("model.transformer."):
                    bad.append(f"Megatron-Bridge: {k} is no key of a BridgeGPTModelConfig")
                    continue
                k = "model." + k[len("model.transformer."):]
            if k not in BRIDGE:
                bad.append(f"Megatron-Bridge: {k} is not a ConfigContainer field")
            elif v == "null" and k in BRIDGE_NULLABLE:
                pass  # OmegaConf's None: a recipe's value cleared
            elif not value_ok(BRIDGE[k], v):
                bad.append(f"Megatron-Bridge: {k}={v} is not {BRIDGE[k]}")
    if launch.get("torchtitan_args"):
        words = launch["torchtitan_args"].split()
        check_flags(words, TORCHTITAN, "torchtitan", bad)
        n += len(words)
        if words[-1] not in TORCHTITAN_SUBCOMMANDS:
            bad.append("torchtitan: the activation-checkpoint subcommand is not last")
    for b in bad:
        print(b)
    if bad:
        sys.exit(1)
    print(f"ok {n}")


if __name__ == "__main__":
    main()
