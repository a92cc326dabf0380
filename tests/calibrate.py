#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/calibrate.py: fit the step-time model's calibrated constants, and
check them out of sample.

Usage: calibrate.py [--dtplan PATH] [--table FILE] [--check] [--rows]
                    [--max-median F] [--min-within10 F] [--min-within25 F]
                    [--max-blackwell-median F]

The constants (doc/internals/cost-model.md, "Calibration"), each a physical
share, one per GPU generation where the hardware differs, never one per row:

  gemm.ampere, gemm.hopper,  the share of the measured matmul ceiling that
  gemm.blackwell             training GEMMs sustain (lib/model/gpu.c *_GEMM)
  attn.ampere, attn.hopper,  FlashAttention's rate over that ceiling
  attn.blackwell             (lib/model/gpu.c *_ATTN)
  zero3                      the share of ZeRO-3's hidden gathers and
                             reductions still charged (lib/plan/plan.h
                             DTPLAN__ZERO3_OVERLAP_TAX)

DTPLAN__OVERLAP_TAX (0.1, the other overlaps) is not fitted.

For every row of tests/data/reference-runs.json whose published configuration
plans (see tests/reference_table.py), the pinned plan is taken apart with the
CLI's DTPLAN_CALIBRATION: at gemm 1 and at 0.5 (the difference is the GEMM
time at the full ceiling), at attention 1 and 0.5 (the attention time), with
the overlap taxes 0 and 1 (the hidden communication); the rest of the compute
is memory-bound and does not move.  The step under any constants is then

  compute = GEMM / gemm + attention / attn + memory-bound
  step    = compute + TP + (compute + TP) bubble share + PP + optimizer
            + exposed DP, EP and CP + zero3 x ZeRO-3's hidden part
            + 0.1 x the other hidden part
            + compute x the wait for the slowest GPU's share of it

(the bubble is a share of compute and TP, as in lib/plan/predict.c; the
exposed communication is taken at the uncalibrated compute).  The fit
minimises the sum of |log(predicted / measured)| over the rows, each row of
a source of n rows weighing 1 / sqrt(n) (a source's weight grows with its
rows, but slower), by Nelder-Mead from three starts.  A constant no row of
the fit depends on (FlashAttention on Ampere when llm-foundry, its only
source, is left out) keeps its uncalibrated value, the first start's.

Each generation's shares are fitted on its own rows only (Blackwell's on the
B200, GB200, B300 and GB300 rows); a generation with no rows in a fit takes
its predecessor's (Blackwell Hopper's), as lib/model/gpu.c did before it had
rows of its own.

Prints the fit on all rows (in sample) and leave-one-source-out: for each
source, the constants fitted without it predict its rows.  Blackwell's rows
all come from one source (Megatron-Bridge's performance tables), so they
are also reported leave-one-model-out: for each model, Blackwell's shares
fitted on the Blackwell rows of the other models predict its rows.  Then the
scaling series (scaling()): rows of one source, model, GPU and published
layout (all but DP and the global batch) at two or more GPU counts; for
each, the out-of-sample predicted change of tokens per second per GPU from
its smallest to its largest count against the measured change, and the share
within 5 points; and the median |error| by job size.  With --check,
exits 1 when the out-of-sample agreement is below the thresholds (what the
model reaches, rounded down; raise them when it improves).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_table as ref  # noqa: E402

NAMES = ("gemm.ampere", "gemm.hopper", "gemm.blackwell", "attn.ampere", "attn.hopper",
         "attn.blackwell", "zero3")
STARTS = ((0.8, 0.8, 0.8, 0.56, 0.56, 0.56, 0.5), (0.85, 0.85, 0.85, 0.5, 0.4, 0.4, 0.2),
          (0.75, 0.75, 0.75, 0.4, 0.3, 0.3, 0.8))
LOW = (0.3, 0.3, 0.3, 0.1, 0.1, 0.1, 0.0)
# Blackwell's GEMM share is of the datasheet peak (no measured ceiling the
# published runs stay under: lib/model/gpu.c), which it cannot pass
HIGH = (1.15, 1.15, 1.0, 1.15, 1.15, 1.15, 1.0)
OVERLAP_TAX = 0.1  # DTPLAN__OVERLAP_TAX
# the generation of a row's GPU: its GEMM share th[g], its attention share
# th[3 + g] (lib/model/gpu.c: MI250X takes Ampere's, MI300X Hopper's)
AMPERE, HOPPER, BLACKWELL = 0, 1, 2
GENERATION = {"a100-40gb": AMPERE, "a100-80gb": AMPERE, "mi250x": AMPERE,
              "b200": BLACKWELL, "gb200": BLACKWELL, "b300": BLACKWELL, "gb300": BLACKWELL}
ZERO3 = 6


def pinned_args(dtplan, row, site, j):
    """The command that plans exactly the split, stage and micro-batch j chose."""
    m, c = row["model"], j["parallelism"]
    args = [dtplan, "plan", "--json", "--model", ref.model_spec(m), "--gpu", row["gpu"],
            "--gpus", str(row["gpus"]), "--gpus-per-node", str(row["gpus_per_node"]),
            "--seq", str(m["seq"]), "--global-batch", str(row["published"]["global_batch"]),
            "--site", site, "--tp", str(c["tp"]), "--pp", str(c["pp"]), "--cp", str(c["cp"]),
            "--ep", str(c["ep"]), "--micro-batch", str(c["micro_batch"]),
            "--recompute", c["recompute"]]
    train = [row["software"]] if row.get("software") else []
    if "zero=" not in row.get("software", ""):
        args += ["--zero", str(c["zero"])]
    train.append("vp=%d" % c["vp"])
    return args + ["--train", ",".join(train)]


def run(args, cal):
    env = dict(os.environ, DTPLAN_CALIBRATION="gemm=%g,attention=%g,overlap=%g,zero3=%g" % cal)
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)["prediction"]


def parts(dtplan, results, tmp):
    """Each planned row taken apart into the terms of the step."""
    out = []
    for res in results:
        row, free, pinned = res["row"], res["free"], res["pinned"]
        if pinned is None:
            continue
        site = os.path.join(tmp, row["id"] + ".conf")
        with open(site, "w") as f:
            f.write("NetworkBandwidth=%s\n" % row["net"])
        args = pinned_args(dtplan, row, site, pinned)
        base = run(args, (1, 1, 0, 0))
        g = run(args, (0.5, 1, 0, 0))
        a = run(args, (1, 0.5, 0, 0))
        t = run(args, (1, 1, 1, 1))
        gemm = g["compute_seconds"] - base["compute_seconds"]
        attn = a["compute_seconds"] - base["compute_seconds"]
        comp, tp = base["compute_seconds"], base["tp_comm_seconds"]
        exposed = base["dp_exposed_seconds"] + base["ep_comm_seconds"] + base["cp_comm_seconds"]
        hidden = (t["dp_exposed_seconds"] + t["ep_comm_seconds"] + t["cp_comm_seconds"]) - exposed
        zero3 = pinned["parallelism"]["zero"] >= 3
        hidden_z3 = t["dp_exposed_seconds"] - base["dp_exposed_seconds"] if zero3 else 0.0
        out.append({
            "row": row, "source": ref.source_of(row),
            "gen": GENERATION.get(row["gpu"], HOPPER),
            "gemm": gemm, "attn": attn, "mem": comp - gemm - attn, "tp": tp,
            "bubble": base["bubble_seconds"] / (comp + tp) if comp + tp > 0 else 0.0,
            # the wait for the slowest GPU: a share of the compute
            # (lib/plan/straggler.c), after the bubble
            "straggle": base.get("straggler_seconds", 0.0) / comp if comp > 0 else 0.0,
            "fixed": base["pp_comm_seconds"] + base["optimizer_seconds"] + exposed,
            "hidden_z3": hidden_z3, "hidden": hidden - hidden_z3,
            "tokens": pinned["global_batch"] * pinned["model"]["seq"] / pinned["gpus"],
            "measured": ref.published_tokens(row, free["model"]["params"]),
        })
    return out


def predict(p, th):
    """Predicted tokens per second per GPU of one row under constants th."""
    sg, sa = th[p["gen"]], th[3 + p["gen"]]
    comp = p["gemm"] / sg + p["attn"] / sa + p["mem"]
    step = ((comp + p["tp"]) * (1.0 + p["bubble"]) + comp * p["straggle"] + p["fixed"]
            + th[ZERO3] * p["hidden_z3"] + OVERLAP_TAX * p["hidden"])
    return p["tokens"] / step


def loss(ps, th):
    w = {}
    for p in ps:
        w[p["source"]] = w.get(p["source"], 0) + 1
    return sum(abs(math.log(predict(p, th) / p["measured"])) / math.sqrt(w[p["source"]])
               for p in ps)


def nelder_mead(f, x0, step=0.05, iters=1500, tol=1e-10, low=LOW, high=HIGH):
    n = len(x0)

    def clip(th):
        return [min(max(v, lo), hi) for v, lo, hi in zip(th, low, high)]

    pts = [clip(x0)] + [clip([x + (step if i == j else 0.0) for j, x in enumerate(x0)])
                        for i in range(n)]
    vals = [f(x) for x in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if vals[-1] - vals[0] < tol:
            break
        cen = [sum(p[i] for p in pts[:-1]) / n for i in range(n)]
        refl = clip([c + (c - w) for c, w in zip(cen, pts[-1])])
        fr = f(refl)
        if fr < vals[0]:
            exp = clip([c + 2 * (c - w) for c, w in zip(cen, pts[-1])])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = clip([c + 0.5 * (w - c) for c, w in zip(cen, pts[-1])])
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                pts = [pts[0]] + [clip([b + 0.5 * (x - b) for b, x in zip(pts[0], p)])
                                  for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    best = min(range(n + 1), key=lambda i: vals[i])
    return pts[best]


def exercised(ps):
    """Which constants the rows of ps depend on: a generation's GEMM and
    attention shares where its rows have GEMM or attention time, the ZeRO-3
    tax where some row hides ZeRO-3 traffic."""
    used = [False] * len(NAMES)
    for p in ps:
        k = p["gen"]
        used[k] = used[k] or p["gemm"] > 0
        used[3 + k] = used[3 + k] or p["attn"] > 0
        used[ZERO3] = used[ZERO3] or p["hidden_z3"] > 0
    return used


def fit(ps):
    """The constants of the least loss over ps, from three starts; one that
    no row of ps depends on cannot be learned from them and keeps its
    uncalibrated value (the first start), where the search would leave it
    wherever it wandered (the loss is flat along it); Blackwell's unlearned
    shares are Hopper's."""
    best = None
    for start in STARTS:
        th = nelder_mead(lambda t: loss(ps, t), list(start))
        th = nelder_mead(lambda t: loss(ps, t), th, step=0.02)
        if best is None or loss(ps, th) < loss(ps, best):
            best = th
    used = exercised(ps)
    th = [v if u else prior for v, u, prior in zip(best, used, STARTS[0])]
    for k in (BLACKWELL, 3 + BLACKWELL):
        if not used[k]:
            th[k] = th[k - 1]
    return th


def model_of(row):
    """A row's model: its preset, or its dimensions."""
    return row["model"].get("preset") or ref.model_spec(row["model"])


def blackwell_by_model(ps, th):
    """Blackwell's rows leave-one-model-out: for each model, Blackwell's two
    shares fitted on the Blackwell rows of the other models (the other
    constants as th, the fit on all rows), predict its rows.  Returns
    [(model, rows, errors, shares)]."""
    bw = [p for p in ps if p["gen"] == BLACKWELL]
    out = []
    for m in sorted({model_of(p["row"]) for p in bw}):
        held = [p for p in bw if model_of(p["row"]) == m]
        rest = [p for p in bw if model_of(p["row"]) != m]

        def f(x):
            t = list(th)
            t[BLACKWELL], t[3 + BLACKWELL] = x
            return loss(rest, t)

        best = None
        for start in STARTS:
            x = nelder_mead(f, [start[BLACKWELL], start[3 + BLACKWELL]],
                            low=(LOW[BLACKWELL], LOW[3 + BLACKWELL]),
                            high=(HIGH[BLACKWELL], HIGH[3 + BLACKWELL]))
            if best is None or f(x) < f(best):
                best = x
        t = list(th)
        t[BLACKWELL], t[3 + BLACKWELL] = best
        out.append((m, held, [predict(p, t) / p["measured"] - 1.0 for p in held], best))
    return out


def series_key(p):
    """What a scaling series holds fixed: source, model, GPU, software and
    the published layout but DP and the global batch."""
    row = p["row"]
    pub = {k: v for k, v in row["published"].items() if k not in ("dp", "global_batch")}
    return json.dumps([p["source"], row["model"], row["gpu"], row.get("software", ""),
                       row.get("net", ""), row["gpus_per_node"], pub], sort_keys=True)


def scaling(ps, preds):
    """Per series of two or more GPU counts: (id of its smallest row, its
    smallest and largest counts, predicted and measured change of tokens per
    second per GPU from the one to the other).  Rows at the same count are
    taken at their geometric mean."""
    groups = {}
    for p, pred in zip(ps, preds):
        groups.setdefault(series_key(p), {}).setdefault(p["row"]["gpus"], []).append(
            (p, pred))
    out = []
    for g in groups.values():
        if len(g) < 2:
            continue
        lo, hi = min(g), max(g)

        def gmean(v):
            return math.exp(sum(math.log(x) for x in v) / len(v))
        pl, ph = gmean([q for _, q in g[lo]]), gmean([q for _, q in g[hi]])
        ml = gmean([p["measured"] for p, _ in g[lo]])
        mh = gmean([p["measured"] for p, _ in g[hi]])
        out.append((g[lo][0][0]["row"]["id"], lo, hi, ph / pl - 1.0, mh / ml - 1.0))
    return sorted(out)


def by_size(ps, errs):
    """Median |error| of the rows by GPU count."""
    out = []
    for lo, hi in ((1, 64), (65, 512), (513, 4096), (4097, 1 << 30)):
        e = [abs(x) for p, x in zip(ps, errs) if lo <= p["row"]["gpus"] <= hi]
        if e:
            out.append((lo, hi, len(e), sorted(e)[len(e) // 2]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtplan", default=os.environ.get("DTPLAN",
                                                        os.path.join(HERE, "..", "cli", "dtplan")))
    ap.add_argument("--table", default=os.path.join(HERE, "data", "reference-runs.json"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--rows", action="store_true", help="print every row's errors")
    ap.add_argument("--max-median", type=float, default=0.10)
    ap.add_argument("--min-within10", type=float, default=0.50)
    ap.add_argument("--min-within25", type=float, default=0.84)
    ap.add_argument("--min-series5", type=float, default=0.86,
                    help="least share of scaling series within 5 points")
    ap.add_argument("--max-blackwell-median", type=float, default=0.14)
    a = ap.parse_args()

    with open(a.table) as f:
        rows = json.load(f)["rows"]
    with tempfile.TemporaryDirectory() as tmp:
        results = ref.run_table(a.dtplan, rows, tmp)
        ps = parts(a.dtplan, results, tmp)
    sources = sorted({p["source"] for p in ps})
    th = fit(ps)
    print("fitted on %d rows from %d sources:" % (len(ps), len(sources)))
    for name, v in zip(NAMES, th):
        print("  %-12s %.3f" % (name, v))
    ins = [predict(p, th) / p["measured"] - 1.0 for p in ps]
    if a.rows:
        for p, e in zip(ps, ins):
            print("  %-40s %+6.1f%%" % (p["row"]["id"], 100 * e))
    med, w10, w25 = ref.agreement(ins)
    print("in sample: median |error| %.1f%%, within 10%% %.0f%%, within 25%% %.0f%%"
          % (100 * med, 100 * w10, 100 * w25))
    out, loso = [], {}
    print("leave one source out (the constants fitted without it):")
    for s in sources:
        held = [p for p in ps if p["source"] == s]
        t = fit([p for p in ps if p["source"] != s])
        errs = [predict(p, t) / p["measured"] - 1.0 for p in held]
        for p in held:
            loso[id(p)] = predict(p, t)
        out += errs
        m, s10, s25 = ref.agreement(errs)
        print("  %-36s %3d rows: median |error| %5.1f%%, within 10%% %3.0f%%, within 25%% %3.0f%%"
              "  (%s)" % (s, len(held), 100 * m, 100 * s10, 100 * s25,
                          " ".join("%.2f" % v for v in t)))
    med, w10, w25 = ref.agreement(out)
    print("out of sample (%d rows, %d sources): median |error| %.1f%%, within 10%% %.0f%%, "
          "within 25%% %.0f%%" % (len(out), len(sources), 100 * med, 100 * w10, 100 * w25))
    oos = [loso[id(p)] / p["measured"] - 1.0 for p in ps]
    for lo, hi, n, e in by_size(ps, oos):
        print("  %5d-%-6s GPUs: %3d rows, median |error| %.1f%%"
              % (lo, hi if hi < (1 << 30) else "", n, 100 * e))
    ser = scaling(ps, [loso[id(p)] for p in ps])
    print("scaling series (out of sample), tokens/s per GPU from the smallest to the largest"
          " count, predicted vs measured:")
    for rid, lo, hi, pc, mc in ser:
        print("  %-40s %5d -> %-6d predicted %+6.1f%%, measured %+6.1f%%%s"
              % (rid, lo, hi, 100 * pc, 100 * mc, "" if abs(pc - mc) <= 0.05 else "  (off)"))
    w5 = sum(1 for s_ in ser if abs(s_[3] - s_[4]) <= 0.05) / len(ser) if ser else 1.0
    print("scaling series: %d from %d sources, %.0f%% within 5 points"
          % (len(ser), len({json.loads(series_key(p))[0] for p in ps
                            if any(series_key(p) == series_key(q) and
                                   p["row"]["gpus"] != q["row"]["gpus"] for q in ps)}),
             100 * w5))
    bw = []
    print("Blackwell, leave one model out (its shares fitted on the other models' rows):")
    for m, held, errs, x in blackwell_by_model(ps, th):
        bw += errs
        print("  %-36s %3d rows: %s  (gemm %.2f attn %.2f)"
              % (m, len(held), " ".join("%+.1f%%" % (100 * e) for e in errs), x[0], x[1]))
    bmed, b10, b25 = ref.agreement(bw) if bw else (0.0, 1.0, 1.0)
    print("Blackwell out of sample (%d rows): median |error| %.1f%%, within 10%% %.0f%%, "
          "within 25%% %.0f%%" % (len(bw), 100 * bmed, 100 * b10, 100 * b25))
    if not a.check:
        return 0
    bad = []
    if w5 < a.min_series5:
        bad.append("scaling series: %.0f%% within 5 points, below %.0f%%"
                   % (100 * w5, 100 * a.min_series5))
    if med > a.max_median:
        bad.append("out of sample: median |error| %.1f%%, above %.1f%%"
                   % (100 * med, 100 * a.max_median))
    for share, least, what in ((w10, a.min_within10, "10%"), (w25, a.min_within25, "25%")):
        if share < least:
            bad.append("out of sample: within %s %.0f%% of rows, below %.0f%%"
                       % (what, 100 * share, 100 * least))
    if bmed > a.max_blackwell_median:
        bad.append("Blackwell out of sample: median |error| %.1f%%, above %.1f%%"
                   % (100 * bmed, 100 * a.max_blackwell_median))
    for b in bad:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
