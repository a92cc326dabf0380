#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_spdx.sh: every source file of the project says its licence
# (GPL-2.0-or-later, LICENSE) in an SPDX line within its first five lines:
# C, shell, Python, bats, Lua, the build files and the man pages' sources.
#
# Exit 77 (skip) outside a git checkout (a release tarball: the files are
# the ones that were checked), 1 when a file lacks the line (each named).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 1
command -v git >/dev/null 2>&1 && git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout"; exit 77; }

status=0 n=0
for f in $(git ls-files -- '*.c' '*.h' '*.sh' '*.py' '*.bats' '*.lua' '*.am' '*.ac' \
	'*.1.in' '*.5.in' '*.8.in' '*.spec.in' '*.service' '.ci/*' 'debian/rules'); do
	case "$f" in tests/data/* | tests/fuzz/corpus/* | tests/cli/golden/*) continue ;; esac
	[ -f "$f" ] || continue
	n=$((n + 1))
	if ! head -n 5 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-or-later'; then
		echo "FAIL: $f has no 'SPDX-License-Identifier: GPL-2.0-or-later' line"
		status=1
	fi
done
[ "$status" -ne 0 ] || echo "ok: $n files say their licence"
exit $status
