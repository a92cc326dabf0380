#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
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

# folded, worked by hand: TP 4 x DP 4 (16 GPUs), EP 8 with ETP 1.  Rank 6 is
# tp 2, dp 1; its experts' coordinates over tp-ep-dp-pp with tp = etp = 1
# are etp 0, ep 6 % 8 = 6, expert DP 6 / 8 = 0; rank 13 is ep 5, expert DP 1.
run 0 plan --model mixtral-8x7b --nodes 'gpu[01-02]' --node-xml "gpu[01-02]=$xml" \
	--tp 4 --pp 1 --ep 8 --etp 1 --train framework=megatron --json
json_eq '[j["placement"]["ranks"][r][k] for r in (6, 13) for k in ("tp_rank", "dp_rank", "etp_rank", "ep_rank", "edp_rank")]' '[2, 1, 0, 6, 0, 1, 3, 0, 5, 1]'

# one rank worked by hand: 2 x 2 x 4 x 2 (tp, cp, dp, pp), EP 4.  Rank 6 is
# tp 0, cp 1, dp 1, pp 0 (6 = 0 + 2 (1 + 2 (1 + 4 . 0))); its expert
# coordinates over tp-ep-dp-pp are ep (6 / 2) % 4 = 3, where EP from DP
# alone would say 1 % 4 = 1.
run 0 plan --model mixtral-8x7b --nodes 'gpu[01-04]' --node-xml "gpu[01-04]=$xml" \
	--tp 2 --cp 2 --ep 4 --pp 2 --json
json_eq '[j["placement"]["ranks"][6][k] for k in ("tp_rank", "cp_rank", "dp_rank", "pp_rank", "ep_rank")]' '[0, 1, 1, 0, 3]'

# torchrun's workers derive their coordinates from RANK and the job's DT_*
# with doc/launchers.md's arithmetic; it gives every rank's, both orders.
# derive RANK: "tp cp ep pp dp" as the doc's lines compute them
derive() {
	RANK=$1
	tp_rank=$((RANK % DT_TP))
	cp_rank=$((RANK / DT_TP % DT_CP))
	ep_rank=$((RANK / DT_ETP % DT_EP))
	case $DT_RANK_ORDER in
	*-dp) pp_rank=$((RANK / (DT_TP * DT_CP) % DT_PP)) dp_rank=$((RANK / (DT_TP * DT_CP * DT_PP))) ;;
	*) dp_rank=$((RANK / (DT_TP * DT_CP) % DT_DP)) pp_rank=$((RANK / (DT_TP * DT_CP * DT_DP))) ;;
	esac
	echo "$tp_rank $cp_rank $ep_rank $pp_rank $dp_rank"
}
derived_ok() {
	nodes=$1 model=$2
	shift 2
	run 0 plan --model "$model" --nodes "$nodes" --node-xml "$nodes=$xml" "$@" --json
	# the job's DT_* (lib/launch/env.c): the degrees, 1 when unused, and
	# DT_RANK_ORDER, the placement's rank order
	env=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["parallelism"]
for k in ("tp", "cp", "ep", "pp", "dp"): print("DT_%s=%d" % (k.upper(), max(p[k], 1)))
print("DT_ETP=%d" % p.get("etp", p["tp"]))
print("DT_RANK_ORDER=%s" % j["placement"]["rank_order"])' "$out") ||
		{ _fail "$model $*: no parallelism in the plan"; return; }
	eval "$env"
	bad=0
	python3 -c 'import json,sys
for k in json.load(open(sys.argv[1]))["placement"]["ranks"]:
    print(k["rank"], k["tp_rank"], k["cp_rank"], k["ep_rank"], k["pp_rank"], k["dp_rank"])' "$out" >"$err.ranks"
	while read -r r a b c d e; do
		[ "$(derive "$r")" = "$a $b $c $d $e" ] || bad=$((bad + 1))
	done <"$err.ranks"
	rm -f "$err.ranks"
	if [ "$bad" -eq 0 ]; then _pass "$model $*: RANK and DT_* give every rank's coordinates ($DT_RANK_ORDER)"
	else _fail "$model $*: $bad ranks differ from RANK and DT_* ($DT_RANK_ORDER)"; fi
}
derived_ok 'gpu[01-04]' mixtral-8x7b --tp 2 --cp 2 --ep 4 --pp 2
derived_ok 'gpu[01-08]' llama3-70b --tp 8 --pp 4
derived_ok 'gpu[01-08]' llama3-70b --tp 4 --cp 2 --pp 2
# folded: EP 8 over TP 4 x DP 2 with the experts whole (ETP 1)
derived_ok 'gpu[01-02]' mixtral-8x7b --tp 4 --ep 8 --etp 1 --pp 1 --train framework=megatron
derived_ok 'gpu[01-04]' mixtral-8x7b --tp 2 --cp 2 --ep 8 --etp 1 --pp 2 --train framework=megatron
finish
