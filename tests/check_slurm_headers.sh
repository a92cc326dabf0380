#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check_slurm_headers.sh: every plugin/*.c compiles with -Werror against the
# public headers of each Slurm release found in DTPLAN_SLURM_HEADERS
# (default: ../shared/slurm-headers beside the source tree), one folder per
# release: <dir>/<version>/slurm/spank.h, or <dir>/<version>/spank.h.
#
# Slurm loads a plugin only when it was built for the same major.minor, so
# the plugin has to build against each supported release; the runtime tests
# use only the distribution's one.  Compile only (-c -o /dev/null), with the
# project's include paths, config.h and warning flags; the release's headers
# come in with -isystem, as they do from /usr/include.  The release's
# SLURM_VERSION_NUMBER must match the folder's name, so that a stray
# <slurm/spank.h> elsewhere cannot stand in for it.
#
# Exit 77 (skip) when the folder is absent, 1 when any release fails.
# Environment: top_srcdir, top_builddir (a configured tree); CC, CFLAGS and
# DTPLAN_CFLAGS (the warning flags) default to the configured ones.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${DTPLAN_SLURM_HEADERS:=$top_srcdir/../shared/slurm-headers}"

dir=$DTPLAN_SLURM_HEADERS
[ -d "$dir" ] || { echo "SKIP: no Slurm header sets in $dir (set DTPLAN_SLURM_HEADERS)"; exit 77; }
for f in config.h Makefile; do
	[ -f "$top_builddir/$f" ] || { echo "FAIL: $top_builddir/$f not found (run configure)"; exit 1; }
done
# "NAME = value" of the configured Makefile.
configured() { sed -n "s/^$1 = //p" "$top_builddir/Makefile"; }
CC=${CC:-$(configured CC)}
CFLAGS=${CFLAGS-$(configured CFLAGS)}
DTPLAN_CFLAGS=${DTPLAN_CFLAGS:-$(configured DTPLAN_CFLAGS)}
flags="$CFLAGS $DTPLAN_CFLAGS"
case " $flags " in *" -Werror "*) ;; *) flags="$flags -Werror" ;; esac
echo "# $CC $flags"
sources=$(ls "$top_srcdir"/plugin/*.c 2>/dev/null)
[ -n "$sources" ] || { echo "FAIL: no plugin sources in $top_srcdir/plugin"; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# "22.05.11" -> 1443083 (SLURM_VERSION_NUM(22, 5, 11)); "" for other names.
version_number() {
	echo "$1" | awk -F. 'NF == 3 && $0 ~ /^[0-9]+\.[0-9]+\.[0-9]+$/ {
		print $1 * 65536 + $2 * 256 + $3 }'
}

# compile SRC [FLAG...]: SRC against the headers in $inc, its errors shown.
compile() {
	src=$1
	shift
	# shellcheck disable=SC2086 # flags are words
	$CC -DHAVE_CONFIG_H -I"$top_builddir" -I"$top_srcdir/lib" -I"$top_srcdir/probes" \
		-I"$top_srcdir/plugin" -isystem "$inc" $flags "$@" -c -o /dev/null "$src" \
		>"$tmp/out" 2>&1 && return 0
	sed 's/^/  /' "$tmp/out"
	return 1
}

rc=0 n=0
for rel in "$dir"/*/; do
	rel=${rel%/}
	name=$(basename "$rel")
	if [ -f "$rel/slurm/spank.h" ]; then
		inc=$rel
	elif [ -f "$rel/spank.h" ]; then
		# Headers at the top level: give them the slurm/ prefix the
		# sources (and the headers themselves) include them by.
		mkdir -p "$tmp/$name" && ln -s "$rel" "$tmp/$name/slurm"
		inc=$tmp/$name
	else
		echo "FAIL: $name: neither $rel/slurm/spank.h nor $rel/spank.h"
		rc=1
		continue
	fi
	n=$((n + 1))
	# The version the compiler actually sees.
	got=$(printf '#include <slurm/spank.h>\nSLURM_VERSION_NUMBER\n' |
		$CC -isystem "$inc" -E -P - 2>"$tmp/err" | tail -n 1 | tr -d ' ()')
	want=$(version_number "$name")
	case $got in
	0x[0-9a-fA-F]* | [1-9]*) ;;
	*) got="" ;;
	esac
	if [ -z "$got" ]; then
		echo "FAIL: $name: cannot read SLURM_VERSION_NUMBER:"
		sed 's/^/  /' "$tmp/err"
		rc=1
		continue
	fi
	if [ -n "$want" ] && [ $((got)) -ne "$want" ]; then
		printf 'FAIL: %s: headers say SLURM_VERSION_NUMBER %s, not %#x\n' "$name" "$got" "$want"
		rc=1
		continue
	fi
	bad=""
	for src in $sources; do
		compile "$src" || bad="$bad $(basename "$src")"
	done
	# core.c once more as dtplan_submit.so builds it (Makefile.am)
	compile "$top_srcdir/plugin/core.c" -DDTPLAN_CORE_SUBMIT ||
		bad="$bad core.c(-DDTPLAN_CORE_SUBMIT)"
	# and the unit tests' SPANK mock and driver, which include Slurm's
	# headers too (issue 24: the mock's hostlist_t broke from 23.11 on)
	for t in mock_spank.c test_plugin.c; do
		compile "$top_srcdir/tests/$t" -I"$top_srcdir/tests" -DDTPLAN_CORE_STATIC ||
			bad="$bad tests/$t"
	done
	if [ -n "$bad" ]; then
		echo "FAIL: Slurm $name ($got):$bad"
		rc=1
	else
		echo "ok - Slurm $name ($got): $(echo "$sources" | wc -w) plugin sources," \
			"core.c for dtplan_submit.so, the test mock and driver"
	fi
done
[ $n -gt 0 ] || { echo "FAIL: no header sets in $dir"; rc=1; }
exit $rc
