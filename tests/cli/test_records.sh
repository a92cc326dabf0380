#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cli/test_records.sh: dtplan observe, history, calibrate and plan
# over a real record database (SQLite).
#
# The acceptance: after two jobs of one shape whose logs show a step time 30%
# above the prediction, a third plan of that shape predicts within 5% of the
# measured time, says why, and --no-calibration gives the old one.  The job
# logs are Megatron-LM's training_log() lines (megatron/training/training.py,
# NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553).
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err" "$out.state"' EXIT
db=$tmp/records.db
plan="--model llama3-8b --gpus 16 --records $db --cluster c1"

# job_log FILE STEP_SECONDS: 30 iterations, the first 3x slower (warm-up)
job_log() {
	python3 - "$1" "$2" <<'EOF_PY'
import sys
path, t = sys.argv[1], float(sys.argv[2])
with open(path, "w") as f:
    f.write("using world size: 16\n")
    for it in range(1, 31):
        ms = t * 1000.0 * (3.0 if it == 1 else 1.0)
        f.write(" [2026-12-01 10:00:%02d.000000] iteration %8d/%8d | consumed samples: %12d |"
                " elapsed time per iteration (ms): %.1f | learning rate: 3.000000E-04 |"
                " global batch size:  1024 | lm loss: 7.000000E+00 |\n"
                % (it % 60, it * 10, 300, it * 10240, ms))
EOF_PY
}
jnum() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

run 0 plan $plan --json
cp "$out" "$tmp/plan.json"
json_eq 'j["prediction"]["calibration"]' None
model=$(jnum "$tmp/plan.json" 'j["prediction"]["step_seconds"]')
measured=$(python3 -c "print($model * 1.3)")

run 0 history --records "$db"; stdout_has "no records in $db"
run 0 calibrate --show --records "$db"; stdout_has "nothing learned"

for job in 101 102; do
	job_log "$tmp/slurm-$job.out" "$measured"
	run 0 observe --plan "$tmp/plan.json" --output "$tmp/slurm-$job.out" --job-id $job \
		--records "$db" --cluster c1 --time $((1764583200 + job))
	stdout_has "job $job: planned"
	stdout_has "(+30%) from 27 steps (megatron)"
done

run 0 history --records "$db" --cluster c1 --json
json_eq 'len(j)' 2
json_eq '[r["job_id"] for r in j]' '[101, 102]'
json_eq 'round(j[0]["measured_step_s"] / j[0]["predicted_step_s"], 3)' 1.3
json_eq 'j[0]["fingerprint"] == j[1]["fingerprint"] and len(j[0]["fingerprint"]) == 64' True
run 0 history --records "$db"; stdout_has "+30.0%"

run 0 calibrate --show --records "$db" --cluster c1
stdout_has "2 records in $db, cluster c1"
run 0 calibrate --show --records "$db" --cluster c1 --json
json_eq 'j["corrections"][0]["runs"]' 2
# (the log prints the step to 0.1 ms: the ratio holds to 1e-4)
json_eq 'round(j["corrections"][0]["observed"], 4)' 1.3

# the third plan: within 5% of the measured step, and why
run 0 plan $plan --json
json_eq 'abs(j["prediction"]["step_seconds"] / '"$measured"' - 1) < 0.05' True
json_eq 'j["prediction"]["calibration"]["runs"]' 2
json_eq 'j["prediction"]["calibration"]["learned_from"]' "this shape"
json_eq 'j["prediction"]["model_step_seconds"] == '"$model" True
run 0 plan $plan
stdout_has "learned from 2 runs on this cluster"
stdout_has "x 1.27 "
# --no-calibration: the old plan, exactly
run 0 plan $plan --no-calibration --json
json_eq 'j["prediction"]["step_seconds"] == '"$model" True
json_eq 'j["prediction"]["calibration"]' None
# --train calibration=off, the --dt-train key a job sets: the same plan
run 0 plan $plan --train calibration=off --json
json_eq 'j["prediction"]["step_seconds"] == '"$model" True
json_eq 'j["prediction"]["calibration"]' None
run 0 plan $plan --train calibration=on --json
json_eq 'j["prediction"]["calibration"]["runs"]' 2
run 2 plan $plan --train calibration=maybe
stderr_has "calibration: 'maybe' is not on or off"
# another cluster's records teach nothing
run 0 plan --model llama3-8b --gpus 16 --records "$db" --cluster c2 --json
json_eq 'j["prediction"]["calibration"]' None

# the observation file wins over the log; hostile lines are refused with a reason
printf '{"step":1,"step_seconds":90}\n{"step":2,"step_seconds":NaN}\n{"step":3,"step_seconds":-1}\n' >"$tmp/obs"
printf '{"step":4,"step_seconds":60}\n{"step":5,"step_seconds":60}\n{"checkpoint_seconds":12}\n' >>"$tmp/obs"
run 0 observe --plan "$tmp/plan.json" --observe "$tmp/obs" --output "$tmp/slurm-101.out" \
	--job-id 103 --records "$db" --cluster c1
stdout_has "from 2 steps (observe file)"
stderr_has "2 observations refused, the first at line 2"
run 0 history --records "$db" --cluster c1 --json
json_eq 'j[-1]["checkpoint_s"]' 12

# hostile inputs: the job's record is refused with a reason, nothing stored
mkfifo "$tmp/fifo"
run 1 observe --plan "$tmp/plan.json" --observe "$tmp/fifo" --job-id 104 --records "$db"
stderr_has "a FIFO, not a regular file"
ln -s /etc/shadow "$tmp/link"
run 1 observe --plan "$tmp/plan.json" --observe "$tmp/link" --job-id 104 --records "$db"
stderr_has "symbolic link"
head -c 4096 /dev/urandom >"$tmp/garbage"
printf '\0' >>"$tmp/garbage"
run 1 observe --plan "$tmp/plan.json" --output "$tmp/garbage" --job-id 104 --records "$db"
stderr_has "binary data"
printf 'SQLite format 3\0 but not really a database, no, not at all.........' >"$tmp/bad.db"
run 1 observe --plan "$tmp/plan.json" --output "$tmp/slurm-101.out" --job-id 104 --records "$tmp/bad.db"
stderr_has "not an SQLite database or damaged"
# a broken database is a warning for plan: the model's plan, never a failure
run 0 plan --model llama3-8b --gpus 16 --records "$tmp/bad.db" --json
stderr_has "warning: no calibration"
json_eq 'j["prediction"]["step_seconds"] == '"$model" True
run 0 history --records "$db" --cluster c1 --json
json_eq 'len(j)' 3

# figures outside their physical range (dtplan/record.h): refused with the
# range named and counted; a plan whose prediction is absurd makes no record
printf '{"step":1,"step_seconds":90}\n{"step":2,"step_seconds":1e-303}\n' >"$tmp/absurd"
printf '{"step":3,"step_seconds":4.9e-324}\n{"step":4,"step_seconds":60}\n' >>"$tmp/absurd"
printf '{"step":5,"step_seconds":60}\n' >>"$tmp/absurd"
run 0 observe --plan "$tmp/plan.json" --observe "$tmp/absurd" --job-id 105 --records "$db" \
	--cluster c1
stdout_has "from 2 steps (observe file)"
stderr_has "2 observations refused, the first at line 2: step_seconds 1e-303 s outside the physical range [0.0001, 86400] s"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["prediction"]
p["step_seconds"]=1e-300; p["model_step_seconds"]=1e-300; json.dump(j,open(sys.argv[2],"w"))' \
	"$tmp/plan.json" "$tmp/absurd-plan.json"
run 1 observe --plan "$tmp/absurd-plan.json" --observe "$tmp/obs" --job-id 106 --records "$db" \
	--cluster c1
stderr_has "the plan's predicted step 1e-300 s (model 1e-300 s) outside the physical range"
run 0 history --records "$db" --cluster c1 --json
json_eq '[r["job_id"] for r in j][-1]' 105

# the step spread (issue 34): three jobs of cluster c3 whose steps vary
# teach one GPU's compute-time cv; the plans of c3 use it and say so, the
# site's StepTimeCV= wins over it, --no-calibration gives the default
# job_log_spread FILE STEP_SECONDS WIDTH: 30 iterations, the first 3x slower,
# the others STEP x (1 + WIDTH x (k - 4.5) / 10), k = 7 it mod 10
job_log_spread() {
	python3 - "$1" "$2" "$3" <<'EOF_PY'
import sys
path, t, w = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(path, "w") as f:
    f.write("using world size: 16\n")
    for it in range(1, 31):
        ms = t * 1000.0 * (3.0 if it == 1 else 1.0 + w * ((7 * it) % 10 - 4.5) / 10.0)
        f.write(" [2026-12-01 10:00:%02d.000000] iteration %8d/%8d | consumed samples: %12d |"
                " elapsed time per iteration (ms): %.1f | learning rate: 3.000000E-04 |"
                " global batch size:  1024 | lm loss: 7.000000E+00 |\n"
                % (it % 60, it * 10, 300, it * 10240, ms))
EOF_PY
}
c3="--records $db --cluster c3"
for job in 201 202 203; do
	job_log_spread "$tmp/slurm-$job.out" "$measured" "0.0$((job - 199))"
	run 0 observe --plan "$tmp/plan.json" --output "$tmp/slurm-$job.out" --job-id $job \
		$c3 --time $((1764583200 + job))
	[ $job = 202 ] || continue
	run 0 calibrate --show $c3
	stdout_has "step spread: none learned (needs 3 runs of 20 steps or more with a spread)"
done
run 0 calibrate --show $c3
stdout_has "step spread: one GPU's compute varies "
stdout_has "(sd), learned from 3 runs"
run 0 calibrate --show $c3 --json
json_eq 'j["step_cv_runs"]' 3
cv=$(jnum "$out" 'j["step_cv"]')
# the same cv from the records by the formula (dtplan/record.h), z from
# Python's own normal quantile: cv = s / (m dz - s z50) per run, the median
run 0 history $c3 --json
json_eq 'len([r for r in j if r["steps"] >= 20 and r["measured_step_spread_s"] > 0])' 3
python3 - "$out" "$cv" <<'EOF_PY' && _pass "step_cv is the runs' median by the formula" || _fail "step_cv $cv is not the runs' median"
import json, statistics, sys
inv = statistics.NormalDist().inv_cdf
z = lambda q, g: inv(q ** (1.0 / g))
cvs = []
for r in json.load(open(sys.argv[1])):
    g, m, s = r["gpus"], r["measured_step_s"], r["measured_step_spread_s"]
    cvs.append(s / (m * (z(0.75, g) - z(0.25, g)) - s * max(z(0.5, g), 0.0)))
want, got = statistics.median(cvs), float(sys.argv[2])
sys.exit(0 if abs(got / want - 1) < 1e-6 and 0 < got < 0.5 else 1)
EOF_PY
run 0 plan --model llama3-8b --gpus 16 $c3
stdout_has "(sd; learned from 3 runs' step spread)"
run 0 plan --model llama3-8b --gpus 16 $c3 --json
json_eq 'j["prediction"]["step_cv_from"]' records
json_eq 'j["prediction"]["step_cv_runs"]' 3
json_eq 'j["prediction"]["step_cv"] == '"$cv" True
printf 'StepTimeCV=0.02\n' >"$tmp/cv.conf"
run 0 plan --model llama3-8b --gpus 16 $c3 --site "$tmp/cv.conf" --json
json_eq 'j["prediction"]["step_cv_from"]' site
json_eq 'j["prediction"]["step_cv"]' 0.02
run 0 plan --model llama3-8b --gpus 16 $c3 --no-calibration
stdout_has "(sd; the default, Sinha et al. SC'22)"

run 2 observe --plan "$tmp/plan.json"; stderr_has "--output or --observe is required"
run 2 calibrate; stderr_has "--show is required"
run 0 history --help; stdout_starts "Usage: dtplan history"
run 0 calibrate --help; stdout_starts "Usage: dtplan calibrate"
run 0 observe --help; stdout_starts "Usage: dtplan observe"

echo "1..$((n_pass + n_fail))"
[ "$n_fail" -eq 0 ]
