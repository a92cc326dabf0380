#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
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
fw_source DTPLAN_MEGATRON_LM megatron/training/arguments.py "Megatron-LM"
mlm=$fw_dir
fw_python 'import torch, packaging' 'torch and packaging'
check="$top_srcdir/tests/cli/megatron_validate.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
fw_sweep

for m in llama3-8b llama3-70b llama3-405b gpt-neox-20b mixtral-8x7b deepseek-v3; do
	for g in 8 64 1024; do
		fw_plan --model $m --gpus $g
		fw_plan --model $m --gpus $g --train framework=megatron,vp=2
		fw_plan --model $m --gpus $g --train framework=megatron,recompute=fine
		fw_plan --model $m --gpus $g --train zero=3,framework=megatron
		fw_plan --model $m --gpus $g --train precision=fp8,offload=yes
		fw_plan --model $m --gpus $g --gpu b200 --train framework=megatron,precision=fp8,moments=bf16
		fw_plan --model $m --gpus $g --pp 4 --recompute full
		fw_plan --model $m --gpus $g --cp 2 --train framework=megatron
	done
	fw_plan --model $m --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml"
	fw_plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 --train vp=2
done
fw_plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
fw_plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
fw_plan --model mixtral-8x7b --gpus 64 --train framework=megatron,cp=2,ep=4,recompute=fine
fw_plan --model mixtral-8x22b --gpus 256 --ep 8 --tp 2
fw_plan --model deepseek-v3 --gpus 1024 --ep 16 --pp 8 --train framework=megatron,recompute=fine
fw_plan --model bloom-176b --gpus 512 --train schedule=dualpipe
fw_plan --model llama2-70b --gpus 128 --gpu a100-80gb --zero 0 --micro-batch 2
# Megatron-Core's MoE parallel folding (ETP x EP over TP x CP x DP):
# Megatron-Bridge's DeepSeek-V3 and Qwen3-30B-A3B layouts, an ETP above TP
fw_plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=megatron
fw_plan --model "$top_srcdir/tests/data/hf-qwen3-30b-a3b.json" --gpus 8 --tp 4 --pp 2 --ep 4 \
	--train framework=megatron
fw_plan --model mixtral-8x7b --gpus 64 --tp 1 --pp 2 --ep 8 --etp 2 --train framework=megatron

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e '--use-megatron-fsdp' -e '--expert-model-parallel-size' \
	-e '--context-parallel-size' -e 'mla_up_proj' -e 'moe_act' -e '--use-tp-pp-dp-mapping' \
	-e '--decoder-first-pipeline-num-layers' -e '--num-layers-per-virtual-pipeline-stage' \
	-e '--fp8-recipe mxfp8' -e '--optimizer-cpu-offload' -e '--exp-avg-dtype' \
	-e '--expert-tensor-parallel-size' | sort -u | wc -l)
if [ "$kinds" -eq 12 ]; then _pass "the sweep has all 12 kinds of argument"
else _fail "the sweep has $kinds of the 12 kinds of argument"; fi
fw_count 100

fw_check "Megatron-LM's validate_args()" "$check" "$mlm"
finish
