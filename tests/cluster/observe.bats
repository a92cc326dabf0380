#!/usr/bin/env bats
# tests/cluster/observe.bats: a job's measured step time becomes its record
# in the epilog (plugin/observe.c), and later plans learn from the records.
#
# The jobs print Megatron-LM's training_log() lines
# (megatron/training/training.py, NVIDIA/Megatron-LM
# d98e8a64ddf34856e74b24714e3bedb2f5a39553) 30% slower than their plan
# predicted; after two of them, a third plan of that shape predicts within 5%
# of the measured step and says why.  Hostile observation files are refused
# with a reason in the slurmd log, and the job and node are unaffected.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

PLUGSTACK=$CL_DIR/etc/plugstack.conf
CLI=$CLUSTER_TOP_BUILDDIR/cli/dtplan

setup_file() {
	plugstack_save
}

teardown_file() {
	plugstack_restore
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	cd "$CL_DIR/jobs" || return 1
	DB=$BATS_TEST_TMPDIR/records.db
	echo "optional $CL_PLUGIN topology=$CL_DIR/etc/topology.conf $(cluster_probe_args)" \
		"record_db=$DB" >"$PLUGSTACK"
}

teardown() {
	cancel_all_wait 60
	plugstack_restore
}

# slow_job RATIO [ENV...]: a job whose Megatron lines show RATIO x the model's
# step in its plan; JOB its id once it completed.
slow_job() {
	local ratio=$1
	shift
	cat >"$BATS_TEST_TMPDIR/job.sh" <<EOF_JOB
#!/bin/bash
t=\$(/usr/bin/python3 -c 'import json, os; print(json.load(open(os.environ["DTPLAN_FILE"]))["prediction"]["model_step_seconds"])')
/usr/bin/python3 - "\$t" <<'EOF_PY'
import sys
t = float(sys.argv[1]) * $ratio
for it in range(1, 31):
    ms = t * 1000.0 * (3.0 if it == 1 else 1.0)
    print(" [2026-12-01 10:00:%02d.000000] iteration %8d/%8d | consumed samples: %12d |"
          " elapsed time per iteration (ms): %.1f | learning rate: 3.000000E-04 |"
          " global batch size:  1024 |" % (it % 60, it * 10, 300, it * 10240, ms))
EOF_PY
EOF_JOB
	# shellcheck disable=SC2086
	JOB=$(env "$@" sbatch --parsable -N1 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		${SLOW_JOB_ARGS:-} "$BATS_TEST_TMPDIR/job.sh")
	JOB=${JOB%%;*}
	submit_wait "$JOB" 60
}

# epilog_done: waits until the epilog removed the job's ticket.
epilog_done() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -e "$CL_DIR/spool-dtplan/$JOB.observe" ] || [ "$(job_state "$JOB")" != COMPLETED ] ||
			{ sleep 0.3; return 0; }
		sleep 0.1
	done
	return 1
}

records() { "$CLI" history --records "$DB" --json; }
slurmd_log() { cat "$CL_DIR"/log/slurmd-node*.log; }

@test "two jobs 30% slower than planned: a third plan of that shape predicts within 5%, and says why" {
	slow_job 1.3
	epilog_done
	# the epilog's line, in the job's output: 30% above the plan
	LOG=$(job_log "$JOB")
	echo "$LOG" | tail -3
	slurmd_log | grep "epilog: job" | tail -4
	grep -E '^dtplan: planned [0-9ms .]+, measured [0-9ms .]+ \(\+30%\)$' <<<"$LOG"
	slow_job 1.3
	epilog_done
	run -0 records
	echo "$output"
	[ "$(/usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(len(j), [round(r["measured_step_s"] / r["model_step_s"], 3) for r in j])' <<<"$output")" = "2 [1.3, 1.3]" ]
	measured=$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[-1]["measured_step_s"])' <<<"$output")
	slow_job 1.0
	LOG=$(job_log "$JOB")
	grep -q "learned from 2 runs on this cluster" <<<"$LOG"
	predicted=$(/usr/bin/python3 -c 'import json; print(json.load(open("'"$CL_DIR/jobs/dtplan-$JOB.json"'"))["prediction"]["step_seconds"])')
	/usr/bin/python3 -c "import sys; sys.exit(0 if abs($predicted / $measured - 1) < 0.05 else 1)"
	# the same shape: one fingerprint
	epilog_done
	run -0 records
	[ "$(/usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(len(set(r["fingerprint"] for r in j)), len(j))' <<<"$output")" = "1 3" ]
	# a job that asks for the model alone (--dt-train calibration=off): the
	# records are there, its plan is the model's
	SLOW_JOB_ARGS=--dt-train=calibration=off slow_job 1.0
	LOG=$(job_log "$JOB")
	! grep -q "learned from" <<<"$LOG"
	/usr/bin/python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["prediction"]; sys.exit(0 if p.get("calibration") is None and p["step_seconds"] == p["model_step_seconds"] else 1)' \
		"$CL_DIR/jobs/dtplan-$JOB.json"
}

@test "hostile observation files are refused with a reason; the job and the node are unaffected" {
	T=$BATS_TEST_TMPDIR
	mkfifo "$T/fifo"
	ln -s /etc/shadow "$T/link"
	truncate -s 2G "$T/big"
	yes 1 | head -n 1000000 >"$T/lines"
	head -c 65536 /dev/urandom >"$T/garbage"
	printf '{"step":1,"step_seconds":NaN}\n{"step":2,"step_seconds":-5}\n' >"$T/nan"
	for f in fifo link big lines garbage nan; do
		slow_job 1.0 DTPLAN_OBSERVE="$T/$f"
		epilog_done
		[ "$(node_state "$(job_nodes "$JOB")")" = idle ]
	done
	LOGS=$(slurmd_log)
	grep -q "$T/fifo: refused: a FIFO, not a regular file" <<<"$LOGS"
	grep -q "$T/link: refused: a symbolic link, never followed" <<<"$LOGS"
	grep -q "$T/big: refused: 2147483648 bytes" <<<"$LOGS"
	grep -q "refused: 1000000 lines, more than 100000" <<<"$LOGS"
	grep -q "$T/garbage: refused: binary data" <<<"$LOGS"
	grep -q "2 observations refused, the first at line 1: not a JSON object" <<<"$LOGS"
	# each fell back on the job's output: six records
	run -0 records
	[ "$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' <<<"$output")" = 6 ]
	[ "$(nodes_in_state drained)" -eq 0 ]
}

@test "another user's record database is refused with a reason; the job is unaffected" {
	slow_job 1.0
	epilog_done
	chown 65534:65534 "$DB"
	slow_job 1.0
	epilog_done
	grep -q "record not stored: $DB: refused: owned by uid 65534" <<<"$(slurmd_log)"
	grep -q "records not used: $DB: refused: owned by uid 65534" <<<"$(job_log "$JOB")"
	[ "$(nodes_in_state drained)" -eq 0 ]
}
