#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The plan JSON against its schema (doc/dtplan.plan.schema.json, checked by
# tests/plan_schema.py): every golden plan in tests/cli/golden and fresh
# `dtplan plan --json` output of every kind.  Skipped (exit 77) when python3
# has no jsonschema module (Debian: python3-jsonschema).
. "$(dirname "$0")/lib.sh"
schema="$top_srcdir/doc/dtplan.plan.schema.json"
check="$top_srcdir/tests/plan_schema.py"
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
if ! python3 -c 'import jsonschema' 2>/dev/null; then
	echo "skip: python3 has no jsonschema module (apt-get install python3-jsonschema)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

# valid NAME FILE...: the files are dtplan.plan/1 documents.
valid() {
	name=$1
	shift
	if python3 "$check" "$schema" "$@" >"$tmp/why" 2>&1; then
		_pass "$name"
	else
		sed 's/^/#   /' "$tmp/why" | head -20
		_fail "$name"
	fi
}

n=0
for g in "$GOLDEN_DIR"/*.json; do
	[ -e "$g" ] || continue
	n=$((n + 1))
	valid "golden $(basename "$g") is a dtplan.plan/1" "$g"
done
if [ "$n" -ge 2 ]; then _pass "$n golden plans"; else _fail "golden plans: $n, expected at least 2"; fi

# fresh ARGS...: `dtplan plan ARGS --json` is a dtplan.plan/1.
i=0
fresh() {
	i=$((i + 1))
	run 0 plan "$@" --json || return 0
	cp "$out" "$tmp/plan$i.json"
	valid "dtplan plan $* --json is a dtplan.plan/1" "$tmp/plan$i.json"
}
fresh --model llama2-70b --gpus 128 --gpu a100-80gb
fresh --model llama2-7b --gpus 8 --gpu a100-80gb
fresh --model llama2-7b --gpus 8 --zero 3
fresh --model llama2-70b --gpus 128 --gpu a100-80gb --tp 4 --pp 2 --zero 1 --micro-batch 2 --recompute full
fresh --model 13B --gpus 32 --gpus-per-node 4 --seq 2048 --global-batch 512
# interleaving, ZeRO-Offload, fp8, Megatron-LM's count, unfused attention, time to train
fresh --model llama2-70b --gpus 128 --gpu a100-80gb --tp 4 --pp 4 --train vp=5 --tokens 2T
fresh --model llama2-70b --gpus 8 --gpu a100-80gb
fresh --model llama3-8b --gpus 8 --train precision=fp8,framework=megatron,attention=unfused
# Blackwell's block-scaled formats, and NVL72 racks from the site file
fresh --model llama3-8b --gpus 8 --gpu b300 --train precision=mxfp8
fresh --model llama3-8b --gpus 8 --gpu gb300 --train precision=nvfp4
fresh --model deepseek-v3 --nodes 'node[7-30]' --site "$data/dtplan-nvl72.conf" --ep 32
fresh --model llama2-70b --gpus 128 --gpu a100-80gb --gpus-per-node 4 --tp 8
fresh --model llama3-70b --nodes 'gpu[01-16]' --topology "$data/topology-two-racks.conf" \
	--site "$data/dtplan-two-racks.conf" --node-xml "gpu[01-16]=$xml"
fresh --model llama3-70b --nodes 'gpu[01-04,09-12,17-24]' \
	--topology "$data/topology-three-leaves.conf" --site "$data/dtplan-three-leaves.conf" \
	--node-xml "gpu01=$xml"
fresh --model llama3-8b --nodes 'a[1-3]' --gpus-per-node 4

# The check can fail: a count written as a real, a batch that does not add up.
python3 - "$tmp/plan1.json" "$tmp/real.json" "$tmp/batch.json" <<'EOF_PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["gpus"] = float(j["gpus"])
json.dump(j, open(sys.argv[2], "w"))
j = json.load(open(sys.argv[1]))
j["parallelism"]["global_batch"] += 1
j["global_batch"] += 1
json.dump(j, open(sys.argv[3], "w"))
EOF_PY
for bad in "real.json:.gpus: 128.0 is not of type 'integer'" \
	"batch.json:parallelism.global_batch: not dp x micro_batch x num_microbatches"; do
	f=${bad%%:*} why=${bad#*:}
	if python3 "$check" "$schema" "$tmp/$f" >"$tmp/why" 2>&1; then
		_fail "$f passes the check"
	elif grep -qF -- "$tmp/$f: $why" "$tmp/why"; then
		_pass "$f fails: $why"
	else
		sed 's/^/#   /' "$tmp/why"
		_fail "$f fails without '$why'"
	fi
done
finish
