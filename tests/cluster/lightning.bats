#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/lightning.bats: the Lightning recipe of doc/launchers.md.
# Every task of a --dt-plan=auto job's hostfile step builds Lightning's own
# SLURMEnvironment (tests/cluster/lightning_env.py, from the source folder
# DTPLAN_LIGHTNING names, read at 7f0c3436cd3f6ad3753125672024fc415cbcb414),
# and its world_size(), global_rank(), local_rank(), node_rank(),
# main_address and main_port are the plan's WORLD_SIZE, RANK, LOCAL_RANK,
# the node of that rank in the plan, MASTER_ADDR and MASTER_PORT.
#
# Skipped without DTPLAN_LIGHTNING (a checkout of Lightning-AI/pytorch-lightning,
# or its src folder) or without the plugin.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	LIGHTNING_SRC=
	for d in "${DTPLAN_LIGHTNING:-}/src" "${DTPLAN_LIGHTNING:-}"; do
		if [ -n "${DTPLAN_LIGHTNING:-}" ] &&
			[ -f "$d/lightning/fabric/plugins/environments/slurm.py" ]; then
			LIGHTNING_SRC=$d
			break
		fi
	done
	[ -n "$LIGHTNING_SRC" ] || skip "DTPLAN_LIGHTNING names no Lightning source tree"
	/usr/bin/python3 -c 'import typing_extensions' 2>/dev/null ||
		skip "Debian's /usr/bin/python3 has no typing_extensions (python3-typing-extensions)"
	[ "$CL_NODES" -ge 4 ] || skip "needs 4 nodes"
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	cancel_all_wait 20
}

# lightning_job NODES TASKS-PER-NODE MODEL: the recipe's job; sets JOB and LOG
lightning_job() {
	cat >"$CL_DIR/jobs/lightning-job.sh" <<-EOF
		#!/bin/sh
		echo "BATCH DTPLAN_PLAN_STATE=\${DTPLAN_PLAN_STATE-}"
		echo "BATCH PET_MASTER_ADDR=\${PET_MASTER_ADDR-}"
		echo "BATCH PET_MASTER_PORT=\${PET_MASTER_PORT-}"
		SLURM_HOSTFILE=\$DTPLAN_HOSTFILE exec srun -K -m arbitrary -n "\$(wc -l <"\$DTPLAN_HOSTFILE")" \\
			/usr/bin/python3 "$BATS_TEST_DIRNAME/lightning_env.py" "$LIGHTNING_SRC"
	EOF
	chmod 755 "$CL_DIR/jobs/lightning-job.sh"
	run_job 120 -N"$1" --ntasks-per-node="$2" --gres=gpu:"$2" --dt-plan=auto --dt-model="$3" \
		"$CL_DIR/jobs/lightning-job.sh"
}

# lightning_agrees TASKS: every task's SLURMEnvironment says what its plan says
lightning_agrees() {
	local tasks=$1 host world global lrank node addr port
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	[ "$(grep -c '^LIGHTNING ' <<<"$LOG")" -eq "$tasks" ]
	[ "$(grep -c '^PLAN ' <<<"$LOG")" -eq "$tasks" ]
	grep '^LIGHTNING ' <<<"$LOG" | sort -k4,4n >"$BATS_TEST_TMPDIR/lightning.txt"
	grep '^PLAN ' <<<"$LOG" | sort -k4,4n >"$BATS_TEST_TMPDIR/plan.txt"
	# line by line, in rank order: Lightning's view of a task and the plan's
	while read -r _ host world global lrank node addr port _ phost pworld prank plocal pnode paddr pport; do
		echo "rank $prank on $host: Lightning $world $global $lrank $node $addr $port," \
			"plan $pworld $prank $plocal $pnode $paddr $pport"
		[ "$host" = "$phost" ]
		[ "$world" = "$pworld" ] && [ "$world" = "$tasks" ]
		[ "$global" = "$prank" ]
		[ "$lrank" = "$plocal" ]
		[ "$node" = "$pnode" ]
		[ "$addr" = "$paddr" ] && [ "$addr" = "$(batch_var PET_MASTER_ADDR)" ]
		[ "$port" = "$pport" ] && [ "$port" = "$(batch_var PET_MASTER_PORT)" ]
	done < <(paste -d' ' "$BATS_TEST_TMPDIR/lightning.txt" "$BATS_TEST_TMPDIR/plan.txt")
	[ "$(awk '{ print $4 }' "$BATS_TEST_TMPDIR/lightning.txt" | tr '\n' ' ')" = \
		"$(seq 0 $((tasks - 1)) | tr '\n' ' ')" ]
}

@test "Lightning's SLURMEnvironment in every task of the hostfile recipe: 2 nodes x 4, the plan's ranks" {
	lightning_job 2 4 llama3-8b
	lightning_agrees 8
}

@test "Lightning's SLURMEnvironment in every task of the hostfile recipe: 4 nodes x 2, the plan's ranks" {
	lightning_job 4 2 llama3-8b
	lightning_agrees 8
}
