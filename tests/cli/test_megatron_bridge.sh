#!/bin/sh
# A sweep of Llama 3 plans (8B, 70B, 405B; 8 to 1,024 GPUs; PP, interleaved,
# uneven and counted stage splits, CP, fine and full recomputation,
# Megatron-FSDP, fp8, offload, pinned nodes) whose DT_MEGATRON_BRIDGE_OVERRIDES
# go onto Megatron-Bridge's own recipe ConfigContainer through its own
# OmegaConf utilities in struct mode, then its runtime_config_update() and
# ConfigContainer.validate() (tests/cli/megatron_bridge_overrides.py says
# how, what it stubs, and how Hydra's parser is stood in for).
#
# Needs Megatron-Bridge's source tree in DTPLAN_MEGATRON_BRIDGE (read at
# 067f987df03b8355b03192d88d70f1709fedf51a), Megatron-LM's in
# DTPLAN_MEGATRON_LM (d98e8a64ddf34856e74b24714e3bedb2f5a39553) and a Python
# with torch, packaging and omegaconf (DTPLAN_PYTHON, else python3, else
# /usr/bin/python3); skipped without them.
. "$(dirname "$0")/lib.sh"
mb=${DTPLAN_MEGATRON_BRIDGE:-}
mlm=${DTPLAN_MEGATRON_LM:-}
if [ -z "$mb" ] || [ ! -f "$mb/src/megatron/bridge/training/utils/omegaconf_utils.py" ]; then
	echo "SKIP: DTPLAN_MEGATRON_BRIDGE names no Megatron-Bridge source tree"
	exit 77
fi
if [ -z "$mlm" ] || [ ! -f "$mlm/megatron/training/arguments.py" ]; then
	echo "SKIP: DTPLAN_MEGATRON_LM names no Megatron-LM source tree"
	exit 77
fi
py=
for p in ${DTPLAN_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch, packaging, omegaconf' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no Python with torch, packaging and omegaconf"; exit 77; }
check="$top_srcdir/tests/cli/megatron_bridge_overrides.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
plans=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$out.state" "$plans"' EXIT
n=0

# plan ARGS...: one plan of the sweep; the ones Bridge can run are checked
plan() {
	n=$((n + 1))
	if "$DTPLAN" plan "$@" --json >"$plans/$n.json" 2>"$err" &&
		grep -q '"megatron_bridge_overrides": "' "$plans/$n.json"; then
		echo "$n: $*" >>"$plans/index"
	else
		rm -f "$plans/$n.json"
	fi
}

for m in llama3-8b llama3-70b llama3-405b; do
	for g in 8 64 1024; do
		plan --model $m --gpus $g
		plan --model $m --gpus $g --pp 4
		plan --model $m --gpus $g --train framework=megatron,vp=2
		plan --model $m --gpus $g --train framework=megatron,recompute=fine
		plan --model $m --gpus $g --train zero=3,framework=megatron
		plan --model $m --gpus $g --train precision=fp8,offload=yes
		plan --model $m --gpus $g --pp 4 --recompute full
		plan --model $m --gpus $g --cp 2 --train framework=megatron
	done
	plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 --train vp=2
done
plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
plan --model llama3-405b --gpus 1024 --tp 8 --pp 16 --train framework=megatron,vp=8

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e 'virtual_pipeline_model_parallel_size=[0-9]' \
	-e 'num_layers_in_first_pipeline_stage=[0-9]' -e 'account_for_loss_in_pipeline_split=true' \
	-e 'context_parallel_size=2' -e 'recompute_modules=' -e 'recompute_granularity=full' \
	-e 'use_megatron_fsdp=true' -e 'mixed_precision=bf16_with_fp8' -e 'optimizer_cpu_offload=true' \
	-e 'use_tp_pp_dp_mapping=true' | sed 's/=.*//' | sort -u | wc -l)
if [ "$kinds" -eq 10 ]; then _pass "the sweep has all 10 kinds of override"
else _fail "the sweep has $kinds of the 10 kinds of override"; fi
count=$(wc -l <"$plans/index")
if [ "$count" -ge 50 ]; then _pass "$count plans in the sweep"
else _fail "only $count plans in the sweep"; fi

# shellcheck disable=SC2046 # one file name a word
if "$py" "$check" "$mlm" "$mb" $(ls "$plans"/*.json) >"$out" 2>"$err"; then
	_pass "Megatron-Bridge's ConfigContainer: $(tail -1 "$out")"
else
	grep FAIL "$out" | while read -r _ f why; do
		f=${f%:}
		echo "#   $(grep "^$(basename "$f" .json): " "$plans/index") -> $why"
	done
	_fail "Megatron-Bridge's ConfigContainer: $(tail -1 "$out")"
fi
finish
