#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/segment.bats: --segment sized at submission (issue 33).
# The cluster becomes a topology/block site (each rack a block, BlockSizes
# one rack and two) with CliFilterPlugins=cli_filter/lua and
# etc/cli_filter.lua, which runs the dtplan just built in sbatch; an MoE job
# with --dt-plan=auto gets the --segment that keeps its expert groups inside
# blocks, slurmctld allocates by it, and the reason is in the job's log.
# teardown_file puts slurm.conf and topology.conf back.
#
# Slurm 24.11 and later only: 22.05 has no topology/block and no --segment
# (the block plugin came in 23.11, --segment in 24.11).  24.11's scontrol
# does not print a job's segment (src/scontrol/info_job.c prints SegmentSize=
# from 26.05 on), so the test shows it by what slurmctld does with it.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

CLI=$CLUSTER_TOP_BUILDDIR/cli/dtplan
TOPOLOGY=$CL_DIR/etc/topology.conf
FILTER=$CL_DIR/etc/cli_filter.lua

# why_not: why this cluster cannot run the file's tests (empty: it can).
why_not() {
	local v dir
	v=$(slurm_version)
	if [ "${v:-0}" -lt 2411 ]; then
		echo "Slurm $v: --segment and topology/block need Slurm 24.11 or later"
		return
	fi
	[ -n "$CL_PLUGIN" ] || { echo "cluster runs without the plugin (DTPLAN_PLUGIN)"; return; }
	if [ "$CL_RACKS" != 2 ] || [ "$CL_NODES_PER_RACK" != 4 ] || [ "$CL_GPUS" != 8 ]; then
		echo "written for 2 racks of 4 nodes of 8 GPUs (the default cluster)"
		return
	fi
	dir=$(scontrol show config | sed -n 's/^PluginDir *= *//p')
	if [ ! -f "$dir/cli_filter_lua.so" ] || [ ! -f "$dir/topology_block.so" ]; then
		echo "no cli_filter_lua.so or topology_block.so in $dir"
		return
	fi
	[ -x "$CLI" ] || echo "no $CLI (build the tree first)"
}

# The cluster is changed only where the tests can run; the tests skip
# (setup) otherwise: bats before 1.9 (Debian 12's 1.8.2) fails a skip in
# setup_file.
setup_file() {
	local r
	cluster_is_up || return 1
	SEGMENT_SKIP=$(why_not)
	export SEGMENT_SKIP
	[ -z "$SEGMENT_SKIP" ] || return 0
	cp "$CL_CONF" "$BATS_FILE_TMPDIR/slurm.conf.orig"
	cp "$TOPOLOGY" "$BATS_FILE_TMPDIR/topology.conf.orig"
	{
		echo "# segment.bats: each rack a block (topology/block)"
		for ((r = 1; r <= CL_RACKS; r++)); do
			echo "BlockName=rack$r Nodes=$(cluster_nodes | while read -r n; do
				[ "$(node_rack "$n")" = "$r" ] && echo "$n"
			done | paste -sd, -)"
		done
		echo "BlockSizes=$CL_NODES_PER_RACK,$((2 * CL_NODES_PER_RACK))"
	} >"$TOPOLOGY"
	sed -e "s|^local DTPLAN = .*|local DTPLAN = \"$CLI\"|" \
		-e "s|^local TIMEOUT = .*|local TIMEOUT = 30|" \
		"$CLUSTER_TOP_SRCDIR/etc/cli_filter.lua" >"$FILTER"
	sed -i 's|^TopologyPlugin=.*|TopologyPlugin=topology/block|' "$CL_CONF"
	echo "CliFilterPlugins=cli_filter/lua" >>"$CL_CONF"
	reconfigure || return 1
	scontrol show config | grep -q '^TopologyPlugin *= topology/block'
}

# (also where setup_file changed nothing)
teardown_file() {
	rm -f "$FILTER"
	if [ -f "$BATS_FILE_TMPDIR/topology.conf.orig" ]; then
		cp "$BATS_FILE_TMPDIR/topology.conf.orig" "$TOPOLOGY"
	fi
	if [ -f "$BATS_FILE_TMPDIR/slurm.conf.orig" ]; then
		cp "$BATS_FILE_TMPDIR/slurm.conf.orig" "$CL_CONF"
		reconfigure
	fi
}

setup() {
	[ -z "$SEGMENT_SKIP" ] || skip "$SEGMENT_SKIP"
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	cancel_all_wait 60
}

# The MoE job: Mixtral with TP 2 x EP 8 pinned on 6 nodes of 8 GPUs.  An
# expert group is TP x EP = 16 consecutive GPUs, 2 nodes; the base block
# is a rack of 4 nodes; of the multiples of 2 up to 4, 2 divides 6 and 4
# does not: --segment=2 (lib/dtplan/plan.h, dtplan_segment_for()).
MOE=(-N6 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=mixtral-8x7b
	--dt-train=seq=4096,tp=2,pp=1,ep=8)
REASON="--segment=2: an expert group (TP 2 x EP 8, 16 GPUs) spans 2 nodes of 8 GPUs"

write_segment_script() {
	cat >"$CL_DIR/jobs/segment-job.sh" <<-'EOF'
		#!/bin/sh
		echo "BATCH SLURM_JOB_SEGMENT_SIZE=${SLURM_JOB_SEGMENT_SIZE-}"
		echo "BATCH DTPLAN_PLAN_STATE=${DTPLAN_PLAN_STATE-}"
		srun -K true
		echo done
	EOF
	chmod 755 "$CL_DIR/jobs/segment-job.sh"
}

# block_holder NODE: a job on NODE alone until cancelled; its id in HOLD.
block_holder() {
	local id i
	id=$(sbatch --parsable -N1 --exclusive -w "$1" --wrap 'sleep 600') || return 1
	for ((i = 0; i < 150; i++)); do
		[ "$(job_state "$id")" = RUNNING ] && { HOLD+=("$id"); return 0; }
		sleep 0.2
	done
	echo "the job holding $1 did not start" >&2
	return 1
}

@test "an MoE job on blocks: --segment=2 set at submission, allocated by it, the reason in its log" {
	local i state rack1 rack2 v
	write_segment_script
	# One node of each rack held: 3 + 3 nodes free.  Segments of 2 fit one
	# per rack (4 nodes), so the job waits; a segment of 3 (the user's own,
	# which cli_filter.lua keeps) fits one per rack and runs.
	HOLD=()
	block_holder node1
	block_holder node5
	run_job 240 "${MOE[@]}" --segment=3 "$CL_DIR/jobs/segment-job.sh"
	grep -q '^done$' <<<"$LOG"
	! grep -q 'at submission' <<<"$LOG"
	# its nodes idle again: only the segments keep the next job waiting
	for ((i = 0; i < 300; i++)); do
		[ "$(nodes_in_state idle)" = $((CL_NODES - 2)) ] && break
		sleep 0.2
	done
	[ "$(nodes_in_state idle)" = $((CL_NODES - 2)) ] || { sinfo -N; false; }
	run -0 --separate-stderr sbatch --parsable "${MOE[@]}" "$CL_DIR/jobs/segment-job.sh"
	echo "$stderr"
	JOB=${output%%;*}
	grep -qF "dtplan: $REASON" <<<"$stderr"
	grep -qF "(set at submission)" <<<"$stderr"
	v=$(slurm_version)
	if [ "$v" -ge 2605 ]; then
		scontrol show job "$JOB" | grep -q 'SegmentSize=2\b'
	fi
	for ((i = 0; i < 40; i++)); do
		state=$(job_state "$JOB")
		[ "$state" = PENDING ] || break
		sleep 0.25
	done
	[ "$state" = PENDING ] || { scontrol show job "$JOB"; false; }
	scancel "${HOLD[@]}"
	submit_wait "$JOB" 240 || { scontrol show job "$JOB"; job_log "$JOB"; false; }
	LOG=$(job_log "$JOB")
	echo "$LOG" | head -n 30
	grep -q '^done$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	grep -qF "dtplan: at submission: $REASON" <<<"$LOG"
	grep -qF "(set at submission)" <<<"$LOG"
	[ "$v" -lt 2605 ] || [ "$(batch_var SLURM_JOB_SEGMENT_SIZE)" = 2 ]
	# whole segments: an even number of the job's nodes in each rack
	rack1=0 rack2=0
	while read -r n; do
		if [ "$(node_rack "$n")" = 1 ]; then rack1=$((rack1 + 1)); else rack2=$((rack2 + 1)); fi
	done < <(job_nodes "$JOB")
	echo "rack1 $rack1 rack2 $rack2"
	[ $((rack1 + rack2)) = 6 ] && [ $((rack1 % 2)) = 0 ] && [ $((rack2 % 2)) = 0 ]
}

@test "a dense job on blocks: no --segment, and why, on the terminal and in its log" {
	write_segment_script
	run -0 --separate-stderr sbatch --parsable -N2 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=auto --dt-model=llama3-8b "$CL_DIR/jobs/segment-job.sh"
	JOB=${output%%;*}
	grep -qF "dtplan: no --segment: no group to keep inside a block of 4 nodes" <<<"$stderr"
	submit_wait "$JOB" 180 || { job_log "$JOB"; false; }
	LOG=$(job_log "$JOB")
	grep -q '^done$' <<<"$LOG"
	grep -qF "dtplan: at submission: no --segment: no group to keep inside a block" <<<"$LOG"
	[ "$(batch_var SLURM_JOB_SEGMENT_SIZE)" = "" ]
}

@test "without --dt-plan, or with dtplan missing, the job goes as it is" {
	write_segment_script
	run -0 --separate-stderr sbatch --parsable -N2 --gres=gpu:8 "$CL_DIR/jobs/segment-job.sh"
	! grep -q 'dtplan' <<<"$stderr"
	JOB=${output%%;*}
	submit_wait "$JOB" 120
	sed -i "s|^local DTPLAN = .*|local DTPLAN = \"$CL_DIR/no-such-dtplan\"|" "$FILTER"
	run -0 --separate-stderr sbatch --parsable "${MOE[@]}" "$CL_DIR/jobs/segment-job.sh"
	sed -i "s|^local DTPLAN = .*|local DTPLAN = \"$CLI\"|" "$FILTER"
	echo "$stderr"
	grep -qF "dtplan: --segment not set: $CL_DIR/no-such-dtplan segment failed (exit 127)" <<<"$stderr"
	JOB=${output%%;*}
	submit_wait "$JOB" 240 || { job_log "$JOB"; false; }
	LOG=$(job_log "$JOB")
	grep -qF "dtplan: at submission: --segment not set: " <<<"$LOG"
}
