#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a synthetic site for the collector's pages (tests/cli/test_serve_page.sh):
a dtplan.fabric/1 file of NODES nodes and the reports a collector would have
kept from it, as lines for tests/serve_fill ({"age", "poster", "doc"}).

usage: serve_site.py NODES OUT_DIR PLAN_JSON [--leaf N] [--rack N] [--pod N] [--job N]

The nodes are gpu00001...; each leaf switch holds --leaf nodes, each pod switch
--pod leaves under one spine, and each rack (a node set's nvlink_domain) --rack
nodes.  Jobs of --job nodes each cover the site in order; each job's root plan
report carries its placement (nodes under their leaves) and its measurements: a
ring of links at 50 GB/s, the tier's bandwidth.  Chosen nodes (the first node
of every 7th job) are slow: their links at a fifth of the tier's, below the
straggler rule's half (DTPLAN_STRAGGLER_FRACTION, lib/dtplan/measure.h), in
three reports (SERVE_SLOW_REPORTS), so their leaves are bad; every 5th job's
first leaf has its uplink measured at 2:1 (strained, above SERVE_OK_RATIO 1.5).
Each job posts an observation: measured 1.1 times its plan, every 3rd 1.5 times.
One refused plan and one report full of markup (a node, a leaf, a cluster, a
warning and a reason holding <script>) test the escaping.  Reports are dated a
minute apart, the newest a minute old."""
import argparse
import copy
import json
import os

HOSTILE = "<script>alert('x')</script>"


def hostlist(names):
    """gpu[00001-00036] for consecutive names of one width."""
    a, b = names[0][3:], names[-1][3:]
    return "gpu[%s-%s]" % (a, b) if len(names) > 1 else names[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nodes", type=int)
    ap.add_argument("out")
    ap.add_argument("plan")
    ap.add_argument("--leaf", type=int, default=4)
    ap.add_argument("--rack", type=int, default=8)
    ap.add_argument("--pod", type=int, default=4)
    ap.add_argument("--job", type=int, default=4)
    a = ap.parse_args()
    plan = json.load(open(a.plan))
    nodes = ["gpu%05d" % (i + 1) for i in range(a.nodes)]
    leaves = [nodes[i:i + a.leaf] for i in range(0, len(nodes), a.leaf)]
    leaf_of = {}
    switches = []
    for k, ln in enumerate(leaves):
        switches.append({"name": "leaf%d" % (k + 1), "nodes": hostlist(ln)})
        for n in ln:
            leaf_of[n] = "leaf%d" % (k + 1)
    pods = []
    for p in range(0, len(leaves), a.pod):
        name = "pod%d" % (p // a.pod + 1)
        pods.append(name)
        switches.append({"name": name,
                         "switches": ["leaf%d" % (k + 1) for k in range(p, min(p + a.pod, len(leaves)))]})
    switches.append({"name": "spine", "switches": pods})
    sets = [{"nodes": hostlist(nodes[i:i + a.rack]), "nvlink_domain": "rack%d" % (i // a.rack + 1)}
            for i in range(0, len(nodes), a.rack)]
    fabric = {"schema": "dtplan.fabric/1", "network": {"bandwidth": 50e9, "latency": 5e-6},
              "switches": switches, "node_sets": sets}
    os.makedirs(a.out, exist_ok=True)
    json.dump(fabric, open(os.path.join(a.out, "fabric.json"), "w"))

    lines = []

    def keep(doc, poster=0):
        lines.append({"poster": poster, "doc": doc})

    def report(job, p, state="ok", reason=None, warnings=(), cluster="c1"):
        return {"schema": "dtplan.report/1", "sender": "serve_site.py", "time": None,
                "cluster": cluster, "job_id": job, "user": "root", "uid": 0,
                "nodes": None, "host": "h", "state": state, "reason": reason,
                "warnings": list(warnings), "plan": p}

    def measured(job_nodes, slow, ratio):
        m = copy.deepcopy(plan["measurements"])
        m["tiers"]["intra_leaf"] = {"bandwidth_bytes_per_s": 50e9, "latency_us": 5.0,
                                    "latency_spread_us": 0.5, "links": len(job_nodes),
                                    "measured": True}
        m["links"] = []
        for i, x in enumerate(job_nodes):
            y = job_nodes[(i + 1) % len(job_nodes)]
            if x == y:
                continue
            bw = 10e9 if slow in (x, y) else 50e9
            m["links"].append({"a": x, "b": y, "round": 0, "tier": "intra_leaf",
                               "concurrent": False, "ok": True, "samples": 4, "latency_us": 5.0,
                               "latency_spread_us": 0.5, "bandwidth_bytes_per_s": bw})
        first = leaf_of.get(job_nodes[0], "leaf1")
        m["uplinks"] = [{"switch": first, "oversubscription": ratio, "configured": 1.0,
                         "aggregate_bytes_per_s": 25e9, "downlink_bytes_per_s": 50e9,
                         "flows": 4, "saturated": ratio > 1.5}]
        m["stragglers"] = ([{"node": slow, "bandwidth_bytes_per_s": 10e9,
                             "tier_median_bytes_per_s": 50e9}] if slow else [])
        return m

    jobs = [nodes[i:i + a.job] for i in range(0, len(nodes), a.job)]
    for j, jn in enumerate(jobs):
        job = 1000 + j
        p = copy.deepcopy(plan)
        if len(jn) == len(plan["placement"]["nodes"]):
            p["placement"]["nodes"] = jn
        else:
            # a larger job: its placement only (the picture is of the template's ranks)
            p["placement"]["nodes"] = jn
        groups = []
        for n in jn:
            if groups and groups[-1]["name"] == leaf_of[n]:
                groups[-1]["nodes"] += 1
            else:
                groups.append({"name": leaf_of[n], "nodes": 1, "oversubscription": 1.0})
        p["placement"]["leaves"] = groups
        slow = jn[0] if j % 7 == 3 else None
        ratio = 2.0 if j % 5 == 1 else 1.0
        p["measurements"] = measured(jn, slow, ratio)
        keep(report(job, p, warnings=[{"code": "spread", "message": "GPUs differ"}]))
        if slow:
            for k in range(2):  # three reports in all: the plan's and two more
                keep({"schema": "dtplan.measurements/1", "job_id": job,
                      "measurements": measured(jn, slow, ratio)})
        step = plan["prediction"]["step_seconds"]
        keep({"schema": "dtplan.observation/1", "job_id": job, "user": "root", "cluster": "c1",
              "fingerprint": "ab12", "gpu": plan["gpu"]["name"], "model": plan["model"]["name"],
              "framework": "megatron", "predicted_step_s": step,
              "measured_step_s": step * (1.5 if j % 3 == 0 else 1.1),
              "measured_step_spread_s": 0.01 * step, "steps": 100, "checkpoint_s": None,
              "time": "2026-01-01T00:00:00Z"})
    # a refused plan, and one whose every string is markup
    keep(report(900, copy.deepcopy(plan), state="refused",
                reason="expert groups cross racks " + HOSTILE,
                warnings=[{"code": "ep-across-racks", "message": "EP 8 spans 2 racks " + HOSTILE}]))
    p = copy.deepcopy(plan)
    p["placement"]["nodes"] = [HOSTILE, "gpu00001", "gpu00002", "gpu00003"]
    p["placement"]["leaves"] = [{"name": "<img src=x onerror=alert(1)>", "nodes": 4,
                                 "oversubscription": 1.0}]
    p["measurements"] = measured(p["placement"]["nodes"], HOSTILE, 4.0)
    p["measurements"]["uplinks"][0]["switch"] = "<img src=x onerror=alert(1)>"
    keep(report(901, p, cluster=HOSTILE, reason=HOSTILE, state="degraded",
                warnings=[{"code": "spread", "message": HOSTILE}]))
    with open(os.path.join(a.out, "fill.jsonl"), "w") as f:
        for k, line in enumerate(lines):
            line["age"] = 60 * (len(lines) - k)
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
