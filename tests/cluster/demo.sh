#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/cluster/demo.sh: the dtplan plugin end to end on the test cluster.
#
# Usage: tests/cluster/demo.sh [EXTRA-SBATCH-ARGS...]
#
# Installs what is missing (tests/install-deps.sh), builds the tree when
# needed (tests/build.sh), brings the cluster up with the plugin from the
# build tree, submits
#   sbatch -N4 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model=llama3-70b
# whose batch script runs one srun task per GPU, waits for the job, prints its
# log (the plan, then one line per task with the layout it was given) and
# takes the cluster down again, whatever happens.
#
# Environment:
#   DTPLAN_PLUGIN       default: $top_builddir/plugin/.libs/spank_dtplan.so
#   DTPLAN_PLUGIN_ARGS  default: the cluster's topology.conf
#   DTPLAN_DEMO_MODEL   --dt-model value (default llama3-70b)
#   DTPLAN_DEMO_TORCH=1 tasks run torch_launch.py (gloo, CPU) instead of printing
#                       their variables: 32 ranks take about a minute on 2 cores
#   everything cluster.sh reads (see lib.sh)
set -u
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir

say() { echo "demo.sh: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "needs root (the test cluster runs in network namespaces)"; exit 1; }
# A fresh machine: packages, then the build (both are no-ops when done).
"$top_srcdir/tests/install-deps.sh" || exit 1
if [ -z "${DTPLAN_PLUGIN:-}" ] && [ "$top_builddir" = "$top_srcdir" ]; then
	"$top_srcdir/tests/build.sh" >/dev/null || { say "the build failed (run tests/build.sh)"; exit 1; }
fi
plugin=${DTPLAN_PLUGIN:-$top_builddir/plugin/.libs/spank_dtplan.so}
if [ ! -f "$plugin" ]; then
	say "no plugin at $plugin: is libslurm-dev installed? (./configure says)"
	exit 1
fi
export DTPLAN_PLUGIN=$plugin
# Slurm's switch tree, as a site would configure it.  The prolog measures
# every node (its environment is Slurm's own, without the emulated node's
# HWLOC_XMLFILE: cluster.sh gives the plugin node_xml= for that, with the
# cluster's munge_socket= and a spool_dir=).
cldir=${DTPLAN_CLUSTER_DIR:-/tmp/dtplan-cluster}
export DTPLAN_PLUGIN_ARGS=${DTPLAN_PLUGIN_ARGS-topology=$cldir/etc/topology.conf}
model=${DTPLAN_DEMO_MODEL:-llama3-70b}

"$here/cluster.sh" up || exit 1
# shellcheck disable=SC2317
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	"$here/cluster.sh" down || { [ "$rc" -ne 0 ] || rc=1; }
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

eval "$("$here/cluster.sh" env)"
# shellcheck source=tests/cluster/lib.sh
. "$here/lib.sh"
cluster_config
cd "$CL_DIR/jobs" || exit 1

if [ "${DTPLAN_DEMO_TORCH:-0}" = 1 ]; then
	task="exec /usr/bin/python3 $here/torch_launch.py"
else
	# shellcheck disable=SC2016
	task='echo "$(hostname) RANK=${RANK-} LOCAL_RANK=${LOCAL_RANK-} WORLD_SIZE=${WORLD_SIZE-}'
	# shellcheck disable=SC2016
	task=$task' TP=${DT_TP-}/${DT_TP_RANK-} PP=${DT_PP-}/${DT_PP_RANK-} DP=${DT_DP-}/${DT_DP_RANK-}"'
fi
cat >"$CL_DIR/jobs/demo-job.sh" <<EOF
#!/bin/sh
MASTER_ADDR=\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_ADDR MASTER_PORT=29500 GLOO_SOCKET_IFNAME=eth0
echo "== dtplan variables of the batch step =="
env | grep '^DT_' | sort
echo "== tasks =="
srun -K sh -c '$task'
EOF

args=(-N4 --ntasks-per-node=8 --gres=gpu:8 --dt-plan=auto --dt-model="$model" "$@")
say "sbatch ${args[*]} demo-job.sh"
id=$(sbatch --parsable "${args[@]}" "$CL_DIR/jobs/demo-job.sh") || { say "sbatch failed"; exit 1; }
id=${id%%;*}
submit_wait "$id" 300
rc=$?
echo "==== job $id: $(job_state "$id"), log $(job_field "$id" StdOut) ===="
job_log "$id"
exit $rc
