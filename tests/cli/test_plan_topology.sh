#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan plan on an allocation: --nodes, --topology, --site, --node-xml, --node-json.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
xml="$data/hgx-h100-8gpu.xml"
two="--topology $data/topology-two-racks.conf --site $data/dtplan-two-racks.conf"
three="--topology $data/topology-three-leaves.conf --site $data/dtplan-three-leaves.conf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

# Two racks of 8 HGX nodes, leaf uplinks 4:1: DP stays in racks, PP crosses.
# shellcheck disable=SC2086
run 0 plan --model llama3-70b --nodes 'gpu[01-16]' $two --node-xml "gpu[01-16]=$xml" --json
json_eq 'j["gpus"]' 128
json_eq 'j["placement"]["crosses_uplinks"]' pp
json_eq 'j["placement"]["rank_order"]' tp-dp-pp
json_eq 'j["placement"]["leaves_used"]' 2
json_eq 'j["placement"]["leaves_needed"]' 2
json_eq 'len(j["placement"]["ranks"])' 128
json_eq 'sorted((r["node"], r["gpu"]) for r in j["placement"]["ranks"]) == [(n, g) for n in range(16) for g in range(8)]' True
# rank 9: the second GPU of the second node, in the first stage; TP fastest,
# then DP (the TP degree is the step time's choice)
json_eq 'j["placement"]["ranks"][9] == {"rank": 9, "node": 1, "gpu": 1, "local_rank": 1, "tp_rank": 9 % j["parallelism"]["tp"], "pp_rank": 0, "dp_rank": 9 // j["parallelism"]["tp"], "cp_rank": 0, "ep_rank": 0, "nic": "mlx5_1"}' True
json_eq 'j["placement"]["nodes"][:2]' "['gpu01', 'gpu02']"
json_eq '[w["code"] for w in j["warnings"] if w["code"] == "too-many-leaves"]' '[]'

# The same job on 4 + 4 + 8 nodes under three leaves where two would do: the
# pipeline's activations cross the 4:1 uplinks for under 5% of the step, so no
# allocation warning (the plan still says what the uplinks cost).
# shellcheck disable=SC2086
run 0 plan --model llama3-70b --nodes 'gpu[01-04,09-12,17-24]' $three --node-xml "gpu01=$xml"
stdout_lacks "[too-many-leaves]"
stdout_lacks "[oversubscribed-uplink]"
stdout_has "[assumed-nodes] 15 of 16 nodes (gpu[02-04,09-12,17-24]) have no inventory: assumed equal to gpu01 ("
stdout_has "placement    rank order tp-dp-pp; uplinks crossed by pp"
stdout_has "; 3 leaf switches used, 2 needed"
stdout_has "    leaf3 (8 nodes, uplink 4.0:1):"

# 8 nodes on two leaves behind 64:1 uplinks where one leaf would hold them: the
# warnings name the leaves, the best plan on one leaf (the plan dtplan makes on
# gpu[01-08], searched afresh) and this one, both splits and both steps, and
# ask for --switches=1.  This plan is the search's: TP 1 x PP 2 x DP 32,
# ZeRO-1 (its PP boundary crosses the uplinks), under the kernel time model
# of issue 9.
thin3="--topology $data/topology-three-leaves.conf --site $data/dtplan-thin-three-leaves.conf"
steps='p=j["parallelism"]; print(j["prediction"]["step_seconds"], "TP %d x PP %d x DP %d" % (p["tp"], p["pp"], p["dp"]))'
# shellcheck disable=SC2086
run 0 plan --model 7B --global-batch 64 --nodes 'gpu[01-08]' $thin3 --node-xml "gpu01=$xml" --json
read -r one one_split <<EOF2
$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); $steps" "$out")
EOF2
# shellcheck disable=SC2086
run 0 plan --model 7B --global-batch 64 --nodes 'gpu[01-04,09-12]' $thin3 --node-xml "gpu01=$xml" --json
json_eq '(j["parallelism"]["tp"], j["parallelism"]["pp"], j["parallelism"]["zero"], j["parallelism"]["micro_batch"], j["parallelism"]["recompute"])' "(1, 2, 1, 1, 'none')"
json_eq '[w["code"] for w in j["warnings"] if w["code"] in ("too-many-leaves", "oversubscribed-uplink")]' "['too-many-leaves', 'oversubscribed-uplink']"
json_eq "round((j['prediction']['step_seconds'] / $one - 1) * 100, 1) > 5" True
json_eq "'where 1 would hold them; the best plan there ($one_split) is predicted to take %.2f ms a step against %.2f ms here (TP 1 x PP 2 x DP 32, ' % ($one * 1e3, j['prediction']['step_seconds'] * 1e3) in j['warnings'][0]['message']" True
json_eq "j['warnings'][0]['message'].endswith('threshold 5%): ask for --switches=1')" True
# A SlowdownThreshold in the site file just above that slowdown: tolerated.
slow=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['prediction']['step_seconds'] / $one - 1 + 0.01)" "$out")
printf 'SlowdownThreshold=%s\n' "$slow" | cat "$data/dtplan-thin-three-leaves.conf" - >"$tmp/tolerant.conf"
run 0 plan --model 7B --global-batch 64 --nodes 'gpu[01-04,09-12]' --topology "$data/topology-three-leaves.conf" --site "$tmp/tolerant.conf" --node-xml "gpu01=$xml"
stdout_lacks "[too-many-leaves]"
stdout_lacks "[oversubscribed-uplink]"

# The test cluster's shape (tests/cluster/cluster.sh: two leaves of four 8-GPU
# nodes) behind 16:1 uplinks, llama3-8b at 8 sequences a step: on 2 + 2 nodes
# the best plan (TP 4 x PP 2 x DP 4, its pipeline across the uplinks) is over
# 10% slower than the best on one leaf (TP 4 x PP 1 x DP 8), yet its own
# configuration costed again on one leaf gains under the 5% threshold: only
# best against best sees it.  Both warnings say both splits and both steps
# (tests/cluster/plugin.bats refuses the same job under policy=deny).
{
	echo "SwitchName=leaf1 Nodes=node[1-4]"
	echo "SwitchName=leaf2 Nodes=node[5-8]"
	echo "SwitchName=spine Switches=leaf[1-2]"
} >"$tmp/cluster-topology.conf"
c16="--topology $tmp/cluster-topology.conf --site $data/dtplan-site-16to1.conf --model llama3-8b --global-batch 8"
# shellcheck disable=SC2086
run 0 plan $c16 --nodes 'node[1-4]' --node-xml "node[1-4]=$xml" --json
read -r one one_split <<EOF2
$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); $steps" "$out")
EOF2
json_eq '[w["code"] for w in j["warnings"] if w["code"] in ("too-many-leaves", "oversubscribed-uplink")]' '[]'
# shellcheck disable=SC2086
run 0 plan $c16 --nodes 'node[1-2,5-6]' --node-xml "node[1-2,5-6]=$xml" --json
read -r spread spread_split <<EOF2
$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); $steps" "$out")
EOF2
json_eq "$spread / $one > 1.1" True
json_eq '[w["code"] for w in j["warnings"] if w["code"] in ("too-many-leaves", "oversubscribed-uplink")]' "['too-many-leaves', 'oversubscribed-uplink']"
both=$(python3 -c "print('the best plan there ($one_split) is predicted to take %.2f ms a step against %.2f ms here ($spread_split' % ($one * 1e3, $spread * 1e3))")
json_eq "'$both, %.1f%% longer, threshold 5%%): ask for --switches=1' % (($spread / $one - 1) * 100) in j['warnings'][0]['message']" True
json_eq "'on 1 leaf switch (--switches=1) the best plan ($one_split) is predicted to take %.2f ms a step against %.2f ms here ($spread_split)' % ($one * 1e3, $spread * 1e3) in j['warnings'][1]['message']" True
# its own configuration on one leaf, its interleaving too: within the
# threshold (what the plan's configuration alone would have said)
pins=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["parallelism"]; print("--tp %d --pp %d --zero %d --micro-batch %d --recompute %s --train vp=%d" % (p["tp"], p["pp"], p["zero"], p["micro_batch"], p["recompute"], p["vp"]))' "$out")
# shellcheck disable=SC2086
run 0 plan $c16 --nodes 'node[1-4]' --node-xml "node[1-4]=$xml" $pins --json
json_eq "$spread / j['prediction']['step_seconds'] - 1 < 0.05" True

# 16 nodes on the two leaves of 8 they need, behind the same 64:1 uplinks:
# the uplinks cost about 18% of the step, but no allocation spans fewer
# leaves, so no warning asks for --switches (issue 12).  The search takes
# TP 1 x PP 2 x DP 64 (step 518.20 ms, of which 9.63 ms the wait for the
# slowest of 128 GPUs: 2% x 188.82 ms x Phi^-1(0.5^(1/128)) = 2.549); its 2
# exposed PP transfers of 2 s b h = 2 x 4096 x 4224 = 34,603,008 bytes take
# 5 us + 34.6e6 / 50e9 = 0.697 ms each on a non-blocking fabric, and 5 us +
# 34.6e6 / (50e9 / 64 flows) = 44.297 ms each over leaf1's uplink:
# (88.594 - 1.394) / 518.20 = 16.8% of the step.
# shellcheck disable=SC2086
run 0 plan --model 7B --global-batch 64 --nodes 'gpu[01-16]' --topology "$data/topology-two-racks.conf" --site "$data/dtplan-thin-two-racks.conf" --node-xml "gpu01=$xml"
stdout_lacks "--switches"
stdout_has "placement    rank order tp-dp-pp; uplinks crossed by pp (16.8% of the step); 2 leaf switches used, 2 needed"

# --svg marks the oversubscribed racks.
# shellcheck disable=SC2086
run 0 plan --model llama3-70b --nodes 'gpu[01-04,09-12,17-24]' $three --node-xml "gpu01=$xml" --svg "$tmp/p.svg"
if grep -q 'class="node oversubscribed"' "$tmp/p.svg" && grep -qF '@ leaf3' "$tmp/p.svg"; then
	_pass "svg marks oversubscribed racks"
else
	_fail "svg lacks oversubscribed racks"
fi

# --topology takes every form Slurm reads: topology/block (topology.conf of
# BlockName= lines) and topology.yaml (its cluster_default topology, blocks
# here).  The plan names its blocks and asks for --segment, not --switches.
for topo in topology-blocks.conf topology.yaml; do
	run 0 plan --model 7B --global-batch 64 --nodes 'gb[01,05,09]' --topology "$data/$topo" --site "$data/dtplan-thin-blocks.conf" --node-xml "gb01=$xml"
	stdout_has "[too-many-leaves] the 3 nodes span 3 blocks (rack1 (1 node), rack2 (1 node), rack3 (1 node)) where 1 would hold them"
	stdout_has "ask for --segment=3"
	stdout_lacks "--switches"
	stdout_has "; 3 blocks used, 1 needed"
	stdout_has "    rack3 (1 node, uplink 320.0:1):"
	run 0 plan --model 7B --global-batch 64 --nodes 'gb[01,05,09]' --topology "$data/$topo" --site "$data/dtplan-thin-blocks.conf" --node-xml "gb01=$xml" --json
	json_eq 'j["placement"]["leaf_kind"], [l["name"] for l in j["placement"]["leaves"]]' "('block', ['rack1', 'rack2', 'rack3'])"
	run 0 check-config --topology "$data/$topo"
	stdout_has "blocks: 3 (topology/block, base block 4 nodes)"
done
# A YAML form dtplan does not read says so, with the line.
printf -- '- topology: a\n  tree: &anchor\n' >"$tmp/anchor.yaml"
run 2 plan --model 7B --nodes 'gb[01-02]' --topology "$tmp/anchor.yaml"
stderr_has "$tmp/anchor.yaml:2: '&anchor': anchors (&) are not supported"

# Saved inventories from "dtplan node --json"; nodes given only by the inventory's hostlist.
run 0 node --xml "$xml" --json
cp "$out" "$tmp/hgx.json"
run 0 plan --model llama3-8b --node-json "n[1-2]=$tmp/hgx.json" --json
json_eq 'j["placement"]["nodes"]' "['n1', 'n2']"
json_eq 'j["placement"]["leaves_used"]' 1

# Four HGX nodes under one leaf: a golden plan with placement and launch words.
# shellcheck disable=SC2086
run 0 plan --model llama3-8b --nodes 'gpu[01-04]' $two --node-xml "gpu[01-04]=$xml" --json
golden_json plan_8b_4_nodes.json
json_eq 'j["launch"]["torchrun"]' "{'nnodes': 4, 'nproc_per_node': 8, 'rdzv_backend': 'static', 'master_addr': 'gpu01', 'master_port': None}"
json_eq 'j["launch"]["env"]["PET_NNODES"], j["launch"]["env"]["PET_MASTER_ADDR"]' "('4', 'gpu01')"

# Without inventories: generic nodes of --gpus-per-node, and the plan says so.
run 0 plan --model llama3-8b --nodes 'a[1-4]' --gpus-per-node 4
stdout_has "[assumed-nodes] 4 of 4 nodes have no inventory: assumed 4 x h100-sxm GPUs each"

# Bad input names the flag and value (exit 2); unreadable files exit 1.
run 2 plan --model llama3-8b --nodes 'gpu[01-02]' --node-xml 'gpu01'
stderr_has "--node-xml: 'gpu01' is not HOSTLIST=FILE"
run 2 plan --model llama3-8b --nodes 'gpu[01-02]' --node-xml "gpu09=$xml"
stderr_has "--node-xml: host 'gpu09' of 'gpu09' is not in --nodes"
run 2 plan --model llama3-8b --nodes 'gpu[01-'
stderr_has "--nodes:"
run 2 plan --model llama3-8b --gpus 8 --topology "$data/topology-two-racks.conf"
stderr_has "--topology needs --nodes"
run 2 plan --model llama3-8b --nodes 'gpu[01-02]' --gpus 64
stderr_has "64 GPUs requested but the 2 nodes hold 16 usable"
run 1 plan --model llama3-8b --nodes 'gpu[01-02]' --node-xml "gpu01=$tmp/missing.xml"
stderr_has "missing.xml"
run 1 plan --model llama3-8b --nodes 'gpu[01-02]' --topology "$tmp/missing.conf"
stderr_has "missing.conf"
# With inventories of 8, --gpus-per-node 2 is a job holding 2 GPUs of each node:
# 4 nodes x 2 = 8 ranks on all four nodes, TP at most 2.
run 0 plan --model llama3-8b --nodes 'n[1-4]' --node-xml "n[1-4]=$top_srcdir/tests/data/hgx-h100-8gpu.xml" --gpus-per-node 2 --json
json_eq 'j["gpus"]' 8
json_eq 'len(j["placement"]["nodes"])' 4
json_eq 'sorted(set(r["node"] for r in j["placement"]["ranks"]))' '[0, 1, 2, 3]'
json_eq 'j["parallelism"]["tp"] <= 2' True

finish
