#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
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
fw_source DTPLAN_DEEPSPEED deepspeed/runtime/config.py "DeepSpeed"
ds=$fw_dir
fw_python 'import torch, pydantic, sys; sys.exit(pydantic.VERSION < "2")' 'torch and pydantic 2'
check="$top_srcdir/tests/cli/deepspeed_config.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
fw_sweep

for m in llama3-8b llama3-70b llama3-405b mixtral-8x7b deepseek-v3; do
	for g in 8 64 1024; do
		fw_plan --model $m --gpus $g
		fw_plan --model $m --gpus $g --pp 4
		fw_plan --model $m --gpus $g --cp 2 --tp 1 --pp 1
		fw_plan --model $m --gpus $g --cp 2 --tp 2
		fw_plan --model $m --gpus $g --train zero=3,framework=megatron
		fw_plan --model $m --gpus $g --pp 4 --train zero=2,framework=megatron
		fw_plan --model $m --gpus $g --cp 2 --pp 4 --train framework=megatron
		fw_plan --model $m --gpus $g --train offload=yes
	done
	fw_plan --model $m --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
	fw_plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4
done
fw_plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4 --tp 2
fw_count 80
unsupported=$(cat "$plans"/*.json | grep -c '"deepspeed_unsupported"')
if [ "$unsupported" -ge 3 ]; then _pass "$unsupported plans DeepSpeed would refuse"
else _fail "only $unsupported plans DeepSpeed would refuse"; fi

fw_check "DeepSpeed's checks" "$check" "$ds"
finish
