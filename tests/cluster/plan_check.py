#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""plan_check.py: checks a job's dtplan plan file against what the job saw.

Usage:
  plan_check.py parallelism PLAN.json
      prints "tp pp dp zero micro_batch" of the plan (also works on the JSON of
      `dtplan plan --json`).
  plan_check.py ranks PLAN.json TASKS.txt
      TASKS.txt holds one line per task of an srun step:
        TASK <host> RANK=.. WORLD_SIZE=.. LOCAL_RANK=.. LOCAL_WORLD_SIZE=..
             DT_TP_RANK=.. DT_PP_RANK=.. DT_DP_RANK=.. NCCL_IB_HCA=..
      Checks that every rank of placement.ranks ran exactly once, on the node
      the plan put it on, with the plan's local rank and tp/pp/dp ranks, that
      WORLD_SIZE and LOCAL_WORLD_SIZE match the plan, that NCCL_IB_HCA is
      unset (the default) or lists every NIC of the node ("=<nic>,<nic>",
      nccl_ib_hca=node), never one NIC per rank, and that every TP group sits
      on one node.  Prints "ranks: N ok" or the mismatches
      (exit 1).
"""

import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def parallelism(path):
    p = load(path)["parallelism"]
    print(p["tp"], p["pp"], p["dp"], p["zero"], p["micro_batch"])
    return 0


def parse_tasks(path):
    tasks = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or words[0] != "TASK":
                continue
            t = {"host": words[1]}
            for w in words[2:]:
                k, _, v = w.partition("=")
                t[k] = v
            tasks.append(t)
    return tasks


def ranks(plan_path, tasks_path):
    plan = load(plan_path)
    par = plan["parallelism"]
    world = par["tp"] * par["pp"] * par["dp"]
    placement = plan.get("placement")
    if not placement or not placement.get("ranks"):
        print("plan %s has no placement.ranks" % plan_path)
        return 1
    nodes = placement["nodes"]
    pranks = placement["ranks"]
    bad = []
    if len(pranks) != world:
        bad.append("placement has %d ranks, tp*pp*dp = %d" % (len(pranks), world))
    per_node = {}
    node_nics = {}
    for r in pranks:
        per_node[r["node"]] = per_node.get(r["node"], 0) + 1
    # nccl_ib_hca=node: the NICs of the node's ranks, each once, in GPU order.
    for r in sorted(pranks, key=lambda r: r["gpu"]):
        nics = node_nics.setdefault(r["node"], [])
        if r.get("nic") and r["nic"] not in nics:
            nics.append(r["nic"])
    seen = {}
    tasks = parse_tasks(tasks_path)
    if len(tasks) != len(pranks):
        bad.append("%d task lines for %d ranks" % (len(tasks), len(pranks)))
    for t in tasks:
        try:
            rank = int(t.get("RANK", ""))
        except ValueError:
            bad.append("task on %s: RANK=%r" % (t["host"], t.get("RANK")))
            continue
        if rank in seen or not 0 <= rank < len(pranks):
            bad.append("task on %s: RANK %d twice or out of range" % (t["host"], rank))
            continue
        seen[rank] = t
        r = pranks[rank]
        host = nodes[r["node"]] if isinstance(r["node"], int) else r["node"]
        want = {
            "WORLD_SIZE": str(len(pranks)),
            "LOCAL_RANK": str(r["local_rank"]),
            "LOCAL_WORLD_SIZE": str(per_node[r["node"]]),
            "DT_TP_RANK": str(r["tp_rank"]),
            "DT_PP_RANK": str(r["pp_rank"]),
            "DT_DP_RANK": str(r["dp_rank"]),
        }
        if t["host"] != host:
            bad.append("rank %d ran on %s, the plan puts it on %s" % (rank, t["host"], host))
        for k, v in want.items():
            if t.get(k) != v:
                bad.append("rank %d: %s=%r, plan says %r" % (rank, k, t.get(k), v))
        hca = t.get("NCCL_IB_HCA", "")
        node_hca = "=" + ",".join(node_nics[r["node"]])
        if hca not in ("", node_hca):
            bad.append("rank %d: NCCL_IB_HCA=%r, neither unset nor the node's %r"
                       % (rank, hca, node_hca))
    groups = {}
    for r in pranks:
        groups.setdefault((r["pp_rank"], r["dp_rank"]), set()).add(str(r["node"]))
    for g, hosts in sorted(groups.items()):
        if len(hosts) != 1:
            bad.append("TP group pp=%d dp=%d spans nodes %s" % (g[0], g[1], sorted(hosts)))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("ranks: %d ok" % len(pranks))
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "parallelism":
        return parallelism(argv[2])
    if len(argv) == 4 and argv[1] == "ranks":
        return ranks(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
