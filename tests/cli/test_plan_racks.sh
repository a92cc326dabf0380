#!/bin/sh
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

finish
