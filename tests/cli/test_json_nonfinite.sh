#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --json stays JSON for every input: a value that is infinite or undefined
# is written as null (JSON has no inf or nan), the others as numbers.
. "$(dirname "$0")/lib.sh"

# strict_json: the last stdout parses as JSON, without the NaN and Infinity
# that Python's parser would otherwise let through.
strict_json() {
	if python3 -c 'import json, sys
def bad(name):
    raise ValueError(name + " is not JSON")
json.load(open(sys.argv[1]), parse_constant=bad)' "$out" 2>/dev/null; then
		_pass "stdout is strict JSON"
	else
		_fail "stdout is not strict JSON"
	fi
}

# comm: 1e18 bytes at 1e-300 B/s never end: seconds = 2 * 7/8 * 1e18 / 1e-300 is
# infinite; the bytes each rank sends, 2 * 7/8 * 1e18 = 1.75e18, are not.
run 0 comm --op allreduce --bytes 1e18 --ranks 8 --bandwidth 1e-300 --json
strict_json
json_eq "j['seconds']" None
json_eq "j['bytes_per_rank'] == 1.75e18" True
json_eq "j['bandwidth'] == 1e-300" True
run 0 comm --op p2p --bytes 1e18 --ranks 2 --bandwidth 1e-300 --latency 1h --json
strict_json
json_eq "j['seconds']" None
json_eq "j['latency']" 3600

# ckpt: Daly's interval for M = 1e9 h = 3.6e12 s and delta = 1e7 s is
# sqrt(2 delta M) + delta/3 + delta sqrt(delta/(2M))/9 - delta = 8478616017 s;
# in steps of 1e-307 s that is infinite.
run 0 ckpt --gpus 1 --mtbf-gpu-hours 1e9 --write-seconds 1e7 --step-seconds 1e-307 --json
strict_json
json_eq "j['interval_steps']" None
json_eq "round(j['interval_seconds'])" 8478616017
json_eq "j['job_mtbf_seconds']" 3600000000000

# ledger: no accepted input overflows (counts and sizes are bounded), so the
# extremes must come out as finite numbers.  llama3-405b (126 layers, hidden
# 16384, 128 heads, 8 KV heads of 128, SwiGLU F 53248, no dropout) at s = 2^24,
# b = 2^20, unfused without recompute, holds 126 * s b (12 h + 4 kv d + 6 F +
# 2 a s) bytes of activations on stage 0 (doc/internals/cost-model.md,
# "Memory"), and 4 s b V of fp32 logits (V = 128256).
run 0 ledger --model llama3-405b --gpus 1 --seq 16777216 --micro-batch 1048576 --json
strict_json
json_eq "abs(j['bytes_per_gpu']['activations'] / (126 * 2**24 * 2**20 * (12 * 16384 + 4 * 1024 + 6 * 53248 + 2 * 128 * 2**24) + 4 * 2**24 * 2**20 * 128256) - 1) < 1e-12" True
# the smallest model dtplan accepts (10^6 parameters): its bytes are numbers
run 0 ledger --model 1M --gpus 8 --seq 0 --json
strict_json
json_eq "j['bytes_per_gpu']['total'] == 16 * j['params'] and j['params'] > 0" True

# pipeline: the largest schedule simulated, p = 65536, m = 76 (p m under
# 5e6): bubble (p - 1)/(m + p - 1) = 65535/65611.
run 0 pipeline --stages 65536 --microbatches 76 --backward-ratio 0.01 --json
strict_json
json_eq "abs(j['closed_form'] - 65535 / 65611) < 1e-12" True
json_eq "abs(j['bubble_fraction'] - 65535 / 65611) < 1e-9" True
finish
