#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every Megatron-LM argument, Megatron-Bridge override and torchtitan option a
# plan emits is one the framework defines, of its type, among its choices
# (tests/cli/framework_keys.py names the sources and commits read).
. "$(dirname "$0")/lib.sh"
check="$top_srcdir/tests/cli/framework_keys.py"
trap 'rm -f "$out" "$err"' EXIT

keys_ok() {
	run 0 plan "$@" --json
	if got=$(python3 "$check" "$out" 2>&1); then _pass "$*: the frameworks' own words ($got)"
	else _fail "$*: $got"; fi
}
keys_ok --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5
keys_ok --model llama3-70b --gpus 64 --train framework=megatron,precision=fp8
keys_ok --model llama3-70b --gpus 64 --train framework=megatron,zero=3 --pp 4
keys_ok --model llama3-70b --gpus 64 --train framework=torchtitan
keys_ok --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5,framework=torchtitan,zero=3
keys_ok --model llama3-8b --gpus 8 --gpu b200 --train framework=megatron,precision=fp8,offload=yes,zero=1
keys_ok --model mixtral-8x7b --gpus 64 --train framework=megatron,cp=2,ep=4,recompute=fine
keys_ok --model deepseek-v3 --gpus 1024 --train framework=megatron,recompute=fine,moments=bf16
keys_ok --model llama3-405b --gpus 1024 --seq 8192 --train framework=torchtitan,zero=3,cp=2
# the Llama 3 70B interleaved recipe: five chunks of four layers on each stage
run 0 plan --model llama3-70b --gpus 64 --global-batch 128 --tp 4 --pp 4 --train vp=5,framework=torchtitan,zero=3 --json
json_eq "j['parallelism']['layers_per_stage'], j['parallelism']['vp']" "([20, 20, 20, 20], 5)"
json_eq "'--parallelism.pipeline_parallel_layers_per_stage 4' in j['launch']['torchtitan_args']" True
json_eq "'model.transformer.virtual_pipeline_model_parallel_size=5' in j['launch']['megatron_bridge_overrides']" True
# Megatron-Bridge's OmegaConf tree of a Llama recipe nests the TransformerConfig
# fields under model.transformer (BridgeGPTModelConfig, 067f987): a flat
# model.tensor_model_parallel_size is refused in struct mode; DeepSeek-V3's
# recipe builds a provider, whose fields are model.*
run 0 plan --model llama3-8b --gpus 64 --json
json_eq "[w.split('=')[0] for w in j['launch']['megatron_bridge_overrides'].split() if w.startswith('model.')][:2]" "['model.transformer.tensor_model_parallel_size', 'model.transformer.pipeline_model_parallel_size']"
run 0 plan --model deepseek-v3 --gpus 1024 --train framework=megatron --json
json_eq "j['launch']['megatron_bridge_overrides'].split()[0].split('=')[0]" "model.tensor_model_parallel_size"
# what torchtitan cannot say is said, and no options
run 0 plan --model llama3-70b --gpus 64 --train framework=megatron --json
json_eq "j['launch']['torchtitan_args'], j['launch']['torchtitan_unsupported'].startswith('torchtitan cannot run this plan as it is: it has no ZeRO-1')" "(None, True)"
# torchtitan's EP borrows dp_shard x cp x tp ranks (ParallelDims._validate(),
# torchtitan/distributed/parallel_dims.py, b5bcd76): none under DDP; with PP
# its CUDA graphs are off (Trainer.Config), and checkpoints are enabled
run 0 plan --model deepseek-v3 --gpus 1024 --train framework=torchtitan --zero 0 --json
json_eq "j['launch']['torchtitan_args'], j['launch']['torchtitan_unsupported']" "(None, 'torchtitan cannot run this plan as it is: its expert parallelism divides dp_shard x cp x tp, and DDP shards nothing')"
run 0 plan --model llama3-70b --gpus 64 --pp 4 --train framework=torchtitan,zero=3 --json
json_eq "(lambda w: ('--training.disable_cuda_graphs' in w, '--checkpoint.enable --checkpoint.interval' in ' '.join(w)))(j['launch']['torchtitan_args'].split())" "(True, True)"
# fp8 is Bridge's mixed-precision recipe, which overwrites the model's fp8
# fields (MixedPrecisionConfig.setup(), training/mixed_precision.py, 067f987):
# a named one, which replaces the Llama and Qwen3 recipes' "bf16_mixed" (no
# mixed_precision.fp8 key there) and DeepSeek-V3's MixedPrecisionConfig alike
run 0 plan --model llama3-70b --gpus 64 --train framework=megatron,precision=fp8 --json
json_eq "(lambda o: ('mixed_precision=bf16_with_fp8_current_scaling_mixed' in o.split(), 'fp8=' in o.replace('mixed_precision=bf16_with_fp8', '')))(j['launch']['megatron_bridge_overrides'])" "(True, False)"
run 0 plan --model deepseek-v3 --gpus 1024 --train framework=megatron,precision=fp8 --json
json_eq "(lambda o: ('mixed_precision=bf16_with_fp8_current_scaling_mixed' in o.split(), 'mixed_precision.' in o))(j['launch']['megatron_bridge_overrides'])" "(True, False)"
# bf16 with Megatron-LM's fp32 gradient reduction is "bf16_mixed", over the
# DeepSeek-V3 recipe's MixedPrecisionConfig that reduces in bf16; no named
# recipe reduces in bf16, so a DeepSpeed plan names none
run 0 plan --model deepseek-v3 --gpus 1024 --train framework=megatron --json
json_eq "'mixed_precision=bf16_mixed' in j['launch']['megatron_bridge_overrides'].split()" True
run 0 plan --model deepseek-v3 --gpus 1024 --train framework=deepspeed --json
json_eq "'mixed_precision=' in j['launch']['megatron_bridge_overrides']" False
# no multi-token prediction in a plan: the DeepSeek-V3 recipe's MTP layer off
json_eq "'model.mtp_num_layers=null' in j['launch']['megatron_bridge_overrides'].split()" True
# bf16 moments are Bridge's optimizer dtype fields, which its OmegaConf tree
# holds as strings (omegaconf_utils.py, 067f987), with the precision-aware
# optimizer that OptimizerConfig asks for them
run 0 plan --model llama3-70b --gpus 64 --train framework=megatron,moments=bf16 --json
json_eq "(lambda o: ('optimizer.use_precision_aware_optimizer=true' in o, 'optimizer.exp_avg_dtype=bf16 optimizer.exp_avg_sq_dtype=bf16' in o))(j['launch']['megatron_bridge_overrides'])" "(True, True)"
json_eq "'megatron_bridge_unsupported' in j['launch']" False
# a Megatron-FSDP plan with PP: the DeepSpeed fragment says DeepSpeed would
# refuse it (its pipeline engine runs ZeRO-1 at most)
run 0 plan --model llama3-70b --gpus 64 --train framework=megatron,zero=3 --pp 4 --json
json_eq "j['launch']['deepspeed_unsupported']" "DeepSpeed's pipeline engine does not run ZeRO-2/3"
run 0 plan --model llama3-70b --gpus 64 --json
json_eq "'deepspeed_unsupported' in j['launch']" False
# DeepSpeed's pipeline grid is pipe x data x model (deepspeed/runtime/pipe/
# topology.py, edaa722): no sequence axis, so a plan of CP with PP says so
run 0 plan --model llama3-8b --gpus 64 --cp 2 --pp 4 --json
json_eq "j['launch']['deepspeed_unsupported']" "DeepSpeed's pipeline engine has no context (sequence) parallelism"
run 0 plan --model llama3-8b --gpus 64 --cp 2 --pp 4 --train framework=megatron --json
json_eq "j['launch']['deepspeed_unsupported']" "DeepSpeed's pipeline engine has no context (sequence) parallelism"
# CP alone: DeepSpeedConfig's batch check divides the world by the fragment's
# sequence_parallel_size (deepspeed/runtime/config.py), so that 64 / 2 GPUs
# x micro-batch x steps is the batch; with TP the job's mpu gives DP instead
run 0 plan --model llama3-8b --gpus 64 --cp 2 --tp 1 --pp 1 --json
json_eq "(lambda d: (d['sequence_parallel_size'], d['data_parallel_size'], d['train_batch_size'] == 64 // d['sequence_parallel_size'] * d['train_micro_batch_size_per_gpu'] * d['gradient_accumulation_steps']))(j['launch']['deepspeed'])" "(2, 32, True)"
run 0 plan --model llama3-8b --gpus 64 --cp 2 --tp 2 --pp 1 --json
json_eq "'sequence_parallel_size' in j['launch']['deepspeed']" False
# ZeRO-3 with DeepSpeed's MoE layers is refused by name
run 2 plan --model mixtral-8x7b --gpus 64 --train zero=3
stderr_has "ZeRO-3 with the experts of mixtral-8x7b: DeepSpeed refuses MoE layers with stage 3"
finish
