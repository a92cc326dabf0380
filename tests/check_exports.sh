#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_exports.sh: the plugin's two modules export only what is looked up.
#
# spank_dtplan.so: the four variables of SPANK_PLUGIN() and slurm_spank_*
# callbacks, which Slurm looks up; and it needs no library but the C
# library, so that a command without a --dt-* option loads nothing else.
# dtplan_core.so and dtplan_submit.so: dtspank__spank_core, which
# spank_dtplan.so looks up.
# Anything else (libdtplan, hwloc wrappers, plugin glue) must stay local so
# that it cannot clash with Slurm or another plugin.  Exit 77 (skip) without
# nm.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
shim="$top_builddir/plugin/.libs/spank_dtplan.so"
core="$top_builddir/plugin/.libs/dtplan_core.so"
submit="$top_builddir/plugin/.libs/dtplan_submit.so"
NM=${NM:-nm}

command -v "$NM" >/dev/null 2>&1 || { echo "SKIP: $NM not found"; exit 77; }
rc=0

# check SO ALLOWED-REGEX WANTED...: SO's defined dynamic symbols match
# ALLOWED and include every WANTED.
check() {
	so=$1 allowed=$2
	shift 2
	[ -f "$so" ] || { echo "FAIL: $so not built"; rc=1; return; }
	# Defined dynamic symbols: "ADDRESS TYPE NAME", drop version nodes (type A).
	syms=$("$NM" -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort)
	[ -n "$syms" ] || { echo "FAIL: no exported symbols in $so"; rc=1; return; }
	bad=$(printf '%s\n' "$syms" | grep -Ev "$allowed")
	if [ -n "$bad" ]; then
		echo "FAIL: unexpected exports in $so:"; printf '  %s\n' $bad; rc=1
	fi
	for want in "$@"; do
		printf '%s\n' "$syms" | grep -qx "$want" || { echo "FAIL: $want not exported by $so"; rc=1; }
	done
	# Our own code must be linked in whole: an unresolved dtplan_ symbol
	# would only show when Slurm loads the module.
	undef=$("$NM" -D --undefined-only "$so" | awk '$2 ~ /^dtplan_/ { print $2 }')
	if [ -n "$undef" ]; then
		echo "FAIL: unresolved in $so:"; printf '  %s\n' $undef; rc=1
	fi
	# Slurm's symbols come from the host program, never from a linked libslurm.
	if command -v objdump >/dev/null 2>&1 && objdump -p "$so" | grep -q 'NEEDED.*libslurm'; then
		echo "FAIL: $so is linked with libslurm"; rc=1
	fi
	[ $rc -eq 0 ] && printf 'ok - %s exports only:\n' "$so" && printf '  %s\n' $syms
}

check "$shim" '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$' \
	plugin_name plugin_type plugin_version spank_plugin_version \
	slurm_spank_init slurm_spank_init_post_opt slurm_spank_user_init \
	slurm_spank_task_init slurm_spank_job_prolog slurm_spank_exit
check "$core" '^dtspank__spank_core$' dtspank__spank_core
check "$submit" '^dtspank__spank_core$' dtspank__spank_core

# What a command without --dt-* loads: the shim's needs, the C library only.
if command -v objdump >/dev/null 2>&1 && [ -f "$shim" ]; then
	needed=$(objdump -p "$shim" | awk '$1 == "NEEDED" { print $2 }')
	# A sanitizer build (CI's) links the runtimes into every object, and
	# they bring libm: not the plugin's own needs.
	own='^(libc|libdl|ld-linux[^ ]*)\.so'
	if printf '%s\n' "$needed" | grep -Eq '^lib(a|ub)san\.so'; then
		own='^(libc|libdl|ld-linux[^ ]*|libasan|libubsan|libm)\.so'
	fi
	needed=$(printf '%s\n' "$needed" | grep -Ev "$own")
	if [ -n "$needed" ]; then
		echo "FAIL: $shim needs more than the C library:"; printf '  %s\n' $needed; rc=1
	else
		echo "ok - $shim needs only the C library"
	fi
fi
exit $rc
