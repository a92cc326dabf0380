#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/moe.bats: a mixture-of-experts job end to end on the test
# cluster: the plan's expert parallelism reaches every task as DT_EP_RANK,
# and an expert-parallel group placed across the two 4:1 leaves is warned
# about in the job's log; DeepSeek-V3's recipe keys reach the job.  Uses
# tests/data/dtplan-site-4to1.conf, as plugin.bats does.
#
# Needs a cluster brought up by cluster.sh with DTPLAN_PLUGIN set (run.sh
# does that when plugin/.libs/spank_dtplan.so is built).  Each test writes
# the plugstack.conf line it needs and teardown_file puts the cluster's own
# line back.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

SITE=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-4to1.conf
PLUGSTACK=$CL_DIR/etc/plugstack.conf

setup_file() {
	plugstack_save
}

teardown_file() {
	plugstack_restore
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	cd "$CL_DIR/jobs" || return 1
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf $(cluster_probe_args)" \
		>"$PLUGSTACK"
}

teardown() {
	cancel_all_wait 60
}

# The job: the job-wide EP, CP and DP, then one line per task with its ranks.
write_moe_script() {
	cat >"$CL_DIR/jobs/moe-job.sh" <<-'EOF'
		#!/bin/sh
		for v in DT_TP DT_PP DT_DP DT_EP DT_CP DTPLAN_PLAN_STATE; do
			eval "echo \"BATCH $v=\${$v-}\""
		done
		srun -K sh -c 'echo "TASK $(hostname) RANK=${RANK-} DT_DP_RANK=${DT_DP_RANK-}" \
			"DT_EP_RANK=${DT_EP_RANK-} DT_CP_RANK=${DT_CP_RANK-}"'
		echo done
	EOF
	chmod 755 "$CL_DIR/jobs/moe-job.sh"
}

@test "mixtral-8x7b on the 4 nodes of one leaf: EP inside each node, an EP rank in every task" {
	write_moe_script
	# 4K sequences: at Mixtral's 32K context the plan prefers CP to EP
	run_job 180 -N4 -w node1,node2,node3,node4 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=auto --dt-model=mixtral-8x7b --dt-train=seq=4096 "$CL_DIR/jobs/moe-job.sh"
	echo "$LOG" | head -n 40
	grep -q '^done$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	ep=$(batch_var DT_EP)
	# Mixtral's 8 experts over 2, 4 or 8 GPUs, and EP carved from CP x DP
	[[ "$ep" =~ ^(2|4|8)$ ]]
	dp=$(batch_var DT_DP)
	cp=$(batch_var DT_CP)
	tp=$(batch_var DT_TP)
	[ $((cp * dp % ep)) -eq 0 ]
	grep -q '^  model        mixtral-8x7b: 46.70B parameters' <<<"$LOG"
	grep -q '12.88B active: 8 experts (2 per token) in 32 MoE layers' <<<"$LOG"
	grep -Eq "\(EP $ep of (CP x )?DP\)" <<<"$LOG"
	# every task: an EP rank as Megatron-LM's expert rank generator forms
	# it (tp-ep-dp-pp without CP, parallel_state.py): RANK / TP % EP
	[ "$(grep -c '^TASK ' <<<"$LOG")" -eq 32 ]
	while read -r _ _ rk _ epr _; do
		[ "${epr#DT_EP_RANK=}" -eq $((${rk#RANK=} / tp % ep)) ]
	done < <(grep '^TASK ' <<<"$LOG")
	! grep -q 'ep-oversubscribed-uplink' <<<"$LOG"
}

@test "an EP group across the two 4:1 leaves: the all-to-all's uplink is warned about" {
	write_moe_script
	# TP 4 x EP 8 spans all 32 GPUs: node1, node2 under leaf1, node5, node6
	# under leaf2, 4:1 uplinks configured and more measured (above the
	# default threshold of 2:1); --switches=2 keeps job_submit.lua from
	# asking for one leaf, which these nodes are not under.
	run_job 180 -N4 -w node1,node2,node5,node6 --switches=2 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=auto --dt-model=mixtral-8x7b --dt-train=seq=4096,tp=4,pp=1,ep=8 \
		"$CL_DIR/jobs/moe-job.sh"
	echo "$LOG" | head -n 40
	grep -q '^done$' <<<"$LOG"
	[ "$(batch_var DT_EP)" = 8 ]
	grep -q '\[ep-oversubscribed-uplink\] expert-parallel groups of EP 8 span leaf switches: their all-to-all (.* per GPU per step, .* not hidden) crosses an uplink oversubscribed [0-9.]*:1, above 2.0:1' <<<"$LOG"
	[ "$(grep -c '^TASK .* DT_EP_RANK=[0-7] ' <<<"$LOG")" -eq 32 ]
}

@test "DeepSeek-V3's recipe in --dt-train: DualPipe, fine recomputation, bf16 moments and gradients reach the job" {
	cat >"$CL_DIR/jobs/recipe-job.sh" <<-'EOF2'
		#!/bin/sh
		for v in DT_PP DT_RECOMPUTE DT_PP_SCHEDULE DTPLAN_PLAN_STATE DT_MEGATRON_ARGS; do
			eval "echo \"BATCH $v=\${$v-}\""
		done
		echo done
	EOF2
	chmod 755 "$CL_DIR/jobs/recipe-job.sh"
	run_job 180 -N4 -w node1,node2,node3,node4 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=auto --dt-model=mixtral-8x7b \
		--dt-train=seq=4096,pp=2,framework=megatron,recompute=fine,schedule=dualpipe,moments=bf16,grads=bf16 \
		"$CL_DIR/jobs/recipe-job.sh"
	echo "$LOG" | head -n 30
	grep -q '^done$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	[ "$(batch_var DT_PP)" = 2 ]
	[ "$(batch_var DT_RECOMPUTE)" = fine ]
	[ "$(batch_var DT_PP_SCHEDULE)" = dualpipe ]
	args=$(batch_var DT_MEGATRON_ARGS)
	[[ "$args" == *" --recompute-granularity selective --recompute-modules core_attn layernorm moe_act"* ]]
	[[ "$args" == *" --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"* ]]
	[[ "$args" == *" --grad-reduce-in-bf16"* ]]
	grep -q 'DualPipe (each GPU holds stage i and PP - 1 - i)' <<<"$LOG"
	grep -q 'megatron memory count, bf16 gradients, bf16 Adam moments' <<<"$LOG"
	grep -q 'the GPU of stages 0 and 1 is the fullest' <<<"$LOG"
}

@test "mixtral-8x7b TP 2 x CP 2 x EP 8 on 2 nodes: EP over CP x DP reads back in every step and in dtplan show" {
	write_moe_script
	# EP 8 divides CP x DP = 2 x 4, not DP 4 alone: the plan readers
	# once checked dp % ep and every srun step of such a job lost its plan
	run_job 180 -N2 -w node1,node2 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=auto --dt-model=mixtral-8x7b \
		--dt-train=seq=32768,tp=2,pp=1,cp=2,ep=8 "$CL_DIR/jobs/moe-job.sh"
	echo "$LOG" | head -n 40
	grep -q '^done$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	[ "$(batch_var DT_TP)" = 2 ]
	[ "$(batch_var DT_CP)" = 2 ]
	[ "$(batch_var DT_EP)" = 8 ]
	[ "$(batch_var DT_DP)" = 4 ]
	grep -q '(EP 8 of CP x DP)' <<<"$LOG"
	# every task of the step has the plan's ranks: 16 distinct RANKs, CP
	# and EP ranks inside their groups
	[ "$(grep -c '^TASK ' <<<"$LOG")" -eq 16 ]
	[ "$(grep '^TASK ' <<<"$LOG" | awk '{print $3}' | sort -u | grep -c '^RANK=[0-9]')" -eq 16 ]
	while read -r _ _ _ _ epr cpr; do
		[ "${epr#DT_EP_RANK=}" -ge 0 ] && [ "${epr#DT_EP_RANK=}" -lt 8 ]
		[ "${cpr#DT_CP_RANK=}" -ge 0 ] && [ "${cpr#DT_CP_RANK=}" -lt 2 ]
	done < <(grep '^TASK ' <<<"$LOG")
	# and dtplan show reads the job's plan with the same split
	run "$CLUSTER_TOP_BUILDDIR/cli/dtplan" show "$CL_DIR/jobs/dtplan-$JOB.json"
	echo "$output" | head -n 10
	[ "$status" -eq 0 ]
	grep -q 'TP 2 x CP 2 x PP 1 x DP 4 (EP 8 of CP x DP)' <<<"$output"
}
