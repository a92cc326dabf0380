# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2034
# tests/cluster/lib.sh: configuration and helpers for the test cluster.
#
# Sourced by cluster.sh, run.sh, demo.sh and the bats files.  It defines no
# shell options of its own (bats and callers keep theirs).
#
# Configuration (environment, read by `cluster.sh up`; recorded in
# $DTPLAN_CLUSTER_DIR/cluster.env so that later commands use the same values):
#   DTPLAN_CLUSTER_DIR            scratch folder (default /tmp/dtplan-cluster)
#   DTPLAN_CLUSTER_PREFIX         prefix of namespaces, bridges, veths (default dtp-)
#   DTPLAN_CLUSTER_NET            first two octets of the private /16 (default 10.213)
#   DTPLAN_CLUSTER_RACKS          racks (default 2)
#   DTPLAN_CLUSTER_NODES_PER_RACK nodes in each rack (default 4)
#   DTPLAN_CLUSTER_RACK_RATE      tbf rate of each node link (default 1gbit, "none" = unshaped)
#   DTPLAN_CLUSTER_UPLINK_RATE    tbf rate of each rack uplink (default 200mbit, "none" = unshaped)
#   DTPLAN_CLUSTER_BURST          tbf burst (default 256kb)
#   DTPLAN_CLUSTER_CPUS           CPUs declared per node (default 16)
#   DTPLAN_CLUSTER_GPUS           GPUs declared per node (default 8)
#   DTPLAN_CLUSTER_CTLD_PORT      slurmctld port (default 6817)
#   DTPLAN_CLUSTER_SLURMD_PORT    slurmd port, inside each namespace (default 6818)
#   DTPLAN_CLUSTER_DBD_PORT       slurmdbd port, on the spine (default 6819)
#   DTPLAN_CLUSTER_DB_PORT        the cluster's MariaDB port, on 127.0.0.1 only (default 6820)
#   DTPLAN_CLUSTER_TIMEOUT        seconds `up` waits for idle nodes (default 30)
#   DTPLAN_NODE_XML               hwloc XML given to every slurmd as HWLOC_XMLFILE ("%n" becomes
#                                 the node name; default $top_srcdir/tests/data/hgx-h100-8gpu.xml,
#                                 skipped with a warning when that default is missing; "none" = no XML)
#   DTPLAN_PLUGIN                 spank_dtplan.so to load (plugstack.conf stays empty without it)
#   DTPLAN_PLUGIN_ARGS            arguments after the plugin path in plugstack.conf
#   DTPLAN_JOB_SUBMIT_LUA         job_submit.lua to install (enables JobSubmitPlugins=lua)

CLUSTER_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER_TOP_SRCDIR=${top_srcdir:-$(cd "$CLUSTER_LIB_DIR/../.." && pwd)}
CLUSTER_TOP_BUILDDIR=${top_builddir:-$CLUSTER_TOP_SRCDIR}

# cluster_config: sets the CL_* variables, from the recorded cluster.env when
# the cluster exists, else from the environment and the defaults.
cluster_config() {
	CL_DIR=${DTPLAN_CLUSTER_DIR:-/tmp/dtplan-cluster}
	CL_PREFIX=${DTPLAN_CLUSTER_PREFIX:-dtp-}
	CL_NET=${DTPLAN_CLUSTER_NET:-10.213}
	CL_RACKS=${DTPLAN_CLUSTER_RACKS:-2}
	CL_NODES_PER_RACK=${DTPLAN_CLUSTER_NODES_PER_RACK:-4}
	CL_RACK_RATE=${DTPLAN_CLUSTER_RACK_RATE:-1gbit}
	CL_UPLINK_RATE=${DTPLAN_CLUSTER_UPLINK_RATE:-200mbit}
	CL_BURST=${DTPLAN_CLUSTER_BURST:-256kb}
	CL_CPUS=${DTPLAN_CLUSTER_CPUS:-16}
	CL_GPUS=${DTPLAN_CLUSTER_GPUS:-8}
	CL_CTLD_PORT=${DTPLAN_CLUSTER_CTLD_PORT:-6817}
	CL_SLURMD_PORT=${DTPLAN_CLUSTER_SLURMD_PORT:-6818}
	CL_DBD_PORT=${DTPLAN_CLUSTER_DBD_PORT:-6819}
	CL_ACCOUNTING=${DTPLAN_CLUSTER_ACCOUNTING:-1}
	CL_DB_PORT=${DTPLAN_CLUSTER_DB_PORT:-6820}
	CL_TIMEOUT=${DTPLAN_CLUSTER_TIMEOUT:-30}
	CL_NODE_XML=${DTPLAN_NODE_XML-}
	CL_PLUGIN=${DTPLAN_PLUGIN-}
	CL_PLUGIN_ARGS=${DTPLAN_PLUGIN_ARGS-}
	CL_JOB_SUBMIT_LUA=${DTPLAN_JOB_SUBMIT_LUA-}
	if [ -f "$CL_DIR/cluster.env" ] && [ -f "$CL_DIR/.dtplan-cluster" ]; then
		# shellcheck disable=SC1091
		. "$CL_DIR/cluster.env"
	fi
	CL_NODES=$((CL_RACKS * CL_NODES_PER_RACK))
	CL_CTLD_ADDR=$CL_NET.0.1
	CL_CONF=$CL_DIR/etc/slurm.conf
	CL_MUNGE_SOCKET=$CL_DIR/munge/run/munge.socket.2
}

# cluster_save_config: records the resolved configuration for later commands.
cluster_save_config() {
	local v
	: >"$CL_DIR/cluster.env"
	for v in CL_PREFIX CL_NET CL_RACKS CL_NODES_PER_RACK CL_RACK_RATE CL_UPLINK_RATE CL_BURST \
		CL_CPUS CL_GPUS CL_CTLD_PORT CL_SLURMD_PORT CL_TIMEOUT CL_NODE_XML CL_PLUGIN \
		CL_PLUGIN_ARGS CL_JOB_SUBMIT_LUA CL_DBD_PORT CL_DB_PORT CL_ACCOUNTING; do
		printf '%s=%q\n' "$v" "${!v}" >>"$CL_DIR/cluster.env"
	done
}

# Names and addresses.  Node I (1-based) sits in rack (I-1)/NODES_PER_RACK+1
# and has address NET.<rack>.<I>/16; slurmctld has NET.0.1 on the spine.
cluster_nodes() { local i; for ((i = 1; i <= CL_NODES; i++)); do echo "node$i"; done; }
node_index() { echo "${1#node}"; }
node_rack() { echo $((($(node_index "$1") - 1) / CL_NODES_PER_RACK + 1)); }
node_addr() { echo "$CL_NET.$(node_rack "$1").$(node_index "$1")"; }
node_netns() { echo "${CL_PREFIX}$1"; }
# node_xml NODE: the hwloc XML of NODE ("" when the cluster runs without one).
node_xml() { local x=$CL_NODE_XML; echo "${x//%n/$1}"; }

# slurm_version: the installed Slurm's major.minor as one number, e.g. 2405
# for 24.05 (from `slurmd -V`: "slurm-wlm 24.11.5", "slurm 26.05.5").
slurm_version() {
	slurmd -V 2>/dev/null | sed -n 's/^slurm[a-z-]* \([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p' |
		{ read -r a b && printf '%d%02d\n' "$a" "$b"; }
}

# torch_store_env: "USE_LIBUV=0" where /usr/bin/python3's torch makes its
# TCPStore (init_method="env://") with libuv by default but was built
# without it (Debian 13's and sid's torch), nothing where the store has no
# libuv choice (Debian 12's torch 1.13 has no use_libuv argument) or has
# libuv.  Decided by making a store, not by the version.
torch_store_env() {
	/usr/bin/python3 - 2>/dev/null <<-'EOF'
		import datetime, torch.distributed as d
		try:
		    d.TCPStore("127.0.0.1", 0, 1, True, datetime.timedelta(seconds=10), use_libuv=True)
		except TypeError:
		    pass
		except RuntimeError as e:
		    if "libuv" in str(e):
		        print("USE_LIBUV=0")
	EOF
	return 0
}

# cluster_probe_args: the plugstack arguments the prolog's measurement needs
# on this cluster: each node's hwloc XML (node_xml=, the prolog's environment
# has no HWLOC_XMLFILE), the cluster's munged and a spool of its own.
cluster_probe_args() {
	printf 'munge_socket=%s spool_dir=%s' "$CL_MUNGE_SOCKET" "$CL_DIR/spool-dtplan"
	[ -z "$CL_NODE_XML" ] || printf ' node_xml=%s' "$CL_NODE_XML"
	echo
}

# The prolog's probe ports: the default probe_ports=500-599 (lib/site/config.c).
CL_PROBE_PORTS=500-599
# probe_port JOBID [LO-HI]: the prolog's first port candidate for the job
# (probes/net.c), in LO-HI (default CL_PROBE_PORTS).
probe_port() {
	local r=${2:-$CL_PROBE_PORTS} lo hi
	lo=${r%-*} hi=${r#*-}
	echo $((lo + ($1 * 31) % (hi - lo + 1)))
}

# in_node NODE CMD...: runs CMD in NODE's network namespace.
in_node() {
	local ns
	ns=$(node_netns "$1"); shift
	nsenter --net="/run/netns/$ns" -- "$@"
}

# proc_alive PID: true while PID exists and is not a zombie (kill -0 succeeds
# on zombies that PID 1 has not reaped yet).
proc_alive() {
	local stat
	[ -n "${1:-}" ] || return 1
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	case ${stat%% *} in
	Z | X) return 1 ;;
	esac
	return 0
}

# ----------------------------------------------------------------------
# Jobs
# ----------------------------------------------------------------------

# job_field JOBID FIELD: prints FIELD from `scontrol show job`.
job_field() {
	scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# job_state JOBID: PENDING, RUNNING, COMPLETED, FAILED, ... ("" if unknown).
job_state() { job_field "$1" JobState; }

job_is_final() {
	case $1 in
	COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
		return 0 ;;
	esac
	return 1
}

# submit_wait JOBID TIMEOUT: polls until JOBID ends.  Returns 0 when it
# COMPLETED, 1 when it ended otherwise, 2 on timeout (the job is left alone).
submit_wait() {
	local id=$1 timeout=${2:-60} state="" deadline
	deadline=$(($(date +%s%N) / 1000000 + timeout * 1000))
	while [ $(($(date +%s%N) / 1000000)) -lt "$deadline" ]; do
		state=$(job_state "$id")
		if job_is_final "$state"; then
			[ "$state" = COMPLETED ] && return 0
			echo "job $id ended $state (exit $(job_field "$id" ExitCode), reason $(job_field "$id" Reason))" >&2
			return 1
		fi
		sleep 0.2
	done
	echo "job $id still ${state:-unknown} after ${timeout}s" >&2
	return 2
}

# sbatch_wait TIMEOUT SBATCH-ARGS...: submits, waits, prints the job id.
# Returns like submit_wait (3 if sbatch itself failed).
sbatch_wait() {
	local timeout=$1 id
	shift
	id=$(sbatch --parsable "$@") || return 3
	id=${id%%;*}
	echo "$id"
	submit_wait "$id" "$timeout"
}

# job_log JOBID: prints the job's standard output file.
job_log() {
	local f
	f=$(job_field "$1" StdOut)
	if [ -z "$f" ] || [ ! -f "$f" ]; then
		echo "job_log: no output file for job $1 (${f:-unknown})" >&2
		return 1
	fi
	cat "$f"
}

# job_nodes JOBID: the job's nodes, one per line.
job_nodes() { scontrol show hostnames "$(job_field "$1" NodeList)"; }

# cancel_all_wait TIMEOUT: cancels every job and waits until none is left
# and every node is idle again.
cancel_all_wait() {
	local timeout=${1:-20} i
	scancel --user=root 2>/dev/null
	for ((i = 0; i < timeout * 5; i++)); do
		if [ -z "$(squeue -h -o %i -t PD,R,CG,CF,S 2>/dev/null)" ] &&
			[ "$(nodes_in_state idle)" = "$CL_NODES" ]; then
			return 0
		fi
		sleep 0.2
	done
	echo "cancel_all_wait: jobs or busy nodes left after ${timeout}s" >&2
	busy_nodes_dump >&2
	return 1
}

# ----------------------------------------------------------------------
# Nodes
# ----------------------------------------------------------------------

# node_state NODE: idle, allocated, mixed, down, drained, ... (lower case,
# without the trailing *~#$@ flags).
node_state() {
	sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1 | sed 's/[*~#$@+!%^-]*$//'
}

# nodes_in_state STATE: how many nodes are in STATE.
nodes_in_state() {
	sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | awk -v s="$1" '$2 == s' | wc -l
}

# wait_nodes_idle TIMEOUT: true once every node is idle.
wait_nodes_idle() {
	local timeout=${1:-30} i
	for ((i = 0; i < timeout * 10; i++)); do
		[ "$(nodes_in_state idle)" = "$CL_NODES" ] && return 0
		sleep 0.1
	done
	return 1
}

# cluster_dump_logs [LINES]: the tail of every daemon log, to stderr.
cluster_dump_logs() {
	local f n=${1:-40}
	for f in "$CL_DIR"/munge/log/munged.log "$CL_DIR"/log/*.log; do
		[ -f "$f" ] || continue
		echo "==== $f (last $n lines) ====" >&2
		tail -n "$n" "$f" >&2
	done
	sinfo -N -o '%N %T %E' >&2 2>/dev/null
}

# ---- helpers of the bats files ----------------------------------------

# run_job TIMEOUT SBATCH-ARGS...: submits and waits for completion; sets JOB
# and LOG (the job's output).  Shows the job and its log when it fails.
run_job() {
	local timeout=$1
	shift
	JOB=$(sbatch --parsable "$@") || { echo "sbatch $* failed"; return 1; }
	JOB=${JOB%%;*}
	if ! submit_wait "$JOB" "$timeout"; then
		echo "job $JOB (sbatch $*):"
		scontrol show job "$JOB"
		job_log "$JOB"
		return 1
	fi
	LOG=$(job_log "$JOB")
}

# batch_var NAME: NAME's value in LOG as the batch script printed it ("BATCH NAME=value").
batch_var() { sed -n "s/^BATCH $1=//p" <<<"$LOG" | head -n 1; }

# busy_nodes_dump: the state of every node that is not idle, with the tail of
# its slurmd log and the controller's lines that name it (why it is busy).
busy_nodes_dump() {
	local node state
	sinfo -N -o '%N %T %E'
	squeue -o '%i %T %M %N %r' 2>/dev/null
	while read -r node state; do
		[ "$state" = idle ] && continue
		echo "==== $node ($state): slurmd log, last 25 lines ===="
		tail -n 25 "$CL_DIR/log/slurmd-$node.log" 2>/dev/null
		echo "==== slurmctld lines naming $node, last 15 ===="
		grep -w "$node" "$CL_DIR/log/slurmctld.log" 2>/dev/null | tail -n 15
	done < <(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | sed 's/[*~#$@+!%^-]*$//')
}

# no_drain (bats): every node idle again, none drained or down with a reason.
# A node may stay COMPLETING for tens of seconds on a loaded machine (seen on
# Slurm 24.11), which is not a drain: the wait allows a minute, and a node
# still busy after it is shown with its logs.
no_drain() {
	wait_nodes_idle 60 || { busy_nodes_dump; false; }
	run -0 sinfo -h -R -o '%N %E'
	[ -z "$output" ]
}

# cluster_is_up (setup_file): every daemon of the cluster runs; else says
# which do not (cluster.sh status) and fails.
cluster_is_up() {
	local s
	s=$("$BATS_TEST_DIRNAME/cluster.sh" status 2>&1) && return 0
	echo "no cluster up in $CL_DIR: run tests/cluster/cluster.sh up (or run.sh)" >&2
	echo "$s" >&2
	return 1
}

# reconfigure: slurmctld and every slurmd read slurm.conf and topology.conf
# again (24.05+ re-executes the daemons: a new process writes its pid file
# a while after the old one answered); waits up to 60 s until all nodes are
# idle and every daemon runs again (cluster.sh status: by its pid file, or by
# its command line where that file is behind).  If not, says which check
# failed, the daemons and the end of their logs.
reconfigure() {
	local deadline=$((SECONDS + 60)) why
	scontrol reconfigure || return 1
	while :; do
		if ! scontrol ping 2>/dev/null | grep -q 'is UP'; then
			why="slurmctld does not answer scontrol ping"
		elif [ "$(nodes_in_state idle)" != "$CL_NODES" ]; then
			why="not every node is idle"
		elif ! "$BATS_TEST_DIRNAME/cluster.sh" status >/dev/null 2>&1; then
			why="a daemon is not running (cluster.sh status)"
		else
			return 0
		fi
		[ "$SECONDS" -lt "$deadline" ] || break
		sleep 0.2
	done
	echo "reconfigure: the cluster did not come back within 60 s: $why" >&2
	scontrol ping >&2
	"$BATS_TEST_DIRNAME/cluster.sh" status >&2
	local log
	for log in "$CL_DIR"/log/slurmctld.log "$CL_DIR"/log/slurmd-*.log; do
		echo "== the end of $log" >&2
		tail -n 4 "$log" >&2
	done
	return 1
}

# plugstack_save (setup_file): a cluster is up; keeps its plugstack.conf line
# for plugstack_restore (teardown_file), as the tests write their own.
plugstack_save() {
	cluster_is_up || return 1
	cp "$CL_DIR/etc/plugstack.conf" "$BATS_FILE_TMPDIR/plugstack.conf.orig"
}

plugstack_restore() {
	[ ! -f "$BATS_FILE_TMPDIR/plugstack.conf.orig" ] ||
		cp "$BATS_FILE_TMPDIR/plugstack.conf.orig" "$CL_DIR/etc/plugstack.conf"
}

# megatron_step_script FILE RATIO: writes a batch script to FILE that prints
# 30 of Megatron-LM's iteration lines, each RATIO x the model's step of the
# job's plan ($DTPLAN_FILE), the first one three times as long (a warm-up),
# for the epilog to read from the job's output.
megatron_step_script() {
	cat >"$1" <<EOF_JOB
#!/bin/bash
t=\$(/usr/bin/python3 -c 'import json, os; print(json.load(open(os.environ["DTPLAN_FILE"]))["prediction"]["model_step_seconds"])')
/usr/bin/python3 - "\$t" <<'EOF_PY'
import sys
t = float(sys.argv[1]) * $2
for it in range(1, 31):
    ms = t * 1000.0 * (3.0 if it == 1 else 1.0)
    print(" [2026-12-01 10:00:%02d.000000] iteration %8d/%8d | consumed samples: %12d |"
          " elapsed time per iteration (ms): %.1f | learning rate: 3.000000E-04 |"
          " global batch size:  1024 |" % (it % 60, it * 10, 300, it * 10240, ms))
EOF_PY
EOF_JOB
}

# epilog_done: waits until the epilog of job $JOB removed its ticket
# ($CL_DIR/spool-dtplan/JOB.observe).
epilog_done() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ -e "$CL_DIR/spool-dtplan/$JOB.observe" ] || [ "$(job_state "$JOB")" != COMPLETED ] ||
			{ sleep 0.3; return 0; }
		sleep 0.1
	done
	return 1
}
