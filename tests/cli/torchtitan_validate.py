#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs plans' torchtitan options through torchtitan's own configuration.

Usage: torchtitan_validate.py TORCHTITAN_DIR PLAN.json...

For each plan (dtplan plan --json), the launch line of doc/launchers.md:
-m torchtitan.train --module M --config C $DT_TORCHTITAN_ARGS.  torchtitan's
ConfigManager.parse_args() (torchtitan/config/manager.py) hands the words to
tyro.cli() over the recipe's Trainer.Config; tyro is not on this machine, so
the words are read as tyro reads them, narrowly: "--SECTION.FIELD VALUE"
for a field of Trainer.Config's section dataclass (a bool field a flag,
--FIELD or --no-FIELD, as tyro makes it), the activation_checkpoint union
field's subcommand "activation-checkpoint:NAME" last, its name one of the
tyro.conf.subcommand() names of torchtitan/distributed/
activation_checkpoint.py.  Each value is converted by the field's own type
hint (int, str, bool, Literal choices, X | None) or refused as tyro would.
Then, with torchtitan's own, unmodified code:

  * each section is the section's default with the values set
    (dataclasses.replace(), which runs the dataclass's __post_init__ checks:
    TrainingConfig's token counts, ParallelismConfig's, the checkpoint
    Config's interval);
  * Trainer.Config(...) of those sections and the subcommand's policy,
    model_spec None (ModelSpec is set by the model registry, not the
    command line), runs Trainer.Config.__post_init__ (microbatches, CUDA
    graphs with PP, memory-budget AC with compile);
  * ParallelDims.from_config(parallelism, the plan's GPUs) runs
    ParallelDims._validate() (the degrees' product is the world, EP divides
    dp_shard x cp x tp), as Trainer.__init__ does;
  * the gradient accumulation steps Trainer.__init__ derives from the token
    counts (torchtitan/trainer.py) are the plan's, and the policy is a
    checkpoint being saved where the plan asks one (checkpoint.enable).

Prints "ok PLAN" or "FAIL PLAN: the error" for each, a summary line, and
exits 1 on any failure.

What this machine's Python (Debian 12, torch 1.13) cannot give torchtitan's
imports is stubbed, only where the real import fails, each named on stderr:
tyro (not packaged by Debian; manager.py and the Annotated metadata of
Trainer.Config and activation_checkpoint.py use it), spmd_types, grain,
datasets, tokenizers, tensorboard, triton (not installed), the PyTorch 2.x
modules and names torchtitan imports at load time (torch.distributed.tensor,
.device_mesh, .pipelining, ._functional_collectives, ._symmetric_memory,
torch.distributed.checkpoint with a plain Stateful base class, torch.compiler,
torch._inductor, torch._functorch, torch.nn.attention, torch.nn.RMSNorm,
torch.compile, torch.library.custom_op, torch.optim.lr_scheduler.LRScheduler,
torch._utils._get_device_module, torch.utils.checkpoint's CheckpointPolicy
and create_selective_checkpoint_contexts), and torch.utils.tensorboard.  None
of them is in the configuration code under test.
"""
import contextlib
import dataclasses
import io
import json
import sys
import types
import typing

import fwstubs

STUB_MODULES = ["tyro", "spmd_types", "grain", "datasets", "tokenizers", "tensorboard",
                "triton", "torch.distributed.checkpoint", "torch.distributed.tensor",
                "torch.distributed.device_mesh", "torch.distributed.pipelining",
                "torch.distributed._functional_collectives",
                "torch.distributed._symmetric_memory", "torch.utils.tensorboard",
                "torch.compiler", "torch._inductor", "torch._functorch", "torch.nn.attention"]
STUB_ATTRS = ["torch._utils._get_device_module", "torch.optim.lr_scheduler.LRScheduler",
              "torch.nn.RMSNorm", "torch.compile", "torch.library.custom_op",
              "torch.utils.checkpoint.CheckpointPolicy",
              "torch.utils.checkpoint.create_selective_checkpoint_contexts"]


class Refused(Exception):
    """What tyro would refuse: an unknown option or a value not of its type."""


def convert(hint, v, name):
    """v as the field's type hint says, as tyro converts it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        if v not in args:
            raise Refused(f"{name} {v}: not one of {', '.join(map(str, args))}")
        return v
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and v == "None":
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return convert(a, v, name)
            except Refused:
                pass
        raise Refused(f"{name} {v}: not {hint}")
    if hint is int:
        try:
            return int(v)
        except ValueError:
            raise Refused(f"{name} {v}: not an int") from None
    if hint is float:
        try:
            return float(v)
        except ValueError:
            raise Refused(f"{name} {v}: not a float") from None
    if hint is str:
        return v
    raise Refused(f"{name}: a {hint} field, not read here")


def subcommands(ac_hint):
    """activation-checkpoint:NAME -> its Config class, from the union's
    Annotated tyro.conf.subcommand(NAME) metadata (the stand-in tyro keeps
    the call's argument)."""
    out = {}
    for member in typing.get_args(ac_hint):
        cls, meta = typing.get_args(member)[0], typing.get_args(member)[1:]
        for m in meta:
            if getattr(m, "subcommand_name", None):
                out["activation-checkpoint:" + m.subcommand_name] = (
                    None if cls is type(None) else cls)
    return out


def check(plan, trainer_mod, parallel_dims):
    """None when torchtitan takes the plan's options, else why not."""
    j = json.load(open(plan))
    words = j["launch"]["torchtitan_args"].split()
    Config = trainer_mod.Trainer.Config
    hints = typing.get_type_hints(Config, include_extras=True)
    sections = {f.name: f for f in dataclasses.fields(Config)}
    subs = subcommands(hints["activation_checkpoint"])
    values, ac = {}, trainer_mod.SelectiveAC.Config
    try:
        i = 0
        while i < len(words):
            w = words[i]
            if w in subs:
                if i != len(words) - 1:
                    raise Refused(f"{w}: options after the subcommand are its own")
                ac = subs[w]
                i += 1
                continue
            if not w.startswith("--") or "." not in w:
                raise Refused(f"{w}: not an option")
            sec, _, name = w[2:].partition(".")
            name = name.replace("-", "_")
            neg = name.startswith("no_")
            if sec not in sections or sec == "activation_checkpoint":
                raise Refused(f"{w}: Trainer.Config has no section {sec}")
            cls = sections[sec].default_factory
            fh = typing.get_type_hints(cls)
            field = name[3:] if neg and name[3:] in fh else name
            if field not in fh:
                raise Refused(f"{w}: {cls.__qualname__} has no field {field}")
            if fh[field] is bool:  # tyro's flag pair
                values.setdefault(sec, {})[field] = not neg
                i += 1
                continue
            if i + 1 >= len(words):
                raise Refused(f"{w}: no value")
            values.setdefault(sec, {})[field] = convert(fh[field], words[i + 1], w)
            i += 2
        made = {}
        for sec, kv in values.items():
            made[sec] = dataclasses.replace(sections[sec].default_factory(), **kv)
        config = Config(**made, activation_checkpoint=None if ac is None else ac())
        dims = parallel_dims.ParallelDims.from_config(config.parallelism, j["gpus"])
    except Refused as e:
        return f"tyro would refuse {e}"
    except (ValueError, AssertionError, TypeError) as e:
        return f"{type(e).__name__}: {e}".replace("\n", " ")
    par = j["parallelism"]
    # Trainer.__init__'s gradient accumulation (torchtitan/trainer.py)
    pp_mb = config.parallelism.num_pp_microbatches if dims.pp > 1 else 1
    per_dp = config.training.num_tokens_per_microbatch_per_dp_rank * pp_mb
    dp = dims.dp_replicate * dims.dp_shard
    step = config.training.num_tokens_per_train_step
    if step % (per_dp * dp) != 0:
        return f"training.num_tokens_per_train_step {step} is not a multiple of {per_dp * dp}"
    if dp != par["dp"]:
        return f"torchtitan's data-parallel degree {dp}, the plan's {par['dp']}"
    if (step // (per_dp * dp)) * pp_mb != par["num_microbatches"]:
        return (f"torchtitan accumulates {step // (per_dp * dp)} x {pp_mb} micro-batches, "
                f"the plan {par['num_microbatches']}")
    if "--checkpoint.interval" in words and not config.checkpoint.enable:
        return "checkpoint.interval is set but checkpoint.enable is off: nothing is saved"
    return None


def main():
    _, plans = fwstubs.tree_and_plans(__doc__)
    stubbed = fwstubs.install(STUB_MODULES, STUB_ATTRS)
    if "tyro" in stubbed:
        # tyro.conf.subcommand(NAME): keep NAME, which names the subcommand
        sys.modules["tyro"].conf = type("conf", (), {
            "subcommand": staticmethod(lambda name=None, **k: type(
                "subcommand", (), {"subcommand_name": name})()),
            "Suppress": fwstubs._Meta("Suppress", (fwstubs._Any,), {})})
    if "torch.distributed.checkpoint" in stubbed:
        import torch.distributed.checkpoint.stateful as st
        st.Stateful = type("Stateful", (), {})
    with contextlib.redirect_stdout(io.StringIO()):
        import torchtitan.trainer as trainer_mod
        import torchtitan.distributed.parallel_dims as parallel_dims
    print("stubbed: " + (", ".join(stubbed) or "nothing"), file=sys.stderr)
    def quiet_check(plan):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return check(plan, trainer_mod, parallel_dims)

    fwstubs.run_sweep(plans, quiet_check, "option sets pass Trainer.Config")


if __name__ == "__main__":
    main()
