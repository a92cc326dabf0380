#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs plans' DeepSpeed fragments through DeepSpeed's own configuration checks.

Usage: deepspeed_config.py DEEPSPEED_DIR PLAN.json...

For each plan (dtplan plan --json), its launch.deepspeed fragment goes, as
the plan's world would give it, through DeepSpeed's own, unmodified code
(read at edaa7221267243c7be7fb49c5d5f5c4fb97b4641):

  * deepspeed/runtime/config.py DeepSpeedConfig(fragment, mpu): its data-
    parallel world (mpu.get_data_parallel_world_size(), else the world
    divided by the fragment's sequence_parallel_size, else the world),
    _batch_assertion() (train_batch_size = micro-batch x accumulation x that
    world) and _do_error_check() (ZeRO stage); the stage, bf16 and offload
    it reads must be the plan's.  The mpu is the launch recipe's of
    doc/launchers.md: with PP, PipelineModule's, whose data-parallel size is
    DeepSpeed's own PipeModelDataParallelTopology (deepspeed/runtime/pipe/
    topology.py) of the plan's PP x DP x TP, its axis 'data'; with TP and no
    PP, Megatron's parallel_state, DP; with neither, none.
  * With PP, every rank's pipe, data and model coordinate in that topology
    (ProcessTopology(['data', 'pipe', 'model']) for a tp-pp-dp plan) is the
    plan's pp_rank, dp_rank and tp_rank.
  * With PP, PipelineEngine.__init__'s ZeRO check (deepspeed/runtime/pipe/
    engine.py); with ZeRO-3 and experts, DeepSpeedEngine.
    _validate_zero3_moe_compatibility() (deepspeed/runtime/engine.py) on a
    model with DeepSpeed's own MoE layer (deepspeed.moe.layer.MoE).  Both
    run on an engine object that holds only the DeepSpeedConfig and the
    module (DeepSpeedEngine.__init__, which needs a device and process
    groups, is not run); the pipeline check counts as passed when
    __init__ gets past it.
  A plan DeepSpeed refuses must say why in launch.deepspeed_unsupported, and
  one it takes must not.

deepspeed.comm's get_rank() and get_world_size() answer rank 0 of the plan's
world (no process group of that size runs here).  What this Python lacks
for DeepSpeed's imports is stubbed where the real import fails (tests/cli/
fwstubs.py; named on stderr): hjson (DeepSpeedConfig gets the fragment as
a dict, parsed by json: the fragment is JSON, which hjson reads the same),
msgpack and einops (checkpoint and sequence modules), and for torch 1.13
the PyTorch 2.x names deepspeed/compile imports at load time:
torch.utils._sympy, torch._functorch,
torch._subclasses.fake_tensor.maybe_get_fake_mode, and
torch.library.custom_op (the op as its Python function), register_fake and
register_autograd.  DeepSpeed needs pydantic 2 (Debian 12 has 1.10).
Prints "ok PLAN" or "FAIL PLAN: why" for each and a summary; exits 1 on
any failure.
"""
import json
import os
import sys

import fwstubs

STUB_MODULES = ["hjson", "msgpack", "einops", "torch.utils._sympy", "torch._functorch"]
STUB_ATTRS = {
    "torch._subclasses.fake_tensor.maybe_get_fake_mode": None,
    "torch.library.custom_op": fwstubs.custom_op,
    "torch.library.register_fake": lambda *a, **k: fwstubs.identity,
    "torch.library.register_autograd": lambda *a, **k: None,
}


class Mpu:
    """The one call DeepSpeedConfig makes of an mpu."""

    def __init__(self, dp):
        self.dp = dp

    def get_data_parallel_world_size(self):
        return self.dp


def engine_refusals(cfg, j, ds):
    """What DeepSpeed's engines refuse of the plan, by running their checks."""
    import torch
    from deepspeed.moe.layer import MoE
    from deepspeed.runtime.engine import DeepSpeedEngine
    from deepspeed.runtime.pipe.engine import PipelineEngine
    from deepspeed.runtime.pipe.module import PipelineModule

    par, why = j["parallelism"], []

    def bare(cls):
        o = cls.__new__(cls)
        torch.nn.Module.__init__(o)
        return o

    if par["pp"] > 1:
        saved = DeepSpeedEngine.__init__

        def config_only(self, *a, **k):
            torch.nn.Module.__init__(self)
            self._config = cfg
            # where DeepSpeedEngine.__getattr__ looks for it
            self.__dict__["module"] = bare(PipelineModule)

        DeepSpeedEngine.__init__ = config_only
        try:
            PipelineEngine.__init__(PipelineEngine.__new__(PipelineEngine))
        except AssertionError as e:
            why.append(f"PipelineEngine: {e}")
        except AttributeError:  # past its checks, where a real engine's state is wanted
            pass
        finally:
            DeepSpeedEngine.__init__ = saved
    if j["model"]["experts"] > 0 and cfg.zero_optimization_stage == 3:
        eng = bare(DeepSpeedEngine)
        eng._config = cfg
        eng.has_moe_layers = True
        eng.sequence_parallel_size = max(par["cp"], 1)
        eng.__dict__["module"] = torch.nn.Module()
        eng.module.add_module("moe", bare(MoE))
        try:
            DeepSpeedEngine._validate_zero3_moe_compatibility(eng)
        except AssertionError as e:
            why.append(f"DeepSpeedEngine: {e}")
    return why


def topology_mismatch(j, topo_cls, proc_cls):
    """The first rank whose coordinate in DeepSpeed's topology is not the plan's."""
    par, place = j["parallelism"], j.get("placement")
    tp, pp, dp = par["tp"], par["pp"], par["dp"]
    if place is None or not place.get("ranks"):
        return None
    if place["rank_order"].endswith("-dp"):
        topo = proc_cls(axes=["data", "pipe", "model"], dims=[dp, pp, tp])
    else:
        topo = topo_cls(num_pp=pp, num_mp=tp, num_dp=dp)
    for k in place["ranks"]:
        c = topo.get_coord(k["rank"])
        if (c.pipe, c.data, c.model) != (k["pp_rank"], k["dp_rank"], k["tp_rank"]):
            return (f"rank {k['rank']}: DeepSpeed's pipe/data/model {c.pipe}/{c.data}/{c.model},"
                    f" the plan's {k['pp_rank']}/{k['dp_rank']}/{k['tp_rank']}")
    return None


def check(plan, ds):
    """None when DeepSpeed agrees with the plan, else why not."""
    from deepspeed.runtime.config import DeepSpeedConfig
    from deepspeed.runtime.pipe.topology import PipeModelDataParallelTopology, ProcessTopology

    j = json.load(open(plan))
    frag, par = j["launch"]["deepspeed"], j["parallelism"]
    tp, pp, dp, cp = par["tp"], par["pp"], par["dp"], max(par["cp"], 1)
    world = tp * pp * dp * cp
    ds.comm.get_rank = lambda group=None: 0
    ds.comm.get_world_size = lambda group=None: world
    if pp > 1:
        # PipelineModule's grid: the world over pipe x model, the rest 'data'
        mpu = Mpu(PipeModelDataParallelTopology(num_pp=pp, num_mp=tp,
                                                num_dp=world // (pp * tp)).get_dim("data"))
    elif tp > 1:
        mpu = Mpu(dp)  # Megatron's parallel_state
    else:
        mpu = None
    refused = []
    try:
        cfg = DeepSpeedConfig(json.loads(json.dumps(frag)), mpu)
    except (AssertionError, ValueError) as e:
        refused.append(f"DeepSpeedConfig: {e}")
        cfg = None
    if cfg is not None:
        got = (cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu,
               cfg.gradient_accumulation_steps, cfg.zero_optimization_stage,
               cfg.bfloat16_config.enabled)
        want = (par["global_batch"], par["micro_batch"], par["num_microbatches"], par["zero"],
                True)
        if got != want:
            return f"DeepSpeed reads batch, micro-batch, steps, stage, bf16 {got}, the plan's {want}"
        device = cfg.zero_config.offload_optimizer.device if cfg.zero_config.offload_optimizer \
            else None
        if (str(device).endswith("cpu")) != bool(par["offload"]):
            return f"DeepSpeed's optimizer offload {device}, the plan's {par['offload']}"
        refused += engine_refusals(cfg, j, ds)
    if pp > 1 and cp == 1:  # with CP the grid lacks the axis: refused above
        bad = topology_mismatch(j, PipeModelDataParallelTopology, ProcessTopology)
        if bad:
            return bad
    unsupported = j["launch"].get("deepspeed_unsupported")
    if refused and not unsupported:
        return "DeepSpeed refuses it and the plan does not say so: " + "; ".join(refused)
    if unsupported and not refused:
        return f"the plan says \"{unsupported}\", and DeepSpeed takes it"
    return None


def main():
    _, plans = fwstubs.tree_and_plans(__doc__)
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    stubbed = fwstubs.install(STUB_MODULES, STUB_ATTRS)
    import logging

    import deepspeed
    import deepspeed.comm
    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    print("stubbed: " + (", ".join(stubbed) or "nothing"), file=sys.stderr)
    fwstubs.run_sweep(plans, lambda plan: check(plan, deepspeed), "fragments pass DeepSpeed's checks")


if __name__ == "__main__":
    main()
