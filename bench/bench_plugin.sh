#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/bench_plugin.sh: what the dtplan SPANK plugin adds to sbatch and to an
# srun step launch, measured on the test cluster (tests/cluster).
#
# Usage: sudo bench/bench_plugin.sh
#
# Brings up its own test cluster (own folder, prefix, network and port unless
# the DTPLAN_CLUSTER_* variables say otherwise), then in the same run:
#   sbatch  N=200 submissions (--hold, -N4 --gres=gpu:8, never started) with
#           an empty plugstack.conf and N=200 with the plugin loaded and
#           --dt-plan=auto --dt-model=llama3-70b (option checks and preview),
#           alternating, and N=200 with the plugin loaded but no --dt option
#           (spank_dtplan.so alone: neither core, hwloc nor Jansson is
#           loaded then), and N=200 with bench/spank_null.so, which registers
#           the same options and does nothing, with the same options: what
#           Slurm itself spends on a plugin's options.  The ratio of the
#           first two medians should stay under 1.05, that of the idle one
#           to the first under 1.03; the ratio of dtplan's to the null
#           plugin's is printed too (dtplan's own share), without a target.
#   srun    N=10 steps (srun -N4 -n32 true) timed inside a batch job, without
#           the plugin and with it (the step reads the plan file and sets every
#           task's ranks); the medians' difference should stay under 50 ms.
# Prints a table; exits 1 when a target is missed, 77 without root or
# without network namespaces.  Not part of make check.
#
# Environment: DTPLAN_PLUGIN (default: plugin/.libs/spank_dtplan.so of the
# build tree), BENCH_SBATCH_N (200), BENCH_SRUN_N (10), and what cluster.sh reads.
set -u
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir
cluster=$top_srcdir/tests/cluster

say() { echo "bench_plugin.sh: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "SKIP: needs root (the test cluster)"; exit 77; }
unshare --net true 2>/dev/null || { say "SKIP: no network namespaces"; exit 77; }
plugin=${DTPLAN_PLUGIN:-$top_builddir/plugin/.libs/spank_dtplan.so}
[ -f "$plugin" ] || { say "no plugin at $plugin: build it first (make)"; exit 1; }
export DTPLAN_PLUGIN=$plugin
export DTPLAN_CLUSTER_DIR=${DTPLAN_CLUSTER_DIR:-/tmp/dtplan-bench}
export DTPLAN_CLUSTER_PREFIX=${DTPLAN_CLUSTER_PREFIX:-dtb-}
export DTPLAN_CLUSTER_NET=${DTPLAN_CLUSTER_NET:-10.217}
export DTPLAN_CLUSTER_CTLD_PORT=${DTPLAN_CLUSTER_CTLD_PORT:-6857}
sbatch_n=${BENCH_SBATCH_N:-200}
srun_n=${BENCH_SRUN_N:-10}

"$cluster/cluster.sh" up || exit 1
# shellcheck disable=SC2317
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	"$cluster/cluster.sh" down || { [ "$rc" -ne 0 ] || rc=1; }
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

eval "$("$cluster/cluster.sh" env)"
# shellcheck source=tests/cluster/lib.sh
. "$cluster/lib.sh"
cluster_config
cd "$CL_DIR/jobs" || exit 1
plugstack=$CL_DIR/etc/plugstack.conf
with_plugin() {
	echo "optional $CL_PLUGIN topology=$CL_DIR/etc/topology.conf $(cluster_probe_args)" >"$plugstack"
}
without_plugin() { echo "# no SPANK plugin" >"$plugstack"; }
null_so=$top_builddir/bench/.libs/spank_null.so
[ -f "$null_so" ] || { say "no $null_so: build it first (make)"; exit 1; }
with_null() { echo "optional $null_so" >"$plugstack"; }
now_ns() { date +%s%N; }

# stats FILE: "N median mean" of the numbers (ms) in FILE.
stats() {
	sort -g "$1" | awk '{ v[NR] = $1; s += $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		      printf "%d %.2f %.2f\n", NR, m, s / NR }'
}

# ---------------------------------------------------------------- sbatch
: >"$CL_DIR/sbatch.off"
: >"$CL_DIR/sbatch.on"
: >"$CL_DIR/sbatch.idle"
: >"$CL_DIR/sbatch.null"
common=(--parsable --hold -N4 --gres=gpu:8 --wrap true)
# One of each first, unmeasured: page cache, munge, slurmctld warm-up.
without_plugin
sbatch "${common[@]}" >/dev/null || exit 1
with_plugin
sbatch "${common[@]}" --dt-plan=auto --dt-model=llama3-70b >/dev/null 2>&1 || exit 1
for ((i = 0; i < sbatch_n; i++)); do
	without_plugin
	t=$(now_ns)
	sbatch "${common[@]}" >/dev/null || exit 1
	echo "$((($(now_ns) - t) / 1000))" | awk '{ print $1 / 1000 }' >>"$CL_DIR/sbatch.off"
	with_plugin
	t=$(now_ns)
	sbatch "${common[@]}" --dt-plan=auto --dt-model=llama3-70b >/dev/null 2>&1 || exit 1
	echo "$((($(now_ns) - t) / 1000))" | awk '{ print $1 / 1000 }' >>"$CL_DIR/sbatch.on"
	t=$(now_ns)
	sbatch "${common[@]}" >/dev/null || exit 1
	echo "$((($(now_ns) - t) / 1000))" | awk '{ print $1 / 1000 }' >>"$CL_DIR/sbatch.idle"
	with_null
	t=$(now_ns)
	sbatch "${common[@]}" --dt-plan=auto --dt-model=llama3-70b >/dev/null 2>&1 || exit 1
	echo "$((($(now_ns) - t) / 1000))" | awk '{ print $1 / 1000 }' >>"$CL_DIR/sbatch.null"
done
scancel --user=root
cancel_all_wait 30 || exit 1

# ---------------------------------------------------------------- srun
cat >"$CL_DIR/jobs/bench-steps.sh" <<EOF
#!/bin/sh
srun -N4 -n32 true
i=0
while [ \$i -lt $srun_n ]; do
	t=\$(date +%s%N)
	srun -N4 -n32 true || exit 1
	echo "STEP_US \$(((\$(date +%s%N) - t) / 1000))"
	i=\$((i + 1))
done
EOF
steps() {
	local out=$1 id
	shift
	id=$(sbatch --parsable -N4 --ntasks-per-node=8 --gres=gpu:8 "$@" \
		"$CL_DIR/jobs/bench-steps.sh" 2>/dev/null) || return 1
	submit_wait "$id" 300 || { job_log "$id" >&2; return 1; }
	job_log "$id" | awk '/^STEP_US / { print $2 / 1000 }' >"$out"
	[ "$(wc -l <"$out")" -eq "$srun_n" ] || { job_log "$id" >&2; return 1; }
}
without_plugin
steps "$CL_DIR/srun.off" || exit 1
with_plugin
steps "$CL_DIR/srun.on" --dt-plan=auto --dt-model=llama3-70b || exit 1
id=$(squeue -h -t all -o %i | sort -n | tail -n 1)
rank_lines=$(job_log "$id" | grep -c 'rank environment not set')

# ---------------------------------------------------------------- table
read -r n_off med_off mean_off < <(stats "$CL_DIR/sbatch.off")
read -r n_on med_on mean_on < <(stats "$CL_DIR/sbatch.on")
read -r n_idle med_idle mean_idle < <(stats "$CL_DIR/sbatch.idle")
read -r n_null med_null mean_null < <(stats "$CL_DIR/sbatch.null")
read -r s_off smed_off smean_off < <(stats "$CL_DIR/srun.off")
read -r s_on smed_on smean_on < <(stats "$CL_DIR/srun.on")
ratio=$(awk -v a="$med_on" -v b="$med_off" 'BEGIN { printf "%.3f", a / b }')
idle_ratio=$(awk -v a="$med_idle" -v b="$med_off" 'BEGIN { printf "%.3f", a / b }')
null_ratio=$(awk -v a="$med_null" -v b="$med_off" 'BEGIN { printf "%.3f", a / b }')
own_ratio=$(awk -v a="$med_on" -v b="$med_null" 'BEGIN { printf "%.3f", a / b }')
diff_ms=$(awk -v a="$smed_on" -v b="$smed_off" 'BEGIN { printf "%.1f", a - b }')
ok_sbatch=$(awk -v r="$ratio" 'BEGIN { print (r < 1.05) ? "ok" : "OVER" }')
ok_srun=$(awk -v d="$diff_ms" 'BEGIN { print (d < 50) ? "ok" : "OVER" }')
ok_idle=$(awk -v r="$idle_ratio" 'BEGIN { print (r <= 1.03) ? "ok" : "OVER" }')

printf '%-44s %4s %11s %11s\n' "measurement" N "median ms" "mean ms"
printf '%-44s %4s %11s %11s\n' "sbatch, plugstack empty" "$n_off" "$med_off" "$mean_off"
printf '%-44s %4s %11s %11s\n' "sbatch, plugin loaded, no --dt options" "$n_idle" "$med_idle" "$mean_idle"
printf '%-44s %4s %11s %11s\n' "sbatch, plugin, --dt-plan=auto --dt-model" "$n_on" "$med_on" "$mean_on"
printf '%-44s %4s %11s %11s\n' "sbatch, null plugin, the same options" "$n_null" "$med_null" \
	"$mean_null"
printf '%-44s %4s %11s %11s\n' "srun -N4 -n32 step, plugstack empty" "$s_off" "$smed_off" "$smean_off"
printf '%-44s %4s %11s %11s\n' "srun -N4 -n32 step, plugin, planned job" "$s_on" "$smed_on" "$smean_on"
echo
printf 'sbatch ratio (medians): %s   target < 1.05   %s\n' "$ratio" "$ok_sbatch"
printf '  of which Slurm, for any plugin with these options: %s; dtplan over that: %s\n' \
	"$null_ratio" "$own_ratio"
printf 'sbatch without --dt options, ratio (medians): %s   target <= 1.03   %s\n' "$idle_ratio" \
	"$ok_idle"
printf 'srun step difference (medians): %s ms   target < 50 ms   %s\n' "$diff_ms" "$ok_srun"
[ "$rank_lines" -eq 0 ] ||
	echo "note: $rank_lines node(s) logged 'rank environment not set': the steps ran without per-task ranks"
[ "$ok_sbatch" = ok ] && [ "$ok_srun" = ok ] && [ "$ok_idle" = ok ]
