#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dtplan segment: Slurm's --segment for a job on topology/block, from the
# plan made before allocation (what etc/cli_filter.lua asks).  The rule
# (lib/dtplan/plan.h): a group of B consecutive ranks spans lcm(B, G) / G
# nodes of G GPUs; the segment is the largest S dividing the job's nodes,
# at most a block's, that is a multiple of the spans of the groups that
# cross nodes.
. "$(dirname "$0")/lib.sh"
data="$top_srcdir/tests/data"

run 0 segment --help; stdout_starts "Usage: dtplan segment"

# Mixtral, TP 2 x EP 8 pinned, on 6 nodes of 8 GPUs: an expert group is 16
# GPUs, 2 nodes; topology-blocks.conf's base block is 4 nodes (BlockSizes=4,8);
# of 2 and 4, only 2 divides 6.
run 0 segment --model mixtral-8x7b --gpus 48 --gpus-per-node 8 \
	--train seq=4096,tp=2,pp=1,ep=8 --topology "$data/topology-blocks.conf" --json
json_eq 'j["schema"], j["nodes"], j["block_nodes"]' "('dtplan.segment/1', 6, 4)"
json_eq 'j["split"]["tp"], j["split"]["ep"], j["expert_group_nodes"]' "(2, 8, 2)"
json_eq 'j["segment"]' 2
json_eq 'j["reason"].startswith("--segment=2: an expert group (TP 2 x EP 8, 16 GPUs) spans 2 nodes of 8 GPUs")' True
# 8 nodes: 4 divides 8
run 0 segment --model mixtral-8x7b --gpus 64 --gpus-per-node 8 \
	--train seq=4096,tp=2,pp=1,ep=8 --block-nodes 4 --json
json_eq 'j["segment"], j["block_nodes"]' "(4, 4)"
# the same blocks from topology.yaml (block_sizes: [4, 8])
run 0 segment --model mixtral-8x7b --gpus 48 --gpus-per-node 8 \
	--train seq=4096,tp=2,pp=1,ep=8 --topology "$data/topology.yaml"
stdout_has "dtplan segment: mixtral-8x7b on 6 nodes of 8 GPUs: --segment=2: "
# the issue's NVL72 case: EP 32 on 24 nodes of 4 GB200 in racks of 18: an
# expert group is 32 GPUs, 8 nodes; 16 does not divide 24: 8
run 0 segment --model deepseek-v3 --gpu gb200 --gpus 96 --gpus-per-node 4 \
	--train tp=1,ep=32 --block-nodes 18 --json
json_eq 'j["expert_group_nodes"], j["segment"]' "(8, 8)"

# nothing to ask for: a dense model (no group spans nodes), a tree, an
# expert group larger than a block
run 0 segment --model llama3-8b --gpus 32 --gpus-per-node 8 --block-nodes 4 --json
json_eq 'j["segment"], j["expert_group_nodes"]' "(None, None)"
json_eq 'j["reason"].startswith("no --segment: no group to keep inside a block of 4 nodes")' True
run 0 segment --model mixtral-8x7b --gpus 48 --gpus-per-node 8 \
	--train seq=4096,tp=2,pp=1,ep=8 --topology "$data/topology-two-racks.conf" --json
json_eq 'j["segment"], j["block_nodes"]' "(None, None)"
json_eq 'j["reason"].startswith("no --segment: the site has no blocks")' True
run 0 segment --model mixtral-8x7b --gpus 48 --gpus-per-node 4 \
	--train seq=4096,tp=2,pp=1,ep=8 --block-nodes 2 --json
json_eq 'j["expert_group_nodes"], j["segment"]' "(4, None)"
json_eq '"no multiple of 4 nodes up to a block\x27s 2 divides the job\x27s 12" in j["reason"]' True

# bad input, and a model that does not fit
run 2 segment --model mixtral-8x7b --gpus 12 --gpus-per-node 8 --block-nodes 4
stderr_has "--gpus 12 is not a whole number of 8-GPU nodes"
run 2 segment --model mixtral-8x7b --gpus 16 --block-nodes 4 --topology "$data/topology-blocks.conf"
stderr_has "--topology and --block-nodes: give one"
run 2 segment --model mixtral-8x7b --gpus 16 --train tp=x
stderr_has "--train: "
run 1 segment --model mixtral-8x7b --gpus 16 --train tp=3
stderr_has "TP 3 does not divide the 32 attention heads"
run 2 segment --gpus 16; stderr_has "--model is required"
run 2 segment --model no-such-model --gpus 16; stderr_has "no-such-model"
run 1 segment --model llama3-405b --gpus 8 --block-nodes 4
stderr_has "dtplan segment: "
finish
