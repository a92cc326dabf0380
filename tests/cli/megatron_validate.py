#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs plans' Megatron-LM arguments through Megatron-LM's own validation.

Usage: megatron_validate.py MEGATRON_LM_DIR PLAN.json...

For each plan (dtplan plan --json), the launch line of doc/launchers.md:
pretrain_gpt.py MODEL-ARGS $DT_MEGATRON_ARGS with WORLD_SIZE the plan's
GPUs, RANK 0, and CUDA_DEVICE_MAX_CONNECTIONS=1 where Megatron-LM asks it
(TP or CP above 1 before Blackwell, not with Megatron-FSDP).  The
arguments go through Megatron-LM's own, unmodified
megatron/training/arguments.py parse_args(ignore_unknown_args=False) and
validate_args(), then core_transformer_config_from_args()
(megatron/training/argument_utils.py), which builds the TransformerConfig
(or MLATransformerConfig) whose __post_init__ checks the layer split,
recomputation modules and MoE settings.  Prints "ok PLAN" or "FAIL PLAN:
the error" for each, a summary line, and exits 1 on any failure.

MODEL-ARGS are the model's, as Megatron-LM's own example scripts spell them
(examples/llama/train_llama3_8b_h100_fp8.sh, examples/gpt3/
train_gpt3_175b_distributed.sh, examples/mixtral/
train_mixtral_8x7b_distributed.sh, examples/megatron_fsdp/
sbatch_mfsdp_deepseek_v3.sh at d98e8a64ddf34856e74b24714e3bedb2f5a39553):
the sizes from the plan's model object, the widths the plan JSON does not
carry from each model's published config.json (ARCH below).

What this machine's Python cannot give Megatron-LM's imports is stubbed, and
only where the real import fails (each stub is named on stderr):

  * torch.distributed.checkpoint, .tensor, .device_mesh, ._tensor,
    ._symmetric_memory, torch.compile, torch.float8_e8m0fnu,
    torch.distributed.DeviceMesh, torch.distributed._coalescing_manager,
    torch.cuda.MemPool, torch.cuda.memory.CUDAPluggableAllocator,
    torch.optim.optimizer.ParamsT: PyTorch 2.x names that Megatron-LM's
    modules import at load time and Debian 12's torch 1.13 lacks;
  * torch.distributed._shard: torch 1.13's own module fails to import on
    Python 3.11 (a dataclass with a mutable default);
  * triton: megatron/core/ssm/ops imports it unguarded; numpy.dtypes
    (numpy 1.25) for megatron/core/safe_globals.py; typing.override
    (Python 3.12, the identity decorator) for megatron/training/models;
    setuptools.command, which torch.utils.cpp_extension imports (Debian
    13's torch without setuptools);
  * transformer_engine, at the version Megatron-LM's uv.lock pins at the
    commit read (2.17.1): the launch line runs with Transformer Engine,
    whose version validate_args() and TransformerConfig check (fp8, RoPE
    fusion), and none of whose code they run;
  * torch.cuda.get_device_capability and get_device_properties answer the
    compute capability of the plan's GPU (8.0 A100, 9.0 H100/H200/H800,
    10.0 B200/GB200): validate_args() asks it, and this is no GPU machine.

None of them is in the code under test.  PYTORCH_JIT=0 makes torch.jit.script
return the function (torch 1.13's scripting refuses a method of
megatron/core/transformer/torch_norm.py).
"""
import contextlib
import io
import json
import os
import sys
import types

import fwstubs

# the widths the plan JSON does not carry, from each model's config.json
# (intermediate_size; MoE: moe_intermediate_size, n_shared_experts,
# first_k_dense_replace; MLA: q_lora_rank, kv_lora_rank, qk_nope_head_dim,
# qk_rope_head_dim, v_head_dim), and the example script's style
ARCH = {
    # meta-llama/Llama-2-*-hf, Meta-Llama-3(.1)-*: SwiGLU, RMSNorm, RoPE
    "llama2-7b": {"ffn": 11008, "style": "llama"},
    "llama2-13b": {"ffn": 13824, "style": "llama"},
    "llama2-70b": {"ffn": 28672, "style": "llama"},
    "llama3-8b": {"ffn": 14336, "style": "llama"},
    "llama3-70b": {"ffn": 28672, "style": "llama"},
    "llama3-405b": {"ffn": 53248, "style": "llama"},
    # GPT-3 (Brown et al. 2020, 4h), bigscience/bloom, EleutherAI/gpt-neox-20b
    "gpt3-175b": {"ffn": 49152, "style": "gpt"},
    "bloom-176b": {"ffn": 57344, "style": "gpt"},
    "gpt-neox-20b": {"ffn": 24576, "style": "gpt"},
    # mistralai/Mixtral-8x7B-v0.1, Mixtral-8x22B-v0.1
    "mixtral-8x7b": {"ffn": 14336, "moe_ffn": 14336, "style": "llama"},
    "mixtral-8x22b": {"ffn": 16384, "moe_ffn": 16384, "style": "llama"},
    # deepseek-ai/DeepSeek-V3
    "deepseek-v3": {"ffn": 18432, "moe_ffn": 2048, "shared": 1, "first_dense": 3,
                    "q_lora": 1536, "kv_lora": 512, "qk_nope": 128, "qk_rope": 64,
                    "v_head": 128, "style": "llama"},
}

# compute capability by catalog GPU name (NVIDIA's CUDA GPUs table)
CAPABILITY = {"a100-40gb": (8, 0), "a100-80gb": (8, 0), "h100-sxm": (9, 0), "h100-96gb": (9, 0),
              "h800": (9, 0),
              "h200": (9, 0), "b200": (10, 0), "gb200": (10, 0)}

STUB_MODULES = ["torch.distributed.checkpoint", "torch.distributed._shard",
                "torch.distributed.tensor", "torch.distributed.device_mesh",
                "torch.distributed._tensor", "torch.distributed._symmetric_memory", "triton",
                "numpy.dtypes", "transformer_engine", "setuptools.command"]
# the Transformer Engine that Megatron-LM's uv.lock pins at the commit read
TE_VERSION = "2.17.1"
STUB_ATTRS = dict.fromkeys(["torch.float8_e8m0fnu", "torch.compile",
                            "torch.distributed.DeviceMesh",
                            "torch.distributed._coalescing_manager", "torch.cuda.MemPool",
                            "torch.cuda.memory.CUDAPluggableAllocator",
                            "torch.optim.optimizer.ParamsT"])
STUB_ATTRS["typing.override"] = fwstubs.identity


def model_args(m):
    """MODEL-ARGS for the plan's model object m."""
    a = ARCH.get(m["name"], {})
    w = ["--num-layers", m["layers"], "--hidden-size", m["hidden"],
         "--num-attention-heads", m["heads"], "--ffn-hidden-size", a.get("ffn", 4 * m["hidden"]),
         "--max-position-embeddings", m["seq"], "--train-iters", 100, "--lr", "1e-4",
         "--use-mcore-models", "--attention-dropout", 0.0, "--hidden-dropout", 0.0]
    if a.get("style") == "llama":
        w += ["--disable-bias-linear", "--normalization", "RMSNorm", "--swiglu",
              "--position-embedding-type", "rope", "--untie-embeddings-and-output-weights"]
    if m["kv_heads"] != m["heads"]:
        w += ["--group-query-attention", "--num-query-groups", m["kv_heads"]]
    if m["experts"] > 0:
        w += ["--num-experts", m["experts"], "--moe-router-topk", m["top_k"],
              "--moe-ffn-hidden-size", a.get("moe_ffn", a.get("ffn", 4 * m["hidden"])),
              "--moe-grouped-gemm", "--moe-token-dispatcher-type", "alltoall",
              "--moe-router-load-balancing-type", "aux_loss"]
        if a.get("shared"):
            w += ["--moe-shared-expert-intermediate-size", a["shared"] * a["moe_ffn"]]
        if a.get("first_dense"):
            w += ["--moe-layer-freq",
                  f"[0]*{a['first_dense']}+[1]*{m['layers'] - a['first_dense']}"]
    if a.get("kv_lora"):
        w += ["--multi-latent-attention", "--q-lora-rank", a["q_lora"], "--kv-lora-rank",
              a["kv_lora"], "--qk-head-dim", a["qk_nope"], "--qk-pos-emb-head-dim",
              a["qk_rope"], "--v-head-dim", a["v_head"], "--kv-channels", a["v_head"]]
    return [str(x) for x in w]


def check(plan, parse_args, validate_args, config_from_args):
    """None when Megatron-LM takes the plan's arguments, else why not."""
    j = json.load(open(plan))
    words = j["launch"]["megatron_args"].split()
    cap = CAPABILITY[j["gpu"]["name"]]
    _capability[0] = cap
    par = j["parallelism"]
    os.environ["WORLD_SIZE"] = str(j["gpus"])
    os.environ["RANK"] = "0"
    os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    if (par["tp"] > 1 or par["cp"] > 1) and cap[0] < 10 and "--use-megatron-fsdp" not in words:
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
    sys.argv = ["pretrain_gpt.py"] + model_args(j["model"]) + words
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            args = parse_args(ignore_unknown_args=False)
            validate_args(args)
            config_from_args(args)
    except SystemExit as e:  # argparse
        tail = [line for line in log.getvalue().splitlines() if line.strip()][-1:]
        return f"parse_args exited {e.code}: {' '.join(tail)}"
    except Exception as e:  # validate_args()'s asserts and ValueErrors
        return f"{type(e).__name__}: {e}".replace("\n", " ")
    if args.data_parallel_size != par["dp"]:
        return f"Megatron-LM's data-parallel size {args.data_parallel_size}, the plan's {par['dp']}"
    return None


_capability = [(9, 0)]


def main():
    _, plans = fwstubs.tree_and_plans(__doc__)
    os.environ["PYTORCH_JIT"] = "0"
    stubbed = fwstubs.install(STUB_MODULES, STUB_ATTRS, {"transformer_engine": TE_VERSION})
    import torch
    torch.cuda.get_device_capability = lambda *a, **k: _capability[0]
    torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(
        major=_capability[0][0], minor=_capability[0][1])
    with contextlib.redirect_stdout(io.StringIO()):
        from megatron.training.arguments import parse_args, validate_args
        from megatron.training.argument_utils import core_transformer_config_from_args
    print("stubbed: " + (", ".join(stubbed) or "nothing"), file=sys.stderr)
    fwstubs.run_sweep(plans, lambda plan: check(plan, parse_args, validate_args,
                                                   core_transformer_config_from_args), "argument sets pass validate_args")


if __name__ == "__main__":
    main()
