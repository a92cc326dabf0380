#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_plugin_load.sh: what a command loads with spank_dtplan.so in its
# plugstack.conf.  Without a --dt-* option: the plugin alone (no core,
# hwloc or Jansson); with one, the option's callback loads the submit side's
# core, dtplan_submit.so, from the plugin's folder, and it checks the value:
# with Jansson, but not the job's core (dtplan_core.so), hwloc or libmunge.
# Runs bench/bench_plugin_load (stubbed Slurm functions, fresh processes).
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
bench="$top_builddir/bench/bench_plugin_load"
so="$(cd "$top_builddir" && pwd)/plugin/.libs/spank_dtplan.so"
[ -x "$bench" ] || { echo "FAIL: $bench not built"; exit 1; }
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
rc=0

out=$("$bench" -n 3 -a default=off -a policy=warn "$so") || { echo "FAIL: $out"; exit 1; }
if printf '%s\n' "$out" | grep -Eq 'dtplan_core|dtplan_submit|libhwloc|libjansson|libcurl'; then
	echo "FAIL: without --dt-* options the plugin loaded more than itself:"; echo "$out"; rc=1
else
	echo "ok - without --dt-* options: spank_dtplan.so alone"
fi

out=$("$bench" -n 3 -a default=off -o dt-plan=auto -o dt-model=7B "$so") ||
	{ echo "FAIL: $out"; exit 1; }
for want in /dtplan_submit.so libjansson; do
	printf '%s\n' "$out" | grep -q -- "$want" ||
		{ echo "FAIL: --dt-plan=auto --dt-model=7B did not load $want:"; echo "$out"; rc=1; }
done
# A submission measures nothing and authenticates nothing: no probes (the
# job's core), hwloc or libmunge.  libcurl (and its TLS, Kerberos, LDAP, ...)
# only when a transfer is made, in the job (probes/http.c opens it with
# dlopen()).
for unwanted in /dtplan_core.so libhwloc libmunge libcurl; do
	if printf '%s\n' "$out" | grep -q -- "$unwanted"; then
		echo "FAIL: --dt-plan=auto --dt-model=7B loaded $unwanted:"; echo "$out"; rc=1
	fi
done
[ $rc -eq 0 ] && echo "ok - with --dt-* options: dtplan_submit.so from the plugin's folder," \
	"no dtplan_core.so, hwloc, libmunge or libcurl"

# A bad value is refused by the core, through the plugin's callback.
if "$bench" -n 1 -o dt-model=nosuch-99z "$so" >/dev/null 2>&1; then
	echo "FAIL: --dt-model=nosuch-99z was accepted"; rc=1
else
	echo "ok - a bad --dt-model is refused"
fi
# So are --dt-train keys that contradict each other (dtplan_submit.so's checks).
if "$bench" -n 1 -o dt-train=seq=4096,recompute=fine "$so" >/dev/null 2>&1; then
	echo "FAIL: --dt-train=seq=4096,recompute=fine (DeepSpeed) was accepted"; rc=1
else
	echo "ok - recompute=fine without framework=megatron is refused at submission"
fi
"$bench" -n 1 -o dt-train=seq=4096,recompute=fine,framework=megatron "$so" >/dev/null 2>&1 ||
	{ echo "FAIL: --dt-train=seq=4096,recompute=fine,framework=megatron was refused"; rc=1; }
exit $rc
