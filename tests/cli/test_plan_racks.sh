#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# NVL72 racks as the site file describes them (issue 33): NodeName= GpuType=,
# Gpus= and NVLinkDomain= for nodes without an inventory.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"
racks="--site $data/dtplan-nvl72.conf"
dense="layers=32,hidden=8192,heads=64"
tp='[w["code"] for w in j["warnings"] if w["code"] == "tp-exceeds-domain"]'

# One whole rack without --gpu: 72 GB200 in one NVLink domain across the 18
# nodes, not "assumed 4 x h100-sxm GPUs each, NVLink domains of 8".
# shellcheck disable=SC2086
run 0 plan --model llama3-70b --nodes 'node[1-18]' $racks
stdout_has "GPUs         72 x gb200 (18 nodes of 4)"
stdout_lacks "[assumed-nodes]"
# shellcheck disable=SC2086
run 0 plan --model $dense --nodes 'node[1-18]' $racks --tp 8 --json
json_eq 'j["gpu"]["name"]' gb200
json_eq 'j["gpus_per_node"]' 4
json_eq "$tp" '[]'

# 16 of rack1's 18 nodes: one domain of the 64 GPUs the job has there.
# shellcheck disable=SC2086
run 0 plan --model $dense --nodes 'node[1-16]' $racks --tp 16 --json
json_eq 'j["gpus"]' 64
json_eq "$tp" '[]'

# 14 + 18 nodes of two racks: domains of 56 and 72 GPUs, so TP divides 8.
# shellcheck disable=SC2086
run 0 plan --model $dense --nodes 'node[1-14,19-36]' $racks --tp 8 --json
json_eq 'j["gpus"]' 128
json_eq "$tp" '[]'
# shellcheck disable=SC2086
run 0 plan --model $dense --nodes 'node[1-14,19-36]' $racks --tp 16 --json
json_eq "$tp" "['tp-exceeds-domain']"
json_eq '"smallest 56 GPUs, TP must divide 8" in j["warnings"][0]["message"]' True

# GpuType= without NVLinkDomain=: each node its own domain of 4.
# shellcheck disable=SC2086
run 0 plan --model $dense --nodes 'node[1-4]' --site "$data/dtplan-gb200-nodes.conf" --tp 8 --json
json_eq 'j["gpu"]["name"]' gb200
json_eq "$tp" "['tp-exceeds-domain']"

# --gpu still wins, and the plan says the site file differs.
# shellcheck disable=SC2086
run 0 plan --model llama3-70b --nodes 'node[1-18]' $racks --gpu h100-sxm --json
json_eq 'j["gpu"]["name"]' h100-sxm
json_eq '[w["message"] for w in j["warnings"] if w["code"] == "gpu-type"]' "['planned for h100-sxm GPUs as asked, but the site file gives the nodes gb200']"

# Expert groups across racks: DeepSeek-V3 on 12 + 12 nodes of two racks with
# EP 32 (8 nodes a group, PP 3): the middle stage's group spans both racks,
# so its all-to-all crosses the network.  The warning gives the step with and
# without the crossing and the fixes, and refuses under strict or deny.
ep='[w["code"] for w in j["warnings"] if w["code"] == "ep-crosses-nvlink-domain"]'
msg='[w["message"] for w in j["warnings"] if w["code"] == "ep-crosses-nvlink-domain"][0]'
# shellcheck disable=SC2086
run 0 plan --model deepseek-v3 --nodes 'node[7-30]' $racks --ep 32 --json
json_eq 'j["parallelism"]["ep"]' 32
json_eq 'j["prediction"]["ep_links"]' network
json_eq "$ep" "['ep-crosses-nvlink-domain']"
json_eq "$msg.startswith('expert-parallel groups of EP 32 (32 GPUs each) span NVLink domains (the largest holds 48 of the job\\'s GPUs): their all-to-all (')" True
json_eq "'crosses the network; predicted %.2f s a step against ' % j['prediction']['step_seconds'] in $msg" True
json_eq "'ask for --segment=8 (topology/block keeps each group\\'s nodes in one rack), or EP 16, whose groups fit these domains (' in $msg" True
# shellcheck disable=SC2086
run 0 plan --model deepseek-v3 --nodes 'node[7-30]' $racks --ep 32
stdout_has "[ep-crosses-nvlink-domain] expert-parallel groups of EP 32"
stdout_has " per GPU per step over the network"
stdout_lacks "over one leaf switch"
# A SlowdownThreshold above the crossing's cost: tolerated.
tmp=$(mktemp)
{ echo "SlowdownThreshold=0.5"; cat "$data/dtplan-nvl72.conf"; } >"$tmp"
run 0 plan --model deepseek-v3 --nodes 'node[7-30]' --site "$tmp" --ep 32 --json
json_eq "$ep" '[]'
rm -f "$tmp"

# Where the racks hold the groups they stay inside: 16 + 16 nodes with EP 32
# (64 GPUs a rack, two groups each), and 12 + 12 searched freely.
# shellcheck disable=SC2086
run 0 plan --model deepseek-v3 --nodes 'node[3-34]' $racks --ep 32 --json
json_eq 'j["prediction"]["ep_links"]' nvlink
json_eq "$ep" '[]'
# shellcheck disable=SC2086
run 0 plan --model deepseek-v3 --nodes 'node[7-30]' $racks --json
json_eq 'j["prediction"]["ep_links"]' nvlink
json_eq "$ep" '[]'

finish
