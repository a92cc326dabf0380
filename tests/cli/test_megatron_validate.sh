#!/bin/sh
# A sweep of plans (dense, GQA, MoE with and without latent attention, 8 to
# 1,024 GPUs, pins, --dt-train keys) whose Megatron-LM arguments go through
# Megatron-LM's own parse_args() and validate_args() and its TransformerConfig
# (tests/cli/megatron_validate.py says how, and what it stubs).
#
# Needs a Megatron-LM source tree in DTPLAN_MEGATRON_LM (read at
# d98e8a64ddf34856e74b24714e3bedb2f5a39553) and a Python with torch and
# packaging (DTPLAN_PYTHON, else python3, else /usr/bin/python3); skipped
# without them.
. "$(dirname "$0")/lib.sh"
mlm=${DTPLAN_MEGATRON_LM:-}
if [ -z "$mlm" ] || [ ! -f "$mlm/megatron/training/arguments.py" ]; then
	echo "SKIP: DTPLAN_MEGATRON_LM names no Megatron-LM source tree"
	exit 77
fi
py=
for p in ${DTPLAN_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch, packaging' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no Python with torch and packaging"; exit 77; }
check="$top_srcdir/tests/cli/megatron_validate.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
plans=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$out.state" "$plans"' EXIT
n=0

# plan ARGS...: one plan of the sweep; the ones that fit are checked
plan() {
	n=$((n + 1))
	if "$DTPLAN" plan "$@" --json >"$plans/$n.json" 2>"$err"; then
		echo "$n: $*" >>"$plans/index"
	else
		rm -f "$plans/$n.json"
	fi
}

for m in llama3-8b llama3-70b llama3-405b gpt-neox-20b mixtral-8x7b deepseek-v3; do
	for g in 8 64 1024; do
		plan --model $m --gpus $g
		plan --model $m --gpus $g --train framework=megatron,vp=2
		plan --model $m --gpus $g --train framework=megatron,recompute=fine
		plan --model $m --gpus $g --train zero=3,framework=megatron
		plan --model $m --gpus $g --train precision=fp8,offload=yes
		plan --model $m --gpus $g --gpu b200 --train framework=megatron,precision=fp8,moments=bf16
		plan --model $m --gpus $g --pp 4 --recompute full
		plan --model $m --gpus $g --cp 2 --train framework=megatron
	done
	plan --model $m --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml"
	plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 --train vp=2
done
plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
plan --model mixtral-8x7b --gpus 64 --train framework=megatron,cp=2,ep=4,recompute=fine
plan --model mixtral-8x22b --gpus 256 --ep 8 --tp 2
plan --model deepseek-v3 --gpus 1024 --ep 16 --pp 8 --train framework=megatron,recompute=fine
plan --model bloom-176b --gpus 512 --train schedule=dualpipe
plan --model llama2-70b --gpus 128 --gpu a100-80gb --zero 0 --micro-batch 2

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e '--use-megatron-fsdp' -e '--expert-model-parallel-size' \
	-e '--context-parallel-size' -e 'mla_up_proj' -e 'moe_act' -e '--use-tp-pp-dp-mapping' \
	-e '--decoder-first-pipeline-num-layers' -e '--num-layers-per-virtual-pipeline-stage' \
	-e '--fp8-recipe mxfp8' -e '--optimizer-cpu-offload' -e '--exp-avg-dtype' | sort -u | wc -l)
if [ "$kinds" -eq 11 ]; then _pass "the sweep has all 11 kinds of argument"
else _fail "the sweep has $kinds of the 11 kinds of argument"; fi
count=$(wc -l <"$plans/index")
if [ "$count" -ge 100 ]; then _pass "$count plans in the sweep"
else _fail "only $count plans in the sweep"; fi

# shellcheck disable=SC2046 # one file name a word
if "$py" "$check" "$mlm" $(ls "$plans"/*.json) >"$out" 2>"$err"; then
	_pass "Megatron-LM's validate_args(): $(tail -1 "$out")"
else
	grep FAIL "$out" | while read -r _ f why; do
		f=${f%:}
		echo "#   $(grep "^$(basename "$f" .json): " "$plans/index") -> $why"
	done
	_fail "Megatron-LM's validate_args(): $(tail -1 "$out")"
fi
finish
