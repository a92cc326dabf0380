#!/usr/bin/env python3
"""tests/reference_table.py: dtplan against published training runs.

Usage: reference_table.py [--dtplan PATH] [--table FILE] [--check]
                          [--min-tp F] [--min-pp F] [--min-throughput F]

For every row of tests/data/reference-runs.json (published runs, each with its
source), runs `dtplan plan --json` twice on the row's model, GPUs and batch,
under what the run's software fixed (the row's "software", given to --train):

  choice     dtplan chooses TP, PP, DP, ZeRO, micro-batch, interleaving and
             recomputation itself; compared with the authors' TP and PP;
  predicted  the authors' configuration pinned (what the row publishes of TP,
             PP, ZeRO, micro-batch, interleaving, recomputation); its
             predicted tokens per second per GPU against the measured one.

Prints one line per row and the agreement: the share of rows where dtplan's
TP equals the published one, where its PP is within 2x of the published one,
and where the predicted throughput is within 10% of the measured one.  With
--check, exits 1 when a row gets no plan or a share is below its threshold
(the defaults are what the model reaches, rounded down; raise them when it
improves, never lower them to pass).

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
    return ("layers=%d,hidden=%d,heads=%d,kv_heads=%d,ffn=%d,vocab=%d,seq=%d,mlp=%s,tied=%s"
            % (m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["ffn"], m["vocab"],
               m["seq"], m["mlp"], "yes" if m["tied"] else "no"))


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
        if p.get("ep") is not None:
            args += ["--ep", str(p["ep"])]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtplan", default=os.environ.get("DTPLAN",
                                                        os.path.join(HERE, "..", "cli", "dtplan")))
    ap.add_argument("--table", default=os.path.join(HERE, "data", "reference-runs.json"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--min-tp", type=float, default=0.90)
    ap.add_argument("--min-pp", type=float, default=0.90)
    ap.add_argument("--min-throughput", type=float, default=0.70)
    a = ap.parse_args()

    with open(a.table) as f:
        table = json.load(f)
    rows = table["rows"]
    failures, tp_ok, pp_ok, tput_ok, n_tput = [], 0, 0, 0, 0
    free_n, free_tp, free_pp = 0, 0, 0
    print("%-34s %-13s %-13s %9s %9s %7s" % ("row", "published", "dtplan", "measured",
                                              "predicted", "error"))
    print("%-34s %-13s %-13s %9s %9s %7s" % ("", "TP x PP", "TP x PP", "tok/s/GPU",
                                              "tok/s/GPU", ""))
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            site = os.path.join(tmp, row["id"] + ".conf")
            with open(site, "w") as f:
                f.write("NetworkBandwidth=%s\n" % row["net"])
            free, why = plan(a.dtplan, row, site, False)
            if free is None:
                failures.append("%s: no plan: %s" % (row["id"], " ".join(why)))
                print("%-34s no plan: %s" % (row["id"], " ".join(why)))
                continue
            pinned, why = plan(a.dtplan, row, site, True)
            if pinned is None:
                failures.append("%s: the published configuration gets no plan: %s"
                                % (row["id"], " ".join(why)))
                print("%-34s published configuration gets no plan: %s"
                      % (row["id"], " ".join(why)))
                continue
            p, c = row["published"], free["parallelism"]
            same_tp = c["tp"] == p["tp"]
            near_pp = max(c["pp"], p["pp"]) <= 2 * min(c["pp"], p["pp"])
            tp_ok += same_tp
            pp_ok += near_pp
            if "tp=" not in row.get("software", ""):
                free_n += 1
                free_tp += same_tp
                free_pp += near_pp
            measured = published_tokens(row, free["model"]["params"])
            predicted = tokens_of(pinned, row)
            err = predicted / measured - 1.0
            n_tput += 1
            tput_ok += abs(err) <= 0.10
            print("%-34s %-13s %-13s %9.1f %9.1f %+6.1f%% %s%s%s" % (
                row["id"], "%d x %d" % (p["tp"], p["pp"]),
                "%d x %d%s" % (c["tp"], c["pp"], "" if c["vp"] == 1 else " v%d" % c["vp"]),
                measured, predicted, 100.0 * err,
                "" if same_tp else " TP", "" if near_pp else " PP",
                "" if abs(err) <= 0.10 else " T"))
    n = len(rows)
    shares = (tp_ok / n, pp_ok / n, tput_ok / n_tput if n_tput else 0.0)
    print()
    print("rows %d; same TP %d (%.0f%%), PP within 2x %d (%.0f%%), throughput within 10%% "
          "%d of %d (%.0f%%)" % (n, tp_ok, 100 * shares[0], pp_ok, 100 * shares[1], tput_ok,
                                 n_tput, 100 * shares[2]))
    if free_n:
        print("rows whose software left TP and PP to choose: %d; same TP %d (%.0f%%), PP within "
              "2x %d (%.0f%%)" % (free_n, free_tp, 100.0 * free_tp / free_n, free_pp,
                                  100.0 * free_pp / free_n))
    for f in failures:
        print("FAIL " + f)
    if not a.check:
        return 0
    bad = list(failures)
    for share, least, what in zip(shares, (a.min_tp, a.min_pp, a.min_throughput),
                                  ("same TP", "PP within 2x", "throughput within 10%")):
        if share < least:
            bad.append("%s in %.0f%% of rows, below %.0f%%" % (what, 100 * share, 100 * least))
    for b in bad[len(failures):]:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
