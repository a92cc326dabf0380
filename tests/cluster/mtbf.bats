#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/mtbf.bats: dtplan mtbf on the test cluster's own accounting
# (slurmdbd on MariaDB) counts exactly the node failures that were caused.
#
# Two nodes fail during running jobs: every process in their namespaces is
# killed (slurmd, slurmstepd, the job), so slurmctld gets no answer, sets
# them DOWN after SlurmdTimeout and ends their jobs NODE_FAIL.  A third node
# runs a job that completes and is then drained by the admin (not a
# failure).  Over a window around all of it, the MTBF per GPU of those
# three nodes is the window's GPU-hours (seconds / 3600 x nodes x GPUs per
# node) over the failures counted, the point estimate of cli/cmd_mtbf.c
# (lib/record/mtbf.c).
#
# dtplan mtbf is asked only about the nodes the tests act on: on a loaded
# machine slurmctld may mark any other node "Not responding" for a while
# (SlurmdTimeout is short here), which is a real node-down event that the
# tests did not cause.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

CLI=$CLUSTER_TOP_BUILDDIR/cli/dtplan
# slurmctld sets a silent node DOWN once SlurmdTimeout has passed since it
# last answered; cluster.sh's 60 s is lowered for this file only.
TIMEOUT_S=10

setup_file() {
	cluster_is_up || return 1
	[ "$CL_ACCOUNTING" = 1 ] || skip "the cluster runs without accounting (DTPLAN_CLUSTER_ACCOUNTING=0)"
	cp "$CL_CONF" "$BATS_FILE_TMPDIR/slurm.conf.orig"
}

teardown_file() {
	restore_timeout
}

# short_timeout: SlurmdTimeout=$TIMEOUT_S until restore_timeout.
short_timeout() {
	sed -i "s/^SlurmdTimeout=.*/SlurmdTimeout=$TIMEOUT_S/" "$CL_CONF"
	reconfigure
	scontrol show config | grep -q "^SlurmdTimeout *= $TIMEOUT_S sec"
}

restore_timeout() {
	[ -f "$BATS_FILE_TMPDIR/slurm.conf.orig" ] || return 0
	cmp -s "$BATS_FILE_TMPDIR/slurm.conf.orig" "$CL_CONF" && return 0
	cp "$BATS_FILE_TMPDIR/slurm.conf.orig" "$CL_CONF"
	reconfigure
}

setup() {
	cd "$CL_DIR/jobs" || return 1
}

teardown() {
	local node
	# a node a failed test left dead comes back
	for node in node3 node6; do
		[ -n "$(ip netns pids "$(node_netns "$node")" 2>/dev/null)" ] ||
			"$BATS_TEST_DIRNAME/cluster.sh" slurmd "$node"
	done
	scontrol update nodename=node7 state=resume 2>/dev/null
	scontrol update nodename=node5 state=resume 2>/dev/null
	cancel_all_wait 30
}

# wait_for SECONDS CMD...: polls CMD every 0.5 s until it succeeds.
wait_for() {
	local n=$(($1 * 2)) i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.5
	done
	echo "wait_for: '$*' not true after $((n / 2)) s" >&2
	return 1
}

# running_on NODE: a job's process (sleep) runs in NODE's namespace.
running_on() {
	local p
	for p in $(ip netns pids "$(node_netns "$1")"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] && return 0
	done
	return 1
}

# fail_node NODE: kills every process of NODE (a node that lost power).
fail_node() {
	local pids
	pids=$(ip netns pids "$(node_netns "$1")")
	[ -n "$pids" ]
	# shellcheck disable=SC2086
	kill -KILL $pids
}

state_is() { [ "$(node_state "$1")" = "$2" ]; }
job_is() {
	local s
	s=$(job_state "$1")
	[ "$s" = "$2" ] || { echo "job $1: $s" >&2; false; }
}
# in_accounting N: sacctmgr has N node events since T0 (slurmdbd's lag).
events_in() {
	[ "$(sacctmgr -P -n show event event=node start="$T0" format=NodeName | wc -l)" -ge "$1" ]
}
fail_jobs_in() {
	[ "$(sacct -P -n -X -a --state=NODE_FAIL -S "$T0" -E now --format=JobIDRaw | wc -l)" -ge "$1" ]
}

@test "dtplan mtbf counts the node failures that were caused, and the MTBF follows" {
	local a b c t0 t1 gpu_hours nodes=node[3,6-7] n=3
	short_timeout
	# the window opens after every earlier test's events
	sleep 1
	t0=$(date +%s)
	T0=$(date -d "@$t0" +%Y-%m-%dT%H:%M:%S)
	sleep 1

	a=$(sbatch --parsable --no-requeue -N1 -w node3 -o /dev/null --wrap 'sleep 600')
	b=$(sbatch --parsable --no-requeue -N1 -w node6 -o /dev/null --wrap 'sleep 600')
	c=$(sbatch --parsable -N1 -w node7 -o /dev/null --wrap 'sleep 1')
	wait_for 30 running_on node3
	wait_for 30 running_on node6
	wait_for 30 job_is "$c" COMPLETED
	fail_node node3
	fail_node node6
	scontrol update nodename=node7 state=drain reason=maintenance

	# (a batch job on a failed node is requeued unless told not to: it
	# then ends NODE_FAIL)
	# DOWN after SlurmdTimeout (and a ping interval), the jobs with them
	wait_for $((TIMEOUT_S * 4)) state_is node3 down
	wait_for $((TIMEOUT_S * 4)) state_is node6 down
	wait_for 20 job_is "$a" NODE_FAIL
	wait_for 20 job_is "$b" NODE_FAIL
	run -0 sinfo -h -N -n node3 -o %E
	[ "$output" = "Not responding" ]

	# back: slurmd again (ReturnToService=2 takes a DOWN node back once it
	# registers), resume for the drained one
	"$BATS_TEST_DIRNAME/cluster.sh" slurmd node3
	"$BATS_TEST_DIRNAME/cluster.sh" slurmd node6
	scontrol update nodename=node7 state=resume
	wait_for 30 state_is node3 idle
	wait_for 30 state_is node6 idle
	wait_for 10 state_is node7 idle

	wait_for 20 events_in 3
	wait_for 20 fail_jobs_in 2
	sleep 1
	t1=$(date +%s)
	restore_timeout

	run -0 "$CLI" mtbf --nodes "$nodes" --gpus-per-node "$CL_GPUS" \
		--start "$T0" --end "$(date -d "@$t1" +%Y-%m-%dT%H:%M:%S)" --json
	echo "$output"
	# exactly the two caused (the drain is the admin's), from Slurm itself
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); \
ev = sorted((e["node"], e["state"]) for e in j["events"] if e["state"].startswith("DOWN")); \
assert j["source"] == "slurm accounting", j["source"]; \
assert (j["failures"], j["node_fail_jobs"]) == (2, 2), (j["failures"], j["node_fail_jobs"]); \
assert [n for n, _ in ev] == ["node3", "node6"], ev; \
assert sorted(x["job_id"] for x in j["jobs"]) == sorted([int(sys.argv[2]), int(sys.argv[3])]), j["jobs"]' \
		"$output" "$a" "$b"
	# the exposure and the MTBF from the window and the count
	gpu_hours=$(python3 -c "print(($t1 - $t0) / 3600 * $n * $CL_GPUS)")
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); g = float(sys.argv[2]); \
assert abs(j["gpu_hours"] - g) < 1e-9 * g, (j["gpu_hours"], g); \
assert abs(j["mtbf_gpu_hours"] - g / 2) < 1e-9 * g, (j["mtbf_gpu_hours"], g / 2); \
assert j["lower_gpu_hours"] < j["mtbf_gpu_hours"] < j["upper_gpu_hours"]' "$output" "$gpu_hours"

	# the text says the same
	run -0 "$CLI" mtbf --nodes "$nodes" --gpus-per-node "$CL_GPUS" \
		--start "$T0" --end "$(date -d "@$t1" +%Y-%m-%dT%H:%M:%S)"
	echo "$output"
	grep -qF "failures      2 node-down events; 2 jobs ended NODE_FAIL" <<<"$output"
	grep -qF "MTBF per GPU  $(python3 -c "print('%.1f' % ($gpu_hours / 2))") GPU-hours" <<<"$output"
}

# sacctmgr -P does not escape a '|' in a reason (issue 32): an admin's DOWN
# of node5 with one is read whole, the MTBF cache is refreshed, and only the
# nodes asked count (for node[1-4] slurmdbd is asked for their events only,
# so node5's is not read at all; a line of another node that does come back
# is counted as other_nodes, tests/test_mtbf.c).
@test "a reason with '|' is read whole and the cache refreshed; only the nodes asked count" {
	local t0 t1 T1 cache=$BATS_TEST_TMPDIR/mtbf.json
	sleep 1
	t0=$(date +%s)
	T0=$(date -d "@$t0" +%Y-%m-%dT%H:%M:%S)
	sleep 1
	scontrol update nodename=node5 state=down reason='xid 79|gpu fell off the bus|reset'
	wait_for 10 state_is node5 down
	scontrol update nodename=node5 state=resume
	wait_for 30 state_is node5 idle
	wait_for 20 events_in 1
	sleep 1
	t1=$(date +%s)
	T1=$(date -d "@$t1" +%Y-%m-%dT%H:%M:%S)
	echo '{"schema": "stale"}' >"$cache"

	run -0 "$CLI" mtbf --nodes node5 --gpus-per-node "$CL_GPUS" --start "$T0" --end "$T1" \
		--json --write-cache "$cache"
	echo "$output"
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); \
assert (j["failures"], j["other_nodes"], j["repeated"]) == (1, 0, 0), j; \
assert [e["reason"] for e in j["events"]] == ["xid 79|gpu fell off the bus|reset"], j["events"]' "$output"
	python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); \
assert c["schema"] != "stale" and c["failures"] == 1 and c["nodes"] == 1, c' "$cache"

	run -0 "$CLI" mtbf --nodes "node[1-4]" --gpus-per-node "$CL_GPUS" --start "$T0" --end "$T1" --json
	echo "$output"
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); \
assert (j["failures"], j["events"]) == (0, []), j' "$output"
}
