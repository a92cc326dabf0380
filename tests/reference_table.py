#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/reference_table.py: dtplan against published training runs.

Usage: reference_table.py [--dtplan PATH] [--table FILE] [--check]
                          [--min-tp F] [--min-pp F] [--max-median F]
                          [--min-within10 F] [--min-within25 F]
                          [--korthikanti-mean F] [--korthikanti-max F]

For every row of tests/data/reference-runs.json (published runs, each with its
source), runs `dtplan plan --json` twice on the row's model, GPUs and batch,
under what the run's software fixed (the row's "software", given to --train):

  choice     dtplan chooses TP, PP, DP, ZeRO, micro-batch, interleaving and
             recomputation itself; compared with the authors' TP and PP;
  predicted  the authors' configuration pinned (what the row publishes of TP,
             PP, CP, EP, ZeRO, micro-batch, interleaving, recomputation); its
             predicted tokens per second per GPU against the measured one.

A row whose published configuration dtplan refuses when pinned carries
"refused" (the rule that refuses it): it is kept, counted and left out of the
agreement; an unmarked refusal fails, and a marked row that plans is noted.

Prints one line per row and the agreement: the share of rows where dtplan's
TP equals the published one and where its PP is within 2x of the published
one, and over the pinned rows the median |error| of the predicted tokens per
second per GPU and the shares within 10% and 25%, for all rows and for each
source (an arXiv paper or a repository); and the mean and largest |error| on
the eight points of Korthikanti et al. 2022, Table 5 (arXiv 2205.05198).
With --check, exits 1 when a row gets no plan or an agreement is below its
threshold (the defaults are what the model reaches, rounded down; raise them
when it improves, never lower them to pass).

Published throughput is converted to tokens per second per GPU with the FLOP
count the source used ("flops" of a row):

  megatron96  96 l h^2 (1 + s/(6h) + V/(16 l h)) per token (Narayanan et al.,
              arXiv 2104.04473, Eq. 3: counts full recomputation)
  hw8n        8 N per token, N given in the row (BigScience's "hardware TFLOPs")
  palm        6 N + 12 l h s per token, N the model's parameters (Chowdhery et
              al., PaLM, Appendix B: the MFU of Llama 3's Table 4)
  none        the unit needs no FLOP count (step seconds, tokens per second)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def flops_per_token(row, params):
    """FLOPs per token under the row's counting; None when not needed."""
    m, kind = row["model"], row["measured"]["flops"]
    l, h, s, v = m["layers"], m["hidden"], m["seq"], m["vocab"]
    if kind == "megatron96":
        return 96.0 * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))
    if kind == "hw8n":
        return 8.0 * row["measured"]["flops_params"]
    if kind == "palm":
        return 6.0 * params + 12.0 * l * h * s
    if kind == "none":
        return None
    raise ValueError("%s: unknown flops '%s'" % (row["id"], kind))


def published_tokens(row, params):
    """The measured throughput in tokens per second per GPU."""
    meas, p = row["measured"], row["published"]
    unit, value = meas["unit"], float(meas["value"])
    tokens = p["global_batch"] * row["model"]["seq"]
    if unit == "tokens_per_s_per_gpu":
        return value
    if unit == "step_seconds":
        return tokens / (value * row["gpus"])
    if unit == "tflops_per_gpu":
        return value * 1e12 / flops_per_token(row, params)
    raise ValueError("%s: unknown unit '%s'" % (row["id"], unit))


def model_spec(m):
    if "preset" in m:
        return m["preset"]
    return ("layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,vocab=%d,seq=%d,mlp=%s,tied=%s,"
            "dropout=%s"
            % (m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["ffn"], m["vocab"],
               m["seq"], m["mlp"], "yes" if m["tied"] else "no",
               "yes" if m.get("dropout", True) else "no"))


def plan(dtplan, row, site, pinned):
    """dtplan plan --json for the row; (json, None) or (None, error text)."""
    m, p = row["model"], row["published"]
    args = [dtplan, "plan", "--json", "--model", model_spec(m), "--gpu", row["gpu"],
            "--gpus", str(row["gpus"]), "--gpus-per-node", str(row["gpus_per_node"]),
            "--seq", str(m["seq"]), "--global-batch", str(p["global_batch"]), "--site", site]
    train = [row["software"]] if row.get("software") else []
    if pinned:
        args += ["--tp", str(p["tp"]), "--pp", str(p["pp"])]
        for key, flag in (("zero", "--zero"), ("micro_batch", "--micro-batch"),
                          ("recompute", "--recompute")):
            if p.get(key) is not None and not (key == "zero" and "zero=" in row["software"]):
                args += [flag, str(p[key])]
        if p.get("vp") is not None:
            train.append("vp=%d" % p["vp"])
        for key, flag in (("ep", "--ep"), ("cp", "--cp")):
            if p.get(key) is not None:
                args += [flag, str(p[key])]
    if train:
        args += ["--train", ",".join(train)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip() or r.stdout.strip()).splitlines()[-1:]
    return json.loads(r.stdout), None


def tokens_of(j, row):
    """Predicted tokens per second per GPU of a plan."""
    return (j["global_batch"] * j["model"]["seq"]
            / (j["prediction"]["step_seconds"] * j["gpus"]))


def source_of(row):
    """The publication a row comes from: an arXiv paper or a repository."""
    url = row["source"]
    for prefix in ("https://arxiv.org/abs/", "https://github.com/"):
        if url.startswith(prefix):
            rest = url[len(prefix):].split("/")
            return rest[0] if prefix.startswith("https://arxiv") else "/".join(rest[:2])
    return url


def agreement(errors):
    """Median |error| and the shares within 10% and 25% of a list of errors."""
    if not errors:
        return 0.0, 0.0, 0.0
    a = sorted(abs(e) for e in errors)
    n = len(a)
    med = a[n // 2] if n % 2 else 0.5 * (a[n // 2 - 1] + a[n // 2])
    return med, sum(e <= 0.10 for e in a) / n, sum(e <= 0.25 for e in a) / n


def run_table(dtplan, rows, tmp, out=sys.stdout):
    """Plans every row twice (free, pinned); returns one result per row."""
    results = []
    for row in rows:
        site = os.path.join(tmp, row["id"] + ".conf")
        with open(site, "w") as f:
            f.write("NetworkBandwidth=%s\n" % row["net"])
        res = {"row": row, "free": None, "pinned": None, "why": None}
        res["free"], why = plan(dtplan, row, site, False)
        if res["free"] is not None:
            res["pinned"], why = plan(dtplan, row, site, True)
        res["why"] = " ".join(why) if why else None
        results.append(res)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtplan", default=os.environ.get("DTPLAN",
                                                        os.path.join(HERE, "..", "cli", "dtplan")))
    ap.add_argument("--table", default=os.path.join(HERE, "data", "reference-runs.json"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--min-tp", type=float, default=0.82)
    ap.add_argument("--min-pp", type=float, default=0.87)
    ap.add_argument("--max-median", type=float, default=0.07)
    ap.add_argument("--min-within10", type=float, default=0.62)
    ap.add_argument("--min-within25", type=float, default=0.90)
    ap.add_argument("--korthikanti-mean", type=float, default=0.037)
    ap.add_argument("--korthikanti-max", type=float, default=0.085)
    a = ap.parse_args()

    with open(a.table) as f:
        table = json.load(f)
    rows = table["rows"]
    failures, notes = [], []
    tp_ok = pp_ok = n_free = 0
    free_n = free_tp = free_pp = 0
    errors, by_source, refused, korth = [], {}, [], []
    print("%-40s %-13s %-13s %9s %9s %7s" % ("row", "published", "dtplan", "measured",
                                              "predicted", "error"))
    print("%-40s %-13s %-13s %9s %9s %7s" % ("", "TP x PP", "TP x PP", "tok/s/GPU",
                                              "tok/s/GPU", ""))
    with tempfile.TemporaryDirectory() as tmp:
        results = run_table(a.dtplan, rows, tmp)
    for res in results:
        row, free, pinned = res["row"], res["free"], res["pinned"]
        marked = row.get("refused")
        if free is None:
            failures.append("%s: no plan: %s" % (row["id"], res["why"]))
            print("%-40s no plan: %s" % (row["id"], res["why"]))
            continue
        p, c = row["published"], free["parallelism"]
        same_tp = c["tp"] == p["tp"]
        near_pp = max(c["pp"], p["pp"]) <= 2 * min(c["pp"], p["pp"])
        n_free += 1
        tp_ok += same_tp
        pp_ok += near_pp
        if "tp=" not in row.get("software", ""):
            free_n += 1
            free_tp += same_tp
            free_pp += near_pp
        if pinned is None:
            refused.append(row["id"])
            print("%-40s %-13s %-13s refused: %s" % (row["id"], "%d x %d" % (p["tp"], p["pp"]),
                                                      "%d x %d" % (c["tp"], c["pp"]), res["why"]))
            if not marked:
                failures.append("%s: the published configuration gets no plan, and the row is "
                                "not marked \"refused\": %s" % (row["id"], res["why"]))
            continue
        if marked:
            notes.append("%s: marked refused, but its published configuration now plans: "
                         "remove the mark" % row["id"])
        measured = published_tokens(row, free["model"]["params"])
        predicted = tokens_of(pinned, row)
        err = predicted / measured - 1.0
        errors.append(err)
        by_source.setdefault(source_of(row), []).append(err)
        if row["id"].startswith("korthikanti-2022-") and "dp8" not in row["id"]:
            korth.append(err)
        print("%-40s %-13s %-13s %9.1f %9.1f %+6.1f%% %s%s%s" % (
            row["id"], "%d x %d" % (p["tp"], p["pp"]),
            "%d x %d%s" % (c["tp"], c["pp"], "" if c["vp"] == 1 else " v%d" % c["vp"]),
            measured, predicted, 100.0 * err,
            "" if same_tp else " TP", "" if near_pp else " PP",
            "" if abs(err) <= 0.10 else " T"))
    n = len(rows)
    med, w10, w25 = agreement(errors)
    print()
    print("rows %d from %d sources; the published configuration refused when pinned: %d"
          % (n, len({source_of(r) for r in rows}), len(refused)))
    print("free choice (%d rows): same TP %d (%.0f%%), PP within 2x %d (%.0f%%)"
          % (n_free, tp_ok, 100.0 * tp_ok / max(n_free, 1), pp_ok, 100.0 * pp_ok / max(n_free, 1)))
    if free_n:
        print("rows whose software left TP and PP to choose: %d; same TP %d (%.0f%%), PP within "
              "2x %d (%.0f%%)" % (free_n, free_tp, 100.0 * free_tp / free_n, free_pp,
                                  100.0 * free_pp / free_n))
    print("pinned (%d rows): median |error| %.1f%%, within 10%% %.0f%%, within 25%% %.0f%%"
          % (len(errors), 100 * med, 100 * w10, 100 * w25))
    for src in sorted(by_source):
        m, s10, s25 = agreement(by_source[src])
        print("  %-36s %3d rows: median |error| %5.1f%%, within 10%% %3.0f%%, within 25%% %3.0f%%"
              % (src, len(by_source[src]), 100 * m, 100 * s10, 100 * s25))
    k_mean = sum(abs(e) for e in korth) / len(korth) if korth else 0.0
    k_max = max((abs(e) for e in korth), default=0.0)
    print("Korthikanti et al. 2022, Table 5 (%d points): mean |error| %.1f%%, max %.1f%%"
          % (len(korth), 100 * k_mean, 100 * k_max))
    for f in failures:
        print("FAIL " + f)
    for t in notes:
        print("NOTE " + t)
    if not a.check:
        return 0
    bad = list(failures)
    shares = (tp_ok / max(n_free, 1), pp_ok / max(n_free, 1))
    for share, least, what in zip(shares, (a.min_tp, a.min_pp), ("same TP", "PP within 2x")):
        if share < least:
            bad.append("%s in %.0f%% of rows, below %.0f%%" % (what, 100 * share, 100 * least))
    if med > a.max_median:
        bad.append("median |error| %.1f%%, above %.1f%%" % (100 * med, 100 * a.max_median))
    for share, least, what in ((w10, a.min_within10, "10%"), (w25, a.min_within25, "25%")):
        if share < least:
            bad.append("within %s: %.0f%% of rows, below %.0f%%" % (what, 100 * share, 100 * least))
    if len(korth) != 8:
        bad.append("Korthikanti Table 5: %d of its 8 points planned" % len(korth))
    if k_mean > a.korthikanti_mean or k_max > a.korthikanti_max:
        bad.append("Korthikanti Table 5: mean %.1f%%, max %.1f%%, above %.1f%% / %.1f%%"
                   % (100 * k_mean, 100 * k_max, 100 * a.korthikanti_mean,
                      100 * a.korthikanti_max))
    for b in bad[len(failures):]:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
