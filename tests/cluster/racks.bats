#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/racks.bats: expert groups and NVL72-style racks (issue 33).
# The site file names multi-node NVLink domains (NVLinkDomain=) over the
# test cluster's nodes; an EP group that spans two of them is warned about
# with its cost and refused under --dt-plan=strict, and one whose racks
# hold it runs.  Written for the lead to run; not run by its author.
#
# Needs a cluster brought up by cluster.sh with DTPLAN_PLUGIN set (run.sh
# does that when plugin/.libs/spank_dtplan.so is built).  Each test writes
# the plugstack.conf line it needs and teardown_file puts the cluster's own
# line back.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

PLUGSTACK=$CL_DIR/etc/plugstack.conf
# rackA: node1-node3 (24 GPUs), rackB: node4-node8; SlowdownThreshold=0 so
# that any cost of the crossing warns (the test cluster's "H100" nodes gain
# little from NVLink all-to-alls at Mixtral's size)
CROSS=$CL_DIR/etc/dtplan-racks-cross.conf
# rackA: node1-node2, rackB: node3-node4 (16 GPUs each): TP 2 x EP 8 fits
FIT=$CL_DIR/etc/dtplan-racks-fit.conf

setup_file() {
	plugstack_save
	printf '%s\n' 'SlowdownThreshold=0' 'NodeName=node[1-3] NVLinkDomain=rackA' \
		'NodeName=node[4-8] NVLinkDomain=rackB' >"$CROSS"
	printf '%s\n' 'SlowdownThreshold=0' 'NodeName=node[1-2] NVLinkDomain=rackA' \
		'NodeName=node[3-4] NVLinkDomain=rackB' >"$FIT"
}

teardown_file() {
	plugstack_restore
	rm -f "$CROSS" "$FIT"
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	cancel_all_wait 60
}

plugstack_site() {
	echo "optional $CL_PLUGIN site=$1 topology=$CL_DIR/etc/topology.conf $(cluster_probe_args)" \
		>"$PLUGSTACK"
}

MOE=(-N4 -w node1,node2,node3,node4 --ntasks-per-node=8 --gres=gpu:8
	--dt-model=mixtral-8x7b --dt-train=seq=4096,tp=2,pp=1,ep=8)

@test "an EP group across two racks: warned with its cost, refused under --dt-plan=strict" {
	plugstack_site "$CROSS"
	run_job 180 "${MOE[@]}" --dt-plan=auto --wrap 'echo ran; srun -K true; echo done'
	echo "$LOG" | head -n 40
	grep -q '^done$' <<<"$LOG"
	grep -q '\[ep-crosses-nvlink-domain\] expert-parallel groups of EP 8 (16 GPUs each) span NVLink domains (the largest holds 24 of the job.s GPUs): their all-to-all (.* per GPU per step) crosses the network; predicted .* a step against .* with every group inside one domain' <<<"$LOG"
	JOB=$(sbatch --parsable "${MOE[@]}" --dt-plan=strict --wrap 'echo ran; srun -K true; echo done')
	run submit_wait "$JOB" 120
	LOG=$(job_log "$JOB")
	echo "$LOG"
	[ "$status" -eq 1 ]
	[ "$(job_state "$JOB")" = FAILED ]
	grep -q '^dtplan: job refused: ep-crosses-nvlink-domain: ' <<<"$LOG"
	! grep -q '^ran$' <<<"$LOG"
}

@test "EP groups the racks hold: no crossing warning, the job runs under --dt-plan=strict" {
	plugstack_site "$FIT"
	run_job 180 "${MOE[@]}" --dt-plan=strict --wrap 'echo ran; srun -K true; echo done'
	echo "$LOG" | head -n 40
	grep -q '^done$' <<<"$LOG"
	! grep -q 'ep-crosses-nvlink-domain\|job refused' <<<"$LOG"
}
