#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/plugin.bats: the dtplan SPANK plugin end to end on the test
# cluster: options in sbatch/salloc/srun, the batch step's plan, log, file and
# environment, per-task ranks in srun steps, the hostfile recipe, topology warnings and refusals,
# the site default, job_submit.lua, torch.distributed from the plugin's
# environment, degraded plans, and the fabric service and plan collector
# (tests/http_server.py on the cluster's own network).  The enforcement tests
# use tests/data/dtplan-site-thin.conf (thin leaf uplinks); the block test
# writes its own topology file into $CL_DIR/etc and names it relative to
# $SLURM_CONF's folder.
#
# Needs a cluster brought up by cluster.sh with DTPLAN_PLUGIN set (run.sh
# does that when plugin/.libs/spank_dtplan.so is built).  Each test writes the
# plugstack.conf line it needs (slurmstepd and the clients read the file at
# every start) and teardown puts the cluster's own line back.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

SITE=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-4to1.conf
DTPLAN_CLI=$CLUSTER_TOP_BUILDDIR/cli/dtplan
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
	plugstack
}

teardown() {
	local x
	# Put back a node hwloc XML that a test broke (see "degraded" below).
	if [ -f "$BATS_TEST_TMPDIR/xml.restore" ]; then
		read -r x <"$BATS_TEST_TMPDIR/xml.restore"
		ln -sfn "$x" "$(node_xml node1)"
	fi
	cancel_all_wait 60
	plugstack_restore
	server_stop
}

# plugstack ARGS...: the plugin with the 4:1 site file, the cluster's switch
# tree (unless ARGS give topology=) and ARGS.
plugstack() {
	local topo="topology=$CL_DIR/etc/topology.conf"
	case " $* " in *" topology="*) topo= ;; esac
	echo "optional $CL_PLUGIN site=$SITE $topo $(cluster_probe_args) $*" >"$PLUGSTACK"
}

# The batch script of the planned jobs: the job-wide variables, then one line
# per task of an srun step with the rank variables.
write_job_script() {
	cat >"$CL_DIR/jobs/plan-job.sh" <<-'EOF'
		#!/bin/sh
		for v in DT_TP DT_PP DT_DP DT_ZERO DT_MICRO_BATCH DT_NUM_MICROBATCHES DT_RECOMPUTE \
			DT_GLOBAL_BATCH DT_PP_LAYERS DT_CKPT_INTERVAL_S DT_NNODES DT_NODE_ORDER MASTER_ADDR MASTER_PORT DTPLAN_FILE \
			DTPLAN_PLAN_STATE DTPLAN_PLAN_REASON; do
			eval "echo \"BATCH $v=\${$v-}\""
		done
		srun -K sh -c 'echo "TASK $(hostname) RANK=${RANK-} WORLD_SIZE=${WORLD_SIZE-}" \
			"LOCAL_RANK=${LOCAL_RANK-} LOCAL_WORLD_SIZE=${LOCAL_WORLD_SIZE-}" \
			"DT_TP_RANK=${DT_TP_RANK-} DT_PP_RANK=${DT_PP_RANK-} DT_DP_RANK=${DT_DP_RANK-}" \
			"NCCL_IB_HCA=${NCCL_IB_HCA-}"'
	EOF
	chmod 755 "$CL_DIR/jobs/plan-job.sh"
}

# main_job: the 4-node llama3-70b job of the tests 3 and 4, run once per file;
# sets JOB and LOG.
main_job() {
	if [ -f "$BATS_FILE_TMPDIR/main.id" ]; then
		JOB=$(cat "$BATS_FILE_TMPDIR/main.id")
		LOG=$(cat "$BATS_FILE_TMPDIR/main.log")
		return 0
	fi
	write_job_script
	run_job 120 -N4 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-70b \
		"$CL_DIR/jobs/plan-job.sh" || return 1
	echo "$JOB" >"$BATS_FILE_TMPDIR/main.id"
	echo "$LOG" >"$BATS_FILE_TMPDIR/main.log"
}

# ----------------------------------------------------------------------
# 1. Options
# ----------------------------------------------------------------------

@test "sbatch, salloc and srun --help list --dt-plan, --dt-model, --dt-train as plugin options" {
	for cmd in sbatch salloc srun; do
		run -0 "$cmd" --help
		# The section runs from its title to the next blank-line-separated title.
		section=$(awk '/^Options provided by plugins:/ { on = 1; next }
			on && /^[A-Z][A-Za-z -]*:$/ { exit } on' <<<"$output")
		echo "== $cmd"
		echo "$section"
		grep -q -- '--dt-plan=auto|strict|off' <<<"$section"
		grep -q -- '--dt-model=SPEC' <<<"$section"
		grep -q -- '--dt-train=' <<<"$section"
	done
}

# ----------------------------------------------------------------------
# 2. Bad values
# ----------------------------------------------------------------------

@test "sbatch rejects bad --dt-* values at once, naming option and value; no job is queued" {
	# option|value|what the plugin's message says
	cases=(
		"--dt-model|nosuch-99z|unknown model 'nosuch-99z'"
		"--dt-plan|maybe|unknown mode 'maybe'"
		"--dt-train|garbage|'garbage' is not key=value"
		"--dt-train|gbs=abc|gbs: 'abc' is not a whole number"
		"--dt-train|zero=7|zero"
		"--dt-train|seq=4096,recompute=fine|recompute: recompute=fine is Megatron-Core's"
	)
	before=$(squeue -h -t all -o %i | sort)
	logs_before=$(ls "$CL_DIR/jobs")
	for c in "${cases[@]}"; do
		IFS='|' read -r opt val msg <<<"$c"
		run sbatch --parsable -N1 --dt-plan=auto "$opt=$val" --wrap 'echo ran'
		echo "sbatch $opt=$val: status $status: $output"
		[ "$status" -ne 0 ]
		grep -qF -- "dtplan: $opt: $msg" <<<"$output"
		grep -qF -- "Invalid $opt argument: $val" <<<"$output"
		# No job id was printed and none is queued or ran.
		[ -z "$(grep -x '[0-9][0-9]*' <<<"$output")" ]
	done
	# slurmctld knows no new job (finished ones stay listed for MinJobAge) and
	# no job wrote an output file.
	[ "$(squeue -h -t all -o %i | sort)" = "$before" ]
	[ "$(ls "$CL_DIR/jobs")" = "$logs_before" ]
}

@test "sbatch refuses a --dt-train choice the --dt-model cannot take; no job is queued" {
	# llama3-70b: 64 attention heads, 8 key/value heads
	before=$(squeue -h -t all -o %i | sort)
	run sbatch --parsable -N1 --dt-plan=auto --dt-model=llama3-70b --dt-train=tp=3 \
		--wrap 'echo ran'
	echo "status $status: $output"
	[ "$status" -ne 0 ]
	grep -qF -- "dtplan: --dt-train: tp: TP 3 does not divide the 64 attention heads" \
		<<<"$output"
	[ -z "$(grep -x '[0-9][0-9]*' <<<"$output")" ]
	[ "$(squeue -h -t all -o %i | sort)" = "$before" ]
}

# ----------------------------------------------------------------------
# 3. The batch step's plan
# ----------------------------------------------------------------------

@test "4-node --dt-plan=auto llama3-70b: plan block, JSON equal to dtplan plan, job variables" {
	main_job
	echo "$LOG"
	# The plan block in the job's output.
	grep -Eq '^dtplan plan( \(dtplan [^)]*\))?$' <<<"$LOG"
	grep -q '^  model        llama3-70b: ' <<<"$LOG"
	grep -q '^  GPUs         32 x h100-sxm (4 nodes of 8)$' <<<"$LOG"
	block_tp=$(sed -n 's/^  parallelism  TP \([0-9]*\) x PP .*/\1/p' <<<"$LOG")
	[ -n "$block_tp" ]
	# The split is the planner's (the same `dtplan plan` below): a TP group
	# never leaves its node of 8.
	[ $((8 % block_tp)) -eq 0 ]
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]

	# The batch script's variables: all set, and consistent.
	for v in DT_TP DT_PP DT_DP DT_ZERO DT_MICRO_BATCH DT_NUM_MICROBATCHES DT_RECOMPUTE \
		DT_CKPT_INTERVAL_S DT_NODE_ORDER MASTER_ADDR MASTER_PORT DTPLAN_FILE; do
		[ -n "$(batch_var "$v")" ] || { echo "$v is not set in the batch script"; false; }
	done
	[ "$(batch_var DT_TP)" = "$block_tp" ]
	[ $(($(batch_var DT_TP) * $(batch_var DT_PP) * $(batch_var DT_DP))) -eq 32 ]
	# 8 GPUs per node: a TP group never leaves its node.
	[ $((8 % $(batch_var DT_TP))) -eq 0 ]
	[ "$(batch_var DT_NNODES)" = 4 ]
	[ "$(tr , '\n' <<<"$(batch_var DT_NODE_ORDER)" | sort)" = "$(job_nodes "$JOB" | sort)" ]
	[ "$(batch_var MASTER_ADDR)" = "$(batch_var DT_NODE_ORDER | cut -d, -f1)" ]
	[ "$(batch_var MASTER_PORT)" = $((29500 + JOB % 1000)) ]
	[ "$(batch_var DT_CKPT_INTERVAL_S)" -gt 0 ]

	# The plan file: where DTPLAN_FILE says, valid JSON, the same numbers as
	# the environment and as `dtplan plan` for the same inputs.
	file=$(batch_var DTPLAN_FILE)
	[ "$file" = "$CL_DIR/jobs/dtplan-$JOB.json" ]
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" parallelism "$file"
	plugin_par=$output
	[ "$plugin_par" = "$(batch_var DT_TP) $(batch_var DT_PP) $(batch_var DT_DP) $(batch_var DT_ZERO) $(batch_var DT_MICRO_BATCH)" ]
	args=(--model llama3-70b --gpus 32 --gpus-per-node 8 --json)
	if "$DTPLAN_CLI" plan --help 2>&1 | grep -q -- --topology; then
		args+=(--nodes "$(batch_var DT_NODE_ORDER)" --topology "$CL_DIR/etc/topology.conf"
			--site "$SITE")
	fi
	"$DTPLAN_CLI" plan "${args[@]}" >"$BATS_TEST_TMPDIR/cli.json"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" parallelism "$BATS_TEST_TMPDIR/cli.json"
	echo "plugin: $plugin_par; dtplan plan ${args[*]}: $output"
	[ "$plugin_par" = "$output" ]
}

# ----------------------------------------------------------------------
# 4. Ranks of an srun step
# ----------------------------------------------------------------------

@test "srun tasks of the 4-node job get RANK, LOCAL_RANK and tp/pp/dp ranks of the plan" {
	main_job
	grep '^TASK ' <<<"$LOG" >"$BATS_TEST_TMPDIR/tasks.txt"
	cat "$BATS_TEST_TMPDIR/tasks.txt"
	sed -n '/^  /d; /dtplan/p' <<<"$LOG" # the plugin's messages, shown on failure
	[ "$(wc -l <"$BATS_TEST_TMPDIR/tasks.txt")" -eq 32 ]
	run /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" ranks "$(batch_var DTPLAN_FILE)" \
		"$BATS_TEST_TMPDIR/tasks.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ranks: 32 ok" ]
	# No task was told that its rank environment is missing.
	! grep -q 'rank environment not set' <<<"$LOG"
}

# ----------------------------------------------------------------------
# 4b. The hostfile recipe: SLURM_PROCID in plan order
# ----------------------------------------------------------------------

@test "hostfile recipe: SLURM_HOSTFILE=\$DTPLAN_HOSTFILE srun -m arbitrary gives SLURM_PROCID == RANK in every task" {
	cat >"$CL_DIR/jobs/hostfile-job.sh" <<-'EOF'
		#!/bin/sh
		for v in DTPLAN_PLAN_STATE DTPLAN_FILE DTPLAN_HOSTFILE DTPLAN_DEEPSPEED_CONFIG DTPLAN_SVG \
			DT_TP DT_MEGATRON_ARGS PET_NNODES PET_NPROC_PER_NODE; do
			eval "echo \"BATCH $v=\${$v-}\""
		done
		SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -K -m arbitrary -n "$(wc -l <"$DTPLAN_HOSTFILE")" \
			sh -c 'echo "TASK $(hostname) $SLURM_PROCID ${RANK-} $SLURM_LOCALID ${LOCAL_RANK-}"'
	EOF
	chmod 755 "$CL_DIR/jobs/hostfile-job.sh"
	run_job 120 -N2 --ntasks-per-node=4 --gres=gpu:4 --dt-plan=auto --dt-model=llama3-8b \
		"$CL_DIR/jobs/hostfile-job.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]

	# The hostfile beside the plan: one line per rank, the node of that rank.
	hosts=$(batch_var DTPLAN_HOSTFILE)
	[ "$hosts" = "$CL_DIR/jobs/dtplan-$JOB.hosts" ]
	[ "$(wc -l <"$hosts")" -eq 8 ]
	[ "$(sort -u "$hosts")" = "$(job_nodes "$JOB" | sort)" ]
	[ "$(sort "$hosts" | uniq -c | awk '{ print $1 }' | sort -u)" = 4 ]
	run -0 /usr/bin/python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["placement"]
print("\n".join(j["nodes"][r["node"]] for r in j["ranks"]))' "$(batch_var DTPLAN_FILE)"
	[ "$output" = "$(cat "$hosts")" ]

	# Every task: SLURM_PROCID is RANK, SLURM_LOCALID is LOCAL_RANK, and the
	# task runs on the node the hostfile names for its rank.
	grep '^TASK ' <<<"$LOG" >"$BATS_TEST_TMPDIR/tasks.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/tasks.txt")" -eq 8 ]
	while read -r _ host procid rank localid local_rank; do
		echo "$host: SLURM_PROCID=$procid RANK=$rank SLURM_LOCALID=$localid LOCAL_RANK=$local_rank"
		[ -n "$rank" ]
		[ "$procid" = "$rank" ]
		[ "$localid" = "$local_rank" ]
		[ "$host" = "$(sed -n "$((rank + 1))p" "$hosts")" ]
	done <"$BATS_TEST_TMPDIR/tasks.txt"
	[ "$(awk '{ print $4 }' "$BATS_TEST_TMPDIR/tasks.txt" | sort -n | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " ]
	! grep -q 'rank environment not set' <<<"$LOG"

	# The job log's launch line, and the other files beside the plan.
	grep -qF 'dtplan: launch: SLURM_HOSTFILE=$DTPLAN_HOSTFILE srun -m arbitrary -n 8 PROGRAM' <<<"$LOG"
	[ "$(batch_var DTPLAN_DEEPSPEED_CONFIG)" = "$CL_DIR/jobs/dtplan-$JOB.deepspeed.json" ]
	[ -s "$(batch_var DTPLAN_DEEPSPEED_CONFIG)" ]
	grep -q '<svg' "$(batch_var DTPLAN_SVG)"
	[ "$(batch_var PET_NNODES)" = 2 ]
	[ "$(batch_var PET_NPROC_PER_NODE)" = 4 ]
	[[ $(batch_var DT_MEGATRON_ARGS) == "--tensor-model-parallel-size $(batch_var DT_TP) "* ]]
}

# ----------------------------------------------------------------------
# 5. Topology rules: warn, deny, strict
# ----------------------------------------------------------------------

# eight_node_job ARGS...: an 8-node job across both leaves, the two it needs.
eight_node_job() {
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	JOB=$(sbatch --parsable -N8 --ntasks-per-node=8 --gres=gpu:8 "$@" \
		--wrap 'echo "BATCH DTPLAN_PLAN_STATE=${DTPLAN_PLAN_STATE-}"; srun -K true; echo done')
	JOB=${JOB%%;*}
	run submit_wait "$JOB" 120
	JOB_RC=$status
	LOG=$(job_log "$JOB")
	echo "job $JOB: $(job_state "$JOB") (submit_wait $JOB_RC)"
	echo "$LOG"
}

@test "3 and 6 nodes of llama3-8b: full plans whose DT_* and per-task ranks agree" {
	write_job_script
	for n in 3 6; do
		run_job 180 -N"$n" --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto \
			--dt-model=llama3-8b "$CL_DIR/jobs/plan-job.sh"
		echo "== $n nodes, job $JOB"
		echo "$LOG" | head -n 30
		[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
		grep -q "^  GPUs         $((n * 8)) x h100-sxm ($n nodes of 8)\$" <<<"$LOG"
		! grep -q '^  degraded' <<<"$LOG"
		tp=$(batch_var DT_TP) pp=$(batch_var DT_PP) dp=$(batch_var DT_DP)
		[ $((tp * pp * dp)) -eq $((n * 8)) ]
		[ "$(batch_var DT_NNODES)" = "$n" ]
		# the trained batch is dp x micro-batch x micro-batches, within 5% of 1024
		gbs=$(batch_var DT_GLOBAL_BATCH)
		[ "$gbs" -eq $((dp * $(batch_var DT_MICRO_BATCH) * $(batch_var DT_NUM_MICROBATCHES))) ]
		[ $((gbs * 100)) -ge $((1024 * 95)) ] && [ $((gbs * 100)) -le $((1024 * 105)) ]
		# one layer count per stage, 32 in all
		layers=$(batch_var DT_PP_LAYERS)
		[ "$(tr , '\n' <<<"$layers" | wc -l)" -eq "$pp" ]
		[ $(($(tr , + <<<"$layers"))) -eq 32 ]
		# every rank once, on the plan's node, with the plan's tp/pp/dp ranks
		grep '^TASK ' <<<"$LOG" >"$BATS_TEST_TMPDIR/tasks-$n.txt"
		[ "$(wc -l <"$BATS_TEST_TMPDIR/tasks-$n.txt")" -eq $((n * 8)) ]
		run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" ranks \
			"$(batch_var DTPLAN_FILE)" "$BATS_TEST_TMPDIR/tasks-$n.txt"
		[ "$output" = "ranks: $((n * 8)) ok" ]
	done
}

# A pipeline that gains from one leaf: 7B, 64 sequences, on 2 + 2 nodes of
# both leaves where one leaf would hold them, behind the thin uplinks of
# dtplan-site-thin.conf (the plan predicts steps about 1.6x those of the
# best plan on one leaf).
# The site file's uplinks are these tests' premise: the prolog's measurement,
# which would replace them with the shaped network's ratio, is off
# (spool_dir= empty; the nodes' inventories come from node_xml=).
THIN=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-thin.conf
unmeasured_args() {
	printf 'spool_dir='
	[ -z "$CL_NODE_XML" ] || printf ' node_xml=%s' "$CL_NODE_XML"
	echo
}
SPLIT=(-N4 -w node1,node2,node5,node6 --switches=2 --gres=gpu:8 --dt-model=7B --dt-train=gbs=64)

@test "8 nodes on the two leaves they need: no allocation warning, never refused, uplink cost said" {
	# Issue 12: no better allocation exists, so no --switches advice and no
	# refusal, whatever the uplinks cost.
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf policy=deny" \
		>"$PLUGSTACK"
	eight_node_job --dt-plan=strict --dt-model=7B --dt-train=gbs=64
	[ "$JOB_RC" -eq 0 ]
	grep -q '^done$' <<<"$LOG"
	! grep -q 'too-many-leaves\|oversubscribed-uplink\|--switches\|refused' <<<"$LOG"
	grep -q '^  placement    rank order .*uplinks crossed by [a-z]* ([0-9.]*% of the step); 2 leaf switches used, 2 needed$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	no_drain
}

@test "2 + 2 nodes where one leaf would do: the plan warns, names the leaves and asks for --switches=1" {
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf" >"$PLUGSTACK"
	run_job 120 "${SPLIT[@]}" --ntasks-per-node=8 --dt-plan=auto \
		--wrap 'echo "BATCH DTPLAN_PLAN_STATE=${DTPLAN_PLAN_STATE-}"; srun -K true; echo done'
	echo "$LOG"
	grep -q '^done$' <<<"$LOG"
	grep -q '\[too-many-leaves\] the 4 nodes span 2 leaf switches (leaf1 (2 nodes), leaf2 (2 nodes)) where 1 would hold them; the best plan there (TP [0-9]* x PP [0-9]* x DP [0-9]*) is predicted to take .* a step against .* here (TP 1 x PP 2 x DP 16, .* longer, threshold 5%): ask for --switches=1' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	no_drain
}

@test "policy=deny: the 2 + 2 job fails with the reason in its log; no node drains" {
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf policy=deny" \
		>"$PLUGSTACK"
	JOB=$(sbatch --parsable "${SPLIT[@]}" --ntasks-per-node=8 --dt-plan=auto \
		--wrap 'echo ran; srun -K true; echo done')
	run submit_wait "$JOB" 120
	LOG=$(job_log "$JOB")
	echo "$LOG"
	[ "$status" -eq 1 ]
	[ "$(job_state "$JOB")" = FAILED ]
	grep -q '^dtplan: job refused: too-many-leaves: .*ask for --switches=1' <<<"$LOG"
	! grep -q '^ran$' <<<"$LOG"
	no_drain
}

# Best plan against best plan: llama3-8b at 8 sequences a step on 2 + 2 nodes
# behind 16:1 uplinks (tests/data/dtplan-site-16to1.conf).  Its best plan there
# pipelines across the uplinks and is about 1.4x slower than the best plan on
# one leaf, though its own configuration costed again on one leaf would gain
# under the 5% threshold (tests/cli/test_plan_topology.sh).  The warning names
# both plans and both steps, as `dtplan plan` says them for the same nodes,
# and policy=deny refuses the job.
SITE16=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-16to1.conf
SPREAD=(-N4 -w node1,node2,node5,node6 --switches=2 --gres=gpu:8 --dt-model=llama3-8b --dt-train=gbs=8)

# cli_warning CODE: the CODE warning `dtplan plan` gives for the SPREAD job.
cli_warning() {
	local xml="" n
	for n in node1 node2 node5 node6; do
		[ -z "$CL_NODE_XML" ] || xml="$xml${xml:+,}$n=$(node_xml "$n")"
	done
	"$DTPLAN_CLI" plan --model llama3-8b --global-batch 8 --nodes 'node[1-2,5-6]' \
		--topology "$CL_DIR/etc/topology.conf" --site "$SITE16" ${xml:+--node-xml "$xml"} --json |
		/usr/bin/python3 -c 'import json,sys; print(*[w["message"] for w in json.load(sys.stdin)["warnings"] if w["code"] == sys.argv[1]])' "$1"
}

@test "2 + 2 nodes behind 16:1 uplinks: warned with both plans' steps, refused under policy=deny" {
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	want=$(cli_warning too-many-leaves)
	echo "dtplan plan: $want"
	[[ "$want" == *"the best plan there (TP "*") is predicted to take "*" a step against "*" here (TP "*"longer, threshold 5%): ask for --switches=1" ]]
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$SITE16 topology=$CL_DIR/etc/topology.conf" >"$PLUGSTACK"
	run_job 120 "${SPREAD[@]}" --ntasks-per-node=8 --dt-plan=auto \
		--wrap 'echo "BATCH DTPLAN_PLAN_STATE=${DTPLAN_PLAN_STATE-}"; srun -K true; echo done'
	echo "$LOG"
	grep -q '^done$' <<<"$LOG"
	grep -qF "[too-many-leaves] $want" <<<"$LOG"
	grep -qF "[oversubscribed-uplink] $(cli_warning oversubscribed-uplink)" <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	# policy=deny: the job fails before its script runs, the reason in its log
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$SITE16 topology=$CL_DIR/etc/topology.conf policy=deny" \
		>"$PLUGSTACK"
	JOB=$(sbatch --parsable "${SPREAD[@]}" --ntasks-per-node=8 --dt-plan=auto \
		--wrap 'echo ran; srun -K true; echo done')
	run submit_wait "$JOB" 120
	LOG=$(job_log "$JOB")
	echo "$LOG"
	[ "$status" -eq 1 ]
	[ "$(job_state "$JOB")" = FAILED ]
	grep -qF "dtplan: job refused: too-many-leaves: $want" <<<"$LOG"
	! grep -q '^ran$' <<<"$LOG"
	no_drain
}

@test "--dt-plan=strict: the 2 + 2 job fails with the reason in its log; no node drains" {
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf" >"$PLUGSTACK"
	JOB=$(sbatch --parsable "${SPLIT[@]}" --ntasks-per-node=8 --dt-plan=strict \
		--wrap 'echo ran; srun -K true; echo done')
	run submit_wait "$JOB" 120
	LOG=$(job_log "$JOB")
	echo "$LOG"
	[ "$status" -eq 1 ]
	[ "$(job_state "$JOB")" = FAILED ]
	grep -q '^dtplan: job refused: too-many-leaves: ' <<<"$LOG"
	! grep -q '^ran$' <<<"$LOG"
	no_drain
}

@test "a refused plan stops srun on its own and srun under salloc, though the plugin is optional" {
	# An "optional" plugin's failing callbacks are ignored by Slurm: the
	# plugin ends each task itself (task_init), so the step fails.
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf" >"$PLUGSTACK"
	run timeout 120 srun "${SPLIT[@]}" --ntasks-per-node=1 --dt-plan=strict sh -c 'echo ran'
	echo "srun: status $status"
	echo "$output"
	[ "$status" -ne 0 ]
	grep -q 'dtplan: job refused: too-many-leaves: ' <<<"$output"
	! grep -q '^ran$' <<<"$output"
	no_drain
	# salloc: no batch step plans; every srun step recomputes the plan and
	# is refused (salloc's own shell runs on the submit host).
	run timeout 120 salloc "${SPLIT[@]}" --dt-plan=strict \
		srun --ntasks-per-node=1 sh -c 'echo ran'
	echo "salloc: status $status"
	echo "$output"
	[ "$status" -ne 0 ]
	grep -q 'dtplan: job refused: too-many-leaves: ' <<<"$output"
	! grep -q '^ran$' <<<"$output"
	# policy=deny stops them the same way, without --dt-plan=strict
	echo "optional $CL_PLUGIN $(unmeasured_args) site=$THIN topology=$CL_DIR/etc/topology.conf policy=deny" \
		>"$PLUGSTACK"
	run timeout 120 srun "${SPLIT[@]}" --ntasks-per-node=1 --dt-plan=auto sh -c 'echo ran'
	[ "$status" -ne 0 ]
	grep -q 'dtplan: job refused: ' <<<"$output"
	! grep -q '^ran$' <<<"$output"
	no_drain
}

@test "--dt-plan=strict on 4 nodes of one leaf: the job runs" {
	run_job 60 -N4 -w node1,node2,node3,node4 --ntasks-per-node=8 --gres=gpu:8 \
		--dt-plan=strict --dt-model=llama3-70b --wrap 'echo "state=$DTPLAN_PLAN_STATE"; srun -K true'
	echo "$LOG"
	grep -qx 'state=ok' <<<"$LOG"
	! grep -q 'refused' <<<"$LOG"
}

@test "topology/block through topology=: the plan names its blocks and asks for --segment" {
	# The distribution's Slurm 22.05 keeps topology/tree; dtplan reads a
	# block file of its own, named relative to Slurm's configuration folder
	# ($SLURM_CONF's, as on a configless node).
	cat >"$CL_DIR/etc/topology-blocks.conf" <<-'EOF'
		BlockName=rack1 Nodes=node[1-4]
		BlockName=rack2 Nodes=node[5-8]
		BlockSizes=4,8
	EOF
	printf 'SwitchName=rack1,rack2 UplinkBandwidth=5GB/s\n' >"$CL_DIR/etc/dtplan-blocks.conf"
	echo "optional $CL_PLUGIN $(unmeasured_args) site=dtplan-blocks.conf topology=topology-blocks.conf" >"$PLUGSTACK"
	write_job_script
	run_job 120 "${SPLIT[@]}" --ntasks-per-node=8 --dt-plan=auto "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	grep -q '; 2 blocks used, 1 needed$' <<<"$LOG"
	grep -q '^  rank map     block / node / ' <<<"$LOG"
	grep -q '^    rack1 (2 nodes, uplink ' <<<"$LOG"
	grep -q '^    rack2 (2 nodes, uplink ' <<<"$LOG"
	grep -q '\[too-many-leaves\] the 4 nodes span 2 blocks (rack1 (2 nodes), rack2 (2 nodes)) where 1 would hold them.*ask for --segment=4' <<<"$LOG"
	! grep -q -- '--switches' <<<"$LOG"
	file=$(batch_var DTPLAN_FILE)
	run -0 /usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["placement"]; print(p["leaf_kind"], [l["name"] for l in p["leaves"]])' "$file"
	[ "$output" = "block ['rack1', 'rack2']" ]
	# the tasks follow the plan as on a tree
	grep '^TASK ' <<<"$LOG" >"$BATS_TEST_TMPDIR/tasks.txt"
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/plan_check.py" ranks "$file" \
		"$BATS_TEST_TMPDIR/tasks.txt"
	[ "$output" = "ranks: 32 ok" ]
	rm -f "$CL_DIR/etc/topology-blocks.conf" "$CL_DIR/etc/dtplan-blocks.conf"
}

# ----------------------------------------------------------------------
# 6. Jobs that do not ask, and the site default
# ----------------------------------------------------------------------

# env_names: the names of the batch script's and one task's variables,
# without those that differ between any two jobs by value only.
ENV_JOB='env | sed "s/=.*//" | sort | sed "s/^/batch /"; srun -N1 -n1 sh -c "env | sed \"s/=.*//\" | sort | sed \"s/^/task /\""'

@test "a job without --dt-plan gets exactly the environment it gets without the plugin" {
	echo "# no SPANK plugin" >"$PLUGSTACK"
	run_job 30 -N2 --gres=gpu:8 --wrap "$ENV_JOB"
	without=$LOG
	plugstack
	run_job 30 -N2 --gres=gpu:8 --wrap "$ENV_JOB"
	diff <(echo "$without") <(echo "$LOG")
	! grep -Eq ' (DT_[A-Z_]*|DTPLAN_PLAN_STATE|DTPLAN_FILE|MASTER_ADDR|RANK)$' <<<"$LOG"
	! grep -q 'dtplan' <<<"$LOG"
	[ ! -e "$CL_DIR/jobs/dtplan-$JOB.json" ]
}

@test "default=auto: a GPU job that did not ask gets a plan; a CPU job and --dt-plan=off do not" {
	plugstack default=auto
	write_job_script
	run_job 60 -N1 --ntasks-per-node=8 --gres=gpu:8 --dt-model=llama3-8b "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	grep -Eq '^dtplan plan( \(dtplan [^)]*\))?$' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	[ -n "$(batch_var DT_TP)" ]
	[ -f "$(batch_var DTPLAN_FILE)" ]
	[ "$(grep -c '^TASK .* RANK=[0-9]' <<<"$LOG")" -eq 8 ]

	# Without a model there is nothing to size: node order and rendezvous only.
	run_job 60 -N2 --gres=gpu:8 "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = degraded ]
	grep -q -- '--dt-model' <<<"$(batch_var DTPLAN_PLAN_REASON)"
	[ "$(batch_var DT_NNODES)" = 2 ]
	[ -n "$(batch_var MASTER_ADDR)" ]
	[ -z "$(batch_var DT_TP)" ]

	# No GPUs: the site default does not apply.
	run_job 60 -N1 --dt-model=llama3-8b "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ -z "$(batch_var DTPLAN_PLAN_STATE)" ]
	[ -z "$(batch_var DT_TP)" ]
	! grep -q 'dtplan' <<<"$LOG"

	# --dt-plan=off wins over the site default.
	run_job 60 -N1 --gres=gpu:8 --dt-plan=off --dt-model=llama3-8b "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ -z "$(batch_var DTPLAN_PLAN_STATE)" ]
	[ -z "$(batch_var DT_TP)" ]
	! grep -q 'dtplan' <<<"$LOG"
}

# ----------------------------------------------------------------------
# 7. job_submit.lua
# ----------------------------------------------------------------------

@test "job_submit.lua keeps --dt-plan jobs on the fewest leaves topology.conf allows" {
	[ -n "$CL_JOB_SUBMIT_LUA" ] || skip "cluster runs without DTPLAN_JOB_SUBMIT_LUA"
	[ "$CL_NODES_PER_RACK" -eq 4 ] && [ "$CL_RACKS" -ge 2 ] || skip "needs 4-node racks"
	# node3, node4 (leaf1) and node7, node8 (leaf2) free: 4 idle nodes, no leaf with 4.
	b1=$(sbatch --parsable --exclusive -N2 -w node1,node2 --wrap 'sleep 120')
	b2=$(sbatch --parsable --exclusive -N2 -w node5,node6 --wrap 'sleep 120')
	for ((i = 0; i < 50; i++)); do
		[ "$(job_state "$b1")$(job_state "$b2")" = RUNNINGRUNNING ] && break
		sleep 0.1
	done
	[ "$(job_state "$b1")$(job_state "$b2")" = RUNNINGRUNNING ]

	# The lua script gives the job --switches=1: it waits for a whole leaf ...
	sw=$(sbatch --parsable -N4 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-70b --wrap 'srun hostname')
	sleep 2
	scontrol show job "$sw"
	[ "$(job_state "$sw")" = PENDING ]
	[[ $(job_field "$sw" Switches) = 1@* ]]
	grep -q "lua: dtplan: job of uid 0 with --dt-plan on 4 node(s): --switches=1@" \
		"$CL_DIR/log/slurmctld.log"

	# ... and gets leaf2 as soon as node5 and node6 are free.
	scancel "$b2"
	submit_wait "$sw" 60
	[ "$(job_field "$sw" NodeList)" = "node[5-8]" ]

	# A job larger than a leaf gets the fewest leaves that hold it, read
	# from topology.conf beside slurm.conf: two leaves of 4 for 8 nodes.
	scancel "$b1"
	big=$(sbatch --parsable -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-70b --wrap true)
	submit_wait "$big" 60
	[[ $(job_field "$big" Switches) = 2@* ]]
	grep -q "lua: dtplan: job of uid 0 with --dt-plan on 8 node(s): --switches=2@" \
		"$CL_DIR/log/slurmctld.log"
}

# ----------------------------------------------------------------------
# 8. torch.distributed from the plugin's environment
# ----------------------------------------------------------------------

@test "torch: --dt-plan=auto TP=2 PP=2 DP=2 on 4 nodes x 2 GPUs runs torch_launch.py, OK" {
	/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
		skip "Debian's /usr/bin/python3 has no torch with gloo (apt-get install python3-torch)"
	[ "$CL_NODES" -ge 4 ] || skip "needs 4 nodes"
	# No rank is set by hand: RANK, DT_*_RANK, MASTER_* come from the plugin.
	cat >"$CL_DIR/jobs/torch-plan.sh" <<-EOF
		#!/bin/sh
		export GLOO_SOCKET_IFNAME=eth0 DTPLAN_TORCH_TIMEOUT=60 $(torch_store_env)
		exec srun -K sh -c 'if [ -z "\${RANK-}" ] || [ -z "\${DT_TP_RANK-}" ]; then
				echo "task \$SLURM_PROCID: no RANK/DT_TP_RANK from dtplan" >&2; exit 3
			fi
			exec /usr/bin/python3 "\$0"' "$BATS_TEST_DIRNAME/torch_launch.py"
	EOF
	run_job 180 -N4 --ntasks-per-node=2 --gres=gpu:2 --dt-plan=auto --dt-model=llama2-7b \
		--dt-train=tp=2,pp=2 "$CL_DIR/jobs/torch-plan.sh"
	echo "$LOG"
	[ "$(grep -c ' ok$' <<<"$LOG")" -eq 8 ]
	grep -q '^torch_launch: OK world=8 tp=2 pp=2 dp=2 nodes=4 iface=eth0$' <<<"$LOG"
}

# ----------------------------------------------------------------------
# 9. Degraded plans
# ----------------------------------------------------------------------

@test "degraded: unreadable hwloc XML on the batch node; the job starts and the log says why" {
	xml=$(node_xml node1)
	[ -L "$xml" ] || skip "node1's hwloc XML is not a link this test can point elsewhere (run.sh sets that up)"
	readlink "$xml" >"$BATS_TEST_TMPDIR/xml.restore"
	ln -sfn "$CLUSTER_TOP_SRCDIR/tests/data/garbage.xml" "$xml"
	write_job_script
	run_job 60 -N2 -w node1,node2 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto \
		--dt-model=llama3-70b "$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	grep -q '^dtplan: plan degraded: cannot discover node node1: ' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = degraded ]
	grep -q 'cannot discover node node1' <<<"$(batch_var DTPLAN_PLAN_REASON)"
	# What can be known without the inventory is still there, and the steps ran.
	[ "$(batch_var DT_NODE_ORDER)" = node1,node2 ]
	[ "$(batch_var MASTER_ADDR)" = node1 ]
	[ "$(grep -c '^TASK node[12] ' <<<"$LOG")" -eq 16 ]
}

@test "degraded: a missing topology file still plans; the log names the file" {
	plugstack topology=/nonexistent/topology.conf
	write_job_script
	run_job 60 -N1 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		"$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	grep -q '^dtplan: plan degraded: topology /nonexistent/topology.conf: ' <<<"$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = degraded ]
	[ -n "$(batch_var DT_TP)" ]
	[ "$(grep -c '^TASK node[0-9]* RANK=[0-9]' <<<"$LOG")" -eq 8 ]
}

# ----------------------------------------------------------------------
# 9. The fabric service and the plans' collector (FabricURL=, ReportURL=)
# ----------------------------------------------------------------------

# server_start: tests/http_server.py (a fabric service and a collector) on the
# cluster's own network, at the address slurmctld listens on, which every
# node's slurmstepd reaches; sets SRV_DIR (what it serves and records),
# SRV_URL and SRV_CLOSED (a port there where nothing listens).
server_start() {
	local i
	SRV_DIR=$BATS_TEST_TMPDIR/srv
	mkdir -p "$SRV_DIR"
	# fd 3 closed: bats would wait for a background process holding it
	/usr/bin/python3 "$CLUSTER_TOP_SRCDIR/tests/http_server.py" "$SRV_DIR" "$CL_CTLD_ADDR" \
		3>&- >"$BATS_TEST_TMPDIR/srv.log" 2>&1 &
	echo $! >"$BATS_TEST_TMPDIR/srv.pid"
	for ((i = 0; i < 100; i++)); do
		[ -s "$SRV_DIR/port" ] && break
		sleep 0.1
	done
	[ -s "$SRV_DIR/port" ] || { echo "the test server did not start:"; cat "$BATS_TEST_TMPDIR/srv.log"; return 1; }
	SRV_URL=http://$CL_CTLD_ADDR:$(cat "$SRV_DIR/port")
	SRV_CLOSED=$(cat "$SRV_DIR/closed_port")
}

# server_stop: stops the test server of server_start, if any.
server_stop() {
	local pid
	[ -f "$BATS_TEST_TMPDIR/srv.pid" ] || return 0
	read -r pid <"$BATS_TEST_TMPDIR/srv.pid"
	kill "$pid" 2>/dev/null
	rm -f "$BATS_TEST_TMPDIR/srv.pid"
	# 143: ended by the TERM just sent
	wait "$pid" 2>/dev/null || [ $? -eq 143 ]
}

# report_check JOB: the collector received exactly one report, for JOB, that
# agrees with the job's plan file (python3 prints what differs).
report_check() {
	[ -f "$SRV_DIR/reports.jsonl" ] || { echo "the collector received nothing"; return 1; }
	run /usr/bin/python3 - "$SRV_DIR/reports.jsonl" "$CL_DIR/jobs/dtplan-$1.json" "$1" \
		"$(job_field "$1" NodeList)" "$(job_field "$1" BatchHost)" <<-'EOF'
		import json, sys
		lines = open(sys.argv[1]).read().splitlines()
		assert len(lines) == 1, "%d reports: %r" % (len(lines), lines)
		r = json.loads(lines[0])
		plan = json.load(open(sys.argv[2]))
		want = {"schema": "dtplan.report/1", "sender": "plugin", "job_id": int(sys.argv[3]),
		        "user": "root", "uid": 0, "nodes": sys.argv[4], "host": sys.argv[5],
		        "state": "ok", "reason": None}
		for k, v in want.items():
		    assert r[k] == v, "%s is %r, expected %r" % (k, r[k], v)
		assert r["plan"] == plan, "the report's plan differs from the plan file"
		assert r["warnings"] == plan["warnings"], "warnings differ"
		assert r["time"].endswith("Z") and r["cluster"], (r["time"], r["cluster"])
		print("report of job %s: %s, %d warnings" % (r["job_id"], r["state"], len(r["warnings"])))
	EOF
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "report: a --dt-plan=auto job posts one report to a collector on the cluster's network" {
	server_start
	plugstack "report_url=$SRV_URL/collect"
	write_job_script
	run_job 120 -N4 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-70b \
		"$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	[ "$(batch_var DTPLAN_FILE)" = "$CL_DIR/jobs/dtplan-$JOB.json" ]
	report_check "$JOB"
	# srun steps read the plan file back: they report nothing of their own
	[ "$(grep -c '^POST /collect' "$SRV_DIR/requests.log")" -eq 1 ]
}

@test "report: a collector that fails, hangs or is not there never fails the job; slurmd logs it" {
	server_start
	for url in "$SRV_URL/collect/status/500" "$SRV_URL/collect/slow?delay=30" \
		"http://$CL_CTLD_ADDR:$SRV_CLOSED/collect"; do
		plugstack "report_url=$url" report_timeout=1s
		write_job_script
		run_job 60 -N1 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
			"$CL_DIR/jobs/plan-job.sh"
		echo "== $url: job $JOB"
		[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
		[ "$(grep -c '^TASK node[0-9]* RANK=[0-9]' <<<"$LOG")" -eq 8 ]
		host=$(job_field "$JOB" BatchHost)
		grep "dtplan: report: cannot post the plan of job $JOB: " "$CL_DIR/log/slurmd-$host.log"
	done
	[ ! -s "$SRV_DIR/reports.jsonl" ]
}

@test "fabric: the tree from a service on the cluster's network, then its cache when it is gone" {
	server_start
	"$DTPLAN_CLI" fabric export --topology "$CL_DIR/etc/topology.conf" --site "$SITE" \
		>"$SRV_DIR/fabric.json"
	cache=$CL_DIR/fabric.cache
	rm -f "$cache"
	# No topology file: only the service can name leaf1 and leaf2 and their 4:1 uplinks.
	plugstack "fabric_url=$SRV_URL/files/fabric.json" "fabric_cache=$cache" \
		fabric_cache_ttl=0 topology=/nonexistent/topology.conf
	eight_node_job --dt-plan=auto --dt-model=llama3-70b
	[ "$JOB_RC" -eq 0 ]
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	# the rank map names the service's leaves and their 4:1 uplinks (the job
	# is on the two leaves it needs: no allocation warning)
	grep -q '^    leaf1 (4 nodes, uplink 4.0:1):$' <<<"$LOG"
	grep -q '^    leaf2 (4 nodes, uplink 4.0:1):$' <<<"$LOG"
	[ -z "$(grep 'fabric-service' <<<"$LOG")" ]
	# asked once, by the batch step (as root, before the job's user takes over)
	[ "$(grep -c '^GET /files/fabric.json' "$SRV_DIR/requests.log")" -eq 1 ]
	head -n 1 "$cache" | grep -q "^dtplan-fabric-cache/2 [0-9]* dtplan.fabric/1 $SRV_URL/files/fabric.json\$"
	[ "$(stat -c %u "$cache")" -eq 0 ]

	# The service gone: the same plan from the cache, and the plan says so.
	server_stop
	eight_node_job --dt-plan=auto --dt-model=llama3-70b
	[ "$JOB_RC" -eq 0 ]
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	grep -q "\[fabric-service\] fabric service $SRV_URL/files/fabric.json: .*; using its answer cached in $cache " <<<"$LOG"
	grep -q '^    leaf1 (4 nodes, uplink 4.0:1):$' <<<"$LOG"
	grep -q '^    leaf2 (4 nodes, uplink 4.0:1):$' <<<"$LOG"
	rm -f "$cache"
}

# big_fabric_job: an 8-node planned job whose script prints when it started
# and its batch step's peak memory (slurmstepd's VmHWM); sets JOB, LOG,
# DELAY_MS (sbatch to the script's first line) and HWM_KB.
big_fabric_job() {
	local t0 start
	t0=$(($(date +%s%N) / 1000000))
	JOB=$(sbatch --parsable -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		--wrap 'echo "START $(($(date +%s%N) / 1000000))"
			p=$PPID
			while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != slurmstepd ]; do
				p=$(awk "{print \$4}" /proc/$p/stat)
			done
			echo "HWM $(awk "/^VmHWM:/ {print \$2}" /proc/$p/status) $(cat /proc/$p/comm)"
			echo "BATCH DTPLAN_PLAN_STATE=${DTPLAN_PLAN_STATE-}"') || return 1
	JOB=${JOB%%;*}
	submit_wait "$JOB" 120 || { job_log "$JOB"; return 1; }
	LOG=$(job_log "$JOB")
	start=$(sed -n 's/^START //p' <<<"$LOG")
	DELAY_MS=$((start - t0))
	HWM_KB=$(sed -n 's/^HWM \([0-9]*\) slurmstepd$/\1/p' <<<"$LOG")
	[ -n "$HWM_KB" ] || { grep '^HWM' <<<"$LOG"; return 1; }
}

@test "fabric: 200,000 switches from the service, and the 1.8 KB answer naming c[1-1000000]: the job starts under 100 MB, the delay said" {
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	server_start
	# the cluster's two leaves and their spine, then 199,997 leaves more
	/usr/bin/python3 - "$SRV_DIR/big.json" "$SRV_DIR/hostile.json" <<-'EOF'
		import json, sys
		sw = [{"name": "spine"},
		      {"name": "leaf1", "nodes": "node[1-4]", "parent": "spine", "oversubscription": 4},
		      {"name": "leaf2", "nodes": "node[5-8]", "parent": "spine", "oversubscription": 4}]
		sw += [{"name": "l%d" % i, "nodes": "x%d" % i, "parent": "spine"} for i in range(199997)]
		json.dump({"schema": "dtplan.fabric/1", "switches": sw}, open(sys.argv[1], "w"))
		sw = [{"name": "leaf1", "nodes": "node[1-8]"}]
		sw += [{"name": "s%d" % i, "switches": "c[1-1000000]"} for i in range(30)]
		json.dump({"schema": "dtplan.fabric/1", "switches": sw}, open(sys.argv[2], "w"))
	EOF
	# the same job without a service: what the rest of job start takes
	plugstack
	big_fabric_job
	base=$DELAY_MS base_hwm=$HWM_KB
	echo "# topology.conf: started $base ms after sbatch, batch step peak $base_hwm kB" >&3
	plugstack "fabric_url=$SRV_URL/files/big.json" fabric_cache_ttl=0 http_max_size=64MB \
		fabric_timeout=60s topology=/nonexistent/topology.conf
	big_fabric_job
	echo "# 200,000 switches ($(stat -c %s "$SRV_DIR/big.json") bytes): started $DELAY_MS ms after sbatch, batch step peak $HWM_KB kB" >&3
	grep -q '^BATCH DTPLAN_PLAN_STATE=ok$' <<<"$LOG"
	grep -q '^    leaf1 (4 nodes, uplink 4.0:1):$' <<<"$LOG"
	[ -z "$(grep 'fabric-service' <<<"$LOG")" ]
	# the batch step reads the answer for the job's nodes: the whole
	# answer's text and its checks, but a tree of three switches; under
	# 100 MB with the answer (226 MB when the whole tree was built; its
	# time is bench_parse's row, the machine may be shared)
	[ "$HWM_KB" -lt 100000 ]
	plugstack "fabric_url=$SRV_URL/files/hostile.json" fabric_cache_ttl=0
	big_fabric_job
	echo "# hostile answer ($(stat -c %s "$SRV_DIR/hostile.json") bytes): started $DELAY_MS ms after sbatch, batch step peak $HWM_KB kB" >&3
	grep -q "the answer's lists name more than its 31 switches" <<<"$LOG"
	grep -q '^BATCH DTPLAN_PLAN_STATE=ok$' <<<"$LOG"
	# a refused answer costs no memory worth naming
	[ "$HWM_KB" -lt $((base_hwm + 100000)) ]
	no_drain
}

@test "fabric: a service that is not there falls back on topology.conf; the plan says so" {
	server_start
	plugstack "fabric_url=http://$CL_CTLD_ADDR:$SRV_CLOSED/fabric" fabric_timeout=1s
	write_job_script
	run_job 60 -N1 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		"$CL_DIR/jobs/plan-job.sh"
	echo "$LOG"
	[ "$(batch_var DTPLAN_PLAN_STATE)" = ok ]
	grep -q "\[fabric-service\] fabric service http://$CL_CTLD_ADDR:$SRV_CLOSED/fabric: .*; no cache (FabricCache= is not set); using topology.conf $CL_DIR/etc/topology.conf" <<<"$LOG"
	[ "$(grep -c '^TASK node[0-9]* RANK=[0-9]' <<<"$LOG")" -eq 8 ]
}
