#!/bin/sh
# A sweep of plans whose DeepSpeed fragments go through DeepSpeed's own
# DeepSpeedConfig (batch check for the plan's world, ZeRO stage), its
# pipeline topology's rank coordinates and its engines' ZeRO/MoE checks
# (tests/cli/deepspeed_config.py says how, and what it stubs).
#
# Needs a DeepSpeed source tree in DTPLAN_DEEPSPEED (read at
# edaa7221267243c7be7fb49c5d5f5c4fb97b4641) and a Python with torch and
# pydantic 2 (DTPLAN_PYTHON, else python3, else /usr/bin/python3); skipped
# without them.
. "$(dirname "$0")/lib.sh"
ds=${DTPLAN_DEEPSPEED:-}
if [ -z "$ds" ] || [ ! -f "$ds/deepspeed/runtime/config.py" ]; then
	echo "SKIP: DTPLAN_DEEPSPEED names no DeepSpeed source tree"
	exit 77
fi
py=
for p in ${DTPLAN_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch, pydantic, sys; sys.exit(pydantic.VERSION < "2")' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "SKIP: no Python with torch and pydantic 2"; exit 77; }
check="$top_srcdir/tests/cli/deepspeed_config.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
plans=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$out.state" "$plans"' EXIT
n=0

plan() {
	n=$((n + 1))
	if "$DTPLAN" plan "$@" --json >"$plans/$n.json" 2>"$err"; then
		echo "$n: $*" >>"$plans/index"
	else
		rm -f "$plans/$n.json"
	fi
}

for m in llama3-8b llama3-70b llama3-405b mixtral-8x7b deepseek-v3; do
	for g in 8 64 1024; do
		plan --model $m --gpus $g
		plan --model $m --gpus $g --pp 4
		plan --model $m --gpus $g --cp 2 --tp 1 --pp 1
		plan --model $m --gpus $g --cp 2 --tp 2
		plan --model $m --gpus $g --train zero=3,framework=megatron
		plan --model $m --gpus $g --pp 4 --train zero=2,framework=megatron
		plan --model $m --gpus $g --cp 2 --pp 4 --train framework=megatron
		plan --model $m --gpus $g --train offload=yes
	done
	plan --model $m --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
	plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4
done
plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4 --tp 2
count=$(wc -l <"$plans/index")
if [ "$count" -ge 80 ]; then _pass "$count plans in the sweep"
else _fail "only $count plans in the sweep"; fi
unsupported=$(cat "$plans"/*.json | grep -c '"deepspeed_unsupported"')
if [ "$unsupported" -ge 3 ]; then _pass "$unsupported plans DeepSpeed would refuse"
else _fail "only $unsupported plans DeepSpeed would refuse"; fi

# shellcheck disable=SC2046 # one file name a word
if "$py" "$check" "$ds" $(ls "$plans"/*.json) >"$out" 2>"$err"; then
	_pass "DeepSpeed's checks: $(tail -1 "$out")"
else
	grep FAIL "$out" | while read -r _ f why; do
		f=${f%:}
		echo "#   $(grep "^$(basename "$f" .json): " "$plans/index") -> $why"
	done
	_fail "DeepSpeed's checks: $(tail -1 "$out")"
fi
finish
