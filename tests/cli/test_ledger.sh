#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan ledger: memory per GPU.
. "$(dirname "$0")/lib.sh"

run 0 ledger --help; stdout_starts "Usage: dtplan ledger"
run 0 help ledger; stdout_starts "Usage: dtplan ledger"

# DESIGN: 7B on 8 GPUs, per GPU ZeRO-1 38.5 GB (4 + 12/8 = 5.5 bytes * 7e9).
run 0 ledger --model 7B --gpus 8 --zero 1 --seq 0
golden ledger_7b_zero1.txt
run 0 ledger --model 7B --gpus 8 --zero 1 --seq 0 --json
json_eq "j['bytes_per_gpu']['total']" 38500000000
json_eq "j['params']" 7000000000
json_eq "j['dp']" 8
# ZeRO-2: 2 + 14/8 = 3.75 B/param = 26.25 GB; ZeRO-3: 16/8 = 2 B/param = 14 GB
run 0 ledger --model 7B --gpus 8 --zero 2 --seq 0 --json
json_eq "j['bytes_per_gpu']['total']" 26250000000
run 0 ledger --model 7B --gpus 8 --zero 3 --seq 0 --json
json_eq "j['bytes_per_gpu']['total']" 14000000000
# no ZeRO: 16 * 7e9 = 112 GB; without the master copy 12 * 7e9 = 84 GB
run 0 ledger --model 7B --gpus 8 --seq 0 --json
json_eq "j['bytes_per_gpu']['total']" 112000000000
run 0 ledger --model 7B --gpus 8 --seq 0 --no-master-copy --json
json_eq "j['bytes_per_gpu']['optimizer']" 56000000000
# TP 2 x PP 2 halves and halves: 6738415616 / 4 params per GPU, dp = 16 / 4 = 4
run 0 ledger --model llama2-7b --gpus 16 --tp 2 --pp 2 --seq 0 --json
json_eq "j['params_per_gpu']" 1684603904
json_eq "j['dp']" 4
# activations: full recompute 2sbh per layer, 32 layers of llama2-7b, s 4096, b 2, h 4096:
# 2 * 4096 * 2 * 4096 * 32 = 2147483648; the layer being rerun whole, unfused, per token
# 16h + 6F (F 11008, SwiGLU, no dropout: doc/internals/cost-model.md, "Memory") and the
# softmax's output 2as: 8192 * (65536 + 66048 + 262144) = 3225419776; and fp32 logits
# 4 s b V = 4 * 4096 * 2 * 32000 = 1048576000
run 0 ledger --model llama2-7b --gpus 8 --recompute full --micro-batch 2 --json
json_eq "j['bytes_per_gpu']['activations']" 6421479424
json_eq "j['recompute']" full

# bad input
run 2 ledger --gpus 8; stderr_has "--model is required"
run 2 ledger --model 7B; stderr_has "--gpus is required"
run 2 ledger --model 7B --gpus 8 --bogus; stderr_has "unknown option '--bogus'"
run 2 ledger --model 7B --gpus; stderr_has "option '--gpus' needs a value"
run 2 ledger --model 7B --gpus eight; stderr_has "--gpus: 'eight' is not a whole number"
run 2 ledger --model 7B --gpus 0; stderr_has "--gpus: 0 is out of range"
run 2 ledger --model 7B --gpus -8; stderr_has "--gpus: -8 is out of range"
run 2 ledger --model 7B --gpus 99999999999; stderr_has "out of range"
run 2 ledger --model 7B --gpus 8 --tp 0; stderr_has "--tp: 0 is out of range"
run 2 ledger --model 7B --gpus 8 --zero 4; stderr_has "--zero: 4 is out of range"
run 2 ledger --model 7B --gpus 8 --recompute some; stderr_has "--recompute"
run 2 ledger --model 7B --gpus 8 --seq 4k; stderr_has "--seq: '4k' is not a whole number"
run 2 ledger --model 7B --gpus 8 --micro-batch 0; stderr_has "--micro-batch: 0 is out of range"
run 2 ledger --model 7B --gpus 8 --tp 3; stderr_has "8 GPUs are not a multiple of TP 3 x PP 1"
# issue 13, finding 16: 65536 x 65536 wrapped to 0 in int, then SIGFPE (exit 136)
run 2 ledger --model 7B --gpus 8 --tp 65536 --pp 65536
stderr_has "TP 65536 x PP 65536 = 4294967296 GPUs is more than the 8 GPUs of the job"
run 2 ledger --model 7B --gpus 16 --tp 16 --pp 2; stderr_has "TP 16 x PP 2 = 32 GPUs is more than the 16"
run 2 ledger --model llama2-70b --gpus 48 --tp 3; stderr_has "--tp: TP 3 does not divide the 64 attention heads"
run 2 ledger --model llama2-70b --gpus 16 --tp 16; stderr_has "8 key/value heads"
run 2 ledger --model nosuchmodel --gpus 8; stderr_has "unknown model 'nosuchmodel'"
run 2 ledger --model 7Q --gpus 8; stderr_has "--model"
run 2 ledger --model 7B --gpus 8 extra; stderr_has "unexpected argument 'extra'"
finish
