#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/measure.bats: the prolog measures the allocation (issue 8,
# doc/internals/probe.md) on the test cluster: every node's own hwloc XML,
# link tiers against the tbf shaping, a cross-leaf delay, a straggler, a node
# killed mid-probe or cut off, forged messages at the leader's port, a user
# holding the probe's ports before the job (issue 26), munged unreachable,
# a full spool and one that does not exist, and the epilog removing the
# measurement.
#
# Needs a cluster brought up by cluster.sh with DTPLAN_PLUGIN set (run.sh
# does that) and a link per node for its hwloc XML (run.sh's xml/nodeI.xml).
# Each test puts back what it changed (XML links, shaping, iptables rules,
# the delay program) in teardown.

bats_require_minimum_version 1.5.0

. "$BATS_TEST_DIRNAME/lib.sh"
eval "$("$BATS_TEST_DIRNAME/cluster.sh" env 2>/dev/null)"
cluster_config

SITE=$CLUSTER_TOP_SRCDIR/tests/data/dtplan-site-4to1.conf
PLUGSTACK=$CL_DIR/etc/plugstack.conf
FORGE=$CLUSTER_TOP_BUILDDIR/tests/probe_forge
BUDGET=5
# what a job that waited the whole budget may take beyond it and beyond
# Slurm's own start (plain_delay, one sample): the prologs' work after the
# wait and their completion messages.  A trixie run took 1,147 ms on a
# loaded machine; a prolog that waited the budget twice would be 5,000 over.
SLACK_MS=2000
MB=1000000

setup_file() {
	plugstack_save
	# The user-space delay of ../shared/TESTBED.md (no netem in this kernel).
	if [ -f /usr/include/libnetfilter_queue/libnetfilter_queue.h ]; then
		cc -O2 -o "$BATS_FILE_TMPDIR/nfq_delay" "$BATS_TEST_DIRNAME/nfq_delay.c" \
			-lnetfilter_queue 2>/dev/null || true
	fi
}

teardown_file() {
	plugstack_restore
}

setup() {
	[ -n "$CL_PLUGIN" ] || skip "cluster runs without the plugin (DTPLAN_PLUGIN)"
	[ "$CL_NODES" -eq 8 ] && [ "$CL_RACKS" -eq 2 ] || skip "needs two racks of four nodes"
	cd "$CL_DIR/jobs" || return 1
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(cluster_probe_args) probe_budget=${BUDGET}s" >"$PLUGSTACK"
}

teardown() {
	local f node x
	# hwloc XML links
	for f in "$BATS_TEST_TMPDIR"/xml.*; do
		[ -f "$f" ] || continue
		node=${f##*/xml.}
		read -r x <"$f"
		ln -sfn "$x" "$(node_xml "$node")"
	done
	# shaping
	if [ -f "$BATS_TEST_TMPDIR/shaped" ]; then
		read -r node <"$BATS_TEST_TMPDIR/shaped"
		shape_node "$node" "$CL_RACK_RATE"
	fi
	# iptables: the delay's queue rule, a node cut off
	while nfq_rule -D FORWARD 2>/dev/null; do :; done
	if [ -f "$BATS_TEST_TMPDIR/cut" ]; then
		read -r node <"$BATS_TEST_TMPDIR/cut"
		in_node "$node" iptables -D INPUT -p tcp --dport "${CL_PROBE_PORTS/-/:}" -j DROP
		in_node "$node" iptables -D OUTPUT -p tcp --dport "${CL_PROBE_PORTS/-/:}" -j DROP
	fi
	if [ -f "$BATS_TEST_TMPDIR/holder.pid" ]; then
		holder_done >/dev/null
	fi
	if [ -f "$BATS_TEST_TMPDIR/nfq.pid" ]; then
		nfq_stop 2>/dev/null
	fi
	if [ -f "$BATS_TEST_TMPDIR/hosts.orig" ]; then
		cat "$BATS_TEST_TMPDIR/hosts.orig" >"$CL_DIR/etc/hosts"
	fi
	cancel_all_wait 60
	if [ -f "$BATS_TEST_TMPDIR/mounted" ]; then
		in_node_mounts node1 umount "$(cat "$BATS_TEST_TMPDIR/mounted")"
	fi
	plugstack_restore
}

# shape_node NODE RATE: tbf on both ends of NODE's link (as cluster.sh does).
shape_node() {
	tc qdisc replace dev "$(node_netns "$1")" root tbf rate "$2" burst "$CL_BURST" latency 50ms
	in_node "$1" tc qdisc replace dev eth0 root tbf rate "$2" burst "$CL_BURST" latency 50ms
}

# point_xml NODE FIXTURE: NODE's hwloc XML becomes tests/data/FIXTURE.
point_xml() {
	local x
	x=$(node_xml "$1")
	[ -L "$x" ] || skip "$1's hwloc XML is not a link this test can point elsewhere (run.sh sets that up)"
	readlink "$x" >"$BATS_TEST_TMPDIR/xml.$1"
	ln -sfn "$CLUSTER_TOP_SRCDIR/tests/data/$2" "$x"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# measure_job SBATCH-ARGS...: an 8-node planned job whose script prints when
# it started and keeps a copy of its plan; sets JOB, LOG, PLAN, DELAY_MS (from
# sbatch to the script's first line).
measure_job() {
	local t0 start
	t0=$(now_ms)
	JOB=$(sbatch --parsable -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b "$@" \
		--wrap 'echo "START $(($(date +%s%N) / 1000000))"
			echo "SPOOL $(ls '"$CL_DIR"'/spool-dtplan/$SLURM_JOB_ID.json 2>&1)"
			cp "$DTPLAN_FILE" plan-$SLURM_JOB_ID.json') || return 1
	JOB=${JOB%%;*}
	submit_wait "$JOB" 60 || { job_log "$JOB"; return 1; }
	LOG=$(job_log "$JOB")
	PLAN=$CL_DIR/jobs/plan-$JOB.json
	start=$(sed -n 's/^START //p' <<<"$LOG")
	DELAY_MS=$((start - t0))
	echo "job $JOB started $DELAY_MS ms after sbatch"
}

# plain_delay: sbatch to start of the same job without --dt-plan (what Slurm
# itself takes), into BASE_MS.
plain_delay() {
	local t0 id start
	t0=$(now_ms)
	id=$(sbatch --parsable -N8 --gres=gpu:8 --wrap 'echo "START $(($(date +%s%N) / 1000000))"')
	submit_wait "$id" 60
	start=$(job_log "$id" | sed -n 's/^START //p')
	BASE_MS=$((start - t0))
	echo "a job without --dt-plan started $BASE_MS ms after sbatch"
}

# meas EXPR: a Python expression over m (the plan's measurements) and p (the plan).
meas() {
	/usr/bin/python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); m = p["measurements"]
print(eval(sys.argv[2]))' "$PLAN" "$1"
}

@test "every node's own hwloc XML (node6 with 4 GPUs): all measured, node6 shown, none assumed" {
	point_xml node6 pcie-4gpu.xml
	measure_job
	echo "$LOG"
	[ "$(meas 'm["nodes_reported"]')" = 8 ]
	[ "$(meas 'm["source"]')" = prolog ]
	[ "$(meas 'm["used"]["inventories"]')" = measured ]
	[ "$(meas 'm["missing"]')" = "[]" ]
	grep -q '^  measured     8 of 8 nodes by the prolog in ' <<<"$LOG"
	# node6 as it is: four L40S, each its own NVLink domain; the plan says so
	grep -q '\[heterogeneous-nodes\] nodes differ: .* but node6 has 4 x AD102GL \[L40S\] (domain 1)' <<<"$LOG"
	! grep -q 'assumed-nodes' <<<"$LOG"
	grep -q "^SPOOL $CL_DIR/spool-dtplan/$JOB.json\$" <<<"$LOG"
}

# probe_args_without_socket: the plugstack line of setup() with no
# munge_socket=: the prolog must find munged's socket in slurm.conf's
# AuthInfo=socket= (cluster.sh writes the cluster's own, not libmunge's
# default).
probe_args_without_socket() {
	grep -q "^AuthInfo=socket=$CL_MUNGE_SOCKET\$" "$CL_DIR/etc/slurm.conf" ||
		{ echo "slurm.conf has no AuthInfo=socket=$CL_MUNGE_SOCKET" >&2; return 1; }
	# the test means something only where the default socket answers no one
	! munge -n </dev/null >/dev/null 2>&1 ||
		skip "a munged answers on libmunge's default socket: it would stand in for the cluster's"
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"spool_dir=$CL_DIR/spool-dtplan node_xml=$CL_NODE_XML probe_budget=${BUDGET}s" >"$PLUGSTACK"
	! grep -q munge_socket "$PLUGSTACK"
}

@test "munged on a socket of its own, no munge_socket=: the prolog takes Slurm's AuthInfo=socket=, all 8 measured" {
	probe_args_without_socket
	measure_job
	echo "$LOG"
	[ "$(meas 'm["nodes_reported"]')" = 8 ]
	[ "$(meas 'm["missing"]')" = "[]" ]
	grep -q '^  measured     8 of 8 nodes by the prolog in ' <<<"$LOG"
}

@test "node names that do not resolve on the nodes: the prolog reaches them at slurm.conf's NodeAddr, all 8 measured" {
	probe_args_without_socket
	# every node's /etc/hosts is a bind of this file: cut its node lines in
	# place (same inode), put back in teardown
	local slurmd
	slurmd=$(cat "$CL_DIR/run/slurmd-node2.pid")
	run -0 nsenter -t "$slurmd" -m -n -r -w getent hosts node1
	cp "$CL_DIR/etc/hosts" "$BATS_TEST_TMPDIR/hosts.orig"
	grep -v ' node[0-9]*$' "$BATS_TEST_TMPDIR/hosts.orig" >"$BATS_TEST_TMPDIR/hosts.cut"
	cat "$BATS_TEST_TMPDIR/hosts.cut" >"$CL_DIR/etc/hosts"
	# as node2's slurmd (and its prologs) see it, in its mount namespace and
	# root (a chroot's): node1 no longer resolves
	run ! nsenter -t "$slurmd" -m -n -r -w getent hosts node1
	measure_job
	echo "$LOG"
	[ "$(meas 'm["nodes_reported"]')" = 8 ]
	[ "$(meas 'm["missing"]')" = "[]" ]
	grep -q '^  measured     8 of 8 nodes by the prolog in ' <<<"$LOG"
}

@test "links: intra-leaf within 15% of 1 Gbit/s, cross-leaf within 15% of 200 Mbit/s, both uplinks oversubscribed" {
	measure_job
	echo "$LOG" | grep -E '^  (measured|links|uplinks|figures|warning) '
	meas 'm["tiers"]'
	intra=$(meas 'round(m["tiers"]["intra_leaf"]["bandwidth_bytes_per_s"])')
	cross=$(meas 'round(m["tiers"]["cross_leaf"]["bandwidth_bytes_per_s"])')
	echo "intra $intra B/s (1 Gbit/s = 125000000), cross $cross B/s (200 Mbit/s = 25000000)"
	[ "$intra" -ge $((125 * MB * 85 / 100)) ] && [ "$intra" -le $((125 * MB * 115 / 100)) ]
	[ "$cross" -ge $((25 * MB * 85 / 100)) ] && [ "$cross" -le $((25 * MB * 115 / 100)) ]
	# four nodes of 1 Gbit/s share 200 Mbit/s: about 20:1, above the site's 4:1
	for leaf in leaf1 leaf2; do
		ratio=$(meas "[u for u in m['uplinks'] if u['switch'] == '$leaf'][0]['oversubscription']")
		echo "$leaf measured $ratio:1"
		[ "$(meas "[u for u in m['uplinks'] if u['switch'] == '$leaf'][0]['saturated'] and $ratio > 4")" = True ]
		grep -Eq "\\[measured-oversubscription\\] $leaf's uplink measured [0-9.]+:1 oversubscribed .*configured 4.0:1" <<<"$LOG"
	done
	[ "$(meas 'm["used"]["oversubscription"]')" = measured ]
	[ "$(meas 'all(l["ok"] for l in m["links"])')" = True ]
}

# nfq_rule IPTABLES-ACTION...: the rule that queues what crosses the
# spine's uplink ports to nfq_delay (-I FORWARD 1 adds it, -D FORWARD
# removes it)
nfq_rule() {
	iptables "$@" -m physdev --physdev-in "${CL_PREFIX}u+" --physdev-out "${CL_PREFIX}u+" \
		-j NFQUEUE --queue-num 7 --queue-bypass
}

# nfq_stop: nfq_delay stopped (it prints what it held as it exits)
nfq_stop() {
	kill "$(cat "$BATS_TEST_TMPDIR/nfq.pid")"
	wait "$(cat "$BATS_TEST_TMPDIR/nfq.pid")"
	rm -f "$BATS_TEST_TMPDIR/nfq.pid"
}

# queued_gap DELAY_US: the cross-leaf minus the intra-leaf latency tier (us)
# of a measured job whose cross-leaf packets pass nfq_delay holding each
# DELAY_US; the median time they were really held goes to held.DELAY_US.
# The rule and the program are gone again when it returns (and in
# teardown, if it fails).
queued_gap() {
	# at a real-time priority, so that a busy machine does not lengthen the
	# holds (the probes' own scheduling is measured on both tiers alike)
	chrt -f 50 "$BATS_FILE_TMPDIR/nfq_delay" 7 "$1" >"$BATS_TEST_TMPDIR/nfq.out" 2>&1 &
	echo $! >"$BATS_TEST_TMPDIR/nfq.pid"
	for ((i = 0; i < 50; i++)); do grep -q ready "$BATS_TEST_TMPDIR/nfq.out" && break; sleep 0.1; done
	grep -q ready "$BATS_TEST_TMPDIR/nfq.out" || return 1
	nfq_rule -I FORWARD 1
	measure_job >&2 || return 1
	meas 'm["tiers"]' >&2
	meas 'round(m["tiers"]["cross_leaf"]["latency_us"] - m["tiers"]["intra_leaf"]["latency_us"])'
	nfq_rule -D FORWARD
	nfq_stop
	cat "$BATS_TEST_TMPDIR/nfq.out" >&2
	sed -n 's/^held [0-9]* packets, median \([0-9]*\) us$/\1/p' "$BATS_TEST_TMPDIR/nfq.out" \
		>"$BATS_TEST_TMPDIR/held.$1"
	[ -s "$BATS_TEST_TMPDIR/held.$1" ]
}

@test "a 1 ms cross-leaf delay: the cross-leaf latency tier grows by what the packets were held, within 0.2 ms" {
	[ -x "$BATS_FILE_TMPDIR/nfq_delay" ] || skip "nfq_delay not built (libnetfilter-queue-dev)"
	# the same path with no delay first: the queue's own trip through user
	# space is the harness's, not the link's.  The yardstick is the median
	# time the packets were held, which a timer in a VM makes longer than
	# the 1000 us asked (by 100-300 us here)
	base_us=$(queued_gap 0)
	diff_us=$(queued_gap 1000)
	held_us=$(($(cat "$BATS_TEST_TMPDIR/held.1000") - $(cat "$BATS_TEST_TMPDIR/held.0")))
	echo "cross-leaf minus intra-leaf one-way latency: $base_us us through the queue," \
		"$diff_us us with 1000 us asked each way; packets held $held_us us longer"
	[ "$held_us" -ge 1000 ]
	[ $((diff_us - base_us - held_us)) -ge -200 ] && [ $((diff_us - base_us - held_us)) -le 200 ]
}

@test "node6 shaped to 100 Mbit/s: reported as a straggler, the plan warns by name" {
	echo node6 >"$BATS_TEST_TMPDIR/shaped"
	shape_node node6 100mbit
	measure_job
	meas 'm["stragglers"]'
	[ "$(meas '[s["node"] for s in m["stragglers"]]')" = "['node6']" ]
	bw=$(meas 'round(m["stragglers"][0]["bandwidth_bytes_per_s"])')
	echo "node6: $bw B/s (100 Mbit/s = 12500000)"
	[ "$bw" -ge $((125 * MB / 10 * 85 / 100)) ] && [ "$bw" -le $((125 * MB / 10 * 115 / 100)) ]
	grep -q '\[straggler\] node6 is a straggler: its links reach 1[0-9.]* MB/s' <<<"$LOG"
}

@test "node7's measurement killed mid-probe: the job starts within the budget plus two seconds, node7 named, no drain" {
	plain_delay
	JOB=$(sbatch --parsable -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		--wrap 'echo "START $(($(date +%s%N) / 1000000))"; cp "$DTPLAN_FILE" plan-$SLURM_JOB_ID.json')
	t0=$(now_ms)
	JOB=${JOB%%;*}
	pid=""
	i=0
	while [ -z "$pid" ] && [ "$i" -lt 250 ]; do
		for p in $(ip netns pids "$(node_netns node7)"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = dtplan-probe ] && pid=$p
		done
		[ -n "$pid" ] || sleep 0.02
		i=$((i + 1))
	done
	[ -n "$pid" ]
	sleep 0.6 # into the rounds
	kill -9 "$pid"
	echo "killed node7's dtplan-probe ($pid) $(($(now_ms) - t0)) ms after sbatch"
	submit_wait "$JOB" 60
	LOG=$(job_log "$JOB")
	PLAN=$CL_DIR/jobs/plan-$JOB.json
	DELAY_MS=$(($(sed -n 's/^START //p' <<<"$LOG") - t0))
	echo "job $JOB started $DELAY_MS ms after sbatch (without --dt-plan: $BASE_MS ms)"
	[ "$DELAY_MS" -le $((BASE_MS + BUDGET * 1000 + SLACK_MS)) ]
	[ "$(meas 'm["missing"]')" = "['node7']" ]
	grep -q '\[measurement-incomplete\] 1 of 8 nodes did not finish the measurement .*: node7' <<<"$LOG"
	no_drain
}

@test "node8 cut off (its prolog never joins): the job starts within the budget plus two seconds, node8 named, no drain" {
	plain_delay
	echo node8 >"$BATS_TEST_TMPDIR/cut"
	in_node node8 iptables -I INPUT -p tcp --dport "${CL_PROBE_PORTS/-/:}" -j DROP
	in_node node8 iptables -I OUTPUT -p tcp --dport "${CL_PROBE_PORTS/-/:}" -j DROP
	measure_job
	echo "without --dt-plan: $BASE_MS ms"
	[ "$DELAY_MS" -le $((BASE_MS + BUDGET * 1000 + SLACK_MS)) ]
	[ "$(meas 'm["nodes_reported"]')" = 7 ]
	[ "$(meas 'm["missing"]')" = "['node8']" ]
	# node8's inventory came from node_xml= on the batch node, not the prolog
	[ "$(meas 'm["used"]["inventories"]')" = "partly measured" ]
	grep -q '\[measurement-incomplete\] .*node8' <<<"$LOG"
	no_drain
}

@test "forged messages at the leader's port are rejected and logged; the measurements are those of a clean run" {
	[ -x "$FORGE" ] || skip "tests/probe_forge not built"
	JOB=$(sbatch --parsable -N8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-8b \
		--wrap 'cp "$DTPLAN_FILE" plan-$SLURM_JOB_ID.json')
	JOB=${JOB%%;*}
	port=$(probe_port "$JOB")
	addr=$(node_addr node1)
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FORGE" --to "$addr" --port "$port" \
		--job "$JOB" --socket "$CL_MUNGE_SOCKET" --wait 4 uid >"$BATS_TEST_TMPDIR/nobody.out" 2>&1 &
	nobody=$!
	run "$FORGE" --to "$addr" --port "$port" --job "$JOB" --socket "$CL_MUNGE_SOCKET" --wait 4 \
		none garbage truncated oversized
	echo "$output"
	[ "$status" -eq 0 ]
	run "$FORGE" --to "$addr" --port "$port" --job $((JOB + 1000)) --socket "$CL_MUNGE_SOCKET" \
		--wait 4 job
	echo "$output"
	[ "$status" -eq 0 ]
	wait "$nobody"
	cat "$BATS_TEST_TMPDIR/nobody.out"
	grep -q '^uid sent$' "$BATS_TEST_TMPDIR/nobody.out"
	submit_wait "$JOB" 60
	PLAN=$CL_DIR/jobs/plan-$JOB.json
	rejected=$(grep "probe: job $JOB node 0: rejected" "$CL_DIR/log/slurmd-node1.log")
	echo "$rejected"
	grep -q 'join message without a credential' <<<"$rejected"
	grep -q 'invalid credential' <<<"$rejected"
	grep -q "a join message with a credential of uid 65534 (only uid 0 is taken)" <<<"$rejected"
	grep -q "a join message for another job ($((JOB + 1000)); this is job $JOB)" <<<"$rejected"
	grep -q 'join body of 67108865 bytes (at most 64)' <<<"$rejected"
	grep -q 'truncated message' <<<"$rejected"
	[ "$(meas 'm["nodes_reported"]')" = 8 ]
	[ "$(meas 'm["missing"]')" = "[]" ]
	[ "$(meas 'len(m["links"]) == 13 and all(l["ok"] for l in m["links"])')" = True ]
	meas 'm["notes"]'
	[ "$(meas '[n for n in m["notes"] if "messages rejected on node1" in n] != []')" = True ]
}

# probe_ports_of ARGS: the probe ports the plugin takes with these plugstack
# arguments (dtplan check-config reads them as the plugin does).
probe_ports_of() {
	"$CLUSTER_TOP_BUILDDIR/cli/dtplan" check-config --args "$*" |
		awk '$1 == "ProbePorts" { print $3 }'
}

# hold_ports RANGE [NODE]: nobody (an unprivileged user) listens on every
# port of RANGE in NODE's namespace (default node1), recording what reaches
# it; waits until it is ready and says how many it holds (HELD).
hold_ports() {
	local out=$BATS_TEST_TMPDIR/holder.out i node=${2:-node1}
	in_node "$node" setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 \
		"$BATS_TEST_DIRNAME/hold_ports.py" "$1" 60 >"$out" 2>&1 &
	echo $! >"$BATS_TEST_TMPDIR/holder.pid"
	for ((i = 0; i < 100; i++)); do grep -q '^held ' "$out" && break; sleep 0.1; done
	sed -n 's/^pid //p' "$out" >>"$BATS_TEST_TMPDIR/holder.pid"
	HELD=$(sed -n 's/^held //p' "$out")
	echo "nobody on $node holds $HELD of probe_ports=$1"
}

# holder_done: stops the holder; prints what it recorded into HOLDER
# ("connections C bytes B credentials K").
holder_done() {
	local job holder
	{ read -r job; read -r holder || holder=""; } <"$BATS_TEST_TMPDIR/holder.pid"
	[ -z "$holder" ] || kill -TERM "$holder" 2>/dev/null
	wait "$job" 2>/dev/null || true
	rm -f "$BATS_TEST_TMPDIR/holder.pid"
	HOLDER=$(sed -n 's/^connections /connections /p' "$BATS_TEST_TMPDIR/holder.out")
	echo "what reached nobody's listeners: $HOLDER"
}

@test "a user listens on every default probe port before the job: it cannot bind one; all 8 measured, nothing reaches it" {
	ports=$(probe_ports_of "$(sed 's/^optional [^ ]* //' "$PLUGSTACK")")
	hold_ports "$ports"
	# below 1024 only root may listen (issue 26: 30500-30599 were anyone's)
	[[ "$HELD" == "0 of "*" (Permission denied: "* ]]
	measure_job
	holder_done
	[ "$(meas 'm["nodes_reported"], m["missing"], p["degraded"]')" = "(8, [], False)" ]
	[ "$(meas 'len(m["links"]) == 13 and all(l["ok"] for l in m["links"])')" = True ]
	[ "$HOLDER" = "connections 0 bytes 0 credentials 0" ]
}

@test "a user holds every probe port of an unprivileged range before the job: no credential reaches it, the plan is degraded naming the ports" {
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(cluster_probe_args) probe_budget=${BUDGET}s probe_ports=30500-30599" >"$PLUGSTACK"
	hold_ports 30500-30599
	[ "$HELD" = "100 of 100" ]
	plain_delay
	measure_job
	holder_done
	echo "without --dt-plan: $BASE_MS ms"
	echo "$LOG" | grep -E '^(dtplan: plan degraded|  (measured|degraded|warning) )' || true
	# the nodes reached nobody's listeners, and sent them not one byte
	[[ "$HOLDER" == "connections "*" bytes 0 credentials 0" ]]
	[[ "$HOLDER" != "connections 0 "* ]]
	# the plan names the ports, not PrologFlags, and the job still starts
	# within the budget
	p1=$(probe_port "$JOB" 30500-30599)
	# the next ports wrap around the range
	cause="node1: cannot listen on any of ports $p1, $(((p1 - 30500 + 1) % 100 + 30500)), $(((p1 - 30500 + 2) % 100 + 30500)), $(((p1 - 30500 + 3) % 100 + 30500)) (the job's of probe_ports=30500-30599): Address already in use"
	[ "$(meas 'p["degraded"]')" = True ]
	[ "$(meas 'p["degraded_reason"]')" = "nothing measured by the prolog: $cause" ]
	[ "$(meas 'm["failed"]')" = "$cause" ]
	grep -qF "dtplan: plan degraded: nothing measured by the prolog: $cause" <<<"$LOG"
	grep -qF "  measured     nothing: the prolog failed ($cause)" <<<"$LOG"
	! grep -q PrologFlags <<<"$LOG"
	[ "$DELAY_MS" -le $((BASE_MS + BUDGET * 1000 + SLACK_MS)) ]
	no_drain
}

@test "a user holds every probe port of an unprivileged range on node5: node5 reported, outside the rounds, the plan says why" {
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(cluster_probe_args) probe_budget=${BUDGET}s probe_ports=30500-30599" >"$PLUGSTACK"
	hold_ports 30500-30599 node5
	[ "$HELD" = "100 of 100" ]
	measure_job
	holder_done
	p1=$(probe_port "$JOB" 30500-30599)
	# the next ports wrap around the range
	cause="cannot listen on any of ports $p1, $(((p1 - 30500 + 1) % 100 + 30500)), $(((p1 - 30500 + 2) % 100 + 30500)), $(((p1 - 30500 + 3) % 100 + 30500)) (the job's of probe_ports=30500-30599): Address already in use"
	meas 'm["notes"]'
	[ "$(meas 'm["nodes_reported"], m["missing"], p["degraded"]')" = "(8, [], False)" ]
	[ "$(meas 'any(n == "node5 took no part in the link probes: '"$cause"'" for n in m["notes"])')" = True ]
	[ "$(meas 'all("node5" not in (l["a"], l["b"]) for l in m["links"])')" = True ]
	grep -qF "[measurement] node5 took no part in the link probes: $cause" <<<"$LOG"
	[[ "$HOLDER" == "connections 0 bytes 0 credentials 0" ]]
}

@test "the epilog removes the job's measurement file" {
	measure_job
	grep -q "^SPOOL $CL_DIR/spool-dtplan/$JOB.json\$" <<<"$LOG"
	for ((i = 0; i < 50; i++)); do
		[ -e "$CL_DIR/spool-dtplan/$JOB.json" ] || break
		sleep 0.1
	done
	[ ! -e "$CL_DIR/spool-dtplan/$JOB.json" ]
}

@test "srun -N8 --ntasks-per-node=1 dtplan probe: the engine as the job's user; dtplan plan --measurements plans with it" {
	cli=$CLUSTER_TOP_BUILDDIR/cli/dtplan
	JOB=$(sbatch --parsable -N8 --gres=gpu:8 --wrap "srun -N8 --ntasks-per-node=1 $cli probe \
		--json --munge-socket $CL_MUNGE_SOCKET --topology $CL_DIR/etc/topology.conf \
		--output $CL_DIR/jobs/probe-\$SLURM_JOB_ID.json")
	JOB=${JOB%%;*}
	submit_wait "$JOB" 60
	LOG=$(job_log "$JOB")
	echo "$LOG" | head -20
	# one task printed, the first node's
	PLAN=$BATS_TEST_TMPDIR/probe.json
	/usr/bin/python3 -c 'import json, sys; print(json.dumps({"measurements": json.loads(sys.stdin.read())}))' \
		<<<"$LOG" >"$PLAN"
	[ "$(meas 'm["source"], m["nodes"], m["nodes_reported"], m["missing"]')" = "('probe', 8, 8, [])" ]
	[ "$(meas 'len(m["links"]) == 13 and all(l["ok"] for l in m["links"])')" = True ]
	[ "$(meas 'sorted(u["switch"] for u in m["uplinks"] if u["saturated"])')" = "['leaf1', 'leaf2']" ]
	run -0 "$cli" plan --model llama3-8b --measurements "$CL_DIR/jobs/probe-$JOB.json" \
		--topology "$CL_DIR/etc/topology.conf" --site "$SITE" --json
	echo "$output" >"$PLAN"
	[ "$(meas 'm["source"], m["used"]["inventories"], m["used"]["oversubscription"]')" = \
		"('probe', 'measured', 'measured')" ]
	[ "$(meas 'p["placement"]["nodes"]')" = "['node1', 'node2', 'node3', 'node4', 'node5', 'node6', 'node7', 'node8']" ]
	[ "$(meas '[w["code"] for w in p["warnings"]].count("measured-oversubscription")')" = 2 ]
}

# in_node_mounts NODE CMD...: CMD in NODE's slurmd's mount namespace.
in_node_mounts() {
	local pid
	pid=$(cat "$CL_DIR/run/slurmd-$1.pid") || return 1
	shift
	nsenter --mount="/proc/$pid/ns/mnt" -- "$@"
}

# probe_args_with KEY=VALUE...: cluster_probe_args with those settings in
# place of its own (a plugstack argument given twice is refused).
probe_args_with() {
	local a out=
	for a in $(cluster_probe_args); do
		case " $* " in *" ${a%%=*}="*) continue ;; esac
		out="$out $a"
	done
	echo "$out $*"
}

@test "munged unreachable (the plugin's MungeSocket names no daemon): the plan is degraded naming MUNGE, not PrologFlags; no drain" {
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(probe_args_with munge_socket="$BATS_TEST_TMPDIR/no-munged.socket") probe_budget=${BUDGET}s" >"$PLUGSTACK"
	measure_job
	echo "$LOG" | grep -E '^(dtplan: plan degraded|  (measured|degraded|warning) )' || true
	[ "$(meas 'p["degraded"]')" = True ]
	meas 'p["degraded_reason"]' | grep -qi munge
	grep -qi "dtplan: plan degraded: .*munge" <<<"$LOG"
	! grep -q PrologFlags <<<"$LOG"
	no_drain
}

@test "spool_dir that does not exist, in a folder that does not either: the plan is degraded naming it, not PrologFlags; no drain" {
	local spool=$BATS_TEST_TMPDIR/gone/spool
	# the prolog makes spool_dir itself, not its parent
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(probe_args_with spool_dir="$spool") probe_budget=${BUDGET}s" >"$PLUGSTACK"
	measure_job
	echo "$LOG" | grep -E '^(dtplan: plan degraded|  (measured|degraded|warning) )' || true
	[ "$(meas 'p["degraded"]')" = True ]
	[ "$(meas 'p["degraded_reason"]')" = "nothing measured by the prolog: spool_dir $spool does not exist, and the prolog cannot make it: $BATS_TEST_TMPDIR/gone: No such file or directory" ]
	! grep -q PrologFlags <<<"$LOG"
	[ ! -e "$spool" ]
	no_drain
}

@test "spool_dir on a full file system: no measurement file, the plan is degraded naming the spool, not PrologFlags; no drain" {
	local spool=$BATS_TEST_TMPDIR/full-spool
	mkdir -m 700 "$spool"
	# in node1's own mounts (cluster.sh: each slurmd has private ones), where
	# its prolog leads the measurement and its batch step reads it
	in_node_mounts node1 mount -t tmpfs -o size=64k,mode=0700 dtplan-full "$spool" ||
		skip "cannot mount a tmpfs in node1's mounts"
	echo "$spool" >"$BATS_TEST_TMPDIR/mounted"
	in_node_mounts node1 dd if=/dev/zero of="$spool/fill" bs=4k 2>/dev/null || true
	echo "optional $CL_PLUGIN site=$SITE topology=$CL_DIR/etc/topology.conf" \
		"$(probe_args_with spool_dir="$spool") probe_budget=${BUDGET}s" >"$PLUGSTACK"
	measure_job
	in_node_mounts node1 umount "$spool" && rm -f "$BATS_TEST_TMPDIR/mounted"
	echo "$LOG" | grep -E '^(dtplan: plan degraded|  (measured|degraded|warning) )' || true
	[ "$(meas 'p["degraded"]')" = True ]
	[[ "$(meas 'p["degraded_reason"]')" == "nothing measured by the prolog: spool_dir $spool is full ("* ]]
	! grep -q PrologFlags <<<"$LOG"
	no_drain
}
