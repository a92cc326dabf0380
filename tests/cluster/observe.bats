#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
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
	megatron_step_script "$BATS_TEST_TMPDIR/job.sh" "$ratio"
	# shellcheck disable=SC2086
	JOB=$(env "$@" sbatch --parsable -N1 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		${SLOW_JOB_ARGS:-} "$BATS_TEST_TMPDIR/job.sh")
	JOB=${JOB%%;*}
	submit_wait "$JOB" 60
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

# hostile_job ACTION: a job that prints 30 Megatron-LM lines at its plan's
# model step (the first 3x, warm-up), then runs ACTION (bash, $OUT its own
# output file, as /proc/self/fd/1 names it and the plugin recorded it);
# JOB its id once the epilog is done.
hostile_job() {
	cat >"$BATS_TEST_TMPDIR/job.sh" <<EOF_JOB
#!/bin/bash
OUT=\$(readlink /proc/\$\$/fd/1)
t=\$(/usr/bin/python3 -c 'import json, os; print(json.load(open(os.environ["DTPLAN_FILE"]))["prediction"]["model_step_seconds"])')
for it in \$(seq 1 30); do
	ms=\$(/usr/bin/python3 -c "print(\$t * 1000.0 * (3.0 if \$it == 1 else 1.0))")
	echo " iteration \$it/300 | elapsed time per iteration (ms): \$ms | global batch size:  1024 |"
done
$1
EOF_JOB
	JOB=$(sbatch --parsable -N1 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		"$BATS_TEST_TMPDIR/job.sh")
	JOB=${JOB%%;*}
	submit_wait "$JOB" 60
	epilog_done
}

# The epilog meets what a job can make of its own output (issue 32): each
# job's record is written, or refused with the reason in the slurmd log,
# within ObserveBudget (ReportTimeout= 2 s + 1 s: never "observing took
# more than"), and the node stays up.
@test "hostile job outputs: a record or a reason in the log, within the budget; the node stays up" {
	local out=$CL_DIR/jobs
	# the output replaced by a FIFO (no reader: the read must not wait)
	hostile_job 'rm -f "$OUT"; mkfifo "$OUT"'
	J_FIFO=$JOB
	# the output replaced by a link to root's secrets
	hostile_job 'rm -f "$OUT"; ln -s /etc/shadow "$OUT"'
	J_LINK=$JOB
	# a 1 TB sparse output: its last 16 MiB are NUL bytes
	hostile_job 'truncate -s 1T "$OUT" || truncate -s 100G "$OUT"'
	J_SPARSE=$JOB
	# a NUL byte among the step lines
	hostile_job 'printf "iteration 31/300 | elapsed time per iteration (ms): 1\0 |\n"'
	J_NUL=$JOB
	# crafted step lines: absurd figures (1e-303 s, a denormal, 1e297 s)
	# among sane ones: refused and counted, the record from the sane ones
	hostile_job 'for v in 1e-300 4.9e-324 1e300 nan -5; do echo " iteration 31/300 | elapsed time per iteration (ms): $v |"; done'
	J_ABSURD=$JOB
	# 20 MiB of the shortest step lines (524,288 of 40 bytes, five times the
	# window): the window is a ring, the record within the budget
	hostile_job 'yes "elapsed time per iteration (ms): 1234.5" | head -c 20971520'
	J_SHORT=$JOB
	LOGS=$(slurmd_log)
	grep "epilog: job" <<<"$LOGS" | tail -20
	run ! grep -E "epilog: job ($J_FIFO|$J_LINK|$J_SPARSE|$J_NUL|$J_ABSURD|$J_SHORT): observing took more than" <<<"$LOGS"
	grep -q "job $J_FIFO: not read: $out/slurm-$J_FIFO.out: refused: a FIFO, not a regular file" <<<"$LOGS"
	grep -q "job $J_LINK: not read: $out/slurm-$J_LINK.out: refused: a symbolic link, never followed" <<<"$LOGS"
	grep -q "job $J_SPARSE: not read: $out/slurm-$J_SPARSE.out: refused: binary data" <<<"$LOGS"
	grep -q "job $J_NUL: not read: $out/slurm-$J_NUL.out: refused: binary data" <<<"$LOGS"
	for j in $J_FIFO $J_LINK $J_SPARSE $J_NUL; do
		grep -q "job $j: no record: no step times observed" <<<"$LOGS"
	done
	grep -qE "job $J_ABSURD: 5 observations refused, the first at line [0-9]+: a step line's time 1e-303 s outside the physical range \[0.0001, 86400\] s" <<<"$LOGS"
	# 30 sane lines, the first 3 (ceil of a tenth of 30.000000000000004) warm-up
	grep -qE "job $J_ABSURD: planned .* from 27 steps \(megatron\)" <<<"$LOGS"
	grep -qE "job $J_SHORT: planned .*, measured 1.23 s .* from 90000 steps \(megatron\)" <<<"$LOGS"
	# two records: the absurd lines' job (its sane lines) and the short lines'
	run -0 records
	[ "$(/usr/bin/python3 -c 'import json, sys; print(sorted(r["job_id"] for r in json.load(sys.stdin)))' <<<"$output")" = "[$J_ABSURD, $J_SHORT]" ]
	# the link's target untouched
	[ ! -L /etc/shadow ] && [ -f /etc/shadow ]
	for n in $(job_nodes "$J_SHORT"); do [ "$(node_state "$n")" = idle ]; done
	[ "$(nodes_in_state drained)" -eq 0 ]
	no_drain
	rm -f "$out/slurm-$J_FIFO.out" "$out/slurm-$J_LINK.out" "$out/slurm-$J_SPARSE.out" \
		"$out/slurm-$J_SHORT.out"
}
