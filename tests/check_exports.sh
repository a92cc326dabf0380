#!/bin/sh
# check_exports.sh: spank_dtplan.so exports only what Slurm looks up: the
# four variables of SPANK_PLUGIN() and slurm_spank_* callbacks.  Anything
# else (libdtplan, hwloc wrappers, plugin glue) must stay local so that it
# cannot clash with Slurm or another plugin.  Exit 77 (skip) without nm.
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
so="$top_builddir/plugin/.libs/spank_dtplan.so"
NM=${NM:-nm}

command -v "$NM" >/dev/null 2>&1 || { echo "SKIP: $NM not found"; exit 77; }
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }

# Defined dynamic symbols: "ADDRESS TYPE NAME", drop version nodes (type A).
syms=$("$NM" -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort)
[ -n "$syms" ] || { echo "FAIL: no exported symbols in $so"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -Ev '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$')
rc=0
if [ -n "$bad" ]; then
	echo "FAIL: unexpected exports:"; printf '  %s\n' $bad; rc=1
fi
for want in plugin_name plugin_type plugin_version spank_plugin_version \
	slurm_spank_init slurm_spank_init_post_opt slurm_spank_user_init \
	slurm_spank_task_init slurm_spank_job_prolog slurm_spank_exit; do
	printf '%s\n' "$syms" | grep -qx "$want" || { echo "FAIL: $want not exported"; rc=1; }
done
# Our own code must be linked in whole: an unresolved dtplan_ symbol would
# only show when Slurm loads the module.
undef=$("$NM" -D --undefined-only "$so" | awk '$2 ~ /^dtplan_/ { print $2 }')
if [ -n "$undef" ]; then
	echo "FAIL: unresolved:"; printf '  %s\n' $undef; rc=1
fi
# Slurm's symbols come from the host program, never from a linked libslurm.
if "$NM" -D "$so" >/dev/null 2>&1 && command -v objdump >/dev/null 2>&1 &&
	objdump -p "$so" | grep -q 'NEEDED.*libslurm'; then
	echo "FAIL: $so is linked with libslurm"; rc=1
fi
[ $rc -eq 0 ] && printf 'ok - %s exports only:\n' "$so" && printf '  %s\n' $syms
exit $rc
