#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/basic.bats: the test cluster itself works as the plugin's
# end-to-end tests expect.  Needs a cluster brought up by cluster.sh (run.sh
# does that).

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

setup_file() {
	cluster_is_up || return 1
}

setup() {
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	cancel_all_wait 60
}

# iperf_bps SRC DST: bits per second from SRC to DST over 2 seconds.
iperf_bps() {
	local src=$1 dst=$2 addr port spid i json
	addr=$(node_addr "$dst")
	port=$((20000 + RANDOM % 10000))
	in_node "$dst" iperf3 -s -1 -B "$addr" -p "$port" >/dev/null 2>&1 &
	spid=$!
	for ((i = 0; i < 100; i++)); do
		[ -n "$(in_node "$dst" ss -Hltn "sport = :$port")" ] && break
		sleep 0.05
	done
	json=$(in_node "$src" timeout 15 iperf3 -J -c "$addr" -p "$port" -t 2)
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	python3 -c 'import json, sys; print(int(json.loads(sys.argv[1])["end"]["sum_received"]["bits_per_second"]))' "$json"
}

@test "every node is idle with its CPUs and GPUs" {
	run -0 sinfo -h -N -o '%N %T %c %G'
	echo "$output"
	[ "${#lines[@]}" -eq "$CL_NODES" ]
	for node in $(cluster_nodes); do
		want="$node idle $CL_CPUS"
		[ "$CL_GPUS" -gt 0 ] && want="$want gpu:$CL_GPUS"
		grep -qx "$want" <<<"$output"
	done
}

@test "scontrol show topology has one leaf per rack under the spine" {
	run -0 scontrol show topology
	echo "$output"
	# 26.05 prints host lists compressed (node[1-4]), earlier releases expanded
	if [ "$(slurm_version)" -ge 2605 ]; then
		grep -q '^SwitchName=leaf1 .*Nodes=node\[1-4\]$' <<<"$output"
		grep -q '^SwitchName=leaf2 .*Nodes=node\[5-8\]$' <<<"$output"
	else
		grep -q '^SwitchName=leaf1 .*Nodes=node1,node2,node3,node4$' <<<"$output"
		grep -q '^SwitchName=leaf2 .*Nodes=node5,node6,node7,node8$' <<<"$output"
	fi
	grep -q '^SwitchName=spine Level=1 .*Switches=leaf1,leaf2$' <<<"$output"
}

@test "sbatch -N4 'srun hostname' prints each allocated node's own hostname" {
	run_job 30 -N4 --wrap 'srun hostname'
	echo "$LOG"
	[ "$(grep -c . <<<"$LOG")" -eq 4 ]
	[ -z "$(grep -vx 'node[0-9]*' <<<"$LOG")" ]
	[ "$(sort <<<"$LOG")" = "$(job_nodes "$JOB" | sort)" ]
}

@test "node names resolve to node addresses inside the cluster" {
	run_job 30 -N1 -w node2 --wrap 'getent hosts node2 node7 | tr -s " " | sort'
	echo "$LOG"
	[ "$LOG" = "$(node_addr node2) node2"$'\n'"$(node_addr node7) node7" ]
}

@test "every task gets SLURM_TOPOLOGY_ADDR spine.leafR.nodeI" {
	run_job 60 -N"$CL_NODES" --wrap \
		'srun sh -c "echo \$SLURMD_NODENAME \$SLURM_TOPOLOGY_ADDR \$SLURM_TOPOLOGY_ADDR_PATTERN"'
	echo "$LOG"
	[ "$(grep -c . <<<"$LOG")" -eq "$CL_NODES" ]
	for node in $(cluster_nodes); do
		grep -qx "$node spine.leaf$(node_rack "$node").$node switch.switch.node" <<<"$LOG"
	done
}

@test "--switches=1 keeps a 4-node job under one leaf switch" {
	[ "$CL_NODES_PER_RACK" -eq 4 ] && [ "$CL_RACKS" -ge 2 ] || skip "needs 4-node racks"
	# Leave node3, node4 (leaf1) and node7, node8 (leaf2) free: 4 idle nodes,
	# but no leaf with 4.
	b1=$(sbatch --parsable --exclusive -N2 -w node1,node2 --wrap 'sleep 120')
	b2=$(sbatch --parsable --exclusive -N2 -w node5,node6 --wrap 'sleep 120')
	for ((i = 0; i < 50; i++)); do
		[ "$(job_state "$b1")$(job_state "$b2")" = RUNNINGRUNNING ] && break
		sleep 0.1
	done
	[ "$(job_state "$b1")$(job_state "$b2")" = RUNNINGRUNNING ]

	# Without --switches the job spans both leaves at once.
	run_job 30 -N4 --wrap 'srun hostname'
	[ "$(job_field "$JOB" NodeList)" = "node[3-4,7-8]" ]

	# With --switches=1 it waits (up to a minute) for a whole leaf ...
	sw=$(sbatch --parsable -N4 --switches=1@1:00 --wrap 'srun hostname')
	for ((i = 0; i < 20; i++)); do
		[ "$(job_state "$sw")" = PENDING ] || break
		sleep 0.1
	done
	scontrol show job "$sw"
	[ "$(job_state "$sw")" = PENDING ]
	[ "$(job_field "$sw" Switches)" = 1@00:01:00 ]

	# ... and gets leaf2 as soon as node5 and node6 are free.
	scancel "$b2"
	submit_wait "$sw" 30
	[ "$(job_field "$sw" NodeList)" = "node[5-8]" ]
	[ "$(job_log "$sw" | sort | paste -sd' ')" = "node5 node6 node7 node8" ]
}

@test "--gres=gpu:N shows N GPUs to every task" {
	[ "$CL_GPUS" -gt 0 ] || skip "cluster runs without GPUs"
	all=$(seq -s, 0 $((CL_GPUS - 1)))
	run_job 30 -N2 --gres=gpu:"$CL_GPUS" --wrap \
		'srun sh -c "echo \$SLURMD_NODENAME \$SLURM_GPUS_ON_NODE \$CUDA_VISIBLE_DEVICES"'
	echo "$LOG"
	[ "$(grep -c . <<<"$LOG")" -eq 2 ]
	[ "$(grep -c "^node[0-9]* $CL_GPUS $all\$" <<<"$LOG")" -eq 2 ]

	run_job 30 -N1 --gres=gpu:2 --wrap 'echo $SLURM_GPUS_ON_NODE $CUDA_VISIBLE_DEVICES'
	[ "$LOG" = "2 0,1" ]
}

@test "a link inside a rack is faster than a link across racks" {
	[ "$CL_RACKS" -ge 2 ] && [ "$CL_NODES_PER_RACK" -ge 2 ] || skip "needs two racks of two nodes"
	[ "$CL_RACK_RATE" != none ] && [ "$CL_UPLINK_RATE" != none ] || skip "links are not shaped"
	far=node$((CL_NODES_PER_RACK + 1))
	in_rack=$(iperf_bps node1 node2)
	across=$(iperf_bps node1 "$far")
	echo "node1 -> node2: $in_rack bit/s; node1 -> $far: $across bit/s"
	echo "# in-rack $((in_rack / 1000000)) Mbit/s, cross-rack $((across / 1000000)) Mbit/s" >&3
	[ "$across" -gt 0 ]
	[ "$in_rack" -ge $((2 * across)) ]
}

@test "slurmd and the tasks on each node see the node's hwloc XML" {
	[ -n "$CL_NODE_XML" ] || skip "cluster runs without DTPLAN_NODE_XML"
	for node in $(cluster_nodes); do
		xml=$(node_xml "$node")
		pid=$(cat "$CL_DIR/run/slurmd-$node.pid")
		tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "HWLOC_XMLFILE=$xml"
	done
	xml=$(node_xml node3)
	pus=$(lstopo-no-graphics --input "$xml" --only pu | wc -l)
	run_job 30 -N1 -w node3 --wrap 'echo "$HWLOC_XMLFILE"; lstopo-no-graphics --only pu | wc -l'
	echo "$LOG"
	[ "$LOG" = "$xml"$'\n'"$pus" ]
}
