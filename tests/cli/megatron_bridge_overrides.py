#!/usr/bin/env python3
"""Applies plans' Megatron-Bridge overrides as Megatron-Bridge applies them.

Usage: megatron_bridge_overrides.py MEGATRON_LM_DIR MEGATRON_BRIDGE_DIR PLAN.json...

For each plan (dtplan plan --json) of a Llama 3 model, Bridge's own recipe
function for it (src/megatron/bridge/recipes/llama/h100/llama3.py:
llama3_8b_pretrain_2gpu_h100_bf16_config, llama3_70b_pretrain_32gpu_h100_
bf16_config, llama31_405b_pretrain_256gpu_h100_bf16_config) builds the
ConfigContainer; DT_MEGATRON_BRIDGE_OVERRIDES go through Bridge's own
omegaconf_utils (training/utils/omegaconf_utils.py):
create_omegaconf_dict_config(), struct mode, then OmegaConf.to_container()
and apply_overrides() back onto the dataclasses; then
runtime_config_update() (training/config.py: the mixed-precision recipe,
the data-parallel size, communication overlap, ConfigContainer.validate()),
with WORLD_SIZE the plan's GPUs and model.seq_length the dataset's, as
scripts/training/run_recipe.py does.  The plan's TP, PP and fp8 (or
none) must be the applied config's.  Prints "ok PLAN" or "FAIL PLAN: the error", a summary
line, and exits 1 on any failure.

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
    (transformers, network): its get_model_config() is Bridge's own
    LlamaBridge().hf_config_to_model_config() over the config.json values
    (the plan's sizes, the intermediate size megatron_validate.py's ARCH
    names, Llama 3's vocabulary 128256 and RoPE base 500000);
  * the modules megatron_validate.py stubs for Megatron-LM, and for
    Bridge's imports hydra, transformers, flash_attn, safetensors, rich,
    filelock, einops, datasets, PIL, tensorboard, torch.utils.tensorboard,
    diffusers, modelopt, megatron.energon (not installed), torch.float8_
    e4m3fn/e5m2 (PyTorch 2.1), torch.no_grad as a bare decorator (2.0);
    each is named on stderr, none is in the code under test.
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
torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    from megatron.bridge.models.llama.llama_bridge import LlamaBridge
    import megatron.bridge.recipes.llama.h100.llama3 as llama3
    from megatron.bridge.training.utils import omegaconf_utils as ou
from omegaconf import OmegaConf  # noqa: E402

print("stubbed: " + ", ".join(stubbed + ["torch.no_grad (bare decorator)"]), file=sys.stderr)

RECIPE = {"llama3-8b": "llama3_8b_pretrain_2gpu_h100_bf16_config",
          "llama3-70b": "llama3_70b_pretrain_32gpu_h100_bf16_config",
          "llama3-405b": "llama31_405b_pretrain_256gpu_h100_bf16_config"}


def hf_config(m):
    a = mv.ARCH[m["name"]]
    return types.SimpleNamespace(
        hidden_size=m["hidden"], intermediate_size=a["ffn"], num_attention_heads=m["heads"],
        num_hidden_layers=m["layers"], num_key_value_heads=m["kv_heads"], rms_norm_eps=1e-5,
        rope_theta=500000.0, vocab_size=128256, max_position_embeddings=8192, hidden_act="silu",
        tie_word_embeddings=False, torch_dtype=torch.bfloat16, attention_bias=False,
        mlp_bias=False, rope_scaling=None, initializer_range=0.02,
        architectures=["LlamaForCausalLM"], model_type="llama", head_dim=m["hidden"] // m["heads"])


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
    name = j["model"]["name"]
    mc = LlamaBridge().hf_config_to_model_config(hf_config(j["model"]))
    llama3.AutoBridge = types.SimpleNamespace(
        from_hf_pretrained=lambda path, **k: types.SimpleNamespace(get_model_config=lambda: mc))
    cfg = getattr(llama3, RECIPE[name])()
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
    got = (cfg.model.tensor_model_parallel_size, cfg.model.pipeline_model_parallel_size)
    # the plan's fp8 survives MixedPrecisionConfig.setup()
    want_fp8 = ("e4m3" if j["gpu"]["name"] in ("b200", "gb200") else "hybrid") if (
        j.get("request", {}).get("precision") == "fp8" or "fp8" in ov) else None
    if cfg.model.fp8 != want_fp8:
        return f"model.fp8 after runtime_config_update() {cfg.model.fp8!r}, the plan's {want_fp8!r}"
    if got != (par["tp"], par["pp"]):
        return f"applied TP, PP {got}, the plan's {(par['tp'], par['pp'])}"
    return None


def quiet_check(p):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return check(p)
        except Exception as e:
            return f"{type(e).__name__}: {e}"


fwstubs.run_sweep(plans, quiet_check, "override sets apply in struct mode and validate")
