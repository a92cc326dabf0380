#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/run.sh: the end-to-end tests on a real Slurm cluster.
#
# Usage: tests/cluster/run.sh [BATS-ARGS...]
#
# Installs what is missing (Debian packages, as root), brings the cluster up
# (cluster.sh up), runs `bats tests/cluster/*.bats` (or bats with the given
# arguments) and brings the cluster down again, whatever happens.  Exits
# with bats' status, 77 (skip) without root or network namespaces.
#
# Environment: everything cluster.sh reads (see lib.sh), and
#   DTPLAN_CLUSTER_NO_INSTALL=1   never call apt-get
#   DTPLAN_PLUGIN                 default: plugin/.libs/spank_dtplan.so of the build tree, if built
#   DTPLAN_JOB_SUBMIT_LUA         default: etc/job_submit.lua (set it empty for none)
#   DTPLAN_NODE_XML               default: a link per node to tests/data/hgx-h100-8gpu.xml
#   top_builddir                  the build tree (default: the source tree)
set -u
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir

say() { echo "run.sh: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
secs() { echo $(($(date +%s) - $1)); }

[ "$(id -u)" = 0 ] || skip "needs root: it creates network namespaces and bridges and runs Slurm daemons"
unshare --net true 2>/dev/null || skip "no network namespaces here (unshare --net failed)"

# ----------------------------------------------------------------------
# Packages
# ----------------------------------------------------------------------
if [ "${DTPLAN_CLUSTER_NO_INSTALL:-0}" != 1 ]; then
	"$top_srcdir/tests/install-deps.sh" || { say "installing packages failed"; exit 1; }
fi

# ----------------------------------------------------------------------
# Cluster and tests
# ----------------------------------------------------------------------
if [ -z "${DTPLAN_PLUGIN:-}" ] && [ -f "$top_builddir/plugin/.libs/spank_dtplan.so" ]; then
	export DTPLAN_PLUGIN=$top_builddir/plugin/.libs/spank_dtplan.so
fi
say "plugin: ${DTPLAN_PLUGIN:-(none)}"
if [ -z "${DTPLAN_JOB_SUBMIT_LUA+set}" ] && [ -f "$top_srcdir/etc/job_submit.lua" ]; then
	export DTPLAN_JOB_SUBMIT_LUA=$top_srcdir/etc/job_submit.lua
fi
# Each node's hwloc XML is a link of its own (xml/nodeI.xml), so that a test
# can break one node's inventory (plugin.bats, "degraded").
xmldir=""
if [ -z "${DTPLAN_NODE_XML:-}" ] && [ -f "$top_srcdir/tests/data/hgx-h100-8gpu.xml" ]; then
	xmldir=$(mktemp -d /tmp/dtplan-xml.XXXXXX) || exit 1
	for ((i = 1; i <= ${DTPLAN_CLUSTER_RACKS:-2} * ${DTPLAN_CLUSTER_NODES_PER_RACK:-4}; i++)); do
		ln -s "$top_srcdir/tests/data/hgx-h100-8gpu.xml" "$xmldir/node$i.xml" || exit 1
	done
	export DTPLAN_NODE_XML=$xmldir/%n.xml
fi

t=$(date +%s)
# `up` cleans up after itself when it fails, and refuses (touching nothing)
# when a cluster is already up: only take the cluster down once it is ours.
"$here/cluster.sh" up || { [ -z "$xmldir" ] || rm -rf "$xmldir"; exit 1; }
say "cluster up in $(secs "$t") s"

# shellcheck disable=SC2317
cleanup() {
	local rc=$? t
	trap - EXIT INT TERM
	t=$(date +%s)
	"$here/cluster.sh" down || { [ "$rc" -ne 0 ] || rc=1; }
	[ -z "$xmldir" ] || rm -rf "$xmldir"
	say "cluster down in $(secs "$t") s"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t=$(date +%s)
if [ $# -gt 0 ]; then
	bats -T "$@"
else
	bats -T "$here"/*.bats
fi
rc=$?
say "bats finished in $(secs "$t") s with status $rc"
exit $rc
