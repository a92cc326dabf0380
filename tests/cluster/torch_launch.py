#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""torch_launch.py: one training-shaped step over a TP x PP x DP layout.

A real distributed client for the test cluster: run one copy per task (srun),
with Debian's /usr/bin/python3 (python3-torch: torch with gloo, CPU only).

Environment (what a launcher gets from dtplan):
  RANK, WORLD_SIZE, LOCAL_RANK   (else SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID)
  MASTER_ADDR, MASTER_PORT       rendezvous of torch.distributed (env://)
  DT_TP, DT_PP, DT_DP            the layout; DT_TP * DT_PP * DT_DP == WORLD_SIZE
  DT_TP_RANK, DT_PP_RANK, DT_DP_RANK   this rank's place in it
  GLOO_SOCKET_IFNAME             interface for gloo (else the first non-loopback one)
  DTPLAN_TORCH_TIMEOUT           seconds for rendezvous and collectives (default 60)

What it checks, on every rank (every rank sees all ranks' data, so all reach
the same verdict and none is left waiting in a collective):
  * the layout: every rank agrees on DT_TP/PP/DP, the (tp, pp, dp) coordinates
    are a bijection onto the ranks, LOCAL_RANK is unique on each host;
  * every TP group sits on one node (hostnames through all_gather_object);
  * a step: TP all-reduce of activations, PP forward and backward send/recv
    between neighbouring stages, DP all-reduce (mean) of gradients, and a
    world all-reduce; each result is compared with the expected sums.

Prints one line per rank, then "torch_launch: OK ..." from rank 0; exits 0.
Exits 1 when a check fails, 2 on a missing or bad environment variable.
"""

import datetime
import os
import socket
import sys


def fail(code, msg):
    rank = os.environ.get("RANK", os.environ.get("SLURM_PROCID", "?"))
    print("torch_launch: rank %s: %s" % (rank, msg), file=sys.stderr, flush=True)
    sys.exit(code)


def env_int(name, fallback=None, minimum=0):
    raw = os.environ.get(name)
    src = name
    if raw is None and fallback is not None:
        raw = os.environ.get(fallback)
        src = fallback
    if raw is None:
        fail(2, "%s is not set" % (name if fallback is None else "%s (or %s)" % (name, fallback)))
    try:
        val = int(raw)
    except ValueError:
        fail(2, "%s='%s' is not an integer" % (src, raw))
    if val < minimum:
        fail(2, "%s=%d is below %d" % (src, val, minimum))
    return val


def read_layout():
    lay = {
        "rank": env_int("RANK", "SLURM_PROCID"),
        "world": env_int("WORLD_SIZE", "SLURM_NTASKS", 1),
        "local_rank": env_int("LOCAL_RANK", "SLURM_LOCALID"),
        "tp": env_int("DT_TP", minimum=1),
        "pp": env_int("DT_PP", minimum=1),
        "dp": env_int("DT_DP", minimum=1),
        "tp_rank": env_int("DT_TP_RANK"),
        "pp_rank": env_int("DT_PP_RANK"),
        "dp_rank": env_int("DT_DP_RANK"),
        "host": socket.gethostname(),
    }
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            fail(2, "%s is not set" % name)
    if lay["rank"] >= lay["world"]:
        fail(2, "RANK=%d is not below WORLD_SIZE=%d" % (lay["rank"], lay["world"]))
    if lay["tp"] * lay["pp"] * lay["dp"] != lay["world"]:
        fail(2, "DT_TP*DT_PP*DT_DP = %d*%d*%d = %d, but WORLD_SIZE=%d"
             % (lay["tp"], lay["pp"], lay["dp"], lay["tp"] * lay["pp"] * lay["dp"], lay["world"]))
    for axis in ("tp", "pp", "dp"):
        if lay[axis + "_rank"] >= lay[axis]:
            fail(2, "DT_%s_RANK=%d is not below DT_%s=%d"
                 % (axis.upper(), lay[axis + "_rank"], axis.upper(), lay[axis]))
    return lay


def check_layout(everyone):
    """Returns an error message, or None.  Same answer on every rank."""
    first = everyone[0]
    for lay in everyone:
        for key in ("world", "tp", "pp", "dp"):
            if lay[key] != first[key]:
                return "rank %d has %s=%d, rank 0 has %d" % (lay["rank"], key, lay[key], first[key])
    seen = {}
    for lay in everyone:
        coord = (lay["tp_rank"], lay["pp_rank"], lay["dp_rank"])
        if coord in seen:
            return "ranks %d and %d both have (tp, pp, dp) rank %s" % (seen[coord], lay["rank"], coord)
        seen[coord] = lay["rank"]
    local = {}
    for lay in everyone:
        key = (lay["host"], lay["local_rank"])
        if key in local:
            return "ranks %d and %d both have LOCAL_RANK %d on %s" % (
                local[key], lay["rank"], lay["local_rank"], lay["host"])
        local[key] = lay["rank"]
    return None


def groups_along(everyone, axis):
    """Groups of ranks that differ only in AXIS ('tp', 'pp' or 'dp'), each
    sorted by their rank along AXIS; the groups in a fixed order."""
    others = [a for a in ("tp", "pp", "dp") if a != axis]
    by_key = {}
    for lay in everyone:
        key = tuple(lay[a + "_rank"] for a in others)
        by_key.setdefault(key, []).append(lay)
    return [[lay["rank"] for lay in sorted(by_key[k], key=lambda l: l[axis + "_rank"])]
            for k in sorted(by_key)]


def main():
    lay = read_layout()
    if not os.environ.get("GLOO_SOCKET_IFNAME"):
        names = [n for _, n in socket.if_nameindex() if n != "lo"]
        if names:
            os.environ["GLOO_SOCKET_IFNAME"] = names[0]
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        fail(2, "cannot import torch (%s): run it with Debian's /usr/bin/python3 "
                "and python3-torch installed" % e)

    timeout = datetime.timedelta(seconds=int(os.environ.get("DTPLAN_TORCH_TIMEOUT", "60")))
    dist.init_process_group("gloo", init_method="env://", rank=lay["rank"],
                            world_size=lay["world"], timeout=timeout)
    rank = lay["rank"]
    everyone = [None] * lay["world"]
    dist.all_gather_object(everyone, lay)
    everyone.sort(key=lambda l: l["rank"])

    err = check_layout(everyone)
    if err:
        fail(1, "bad layout: " + err)
    groups = {}
    for axis in ("tp", "pp", "dp"):
        groups[axis] = []
        for ranks in groups_along(everyone, axis):
            # Every rank creates every group, in the same order.
            handle = dist.new_group(ranks)
            groups[axis].append((ranks, handle))
    for ranks, _ in groups["tp"]:
        hosts = sorted({everyone[r]["host"] for r in ranks})
        if len(hosts) > 1:
            fail(1, "TP group %s spans nodes %s" % (ranks, ",".join(hosts)))

    mine = {axis: next((r, h) for r, h in groups[axis] if rank in r) for axis in groups}

    # TP: all-reduce of "activations" inside the node.
    ranks, handle = mine["tp"]
    act = torch.full((4096,), float(rank + 1), dtype=torch.float64)
    dist.all_reduce(act, group=handle)
    want = float(sum(r + 1 for r in ranks))
    if not torch.all(act == want):
        fail(1, "TP all-reduce over %s gave %s, expected %s" % (ranks, act[0].item(), want))

    # PP: forward activations to the next stage, gradients back to the previous one.
    ranks, _ = mine["pp"]
    stage = ranks.index(rank)
    buf = torch.zeros(1024, dtype=torch.float64)
    if stage > 0:
        dist.recv(buf, src=ranks[stage - 1])
        if not torch.all(buf == float(ranks[stage - 1])):
            fail(1, "PP forward from rank %d gave %s" % (ranks[stage - 1], buf[0].item()))
    if stage < len(ranks) - 1:
        dist.send(torch.full((1024,), float(rank), dtype=torch.float64), dst=ranks[stage + 1])
        dist.recv(buf, src=ranks[stage + 1])
        if not torch.all(buf == -float(ranks[stage + 1])):
            fail(1, "PP backward from rank %d gave %s" % (ranks[stage + 1], buf[0].item()))
    if stage > 0:
        dist.send(torch.full((1024,), -float(rank), dtype=torch.float64), dst=ranks[stage - 1])

    # DP: mean of the replicas' gradients.
    ranks, handle = mine["dp"]
    grad = torch.full((4096,), float(10 * (rank + 1)), dtype=torch.float64)
    dist.all_reduce(grad, group=handle)
    grad /= len(ranks)
    want = 10.0 * sum(r + 1 for r in ranks) / len(ranks)
    if not torch.allclose(grad, torch.full_like(grad, want)):
        fail(1, "DP all-reduce over %s gave %s, expected %s" % (ranks, grad[0].item(), want))

    # World: everyone took part.
    one = torch.ones(1, dtype=torch.int64)
    dist.all_reduce(one)
    if one.item() != lay["world"]:
        fail(1, "world all-reduce gave %d, expected %d" % (one.item(), lay["world"]))

    print("rank %d on %s local %d: tp %d/%d pp %d/%d dp %d/%d: tp%s pp%s dp%s ok"
          % (rank, lay["host"], lay["local_rank"], lay["tp_rank"], lay["tp"], lay["pp_rank"],
             lay["pp"], lay["dp_rank"], lay["dp"], mine["tp"][0], mine["pp"][0], mine["dp"][0]),
          flush=True)
    dist.barrier()
    if rank == 0:
        nodes = len({l["host"] for l in everyone})
        print("torch_launch: OK world=%d tp=%d pp=%d dp=%d nodes=%d iface=%s"
              % (lay["world"], lay["tp"], lay["pp"], lay["dp"], nodes,
                 os.environ.get("GLOO_SOCKET_IFNAME", "")), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
