#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan ckpt: checkpoint interval.
. "$(dirname "$0")/lib.sh"

run 0 ckpt --help; stdout_starts "Usage: dtplan ckpt"

# Llama 3: 16384 GPUs, 16384*54*24/419 GPU-hours per GPU: job MTBF 54*24/419 h = 3.09 h
run 0 ckpt --gpus 16384 --mtbf-gpu-hours 50677.1 --write-seconds 60 --restart-seconds 300 --step-seconds 10
golden ckpt_llama3.txt
run 0 ckpt --gpus 16384 --mtbf-gpu-hours 50677.1 --write-seconds 60 --json
json_eq "round(j['job_mtbf_seconds'] / 3600, 2)" 3.09
# Young: sqrt(2 * 60 * 11135.1) = 1155.9 s
json_eq "round(j['young_seconds'], 1)" 1155.9
json_eq "'interval_steps' in j" False
json_eq "j['interval_seconds'] == j['daly_seconds']" True
# M = 3600 * 1 / 1 = 3600 s; delta = 2 M = 7200 s: Daly's interval is M
run 0 ckpt --gpus 1 --mtbf-gpu-hours 1 --write-seconds 2h --json
json_eq "j['daly_seconds']" 3600
# interval in steps: floor(interval / step)
run 0 ckpt --gpus 128 --mtbf-gpu-hours 50677 --write-seconds 11s --step-seconds 1.5min --json
json_eq "j['interval_steps'] == int(j['interval_seconds'] // 90)" True
json_eq "j['step_seconds']" 90

# bad input
run 2 ckpt --mtbf-gpu-hours 1000 --write-seconds 60; stderr_has "--gpus is required"
run 2 ckpt --gpus 8 --write-seconds 60; stderr_has "--mtbf-gpu-hours is required"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000; stderr_has "--write-seconds is required"
run 2 ckpt --gpus 0 --mtbf-gpu-hours 1000 --write-seconds 60; stderr_has "--gpus: 0 is out of range"
run 2 ckpt --gpus -1 --mtbf-gpu-hours 1000 --write-seconds 60; stderr_has "--gpus: -1 is out of range"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 0 --write-seconds 60; stderr_has "--mtbf-gpu-hours: 0 is out of range"
run 2 ckpt --gpus 8 --mtbf-gpu-hours lots --write-seconds 60; stderr_has "'lots' is not a number"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1e99 --write-seconds 60; stderr_has "out of range"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 0; stderr_has "must be more than 0"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 1fortnight; stderr_has "--write-seconds: unknown unit"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 1e12; stderr_has "at most 10^7"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 60 --restart-seconds -5; stderr_has "--restart-seconds"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 60 --step-seconds 0; stderr_has "--step-seconds"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds 60 --mean-time 3; stderr_has "unknown option '--mean-time'"
run 2 ckpt --gpus 8 --mtbf-gpu-hours 1000 --write-seconds; stderr_has "needs a value"
finish
