#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/torch.bats: torch.distributed (gloo) runs across the
# namespaced nodes, and torch_launch.py accepts a layout whose TP groups sit
# inside nodes and rejects one whose TP groups cross nodes.  Here the layout
# is computed by hand in the batch script (tp fastest, then pp, then dp).

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

setup_file() {
	cluster_is_up || return 1
}

setup() {
	/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
		skip "Debian's /usr/bin/python3 has no torch with gloo (apt-get install python3-torch)"
	[ "$CL_NODES" -ge 4 ] || skip "needs 4 nodes"
	cd "$CL_DIR/jobs" || return 1
	# The batch script: MASTER_ADDR is the first node, every task computes
	# its (tp, pp, dp) ranks.
	cat >"$CL_DIR/jobs/torch.sh" <<-EOF
		#!/bin/sh
		MASTER_ADDR=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n 1)
		MASTER_PORT=\$((20000 + SLURM_JOB_ID % 10000))
		export MASTER_ADDR MASTER_PORT GLOO_SOCKET_IFNAME=eth0 DTPLAN_TORCH_TIMEOUT=60 $(torch_store_env)
		exec srun -K sh -c 'RANK=\$SLURM_PROCID WORLD_SIZE=\$SLURM_NTASKS LOCAL_RANK=\$SLURM_LOCALID \\
			DT_TP_RANK=\$((SLURM_PROCID % DT_TP)) \\
			DT_PP_RANK=\$((SLURM_PROCID / DT_TP % DT_PP)) \\
			DT_DP_RANK=\$((SLURM_PROCID / (DT_TP * DT_PP))) \\
			exec /usr/bin/python3 "\$0"' "$BATS_TEST_DIRNAME/torch_launch.py"
	EOF
}

teardown() {
	cancel_all_wait 60
}

@test "TP=2 PP=2 DP=2 on 4 nodes x 2 tasks: every group all-reduces, OK" {
	id=$(DT_TP=2 DT_PP=2 DT_DP=2 sbatch --parsable -N4 --ntasks-per-node=2 "$CL_DIR/jobs/torch.sh")
	submit_wait "$id" 120 || { job_log "$id"; false; }
	run -0 job_log "$id"
	echo "$output"
	[ "$(grep -c ' ok$' <<<"$output")" -eq 8 ]
	grep -q '^torch_launch: OK world=8 tp=2 pp=2 dp=2 nodes=4 iface=eth0$' <<<"$output"
	# Rank 0 and 1 share a node and form TP group [0, 1].
	grep -q '^rank 0 on node[0-9]* local 0: tp 0/2 pp 0/2 dp 0/2: tp\[0, 1\] pp\[0, 2\] dp\[0, 4\] ok$' \
		<<<"$output"
}

@test "TP=4 over nodes of 2 tasks: torch_launch.py refuses the layout" {
	id=$(DT_TP=4 DT_PP=1 DT_DP=1 sbatch --parsable -N2 --ntasks-per-node=2 "$CL_DIR/jobs/torch.sh")
	run submit_wait "$id" 120
	[ "$status" -eq 1 ]
	run -0 job_log "$id"
	echo "$output"
	grep -q 'torch_launch: rank [0-9]*: TP group \[0, 1, 2, 3\] spans nodes node[0-9]*,node[0-9]*$' \
		<<<"$output"
	[ "$(grep -c ' ok$' <<<"$output")" -eq 0 ]
}
