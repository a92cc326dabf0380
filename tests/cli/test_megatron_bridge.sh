#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A sweep of plans whose DT_MEGATRON_BRIDGE_OVERRIDES go onto Megatron-Bridge's
# own recipe ConfigContainer through its own OmegaConf utilities in struct
# mode, then its runtime_config_update() and ConfigContainer.validate(), with
# the plan's TP, PP, EP and CP found in the result
# (tests/cli/megatron_bridge_overrides.py says how, what it stubs, and how
# Hydra's parser is stood in for): Llama 3 (8B, 70B, 405B: dense, grouped-query
# attention; PP, interleaved, uneven and counted stage splits, CP, fine and
# full recomputation, Megatron-FSDP, fp8, offload, bf16 moments, pinned
# nodes), DeepSeek-V3 (MoE with latent attention; layouts) and Qwen3-30B-A3B
# and Qwen3-235B-A22B (MoE with grouped-query attention, given as config.json),
# 8 to 1,024 GPUs, EP pinned and searched.
#
# Needs Megatron-Bridge's source tree in DTPLAN_MEGATRON_BRIDGE (read at
# 067f987df03b8355b03192d88d70f1709fedf51a), Megatron-LM's in
# DTPLAN_MEGATRON_LM (d98e8a64ddf34856e74b24714e3bedb2f5a39553) and a Python
# with torch, packaging and omegaconf (DTPLAN_PYTHON, else python3, else
# /usr/bin/python3); skipped without them.
. "$(dirname "$0")/lib.sh"
fw_source DTPLAN_MEGATRON_BRIDGE src/megatron/bridge/training/utils/omegaconf_utils.py "Megatron-Bridge"
mb=$fw_dir
fw_source DTPLAN_MEGATRON_LM megatron/training/arguments.py "Megatron-LM"
mlm=$fw_dir
fw_python 'import torch, packaging, omegaconf' 'torch, packaging and omegaconf'
check="$top_srcdir/tests/cli/megatron_bridge_overrides.py"
xml="$top_srcdir/tests/data/hgx-h100-8gpu.xml"
fw_sweep -k megatron_bridge_overrides

for m in llama3-8b llama3-70b llama3-405b; do
	for g in 8 64 1024; do
		fw_plan --model $m --gpus $g
		fw_plan --model $m --gpus $g --pp 4
		fw_plan --model $m --gpus $g --train framework=megatron,vp=2
		fw_plan --model $m --gpus $g --train framework=megatron,recompute=fine
		fw_plan --model $m --gpus $g --train zero=3,framework=megatron
		fw_plan --model $m --gpus $g --train precision=fp8,offload=yes
		fw_plan --model $m --gpus $g --pp 4 --recompute full
		fw_plan --model $m --gpus $g --cp 2 --train framework=megatron
	done
	fw_plan --model $m --gpus 64 --train framework=megatron,moments=bf16
	fw_plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 --train vp=2
done
fw_plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
fw_plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
fw_plan --model llama3-405b --gpus 1024 --tp 8 --pp 16 --train framework=megatron,vp=8

# MoE: DeepSeek-V3 (latent attention) and Qwen3-MoE (grouped-query attention),
# the latter as Qwen/Qwen3-30B-A3B's and Qwen3-235B-A22B's config.json, whose
# values Megatron-Bridge's own tests spell (tests/unit_tests/models/qwen/
# test_qwen3_moe_bridge.py, and head_dim 128 in tests/functional_tests/
# test_groups/models/qwen/test_qwen3_moe_conversion.py, 067f987)
q30="$top_srcdir/tests/data/hf-qwen3-30b-a3b.json"
q235="$top_srcdir/tests/data/hf-qwen3-235b-a22b.json"
for m in deepseek-v3 "$q30" "$q235"; do
	for g in 8 64 256 1024; do
		fw_plan --model "$m" --gpus $g
		fw_plan --model "$m" --gpus $g --ep 8
		fw_plan --model "$m" --gpus $g --pp 4 --train framework=megatron,vp=2
		fw_plan --model "$m" --gpus $g --train framework=megatron,recompute=fine
		fw_plan --model "$m" --gpus $g --train zero=3,framework=megatron
		fw_plan --model "$m" --gpus $g --train precision=fp8,offload=yes
		fw_plan --model "$m" --gpus $g --gpu b200 --train framework=megatron,precision=fp8
		fw_plan --model "$m" --gpus $g --pp 4 --recompute full
		fw_plan --model "$m" --gpus $g --cp 2 --train framework=megatron
	done
	fw_plan --model "$m" --gpus 256 --train framework=megatron,moments=bf16
	fw_plan --model "$m" --gpus 1024 --train framework=megatron,moments=bf16,recompute=fine
done
# near the recipes' own layouts (DeepSeek-V3 TP 2 x PP 16 x EP 64 and TP 2 x
# PP 8 x EP 32, Qwen3-30B-A3B TP 4 x PP 2 x EP 4, Qwen3-235B-A22B TP 4 x PP 16
# x CP 2 x EP 8), with the EP that dtplan carves from DP x CP
fw_plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 32
fw_plan --model deepseek-v3 --gpus 256 --tp 2 --pp 8 --ep 16 --recompute full
fw_plan --model "$q30" --gpus 8 --tp 4 --ep 2
fw_plan --model "$q30" --gpus 8 --tp 4 --pp 2
fw_plan --model "$q235" --gpus 256 --tp 4 --pp 16 --cp 2
fw_plan --model "$q235" --gpus 256 --tp 4 --pp 8 --cp 2 --ep 4
# and the recipes' own layouts, folded (ETP 1, EP over TP x CP x DP:
# Megatron-Core's MoE parallel folding; the recipes' files at 067f987)
fw_plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=megatron
fw_plan --model deepseek-v3 --gpus 256 --tp 2 --pp 8 --ep 32 --train framework=megatron
fw_plan --model "$q30" --gpus 8 --tp 4 --pp 2 --ep 4 --train framework=megatron
fw_plan --model "$q235" --gpus 256 --tp 4 --pp 16 --cp 2 --ep 8 --train framework=megatron

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e 'virtual_pipeline_model_parallel_size=[0-9]' \
	-e 'num_layers_in_first_pipeline_stage=[0-9]' -e 'account_for_loss_in_pipeline_split=true' \
	-e 'context_parallel_size=2' -e 'recompute_modules=' -e 'recompute_granularity=full' \
	-e 'use_megatron_fsdp=true' -e 'mixed_precision=bf16_with_fp8' -e 'optimizer_cpu_offload=true' \
	-e 'use_tp_pp_dp_mapping=true' -e 'expert_model_parallel_size=[2-9]' \
	-e 'expert_model_parallel_size=[1-9][0-9]' -e 'pipeline_model_parallel_layout=E' \
	-e 'mla_up_proj' -e 'moe_act' -e 'bf16_with_mxfp8_mixed' -e 'exp_avg_dtype=bf16' |
	sed 's/=.*//' | sort -u | wc -l)
if [ "$kinds" -eq 16 ]; then _pass "the sweep has all 16 kinds of override"
else _fail "the sweep has $kinds of the 16 kinds of override"; fi
fw_count 150
for m in deepseek-v3 hf-qwen3-30b-a3b.json hf-qwen3-235b-a22b.json; do
	k=$(grep -l "\"name\": \"$m\"" "$plans"/*.json | wc -l)
	if [ "$k" -ge 20 ]; then _pass "$k plans of $m"; else _fail "only $k plans of $m"; fi
done

fw_check "Megatron-Bridge's ConfigContainer" "$check" "$mlm" "$mb"
finish
