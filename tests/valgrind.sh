#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/valgrind.sh: runs the cmocka unit tests and the fuzzing corpus replay
# (fuzz/replay) under valgrind's memcheck: any invalid access, use of
# uninitialised memory or leak (definite or possible) fails, in the test
# process and in the children it forks (the hwloc discovery child among
# them: valgrind follows fork() on its own; --child-silent-after-fork=no
# shows what it finds there, and a child's own error exit fails the call
# that forked it).  Programs the tests exec (sh, rm) are not traced.  The
# CLI and cluster tests are shell scripts and are not run here.
#
# Usage: tests/valgrind.sh [-j JOBS] [PROGRAM...]  (default: every unit test)
# Run from the build tree after `make check` has built the programs.
# Exit status: 0 clean, 1 when a program fails, 77 without valgrind.
set -u

# One program (called back through xargs): its output in $logs/NAME.log,
# "NAME rc seconds" on stdout.
if [ "${1:-}" = --one ]; then
	name=$(basename "$2")
	start=$(date +%s)
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
		--show-leak-kinds=definite,possible --trace-children=no \
		--child-silent-after-fork=no --num-callers=30 \
		--suppressions="$top_srcdir/tests/valgrind.supp" "$2" >"$logs/$name.log" 2>&1
	echo "$name $? $(($(date +%s) - start))"
	exit 0
fi

jobs=2
while getopts j: o; do
	case $o in
	j) jobs=$OPTARG ;;
	*) echo "usage: $0 [-j JOBS] [PROGRAM...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not found: skipped"; exit 77; }
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
DTPLAN_FIXTURES=${DTPLAN_FIXTURES:-$top_srcdir/../shared/fixtures}
# Timing bounds in the tests hold natively, not at valgrind's pace.
DTPLAN_TEST_UNDER_VALGRIND=1
export top_srcdir top_builddir DTPLAN_FIXTURES DTPLAN_TEST_UNDER_VALGRIND

if [ $# -eq 0 ]; then
	for f in "$top_builddir"/tests/test_* "$top_builddir"/fuzz/replay; do
		# the compiled programs, not the shell tests beside them
		[ -x "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] &&
			set -- "$@" "$f"
	done
fi
[ $# -gt 0 ] || { echo "valgrind.sh: no test programs built (run make check first)" >&2; exit 1; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/dtplan-valgrind.XXXXXX")
export logs
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)
printf '%s\n' "$@" | xargs -P "$jobs" -n 1 sh "$0" --one >"$logs/results"

failed=0
while read -r name rc secs; do
	if [ "$rc" -eq 0 ]; then
		printf 'valgrind: %-24s ok (%ss)\n' "$name" "$secs"
	else
		printf 'valgrind: %-24s FAILED (exit %s, %ss)\n' "$name" "$rc" "$secs"
		grep -E '==[0-9]+==|FAILED|ERROR' "$logs/$name.log" | head -60
		failed=1
	fi
done <"$logs/results"
echo "valgrind: $# programs in $(($(date +%s) - start))s"
exit $failed
