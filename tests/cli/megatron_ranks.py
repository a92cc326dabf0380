#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks a plan's ranks against the process groups Megatron-LM forms.

An independent re-implementation, from reading it, of Megatron-LM's
RankGenerator and generate_masked_orthogonal_rank_groups()
(megatron/core/parallel_state.py at commit
d98e8a64ddf34856e74b24714e3bedb2f5a39553): the decoder generator over
tp, cp, dp, pp (ep 1) in the order "tp-cp-ep-dp-pp" (or "tp-cp-ep-pp-dp"
with --use-tp-pp-dp-mapping), and the expert generator over expert-tp
(--expert-tensor-parallel-size, tp when unset), ep, expert-dp = world /
(etp ep pp), pp with cp 1 in the same order (MoE parallel folding).  A
rank's coordinate in a kind of group is its index in the group that holds
it (torch.distributed.new_group() ranks in ascending order).

Usage: megatron_ranks.py PLAN.json [MEGATRON_LM_DIR]
(dtplan plan --json on an allocation).  With a Megatron-LM source tree, its
own RankGenerator (parallel_state.py loaded alone, its two imports from the
package stubbed: it needs numpy and torch importable) forms the groups too,
and both must agree with the plan.  Prints "ok N" after checking N ranks
("ok N, Megatron-LM's RankGenerator too"), or every mismatch and exits 1.
"""
import importlib.util
import json
import os
import sys
import types


def groups(sizes, order, token):
    """The groups of `token` ("tp", "ep", "tp-ep", ...) for `sizes` (name ->
    degree) in `order`: each group lists the ranks whose coordinates outside
    the token agree, the token's coordinates running fastest-first."""
    names = order.split("-")
    for n in sizes:
        if n not in names:
            if sizes[n] != 1:
                raise ValueError(f"{n} = {sizes[n]} is not in the order {order}")
            names.append(n)
    shape = [sizes[n] for n in names]
    stride = [1]
    for s in shape:
        stride.append(stride[-1] * s)
    world = stride[-1]
    inside = [n in token.split("-") for n in names]
    # every rank's coordinates, then grouped by those outside the token
    by_key = {}
    for r in range(world):
        coord = [(r // stride[i]) % shape[i] for i in range(len(names))]
        key = tuple(c for c, m in zip(coord, inside) if not m)
        by_key.setdefault(key, []).append(r)
    return [sorted(g) for g in by_key.values()]


def index_in(gs):
    """rank -> its position in the group that holds it."""
    at = {}
    for g in gs:
        for i, r in enumerate(g):
            if r in at:
                raise ValueError(f"rank {r} in two groups")
            at[r] = i
    return at


def megatron_generator(src):
    """megatron/core/parallel_state.py of the tree at src, loaded alone:
    RankGenerator is plain Python over numpy; the module's package imports
    (GlobalMemoryBuffer, SymmetricMemoryManager) are stubbed."""
    def pkg(name, path=None):
        m = types.ModuleType(name)
        if path:
            m.__path__ = [path]
        sys.modules[name] = m
        return m
    pkg("megatron", os.path.join(src, "megatron"))
    pkg("megatron.core", os.path.join(src, "megatron", "core"))
    u = pkg("megatron.core.utils")
    u.GlobalMemoryBuffer = object
    u.is_torch_min_version = lambda *a, **k: True
    pkg("megatron.core.inference")
    pkg("megatron.core.inference.symmetric_memory").SymmetricMemoryManager = object
    path = os.path.join(src, "megatron", "core", "parallel_state.py")
    spec = importlib.util.spec_from_file_location("megatron.core.parallel_state", path)
    ps = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ps
    spec.loader.exec_module(ps)
    return ps.RankGenerator


def main():
    j = json.load(open(sys.argv[1]))
    rank_generator = megatron_generator(sys.argv[2]) if len(sys.argv) > 2 else None
    par, place = j["parallelism"], j["placement"]
    tp, pp, dp = par["tp"], par["pp"], par["dp"]
    cp, ep = max(par.get("cp", 1), 1), max(par.get("ep", 1), 1)
    etp = par.get("etp", tp)
    world = tp * cp * dp * pp
    # the order Megatron-LM initialises with (initialize_model_parallel())
    order = "tp-cp-ep-pp-dp" if place["rank_order"].endswith("-dp") else "tp-cp-ep-dp-pp"
    dense = {"tp": tp, "cp": cp, "ep": 1, "dp": dp, "pp": pp}
    if world % (etp * ep * pp) != 0:
        raise ValueError("world is not a multiple of expert tp x ep x pp")
    expert = {"tp": etp, "cp": 1, "ep": ep, "dp": world // (etp * ep * pp), "pp": pp}
    if not order.endswith("pp") and pp > 1 and expert["dp"] != dp:
        raise ValueError("Megatron-LM refuses this order: expert and dense DP differ")
    # Megatron asserts the two generators' pipeline groups agree
    if sorted(groups(dense, order, "pp")) != sorted(groups(expert, order, "pp")):
        raise ValueError("pipeline groups of the two generators differ")
    want = {
        "tp_rank": index_in(groups(dense, order, "tp")),
        "cp_rank": index_in(groups(dense, order, "cp")),
        "dp_rank": index_in(groups(dense, order, "dp")),
        "pp_rank": index_in(groups(dense, order, "pp")),
        "ep_rank": index_in(groups(expert, order, "ep")),
        "etp_rank": index_in(groups(expert, order, "tp")),
        "edp_rank": index_in(groups(expert, order, "dp")),
    }
    bad = 0
    if rank_generator is not None:
        # Megatron-LM's own, as initialize_model_parallel() builds them
        dec = rank_generator(tp=tp, ep=1, dp=dp, pp=pp, cp=cp, order=order, rank_offset=0)
        exp = rank_generator(tp=etp, ep=ep, dp=world // (etp * ep * pp), pp=pp, cp=1,
                             order=order, rank_offset=0)
        theirs = {
            "tp_rank": index_in(dec.get_ranks("tp")),
            "cp_rank": index_in(dec.get_ranks("cp")),
            "dp_rank": index_in(dec.get_ranks("dp")),
            "pp_rank": index_in(dec.get_ranks("pp")),
            "ep_rank": index_in(exp.get_ranks("ep")),
            "etp_rank": index_in(exp.get_ranks("tp")),
            "edp_rank": index_in(exp.get_ranks("dp")),
        }
        if sorted(map(sorted, dec.get_ranks("pp"))) != sorted(map(sorted, exp.get_ranks("pp"))):
            print("Megatron-LM's two generators' pipeline groups differ")
            bad += 1
        for field in want:
            if theirs[field] != want[field]:
                print(f"{field}: the re-derivation and Megatron-LM's RankGenerator differ")
                bad += 1
    ranks = place["ranks"]
    if len(ranks) != world:
        print(f"{len(ranks)} ranks, the split makes {world}")
        bad += 1
    for k in ranks:
        r = k["rank"]
        for field, at in want.items():
            if field not in k and field in ("etp_rank", "edp_rank"):
                # written only where the experts' coordinates are not the
                # attention's: ETP is TP, expert DP the CP x DP rank
                if ep > 1 or etp != tp:
                    print(f"rank {r}: no {field} in a plan with EP {ep}, ETP {etp}")
                    bad += 1
                continue
            if k[field] != at[r]:
                print(f"rank {r}: {field} {k[field]}, Megatron-LM {at[r]}")
                bad += 1
    if bad:
        sys.exit(1)
    print(f"ok {len(ranks)}" + (", Megatron-LM's RankGenerator too" if rank_generator else ""))


if __name__ == "__main__":
    main()
