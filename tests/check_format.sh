#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_format.sh: every C source and header the project tracks is
# formatted as .clang-format says.
#
# clang-format's output differs between its major versions; .clang-format is
# written for 14 (Debian 12's).  $CLANG_FORMAT names the binary (default
# clang-format-14, else clang-format when that is version 14).  Exit 77
# (skip) without one, or outside a git checkout (a release tarball: the
# files are the ones that were checked).
#
# To format a file: clang-format-14 -i FILE.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 1

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	if command -v clang-format-14 >/dev/null 2>&1; then
		cf=clang-format-14
	elif command -v clang-format >/dev/null 2>&1 &&
	     clang-format --version | grep -q 'version 14\.'; then
		cf=clang-format
	else
		echo "SKIP: no clang-format 14 (set CLANG_FORMAT)"; exit 77
	fi
fi
[ -f .clang-format ] && command -v git >/dev/null 2>&1 &&
	git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout with .clang-format"; exit 77; }

rc=0 n=0
for f in $(git ls-files '*.c' '*.h'); do
	n=$((n + 1))
	if ! "$cf" --style=file "$f" | cmp -s "$f" -; then
		echo "FAIL: $f is not formatted ($cf -i $f):"
		"$cf" --style=file "$f" | diff -u "$f" - | head -20
		rc=1
	fi
done
[ $rc -eq 0 ] && echo "ok - $n files formatted as .clang-format says ($cf)"
exit $rc
