#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/rankorder.bats: dtplan's RANK is the plan's whatever order
# Slurm gives its tasks.  The switch tree is rewritten so that its first
# leaf holds node3 and node4, its second node1 and node2: the plan (and
# Slurm 26.05, which orders task ranks by topology by default) then puts
# node3 first, while host-name order starts at node1.  Every task's RANK
# must be the plan's, and the hostfile recipe must still give
# SLURM_PROCID == RANK.  The site file's leaf1 and leaf2 keep their names (their
# settings apply), their nodes change.
#
# Needs a cluster brought up by cluster.sh with DTPLAN_PLUGIN set (run.sh
# does that).  Puts back topology.conf and plugstack.conf, and has
# slurmctld read them again, in teardown.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

SITE=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-4to1.conf
PLUGSTACK=$CL_DIR/etc/plugstack.conf
TOPO=$CL_DIR/etc/topology.conf

setup_file() {
	plugstack_save
	cp "$TOPO" "$BATS_FILE_TMPDIR/topology.conf.orig"
}

teardown_file() {
	plugstack_restore
	if [ -f "$BATS_FILE_TMPDIR/topology.conf.orig" ] &&
		! cmp -s "$BATS_FILE_TMPDIR/topology.conf.orig" "$TOPO"; then
		cp "$BATS_FILE_TMPDIR/topology.conf.orig" "$TOPO"
		reconfigure
	fi
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	cancel_all_wait 60
}

@test "leaves listed node3,node4 before node1,node2: every RANK is the plan's, the hostfile gives SLURM_PROCID == RANK" {
	{
		echo "# rankorder.bats: node3 and node4 on the first leaf"
		echo "SwitchName=leaf1 Nodes=node[3-4,7-8]"
		echo "SwitchName=leaf2 Nodes=node[1-2,5-6]"
		echo "SwitchName=spine Switches=leaf1,leaf2"
	} >"$TOPO"
	reconfigure
	echo "optional $CL_PLUGIN site=$SITE topology=$TOPO $(cluster_probe_args)" >"$PLUGSTACK"
	cat >"$CL_DIR/jobs/rankorder.sh" <<-'EOF'
		#!/bin/sh
		for v in DTPLAN_PLAN_STATE DTPLAN_FILE DTPLAN_HOSTFILE DT_NODE_ORDER; do
			eval "echo \"BATCH $v=\${$v-}\""
		done
		# Slurm's own task order, then the hostfile recipe's
		srun -K sh -c 'echo "TASK $(hostname) RANK=${RANK-} WORLD_SIZE=${WORLD_SIZE-}" \
			"LOCAL_RANK=${LOCAL_RANK-} LOCAL_WORLD_SIZE=${LOCAL_WORLD_SIZE-}" \
			"DT_TP_RANK=${DT_TP_RANK-} DT_PP_RANK=${DT_PP_RANK-} DT_DP_RANK=${DT_DP_RANK-}" \
			"NCCL_IB_HCA=${NCCL_IB_HCA-} PROCID=$SLURM_PROCID"'
		SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -K -m arbitrary -n "$(wc -l <"$DTPLAN_HOSTFILE")" \
			sh -c 'echo "HF $(hostname) $SLURM_PROCID ${RANK-}"'
	EOF
	chmod 755 "$CL_DIR/jobs/rankorder.sh"
	# node1-4 span both leaves now: --switches=2, or job_submit.lua's
	# --switches=1 holds the job
	run_job 120 -w 'node[1-4]' -N4 --switches=2 --ntasks-per-node=2 --gres=gpu:2 \
		--dt-plan=auto --dt-model=llama3-8b "$CL_DIR/jobs/rankorder.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]

	# the plan starts on the first leaf: node3, not node1
	run -0 /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["placement"]
print(" ".join(j["nodes"][r["node"]] for r in j["ranks"]))' "$(batch_var DTPLAN_FILE)"
	plan_order=$output
	echo "plan's rank order: $plan_order"
	[[ $plan_order == "node3 node3 node4 node4 "* ]]

	# Slurm's order of SLURM_PROCID over the hosts; 26.05 orders by topology
	grep '^TASK ' <<<"$LOG" >"$BATS_TEST_TMPDIR/tasks.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/tasks.txt")" -eq 8 ]
	slurm_order=$(sed 's/^TASK \([^ ]*\) .* PROCID=\([0-9]*\)$/\2 \1/' "$BATS_TEST_TMPDIR/tasks.txt" |
		sort -n | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }')
	echo "Slurm's task order: $slurm_order (Slurm $(slurm_version))"
	if [ "$(slurm_version)" -ge 2605 ]; then
		[ "$slurm_order" != "node1 node1 node2 node2 node3 node3 node4 node4" ]
	fi

	# every task's RANK (and tp/pp/dp ranks) is the plan's, on its node
	sed -i 's/ PROCID=[0-9]*$//' "$BATS_TEST_TMPDIR/tasks.txt"
	run /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" ranks "$(batch_var DTPLAN_FILE)" \
		"$BATS_TEST_TMPDIR/tasks.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ranks: 8 ok" ]

	# the hostfile recipe: SLURM_PROCID == RANK, on the hostfile's node
	hosts=$(batch_var DTPLAN_HOSTFILE)
	[ "$(tr '\n' ' ' <"$hosts")" = "$plan_order " ]
	grep '^HF ' <<<"$LOG" >"$BATS_TEST_TMPDIR/hf.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/hf.txt")" -eq 8 ]
	while read -r _ host procid rank; do
		[ -n "$rank" ]
		[ "$procid" = "$rank" ]
		[ "$host" = "$(sed -n "$((rank + 1))p" "$hosts")" ]
	done <"$BATS_TEST_TMPDIR/hf.txt"
	[ "$(awk '{ print $4 }' "$BATS_TEST_TMPDIR/hf.txt" | sort -n | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " ]
}
