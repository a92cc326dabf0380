#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/check_sizes.sh: no C source over 1,000 lines and no header over 800
# in lib/, probes/, plugin/, cli/ and serve/ (doc/internals/map.md: a file
# that grows past them holds more than one job; cut it along its seams).
#
# Exit status: 0 every file within its limit, 1 one over it (each is named
# with its length and limit).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 1

C_MAX=${CHECK_SIZES_C_MAX:-1000}
H_MAX=${CHECK_SIZES_H_MAX:-800}
status=0 n=0

for dir in lib probes plugin cli serve; do
	[ -d "$dir" ] || continue
	for f in $(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
		case "$f" in
		*.c) max=$C_MAX ;;
		*) max=$H_MAX ;;
		esac
		lines=$(wc -l <"$f")
		n=$((n + 1))
		if [ "$lines" -gt "$max" ]; then
			echo "FAIL: $f has $lines lines, more than $max: cut it along its seams"
			status=1
		fi
	done
done
[ "$status" -ne 0 ] || echo "ok: $n files within $C_MAX lines (.c) and $H_MAX (.h)"
exit $status
