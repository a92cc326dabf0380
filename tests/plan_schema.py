#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/plan_schema.py: checks plan JSON files against the dtplan.plan/1 schema.

Usage: plan_schema.py SCHEMA FILE...

Validates SCHEMA itself, then each FILE against it, with one rule stricter than
JSON Schema's: an "integer" must be a JSON integer (5, not 5.0).  Then checks
what a schema cannot say: the trained batch is dp x micro-batch x micro-batches,
the stages hold every layer, interleaving divides every stage, ZeRO-Offload
runs with ZeRO, the time to train is its steps at the plan's step, ranks are
numbered in order on the plan's nodes, and DeepSpeed's batch identity holds.  Prints one line per problem, naming the
file and the place in it.  Exit status 0 when all is well, 1 otherwise, 77 (skip)
when python3 has no jsonschema module (apt-get install python3-jsonschema).
"""
import json
import sys

try:
    import jsonschema
    import jsonschema.validators
except ImportError:
    print("plan_schema: python3 has no jsonschema module; skipped", file=sys.stderr)
    sys.exit(77)


def strict_validator(schema):
    """The schema's validator class, with integers that must be JSON integers."""
    base = jsonschema.validators.validator_for(schema)
    base.check_schema(schema)
    checker = base.TYPE_CHECKER.redefine(
        "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
    return jsonschema.validators.extend(base, type_checker=checker)(schema)


def where(path):
    return "".join("[%d]" % p if isinstance(p, int) else ".%s" % p for p in path) or "(top)"


def semantics(j):
    """Problems a schema cannot express, as (place, text) pairs."""
    out = []
    par = j["parallelism"]
    if par["global_batch"] != par["dp"] * par["micro_batch"] * par["num_microbatches"]:
        out.append(("parallelism.global_batch", "not dp x micro_batch x num_microbatches"))
    if par["global_batch"] != j["global_batch"]:
        out.append(("global_batch", "differs from parallelism.global_batch"))
    if len(par["layers_per_stage"]) != par["pp"]:
        out.append(("parallelism.layers_per_stage", "not one entry per stage"))
    elif sum(par["layers_per_stage"]) != j["model"]["layers"]:
        out.append(("parallelism.layers_per_stage", "does not hold model.layers"))
    if par["tp"] * par["cp"] * par["pp"] * par["dp"] != j["gpus"]:
        out.append(("parallelism", "tp x cp x pp x dp is not gpus"))
    if par["dp"] % par["ep"] != 0 or (par["ep"] > 1 and j["model"]["experts"] % par["ep"]):
        out.append(("parallelism.ep", "EP must divide dp and the experts"))
    if j["model"]["active_params"] is not None and j["model"]["params"] is not None and \
            j["model"]["active_params"] > j["model"]["params"]:
        out.append(("model.active_params", "more than model.params"))
    if par["vp"] > 1 and (par["pp"] < 2 or any(n % par["vp"] for n in par["layers_per_stage"])):
        out.append(("parallelism.vp", "interleaving needs stages whose layers it divides"))
    if par["offload"] and par["zero"] < 1:
        out.append(("parallelism.offload", "ZeRO-Offload without ZeRO"))
    tr = j["training"]
    if tr is not None:
        tokens_per_step = j["global_batch"] * j["model"]["seq"]
        if tr["steps"] != -(-int(tr["tokens"]) // tokens_per_step):
            out.append(("training.steps", "not tokens / (global_batch x seq), rounded up"))
        elif abs(tr["compute_seconds"] - tr["steps"] * j["prediction"]["step_seconds"]) > \
                1e-9 * tr["compute_seconds"]:
            out.append(("training.compute_seconds", "not steps x prediction.step_seconds"))
        elif tr["wall_seconds"] is not None and tr["goodput"] and \
                abs(tr["wall_seconds"] * tr["goodput"] - tr["compute_seconds"]) > \
                1e-9 * tr["compute_seconds"]:
            out.append(("training.wall_seconds", "not compute_seconds / goodput"))
    pl = j.get("placement")
    if pl is not None:
        if len(pl["ranks"]) != j["gpus"]:
            out.append(("placement.ranks", "not one rank per GPU"))
        for i, r in enumerate(pl["ranks"]):
            if r["rank"] != i or r["node"] >= len(pl["nodes"]):
                out.append(("placement.ranks[%d]" % i, "out of order or on no node"))
            etp = par.get("etp", par["tp"])
            if r["ep_rank"] != r["rank"] // etp % par["ep"] or r["cp_rank"] >= par["cp"]:
                out.append(("placement.ranks[%d]" % i, "ep_rank or cp_rank out of place"))
                break
    ln = j["launch"]
    if ln is not None:
        ds = ln["deepspeed"]
        if (ds["train_batch_size"] != ds["train_micro_batch_size_per_gpu"]
                * ds["gradient_accumulation_steps"] * par["dp"]):
            out.append(("launch.deepspeed", "train_batch_size is not micro x accumulation x dp"))
        if ds["zero_optimization"]["stage"] != par["zero"] or \
                ("offload_optimizer" in ds["zero_optimization"]) != par["offload"]:
            out.append(("launch.deepspeed.zero_optimization",
                        "stage or offload_optimizer differ from parallelism"))
        if ln["env"]["DT_MEGATRON_ARGS"] != ln["megatron_args"]:
            out.append(("launch.env.DT_MEGATRON_ARGS", "differs from launch.megatron_args"))
    return out


def check_files(argv, doc, semantics=None):
    """The main of this checker and of tests/cli_schema.py: argv is
    [program, SCHEMA, FILE...]; doc the program's usage; semantics(j) the
    problems beyond the schema, as (place, text) pairs, or None."""
    if len(argv) < 3:
        print(doc.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        validator = strict_validator(json.load(f))
    bad = 0
    for name in argv[2:]:
        try:
            with open(name) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: %s" % (name, e))
            bad += 1
            continue
        errors = sorted(validator.iter_errors(j), key=lambda e: list(e.absolute_path))
        for e in errors:
            print("%s: %s: %s" % (name, where(e.absolute_path), e.message))
        problems = [] if errors or semantics is None else semantics(j)
        for place, text in problems:
            print("%s: %s: %s" % (name, place, text))
        bad += 1 if errors or problems else 0
    return 1 if bad else 0


def main(argv):
    return check_files(argv, __doc__, semantics)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
