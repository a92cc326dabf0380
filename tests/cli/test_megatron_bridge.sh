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
	fw_plan --model $m --nodes 'gpu[01-16]' --node-xml "gpu[01-16]=$xml" --tp 4 --pp 4 --train vp=2
done
fw_plan --model llama3-8b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" --pp 4
fw_plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
fw_plan --model llama3-405b --gpus 1024 --tp 8 --pp 16 --train framework=megatron,vp=8

# the sweep spans what it says it does
kinds=$(cat "$plans"/*.json | grep -o -e 'virtual_pipeline_model_parallel_size=[0-9]' \
	-e 'num_layers_in_first_pipeline_stage=[0-9]' -e 'account_for_loss_in_pipeline_split=true' \
	-e 'context_parallel_size=2' -e 'recompute_modules=' -e 'recompute_granularity=full' \
	-e 'use_megatron_fsdp=true' -e 'mixed_precision=bf16_with_fp8' -e 'optimizer_cpu_offload=true' \
	-e 'use_tp_pp_dp_mapping=true' | sed 's/=.*//' | sort -u | wc -l)
if [ "$kinds" -eq 10 ]; then _pass "the sweep has all 10 kinds of override"
else _fail "the sweep has $kinds of the 10 kinds of override"; fi
fw_count 50

fw_check "Megatron-Bridge's ConfigContainer" "$check" "$mlm" "$mb"
finish
