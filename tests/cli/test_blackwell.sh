#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Blackwell (issue 33): GB300 and B300 in the catalog, precision=mxfp8 and
# precision=nvfp4 (Transformer Engine's MXFP8BlockScaling and
# NVFP4BlockScaling), refused where the tensor cores lack block scaling.
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
pin="--model llama3-70b --gpus 64 --tp 2 --pp 1 --zero 1 --micro-batch 1 --recompute none"
get='import json,sys; j=json.load(open(sys.argv[1])); print(j["prediction"]["step_seconds"], j["memory"]["bytes_per_gpu"]["activations"])'

for g in gb300 b300; do
	# shellcheck disable=SC2086
	run 0 plan --model llama3-70b --gpus 72 --gpu $g --json
	json_eq 'j["gpu"]["name"]' $g
	json_eq 'j["gpu"]["memory_bytes"]' 288000000000.0
done

# The same split in fp8, mxfp8 and nvfp4 on a GB300: mxfp8 keeps its GEMM
# inputs with one scale byte per 32 (a little more than fp8) and casts a
# little more; nvfp4 keeps half a byte and one scale per 16, and runs its
# GEMMs at the fp4 rate.
for p in fp8 mxfp8 nvfp4; do
	# shellcheck disable=SC2086
	run 0 plan $pin --gpu gb300 --train precision=$p --json
	json_eq 'j["precision"]' $p
	python3 -c "$get" "$out" >"$tmp/$p"
done
read -r s8 a8 <"$tmp/fp8"
read -r smx amx <"$tmp/mxfp8"
read -r s4 a4 <"$tmp/nvfp4"
check() { if python3 -c "import sys; sys.exit(0 if ($2) else 1)"; then _pass "$1"; else _fail "$1 ($2)"; fi; }
check "mxfp8 keeps more activations than fp8" "$amx > $a8"
check "mxfp8's extra is under 1/32 of fp8's activations" "$amx - $a8 < $a8 / 32"
check "nvfp4 keeps fewer activations than fp8" "$a4 < $a8"
check "mxfp8's step is fp8's and its casts" "$s8 <= $smx < $s8 * 1.01"
check "nvfp4's step is shorter than mxfp8's" "$s4 < $smx"

# Hopper has no MX formats: refused, naming what it needs.
for p in mxfp8 nvfp4; do
	run 2 plan --model llama3-70b --gpus 64 --gpu h100-sxm --train precision=$p
	stderr_has "h100-sxm has no block-scaled tensor cores ($p needs Blackwell: B200, GB200, B300, GB300; Hopper has no MX formats)"
done
run 2 plan --model llama3-70b --gpus 64 --gpu gb300 --train precision=fp4
stderr_has "precision: 'fp4' is not bf16, fp8, mxfp8 or nvfp4"

# The hand-offs name each format's recipe: Megatron-LM's --fp8-recipe mxfp8
# and --fp4-format e2m1 --fp4-recipe nvfp4 (megatron/training/arguments.py),
# Megatron-Bridge's bf16_with_mxfp8_mixed and bf16_with_nvfp4_mixed
# (training/mixed_precision.py); DeepSpeed has neither, and says so.
for p in mxfp8 nvfp4; do
	run 0 plan --model llama3-8b --gpus 8 --gpu b200 --train precision=$p,framework=megatron --json
	case $p in
	mxfp8) want='--fp8-format e4m3 --fp8-recipe mxfp8' ;;
	nvfp4) want='--fp4-format e2m1 --fp4-recipe nvfp4' ;;
	esac
	json_eq "'$want' in j['launch']['megatron_args']" True
	json_eq "'mixed_precision=bf16_with_${p}_mixed' in j['launch']['megatron_bridge_overrides']" True
	json_eq "j['launch']['deepspeed_unsupported']" "its launcher has no $(echo "$p" | tr a-z A-Z) block-scaling recipe"
done

finish
