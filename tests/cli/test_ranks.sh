#!/bin/sh
# Every rank's TP/CP/DP/PP/EP coordinate against the groups Megatron-LM forms:
# tests/cli/megatron_ranks.py re-implements its RankGenerator (decoder and
# expert generators, megatron/core/parallel_state.py at d98e8a6).
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
check="$top_srcdir/tests/cli/megatron_ranks.py"
trap 'rm -f "$out" "$err"' EXIT

# megatron_ok NODES MODEL PINS...: the plan's ranks are Megatron-LM's
megatron_ok() {
	nodes=$1 model=$2
	shift 2
	run 0 plan --model "$model" --nodes "$nodes" --node-xml "$nodes=$xml" "$@" --json
	if got=$(python3 "$check" "$out" 2>&1); then
		_pass "$model $*: ranks as Megatron-LM forms them ($got)"
	else
		_fail "$model $*: $got"
	fi
}

# EP with CP: the expert groups run over CP x DP, next to TP
megatron_ok 'gpu[01-04]' mixtral-8x7b --tp 2 --cp 2 --ep 4 --pp 2
megatron_ok 'gpu[01-04]' mixtral-8x7b --tp 1 --cp 4 --ep 8 --pp 1
megatron_ok 'gpu[01-04]' mixtral-8x7b --tp 4 --cp 2 --ep 2 --pp 2
megatron_ok 'gpu[01-04]' mixtral-8x7b --tp 2 --cp 1 --ep 8 --pp 2
megatron_ok 'gpu[01-08]' mixtral-8x7b --tp 2 --cp 4 --ep 8 --pp 2
megatron_ok 'gpu[01-08]' mixtral-8x22b --tp 2 --cp 2 --ep 8 --pp 4
# dense, both rank orders where the step time picks them
megatron_ok 'gpu[01-04]' llama3-8b --tp 2 --cp 2 --pp 2
megatron_ok 'gpu[01-08]' llama3-70b --tp 8 --pp 4
megatron_ok 'gpu[01-08]' llama3-70b --tp 4 --cp 2 --pp 2
megatron_ok 'gpu[01-08]' llama3-70b

# one rank worked by hand: 2 x 2 x 4 x 2 (tp, cp, dp, pp), EP 4.  Rank 6 is
# tp 0, cp 1, dp 1, pp 0 (6 = 0 + 2 (1 + 2 (1 + 4 . 0))); its expert
# coordinates over tp-ep-dp-pp are ep (6 / 2) % 4 = 3, where EP from DP
# alone would say 1 % 4 = 1.
run 0 plan --model mixtral-8x7b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" \
	--tp 2 --cp 2 --ep 4 --pp 2 --json
json_eq '[j["placement"]["ranks"][6][k] for k in ("tp_rank", "cp_rank", "dp_rank", "pp_rank", "ep_rank")]' '[0, 1, 1, 0, 3]'
finish
