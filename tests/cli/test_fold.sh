#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Megatron-Core's MoE parallel folding: the experts' groups (ETP x EP x EDP)
# laid over the same ranks as the attention's (TP x CP x DP) in each stage
# (initialize_model_parallel(), megatron/core/parallel_state.py, NVIDIA/
# Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553).  Megatron-Bridge's
# folded MoE recipes plan when pinned, with the values of their files at
# NVIDIA-NeMo/Megatron-Bridge 067f987df03b8355b03192d88d70f1709fedf51a.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
# gpt-oss: openai/gpt-oss-120b and -20b's config.json (36 and 24 layers,
# hidden 2880, 64 heads of 64, 8 key/value heads, 128 and 32 experts, 4 per
# token, expert width 2880, vocabulary 201088)
oss120='layers=36,hidden=2880,heads=64,kv_heads=8,head_dim=64,ffn=2880,vocab=201088,mlp=swiglu,experts=128,top_k=4,moe_ffn=2880'
oss20='layers=24,hidden=2880,heads=64,kv_heads=8,head_dim=64,ffn=2880,vocab=201088,mlp=swiglu,experts=32,top_k=4,moe_ffn=2880'

# recipe GPUS MODEL TP PP CP EP ETP [ARGS...]: the pinned recipe plans under
# framework=megatron, with the experts' degrees it pins
recipe() {
	g=$1 m=$2 tp=$3 pp=$4 cp=$5 ep=$6 etp=$7
	shift 7
	run 0 plan --model "$m" --gpus "$g" --tp "$tp" --pp "$pp" --cp "$cp" --ep "$ep" \
		--etp "$etp" --train framework=megatron --json "$@" || return 0
	json_eq '[j["parallelism"][k] for k in ("tp", "pp", "cp", "ep")] + [j["parallelism"].get("etp", j["parallelism"]["tp"])]' \
		"[$tp, $pp, $cp, $ep, $etp]"
}

# src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py:
# deepseek_v3_pretrain_1024gpu_h100_bf16_config, _256gpu_h100_bf16_32nodes_config
recipe 1024 deepseek-v3 2 16 1 64 1 --global-batch 4096
recipe 256 deepseek-v3 2 8 1 32 1 --global-batch 4096
# src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py: qwen3_30b_a3b_pretrain_8gpu,
# _16gpu, qwen3_235b_a22b_pretrain_256gpu (h100, bf16)
recipe 8 "$data/hf-qwen3-30b-a3b.json" 4 2 1 4 1
recipe 16 "$data/hf-qwen3-30b-a3b.json" 1 1 1 16 1 --global-batch 1024
recipe 256 "$data/hf-qwen3-235b-a22b.json" 4 16 2 8 1
# src/megatron/bridge/recipes/gpt_oss/h100/gpt_oss.py: gpt_oss_20b_pretrain_16gpu,
# gpt_oss_120b_pretrain_64gpu (h100, bf16)
recipe 16 "$oss20" 2 4 1 4 1 --global-batch 512
recipe 64 "$oss120" 2 4 1 16 1 --global-batch 512
# src/megatron/bridge/recipes/qwen/gb200/qwen3_moe.py:
# qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config
recipe 8 "$data/hf-qwen3-30b-a3b.json" 1 1 1 8 1 --gpu gb200 --gpus-per-node 4 \
	--global-batch 512 --train precision=mxfp8

# the text names the folding
run 0 plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=megatron
stdout_has "(experts: ETP 1 x EP 64 x EDP 1 of TP x CP x DP)"
# its Megatron-LM arguments say the experts' TP where it is not TP's
run 0 plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=megatron \
	--json
json_eq '"--expert-tensor-parallel-size 1" in json.dumps(j)' True

# DeepSpeed carves EP from DP: the folded layout is refused, naming who folds
run 2 plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=deepspeed
stderr_has "EP 64 does not divide CP x DP 32"
stderr_has "framework=megatron folds EP over TP too"
# torchtitan's EP takes TP ranks with its experts whole (ETP 1,
# torchtitan/distributed/parallel_dims.py, b5bcd76): the layout plans, ETP 2 not
run 0 plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 64 --train framework=torchtitan --json
json_eq 'j["parallelism"]["etp"]' 1
run 2 plan --model deepseek-v3 --gpus 1024 --tp 2 --pp 16 --ep 32 --etp 2 --train framework=torchtitan
stderr_has "keeps its"
# ETP x EP must divide TP x CP x DP (128 here): 4 x 64 does not
run 2 plan --model deepseek-v3 --gpus 256 --tp 4 --pp 2 --ep 64 --etp 4 --train framework=megatron
stderr_has "ETP 4 x EP 64 does not divide TP x CP x DP 128"

# the ledger shards the experts by ETP x EP: mixtral-8x7b's routed experts
# (32 layers x 8 experts x 3 x 4096 x 14336 parameters, bf16 weights) cost
# 2 P (1/(1 x 4) - 1/(2 x 4)) bytes more per GPU at ETP 1 than at ETP 2
p=$((32 * 8 * 3 * 4096 * 14336))
for etp in 1 2; do
	run 0 plan --model mixtral-8x7b --gpus 64 --tp 2 --pp 1 --ep 4 --etp $etp --zero 1 \
		--recompute full --micro-batch 1 --train framework=megatron --json
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["bytes_per_gpu"]["weights"])' "$out" >"$out.w$etp"
done
if python3 -c "
import sys
w1, w2 = float(open('$out.w1').read()), float(open('$out.w2').read())
want = 2.0 * $p * (1 / 4 - 1 / 8)
sys.exit(0 if abs((w1 - w2) - want) < 1e-3 * want else 1)"; then
	_pass "ETP 1 holds 2 P (1/4 - 1/8) more expert weight bytes than ETP 2"
else
	_fail "expert weights: ETP 1 $(cat "$out.w1"), ETP 2 $(cat "$out.w2")"
fi
rm -f "$out.w1" "$out.w2"

# unpinned, the search tries ETP 1 beside TP's: EP 8 beyond CP x DP 4 needs it
run 0 plan --model mixtral-8x7b --gpus 32 --tp 2 --pp 4 --ep 8 --train framework=megatron --json
json_eq 'j["parallelism"]["etp"]' 1
# NeMo 1.x forms its expert groups at TP's size (lib/launch/nemo.c, 8cfedd7):
# no overrides for ETP 1 under TP 2, and why; Megatron-LM's arguments carry it
json_eq 'j["launch"]["nemo_overrides"]' None
json_eq '"TP'"'"'s size (2)" in j["launch"]["nemo_unsupported"]' True
json_eq '"--expert-tensor-parallel-size 1" in j["launch"]["megatron_args"]' True
json_eq '"DT_NEMO_OVERRIDES" in j["launch"]["env"]' False

# every rank's expert coordinates are the RankGenerator's: re-derived
# (tests/cli/megatron_ranks.py), and with a Megatron-LM source tree in
# DTPLAN_MEGATRON_LM (read at d98e8a64ddf34856e74b24714e3bedb2f5a39553) and a
# Python with numpy and torch (DTPLAN_PYTHON, else /usr/bin/python3) its own
# RankGenerator's too
mlm="" mpy=python3
if [ -f "${DTPLAN_MEGATRON_LM:-/nonexistent}/megatron/core/parallel_state.py" ]; then
	for py in ${DTPLAN_PYTHON:-} python3 /usr/bin/python3; do
		if "$py" -c 'import numpy, torch' 2>/dev/null; then
			mlm=$DTPLAN_MEGATRON_LM mpy=$py
			break
		fi
	done
fi
[ -n "$mlm" ] || echo "# no Megatron-LM tree and Python with torch: the re-derivation alone"
for pins in "--tp 2 --pp 2 --ep 8 --etp 1" "--tp 4 --pp 1 --ep 8 --etp 1" \
	"--tp 2 --cp 2 --pp 2 --ep 8 --etp 1" "--tp 4 --pp 2 --ep 2 --etp 2" \
	"--tp 2 --pp 1 --ep 4 --etp 4" "--tp 8 --pp 2 --ep 8 --etp 1" "--tp 1 --pp 2 --ep 8 --etp 2"; do
	# shellcheck disable=SC2086
	run 0 plan --model mixtral-8x7b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" $pins \
		--train framework=megatron --json || continue
	# shellcheck disable=SC2086 # mlm: no word, or the tree
	if got=$("$mpy" "$top_srcdir/tests/cli/megatron_ranks.py" "$out" $mlm 2>&1); then
		_pass "$pins: expert ranks as Megatron-Core's RankGenerator forms them ($got)"
	else
		_fail "$pins: $got"
	fi
done
finish
