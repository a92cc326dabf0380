#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/cluster.sh: a real multi-node Slurm cluster on one machine.
#
# Usage: cluster.sh up|down|status|env
#
#   up      start munged, slurmctld (root namespace, on the spine bridge) and one
#           slurmd per node, each in its own network namespace on its rack's
#           bridge; wait until every node is idle.  Refuses a cluster that is
#           already up; cleans a stale one first.
#   down    stop every daemon and job process, delete the namespaces, bridges,
#           veths (and their tc qdiscs), the iptables chain and the scratch folder.
#           Safe to call at any time: `trap 'tests/cluster/cluster.sh down' EXIT`.
#   status  what is running; exit 0 only when everything is up.
#   env     the exports clients need: eval "$(tests/cluster/cluster.sh env)".
#   slurmd NODE  starts NODE's slurmd again (after a test killed it).
#
# Topology (defaults; see lib.sh for the variables that change them):
#
#   spine bridge  <prefix>spine   10.213.0.1/16 (slurmctld)
#     |-- uplink veth <prefix>u1s/<prefix>u1r, tbf 200mbit both ways
#     |   rack bridge <prefix>rack1 -- node1..node4 (10.213.1.1-4), tbf 1gbit both ways
#     '-- uplink veth <prefix>u2s/<prefix>u2r
#         rack bridge <prefix>rack2 -- node5..node8 (10.213.2.5-8)
#
# Node I is the network namespace <prefix>nodeI with one interface eth0; its
# host-side veth is <prefix>nodeI.  No namespace has a default route, and an
# iptables chain (<prefix>guard) drops anything routed into or out of the bridges.
set -u
export LC_ALL=C

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster_config

PROG=cluster.sh
SYSPATH=/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "$PROG: $*" >&2; }
die() { say "$*"; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

need_root() {
	[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, bridges, daemons)"
}

check_tools() {
	local t missing=""
	for t in ip tc nsenter unshare mount mknod munged munge unmunge slurmctld slurmd sinfo scontrol \
		sbatch squeue scancel slurmdbd sacctmgr sacct mariadbd mariadb-install-db; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	[ -z "$missing" ] || die "missing programs:$missing (tests/cluster/run.sh installs them)"
}

check_config() {
	local v
	for v in CL_RACKS CL_NODES_PER_RACK CL_CPUS CL_GPUS CL_CTLD_PORT CL_SLURMD_PORT CL_TIMEOUT \
		CL_DBD_PORT CL_DB_PORT; do
		case ${!v} in
		'' | *[!0-9]*) die "${v/CL_/DTPLAN_CLUSTER_}='${!v}' is not a number" ;;
		esac
	done
	[ "$CL_RACKS" -ge 1 ] || die "DTPLAN_CLUSTER_RACKS must be at least 1"
	[ "$CL_NODES_PER_RACK" -ge 1 ] ||
		die "DTPLAN_CLUSTER_NODES_PER_RACK must be at least 1"
	[ "$CL_NODES" -le 254 ] || die "at most 254 nodes (asked for $CL_NODES)"
	[ "$CL_CPUS" -ge 1 ] || die "DTPLAN_CLUSTER_CPUS must be at least 1"
	[[ $CL_NET =~ ^(10|172|192)\.[0-9]{1,3}$ ]] ||
		die "DTPLAN_CLUSTER_NET='$CL_NET' must be two octets of a private range, e.g. 10.213"
	[[ $CL_PREFIX =~ ^[a-z][a-z0-9-]{0,5}$ ]] ||
		die "DTPLAN_CLUSTER_PREFIX='$CL_PREFIX' must be 1-6 of [a-z0-9-] (interface names are short)"
	case $CL_DIR in
	/*) ;;
	*) die "DTPLAN_CLUSTER_DIR='$CL_DIR' must be an absolute path" ;;
	esac
	[ "$CL_DIR" != / ] || die "DTPLAN_CLUSTER_DIR must not be /"
}

# resolve_inputs: checks and makes absolute the files given by the caller.
resolve_inputs() {
	local def node x
	def=$CLUSTER_TOP_SRCDIR/tests/data/hgx-h100-8gpu.xml
	if [ -z "$CL_NODE_XML" ]; then
		if [ -f "$def" ]; then
			CL_NODE_XML=$def
		else
			say "warning: $def not found: slurmd runs without HWLOC_XMLFILE" \
				"(set DTPLAN_NODE_XML=<file> or DTPLAN_NODE_XML=none)"
		fi
	elif [ "$CL_NODE_XML" = none ]; then
		CL_NODE_XML=
	else
		[[ $CL_NODE_XML = /* ]] || CL_NODE_XML=$PWD/$CL_NODE_XML
		for node in $(cluster_nodes); do
			x=$(node_xml "$node")
			[ -r "$x" ] || die "DTPLAN_NODE_XML: cannot read '$x' (for $node)"
		done
	fi
	if [ -n "$CL_PLUGIN" ]; then
		[[ $CL_PLUGIN = /* ]] || CL_PLUGIN=$PWD/$CL_PLUGIN
		[ -r "$CL_PLUGIN" ] || die "DTPLAN_PLUGIN: cannot read '$CL_PLUGIN'"
	fi
	if [ -n "$CL_JOB_SUBMIT_LUA" ]; then
		[ -r "$CL_JOB_SUBMIT_LUA" ] || die "DTPLAN_JOB_SUBMIT_LUA: cannot read '$CL_JOB_SUBMIT_LUA'"
	fi
}

# ----------------------------------------------------------------------
# Network
# ----------------------------------------------------------------------

# shape DEV RATE [NODE]: tbf on the egress of DEV (inside NODE's namespace
# when NODE is given).  RATE "none" or "0" leaves the link unshaped.
shape() {
	local dev=$1 rate=$2 node=${3:-}
	case $rate in none | 0 | '') return 0 ;; esac
	if [ -n "$node" ]; then
		in_node "$node" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$CL_BURST" latency 50ms
	else
		tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$CL_BURST" latency 50ms
	fi
}

# no_ipv6 DEV: no IPv6 (no router solicitations, no DAD) on DEV; best effort.
no_ipv6() { { echo 1 >"/proc/sys/net/ipv6/conf/$1/disable_ipv6"; } 2>/dev/null; return 0; }

net_up() {
	local sp=${CL_PREFIX}spine rb r node ns hv b chain=${CL_PREFIX}guard
	ip link add name "$sp" type bridge stp_state 0 forward_delay 0 || return 1
	no_ipv6 "$sp"
	ip addr add "$CL_CTLD_ADDR/16" dev "$sp" || return 1
	ip link set "$sp" up || return 1
	for ((r = 1; r <= CL_RACKS; r++)); do
		rb=${CL_PREFIX}rack$r
		ip link add name "$rb" type bridge stp_state 0 forward_delay 0 || return 1
		no_ipv6 "$rb"
		ip link set "$rb" up || return 1
		ip link add "${CL_PREFIX}u${r}r" type veth peer name "${CL_PREFIX}u${r}s" || return 1
		no_ipv6 "${CL_PREFIX}u${r}r"
		no_ipv6 "${CL_PREFIX}u${r}s"
		ip link set "${CL_PREFIX}u${r}r" master "$rb" up || return 1
		ip link set "${CL_PREFIX}u${r}s" master "$sp" up || return 1
		shape "${CL_PREFIX}u${r}r" "$CL_UPLINK_RATE" || return 1
		shape "${CL_PREFIX}u${r}s" "$CL_UPLINK_RATE" || return 1
	done
	mkdir -p /run/netns
	for node in $(cluster_nodes); do
		ns=$(node_netns "$node")
		hv=$ns
		rb=${CL_PREFIX}rack$(node_rack "$node")
		ip netns add "$ns" || return 1
		ip link add "$hv" type veth peer name eth0 netns "$ns" || return 1
		no_ipv6 "$hv"
		ip link set "$hv" master "$rb" up || return 1
		in_node "$node" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6' 2>/dev/null
		in_node "$node" ip link set lo up || return 1
		in_node "$node" ip addr add "$(node_addr "$node")/16" dev eth0 || return 1
		in_node "$node" ip link set eth0 up || return 1
		shape "$hv" "$CL_RACK_RATE" || return 1
		shape eth0 "$CL_RACK_RATE" "$node" || return 1
	done
	# Belt and braces: bridged traffic stays on the bridges; nothing is routed
	# between them and any other interface.  (With br_netfilter, bridged frames
	# pass FORWARD with the bridge as both input and output.)
	if command -v iptables >/dev/null 2>&1 && iptables -N "$chain" 2>/dev/null; then
		for b in "$sp" $(for ((r = 1; r <= CL_RACKS; r++)); do echo "${CL_PREFIX}rack$r"; done); do
			iptables -A "$chain" -i "$b" -o "$b" -j ACCEPT &&
				iptables -A "$chain" -i "$b" -j DROP &&
				iptables -A "$chain" -o "$b" -j DROP || return 1
		done
		iptables -I FORWARD 1 -j "$chain" || return 1
	else
		say "warning: could not create the iptables chain $chain (isolation relies on routes only)"
	fi
	return 0
}

# ----------------------------------------------------------------------
# Configuration files
# ----------------------------------------------------------------------

write_configs() {
	local etc=$CL_DIR/etc node r g nodes v
	mkdir -p "$etc" "$CL_DIR/state" "$CL_DIR/run" "$CL_DIR/log" "$CL_DIR/jobs" "$CL_DIR/dev" || return 1
	for node in $(cluster_nodes); do mkdir -p "$CL_DIR/spool/$node" || return 1; done

	{
		echo "# slurm.conf of the dtplan test cluster (generated by tests/cluster/cluster.sh)"
		echo "ClusterName=dtplan"
		echo "SlurmctldHost=$(hostname -s)($CL_CTLD_ADDR)"
		echo "SlurmctldPort=$CL_CTLD_PORT"
		echo "SlurmdPort=$CL_SLURMD_PORT"
		echo "SlurmUser=root"
		echo "SlurmdUser=root"
		echo "AuthType=auth/munge"
		echo "AuthInfo=socket=$CL_MUNGE_SOCKET"
		echo "CredType=cred/munge"
		echo "StateSaveLocation=$CL_DIR/state"
		echo "SlurmdSpoolDir=$CL_DIR/spool/%n"
		echo "SlurmctldPidFile=$CL_DIR/run/slurmctld.pid"
		echo "SlurmdPidFile=$CL_DIR/run/slurmd-%n.pid"
		echo "SlurmctldLogFile=$CL_DIR/log/slurmctld.log"
		echo "SlurmdLogFile=$CL_DIR/log/slurmd-%n.log"
		echo "SlurmctldDebug=${DTPLAN_CLUSTER_DEBUG:-info}"
		echo "SlurmdDebug=${DTPLAN_CLUSTER_DEBUG:-info}"
		echo "ProctrackType=proctrack/linuxproc"
		echo "TaskPlugin=task/none"
		echo "SelectType=select/cons_tres"
		echo "SelectTypeParameters=CR_Core"
		echo "SchedulerType=sched/backfill"
		if [ "$CL_ACCOUNTING" = 1 ]; then
			echo "AccountingStorageType=accounting_storage/slurmdbd"
			echo "AccountingStorageHost=$CL_CTLD_ADDR"
			echo "AccountingStoragePort=$CL_DBD_PORT"
			# for slurmdbd, the munge socket of its connections (slurm.conf(5))
			echo "AccountingStoragePass=$CL_MUNGE_SOCKET"
		fi
		echo "JobAcctGatherType=jobacct_gather/none"
		echo "JobCompType=jobcomp/none"
		echo "MpiDefault=none"
		echo "PrologFlags=Alloc"
		echo "PlugStackConfig=$etc/plugstack.conf"
		echo "TopologyPlugin=topology/tree"
		echo "SlurmdParameters=config_overrides"
		echo "ReturnToService=2"
		echo "KillWait=2"
		echo "MinJobAge=600"
		echo "InactiveLimit=0"
		echo "SlurmdTimeout=60"
		echo "SlurmctldTimeout=60"
		[ "$CL_GPUS" -gt 0 ] && echo "GresTypes=gpu"
		[ -n "$CL_NODE_XML" ] && echo "TaskProlog=$etc/task_prolog.sh"
		[ -n "$CL_JOB_SUBMIT_LUA" ] && echo "JobSubmitPlugins=lua"
		for node in $(cluster_nodes); do
			printf 'NodeName=%s NodeHostname=%s NodeAddr=%s CPUs=%s' \
				"$node" "$node" "$(node_addr "$node")" "$CL_CPUS"
			[ "$CL_GPUS" -gt 0 ] && printf ' Gres=gpu:%s' "$CL_GPUS"
			printf ' State=UNKNOWN\n'
		done
		echo "PartitionName=dtplan Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
	} >"$etc/slurm.conf" || return 1

	{
		echo "# topology.conf: one leaf switch per rack under one spine"
		for ((r = 1; r <= CL_RACKS; r++)); do
			nodes=$(cluster_nodes | while read -r node; do
				[ "$(node_rack "$node")" = "$r" ] && echo "$node"
			done | paste -sd, -)
			echo "SwitchName=leaf$r Nodes=$nodes"
		done
		echo "SwitchName=spine Switches=$(for ((r = 1; r <= CL_RACKS; r++)); do echo "leaf$r"; done | paste -sd, -)"
	} >"$etc/topology.conf" || return 1

	{
		echo "127.0.0.1 localhost"
		echo "$CL_CTLD_ADDR $(hostname -s)"
		for node in $(cluster_nodes); do echo "$(node_addr "$node") $node"; done
	} >"$etc/hosts" || return 1

	# slurmd 24.05+ loads a cgroup plugin even with proctrack/linuxproc and
	# task/none, and dies where /sys/fs/cgroup is not mounted (a chroot);
	# CgroupPlugin=disabled is 24.05's, older releases refuse it.
	v=$(slurm_version) || v=
	[ -n "$v" ] || { say "cannot tell Slurm's version from slurmd -V"; return 1; }
	if [ "$v" -ge 2405 ]; then
		echo "CgroupPlugin=disabled" >"$etc/cgroup.conf" || return 1
	fi

	: >"$etc/gres.conf"
	if [ "$CL_GPUS" -gt 0 ]; then
		# Slurm 22.05 drops GPUs without device files: one character device each.
		for ((g = 0; g < CL_GPUS; g++)); do
			mknod -m 666 "$CL_DIR/dev/nvidia$g" c 195 "$g" || return 1
		done
		echo "Name=gpu File=$CL_DIR/dev/nvidia[0-$((CL_GPUS - 1))]" >"$etc/gres.conf"
	fi

	if [ -n "$CL_PLUGIN" ]; then
		echo "optional $CL_PLUGIN $(cluster_probe_args) $CL_PLUGIN_ARGS" >"$etc/plugstack.conf"
	else
		echo "# no SPANK plugin (set DTPLAN_PLUGIN to load spank_dtplan.so)" >"$etc/plugstack.conf"
	fi

	if [ -n "$CL_JOB_SUBMIT_LUA" ]; then
		cp "$CL_JOB_SUBMIT_LUA" "$etc/job_submit.lua" || return 1
	fi

	if [ -n "$CL_NODE_XML" ]; then
		# Tasks see their node's fake hardware too (lstopo in a job).
		cat >"$etc/task_prolog.sh" <<-EOF || return 1
			#!/bin/sh
			# TaskProlog: gives every task its node's hwloc XML.
			x='$CL_NODE_XML'
			echo "export HWLOC_XMLFILE=\$(printf '%s' "\$x" | sed "s/%n/\$SLURMD_NODENAME/g")"
		EOF
		chmod 755 "$etc/task_prolog.sh"
	fi
	return 0
}

# ----------------------------------------------------------------------
# Daemons
# ----------------------------------------------------------------------

munge_up() {
	local m=$CL_DIR/munge i
	mkdir -p "$m/key" "$m/run" "$m/log" || return 1
	chmod 755 "$m" "$m/run" "$m/log"
	chmod 700 "$m/key"
	dd if=/dev/urandom of="$m/key/munge.key" bs=1024 count=1 status=none || return 1
	chmod 400 "$m/key/munge.key"
	env -i PATH="$SYSPATH" munged --socket="$CL_MUNGE_SOCKET" --key-file="$m/key/munge.key" \
		--pid-file="$m/run/munged.pid" --log-file="$m/log/munged.log" \
		--seed-file="$m/log/munged.seed" || return 1
	for ((i = 0; i < 50; i++)); do
		if [ -S "$CL_MUNGE_SOCKET" ] &&
			munge -n -S "$CL_MUNGE_SOCKET" 2>/dev/null | unmunge -S "$CL_MUNGE_SOCKET" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	say "munged did not answer on $CL_MUNGE_SOCKET"
	return 1
}

# ----------------------------------------------------------------------
# Accounting: a MariaDB of the cluster's own (its datadir, socket and port
# on 127.0.0.1 in $CL_DIR/db, not the system's service) and slurmdbd on it
# ----------------------------------------------------------------------

accounting_configs() {
	local etc=$CL_DIR/etc db=$CL_DIR/db pass
	mkdir -p "$db/data" || return 1
	chmod 700 "$db"
	pass=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n') || return 1
	cat >"$etc/my.cnf" <<-EOF || return 1
		# my.cnf of the test cluster's MariaDB (generated by tests/cluster/cluster.sh)
		[mysqld]
		datadir=$db/data
		socket=$db/mysqld.sock
		pid-file=$CL_DIR/run/mariadbd.pid
		log-error=$CL_DIR/log/mariadbd.log
		port=$CL_DB_PORT
		bind-address=127.0.0.1
		skip-name-resolve
		user=root
		skip-log-bin
		innodb_buffer_pool_size=64M
		innodb_log_file_size=16M
		innodb_lock_wait_timeout=900
		innodb_flush_log_at_trx_commit=0
		init-file=$etc/db-init.sql
	EOF
	# The database is made here, not by slurmdbd: slurmdbd's first connect
	# would fail on a missing database, and libmariadb 3.4 (Debian 13, sid)
	# forgets its column limit on a handle whose connect failed, so
	# slurmdbd's next query is refused (README.md, "Accounting on Debian 13
	# and sid").
	cat >"$etc/db-init.sql" <<-EOF || return 1
		CREATE DATABASE IF NOT EXISTS slurm_acct_db;
		CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
	EOF
	cat >"$etc/slurmdbd.conf" <<-EOF || return 1
		# slurmdbd.conf of the dtplan test cluster (generated by tests/cluster/cluster.sh)
		AuthType=auth/munge
		AuthInfo=socket=$CL_MUNGE_SOCKET
		DbdHost=$(hostname -s)
		DbdAddr=$CL_CTLD_ADDR
		DbdPort=$CL_DBD_PORT
		SlurmUser=root
		PidFile=$CL_DIR/run/slurmdbd.pid
		LogFile=$CL_DIR/log/slurmdbd.log
		DebugLevel=${DTPLAN_CLUSTER_DEBUG:-info}
		StorageType=accounting_storage/mysql
		StorageHost=127.0.0.1
		StoragePort=$CL_DB_PORT
		StorageUser=slurm
		StoragePass=$pass
		StorageLoc=slurm_acct_db
	EOF
	chmod 600 "$etc/db-init.sql" "$etc/slurmdbd.conf"
}

# accounting_up: MariaDB, slurmdbd on it, and the cluster registered, each
# wait bounded by CL_TIMEOUT.
accounting_up() {
	local i n=$((CL_TIMEOUT * 10)) my=$CL_DIR/etc/my.cnf t0 end
	t0=$(now_ms)
	end=$((t0 + CL_TIMEOUT * 1000))
	accounting_configs || return 1
	env -i PATH="$SYSPATH" mariadb-install-db --defaults-file="$my" --skip-test-db \
		--auth-root-authentication-method=socket >"$CL_DIR/log/mariadb-install-db.log" 2>&1 ||
		{ say "mariadb-install-db failed (see $CL_DIR/log/mariadb-install-db.log)"; return 1; }
	env -i PATH="$SYSPATH" SLURM_CONF="$CL_CONF" setsid mariadbd --defaults-file="$my" </dev/null >/dev/null 2>&1 &
	for ((i = 0; i < n; i++)); do
		[ -S "$CL_DIR/db/mysqld.sock" ] && break
		sleep 0.1
	done
	[ "$i" -lt "$n" ] || { say "MariaDB did not open $CL_DIR/db/mysqld.sock within ${CL_TIMEOUT}s"; return 1; }
	env -i PATH="$SYSPATH" SLURM_CONF="$CL_CONF" slurmdbd || return 1
	# each try bounded too: a client that cannot reach slurmdbd retries
	until SLURM_CONF=$CL_CONF timeout 5 sacctmgr -n -P show cluster >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$end" ] || { say "slurmdbd did not answer within ${CL_TIMEOUT}s"; return 1; }
		sleep 0.1
	done
	SLURM_CONF=$CL_CONF timeout 10 sacctmgr -i add cluster dtplan >/dev/null ||
		{ say "sacctmgr add cluster dtplan failed"; return 1; }
	say "accounting: MariaDB and slurmdbd up in $(($(now_ms) - t0)) ms"
}

slurmctld_up() {
	local i
	env -i PATH="$SYSPATH" SLURM_CONF="$CL_CONF" slurmctld -f "$CL_CONF" || return 1
	for ((i = 0; i < 100; i++)); do
		SLURM_CONF=$CL_CONF scontrol ping 2>/dev/null | grep -q 'is UP' && return 0
		sleep 0.1
	done
	say "slurmctld did not answer within 10 s"
	return 1
}

# slurmd_start NODE: NODE's slurmd, in its namespace.
slurmd_start() {
	local node=$1 ns xml
	ns=$(node_netns "$node")
	xml=$(node_xml "$node")
	# Not `ip netns exec`: it remounts /sys and slurmd 22.05 then fails
	# to find /sys/fs/cgroup.  A UTS namespace gives each node its
	# hostname, a mount namespace its own /etc/hosts (node names resolve
	# inside the cluster: MASTER_ADDR=node1 works).
	# shellcheck disable=SC2016
	env -i PATH="$SYSPATH" SLURM_CONF="$CL_CONF" ${xml:+HWLOC_XMLFILE="$xml"} \
		nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private \
		sh -c 'hostname "$1" && mount --bind "$3" /etc/hosts &&
			exec slurmd -f "$2" -N "$1"' sh "$node" "$CL_CONF" "$CL_DIR/etc/hosts"
}

slurmd_up() {
	local node
	for node in $(cluster_nodes); do
		slurmd_start "$node" || return 1
	done
	return 0
}

# ----------------------------------------------------------------------
# up / down / status / env
# ----------------------------------------------------------------------

# leftovers: prints (indented) what of a cluster with this configuration exists.
leftovers() {
	local p ns
	for p in $(our_pids | sort -un); do
		proc_alive "$p" && echo "  process $p ($(cat "/proc/$p/comm" 2>/dev/null))"
	done
	ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CL_PREFIX}" | sed 's/^/  netns /'
	ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
		grep "^${CL_PREFIX}" | sed 's/^/  link /'
	if command -v iptables >/dev/null 2>&1 && iptables -S "${CL_PREFIX}guard" >/dev/null 2>&1; then
		echo "  iptables chain ${CL_PREFIX}guard"
	fi
	[ -e "$CL_DIR" ] && echo "  folder $CL_DIR"
	return 0
}

# our_pids: every process of the cluster: all processes in the node
# namespaces, and the daemons started with this cluster's files.
our_pids() {
	local ns p cmd comm
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CL_PREFIX}"); do
		ip netns pids "$ns" 2>/dev/null
	done
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		{ read -r comm <"/proc/$p/comm"; } 2>/dev/null || continue
		# Debian's daemons are slurmctld-wlm, slurmd-wlm, ... on disk: a
		# daemon that re-executes itself (slurmctld 24.11+ on scontrol
		# reconfigure) takes that name (issue 24)
		case $comm in
		munged | slurmctld | slurmctld-* | slurmd | slurmd-* | slurmstepd | slurmstepd-*) ;;
		mariadbd | slurmdbd)
			# no configuration file in their arguments: started with
			# this cluster's SLURM_CONF in their environment
			{ tr '\0' '\n' <"/proc/$p/environ" | grep -qxF "SLURM_CONF=$CL_CONF"; } 2>/dev/null &&
				echo "$p"
			continue
			;;
		*) continue ;;
		esac
		cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)
		case $cmd in
		*"$CL_CONF"* | *"$CL_MUNGE_SOCKET"*) echo "$p" ;;
		esac
	done
}

# stop_all: TERM every process of the cluster, KILL what is left after 1 s
# (slurmstepd ignores TERM).  A process counts as gone once it is a zombie:
# PID 1 may reap it late (see proc_alive).
stop_all() {
	local sig pids p i alive wait
	for sig in TERM KILL; do
		pids=$(our_pids | sort -un)
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086
		kill -s "$sig" $pids 2>/dev/null
		wait=10
		[ "$sig" = KILL ] && wait=50
		for ((i = 0; i < wait; i++)); do
			alive=""
			for p in $pids; do proc_alive "$p" && alive="$alive $p"; done
			[ -z "$alive" ] && break
			sleep 0.1
		done
	done
	for p in $(our_pids | sort -un); do proc_alive "$p" && return 1; done
	return 0
}

cmd_down() {
	local ns l chain=${CL_PREFIX}guard rest rc=0
	need_root
	stop_all || say "warning: some processes would not die"
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CL_PREFIX}"); do
		ip netns del "$ns" 2>/dev/null || say "warning: cannot delete netns $ns"
	done
	# Node veths went with their namespaces; then uplinks (both ends), then bridges.
	for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
		grep "^${CL_PREFIX}" | sort -r); do
		ip link del "$l" 2>/dev/null
	done
	if command -v iptables >/dev/null 2>&1 && iptables -S "$chain" >/dev/null 2>&1; then
		while iptables -D FORWARD -j "$chain" 2>/dev/null; do :; done
		iptables -F "$chain"
		iptables -X "$chain" || say "warning: cannot delete iptables chain $chain"
	fi
	if [ -e "$CL_DIR" ]; then
		if [ -f "$CL_DIR/.dtplan-cluster" ]; then
			rm -rf "$CL_DIR" || say "warning: cannot remove $CL_DIR"
		elif rmdir "$CL_DIR" 2>/dev/null; then
			:
		else
			say "warning: $CL_DIR is not a cluster folder (no .dtplan-cluster): left alone"
		fi
	fi
	rest=$(leftovers)
	if [ -n "$rest" ]; then
		say "down: left behind:"
		echo "$rest" >&2
		rc=1
	fi
	return $rc
}

# healthy: munged, slurmctld and every slurmd alive.
healthy() {
	local node
	proc_alive "$(cat "$CL_DIR/munge/run/munged.pid" 2>/dev/null)" || return 1
	proc_alive "$(cat "$CL_DIR/run/slurmctld.pid" 2>/dev/null)" || return 1
	if [ "$CL_ACCOUNTING" = 1 ]; then
		proc_alive "$(cat "$CL_DIR/run/mariadbd.pid" 2>/dev/null)" || return 1
		proc_alive "$(cat "$CL_DIR/run/slurmdbd.pid" 2>/dev/null)" || return 1
	fi
	for node in $(cluster_nodes); do
		proc_alive "$(cat "$CL_DIR/run/slurmd-$node.pid" 2>/dev/null)" || return 1
	done
	return 0
}

up_fail() {
	say "up failed: $*"
	cluster_dump_logs 30
	if [ "${DTPLAN_CLUSTER_KEEP:-0}" = 1 ]; then
		say "DTPLAN_CLUSTER_KEEP=1: leaving the cluster as it is for inspection"
	else
		cmd_down
	fi
	exit 1
}

cmd_up() {
	local t0 rest
	need_root
	check_tools
	t0=$(now_ms)
	if [ -f "$CL_DIR/.dtplan-cluster" ] && healthy; then
		die "a cluster is already up in $CL_DIR (run '$0 down' first)"
	fi
	if [ -e "$CL_DIR" ] && [ ! -f "$CL_DIR/.dtplan-cluster" ]; then
		die "$CL_DIR exists and is not a cluster folder: refusing to use it"
	fi
	rest=$(leftovers)
	if [ -n "$rest" ]; then
		say "cleaning a stale cluster:"
		echo "$rest" >&2
		cmd_down || die "cannot clean the stale cluster"
		cluster_config
	fi
	check_config
	resolve_inputs
	ip netns add "${CL_PREFIX}probe" 2>/dev/null || die "cannot create network namespaces here"
	ip netns del "${CL_PREFIX}probe"

	mkdir -p "$CL_DIR" || die "cannot create $CL_DIR"
	chmod 755 "$CL_DIR"
	: >"$CL_DIR/.dtplan-cluster"
	trap 'up_fail interrupted' INT TERM
	cluster_save_config
	export SLURM_CONF=$CL_CONF

	cd "$CL_DIR" || die "cannot enter $CL_DIR"
	net_up || up_fail "network setup"
	write_configs || up_fail "writing configuration files"
	munge_up || up_fail "munged"
	# DTPLAN_CLUSTER_ACCOUNTING=0: no slurmdbd (sacct and sacctmgr then have nothing)
	[ "$CL_ACCOUNTING" != 1 ] || accounting_up || up_fail "accounting (MariaDB, slurmdbd)"
	slurmctld_up || up_fail "slurmctld"
	slurmd_up || up_fail "slurmd"
	wait_nodes_idle "$CL_TIMEOUT" || up_fail "not all $CL_NODES nodes idle within ${CL_TIMEOUT}s"
	say "up: $CL_NODES nodes idle in $(($(now_ms) - t0)) ms ($CL_DIR)"
	say "clients: eval \"\$($0 env)\""
}

# daemon_by_cmdline slurmctld|slurmd@NODE: the pid of this cluster's live
# daemon by its command line, for when its pid file is behind: Slurm 24.05+
# re-executes slurmctld and slurmd on scontrol reconfigure, and until the
# new process has written that file (or if it never does) the file names
# the old one.  Issue 24's re-executed names, slurmctld-wlm and slurmd-wlm,
# included.
daemon_by_cmdline() {
	local want=$1 p comm cmd
	for p in $(our_pids | sort -un); do
		proc_alive "$p" || continue
		{ read -r comm <"/proc/$p/comm"; } 2>/dev/null || continue
		cmd=$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)
		case $want in
		slurmctld)
			case $comm in slurmctld | slurmctld-*) echo "$p" && return 0 ;; esac
			;;
		slurmd@*)
			case $comm in
			slurmd | slurmd-*)
				case " $cmd" in *" -N ${want#slurmd@} "*) echo "$p" && return 0 ;; esac
				;;
			esac
			;;
		esac
	done
	return 1
}

cmd_status() {
	local node p rc=0 pidf
	if [ ! -f "$CL_DIR/.dtplan-cluster" ]; then
		echo "no cluster in $CL_DIR"
		return 1
	fi
	echo "folder:   $CL_DIR"
	echo "nodes:    $CL_NODES in $CL_RACKS racks, links ${CL_RACK_RATE}, uplinks ${CL_UPLINK_RATE}"
	echo "hwloc:    ${CL_NODE_XML:-(none)}"
	echo "plugin:   ${CL_PLUGIN:-(none)} ${CL_PLUGIN_ARGS}"
	local db=""
	[ "$CL_ACCOUNTING" != 1 ] ||
		db="mariadbd:$CL_DIR/run/mariadbd.pid slurmdbd:$CL_DIR/run/slurmdbd.pid"
	# shellcheck disable=SC2086
	for pidf in munged:"$CL_DIR/munge/run/munged.pid" $db slurmctld:"$CL_DIR/run/slurmctld.pid" \
		$(for node in $(cluster_nodes); do echo "slurmd@$node:$CL_DIR/run/slurmd-$node.pid"; done); do
		p=$(cat "${pidf#*:}" 2>/dev/null)
		if proc_alive "$p"; then
			printf '%-16s pid %s\n' "${pidf%%:*}" "$p"
		elif p=$(daemon_by_cmdline "${pidf%%:*}") && [ -n "$p" ]; then
			printf '%-16s pid %s (pid file %s)\n' "${pidf%%:*}" "$p" \
				"$([ -e "${pidf#*:}" ] && echo stale || echo missing)"
		else
			printf '%-16s DOWN\n' "${pidf%%:*}"
			rc=1
		fi
	done
	SLURM_CONF=$CL_CONF sinfo -N -o '%N %T %c %G' 2>&1 || rc=1
	return $rc
}

cmd_env() {
	[ -f "$CL_DIR/.dtplan-cluster" ] || say "warning: no cluster in $CL_DIR (run '$0 up')"
	printf 'export DTPLAN_CLUSTER_DIR=%q\n' "$CL_DIR"
	printf 'export SLURM_CONF=%q\n' "$CL_CONF"
	printf 'export SBATCH_OUTPUT=%q\n' "$CL_DIR/jobs/slurm-%j.out"
	# shellcheck disable=SC2016
	printf 'export PATH=%q:"$PATH"\n' "$SYSPATH"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
slurmd)
	need_root
	case " $(cluster_nodes | tr '\n' ' ') " in
	*" ${2:-} "*) slurmd_start "$2" ;;
	*) die "slurmd: '${2:-}' is not a node of this cluster" ;;
	esac
	;;
-h | --help)
	sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//'
	;;
*)
	echo "Usage: $0 up|down|status|env|slurmd NODE" >&2
	exit 2
	;;
esac
