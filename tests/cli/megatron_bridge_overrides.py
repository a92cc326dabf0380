#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Applies plans' Megatron-Bridge overrides as Megatron-Bridge applies them.

Usage: megatron_bridge_overrides.py MEGATRON_LM_DIR MEGATRON_BRIDGE_DIR PLAN.json...

For each plan (dtplan plan --json), Bridge's own recipe function for its
model builds the ConfigContainer: Llama 3 (dense, grouped-query attention)
src/megatron/bridge/recipes/llama/h100/llama3.py:
llama3_8b_pretrain_2gpu_h100_bf16_config, llama3_70b_pretrain_32gpu_h100_
bf16_config, llama31_405b_pretrain_256gpu_h100_bf16_config; DeepSeek-V3
(MoE, latent attention, MTP) recipes/deepseek/h100/deepseek_v3.py:
deepseek_v3_pretrain_256gpu_h100_bf16_32nodes_config below 1,024 GPUs,
deepseek_v3_pretrain_1024gpu_h100_bf16_config from 1,024; Qwen3-MoE (MoE,
grouped-query attention; dtplan reads its config.json, tests/data/hf-qwen3-
*.json) recipes/qwen/h100/qwen3_moe.py: qwen3_30b_a3b_pretrain_8gpu_h100_
bf16_config, qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config.
DT_MEGATRON_BRIDGE_OVERRIDES go through Bridge's own omegaconf_utils
(training/utils/omegaconf_utils.py): create_omegaconf_dict_config(), struct
mode, then OmegaConf.to_container() and apply_overrides() back onto the
dataclasses; then runtime_config_update() (training/config.py: the
mixed-precision recipe, the data-parallel size, communication overlap,
ConfigContainer.validate()), with WORLD_SIZE the plan's GPUs and
model.seq_length the dataset's, as scripts/training/run_recipe.py does.
The plan's TP, PP, EP, CP, fp8 (or none) and Adam's moment dtype must be
the applied config's, with fp32 main gradients, gradients reduced in fp32
(but for DeepSpeed plans) and no MTP layer (dtplan's models have none).  Prints "ok PLAN" or "FAIL
PLAN: the error", a summary line, and exits 1 on any failure.

Not Bridge's own, and why:

  * Hydra (not packaged by Debian): parse_hydra_overrides() hands the words
    to Hydra's OverridesParser and ConfigLoaderImpl._apply_overrides_to_
    config(); here each KEY=VALUE (no +, ++ or ~ prefix, which dtplan never
    writes) is OmegaConf.update(cfg, KEY, VALUE, merge=True) on the struct
    config, VALUE read as Hydra's grammar reads a plain value (true/false,
    null, an int, a float, [a,b] a list, else a string).  An unknown key
    fails the same way (struct mode); Hydra's quoting and interpolation
    are not read, and dtplan writes neither;
  * AutoBridge.from_hf_pretrained() downloads the model's config.json
    (transformers, network).  For Llama 3 its get_model_config() is
    Bridge's own LlamaBridge().hf_config_to_model_config() over the
    config.json values (the plan's sizes, the intermediate size
    megatron_validate.py's ARCH names, Llama 3's vocabulary 128256 and
    RoPE base 500000); for DeepSeek-V3 and Qwen3-MoE its
    to_megatron_provider() is Bridge's own DeepSeekV3Bridge() or
    Qwen3MoEBridge().provider_bridge() over the config.json: DeepSeek-V3's
    the plan's sizes, ARCH's widths and the other values as Bridge's own
    test spells deepseek-ai/DeepSeek-V3's file (tests/unit_tests/models/
    deepseek/test_deepseek_bridges.py), Qwen3's the test file dtplan read,
    whose sizes the plan's must be;
  * the modules megatron_validate.py stubs for Megatron-LM, and for
    Bridge's imports hydra, transformers, flash_attn, safetensors, rich,
    filelock, einops, datasets, PIL, tensorboard, torch.utils.tensorboard,
    diffusers, modelopt, megatron.energon (not installed), torch.float8_
    e4m3fn/e5m2 (PyTorch 2.1), torch.no_grad as a bare decorator (2.0);
    Transformer Engine's FusedAdam by its signature (master_weight_dtype,
    exp_avg_dtype, exp_avg_sq_dtype, use_decoupled_grad: TE 2.17.1's),
    which OptimizerConfig inspects for the precision-aware optimizer the
    DeepSeek-V3 recipes set; torch.cuda.get_device_capability and
    get_device_properties answer the plan's GPU (megatron_validate.py's
    CAPABILITY, and its name), which Bridge's flex dispatcher check
    (training/flex_dispatcher_backend.py) asks; each is named on stderr,
    none is in the code under test.
"""
import contextlib
import io
import json
import os
import sys
import types

import fwstubs  # noqa: E402
import megatron_validate as mv  # noqa: E402

if len(sys.argv) < 4:
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)
mlm, mb, plans = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, mlm)
sys.path.insert(0, os.path.join(mb, "src"))
os.environ["PYTORCH_JIT"] = "0"
MODS = mv.STUB_MODULES + ["hydra", "transformers", "flash_attn", "safetensors", "rich", "filelock",
                          "einops", "datasets", "PIL", "tensorboard", "torch.utils.tensorboard",
                          "diffusers", "modelopt", "megatron.energon"]
ATTRS = dict(mv.STUB_ATTRS)
ATTRS["torch.float8_e4m3fn"] = None
ATTRS["torch.float8_e5m2"] = None
stubbed = fwstubs.install(MODS, ATTRS, {"transformer_engine": mv.TE_VERSION})
import torch  # noqa: E402

_ng = torch.no_grad


class no_grad(_ng):
    def __new__(cls, func=None):
        if callable(func):
            return _ng()(func)
        return super().__new__(cls)

    def __init__(self, func=None):
        super().__init__()


torch.no_grad = no_grad
# the plan's GPU (check() sets it): its compute capability and name, which
# validate_args() and Bridge's flex dispatcher check (validate_flex_
# dispatcher_backend(): DeepEP and HybridEP by architecture)
_gpu = [(9, 0), "NVIDIA H100"]
torch.cuda.get_device_capability = lambda *a, **k: _gpu[0]
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(
    major=_gpu[0][0], minor=_gpu[0][1], name=_gpu[1])
if "transformer_engine" in stubbed:
    # the arguments OptimizerConfig.__post_init__ asks of Transformer
    # Engine's FusedAdam for the precision-aware optimizer (the DeepSeek-V3
    # recipes set it), by signature: TE 2.17.1's has them
    import transformer_engine.pytorch.optimizers as te_optimizers

    def _fused_adam(params, lr=1e-3, master_weight_dtype=None, exp_avg_dtype=None,
                    exp_avg_sq_dtype=None, use_decoupled_grad=False, **kw):
        raise RuntimeError("a stand-in: no optimizer is built here")

    te_optimizers.FusedAdam = _fused_adam
    stubbed.append("transformer_engine.pytorch.optimizers.FusedAdam (signature)")
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    from megatron.bridge.models.llama.llama_bridge import LlamaBridge
    from megatron.bridge.models.deepseek.deepseek_v3_bridge import DeepSeekV3Bridge
    from megatron.bridge.models.qwen.qwen3_moe_bridge import Qwen3MoEBridge
    import megatron.bridge.recipes.llama.h100.llama3 as llama3
    import megatron.bridge.recipes.deepseek.h100.deepseek_v3 as deepseek_v3
    import megatron.bridge.recipes.qwen.h100.qwen3_moe as qwen3_moe
    from megatron.bridge.training.utils import omegaconf_utils as ou
from omegaconf import OmegaConf  # noqa: E402

print("stubbed: " + ", ".join(stubbed + ["torch.no_grad (bare decorator)"]), file=sys.stderr)

RECIPE = {"llama3-8b": "llama3_8b_pretrain_2gpu_h100_bf16_config",
          "llama3-70b": "llama3_70b_pretrain_32gpu_h100_bf16_config",
          "llama3-405b": "llama31_405b_pretrain_256gpu_h100_bf16_config"}
# Qwen3-MoE, given to dtplan as its config.json (tests/data): the recipe of
# recipes/qwen/h100/qwen3_moe.py for each
QWEN3_MOE = {"hf-qwen3-30b-a3b.json": "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config",
             "hf-qwen3-235b-a22b.json": "qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config"}
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def hf_config(m):
    a = mv.ARCH[m["name"]]
    return types.SimpleNamespace(
        hidden_size=m["hidden"], intermediate_size=a["ffn"], num_attention_heads=m["heads"],
        num_hidden_layers=m["layers"], num_key_value_heads=m["kv_heads"], rms_norm_eps=1e-5,
        rope_theta=500000.0, vocab_size=128256, max_position_embeddings=8192, hidden_act="silu",
        tie_word_embeddings=False, torch_dtype=torch.bfloat16, attention_bias=False,
        mlp_bias=False, rope_scaling=None, initializer_range=0.02,
        architectures=["LlamaForCausalLM"], model_type="llama", head_dim=m["hidden"] // m["heads"])


def deepseek_v3_config(m):
    """deepseek-ai/DeepSeek-V3's config.json: the plan's sizes, the widths
    megatron_validate.py's ARCH names, the rest as Bridge's own test of its
    DeepSeekV3Bridge spells the file (tests/unit_tests/models/deepseek/
    test_deepseek_bridges.py, ds_v3_config)."""
    a = mv.ARCH[m["name"]]
    return types.SimpleNamespace(
        architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
        hidden_size=m["hidden"], intermediate_size=a["ffn"], num_attention_heads=m["heads"],
        num_hidden_layers=m["layers"], num_key_value_heads=m["kv_heads"],
        n_routed_experts=m["experts"], num_experts_per_tok=m["top_k"],
        moe_intermediate_size=a["moe_ffn"], n_shared_experts=a["shared"],
        first_k_dense_replace=m["first_dense"], moe_layer_freq=m["moe_every"],
        q_lora_rank=a["q_lora"], kv_lora_rank=a["kv_lora"], qk_nope_head_dim=a["qk_nope"],
        qk_rope_head_dim=a["qk_rope"], v_head_dim=a["v_head"], vocab_size=129280,
        max_position_embeddings=163840, num_nextn_predict_layers=1, n_group=8, topk_group=4,
        routed_scaling_factor=2.5, scoring_func="sigmoid", topk_method="noaux_tc",
        norm_topk_prob=True, rms_norm_eps=1e-6, rope_theta=10000, initializer_range=0.02,
        rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                      "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                      "type": "yarn"},
        attention_bias=False, attention_dropout=0.0, hidden_act="silu",
        tie_word_embeddings=False, torch_dtype="bfloat16")


def provider_of(bridge, hf):
    """AutoBridge.from_hf_pretrained(...) as the recipe calls it, over hf:
    to_megatron_provider() is the model bridge's own provider_bridge()."""
    pretrained = types.SimpleNamespace(config=hf)
    return types.SimpleNamespace(
        to_megatron_provider=lambda load_weights=True, hf_path=None: bridge.provider_bridge(
            pretrained))


def recipe(j):
    """The ConfigContainer of the plan's model's recipe, or why not."""
    m = j["model"]
    name = m["name"]
    if name in RECIPE:
        mc = LlamaBridge().hf_config_to_model_config(hf_config(m))
        llama3.AutoBridge = types.SimpleNamespace(
            from_hf_pretrained=lambda path, **k: types.SimpleNamespace(get_model_config=lambda: mc))
        return getattr(llama3, RECIPE[name])()
    if name == "deepseek-v3":
        hf = deepseek_v3_config(m)
        deepseek_v3.AutoBridge = types.SimpleNamespace(
            from_hf_pretrained=lambda path, **k: provider_of(DeepSeekV3Bridge(), hf))
        return (deepseek_v3.deepseek_v3_pretrain_1024gpu_h100_bf16_config() if j["gpus"] >= 1024
                else deepseek_v3.deepseek_v3_pretrain_256gpu_h100_bf16_32nodes_config())
    if name in QWEN3_MOE:
        with open(os.path.join(DATA, name)) as f:
            d = json.load(f)
        # the plan is of the same file's model
        for k, v in (("layers", "num_hidden_layers"), ("hidden", "hidden_size"),
                     ("heads", "num_attention_heads"), ("kv_heads", "num_key_value_heads"),
                     ("experts", "num_experts"), ("top_k", "num_experts_per_tok")):
            if m[k] != d[v]:
                raise ValueError(f"the plan's {k} {m[k]}, {name}'s {v} {d[v]}")
        hf = types.SimpleNamespace(**d)
        qwen3_moe.AutoBridge = types.SimpleNamespace(
            from_hf_pretrained=lambda path, **k: provider_of(Qwen3MoEBridge(), hf))
        return getattr(qwen3_moe, QWEN3_MOE[name])()
    raise ValueError(f"no Megatron-Bridge recipe here for {name}")


def value(v):
    if v in ("true", "false"):
        return v == "true"
    if v == "null":
        return None
    if v.startswith("[") and v.endswith("]"):
        return [value(x) for x in v[1:-1].split(",")]
    for t in (int, float):
        try:
            return t(v)
        except ValueError:
            pass
    return v


def check(plan):
    j = json.load(open(plan))
    ov = j["launch"]["megatron_bridge_overrides"]
    _gpu[:] = [mv.CAPABILITY[j["gpu"]["name"]], "NVIDIA " + j["gpu"]["name"].upper()]
    cfg = recipe(j)
    oc, excluded = ou.create_omegaconf_dict_config(cfg)
    OmegaConf.set_struct(oc, True)
    for kv in ov.split():
        k, _, v = kv.partition("=")
        try:
            OmegaConf.update(oc, k, value(v), merge=True)
        except Exception as e:
            return f"{k}: {type(e).__name__}: {str(e).splitlines()[0]}"
    ou.apply_overrides(cfg, OmegaConf.to_container(oc, resolve=True), excluded)
    cfg.model.seq_length = cfg.dataset.seq_length
    os.environ["WORLD_SIZE"] = str(j["gpus"])
    from megatron.bridge.training.config import runtime_config_update
    runtime_config_update(cfg)
    par = j["parallelism"]
    got = tuple(getattr(cfg.model, f"{k}_parallel_size") for k in (
        "tensor_model", "pipeline_model", "expert_model", "context", "expert_tensor"))
    # the experts' TP the plan folds (written when not TP's), which the
    # recipes set themselves (mostly 1) and the overrides always say
    want = (par["tp"], par["pp"], max(par.get("ep", 1), 1), max(par.get("cp", 1), 1),
            par.get("etp", par["tp"]) if j["model"].get("experts", 0) > 0
            else cfg.model.expert_tensor_parallel_size)
    # the plan's fp8 survives MixedPrecisionConfig.setup()
    want_fp8 = ("e4m3" if j["gpu"]["name"] in ("b200", "gb200") else "hybrid") if (
        j.get("request", {}).get("precision") == "fp8" or "fp8" in ov) else None
    if cfg.model.fp8 != want_fp8:
        return f"model.fp8 after runtime_config_update() {cfg.model.fp8!r}, the plan's {want_fp8!r}"
    # the gradients reduced in fp32 as a Megatron-LM plan counts them (the
    # DeepSeek-V3 recipe's MixedPrecisionConfig reduces in bf16); a
    # DeepSpeed plan's bf16 reduction no named mixed-precision recipe has
    if j["framework"] != "deepspeed" and not cfg.ddp.grad_reduce_in_fp32:
        return "ddp.grad_reduce_in_fp32 false after runtime_config_update(), the plan's fp32"
    # Adam's moments as the plan counts them, the main gradients in fp32
    # (the DeepSeek-V3 recipe's are bf16)
    moments = torch.bfloat16 if j.get("moments") == "bf16" else torch.float32
    o = cfg.optimizer
    if (o.exp_avg_dtype, o.exp_avg_sq_dtype, o.main_grads_dtype) != (
            moments, moments, torch.float32):
        return (f"optimizer moments {o.exp_avg_dtype}, {o.exp_avg_sq_dtype}, main gradients "
                f"{o.main_grads_dtype}; the plan's moments {moments}")
    # dtplan's models have no multi-token prediction (the DeepSeek-V3
    # recipe's provider has one MTP layer)
    if getattr(cfg.model, "mtp_num_layers", None):
        return f"model.mtp_num_layers {cfg.model.mtp_num_layers}, none in the plan"
    if got != want:
        return f"applied TP, PP, EP, CP, ETP {got}, the plan's {want}"
    return None


def quiet_check(p):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return check(p)
        except Exception as e:
            return f"{type(e).__name__}: {e}"


fwstubs.run_sweep(plans, quiet_check, "override sets apply in struct mode and validate")
