#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep of torchtitan plans (dense, GQA, MoE with EP, 8 to 1,024 GPUs; DDP,
# FSDP2, TP, CP, PP, interleaved, full and per-op selective recomputation,
# pins) whose
# DT_TORCHTITAN_ARGS go through torchtitan's own Trainer.Config, section
# dataclasses and ParallelDims (tests/cli/torchtitan_validate.py says how,
# and what it stubs: tyro among them, read as tyro reads the words).
#
# Needs a torchtitan source tree in DTPLAN_TORCHTITAN (read at
# b5bcd76c66d0acb1a08b176d9639425bc55e0b2a) and a Python with torch
# (DTPLAN_PYTHON, else python3, else /usr/bin/python3); skipped without them.
. "$(dirname "$0")/lib.sh"
fw_source DTPLAN_TORCHTITAN torchtitan/trainer.py "torchtitan"
tt=$fw_dir
fw_python 'import torch' 'torch'
check="$top_srcdir/tests/cli/torchtitan_validate.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
fw_sweep -k torchtitan_args

for m in llama3-8b llama3-70b llama3-405b mixtral-8x7b deepseek-v3; do
	for g in 8 64 1024; do
		for x in "" "--pp 4" "--pp 4 --train vp=2" "--cp 2 --train zero=3" \
			"--recompute full" "--recompute selective" "--train zero=2" "--zero 0" "--ep 8 --tp 1"; do
			# shellcheck disable=SC2086 # x is words
			fw_plan --model $m --gpus $g --train framework=torchtitan $x
		done
	done
	fw_plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 \
		--train framework=torchtitan,vp=2
done
fw_plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5,framework=torchtitan,zero=3
fw_plan --model llama3-405b --gpus 1024 --seq 8192 --train framework=torchtitan,zero=3,cp=2
# EP over TP ranks with the experts whole (ETP 1): dp_shard x cp x tp holds EP
fw_plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=torchtitan,zero=3
fw_plan --model mixtral-8x7b --gpus 16 --tp 4 --ep 8 --train framework=torchtitan,zero=3

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e 'replicate_degree \([2-9]\|[1-9][0-9]\)' -e 'shard_degree \([2-9]\|[1-9][0-9]\)' \
	-e 'tensor_parallel_degree [2-9]' -e 'context_parallel_degree [2-9]' \
	-e 'expert_parallel_degree' -e 'Interleaved1F1B' -e 'schedule 1F1B' \
	-e 'activation-checkpoint:full' -e 'activation-checkpoint:selective' -e 'checkpoint.interval' |
	sed 's/^activation-checkpoint:/AC-/' | cut -c1-12 | sort -u | wc -l)
if [ "$kinds" -eq 10 ]; then _pass "the sweep has all 10 kinds of option"
else _fail "the sweep has $kinds of the 10 kinds of option"; fi
fw_count 50

fw_check "torchtitan's Trainer.Config" "$check" "$tt"
finish
